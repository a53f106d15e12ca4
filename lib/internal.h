/* internal.h — what the front end and the backends share: handles, the backend table, errors. */
#ifndef RAGGED_INTERNAL_H
#define RAGGED_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ragged.h"

#define RG_HIDDEN __attribute__((visibility("hidden")))

/* Whether the environment variable `name` is "0": how RAGGED_AVX512,
 * RAGGED_CACHE and RAGGED_OPENCL_CPU_KERNELS turn something off. */
static inline bool rg_env_off(const char *name)
{
    const char *v = getenv(name);
    return v && strcmp(v, "0") == 0;
}

/* What elem_segments writes for element k of segment i. */
typedef enum rg_elem_kind {
    RG_ELEM_PARENTS = 0, /* i */
    RG_ELEM_LOCAL = 1,   /* k - offsets[i] */
    RG_ELEM_STARTS = 2   /* offsets[i] */
} rg_elem_kind;

/* One table per backend, filled by its init function.  The front end has
 * checked every argument before a call: arrays belong to ctx, dtypes are
 * RG_INT32/RG_INT64 where offsets or indices are meant, lengths fit, offsets
 * are valid (except in offsets_check).  A backend reports failures of its own
 * (device errors, memory) through rg_set_error and its return value. */
typedef struct rg_ops {
    void (*destroy)(rg_context *ctx);

    /* Storage for a->length elements of a->dtype, zero-filled if zero is true
     * (else left as it comes: for outputs that are written whole). */
    rg_status (*array_alloc)(rg_array *a, bool zero);
    void (*array_release)(rg_array *a);
    rg_status (*array_write)(rg_array *a, size_t byte_off, const void *src, size_t nbytes);
    rg_status (*array_read)(const rg_array *a, size_t byte_off, void *dst, size_t nbytes);
    /* Every element of a (length > 0) set to the rg_dtype_size bytes at value. */
    rg_status (*array_fill)(rg_array *a, const void *value);
    /* dst = src, same dtype and length > 0. */
    rg_status (*array_copy)(rg_array *dst, const rg_array *src);
    /* Waits for all queued work. */
    rg_status (*finish)(rg_context *ctx);
    /* The bytes a backend keeps from call to call for reuse (temporaries,
     * the storage of an array freed last), and freeing them; NULL where a
     * backend keeps none (see rg_context_scratch_bytes). */
    size_t (*scratch_bytes)(const rg_context *ctx);
    void (*scratch_free)(rg_context *ctx);

    /* *first_bad = the smallest i with (i == 0 ? o[0] != 0 : o[i] < o[i-1]),
     * or -1 when there is none.  offsets has at least one element.  Where
     * there is none, *longest = the largest o[i+1] - o[i] (0 without
     * segments), or -1 where the backend does not compute it (OpenMP
     * computes it only where all segments are of one length). */
    rg_status (*offsets_check)(const rg_array *offsets, int64_t *first_bad, int64_t *longest);
    /* lengths[i] = o[i+1] - o[i]. */
    rg_status (*lengths)(rg_array *lengths, const rg_array *offsets);
    /* *first_negative = smallest i with lengths[i] < 0 or -1; *total = sum of
     * the non-negative lengths, saturated at UINT64_MAX, so that a total
     * above INT64_MAX means overflow and INT64_MAX itself still fits;
     * *longest = the largest length, or -1 where the backend does not
     * compute it (as offsets_check). */
    rg_status (*lengths_total)(const rg_array *lengths, int64_t *first_negative, uint64_t *total,
                               int64_t *longest);
    /* offsets[0] = 0, offsets[i+1] = offsets[i] + lengths[i]; lengths are
     * non-negative and the total fits offsets' dtype. */
    rg_status (*offsets_from_lengths)(rg_array *offsets, const rg_array *lengths);
    /* For every element k of segment i, out[k] = (kind) of (k, i); strategy
     * is never RG_STRATEGY_AUTO; out has o[nsegs] elements and the values fit. */
    rg_status (*elem_segments)(rg_array *out, const rg_array *offsets, rg_strategy strategy,
                               rg_elem_kind kind);
    /* out[i] = inner[outer[i]] (inner NULL: out[i] = outer[i]); the values of
     * outer index inner and the results fit out's dtype. */
    rg_status (*compose)(rg_array *out, const rg_array *outer, const rg_array *inner);

    /* Storage of a shrunk array without a host mirror: a->length and
     * a->nbytes are already the new, smaller values, old_nbytes the size
     * allocated.  Best effort: true when the storage now holds exactly
     * a->nbytes (the capacity shrinks to the length), false when it kept the
     * old storage.  NULL means "keep it". */
    bool (*array_trim)(rg_array *a, size_t old_nbytes);

    /* Non-zero elements.  Element k is non-zero when its bits, read as an
     * unsigned integer of the dtype's size, have (bits & mask) != 0: the
     * front end picks mask per dtype (rg_nonzero_mask), so the backends
     * never see the dtype's meaning.  a is not empty. */
    rg_status (*nonzero_count)(const rg_array *a, uint64_t mask, int64_t *nnz);
    /* *nnz = the count; *coords = a new RG_INT64 array with room for the
     * coordinates (row-major rows of ndim, see rg_nonzero) of at least the
     * first min(nnz, rows) non-zeros, rows = bound when bound >= 0, else nnz;
     * all of them written when nnz <= rows.  When bound >= 0 and nnz > bound
     * the backend may set *coords to NULL or to a partly written array; the
     * front end frees it.  shape is valid, its product is a's length. */
    rg_status (*nonzero)(rg_array **coords, int64_t *nnz, const rg_array *a, uint64_t mask,
                         const int64_t *shape, size_t ndim, int64_t bound);
    /* *nnz = the count; when coords (RG_INT64, same context) has room for
     * nnz rows of ndim, they are written to its start and the rest of it is
     * left as it was; otherwise coords is untouched (the front end reports
     * RG_ERANGE).  shape is valid, its product is a's length. */
    rg_status (*nonzero_into)(rg_array *coords, int64_t *nnz, const rg_array *a, uint64_t mask,
                              const int64_t *shape, size_t ndim);
    /* positions holds the flat indices of the non-zeros of the content split
     * by offsets (valid, RG_INT32/RG_INT64), ascending, at least one; makes
     * seg_offsets[i] = the number of positions below offsets[i] (nsegs + 1,
     * RG_INT64) and positions[j] -= the start of the segment holding it. */
    rg_status (*segment_nonzero)(rg_array *seg_offsets, rg_array *positions,
                                 const rg_array *offsets);
    /* The whole of rg_segment_nonzero where set (then segment_nonzero is not
     * used): content not empty, offsets valid for it; on success *seg_offsets
     * and *positions are the new results, on failure both are left alone. */
    rg_status (*segment_nonzero_all)(rg_array **seg_offsets, rg_array **positions,
                                     const rg_array *content, uint64_t mask,
                                     const rg_array *offsets);
    /* Storage for a->capacity elements (was old_capacity; grows only): the
     * first old_capacity elements keep their values, the rest are zero.  On
     * failure the old storage is left as it was. */
    rg_status (*array_grow)(rg_array *a, size_t old_capacity);
    /* a[i] = a[i] op *value for i < a->length (a numeric dtype, value one
     * element of it); integer division by zero has been refused. */
    rg_status (*scalar)(rg_array *a, rg_arith op, const void *value);
    /* Raw copies between host memory and the device copy, for backends whose
     * arrays live apart from the host (NULL otherwise).  The array layer
     * (array.c) calls these to keep the host mirror coherent, and such a
     * backend points array_write/array_read at rg_mirror_write/rg_mirror_read
     * so that every caller of those two sees one coherent array. */
    rg_status (*dev_upload)(rg_array *a, size_t byte_off, const void *src, size_t nbytes);
    rg_status (*dev_download)(const rg_array *a, size_t byte_off, void *dst, size_t nbytes);
    /* out[i] = op over content[o[i] .. o[i+1]) as rg_segment_reduce defines
     * it.  op is never RG_REDUCE_COUNT (the front end derives counts from the
     * lengths), policy is concrete, nsegs >= 1, out has rg_reduce_dtype(op,
     * content's dtype) and nsegs elements; content may be empty. */
    rg_status (*segment_reduce)(rg_array *out, const rg_array *content, const rg_array *offsets,
                                rg_reduce_op op, rg_reduce_policy policy);
} rg_ops;

