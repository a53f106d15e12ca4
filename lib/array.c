/* array.c — typed 1-D arrays: argument checks, capacity, and the host mirror
 * with dirty ranges that keeps host and device copies coherent. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"

size_t rg_dtype_size(rg_dtype dtype)
{
    return rg_dtype_bytes(dtype);
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
    a->capacity = length;
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
    rg_status st = create_array(&a, ctx, dtype, length, false); /* overwritten whole below */
    if (st == RG_OK && length > 0 && ctx->ops->dev_upload) {
        /* Straight to the device, no mirror: an array made from host data is
         * most often only read by kernels, and would pay twice the memory. */
        st = ctx->ops->dev_upload(a, 0, data, a->nbytes);
        a->dev_dirty_lo = 0;
        a->dev_dirty_hi = a->nbytes;
    } else if (st == RG_OK && length > 0) {
        st = ctx->ops->array_write(a, 0, data, a->nbytes);
    }
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
    free(array->mirror);
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
    rg_array_changed(array);
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
    if (array->length == 0)
        return RG_OK;
    rg_op_begin(array);
    return rg_op_end(array->ctx, array->ctx->ops->array_fill(array, value));
}

rg_status rg_array_copy(rg_array *dst, const rg_array *src)
{
    static const char fn[] = "rg_array_copy";
    if (!dst || !src)
        return dst ? rg_null_arg(dst, fn, "src") : rg_null_arg(src, fn, "dst");
    rg_context *ctx = dst->ctx;
    rg_status st = rg_check_not_input(ctx, dst, fn, "dst", src, "src");
    if (st != RG_OK)
        return st;
    if (src->ctx != ctx)
        return rg_foreign_array(ctx, src, fn, "src", "dst");
    if (src->dtype != dst->dtype)
        return rg_set_error(ctx, RG_EDTYPE, "%s: dst is %s but src is %s", fn,
                            rg_dtype_name(dst->dtype), rg_dtype_name(src->dtype));
    if (src->length != dst->length)
        return rg_set_error(ctx, RG_ESIZE, "%s: dst has %zu elements but src has %zu", fn,
                            dst->length, src->length);
    if (src->length == 0)
        return RG_OK;
    rg_op_begin(dst);
    return rg_op_end(ctx, ctx->ops->array_copy(dst, src));
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

/* ---- known-valid offsets ---------------------------------------------------
 * Like the mirror state below, a cache beside the array's value: const
 * callers may update it. */

void rg_op_begin(const rg_array *out)
{
    rg_array_changed(out);
    out->ctx->op_out = out;
    out->ctx->op_wrote = false;
}

rg_status rg_op_end(rg_context *ctx, rg_status st)
{
    ctx->op_out = NULL;
    ctx->op_wrote = false;
    return st;
}

void rg_op_queued(rg_context *ctx, const void *dev)
{
    if (ctx->op_out && dev && dev == ctx->op_out->dev)
        ctx->op_wrote = true;
}

void rg_array_offsets_longest(const rg_array *a, int64_t longest)
{
    ((rg_array *)a)->offsets_longest = longest;
}

/* ---- transfer counters ---------------------------------------------------- */

rg_status rg_context_transfers(const rg_context *ctx, uint64_t *bytes_up, uint64_t *bytes_down)
{
    if (!ctx)
        return RG_EINVAL;
    if (bytes_up)
        *bytes_up = ctx->bytes_up;
    if (bytes_down)
        *bytes_down = ctx->bytes_down;
    return RG_OK;
}

void rg_context_reset_transfers(rg_context *ctx)
{
    if (ctx)
        ctx->bytes_up = ctx->bytes_down = 0;
}

/* ---- the host mirror -------------------------------------------------------
 * Only for backends with a separate device copy (ops->dev_upload set); the
 * rules are in internal.h next to the fields.  Reads change the mirror and
 * the ranges of an array the caller sees as const: that state is a cache,
 * not the array's value, hence the casts below. */

static rg_array *cache_of(const rg_array *a)
{
    return (rg_array *)a;
}

static size_t bytes_of(const rg_array *a, size_t elements)
{
    return elements * rg_dtype_size(a->dtype); /* capacity * size was checked in reserve */
}

/* [*lo, *hi) grows to cover [lo, hi) too (an empty range is replaced). */
static void widen(size_t *lo, size_t *hi, size_t from, size_t to)
{
    if (*lo >= *hi) {
        *lo = from;
        *hi = to;
        return;
    }
    *lo = from < *lo ? from : *lo;
    *hi = to > *hi ? to : *hi;
}

/* [*lo, *hi) loses what lies from end on. */
static void clip(size_t *lo, size_t *hi, size_t end)
{
    if (*hi > end)
        *hi = end;
    if (*lo >= *hi)
        *lo = *hi = 0;
}

/* The device copy is newer than the mirror in [0, hi) too (a kernel wrote it). */
static void dev_stale(rg_array *a, size_t hi)
{
    widen(&a->dev_dirty_lo, &a->dev_dirty_hi, 0, hi);
    a->dev_fresh_lo = a->dev_fresh_hi = 0;
}

static bool host_dirty(const rg_array *a)
{
    return a->host_dirty_lo < a->host_dirty_hi;
}

static bool dev_dirty(const rg_array *a)
{
    return a->dev_dirty_lo < a->dev_dirty_hi;
}

/* A mirror of the whole capacity (at least one byte: no zero-size malloc).
 * Zeros are right when the device still holds its creation zeros (no
 * dev_dirty); otherwise everything counts as stale until downloaded. */
static rg_status make_mirror(rg_array *a)
{
    size_t cap = bytes_of(a, a->capacity);
    a->mirror = calloc(cap > 0 ? cap : 1, 1);
    if (!a->mirror)
        return rg_set_error(a->ctx, RG_ENOMEM, "array mirror: cannot allocate %zu bytes of host "
                            "memory for an array of %s", cap, rg_dtype_name(a->dtype));
    if (dev_dirty(a))
        dev_stale(a, cap);
    return RG_OK;
}

static rg_status download(rg_array *a, size_t from, size_t to)
{
    return from < to ? a->ctx->ops->dev_download(a, from, (char *)a->mirror + from, to - from)
                     : RG_OK;
}

/* Downloads the stale part of [lo, hi) into the mirror: what dev_dirty
 * holds of it less the fresh part, at most two pieces.  Then dev_dirty
 * shrinks where the read (joined with a fresh part it meets) reached its
 * beginning or end; a read of its middle becomes the fresh part, so that
 * reading it again moves nothing (one fresh part is kept: the last). */
static rg_status refresh(rg_array *a, size_t lo, size_t hi)
{
    size_t from = lo > a->dev_dirty_lo ? lo : a->dev_dirty_lo;
    size_t to = hi < a->dev_dirty_hi ? hi : a->dev_dirty_hi;
    if (from >= to)
        return RG_OK;
    size_t flo = a->dev_fresh_lo, fhi = a->dev_fresh_hi;
    bool meets = flo < fhi && from <= fhi && to >= flo; /* overlaps or touches */
    rg_status st = meets ? download(a, from, from < flo ? flo : from) : download(a, from, to);
    if (st == RG_OK && meets)
        st = download(a, to > fhi ? fhi : to, to);
    if (st != RG_OK)
        return st;
    if (meets) {
        from = from < flo ? from : flo;
        to = to > fhi ? to : fhi;
        a->dev_fresh_lo = a->dev_fresh_hi = 0;
    }
    if (from == a->dev_dirty_lo) {
        a->dev_dirty_lo = to;
    } else if (to == a->dev_dirty_hi) {
        a->dev_dirty_hi = from;
    } else {
        a->dev_fresh_lo = from;
        a->dev_fresh_hi = to;
    }
    if (a->dev_dirty_lo >= a->dev_dirty_hi) /* all fresh: nothing stale */
        a->dev_dirty_lo = a->dev_dirty_hi = a->dev_fresh_lo = a->dev_fresh_hi = 0;
    return RG_OK;
}

rg_status rg_mirror_write(rg_array *a, size_t byte_off, const void *src, size_t nbytes)
{
    if (nbytes == 0)
        return RG_OK;
    if (dev_dirty(a)) {
        /* The mirror is stale somewhere: widening host_dirty could cover
         * stale bytes, so the write goes straight to the device instead. */
        rg_status st = a->ctx->ops->dev_upload(a, byte_off, src, nbytes);
        if (st == RG_OK && a->mirror)
            memcpy((char *)a->mirror + byte_off, src, nbytes);
        return st;
    }
    if (!a->mirror) {
        rg_status st = make_mirror(a);
        if (st != RG_OK)
            return st;
    }
    memcpy((char *)a->mirror + byte_off, src, nbytes);
    widen(&a->host_dirty_lo, &a->host_dirty_hi, byte_off, byte_off + nbytes);
    return RG_OK;
}

rg_status rg_mirror_read(const rg_array *array, size_t byte_off, void *dst, size_t nbytes)
{
    rg_array *a = cache_of(array);
    if (nbytes == 0)
        return RG_OK;
    if (!a->mirror) /* nothing on the host: a read-mostly array gets no mirror */
        return a->ctx->ops->dev_download(a, byte_off, dst, nbytes);
    rg_status st = refresh(a, byte_off, byte_off + nbytes);
    if (st == RG_OK)
        memcpy(dst, (const char *)a->mirror + byte_off, nbytes);
    return st;
}

rg_status rg_array_sync_device(const rg_array *array)
{
    rg_array *a = cache_of(array);
    if (!rg_array_has_device_copy(a) || !host_dirty(a))
        return RG_OK;
    size_t lo = a->host_dirty_lo, n = a->host_dirty_hi - lo;
    rg_status st = a->ctx->ops->dev_upload(a, lo, (const char *)a->mirror + lo, n);
    if (st == RG_OK)
        a->host_dirty_lo = a->host_dirty_hi = 0;
    return st;
}

void rg_array_touch_device(const rg_array *array)
{
    rg_array *a = cache_of(array);
    rg_array_changed(a);
    if (!rg_array_has_device_copy(a))
        return;
    /* Called after a successful sync (rg_ocl_mem_of), so host_dirty is empty. */
    dev_stale(a, a->nbytes); /* kernels stop at the length */
}

rg_status rg_array_mirror_view(rg_array *a, void **data)
{
    rg_status st = a->mirror ? RG_OK : make_mirror(a);
    if (st == RG_OK)
        st = refresh(a, a->dev_dirty_lo, a->dev_dirty_hi);
    if (st == RG_OK)
        *data = a->mirror;
    return st;
}

void rg_array_mirror_changed(rg_array *a, size_t byte_lo, size_t byte_hi)
{
    widen(&a->host_dirty_lo, &a->host_dirty_hi, byte_lo, byte_hi);
}

/* Grows a to cap elements (nbytes bytes): the mirror first, then the
 * backend's storage; on failure a is as it was. */
static rg_status grow_to(rg_array *a, size_t cap, size_t nbytes)
{
    size_t old = a->capacity, old_bytes = old * rg_dtype_size(a->dtype);
    if (a->mirror) {
        char *grown = realloc(a->mirror, nbytes);
        if (!grown)
            return rg_set_error(a->ctx, RG_ENOMEM, "cannot grow an array mirror to %zu bytes",
                                nbytes);
        memset(grown + old_bytes, 0, nbytes - old_bytes); /* as the device's new part */
        a->mirror = grown;
    }
    a->capacity = cap;
    rg_status st = a->ctx->ops->array_grow(a, old);
    if (st != RG_OK) {
        a->capacity = old;
        char *back = a->mirror ? realloc(a->mirror, old_bytes ? old_bytes : 1) : NULL;
        if (back) /* a failed shrink keeps the larger mirror, which is harmless */
            a->mirror = back;
    }
    return st;
}

rg_status rg_array_grow(rg_array *a, size_t min_capacity)
{
    size_t old = a->capacity, size = rg_dtype_size(a->dtype);
    /* Doubling keeps appends amortised O(1); 16 avoids a string of tiny steps. */
    size_t cap = old > SIZE_MAX / 2 ? SIZE_MAX : old * 2;
    cap = cap < 16 ? 16 : cap;
    cap = cap < min_capacity ? min_capacity : cap;
    size_t nbytes, need;
    if (__builtin_mul_overflow(min_capacity, size, &need) || need > (size_t)INT64_MAX)
        return rg_set_error(a->ctx, RG_EOVERFLOW, "cannot grow an array of %s to %zu elements: "
                            "the byte size overflows", rg_dtype_name(a->dtype), min_capacity);
    if (__builtin_mul_overflow(cap, size, &nbytes) || nbytes > (size_t)INT64_MAX) {
        cap = min_capacity;
        nbytes = need;
    }
    if (cap == min_capacity)
        return grow_to(a, cap, nbytes);
    /* The exact need may fit in host or device memory (or under the device's
     * largest buffer) where the doubled size did not.  A retry that succeeds
     * leaves the context's last message as it was: no call failed. */
    rg_context *ctx = a->ctx;
    char *before = ctx->error;
    ctx->error = NULL;
    rg_status st = grow_to(a, cap, nbytes);
    if (st == RG_ENOMEM || st == RG_EDEVMEM)
        st = grow_to(a, min_capacity, need);
    if (st == RG_OK) {
        free(ctx->error);
        ctx->error = before;
    } else if (!ctx->error) {
        ctx->error = before; /* the message could not be stored */
    } else {
        free(before);
    }
    return st;
}

/* After rg_array_set_length on an array with a device copy: without a
 * mirror the whole device copy (up to the length) is authoritative once
 * changed.  With one, host_dirty loses what lies past the new length: those
 * bytes mean nothing (every growth writes the bytes it exposes), so
 * uploading them would be waste.  (The list edits that shrink refresh the
 * mirror first, so dev_dirty is empty there.) */
void rg_array_mirror_length(rg_array *a)
{
    if (a->mirror) {
        clip(&a->host_dirty_lo, &a->host_dirty_hi, a->nbytes);
    } else if (dev_dirty(a)) {
        dev_stale(a, a->nbytes);
        clip(&a->dev_dirty_lo, &a->dev_dirty_hi, a->nbytes);
    }
}

/* ---- arithmetic with a scalar --------------------------------------------- */

static bool is_integer_dtype(rg_dtype t)
{
    return t >= RG_INT8 && t <= RG_UINT64;
}

rg_status rg_array_scalar(rg_array *array, rg_arith op, const void *value)
{
    static const char fn[] = "rg_array_scalar";
    if (!array)
        return RG_EINVAL;
    rg_context *ctx = array->ctx;
    if (!value)
        return rg_set_error(ctx, RG_EINVAL, "%s: value is NULL", fn);
    if (op < RG_ARITH_ADD || op > RG_ARITH_DIV)
        return rg_set_error(ctx, RG_EINVAL, "%s: unknown operation %d", fn, (int)op);
    if (!is_integer_dtype(array->dtype) && array->dtype != RG_FLOAT32 &&
        array->dtype != RG_FLOAT64)
        return rg_set_error(ctx, RG_EDTYPE, "%s: no arithmetic on %s arrays", fn,
                            rg_dtype_name(array->dtype));
    if (op == RG_ARITH_DIV && is_integer_dtype(array->dtype)) {
        static const unsigned char zero[8] = {0};
        if (memcmp(value, zero, rg_dtype_size(array->dtype)) == 0)
            return rg_set_error(ctx, RG_EINVAL, "%s: integer division by zero (%s array)", fn,
                                rg_dtype_name(array->dtype));
    }
    if (array->length == 0)
        return RG_OK;
    rg_op_begin(array);
    return rg_op_end(ctx, ctx->ops->scalar(array, op, value));
}

void rg_array_trim(rg_array *a, size_t length)
{
    if (length >= a->length)
        return;
    size_t old_bytes = bytes_of(a, a->capacity);
    rg_array_set_length(a, length);
    /* Give the spare storage back where the backend can; a host mirror spans
     * the whole capacity, so an array with one keeps its capacity.  No dirty
     * range reaches past the new storage: rg_array_set_length clipped them. */
    if (a->ctx->ops->array_trim && !a->mirror && a->ctx->ops->array_trim(a, old_bytes))
        a->capacity = length;
}
