/* parents.cl — for every element its segment id, local index or segment start, by four strategies
 * (per segment: one work-item per segment on CPUs, blocks of segments on GPUs). */

/* Build options: -DOFF_T=int|long (offsets), -DOUT_T=int|long (output),
 * -DVT=merge-path steps per work-item per tile, -DPIECE=the length from
 * which seg_pieces shares a segment's writes across work-groups,
 * -DKERNELS=the kernels the program holds, a sum of the KERNELS_* below
 * (default all): a program per strategy, because PoCL compiles every
 * kernel of a program when ragged asks for its binary (for the disk
 * cache): all of them took 2.4 s there, seg_per_segment alone 0.14 s.
 * `kind` is a run-time argument rather than a build option so that one
 * program serves parents, local index and starts (fewer cold builds).
 * Offsets are valid here (the host checked them): o[0] = 0, never
 * decreasing, o[nsegs] = nelems.  Loops stride by the global size and index
 * in 64 bits. */

#define KIND_PARENTS 0
#define KIND_LOCAL 1
#define KIND_STARTS 2

#define KERNELS_BSEARCH 1
#define KERNELS_SEGMENT 2 /* seg_per_segment */
#define KERNELS_STAGED 4  /* seg_staged and seg_pieces: per segment on GPUs */
#define KERNELS_FLOOD 8
#define KERNELS_MERGE 16
#ifndef KERNELS
#define KERNELS 31
#endif

/* Element k lies in segment seg, which starts at start. */
void emit(global OUT_T *out, ulong k, ulong seg, long start, int kind)
{
    long v = kind == KIND_PARENTS ? (long)seg : kind == KIND_LOCAL ? (long)k - start : start;
    out[k] = (OUT_T)v;
}

/* The segment holding element k (< nelems): the largest s < nsegs with
 * o[s] <= k, so never an empty one. */
