/* check_segd.c — segment descriptors: the DPH examples, split/join/glue properties, bad input. */
#define _GNU_SOURCE /* fork, setrlimit, MAP_ANONYMOUS and MAP_NORESERVE under -std=c11 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static rg_segd *segd_of(rg_context *ctx, const int64_t *lengths, size_t nsegs)
{
    rg_segd *d = NULL;
    rg_status st = rg_segd_from_lengths(&d, ctx, lengths, nsegs);
    ck_assert_msg(st == RG_OK, "rg_segd_from_lengths: %s %s", rg_strerror(st), rg_context_error(ctx));
    return d;
}

static rg_segd_part part_of(const rg_dsegd *d, size_t w)
{
    rg_segd_part p;
    ck_assert_int_eq(rg_dsegd_part(&p, d, w), RG_OK);
    return p;
}

/* Worker w's pieces equal want[0 .. n). */
static void expect_pieces(const rg_dsegd *d, size_t w, const int64_t *want, size_t n)
{
    rg_segd_part p = part_of(d, w);
    ck_assert_msg(p.npieces == n, "worker %zu: %zu pieces, expected %zu", w, p.npieces, n);
    int64_t got[8];
    ck_assert_int_eq(rg_dsegd_lengths(got, d, w), RG_OK);
    char what[64];
    snprintf(what, sizeof what, "worker %zu pieces", w);
    test_expect_i64(got, want, n, what);
}

static void expect_same_segd(const rg_segd *got, const rg_segd *want, const char *what)
{
    ck_assert_msg(rg_segd_nsegs(got) == rg_segd_nsegs(want), "%s: %zu segments, expected %zu",
                  what, rg_segd_nsegs(got), rg_segd_nsegs(want));
    ck_assert_msg(rg_segd_nelems(got) == rg_segd_nelems(want), "%s: element count", what);
    test_expect_i64(rg_segd_lengths(got), rg_segd_lengths(want), rg_segd_nsegs(want), what);
    test_expect_i64(rg_segd_offsets(got), rg_segd_offsets(want), rg_segd_nsegs(want) + 1, what);
}

START_TEST(test_split_segs_example)
{
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENMP);
    const int64_t len[5] = {100, 10, 20, 40, 50};
    rg_segd *s = segd_of(ctx, len, 5);
    ck_assert_uint_eq(rg_segd_nsegs(s), 5);
    ck_assert_int_eq(rg_segd_nelems(s), 220);
    rg_dsegd *d = NULL;
    ck_assert_int_eq(rg_segd_split_segs(&d, s, 4), RG_OK);
    ck_assert_uint_eq(rg_dsegd_nworkers(d), 4);
    const int64_t w0[] = {100}, w1[] = {10, 20, 40}, w2[] = {50};
    expect_pieces(d, 0, w0, 1);
    expect_pieces(d, 1, w1, 3);
    expect_pieces(d, 2, w2, 1);
    expect_pieces(d, 3, NULL, 0);
    const int64_t nelems[4] = {100, 70, 50, 0};
    for (size_t w = 0; w < 4; w++) {
        rg_segd_part p = part_of(d, w);
        ck_assert_int_eq(p.nelems, nelems[w]);
        ck_assert_int_eq(p.first_offset, 0);
    }
    rg_segd *g = NULL;
    ck_assert_int_eq(rg_dsegd_glue(&g, d), RG_OK);
    expect_same_segd(g, s, "glue(split_segs)");
    rg_segd_free(g);
    rg_dsegd_free(d);
    rg_segd_free(s);
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_split_elems_example)
{
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENMP);
    const int64_t len[5] = {60, 10, 20, 40, 50};
    rg_segd *s = segd_of(ctx, len, 5);
    rg_dsegd *d = NULL;
    ck_assert_int_eq(rg_segd_split_elems(&d, s, 4), RG_OK);
    const int64_t w0[] = {45}, w1[] = {15, 10, 20}, w2[] = {40, 5}, w3[] = {45};
    expect_pieces(d, 0, w0, 1);
    expect_pieces(d, 1, w1, 3);
    expect_pieces(d, 2, w2, 2);
    expect_pieces(d, 3, w3, 1);
    const size_t first_seg[4] = {0, 0, 3, 4};
    const int64_t first_offset[4] = {0, 45, 0, 5};
    for (size_t w = 0; w < 4; w++) {
        rg_segd_part p = part_of(d, w);
        ck_assert_uint_eq(p.first_seg, first_seg[w]);
        ck_assert_int_eq(p.first_offset, first_offset[w]);
        ck_assert_int_eq(p.nelems, 45);
        ck_assert_int_eq(p.first_elem, 45 * (int64_t)w);
    }
    rg_segd *j = NULL, *g = NULL;
    ck_assert_int_eq(rg_dsegd_join(&j, d), RG_OK);
    const int64_t joined[7] = {45, 15, 10, 20, 40, 5, 45};
    ck_assert_uint_eq(rg_segd_nsegs(j), 7);
    ck_assert_int_eq(rg_segd_nelems(j), 180);
    test_expect_i64(rg_segd_lengths(j), joined, 7, "join");
    ck_assert_int_eq(rg_dsegd_glue(&g, d), RG_OK);
    expect_same_segd(g, s, "glue(split_elems)");
    rg_segd_free(j);
    rg_segd_free(g);
    rg_dsegd_free(d);
    rg_segd_free(s);
    rg_context_free(ctx);
}
END_TEST

