/* firstcall.c — seconds the first call of one op takes in a fresh process
 * on OpenCL, its offsets check and program builds included (the context's
 * creation not): what a user waits for the first time, when ragged's disk
 * cache and the platform's own (PoCL: ~/.cache/pocl) are empty, and each
 * time after, when they are warm.
 * Build: gcc -O1 -Iinclude bench/experiments/firstcall.c -Llib/.libs -lragged
 *        -Wl,-rpath,$PWD/lib/.libs -o firstcall
 * Usage, cold then warm:
 *   rm -rf /tmp/p /tmp/r; for i in 1 2; do POCL_CACHE_DIR=/tmp/p RAGGED_CACHE_DIR=/tmp/r \
 *   RAGGED_KERNEL_PATH=cl ./firstcall OP; done
 * OP: validate, from_lengths, parents, local, sum, min, count_nonzero, nonzero. */
#include <ragged.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static rg_context *ctx;

static int check(rg_status st, const char *what)
{
    if (st != RG_OK)
        fprintf(stderr, "firstcall: %s: %s\n", what, rg_context_error(ctx));
    return st != RG_OK;
}

int main(int argc, char **argv)
{
    const char *op = argc > 1 ? argv[1] : "sum";
    if (rg_context_create(&ctx, RG_BACKEND_OPENCL) != RG_OK) {
        fprintf(stderr, "firstcall: %s\n", rg_context_error(NULL));
        return 1;
    }
    const int64_t off[4] = {0, 3, 3, 7}, len[3] = {3, 0, 4};
    const double x[7] = {1, 0, 3, 4, 0, 6, 7};
    rg_array *o = NULL, *c = NULL, *l = NULL, *out = NULL;
    int bad = check(rg_array_from_host(&o, ctx, RG_INT64, off, 4), "offsets") ||
              check(rg_array_from_host(&c, ctx, RG_FLOAT64, x, 7), "content") ||
              check(rg_array_from_host(&l, ctx, RG_INT64, len, 3), "lengths");
    double t0 = now();
    int64_t n, shape[1] = {7};
    if (bad) {
    } else if (!strcmp(op, "sum") || !strcmp(op, "min")) {
        bad = check(rg_array_create(&out, ctx, RG_FLOAT64, 3), "out") ||
              check(rg_segment_reduce(out, c, o, !strcmp(op, "sum") ? RG_REDUCE_SUM : RG_REDUCE_MIN,
                                      RG_REDUCE_POLICY_AUTO, NULL), op);
    } else if (!strcmp(op, "parents") || !strcmp(op, "local")) {
        bad = check(rg_array_create(&out, ctx, RG_INT64, 7), "out") ||
              check((!strcmp(op, "parents") ? rg_parents : rg_local_index)(out, o, RG_STRATEGY_AUTO,
                                                                           NULL), op);
    } else if (!strcmp(op, "from_lengths")) {
        bad = check(rg_array_create(&out, ctx, RG_INT64, 4), "out") ||
              check(rg_offsets_from_lengths(out, l), op);
    } else if (!strcmp(op, "validate")) {
        bad = check(rg_offsets_validate(o, 7), op);
    } else if (!strcmp(op, "count_nonzero")) {
        bad = check(rg_count_nonzero(&n, c), op);
    } else if (!strcmp(op, "nonzero")) {
        bad = check(rg_nonzero(&out, &n, c, shape, 1, -1), op);
    } else {
        fprintf(stderr, "firstcall: unknown op %s\n", op);
        bad = 2;
    }
    if (!bad)
        bad = check(rg_context_finish(ctx), "finish");
    if (!bad)
        printf("%s %.3f s\n", op, now() - t0);
    rg_array_free(out);
    rg_array_free(l);
    rg_array_free(c);
    rg_array_free(o);
    rg_context_free(ctx);
    return bad;
}
