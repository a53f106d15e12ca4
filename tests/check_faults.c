/* check_faults.c — OpenCL failures in the middle of the library's work (a
 * failed upload, kernel, allocation, a missing kernel file, a small device
 * buffer limit): the call fails with a clear status, its outputs and the
 * arrays it read stay as they were, and the context goes on working.  The
 * failures come from tests/clfail.c, a stand-in ICD loader
 * (RAGGED_TEST_CLFAIL names it; make check sets it). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

/* OpenCL's codes, without its headers. */
#define CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)
#define CL_OUT_OF_RESOURCES (-5)
#define CL_OUT_OF_HOST_MEMORY (-6)

#define UNTOUCHED ((rg_array *)(uintptr_t)0x5A5A5A50u)

typedef void (*arm_fn)(const char *name, int after, int32_t err);
typedef void (*max_alloc_fn)(uint64_t bytes);

static arm_fn arm;

/* Segments [2 3 0 4]: their offsets and parents. */
static const int64_t four_off[5] = {0, 2, 5, 5, 9};
static const int64_t four_parents[9] = {0, 0, 1, 1, 1, 3, 3, 3, 3};

/* An OpenCL context on the stand-in loader (whose device then reports a
 * largest buffer of max_alloc bytes, unless 0), or NULL to skip. */
static rg_context *fault_context(uint64_t max_alloc)
{
    const char *path = getenv("RAGGED_TEST_CLFAIL");
    if (!path || access(path, R_OK) != 0) {
        fprintf(stderr, "skipped: no fault-injecting loader (RAGGED_TEST_CLFAIL)\n");
        return NULL;
    }
    const char *chosen = getenv("RAGGED_OPENCL_LIBRARY");
    if (chosen && *chosen) { /* a run that picked its loader (or hid OpenCL) keeps it */
        fprintf(stderr, "skipped: RAGGED_OPENCL_LIBRARY is set (%s)\n", chosen);
        return NULL;
    }
    void *shim = dlopen(path, RTLD_NOW | RTLD_LOCAL); /* the handle libragged gets too */
    ck_assert_msg(shim != NULL, "%s: %s", path, dlerror());
    arm = (arm_fn)dlsym(shim, "clfail_arm");
    max_alloc_fn set_max = (max_alloc_fn)dlsym(shim, "clfail_max_alloc");
    ck_assert(arm && set_max);
    set_max(max_alloc);
    test_setenv("RAGGED_OPENCL_LIBRARY", path);
    rg_context *ctx = NULL;
    rg_status st = rg_context_create(&ctx, RG_BACKEND_OPENCL);
    /* No device is a skip; the stand-in itself failing to load is not. */
    ck_assert_msg(st != RG_ENODEVICE || !test_contains(rg_context_error(NULL), path),
                  "the stand-in loader: %s", rg_context_error(NULL));
    if (st == RG_ENODEVICE && !test_opencl_required()) {
        fprintf(stderr, "skipped: no OpenCL device (%s)\n", rg_context_error(NULL));
        return NULL;
    }
    ck_assert_msg(st == RG_OK, "OpenCL context: %d %s", (int)st, rg_context_error(NULL));
    return ctx;
}

/* An int64 array whose values are held on the host, not uploaded yet: a
 * fresh array (no kernel wrote it) written from the host. */
static rg_array *host_held(rg_context *ctx, const int64_t *values, size_t n)
{
    rg_array *a = NULL;
    ck_assert_int_eq(rg_array_create(&a, ctx, RG_INT64, n), RG_OK);
    ck_assert_int_eq(rg_array_write(a, 0, values, n), RG_OK);
    return a;
}

static void expect_values(const rg_array *a, const int64_t *want, size_t n, const char *what)
{
    int64_t *got = test_read_i64(a);
    test_expect_i64(got, want, n, what);
    free(got);
}

/* A failed upload leaves the host's changes as the array's value, and is
 * not reported again by the next call. */
START_TEST(test_fault_upload)
{
    rg_context *ctx = fault_context(0);
    if (!ctx)
        return;
    const int64_t start[6] = {1, 2, 3, 4, 5, 6}, changed[6] = {1, 2, 50, 60, 5, 6};
    rg_array *a = host_held(ctx, changed, 6);
    arm("clEnqueueWriteBuffer", 0, CL_OUT_OF_RESOURCES);
    int64_t nine = 9;
    rg_status st = rg_array_fill(a, &nine);
    ck_assert_msg(st == RG_EDEVICE, "fill after a failed upload: %d", (int)st);
    ck_assert_msg(test_contains(rg_context_error(ctx), "clEnqueueWriteBuffer"), "message: %s",
                  rg_context_error(ctx));
    expect_values(a, changed, 6, "after the failed fill");
    /* Again, with the upload working: the changes go up, then the fill. */
    rg_array *b = test_array_from_i64(ctx, RG_INT64, start, 6);
    ck_assert_int_eq(rg_array_copy(b, a), RG_OK);
    expect_values(b, changed, 6, "copy after the failed fill");
    ck_assert_int_eq(rg_array_fill(a, &nine), RG_OK);
    const int64_t nines[6] = {9, 9, 9, 9, 9, 9};
    expect_values(a, nines, 6, "fill");
    rg_array_free(b);
    rg_array_free(a);
    rg_context_free(ctx);
}
END_TEST

