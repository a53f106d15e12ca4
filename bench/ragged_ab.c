/* ragged_ab.c — two builds of libragged in one process, called in turns on
 * the same data, so that a change is timed against its base under the same
 * conditions (this machine's speed varies from process to process; see
 * BENCHMARKS.md).  Each build is loaded into its own link-map namespace with
 * dlmopen (glibc), with its own OpenMP runtime.  OMP_WAIT_POLICY is set
 * to passive where it is unset, so that the idle team of one build does not
 * spin while the other runs.
 *
 *   make bench/ragged_ab
 *   ./bench/ragged_ab OLD.so NEW.so [--reps R]
 *       [--ops OP,...] [--values float64|float32|int64|int32|int16|uint16|int8|uint8|bool]
 *       [--offsets32] LENGTHS...
 *
 * OLD.so and NEW.so: two libragged.so files (e.g. lib/.libs/libragged.so.0
 * of two worktrees).  LENGTHS: files of int64 segment lengths, as written by
 * ragged_bench --dump DIR.  Ops: sum, prod, min, max, argmin, argmax,
 * count_nonzero, any, all (of float64 values v in [-0.5, 0.5), float32 ones
 * rounded from them, int64 or int32 values i in [-2^20, 2^20), int16 ones
 * i % 32768, uint16 ones i & 0xffff, int8 ones i % 128, uint8 ones i & 0xff,
 * or bool ones
 * v < 0.25; --int64 is --values int64), parents,
 * local_index, starts (automatic strategy and policy), from_lengths
 * (offsets from the file's lengths as int64), segment_nonzero (of float64
 * values, half of them zero; its two new results are freed after each run
 * but the last), nonzero1, nonzero50 and
 * nonzero99 (rg_nonzero_into of the content as 1-D float64 values, 1%, 50%
 * or 99% of them non-zero, into room for a row per element; float64 values
 * only; any lengths file of the wanted element count will do).
 * --offsets32: int32 offsets (the lengths must add up to under 2^31).  Prints,
 * per file and op, the medians of R runs of each build (after one warm-up),
 * the median of the paired ratios new/old (run k of new over run k of old),
 * and whether the two outputs hold the same bytes.  Exit status 0 when every
 * output matched. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <ragged.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

typedef struct build {
    const char *path;
    rg_status (*context_create)(rg_context **, rg_backend);
    void (*context_free)(rg_context *);
    const char *(*context_error)(const rg_context *);
    rg_status (*from_host)(rg_array **, rg_context *, rg_dtype, const void *, size_t);
    rg_status (*create)(rg_array **, rg_context *, rg_dtype, size_t);
    rg_status (*read)(void *, const rg_array *, size_t, size_t);
    void (*array_free)(rg_array *);
    rg_status (*reduce)(rg_array *, const rg_array *, const rg_array *, rg_reduce_op,
                        rg_reduce_policy, rg_reduce_policy *);
    rg_status (*parents)(rg_array *, const rg_array *, rg_strategy, rg_strategy *);
    rg_status (*local_index)(rg_array *, const rg_array *, rg_strategy, rg_strategy *);
    rg_status (*starts)(rg_array *, const rg_array *, rg_strategy, rg_strategy *);
    rg_status (*from_lengths)(rg_array *, const rg_array *);
    rg_status (*segment_nonzero)(rg_array **, rg_array **, const rg_array *, const rg_array *);
    rg_status (*nonzero_into)(rg_array *, int64_t *, const rg_array *, const int64_t *, size_t);
    size_t (*length)(const rg_array *);
    rg_dtype (*dtype)(const rg_array *);
    rg_dtype (*reduce_dtype)(rg_reduce_op, rg_dtype);
    size_t (*dtype_size)(rg_dtype);
    rg_context *ctx;
} build;

static const struct {
    const char *name;
    int reduce; /* 1: rg_segment_reduce with op; 0: a per-element op */
    rg_reduce_op op;
} op_table[] = {
    {"sum", 1, RG_REDUCE_SUM},       {"prod", 1, RG_REDUCE_PROD},
    {"min", 1, RG_REDUCE_MIN},       {"max", 1, RG_REDUCE_MAX},
    {"argmin", 1, RG_REDUCE_ARGMIN}, {"argmax", 1, RG_REDUCE_ARGMAX},
    {"count_nonzero", 1, RG_REDUCE_COUNT_NONZERO}, {"any", 1, RG_REDUCE_ANY},
    {"all", 1, RG_REDUCE_ALL},
    {"parents", 0, 0},               {"local_index", 0, 1},
    {"starts", 0, 2},                {"from_lengths", 0, 3},
    {"segment_nonzero", 0, 4},       {"nonzero1", 0, 5},
    {"nonzero50", 0, 6},             {"nonzero99", 0, 7},
};
enum { NOPS = sizeof op_table / sizeof *op_table };

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "ragged_ab: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(2);
}

