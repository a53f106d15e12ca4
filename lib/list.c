/* list.c — rg_list: a growable list of variable-length items kept as content + int64 offsets. */
#include "config.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Both arrays have spare capacity; their lengths are always nelems and
 * nitems + 1, so the handles given out are ordinary arrays of the context.
 * Every change is one call of replace() below (or, for the common append,
 * of append_in_place), which edits the arrays in host memory
 * (rg_array_host_view: on OpenCL the mirror) and records the smallest range
 * it changed, so that the next kernel uploads only that. */
struct rg_list {
    rg_context *ctx;
    rg_dtype dtype;
    size_t esize;        /* bytes per element */
    rg_array *content;
    rg_array *offsets;   /* int64 */
};

#define MIN_RESERVE 16

/* ---- reading the offsets --------------------------------------------------- */

/* The offsets in host memory (current: downloaded if a kernel wrote them).
 * Reading through a const list only refreshes the arrays' host cache. */
static rg_status offsets_view(const rg_list *l, int64_t **o)
{
    void *p = NULL;
    rg_status st = rg_array_host_view(l->offsets, &p);
    *o = p;
    return st;
}

size_t rg_list_nitems(const rg_list *list)
{
    return list ? list->offsets->length - 1 : 0;
}

size_t rg_list_nelems(const rg_list *list)
{
    return list ? list->content->length : 0;
}

rg_dtype rg_list_dtype(const rg_list *list)
{
    return list ? list->dtype : (rg_dtype)0;
}

rg_context *rg_list_context(const rg_list *list)
{
    return list ? list->ctx : NULL;
}

rg_array *rg_list_content(rg_list *list)
{
    return list ? list->content : NULL;
}

const rg_array *rg_list_offsets(const rg_list *list)
{
    return list ? list->offsets : NULL;
}

/* ---- indices --------------------------------------------------------------- */

/* A Python-style index into n positions: negative counts from the end. */
static rg_status resolve_index(const rg_list *l, const char *fn, ptrdiff_t index, size_t n,
                               size_t *out)
{
    size_t i = index < 0 ? n - (size_t)(-(index + 1)) - 1 : (size_t)index;
    bool ok = index < 0 ? (size_t)(-(index + 1)) < n : (size_t)index < n;
    if (!ok)
        return rg_set_error(l->ctx, RG_ERANGE, "%s: index %td is out of range for a list of %zu "
                            "items", fn, index, rg_list_nitems(l));
    *out = i;
    return RG_OK;
}

/* Python slice bounds: negative counts from the end, then clamped to [0, n]. */
static size_t clamp_bound(ptrdiff_t b, size_t n)
{
    if (b < 0) {
        size_t back = (size_t)(-(b + 1)) + 1;
        return back >= n ? 0 : n - back;
    }
    return (size_t)b > n ? n : (size_t)b;
}

static void slice_bounds(const rg_list *l, ptrdiff_t begin, ptrdiff_t end, size_t *b, size_t *e)
{
    size_t n = rg_list_nitems(l);
    *b = clamp_bound(begin, n);
    *e = clamp_bound(end, n);
    if (*e < *b)
        *e = *b;
}

/* ---- the one editing step ----------------------------------------------------- */

/* Items [i0, i1) become nnew items of sizes[k] elements taken in turn from
 * data (total elements; data must not point into the list).  Everything that
 * can fail (sizes, memory, downloads) happens before the first change, so a
 * failure leaves the list as it was (perhaps with more capacity). */
