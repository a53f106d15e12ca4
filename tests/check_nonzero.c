/* check_nonzero.c — count_nonzero, nonzero, nonzero_into and segment_nonzero: every dtype, densities, shapes, bounds, errors. */
#define _POSIX_C_SOURCE 200809L

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"


#define N_DTYPES 11
static const rg_dtype all_dtypes[N_DTYPES] = {RG_BOOL,   RG_INT8,   RG_INT16,  RG_INT32,
                                              RG_INT64,  RG_UINT8,  RG_UINT16, RG_UINT32,
                                              RG_UINT64, RG_FLOAT32, RG_FLOAT64};

/* ---- inputs and the sequential reference --------------------------------- */

/* The reference's own test, in each dtype's C arithmetic (not the library's masks). */
static int is_nonzero(rg_dtype dtype, const unsigned char *p)
{
    switch (dtype) {
    case RG_BOOL:
    case RG_UINT8: { uint8_t x; memcpy(&x, p, 1); return x != 0; }
    case RG_INT8: { int8_t x; memcpy(&x, p, 1); return x != 0; }
    case RG_INT16: { int16_t x; memcpy(&x, p, 2); return x != 0; }
    case RG_UINT16: { uint16_t x; memcpy(&x, p, 2); return x != 0; }
    case RG_INT32: { int32_t x; memcpy(&x, p, 4); return x != 0; }
    case RG_UINT32: { uint32_t x; memcpy(&x, p, 4); return x != 0; }
    case RG_INT64: { int64_t x; memcpy(&x, p, 8); return x != 0; }
    case RG_UINT64: { uint64_t x; memcpy(&x, p, 8); return x != 0; }
    case RG_FLOAT32: { float x; memcpy(&x, p, 4); return x != 0.0f; }
    case RG_FLOAT64: { double x; memcpy(&x, p, 8); return x != 0.0; }
    }
    ck_abort_msg("is_nonzero: dtype %d", (int)dtype);
    return 0;
}

/* Stores one zero (want == 0) or one non-zero value of dtype at p, drawn
 * from awkward cases: -0.0, NaN, infinities, subnormals, lone high bits. */
static void put_value(rg_dtype dtype, unsigned char *p, int want, uint64_t *state)
{
    uint64_t r = test_rand(state);
    size_t size = rg_dtype_size(dtype);
    if (dtype == RG_FLOAT32) {
        static const float zeros[2] = {0.0f, -0.0f};
        const float nonzeros[8] = {1.5f, -2.0f, NAN, -NAN, INFINITY, -INFINITY, FLT_TRUE_MIN,
                                   -FLT_MIN / 4};
        float x = want ? nonzeros[r % 8] : zeros[r % 2];
        memcpy(p, &x, 4);
    } else if (dtype == RG_FLOAT64) {
        static const double zeros[2] = {0.0, -0.0};
        const double nonzeros[8] = {1e300, -3.25, NAN, -NAN, INFINITY, -INFINITY, DBL_TRUE_MIN,
                                    -DBL_MIN / 8};
        double x = want ? nonzeros[r % 8] : zeros[r % 2];
        memcpy(p, &x, 8);
    } else if (dtype == RG_BOOL) {
        *p = want != 0;
    } else {
        /* Random bits, or only the top bit (the sign of a signed type). */
        uint64_t v = 0;
        if (want) {
            v = (r >> 8) % 4 == 0 ? (uint64_t)1 << (8 * size - 1) : r;
            if (size < 8)
                v &= ((uint64_t)1 << (8 * size)) - 1;
            if (v == 0)
                v = 1;
        }
        memcpy(p, &v, size); /* little-endian: the low bytes */
    }
}

/* n elements of dtype, each non-zero with probability permille / 1000. */
static unsigned char *gen_input(rg_dtype dtype, size_t n, int permille, uint64_t seed)
{
    size_t size = rg_dtype_size(dtype);
    unsigned char *buf = malloc(n * size + size);
    ck_assert_ptr_nonnull(buf);
    uint64_t state = seed * 0x9E3779B97F4A7C15ull + (uint64_t)dtype;
    for (size_t k = 0; k < n; k++) {
        int want = (int)(test_rand(&state) % 1000) < permille;
        put_value(dtype, buf + k * size, want, &state);
    }
    return buf;
}

/* Row-major coordinates of the non-zeros (malloc'd, never NULL); *nnz gets the count. */
static int64_t *ref_nonzero(rg_dtype dtype, const unsigned char *buf, size_t n,
                            const int64_t *shape, size_t ndim, int64_t *nnz)
{
    size_t size = rg_dtype_size(dtype), count = 0;
    for (size_t k = 0; k < n; k++)
        count += (size_t)is_nonzero(dtype, buf + k * size);
    int64_t *out = malloc((count * ndim + 1) * sizeof *out);
    ck_assert_ptr_nonnull(out);
    size_t r = 0;
    for (size_t k = 0; k < n; k++) {
        if (!is_nonzero(dtype, buf + k * size))
            continue;
        int64_t rest = (int64_t)k;
        for (size_t d = ndim; d-- > 0;) {
            out[r * ndim + d] = rest % shape[d];
            rest /= shape[d];
        }
        r++;
    }
    *nnz = (int64_t)count;
    return out;
}

static rg_array *array_from_raw(rg_context *ctx, rg_dtype dtype, const void *buf, size_t n)
{
    rg_array *a = NULL;
    rg_status st = rg_array_from_host(&a, ctx, dtype, buf, n);
    ck_assert_msg(st == RG_OK, "rg_array_from_host(%s, %zu): %d %s", rg_dtype_name(dtype), n,
                  (int)st, rg_context_error(ctx));
    return a;
}

/* Reads an int64 array whole (at least one slot). */
static int64_t *read_all(const rg_array *a)
{
    size_t n = rg_array_length(a);
    int64_t *out = malloc((n + 1) * sizeof *out);
    ck_assert_ptr_nonnull(out);
    rg_status st = rg_array_read(out, a, 0, n);
    ck_assert_msg(st == RG_OK, "rg_array_read: %d %s", (int)st,
                  rg_context_error(rg_array_context(a)));
    return out;
}

/* rg_nonzero with one bound, compared with the reference. */
static void expect_coords(rg_context *ctx, const rg_array *a, const int64_t *shape, size_t ndim,
                          int64_t bound, const int64_t *want, int64_t want_nnz, const char *what)
{
    rg_array *coords = NULL;
    int64_t nnz = -5;
    rg_status st = rg_nonzero(&coords, &nnz, a, shape, ndim, bound);
    ck_assert_msg(st == RG_OK, "%s, bound %lld: %d (%s) %s", what, (long long)bound, (int)st,
                  rg_strerror(st), rg_context_error(ctx));
    ck_assert_msg(nnz == want_nnz, "%s, bound %lld: nnz %lld, expected %lld", what,
                  (long long)bound, (long long)nnz, (long long)want_nnz);
    ck_assert_int_eq(rg_array_dtype(coords), RG_INT64);
    ck_assert_msg(rg_array_length(coords) == (size_t)want_nnz * ndim,
                  "%s, bound %lld: %zu coordinates, expected %lld", what, (long long)bound,
                  rg_array_length(coords), (long long)want_nnz * (long long)ndim);
    char label[256];
    snprintf(label, sizeof label, "%s, bound %lld", what, (long long)bound);
    test_expect_array(coords, want, (size_t)want_nnz * ndim, label);
    rg_array_free(coords);
}

/* rg_nonzero_into a coords array of room elements filled with -7: the rows
 * at its start, the rest still -7; with too little room RG_ERANGE, the real
 * count in the message and coords and nnz untouched. */
