/* nonzero.c — the OpenMP backend's non-zero primitives: count per part, scan the counts, write per part. */
#include "config.h"

#include <string.h>

#include "omp.h"

/* Elements compacted at a time by the 1-D writer (its stack block). */
#define RG_NZ_BLOCK 512

/* Elements are read as unsigned integers of their size (the front end's mask
 * does the rest).  may_alias: the bytes may have been stored as floats or
 * signed integers. */
typedef uint8_t __attribute__((may_alias)) rg_bits8;
typedef uint16_t __attribute__((may_alias)) rg_bits16;
typedef uint32_t __attribute__((may_alias)) rg_bits32;
typedef uint64_t __attribute__((may_alias)) rg_bits64;
#define RG_EACH_BITS(X) X(1, rg_bits8) X(2, rg_bits16) X(4, rg_bits32) X(8, rg_bits64)

/* row[0 .. ndim) = the row-major coordinates of flat index k (every dimension > 0). */
static inline void unravel(int64_t *row, int64_t k, const int64_t *shape, size_t ndim)
{
    for (size_t d = ndim - 1; d > 0; d--) {
        int64_t q = k / shape[d];
        row[d] = k - q * shape[d];
        k = q;
    }
    row[0] = k;
}

/* dst[0 .. n) = src[0 .. n), streamed past the caches if stream (a result
 * of RG_OMP_STREAM_MIN bytes or more: it cannot stay in cache anyway, and
 * streaming skips reading each line before writing it, a third less memory
 * traffic for the 1-D writer). */
static inline void put_rows(int64_t *dst, const int64_t *src, size_t n, bool stream)
{
    if (stream)
        stream_copy(dst, src, n * sizeof *dst);
    else
        memcpy(dst, src, n * sizeof *dst);
}

/* The flat indices of the non-zeros of 8-byte elements x[k0 .. k1) into
 * blk (room for k1 - k0 + 8: each step stores 8), returning how many: 8
 * elements at a time, with AVX-512's compress, where the plain loop costs
 * a few cycles an element (it was the writer's limit on dense input).
 * Used where have_avx512() says the CPU has it. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
__attribute__((target("avx512f"))) static size_t nz_compress_8(const uint64_t *x, uint64_t mask,
                                                               size_t k0, size_t k1,
                                                               int64_t *blk, const char *ahead)
{
    const __m512i m = _mm512_set1_epi64((long long)mask), eight = _mm512_set1_epi64(8);
    __m512i idx = _mm512_add_epi64(_mm512_set1_epi64((long long)k0),
                                   _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
    size_t n = 0, k = k0;
    for (; k + 8 <= k1; k += 8, idx = _mm512_add_epi64(idx, eight)) {
        if (ahead)
            _mm_prefetch(ahead + (k - k0) * 8, _MM_HINT_T1);
        __mmask8 nz = _mm512_test_epi64_mask(_mm512_loadu_si512((const void *)(x + k)), m);
        _mm512_storeu_si512((void *)(blk + n), _mm512_maskz_compress_epi64(nz, idx));
        n += (size_t)__builtin_popcount(nz);
    }
    for (; k < k1; k++) {
        blk[n] = (int64_t)k;
        n += (x[k] & mask) != 0;
    }
    return n;
}
#else
static size_t nz_compress_8(const uint64_t *x, uint64_t mask, size_t k0, size_t k1, int64_t *blk,
                            const char *ahead)
{
    (void)x, (void)mask, (void)k0, (void)k1, (void)blk, (void)ahead;
    return 0; /* never called: have_avx512() is false */
}
#endif

/* nz_count_S: the non-zeros among x[begin, end).
 * nz_write_S: their rows, from row on (row-major, ndim coordinates each);
 * sparse: few non-zeros are expected, stream: see put_rows.  Returns the
 * number of rows written. */
