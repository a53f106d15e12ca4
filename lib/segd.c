/* segd.c — segment descriptors in host memory: split across workers by
 * segments or by elements, join, glue (after Data Parallel Haskell's USegd). */
#include "config.h"

#include <stdlib.h>

#include "internal.h"

struct rg_segd {
    rg_context *ctx;   /* receives error messages */
    size_t nsegs;
    int64_t *offsets;  /* nsegs + 1, 64 bytes into block */
    int64_t *lengths;  /* nsegs, in block after the offsets (lengths_at) */
    void *block;       /* both arrays, 64 bytes in: mapped, kept or malloc'd */
    size_t block_bytes;
    bool mapped;       /* block is rg_host_map's */
};

struct rg_dsegd {
    const rg_segd *segd; /* borrowed */
    size_t nworkers;
    rg_segd_part parts[]; /* nworkers */
};

/* A descriptor's block (its offsets and lengths) is mapped, in huge pages,
 * from this size: a descriptor is written once, whole, into fresh memory,
 * and with 4 KiB pages the page faults took most of the time.  Below it
 * (each array under RG_HOST_ALLOC_MAP_MIN) glibc's heap serves it. */
#define SEGD_MAP_MIN (2 * RG_HOST_ALLOC_MAP_MIN)

/* Freed descriptors' heap blocks of SEGD_KEEP_MIN bytes and more, kept for
 * the next descriptors.  glibc gives such a block back to the system when
 * it is freed at the top of its heap, and the next descriptor then faulted
 * in every page again: at 65536 segments the faults took 6x the rest of the
 * work.  Smaller blocks glibc reuses without faults.  Process-wide (a
 * descriptor may outlive its context), two slots (a glue keeps two
 * descriptors alive), so at most 2 x SEGD_MAP_MIN bytes; each block has its
 * size in front.  Given back by rg_context_free_scratch and when the
 * library is unloaded. */
#define SEGD_KEEP_MIN ((size_t)64 << 10)
#define SEGD_KEPT_SLOTS 2

typedef struct kept_block {
    size_t bytes; /* of the whole block, this header included */
    char pad[64 - sizeof(size_t)]; /* the arrays start 64 bytes in */
} kept_block;

static kept_block *kept[SEGD_KEPT_SLOTS];

/* A kept block of need bytes or more, and at most twice as many (a small
 * descriptor does not hold on to a big block), or NULL. */
static kept_block *take_kept(size_t need)
{
    for (int i = 0; i < SEGD_KEPT_SLOTS; i++) {
        kept_block *b = __atomic_exchange_n(&kept[i], NULL, __ATOMIC_ACQ_REL);
        if (!b)
            continue;
        if (b->bytes >= need && b->bytes / 2 <= need)
            return b;
        kept_block *none = NULL; /* not this one: back to its slot, or freed */
        if (!__atomic_compare_exchange_n(&kept[i], &none, b, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_RELAXED))
            free(b);
    }
    return NULL;
}

/* Keeps b in a free slot, else in place of the first slot's block. */
static void keep(kept_block *b)
{
    for (int i = 0; i < SEGD_KEPT_SLOTS; i++) {
        kept_block *none = NULL;
        if (__atomic_compare_exchange_n(&kept[i], &none, b, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED))
            return;
    }
    free(__atomic_exchange_n(&kept[0], b, __ATOMIC_ACQ_REL));
}

__attribute__((destructor)) void rg_segd_free_kept(void)
{
    for (int i = 0; i < SEGD_KEPT_SLOTS; i++)
        free(__atomic_exchange_n(&kept[i], NULL, __ATOMIC_ACQ_REL));
}

/* Where the lengths start in a block, in elements after the offsets' start:
 * past the nsegs + 1 offsets, 64 bytes aligned as the offsets are (in a
 * mapping; 16 from malloc). */
static size_t lengths_at(size_t nsegs)
{
    return (nsegs + 1 + 7) / 8 * 8;
}

/* An empty descriptor of nsegs segments, offsets[0] = 0, in a mapping of
 * its own, a kept block or a new heap block. */
