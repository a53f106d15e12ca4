/* check_nested.c — nested ragged arrays: validation, composing levels, parents and local index across depths. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static const rg_dtype index_dtypes[2] = {RG_INT32, RG_INT64};

/* [[[1,2,3],[4,5]],[[6,7,8,9],[10],[11,12],[13,14,15]]] */
static const int64_t outer_off[3] = {0, 2, 6};
static const int64_t inner_off[7] = {0, 3, 5, 9, 10, 12, 15};

static void expect_array(const rg_array *a, const int64_t *want, size_t n, const char *what)
{
    ck_assert_msg(rg_array_length(a) == n, "%s: length %zu, expected %zu", what, rg_array_length(a), n);
    int64_t *got = test_read_i64(a);
    test_expect_i64(got, want, n, what);
    free(got);
}

START_TEST(test_nested_example)
{
    TEST_CONTEXT(ctx, _i);
    for (int t = 0; t < 4; t++) {
        rg_dtype to = index_dtypes[t & 1], ti = index_dtypes[t >> 1];
        const rg_array *levels[2] = {test_array_from_i64(ctx, to, outer_off, 3),
                                     test_array_from_i64(ctx, ti, inner_off, 7)};
        ck_assert_int_eq(rg_nested_validate(levels, 2, 15), RG_OK);
        ck_assert_int_eq(rg_nested_validate(levels, 2, 14), RG_EOFFSETS);
        ck_assert(test_contains(rg_context_error(ctx), "15"));

        const int64_t flat[3] = {0, 5, 15};
        rg_array *out = test_array_filled(ctx, RG_INT64, 3, -1);
        ck_assert_int_eq(rg_offsets_compose(out, levels[0], levels[1]), RG_OK);
        expect_array(out, flat, 3, "compose");
        rg_array_free(out);
        out = test_array_filled(ctx, RG_INT32, 3, -1);
        ck_assert_int_eq(rg_nested_offsets(out, levels, 2, 0, 2), RG_OK);
        expect_array(out, flat, 3, "nested offsets 0 -> 2");
        ck_assert_int_eq(rg_nested_offsets(out, levels, 2, 0, 1), RG_OK);
        expect_array(out, outer_off, 3, "nested offsets 0 -> 1");
        rg_array_free(out);

        /* the outer-list id and the position in the outer list of every content element */
        const int64_t p02[15] = {0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
        const int64_t l02[15] = {0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
        const int64_t p12[15] = {0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 4, 4, 5, 5, 5};
        const int64_t p01[6] = {0, 0, 1, 1, 1, 1}, l01[6] = {0, 1, 0, 1, 2, 3};
        out = test_array_filled(ctx, RG_INT64, 15, -1);
        rg_strategy used = RG_STRATEGY_AUTO;
        ck_assert_int_eq(rg_nested_parents(out, levels, 2, 0, 2, RG_STRATEGY_AUTO, &used), RG_OK);
        ck_assert(used != RG_STRATEGY_AUTO);
        expect_array(out, p02, 15, "parents 0 <- 2");
        ck_assert_int_eq(rg_nested_local_index(out, levels, 2, 0, 2, RG_STRATEGY_FLOOD, &used), RG_OK);
        ck_assert_int_eq(used, RG_STRATEGY_FLOOD);
        expect_array(out, l02, 15, "local index 0 <- 2");
        ck_assert_int_eq(rg_nested_parents(out, levels, 2, 1, 2, RG_STRATEGY_BSEARCH, NULL), RG_OK);
        expect_array(out, p12, 15, "parents 1 <- 2");
        rg_array_free(out);
        out = test_array_filled(ctx, RG_INT32, 6, -1);
        ck_assert_int_eq(rg_nested_parents(out, levels, 2, 0, 1, RG_STRATEGY_MERGE_PATH, NULL), RG_OK);
        expect_array(out, p01, 6, "parents 0 <- 1");
        ck_assert_int_eq(rg_nested_local_index(out, levels, 2, 0, 1, RG_STRATEGY_PER_SEGMENT, NULL), RG_OK);
        expect_array(out, l01, 6, "local index 0 <- 1");
        rg_array_free(out);
        rg_array_free((rg_array *)levels[0]);
        rg_array_free((rg_array *)levels[1]);
    }
    rg_context_free(ctx);
}
END_TEST

/* Random 3- and 4-level arrays with empty lists at every level, against
 * offsets composed on the host and the flat references. */
START_TEST(test_nested_random)
{
    TEST_CONTEXT(ctx, test_backend_plain(_i));
    uint64_t seed = 77;
    for (int round = 0; round < 6; round++) {
        size_t nlevels = 3 + (size_t)(round & 1);
        size_t count = 1 + (size_t)(test_rand(&seed) % 50); /* items of depth 0 */
        if (round == 5)
            count = 20000; /* big enough for the parallel paths */
        int64_t *host[4];
        size_t items[5];
        items[0] = count;
        for (size_t d = 0; d < nlevels; d++) {
            test_dist dist = (test_dist)((round + d) % DIST_COUNT);
            int64_t *len = test_gen_lengths(dist, items[d], 40, seed + d);
            host[d] = ref_offsets(len, items[d]);
            items[d + 1] = (size_t)host[d][items[d]];
            free(len);
        }
        const rg_array *levels[4];
        for (size_t d = 0; d < nlevels; d++)
            levels[d] = test_array_from_i64(ctx, index_dtypes[(round + d) & 1], host[d], items[d] + 1);
        ck_assert_int_eq(rg_nested_validate(levels, nlevels, items[nlevels]), RG_OK);
        for (size_t outer = 0; outer < nlevels; outer++)
            for (size_t inner = outer + 1; inner <= nlevels; inner++) {
                /* host composition: offsets from depth outer into depth inner */
                int64_t *c = malloc((items[outer] + 1) * sizeof *c);
                for (size_t i = 0; i <= items[outer]; i++) {
                    int64_t v = (int64_t)i;
                    for (size_t d = outer; d < inner; d++)
                        v = host[d][v];
                    c[i] = v;
                }
                char what[96];
                snprintf(what, sizeof what, "round %d, depth %zu -> %zu", round, outer, inner);
                rg_array *o = test_array_filled(ctx, RG_INT64, items[outer] + 1, -1);
                ck_assert_int_eq(rg_nested_offsets(o, levels, nlevels, outer, inner), RG_OK);
                expect_array(o, c, items[outer] + 1, what);
                rg_array_free(o);
                int64_t *rp = ref_parents(c, items[outer]), *rl = ref_local_index(c, items[outer]);
                rg_array *out = test_array_filled(ctx, RG_INT64, items[inner], -1);
                ck_assert_int_eq(rg_nested_parents(out, levels, nlevels, outer, inner, RG_STRATEGY_AUTO, NULL), RG_OK);
                expect_array(out, rp, items[inner], what);
                ck_assert_int_eq(rg_nested_local_index(out, levels, nlevels, outer, inner, RG_STRATEGY_AUTO, NULL), RG_OK);
                expect_array(out, rl, items[inner], what);
                rg_array_free(out);
                free(rp);
                free(rl);
                free(c);
            }
        for (size_t d = 0; d < nlevels; d++) {
            rg_array_free((rg_array *)levels[d]);
            free(host[d]);
        }
    }
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_nested_bad_input)
{
    TEST_CONTEXT(ctx, _i);
    const int64_t short_outer[3] = {0, 2, 5}; /* ends at 5, but inner splits 6 lists */
    const rg_array *levels[2] = {test_array_from_i64(ctx, RG_INT64, short_outer, 3),
                                 test_array_from_i64(ctx, RG_INT64, inner_off, 7)};
    ck_assert_int_eq(rg_nested_validate(levels, 2, 15), RG_EOFFSETS);
    ck_assert(test_contains(rg_context_error(ctx), "levels[0] ends at 5"));
    rg_array *out = test_array_filled(ctx, RG_INT64, 15, -9);
    ck_assert_int_eq(rg_nested_parents(out, levels, 2, 0, 2, RG_STRATEGY_AUTO, NULL), RG_EOFFSETS);
    test_expect_filled(out, -9, "parents of mismatched levels");
    rg_array *flat = test_array_filled(ctx, RG_INT64, 3, -9);
    ck_assert_int_eq(rg_offsets_compose(flat, levels[0], levels[1]), RG_EOFFSETS);
    test_expect_filled(flat, -9, "compose of mismatched levels");
    rg_array_free((rg_array *)levels[0]);

    levels[0] = test_array_from_i64(ctx, RG_INT64, outer_off, 3);
    /* An empty inner level is named, as an empty offsets array is. */
    rg_array *empty = NULL;
    ck_assert_int_eq(rg_array_create(&empty, ctx, RG_INT64, 0), RG_OK);
    const rg_array *with_empty[2] = {levels[0], empty};
    ck_assert_int_eq(rg_nested_validate(with_empty, 2, 0), RG_ESIZE);
    ck_assert_msg(test_contains(rg_context_error(ctx), "levels[1] is empty"), "%s",
                  rg_context_error(ctx));
    ck_assert_int_eq(rg_nested_offsets(flat, with_empty, 2, 0, 2), RG_ESIZE);
    rg_array_free(empty);
    /* A level as its own output: refused, and left as it was. */
    rg_array *level0 = (rg_array *)levels[0];
    ck_assert_int_eq(rg_nested_offsets(level0, levels, 2, 0, 1), RG_EINVAL);
    ck_assert(test_contains(rg_context_error(ctx), "out is levels[0] too"));
    ck_assert_int_eq(rg_offsets_compose(level0, levels[0], levels[1]), RG_EINVAL);
    int64_t *kept = test_read_i64(level0);
    test_expect_i64(kept, outer_off, 3, "a level refused as its own output");
    free(kept);
    ck_assert_int_eq(rg_nested_validate(levels, 0, 15), RG_EINVAL);
    ck_assert_int_eq(rg_nested_validate(NULL, 2, 15), RG_EINVAL);
    ck_assert_int_eq(rg_nested_parents(out, levels, 2, 1, 1, RG_STRATEGY_AUTO, NULL), RG_EINVAL);
    ck_assert(test_contains(rg_context_error(ctx), "outer < inner"));
    ck_assert_int_eq(rg_nested_parents(out, levels, 2, 0, 3, RG_STRATEGY_AUTO, NULL), RG_EINVAL);
    ck_assert_int_eq(rg_nested_offsets(flat, levels, 2, 2, 1), RG_EINVAL);
    rg_array *wrong = test_array_filled(ctx, RG_INT64, 14, -9);
    ck_assert_int_eq(rg_nested_parents(wrong, levels, 2, 0, 2, RG_STRATEGY_AUTO, NULL), RG_ESIZE);
    test_expect_filled(wrong, -9, "parents into a short output");
    /* A check made by rg_parents inside: its message names both calls. */
    ck_assert_msg(test_contains(rg_context_error(ctx), "rg_nested_parents: rg_parents:"), "%s",
                  rg_context_error(ctx));
    ck_assert_int_eq(rg_nested_local_index(out, levels, 2, 0, 2, (rg_strategy)77, NULL),
                     RG_EINVAL);
    ck_assert_msg(test_contains(rg_context_error(ctx), "rg_nested_local_index: "), "%s",
                  rg_context_error(ctx));
    ck_assert_int_eq(rg_nested_offsets(wrong, levels, 2, 0, 2), RG_ESIZE);
    rg_array *fl = test_array_filled(ctx, RG_FLOAT32, 3, 0);
    ck_assert_int_eq(rg_nested_offsets(fl, levels, 2, 0, 2), RG_EDTYPE);
    test_expect_filled(out, -9, "outputs of refused calls");
    test_expect_filled(flat, -9, "outputs of refused calls");
    rg_array_free(fl);
    rg_array_free(wrong);
    rg_array_free(flat);
    rg_array_free(out);
    rg_array_free((rg_array *)levels[0]);
    rg_array_free((rg_array *)levels[1]);
    rg_context_free(ctx);
}
END_TEST

/* The example's innermost lists summed: [[6, 9], [30, 10, 23, 42]]. */
START_TEST(test_nested_reduce)
{
    TEST_CONTEXT(ctx, _i);
    const rg_array *levels[2] = {test_array_from_i64(ctx, RG_INT64, outer_off, 3),
                                 test_array_from_i64(ctx, RG_INT32, inner_off, 7)};
    int64_t values[15];
    for (int k = 0; k < 15; k++)
        values[k] = k + 1;
    rg_array *content = test_array_from_i64(ctx, RG_INT32, values, 15);
    rg_array *out = test_array_filled(ctx, RG_INT64, 6, -1);
    ck_assert_int_eq(rg_nested_reduce(out, levels, 2, content, RG_REDUCE_SUM,
                                      RG_REDUCE_POLICY_AUTO, NULL), RG_OK);
    const int64_t sums[6] = {6, 9, 30, 10, 23, 42};
    expect_array(out, sums, 6, "innermost sums");
    rg_array *maxes = test_array_filled(ctx, RG_INT32, 6, -1);
    ck_assert_int_eq(rg_nested_reduce(maxes, levels, 2, content, RG_REDUCE_MAX,
                                      RG_REDUCE_POLICY_AUTO, NULL), RG_OK);
    const int64_t mx[6] = {3, 5, 9, 10, 12, 15};
    expect_array(maxes, mx, 6, "innermost maxima");
    /* content of the wrong length: refused, output untouched */
    rg_array *short_content = test_array_from_i64(ctx, RG_INT32, values, 14);
    rg_array *fresh = test_array_filled(ctx, RG_INT64, 6, -1);
    ck_assert_int_eq(rg_nested_reduce(fresh, levels, 2, short_content, RG_REDUCE_SUM,
                                      RG_REDUCE_POLICY_AUTO, NULL), RG_EOFFSETS);
    ck_assert(test_contains(rg_context_error(ctx), "14"));
    ck_assert(test_contains(rg_context_error(ctx), "rg_nested_reduce"));
    test_expect_filled(fresh, -1, "refused nested reduce");
    /* An outer level as the output, of the right dtype and length (3
     * innermost lists): refused, the level untouched. */
    static const int64_t two_off[3] = {0, 1, 3}, three_off[4] = {0, 2, 2, 5};
    const rg_array *small[2] = {test_array_from_i64(ctx, RG_INT64, two_off, 3),
                                test_array_from_i64(ctx, RG_INT64, three_off, 4)};
    rg_array *five = test_array_from_i64(ctx, RG_INT64, values, 5);
    ck_assert_int_eq(rg_nested_reduce((rg_array *)small[0], small, 2, five, RG_REDUCE_COUNT,
                                      RG_REDUCE_POLICY_AUTO, NULL), RG_EINVAL);
    ck_assert(test_contains(rg_context_error(ctx), "levels[0]"));
    expect_array(small[0], two_off, 3, "levels[0] given as the output");
    rg_array_free(five);
    rg_array_free((rg_array *)small[1]);
    rg_array_free((rg_array *)small[0]);
    rg_array_free(fresh);
    rg_array_free(short_content);
    rg_array_free(maxes);
    rg_array_free(out);
    rg_array_free(content);
    rg_array_free((rg_array *)levels[0]);
    rg_array_free((rg_array *)levels[1]);
    rg_context_free(ctx);
}
END_TEST

Suite *nested_suite(void)
{
    Suite *s = test_suite("nested");
    TCase *tc = test_tcase("nested");
    tcase_add_loop_test(tc, test_nested_example, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_nested_random, 0, TEST_NBACKENDS_GPU_KERNELS);
    tcase_add_loop_test(tc, test_nested_bad_input, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_nested_reduce, 0, TEST_NBACKENDS);
    suite_add_tcase(s, tc);
    return s;
}