/* An op whose output's upload fails and then its kernel: it fails, with
 * the output as the host left it, and the parked upload failure does not
 * fail the next, unrelated op. */
START_TEST(test_fault_parked_upload)
{
    rg_context *ctx = fault_context(0);
    if (!ctx)
        return;
    const int64_t mine[9] = {7, 7, 7, 7, 7, 7, 7, 7, 8};
    rg_array *o = test_array_from_i64(ctx, RG_INT64, four_off, 5);
    rg_array *warm = test_array_filled(ctx, RG_INT64, 9, 0);
    /* Checks the offsets (and builds parents.cl) first, so that the failing
     * call's first kernel is seg_bsearch's. */
    ck_assert_int_eq(rg_parents(warm, o, RG_STRATEGY_PER_SEGMENT, NULL), RG_OK);
    rg_array_free(warm);
    /* An output no kernel wrote yet: the write stays on the host until the
     * op uploads it, and that upload fails. */
    rg_array *out = host_held(ctx, mine, 9);
    arm("clEnqueueWriteBuffer", 0, CL_OUT_OF_RESOURCES);
    arm("clCreateKernel", 0, CL_OUT_OF_RESOURCES);
    rg_status st = rg_parents(out, o, RG_STRATEGY_BSEARCH, NULL);
    ck_assert_msg(st == RG_EDEVICE, "parents: %d %s", (int)st, rg_context_error(ctx));
    expect_values(out, mine, 9, "output after the failed parents");
    rg_array *other = test_array_filled(ctx, RG_INT64, 3, 0);
    int64_t four = 4;
    st = rg_array_fill(other, &four);
    ck_assert_msg(st == RG_OK, "a fill after: %d %s", (int)st, rg_context_error(ctx));
    ck_assert_int_eq(rg_parents(out, o, RG_STRATEGY_BSEARCH, NULL), RG_OK);
    expect_values(out, four_parents, 9, "parents, again");
    rg_array_free(other);
    rg_array_free(out);
    rg_array_free(o);
    rg_context_free(ctx);
}
END_TEST

/* The flood strategy scans its output after writing it: with no device
 * memory for the scan, or no scan.cl, it must fail before the first write. */
START_TEST(test_fault_flood_scan)
{
    rg_context *ctx = fault_context(0);
    if (!ctx)
        return;
    const int64_t sevens[9] = {-7, -7, -7, -7, -7, -7, -7, -7, -7};
    rg_array *o = test_array_from_i64(ctx, RG_INT64, four_off, 5);
    rg_array *out = test_array_filled(ctx, RG_INT64, 9, 0);
    ck_assert_int_eq(rg_parents(out, o, RG_STRATEGY_PER_SEGMENT, NULL), RG_OK); /* checks o */
    for (int local = 0; local < 2; local++) {
        ck_assert_int_eq(rg_array_fill(out, &sevens[0]), RG_OK);
        rg_context_finish(ctx);
        /* The scan's partials must then be made, with nothing else kept to free. */
        ck_assert_int_eq(rg_context_free_scratch(ctx), RG_OK);
        arm("clCreateBuffer", 0, CL_MEM_OBJECT_ALLOCATION_FAILURE);
        rg_status st = local ? rg_local_index(out, o, RG_STRATEGY_FLOOD, NULL)
                             : rg_parents(out, o, RG_STRATEGY_FLOOD, NULL);
        ck_assert_msg(st == RG_EDEVMEM, "flood without memory: %d %s", (int)st,
                      rg_context_error(ctx));
        expect_values(out, sevens, 9, "flood's output");
    }
    rg_array_free(out);
    rg_array_free(o);
    rg_context_free(ctx);

    /* Kernels found in a folder without scan.cl. */
    const char *kernels = getenv("RAGGED_KERNEL_PATH");
    if (!kernels || strchr(kernels, ':')) {
        fprintf(stderr, "skipped: RAGGED_KERNEL_PATH is not one folder\n");
        return;
    }
    char dir[] = "/tmp/ragged-noscan-XXXXXX", from[4096], to[4096];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    static const char *const files[] = {"offsets.cl", "parents.cl"};
    for (int f = 0; f < 2; f++) {
        snprintf(from, sizeof from, "%s/%s", kernels, files[f]);
        snprintf(to, sizeof to, "%s/%s", dir, files[f]);
        ck_assert_msg(symlink(from, to) == 0, "symlink %s", to);
    }
    test_setenv("RAGGED_KERNEL_PATH", dir);
    ck_assert_int_eq(rg_context_create(&ctx, RG_BACKEND_OPENCL), RG_OK);
    o = test_array_from_i64(ctx, RG_INT64, four_off, 5);
    out = test_array_filled(ctx, RG_INT64, 9, -7);
    for (int local = 0; local < 2; local++) {
        rg_status st = local ? rg_local_index(out, o, RG_STRATEGY_FLOOD, NULL)
                             : rg_parents(out, o, RG_STRATEGY_FLOOD, NULL);
        ck_assert_msg(st == RG_ENOKERNEL, "flood without scan.cl: %d %s", (int)st,
                      rg_context_error(ctx));
        ck_assert_msg(test_contains(rg_context_error(ctx), "scan.cl"), "message: %s",
                      rg_context_error(ctx));
        expect_values(out, sevens, 9, "flood's output without scan.cl");
    }
    for (int f = 0; f < 2; f++) {
        snprintf(to, sizeof to, "%s/%s", dir, files[f]);
        unlink(to);
    }
    rmdir(dir);
    rg_array_free(out);
    rg_array_free(o);
    rg_context_free(ctx);
}
END_TEST

