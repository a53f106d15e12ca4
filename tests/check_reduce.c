/* check_reduce.c — segmented reductions: every op, dtype, policy and backend against a sequential reference. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define N_POLICIES 3
static const rg_reduce_policy all_policies[N_POLICIES] = {
    RG_REDUCE_POLICY_AUTO, RG_REDUCE_POLICY_PER_SEGMENT, RG_REDUCE_POLICY_MERGE_PATH};

#define N_OPS 10
/* PIECE of lib/ocl/reduce.c: from this length on, per-segment reductions
 * on GPUs cut a segment at the multiples of it (positions in the content). */
#define TEST_PIECE 8192
static const rg_reduce_op all_ops[N_OPS] = {
    RG_REDUCE_SUM,    RG_REDUCE_PROD,  RG_REDUCE_MIN,           RG_REDUCE_MAX, RG_REDUCE_ARGMIN,
    RG_REDUCE_ARGMAX, RG_REDUCE_COUNT, RG_REDUCE_COUNT_NONZERO, RG_REDUCE_ANY, RG_REDUCE_ALL};

#define N_DTYPES 11
static const rg_dtype all_dtypes[N_DTYPES] = {RG_BOOL,   RG_INT8,   RG_INT16,  RG_INT32,
                                              RG_INT64,  RG_UINT8,  RG_UINT16, RG_UINT32,
                                              RG_UINT64, RG_FLOAT32, RG_FLOAT64};

/* Loop index i of the reduction tests: backend i / 3, policy i % 3. */
static int backend_of(int i) { return i / N_POLICIES; }
static rg_reduce_policy policy_of(int i) { return all_policies[i % N_POLICIES]; }

static int is_float(rg_dtype t) { return t == RG_FLOAT32 || t == RG_FLOAT64; }
static int is_unsigned(rg_dtype t)
{
    return t == RG_BOOL || t == RG_UINT8 || t == RG_UINT16 || t == RG_UINT32 || t == RG_UINT64;
}

/* ---- typed host values ------------------------------------------------------ */

/* Element k of a host buffer of dtype t as a double (exact for the small values used). */
static double load_f64(rg_dtype t, const void *buf, size_t k)
{
    const unsigned char *p = (const unsigned char *)buf + k * rg_dtype_size(t);
    switch (t) {
    case RG_FLOAT32: { float x; memcpy(&x, p, 4); return x; }
    case RG_FLOAT64: { double x; memcpy(&x, p, 8); return x; }
    case RG_UINT64: { uint64_t x; memcpy(&x, p, 8); return (double)x; }
    default: break;
    }
    return (double)test_unpack_i64(t, p);
}

/* Integer element k as 64 bits, sign-extended for signed types (what
 * 64-bit sums add). */
static uint64_t load_bits(rg_dtype t, const void *buf, size_t k)
{
    const unsigned char *p = (const unsigned char *)buf + k * rg_dtype_size(t);
    return (uint64_t)test_unpack_i64(t, p);
}

/* Stores v (integral unless t is a float type) as element k.  No Check
 * asserts here: each costs a write to Check's pipe, and this runs per element. */
static void store_f64(rg_dtype t, void *buf, size_t k, double v)
{
    unsigned char *p = (unsigned char *)buf + k * rg_dtype_size(t);
    switch (t) {
    case RG_BOOL: { uint8_t x = v != 0; memcpy(p, &x, 1); break; }
    case RG_INT8: { int8_t x = (int8_t)v; memcpy(p, &x, 1); break; }
    case RG_UINT8: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); break; }
    case RG_INT16: { int16_t x = (int16_t)v; memcpy(p, &x, 2); break; }
    case RG_UINT16: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
    case RG_INT32: { int32_t x = (int32_t)v; memcpy(p, &x, 4); break; }
    case RG_UINT32: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    case RG_INT64: { int64_t x = (int64_t)v; memcpy(p, &x, 8); break; }
    case RG_UINT64: { uint64_t x = (uint64_t)v; memcpy(p, &x, 8); break; }
    case RG_FLOAT32: { float x = (float)v; memcpy(p, &x, 4); break; }
    case RG_FLOAT64: memcpy(p, &v, 8); break;
    }
}

/* n values for op on dtype t: small, with frequent ties and zeros; products
 * avoid 0 on floats (0 * inf depends on the order) and use powers of two so
 * that float products are exact; a NaN now and then when nan is set. */
static void *gen_content(rg_dtype t, size_t n, rg_reduce_op op, int nan, uint64_t seed)
{
    size_t size = rg_dtype_size(t);
    void *buf = malloc(n * size + size);
    ck_assert_ptr_nonnull(buf);
    uint64_t state = seed * 0x9E3779B97F4A7C15ull + (uint64_t)t * 131 + (uint64_t)op;
    static const double float_prod[4] = {-2, -1, 1, 2};
    for (size_t k = 0; k < n; k++) {
        uint64_t r = test_rand(&state);
        double v;
        if (t == RG_BOOL)
            v = (double)(r % 4 != 0);
        else if (op == RG_REDUCE_PROD && is_float(t))
            v = float_prod[r % 4];
        else if (op == RG_REDUCE_PROD)
            v = (double)((int64_t)(r % 6) - (is_unsigned(t) ? 0 : 2)); /* some 0s, wraps */
        else if (is_float(t))
            v = (double)((int64_t)(r % 41) - 20) / 4;
        else if (is_unsigned(t))
            v = (double)(r % 11);
        else
            v = (double)((int64_t)(r % 11) - 5);
        if (nan && is_float(t) && (r >> 40) % 64 == 0)
            v = NAN;
        store_f64(t, buf, k, v);
        if (t == RG_UINT64 && op != RG_REDUCE_PROD && (r >> 20) % 2) {
            /* past INT64_MAX: a signed comparison orders these first */
            uint64_t u = (uint64_t)v | UINT64_C(1) << 63;
            memcpy((unsigned char *)buf + k * size, &u, 8);
        }
        if (t == RG_UINT32 && op != RG_REDUCE_PROD && (r >> 20) % 2) {
            /* past INT32_MAX: a sign extension makes these negative */
            uint32_t u = (uint32_t)v | UINT32_C(1) << 31;
            memcpy((unsigned char *)buf + k * size, &u, 4);
        }
    }
    return buf;
}

/* ---- the sequential reference ------------------------------------------------ */

/* The expected value of segment [b, e) as what the output holds: bits for
 * integer outputs, a double for float outputs (plus, for float sums, the
 * sum of absolute values that bounds the rounding error). */
typedef struct expect {
    uint64_t bits;
    double f, abs_sum;
} expect;

static expect ref_segment(rg_dtype t, const void *x, int64_t b, int64_t e, rg_reduce_op op)
{
    expect r = {0, 0, 0};
    switch (op) {
    case RG_REDUCE_SUM:
    case RG_REDUCE_PROD: {
        int prod = op == RG_REDUCE_PROD;
        uint64_t bits = prod;
        double f = prod;
        for (int64_t k = b; k < e; k++) {
            if (is_float(t)) {
                double v = load_f64(t, x, (size_t)k);
                f = prod ? f * v : f + v;
                r.abs_sum += fabs(v);
            } else {
                uint64_t v = load_bits(t, x, (size_t)k);
                bits = prod ? bits * v : bits + v;
            }
        }
        r.bits = bits;
        /* float32 products overflow to inf where the double reference does not */
        r.f = t == RG_FLOAT32 ? (double)(float)f : f;
        break;
    }
    case RG_REDUCE_MIN:
    case RG_REDUCE_MAX:
    case RG_REDUCE_ARGMIN:
    case RG_REDUCE_ARGMAX: {
        int max = op == RG_REDUCE_MAX || op == RG_REDUCE_ARGMAX;
        int64_t best = -1;
        for (int64_t k = b; k < e; k++) {
            double v = load_f64(t, x, (size_t)k);
            if (best >= 0 && isnan(load_f64(t, x, (size_t)best)))
                break;
            if (best < 0 || isnan(v)) {
                best = k;
                continue;
            }
            int better;
            if (is_float(t)) {
                double w = load_f64(t, x, (size_t)best);
                better = max ? v > w : v < w;
            } else if (is_unsigned(t)) {
                uint64_t v1 = load_bits(t, x, (size_t)k), w = load_bits(t, x, (size_t)best);
                better = max ? v1 > w : v1 < w;
            } else {
                int64_t v1 = (int64_t)load_bits(t, x, (size_t)k);
                int64_t w = (int64_t)load_bits(t, x, (size_t)best);
                better = max ? v1 > w : v1 < w;
            }
            if (better)
                best = k;
        }
        if (op == RG_REDUCE_ARGMIN || op == RG_REDUCE_ARGMAX) {
            r.bits = (uint64_t)(best < 0 ? -1 : best - b);
        } else if (best >= 0) {
            r.f = load_f64(t, x, (size_t)best);
            r.bits = is_float(t) ? 0 : load_bits(t, x, (size_t)best); /* floats compare r.f */
        } else {
            /* The documented identities: the dtype's largest value for min, smallest for max. */
            static const struct {
                rg_dtype t;
                uint64_t lo, hi;
            } id[] = {{RG_BOOL, 0, 1},
                      {RG_INT8, (uint64_t)INT8_MIN, INT8_MAX},
                      {RG_INT16, (uint64_t)INT16_MIN, INT16_MAX},
                      {RG_INT32, (uint64_t)INT32_MIN, INT32_MAX},
                      {RG_INT64, (uint64_t)INT64_MIN, INT64_MAX},
                      {RG_UINT8, 0, UINT8_MAX},
                      {RG_UINT16, 0, UINT16_MAX},
                      {RG_UINT32, 0, UINT32_MAX},
                      {RG_UINT64, 0, UINT64_MAX}};
            r.f = max ? -INFINITY : INFINITY;
            for (size_t i = 0; i < sizeof id / sizeof *id; i++)
                if (id[i].t == t)
                    r.bits = max ? id[i].lo : id[i].hi;
        }
        break;
    }
    case RG_REDUCE_COUNT:
        r.bits = (uint64_t)(e - b);
        break;
    case RG_REDUCE_COUNT_NONZERO:
    case RG_REDUCE_ANY:
    case RG_REDUCE_ALL: {
        uint64_t n = 0;
        for (int64_t k = b; k < e; k++)
            n += load_f64(t, x, (size_t)k) != 0; /* NaN != 0 */
        r.bits = op == RG_REDUCE_COUNT_NONZERO ? n
                 : op == RG_REDUCE_ANY        ? n > 0
                                              : n == (uint64_t)(e - b);
        break;
    }
    }
    return r;
}

/* Compares segment i of the output (raw host bytes of dtype ot) with the reference. */
static void expect_segment(rg_dtype ot, const void *got, size_t i, expect want, const char *label)
{
    if (is_float(ot)) {
        double g = load_f64(ot, got, i);
        int ok;
        if (isnan(want.f) || isinf(want.f))
            ok = isnan(want.f) ? isnan(g) != 0 : g == want.f;
        else
            ok = fabs(g - want.f) <= (ot == RG_FLOAT32 ? 1e-5 : 1e-12) * want.abs_sum + 1e-300;
        if (!ok)
            ck_abort_msg("%s: segment %zu is %.17g, expected %.17g", label, i, g, want.f);
        return;
    }
    /* Integer outputs: compare the bits of the output's width. */
    uint64_t g = load_bits(ot, got, i), w = want.bits;
    size_t size = rg_dtype_size(ot);
    if (size < 8) {
        uint64_t mask = (UINT64_C(1) << (8 * size)) - 1;
        g &= mask;
        w &= mask;
    }
    if (g != w)
        ck_abort_msg("%s: segment %zu is %" PRId64 ", expected %" PRId64, label, i, (int64_t)g,
                     (int64_t)w);
}

/* Runs op with policy on content x (host copy xh) split by offsets off[0 .. nsegs],
 * and compares every segment with the reference. */
static void check_op(rg_context *ctx, rg_array *content, const void *xh, rg_array *offsets,
                     const int64_t *off, size_t nsegs, rg_reduce_op op, rg_reduce_policy policy,
                     const char *what)
{
    rg_dtype t = rg_array_dtype(content), ot = rg_reduce_dtype(op, t);
    char label[256];
    snprintf(label, sizeof label, "%s of %s, %s, %s offsets, %s (%zu segments, %zu elements)",
             rg_reduce_op_name(op), rg_dtype_name(t), rg_reduce_policy_name(policy),
             rg_dtype_name(rg_array_dtype(offsets)), what, nsegs, rg_array_length(content));
    ck_assert_msg(ot != 0, "%s: no output dtype", label);
    rg_array *out = test_array_filled(ctx, ot, nsegs, 7);
    rg_reduce_policy used = (rg_reduce_policy)99;
    rg_status st = rg_segment_reduce(out, content, offsets, op, policy, &used);
    if (st != RG_OK)
        ck_abort_msg("%s: %d (%s) %s", label, (int)st, rg_strerror(st), rg_context_error(ctx));
    rg_reduce_policy expect_used =
        policy != RG_REDUCE_POLICY_AUTO ? policy : test_expect_policy(ctx, off, nsegs);
    if (used != expect_used)
        ck_abort_msg("%s: used %s, expected %s", label, rg_reduce_policy_name(used),
                     rg_reduce_policy_name(expect_used));
    size_t size = rg_dtype_size(ot);
    unsigned char *got = malloc(nsegs * size + size);
    ck_assert_ptr_nonnull(got);
    st = rg_array_read(got, out, 0, nsegs);
    ck_assert_msg(st == RG_OK, "%s: read %d", label, (int)st);
    for (size_t i = 0; i < nsegs; i++)
        expect_segment(ot, got, i, ref_segment(t, xh, off[i], off[i + 1], op), label);
    free(got);
    rg_array_free(out);
}

