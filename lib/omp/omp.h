/* omp.h — what the files of the OpenMP backend share: the pragma macro, team sizes, parts, the merge-path search, the entries of nonzero.c and reduce.c. */
#ifndef RAGGED_OMP_H
#define RAGGED_OMP_H

#include <stdlib.h>
#include <string.h>

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

/* Unrolls a loop of constant trip count where the compiler takes the hint
 * (gcc 8 and later, clang): loops that run per segment or per element over
 * a few lanes. */
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 8)
#define RG_UNROLL RG_PRAGMA(GCC unroll 16)
#else
#define RG_UNROLL
#endif
#if defined(__GNUC__)
#define RG_ALWAYS_INLINE __attribute__((always_inline))
#else
#define RG_ALWAYS_INLINE
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

/* Streaming (non-temporal) stores for large outputs.  A plain store to a
 * line not in cache first reads the line (read for ownership); a streaming
 * store does not, and an output this large cannot stay in cache anyway.
 * On a 2-core Intel Xeon a plain fill of 800 MB took 49 ms and a streamed
 * one 17.5 ms (BENCHMARKS.md).  Not everywhere: on a 2-core Cascade Lake
 * VM plain stores filled 800 MB in 0.71x the time of streamed ones (but
 * made the short segments' floods slower), so RAGGED_OMP_STREAM=0 turns
 * them off (read at each op).  No probe picks at run time: timing 72 MiB
 * both ways there took 0.07 to 0.22 s and disagreed with the 800 MB fills
 * in 1 of 8 processes.  Baseline x86-64 has them (SSE2); elsewhere the
 * helpers fall back to plain stores.  Streamed stores are weakly ordered:
 * a thread calls stream_fence() before others may read them. */
#define RG_OMP_STREAM_MIN ((size_t)32 << 20)

#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#define RG_OMP_HAVE_STREAM 1
#else
#define RG_OMP_HAVE_STREAM 0
#endif

/* Whether an output of nbytes is worth streaming (the size first: getenv
 * only for outputs that large). */
static inline bool stream_output(size_t nbytes)
{
    return RG_OMP_HAVE_STREAM && nbytes >= RG_OMP_STREAM_MIN && !rg_env_off("RAGGED_OMP_STREAM");
}

/* A prefetch of the line at a that the compiler keeps: gcc 12 dropped every
 * _mm_prefetch of the reductions' AVX-512 tiles once they sat under a
 * branch, or once a tile was inlined into a loop, and the tiles then ran 3x
 * to 4x slower (AMD EPYC Zen 5).  The address is an integer: it may lie
 * past the arrays, where a prefetch does nothing. */
static inline void prefetch_line(uintptr_t a)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __asm__ volatile("prefetcht0 (%0)" : : "r"(a));
#elif defined(__GNUC__)
    __builtin_prefetch((const void *)a);
#else
    (void)a;
#endif
}

/* A fact about the CPU, found by find at the first call and kept in
 * *known (0: not yet, 1: no, 2: yes; threads may race to the same value). */
#if defined(__x86_64__) && defined(__GNUC__)
static inline bool cpu_fact(int *known, bool (*find)(void))
{
    int v = __atomic_load_n(known, __ATOMIC_RELAXED);
    if (v == 0) {
        __builtin_cpu_init();
        v = find() ? 2 : 1;
        __atomic_store_n(known, v, __ATOMIC_RELAXED);
    }
    return v == 2;
}
static inline bool find_avx512(void)
{
    return __builtin_cpu_supports("avx512f") && !rg_env_off("RAGGED_AVX512");
}
/* AVX-512's byte and word instructions, and popcnt, beside AVX-512F. */
static inline bool find_avx512bw(void)
{
    return find_avx512() && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("popcnt");
}
/* AVX-512 VBMI's byte permutes beside those (Ice Lake and Zen 4 on, not
 * Skylake-X or Cascade Lake), and not where RAGGED_AVX512_VBMI is 0. */
static inline bool find_avx512vbmi(void)
{
    return find_avx512bw() && __builtin_cpu_supports("avx512vbmi") &&
           !rg_env_off("RAGGED_AVX512_VBMI");
}
static inline bool find_intel(void) { return __builtin_cpu_is("intel"); }
#endif

/* prefetch_line, into the L2 cache only (prefetcht1) where l2 is set. */
static inline void prefetch_line_to(uintptr_t a, bool l2)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (l2)
        __asm__ volatile("prefetcht1 (%0)" : : "r"(a));
    else
        __asm__ volatile("prefetcht0 (%0)" : : "r"(a));
#else
    (void)l2;
    prefetch_line(a);
#endif
}

/* Whether a stream read beside streamed stores (the offsets of parents and
 * local index) is better prefetched into L2 only: on Intel CPUs.  On a
 * 2-core Intel Xeon (480 MiB of L3) short, power-law and half-empty parents
 * and local index took 0.94x to 0.98x the time with it (paired, both
 * orders; all-length-1 ones 1.00x).  AMD's Zen 4 is reported to drop some
 * prefetcht1, and the prefetch was tuned on Zen 5 with prefetcht0, so
 * other CPUs keep that.  Found at the first call and kept. */
static inline bool prefetch_l2(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    static int known;
    return cpu_fact(&known, find_intel);
#else
    return false;
#endif
}

