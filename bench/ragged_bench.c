/* ragged_bench.c — times every primitive on every backend against a fill and a copy of the
 * same bytes, over the segment-length distributions users meet; table on stdout, CSV to a file. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ragged.h"

/* ---- options ---------------------------------------------------------------- */

typedef struct options {
    char backends[64];  /* "openmp,opencl" */
    char sizes[256];    /* element counts */
    char dists[256];
    char ops[256];
    int reps;
    const char *csv;    /* NULL: no CSV */
    const char *dump;   /* folder for the lengths, read by compare.py */
    int recheck;        /* every op's offsets changed before it (its check runs) */
    char strategies[128]; /* those timed, or "all" */
    int variants;       /* offsets drawn this many times, taken in turn (per-element ops) */
    char values[128];   /* the reductions' value dtypes */
} options;

/* The --values dtypes, and the suffixes of their rows' op names. */
static const struct {
    const char *name, *suffix;
    rg_dtype t;
} value_types[] = {{"float64", "", RG_FLOAT64},
                   {"float32", ".f32", RG_FLOAT32},
                   {"int64", ".i64", RG_INT64},
                   {"int32", ".i32", RG_INT32},
                   {"int16", ".i16", RG_INT16},
                   {"uint16", ".u16", RG_UINT16},
                   {"int8", ".i8", RG_INT8},
                   {"uint8", ".u8", RG_UINT8},
                   {"bool", ".bool", RG_BOOL}};
enum { NVALUE_TYPES = sizeof value_types / sizeof *value_types };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ragged_bench [--backends openmp,opencl] [--sizes N,...] [--dists D,...]\n"
            "                    [--ops OP,...] [--reps R] [--csv FILE] [--dump DIR]\n"
            "                    [--recheck 0|1] [--strategies S,...] [--variants K]\n"
            "                    [--values T,...]\n"
            "  sizes: element counts, e.g. 65536,1048576,16777216,134217728 (k/M suffixes ok)\n"
            "  dists: short medium long powerlaw halfempty ones huge mid\n"
            "  ops:   lengths from_lengths offsets_check parents local_index starts nonzero\n"
            "         sum min argmax any compose nested_parents segment_nonzero list_append\n"
            "         segd (any: only when asked for)\n"
            "  values: the reductions' dtypes, float64 (default) float32 int64 int32 int16\n"
            "         uint16 int8 uint8 bool\n"
            "  strategies: all (default) or some of auto bsearch per-segment flood merge-path\n"
            "         (the reductions' policies: auto per-segment merge-path)\n"
            "Medians of R runs (default 5) after one warm-up (one run where the first\n"
            "run after it took over 0.25 s); int64 offsets and outputs;\n"
            "reductions over float64 values (or those of --values: rows sum.f32 and so\n"
            "on), against a plain sum of the same values.\n"
            "Offsets that passed a check are not checked again until written, so repeated\n"
            "ops skip it; --recheck 1 writes offsets[0] before every op, which times each\n"
            "op with its check (offsets_check times the check alone).\n"
            "--variants K (default 1) draws the lengths K times (other seeds, same\n"
            "distribution); parents, local_index, starts and segment_nonzero take them\n"
            "in turn.  On small inputs a branch predictor learns one repeated input,\n"
            "which flatters branchy code (bytes and segments: the first draw's).\n"
            "On OpenMP, each size of 32 MiB of int64 or more first times a fill with\n"
            "streamed and with plain stores (RAGGED_OMP_STREAM=0), in turns; the rows\n"
            "keep the setting the run started with.\n");
}

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("ragged_bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static int has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

/* Whether --strategies asks for the strategy or policy of this name. */
static int wanted(const options *o, const char *name)
{
    return !strcmp(o->strategies, "all") || has_word(o->strategies, name);
}

static void parse_options(int argc, char **argv, options *o)
{
    snprintf(o->backends, sizeof o->backends, "openmp,opencl");
    snprintf(o->sizes, sizeof o->sizes, "65536,1048576,16777216,134217728");
    snprintf(o->dists, sizeof o->dists, "short,medium,long,powerlaw,halfempty,ones,huge,mid");
    snprintf(o->ops, sizeof o->ops,
             "lengths,from_lengths,offsets_check,parents,local_index,starts,nonzero,sum,min,"
             "argmax,compose,nested_parents,segment_nonzero,list_append,segd");
    o->reps = 5;
    o->recheck = 0;
    o->variants = 1;
    snprintf(o->strategies, sizeof o->strategies, "all");
    snprintf(o->values, sizeof o->values, "float64");
    o->csv = NULL;
    o->dump = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        }
        if (!v)
            die("%s needs a value (--help)", a);
        i++;
        if (!strcmp(a, "--backends"))
            snprintf(o->backends, sizeof o->backends, "%s", v);
        else if (!strcmp(a, "--sizes"))
            snprintf(o->sizes, sizeof o->sizes, "%s", v);
        else if (!strcmp(a, "--dists"))
            snprintf(o->dists, sizeof o->dists, "%s", v);
        else if (!strcmp(a, "--ops"))
            snprintf(o->ops, sizeof o->ops, "%s", v);
        else if (!strcmp(a, "--reps"))
            o->reps = atoi(v);
        else if (!strcmp(a, "--csv"))
            o->csv = v;
        else if (!strcmp(a, "--dump"))
            o->dump = v;
        else if (!strcmp(a, "--recheck"))
            o->recheck = atoi(v);
        else if (!strcmp(a, "--strategies"))
            snprintf(o->strategies, sizeof o->strategies, "%s", v);
        else if (!strcmp(a, "--variants"))
            o->variants = atoi(v);
        else if (!strcmp(a, "--values"))
            snprintf(o->values, sizeof o->values, "%s", v);
        else
            die("unknown option %s (--help)", a);
    }
    if (o->reps < 1)
        die("--reps must be at least 1");
    if (o->variants < 1 || o->variants > 64)
        die("--variants must be 1 to 64");
    char values[sizeof o->values];
    snprintf(values, sizeof values, "%s", o->values);
    for (char *save = NULL, *tok = strtok_r(values, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int v = 0;
        while (v < NVALUE_TYPES && strcmp(value_types[v].name, tok))
            v++;
        if (v == NVALUE_TYPES)
            die("unknown --values dtype %s (--help)", tok);
    }
}

