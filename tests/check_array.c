/* check_array.c — typed arrays on every backend: create, copy in and out, ranges, dtypes, bad arguments. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

/* A pointer value no library call may write into an out parameter. */
#define UNTOUCHED ((rg_array *)(uintptr_t)0x5A5A5A50u)

static const rg_dtype all_dtypes[] = {RG_BOOL,   RG_INT8,   RG_INT16,  RG_INT32,
                                      RG_INT64,  RG_UINT8,  RG_UINT16, RG_UINT32,
                                      RG_UINT64, RG_FLOAT32, RG_FLOAT64};
#define N_DTYPES (sizeof all_dtypes / sizeof all_dtypes[0])

/* Deterministic bytes valid for dtype (bool elements must be 0 or 1). */
static unsigned char *pattern_bytes(rg_dtype dtype, size_t n, uint64_t seed)
{
    size_t size = rg_dtype_size(dtype), nbytes = n * size;
    unsigned char *buf = malloc(nbytes + 1);
    ck_assert_ptr_nonnull(buf);
    uint64_t state = seed;
    for (size_t i = 0; i < nbytes; i++)
        buf[i] = (unsigned char)test_rand(&state);
    if (dtype == RG_BOOL)
        for (size_t i = 0; i < nbytes; i++)
            buf[i] &= 1;
    return buf;
}

static void expect_bytes(const unsigned char *got, const unsigned char *want, size_t nbytes, const char *what)
{
    for (size_t i = 0; i < nbytes; i++) {
        if (got[i] != want[i])
            ck_abort_msg("%s: byte %zu of %zu is 0x%02x, expected 0x%02x", what, i, nbytes, got[i], want[i]);
    }
}

START_TEST(test_dtype_info)
{
    static const struct {
        rg_dtype dtype;
        size_t size;
        const char *name;
    } info[] = {{RG_BOOL, 1, "bool"},       {RG_INT8, 1, "int8"},       {RG_INT16, 2, "int16"},
                {RG_INT32, 4, "int32"},     {RG_INT64, 8, "int64"},     {RG_UINT8, 1, "uint8"},
                {RG_UINT16, 2, "uint16"},   {RG_UINT32, 4, "uint32"},   {RG_UINT64, 8, "uint64"},
                {RG_FLOAT32, 4, "float32"}, {RG_FLOAT64, 8, "float64"}};
    for (size_t i = 0; i < sizeof info / sizeof info[0]; i++) {
        ck_assert_uint_eq(rg_dtype_size(info[i].dtype), info[i].size);
        ck_assert_ptr_nonnull(rg_dtype_name(info[i].dtype));
        ck_assert_str_eq(rg_dtype_name(info[i].dtype), info[i].name);
    }
    ck_assert_uint_eq(rg_dtype_size((rg_dtype)0), 0);
    ck_assert_uint_eq(rg_dtype_size((rg_dtype)12), 0);
    ck_assert_uint_eq(rg_dtype_size((rg_dtype)-3), 0);
    ck_assert_str_eq(rg_dtype_name((rg_dtype)0), "unknown");
    ck_assert_str_eq(rg_dtype_name((rg_dtype)99), "unknown");
}
END_TEST