ulong segment_of(global const OFF_T *o, ulong nsegs, long k)
{
    ulong lo = 0, hi = nsegs; /* o[lo] <= k < o[hi] */
    while (hi - lo > 1) {
        ulong mid = lo + (hi - lo) / 2;
        if ((long)o[mid] <= k)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

#if KERNELS & KERNELS_BSEARCH
/* One work-item per element. */
kernel void seg_bsearch(global const OFF_T *o, ulong nsegs, ulong nelems, int kind,
                        global OUT_T *out)
{
    for (ulong k = get_global_id(0); k < nelems; k += get_global_size(0)) {
        ulong seg = segment_of(o, nsegs, (long)k);
        emit(out, k, seg, o[seg], kind);
    }
}

#endif

#if KERNELS & KERNELS_SEGMENT
/* One work-item per segment, writing all of its elements. */
kernel void seg_per_segment(global const OFF_T *o, ulong nsegs, int kind, global OUT_T *out)
{
    for (ulong i = get_global_id(0); i < nsegs; i += get_global_size(0)) {
        long start = o[i], end = o[i + 1];
        for (long k = start; k < end; k++)
            emit(out, (ulong)k, i, start, kind);
    }
}

#endif

#if KERNELS & KERNELS_STAGED
/* Per segment on GPUs.  A work-group takes `group` consecutive segments at
 * a time, a block.  Where the block's elements fit in segof (cap of them),
 * each work-item marks its segment's elements there with the segment's
 * number in the block, then the group writes the block's elements from
 * there, neighbouring work-items storing neighbouring elements: in
 * seg_per_segment each work-item stores its own stretch, so a warp's store
 * spreads over up to 32 stretches.  No search and no second pass, as the
 * merge path needs.  A block too big for segof: segments of up to ALONE
 * elements are written by their own work-item, longer ones by the whole
 * group one after another, each only up to its first multiple of PIECE
 * (seg_pieces writes the rest, across work-groups: one segment would
 * otherwise hold one group for all of its length). */
#define ALONE 32
kernel void seg_staged(global const OFF_T *o, ulong nsegs, int kind, global OUT_T *out,
                       uint cap, local ushort *segof, local long *sstart, local uint *list)
{
    uint lid = get_local_id(0), group = get_local_size(0);
    local uint *nlong = list + group; /* list holds group + 1 */
    for (ulong b0 = get_group_id(0) * (ulong)group; b0 < nsegs;
         b0 += get_num_groups(0) * (ulong)group) {
        ulong s = b0 + lid, last = min(b0 + group, nsegs);
        long base = o[b0], top = o[last];
        long start = s < last ? (long)o[s] : top, end = s < last ? (long)o[s + 1] : top;
        bool staged = top - base <= (long)cap; /* the same for the whole group */
        barrier(CLK_LOCAL_MEM_FENCE); /* the previous block is done with local memory */
        sstart[lid] = start;
        if (lid == 0)
            *nlong = 0;
        if (staged) {
            for (long k = start; k < end; k++)
                segof[k - base] = (ushort)lid;
        } else if (end - start <= ALONE) {
            for (long k = start; k < end; k++)
                emit(out, (ulong)k, s, start, kind);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (staged) {
            uint n = (uint)(top - base);
            for (uint j = lid; j < n; j += group) {
                uint sj = segof[j];
                emit(out, (ulong)base + j, b0 + sj, sstart[sj], kind);
            }
            continue;
        }
        if (end - start > ALONE)
            list[atomic_inc(nlong)] = lid; /* in any order: each is written whole */
        barrier(CLK_LOCAL_MEM_FENCE);
        uint m = *nlong;
        for (uint i = 0; i < m; i++) {
            uint sj = list[i];
            long first = sstart[sj], stop = sj + 1 < group ? sstart[sj + 1] : top;
            if (stop - first >= PIECE)
                stop = min(stop, (first + PIECE - 1) / PIECE * PIECE);
            for (long k = first + lid; k < stop; k += group)
                emit(out, (ulong)k, b0 + sj, first, kind);
        }
    }
}

/* Segments of PIECE elements or more from their first multiple of PIECE
 * on (seg_staged writes the part before): a work-group per piece of PIECE
 * elements at a time writes the piece's part of the segment holding its
 * first element, if that segment is long. */
kernel void seg_pieces(global const OFF_T *o, ulong nsegs, ulong nelems, int kind,
                       global OUT_T *out)
{
    ulong npieces = (nelems + PIECE - 1) / PIECE;
    for (ulong p = get_group_id(0); p < npieces; p += get_num_groups(0)) {
        long lo = (long)(p * PIECE);
        ulong seg = segment_of(o, nsegs, lo);
        long start = o[seg], end = o[seg + 1];
        if (end - start < PIECE)
            continue;
        long stop = min(end, lo + PIECE);
        for (long k = lo + (long)get_local_id(0); k < stop; k += (long)get_local_size(0))
            emit(out, (ulong)k, seg, start, kind);
    }
}

#endif

#if KERNELS & KERNELS_FLOOD
/* Flood, step 1 (out already zero): each non-empty segment marks its first
 * element, with its id (parents) or its start (local index, starts); a max-scan
 * then floods each mark over the segment.  Empty segments share their start
 * with a later one and must not write: one writer per position. */
kernel void flood_scatter(global const OFF_T *o, ulong nsegs, int kind, global OUT_T *out)
{
    for (ulong i = get_global_id(0); i < nsegs; i += get_global_size(0)) {
        long start = o[i];
        if (start < (long)o[i + 1])
            out[start] = (OUT_T)(kind == KIND_PARENTS ? (long)i : start);
    }
}

/* Flood, last step of the local index: out holds starts, make it k - start. */
kernel void flood_local(global OUT_T *out, ulong nelems)
{
    for (ulong k = get_global_id(0); k < nelems; k += get_global_size(0))
        out[k] = (OUT_T)((long)k - (long)out[k]);
}

#endif

#if KERNELS & KERNELS_MERGE
/* Merge path over A = o[1..nsegs] (segment ends) and B = 0..nelems-1 (elements),
 * ends first on ties: taking end i means every later element lies past segment
 * i.  Returns how many ends lie among the first diag steps of the merge. */
ulong merge_path_search(global const OFF_T *o, ulong nsegs, ulong nelems, ulong diag)
{
    ulong lo = diag > nelems ? diag - nelems : 0;
    ulong hi = min(diag, nsegs);
    while (lo < hi) {
        ulong mid = lo + (hi - lo) / 2;
        if ((long)o[mid + 1] <= (long)(diag - 1 - mid))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Where every tile of `tile` merge-path steps starts: bounds[t] = the
 * segment ends among the first t * tile steps, for t = 0 .. ntiles (the last
 * is nsegs).  One work-item per tile, so the binary searches all run at
 * once instead of one after another inside each tile's work-group. */
kernel void seg_merge_bounds(global const OFF_T *o, ulong nsegs, ulong nelems, ulong tile,
                             global ulong *bounds)
{
    ulong steps = nsegs + nelems, ntiles = (steps + tile - 1) / tile;
    for (ulong t = get_global_id(0); t <= ntiles; t += get_global_size(0))
        bounds[t] = merge_path_search(o, nsegs, nelems, min(t * tile, steps));
}

/* Load-balanced search: the merge path (nsegs + nelems steps) is cut into
 * tiles of `tile` = VT * (group size) steps, one work-group per tile at a
 * time, so the work is the same whatever the lengths (one huge segment,
 * millions of empty ones).  The group takes where its tile starts and ends
 * on the path from bounds and copies the tile's segment ends into local
 * memory, relative to the tile's first element (they fit an int there).
 * Each work-item then finds where its own VT steps start by one binary
 * search and walks them: an element step records the element's segment
 * (relative to the tile's first) in local memory.  Last, the group writes
 * the tile's elements from there, neighbouring work-items writing
 * neighbouring elements, so the stores coalesce.  One search per VT steps
 * instead of one per element, in 32-bit arithmetic: a per-element search
 * in 64 bits made this kernel bound by its instructions on GPUs. */
kernel void seg_merge_path(global const OFF_T *o, ulong nsegs, ulong nelems, ulong tile,
                           global const ulong *bounds, int kind, global OUT_T *out,
                           local int *ends, local uint *segof)
{
    ulong steps = nsegs + nelems, ntiles = (steps + tile - 1) / tile;
    uint lid = get_local_id(0), lsize = get_local_size(0);
    for (ulong t = get_group_id(0); t < ntiles; t += get_num_groups(0)) {
        ulong d0 = t * tile, s0 = bounds[t], s1 = bounds[t + 1];
        ulong k0 = d0 - s0;
        /* The tile's ns segment ends (of segments s0 .. s1-1) and nk
         * elements (k0 .. k0+nk-1, in segments s0 .. s1): o[s0] <= k0 <= o[s0+1]
         * and o[s1] <= k0 + nk, so ends[j] = o[s0+1+j] - k0 lies in [0, nk]. */
        uint ns = (uint)(s1 - s0), nk = (uint)(min(d0 + tile, steps) - d0) - ns;
        barrier(CLK_LOCAL_MEM_FENCE); /* the previous tile is done with ends and segof */
        for (uint j = lid; j < ns; j += lsize)
            ends[j] = (int)((long)o[s0 + 1 + j] - (long)k0);
        barrier(CLK_LOCAL_MEM_FENCE);
        /* Steps d .. dend-1 of the tile are this work-item's; e of the
         * tile's ends lie among the first d (the merge-path search). */
        uint d = min(lid * VT, ns + nk), dend = min(d + VT, ns + nk);
        uint lo = d > nk ? d - nk : 0, hi = min(d, ns);
        while (lo < hi) {
            uint mid = (lo + hi) / 2;
            if (ends[mid] <= (int)(d - 1 - mid))
                lo = mid + 1;
            else
                hi = mid;
        }
        uint e = lo, k = d - lo;
        for (; d < dend; d++) {
            if (e < ns && ends[e] <= (int)k) { /* ends first on ties */
                e++;
            } else {
                segof[k] = e;
                k++;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        long first = kind == KIND_PARENTS ? 0 : (long)o[s0]; /* where segment s0 starts */
        for (uint j = lid; j < nk; j += lsize) {
            uint sj = segof[j];
            long start = sj == 0 ? first : (long)k0 + ends[sj - 1];
            emit(out, k0 + j, s0 + sj, start, kind);
        }
    }
}
#endif