static rg_status segd_alloc(rg_segd **out, rg_context *ctx, size_t nsegs, const char *fn)
{
    rg_segd *d = calloc(1, sizeof *d);
    if (d && nsegs < SIZE_MAX / 32) { /* need below fits easily */
        size_t need = sizeof(kept_block) + (lengths_at(nsegs) + nsegs) * sizeof(int64_t);
        d->block_bytes = need;
        if (need >= SEGD_MAP_MIN)
            d->mapped = (d->block = rg_host_map(need)) != NULL;
        else if (need >= SEGD_KEEP_MIN / 2 && (d->block = take_kept(need)))
            d->block_bytes = ((kept_block *)d->block)->bytes;
        if (!d->block)
            d->block = malloc(need);
    }
    if (!d || !d->block) {
        rg_segd_free(d);
        return rg_set_error(ctx, RG_ENOMEM, "%s: no host memory for %zu segments", fn, nsegs);
    }
    d->ctx = ctx;
    d->nsegs = nsegs;
    d->offsets = (int64_t *)((kept_block *)d->block + 1);
    d->lengths = d->offsets + lengths_at(nsegs);
    d->offsets[0] = 0;
    *out = d;
    return RG_OK;
}

void rg_segd_free(rg_segd *segd)
{
    if (!segd)
        return;
    if (segd->mapped) {
        rg_host_unmap(segd->block, segd->block_bytes);
    } else if (segd->block && segd->block_bytes >= SEGD_KEEP_MIN &&
               segd->block_bytes < SEGD_MAP_MIN) {
        ((kept_block *)segd->block)->bytes = segd->block_bytes;
        keep(segd->block);
    } else {
        free(segd->block);
    }
    free(segd);
}

/* from_lengths and from_offsets look at bad input's flag after each block
 * of this many segments. */
#define SEGD_BLOCK 4096

/* The first bad length (negative, or the sum past INT64_MAX), if any. */
static rg_status lengths_error(rg_context *ctx, const char *fn, const int64_t *lengths,
                               size_t nsegs)
{
    for (size_t i = 0; i < nsegs; i++)
        if (lengths[i] < 0)
            return rg_set_error(ctx, RG_EINVAL, "%s: lengths[%zu] = %lld is negative", fn, i,
                                (long long)lengths[i]);
    int64_t sum = 0;
    for (size_t i = 0; i < nsegs; i++)
        if (__builtin_add_overflow(sum, lengths[i], &sum))
            return rg_set_error(ctx, RG_EOVERFLOW, "%s: the lengths add up past INT64_MAX", fn);
    return RG_OK;
}

/* The first decrease of offsets[0 .. n), if any (offsets[0] is checked apart). */
static rg_status offsets_error(rg_context *ctx, const char *fn, const int64_t *offsets, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (offsets[i] < offsets[i - 1])
            return rg_set_error(ctx, RG_EOFFSETS,
                                "%s: offsets decrease at index %zu: offsets[%zu] = %lld is less "
                                "than offsets[%zu] = %lld",
                                fn, i, i, (long long)offsets[i], i - 1,
                                (long long)offsets[i - 1]);
    return RG_OK;
}

/* from_lengths and from_offsets check as they build, in one pass, and look
 * again for the message only when something is wrong (or when there is no
 * memory, so that bad input is still reported as such). */
rg_status rg_segd_from_lengths(rg_segd **out, rg_context *ctx, const int64_t *lengths,
                               size_t nsegs)
{
    static const char fn[] = "rg_segd_from_lengths";
    if (!ctx)
        return RG_EINVAL;
    if (!out || (!lengths && nsegs > 0))
        return rg_set_error(ctx, RG_EINVAL, "%s: %s is NULL", fn, out ? "lengths" : "out");
    rg_segd *d;
    rg_status st = segd_alloc(&d, ctx, nsegs, fn);
    if (st != RG_OK) {
        rg_status bad = lengths_error(ctx, fn, lengths, nsegs);
        return bad != RG_OK ? bad : st;
    }
    /* Once the unsigned sum passes INT64_MAX the flag stays, whatever the
     * sum does next. */
    uint64_t sum = 0;
    bool bad = false;
    for (size_t b = 0; b < nsegs && !bad; b += SEGD_BLOCK) { /* stop soon after bad input */
        size_t end = nsegs - b < SEGD_BLOCK ? nsegs : b + SEGD_BLOCK;
        for (size_t i = b; i < end; i++) {
            int64_t len = lengths[i];
            sum += (uint64_t)len;
            bad |= (len < 0) | (sum > (uint64_t)INT64_MAX);
            d->lengths[i] = len;
            d->offsets[i + 1] = (int64_t)sum;
        }
    }
    if (bad) {
        rg_segd_free(d);
        return lengths_error(ctx, fn, lengths, nsegs);
    }
    *out = d;
    return RG_OK;
}