START_TEST(test_create_zeroed)
{
    TEST_CONTEXT(ctx, _i);
    static const size_t lengths[] = {1, 17, 1000, 100003};
    for (size_t d = 0; d < N_DTYPES; d++) {
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
            rg_dtype dtype = all_dtypes[d];
            size_t n = lengths[l], nbytes = n * rg_dtype_size(dtype);
            rg_array *a = UNTOUCHED;
            rg_status st = rg_array_create(&a, ctx, dtype, n);
            ck_assert_msg(st == RG_OK, "create %s[%zu]: %d %s", rg_dtype_name(dtype), n, (int)st,
                          rg_context_error(ctx));
            ck_assert_ptr_ne(a, UNTOUCHED);
            ck_assert_uint_eq(rg_array_length(a), n);
            ck_assert_int_eq(rg_array_dtype(a), dtype);
            ck_assert_ptr_eq(rg_array_context(a), ctx);

            unsigned char *got = malloc(nbytes);
            unsigned char *zero = calloc(nbytes, 1);
            ck_assert_ptr_nonnull(got);
            ck_assert_ptr_nonnull(zero);
            memset(got, 0xAB, nbytes);
            ck_assert_int_eq(rg_array_read(got, a, 0, n), RG_OK);
            expect_bytes(got, zero, nbytes, rg_dtype_name(dtype));
            free(got);
            free(zero);
            rg_array_free(a);
        }
    }
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_from_host_every_dtype)
{
    TEST_CONTEXT(ctx, _i);
    const size_t n = 4099;
    for (size_t d = 0; d < N_DTYPES; d++) {
        rg_dtype dtype = all_dtypes[d];
        size_t size = rg_dtype_size(dtype), nbytes = n * size;
        unsigned char *data = pattern_bytes(dtype, n, 1000 + d);
        rg_array *a = NULL;
        rg_status st = rg_array_from_host(&a, ctx, dtype, data, n);
        ck_assert_msg(st == RG_OK, "from_host %s: %d %s", rg_dtype_name(dtype), (int)st, rg_context_error(ctx));
        ck_assert_uint_eq(rg_array_length(a), n);
        ck_assert_int_eq(rg_array_dtype(a), dtype);

        unsigned char *got = malloc(nbytes);
        ck_assert_ptr_nonnull(got);
        ck_assert_int_eq(rg_array_read(got, a, 0, n), RG_OK);
        expect_bytes(got, data, nbytes, rg_dtype_name(dtype));

        /* A range in the middle comes from the right place. */
        memset(got, 0, nbytes);
        ck_assert_int_eq(rg_array_read(got, a, 1234, 777), RG_OK);
        expect_bytes(got, data + 1234 * size, 777 * size, "middle range");
        free(got);
        free(data);
        rg_array_free(a);
    }
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_write_read_ranges)
{
    TEST_CONTEXT(ctx, _i);
    const size_t n = 100;
    int64_t want[100] = {0};
    rg_array *a = NULL;
    ck_assert_int_eq(rg_array_create(&a, ctx, RG_INT32, n), RG_OK);

    int32_t chunk[20];
    for (int i = 0; i < 20; i++) {
        chunk[i] = -1000 + 37 * i;
        want[10 + i] = chunk[i];
    }
    ck_assert_int_eq(rg_array_write(a, 10, chunk, 20), RG_OK);
    int32_t tail[3] = {INT32_MAX, INT32_MIN, 42};
    ck_assert_int_eq(rg_array_write(a, 97, tail, 3), RG_OK);
    want[97] = INT32_MAX;
    want[98] = INT32_MIN;
    want[99] = 42;
    /* Overwrite part of the first chunk. */
    int32_t over[2] = {7, 8};
    ck_assert_int_eq(rg_array_write(a, 29, over, 2), RG_OK);
    want[29] = 7;
    want[30] = 8;
    /* Empty writes and reads, at the start and at the very end, are fine. */
    ck_assert_int_eq(rg_array_write(a, 0, over, 0), RG_OK);
    ck_assert_int_eq(rg_array_write(a, n, over, 0), RG_OK);
    int32_t none[1] = {-5};
    ck_assert_int_eq(rg_array_read(none, a, n, 0), RG_OK);
    ck_assert_int_eq(none[0], -5);

    int64_t *got = test_read_i64(a);
    test_expect_i64(got, want, n, "after writes");
    free(got);

    int32_t part[15];
    ck_assert_int_eq(rg_array_read(part, a, 25, 15), RG_OK);
    for (int i = 0; i < 15; i++)
        ck_assert_int_eq(part[i], want[25 + i]);
    rg_array_free(a);
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_length_zero)
{
    TEST_CONTEXT(ctx, _i);
    for (size_t d = 0; d < N_DTYPES; d++) {
        rg_dtype dtype = all_dtypes[d];
        rg_array *a = UNTOUCHED;
        ck_assert_int_eq(rg_array_create(&a, ctx, dtype, 0), RG_OK);
        ck_assert_ptr_ne(a, UNTOUCHED);
        ck_assert_uint_eq(rg_array_length(a), 0);
        ck_assert_int_eq(rg_array_dtype(a), dtype);

        uint64_t buf[2] = {0x1122334455667788ull, 0x99};
        ck_assert_int_eq(rg_array_read(buf, a, 0, 0), RG_OK);
        ck_assert_int_eq(rg_array_write(a, 0, buf, 0), RG_OK);
        ck_assert_int_eq(rg_array_read(buf, a, 0, 1), RG_ERANGE);
        ck_assert_int_eq(rg_array_write(a, 0, buf, 1), RG_ERANGE);
        ck_assert_msg(buf[0] == 0x1122334455667788ull, "dst modified by a failed read");
        rg_array_free(a);

        rg_array *b = UNTOUCHED;
        ck_assert_int_eq(rg_array_from_host(&b, ctx, dtype, buf, 0), RG_OK);
        ck_assert_ptr_ne(b, UNTOUCHED);
        ck_assert_uint_eq(rg_array_length(b), 0);
        rg_array_free(b);
    }
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_out_of_range)
{
    TEST_CONTEXT(ctx, _i);
    const size_t n = 100;
    int64_t values[100];
    for (size_t i = 0; i < n; i++)
        values[i] = (int64_t)(i * i) - 50;
    rg_array *a = test_array_from_i64(ctx, RG_INT64, values, n);

    int64_t dst[16];
    const int64_t sentinel = 0x0BADF00D;
    struct { size_t start, count; } bad[] = {
        {95, 10}, {100, 1}, {101, 0}, {0, 101}, {SIZE_MAX, 2}, {2, SIZE_MAX}, {SIZE_MAX, 0},
        {SIZE_MAX / 8 + 1, SIZE_MAX / 8 * 7 + 1}};
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        for (int i = 0; i < 16; i++)
            dst[i] = sentinel;
        rg_status st = rg_array_read(dst, a, bad[b].start, bad[b].count);
        ck_assert_msg(st == RG_ERANGE, "read(start %zu, count %zu) = %d, expected RG_ERANGE", bad[b].start,
                      bad[b].count, (int)st);
        for (int i = 0; i < 16; i++)
            ck_assert_msg(dst[i] == sentinel, "failed read wrote dst[%d]", i);
        ck_assert_msg(strlen(rg_context_error(ctx)) > 0, "no message for RG_ERANGE");

        int64_t src[16];
        for (int i = 0; i < 16; i++)
            src[i] = -777;
        st = rg_array_write(a, bad[b].start, src, bad[b].count);
        ck_assert_msg(st == RG_ERANGE, "write(start %zu, count %zu) = %d, expected RG_ERANGE", bad[b].start,
                      bad[b].count, (int)st);
    }
    int64_t *got = test_read_i64(a);
    test_expect_i64(got, values, n, "array after failed writes");
    free(got);

    /* The context still works after the errors. */
    ck_assert_int_eq(rg_array_read(dst, a, 84, 16), RG_OK);
    test_expect_i64(dst, values + 84, 16, "read after errors");
    rg_array_free(a);
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_null_args)
{
    TEST_CONTEXT(ctx, _i);
    int32_t data[5] = {1, 2, 3, 4, 5};
    rg_array *a = UNTOUCHED;

    ck_assert_int_eq(rg_array_create(NULL, ctx, RG_INT32, 5), RG_EINVAL);
    ck_assert_int_eq(rg_array_create(&a, NULL, RG_INT32, 5), RG_EINVAL);
    ck_assert_ptr_eq(a, UNTOUCHED);
    ck_assert_int_eq(rg_array_from_host(NULL, ctx, RG_INT32, data, 5), RG_EINVAL);
    ck_assert_int_eq(rg_array_from_host(&a, NULL, RG_INT32, data, 5), RG_EINVAL);
    ck_assert_ptr_eq(a, UNTOUCHED);
    ck_assert_int_eq(rg_array_from_host(&a, ctx, RG_INT32, NULL, 5), RG_EINVAL);
    ck_assert_ptr_eq(a, UNTOUCHED);
    ck_assert_msg(strlen(rg_context_error(ctx)) > 0, "no message for a NULL data pointer");

    a = NULL;
    ck_assert_int_eq(rg_array_from_host(&a, ctx, RG_INT32, data, 5), RG_OK);
    ck_assert_int_eq(rg_array_write(NULL, 0, data, 1), RG_EINVAL);
    ck_assert_int_eq(rg_array_write(a, 0, NULL, 1), RG_EINVAL);
    int32_t dst[5] = {9, 9, 9, 9, 9};
    ck_assert_int_eq(rg_array_read(dst, NULL, 0, 1), RG_EINVAL);
    ck_assert_int_eq(rg_array_read(NULL, a, 0, 1), RG_EINVAL);
    ck_assert_int_eq(dst[0], 9);

    ck_assert_int_eq(rg_array_read(dst, a, 0, 5), RG_OK);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(dst[i], data[i]);
    rg_array_free(a);
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_unknown_dtype)
{
    TEST_CONTEXT(ctx, _i);
    const rg_dtype bad[] = {(rg_dtype)0, (rg_dtype)12, (rg_dtype)99, (rg_dtype)-1};
    int64_t data[4] = {0, 1, 2, 3};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rg_array *a = UNTOUCHED;
        ck_assert_int_eq(rg_array_create(&a, ctx, bad[i], 4), RG_EDTYPE);
        ck_assert_ptr_eq(a, UNTOUCHED);
        ck_assert_int_eq(rg_array_from_host(&a, ctx, bad[i], data, 4), RG_EDTYPE);
        ck_assert_ptr_eq(a, UNTOUCHED);
        ck_assert_int_eq(rg_array_create(&a, ctx, bad[i], 0), RG_EDTYPE);
        ck_assert_ptr_eq(a, UNTOUCHED);
        ck_assert_msg(strlen(rg_context_error(ctx)) > 0, "no message for RG_EDTYPE");
    }
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_size_overflow)
{
    TEST_CONTEXT(ctx, _i);
    struct { rg_dtype dtype; size_t length; } bad[] = {
        {RG_INT64, SIZE_MAX / 8 + 1}, {RG_FLOAT64, SIZE_MAX}, {RG_INT16, SIZE_MAX / 2 + 1},
        {RG_FLOAT32, SIZE_MAX / 2}};
    int64_t data[4] = {0};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rg_array *a = UNTOUCHED;
        rg_status st = rg_array_create(&a, ctx, bad[i].dtype, bad[i].length);
        ck_assert_msg(st == RG_EOVERFLOW, "create %s[%zu] = %d, expected RG_EOVERFLOW",
                      rg_dtype_name(bad[i].dtype), bad[i].length, (int)st);
        ck_assert_ptr_eq(a, UNTOUCHED);
        /* Checked before the data is touched (data is far shorter). */
        st = rg_array_from_host(&a, ctx, bad[i].dtype, data, bad[i].length);
        ck_assert_msg(st == RG_EOVERFLOW, "from_host %s[%zu] = %d, expected RG_EOVERFLOW",
                      rg_dtype_name(bad[i].dtype), bad[i].length, (int)st);
        ck_assert_ptr_eq(a, UNTOUCHED);
    }
    rg_context_free(ctx);
}
END_TEST

