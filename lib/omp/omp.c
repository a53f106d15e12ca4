/* omp.c — the OpenMP backend: arrays in host memory, primitives as parallel loops. */
#define _GNU_SOURCE /* mremap */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "omp.h"

/* a + b stuck at UINT64_MAX instead of wrapping. */
static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
    uint64_t s;
    return __builtin_add_overflow(a, b, &s) ? UINT64_MAX : s;
}

/* ------------------------------------------------------------------------
 * Generic kernels.  Each body below is written once as a macro and
 * instantiated for every int32/int64 type (pair) by RG_EACH_TYPE and
 * RG_EACH_PAIR; the dispatch tables at the end pick the instance.  Pair
 * instances are named op_OUT_IN, e.g. lengths_i32_i64 writes int32 lengths
 * from int64 offsets.
 * ------------------------------------------------------------------------ */

#define RG_EACH_TYPE(X) X(i32, int32_t) X(i64, int64_t)
#define RG_EACH_PAIR(X)                                                                    \
    X(i32, int32_t, i32, int32_t)                                                          \
    X(i32, int32_t, i64, int64_t)                                                          \
    X(i64, int64_t, i32, int32_t)                                                          \
    X(i64, int64_t, i64, int64_t)
/* The same order as a table initialiser; pair_index() computes the index. */
#define RG_PAIR_TABLE(op) { op##_i32_i32, op##_i32_i64, op##_i64_i32, op##_i64_i64 }

static inline int pair_index(rg_dtype out, rg_dtype in)
{
    return (out == RG_INT64) * 2 + (in == RG_INT64);
}

static inline int type_index(rg_dtype t)
{
    return t == RG_INT64;
}

static inline bool is_index_dtype(rg_dtype t)
{
    return t == RG_INT32 || t == RG_INT64;
}

/* offsets_check: the first i with o[0] != 0 or o[i] < o[i-1], else -1.  Each
 * thread scans its part in blocks: a block is tested with no early exit (so
 * the loop vectorises) and searched only if it may hold a bad pair.  The test
 * ORs o[i] | (o[i] - o[i-1]) as unsigned and looks at the sign bit: baseline
 * x86-64 (SSE2) has no 64-bit compare, but has subtract and OR.  While the
 * offsets so far are monotonic from 0 every value is >= 0, so the difference
 * cannot overflow and is negative exactly at a bad pair; the first bad pair
 * therefore always flags its block.  A block can also be flagged by a
 * negative value that follows a bad pair in an earlier part: its search is
 * bounded to the block, finds nothing, and the scan goes on.  Parts are in
 * order, so the smallest bad index over the threads is the first.  The same
 * pass ORs each difference XOR o[1]: where that stays 0 every segment has
 * o[1] elements, *equal = o[1] (regular offsets, see regular_fill), else
 * *equal = -1; 0 without segments. */
#define RG_CHECK_BLOCK 1024
#define RG_DEFINE_OFFSETS_CHECK(N, T, U)                                                   \
    static int64_t offsets_check_##N(const void *offsets, size_t len, int64_t *equal)      \
    {                                                                                      \
        const T *o = offsets;                                                              \
        *equal = len == 1 ? 0 : -1;                                                        \
        if (o[0] != 0)                                                                     \
            return 0;                                                                      \
        size_t pairs = len - 1; /* comparisons o[i-1] <= o[i] for i in 1..len-1 */         \
        const U first = len > 1 ? (U)o[1] : 0;                                             \
        int64_t bad = INT64_MAX;                                                           \
        U unequal = 0;                                                                     \
        RG_OMP(parallel num_threads(team_size(pairs)) reduction(min : bad)                 \
                   reduction(| : unequal))                                                 \
        {                                                                                  \
            int t = thread_id(), nt = team_threads();                                      \
            size_t end = 1 + part_begin(pairs, t + 1, nt);                                 \
            for (size_t b = 1 + part_begin(pairs, t, nt); b < end; b += RG_CHECK_BLOCK) {  \
                size_t e = end - b > RG_CHECK_BLOCK ? b + RG_CHECK_BLOCK : end;            \
                U any = 0;                                                                 \
                RG_OMP(simd reduction(| : any, unequal))                                   \
                for (size_t i = b; i < e; i++) {                                           \
                    U d = (U)o[i] - (U)o[i - 1];                                           \
                    any |= (U)o[i] | d;                                                    \
                    unequal |= d ^ first;                                                  \
                }                                                                          \
                if (any >> (sizeof(U) * 8 - 1)) {                                          \
                    size_t i = b;                                                          \
                    while (i < e && o[i] >= o[i - 1])                                      \
                        i++;                                                               \
                    if (i < e) {                                                           \
                        bad = (int64_t)i;                                                  \
                        break;                                                             \
                    }                                                                      \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
        if (bad != INT64_MAX)                                                              \
            return bad;                                                                    \
        if (len > 1 && unequal == 0)                                                       \
            *equal = (int64_t)first;                                                       \
        return -1;                                                                         \
    }

/* lengths_total: the first negative length and the sum saturated at UINT64_MAX;
 * *equal = the length of every segment where all are equal (0 without
 * segments), else -1, as offsets_check.  Chunks of RG_TOTAL_CHUNK lengths
 * are summed in plain vector loops: the OR of a chunk's values under 2^51
 * says none is negative and their sum fits in 63 bits; a chunk that fails
 * that (a negative length, or huge ones) is walked again one by one. */
#define RG_TOTAL_CHUNK 4096 /* 2^12 values under 2^51: a sum under 2^63 */

#define RG_DEFINE_LENGTHS_TOTAL(N, T)                                                      \
    static void lengths_total_##N(const void *lengths, size_t n, int64_t *first_negative,  \
                                  uint64_t *total, int64_t *equal)                         \
    {                                                                                      \
        const T *len = lengths;                                                            \
        const uint64_t first = n > 0 ? (uint64_t)(int64_t)len[0] : 0;                      \
        int64_t neg = INT64_MAX;                                                           \
        uint64_t sum = 0, unequal = 0;                                                     \
        RG_OMP(parallel num_threads(team_size(n)) reduction(| : unequal))                  \
        {                                                                                  \
            int t = thread_id(), nt = team_threads();                                      \
            size_t end = part_begin(n, t + 1, nt);                                         \
            int64_t my_neg = INT64_MAX;                                                    \
            uint64_t my_sum = 0, my_unequal = 0;                                           \
            for (size_t c0 = part_begin(n, t, nt); c0 < end; c0 += RG_TOTAL_CHUNK) {       \
                size_t c1 = end - c0 < RG_TOTAL_CHUNK ? end : c0 + RG_TOTAL_CHUNK;         \
                uint64_t s = 0, bits = 0;                                                  \
                RG_OMP(simd reduction(+ : s) reduction(| : bits, my_unequal))              \
                for (size_t i = c0; i < c1; i++) {                                         \
                    uint64_t v = (uint64_t)(int64_t)len[i];                                \
                    s += v;                                                                \
                    bits |= v;                                                             \
                    my_unequal |= v ^ first;                                               \
                }                                                                          \
                if (bits >> 51 == 0) {                                                     \
                    my_sum = sat_add(my_sum, s);                                           \
                    continue;                                                              \
                }                                                                          \
                for (size_t i = c0; i < c1 && my_neg == INT64_MAX; i++) {                  \
                    if (len[i] < 0)                                                        \
                        my_neg = (int64_t)i;                                               \
                    else                                                                   \
                        my_sum = sat_add(my_sum, (uint64_t)len[i]);                        \
                }                                                                          \
                if (my_neg != INT64_MAX)                                                   \
                    break;                                                                 \
            }                                                                              \
            unequal |= my_unequal;                                                         \
            RG_OMP(critical(rg_omp_lengths_total))                                         \
            {                                                                              \
                neg = my_neg < neg ? my_neg : neg;                                         \
                sum = sat_add(sum, my_sum);                                                \
            }                                                                              \
        }                                                                                  \
        *first_negative = neg == INT64_MAX ? -1 : neg;                                     \
        *total = sum;                                                                      \
        *equal = n == 0 ? 0 : neg == INT64_MAX && unequal == 0 ? (int64_t)first : -1;      \
    }

RG_DEFINE_OFFSETS_CHECK(i32, int32_t, uint32_t)
RG_DEFINE_OFFSETS_CHECK(i64, int64_t, uint64_t)
RG_EACH_TYPE(RG_DEFINE_LENGTHS_TOTAL)

/* lengths: len[i] = o[i+1] - o[i]. */
#define RG_DEFINE_LENGTHS(ON, OT, IN, IT)                                                  \
    static void lengths_##ON##_##IN(void *lengths, const void *offsets, size_t nsegs)      \
    {                                                                                      \
        OT *restrict len = lengths;                                                        \
        const IT *restrict o = offsets;                                                    \
        RG_OMP(parallel for schedule(static) num_threads(team_size(nsegs)))                \
        for (size_t i = 0; i < nsegs; i++)                                                 \
            len[i] = (OT)((int64_t)o[i + 1] - (int64_t)o[i]);                              \
    }

/* offsets_from_lengths in one pass over memory, as nonzero's chained pass
 * (nonzero.c): the lengths are cut into blocks that fit in a core's cache,
 * dealt out in turn (thread t takes blocks t, t + nt, ...).  A thread sums
 * its block (reading it from memory), publishes the sum, walks back over the
 * values published before it for the offset its block starts at (a block's
 * sum is added and the walk goes on; the offset a block ends at ends it),
 * publishes its own end, and writes its offsets from cache.  A block still
 * unsummed after a short spin (its owner may have lost the CPU) is summed by
 * the waiter.  Ends may need all 63 bits, so a block's state (0 nothing yet,
 * 1 summed, 2 ended) is a word of its own, stored with release after the
 * value it announces.  The two-pass scan it replaced read the lengths from
 * memory twice. */
#define RG_SCAN_BLOCK ((size_t)1 << 16) /* 512 KiB of int64 lengths */
#define RG_SCAN_SPIN 4096                /* checks before summing a block oneself */

typedef struct scan_desc {
    int64_t sum, end;
    int state;
} scan_desc;

typedef int64_t (*block_sum_fn)(const void *lengths, size_t k0, size_t k1);

#define RG_DEFINE_BLOCK_SUM(N, T)                                                          \
    static int64_t block_sum_##N(const void *lengths, size_t k0, size_t k1)                \
    {                                                                                      \
        const T *len = lengths;                                                            \
        int64_t s = 0;                                                                     \
        RG_OMP(simd reduction(+ : s))                                                      \
        for (size_t i = k0; i < k1; i++)                                                   \
            s += len[i];                                                                   \
        return s;                                                                          \
    }
RG_EACH_TYPE(RG_DEFINE_BLOCK_SUM)

/* The offset block b starts at, from the blocks before it. */
static int64_t scan_before(scan_desc *d, size_t b, block_sum_fn sum, const void *lengths,
                           size_t n)
{
    int64_t before = 0;
    for (size_t j = b; j-- > 0;) {
        int state = 0;
        for (int spin = 0; spin < RG_SCAN_SPIN; spin++) {
            if ((state = __atomic_load_n(&d[j].state, __ATOMIC_ACQUIRE)) != 0)
                break;
            spin_pause();
        }
        if (state == 2)
            return before + d[j].end;
        size_t k0 = j * RG_SCAN_BLOCK, k1 = k0 + RG_SCAN_BLOCK; /* j < b: a whole block */
        before += state == 1 ? d[j].sum : sum(lengths, k0, k1);
    }
    return before;
}

#define RG_DEFINE_FROM_LENGTHS(ON, OT, IN, IT)                                             \
    static void from_lengths_##ON##_##IN(void *offsets, const void *lengths, size_t nsegs, \
                                         scan_desc *d)                                     \
    {                                                                                      \
        OT *restrict o = offsets;                                                          \
        const IT *restrict len = lengths;                                                  \
        size_t nblocks = (nsegs + RG_SCAN_BLOCK - 1) / RG_SCAN_BLOCK;                      \
        o[0] = 0;                                                                          \
        /* one block: one thread, as no other would get any */                            \
        RG_OMP(parallel num_threads(nblocks > 1 ? team_size(nsegs) : 1))                   \
        {                                                                                  \
            int t = thread_id(), nt = team_threads();                                      \
            for (size_t b = (size_t)t; b < nblocks; b += (size_t)nt) {                     \
                size_t k0 = b * RG_SCAN_BLOCK;                                             \
                size_t k1 = nsegs - k0 < RG_SCAN_BLOCK ? nsegs : k0 + RG_SCAN_BLOCK;       \
                d[b].sum = block_sum_##IN(len, k0, k1);                                    \
                __atomic_store_n(&d[b].state, 1, __ATOMIC_RELEASE);                        \
                int64_t s = scan_before(d, b, block_sum_##IN, len, nsegs);                 \
                d[b].end = s + d[b].sum;                                                   \
                __atomic_store_n(&d[b].state, 2, __ATOMIC_RELEASE);                        \
                for (size_t i = k0; i < k1; i++) {                                         \
                    s += len[i];                                                           \
                    o[i + 1] = (OT)s;                                                      \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }

RG_EACH_PAIR(RG_DEFINE_LENGTHS)
RG_EACH_PAIR(RG_DEFINE_FROM_LENGTHS)

/* ------------------------------------------------------------------------
 * elem_segments: for element k of segment i write i (parents), k - o[i]
 * (local index) or o[i] (starts).  Four strategies, same result.
 * ------------------------------------------------------------------------ */

/* Writes what kind asks for for elements b .. e-1, all of segment seg
 * starting at start, into out[k - shift] (shift: where out begins, for a
 * window buffer; 0 for the output itself).  Three plain loops; omp simd has
 * them vectorised at -O2 as well. */
#define RG_DEFINE_FILL(N, T)                                                               \
    static inline void fill_##N(T *restrict out, int64_t shift, int64_t b, int64_t e,      \
                                int64_t seg, int64_t start, rg_elem_kind kind)             \
    {                                                                                      \
        if (kind == RG_ELEM_PARENTS) {                                                     \
            const T v = (T)seg;                                                            \
            RG_OMP(simd)                                                                   \
            for (int64_t k = b; k < e; k++)                                                \
                out[k - shift] = v;                                                        \
        } else if (kind == RG_ELEM_LOCAL) {                                                \
            RG_OMP(simd)                                                                   \
            for (int64_t k = b; k < e; k++)                                                \
                out[k - shift] = (T)(k - start);                                           \
        } else {                                                                           \
            const T v = (T)start;                                                          \
            RG_OMP(simd)                                                                   \
            for (int64_t k = b; k < e; k++)                                                \
                out[k - shift] = v;                                                        \
        }                                                                                  \
    }

/* Like fill, for short segments: writes whole blocks of RG_OMP_BLOCK elements
 * from b, so out[e .. e + RG_OMP_BLOCK - 1) may get values that belong to no
 * segment here.  The caller fills the following elements afterwards, which
 * overwrites them.  Fixed-size blocks need no data-dependent loop exit for
 * segments shorter than a block, so the many short segments of a skewed
 * array cost a few stores each instead of a branch mispredict. */
#define RG_OMP_BLOCK 8
#define RG_DEFINE_FILL_BLOCKS(N, T)                                                        \
    static inline void fill_blocks_##N(T *restrict out, int64_t shift, int64_t b,          \
                                       int64_t e, int64_t seg, int64_t start,              \
                                       rg_elem_kind kind)                                  \
    {                                                                                      \
        int64_t k = b;                                                                     \
        if (kind == RG_ELEM_LOCAL) {                                                       \
            do {                                                                           \
                RG_OMP(simd)                                                               \
                for (int j = 0; j < RG_OMP_BLOCK; j++)                                     \
                    out[k - shift + j] = (T)(k + j - start);                               \
                k += RG_OMP_BLOCK;                                                         \
            } while (k < e);                                                               \
        } else {                                                                           \
            const T v = (T)(kind == RG_ELEM_PARENTS ? seg : start);                        \
            do {                                                                           \
                RG_OMP(simd)                                                               \
                for (int j = 0; j < RG_OMP_BLOCK; j++)                                     \
                    out[k - shift + j] = v;                                                \
                k += RG_OMP_BLOCK;                                                         \
            } while (k < e);                                                               \
        }                                                                                  \
    }

/* fill with stores straight from registers, for a run of one segment that
 * covers a whole window (see merge_stream): 64-byte lines where the CPU has
 * AVX-512 (1.3x faster on an AMD EPYC, Zen 5), else 16-byte stores;
 * streaming ones where stream is set.  Defined after stream_affine, below. */
#if RG_OMP_HAVE_STREAM
#define RG_DEFINE_STREAM_RUN(N, T)                                                         \
    static inline void stream_run_##N(T *out, int64_t b, int64_t e, int64_t seg,           \
                                      int64_t start, rg_elem_kind kind, bool stream)       \
    {                                                                                      \
        if (have_avx512()) {                                                               \
            stream_affine_##N(out, b, e,                                                   \
                              kind == RG_ELEM_PARENTS ? seg                                \
                              : kind == RG_ELEM_LOCAL ? b - start                          \
                                                      : start,                             \
                              kind == RG_ELEM_LOCAL, stream);                              \
            return;                                                                        \
        }                                                                                  \
        if (!stream) {                                                                     \
            fill_##N(out, 0, b, e, seg, start, kind);                                      \
            return;                                                                        \
        }                                                                                  \
        typedef T lanes __attribute__((vector_size(16)));                                  \
        enum { L = 16 / sizeof(T) };                                                       \
        int64_t k = b;                                                                     \
        int64_t head = (int64_t)((16 - ((uintptr_t)(out + k) & 15)) & 15) / (int64_t)sizeof(T); \
        fill_##N(out, 0, k, k + head < e ? k + head : e, seg, start, kind);                \
        k += head;                                                                         \
        lanes v = {0}, step = {0}; /* then set lane by lane */                           \
        for (int j = 0; j < L; j++) {                                                      \
            v[j] = (T)(kind == RG_ELEM_PARENTS ? seg                                       \
                       : kind == RG_ELEM_LOCAL ? k + j - start : start);                   \
            step[j] = (T)(kind == RG_ELEM_LOCAL ? L : 0);                                  \
        }                                                                                  \
        for (; k + L <= e; k += L, v += step)                                              \
            _mm_stream_si128((__m128i *)(void *)(out + k), (__m128i)v);                   \
        fill_##N(out, 0, k, e, seg, start, kind);                                          \
    }
#else
#define RG_DEFINE_STREAM_RUN(N, T)                                                         \
    static inline void stream_run_##N(T *out, int64_t b, int64_t e, int64_t seg,           \
                                      int64_t start, rg_elem_kind kind, bool stream)       \
    {                                                                                      \
        (void)stream;                                                                      \
        fill_##N(out, 0, b, e, seg, start, kind);                                          \
    }