struct rg_context {
    rg_backend backend;         /* RG_BACKEND_OPENCL or RG_BACKEND_OPENMP */
    rg_device_kind device_kind;
    char device[256];           /* readable device name */
    const rg_ops *ops;
    void *impl;                 /* the backend's private state */
    char *error;                /* last error message, malloc'd; NULL = "" */
    uint64_t bytes_up;          /* host -> device bytes copied (rg_context_transfers) */
    uint64_t bytes_down;        /* device -> host bytes copied */
    /* The output array of the op in progress, between rg_op_begin and
     * rg_op_end (NULL outside), and whether the op has queued a command
     * (kernel, fill, copy) that may have written it. */
    const rg_array *op_out;
    bool op_wrote;
};

struct rg_array {
    rg_context *ctx;
    rg_dtype dtype;
    size_t length;
    size_t nbytes;              /* length * rg_dtype_size(dtype), checked for overflow */
    void *host;                 /* OpenMP: the elements */
    bool host_mapped;           /* OpenMP: host is a mapping of its own, not malloc'd */
    void *dev;                  /* OpenCL: the cl_mem */
    size_t capacity;            /* elements of storage, >= length (lists grow into it) */
    /* Backends with a device copy (ops->dev_upload set) keep an optional host
     * mirror of capacity elements and, per side, the smallest byte range
     * [lo, hi) changed since the two last agreed (lo == hi: none):
     *   host_dirty: the mirror is newer there; uploaded before a kernel runs.
     *   dev_dirty:  the device is newer there (a kernel wrote the array);
     *               downloaded when the host reads it.
     * Invariant: at most one of the two is non-empty.  Without a mirror,
     * host_dirty is empty and an empty dev_dirty means the device still
     * holds the zeros it was created with.  Outside both ranges the mirror
     * (if any) equals the device copy up to the length; past it neither
     * side means anything (every growth writes the bytes it exposes). */
    void *mirror;
    size_t host_dirty_lo, host_dirty_hi;
    size_t dev_dirty_lo, dev_dirty_hi;
    /* Inside dev_dirty, the part the last read of its middle downloaded
     * (empty, or strictly inside: dev_dirty_lo < lo < hi < dev_dirty_hi),
     * so that reading it again moves nothing. */
    size_t dev_fresh_lo, dev_fresh_hi;
    /* Known-valid offsets: set when the elements passed the offsets check
     * (rg_check_offsets) or were made as offsets by the library, with
     * offsets_last their last value; cleared by every call that may change
     * the elements or the length (rg_array_changed).  Arrays change only
     * through the library, so later checks of the same offsets need no full
     * read and, on a device, no round trip. */
    bool offsets_ok;
    int64_t offsets_last;
    /* With offsets_ok: the longest segment where the check (or the lengths
     * the offsets were made from) measured it, else -1.  Lets the GPU
     * heuristics take one work-item per segment when no segment is long,
     * and the OpenMP merge path write regular offsets (all segments of one
     * length) without reading them. */
    int64_t offsets_longest;
};