/* Fits size_t but no memory holds it: an allocation failure, not a crash. */
START_TEST(test_huge_alloc)
{
    TEST_CONTEXT(ctx, _i);
    rg_array *a = UNTOUCHED;
    rg_status st = rg_array_create(&a, ctx, RG_INT8, SIZE_MAX / 4);
    ck_assert_msg(st == RG_ENOMEM || st == RG_EDEVMEM, "create int8[SIZE_MAX/4] = %d (%s): %s", (int)st,
                  rg_strerror(st), rg_context_error(ctx));
    ck_assert_ptr_eq(a, UNTOUCHED);
    /* Still usable. */
    ck_assert_int_eq(rg_array_create(&a, ctx, RG_INT8, 16), RG_OK);
    ck_assert_uint_eq(rg_array_length(a), 16);
    rg_array_free(a);
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_foreign_context)
{
    TEST_CONTEXT(one, _i);
    rg_context *two = test_context(_i);
    ck_assert_ptr_nonnull(two);

    const int64_t off[4] = {0, 2, 5, 9};
    const int64_t len[3] = {2, 3, 4};
    rg_array *offsets = test_array_from_i64(one, RG_INT64, off, 4);
    rg_array *lengths_in = test_array_from_i64(one, RG_INT64, len, 3);
    rg_array *lengths = test_array_filled(two, RG_INT64, 3, -9);
    rg_array *offsets_out = test_array_filled(two, RG_INT64, 4, -9);
    rg_array *parents = test_array_filled(two, RG_INT64, 9, -9);
    ck_assert_ptr_eq(rg_array_context(offsets), one);
    ck_assert_ptr_eq(rg_array_context(lengths), two);

    /* The message names both arrays and reaches both contexts. */
    ck_assert_int_eq(rg_lengths(lengths, offsets), RG_EINVAL);
    test_expect_filled(lengths, -9, "rg_lengths, foreign output");
    ck_assert_str_eq(rg_context_error(one),
                     "rg_lengths: lengths and offsets belong to different contexts");
    ck_assert_str_eq(rg_context_error(two), rg_context_error(one));
    ck_assert_int_eq(rg_offsets_from_lengths(offsets_out, lengths_in), RG_EINVAL);
    test_expect_filled(offsets_out, -9, "rg_offsets_from_lengths, foreign output");
    ck_assert_int_eq(rg_parents(parents, offsets, RG_STRATEGY_AUTO, NULL), RG_EINVAL);
    test_expect_filled(parents, -9, "rg_parents, foreign output");
    ck_assert_int_eq(rg_local_index(parents, offsets, RG_STRATEGY_BSEARCH, NULL), RG_EINVAL);
    ck_assert_int_eq(rg_segment_starts(parents, offsets, RG_STRATEGY_FLOOD, NULL), RG_EINVAL);
    test_expect_filled(parents, -9, "rg_local_index/rg_segment_starts, foreign output");

    /* The same calls within one context work. */
    rg_array *mine = test_array_filled(one, RG_INT64, 3, -9);
    ck_assert_int_eq(rg_lengths(mine, offsets), RG_OK);
    int64_t *got = test_read_i64(mine);
    test_expect_i64(got, len, 3, "rg_lengths, same context");
    free(got);

    rg_array_free(mine);
    rg_array_free(parents);
    rg_array_free(offsets_out);
    rg_array_free(lengths);
    rg_array_free(lengths_in);
    rg_array_free(offsets);
    rg_context_free(two);
    rg_context_free(one);
}
END_TEST

