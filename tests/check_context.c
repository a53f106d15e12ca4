/* check_context.c — contexts, backend selection by argument and environment, status strings, version. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

/* A pointer value no library call may write into an out parameter. */
#define UNTOUCHED ((rg_context *)(uintptr_t)0x5A5A5A50u)

START_TEST(test_create_free)
{
    TEST_CONTEXT(ctx, _i);
    rg_backend want = test_backend(_i);

    ck_assert_int_eq(rg_context_backend(ctx), want);
    ck_assert_ptr_nonnull(rg_context_device(ctx));
    ck_assert_msg(strlen(rg_context_device(ctx)) > 0, "empty device name");
    rg_device_kind kind = rg_context_device_kind(ctx);
    if (want == RG_BACKEND_OPENMP)
        ck_assert_int_eq(kind, RG_DEVICE_CPU);
    else
        ck_assert_msg(kind == RG_DEVICE_CPU || kind == RG_DEVICE_GPU || kind == RG_DEVICE_ACCELERATOR,
                      "device kind %d", (int)kind);
    ck_assert_ptr_nonnull(rg_context_error(ctx));
    ck_assert_str_eq(rg_context_error(ctx), "");

    /* A second context on the same backend is independent of the first. */
    rg_context *other = test_context(_i);
    ck_assert_ptr_nonnull(other);
    ck_assert_ptr_ne(other, ctx);
    ck_assert_int_eq(rg_context_backend(other), want);
    rg_context_free(other);

    /* The first one still works after the second is gone. */
    int64_t values[3] = {5, 6, 7};
    rg_array *a = test_array_from_i64(ctx, RG_INT64, values, 3);
    int64_t *back = test_read_i64(a);
    test_expect_i64(back, values, 3, "array after freeing another context");
    free(back);
    rg_array_free(a);
    rg_context_free(ctx);
    rg_context_free(NULL);
}
END_TEST

START_TEST(test_free_null)
{
    rg_context_free(NULL);
    rg_array_free(NULL);
    /* Still usable afterwards. */
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENMP);
    ck_assert_int_eq(rg_context_backend(ctx), RG_BACKEND_OPENMP);
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_strerror)
{
    const rg_status all[] = {RG_OK,        RG_EINVAL,    RG_ENOMEM,    RG_EDTYPE,   RG_ESIZE,
                             RG_EOFFSETS,  RG_ERANGE,    RG_EOVERFLOW, RG_ENODEVICE, RG_EBUILD,
                             RG_ENOKERNEL, RG_EDEVICE,   RG_EDEVMEM};
    const size_t n = sizeof all / sizeof all[0];
    for (size_t i = 0; i < n; i++) {
        const char *s = rg_strerror(all[i]);
        ck_assert_msg(s != NULL && s[0] != '\0', "rg_strerror(%d) empty", (int)all[i]);
        for (size_t j = 0; j < i; j++)
            ck_assert_msg(strcmp(s, rg_strerror(all[j])) != 0, "rg_strerror(%d) == rg_strerror(%d) = \"%s\"",
                          (int)all[i], (int)all[j], s);
    }
    /* Unknown statuses still get a string. */
    ck_assert_ptr_nonnull(rg_strerror((rg_status)-99));
    ck_assert_ptr_nonnull(rg_strerror((rg_status)5));
}
END_TEST

START_TEST(test_version)
{
    ck_assert_ptr_nonnull(rg_version_string());
    ck_assert_str_eq(rg_version_string(), RAGGED_VERSION_STRING);
    char expect[64];
    snprintf(expect, sizeof expect, "%d.%d.%d", RAGGED_VERSION_MAJOR, RAGGED_VERSION_MINOR,
             RAGGED_VERSION_PATCH);
    ck_assert_str_eq(RAGGED_VERSION_STRING, expect);
}
END_TEST

START_TEST(test_names)
{
    const rg_backend backends[] = {RG_BACKEND_AUTO, RG_BACKEND_OPENCL, RG_BACKEND_OPENMP};
    for (int i = 0; i < 3; i++) {
        const char *s = rg_backend_name(backends[i]);
        ck_assert_msg(s != NULL && s[0] != '\0', "rg_backend_name(%d) empty", i);
        for (int j = 0; j < i; j++)
            ck_assert_str_ne(s, rg_backend_name(backends[j]));
    }
    ck_assert_ptr_nonnull(rg_backend_name((rg_backend)99));
}
END_TEST

START_TEST(test_env_openmp)
{
    test_setenv("RAGGED_BACKEND", "openmp");
    rg_context *ctx = UNTOUCHED;
    rg_status st = rg_context_create(&ctx, RG_BACKEND_AUTO);
    ck_assert_msg(st == RG_OK, "RAGGED_BACKEND=openmp: %d %s", (int)st, rg_context_error(NULL));
    ck_assert_ptr_ne(ctx, UNTOUCHED);
    ck_assert_int_eq(rg_context_backend(ctx), RG_BACKEND_OPENMP);
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_env_opencl)
{
    test_setenv("RAGGED_BACKEND", "opencl");
    test_unsetenv("RAGGED_DEVICE");
    rg_context *ctx = UNTOUCHED;
    rg_status st = rg_context_create(&ctx, RG_BACKEND_AUTO);
    if (st == RG_ENODEVICE) {
        /* No OpenCL at all: the environment asked for it, so no fallback. */
        ck_assert_ptr_eq(ctx, UNTOUCHED);
        ck_assert_msg(strlen(rg_context_error(NULL)) > 0, "no message for RG_ENODEVICE");
        ck_assert_msg(!test_opencl_required(), "RAGGED_TEST_REQUIRE_OPENCL=1 but no OpenCL device: %s",
                      rg_context_error(NULL));
        fprintf(stderr, "skipped: no OpenCL device (RAGGED_BACKEND=opencl)\n");
        return;
    }
    ck_assert_msg(st == RG_OK, "RAGGED_BACKEND=opencl: %d %s", (int)st, rg_context_error(NULL));
    ck_assert_int_eq(rg_context_backend(ctx), RG_BACKEND_OPENCL);
    rg_context_free(ctx);
}
END_TEST