static void *sym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p)
        die("missing symbol", name);
    return p;
}

static void load(build *b, const char *path)
{
    void *h = dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        die("cannot load", dlerror());
    b->path = path;
    *(void **)&b->context_create = sym(h, "rg_context_create");
    *(void **)&b->context_free = sym(h, "rg_context_free");
    *(void **)&b->context_error = sym(h, "rg_context_error");
    *(void **)&b->from_host = sym(h, "rg_array_from_host");
    *(void **)&b->create = sym(h, "rg_array_create");
    *(void **)&b->read = sym(h, "rg_array_read");
    *(void **)&b->array_free = sym(h, "rg_array_free");
    *(void **)&b->reduce = sym(h, "rg_segment_reduce");
    *(void **)&b->parents = sym(h, "rg_parents");
    *(void **)&b->local_index = sym(h, "rg_local_index");
    *(void **)&b->starts = sym(h, "rg_segment_starts");
    *(void **)&b->from_lengths = sym(h, "rg_offsets_from_lengths");
    *(void **)&b->segment_nonzero = sym(h, "rg_segment_nonzero");
    *(void **)&b->nonzero_into = sym(h, "rg_nonzero_into");
    *(void **)&b->length = sym(h, "rg_array_length");
    *(void **)&b->dtype = sym(h, "rg_array_dtype");
    *(void **)&b->reduce_dtype = sym(h, "rg_reduce_dtype");
    *(void **)&b->dtype_size = sym(h, "rg_dtype_size");
    if (b->context_create(&b->ctx, RG_BACKEND_OPENMP) != RG_OK)
        die("no OpenMP context in", path);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Reads a file of int64 lengths into offsets (nsegs + 1 values). */
static int64_t *read_offsets(const char *path, size_t *nsegs)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open", path);
    if (fseek(f, 0, SEEK_END) != 0)
        die("cannot seek", path);
    long bytes = ftell(f);
    if (bytes < 0 || bytes % 8 != 0 || fseek(f, 0, SEEK_SET) != 0)
        die("not a file of int64 lengths", path);
    size_t n = (size_t)bytes / 8;
    int64_t *off = malloc((n + 1) * sizeof *off);
    if (!off)
        die("out of memory", path);
    off[0] = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t len;
        if (fread(&len, sizeof len, 1, f) != 1 || len < 0 || off[i] > INT64_MAX - len)
            die("bad lengths in", path);
        off[i + 1] = off[i] + len;
    }
    fclose(f);
    *nsegs = n;
    return off;
}

/* Runs op k of op_table on build b: out must be of the op's output size. */
static rg_status run(build *b, int k, rg_array *out, const rg_array *content,
                     const rg_array *offsets, const rg_array *lengths)
{
    if (op_table[k].reduce)
        return b->reduce(out, content, offsets, op_table[k].op, RG_REDUCE_POLICY_AUTO, NULL);
    switch ((int)op_table[k].op) {
    case 0: return b->parents(out, offsets, RG_STRATEGY_AUTO, NULL);
    case 1: return b->local_index(out, offsets, RG_STRATEGY_AUTO, NULL);
    case 3: return b->from_lengths(out, lengths);
    default: return b->starts(out, offsets, RG_STRATEGY_AUTO, NULL);
    }
}