/* DPH's splitSegdOnSegsD, sequentially: each worker starts with its quota of
 * elements, skips empty segments, and takes segments while quota > 0. */
static size_t *ref_split_segs(const int64_t *len, size_t nsegs, size_t p)
{
    size_t *counts = calloc(p, sizeof *counts);
    int64_t n = 0;
    for (size_t i = 0; i < nsegs; i++)
        n += len[i];
    size_t i = 0;
    for (size_t w = 0; w < p; w++) {
        int64_t k = n / (int64_t)p + ((int64_t)w < n % (int64_t)p);
        size_t start = i;
        while (i < nsegs) {
            if (len[i] == 0) { i++; continue; }
            if (k <= 0) break;
            k -= len[i++];
        }
        if (w + 1 == p)
            i = nsegs;
        counts[w] = i - start;
    }
    return counts;
}

/* Invariants of any split, and the per-kind rules. */
static void check_split(const rg_segd *s, const rg_dsegd *d, size_t p, int by_elems,
                        const char *what)
{
    size_t nsegs = rg_segd_nsegs(s);
    int64_t n = rg_segd_nelems(s);
    const int64_t *off = rg_segd_offsets(s), *len = rg_segd_lengths(s);
    size_t *ref = by_elems ? NULL : ref_split_segs(len, nsegs, p);
    int64_t elem = 0, total_pieces = 0;
    int64_t *pieces = malloc((nsegs + 1) * sizeof *pieces);
    for (size_t w = 0; w < p; w++) {
        rg_segd_part q = part_of(d, w);
        ck_assert_msg(q.first_elem == elem, "%s P=%zu w=%zu: first_elem %lld, expected %lld", what,
                      p, w, (long long)q.first_elem, (long long)elem);
        if (by_elems) {
            int64_t lo = n / (int64_t)p;
            ck_assert_msg(q.nelems == lo || q.nelems == lo + 1, "%s P=%zu w=%zu: %lld elements",
                          what, p, w, (long long)q.nelems);
        } else {
            ck_assert_msg(q.npieces == ref[w], "%s P=%zu w=%zu: %zu segments, DPH gives %zu", what,
                          p, w, q.npieces, ref[w]);
            ck_assert_int_eq(q.first_offset, 0);
        }
        ck_assert(q.npieces <= nsegs + 1);
        ck_assert_int_eq(rg_dsegd_lengths(pieces, d, w), RG_OK);
        int64_t sum = 0;
        for (size_t j = 0; j < q.npieces; j++) {
            ck_assert(pieces[j] >= 0);
            if (!by_elems)
                ck_assert_int_eq(pieces[j], len[q.first_seg + j]);
            sum += pieces[j];
        }
        ck_assert_msg(sum == q.nelems, "%s P=%zu w=%zu: pieces add up to %lld, not %lld", what, p,
                      w, (long long)sum, (long long)q.nelems);
        if (q.npieces > 0)
            ck_assert_msg(off[q.first_seg] + q.first_offset == q.first_elem,
                          "%s P=%zu w=%zu: first piece not at first_elem", what, p, w);
        elem += q.nelems;
        total_pieces += (int64_t)q.npieces;
    }
    ck_assert_int_eq(elem, n);
    rg_segd *j = NULL, *g = NULL;
    ck_assert_int_eq(rg_dsegd_join(&j, d), RG_OK);
    ck_assert_int_eq(rg_segd_nelems(j), n);
    ck_assert_int_eq((int64_t)rg_segd_nsegs(j), total_pieces);
    ck_assert_int_eq(rg_dsegd_glue(&g, d), RG_OK);
    expect_same_segd(g, s, what);
    rg_segd_free(j);
    rg_segd_free(g);
    free(pieces);
    free(ref);
}