/* Sets name=value and expects a context of backend to be refused with
 * RG_EINVAL, *out untouched, and a message containing want. */
static void expect_refused(const char *name, const char *value, rg_backend backend,
                           const char *want)
{
    test_setenv(name, value);
    rg_context *ctx = UNTOUCHED;
    rg_status st = rg_context_create(&ctx, backend);
    ck_assert_msg(st == RG_EINVAL, "%s=\"%.20s\" (%s): %d", name, value,
                  rg_backend_name(backend), (int)st);
    ck_assert_ptr_eq(ctx, UNTOUCHED);
    ck_assert_msg(test_contains(rg_context_error(NULL), want), "message: \"%s\"",
                  rg_context_error(NULL));
}

START_TEST(test_env_bogus)
{
    /* The message names the variable and its value, quoted so that a stray space shows. */
    expect_refused("RAGGED_BACKEND", "bogus", RG_BACKEND_AUTO, "RAGGED_BACKEND=\"bogus\"");
    expect_refused("RAGGED_BACKEND", " opencl", RG_BACKEND_AUTO, "RAGGED_BACKEND=\" opencl\"");
    test_unsetenv("RAGGED_BACKEND");
}
END_TEST

/* The switches read where they are used (RAGGED_AVX512 and
 * RAGGED_AVX512_VBMI at an OpenMP context's first op, RAGGED_CACHE at each
 * build, RAGGED_OPENCL_CPU_KERNELS for an OpenCL context on a CPU) are
 * checked when a context of their backend is created: unset, empty, 0 and 1 are fine, a typo is RG_EINVAL
 * naming the variable, not the default. */
START_TEST(test_env_switches)
{
    static const struct {
        const char *name;
        rg_backend backend;
    } vars[] = {{"RAGGED_AVX512", RG_BACKEND_OPENMP},
                {"RAGGED_AVX512_VBMI", RG_BACKEND_OPENMP},
                {"RAGGED_CACHE", RG_BACKEND_OPENCL},
                {"RAGGED_OPENCL_CPU_KERNELS", RG_BACKEND_OPENCL}};
    static const char *const good[] = {"0", "1", ""};
    static const char *const bad[] = {"no", "off", "2", " 0", "1 "};
    test_unsetenv("RAGGED_DEVICE");
    rg_context *probe = NULL;
    bool opencl = rg_context_create(&probe, RG_BACKEND_OPENCL) == RG_OK;
    rg_context_free(probe);
    ck_assert_msg(opencl || !test_opencl_required(), "no OpenCL: %s", rg_context_error(NULL));
    for (size_t v = 0; v < sizeof vars / sizeof *vars; v++) {
        if (vars[v].backend == RG_BACKEND_OPENCL && !opencl)
            continue;
        for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
            test_setenv(vars[v].name, good[i]);
            rg_context *ctx = NULL;
            rg_status st = rg_context_create(&ctx, vars[v].backend);
            ck_assert_msg(st == RG_OK, "%s=\"%s\": %d %s", vars[v].name, good[i], (int)st,
                          rg_context_error(NULL));
            rg_context_free(ctx);
        }
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
            expect_refused(vars[v].name, bad[i], vars[v].backend, vars[v].name);
        test_unsetenv(vars[v].name);
    }
}
END_TEST

/* RAGGED_OMP_STREAM: 0 (plain stores), 1 or empty (streamed outputs of
 * 32 MiB or more) make OpenMP contexts whose ops run; any other value fails
 * an OpenMP context, asked for or reached through auto, with a message
 * naming the variable.  OpenCL contexts do not read it.  (The results under
 * both settings: test_fill_streamed, test_elem_plain_stores.) */
START_TEST(test_env_omp_stream)
{
    static const char *const good[] = {"0", "1", ""};
    static const int64_t lengths[] = {2, 0, 3};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        test_setenv("RAGGED_OMP_STREAM", good[i]);
        rg_context *ctx = UNTOUCHED;
        rg_status st = rg_context_create(&ctx, RG_BACKEND_OPENMP);
        ck_assert_msg(st == RG_OK, "RAGGED_OMP_STREAM=\"%s\": %d %s", good[i], (int)st,
                      rg_context_error(NULL));
        rg_array *len = NULL, *off = NULL, *out = NULL;
        ck_assert_int_eq(rg_array_from_host(&len, ctx, RG_INT64, lengths, 3), RG_OK);
        ck_assert_int_eq(rg_array_create(&off, ctx, RG_INT64, 4), RG_OK);
        ck_assert_int_eq(rg_array_create(&out, ctx, RG_INT64, 5), RG_OK);
        ck_assert_int_eq(rg_offsets_from_lengths(off, len), RG_OK);
        ck_assert_int_eq(rg_local_index(out, off, RG_STRATEGY_AUTO, NULL), RG_OK);
        int64_t got[5] = {0};
        ck_assert_int_eq(rg_array_read(got, out, 0, 5), RG_OK);
        static const int64_t want[5] = {0, 1, 0, 1, 2};
        ck_assert_msg(memcmp(got, want, sizeof want) == 0,
                      "local index wrong under RAGGED_OMP_STREAM=\"%s\"", good[i]);
        rg_array_free(out);
        rg_array_free(off);
        rg_array_free(len);
        rg_context_free(ctx);
    }
    static const char *const bad[] = {"2", "yes", "auto", " 0", "1 "};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        expect_refused("RAGGED_OMP_STREAM", bad[i], RG_BACKEND_OPENMP, "RAGGED_OMP_STREAM");
        test_setenv("RAGGED_BACKEND", "openmp");
        expect_refused("RAGGED_OMP_STREAM", bad[i], RG_BACKEND_AUTO, "RAGGED_OMP_STREAM");
        test_unsetenv("RAGGED_BACKEND");
    }
    /* An OpenCL context takes no notice (where there is an OpenCL device). */
    test_unsetenv("RAGGED_DEVICE");
    rg_context *ctx = NULL;
    if (rg_context_create(&ctx, RG_BACKEND_OPENCL) == RG_OK)
        rg_context_free(ctx);
    else
        ck_assert_msg(!test_opencl_required(), "OpenCL context under RAGGED_OMP_STREAM=\"1 \": %s",
                      rg_context_error(NULL));
    test_unsetenv("RAGGED_OMP_STREAM");
}
END_TEST