rg_status rg_segd_from_offsets(rg_segd **out, rg_context *ctx, const int64_t *offsets,
                               size_t noffsets)
{
    static const char fn[] = "rg_segd_from_offsets";
    if (!ctx)
        return RG_EINVAL;
    if (!out || !offsets)
        return rg_set_error(ctx, RG_EINVAL, "%s: %s is NULL", fn, out ? "offsets" : "out");
    if (noffsets == 0)
        return rg_set_error(ctx, RG_ESIZE, "%s: offsets is empty; it needs nsegs + 1 >= 1 "
                            "elements", fn);
    if (offsets[0] != 0)
        return rg_set_error(ctx, RG_EOFFSETS, "%s: offsets[0] = %lld, must be 0", fn,
                            (long long)offsets[0]);
    rg_segd *d;
    rg_status st = segd_alloc(&d, ctx, noffsets - 1, fn);
    if (st != RG_OK) {
        rg_status bad = offsets_error(ctx, fn, offsets, noffsets);
        return bad != RG_OK ? bad : st;
    }
    bool bad = false;
    size_t nsegs = noffsets - 1;
    for (size_t b = 0; b < nsegs && !bad; b += SEGD_BLOCK) {
        size_t end = nsegs - b < SEGD_BLOCK ? nsegs : b + SEGD_BLOCK;
        for (size_t i = b; i < end; i++) {
            bad |= offsets[i + 1] < offsets[i];
            d->offsets[i + 1] = offsets[i + 1];
            d->lengths[i] = (int64_t)((uint64_t)offsets[i + 1] - (uint64_t)offsets[i]);
        }
    }
    if (bad) {
        rg_segd_free(d);
        return offsets_error(ctx, fn, offsets, noffsets);
    }
    *out = d;
    return RG_OK;
}

rg_status rg_segd_from_array(rg_segd **out, const rg_array *offsets)
{
    static const char fn[] = "rg_segd_from_array";
    if (!offsets)
        return RG_EINVAL;
    rg_context *ctx = offsets->ctx;
    int64_t nelems;
    rg_status st = rg_check_index_array(ctx, offsets, fn, "offsets", "offsets");
    if (st == RG_OK && !out)
        st = rg_set_error(ctx, RG_EINVAL, "%s: out is NULL", fn);
    if (st == RG_OK)
        st = rg_check_offsets(offsets, fn, &nelems);
    if (st != RG_OK)
        return st;
    rg_segd *d;
    size_t n = offsets->length;
    st = segd_alloc(&d, ctx, n - 1, fn);
    if (st != RG_OK)
        return st;
    if (offsets->dtype == RG_INT64) {
        st = ctx->ops->array_read(offsets, 0, d->offsets, n * sizeof(int64_t));
    } else {
        /* Widen in place from the back: int32 element i sits below int64 slot i. */
        int32_t *narrow = (int32_t *)(void *)d->offsets;
        st = ctx->ops->array_read(offsets, 0, narrow, n * sizeof(int32_t));
        for (size_t i = n; st == RG_OK && i-- > 0;)
            d->offsets[i] = narrow[i];
    }
    if (st != RG_OK) {
        rg_segd_free(d);
        return st;
    }
    for (size_t i = 0; i + 1 < n; i++)
        d->lengths[i] = d->offsets[i + 1] - d->offsets[i];
    *out = d;
    return RG_OK;
}

size_t rg_segd_nsegs(const rg_segd *segd)
{
    return segd ? segd->nsegs : 0;
}

int64_t rg_segd_nelems(const rg_segd *segd)
{
    return segd ? segd->offsets[segd->nsegs] : 0;
}

const int64_t *rg_segd_lengths(const rg_segd *segd)
{
    return segd ? segd->lengths : NULL;
}

const int64_t *rg_segd_offsets(const rg_segd *segd)
{
    return segd ? segd->offsets : NULL;
}

/* ---- splitting ------------------------------------------------------------ */

/* The smallest j in [lo, hi] with o[j] >= value (strict: o[j] > value), or
 * hi + 1 if there is none. */
static size_t search(const int64_t *o, size_t lo, size_t hi, int64_t value, bool strict)
{
    hi++;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strict ? o[mid] <= value : o[mid] < value)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The largest j in [lo, hi] with o[j] <= value (o[lo] <= value is given). */
static size_t last_at_most(const int64_t *o, size_t lo, size_t hi, int64_t value)
{
    return search(o, lo, hi, value, true) - 1;
}

/* Worker w's share of n elements: n / P, the first n % P one more. */
static int64_t share_begin(int64_t n, size_t w, size_t p)
{
    int64_t q = n / (int64_t)p, r = n % (int64_t)p, iw = (int64_t)w;
    return iw * q + (iw < r ? iw : r);
}