/* fill and copy for every element width, sizes past the parallel threshold,
 * and their argument checks; finish succeeds after queued work.  Also on
 * the GPUs' path (a fill kernel, on 3 work-groups) and with bool, which
 * GPUs fill by the driver. */
START_TEST(test_fill_copy)
{
    TEST_CONTEXT(ctx, test_backend_plain(_i));
    const rg_dtype types[5] = {RG_UINT8, RG_INT16, RG_FLOAT32, RG_INT64, RG_BOOL};
    const size_t n = 100003;
    for (int t = 0; t < 5; t++) {
        rg_array *a = test_array_filled(ctx, types[t], n, 0);
        int64_t seven = types[t] == RG_BOOL ? 1 : 7;
        void *v = test_pack(types[t], &seven, 1);
        ck_assert_int_eq(rg_array_fill(a, v), RG_OK);
        test_expect_filled(a, seven, "fill");
        rg_array *b = test_array_filled(ctx, types[t], n, types[t] == RG_BOOL ? 0 : 3);
        int64_t vals[3] = {1, 0, 1};
        void *p = test_pack(types[t], vals, 3);
        ck_assert_int_eq(rg_array_write(a, n - 3, p, 3), RG_OK);
        ck_assert_int_eq(rg_array_copy(b, a), RG_OK);
        ck_assert_int_eq(rg_context_finish(ctx), RG_OK);
        int64_t *got = test_read_i64(b);
        for (size_t k = 0; k < n - 3; k++)
            if (got[k] != seven)
                ck_abort_msg("copy: element %zu is %lld", k, (long long)got[k]);
        test_expect_i64(got + n - 3, vals, 3, "copy tail");
        free(got);
        free(p);
        free(v);
        rg_array_free(b);
        rg_array_free(a);
    }
    rg_array *a = test_array_filled(ctx, RG_INT32, 10, 5);
    rg_array *b = test_array_filled(ctx, RG_INT32, 11, 6);
    rg_array *c = test_array_filled(ctx, RG_INT64, 10, 6);
    ck_assert_int_eq(rg_array_copy(b, a), RG_ESIZE);
    ck_assert_int_eq(rg_array_copy(c, a), RG_EDTYPE);
    ck_assert_int_eq(rg_array_copy(c, NULL), RG_EINVAL);
    ck_assert(test_contains(rg_context_error(ctx), "rg_array_copy: src is NULL"));
    ck_assert_int_eq(rg_array_copy(NULL, c), RG_EINVAL);
    ck_assert(test_contains(rg_context_error(ctx), "rg_array_copy: dst is NULL"));
    /* An output may not be an input, as everywhere. */
    ck_assert_int_eq(rg_array_copy(a, a), RG_EINVAL);
    ck_assert(test_contains(rg_context_error(ctx), "dst is src too"));
    ck_assert_int_eq(rg_array_fill(a, NULL), RG_EINVAL);
    test_expect_filled(b, 6, "refused copy");
    test_expect_filled(c, 6, "refused copy");
    test_expect_filled(a, 5, "refused fill");
    ck_assert_int_eq(rg_context_finish(NULL), RG_EINVAL);
    rg_array_free(a);
    rg_array_free(b);
    rg_array_free(c);
    rg_context_free(ctx);
}
END_TEST

