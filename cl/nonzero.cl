/* nonzero.cl — non-zero elements: count per chunk, then each chunk writes its coordinates; per-segment positions. */

/* Build options: -DT=uchar|ushort|uint|ulong for the compaction kernels
 * (elements are read as unsigned integers of their size) with
 * -DWORD_PER_ITEM=0|1 (how nz_count reads), or -DOFF_T=int|long
 * for the segment kernels.  Element x is non-zero when (x & mask) != 0: the
 * host picks the mask per dtype (all ones for integers and bool, all but the
 * sign bit for IEEE floats, which is x != 0 even where subnormals would be
 * flushed).  So one program serves all dtypes of one size.
 *
 * Reduce-then-scan over a bitmask: group g owns the chunk [g * chunk,
 * min((g+1) * chunk, n)), a whole number of 32-element words.  nz_count
 * reads the input once, writes one bit per element (word w holds elements
 * 32w .. 32w+31, bit j for element 32w + j) and each chunk's count; nz_write
 * adds up the counts of the chunks before its own and writes its rows from
 * the bitmask alone.  So the input is read once and the second pass reads a
 * 64th of it (float64): on an H100 at 1% non-zero, 0.08 ms for the write
 * pass against 0.5 ms for the count.  No group ever waits on another, so nothing assumes forward
 * progress between work-groups.  All indexing of elements is 64-bit. */

#define WORD 32

/* Exclusive sum of x over the work-group (Hillis-Steele in buf, one slot per
 * work-item); *total receives the group's sum. */