static void expect_into(rg_context *ctx, const rg_array *a, const int64_t *shape, size_t ndim,
                        size_t room, const int64_t *want, int64_t want_nnz, const char *what)
{
    rg_array *coords = NULL;
    const int64_t sentinel = -7;
    ck_assert_int_eq(rg_array_create(&coords, ctx, RG_INT64, room), RG_OK);
    if (room > 0)
        ck_assert_int_eq(rg_array_fill(coords, &sentinel), RG_OK);
    int64_t nnz = -5;
    rg_status st = rg_nonzero_into(coords, &nnz, a, shape, ndim);
    size_t rows = (size_t)want_nnz * ndim;
    int64_t *got = read_all(coords);
    char label[300];
    snprintf(label, sizeof label, "%s, into room %zu", what, room);
    if (room >= rows) {
        ck_assert_msg(st == RG_OK, "%s: %d (%s) %s", label, (int)st, rg_strerror(st),
                      rg_context_error(ctx));
        ck_assert_msg(nnz == want_nnz, "%s: nnz %lld, expected %lld", label, (long long)nnz,
                      (long long)want_nnz);
        test_expect_i64(got, want, rows, label);
    } else {
        ck_assert_msg(st == RG_ERANGE, "%s: %d (%s), expected RG_ERANGE", label, (int)st,
                      rg_strerror(st));
        ck_assert_msg(nnz == -5, "%s: nnz written on RG_ERANGE", label);
        char count[32];
        snprintf(count, sizeof count, "%lld non-zero", (long long)want_nnz);
        ck_assert_msg(test_contains(rg_context_error(ctx), count), "%s: message \"%s\"", label,
                      rg_context_error(ctx));
        rows = 0;
    }
    size_t i = rows; /* one assertion: check logs every one it evaluates */
    while (i < room && got[i] == sentinel)
        i++;
    ck_assert_msg(i == room, "%s: element %zu past the rows changed to %lld", label, i,
                  (long long)(i < room ? got[i] : 0));
    free(got);
    rg_array_free(coords);
}

/* Count, nonzero without a bound, with exact and loose bounds, and a bound
 * one too small (RG_ERANGE, outputs untouched); nonzero_into with exact
 * room, room for every element, and one row too little. */
static void check_nonzero(rg_context *ctx, rg_dtype dtype, const unsigned char *buf, size_t n,
                          const int64_t *shape, size_t ndim, const char *what)
{
    char label[256];
    snprintf(label, sizeof label, "%s: %s, %zu elements, %zu-D", rg_backend_name(
             rg_context_backend(ctx)), rg_dtype_name(dtype), n, ndim);
    snprintf(label + strlen(label), sizeof label - strlen(label), " (%s)", what);
    int64_t want_nnz = 0;
    int64_t *want = ref_nonzero(dtype, buf, n, shape, ndim, &want_nnz);
    rg_array *a = array_from_raw(ctx, dtype, buf, n);

    int64_t count = -5;
    rg_status st = rg_count_nonzero(&count, a);
    ck_assert_msg(st == RG_OK, "%s: count %d %s", label, (int)st, rg_context_error(ctx));
    ck_assert_msg(count == want_nnz, "%s: count %lld, expected %lld", label, (long long)count,
                  (long long)want_nnz);

    expect_coords(ctx, a, shape, ndim, -1, want, want_nnz, label);
    expect_coords(ctx, a, shape, ndim, want_nnz, want, want_nnz, label);
    expect_coords(ctx, a, shape, ndim, want_nnz + 3, want, want_nnz, label);
    expect_coords(ctx, a, shape, ndim, INT64_MAX, want, want_nnz, label);
    if (want_nnz > 0) {
        rg_array *coords = a; /* any pointer: it must come back unchanged */
        int64_t nnz = -5;
        st = rg_nonzero(&coords, &nnz, a, shape, ndim, want_nnz - 1);
        ck_assert_msg(st == RG_ERANGE, "%s: bound nnz - 1 gave %d (%s)", label, (int)st,
                      rg_strerror(st));
        ck_assert_msg(coords == a && nnz == -5, "%s: outputs written on RG_ERANGE", label);
        ck_assert_msg(test_contains(rg_context_error(ctx), "non-zero"), "%s: message \"%s\"",
                      label, rg_context_error(ctx));
    }
    expect_into(ctx, a, shape, ndim, (size_t)want_nnz * ndim, want, want_nnz, label);
    if (n * ndim <= (size_t)1 << 23) /* the big inputs would fill and read 100s of MB */
        expect_into(ctx, a, shape, ndim, n * ndim + 5, want, want_nnz, label);
    if (want_nnz > 0)
        expect_into(ctx, a, shape, ndim, (size_t)(want_nnz - 1) * ndim + ndim - 1, want,
                    want_nnz, label);
    free(want);
    rg_array_free(a);
}

/* ---- every dtype at every density ---------------------------------------- */

static const int densities[] = {0, 10, 500, 990, 1000}; /* permille */

START_TEST(test_nonzero_dtypes)
{
    TEST_CONTEXT(ctx, _i / N_DTYPES);
    rg_dtype dtype = all_dtypes[_i % N_DTYPES];
    const int64_t flat[1] = {10007}, cube[3] = {7, 11, 131}, tiny[2] = {37, 1};
    for (size_t d = 0; d < sizeof densities / sizeof *densities; d++) {
        char what[64];
        snprintf(what, sizeof what, "density %d/1000", densities[d]);
        unsigned char *buf = gen_input(dtype, 10087, densities[d], 11 + d);
        check_nonzero(ctx, dtype, buf, 10007, flat, 1, what);
        check_nonzero(ctx, dtype, buf, 10087, cube, 3, what);
        check_nonzero(ctx, dtype, buf, 37, tiny, 2, what);
        free(buf);
    }
    rg_context_free(ctx);
}
END_TEST

/* Work-groups of 1 to 32 work-items (RAGGED_OPENCL_MAX_GROUP_SIZE), as on a
 * device with a small limit, on OpenCL with both kernel variants: below 32
 * the GPUs' count kernel gives way to whole words per work-item.  Inputs
 * of many tiles and chunks, every element size, 1 to 3 dimensions. */
START_TEST(test_nonzero_small_groups)
{
    static const char *const sizes[] = {"1", "2", "8", "32"};
    int backend = _i / 4 ? test_backend_plain(TEST_NBACKENDS + 1) : TEST_BACKEND_OPENCL;
    test_unsetenv("RAGGED_OPENCL_MAX_GROUPS");
    test_setenv("RAGGED_OPENCL_MAX_GROUP_SIZE", sizes[_i % 4]);
    TEST_CONTEXT(ctx, backend);
    static const rg_dtype types[4] = {RG_UINT8, RG_INT16, RG_FLOAT32, RG_FLOAT64};
    const int64_t flat[1] = {70001}, cube[3] = {13, 61, 89};
    for (size_t t = 0; t < 4; t++) {
        for (size_t d = 1; d < 4; d++) { /* 1%, 50%, 99% */
            char what[64];
            snprintf(what, sizeof what, "work-groups of at most %s, density %d/1000",
                     sizes[_i % 4], densities[d]);
            unsigned char *buf = gen_input(types[t], 70601, densities[d], 40 + t * 4 + d);
            check_nonzero(ctx, types[t], buf, 70001, flat, 1, what);
            check_nonzero(ctx, types[t], buf, 70577, cube, 3, what);
            free(buf);
        }
    }
    rg_context_free(ctx);
}
END_TEST

/* ---- shapes: 1 to 8 dimensions and more, size-1 and size-0 ---------------- */