static rg_status replace(rg_list *l, const char *fn, size_t i0, size_t i1, const void *data,
                         size_t total, const size_t *sizes, size_t nnew)
{
    size_t nitems = rg_list_nitems(l), nelems = rg_list_nelems(l);
    int64_t *o = NULL;
    rg_status st = offsets_view(l, &o);
    if (st != RG_OK)
        return st;
    size_t e0 = (size_t)o[i0], e1 = (size_t)o[i1];
    size_t new_nelems = nelems - (e1 - e0), new_nitems = nitems - (i1 - i0);
    if (__builtin_add_overflow(new_nelems, total, &new_nelems) || new_nelems > (size_t)INT64_MAX ||
        __builtin_add_overflow(new_nitems, nnew, &new_nitems) || new_nitems >= (size_t)INT64_MAX)
        return rg_set_error(l->ctx, RG_EOVERFLOW, "%s: the list would pass 2^63 elements or items",
                            fn);
    st = rg_array_reserve(l->content, new_nelems);
    if (st == RG_OK)
        st = rg_array_reserve(l->offsets, new_nitems + 1);
    char *c = NULL;
    void *ov = NULL;
    /* Views after reserving: growing may move the host copies. */
    if (st == RG_OK)
        st = rg_array_host_view(l->content, (void **)&c);
    if (st == RG_OK)
        st = rg_array_host_view(l->offsets, &ov);
    if (st != RG_OK)
        return st;
    o = ov;

    /* Content: move the tail, then copy the new items in. */
    size_t es = l->esize, tail = nelems - e1, new_e1 = e0 + total;
    if (tail > 0 && new_e1 != e1)
        memmove(c + new_e1 * es, c + e1 * es, tail * es);
    if (total > 0)
        memcpy(c + e0 * es, data, total * es);
    rg_array_host_changed(l->content, e0 * es, (new_e1 == e1 ? new_e1 : new_nelems) * es);

    /* Offsets: move the later ones (shifted by the change in elements),
     * then write those of the new items. */
    size_t new_i1 = i0 + nnew;
    int64_t delta = (int64_t)new_e1 - (int64_t)e1;
    if (new_i1 != i1)
        memmove(o + new_i1 + 1, o + i1 + 1, (nitems - i1) * sizeof *o);
    if (delta != 0)
        for (size_t k = new_i1 + 1; k <= new_nitems; k++)
            o[k] += delta;
    int64_t at = (int64_t)e0;
    for (size_t k = 0; k < nnew; k++) {
        at += (int64_t)sizes[k];
        o[i0 + 1 + k] = at;
    }
    size_t changed_end = new_i1 == i1 && delta == 0 ? new_i1 + 1 : new_nitems + 1;
    rg_array_host_changed(l->offsets, (i0 + 1) * sizeof *o, changed_end * sizeof *o);

    rg_array_set_length(l->content, new_nelems);
    rg_array_set_length(l->offsets, new_nitems + 1);
    rg_array_offsets_known(l->offsets, (int64_t)new_nelems); /* kept valid by every edit */
    return RG_OK;
}

/* Checks that sizes[0 .. n) add up to length without overflowing. */
static rg_status check_sizes(rg_context *ctx, const char *fn, const size_t *sizes, size_t n,
                             size_t length)
{
    size_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (__builtin_add_overflow(sum, sizes[i], &sum))
            return rg_set_error(ctx, RG_ESIZE, "%s: the sizes overflow (at item %zu)", fn, i);
    }
    if (sum != length)
        return rg_set_error(ctx, RG_ESIZE, "%s: the sizes add up to %zu elements, but the data "
                            "has %zu", fn, sum, length);
    return RG_OK;
}

static rg_status check_data(rg_context *ctx, const char *fn, const void *data, size_t length)
{
    if (!data && length > 0)
        return rg_set_error(ctx, RG_EINVAL, "%s: data is NULL", fn);
    return RG_OK;
}

/* ---- creating -------------------------------------------------------------- */