#endif

RG_EACH_TYPE(RG_DEFINE_FILL)
RG_EACH_TYPE(RG_DEFINE_FILL_BLOCKS)

/* The segment holding element k: the largest i < nsegs with o[i] <= k
 * (o[0] = 0 <= k, so there is one). */
#define RG_DEFINE_UPPER_BOUND(N, T)                                                        \
    static inline int64_t segment_of_##N(const T *o, int64_t nsegs, int64_t k)             \
    {                                                                                      \
        int64_t lo = 0, count = nsegs; /* answer + 1 lies in [lo, lo + count] */           \
        while (count > 0) {                                                                \
            int64_t half = count / 2;                                                      \
            if ((int64_t)o[lo + half] <= k) {                                              \
                lo += half + 1;                                                            \
                count -= half + 1;                                                         \
            } else {                                                                       \
                count = half;                                                              \
            }                                                                              \
        }                                                                                  \
        return lo - 1;                                                                     \
    }

RG_EACH_TYPE(RG_DEFINE_UPPER_BOUND)

/* The segment holding element k, at most last, searched forward from
 * segment i (o[i] <= k): steps that double, then a binary search, so the
 * cost grows with the distance from i only and the offsets read are near. */
#define RG_DEFINE_SEGMENT_FROM(N, T)                                                       \
    static inline int64_t segment_from_##N(const T *o, int64_t i, int64_t last, int64_t k) \
    {                                                                                      \
        int64_t step = 1;                                                                  \
        while (i + step <= last && (int64_t)o[i + step] <= k) {                            \
            i += step;                                                                     \
            step *= 2;                                                                     \
        }                                                                                  \
        int64_t count = last - i + 1 < step ? last - i + 1 : step;                         \
        return i + segment_of_##N(o + i, count, k);                                        \
    }

RG_EACH_TYPE(RG_DEFINE_SEGMENT_FROM)

/* Segments of length 1 that the merge path stores as one vector. */
#define RG_OMP_UNIT_RUN 8

/* Whether the RG_OMP_UNIT_RUN segments from o[0] all have length 1. */
#define RG_DEFINE_UNIT_RUN(N, T)                                                           \
    static inline bool unit_run_##N(const T *o)                                            \
    {                                                                                      \
        bool unit = true;                                                                  \
        for (int j = 1; j <= RG_OMP_UNIT_RUN; j++)                                         \
            unit &= (int64_t)o[j] - (int64_t)o[0] == j;                                    \
        return unit;                                                                       \
    }

RG_EACH_TYPE(RG_DEFINE_UNIT_RUN)

/* Every strategy instance has this signature; scratch holds team + 1 int64
 * (only the flood fill uses it). */
typedef void (*elem_fn)(void *out, const void *offsets, int64_t nsegs, int64_t nelems,
                        rg_elem_kind kind, int team, int64_t *scratch);

/* BSEARCH: every element searches the offsets for its segment. */
#define RG_DEFINE_BSEARCH(ON, OT, IN, IT)                                                  \
    static void bsearch_##ON##_##IN(void *out_, const void *offsets, int64_t nsegs,        \
                                    int64_t nelems, rg_elem_kind kind, int team,           \
                                    int64_t *scratch)                                      \
    {                                                                                      \
        OT *restrict out = out_;                                                           \
        const IT *restrict o = offsets;                                                    \
        (void)scratch, (void)team;                                                         \
        RG_OMP(parallel for schedule(static) num_threads(team))                            \
        for (int64_t k = 0; k < nelems; k++) {                                             \
            int64_t i = segment_of_##IN(o, nsegs, k);                                      \
            out[k] = (OT)(kind == RG_ELEM_PARENTS ? i                                      \
                          : kind == RG_ELEM_LOCAL ? k - (int64_t)o[i]                      \
                                                  : (int64_t)o[i]);                        \
        }                                                                                  \
    }

/* PER_SEGMENT: segments are dealt out in small dynamic chunks; each is filled
 * by one thread (so one huge segment runs on one thread). */