/* ---- the array layer (array.c) ---- */

/* rg_dtype_size, inline for the list's per-item steps. */
static inline size_t rg_dtype_bytes(rg_dtype dtype)
{
    switch (dtype) {
    case RG_BOOL: case RG_INT8: case RG_UINT8: return 1;
    case RG_INT16: case RG_UINT16: return 2;
    case RG_INT32: case RG_UINT32: case RG_FLOAT32: return 4;
    case RG_INT64: case RG_UINT64: case RG_FLOAT64: return 8;
    }
    return 0;
}

/* Before anything changes a's elements or length: a is no longer known to
 * hold valid offsets.  Every front-end call that writes an array calls it. */
static inline void rg_array_changed(const rg_array *a)
{
    ((rg_array *)a)->offsets_ok = false;
}
/* An op that writes the caller's array `out` in place runs its backend
 * call between these two.  rg_op_begin also calls rg_array_changed(out);
 * rg_op_end returns st.  Once the backend has queued a command that may
 * have written out (rg_op_queued), a device failure is reported as
 * RG_EDEVICE, which says the outputs may be partly written, and not as
 * RG_EDEVMEM or RG_ENOMEM, which promise them as they were. */
RG_HIDDEN void rg_op_begin(const rg_array *out);
RG_HIDDEN rg_status rg_op_end(rg_context *ctx, rg_status st);
/* A backend queued a command that writes the device buffer `dev`. */
RG_HIDDEN void rg_op_queued(rg_context *ctx, const void *dev);
/* a now holds valid offsets ending at last (the check passed, or the
 * library made them so). */
static inline void rg_array_offsets_known(const rg_array *a, int64_t last)
{
    rg_array *m = (rg_array *)a;
    m->offsets_ok = true;
    m->offsets_last = last;
    m->offsets_longest = -1;
}
/* After rg_array_offsets_known: the longest segment of a, as measured. */
RG_HIDDEN void rg_array_offsets_longest(const rg_array *a, int64_t longest);

/* Before a kernel reads or writes a: uploads the host mirror's changed range. */
RG_HIDDEN rg_status rg_array_sync_device(const rg_array *a);
/* After (or just before) a kernel writes a, once rg_array_sync_device succeeded:
 * the host mirror is stale. */
