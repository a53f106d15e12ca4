/* nonzero.c — the OpenMP backend's non-zero primitives: count per part, scan the counts, write per part. */
#include "config.h"

#include <string.h>

#include "omp.h"

/* How many indices a part remembers while it counts.  A part whose
 * non-zeros all fit is written from this buffer and its input is read once;
 * a denser part re-reads only the elements after the buffer filled up.  The
 * alternatives cost more: re-reading everything reads up to 8 bytes per
 * element again, and a worst-case index buffer writes and reads 8 bytes per
 * non-zero and needs 8 bytes per element of memory.  2^14 indices (128 KiB)
 * stay in L2 next to the input being streamed. */
#define NZ_BUFFER ((size_t)1 << 14)

/* Elements are read as unsigned integers of their size (the front end's mask
 * does the rest).  may_alias: the bytes may have been stored as floats or
 * signed integers. */
typedef uint8_t __attribute__((may_alias)) rg_bits8;
typedef uint16_t __attribute__((may_alias)) rg_bits16;
typedef uint32_t __attribute__((may_alias)) rg_bits32;
typedef uint64_t __attribute__((may_alias)) rg_bits64;
#define RG_EACH_BITS(X) X(1, rg_bits8) X(2, rg_bits16) X(4, rg_bits32) X(8, rg_bits64)

/* One contiguous part of the input, counted and later written by one thread. */
typedef struct nz_part {
    size_t begin, end; /* its elements */
    int64_t *buf;      /* indices of its first non-zeros, room for cap */
    size_t cap;
    size_t resume;     /* first element whose non-zero (if any) is not in buf */
    int64_t nbuf;      /* indices in buf */
    int64_t count;     /* non-zeros in [begin, end) */
    int64_t row;       /* non-zeros before begin: where its rows start */
} nz_part;

typedef struct nz_team {
    int parts;
    nz_part *part;
    int64_t *buffers; /* one block for all parts' buf */
} nz_team;

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

/* Elements compacted at a time by the 1-D writer (its stack block). */
#define RG_NZ_BLOCK 512

/* Counts part p; fills its buffer with the first non-zeros on the way. */
#define RG_DEFINE_NZ_COUNT(S, U)                                                           \
    static void nz_count_##S(const void *data, uint64_t mask, nz_part *p)                 \
    {                                                                                      \
        const U *x = data;                                                                 \
        const U m = (U)mask;                                                               \
        size_t k = p->begin;                                                               \
        int64_t buffered = 0, rest = 0;                                                    \
        for (; k < p->end && (size_t)buffered < p->cap; k++)                               \
            if (x[k] & m)                                                                  \
                p->buf[buffered++] = (int64_t)k;                                           \
        p->resume = k;                                                                     \
        p->nbuf = buffered;                                                                \
        RG_OMP(simd reduction(+ : rest))                                                   \
        for (size_t j = k; j < p->end; j++)                                                \
            rest += (x[j] & m) != 0;                                                       \
        p->count = buffered + rest;                                                        \
    }

/* Writes part p's rows: the buffered indices unravelled by division, then the
 * rest of the part re-read with an odometer (one increment per element
 * instead of ndim - 1 divisions per non-zero). */
