/* check_parents.c — parents, local index and segment starts: every strategy, dtype pair and length distribution. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"


#define N_STRATEGIES 5
static const rg_strategy all_strategies[N_STRATEGIES] = {
    RG_STRATEGY_AUTO, RG_STRATEGY_BSEARCH, RG_STRATEGY_PER_SEGMENT, RG_STRATEGY_FLOOD,
    RG_STRATEGY_MERGE_PATH};
static const rg_dtype index_dtypes[2] = {RG_INT32, RG_INT64};

/* The three operations share one signature. */
typedef rg_status (*elem_op)(rg_array *, const rg_array *, rg_strategy, rg_strategy *);
typedef int64_t *(*elem_ref)(const int64_t *, size_t);
static const struct {
    const char *name;
    elem_op op;
    elem_ref ref;
} ops[3] = {{"rg_parents", rg_parents, ref_parents},
            {"rg_local_index", rg_local_index, ref_local_index},
            {"rg_segment_starts", rg_segment_starts, ref_segment_starts}};

/* Loop index i of the strategy tests: backend i / 5 (through
 * test_backend_plain: test_elem_small and test_elem_big also run with few
 * work-groups, where their biggest cases take several rounds of the
 * merge path's bounds), strategy i % 5. */
static int backend_of(int i) { return test_backend_plain(i / N_STRATEGIES); }
static rg_strategy strategy_of(int i) { return all_strategies[i % N_STRATEGIES]; }

static int is_concrete(rg_strategy s)
{
    return s == RG_STRATEGY_BSEARCH || s == RG_STRATEGY_PER_SEGMENT || s == RG_STRATEGY_FLOOD ||
           s == RG_STRATEGY_MERGE_PATH;
}

/* The references of the three operations on off[0 .. nsegs], computed once
 * for every dtype pair and strategy they check. */
static void refs_new(int64_t *want[3], const int64_t *off, size_t nsegs)
{
    for (int o = 0; o < 3; o++)
        want[o] = ops[o].ref(off, nsegs);
}

static void refs_free(int64_t *want[3])
{
    for (int o = 0; o < 3; o++)
        free(want[o]);
}

/* Runs operation o on offsets into out and compares out with want (its
 * reference, n elements); used, if not NULL, gets the strategy. */
static void run_op(rg_context *ctx, int o, rg_array *out, const rg_array *offsets,
                   rg_strategy strategy, rg_strategy *used, const int64_t *want, size_t n,
                   const char *label)
{
    rg_status st = ops[o].op(out, offsets, strategy, used);
    ck_assert_msg(st == RG_OK, "%s: %d (%s) %s", label, (int)st, rg_strerror(st),
                  rg_context_error(ctx));
    test_expect_array(out, want, n, label);
}

/* Runs the three operations with one strategy and dtype pair on offsets
 * off[0 .. nsegs] and compares each with its reference want[o]. */
static void check_ops(rg_context *ctx, const int64_t *off, size_t nsegs, int64_t *const want[3],
                      rg_strategy strategy, rg_dtype tin, rg_dtype tout, const char *what)
{
    size_t nelems = (size_t)off[nsegs];
    rg_array *offsets = test_array_from_i64(ctx, tin, off, nsegs + 1);
    for (int o = 0; o < 3; o++) {
        char label[200];
        snprintf(label, sizeof label, "%s/%s offsets %s -> %s, %s (%zu segments, %zu elements)",
                 ops[o].name, rg_strategy_name(strategy), rg_dtype_name(tin), rg_dtype_name(tout), what,
                 nsegs, nelems);
        rg_array *out = test_array_filled(ctx, tout, nelems, -7);
        rg_strategy used = (rg_strategy)99;
        run_op(ctx, o, out, offsets, strategy, &used, want[o], nelems, label);
        ck_assert_msg(is_concrete(used), "%s: used = %d", label, (int)used);
        rg_strategy expect = strategy != RG_STRATEGY_AUTO ? strategy
                                                          : test_expect_strategy(ctx, off, nsegs);
        ck_assert_msg(used == expect, "%s: used %s, expected %s", label, rg_strategy_name(used),
                      rg_strategy_name(expect));
        rg_array_free(out);
    }
    rg_array_free(offsets);
}

/* check_ops with its own references. */
static void check_ops_once(rg_context *ctx, const int64_t *off, size_t nsegs, rg_strategy strategy,
                           rg_dtype tin, rg_dtype tout, const char *what)
{
    int64_t *want[3];
    refs_new(want, off, nsegs);
    check_ops(ctx, off, nsegs, want, strategy, tin, tout, what);
    refs_free(want);
}

/* Offsets of the given lengths, checked on the dtype pairs (offsets, output)
 * whose bit is set in pairs (bit 2 * offsets' + output's index). */
static void check_lengths_dtypes(rg_context *ctx, const int64_t *len, size_t nsegs, rg_strategy strategy,
                                 unsigned pairs, const char *what)
{
    int64_t *off = ref_offsets(len, nsegs);
    int64_t *want[3];
    refs_new(want, off, nsegs);
    for (int di = 0; di < 2; di++)
        for (int dout = 0; dout < 2; dout++)
            if (pairs >> (2 * di + dout) & 1)
                check_ops(ctx, off, nsegs, want, strategy, index_dtypes[di], index_dtypes[dout], what);
    refs_free(want);
    free(off);
}