/* A list whose appends are still on the host: a failing rg_list_scalar
 * leaves it as it was, as every failing rg_list call does. */
START_TEST(test_fault_list_scalar)
{
    rg_context *ctx = fault_context(0);
    if (!ctx)
        return;
    rg_list *list = NULL;
    ck_assert_int_eq(rg_list_create(&list, ctx, RG_INT64, 0), RG_OK);
    const int64_t items[5] = {1, 2, 3, 4, 5}, plus[5] = {11, 12, 13, 14, 15};
    ck_assert_int_eq(rg_list_append(list, items, 3), RG_OK);
    ck_assert_int_eq(rg_list_append(list, items + 3, 2), RG_OK);
    arm("clEnqueueWriteBuffer", 0, CL_OUT_OF_RESOURCES);
    rg_status st = rg_list_scalar(list, RG_ARITH_ADD, 10.0);
    ck_assert_msg(st == RG_EDEVICE, "scalar: %d %s", (int)st, rg_context_error(ctx));
    ck_assert_uint_eq(rg_list_nitems(list), 2);
    expect_values(rg_list_content(list), items, 5, "list after the failed scalar");
    ck_assert_int_eq(rg_list_scalar(list, RG_ARITH_ADD, 10.0), RG_OK);
    expect_values(rg_list_content(list), plus, 5, "list after the scalar");
    rg_list_free(list);
    rg_context_free(ctx);
}
END_TEST

/* OpenCL's CL_OUT_OF_HOST_MEMORY is host memory: RG_ENOMEM. */
START_TEST(test_fault_host_memory)
{
    rg_context *ctx = fault_context(0);
    if (!ctx)
        return;
    arm("clCreateBuffer", 0, CL_OUT_OF_HOST_MEMORY);
    rg_array *a = UNTOUCHED;
    rg_status st = rg_array_create(&a, ctx, RG_INT64, 100);
    ck_assert_msg(st == RG_ENOMEM, "create: %d %s", (int)st, rg_context_error(ctx));
    ck_assert_ptr_eq(a, UNTOUCHED);
    ck_assert_int_eq(rg_array_create(&a, ctx, RG_INT64, 100), RG_OK);
    rg_array_free(a);
    rg_context_free(ctx);
}
END_TEST

/* A list grows by doubling, but where the doubled size is more than the
 * device's largest buffer and the exact need is not, it takes the exact
 * need: it can grow right up to the limit, and no further. */