/* GPUs fill by a kernel of scalar.cl: where it is missing, the fill fails
 * with RG_ENOKERNEL and a message naming it, the array as it was; bool
 * arrays, filled by the driver, still fill. */
START_TEST(test_fill_no_kernel)
{
    const char *kernels = getenv("RAGGED_KERNEL_PATH");
    if (!kernels || !*kernels) {
        fprintf(stderr, "skipped: no RAGGED_KERNEL_PATH\n");
        return;
    }
    char dir[] = "/tmp/ragged-noscalar-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    test_setenv("RAGGED_KERNEL_PATH", dir);
    test_setenv("RAGGED_OPENCL_CPU_KERNELS", "0");
    rg_context *ctx = test_context(TEST_BACKEND_OPENCL);
    if (!ctx) { /* no OpenCL: skipped, the folder removed */
        rmdir(dir);
        return;
    }
    rg_array *a = test_array_filled(ctx, RG_INT32, 1000, 5);
    rg_array *b = test_array_filled(ctx, RG_BOOL, 1000, 0);
    int32_t nine = 9;
    rg_status st = rg_array_fill(a, &nine);
    rmdir(dir);
    ck_assert_msg(st == RG_ENOKERNEL, "fill without scalar.cl: %d %s", (int)st,
                  rg_context_error(ctx));
    ck_assert_msg(test_contains(rg_context_error(ctx), "scalar.cl"), "message: %s",
                  rg_context_error(ctx));
    test_expect_filled(a, 5, "refused fill");
    uint8_t yes = 1;
    ck_assert_int_eq(rg_array_fill(b, &yes), RG_OK);
    test_expect_filled(b, 1, "bool fill");
    rg_array_free(b);
    rg_array_free(a);
    rg_context_free(ctx);
}
END_TEST

