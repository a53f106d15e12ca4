/* omp.h — what the files of the OpenMP backend share: the pragma macro, team sizes, parts, the merge-path search, the entries of nonzero.c and reduce.c. */
#ifndef RAGGED_OMP_H
#define RAGGED_OMP_H

#include <stdlib.h>

#include "../internal.h"

#ifdef _OPENMP
/* The compiler's omp.h: angle brackets skip this folder (not on the -I path). */
#include <omp.h>
#endif

/* ------------------------------------------------------------------------
 * Threads.  Without OpenMP the pragmas vanish and every team has one thread,
 * so the same code runs as serial loops.
 * ------------------------------------------------------------------------ */

#define RG_PRAGMA(x) _Pragma(#x)
#ifdef _OPENMP
#define RG_OMP(directive) RG_PRAGMA(omp directive)
#else
#define RG_OMP(directive)
#endif

/* Below this much work (elements + segments) a team costs more than it saves.
 * Building with -DRG_OMP_MIN_PARALLEL=1 runs even tiny inputs in parallel. */
#ifndef RG_OMP_MIN_PARALLEL
#define RG_OMP_MIN_PARALLEL ((size_t)1 << 15)
#endif

/* Segments handed out at a time by the per-segment strategy's dynamic schedule. */
#define RG_OMP_SEGMENT_CHUNK 256

/* How many threads to ask for, given the amount of work. */
static inline int team_size(size_t work)
{
#ifdef _OPENMP
    if (work >= RG_OMP_MIN_PARALLEL)
        return omp_get_max_threads();
#endif
    (void)work;
    return 1;
}

static inline int thread_id(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

static inline int team_threads(void)
{
#ifdef _OPENMP
    return omp_get_num_threads();
#else
    return 1;
#endif
}

/* Start of part t when n items are cut into parts nearly equal parts (the
 * first n % parts get one more); part t is [begin(t), begin(t + 1)). */
static inline size_t part_begin(size_t n, int t, int parts)
{
    size_t q = n / (size_t)parts, r = n % (size_t)parts, ut = (size_t)t;
    return ut * q + (ut < r ? ut : r);
}

/* Room for one int64 per thread and one more, for the two-pass scans. */
static inline int64_t *team_scratch(rg_context *ctx, int team)
{
    int64_t *s = malloc(((size_t)team + 1) * sizeof *s);
    if (!s)
        rg_set_error(ctx, RG_ENOMEM, "OpenMP backend: out of host memory for %d scan partials",
                     team);
    return s;
}

/* Merge path of the segment ends o[1..nsegs] with the elements 0..nelems-1:
 * segment end j comes before element k when o[j+1] <= k.  Returns how many
 * segment ends lie among the first diag steps; the rest are elements. */
#define RG_DEFINE_PATH_SEARCH(N, T)                                                        \
    static inline int64_t path_search_##N(const T *o, int64_t nsegs, int64_t nelems,      \
                                          int64_t diag)                                    \
    {                                                                                      \
        int64_t lo = diag > nelems ? diag - nelems : 0;                                    \
        int64_t hi = diag < nsegs ? diag : nsegs;                                          \
        while (lo < hi) {                                                                  \
            int64_t mid = lo + (hi - lo) / 2;                                              \
            if ((int64_t)o[mid + 1] <= diag - 1 - mid)                                     \
                lo = mid + 1;                                                              \
            else                                                                           \
                hi = mid;                                                                  \
        }                                                                                  \
        return lo;                                                                         \
    }

RG_DEFINE_PATH_SEARCH(i32, int32_t)
RG_DEFINE_PATH_SEARCH(i64, int64_t)

/* The segment_reduce entry of the backend table (reduce.c). */
RG_HIDDEN rg_status rg_omp_segment_reduce(rg_array *out, const rg_array *content,
                                          const rg_array *offsets, rg_reduce_op op,
                                          rg_reduce_policy policy);

/* nonzero.c: the rg_ops entries for non-zero elements (see internal.h). */
RG_HIDDEN rg_status rg_omp_nonzero_count(const rg_array *a, uint64_t mask, int64_t *nnz);
RG_HIDDEN rg_status rg_omp_nonzero(rg_array **coords, int64_t *nnz, const rg_array *a,
                                   uint64_t mask, const int64_t *shape, size_t ndim,
                                   int64_t bound);
RG_HIDDEN rg_status rg_omp_nonzero_into(rg_array *coords, int64_t *nnz, const rg_array *a,
                                        uint64_t mask, const int64_t *shape, size_t ndim);
RG_HIDDEN rg_status rg_omp_segment_nonzero(rg_array *seg_offsets, rg_array *positions,
                                           const rg_array *offsets);

#endif /* RAGGED_OMP_H */
