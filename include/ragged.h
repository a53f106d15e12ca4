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
 * OpenCL build log) is rg_context_error(ctx); a call given no context and
 * no array to find one by (NULL for all of them) can only return
 * RG_EINVAL, and sets no message.  On error no output is
 * modified: an op gets its kernels, programs and temporary buffers before
 * it writes, so missing or broken kernels and exhausted memory leave
 * outputs as they were.  The exception is the OpenCL runtime failing in the
 * middle of an op, after the op queued a kernel, fill or copy that writes
 * its output: the status is then RG_EDEVICE whatever failed (memory
 * included), the message says that the output may be partly written, and it
 * should be taken as lost.  RG_EDEVMEM and RG_ENOMEM always leave the call's
 * outputs as they were.  OpenCL runs ops after they return: a failure of an
 * earlier call's kernels may show only at a later call that waits for them
 * (a read, an offsets check, rg_context_finish); the arrays that earlier
 * call wrote should then be taken as lost.  Output parameters come first,
 * and an output array may not be one of the call's inputs (RG_EINVAL;
 * rg_array_scalar and the rg_list calls change their array in place).  Every
 * _free accepts NULL.
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
    RG_ENOKERNEL = -10, /* kernel source not found (the message names the folders searched), or
                           a kernel missing from the source found */
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

/* A context and the arrays it owns are for one thread at a time (calls on
 * them update the context's message and the arrays' caches); separate
 * contexts may be made and used from separate threads (OpenCL contexts
 * are made one at a time in the process, and on PoCL their kernels run
 * one at a time: both work around faults of PoCL's).  The one exception:
 * the queries of a segment descriptor and of its split (rg_segd_nsegs to
 * rg_segd_offsets, rg_dsegd_nworkers, rg_dsegd_part, rg_dsegd_lengths) may
 * run in several threads at once, one per worker say, while no other call
 * uses their context; read a failed query's message once they are done.
 *
 * fork: a child may create contexts, and use them, of a backend the parent
 * had not used before it forked (fork waits for a context's creation, or a
 * PoCL kernel, in another thread, so that no lock of the library stays
 * held in the child).  Contexts inherited from the parent, and new ones of
 * a backend it used, can hang in the child: the OpenMP runtime (libgomp)
 * and OpenCL drivers (PoCL, CUDA) do not survive a fork after their first
 * use.
 *
 * Creates a context on the backend asked for.  With RG_BACKEND_AUTO the
 * environment steers: RAGGED_BACKEND=auto|opencl|openmp.  Every OpenCL
 * context (auto's or RG_BACKEND_OPENCL's) takes only a device whose device
 * or platform name contains RAGGED_DEVICE, if set.  auto takes an OpenCL GPU
 * or accelerator and falls back to OpenMP when there is none (no ICD loader,
 * no platform, CPU devices only).  RG_BACKEND_OPENCL takes any OpenCL device
 * (CPUs too) and fails with RG_ENODEVICE when there is none.  On failure
 * *out is untouched and rg_context_error(NULL) gives this thread's message,
 * kept until its next failed rg_context_create. */
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

/* Waits until all work queued on ctx has finished.  OpenCL primitives may
 * return before their kernels ran; rg_array_read waits by itself, so this
 * is for timing and for catching device errors at a known point.  A no-op
 * on OpenMP. */
RG_API rg_status rg_context_finish(rg_context *ctx);
/* Bytes copied between host and device memory by this context since it was
 * made or last reset: *bytes_up host to device, *bytes_down device to host
 * (either pointer may be NULL).  Only real copies count (uploads of changed
 * array ranges, downloads of stale ranges and of kernel results); OpenMP
 * contexts have one copy of everything and always report 0. */
RG_API rg_status rg_context_transfers(const rg_context *ctx, uint64_t *bytes_up,
                                      uint64_t *bytes_down);
RG_API void rg_context_reset_transfers(rg_context *ctx);

