/* check_transfers.c — host<->device byte counts: only changed ranges go up, only stale ranges come down. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static uint64_t up(const rg_context *ctx)
{
    uint64_t u = 0;
    ck_assert_int_eq(rg_context_transfers(ctx, &u, NULL), RG_OK);
    return u;
}

static uint64_t down(const rg_context *ctx)
{
    uint64_t d = 0;
    ck_assert_int_eq(rg_context_transfers(ctx, NULL, &d), RG_OK);
    return d;
}

/* A kernel that reads and writes a: adding zero leaves the values alone. */
static void run_kernel(rg_array *a)
{
    int64_t zero = 0; /* all-zero bytes: zero in every dtype used here */
    rg_status st = rg_array_scalar(a, RG_ARITH_ADD, &zero);
    ck_assert_msg(st == RG_OK, "kernel: %s", rg_context_error(rg_array_context(a)));
}

START_TEST(test_write_then_kernel)
{
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENCL);
    rg_array *a = NULL;
    ck_assert_int_eq(rg_array_create(&a, ctx, RG_INT32, 1000), RG_OK);
    rg_context_reset_transfers(ctx);
    const int32_t three[3] = {7, 8, 9};
    ck_assert_int_eq(rg_array_write(a, 500, three, 3), RG_OK);
    ck_assert_uint_eq(up(ctx), 0); /* nothing moves until a kernel needs it */
    run_kernel(a);
    ck_assert_uint_eq(up(ctx), 3 * sizeof(int32_t));
    rg_context_reset_transfers(ctx);
    run_kernel(a); /* unchanged on the host: nothing goes up */
    ck_assert_uint_eq(up(ctx), 0);
    int32_t got[3];
    ck_assert_int_eq(rg_array_read(got, a, 500, 3), RG_OK);
    ck_assert_int_eq(got[0], 7);
    ck_assert_int_eq(got[2], 9);
    ck_assert_uint_eq(down(ctx), 3 * sizeof(int32_t)); /* only the range asked for */
    rg_array_free(a);
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_hull_of_writes)
{
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENCL);
    rg_array *a = NULL;
    ck_assert_int_eq(rg_array_create(&a, ctx, RG_INT64, 100), RG_OK);
    rg_context_reset_transfers(ctx);
    const int64_t x = 10, y = 20;
    ck_assert_int_eq(rg_array_write(a, 10, &x, 1), RG_OK);
    ck_assert_int_eq(rg_array_write(a, 20, &y, 1), RG_OK);
    run_kernel(a);
    ck_assert_uint_eq(up(ctx), 11 * sizeof(int64_t)); /* elements 10..20 */
    int64_t *got = test_read_i64(a);
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq(got[i], i == 10 ? 10 : i == 20 ? 20 : 0);
    free(got);
    rg_array_free(a);
    rg_context_free(ctx);
}
END_TEST

/* int32 0..99 written from the host (a mirror), then 1..100 by a kernel:
 * the mirror is stale; the transfer counts start from 0. */
static rg_array *stale_hundred(rg_context *ctx)
{
    int32_t values[100];
    for (int i = 0; i < 100; i++)
        values[i] = i;
    rg_array *a = NULL;
    ck_assert_int_eq(rg_array_create(&a, ctx, RG_INT32, 100), RG_OK);
    ck_assert_int_eq(rg_array_write(a, 0, values, 100), RG_OK);
    const int32_t one = 1;
    ck_assert_int_eq(rg_array_scalar(a, RG_ARITH_ADD, &one), RG_OK);
    rg_context_reset_transfers(ctx);
    return a;
}

