/* common.h — what every Check suite shares: the backend loop, array helpers, length generators, references. */
#ifndef RAGGED_TESTS_COMMON_H
#define RAGGED_TESTS_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <check.h>

#include "ragged.h"

/* Loop tests run index 0 on OpenMP and index 1 on OpenCL. */
#define TEST_BACKEND_OPENMP 0
#define TEST_BACKEND_OPENCL 1
#define TEST_NBACKENDS 2

/* The suites; check_main.c runs them all. */
Suite *context_suite(void);
Suite *array_suite(void);
Suite *offsets_suite(void);
Suite *parents_suite(void);
Suite *segd_suite(void);
Suite *nested_suite(void);
Suite *nonzero_suite(void);
Suite *list_suite(void);
Suite *transfers_suite(void);
Suite *reduce_suite(void);
Suite *faults_suite(void);

/* A suite, and a test case of the suite made last, with a timeout generous
 * enough for cold PoCL kernel builds (unless CK_DEFAULT_TIMEOUT is set,
 * which then wins); a case named "big" is tagged "big", for
 * CK_EXCLUDE_TAGS.  Every case made is listed, with its suite, for
 * check_main.c, which runs cases in parallel processes. */
Suite *test_suite(const char *name);
TCase *test_tcase(const char *name);
/* The cases listed so far; i from 0 to test_ncases() - 1. */
size_t test_ncases(void);
void test_case_name(size_t i, const char **suite, const char **tcase);

rg_backend test_backend(int backend_index);
const char *test_backend_label(int backend_index);

/* True when RAGGED_TEST_REQUIRE_OPENCL=1: a missing OpenCL device is a failure, not a skip. */
int test_opencl_required(void);

/* A context on the backend of a loop index, created inside the (forked) test.
 * Returns NULL when OpenCL has no device: the caller returns at once (a
 * "skipped" line went to stderr), unless RAGGED_TEST_REQUIRE_OPENCL=1, which
 * fails the test instead.  Also NULL, skipping, for OpenMP when
 * RAGGED_TEST_SKIP_OPENMP=1 (a run that checks only OpenCL, after one that
 * checked OpenMP: .ci/run's sanitizer step).  Any other failure fails the
 * test. */
rg_context *test_context(int backend_index);

/* Declares ctx for loop index i, or returns from the test when skipped. */
#define TEST_CONTEXT(ctx, i)                   \
    rg_context *ctx = test_context(i);         \
    if (ctx == NULL)                           \
        return

/* Packs n int64 values into a fresh host buffer of dtype (every dtype,
 * floats and bool included); the values must fit. */
void *test_pack(rg_dtype dtype, const int64_t *values, size_t n);

/* One element of dtype at p as int64 (uint64 as its bits, floats truncated). */
int64_t test_unpack_i64(rg_dtype dtype, const void *p);

/* A new array of dtype holding values[0 .. n); fails the test on error. */
rg_array *test_array_from_i64(rg_context *ctx, rg_dtype dtype, const int64_t *values, size_t n);
/* A new array of n elements, each equal to value (a sentinel). */
rg_array *test_array_filled(rg_context *ctx, rg_dtype dtype, size_t n, int64_t value);
/* All elements of an int8..uint64/bool array read back as int64 (malloc'd,
 * at least one element so it is never NULL); fails the test on error. */
int64_t *test_read_i64(const rg_array *a);

/* Fails (with what, the index and both values) at the first k where got[k] != want[k]. */
void test_expect_i64(const int64_t *got, const int64_t *want, size_t n, const char *what);
/* Fails unless a has n elements that read back as want[0 .. n), naming the
 * first that does not (reads a in chunks: no copy of the whole). */
void test_expect_array(const rg_array *a, const int64_t *want, size_t n, const char *what);
/* Fails unless every element of a reads back as value. */
void test_expect_filled(const rg_array *a, int64_t value, const char *what);

