/* reduce.c — the OpenMP backend's segmented reductions: an element split over threads, or one
 * loop iteration per segment when asked for. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "omp.h"

/* The reductions other than count fall into three families with one
 * accumulator type each; an instance per (family, dtype) takes the op
 * within its family as a run-time mode, tested outside the element loops:
 *   ARITH    sum 0, prod 1          (64-bit integers, or the float type)
 *   EXTREME  min 0, max 1, argmin 2, argmax 3   (value and position)
 *   LOGIC    count_nonzero 0, any 1, all 2      (a count of nonzero elements:
 *            any is count > 0, all is count == length) */
typedef enum rg_reduce_family {
    RG_FAMILY_ARITH = 0,
    RG_FAMILY_EXTREME = 1,
    RG_FAMILY_LOGIC = 2
} rg_reduce_family;

/* The family of op (not RG_REDUCE_COUNT) and its mode within the family. */
static inline rg_reduce_family rg_reduce_family_of(rg_reduce_op op, int *mode)
{
    switch (op) {
    case RG_REDUCE_PROD: *mode = 1; return RG_FAMILY_ARITH;
    case RG_REDUCE_MIN: *mode = 0; return RG_FAMILY_EXTREME;
    case RG_REDUCE_MAX: *mode = 1; return RG_FAMILY_EXTREME;
    case RG_REDUCE_ARGMIN: *mode = 2; return RG_FAMILY_EXTREME;
    case RG_REDUCE_ARGMAX: *mode = 3; return RG_FAMILY_EXTREME;
    case RG_REDUCE_COUNT_NONZERO: *mode = 0; return RG_FAMILY_LOGIC;
    case RG_REDUCE_ANY: *mode = 1; return RG_FAMILY_LOGIC;
    case RG_REDUCE_ALL: *mode = 2; return RG_FAMILY_LOGIC;
    default: *mode = 0; return RG_FAMILY_ARITH; /* sum */
    }
}

/* The widest window (below): segments up to this long are reduced without a
 * loop that ends at the segment's end. */
#define RG_WIDE 16

/* The windows must be inlined where their width is a constant: gcc leaves the
 * larger ones out of line, where every loop runs to a variable width. */
#define RG_WINDOW static inline RG_ALWAYS_INLINE

/* The long-segment path of min and max, kept out of line and marked
 * unlikely: inlined beside the short segments' fold, it made gcc compile
 * that fold 1.1x to 1.6x slower (min over segments of 0 to 15 or 64 to 199
 * elements); out of line the cost there is within 1.05x. */
#if defined(__GNUC__)
#define RG_NOINLINE static __attribute__((noinline, cold))
#define RG_UNLIKELY(c) __builtin_expect(!!(c), 0)
#else
#define RG_NOINLINE static
#define RG_UNLIKELY(c) (c)
#endif

/* How far the folds of long segments (sums and products of 64 or more
 * elements, extremes in lanes) prefetch ahead, in bytes: one line per line
 * read.  The hardware's prefetches seem to start late on each new segment
 * and at each page.  AMD EPYC Zen 5, paired: power-law float64 sums took
 * 0.83x the time with it, min and argmax 0.86x, long and huge segments
 * 0.78x to 0.97x; 2, 3, 6 or 8 KB ahead took power-law sums 1.09x to
 * 1.14x the time of 4 KB. */
#define RG_RANGE_AHEAD 4096
#define RG_RANGE_PREFETCH(p) prefetch_line((uintptr_t)(const void *)(p) + RG_RANGE_AHEAD)
/* The same for a fold's group of RG_LANES elements from p, once per line:
 * only the group that begins within a line's first RG_LANES elements
 * prefetches (every group, for 8-byte elements). */
#define RG_RANGE_PREFETCH_GROUP(p)                                                         \
    do {                                                                                   \
        if ((uintptr_t)(const void *)(p) % 64 < RG_LANES * sizeof *(p))                    \
            RG_RANGE_PREFETCH(p);                                                          \
    } while (0)

/* ------------------------------------------------------------------------
 * Every content dtype: N (name; b8 is bool, whose name stdbool.h would
 * expand), T (element), AT (accumulator of sum and
 * prod: 64-bit unsigned for integers so that overflow wraps without UB,
 * double for floats), ST (what sum and prod store: the 64-bit bits, or the
 * float type), ISF (a float type), TMIN and TMAX (identities of max and min),
 * UT (the unsigned integer type of T's size, for branch-free selects).
 * ------------------------------------------------------------------------ */

#define RG_EACH_DTYPE(X)                                                                   \
    X(b8, uint8_t, uint64_t, uint64_t, 0, 0, 1, uint8_t)                                   \
    X(i8, int8_t, uint64_t, uint64_t, 0, INT8_MIN, INT8_MAX, uint8_t)                      \
    X(i16, int16_t, uint64_t, uint64_t, 0, INT16_MIN, INT16_MAX, uint16_t)                 \
    X(i32, int32_t, uint64_t, uint64_t, 0, INT32_MIN, INT32_MAX, uint32_t)                 \
    X(i64, int64_t, uint64_t, uint64_t, 0, INT64_MIN, INT64_MAX, uint64_t)                 \
    X(u8, uint8_t, uint64_t, uint64_t, 0, 0, UINT8_MAX, uint8_t)                           \
    X(u16, uint16_t, uint64_t, uint64_t, 0, 0, UINT16_MAX, uint16_t)                       \
    X(u32, uint32_t, uint64_t, uint64_t, 0, 0, UINT32_MAX, uint32_t)                       \
    X(u64, uint64_t, uint64_t, uint64_t, 0, 0, UINT64_MAX, uint64_t)                       \
    X(f32, float, double, float, 1, -INFINITY, INFINITY, uint32_t)                         \
    X(f64, double, double, double, 1, -INFINITY, INFINITY, uint64_t)

/* The rg_dtype of each name. */
#define RG_DTYPE_b8 RG_BOOL
#define RG_DTYPE_i8 RG_INT8
#define RG_DTYPE_i16 RG_INT16
#define RG_DTYPE_i32 RG_INT32
#define RG_DTYPE_i64 RG_INT64
#define RG_DTYPE_u8 RG_UINT8
#define RG_DTYPE_u16 RG_UINT16
#define RG_DTYPE_u32 RG_UINT32
#define RG_DTYPE_u64 RG_UINT64
#define RG_DTYPE_f32 RG_FLOAT32
#define RG_DTYPE_f64 RG_FLOAT64

/* An accumulator: v is the running value, i the position of the extreme
 * (EXTREME family only; -1 while nothing has been seen). */
#define RG_DEFINE_ACC(N, T, AT, ST, ISF, TMIN, TMAX, UT)                                   \
    typedef struct { AT v; int64_t i; } arith_acc_##N;                                     \
    typedef struct { T v; int64_t i; } extreme_acc_##N;                                    \
    typedef struct { uint64_t v; int64_t i; } logic_acc_##N;                               \
    static inline bool is_nan_##N(T x)                                                     \
    {                                                                                      \
        return ISF && isnan((double)x);                                                    \
    }                                                                                      \
    /* keep ? x : alt by masking bits: gcc compiles a float ?: to a jump, which the        \
     * windows below would mispredict on every segment of a random length. */              \
    static inline T pick_##N(bool keep, T x, T alt)                                        \
    {                                                                                      \
        UT a, b, m = (UT)((UT)0 - (UT)keep);                                               \
        memcpy(&a, &x, sizeof a);                                                          \
        memcpy(&b, &alt, sizeof b);                                                        \
        a = (UT)((a & m) | (b & (UT)~m));                                                  \
        memcpy(&x, &a, sizeof x);                                                          \
        return x;                                                                          \
    }

/* Each family defines, for every dtype: ident (the empty segment's value),
 * range (folds x[b .. e) into *a, left to right), combine (a holds earlier
 * elements than b; the result is as if they had been folded in order),
 * store (writes the final value of segment seg = [start, end)) and window
 * (reduces and stores segment seg = [s, s + len) for len <= w, reading all of
 * x[s .. s + w): a fixed trip count and selects instead of a loop that ends
 * at the segment's end, so that short segments of random lengths cost no
 * branch mispredictions; the caller guarantees s + w <= nelems). */

/* Sums and products of RG_LANES_MIN or more elements run as RG_LANES
 * interleaved folds (lane j takes elements b + j, b + j + 8, ... of the whole
 * groups of 8), added as a tree (lane j with lane j + 4, then j + 2, then
 * j + 1) onto the running value, then the last (e - b) % 8 elements left to
 * right.  One chain of dependent float adds runs at the add's latency
 * (10^8 doubles in long segments on 2 threads: 41 ms on the 2-core
 * development machine, against 21 ms in 8 lanes, where memory is the limit).
 * Integers wrap, so any order gives the same bits; 8-byte ones take the
 * lanes for their prefetch (below) and their products for 8 multiplies in
 * flight: int64 sums took 0.81x (power-law) to 0.96x the time of the plain
 * loop, products 0.41x to 0.87x, where segments reach 64 (AMD EPYC Zen 5,
 * paired).  Narrower integers, not measured, keep the plain loop, which
 * the compiler vectorises.  Shorter ranges keep the plain order, which the
 * windows below reproduce. */
#define RG_LANES 8
#define RG_LANES_MIN 64
/* min, max, argmin and argmax also scan in lanes (same results: see
 * extreme_lanes), but only from 1024 elements: the lanes' set-up and final
 * pick, and their mispredicted selects while a lane's extreme still moves,
 * made segments of 64 to 199 elements 1.8x slower, while 1000 to 3000 ran
 * 1.3x faster and longer ones 1.7x. */
#define RG_EXTREME_LANES_MIN 1024

/* The AVX-512 sum of x[b .. e) of dtype t (below), integers and bool, added to *sum (mod 2^64, so in any order the bits of the plain fold).
 * False (nothing added) for other dtypes or where the CPU lacks AVX-512. */
static bool simd_int_sum(rg_dtype t, const void *x, int64_t b, int64_t e, uint64_t *sum);

/* ARITH: sum (mode 0) and prod (mode 1).  The mode is tested outside the
 * element loops so that each loop is a plain fold.  Integer sums of
 * RG_LANES_MIN or more elements add in AVX-512 lanes where the CPU has
 * them. */
#define RG_DEFINE_ARITH(N, T, AT, ST, ISF, TMIN, TMAX, UT)                                 \
    static inline arith_acc_##N arith_ident_##N(int mode)                                  \
    {                                                                                      \
        return (arith_acc_##N){(AT)(mode == 1), 0};                                        \
    }                                                                                      \
    static inline void arith_range_##N(arith_acc_##N *a, const T *restrict x, int64_t b,   \
                                       int64_t e, int mode)                                \
    {                                                                                      \
        if (!ISF && mode == 0 && e - b >= RG_LANES_MIN &&                                  \
            simd_int_sum(RG_DTYPE_##N, x, b, e, (uint64_t *)&a->v))                        \
            return;                                                                        \
        AT v = a->v;                                                                       \
        if ((ISF || sizeof(T) == 8) && e - b >= RG_LANES_MIN) {                            \
            AT lane[RG_LANES];                                                             \
            int64_t stop = b + (e - b) / RG_LANES * RG_LANES;                              \
            for (int j = 0; j < RG_LANES; j++)                                             \
                lane[j] = (AT)(mode == 1);                                                 \
            if (mode == 1)                                                                 \
                for (; b < stop; b += RG_LANES) {                                          \
                    RG_RANGE_PREFETCH_GROUP(x + b);                                        \
                    RG_UNROLL                                                              \
                    for (int j = 0; j < RG_LANES; j++)                                     \
                        lane[j] *= (AT)x[b + j];                                           \
                }                                                                          \
            else                                                                           \
                for (; b < stop; b += RG_LANES) {                                          \
                    RG_RANGE_PREFETCH_GROUP(x + b);                                        \
                    RG_UNROLL                                                              \
                    for (int j = 0; j < RG_LANES; j++)                                     \
                        lane[j] += (AT)x[b + j];                                           \
                }                                                                          \
            for (int w = RG_LANES / 2; w > 0; w /= 2)                                      \
                for (int j = 0; j < w; j++)                                                \
                    lane[j] = mode == 1 ? lane[j] * lane[j + w] : lane[j] + lane[j + w];   \
            v = mode == 1 ? v * lane[0] : v + lane[0];                                     \
        }                                                                                  \
        if (mode == 1)                                                                     \
            for (int64_t k = b; k < e; k++)                                                \
                v *= (AT)x[k];                                                             \
        else                                                                               \
            for (int64_t k = b; k < e; k++)                                                \
                v += (AT)x[k];                                                             \
        a->v = v;                                                                          \
    }                                                                                      \
    static inline arith_acc_##N arith_combine_##N(arith_acc_##N a, arith_acc_##N b,        \
                                                  int mode)                                \
    {                                                                                      \
        a.v = mode == 1 ? a.v * b.v : a.v + b.v;                                           \
        return a;                                                                          \
    }                                                                                      \
    static inline void arith_store_##N(void *out, int64_t seg, arith_acc_##N a,            \
                                       int64_t start, int64_t end, int mode)               \
    {                                                                                      \
        (void)start, (void)end, (void)mode;                                                \
        ((ST *)out)[seg] = (ST)a.v;                                                        \
    }                                                                                      \
    /* Folds all w elements, keeping every prefix, and stores the prefix of len            \
     * elements: the same operations in the same order as range, so the same bits,         \
     * and cheaper than masking each element past the end (a store per element). */        \
    RG_WINDOW void arith_window_##N(void *out, int64_t seg, const T *restrict x,           \
                                    int64_t s, int64_t len, int w, int mode)               \
    {                                                                                      \
        AT prefix[RG_WIDE + 1], v = (AT)(mode == 1);                                       \
        prefix[0] = v;                                                                     \
        if (mode == 1) {                                                                   \
            RG_UNROLL                                                                      \
            for (int m = 0; m < w; m++)                                                    \
                prefix[m + 1] = v *= (AT)x[s + m];                                         \
        } else {                                                                           \
            RG_UNROLL                                                                      \
            for (int m = 0; m < w; m++)                                                    \
                prefix[m + 1] = v += (AT)x[s + m];                                         \
        }                                                                                  \
        ((ST *)out)[seg] = (ST)prefix[len];                                                \
    }

/* The AVX-512 scan of x[b .. e) of dtype t (below): 64-bit and 32-bit
 * integers and floats; *pos is the first position of the extreme.  False
 * for other dtypes, where the CPU lacks AVX-512 or x[b .. e) holds a NaN. */
static bool simd_extreme_range(rg_dtype t, const void *x, int64_t b, int64_t e, int mode,
                               int64_t *pos);
static bool simd_narrow_extreme(rg_dtype t, const void *x, int64_t b, int64_t e, int mode,
                                int64_t *pos, void *value);

/* From this many elements, min, max, argmin and argmax of 4- and 8-byte
 * elements scan in AVX-512 lanes: min and argmax of float64 over lengths 1
 * to 199 ran 2x faster. */
#define RG_SIMD_RANGE_MIN 9
/* The same for 1- and 2-byte elements, in AVX-512BW lanes of their own. */
#define RG_SIMD_NARROW_MIN 16

/* EXTREME: min 0, max 1, argmin 2, argmax 3 (bit 0: max).  combine keeps
 * the earlier operand on ties and takes the first NaN, which makes it
 * associative: any grouping of an ordered sequence gives the first NaN, or
 * else the first position of the extreme. */
#define RG_DEFINE_EXTREME(N, T, AT, ST, ISF, TMIN, TMAX, UT)                               \
    static inline extreme_acc_##N extreme_ident_##N(int mode)                              \
    {                                                                                      \
        return (extreme_acc_##N){(mode & 1) ? (T)(TMIN) : (T)(TMAX), -1};                  \
    }                                                                                      \
    static inline extreme_acc_##N extreme_combine_##N(extreme_acc_##N a, extreme_acc_##N b, \
                                                      int mode)                            \
    {                                                                                      \
        if (a.i < 0 || is_nan_##N(a.v))                                                    \
            return a.i < 0 ? b : a;                                                        \
        if (b.i < 0)                                                                       \
            return a;                                                                      \
        bool better = is_nan_##N(b.v) || ((mode & 1) ? b.v > a.v : b.v < a.v);             \
        return better ? b : a;                                                             \
    }                                                                                      \
    /* Lanes for the whole groups of 8 of x[b .. e): lane j keeps the first extreme of     \
     * elements b + j, b + j + 8, ...; the lanes' best (lowest position on ties) then      \
     * joins *a, whose elements come before.  The same result as the fold, with 8          \
     * independent selects in flight.  Returns where the fold goes on: past the groups,    \
     * or b, with *a untouched, if a NaN was seen (the fold then finds the first one). */  \
    static inline int64_t extreme_lanes_##N(extreme_acc_##N *a, const T *restrict x,       \
                                          int64_t b, int64_t e, int mode)                  \
    {                                                                                      \
        bool is_max = mode & 1;                                                            \
        int64_t stop = b + (e - b) / RG_LANES * RG_LANES;                                  \
        T v[RG_LANES];                                                                     \
        int64_t at[RG_LANES];                                                              \
        bool nan = false;                                                                  \
        for (int j = 0; j < RG_LANES; j++) {                                               \
            v[j] = x[b + j];                                                               \
            at[j] = b + j;                                                                 \
            nan |= is_nan_##N(v[j]);                                                       \
        }                                                                                  \
        for (int64_t k = b + RG_LANES; k < stop; k += RG_LANES) {                          \
            RG_RANGE_PREFETCH_GROUP(x + k);                                                \
            if (is_max) {                                                                  \
                RG_UNROLL                                                                  \
                for (int j = 0; j < RG_LANES; j++) {                                       \
                    T y = x[k + j];                                                        \
                    at[j] = y > v[j] ? k + j : at[j];                                      \
                    v[j] = y > v[j] ? y : v[j];                                            \
                    nan |= is_nan_##N(y);                                                  \
                }                                                                          \
            } else {                                                                       \
                RG_UNROLL                                                                  \
                for (int j = 0; j < RG_LANES; j++) {                                       \
                    T y = x[k + j];                                                        \
                    at[j] = y < v[j] ? k + j : at[j];                                      \
                    v[j] = y < v[j] ? y : v[j];                                            \
                    nan |= is_nan_##N(y);                                                  \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
        if (nan)                                                                           \
            return b;                                                                      \
        int best = 0;                                                                      \
        for (int j = 1; j < RG_LANES; j++) {                                               \
            bool better = is_max ? v[j] > v[best] : v[j] < v[best];                        \
            better |= v[j] == v[best] && at[j] < at[best];                                 \
            best += (j - best) & -(int)better;                                             \
        }                                                                                  \
        *a = extreme_combine_##N(*a, (extreme_acc_##N){v[best], at[best]}, mode);          \
        return stop;                                                                       \
    }                                                                                      \
    static inline void extreme_fold_##N(extreme_acc_##N *a, const T *restrict x,           \
                                        int64_t b, int64_t e, int mode)                    \
    {                                                                                      \
        extreme_acc_##N r = *a;                                                            \
        for (int64_t k = b; k < e && !is_nan_##N(r.v); k++)                                \
            r = extreme_combine_##N(r, (extreme_acc_##N){x[k], k}, mode);                  \
        *a = r;                                                                            \
    }                                                                                      \
    RG_NOINLINE void extreme_long_##N(extreme_acc_##N *a, const T *restrict x, int64_t b,  \
                                      int64_t e, int mode)                                 \
    {                                                                                      \
        int64_t pos;                                                                       \
        if (is_nan_##N(a->v))                                                              \
            return;                                                                        \
        T v;                                                                               \
        if (sizeof(T) <= 2 ? simd_narrow_extreme(RG_DTYPE_##N, x, b, e, mode, &pos, &v)    \
                           : (simd_extreme_range(RG_DTYPE_##N, x, b, e, mode, &pos) &&      \
                              (v = x[pos], true))) {                                       \
            *a = extreme_combine_##N(*a, (extreme_acc_##N){v, pos}, mode);                 \
            return;                                                                        \
        }                                                                                  \
        if (e - b >= RG_EXTREME_LANES_MIN)                                                 \
            b = extreme_lanes_##N(a, x, b, e, mode);                                       \
        extreme_fold_##N(a, x, b, e, mode);                                                \
    }                                                                                      \
    /* The fold, in lanes from RG_EXTREME_LANES_MIN elements on; in AVX-512 lanes,         \
     * where the CPU has them, from RG_SIMD_RANGE_MIN (4- and 8-byte elements) or          \
     * RG_SIMD_NARROW_MIN (1- and 2-byte ones, with AVX-512BW). */                          \
    static inline void extreme_range_##N(extreme_acc_##N *a, const T *restrict x,          \
                                         int64_t b, int64_t e, int mode)                   \
    {                                                                                      \
        if (RG_UNLIKELY(e - b >= (sizeof(T) >= 4 ? RG_SIMD_RANGE_MIN : RG_SIMD_NARROW_MIN))) \
            extreme_long_##N(a, x, b, e, mode);                                            \
        else                                                                               \
            extreme_fold_##N(a, x, b, e, mode);                                            \
    }                                                                                      \
    static inline void extreme_store_##N(void *out, int64_t seg, extreme_acc_##N a,        \
                                         int64_t start, int64_t end, int mode)             \
    {                                                                                      \
        (void)end;                                                                         \
        if (mode >= 2)                                                                     \
            ((int64_t *)out)[seg] = a.i < 0 ? -1 : a.i - start;                            \
        else                                                                               \
            ((T *)out)[seg] = a.v;                                                         \
    }                                                                                      \
    /* The window's scan for min (is_max false) or max of NaN-free elements: v and at      \
     * follow the first element, and a later one replaces them only if strictly better,    \
     * so ties keep the first position.  Written as y < v ? y : v, which compilers make    \
     * a minsd or cmov rather than a jump.  Every prefix is kept and the one of len        \
     * elements returned, as in arith_window. */                                           \
    RG_WINDOW void extreme_scan_##N(const T *restrict x, int64_t len, int w, bool is_max,  \
                                    T *vp, int64_t *atp)                                   \
    {                                                                                      \
        T v = x[0], vs[RG_WIDE];                                                           \
        int64_t at = 0, ats[RG_WIDE];                                                      \
        vs[0] = v;                                                                         \
        ats[0] = 0;                                                                        \
        RG_UNROLL                                                                          \
        for (int m = 1; m < w; m++) {                                                      \
            T y = x[m];                                                                    \
            if (is_max) {                                                                  \
                at = y > v ? m : at;                                                       \
                v = y > v ? y : v;                                                         \
            } else {                                                                       \
                at = y < v ? m : at;                                                       \
                v = y < v ? y : v;                                                         \
            }                                                                              \
            vs[m] = v;                                                                     \
            ats[m] = at;                                                                   \
        }                                                                                  \
        *vp = vs[len > 0 ? len - 1 : 0];                                                   \
        *atp = ats[len > 0 ? len - 1 : 0];                                                 \
    }                                                                                      \
    RG_WINDOW void extreme_window_##N(void *out, int64_t seg, const T *restrict x,         \
                                      int64_t s, int64_t len, int w, int mode)             \
    {                                                                                      \
        bool nan = false;                                                                  \
        for (int m = 0; m < w; m++)                                                        \
            nan |= is_nan_##N(x[s + m]);                                                   \
        if (nan) { /* rare, and the fold has the NaN rules */                              \
            extreme_acc_##N a = extreme_ident_##N(mode);                                   \
            extreme_range_##N(&a, x, s, s + len, mode);                                    \
            extreme_store_##N(out, seg, a, s, s + len, mode);                              \
            return;                                                                        \
        }                                                                                  \
        T v;                                                                               \
        int64_t at;                                                                        \
        if (mode & 1)                                                                      \
            extreme_scan_##N(x + s, len, w, true, &v, &at);                                \
        else                                                                               \
            extreme_scan_##N(x + s, len, w, false, &v, &at);                               \
        if (mode >= 2)                                                                     \
            ((int64_t *)out)[seg] = len > 0 ? at : -1;                                     \
        else                                                                               \
            ((T *)out)[seg] = pick_##N(len > 0, v, extreme_ident_##N(mode).v);             \
    }

/* The AVX-512 count of the nonzero elements of x[b .. e) of dtype t (below),
 * added to *count: integers, bool and floats.  False (nothing
 * added) for other dtypes or where the CPU lacks AVX-512. */
static bool simd_logic_range(rg_dtype t, const void *x, int64_t b, int64_t e, uint64_t *count);

/* LOGIC: count_nonzero 0, any 1, all 2, all from one count of nonzero
 * elements (NaN is nonzero, as in numpy).  Ranges of RG_SIMD_RANGE_MIN or
 * more elements count in AVX-512 lanes (the plain loop, not
 * vectorised at -O2, took 3x to 8x the time of a sum of one huge segment;
 * Intel Xeon). */
#define RG_DEFINE_LOGIC(N, T, AT, ST, ISF, TMIN, TMAX, UT)                                 \
    static inline logic_acc_##N logic_ident_##N(int mode)                                  \
    {                                                                                      \
        (void)mode;                                                                        \
        return (logic_acc_##N){0, 0};                                                      \
    }                                                                                      \
    static inline void logic_range_##N(logic_acc_##N *a, const T *restrict x, int64_t b,   \
                                       int64_t e, int mode)                                \
    {                                                                                      \
        (void)mode;                                                                        \
        if (e - b >= RG_SIMD_RANGE_MIN &&                                                  \
            simd_logic_range(RG_DTYPE_##N, x, b, e, &a->v))                                \
            return;                                                                        \
        uint64_t n = 0;                                                                    \
        for (int64_t k = b; k < e; k++)                                                    \
            n += x[k] != 0;                                                                \
        a->v += n;                                                                         \
    }                                                                                      \
    static inline logic_acc_##N logic_combine_##N(logic_acc_##N a, logic_acc_##N b,        \
                                                  int mode)                                \
    {                                                                                      \
        (void)mode;                                                                        \
        a.v += b.v;                                                                        \
        return a;                                                                          \
    }                                                                                      \
    static inline void logic_store_##N(void *out, int64_t seg, logic_acc_##N a,            \
                                       int64_t start, int64_t end, int mode)               \
    {                                                                                      \
        if (mode == 0)                                                                     \
            ((int64_t *)out)[seg] = (int64_t)a.v;                                          \
        else                                                                               \
            ((uint8_t *)out)[seg] = mode == 1 ? a.v > 0 : a.v == (uint64_t)(end - start);  \
    }                                                                                      \
    RG_WINDOW void logic_window_##N(void *out, int64_t seg, const T *restrict x,           \
                                    int64_t s, int64_t len, int w, int mode)               \
    {                                                                                      \
        logic_acc_##N a = {0, 0};                                                          \
        RG_UNROLL                                                                          \
        for (int m = 0; m < w; m++)                                                        \
            a.v += (uint64_t)((m < len) & (x[s + m] != 0));                                \
        logic_store_##N(out, seg, a, s, s + len, mode);                                    \
    }

