/* memprobe.c — what the memory of this CPU allows an op that reads R bytes
 * (the offsets) while it streams W bytes out (parents, local index), with
 * no library in between.  Each line is the median of paired runs, timed in
 * turns with a streamed fill of the same W bytes, as ragged_bench times the
 * ops against that fill:
 *   fill         streamed 64-byte stores of W bytes (the ceiling);
 *   read R       vector loads of R bytes, summed;
 *   fill+read R  one pass: each thread streams its half of W and reads its
 *                half of R in step, as parents' windows do (R / W of each
 *                512-element window), prefetching 8 KiB ahead (prefetcht1
 *                on Intel, else prefetcht0: the library's choice);
 *   +marks R     fill+read with the flood's traffic in cache: a 4-byte
 *                store per 8 bytes read (a mark per segment) into a
 *                buffer of 512, and a 64-byte load of it per 64 bytes
 *                written (the scan);
 *   +marks@ R    the same, each store at the offset read (mod 512), as the
 *                flood stores at a segment's start: R holds the offsets of
 *                half-empty lengths (0 half the time, else 1 to 15);
 *   +marks@exit R  +marks@ whose loop ends where an offset passes the
 *                window's end, as the flood's does (a branch on a load);
 *   +marks@il R  +marks@ with the stores of the next window's marks
 *                interleaved with this window's lines, 2 a line, into the
 *                other half of a buffer of 1024;
 *   phases R     the same bytes in turns: 16 KiB of R read into cache,
 *                then its share of W streamed.
 * If fill+read stays above a target while the op is close to it, the
 * memory, not the op's code, holds the op back.  With R = 200 MB and
 * W = 800 MB this is half-empty lengths at 10^8 int64 elements (25 million
 * segments); with 178 MB, lengths of 1 to 8; with 143 MB, power-law.
 * On the 2-core Intel Xeon VM with 480 MiB of L3 (forty-fourth 2026-12-03
 * session), one run: fill+read 1.21x, 1.17x and 1.11x the fill for 200,
 * 178 and 143 MB, +marks 1.24x, 1.19x, 1.15x, +marks@ 1.24x, 1.22x,
 * 1.16x, phases 1.41x, 1.36x, 1.30x, where parents took 1.36x to 1.38x,
 * 1.26x to 1.33x and 1.24x to 1.27x.  Forty-fifth session, the same VM,
 * 200 MB, one run: fill+read 1.23x, +marks@ 1.26x, +marks@exit 1.26x,
 * +marks@il 1.24x (each kind three times in one process before: 1.22x to
 * 1.23x, 1.23x to 1.26x, 1.25x to 1.29x, 1.22x to 1.25x).
 * Build: cc -O2 -fopenmp -mavx512f -o memprobe memprobe.c
 * Run: ./memprobe [W MB] [R MB ...] (default 800 200 178; at most 16). */
#include <immintrin.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { REPS = 11, WINDOW = 512 * 8, AHEAD = 8192, PHASE = 16384 };

static volatile long long g_sink;
static int g_intel;

static double now(void)
{
    return omp_get_wtime();
}

static void prefetch(const char *p)
{
    if (g_intel)
        _mm_prefetch(p, _MM_HINT_T1);
    else
        _mm_prefetch(p, _MM_HINT_T0);
}

static void fill(char *w, size_t wn)
{
#pragma omp parallel
    {
        size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        size_t b = wn / nt * t / 64 * 64, e = t + 1 == nt ? wn : wn / nt * (t + 1) / 64 * 64;
        __m512i v = _mm512_set1_epi64(7);
        for (size_t k = b; k < e; k += 64)
            _mm512_stream_si512((void *)(w + k), v);
        _mm_sfence();
    }
}

static void read_only(const char *r, size_t rn)
{
    long long s = 0;
#pragma omp parallel reduction(+ : s)
    {
        size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        size_t b = rn / nt * t / 64 * 64, e = t + 1 == nt ? rn : rn / nt * (t + 1) / 64 * 64;
        __m512i acc = _mm512_setzero_si512();
        for (size_t k = b; k < e; k += 64)
            acc = _mm512_add_epi64(acc, _mm512_load_si512((const void *)(r + k)));
        s += _mm512_reduce_add_epi64(acc);
    }
    g_sink = s;
}