RG_HIDDEN void rg_array_touch_device(const rg_array *a);
/* The ops->array_write/array_read of backends with a device copy: write into
 * the mirror (or straight through while the mirror is stale), read from the
 * mirror after downloading only the stale part of the range. */
RG_HIDDEN rg_status rg_mirror_write(rg_array *a, size_t byte_off, const void *src, size_t nbytes);
RG_HIDDEN rg_status rg_mirror_read(const rg_array *a, size_t byte_off, void *dst, size_t nbytes);
/* The four calls below are inline for the list's edits, which make all of
 * them for every item (an append took about 24 ns out of line); their
 * work for arrays with a device copy, and growing, stay in array.c. */
RG_HIDDEN rg_status rg_array_mirror_view(rg_array *a, void **data);
RG_HIDDEN void rg_array_mirror_changed(rg_array *a, size_t byte_lo, size_t byte_hi);
RG_HIDDEN rg_status rg_array_grow(rg_array *a, size_t min_capacity);
RG_HIDDEN void rg_array_mirror_length(rg_array *a);

static inline bool rg_array_has_device_copy(const rg_array *a)
{
    return a->ctx->ops->dev_upload != NULL;
}

/* The whole array, current, in host memory for the host to edit in place
 * (OpenMP: the storage itself; OpenCL: the mirror, made and brought up to
 * date first).  After editing bytes [lo, hi) call rg_array_host_changed. */
static inline rg_status rg_array_host_view(rg_array *a, void **data)
{
    if (rg_array_has_device_copy(a))
        return rg_array_mirror_view(a, data);
    *data = a->host;
    return RG_OK;
}

static inline void rg_array_host_changed(rg_array *a, size_t byte_lo, size_t byte_hi)
{
    rg_array_changed(a);
    if (rg_array_has_device_copy(a) && byte_lo < byte_hi)
        rg_array_mirror_changed(a, byte_lo, byte_hi);
}

/* Storage for at least min_capacity elements, grown geometrically so that
 * a run of appends costs amortised O(1); contents and length are kept. */
static inline rg_status rg_array_reserve(rg_array *a, size_t min_capacity)
{
    return min_capacity <= a->capacity ? RG_OK : rg_array_grow(a, min_capacity);
}

/* Sets the length (<= capacity).  New elements hold whatever is in storage. */
static inline void rg_array_set_length(rg_array *a, size_t length)
{
    rg_array_changed(a);
    a->length = length;
    a->nbytes = length * rg_dtype_bytes(a->dtype); /* capacity * size was checked in reserve */
    if (rg_array_has_device_copy(a))
        rg_array_mirror_length(a);
}

/* ---- large host blocks (host.c) ---- */

/* From this size host blocks get a mapping of their own, 2 MiB-aligned and
 * marked for transparent huge pages: the first touch of 4 KiB pages (a fault
 * and a kernel zero fill per page) costs several times a write of the same
 * bytes.  glibc maps blocks from 32 MiB up afresh anyway (its largest
 * dynamic mmap threshold), so below that malloc, which may reuse freed
 * memory without any fault, stays. */
#define RG_HOST_MAP_MIN ((size_t)32 << 20)
RG_HIDDEN size_t rg_host_page_round(size_t nbytes);
/* nbytes (> 0) in a fresh mapping (reads as zeros) starting on a huge page
 * boundary; NULL if none (or where the system has no such advice). */
RG_HIDDEN void *rg_host_map(size_t nbytes);
RG_HIDDEN void rg_host_unmap(void *p, size_t nbytes);
/* Blocks that host code writes whole once (segment descriptors, grown
 * arrays) are mapped from this size, not 32 MiB: glibc gave freed blocks of
 * a few MiB back to the system (top trimming), so each call faulted their
 * 4 KiB pages in again. */
#define RG_HOST_ALLOC_MAP_MIN ((size_t)2 << 20)
/* The storage segment descriptors freed last keeps for the next (segd.c);
 * rg_context_free_scratch gives it back. */
RG_HIDDEN void rg_segd_free_kept(void);