/* Plain auto never takes an OpenCL CPU device (PoCL): GPU/accelerator or OpenMP. */
START_TEST(test_auto_plain)
{
    test_unsetenv("RAGGED_BACKEND");
    test_unsetenv("RAGGED_DEVICE");
    rg_context *ctx = UNTOUCHED;
    rg_status st = rg_context_create(&ctx, RG_BACKEND_AUTO);
    ck_assert_msg(st == RG_OK, "auto: %d %s", (int)st, rg_context_error(NULL));
    if (rg_context_backend(ctx) == RG_BACKEND_OPENCL)
        ck_assert_int_ne(rg_context_device_kind(ctx), RG_DEVICE_CPU);
    else
        ck_assert_int_eq(rg_context_backend(ctx), RG_BACKEND_OPENMP);
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_missing_opencl_library)
{
    static const char *missing = "/nonexistent/libOpenCL.so.1";
    test_setenv("RAGGED_OPENCL_LIBRARY", missing);
    test_unsetenv("RAGGED_BACKEND");
    test_unsetenv("RAGGED_DEVICE");

    rg_context *ctx = UNTOUCHED;
    rg_status st = rg_context_create(&ctx, RG_BACKEND_AUTO);
    ck_assert_msg(st == RG_OK, "auto without an ICD loader: %d %s", (int)st, rg_context_error(NULL));
    ck_assert_int_eq(rg_context_backend(ctx), RG_BACKEND_OPENMP);
    rg_context_free(ctx);

    ctx = UNTOUCHED;
    st = rg_context_create(&ctx, RG_BACKEND_OPENCL);
    ck_assert_int_eq(st, RG_ENODEVICE);
    ck_assert_ptr_eq(ctx, UNTOUCHED);
    const char *msg = rg_context_error(NULL);
    ck_assert_msg(msg != NULL && msg[0] != '\0', "no message for RG_ENODEVICE");
#ifdef RAGGED_HAVE_OPENCL
    ck_assert_msg(test_contains(msg, missing), "message should name %s: \"%s\"", missing, msg);
#endif
}
END_TEST

START_TEST(test_device_no_match)
{
    test_unsetenv("RAGGED_BACKEND");
    test_unsetenv("RAGGED_DEVICE");
    rg_context *ctx = UNTOUCHED;
    rg_status any = rg_context_create(&ctx, RG_BACKEND_OPENCL);
    if (any == RG_OK)
        rg_context_free(ctx);
    else
        ck_assert_int_eq(any, RG_ENODEVICE);

    test_setenv("RAGGED_DEVICE", "no-such-device");
    ctx = UNTOUCHED;
    rg_status st = rg_context_create(&ctx, RG_BACKEND_OPENCL);
    ck_assert_int_eq(st, RG_ENODEVICE);
    ck_assert_ptr_eq(ctx, UNTOUCHED);
    const char *msg = rg_context_error(NULL);
    ck_assert_msg(msg != NULL && msg[0] != '\0', "no message for RG_ENODEVICE");
    /* When some device exists, the failure is the filter's, so name it. */
    if (any == RG_OK)
        ck_assert_msg(test_contains(msg, "no-such-device"), "message should name the filter: \"%s\"", msg);
}
END_TEST

/* RAGGED_OPENCL_MAX_GROUPS and RAGGED_OPENCL_MAX_GROUP_SIZE are unset,
 * empty or a whole number from 1; anything else fails an OpenCL context
 * with a message naming the variable. */
START_TEST(test_env_max_groups)
{
    static const char *const names[] = {"RAGGED_OPENCL_MAX_GROUPS", "RAGGED_OPENCL_MAX_GROUP_SIZE"};
    static const char *const good[] = {"", "1", "3", "65536", "4294967295"};
    static const char *const bad[] = {"0", "-1", "x", "3x", " 3", "4294967296"};
    test_unsetenv("RAGGED_DEVICE");
    for (size_t v = 0; v < 2; v++)
        test_unsetenv(names[v]);
    rg_context *ctx = test_context(TEST_BACKEND_OPENCL); /* NULL: no device, skipped */
    if (!ctx)
        return;
    rg_context_free(ctx);
    rg_status st;
    for (size_t v = 0; v < 2; v++) {
        for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
            test_setenv(names[v], good[i]);
            st = rg_context_create(&ctx, RG_BACKEND_OPENCL);
            ck_assert_msg(st == RG_OK, "%s=\"%s\": %d %s", names[v], good[i], (int)st,
                          rg_context_error(NULL));
            rg_context_free(ctx);
        }
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
            expect_refused(names[v], bad[i], RG_BACKEND_OPENCL, names[v]);
        test_unsetenv(names[v]);
    }
}
END_TEST

/* RAGGED_PROFILE=1 prints one line per kernel launch to stderr, with the
 * kernel's name and its device time, and one per program it builds (never
 * taken from the disk cache then); 0 or empty prints nothing; any other
 * value fails an OpenCL context with a message naming the variable. */