rg_status rg_list_create(rg_list **out, rg_context *ctx, rg_dtype dtype, size_t reserve)
{
    static const char fn[] = "rg_list_create";
    if (!ctx)
        return RG_EINVAL;
    if (!out)
        return rg_set_error(ctx, RG_EINVAL, "%s: out is NULL", fn);
    if (rg_dtype_size(dtype) == 0)
        return rg_set_error(ctx, RG_EDTYPE, "%s: unknown dtype %d", fn, (int)dtype);
    rg_list *l = calloc(1, sizeof *l);
    if (!l)
        return rg_set_error(ctx, RG_ENOMEM, "%s: out of host memory", fn);
    l->ctx = ctx;
    l->dtype = dtype;
    l->esize = rg_dtype_size(dtype);
    /* offsets = [0]: a new array is zero-filled. */
    rg_status st = rg_array_create(&l->content, ctx, dtype, 0);
    if (st == RG_OK)
        st = rg_array_create(&l->offsets, ctx, RG_INT64, 1);
    if (st == RG_OK)
        st = rg_array_reserve(l->content, reserve > MIN_RESERVE ? reserve : MIN_RESERVE);
    if (st == RG_OK)
        st = rg_array_reserve(l->offsets, MIN_RESERVE);
    if (st != RG_OK) {
        rg_list_free(l);
        return st;
    }
    rg_array_offsets_known(l->offsets, 0); /* as after every edit */
    *out = l;
    return RG_OK;
}

void rg_list_free(rg_list *list)
{
    if (!list)
        return;
    rg_array_free(list->content);
    rg_array_free(list->offsets);
    free(list);
}

rg_status rg_list_from_sizes(rg_list **out, rg_context *ctx, rg_dtype dtype, const void *data,
                             size_t length, const size_t *sizes, size_t nitems)
{
    static const char fn[] = "rg_list_from_sizes";
    if (!ctx)
        return RG_EINVAL;
    if (!out)
        return rg_set_error(ctx, RG_EINVAL, "%s: out is NULL", fn);
    if (!sizes && nitems > 0)
        return rg_set_error(ctx, RG_EINVAL, "%s: sizes is NULL", fn);
    rg_status st = check_data(ctx, fn, data, length);
    if (st == RG_OK)
        st = check_sizes(ctx, fn, sizes, nitems, length);
    rg_list *l = NULL;
    if (st == RG_OK)
        st = rg_list_create(&l, ctx, dtype, length);
    if (st == RG_OK)
        st = replace(l, fn, 0, 0, data, length, sizes, nitems);
    if (st != RG_OK) {
        rg_list_free(l);
        return st;
    }
    *out = l;
    return RG_OK;
}

rg_status rg_list_from_item_size(rg_list **out, rg_context *ctx, rg_dtype dtype,
                                 const void *data, size_t length, size_t item_size)
{
    static const char fn[] = "rg_list_from_item_size";
    if (!ctx)
        return RG_EINVAL;
    if (!out)
        return rg_set_error(ctx, RG_EINVAL, "%s: out is NULL", fn);
    /* Checked here, before the sizes array is made, so that they win over
     * a failure to make it. */
    if (rg_dtype_size(dtype) == 0)
        return rg_set_error(ctx, RG_EDTYPE, "%s: unknown dtype %d", fn, (int)dtype);
    rg_status st = check_data(ctx, fn, data, length);
    if (st != RG_OK)
        return st;
    if (item_size == 0 ? length != 0 : length % item_size != 0)
        return rg_set_error(ctx, RG_ESIZE, "%s: items of %zu elements do not divide %zu "
                            "elements", fn, item_size, length);
    size_t n = item_size == 0 ? 0 : length / item_size;
    if (n > SIZE_MAX / sizeof(size_t))
        return rg_set_error(ctx, RG_EOVERFLOW, "%s: %zu items are more than memory can index",
                            fn, n);
    size_t *sizes = malloc((n > 0 ? n : 1) * sizeof *sizes);
    if (!sizes)
        return rg_set_error(ctx, RG_ENOMEM, "%s: out of host memory for %zu sizes", fn, n);
    for (size_t i = 0; i < n; i++)
        sizes[i] = item_size;
    st = rg_list_from_sizes(out, ctx, dtype, data, length, sizes, n);
    free(sizes);
    return st;
}

/* ---- reading items ------------------------------------------------------------ */