/* *d: a new descriptor of nworkers parts, to be filled in and then stored
 * in the caller's out (checked here, not written). */
static rg_status dsegd_alloc(rg_dsegd **d_out, rg_dsegd *const *out, const rg_segd *segd,
                             size_t nworkers, const char *fn)
{
    if (!segd)
        return RG_EINVAL;
    if (!out)
        return rg_set_error(segd->ctx, RG_EINVAL, "%s: out is NULL", fn);
    if (nworkers == 0)
        return rg_set_error(segd->ctx, RG_EINVAL, "%s: nworkers is 0; it must be >= 1", fn);
    rg_dsegd *d = NULL;
    if (nworkers < (SIZE_MAX - sizeof *d) / sizeof(rg_segd_part))
        d = calloc(1, sizeof *d + nworkers * sizeof(rg_segd_part));
    if (!d)
        return rg_set_error(segd->ctx, RG_ENOMEM, "%s: no host memory for %zu workers", fn,
                            nworkers);
    d->segd = segd;
    d->nworkers = nworkers;
    *d_out = d;
    return RG_OK;
}

/* Whole segments: worker w starts where w - 1 stopped and takes segments up
 * to the first end at or past its quota, then the empty segments after it:
 * one binary search each, so O(P log nsegs). */
rg_status rg_segd_split_segs(rg_dsegd **out, const rg_segd *segd, size_t nworkers)
{
    rg_dsegd *d;
    rg_status st = dsegd_alloc(&d, out, segd, nworkers, "rg_segd_split_segs");
    if (st != RG_OK)
        return st;
    const int64_t *o = segd->offsets;
    size_t nsegs = segd->nsegs, cur = 0;
    int64_t n = o[nsegs];
    for (size_t w = 0; w < nworkers; w++) {
        size_t end = nsegs;
        if (w + 1 < nworkers) {
            int64_t quota = share_begin(n, w + 1, nworkers) - share_begin(n, w, nworkers);
            int64_t target;
            if (__builtin_add_overflow(o[cur], quota, &target))
                target = INT64_MAX;
            end = search(o, cur, nsegs, target, false);
            end = end > nsegs ? nsegs : last_at_most(o, end, nsegs, o[end]);
        }
        rg_segd_part *p = &d->parts[w];
        p->first_seg = cur;
        p->first_offset = 0;
        p->npieces = end - cur;
        p->first_elem = o[cur];
        p->nelems = o[end] - o[cur];
        cur = end;
    }
    *out = d;
    return RG_OK;
}

/* Element-wise: worker w's first piece lies in the last segment starting at or
 * before its first element (so empty segments at a boundary stay with w - 1);
 * its last piece is in the segment before the next worker's first one, or in
 * that same segment when the next worker starts inside it. */
rg_status rg_segd_split_elems(rg_dsegd **out, const rg_segd *segd, size_t nworkers)
{
    rg_dsegd *d;
    rg_status st = dsegd_alloc(&d, out, segd, nworkers, "rg_segd_split_elems");
    if (st != RG_OK)
        return st;
    const int64_t *o = segd->offsets;
    size_t nsegs = segd->nsegs;
    int64_t n = o[nsegs];
    for (size_t w = 0; w < nworkers; w++) {
        rg_segd_part *p = &d->parts[w];
        p->first_elem = share_begin(n, w, nworkers);
        p->nelems = share_begin(n, w + 1, nworkers) - p->first_elem;
        p->first_seg = w == 0 || nsegs == 0 ? 0 : last_at_most(o, 0, nsegs - 1, p->first_elem);
        p->first_offset = nsegs == 0 ? 0 : p->first_elem - o[p->first_seg];
    }
    for (size_t w = 0; w < nworkers; w++) {
        rg_segd_part *p = &d->parts[w];
        size_t last_excl = nsegs; /* one past the last segment with a piece here */
        if (w + 1 < nworkers) {
            const rg_segd_part *next = &d->parts[w + 1];
            last_excl = next->first_seg + (next->first_offset > 0 ? 1 : 0);
        }
        p->npieces = last_excl > p->first_seg ? last_excl - p->first_seg : 0;
    }
    *out = d;
    return RG_OK;
}

void rg_dsegd_free(rg_dsegd *dsegd)
{
    free(dsegd);
}

size_t rg_dsegd_nworkers(const rg_dsegd *dsegd)
{
    return dsegd ? dsegd->nworkers : 0;
}