static unsigned char *read_all(const build *b, const rg_array *a)
{
    size_t len = b->length(a);
    unsigned char *p = malloc(len * b->dtype_size(b->dtype(a)) + 8);
    if (!p)
        die("out of memory", NULL);
    if (b->read(p, a, 0, len) != RG_OK)
        die("cannot read the output in", b->context_error(b->ctx));
    return p;
}

/* segment_nonzero of x made half zero (its negative values), timed as the
 * other ops; true when both builds' results hold the same bytes. */
static bool time_segment_nonzero(build *b, const char *name, const double *x, size_t n,
                                 rg_array *const *o, int reps, double **t, double *ratio)
{
    double *z = malloc((n ? n : 1) * sizeof *z);
    if (!z)
        die("out of memory", NULL);
    for (size_t k = 0; k < n; k++)
        z[k] = x[k] < 0 ? 0.0 : x[k] + 1.0;
    rg_array *c[2], *so[2] = {NULL, NULL}, *pos[2] = {NULL, NULL};
    for (int l = 0; l < 2; l++)
        if (b[l].from_host(&c[l], b[l].ctx, RG_FLOAT64, z, n) != RG_OK)
            die("cannot copy the data in", b[l].context_error(b[l].ctx));
    free(z);
    for (int r = -1; r < reps; r++)
        for (int l = 0; l < 2; l++) {
            b[l].array_free(so[l]);
            b[l].array_free(pos[l]);
            double t0 = now();
            if (b[l].segment_nonzero(&so[l], &pos[l], c[l], o[l]) != RG_OK)
                die("segment_nonzero", b[l].context_error(b[l].ctx));
            if (r >= 0)
                t[l][r] = now() - t0;
        }
    for (int r = 0; r < reps; r++)
        ratio[r] = t[1][r] / t[0][r];
    bool same = true;
    rg_array *const *outs[2] = {so, pos};
    for (int q = 0; q < 2; q++) {
        size_t len = b[0].length(outs[q][0]);
        unsigned char *res[2] = {read_all(&b[0], outs[q][0]), read_all(&b[1], outs[q][1])};
        same = same && len == b[1].length(outs[q][1]) && memcmp(res[0], res[1], len * 8) == 0;
        free(res[0]);
        free(res[1]);
    }
    printf("%-28s %-12s %10.3f %10.3f %9.3f  %s\n", name, "segment_nonzero",
           1e3 * median(t[0], reps), 1e3 * median(t[1], reps), median(ratio, reps),
           same ? "same bytes" : "DIFFER");
    fflush(stdout);
    for (int l = 0; l < 2; l++) {
        b[l].array_free(so[l]);
        b[l].array_free(pos[l]);
        b[l].array_free(c[l]);
    }
    return same;
}

/* rg_nonzero_into of the 1-D float64 x made nonzero with probability pct%
 * (x[k] < pct / 100 - 0.5 kept, else 0), into room for a row per element
 * made once; true when both builds wrote the same rows. */