RG_EACH_DTYPE(RG_DEFINE_ACC)
RG_EACH_DTYPE(RG_DEFINE_ARITH)
/* A false positive of cppcheck's whole-program check (ctuArrayIndex): it
 * takes the accumulator passed to extreme_range_b8 (a thread's part record)
 * for uninitialised, then reports the content x; every call passes content
 * holding elements b .. e-1. */
// cppcheck-suppress ctuArrayIndex
RG_EACH_DTYPE(RG_DEFINE_EXTREME)
RG_EACH_DTYPE(RG_DEFINE_LOGIC)

/* Segments classed together by their longest one, to pick a window width
 * (and, below, the segments in the lanes of an AVX-512 register). */
#define RG_TILE 8

/* ------------------------------------------------------------------------
 * AVX-512 tiles.  Where the CPU has AVX-512, a tile of RG_TILE segments of
 * float64 or float32 (sum, prod, min, max, argmin, argmax, count_nonzero,
 * any, all), of int64, uint64, int32 or uint32 values (the same but prod),
 * or, where it also has AVX-512BW, of bool, int8, uint8, int16 or uint16
 * values (the same but prod) is reduced in the 8
 * lanes of a register, lane j holding segment j (narrower values widened to
 * 64 bits, exactly: float32
 * min and argmax took 0.30x to 0.48x the time of the windows on short,
 * power-law and half-empty lengths; Intel Xeon, paired, BENCHMARKS.md):
 * each segment is loaded as rows and the rows transposed into columns,
 * column m holding element m of every segment (below).  Each lane still
 * folds its segment left to right, so the results are the bits of the
 * windows above, which cost about 11 cycles per segment of 0 to 15
 * elements (BENCHMARKS.md).  1-byte values take no rows: a load per
 * segment (simd_lane_bytes, simd_bytes_extreme) or, with AVX-512 VBMI, one
 * for the tile (simd_packed_lanes), added by vpsadbw or reduced by
 * vpmaxub; nor do the sums and counts of 2-byte values (simd_lane_words:
 * the tile's words put in place by a word permute, or a load per segment,
 * added by vpmaddwd), nor their extremes where segments have at most 16
 * elements (simd_packed_word_extreme: the same permute, vpmaxuw), nor
 * the sums and counts of 4-byte values (simd_lane_dwords: two segments
 * to a register by vpermt2d, or a load per 16 elements, added as 64-bit
 * pairs), nor 32-bit integers' extremes and float32 positions where
 * segments have at most 16 (simd_dword_extreme, vpmaxud on keys).
 * The tile's results are one 64-byte line (32-bit results: half a line;
 * any and all: 8 bytes), streamed when the output is large.  Tiles
 * with two segments longer than RG_SIMD_LONGEST (one is reduced apart: the
 * lone lane, below), and float min/max tiles with a NaN outside it (whose
 * rules the fold keeps), go to the windows.
 * ------------------------------------------------------------------------ */

/* Reduces the tiles of segments from i (a multiple of RG_TILE) up to i1,
 * storing their results at out[i ..], and returns the first segment not
 * done: i1 rounded down to a tile, or the start of a tile that is not for it
 * (nothing of it written).  With stream, out + i is 64-byte aligned and the
 * results are streamed. */
typedef int64_t (*simd_tile_fn)(void *out, const void *x, const void *o, int64_t i,
                                int64_t i1, int mode, bool stream);

/* The longest segment of a tile in lanes.  Float sums of RG_LANES_MIN or
 * more elements are folded in lanes (above), so the tiles stop short of it;
 * on power-law lengths 63 ran 1.15x (sum) to 1.3x (min) faster than 16. */
#define RG_SIMD_LONGEST 63
_Static_assert(RG_SIMD_LONGEST < RG_LANES_MIN, "tiles fold left to right only");

/* Where the tiles read ahead of the current one, in elements (4 KB of
 * float64), and how many lines: the tiles' loads wait on each line they
 * touch, and ran 1.3x to 1.5x faster with prefetches on segments of 1 to 15
 * elements (Intel Xeon).  On the AMD EPYC (Zen 5) tiles ran 3x to 4x slower
 * with none: its masked loads seem to leave the stream to these.  There, 8
 * lines (a window's 64 elements) against 4 took power-law sums 0.82x and
 * min and argmax 0.83x to 0.87x the time, the rest 0.94x to 1.00x; 12 or 16
 * lines no less; 512 elements ahead against 1024 0.97x to 0.99x. */
#define RG_SIMD_AHEAD 512
#define RG_SIMD_AHEAD_LINES 8
#define RG_SIMD_AHEAD_MOST 4096

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define RG_HAVE_SIMD_TILES 1
#define RG_AVX512 __attribute__((target("avx512f")))
/* The target of each dtype's tiles: 1- and 2-byte values need AVX-512BW's
 * masked byte and word loads (and popcnt, their ranges), taken only where
 * have_avx512bw(). */
#define RG_AVX512_f64 RG_AVX512
#define RG_AVX512_f32 RG_AVX512
#define RG_AVX512_i64 RG_AVX512
#define RG_AVX512_u64 RG_AVX512
#define RG_AVX512_i32 RG_AVX512
#define RG_AVX512_u32 RG_AVX512
#define RG_AVX512_BW __attribute__((target("avx512f,avx512bw,popcnt")))
#define RG_AVX512_i8 RG_AVX512_BW
#define RG_AVX512_u8 RG_AVX512_BW
#define RG_AVX512_b8 RG_AVX512_BW
#define RG_AVX512_i16 RG_AVX512_BW
#define RG_AVX512_u16 RG_AVX512_BW
/* pu8, pi8 and pb8: the tiles of uint8 (bool's sums and counts), int8 and
 * bool (min and max) values that also take AVX-512 VBMI's byte permutes
 * (simd_packed_lanes), where have_avx512vbmi(); the rest of their code is
 * u8's, i8's and b8's. */
#define RG_AVX512_VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi,popcnt")))
#define RG_AVX512_pu8 RG_AVX512_VBMI
#define RG_AVX512_pi8 RG_AVX512_VBMI
#define RG_AVX512_pb8 RG_AVX512_VBMI

/* Starts of the 8 segments from o (and their ends, from o + 1). */
RG_AVX512 static inline __m512i simd_starts_i64(const int64_t *o)
{
    return _mm512_loadu_si512((const void *)o);
}
RG_AVX512 static inline __m512i simd_starts_i32(const int32_t *o)
{
    return _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)o));
}

/* Prefetches the RG_SIMD_AHEAD_LINES lines RG_SIMD_AHEAD elements (of size
 * bytes) past the tile's first one, or 4 where the tile's segments have 0
 * or 1 element (they span a line or two: all-length-1 min and argmax ran
 * 1.15x slower with 8, and sum 1.02x with 2), and the offsets 32 tiles on.
 * A tile that spans more than those lines (end: past its last element)
 * also prefetches the rest of its span, up to RG_SIMD_AHEAD_MOST bytes in
 * all: with 8 lines alone, the lines past them were misses that each tile
 * waited for, and sums, min and argmax of segments of 1 to 24, 1 to 31,
 * 16 to 24 or 1 to 63 elements took 2.1x to 4.7x the time (AMD EPYC Zen
 * 5, paired; BENCHMARKS.md); on 1 to 15, where the branch goes both
 * ways, min and argmax took 1.04x to 1.08x, sums 0.92x to 0.94x.
 * Prefetching each line once, from a cursor, instead of the fixed lines
 * took short and half-empty lengths 1.03x to 1.22x the time.  The
 * addresses are computed as integers: they may lie past the arrays,
 * where a prefetch does nothing. */
RG_AVX512 static inline void simd_prefetch(const void *x, size_t size, int64_t start,
                                           int64_t end, uintptr_t o_next, bool tiny)
{
    uintptr_t p = (uintptr_t)x + (uintptr_t)(start + RG_SIMD_AHEAD) * size;
    if (tiny) {
        RG_UNROLL for (int l = 0; l < 4; l++)
            prefetch_line(p + (uintptr_t)l * 64);
    } else {
        RG_UNROLL for (int l = 0; l < RG_SIMD_AHEAD_LINES; l++)
            prefetch_line(p + (uintptr_t)l * 64);
        /* the rest of a tile wider than those lines (up to 4 KB) */
        uintptr_t q = (p & ~(uintptr_t)63) + RG_SIMD_AHEAD_LINES * 64;
        uintptr_t stop = (uintptr_t)x + (uintptr_t)(end + RG_SIMD_AHEAD) * size;
        uintptr_t cap = p + RG_SIMD_AHEAD_MOST;
        for (stop = stop < cap ? stop : cap; q < stop; q += 64)
            prefetch_line(q);
    }
    prefetch_line(o_next);
}

RG_AVX512 static inline void simd_store(void *out, int64_t i, __m512i v, bool stream)
{
    void *at = (int64_t *)out + i;
    if (stream)
        _mm512_stream_si512(at, v);
    else
        _mm512_storeu_si512(at, v);
}

/* A tile whose longest segment has more than RG_SIMD_LONE elements leaves
 * it out of the rows (its lane, the lone one, gets length 0) and reduces
 * it alone, first, by the family's range: a sum's left to right (in 8 lanes
 * from 64 elements, as documented), an extreme's in 4 x 8 vector lanes.  The
 * other lanes then take as many rows as the second longest; a lone
 * segment of 64 or more no longer sends the tile to the windows.  Such tiles
 * get their own inlined copy of the tile (LONELY a constant), so that the
 * other tiles' code stays as it was: changes to it, even a branch never
 * taken, cost half-empty sums 1.02x to 1.03x.  On power-law lengths (AMD
 * EPYC Zen 5, paired against no lone lanes) min and argmax took 0.71x to
 * 0.73x the time and sums 0.95x to 0.97x, other lengths 0.98x to 1.02x; a
 * threshold of 24 against 16 took another 0.97x to 0.98x (32 about the
 * same, 48 and 10 slower). */
#define RG_SIMD_LONE 24
_Static_assert(RG_SIMD_LONE < RG_SIMD_LONGEST, "a tile with a lone lane still has rows");

/* The tile's starts s and lengths len, or false when a segment other than
 * the lone one is too long.  LONELY (a constant): the longest segment is
 * longer than RG_SIMD_LONE and is left out: lone is its lane (else -1), gap
 * its length.  span: the elements of the other lanes; unit: whether all 8
 * segments have length 1 (one load, no rows). */
#define RG_SIMD_TILE_BEGIN(IN, IT, LONELY)                                                 \
    const IT *o = ov;                                                                      \
    __m512i s = simd_starts_##IN(o + i);                                                   \
    __m512i len = _mm512_sub_epi64(simd_starts_##IN(o + i + 1), s);                        \
    int64_t longest = _mm512_reduce_max_epi64(len), gap = 0;                               \
    int lone = -1;                                                                         \
    if (LONELY) {                                                                          \
        lone = __builtin_ctz(_mm512_cmpeq_epi64_mask(len, _mm512_set1_epi64(longest)));    \
        gap = longest;                                                                     \
        len = _mm512_mask_mov_epi64(len, (__mmask8)(1u << lone), _mm512_setzero_si512());  \
        longest = _mm512_reduce_max_epi64(len);                                            \
    }                                                                                      \
    if (longest > RG_SIMD_LONGEST)                                                         \
        return false;                                                                      \
    simd_prefetch(x, sizeof *x, (int64_t)o[i], (int64_t)o[i + RG_TILE],                   \
                  (uintptr_t)(o + i) + 32 * RG_TILE * sizeof(IT), longest <= 1);           \
    const int64_t base = (int64_t)o[i], span = (int64_t)o[i + RG_TILE] - base - gap;       \
    bool unit = longest <= 1 && span == RG_TILE

/* The simd_tile_fn of family F from its F_body (a tile, inlined, with or
 * without a lone lane).  One call runs tiles until one is refused: a call
 * per tile, with its register saves and vzeroupper, took power-law sums
 * 1.04x to 1.06x the time (AMD EPYC Zen 5, paired), and an out-of-line call
 * for tiles with a lone lane another 1.06x.
 *
 * Tiles go in blocks of RG_SIMD_BLOCK segments.  In a block whose segments
 * average 2.75 or fewer elements, tiles of segments of up to 4 elements go
 * two to a row (F_pairs, whose tiles have no lone lane: it stops at one,
 * which F_rows takes); elsewhere every tile takes whole rows (F_rows).  A
 * function of its own for each: with the branch to pairs in the code of
 * every tile, power-law sums took 1.08x to 1.14x the time, even where the
 * branch was never taken (AMD EPYC Zen 5, paired); with whole rows only,
 * lengths of 1 to 4 took 1.2x to 1.5x and all-length-1 min and argmax 1.3x
 * to 1.5x.  Blocks of 64 tiles, a call each, took half-empty sums 1.03x to
 * 1.08x the time. */
#define RG_SIMD_BLOCK (512 * RG_TILE)
#define RG_SIMD_NARROW(o, i, b1) (4 * ((int64_t)(o)[b1] - (o)[i]) <= 11 * ((b1) - (i)))
/* F_rows (NARROW 0) or F_pairs (NARROW 1): tiles from i until one is
 * refused, or in F_pairs has a lone lane. */
#define RG_SIMD_TILE_LOOP(F, N, IN, IT, NAME, NARROW)                                      \
    RG_AVX512_##N static __attribute__((noinline)) int64_t F##_##NAME##_##N##_##IN(        \
        void *out, const void *xv, const void *ov, int64_t i, int64_t i1, int mode,        \
        bool stream)                                                                       \
    {                                                                                      \
        const IT *o = ov;                                                                  \
        for (; i + RG_TILE <= i1; i += RG_TILE) {                                          \
            __m512i len =                                                                  \
                _mm512_sub_epi64(simd_starts_##IN(o + i + 1), simd_starts_##IN(o + i));    \
            bool lonely = _mm512_reduce_max_epi64(len) > RG_SIMD_LONE;                     \
            if (NARROW && lonely)                                                          \
                break;                                                                     \
            bool done = lonely ? F##_body_##N##_##IN(out, xv, ov, i, mode, stream, true, false) \
                               : F##_body_##N##_##IN(out, xv, ov, i, mode, stream, false, NARROW); \
            if (!done)                                                                     \
                break;                                                                     \
        }                                                                                  \
        return i;                                                                          \
    }
#define RG_SIMD_TILE_FNS(F, N, IN, IT)                                                     \
    RG_SIMD_TILE_LOOP(F, N, IN, IT, rows, 0)                                               \
    RG_SIMD_TILE_LOOP(F, N, IN, IT, pairs, 1)                                              \
    static __attribute__((unused)) /* bool's positions */ int64_t F##_tile_##N##_##IN(    \
        void *out, const void *xv, const void *ov, int64_t i, int64_t i1, int mode,        \
        bool stream)                                                                       \
    {                                                                                      \
        const IT *o = ov;                                                                  \
        while (i + RG_TILE <= i1) {                                                        \
            int64_t b1 = i1 - i > RG_SIMD_BLOCK ? i + RG_SIMD_BLOCK : i1;                  \
            int64_t j;                                                                     \
            if (!RG_SIMD_NARROW(o, i, b1)) {                                               \
                j = F##_rows_##N##_##IN(out, xv, ov, i, b1, mode, stream);                 \
                if (j + RG_TILE <= b1)                                                     \
                    return j; /* refused */                                                \
            } else if ((j = F##_pairs_##N##_##IN(out, xv, ov, i, b1, mode, stream)) +      \
                           RG_TILE <= b1) { /* stopped at a tile: rows take it */           \
                int64_t k = F##_rows_##N##_##IN(out, xv, ov, j, j + RG_TILE, mode, stream);  \
                if (k == j)                                                                \
                    return j; /* refused */                                                \
                j = k;                                                                     \
            }                                                                              \
            i = j;                                                                         \
        }                                                                                  \
        return i;                                                                          \
    }

/* The accumulators of arithmetic tiles and their stores: float64 sums and
 * products, and float32 ones folded in double as the windows do (each float
 * widens exactly; the 8 results round to float once, into half a line);
 * 64-bit integer sums, of int64 and uint64 values (the same wrapping
 * additions) and of int32 and uint32 values (sign- or zero-extended). */
#define RG_SIMD_PD_SET1(c) _mm512_set1_pd(c)
#define RG_SIMD_EPI64_SET1(c) _mm512_set1_epi64((long long)(c))
#define RG_SIMD_LOAD_f64(p) _mm512_loadu_pd(p)
#define RG_SIMD_LOAD_f32(p) _mm512_cvtps_pd(_mm256_loadu_ps(p))
#define RG_SIMD_LOAD_i64(p) _mm512_loadu_si512((const void *)(p))
#define RG_SIMD_LOAD_u64 RG_SIMD_LOAD_i64
#define RG_SIMD_LOAD_u8(p) _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(const void *)(p)))
#define RG_SIMD_LOAD_i8(p) _mm512_cvtepi8_epi64(_mm_loadl_epi64((const __m128i *)(const void *)(p)))
#define RG_SIMD_LOAD_b8 RG_SIMD_LOAD_u8
#define RG_SIMD_LOAD_u16(p) _mm512_cvtepu16_epi64(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define RG_SIMD_LOAD_i16(p) _mm512_cvtepi16_epi64(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define RG_SIMD_LOAD_i32(p)                                                                \
    _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(p)))
#define RG_SIMD_LOAD_u32(p)                                                                \
    _mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(p)))
/* Row loads: the elements of k (8 bits) from p, as 8 lanes of 64 bits
 * (32-bit values widened: floats exactly, integers sign- or zero-extended),
 * the others pad.  The addresses are
 * computed as integers (a row with no element may start past the content);
 * masked lanes are not read.  Under AddressSanitizer they are calls, not
 * inlined: its check of a masked load is a branch per lane, and inlined in
 * every tile they took clang 14's ASan + UBSan build of this file 2.5x the
 * time (381 s of CPU against 155 s); the checks are the same. */
