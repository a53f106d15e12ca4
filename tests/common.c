/* common.c — backend loop support, array helpers, seeded length generators and sequential references. */
#define _POSIX_C_SOURCE 200809L

#include "common.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Generous: the first test of a run may build many PoCL programs cold (the
 * first OpenCL test of the reduce suite took 9 to 10 minutes on a 2-core
 * machine with empty program caches). */
#define TEST_TIMEOUT_S 900.0

enum { TEST_MAX_CASES = 128 };
static struct {
    const char *suite, *tcase;
} cases[TEST_MAX_CASES];
static size_t ncases;
static const char *suite_now;

Suite *test_suite(const char *name)
{
    suite_now = name;
    return suite_create(name);
}

size_t test_ncases(void)
{
    return ncases;
}

void test_case_name(size_t i, const char **suite, const char **tcase)
{
    *suite = cases[i].suite;
    *tcase = cases[i].tcase;
}

TCase *test_tcase(const char *name)
{
    if (!suite_now || ncases == TEST_MAX_CASES) {
        fprintf(stderr, "test_tcase(%s): %s\n", name,
                suite_now ? "more cases than TEST_MAX_CASES" : "no test_suite before it");
        abort();
    }
    cases[ncases].suite = suite_now;
    cases[ncases++].tcase = name;
    TCase *tc = tcase_create(name);
    /* CK_EXCLUDE_TAGS=big leaves out the cases of big inputs (.ci/run's
     * distcheck, which checks the tarball, not the code again). */
    if (strcmp(name, "big") == 0)
        tcase_set_tags(tc, "big");
    if (getenv("CK_DEFAULT_TIMEOUT") == NULL)
        tcase_set_timeout(tc, TEST_TIMEOUT_S);
    return tc;
}

rg_backend test_backend(int backend_index)
{
    return backend_index == TEST_BACKEND_OPENCL ? RG_BACKEND_OPENCL : RG_BACKEND_OPENMP;
}

const char *test_backend_label(int backend_index)
{
    return backend_index == TEST_BACKEND_OPENCL ? "opencl" : "openmp";
}

int test_opencl_required(void)
{
    const char *v = getenv("RAGGED_TEST_REQUIRE_OPENCL");
    return v != NULL && strcmp(v, "1") == 0;
}

rg_context *test_context(int backend_index)
{
    rg_context *ctx = NULL;
    rg_backend want = test_backend(backend_index);
    const char *skip = getenv("RAGGED_TEST_SKIP_OPENMP");
    if (want == RG_BACKEND_OPENMP && skip != NULL && strcmp(skip, "1") == 0) {
        fprintf(stderr, "skipped: RAGGED_TEST_SKIP_OPENMP=1\n");
        return NULL;
    }
    rg_status st = rg_context_create(&ctx, want);

    if (st == RG_ENODEVICE && want == RG_BACKEND_OPENCL && !test_opencl_required()) {
        fprintf(stderr, "skipped: no OpenCL device (%s)\n", rg_context_error(NULL));
        return NULL;
    }
    ck_assert_msg(st == RG_OK, "rg_context_create(%s) = %d (%s): %s",
                  test_backend_label(backend_index), (int)st, rg_strerror(st),
                  rg_context_error(NULL));
    ck_assert_ptr_nonnull(ctx);
    ck_assert_int_eq(rg_context_backend(ctx), want);
    return ctx;
}

/* Conversions between int64 and each dtype but bool, one loop per dtype: a
 * switch per element cost more than the primitives under test on big arrays. */
#define FOR_EACH_DTYPE(X)                                                      \
    X(RG_INT8, int8_t) X(RG_UINT8, uint8_t)                                   \
    X(RG_INT16, int16_t) X(RG_UINT16, uint16_t) X(RG_INT32, int32_t)         \
    X(RG_UINT32, uint32_t) X(RG_INT64, int64_t) X(RG_UINT64, uint64_t)       \
    X(RG_FLOAT32, float) X(RG_FLOAT64, double)

/* values[0 .. n) into buf as dtype (buf aligned for it, as malloc's is). */
static void pack_n(rg_dtype dtype, void *buf, const int64_t *values, size_t n)
{
    if (dtype == RG_INT32) {
        for (size_t i = 0; i < n; i++)
            if (values[i] < INT32_MIN || values[i] > INT32_MAX) /* not ck_assert: it costs a pipe write per call */
                ck_abort_msg("test_pack: %" PRId64 " is not int32", values[i]);
    }
    switch (dtype) {
    case RG_BOOL: {
        uint8_t *o = buf;
        for (size_t i = 0; i < n; i++)
            o[i] = values[i] != 0;
        return;
    }
#define PACK_CASE(D, T)                        \
    case D: {                                  \
        T *o = buf;                            \
        for (size_t i = 0; i < n; i++)         \
            o[i] = (T)values[i];               \
        return;                                \
    }
    FOR_EACH_DTYPE(PACK_CASE)
#undef PACK_CASE
    default: ck_abort_msg("test_pack: dtype %d", (int)dtype);
    }
}