/* Every op on content of dtype t split by the given lengths. */
static void check_ops_on(rg_context *ctx, rg_dtype t, rg_dtype offsets_type,
                         const int64_t *len, size_t nsegs, const rg_reduce_op *ops, size_t nops,
                         rg_reduce_policy policy, int nan, uint64_t seed, const char *what)
{
    int64_t *off = ref_offsets(len, nsegs);
    size_t n = (size_t)off[nsegs];
    rg_array *offsets = test_array_from_i64(ctx, offsets_type, off, nsegs + 1);
    for (size_t o = 0; o < nops; o++) {
        void *xh = gen_content(t, n, ops[o], nan, seed);
        rg_array *content = NULL;
        rg_status st = rg_array_from_host(&content, ctx, t, xh, n);
        ck_assert_msg(st == RG_OK, "content: %s", rg_context_error(ctx));
        check_op(ctx, content, xh, offsets, off, nsegs, ops[o], policy, what);
        rg_array_free(content);
        free(xh);
    }
    rg_array_free(offsets);
    free(off);
}

/* Segment lengths drawn by test_gen_lengths, and what they are called. */
typedef struct length_case {
    test_dist dist;
    size_t nsegs;
    int64_t scale;
    const char *what;
} length_case;

/* Every op, dtype and distribution on small arrays. */
START_TEST(test_reduce_small)
{
    TEST_CONTEXT(ctx, backend_of(_i));
    rg_reduce_policy policy = policy_of(_i);
    static const length_case cases[] = {
        {DIST_EMPTY, 5, 0, "empty content"},  {DIST_EMPTY, 0, 0, "zero segments"},
        {DIST_EMPTY, 300, 0, "all empty"},    {DIST_HALF_EMPTY, 500, 0, "50% empty"},
        {DIST_HUGE, 7, 5000, "one huge"},     {DIST_ONES, 1000, 0, "all length 1"},
        {DIST_POWER_LAW, 300, 2000, "power law"}, {DIST_SHORT, 700, 0, "short"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int64_t *len = test_gen_lengths(cases[c].dist, cases[c].nsegs, cases[c].scale, 7 + c);
        for (int d = 0; d < N_DTYPES; d++) {
            /* int32 offsets on odd dtypes, int64 on the others: both get every case. */
            rg_dtype ot = (d + (int)c) % 2 ? RG_INT32 : RG_INT64;
            check_ops_on(ctx, all_dtypes[d], ot, len, cases[c].nsegs, all_ops, N_OPS, policy,
                         c % 2, 100 + c, cases[c].what);
        }
        free(len);
    }
    rg_context_free(ctx);
}
END_TEST

/* Per-segment sums and products around the 64 elements from which GPUs
 * (and PoCL with RAGGED_OPENCL_CPU_KERNELS=0) hand a segment to a team of
 * 32 work-items: edge cases and lengths 63, 64, 65, ..., both offset
 * types, integer (wrapping) and float dtypes.  The teams combine by warp
 * shuffles there (emulated on PoCL); the last loop index builds them with
 * WARP=0, the tree of local memory that GPUs other than NVIDIA's run. */
START_TEST(test_reduce_teams)
{
    int tree = _i == TEST_NBACKENDS_GPU_KERNELS;
    if (tree)
        test_setenv("RAGGED_OPENCL_BUILD_OPTIONS", "-DWARP=0");
    TEST_CONTEXT(ctx, test_backend_plain(tree ? _i - 1 : _i));
    static const rg_reduce_op ops[2] = {RG_REDUCE_SUM, RG_REDUCE_PROD};
    static const rg_dtype types[4] = {RG_INT32, RG_UINT64, RG_FLOAT32, RG_FLOAT64};
    static const length_case cases[] = {
        {DIST_EMPTY, 5, 0, "empty content"}, {DIST_EMPTY, 0, 0, "zero segments"},
        {DIST_EMPTY, 300, 0, "all empty"},   {DIST_HUGE, 7, 5000, "one huge"},
        {DIST_POWER_LAW, 300, 2000, "power law"},
    };
    for (size_t c = 0; c <= sizeof cases / sizeof *cases + 1; c++) {
        size_t nsegs;
        int64_t *len;
        if (c < sizeof cases / sizeof *cases) {
            nsegs = cases[c].nsegs;
            len = test_gen_lengths(cases[c].dist, nsegs, cases[c].scale, 31 + c);
        } else if (c == sizeof cases / sizeof *cases) {
            /* Blocks of 256 segments whose elements fit reduce_blocks' local
             * memory (8 per work-item: short segments, some of 64 to 200),
             * then blocks that do not (every third segment 100 long). */
            nsegs = 1300;
            len = malloc(nsegs * sizeof *len);
            ck_assert_ptr_nonnull(len);
            for (size_t i = 0; i < nsegs; i++)
                len[i] = i < 700 ? (i % 50 == 0 ? 64 + (int64_t)(i % 137) : (int64_t)(i % 9))
                                 : (i % 3 == 0 ? 100 : 5);
        } else { /* 0, 1, 62, 63, 64, 65, 66, 95, 96, 97, 127, 128, 129, 1000 in turn */
            static const int64_t around[] = {0,  1,  62,  63,  64,  65,  66,
                                             95, 96, 97, 127, 128, 129, 1000};
            nsegs = 40 * (sizeof around / sizeof *around); /* reduce_teams lists many per block */
            len = malloc(nsegs * sizeof *len);
            ck_assert_ptr_nonnull(len);
            for (size_t i = 0; i < nsegs; i++)
                len[i] = around[i % (sizeof around / sizeof *around)];
        }
        const char *what = c < sizeof cases / sizeof *cases    ? cases[c].what
                           : c == sizeof cases / sizeof *cases ? "staged blocks"
                                                               : "around 64";
        for (int d = 0; d < 4; d++)
            check_ops_on(ctx, types[d], (d + (int)c) % 2 ? RG_INT32 : RG_INT64, len, nsegs, ops,
                         2, RG_REDUCE_POLICY_PER_SEGMENT, 0, 60 + c, what);
        free(len);
    }
    rg_context_free(ctx);
}
END_TEST

/* Per-segment reductions, every op, around the TEST_PIECE elements from
 * which GPUs (and PoCL with RAGGED_OPENCL_CPU_KERNELS=0) cut a segment at
 * the multiples of TEST_PIECE: segments that start on a cut and past one,
 * end on one and past one, hold one piece, part of one, or many, next to
 * short and empty ones; and one segment holding everything. */
START_TEST(test_reduce_pieces)
{
    TEST_CONTEXT(ctx, test_backend_plain(_i));
    static const rg_dtype types[] = {RG_FLOAT64, RG_FLOAT32, RG_INT32, RG_UINT8, RG_INT64};
    static const int64_t P = TEST_PIECE;
    /* From position 0: one piece exactly, then from a cut a piece and one
     * more element, from past a cut ... */
    static const int64_t around[] = {P,     P + 1, 0, P - 1, 3,      P,  0, 2 * P + 5, 1, 100,
                                     P - 2, 0,     5, 7 * P, P + 17, 64, 0, 3 * P - 9, 2};
    size_t nsegs = sizeof around / sizeof *around;
    for (int c = 0; c < 2; c++) {
        int64_t one[3] = {0, 4 * P + 3, 0};
        const int64_t *len = c == 0 ? around : one;
        size_t n = c == 0 ? nsegs : 3;
        for (size_t d = 0; d < sizeof types / sizeof *types; d++)
            check_ops_on(ctx, types[d], (d + (size_t)c) % 2 ? RG_INT32 : RG_INT64, len, n,
                         all_ops, N_OPS, RG_REDUCE_POLICY_PER_SEGMENT, 1, 80 + d,
                         c == 0 ? "around the pieces" : "one cut segment");
    }
    rg_context_free(ctx);
}
END_TEST

/* Past 2^20 elements on some dtype/op combinations (each policy and backend,
 * and the GPUs' kernels with few work-groups: many rounds of their loops). */
START_TEST(test_reduce_big)
{
    TEST_CONTEXT(ctx, test_backend_plain(backend_of(_i)));
    rg_reduce_policy policy = policy_of(_i);

    size_t nsegs = 1001;
    int64_t *len = test_gen_lengths(DIST_HUGE, nsegs, (1 << 20) + 4097, 4);
    const rg_reduce_op huge_ops[] = {RG_REDUCE_SUM, RG_REDUCE_ARGMIN, RG_REDUCE_COUNT_NONZERO};
    check_ops_on(ctx, RG_FLOAT32, RG_INT64, len, nsegs, huge_ops, 3, policy, 0, 1, "one huge");
    const rg_reduce_op huge_ops2[] = {RG_REDUCE_MAX, RG_REDUCE_ALL, RG_REDUCE_PROD};
    check_ops_on(ctx, RG_INT32, RG_INT32, len, nsegs, huge_ops2, 3, policy, 0, 2, "one huge");
    free(len);

    nsegs = 400000;
    len = test_gen_lengths(DIST_POWER_LAW, nsegs, 100000, 5);
    const rg_reduce_op pl_ops[] = {RG_REDUCE_SUM, RG_REDUCE_ARGMAX, RG_REDUCE_MIN};
    check_ops_on(ctx, RG_FLOAT64, RG_INT32, len, nsegs, pl_ops, 3, policy, 1, 3, "power law");
    const rg_reduce_op pl_ops2[] = {RG_REDUCE_SUM, RG_REDUCE_ANY};
    check_ops_on(ctx, RG_UINT8, RG_INT64, len, nsegs, pl_ops2, 2, policy, 0, 4, "power law");
    free(len);

    nsegs = (1 << 20) + 5;
    len = test_gen_lengths(DIST_ONES, nsegs, 0, 6);
    const rg_reduce_op ones_ops[] = {RG_REDUCE_PROD, RG_REDUCE_ARGMAX, RG_REDUCE_COUNT};
    check_ops_on(ctx, RG_INT16, RG_INT64, len, nsegs, ones_ops, 3, policy, 0, 5, "all length 1");
    free(len);

    nsegs = (1 << 20) + 3;
    len = test_gen_lengths(DIST_HALF_EMPTY, nsegs, 0, 7);
    const rg_reduce_op half_ops[] = {RG_REDUCE_SUM, RG_REDUCE_ARGMIN};
    check_ops_on(ctx, RG_FLOAT32, RG_INT32, len, nsegs, half_ops, 2, policy, 1, 6, "50% empty");
    free(len);
    rg_context_free(ctx);
}
END_TEST

/* Work-groups of 1 to 32 work-items (RAGGED_OPENCL_MAX_GROUP_SIZE), as on a
 * device with a small limit, on OpenCL with both kernel variants and both
 * policies: every op stays exact.  The merge path then has more chunks than
 * reduce_fixup has work-items (at most 32 per work-item per compute unit),
 * so each of its work-items combines several chunk records, and the huge
 * segment runs through many of them. */
START_TEST(test_reduce_small_groups)
{
    static const char *const sizes[] = {"1", "2", "8", "32"};
    int backend = (_i / 4) % 2 ? test_backend_plain(TEST_NBACKENDS + 1) : TEST_BACKEND_OPENCL;
    rg_reduce_policy policy = _i / 8 ? RG_REDUCE_POLICY_PER_SEGMENT : RG_REDUCE_POLICY_MERGE_PATH;
    test_unsetenv("RAGGED_OPENCL_MAX_GROUPS"); /* all the chunks the device takes */
    test_setenv("RAGGED_OPENCL_MAX_GROUP_SIZE", sizes[_i % 4]);
    TEST_CONTEXT(ctx, backend);
    static const rg_dtype types[2] = {RG_FLOAT64, RG_INT32};
    static const length_case cases[] = {
        {DIST_POWER_LAW, 2000, 3000, "power law"},
        {DIST_HUGE, 9, 30000, "one huge"},
    };
    char what[96];
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int64_t *len = test_gen_lengths(cases[c].dist, cases[c].nsegs, cases[c].scale, 90 + c);
        snprintf(what, sizeof what, "%s, work-groups of at most %s", cases[c].what, sizes[_i % 4]);
        for (size_t d = 0; d < 2; d++)
            check_ops_on(ctx, types[d], (d + c) % 2 ? RG_INT32 : RG_INT64, len, cases[c].nsegs,
                         all_ops, N_OPS, policy, (int)d, 95 + c, what);
        free(len);
    }
    rg_context_free(ctx);
}
END_TEST

/* Lengths that send segments down every path of the OpenMP windows (tiles of 8
 * segments classed by their longest: all 1, 0 or 1, up to 8, up to 16, longer)
 * and put tiles at the very end, where a window would run past the content;
 * nsegs % 8 == tail, so the last segments are a partial tile. */
static int64_t *window_lengths(size_t *nsegs, size_t tail, uint64_t seed)
{
    size_t n = 8 * 7 * 6 + tail, k = 0;
    int64_t *len = malloc(n * sizeof *len);
    ck_assert_ptr_nonnull(len);
    uint64_t state = seed;
    for (int round = 0; round < 6; round++)
        for (int kind = 0; kind < 7; kind++)
            for (int j = 0; j < 8; j++) {
                uint64_t r = test_rand(&state);
                static const int64_t widest[7] = {1, 1, 8, 16, 9, 40, 8};
                /* kind 0: all 1; 1: 0 or 1; 2: 0..8; 3: 0..16; 4: 0..9 in turn;
                 * 5: 0..40 (some past the widest window); 6: 5..8 */
                len[k++] = kind == 0   ? 1
                           : kind == 4 ? (int64_t)((j + round) % 10)
                           : kind == 6 ? 5 + (int64_t)(r % 4)
                                       : (int64_t)(r % (uint64_t)(widest[kind] + 1));
            }
    for (size_t j = 0; j < tail; j++)
        len[k++] = (int64_t)((j * 3) % 5);
    *nsegs = k;
    return len;
}