/* ---- data ------------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *s)
{
    return (double)(splitmix64(s) >> 11) * (1.0 / 9007199254740992.0);
}

static const char *const dist_names[] = {"short", "medium", "long", "powerlaw",
                                         "halfempty", "ones", "huge", "mid"};
#define NDISTS 8

/* One length of distribution d (see the README's performance section). */
static int64_t draw(int d, uint64_t *s, int64_t n)
{
    switch (d) {
    case 0: return 1 + (int64_t)(splitmix64(s) % 8);          /* uniform 1..8 */
    case 1: return 1 + (int64_t)(splitmix64(s) % 199);        /* mean 100 */
    case 2: return 1 + (int64_t)(splitmix64(s) % 199999);     /* mean 1e5 */
    case 3: {                                                 /* Pareto, alpha 1.2 */
        double x = pow(1.0 - uniform01(s), -1.0 / 1.2);
        return x > (double)n ? n : (int64_t)x;
    }
    case 4: return splitmix64(s) & 1 ? 0 : 1 + (int64_t)(splitmix64(s) % 15); /* 50% empty */
    case 5: return 1;
    case 6: return n;                                         /* one huge segment */
    default: return 1 + (int64_t)(splitmix64(s) % 63);        /* uniform 1..63 */
    }
}

/* Lengths of distribution d adding up to exactly n elements (the last one
 * cut); variant 0 is the draw every run makes, others use other seeds. */
static int64_t *make_lengths(int d, int64_t n, int variant, size_t *nsegs)
{
    size_t cap = 1024, k = 0;
    int64_t *len = malloc(cap * sizeof *len), sum = 0;
    uint64_t seed = 0x5eed0000u + (uint64_t)d + ((uint64_t)variant << 32);
    while (len && sum < n) {
        if (k == cap) {
            int64_t *bigger = realloc(len, (cap *= 2) * sizeof *len);
            if (!bigger)
                free(len);
            len = bigger;
            if (!len)
                break;
        }
        int64_t l = draw(d, &seed, n);
        if (l > n - sum)
            l = n - sum;
        len[k++] = l;
        sum += l;
    }
    if (!len)
        die("out of memory for %lld lengths", (long long)n);
    *nsegs = k;
    return len;
}

static void dump_lengths(const char *dir, int d, int64_t n, const int64_t *len, size_t nsegs)
{
    char path[4096];
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/%s_%lld.i64", dir, dist_names[d], (long long)n);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(len, sizeof *len, nsegs, f) != nsegs || fclose(f) != 0)
        die("cannot write %s: %s", path, strerror(errno));
}

/* ---- timing ----------------------------------------------------------------- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static rg_context *g_ctx;
static int g_recheck; /* --recheck */

/* Dies on a failed call, with the message of ctx (the context that made it). */
static void check_in(rg_context *ctx, rg_status st, const char *what)
{
    if (st != RG_OK)
        die("%s: %s: %s", what, rg_strerror(st), rg_context_error(ctx));
}

static void check(rg_status st, const char *what)
{
    check_in(g_ctx, st, what);
}

/* One timed call: the work, then a wait for the device. */
typedef struct job job;
typedef rg_status (*job_fn)(job *j);

struct job {
    rg_array *offsets, *lengths, *out, *scratch;
    rg_array **variants;      /* offsets taken in turn before each run, if nvariants > 0 */
    int nvariants, turn;
    rg_strategy strategy, used;
    rg_reduce_op op;
    rg_reduce_policy policy, used_policy;
    job_fn fn;
    /* the ops of bench_more: */
    rg_array *outer;          /* a level above offsets (compose, nested_parents) */
    const int64_t *host_len;  /* the lengths in host memory (lists, descriptors) */
    const int64_t *host_data; /* n int64 elements (list_append) */
    size_t nsegs;
    void *dst;                /* the host ceiling's memcpy: dst, src, bytes */
    const void *src;
    size_t bytes;
};

/* The median of t[0 .. n) (sorts t). */
static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* Seconds of one run: the work, then a wait for the device. */
static double time_once(job *j)
{
    if (j->nvariants > 0)
        j->offsets = j->variants[j->turn++ % j->nvariants];
    double t0 = now();
    check(j->fn(j), "timed run");
    check(rg_context_finish(g_ctx), "finish");
    return now() - t0;
}

/* A strategy whose first run after the warm-up takes longer than this
 * (per-segment on one huge segment takes seconds on a GPU) is timed once,
 * not reps times: its figure only shows that it loses.  Not the warm-up
 * itself: that is where a fresh output's pages fault in (800 MB took 1.2 s
 * on an AMD EPYC VM), and a ceiling timed once then was 5x too slow. */
#define SLOW_S 0.25

/* Median seconds of reps runs after one warm-up run. */
static double time_job(job *j, int reps)
{
    double *t = malloc((size_t)reps * sizeof *t);
    if (!t)
        die("out of memory");
    (void)time_once(j);
    t[0] = time_once(j);
    if (t[0] > SLOW_S)
        reps = 1;
    for (int r = 1; r < reps; r++)
        t[r] = time_once(j);
    double m = median(t, reps);
    free(t);
    return m;
}

/* An op and its ceiling timed in turns (ceiling, op, ceiling, op, ...) after
 * one warm-up of each: medians of both, and the median of the ratios of
 * neighbouring runs.  On a shared machine a slow phase then hits both
 * sides of a ratio instead of only the ceiling, timed once, or only the op. */
typedef struct paired {
    double op, ceiling, ratio;
} paired;

static paired time_paired(job *j, job *ceil, int reps)
{
    double *t = malloc(3 * (size_t)reps * sizeof *t);
    if (!t)
        die("out of memory");
    double *op = t, *ce = t + reps, *ratio = t + 2 * reps;
    (void)time_once(ceil);
    (void)time_once(j);
    for (int r = 0; r < reps; r++) {
        ce[r] = time_once(ceil);
        op[r] = time_once(j);
        ratio[r] = op[r] / ce[r];
        if (r == 0 && op[0] > SLOW_S)
            reps = 1;
    }
    paired p = {median(op, reps), median(ce, reps), median(ratio, reps)};
    free(t);
    return p;
}

/* The automatic choice against the best fixed strategy or policy: the
 * fixed run of the one auto picked (the same code timed twice differs by
 * the machine's noise) or, where another was faster, the two timed again
 * in turns (the machine's speed drifts from row to row).  chosen and best:
 * j with the strategy or policy auto picked and the fastest fixed one. */
static void report_auto(job *chosen, job *best, int differ, int reps, const char *backend,
                        const char *op, const char *dist, const char *chosen_name,
                        const char *best_name)
{
    double ratio = differ ? time_paired(chosen, best, reps).ratio : 1.0;
    printf("%-7s %-13s %-9s auto picks %s: %.2f x the best fixed (%s)%s\n", backend, op, dist,
           chosen_name, ratio, best_name, differ ? ", timed in turns" : "");
}