#if defined(__SANITIZE_ADDRESS__)
#define RG_SIMD_ROW_FN static __attribute__((noinline))
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RG_SIMD_ROW_FN static __attribute__((noinline))
#endif
#endif
#ifndef RG_SIMD_ROW_FN
#define RG_SIMD_ROW_FN static inline RG_ALWAYS_INLINE
#endif
RG_AVX512 RG_SIMD_ROW_FN __m512i simd_row_f64(__mmask8 k, const double *p, double pad)
{
    return _mm512_castpd_si512(_mm512_mask_loadu_pd(_mm512_set1_pd(pad), k, p));
}
RG_AVX512 RG_SIMD_ROW_FN __m512i simd_row_f32(__mmask8 k, const float *p, double pad)
{
    __m512 r = _mm512_mask_loadu_ps(_mm512_set1_ps((float)pad), (__mmask16)k, p);
    return _mm512_castpd_si512(_mm512_cvtps_pd(_mm512_castps512_ps256(r)));
}
RG_AVX512 RG_SIMD_ROW_FN __m512i simd_row_i64(__mmask8 k, const long long *p, long long pad)
{
    return _mm512_mask_loadu_epi64(_mm512_set1_epi64(pad), k, p);
}
#define simd_row_u64 simd_row_i64
RG_AVX512 RG_SIMD_ROW_FN __m512i simd_row_i32(__mmask8 k, const int *p, long long pad)
{
    __m512i r = _mm512_mask_loadu_epi32(_mm512_set1_epi32((int)pad), (__mmask16)k, p);
    return _mm512_cvtepi32_epi64(_mm512_castsi512_si256(r));
}
/* pad: UINT32_MAX (max's identity) arrives as -1 from a signed T, or as itself */
RG_AVX512 RG_SIMD_ROW_FN __m512i simd_row_u32(__mmask8 k, const int *p, long long pad)
{
    __m512i r = _mm512_mask_loadu_epi32(_mm512_set1_epi32((int)(uint32_t)pad), (__mmask16)k, p);
    return _mm512_cvtepu32_epi64(_mm512_castsi512_si256(r));
}
RG_AVX512_BW RG_SIMD_ROW_FN __m512i simd_row_u8(__mmask8 k, const unsigned char *p, long long pad)
{
    __m512i r = _mm512_mask_loadu_epi8(_mm512_set1_epi8((char)pad), (__mmask64)k, p);
    return _mm512_cvtepu8_epi64(_mm512_castsi512_si128(r));
}
RG_AVX512_BW RG_SIMD_ROW_FN __m512i simd_row_i8(__mmask8 k, const signed char *p, long long pad)
{
    __m512i r = _mm512_mask_loadu_epi8(_mm512_set1_epi8((char)pad), (__mmask64)k, p);
    return _mm512_cvtepi8_epi64(_mm512_castsi512_si128(r));
}
#define simd_row_b8 simd_row_u8
#define simd_row_pu8 simd_row_u8
#define simd_row_pi8 simd_row_i8
RG_AVX512_BW RG_SIMD_ROW_FN __m512i simd_row_u16(__mmask8 k, const unsigned short *p,
                                                 long long pad)
{
    __m512i r = _mm512_mask_loadu_epi16(_mm512_set1_epi16((short)pad), (__mmask32)k, p);
    return _mm512_cvtepu16_epi64(_mm512_castsi512_si128(r));
}
RG_AVX512_BW RG_SIMD_ROW_FN __m512i simd_row_i16(__mmask8 k, const short *p, long long pad)
{
    __m512i r = _mm512_mask_loadu_epi16(_mm512_set1_epi16((short)pad), (__mmask32)k, p);
    return _mm512_cvtepi16_epi64(_mm512_castsi512_si128(r));
}
#define RG_SIMD_BITS_PD(v) _mm512_castpd_si512(v)
#define RG_SIMD_BITS_EPI64(v) (v)
#define RG_SIMD_FROM_PD(v) _mm512_castsi512_pd(v)
#define RG_SIMD_FROM_EPI64(v) (v)

/* The sums of the 8 bytes of each 64-bit lane of v (vpsadbw): as unsigned
 * bytes (what 0), as signed ones (1: each biased by 128 to an unsigned
 * one, the 8 biases taken off), or the count of those not zero (2). */
RG_AVX512_BW static inline __m512i simd_packed_sum(__m512i v, int what)
{
    const __m512i zero = _mm512_setzero_si512();
    if (what == 1)
        return _mm512_sub_epi64(_mm512_sad_epu8(_mm512_xor_si512(v, _mm512_set1_epi8(-128)), zero),
                                _mm512_set1_epi64(8 * 128));
    if (what == 2)
        v = _mm512_min_epu8(v, _mm512_set1_epi8(1));
    return _mm512_sad_epu8(v, zero);
}

/* vpshufb's indices that copy byte 0 of each 64-bit lane to all 8 of its
 * bytes (it picks within 16-byte lanes, two 64-bit lanes each), and each
 * byte's place m in its 64-bit lane. */
#define RG_SIMD_SPREAD                                                                     \
    _mm512_set_epi64(0x0808080808080808LL, 0, 0x0808080808080808LL, 0, 0x0808080808080808LL, \
                     0, 0x0808080808080808LL, 0)
#define RG_SIMD_STEP _mm512_set1_epi64(0x0706050403020100LL)

/* A tile of 1-byte values whose segments have at most 16 elements each
 * (their span, at most 128, from base; starts s, lengths len, longest),
 * spread by segment: 64-bit lane j of r[0] holds segment j's first 8
 * elements, each ^ flip, of r[1] (made only past 8 elements a segment)
 * the next 8, zeros past its length.  The span is loaded once (one
 * register, two past 64 bytes) and the bytes put in place by a permute
 * (AVX-512 VBMI): in place of 8 masked rows of 8 elements, their widening
 * and their transpose.  Returns the registers made, 1 or 2.  Not always
 * inlined: the tiles of other dtypes (not built for VBMI) hold a call to it
 * that is never made. */
RG_AVX512_VBMI static inline int simd_packed_lanes(const void *x, int64_t base, int64_t span,
                                                   __m512i s, __m512i len, int64_t longest,
                                                   __m512i flip, __m512i r[2])
{
    const __m512i spread = RG_SIMD_SPREAD, step = RG_SIMD_STEP;
    const __m512i eight = _mm512_set1_epi8(8);
    /* byte m of lane j: where element m of segment j lies in the span, and
     * whether it is one (m < len) */
    __m512i at = _mm512_add_epi8(
        _mm512_shuffle_epi8(_mm512_sub_epi64(s, _mm512_set1_epi64(base)), spread), step);
    __m512i lens = _mm512_shuffle_epi8(len, spread);
    uintptr_t p = (uintptr_t)x + (uintptr_t)base; /* as integers: p + 64 may lie past x */
    __m512i lo = _mm512_xor_si512(
        _mm512_maskz_loadu_epi8(span >= 64 ? ~0ULL : (1ULL << span) - 1, (const void *)p), flip);
    if (longest <= 8) { /* span <= 64: one register, one half */
        r[0] = _mm512_maskz_permutexvar_epi8(_mm512_cmpgt_epi8_mask(lens, step), at, lo);
        return 1;
    }
    int64_t rest = span - 64 > 0 ? span - 64 : 0;
    __m512i hi = _mm512_xor_si512(
        _mm512_maskz_loadu_epi8(rest >= 64 ? ~0ULL : (1ULL << rest) - 1, (const void *)(p + 64)),
        flip);
    r[0] = _mm512_maskz_permutex2var_epi8(_mm512_cmpgt_epi8_mask(lens, step), lo, at, hi);
    r[1] = _mm512_maskz_permutex2var_epi8(
        _mm512_cmpgt_epi8_mask(_mm512_sub_epi8(lens, eight), step), lo,
        _mm512_add_epi8(at, eight), hi);
    return 2;
}

/* The 64-bit lanes' sums of a tile of 1-byte values whose segments have at
 * most 16 elements each (as simd_packed_lanes): lane j sums segment j's
 * elements as unsigned bytes (what 0), signed ones (1), or its nonzero
 * elements as 1s (2), by vpsadbw. */
RG_AVX512_VBMI static inline __m512i simd_packed_bytes(const void *x, int64_t base, int64_t span,
                                                      __m512i s, __m512i len, int64_t longest,
                                                      int what)
{
    __m512i r[2];
    int n = simd_packed_lanes(x, base, span, s, len, longest, _mm512_setzero_si512(), r);
    __m512i sum = simd_packed_sum(r[0], what);
    return n == 2 ? _mm512_add_epi64(sum, simd_packed_sum(r[1], what)) : sum;
}

/* The tile's starts st[j] and its lanes' elements as bits in[j] (bit e:
 * element e; lengths up to 63), from the vectors s and len, as arrays:
 * the sanitizers check scalar loads of the offsets and shifts.  Read back
 * from memory: gcc otherwise takes each from the vectors by extracts (16
 * of them, on the shuffle ports the transposes need); sums took 0.89x to
 * 1.00x the time, min and argmax 0.92x to 0.97x (AMD EPYC Zen 5). */
#define RG_SIMD_STARTS_BITS(st, in, s, len)                                                \
    int64_t st[8];                                                                         \
    uint64_t in[8];                                                                        \
    _mm512_storeu_si512((void *)(st), s);                                                  \
    _mm512_storeu_si512((void *)(in), _mm512_sub_epi64(_mm512_sllv_epi64(_mm512_set1_epi64(1), len), \
                                                       _mm512_set1_epi64(1)));             \
    __asm__("" : "+m"(st), "+m"(in))

/* Segment j's bytes (masks in, starts st) into 64-bit lane j of v, over
 * v's bytes: each load merges its own bytes, read from 8 j bytes before
 * the segment (masked bytes are not read).  Segments of at most 8
 * elements: one register, no shuffles. */
RG_AVX512_BW static inline RG_ALWAYS_INLINE __m512i simd_merged_bytes(const void *x,
                                                                      const int64_t st[8],
                                                                      const uint64_t in[8],
                                                                      __m512i v)
{
    RG_UNROLL for (int j = 0; j < 8; j++)
        v = _mm512_mask_loadu_epi8(
            v, in[j] << (8 * j),
            (const void *)((uintptr_t)x + (uintptr_t)st[j] - (uintptr_t)(8 * j)));
    return v;
}

/* How simd_fold8 folds: 64-bit sums, the bytes' largest, or the sums of
 * the two 32-bit halves apart (2-byte values' pairs, simd_word_pairs). */
enum { RG_FOLD_ADD64, RG_FOLD_MAXU8, RG_FOLD_ADD32 };

/* 8 registers into one, 64-bit lane j from register j, its 8 lanes folded
 * by F(a, b) (a GNU statement expression): three rounds of shuffles, 14 in
 * all.  A macro, so that 4-byte values' tiles (AVX-512F only) take it with
 * additions while simd_fold8's byte max needs AVX-512BW. */
#define RG_FOLD8_TREE(r, F)                                                                \
    ({                                                                                     \
        /* pairs: 128-bit lane k of t_[p] holds 64-bit lanes 2k and 2k + 1 of              \
         * r[2p] folded, then of r[2p + 1] */                                              \
        __m512i t_[4];                                                                     \
        RG_UNROLL for (int p_ = 0; p_ < 4; p_++)                                           \
            t_[p_] = F(_mm512_unpacklo_epi64((r)[2 * p_], (r)[2 * p_ + 1]),                \
                       _mm512_unpackhi_epi64((r)[2 * p_], (r)[2 * p_ + 1]));               \
        /* then the 128-bit lanes of two such, in pairs, twice */                          \
        __m512i u0_ = F(_mm512_shuffle_i64x2(t_[0], t_[1], 0x88),                          \
                        _mm512_shuffle_i64x2(t_[0], t_[1], 0xdd));                         \
        __m512i u1_ = F(_mm512_shuffle_i64x2(t_[2], t_[3], 0x88),                          \
                        _mm512_shuffle_i64x2(t_[2], t_[3], 0xdd));                         \
        F(_mm512_shuffle_i64x2(u0_, u1_, 0x88), _mm512_shuffle_i64x2(u0_, u1_, 0xdd));     \
    })

/* 8 registers into one, 64-bit lane j from register j: its 8 lanes added
 * (how: as 64-bit or as two 32-bit halves), or their bytes' largest kept
 * (8 bytes, for simd_lane_most). */
RG_AVX512_BW static inline RG_ALWAYS_INLINE __m512i simd_fold8(const __m512i r[8], int how)
{
#define RG_FOLD8(a, b)                                                                     \
    (how == RG_FOLD_MAXU8   ? _mm512_max_epu8(a, b)                                        \
     : how == RG_FOLD_ADD32 ? _mm512_add_epi32(a, b)                                       \
                            : _mm512_add_epi64(a, b))
    return RG_FOLD8_TREE(r, RG_FOLD8);
#undef RG_FOLD8
}

/* The same sums (what as there) for a tile of 1-byte values whose segments
 * have at most 64 elements each (the lone lane's length 0; longest, the
 * longest other): each segment is one masked load, its 8 groups of 8
 * bytes summed by vpsadbw into 8 64-bit lanes, and the 8 registers added
 * into one, lane j from register j, by three rounds of shuffles (14 in
 * all), in place of up to 8 blocks of 8 rows, each widened and transposed
 * (24 shuffles a block).  Where no segment has more than 8, the 8 loads
 * merge into one register and one vpsadbw.  AVX-512BW only: without VBMI
 * (RAGGED_AVX512_VBMI=0, Intel Xeon, paired) bool sums took 0.88x the
 * time of the rows on 1..8 lengths, 0.76x on half-empty and power-law
 * ones, any 0.95x, 0.68x and 0.76x.  Not always inlined, as
 * simd_packed_bytes. */
RG_AVX512_BW static inline __m512i simd_lane_bytes(const void *x, __m512i s, __m512i len,
                                                   int64_t longest, int what)
{
    const __m512i zero = _mm512_setzero_si512();
    RG_SIMD_STARTS_BITS(st, in, s, len);
    if (longest <= 8) /* one vpsadbw */
        return simd_packed_sum(simd_merged_bytes(x, st, in, zero), what);
    __m512i r[8];
    RG_UNROLL for (int j = 0; j < 8; j++) {
        __m512i v = _mm512_maskz_loadu_epi8(in[j], (const void *)((uintptr_t)x + (uintptr_t)st[j]));
        if (what == 1) /* biased, as simd_packed_sum's: 64 biases a lane, taken off below */
            v = _mm512_xor_si512(v, _mm512_set1_epi8(-128));
        else if (what == 2)
            v = _mm512_min_epu8(v, _mm512_set1_epi8(1));
        r[j] = _mm512_sad_epu8(v, zero);
    }
    __m512i sums = simd_fold8(r, RG_FOLD_ADD64);
    return what == 1 ? _mm512_sub_epi64(sums, _mm512_set1_epi64(64 * 128)) : sums;
}

/* 2-byte values' pairs: each 32-bit half of v's words added, as signed
 * ones; what as simd_lane_bytes': unsigned ones biased (^ 0x8000, each
 * taking 32768 less, the padding too: simd_word_sums adds it back), or
 * nonzero ones as 1s (2). */
RG_AVX512_BW static inline __m512i simd_word_pairs(__m512i v, int what)
{
    if (what == 0)
        v = _mm512_xor_si512(v, _mm512_set1_epi16((short)0x8000));
    else if (what == 2)
        v = _mm512_min_epu16(v, _mm512_set1_epi16(1));
    return _mm512_madd_epi16(v, _mm512_set1_epi16(1));
}

/* The sums of each 64-bit lane of pairs p: its two signed 32-bit halves,
 * and for unsigned values (what 0) the bias of the lane's words words. */
RG_AVX512_BW static inline __m512i simd_word_sums(__m512i p, int what, int words)
{
    __m512i t = _mm512_add_epi64(_mm512_srai_epi64(_mm512_slli_epi64(p, 32), 32),
                                 _mm512_srai_epi64(p, 32));
    return what == 0 ? _mm512_add_epi64(t, _mm512_set1_epi64(32768LL * words)) : t;
}

/* Slots of 4 registers folded into one by F(a, b) (a GNU statement
 * expression), 64-bit lane j for segment j, where 256-bit half h of
 * register 2a + b holds segment 4a + 2h + b (2-byte values' slots of 16
 * words, 4-byte values' of 8 dwords): two rounds of shuffles. */
#define RG_HALVES_TREE(r, F)                                                               \
    ({                                                                                     \
        /* 128-bit lane k of t_[a]: lanes 2k and 2k + 1 of r[2a] folded, then of           \
         * r[2a + 1]; lanes 0 and 1 hold segments 4a and 4a + 1, lanes 2 and 3             \
         * segments 4a + 2 and 4a + 3 */                                                   \
        __m512i t_[2];                                                                     \
        RG_UNROLL for (int a_ = 0; a_ < 2; a_++)                                           \
            t_[a_] = F(_mm512_unpacklo_epi64((r)[2 * a_], (r)[2 * a_ + 1]),                \
                       _mm512_unpackhi_epi64((r)[2 * a_], (r)[2 * a_ + 1]));               \
        F(_mm512_shuffle_i64x2(t_[0], t_[1], 0x88), _mm512_shuffle_i64x2(t_[0], t_[1], 0xdd)); \
    })

/* The 64-bit lanes' sums (what as simd_word_pairs') of n registers of
 * 2-byte values that hold a segment per slot of 8 words (n 2: 128-bit lane
 * k of r[l] holds segment 2k + l) or of 16 (n 4: 256-bit half h of
 * r[2a + b] holds segment 4a + 2h + b), zeros past its length: lane j gets
 * segment j's by two rounds of shuffles (one where n is 2). */
RG_AVX512_BW static inline RG_ALWAYS_INLINE __m512i simd_word_slots(const __m512i *r, int n,
                                                                     int what)
{
    __m512i p[4];
    RG_UNROLL for (int q = 0; q < n; q++)
        p[q] = simd_word_pairs(r[q], what);
    if (n == 2) /* 128-bit lane k: p[0]'s, p[1]'s */
        return simd_word_sums(
            _mm512_add_epi32(_mm512_unpacklo_epi64(p[0], p[1]), _mm512_unpackhi_epi64(p[0], p[1])),
            what, 8);
    return simd_word_sums(RG_HALVES_TREE(p, _mm512_add_epi32), what, 16);
}

/* 4 words of the index of 64-bit lane j's low word, for vpermw. */
#define RG_WORDS_OF(j) ((long long)(0x0001000100010001ULL * 4 * (unsigned long long)(j)))

/* Each word's place in its slot of 8 (n 2) or 16 (n 4) words. */
#define RG_WORD_STEP(n)                                                                    \
    ((n) == 2 ? _mm512_set_epi64(0x0007000600050004LL, 0x0003000200010000LL,                \
                                 0x0007000600050004LL, 0x0003000200010000LL,                \
                                 0x0007000600050004LL, 0x0003000200010000LL,                \
                                 0x0007000600050004LL, 0x0003000200010000LL)                \
              : _mm512_set_epi64(0x000f000e000d000cLL, 0x000b000a00090008LL,                \
                                 0x0007000600050004LL, 0x0003000200010000LL,                \
                                 0x000f000e000d000cLL, 0x000b000a00090008LL,                \
                                 0x0007000600050004LL, 0x0003000200010000LL))

/* A tile of 2-byte values whose segments have at most 8 (n 2) or 16 (n 4)
 * elements each and whose span from base has at most 64 words (no lone
 * lane), in slots as simd_word_slots' (r[0 .. n)), each word ^ flip and
 * zeros past its segment's length; where ok is not NULL, ok[q] marks r[q]'s
 * words that are elements.  The span is loaded once (two masked loads)
 * and its words put in place by vpermt2w (AVX-512BW), as
 * simd_packed_lanes' bytes. */
RG_AVX512_BW static inline RG_ALWAYS_INLINE void simd_packed_words(
    const void *x, int64_t base, int64_t span, __m512i s, __m512i len, int n, __m512i flip,
    __m512i r[4], __mmask32 ok[4])
{
    /* lane j: its start in the span, its length * 256; each slot's word m
     * takes its segment's, for the permute's index (start + m; vpermt2w
     * reads the low 6 bits) and for m < length */
    __m512i c = _mm512_or_si512(_mm512_sub_epi64(s, _mm512_set1_epi64(base)),
                                _mm512_slli_epi64(len, 8));
    __m512i step = RG_WORD_STEP(n);
    __m512i limit = _mm512_or_si512(_mm512_slli_epi16(step, 8), _mm512_set1_epi16(0xff));
    uintptr_t p = (uintptr_t)x + 2 * (uintptr_t)base; /* p + 64 may lie past x */
    int64_t rest = span > 32 ? span - 32 : 0;
    __m512i lo = _mm512_xor_si512(
        _mm512_maskz_loadu_epi16(span >= 32 ? ~0u : (1u << span) - 1, (const void *)p), flip);
    __m512i hi = _mm512_xor_si512(
        _mm512_maskz_loadu_epi16(rest >= 32 ? ~0u : (1u << rest) - 1, (const void *)(p + 64)),
        flip);
    RG_UNROLL for (int q = 0; q < n; q++) {
        __m512i at = n == 2 ? _mm512_set_epi64(RG_WORDS_OF(6 + q), RG_WORDS_OF(6 + q),
                                               RG_WORDS_OF(4 + q), RG_WORDS_OF(4 + q),
                                               RG_WORDS_OF(2 + q), RG_WORDS_OF(2 + q),
                                               RG_WORDS_OF(q), RG_WORDS_OF(q))
                            : _mm512_set_epi64(RG_WORDS_OF(4 * (q >> 1) + 2 + (q & 1)),
                                               RG_WORDS_OF(4 * (q >> 1) + 2 + (q & 1)),
                                               RG_WORDS_OF(4 * (q >> 1) + 2 + (q & 1)),
                                               RG_WORDS_OF(4 * (q >> 1) + 2 + (q & 1)),
                                               RG_WORDS_OF(4 * (q >> 1) + (q & 1)),
                                               RG_WORDS_OF(4 * (q >> 1) + (q & 1)),
                                               RG_WORDS_OF(4 * (q >> 1) + (q & 1)),
                                               RG_WORDS_OF(4 * (q >> 1) + (q & 1)));
        __m512i b = _mm512_permutexvar_epi16(at, c);
        __mmask32 in = _mm512_cmpgt_epi16_mask(b, limit);
        r[q] = _mm512_maskz_permutex2var_epi16(in, lo, _mm512_add_epi16(b, step), hi);
        if (ok)
            ok[q] = in;
    }
}

/* The largest word of each slot of r (n registers, as simd_word_slots'):
 * segment j's in 64-bit lane j (its low word, the rest 0); where m is not
 * NULL, m[q] holds each slot's largest in every word of it. */
RG_AVX512_BW static inline RG_ALWAYS_INLINE __m512i simd_word_slot_most(const __m512i *r, int n,
                                                                         __m512i *m)
{
    __m512i t[4];
    RG_UNROLL for (int q = 0; q < n; q++) {
        __m512i v = r[q];
        if (n == 4) /* a slot's two 128-bit lanes */
            v = _mm512_max_epu16(v, _mm512_shuffle_i64x2(v, v, 0xb1));
        v = _mm512_max_epu16(v, _mm512_bsrli_epi128(v, 8));
        v = _mm512_max_epu16(v, _mm512_bsrli_epi128(v, 4));
        t[q] = _mm512_max_epu16(v, _mm512_bsrli_epi128(v, 2)); /* in word 0 of each */
        if (m)
            m[q] = _mm512_shuffle_epi8(t[q], _mm512_set1_epi16(0x0100));
    }
    __m512i lanes = _mm512_unpacklo_epi64(t[0], t[1]);
    if (n == 4) /* 128-bit lanes 0 and 2 of each pair: segments 4a .. 4a + 3 */
        lanes = _mm512_shuffle_i64x2(lanes, _mm512_unpacklo_epi64(t[2], t[3]), 0x88);
    return _mm512_and_si512(lanes, _mm512_set1_epi64(0xffff));
}