/* Memory a context keeps from call to call, for reuse:
 * - OpenCL: the temporary device buffers some ops need while they run
 *   (merge-path tile bounds, 8 bytes per 2048 elements and segments;
 *   per-chunk partials; nonzero's bitmask, one bit per element), one per
 *   role and as large as the largest call needed; and the device buffer of
 *   the largest array freed last (1 MiB to 1 GiB), which the next array of
 *   that size or up to a fifth smaller takes over.  Making these buffers
 *   afresh on every call costs GPUs about as much as some ops take.
 * - OpenMP: the memory of the two largest arrays freed last (32 MiB to
 *   1 GiB each, Linux; from 2 MiB for arrays that grew there or were
 *   trimmed, such as a list's), which the next large arrays whose
 *   contents are overwritten anyway (rg_nonzero's result,
 *   rg_array_from_host) take over, each the smallest that will do, and
 *   which a list growing to at least half its size grows into.
 * Apart from contexts, the library keeps the storage of the two segment
 * descriptors freed last where it is 64 KiB to 4 MiB (the next descriptors
 * of about that size reuse it without page faults); it is given back when
 * the library is unloaded and by rg_context_free_scratch of any context.
 * rg_context_scratch_bytes says how many bytes ctx keeps (0 for NULL);
 * rg_context_free_scratch frees them now (RG_EINVAL for NULL).  They are
 * also freed by rg_context_free, and on OpenCL whenever clCreateBuffer
 * reports that memory ran out, before the one retry that follows (drivers
 * that allocate at a buffer's first use, NVIDIA's among them, may report
 * it at a launch instead, with no retry: free the scratch, then call again). */
RG_API size_t rg_context_scratch_bytes(const rg_context *ctx);
RG_API rg_status rg_context_free_scratch(rg_context *ctx);

/* ------------------------------------------------------------------------
 * Arrays: typed 1-D arrays owned by a context.
 *
 * On OpenCL an array lives in device memory and may also have a host
 * mirror, made on its first rg_array_write.  Each side remembers the
 * smallest contiguous range it changed since the two last agreed, and data
 * moves only when needed, never more than that range:
 * - rg_array_write changes the mirror only; a kernel that uses the array
 *   uploads the changed range first (writing elements 10 and 20 uploads
 *   elements 10..20).  While the mirror is stale (a kernel wrote the array,
 *   or the array came from rg_array_from_host, which uploads at once and
 *   keeps no mirror), writes go straight to the device instead.
 * - A kernel that writes the array makes the mirror stale; rg_array_read
 *   then downloads only the stale part of the range asked for: what it
 *   read stays fresh, at the ends of the stale range and, inside it, the
 *   range read last (joined with the fresh range it touches), so reading
 *   that again moves nothing.  Reads of an array without a mirror come
 *   straight from the device.
 * rg_context_transfers counts the bytes moved.
 * ------------------------------------------------------------------------ */

typedef struct rg_array rg_array;

