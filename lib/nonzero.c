/* nonzero.c — front end of count_nonzero, nonzero, nonzero_into and segment_nonzero: checks, the
 * non-zero test per dtype, the nnz bound, and trimming the result. */
#include "config.h"

#include <string.h>

#include "internal.h"

/* The non-zero test of every backend is (bits & mask) != 0 on the element
 * read as an unsigned integer of its size.  For integers and bool the mask
 * is all ones (x != 0).  For IEEE floats it drops the sign bit: -0.0 is then
 * zero, while NaN, infinities and subnormals have exponent or mantissa bits
 * set and are non-zero.  That is x != 0 exactly, and it stays so on devices
 * that flush subnormals to zero in float compares.  0 = unknown dtype. */
static uint64_t nonzero_mask(rg_dtype dtype)
{
    switch (dtype) {
    case RG_FLOAT32: return UINT64_C(0x7fffffff);
    case RG_FLOAT64: return UINT64_C(0x7fffffffffffffff);
    default: break;
    }
    size_t size = rg_dtype_size(dtype);
    return size == 0 ? 0 : size == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * size)) - 1;
}

/* The input exists (else RG_EINVAL without a context to tell) and has a known dtype. */
static rg_status check_input(const rg_array *a, const char *fn, uint64_t *mask)
{
    *mask = nonzero_mask(a->dtype);
    if (*mask == 0)
        return rg_set_error(a->ctx, RG_EDTYPE, "%s: the input has unknown dtype %d", fn,
                            (int)a->dtype);
    return RG_OK;
}

rg_status rg_count_nonzero(int64_t *nnz, const rg_array *a)
{
    static const char fn[] = "rg_count_nonzero";
    if (!a)
        return RG_EINVAL;
    if (!nnz)
        return rg_set_error(a->ctx, RG_EINVAL, "%s: nnz is NULL", fn);
    uint64_t mask;
    rg_status st = check_input(a, fn, &mask);
    int64_t count = 0;
    if (st == RG_OK && a->length > 0)
        st = a->ctx->ops->nonzero_count(a, mask, &count);
    if (st == RG_OK)
        *nnz = count;
    return st;
}

/* 1 <= ndim <= RG_NONZERO_MAX_DIMS, no negative dimension, the product of
 * the non-zero dimensions fits int64 (numpy's rule: a size-0 dimension does
 * not excuse an overflowing shape), and the product equals length. */
static rg_status check_shape(rg_context *ctx, const int64_t *shape, size_t ndim, size_t length,
                             const char *fn)
{
    if (!shape)
        return rg_set_error(ctx, RG_EINVAL, "%s: shape is NULL", fn);
    if (ndim == 0)
        return rg_set_error(ctx, RG_EINVAL, "%s: ndim is 0; a shape has at least 1 dimension",
                            fn);
    if (ndim > RG_NONZERO_MAX_DIMS)
        return rg_set_error(ctx, RG_EINVAL,
                            "%s: ndim = %zu is more than RG_NONZERO_MAX_DIMS = %d (a negative "
                            "count turned size_t?)",
                            fn, ndim, RG_NONZERO_MAX_DIMS);
    int64_t nonzero_product = 1;
    bool empty = false;
    for (size_t d = 0; d < ndim; d++) {
        if (shape[d] < 0)
            return rg_set_error(ctx, RG_EINVAL, "%s: shape[%zu] = %lld is negative", fn, d,
                                (long long)shape[d]);
        if (shape[d] == 0)
            empty = true;
        else if (__builtin_mul_overflow(nonzero_product, shape[d], &nonzero_product))
            return rg_set_error(ctx, RG_EOVERFLOW,
                                "%s: the shape's size overflows int64 at shape[%zu] = %lld", fn,
                                d, (long long)shape[d]);
    }
    uint64_t product = empty ? 0 : (uint64_t)nonzero_product;
    if (product != (uint64_t)length)
        return rg_set_error(ctx, RG_ESIZE,
                            "%s: the shape holds %llu elements (%zu dimensions), the input has "
                            "%zu",
                            fn, (unsigned long long)product, ndim, length);
    return RG_OK;
}

rg_status rg_nonzero(rg_array **coords, int64_t *nnz, const rg_array *a, const int64_t *shape,
                     size_t ndim, int64_t nnz_bound)
{
    static const char fn[] = "rg_nonzero";
    if (!a)
        return RG_EINVAL;
    rg_context *ctx = a->ctx;
    if (!coords)
        return rg_set_error(ctx, RG_EINVAL, "%s: coords is NULL", fn);
    uint64_t mask;
    rg_status st = check_input(a, fn, &mask);
    if (st == RG_OK)
        st = check_shape(ctx, shape, ndim, a->length, fn);
    if (st != RG_OK)
        return st;

    rg_array *out = NULL;
    int64_t count = 0;
    if (a->length == 0) {
        st = rg_array_create(&out, ctx, RG_INT64, 0);
    } else {
        /* No more rows than elements can ever be needed. */
        int64_t bound = nnz_bound;
        if (bound > (int64_t)a->length)
            bound = (int64_t)a->length;
        st = ctx->ops->nonzero(&out, &count, a, mask, shape, ndim, bound < 0 ? -1 : bound);
        if (st == RG_OK && bound >= 0 && count > bound)
            st = rg_set_error(ctx, RG_ERANGE,
                              "%s: nnz_bound = %lld, but the input has %lld non-zero elements; "
                              "nothing was returned",
                              fn, (long long)nnz_bound, (long long)count);
    }
    if (st != RG_OK) {
        rg_array_free(out);
        return st;
    }
    rg_array_trim(out, (size_t)count * ndim);
    *coords = out;
    if (nnz)
        *nnz = count;
    return RG_OK;
}