/* A fill of 32 MiB or more is streamed on the OpenMP backend (a 16-byte
 * pattern of the value, the unaligned ends stored one element at a time),
 * or stored plainly with RAGGED_OMP_STREAM=0 (read at each op): every
 * element of every width holds the value's bytes, with 1 to 3 threads
 * cutting the array at odd places. */
START_TEST(test_fill_streamed)
{
    int b = test_backend_plain(_i);
    TEST_CONTEXT(ctx, b);
    const rg_dtype types[4] = {RG_UINT8, RG_INT16, RG_UINT32, RG_INT64};
    const uint64_t value = 0x0102030405060708u; /* distinct bytes: a shifted pattern shows */
    for (int round = 0, nthreads; round < 4 && (nthreads = test_threads(round % 3 + round / 3)) > 0;
         round++) {
        if (round == 3 && b != TEST_BACKEND_OPENMP)
            break;
        if (round == 3)
            test_setenv("RAGGED_OMP_STREAM", "0");
        for (int t = 0; t < 4; t++) {
            size_t size = rg_dtype_size(types[t]);
            size_t n = ((size_t)32 << 20) / size + 13 + (size_t)round;
            rg_array *a = test_array_filled(ctx, types[t], n, 0);
            ck_assert_int_eq(rg_array_fill(a, &value), RG_OK); /* the low bytes, little-endian */
            unsigned char *got = malloc(n * size);
            ck_assert_ptr_nonnull(got);
            ck_assert_int_eq(rg_array_read(got, a, 0, n), RG_OK);
            size_t k = 0; /* one assertion per check: check logs every one it evaluates */
            while (k < n && memcmp(got + k * size, &value, size) == 0)
                k++;
            ck_assert_msg(k == n, "%s fill of %zu elements, %d threads%s: element %zu differs",
                          rg_dtype_name(types[t]), n, nthreads,
                          round == 3 ? ", plain stores" : "", k);
            free(got);
            rg_array_free(a);
        }
    }
    test_unsetenv("RAGGED_OMP_STREAM");
    test_threads_restore();
    rg_context_free(ctx);
}
END_TEST