#define RG_DEFINE_PER_SEGMENT(ON, OT, IN, IT)                                              \
    static void per_segment_##ON##_##IN(void *out_, const void *offsets, int64_t nsegs,    \
                                        int64_t nelems, rg_elem_kind kind, int team,       \
                                        int64_t *scratch)                                  \
    {                                                                                      \
        OT *restrict out = out_;                                                           \
        const IT *restrict o = offsets;                                                    \
        (void)nelems, (void)scratch, (void)team;                                           \
        RG_OMP(parallel for schedule(dynamic, RG_OMP_SEGMENT_CHUNK) num_threads(team))     \
        for (int64_t i = 0; i < nsegs; i++)                                                \
            fill_##ON(out, 0, o[i], o[i + 1], i, o[i], kind);                              \
    }

/* FLOOD: zero the output, write v(i) at o[i] for each non-empty segment i
 * (non-empty segments have distinct starts), then an inclusive max-scan.
 * v(i) = i gives parents; v(i) = o[i] gives starts, and local = k - starts.
 * The scan has two passes: part maxima, a scan of those, then each part. */
#define RG_DEFINE_FLOOD(ON, OT, IN, IT)                                                    \
    static void flood_##ON##_##IN(void *out_, const void *offsets, int64_t nsegs,          \
                                  int64_t nelems, rg_elem_kind kind, int team,             \
                                  int64_t *carry)                                          \
    {                                                                                      \
        OT *restrict out = out_;                                                           \
        const IT *restrict o = offsets;                                                    \
        (void)team;                                                                        \
        RG_OMP(parallel num_threads(team))                                                 \
        {                                                                                  \
            int t = thread_id(), nt = team_threads();                                      \
            int64_t begin = (int64_t)part_begin((size_t)nelems, t, nt);                    \
            int64_t end = (int64_t)part_begin((size_t)nelems, t + 1, nt);                  \
            for (int64_t k = begin; k < end; k++)                                          \
                out[k] = 0;                                                                \
            RG_OMP(barrier)                                                                \
            RG_OMP(for schedule(static))                                                   \
            for (int64_t i = 0; i < nsegs; i++)                                            \
                if (o[i + 1] > o[i])                                                       \
                    out[o[i]] = (OT)(kind == RG_ELEM_PARENTS ? i : (int64_t)o[i]);         \
            /* the implicit barrier of omp for: every mark is written */                   \
            OT top = 0;                                                                    \
            for (int64_t k = begin; k < end; k++)                                          \
                top = out[k] > top ? out[k] : top;                                         \
            carry[t + 1] = top;                                                            \
            RG_OMP(barrier)                                                                \
            RG_OMP(single)                                                                 \
            {                                                                              \
                carry[0] = 0;                                                              \
                for (int j = 1; j <= nt; j++)                                              \
                    carry[j] = carry[j] > carry[j - 1] ? carry[j] : carry[j - 1];          \
            }                                                                              \
            OT run = (OT)carry[t];                                                         \
            if (kind == RG_ELEM_LOCAL) {                                                   \
                for (int64_t k = begin; k < end; k++) {                                    \
                    run = out[k] > run ? out[k] : run;                                     \
                    out[k] = (OT)(k - run);                                                \
                }                                                                          \
            } else {                                                                       \
                for (int64_t k = begin; k < end; k++) {                                    \
                    run = out[k] > run ? out[k] : run;                                     \
                    out[k] = run;                                                          \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }

/* Whether the segments i0 .. last, holding elements k0 .. k1-1, are mostly
 * of length 0 or 1 (under 2 elements each on average): merge_range then
 * stores segment by segment instead of in blocks. */
static inline bool mostly_unit(int64_t i0, int64_t last, int64_t k0, int64_t k1)
{
    return k1 - k0 < 2 * (last - i0 + 1);
}

/* Writes what kind asks for for elements k0 .. k1-1, which lie in segments
 * i0 .. last, into out[k - shift]: segment by segment, clipped to
 * [k0, k1).  Segments that end at least a block before k1 are written in
 * whole blocks.  Where the segments average a window or more, runs of a
 * window or more into the output itself are stored from registers where
 * the CPU has AVX-512 (stream_run without streaming: local index on one
 * segment 1.8x faster in cache than by blocks, AMD EPYC Zen 5, 2^20 int64
 * elements). */
#define RG_DEFINE_MERGE_RANGE(ON, OT, IN, IT)                                              \
    static inline void merge_range_##ON##_##IN(OT *restrict out, int64_t shift,            \
                                               const IT *restrict o, int64_t i0,           \
                                               int64_t last, int64_t k0, int64_t k1,       \
                                               rg_elem_kind kind)                          \
    {                                                                                      \
        /* Mostly length-0/1 segments: plain stores per segment (a block of 8 per          \
         * segment would be 8 stores per element).  Decided once per range, so             \
         * mixed lengths pay no misprediction. */                                          \
        if (mostly_unit(i0, last, k0, k1)) {                                               \
            for (int64_t i = i0; i <= last; i++) {                                         \
                /* 8 segments of length 1 in a row: one vector store */                    \
                while (i + RG_OMP_UNIT_RUN <= last && o[i] >= k0 &&                        \
                       (int64_t)o[i + RG_OMP_UNIT_RUN] <= k1 && unit_run_##IN(o + i)) {     \
                    int64_t start = o[i];                                                  \
                    RG_OMP(simd)                                                           \
                    for (int j = 0; j < RG_OMP_UNIT_RUN; j++)                              \
                        out[start - shift + j] = (OT)(kind == RG_ELEM_PARENTS ? i + j      \
                                                      : kind == RG_ELEM_LOCAL ? 0          \
                                                                              : start + j); \
                    i += RG_OMP_UNIT_RUN;                                                  \
                }                                                                          \
                if (i > last)                                                              \
                    break;                                                                 \
                int64_t start = o[i], stop = o[i + 1];                                     \
                int64_t b = start > k0 ? start : k0, e = stop < k1 ? stop : k1;            \
                for (int64_t k = b; k < e; k++)                                            \
                    out[k - shift] = (OT)(kind == RG_ELEM_PARENTS ? i                      \
                                          : kind == RG_ELEM_LOCAL ? k - start : start);    \
            }                                                                              \
            return;                                                                        \
        }                                                                                  \
        if (shift == 0 && k1 - k0 >= RG_OMP_WINDOW * (last - i0 + 1) && have_avx512()) {   \
            /* a loop of its own: the test per segment cost shorter ones 1.05x */          \
            for (int64_t i = i0; i <= last; i++) {                                         \
                int64_t start = o[i], stop = o[i + 1];                                     \
                int64_t b = start > k0 ? start : k0, e = stop < k1 ? stop : k1;            \
                if (e - b >= RG_OMP_WINDOW)                                                \
                    stream_run_##ON(out, b, e, i, start, kind, false);                     \
                else                                                                       \
                    fill_##ON(out, 0, b, e, i, start, kind);                               \
            }                                                                              \
            return;                                                                        \
        }                                                                                  \
        for (int64_t i = i0; i <= last; i++) {                                             \
            int64_t start = o[i], stop = o[i + 1];                                         \
            int64_t b = start > k0 ? start : k0, e = stop < k1 ? stop : k1;                \
            if (e <= k1 - RG_OMP_BLOCK)                                                    \
                fill_blocks_##ON(out, shift, b, e, i, start, kind);                        \
            else                                                                           \
                fill_##ON(out, shift, b, e, i, start, kind);                               \
        }                                                                                  \
    }

/* Elements of the windows of merge_stream (4 KiB of int64 in its buffer).
 * 512 rather than 2048: floods of short segments ran 1.05x to 1.2x
 * faster (paired), as a thread's reads of the offsets and its streamed
 * stores of the output then overlap more; 256 was slower on all-length-1
 * lengths, 8192 slower everywhere. */
#define RG_OMP_WINDOW 512
/* The windows of merge_stream_short for an output that fits in cache (not
 * streamed): fewer windows, less work per element; against 512, paired
 * (AMD EPYC Zen 5, power-law and half-empty lengths, 2^20 to 3.9 million
 * int64 elements), 1024 took 0.80x to 0.96x the time; 2048 and 4096 were
 * faster at 2^20 but slower from 3 million. */
#define RG_OMP_WINDOW_CACHED 1024
/* Powers of two: merge_stream_short finds a window's end by a mask. */
_Static_assert((RG_OMP_WINDOW & (RG_OMP_WINDOW - 1)) == 0 &&
                   (RG_OMP_WINDOW_CACHED & (RG_OMP_WINDOW_CACHED - 1)) == 0,
               "windows are powers of two");
/* Pieces and windows whose segments average fewer elements than this are
 * written in place: there the work per segment, not the memory, bounds the
 * time, and a pass through the buffer only adds to it (BENCHMARKS.md). */
#define RG_OMP_WINDOW_SHORT 16

/* How far past its epoch a mark of flood_window may be: what int32 holds.
 * A test build sets less, to take the paths that need 2^31 elements. */
#ifndef RG_OMP_FLOOD_SPAN
#define RG_OMP_FLOOD_SPAN INT32_MAX
#endif

/* The epoch of flood_window's marks for a window ending at ke whose first
 * segment starts at start: kept while ke is at most RG_OMP_FLOOD_SPAN
 * elements past it, else start, with the marks (nbytes) cleared, as they
 * hold marks of the old one. */
static inline int64_t flood_epoch(int32_t *marks, size_t nbytes, int64_t epoch, int64_t start,
                                  int64_t ke)
{
    if (ke - epoch <= RG_OMP_FLOOD_SPAN)
        return epoch;
    memset(marks, 0, nbytes);
    return start;
}

#if RG_OMP_HAVE_STREAM && defined(__GNUC__)
#include <immintrin.h>
/* A 64-byte line v to the aligned p: streamed where stream is set, else a
 * plain store, which keeps it in cache for an output that fits there. */
__attribute__((target("avx512f"))) static inline void put_line(void *p, __m512i v, bool stream)
{
    if (stream)
        _mm512_stream_si512(p, v);
    else
        _mm512_store_si512(p, v);
}

/* out[k] = a + b (k - kw) for k in kw .. ke-1, as lines made in registers
 * (a window of segments of length 1), streamed where stream is set. */
#define RG_DEFINE_STREAM_AFFINE(N, T)                                                      \
    __attribute__((target("avx512f"))) static void stream_affine_##N(                      \
        T *out, int64_t kw, int64_t ke, int64_t a, int64_t b, bool stream)                 \
    {                                                                                      \
        typedef T line __attribute__((vector_size(64)));                                   \
        enum { L = 64 / sizeof(T) };                                                       \
        line step = {0};                                                                   \
        for (int q = 0; q < L; q++)                                                        \
            step[q] = (T)(b * q);                                                          \
        int64_t k = kw;                                                                    \
        for (; k < ke && (k + L > ke || ((uintptr_t)(out + k) & 63)); k++)                 \
            out[k] = (T)(a + b * (k - kw));                                                \
        for (; k + L <= ke; k += L)                                                        \
            put_line(out + k, (__m512i)(step + (T)(a + b * (k - kw))), stream);           \
        for (; k < ke; k++)                                                                \
            out[k] = (T)(a + b * (k - kw));                                                \
    }
RG_EACH_TYPE(RG_DEFINE_STREAM_AFFINE)

/* out[j] = pattern[j] + base for j in 0 .. n-1, out 64-byte aligned, as
 * lines made in registers and streamed (regular_fill), with no buffer in
 * between: all-length-1 parents, local index and starts took 0.76x, 0.39x
 * and 0.79x the time (AMD EPYC Zen 5, paired).  The buffer's SSE2 loop
 * had cost local index 1.5x in one build of two that differed only in
 * that loop's place in the code. */
#define RG_DEFINE_STREAM_PATTERN(N, T)                                                     \
    __attribute__((target("avx512f"))) static void stream_pattern_##N(                     \
        T *out, const T *pattern, int64_t n, T base)                                       \
    {                                                                                      \
        typedef T line __attribute__((vector_size(64)));                                   \
        enum { L = 64 / sizeof(T) };                                                       \
        int64_t j = 0;                                                                     \
        for (; j + L <= n; j += L) {                                                       \
            line v; /* memcpy: pattern holds T, not lines */                               \
            memcpy(&v, pattern + j, sizeof v);                                             \
            put_line(out + j, (__m512i)(v + base), true);                                  \
        }                                                                                  \
        for (; j < n; j++)                                                                 \
            out[j] = (T)(pattern[j] + base);                                               \
    }