/* The fill ceiling writes ones, not zeros: some machines write lines of
 * zeros faster than any other data (an AMD EPYC here streamed 800 MB of
 * zeros in 6.5 ms, of any other constant or of an index in 9.2 ms), and the
 * outputs measured against it are not zeros. */
static rg_status run_fill(job *j)
{
    static const int64_t one = 1;
    return rg_array_fill(j->out, &one);
}
static rg_status run_copy(job *j) { return rg_array_copy(j->out, j->scratch); }

/* Writing offsets[0] (= 0, unchanged) makes the library forget that the
 * offsets passed their check, so the next op checks them again. */
static rg_status forget_check(job *j)
{
    static const int64_t zero = 0;
    return rg_array_write(j->offsets, 0, &zero, 1);
}
#define RECHECKED(call) (g_recheck && forget_check(j) != RG_OK ? RG_EINVAL : (call))

static rg_status run_lengths(job *j) { return RECHECKED(rg_lengths(j->lengths, j->offsets)); }
static rg_status run_from_lengths(job *j) { return rg_offsets_from_lengths(j->offsets, j->lengths); }
static rg_status run_check(job *j)
{
    rg_status st = forget_check(j);
    return st == RG_OK ? rg_offsets_validate(j->offsets, rg_array_length(j->out)) : st;
}
static rg_status run_parents(job *j) { return RECHECKED(rg_parents(j->out, j->offsets, j->strategy, &j->used)); }
static rg_status run_local(job *j) { return RECHECKED(rg_local_index(j->out, j->offsets, j->strategy, &j->used)); }
static rg_status run_starts(job *j) { return RECHECKED(rg_segment_starts(j->out, j->offsets, j->strategy, &j->used)); }
static rg_status run_reduce(job *j)
{
    return RECHECKED(
        rg_segment_reduce(j->out, j->scratch, j->offsets, j->op, j->policy, &j->used_policy));
}

/* ---- reporting -------------------------------------------------------------- */

static FILE *g_csv;

typedef struct row {
    const char *backend, *op, *dist, *strategy, *ceiling;
    int64_t nelems;
    size_t nsegs;
    double seconds, bytes, ceiling_seconds, copy_gbps;
    double ratio; /* median of paired ratios; 0: seconds / ceiling_seconds */
} row;

static void report(const row *r)
{
    double gbps = r->bytes / r->seconds * 1e-9;
    double ratio = r->ratio > 0 ? r->ratio : r->seconds / r->ceiling_seconds;
    printf("%-7s %-13s %-9s %10lld %10zu %-12s %10.3f %8.2f %6.2fx %-5s %6.0f%%\n", r->backend,
           r->op, r->dist, (long long)r->nelems, r->nsegs, r->strategy, r->seconds * 1e3, gbps,
           ratio, r->ceiling, 100.0 * gbps / r->copy_gbps);
    fflush(stdout);
    if (g_csv)
        fprintf(g_csv, "%s,\"%s\",%s,%s,%lld,%zu,%s,%.6e,%.0f,%.3f,%s,%.6e,%.4f,%.3f,%.4f\n",
                r->backend, rg_context_device(g_ctx), r->op, r->dist, (long long)r->nelems,
                r->nsegs, r->strategy, r->seconds, r->bytes, gbps, r->ceiling, r->ceiling_seconds,
                ratio, r->copy_gbps, gbps / r->copy_gbps);
}

static void header(void)
{
    printf("%-7s %-13s %-9s %10s %10s %-12s %10s %8s %7s %-5s %7s\n", "backend", "op", "dist",
           "elements", "segments", "strategy", "median ms", "GB/s", "ratio", "vs", "of copy");
}

/* ---- one backend ------------------------------------------------------------ */

static rg_array *new_array(rg_dtype t, size_t n)
{
    rg_array *a;
    check(rg_array_create(&a, g_ctx, t, n), "rg_array_create");
    return a;
}

/* Seconds to build the kernels of the first parents call: cold (empty disk
 * cache), warm disk cache (new context), and in memory (same context). */
static void time_builds(const char *backend)
{
    char dir[] = "/tmp/ragged-bench-cache-XXXXXX";
    if (!mkdtemp(dir))
        die("mkdtemp: %s", strerror(errno));
    const char *old = getenv("RAGGED_CACHE_DIR");
    char *saved = old ? strdup(old) : NULL;
    setenv("RAGGED_CACHE_DIR", dir, 1);
    const int64_t off[3] = {0, 2, 5};
    double t[3];
    for (int pass = 0; pass < 2; pass++) {
        rg_context *ctx;
        check_in(NULL, rg_context_create(&ctx, RG_BACKEND_OPENCL), "context for build timing");
        rg_array *o, *p;
        check_in(ctx, rg_array_from_host(&o, ctx, RG_INT64, off, 3), "offsets");
        check_in(ctx, rg_array_create(&p, ctx, RG_INT64, 5), "out");
        for (int call = 0; call < (pass ? 1 : 2); call++) {
            double t0 = now();
            check_in(ctx, rg_parents(p, o, RG_STRATEGY_MERGE_PATH, NULL), "parents");
            check_in(ctx, rg_context_finish(ctx), "finish");
            t[pass ? 1 : call ? 2 : 0] = now() - t0;
        }
        rg_array_free(p);
        rg_array_free(o);
        rg_context_free(ctx);
    }
    printf("%s first-call build (offsets.cl + parents.cl): cold %.3f s, warm disk cache %.3f s, "
           "in memory %.6f s\n\n",
           backend, t[0], t[1], t[2]);
    if (g_csv)
        fprintf(g_csv, "%s,\"%s\",build,-,0,0,cold/warm-disk/memory,%.6e,0,0,-,%.6e,%.6e,0,0\n",
                backend, rg_context_device(g_ctx), t[0], t[1], t[2]);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "ragged_bench: could not remove %s\n", dir);
    if (saved)
        setenv("RAGGED_CACHE_DIR", saved, 1);
    else
        unsetenv("RAGGED_CACHE_DIR");
    free(saved);
}

static const struct {
    const char *name;
    job_fn fn;
    int per_element; /* output per element (parents...) or per segment */
    int strategies;  /* swept over every strategy */
} op_table[] = {
    {"lengths", run_lengths, 0, 0},
    {"from_lengths", run_from_lengths, 0, 0},
    {"offsets_check", run_check, 0, 0}, /* reads the offsets only */
    {"parents", run_parents, 1, 1},
    {"local_index", run_local, 1, 1},
    {"starts", run_starts, 1, 1},
};
#define NOPS (sizeof op_table / sizeof *op_table)