START_TEST(test_split_properties)
{
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENMP);
    const size_t sizes[] = {0, 1, 3, 17, 200};
    for (int dist = 0; dist < DIST_COUNT; dist++)
        for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
            size_t nsegs = sizes[si];
            int64_t *len = test_gen_lengths((test_dist)dist, nsegs, 1000, 31 + si);
            rg_segd *s = segd_of(ctx, len, nsegs);
            char what[96];
            snprintf(what, sizeof what, "%s, %zu segments", test_dist_name((test_dist)dist), nsegs);
            for (size_t p = 1; p <= 64; p++) {
                rg_dsegd *d = NULL;
                ck_assert_int_eq(rg_segd_split_elems(&d, s, p), RG_OK);
                check_split(s, d, p, 1, what);
                rg_dsegd_free(d);
                ck_assert_int_eq(rg_segd_split_segs(&d, s, p), RG_OK);
                check_split(s, d, p, 0, what);
                rg_dsegd_free(d);
            }
            rg_segd_free(s);
            free(len);
        }
    rg_context_free(ctx);
}
END_TEST

/* From offsets arrays of either width, on both backends. */
START_TEST(test_segd_from_array)
{
    TEST_CONTEXT(ctx, _i);
    const int64_t off[6] = {0, 3, 3, 5, 6, 10}, len[5] = {3, 0, 2, 1, 4};
    const rg_dtype types[2] = {RG_INT32, RG_INT64};
    for (int t = 0; t < 2; t++) {
        rg_array *a = test_array_from_i64(ctx, types[t], off, 6);
        rg_segd *s = NULL;
        ck_assert_int_eq(rg_segd_from_array(&s, a), RG_OK);
        ck_assert_uint_eq(rg_segd_nsegs(s), 5);
        ck_assert_int_eq(rg_segd_nelems(s), 10);
        test_expect_i64(rg_segd_offsets(s), off, 6, "segd offsets");
        test_expect_i64(rg_segd_lengths(s), len, 5, "segd lengths");
        rg_segd_free(s);
        rg_array_free(a);
    }
    const int64_t bad[3] = {0, 4, 2};
    rg_array *a = test_array_from_i64(ctx, RG_INT64, bad, 3);
    rg_segd *s = (rg_segd *)&s;
    ck_assert_int_eq(rg_segd_from_array(&s, a), RG_EOFFSETS);
    ck_assert_ptr_eq(s, (rg_segd *)&s);
    ck_assert(test_contains(rg_context_error(ctx), "index 2"));
    rg_array_free(a);
    rg_context_free(ctx);
}
END_TEST

/* The workers of a split query it at once, as ragged.h allows, and some
 * ask for a worker past the last: each gets its own share and status (the
 * failures' messages were written over one another and corrupted the heap). */
enum { QUERY_THREADS = 4, QUERY_ROUNDS = 20000 };

typedef struct query_job {
    const rg_dsegd *d;
    int id;
    int wrong; /* results not as expected */
} query_job;

static void *query_parts(void *arg)
{
    query_job *job = arg;
    const size_t nworkers = rg_dsegd_nworkers(job->d);
    for (int r = 0; r < QUERY_ROUNDS; r++) {
        size_t w = (size_t)(job->id + r) % (nworkers + 3); /* 3 of every nworkers + 3 too far */
        rg_segd_part part = {0};
        int64_t lengths[8];
        rg_status st = rg_dsegd_part(&part, job->d, w);
        rg_status st2 = rg_dsegd_lengths(lengths, job->d, w);
        if (w >= nworkers)
            job->wrong += st != RG_ERANGE || st2 != RG_ERANGE;
        else
            job->wrong += st != RG_OK || st2 != RG_OK || part.nelems != 10 ||
                          part.first_elem != 10 * (int64_t)w;
    }
    return NULL;
}

