/* check_offsets.c — offsets validation, lengths and offsets from lengths on every backend. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static const rg_dtype index_dtypes[2] = {RG_INT32, RG_INT64};

/* Fails unless msg holds every one of the given strings. */
static void expect_message(const char *msg, const char *what, const char *a, const char *b)
{
    ck_assert_msg(test_contains(msg, a), "%s: message should contain \"%s\": \"%s\"", what, a, msg);
    if (b != NULL)
        ck_assert_msg(test_contains(msg, b), "%s: message should contain \"%s\": \"%s\"", what, b, msg);
}

/* rg_offsets_validate on offsets[0 .. n) of dtype. */
static rg_status validate(rg_context *ctx, rg_dtype dtype, const int64_t *off, size_t n,
                          size_t content_length)
{
    rg_array *a = test_array_from_i64(ctx, dtype, off, n);
    rg_status st = rg_offsets_validate(a, content_length);
    rg_array_free(a);
    return st;
}

/* ---- rg_offsets_validate ------------------------------------------------ */

START_TEST(test_validate_ok)
{
    TEST_CONTEXT(ctx, _i);
    const int64_t zero[1] = {0}, empties[3] = {0, 0, 0}, some[4] = {0, 3, 3, 7};
    for (int d = 0; d < 2; d++) {
        rg_dtype dt = index_dtypes[d];
        ck_assert_int_eq(validate(ctx, dt, zero, 1, 0), RG_OK);
        ck_assert_int_eq(validate(ctx, dt, empties, 3, 0), RG_OK);
        ck_assert_int_eq(validate(ctx, dt, some, 4, 7), RG_OK);

        /* Past 2^20 offsets, every distribution. */
        for (int dist = 0; dist < DIST_COUNT; dist++) {
            size_t nsegs = (1u << 20) + 77;
            int64_t *len = test_gen_lengths((test_dist)dist, nsegs, 1000, 11);
            int64_t *off = ref_offsets(len, nsegs);
            rg_status st = validate(ctx, dt, off, nsegs + 1, (size_t)off[nsegs]);
            ck_assert_msg(st == RG_OK, "%s %s: %d %s", rg_dtype_name(dt), test_dist_name((test_dist)dist),
                          (int)st, rg_context_error(ctx));
            free(off);
            free(len);
        }
    }
    /* int64 offsets past 2^32 (nothing needs the content to exist). */
    const int64_t big[3] = {0, 3000000000ll, 5000000000ll};
    ck_assert_int_eq(validate(ctx, RG_INT64, big, 3, (size_t)5000000000ll), RG_OK);
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_validate_bad)
{
    TEST_CONTEXT(ctx, _i);
    for (int d = 0; d < 2; d++) {
        rg_dtype dt = index_dtypes[d];

        const int64_t first[3] = {4242, 5000, 6000};
        ck_assert_int_eq(validate(ctx, dt, first, 3, 6000), RG_EOFFSETS);
        expect_message(rg_context_error(ctx), "first offset not 0", "4242", NULL);

        const int64_t negative[3] = {-1, 0, 5};
        ck_assert_int_eq(validate(ctx, dt, negative, 3, 5), RG_EOFFSETS);
        expect_message(rg_context_error(ctx), "first offset -1", "-1", NULL);

        /* Decreasing at index 13 (97 < 120) and again at 17: the first is named. */
        int64_t dec[20];
        for (int i = 0; i < 20; i++)
            dec[i] = 10 * i;
        dec[13] = 97;
        dec[17] = 5;
        ck_assert_int_eq(validate(ctx, dt, dec, 20, 190), RG_EOFFSETS);
        expect_message(rg_context_error(ctx), "decreasing offsets", "13", "97");

        const int64_t last[3] = {0, 3, 77};
        ck_assert_int_eq(validate(ctx, dt, last, 3, 80), RG_EOFFSETS);
        expect_message(rg_context_error(ctx), "last offset short", "77", "80");
        ck_assert_int_eq(validate(ctx, dt, last, 3, 50), RG_EOFFSETS);
        expect_message(rg_context_error(ctx), "last offset long", "77", "50");
        const int64_t zero[1] = {0};
        ck_assert_int_eq(validate(ctx, dt, zero, 1, 1), RG_EOFFSETS);

        /* Far past 2^20, two bad places: the first one is named. */
        size_t n = (1u << 21) + 1;
        int64_t *big = malloc(n * sizeof *big);
        ck_assert_ptr_nonnull(big);
        for (size_t i = 0; i < n; i++)
            big[i] = (int64_t)i;
        big[1500001] = 1234567;
        big[1800000] = 17;
        ck_assert_int_eq(validate(ctx, dt, big, n, n - 1), RG_EOFFSETS);
        expect_message(rg_context_error(ctx), "big decreasing offsets", "1500001", "1234567");
        free(big);

        /* One bad place (and a later one) at block and thread-part edges of
         * the OpenMP check, which tests blocks of 1024 pairs. */
        size_t m = 70001;
        int64_t *edge = malloc(m * sizeof *edge);
        ck_assert_ptr_nonnull(edge);
        const size_t spots[] = {1, 2, 1023, 1024, 1025, 2047, 2048, 2049, 35000, 35001, 70000};
        for (size_t k = 0; k < sizeof spots / sizeof spots[0]; k++) {
            for (size_t i = 0; i < m; i++)
                edge[i] = 3 * (int64_t)i;
            size_t p = spots[k];
            edge[p] = edge[p - 1] - 1;
            if (p + 3 < m)
                edge[p + 3] = 0;
            char want[32], value[32];
            snprintf(want, sizeof want, "%zu", p);
            snprintf(value, sizeof value, "%lld", (long long)edge[p]);
            ck_assert_int_eq(validate(ctx, dt, edge, m, (size_t)edge[m - 1]), RG_EOFFSETS);
            expect_message(rg_context_error(ctx), "decreasing at a block edge", want, value);
        }

        /* Drops to the dtype's extremes, then increasing: every later value is
         * negative (which also flags the later blocks and thread parts of the
         * OpenMP check, though they hold no bad pair), or the drop from the
         * largest to the smallest value wraps to +1 in unsigned arithmetic. */
        const int64_t lo = dt == RG_INT32 ? INT32_MIN : INT64_MIN;
        const int64_t hi = dt == RG_INT32 ? INT32_MAX : INT64_MAX;
        const size_t drops[] = {1, 2, 1024, 20000, 35001, 69000, 70000};
        for (size_t k = 0; k < sizeof drops / sizeof drops[0]; k++) {
            for (int shape = 0; shape < (drops[k] >= 2 ? 3 : 1); shape++) {
                size_t p = drops[k];
                for (size_t i = 0; i < m; i++)
                    edge[i] = 3 * (int64_t)i;
                if (shape >= 1 && p >= 2)
                    edge[p - 1] = hi; /* still increasing into p - 1 */
                for (size_t i = p; i < m; i++) /* increasing again from the drop */
                    edge[i] = (shape == 2 ? 0 : lo) + (int64_t)(i - p);
                char want[32], value[32];
                snprintf(want, sizeof want, "%zu", p);
                snprintf(value, sizeof value, "%lld", (long long)edge[p]);
                ck_assert_int_eq(validate(ctx, dt, edge, m, 3 * m), RG_EOFFSETS);
                expect_message(rg_context_error(ctx), "drop to an extreme", want, value);
            }
        }
        free(edge);
    }
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_validate_bad_args)
{
    TEST_CONTEXT(ctx, _i);
    const int64_t off[3] = {0, 1, 2};
    const rg_dtype wrong[] = {RG_FLOAT32, RG_FLOAT64, RG_INT16, RG_UINT32, RG_UINT64, RG_INT8, RG_BOOL};
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        rg_status st = validate(ctx, wrong[i], off, 3, 2);
        ck_assert_msg(st == RG_EDTYPE, "%s offsets: %d, expected RG_EDTYPE", rg_dtype_name(wrong[i]), (int)st);
    }
    for (int d = 0; d < 2; d++) {
        rg_array *empty = NULL;
        ck_assert_int_eq(rg_array_create(&empty, ctx, index_dtypes[d], 0), RG_OK);
        ck_assert_int_eq(rg_offsets_validate(empty, 0), RG_ESIZE);
        ck_assert_msg(strlen(rg_context_error(ctx)) > 0, "no message for RG_ESIZE");
        rg_array_free(empty);
    }
    ck_assert_int_eq(rg_offsets_validate(NULL, 0), RG_EINVAL);

    /* A NULL argument is named in the context of another one, instead of
     * leaving an earlier call's message there. */
    rg_array *any = test_array_filled(ctx, RG_INT64, 3, 0);