static const rg_strategy strategies[] = {RG_STRATEGY_AUTO, RG_STRATEGY_BSEARCH,
                                         RG_STRATEGY_PER_SEGMENT, RG_STRATEGY_FLOOD,
                                         RG_STRATEGY_MERGE_PATH};

/* Offsets of draws 1 .. --variants - 1 of distribution d into variants[1 ..]. */
static void make_variants(const options *o, int d, int64_t n, rg_array **variants)
{
    for (int v = 1; v < o->variants; v++) {
        size_t vsegs;
        int64_t *vlen = make_lengths(d, n, v, &vsegs);
        rg_array *vl;
        check(rg_array_from_host(&vl, g_ctx, RG_INT64, vlen, vsegs), "lengths");
        free(vlen);
        variants[v] = new_array(RG_INT64, vsegs + 1);
        check(rg_offsets_from_lengths(variants[v], vl), "offsets");
        rg_array_free(vl);
    }
}

static void bench_case(const options *o, const char *backend, int d, int64_t n)
{
    size_t nsegs;
    int64_t *len = make_lengths(d, n, 0, &nsegs);
    if (o->dump) /* every backend draws the same lengths */
        dump_lengths(o->dump, d, n, len, nsegs);
    job j = {0};
    check(rg_array_from_host(&j.lengths, g_ctx, RG_INT64, len, nsegs), "lengths");
    free(len);
    j.offsets = new_array(RG_INT64, nsegs + 1);
    check(rg_offsets_from_lengths(j.offsets, j.lengths), "offsets");
    rg_array *variants[64] = {j.offsets};
    make_variants(o, d, n, variants);
    rg_array *elem_out = new_array(RG_INT64, (size_t)n);
    rg_array *elem_src = new_array(RG_INT64, (size_t)n);
    /* Written first: a copy from never-touched memory reads the shared zero
     * page and would overstate the bandwidth. */
    const int64_t one = 1;
    check(rg_array_fill(elem_src, &one), "fill");

    /* Ceilings on this backend: a fill of the op's output (timed in turns
     * with each op, below), a copy of n elements. */
    job ceil = {.out = elem_out, .scratch = elem_src, .fn = run_copy};
    double copy_s = time_job(&ceil, o->reps);
    double copy_gbps = 2.0 * 8.0 * (double)n / copy_s * 1e-9;
    rg_array *seg_out = new_array(RG_INT64, nsegs + 1);

    for (size_t k = 0; k < NOPS; k++) {
        if (!has_word(o->ops, op_table[k].name))
            continue;
        row r = {backend, op_table[k].name, dist_names[d], "-", "fill", n, nsegs, 0, 0, 0,
                 copy_gbps, 0};
        /* byte model: offsets read (nsegs + 1) x 8, output written x 8 */
        job fill = {.fn = run_fill};
        if (op_table[k].per_element) {
            r.bytes = 8.0 * (double)(nsegs + 1) + 8.0 * (double)n;
            fill.out = elem_out;
        } else if (op_table[k].fn == run_check) {
            r.bytes = 8.0 * (double)(nsegs + 1);
            fill.out = seg_out;
        } else {
            r.bytes = 8.0 * (double)(nsegs + 1) + 8.0 * (double)nsegs;
            fill.out = seg_out;
        }
        j.out = elem_out;
        j.fn = op_table[k].fn;
        /* only ops of one output per element take other offsets in turn */
        j.variants = variants;
        j.nvariants = op_table[k].per_element && o->variants > 1 ? o->variants : 0;
        int nstrat = op_table[k].strategies ? 5 : 1;
        double best = 0, fixed[5] = {0};
        rg_strategy chosen = RG_STRATEGY_AUTO, best_strategy = RG_STRATEGY_AUTO;
        const char *best_name = "-";
        for (int s = 0; s < nstrat; s++) {
            if (op_table[k].strategies && !wanted(o, rg_strategy_name(strategies[s])))
                continue;
            j.strategy = strategies[s];
            paired pt = time_paired(&j, &fill, o->reps);
            r.seconds = pt.op;
            r.ceiling_seconds = pt.ceiling;
            r.ratio = pt.ratio;
            char label[32];
            if (op_table[k].strategies) {
                snprintf(label, sizeof label, "%s%s%s", rg_strategy_name(strategies[s]),
                         s == 0 ? "=" : "", s == 0 ? rg_strategy_name(j.used) : "");
                r.strategy = label;
                if (s == 0)
                    chosen = j.used;
                else
                    fixed[strategies[s]] = r.seconds;
                if (s > 0 && (best == 0 || r.seconds < best)) {
                    best = r.seconds;
                    best_name = rg_strategy_name(strategies[s]);
                    best_strategy = strategies[s];
                }
            }
            report(&r);
        }
        if (op_table[k].strategies && fixed[chosen] > 0) {
            job other = j;
            other.strategy = best_strategy;
            j.strategy = chosen;
            report_auto(&j, &other, chosen != best_strategy, o->reps, backend, r.op, r.dist,
                        rg_strategy_name(chosen), best_name);
        }
        j.offsets = variants[0];
        j.nvariants = 0;
    }
    rg_array_free(seg_out);
    rg_array_free(elem_src);
    rg_array_free(elem_out);
    for (int v = 0; v < o->variants; v++)
        rg_array_free(variants[v]);
    rg_array_free(j.lengths);
}

/* nonzero of a 1-D float64 array at several densities; byte model: the input
 * read (8n) and the coordinates written (8 nnz), ceiling: a copy moving as
 * many.  Two rows per density: rg_nonzero (allocates its result each call,
 * freed outside the timing) and rg_nonzero_into (writes into an array of n
 * elements made once, so its pages are no longer fresh). */