START_TEST(test_dsegd_queries_in_threads)
{
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENMP);
    const int64_t len[6] = {7, 13, 0, 5, 5, 10}; /* 40 elements: 10 a worker */
    rg_segd *s = segd_of(ctx, len, 6);
    rg_dsegd *d = NULL;
    ck_assert_int_eq(rg_segd_split_elems(&d, s, 4), RG_OK);
    query_job jobs[QUERY_THREADS];
    pthread_t threads[QUERY_THREADS];
    for (int t = 0; t < QUERY_THREADS; t++) {
        jobs[t] = (query_job){d, t, 0};
        ck_assert_int_eq(pthread_create(&threads[t], NULL, query_parts, &jobs[t]), 0);
    }
    for (int t = 0; t < QUERY_THREADS; t++)
        ck_assert_int_eq(pthread_join(threads[t], NULL), 0);
    for (int t = 0; t < QUERY_THREADS; t++)
        ck_assert_msg(jobs[t].wrong == 0, "thread %d: %d wrong results", t, jobs[t].wrong);
    ck_assert_msg(test_contains(rg_context_error(ctx), " of 4"), "message: \"%s\"",
                  rg_context_error(ctx));
    rg_dsegd_free(d);
    rg_segd_free(s);
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_segd_bad_input)
{
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENMP);
    rg_segd *s = NULL, *sentinel = (rg_segd *)&ctx;
    const int64_t neg[3] = {1, -2, 3};
    s = sentinel;
    ck_assert_int_eq(rg_segd_from_lengths(&s, ctx, neg, 3), RG_EINVAL);
    ck_assert_ptr_eq(s, sentinel);
    ck_assert(test_contains(rg_context_error(ctx), "lengths[1] = -2"));
    const int64_t big[2] = {INT64_MAX, 1};
    ck_assert_int_eq(rg_segd_from_lengths(&s, ctx, big, 2), RG_EOVERFLOW);
    const int64_t off0[2] = {1, 2}, offdec[3] = {0, 5, 4};
    ck_assert_int_eq(rg_segd_from_offsets(&s, ctx, off0, 2), RG_EOFFSETS);
    ck_assert_int_eq(rg_segd_from_offsets(&s, ctx, offdec, 3), RG_EOFFSETS);
    ck_assert(test_contains(rg_context_error(ctx), "index 2"));
    ck_assert_int_eq(rg_segd_from_offsets(&s, ctx, offdec, 0), RG_ESIZE);
    ck_assert_int_eq(rg_segd_from_lengths(NULL, ctx, neg, 0), RG_EINVAL);
    ck_assert_int_eq(rg_segd_from_lengths(&s, NULL, neg, 0), RG_EINVAL);
    ck_assert_int_eq(rg_segd_from_lengths(&s, ctx, NULL, 2), RG_EINVAL);
    ck_assert_ptr_eq(s, sentinel);

    const int64_t len[3] = {2, 0, 5};
    s = segd_of(ctx, len, 3);
    rg_dsegd *d = (rg_dsegd *)sentinel;
    ck_assert_int_eq(rg_segd_split_elems(&d, s, 0), RG_EINVAL);
    ck_assert(test_contains(rg_context_error(ctx), "nworkers"));
    ck_assert_int_eq(rg_segd_split_segs(&d, s, 0), RG_EINVAL);
    ck_assert_ptr_eq(d, (rg_dsegd *)sentinel);
    ck_assert_int_eq(rg_segd_split_segs(NULL, s, 2), RG_EINVAL);
    ck_assert(test_contains(rg_context_error(ctx), "rg_segd_split_segs: out is NULL"));
    ck_assert_int_eq(rg_segd_split_elems(NULL, s, 2), RG_EINVAL);
    ck_assert(test_contains(rg_context_error(ctx), "rg_segd_split_elems: out is NULL"));
    ck_assert_int_eq(rg_segd_split_elems(&d, s, 2), RG_OK);
    rg_segd_part part = {99, 99, 99, 99, 99};
    ck_assert_int_eq(rg_dsegd_part(&part, d, 2), RG_ERANGE);
    ck_assert_uint_eq(part.first_seg, 99);
    ck_assert_int_eq(rg_dsegd_lengths(NULL, d, 0), RG_EINVAL);
    ck_assert_int_eq(rg_dsegd_join(NULL, d), RG_EINVAL);
    rg_dsegd_free(d);
    rg_dsegd_free(NULL);
    rg_segd_free(s);
    rg_segd_free(NULL);
    rg_context_free(ctx);
}
END_TEST