/* The extremes of a tile of 2-byte values as simd_packed_words takes them:
 * 64-bit lane j holds (in its low word) the word of segment j whose key,
 * word ^ flip, is the largest (flip 0x8000 orders int16 as unsigned words,
 * 0xffff more turns a min into a max; an empty segment's is flip, the
 * identity), and where at is not NULL *at its first position (-1: none),
 * as simd_lane_first finds the bytes'.  Keys past a segment are 0, which
 * takes nothing. */
RG_AVX512_BW static inline RG_ALWAYS_INLINE __m512i simd_packed_word_extreme(
    const void *x, int64_t base, int64_t span, __m512i s, __m512i len, int64_t longest,
    unsigned short flip, __m512i *at)
{
    int n = longest <= 8 ? 2 : 4;
    const __m512i zero = _mm512_setzero_si512();
    /* zeros: gcc cannot tell that only n are read */
    __m512i r[4] = {zero, zero, zero, zero}, m[4], k[4] = {zero, zero, zero, zero};
    __mmask32 ok[4];
    simd_packed_words(x, base, span, s, len, n, _mm512_set1_epi16((short)flip), r, ok);
    __m512i most = simd_word_slot_most(r, n, at ? m : NULL);
    if (at) { /* each word equal to its slot's largest: 16 - its place (1 to 16) */
        RG_UNROLL for (int q = 0; q < n; q++)
            k[q] = _mm512_maskz_sub_epi16(_mm512_mask_cmpeq_epi16_mask(ok[q], r[q], m[q]),
                                          _mm512_set1_epi16(16), RG_WORD_STEP(n));
        __m512i f = simd_word_slot_most(k, n, NULL);
        *at = _mm512_mask_mov_epi64(_mm512_sub_epi64(_mm512_set1_epi64(16), f),
                                    _mm512_cmpeq_epi64_mask(f, zero), _mm512_set1_epi64(-1));
    }
    return _mm512_xor_si512(most, _mm512_set1_epi64(flip));
}

/* The same sums (what as there) for a tile of 2-byte values whose segments
 * have at most 63 elements each (starts s, lengths len, longest; their
 * span from base; the lone lane's length 0), by vpmaddwd in place of rows
 * (their widening and transposes).  Segments of at most 16 elements go in
 * slots (simd_word_slots): where their span has at most 64 words (and no
 * lane is lone), loaded once and put in place by word permutes (vpermt2w,
 * AVX-512BW; as simd_packed_lanes'), else by a load per segment into its
 * slot, read from before the segment (masked words are not read), the
 * loads then or'ed.  Longer ones are a load each (two past 32 elements),
 * added by simd_fold8.  A load per segment for all took int16 sums on
 * 1..8 lengths 1.12x the time of the rows (merging loads or or'ed ones
 * alike), the permutes 0.68x; half-empty 0.75x and 0.57x (Intel Xeon,
 * paired). */
RG_AVX512_BW static inline __m512i simd_lane_words(const void *x, int64_t base, int64_t span,
                                                   __m512i s, __m512i len, int64_t longest,
                                                   bool lonely, int what)
{
    int n = longest <= 8 ? 2 : 4;
    __m512i r[8];
    if (longest <= 16 && span <= 64 && !lonely) {
        simd_packed_words(x, base, span, s, len, n, _mm512_setzero_si512(), r, NULL);
        return simd_word_slots(r, n, what);
    }
    RG_SIMD_STARTS_BITS(st, in, s, len);
#define RG_WORDS_AT(j, d)                                                                  \
    ((const void *)((uintptr_t)x + ((uintptr_t)st[j] + (uintptr_t)(d)) * 2))
    if (longest <= 16) { /* slot d of segment j, as above */
        __m512i v[8];
        RG_UNROLL for (int j = 0; j < 8; j++) {
            int d = n == 2 ? j >> 1 : (j >> 1) & 1, w = 4 * n;
            v[j] = _mm512_maskz_loadu_epi16((__mmask32)(in[j] << (w * d)), RG_WORDS_AT(j, -w * d));
        }
        RG_UNROLL for (int q = 0; q < n; q++)
            r[q] = n == 2 ? _mm512_or_si512(_mm512_or_si512(v[q], v[q + 2]),
                                            _mm512_or_si512(v[q + 4], v[q + 6]))
                          : _mm512_or_si512(v[4 * (q >> 1) + (q & 1)], v[4 * (q >> 1) + (q & 1) + 2]);
        return simd_word_slots(r, n, what);
    }
    RG_UNROLL for (int j = 0; j < 8; j++) {
        r[j] = simd_word_pairs(_mm512_maskz_loadu_epi16((__mmask32)in[j], RG_WORDS_AT(j, 0)), what);
        if (longest > 32)
            r[j] = _mm512_add_epi32(
                r[j], simd_word_pairs(
                          _mm512_maskz_loadu_epi16((__mmask32)(in[j] >> 32), RG_WORDS_AT(j, 32)),
                          what));
    }
#undef RG_WORDS_AT
    return simd_word_sums(simd_fold8(r, RG_FOLD_ADD32), what, longest > 32 ? 64 : 32);
}

/* 4-byte values' pairs: each 64-bit lane of v gets its two 32-bit halves
 * added as signed (what 1) or unsigned (0) values, or counted where
 * nonzero (2; 3 for floats, whose sign bit alone, -0.0, is zero). */
RG_AVX512 static inline __m512i simd_dword_pairs(__m512i v, int what)
{
    if (what == 3)
        v = _mm512_and_si512(v, _mm512_set1_epi32(0x7fffffff));
    if (what >= 2)
        v = _mm512_min_epu32(v, _mm512_set1_epi32(1));
    if (what == 1)
        return _mm512_add_epi64(_mm512_srai_epi64(_mm512_slli_epi64(v, 32), 32),
                                _mm512_srai_epi64(v, 32));
    return _mm512_add_epi64(_mm512_and_si512(v, _mm512_set1_epi64(0xffffffff)),
                            _mm512_srli_epi64(v, 32));
}

/* The sums (what as simd_dword_pairs') of 4 registers of 4-byte values,
 * register 2a + b holding segment 4a + b in its low half and segment
 * 4a + b + 2 in its high one, zeros past their lengths: lane j gets
 * segment j's (each half's pairs, then two rounds of shuffles). */
RG_AVX512 static inline RG_ALWAYS_INLINE __m512i simd_dword_halves(const __m512i r[4], int what)
{
    __m512i p[4];
    RG_UNROLL for (int q = 0; q < 4; q++)
        p[q] = simd_dword_pairs(r[q], what);
    return RG_HALVES_TREE(p, _mm512_add_epi64);
}

/* The largest dword (unsigned) of each slot of 8 of r (as simd_dword_halves
 * takes them) into the low dword of 64-bit lane j for segment j, the high
 * dword 0: the same tree, then the two dwords of each lane. */
/* The larger (unsigned) of each 64-bit lane's two dwords, the high dword 0. */
RG_AVX512 static inline __m512i simd_dword_pair_most(__m512i u)
{
    return _mm512_srli_epi64(_mm512_max_epu32(u, _mm512_slli_epi64(u, 32)), 32);
}
RG_AVX512 static inline RG_ALWAYS_INLINE __m512i simd_dword_halves_most(const __m512i r[4])
{
    return simd_dword_pair_most(RG_HALVES_TREE(r, _mm512_max_epu32));
}

/* Each dword's place in its slot of 8, and vpermd's index that copies the
 * low dword of 64-bit lane j (low half) and j + 2 (high half) to every
 * dword of their slots in register q (j = 4 (q / 2) + q % 2). */
#define RG_DWORD_STEP _mm512_set_epi32(7, 6, 5, 4, 3, 2, 1, 0, 7, 6, 5, 4, 3, 2, 1, 0)
#define RG_DWORD_SLOTS(q)                                                                  \
    _mm512_set_epi32(RG_DWORD_HI(q), RG_DWORD_HI(q), RG_DWORD_HI(q), RG_DWORD_HI(q),       \
                     RG_DWORD_HI(q), RG_DWORD_HI(q), RG_DWORD_HI(q), RG_DWORD_HI(q),       \
                     RG_DWORD_LO(q), RG_DWORD_LO(q), RG_DWORD_LO(q), RG_DWORD_LO(q),       \
                     RG_DWORD_LO(q), RG_DWORD_LO(q), RG_DWORD_LO(q), RG_DWORD_LO(q))
#define RG_DWORD_LO(q) (2 * (4 * ((q) >> 1) + ((q)&1)))
#define RG_DWORD_HI(q) (RG_DWORD_LO(q) + 4)

/* A tile of 4-byte values whose segments have at most 8 elements each and
 * whose span from base has at most 64 (no lone lane) into r as
 * simd_dword_halves takes them: the span loaded once (4 masked loads) and
 * its dwords put in place by vpermt2d (2 per register, one for each pair
 * of loads), each dword's index and whether it is an element found as
 * simd_packed_words' are. */
RG_AVX512 static inline RG_ALWAYS_INLINE void simd_packed_dwords(const void *x, int64_t base,
                                                                 int64_t span, __m512i s,
                                                                 __m512i len, __m512i r[4],
                                                                 __mmask16 ok[4])
{
    __m512i c = _mm512_or_si512(_mm512_sub_epi64(s, _mm512_set1_epi64(base)),
                                _mm512_slli_epi64(len, 8));
    const __m512i step = RG_DWORD_STEP;
    const __m512i limit = _mm512_or_si512(_mm512_slli_epi32(step, 8), _mm512_set1_epi32(0xff));
    uintptr_t p = (uintptr_t)x + 4 * (uintptr_t)base; /* p + 64k may lie past x */
    __m512i v[4];
    RG_UNROLL for (int k = 0; k < 4; k++) {
        int64_t left = span - 16 * k;
        __mmask16 m = left >= 16 ? 0xffff : left <= 0 ? 0 : (__mmask16)((1u << left) - 1);
        v[k] = _mm512_maskz_loadu_epi32(m, (const void *)(p + 64 * (uintptr_t)k));
    }
    RG_UNROLL for (int q = 0; q < 4; q++) {
        __m512i b = _mm512_permutexvar_epi32(RG_DWORD_SLOTS(q), c);
        __mmask16 in = _mm512_cmpgt_epi32_mask(b, limit);
        __m512i idx = _mm512_add_epi32(b, step); /* in the span: below 64; bit 5 picks v[2 ..] */
        __mmask16 hi = _mm512_test_epi32_mask(idx, _mm512_set1_epi32(32));
        r[q] = _mm512_or_si512(
            _mm512_maskz_permutex2var_epi32((__mmask16)(in & ~hi), v[0], idx, v[1]),
            _mm512_maskz_permutex2var_epi32((__mmask16)(in & hi), v[2], idx, v[3]));
        if (ok)
            ok[q] = in;
    }
}

/* The sums (what as simd_dword_pairs') of a tile of 4-byte values whose
 * segments have at most 63 elements each (starts s, lengths len, longest;
 * their span from base; the lone lane's length 0) into 64-bit lane j for
 * segment j, without rows (their widening and transposes).  Where no
 * segment has more than 8 elements, two go to a register
 * (simd_dword_halves): put in place by permutes where their span has at
 * most 64 (simd_packed_dwords), else each by a masked load into its half;
 * longer ones take a masked load per 16 elements, their pairs added, then
 * RG_FOLD8_TREE.  Against the rows, on Intel Xeon (paired), int32 sums took
 * 0.92x the time on 1..8 lengths, 0.76x on half-empty ones, 0.95x on
 * power-law ones and 0.78x on 1..63; without the permutes (a load per
 * segment) 1.03x more on 1..8 lengths, count_nonzero and any 1.08x and
 * 1.27x. */
RG_AVX512 static inline RG_ALWAYS_INLINE __m512i simd_lane_dwords(const void *x, int64_t base,
                                                                  int64_t span, __m512i s,
                                                                  __m512i len, int64_t longest,
                                                                  bool lonely, int what)
{
    __m512i r[8];
    if (longest <= 8 && span <= 64 && !lonely) {
        simd_packed_dwords(x, base, span, s, len, r, NULL);
        return simd_dword_halves(r, what);
    }
    RG_SIMD_STARTS_BITS(st, in, s, len);
#define RG_DWORDS_AT(j, d)                                                                 \
    ((const void *)((uintptr_t)x + ((uintptr_t)st[j] + (uintptr_t)(d)) * 4))
    if (longest <= 8) {
        RG_UNROLL for (int q = 0; q < 4; q++) {
            int j = 4 * (q >> 1) + (q & 1); /* the low half's segment; the high half's j + 2 */
            r[q] = _mm512_mask_loadu_epi32(
                _mm512_maskz_loadu_epi32((__mmask16)in[j], RG_DWORDS_AT(j, 0)),
                (__mmask16)(in[j + 2] << 8), RG_DWORDS_AT(j + 2, -8));
        }
        return simd_dword_halves(r, what);
    }
    RG_UNROLL for (int j = 0; j < 8; j++) {
        r[j] = simd_dword_pairs(_mm512_maskz_loadu_epi32((__mmask16)in[j], RG_DWORDS_AT(j, 0)),
                                what);
        for (int c = 1; 16 * c < longest; c++)
            r[j] = _mm512_add_epi64(
                r[j], simd_dword_pairs(_mm512_maskz_loadu_epi32((__mmask16)(in[j] >> (16 * c)),
                                                                RG_DWORDS_AT(j, 16 * c)),
                                       what));
    }
#undef RG_DWORDS_AT
    return RG_FOLD8_TREE(r, _mm512_add_epi64);
}

/* Keys of 4-byte values v whose unsigned order is the op's (the largest
 * wins), 0 where not ok (padding: takes nothing).  Integers: v ^ flip
 * (flip 0x80000000 orders int32 as unsigned, 0xffffffff more turns a min
 * into a max).  Floats (no NaN): -0.0 first made +0.0, which it equals;
 * then a negative one's bits all flipped, another's sign bit, so that
 * the unsigned order is the floats'; flip 0xffffffff turns a min into a
 * max.  No real value's key is 0. */
RG_AVX512 static inline RG_ALWAYS_INLINE __m512i simd_dword_keys(__m512i v, __mmask16 ok,
                                                                 uint32_t flip, bool isf)
{
    if (isf) {
        const __m512i sign = _mm512_set1_epi32(INT32_MIN);
        v = _mm512_maskz_mov_epi32((__mmask16)~_mm512_cmpeq_epi32_mask(v, sign), v);
        v = _mm512_xor_si512(v, _mm512_or_si512(_mm512_srai_epi32(v, 31), sign));
    }
    return _mm512_maskz_xor_epi32(ok, v, _mm512_set1_epi32((int)flip));
}

/* The extremes of a tile of 4-byte values whose segments have at most 16
 * elements each, as simd_packed_word_extreme's of 2-byte ones: 64-bit lane
 * j holds (its low dword; the high one 0) the integer of segment j whose
 * key (simd_dword_keys) is the largest (an empty segment's: flip, the
 * identity), and where at is not NULL *at its first position (-1: none).
 * Segments of at most 8 elements (no lone lane): the slots of
 * simd_packed_dwords, reduced by simd_dword_halves_most; for positions
 * each slot's largest goes back to its dwords (vpermd), the equal ones
 * become 8 - their place, and the largest of those is the first.  Else
 * (the lone lane's length 0): a masked load per segment, RG_FOLD8_TREE
 * with unsigned max, and the positions the same way, 16 - place, in
 * 16-dword slots.  Positions found per segment by a compare and a bit scan
 * on the largest keys stored and read back (as simd_bytes_extreme's) took
 * argmin and argmax on half-empty lengths 1.7x the time of the rows (Intel
 * Xeon, paired); these 0.84x.  Floats (isf): positions only (the value
 * returned means nothing), and a NaN among the elements sets *nan and
 * returns at once (the tile goes to the windows, as from the rows).
 * Their min and max keep the rows: the value is the element at the
 * position (of -0.0 and +0.0 the first), and picking it out (a compare
 * per slot and one more tree) took them 1.03x the rows' time on 1..8
 * lengths, 1.43x on half-empty ones (Intel Xeon, paired). */
RG_AVX512 static inline RG_ALWAYS_INLINE __m512i simd_dword_extreme(
    const void *x, int64_t base, int64_t span, __m512i s, __m512i len, int64_t longest,
    bool lonely, uint32_t flip, bool isf, __m512i *at, __mmask8 *nan)
{
    const __m512i zero = _mm512_setzero_si512();
    __m512i most;
    if (longest <= 8 && !lonely) {
        __m512i r[4], k[4];
        __mmask16 ok[4], bad = 0;
        simd_packed_dwords(x, base, span, s, len, r, ok);
        RG_UNROLL for (int q = 0; q < 4; q++) {
            if (isf)
                bad |= _mm512_mask_cmp_ps_mask(ok[q], _mm512_castsi512_ps(r[q]),
                                               _mm512_castsi512_ps(r[q]), _CMP_UNORD_Q);
            k[q] = simd_dword_keys(r[q], ok[q], flip, isf);
        }
        if (isf && bad) {
            *nan = 1;
            return zero;
        }
        most = simd_dword_halves_most(k);
        if (at) {
            RG_UNROLL for (int q = 0; q < 4; q++)
                k[q] = _mm512_maskz_sub_epi32(
                    _mm512_mask_cmpeq_epi32_mask(ok[q], k[q],
                                                 _mm512_permutexvar_epi32(RG_DWORD_SLOTS(q), most)),
                    _mm512_set1_epi32(8), RG_DWORD_STEP);
            __m512i first = simd_dword_halves_most(k);
            *at = _mm512_mask_mov_epi64(_mm512_sub_epi64(_mm512_set1_epi64(8), first),
                                        _mm512_cmpeq_epi64_mask(first, zero),
                                        _mm512_set1_epi64(-1));
        }
    } else {
        RG_SIMD_STARTS_BITS(st, in, s, len);
        __m512i r[8], k[8];
        __mmask16 bad = 0;
        RG_UNROLL for (int j = 0; j < 8; j++) {
            r[j] = _mm512_maskz_loadu_epi32((__mmask16)in[j],
                                            (const void *)((uintptr_t)x + (uintptr_t)st[j] * 4));
            if (isf)
                bad |= _mm512_mask_cmp_ps_mask((__mmask16)in[j], _mm512_castsi512_ps(r[j]),
                                               _mm512_castsi512_ps(r[j]), _CMP_UNORD_Q);
            k[j] = simd_dword_keys(r[j], (__mmask16)in[j], flip, isf);
        }
        if (isf && bad) {
            *nan = 1;
            return zero;
        }
        most = simd_dword_pair_most(RG_FOLD8_TREE(k, _mm512_max_epu32));
        if (at) {
            const __m512i step =
                _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
            RG_UNROLL for (int j = 0; j < 8; j++) /* segment j's largest to all 16 dwords */
                k[j] = _mm512_maskz_sub_epi32(
                    _mm512_mask_cmpeq_epi32_mask(
                        (__mmask16)in[j], k[j],
                        _mm512_permutexvar_epi32(_mm512_set1_epi32(2 * j), most)),
                    _mm512_set1_epi32(16), step);
            __m512i first = simd_dword_pair_most(RG_FOLD8_TREE(k, _mm512_max_epu32));
            *at = _mm512_mask_mov_epi64(_mm512_sub_epi64(_mm512_set1_epi64(16), first),
                                        _mm512_cmpeq_epi64_mask(first, zero),
                                        _mm512_set1_epi64(-1));
        }
    }
    return _mm512_xor_si512(most, _mm512_set1_epi64(flip));
}

/* The tile's values from simd_dword_extreme's lanes: float32 ones widened
 * to double, as the rows keep them (S pd), integers as they are. */
#define RG_DWORD_V_pd(b) _mm512_cvtps_pd(_mm256_castsi256_ps(_mm512_cvtepi64_epi32(b)))
#define RG_DWORD_V_epi64(b) (b)
#define RG_DWORD_V_epu64(b) (b)

/* The largest key of each 64-bit lane of v into its byte 0, the bytes above
 * it 0. */
RG_AVX512_BW static inline __m512i simd_lane_most(__m512i v)
{
    /* zeros shift into the bytes above, as keys they take nothing */
    v = _mm512_max_epu8(v, _mm512_srli_epi64(v, 32));
    v = _mm512_max_epu8(v, _mm512_srli_epi64(v, 16));
    v = _mm512_max_epu8(v, _mm512_srli_epi64(v, 8));
    return _mm512_and_si512(v, _mm512_set1_epi64(0xff));
}

/* Where the largest keys are: 64-bit lane j of r[0] (and of r[1] where n
 * is 2) holds segment j's elements 0 to 7 (8 to 15) as keys, zeros past
 * its length; ok, byte m of lane j: m < its length; most, the largest key
 * of each lane in its byte 0 (simd_lane_most).  Returns the first
 * position of each lane's largest key, -1 where it has none: each byte
 * equal to it becomes 16 - its position (1 to 16, others 0), and the
 * largest of those is the first.  ok serves r[1] too: a padding byte there
 * equals the largest key only where that is 0, and then so does an
 * earlier byte of r[0]. */
RG_AVX512_BW static inline __m512i simd_lane_first(__m512i most, const __m512i r[2],
                                                   __mmask64 ok, int n)
{
    const __m512i step = RG_SIMD_STEP;
    __m512i mb = _mm512_shuffle_epi8(most, RG_SIMD_SPREAD); /* byte 0 to all 8 of its lane */
    __m512i k = _mm512_maskz_sub_epi8(_mm512_mask_cmpeq_epi8_mask(ok, r[0], mb),
                                      _mm512_set1_epi8(16), step);
    if (n == 2)
        k = _mm512_max_epu8(k, _mm512_maskz_sub_epi8(_mm512_mask_cmpeq_epi8_mask(ok, r[1], mb),
                                                     _mm512_set1_epi8(8), step));
    k = simd_lane_most(k);
    return _mm512_mask_mov_epi64(_mm512_sub_epi64(_mm512_set1_epi64(16), k),
                                 _mm512_cmpeq_epi64_mask(k, _mm512_setzero_si512()),
                                 _mm512_set1_epi64(-1));
}