static void bench_nonzero(const options *o, const char *backend, int64_t n)
{
    static const double densities[] = {0.01, 0.5, 0.99};
    double *host = malloc((size_t)n * sizeof *host);
    if (!host)
        die("out of memory");
    rg_array *src = new_array(RG_FLOAT64, (size_t)n), *dst = new_array(RG_FLOAT64, (size_t)n);
    rg_array *into = new_array(RG_INT64, (size_t)n), *full = new_array(RG_FLOAT64, (size_t)n);
    /* The copy ceiling, timed in turns with each op: a copy of full into
     * dst (faulted in here), written memory holding no zeros (lines of
     * zeros may be written faster; see run_fill). */
    for (int64_t k = 0; k < n; k++)
        host[k] = 1.0 + (double)k;
    check(rg_array_write(full, 0, host, (size_t)n), "write");
    check(rg_array_copy(dst, full), "copy");
    for (size_t di = 0; di < sizeof densities / sizeof *densities; di++) {
        uint64_t seed = 99 + di;
        for (int64_t k = 0; k < n; k++)
            host[k] = uniform01(&seed) < densities[di] ? 1.0 + (double)k : 0.0;
        check(rg_array_write(src, 0, host, (size_t)n), "write");
        for (int variant = 0; variant < 2; variant++) {
            int64_t nnz = 0;
            /* t: the op's runs; c: the copy's, each just before; ratio: the
             * op's time over the copy's scaled to the op's bytes (both known
             * after the warm-up, r = -1) */
            double t[64], c[64], ratio[64], bytes = 0;
            int reps = o->reps < 64 ? o->reps : 64;
            for (int r = -1; r < reps; r++) {
                rg_array *coords = NULL;
                double c0 = now();
                check(rg_array_copy(dst, full), "copy");
                check(rg_context_finish(g_ctx), "finish");
                double t0 = now();
                if (variant == 0)
                    check(rg_nonzero(&coords, &nnz, src, &n, 1, -1), "rg_nonzero");
                else
                    check(rg_nonzero_into(into, &nnz, src, &n, 1), "rg_nonzero_into");
                check(rg_context_finish(g_ctx), "finish");
                double t1 = now();
                rg_array_free(coords);
                bytes = 8.0 * (double)n + 8.0 * (double)nnz;
                if (r >= 0) {
                    t[r] = t1 - t0;
                    c[r] = t0 - c0;
                    ratio[r] = t[r] / (c[r] * bytes / (16.0 * (double)n));
                }
            }
            char dist[32];
            snprintf(dist, sizeof dist, "dense%.0f%%", 100 * densities[di]);
            row r = {backend, variant ? "nonzero_into" : "nonzero", dist, "-", "copy", n, 0,
                     median(t, reps), bytes, 0, 16.0 * (double)n / median(c, reps) * 1e-9,
                     median(ratio, reps)};
            r.ceiling_seconds = r.bytes / (r.copy_gbps * 1e9);
            report(&r);
        }
    }
    rg_array_free(full);
    rg_array_free(into);
    rg_array_free(dst);
    rg_array_free(src);
    free(host);
}

/* The ceiling of a segmented sum: a plain sum of the same values, by
 * OpenMP threads in this program (openmp), or the backend's own reduction
 * of one segment holding everything (opencl).  A job, so that it can be
 * timed in turns with the reductions. */
static const void *g_plain_values;
static rg_dtype g_plain_dtype;
static int64_t g_plain_n;
static volatile double g_plain_sink; /* volatile: a sum nobody reads could be dropped */

/* floats summed in double, integers in int64, as the library does */
#define PLAIN_SUM(T, S)                                                                    \
    do {                                                                                   \
        const T *x = g_plain_values;                                                       \
        S s = 0;                                                                           \
        _Pragma("omp parallel for reduction(+ : s) schedule(static)")                      \
        for (int64_t k = 0; k < g_plain_n; k++)                                            \
            s += (S)x[k];                                                                  \
        g_plain_sink = (double)s;                                                          \
    } while (0)

static rg_status run_plain_sum(job *j)
{
    (void)j;
    switch (g_plain_dtype) {
    case RG_FLOAT32: PLAIN_SUM(float, double); break;
    case RG_INT64: PLAIN_SUM(int64_t, int64_t); break;
    case RG_INT32: PLAIN_SUM(int32_t, int64_t); break;
    case RG_INT16: PLAIN_SUM(int16_t, int64_t); break;
    case RG_UINT16: PLAIN_SUM(uint16_t, uint64_t); break;
    case RG_INT8: PLAIN_SUM(int8_t, int64_t); break;
    case RG_UINT8: PLAIN_SUM(uint8_t, uint64_t); break;
    case RG_BOOL: PLAIN_SUM(uint8_t, int64_t); break;
    default: PLAIN_SUM(double, double); break;
    }
    return RG_OK;
}

static job plain_sum_job(const char *backend, const void *values, rg_dtype vt,
                         rg_array *content, int64_t n)
{
    if (!strcmp(backend, "openmp")) {
        g_plain_values = values;
        g_plain_dtype = vt;
        g_plain_n = n;
        return (job){.fn = run_plain_sum};
    }
    const int64_t whole[2] = {0, n};
    job j = {.scratch = content, .op = RG_REDUCE_SUM, .policy = RG_REDUCE_POLICY_AUTO,
             .fn = run_reduce};
    check(rg_array_from_host(&j.offsets, g_ctx, RG_INT64, whole, 2), "offsets");
    j.out = new_array(rg_reduce_dtype(RG_REDUCE_SUM, vt), 1);
    return j;
}

static void plain_sum_job_free(job *j)
{
    rg_array_free(j->out);
    rg_array_free(j->offsets);
}


/* n values of dtype t from uniform [0, 1) draws: floats as they are,
 * integers in [-2^19, 2^19) (16- and 8-bit ones: their whole range), bool
 * true for a quarter. */
static void *make_values(rg_dtype t, int64_t n)
{
    size_t size = rg_dtype_size(t);
    unsigned char *v = malloc((size_t)n * size + 1);
    if (!v)
        die("out of memory");
    uint64_t seed = 7;
    for (int64_t k = 0; k < n; k++) {
        double u = uniform01(&seed);
        switch (t) {
        case RG_FLOAT32: ((float *)(void *)v)[k] = (float)u; break;
        case RG_INT64: ((int64_t *)(void *)v)[k] = (int64_t)(u * 1048576) - 524288; break;
        case RG_INT32: ((int32_t *)(void *)v)[k] = (int32_t)(u * 1048576) - 524288; break;
        case RG_INT16: ((int16_t *)(void *)v)[k] = (int16_t)((int32_t)(u * 65536) - 32768); break;
        case RG_UINT16: ((uint16_t *)(void *)v)[k] = (uint16_t)(u * 65536); break;
        case RG_INT8: v[k] = (unsigned char)(int8_t)((int32_t)(u * 256) - 128); break;
        case RG_UINT8: v[k] = (unsigned char)(u * 256); break;
        case RG_BOOL: v[k] = u < 0.25; break;
        default: ((double *)(void *)v)[k] = u; break;
        }
    }
    return v;
}

/* Segmented sum, min, argmax (and any, when asked for) of values of dtype
 * vt (suffix: added to the rows' op names); byte model: values read (n of
 * their size), offsets read (8 (nsegs + 1)), results written (nsegs of
 * theirs). */