RG_EACH_TYPE(RG_DEFINE_STREAM_PATTERN)

/* stream_copy with 64-byte stores in the middle. */
__attribute__((target("avx512f"))) static void stream_copy_lines(void *dst, const void *src,
                                                                 size_t nbytes)
{
    char *d = dst;
    const char *s = src;
    size_t head = (64 - ((uintptr_t)d & 63)) & 63;
    head = head < nbytes ? head : nbytes;
    stream_copy(d, s, head);
    d += head, s += head, nbytes -= head;
    for (; nbytes >= 64; nbytes -= 64, d += 64, s += 64)
        _mm512_stream_si512((void *)d, _mm512_loadu_si512((const void *)s));
    stream_copy(d, s, nbytes);
}

/* Inclusive max-scan of 16 int32 lanes: shifts by 1, 2, 4 and 8 lanes.  The
 * values are never negative, so the lanes shifted in may be 0.  (int32
 * lanes: a max of int64 lanes measured twice as slow here.) */
__attribute__((target("avx512f"))) static inline __m512i scan_line(__m512i v)
{
    const __m512i z = _mm512_setzero_si512();
    v = _mm512_max_epi32(v, _mm512_alignr_epi32(v, z, 15));
    v = _mm512_max_epi32(v, _mm512_alignr_epi32(v, z, 14));
    v = _mm512_max_epi32(v, _mm512_alignr_epi32(v, z, 12));
    return _mm512_max_epi32(v, _mm512_alignr_epi32(v, z, 8));
}

/* Stores the 16 values a + r (a - r where neg) to out, 64-byte aligned,
 * streamed where stream is set: r holds int32 lanes, a is a0 (int32
 * outputs) or a0 and a1 (int64 ones, lanes 0-7 and 8-15), advanced by step
 * after where neg (local index). */
__attribute__((target("avx512f"))) static inline void flood_store_i32(
    int32_t *out, __m512i *a0, __m512i *a1, __m512i r, bool neg, __m512i step, bool stream)
{
    (void)a1;
    put_line(out, neg ? _mm512_sub_epi32(*a0, r) : _mm512_add_epi32(*a0, r), stream);
    if (neg)
        *a0 = _mm512_add_epi32(*a0, step);
}
__attribute__((target("avx512f"))) static inline void flood_store_i64(
    int64_t *out, __m512i *a0, __m512i *a1, __m512i r, bool neg, __m512i step, bool stream)
{
    __m512i lo = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(r));
    __m512i hi = _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(r, 1));
    put_line(out, neg ? _mm512_sub_epi64(*a0, lo) : _mm512_add_epi64(*a0, lo), stream);
    put_line(out + 8, neg ? _mm512_sub_epi64(*a1, hi) : _mm512_add_epi64(*a1, hi), stream);
    if (neg) {
        *a0 = _mm512_add_epi64(*a0, step);
        *a1 = _mm512_add_epi64(*a1, step);
    }
}
#define RG_SET1_i32(x) _mm512_set1_epi32((int)(x))
#define RG_SET1_i64(x) _mm512_set1_epi64((long long)(x))

/* The marks of flood_window: s (ids) or o[s] - epoch at o[s] - kw, for the
 * segments s > i that start before ke; returns the first segment past
 * them.  A function of its own: inlined, its loop spilled a register and
 * the window took 1.3 times as long on segments of 1 to 8 elements. */
#define RG_DEFINE_FLOOD_MARKS(IN, IT)                                                      \
    __attribute__((noinline)) static int64_t flood_marks_##IN(                             \
        int32_t *restrict marks, const IT *restrict o, int64_t i, int64_t kw, int64_t ke,  \
        bool ids, int64_t epoch)                                                           \
    {                                                                                      \
        int64_t s = i + 1;                                                                 \
        if (ids) {                                                                         \
            for (int64_t start; (start = o[s]) < ke; s++)                                  \
                marks[start - kw] = (int32_t)s;                                            \
        } else {                                                                           \
            for (int64_t start; (start = o[s]) < ke; s++)                                  \
                marks[start - kw] = (int32_t)(start - epoch);                              \
        }                                                                                  \
        return s;                                                                          \
    }
RG_EACH_TYPE(RG_DEFINE_FLOOD_MARKS)

/* A window kw .. ke-1 that holds segment ends, from segment i (the one
 * holding kw), as a flood (see FLOOD), in int32 marks: each later segment s
 * starting in the window writes s (parents) or o[s] - epoch (local,
 * starts) at its start, an empty segment before the one that starts where
 * it does; a max-scan of the marks from i (o[i] - epoch) then gives
 * parents as the mark, starts as epoch + mark and local as
 * k - epoch - mark, streamed as lines.  The marks are not cleared: what
 * earlier windows of the caller left there (marks made with the same
 * epoch, or 0) is at most the scan's start, since those segments start
 * before kw.  Not clearing them took parents and local index on
 * half-empty, short and power-law lengths 0.96x to 0.99x the time (Intel
 * Xeon, 10^8 int64, paired).  The callers keep the epoch (flood_epoch):
 * called in here, it took the same lengths 1.02x to 1.03x the time.  The cost is a store per
 * segment and a few instructions per 16 elements, whatever the lengths:
 * blocks of values per segment (merge_stream_short) cost 1.5 times as
 * much on segments of 1 to 8 elements.
 * Returns the segment holding ke - 1, or -1 with nothing written where a
 * mark may not fit in int32: ids is false (some segment id of the call
 * does not fit) and the kind is parents, or ke is more than
 * RG_OMP_FLOOD_SPAN elements past epoch. */
#define RG_DEFINE_FLOOD_WINDOW(ON, OT, IN, IT)                                             \
    __attribute__((target("avx512f"))) static int64_t flood_window_##ON##_##IN(            \
        OT *out, int32_t *restrict marks, const IT *restrict o, int64_t i, int64_t kw,     \
        int64_t ke, rg_elem_kind kind, bool ids, bool stream, int64_t epoch)               \
    {                                                                                      \
        enum { L = 64 / sizeof(OT) };                                                      \
        bool parents = kind == RG_ELEM_PARENTS, local = kind == RG_ELEM_LOCAL;             \
        int64_t base = parents ? 0 : epoch;                                                \
        if (parents ? !ids : ke - epoch > RG_OMP_FLOOD_SPAN)                               \
            return -1;                                                                     \
        int64_t s = flood_marks_##IN(marks, o, i, kw, ke, parents, epoch);                \
        int32_t run = (int32_t)(parents ? i : (int64_t)o[i] - epoch);                      \
        int64_t k = kw;                                                                    \
        for (; k < ke && (k + 16 > ke || ((uintptr_t)(out + k) & 63)); k++) {              \
            run = marks[k - kw] > run ? marks[k - kw] : run;                               \
            out[k] = (OT)(local ? k - base - run : base + run);                            \
        }                                                                                  \
        OT first[16];                                                                      \
        for (int q = 0; q < 16; q++)                                                       \
            first[q] = (OT)(local ? k + q - base : base);                                  \
        __m512i a0 = _mm512_loadu_si512((const void *)first);                              \
        __m512i a1 = _mm512_loadu_si512((const void *)(first + (L == 8 ? 8 : 0)));         \
        __m512i step = RG_SET1_##ON(16), vrun = _mm512_set1_epi32(run);                    \
        for (; k + 16 <= ke; k += 16) {                                                    \
            int32_t *m = marks + (k - kw);                                                 \
            __m512i r = scan_line(_mm512_loadu_si512((const void *)m));                    \
            flood_store_##ON(out + k, &a0, &a1, _mm512_max_epi32(r, vrun), local, step,    \
                             stream);                                                      \
            /* from r, not the stored max: the lines carry one max, not a chain */         \
            vrun = _mm512_max_epi32(vrun, _mm512_permutexvar_epi32(_mm512_set1_epi32(15), r)); \
        }                                                                                  \
        run = _mm512_reduce_max_epi32(vrun);                                               \
        for (; k < ke; k++) {                                                              \
            run = marks[k - kw] > run ? marks[k - kw] : run;                               \
            out[k] = (OT)(local ? k - base - run : base + run);                            \
        }                                                                                  \
        return s - 1;                                                                      \
    }

#else
static void stream_copy_lines(void *dst, const void *src, size_t nbytes)
{
    stream_copy(dst, src, nbytes);
}

#define RG_DEFINE_FLOOD_WINDOW(ON, OT, IN, IT)                                             \
    static int64_t flood_window_##ON##_##IN(OT *out, int32_t *restrict marks,             \
                                            const IT *restrict o, int64_t i, int64_t kw,   \
                                            int64_t ke, rg_elem_kind kind, bool ids,       \
                                            bool stream, int64_t epoch)                    \
    {                                                                                      \
        (void)out, (void)marks, (void)o, (void)i, (void)kw, (void)ke, (void)kind, (void)ids; \
        (void)stream, (void)epoch;                                                         \
        return -1; /* never called */                                                      \
    }

#define RG_DEFINE_STREAM_AFFINE(N, T)                                                      \
    static void stream_affine_##N(T *out, int64_t kw, int64_t ke, int64_t a, int64_t b,    \
                                  bool stream)                                             \
    {                                                                                      \
        /* plain stores: reached only where AVX-512 runs without this build's          \
         * streaming stores (an x86-64 build without SSE2) */                              \
        (void)stream;                                                                      \
        for (int64_t k = kw; k < ke; k++)                                                  \
            out[k] = (T)(a + b * (k - kw));                                                \
    }
RG_EACH_TYPE(RG_DEFINE_STREAM_AFFINE)

#define RG_DEFINE_STREAM_PATTERN(N, T)                                                     \
    static void stream_pattern_##N(T *out, const T *pattern, int64_t n, T base)            \
    {                                                                                      \
        for (int64_t j = 0; j < n; j++) /* plain stores, as stream_affine's */            \
            out[j] = (T)(pattern[j] + base);                                               \
    }
RG_EACH_TYPE(RG_DEFINE_STREAM_PATTERN)
#endif

RG_EACH_TYPE(RG_DEFINE_STREAM_RUN)

/* buf's nbytes to dst: streamed where stream is set (by 64-byte stores
 * where lines is set), else copied plainly. */
static void stream_out(void *dst, const void *buf, size_t nbytes, bool lines, bool stream)
{
    if (!stream)
        memcpy(dst, buf, nbytes);
    else if (lines)
        stream_copy_lines(dst, buf, nbytes);
    else
        stream_copy(dst, buf, nbytes);
}

/* merge_range for an output large enough to stream, in windows of
 * RG_OMP_WINDOW elements at multiples of it: a window inside one segment
 * is streamed from registers; any other is a flood (flood_window) where
 * the CPU has AVX-512: on segments of 1 to 199 elements that ran as fast
 * as a streamed fill, where lines made segment by segment took 1.3 times
 * as long.  Else, or where the flood's marks would not fit in int32, a
 * window of short segments is written in place and one of longer segments
 * into a buffer in cache by merge_range, streamed from there. */