/* The same on every dtype pair. */
static void check_lengths_all_dtypes(rg_context *ctx, const int64_t *len, size_t nsegs, rg_strategy strategy,
                                     const char *what)
{
    check_lengths_dtypes(ctx, len, nsegs, strategy, 15, what);
}

START_TEST(test_elem_small)
{
    TEST_CONTEXT(ctx, backend_of(_i));
    rg_strategy strategy = strategy_of(_i);

    /* Empty content with segments, and zero segments. */
    const int64_t empties[2] = {0, 0};
    check_lengths_all_dtypes(ctx, empties, 2, strategy, "empty content");
    check_lengths_all_dtypes(ctx, NULL, 0, strategy, "zero segments");
    const int64_t single[1] = {1};
    check_lengths_all_dtypes(ctx, single, 1, strategy, "one element");

    static const struct {
        test_dist dist;
        size_t nsegs;
        int64_t scale;
    } cases[] = {
        {DIST_EMPTY, 50, 0},         {DIST_HUGE, 1, 1000},       {DIST_HUGE, 100, 1000},
        {DIST_HUGE, 7, 4099},        {DIST_ONES, 1000, 0},       {DIST_ONES, 3, 0},
        {DIST_HALF_EMPTY, 500, 0},   {DIST_POWER_LAW, 300, 500}, {DIST_SHORT, 300, 0},
        {DIST_SHORT, 2000, 0},       {DIST_POWER_LAW, 3000, 2000},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t *len = test_gen_lengths(cases[c].dist, cases[c].nsegs, cases[c].scale, 31 + c);
        check_lengths_all_dtypes(ctx, len, cases[c].nsegs, strategy, test_dist_name(cases[c].dist));
        free(len);
    }

    /* Blocks of 256 segments (the GPUs' per-segment kernel) holding more
     * elements than 32 per segment: segments of up to 32 elements, some
     * empty, between longer ones. */
    int64_t mix[600];
    for (int i = 0; i < 600; i++)
        mix[i] = i % 5 == 0 ? 100 + i % 37 : i % 33;
    check_lengths_all_dtypes(ctx, mix, 600, strategy, "blocks past 32 per segment");

    /* Leading and trailing empty segments around data. */
    const int64_t edges[9] = {0, 0, 0, 3, 0, 1, 0, 0, 0};
    check_lengths_all_dtypes(ctx, edges, 9, strategy, "empty edges");
    rg_context_free(ctx);
}
END_TEST

/* Past 2^20 elements: fewer dtype pairs, every strategy. */
START_TEST(test_elem_big)
{
    TEST_CONTEXT(ctx, backend_of(_i));
    rg_strategy strategy = strategy_of(_i);

    size_t nsegs = 300000;
    int64_t *len = test_gen_lengths(DIST_SHORT, nsegs, 0, 3);
    int64_t *off = ref_offsets(len, nsegs);
    check_ops_once(ctx, off, nsegs, strategy, RG_INT32, RG_INT32, "short, big");
    free(off);
    free(len);

    nsegs = 1001;
    len = test_gen_lengths(DIST_HUGE, nsegs, (1 << 20) + 4097, 4);
    off = ref_offsets(len, nsegs);
    check_ops_once(ctx, off, nsegs, strategy, RG_INT64, RG_INT64, "one huge segment");
    free(off);
    free(len);

    nsegs = 400000;
    len = test_gen_lengths(DIST_POWER_LAW, nsegs, 100000, 5);
    off = ref_offsets(len, nsegs);
    ck_assert_msg(off[nsegs] > (1 << 20), "power-law case too small: %lld", (long long)off[nsegs]);
    check_ops_once(ctx, off, nsegs, strategy, RG_INT64, RG_INT32, "power-law, big");
    free(off);
    free(len);

    nsegs = (1 << 20) + 5;
    len = test_gen_lengths(DIST_HALF_EMPTY, nsegs, 0, 6);
    off = ref_offsets(len, nsegs);
    check_ops_once(ctx, off, nsegs, strategy, RG_INT32, RG_INT64, "half empty, big");
    free(off);
    free(len);
    rg_context_free(ctx);
}
END_TEST

/* The OpenMP merge path's windows (RG_OMP_WINDOW of lib/omp/omp.c), and
 * those of its floods in cache (RG_OMP_WINDOW_CACHED). */
#define OMP_WINDOW 512
#define OMP_WINDOW_CACHED 1024

/* Lengths that change character every few hundred segments: runs of
 * all-length-1, short, empty (up to thousands in a row), 0/1 mixes and long
 * segments, so the OpenMP merge path's windows (OMP_WINDOW elements) switch between
 * flooding and filling, and segments and runs of empties straddle tile and
 * thread boundaries.  Mostly-unit lengths take the merge path's runs of
 * length-1 segments.  Checked with several thread counts. */
static int64_t *mixed_lengths(size_t nsegs, uint64_t seed, int mostly_unit)
{
    int64_t *len = malloc(nsegs * sizeof *len);
    ck_assert_ptr_nonnull(len);
    size_t i = 0;
    while (i < nsegs) {
        size_t run = 1 + test_rand(&seed) % 3000;
        int kind = (int)(test_rand(&seed) % 5);
        if (mostly_unit) /* runs of ones, 0/1 mixes, a few empties: under 2 per segment */
            kind = kind < 3 ? 0 : kind == 3 ? 3 : (run = 1 + run % 7, 2);
        for (size_t r = 0; r < run && i < nsegs; r++, i++) {
            uint64_t x = test_rand(&seed);
            len[i] = kind == 0 ? 1
                     : kind == 1 ? 1 + (int64_t)(x % 8)
                     : kind == 2 ? 0
                     : kind == 3 ? (int64_t)(x % 2)
                                 : (r % 50 == 0 ? 1000 + (int64_t)(x % 9000) : (int64_t)(x % 40));
        }
    }
    return len;
}