/* Descriptors large enough for huge-page mappings (2 MiB and up): the
 * same results as from a serial reference, errors found at the far end,
 * and every split glued back. */
START_TEST(test_segd_large)
{
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENMP);
    const size_t nsegs = ((size_t)4 << 20) / sizeof(int64_t) + 4099;
    int64_t *len = malloc(nsegs * sizeof *len), *off = malloc((nsegs + 1) * sizeof *off);
    ck_assert(len && off);
    off[0] = 0;
    for (size_t i = 0; i < nsegs; i++) {
        len[i] = (int64_t)((i * 2654435761u) % 13) * (i % 5 != 0); /* a fifth empty */
        off[i + 1] = off[i] + len[i];
    }
    rg_segd *s = segd_of(ctx, len, nsegs), *t = NULL;
    ck_assert_uint_eq(rg_segd_nsegs(s), nsegs);
    test_expect_i64(rg_segd_lengths(s), len, nsegs, "large from_lengths lengths");
    test_expect_i64(rg_segd_offsets(s), off, nsegs + 1, "large from_lengths offsets");
    ck_assert_int_eq(rg_segd_from_offsets(&t, ctx, off, nsegs + 1), RG_OK);
    expect_same_segd(t, s, "large from_offsets");
    rg_segd_free(t);
    /* (check_split asserts per piece, which Check makes slow at this size.) */
    int64_t *pieces = malloc((nsegs + 8) * sizeof *pieces);
    ck_assert(pieces);
    for (int by_elems = 0; by_elems < 2; by_elems++)
        for (size_t p = 1; p <= 7; p += 3) {
            rg_dsegd *d = NULL;
            rg_segd *j = NULL, *g = NULL;
            rg_status st = by_elems ? rg_segd_split_elems(&d, s, p) : rg_segd_split_segs(&d, s, p);
            ck_assert_int_eq(st, RG_OK);
            size_t k = 0;
            for (size_t w = 0; w < p; w++) {
                size_t np = part_of(d, w).npieces;
                ck_assert(k + np <= nsegs + 8);
                ck_assert_int_eq(rg_dsegd_lengths(pieces + k, d, w), RG_OK);
                k += np;
            }
            ck_assert_int_eq(rg_dsegd_join(&j, d), RG_OK);
            ck_assert_uint_eq(rg_segd_nsegs(j), k);
            ck_assert_int_eq(rg_segd_nelems(j), off[nsegs]);
            test_expect_i64(rg_segd_lengths(j), pieces, k, "large join");
            ck_assert_int_eq(rg_dsegd_glue(&g, d), RG_OK);
            expect_same_segd(g, s, "large glue");
            rg_segd_free(g);
            rg_segd_free(j);
            rg_dsegd_free(d);
        }
    free(pieces);
    rg_segd_free(s);

    /* Bad input at the last segment; nothing is returned. */
    t = (rg_segd *)&t;
    len[nsegs - 1] = -1;
    ck_assert_int_eq(rg_segd_from_lengths(&t, ctx, len, nsegs), RG_EINVAL);
    char want[64];
    snprintf(want, sizeof want, "lengths[%zu] = -1", nsegs - 1);
    ck_assert_msg(test_contains(rg_context_error(ctx), want), "%s", rg_context_error(ctx));
    len[nsegs - 1] = INT64_MAX - off[nsegs - 1] + 1;
    ck_assert_int_eq(rg_segd_from_lengths(&t, ctx, len, nsegs), RG_EOVERFLOW);
    off[nsegs] = off[nsegs - 1] - 1;
    ck_assert_int_eq(rg_segd_from_offsets(&t, ctx, off, nsegs + 1), RG_EOFFSETS);
    snprintf(want, sizeof want, "index %zu", nsegs);
    ck_assert_msg(test_contains(rg_context_error(ctx), want), "%s", rg_context_error(ctx));
    ck_assert_ptr_eq(t, (rg_segd *)&t);
    free(len);
    free(off);
    rg_context_free(ctx);
}
END_TEST