/* The mark of the offset at byte rk of r, stored where that offset says
 * (mod the window), as the flood stores at a segment's start. */
static inline void mark_at(int32_t *buf, const char *r, size_t rk)
{
    int64_t x;
    memcpy(&x, r + rk, 8);
    buf[(size_t)x % (WINDOW / 8)] = (int32_t)(rk / 8);
}

/* Both in one pass (phase == 0) or in turns of phase bytes of r; with
 * marks, as parents' floods (see the top): 1 +marks, 2 +marks@,
 * 3 +marks@exit, 4 +marks@il. */
static void fill_read(char *w, size_t wn, const char *r, size_t rn, size_t phase, int marks)
{
    long long s = 0;
#pragma omp parallel reduction(+ : s)
    {
        size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        size_t wb = wn / nt * t / 64 * 64, we = t + 1 == nt ? wn : wn / nt * (t + 1) / 64 * 64;
        size_t rb = rn / nt * t / 64 * 64, re = t + 1 == nt ? rn : rn / nt * (t + 1) / 64 * 64;
        double per = (double)(re - rb) / (double)(we - wb); /* bytes of r per byte of w */
        __m512i v = _mm512_set1_epi64(7), acc = _mm512_setzero_si512();
        int32_t buf[WINDOW / 8] __attribute__((aligned(64))) = {0};
        int32_t buf2[WINDOW / 4] __attribute__((aligned(64))) = {0};
        int half = 0;
        size_t rk = rb, pf = rb + AHEAD;
        size_t step = phase ? (size_t)((double)phase / per) / 64 * 64 : WINDOW;
        for (size_t wk = wb; wk < we;) {
            size_t wend = wk + step < we ? wk + step : we;
            size_t rend = rb + (size_t)((double)(wend - wb) * per);
            rend = wend == we ? re : rend;
            if (!phase)
                for (; pf < rend + AHEAD && pf < re; pf += 64)
                    prefetch(r + pf);
            if (marks == 4) { /* the next window's marks, 2 a line, into the other half */
                int32_t *cur = buf2 + (half ? WINDOW / 8 : 0);
                int32_t *nxt = buf2 + (half ? 0 : WINDOW / 8);
                half ^= 1;
                for (; wk < wend; wk += 64) {
                    for (int u = 0; u < 2 && rk + 8 <= rend; u++, rk += 8)
                        mark_at(nxt, r, rk);
                    __m512i m = _mm512_load_si512((const void *)(cur + wk / 4 % (WINDOW / 8)));
                    _mm512_stream_si512((void *)(w + wk), _mm512_add_epi64(v, m));
                }
                for (; rk + 8 <= rend; rk += 8)
                    mark_at(nxt, r, rk);
                continue;
            }
            if (marks) {
                if (marks == 3) { /* ends where an offset passes the window, as the flood */
                    int64_t lim = (int64_t)(wend / 8);
                    for (; rk + 8 <= re; rk += 8) {
                        int64_t x;
                        memcpy(&x, r + rk, 8);
                        if (x >= lim)
                            break;
                        mark_at(buf, r, rk);
                    }
                } else if (marks == 2) /* where the offset says: the store waits for its load */
                    for (; rk + 8 <= rend; rk += 8)
                        mark_at(buf, r, rk);
                else
                    for (; rk + 8 <= rend; rk += 8) {
                        int64_t x;
                        memcpy(&x, r + rk, 8);
                        buf[rk / 8 * 4 % (WINDOW / 8)] = (int32_t)x;
                    }
                for (; wk < wend; wk += 64) {
                    __m512i m = _mm512_load_si512((const void *)(buf + wk / 4 % (WINDOW / 8)));
                    _mm512_stream_si512((void *)(w + wk), _mm512_add_epi64(v, m));
                }
                continue;
            }
            for (; rk + 64 <= rend; rk += 64)
                acc = _mm512_add_epi64(acc, _mm512_loadu_si512((const void *)(r + rk)));
            for (; wk < wend; wk += 64)
                _mm512_stream_si512((void *)(w + wk), v);
        }
        _mm_sfence();
        s += _mm512_reduce_add_epi64(acc);
    }
    g_sink = s;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of t / fill time, and of the fill time, timed in turns. */
static void paired(const char *name, char *w, size_t wn, const char *r, size_t rn, int kind)
{
    double ratio[REPS], base[REPS], mine[REPS];
    for (int rep = 0; rep < REPS; rep++) {
        double t0 = now();
        fill(w, wn);
        double t1 = now();
        static const int marks_of[7] = {0, 0, 1, 2, 0, 3, 4}; /* fill_read's, by kind */
        if (kind == 0)
            read_only(r, rn);
        else
            fill_read(w, wn, r, rn, kind == 4 ? PHASE : 0, marks_of[kind]);
        double t2 = now();
        base[rep] = t1 - t0;
        mine[rep] = t2 - t1;
        ratio[rep] = (t2 - t1) / (t1 - t0);
    }
    qsort(ratio, REPS, sizeof *ratio, cmp_double);
    qsort(base, REPS, sizeof *base, cmp_double);
    qsort(mine, REPS, sizeof *mine, cmp_double);
    printf("%-24s %8.2f ms   fill %7.2f ms   %.2fx the fill\n", name, mine[REPS / 2] * 1e3,
           base[REPS / 2] * 1e3, ratio[REPS / 2]);
}

int main(int argc, char **argv)
{
    size_t wmb = argc > 1 ? strtoul(argv[1], NULL, 10) : 800;
    size_t rmbs[16] = {200, 178}, nr = 2;
    if (argc > 2)
        for (nr = 0; nr + 2 < (size_t)argc && nr < 16; nr++)
            rmbs[nr] = strtoul(argv[nr + 2], NULL, 10);
    size_t rmax = 0;
    for (size_t q = 0; q < nr; q++)
        rmax = rmbs[q] > rmax ? rmbs[q] : rmax;
    for (size_t q = 0; q < nr; q++)
        if (rmbs[q] < 1 || rmbs[q] > wmb || wmb > 100000) {
            fprintf(stderr, "memprobe: want 1 <= R <= W <= 100000 (MB)\n");
            return 2;
        }
    size_t wn = wmb * 1000000, rn = rmax * 1000000;
    char *w = aligned_alloc(64, wn), *r = aligned_alloc(64, rn ? rn : 64);
    if (!w || !r) {
        fprintf(stderr, "memprobe: out of memory\n");
        return 1;
    }
    unsigned eax, ebx, ecx, edx;
    __asm__("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(0));
    g_intel = ebx == 0x756e6547; /* "Genu" */
    memset(w, 1, wn); /* every page touched before timing */
    uint64_t z = 1; /* half-empty offsets, for +marks@ */
    int64_t off = 0;
    for (size_t q = 0; q + 8 <= rn; q += 8) {
        memcpy(r + q, &off, 8);
        z = z * 6364136223846793005u + 1442695040888963407u;
        off += z >> 63 ? 0 : 1 + (int64_t)(z >> 33) % 15;
    }
    printf("memprobe: %d threads, W = %zu MB, %s prefetches\n", omp_get_max_threads(), wmb,
           g_intel ? "prefetcht1" : "prefetcht0");
    for (size_t q = 0; q < nr; q++) {
        char name[7][64];
        size_t n = rmbs[q] * 1000000;
        snprintf(name[0], sizeof name[0], "read %zu MB", rmbs[q]);
        snprintf(name[1], sizeof name[1], "fill+read %zu MB", rmbs[q]);
        snprintf(name[2], sizeof name[2], "+marks %zu MB", rmbs[q]);
        snprintf(name[3], sizeof name[3], "+marks@ %zu MB", rmbs[q]);
        snprintf(name[4], sizeof name[4], "phases %zu MB", rmbs[q]);
        snprintf(name[5], sizeof name[5], "+marks@exit %zu MB", rmbs[q]);
        snprintf(name[6], sizeof name[6], "+marks@il %zu MB", rmbs[q]);
        for (int kind = 0; kind < 7; kind++)
            paired(name[kind], w, wn, r, n, kind);
    }
    free(w);
    free(r);
    return 0;
}