START_TEST(test_nonzero_shapes)
{
    TEST_CONTEXT(ctx, test_backend_plain(_i));
    uint64_t state = 77;
    for (size_t ndim = 1; ndim <= 8; ndim++) {
        for (int rep = 0; rep < 3; rep++) {
            int64_t shape[8];
            size_t n = 1;
            for (size_t d = 0; d < ndim; d++) {
                /* Size-1 dimensions often; the total stays under ~60000. */
                uint64_t r = test_rand(&state);
                shape[d] = r % 3 == 0 ? 1 : 1 + (int64_t)(r >> 8) % (ndim <= 3 ? 40 : 5);
                n *= (size_t)shape[d];
            }
            rg_dtype dtype = rep == 0 ? RG_INT16 : rep == 1 ? RG_FLOAT64 : RG_UINT32;
            unsigned char *buf = gen_input(dtype, n, rep == 2 ? 900 : 300, ndim * 10 + rep);
            check_nonzero(ctx, dtype, buf, n, shape, ndim, "random shape");
            free(buf);
        }
    }
    /* Past TensorFlow's 8: 12 and RG_NONZERO_MAX_DIMS dimensions. */
    int64_t many[RG_NONZERO_MAX_DIMS];
    for (size_t d = 0; d < RG_NONZERO_MAX_DIMS; d++)
        many[d] = d % 3 == 0 ? 2 : 1;
    unsigned char *buf = gen_input(RG_INT8, 4096, 500, 5);
    check_nonzero(ctx, RG_INT8, buf, 2048, many, RG_NONZERO_MAX_DIMS, "32 dimensions");
    const int64_t twelve[12] = {2, 1, 3, 2, 1, 2, 2, 1, 2, 2, 2, 2};
    check_nonzero(ctx, RG_INT8, buf, 768, twelve, 12, "12 dimensions");
    free(buf);

    /* Size-0 dimensions: an empty input, nnz 0, an empty result. */
    const int64_t zero_shapes[3][4] = {{0, 0, 0, 0}, {3, 0, 4, 0}, {5, 7, 1, 0}};
    const size_t zero_ndims[3] = {1, 3, 4};
    for (int z = 0; z < 3; z++) {
        for (int t = 0; t < 2; t++) {
            rg_array *a = NULL;
            ck_assert_int_eq(rg_array_create(&a, ctx, t ? RG_FLOAT32 : RG_BOOL, 0), RG_OK);
            rg_array *coords = NULL;
            int64_t nnz = -5, count = -5;
            ck_assert_int_eq(rg_count_nonzero(&count, a), RG_OK);
            ck_assert_int_eq(count, 0);
            for (int bound = -1; bound <= 1; bound++) {
                rg_status st = rg_nonzero(&coords, &nnz, a, zero_shapes[z], zero_ndims[z], bound);
                ck_assert_msg(st == RG_OK, "empty input, shape %d: %d %s", z, (int)st,
                              rg_context_error(ctx));
                ck_assert_int_eq(nnz, 0);
                ck_assert_uint_eq(rg_array_length(coords), 0);
                rg_array_free(coords);
            }
            rg_array_free(a);
        }
    }
    rg_context_free(ctx);
}
END_TEST

/* ---- NaN, -0.0 and other edge values, checked by hand -------------------- */

START_TEST(test_nonzero_special)
{
    TEST_CONTEXT(ctx, test_backend_plain(_i));
    const float f[10] = {0.0f, -0.0f, NAN, -0.0f, INFINITY, FLT_TRUE_MIN, 0.0f, -NAN, -1.0f, -0.0f};
    const double d[10] = {-0.0, 0.0, DBL_TRUE_MIN, -0.0, -INFINITY, 0.0, NAN, 0.0, -DBL_TRUE_MIN,
                          -0.0};
    const int64_t want_f[5] = {2, 4, 5, 7, 8}, want_d[4] = {2, 4, 6, 8};
    const int64_t shape[1] = {10};
    struct {
        rg_dtype dtype;
        const void *data;
        const int64_t *want;
        int64_t nnz;
    } cases[] = {{RG_FLOAT32, f, want_f, 5}, {RG_FLOAT64, d, want_d, 4}};
    for (int c = 0; c < 2; c++) {
        rg_array *a = array_from_raw(ctx, cases[c].dtype, cases[c].data, 10);
        expect_coords(ctx, a, shape, 1, -1, cases[c].want, cases[c].nnz, "NaN and -0.0");
        rg_array_free(a);
    }
    /* Integers whose only set bit is the top one. */
    const int8_t i8[4] = {0, INT8_MIN, 0, 1};
    const int64_t i64[4] = {INT64_MIN, 0, 0, -1};
    const uint64_t u64[4] = {0, 0, (uint64_t)1 << 63, 0};
    const uint16_t u16[4] = {0x8000, 0, 0, 0};
    const int64_t want_i8[2] = {1, 3}, want_i64[2] = {0, 3}, want_u64[1] = {2},
                  want_u16[1] = {0};
    const int64_t shape4[1] = {4};
    struct {
        rg_dtype dtype;
        const void *data;
        const int64_t *want;
        int64_t nnz;
    } ints[] = {{RG_INT8, i8, want_i8, 2},
                {RG_INT64, i64, want_i64, 2},
                {RG_UINT64, u64, want_u64, 1},
                {RG_UINT16, u16, want_u16, 1}};
    for (int c = 0; c < 4; c++) {
        rg_array *a = array_from_raw(ctx, ints[c].dtype, ints[c].data, 4);
        expect_coords(ctx, a, shape4, 1, -1, ints[c].want, ints[c].nnz, "top bit only");
        rg_array_free(a);
    }
    rg_context_free(ctx);
}
END_TEST

/* ---- past 2^24 elements --------------------------------------------------- */

/* On each backend, and on OpenMP with AVX-512 off (no compress stores). */
START_TEST(test_nonzero_big)
{
    TEST_CONTEXT(ctx, test_backend_plain(_i));
    size_t n = ((size_t)1 << 24) + 4099;
    const int64_t flat[1] = {(int64_t)n};
    unsigned char *buf = gen_input(RG_UINT8, n, 500, 1);
    check_nonzero(ctx, RG_UINT8, buf, n, flat, 1, "big, half");
    free(buf);

    const int64_t cube[3] = {4099, 64, 64}; /* 16 789 504 elements */
    n = 4099 * 64 * 64;
    buf = gen_input(RG_FLOAT32, n, 10, 2);
    check_nonzero(ctx, RG_FLOAT32, buf, n, cube, 3, "big, sparse");
    free(buf);
    rg_context_free(ctx);
}
END_TEST

/* ---- results bounded past 32 MiB, trimmed to few rows ----------------------- */

/* segment_nonzero of content split at cuts[0 .. ncuts): the offsets and the
 * positions must match the sequential reference. */