/* An item's start and length, errors named after fn. */
static rg_status item_view(size_t *start, size_t *length, const rg_list *list, ptrdiff_t index,
                           const char *fn)
{
    if (!list)
        return RG_EINVAL;
    size_t i = 0;
    int64_t *o = NULL;
    rg_status st = resolve_index(list, fn, index, rg_list_nitems(list), &i);
    if (st == RG_OK)
        st = offsets_view(list, &o);
    if (st != RG_OK)
        return st;
    if (start)
        *start = (size_t)o[i];
    if (length)
        *length = (size_t)(o[i + 1] - o[i]);
    return RG_OK;
}

rg_status rg_list_item_view(size_t *start, size_t *length, const rg_list *list, ptrdiff_t index)
{
    return item_view(start, length, list, index, "rg_list_item_view");
}

rg_status rg_list_item_length(size_t *length, const rg_list *list, ptrdiff_t index)
{
    static const char fn[] = "rg_list_item_length";
    if (list && !length)
        return rg_set_error(list->ctx, RG_EINVAL, "%s: length is NULL", fn);
    return item_view(NULL, length, list, index, fn);
}

rg_status rg_list_get(void *dst, size_t capacity, size_t *length, const rg_list *list,
                      ptrdiff_t index)
{
    static const char fn[] = "rg_list_get";
    if (!list)
        return RG_EINVAL;
    size_t start = 0, n = 0;
    rg_status st = item_view(&start, &n, list, index, fn);
    if (st != RG_OK)
        return st;
    if (n > capacity)
        return rg_set_error(list->ctx, RG_ESIZE, "%s: item %td has %zu elements, dst room for "
                            "%zu", fn, index, n, capacity);
    if (!dst && n > 0)
        return rg_set_error(list->ctx, RG_EINVAL, "%s: dst is NULL", fn);
    /* Through the array read: on OpenCL only the stale part of the item moves. */
    st = rg_array_read(dst, list->content, start, n);
    if (st == RG_OK && length)
        *length = n;
    return st;
}

/* The sizes of items [b, e) (malloc'd, never NULL) and where their data is. */
static rg_status items_of(const rg_list *l, size_t b, size_t e, size_t **sizes,
                          const char **data, size_t *total)
{
    int64_t *o = NULL;
    void *c = NULL;
    rg_status st = offsets_view(l, &o);
    if (st == RG_OK)
        st = rg_array_host_view(l->content, &c);
    if (st != RG_OK)
        return st;
    *sizes = malloc((e - b + 1) * sizeof **sizes);
    if (!*sizes)
        return rg_set_error(l->ctx, RG_ENOMEM, "out of host memory for %zu item sizes", e - b);
    for (size_t i = b; i < e; i++)
        (*sizes)[i - b] = (size_t)(o[i + 1] - o[i]);
    *data = (const char *)c + (size_t)o[b] * l->esize;
    *total = (size_t)(o[e] - o[b]);
    return RG_OK;
}

rg_status rg_list_slice(rg_list **out, const rg_list *list, ptrdiff_t begin, ptrdiff_t end)
{
    static const char fn[] = "rg_list_slice";
    if (!list)
        return RG_EINVAL;
    if (!out)
        return rg_set_error(list->ctx, RG_EINVAL, "%s: out is NULL", fn);
    size_t b, e, *sizes = NULL, total = 0;
    const char *data = NULL;
    slice_bounds(list, begin, end, &b, &e);
    rg_status st = items_of(list, b, e, &sizes, &data, &total);
    if (st == RG_OK)
        st = rg_list_from_sizes(out, list->ctx, list->dtype, data, total, sizes, e - b);
    free(sizes);
    return st;
}

/* ---- changing items ------------------------------------------------------------ */

rg_status rg_list_set(rg_list *list, ptrdiff_t index, const void *data, size_t length)
{
    static const char fn[] = "rg_list_set";
    if (!list)
        return RG_EINVAL;
    size_t i = 0;
    rg_status st = check_data(list->ctx, fn, data, length);
    if (st == RG_OK)
        st = resolve_index(list, fn, index, rg_list_nitems(list), &i);
    return st != RG_OK ? st : replace(list, fn, i, i + 1, data, length, &length, 1);
}

