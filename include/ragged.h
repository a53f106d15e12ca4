/* ragged.h — the public API of ragged: data-parallel primitives for ragged arrays. */
#ifndef RAGGED_H
#define RAGGED_H

#include <stddef.h>
#include <stdint.h>

#include "ragged_version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(RAGGED_BUILDING) && defined(__GNUC__)
#define RG_API __attribute__((visibility("default")))
#else
#define RG_API
#endif

/* ------------------------------------------------------------------------
 * Conventions
 *
 * A ragged array is a flat content array plus an offsets array of length
 * nsegs + 1: segment i is content[offsets[i] .. offsets[i+1]).  Valid offsets
 * start at 0, never decrease, and end at the content length.
 *
 * Every fallible call returns an rg_status: RG_OK (0) or a negative error.
 * The detailed message of the last error (argument name, first bad index,
 * OpenCL build log) is rg_context_error(ctx).  On error no output is
 * modified.  Output parameters come first.  Every _free accepts NULL.
 * ------------------------------------------------------------------------ */

typedef enum rg_status {
    RG_OK = 0,
    RG_EINVAL = -1,     /* invalid argument: NULL, unknown enum, foreign context */
    RG_ENOMEM = -2,     /* host memory exhausted */
    RG_EDTYPE = -3,     /* dtype not supported by this operation */
    RG_ESIZE = -4,      /* array lengths do not fit together */
    RG_EOFFSETS = -5,   /* offsets not 0-based, decreasing, or not ending at the content length */
    RG_ERANGE = -6,     /* index or range out of bounds */
    RG_EOVERFLOW = -7,  /* a size or a result does not fit its type */
    RG_ENODEVICE = -8,  /* no device of the kind asked for */
    RG_EBUILD = -9,     /* kernel build failed; the message holds the build log */
    RG_ENOKERNEL = -10, /* kernel source not found; the message names the folders searched */
    RG_EDEVICE = -11,   /* the OpenCL runtime reported an error */
    RG_EDEVMEM = -12    /* device memory exhausted */
} rg_status;

/* A short fixed description of a status ("invalid offsets"), never NULL. */
RG_API const char *rg_strerror(rg_status status);

/* The library's version at run time, e.g. "0.1.0" (compare RAGGED_VERSION_STRING). */
RG_API const char *rg_version_string(void);

/* ------------------------------------------------------------------------
 * Contexts and backends
 * ------------------------------------------------------------------------ */

typedef struct rg_context rg_context;

typedef enum rg_backend {
    RG_BACKEND_AUTO = 0, /* RAGGED_BACKEND, then an OpenCL GPU/accelerator, else OpenMP */
    RG_BACKEND_OPENCL = 1,
    RG_BACKEND_OPENMP = 2
} rg_backend;

typedef enum rg_device_kind {
    RG_DEVICE_CPU = 0,
    RG_DEVICE_GPU = 1,
    RG_DEVICE_ACCELERATOR = 2
} rg_device_kind;

/* Creates a context on the backend asked for.  With RG_BACKEND_AUTO the
 * environment steers: RAGGED_BACKEND=auto|opencl|openmp, and RAGGED_DEVICE=
 * a substring of an OpenCL device or platform name.  auto takes an OpenCL GPU
 * or accelerator and falls back to OpenMP when there is none (no ICD loader,
 * no platform, CPU devices only).  RG_BACKEND_OPENCL takes any OpenCL device
 * (CPUs too) and fails with RG_ENODEVICE when there is none.  On failure
 * *out is untouched and rg_context_error(NULL) gives this thread's message. */
RG_API rg_status rg_context_create(rg_context **out, rg_backend want);
RG_API void rg_context_free(rg_context *ctx);

RG_API rg_backend rg_context_backend(const rg_context *ctx);
RG_API rg_device_kind rg_context_device_kind(const rg_context *ctx);
/* A readable name of the device, e.g. "NVIDIA H100 (NVIDIA CUDA)" or "OpenMP, 8 threads". */
RG_API const char *rg_context_device(const rg_context *ctx);
/* The last error's detailed message ("" if none).  NULL: the last failed
 * rg_context_create of this thread. */
RG_API const char *rg_context_error(const rg_context *ctx);

RG_API const char *rg_backend_name(rg_backend backend);

/* ------------------------------------------------------------------------
 * Arrays: typed 1-D arrays owned by a context.  On OpenCL they live in
 * device memory; data moves only on rg_array_write / rg_array_read.
 * ------------------------------------------------------------------------ */

typedef struct rg_array rg_array;