START_TEST(test_elem_mixed)
{
    TEST_CONTEXT(ctx, _i);
    int rounds = test_thread_rounds(ctx);
    for (int round = 0, nthreads; round < rounds && (nthreads = test_threads(round)) > 0;
         round++) {
        for (uint64_t seed = 1; seed <= 5; seed++) {
            size_t nsegs = 60000 + 7000 * (size_t)seed;
            int64_t *len = mixed_lengths(nsegs, seed, seed > 3);
            char what[64];
            snprintf(what, sizeof what, "mixed lengths, seed %d, %d threads", (int)seed, nthreads);
            check_lengths_all_dtypes(ctx, len, nsegs, RG_STRATEGY_MERGE_PATH, what);
            free(len);
        }
    }
    test_threads_restore();
    rg_context_free(ctx);
}
END_TEST

/* Segments that end within 2 elements of every multiple of win (the
 * OpenMP merge path's windows), some followed by an empty segment or one
 * of length 1, over nwin windows. */
static int64_t *window_edge_lengths(int64_t win, size_t nwin, size_t *nsegs)
{
    int64_t *len = malloc(3 * nwin * sizeof *len);
    ck_assert_ptr_nonnull(len);
    size_t k = 0;
    int64_t prev = 0;
    for (size_t m = 1; m <= nwin; m++) {
        int64_t end = win * (int64_t)m + (int64_t)(m % 5) - 2;
        len[k++] = end - prev;
        prev = end;
        if (m % 3 == 0)
            len[k++] = 0;
        if (m % 7 == 0) {
            len[k++] = 1;
            prev++;
        }
    }
    *nsegs = k;
    return len;
}

/* Short segments (under 16 elements on average) for the merge path's
 * windows of win elements: runs of ones long enough to cover whole windows,
 * some broken by a 2 and a 0 (the same count of elements per segment, not
 * all ones), runs of uniform 0..20 (blocks of 16 and the longer
 * segments past them), and ones from a window edge up to a segment across
 * the next edge.  Other runs start anywhere in a window. */
static int64_t *short_lengths(int64_t win, size_t nsegs, uint64_t seed)
{
    int64_t *len = malloc(nsegs * sizeof *len);
    ck_assert_ptr_nonnull(len);
    int64_t k = 0; /* elements so far */
    for (size_t i = 0; i < nsegs;) {
        size_t run = 1 + test_rand(&seed) % 7000;
        int kind = (int)(test_rand(&seed) % 4);
        if (kind == 3) {
            /* From a window edge: win - 1 ones and a segment of 3 across
             * the next edge (the ones before it do not make a window of
             * ones), then win - 2 ones to the edge after. */
            int64_t pad = (win - k % win) % win;
            if (pad > 0 && i < nsegs)
                k += len[i++] = pad;
            for (int64_t r = 0; r < 2 * win - 2 && i < nsegs; r++, i++)
                k += len[i] = r == win - 1 ? 3 : 1;
            continue;
        }
        size_t broken = kind == 1 ? test_rand(&seed) % run : run;
        for (size_t r = 0; r < run && i < nsegs; r++, i++)
            k += len[i] = kind == 2 ? (int64_t)(test_rand(&seed) % 21)
                          : r == broken ? 2
                          : r == broken + 1 ? 0
                                            : 1;
    }
    return len;
}

/* The OpenMP merge path writes in windows of OMP_WINDOW elements
 * (OMP_WINDOW_CACHED for floods under 32 MiB): those
 * inside one segment straight from registers, the others by a flood or
 * through a buffer; streamed for outputs of 32 MiB or more, and for smaller
 * ones where the CPU has AVX-512 and the segments are short and uneven.
 * Mixed lengths (runs of ones, short, empty and long segments), short
 * lengths (the block writes and windows of ones), segment ends at and
 * beside window edges, and one huge segment, past 32 MiB of int32 output
 * (streamed) or under 32 MiB of int64 output, on every dtype pair and
 * thread count (streamed: each pair on two of them); on OpenMP also with
 * its AVX-512 paths off, and with RAGGED_OMP_STREAM=0 (plain: outputs past
 * 32 MiB stored as those in cache are; on 1 and 2 threads). */