/* n elements of dtype at buf into out as int64 (uint64 as its bits, floats truncated). */
static void unpack_n(rg_dtype dtype, const void *buf, int64_t *out, size_t n)
{
    switch (dtype) {
    case RG_BOOL: {
        const uint8_t *p = buf;
        for (size_t i = 0; i < n; i++)
            out[i] = p[i];
        return;
    }
#define UNPACK_CASE(D, T)                      \
    case D: {                                  \
        const T *p = buf;                      \
        for (size_t i = 0; i < n; i++)         \
            out[i] = (int64_t)p[i];            \
        return;                                \
    }
    FOR_EACH_DTYPE(UNPACK_CASE)
#undef UNPACK_CASE
    default: ck_abort_msg("unpack: dtype %d", (int)dtype);
    }
}

void *test_pack(rg_dtype dtype, const int64_t *values, size_t n)
{
    size_t size = rg_dtype_size(dtype);
    ck_assert_msg(size != 0, "test_pack: unknown dtype %d", (int)dtype);
    unsigned char *buf = malloc(size * n + size);
    ck_assert_ptr_nonnull(buf);
    pack_n(dtype, buf, values, n);
    return buf;
}

/* A new array of dtype holding buf's n packed elements; frees buf. */
static rg_array *array_from_packed(rg_context *ctx, rg_dtype dtype, void *buf, size_t n)
{
    rg_array *a = NULL;
    rg_status st = rg_array_from_host(&a, ctx, dtype, buf, n);
    free(buf);
    ck_assert_msg(st == RG_OK, "rg_array_from_host(%s, %zu) = %d: %s", rg_dtype_name(dtype), n,
                  (int)st, rg_context_error(ctx));
    ck_assert_ptr_nonnull(a);
    return a;
}

rg_array *test_array_from_i64(rg_context *ctx, rg_dtype dtype, const int64_t *values, size_t n)
{
    return array_from_packed(ctx, dtype, test_pack(dtype, values, n), n);
}

rg_array *test_array_filled(rg_context *ctx, rg_dtype dtype, size_t n, int64_t value)
{
    /* One packed element, doubled up to n (no int64 copy of the whole). */
    size_t size = rg_dtype_size(dtype);
    unsigned char *buf = test_pack(dtype, &value, 1);
    if (n > 1) {
        unsigned char *grown = realloc(buf, size * n);
        ck_assert_ptr_nonnull(grown);
        buf = grown;
        for (size_t have = 1; have < n; have *= 2)
            memcpy(buf + have * size, buf, (have < n - have ? have : n - have) * size);
    }
    return array_from_packed(ctx, dtype, buf, n);
}

int64_t test_unpack_i64(rg_dtype dtype, const void *p)
{
    uint64_t raw = 0; /* aligned for every dtype: p need not be */
    size_t size = rg_dtype_size(dtype);
    memcpy(&raw, p, size != 0 && size <= sizeof raw ? size : 0);
    int64_t v;
    unpack_n(dtype, &raw, &v, 1);
    return v;
}

/* Arrays are read back in chunks of this many elements: no second copy of
 * a whole big array in its own dtype. */
#define READ_CHUNK ((size_t)1 << 16)

/* Calls visit(out, start, count, arg) on elements [start, start + count) of
 * a as int64, for each chunk in turn; fails the test on a read error. */
static void read_chunks(const rg_array *a, void (*visit)(const int64_t *, size_t, size_t, void *),
                        void *arg)
{
    rg_dtype dtype = rg_array_dtype(a);
    size_t n = rg_array_length(a), size = rg_dtype_size(dtype);
    ck_assert_msg(size != 0, "read: dtype %d", (int)dtype);
    unsigned char *raw = malloc(READ_CHUNK * size);
    int64_t *vals = malloc(READ_CHUNK * sizeof *vals);
    ck_assert_ptr_nonnull(raw);
    ck_assert_ptr_nonnull(vals);
    for (size_t start = 0; start < n; start += READ_CHUNK) {
        size_t count = n - start < READ_CHUNK ? n - start : READ_CHUNK;
        rg_status st = rg_array_read(raw, a, start, count);
        ck_assert_msg(st == RG_OK, "rg_array_read(%zu of %zu elements at %zu) = %d: %s", count, n,
                      start, (int)st, rg_context_error(rg_array_context(a)));
        unpack_n(dtype, raw, vals, count);
        visit(vals, start, count, arg);
    }
    free(vals);
    free(raw);
}

static void copy_chunk(const int64_t *vals, size_t start, size_t count, void *arg)
{
    memcpy((int64_t *)arg + start, vals, count * sizeof *vals);
}