#define EXPECT_NULL_MSG(call, msg)                                                             \
    do {                                                                                       \
        ck_assert_int_eq(rg_offsets_validate(any, 7), RG_EOFFSETS); /* a message before */     \
        ck_assert_int_eq((call), RG_EINVAL);                                                   \
        ck_assert_str_eq(rg_context_error(ctx), (msg));                                        \
    } while (0)
    EXPECT_NULL_MSG(rg_lengths(any, NULL), "rg_lengths: offsets is NULL");
    EXPECT_NULL_MSG(rg_offsets_from_lengths(any, NULL), "rg_offsets_from_lengths: lengths is NULL");
    EXPECT_NULL_MSG(rg_parents(any, NULL, RG_STRATEGY_AUTO, NULL), "rg_parents: offsets is NULL");
    EXPECT_NULL_MSG(rg_local_index(any, NULL, RG_STRATEGY_AUTO, NULL),
                    "rg_local_index: offsets is NULL");
    EXPECT_NULL_MSG(rg_segment_starts(any, NULL, RG_STRATEGY_AUTO, NULL),
                    "rg_segment_starts: offsets is NULL");
    EXPECT_NULL_MSG(rg_segment_reduce(any, NULL, NULL, RG_REDUCE_SUM, RG_REDUCE_POLICY_AUTO, NULL),
                    "rg_segment_reduce: offsets is NULL");
    EXPECT_NULL_MSG(rg_segment_reduce(NULL, any, NULL, RG_REDUCE_SUM, RG_REDUCE_POLICY_AUTO, NULL),
                    "rg_segment_reduce: offsets is NULL");
    EXPECT_NULL_MSG(rg_offsets_compose(any, NULL, NULL), "rg_offsets_compose: outer is NULL");
    EXPECT_NULL_MSG(rg_offsets_compose(NULL, NULL, any), "rg_offsets_compose: outer is NULL");
#undef EXPECT_NULL_MSG
    rg_array_free(any);
    rg_context_free(ctx);
}
END_TEST

/* ---- rg_lengths and rg_offsets_from_lengths ----------------------------- */

/* Runs rg_lengths and rg_offsets_from_lengths on the given lengths for every
 * in/out dtype pair and compares with the references. */