#define RG_DEFINE_MERGE_STREAM(ON, OT, IN, IT)                                             \
    static void merge_stream_##ON##_##IN(OT *restrict out, const IT *restrict o, int64_t i,  \
                                         int64_t last, int64_t k0, int64_t k1,             \
                                         rg_elem_kind kind, bool ids)                      \
    {                                                                                      \
        OT buf[RG_OMP_WINDOW] __attribute__((aligned(64)));                                \
        int32_t marks[RG_OMP_WINDOW];                                                      \
        bool lines = have_avx512();                                                        \
        int64_t epoch = o[i];                                                              \
        if (lines)                                                                         \
            memset(marks, 0, sizeof marks);                                                \
        for (int64_t kw = k0; kw < k1;) {                                                  \
            int64_t ke = (kw / RG_OMP_WINDOW + 1) * RG_OMP_WINDOW;                         \
            ke = ke < k1 ? ke : k1;                                                        \
            while ((int64_t)o[i + 1] <= kw) /* to the segment holding kw */                \
                i++;                                                                       \
            int64_t j;                                                                     \
            if ((int64_t)o[i + 1] >= ke) {                                                 \
                /* and every later window inside segment i, in one go */                   \
                int64_t end = (int64_t)o[i + 1] < k1 ? (int64_t)o[i + 1] : k1;             \
                ke = end == k1 ? k1 : end / RG_OMP_WINDOW * RG_OMP_WINDOW;                 \
                stream_run_##ON(out, kw, ke, i, o[i], kind, true);                         \
            } else if (lines && (epoch = flood_epoch(marks, sizeof marks, epoch, o[i], ke), \
                                 j = flood_window_##ON##_##IN(out, marks, o, i, kw, ke,    \
                                                              kind, ids, true, epoch)) >= 0) { \
                i = j;                                                                     \
            } else {                                                                       \
                j = segment_from_##IN(o, i, last, ke - 1);                                 \
                if (ke - kw < RG_OMP_WINDOW_SHORT * (j - i + 1)) {                         \
                    merge_range_##ON##_##IN(out, 0, o, i, j, kw, ke, kind);                \
                } else {                                                                   \
                    merge_range_##ON##_##IN(buf, kw, o, i, j, kw, ke, kind);               \
                    stream_copy(out + kw, buf, (size_t)(ke - kw) * sizeof(OT));            \
                }                                                                          \
                i = j;                                                                     \
            }                                                                              \
            kw = ke;                                                                       \
        }                                                                                  \
        stream_fence(); /* before the team's end, where others may read them */            \
    }

/* Elements each segment of a short window writes from its start, spill
 * included (see merge_stream_short). */
#define RG_OMP_SHORT_BLOCK 16

/* How far ahead of the segment it is at merge_stream_short prefetches the
 * offsets, in bytes: each window prefetches the lines that came into that
 * distance since the last (a window of segments of length 1 only: that
 * far past its last segment), one prefetch a line.  The hardware's
 * prefetches seem to lag at each page.  AMD EPYC Zen 5, paired: with
 * prefetches in windows of length-1 segments only, all-length-1 segments
 * took 0.60x to 0.63x the time with 4 KB, and 8 KB another 0.95x to 0.98x
 * (2 KB 1.06x, 16 KB no better; a window's elements' worth of lines in
 * every window cost other lengths 1.01x to 1.08x).  Then the lines each
 * window reads, in every window: short, power-law and half-empty lengths
 * 0.73x to 1.04x, mostly 0.85x to 0.95x (4 KB and 16 KB no better).
 * Into L2 only on Intel CPUs (prefetch_l2). */
#define RG_OMP_OFFSETS_AHEAD 8192

/* merge_stream for a piece of short segments (fewer than
 * RG_OMP_WINDOW_SHORT elements each on average), in the same windows.
 * A window of segments of length 1 only is a sequence: with AVX-512 it is
 * streamed from registers (stream_affine), else made in the buffer.  Any
 * other window is a flood (flood_window) where the CPU has AVX-512.  Else,
 * or where the flood's marks would not fit in int32, each segment of the
 * window stores a whole block of RG_OMP_SHORT_BLOCK values from its start
 * into the buffer; segments go in order, so the next one overwrites the
 * spill, and an empty segment's block is overwritten by the segment that
 * starts where it does.  Only a segment longer than the block branches, so
 * random short lengths cost no mispredictions.  Then the buffer is
 * streamed out (64-byte stores where the CPU has AVX-512).  Built
 * per vector width (RG_OMP_CLONES): one or two AVX-512 stores a block
 * instead of eight SSE2 ones. */
#define RG_DEFINE_MERGE_STREAM_SHORT(ON, OT, IN, IT)                                       \
    RG_OMP_CLONES static void merge_stream_short_##ON##_##IN(                              \
        OT *restrict out, const IT *restrict o, int64_t i, int64_t last, int64_t k0,       \
        int64_t k1, rg_elem_kind kind, bool ids, bool stream)                              \
    {                                                                                      \
        OT buf[RG_OMP_WINDOW_CACHED + RG_OMP_SHORT_BLOCK] __attribute__((aligned(64)));    \
        int32_t marks[RG_OMP_WINDOW_CACHED];                                               \
        const int64_t win = stream ? RG_OMP_WINDOW : RG_OMP_WINDOW_CACHED;                 \
        bool lines = have_avx512(), l2 = prefetch_l2();                                    \
        uintptr_t pf = ((uintptr_t)(o + i) | 63) + 1 + RG_OMP_OFFSETS_AHEAD;               \
        int64_t epoch = o[i];                                                              \
        if (lines)                                                                         \
            memset(marks, 0, sizeof marks);                                                \
        for (int64_t kw = k0; kw < k1;) {                                                  \
            int64_t ke = (kw | (win - 1)) + 1; /* the next multiple: no division */        \
            ke = ke < k1 ? ke : k1;                                                        \
            int64_t n = ke - kw;                                                           \
            while ((int64_t)o[i + 1] <= kw) /* to the segment holding kw */                \
                i++;                                                                       \
            /* n segments of length 1 from kw: o[s] - s is the same for all (the last  \
             * offset first: one load turns away most windows that start a segment) */   \
            bool unit = (int64_t)o[i] == kw && i + n <= last + 1 && (int64_t)o[i + n] == ke; \
            if (unit) {                                                                    \
                int64_t diff = 0;                                                          \
                RG_OMP(simd reduction(| : diff))                                           \
                for (int64_t s = i; s <= i + n; s++)                                       \
                    diff |= ((int64_t)o[s] - s) ^ (kw - i);                                \
                unit = diff == 0;                                                          \
            }                                                                              \
            for (uintptr_t want = (uintptr_t)(o + i + (unit ? n : 0)) + RG_OMP_OFFSETS_AHEAD; \
                 pf < want; pf += 64)                                                      \
                prefetch_line_to(pf, l2);                                                  \
            if (unit && lines) {                                                           \
                stream_affine_##ON(out, kw, ke,                                            \
                                   kind == RG_ELEM_PARENTS ? i                             \
                                   : kind == RG_ELEM_LOCAL ? 0 : kw,                       \
                                   kind != RG_ELEM_LOCAL, stream);                         \
                i += n;                                                                    \
                kw = ke;                                                                   \
                continue;                                                                  \
            }                                                                              \
            int64_t j = -1;                                                                \
            if (lines && !unit) {                                                          \
                epoch = flood_epoch(marks, sizeof marks, epoch, o[i], ke);                 \
                j = flood_window_##ON##_##IN(out, marks, o, i, kw, ke, kind, ids, stream,  \
                                             epoch);                                       \
            }                                                                              \
            if (j >= 0) {                                                                  \
                i = j;                                                                     \
                kw = ke;                                                                   \
                continue;                                                                  \
            }                                                                              \
            if (unit) {                                                                    \
                RG_OMP(simd)                                                               \
                for (int64_t q = 0; q < n; q++)                                            \
                    buf[q] = (OT)(kind == RG_ELEM_PARENTS ? i + q                          \
                                  : kind == RG_ELEM_LOCAL ? 0 : kw + q);                   \
                i += n;                                                                    \
            } else {                                                                       \
                int64_t s = i;                                                             \
                for (int64_t start; (start = o[s]) < ke; s++) {                            \
                    int64_t b = start > kw ? start : kw, e = o[s + 1];                     \
                    OT *p = buf + (b - kw);                                                \
                    if (kind == RG_ELEM_LOCAL) {                                           \
                        RG_OMP(simd)                                                       \
                        for (int q = 0; q < RG_OMP_SHORT_BLOCK; q++)                       \
                            p[q] = (OT)(b - start + q);                                    \
                    } else {                                                               \
                        const OT v = (OT)(kind == RG_ELEM_PARENTS ? s : start);            \
                        RG_OMP(simd)                                                       \
                        for (int q = 0; q < RG_OMP_SHORT_BLOCK; q++)                       \
                            p[q] = v;                                                      \
                    }                                                                      \
                    if (e - b > RG_OMP_SHORT_BLOCK)                                        \
                        fill_##ON(buf, kw, b + RG_OMP_SHORT_BLOCK, e < ke ? e : ke, s,     \
                                  start, kind);                                            \
                }                                                                          \
                i = s - 1; /* the segment holding ke - 1 */                                \
            }                                                                              \
            stream_out(out + kw, buf, (size_t)n * sizeof(OT), lines, stream);              \
            kw = ke;                                                                       \
        }                                                                                  \
        if (stream)                                                                        \
            stream_fence();                                                                \
    }

/* Segments sampled by blocks_suffice. */
#define RG_OMP_SAMPLE 256

/* Whether merge_range writes the piece of segments i0 .. last (elements
 * k0 .. k1-1) at least as fast as a flood in cache (uniform 1..8 lengths:
 * a flood took 1.1x to 1.3x its time from 1.5 to 4 million int64
 * elements, AMD EPYC Zen 5): it takes one block per segment
 * without a mispredicted branch where the segments are no longer than a
 * block and average 2 or more elements (fewer go element by element).
 * Judged on the piece's first RG_OMP_SAMPLE segments. */
#define RG_DEFINE_BLOCKS_SUFFICE(N, T)                                                     \
    static bool blocks_suffice_##N(const T *o, int64_t i0, int64_t last, int64_t k0,       \
                                   int64_t k1)                                             \
    {                                                                                      \
        if (mostly_unit(i0, last, k0, k1))                                                 \
            return false;                                                                  \
        int64_t end = last - i0 < RG_OMP_SAMPLE ? last : i0 + RG_OMP_SAMPLE;               \
        bool longer = false;                                                               \
        for (int64_t s = i0; s < end; s++)                                                 \
            longer |= (int64_t)o[s + 1] - (int64_t)o[s] > RG_OMP_BLOCK;                    \
        return !longer;                                                                    \
    }
RG_EACH_TYPE(RG_DEFINE_BLOCKS_SUFFICE)

/* MERGE_PATH: the path through segment ends and elements (nsegs + nelems
 * steps) is cut into one equal piece per thread; a thread finds where its
 * piece starts and ends by binary search on the two diagonals, then writes
 * its elements k0 .. k1-1.  An output too large for the caches is streamed
 * in windows: merge_stream_short where the piece's segments are short,
 * else merge_stream.  One that fits is written by merge_range, but for a
 * piece of short segments where the CPU has AVX-512 and blocks do not
 * suffice: that takes merge_stream_short's floods with plain stores (2^20
 * int64 elements, AMD EPYC Zen 5: parents and starts 1.4x to 1.6x faster
 * on power-law lengths and 2.2x to 2.9x on half-empty ones, local index
 * 1.8x to 3.6x).  Pieces split segments, so no length distribution
 * unbalances the threads. */