#define RG_DEFINE_NZ(S, U)                                                                 \
    RG_OMP_CLONES static int64_t nz_count_##S(const void *data, uint64_t mask, size_t begin, \
                                              size_t end)                                  \
    {                                                                                      \
        const U *x = data;                                                                 \
        const U m = (U)mask;                                                               \
        int64_t c = 0;                                                                     \
        /* v | -v has the top bit set iff v != 0: and, neg, or and shift       \
         * vectorise for 8-byte lanes even where SSE2 lacks their compare. */      \
        RG_OMP(simd reduction(+ : c))                                                      \
        for (size_t k = begin; k < end; k++) {                                             \
            U v = x[k] & m;                                                                \
            c += (U)(v | (U)-v) >> (8 * sizeof(U) - 1);                                    \
        }                                                                                  \
        return c;                                                                          \
    }                                                                                      \
    RG_OMP_CLONES static int64_t nz_write_##S(const void *data, uint64_t mask, size_t begin, \
                                              size_t end,                                  \
                                const int64_t *shape, size_t ndim, int64_t *row,           \
                                bool sparse, bool stream, const void *ahead)               \
    {                                                                                      \
        const U *x = data;                                                                 \
        const U m = (U)mask;                                                               \
        int64_t *first = row;                                                              \
        if (ndim == 1) {                                                                   \
            /* Branch-free: every index is stored and the cursor moves only on a       \
             * non-zero (no mispredictions at 50% density); the local block keeps   \
             * the spare store off the next part's rows.  A sparse part first tests \
             * 8 elements at once and skips them when all are zero. */               \
            int64_t blk[RG_NZ_BLOCK + 8];                                                  \
            bool compress = sizeof(U) == 8 && !sparse && have_avx512();                    \
            for (size_t k0 = begin; k0 < end; k0 += RG_NZ_BLOCK) {                         \
                size_t k1 = end - k0 < RG_NZ_BLOCK ? end : k0 + RG_NZ_BLOCK;               \
                size_t n = 0, k = k0;                                                      \
                if (compress) {                                                            \
                    n = nz_compress_8((const uint64_t *)data, mask, k0, k1, blk,           \
                                      ahead ? (const char *)ahead + (k0 - begin) * 8 : NULL); \
                    k = k1;                                                                \
                }                                                                          \
                for (; sparse && k + 8 <= k1; k += 8) {                                    \
                    U any = 0;                                                             \
                    for (int j = 0; j < 8; j++)                                            \
                        any |= x[k + j];                                                   \
                    for (int j = 0; any & m && j < 8; j++) {                               \
                        blk[n] = (int64_t)(k + j);                                         \
                        n += (x[k + j] & m) != 0;                                          \
                    }                                                                      \
                }                                                                          \
                for (; k < k1; k++) {                                                      \
                    blk[n] = (int64_t)k;                                                   \
                    n += (x[k] & m) != 0;                                                  \
                }                                                                          \
                put_rows(row, blk, n, stream);                                             \
                row += n;                                                                  \
            }                                                                              \
            return row - first;                                                            \
        }                                                                                  \
        /* An odometer: one increment per element instead of ndim - 1 divisions   \
         * per non-zero. */                                                           \
        int64_t c[RG_NONZERO_MAX_DIMS];                                                    \
        size_t last = ndim - 1;                                                            \
        unravel(c, (int64_t)begin, shape, ndim);                                           \
        for (size_t k = begin; k < end; k++) {                                             \
            if (x[k] & m) {                                                                \
                memcpy(row, c, ndim * sizeof *row);                                        \
                row += ndim;                                                               \
            }                                                                              \
            if (++c[last] == shape[last]) {                                                \
                size_t d = last;                                                           \
                while (d > 0 && c[d] == shape[d]) {                                        \
                    c[d] = 0;                                                              \
                    c[--d]++;                                                              \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
        return (row - first) / (int64_t)ndim;                                              \
    }

RG_EACH_BITS(RG_DEFINE_NZ)

typedef int64_t (*nz_count_fn)(const void *, uint64_t, size_t, size_t);
typedef int64_t (*nz_write_fn)(const void *, uint64_t, size_t, size_t, const int64_t *,
                               size_t, int64_t *, bool, bool, const void *);
static const nz_count_fn count_fns[9] = {[1] = nz_count_1, [2] = nz_count_2, [4] = nz_count_4,
                                         [8] = nz_count_8};
static const nz_write_fn write_fns[9] = {[1] = nz_write_1, [2] = nz_write_2, [4] = nz_write_4,
                                         [8] = nz_write_8};

/* The non-zeros of a over contiguous parts, one per thread, in two passes:
 * count each part, add up the counts, then each part writes its rows from
 * where the parts before it end.  So that sparse input is read once, the
 * first pass also keeps the flat indices it finds in a buffer per part, of
 * up to an eighth of the part's bytes; the second pass copies them and
 * reads only the rest of the part.  Dense input stops the keeping after
 * one step and is read twice, as before: there an index costs more to keep
 * (8 bytes written, then read) than its element costs to read again.  Float64
 * input up to 12.5% dense is read once.  A single read by
 * threads agreeing on the rows of every cache-sized step (count it,
 * barrier, write it from cache) was tried: faster on an idle machine, but a
 * barrier per step stalls a whole time slice whenever either thread is
 * preempted, and on a busy machine it ran 5-20x slower. */
typedef struct nz_parts {
    int parts;
    int64_t *count; /* per part, the rows of the parts before it */
    int64_t **kept; /* per part, the flat indices kept by the first pass (or NULL) */
    int64_t *nkept; /* how many */
    size_t *resume; /* where the first pass stopped keeping them */
} nz_parts;

/* Elements the first pass hands to the writer at a time; it keeps going
 * while the buffer has room for a whole step. */
#define RG_NZ_KEEP_STEP 4096

static void free_parts(nz_parts *p)
{
    if (p->kept)
        for (int t = 0; t < p->parts; t++)
            free(p->kept[t]);
    free(p->kept);
    free(p->count);
}

/* Counts every part (keeping indices if keep); returns the total.  On
 * failure (no memory for the counts) nothing is written and *total is not
 * set.  No memory for a buffer only means that part is read twice. */
static rg_status count_parts(nz_parts *p, const rg_array *a, uint64_t mask, bool keep,
                             int64_t *total)
{
    nz_count_fn count = count_fns[rg_dtype_size(a->dtype)];
    nz_write_fn write = write_fns[rg_dtype_size(a->dtype)];
    size_t n = a->length;
    int parts = team_size(n);
    *p = (nz_parts){.parts = parts};
    /* one allocation: count, nkept and resume */
    char *block = malloc((size_t)parts * (2 * sizeof(int64_t) + sizeof(size_t)));
    p->count = (int64_t *)block;
    if (keep && block)
        p->kept = calloc((size_t)parts, sizeof *p->kept);
    if (!block || (keep && !p->kept)) {
        free(block);
        p->count = NULL;
        return rg_set_error(a->ctx, RG_ENOMEM,
                            "OpenMP backend: out of host memory for %d nonzero counts", parts);
    }
    int64_t *c = p->count;
    p->nkept = c + parts;
    p->resume = (size_t *)(p->nkept + parts);
    /* schedule(static, 1): parts, not threads, carry the counts, so a team
     * with fewer threads than asked still counts every part. */
    RG_OMP(parallel for schedule(static, 1) num_threads(parts))
    for (int t = 0; t < parts; t++) {
        size_t k = part_begin(n, t, parts), end = part_begin(n, t + 1, parts);
        size_t esize = rg_dtype_size(a->dtype), begin = k, room = (end - k) * esize / 64;
        int64_t kept = 0, *buf = NULL;
        /* a dense first step skips the keeping (and the buffer) altogether */
        if (keep && room >= RG_NZ_KEEP_STEP &&
            (size_t)count(a->host, mask, k, k + RG_NZ_KEEP_STEP) * 64 <= RG_NZ_KEEP_STEP * esize &&
            (buf = malloc(room * sizeof *buf))) {
            /* stops where the indices so far outweigh an eighth of the bytes
             * read (dense input: after one step), or the buffer is full */
            for (; k < end && room - (size_t)kept >= RG_NZ_KEEP_STEP &&
                   (size_t)kept * 64 <= (k - begin) * esize;) {
                size_t k1 = end - k < RG_NZ_KEEP_STEP ? end : k + RG_NZ_KEEP_STEP;
                kept += write(a->host, mask, k, k1, NULL, 1, buf + kept, true, false, NULL);
                k = k1;
            }
            p->kept[t] = buf;
        }
        p->nkept[t] = kept;
        p->resume[t] = k;
        c[t] = kept + count(a->host, mask, k, end);
    }
    int64_t sum = 0;
    for (int t = 0; t < parts; t++) {
        int64_t here = c[t];
        c[t] = sum;
        sum += here;
    }
    *total = sum;
    return RG_OK;
}

/* Writes the rows of every part to out (room for total rows). */
static void write_parts(const nz_parts *p, const rg_array *a, uint64_t mask, const int64_t *shape,
                        size_t ndim, int64_t *out, int64_t total)
{
    nz_write_fn write = write_fns[rg_dtype_size(a->dtype)];
    size_t n = a->length;
    int parts = p->parts;
    const int64_t *before = p->count;
    bool stream = stream_output((size_t)total * ndim * sizeof *out);
    RG_OMP(parallel for schedule(static, 1) num_threads(parts))
    for (int t = 0; t < parts; t++) {
        size_t begin = p->resume[t], end = part_begin(n, t + 1, parts);
        int64_t *row = out + (size_t)before[t] * ndim;
        int64_t kept = p->nkept[t];
        if (kept == 0) {
            /* nothing kept: the part is read again from its start */
        } else if (ndim == 1) {
            put_rows(row, p->kept[t], (size_t)kept, stream);
        } else {
            for (int64_t j = 0; j < kept; j++)
                unravel(row + (size_t)j * ndim, p->kept[t][j], shape, ndim);
        }
        row += (size_t)kept * ndim;
        int64_t rows = (t + 1 < parts ? before[t + 1] : total) - before[t] - kept;
        if (rows > 0)
            write(a->host, mask, begin, end, shape, ndim, row, (size_t)rows * 8 < end - begin,
                  stream, NULL);
        stream_fence(); /* the streamed rows are visible once the loop ends */
    }
}

/* One pass, for an output with room for a row per element (so that rows can
 * be written before the total is known).  The input is cut into blocks that
 * fit in a core's cache, dealt out in turn (thread t takes blocks t, t + nt,
 * ...).  A thread counts its block, publishes the count, finds the rows
 * before the block from the blocks before it, publishes that sum plus its
 * count, and writes the block's rows from cache: the input is read from
 * memory once instead of twice.  The rows before block b come from walking
 * back over the published values: a count is added and the walk goes on;
 * a sum of all rows up to a block ends it.  No thread waits long on
 * another: if a block before it is not counted after a short spin (its
 * owner may have lost the CPU), it counts that block itself; both counts
 * are equal, so which one lands does not matter.  A barrier per block was
 * tried before and ran 5-20x slower on a busy machine.
 *
 * How a block is read: after a block at most a quarter non-zero (and at
 * first), a 1-D block's rows are made while it is read from memory, into a
 * buffer the size of a block, and copied out once their place is known.
 * After a denser one, the block is counted first and its rows are made
 * from cache afterwards, while the thread's next block is prefetched: the
 * writes then overlap the next read (10^8 float64 99% non-zero: 66 ms
 * without the prefetch, 53-56 with it; 50%: 52 ms through the buffer, 45
 * counted first). */
#define RG_NZ_CHAIN_BLOCK ((size_t)1 << 16) /* elements: 512 KiB of float64 */
#define RG_NZ_COUNTED ((uint64_t)1 << 62)  /* the block's count follows */
#define RG_NZ_SUMMED ((uint64_t)1 << 63)   /* the rows up to and with the block follow */
#define RG_NZ_VALUE(d) ((int64_t)((d) & (RG_NZ_COUNTED - 1)))
#define RG_NZ_SPIN 4096                    /* checks before counting a block oneself */

/* The published value of block j, waiting a little for it and else counting
 * the block. */
static uint64_t nz_lookup(uint64_t *desc, size_t j, nz_count_fn count, const void *data,
                          uint64_t mask, size_t n)
{
    uint64_t d;
    for (int spin = 0; spin < RG_NZ_SPIN; spin++) {
        if ((d = __atomic_load_n(&desc[j], __ATOMIC_ACQUIRE)) != 0)
            return d;
        spin_pause();
    }
    size_t k0 = j * RG_NZ_CHAIN_BLOCK, k1 = n - k0 < RG_NZ_CHAIN_BLOCK ? n : k0 + RG_NZ_CHAIN_BLOCK;
    uint64_t mine = RG_NZ_COUNTED | (uint64_t)count(data, mask, k0, k1);
    d = 0;
    if (__atomic_compare_exchange_n(&desc[j], &d, mine, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return mine;
    return d; /* published meanwhile */
}

/* room: the rows out has.  A block whose rows would end past it is not
 * written (its rows are still counted); *blocks, if not NULL, receives the
 * published values (RG_NZ_VALUE: the rows up to and with each block), for
 * write_left_out, and the caller frees it. */
static rg_status nonzero_chained(const rg_array *a, uint64_t mask, const int64_t *shape,
                                 size_t ndim, int64_t *out, size_t room, int64_t *total,
                                 uint64_t **blocks)
{
    nz_count_fn count = count_fns[rg_dtype_size(a->dtype)];
    nz_write_fn write = write_fns[rg_dtype_size(a->dtype)];
    size_t n = a->length, nblocks = (n + RG_NZ_CHAIN_BLOCK - 1) / RG_NZ_CHAIN_BLOCK;
    size_t esize = rg_dtype_size(a->dtype);
    uint64_t *desc = calloc(nblocks, sizeof *desc);
    if (!desc)
        return rg_set_error(a->ctx, RG_ENOMEM,
                            "OpenMP backend: out of host memory for %zu nonzero blocks", nblocks);
    bool stream = stream_output(n * ndim * sizeof *out);
    RG_OMP(parallel num_threads(team_size(n)))
    {
        int t = thread_id(), nt = team_threads();
        int64_t *rows = ndim == 1 ? malloc(RG_NZ_CHAIN_BLOCK * sizeof *rows) : NULL;
        bool keep = rows != NULL; /* this block's rows go through rows */
        for (size_t b = (size_t)t; b < nblocks; b += (size_t)nt) {
            size_t k0 = b * RG_NZ_CHAIN_BLOCK;
            size_t k1 = n - k0 < RG_NZ_CHAIN_BLOCK ? n : k0 + RG_NZ_CHAIN_BLOCK;
            int64_t mine = keep ? write(a->host, mask, k0, k1, shape, 1, rows, false, false, NULL)
                                : count(a->host, mask, k0, k1);
            uint64_t d = 0;
            __atomic_compare_exchange_n(&desc[b], &d, RG_NZ_COUNTED | (uint64_t)mine, false,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
            int64_t before = 0;
            for (size_t j = b; j-- > 0;) {
                d = nz_lookup(desc, j, count, a->host, mask, n);
                before += RG_NZ_VALUE(d);
                if (d & RG_NZ_SUMMED)
                    break;
            }
            __atomic_store_n(&desc[b], RG_NZ_SUMMED | (uint64_t)(before + mine),
                             __ATOMIC_RELEASE);
            bool fits = (size_t)(before + mine) <= room; /* else left out: see room */
            if (fits && keep)
                put_rows(out + before, rows, (size_t)mine, stream);
            else if (fits && mine > 0)
                write(a->host, mask, k0, k1, shape, ndim, out + (size_t)before * ndim,
                      (size_t)mine * 8 < k1 - k0, stream,
                      (b + (size_t)nt + 1) * RG_NZ_CHAIN_BLOCK <= n
                          ? (const char *)a->host + (b + (size_t)nt) * RG_NZ_CHAIN_BLOCK * esize
                          : NULL);
            keep = rows && (size_t)mine * 4 <= k1 - k0;
        }
        free(rows);
        stream_fence();
    }
    *total = RG_NZ_VALUE(desc[nblocks - 1]);
    if (blocks)
        *blocks = desc;
    else
        free(desc);
    return RG_OK;
}

/* The 1-D rows of the blocks nonzero_chained left out (those ending past
 * room), into out, which now has room for all of them; blocks as it gave
 * them.  Each thread takes a contiguous run of blocks, so that the threads
 * write (and fault in) pages of their own. */
static void write_left_out(const rg_array *a, uint64_t mask, const uint64_t *blocks,
                           size_t room, int64_t *out)
{
    nz_write_fn write = write_fns[rg_dtype_size(a->dtype)];
    size_t n = a->length, nblocks = (n + RG_NZ_CHAIN_BLOCK - 1) / RG_NZ_CHAIN_BLOCK;
    size_t first = 0;
    while (first < nblocks && (size_t)RG_NZ_VALUE(blocks[first]) <= room)
        first++;
    bool stream = stream_output((size_t)RG_NZ_VALUE(blocks[nblocks - 1]) * sizeof *out);
    RG_OMP(parallel num_threads(team_size((nblocks - first) * RG_NZ_CHAIN_BLOCK)))
    {
        int t = thread_id(), nt = team_threads();
        size_t b0 = first + part_begin(nblocks - first, t, nt);
        size_t b1 = first + part_begin(nblocks - first, t + 1, nt);
        for (size_t b = b0; b < b1; b++) {
            size_t k0 = b * RG_NZ_CHAIN_BLOCK;
            size_t k1 = n - k0 < RG_NZ_CHAIN_BLOCK ? n : k0 + RG_NZ_CHAIN_BLOCK;
            int64_t before = b > 0 ? RG_NZ_VALUE(blocks[b - 1]) : 0;
            int64_t mine = RG_NZ_VALUE(blocks[b]) - before;
            if (mine > 0)
                write(a->host, mask, k0, k1, NULL, 1, out + before, (size_t)mine * 8 < k1 - k0,
                      stream, NULL);
        }
        stream_fence();
    }
}

/* Whether the one pass may run: several threads and blocks, and room for a
 * row per element of a (rows_room rows). */
static bool chain_fits(const rg_array *a, size_t rows_room)
{
    return rows_room >= a->length && team_size(a->length) > 1 &&
           a->length >= 2 * RG_NZ_CHAIN_BLOCK;
}

rg_status rg_omp_nonzero_count(const rg_array *a, uint64_t mask, int64_t *nnz)
{
    nz_parts p;
    rg_status st = count_parts(&p, a, mask, false, nnz);
    free_parts(&p);
    return st;
}

/* One pass (nonzero_chained), then trimmed to the rows, for 1-D results of
 * 8-byte elements (whose room is then no larger than a itself) with no
 * bound that asks to stop after counting, into:
 * - room for a row per element where the first block is sparse: only the
 *   pages of the rows written are ever touched;
 * - where it is dense, storage kept from a large array freed (the smallest
 *   spare that will do), if it holds at least 15/16 of the rows the first
 *   block predicts (a result freed before a call on like data, as in a
 *   loop).  Those pages are written already: dense rows in fresh pages ran
 *   slower in one pass (50%: 102 against 26 ms for 10^8 float64 on an AMD
 *   EPYC, 146 against 108 on an Intel Xeon), as the threads' blocks
 *   alternate and both fault on the same huge pages.  Rows past that room
 *   are written after the pass, into grown storage.
 * Else two passes: counted first, so the allocation is exact, bound or not. */
rg_status rg_omp_nonzero(rg_array **coords, int64_t *nnz, const rg_array *a, uint64_t mask,
                         const int64_t *shape, size_t ndim, int64_t bound)
{
    nz_parts p;
    int64_t total;
    *coords = NULL;
    rg_array *all = NULL;
    size_t room = 0;
    if (bound < 0 && ndim == 1 && rg_dtype_size(a->dtype) == 8 && chain_fits(a, a->length)) {
        size_t first = (size_t)count_fns[8](a->host, mask, 0, RG_NZ_CHAIN_BLOCK);
        size_t predicted = first * (a->length / RG_NZ_CHAIN_BLOCK);
        size_t kept = rg_omp_spare_fit(a->ctx, (predicted - predicted / 16) * sizeof(int64_t)) /
                      sizeof(int64_t);
        if (first * 8 <= RG_NZ_CHAIN_BLOCK)
            room = a->length;
        else if (kept > 0 && kept >= predicted - predicted / 16)
            room = kept < a->length ? kept : a->length;
    }
    if (room > 0 && rg_array_create_uninit(&all, a->ctx, RG_INT64, room) == RG_OK) {
        uint64_t *blocks = NULL;
        rg_status st = nonzero_chained(a, mask, shape, ndim, all->host, room, &total, &blocks);
        if (st == RG_OK && (size_t)total > room) {
            st = rg_array_reserve(all, (size_t)total);
            if (st == RG_OK)
                write_left_out(a, mask, blocks, room, all->host);
        }
        free(blocks);
        if (st != RG_OK) {
            rg_array_free(all);
            return st;
        }
        rg_array_set_length(all, all->capacity); /* so that the trim gives back all past total */
        rg_array_trim(all, (size_t)total);
        *nnz = total;
        *coords = all;
        return RG_OK;
    }
    rg_status st = count_parts(&p, a, mask, true, &total);
    if (st != RG_OK)
        return st;
    *nnz = total;
    size_t length = 0;
    rg_array *out = NULL;
    if (bound >= 0 && total > bound) {
        free_parts(&p);
        return RG_OK;
    }
    if (__builtin_mul_overflow((size_t)total, ndim, &length))
        st = rg_set_error(a->ctx, RG_EOVERFLOW, "OpenMP backend: %lld rows of %zu coordinates "
                          "overflow size_t", (long long)total, ndim);
    if (st == RG_OK)
        st = rg_array_create_uninit(&out, a->ctx, RG_INT64, length);
    if (st == RG_OK && total > 0)
        write_parts(&p, a, mask, shape, ndim, out->host, total);
    free_parts(&p);
    if (st == RG_OK)
        *coords = out;
    return st;
}

rg_status rg_omp_nonzero_into(rg_array *coords, int64_t *nnz, const rg_array *a, uint64_t mask,
                              const int64_t *shape, size_t ndim)
{
    if (chain_fits(a, coords->length / ndim))
        return nonzero_chained(a, mask, shape, ndim, coords->host, coords->length / ndim, nnz,
                               NULL);
    nz_parts p;
    int64_t total;
    rg_status st = count_parts(&p, a, mask, true, &total);
    if (st != RG_OK)
        return st;
    if ((uint64_t)total <= coords->length / ndim && total > 0)
        write_parts(&p, a, mask, shape, ndim, coords->host, total);
    free_parts(&p);
    *nnz = total;
    return RG_OK;
}

/* seg_offsets[i] = the number of positions below o[i], and each position
 * loses the start of its segment: one merge of the positions with the
 * offsets (both ascend).  Each thread takes an equal share of the
 * positions, finds the segment of its first one by binary search, and walks
 * both: stepping into segment s at position j gives seg_offsets[s] = j.  It
 * also writes the segments after its last position's up to the next
 * share's first (their count is the share's end), or to nsegs for the last
 * share; the first share writes those before its first.  The searches read
 * the positions before any thread changes them.  (A binary search per
 * offset, as before, took 36x to 90x the time of a copy of the bytes on
 * short and length-1 segments at 2^20 elements.)
 *
 * A step that loops while the next offset is at most its position
 * mispredicts at nearly every position where segments hold few positions
 * and their lengths vary.  There a step compares the next RG_WALK_SPAN
 * offsets at once, counts the boundaries crossed, and writes j to all
 * RG_WALK_SPAN slots: those not crossed are written again later, by the
 * step that crosses them or by the tail, as long as no step writes past
 * its walk's last slot, which it checks.  Such a step waits on the one
 * before (for the offsets at the new segment), so each share is cut into
 * RG_WALKERS walks that run interleaved.  Where segments hold many
 * positions, the loop rarely mispredicts and spans only cost stores.
 * Paired against the single loop, 10^8 float64 elements half zero (AMD EPYC
 * Zen 5): uniform 1..8 lengths 0.66, length 1 0.53, mean 100 0.95 (the
 * loop, interleaved); at about 4 positions a segment (1..16) spans took
 * 0.87 and the loop 0.97, at about 8 (1..32) 1.13 and 0.94. */
#define RG_WALKERS 4
#define RG_WALK_SPAN 4
#define RG_WALK_DENSE 6 /* spans below this many positions a segment */

#define RG_DEFINE_SEG_NONZERO(N, T)                                                        \
    static int64_t segment_of_##N(const T *o, int64_t nsegs, int64_t p)                    \
    {                                                                                      \
        int64_t s = 0, hi = nsegs; /* o[s] <= p < o[hi] */                                 \
        while (hi - s > 1) {                                                               \
            int64_t mid = s + (hi - s) / 2;                                                \
            if ((int64_t)o[mid] <= p)                                                      \
                s = mid;                                                                   \
            else                                                                           \
                hi = mid;                                                                  \
        }                                                                                  \
        return s;                                                                          \
    }                                                                                      \
    /* Position j of a walk in segment *s or later; it writes no slot past lim. */   \
    static inline RG_ALWAYS_INLINE void walk_step_##N(                                     \
        int64_t *restrict seg_off, int64_t *restrict pos, const T *restrict o, int64_t j,  \
        int64_t *s, int64_t lim, bool spans)                                               \
    {                                                                                      \
        int64_t p = pos[j], c = *s;                                                        \
        if (spans && c + RG_WALK_SPAN <= lim) {                                            \
            int64_t d = 0;                                                                 \
            RG_UNROLL                                                                      \
            for (int k = 1; k <= RG_WALK_SPAN; k++) {                                      \
                d += (int64_t)o[c + k] <= p;                                               \
                seg_off[c + k] = j;                                                        \
            }                                                                              \
            c += d;                                                                        \
            if (d < RG_WALK_SPAN)                                                          \
                goto done;                                                                 \
        }                                                                                  \
        while ((int64_t)o[c + 1] <= p) /* stops at p's segment, no later than lim */       \
            seg_off[++c] = j;                                                              \
    done:                                                                                  \
        pos[j] = p - (int64_t)o[c];                                                        \
        *s = c;                                                                            \
    }                                                                                      \
    static void seg_nonzero_##N(int64_t *restrict seg_off, int64_t *restrict pos,          \
                                int64_t nnz, const T *restrict o, int64_t nsegs,           \
                                int64_t *first)                                            \
    {                                                                                      \
        RG_OMP(parallel num_threads(team_size((size_t)(nnz + nsegs))))                     \
        {                                                                                  \
            int t = thread_id(), nt = team_threads();                                      \
            int64_t j0 = (int64_t)part_begin((size_t)nnz, t, nt);                          \
            int64_t j1 = (int64_t)part_begin((size_t)nnz, t + 1, nt);                      \
            first[t] = j0 < j1 ? segment_of_##N(o, nsegs, pos[j0]) : nsegs;                \
            RG_OMP(barrier)                                                                \
            if (j0 < j1) {                                                                 \
                /* walk w: positions b[w] .. b[w + 1), from segment s[w], slots up to      \
                 * lim[w]; every walk has a position */                                    \
                int nw = j1 - j0 < RG_WALKERS ? (int)(j1 - j0) : RG_WALKERS;               \
                int64_t b[RG_WALKERS + 1], s[RG_WALKERS], lim[RG_WALKERS];                 \
                for (int w = 0; w <= nw; w++)                                              \
                    b[w] = j0 + (int64_t)part_begin((size_t)(j1 - j0), w, nw);             \
                s[0] = first[t];                                                           \
                for (int w = 1; w < nw; w++)                                               \
                    s[w] = lim[w - 1] = segment_of_##N(o, nsegs, pos[b[w]]);               \
                lim[nw - 1] = j1 < nnz ? first[t + 1] : nsegs;                             \
                if (t == 0)                                                                \
                    for (int64_t i = 0; i <= s[0]; i++)                                    \
                        seg_off[i] = 0;                                                    \
                int64_t steps = b[nw] - b[nw - 1]; /* the fewest positions of a walk */    \
                bool spans = nnz / RG_WALK_DENSE < nsegs;                                  \
                if (nw == RG_WALKERS)                                                      \
                    for (int64_t k = 0; k < steps; k++)                                    \
                        RG_UNROLL                                                          \
                        for (int w = 0; w < RG_WALKERS; w++)                               \
                            walk_step_##N(seg_off, pos, o, b[w] + k, &s[w], lim[w], spans); \
                else                                                                       \
                    steps = 0;                                                             \
                for (int w = 0; w < nw; w++) {                                             \
                    for (int64_t j = b[w] + steps; j < b[w + 1]; j++)                      \
                        walk_step_##N(seg_off, pos, o, j, &s[w], lim[w], spans);           \
                    for (int64_t i = s[w] + 1; i <= lim[w]; i++)                           \
                        seg_off[i] = b[w + 1];                                             \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }

RG_DEFINE_SEG_NONZERO(i32, int32_t)
RG_DEFINE_SEG_NONZERO(i64, int64_t)

rg_status rg_omp_segment_nonzero(rg_array *seg_offsets, rg_array *positions,
                                 const rg_array *offsets)
{
    int64_t nsegs = (int64_t)offsets->length - 1, nnz = (int64_t)positions->length;
    if (offsets->dtype != RG_INT32 && offsets->dtype != RG_INT64)
        return rg_set_error(offsets->ctx, RG_EDTYPE,
                            "OpenMP backend: segment_nonzero takes int32 or int64 offsets");
    int64_t *first = team_scratch(offsets->ctx, team_size((size_t)(nnz + nsegs)));
    if (!first)
        return RG_ENOMEM;
    if (offsets->dtype == RG_INT32)
        seg_nonzero_i32(seg_offsets->host, positions->host, nnz, offsets->host, nsegs, first);
    else
        seg_nonzero_i64(seg_offsets->host, positions->host, nnz, offsets->host, nsegs, first);
    free(first);
    return RG_OK;
}