static void bench_reduce_of(const options *o, const char *backend, int d, int64_t n,
                            rg_dtype vt, const char *suffix)
{
    static const rg_reduce_op ops[] = {RG_REDUCE_SUM, RG_REDUCE_MIN, RG_REDUCE_ARGMAX,
                                       RG_REDUCE_ANY};
    static const rg_reduce_policy policies[] = {RG_REDUCE_POLICY_AUTO,
                                                RG_REDUCE_POLICY_MERGE_PATH,
                                                RG_REDUCE_POLICY_PER_SEGMENT};
    size_t nsegs;
    int64_t *len = make_lengths(d, n, 0, &nsegs);
    void *values = make_values(vt, n);
    double size = (double)rg_dtype_size(vt);
    job j = {0};
    rg_array *lengths;
    check(rg_array_from_host(&lengths, g_ctx, RG_INT64, len, nsegs), "lengths");
    free(len);
    j.offsets = new_array(RG_INT64, nsegs + 1);
    check(rg_offsets_from_lengths(j.offsets, lengths), "offsets");
    check(rg_array_from_host(&j.scratch, g_ctx, vt, values, (size_t)n), "values");
    job plain = plain_sum_job(backend, values, vt, j.scratch, n);
    rg_array *tmp = new_array(vt, (size_t)n), *copy_src = j.scratch;
    job c = {.out = tmp, .scratch = copy_src, .fn = run_copy};
    double copy_gbps = 2.0 * size * (double)n / time_job(&c, o->reps) * 1e-9;
    rg_array_free(tmp);
    j.fn = run_reduce;
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
        if (!has_word(o->ops, rg_reduce_op_name(ops[k])))
            continue;
        char op_name[32];
        snprintf(op_name, sizeof op_name, "%s%s", rg_reduce_op_name(ops[k]), suffix);
        rg_dtype out_t = rg_reduce_dtype(ops[k], vt);
        j.op = ops[k];
        j.out = new_array(out_t, nsegs);
        double best = 0, fixed[3] = {0};
        rg_reduce_policy chosen = RG_REDUCE_POLICY_AUTO, best_policy = RG_REDUCE_POLICY_AUTO;
        for (size_t p = 0; p < sizeof policies / sizeof *policies; p++) {
            if (!wanted(o, rg_reduce_policy_name(policies[p])))
                continue;
            j.policy = policies[p];
            char label[48];
            row r = {backend, op_name, dist_names[d], label, "sum", n, nsegs,
                     0, 0, 0, copy_gbps, 0};
            paired pt = time_paired(&j, &plain, o->reps);
            r.seconds = pt.op;
            r.ceiling_seconds = pt.ceiling;
            r.ratio = pt.ratio;
            snprintf(label, sizeof label, "%s%s%s", rg_reduce_policy_name(policies[p]),
                     p == 0 ? "=" : "", p == 0 ? rg_reduce_policy_name(j.used_policy) : "");
            r.bytes = size * (double)n + 8.0 * (double)(nsegs + 1) +
                      (double)rg_dtype_size(out_t) * (double)nsegs;
            report(&r);
            if (p == 0)
                chosen = j.used_policy;
            else
                fixed[policies[p]] = r.seconds;
            if (p > 0 && (best == 0 || r.seconds < best)) {
                best = r.seconds;
                best_policy = policies[p];
            }
        }
        if (fixed[chosen] > 0) {
            job other = j;
            other.policy = best_policy;
            j.policy = chosen;
            report_auto(&j, &other, chosen != best_policy, o->reps, backend, op_name,
                        dist_names[d], rg_reduce_policy_name(chosen),
                        rg_reduce_policy_name(best_policy));
        }
        rg_array_free(j.out);
    }
    plain_sum_job_free(&plain);
    rg_array_free(j.scratch);
    rg_array_free(j.offsets);
    rg_array_free(lengths);
    free(values);
}

static void bench_reduce(const options *o, const char *backend, int d, int64_t n)
{
    for (int v = 0; v < NVALUE_TYPES; v++)
        if (has_word(o->values, value_types[v].name))
            bench_reduce_of(o, backend, d, n, value_types[v].t, value_types[v].suffix);
}

/* ---- the other primitives ---------------------------------------------------- */

static rg_status run_compose(job *j) { return rg_offsets_compose(j->out, j->outer, j->offsets); }
static rg_status run_nested_parents(job *j)
{
    const rg_array *levels[2] = {j->outer, j->offsets};
    return rg_nested_parents(j->out, levels, 2, 0, 2, RG_STRATEGY_AUTO, &j->used);
}
/* Per-segment nonzero: its two results are new arrays, freed in the timing. */
static rg_status run_segment_nonzero(job *j)
{
    rg_array *offsets_out = NULL, *positions = NULL;
    rg_status st = rg_segment_nonzero(&offsets_out, &positions, j->scratch, j->offsets);
    rg_array_free(positions);
    rg_array_free(offsets_out);
    return st;
}
/* A list built by appending every segment as an item, from an empty one. */
static rg_status run_list_append(job *j)
{
    rg_list *list;
    rg_status st = rg_list_create(&list, g_ctx, RG_INT64, 0);
    const int64_t *item = j->host_data;
    for (size_t i = 0; st == RG_OK && i < j->nsegs; item += j->host_len[i++])
        st = rg_list_append(list, item, (size_t)j->host_len[i]);
    rg_list_free(list);
    return st;
}
/* A descriptor from the lengths, split element-wise across 64 workers and
 * glued back (the split itself reads only 64 binary searches' worth). */
static rg_status run_segd(job *j)
{
    rg_segd *segd = NULL, *glued = NULL;
    rg_dsegd *split = NULL;
    rg_status st = rg_segd_from_lengths(&segd, g_ctx, j->host_len, j->nsegs);
    if (st == RG_OK)
        st = rg_segd_split_elems(&split, segd, 64);
    if (st == RG_OK)
        st = rg_dsegd_glue(&glued, split);
    rg_segd_free(glued);
    rg_dsegd_free(split);
    rg_segd_free(segd);
    return st;
}
/* The ceiling of host-side work (lists and descriptors run on one thread
 * in host memory, on every backend): one memcpy of half the op's bytes,
 * which reads and writes them all. */
static rg_status run_memcpy(job *j)
{
    memcpy(j->dst, j->src, j->bytes);
    return RG_OK;
}

