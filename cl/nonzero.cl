/* nonzero.cl — non-zero elements: count per chunk, then each chunk writes its coordinates; per-segment positions. */

/* Build options: -DT=uchar|ushort|uint|ulong -DVT=n for the compaction
 * kernels (elements are read as unsigned integers of their size; VT is
 * elements per work-item per tile), or -DOFF_T=int|long for the segment
 * kernels.  Element x is non-zero when (x & mask) != 0: the host picks the
 * mask per dtype (all ones for integers and bool, all but the sign bit for
 * IEEE floats, which is x != 0 even where subnormals would be flushed).  So
 * one program serves all dtypes of one size.
 *
 * Reduce-then-scan: group g owns the chunk [g * chunk, min((g+1) * chunk, n)).
 * nz_count writes each chunk's count; nz_write adds up the counts of the
 * chunks before its own and writes its rows from there.  No group ever
 * waits on another, so nothing assumes forward progress between work-groups.  The input is read
 * twice; a single pass would need either a look-back across groups or a
 * worst-case buffer of 8-byte indices, which is never smaller than the
 * input.  All indexing is 64-bit. */

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

#define NONZERO(x) (((x) & mask) != 0)

/* counts[g] = the non-zeros of group g's chunk.  VT loads per work-item
 * per step, independent of each other, so that enough of them are in
 * flight to cover the memory's latency. */
kernel void nz_count(global const T *in, ulong n, ulong chunk, T mask, global long *counts,
                     local long *buf)
{
    size_t lid = get_local_id(0), group = get_local_size(0);
    ulong begin = get_group_id(0) * chunk;
    ulong end = min(begin + chunk, n);
    long c = 0;
    for (ulong base = begin; base < end; base += group * VT)
        for (uint j = 0; j < VT; j++) {
            ulong i = base + j * group + lid;
            c += i < end && NONZERO(in[i]);
        }
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

/* Writes the rows of group g's non-zeros, in order, from the number of
 * non-zeros before its chunk.  Rows at or past `rows` (the room in out) are
 * not written: the host compares the total with its bound afterwards.
 * Tiles of group * VT elements: a coalesced load of the flags into local
 * memory, then each work-item takes VT consecutive flags so that one group
 * scan gives every non-zero its rank in the tile.  The tile's flat indices
 * go to local memory in rank order, and the group writes their rows from
 * there, neighbouring work-items on neighbouring rows (a work-item writing
 * its own non-zeros would store VT rows apart). */
kernel void nz_write(global const T *in, ulong n, ulong chunk, T mask,
                     global const long *counts, global const long *shape, uint ndim,
                     ulong rows, global long *out, local long *buf, local uchar *flags,
                     local long *lshape, local long *index)
{
    size_t lid = get_local_id(0), group = get_local_size(0), g = get_group_id(0);
    for (uint d = lid; d < ndim; d += group)
        lshape[d] = shape[d];
    long before = 0; /* the chunks before g, any number of them */
    for (size_t c = lid; c < g; c += group)
        before += counts[c];
    long carry; /* the first barrier of the scan also publishes lshape */
    group_exclusive_sum(before, buf, &carry);
    ulong begin = g * chunk;
    ulong end = min(begin + chunk, n);
    for (ulong base = begin; base < end; base += group * VT) {
        for (uint j = 0; j < VT; j++) {
            ulong i = base + j * group + lid;
            flags[j * group + lid] = i < end && NONZERO(in[i]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        long c = 0;
        for (uint j = 0; j < VT; j++)
            c += flags[lid * VT + j];
        long total;
        long rank = group_exclusive_sum(c, buf, &total);
        for (uint j = 0; j < VT; j++)
            if (flags[lid * VT + j])
                index[rank++] = (long)(base + lid * VT + j);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (long r = lid; r < total && (ulong)(carry + r) < rows; r += group)
            emit(out, carry + r, index[r], lshape, ndim);
        carry += total;
        barrier(CLK_LOCAL_MEM_FENCE); /* the next tile overwrites flags and index */
    }
}

#endif /* T */

#ifdef OFF_T

/* seg_off[i] = the number of positions below o[i], for i <= nsegs (positions ascend). */
kernel void nz_seg_offsets(global const OFF_T *o, ulong nsegs, global const long *pos,
                           ulong nnz, global long *seg_off)
{
    for (ulong i = get_global_id(0); i <= nsegs; i += get_global_size(0)) {
        long target = o[i];
        ulong lo = 0, hi = nnz;
        while (lo < hi) {
            ulong mid = lo + (hi - lo) / 2;
            if (pos[mid] < target)
                lo = mid + 1;
            else
                hi = mid;
        }
        seg_off[i] = (long)lo;
    }
}

/* pos[j] -= the start of the segment holding it: the largest i < nsegs with o[i] <= pos[j]. */
kernel void nz_seg_positions(global const OFF_T *o, ulong nsegs, global long *pos, ulong nnz)
{
    for (ulong j = get_global_id(0); j < nnz; j += get_global_size(0)) {
        long k = pos[j];
        ulong lo = 0, hi = nsegs; /* o[lo] <= k < o[hi] */
        while (hi - lo > 1) {
            ulong mid = lo + (hi - lo) / 2;
            if ((long)o[mid] <= k)
                lo = mid;
            else
                hi = mid;
        }
        pos[j] = k - (long)o[lo];
    }
}

#endif /* OFF_T */
