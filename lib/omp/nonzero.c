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
 * Used where have_avx512() says the CPU has it.  ahead, if not 0, is
 * prefetched (into L2) as far ahead as x[k0] is read. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
__attribute__((target("avx512f"))) static size_t nz_compress_8(const uint64_t *x, uint64_t mask,
                                                               size_t k0, size_t k1,
                                                               int64_t *blk, uintptr_t ahead)
{
    const __m512i m = _mm512_set1_epi64((long long)mask), eight = _mm512_set1_epi64(8);
    __m512i idx = _mm512_add_epi64(_mm512_set1_epi64((long long)k0),
                                   _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
    size_t n = 0, k = k0;
    for (; k + 8 <= k1; k += 8, idx = _mm512_add_epi64(idx, eight)) {
        if (ahead)
            _mm_prefetch((const char *)(ahead + (k - k0) * 8), _MM_HINT_T1);
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
                            uintptr_t ahead)
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
                                      ahead ? (uintptr_t)ahead + (k0 - begin) * 8 : 0);    \
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
 * How a block is read: a 1-D block's rows are made while it is read from
 * memory, into a buffer the size of a block, and copied out once their
 * place is known.  With AVX-512's compress (8-byte elements) every block
 * goes so, compressed straight into the buffer: on a 2-core Intel Xeon
 * with 480 MiB of L3, paired, 10^8 float64 at 1%, 50% and 99% non-zero
 * took 0.86x to 0.88x, 0.69x and 0.76x to 0.77x the time of the rule
 * below (both orders).  Without it, only after a block at most a quarter
 * non-zero (and at first); after a denser one, the block is counted first
 * and its rows are made from cache afterwards, while the thread's next
 * block is prefetched: the writes then overlap the next read (on an
 * earlier Xeon, 99% non-zero: 66 ms without the prefetch, 53-56 with it;
 * 50%: 52 ms through the buffer, 45 counted first, the rows then going
 * through the writer's own block as well). */
#define RG_NZ_CHAIN_BLOCK ((size_t)1 << 16) /* elements: 512 KiB of float64 */
/* How far ahead of its reads the compress of a block prefetches, in bytes
 * (Intel Xeon, paired: 1% to 99% non-zero 0.93x to 0.97x the time with
 * 4 KiB; 1 KiB slower, 8 KiB the same). */
#define RG_NZ_READ_AHEAD 4096
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
        /* 8 more: nz_compress_8 stores 8 rows at a time */
        int64_t *rows = ndim == 1 ? malloc((RG_NZ_CHAIN_BLOCK + 8) * sizeof *rows) : NULL;
        bool keep = rows != NULL; /* this block's rows go through rows */
        bool compress = esize == 8 && have_avx512(); /* straight into rows */
        for (size_t b = (size_t)t; b < nblocks; b += (size_t)nt) {
            size_t k0 = b * RG_NZ_CHAIN_BLOCK;
            size_t k1 = n - k0 < RG_NZ_CHAIN_BLOCK ? n : k0 + RG_NZ_CHAIN_BLOCK;
            uintptr_t ahead = (uintptr_t)a->host + k0 * esize + RG_NZ_READ_AHEAD;
            int64_t mine =
                keep && compress ? (int64_t)nz_compress_8(a->host, mask, k0, k1, rows, ahead)
                : keep           ? write(a->host, mask, k0, k1, shape, 1, rows, false, false, NULL)
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
            keep = rows && (compress || (size_t)mine * 4 <= k1 - k0);
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

/* rg_segment_nonzero in two passes over the content cut into words of 64
 * elements, one part of whole words per thread:
 * 1. each thread sets a bit per non-zero element of its part (bits, 1/64 of
 *    an 8-byte content) and counts them; a scan of the counts gives each
 *    part's first row;
 * 2. each thread goes over its part 512 elements (8 words) at a time.  For
 *    each segment starting there it writes seg_offsets[i] = the rows below
 *    o[i] (the rows before the step plus a popcount of the bits below o[i])
 *    and sets a bit at o[i] (starts).  Then each non-zero's flat index k
 *    loses the last start at or before it, found in starts.
 * The content is read once and no result is read back.  Before, nonzero
 * wrote the flat indices and a walk merged them with the offsets: it read
 * and rewrote every position and mispredicted about once per segment where
 * segments hold few: this takes 0.53x to 0.86x its time at 10^8 float64
 * elements half zero on 2 threads of an AMD EPYC Zen 5 (BENCHMARKS.md,
 * fifteenth 2026-11-26 session). */
#define RG_SEG_WORDS (RG_NZ_BLOCK / 64) /* words a step of pass 2 takes */

/* bits[w] for the words [w0, w1) of x (n elements in all; a short last
 * word's high bits stay 0); returns how many bits are set. */
#define RG_DEFINE_NZ_BITS(S, U)                                                            \
    RG_OMP_CLONES static int64_t nz_bits_##S(const void *data, uint64_t mask, size_t n,    \
                                             size_t w0, size_t w1, uint64_t *restrict bits) \
    {                                                                                      \
        const U *x = data;                                                                 \
        const U m = (U)mask;                                                               \
        int64_t c = 0;                                                                     \
        for (size_t w = w0; w < w1; w++) {                                                 \
            const U *xw = x + w * 64;                                                      \
            size_t len = n - w * 64 < 64 ? n - w * 64 : 64;                                \
            uint64_t b = 0;                                                                \
            if (len == 64) {                                                               \
                /* a byte per element (this loop vectorises), then 8 bytes of 0 or 1 \
                 * to 8 bits at a time: the product puts byte j's bit at 56 + j */  \
                uint8_t one[64];                                                           \
                for (unsigned q = 0; q < 64; q++)                                          \
                    one[q] = (xw[q] & m) != 0;                                             \
                for (unsigned q = 0; q < 64; q += 8) {                                     \
                    uint64_t v;                                                            \
                    memcpy(&v, one + q, 8);                                                \
                    if (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)                            \
                        v = __builtin_bswap64(v); /* byte j at 8 * j */                    \
                    b |= (v * 0x0102040810204080u) >> 56 << q;                             \
                }                                                                          \
            } else {                                                                       \
                for (unsigned q = 0; q < len; q++)                                         \
                    b |= (uint64_t)((xw[q] & m) != 0) << q;                                \
            }                                                                              \
            bits[w] = b;                                                                   \
            c += __builtin_popcountll(b);                                                  \
        }                                                                                  \
        return c;                                                                          \
    }

RG_EACH_BITS(RG_DEFINE_NZ_BITS)

typedef int64_t (*nz_bits_fn)(const void *, uint64_t, size_t, size_t, size_t, uint64_t *);
static const nz_bits_fn bits_fns[9] = {[1] = nz_bits_1, [2] = nz_bits_2, [4] = nz_bits_4,
                                       [8] = nz_bits_8};

#if defined(__x86_64__) && defined(__GNUC__)
/* nz_bits_S for 4- and 8-byte elements with AVX-512's test into a mask: gcc
 * 12 left the loop above scalar, which then cost more than the reads. */
#define RG_DEFINE_NZ_BITS_AVX512(S, U, L, TEST, SET1)                                       \
    __attribute__((target("avx512f"))) static int64_t nz_bits_avx512_##S(                  \
        const void *data, uint64_t mask, size_t n, size_t w0, size_t w1, uint64_t *bits)    \
    {                                                                                      \
        const U *x = data;                                                                 \
        const __m512i m = SET1(mask);                                                      \
        size_t full = n / 64 < w1 ? n / 64 : w1; /* words of 64 elements */               \
        int64_t c = 0;                                                                     \
        size_t w = w0;                                                                     \
        for (; w < full; w++) {                                                            \
            uint64_t b = 0;                                                                \
            for (unsigned q = 0; q < 64; q += L)                                           \
                b |= (uint64_t)TEST(_mm512_loadu_si512((const void *)(x + w * 64 + q)), m) << q; \
            bits[w] = b;                                                                   \
            c += __builtin_popcountll(b);                                                  \
        }                                                                                  \
        return w < w1 ? c + nz_bits_##S(data, mask, n, w, w1, bits) : c;                   \
    }
#define RG_SET1_64(v) _mm512_set1_epi64((long long)(v))
#define RG_SET1_32(v) _mm512_set1_epi32((int)(uint32_t)(v))
RG_DEFINE_NZ_BITS_AVX512(8, uint64_t, 8, _mm512_test_epi64_mask, RG_SET1_64)
RG_DEFINE_NZ_BITS_AVX512(4, uint32_t, 16, _mm512_test_epi32_mask, RG_SET1_32)
static const nz_bits_fn bits_avx512_fns[9] = {[4] = nz_bits_avx512_4, [8] = nz_bits_avx512_8};
#else
static const nz_bits_fn bits_avx512_fns[9] = {0};
#endif

/* The rows of the non-zeros of 8 words of bits into blk, each the flat
 * index less the last start at or before it (a set bit of starts, else
 * *last, which then becomes the last start of these words); base is the
 * first word's first element.  Returns how many. */
static size_t local_rows(const uint64_t *bits, const uint64_t *starts, size_t nw, int64_t base,
                         int64_t *last, int64_t *blk)
{
    int64_t start = *last;
    size_t n = 0;
    for (size_t j = 0; j < nw; j++) {
        uint64_t m = bits[j], s = starts[j];
        int64_t wb = base + 64 * (int64_t)j;
        if (!s) { /* all in one segment: half the work (long segments) */
            for (int64_t shift = wb - start; m; m &= m - 1)
                blk[n++] = __builtin_ctzll(m) + shift;
            continue;
        }
        for (; m; m &= m - 1) {
            unsigned q = (unsigned)__builtin_ctzll(m);
            uint64_t below = s & (~(uint64_t)0 >> (63 - q)); /* starts at or below q */
            blk[n++] = q - (below ? 63 - __builtin_clzll(below) : start - wb);
        }
        start = wb + 63 - __builtin_clzll(s);
    }
    *last = start;
    return n;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* RG_LAST_START[b][l]: the highest set bit of the byte b at or below bit l,
 * or -1. */
#define RG_LS0(b) ((b) & 1 ? 0 : -1)
#define RG_LS1(b) ((b) & 2 ? 1 : RG_LS0(b))
#define RG_LS2(b) ((b) & 4 ? 2 : RG_LS1(b))
#define RG_LS3(b) ((b) & 8 ? 3 : RG_LS2(b))
#define RG_LS4(b) ((b) & 16 ? 4 : RG_LS3(b))
#define RG_LS5(b) ((b) & 32 ? 5 : RG_LS4(b))
#define RG_LS6(b) ((b) & 64 ? 6 : RG_LS5(b))
#define RG_LS7(b) ((b) & 128 ? 7 : RG_LS6(b))
#define RG_LS_ROW(b) {RG_LS0(b), RG_LS1(b), RG_LS2(b), RG_LS3(b), RG_LS4(b), RG_LS5(b), RG_LS6(b), RG_LS7(b)},
#define RG_LS_4(b) RG_LS_ROW(b) RG_LS_ROW((b) + 1) RG_LS_ROW((b) + 2) RG_LS_ROW((b) + 3)
#define RG_LS_16(b) RG_LS_4(b) RG_LS_4((b) + 4) RG_LS_4((b) + 8) RG_LS_4((b) + 12)
#define RG_LS_64(b) RG_LS_16(b) RG_LS_16((b) + 16) RG_LS_16((b) + 32) RG_LS_16((b) + 48)
static const int8_t RG_LAST_START[256][8] = {RG_LS_64(0) RG_LS_64(64) RG_LS_64(128)
                                                 RG_LS_64(192)};

/* local_rows 8 elements at a time with AVX-512: each lane's last start is
 * its byte's from the table, else the carried one; compress stores keep
 * the non-zeros' rows.  (The scalar loop costs a few cycles a non-zero.) */
__attribute__((target("avx512f"))) static size_t local_rows_avx512(const uint64_t *bits,
                                                                   const uint64_t *starts,
                                                                   size_t nw, int64_t base,
                                                                   int64_t *last, int64_t *blk)
{
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), zero = _mm512_setzero_si512();
    const __m512i top = _mm512_set1_epi64(7);
    __m512i carried = _mm512_set1_epi64(*last); /* the last start before the lanes */
    size_t n = 0;
    for (size_t j = 0; j < nw; j++) {
        uint64_t m = bits[j], s = starts[j];
        for (unsigned g = 0; g < 64; g += 8) {
            __m512i gb = _mm512_set1_epi64(base + 64 * (int64_t)j + g);
            __m512i t = _mm512_cvtepi8_epi64(
                _mm_loadl_epi64((const __m128i *)RG_LAST_START[(s >> g) & 255]));
            __m512i start = _mm512_mask_add_epi64(carried, _mm512_cmpge_epi64_mask(t, zero), gb, t);
            __m512i row = _mm512_sub_epi64(_mm512_add_epi64(gb, lane), start);
            __mmask8 nz = (__mmask8)(m >> g);
            _mm512_storeu_si512((void *)(blk + n), _mm512_maskz_compress_epi64(nz, row));
            n += (size_t)__builtin_popcount(nz);
            carried = _mm512_permutexvar_epi64(top, start);
        }
    }
    *last = _mm_cvtsi128_si64(_mm512_castsi512_si128(carried));
    return n;
}
#else
static size_t local_rows_avx512(const uint64_t *bits, const uint64_t *starts, size_t nw,
                                int64_t base, int64_t *last, int64_t *blk)
{
    return local_rows(bits, starts, nw, base, last, blk); /* never called */
}
#endif

/* Pass 2's parts count a segment start as RG_SEG_WEIGHT elements (paired
 * runs of weights 1 to 16 on skewed lengths: 2 and 4 within noise of each
 * other, 8 and 16 up to 5% slower, 1 up to 6%; BENCHMARKS.md, sixteenth
 * session).  Whole numbers, so that the two threads on either side of a
 * cut find the same word. */
#define RG_SEG_WEIGHT 4

/* first_at_least: the first i in [0, nsegs] with o[i] >= x (nsegs when
 * there is none: x > o[nsegs] = n).
 * split_word: the first word w whose w * 64 elements and the segments
 * starting before them, weighed, come to target or more: where a part of
 * pass 2 begins.
 * seg_part: pass 2 over the words [w0, w1) (the elements before them make
 * rows rows), from segment i, the first starting in them. */
#define RG_DEFINE_SEG_NONZERO(N, T)                                                        \
    static int64_t first_at_least_##N(const T *o, int64_t nsegs, int64_t x)                \
    {                                                                                      \
        int64_t lo = 0, hi = nsegs;                                                        \
        while (lo < hi) {                                                                  \
            int64_t mid = lo + (hi - lo) / 2;                                              \
            if ((int64_t)o[mid] < x)                                                       \
                lo = mid + 1;                                                              \
            else                                                                           \
                hi = mid;                                                                  \
        }                                                                                  \
        return lo;                                                                         \
    }                                                                                      \
    static size_t split_word_##N(const T *o, int64_t nsegs, size_t nwords, uint64_t target) \
    {                                                                                      \
        size_t lo = 0, hi = nwords;                                                        \
        while (lo < hi) {                                                                  \
            size_t mid = lo + (hi - lo) / 2;                                               \
            int64_t x = (int64_t)mid * 64, i = first_at_least_##N(o, nsegs, x);            \
            if ((uint64_t)x + RG_SEG_WEIGHT * (uint64_t)i < target)                        \
                lo = mid + 1;                                                              \
            else                                                                           \
                hi = mid;                                                                  \
        }                                                                                  \
        return lo;                                                                         \
    }                                                                                      \
    RG_OMP_CLONES static void seg_part_##N(                                                \
        const uint64_t *restrict bits, size_t w0, size_t w1, size_t n, const T *restrict o, \
        int64_t i, int64_t rows, int64_t *restrict seg_off, int64_t *restrict pos,         \
        bool stream, bool avx512)                                                          \
    {                                                                                      \
        int64_t blk[RG_NZ_BLOCK + 8];                                                      \
        /* the last start before the words (one at their first element is in starts) */   \
        int64_t last = i > 0 ? (int64_t)o[i - 1] : 0;                                      \
        for (size_t c = w0; c < w1; c += RG_SEG_WORDS) {                                   \
            size_t nw = w1 - c < RG_SEG_WORDS ? w1 - c : RG_SEG_WORDS;                     \
            int64_t base = (int64_t)c * 64;                                                \
            int64_t end = (size_t)base + nw * 64 < n ? base + (int64_t)nw * 64 : (int64_t)n; \
            int64_t below[RG_SEG_WORDS + 1]; /* rows before each word */                   \
            uint64_t starts[RG_SEG_WORDS] = {0}, acc = 0;                                  \
            below[0] = rows;                                                               \
            for (size_t j = 0; j < nw; j++)                                                \
                below[j + 1] = below[j] + __builtin_popcountll(bits[c + j]);               \
            /* o[nsegs] = n >= end stops the loop; each word's last store has \
             * all its starts (no load: consecutive starts share a word) */        \
            for (size_t prev = RG_SEG_WORDS; (int64_t)o[i] < end; i++) {                   \
                int64_t k = (int64_t)o[i] - base;                                          \
                size_t w = (size_t)k >> 6;                                                 \
                uint64_t bit = (uint64_t)1 << (k & 63);                                    \
                acc = (w == prev ? acc : 0) | bit;                                         \
                starts[w] = acc;                                                           \
                prev = w;                                                                  \
                seg_off[i] = below[w] + __builtin_popcountll(bits[c + w] & (bit - 1));     \
            }                                                                              \
            size_t got = avx512 ? local_rows_avx512(bits + c, starts, nw, base, &last, blk) \
                                : local_rows(bits + c, starts, nw, base, &last, blk);      \
            put_rows(pos, blk, got, stream);                                               \
            pos += got;                                                                    \
            rows = below[nw];                                                              \
        }                                                                                  \
    }