static void check_round_trip(rg_context *ctx, const int64_t *len, size_t nsegs, const char *what)
{
    int64_t *off = ref_offsets(len, nsegs);
    for (int di = 0; di < 2; di++) {
        for (int dout = 0; dout < 2; dout++) {
            rg_dtype tin = index_dtypes[di], tout = index_dtypes[dout];
            char label[160];

            /* lengths from offsets */
            rg_array *offsets = test_array_from_i64(ctx, tin, off, nsegs + 1);
            rg_array *lengths = test_array_filled(ctx, tout, nsegs, -3);
            rg_status st = rg_lengths(lengths, offsets);
            snprintf(label, sizeof label, "rg_lengths %s -> %s, %s, %zu segments", rg_dtype_name(tin),
                     rg_dtype_name(tout), what, nsegs);
            ck_assert_msg(st == RG_OK, "%s: %d %s", label, (int)st, rg_context_error(ctx));
            int64_t *got = test_read_i64(lengths);
            test_expect_i64(got, len, nsegs, label);
            free(got);
            rg_array_free(lengths);
            rg_array_free(offsets);

            /* offsets from lengths */
            lengths = test_array_from_i64(ctx, tin, len, nsegs);
            offsets = test_array_filled(ctx, tout, nsegs + 1, -3);
            st = rg_offsets_from_lengths(offsets, lengths);
            snprintf(label, sizeof label, "rg_offsets_from_lengths %s -> %s, %s, %zu segments",
                     rg_dtype_name(tin), rg_dtype_name(tout), what, nsegs);
            ck_assert_msg(st == RG_OK, "%s: %d %s", label, (int)st, rg_context_error(ctx));
            got = test_read_i64(offsets);
            test_expect_i64(got, off, nsegs + 1, label);
            free(got);
            /* and they are valid offsets for the content */
            ck_assert_int_eq(rg_offsets_validate(offsets, (size_t)off[nsegs]), RG_OK);
            rg_array_free(offsets);
            rg_array_free(lengths);
        }
    }
    free(off);
}

START_TEST(test_lengths_small)
{
    TEST_CONTEXT(ctx, _i);
    /* Zero segments: offsets [0], no lengths. */
    check_round_trip(ctx, NULL, 0, "zero segments");
    const int64_t one[1] = {5}, empty_one[1] = {0};
    check_round_trip(ctx, one, 1, "one segment");
    check_round_trip(ctx, empty_one, 1, "one empty segment");

    static const size_t sizes[] = {3, 255, 256, 257, 1000, 4099};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (int dist = 0; dist < DIST_COUNT; dist++) {
            int64_t *len = test_gen_lengths((test_dist)dist, sizes[s], 5000, 100 + s);
            check_round_trip(ctx, len, sizes[s], test_dist_name((test_dist)dist));
            free(len);
        }
    }
    rg_context_free(ctx);
}
END_TEST

/* Past 2^20 segments: the OpenMP scan's blocks of 2^16 lengths, dealt out
 * to 1, 2, 3 and 5 threads (more threads than this machine's cores, so that
 * some wait on blocks whose owner lost the CPU and sum them themselves), and
 * ends past 2^62 (each block's end is a word of its own). */
START_TEST(test_lengths_big)
{
    TEST_CONTEXT(ctx, test_backend_plain(_i));
    int omp = rg_context_backend(ctx) == RG_BACKEND_OPENMP;
    size_t nsegs = (1u << 20) + 4321, nwide = 3 * ((size_t)1 << 16) + 17;
    int64_t *shortl = test_gen_lengths(DIST_SHORT, nsegs, 0, 7);
    int64_t *power = test_gen_lengths(DIST_POWER_LAW, nsegs, 1000, 8);
    int64_t *huge = test_gen_lengths(DIST_HUGE, 1001, (1 << 21) + 3, 9);
    int64_t *wide = malloc(nwide * sizeof *wide);
    ck_assert_ptr_nonnull(wide);
    for (size_t i = 0; i < nwide; i++) /* a total within 2^31 of INT64_MAX */
        wide[i] = INT64_MAX / (int64_t)nwide - (int64_t)(i % 3);
    int64_t *want = ref_offsets(wide, nwide);
    ck_assert(want[nwide] > ((int64_t)1 << 62));
    for (int round = 0, nthreads; (nthreads = omp ? test_threads(round) : round == 0) > 0;
         round++) {
        check_round_trip(ctx, shortl, nsegs, "short, big");
        check_round_trip(ctx, power, nsegs, "power-law, big");
        check_round_trip(ctx, huge, 1001, "huge");
        rg_array *lengths = test_array_from_i64(ctx, RG_INT64, wide, nwide);
        rg_array *offsets = test_array_filled(ctx, RG_INT64, nwide + 1, -3);
        ck_assert_msg(rg_offsets_from_lengths(offsets, lengths) == RG_OK, "%s",
                      rg_context_error(ctx));
        int64_t *got = test_read_i64(offsets);
        char what[64];
        snprintf(what, sizeof what, "ends past 2^62, %d threads", nthreads);
        test_expect_i64(got, want, nwide + 1, what);
        free(got);
        rg_array_free(offsets);
        rg_array_free(lengths);
    }
    if (omp)
        test_threads_restore();
    free(want);
    free(wide);
    free(huge);
    free(power);
    free(shortl);
    rg_context_free(ctx);
}
END_TEST

static void expect_from_lengths_fails(rg_context *ctx, rg_dtype tin, const int64_t *len, size_t nsegs,
                                      rg_dtype tout, size_t out_length, rg_status want,
                                      const char *what);

/* Work-groups of 1 to 32 work-items (RAGGED_OPENCL_MAX_GROUP_SIZE) and no cap
 * on their count: the OpenCL scan then has many more chunks than work-items
 * (up to 32 per compute unit), so each work-item of scan_partials carries a
 * run of chunk totals.  Both of the scan's uses: offsets from lengths (a sum,
 * written one place on) and the local index by flood (a max, in place). */