/* Records a printf-style message as ctx's last error and returns status. */
RG_HIDDEN rg_status rg_set_error(rg_context *ctx, rg_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Appends more text to ctx's last error (for long build logs). */
RG_HIDDEN void rg_append_error(rg_context *ctx, const char *text);
RG_HIDDEN void rg_clear_error(rg_context *ctx);
/* For a call that failed inside another public call: "fn: " before the
 * message, so that it names the function the user called; returns status. */
RG_HIDDEN rg_status rg_prefix_error(rg_context *ctx, rg_status status, const char *fn);

/* A switch read from the environment variable `name` when a context is
 * created (RAGGED_PROFILE, RAGGED_OMP_STREAM): *on (if not NULL) is whether
 * it is "1"; unset, empty, "0" and "1" are fine, any other value is
 * RG_EINVAL with a message naming the variable, so that a typo is an error
 * rather than the default. */
static inline rg_status rg_env_switch(rg_context *ctx, const char *name, bool *on)
{
    const char *v = getenv(name);
    bool one = v && strcmp(v, "1") == 0;
    if (on)
        *on = one;
    if (v && *v && !one && strcmp(v, "0") != 0)
        return rg_set_error(ctx, RG_EINVAL, "%s=\"%s\": expected 0 or 1", name, v);
    return RG_OK;
}

/* Backend init functions: fill ctx->ops, ctx->impl, ctx->device, ctx->device_kind
 * (the front end sets ctx->backend).  On failure they release whatever they
 * made and leave ctx->ops NULL.  rg_ocl_init returns RG_ENODEVICE when there
 * is no usable device; with gpu_only it skips CPU devices (RG_BACKEND_AUTO). */
RG_HIDDEN rg_status rg_omp_init(rg_context *ctx);
RG_HIDDEN rg_status rg_ocl_init(rg_context *ctx, bool gpu_only);

/* Front-end checks shared by the primitives (offsets.c); each records a
 * message naming fn and the argument.  An index array exists, belongs to
 * ctx and is int32/int64: */
RG_HIDDEN rg_status rg_check_index_array(rg_context *ctx, const rg_array *a, const char *fn,
                                         const char *name, const char *ref);
/* RG_EINVAL for a NULL argument `name` of fn, with the message in the
 * context of `other`, another argument of the call (if not NULL too). */
RG_HIDDEN rg_status rg_null_arg(const rg_array *other, const char *fn, const char *name);
/* RG_EINVAL when output `name` is input `in_name` too: a kernel would read
 * what it is overwriting. */
RG_HIDDEN rg_status rg_check_not_input(rg_context *ctx, const rg_array *out, const char *fn,
                                       const char *name, const rg_array *in,
                                       const char *in_name);
/* RG_EINVAL for arrays `name` (a) and `ref` (of ctx) of different contexts,
 * with the message in both: the caller may read either one's. */
RG_HIDDEN rg_status rg_foreign_array(rg_context *ctx, const rg_array *a, const char *fn,
                                     const char *name, const char *ref);
/* Offsets are non-empty, start at 0 and never decrease; *nelems = the last. */
RG_HIDDEN rg_status rg_check_offsets(const rg_array *offsets, const char *fn, int64_t *nelems);
/* An int32 output is refused when values may reach max_value > INT32_MAX. */
RG_HIDDEN rg_status rg_check_fits(const rg_array *out, const char *fn, const char *name,
                                  int64_t max_value);
/* a has `expected` elements; why says what the length follows from. */
RG_HIDDEN rg_status rg_check_length(const rg_array *a, const char *fn, const char *name,
                                    size_t expected, const char *why);

/* Reads one int32/int64 element of an index array as int64 (front end helper). */
RG_HIDDEN rg_status rg_read_index(const rg_array *a, size_t i, int64_t *value);

/* rg_array_create without the zero fill, for outputs written whole before
 * anyone reads them. */
RG_HIDDEN rg_status rg_array_create_uninit(rg_array **out, rg_context *ctx, rg_dtype dtype,
                                           size_t length);

/* Shrinks a to its first length elements (length <= a->length); the
 * backend may release the storage past them. */
RG_HIDDEN void rg_array_trim(rg_array *a, size_t length);

/* Checks that offsets is an RG_INT32/RG_INT64 array of ctx, valid, ending at
 * content_length; the messages name fn. */
RG_HIDDEN rg_status rg_check_offsets_for(rg_context *ctx, const rg_array *offsets,
                                         size_t content_length, const char *fn);

/* rg_strategy_choose and rg_reduce_policy_choose knowing the longest
 * segment (-1: unknown), as the auto strategy and policy do when the
 * offsets passed the check on this context's device. */
RG_HIDDEN rg_strategy rg_strategy_pick(const rg_context *ctx, size_t nsegs, size_t nelems,
                                       int64_t longest, const char **why);
RG_HIDDEN rg_reduce_policy rg_reduce_policy_pick(const rg_context *ctx, size_t nsegs,
                                                 size_t nelems, int64_t longest,
                                                 const char **why);

#endif /* RAGGED_INTERNAL_H */