/* Every op and dtype, with NaN now and then, on lengths that exercise every
 * window path, ending in full and in partial tiles; on each backend, and
 * on OpenMP with its AVX-512 paths off (where the tiles take no window). */
START_TEST(test_reduce_windows)
{
    TEST_CONTEXT(ctx, test_backend_plain(backend_of(_i)));
    rg_reduce_policy policy = policy_of(_i);
    for (size_t tail = 0; tail < 8; tail += 5) {
        size_t nsegs;
        int64_t *len = window_lengths(&nsegs, tail, 11 + tail);
        for (int d = 0; d < N_DTYPES; d++)
            check_ops_on(ctx, all_dtypes[d], (d + (int)tail) % 2 ? RG_INT32 : RG_INT64, len,
                         nsegs, all_ops, N_OPS, policy, 1, 40 + tail, "window paths");
        free(len);
    }
    rg_context_free(ctx);
}
END_TEST

/* nsegs lengths, rule(i, r) for segment i, r drawn from seed. */
static int64_t *lengths_by(size_t nsegs, uint64_t seed, int64_t (*rule)(size_t, uint64_t))
{
    int64_t *len = malloc(nsegs * sizeof *len);
    ck_assert_ptr_nonnull(len);
    for (size_t i = 0; i < nsegs; i++)
        len[i] = rule(i, test_rand(&seed));
    return len;
}

/* Outputs of 32 MiB and more of 8-byte values, where the OpenMP backend
 * streams the results of its AVX-512 tiles (on CPUs with AVX-512): lengths
 * of 0 to 6, runs of 1, 0 to 20 and tiles with a segment of 40 to 90
 * elements (past the tiles' longest), in turn; float64 with NaN, int64 and
 * uint64 with values past INT64_MAX, int32 and uint32 (past INT32_MAX);
 * int64 and int32 offsets; then the same with AVX-512 off (streamed
 * windows). */