static char *run_profiled(const char *value)
{
    test_setenv("RAGGED_PROFILE", value);
    rg_context *ctx = NULL;
    rg_status st = rg_context_create(&ctx, RG_BACKEND_OPENCL);
    ck_assert_msg(st == RG_OK, "RAGGED_PROFILE=\"%s\": %d %s", value, (int)st,
                  rg_context_error(NULL));
    static const int64_t lengths[] = {3, 0, 5, 1};
    rg_array *len = NULL, *off = NULL, *out = NULL;
    ck_assert_int_eq(rg_array_from_host(&len, ctx, RG_INT64, lengths, 4), RG_OK);
    ck_assert_int_eq(rg_array_create(&off, ctx, RG_INT64, 5), RG_OK);
    ck_assert_int_eq(rg_array_create(&out, ctx, RG_INT64, 9), RG_OK);
    /* stderr goes to a file while the ops run. */
    char path[] = "/tmp/ragged_profile_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_msg(fd >= 0, "mkstemp: %s", strerror(errno));
    fflush(stderr);
    int saved = dup(2);
    ck_assert_msg(saved >= 0 && dup2(fd, 2) == 2, "dup2: %s", strerror(errno));
    rg_status a = rg_offsets_from_lengths(off, len);
    rg_status b = rg_parents(out, off, RG_STRATEGY_MERGE_PATH, NULL);
    int64_t parents[9] = {0};
    rg_status c = rg_array_read(parents, out, 0, 9);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ck_assert_int_eq(a, RG_OK);
    ck_assert_int_eq(b, RG_OK);
    ck_assert_int_eq(c, RG_OK);
    off_t size = lseek(fd, 0, SEEK_END);
    char *text = calloc((size_t)size + 1, 1);
    ck_assert_ptr_nonnull(text);
    ck_assert_int_eq(pread(fd, text, (size_t)size, 0), size);
    close(fd);
    unlink(path);
    static const int64_t want[9] = {0, 0, 0, 2, 2, 2, 2, 2, 3};
    ck_assert_msg(memcmp(parents, want, sizeof want) == 0, "parents wrong under RAGGED_PROFILE");
    rg_array_free(out);
    rg_array_free(off);
    rg_array_free(len);
    rg_context_free(ctx);
    return text;
}

START_TEST(test_env_profile)
{
    test_unsetenv("RAGGED_DEVICE");
    test_unsetenv("RAGGED_PROFILE");
    rg_context *ctx = test_context(TEST_BACKEND_OPENCL); /* NULL: no device, skipped */
    if (!ctx)
        return;
    rg_context_free(ctx);

    char *text = run_profiled("1");
    /* The merge path's two kernels, each with a time in microseconds. */
    const char *tile = strstr(text, "ragged profile: seg_merge_path ");
    ck_assert_msg(tile != NULL && strstr(text, "ragged profile: seg_merge_bounds ") != NULL,
                  "no lines for the merge path's kernels: \"%s\"", text);
    double us = -1;
    const char *num = strstr(tile, "work-items ");
    ck_assert_msg(num && sscanf(num, "work-items %lf us", &us) == 1 && us >= 0,
                  "no time in \"%s\"", tile);
    free(text);
    static const char *const off[] = {"0", ""};
    for (size_t i = 0; i < 2; i++) {
        text = run_profiled(off[i]);
        ck_assert_msg(strstr(text, "ragged profile:") == NULL, "RAGGED_PROFILE=\"%s\": \"%s\"",
                      off[i], text);
        free(text);
    }
    /* Each program built afresh, its build log shown, even where the two
     * runs above have just put it in the disk cache. */
    text = run_profiled("1");
    ck_assert_msg(strstr(text, "ragged profile: built parents.cl with \"-DOFF_T=long") != NULL,
                  "no build line for parents.cl: \"%s\"", text);
    free(text);
    static const char *const bad[] = {"2", "yes", " 1", "1 "};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        expect_refused("RAGGED_PROFILE", bad[i], RG_BACKEND_OPENCL, "RAGGED_PROFILE");
    test_unsetenv("RAGGED_PROFILE");
}
END_TEST

/* RAGGED_OPENCL_BUILD_OPTIONS joins every program's build options: the
 * profile's build lines show it; options that break the build fail the op
 * with RG_EBUILD and a message naming them, its output untouched; 256
 * characters or more fail the context with RG_EINVAL. */
START_TEST(test_env_build_options)
{
    test_unsetenv("RAGGED_DEVICE");
    test_unsetenv("RAGGED_PROFILE");
    test_unsetenv("RAGGED_OPENCL_BUILD_OPTIONS");
    rg_context *ctx = test_context(TEST_BACKEND_OPENCL); /* NULL: no device, skipped */
    if (!ctx)
        return;
    rg_context_free(ctx);

    test_setenv("RAGGED_OPENCL_BUILD_OPTIONS", "-DRAGGED_TEST_UNUSED=1");
    char *text = run_profiled("1"); /* and the parents are right */
    const char *line = strstr(text, "ragged profile: built parents.cl with \"-DOFF_T=long");
    ck_assert_msg(line && strstr(line, " -DRAGGED_TEST_UNUSED=1") &&
                      strstr(line, " -DRAGGED_TEST_UNUSED=1") < strchr(line, '\n'),
                  "no option in the build line: \"%s\"", text);
    free(text);
    test_unsetenv("RAGGED_PROFILE");

    /* Every program's source has kernels: no compiler builds one with
     * `kernel` defined away. */
    test_setenv("RAGGED_OPENCL_BUILD_OPTIONS", "-Dkernel=ragged_not_a_qualifier");
    rg_status st = rg_context_create(&ctx, RG_BACKEND_OPENCL);
    ck_assert_msg(st == RG_OK, "%d %s", (int)st, rg_context_error(NULL));
    static const int64_t off[4] = {0, 2, 2, 3};
    int64_t before[3] = {-7, -7, -7}, after[3] = {0};
    rg_array *o = NULL, *out = NULL;
    ck_assert_int_eq(rg_array_from_host(&o, ctx, RG_INT64, off, 4), RG_OK);
    ck_assert_int_eq(rg_array_from_host(&out, ctx, RG_INT64, before, 3), RG_OK);
    st = rg_parents(out, o, RG_STRATEGY_MERGE_PATH, NULL);
    ck_assert_msg(st == RG_EBUILD, "%d %s", (int)st, rg_context_error(ctx));
    ck_assert_msg(test_contains(rg_context_error(ctx), "-Dkernel=ragged_not_a_qualifier"),
                  "message: \"%s\"", rg_context_error(ctx));
    ck_assert_int_eq(rg_array_read(after, out, 0, 3), RG_OK);
    ck_assert_msg(memcmp(after, before, sizeof before) == 0, "output changed");
    rg_array_free(out);
    rg_array_free(o);
    rg_context_free(ctx);

    char longer[300];
    memset(longer, 'x', sizeof longer - 1);
    longer[0] = '-';
    longer[1] = 'D';
    longer[sizeof longer - 1] = '\0';
    /* Too long, or ending in a -D or -I with nothing after it (on which
     * PoCL 3.1 crashed). */
    const char *const bad[] = {longer, "-D", "-I", "-DX=1 -D", "-DX=1 -I  "};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        expect_refused("RAGGED_OPENCL_BUILD_OPTIONS", bad[i], RG_BACKEND_OPENCL,
                       "RAGGED_OPENCL_BUILD_OPTIONS");
    test_unsetenv("RAGGED_OPENCL_BUILD_OPTIONS");
}
END_TEST