/* The extremes of a tile of 1-byte values: byte 0 of 64-bit lane j holds
 * the byte of segment j whose key, byte ^ flip, is the largest (flip 0x80
 * orders signed bytes as unsigned ones, and 0xff more turns a min into a
 * max); an empty segment's is flip, the identity.  Where at is not NULL
 * (argmin, argmax) it also gets the first position of each (-1: none).
 * Keys are padded with 0, which takes nothing.  Segments of at most 16
 * elements each (and no lone lane) with packed (AVX-512 VBMI): spread by
 * simd_packed_lanes, then the largest of each lane.  Else (at most 63 elements each; the lone lane's length 0): as
 * simd_lane_bytes, a masked load per segment (padded with flip), the same
 * tree of shuffles with vpmaxub in place of the additions, then the
 * largest of each lane, and its position per segment by a compare; or,
 * where no segment passes 8 elements, the 8 loads merged into one
 * register.  In place of up to 8 blocks of rows, each widened and
 * transposed, and for positions 3 masked moves per column. */
RG_AVX512_BW static inline RG_ALWAYS_INLINE __m512i simd_bytes_extreme(
    const void *x, int64_t base, int64_t span, __m512i s, __m512i len, int64_t longest,
    char flip, bool packed, __m512i *at)
{
    const __m512i f = _mm512_set1_epi8(flip);
    const __m512i flip64 = _mm512_set1_epi64((unsigned char)flip);
    /* byte m of lane j: m < len (for positions, where len <= 16) */
    __mmask64 ok = _mm512_cmpgt_epi8_mask(_mm512_shuffle_epi8(len, RG_SIMD_SPREAD), RG_SIMD_STEP);
    __m512i r[8], v;
    if (packed) {
        int n = simd_packed_lanes(x, base, span, s, len, longest, f, r);
        v = simd_lane_most(n == 2 ? _mm512_max_epu8(r[0], r[1]) : r[0]);
        if (at)
            *at = simd_lane_first(v, r, ok, n);
        return _mm512_xor_si512(v, flip64);
    }
    RG_SIMD_STARTS_BITS(st, in, s, len);
    if (longest <= 8) {
        r[0] = _mm512_xor_si512(simd_merged_bytes(x, st, in, f), f);
        v = simd_lane_most(r[0]);
        if (at)
            *at = simd_lane_first(v, r, ok, 1);
        return _mm512_xor_si512(v, flip64);
    }
    RG_UNROLL for (int j = 0; j < 8; j++)
        r[j] = _mm512_xor_si512(
            _mm512_mask_loadu_epi8(f, in[j], (const void *)((uintptr_t)x + (uintptr_t)st[j])), f);
    v = simd_lane_most(simd_fold8(r, RG_FOLD_MAXU8)); /* lane j: 8 keys of r[j], then the largest */
    if (at) { /* segment j's first byte equal to its largest key */
        int64_t most[8], first[8];
        _mm512_storeu_si512((void *)most, v);
        RG_UNROLL for (int j = 0; j < 8; j++) {
            uint64_t eq = _mm512_mask_cmpeq_epi8_mask(in[j], r[j], _mm512_set1_epi8((char)most[j]));
            first[j] = eq ? __builtin_ctzll(eq) : -1;
        }
        *at = _mm512_loadu_si512((const void *)first);
    }
    return _mm512_xor_si512(v, flip64);
}

/* Transposes 8 rows of 8 lanes: afterwards r[m] holds lane m of each row
 * (24 shuffles). */
RG_AVX512 static inline RG_ALWAYS_INLINE void simd_transpose8(__m512i r[8])
{
    __m512i t[8], u[8];
    /* lanes 2l, 2l + 1 of t: lane 2l or 2l + 1 of two rows */
    RG_UNROLL for (int p = 0; p < 4; p++) {
        t[2 * p] = _mm512_unpacklo_epi64(r[2 * p], r[2 * p + 1]);
        t[2 * p + 1] = _mm512_unpackhi_epi64(r[2 * p], r[2 * p + 1]);
    }
    RG_UNROLL for (int q = 0; q < 2; q++) { /* u: two lanes of four rows */
        u[4 * q] = _mm512_shuffle_i64x2(t[4 * q], t[4 * q + 2], 0x88);     /* lanes 0, 4 */
        u[4 * q + 1] = _mm512_shuffle_i64x2(t[4 * q], t[4 * q + 2], 0xdd); /* 2, 6 */
        u[4 * q + 2] = _mm512_shuffle_i64x2(t[4 * q + 1], t[4 * q + 3], 0x88); /* 1, 5 */
        u[4 * q + 3] = _mm512_shuffle_i64x2(t[4 * q + 1], t[4 * q + 3], 0xdd); /* 3, 7 */
    }
    r[0] = _mm512_shuffle_i64x2(u[0], u[4], 0x88);
    r[4] = _mm512_shuffle_i64x2(u[0], u[4], 0xdd);
    r[2] = _mm512_shuffle_i64x2(u[1], u[5], 0x88);
    r[6] = _mm512_shuffle_i64x2(u[1], u[5], 0xdd);
    r[1] = _mm512_shuffle_i64x2(u[2], u[6], 0x88);
    r[5] = _mm512_shuffle_i64x2(u[2], u[6], 0xdd);
    r[3] = _mm512_shuffle_i64x2(u[3], u[7], 0x88);
    r[7] = _mm512_shuffle_i64x2(u[3], u[7], 0xdd);
}

/* The same for rows of two halves (lanes 0-3 and 4-7) of 4 lanes each:
 * afterwards r[m] holds lane m of each half (8 shuffles). */
RG_AVX512 static inline RG_ALWAYS_INLINE void simd_transpose4x2(__m512i r[4])
{
    __m512i t0 = _mm512_unpacklo_epi64(r[0], r[1]), t1 = _mm512_unpackhi_epi64(r[0], r[1]);
    __m512i t2 = _mm512_unpacklo_epi64(r[2], r[3]), t3 = _mm512_unpackhi_epi64(r[2], r[3]);
    r[0] = _mm512_mask_shuffle_i64x2(t0, 0xcc, t2, t2, 0xa0);
    r[1] = _mm512_mask_shuffle_i64x2(t1, 0xcc, t3, t3, 0xa0);
    r[2] = _mm512_mask_shuffle_i64x2(t2, 0x33, t0, t0, 0xf5);
    r[3] = _mm512_mask_shuffle_i64x2(t3, 0x33, t1, t1, 0xf5);
}

RG_AVX512 static inline void simd_store_f64(void *out, int64_t i, __m512d v, bool stream)
{
    simd_store(out, i, _mm512_castpd_si512(v), stream);
}
RG_AVX512 static inline void simd_store_f32(void *out, int64_t i, __m512d v, bool stream)
{
    __m256 r = _mm512_cvtpd_ps(v);
    float *at = (float *)out + i;
    if (stream)
        _mm256_stream_ps(at, r);
    else
        _mm256_storeu_ps(at, r);
}
#define simd_store_i64 simd_store
#define simd_store_i32 simd_store
#define simd_store_u32 simd_store
#define simd_store_u8 simd_store
#define simd_store_i8 simd_store
#define simd_store_u16 simd_store
#define simd_store_i16 simd_store
/* int64 lanes holding 32-bit values, stored as 8 of them (half a line). */
RG_AVX512 static inline void simd_store_narrow(void *out, int64_t i, __m512i v, bool stream)
{
    __m256i r = _mm512_cvtepi64_epi32(v);
    __m256i *at = (__m256i *)(void *)((int32_t *)out + i);
    if (stream)
        _mm256_stream_si256(at, r);
    else
        _mm256_storeu_si256(at, r);
}
/* int64 lanes holding 1-byte values, stored as 8 bytes. */
RG_AVX512 static inline void simd_store_bytes(void *out, int64_t i, __m512i v, bool stream)
{
    long long bytes = _mm_cvtsi128_si64(_mm512_cvtepi64_epi8(v));
    void *at = (uint8_t *)out + i;
    if (stream)
        _mm_stream_si64((long long *)at, bytes);
    else
        memcpy(at, &bytes, sizeof bytes);
}
/* int64 lanes holding 2-byte values, stored as 8 of them (16 bytes; with
 * stream, out + i is 64-byte aligned). */
RG_AVX512 static inline void simd_store_shorts(void *out, int64_t i, __m512i v, bool stream)
{
    __m128i r = _mm512_cvtepi64_epi16(v);
    __m128i *at = (__m128i *)(void *)((int16_t *)out + i);
    if (stream)
        _mm_stream_si128(at, r);
    else
        _mm_storeu_si128(at, r);
}
/* The stores of logic tiles: count_nonzero's counts (mode 0), or a byte per
 * segment: any (1) where its count is above 0, all (2) where it is len. */
RG_AVX512 static inline void simd_store_logic(void *out, int64_t i, __m512i count, __m512i len,
                                              int mode, bool stream)
{
    if (mode == 0) {
        simd_store(out, i, count, stream);
        return;
    }
    __mmask8 yes = mode == 1 ? _mm512_test_epi64_mask(count, count)
                             : _mm512_cmpeq_epi64_mask(count, len);
    simd_store_bytes(out, i, _mm512_maskz_mov_epi64(yes, _mm512_set1_epi64(1)), stream);
}
/* The stores of min and max tiles: the values in their own type. */
#define simd_extreme_store_f64 simd_store_f64
#define simd_extreme_store_f32 simd_store_f32
#define simd_extreme_store_i64 simd_store
#define simd_extreme_store_u64 simd_store
#define simd_extreme_store_i32 simd_store_narrow
#define simd_extreme_store_u32 simd_store_narrow
#define simd_extreme_store_u8 simd_store_bytes
#define simd_extreme_store_i8 simd_store_bytes
#define simd_extreme_store_b8 simd_store_bytes
#define simd_extreme_store_u16 simd_store_shorts
#define simd_extreme_store_i16 simd_store_shorts

/* The lone lane's fold of float64 or float32 x[b .. e) (N), in double: the
 * operations of arith_range_N in the same order (8 interleaved lanes from
 * RG_LANES_MIN elements, added as a tree, then the rest left to right),
 * the 8 lanes in one register, inlined in the tile: power-law and 1..63
 * sums took 0.93x to 0.95x the time of the call to arith_range (AMD EPYC
 * Zen 5, paired).  Integer tiles keep arith_range. */
#define RG_DEFINE_SIMD_RANGE(N, T)                                                         \
    RG_AVX512 static inline void simd_range_##N(arith_acc_##N *a, const void *xv,          \
                                                int64_t b, int64_t e, int mode)            \
    {                                                                                      \
        const T *x = xv;                                                                   \
        bool prod = mode == 1;                                                             \
        double v = a->v;                                                                   \
        if (e - b >= RG_LANES_MIN) {                                                       \
            int64_t stop = b + (e - b) / RG_LANES * RG_LANES;                              \
            __m512d lane = _mm512_set1_pd(prod);                                           \
            if (prod)                                                                      \
                for (; b < stop; b += RG_LANES) {                                          \
                    RG_RANGE_PREFETCH_GROUP(x + b);                                        \
                    lane = _mm512_mul_pd(lane, RG_SIMD_LOAD_##N(x + b));                   \
                }                                                                          \
            else                                                                           \
                for (; b < stop; b += RG_LANES) {                                          \
                    RG_RANGE_PREFETCH_GROUP(x + b);                                        \
                    lane = _mm512_add_pd(lane, RG_SIMD_LOAD_##N(x + b));                   \
                }                                                                          \
            /* the tree: lanes j and j + 4, then j + 2, then j + 1 */                      \
            __m256d lo = _mm512_castpd512_pd256(lane), hi = _mm512_extractf64x4_pd(lane, 1); \
            __m256d l4 = prod ? _mm256_mul_pd(lo, hi) : _mm256_add_pd(lo, hi);             \
            __m128d l2 = _mm256_castpd256_pd128(l4), h2 = _mm256_extractf128_pd(l4, 1);    \
            __m128d t = prod ? _mm_mul_pd(l2, h2) : _mm_add_pd(l2, h2);                    \
            double t0 = _mm_cvtsd_f64(t), t1 = _mm_cvtsd_f64(_mm_unpackhi_pd(t, t));       \
            double l1 = prod ? t0 * t1 : t0 + t1;                                          \
            v = prod ? v * l1 : v + l1;                                                    \
        }                                                                                  \
        if (prod)                                                                          \
            for (; b < e; b++)                                                             \
                v *= (double)x[b];                                                         \
        else                                                                               \
            for (; b < e; b++)                                                             \
                v += (double)x[b];                                                         \
        a->v = v;                                                                          \
    }
RG_DEFINE_SIMD_RANGE(f64, double)
RG_DEFINE_SIMD_RANGE(f32, float)
#define simd_lone_range_f64 simd_range_f64
#define simd_lone_range_f32 simd_range_f32
#define simd_lone_range_i64 arith_range_i64
#define simd_lone_range_i32 arith_range_i32
#define simd_lone_range_u32 arith_range_u32
/* 1- and 2-byte values' lone lanes: out of line, not compiled for AVX-512BW
 * with their tile (clang 14 vectorised the inlined scalar loops there into code
 * its x86 back end then failed to select: "Cannot select: X86ISD::PCMPGT").
 * Long ranges take the AVX-512BW ones anyway. */
#define RG_DEFINE_LONE_BYTES(F, N)                                                         \
    static __attribute__((noinline)) void simd_lone_##F##_##N(F##_acc_##N *a, const void *x, \
                                                              int64_t b, int64_t e, int mode) \
    {                                                                                      \
        F##_range_##N(a, x, b, e, mode);                                                   \
    }
RG_DEFINE_LONE_BYTES(arith, u8)
RG_DEFINE_LONE_BYTES(arith, i8)
RG_DEFINE_LONE_BYTES(logic, u8)
RG_DEFINE_LONE_BYTES(extreme, u8)
RG_DEFINE_LONE_BYTES(extreme, i8)
RG_DEFINE_LONE_BYTES(extreme, b8)
RG_DEFINE_LONE_BYTES(arith, u16)
RG_DEFINE_LONE_BYTES(arith, i16)
RG_DEFINE_LONE_BYTES(logic, u16)
RG_DEFINE_LONE_BYTES(extreme, u16)
RG_DEFINE_LONE_BYTES(extreme, i16)
/* The VBMI tiles' other parts: uint8's and int8's. */
#define arith_acc_pu8 arith_acc_u8
#define arith_acc_pi8 arith_acc_i8
#define arith_ident_pu8 arith_ident_u8
#define arith_ident_pi8 arith_ident_i8
#define logic_acc_pu8 logic_acc_u8
#define logic_ident_pu8 logic_ident_u8
#define simd_lone_range_pu8 simd_lone_arith_u8
#define simd_lone_range_pi8 simd_lone_arith_i8
#define simd_lone_logic_pu8 simd_lone_logic_u8
#define simd_store_pu8 simd_store
#define simd_store_pi8 simd_store
#define RG_SIMD_LOAD_pu8 RG_SIMD_LOAD_u8
#define RG_SIMD_LOAD_pi8 RG_SIMD_LOAD_i8
#define RG_SIMD_LOAD_pb8 RG_SIMD_LOAD_u8
#define extreme_acc_pu8 extreme_acc_u8
#define extreme_acc_pi8 extreme_acc_i8
#define extreme_acc_pb8 extreme_acc_b8
#define extreme_ident_pu8 extreme_ident_u8
#define extreme_ident_pi8 extreme_ident_i8
#define extreme_ident_pb8 extreme_ident_b8
#define simd_lone_extreme_pu8 simd_lone_extreme_u8
#define simd_lone_extreme_pi8 simd_lone_extreme_i8
#define simd_lone_extreme_pb8 simd_lone_extreme_b8
#define simd_extreme_store_pu8 simd_store_bytes
#define simd_extreme_store_pi8 simd_store_bytes
#define simd_extreme_store_pb8 simd_store_bytes
#define simd_row_pb8 simd_row_u8
#define RG_DTYPE_pu8 RG_UINT8
#define RG_DTYPE_pi8 RG_INT8
#define RG_DTYPE_pb8 RG_BOOL
#define simd_lone_extreme_f64 extreme_range_f64
#define simd_lone_extreme_f32 extreme_range_f32
#define simd_lone_extreme_i64 extreme_range_i64
#define simd_lone_extreme_u64 extreme_range_u64
#define simd_lone_extreme_i32 extreme_range_i32
#define simd_lone_extreme_u32 extreme_range_u32
#define simd_lone_logic_f64 logic_range_f64
#define simd_lone_logic_f32 logic_range_f32
#define simd_lone_logic_i64 logic_range_i64
#define simd_lone_logic_u64 logic_range_u64
#define simd_lone_logic_i32 logic_range_i32
#define simd_lone_logic_u32 logic_range_u32
#define simd_lone_range_u8 simd_lone_arith_u8
#define simd_lone_range_i8 simd_lone_arith_i8
#define simd_lone_range_u16 simd_lone_arith_u16
#define simd_lone_range_i16 simd_lone_arith_i16

/* Sum (mode 0) and, where PROD, product (mode 1) of N elements of type T in
 * accumulators V of PD or EPI64 lanes.  Each segment of the tile is loaded
 * as rows of 8 elements (masked loads, padded with the identity) and the
 * rows transposed, so that column m holds element m of every segment: each
 * lane then folds its segment left to right from the identity, as the
 * windows do, adding (or multiplying by) whole columns.  The padding
 * changes nothing: x * 1 is x, and a sum adds +0.0 to an accumulator that
 * started at +0.0 and so is never -0.0 (round to nearest; rounding down,
 * -0.0 + +0.0 is -0.0).  Why rows: on the Cascade Lake VM of BENCHMARKS.md
 * a gather of 8 took 31 cycles (microcode against Gather Data Sampling
 * slows them), and the register windows' permutes and masks all queue for
 * one port; rows took float64 sums on half-empty lengths 0.80x the time,
 * on 1 to 15 elements 0.39x, on power-law lengths 1.06x (BENCHMARKS.md,
 * thirty-seventh session).  BYTES (1-byte values): 1, a load per segment
 * instead of rows (simd_lane_bytes); 2, the same but first, for tiles
 * of up to 16 elements a segment, the byte permutes (simd_packed_bytes);
 * 3 (2-byte values), vpmaddwd on slots or loads (simd_lane_words); 4
 * (int32, uint32), no rows: 64-bit pairs of slots or loads
 * (simd_lane_dwords). */
#define RG_DEFINE_SIMD_ARITH(IN, IT, N, T, V, L, PROD, BYTES)                              \
    RG_AVX512_##N RG_WINDOW bool arith_body_##N##_##IN(void *out, const void *xv, const void *ov, \
                                                   int64_t i, int mode, bool stream,       \
                                                   bool lonely, bool narrow)               \
    {                                                                                      \
        const T *x = xv;                                                                   \
        bool prod = PROD && mode == 1;                                                     \
        RG_SIMD_TILE_BEGIN(IN, IT, lonely);                                                \
        V acc = RG_SIMD_##L##_SET1(prod ? 1 : 0);                                          \
        arith_acc_##N lone_a = arith_ident_##N(mode);                                      \
        if (lonely) /* first: the rows then find the elements after it streamed in */      \
            simd_lone_range_##N(&lone_a, xv, o[i + lone], o[i + lone + 1], mode);          \
        (void)span;                                                                        \
        if (unit) {                                                                        \
            RG_SIMD_FOLD_##L(RG_SIMD_BITS_##L(RG_SIMD_LOAD_##N(x + o[i])), 0);             \
        } else if (BYTES == 2 && !lonely && longest <= 16) {                               \
            acc = RG_SIMD_FROM_##L(                                                        \
                simd_packed_bytes(x, base, span, s, len, longest, (T)-1 < 0));             \
        } else if (BYTES == 3) {                                                           \
            acc = RG_SIMD_FROM_##L(                                                       \
                simd_lane_words(x, base, span, s, len, longest, lonely, (T)-1 < 0));       \
        } else if (BYTES == 4) {                                                           \
            acc = RG_SIMD_FROM_##L(                                                       \
                simd_lane_dwords(x, base, span, s, len, longest, lonely,                     \
                                 RG_DTYPE_##N != RG_UINT32));                              \
        } else if (BYTES == 1 || BYTES == 2) {                                             \
            acc = RG_SIMD_FROM_##L(simd_lane_bytes(x, s, len, longest, (T)-1 < 0));        \
        } else { /* one copy for both: two took clang's sanitizer builds 2x as long */     \
            RG_SIMD_ROWS(N, T, RG_SIMD_FOLD_##L, prod)                                     \
        }                                                                                  \
        if (lonely)                                                                        \
            acc = RG_SIMD_##L##_LANE(acc, lone, lone_a.v);                                 \
        simd_store_##N(out, i, acc, stream);                                               \
        return true;                                                                       \
    }                                                                                      \
    RG_SIMD_TILE_FNS(arith, N, IN, IT)
/* The rows of the tile, with PAD the identity, each column c (element c of
 * every lane, as 64-bit lanes y) taken in turn by COL(y, c): the lanes'
 * lengths len (the lone lane's 0) give each row's mask, 8 elements (h) at a
 * time; where narrow (a constant: see RG_SIMD_TILE_FNS), segments of up to
 * 4 elements go two to a row (lanes j and j + 4 in row j). */
#define RG_SIMD_ROWS(N, T, COL, PAD)                                                       \
    {                                                                                      \
        RG_SIMD_STARTS_BITS(st, in, s, len);                                               \
        if (narrow && longest <= 4) {                                                      \
            __m512i r[4];                                                                  \
            RG_UNROLL for (int j = 0; j < 4; j++) {                                        \
                r[j] = simd_row_##N((__mmask8)in[j], RG_SIMD_ROW_AT(T, j, 0), PAD);        \
                r[j] = _mm512_mask_mov_epi64(                                              \
                    r[j], 0xf0,                                                            \
                    simd_row_##N((__mmask8)(in[j + 4] << 4), RG_SIMD_ROW_AT(T, j + 4, -4), \
                                 PAD));                                                    \
            }                                                                              \
            simd_transpose4x2(r);                                                          \
            RG_UNROLL for (int m = 0; m < 4; m++)                                          \
                COL(r[m], m);                                                              \
        } else {                                                                           \
            /* the first 16 apart (most tiles need no more): in the loop they ran          \
             * slower (half-empty sums 1.21x the time with only the first 8 apart),        \
             * and unrolled whole they took clang's sanitizer builds minutes longer */     \
            RG_SIMD_ROWS8(N, T, COL, PAD, 0);                                              \
            if (longest > 8)                                                               \
                RG_SIMD_ROWS8(N, T, COL, PAD, 1);                                          \
            for (int h = 2; 8 * h < longest; h++)                                          \
                RG_SIMD_ROWS8(N, T, COL, PAD, h);                                          \
        }                                                                                  \
    }
/* Elements 8h to 8h + 7 of each segment (masks in), as columns. */
#define RG_SIMD_ROWS8(N, T, COL, PAD, h)                                                   \
    {                                                                                      \
        __m512i r[8];                                                                      \
        RG_UNROLL for (int j = 0; j < 8; j++)                                              \
            r[j] = simd_row_##N((__mmask8)(in[j] >> (8 * (h))),                            \
                                RG_SIMD_ROW_AT(T, j, 8 * (h)), PAD);                       \
        simd_transpose8(r);                                                                \
        RG_UNROLL for (int m = 0; m < 8; m++)                                              \
            COL(r[m], 8 * (h) + m);                                                        \
    }
