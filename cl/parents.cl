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

/* Load-balanced search: the merge path (nsegs + nelems steps) is cut into
 * pieces of per_item steps; each work-item finds where its piece starts, then
 * walks it, so the work is the same whatever the lengths (one huge segment,
 * millions of empty ones). */
kernel void seg_merge_path(global const OFF_T *o, ulong nsegs, ulong nelems, ulong per_item,
                           int kind, global OUT_T *out)
{
    ulong steps = nsegs + nelems;
    ulong pieces = (steps + per_item - 1) / per_item;
    for (ulong t = get_global_id(0); t < pieces; t += get_global_size(0)) {
        ulong diag = t * per_item, last = min(diag + per_item, steps);
        ulong seg = merge_path_search(o, nsegs, nelems, diag);
        ulong k = diag - seg;
        long start = o[seg];
        long end = seg < nsegs ? (long)o[seg + 1] : LONG_MAX;
        for (ulong step = diag; step < last; step++) {
            if (seg < nsegs && (k >= nelems || end <= (long)k)) {
                seg++; /* segment seg ends before element k */
                start = end;
                end = seg < nsegs ? (long)o[seg + 1] : LONG_MAX;
            } else if (k < nelems) {
                emit(out, k, seg, start, kind);
                k++;
            }
        }
    }
}