static void check_windows(int b, bool streamed, bool plain)
{
    if (plain)
        test_setenv("RAGGED_OMP_STREAM", "0");
    TEST_CONTEXT(ctx, b);
    int rounds = plain ? 2 : test_thread_rounds(ctx);
    /* elements: past 32 MiB as int32, or under it as int64 */
    int64_t n = streamed ? ((int64_t)33 << 20) / 4 : ((int64_t)31 << 20) / 8;
    size_t nsegs = streamed ? 330000 : 30000;
    int64_t *mixed = mixed_lengths(nsegs, 9, 0);
    int64_t *huge = test_gen_lengths(DIST_HUGE, 5, n + 3, 10);
    int64_t win = streamed ? OMP_WINDOW : OMP_WINDOW_CACHED;
    size_t nedges;
    int64_t *edges = window_edge_lengths(win, (size_t)n / win, &nedges);
    size_t nshort = streamed ? 3000000 : 300000;
    int64_t *shorts = short_lengths(win, nshort, 11);
    int64_t *off = ref_offsets(mixed, nsegs);
    ck_assert_msg(streamed ? off[nsegs] * 4 > ((int64_t)32 << 20)
                           : off[nsegs] * 8 < ((int64_t)32 << 20),
                  "mixed case of the wrong size: %lld", (long long)off[nsegs]);
    free(off);
    off = ref_offsets(shorts, nshort);
    ck_assert_msg((streamed ? off[nshort] * 4 > ((int64_t)32 << 20)
                            : off[nshort] * 8 < ((int64_t)32 << 20)) &&
                      off[nshort] < 16 * (int64_t)nshort,
                  "short case of the wrong size or too long: %lld", (long long)off[nshort]);
    free(off);
    const char *how = plain ? "plain stores" : streamed ? "streamed" : "in cache";
    for (int round = 0, nthreads; round < rounds && (nthreads = test_threads(round)) > 0;
         round++) {
        /* Streamed, two dtype pairs per thread count (these cases take
         * most of the suite's time under the sanitizers): each pair runs
         * on two of the four counts, and each output dtype on all four. */
        unsigned pairs = !streamed || rounds == 1 ? 15u : round % 2 ? 6u : 9u;
        char what[64];
        snprintf(what, sizeof what, "%s, mixed lengths, %d threads", how, nthreads);
        check_lengths_dtypes(ctx, mixed, nsegs, RG_STRATEGY_MERGE_PATH, pairs, what);
        snprintf(what, sizeof what, "%s, short lengths, %d threads", how, nthreads);
        check_lengths_dtypes(ctx, shorts, nshort, RG_STRATEGY_MERGE_PATH, pairs, what);
        snprintf(what, sizeof what, "%s, one huge segment, %d threads", how, nthreads);
        check_lengths_dtypes(ctx, huge, 5, RG_STRATEGY_MERGE_PATH, pairs, what);
        snprintf(what, sizeof what, "%s, ends at window edges, %d threads", how, nthreads);
        check_lengths_dtypes(ctx, edges, nedges, RG_STRATEGY_MERGE_PATH, pairs, what);
    }
    test_threads_restore();
    test_unsetenv("RAGGED_OMP_STREAM");
    free(edges);
    free(huge);
    free(shorts);
    free(mixed);
    rg_context_free(ctx);
}

START_TEST(test_elem_streamed)
{
    check_windows(test_backend_plain(_i), true, false);
}
END_TEST

START_TEST(test_elem_windows)
{
    check_windows(test_backend_plain(_i), false, false);
}
END_TEST

START_TEST(test_elem_plain_stores)
{
    check_windows(TEST_BACKEND_OPENMP, true, true);
}
END_TEST

/* Regular offsets, every segment of one length: the OpenMP merge path
 * writes short ones from the length alone, in windows of whole 64-byte
 * lines (regular_fill of lib/omp/omp.c; up to 64 elements for int64
 * output, 32 for int32).  Lengths around those bounds, segment counts that
 * end windows and threads' shares part way, offsets known from the check
 * and from rg_offsets_from_lengths, outputs past 32 MiB (streamed), every
 * thread count, and edits that make known offsets irregular. */
/* nsegs lengths of len each (malloc'd, with room for one more). */
static int64_t *equal_lengths(size_t nsegs, int64_t len)
{
    int64_t *lens = malloc((nsegs + 1) * sizeof *lens);
    ck_assert_ptr_nonnull(lens);
    for (size_t i = 0; i < nsegs; i++)
        lens[i] = len;
    return lens;
}

static void check_regular_from_lengths(rg_context *ctx, int64_t len, size_t nsegs,
                                       rg_dtype tin, rg_dtype tout, bool bump)
{
    int64_t *lens = equal_lengths(nsegs, len);
    if (bump) { /* the same total, lengths no longer equal */
        lens[nsegs / 2]--;
        lens[nsegs - 1]++;
    }
    int64_t *off = ref_offsets(lens, nsegs);
    rg_array *lengths = test_array_from_i64(ctx, tin, lens, nsegs);
    rg_array *offsets = NULL;
    ck_assert_int_eq(rg_array_create(&offsets, ctx, tin, nsegs + 1), RG_OK);
    ck_assert_int_eq(rg_offsets_from_lengths(offsets, lengths), RG_OK);
    size_t nelems = (size_t)off[nsegs];
    int64_t *want[3];
    refs_new(want, off, nsegs);
    for (int o = 0; o < 3; o++) {
        char label[160];
        snprintf(label, sizeof label, "%s, %zu segments of %lld%s from lengths, %s -> %s",
                 ops[o].name, nsegs, (long long)len, bump ? " but two" : "", rg_dtype_name(tin),
                 rg_dtype_name(tout));
        rg_array *out = test_array_filled(ctx, tout, nelems, -7);
        run_op(ctx, o, out, offsets, RG_STRATEGY_AUTO, NULL, want[o], nelems, label);
        rg_array_free(out);
    }
    refs_free(want);
    rg_array_free(offsets);
    rg_array_free(lengths);
    free(off);
    free(lens);
}

/* Regular offsets already used, then edited in place, each edit keeping the
 * last offset: a middle offset moved (the first length still divides the
 * total evenly), then o[1]. */