/* A memcpy of bytes between two buffers written once (see bench_case). */
static job host_copy_job(size_t bytes)
{
    job mc = {.dst = malloc(bytes + 8), .src = malloc(bytes + 8), .bytes = bytes,
              .fn = run_memcpy};
    if (!mc.dst || !mc.src)
        die("out of memory");
    memset(mc.dst, 1, bytes + 8);
    memset((void *)mc.src, 2, bytes + 8);
    return mc;
}

static void host_copy_job_free(job *mc)
{
    free(mc->dst);
    free((void *)mc->src);
}

/* Times op j against ceil in turns and reports it. */
static void report_paired(const options *o, row *r, job *j, job *ceil)
{
    paired pt = time_paired(j, ceil, o->reps);
    r->seconds = pt.op;
    r->ceiling_seconds = pt.ceiling;
    r->ratio = pt.ratio;
    report(r);
}

/* The primitives beyond the per-distribution tables above, on the same
 * lengths.  Byte models (8-byte elements):
 * - compose: an outer level over the segments (uniform 1..8 of them per
 *   outer item) composed with the offsets, out[i] = offsets[outer[i]]:
 *   outer read and out written (2 x 8 (nouter + 1)), and the lines of the
 *   offsets gathered from (all of them when the gathers are under 8
 *   apart: 8 (nsegs + 1), else 64 (nouter + 1)); ceiling: a copy moving as
 *   many bytes.
 * - nested_parents: the outer item of every element through both levels:
 *   both levels read, n written; ceiling: a fill of n.
 * - segment_nonzero: float64 content, half of it zero at random, and the
 *   offsets read; positions (nnz) and their offsets (nsegs + 1) written, into
 *   new arrays; ceiling: a copy moving as many bytes (as nonzero).
 * - list_append: every segment appended as an item to an empty int64 list
 *   (created and freed in the timing): n elements and nsegs offsets, each
 *   read and written; ceiling: a host memcpy of those bytes.
 * - segd: rg_segd_from_lengths (lengths read, offsets and lengths written),
 *   rg_segd_split_elems on 64 workers and rg_dsegd_glue (offsets read,
 *   offsets and lengths written): 48 nsegs; ceiling: a host memcpy. */
static void bench_more(const options *o, const char *backend, int d, int64_t n)
{
    static const char *const names[] = {"compose", "nested_parents", "segment_nonzero",
                                        "list_append", "segd"};
    int any = 0;
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        any |= has_word(o->ops, names[k]);
    if (!any)
        return;
    size_t nsegs, nouter = 0;
    int64_t *len = make_lengths(d, n, 0, &nsegs);
    int64_t *outer_len = malloc((nsegs ? nsegs : 1) * sizeof *outer_len);
    int64_t *data = malloc((size_t)n * sizeof *data);
    if (!outer_len || !data)
        die("out of memory");
    uint64_t seed = 17;
    for (size_t left = nsegs; left > 0; nouter++) {
        int64_t l = 1 + (int64_t)(splitmix64(&seed) % 8);
        outer_len[nouter] = (size_t)l < left ? l : (int64_t)left;
        left -= (size_t)outer_len[nouter];
    }
    for (int64_t k = 0; k < n; k++)
        data[k] = uniform01(&seed) < 0.5 ? 0 : k + 1;
    job j = {.host_len = len, .host_data = data, .nsegs = nsegs};
    rg_array *outer_lengths;
    check(rg_array_from_host(&j.lengths, g_ctx, RG_INT64, len, nsegs), "lengths");
    check(rg_array_from_host(&outer_lengths, g_ctx, RG_INT64, outer_len, nouter), "lengths");
    j.offsets = new_array(RG_INT64, nsegs + 1);
    j.outer = new_array(RG_INT64, nouter + 1);
    check(rg_offsets_from_lengths(j.offsets, j.lengths), "offsets");
    check(rg_offsets_from_lengths(j.outer, outer_lengths), "outer offsets");
    rg_array *elem_out = new_array(RG_INT64, (size_t)n), *outer_out = new_array(RG_INT64, nouter + 1);
    rg_array *src = new_array(RG_INT64, (size_t)n);
    const int64_t one = 1;
    check(rg_array_fill(src, &one), "fill"); /* see bench_case */
    job ceil = {.out = elem_out, .scratch = src, .fn = run_copy};
    double copy_gbps = 2.0 * 8.0 * (double)n / time_job(&ceil, o->reps) * 1e-9;
    row r = {backend, "", dist_names[d], "-", "fill", n, nsegs, 0, 0, 0, copy_gbps, 0};

    if (has_word(o->ops, "compose")) {
        j.out = outer_out;
        j.fn = run_compose;
        r.op = "compose";
        r.ceiling = "copy";
        double lines = 64.0 * (double)(nouter + 1), inner = 8.0 * (double)(nsegs + 1);
        r.bytes = 16.0 * (double)(nouter + 1) + (inner < lines ? inner : lines);
        r.seconds = time_job(&j, o->reps);
        r.ceiling_seconds = r.bytes / (copy_gbps * 1e9);
        r.ratio = 0;
        report(&r);
        r.ceiling = "fill";
    }
    if (has_word(o->ops, "nested_parents")) {
        job fill = {.out = elem_out, .fn = run_fill};
        j.out = elem_out;
        j.fn = run_nested_parents;
        r.op = "nested_parents";
        r.bytes = 8.0 * (double)(nouter + 1 + nsegs + 1) + 8.0 * (double)n;
        char label[32];
        snprintf(label, sizeof label, "auto=?"); /* known once it ran */
        r.strategy = label;
        paired pt = time_paired(&j, &fill, o->reps);
        snprintf(label, sizeof label, "auto=%s", rg_strategy_name(j.used));
        r.seconds = pt.op;
        r.ceiling_seconds = pt.ceiling;
        r.ratio = pt.ratio;
        report(&r);
        r.strategy = "-";
    }
    if (has_word(o->ops, "segment_nonzero")) {
        int64_t nnz = 0;
        for (int64_t k = 0; k < n; k++)
            nnz += data[k] != 0;
        double *x = malloc((size_t)n * sizeof *x);
        if (!x)
            die("out of memory");
        for (int64_t k = 0; k < n; k++)
            x[k] = (double)data[k];
        check(rg_array_from_host(&j.scratch, g_ctx, RG_FLOAT64, x, (size_t)n), "content");
        free(x);
        j.fn = run_segment_nonzero;
        r.op = "segment_nonzero";
        r.ceiling = "copy";
        r.bytes = 8.0 * (double)n + 16.0 * (double)(nsegs + 1) + 8.0 * (double)nnz;
        rg_array *variants[64] = {j.offsets};
        make_variants(o, d, n, variants);
        j.variants = variants;
        j.nvariants = o->variants > 1 ? o->variants : 0;
        r.seconds = time_job(&j, o->reps);
        j.offsets = variants[0];
        j.nvariants = 0;
        for (int v = 1; v < o->variants; v++)
            rg_array_free(variants[v]);
        r.ceiling_seconds = r.bytes / (copy_gbps * 1e9);
        r.ratio = 0;
        report(&r);
        rg_array_free(j.scratch);
        j.scratch = NULL;
    }
    /* Host-side work: against a host memcpy of half its bytes. */
    r.ceiling = "mcpy";
    if (has_word(o->ops, "list_append")) {
        job mc = host_copy_job(((size_t)n + nsegs) * 8);
        j.fn = run_list_append;
        r.op = "list_append";
        r.bytes = 2.0 * (double)mc.bytes;
        report_paired(o, &r, &j, &mc);
        host_copy_job_free(&mc);
    }
    if (has_word(o->ops, "segd")) {
        job mc = host_copy_job(24 * nsegs); /* half of 48 nsegs */
        j.fn = run_segd;
        r.op = "segd";
        r.bytes = 2.0 * (double)mc.bytes;
        report_paired(o, &r, &j, &mc);
        host_copy_job_free(&mc);
    }
    rg_array_free(src);
    rg_array_free(outer_out);
    rg_array_free(elem_out);
    rg_array_free(j.outer);
    rg_array_free(j.offsets);
    rg_array_free(outer_lengths);
    rg_array_free(j.lengths);
    free(data);
    free(outer_len);
    free(len);
}