typedef enum rg_dtype {
    RG_BOOL = 1, /* one byte, 0 or 1 (other bytes are not checked: reductions
                    and copies carry them as they are) */
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
/* Frees the array (NULL is allowed); free every array before its context.
 * The context keeps the storage of large arrays freed for its next arrays
 * of about that size (see rg_context_scratch_bytes):
 * - OpenMP: the two largest arrays of 32 MiB to 1 GiB freed last, taken by
 *   the next large arrays that are written whole before use (results such
 *   as rg_nonzero's and rg_segment_nonzero's, or rg_array_from_host), so
 *   that they do not pay for the kernel zeroing fresh pages on first touch;
 *   from 2 MiB for arrays that grew there or were cut down to their rows
 *   (a list's arrays, a trimmed result), and a list's arrays growing to
 *   at least half the size of one take it whole;
 * - OpenCL: the device buffer (1 MiB to 1 GiB) of the largest array freed
 *   last, taken by the next array of that size or up to a fifth smaller,
 *   which then skips a device allocation.
 * rg_context_free_scratch and rg_context_free give them back. */
RG_API void rg_array_free(rg_array *array);

/* Copies src[0 .. count) into elements [start, start + count). */
RG_API rg_status rg_array_write(rg_array *array, size_t start, const void *src, size_t count);
/* Copies elements [start, start + count) into dst[0 .. count). */
RG_API rg_status rg_array_read(void *dst, const rg_array *array, size_t start, size_t count);

/* Sets every element to *value, one element of the array's dtype.  On
 * OpenCL GPUs this is a kernel of scalar.cl, so it may fail as kernels do
 * (RG_ENOKERNEL, RG_EBUILD, RG_EDEVICE), leaving the array as it was. */
RG_API rg_status rg_array_fill(rg_array *array, const void *value);
/* Copies all of src into dst: same context, dtype and length; dst may not
 * be src (RG_EINVAL). */
RG_API rg_status rg_array_copy(rg_array *dst, const rg_array *src);

RG_API size_t rg_array_length(const rg_array *array);
RG_API rg_dtype rg_array_dtype(const rg_array *array);
RG_API rg_context *rg_array_context(const rg_array *array);

/* Element-wise arithmetic with a scalar. */
typedef enum rg_arith {
    RG_ARITH_ADD = 1,
    RG_ARITH_SUB,
    RG_ARITH_MUL,
    RG_ARITH_DIV
} rg_arith;

/* array[i] = array[i] op *value for every element, on the context's backend;
 * value points to one element of the array's dtype.  Integers wrap modulo
 * 2^bits (INT_MIN / -1 gives INT_MIN) and divide truncating toward zero;
 * integer division by zero is RG_EINVAL before any element changes.  Floats
 * follow IEEE 754 (x / 0 is an infinity or NaN), correctly rounded on both
 * backends.  bool arrays are RG_EDTYPE. */
RG_API rg_status rg_array_scalar(rg_array *array, rg_arith op, const void *value);

/* ------------------------------------------------------------------------
 * Offsets, lengths, parents and local index
 *
 * Offsets are RG_INT32 or RG_INT64 arrays of nsegs + 1 elements; outputs are
 * RG_INT32 or RG_INT64 arrays of the stated length, allocated by the caller
 * in the same context.  Every call checks the offsets first, unless they
 * already passed a check and nothing has written them since: an array
 * remembers that it holds valid offsets (and its last one) until a call
 * writes it, so repeated calls on the same offsets skip the full read (and,
 * on OpenCL, the wait for the device) that a check costs.  Offsets the
 * library makes (rg_offsets_from_lengths, rg_offsets_compose,
 * rg_nested_offsets, a list's offsets) start out known.  An RG_INT32
 * output is checked against the largest value it could have to hold, not
 * the values themselves: parents need nsegs - 1 <= INT32_MAX; lengths, local
 * index and starts need the content length <= INT32_MAX (else RG_EOVERFLOW).
 * ------------------------------------------------------------------------ */

/* RG_OK when offsets[0] == 0, offsets never decrease and offsets[nsegs] ==
 * content_length; otherwise RG_EOFFSETS and a message naming the first bad
 * index and its value.  An empty offsets array (not even offsets[0]) is
 * RG_ESIZE, here and in every call that takes offsets. */
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
    RG_STRATEGY_PER_SEGMENT,/* one work-item (or loop iteration) per segment; on a
                               GPU, work-groups of blocks of 256 segments, staged
                               in local memory where they fit */
    RG_STRATEGY_FLOOD,      /* scatter segment ids at their starts, then max-scan */
    RG_STRATEGY_MERGE_PATH  /* load-balanced search: equal shares of elements + segments */
} rg_strategy;

RG_API const char *rg_strategy_name(rg_strategy strategy);