START_TEST(test_fault_list_limit)
{
    enum { LIMIT = 1 << 20 };
    rg_context *ctx = fault_context(LIMIT);
    if (!ctx)
        return;
    rg_list *list = NULL;
    ck_assert_int_eq(rg_list_create(&list, ctx, RG_UINT8, 0), RG_OK);
    unsigned char *item = malloc(LIMIT);
    ck_assert_ptr_nonnull(item);
    for (size_t i = 0; i < LIMIT; i++)
        item[i] = (unsigned char)(i * 7);
    /* 600 KiB, then items up to the limit exactly. */
    size_t have = 600 << 10;
    ck_assert_int_eq(rg_list_append(list, item, have), RG_OK);
    /* A real error first: the grows that succeed on their retry leave its
     * message as the last one. */
    rg_array *bad = UNTOUCHED;
    ck_assert_int_eq(rg_array_create(&bad, ctx, (rg_dtype)99, 1), RG_EDTYPE);
    char *before = strdup(rg_context_error(ctx));
    ck_assert_ptr_nonnull(before);
    ck_assert_uint_gt(strlen(before), 0);
    while (have < LIMIT) {
        size_t n = LIMIT - have < 50000 ? LIMIT - have : 50000;
        rg_status st = rg_list_append(list, item + have, n);
        ck_assert_msg(st == RG_OK, "append at %zu bytes: %d %s", have, (int)st,
                      rg_context_error(ctx));
        have += n;
    }
    ck_assert_str_eq(rg_context_error(ctx), before);
    free(before);
    rg_status st = rg_list_append(list, item, 1);
    ck_assert_msg(st == RG_EDEVMEM, "past the limit: %d %s", (int)st, rg_context_error(ctx));
    ck_assert_uint_eq(rg_list_nelems(list), LIMIT);
    unsigned char *back = malloc(LIMIT);
    ck_assert_ptr_nonnull(back);
    ck_assert_int_eq(rg_array_read(back, rg_list_content(list), 0, LIMIT), RG_OK);
    size_t k = 0, at = 600 << 10;
    ck_assert_msg(memcmp(back, item, at) == 0, "the first item changed");
    for (k = at; k < LIMIT; k++)
        if (back[k] != item[k])
            break;
    ck_assert_msg(k == LIMIT, "byte %zu changed", k);
    free(back);
    free(item);
    rg_list_free(list);
    rg_context_free(ctx);
}
END_TEST

/* The scratch buffers an op keeps for the next: freed, and a failed
 * allocation tried again, when an allocation runs out of memory; not when
 * none are kept. */
START_TEST(test_fault_scratch_retry)
{
    rg_context *ctx = fault_context(0);
    if (!ctx)
        return;
    ck_assert_uint_eq(rg_context_scratch_bytes(ctx), 0);
    rg_array *o = test_array_from_i64(ctx, RG_INT64, four_off, 5);
    rg_array *out = test_array_filled(ctx, RG_INT64, 9, 0);
    ck_assert_int_eq(rg_parents(out, o, RG_STRATEGY_MERGE_PATH, NULL), RG_OK);
    expect_values(out, four_parents, 9, "merge-path parents");
    size_t kept = rg_context_scratch_bytes(ctx);
    ck_assert_msg(kept > 0, "no scratch kept after a merge-path parents");

    arm("clCreateBuffer", 0, CL_MEM_OBJECT_ALLOCATION_FAILURE);
    rg_array *a = UNTOUCHED;
    rg_status st = rg_array_create(&a, ctx, RG_INT64, 100);
    ck_assert_msg(st == RG_OK, "create with scratch to free: %d %s", (int)st,
                  rg_context_error(ctx));
    ck_assert_uint_eq(rg_context_scratch_bytes(ctx), 0);
    rg_array_free(a);

    ck_assert_int_eq(rg_parents(out, o, RG_STRATEGY_MERGE_PATH, NULL), RG_OK);
    expect_values(out, four_parents, 9, "merge-path parents after the scratch was freed");
    ck_assert_msg(rg_context_scratch_bytes(ctx) > 0, "no scratch made again");
    ck_assert_int_eq(rg_context_free_scratch(ctx), RG_OK);
    ck_assert_uint_eq(rg_context_scratch_bytes(ctx), 0);

    arm("clCreateBuffer", 0, CL_MEM_OBJECT_ALLOCATION_FAILURE);
    a = UNTOUCHED;
    st = rg_array_create(&a, ctx, RG_INT64, 100);
    ck_assert_msg(st == RG_EDEVMEM, "create with no scratch to free: %d %s", (int)st,
                  rg_context_error(ctx));
    ck_assert_ptr_eq(a, UNTOUCHED);
    rg_array_free(out);
    rg_array_free(o);
    rg_context_free(ctx);
}
END_TEST

/* A scratch buffer that must grow and cannot: the op fails with its output
 * untouched, and the next call makes the buffer and gets it right. */