static void check_regular_edited(rg_context *ctx, int64_t len, size_t nsegs, rg_dtype tin)
{
    int64_t *lens = equal_lengths(nsegs, len);
    int64_t *off = ref_offsets(lens, nsegs);
    size_t nelems = (size_t)off[nsegs];
    rg_array *offsets = test_array_from_i64(ctx, tin, off, nsegs + 1);
    rg_array *out = test_array_filled(ctx, RG_INT64, nelems, -7);
    for (int edit = 0; edit < 3; edit++) {
        if (edit > 0) {
            size_t at = edit == 1 ? nsegs / 2 : 1;
            off[at] += edit == 1 ? -1 : 1; /* stays monotonic: len >= 2 */
            int64_t v64 = off[at];
            int32_t v32 = (int32_t)v64;
            ck_assert_int_eq(rg_array_write(offsets, at, tin == RG_INT32 ? (void *)&v32
                                                                      : (void *)&v64, 1),
                             RG_OK);
        }
        int64_t *want[3];
        refs_new(want, off, nsegs);
        for (int o = 0; o < 3; o++) {
            char label[160];
            snprintf(label, sizeof label, "%s, %zu segments of %lld, %s offsets, edit %d",
                     ops[o].name, nsegs, (long long)len, rg_dtype_name(tin), edit);
            run_op(ctx, o, out, offsets, RG_STRATEGY_MERGE_PATH, NULL, want[o], nelems, label);
        }
        refs_free(want);
    }
    rg_array_free(out);
    rg_array_free(offsets);
    free(off);
    free(lens);
}

START_TEST(test_elem_regular)
{
    int b = test_backend_plain(_i);
    TEST_CONTEXT(ctx, b);
    int rounds = test_thread_rounds(ctx);
    static const int64_t lens[] = {1, 2, 3, 7, 8, 16, 31, 32, 33, 63, 64, 65};
    static const size_t counts[] = {1, 5, 64, 1000, 16411};
    for (int round = 0, nthreads; round < rounds && (nthreads = test_threads(round)) > 0;
         round++) {
        for (size_t l = 0; l < sizeof lens / sizeof *lens; l++)
            /* fewer than 1000 segments are too little work for more threads */
            for (size_t c = round > 0 ? 3 : 0; c < sizeof counts / sizeof *counts; c++) {
                int64_t *len = equal_lengths(counts[c], lens[l]);
                char what[64];
                snprintf(what, sizeof what, "regular, %d threads", nthreads);
                check_lengths_all_dtypes(ctx, len, counts[c], RG_STRATEGY_MERGE_PATH, what);
                if (c == 4)
                    check_lengths_all_dtypes(ctx, len, counts[c], RG_STRATEGY_AUTO, what);
                free(len);
            }
        if (round != 0 && round != 2)
            continue;
        /* Past 32 MiB of output: streamed (on 1 and 3 threads). */
        check_regular_from_lengths(ctx, 1, ((size_t)33 << 20) / 8 + 5, RG_INT64, RG_INT64, false);
        check_regular_from_lengths(ctx, 3, ((size_t)33 << 20) / 12 + 7, RG_INT32, RG_INT32, false);
        check_regular_from_lengths(ctx, 64, ((size_t)33 << 20) / 512 + 3, RG_INT32, RG_INT64, false);
        check_regular_from_lengths(ctx, 5, 12345, RG_INT64, RG_INT32, false);
        check_regular_from_lengths(ctx, 5, 12345, RG_INT32, RG_INT64, true);
        check_regular_edited(ctx, 2, 5000, RG_INT32);
        check_regular_edited(ctx, 8, 100000, RG_INT64);
    }
    test_threads_restore();
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_strategy_choose)
{
    TEST_CONTEXT(ctx, _i);
    static const size_t sizes[][2] = {{0, 0},        {1, 0},          {1, 10},     {5, 1000000},
                                      {1000, 100000}, {100000, 100000}, {1000000, 3}, {10, 10000000}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const char *why = NULL;
        rg_strategy a = rg_strategy_choose(ctx, sizes[s][0], sizes[s][1], &why);
        ck_assert_msg(is_concrete(a), "choose(%zu, %zu) = %d", sizes[s][0], sizes[s][1], (int)a);
        ck_assert_msg(why != NULL && why[0] != '\0', "choose(%zu, %zu): empty why", sizes[s][0], sizes[s][1]);
        ck_assert_int_eq(rg_strategy_choose(ctx, sizes[s][0], sizes[s][1], NULL), a);
    }
    for (int i = 0; i < N_STRATEGIES; i++) {
        const char *name = rg_strategy_name(all_strategies[i]);
        ck_assert_msg(name != NULL && name[0] != '\0', "strategy %d has no name", i);
        for (int j = 0; j < i; j++)
            ck_assert_str_ne(name, rg_strategy_name(all_strategies[j]));
    }
    ck_assert_ptr_nonnull(rg_strategy_name((rg_strategy)99));
    rg_context_free(ctx);
}
END_TEST