/* Arrays from 32 MiB up have storage of their own on the OpenMP backend (a
 * mapping with huge pages): created zeroed, written, and grown by a list
 * (moved by mremap, the grown part zero) they must behave as any other. */
START_TEST(test_big_storage)
{
    TEST_CONTEXT(ctx, _i);
    size_t n = ((size_t)33 << 20) / 8 + 3; /* not a whole number of pages */
    rg_array *a = NULL;
    ck_assert_int_eq(rg_array_create(&a, ctx, RG_INT64, n), RG_OK);
    int64_t *got = malloc(n * sizeof *got);
    ck_assert_ptr_nonnull(got);
    ck_assert_int_eq(rg_array_read(got, a, 0, n), RG_OK);
    size_t k = 0; /* one assertion per check: check logs every one it evaluates */
    while (k < n && got[k] == 0)
        k++;
    ck_assert_msg(k == n, "big zeroed array: element %zu is not 0", k);
    for (k = 0; k < n; k++)
        got[k] = (int64_t)k * 3;
    ck_assert_int_eq(rg_array_write(a, 0, got, n), RG_OK);
    memset(got, 0, n * sizeof *got);
    ck_assert_int_eq(rg_array_read(got, a, 0, n), RG_OK);
    for (k = 0; k < n && got[k] == (int64_t)k * 3; k++)
        ;
    ck_assert_msg(k == n, "big array: element %zu reads %lld", k, (long long)got[k]);
    rg_array_free(a);

    /* A list of int64 items of 1 Mi elements, reserved at 36 MiB, grown to 80 MiB. */
    size_t item = (size_t)1 << 20, items = 10;
    rg_list *list = NULL;
    ck_assert_int_eq(rg_list_create(&list, ctx, RG_INT64, 9 * item / 2), RG_OK);
    for (size_t i = 0; i < items; i++) {
        for (k = 0; k < item; k++)
            got[k] = (int64_t)(i * item + k);
        ck_assert_int_eq(rg_list_append(list, got, item), RG_OK);
    }
    ck_assert_uint_eq(rg_list_nelems(list), items * item);
    for (size_t i = 0; i < items; i++) {
        size_t length = 0;
        ck_assert_int_eq(rg_list_get(got, item, &length, list, (ptrdiff_t)i), RG_OK);
        ck_assert_uint_eq(length, item);
        for (k = 0; k < item && got[k] == (int64_t)(i * item + k); k++)
            ;
        ck_assert_msg(k == item, "big list: item %zu element %zu reads %lld", i, k,
                      (long long)got[k]);
    }
    rg_list_free(list);
    free(got);
    rg_context_free(ctx);
}
END_TEST