/* OpenMP streams outputs of 32 MiB or more past the caches unless
 * RAGGED_OMP_STREAM=0 (read at each op), and which stores are faster
 * depends on the machine: a fill of n int64 both ways, in turns, shows it.
 * The rows keep the setting the run started with. */
static const char *g_stream_env; /* RAGGED_OMP_STREAM as the run started, or NULL */
static void stores_as_started(void)
{
    if (g_stream_env)
        setenv("RAGGED_OMP_STREAM", g_stream_env, 1);
    else
        unsetenv("RAGGED_OMP_STREAM");
}
static rg_status run_fill_stores(job *j, const char *setting)
{
    setenv("RAGGED_OMP_STREAM", setting, 1);
    rg_status st = run_fill(j);
    stores_as_started();
    return st;
}
static rg_status run_fill_streamed(job *j) { return run_fill_stores(j, "1"); }
static rg_status run_fill_plain(job *j) { return run_fill_stores(j, "0"); }

static void bench_fill_stores(const options *o, int64_t n)
{
    if ((double)n * 8.0 < (double)(32 << 20))
        return;
    rg_array *out = new_array(RG_INT64, (size_t)n);
    job streamed = {.out = out, .fn = run_fill_streamed}, plain = {.out = out, .fn = run_fill_plain};
    paired pt = time_paired(&plain, &streamed, o->reps);
    printf("openmp  fill of %lld int64: streamed %.3f ms, plain (RAGGED_OMP_STREAM=0) %.3f ms, "
           "plain / streamed %.2fx (median of paired runs)\n",
           (long long)n, 1e3 * pt.ceiling, 1e3 * pt.op, pt.ratio);
    rg_array_free(out);
}

static void bench_backend(const options *o, const char *backend)
{
    rg_backend b = !strcmp(backend, "opencl") ? RG_BACKEND_OPENCL : RG_BACKEND_OPENMP;
    rg_status st = rg_context_create(&g_ctx, b);
    if (st == RG_ENODEVICE) {
        printf("%s: not available (%s)\n\n", backend, rg_context_error(NULL));
        return;
    }
    if (st != RG_OK)
        die("%s: %s", backend, rg_context_error(NULL));
    printf("== %s on %s\n", backend, rg_context_device(g_ctx));
    if (b == RG_BACKEND_OPENCL)
        time_builds(backend);
    header();
    char sizes[256];
    snprintf(sizes, sizeof sizes, "%s", o->sizes);
    for (char *save = NULL, *tok = strtok_r(sizes, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *end;
        double v = strtod(tok, &end);
        if (*end == 'k' || *end == 'K')
            v *= 1024;
        else if (*end == 'M')
            v *= 1024 * 1024;
        if (v < 1)
            die("bad size %s", tok);
        if (b == RG_BACKEND_OPENMP)
            bench_fill_stores(o, (int64_t)v);
        for (int d = 0; d < NDISTS; d++)
            if (has_word(o->dists, dist_names[d])) {
                bench_case(o, backend, d, (int64_t)v);
                bench_reduce(o, backend, d, (int64_t)v);
                bench_more(o, backend, d, (int64_t)v);
            }
        if (has_word(o->ops, "nonzero"))
            bench_nonzero(o, backend, (int64_t)v);
    }
    printf("\n");
    rg_context_free(g_ctx);
    g_ctx = NULL;
}

int main(int argc, char **argv)
{
    options o;
    parse_options(argc, argv, &o);
    g_recheck = o.recheck;
    g_stream_env = getenv("RAGGED_OMP_STREAM");
    if (o.csv) {
        g_csv = fopen(o.csv, "w");
        if (!g_csv)
            die("cannot write %s: %s", o.csv, strerror(errno));
        fprintf(g_csv, "backend,device,op,dist,nelems,nsegs,strategy,median_s,bytes,gbps,"
                       "ceiling,ceiling_s,ratio,copy_gbps,frac_of_copy\n");
    }
    printf("ragged %s benchmark: medians of %d runs; GB/s = (offsets read + output written) "
           "/ time, 8-byte elements (reductions' values: of --values); ratio = median of "
           "time / time of the ceiling run just before it (a fill of the same output, or a "
           "plain sum of the same values) on the same backend; 'of copy' = GB/s / GB/s of a "
           "copy of n elements.  %s",
           rg_version_string(), o.reps,
           o.recheck ? "Offsets written before every op: each op includes its offsets check."
                     : "Offsets checked once: repeated ops on them skip the check "
                       "(offsets_check times it).");
    if (o.variants > 1)
        printf("  Parents, local_index, starts and segment_nonzero take %d draws of the "
               "lengths in turn "
               "(bytes and segments: the first draw's).",
               o.variants);
    printf("\n\n");
    char backends[64];
    snprintf(backends, sizeof backends, "%s", o.backends);
    for (char *save = NULL, *tok = strtok_r(backends, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save))
        bench_backend(&o, tok);
    if (g_csv && fclose(g_csv) != 0)
        die("cannot write %s", o.csv);
    return 0;
}