/* Where lane j's row from element d of its segment starts. */
#define RG_SIMD_ROW_AT(T, j, d)                                                            \
    ((const T *)((uintptr_t)x + ((uintptr_t)st[j] + (uintptr_t)(d)) * sizeof(T)))
/* acc with lane j set to c */
#define RG_SIMD_PD_LANE(acc, j, c) _mm512_mask_mov_pd(acc, (__mmask8)(1u << (j)), _mm512_set1_pd(c))
#define RG_SIMD_EPI64_LANE(acc, j, c)                                                      \
    _mm512_mask_mov_epi64(acc, (__mmask8)(1u << (j)), _mm512_set1_epi64((long long)(c)))
/* A column folded into acc: multiplied where prod, else added. */
#define RG_SIMD_FOLD_PD(y, c)                                                              \
    (acc = prod ? _mm512_mul_pd(acc, _mm512_castsi512_pd(y))                               \
                : _mm512_add_pd(acc, _mm512_castsi512_pd(y)))
#define RG_SIMD_FOLD_EPI64(y, c) (acc = _mm512_add_epi64(acc, y)) /* integer tiles only sum */

#define RG_DEFINE_SIMD_TILES(IN, IT)                                                       \
    RG_DEFINE_SIMD_ARITH(IN, IT, f64, double, __m512d, PD, 1, 0)                           \
    RG_DEFINE_SIMD_ARITH(IN, IT, f32, float, __m512d, PD, 1, 0)                            \
    RG_DEFINE_SIMD_ARITH(IN, IT, i64, long long, __m512i, EPI64, 0, 0)                     \
    RG_DEFINE_SIMD_ARITH(IN, IT, i32, int, __m512i, EPI64, 0, 4)                           \
    RG_DEFINE_SIMD_ARITH(IN, IT, u32, int, __m512i, EPI64, 0, 4)                           \
    RG_DEFINE_SIMD_EXTREME(IN, IT, f64, double, __m512d, pd, _mm512_set1_pd, -INFINITY,    \
                           INFINITY, 1, 0)                                                 \
    RG_DEFINE_SIMD_EXTREME(IN, IT, i64, long long, __m512i, epi64, _mm512_set1_epi64,      \
                           INT64_MIN, INT64_MAX, 0, 0)                                     \
    RG_DEFINE_SIMD_EXTREME(IN, IT, u64, long long, __m512i, epu64, _mm512_set1_epi64,      \
                           0, (long long)-1, 0, 0)                                         \
    RG_DEFINE_SIMD_EXTREME(IN, IT, f32, float, __m512d, pd, _mm512_set1_pd, -INFINITY,     \
                           INFINITY, 1, 4)                                                 \
    RG_DEFINE_SIMD_EXTREME(IN, IT, i32, int, __m512i, epi64, _mm512_set1_epi64, INT32_MIN, \
                           INT32_MAX, 0, 4)                                                \
    RG_DEFINE_SIMD_EXTREME(IN, IT, u32, int, __m512i, epi64, _mm512_set1_epi64, 0,         \
                           UINT32_MAX, 0, 4)                                               \
    RG_DEFINE_SIMD_LOGIC(IN, IT, f64, double, PD, 0)                                       \
    RG_DEFINE_SIMD_LOGIC(IN, IT, f32, float, PD, 5)                                        \
    RG_DEFINE_SIMD_LOGIC(IN, IT, i64, long long, EPI64, 0)                                 \
    RG_DEFINE_SIMD_LOGIC(IN, IT, u64, long long, EPI64, 0)                                 \
    RG_DEFINE_SIMD_LOGIC(IN, IT, i32, int, EPI64, 4)                                       \
    RG_DEFINE_SIMD_LOGIC(IN, IT, u32, int, EPI64, 4)                                       \
    RG_DEFINE_SIMD_ARITH(IN, IT, u8, unsigned char, __m512i, EPI64, 0, 1)                  \
    RG_DEFINE_SIMD_ARITH(IN, IT, i8, signed char, __m512i, EPI64, 0, 1)                    \
    RG_DEFINE_SIMD_ARITH(IN, IT, pu8, unsigned char, __m512i, EPI64, 0, 2)                 \
    RG_DEFINE_SIMD_ARITH(IN, IT, pi8, signed char, __m512i, EPI64, 0, 2)                   \
    RG_DEFINE_SIMD_LOGIC(IN, IT, pu8, unsigned char, EPI64, 2)                             \
    RG_DEFINE_SIMD_LOGIC(IN, IT, u8, unsigned char, EPI64, 1)                              \
    RG_DEFINE_SIMD_EXTREME(IN, IT, u8, unsigned char, __m512i, epi64, _mm512_set1_epi64, 0, \
                           UINT8_MAX, 0, 1)                                                \
    RG_DEFINE_SIMD_EXTREME(IN, IT, i8, signed char, __m512i, epi64, _mm512_set1_epi64,     \
                           INT8_MIN, INT8_MAX, 0, 1)                                       \
    RG_DEFINE_SIMD_EXTREME(IN, IT, b8, unsigned char, __m512i, epi64, _mm512_set1_epi64, 0, \
                           UINT8_MAX, 0, 1)                                                \
    RG_DEFINE_SIMD_EXTREME(IN, IT, pu8, unsigned char, __m512i, epi64, _mm512_set1_epi64, 0, \
                           UINT8_MAX, 0, 2)                                                \
    RG_DEFINE_SIMD_EXTREME(IN, IT, pi8, signed char, __m512i, epi64, _mm512_set1_epi64,    \
                           INT8_MIN, INT8_MAX, 0, 2)                                       \
    RG_DEFINE_SIMD_EXTREME(IN, IT, pb8, unsigned char, __m512i, epi64, _mm512_set1_epi64, 0, \
                           UINT8_MAX, 0, 2)                                                \
    RG_DEFINE_SIMD_ARITH(IN, IT, u16, unsigned short, __m512i, EPI64, 0, 3)                \
    RG_DEFINE_SIMD_ARITH(IN, IT, i16, short, __m512i, EPI64, 0, 3)                         \
    RG_DEFINE_SIMD_LOGIC(IN, IT, u16, unsigned short, EPI64, 3)                            \
    RG_DEFINE_SIMD_EXTREME(IN, IT, u16, unsigned short, __m512i, epi64, _mm512_set1_epi64, \
                           0, UINT16_MAX, 0, 3)                                            \
    RG_DEFINE_SIMD_EXTREME(IN, IT, i16, short, __m512i, epi64, _mm512_set1_epi64,          \
                           INT16_MIN, INT16_MAX, 0, 3)

/* The comparisons of extreme tiles: ordered float ones, or integer ones. */
#define RG_SIMD_LT_pd(k, a, b) _mm512_mask_cmp_pd_mask(k, a, b, _CMP_LT_OQ)
#define RG_SIMD_GT_pd(k, a, b) _mm512_mask_cmp_pd_mask(k, a, b, _CMP_GT_OQ)
#define RG_SIMD_NAN_pd(k, a) _mm512_mask_cmp_pd_mask(k, a, a, _CMP_UNORD_Q)
#define RG_SIMD_LT_epi64(k, a, b) _mm512_mask_cmplt_epi64_mask(k, a, b)
#define RG_SIMD_GT_epi64(k, a, b) _mm512_mask_cmpgt_epi64_mask(k, a, b)
#define RG_SIMD_NAN_epi64(k, a) ((__mmask8)0)
#define RG_SIMD_LT_epu64(k, a, b) _mm512_mask_cmplt_epu64_mask(k, a, b)
#define RG_SIMD_GT_epu64(k, a, b) _mm512_mask_cmpgt_epu64_mask(k, a, b)
#define RG_SIMD_NAN_epu64(k, a) ((__mmask8)0)
#define RG_SIMD_MOV_pd _mm512_mask_mov_pd
#define RG_SIMD_MOV_epi64 _mm512_mask_mov_epi64
#define RG_SIMD_MOV_epu64 _mm512_mask_mov_epi64
#define RG_SIMD_BITS_pd(v) _mm512_castpd_si512(v)
#define RG_SIMD_BITS_epi64(v) (v)
#define RG_SIMD_BITS_epu64(v) (v)
#define RG_SIMD_FROM_pd(v) _mm512_castsi512_pd(v)
#define RG_SIMD_FROM_epi64(v) (v)
#define RG_SIMD_FROM_epu64(v) (v)

/* min 0, max 1, argmin 2, argmax 3 (bit 0: max) of 8-byte elements: as the
 * windows' scan, the first element is taken and a later one only when
 * strictly better, so ties keep the first position; empty segments keep the
 * identity and position -1.  The rows (padded with the identity) took
 * argmax 0.77x the time of the gathers and register windows before them on
 * half-empty lengths, 0.42x on 1 to 15 elements, 1.02x on power-law ones
 * (Cascade Lake VM, BENCHMARKS.md, thirty-eighth session).  pos (a
 * constant): the positions are kept (argmin, argmax); min and max have a
 * tile of their own without them, each column one min or max, which
 * took them 0.67x to 0.85x the time on short, half-empty, power-law and
 * 1..63 lengths (float64; int64 0.68x to 0.91x; AMD EPYC Zen 5, paired;
 * thirty-ninth session).  BYTES (1-byte values): 1, no rows but a load per
 * segment (simd_bytes_extreme); 2, the same but, for tiles of up to 16
 * elements a segment, the byte permutes: min, max, argmin and argmax took
 * 0.30x to 0.60x the time of the rows on short, half-empty, power-law and
 * 1..63 lengths (Intel Xeon, paired, fifty-third session).  3 (2-byte
 * values): tiles of up to 16 elements a segment (span at most 64 words, no
 * lone lane) in slots of keys (simd_packed_word_extreme), 0.50x to 0.68x
 * the time of the rows on short and half-empty lengths, 0.80x to 0.86x on
 * power-law ones (fifty-fourth session); others rows.  4 (4-byte values):
 * tiles of up to 16 elements a segment in slots of keys
 * (simd_dword_extreme), but float32 min and max (whose value would have to
 * be picked out at the position), which keep the rows with longer tiles. */
#define RG_DEFINE_SIMD_EXTREME(IN, IT, N, T, V, S, SET1, TMIN, TMAX, ISF, BYTES)           \
    RG_AVX512_##N RG_WINDOW bool extreme_body_##N##_##IN(void *out, const void *xv,         \
                                                     const void *ov, int64_t i, int mode,  \
                                                     bool stream, bool lonely, bool narrow, \
                                                     bool pos)                             \
    {                                                                                      \
        const T *x = xv;                                                                   \
        bool is_max = mode & 1;                                                            \
        RG_SIMD_TILE_BEGIN(IN, IT, lonely);                                                \
        /* 8 segments of 1 element: each lane its element, at 0; only where narrow       \
         * (F_pairs), not to add to the tiles of F_rows (see RG_SIMD_TILE_FNS):           \
         * all-length-1 min and argmax took 0.30x to 0.53x the time (AMD EPYC Zen 5) */    \
        if (narrow && unit) {                                                              \
            V e = RG_SIMD_LOAD_##N(x + o[i]);                                              \
            if (ISF && RG_SIMD_NAN_##S(0xff, e))                                           \
                return false;                                                              \
            if (pos)                                                                       \
                simd_store(out, i, _mm512_setzero_si512(), stream);                        \
            else                                                                           \
                simd_extreme_store_##N(out, i, e, stream);                                 \
            return true;                                                                   \
        }                                                                                  \
        V v = is_max ? SET1(TMIN) : SET1(TMAX);                                            \
        __m512i at = _mm512_set1_epi64(-1);                                                \
        __mmask8 nan = 0;                                                                  \
        extreme_acc_##N lone_a = extreme_ident_##N(mode);                                  \
        int64_t lone_b = lonely ? (int64_t)o[i + lone] : 0;                                \
        if (lonely) /* first: the rows then find the elements after it streamed in */      \
            simd_lone_extreme_##N(&lone_a, xv, lone_b, o[i + lone + 1], mode);             \
        /* Column 0 takes the lanes' first elements (those of segments not                 \
         * empty), a later column only strictly better ones: the padding, the              \
         * identity, never is.  A NaN (never padding) sends the tile to the                \
         * windows; the lone segment's range has the NaN rules. */                         \
        const __mmask8 first = _mm512_cmpgt_epi64_mask(len, _mm512_setzero_si512());       \
        const T pad = is_max ? TMIN : TMAX;                                                \
        if (BYTES == 3 && !lonely && longest <= 16 && span <= 64) {                        \
            v = RG_SIMD_FROM_##S(simd_packed_word_extreme(                                 \
                x, base, span, s, len, longest,                                            \
                (unsigned short)((is_max ? 0 : 0xffff) ^ ((T)-1 < 0 ? 0x8000 : 0)),       \
                pos ? &at : NULL));                                                        \
        } else if (BYTES == 4 && longest <= 16 && (pos || !ISF)) {                         \
            v = RG_DWORD_V_##S(simd_dword_extreme(                                         \
                x, base, span, s, len, longest, lonely,                                    \
                (uint32_t)((is_max ? 0 : 0xffffffffu) ^                                    \
                           (RG_DTYPE_##N == RG_INT32 ? 0x80000000u : 0)),                  \
                ISF, pos ? &at : NULL, &nan));                                             \
        } else if (BYTES == 1 || BYTES == 2) {                                             \
            v = RG_SIMD_FROM_##S(simd_bytes_extreme(                                       \
                x, base, span, s, len, longest,                                            \
                (char)((is_max ? 0 : 0xff) ^ ((T)-1 < 0 ? 0x80 : 0)),                      \
                BYTES == 2 && !lonely && longest <= 16, pos ? &at : NULL));                \
        } else {                                                                           \
        RG_SIMD_ROWS(N, T, RG_SIMD_EXTREME_COL_##S, pad)                                   \
        }                                                                                  \
        if (ISF && nan)                                                                    \
            return false;                                                                  \
        /* bool's bytes are padded as uint8's, but its min of nothing is 1 */               \
        if (RG_DTYPE_##N == RG_BOOL && !is_max && !pos)                                    \
            v = RG_SIMD_MOV_##S(v, (__mmask8)~first, SET1(1));                             \
        if (lonely) {                                                                      \
            v = RG_SIMD_MOV_##S(v, (__mmask8)(1u << lone), SET1(lone_a.v));                \
            at = _mm512_mask_mov_epi64(at, (__mmask8)(1u << lone),                         \
                                       _mm512_set1_epi64(lone_a.i - lone_b));              \
        }                                                                                  \
        if (pos)                                                                           \
            simd_store(out, i, at, stream);                                                \
        else                                                                               \
            simd_extreme_store_##N(out, i, v, stream);                                     \
        return true;                                                                       \
    }                                                                                      \
    RG_AVX512_##N RG_WINDOW bool extreme_value_body_##N##_##IN(void *out, const void *xv,   \
                                                           const void *ov, int64_t i,      \
                                                           int mode, bool stream,          \
                                                           bool lonely, bool narrow)       \
    {                                                                                      \
        return extreme_body_##N##_##IN(out, xv, ov, i, mode, stream, lonely, narrow, false); \
    }                                                                                      \
    RG_AVX512_##N RG_WINDOW bool extreme_pos_body_##N##_##IN(void *out, const void *xv,     \
                                                         const void *ov, int64_t i,        \
                                                         int mode, bool stream,            \
                                                         bool lonely, bool narrow)         \
    {                                                                                      \
        return extreme_body_##N##_##IN(out, xv, ov, i, mode, stream, lonely, narrow, true); \
    }                                                                                      \
    RG_SIMD_TILE_FNS(extreme_value, N, IN, IT)                                             \
    RG_SIMD_TILE_FNS(extreme_pos, N, IN, IT)

/* count_nonzero (mode 0), any (1) and all (2) of N elements of type T, in
 * 64-bit lanes of L (PD: floats, widened; EPI64: integers): each column
 * adds 1 to the lanes whose element is not zero (NaN is not zero, -0.0 is,
 * as in the fold); the padding, 0, adds nothing.  The counts are exact, so
 * the results are the fold's.  BYTES as for the sums; 4 (int32, uint32)
 * and 5 (float32, whose -0.0 is zero) count by simd_lane_dwords. */