START_TEST(test_fault_scratch_grow)
{
    rg_context *ctx = fault_context(0);
    if (!ctx)
        return;
    size_t nsegs = 40000;
    int64_t *len = test_gen_lengths(DIST_HALF_EMPTY, nsegs, 8, 3);
    int64_t *off = ref_offsets(len, nsegs), *parents = ref_parents(off, nsegs);
    size_t nelems = (size_t)off[nsegs];
    rg_array *big_o = test_array_from_i64(ctx, RG_INT64, off, nsegs + 1);
    rg_array *big = test_array_filled(ctx, RG_INT64, nelems, -7);
    rg_array *o = test_array_from_i64(ctx, RG_INT64, four_off, 5);
    rg_array *small = test_array_filled(ctx, RG_INT64, 9, 0);
    /* Both offsets checked; then only the small op's bounds kept. */
    ck_assert_int_eq(rg_parents(big, big_o, RG_STRATEGY_PER_SEGMENT, NULL), RG_OK);
    ck_assert_int_eq(rg_array_fill(big, &(int64_t){-7}), RG_OK);
    ck_assert_int_eq(rg_parents(small, o, RG_STRATEGY_PER_SEGMENT, NULL), RG_OK);
    ck_assert_int_eq(rg_context_free_scratch(ctx), RG_OK);
    ck_assert_int_eq(rg_parents(small, o, RG_STRATEGY_MERGE_PATH, NULL), RG_OK);
    size_t kept = rg_context_scratch_bytes(ctx);
    ck_assert_msg(kept > 0, "no bounds kept");

    arm("clCreateBuffer", 0, CL_MEM_OBJECT_ALLOCATION_FAILURE);
    rg_status st = rg_parents(big, big_o, RG_STRATEGY_MERGE_PATH, NULL);
    ck_assert_msg(st == RG_EDEVMEM, "merge path without memory for its bounds: %d %s", (int)st,
                  rg_context_error(ctx));
    int64_t *got = test_read_i64(big);
    size_t k = 0;
    while (k < nelems && got[k] == -7)
        k++;
    ck_assert_msg(k == nelems, "output element %zu written by the failed call", k);
    free(got);
    ck_assert_uint_eq(rg_context_scratch_bytes(ctx), 0);

    ck_assert_int_eq(rg_parents(big, big_o, RG_STRATEGY_MERGE_PATH, NULL), RG_OK);
    expect_values(big, parents, nelems, "merge-path parents once the bounds could grow");
    ck_assert_msg(rg_context_scratch_bytes(ctx) > kept, "bounds did not grow: %zu, %zu",
                  rg_context_scratch_bytes(ctx), kept);
    ck_assert_int_eq(rg_parents(small, o, RG_STRATEGY_MERGE_PATH, NULL), RG_OK);
    expect_values(small, four_parents, 9, "small merge-path parents with the larger bounds");

    /* The op's own reference to a kept buffer cannot be taken. */
    ck_assert_int_eq(rg_array_fill(big, &(int64_t){-7}), RG_OK);
    rg_context_finish(ctx);
    arm("clRetainMemObject", 0, CL_OUT_OF_RESOURCES);
    st = rg_parents(big, big_o, RG_STRATEGY_MERGE_PATH, NULL);
    ck_assert_msg(st == RG_EDEVICE, "merge path, bounds not retained: %d %s", (int)st,
                  rg_context_error(ctx));
    ck_assert_msg(test_contains(rg_context_error(ctx), "clRetainMemObject"), "message: %s",
                  rg_context_error(ctx));
    test_expect_filled(big, -7, "output after the failed retain");
    ck_assert_int_eq(rg_parents(big, big_o, RG_STRATEGY_MERGE_PATH, NULL), RG_OK);
    expect_values(big, parents, nelems, "merge-path parents after the failed retain");
    free(len);
    free(off);
    free(parents);
    rg_array_free(small);
    rg_array_free(o);
    rg_array_free(big);
    rg_array_free(big_o);
    rg_context_free(ctx);
}
END_TEST


/* A launch or read-back that fails for lack of memory: RG_EDEVMEM or
 * RG_ENOMEM with the output as it was, while the op had queued nothing that
 * writes its output (merge path's bounds and nonzero's count write
 * temporaries only); RG_EDEVICE, which says outputs may be partly written,
 * once it had (the flood fills its output first, a merge-path sum writes
 * its output before the fix-up pass, nonzero_into with room for every row
 * writes them before it reads the count back). */