/* Every operation fails with want on (offsets, out), leaves out and used alone. */
static void expect_elem_fails(rg_context *ctx, rg_dtype tin, const int64_t *off, size_t noff, rg_dtype tout,
                              size_t out_length, rg_strategy strategy, rg_status want, const char *what)
{
    rg_array *offsets = test_array_from_i64(ctx, tin, off, noff);
    for (int o = 0; o < 3; o++) {
        rg_array *out = test_array_filled(ctx, tout, out_length, -7);
        rg_strategy used = (rg_strategy)77;
        rg_status st = ops[o].op(out, offsets, strategy, &used);
        ck_assert_msg(st == want, "%s, %s (%s -> %s): %d (%s), expected %d (%s)", ops[o].name, what,
                      rg_dtype_name(tin), rg_dtype_name(tout), (int)st, rg_strerror(st), (int)want,
                      rg_strerror(want));
        ck_assert_msg(strlen(rg_context_error(ctx)) > 0, "%s, %s: no message", ops[o].name, what);
        ck_assert_msg(used == (rg_strategy)77, "%s, %s: used written on error", ops[o].name, what);
        test_expect_filled(out, -7, what);
        rg_array_free(out);
    }
    rg_array_free(offsets);
}

START_TEST(test_elem_errors)
{
    TEST_CONTEXT(ctx, _i);
    for (int di = 0; di < 2; di++) {
        for (int dout = 0; dout < 2; dout++) {
            rg_dtype tin = index_dtypes[di], tout = index_dtypes[dout];
            for (int s = 0; s < N_STRATEGIES; s++) {
                rg_strategy st = all_strategies[s];
                const int64_t first[4] = {1, 2, 3, 3}, dec[4] = {0, 5, 3, 6}, ok[3] = {0, 2, 5};
                expect_elem_fails(ctx, tin, first, 4, tout, 3, st, RG_EOFFSETS, "first offset 1");
                expect_elem_fails(ctx, tin, dec, 4, tout, 6, st, RG_EOFFSETS, "decreasing offsets");
                ck_assert_msg(test_contains(rg_context_error(ctx), "2"), "index 2 not named: %s",
                              rg_context_error(ctx));
                expect_elem_fails(ctx, tin, ok, 3, tout, 4, st, RG_ESIZE, "output too short");
                expect_elem_fails(ctx, tin, ok, 3, tout, 6, st, RG_ESIZE, "output too long");
                expect_elem_fails(ctx, tin, ok, 0, tout, 0, st, RG_ESIZE, "empty offsets");
            }
        }
    }
    const int64_t ok[3] = {0, 2, 5};
    expect_elem_fails(ctx, RG_INT64, ok, 3, RG_FLOAT32, 5, RG_STRATEGY_AUTO, RG_EDTYPE, "float32 output");
    expect_elem_fails(ctx, RG_INT64, ok, 3, RG_FLOAT64, 5, RG_STRATEGY_FLOOD, RG_EDTYPE, "float64 output");
    expect_elem_fails(ctx, RG_INT32, ok, 3, RG_UINT32, 5, RG_STRATEGY_BSEARCH, RG_EDTYPE, "uint32 output");
    expect_elem_fails(ctx, RG_FLOAT32, ok, 3, RG_INT64, 5, RG_STRATEGY_AUTO, RG_EDTYPE, "float32 offsets");
    expect_elem_fails(ctx, RG_INT16, ok, 3, RG_INT32, 5, RG_STRATEGY_MERGE_PATH, RG_EDTYPE, "int16 offsets");
    expect_elem_fails(ctx, RG_INT64, ok, 3, RG_INT64, 5, (rg_strategy)99, RG_EINVAL, "strategy 99");
    expect_elem_fails(ctx, RG_INT64, ok, 3, RG_INT64, 5, (rg_strategy)-1, RG_EINVAL, "strategy -1");

    rg_array *offsets = test_array_from_i64(ctx, RG_INT64, ok, 3);
    rg_array *out = test_array_filled(ctx, RG_INT64, 5, -7);
    for (int o = 0; o < 3; o++) {
        ck_assert_int_eq(ops[o].op(NULL, offsets, RG_STRATEGY_AUTO, NULL), RG_EINVAL);
        ck_assert_int_eq(ops[o].op(out, NULL, RG_STRATEGY_AUTO, NULL), RG_EINVAL);
    }
    test_expect_filled(out, -7, "NULL offsets");
    int64_t *got;

    /* Offsets that are their own output: lengths that match ([0, 3, 3]: 3
     * elements, 3 offsets) must not make the op overwrite what it reads. */
    const int64_t self[3] = {0, 3, 3};
    rg_array *both = test_array_from_i64(ctx, RG_INT64, self, 3);
    for (int o = 0; o < 3; o++) {
        ck_assert_int_eq(ops[o].op(both, both, RG_STRATEGY_AUTO, NULL), RG_EINVAL);
        ck_assert_msg(test_contains(rg_context_error(ctx), "output is offsets too"), "%s",
                      rg_context_error(ctx));
    }
    got = test_read_i64(both);
    test_expect_i64(got, self, 3, "offsets given as their own output");
    free(got);
    rg_array_free(both);

    /* The context works after all that; used may be NULL. */
    ck_assert_int_eq(rg_parents(out, offsets, RG_STRATEGY_AUTO, NULL), RG_OK);
    got = test_read_i64(out);
    const int64_t want[5] = {0, 0, 1, 1, 1};
    test_expect_i64(got, want, 5, "parents after errors");
    free(got);
    rg_array_free(out);
    rg_array_free(offsets);
    rg_context_free(ctx);
}
END_TEST

/* ---- OpenCL kernel sources: build failures and missing folders ----------- */

static const char broken_marker[] = "ragged_deliberately_broken_xyzzy";

/* A folder holding a parents.cl: deliberately broken, or (stale) one that
 * builds but has none of the library's kernels. */