#define RG_DEFINE_SIMD_LOGIC(IN, IT, N, T, L, BYTES)                                       \
    RG_AVX512_##N RG_WINDOW bool logic_body_##N##_##IN(void *out, const void *xv, const void *ov, \
                                                   int64_t i, int mode, bool stream,       \
                                                   bool lonely, bool narrow)               \
    {                                                                                      \
        const T *x = xv;                                                                   \
        RG_SIMD_TILE_BEGIN(IN, IT, lonely);                                                \
        const __m512i inc = _mm512_set1_epi64(1);                                          \
        __m512i acc = _mm512_setzero_si512();                                              \
        logic_acc_##N lone_a = logic_ident_##N(mode);                                      \
        if (lonely) /* first, as the sums' */                                              \
            simd_lone_logic_##N(&lone_a, xv, o[i + lone], o[i + lone + 1], mode);          \
        (void)span;                                                                        \
        if (unit) {                                                                        \
            RG_SIMD_LOGIC_COL_##L(RG_SIMD_BITS_##L(RG_SIMD_LOAD_##N(x + o[i])), 0);        \
        } else if (BYTES == 2 && !lonely && longest <= 16) {                               \
            acc = simd_packed_bytes(x, base, span, s, len, longest, 2);                    \
        } else if (BYTES == 3) {                                                           \
            acc = simd_lane_words(x, base, span, s, len, longest, lonely, 2);              \
        } else if (BYTES == 4 || BYTES == 5) {                                             \
            acc = simd_lane_dwords(x, base, span, s, len, longest, lonely, BYTES == 5 ? 3 : 2); \
        } else if (BYTES == 1 || BYTES == 2) {                                             \
            acc = simd_lane_bytes(x, s, len, longest, 2);                                  \
        } else {                                                                           \
            RG_SIMD_ROWS(N, T, RG_SIMD_LOGIC_COL_##L, 0)                                   \
        }                                                                                  \
        if (lonely)                                                                        \
            acc = RG_SIMD_EPI64_LANE(acc, lone, lone_a.v);                                 \
        /* all compares with every lane's length, the lone one's too */                    \
        simd_store_logic(out, i, acc, _mm512_sub_epi64(simd_starts_##IN(o + i + 1), s), mode, \
                         stream);                                                          \
        return true;                                                                       \
    }                                                                                      \
    RG_SIMD_TILE_FNS(logic, N, IN, IT)
#define RG_SIMD_LOGIC_COL_PD(y, c)                                                         \
    (acc = _mm512_mask_add_epi64(                                                          \
         acc, _mm512_cmp_pd_mask(_mm512_castsi512_pd(y), _mm512_setzero_pd(), _CMP_NEQ_UQ), \
         acc, inc))
#define RG_SIMD_LOGIC_COL_EPI64(y, c)                                                      \
    (acc = _mm512_mask_add_epi64(acc, _mm512_test_epi64_mask(y, y), acc, inc))

/* Column c of the rows, y, taken into the extremes v and positions at. */
#define RG_SIMD_EXTREME_COL(S, y, c)                                                       \
    do {                                                                                   \
        __typeof__(v) e = RG_SIMD_FROM_##S(y);                                             \
        nan |= RG_SIMD_NAN_##S(0xff, e);                                                   \
        if (pos) {                                                                         \
            __mmask8 better = (c) == 0 ? first                                             \
                              : is_max ? RG_SIMD_GT_##S(0xff, e, v)                        \
                                       : RG_SIMD_LT_##S(0xff, e, v);                       \
            v = RG_SIMD_MOV_##S(v, better, e);                                             \
            at = _mm512_mask_mov_epi64(at, better, _mm512_set1_epi64(c));                  \
        } else { /* ties and padding as above: of equal values the earlier, v, stays */    \
            v = is_max ? RG_SIMD_MAX_##S(e, v) : RG_SIMD_MIN_##S(e, v);                    \
        }                                                                                  \
    } while (0)
/* max and min (AVX-512: of two equal operands, the second). */
#define RG_SIMD_MIN_pd _mm512_min_pd
#define RG_SIMD_MAX_pd _mm512_max_pd
#define RG_SIMD_MIN_epi64 _mm512_min_epi64
#define RG_SIMD_MAX_epi64 _mm512_max_epi64
#define RG_SIMD_MIN_epu64 _mm512_min_epu64
#define RG_SIMD_MAX_epu64 _mm512_max_epu64
#define RG_SIMD_EXTREME_COL_pd(y, c) RG_SIMD_EXTREME_COL(pd, y, c)
#define RG_SIMD_EXTREME_COL_epi64(y, c) RG_SIMD_EXTREME_COL(epi64, y, c)
#define RG_SIMD_EXTREME_COL_epu64(y, c) RG_SIMD_EXTREME_COL(epu64, y, c)

RG_DEFINE_SIMD_TILES(i32, int32_t)
RG_DEFINE_SIMD_TILES(i64, int64_t)

/* The elements of m (8 bits) from p as 8 lanes of 64 bits, the others 0:
 * 32-bit values widened as in the rows. */
#define RG_SIMD_MLOAD_f64(m, p) _mm512_maskz_loadu_pd(m, p)
#define RG_SIMD_MLOAD_i64(m, p) _mm512_maskz_loadu_epi64(m, p)
#define RG_SIMD_MLOAD_u64(m, p) _mm512_maskz_loadu_epi64(m, p)
#define RG_SIMD_MLOAD_f32(m, p)                                                            \
    _mm512_cvtps_pd(_mm512_castps512_ps256(_mm512_maskz_loadu_ps((__mmask16)(m), p)))
#define RG_SIMD_MLOAD_i32(m, p)                                                            \
    _mm512_cvtepi32_epi64(_mm512_castsi512_si256(_mm512_maskz_loadu_epi32((__mmask16)(m), p)))
#define RG_SIMD_MLOAD_u32(m, p)                                                            \
    _mm512_cvtepu32_epi64(_mm512_castsi512_si256(_mm512_maskz_loadu_epi32((__mmask16)(m), p)))
#define RG_SIMD_EQ_pd(a, b) _mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ)
#define RG_SIMD_EQ_epi64(a, b) _mm512_cmpeq_epi64_mask(a, b)
#define RG_SIMD_EQ_epu64(a, b) _mm512_cmpeq_epi64_mask(a, b)

/* x[b .. e), e - b >= 8, in 4 x 8 lanes: lane j of accumulator a keeps the
 * first extreme of elements b + 8a + j, b + 8a + j + 32, ... (the last
 * group masked); then the extreme of all lanes, and the lowest position
 * among the lanes equal to it (== : -0.0 and +0.0 tie, as in the fold),
 * which is the fold's first position.  Four accumulators, as one waited on
 * its compare every 8 elements: on one huge segment, argmax ran at a fifth
 * of the memory's bandwidth. */
#define RG_SIMD_EXTREME_SCAN(N, S, CMP, V)                                                 \
    for (; k + 32 <= e; k += 32) {                                                         \
        RG_UNROLL for (int a = 0; a < 4; a++) {                                            \
            RG_RANGE_PREFETCH(x + k + 8 * a);                                              \
            V y = RG_SIMD_MLOAD_##N(0xff, x + k + 8 * a);                                  \
            nan |= RG_SIMD_NAN_##S(0xff, y);                                               \
            __mmask8 better = CMP(0xff, y, v[a]);                                          \
            v[a] = RG_SIMD_MOV_##S(v[a], better, y);                                       \
            at[a] = _mm512_mask_mov_epi64(at[a], better,                                   \
                                          _mm512_add_epi64(iota, _mm512_set1_epi64(k + 8 * a))); \
        }                                                                                  \
    }                                                                                      \
    for (int a = 0; k < e; k += 8, a = (a + 1) & 3) {                                      \
        __mmask8 in = e - k >= 8 ? 0xff : (__mmask8)((1u << (e - k)) - 1);                 \
        V y = RG_SIMD_MLOAD_##N(in, x + k);                                                \
        nan |= RG_SIMD_NAN_##S(in, y);                                                     \
        __mmask8 better = CMP(in, y, v[a]);                                                \
        v[a] = RG_SIMD_MOV_##S(v[a], better, y);                                           \
        at[a] = _mm512_mask_mov_epi64(at[a], better,                                       \
                                      _mm512_add_epi64(iota, _mm512_set1_epi64(k)));       \
    }
#define RG_DEFINE_SIMD_EXTREME_RANGE(N, T, V, S, SET1)                                     \
    RG_AVX512 static bool simd_extreme_range_##N(const void *xv, int64_t b, int64_t e,     \
                                                 int mode, int64_t *pos)                   \
    {                                                                                      \
        const T *x = xv;                                                                   \
        bool is_max = mode & 1;                                                            \
        const __m512i iota = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);                     \
        V v[4];                                                                            \
        __m512i at[4];                                                                     \
        /* every accumulator starts from the first 8 elements: a lane's first              \
         * extreme is then still the earliest, as they come first */                       \
        v[0] = v[1] = v[2] = v[3] = RG_SIMD_MLOAD_##N(0xff, x + b);                        \
        at[0] = at[1] = at[2] = at[3] = _mm512_add_epi64(iota, _mm512_set1_epi64(b));      \
        __mmask8 nan = RG_SIMD_NAN_##S(0xff, v[0]);                                        \
        int64_t k = b + 8;                                                                 \
        if (is_max) {                                                                      \
            RG_SIMD_EXTREME_SCAN(N, S, RG_SIMD_GT_##S, V)                                  \
        } else {                                                                           \
            RG_SIMD_EXTREME_SCAN(N, S, RG_SIMD_LT_##S, V)                                  \
        }                                                                                  \
        if (nan)                                                                           \
            return false;                                                                  \
        V m01 = is_max ? _mm512_max_##S(v[0], v[1]) : _mm512_min_##S(v[0], v[1]);          \
        V m23 = is_max ? _mm512_max_##S(v[2], v[3]) : _mm512_min_##S(v[2], v[3]);          \
        V all = is_max ? _mm512_max_##S(m01, m23) : _mm512_min_##S(m01, m23);              \
        V best = SET1(is_max ? _mm512_reduce_max_##S(all) : _mm512_reduce_min_##S(all));   \
        const __m512i none = _mm512_set1_epi64(INT64_MAX);                                 \
        __m512i cand = none;                                                               \
        for (int a = 0; a < 4; a++)                                                        \
            cand = _mm512_min_epi64(                                                       \
                cand, _mm512_mask_mov_epi64(none, RG_SIMD_EQ_##S(v[a], best), at[a]));     \
        *pos = _mm512_reduce_min_epi64(cand);                                              \
        return true;                                                                       \
    }
RG_DEFINE_SIMD_EXTREME_RANGE(f64, double, __m512d, pd, _mm512_set1_pd)
RG_DEFINE_SIMD_EXTREME_RANGE(i64, long long, __m512i, epi64, _mm512_set1_epi64)
RG_DEFINE_SIMD_EXTREME_RANGE(u64, unsigned long long, __m512i, epu64, _mm512_set1_epi64)
RG_DEFINE_SIMD_EXTREME_RANGE(f32, float, __m512d, pd, _mm512_set1_pd)
RG_DEFINE_SIMD_EXTREME_RANGE(i32, int, __m512i, epi64, _mm512_set1_epi64)
RG_DEFINE_SIMD_EXTREME_RANGE(u32, unsigned int, __m512i, epi64, _mm512_set1_epi64)
#endif

#if RG_HAVE_SIMD_TILES
/* The sum of the 8 lanes of v, mod 2^64: gcc's _mm512_reduce_add_epi64
 * adds them as signed long long, whose overflow is undefined (UBSan
 * stopped an int64 sum there). */
RG_AVX512 static inline uint64_t simd_lanes_sum(__m512i v)
{
    uint64_t lane[8], sum = 0;
    _mm512_storeu_si512((void *)lane, v);
    for (int j = 0; j < 8; j++)
        sum += lane[j];
    return sum;
}

/* The nonzero elements of x[b .. e) counted in 64-bit lanes, 8 elements at
 * a time (W 8) or 16 (W 16, two accumulators): NZ(m, p) gives the mask of
 * the nonzero ones among the elements m from p (floats: NaN is nonzero). */
#define RG_DEFINE_SIMD_LOGIC_RANGE(N, T, W, NZ)                                            \
    RG_AVX512 static uint64_t simd_logic_range_##N(const T *x, int64_t b, int64_t e)       \
    {                                                                                      \
        const __m512i inc = _mm512_set1_epi64(1);                                          \
        __m512i lo = _mm512_setzero_si512(), hi = lo;                                      \
        for (int64_t k = b; k < e; k += W) {                                               \
            RG_RANGE_PREFETCH(x + k);                                                      \
            uint32_t in = e - k >= W ? (uint32_t)((1ull << W) - 1)                         \
                                     : (uint32_t)((1ull << (e - k)) - 1);                  \
            uint32_t m = NZ(in, x + k);                                                    \
            lo = _mm512_mask_add_epi64(lo, (__mmask8)m, lo, inc);                          \
            if (W == 16)                                                                   \
                hi = _mm512_mask_add_epi64(hi, (__mmask8)(m >> 8), hi, inc);               \
        }                                                                                  \
        return simd_lanes_sum(_mm512_add_epi64(lo, hi));                                   \
    }
RG_AVX512 static inline uint32_t simd_nz_f64(uint32_t m, const double *p)
{
    return _mm512_mask_cmp_pd_mask((__mmask8)m, _mm512_maskz_loadu_pd((__mmask8)m, p),
                                   _mm512_setzero_pd(), _CMP_NEQ_UQ);
}
RG_AVX512 static inline uint32_t simd_nz_f32(uint32_t m, const float *p)
{
    return _mm512_mask_cmp_ps_mask((__mmask16)m, _mm512_maskz_loadu_ps((__mmask16)m, p),
                                   _mm512_setzero_ps(), _CMP_NEQ_UQ);
}
RG_AVX512 static inline uint32_t simd_nz_x64(uint32_t m, const long long *p)
{
    __m512i v = _mm512_maskz_loadu_epi64((__mmask8)m, p);
    return _mm512_test_epi64_mask(v, v);
}
RG_AVX512 static inline uint32_t simd_nz_x32(uint32_t m, const int *p)
{
    __m512i v = _mm512_maskz_loadu_epi32((__mmask16)m, p);
    return _mm512_test_epi32_mask(v, v);
}
RG_DEFINE_SIMD_LOGIC_RANGE(f64, double, 8, simd_nz_f64)
RG_DEFINE_SIMD_LOGIC_RANGE(f32, float, 16, simd_nz_f32)
RG_DEFINE_SIMD_LOGIC_RANGE(x64, long long, 8, simd_nz_x64)
RG_DEFINE_SIMD_LOGIC_RANGE(x32, int, 16, simd_nz_x32)

/* The sum of x[b .. e) in two accumulators of 8 64-bit lanes, 16 elements at
 * a time (32-bit ones sign- or zero-extended by LOAD).  The second half's
 * address is an integer: it may lie past the content, where no lane reads. */
#define RG_DEFINE_SIMD_INT_SUM(N, T, LOAD)                                                 \
    RG_AVX512 static uint64_t simd_int_sum_##N(const T *x, int64_t b, int64_t e)           \
    {                                                                                      \
        __m512i lo = _mm512_setzero_si512(), hi = lo;                                      \
        for (int64_t k = b; k < e; k += 16) {                                              \
            RG_RANGE_PREFETCH(x + k);                                                      \
            if (sizeof(T) == 8)                                                            \
                RG_RANGE_PREFETCH(x + k + 8);                                              \
            uint32_t in = e - k >= 16 ? 0xffff : (uint32_t)((1u << (e - k)) - 1);          \
            lo = _mm512_add_epi64(lo, LOAD((__mmask8)in, x + k));                         \
            hi = _mm512_add_epi64(                                                         \
                hi, LOAD((__mmask8)(in >> 8), (const T *)((uintptr_t)(x + k) + 8 * sizeof(T)))); \
        }                                                                                  \
        return simd_lanes_sum(_mm512_add_epi64(lo, hi));                                   \
    }
RG_DEFINE_SIMD_INT_SUM(x64, long long, RG_SIMD_MLOAD_i64)
RG_DEFINE_SIMD_INT_SUM(i32, int, RG_SIMD_MLOAD_i32)
RG_DEFINE_SIMD_INT_SUM(u32, int, RG_SIMD_MLOAD_u32)

/* 1- and 2-byte values 64 bytes at a time (AVX-512BW), the lanes past e
 * loaded as 0: simd_load_B (B bits a value) and the count of nonzero ones
 * (popcnt of the test's mask).  Sums: each 8 bytes added into a 64-bit
 * lane as unsigned (sad against 0), or each pair of 2-byte values into a
 * 32-bit lane (at most 2 * 65535) and those pairs into 64-bit lanes; then
 * for int8 256, for int16 65536, taken back for each negative value. */
#define RG_DEFINE_SIMD_NARROW_COUNT(B, T, MASK)                                            \
    RG_AVX512_BW static inline __m512i simd_load_##B(const T *x, int64_t k, int64_t e)     \
    {                                                                                      \
        enum { step = 64 / sizeof(T) };                                                    \
        uint64_t in = e - k >= step ? ~(uint64_t)0 >> (64 - step)                          \
                                    : ((uint64_t)1 << (e - k)) - 1;                        \
        RG_RANGE_PREFETCH(x + k);                                                          \
        return _mm512_maskz_loadu_epi##B((MASK)in, x + k);                                 \
    }                                                                                      \
    RG_AVX512_BW static uint64_t simd_count_##B(const T *x, int64_t b, int64_t e)          \
    {                                                                                      \
        uint64_t n = 0;                                                                    \
        for (int64_t k = b; k < e; k += 64 / sizeof(T)) {                                  \
            __m512i v = simd_load_##B(x, k, e);                                            \
            n += (uint64_t)__builtin_popcountll(_mm512_test_epi##B##_mask(v, v));          \
        }                                                                                  \
        return n;                                                                          \
    }
RG_DEFINE_SIMD_NARROW_COUNT(8, unsigned char, __mmask64)
RG_DEFINE_SIMD_NARROW_COUNT(16, unsigned short, __mmask32)
RG_AVX512_BW static uint64_t simd_byte_sum(const unsigned char *x, int64_t b, int64_t e,
                                           bool is_signed)
{
    __m512i acc = _mm512_setzero_si512();
    uint64_t negative = 0;
    for (int64_t k = b; k < e; k += 64) {
        __m512i v = simd_load_8(x, k, e);
        acc = _mm512_add_epi64(acc, _mm512_sad_epu8(v, _mm512_setzero_si512()));
        if (is_signed)
            negative += (uint64_t)__builtin_popcountll(_mm512_movepi8_mask(v));
    }
    return simd_lanes_sum(acc) - 256 * negative;
}
RG_AVX512_BW static uint64_t simd_short_sum(const unsigned short *x, int64_t b, int64_t e,
                                            bool is_signed)
{
    const __m512i low16 = _mm512_set1_epi32(0xffff), low32 = _mm512_set1_epi64(0xffffffff);
    __m512i acc = _mm512_setzero_si512();
    uint64_t negative = 0;
    for (int64_t k = b; k < e; k += 32) {
        __m512i v = simd_load_16(x, k, e);
        __m512i pair = _mm512_add_epi32(_mm512_and_si512(v, low16), _mm512_srli_epi32(v, 16));
        acc = _mm512_add_epi64(acc, _mm512_add_epi64(_mm512_and_si512(pair, low32),
                                                     _mm512_srli_epi64(pair, 32)));
        if (is_signed)
            negative += (uint64_t)__builtin_popcount(_mm512_movepi16_mask(v));
    }
    return simd_lanes_sum(acc) - 65536 * negative;
}

/* min 0, max 1, argmin 2, argmax 3 of 1- and 2-byte values x[b .. e) (N, T;
 * S: the AVX-512BW element type, B: its bits) in their own lanes, 64 bytes
 * a step: first the extreme, in two accumulators (the tail padded with the
 * identity, which never changes it) folded down to one lane; then, for
 * argmin and argmax, the first position holding it (which is the fold's:
 * integers have no NaN, and ties keep the first).  The second pass stops
 * there, so it reads all of x again only when the extreme comes last.  For
 * min and max *pos is b, a position in the range. */
#define RG_SIMD_NARROW_8 char /* what _mm512_set1_epi8 and _epi16 take, and their masks */
#define RG_SIMD_NARROW_16 short
#define RG_SIMD_MASK_8 __mmask64
#define RG_SIMD_MASK_16 __mmask32
#define RG_DEFINE_SIMD_NARROW_EXTREME(N, T, S, B, TMIN, TMAX)                              \
    RG_AVX512_BW static void simd_narrow_extreme_##N(const T *x, int64_t b, int64_t e,     \
                                                     int mode, int64_t *pos, T *value)     \
    {                                                                                      \
        enum { step = 64 / sizeof(T) };                                                    \
        bool is_max = mode & 1;                                                            \
        const __m512i pad = _mm512_set1_epi##B((RG_SIMD_NARROW_##B)(is_max ? (TMIN) : (TMAX))); \
        __m512i v0 = pad, v1 = pad;                                                        \
        int64_t k = b;                                                                     \
        for (; k + 2 * step <= e; k += 2 * step) {                                         \
            RG_RANGE_PREFETCH(x + k);                                                      \
            RG_RANGE_PREFETCH(x + k + step);                                               \
            __m512i y0 = _mm512_loadu_si512((const void *)(x + k));                        \
            __m512i y1 = _mm512_loadu_si512((const void *)(x + k + step));                 \
            v0 = is_max ? _mm512_max_##S(v0, y0) : _mm512_min_##S(v0, y0);                 \
            v1 = is_max ? _mm512_max_##S(v1, y1) : _mm512_min_##S(v1, y1);                 \
        }                                                                                  \
        for (; k < e; k += step) {                                                         \
            uint64_t in = e - k >= step ? ~(uint64_t)0 >> (64 - step)                      \
                                        : ((uint64_t)1 << (e - k)) - 1;                    \
            __m512i y = _mm512_mask_loadu_epi##B(pad, (RG_SIMD_MASK_##B)in, x + k);        \
            v0 = is_max ? _mm512_max_##S(v0, y) : _mm512_min_##S(v0, y);                   \
        }                                                                                  \
        __m512i v = is_max ? _mm512_max_##S(v0, v1) : _mm512_min_##S(v0, v1);              \
        __m256i lo = _mm512_castsi512_si256(v), hi = _mm512_extracti64x4_epi64(v, 1);       \
        __m256i h = is_max ? _mm256_max_##S(lo, hi) : _mm256_min_##S(lo, hi);              \
        __m128i q = _mm256_castsi256_si128(h), r = _mm256_extracti128_si256(h, 1);          \
        q = is_max ? _mm_max_##S(q, r) : _mm_min_##S(q, r);                                \
        for (int shift = 8; shift >= (int)sizeof(T); shift /= 2) {                         \
            r = shift == 8   ? _mm_srli_si128(q, 8)                                        \
                : shift == 4 ? _mm_srli_si128(q, 4)                                        \
                : shift == 2 ? _mm_srli_si128(q, 2)                                        \
                             : _mm_srli_si128(q, 1);                                       \
            q = is_max ? _mm_max_##S(q, r) : _mm_min_##S(q, r);                            \
        }                                                                                  \
        int lane0 = _mm_cvtsi128_si32(q);                                                  \
        T best;                                                                            \
        memcpy(&best, &lane0, sizeof best); /* little-endian: lane 0's low bytes */       \
        *value = best;                                                                     \
        *pos = b;                                                                          \
        if (mode < 2)                                                                      \
            return;                                                                        \
        const __m512i want = _mm512_set1_epi##B((RG_SIMD_NARROW_##B)best);                 \
        for (k = b; k < e; k += step) {                                                    \
            uint64_t in = e - k >= step ? ~(uint64_t)0 >> (64 - step)                      \
                                        : ((uint64_t)1 << (e - k)) - 1;                    \
            RG_SIMD_MASK_##B m = (RG_SIMD_MASK_##B)in;                                     \
            uint64_t eq =                                                                  \
                _mm512_mask_cmpeq_epi##B##_mask(m, _mm512_maskz_loadu_epi##B(m, x + k), want); \
            if (eq) {                                                                      \
                *pos = k + __builtin_ctzll(eq);                                            \
                return;                                                                    \
            }                                                                              \
        }                                                                                  \
    }
RG_DEFINE_SIMD_NARROW_EXTREME(u8, uint8_t, epu8, 8, 0, UINT8_MAX)
RG_DEFINE_SIMD_NARROW_EXTREME(i8, int8_t, epi8, 8, INT8_MIN, INT8_MAX)
RG_DEFINE_SIMD_NARROW_EXTREME(u16, uint16_t, epu16, 16, 0, UINT16_MAX)
RG_DEFINE_SIMD_NARROW_EXTREME(i16, int16_t, epi16, 16, INT16_MIN, INT16_MAX)
#endif

/* The count of nonzero elements (count) or the sum of x[b .. e) of dtype t,
 * added to *acc, in AVX-512 lanes; false where there are none for t. */
static bool simd_count_or_sum(bool count, rg_dtype t, const void *x, int64_t b, int64_t e,
                              uint64_t *acc)
{
#if RG_HAVE_SIMD_TILES
    if (!have_avx512())
        return false;
    uint64_t r;
    switch (t) {
    case RG_FLOAT64: r = simd_logic_range_f64(x, b, e); break; /* counts only */
    case RG_FLOAT32: r = simd_logic_range_f32(x, b, e); break;
    case RG_INT64:
    case RG_UINT64: r = count ? simd_logic_range_x64(x, b, e) : simd_int_sum_x64(x, b, e); break;
    case RG_INT32: r = count ? simd_logic_range_x32(x, b, e) : simd_int_sum_i32(x, b, e); break;
    case RG_UINT32: r = count ? simd_logic_range_x32(x, b, e) : simd_int_sum_u32(x, b, e); break;
    case RG_BOOL:
    case RG_UINT8:
    case RG_INT8:
        if (!have_avx512bw())
            return false;
        r = count ? simd_count_8(x, b, e) : simd_byte_sum(x, b, e, t == RG_INT8);
        break;
    case RG_UINT16:
    case RG_INT16:
        if (!have_avx512bw())
            return false;
        r = count ? simd_count_16(x, b, e) : simd_short_sum(x, b, e, t == RG_INT16);
        break;
    default: return false;
    }
    *acc += r;
    return true;
#else
    (void)count, (void)t, (void)x, (void)b, (void)e, (void)acc;
    return false;
#endif
}

static bool simd_int_sum(rg_dtype t, const void *x, int64_t b, int64_t e, uint64_t *sum)
{
    return simd_count_or_sum(false, t, x, b, e, sum);
}

static bool simd_logic_range(rg_dtype t, const void *x, int64_t b, int64_t e, uint64_t *count)
{
    return simd_count_or_sum(true, t, x, b, e, count);
}

static bool simd_extreme_range(rg_dtype t, const void *x, int64_t b, int64_t e, int mode,
                               int64_t *pos)
{
#if RG_HAVE_SIMD_TILES
    if (e - b >= 8 && have_avx512()) {
        switch (t) {
        case RG_FLOAT64: return simd_extreme_range_f64(x, b, e, mode, pos);
        case RG_INT64: return simd_extreme_range_i64(x, b, e, mode, pos);
        case RG_UINT64: return simd_extreme_range_u64(x, b, e, mode, pos);
        case RG_FLOAT32: return simd_extreme_range_f32(x, b, e, mode, pos);
        case RG_INT32: return simd_extreme_range_i32(x, b, e, mode, pos);
        case RG_UINT32: return simd_extreme_range_u32(x, b, e, mode, pos);
        default: break;
        }
    }
#else
    (void)t, (void)x, (void)b, (void)e, (void)mode, (void)pos;
#endif
    return false;
}

/* The AVX-512BW extreme of 1- and 2-byte values x[b .. e) of dtype t (bool's
 * is uint8's: e > b, so its identity plays no part): its value, as T, at
 * *value, and at *pos its first position (argmin, argmax) or b (min, max).
 * False for other dtypes or where the CPU lacks AVX-512BW. */
static bool simd_narrow_extreme(rg_dtype t, const void *x, int64_t b, int64_t e, int mode,
                                int64_t *pos, void *value)
{
#if RG_HAVE_SIMD_TILES
    if (e > b && have_avx512bw()) {
        switch (t) {
        case RG_BOOL:
        case RG_UINT8: simd_narrow_extreme_u8(x, b, e, mode, pos, value); return true;
        case RG_INT8: simd_narrow_extreme_i8(x, b, e, mode, pos, value); return true;
        case RG_UINT16: simd_narrow_extreme_u16(x, b, e, mode, pos, value); return true;
        case RG_INT16: simd_narrow_extreme_i16(x, b, e, mode, pos, value); return true;
        default: break;
        }
    }
#else
    (void)t, (void)x, (void)b, (void)e, (void)mode, (void)pos, (void)value;
#endif
    return false;
}

/* The tile for a family, mode, content dtype and offsets dtype on this CPU,
 * or NULL. */
static simd_tile_fn simd_tile(rg_reduce_family family, int mode, rg_dtype content,
                              rg_dtype offsets)
{
#if RG_HAVE_SIMD_TILES
    if (!have_avx512())
        return NULL;
    int o64 = offsets == RG_INT64;
#define RG_SIMD_PICK(name) (o64 ? name##_i64 : name##_i32)
    if (family == RG_FAMILY_ARITH && content == RG_FLOAT64)
        return RG_SIMD_PICK(arith_tile_f64);
    if (family == RG_FAMILY_ARITH && content == RG_FLOAT32)
        return RG_SIMD_PICK(arith_tile_f32);
    if (family == RG_FAMILY_ARITH && mode == 0 && (content == RG_INT64 || content == RG_UINT64))
        return RG_SIMD_PICK(arith_tile_i64);
    if (family == RG_FAMILY_ARITH && mode == 0 && content == RG_INT32)
        return RG_SIMD_PICK(arith_tile_i32);
    if (family == RG_FAMILY_ARITH && mode == 0 && content == RG_UINT32)
        return RG_SIMD_PICK(arith_tile_u32);
    /* min and max (modes 0, 1) keep no positions: a tile of their own */
#define RG_SIMD_EXTREME_PICK(N)                                                            \
    (mode < 2 ? RG_SIMD_PICK(extreme_value_tile_##N) : RG_SIMD_PICK(extreme_pos_tile_##N))
    if (family == RG_FAMILY_EXTREME) {
        switch (content) {
        case RG_FLOAT64: return RG_SIMD_EXTREME_PICK(f64);
        case RG_INT64: return RG_SIMD_EXTREME_PICK(i64);
        case RG_UINT64: return RG_SIMD_EXTREME_PICK(u64);
        case RG_FLOAT32: return RG_SIMD_EXTREME_PICK(f32);
        case RG_INT32: return RG_SIMD_EXTREME_PICK(i32);
        case RG_UINT32: return RG_SIMD_EXTREME_PICK(u32);
        default: break;
        }
    }
    /* 1- and 2-byte values (bool as uint8; any nonzero value counts as such) */
    bool bytes = content == RG_BOOL || content == RG_UINT8 || content == RG_INT8;
    bool shorts = content == RG_UINT16 || content == RG_INT16;
    if ((bytes || shorts) && !have_avx512bw())
        return NULL;
    bool vbmi = bytes && have_avx512vbmi();
    if (family == RG_FAMILY_ARITH && mode == 0 && bytes && vbmi)
        return content == RG_INT8 ? RG_SIMD_PICK(arith_tile_pi8) : RG_SIMD_PICK(arith_tile_pu8);
    if (family == RG_FAMILY_ARITH && mode == 0 && bytes)
        return content == RG_INT8 ? RG_SIMD_PICK(arith_tile_i8) : RG_SIMD_PICK(arith_tile_u8);
    if (family == RG_FAMILY_ARITH && mode == 0 && shorts)
        return content == RG_INT16 ? RG_SIMD_PICK(arith_tile_i16) : RG_SIMD_PICK(arith_tile_u16);
    if (family == RG_FAMILY_LOGIC && bytes)
        return vbmi ? RG_SIMD_PICK(logic_tile_pu8) : RG_SIMD_PICK(logic_tile_u8);
    if (family == RG_FAMILY_LOGIC && shorts)
        return RG_SIMD_PICK(logic_tile_u16);
    if (family == RG_FAMILY_EXTREME && shorts)
        return content == RG_INT16 ? RG_SIMD_EXTREME_PICK(i16) : RG_SIMD_EXTREME_PICK(u16);
    /* bool: uint8's code, but 1 for the min of an empty segment; its
     * positions take uint8's tiles (the same code: bool's own copy took
     * argmin and argmax of short and half-empty lengths 1.03x to 1.06x the
     * time, Intel Xeon, paired; bool's stay unused) */
    if (family == RG_FAMILY_EXTREME && bytes && mode >= 2 && vbmi)
        return content == RG_INT8 ? RG_SIMD_PICK(extreme_pos_tile_pi8)
                                  : RG_SIMD_PICK(extreme_pos_tile_pu8);
    if (family == RG_FAMILY_EXTREME && bytes && mode >= 2)
        return content == RG_INT8 ? RG_SIMD_PICK(extreme_pos_tile_i8)
                                  : RG_SIMD_PICK(extreme_pos_tile_u8);
    if (family == RG_FAMILY_EXTREME && bytes && vbmi)
        return content == RG_INT8    ? RG_SIMD_PICK(extreme_value_tile_pi8)
               : content == RG_UINT8 ? RG_SIMD_PICK(extreme_value_tile_pu8)
                                     : RG_SIMD_PICK(extreme_value_tile_pb8);
    if (family == RG_FAMILY_EXTREME && bytes)
        return content == RG_INT8    ? RG_SIMD_PICK(extreme_value_tile_i8)
               : content == RG_UINT8 ? RG_SIMD_PICK(extreme_value_tile_u8)
                                     : RG_SIMD_PICK(extreme_value_tile_b8);
    if (family == RG_FAMILY_LOGIC) {
        switch (content) {
        case RG_FLOAT64: return RG_SIMD_PICK(logic_tile_f64);
        case RG_FLOAT32: return RG_SIMD_PICK(logic_tile_f32);
        case RG_INT64: return RG_SIMD_PICK(logic_tile_i64);
        case RG_UINT64: return RG_SIMD_PICK(logic_tile_u64);
        case RG_INT32: return RG_SIMD_PICK(logic_tile_i32);
        case RG_UINT32: return RG_SIMD_PICK(logic_tile_u32);
        default: break;
        }
    }
#undef RG_SIMD_EXTREME_PICK
#undef RG_SIMD_PICK
#else
    (void)family, (void)mode, (void)content, (void)offsets;
#endif
    return NULL;
}

/* ------------------------------------------------------------------------
 * The two mappings, generic over family F, dtype N and offsets type IN.
 * ------------------------------------------------------------------------ */


/* The widest window of each family: an extreme window costs several times an
 * arithmetic one per element, and at 16 it measured slower than the fold on
 * segments of 0 to 15 elements. */
#define arith_WIDE RG_WIDE
#define extreme_WIDE 8
#define logic_WIDE RG_WIDE

/* Reduces the RG_TILE segments from i with windows of width w (a constant, so
 * that each width gets its own fixed-length loops). */
#define RG_TILE_WINDOWS(F, N, w)                                                           \
    for (int j = 0; j < RG_TILE; j++)                                                      \
    F##_window_##N(out, i + j, x, o[i + j], (int64_t)o[i + j + 1] - o[i + j], w, mode)

/* Reduces and stores segments i .. i1-1 of the content of nelems elements.
 * A tile of RG_TILE segments all of length <= 1, 8 or 16 runs through windows
 * of that width (when they stay inside the content); any other segment runs
 * alone: a window of 8 if it fits, else the fold of its elements.  With simd
 * (an AVX-512 tile, or NULL), tiles from a multiple of RG_TILE go to it first;
 * with stream, their lines are streamed and the caller fences. */
#define RG_DEFINE_SEGMENTS(F, N, T, IN, IT)                                                \
    static inline void F##_one_##N##_##IN(void *out, int64_t seg, const T *x, int64_t s,   \
                                   int64_t e, int64_t nelems, int mode)                    \
    {                                                                                      \
        if (e - s <= 8 && s + 8 <= nelems) { /* most segments when few are long */         \
            F##_window_##N(out, seg, x, s, e - s, 8, mode);                                \
        } else {                                                                           \
            F##_acc_##N a = F##_ident_##N(mode);                                           \
            F##_range_##N(&a, x, s, e, mode);                                              \
            F##_store_##N(out, seg, a, s, e, mode);                                        \
        }                                                                                  \
    }                                                                                      \
    static void F##_segments_##N##_##IN(void *out, const T *x, const IT *o, int64_t i,     \
                                        int64_t i1, int64_t nelems, int mode,              \
                                        simd_tile_fn simd, bool stream)                    \
    {                                                                                      \
        for (; simd && i < i1 && i % RG_TILE; i++)                                         \
            F##_one_##N##_##IN(out, i, x, o[i], o[i + 1], nelems, mode);                   \
        for (; i + RG_TILE <= i1; i += RG_TILE) {                                          \
            if (simd && (i = simd(out, x, o, i, i1, mode, stream)) + RG_TILE > i1)         \
                break;                                                                     \
            int64_t longest = 0; /* a max, not a branch per segment */                     \
            for (int j = 0; j < RG_TILE; j++) {                                            \
                int64_t len = (int64_t)o[i + j + 1] - o[i + j];                            \
                longest = len > longest ? len : longest;                                   \
            }                                                                              \
            int64_t room = nelems - (int64_t)o[i + RG_TILE - 1]; /* from the last start */ \
            if (longest <= 1 && (int64_t)o[i + RG_TILE] - o[i] == RG_TILE) /* all 1 */     \
                for (int j = 0; j < RG_TILE; j++)                                          \
                    F##_window_##N(out, i + j, x, (int64_t)o[i] + j, 1, 1, mode);          \
            else if (longest <= 1 && room >= 1)                                            \
                RG_TILE_WINDOWS(F, N, 1);                                                  \
            else if (longest <= 8 && room >= 8)                                            \
                RG_TILE_WINDOWS(F, N, 8);                                                  \
            else if (longest <= F##_WIDE && room >= F##_WIDE)                              \
                RG_TILE_WINDOWS(F, N, F##_WIDE);                                           \
            else                                                                           \
                for (int j = 0; j < RG_TILE; j++)                                          \
                    F##_one_##N##_##IN(out, i + j, x, o[i + j], o[i + j + 1], nelems, mode); \
        }                                                                                  \
        for (; i < i1; i++)                                                                \
            F##_one_##N##_##IN(out, i, x, o[i], o[i + 1], nelems, mode);                   \
    }

/* PER_SEGMENT: segments are dealt out in small dynamic chunks and each is
 * reduced by one thread (so one huge segment runs on one thread). */
#define RG_DEFINE_PER_SEGMENT(F, N, T, IN, IT)                                             \
    static void per_segment_##F##_##N##_##IN(void *out, const T *x, const IT *o,           \
                                             int64_t nsegs, int64_t nelems, int mode,      \
                                             int team, simd_tile_fn simd, bool stream)     \
    {                                                                                      \
        int64_t chunks = (nsegs + RG_OMP_SEGMENT_CHUNK - 1) / RG_OMP_SEGMENT_CHUNK;        \
        (void)team;                                                                        \
        RG_OMP(parallel num_threads(team))                                                 \
        {                                                                                  \
            RG_OMP(for schedule(dynamic, 1) nowait)                                        \
            for (int64_t c = 0; c < chunks; c++) {                                         \
                int64_t i = c * RG_OMP_SEGMENT_CHUNK, rest = nsegs - i;                    \
                F##_segments_##N##_##IN(out, x, o, i,                                      \
                                        i + (rest < RG_OMP_SEGMENT_CHUNK                   \
                                                 ? rest                                    \
                                                 : RG_OMP_SEGMENT_CHUNK),                  \
                                        nelems, mode, simd, stream);                       \
            }                                                                              \
            if (stream) /* once per thread: a fence waits for every streamed line */       \
                stream_fence();                                                            \
        }                                                                                  \
    }

/* MERGE_PATH: the merge path of segment ends and elements (nsegs + nelems
 * steps) is cut into one equal piece per thread, so threads split elements,
 * not segments.  Thread t closes segments i0 .. i1-1 and writes each one
 * that lies wholly in its elements [k0, k1).  Two partial results remain per
 * thread: the head (segment i0, if it began before k0) and the tail (segment
 * i1, open at k1).  After the parallel region they are combined in thread
 * order: a segment cut by thread boundaries is the tails of the threads it
 * runs through, then the head of the thread that closes it. */
#define RG_DEFINE_MERGE_PATH(F, N, T, IN, IT)                                              \
    typedef struct {                                                                       \
        int64_t i0, i1;                                                                    \
        bool has_head;                                                                     \
        F##_acc_##N head, tail;                                                            \
    } F##_part_##N##_##IN;                                                                 \
    static void merge_path_##F##_##N##_##IN(void *out, const T *x, const IT *o,            \
                                            int64_t nsegs, int64_t nelems, int mode,       \
                                            int team, F##_part_##N##_##IN *parts,          \
                                            simd_tile_fn simd, bool stream)                \
    {                                                                                      \
        int threads = 1;                                                                   \
        (void)team;                                                                        \
        RG_OMP(parallel num_threads(team))                                                 \
        {                                                                                  \
            int t = thread_id(), nt = team_threads();                                      \
            if (t == 0)                                                                    \
                threads = nt;                                                              \
            size_t steps = (size_t)nsegs + (size_t)nelems;                                 \
            int64_t d0 = (int64_t)part_begin(steps, t, nt);                                \
            int64_t d1 = (int64_t)part_begin(steps, t + 1, nt);                            \
            int64_t i0 = path_search_##IN(o, nsegs, nelems, d0);                           \
            int64_t i1 = path_search_##IN(o, nsegs, nelems, d1);                           \
            int64_t k0 = d0 - i0, k1 = d1 - i1;                                            \
            F##_part_##N##_##IN *p = &parts[t];                                            \
            p->i0 = i0;                                                                    \
            p->i1 = i1;                                                                    \
            p->has_head = i0 < i1 && o[i0] < k0; /* only i0 can begin before k0 */         \
            if (p->has_head) {                                                             \
                p->head = F##_ident_##N(mode);                                             \
                F##_range_##N(&p->head, x, k0, o[i0 + 1], mode);                           \
            }                                                                              \
            F##_segments_##N##_##IN(out, x, o, i0 + p->has_head, i1, nelems, mode, simd,   \
                                    stream);                                               \
            if (stream)                                                                    \
                stream_fence();                                                            \
            p->tail = F##_ident_##N(mode);                                                 \
            if (i1 < nsegs)                                                                \
                F##_range_##N(&p->tail, x, o[i1] > k0 ? (int64_t)o[i1] : k0, k1, mode);    \
        }                                                                                  \
        F##_acc_##N carry = F##_ident_##N(mode);                                           \
        int64_t carry_seg = -1;                                                            \
        for (int t = 0; t < threads; t++) {                                                \
            F##_part_##N##_##IN *p = &parts[t];                                            \
            if (p->has_head) /* its segment is carry_seg: the previous tail's */           \
                F##_store_##N(out, p->i0, F##_combine_##N(carry, p->head, mode), o[p->i0], \
                              o[p->i0 + 1], mode);                                         \
            if (p->i1 < nsegs) {                                                           \
                carry = carry_seg == p->i1 ? F##_combine_##N(carry, p->tail, mode)         \
                                           : p->tail;                                      \
                carry_seg = p->i1;                                                         \
            }                                                                              \
        }                                                                                  \
    }

/* One entry point per (family, dtype, offsets type): allocates the per-thread
 * partials and runs the policy asked for. */
#define RG_DEFINE_REDUCE(F, N, T, IN, IT)                                                  \
    RG_DEFINE_SEGMENTS(F, N, T, IN, IT)                                                    \
    RG_DEFINE_PER_SEGMENT(F, N, T, IN, IT)                                                 \
    RG_DEFINE_MERGE_PATH(F, N, T, IN, IT)                                                  \
    static rg_status reduce_##F##_##N##_##IN(rg_context *ctx, void *out, const void *x,    \
                                             const void *o, int64_t nsegs, int64_t nelems, \
                                             int mode, rg_reduce_policy policy,            \
                                             simd_tile_fn simd, bool stream)               \
    {                                                                                      \
        int team = team_size((size_t)nsegs + (size_t)nelems);                              \
        if (policy == RG_REDUCE_POLICY_PER_SEGMENT) {                                      \
            per_segment_##F##_##N##_##IN(out, x, o, nsegs, nelems, mode, team, simd,       \
                                         stream);                                          \
            return RG_OK;                                                                  \
        }                                                                                  \
        F##_part_##N##_##IN *parts = malloc((size_t)team * sizeof *parts);                 \
        if (!parts)                                                                        \
            return rg_set_error(ctx, RG_ENOMEM,                                            \
                                "OpenMP backend: out of host memory for %d partials", team); \
        merge_path_##F##_##N##_##IN(out, x, o, nsegs, nelems, mode, team, parts, simd,     \
                                    stream);                                               \
        free(parts);                                                                       \
        return RG_OK;                                                                      \
    }