static void expect_segment_nonzero(rg_context *ctx, const rg_array *content,
                                   const unsigned char *buf, size_t n, const int64_t *cuts,
                                   size_t ncuts, const char *what)
{
    rg_array *offsets = test_array_from_i64(ctx, RG_INT64, cuts, ncuts);
    rg_array *so = NULL, *pos = NULL;
    rg_status st = rg_segment_nonzero(&so, &pos, content, offsets);
    ck_assert_msg(st == RG_OK, "%s: segment_nonzero %d (%s) %s", what, (int)st, rg_strerror(st),
                  rg_context_error(ctx));
    int64_t *want_off = malloc(ncuts * sizeof *want_off), *want_pos = malloc((n + 1) * 8);
    ck_assert_ptr_nonnull(want_off);
    ck_assert_ptr_nonnull(want_pos);
    size_t count = 0;
    want_off[0] = 0;
    for (size_t i = 0; i + 1 < ncuts; i++) {
        for (int64_t k = cuts[i]; k < cuts[i + 1]; k++)
            if (buf[k] != 0)
                want_pos[count++] = k - cuts[i];
        want_off[i + 1] = (int64_t)count;
    }
    ck_assert_msg(rg_array_length(so) == ncuts, "%s: %zu segment offsets, expected %zu", what,
                  rg_array_length(so), ncuts);
    ck_assert_msg(rg_array_length(pos) == count, "%s: %zu positions, expected %zu", what,
                  rg_array_length(pos), count);
    int64_t *got = read_all(so);
    char label[200];
    snprintf(label, sizeof label, "%s: segment offsets", what);
    test_expect_i64(got, want_off, ncuts, label);
    free(got);
    got = read_all(pos);
    snprintf(label, sizeof label, "%s: positions", what);
    test_expect_i64(got, want_pos, count, label);
    free(got);
    free(want_off);
    free(want_pos);
    rg_array_free(so);
    rg_array_free(pos);
    rg_array_free(offsets);
}

/* An input of 5 Mi bytes whose nnz bound (its length) means 40 MiB of int64
 * rows: room the OpenCL backend allocates before it counts, and the size
 * from which the OpenMP backend maps storage with huge pages.  With 0, 1,
 * 513 (4104 bytes: one page and a bit) and 4 Mi + 3 non-zeros (32 MiB + 24
 * bytes, mapped, not a whole number of pages) the result shrinks to the
 * exact rows, which must read back right and be freed cleanly.  (The OpenMP
 * backend counts first and allocates exactly, so there the 32 MiB + 24 byte
 * result is mapped and released but never trimmed.) */
START_TEST(test_nonzero_sparse_big)
{
    TEST_CONTEXT(ctx, _i);
    const size_t n = (size_t)5 << 20;
    const size_t counts[] = {0, 1, 513, ((size_t)4 << 20) + 3};
    unsigned char *buf = malloc(n);
    int64_t *want = malloc(2 * n * sizeof *want);
    ck_assert_ptr_nonnull(buf);
    ck_assert_ptr_nonnull(want);
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        size_t count = counts[c];
        /* count non-zeros spread over the input; the last one near the end */
        memset(buf, 0, n);
        if (count > 0) {
            for (size_t j = 0; j < count; j++)
                buf[(size_t)((unsigned __int128)j * (n - 1) / count) + (n - 1) / count] =
                    (unsigned char)(1 + j % 255);
        }
        size_t nnz = 0;
        for (size_t k = 0; k < n; k++)
            nnz += buf[k] != 0;
        ck_assert_uint_eq(nnz, count);
        rg_array *a = array_from_raw(ctx, RG_UINT8, buf, n);
        char what[96];
        snprintf(what, sizeof what, "5 Mi bytes, %zu non-zero", count);

        const int64_t flat[1] = {(int64_t)n}, rows[2] = {(int64_t)n / 1024, 1024};
        size_t r = 0;
        for (size_t k = 0; k < n; k++)
            if (buf[k] != 0)
                want[r++] = (int64_t)k;
        expect_coords(ctx, a, flat, 1, (int64_t)n, want, (int64_t)count, what);
        expect_coords(ctx, a, flat, 1, (int64_t)count, want, (int64_t)count, what);
        expect_coords(ctx, a, flat, 1, -1, want, (int64_t)count, what);
        r = 0;
        for (size_t k = 0; k < n; k++)
            if (buf[k] != 0) {
                want[r++] = (int64_t)(k / 1024);
                want[r++] = (int64_t)(k % 1024);
            }
        expect_coords(ctx, a, rows, 2, (int64_t)n, want, (int64_t)count, what);

        const int64_t one[2] = {0, (int64_t)n};
        expect_segment_nonzero(ctx, a, buf, n, one, 2, what);
        const int64_t cuts[6] = {0, 1000, 1000, (int64_t)n / 2 + 7, (int64_t)n - 3, (int64_t)n};
        expect_segment_nonzero(ctx, a, buf, n, cuts, 6, what);
        rg_array_free(a);
    }
    free(want);
    free(buf);
    rg_context_free(ctx);
}
END_TEST

/* ---- the OpenMP passes' edges --------------------------------------------- */

/* Sizes around the OpenMP backend's serial/parallel threshold (2^15) and its
 * 512-element blocks, densities around the writer's sparse switch (1/8),
 * and a dense float64 result of 40 MB (streamed stores, mapped storage). */
START_TEST(test_nonzero_parts)
{
    TEST_CONTEXT(ctx, _i);
    static const size_t sizes[] = {32767, 32768, 32769, 65536 + 511, 3 * 65536 + 8 * 512 + 7};
    static const int permilles[] = {0, 1, 10, 120, 125, 130, 500, 990, 1000};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (size_t j = 0; j < sizeof permilles / sizeof *permilles; j++) {
            size_t n = sizes[i];
            unsigned char *buf = gen_input(RG_FLOAT64, n, permilles[j], 7 + i * 16 + j);
            char what[64];
            snprintf(what, sizeof what, "parts, %d permille", permilles[j]);
            const int64_t flat[1] = {(int64_t)n}, rows[2] = {(int64_t)n / 7, 7};
            check_nonzero(ctx, RG_FLOAT64, buf, n, flat, 1, what);
            if (n % 7 == 0)
                check_nonzero(ctx, RG_FLOAT64, buf, n, rows, 2, what);
            const int64_t odd[3] = {1, (int64_t)n, 1};
            check_nonzero(ctx, RG_FLOAT64, buf, n, odd, 3, what);
            free(buf);
        }
    size_t n = (size_t)5 << 20;
    const int64_t flat[1] = {(int64_t)n};
    unsigned char *buf = gen_input(RG_FLOAT64, n, 990, 3);
    check_nonzero(ctx, RG_FLOAT64, buf, n, flat, 1, "big, dense");
    free(buf);
    rg_context_free(ctx);
}
END_TEST

/* ---- indices kept by the OpenMP first pass ------------------------------- */

/* An input whose density changes along it: piece j of 8 has permilles[j]. */
static unsigned char *gen_pieces(rg_dtype dtype, size_t n, const int *permilles, uint64_t seed)
{
    size_t size = rg_dtype_size(dtype);
    unsigned char *buf = malloc(n * size + size);
    ck_assert_ptr_nonnull(buf);
    for (int j = 0; j < 8; j++) {
        size_t b = n * (size_t)j / 8, e = n * (size_t)(j + 1) / 8;
        unsigned char *piece = gen_input(dtype, e - b, permilles[j], seed + (uint64_t)j);
        memcpy(buf + b * size, piece, (e - b) * size);
        free(piece);
    }
    return buf;
}

/* The OpenMP first pass keeps the indices it finds, in a buffer of up to an
 * eighth of the part's bytes, while they stay sparse; the second pass reads
 * on from where it stopped.  Densities that change along the input stop it
 * early, late or never, or skip it (a dense first step), in some parts and
 * not others; every thread count moves the parts. */