static int64_t streamed_length(size_t i, uint64_t r)
{
    size_t kind = (i / 8) % 16; /* per tile of 8 */
    return kind < 10   ? (int64_t)(r % 7)
           : kind < 13 ? 1
           : kind < 15 ? (int64_t)(r % 21)
                       : (i % 8 == 3 ? 40 + (int64_t)(r % 51) : (int64_t)(r % 4));
}
START_TEST(test_reduce_tiles_streamed)
{
    TEST_CONTEXT(ctx, test_backend_plain(_i < 2 ? TEST_BACKEND_OPENMP : TEST_NBACKENDS));
    rg_reduce_policy policy = all_policies[1 + _i % 2];
    size_t nsegs = ((size_t)4 << 20) + 11;
    int64_t *len = lengths_by(nsegs, 5 + (uint64_t)_i, streamed_length);
    static const struct {
        rg_dtype t, ot;
        rg_reduce_op ops[3];
    } cases[] = {
        {RG_FLOAT64, RG_INT64, {RG_REDUCE_SUM, RG_REDUCE_ARGMIN, RG_REDUCE_MAX}},
        {RG_INT64, RG_INT32, {RG_REDUCE_SUM, RG_REDUCE_MIN, RG_REDUCE_ARGMAX}},
        {RG_UINT64, RG_INT64, {RG_REDUCE_SUM, RG_REDUCE_MAX, RG_REDUCE_ARGMIN}},
        {RG_FLOAT64, RG_INT32, {RG_REDUCE_PROD, RG_REDUCE_MIN, RG_REDUCE_ARGMAX}},
        {RG_UINT32, RG_INT64, {RG_REDUCE_SUM, RG_REDUCE_MAX, RG_REDUCE_COUNT_NONZERO}},
        {RG_INT32, RG_INT32, {RG_REDUCE_SUM, RG_REDUCE_ARGMIN, RG_REDUCE_ANY}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        check_ops_on(ctx, cases[c].t, cases[c].ot, len, nsegs, cases[c].ops, 3, policy, 1,
                     60 + c, "streamed tiles");
    free(len);
    rg_context_free(ctx);
}
END_TEST

/* Integer sums and products of segments of 0 to 300 elements (on OpenMP,
 * 64 or more go through 8 lanes and a tree, which must give the bits of
 * the plain fold): odd factors, so that long products wrap instead of
 * ending at 0; int32 and int64 offsets. */
static int64_t int_lanes_length(size_t i, uint64_t r)
{
    (void)i;
    return (int64_t)(r % 301);
}
START_TEST(test_reduce_int_lanes)
{
    TEST_CONTEXT(ctx, backend_of(_i));
    rg_reduce_policy policy = policy_of(_i);
    size_t nsegs = 600;
    int64_t *len = lengths_by(nsegs, 21, int_lanes_length);
    int64_t *off = ref_offsets(len, nsegs);
    size_t n = (size_t)off[nsegs];
    static const rg_dtype types[] = {RG_INT8,   RG_UINT16, RG_INT32,
                                     RG_UINT32, RG_INT64,  RG_UINT64};
    for (size_t d = 0; d < sizeof types / sizeof *types; d++) {
        rg_dtype t = types[d];
        rg_array *offsets = test_array_from_i64(ctx, d % 2 ? RG_INT32 : RG_INT64, off, nsegs + 1);
        size_t size = rg_dtype_size(t);
        unsigned char *xh = malloc(n * size + size);
        ck_assert_ptr_nonnull(xh);
        uint64_t state = 77 + d;
        for (size_t k = 0; k < n; k++) {
            int64_t r = (int64_t)(test_rand(&state) % 4);
            store_f64(t, xh, k, (double)(is_unsigned(t) ? 2 * r + 1 : 2 * r - 3));
        }
        rg_array *content = NULL;
        ck_assert_msg(rg_array_from_host(&content, ctx, t, xh, n) == RG_OK, "content: %s",
                      rg_context_error(ctx));
        check_op(ctx, content, xh, offsets, off, nsegs, RG_REDUCE_PROD, policy,
                 "odd factors, 0 to 300 elements");
        check_op(ctx, content, xh, offsets, off, nsegs, RG_REDUCE_SUM, policy,
                 "odd values, 0 to 300 elements");
        rg_array_free(content);
        rg_array_free(offsets);
        free(xh);
    }
    free(off);
    free(len);
    rg_context_free(ctx);
}
END_TEST

/* float32 sums, products, min and argmax, int32 max and uint32 min over
 * 8M+ segments (a 32 MiB output of 32-bit values, streamed half lines on
 * CPUs with AVX-512): lengths 0 to 6 with runs of 1, int64 and int32
 * offsets. */
static int64_t streamed_length_f32(size_t i, uint64_t r)
{
    return (i / 8) % 4 == 3 ? 1 : (int64_t)(r % 7);
}
START_TEST(test_reduce_tiles_streamed_f32)
{
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENMP);
    rg_reduce_policy policy = all_policies[1 + _i % 2];
    size_t nsegs = ((size_t)8 << 20) + 13;
    int64_t *len = lengths_by(nsegs, 9 + (uint64_t)_i, streamed_length_f32);
    const rg_reduce_op ops[4] = {RG_REDUCE_SUM, RG_REDUCE_PROD, RG_REDUCE_MIN, RG_REDUCE_ARGMAX};
    rg_dtype ot = _i < 2 ? RG_INT64 : RG_INT32;
    check_ops_on(ctx, RG_FLOAT32, ot, len, nsegs, ops, 4, policy, 1, 70, "streamed float32 tiles");
    const rg_reduce_op max = RG_REDUCE_MAX, min = RG_REDUCE_MIN;
    check_ops_on(ctx, RG_INT32, ot, len, nsegs, &max, 1, policy, 1, 71, "streamed int32 tiles");
    check_ops_on(ctx, RG_UINT32, ot, len, nsegs, &min, 1, policy, 1, 72, "streamed uint32 tiles");
    free(len);
    rg_context_free(ctx);
}
END_TEST

/* The OpenMP sum of [b, e) as documented: left to right from +0.0 in double. */
static double seq_sum(const double *x, int64_t b, int64_t e)
{
    double v = 0;
    for (int64_t k = b; k < e; k++)
        v += x[k];
    return v;
}

/* The documented extreme of [b, e): the first NaN, else the first position of
 * the min (or max); -1 when empty. */
static int64_t seq_extreme(const double *x, int64_t b, int64_t e, int is_max)
{
    int64_t at = -1;
    for (int64_t k = b; k < e; k++) {
        if (at >= 0 && isnan(x[at]))
            break;
        if (at < 0 || isnan(x[k]) || (is_max ? x[k] > x[at] : x[k] < x[at]))
            at = k;
    }
    return at < 0 ? -1 : at - b;
}

/* argmin, argmax, min and max of the float64 content c64 (x on the host)
 * against seq_extreme: positions exactly, values bit for bit (where
 * nan_bits is false, any NaN for a NaN: OpenCL devices may not keep a
 * NaN's bits). */
static void check_extremes_exact(rg_context *ctx, rg_array *c64, rg_array *offsets,
                                 const double *x, const int64_t *off, size_t nsegs,
                                 rg_reduce_policy policy, int nan_bits)
{
    static const rg_reduce_op ext[4] = {RG_REDUCE_ARGMIN, RG_REDUCE_ARGMAX, RG_REDUCE_MIN,
                                        RG_REDUCE_MAX};
    rg_array *val = NULL, *idx = NULL;
    ck_assert_int_eq(rg_array_create(&val, ctx, RG_FLOAT64, nsegs), RG_OK);
    ck_assert_int_eq(rg_array_create(&idx, ctx, RG_INT64, nsegs), RG_OK);
    double *got = malloc(nsegs * sizeof *got);
    int64_t *goti = malloc(nsegs * sizeof *goti);
    ck_assert(got && goti);
    for (int e = 0; e < 4; e++) {
        int is_max = e % 2, arg = e < 2;
        rg_array *o = arg ? idx : val;
        ck_assert_int_eq(rg_segment_reduce(o, c64, offsets, ext[e], policy, NULL), RG_OK);
        ck_assert_int_eq(rg_array_read(arg ? (void *)goti : (void *)got, o, 0, nsegs), RG_OK);
        for (size_t i = 0; i < nsegs; i++) {
            int64_t at = seq_extreme(x, off[i], off[i + 1], is_max);
            double w = at < 0 ? (is_max ? -INFINITY : INFINITY) : x[off[i] + at];
            int ok = arg                    ? goti[i] == at
                     : isnan(w) && !nan_bits ? isnan(got[i])
                                             : memcmp(&got[i], &w, sizeof w) == 0;
            ck_assert_msg(ok, "%s %s: segment %zu (length %" PRId64 "): %" PRId64 " / %a, "
                          "expected %" PRId64 " / %a", rg_reduce_op_name(ext[e]),
                          rg_reduce_policy_name(policy), i, off[i + 1] - off[i],
                          arg ? goti[i] : 0, arg ? 0.0 : got[i], at, w);
        }
    }
    free(goti);
    free(got);
    rg_array_free(idx);
    rg_array_free(val);
}

/* Short segments (0 to 17 elements) holding NaN, +-0.0 and +-Inf: on OpenMP the
 * float64 and float32 sums match the documented left-to-right order bit for
 * bit on both policies (a segment of -0.0 alone sums to +0.0), and the
 * extremes follow the first-NaN and first-position rules.  Past 2^15 elements,
 * so that merge path runs on every thread; a segment cut by a thread boundary
 * adds its parts in thread order, so merge path may differ there (at most
 * one segment per thread) but nowhere else.  With AVX-512 on and off. */
START_TEST(test_reduce_windows_exact)
{
    TEST_CONTEXT(ctx, test_backend_plain(_i < N_POLICIES ? TEST_BACKEND_OPENMP : TEST_NBACKENDS));
    rg_reduce_policy policy = policy_of(_i);
    size_t nsegs = 20000;
    int64_t *len = malloc(nsegs * sizeof *len);
    ck_assert_ptr_nonnull(len);
    uint64_t state = 77;
    for (size_t i = 0; i < nsegs; i++) {
        uint64_t r = test_rand(&state);
        len[i] = i % 64 < 40 ? (int64_t)(r % 10) : (int64_t)(r % 18);
    }
    int64_t *off = ref_offsets(len, nsegs);
    size_t n = (size_t)off[nsegs];
    double *x = malloc(n * sizeof *x);
    float *xf = malloc(n * sizeof *xf);
    ck_assert(x && xf);
    static const double special[6] = {NAN, -0.0, 0.0, INFINITY, -INFINITY, 1e300};
    for (size_t k = 0; k < n; k++) {
        uint64_t r = test_rand(&state);
        /* mostly inexact values (so that any other order changes the bits) */
        x[k] = r % 16 == 0 ? special[(r >> 8) % 6] : (double)(int64_t)(r >> 40) * 0.1 - 1e5;
        xf[k] = (float)x[k];
    }
    /* a run of segments of -0.0 alone */
    for (size_t i = 100; i < 140; i++)
        for (int64_t k = off[i]; k < off[i + 1]; k++)
            x[k] = xf[k] = -0.0f;
    rg_array *offsets = test_array_from_i64(ctx, RG_INT64, off, nsegs + 1);
    rg_array *c64, *c32, *out = NULL, *outf = NULL;
    ck_assert_int_eq(rg_array_from_host(&c64, ctx, RG_FLOAT64, x, n), RG_OK);
    ck_assert_int_eq(rg_array_from_host(&c32, ctx, RG_FLOAT32, xf, n), RG_OK);
    ck_assert_int_eq(rg_array_create(&out, ctx, RG_FLOAT64, nsegs), RG_OK);
    ck_assert_int_eq(rg_array_create(&outf, ctx, RG_FLOAT32, nsegs), RG_OK);
    double *got = malloc(nsegs * sizeof *got);
    float *gotf = malloc(nsegs * sizeof *gotf);
    ck_assert(got && gotf);
    ck_assert_int_eq(rg_segment_reduce(out, c64, offsets, RG_REDUCE_SUM, policy, NULL), RG_OK);
    ck_assert_int_eq(rg_segment_reduce(outf, c32, offsets, RG_REDUCE_SUM, policy, NULL), RG_OK);
    ck_assert_int_eq(rg_array_read(got, out, 0, nsegs), RG_OK);
    ck_assert_int_eq(rg_array_read(gotf, outf, 0, nsegs), RG_OK);
    size_t differ = 0;
    for (size_t i = 0; i < nsegs; i++) {
        double w = seq_sum(x, off[i], off[i + 1]), wf64 = 0;
        for (int64_t k = off[i]; k < off[i + 1]; k++)
            wf64 += (double)xf[k];
        float wf = (float)wf64;
        /* NaN's sign and payload follow the compiler's operand order, which C leaves open */
        int same = isnan(w) ? isnan(got[i]) && isnan(gotf[i])
                            : memcmp(&got[i], &w, sizeof w) == 0 &&
                                  memcmp(&gotf[i], &wf, sizeof wf) == 0;
        if (!same && (policy == RG_REDUCE_POLICY_PER_SEGMENT || ++differ > 64 ||
                      !(isnan(w) ? isnan(got[i]) : fabs(got[i] - w) <= 1e-6 * (1 + fabs(w)))))
            ck_abort_msg("%s: segment %zu (length %" PRId64 ") sums to %a / %a, expected %a / %a",
                         rg_reduce_policy_name(policy), i, len[i], got[i], (double)gotf[i], w,
                         (double)wf);
        if (i >= 100 && i < 140)
            ck_assert_msg(got[i] == 0 && !signbit(got[i]) && !signbit(gotf[i]),
                          "segment %zu of -0.0: %a", i, got[i]);
    }
    check_extremes_exact(ctx, c64, offsets, x, off, nsegs, policy, 1);
    free(got);
    free(gotf);
    rg_array_free(outf);
    rg_array_free(out);
    rg_array_free(c32);
    rg_array_free(c64);
    rg_array_free(offsets);
    free(xf);
    free(x);
    free(off);
    free(len);
    rg_context_free(ctx);
}
END_TEST

#define NARROW(v) (narrow ? (double)(float)(v) : (v))
/* 32 interleaved lanes from +0.0 (1.0) over x[b .. e), the tree (j + 16,
 * ..., j + 1) their result: a team of reduce.cl. */
static double team_fold(const double *x, int64_t b, int64_t e, int prod, bool narrow)
{
    double lane[32];
    for (int j = 0; j < 32; j++)
        lane[j] = prod ? 1 : 0;
    for (int64_t k = b; k < e; k++) {
        double *l = &lane[(k - b) % 32];
        *l = NARROW(prod ? *l * x[k] : *l + x[k]);
    }
    for (int w = 16; w > 0; w /= 2)
        for (int j = 0; j < w; j++)
            lane[j] = NARROW(prod ? lane[j] * lane[j + w] : lane[j] + lane[j + w]);
    return lane[0];
}

/* The documented order of a float sum (prod) of [b, e) in double, or, with
 * narrow, in float (each double result rounded to float: a float operation
 * exactly, since double has more than twice float's precision), from 64
 * elements on; shorter segments left to right.  lanes = 8 (OpenMP, OpenCL
 * CPU devices): 8 interleaved lanes over the whole groups of 8, added as a
 * tree (j + 4, j + 2, j + 1) onto +0.0 (1.0), then the rest left to right.
 * lanes = 32 (other OpenCL devices): team_fold over the whole segment, or
 * from TEST_PIECE elements on over its parts, cut at the multiples of
 * TEST_PIECE (reduce.cl's reduce_teams and reduce_pieces). */
static double lanes_fold(const double *x, int64_t b, int64_t e, int prod, int lanes, bool narrow)
{
    double v = prod ? 1 : 0;
    if (lanes == 32 && e - b >= TEST_PIECE) {
        /* Cut at the multiples of TEST_PIECE: lane j takes the elements j,
         * j + 32, ... before the first cut, then pieces j, j + 32, ... from it. */
        double lane[32];
        int64_t cut = (b + TEST_PIECE - 1) / TEST_PIECE * TEST_PIECE;
        for (int j = 0; j < 32; j++)
            lane[j] = v;
        for (int64_t k = b; k < cut; k++) {
            double *l = &lane[(k - b) % 32];
            *l = NARROW(prod ? *l * x[k] : *l + x[k]);
        }
        for (int64_t p = cut; p < e; p += TEST_PIECE) {
            double piece = team_fold(x, p, p + TEST_PIECE < e ? p + TEST_PIECE : e, prod, narrow);
            double *l = &lane[(p - cut) / TEST_PIECE % 32];
            *l = NARROW(prod ? *l * piece : *l + piece);
        }
        for (int w = 16; w > 0; w /= 2)
            for (int j = 0; j < w; j++)
                lane[j] = NARROW(prod ? lane[j] * lane[j + w] : lane[j] + lane[j + w]);
        return lane[0];
    }
    if (lanes == 32 && e - b >= 64)
        return team_fold(x, b, e, prod, narrow);
    if (lanes == 8 && e - b >= 64) {
        double lane[8];
        for (int j = 0; j < 8; j++)
            lane[j] = v;
        for (int64_t stop = b + (e - b) / 8 * 8; b < stop; b += 8)
            for (int j = 0; j < 8; j++)
                lane[j] = NARROW(prod ? lane[j] * x[b + j] : lane[j] + x[b + j]);
        for (int w = 4; w > 0; w /= 2)
            for (int j = 0; j < w; j++)
                lane[j] = NARROW(prod ? lane[j] * lane[j + w] : lane[j] + lane[j + w]);
        v = prod ? v * lane[0] : v + lane[0];
    }
    for (; b < e; b++)
        v = NARROW(prod ? v * x[b] : v + x[b]);
    return v;
#undef NARROW
}

/* float64 and float32 sums and products of inexact values (so that any other
 * order changes the bits) split by off (offsets: the same as an array),
 * against lanes_fold with lanes (float32 in float where ocl), bit for bit:
 * per segment on every segment, else (merge path, OpenCL) but on at most
 * may_differ segments, which stay within rounding of it.  state: the
 * values' seed, advanced. */
static void check_inexact_folds(rg_context *ctx, rg_array *offsets, const int64_t *off,
                                const int64_t *len, size_t nsegs, rg_reduce_policy policy,
                                int lanes, bool ocl, size_t may_differ, uint64_t *state)
{
    size_t n = (size_t)off[nsegs];
    double *x = malloc((n + 1) * sizeof *x), *xw = malloc((n + 1) * sizeof *xw);
    double *got = malloc((nsegs + 1) * sizeof *got);
    float *xf = malloc((n + 1) * sizeof *xf), *gotf = malloc((nsegs + 1) * sizeof *gotf);
    ck_assert(x && xw && got && xf && gotf);
#ifdef _OPENMP
    if ((size_t)omp_get_max_threads() > may_differ)
        may_differ = (size_t)omp_get_max_threads();
#endif
    for (int prod = 0; prod < 2; prod++) {
        for (size_t k = 0; k < n; k++) {
            uint64_t r = test_rand(state);
            /* products near 1 so that 3000 of them stay finite */
            x[k] = prod ? 1 + ((double)(r >> 40) - 8388608.0) * 1e-10
                        : (double)(int64_t)(r >> 40) * 0.1 - 1e5;
            xf[k] = (float)x[k];
            xw[k] = (double)xf[k];
        }
        rg_reduce_op op = prod ? RG_REDUCE_PROD : RG_REDUCE_SUM;
        rg_array *c64, *c32, *out = NULL, *outf = NULL;
        ck_assert_int_eq(rg_array_from_host(&c64, ctx, RG_FLOAT64, x, n), RG_OK);
        ck_assert_int_eq(rg_array_from_host(&c32, ctx, RG_FLOAT32, xf, n), RG_OK);
        ck_assert_int_eq(rg_array_create(&out, ctx, RG_FLOAT64, nsegs), RG_OK);
        ck_assert_int_eq(rg_array_create(&outf, ctx, RG_FLOAT32, nsegs), RG_OK);
        ck_assert_int_eq(rg_segment_reduce(out, c64, offsets, op, policy, NULL), RG_OK);
        ck_assert_int_eq(rg_segment_reduce(outf, c32, offsets, op, policy, NULL), RG_OK);
        ck_assert_int_eq(rg_array_read(got, out, 0, nsegs), RG_OK);
        ck_assert_int_eq(rg_array_read(gotf, outf, 0, nsegs), RG_OK);
        size_t differ = 0;
        for (size_t i = 0; i < nsegs; i++) {
            double w = lanes_fold(x, off[i], off[i + 1], prod, lanes, false);
            float wf = (float)lanes_fold(xw, off[i], off[i + 1], prod, lanes, ocl);
            int same = memcmp(&got[i], &w, sizeof w) == 0 && memcmp(&gotf[i], &wf, sizeof wf) == 0;
            if (!same && (policy == RG_REDUCE_POLICY_PER_SEGMENT || ++differ > may_differ ||
                          fabs(got[i] - w) > 1e-9 * (1 + fabs(w))))
                ck_abort_msg("%s %s: segment %zu (length %" PRId64 ") gives %a / %a, expected "
                             "%a / %a", rg_reduce_op_name(op), rg_reduce_policy_name(policy), i,
                             len[i], got[i], (double)gotf[i], w, (double)wf);
        }
        rg_array_free(outf);
        rg_array_free(out);
        rg_array_free(c32);
        rg_array_free(c64);
    }
    free(gotf);
    free(xf);
    free(got);
    free(xw);
    free(x);
}

/* Segments of 0 to 3000 elements (most past 64), and every 37th of 8152
 * to 38151 (cut into pieces on GPUs; one starts on a cut), of inexact
 * values, so that
 * any other order changes the bits.  Per-segment float64 and float32 sums
 * and products match the documented order bit for bit: 8 lanes on OpenMP
 * and on OpenCL CPU devices, 32 on other OpenCL devices and with
 * RAGGED_OPENCL_CPU_KERNELS=0; float32 in
 * double on OpenMP, in float on OpenCL.  OpenMP's merge path may differ on
 * the segments that thread boundaries cut, OpenCL's (a tree per work-group)
 * on any; both stay within rounding of it. */
START_TEST(test_reduce_lanes_exact)
{
    int backend = test_backend_plain(backend_of(_i));
    TEST_CONTEXT(ctx, backend);
    rg_reduce_policy policy = policy_of(_i);
    bool ocl = backend == TEST_BACKEND_OPENCL;
    int lanes = !ocl || test_cpu_kernels(ctx) ? 8 : 32;
    size_t nsegs = 300;
    int64_t *len = malloc(nsegs * sizeof *len);
    ck_assert_ptr_nonnull(len);
    uint64_t state = 91;
    int64_t at = 0;
    for (size_t i = 0; i < nsegs; i++) {
        uint64_t r = test_rand(&state);
        len[i] = i % 10 == 0   ? (int64_t)(r % 64)
                 : i % 37 == 5 ? TEST_PIECE - 40 + (int64_t)(r % 30000) /* cut into pieces */
                               : 60 + (int64_t)(r % 3000);
        if (i == 41) /* the next one, cut into pieces, starts on a cut */
            len[i] += (TEST_PIECE - (at + len[i]) % TEST_PIECE) % TEST_PIECE;
        at += len[i];
    }
    int64_t *off = ref_offsets(len, nsegs);
    rg_array *offsets = test_array_from_i64(ctx, RG_INT64, off, nsegs + 1);
    /* Merge path may cut a segment at each of the threads - 1 boundaries
     * (8 was too few on a 16-core machine). */
    check_inexact_folds(ctx, offsets, off, len, nsegs, policy, lanes, ocl, ocl ? nsegs : 8,
                        &state);
    rg_array_free(offsets);
    free(off);
    free(len);
    rg_context_free(ctx);
}
END_TEST

/* Long segments (past the 1024 elements from which OpenMP scans min and max
 * in lanes) of few distinct values, so that the extreme ties across lanes,
 * with +-0.0, +-inf and, in every fourth segment, NaNs: every policy and
 * backend gives the first NaN, else the first position of the extreme, as
 * the left-to-right scan does (OpenMP with AVX-512 off too). */
START_TEST(test_reduce_extreme_long_exact)
{
    TEST_CONTEXT(ctx, test_backend_plain(backend_of(_i)));
    rg_reduce_policy policy = policy_of(_i);
    enum { NSEGS = 40 };
    int64_t len[NSEGS];
    uint64_t state = 5;
    for (size_t i = 0; i < NSEGS; i++)
        len[i] = i == 7 ? 0 : 1000 + (int64_t)(test_rand(&state) % 4000);
    int64_t *off = ref_offsets(len, NSEGS);
    size_t n = (size_t)off[NSEGS];
    double *x = malloc(n * sizeof *x);
    ck_assert_ptr_nonnull(x);
    static const double vals[8] = {-0.0, 0.0, 1, -1, 2, -2, INFINITY, -INFINITY};
    for (size_t i = 0; i < NSEGS; i++)
        for (int64_t k = off[i]; k < off[i + 1]; k++) {
            uint64_t r = test_rand(&state);
            /* segments 0 mod 3 hold only 1 and 2 apart from one spot, so the
             * extremes are few and late; the others draw from all of vals */
            x[k] = i % 3 == 0 ? 1 + (double)(r % 2) : vals[r % (i % 5 == 1 ? 6 : 8)];
            if (i % 4 == 2 && r % 997 == 0)
                x[k] = NAN;
        }
    for (size_t i = 0; i < NSEGS; i += 3)
        if (len[i] > 0)
            x[off[i] + (int64_t)(test_rand(&state) % (uint64_t)len[i])] = i % 2 ? -0.0 : 0.0;
    rg_array *offsets = test_array_from_i64(ctx, RG_INT64, off, NSEGS + 1);
    rg_array *c64;
    ck_assert_int_eq(rg_array_from_host(&c64, ctx, RG_FLOAT64, x, n), RG_OK);
    check_extremes_exact(ctx, c64, offsets, x, off, NSEGS, policy, 0);
    rg_array_free(c64);
    rg_array_free(offsets);
    free(x);
    free(off);
    rg_context_free(ctx);
}
END_TEST

/* Tiles of 8 segments where one is longer than the rest, which the OpenMP
 * tiles (AVX-512) reduce apart from the other 7 (the lone lane):
 * per tile a kind and the lone lane's place (every lane in turn), the other
 * lanes' elements in 2, 4 or 8 registers or past 64 (gathered); ties for
 * the longest (the first one is lone); a second segment too long for the
 * tile; 24 and 25 elements, at the threshold; some tiles without one. */
static int64_t lone_length(size_t i, uint64_t r)
{
    size_t tile = i / 8, lane = i % 8, lone = (tile / 8) % 8;
    int64_t other = (int64_t)(r % 9); /* 0 .. 8 */
    switch (tile % 8) {
    case 0: return lane == lone ? 25 + (int64_t)(r % 39) : other;
    case 1: return lane == lone ? 25 + (int64_t)(r % 39) : (int64_t)(r % 25);
    case 2: return lane == lone ? 64 + (int64_t)(r % 300) : (int64_t)(r % 5);
    case 3: return lane == lone ? 40 + (int64_t)(r % 24) : (int64_t)(r % 31);
    case 4: return lane == lone || lane == (lone + 3) % 8 ? 30 : other;
    case 5: return lane == lone ? 30 : lane == (lone + 5) % 8 ? 64 + (int64_t)(r % 9) : other;
    case 6: return lane == lone ? 24 + (int64_t)(tile / 8 % 2) : 24;
    default: return lane == lone ? 25 : 0;
    }
}
START_TEST(test_reduce_lone_lanes)
{
    TEST_CONTEXT(ctx, backend_of(_i));
    rg_reduce_policy policy = policy_of(_i);
    size_t nsegs = 8 * 8 * 8 * 5 + 3; /* and a partial tile */
    int64_t *len = lengths_by(nsegs, 17, lone_length);
    static const rg_reduce_op ops[4] = {RG_REDUCE_MIN, RG_REDUCE_MAX, RG_REDUCE_ARGMIN,
                                        RG_REDUCE_ARGMAX};
    static const rg_dtype types[11] = {RG_FLOAT64, RG_INT64, RG_UINT64, RG_FLOAT32,
                                       RG_INT32,   RG_UINT32, RG_UINT8, RG_INT8,
                                       RG_BOOL,    RG_INT16, RG_UINT16};
    for (int t = 0; t < 11; t++)
        for (int ot = 0; ot < 2; ot++)
            check_ops_on(ctx, types[t], ot ? RG_INT32 : RG_INT64, len, nsegs, ops, 4, policy,
                         1, 90 + (uint64_t)(2 * t + ot), "lone lanes");
    /* sums and products of every dtype the tiles take */
    static const rg_reduce_op arith[2] = {RG_REDUCE_SUM, RG_REDUCE_PROD};
    static const rg_dtype sum_types[11] = {RG_FLOAT64, RG_FLOAT32, RG_INT64, RG_UINT64,
                                           RG_INT32,   RG_UINT32,  RG_BOOL,  RG_UINT8,
                                           RG_INT8,    RG_INT16,   RG_UINT16};
    for (int t = 0; t < 11; t++)
        check_ops_on(ctx, sum_types[t], t % 2 ? RG_INT32 : RG_INT64, len, nsegs, arith,
                     is_float(sum_types[t]) ? 2 : 1, policy, 1, 100 + (uint64_t)t,
                     "lone lanes");
    /* signed zeros, infinities and rare NaN, bit for bit */
    int64_t *off = ref_offsets(len, nsegs);
    size_t n = (size_t)off[nsegs];
    double *x = malloc(n * sizeof *x);
    ck_assert_ptr_nonnull(x);
    uint64_t state = 23;
    static const double vals[8] = {-0.0, 0.0, 1, -1, 2, -2, INFINITY, -INFINITY};
    for (size_t k = 0; k < n; k++) {
        uint64_t r = test_rand(&state);
        x[k] = r % 499 == 0 ? NAN : vals[r % 8];
    }
    rg_array *offsets = test_array_from_i64(ctx, RG_INT64, off, nsegs + 1), *c64;
    ck_assert_int_eq(rg_array_from_host(&c64, ctx, RG_FLOAT64, x, n), RG_OK);
    check_extremes_exact(ctx, c64, offsets, x, off, nsegs, policy, 0);
    rg_array_free(c64);
    /* On OpenMP, float64 and float32 sums and products of inexact values in the
     * documented order, bit for bit: the lone lanes of 64 or more fold in 8
     * lanes (one cut per thread boundary: 4 were too few on a 16-core machine) */
    if (backend_of(_i) == TEST_BACKEND_OPENMP)
        check_inexact_folds(ctx, offsets, off, len, nsegs, policy, 8, false, 4, &state);
    rg_array_free(offsets);
    free(x);
    free(off);
    free(len);
    rg_context_free(ctx);
}
END_TEST

/* The OpenMP tiles (AVX-512) go in blocks of 512 segments; a block whose
 * segments average 2.75 elements or fewer pairs segments of up to 4
 * elements in its rows and hands a tile with a lone lane to the other
 * blocks' code.  Blocks of each kind in turn: short lengths with a lone
 * lane, a tile too long for the tiles and one all of length 1; longer
 * lengths; length 1 with lone lanes in the first and last tiles; lengths
 * at the threshold.  Then a partial tile. */
static int64_t block_length(size_t i, uint64_t r)
{
    size_t block = i / 512, tile = i % 512 / 8, lane = i % 8;
    switch (block % 4) {
    case 0:
        return tile == 5 && lane == block % 8 ? 30 + (int64_t)(r % 200)
               : tile == 9 && lane % 4 == 1   ? 70
               : tile == 13                   ? 1
                                              : (int64_t)(r % 4);
    case 1: return (int64_t)(r % 21);
    case 2: return (tile == 0 || tile == 63) && lane == 7 - block % 8 ? 25 + (int64_t)(r % 9) : 1;
    default: return tile % 16 == 3 ? 4 + (int64_t)(r % 5) : 2 + (int64_t)(r % 2);
    }
}
START_TEST(test_reduce_tile_blocks)
{
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENMP);
    rg_reduce_policy policy = policy_of(_i);
    size_t nsegs = 512 * 24 + 5;
    int64_t *len = lengths_by(nsegs, 23, block_length);
    static const rg_reduce_op ops[6] = {RG_REDUCE_SUM,    RG_REDUCE_PROD,   RG_REDUCE_MIN,
                                        RG_REDUCE_ARGMIN, RG_REDUCE_ARGMAX, RG_REDUCE_MAX};
    static const rg_dtype types[11] = {RG_FLOAT64, RG_FLOAT32, RG_INT64, RG_UINT64,
                                       RG_INT32,   RG_UINT32,  RG_BOOL,  RG_UINT8,
                                       RG_INT8,    RG_INT16,   RG_UINT16};
    for (int t = 0; t < 11; t++) {
        /* the ops the tiles take: all but products of integers */
        rg_reduce_op mine[6];
        size_t k = 0;
        for (size_t o = 0; o < 6; o++)
            if (is_float(types[t]) || ops[o] != RG_REDUCE_PROD)
                mine[k++] = ops[o];
        check_ops_on(ctx, types[t], t % 2 ? RG_INT32 : RG_INT64, len, nsegs, mine, k, policy,
                     1, 110 + (uint64_t)t, "tile blocks");
    }
    free(len);
    rg_context_free(ctx);
}
END_TEST