START_TEST(test_scan_small_groups)
{
    static const char *const sizes[] = {"1", "2", "8", "32"};
    test_unsetenv("RAGGED_OPENCL_MAX_GROUPS");
    test_setenv("RAGGED_OPENCL_MAX_GROUP_SIZE", sizes[_i]);
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENCL);
    size_t nsegs = 30000;
    int64_t *len[2] = {test_gen_lengths(DIST_SHORT, nsegs, 0, 31),
                       test_gen_lengths(DIST_POWER_LAW, nsegs, 500, 32)};
    char what[96];
    for (int c = 0; c < 2; c++) {
        snprintf(what, sizeof what, "%s, work-groups of at most %s", c ? "power law" : "short",
                 sizes[_i]);
        check_round_trip(ctx, len[c], nsegs, what);
        int64_t *off = ref_offsets(len[c], nsegs), *want = ref_local_index(off, nsegs);
        size_t nelems = (size_t)off[nsegs];
        rg_array *offsets = test_array_from_i64(ctx, RG_INT64, off, nsegs + 1);
        rg_array *local = test_array_filled(ctx, RG_INT64, nelems, -3);
        ck_assert_msg(rg_local_index(local, offsets, RG_STRATEGY_FLOOD, NULL) == RG_OK, "%s: %s",
                      what, rg_context_error(ctx));
        int64_t *got = test_read_i64(local);
        test_expect_i64(got, want, nelems, what);
        free(got);
        rg_array_free(local);
        rg_array_free(offsets);
        /* The group reductions of the offsets check and of the lengths'
         * total (flat on CPU devices) at this size: of two bad places, the
         * first is named. */
        size_t at = nsegs / 3 + (size_t)_i;
        char index[32];
        off[at] = off[at - 1] - 1;
        off[nsegs / 2] = 0;
        offsets = test_array_from_i64(ctx, RG_INT64, off, nsegs + 1);
        ck_assert_int_eq(rg_offsets_validate(offsets, nelems), RG_EOFFSETS);
        snprintf(index, sizeof index, "%zu", at);
        expect_message(rg_context_error(ctx), what, index, NULL);
        rg_array_free(offsets);
        len[c][at] = -1;
        len[c][nsegs / 2] = -2;
        expect_from_lengths_fails(ctx, RG_INT64, len[c], nsegs, RG_INT64, nsegs + 1, RG_EINVAL,
                                  what);
        snprintf(index, sizeof index, "lengths[%zu]", at);
        expect_message(rg_context_error(ctx), what, index, NULL);
        free(want);
        free(off);
        free(len[c]);
    }
    rg_context_free(ctx);
}
END_TEST

/* int64 values past 2^31 in and out, and int32 lengths of a big int64 total. */
START_TEST(test_lengths_wide_values)
{
    TEST_CONTEXT(ctx, _i);
    const int64_t off[3] = {0, 2000000000ll, 4000000000ll};
    const int64_t len[2] = {2000000000ll, 2000000000ll};

    rg_array *offsets = test_array_from_i64(ctx, RG_INT64, off, 3);
    rg_array *l64 = test_array_filled(ctx, RG_INT64, 2, -3);
    ck_assert_int_eq(rg_lengths(l64, offsets), RG_OK);
    int64_t *got = test_read_i64(l64);
    test_expect_i64(got, len, 2, "int64 lengths of wide offsets");
    free(got);

    rg_array *l32 = test_array_from_i64(ctx, RG_INT32, len, 2);
    rg_array *back = test_array_filled(ctx, RG_INT64, 3, -3);
    ck_assert_int_eq(rg_offsets_from_lengths(back, l64), RG_OK);
    got = test_read_i64(back);
    test_expect_i64(got, off, 3, "int64 offsets from wide lengths");
    free(got);
    ck_assert_int_eq(rg_offsets_from_lengths(back, l32), RG_OK);
    got = test_read_i64(back);
    test_expect_i64(got, off, 3, "int64 offsets from int32 lengths with an int64 total");
    free(got);

    /* The documented rule: an int32 output is refused when the content length
     * passes INT32_MAX, even if each length would fit; the output is untouched. */
    rg_array_free(l32);
    l32 = test_array_filled(ctx, RG_INT32, 2, -3);
    rg_status st = rg_lengths(l32, offsets);
    ck_assert_msg(st == RG_EOVERFLOW, "int32 lengths of content 4e9: %d (%s)", (int)st,
                  rg_strerror(st));
    ck_assert_ptr_nonnull(strstr(rg_context_error(ctx), "int32"));
    test_expect_filled(l32, -3, "int32 lengths refused");

    rg_array_free(back);
    rg_array_free(l32);
    rg_array_free(l64);
    rg_array_free(offsets);
    rg_context_free(ctx);
}
END_TEST

/* A total of exactly INT32_MAX / INT64_MAX still fits its offsets. */
START_TEST(test_offsets_total_limits)
{
    TEST_CONTEXT(ctx, _i);
    int64_t *got;
    rg_status st;
    const int64_t l_i32max[2] = {INT32_MAX - 5, 5}, o_i32max[3] = {0, INT32_MAX - 5, INT32_MAX};
    rg_array *in = test_array_from_i64(ctx, RG_INT32, l_i32max, 2);
    rg_array *o32 = test_array_filled(ctx, RG_INT32, 3, -3);
    ck_assert_int_eq(rg_offsets_from_lengths(o32, in), RG_OK);
    got = test_read_i64(o32);
    test_expect_i64(got, o_i32max, 3, "int32 offsets ending at INT32_MAX");
    free(got);
    rg_array_free(in);

    const int64_t l_i64max[1] = {INT64_MAX}, o_i64max[2] = {0, INT64_MAX};
    in = test_array_from_i64(ctx, RG_INT64, l_i64max, 1);
    rg_array *o64 = test_array_filled(ctx, RG_INT64, 2, -3);
    st = rg_offsets_from_lengths(o64, in);
    ck_assert_msg(st == RG_OK, "lengths [INT64_MAX] -> int64 offsets: %d (%s) %s", (int)st, rg_strerror(st),
                  rg_context_error(ctx));
    got = test_read_i64(o64);
    test_expect_i64(got, o_i64max, 2, "int64 offsets ending at INT64_MAX");
    free(got);
    rg_array_free(in);

    rg_array_free(o64);
    rg_array_free(o32);
    rg_context_free(ctx);
}
END_TEST