int64_t *test_read_i64(const rg_array *a)
{
    int64_t *out = malloc((rg_array_length(a) + 1) * sizeof *out);
    ck_assert_ptr_nonnull(out);
    read_chunks(a, copy_chunk, out);
    return out;
}

/* Compares in a plain loop: Check's assert macros cost a pipe write each. */
void test_expect_i64(const int64_t *got, const int64_t *want, size_t n, const char *what)
{
    for (size_t k = 0; k < n; k++) {
        if (got[k] != want[k])
            ck_abort_msg("%s: element %zu of %zu is %" PRId64 ", expected %" PRId64, what, k, n,
                         got[k], want[k]);
    }
}

struct expect_arg {
    const int64_t *want;
    size_t n;
    const char *what;
};

static void expect_chunk(const int64_t *vals, size_t start, size_t count, void *arg_)
{
    const struct expect_arg *arg = arg_;
    for (size_t k = 0; k < count; k++) {
        if (vals[k] != arg->want[start + k])
            ck_abort_msg("%s: element %zu of %zu is %" PRId64 ", expected %" PRId64, arg->what,
                         start + k, arg->n, vals[k], arg->want[start + k]);
    }
}

void test_expect_array(const rg_array *a, const int64_t *want, size_t n, const char *what)
{
    size_t len = rg_array_length(a);
    ck_assert_msg(len == n, "%s: %zu elements, expected %zu", what, len, n);
    struct expect_arg arg = {want, n, what};
    read_chunks(a, expect_chunk, &arg);
}

struct filled_arg {
    int64_t value;
    size_t n;
    const char *what;
};

static void filled_chunk(const int64_t *vals, size_t start, size_t count, void *arg_)
{
    const struct filled_arg *arg = arg_;
    for (size_t k = 0; k < count; k++) {
        if (vals[k] != arg->value)
            ck_abort_msg("%s: output modified: element %zu of %zu is %" PRId64 ", sentinel %" PRId64,
                         arg->what, start + k, arg->n, vals[k], arg->value);
    }
}

void test_expect_filled(const rg_array *a, int64_t value, const char *what)
{
    /* The sentinel as the array's dtype stores it (-3 reads back from uint32 as 2^32 - 3). */
    unsigned char *packed = test_pack(rg_array_dtype(a), &value, 1);
    struct filled_arg arg = {test_unpack_i64(rg_array_dtype(a), packed), rg_array_length(a), what};
    free(packed);
    read_chunks(a, filled_chunk, &arg);
}

const char *test_dist_name(test_dist dist)
{
    static const char *names[DIST_COUNT] = {"short", "empty", "huge", "ones", "half-empty",
                                            "power-law"};
    return dist < DIST_COUNT ? names[dist] : "?";
}

uint64_t test_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int64_t *test_gen_lengths(test_dist dist, size_t nsegs, int64_t scale, uint64_t seed)
{
    int64_t *len = malloc((nsegs + 1) * sizeof *len);
    ck_assert_ptr_nonnull(len);
    uint64_t state = seed * 0x2545F4914F6CDD1Dull + (uint64_t)dist;
    for (size_t i = 0; i < nsegs; i++) {
        switch (dist) {
        case DIST_SHORT: len[i] = 1 + (int64_t)(test_rand(&state) % 8); break;
        case DIST_EMPTY: len[i] = 0; break;
        case DIST_HUGE: len[i] = i == nsegs / 2 ? scale : 0; break;
        case DIST_ONES: len[i] = 1; break;
        case DIST_HALF_EMPTY:
            len[i] = (test_rand(&state) & 1) ? 0 : 1 + (int64_t)(test_rand(&state) % 8);
            break;
        case DIST_POWER_LAW: {
            /* A geometric exponent e, then uniform below 2^e: P(len >= x) ~ 1/x,
             * so mostly short segments (many empty) and a few long ones. */
            uint64_t r = test_rand(&state);
            int e = 0;
            while (e < 40 && (r >> e & 1) == 0)
                e++;
            int64_t x = (int64_t)(test_rand(&state) % ((uint64_t)2 << e));
            int64_t cap = scale > 0 ? scale : 1;
            len[i] = x > cap ? cap : x;
            break;
        }
        default: ck_abort_msg("test_gen_lengths: dist %d", (int)dist);
        }
    }
    return len;
}

int64_t *ref_offsets(const int64_t *lengths, size_t nsegs)
{
    int64_t *off = malloc((nsegs + 1) * sizeof *off);
    ck_assert_ptr_nonnull(off);
    off[0] = 0;
    for (size_t i = 0; i < nsegs; i++)
        off[i + 1] = off[i] + lengths[i];
    return off;
}