START_TEST(test_read_stale_range)
{
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENCL);
    rg_array *a = stale_hundred(ctx);
    const int32_t one = 1;

    int32_t got[100];
    ck_assert_int_eq(rg_array_read(got, a, 0, 10), RG_OK);
    ck_assert_uint_eq(down(ctx), 10 * 4);
    ck_assert_int_eq(rg_array_read(got, a, 0, 10), RG_OK); /* fresh on the host now */
    ck_assert_uint_eq(down(ctx), 10 * 4);
    ck_assert_int_eq(rg_array_read(got, a, 0, 100), RG_OK); /* only the 90 still stale */
    ck_assert_uint_eq(down(ctx), 100 * 4);
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq(got[i], i + 1);
    ck_assert_uint_eq(up(ctx), 0);

    /* A write while the host copy is stale goes straight up, and reads stay right. */
    ck_assert_int_eq(rg_array_scalar(a, RG_ARITH_ADD, &one), RG_OK);
    rg_context_reset_transfers(ctx);
    const int32_t w[2] = {-1, -2};
    ck_assert_int_eq(rg_array_write(a, 50, w, 2), RG_OK);
    ck_assert_uint_eq(up(ctx), 8);
    ck_assert_int_eq(rg_array_read(got, a, 0, 100), RG_OK);
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq(got[i], i == 50 ? -1 : i == 51 ? -2 : i + 2);
    rg_array_free(a);
    rg_context_free(ctx);
}
END_TEST

/* Reads in the middle of what a kernel wrote: the range read last is fresh
 * on the host (one part at a time; neighbours join it). */
START_TEST(test_read_middle_ranges)
{
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENCL);
    rg_array *a = stale_hundred(ctx);
    const int32_t one = 1;

    int32_t got[100];
    ck_assert_int_eq(rg_array_read(got, a, 30, 10), RG_OK);
    ck_assert_uint_eq(down(ctx), 10 * 4);
    ck_assert_int_eq(rg_array_read(got, a, 30, 10), RG_OK); /* fresh now */
    ck_assert_uint_eq(down(ctx), 10 * 4);
    ck_assert_int_eq(rg_array_read(got, a, 35, 15), RG_OK); /* only 40..49 */
    ck_assert_uint_eq(down(ctx), 20 * 4);
    ck_assert_int_eq(rg_array_read(got, a, 20, 40), RG_OK); /* 20..29 and 50..59 */
    ck_assert_uint_eq(down(ctx), 40 * 4);
    for (int i = 0; i < 40; i++)
        ck_assert_int_eq(got[i], 20 + i + 1);
    ck_assert_int_eq(rg_array_read(got, a, 60, 5), RG_OK); /* touches it: joins it */
    ck_assert_uint_eq(down(ctx), 45 * 4);
    ck_assert_int_eq(rg_array_read(got, a, 20, 45), RG_OK);
    ck_assert_uint_eq(down(ctx), 45 * 4);
    ck_assert_int_eq(rg_array_read(got, a, 5, 5), RG_OK); /* apart: now the fresh part */
    ck_assert_uint_eq(down(ctx), 50 * 4);
    ck_assert_int_eq(rg_array_read(got, a, 5, 5), RG_OK);
    ck_assert_uint_eq(down(ctx), 50 * 4);
    ck_assert_int_eq(rg_array_read(got, a, 0, 100), RG_OK); /* all but 5..9 */
    ck_assert_uint_eq(down(ctx), 145 * 4);
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq(got[i], i + 1);
    ck_assert_int_eq(rg_array_read(got, a, 0, 100), RG_OK); /* nothing stale */
    ck_assert_uint_eq(down(ctx), 145 * 4);

    /* A kernel makes it all stale again; a write into a fresh part stays right. */
    ck_assert_int_eq(rg_array_scalar(a, RG_ARITH_ADD, &one), RG_OK);
    ck_assert_int_eq(rg_array_read(got, a, 40, 10), RG_OK);
    const int32_t w = -5;
    ck_assert_int_eq(rg_array_write(a, 45, &w, 1), RG_OK);
    rg_context_reset_transfers(ctx);
    ck_assert_int_eq(rg_array_read(got, a, 0, 100), RG_OK);
    ck_assert_uint_eq(down(ctx), 90 * 4);
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq(got[i], i == 45 ? -5 : i + 2);
    rg_array_free(a);
    rg_context_free(ctx);
}
END_TEST

/* Random reads, writes and kernels against a model of the values: every
 * read is right and moves at most the bytes it asks for, none when
 * repeated at once. */