/* Length distributions for segment generators. */
typedef enum test_dist {
    DIST_SHORT = 0,   /* uniform 1..8 */
    DIST_EMPTY,       /* every segment empty */
    DIST_HUGE,        /* one segment (in the middle) holds `scale` elements, the rest empty */
    DIST_ONES,        /* every segment of length 1 */
    DIST_HALF_EMPTY,  /* half empty at random, the rest 1..8 */
    DIST_POWER_LAW,   /* Pareto-like: mostly short, a few up to `scale` */
    DIST_COUNT
} test_dist;

const char *test_dist_name(test_dist dist);

/* nsegs lengths (malloc'd, never NULL) drawn from dist with a fixed seed. */
int64_t *test_gen_lengths(test_dist dist, size_t nsegs, int64_t scale, uint64_t seed);

/* A deterministic 64-bit generator (splitmix64). */
uint64_t test_rand(uint64_t *state);

/* Sequential references (malloc'd, never NULL). */
int64_t *ref_offsets(const int64_t *lengths, size_t nsegs);       /* nsegs + 1 */
int64_t *ref_lengths(const int64_t *offsets, size_t nsegs);       /* nsegs */
int64_t *ref_parents(const int64_t *offsets, size_t nsegs);       /* offsets[nsegs] */
int64_t *ref_local_index(const int64_t *offsets, size_t nsegs);   /* offsets[nsegs] */
int64_t *ref_segment_starts(const int64_t *offsets, size_t nsegs);/* offsets[nsegs] */

/* What the automatic strategy and reduction policy take for offsets
 * off[0 .. nsegs] that passed their check on ctx: rg_strategy_choose and
 * rg_reduce_policy_choose, except on an OpenCL GPU or accelerator, where
 * ragged.h documents per-segment when no segment is longer than 1 element
 * (parents, local index, starts) or 256 elements (reductions). */
rg_strategy test_expect_strategy(rg_context *ctx, const int64_t *off, size_t nsegs);
rg_reduce_policy test_expect_policy(rg_context *ctx, const int64_t *off, size_t nsegs);

/* setenv/unsetenv that fail the test when they fail. */
void test_setenv(const char *name, const char *value);
void test_unsetenv(const char *name);

/* Loop tests over TEST_NBACKENDS_PLAIN indices: the backends, then OpenMP
 * with its AVX-512 paths off (the paths of CPUs without it); or over
 * TEST_NBACKENDS_GPU_KERNELS: then also OpenCL building on a CPU device
 * (PoCL) the kernels it builds for GPUs, and launching at most
 * TEST_FEW_GROUPS work-groups for each kernel that loops over its work,
 * so that those loops run many rounds, as on a GPU over big inputs.
 * test_backend_plain(i) is the backend index to test, after setting
 * RAGGED_AVX512=0, or RAGGED_OPENCL_CPU_KERNELS=0 and
 * RAGGED_OPENCL_MAX_GROUPS, for the last two (read at the first op or
 * context, so this must come before either in the forked test). */
#define TEST_NBACKENDS_PLAIN (TEST_NBACKENDS + 1)
#define TEST_NBACKENDS_GPU_KERNELS (TEST_NBACKENDS + 2)
#define TEST_FEW_GROUPS "3" /* odd: a stride of a power of two would hide less */
int test_backend_plain(int i);
/* Whether an OpenCL context of this test builds the CPU variants of kernels. */
int test_cpu_kernels(rg_context *ctx);

/* True when haystack contains needle (NULL haystack: false). */
int test_contains(const char *haystack, const char *needle);


/* The OpenMP thread counts a test runs its loops with, in turn: sets the
 * count for round r of TEST_THREAD_ROUNDS and returns it, or 0 when there
 * is no such round (without OpenMP only round 0, one thread).
 * test_threads_restore() puts back the count from before round 0. */
#define TEST_THREAD_ROUNDS 4
int test_threads(int round);
void test_threads_restore(void);
/* How many of those rounds a test on ctx runs: all on OpenMP, one on
 * OpenCL (thread counts are OpenMP's). */
int test_thread_rounds(const rg_context *ctx);

#endif /* RAGGED_TESTS_COMMON_H */