START_TEST(test_nonzero_kept)
{
    TEST_CONTEXT(ctx, _i);
    static const int patterns[][8] = {
        {0, 0, 0, 0, 0, 0, 0, 1000},         {1000, 0, 0, 0, 0, 0, 0, 0},
        {10, 10, 10, 10, 10, 10, 10, 10},    {200, 10, 500, 0, 990, 0, 50, 300},
        {125, 125, 125, 125, 125, 125, 125, 125}, {0, 990, 0, 990, 0, 990, 0, 990},
    };
    static const rg_dtype dtypes[] = {RG_FLOAT64, RG_INT16, RG_UINT8};
    int rounds = test_thread_rounds(ctx);
    for (int round = 0, nthreads; round < rounds && (nthreads = test_threads(round)) > 0;
         round++) {
        for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
            /* parts big enough to keep indices: 32768 float64, 262144 uint8 */
            size_t n = dtypes[d] == RG_UINT8 ? ((size_t)1 << 20) + 2 : 400000 + 8;
            for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
                unsigned char *buf = gen_pieces(dtypes[d], n, patterns[p], 31 * p + d);
                char what[64];
                snprintf(what, sizeof what, "kept indices, pattern %zu, %d threads", p,
                         nthreads);
                const int64_t flat[1] = {(int64_t)n}, rows[2] = {(int64_t)n / 2, 2},
                              cube[3] = {2, (int64_t)n / 6, 3};
                check_nonzero(ctx, dtypes[d], buf, n, flat, 1, what);
                if (p % 2 == 0)
                    check_nonzero(ctx, dtypes[d], buf, n, rows, 2, what);
                else
                    check_nonzero(ctx, dtypes[d], buf, n, cube, 3, what);
                free(buf);
            }
        }
    }
    test_threads_restore();
    rg_context_free(ctx);
}
END_TEST

/* rg_nonzero again after its last result was freed, on one input array
 * rewritten each time.  On OpenMP a dense input is then done in one pass,
 * into the storage that result leaves (large arrays only: results of
 * 32 MiB and more here), if it holds nearly as many rows as the first
 * block predicts; rows past it are written after the pass into grown
 * storage.  The densities below fit that storage, overflow it late in the
 * input, shrink well inside it, or predict too many rows for it. */
START_TEST(test_nonzero_reused)
{
    TEST_CONTEXT(ctx, _i);
    static const int patterns[][8] = {
        {500, 500, 500, 500, 500, 500, 500, 500}, /* fresh: two passes */
        {500, 500, 500, 500, 500, 500, 500, 500}, /* about the same rows */
        {500, 500, 500, 500, 900, 900, 900, 900}, /* rows past the storage */
        {500, 100, 100, 100, 100, 100, 100, 100}, /* far fewer */
        {990, 990, 990, 990, 990, 990, 990, 990}, /* too many predicted */
        {990, 990, 990, 990, 990, 990, 990, 990}, /* then the same again */
    };
    size_t n = ((size_t)10 << 20) + 5; /* 80 MiB of float64 */
    const int64_t flat[1] = {(int64_t)n};
    rg_array *a = NULL;
    ck_assert_int_eq(rg_array_create(&a, ctx, RG_FLOAT64, n), RG_OK);
    int rounds = test_thread_rounds(ctx);
    for (int round = 0, nthreads; round < rounds && (nthreads = test_threads(round)) > 0;
         round++) {
        for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
            unsigned char *buf = gen_pieces(RG_FLOAT64, n, patterns[p], 7 * p + (size_t)round);
            ck_assert_int_eq(rg_array_write(a, 0, buf, n), RG_OK);
            int64_t want_nnz = 0;
            int64_t *want = ref_nonzero(RG_FLOAT64, buf, n, flat, 1, &want_nnz);
            char what[96];
            snprintf(what, sizeof what, "%s: reused storage, pattern %zu, %d threads",
                     rg_backend_name(rg_context_backend(ctx)), p, nthreads);
            expect_coords(ctx, a, flat, 1, -1, want, want_nnz, what);
            free(want);
            free(buf);
        }
    }
    test_threads_restore();
    rg_array_free(a);
    rg_context_free(ctx);
}
END_TEST

/* ---- errors --------------------------------------------------------------- */

/* rg_nonzero_into fails with want and leaves coords and nnz alone. */
static void expect_into_fails(rg_context *ctx, rg_array *coords, const rg_array *a,
                              const int64_t *shape, size_t ndim, rg_status want,
                              const char *needle, const char *what)
{
    int64_t nnz = -5;
    int64_t before[12];
    size_t room = rg_array_length(coords) < 12 ? rg_array_length(coords) : 12;
    ck_assert_int_eq(rg_array_read(before, coords, 0, room), RG_OK);
    rg_status st = rg_nonzero_into(coords, &nnz, a, shape, ndim);
    ck_assert_msg(st == want, "%s: %d (%s), expected %d (%s)", what, (int)st, rg_strerror(st),
                  (int)want, rg_strerror(want));
    ck_assert_msg(nnz == -5, "%s: nnz written on error", what);
    int64_t after[12];
    ck_assert_int_eq(rg_array_read(after, coords, 0, room), RG_OK);
    ck_assert_msg(memcmp(before, after, room * sizeof *after) == 0, "%s: coords written", what);
    ck_assert_msg(test_contains(rg_context_error(ctx), needle), "%s: message \"%s\" lacks \"%s\"",
                  what, rg_context_error(ctx), needle);
}

START_TEST(test_nonzero_into_errors)
{
    TEST_CONTEXT(ctx, _i);
    const int64_t values[12] = {0, 1, 0, 2, 3, 0, 0, 0, 4, 0, 5, 0};
    rg_array *a = test_array_from_i64(ctx, RG_INT32, values, 12);
    const int64_t ok[2] = {3, 4}, mismatch[2] = {3, 5};
    const int64_t nine[9] = {9, 9, 9, 9, 9, 9, 9, 9, 9};
    rg_array *coords = test_array_from_i64(ctx, RG_INT64, nine, 9);
    rg_array *narrow = test_array_from_i64(ctx, RG_INT32, nine, 9);
    expect_into_fails(ctx, coords, a, ok, 2, RG_ERANGE, "5 non-zero", "room for 4 rows of 2");
    expect_into_fails(ctx, coords, a, mismatch, 2, RG_ESIZE, "15", "product 15 for 12");
    expect_into_fails(ctx, coords, a, ok, 0, RG_EINVAL, "ndim", "ndim 0");
    expect_into_fails(ctx, coords, a, NULL, 2, RG_EINVAL, "shape", "shape NULL");
    expect_into_fails(ctx, narrow, a, ok, 2, RG_EDTYPE, "int64", "int32 coords");
    rg_context *other = NULL;
    ck_assert_int_eq(rg_context_create(&other, RG_BACKEND_OPENMP), RG_OK);
    rg_array *foreign = NULL;
    ck_assert_int_eq(rg_array_create(&foreign, other, RG_INT64, 12), RG_OK);
    expect_into_fails(ctx, foreign, a, ok, 2, RG_EINVAL, "different contexts", "foreign coords");
    /* An int64 input as its own coords: refused, as it would be read while written. */
    rg_array *self = test_array_from_i64(ctx, RG_INT64, values, 12);
    expect_into_fails(ctx, self, self, ok, 2, RG_EINVAL, "coords is a too", "coords == a");
    rg_array_free(self);
    int64_t nnz = -5;
    ck_assert_int_eq(rg_nonzero_into(NULL, &nnz, a, ok, 2), RG_EINVAL);
    ck_assert_int_eq(rg_nonzero_into(coords, NULL, a, ok, 2), RG_EINVAL);
    ck_assert_msg(test_contains(rg_context_error(ctx), "nnz"), "message \"%s\"",
                  rg_context_error(ctx));
    ck_assert_int_eq(rg_nonzero_into(coords, &nnz, NULL, ok, 2), RG_EINVAL);
    ck_assert_int_eq(nnz, -5);

    /* After all that, 1-D fits: 5 rows, the other 4 elements keep their 9s. */
    const int64_t flat[1] = {12};
    ck_assert_int_eq(rg_nonzero_into(coords, &nnz, a, flat, 1), RG_OK);
    ck_assert_int_eq(nnz, 5);
    const int64_t want[9] = {1, 3, 4, 8, 10, 9, 9, 9, 9};
    int64_t *got = read_all(coords);
    test_expect_i64(got, want, 9, "into after errors");
    free(got);
    rg_array_free(foreign);
    rg_context_free(other);
    rg_array_free(narrow);
    rg_array_free(coords);
    rg_array_free(a);
    rg_context_free(ctx);
}
END_TEST

