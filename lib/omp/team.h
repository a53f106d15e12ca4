/* team.h — what the OpenMP backend's files share: thread teams, even parts, the merge-path search. */
#ifndef RAGGED_OMP_TEAM_H
#define RAGGED_OMP_TEAM_H

#include <stddef.h>
#include <stdint.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "../internal.h"

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

#endif /* RAGGED_OMP_TEAM_H */