/* Descriptors of sizes on both sides of the storage the library keeps from
 * freed ones (from 64 KiB, below 4 MiB), two alive at a time, freed in
 * either order, from several threads at once, with the kept storage given
 * back now and then: every descriptor holds exactly its own values. */
enum { KEPT_THREADS = 4, KEPT_ROUNDS = 40 };

static void *kept_rounds(void *arg)
{
    uint64_t state = (uint64_t)(uintptr_t)arg;
    /* Blocks of 64 bytes, the offsets and the lengths (rounded up to 8):
     * 4087 segments take 65464 bytes, 4088 65536; 262130 segments take just
     * under 4 MiB, 262139 just over. */
    static const size_t sizes[] = {0, 1, 3000, 4087, 4088, 4100, 20000, 65536, 131000,
                                   262130, 262139, 300000};
    enum { NSIZES = sizeof sizes / sizeof sizes[0], MAXN = 300000 };
    rg_context *ctx = NULL;
    if (rg_context_create(&ctx, RG_BACKEND_OPENMP) != RG_OK)
        return "context";
    int64_t *len[2], *off[2];
    for (int k = 0; k < 2; k++) {
        len[k] = malloc(MAXN * sizeof(int64_t));
        off[k] = malloc((MAXN + 1) * sizeof(int64_t));
        if (!len[k] || !off[k])
            return "memory";
    }
    const char *bad = NULL;
    for (int round = 0; round < KEPT_ROUNDS && !bad; round++) {
        rg_segd *d[2] = {NULL, NULL};
        size_t n[2];
        for (int k = 0; k < 2 && !bad; k++) {
            n[k] = sizes[test_rand(&state) % NSIZES];
            off[k][0] = 0;
            for (size_t i = 0; i < n[k]; i++) {
                len[k][i] = (int64_t)(test_rand(&state) % 7);
                off[k][i + 1] = off[k][i] + len[k][i];
            }
            rg_status st = k == 0 ? rg_segd_from_lengths(&d[k], ctx, len[k], n[k])
                                  : rg_segd_from_offsets(&d[k], ctx, off[k], n[k] + 1);
            if (st != RG_OK)
                bad = "create";
        }
        for (int k = 0; k < 2 && !bad; k++)
            if (rg_segd_nsegs(d[k]) != n[k] ||
                memcmp(rg_segd_lengths(d[k]), len[k], n[k] * sizeof(int64_t)) ||
                memcmp(rg_segd_offsets(d[k]), off[k], (n[k] + 1) * sizeof(int64_t)))
                bad = "values";
        int first = (int)(test_rand(&state) % 2);
        rg_segd_free(d[first]);
        rg_segd_free(d[1 - first]);
        if (round % 16 == 15)
            rg_context_free_scratch(ctx);
    }
    for (int k = 0; k < 2; k++) {
        free(len[k]);
        free(off[k]);
    }
    rg_context_free(ctx);
    return (void *)bad;
}

START_TEST(test_segd_kept_storage)
{
    pthread_t threads[KEPT_THREADS];
    for (uintptr_t t = 0; t < KEPT_THREADS; t++)
        ck_assert_int_eq(pthread_create(&threads[t], NULL, kept_rounds, (void *)(t * 7919 + 1)),
                         0);
    for (int t = 0; t < KEPT_THREADS; t++) {
        void *bad = NULL;
        ck_assert_int_eq(pthread_join(threads[t], &bad), 0);
        ck_assert_msg(bad == NULL, "thread %d: %s", t, bad ? (const char *)bad : "");
    }
}
END_TEST

/* Sums at and past INT64_MAX, also where an unsigned sum would wrap to a
 * small value. */