START_TEST(test_random_reads)
{
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENCL);
    enum { N = 500 };
    int64_t model[N], got[N];
    for (int i = 0; i < N; i++)
        model[i] = i;
    rg_array *a = NULL; /* written from the host: it has a mirror (see test_no_mirror_reads) */
    ck_assert_int_eq(rg_array_create(&a, ctx, RG_INT64, N), RG_OK);
    ck_assert_int_eq(rg_array_write(a, 0, model, N), RG_OK);
    uint64_t seed = 2026;
    for (int step = 0; step < 3000; step++) {
        size_t lo = test_rand(&seed) % N, n = 1 + test_rand(&seed) % (N - lo);
        switch (test_rand(&seed) % 8) {
        case 0: { /* a kernel adds one everywhere */
            const int64_t one = 1;
            ck_assert_int_eq(rg_array_scalar(a, RG_ARITH_ADD, &one), RG_OK);
            for (int i = 0; i < N; i++)
                model[i]++;
            break;
        }
        case 1: { /* the host writes a range */
            int64_t w[N];
            for (size_t i = 0; i < n; i++)
                w[i] = model[lo + i] = -(int64_t)(test_rand(&seed) % 1000);
            ck_assert_int_eq(rg_array_write(a, lo, w, n), RG_OK);
            break;
        }
        default: {
            rg_context_reset_transfers(ctx);
            ck_assert_int_eq(rg_array_read(got, a, lo, n), RG_OK);
            ck_assert_uint_le(down(ctx), n * sizeof *got);
            test_expect_i64(got, model + lo, n, "random read");
            rg_context_reset_transfers(ctx);
            ck_assert_int_eq(rg_array_read(got, a, lo, n), RG_OK);
            ck_assert_uint_eq(down(ctx), 0);
            test_expect_i64(got, model + lo, n, "the same read again");
        }
        }
    }
    rg_array_free(a);
    rg_context_free(ctx);
}
END_TEST

/* Arrays only kernels write get no host mirror; reads then come from the device. */
START_TEST(test_no_mirror_reads)
{
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENCL);
    const int64_t off[4] = {0, 2, 2, 5};
    rg_array *o = NULL, *len = NULL;
    ck_assert_int_eq(rg_array_from_host(&o, ctx, RG_INT64, off, 4), RG_OK);
    ck_assert_uint_eq(up(ctx), 4 * 8); /* from_host uploads at once */
    ck_assert_int_eq(rg_array_create(&len, ctx, RG_INT64, 3), RG_OK);
    rg_context_reset_transfers(ctx);
    ck_assert_int_eq(rg_lengths(len, o), RG_OK);
    ck_assert_uint_eq(up(ctx), 0);
    rg_context_reset_transfers(ctx);
    int64_t got[3];
    ck_assert_int_eq(rg_array_read(got, len, 1, 2), RG_OK);
    ck_assert_uint_eq(down(ctx), 2 * 8);
    ck_assert_int_eq(got[0], 0);
    ck_assert_int_eq(got[1], 3);
    rg_array_free(len);
    rg_array_free(o);
    rg_context_free(ctx);
}
END_TEST

/* A list of 20 items, each item[0..39] = 0..39, changed by op with value on
 * the device; its offsets on the device too (read by a lengths kernel), and
 * the host copy fresh again (every item read back: 800 floats down). */
static rg_list *synced_list(rg_context *ctx, rg_arith op, double value, float item[40])
{
    rg_list *l = NULL;
    ck_assert_int_eq(rg_list_create(&l, ctx, RG_FLOAT32, 0), RG_OK);
    for (int i = 0; i < 40; i++)
        item[i] = (float)i;
    for (int k = 0; k < 20; k++)
        ck_assert_int_eq(rg_list_append(l, item, 40), RG_OK);
    ck_assert_int_eq(rg_list_scalar(l, op, value), RG_OK);
    rg_array *len = NULL;
    ck_assert_int_eq(rg_array_create(&len, ctx, RG_INT64, 20), RG_OK);
    ck_assert_int_eq(rg_lengths(len, rg_list_offsets(l)), RG_OK);
    rg_array_free(len);
    float got[40];
    for (int k = 0; k < 20; k++)
        ck_assert_int_eq(rg_list_get(got, 40, NULL, l, k), RG_OK);
    return l;
}