START_TEST(test_fault_launch_memory)
{
    rg_context *ctx = fault_context(0);
    if (!ctx)
        return;
    const int64_t values[9] = {1, 0, 2, 3, 0, 4, 5, 0, 6};
    const int64_t sums[4] = {1, 5, 0, 15}, nz[6] = {0, 2, 3, 5, 6, 8};
    rg_array *o = test_array_from_i64(ctx, RG_INT64, four_off, 5);
    rg_array *x = test_array_from_i64(ctx, RG_INT64, values, 9);
    rg_array *out = test_array_filled(ctx, RG_INT64, 9, 0);
    rg_array *sum = test_array_filled(ctx, RG_INT64, 4, 0);
    rg_array *rows = test_array_filled(ctx, RG_INT64, 9, 0);
    rg_array *few = test_array_filled(ctx, RG_INT64, 3, 0);
    /* Checks o and builds every program, so that the failing calls' first
     * launches are their own. */
    ck_assert_int_eq(rg_parents(out, o, RG_STRATEGY_MERGE_PATH, NULL), RG_OK);
    ck_assert_int_eq(rg_parents(out, o, RG_STRATEGY_FLOOD, NULL), RG_OK);
    ck_assert_int_eq(
        rg_segment_reduce(sum, x, o, RG_REDUCE_SUM, RG_REDUCE_POLICY_MERGE_PATH, NULL), RG_OK);
    int64_t nnz = -1;
    ck_assert_int_eq(rg_nonzero_into(rows, &nnz, x, (int64_t[]){9}, 1), RG_OK);
    const int64_t m7 = -7;
    struct {
        const char *what, *call;
        int after;
        int32_t err;
        rg_status want;
    } cases[] = {
        {"merge-path parents, tile kernel", "clEnqueueNDRangeKernel", 1,
         CL_MEM_OBJECT_ALLOCATION_FAILURE, RG_EDEVMEM},
        {"flood parents, after the fill", "clEnqueueNDRangeKernel", 0,
         CL_MEM_OBJECT_ALLOCATION_FAILURE, RG_EDEVICE},
        {"merge-path sum, chunk kernel", "clEnqueueNDRangeKernel", 1,
         CL_MEM_OBJECT_ALLOCATION_FAILURE, RG_EDEVMEM},
        {"merge-path sum, fix-up kernel", "clEnqueueNDRangeKernel", 2,
         CL_MEM_OBJECT_ALLOCATION_FAILURE, RG_EDEVICE},
        {"nonzero_into, count read before the rows", "clEnqueueReadBuffer", 0,
         CL_OUT_OF_HOST_MEMORY, RG_ENOMEM},
        {"nonzero_into, count read after the rows", "clEnqueueReadBuffer", 0,
         CL_OUT_OF_HOST_MEMORY, RG_EDEVICE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rg_array *target = i < 2 ? out : i < 4 ? sum : i == 4 ? few : rows;
        ck_assert_int_eq(rg_array_fill(target, &m7), RG_OK);
        rg_context_finish(ctx);
        arm(cases[i].call, cases[i].after, cases[i].err);
        nnz = -1;
        rg_status st = i == 0   ? rg_parents(out, o, RG_STRATEGY_MERGE_PATH, NULL)
                       : i == 1 ? rg_parents(out, o, RG_STRATEGY_FLOOD, NULL)
                       : i < 4  ? rg_segment_reduce(sum, x, o, RG_REDUCE_SUM,
                                                    RG_REDUCE_POLICY_MERGE_PATH, NULL)
                                : rg_nonzero_into(target, &nnz, x, (int64_t[]){9}, 1);
        arm(cases[i].call, -1, 0); /* disarmed if the call did not get that far */
        ck_assert_msg(st == cases[i].want, "%s: %d, want %d: %s", cases[i].what, (int)st,
                      (int)cases[i].want, rg_context_error(ctx));
        ck_assert_msg(test_contains(rg_context_error(ctx), "partly written") ==
                          (cases[i].want == RG_EDEVICE),
                      "%s: message %s", cases[i].what, rg_context_error(ctx));
        ck_assert_msg(nnz == -1, "%s: nnz set to %lld", cases[i].what, (long long)nnz);
        if (cases[i].want != RG_EDEVICE)
            test_expect_filled(target, -7, cases[i].what);
    }
    /* The context goes on working; the next op is not reported as partial. */
    ck_assert_int_eq(rg_parents(out, o, RG_STRATEGY_FLOOD, NULL), RG_OK);
    expect_values(out, four_parents, 9, "flood parents after the failures");
    ck_assert_int_eq(
        rg_segment_reduce(sum, x, o, RG_REDUCE_SUM, RG_REDUCE_POLICY_MERGE_PATH, NULL), RG_OK);
    expect_values(sum, sums, 4, "merge-path sum after the failures");
    ck_assert_int_eq(rg_nonzero_into(rows, &nnz, x, (int64_t[]){9}, 1), RG_OK);
    ck_assert_int_eq(nnz, 6);
    int64_t *got = test_read_i64(rows);
    test_expect_i64(got, nz, 6, "nonzero_into after the failures");
    free(got);
    /* Nothing kept, so no retry: a memory failure outside an op stays one. */
    ck_assert_int_eq(rg_context_free_scratch(ctx), RG_OK);
    arm("clCreateBuffer", 0, CL_MEM_OBJECT_ALLOCATION_FAILURE);
    rg_array *fresh = NULL;
    rg_status st = rg_array_create(&fresh, ctx, RG_INT64, 1000);
    ck_assert_msg(st == RG_EDEVMEM && fresh == NULL, "create after the failures: %d %s", (int)st,
                  rg_context_error(ctx));
    rg_array_free(few);
    rg_array_free(rows);
    rg_array_free(sum);
    rg_array_free(out);
    rg_array_free(x);
    rg_array_free(o);
    rg_context_free(ctx);
}
END_TEST

/* Kernels whose own work-group limit is under 32 on a device allowing more
 * (many registers): nonzero's count pass built for GPUs then gives way to
 * whole words per work-item, and the results stay right. */
START_TEST(test_fault_nonzero_kernel_group)
{
    test_setenv("RAGGED_OPENCL_CPU_KERNELS", "0"); /* the GPUs' kernels, tiles first */
    rg_context *ctx = fault_context(0);
    if (!ctx)
        return;
    void *shim = dlopen(getenv("RAGGED_TEST_CLFAIL"), RTLD_NOW | RTLD_LOCAL);
    ck_assert_ptr_nonnull(shim);
    void (*cap)(size_t) = (void (*)(size_t))dlsym(shim, "clfail_kernel_group");
    ck_assert_ptr_nonnull(cap);
    cap(16);
    enum { N = 100003 };
    int64_t *vals = malloc(N * sizeof *vals), *want = malloc(N * sizeof *want);
    ck_assert(vals && want);
    int64_t nnz = 0;
    for (int64_t k = 0; k < N; k++) {
        vals[k] = (k * 7919) % 3 == 0 ? 0 : k;
        if (vals[k] != 0)
            want[nnz++] = k;
    }
    rg_array *a = test_array_from_i64(ctx, RG_INT64, vals, N);
    rg_array *coords = NULL;
    int64_t got_nnz = -1, shape = N;
    rg_status st = rg_nonzero(&coords, &got_nnz, a, &shape, 1, -1);
    ck_assert_msg(st == RG_OK, "nonzero with kernels of 16 work-items: %d %s", (int)st,
                  rg_context_error(ctx));
    ck_assert_int_eq(got_nnz, nnz);
    expect_values(coords, want, (size_t)nnz, "nonzero with kernels of 16 work-items");
    rg_array_free(coords);
    cap(0);
    free(want);
    free(vals);
    rg_array_free(a);
    rg_context_free(ctx);
    dlclose(shim);
}
END_TEST

/* A platform that cannot list its devices is passed over, and the message
 * of the RG_ENODEVICE that follows (the only platform here) says why; a
 * kernel that cannot be made for want of host memory is RG_ENOMEM, its
 * op's output untouched. */
START_TEST(test_fault_device_list)
{
    rg_context *ctx = fault_context(0);
    if (!ctx)
        return;
    rg_array *o = test_array_from_i64(ctx, RG_INT64, four_off, 5);
    rg_array *out = test_array_filled(ctx, RG_INT64, 9, -7);
    ck_assert_int_eq(rg_offsets_validate(o, 9), RG_OK); /* offsets.cl's kernels made */
    arm("clCreateKernel", 0, CL_OUT_OF_HOST_MEMORY);
    rg_status st = rg_parents(out, o, RG_STRATEGY_BSEARCH, NULL);
    ck_assert_msg(st == RG_ENOMEM, "parents: %d %s", (int)st, rg_context_error(ctx));
    ck_assert_msg(test_contains(rg_context_error(ctx), "clCreateKernel(seg_bsearch)"),
                  "message: %s", rg_context_error(ctx));
    const int64_t sevens[9] = {-7, -7, -7, -7, -7, -7, -7, -7, -7};
    expect_values(out, sevens, 9, "output after the failed kernel");
    rg_array_free(out);
    rg_array_free(o);
    rg_context_free(ctx);

    for (int call = 0; call < 2; call++) { /* the count, then the list */
        arm("clGetDeviceIDs", call, CL_OUT_OF_HOST_MEMORY);
        ctx = (rg_context *)UNTOUCHED;
        st = rg_context_create(&ctx, RG_BACKEND_OPENCL);
        if (st == RG_OK) { /* another platform served */
            fprintf(stderr, "skipped: more than one OpenCL platform\n");
            rg_context_free(ctx);
            return;
        }
        ck_assert_msg(st == RG_ENODEVICE, "create: %d %s", (int)st, rg_context_error(NULL));
        ck_assert_ptr_eq(ctx, (rg_context *)UNTOUCHED);
        ck_assert_msg(test_contains(rg_context_error(NULL),
                                    "(clGetDeviceIDs: CL_OUT_OF_HOST_MEMORY (-6))"),
                      "message: %s", rg_context_error(NULL));
    }
}
END_TEST

/* A driver that forks inside a call the library makes under one of its
 * locks (a creation's, or on PoCL a kernel run's): the fork must not wait
 * for that lock, which its own thread holds.  SIGALRM ends a hang. */
START_TEST(test_fault_fork_in_driver)
{
    rg_context *ctx = fault_context(0);
    if (!ctx)
        return;
    rg_context_free(ctx);
    void *shim = dlopen(getenv("RAGGED_TEST_CLFAIL"), RTLD_NOW | RTLD_LOCAL);
    ck_assert_ptr_nonnull(shim);
    void (*fork_in)(const char *) = (void (*)(const char *))dlsym(shim, "clfail_fork_in");
    ck_assert_ptr_nonnull(fork_in);
    alarm(60);
    fork_in("clGetDeviceIDs"); /* under the creations' lock */
    ck_assert_int_eq(rg_context_create(&ctx, RG_BACKEND_OPENCL), RG_OK);
    rg_array *o = test_array_from_i64(ctx, RG_INT64, four_off, 5);
    rg_array *out = test_array_filled(ctx, RG_INT64, 9, -7);
    ck_assert_int_eq(rg_offsets_validate(o, 9), RG_OK);
    fork_in("clWaitForEvents"); /* on PoCL, under the kernels' lock */
    ck_assert_int_eq(rg_parents(out, o, RG_STRATEGY_PER_SEGMENT, NULL), RG_OK);
    expect_values(out, four_parents, 9, "parents");
    alarm(0);
    rg_array_free(out);
    rg_array_free(o);
    rg_context_free(ctx);
    dlclose(shim);
}
END_TEST

/* A FIFO named like a kernel file in an earlier folder of the kernel path
 * is passed over (opening it must not wait for a writer). */
START_TEST(test_fault_kernel_fifo)
{
    const char *kernels = getenv("RAGGED_KERNEL_PATH");
    if (!kernels || !*kernels) {
        fprintf(stderr, "skipped: no RAGGED_KERNEL_PATH\n");
        return;
    }
    char dir[] = "/tmp/ragged-fifo-XXXXXX", fifo[64], path[4096];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/offsets.cl", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    snprintf(path, sizeof path, "%s:%s", dir, kernels);
    test_setenv("RAGGED_KERNEL_PATH", path);
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENCL);
    rg_array *o = test_array_from_i64(ctx, RG_INT64, four_off, 5);
    rg_array *out = test_array_filled(ctx, RG_INT64, 9, 0);
    rg_status st = rg_parents(out, o, RG_STRATEGY_BSEARCH, NULL);
    unlink(fifo);
    rmdir(dir);
    ck_assert_msg(st == RG_OK, "parents: %d %s", (int)st, rg_context_error(ctx));
    expect_values(out, four_parents, 9, "parents");
    rg_array_free(out);
    rg_array_free(o);
    rg_context_free(ctx);
}
END_TEST