/* The OpenMP backend keeps the storage of the largest big array freed last
 * for the next big array made from host data or as a result.  Arrays made
 * from host data after bigger and smaller ones were freed read back what
 * was written; an array created zeroed after one was freed is all zero
 * (the kept storage holds old values, so it must not serve there). */
START_TEST(test_storage_reuse)
{
    TEST_CONTEXT(ctx, _i);
    static const size_t mib[] = {48, 40, 64, 33, 40, 1};
    size_t most = ((size_t)64 << 20) / 8 + 8; /* the largest n below */
    int64_t *buf = malloc(most * sizeof *buf), *got = malloc(most * sizeof *got);
    ck_assert(buf && got);
    for (size_t r = 0; r < sizeof mib / sizeof *mib; r++) {
        size_t n = (mib[r] << 20) / 8 + r; /* not a whole number of pages */
        for (size_t k = 0; k < n; k++)
            buf[k] = (int64_t)(k * 7 + r);
        rg_array *a = NULL;
        ck_assert_int_eq(rg_array_from_host(&a, ctx, RG_INT64, buf, n), RG_OK);
        ck_assert_int_eq(rg_array_read(got, a, 0, n), RG_OK);
        size_t k = 0; /* one assertion per check: check logs every one it evaluates */
        while (k < n && got[k] == buf[k])
            k++;
        ck_assert_msg(k == n, "array %zu (%zu MiB) from host: element %zu reads %lld", r,
                      mib[r], k, (long long)got[k]);
        rg_array_free(a);

        ck_assert_int_eq(rg_array_create(&a, ctx, RG_INT64, n), RG_OK);
        ck_assert_int_eq(rg_array_read(got, a, 0, n), RG_OK);
        for (k = 0; k < n && got[k] == 0; k++)
            ;
        ck_assert_msg(k == n, "zeroed array %zu (%zu MiB) after a free: element %zu is %lld",
                      r, mib[r], k, (long long)got[k]);
        rg_array_free(a);
    }
    free(got);
    free(buf);
    rg_context_free(ctx);
}
END_TEST

Suite *array_suite(void)
{
    Suite *s = test_suite("array");

    TCase *tc = test_tcase("basics");
    tcase_add_test(tc, test_dtype_info);
    tcase_add_loop_test(tc, test_create_zeroed, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_from_host_every_dtype, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_write_read_ranges, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_length_zero, 0, TEST_NBACKENDS);
    suite_add_tcase(s, tc);

    tc = test_tcase("errors");
    tcase_add_loop_test(tc, test_out_of_range, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_null_args, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_unknown_dtype, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_size_overflow, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_huge_alloc, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_foreign_context, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_fill_copy, 0, TEST_NBACKENDS_GPU_KERNELS);
    tcase_add_loop_test(tc, test_fill_streamed, 0, TEST_NBACKENDS_GPU_KERNELS);
    tcase_add_test(tc, test_fill_no_kernel);
    tcase_add_loop_test(tc, test_big_storage, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_storage_reuse, 0, TEST_NBACKENDS);
    suite_add_tcase(s, tc);

    return s;
}