typedef enum rg_dtype {
    RG_BOOL = 1, /* one byte, 0 or 1 */
    RG_INT8,
    RG_INT16,
    RG_INT32,
    RG_INT64,
    RG_UINT8,
    RG_UINT16,
    RG_UINT32,
    RG_UINT64,
    RG_FLOAT32,
    RG_FLOAT64
} rg_dtype;

/* Size in bytes of one element, 0 for an unknown dtype. */
RG_API size_t rg_dtype_size(rg_dtype dtype);
/* "int32", "float64", ...; "unknown" for an unknown dtype. */
RG_API const char *rg_dtype_name(rg_dtype dtype);

/* A new zero-filled array of `length` elements (length 0 is allowed). */
RG_API rg_status rg_array_create(rg_array **out, rg_context *ctx, rg_dtype dtype, size_t length);
/* A new array holding a copy of data[0 .. length). */
RG_API rg_status rg_array_from_host(rg_array **out, rg_context *ctx, rg_dtype dtype,
                                    const void *data, size_t length);
RG_API void rg_array_free(rg_array *array);

/* Copies src[0 .. count) into elements [start, start + count). */
RG_API rg_status rg_array_write(rg_array *array, size_t start, const void *src, size_t count);
/* Copies elements [start, start + count) into dst[0 .. count). */
RG_API rg_status rg_array_read(void *dst, const rg_array *array, size_t start, size_t count);

RG_API size_t rg_array_length(const rg_array *array);
RG_API rg_dtype rg_array_dtype(const rg_array *array);
RG_API rg_context *rg_array_context(const rg_array *array);

/* ------------------------------------------------------------------------
 * Offsets, lengths, parents and local index
 *
 * Offsets are RG_INT32 or RG_INT64 arrays of nsegs + 1 elements; outputs are
 * RG_INT32 or RG_INT64 arrays of the stated length, allocated by the caller
 * in the same context.  Every call checks the offsets first.  An RG_INT32
 * output is checked against the largest value it could have to hold, not
 * the values themselves: parents need nsegs - 1 <= INT32_MAX; lengths, local
 * index and starts need the content length <= INT32_MAX (else RG_EOVERFLOW).
 * ------------------------------------------------------------------------ */

/* RG_OK when offsets[0] == 0, offsets never decrease and offsets[nsegs] ==
 * content_length; otherwise RG_EOFFSETS and a message naming the first bad
 * index and its value. */
RG_API rg_status rg_offsets_validate(const rg_array *offsets, size_t content_length);

/* lengths[i] = offsets[i+1] - offsets[i]; lengths has nsegs elements. */
RG_API rg_status rg_lengths(rg_array *lengths, const rg_array *offsets);

/* offsets = [0, cumulative sums of lengths]; offsets has nsegs + 1 elements.
 * A negative length is RG_EINVAL, a total that does not fit is RG_EOVERFLOW. */
RG_API rg_status rg_offsets_from_lengths(rg_array *offsets, const rg_array *lengths);

/* How an element finds its segment.  Every strategy gives the same result. */
typedef enum rg_strategy {
    RG_STRATEGY_AUTO = 0,   /* picked by rg_strategy_choose */
    RG_STRATEGY_BSEARCH,    /* binary search over offsets per element */
    RG_STRATEGY_PER_SEGMENT,/* one work-item (or loop iteration) per segment */
    RG_STRATEGY_FLOOD,      /* scatter segment ids at their starts, then max-scan */
    RG_STRATEGY_MERGE_PATH  /* load-balanced search: equal shares of elements + segments */
} rg_strategy;

RG_API const char *rg_strategy_name(rg_strategy strategy);

/* The strategy RG_STRATEGY_AUTO takes for this context and size, and (if
 * why is not NULL) a static sentence saying why. */
RG_API rg_strategy rg_strategy_choose(const rg_context *ctx, size_t nsegs, size_t nelems,
                                      const char **why);

/* parents[k] = the segment holding element k; parents has offsets[nsegs]
 * elements.  If used is not NULL it receives the strategy that ran. */
RG_API rg_status rg_parents(rg_array *parents, const rg_array *offsets, rg_strategy strategy,
                            rg_strategy *used);
/* local[k] = k - offsets[parents[k]], the position of k in its segment. */
RG_API rg_status rg_local_index(rg_array *local, const rg_array *offsets, rg_strategy strategy,
                                rg_strategy *used);
/* starts[k] = offsets[parents[k]], the start of the segment holding k. */
RG_API rg_status rg_segment_starts(rg_array *starts, const rg_array *offsets,
                                   rg_strategy strategy, rg_strategy *used);