/* Lengths for the tests of the AVX-512 tiles and ranges below: those of the
 * lone-lane test (case 0) and of the tile-block test (1), long ones (2;
 * ranges from 9 elements, with tails) or all 1 (3). */
static int64_t long_length(size_t i, uint64_t r)
{
    (void)r;
    return (int64_t)(i * 37 % 300);
}
static int64_t unit_length(size_t i, uint64_t r)
{
    (void)i, (void)r;
    return 1;
}
static int64_t *tile_case_lengths(int c, uint64_t seed, size_t *nsegs)
{
    int64_t (*const rules[4])(size_t, uint64_t) = {lone_length, block_length, long_length,
                                                   unit_length};
    *nsegs = c == 2 ? 40 : 8 * 8 * 8 * 5 + 3;
    return lengths_by(*nsegs, seed, rules[c]);
}

/* min, max, argmin and argmax of 32-, 16- and 8-bit values at the limits of
 * their type (which are the identities: the AVX-512 tiles pad rows with
 * them and widen the values to 64-bit lanes), and of bool, with ties, on
 * the lengths of the lone-lane and tile-block tests (rows, pairs, lone
 * lanes, refused tiles) and long segments (lanes), int32 and int64
 * offsets; float32 with infinities, signed zeros and a NaN now and then. */
START_TEST(test_reduce_extreme_limits)
{
    TEST_CONTEXT(ctx, backend_of(_i));
    rg_reduce_policy policy = policy_of(_i);
    static const rg_reduce_op ops[4] = {RG_REDUCE_MIN, RG_REDUCE_MAX, RG_REDUCE_ARGMIN,
                                        RG_REDUCE_ARGMAX};
    static const double i32v[6] = {INT32_MIN, INT32_MIN + 1.0, -1, 0, INT32_MAX - 1.0, INT32_MAX};
    static const double u32v[6] = {0, 1, 2147483648.0, 2147483647.0, UINT32_MAX - 1.0, UINT32_MAX};
    static const double f32v[6] = {-INFINITY, -FLT_MAX, -0.0, 0.0, FLT_MAX, INFINITY};
    static const double u8v[6] = {0, 1, 127, 128, 254, 255};
    static const double i8v[6] = {-128, -127, -1, 0, 126, 127};
    static const double b8v[6] = {0, 0, 1, 0, 1, 1};
    static const double u16v[6] = {0, 1, 32767, 32768, 65534, 65535};
    static const double i16v[6] = {-32768, -32767, -1, 0, 32766, 32767};
    static const struct {
        rg_dtype t;
        const double *v;
    } types[8] = {{RG_INT32, i32v}, {RG_UINT32, u32v}, {RG_FLOAT32, f32v}, {RG_UINT8, u8v},
                  {RG_INT8, i8v},   {RG_BOOL, b8v},    {RG_UINT16, u16v},  {RG_INT16, i16v}};
    for (int l = 0; l < 3; l++) {
        size_t nsegs;
        int64_t *len = tile_case_lengths(l, 31 + (uint64_t)l, &nsegs);
        int64_t *off = ref_offsets(len, nsegs);
        size_t n = (size_t)off[nsegs];
        for (int d = 0; d < 8; d++) {
            rg_dtype t = types[d].t;
            rg_array *offsets =
                test_array_from_i64(ctx, (d + l) % 2 ? RG_INT32 : RG_INT64, off, nsegs + 1);
            unsigned char *xh = malloc(n * 4 + 4);
            ck_assert_ptr_nonnull(xh);
            uint64_t state = 41 + (uint64_t)(3 * l + d);
            for (size_t k = 0; k < n; k++) {
                uint64_t r = test_rand(&state);
                /* mostly the two ends, so that runs of one identity are common */
                double v = types[d].v[r % 4 < 3 ? (r >> 8) % 2 * 5 : (r >> 8) % 6];
                store_f64(t, xh, k, t == RG_FLOAT32 && (r >> 20) % 300 == 0 ? NAN : v);
            }
            rg_array *content = NULL;
            ck_assert_int_eq(rg_array_from_host(&content, ctx, t, xh, n), RG_OK);
            for (int o = 0; o < 4; o++)
                check_op(ctx, content, xh, offsets, off, nsegs, ops[o], policy,
                         l == 0 ? "limits, lone lanes" : l == 1 ? "limits, tile blocks"
                                                        : "limits, long segments");
            rg_array_free(content);
            rg_array_free(offsets);
            free(xh);
        }
        free(off);
        free(len);
    }
    rg_context_free(ctx);
}
END_TEST

/* min, max, argmin and argmax of 1- and 2-byte values over segments of 15
 * to 414 elements and a few of over 3000 (the OpenMP backend scans those of
 * 16 or more in AVX-512BW lanes of their own, then looks for the extreme's
 * first position): each segment holds its type's lowest value at p and
 * again later, and its highest at q, with p first, last, near the end or
 * anywhere, over middling values (bool: all 0 or all 1); int32 and int64
 * offsets. */