rg_status rg_nonzero_into(rg_array *coords, int64_t *nnz, const rg_array *a,
                          const int64_t *shape, size_t ndim)
{
    static const char fn[] = "rg_nonzero_into";
    if (!a)
        return RG_EINVAL;
    rg_context *ctx = a->ctx;
    if (!coords)
        return rg_set_error(ctx, RG_EINVAL, "%s: coords is NULL", fn);
    if (!nnz)
        return rg_set_error(ctx, RG_EINVAL, "%s: nnz is NULL (it says how many rows were "
                            "written)", fn);
    if (coords->ctx != ctx)
        return rg_foreign_array(ctx, coords, fn, "coords", "a");
    if (coords->dtype != RG_INT64)
        return rg_set_error(ctx, RG_EDTYPE, "%s: coords must be int64, not %s", fn,
                            rg_dtype_name(coords->dtype));
    rg_status st = rg_check_not_input(ctx, coords, fn, "coords", a, "a");
    if (st != RG_OK)
        return st;
    uint64_t mask;
    st = check_input(a, fn, &mask);
    if (st == RG_OK)
        st = check_shape(ctx, shape, ndim, a->length, fn);
    if (st != RG_OK)
        return st;
    int64_t count = 0;
    if (a->length > 0) {
        rg_op_begin(coords);
        st = rg_op_end(ctx, ctx->ops->nonzero_into(coords, &count, a, mask, shape, ndim));
    }
    if (st == RG_OK && (uint64_t)count > coords->length / ndim)
        st = rg_set_error(ctx, RG_ERANGE,
                          "%s: coords has room for %zu rows of %zu, but the input has %lld "
                          "non-zero elements; coords was not changed",
                          fn, coords->length / ndim, ndim, (long long)count);
    if (st == RG_OK)
        *nnz = count;
    return st;
}

rg_status rg_segment_nonzero(rg_array **offsets_out, rg_array **positions_out,
                             const rg_array *content, const rg_array *offsets)
{
    static const char fn[] = "rg_segment_nonzero";
    if (!content)
        return RG_EINVAL;
    rg_context *ctx = content->ctx;
    if (!offsets_out || !positions_out)
        return rg_set_error(ctx, RG_EINVAL, "%s: %s is NULL", fn,
                            offsets_out ? "positions_out" : "offsets_out");
    if (!offsets)
        return rg_set_error(ctx, RG_EINVAL, "%s: offsets is NULL", fn);
    uint64_t mask;
    rg_status st = check_input(content, fn, &mask);
    if (st == RG_OK)
        st = rg_check_offsets_for(ctx, offsets, content->length, fn);
    if (st != RG_OK)
        return st;

    rg_array *positions = NULL, *seg_offsets = NULL;
    if (content->length > 0 && ctx->ops->segment_nonzero_all) {
        st = ctx->ops->segment_nonzero_all(&seg_offsets, &positions, content, mask, offsets);
        if (st != RG_OK)
            return st;
        rg_array_offsets_known(seg_offsets, (int64_t)positions->length);
        *offsets_out = seg_offsets;
        *positions_out = positions;
        return RG_OK;
    }

    /* The flat positions of the non-zeros, then made local to their segments. */
    int64_t count = 0;
    const int64_t flat_shape[1] = {(int64_t)content->length};
    if (content->length == 0)
        st = rg_array_create(&positions, ctx, RG_INT64, 0);
    else
        st = ctx->ops->nonzero(&positions, &count, content, mask, flat_shape, 1, -1);
    /* The backend may have allocated spare rows; segment_nonzero takes the
     * positions' length as the count. */
    if (st == RG_OK)
        rg_array_trim(positions, (size_t)count);
    /* The backend writes every offset; with no non-zeros, zeros are right.
     * (Zeroing first cost about as much as the rest on a large result: fresh
     * pages, then the backend's writes.) */
    if (st == RG_OK && count > 0)
        st = rg_array_create_uninit(&seg_offsets, ctx, RG_INT64, offsets->length);
    else if (st == RG_OK)
        st = rg_array_create(&seg_offsets, ctx, RG_INT64, offsets->length);
    if (st == RG_OK && count > 0)
        st = ctx->ops->segment_nonzero(seg_offsets, positions, offsets);
    if (st != RG_OK) {
        rg_array_free(positions);
        rg_array_free(seg_offsets);
        return st;
    }
    rg_array_offsets_known(seg_offsets, count); /* counts below ascending offsets */
    *offsets_out = seg_offsets;
    *positions_out = positions;
    return RG_OK;
}