/* ---- errors of rg_nonzero ---------------------------------------------------- */

/* rg_nonzero fails with want and leaves both outputs alone. */
static void expect_nonzero_fails(rg_context *ctx, const rg_array *a, const int64_t *shape,
                                 size_t ndim, int64_t bound, rg_status want, const char *needle,
                                 const char *what)
{
    rg_array *coords = (rg_array *)a; /* a sentinel: must come back unchanged */
    int64_t nnz = -5;
    rg_status st = rg_nonzero(&coords, &nnz, a, shape, ndim, bound);
    ck_assert_msg(st == want, "%s: %d (%s), expected %d (%s)", what, (int)st, rg_strerror(st),
                  (int)want, rg_strerror(want));
    ck_assert_msg(coords == a && nnz == -5, "%s: outputs written on error", what);
    ck_assert_msg(test_contains(rg_context_error(ctx), needle), "%s: message \"%s\" lacks \"%s\"",
                  what, rg_context_error(ctx), needle);
}

START_TEST(test_nonzero_errors)
{
    TEST_CONTEXT(ctx, _i);
    const int64_t values[12] = {0, 1, 0, 2, 3, 0, 0, 0, 4, 0, 5, 0};
    rg_array *a = test_array_from_i64(ctx, RG_INT32, values, 12);
    const int64_t ok[2] = {3, 4}, mismatch[2] = {3, 5}, negative[3] = {-3, -4, 1},
                  zero_neg[2] = {0, -1}, huge[3] = {INT64_MAX / 2, 3, 0}, big2[2] = {1LL << 40,
                                                                                   1LL << 40};
    expect_nonzero_fails(ctx, a, ok, 0, -1, RG_EINVAL, "ndim", "ndim 0");
    expect_nonzero_fails(ctx, a, ok, (size_t)-1, -1, RG_EINVAL, "ndim", "ndim -1");
    expect_nonzero_fails(ctx, a, ok, RG_NONZERO_MAX_DIMS + 1, -1, RG_EINVAL, "ndim", "ndim 33");
    expect_nonzero_fails(ctx, a, NULL, 2, -1, RG_EINVAL, "shape", "shape NULL");
    expect_nonzero_fails(ctx, a, mismatch, 2, -1, RG_ESIZE, "15", "product 15 for 12");
    expect_nonzero_fails(ctx, a, ok, 1, -1, RG_ESIZE, "12", "product 3 for 12");
    expect_nonzero_fails(ctx, a, negative, 3, -1, RG_EINVAL, "negative", "negative dimension");
    expect_nonzero_fails(ctx, a, zero_neg, 2, -1, RG_EINVAL, "shape[1]", "0 then negative");
    expect_nonzero_fails(ctx, a, huge, 3, -1, RG_EOVERFLOW, "overflow", "overflow beside a 0");
    expect_nonzero_fails(ctx, a, big2, 2, -1, RG_EOVERFLOW, "overflow", "2^80 elements");
    expect_nonzero_fails(ctx, a, ok, 2, 4, RG_ERANGE, "5", "bound 4 for 5");
    expect_nonzero_fails(ctx, a, ok, 2, 0, RG_ERANGE, "5", "bound 0 for 5");

    ck_assert_int_eq(rg_nonzero(NULL, NULL, a, ok, 2, -1), RG_EINVAL);
    ck_assert_int_eq(rg_nonzero(NULL, NULL, NULL, ok, 2, -1), RG_EINVAL);
    rg_array *coords = a;
    ck_assert_int_eq(rg_nonzero(&coords, NULL, NULL, ok, 2, -1), RG_EINVAL);
    ck_assert_ptr_eq(coords, a);
    int64_t count = -5;
    ck_assert_int_eq(rg_count_nonzero(NULL, a), RG_EINVAL);
    ck_assert_int_eq(rg_count_nonzero(&count, NULL), RG_EINVAL);
    ck_assert_int_eq(count, -5);

    /* After all that, nnz may be NULL and bounds work. */
    ck_assert_int_eq(rg_nonzero(&coords, NULL, a, ok, 2, 5), RG_OK);
    const int64_t want[10] = {0, 1, 0, 3, 1, 0, 2, 0, 2, 2};
    int64_t *got = read_all(coords);
    ck_assert_uint_eq(rg_array_length(coords), 10);
    test_expect_i64(got, want, 10, "coords after errors");
    free(got);
    rg_array_free(coords);
    rg_array_free(a);
    rg_context_free(ctx);
}
END_TEST

/* ---- per segment ---------------------------------------------------------- */

/* Checks rg_segment_nonzero of content buf split by off[0 .. nsegs]. */
static void check_segments(rg_context *ctx, rg_dtype dtype, const unsigned char *buf,
                           const int64_t *off, size_t nsegs, rg_dtype off_type, const char *what)
{
    size_t n = (size_t)off[nsegs], size = rg_dtype_size(dtype);
    int64_t *want_off = malloc((nsegs + 1) * sizeof *want_off);
    int64_t *want_pos = malloc((n + 1) * sizeof *want_pos);
    ck_assert_ptr_nonnull(want_off);
    ck_assert_ptr_nonnull(want_pos);
    size_t r = 0;
    for (size_t i = 0; i < nsegs; i++) {
        want_off[i] = (int64_t)r;
        for (int64_t k = off[i]; k < off[i + 1]; k++)
            if (is_nonzero(dtype, buf + (size_t)k * size))
                want_pos[r++] = k - off[i];
    }
    want_off[nsegs] = (int64_t)r;

    rg_array *content = array_from_raw(ctx, dtype, buf, n);
    rg_array *offsets = test_array_from_i64(ctx, off_type, off, nsegs + 1);
    rg_array *seg_off = NULL, *pos = NULL;
    rg_status st = rg_segment_nonzero(&seg_off, &pos, content, offsets);
    char label[200];
    snprintf(label, sizeof label, "segment_nonzero %s, %s offsets, %s (%zu segments, %zu elements)",
             rg_dtype_name(dtype), rg_dtype_name(off_type), what, nsegs, n);
    ck_assert_msg(st == RG_OK, "%s: %d (%s) %s", label, (int)st, rg_strerror(st),
                  rg_context_error(ctx));
    ck_assert_int_eq(rg_array_dtype(seg_off), RG_INT64);
    ck_assert_int_eq(rg_array_dtype(pos), RG_INT64);
    ck_assert_uint_eq(rg_array_length(seg_off), nsegs + 1);
    ck_assert_msg(rg_array_length(pos) == r, "%s: %zu positions, expected %zu", label,
                  rg_array_length(pos), r);
    int64_t *got_off = read_all(seg_off), *got_pos = read_all(pos);
    test_expect_i64(got_off, want_off, nsegs + 1, label);
    test_expect_i64(got_pos, want_pos, r, label);
    free(got_off);
    free(got_pos);
    free(want_off);
    free(want_pos);
    rg_array_free(seg_off);
    rg_array_free(pos);
    rg_array_free(offsets);
    rg_array_free(content);
}