/* A list append uploads the new item and its offset, not the list. */
START_TEST(test_list_uploads)
{
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENCL);
    float item[40], got[40];
    rg_list *l = synced_list(ctx, RG_ARITH_MUL, 2.0, item);
    rg_context_reset_transfers(ctx);
    ck_assert_int_eq(rg_list_append(l, item, 3), RG_OK);
    ck_assert_uint_eq(up(ctx), 0);
    ck_assert_int_eq(rg_list_scalar(l, RG_ARITH_MUL, 2.0), RG_OK);
    ck_assert_uint_eq(up(ctx), 3 * sizeof(float));
    rg_array *len = NULL;
    ck_assert_int_eq(rg_array_create(&len, ctx, RG_INT64, 21), RG_OK);
    ck_assert_int_eq(rg_lengths(len, rg_list_offsets(l)), RG_OK);
    ck_assert_uint_eq(up(ctx), 3 * sizeof(float) + sizeof(int64_t)); /* offsets[21] */
    ck_assert_int_eq(rg_list_get(got, 40, NULL, l, -1), RG_OK);
    ck_assert(got[0] == 0.0f && got[1] == 2.0f && got[2] == 4.0f);
    ck_assert_int_eq(rg_list_get(got, 40, NULL, l, 0), RG_OK);
    ck_assert(got[39] == 39.0f * 4);
    rg_array_free(len);
    rg_list_free(l);
    rg_context_free(ctx);
}
END_TEST

/* Items added on the host and deleted before any kernel ran never go up:
 * what lies past a list's length means nothing.  A shrink that leaves some
 * of a change inside the length uploads just that part. */
START_TEST(test_list_shrink_uploads)
{
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENCL);
    float item[40], got[40];
    rg_list *l = synced_list(ctx, RG_ARITH_ADD, 1.0, item);
    rg_array *len = NULL;
    ck_assert_int_eq(rg_array_create(&len, ctx, RG_INT64, 20), RG_OK);

    rg_context_reset_transfers(ctx);
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq(rg_list_append(l, item, 40), RG_OK);
    ck_assert_int_eq(rg_list_delete_slice(l, 20, 23), RG_OK);
    ck_assert_int_eq(rg_list_scalar(l, RG_ARITH_ADD, 1.0), RG_OK); /* the content */
    ck_assert_int_eq(rg_lengths(len, rg_list_offsets(l)), RG_OK); /* the offsets */
    rg_array_free(len);
    ck_assert_uint_eq(up(ctx), 0);

    /* Two appended, one deleted: the first one's 10 floats and its end offset. */
    for (int k = 0; k < 20; k++)
        ck_assert_int_eq(rg_list_get(got, 40, NULL, l, k), RG_OK);
    rg_context_reset_transfers(ctx);
    ck_assert_int_eq(rg_list_append(l, item, 10), RG_OK);
    ck_assert_int_eq(rg_list_append(l, item, 30), RG_OK);
    ck_assert_int_eq(rg_list_delete(l, -1), RG_OK);
    ck_assert_int_eq(rg_list_scalar(l, RG_ARITH_ADD, 1.0), RG_OK);
    ck_assert_uint_eq(up(ctx), 10 * sizeof(float));
    ck_assert_int_eq(rg_array_create(&len, ctx, RG_INT64, 21), RG_OK);
    ck_assert_int_eq(rg_lengths(len, rg_list_offsets(l)), RG_OK);
    ck_assert_uint_eq(up(ctx), 10 * sizeof(float) + sizeof(int64_t));
    int64_t last = 0;
    ck_assert_int_eq(rg_array_read(&last, len, 20, 1), RG_OK);
    ck_assert_int_eq(last, 10);
    rg_array_free(len);
    ck_assert_uint_eq(rg_list_nitems(l), 21);
    size_t n = 0;
    ck_assert_int_eq(rg_list_get(got, 40, &n, l, -1), RG_OK);
    ck_assert_uint_eq(n, 10);
    ck_assert(got[0] == 1.0f && got[9] == 10.0f);
    ck_assert_int_eq(rg_list_get(got, 40, &n, l, 19), RG_OK);
    ck_assert(n == 40 && got[0] == 3.0f && got[39] == 42.0f);
    rg_list_free(l);
    rg_context_free(ctx);
}
END_TEST