/* The strategy RG_STRATEGY_AUTO takes for this context and size, and (if
 * why is not NULL) a static sentence saying why: merge path on OpenMP;
 * per-segment on OpenCL CPU devices (measured fastest there); merge path on
 * GPUs and accelerators, binary search there for a single segment.  On a
 * GPU or accelerator, RG_STRATEGY_AUTO itself also knows the longest
 * segment where the offsets passed their check on the device (or were made
 * there by rg_offsets_from_lengths), and takes per-segment when no segment
 * is longer than 1 element.  On OpenMP, merge
 * path on offsets whose segments all have one short length (up to 64
 * elements for int64 output, 32 for int32), as found by their check or
 * rg_offsets_from_lengths, writes the output without reading the
 * offsets. */
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
 * Segment descriptors (as Data Parallel Haskell's USegd)
 *
 * An rg_segd holds the lengths, the starts (offsets) and the element count
 * of a ragged array in host memory: small metadata for scheduling work
 * across P workers.  The context given at creation receives error messages.
 * ------------------------------------------------------------------------ */

typedef struct rg_segd rg_segd;

/* From nsegs non-negative lengths (RG_EINVAL for a negative one,
 * RG_EOVERFLOW if the total passes INT64_MAX). */
RG_API rg_status rg_segd_from_lengths(rg_segd **out, rg_context *ctx, const int64_t *lengths,
                                      size_t nsegs);
/* From noffsets >= 1 valid offsets (0 first, never decreasing). */
RG_API rg_status rg_segd_from_offsets(rg_segd **out, rg_context *ctx, const int64_t *offsets,
                                      size_t noffsets);
/* From an int32/int64 offsets array of a context (read to the host). */
RG_API rg_status rg_segd_from_array(rg_segd **out, const rg_array *offsets);
/* Frees the descriptor (NULL is allowed), before or after its context;
 * see rg_context_scratch_bytes for the storage kept for the next ones. */
RG_API void rg_segd_free(rg_segd *segd);

RG_API size_t rg_segd_nsegs(const rg_segd *segd);            /* O(1) */
RG_API int64_t rg_segd_nelems(const rg_segd *segd);          /* O(1) */
RG_API const int64_t *rg_segd_lengths(const rg_segd *segd);  /* nsegs values */
RG_API const int64_t *rg_segd_offsets(const rg_segd *segd);  /* nsegs + 1 values */

/* A descriptor split across P workers.  It borrows the rg_segd it was split
 * from: free the split first. */
typedef struct rg_dsegd rg_dsegd;

/* One worker's share: pieces npieces segments, the first of which is segment
 * first_seg of the original, starting first_offset elements into it; the
 * share covers elements [first_elem, first_elem + nelems) of the content. */
typedef struct rg_segd_part {
    size_t first_seg;
    int64_t first_offset;
    size_t npieces;
    int64_t first_elem;
    int64_t nelems;
} rg_segd_part;

/* Whole segments per worker, balanced by element count (splitSegdOnSegsD):
 * each worker in turn takes segments until it holds its share (n/P, the
 * first n%P workers one more) or more, plus the empty segments that follow;
 * the last takes the rest, and a worker may get none.  Lengths
 * [100,10,20,40,50] on 4 workers: [[100],[10,20,40],[50],[]]. */
RG_API rg_status rg_segd_split_segs(rg_dsegd **out, const rg_segd *segd, size_t nworkers);
/* Element-wise (splitSegdOnElemsD): worker w gets n/P elements (the first
 * n%P one more), segments are cut at worker boundaries, and empty segments
 * at a boundary stay with the earlier worker.  A worker with no elements may
 * hold one empty piece of the segment it falls in.  Lengths
 * [60,10,20,40,50] on 4 workers: [[45],[15,10,20],[40,5],[45]], first
 * segments [0,0,3,4], offsets [0,45,0,5]. */
RG_API rg_status rg_segd_split_elems(rg_dsegd **out, const rg_segd *segd, size_t nworkers);
RG_API void rg_dsegd_free(rg_dsegd *dsegd);

RG_API size_t rg_dsegd_nworkers(const rg_dsegd *dsegd);
/* Worker `worker`'s share (RG_ERANGE past the last worker). */
RG_API rg_status rg_dsegd_part(rg_segd_part *part, const rg_dsegd *dsegd, size_t worker);
/* The lengths of that worker's pieces: part.npieces values into lengths. */
RG_API rg_status rg_dsegd_lengths(int64_t *lengths, const rg_dsegd *dsegd, size_t worker);
/* join: every worker's pieces, concatenated, as one descriptor (cut
 * segments stay cut).  glue: the original descriptor, rebuilt from the
 * pieces, so that glue(split(d)) == d. */
RG_API rg_status rg_dsegd_join(rg_segd **out, const rg_dsegd *dsegd);
RG_API rg_status rg_dsegd_glue(rg_segd **out, const rg_dsegd *dsegd);

/* ------------------------------------------------------------------------
 * Nested (multi-level) ragged arrays
 *
 * A stack of offsets levels over one content array.  levels[d] splits the
 * items of depth d into items of depth d + 1; depth 0 is the outermost list
 * and depth nlevels is the content.  For [[[1,2,3],[4,5]],[[6,7,8,9],[10],
 * [11,12],[13,14,15]]]: levels[0] = [0,2,6], levels[1] = [0,3,5,9,10,12,15].
 * Every call checks that each level is valid offsets and that levels[d]
 * ends at the item count of depth d + 1 (levels[d+1] has that many + 1).
 * ------------------------------------------------------------------------ */

RG_API rg_status rg_nested_validate(const rg_array *const *levels, size_t nlevels,
                                    size_t content_length);

/* Flattens a level away: out[i] = inner[outer[i]], the offsets of outer's
 * items straight into inner's items.  outer must end at inner's segment
 * count; out has outer's length. */
RG_API rg_status rg_offsets_compose(rg_array *out, const rg_array *outer, const rg_array *inner);

/* The offsets of the items of depth `outer` into the items of depth `inner`
 * (outer < inner <= nlevels): levels[outer] composed with the levels below
 * it.  out has levels[outer]'s length. */
RG_API rg_status rg_nested_offsets(rg_array *out, const rg_array *const *levels, size_t nlevels,
                                   size_t outer, size_t inner);
/* For every item of depth `inner`, the id of the depth-`outer` item holding
 * it (parents) or its position among that item's depth-`inner` items (local
 * index).  E.g. outer 0, inner nlevels: the outer-list id of every content
 * element.  out has one element per depth-`inner` item. */
RG_API rg_status rg_nested_parents(rg_array *out, const rg_array *const *levels, size_t nlevels,
                                   size_t outer, size_t inner, rg_strategy strategy,
                                   rg_strategy *used);
RG_API rg_status rg_nested_local_index(rg_array *out, const rg_array *const *levels,
                                       size_t nlevels, size_t outer, size_t inner,
                                       rg_strategy strategy, rg_strategy *used);

/* ------------------------------------------------------------------------
 * Non-zero elements (numpy's nonzero, TensorFlow's Where)
 *
 * An element is non-zero when it is unequal to zero in its own dtype: for
 * integers and bool any value but 0; for floats x != 0 in IEEE terms, so
 * NaN, infinities and subnormals are non-zero (subnormals too on devices
 * that flush them) while +0.0 and -0.0 are zero.
 * ------------------------------------------------------------------------ */

/* The most dimensions rg_nonzero takes (numpy's classic NPY_MAXDIMS). */
#define RG_NONZERO_MAX_DIMS 32

/* *nnz = the number of non-zero elements of a (any dtype). */
RG_API rg_status rg_count_nonzero(int64_t *nnz, const rg_array *a);

/* The coordinates of a's non-zero elements when a is read as a row-major
 * array of shape[0 .. ndim): *coords receives a new RG_INT64 array of
 * nnz * ndim elements, row r holding the ndim coordinates of the r-th
 * non-zero element in a's order (for ndim == 1, the flat indices).  *nnz
 * receives the count; nnz may be NULL.
 *
 * 1 <= ndim <= RG_NONZERO_MAX_DIMS (RG_EINVAL otherwise), no dimension may
 * be negative (RG_EINVAL), the product of the non-zero dimensions must fit
 * int64 (RG_EOVERFLOW) and the product of all must equal a's length
 * (RG_ESIZE).  Size-0 dimensions are allowed: a then is empty, *nnz is 0
 * and *coords has length 0.
 *
 * nnz_bound < 0 means "unknown".  nnz_bound >= 0 promises nnz <= nnz_bound:
 * the OpenCL backend then allocates min(nnz_bound, length) rows and launches
 * the count and the write back to back, with one read of the count at the
 * end instead of a read between them.  The result still has exactly nnz
 * rows (when it is under half the bound, the rows are copied into a fitting
 * buffer on the device; otherwise the array keeps the bound's allocation).
 * A bound below nnz is RG_ERANGE (the message gives the real count) and
 * leaves the outputs untouched.
 *
 * The OpenCL backend reads a once: its count pass also writes a bitmask
 * of a (one bit per element: a temporary device buffer of an eighth of
 * a's length in bytes, kept for the next call; see rg_context_free_scratch),
 * which the write pass reads instead of a.
 *
 * The OpenMP backend reads a once where it can.  With several threads,
 * rg_nonzero_into with room for a row per element of a, and rg_nonzero of
 * 1-D input of 8-byte elements (with no bound) make one pass over a:
 * blocks of 65536 elements are counted and written in turn, and the result
 * of rg_nonzero is trimmed to the rows after.  rg_nonzero does so where
 * the first 65536 elements are at most 1/8 non-zero, or where the context
 * keeps the storage of a large array freed last (32 MiB or more, such as
 * the previous result in a loop) holding nearly the rows they predict;
 * rows past that storage are written after the pass.  Otherwise a is
 * counted first; while counting, it keeps
 * the indices it finds in temporary host memory of up to an eighth of a's
 * bytes (float64 input up to 12.5% non-zero), and reads again only what
 * did not fit. */
RG_API rg_status rg_nonzero(rg_array **coords, int64_t *nnz, const rg_array *a,
                            const int64_t *shape, size_t ndim, int64_t nnz_bound);

/* rg_nonzero into an existing array: the rows are written to the start of
 * coords (RG_INT64 and of a's context, else RG_EDTYPE / RG_EINVAL) and *nnz
 * (not NULL) receives their number; the rest of coords keeps its values.
 * Calls that reuse coords skip allocating a result and touching its fresh
 * pages for the first time, which for a large result costs about as much as
 * writing it.  More rows than coords holds is RG_ERANGE (the message gives
 * the real count) with coords and *nnz untouched.  On OpenCL, room for a
 * row per element of a (length * ndim) lets the count and the write run
 * back to back with one wait at the end.  shape and ndim as in rg_nonzero. */
RG_API rg_status rg_nonzero_into(rg_array *coords, int64_t *nnz, const rg_array *a,
                                 const int64_t *shape, size_t ndim);

/* Per segment, like awkward's argwhere on every list: for content split by
 * offsets (RG_INT32 or RG_INT64, nsegs + 1 elements, the last equal to the
 * content length), *positions_out receives a new RG_INT64 array holding,
 * segment by segment, the positions of the non-zero elements within their
 * segment (k - offsets[i]), and *offsets_out a new RG_INT64 array of
 * nsegs + 1 offsets that splits positions_out into the segments. */
RG_API rg_status rg_segment_nonzero(rg_array **offsets_out, rg_array **positions_out,
                                    const rg_array *content, const rg_array *offsets);

/* ------------------------------------------------------------------------
 * Lists: a growable list of variable-length items of one dtype
 *
 * Kept as a content array plus int64 offsets (nitems + 1 of them), so every
 * primitive applies to rg_list_content and rg_list_offsets directly.  Both
 * have spare capacity, so appends cost amortised O(1).  On OpenCL the list
 * edits the arrays' host mirrors and a later kernel uploads only the range
 * that changed (appending uploads the new item; an insert, the tail after it).
 *
 * Item indices are ptrdiff_t: a negative index counts from the end (-1 is
 * the last item).  An index out of range is RG_ERANGE; every failing call
 * leaves the list as it was.  Item data passed in or out is `length`
 * elements of the list's dtype.
 * ------------------------------------------------------------------------ */

typedef struct rg_list rg_list;

/* An empty list with room for `reserve` elements before it must grow. */
RG_API rg_status rg_list_create(rg_list **out, rg_context *ctx, rg_dtype dtype, size_t reserve);
/* Items of item_size elements each from data[0 .. length); RG_ESIZE when
 * item_size does not divide length (item_size 0: only length 0, no items). */
RG_API rg_status rg_list_from_item_size(rg_list **out, rg_context *ctx, rg_dtype dtype,
                                        const void *data, size_t length, size_t item_size);
/* nitems items of sizes[i] elements from data[0 .. length); RG_ESIZE when
 * the sizes do not sum to length. */
RG_API rg_status rg_list_from_sizes(rg_list **out, rg_context *ctx, rg_dtype dtype,
                                    const void *data, size_t length, const size_t *sizes,
                                    size_t nitems);
RG_API void rg_list_free(rg_list *list);

RG_API size_t rg_list_nitems(const rg_list *list);
RG_API size_t rg_list_nelems(const rg_list *list);
RG_API rg_dtype rg_list_dtype(const rg_list *list);
RG_API rg_context *rg_list_context(const rg_list *list);
/* *length = the number of elements of item `index`. */
RG_API rg_status rg_list_item_length(size_t *length, const rg_list *list, ptrdiff_t index);

/* The content (nelems elements) and offsets (int64, nitems + 1) as arrays of
 * the list's context, owned by the list: valid until it is freed, with the
 * lengths of the moment (they follow every change).  Kernels may write the
 * content in place; the offsets are read-only to keep the list valid. */
RG_API rg_array *rg_list_content(rg_list *list);
RG_API const rg_array *rg_list_offsets(const rg_list *list);

/* Copies item `index` into dst, which has room for `capacity` elements
 * (RG_ESIZE if the item is longer); *length (if not NULL) = its length. */
RG_API rg_status rg_list_get(void *dst, size_t capacity, size_t *length, const rg_list *list,
                             ptrdiff_t index);
/* Item `index` as a view of the content: elements [*start, *start + *length). */
RG_API rg_status rg_list_item_view(size_t *start, size_t *length, const rg_list *list,
                                   ptrdiff_t index);
/* A new list holding copies of items [begin, end) (Python slice bounds:
 * negative counts from the end, then clamped to [0, nitems]; end <= begin
 * gives an empty list). */
RG_API rg_status rg_list_slice(rg_list **out, const rg_list *list, ptrdiff_t begin,
                               ptrdiff_t end);

/* Item `index` becomes data[0 .. length), of any length. */
RG_API rg_status rg_list_set(rg_list *list, ptrdiff_t index, const void *data, size_t length);
/* Removes item `index`. */
RG_API rg_status rg_list_delete(rg_list *list, ptrdiff_t index);
/* Removes items [begin, end), bounds as rg_list_slice (never RG_ERANGE). */
RG_API rg_status rg_list_delete_slice(rg_list *list, ptrdiff_t begin, ptrdiff_t end);
/* Inserts data[0 .. length) as a new item before item `index`; index may
 * also be nitems (append).  A negative index counts from the end as in
 * Python's list.insert (-1: before the last item, -nitems: at the front),
 * but out of range is RG_ERANGE, not clamped. */
RG_API rg_status rg_list_insert(rg_list *list, ptrdiff_t index, const void *data, size_t length);
RG_API rg_status rg_list_append(rg_list *list, const void *data, size_t length);
/* Appends every item of other (same dtype; may be list itself, or a list of
 * another context or backend, whose items are copied through host memory). */
RG_API rg_status rg_list_extend(rg_list *list, const rg_list *other);
/* Appends nitems items of sizes[i] elements from data[0 .. length), which
 * the sizes must sum to (RG_ESIZE otherwise). */
RG_API rg_status rg_list_extend_sizes(rg_list *list, const void *data, size_t length,
                                      const size_t *sizes, size_t nitems);

/* Every element of every item = element op value, as rg_array_scalar on the
 * content.  value is converted to the list's dtype first: for an integer
 * dtype it must be a whole number in the dtype's range (2.5, or 300 for
 * int8, is RG_EINVAL: no silent truncation); for float32 it is rounded to
 * nearest, and a finite value beyond float32's range is RG_EINVAL.  For
 * integer values beyond 2^53 use rg_array_scalar(rg_list_content(list), ...). */
RG_API rg_status rg_list_scalar(rg_list *list, rg_arith op, double value);

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
 *               result NaN (as numpy's min/max).  Of +0.0 and -0.0, which
 *               are equal, the first in the segment: the element that
 *               ARGMIN (ARGMAX) names, on every backend and policy.
 *   ARGMIN,     int64 position of the first minimum (maximum) within the
 *   ARGMAX      segment (0 = its first element); the first NaN if there is
 *               one (as numpy); -1 for an empty segment.
 *   COUNT       int64 segment length (content is not read).
 *   COUNT_NONZERO  int64 number of elements != 0 (NaN counts as nonzero).
 *   ANY, ALL    bool: some / every element != 0.  Empty: false / true.
 *
 * Summation order (floats are not associative): within a backend and device
 * the result is deterministic -- values are never combined by atomics, and
 * the combining tree has the same shape on every run.  Float32 sums and
 * products accumulate in float64 on OpenMP and in float32 on OpenCL.  The
 * order matters most for long float products: partial products may
 * overflow to inf or underflow to 0 (devices may flush subnormals to
 * zero) where another order would not, and inf times 0 gives NaN.
 * OpenMP: each thread folds its part of a segment left to right, except
 * that a float part of 64 or more elements is folded as 8 interleaved lanes
 * (lane j takes elements j, j + 8, ... of the whole groups of 8; the lanes
 * are combined as j with j + 4, then j + 2, then j + 1), then its last
 * (length % 8) elements left to right; a segment cut by thread boundaries
 * gets its parts combined in thread order.  The lanes keep 8 additions in
 * flight instead of one chain at the add's latency, and round off less.
 * OpenCL merge path: each work-item adds up to 8 consecutive elements left
 * to right, the partials of one segment within a work-group are added by a
 * tree (Hillis-Steele segmented scan), then tile by tile and chunk by chunk
 * in order; in a run of tiles (2048 steps) that lie wholly inside one
 * segment, work-item l instead adds elements l, l + 256, ... of each, and
 * the work-items' shares go through the same tree once, after the run.
 * OpenCL per-segment: on CPU devices (PoCL) as an OpenMP thread's part (8
 * lanes from 64 elements, in the accumulator's type); on other devices (and
 * with RAGGED_OPENCL_CPU_KERNELS=0) segments of fewer than 64 elements left
 * to right, longer ones as 32 interleaved lanes (lane j takes elements
 * j, j + 32, ... of the whole segment, each lane from +0.0, or 1.0 for products)
 * combined as j with j + 16, then j + 8, ..., j + 1; from 8192 elements the
 * segment is cut at the multiples of 8192 (positions in content): lane j
 * takes elements j, j + 32, ... before the first cut, then the results of
 * pieces j, j + 32, ... from it on, each piece reduced as 32 lanes the same
 * way.  These OpenCL orders are those of work-groups of 256 work-items; a
 * device whose limit is smaller (or RAGGED_OPENCL_MAX_GROUP_SIZE) changes
 * them, and below 32 sums no longer use the 32-lane teams.
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
                                   * segment runs on a single work-item, except on OpenCL
                                   * devices other than CPUs: 32 work-items from 64 elements
                                   * (sums and products), and from 8192 (every op) pieces of
                                   * 8192 over many work-groups, with a temporary device
                                   * buffer of up to 16 bytes per 8192 elements of content */
    RG_REDUCE_POLICY_MERGE_PATH   /* element split: every work-group (OpenMP: thread) takes an
                                   * equal share of elements + segments, so short segments
                                   * are many per work-group and a long one is split across
                                   * work-groups; partials of cut segments are combined by a
                                   * second, deterministic pass.  No length distribution
                                   * unbalances it */
} rg_reduce_policy;