START_TEST(test_create_bad_args)
{
    ck_assert_int_eq(rg_context_create(NULL, RG_BACKEND_OPENMP), RG_EINVAL);
    ck_assert_msg(strlen(rg_context_error(NULL)) > 0, "no message for NULL out");
    ck_assert_int_eq(rg_context_create(NULL, RG_BACKEND_AUTO), RG_EINVAL);

    rg_context *ctx = UNTOUCHED;
    ck_assert_int_eq(rg_context_create(&ctx, (rg_backend)7), RG_EINVAL);
    ck_assert_ptr_eq(ctx, UNTOUCHED);
    ck_assert_int_eq(rg_context_create(&ctx, (rg_backend)-1), RG_EINVAL);
    ck_assert_ptr_eq(ctx, UNTOUCHED);

    /* The message of the failure outlives a later success, as ragged.h
     * says: a program that falls back to OpenMP may then print it. */
    ck_assert_msg(test_contains(rg_context_error(NULL), "-1"), "message: \"%s\"",
                  rg_context_error(NULL));
    ck_assert_int_eq(rg_context_create(&ctx, RG_BACKEND_OPENMP), RG_OK);
    ck_assert_msg(test_contains(rg_context_error(NULL), "-1"), "after a success: \"%s\"",
                  rg_context_error(NULL));
    rg_context_free(ctx);
}
END_TEST

/* An error on one context leaves another context's message alone. */
START_TEST(test_error_per_context)
{
    TEST_CONTEXT(a, _i);
    rg_context *b = test_context(_i);
    ck_assert_ptr_nonnull(b);
    rg_array *arr = NULL;
    ck_assert_int_eq(rg_array_create(&arr, a, (rg_dtype)99, 4), RG_EDTYPE);
    ck_assert_ptr_null(arr);
    ck_assert_msg(strlen(rg_context_error(a)) > 0, "no message after RG_EDTYPE");
    ck_assert_str_eq(rg_context_error(b), "");
    rg_context_free(b);
    rg_context_free(a);
}
END_TEST

/* One thread's work for test_contexts_in_threads: its own context, ops
 * checked against the references, and an error whose message must be its
 * own. */
typedef struct thread_job {
    rg_backend backend;
    int id;
    char failure[512]; /* empty: all went well */
} thread_job;

static void *thread_ops(void *arg)
{
    thread_job *job = arg;
    rg_context *ctx = NULL;
    if (rg_context_create(&ctx, job->backend) != RG_OK) {
        snprintf(job->failure, sizeof job->failure, "create: %s", rg_context_error(NULL));
        return NULL;
    }
    for (int round = 0; round < 3 && !job->failure[0]; round++) {
        size_t nsegs = 3000 + 500 * (size_t)job->id;
        int64_t *len = test_gen_lengths(DIST_POWER_LAW, nsegs, 40, 100 * (uint64_t)job->id + round);
        int64_t *off = ref_offsets(len, nsegs), *parents = ref_parents(off, nsegs);
        size_t n = (size_t)off[nsegs];
        int64_t *x = malloc((n ? n : 1) * sizeof *x), *sums = calloc(nsegs, sizeof *sums);
        int64_t *got = malloc((n ? n : 1) * sizeof *got), nnz = -1, want_nnz = 0;
        rg_array *o = NULL, *content = NULL, *out = NULL, *sum = NULL, *rows = NULL;
        for (size_t k = 0; x && k < n; k++) {
            x[k] = (int64_t)((k * 7 + (size_t)job->id) % 5);
            want_nnz += x[k] != 0;
        }
        for (size_t i = 0; x && sums && i < nsegs; i++)
            for (int64_t k = off[i]; k < off[i + 1]; k++)
                sums[i] += x[k];
        rg_status st = x && sums && got ? RG_OK : RG_ENOMEM;
        if (st == RG_OK)
            st = rg_array_from_host(&o, ctx, RG_INT64, off, nsegs + 1);
        if (st == RG_OK)
            st = rg_array_from_host(&content, ctx, RG_INT64, x, n);
        if (st == RG_OK)
            st = rg_array_create(&out, ctx, RG_INT64, n);
        if (st == RG_OK)
            st = rg_array_create(&sum, ctx, RG_INT64, nsegs);
        if (st == RG_OK)
            st = rg_array_create(&rows, ctx, RG_INT64, n);
        if (st == RG_OK)
            st = rg_parents(out, o, RG_STRATEGY_MERGE_PATH, NULL);
        if (st == RG_OK)
            st = rg_array_read(got, out, 0, n);
        if (st == RG_OK && memcmp(got, parents, n * sizeof *got) != 0)
            snprintf(job->failure, sizeof job->failure, "round %d: wrong parents", round);
        if (st == RG_OK)
            st = rg_segment_reduce(sum, content, o, RG_REDUCE_SUM, RG_REDUCE_POLICY_AUTO, NULL);
        if (st == RG_OK)
            st = rg_array_read(got, sum, 0, nsegs);
        if (st == RG_OK && memcmp(got, sums, nsegs * sizeof *got) != 0)
            snprintf(job->failure, sizeof job->failure, "round %d: wrong sums", round);
        if (st == RG_OK)
            st = rg_nonzero_into(rows, &nnz, content, (int64_t[]){(int64_t)n}, 1);
        if (st == RG_OK && nnz != want_nnz)
            snprintf(job->failure, sizeof job->failure, "round %d: nnz %lld, want %lld", round,
                     (long long)nnz, (long long)want_nnz);
        /* An error of this thread's own, in its own context's message. */
        char mine[32];
        snprintf(mine, sizeof mine, "%zu", n + 1000 + (size_t)job->id);
        if (st == RG_OK && rg_offsets_validate(o, n + 1000 + (size_t)job->id) != RG_EOFFSETS)
            snprintf(job->failure, sizeof job->failure, "round %d: bad offsets passed", round);
        else if (st == RG_OK && !test_contains(rg_context_error(ctx), mine))
            snprintf(job->failure, sizeof job->failure, "round %d: message %s, not about %s",
                     round, rg_context_error(ctx), mine);
        if (st != RG_OK)
            snprintf(job->failure, sizeof job->failure, "round %d: %s: %s", round,
                     rg_strerror(st), rg_context_error(ctx));
        rg_array_free(rows);
        rg_array_free(sum);
        rg_array_free(out);
        rg_array_free(content);
        rg_array_free(o);
        free(got);
        free(sums);
        free(x);
        free(parents);
        free(off);
        free(len);
    }
    rg_context_free(ctx);
    return NULL;
}