#define RG_DEFINE_MERGE_PATH(ON, OT, IN, IT)                                               \
    static void merge_path_##ON##_##IN(void *out_, const void *offsets, int64_t nsegs,     \
                                       int64_t nelems, rg_elem_kind kind, int team,        \
                                       int64_t *scratch)                                   \
    {                                                                                      \
        OT *restrict out = out_;                                                           \
        const IT *restrict o = offsets;                                                    \
        bool stream = stream_output((size_t)nelems * sizeof(OT));                          \
        (void)scratch, (void)team;                                                         \
        RG_OMP(parallel num_threads(team))                                                 \
        {                                                                                  \
            int t = thread_id(), nt = team_threads();                                      \
            size_t steps = (size_t)nsegs + (size_t)nelems;                                 \
            int64_t d0 = (int64_t)part_begin(steps, t, nt);                                \
            int64_t d1 = (int64_t)part_begin(steps, t + 1, nt);                            \
            int64_t i0 = path_search_##IN(o, nsegs, nelems, d0);                           \
            int64_t i1 = path_search_##IN(o, nsegs, nelems, d1);                           \
            int64_t k0 = d0 - i0, k1 = d1 - i1;                                            \
            int64_t last = i1 < nsegs ? i1 : nsegs - 1;                                    \
            bool short_ = k1 - k0 < RG_OMP_WINDOW_SHORT * (last - i0 + 1);                 \
            if (short_ && (stream || (have_avx512() &&                                     \
                                      !blocks_suffice_##IN(o, i0, last, k0, k1))))         \
                merge_stream_short_##ON##_##IN(out, o, i0, last, k0, k1, kind,             \
                                               nsegs <= INT32_MAX, stream);                \
            else if (stream)                                                               \
                merge_stream_##ON##_##IN(out, o, i0, last, k0, k1, kind, nsegs <= INT32_MAX); \
            else                                                                           \
                merge_range_##ON##_##IN(out, 0, o, i0, last, k0, k1, kind);                \
        }                                                                                  \
    }

/* Regular offsets: every one of the nsegs segments has len elements, as
 * the offsets check found (its "longest" with longest * nsegs = nelems).
 * Short ones (up to 64 elements for int64 output, 32 for int32: a window
 * then holds a 64-byte line's count of whole segments, so every window
 * starts on a line) are written without reading the offsets, which for
 * segments of length 1 are as large as the output: each window is a
 * pattern (j / len, j % len or j / len * len) plus the window's first
 * segment, 0 or first element.  Longer segments go to the merge path,
 * which reads a fraction 1 / len more than it writes. */
#define RG_DEFINE_REGULAR_FILL(N, T)                                                       \
    static void regular_fill_##N(void *out_, int64_t nsegs, int64_t len, rg_elem_kind kind, \
                                 int team)                                                 \
    {                                                                                      \
        T *restrict out = out_;                                                            \
        enum { LINE = 64 / sizeof(T) };                                                    \
        const int64_t per = RG_OMP_WINDOW / (LINE * len) * LINE; /* segments a window */   \
        const int64_t nwin = (nsegs + per - 1) / per;                                      \
        const bool stream = stream_output((size_t)(nsegs * len) * sizeof(T));              \
        const bool lines = have_avx512();                                                  \
        RG_OMP(parallel num_threads(team))                                                 \
        {                                                                                  \
            T pattern[RG_OMP_WINDOW] __attribute__((aligned(64)));                         \
            T buf[RG_OMP_WINDOW] __attribute__((aligned(64)));                             \
            /* the whole window: what is read is then plainly set */                       \
            for (int64_t j = 0; j < RG_OMP_WINDOW; j++)                                    \
                pattern[j] = (T)(kind == RG_ELEM_PARENTS ? j / len                         \
                                 : kind == RG_ELEM_LOCAL ? j % len : j / len * len);       \
            int t = thread_id(), nt = team_threads();                                      \
            int64_t s1 = (int64_t)part_begin((size_t)nwin, t + 1, nt) * per;               \
            s1 = s1 < nsegs ? s1 : nsegs;                                                  \
            for (int64_t s = (int64_t)part_begin((size_t)nwin, t, nt) * per; s < s1;       \
                 s += per) {                                                               \
                int64_t k = s * len, n = (s1 - s < per ? s1 - s : per) * len;              \
                const T base = (T)(kind == RG_ELEM_PARENTS ? s                             \
                                   : kind == RG_ELEM_LOCAL ? 0 : k);                       \
                if (stream && lines && !((uintptr_t)out & 63)) {                           \
                    stream_pattern_##N(out + k, pattern, n, base);                         \
                    continue;                                                              \
                }                                                                          \
                T *dst = stream ? buf : out + k;                                           \
                RG_OMP(simd)                                                               \
                for (int64_t j = 0; j < n; j++)                                            \
                    dst[j] = (T)(pattern[j] + base);                                       \
                if (stream)                                                                \
                    stream_out(out + k, buf, (size_t)n * sizeof(T), lines, true);          \
            }                                                                              \
            if (stream)                                                                    \
                stream_fence();                                                            \
        }                                                                                  \
    }

/* Whether regular_fill takes segments of len elements into out of dtype. */
static bool regular_short(int64_t len, rg_dtype out)
{
    return len > 0 && len <= RG_OMP_WINDOW / (64 / (int64_t)rg_dtype_size(out));
}

RG_EACH_TYPE(RG_DEFINE_REGULAR_FILL)
RG_EACH_PAIR(RG_DEFINE_BSEARCH)
RG_EACH_PAIR(RG_DEFINE_PER_SEGMENT)
RG_EACH_PAIR(RG_DEFINE_FLOOD)
RG_EACH_PAIR(RG_DEFINE_MERGE_RANGE)
RG_EACH_PAIR(RG_DEFINE_FLOOD_WINDOW)
RG_EACH_PAIR(RG_DEFINE_MERGE_STREAM)
RG_EACH_PAIR(RG_DEFINE_MERGE_STREAM_SHORT)
RG_EACH_PAIR(RG_DEFINE_MERGE_PATH)

/* ------------------------------------------------------------------------
 * The rg_ops entries: pick the instance for the dtypes and run it.
 * ------------------------------------------------------------------------ */

static rg_status dtype_error(rg_context *ctx, const char *op)
{
    return rg_set_error(ctx, RG_EDTYPE, "OpenMP backend: %s takes int32 or int64 arrays", op);
}

/* ------------------------------------------------------------------------
 * Host storage.  Large arrays get a mapping of their own (rg_host_map):
 * every fresh output of a big op pays the first touch of its pages, which
 * huge pages make several times cheaper.  A fresh anonymous mapping reads as
 * zeros, so zero-filled arrays cost nothing more, and pages never touched
 * (the spare rows of an over-allocated result) never take memory.
 * a->host_mapped tells release, trim and grow which kind it is.
 * ------------------------------------------------------------------------ */

#if defined(MADV_HUGEPAGE) && defined(MAP_ANONYMOUS) && defined(MREMAP_MAYMOVE)
#define RG_OMP_MAP_MIN RG_HOST_MAP_MIN

/* The mappings of the two largest arrays freed last, up to RG_OMP_SPARE_MAX
 * bytes each, are kept for the next large arrays whose contents will be
 * overwritten anyway (rg_nonzero's result, rg_array_from_host): the first
 * writes to fresh pages pay for the kernel zeroing them, about 75 ms per
 * 800 MB on a 2-core Xeon, four times the write itself (BENCHMARKS.md).
 * Two, because ops such as rg_segment_nonzero make two large results, and a
 * loop of them would otherwise fault on one of the two every time.  Growing
 * arrays leave and take spares from 2 MiB (omp_array_grow).  Each
 * mapping heads itself (spare_head), so the list needs no memory of its own
 * (ctx->impl points at the first).  A context is used by one thread at a
 * time, so no lock.  rg_context_free gives them back. */
#define RG_OMP_SPARE_MAX ((size_t)1 << 30)
#define RG_OMP_SPARES 2

typedef struct spare_head {
    size_t len; /* bytes mapped */
    char *next; /* the next spare, or NULL */
} spare_head;

static spare_head head_of(const char *spare)
{
    spare_head h;
    memcpy(&h, spare, sizeof h);
    return h;
}

/* The spares into list (room for RG_OMP_SPARES + 1); their count. */
static size_t get_spares(const rg_context *ctx, char **list)
{
    size_t n = 0;
    for (char *s = ctx->impl; s; s = head_of(s).next)
        list[n++] = s;
    return n;
}

/* Makes list[0 .. n) the spares, in that order. */
static void set_spares(rg_context *ctx, char **list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        spare_head h = head_of(list[i]);
        h.next = i + 1 < n ? list[i + 1] : NULL;
        memcpy(list[i], &h, sizeof h);
    }
    ctx->impl = n > 0 ? list[0] : NULL;
}

/* The index in list of the smallest spare of at least len bytes (best fit,
 * so that a larger one stays for a larger array), or n if none. */
static size_t fitting_spare(char *const *list, size_t n, size_t len)
{
    size_t best = n;
    for (size_t i = 0; i < n; i++)
        if (head_of(list[i]).len >= len && (best == n || head_of(list[i]).len < head_of(list[best]).len))
            best = i;
    return best;
}

static void drop_spare(char **list, size_t *n, size_t i)
{
    for (size_t k = i; k + 1 < *n; k++)
        list[k] = list[k + 1];
    (*n)--;
}

/* The smallest spare mapping of len to max_len bytes, whole (its bytes in
 * *have), or NULL. */
static char *take_spare_whole(rg_context *ctx, size_t len, size_t max_len, size_t *have)
{
    char *list[RG_OMP_SPARES + 1];
    size_t n = get_spares(ctx, list), i = fitting_spare(list, n, len);
    if (i == n || head_of(list[i]).len > max_len)
        return NULL;
    char *spare = list[i];
    *have = head_of(spare).len;
    drop_spare(list, &n, i);
    set_spares(ctx, list, n);
    return spare;
}

/* A spare mapping of at least len bytes, cut to len, or NULL. */
static void *take_spare(rg_context *ctx, size_t len)
{
    size_t have = 0;
    char *spare = take_spare_whole(ctx, len, SIZE_MAX, &have);
    if (spare && have > len)
        munmap(spare + len, have - len);
    return spare;
}

/* Keeps the mapping p of len bytes among the spares; past RG_OMP_SPARES,
 * the smallest goes back. */
static void keep_spare(rg_context *ctx, void *p, size_t len)
{
    /* Below RG_HOST_ALLOC_MAP_MIN (an array shrunk in place) no array would
     * take it: arrays from RG_OMP_MAP_MIN, growing ones from that. */
    if (len < RG_HOST_ALLOC_MAP_MIN || len > RG_OMP_SPARE_MAX) {
        munmap(p, len);
        return;
    }
    char *list[RG_OMP_SPARES + 1];
    size_t n = get_spares(ctx, list);
    spare_head h = {len, NULL};
    memcpy(p, &h, sizeof h);
    list[n++] = p;
    if (n > RG_OMP_SPARES) {
        size_t i = fitting_spare(list, n, 0);
        munmap(list[i], head_of(list[i]).len);
        drop_spare(list, &n, i);
    }
    set_spares(ctx, list, n);
}
#endif