rg_status rg_list_delete(rg_list *list, ptrdiff_t index)
{
    static const char fn[] = "rg_list_delete";
    if (!list)
        return RG_EINVAL;
    size_t i = 0;
    rg_status st = resolve_index(list, fn, index, rg_list_nitems(list), &i);
    return st != RG_OK ? st : replace(list, fn, i, i + 1, NULL, 0, NULL, 0);
}

rg_status rg_list_delete_slice(rg_list *list, ptrdiff_t begin, ptrdiff_t end)
{
    if (!list)
        return RG_EINVAL;
    size_t b, e;
    slice_bounds(list, begin, end, &b, &e);
    return b == e ? RG_OK : replace(list, "rg_list_delete_slice", b, e, NULL, 0, NULL, 0);
}

rg_status rg_list_insert(rg_list *list, ptrdiff_t index, const void *data, size_t length)
{
    static const char fn[] = "rg_list_insert";
    if (!list)
        return RG_EINVAL;
    size_t i = 0, n = rg_list_nitems(list);
    rg_status st = check_data(list->ctx, fn, data, length);
    /* Positions 0 .. nitems (before each item, and the end); a negative one
     * is an item index, so -1 inserts before the last item, as in Python. */
    if (st == RG_OK && index == (ptrdiff_t)n)
        i = n;
    else if (st == RG_OK)
        st = resolve_index(list, fn, index, n, &i);
    return st != RG_OK ? st : replace(list, fn, i, i, data, length, &length, 1);
}

/* The common append, as replace() would make it but without its general
 * steps: room for the item, and host storage that is the list itself (no
 * device copy) or a device copy's mirror that is current (nothing newer on
 * the device; replace() made the mirror, and a kernel that wrote the list
 * sends the next append back to it).  False when replace() must do it. */
static bool append_in_place(rg_list *l, const void *data, size_t length)
{
    rg_array *c = l->content, *o = l->offsets;
    size_t nelems = c->length, nitems = o->length - 1, es = l->esize;
    bool dev = rg_array_has_device_copy(c);
    char *cv = dev ? c->mirror : c->host;
    int64_t *ov = dev ? o->mirror : o->host;
    if (!cv || !ov || length > c->capacity - nelems || o->length == o->capacity)
        return false;
    if (dev && (c->dev_dirty_lo < c->dev_dirty_hi || o->dev_dirty_lo < o->dev_dirty_hi))
        return false;
    /* Within capacity, whose bytes were checked to fit in an int64. */
    if (length > 0)
        memcpy(cv + nelems * es, data, length * es);
    ov[nitems + 1] = ov[nitems] + (int64_t)length;
    rg_array_set_length(c, nelems + length);
    rg_array_set_length(o, nitems + 2);
    if (dev) { /* uploaded before the next kernel that uses the list */
        if (length > 0)
            rg_array_mirror_changed(c, nelems * es, (nelems + length) * es);
        rg_array_mirror_changed(o, (nitems + 1) * sizeof *ov, (nitems + 2) * sizeof *ov);
    }
    rg_array_offsets_known(o, ov[nitems + 1]);
    return true;
}

rg_status rg_list_append(rg_list *list, const void *data, size_t length)
{
    static const char fn[] = "rg_list_append";
    if (!list)
        return RG_EINVAL;
    rg_status st = check_data(list->ctx, fn, data, length);
    if (st != RG_OK || append_in_place(list, data, length))
        return st;
    size_t n = rg_list_nitems(list);
    return replace(list, fn, n, n, data, length, &length, 1);
}

rg_status rg_list_extend_sizes(rg_list *list, const void *data, size_t length,
                               const size_t *sizes, size_t nitems)
{
    static const char fn[] = "rg_list_extend_sizes";
    if (!list)
        return RG_EINVAL;
    if (!sizes && nitems > 0)
        return rg_set_error(list->ctx, RG_EINVAL, "%s: sizes is NULL", fn);
    rg_status st = check_data(list->ctx, fn, data, length);
    if (st == RG_OK)
        st = check_sizes(list->ctx, fn, sizes, nitems, length);
    size_t n = rg_list_nitems(list);
    return st != RG_OK ? st : replace(list, fn, n, n, data, length, sizes, nitems);
}