static char *write_kernels(bool stale)
{
    char *dir = strdup("/tmp/ragged-check-XXXXXX");
    ck_assert_ptr_nonnull(dir);
    ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
    char path[512];
    snprintf(path, sizeof path, "%s/parents.cl", dir);
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "fopen %s: %s", path, strerror(errno));
    fprintf(f, "/* deliberately %s for check_parents.c */\n"
               "__kernel void broken(__global long *out)\n"
               "{\n"
               "    out[0] = %s;\n"
               "}\n",
            stale ? "stale" : "broken", stale ? "1" : "ragged_deliberately_broken_xyzzy + ");
    fclose(f);
    return dir;
}

static void remove_kernels(char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/parents.cl", dir);
    unlink(path);
    rmdir(dir);
    free(dir);
}

/* True when an OpenCL context can be made (else the test is skipped); probed
 * before temporary files exist, so a failing probe leaves none behind. */
static int opencl_available(void)
{
    rg_context *probe = test_context(TEST_BACKEND_OPENCL);
    rg_context_free(probe);
    return probe != NULL;
}

/* A broken parents.cl first in the path fails the op with RG_EBUILD and
 * the build log; one that builds without the op's kernel (a file of another
 * version) with RG_ENOKERNEL naming the kernel and the file. */
START_TEST(test_kernel_build_failure)
{
    if (!opencl_available())
        return;
    bool stale = _i;
    const char *orig = getenv("RAGGED_KERNEL_PATH");
    char *dir = write_kernels(stale);
    char *path = malloc(strlen(dir) + (orig ? strlen(orig) : 0) + 2);
    ck_assert_ptr_nonnull(path);
    sprintf(path, "%s%s%s", dir, orig ? ":" : "", orig ? orig : "");
    test_setenv("RAGGED_KERNEL_PATH", path);
    test_setenv("RAGGED_CACHE", "0");
    free(path);

    rg_context *ctx = test_context(TEST_BACKEND_OPENCL);
    ck_assert_ptr_nonnull(ctx);
    const int64_t off[4] = {0, 2, 2, 5};
    rg_array *offsets = test_array_from_i64(ctx, RG_INT64, off, 4);
    rg_array *out = test_array_filled(ctx, RG_INT64, 5, -7);
    rg_strategy used = (rg_strategy)77;
    rg_status st = rg_parents(out, offsets, RG_STRATEGY_BSEARCH, &used);
    remove_kernels(dir);

    const char *msg = rg_context_error(ctx);
    if (stale) {
        ck_assert_msg(st == RG_ENOKERNEL, "rg_parents with a stale parents.cl: %d (%s) %s",
                      (int)st, rg_strerror(st), msg);
        ck_assert_msg(test_contains(msg, "seg_bsearch") && test_contains(msg, "parents.cl"),
                      "message should name the kernel and the file: \"%s\"", msg);
    } else {
        ck_assert_msg(st == RG_EBUILD, "rg_parents with a broken parents.cl: %d (%s) %s",
                      (int)st, rg_strerror(st), msg);
        ck_assert_msg(test_contains(msg, broken_marker), "build log should name %s: \"%s\"",
                      broken_marker, msg);
        ck_assert_msg(test_contains(msg, "error"), "build log should say error: \"%s\"", msg);
    }
    ck_assert_int_eq(used, 77);
    test_expect_filled(out, -7, "output after a failed build");

    rg_array_free(out);
    rg_array_free(offsets);
    rg_context_free(ctx);
}
END_TEST

/* A kernel path of a missing folder, or (_i = 1) of a folder whose
 * offsets.cl is a folder: RG_ENOKERNEL naming what was searched and, for
 * the second, the copy passed over. */
START_TEST(test_kernel_folder_missing)
{
    char odd[] = "/tmp/ragged-odd-XXXXXX", inner[64];
    const char *missing = "/nonexistent-dir";
    if (_i) {
        ck_assert_ptr_nonnull(mkdtemp(odd));
        snprintf(inner, sizeof inner, "%s/offsets.cl", odd);
        ck_assert_int_eq(mkdir(inner, 0700), 0);
        missing = odd;
    }
    test_setenv("RAGGED_KERNEL_PATH", missing);
    test_setenv("RAGGED_CACHE", "0");
    rg_context *ctx = test_context(TEST_BACKEND_OPENCL);
    if (ctx == NULL)
        return;

    const int64_t off[4] = {0, 2, 2, 5};
    rg_array *offsets = test_array_from_i64(ctx, RG_INT64, off, 4);
    rg_array *out = test_array_filled(ctx, RG_INT64, 5, -7);
    rg_status st = rg_parents(out, offsets, RG_STRATEGY_BSEARCH, NULL);
    if (st == RG_OK) {
        /* The installed kernel folder answered instead: then the result must be right. */
        fprintf(stderr, "skipped: installed kernels found despite RAGGED_KERNEL_PATH=%s\n", missing);
        const int64_t want[5] = {0, 0, 2, 2, 2};
        int64_t *got = test_read_i64(out);
        test_expect_i64(got, want, 5, "parents from installed kernels");
        free(got);
    } else {
        const char *msg = rg_context_error(ctx);
        ck_assert_msg(st == RG_ENOKERNEL, "missing kernel folder: %d (%s) %s", (int)st, rg_strerror(st), msg);
        ck_assert_msg(test_contains(msg, missing), "message should name %s: \"%s\"", missing, msg);
        ck_assert_msg(!_i || test_contains(msg, "offsets.cl: not a regular file"),
                      "message should name the folder passed over: \"%s\"", msg);
        test_expect_filled(out, -7, "output after a missing kernel");
    }
    if (_i) {
        rmdir(inner);
        rmdir(odd);
    }
    rg_array_free(out);
    rg_array_free(offsets);
    rg_context_free(ctx);
}
END_TEST