static inline void stream_fence(void)
{
#if RG_OMP_HAVE_STREAM
    _mm_sfence();
#endif
}

/* A pause in a loop that waits on another thread's store (SSE2's pause):
 * it spares the sibling hyperthread and the memory order machinery. */
static inline void spin_pause(void)
{
#if RG_OMP_HAVE_STREAM
    _mm_pause();
#endif
}

/* dst[0 .. nbytes) = src[0 .. nbytes) with streaming stores, where dst and
 * nbytes are multiples of 4 (a plain memcpy without them).  The 4-byte
 * stores before and after the 16-byte aligned middle are streamed too. */
static inline void stream_copy(void *dst, const void *src, size_t nbytes)
{
#if RG_OMP_HAVE_STREAM
    char *d = dst;
    const char *s = src;
    for (; nbytes >= 4 && ((uintptr_t)d & 15); nbytes -= 4, d += 4, s += 4) {
        int v;
        memcpy(&v, s, 4);
        _mm_stream_si32((int *)(void *)d, v);
    }
    for (; nbytes >= 16; nbytes -= 16, d += 16, s += 16)
        _mm_stream_si128((__m128i *)(void *)d, _mm_loadu_si128((const __m128i *)(const void *)s));
    for (; nbytes >= 4; nbytes -= 4, d += 4, s += 4) {
        int v;
        memcpy(&v, s, 4);
        _mm_stream_si32((int *)(void *)d, v);
    }
#else
    memcpy(dst, src, nbytes);
#endif
}

/* Hot loops that vectorise much better with wider registers are built for
 * baseline x86-64 and for AVX2 and AVX-512 too, and the dynamic loader picks
 * the best the CPU has (GCC and clang's target_clones, an ifunc).  Elsewhere
 * they are built once, and so under ThreadSanitizer, whose instrumented
 * ifunc resolvers crash the loader (they run before TSan is set up). */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RG_NO_CLONES 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define RG_NO_CLONES 1
#endif
#if defined(__x86_64__) && defined(__ELF__) && defined(__has_attribute) && !defined(RG_NO_CLONES)
#if __has_attribute(target_clones)
#define RG_OMP_CLONES __attribute__((target_clones("default", "avx2", "avx512f")))
#endif
#endif
#ifndef RG_OMP_CLONES
#define RG_OMP_CLONES
#endif

/* Whether the CPU runs AVX-512 code: the paths built for it with
 * __attribute__((target("avx512f"))) are taken only then, and not where
 * RAGGED_AVX512 is 0 (the same results another way: for tests and
 * comparisons on CPUs with AVX-512).  Found at the first call and kept
 * (some callers ask once per segment). */
static inline bool have_avx512(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    static int known;
    return cpu_fact(&known, find_avx512);
#else
    return false;
#endif
}

/* Whether the CPU also runs the paths built with
 * __attribute__((target("avx512f,avx512bw,popcnt"))) (every AVX-512 CPU but
 * the Xeon Phi has them): the reductions of 1-byte values. */
static inline bool have_avx512bw(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    static int known;
    return cpu_fact(&known, find_avx512bw);
#else
    return false;
#endif
}

/* Whether the CPU also runs the paths built with
 * __attribute__((target("avx512f,avx512bw,avx512vbmi,popcnt"))):
 * reductions of 1-byte values in tiles of segments of up to 16 elements. */
static inline bool have_avx512vbmi(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    static int known;
    return cpu_fact(&known, find_avx512vbmi);
#else
    return false;
#endif
}

/* The length of every segment of offsets over nelems elements, where the
 * offsets check found them all equal (its longest times the segment count
 * is nelems), else -1: such offsets need not be read (regular_fill,
 * regular_F of reduce.c). */
static inline int64_t regular_length(const rg_array *offsets, int64_t nelems)
{
    int64_t len = offsets->offsets_ok ? offsets->offsets_longest : -1;
    /* by division: longest times a count of mostly empty segments may overflow */
    return len >= 1 && nelems % len == 0 && nelems / len == (int64_t)offsets->length - 1 ? len
                                                                                     : -1;
}

/* Room for one int64 per thread and one more: the flood's scan partials. */
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

/* The bytes of the storage kept from a large array freed (omp.c) that the
 * next large uninitialised array of want bytes would take over: the
 * smallest such spare of at least want bytes, which an array of up to its
 * size takes; 0 if none. */
RG_HIDDEN size_t rg_omp_spare_fit(const rg_context *ctx, size_t want);

/* nonzero.c: the rg_ops entries for non-zero elements (see internal.h). */
RG_HIDDEN rg_status rg_omp_nonzero_count(const rg_array *a, uint64_t mask, int64_t *nnz);
RG_HIDDEN rg_status rg_omp_nonzero(rg_array **coords, int64_t *nnz, const rg_array *a,
                                   uint64_t mask, const int64_t *shape, size_t ndim,
                                   int64_t bound);
RG_HIDDEN rg_status rg_omp_nonzero_into(rg_array *coords, int64_t *nnz, const rg_array *a,
                                        uint64_t mask, const int64_t *shape, size_t ndim);
RG_HIDDEN rg_status rg_omp_segment_nonzero(rg_array **seg_offsets, rg_array **positions,
                                           const rg_array *content, uint64_t mask,
                                           const rg_array *offsets);

#endif /* RAGGED_OMP_H */