/* Lengths of 2^51 and more among many small ones: the sums are exact and a
 * negative length after them is still found (the OpenMP backend sums chunks
 * of small lengths in vectors and walks the others one by one). */
START_TEST(test_offsets_huge_lengths)
{
    TEST_CONTEXT(ctx, _i);
    const size_t n = 3 * 4096 + 77;
    int64_t *len = test_gen_lengths(DIST_SHORT, n, 0, 11), *want = malloc((n + 1) * sizeof *want);
    ck_assert_ptr_nonnull(want);
    len[5] = (int64_t)1 << 51;
    len[4096 + 100] = ((int64_t)1 << 61) + 3;
    len[n - 1] = ((int64_t)1 << 60) - 1;
    want[0] = 0;
    for (size_t i = 0; i < n; i++)
        want[i + 1] = want[i] + len[i];
    rg_array *in = test_array_from_i64(ctx, RG_INT64, len, n);
    rg_array *out = test_array_filled(ctx, RG_INT64, n + 1, -3);
    rg_status st = rg_offsets_from_lengths(out, in);
    ck_assert_msg(st == RG_OK, "huge lengths: %d (%s) %s", (int)st, rg_strerror(st),
                  rg_context_error(ctx));
    int64_t *got = test_read_i64(out);
    test_expect_i64(got, want, n + 1, "offsets of huge lengths");
    free(got);
    rg_array_free(out);
    rg_array_free(in);

    /* A negative length in the chunk after a huge one, and one in the same chunk. */
    const size_t bad_at[2] = {2 * 4096 + 1, 4096 + 101};
    for (int k = 0; k < 2; k++) {
        len[bad_at[k]] = -1;
        expect_from_lengths_fails(ctx, RG_INT64, len, n, RG_INT64, n + 1, RG_EINVAL,
                                  "negative length after a huge one");
        ck_assert_ptr_nonnull(strstr(rg_context_error(ctx), k == 0 ? "lengths[8193]" : "lengths[4197]"));
        len[bad_at[k]] = 1;
    }
    /* Huge lengths that add up past INT64_MAX in one chunk. */
    len[4096 + 200] = (int64_t)1 << 62;
    len[4096 + 201] = (int64_t)1 << 62;
    expect_from_lengths_fails(ctx, RG_INT64, len, n, RG_INT64, n + 1, RG_EOVERFLOW,
                              "huge lengths past INT64_MAX");
    free(want);
    free(len);
    rg_context_free(ctx);
}
END_TEST

/* rg_offsets_from_lengths(out, lengths) must fail with want and leave out alone. */
static void expect_from_lengths_fails(rg_context *ctx, rg_dtype tin, const int64_t *len, size_t nsegs,
                                      rg_dtype tout, size_t out_length, rg_status want, const char *what)
{
    rg_array *lengths = test_array_from_i64(ctx, tin, len, nsegs);
    rg_array *out = test_array_filled(ctx, tout, out_length, -3);
    rg_status st = rg_offsets_from_lengths(out, lengths);
    ck_assert_msg(st == want, "%s (%s -> %s): %d (%s), expected %d (%s)", what, rg_dtype_name(tin),
                  rg_dtype_name(tout), (int)st, rg_strerror(st), (int)want, rg_strerror(want));
    ck_assert_msg(strlen(rg_context_error(ctx)) > 0, "%s: no message", what);
    test_expect_filled(out, -3, what);
    rg_array_free(out);
    rg_array_free(lengths);
}

START_TEST(test_from_lengths_errors)
{
    TEST_CONTEXT(ctx, _i);
    const int64_t neg[3] = {3, -1, 2};
    for (int di = 0; di < 2; di++)
        for (int dout = 0; dout < 2; dout++)
            expect_from_lengths_fails(ctx, index_dtypes[di], neg, 3, index_dtypes[dout], 4, RG_EINVAL,
                                      "negative length");

    /* A negative length far into a big array. */
    size_t n = (1u << 20) + 99;
    int64_t *big = test_gen_lengths(DIST_SHORT, n, 0, 5);
    big[n - 50] = -2;
    expect_from_lengths_fails(ctx, RG_INT32, big, n, RG_INT64, n + 1, RG_EINVAL, "late negative length");
    free(big);

    const int64_t half[2] = {1ll << 30, 1ll << 30};
    expect_from_lengths_fails(ctx, RG_INT64, half, 2, RG_INT32, 3, RG_EOVERFLOW, "total 2^31");
    const int64_t i32[2] = {INT32_MAX, 1};
    expect_from_lengths_fails(ctx, RG_INT32, i32, 2, RG_INT32, 3, RG_EOVERFLOW, "total INT32_MAX + 1");
    const int64_t i64[2] = {INT64_MAX, 1};
    expect_from_lengths_fails(ctx, RG_INT64, i64, 2, RG_INT64, 3, RG_EOVERFLOW, "total INT64_MAX + 1");
    const int64_t two63[2] = {(int64_t)1 << 62, (int64_t)1 << 62};
    expect_from_lengths_fails(ctx, RG_INT64, two63, 2, RG_INT64, 3, RG_EOVERFLOW, "total 2^63");

    /* 2^20 lengths of 2^44 add up to 2^64, which wraps to 0 unless saturated. */
    n = 1u << 20;
    int64_t *wrap = malloc(n * sizeof *wrap);
    ck_assert_ptr_nonnull(wrap);
    for (size_t i = 0; i < n; i++)
        wrap[i] = (int64_t)1 << 44;
    expect_from_lengths_fails(ctx, RG_INT64, wrap, n, RG_INT64, n + 1, RG_EOVERFLOW, "total 2^64");
    free(wrap);

    /* Wrong output length, wrong dtypes. */
    const int64_t ok[3] = {1, 2, 3};
    expect_from_lengths_fails(ctx, RG_INT64, ok, 3, RG_INT64, 3, RG_ESIZE, "offsets of nsegs elements");
    expect_from_lengths_fails(ctx, RG_INT64, ok, 3, RG_INT64, 5, RG_ESIZE, "offsets of nsegs + 2 elements");
    expect_from_lengths_fails(ctx, RG_INT64, ok, 0, RG_INT64, 0, RG_ESIZE, "empty offsets for zero lengths");
    expect_from_lengths_fails(ctx, RG_INT64, ok, 3, RG_FLOAT32, 4, RG_EDTYPE, "float32 offsets");
    expect_from_lengths_fails(ctx, RG_INT64, ok, 3, RG_UINT64, 4, RG_EDTYPE, "uint64 offsets");
    expect_from_lengths_fails(ctx, RG_FLOAT64, ok, 3, RG_INT64, 4, RG_EDTYPE, "float64 lengths");
    expect_from_lengths_fails(ctx, RG_INT16, ok, 3, RG_INT32, 4, RG_EDTYPE, "int16 lengths");

    rg_array *lengths = test_array_from_i64(ctx, RG_INT64, ok, 3);
    ck_assert_int_eq(rg_offsets_from_lengths(NULL, lengths), RG_EINVAL);
    rg_array *out = test_array_filled(ctx, RG_INT64, 4, -3);
    ck_assert_int_eq(rg_offsets_from_lengths(out, NULL), RG_EINVAL);
    test_expect_filled(out, -3, "NULL lengths");
    rg_array_free(out);
    rg_array_free(lengths);
    rg_context_free(ctx);
}
END_TEST

