/* parents.cl — for every element its segment id, local index or segment start, by four strategies. */

/* Build options: -DOFF_T=int|long (offsets), -DOUT_T=int|long (output).
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
 * tiles of `tile` steps, one work-group per tile at a time, so the work is
 * the same whatever the lengths (one huge segment, millions of empty ones).
 * The group takes where its tile starts and ends on the path from bounds,
 * copies the offsets of the segments it touches (at most tile + 1) into
 * local memory, then each work-item takes every lsize-th element of the
 * tile and finds its segment there by binary search: neighbouring
 * work-items write neighbouring elements, so the stores coalesce (a
 * work-item walking a run of the path alone would store with a stride of
 * the run's length). */
kernel void seg_merge_path(global const OFF_T *o, ulong nsegs, ulong nelems, ulong tile,
                           global const ulong *bounds, int kind, global OUT_T *out,
                           local long *so)
{
    ulong steps = nsegs + nelems, ntiles = (steps + tile - 1) / tile;
    ulong lid = get_local_id(0), lsize = get_local_size(0);
    for (ulong t = get_group_id(0); t < ntiles; t += get_num_groups(0)) {
        ulong d0 = t * tile, d1 = min(d0 + tile, steps);
        ulong s0 = bounds[t], s1 = bounds[t + 1];
        ulong k0 = d0 - s0, k1 = d1 - s1;
        /* elements k0 .. k1-1 lie in segments s0 .. min(s1, nsegs - 1), and
         * o[s0] <= k0: the segments before s0 ended before it.  A tile of
         * segment ends only (k0 == k1) still meets both barriers: every
         * work-item of a group must. */
        ulong count = k0 < k1 ? min(s1, nsegs - 1) - s0 + 1 : 0;
        barrier(CLK_LOCAL_MEM_FENCE); /* the previous tile is done with so */
        for (ulong j = lid; j < count; j += lsize)
            so[j] = (long)o[s0 + j];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (ulong k = k0 + lid; k < k1; k += lsize) {
            ulong lo = 0, hi = count; /* so[lo] <= k, and k < so[hi] where hi < count */
            while (hi - lo > 1) {
                ulong mid = lo + (hi - lo) / 2;
                if (so[mid] <= (long)k)
                    lo = mid;
                else
                    hi = mid;
            }
            emit(out, k, s0 + lo, so[lo], kind);
        }
    }
}
