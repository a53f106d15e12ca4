/* parents.cl — for every element its segment id, local index or segment start, by four strategies. */

/* Build options: -DOFF_T=int|long (offsets), -DOUT_T=int|long (output),
 * -DVT=merge-path steps per work-item per tile.
 * `kind` is a run-time argument rather than a build option so that one
 * program serves parents, local index and starts (fewer cold builds).
 * Offsets are valid here (the host checked them): o[0] = 0, never
 * decreasing, o[nsegs] = nelems.  Loops stride by the global size and index
 * in 64 bits. */

#define KIND_PARENTS 0
#define KIND_LOCAL 1
#define KIND_STARTS 2

/* Element k lies in segment seg, which starts at start. */
void emit(global OUT_T *out, ulong k, ulong seg, long start, int kind)
{
    long v = kind == KIND_PARENTS ? (long)seg : kind == KIND_LOCAL ? (long)k - start : start;
    out[k] = (OUT_T)v;
}

/* One work-item per element: the largest i < nsegs with o[i] <= k. */
kernel void seg_bsearch(global const OFF_T *o, ulong nsegs, ulong nelems, int kind,
                        global OUT_T *out)
{
    for (ulong k = get_global_id(0); k < nelems; k += get_global_size(0)) {
        ulong lo = 0, hi = nsegs; /* o[lo] <= k < o[hi] */
        while (hi - lo > 1) {
            ulong mid = lo + (hi - lo) / 2;
            if ((long)o[mid] <= (long)k)
                lo = mid;
            else
                hi = mid;
        }
        emit(out, k, lo, o[lo], kind);
    }
}

/* One work-item per segment, writing all of its elements. */
kernel void seg_per_segment(global const OFF_T *o, ulong nsegs, int kind, global OUT_T *out)
{
    for (ulong i = get_global_id(0); i < nsegs; i += get_global_size(0)) {
        long start = o[i], end = o[i + 1];
        for (long k = start; k < end; k++)
            emit(out, (ulong)k, i, start, kind);
    }
}

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