long group_exclusive_sum(long x, local long *buf, long *total)
{
    size_t lid = get_local_id(0), n = get_local_size(0);
    buf[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t d = 1; d < n; d <<= 1) {
        long y = lid >= d ? buf[lid - d] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        buf[lid] += y;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    long before = lid > 0 ? buf[lid - 1] : 0;
    *total = buf[n - 1];
    barrier(CLK_LOCAL_MEM_FENCE); /* buf is reused next */
    return before;
}

#ifdef T

#define NONZERO(x) ((uint)(((x) & mask) != 0))

#if WORD_PER_ITEM
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define T8 CAT(T, 8)

/* The bits of 8 elements, from bit s on. */
uint bits8(T8 v, T mask, uint s)
{
    return (NONZERO(v.s0) | NONZERO(v.s1) << 1 | NONZERO(v.s2) << 2 | NONZERO(v.s3) << 3 |
            NONZERO(v.s4) << 4 | NONZERO(v.s5) << 5 | NONZERO(v.s6) << 6 | NONZERO(v.s7) << 7)
           << s;
}
#endif

/* bits[w] for the words of group g's chunk and counts[g] = its non-zeros.
 *
 * On CPU devices (-DWORD_PER_ITEM=1) each work-item makes whole words, 32
 * consecutive elements read by four vload8: PoCL runs that 1.5x to 2x faster
 * than the tiles below.
 *
 * Elsewhere a tile is 32 elements per work-item, read coalesced: in pass j
 * work-item lid reads element j * group + lid of the tile, so the 32
 * work-items of a block of 32 read 32 consecutive elements, one word, and
 * each work-item gathers its passes in a column word (bit j: pass j).  The
 * 32 column words of a block, transposed through local memory, are its 32
 * words of the bitmask.  (Each work-item reading a whole word itself ran at
 * a third of a copy's speed on an H100: every load of a warp touched 32
 * scattered pieces of memory.)  The group size is a multiple of 32. */
kernel void nz_count(global const T *in, ulong n, ulong chunk, T mask, global uint *bits,
                     global long *counts, local long *buf, local uint *cols)
{
    uint lid = get_local_id(0), group = get_local_size(0);
    ulong begin = get_group_id(0) * chunk;
    ulong end = min(begin + chunk, n);
    long c = 0;
#if WORD_PER_ITEM
    for (ulong w = begin / WORD + lid; w * WORD < end; w += group) {
        uint x = 0;
        if (w * WORD + WORD <= end) {
            for (uint j = 0; j < WORD / 8; j++)
                x |= bits8(vload8(w * (WORD / 8) + j, in), mask, 8 * j);
        } else { /* the last word of the input */
            for (uint j = 0; w * WORD + j < end; j++)
                x |= NONZERO(in[w * WORD + j]) << j;
        }
        bits[w] = x;
        c += popcount(x);
    }
#else
    uint lane = lid % WORD, block = lid / WORD;
    for (ulong base = begin; base < end; base += (ulong)group * WORD) {
        uint col = 0;
        global const T *tile = in + base + lid;
        if (base + (ulong)group * WORD <= end) {
            for (uint j = 0; j < WORD; j++) /* independent loads */
                col |= NONZERO(tile[j * group]) << j;
        } else { /* the input's last tile */
            for (uint j = 0; j < WORD; j++)
                if (base + j * group + lid < end)
                    col |= NONZERO(tile[j * group]) << j;
        }
        c += popcount(col);
        cols[lid] = col;
        barrier(CLK_LOCAL_MEM_FENCE);
        /* Tile element j * group + block * 32 + b is bit j of column word
         * block * 32 + b, and bit b of word j * (group / 32) + block:
         * work-item (block, lane) makes that word for j = lane. */
        uint word = 0;
        for (uint b = 0; b < WORD; b++)
            word |= (cols[block * WORD + b] >> lane & 1) << b;
        ulong w = base / WORD + lane * (group / WORD) + block;
        if (w * WORD < end)
            bits[w] = word;
        barrier(CLK_LOCAL_MEM_FENCE); /* the next tile overwrites cols */
    }
#endif
    long total;
    group_exclusive_sum(c, buf, &total);
    if (lid == 0)
        counts[get_group_id(0)] = total;
}

/* Row r of out = the row-major coordinates of flat index k (1-D: k itself). */
void emit(global long *out, long r, long k, local const long *shape, uint ndim)
{
    global long *row = out + r * (long)ndim;
    for (uint d = ndim - 1; d > 0; d--) {
        long q = k / shape[d];
        row[d] = k - q * shape[d];
        k = q;
    }
    row[0] = k;
}

/* Where a tile's p-th non-zero is kept in `staged`.  A work-item stages its
 * own word's non-zeros, p = its rank and on; in a dense tile the ranks of
 * neighbouring work-items are 32 apart, and without the swizzle every one
 * of them would hit the same bank.  It only permutes within 64 entries, and
 * 32 consecutive p (the copy-out's) stay in distinct banks. */
#define SWIZZLE(p) ((p) ^ ((((p) >> 5) & 31) << 1))

/* Writes the rows of group g's non-zeros, in order, from the number of
 * non-zeros before its chunk.  Rows at or past `rows` (the room in out) are
 * not written: the host compares the total with its bound afterwards.
 * Tiles of one word per work-item: one group scan ranks the words, each
 * work-item stages the positions (in the tile) of its word's non-zeros in
 * local memory in rank order, and the group writes their rows from there,
 * neighbouring work-items on neighbouring rows (a work-item writing its own
 * non-zeros would store rows apart).  A tile is at most 256 * 32 elements,
 * so a position fits a ushort. */
kernel void nz_write(global const uint *bits, ulong n, ulong chunk, global const long *counts,
                     global const long *shape, uint ndim, ulong rows, global long *out,
                     local long *buf, local ushort *staged, local long *lshape)
{
    size_t lid = get_local_id(0), group = get_local_size(0), g = get_group_id(0);
    for (uint d = lid; d < ndim; d += group)
        lshape[d] = shape[d];
    long before = 0; /* the chunks before g, any number of them */
    for (size_t c = lid; c < g; c += group)
        before += counts[c];
    long carry; /* the first barrier of the scan also publishes lshape */
    group_exclusive_sum(before, buf, &carry);
    ulong wbegin = g * chunk / WORD;
    ulong wend = (min(g * chunk + chunk, n) + WORD - 1) / WORD;
    for (ulong base = wbegin; base < wend; base += group) {
        uint x = base + lid < wend ? bits[base + lid] : 0;
        long total;
        uint p = (uint)group_exclusive_sum(popcount(x), buf, &total);
        for (; x != 0; x &= x - 1, p++) /* lowest set bit first */
            staged[SWIZZLE(p)] = (ushort)(lid * WORD + 31 - clz(x & (0u - x)));
        barrier(CLK_LOCAL_MEM_FENCE);
        long first = (long)(base * WORD);
        for (long r = lid; r < total && (ulong)(carry + r) < rows; r += group)
            emit(out, carry + r, first + staged[SWIZZLE(r)], lshape, ndim);
        /* No barrier before the next tile overwrites staged: its scan's
         * barriers come first, and every work-item reaches them only
         * after its last read of staged here. */
        carry += total;
    }
}

#endif /* T */

#ifdef OFF_T

/* Per-segment positions as one merge of A = o[1 .. nsegs] (segment ends)
 * with B = pos[0 .. nnz) (ascending positions), ends first on ties: taking
 * end i means every later position lies past segment i, and the positions
 * taken before it are those below o[i + 1] (seg_off[i + 1]).  A position
 * taken while e ends lie behind is in segment e: it loses o[e].  As
 * parents' merge path (parents.cl): tiles of equal steps whatever the
 * lengths, each found first by a search of its own.  Returns how many ends
 * lie among the first diag steps. */
ulong nz_merge_search(global const OFF_T *o, ulong nsegs, global const long *pos, ulong nnz,
                      ulong diag)
{
    ulong lo = diag > nnz ? diag - nnz : 0;
    ulong hi = min(diag, nsegs);
    while (lo < hi) {
        ulong mid = lo + (hi - lo) / 2;
        if ((long)o[mid + 1] <= pos[diag - 1 - mid])
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* bounds[t] = the ends among the first t * tile steps, t = 0 .. ntiles. */
kernel void nz_seg_bounds(global const OFF_T *o, ulong nsegs, global const long *pos, ulong nnz,
                          ulong tile, global ulong *bounds)
{
    ulong steps = nsegs + nnz, ntiles = (steps + tile - 1) / tile;
    for (ulong t = get_global_id(0); t <= ntiles; t += get_global_size(0))
        bounds[t] = nz_merge_search(o, nsegs, pos, nnz, min(t * tile, steps));
}

/* One work-group per tile at a time.  The group stages the tile's ends and
 * positions in local memory; each work-item finds where its VT steps start
 * by a binary search there and walks them, writing seg_off at each end and
 * the local position of each position to global memory.  The staged values
 * stay as they are: other work-items of the group read them (their search,
 * and the position after their last end) while this one walks.  A tile
 * reads and writes only its own positions, and bounds were found before. */
kernel void nz_seg_merge(global const OFF_T *o, ulong nsegs, global long *pos, ulong nnz,
                         ulong tile, global const ulong *bounds, global long *seg_off,
                         local long *ends, local long *vals)
{
    ulong steps = nsegs + nnz, ntiles = (steps + tile - 1) / tile;
    uint lid = get_local_id(0), lsize = get_local_size(0);
    if (get_global_id(0) == 0)
        seg_off[0] = 0; /* no position lies below o[0] = 0 */
    for (ulong t = get_group_id(0); t < ntiles; t += get_num_groups(0)) {
        ulong d0 = t * tile, s0 = bounds[t], s1 = bounds[t + 1];
        ulong j0 = d0 - s0; /* the tile's first position */
        uint ns = (uint)(s1 - s0), nk = (uint)(min(d0 + tile, steps) - d0) - ns;
        barrier(CLK_LOCAL_MEM_FENCE); /* the previous tile is done with ends and vals */
        for (uint j = lid; j < ns; j += lsize)
            ends[j] = (long)o[s0 + 1 + j];
        for (uint j = lid; j < nk; j += lsize)
            vals[j] = pos[j0 + j];
        /* global too: other work-items of the group overwrite these positions next */
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        uint d = min(lid * VT, ns + nk), dend = min(d + VT, ns + nk);
        uint lo = d > nk ? d - nk : 0, hi = min(d, ns);
        while (lo < hi) {
            uint mid = (lo + hi) / 2;
            if (ends[mid] <= vals[d - 1 - mid])
                lo = mid + 1;
            else
                hi = mid;
        }
        uint e = lo, k = d - lo;
        /* the start of segment s0 + e: o[s0] for e = 0, else ends[e - 1] */
        long start = e == 0 ? (long)o[s0] : ends[e - 1];
        for (; d < dend; d++) {
            if (e < ns && (k == nk || ends[e] <= vals[k])) {
                seg_off[s0 + 1 + e] = (long)(j0 + k);
                start = ends[e];
                e++;
            } else {
                pos[j0 + k] = vals[k] - start;
                k++;
            }
        }
    }
}

#endif /* OFF_T */