/* rg_lengths(out, offsets) must fail with want and leave out alone. */
static void expect_lengths_fails(rg_context *ctx, rg_dtype tin, const int64_t *off, size_t noff, rg_dtype tout,
                                 size_t out_length, rg_status want, const char *what)
{
    rg_array *offsets = test_array_from_i64(ctx, tin, off, noff);
    rg_array *out = test_array_filled(ctx, tout, out_length, -3);
    rg_status st = rg_lengths(out, offsets);
    ck_assert_msg(st == want, "%s (%s -> %s): %d (%s), expected %d (%s)", what, rg_dtype_name(tin),
                  rg_dtype_name(tout), (int)st, rg_strerror(st), (int)want, rg_strerror(want));
    ck_assert_msg(strlen(rg_context_error(ctx)) > 0, "%s: no message", what);
    test_expect_filled(out, -3, what);
    rg_array_free(out);
    rg_array_free(offsets);
}

START_TEST(test_lengths_errors)
{
    TEST_CONTEXT(ctx, _i);
    for (int di = 0; di < 2; di++) {
        for (int dout = 0; dout < 2; dout++) {
            rg_dtype tin = index_dtypes[di], tout = index_dtypes[dout];
            const int64_t first[4] = {2, 3, 4, 5}, dec[4] = {0, 5, 4, 9};
            expect_lengths_fails(ctx, tin, first, 4, tout, 3, RG_EOFFSETS, "first offset not 0");
            expect_lengths_fails(ctx, tin, dec, 4, tout, 3, RG_EOFFSETS, "decreasing offsets");
            expect_message(rg_context_error(ctx), "decreasing offsets", "2", "4");
            const int64_t ok[4] = {0, 1, 1, 4};
            expect_lengths_fails(ctx, tin, ok, 4, tout, 2, RG_ESIZE, "lengths of nsegs - 1");
            expect_lengths_fails(ctx, tin, ok, 4, tout, 4, RG_ESIZE, "lengths of nsegs + 1");
            expect_lengths_fails(ctx, tin, ok, 0, tout, 0, RG_ESIZE, "empty offsets");
        }
    }
    const int64_t ok[4] = {0, 1, 1, 4};
    expect_lengths_fails(ctx, RG_INT64, ok, 4, RG_FLOAT32, 3, RG_EDTYPE, "float32 lengths");
    expect_lengths_fails(ctx, RG_INT64, ok, 4, RG_UINT32, 3, RG_EDTYPE, "uint32 lengths");
    expect_lengths_fails(ctx, RG_FLOAT32, ok, 4, RG_INT64, 3, RG_EDTYPE, "float32 offsets");

    /* A length past INT32_MAX does not fit int32 lengths. */
    const int64_t wide[3] = {0, 5, 5 + 3000000000ll};
    expect_lengths_fails(ctx, RG_INT64, wide, 3, RG_INT32, 2, RG_EOVERFLOW, "length 3e9 into int32");

    rg_array *offsets = test_array_from_i64(ctx, RG_INT64, ok, 4);
    ck_assert_int_eq(rg_lengths(NULL, offsets), RG_EINVAL);
    rg_array *out = test_array_filled(ctx, RG_INT64, 3, -3);
    ck_assert_int_eq(rg_lengths(out, NULL), RG_EINVAL);
    test_expect_filled(out, -3, "NULL offsets");
    /* And the context still computes afterwards. */
    ck_assert_int_eq(rg_lengths(out, offsets), RG_OK);
    int64_t *got = test_read_i64(out);
    const int64_t want[3] = {1, 0, 3};
    test_expect_i64(got, want, 3, "lengths after errors");
    free(got);
    rg_array_free(out);
    rg_array_free(offsets);
    rg_context_free(ctx);
}
END_TEST

/* ---- offsets that passed a check are remembered until they change ------- */

/* Ways to change an array through the library; each leaves the offsets
 * [0 2 5 5 9] invalid (or with another last offset, see known_last). */
enum { MUT_WRITE, MUT_FILL, MUT_COPY, MUT_SCALAR_ADD, MUT_SCALAR_MUL, MUT_LENGTHS, MUT_PARENTS,
       MUT_LOCAL, MUT_REDUCE, MUT_NONZERO_INTO, MUT_FROM_LENGTHS, MUT_COMPOSE, MUT_NESTED,
       MUT_COUNT };