START_TEST(test_reduce_narrow_extremes)
{
    TEST_CONTEXT(ctx, backend_of(_i));
    rg_reduce_policy policy = policy_of(_i);
    static const rg_reduce_op ops[4] = {RG_REDUCE_MIN, RG_REDUCE_MAX, RG_REDUCE_ARGMIN,
                                        RG_REDUCE_ARGMAX};
    static const struct {
        rg_dtype t;
        double lo, mid, hi;
    } types[5] = {{RG_UINT8, 0, 100, UINT8_MAX},
                  {RG_INT8, INT8_MIN, -3, INT8_MAX},
                  {RG_UINT16, 0, 1000, UINT16_MAX},
                  {RG_INT16, INT16_MIN, 7, INT16_MAX},
                  {RG_BOOL, 0, -1, 1}};
    size_t nsegs = 300;
    int64_t *len = malloc(nsegs * sizeof *len);
    ck_assert_ptr_nonnull(len);
    for (size_t i = 0; i < nsegs; i++)
        len[i] = i < 290 ? 15 + (int64_t)(i * 53 % 400) : 3000 + (int64_t)i;
    int64_t *off = ref_offsets(len, nsegs);
    size_t n = (size_t)off[nsegs];
    for (int d = 0; d < 5; d++) {
        rg_dtype t = types[d].t;
        rg_array *offsets = test_array_from_i64(ctx, d % 2 ? RG_INT32 : RG_INT64, off, nsegs + 1);
        unsigned char *xh = malloc(n * 2 + 2);
        ck_assert_ptr_nonnull(xh);
        uint64_t state = 131 + (uint64_t)d;
        for (size_t i = 0; i < nsegs; i++) {
            int64_t b = off[i], l = len[i];
            uint64_t r = test_rand(&state);
            double mid = types[d].mid < 0 ? (double)(r % 2) : types[d].mid + (double)(r % 5);
            for (int64_t k = b; k < b + l; k++)
                store_f64(t, xh, (size_t)k, mid);
            int64_t p = i % 4 == 0 ? l - 1 : i % 4 == 1 ? 0 : i % 4 == 2 ? (int64_t)(r % 997) % l
                                                                         : l - 1 - (int64_t)(r % 40);
            int64_t q = l - 1 - p, p2 = p + (l - p) / 2;
            store_f64(t, xh, (size_t)(b + p2), types[d].lo);
            store_f64(t, xh, (size_t)(b + q), types[d].hi);
            store_f64(t, xh, (size_t)(b + p), types[d].lo);
        }
        rg_array *content = NULL;
        ck_assert_int_eq(rg_array_from_host(&content, ctx, t, xh, n), RG_OK);
        for (int o = 0; o < 4; o++)
            check_op(ctx, content, xh, offsets, off, nsegs, ops[o], policy, "narrow extremes");
        rg_array_free(content);
        rg_array_free(offsets);
        free(xh);
    }
    free(off);
    free(len);
    rg_context_free(ctx);
}
END_TEST

/* int16 min and max over 16M+ segments of 0 to 6 elements: a 32 MiB output
 * of 2-byte values, which the OpenMP backend's AVX-512BW tiles stream 16
 * bytes at a time; int64 and int32 offsets. */
START_TEST(test_reduce_tiles_streamed_i16)
{
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENMP);
    size_t nsegs = ((size_t)16 << 20) + 9;
    int64_t *len = lengths_by(nsegs, 15 + (uint64_t)_i, streamed_length_f32);
    const rg_reduce_op op = _i ? RG_REDUCE_MAX : RG_REDUCE_MIN;
    check_ops_on(ctx, RG_INT16, _i ? RG_INT32 : RG_INT64, len, nsegs, &op, 1,
                 RG_REDUCE_POLICY_MERGE_PATH, 1, 73, "streamed int16 tiles");
    free(len);
    rg_context_free(ctx);
}
END_TEST

/* count_nonzero, any and all (the OpenMP AVX-512 tiles count in 64-bit
 * lanes, floats widened): segments all zero (-0.0 among them), all
 * nonzero (NaN among them) or mixed, in turn by chance, so that any and all
 * go both ways; the lengths of the lone-lane and tile-block tests, long
 * ones and all-length-1 ones; every dtype the tiles take (the 1- and
 * 2-byte ones where the CPU has AVX-512BW); int32 and int64 offsets. */
START_TEST(test_reduce_logic_tiles)
{
    TEST_CONTEXT(ctx, backend_of(_i));
    rg_reduce_policy policy = policy_of(_i);
    static const rg_reduce_op ops[3] = {RG_REDUCE_COUNT_NONZERO, RG_REDUCE_ANY, RG_REDUCE_ALL};
    static const rg_dtype types[11] = {RG_FLOAT64, RG_FLOAT32, RG_INT64, RG_UINT64,
                                       RG_INT32,   RG_UINT32,  RG_BOOL,  RG_UINT8,
                                       RG_INT8,    RG_INT16,   RG_UINT16};
    for (int l = 0; l < 4; l++) {
        size_t nsegs;
        int64_t *len = tile_case_lengths(l, 51 + (uint64_t)l, &nsegs);
        int64_t *off = ref_offsets(len, nsegs);
        size_t n = (size_t)off[nsegs];
        for (int d = 0; d < 11; d++) {
            rg_dtype t = types[d];
            rg_array *offsets =
                test_array_from_i64(ctx, (d + l) % 2 ? RG_INT32 : RG_INT64, off, nsegs + 1);
            unsigned char *xh = malloc(n * 8 + 8);
            ck_assert_ptr_nonnull(xh);
            uint64_t state = 61 + (uint64_t)(8 * l + d);
            for (size_t i = 0; i < nsegs; i++) {
                uint64_t kind = test_rand(&state) % 3; /* all zero, none zero, mixed */
                for (int64_t k = off[i]; k < off[i + 1]; k++) {
                    uint64_t r = test_rand(&state);
                    bool zero = kind == 0 || (kind == 2 && r % 2);
                    double v = zero ? (r >> 8) % 2 ? -0.0 : 0.0 : (double)(1 + (r >> 8) % 5);
                    if (!zero && is_float(t) && (r >> 16) % 7 == 0)
                        v = NAN;
                    store_f64(t, xh, (size_t)k, v);
                }
            }
            rg_array *content = NULL;
            ck_assert_int_eq(rg_array_from_host(&content, ctx, t, xh, n), RG_OK);
            for (int o = 0; o < 3; o++)
                check_op(ctx, content, xh, offsets, off, nsegs, ops[o], policy,
                         l == 0   ? "logic, lone lanes"
                         : l == 1 ? "logic, tile blocks"
                         : l == 2 ? "logic, long segments"
                                  : "logic, all length 1");
            rg_array_free(content);
            rg_array_free(offsets);
            free(xh);
        }
        free(off);
        free(len);
    }
    rg_context_free(ctx);
}
END_TEST

/* Sum, count_nonzero, any, all, min, max, argmin and argmax (the ops of
 * the 1- and 2-byte tiles) of values xh (n of dtype t) over offsets,
 * against the sequential reference. */
static void check_tile_ops(rg_context *ctx, rg_dtype t, const void *xh, size_t n,
                           rg_array *offsets, const int64_t *off, size_t nsegs,
                           rg_reduce_policy policy, const char *what)
{
    static const rg_reduce_op ops[8] = {RG_REDUCE_SUM,    RG_REDUCE_COUNT_NONZERO,
                                        RG_REDUCE_ANY,    RG_REDUCE_ALL,
                                        RG_REDUCE_MIN,    RG_REDUCE_MAX,
                                        RG_REDUCE_ARGMIN, RG_REDUCE_ARGMAX};
    rg_array *content = NULL;
    ck_assert_int_eq(rg_array_from_host(&content, ctx, t, xh, n), RG_OK);
    for (int o = 0; o < 8; o++)
        check_op(ctx, content, xh, offsets, off, nsegs, ops[o], policy, what);
    rg_array_free(content);
}

/* Sums, count_nonzero, any, all, min, max, argmin and argmax of 1-byte
 * values (bool, uint8, int8), every value of the byte from -128 or 0 up
 * (the extremes' identities among them), a third of them 0 (ties), on tiles
 * (8 segments) of 0 to 8 elements each (spans of up to 64 bytes), of 0 to
 * 16 (up to 128), of exactly 8 and exactly 16 (spans of 64 and 128), half
 * empty, of 0 to 24 (no lone lane), of 25 to 63 (a lone lane, the others
 * as long) and with one segment of 25 to 40 among shorter ones: on OpenMP
 * with AVX-512 VBMI, where it has it (its byte permutes take the tiles of
 * up to 16 elements a segment, a load per segment the others), then with
 * RAGGED_AVX512_VBMI=0 (a load per segment for all).  Every policy, int32
 * and int64 offsets. */
static int64_t byte_tile_length(size_t i, uint64_t r)
{
    switch ((i / 8) % 8) { /* per tile of 8 */
    case 0: return (int64_t)(r % 9);
    case 1: return (int64_t)(r % 17);
    case 2: return 8;
    case 3: return 16;
    case 4: return r % 2 ? 0 : 1 + (int64_t)(r / 2 % 15);
    case 5: return (int64_t)(r % 25);
    case 6: return 25 + (int64_t)(r % 39);
    default: return i % 8 == 5 ? 25 + (int64_t)(r % 16) : (int64_t)(r % 17);
    }
}
START_TEST(test_reduce_byte_tiles)
{
    if (_i >= N_POLICIES)
        test_setenv("RAGGED_AVX512_VBMI", "0");
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENMP);
    rg_reduce_policy policy = policy_of(_i);
    static const rg_dtype types[3] = {RG_BOOL, RG_UINT8, RG_INT8};
    size_t nsegs = 8 * 8 * 40 + 5;
    int64_t *len = lengths_by(nsegs, 31 + (uint64_t)_i, byte_tile_length);
    int64_t *off = ref_offsets(len, nsegs);
    size_t n = (size_t)off[nsegs];
    for (int d = 0; d < 3; d++) {
        rg_array *offsets =
            test_array_from_i64(ctx, (d + _i) % 2 ? RG_INT32 : RG_INT64, off, nsegs + 1);
        unsigned char *xh = malloc(n + 1);
        ck_assert_ptr_nonnull(xh);
        uint64_t state = 71 + (uint64_t)d;
        for (size_t k = 0; k < n; k++) {
            uint64_t r = test_rand(&state);
            /* bool's bytes are 0 or 1; the others take every byte */
            xh[k] = r % 3 == 0 ? 0 : types[d] == RG_BOOL ? 1 : (unsigned char)(r >> 8);
        }
        check_tile_ops(ctx, types[d], xh, n, offsets, off, nsegs, policy,
                       _i >= N_POLICIES ? "byte tiles, no VBMI" : "byte tiles");
        rg_array_free(offsets);
        free(xh);
    }
    free(off);
    free(len);
    rg_context_free(ctx);
}
END_TEST

/* Sums, count_nonzero, any, all, min, max, argmin and argmax of 2-byte
 * values (int16, uint16), which OpenMP's AVX-512BW tiles add by vpmaddwd
 * or reduce by vpmaxuw on keys (simd_lane_words, simd_packed_word_extreme
 * in lib/omp/reduce.c): every 16-bit value, a third of them 0 and a third
 * extremes (0x7fff, 0x8000, 0xffff, 1), so that a segment of 63 elements
 * reaches the largest and smallest sums; on tiles of 0 to 8 elements each
 * (two registers), 0 to 16 and exactly 16 (four), exactly 8, half empty,
 * 0 to 32 (a load per segment; past 24 a lone lane), 33 to 63 and
 * exactly 33 (two loads, a lone lane), 63 or 62 with one of 32, and one
 * lone segment of 25 to 40 among ones of 0 to 8 or 0 to 16 (a load per
 * segment into slots; the extremes there take rows), and one of 17 to 24
 * among ones of 0 to 4 (a span of at most 64 words, but too long a
 * segment for the slots).  The extremes' ties
 * (zeros, extremes) test that the first position is kept.  Every policy,
 * int32 and int64 offsets. */
static int64_t word_tile_length(size_t i, uint64_t r)
{
    switch ((i / 8) % 11) { /* per tile of 8 */
    case 10: return i % 8 == 4 ? 17 + (int64_t)(r % 8) : (int64_t)(r % 5);
    case 0: return (int64_t)(r % 9);
    case 1: return (int64_t)(r % 17);
    case 2: return 8;
    case 3: return 16;
    case 4: return r % 2 ? 0 : 1 + (int64_t)(r / 2 % 15);
    case 5: return (int64_t)(r % 33);
    case 8: return i % 8 == 5 ? 25 + (int64_t)(r % 16) : (int64_t)(r % 9);
    case 9: return i % 8 == 2 ? 25 + (int64_t)(r % 16) : (int64_t)(r % 17);
    case 6: return (i / 64) % 2 ? 33 : 33 + (int64_t)(r % 31);
    default: return i % 8 == 3 ? 32 : 62 + (int64_t)(r % 2);
    }
}
/* The tile ops (check_tile_ops) on OpenMP, policy _i, for each of the
 * ntypes dtypes of size bytes (2 or 4) in turn, on word_tile_length's
 * lengths (drawn from len_seed): a third of the values 0, a third the
 * random draw's bits from 16 up (every 16- or 32-bit pattern), a third
 * extremes[(k / 64 + d) % 4] for element k of dtype d (runs of 64: whole
 * segments of one extreme). */