/* Separate contexts in separate threads, as ragged.h allows: OpenMP and
 * OpenCL contexts side by side, building their programs at the same time
 * into one empty disk cache, each with results and messages of its own. */
START_TEST(test_contexts_in_threads)
{
    rg_backend backends[2] = {RG_BACKEND_OPENMP, RG_BACKEND_OPENCL};
    size_t nbackends = 2;
    const char *tmp = getenv("TMPDIR");
    char cache[256];
    snprintf(cache, sizeof cache, "%s/ragged-threads-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(cache));
    test_setenv("RAGGED_CACHE_DIR", cache); /* this forked test's own, empty */
    rg_context *probe = NULL;
    if (rg_context_create(&probe, RG_BACKEND_OPENCL) != RG_OK) {
        ck_assert_msg(!test_opencl_required(), "no OpenCL: %s", rg_context_error(NULL));
        fprintf(stderr, "test_contexts_in_threads: OpenMP only (%s)\n", rg_context_error(NULL));
        nbackends = 1;
    }
    rg_context_free(probe);
    enum { NTHREADS = 6 };
    thread_job jobs[NTHREADS];
    pthread_t threads[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) {
        jobs[t] = (thread_job){.backend = backends[(size_t)t % nbackends], .id = t};
        ck_assert_int_eq(pthread_create(&threads[t], NULL, thread_ops, &jobs[t]), 0);
    }
    for (int t = 0; t < NTHREADS; t++)
        ck_assert_int_eq(pthread_join(threads[t], NULL), 0);
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf '%s'", cache);
    ck_assert_int_eq(system(rm), 0);
    for (int t = 0; t < NTHREADS; t++)
        ck_assert_msg(jobs[t].failure[0] == '\0', "thread %d (%s): %s", t,
                      rg_backend_name(jobs[t].backend), jobs[t].failure);
}
END_TEST

static void *create_opencl(void *arg)
{
    rg_context *ctx = NULL;
    rg_status st = rg_context_create(&ctx, RG_BACKEND_OPENCL);
    *(rg_status *)arg = st;
    rg_context_free(ctx);
    return NULL;
}

/* The first OpenCL contexts of a process, made by several threads at once
 * (this forked test's process has made none before): PoCL crashed here
 * while it initialised its devices, before creations took a lock. */
START_TEST(test_first_contexts_at_once)
{
    enum { NTHREADS = 8 };
    pthread_t threads[NTHREADS];
    rg_status st[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        ck_assert_int_eq(pthread_create(&threads[t], NULL, create_opencl, &st[t]), 0);
    for (int t = 0; t < NTHREADS; t++)
        ck_assert_int_eq(pthread_join(threads[t], NULL), 0);
    for (int t = 0; t < NTHREADS; t++) {
        ck_assert_msg(st[t] == RG_OK || (st[t] == RG_ENODEVICE && !test_opencl_required()),
                      "thread %d: %s", t, rg_strerror(st[t]));
        ck_assert_int_eq(st[t], st[0]); /* one device for all, or none */
    }
}
END_TEST

static int churn_stop; /* read and written atomically */

/* Makes and frees auto contexts until told to stop; RAGGED_DEVICE matches
 * nothing, so each takes the creations' lock, finds no device and falls
 * back to OpenMP, and the process's OpenCL driver makes no context. */
static void *churn_auto(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&churn_stop, __ATOMIC_RELAXED)) {
        rg_context *ctx = NULL;
        if (rg_context_create(&ctx, RG_BACKEND_AUTO) == RG_OK)
            rg_context_free(ctx);
    }
    return NULL;
}

/* A fork while another thread creates contexts: the child's own creation
 * (which takes the same lock) must not wait for ever on a lock held by a
 * thread the child does not have (7 of 10 children hung before fork took
 * the lock first).  Each child ends by SIGALRM if it hangs. */
START_TEST(test_fork_during_creations)
{
    test_unsetenv("RAGGED_BACKEND");
    test_setenv("RAGGED_DEVICE", "ragged-test-no-such-device");
    rg_context *probe = NULL;
    ck_assert_int_eq(rg_context_create(&probe, RG_BACKEND_AUTO), RG_OK);
    ck_assert_int_eq(rg_context_backend(probe), RG_BACKEND_OPENMP);
    rg_context_free(probe);
    pthread_t churn;
    __atomic_store_n(&churn_stop, 0, __ATOMIC_RELAXED);
    ck_assert_int_eq(pthread_create(&churn, NULL, churn_auto, NULL), 0);
    int hung = 0, failed = 0;
    for (int i = 0; i < 10; i++) {
        usleep(2000);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            signal(SIGALRM, SIG_DFL); /* Check's handler would kill the whole test */
            alarm(10);
            rg_context *ctx = NULL;
            rg_status st = rg_context_create(&ctx, RG_BACKEND_AUTO);
            _exit(st == RG_OK && rg_context_backend(ctx) == RG_BACKEND_OPENMP ? 0 : 1);
        }
        int status = 0;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        hung += WIFSIGNALED(status);
        failed += WIFEXITED(status) && WEXITSTATUS(status) != 0;
    }
    __atomic_store_n(&churn_stop, 1, __ATOMIC_RELAXED);
    ck_assert_int_eq(pthread_join(churn, NULL), 0);
    test_unsetenv("RAGGED_DEVICE");
    ck_assert_msg(hung == 0 && failed == 0, "of 10 children, %d hung and %d failed", hung,
                  failed);
}
END_TEST