/* Changes off (5 elements of dtype dt) in way m; returns the last offset it
 * leaves when the result is valid offsets, else -1. */
static int64_t mutate(rg_context *ctx, rg_array *off, rg_dtype dt, int m)
{
    rg_status st = RG_OK;
    int64_t last = -1;
    const int64_t src6[6] = {0, 3, 3, 4, 8, 9}, src_ones[6] = {0, 1, 2, 3, 4, 5};
    const int64_t src_one[3] = {0, 0, 5}, src_two[3] = {0, 3, 5};
    rg_array *a = NULL, *b = NULL;
    switch (m) {
    case MUT_WRITE: { /* [0 2 1 5 9] */
        int64_t one = 1;
        void *v = test_pack(dt, &one, 1);
        st = rg_array_write(off, 2, v, 1);
        free(v);
        break;
    }
    case MUT_FILL: { /* [3 3 3 3 3] */
        int64_t three = 3;
        void *v = test_pack(dt, &three, 1);
        st = rg_array_fill(off, v);
        free(v);
        break;
    }
    case MUT_COPY: { /* [0 4 3 5 9] */
        const int64_t bad[5] = {0, 4, 3, 5, 9};
        a = test_array_from_i64(ctx, dt, bad, 5);
        st = rg_array_copy(off, a);
        break;
    }
    case MUT_SCALAR_ADD: { /* [1 3 6 6 10] */
        int64_t one = 1;
        void *v = test_pack(dt, &one, 1);
        st = rg_array_scalar(off, RG_ARITH_ADD, v);
        free(v);
        break;
    }
    case MUT_SCALAR_MUL: { /* [0 -2 -5 -5 -9] */
        int64_t minus = -1;
        void *v = test_pack(dt, &minus, 1);
        st = rg_array_scalar(off, RG_ARITH_MUL, v);
        free(v);
        break;
    }
    case MUT_LENGTHS: /* [3 0 1 4 1] */
        a = test_array_from_i64(ctx, RG_INT64, src6, 6);
        st = rg_lengths(off, a);
        break;
    case MUT_PARENTS: /* [1 1 1 1 1] */
        a = test_array_from_i64(ctx, RG_INT64, src_one, 3);
        st = rg_parents(off, a, RG_STRATEGY_AUTO, NULL);
        break;
    case MUT_LOCAL: /* [0 1 2 0 1] */
        a = test_array_from_i64(ctx, RG_INT64, src_two, 3);
        st = rg_local_index(off, a, RG_STRATEGY_AUTO, NULL);
        break;
    case MUT_REDUCE: { /* sums [0 5 1 7 7], as int64 only */
        if (dt != RG_INT64)
            return -2;
        const int64_t content[5] = {0, 5, 1, 7, 7};
        a = test_array_from_i64(ctx, RG_INT64, src_ones, 6);
        b = test_array_from_i64(ctx, RG_INT64, content, 5);
        st = rg_segment_reduce(off, b, a, RG_REDUCE_SUM, RG_REDUCE_POLICY_AUTO, NULL);
        break;
    }
    case MUT_NONZERO_INTO: { /* [1 3 4 5 9], int64 only */
        if (dt != RG_INT64)
            return -2;
        const int64_t x[5] = {0, 3, 0, 1, 1}, shape[1] = {5};
        int64_t nnz = 0;
        a = test_array_from_i64(ctx, RG_INT32, x, 5);
        st = rg_nonzero_into(off, &nnz, a, shape, 1);
        ck_assert_msg(st != RG_OK || nnz == 3, "nnz %lld", (long long)nnz);
        break;
    }
    case MUT_FROM_LENGTHS: { /* valid: [0 1 1 4 6] */
        const int64_t len[4] = {1, 0, 3, 2};
        a = test_array_from_i64(ctx, RG_INT64, len, 4);
        st = rg_offsets_from_lengths(off, a);
        last = 6;
        break;
    }
    case MUT_COMPOSE: { /* valid: inner[outer[i]] = [0 2 3 3 12] */
        const int64_t outer[5] = {0, 1, 2, 2, 4}, inner[5] = {0, 2, 3, 10, 12};
        a = test_array_from_i64(ctx, RG_INT64, outer, 5);
        b = test_array_from_i64(ctx, RG_INT64, inner, 5);
        st = rg_offsets_compose(off, a, b);
        last = 12;
        break;
    }
    case MUT_NESTED: { /* valid: the same composition through rg_nested_offsets */
        const int64_t outer[5] = {0, 1, 2, 2, 4}, inner[5] = {0, 2, 3, 10, 11};
        a = test_array_from_i64(ctx, RG_INT64, outer, 5);
        b = test_array_from_i64(ctx, RG_INT64, inner, 5);
        const rg_array *levels[2] = {a, b};
        st = rg_nested_offsets(off, levels, 2, 0, 2);
        last = 11;
        break;
    }
    }
    ck_assert_msg(st == RG_OK, "change %d of %s offsets: %d %s", m, rg_dtype_name(dt), (int)st,
                  rg_context_error(ctx));
    rg_array_free(a);
    rg_array_free(b);
    return last;
}