/* Segments regular_F (below) reduces at a time, from offsets made in cache. */
#define RG_REGULAR_BLOCK 4096
/* The longest segments regular_F takes: past them the offsets are a small
 * part of what is read. */
#define RG_REGULAR_MOST 8

/* Regular offsets, nsegs segments of len elements each (the offsets check
 * found longest * nsegs = nelems), without reading them: for segments of
 * length 1 they are as many bytes as the content.  Each thread makes the
 * offsets of a block of RG_REGULAR_BLOCK segments once, 0, len, 2 len, ...,
 * and runs every block of its share through the merge path's tiles and
 * stores (so the same results) with x and out shifted to the block's
 * first segment; results are relative to the segment (argmin, argmax) or
 * do not depend on where it lies. */
#define RG_DEFINE_REGULAR(F, N, T)                                                         \
    static void regular_##F##_##N(void *out, size_t size, const void *x_, int64_t nsegs,   \
                                  int64_t len, int mode, simd_tile_fn simd, bool stream)   \
    {                                                                                      \
        const T *x = x_;                                                                   \
        int64_t nblocks = (nsegs + RG_REGULAR_BLOCK - 1) / RG_REGULAR_BLOCK;               \
        int team = team_size((size_t)nsegs * (size_t)(len + 1));                           \
        (void)team;                                                                        \
        RG_OMP(parallel num_threads(team))                                                 \
        {                                                                                  \
            int64_t o[RG_REGULAR_BLOCK + 1];                                               \
            for (int64_t s = 0; s <= RG_REGULAR_BLOCK; s++)                                \
                o[s] = s * len;                                                            \
            RG_OMP(for schedule(static) nowait)                                            \
            for (int64_t b = 0; b < nblocks; b++) {                                        \
                int64_t i0 = b * RG_REGULAR_BLOCK, rest = nsegs - i0;                      \
                F##_segments_##N##_i64((char *)out + (size_t)i0 * size, x + i0 * len, o, 0, \
                                       rest < RG_REGULAR_BLOCK ? rest : RG_REGULAR_BLOCK,  \
                                       rest * len, mode, simd, stream);                    \
            }                                                                              \
            if (stream)                                                                    \
                stream_fence();                                                            \
        }                                                                                  \
    }

#define RG_REDUCE_FAMILIES(N, T, AT, ST, ISF, TMIN, TMAX, UT)                              \
    RG_DEFINE_REDUCE(arith, N, T, i32, int32_t)                                            \
    RG_DEFINE_REDUCE(arith, N, T, i64, int64_t)                                            \
    RG_DEFINE_REGULAR(arith, N, T)                                                         \
    RG_DEFINE_REDUCE(extreme, N, T, i32, int32_t)                                          \
    RG_DEFINE_REDUCE(extreme, N, T, i64, int64_t)                                          \
    RG_DEFINE_REGULAR(extreme, N, T)                                                       \
    RG_DEFINE_REDUCE(logic, N, T, i32, int32_t)                                            \
    RG_DEFINE_REDUCE(logic, N, T, i64, int64_t)                                            \
    RG_DEFINE_REGULAR(logic, N, T)
RG_EACH_DTYPE(RG_REDUCE_FAMILIES)

typedef rg_status (*reduce_fn)(rg_context *ctx, void *out, const void *x, const void *o,
                               int64_t nsegs, int64_t nelems, int mode,
                               rg_reduce_policy policy, simd_tile_fn simd, bool stream);

typedef void (*regular_fn)(void *out, size_t size, const void *x, int64_t nsegs, int64_t len,
                           int mode, simd_tile_fn simd, bool stream);
#define RG_REGULAR_ROW(N, T, AT, ST, ISF, TMIN, TMAX, UT)                                  \
    {regular_arith_##N, regular_extreme_##N, regular_logic_##N},
static const regular_fn regular_table[][3] = {RG_EACH_DTYPE(RG_REGULAR_ROW)};

/* The instance for a content dtype, family (RG_FAMILY_*) and offsets dtype. */
#define RG_TABLE_ROW(N, T, AT, ST, ISF, TMIN, TMAX, UT)                                    \
    {{reduce_arith_##N##_i32, reduce_arith_##N##_i64},                                     \
     {reduce_extreme_##N##_i32, reduce_extreme_##N##_i64},                                 \
     {reduce_logic_##N##_i32, reduce_logic_##N##_i64}},
static const reduce_fn reduce_table[][3][2] = {RG_EACH_DTYPE(RG_TABLE_ROW)};

rg_status rg_omp_segment_reduce(rg_array *out, const rg_array *content, const rg_array *offsets,
                                rg_reduce_op op, rg_reduce_policy policy)
{
    rg_context *ctx = offsets->ctx;
    /* Rows follow rg_dtype's order, which starts at RG_BOOL = 1. */
    size_t row = (size_t)content->dtype - RG_BOOL;
    if (row >= sizeof reduce_table / sizeof reduce_table[0] ||
        (offsets->dtype != RG_INT32 && offsets->dtype != RG_INT64))
        return rg_set_error(ctx, RG_EDTYPE, "OpenMP backend: no reduction of %s content",
                            rg_dtype_name(content->dtype));
    if (policy != RG_REDUCE_POLICY_PER_SEGMENT && policy != RG_REDUCE_POLICY_MERGE_PATH)
        return rg_set_error(ctx, RG_EINVAL, "OpenMP backend: no reduce policy %d", (int)policy);
    int mode;
    rg_reduce_family family = rg_reduce_family_of(op, &mode);
    reduce_fn fn = reduce_table[row][family][offsets->dtype == RG_INT64];
    /* Empty content has no storage: the tiles' masked loads would still
     * offset its NULL pointer. */
    simd_tile_fn simd =
        content->length > 0 ? simd_tile(family, mode, content->dtype, offsets->dtype) : NULL;
    /* The tiles' lines are streamed when the output is large and aligned. */
    bool big = stream_output(out->length * rg_dtype_size(out->dtype)) &&
               !((uintptr_t)out->host & 63);
    int64_t nsegs = (int64_t)offsets->length - 1;
    int64_t len = regular_length(offsets, (int64_t)content->length);
    if (policy == RG_REDUCE_POLICY_MERGE_PATH && len >= 1 && len <= RG_REGULAR_MOST &&
        nsegs >= 2 * RG_REGULAR_BLOCK) {
        /* int64 offsets: those regular_F makes */
        simd = simd_tile(family, mode, content->dtype, RG_INT64);
        regular_table[row][family](out->host, rg_dtype_size(out->dtype), content->host, nsegs,
                                   len, mode, simd, simd && big);
        return RG_OK;
    }
    return fn(ctx, out->host, content->host, offsets->host, nsegs, (int64_t)content->length,
              mode, policy, simd, simd && big);
}