START_TEST(test_segment_nonzero)
{
    TEST_CONTEXT(ctx, test_backend_plain(_i / 2));
    rg_dtype off_type = _i % 2 ? RG_INT64 : RG_INT32;
    static const struct {
        test_dist dist;
        size_t nsegs;
        int64_t scale;
        rg_dtype dtype;
        int permille;
    } cases[] = {
        {DIST_SHORT, 3000, 0, RG_FLOAT32, 300},     {DIST_EMPTY, 50, 0, RG_INT32, 500},
        {DIST_HUGE, 7, 70000, RG_UINT8, 20},         {DIST_ONES, 5000, 0, RG_FLOAT64, 500},
        {DIST_HALF_EMPTY, 4000, 0, RG_INT64, 990},  {DIST_POWER_LAW, 3000, 5000, RG_BOOL, 100},
        {DIST_SHORT, 200, 0, RG_INT16, 0},          {DIST_POWER_LAW, 100000, 20000, RG_UINT16, 600},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int64_t *len = test_gen_lengths(cases[c].dist, cases[c].nsegs, cases[c].scale, 40 + c);
        int64_t *off = ref_offsets(len, cases[c].nsegs);
        unsigned char *buf = gen_input(cases[c].dtype, (size_t)off[cases[c].nsegs],
                                       cases[c].permille, c);
        check_segments(ctx, cases[c].dtype, buf, off, cases[c].nsegs, off_type,
                       test_dist_name(cases[c].dist));
        free(buf);
        free(off);
        free(len);
    }
    /* Zero segments, and segments around empty content. */
    const int64_t zero_off[1] = {0}, empty_off[4] = {0, 0, 0, 0}, edges[6] = {0, 0, 2, 2, 5, 5};
    unsigned char one[8] = {0};
    check_segments(ctx, RG_FLOAT64, one, zero_off, 0, off_type, "zero segments");
    check_segments(ctx, RG_FLOAT64, one, empty_off, 3, off_type, "empty content");
    const int32_t vals[5] = {7, 0, 0, -1, 9};
    check_segments(ctx, RG_INT32, (const unsigned char *)vals, edges, 5, off_type, "edges");
    rg_context_free(ctx);
}
END_TEST

/* The OpenMP walk gives each thread an equal share of the positions: with
 * 1, 2, 3 and 5 threads, shares that start and end in runs of empty
 * segments, fewer non-zeros than threads, and all of them in the first or
 * the last segment. */
START_TEST(test_segment_nonzero_shares)
{
    TEST_CONTEXT(ctx, test_backend_plain(_i));
    int omp = rg_context_backend(ctx) == RG_BACKEND_OPENMP;
    size_t nsegs = 100000;
    int64_t *len = test_gen_lengths(DIST_HALF_EMPTY, nsegs, 0, 77);
    int64_t *off = ref_offsets(len, nsegs);
    size_t n = (size_t)off[nsegs];
    /* one segment of n elements, then nsegs - 1 empty ones (and reversed) */
    int64_t *front = calloc(nsegs + 1, sizeof *front), *back = calloc(nsegs + 1, sizeof *back);
    double *x = calloc(n, sizeof *x);
    ck_assert_ptr_nonnull(front);
    ck_assert_ptr_nonnull(back);
    ck_assert_ptr_nonnull(x);
    for (size_t i = 1; i <= nsegs; i++)
        front[i] = (int64_t)n;
    back[nsegs] = (int64_t)n;
    for (int round = 0, nthreads; (nthreads = omp ? test_threads(round) : round == 0) > 0;
         round++) {
        static const size_t few[] = {1, 2, 3, 4, 7};
        char what[96];
        for (size_t f = 0; f < sizeof few / sizeof *few; f++) {
            memset(x, 0, n * sizeof *x);
            for (size_t k = 0; k < few[f]; k++) /* spread over the content */
                x[(n - 1) / (few[f] + 1) * (k + 1)] = 1.0 + (double)k;
            snprintf(what, sizeof what, "%zu non-zeros, %d threads", few[f], nthreads);
            check_segments(ctx, RG_FLOAT64, (const unsigned char *)x, off, nsegs, RG_INT64,
                           what);
            check_segments(ctx, RG_FLOAT64, (const unsigned char *)x, front, nsegs, RG_INT64,
                           what);
            check_segments(ctx, RG_FLOAT64, (const unsigned char *)x, back, nsegs, RG_INT32,
                           what);
        }
        for (size_t k = 0; k < n; k++) /* dense runs, with zeros at share ends */
            x[k] = k % 1000 < 700 ? 0.0 : 2.0;
        snprintf(what, sizeof what, "runs, %d threads", nthreads);
        check_segments(ctx, RG_FLOAT64, (const unsigned char *)x, off, nsegs, RG_INT32, what);
        check_segments(ctx, RG_FLOAT64, (const unsigned char *)x, front, nsegs, RG_INT64, what);
        check_segments(ctx, RG_FLOAT64, (const unsigned char *)x, back, nsegs, RG_INT64, what);
    }
    if (omp)
        test_threads_restore();
    free(x);
    free(back);
    free(front);
    free(off);
    free(len);
    rg_context_free(ctx);
}
END_TEST

/* The OpenMP backend cuts the content into words of 64 elements, one run of
 * words per thread, and takes 8 words at a time: segments that start and
 * end on word edges and one off them, runs of empty segments there and at
 * the end, contents whose length is not a whole word, all-zero and all
 * non-zero words, each element size, with 1, 2, 3 and 5 threads (with and
 * without AVX-512 through the loop index). */
START_TEST(test_segment_nonzero_words)
{
    TEST_CONTEXT(ctx, test_backend_plain(_i));
    int omp = rg_context_backend(ctx) == RG_BACKEND_OPENMP;
    static const rg_dtype dtypes[] = {RG_UINT8, RG_INT16, RG_FLOAT32, RG_FLOAT64};
    static const size_t sizes[] = {40000, 64 * 700, 64 * 700 + 1, 64 * 700 + 63, 100};
    size_t cap = 64 * 700 + 64;
    int64_t *off = malloc((3 * cap + 8) * sizeof *off);
    ck_assert_ptr_nonnull(off);
    for (int round = 0, nthreads; (nthreads = omp ? test_threads(round) : round == 0) > 0;
         round++) {
        for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
            size_t n = sizes[z], nsegs = 0;
            /* cuts at word edges and one either side of them, empty runs at
             * every 8th edge (a pass-2 step) and at the end */
            off[0] = 0;
            for (size_t e = 64; e < n; e += 64) {
                size_t empties = e % 512 == 0 ? 3 : 0;
                for (size_t d = 0; d <= empties; d++)
                    off[++nsegs] = (int64_t)e - 1;
                off[++nsegs] = (int64_t)e;
                if (e % 192 == 0)
                    off[++nsegs] = (int64_t)e + 1;
            }
            for (int d = 0; d < 4; d++)
                off[++nsegs] = (int64_t)n;
            for (size_t t = 0; t < sizeof dtypes / sizeof *dtypes; t++) {
                size_t size = rg_dtype_size(dtypes[t]);
                unsigned char *buf = gen_input(dtypes[t], n, 400, 7 * z + t);
                for (size_t k = 0; k < n; k++) /* some words all zero, some all non-zero */
                    if (k / 64 % 5 == 1)
                        memset(buf + k * size, 0, size);
                    else if (k / 64 % 5 == 3)
                        memset(buf + k * size, 0x11, size);
                char what[96];
                snprintf(what, sizeof what, "word edges, %zu elements, %d threads", n,
                         nthreads);
                check_segments(ctx, dtypes[t], buf, off, nsegs, t % 2 ? RG_INT64 : RG_INT32,
                               what);
                free(buf);
            }
        }
    }
    if (omp)
        test_threads_restore();
    free(off);
    rg_context_free(ctx);
}
END_TEST

/* Segment starts crowded into part of the elements (OpenMP balances pass 2
 * by elements and starts): half length-1 then one long segment, long then
 * thousands of empty segments at the end, empties in the middle and at the
 * start, lengths in increasing order; 1 to 5 threads. */