START_TEST(test_known_offsets_change)
{
    TEST_CONTEXT(ctx, _i);
    const int64_t good[5] = {0, 2, 5, 5, 9}, want[9] = {0, 0, 1, 1, 1, 3, 3, 3, 3};
    for (int d = 0; d < 2; d++) {
        rg_dtype dt = index_dtypes[d];
        for (int m = 0; m < MUT_COUNT; m++) {
            rg_array *off = test_array_from_i64(ctx, dt, good, 5);
            rg_array *out = test_array_filled(ctx, RG_INT64, 9, -7);
            /* Checked twice: the second call finds them known. */
            for (int twice = 0; twice < 2; twice++) {
                ck_assert_int_eq(rg_parents(out, off, RG_STRATEGY_AUTO, NULL), RG_OK);
                int64_t *got = test_read_i64(out);
                test_expect_i64(got, want, 9, "parents of known offsets");
                free(got);
            }
            ck_assert_int_eq(rg_offsets_validate(off, 8), RG_EOFFSETS);
            ck_assert_int_eq(rg_offsets_validate(off, 9), RG_OK);
            ck_assert_int_eq(rg_array_fill(out, &(int64_t){-7}), RG_OK);

            int64_t last = mutate(ctx, off, dt, m);
            if (last == -2) { /* not for this dtype */
                rg_array_free(out);
                rg_array_free(off);
                continue;
            }
            /* Invalid now: refused, with out untouched.  Valid with another
             * last offset: out's length no longer matches. */
            rg_status st = rg_parents(out, off, RG_STRATEGY_AUTO, NULL);
            ck_assert_msg(st == (last < 0 ? RG_EOFFSETS : RG_ESIZE),
                          "change %d of %s offsets: rg_parents gave %d (%s)", m,
                          rg_dtype_name(dt), (int)st, rg_context_error(ctx));
            test_expect_filled(out, -7, "parents after the offsets changed");
            if (last >= 0) {
                ck_assert_int_eq(rg_offsets_validate(off, (size_t)last), RG_OK);
                ck_assert_int_eq(rg_offsets_validate(off, 9), RG_EOFFSETS);
                rg_array *fit = test_array_filled(ctx, RG_INT64, (size_t)last, -7);
                ck_assert_int_eq(rg_parents(fit, off, RG_STRATEGY_AUTO, NULL), RG_OK);
                int64_t *o = test_read_i64(off);
                int64_t *p = ref_parents(o, 4), *got = test_read_i64(fit);
                test_expect_i64(got, p, (size_t)last, "parents of the changed offsets");
                free(got);
                free(p);
                free(o);
                rg_array_free(fit);
            }
            rg_array_free(out);
            rg_array_free(off);
        }
    }
    rg_context_free(ctx);
}
END_TEST

/* Offsets that failed the check are checked again (and pass once repaired);
 * a list's offsets stay right through its edits. */
START_TEST(test_known_offsets_repair_and_lists)
{
    TEST_CONTEXT(ctx, _i);
    const int64_t bad[4] = {0, 4, 2, 6};
    rg_array *off = test_array_from_i64(ctx, RG_INT64, bad, 4);
    rg_array *out = test_array_filled(ctx, RG_INT32, 6, -7);
    for (int twice = 0; twice < 2; twice++)
        ck_assert_int_eq(rg_local_index(out, off, RG_STRATEGY_AUTO, NULL), RG_EOFFSETS);
    test_expect_filled(out, -7, "local index of bad offsets");
    ck_assert_int_eq(rg_array_write(off, 1, &(int64_t){1}, 1), RG_OK);
    ck_assert_int_eq(rg_local_index(out, off, RG_STRATEGY_AUTO, NULL), RG_OK);
    const int64_t want[6] = {0, 0, 0, 1, 2, 3};
    int64_t *got = test_read_i64(out);
    test_expect_i64(got, want, 6, "local index once repaired");
    free(got);
    rg_array_free(out);
    rg_array_free(off);

    rg_list *l = NULL;
    const int32_t items[3] = {1, 2, 3};
    ck_assert_int_eq(rg_list_from_item_size(&l, ctx, RG_INT32, items, 3, 1), RG_OK);
    for (int step = 0; step < 4; step++) {
        size_t n = rg_list_nelems(l);
        rg_array *p = test_array_filled(ctx, RG_INT64, n, -1);
        ck_assert_int_eq(rg_parents(p, rg_list_offsets(l), RG_STRATEGY_AUTO, NULL), RG_OK);
        if (n > 0) { /* a shorter output is refused: the new last offset counts */
            rg_array *shorter = test_array_filled(ctx, RG_INT64, n - 1, -1);
            ck_assert_int_eq(rg_parents(shorter, rg_list_offsets(l), RG_STRATEGY_AUTO, NULL),
                             RG_ESIZE);
            rg_array_free(shorter);
        }
        int64_t *o = test_read_i64(rg_list_offsets(l));
        int64_t *ref = ref_parents(o, rg_list_nitems(l)), *pg = test_read_i64(p);
        test_expect_i64(pg, ref, n, "parents of a list's offsets");
        free(pg);
        free(ref);
        free(o);
        rg_array_free(p);
        if (step == 0)
            ck_assert_int_eq(rg_list_append(l, items, 3), RG_OK);
        else if (step == 1)
            ck_assert_int_eq(rg_list_delete(l, 0), RG_OK);
        else
            ck_assert_int_eq(rg_list_insert(l, 1, items, 2), RG_OK);
    }
    rg_list_free(l);
    rg_context_free(ctx);
}
END_TEST

Suite *offsets_suite(void)
{
    Suite *s = test_suite("offsets");

    TCase *tc = test_tcase("validate");
    tcase_add_loop_test(tc, test_validate_ok, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_validate_bad, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_validate_bad_args, 0, TEST_NBACKENDS);
    suite_add_tcase(s, tc);

    tc = test_tcase("lengths");
    tcase_add_loop_test(tc, test_lengths_small, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_lengths_big, 0, TEST_NBACKENDS_GPU_KERNELS);
    tcase_add_loop_test(tc, test_scan_small_groups, 0, 4);
    tcase_add_loop_test(tc, test_lengths_wide_values, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_offsets_huge_lengths, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_offsets_total_limits, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_lengths_errors, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_from_lengths_errors, 0, TEST_NBACKENDS);
    suite_add_tcase(s, tc);

    tc = test_tcase("known");
    tcase_add_loop_test(tc, test_known_offsets_change, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_known_offsets_repair_and_lists, 0, TEST_NBACKENDS);
    suite_add_tcase(s, tc);

    return s;
}