static bool time_nonzero(build *b, const char *name, const char *op, int pct, const double *x,
                         size_t n, int reps, double **t, double *ratio)
{
    double *z = malloc((n ? n : 1) * sizeof *z);
    if (!z)
        die("out of memory", NULL);
    for (size_t k = 0; k < n; k++)
        z[k] = x[k] < pct / 100.0 - 0.5 ? x[k] + 1.0 : 0.0;
    rg_array *c[2], *rows[2];
    int64_t nnz[2] = {0, 0}, shape = (int64_t)n;
    for (int l = 0; l < 2; l++)
        if (b[l].from_host(&c[l], b[l].ctx, RG_FLOAT64, z, n) != RG_OK ||
            b[l].create(&rows[l], b[l].ctx, RG_INT64, n ? n : 1) != RG_OK)
            die("cannot copy the data in", b[l].context_error(b[l].ctx));
    free(z);
    for (int r = -1; r < reps; r++)
        for (int l = 0; l < 2; l++) {
            double t0 = now();
            if (b[l].nonzero_into(rows[l], &nnz[l], c[l], &shape, 1) != RG_OK)
                die(op, b[l].context_error(b[l].ctx));
            if (r >= 0)
                t[l][r] = now() - t0;
        }
    for (int r = 0; r < reps; r++)
        ratio[r] = t[1][r] / t[0][r];
    unsigned char *res[2] = {read_all(&b[0], rows[0]), read_all(&b[1], rows[1])};
    bool same = nnz[0] == nnz[1] && memcmp(res[0], res[1], (size_t)nnz[0] * 8) == 0;
    printf("%-28s %-12s %10.3f %10.3f %9.3f  %s\n", name, op, 1e3 * median(t[0], reps),
           1e3 * median(t[1], reps), median(ratio, reps), same ? "same bytes" : "DIFFER");
    fflush(stdout);
    free(res[0]);
    free(res[1]);
    for (int l = 0; l < 2; l++) {
        b[l].array_free(rows[l]);
        b[l].array_free(c[l]);
    }
    return same;
}