START_TEST(test_segd_sum_limits)
{
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENMP);
    rg_segd *s = NULL;
    const int64_t at_max[2] = {INT64_MAX - 1, 1};
    ck_assert_int_eq(rg_segd_from_lengths(&s, ctx, at_max, 2), RG_OK);
    ck_assert_int_eq(rg_segd_nelems(s), INT64_MAX);
    rg_segd_free(s);
    s = (rg_segd *)&s;
    const int64_t wrap[3] = {INT64_MAX, INT64_MAX, 2}, past[3] = {INT64_MAX, 1, 0};
    ck_assert_int_eq(rg_segd_from_lengths(&s, ctx, wrap, 3), RG_EOVERFLOW);
    ck_assert_int_eq(rg_segd_from_lengths(&s, ctx, past, 3), RG_EOVERFLOW);
    const int64_t neg_later[3] = {INT64_MAX, 1, -5};
    ck_assert_int_eq(rg_segd_from_lengths(&s, ctx, neg_later, 3), RG_EINVAL);
    ck_assert(test_contains(rg_context_error(ctx), "lengths[2] = -5"));
    ck_assert_ptr_eq(s, (rg_segd *)&s);
    rg_context_free(ctx);
}
END_TEST

/* The sanitizers map terabytes of shadow memory; elsewhere than Linux
 * RLIMIT_AS may not be enforced. */
#if !defined(__linux__) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NO_ADDRESS_LIMIT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                    \
    __has_feature(memory_sanitizer) || __has_feature(hwaddress_sanitizer) ||                  \
    __has_feature(leak_sanitizer)
#define NO_ADDRESS_LIMIT 1
#endif
#endif

/* Bad input is reported as such even when the descriptor's memory cannot
 * be had: a child process whose address space is limited below what 10^8
 * segments need (the check runs while building, so this takes a second
 * look).  The input lies in a mapping that takes no memory until read. */
START_TEST(test_segd_bad_input_no_memory)
{
#ifdef NO_ADDRESS_LIMIT
    fprintf(stderr, "skipped: no address-space limit here (a sanitizer, or not Linux)\n");
#else
    TEST_CONTEXT(ctx, TEST_BACKEND_OPENMP);
    const size_t nsegs = 100000000;
    int64_t *in = mmap(NULL, nsegs * sizeof *in, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ck_assert(in != MAP_FAILED);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        /* Below what the child uses (the input's mapping, about 800 MB,
         * included) plus the 1.6 GB the descriptor would take. */
        struct rlimit lim = {(rlim_t)1200 << 20, (rlim_t)1200 << 20};
        int code = setrlimit(RLIMIT_AS, &lim) == 0 ? 0 : 10;
        rg_segd *d = (rg_segd *)&d;
        in[0] = -1;
        if (!code && rg_segd_from_lengths(&d, ctx, in, nsegs) != RG_EINVAL)
            code = 1;
        if (!code && !test_contains(rg_context_error(ctx), "lengths[0] = -1"))
            code = 2;
        in[0] = 0, in[1] = 5, in[2] = 3;
        if (!code && rg_segd_from_offsets(&d, ctx, in, nsegs) != RG_EOFFSETS)
            code = 3;
        if (!code && !test_contains(rg_context_error(ctx), "index 2"))
            code = 4;
        in[1] = in[2] = 0; /* good input (lengths all 0): then there is no memory */
        if (!code && rg_segd_from_lengths(&d, ctx, in, nsegs) != RG_ENOMEM)
            code = 5;
        if (!code && d != (rg_segd *)&d)
            code = 6;
        _exit(code);
    }
    int status = 0;
    pid_t got;
    while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    munmap(in, nsegs * sizeof *in);
    rg_context_free(ctx);
    ck_assert(got == pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "child: exit %d (1/3: wrong status for bad input, 2/4: message, 5: no "
                  "RG_ENOMEM for good input, 6: out written, 10: setrlimit)",
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
#endif
}
END_TEST

Suite *segd_suite(void)
{
    Suite *s = test_suite("segd");
    TCase *tc = test_tcase("segd");
    tcase_add_test(tc, test_split_segs_example);
    tcase_add_test(tc, test_split_elems_example);
    tcase_add_test(tc, test_split_properties);
    tcase_add_loop_test(tc, test_segd_from_array, 0, TEST_NBACKENDS);
    tcase_add_test(tc, test_segd_bad_input);
    tcase_add_test(tc, test_dsegd_queries_in_threads);
    tcase_add_test(tc, test_segd_large);
    tcase_add_test(tc, test_segd_kept_storage);
    tcase_add_test(tc, test_segd_sum_limits);
    tcase_add_test(tc, test_segd_bad_input_no_memory);
    suite_add_tcase(s, tc);
    return s;
}