static void check_narrow_tiles(int _i, const rg_dtype *types, int ntypes, size_t size,
                               const uint32_t extremes[4], uint64_t len_seed,
                               uint64_t value_seed, const char *what)
{
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENMP);
    rg_reduce_policy policy = policy_of(_i);
    size_t nsegs = 8 * 8 * 40 + 5;
    int64_t *len = lengths_by(nsegs, len_seed, word_tile_length);
    int64_t *off = ref_offsets(len, nsegs);
    size_t n = (size_t)off[nsegs];
    unsigned char *xh = malloc((n + 1) * size);
    ck_assert_ptr_nonnull(xh);
    for (int d = 0; d < ntypes; d++) {
        rg_array *offsets =
            test_array_from_i64(ctx, (d + _i) % 2 ? RG_INT32 : RG_INT64, off, nsegs + 1);
        uint64_t state = value_seed + (uint64_t)d;
        for (size_t k = 0; k < n; k++) {
            uint64_t r = test_rand(&state);
            uint32_t v = r % 3 == 0   ? 0
                         : r % 3 == 1 ? (uint32_t)(r >> 16)
                                      : extremes[(k / 64 + (size_t)d) % 4];
            if (size == 2) {
                uint16_t w = (uint16_t)v;
                memcpy(xh + 2 * k, &w, 2);
            } else {
                memcpy(xh + 4 * k, &v, 4);
            }
        }
        check_tile_ops(ctx, types[d], xh, n, offsets, off, nsegs, policy, what);
        rg_array_free(offsets);
    }
    free(xh);
    free(off);
    free(len);
    rg_context_free(ctx);
}
START_TEST(test_reduce_word_tiles)
{
    static const uint32_t extremes[4] = {0x7fff, 0x8000, 0xffff, 1};
    static const rg_dtype types[2] = {RG_UINT16, RG_INT16};
    check_narrow_tiles(_i, types, 2, 2, extremes, 37 + (uint64_t)_i, 83, "word tiles");
}
END_TEST

/* Sums, count_nonzero, any, all, min, max, argmin and argmax of 4-byte
 * values (int32, uint32, float32), whose sums and counts OpenMP's AVX-512
 * tiles take without rows (simd_lane_dwords in lib/omp/reduce.c): two
 * segments of up to 8 elements to a register, else a load per 16
 * elements.  The lengths of test_reduce_word_tiles (word_tile_length:
 * up to 8, up to 16, exactly 8 and 16, 17 to 32, 33 to 63 and lone lanes);
 * every 32-bit pattern, a third of them 0 and a third 0x7fffffff,
 * 0x80000000, 0xffffffff or 1 in runs of 64 (the largest and smallest
 * int32 and uint32 sums; as floats two NaNs, -0.0, which counts as zero,
 * and the smallest subnormal, which does not).  Every policy, int32 and
 * int64 offsets. */
START_TEST(test_reduce_dword_tiles)
{
    static const uint32_t extremes[4] = {0x7fffffff, 0x80000000, 0xffffffff, 1};
    static const rg_dtype types[3] = {RG_INT32, RG_UINT32, RG_FLOAT32};
    check_narrow_tiles(_i, types, 3, 4, extremes, 41 + (uint64_t)_i, 89, "dword tiles");
}
END_TEST

/* Regular offsets, every segment of one length: the OpenMP merge path
 * reduces segments of up to 8 elements from offsets it makes in blocks of
 * 4096 segments (regular_F of lib/omp/reduce.c), never reading them.
 * Every op and dtype, with NaNs, on int32 and int64 offsets; lengths 1 to
 * 8 and 9 (which that path leaves), a last block part full, too few
 * segments for it (under 2 blocks), and an output large enough to stream. */
START_TEST(test_reduce_regular)
{
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENMP);
    rg_reduce_policy policy = policy_of(_i);
    static const int64_t lens[] = {1, 2, 3, 8, 9};
    for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
        size_t nsegs = l == 2 ? 8191 : 3 * 4096 + 5 + l;
        int64_t *len = malloc(nsegs * sizeof *len);
        ck_assert_ptr_nonnull(len);
        for (size_t i = 0; i < nsegs; i++)
            len[i] = lens[l];
        char what[64];
        snprintf(what, sizeof what, "regular, length %" PRId64, lens[l]);
        for (int t = 0; t < N_DTYPES; t++)
            check_ops_on(ctx, all_dtypes[t], (t + l) % 2 ? RG_INT32 : RG_INT64, len, nsegs,
                         all_ops, N_OPS, policy, 1, 130 + (uint64_t)t, what);
        free(len);
    }
    /* 32 MiB of float64 results and more: streamed */
    size_t nsegs = ((size_t)4 << 20) + 3;
    int64_t *len = malloc(nsegs * sizeof *len);
    ck_assert_ptr_nonnull(len);
    for (size_t i = 0; i < nsegs; i++)
        len[i] = 1;
    static const rg_reduce_op ops[3] = {RG_REDUCE_SUM, RG_REDUCE_MIN, RG_REDUCE_ARGMAX};
    check_ops_on(ctx, RG_FLOAT64, RG_INT64, len, nsegs, ops, 3, policy, 1, 140,
                 "regular, streamed");
    free(len);
    rg_context_free(ctx);
}
END_TEST

/* +0.0 and -0.0 are equal, so of a segment's zeros min and max return the
 * first, as argmin and argmax do: min is bit for bit content[argmin], on
 * every path (lanes, AVX-512, teams, pieces, merge path). */
START_TEST(test_reduce_signed_zeros)
{
    TEST_CONTEXT(ctx, test_backend_plain(backend_of(_i)));
    rg_reduce_policy policy = policy_of(_i);
    static const int64_t lens[] = {1,  2,   3,   7,   8,    9,    15,   16,   17,   63,
                                   64, 65,  100, 199, 200,  1023, 1024, 1025, 3000, 9000,
                                   0,  20000, 5};
    size_t nsegs = sizeof lens / sizeof *lens;
    int64_t *off = ref_offsets(lens, nsegs);
    size_t n = (size_t)off[nsegs];
    rg_array *offsets = test_array_from_i64(ctx, RG_INT64, off, nsegs + 1);
    double *x = malloc(n * sizeof *x);
    float *xf = malloc(n * sizeof *xf);
    ck_assert(x && xf);
    uint64_t r = 12345;
    for (int is_max = 0; is_max < 2; is_max++) {
        /* Zeros of random sign, and now and then a value that loses to them. */
        for (size_t k = 0; k < n; k++) {
            r = r * 6364136223846793005u + 1442695040888963407u;
            x[k] = (r >> 60) == 0 ? (is_max ? -5.0 : 5.0) : (r >> 59) & 1 ? -0.0 : 0.0;
            xf[k] = (float)x[k];
        }
        for (int d = 0; d < 2; d++) {
            rg_dtype t = d ? RG_FLOAT32 : RG_FLOAT64;
            rg_array *content = NULL, *value = NULL, *at = NULL;
            ck_assert_int_eq(rg_array_from_host(&content, ctx, t, d ? (void *)xf : (void *)x, n),
                             RG_OK);
            ck_assert_int_eq(rg_array_create(&value, ctx, t, nsegs), RG_OK);
            ck_assert_int_eq(rg_array_create(&at, ctx, RG_INT64, nsegs), RG_OK);
            rg_status st = rg_segment_reduce(value, content, offsets,
                                             is_max ? RG_REDUCE_MAX : RG_REDUCE_MIN, policy, NULL);
            if (st == RG_OK)
                st = rg_segment_reduce(at, content, offsets,
                                       is_max ? RG_REDUCE_ARGMAX : RG_REDUCE_ARGMIN, policy, NULL);
            ck_assert_msg(st == RG_OK, "%s", rg_context_error(ctx));
            double v64[sizeof lens / sizeof *lens];
            float v32[sizeof lens / sizeof *lens];
            int64_t got_at[sizeof lens / sizeof *lens];
            ck_assert_int_eq(rg_array_read(d ? (void *)v32 : (void *)v64, value, 0, nsegs), RG_OK);
            ck_assert_int_eq(rg_array_read(got_at, at, 0, nsegs), RG_OK);
            for (size_t i = 0; i < nsegs; i++) {
                int64_t first = -1; /* the first extreme, == comparing */
                for (int64_t k = off[i]; k < off[i + 1]; k++)
                    if (first < 0 || (is_max ? x[k] > x[first] : x[k] < x[first]))
                        first = k;
                int64_t want_at = first < 0 ? -1 : first - off[i];
                double got = d ? (double)v32[i] : v64[i];
                double want = first < 0 ? (is_max ? -INFINITY : INFINITY) : x[first];
                ck_assert_msg(got_at[i] == want_at && got == want &&
                                  !signbit(got) == !signbit(want),
                              "%s %s of %s: segment %zu (length %" PRId64 ") gives %g at %" PRId64
                              ", expected %g at %" PRId64,
                              rg_reduce_policy_name(policy), is_max ? "max" : "min",
                              rg_dtype_name(t), i, lens[i], got, got_at[i], want, want_at);
            }
            rg_array_free(at);
            rg_array_free(value);
            rg_array_free(content);
        }
    }
    free(xf);
    free(x);
    rg_array_free(offsets);
    free(off);
    rg_context_free(ctx);
}
END_TEST

/* Hand-checked values: identities, ties, NaN, wrapping. */
START_TEST(test_reduce_values)
{
    TEST_CONTEXT(ctx, backend_of(_i));
    rg_reduce_policy policy = policy_of(_i);
    /* segments: [3 1 1 NaN 1] [] [2 2] [-0.5] */
    const double xs[8] = {3, 1, 1, NAN, 1, 2, 2, -0.5};
    const int64_t off[5] = {0, 5, 5, 7, 8};
    rg_array *content, *offsets = test_array_from_i64(ctx, RG_INT64, off, 5);
    ck_assert_int_eq(rg_array_from_host(&content, ctx, RG_FLOAT64, xs, 8), RG_OK);
    static const struct {
        rg_reduce_op op;
        double want[4];
    } cases[] = {
        {RG_REDUCE_SUM, {NAN, 0, 4, -0.5}},
        {RG_REDUCE_PROD, {NAN, 1, 4, -0.5}},
        {RG_REDUCE_MIN, {NAN, INFINITY, 2, -0.5}},
        {RG_REDUCE_MAX, {NAN, -INFINITY, 2, -0.5}},
        {RG_REDUCE_ARGMIN, {3, -1, 0, 0}},
        {RG_REDUCE_ARGMAX, {3, -1, 0, 0}},
        {RG_REDUCE_COUNT, {5, 0, 2, 1}},
        {RG_REDUCE_COUNT_NONZERO, {5, 0, 2, 1}},
        {RG_REDUCE_ANY, {1, 0, 1, 1}},
        {RG_REDUCE_ALL, {1, 1, 1, 1}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        rg_dtype ot = rg_reduce_dtype(cases[c].op, RG_FLOAT64);
        rg_array *out = NULL;
        ck_assert_int_eq(rg_array_create(&out, ctx, ot, 4), RG_OK);
        rg_status st = rg_segment_reduce(out, content, offsets, cases[c].op, policy, NULL);
        ck_assert_msg(st == RG_OK, "%s: %s", rg_reduce_op_name(cases[c].op),
                      rg_context_error(ctx));
        unsigned char got[32];
        ck_assert_int_eq(rg_array_read(got, out, 0, 4), RG_OK);
        for (size_t i = 0; i < 4; i++) {
            double g = load_f64(ot, got, i), w = cases[c].want[i];
            ck_assert_msg(isnan(w) ? isnan(g) != 0 : g == w, "%s: segment %zu is %g, expected %g",
                          rg_reduce_op_name(cases[c].op), i, g, w);
        }
        rg_array_free(out);
    }
    rg_array_free(content);

    /* Ties give the first position; int8 sums and products wrap in 64 bits, not 8. */
    const int64_t ints[6] = {-7, 5, -7, 5, 100, 100};
    const int64_t off2[3] = {0, 4, 6};
    rg_array *offsets2 = test_array_from_i64(ctx, RG_INT32, off2, 3);
    rg_array *c8 = test_array_from_i64(ctx, RG_INT8, ints, 6);
    static const struct {
        rg_reduce_op op;
        int64_t want[2];
    } int_cases[] = {{RG_REDUCE_ARGMIN, {0, 0}}, {RG_REDUCE_ARGMAX, {1, 0}},
                     {RG_REDUCE_SUM, {-4, 200}}, {RG_REDUCE_PROD, {1225, 10000}},
                     {RG_REDUCE_MIN, {-7, 100}}, {RG_REDUCE_MAX, {5, 100}}};
    for (size_t c = 0; c < sizeof int_cases / sizeof *int_cases; c++) {
        rg_array *out = NULL;
        ck_assert_int_eq(rg_array_create(&out, ctx, rg_reduce_dtype(int_cases[c].op, RG_INT8), 2),
                         RG_OK);
        rg_status st = rg_segment_reduce(out, c8, offsets2, int_cases[c].op, policy, NULL);
        ck_assert_msg(st == RG_OK, "%s: %s", rg_reduce_op_name(int_cases[c].op),
                      rg_context_error(ctx));
        int64_t *got = test_read_i64(out);
        test_expect_i64(got, int_cases[c].want, 2, rg_reduce_op_name(int_cases[c].op));
        free(got);
        rg_array_free(out);
    }
    rg_array_free(c8);
    rg_array_free(offsets2);
    rg_array_free(offsets);
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_reduce_tables)
{
    TEST_CONTEXT(ctx, _i);
    for (int d = 0; d < N_DTYPES; d++) {
        rg_dtype t = all_dtypes[d];
        rg_dtype sum = is_float(t) ? t : (is_unsigned(t) && t != RG_BOOL) ? RG_UINT64 : RG_INT64;
        ck_assert_int_eq(rg_reduce_dtype(RG_REDUCE_SUM, t), sum);
        ck_assert_int_eq(rg_reduce_dtype(RG_REDUCE_PROD, t), sum);
        ck_assert_int_eq(rg_reduce_dtype(RG_REDUCE_MIN, t), t);
        ck_assert_int_eq(rg_reduce_dtype(RG_REDUCE_MAX, t), t);
        ck_assert_int_eq(rg_reduce_dtype(RG_REDUCE_ARGMIN, t), RG_INT64);
        ck_assert_int_eq(rg_reduce_dtype(RG_REDUCE_ARGMAX, t), RG_INT64);
        ck_assert_int_eq(rg_reduce_dtype(RG_REDUCE_COUNT, t), RG_INT64);
        ck_assert_int_eq(rg_reduce_dtype(RG_REDUCE_COUNT_NONZERO, t), RG_INT64);
        ck_assert_int_eq(rg_reduce_dtype(RG_REDUCE_ANY, t), RG_BOOL);
        ck_assert_int_eq(rg_reduce_dtype(RG_REDUCE_ALL, t), RG_BOOL);
        ck_assert_int_eq(rg_reduce_dtype((rg_reduce_op)99, t), 0);
    }
    ck_assert_int_eq(rg_reduce_dtype(RG_REDUCE_SUM, (rg_dtype)0), 0);
    ck_assert_int_eq(rg_reduce_dtype(RG_REDUCE_SUM, (rg_dtype)77), 0);
    for (int o = 0; o < N_OPS; o++)
        ck_assert_str_ne(rg_reduce_op_name(all_ops[o]), "unknown");
    ck_assert_str_eq(rg_reduce_op_name(RG_REDUCE_COUNT_NONZERO), "count_nonzero");
    ck_assert_str_eq(rg_reduce_op_name((rg_reduce_op)99), "unknown");
    ck_assert_str_eq(rg_reduce_policy_name(RG_REDUCE_POLICY_MERGE_PATH), "merge-path");
    ck_assert_str_eq(rg_reduce_policy_name(RG_REDUCE_POLICY_PER_SEGMENT), "per-segment");
    ck_assert_str_eq(rg_reduce_policy_name((rg_reduce_policy)99), "unknown");

    static const size_t sizes[][2] = {{0, 0}, {1, 0}, {1000, 0}, {1, 10000000}, {1000000, 3},
                                      {100000, 100000}};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        const char *why = NULL;
        rg_reduce_policy p = rg_reduce_policy_choose(ctx, sizes[s][0], sizes[s][1], &why);
        ck_assert_msg(p == RG_REDUCE_POLICY_PER_SEGMENT || p == RG_REDUCE_POLICY_MERGE_PATH,
                      "choose = %d", (int)p);
        ck_assert_msg(why && *why, "empty why");
        /* The documented rule: OpenMP always merge path (skew-proof); an
         * OpenCL CPU device per-segment (measured fastest there); a GPU
         * merge path whenever there is content. */
        int cpu = rg_context_device_kind(ctx) == RG_DEVICE_CPU;
        if (rg_context_backend(ctx) == RG_BACKEND_OPENMP)
            ck_assert_int_eq(p, RG_REDUCE_POLICY_MERGE_PATH);
        else if (cpu)
            ck_assert_int_eq(p, RG_REDUCE_POLICY_PER_SEGMENT);
        else if (sizes[s][1] > 0)
            ck_assert_int_eq(p, RG_REDUCE_POLICY_MERGE_PATH);
    }
    rg_context_free(ctx);
}
END_TEST