int main(int argc, char **argv)
{
    int reps = 9;
    bool want[NOPS] = {0}, off32 = false;
    rg_dtype vt = RG_FLOAT64;
    int nfiles = 0, any_op = 0;
    const char *libs[2] = {NULL, NULL}, **files = calloc((size_t)argc, sizeof *files);
    if (!files)
        die("out of memory", NULL);
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--reps") && a + 1 < argc) {
            reps = atoi(argv[++a]);
        } else if (!strcmp(argv[a], "--int64")) {
            vt = RG_INT64;
        } else if (!strcmp(argv[a], "--values") && a + 1 < argc) {
            const char *v = argv[++a];
            vt = !strcmp(v, "float64") ? RG_FLOAT64 : !strcmp(v, "float32") ? RG_FLOAT32
                 : !strcmp(v, "int64") ? RG_INT64 : !strcmp(v, "int32") ? RG_INT32
                 : !strcmp(v, "int16") ? RG_INT16 : !strcmp(v, "uint16") ? RG_UINT16
                 : !strcmp(v, "int8") ? RG_INT8 : !strcmp(v, "uint8") ? RG_UINT8
                 : !strcmp(v, "bool") ? RG_BOOL : 0;
            if (!vt)
                die("unknown value type", v);
        } else if (!strcmp(argv[a], "--offsets32")) {
            off32 = true;
        } else if (!strcmp(argv[a], "--ops") && a + 1 < argc) {
            char *list = argv[++a];
            for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
                int k = 0;
                while (k < NOPS && strcmp(op_table[k].name, t))
                    k++;
                if (k == NOPS)
                    die("unknown op", t);
                want[k] = true;
                any_op = 1;
            }
        } else if (argv[a][0] == '-') {
            die("unknown option", argv[a]);
        } else if (!libs[0]) {
            libs[0] = argv[a];
        } else if (!libs[1]) {
            libs[1] = argv[a];
        } else {
            files[nfiles++] = argv[a];
        }
    }
    if (!nfiles || reps < 1 || reps > 1000) {
        fprintf(stderr, "usage: ragged_ab OLD.so NEW.so [--reps R (1..1000)] [--ops OP,...]\n"
                        "       [--values float64|float32|int64|int32|int16|uint16|int8|uint8|bool] "
                        "[--offsets32] "
                        "LENGTHS...\n  ops: sum prod min max argmin argmax count_nonzero any "
                        "all parents local_index starts from_lengths segment_nonzero nonzero1 "
                        "nonzero50 nonzero99\n"
                        "  (default: sum min argmax parents)\n");
        return 2;
    }
    if (!any_op)
        want[0] = want[2] = want[5] = want[6] = 1;
    for (int k = 0; k < NOPS; k++)
        if (vt != RG_FLOAT64 && want[k] && !op_table[k].reduce && op_table[k].op >= 4)
            die("float64 values only", op_table[k].name);

    /* Each build has its own OpenMP runtime: a team that spins while the
     * other build's team runs takes its cores (4 threads on 2 cores made
     * every op at 2^20 take a 4 ms scheduler tick).  Each runtime reads the
     * policy when its build is loaded. */
    const char *policy = getenv("OMP_WAIT_POLICY");
    if (!policy) {
        if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0)
            die("cannot set OMP_WAIT_POLICY", NULL);
    } else if (strcasecmp(policy, "passive")) {
        fprintf(stderr, "ragged_ab: OMP_WAIT_POLICY=%s: the idle build's team will spin and "
                        "slow the other's; use passive (the default here)\n", policy);
    }

    build b[2];
    load(&b[0], libs[0]);
    load(&b[1], libs[1]);
    double *t[2] = {malloc((size_t)reps * sizeof(double)), malloc((size_t)reps * sizeof(double))};
    double *ratio = malloc((size_t)reps * sizeof(double));
    if (!t[0] || !t[1] || !ratio)
        die("out of memory", NULL);
    int mismatches = 0;
    printf("old: %s\nnew: %s\n%d runs each, in turns; OMP_WAIT_POLICY=%s; %s values, %s "
           "offsets\n",
           libs[0], libs[1], reps, getenv("OMP_WAIT_POLICY"),
           vt == RG_FLOAT64   ? "float64"
           : vt == RG_FLOAT32 ? "float32"
           : vt == RG_INT64   ? "int64"
           : vt == RG_INT32   ? "int32"
           : vt == RG_INT16   ? "int16"
           : vt == RG_UINT16  ? "uint16"
           : vt == RG_INT8    ? "int8"
           : vt == RG_UINT8   ? "uint8"
                              : "bool",
           off32 ? "int32" : "int64");
    printf("%-28s %-12s %10s %10s %9s  %s\n", "lengths", "op", "old ms", "new ms", "new/old",
           "outputs");
    for (int f = 0; f < nfiles; f++) {
        size_t nsegs;
        int64_t *off = read_offsets(files[f], &nsegs);
        size_t n = (size_t)off[nsegs];
        if (off32 && off[nsegs] > INT32_MAX)
            die("too many elements for int32 offsets", files[f]);
        void *x = malloc((n ? n : 1) * 8); /* the values, of type vt */
        double *xf = x;
        if (!x)
            die("out of memory", files[f]);
        uint64_t seed = 12345;
        for (size_t k = 0; k < n; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            double v = (double)(seed >> 11) / 9007199254740992.0 - 0.5;
            int64_t i = (int64_t)(seed >> 43) - ((int64_t)1 << 20);
            switch (vt) {
            case RG_FLOAT32: ((float *)x)[k] = (float)v; break;
            case RG_INT64: ((int64_t *)x)[k] = i; break;
            case RG_INT32: ((int32_t *)x)[k] = (int32_t)i; break;
            case RG_INT16: ((int16_t *)x)[k] = (int16_t)(i % 32768); break;
            case RG_UINT16: ((uint16_t *)x)[k] = (uint16_t)(i & 0xffff); break;
            case RG_INT8: ((int8_t *)x)[k] = (int8_t)(i % 128); break;
            case RG_UINT8: ((uint8_t *)x)[k] = (uint8_t)(i & 0xff); break;
            case RG_BOOL: ((uint8_t *)x)[k] = v < 0.25; break;
            default: xf[k] = v; break;
            }
        }
        int64_t *lens = malloc((nsegs ? nsegs : 1) * sizeof *lens);
        if (!lens)
            die("out of memory", files[f]);
        for (size_t i = 0; i < nsegs; i++)
            lens[i] = off[i + 1] - off[i];
        rg_array *o[2], *c[2], *ls[2];
        int32_t *off_narrow = off32 ? malloc((nsegs + 1) * sizeof *off_narrow) : NULL;
        if (off32 && !off_narrow)
            die("out of memory", files[f]);
        for (size_t i = 0; off32 && i <= nsegs; i++)
            off_narrow[i] = (int32_t)off[i];
        for (int l = 0; l < 2; l++)
            if (b[l].from_host(&o[l], b[l].ctx, off32 ? RG_INT32 : RG_INT64,
                               off32 ? (void *)off_narrow : (void *)off, nsegs + 1) != RG_OK ||
                b[l].from_host(&c[l], b[l].ctx, vt, x, n) != RG_OK ||
                b[l].from_host(&ls[l], b[l].ctx, RG_INT64, lens, nsegs) != RG_OK)
                die("cannot copy the data in", b[l].context_error(b[l].ctx));
        const char *name = strrchr(files[f], '/');
        name = name ? name + 1 : files[f];
        for (int k = 0; k < NOPS; k++) {
            if (!want[k])
                continue;
            if (!op_table[k].reduce && op_table[k].op == 4) {
                mismatches += !time_segment_nonzero(b, name, xf, n, o, reps, t, ratio);
                continue;
            }
            if (!op_table[k].reduce && op_table[k].op >= 5) {
                static const int pct[] = {1, 50, 99};
                mismatches += !time_nonzero(b, name, op_table[k].name, pct[op_table[k].op - 5],
                                            xf, n, reps, t, ratio);
                continue;
            }
            size_t len = op_table[k].reduce ? nsegs : op_table[k].op == 3 ? nsegs + 1 : n;
            rg_dtype dt = op_table[k].reduce ? b[0].reduce_dtype(op_table[k].op, vt) : RG_INT64;
            rg_array *out[2];
            for (int l = 0; l < 2; l++)
                if (b[l].create(&out[l], b[l].ctx, dt, len) != RG_OK)
                    die("cannot allocate the output in", b[l].context_error(b[l].ctx));
            for (int r = -1; r < reps; r++)
                for (int l = 0; l < 2; l++) {
                    double t0 = now();
                    if (run(&b[l], k, out[l], c[l], o[l], ls[l]) != RG_OK)
                        die(op_table[k].name, b[l].context_error(b[l].ctx));
                    if (r >= 0)
                        t[l][r] = now() - t0;
                }
            for (int r = 0; r < reps; r++)
                ratio[r] = t[1][r] / t[0][r];
            unsigned char *res[2] = {read_all(&b[0], out[0]), read_all(&b[1], out[1])};
            bool same = memcmp(res[0], res[1], len * b[0].dtype_size(dt)) == 0;
            mismatches += !same;
            printf("%-28s %-12s %10.3f %10.3f %9.3f  %s\n", name, op_table[k].name,
                   1e3 * median(t[0], reps), 1e3 * median(t[1], reps), median(ratio, reps),
                   same ? "same bytes" : "DIFFER");
            fflush(stdout);
            free(res[0]);
            free(res[1]);
            for (int l = 0; l < 2; l++)
                b[l].array_free(out[l]);
        }
        for (int l = 0; l < 2; l++) {
            b[l].array_free(o[l]);
            b[l].array_free(ls[l]);
            b[l].array_free(c[l]);
        }
        free(x);
        free(lens);
        free(off_narrow);
        free(off);
    }
    for (int l = 0; l < 2; l++)
        b[l].context_free(b[l].ctx);
    free(t[0]);
    free(t[1]);
    free(ratio);
    free(files);
    return mismatches ? 1 : 0;
}