/* On PoCL each launch waits for its kernel (ops.c: PoCL can abort when
 * kernels of several contexts run at once).  A failed wait is the op's
 * failure, named, with its output reported as possibly written; the context
 * goes on working. */
START_TEST(test_fault_kernel_wait)
{
    rg_context *ctx = fault_context(0);
    if (!ctx)
        return;
    if (!test_contains(rg_context_device(ctx), "Portable Computing Language")) {
        fprintf(stderr, "skipped: not PoCL (%s), whose launches do not wait\n",
                rg_context_device(ctx));
        rg_context_free(ctx);
        return;
    }
    rg_array *o = test_array_from_i64(ctx, RG_INT64, four_off, 5);
    rg_array *out = test_array_filled(ctx, RG_INT64, 9, -7);
    ck_assert_int_eq(rg_offsets_validate(o, 9), RG_OK);
    arm("clWaitForEvents", 0, CL_OUT_OF_RESOURCES);
    rg_status st = rg_parents(out, o, RG_STRATEGY_PER_SEGMENT, NULL);
    ck_assert_msg(st == RG_EDEVICE, "a failed wait: %d %s", (int)st, rg_context_error(ctx));
    ck_assert_msg(test_contains(rg_context_error(ctx), "clWaitForEvents(seg_per_segment)") &&
                      test_contains(rg_context_error(ctx), "partly written"),
                  "message: %s", rg_context_error(ctx));
    ck_assert_int_eq(rg_parents(out, o, RG_STRATEGY_PER_SEGMENT, NULL), RG_OK);
    expect_values(out, four_parents, 9, "parents after a failed wait");
    rg_array_free(out);
    rg_array_free(o);
    rg_context_free(ctx);
}
END_TEST

Suite *faults_suite(void)
{
    Suite *s = test_suite("faults");
    TCase *tc = test_tcase("opencl");
    tcase_add_test(tc, test_fault_upload);
    tcase_add_test(tc, test_fault_parked_upload);
    tcase_add_test(tc, test_fault_flood_scan);
    tcase_add_test(tc, test_fault_list_scalar);
    tcase_add_test(tc, test_fault_host_memory);
    tcase_add_test(tc, test_fault_list_limit);
    tcase_add_test(tc, test_fault_kernel_fifo);
    tcase_add_test(tc, test_fault_device_list);
    tcase_add_test(tc, test_fault_fork_in_driver);
    tcase_add_test(tc, test_fault_scratch_retry);
    tcase_add_test(tc, test_fault_scratch_grow);
    tcase_add_test(tc, test_fault_nonzero_kernel_group);
    tcase_add_test(tc, test_fault_launch_memory);
    tcase_add_test(tc, test_fault_kernel_wait);
    suite_add_tcase(s, tc);
    return s;
}
