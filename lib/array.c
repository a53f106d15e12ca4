/* array.c — typed 1-D arrays: argument checks, then the backend moves the bytes. */
#include "config.h"

#include <stdlib.h>

#include "internal.h"

size_t rg_dtype_size(rg_dtype dtype)
{
    switch (dtype) {
    case RG_BOOL: case RG_INT8: case RG_UINT8: return 1;
    case RG_INT16: case RG_UINT16: return 2;
    case RG_INT32: case RG_UINT32: case RG_FLOAT32: return 4;
    case RG_INT64: case RG_UINT64: case RG_FLOAT64: return 8;
    }
    return 0;
}

const char *rg_dtype_name(rg_dtype dtype)
{
    switch (dtype) {
    case RG_BOOL: return "bool";
    case RG_INT8: return "int8";
    case RG_INT16: return "int16";
    case RG_INT32: return "int32";
    case RG_INT64: return "int64";
    case RG_UINT8: return "uint8";
    case RG_UINT16: return "uint16";
    case RG_UINT32: return "uint32";
    case RG_UINT64: return "uint64";
    case RG_FLOAT32: return "float32";
    case RG_FLOAT64: return "float64";
    }
    return "unknown";
}

static rg_status create_array(rg_array **out, rg_context *ctx, rg_dtype dtype, size_t length,
                              bool zero)
{
    if (!ctx)
        return RG_EINVAL;
    if (!out)
        return rg_set_error(ctx, RG_EINVAL, "rg_array_create: out is NULL");
    size_t size = rg_dtype_size(dtype);
    if (size == 0)
        return rg_set_error(ctx, RG_EDTYPE, "rg_array_create: unknown dtype %d", (int)dtype);
    size_t nbytes;
    if (__builtin_mul_overflow(length, size, &nbytes) || nbytes > (size_t)INT64_MAX)
        return rg_set_error(ctx, RG_EOVERFLOW,
                            "rg_array_create: %zu elements of %s overflow the byte size",
                            length, rg_dtype_name(dtype));
    rg_array *a = calloc(1, sizeof *a);
    if (!a)
        return rg_set_error(ctx, RG_ENOMEM, "rg_array_create: out of host memory");
    a->ctx = ctx;
    a->dtype = dtype;
    a->length = length;
    a->nbytes = nbytes;
    rg_status st = ctx->ops->array_alloc(a, zero);
    if (st != RG_OK) {
        free(a);
        return st;
    }
    *out = a;
    return RG_OK;
}

rg_status rg_array_create(rg_array **out, rg_context *ctx, rg_dtype dtype, size_t length)
{
    return create_array(out, ctx, dtype, length, true);
}

rg_status rg_array_create_uninit(rg_array **out, rg_context *ctx, rg_dtype dtype, size_t length)
{
    return create_array(out, ctx, dtype, length, false);
}

rg_status rg_array_from_host(rg_array **out, rg_context *ctx, rg_dtype dtype,
                             const void *data, size_t length)
{
    if (!ctx)
        return RG_EINVAL;
    if (!out)
        return rg_set_error(ctx, RG_EINVAL, "rg_array_from_host: out is NULL");
    if (!data && length > 0)
        return rg_set_error(ctx, RG_EINVAL, "rg_array_from_host: data is NULL");
    rg_array *a = NULL;
    rg_status st = rg_array_create(&a, ctx, dtype, length);
    if (st == RG_OK && length > 0)
        st = ctx->ops->array_write(a, 0, data, a->nbytes);
    if (st != RG_OK) {
        rg_array_free(a);
        return st;
    }
    *out = a;
    return RG_OK;
}

void rg_array_free(rg_array *array)
{
    if (!array)
        return;
    array->ctx->ops->array_release(array);
    free(array);
}

/* [start, start + count) must lie inside the array. */
static rg_status check_range(const rg_array *a, const char *fn, size_t start, size_t count)
{
    if (start > a->length || count > a->length - start)
        return rg_set_error(a->ctx, RG_ERANGE,
                            "%s: range [%zu, %zu + %zu) is outside the array of %zu elements",
                            fn, start, start, count, a->length);
    return RG_OK;
}

rg_status rg_array_write(rg_array *array, size_t start, const void *src, size_t count)
{
    if (!array)
        return RG_EINVAL;
    if (!src && count > 0)
        return rg_set_error(array->ctx, RG_EINVAL, "rg_array_write: src is NULL");
    rg_status st = check_range(array, "rg_array_write", start, count);
    if (st != RG_OK || count == 0)
        return st;
    size_t size = rg_dtype_size(array->dtype);
    return array->ctx->ops->array_write(array, start * size, src, count * size);
}

rg_status rg_array_read(void *dst, const rg_array *array, size_t start, size_t count)
{
    if (!array)
        return RG_EINVAL;
    if (!dst && count > 0)
        return rg_set_error(array->ctx, RG_EINVAL, "rg_array_read: dst is NULL");
    rg_status st = check_range(array, "rg_array_read", start, count);
    if (st != RG_OK || count == 0)
        return st;
    size_t size = rg_dtype_size(array->dtype);
    return array->ctx->ops->array_read(array, start * size, dst, count * size);
}

rg_status rg_array_fill(rg_array *array, const void *value)
{
    if (!array)
        return RG_EINVAL;
    if (!value)
        return rg_set_error(array->ctx, RG_EINVAL, "rg_array_fill: value is NULL");
    return array->length ? array->ctx->ops->array_fill(array, value) : RG_OK;
}

rg_status rg_array_copy(rg_array *dst, const rg_array *src)
{
    static const char fn[] = "rg_array_copy";
    if (!dst || !src)
        return dst ? rg_set_error(dst->ctx, RG_EINVAL, "%s: src is NULL", fn) : RG_EINVAL;
    rg_context *ctx = dst->ctx;
    if (src->ctx != ctx)
        return rg_set_error(ctx, RG_EINVAL, "%s: src belongs to another context", fn);
    if (src->dtype != dst->dtype)
        return rg_set_error(ctx, RG_EDTYPE, "%s: dst is %s but src is %s", fn,
                            rg_dtype_name(dst->dtype), rg_dtype_name(src->dtype));
    if (src->length != dst->length)
        return rg_set_error(ctx, RG_ESIZE, "%s: dst has %zu elements but src has %zu", fn,
                            dst->length, src->length);
    if (src == dst || src->length == 0)
        return RG_OK;
    return ctx->ops->array_copy(dst, src);
}

size_t rg_array_length(const rg_array *array)
{
    return array ? array->length : 0;
}

rg_dtype rg_array_dtype(const rg_array *array)
{
    return array ? array->dtype : (rg_dtype)0;
}

rg_context *rg_array_context(const rg_array *array)
{
    return array ? array->ctx : NULL;
}

rg_status rg_read_index(const rg_array *a, size_t i, int64_t *value)
{
    if (a->dtype == RG_INT32) {
        int32_t v;
        rg_status st = a->ctx->ops->array_read(a, i * 4, &v, 4);
        *value = v;
        return st;
    }
    return a->ctx->ops->array_read(a, i * 8, value, 8);
}

void rg_array_trim(rg_array *a, size_t length)
{
    if (length >= a->length)
        return;
    size_t old_nbytes = a->nbytes;
    a->length = length;
    a->nbytes = length * rg_dtype_size(a->dtype); /* smaller than before: cannot overflow */
    if (a->ctx->ops->array_trim)
        a->ctx->ops->array_trim(a, old_nbytes);
}