/* The bytes of the spare an array of at least want bytes would take (the
 * smallest that large, and at least RG_OMP_MAP_MIN: smaller ones, which
 * growing arrays left, are taken only by growing arrays), or 0. */
size_t rg_omp_spare_fit(const rg_context *ctx, size_t want)
{
#ifdef RG_OMP_MAP_MIN
    char *list[RG_OMP_SPARES + 1];
    size_t n = get_spares(ctx, list);
    size_t i = fitting_spare(list, n, want > RG_OMP_MAP_MIN ? want : RG_OMP_MAP_MIN);
    return i < n ? head_of(list[i]).len : 0;
#else
    (void)ctx, (void)want;
    return 0;
#endif
}

/* The spare mappings are all an OpenMP context keeps. */
static size_t omp_scratch_bytes(const rg_context *ctx)
{
    size_t sum = 0;
#ifdef RG_OMP_MAP_MIN
    char *list[RG_OMP_SPARES + 1];
    size_t n = get_spares(ctx, list);
    for (size_t i = 0; i < n; i++)
        sum += head_of(list[i]).len;
#else
    (void)ctx;
#endif
    return sum;
}

static void omp_scratch_free(rg_context *ctx)
{
#ifdef RG_OMP_MAP_MIN
    char *list[RG_OMP_SPARES + 1];
    size_t n = get_spares(ctx, list);
    for (size_t i = 0; i < n; i++)
        munmap(list[i], head_of(list[i]).len);
    ctx->impl = NULL;
#else
    (void)ctx; /* no private state */
#endif
}

static void omp_destroy(rg_context *ctx)
{
    omp_scratch_free(ctx);
}

static rg_status omp_array_alloc(rg_array *a, bool zero)
{
    a->host = NULL;
    a->host_mapped = false;
    if (a->nbytes == 0)
        return RG_OK;
#ifdef RG_OMP_MAP_MIN
    if (a->nbytes >= RG_OMP_MAP_MIN) {
        if (!zero)
            a->host = take_spare(a->ctx, rg_host_page_round(a->nbytes));
        if (!a->host)
            a->host = rg_host_map(a->nbytes);
        a->host_mapped = a->host != NULL;
    }
#endif
    if (!a->host)
        a->host = zero ? calloc(1, a->nbytes) : malloc(a->nbytes);
    if (!a->host)
        return rg_set_error(a->ctx, RG_ENOMEM,
                            "OpenMP backend: cannot allocate %zu bytes for %zu %s elements",
                            a->nbytes, a->length, rg_dtype_name(a->dtype));
    return RG_OK;
}

static void omp_array_release(rg_array *a)
{
#ifdef RG_OMP_MAP_MIN
    if (a->host_mapped) {
        keep_spare(a->ctx, a->host, rg_host_page_round(a->capacity * rg_dtype_size(a->dtype)));
        a->host = NULL;
        a->host_mapped = false;
        return;
    }
#endif
    free(a->host);
    a->host = NULL;
}

/* Gives back the memory past the new end; if realloc cannot, the old block serves. */
static bool omp_array_trim(rg_array *a, size_t old_nbytes)
{
#ifdef RG_OMP_MAP_MIN
    if (a->host_mapped) { /* the whole pages past the new end go back */
        size_t keep = rg_host_page_round(a->nbytes), old = rg_host_page_round(old_nbytes);
        if (old > keep)
            munmap((char *)a->host + keep, old - keep);
        if (keep == 0) {
            a->host = NULL;
            a->host_mapped = false;
        }
        return true;
    }
#endif
    if (a->nbytes == 0) {
        free(a->host);
        a->host = NULL;
        return true;
    }
    void *smaller = realloc(a->host, a->nbytes);
    if (smaller)
        a->host = smaller;
    return smaller != NULL;
}

static rg_status omp_array_write(rg_array *a, size_t byte_off, const void *src, size_t nbytes)
{
    if (nbytes > 0)
        memcpy((char *)a->host + byte_off, src, nbytes);
    return RG_OK;
}

static rg_status omp_array_read(const rg_array *a, size_t byte_off, void *dst, size_t nbytes)
{
    if (nbytes > 0)
        memcpy(dst, (const char *)a->host + byte_off, nbytes);
    return RG_OK;
}

/* fill: n elements of size bytes (1, 2, 4 or 8), each equal to value, with
 * streaming stores of a 16-byte pattern; the team splits by elements. */
static void stream_fill(void *dst, size_t n, const void *value, size_t size)
{
#if RG_OMP_HAVE_STREAM
    unsigned char pattern[16];
    for (size_t j = 0; j < sizeof pattern; j += size)
        memcpy(pattern + j, value, size);
    const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)pattern);
    RG_OMP(parallel num_threads(team_size(n)))
    {
        int t = thread_id(), nt = team_threads();
        char *p = (char *)dst + part_begin(n, t, nt) * size;
        char *end = (char *)dst + part_begin(n, t + 1, nt) * size;
        for (; p < end && ((uintptr_t)p & 15); p += size)
            memcpy(p, value, size);
        for (; end - p >= 16; p += 16)
            _mm_stream_si128((__m128i *)(void *)p, v);
        for (; p < end; p += size)
            memcpy(p, value, size);
        stream_fence();
    }
#else
    (void)dst, (void)n, (void)value, (void)size;
#endif
}

/* fill: a typed store per element width, so the loop vectorises; streamed
 * when the array is too large for the caches. */
#define RG_DEFINE_FILL_WIDTH(BITS)                                                         \
    static void fill_w##BITS(void *p, size_t n, const void *value)                         \
    {                                                                                      \
        uint##BITS##_t v, *dst = p;                                                        \
        if (stream_output(n * sizeof v)) {                                                 \
            stream_fill(p, n, value, sizeof v);                                            \
            return;                                                                        \
        }                                                                                  \
        memcpy(&v, value, sizeof v);                                                       \
        RG_OMP(parallel for simd num_threads(team_size(n)) schedule(static))               \
        for (size_t i = 0; i < n; i++)                                                     \
            dst[i] = v;                                                                    \
    }
RG_DEFINE_FILL_WIDTH(8)
RG_DEFINE_FILL_WIDTH(16)
RG_DEFINE_FILL_WIDTH(32)
RG_DEFINE_FILL_WIDTH(64)

static rg_status omp_array_fill(rg_array *a, const void *value)
{
    size_t size = rg_dtype_size(a->dtype);
    void (*fn)(void *, size_t, const void *) =
        size == 1 ? fill_w8 : size == 2 ? fill_w16 : size == 4 ? fill_w32 : fill_w64;
    fn(a->host, a->length, value);
    return RG_OK;
}

/* copy: one contiguous byte range per thread. */
static rg_status omp_array_copy(rg_array *dst, const rg_array *src)
{
    size_t n = src->nbytes;
    RG_OMP(parallel num_threads(team_size(n / 8)))
    {
        int t = thread_id(), nt = team_threads();
        size_t begin = part_begin(n, t, nt), end = part_begin(n, t + 1, nt);
        memcpy((char *)dst->host + begin, (const char *)src->host + begin, end - begin);
    }
    return RG_OK;
}

static rg_status omp_finish(rg_context *ctx)
{
    (void)ctx; /* loops are done when their call returns */
    return RG_OK;
}

static rg_status omp_offsets_check(const rg_array *offsets, int64_t *first_bad,
                                   int64_t *longest)
{
    /* The longest only where all segments are equal (the OpenMP heuristics
     * do not use it; regular_fill does). */
    static int64_t (*const fns[2])(const void *, size_t, int64_t *) = {offsets_check_i32,
                                                                       offsets_check_i64};
    *longest = -1;
    if (!is_index_dtype(offsets->dtype))
        return dtype_error(offsets->ctx, "offsets_check");
    *first_bad = fns[type_index(offsets->dtype)](offsets->host, offsets->length, longest);
    return RG_OK;
}

static rg_status omp_lengths(rg_array *lengths, const rg_array *offsets)
{
    static void (*const fns[4])(void *, const void *, size_t) = RG_PAIR_TABLE(lengths);
    if (!is_index_dtype(lengths->dtype) || !is_index_dtype(offsets->dtype))
        return dtype_error(offsets->ctx, "lengths");
    if (lengths->length > 0)
        fns[pair_index(lengths->dtype, offsets->dtype)](lengths->host, offsets->host,
                                                        lengths->length);
    return RG_OK;
}

static rg_status omp_lengths_total(const rg_array *lengths, int64_t *first_negative,
                                   uint64_t *total, int64_t *longest)
{
    /* As omp_offsets_check: the longest only where all lengths are equal. */
    static void (*const fns[2])(const void *, size_t, int64_t *, uint64_t *, int64_t *) = {
        lengths_total_i32, lengths_total_i64};
    if (!is_index_dtype(lengths->dtype)) {
        *longest = -1;
        return dtype_error(lengths->ctx, "lengths_total");
    }
    *first_negative = -1;
    *total = 0;
    *longest = 0; /* no segments */
    if (lengths->length > 0)
        fns[type_index(lengths->dtype)](lengths->host, lengths->length, first_negative, total,
                                        longest);
    return RG_OK;
}

static rg_status omp_offsets_from_lengths(rg_array *offsets, const rg_array *lengths)
{
    static void (*const fns[4])(void *, const void *, size_t, scan_desc *) =
        RG_PAIR_TABLE(from_lengths);
    if (!is_index_dtype(offsets->dtype) || !is_index_dtype(lengths->dtype))
        return dtype_error(offsets->ctx, "offsets_from_lengths");
    size_t n = lengths->length, nblocks = (n + RG_SCAN_BLOCK - 1) / RG_SCAN_BLOCK;
    scan_desc *d = calloc(nblocks, sizeof *d);
    if (!d)
        return rg_set_error(offsets->ctx, RG_ENOMEM,
                            "OpenMP backend: out of host memory for %zu scan blocks", nblocks);
    fns[pair_index(offsets->dtype, lengths->dtype)](offsets->host, lengths->host, n, d);
    free(d);
    return RG_OK;
}

static rg_status omp_elem_segments(rg_array *out, const rg_array *offsets, rg_strategy strategy,
                                   rg_elem_kind kind)
{
    static const elem_fn fns[][4] = {
        [RG_STRATEGY_BSEARCH] = RG_PAIR_TABLE(bsearch),
        [RG_STRATEGY_PER_SEGMENT] = RG_PAIR_TABLE(per_segment),
        [RG_STRATEGY_FLOOD] = RG_PAIR_TABLE(flood),
        [RG_STRATEGY_MERGE_PATH] = RG_PAIR_TABLE(merge_path),
    };
    rg_context *ctx = offsets->ctx;
    if (!is_index_dtype(out->dtype) || !is_index_dtype(offsets->dtype))
        return dtype_error(ctx, "elem_segments");
    if (strategy < RG_STRATEGY_BSEARCH || strategy > RG_STRATEGY_MERGE_PATH)
        return rg_set_error(ctx, RG_EINVAL, "OpenMP backend: no strategy %d", (int)strategy);
    if (kind != RG_ELEM_PARENTS && kind != RG_ELEM_LOCAL && kind != RG_ELEM_STARTS)
        return rg_set_error(ctx, RG_EINVAL, "OpenMP backend: no element kind %d", (int)kind);
    int64_t nsegs = (int64_t)offsets->length - 1, nelems = (int64_t)out->length;
    if (nelems == 0)
        return RG_OK;
    int team = team_size((size_t)nsegs + (size_t)nelems);
    int64_t len = regular_length(offsets, nelems);
    if (strategy == RG_STRATEGY_MERGE_PATH && regular_short(len, out->dtype)) {
        static void (*const regular[2])(void *, int64_t, int64_t, rg_elem_kind, int) = {
            regular_fill_i32, regular_fill_i64};
        regular[type_index(out->dtype)](out->host, nsegs, len, kind, team);
        return RG_OK;
    }
    int64_t *scratch = NULL;
    if (strategy == RG_STRATEGY_FLOOD && !(scratch = team_scratch(ctx, team)))
        return RG_ENOMEM;
    fns[strategy][pair_index(out->dtype, offsets->dtype)](out->host, offsets->host, nsegs,
                                                          nelems, kind, team, scratch);
    free(scratch);
    return RG_OK;
}

