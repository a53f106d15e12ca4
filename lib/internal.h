/* internal.h — what the front end and the backends share: handles, the backend table, errors. */
#ifndef RAGGED_INTERNAL_H
#define RAGGED_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "ragged.h"

#define RG_HIDDEN __attribute__((visibility("hidden")))

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

    /* Storage for a->length elements of a->dtype, zero-filled. */
    rg_status (*array_alloc)(rg_array *a);
    void (*array_release)(rg_array *a);
    rg_status (*array_write)(rg_array *a, size_t byte_off, const void *src, size_t nbytes);
    rg_status (*array_read)(const rg_array *a, size_t byte_off, void *dst, size_t nbytes);

    /* *first_bad = the smallest i with (i == 0 ? o[0] != 0 : o[i] < o[i-1]),
     * or -1 when there is none.  offsets has at least one element. */
    rg_status (*offsets_check)(const rg_array *offsets, int64_t *first_bad);
    /* lengths[i] = o[i+1] - o[i]. */
    rg_status (*lengths)(rg_array *lengths, const rg_array *offsets);
    /* *first_negative = smallest i with lengths[i] < 0 or -1; *total = sum of
     * the non-negative lengths, saturated at UINT64_MAX, so that a total
     * above INT64_MAX means overflow and INT64_MAX itself still fits. */
    rg_status (*lengths_total)(const rg_array *lengths, int64_t *first_negative, uint64_t *total);
    /* offsets[0] = 0, offsets[i+1] = offsets[i] + lengths[i]; lengths are
     * non-negative and the total fits offsets' dtype. */
    rg_status (*offsets_from_lengths)(rg_array *offsets, const rg_array *lengths);
    /* For every element k of segment i, out[k] = (kind) of (k, i); strategy
     * is never RG_STRATEGY_AUTO; out has o[nsegs] elements and the values fit. */
    rg_status (*elem_segments)(rg_array *out, const rg_array *offsets, rg_strategy strategy,
                               rg_elem_kind kind);
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
};

struct rg_array {
    rg_context *ctx;
    rg_dtype dtype;
    size_t length;
    size_t nbytes;              /* length * rg_dtype_size(dtype), checked for overflow */
    void *host;                 /* OpenMP: the elements */
    void *dev;                  /* OpenCL: the cl_mem */
};

/* Records a printf-style message as ctx's last error and returns status. */
RG_HIDDEN rg_status rg_set_error(rg_context *ctx, rg_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Appends more text to ctx's last error (for long build logs). */
RG_HIDDEN void rg_append_error(rg_context *ctx, const char *text);
RG_HIDDEN void rg_clear_error(rg_context *ctx);

/* Backend init functions: fill ctx->ops, ctx->impl, ctx->device, ctx->device_kind
 * (the front end sets ctx->backend).  On failure they release whatever they
 * made and leave ctx->ops NULL.  rg_ocl_init returns RG_ENODEVICE when there
 * is no usable device; with gpu_only it skips CPU devices (RG_BACKEND_AUTO). */
RG_HIDDEN rg_status rg_omp_init(rg_context *ctx);
RG_HIDDEN rg_status rg_ocl_init(rg_context *ctx, bool gpu_only);

/* Front-end argument checks (offsets.c), shared by every primitive; each
 * records a message naming fn and the argument.  rg_check_index_array: a
 * exists, belongs to ctx and is int32/int64.  rg_check_offsets: offsets are
 * not empty, start at 0 and never decrease; *nelems receives the last one.
 * rg_check_length: a has `expected` elements (`why` says what that is). */
RG_HIDDEN rg_status rg_check_index_array(rg_context *ctx, const rg_array *a, const char *fn,
                                         const char *name);
RG_HIDDEN rg_status rg_check_offsets(const rg_array *offsets, const char *fn, int64_t *nelems);
RG_HIDDEN rg_status rg_check_length(const rg_array *a, const char *fn, const char *name,
                                    size_t expected, const char *why);

/* Reads one int32/int64 element of an index array as int64 (front end helper). */
RG_HIDDEN rg_status rg_read_index(const rg_array *a, size_t i, int64_t *value);

#endif /* RAGGED_INTERNAL_H */