START_TEST(test_segment_nonzero_skewed)
{
    TEST_CONTEXT(ctx, test_backend_plain(_i));
    int omp = rg_context_backend(ctx) == RG_BACKEND_OPENMP;
    const size_t n = 50000, most = 3 * n;
    int64_t *off = malloc((most + 1) * sizeof *off);
    ck_assert_ptr_nonnull(off);
    unsigned char *buf = gen_input(RG_FLOAT64, n, 500, 3);
    for (int round = 0, nthreads; (nthreads = omp ? test_threads(round) : round == 0) > 0;
         round++)
        for (int shape = 0; shape < 5; shape++) {
            size_t k = 0;
            off[0] = 0;
            if (shape == 0) { /* n/2 of length 1, then one segment */
                for (size_t e = 1; e <= n / 2; e++)
                    off[++k] = (int64_t)e;
                off[++k] = (int64_t)n;
            } else if (shape == 1) { /* length 100, then 2n empty at the end */
                for (size_t e = 100; e < n; e += 100)
                    off[++k] = (int64_t)e;
                while (k < 3 * n / 100 + 2 * n)
                    off[++k] = (int64_t)n;
            } else if (shape == 2) { /* n empty at 3n/4, length 7 around them */
                for (size_t e = 7; e < n; e += 7) {
                    off[++k] = (int64_t)e;
                    if (e / 7 == 3 * n / 28)
                        for (size_t d = 0; d < n; d++)
                            off[++k] = (int64_t)e;
                }
                off[++k] = (int64_t)n;
            } else if (shape == 3) { /* n empty at 0, then length 3 */
                while (k < n)
                    off[++k] = 0;
                for (size_t e = 3; e < n; e += 3)
                    off[++k] = (int64_t)e;
                off[++k] = (int64_t)n;
            } else { /* lengths 1, 2, 3, ... */
                for (size_t len = 1, e = 1; e < n; e += ++len)
                    off[++k] = (int64_t)e;
                off[++k] = (int64_t)n;
            }
            ck_assert(k <= most && off[k] == (int64_t)n);
            for (int wide = 0; wide < 2; wide++) {
                char what[96];
                snprintf(what, sizeof what, "skewed shape %d, %s offsets, %d threads", shape,
                         wide ? "int64" : "int32", nthreads);
                check_segments(ctx, RG_FLOAT64, buf, off, k, wide ? RG_INT64 : RG_INT32, what);
            }
        }
    if (omp)
        test_threads_restore();
    free(buf);
    free(off);
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_segment_nonzero_errors)
{
    TEST_CONTEXT(ctx, _i);
    const int64_t values[5] = {1, 0, 2, 0, 3};
    const int64_t good[3] = {0, 2, 5}, short_last[3] = {0, 2, 4}, dec[3] = {0, 3, 2},
                  first[3] = {1, 2, 5};
    rg_array *content = test_array_from_i64(ctx, RG_FLOAT32, values, 5);
    struct {
        const int64_t *off;
        rg_dtype type;
        rg_status want;
        const char *what;
    } cases[] = {{short_last, RG_INT64, RG_EOFFSETS, "last offset 4"},
                 {dec, RG_INT32, RG_EOFFSETS, "decreasing"},
                 {first, RG_INT64, RG_EOFFSETS, "first offset 1"},
                 {good, RG_FLOAT64, RG_EDTYPE, "float64 offsets"},
                 {good, RG_UINT32, RG_EDTYPE, "uint32 offsets"}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        rg_array *offsets = test_array_from_i64(ctx, cases[c].type, cases[c].off, 3);
        rg_array *so = content, *pos = content; /* sentinels */
        rg_status st = rg_segment_nonzero(&so, &pos, content, offsets);
        ck_assert_msg(st == cases[c].want, "%s: %d (%s)", cases[c].what, (int)st,
                      rg_strerror(st));
        ck_assert_msg(so == content && pos == content, "%s: outputs written", cases[c].what);
        ck_assert_msg(test_contains(rg_context_error(ctx), "rg_segment_nonzero"),
                      "%s: message \"%s\"", cases[c].what, rg_context_error(ctx));
        rg_array_free(offsets);
    }
    rg_array *offsets = test_array_from_i64(ctx, RG_INT64, good, 3);
    rg_array *so = NULL, *pos = NULL;
    ck_assert_int_eq(rg_segment_nonzero(&so, &pos, NULL, offsets), RG_EINVAL);
    ck_assert_int_eq(rg_segment_nonzero(&so, &pos, content, NULL), RG_EINVAL);
    ck_assert_int_eq(rg_segment_nonzero(NULL, &pos, content, offsets), RG_EINVAL);
    ck_assert_int_eq(rg_segment_nonzero(&so, NULL, content, offsets), RG_EINVAL);
    ck_assert_ptr_null(so);
    ck_assert_ptr_null(pos);

    /* Offsets from another context. */
    rg_context *other = test_context(_i);
    rg_array *foreign = test_array_from_i64(other, RG_INT64, good, 3);
    ck_assert_int_eq(rg_segment_nonzero(&so, &pos, content, foreign), RG_EINVAL);
    ck_assert_ptr_null(so);
    rg_array_free(foreign);
    rg_context_free(other);

    ck_assert_int_eq(rg_segment_nonzero(&so, &pos, content, offsets), RG_OK);
    const int64_t want_off[3] = {0, 1, 3}, want_pos[3] = {0, 0, 2};
    int64_t *got_off = read_all(so), *got_pos = read_all(pos);
    test_expect_i64(got_off, want_off, 3, "segment offsets after errors");
    test_expect_i64(got_pos, want_pos, 3, "positions after errors");
    free(got_off);
    free(got_pos);
    rg_array_free(so);
    rg_array_free(pos);
    rg_array_free(offsets);
    rg_array_free(content);
    rg_context_free(ctx);
}
END_TEST

Suite *nonzero_suite(void)
{
    Suite *s = test_suite("nonzero");

    TCase *tc = test_tcase("nonzero");
    tcase_add_loop_test(tc, test_nonzero_dtypes, 0, TEST_NBACKENDS * N_DTYPES);
    tcase_add_loop_test(tc, test_nonzero_shapes, 0, TEST_NBACKENDS_GPU_KERNELS);
    tcase_add_loop_test(tc, test_nonzero_special, 0, TEST_NBACKENDS_GPU_KERNELS);
    tcase_add_loop_test(tc, test_nonzero_big, 0, TEST_NBACKENDS_GPU_KERNELS);
    tcase_add_loop_test(tc, test_nonzero_small_groups, 0, 8);
    tcase_add_loop_test(tc, test_nonzero_parts, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_nonzero_kept, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_nonzero_sparse_big, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_nonzero_reused, 0, TEST_NBACKENDS);
    suite_add_tcase(s, tc);

    tc = test_tcase("segments");
    tcase_add_loop_test(tc, test_segment_nonzero, 0, TEST_NBACKENDS_GPU_KERNELS * 2);
    suite_add_tcase(s, tc);

    tc = test_tcase("errors");
    tcase_add_loop_test(tc, test_nonzero_errors, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_nonzero_into_errors, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_segment_nonzero_shares, 0, TEST_NBACKENDS_PLAIN);
    tcase_add_loop_test(tc, test_segment_nonzero_words, 0, TEST_NBACKENDS_PLAIN);
    tcase_add_loop_test(tc, test_segment_nonzero_skewed, 0, TEST_NBACKENDS_PLAIN);
    tcase_add_loop_test(tc, test_segment_nonzero_errors, 0, TEST_NBACKENDS);
    suite_add_tcase(s, tc);

    return s;
}