/* Every op sees the host's pending writes, and arrays written by kernels
 * stay whole when the host then changes part of them (both backends). */
START_TEST(test_ops_see_host_writes)
{
    TEST_CONTEXT(ctx, _i);
    rg_array *a = NULL; /* created zero: host writes then wait in a mirror */
    ck_assert_int_eq(rg_array_create(&a, ctx, RG_FLOAT64, 1000), RG_OK);
    const double three = 3.0, seven = 7.0;
    ck_assert_int_eq(rg_array_write(a, 5, &three, 1), RG_OK);
    ck_assert_int_eq(rg_array_write(a, 900, &three, 1), RG_OK);
    int64_t nnz = -1;
    ck_assert_int_eq(rg_count_nonzero(&nnz, a), RG_OK);
    ck_assert_int_eq(nnz, 2);
    const int64_t whole[2] = {0, 1000};
    rg_array *off = test_array_from_i64(ctx, RG_INT64, whole, 2), *sum = NULL;
    ck_assert_int_eq(rg_array_create(&sum, ctx, RG_FLOAT64, 1), RG_OK);
    ck_assert_int_eq(rg_segment_reduce(sum, a, off, RG_REDUCE_SUM, RG_REDUCE_POLICY_AUTO, NULL),
                     RG_OK);
    double total = 0;
    ck_assert_int_eq(rg_array_read(&total, sum, 0, 1), RG_OK);
    ck_assert(total == 6.0);
    rg_array_free(sum);
    rg_array_free(off);

    /* a kernel's output, then a partial host write into it */
    rg_array *coords = NULL;
    int64_t n = 1000;
    ck_assert_int_eq(rg_nonzero(&coords, &nnz, a, &n, 1, -1), RG_OK);
    const int64_t minus = -1;
    ck_assert_int_eq(rg_array_write(coords, 1, &minus, 1), RG_OK);
    int64_t got[2] = {0, 0};
    ck_assert_int_eq(rg_array_read(got, coords, 0, 2), RG_OK);
    ck_assert_int_eq(got[0], 5);
    ck_assert_int_eq(got[1], -1);

    /* fill and copy after pending host writes */
    rg_array *b = NULL;
    ck_assert_int_eq(rg_array_create(&b, ctx, RG_FLOAT64, 1000), RG_OK);
    ck_assert_int_eq(rg_array_write(b, 10, &three, 1), RG_OK);
    ck_assert_int_eq(rg_array_copy(b, a), RG_OK);
    double d[3];
    ck_assert_int_eq(rg_array_read(d, b, 4, 3), RG_OK);
    ck_assert(d[0] == 0.0 && d[1] == 3.0 && d[2] == 0.0);
    ck_assert_int_eq(rg_array_read(d, b, 10, 1), RG_OK);
    ck_assert(d[0] == 0.0);
    ck_assert_int_eq(rg_array_write(a, 7, &three, 1), RG_OK);
    ck_assert_int_eq(rg_array_fill(a, &seven), RG_OK);
    ck_assert_int_eq(rg_array_read(d, a, 5, 3), RG_OK);
    ck_assert(d[0] == 7.0 && d[1] == 7.0 && d[2] == 7.0);
    rg_array_free(b);
    rg_array_free(coords);
    rg_array_free(a);
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_known_offsets_stay_on_device)
{
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENCL);
    const int64_t off[4] = {0, 3, 3, 7};
    rg_array *o = test_array_from_i64(ctx, RG_INT64, off, 4);
    rg_array *p = NULL, *sums = NULL, *v = NULL;
    ck_assert_int_eq(rg_array_create(&p, ctx, RG_INT64, 7), RG_OK);
    ck_assert_int_eq(rg_array_create(&sums, ctx, RG_FLOAT64, 3), RG_OK);
    ck_assert_int_eq(rg_array_create(&v, ctx, RG_FLOAT64, 7), RG_OK);
    rg_context_reset_transfers(ctx);
    ck_assert_int_eq(rg_parents(p, o, RG_STRATEGY_AUTO, NULL), RG_OK);
    ck_assert_uint_gt(down(ctx), 0); /* the check read its answer back */
    /* Checked once: later ops on the same offsets move nothing. */
    rg_context_reset_transfers(ctx);
    ck_assert_int_eq(rg_local_index(p, o, RG_STRATEGY_AUTO, NULL), RG_OK);
    ck_assert_int_eq(rg_segment_reduce(sums, v, o, RG_REDUCE_SUM, RG_REDUCE_POLICY_AUTO, NULL),
                     RG_OK);
    ck_assert_int_eq(rg_context_finish(ctx), RG_OK);
    ck_assert_uint_eq(down(ctx), 0);
    ck_assert_uint_eq(up(ctx), 0);
    /* A host write makes the next op check (and so read) again. */
    ck_assert_int_eq(rg_array_write(o, 0, &off[0], 1), RG_OK);
    rg_context_reset_transfers(ctx);
    ck_assert_int_eq(rg_parents(p, o, RG_STRATEGY_AUTO, NULL), RG_OK);
    ck_assert_uint_gt(down(ctx), 0);
    /* A new list's offsets, [0], start out known too. */
    rg_list *l = NULL;
    rg_array *none = NULL;
    ck_assert_int_eq(rg_list_create(&l, ctx, RG_FLOAT64, 0), RG_OK);
    ck_assert_int_eq(rg_array_create(&none, ctx, RG_FLOAT64, 0), RG_OK);
    rg_context_reset_transfers(ctx);
    ck_assert_int_eq(rg_segment_reduce(none, rg_list_content(l), rg_list_offsets(l),
                                       RG_REDUCE_SUM, RG_REDUCE_POLICY_AUTO, NULL), RG_OK);
    ck_assert_int_eq(rg_context_finish(ctx), RG_OK);
    ck_assert_uint_eq(down(ctx), 0);
    rg_array_free(none);
    rg_list_free(l);
    rg_array_free(v);
    rg_array_free(sums);
    rg_array_free(p);
    rg_array_free(o);
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_openmp_counts_nothing)
{
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENMP);
    rg_array *a = NULL;
    const int32_t three[3] = {1, 2, 3};
    ck_assert_int_eq(rg_array_from_host(&a, ctx, RG_INT32, three, 3), RG_OK);
    ck_assert_int_eq(rg_array_write(a, 0, three, 3), RG_OK);
    run_kernel(a);
    int32_t got[3];
    ck_assert_int_eq(rg_array_read(got, a, 0, 3), RG_OK);
    uint64_t u = 1, d = 1;
    ck_assert_int_eq(rg_context_transfers(ctx, &u, &d), RG_OK);
    ck_assert_uint_eq(u, 0);
    ck_assert_uint_eq(d, 0);
    ck_assert_int_eq(rg_context_transfers(NULL, &u, &d), RG_EINVAL);
    rg_array_free(a);
    rg_context_free(ctx);
}
END_TEST

Suite *transfers_suite(void)
{
    Suite *s = test_suite("transfers");
    TCase *tc = test_tcase("counts");
    tcase_add_test(tc, test_write_then_kernel);
    tcase_add_test(tc, test_hull_of_writes);
    tcase_add_test(tc, test_read_stale_range);
    tcase_add_test(tc, test_read_middle_ranges);
    tcase_add_test(tc, test_random_reads);
    tcase_add_test(tc, test_no_mirror_reads);
    tcase_add_test(tc, test_list_uploads);
    tcase_add_test(tc, test_list_shrink_uploads);
    tcase_add_test(tc, test_known_offsets_stay_on_device);
    tcase_add_test(tc, test_openmp_counts_nothing);
    tcase_add_loop_test(tc, test_ops_see_host_writes, 0, TEST_NBACKENDS);
    suite_add_tcase(s, tc);
    return s;
}