/* An int32/int64 element as int64, and back: compose works on small arrays
 * (one entry per segment), so a loop-invariant branch beats 8 instances. */
static inline int64_t load_index(const void *p, bool wide, size_t i)
{
    return wide ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
}

static inline void store_index(void *p, bool wide, size_t i, int64_t v)
{
    if (wide)
        ((int64_t *)p)[i] = v;
    else
        ((int32_t *)p)[i] = (int32_t)v;
}

static rg_status omp_compose(rg_array *out, const rg_array *outer, const rg_array *inner)
{
    if (!is_index_dtype(out->dtype) || !is_index_dtype(outer->dtype) ||
        (inner && !is_index_dtype(inner->dtype)))
        return dtype_error(out->ctx, "compose");
    bool wout = out->dtype == RG_INT64, wouter = outer->dtype == RG_INT64;
    bool winner = inner && inner->dtype == RG_INT64;
    size_t n = out->length;
    RG_OMP(parallel for num_threads(team_size(n)) schedule(static))
    for (size_t i = 0; i < n; i++) {
        int64_t v = load_index(outer->host, wouter, i);
        if (inner)
            v = load_index(inner->host, winner, (size_t)v);
        store_index(out->host, wout, i, v);
    }
    return RG_OK;
}

/* ------------------------------------------------------------------------
 * Arithmetic with a scalar, one instance per numeric dtype.  KIND is 'i'
 * (signed integer), 'u' (unsigned integer) or 'f' (floating point).
 * Integers wrap modulo 2^bits: +, - and * are computed in uint64_t, where
 * wrapping is defined (narrower types would be promoted to int, and
 * uint16 * uint16 can overflow int), then truncated.  The front end refused
 * division by zero; x / -1 is the one quotient that overflows (MIN / -1),
 * so it is computed as a wrapping 0 - x.  The constant KIND tests fold away.
 * ------------------------------------------------------------------------ */

#define RG_EACH_NUMERIC(X)                                                                 \
    X(i8, int8_t, 'i') X(i16, int16_t, 'i') X(i32, int32_t, 'i') X(i64, int64_t, 'i')      \
    X(u8, uint8_t, 'u') X(u16, uint16_t, 'u') X(u32, uint32_t, 'u') X(u64, uint64_t, 'u')  \
    X(f32, float, 'f') X(f64, double, 'f')

#define RG_SCALAR_LOOP(T, EXPR)                                                            \
    RG_OMP(parallel for schedule(static) num_threads(team_size(n)))                        \
    for (size_t i = 0; i < n; i++) {                                                       \
        T x = a[i];                                                                        \
        a[i] = (T)(EXPR);                                                                  \
    }

#define RG_WRAP(T, x, OP, v) ((T)((uint64_t)(x) OP (uint64_t)(v)))

#define RG_DEFINE_SCALAR(N, T, KIND)                                                       \
    static void scalar_##N(void *data, size_t n, const void *value, rg_arith op)           \
    {                                                                                      \
        T *restrict a = data;                                                              \
        T v;                                                                               \
        memcpy(&v, value, sizeof v);                                                       \
        switch (op) {                                                                      \
        case RG_ARITH_ADD:                                                                 \
            RG_SCALAR_LOOP(T, KIND == 'f' ? x + v : RG_WRAP(T, x, +, v))                   \
            break;                                                                         \
        case RG_ARITH_SUB:                                                                 \
            RG_SCALAR_LOOP(T, KIND == 'f' ? x - v : RG_WRAP(T, x, -, v))                   \
            break;                                                                         \
        case RG_ARITH_MUL:                                                                 \
            RG_SCALAR_LOOP(T, KIND == 'f' ? x * v : RG_WRAP(T, x, *, v))                   \
            break;                                                                         \
        case RG_ARITH_DIV:                                                                 \
            if (KIND == 'i' && v == (T)-1)                                                 \
                RG_SCALAR_LOOP(T, RG_WRAP(T, 0, -, x))                                     \
            else                                                                           \
                RG_SCALAR_LOOP(T, x / v)                                                   \
            break;                                                                         \
        }                                                                                  \
    }

RG_EACH_NUMERIC(RG_DEFINE_SCALAR)

typedef void (*scalar_fn)(void *, size_t, const void *, rg_arith);

static scalar_fn scalar_instance(rg_dtype dtype)
{
    switch (dtype) {
#define RG_SCALAR_CASE(DT, N) case DT: return scalar_##N;
    RG_SCALAR_CASE(RG_INT8, i8) RG_SCALAR_CASE(RG_INT16, i16)
    RG_SCALAR_CASE(RG_INT32, i32) RG_SCALAR_CASE(RG_INT64, i64)
    RG_SCALAR_CASE(RG_UINT8, u8) RG_SCALAR_CASE(RG_UINT16, u16)
    RG_SCALAR_CASE(RG_UINT32, u32) RG_SCALAR_CASE(RG_UINT64, u64)
    RG_SCALAR_CASE(RG_FLOAT32, f32) RG_SCALAR_CASE(RG_FLOAT64, f64)
#undef RG_SCALAR_CASE
    case RG_BOOL: break;
    }
    return NULL;
}

static rg_status omp_scalar(rg_array *a, rg_arith op, const void *value)
{
    scalar_fn fn = scalar_instance(a->dtype);
    if (!fn)
        return rg_set_error(a->ctx, RG_EDTYPE, "OpenMP backend: no arithmetic on %s arrays",
                            rg_dtype_name(a->dtype));
    fn(a->host, a->length, value, op);
    return RG_OK;
}

/* Growing arrays (a list's two, and a result that outgrew its guess) move
 * into mappings from RG_HOST_ALLOC_MAP_MIN: below RG_OMP_MAP_MIN glibc's
 * realloc gives them 4 KiB pages, fresh or reused depending on what the
 * process freed before (BENCHMARKS.md, seventeenth session).  A spare of up
 * to twice the size asked for is taken whole, as the new capacity, so that a
 * list made again after one was freed grows into its memory. */
#define RG_OMP_GROW_SPARE_SLACK 2

static rg_status omp_array_grow(rg_array *a, size_t old_capacity)
{
    size_t size = rg_dtype_size(a->dtype);
    size_t old_bytes = old_capacity * size, nbytes = a->capacity * size;
#ifdef RG_OMP_MAP_MIN
    size_t want = rg_host_page_round(nbytes), have = 0;
    char *spare = nbytes >= RG_HOST_ALLOC_MAP_MIN && want <= SIZE_MAX / RG_OMP_GROW_SPARE_SLACK
                      ? take_spare_whole(a->ctx, want, want * RG_OMP_GROW_SPARE_SLACK, &have)
                      : NULL;
    if (spare) { /* its bytes are a freed array's: zero all past the old ones */
        if (old_bytes > 0)
            memcpy(spare, a->host, old_bytes);
        memset(spare + old_bytes, 0, have - old_bytes);
        if (a->host_mapped)
            keep_spare(a->ctx, a->host, rg_host_page_round(old_bytes));
        else
            free(a->host);
        a->host = spare;
        a->host_mapped = true;
        a->capacity = have / size; /* whole pages of 1, 2, 4 or 8-byte elements */
        return RG_OK;
    }
    if (a->host_mapped) {
        /* The pages moved or added are the mapping's; new pages read as
         * zeros, but the last old page may hold bytes from before a trim. */
        size_t old_len = rg_host_page_round(old_bytes);
        void *grown = mremap(a->host, old_len, rg_host_page_round(nbytes), MREMAP_MAYMOVE);
        if (grown == MAP_FAILED)
            return rg_set_error(a->ctx, RG_ENOMEM,
                                "OpenMP backend: cannot grow an array of %s to %zu bytes",
                                rg_dtype_name(a->dtype), nbytes);
        memset((char *)grown + old_bytes, 0, (old_len < nbytes ? old_len : nbytes) - old_bytes);
        a->host = grown;
        return RG_OK;
    }
    if (nbytes >= RG_HOST_ALLOC_MAP_MIN) {
        /* Grown to mapping size (a list's content starts empty): move into a
         * fresh huge-page mapping.  Its pages read as zeros, so only the old
         * bytes are copied. */
        char *mapped = rg_host_map(nbytes);
        if (mapped) {
            if (old_bytes > 0)
                memcpy(mapped, a->host, old_bytes);
            free(a->host);
            a->host = mapped;
            a->host_mapped = true;
            return RG_OK;
        }
    }
#endif
    void *grown = realloc(a->host, nbytes > 0 ? nbytes : 1);
    if (!grown)
        return rg_set_error(a->ctx, RG_ENOMEM,
                            "OpenMP backend: cannot grow an array of %s to %zu bytes",
                            rg_dtype_name(a->dtype), nbytes);
    memset((char *)grown + old_bytes, 0, nbytes - old_bytes);
    a->host = grown;
    return RG_OK;
}

static const rg_ops omp_ops = {
    .destroy = omp_destroy,
    .array_alloc = omp_array_alloc,
    .array_release = omp_array_release,
    .array_write = omp_array_write,
    .array_read = omp_array_read,
    .array_fill = omp_array_fill,
    .array_copy = omp_array_copy,
    .finish = omp_finish,
    .scratch_bytes = omp_scratch_bytes,
    .scratch_free = omp_scratch_free,
    .offsets_check = omp_offsets_check,
    .lengths = omp_lengths,
    .lengths_total = omp_lengths_total,
    .offsets_from_lengths = omp_offsets_from_lengths,
    .elem_segments = omp_elem_segments,
    .compose = omp_compose,
    .array_trim = omp_array_trim,
    .nonzero_count = rg_omp_nonzero_count,
    .nonzero = rg_omp_nonzero,
    .nonzero_into = rg_omp_nonzero_into,
    .segment_nonzero_all = rg_omp_segment_nonzero,
    .array_grow = omp_array_grow,
    .scalar = omp_scalar,
    .segment_reduce = rg_omp_segment_reduce,
};

rg_status rg_omp_init(rg_context *ctx)
{
    /* Read again at each op (stream_output) and at the first (RAGGED_AVX512,
     * RAGGED_AVX512_VBMI); checked here. */
    rg_status st = rg_env_switch(ctx, "RAGGED_OMP_STREAM", NULL);
    if (st == RG_OK)
        st = rg_env_switch(ctx, "RAGGED_AVX512", NULL);
    if (st == RG_OK)
        st = rg_env_switch(ctx, "RAGGED_AVX512_VBMI", NULL);
    if (st != RG_OK)
        return st;
    ctx->ops = &omp_ops;
    ctx->impl = NULL;
    ctx->device_kind = RG_DEVICE_CPU;
#ifdef _OPENMP
    int n = omp_get_max_threads();
    snprintf(ctx->device, sizeof ctx->device, "OpenMP, %d thread%s", n, n == 1 ? "" : "s");
#else
    snprintf(ctx->device, sizeof ctx->device, "serial loops, 1 thread (built without OpenMP)");
#endif
    return RG_OK;
}