rg_status rg_list_extend(rg_list *list, const rg_list *other)
{
    static const char fn[] = "rg_list_extend";
    if (!list)
        return RG_EINVAL;
    if (!other)
        return rg_set_error(list->ctx, RG_EINVAL, "%s: other is NULL", fn);
    if (other->dtype != list->dtype)
        return rg_set_error(list->ctx, RG_EDTYPE, "%s: cannot extend a %s list with a %s list",
                            fn, rg_dtype_name(list->dtype), rg_dtype_name(other->dtype));
    size_t *sizes = NULL, total = 0, n = rg_list_nitems(other);
    const char *data = NULL;
    rg_status st = items_of(other, 0, n, &sizes, &data, &total);
    /* The data may be the list's own content, which growing can move. */
    char *copy = NULL;
    if (st == RG_OK && total > 0 && !(copy = malloc(total * list->esize)))
        st = rg_set_error(list->ctx, RG_ENOMEM, "%s: out of host memory", fn);
    if (st == RG_OK && total > 0)
        memcpy(copy, data, total * list->esize);
    size_t at = rg_list_nitems(list);
    if (st == RG_OK)
        st = replace(list, fn, at, at, copy, total, sizes, n);
    free(copy);
    free(sizes);
    return st;
}

/* ---- arithmetic ---------------------------------------------------------------- */

/* value as one element of dtype in out; false when it does not convert exactly
 * (floats: when it is finite and beyond float32's range).  Range checks come
 * before every cast: an out-of-range float-to-integer cast is undefined. */
static bool convert_scalar(rg_dtype dtype, double v, void *out)
{
#define RG_INT_CASE(DT, T, LO, HI_EXCL)                                              \
    case DT: {                                                                       \
        if (!(v >= (LO) && v < (HI_EXCL)) || (double)(T)v != v)                      \
            return false;                                                            \
        T x = (T)v;                                                                  \
        memcpy(out, &x, sizeof x);                                                   \
        return true;                                                                 \
    }
    switch (dtype) {
    RG_INT_CASE(RG_INT8, int8_t, -128.0, 128.0)
    RG_INT_CASE(RG_INT16, int16_t, -32768.0, 32768.0)
    RG_INT_CASE(RG_INT32, int32_t, -2147483648.0, 2147483648.0)
    RG_INT_CASE(RG_INT64, int64_t, -0x1p63, 0x1p63)
    RG_INT_CASE(RG_UINT8, uint8_t, 0.0, 256.0)
    RG_INT_CASE(RG_UINT16, uint16_t, 0.0, 65536.0)
    RG_INT_CASE(RG_UINT32, uint32_t, 0.0, 4294967296.0)
    RG_INT_CASE(RG_UINT64, uint64_t, 0.0, 0x1p64)
    case RG_FLOAT32: {
        if ((v > FLT_MAX || v < -FLT_MAX) && v - v == 0) /* finite (v - v is NaN for inf) */
            return false;
        float x = (float)v;
        memcpy(out, &x, sizeof x);
        return true;
    }
    case RG_FLOAT64:
        memcpy(out, &v, sizeof v);
        return true;
    case RG_BOOL:
        break;
    }
#undef RG_INT_CASE
    return false;
}

rg_status rg_list_scalar(rg_list *list, rg_arith op, double value)
{
    static const char fn[] = "rg_list_scalar";
    if (!list)
        return RG_EINVAL;
    unsigned char bytes[8];
    if (list->dtype == RG_BOOL)
        return rg_set_error(list->ctx, RG_EDTYPE, "%s: no arithmetic on bool lists", fn);
    if (!convert_scalar(list->dtype, value, bytes))
        return rg_set_error(list->ctx, RG_EINVAL, "%s: %g is not a value of the list's dtype %s",
                            fn, value, rg_dtype_name(list->dtype));
    return rg_array_scalar(list->content, op, bytes);
}