#define RG_DEFINE_NZ_WRITE(S, U)                                                           \
    static void nz_write_##S(const void *data, uint64_t mask, const nz_part *p,           \
                             const int64_t *shape, size_t ndim, int64_t *out)              \
    {                                                                                      \
        const U *x = data;                                                                 \
        const U m = (U)mask;                                                               \
        int64_t *row = out + (size_t)p->row * ndim;                                        \
        for (int64_t i = 0; i < p->nbuf; i++, row += ndim)                                 \
            unravel(row, p->buf[i], shape, ndim);                                          \
        if (ndim == 1) {                                                                   \
            /* Branch-free: every index is stored and the cursor moves only on a       \
             * non-zero (no mispredictions at 50% density); a small local block     \
             * keeps the spare store away from the next part's rows. */              \
            int64_t blk[RG_NZ_BLOCK];                                                      \
            for (size_t k0 = p->resume; k0 < p->end; k0 += RG_NZ_BLOCK) {                  \
                size_t k1 = p->end - k0 < RG_NZ_BLOCK ? p->end : k0 + RG_NZ_BLOCK;         \
                size_t n = 0;                                                              \
                for (size_t k = k0; k < k1; k++) {                                         \
                    blk[n] = (int64_t)k;                                                   \
                    n += (x[k] & m) != 0;                                                  \
                }                                                                          \
                memcpy(row, blk, n * sizeof *row);                                         \
                row += n;                                                                  \
            }                                                                              \
            return;                                                                        \
        }                                                                                  \
        if (p->resume >= p->end)                                                           \
            return;                                                                        \
        int64_t c[RG_NONZERO_MAX_DIMS];                                                    \
        size_t last = ndim - 1;                                                            \
        unravel(c, (int64_t)p->resume, shape, ndim);                                       \
        for (size_t k = p->resume; k < p->end; k++) {                                      \
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
    }

RG_EACH_BITS(RG_DEFINE_NZ_COUNT)
RG_EACH_BITS(RG_DEFINE_NZ_WRITE)

typedef void (*nz_count_fn)(const void *, uint64_t, nz_part *);
typedef void (*nz_write_fn)(const void *, uint64_t, const nz_part *, const int64_t *, size_t,
                            int64_t *);
static const nz_count_fn count_fns[9] = {[1] = nz_count_1, [2] = nz_count_2, [4] = nz_count_4,
                                         [8] = nz_count_8};
static const nz_write_fn write_fns[9] = {[1] = nz_write_1, [2] = nz_write_2, [4] = nz_write_4,
                                         [8] = nz_write_8};

static void team_free(nz_team *team)
{
    free(team->buffers);
    free(team->part);
}

/* Cuts a into one part per thread, each with a buffer of up to cap indices
 * (0: count only).  Parts, not threads, carry the state between the count
 * and the write, so a second team with fewer threads still writes right. */
static rg_status team_make(nz_team *team, const rg_array *a, size_t cap)
{
    size_t n = a->length, total = 0;
    team->parts = team_size(n);
    team->part = calloc((size_t)team->parts, sizeof *team->part);
    team->buffers = NULL;
    for (int t = 0; team->part && t < team->parts; t++) {
        nz_part *p = &team->part[t];
        p->begin = part_begin(n, t, team->parts);
        p->end = part_begin(n, t + 1, team->parts);
        p->cap = p->end - p->begin < cap ? p->end - p->begin : cap;
        total += p->cap;
    }
    if (team->part && total > 0 && (team->buffers = malloc(total * sizeof(int64_t)))) {
        int64_t *next = team->buffers;
        for (int t = 0; t < team->parts; t++) {
            team->part[t].buf = next;
            next += team->part[t].cap;
        }
    }
    if (!team->part || (total > 0 && !team->buffers)) {
        team_free(team);
        return rg_set_error(a->ctx, RG_ENOMEM,
                            "OpenMP backend: out of host memory for the nonzero parts");
    }
    return RG_OK;
}

/* Counts every part in parallel and gives each its first row; returns the total. */
static int64_t team_count(nz_team *team, const rg_array *a, uint64_t mask)
{
    nz_count_fn count = count_fns[rg_dtype_size(a->dtype)];
    nz_part *part = team->part;
    int parts = team->parts;
    RG_OMP(parallel for schedule(static, 1) num_threads(parts))
    for (int t = 0; t < parts; t++)
        count(a->host, mask, &part[t]);
    int64_t total = 0;
    for (int t = 0; t < parts; t++) {
        part[t].row = total;
        total += part[t].count;
    }
    return total;
}

rg_status rg_omp_nonzero_count(const rg_array *a, uint64_t mask, int64_t *nnz)
{
    nz_team team;
    rg_status st = team_make(&team, a, 0);
    if (st != RG_OK)
        return st;
    *nnz = team_count(&team, a, mask);
    team_free(&team);
    return RG_OK;
}

rg_status rg_omp_nonzero(rg_array **coords, int64_t *nnz, const rg_array *a, uint64_t mask,
                         const int64_t *shape, size_t ndim, int64_t bound)
{
    nz_team team;
    rg_status st = team_make(&team, a, NZ_BUFFER);
    if (st != RG_OK)
        return st;
    int64_t total = team_count(&team, a, mask);
    *nnz = total;
    *coords = NULL;
    /* The count is on the host already: allocate exactly, bound or not. */
    if (bound >= 0 && total > bound) {
        team_free(&team);
        return RG_OK;
    }
    size_t length;
    rg_array *out = NULL;
    if (__builtin_mul_overflow((size_t)total, ndim, &length))
        st = rg_set_error(a->ctx, RG_EOVERFLOW, "OpenMP backend: %lld rows of %zu coordinates "
                          "overflow size_t", (long long)total, ndim);
    if (st == RG_OK)
        st = rg_array_create_uninit(&out, a->ctx, RG_INT64, length);
    if (st == RG_OK && total > 0) {
        nz_write_fn write = write_fns[rg_dtype_size(a->dtype)];
        nz_part *part = team.part;
        int parts = team.parts;
        int64_t *dst = out->host;
        RG_OMP(parallel for schedule(static, 1) num_threads(parts))
        for (int t = 0; t < parts; t++)
            write(a->host, mask, &part[t], shape, ndim, dst);
    }
    team_free(&team);
    if (st == RG_OK)
        *coords = out;
    return st;
}

/* seg_offsets[i] = the number of positions below o[i]; then each position
 * loses the start of its segment.  A part of the positions finds its first
 * segment by binary search and walks the offsets from there (positions
 * ascend), so empty segments cost one step each and no search per element. */
#define RG_DEFINE_SEG_NONZERO(N, T)                                                        \
    static void seg_nonzero_##N(int64_t *restrict seg_off, int64_t *restrict pos,          \
                                int64_t nnz, const T *restrict o, int64_t nsegs)           \
    {                                                                                      \
        RG_OMP(parallel for schedule(static) num_threads(team_size((size_t)nsegs)))        \
        for (int64_t i = 0; i <= nsegs; i++) {                                             \
            int64_t lo = 0, hi = nnz, target = o[i];                                       \
            while (lo < hi) {                                                              \
                int64_t mid = lo + (hi - lo) / 2;                                          \
                if (pos[mid] < target)                                                     \
                    lo = mid + 1;                                                          \
                else                                                                       \
                    hi = mid;                                                              \
            }                                                                              \
            seg_off[i] = lo;                                                               \
        }                                                                                  \
        RG_OMP(parallel num_threads(team_size((size_t)nnz)))                               \
        {                                                                                  \
            int t = thread_id(), nt = team_threads();                                      \
            int64_t j = (int64_t)part_begin((size_t)nnz, t, nt);                           \
            int64_t end = (int64_t)part_begin((size_t)nnz, t + 1, nt);                     \
            int64_t s = 0, hi = nsegs; /* o[s] <= pos[j] < o[hi] */                        \
            while (j < end && hi - s > 1) {                                                \
                int64_t mid = s + (hi - s) / 2;                                            \
                if ((int64_t)o[mid] <= pos[j])                                             \
                    s = mid;                                                               \
                else                                                                       \
                    hi = mid;                                                              \
            }                                                                              \
            for (; j < end; j++) {                                                         \
                while ((int64_t)o[s + 1] <= pos[j])                                        \
                    s++;                                                                   \
                pos[j] -= (int64_t)o[s];                                                   \
            }                                                                              \
        }                                                                                  \
    }

RG_DEFINE_SEG_NONZERO(i32, int32_t)
RG_DEFINE_SEG_NONZERO(i64, int64_t)

rg_status rg_omp_segment_nonzero(rg_array *seg_offsets, rg_array *positions,
                                 const rg_array *offsets)
{
    int64_t nsegs = (int64_t)offsets->length - 1, nnz = (int64_t)positions->length;
    if (offsets->dtype == RG_INT32)
        seg_nonzero_i32(seg_offsets->host, positions->host, nnz, offsets->host, nsegs);
    else if (offsets->dtype == RG_INT64)
        seg_nonzero_i64(seg_offsets->host, positions->host, nnz, offsets->host, nsegs);
    else
        return rg_set_error(offsets->ctx, RG_EDTYPE,
                            "OpenMP backend: segment_nonzero takes int32 or int64 offsets");
    return RG_OK;
}