/* The temporaries OpenCL ops keep from call to call (merge-path bounds,
 * partials, nonzero's bitmask): ops of growing and shrinking sizes in turn
 * reuse them and stay right, rg_context_free_scratch frees them, and the
 * next ops make them again.  OpenMP keeps none for arrays this small. */
START_TEST(test_scratch_reuse)
{
    TEST_CONTEXT(ctx, test_backend_plain(_i));
    static const size_t sizes[] = {3000, 10, 20000, 1, 500, 20000};
    enum { NSIZES = sizeof sizes / sizeof *sizes };
    for (int round = 0; round < 2 * NSIZES; round++) {
        size_t nsegs = sizes[round % NSIZES];
        int64_t *len = test_gen_lengths(DIST_POWER_LAW, nsegs, 400, 17 + (uint64_t)round);
        int64_t *off = ref_offsets(len, nsegs);
        size_t n = (size_t)off[nsegs];
        int64_t *want = ref_parents(off, nsegs);
        int64_t *vals = malloc((n ? n : 1) * sizeof *vals);
        int64_t *sums = calloc(nsegs, sizeof *sums), *where = malloc((n ? n : 1) * sizeof *where);
        ck_assert(vals && sums && where);
        size_t nnz = 0;
        for (size_t k = 0; k < n; k++) {
            vals[k] = k % 3 == 0 ? 0 : (int64_t)(k % 101) - 50;
            sums[want[k]] += vals[k];
            if (vals[k] != 0)
                where[nnz++] = (int64_t)k;
        }
        rg_array *o = test_array_from_i64(ctx, RG_INT64, off, nsegs + 1);
        rg_array *par = test_array_filled(ctx, RG_INT64, n, -1);
        rg_array *x = test_array_from_i64(ctx, RG_INT64, vals, n);
        rg_array *sum = test_array_filled(ctx, RG_INT64, nsegs, -1);
        rg_array *coords = test_array_filled(ctx, RG_INT64, n, -1);
        ck_assert_int_eq(rg_parents(par, o, RG_STRATEGY_MERGE_PATH, NULL), RG_OK);
        ck_assert_int_eq(rg_segment_reduce(sum, x, o, RG_REDUCE_SUM, RG_REDUCE_POLICY_MERGE_PATH,
                                           NULL),
                         RG_OK);
        int64_t got_nnz = -1, shape = (int64_t)n;
        ck_assert_int_eq(rg_nonzero_into(coords, &got_nnz, x, &shape, 1), RG_OK);
        char what[64];
        int64_t *got = test_read_i64(par);
        snprintf(what, sizeof what, "parents, round %d", round);
        test_expect_i64(got, want, n, what);
        free(got);
        got = test_read_i64(sum);
        snprintf(what, sizeof what, "sums, round %d", round);
        test_expect_i64(got, sums, nsegs, what);
        free(got);
        ck_assert_int_eq(got_nnz, (int64_t)nnz);
        got = test_read_i64(coords);
        snprintf(what, sizeof what, "nonzero, round %d", round);
        test_expect_i64(got, where, nnz, what);
        free(got);
        if (rg_context_backend(ctx) == RG_BACKEND_OPENMP)
            ck_assert_uint_eq(rg_context_scratch_bytes(ctx), 0);
        else
            ck_assert_msg(rg_context_scratch_bytes(ctx) > 0, "round %d: no scratch kept", round);
        if (round == NSIZES - 1) { /* the second pass starts with none */
            ck_assert_int_eq(rg_context_free_scratch(ctx), RG_OK);
            ck_assert_uint_eq(rg_context_scratch_bytes(ctx), 0);
        }
        rg_array_free(coords);
        rg_array_free(sum);
        rg_array_free(x);
        rg_array_free(par);
        rg_array_free(o);
        free(where);
        free(sums);
        free(vals);
        free(want);
        free(off);
        free(len);
    }
    rg_context_free(ctx);
    ck_assert_uint_eq(rg_context_scratch_bytes(NULL), 0);
    ck_assert_int_eq(rg_context_free_scratch(NULL), RG_EINVAL);
}
END_TEST

/* The storage of large arrays freed (OpenCL: one, OpenMP: two) is kept
 * and taken over by the next array of its size: a zero-filled one still
 * reads as zeros, one from the host reads as its values;
 * rg_context_free_scratch frees it. */