/* ------------------------------------------------------------------------
 * Segmented reductions: out[i] = op over segment i of content.
 *
 * out has nsegs elements of rg_reduce_dtype(op, content dtype) and is
 * allocated by the caller in the same context.  Results by op:
 *
 *   SUM, PROD   integers and bool: 64-bit, wrapping modulo 2^64 (int64 for
 *               signed and bool, uint64 for unsigned); floats: the input
 *               type.  Empty segment: 0 (sum), 1 (prod).
 *   MIN, MAX    the input dtype.  Empty segment: the identity, i.e. MIN
 *               gives the dtype's largest value (INT32_MAX, UINT8_MAX,
 *               +inf for floats, true for bool) and MAX its smallest
 *               (INT32_MIN, 0, -inf, false).  A NaN in a segment makes the
 *               result NaN (as numpy's min/max).
 *   ARGMIN,     int64 position of the first minimum (maximum) within the
 *   ARGMAX      segment (0 = its first element); the first NaN if there is
 *               one (as numpy); -1 for an empty segment.
 *   COUNT       int64 segment length (content is not read).
 *   COUNT_NONZERO  int64 number of elements != 0 (NaN counts as nonzero).
 *   ANY, ALL    bool: some / every element != 0.  Empty: false / true.
 *
 * Summation order (floats are not associative): within a backend and device
 * the result is deterministic -- no atomics, the same shape of combining
 * tree on every run.  Float32 sums and products accumulate in float64 on
 * OpenMP and in float32 on OpenCL.  OpenMP: each thread adds its element
 * range left to right; a segment cut by thread boundaries gets its parts
 * added in thread order.  OpenCL merge path: each work-item adds up to 8
 * consecutive elements left to right, the partials of one segment within a
 * work-group are added by a tree (Hillis-Steele segmented scan), then tile
 * by tile and chunk by chunk in order.  OpenCL per-segment: left to right.
 * ------------------------------------------------------------------------ */

typedef enum rg_reduce_op {
    RG_REDUCE_SUM = 0,
    RG_REDUCE_PROD,
    RG_REDUCE_MIN,
    RG_REDUCE_MAX,
    RG_REDUCE_ARGMIN,
    RG_REDUCE_ARGMAX,
    RG_REDUCE_COUNT,
    RG_REDUCE_COUNT_NONZERO,
    RG_REDUCE_ANY,
    RG_REDUCE_ALL
} rg_reduce_op;

/* "sum", "argmin", ...; "unknown" for an unknown op. */
RG_API const char *rg_reduce_op_name(rg_reduce_op op);

/* The dtype of op's output for content of dtype `in`; 0 when op or in is unknown. */
RG_API rg_dtype rg_reduce_dtype(rg_reduce_op op, rg_dtype in);

/* How segments are mapped onto threads or work-items.  Every policy gives
 * the same result (up to the float summation order above). */
typedef enum rg_reduce_policy {
    RG_REDUCE_POLICY_AUTO = 0,    /* picked by rg_reduce_policy_choose */
    RG_REDUCE_POLICY_PER_SEGMENT, /* one work-item (OpenMP: one loop iteration) per segment,
                                   * many per work-group: no search, no combining pass; a long
                                   * segment runs on a single work-item */
    RG_REDUCE_POLICY_MERGE_PATH   /* element split: every work-group (OpenMP: thread) takes an
                                   * equal share of elements + segments, so short segments
                                   * are many per work-group and a long one is split across
                                   * work-groups; partials of cut segments are combined by a
                                   * second, deterministic pass.  No length distribution
                                   * unbalances it */
} rg_reduce_policy;

RG_API const char *rg_reduce_policy_name(rg_reduce_policy policy);

/* The policy RG_REDUCE_POLICY_AUTO takes for this context and size, and (if
 * why is not NULL) a static sentence saying why: merge path, except on a
 * GPU or accelerator when there is no content (nelems == 0), where one
 * work-item per segment just writes the identities.  Per-segment is never
 * chosen for content: without reading every length (a pass as costly as
 * the reduction when segments are short) one huge segment cannot be ruled
 * out, and it would run on one work-item. */
RG_API rg_reduce_policy rg_reduce_policy_choose(const rg_context *ctx, size_t nsegs,
                                                size_t nelems, const char **why);

/* out[i] = op over content[offsets[i] .. offsets[i+1]).  Offsets are int32 or
 * int64 and must end at the content length (else RG_EOFFSETS); out must have
 * the dtype rg_reduce_dtype(op, content dtype) (else RG_EDTYPE) and nsegs
 * elements (else RG_ESIZE); an unknown op or policy is RG_EINVAL.  If used
 * is not NULL it receives the policy that ran. */
RG_API rg_status rg_segment_reduce(rg_array *out, const rg_array *content,
                                   const rg_array *offsets, rg_reduce_op op,
                                   rg_reduce_policy policy, rg_reduce_policy *used);

#ifdef __cplusplus
}
#endif

#endif /* RAGGED_H */