static rg_status check_worker(const rg_dsegd *d, size_t worker, const void *dst, const char *fn)
{
    if (!d)
        return RG_EINVAL;
    if (!dst)
        return rg_set_error(d->segd->ctx, RG_EINVAL, "%s: the output is NULL", fn);
    if (worker >= d->nworkers)
        return rg_set_error(d->segd->ctx, RG_ERANGE, "%s: worker %zu of %zu", fn, worker,
                            d->nworkers);
    return RG_OK;
}

rg_status rg_dsegd_part(rg_segd_part *part, const rg_dsegd *dsegd, size_t worker)
{
    rg_status st = check_worker(dsegd, worker, part, "rg_dsegd_part");
    if (st == RG_OK)
        *part = dsegd->parts[worker];
    return st;
}

/* Piece j of a part: its segment clipped to the part's elements. */
static int64_t piece_length(const int64_t *o, const rg_segd_part *p, size_t j)
{
    size_t seg = p->first_seg + j;
    int64_t lo = o[seg] > p->first_elem ? o[seg] : p->first_elem;
    int64_t end = p->first_elem + p->nelems;
    int64_t hi = o[seg + 1] < end ? o[seg + 1] : end;
    return hi > lo ? hi - lo : 0;
}

rg_status rg_dsegd_lengths(int64_t *lengths, const rg_dsegd *dsegd, size_t worker)
{
    rg_status st = check_worker(dsegd, worker, lengths, "rg_dsegd_lengths");
    if (st != RG_OK)
        return st;
    const rg_segd_part *p = &dsegd->parts[worker];
    for (size_t j = 0; j < p->npieces; j++)
        lengths[j] = piece_length(dsegd->segd->offsets, p, j);
    return RG_OK;
}

rg_status rg_dsegd_join(rg_segd **out, const rg_dsegd *dsegd)
{
    static const char fn[] = "rg_dsegd_join";
    if (!dsegd)
        return RG_EINVAL;
    rg_context *ctx = dsegd->segd->ctx;
    if (!out)
        return rg_set_error(ctx, RG_EINVAL, "%s: out is NULL", fn);
    size_t total = 0;
    for (size_t w = 0; w < dsegd->nworkers; w++)
        total += dsegd->parts[w].npieces;
    rg_segd *d;
    rg_status st = segd_alloc(&d, ctx, total, fn);
    if (st != RG_OK)
        return st;
    size_t k = 0;
    int64_t at = 0;
    for (size_t w = 0; w < dsegd->nworkers; w++) {
        const rg_segd_part *p = &dsegd->parts[w];
        for (size_t j = 0; j < p->npieces; j++, k++) {
            d->lengths[k] = piece_length(dsegd->segd->offsets, p, j);
            d->offsets[k + 1] = at += d->lengths[k];
        }
    }
    *out = d;
    return RG_OK;
}

/* Pieces of one segment, wherever they lie, add up to its length. */
rg_status rg_dsegd_glue(rg_segd **out, const rg_dsegd *dsegd)
{
    static const char fn[] = "rg_dsegd_glue";
    if (!dsegd)
        return RG_EINVAL;
    rg_context *ctx = dsegd->segd->ctx;
    if (!out)
        return rg_set_error(ctx, RG_EINVAL, "%s: out is NULL", fn);
    size_t nsegs = 0;
    for (size_t w = 0; w < dsegd->nworkers; w++) {
        const rg_segd_part *p = &dsegd->parts[w];
        if (p->npieces > 0 && p->first_seg + p->npieces > nsegs)
            nsegs = p->first_seg + p->npieces;
    }
    rg_segd *d;
    rg_status st = segd_alloc(&d, ctx, nsegs, fn);
    if (st != RG_OK)
        return st;
    /* A piece of a segment whose length is written already (one cut at a
     * part's start) adds to it; the others store theirs.  Segments between
     * parts that no piece covers would be empty (the splits leave none). */
    const int64_t *o = dsegd->segd->offsets;
    size_t done = 0; /* lengths [0, done) are written */
    for (size_t w = 0; w < dsegd->nworkers; w++) {
        const rg_segd_part *p = &dsegd->parts[w];
        if (p->npieces == 0)
            continue;
        size_t first = p->first_seg, j = 0;
        for (; j < p->npieces && first + j < done; j++)
            d->lengths[first + j] += piece_length(o, p, j);
        while (done < first + j)
            d->lengths[done++] = 0;
        for (; j < p->npieces; j++)
            d->lengths[first + j] = piece_length(o, p, j);
        if (done < first + j)
            done = first + j;
    }
    int64_t at = 0;
    for (size_t i = 0; i < nsegs; i++)
        d->offsets[i + 1] = at += d->lengths[i];
    *out = d;
    return RG_OK;
}