/* rg_segment_reduce fails with want and leaves out (sentinel 7) and used alone. */
static void expect_reduce_fails(rg_context *ctx, rg_array *out, const rg_array *content,
                                const rg_array *offsets, rg_reduce_op op,
                                rg_reduce_policy policy, rg_status want, const char *what)
{
    rg_reduce_policy used = (rg_reduce_policy)77;
    rg_status st = rg_segment_reduce(out, content, offsets, op, policy, &used);
    ck_assert_msg(st == want, "%s: %d (%s), expected %d (%s)", what, (int)st, rg_strerror(st),
                  (int)want, rg_strerror(want));
    if (ctx)
        ck_assert_msg(strlen(rg_context_error(ctx)) > 0, "%s: no message", what);
    ck_assert_msg(used == (rg_reduce_policy)77, "%s: used written on error", what);
    if (out)
        test_expect_filled(out, 7, what);
}

START_TEST(test_reduce_errors)
{
    TEST_CONTEXT(ctx, _i);
    const int64_t xs[5] = {1, 2, 3, 4, 5};
    const int64_t ok[4] = {0, 2, 2, 5}, short_end[4] = {0, 2, 2, 4}, dec[4] = {0, 3, 2, 5},
                  first[4] = {1, 2, 2, 5};
    rg_array *content = test_array_from_i64(ctx, RG_INT32, xs, 5);
    rg_array *offsets = test_array_from_i64(ctx, RG_INT64, ok, 4);
    rg_array *out = test_array_filled(ctx, RG_INT64, 3, 7);
    const rg_reduce_policy p = RG_REDUCE_POLICY_AUTO;

    rg_array *out32 = test_array_filled(ctx, RG_INT32, 3, 7);
    expect_reduce_fails(ctx, out32, content, offsets, RG_REDUCE_SUM, p, RG_EDTYPE,
                        "int32 out for an int32 sum");
    ck_assert_msg(test_contains(rg_context_error(ctx), "int64"), "message: %s",
                  rg_context_error(ctx));
    expect_reduce_fails(ctx, out32, content, offsets, RG_REDUCE_ARGMAX, p, RG_EDTYPE,
                        "int32 out for argmax");
    expect_reduce_fails(ctx, out, content, offsets, RG_REDUCE_ANY, p, RG_EDTYPE,
                        "int64 out for any");
    expect_reduce_fails(ctx, out, content, offsets, RG_REDUCE_MIN, p, RG_EDTYPE,
                        "int64 out for an int32 min");
    rg_array *out_short = test_array_filled(ctx, RG_INT64, 2, 7);
    expect_reduce_fails(ctx, out_short, content, offsets, RG_REDUCE_SUM, p, RG_ESIZE,
                        "out too short");
    rg_array *out_long = test_array_filled(ctx, RG_INT64, 4, 7);
    expect_reduce_fails(ctx, out_long, content, offsets, RG_REDUCE_COUNT, p, RG_ESIZE,
                        "out too long");

    rg_array *bad = test_array_from_i64(ctx, RG_INT64, short_end, 4);
    expect_reduce_fails(ctx, out, content, bad, RG_REDUCE_SUM, p, RG_EOFFSETS,
                        "offsets end before the content");
    ck_assert_msg(test_contains(rg_context_error(ctx), "content length 5"), "message: %s",
                  rg_context_error(ctx));
    rg_array_free(bad);
    bad = test_array_from_i64(ctx, RG_INT32, dec, 4);
    expect_reduce_fails(ctx, out, content, bad, RG_REDUCE_COUNT, p, RG_EOFFSETS,
                        "decreasing offsets");
    rg_array_free(bad);
    bad = test_array_from_i64(ctx, RG_INT64, first, 4);
    expect_reduce_fails(ctx, out, content, bad, RG_REDUCE_PROD, RG_REDUCE_POLICY_MERGE_PATH,
                        RG_EOFFSETS, "offsets[0] = 1");
    rg_array_free(bad);
    bad = test_array_from_i64(ctx, RG_FLOAT64, ok, 4);
    expect_reduce_fails(ctx, out, content, bad, RG_REDUCE_SUM, p, RG_EDTYPE, "float offsets");
    rg_array_free(bad);
    bad = test_array_from_i64(ctx, RG_INT64, ok, 0);
    expect_reduce_fails(ctx, out, content, bad, RG_REDUCE_SUM, p, RG_ESIZE, "empty offsets");
    rg_array_free(bad);

    expect_reduce_fails(ctx, out, content, offsets, (rg_reduce_op)99, p, RG_EINVAL, "op 99");
    expect_reduce_fails(ctx, out, content, offsets, (rg_reduce_op)-1, p, RG_EINVAL, "op -1");
    expect_reduce_fails(ctx, out, content, offsets, RG_REDUCE_SUM, (rg_reduce_policy)99,
                        RG_EINVAL, "policy 99");
    expect_reduce_fails(ctx, out, content, offsets, RG_REDUCE_SUM, (rg_reduce_policy)-1,
                        RG_EINVAL, "policy -1");
    expect_reduce_fails(ctx, NULL, content, offsets, RG_REDUCE_SUM, p, RG_EINVAL, "NULL out");
    expect_reduce_fails(ctx, out, NULL, offsets, RG_REDUCE_SUM, p, RG_EINVAL, "NULL content");
    expect_reduce_fails(NULL, out, content, NULL, RG_REDUCE_SUM, p, RG_EINVAL, "NULL offsets");

    /* Arrays of another context. */
    rg_context *other = test_context(_i);
    rg_array *foreign = test_array_from_i64(other, RG_INT32, xs, 5);
    expect_reduce_fails(ctx, out, foreign, offsets, RG_REDUCE_SUM, p, RG_EINVAL,
                        "content of another context");
    rg_array_free(foreign);
    /* An output that is the content too ([7 7 7], three segments of one). */
    const int64_t ones[4] = {0, 1, 2, 3};
    rg_array *unit = test_array_from_i64(ctx, RG_INT64, ones, 4);
    rg_array *both = test_array_filled(ctx, RG_INT64, 3, 7);
    expect_reduce_fails(ctx, both, both, unit, RG_REDUCE_SUM, p, RG_EINVAL, "out == content");
    ck_assert(test_contains(rg_context_error(ctx), "out is content too"));
    rg_array_free(both);
    rg_array_free(unit);
    /* Offsets of another context: the message reaches this one too. */
    foreign = test_array_from_i64(other, RG_INT64, ok, 4);
    ck_assert_int_eq(rg_offsets_validate(offsets, 4), RG_EOFFSETS); /* an older message */
    expect_reduce_fails(ctx, out, content, foreign, RG_REDUCE_SUM, p, RG_EINVAL,
                        "offsets of another context");
    ck_assert_str_eq(rg_context_error(ctx),
                     "rg_segment_reduce: content and offsets belong to different contexts");
    rg_array_free(foreign);
    rg_context_free(other);

    /* The context still works, and used may be NULL. */
    ck_assert_int_eq(rg_segment_reduce(out, content, offsets, RG_REDUCE_SUM, p, NULL), RG_OK);
    int64_t *got = test_read_i64(out);
    const int64_t want[3] = {3, 0, 12};
    test_expect_i64(got, want, 3, "sum after errors");
    free(got);

    rg_array_free(out_long);
    rg_array_free(out_short);
    rg_array_free(out32);
    rg_array_free(out);
    rg_array_free(offsets);
    rg_array_free(content);
    rg_context_free(ctx);
}
END_TEST

Suite *reduce_suite(void)
{
    Suite *s = test_suite("reduce");

    TCase *tc = test_tcase("values");
    tcase_add_loop_test(tc, test_reduce_tables, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_reduce_values, 0, TEST_NBACKENDS * N_POLICIES);
    tcase_add_loop_test(tc, test_reduce_signed_zeros, 0, TEST_NBACKENDS_GPU_KERNELS * N_POLICIES);
    suite_add_tcase(s, tc);

    tc = test_tcase("small");
    tcase_add_loop_test(tc, test_reduce_small, 0, TEST_NBACKENDS * N_POLICIES);
    tcase_add_loop_test(tc, test_reduce_teams, 0, TEST_NBACKENDS_GPU_KERNELS + 1);
    tcase_add_loop_test(tc, test_reduce_pieces, 0, TEST_NBACKENDS_GPU_KERNELS);
    suite_add_tcase(s, tc);

    tc = test_tcase("windows");
    tcase_add_loop_test(tc, test_reduce_windows, 0, TEST_NBACKENDS_GPU_KERNELS * N_POLICIES);
    tcase_add_loop_test(tc, test_reduce_windows_exact, 0, 2 * N_POLICIES);
    tcase_add_loop_test(tc, test_reduce_lanes_exact, 0, TEST_NBACKENDS_GPU_KERNELS * N_POLICIES);
    tcase_add_loop_test(tc, test_reduce_extreme_long_exact, 0,
                        TEST_NBACKENDS_GPU_KERNELS * N_POLICIES);
    tcase_add_loop_test(tc, test_reduce_lone_lanes, 0, TEST_NBACKENDS * N_POLICIES);
    tcase_add_loop_test(tc, test_reduce_tile_blocks, 0, N_POLICIES);
    tcase_add_loop_test(tc, test_reduce_extreme_limits, 0, TEST_NBACKENDS * N_POLICIES);
    tcase_add_loop_test(tc, test_reduce_logic_tiles, 0, TEST_NBACKENDS * N_POLICIES);
    tcase_add_loop_test(tc, test_reduce_byte_tiles, 0, 2 * N_POLICIES);
    tcase_add_loop_test(tc, test_reduce_word_tiles, 0, N_POLICIES);
    tcase_add_loop_test(tc, test_reduce_dword_tiles, 0, N_POLICIES);
    tcase_add_loop_test(tc, test_reduce_narrow_extremes, 0, TEST_NBACKENDS * N_POLICIES);
    tcase_add_loop_test(tc, test_reduce_regular, 0, N_POLICIES);
    tcase_add_loop_test(tc, test_reduce_int_lanes, 0, TEST_NBACKENDS * N_POLICIES);
    suite_add_tcase(s, tc);

    tc = test_tcase("big");
    tcase_add_loop_test(tc, test_reduce_big, 0, TEST_NBACKENDS_GPU_KERNELS * N_POLICIES);
    tcase_add_loop_test(tc, test_reduce_tiles_streamed, 0, 4);
    tcase_add_loop_test(tc, test_reduce_tiles_streamed_f32, 0, 4);
    tcase_add_loop_test(tc, test_reduce_tiles_streamed_i16, 0, 2);
    tcase_add_loop_test(tc, test_reduce_small_groups, 0, 16);
    suite_add_tcase(s, tc);

    tc = test_tcase("errors");
    tcase_add_loop_test(tc, test_reduce_errors, 0, TEST_NBACKENDS);
    suite_add_tcase(s, tc);
    return s;
}