START_TEST(test_scratch_spare)
{
    TEST_CONTEXT(ctx, _i);
    enum { N = 5 << 20 }; /* 40 MiB of int64: kept by both backends */
    bool opencl = rg_context_backend(ctx) == RG_BACKEND_OPENCL;
#ifdef __linux__
    bool keeps = true; /* OpenMP maps large arrays, and keeps a mapping, on Linux */
#else
    bool keeps = opencl;
#endif
    int64_t *vals = malloc(N * sizeof *vals);
    ck_assert_ptr_nonnull(vals);
    for (size_t k = 0; k < N; k++)
        vals[k] = (int64_t)(k * 2654435761u % 1000003u) + 1; /* never 0 */
    rg_array *a = test_array_from_i64(ctx, RG_INT64, vals, N);
    ck_assert_int_eq(rg_context_free_scratch(ctx), RG_OK);
    ck_assert_uint_eq(rg_context_scratch_bytes(ctx), 0);
    rg_array_free(a);
    size_t kept = rg_context_scratch_bytes(ctx);
    if (keeps)
        ck_assert_msg(kept >= (size_t)N * 8, "kept %zu bytes of a freed 40 MiB array", kept);
    else
        ck_assert_uint_eq(kept, 0);

    rg_array *small = test_array_filled(ctx, RG_INT64, 10, 3);
    ck_assert_uint_eq(rg_context_scratch_bytes(ctx), kept); /* too small to take it */
    rg_array *z = NULL;
    ck_assert_int_eq(rg_array_create(&z, ctx, RG_INT64, N), RG_OK);
    test_expect_filled(z, 0, "a zero-filled array after a freed one");
    if (opencl) /* OpenMP takes the spare for arrays it overwrites, not zero-filled ones */
        ck_assert_uint_eq(rg_context_scratch_bytes(ctx), 0);
    rg_array_free(z);
    size_t both = opencl ? kept : 2 * kept; /* z's storage too, on OpenMP */
    ck_assert_uint_eq(rg_context_scratch_bytes(ctx), both);
    rg_array *b = NULL;
    ck_assert_int_eq(rg_array_from_host(&b, ctx, RG_INT64, vals, N), RG_OK);
    if (keeps)
        ck_assert_uint_eq(rg_context_scratch_bytes(ctx), both - kept);
    int64_t *got = test_read_i64(b);
    test_expect_i64(got, vals, N, "an array from the host after a freed one");
    free(got);
    rg_array_free(b);
    ck_assert_uint_eq(rg_context_scratch_bytes(ctx), both);
    ck_assert_int_eq(rg_context_free_scratch(ctx), RG_OK);
    ck_assert_uint_eq(rg_context_scratch_bytes(ctx), 0);
    test_expect_filled(small, 3, "a small array");
    rg_array_free(small);
    free(vals);

    /* OpenCL: an array of up to a fifth less takes the spare; freed, the
     * spare is the whole buffer again, not the array's bytes, so a much
     * smaller array never takes it over. */
    if (opencl) {
        static const size_t mib[] = {10, 9, 8, 7, 6};
        for (size_t j = 0; j < sizeof mib / sizeof *mib; j++) {
            size_t bytes = mib[j] << 20;
            ck_assert_int_eq(rg_array_create(&z, ctx, RG_UINT8, bytes), RG_OK);
            bool took = j > 0 && j < 3;
            ck_assert_msg(rg_context_scratch_bytes(ctx) == (took || j == 0 ? 0 : (size_t)10 << 20),
                          "%zu MiB array: %zu bytes kept", mib[j], rg_context_scratch_bytes(ctx));
            test_expect_filled(z, 0, "a zero-filled array");
            rg_array_free(z);
            ck_assert_msg(rg_context_scratch_bytes(ctx) == (size_t)10 << 20,
                          "after freeing %zu MiB: %zu bytes kept", mib[j],
                          rg_context_scratch_bytes(ctx));
        }
    }
    rg_context_free(ctx);
}
END_TEST

/* OpenMP keeps the storage of the two largest arrays freed; a large array
 * written whole takes the smallest that will do, cut to its size. */
START_TEST(test_scratch_two_spares)
{
#ifdef __linux__
    rg_context *ctx = NULL;
    ck_assert_int_eq(rg_context_create(&ctx, RG_BACKEND_OPENMP), RG_OK);
    const size_t mib = (size_t)1 << 20;
    enum { MAXN = 50 << 17 }; /* 50 MiB of int64 */
    int64_t *vals = malloc(MAXN * sizeof *vals);
    ck_assert_ptr_nonnull(vals);
    for (size_t k = 0; k < MAXN; k++)
        vals[k] = (int64_t)(k * 2654435761u % 1000003u) - 500000;
    rg_array *a[3];
    static const size_t freed[3] = {40, 48, 36};
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(rg_array_from_host(&a[i], ctx, RG_INT64, vals, freed[i] << 17), RG_OK);
    for (int i = 0; i < 3; i++)
        rg_array_free(a[i]);
    ck_assert_uint_eq(rg_context_scratch_bytes(ctx), 88 * mib); /* 36 MiB went back */
    /* 38 MiB takes the 40 (best fit), 45 MiB the 48, 50 MiB a new mapping */
    static const size_t taken[3] = {38, 45, 50}, left[3] = {48, 0, 0};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(rg_array_from_host(&a[i], ctx, RG_INT64, vals, taken[i] << 17), RG_OK);
        ck_assert_uint_eq(rg_context_scratch_bytes(ctx), left[i] * mib);
        int64_t *got = test_read_i64(a[i]);
        test_expect_i64(got, vals, taken[i] << 17, "an array on a spare");
        free(got);
    }
    rg_array_free(a[0]);
    rg_array_free(a[2]);
    ck_assert_uint_eq(rg_context_scratch_bytes(ctx), 88 * mib); /* cut to 38, and 50 */
    rg_array_free(a[1]);
    ck_assert_uint_eq(rg_context_scratch_bytes(ctx), 95 * mib); /* 38 went back */
    ck_assert_int_eq(rg_context_free_scratch(ctx), RG_OK);
    ck_assert_uint_eq(rg_context_scratch_bytes(ctx), 0);
    free(vals);
    rg_context_free(ctx);
#endif
}
END_TEST

Suite *context_suite(void)
{
    Suite *s = test_suite("context");

    TCase *tc = test_tcase("create");
    tcase_add_loop_test(tc, test_create_free, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_error_per_context, 0, TEST_NBACKENDS);
    tcase_add_test(tc, test_free_null);
    tcase_add_test(tc, test_create_bad_args);
    tcase_add_test(tc, test_contexts_in_threads);
    tcase_add_test(tc, test_first_contexts_at_once);
    tcase_add_test(tc, test_fork_during_creations);
    tcase_add_loop_test(tc, test_scratch_reuse, 0, TEST_NBACKENDS_GPU_KERNELS);
    tcase_add_loop_test(tc, test_scratch_spare, 0, TEST_NBACKENDS);
    tcase_add_test(tc, test_scratch_two_spares);
    suite_add_tcase(s, tc);

    tc = test_tcase("strings");
    tcase_add_test(tc, test_strerror);
    tcase_add_test(tc, test_version);
    tcase_add_test(tc, test_names);
    suite_add_tcase(s, tc);

    tc = test_tcase("environment");
    tcase_add_test(tc, test_env_openmp);
    tcase_add_test(tc, test_env_opencl);
    tcase_add_test(tc, test_env_bogus);
    tcase_add_test(tc, test_env_switches);
    tcase_add_test(tc, test_env_omp_stream);
    tcase_add_test(tc, test_auto_plain);
    tcase_add_test(tc, test_missing_opencl_library);
    tcase_add_test(tc, test_device_no_match);
    tcase_add_test(tc, test_env_max_groups);
    tcase_add_test(tc, test_env_profile);
    tcase_add_test(tc, test_env_build_options);
    suite_add_tcase(s, tc);

    return s;
}