RG_API const char *rg_reduce_policy_name(rg_reduce_policy policy);

/* The policy RG_REDUCE_POLICY_AUTO takes for this context and size, and (if
 * why is not NULL) a static sentence saying why: merge path on OpenMP and
 * on GPUs and accelerators, except there when there is no content (nelems
 * == 0), where one work-item per segment just writes the identities;
 * per-segment on OpenCL CPU devices (PoCL), where it measured fastest on
 * every length distribution, one huge segment included.  Elsewhere
 * per-segment is not chosen for content: without reading every length (a
 * pass as costly as the reduction when segments are short) one huge segment
 * cannot be ruled out, and it would run on one work-item.  On a GPU or
 * accelerator, RG_REDUCE_POLICY_AUTO itself also knows the longest segment
 * where the offsets passed their check on the device (or were made there by
 * rg_offsets_from_lengths: that check reads every offset anyway), and takes
 * per-segment when no segment is longer than 256 elements. */
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

/* Reduces the innermost level of a nested ragged array (see "Nested"): out
 * gets one value per innermost list, levels[nlevels - 1] being the offsets
 * that split content into those lists, so that out together with
 * levels[0 .. nlevels - 2] is the reduced array, one level shallower (a 3-D
 * ragged array gives a 2-D one).  The levels are checked as in
 * rg_nested_validate against content's length. */
RG_API rg_status rg_nested_reduce(rg_array *out, const rg_array *const *levels, size_t nlevels,
                                  const rg_array *content, rg_reduce_op op,
                                  rg_reduce_policy policy, rg_reduce_policy *used);

#ifdef __cplusplus
}
#endif

#endif /* RAGGED_H */