RG_DEFINE_SEG_NONZERO(i32, int32_t)
RG_DEFINE_SEG_NONZERO(i64, int64_t)

rg_status rg_omp_segment_nonzero(rg_array **seg_offsets, rg_array **positions,
                                 const rg_array *content, uint64_t mask, const rg_array *offsets)
{
    rg_context *ctx = content->ctx;
    if (offsets->dtype != RG_INT32 && offsets->dtype != RG_INT64)
        return rg_set_error(ctx, RG_EDTYPE,
                            "OpenMP backend: segment_nonzero takes int32 or int64 offsets");
    size_t n = content->length, nwords = (n + 63) / 64;
    int64_t nsegs = (int64_t)offsets->length - 1;
    int parts = team_size(n + (size_t)nsegs);
    if ((size_t)parts > nwords)
        parts = (int)nwords;
    uint64_t *bits = malloc(nwords * sizeof *bits);
    int64_t *before = malloc(((size_t)parts + 1) * sizeof *before);
    if (!bits || !before) {
        free(bits);
        free(before);
        return rg_set_error(ctx, RG_ENOMEM,
                            "OpenMP backend: out of host memory for %zu words of non-zero bits",
                            nwords);
    }
    size_t esize = rg_dtype_size(content->dtype);
    nz_bits_fn count = have_avx512() && bits_avx512_fns[esize] ? bits_avx512_fns[esize]
                                                               : bits_fns[esize];
    before[0] = 0;
    RG_OMP(parallel for schedule(static, 1) num_threads(parts))
    for (int t = 0; t < parts; t++)
        before[t + 1] = count(content->host, mask, n, part_begin(nwords, t, parts),
                              part_begin(nwords, t + 1, parts), bits);
    for (int t = 0; t < parts; t++)
        before[t + 1] += before[t];
    int64_t total = before[parts];
    rg_array *so = NULL, *pos = NULL;
    rg_status st = rg_array_create_uninit(&so, ctx, RG_INT64, (size_t)nsegs + 1);
    if (st == RG_OK)
        st = rg_array_create_uninit(&pos, ctx, RG_INT64, (size_t)total);
    if (st == RG_OK && total == 0) /* (and positions has no storage) */
        memset(so->host, 0, ((size_t)nsegs + 1) * sizeof(int64_t));
    else if (st == RG_OK) {
        bool stream = stream_output((size_t)total * sizeof(int64_t)), avx512 = have_avx512();
        int64_t *seg_off = so->host;
        const void *o = offsets->host;
        bool narrow = offsets->dtype == RG_INT32;
        /* Pass 2's parts weigh elements against segment starts, so that a
         * run of short or empty segments is not one thread's alone; the
         * segments starting at n (no word holds them) are shared out apart. */
        int64_t at_end = narrow ? first_at_least_i32(o, nsegs, (int64_t)n)
                                : first_at_least_i64(o, nsegs, (int64_t)n);
        /* (n < 2^63 and 8 at_end < 2^63: no overflow) */
        uint64_t weight = (uint64_t)n + RG_SEG_WEIGHT * (uint64_t)at_end;
        uint64_t q = weight / (uint64_t)parts, r = weight % (uint64_t)parts;
        RG_OMP(parallel for schedule(static, 1) num_threads(parts))
        for (int t = 0; t < parts; t++) {
            uint64_t ut = (uint64_t)t, target = ut * q + (ut < r ? ut : r);
            uint64_t next = target + q + (ut < r);
            size_t w0 = t == 0 ? 0
                        : narrow ? split_word_i32(o, nsegs, nwords, target)
                                 : split_word_i64(o, nsegs, nwords, target);
            size_t w1 = t == parts - 1 ? nwords
                        : narrow ? split_word_i32(o, nsegs, nwords, next)
                                 : split_word_i64(o, nsegs, nwords, next);
            /* Rows before w0: pass 1's count up to its part holding w0, and the rest. */
            int p = 0;
            while (p + 1 < parts && part_begin(nwords, p + 1, parts) <= w0)
                p++;
            int64_t rows = before[p];
            for (size_t w = part_begin(nwords, p, parts); w < w0; w++)
                rows += __builtin_popcountll(bits[w]);
            int64_t *out = (int64_t *)pos->host + rows, e0 = (int64_t)w0 * 64;
            if (narrow)
                seg_part_i32(bits, w0, w1, n, o, first_at_least_i32(o, nsegs, e0), rows,
                             seg_off, out, stream, avx512);
            else
                seg_part_i64(bits, w0, w1, n, o, first_at_least_i64(o, nsegs, e0), rows,
                             seg_off, out, stream, avx512);
            size_t tail = (size_t)(nsegs + 1 - at_end);
            for (size_t k = part_begin(tail, t, parts); k < part_begin(tail, t + 1, parts); k++)
                seg_off[at_end + (int64_t)k] = total;
            stream_fence();
        }
    }
    free(bits);
    free(before);
    if (st != RG_OK) {
        rg_array_free(so);
        rg_array_free(pos);
        return st;
    }
    *seg_offsets = so;
    *positions = pos;
    return RG_OK;
}