/* Overwrites every file in dir with garbage; returns how many. */
static int corrupt_cache(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "opendir %s: %s", dir, strerror(errno));
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r+");
        if (f == NULL)
            continue; /* a folder */
        fputs("this is not a program binary", f);
        fclose(f);
        n++;
    }
    closedir(d);
    return n;
}

/* Replaces every file in dir with a FIFO of its name; returns how many. */
static int fifo_cache(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "opendir %s: %s", dir, strerror(errno));
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.' && unlink(path) == 0) {
            ck_assert_msg(mkfifo(path, 0600) == 0, "mkfifo %s: %s", path, strerror(errno));
            n++;
        }
    }
    closedir(d);
    return n;
}

static void remove_cache(char *dir)
{
    DIR *d = opendir(dir);
    if (d != NULL) {
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            if (e->d_name[0] != '.')
                unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
    free(dir);
}

/* rg_parents with the given strategy on a fresh OpenCL context, checked. */
static void parents_on_fresh_context(rg_strategy strategy, const char *what)
{
    rg_context *ctx = test_context(TEST_BACKEND_OPENCL);
    ck_assert_ptr_nonnull(ctx);
    const int64_t off[5] = {0, 3, 3, 4, 9};
    const int64_t want[9] = {0, 0, 0, 2, 3, 3, 3, 3, 3};
    rg_array *offsets = test_array_from_i64(ctx, RG_INT64, off, 5);
    rg_array *out = test_array_filled(ctx, RG_INT32, 9, -7);
    rg_status st = rg_parents(out, offsets, strategy, NULL);
    ck_assert_msg(st == RG_OK, "%s: %d (%s) %s", what, (int)st, rg_strerror(st), rg_context_error(ctx));
    int64_t *got = test_read_i64(out);
    test_expect_i64(got, want, 9, what);
    free(got);
    rg_array_free(out);
    rg_array_free(offsets);
    rg_context_free(ctx);
}

/* A disk cache entry that cannot be loaded is a miss, not an error. */
START_TEST(test_kernel_cache_corrupt)
{
    if (!opencl_available())
        return;
    char *dir = strdup("/tmp/ragged-cache-XXXXXX");
    ck_assert_ptr_nonnull(dir);
    ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
    test_setenv("RAGGED_CACHE_DIR", dir);
    test_unsetenv("RAGGED_CACHE");

    parents_on_fresh_context(RG_STRATEGY_BSEARCH, "parents, cold cache");
    int n = corrupt_cache(dir);
    ck_assert_msg(n > 0, "no program was cached in %s", dir);
    parents_on_fresh_context(RG_STRATEGY_BSEARCH, "parents, corrupt cache");
    /* FIFOs in a shared cache folder, named as entries: misses, not a wait
     * for a writer (which SIGALRM ends, failing the test). */
    n = fifo_cache(dir);
    ck_assert_msg(n > 0, "no entry in %s", dir);
    alarm(120);
    parents_on_fresh_context(RG_STRATEGY_BSEARCH, "parents, FIFOs in the cache");
    alarm(0);
    /* And with the cache off altogether. */
    test_setenv("RAGGED_CACHE", "0");
    parents_on_fresh_context(RG_STRATEGY_MERGE_PATH, "parents, RAGGED_CACHE=0");
    remove_cache(dir);
}
END_TEST

Suite *parents_suite(void)
{
    Suite *s = test_suite("parents");

    TCase *tc = test_tcase("strategies");
    tcase_add_loop_test(tc, test_strategy_choose, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_elem_small, 0, TEST_NBACKENDS_GPU_KERNELS * N_STRATEGIES);
    tcase_add_loop_test(tc, test_elem_mixed, 0, TEST_NBACKENDS);
    suite_add_tcase(s, tc);

    /* Apart, so that slow runs (ThreadSanitizer: tests/tsan.sh) can leave them out. */
    tc = test_tcase("big");
    tcase_add_loop_test(tc, test_elem_big, 0, TEST_NBACKENDS_GPU_KERNELS * N_STRATEGIES);
    tcase_add_loop_test(tc, test_elem_streamed, 0, TEST_NBACKENDS_PLAIN);
    tcase_add_test(tc, test_elem_plain_stores);
    tcase_add_loop_test(tc, test_elem_windows, 0, TEST_NBACKENDS_PLAIN);
    tcase_add_loop_test(tc, test_elem_regular, 0, TEST_NBACKENDS_PLAIN);
    suite_add_tcase(s, tc);

    tc = test_tcase("errors");
    tcase_add_loop_test(tc, test_elem_errors, 0, TEST_NBACKENDS);
    suite_add_tcase(s, tc);

    tc = test_tcase("kernels");
    tcase_add_loop_test(tc, test_kernel_build_failure, 0, 2);
    tcase_add_loop_test(tc, test_kernel_folder_missing, 0, 2);
    tcase_add_test(tc, test_kernel_cache_corrupt);
    suite_add_tcase(s, tc);

    return s;
}