/* The longest segment of off[0 .. nsegs] when ctx is an OpenCL GPU or
 * accelerator (where the heuristics use it), else -1. */
static int64_t gpu_longest(rg_context *ctx, const int64_t *off, size_t nsegs)
{
    if (rg_context_backend(ctx) != RG_BACKEND_OPENCL || rg_context_device_kind(ctx) == RG_DEVICE_CPU)
        return -1;
    int64_t longest = 0;
    for (size_t i = 0; i < nsegs; i++)
        longest = off[i + 1] - off[i] > longest ? off[i + 1] - off[i] : longest;
    return longest;
}

rg_strategy test_expect_strategy(rg_context *ctx, const int64_t *off, size_t nsegs)
{
    int64_t longest = gpu_longest(ctx, off, nsegs);
    return longest >= 0 && longest <= 1 ? RG_STRATEGY_PER_SEGMENT
                                        : rg_strategy_choose(ctx, nsegs, (size_t)off[nsegs], NULL);
}

rg_reduce_policy test_expect_policy(rg_context *ctx, const int64_t *off, size_t nsegs)
{
    int64_t longest = gpu_longest(ctx, off, nsegs);
    return off[nsegs] > 0 && longest >= 0 && longest <= 256
               ? RG_REDUCE_POLICY_PER_SEGMENT
               : rg_reduce_policy_choose(ctx, nsegs, (size_t)off[nsegs], NULL);
}

int64_t *ref_lengths(const int64_t *offsets, size_t nsegs)
{
    int64_t *len = malloc((nsegs + 1) * sizeof *len);
    ck_assert_ptr_nonnull(len);
    for (size_t i = 0; i < nsegs; i++)
        len[i] = offsets[i + 1] - offsets[i];
    return len;
}

/* out[k] for every element k of segment i: 0 = i, 1 = k - offsets[i], 2 = offsets[i]. */
static int64_t *ref_elements(const int64_t *offsets, size_t nsegs, int kind)
{
    size_t n = (size_t)offsets[nsegs];
    int64_t *out = malloc((n + 1) * sizeof *out);
    ck_assert_ptr_nonnull(out);
    for (size_t i = 0; i < nsegs; i++) {
        for (int64_t k = offsets[i]; k < offsets[i + 1]; k++)
            out[k] = kind == 0 ? (int64_t)i : kind == 1 ? k - offsets[i] : offsets[i];
    }
    return out;
}

int64_t *ref_parents(const int64_t *offsets, size_t nsegs)
{
    return ref_elements(offsets, nsegs, 0);
}

int64_t *ref_local_index(const int64_t *offsets, size_t nsegs)
{
    return ref_elements(offsets, nsegs, 1);
}

int64_t *ref_segment_starts(const int64_t *offsets, size_t nsegs)
{
    return ref_elements(offsets, nsegs, 2);
}

void test_setenv(const char *name, const char *value)
{
    ck_assert_msg(setenv(name, value, 1) == 0, "setenv(%s)", name);
}

void test_unsetenv(const char *name)
{
    ck_assert_msg(unsetenv(name) == 0, "unsetenv(%s)", name);
}

int test_backend_plain(int i)
{
    if (i < TEST_NBACKENDS)
        return i;
    if (i == TEST_NBACKENDS) {
        test_setenv("RAGGED_AVX512", "0");
        return TEST_BACKEND_OPENMP;
    }
    test_setenv("RAGGED_OPENCL_CPU_KERNELS", "0");
    test_setenv("RAGGED_OPENCL_MAX_GROUPS", TEST_FEW_GROUPS);
    return TEST_BACKEND_OPENCL;
}

int test_cpu_kernels(rg_context *ctx)
{
    const char *env = getenv("RAGGED_OPENCL_CPU_KERNELS");
    return rg_context_device_kind(ctx) == RG_DEVICE_CPU && !(env && !strcmp(env, "0"));
}

int test_contains(const char *haystack, const char *needle)
{
    return haystack != NULL && strstr(haystack, needle) != NULL;
}

static int saved_threads;

int test_threads(int round)
{
    static const int counts[TEST_THREAD_ROUNDS] = {1, 2, 3, 5};
    if (round < 0 || round >= TEST_THREAD_ROUNDS)
        return 0;
#ifdef _OPENMP
    if (round == 0)
        saved_threads = omp_get_max_threads();
    omp_set_num_threads(counts[round]);
    return counts[round];
#else
    (void)saved_threads;
    return round == 0 ? counts[0] : 0;
#endif
}

int test_thread_rounds(const rg_context *ctx)
{
    return rg_context_backend(ctx) == RG_BACKEND_OPENMP ? TEST_THREAD_ROUNDS : 1;
}

void test_threads_restore(void)
{
#ifdef _OPENMP
    if (saved_threads > 0)
        omp_set_num_threads(saved_threads);
#endif
}
