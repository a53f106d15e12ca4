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
 * waits on another, so nothing assumes forward progress between
 * work-groups.  The input is read twice.  Where the host need not know
 * the count before the write (room for every row, or a bound), nz_chained
 * reads it once, with a look-back that only waits on groups that have
 * started.  All indexing is 64-bit. */

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

/* One tile of group * VT elements [base, min(base + group * VT, end)):
 * a coalesced load of the flags into local memory, then each work-item
 * takes VT consecutive flags so that one group scan gives every non-zero
 * its rank in the tile.  The tile's flat indices go to index in rank order;
 * returns how many. */
long tile_rank(global const T *in, ulong base, ulong end, T mask, local long *buf,
               local uchar *flags, local long *index)
{
    size_t lid = get_local_id(0), group = get_local_size(0);
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
    return total;
}

/* Rows first .. first + count - 1 of out from index, neighbouring
 * work-items on neighbouring rows (a work-item writing its own non-zeros
 * would store VT rows apart); rows at or past `rows` (the room in out) are
 * not written: the host compares the total with its bound afterwards. */
void tile_emit(global long *out, long first, long count, ulong rows, local const long *index,
               local const long *shape, uint ndim)
{
    for (long r = get_local_id(0); r < count && (ulong)(first + r) < rows; r += get_local_size(0))
        emit(out, first + r, index[r], shape, ndim);
}

/* Writes the rows of group g's non-zeros, in order, from the number of
 * non-zeros before its chunk (counts of nz_count), tile by tile. */
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
        long total = tile_rank(in, base, end, mask, buf, flags, index);
        tile_emit(out, carry, total, rows, index, lshape, ndim);
        carry += total;
        barrier(CLK_LOCAL_MEM_FENCE); /* the next tile overwrites flags and index */
    }
}

/* Single pass (decoupled look-back): every work-group takes the next tile
 * by a ticket, so the tiles before its own are held by groups that have
 * already started, and only those are waited on: no group waits on one
 * that may never be scheduled.  status[t] (zeroed by the host, as is the
 * ticket) becomes AGGREGATE | the tile's count once it is known, then
 * INCLUSIVE | the non-zeros up to its end once the tiles before are
 * summed: the group walks back over the aggregates to the first inclusive
 * value.  Each word is one 64-bit store, flag and value together.  The
 * input is read once, against twice for nz_count + nz_write; the total is
 * status[ntiles - 1]'s value. */
#define STATUS_AGGREGATE (1UL << 62)
#define STATUS_INCLUSIVE (2UL << 62)
#define STATUS_VALUE(s) ((long)((s) & ((1UL << 62) - 1)))

kernel void nz_chained(global const T *in, ulong n, T mask, global const long *shape, uint ndim,
                       ulong rows, global long *out, global volatile uint *ticket,
                       global volatile ulong *status, local long *buf, local uchar *flags,
                       local long *lshape, local long *index)
{
    size_t lid = get_local_id(0), group = get_local_size(0);
    for (uint d = lid; d < ndim; d += group)
        lshape[d] = shape[d];
    if (lid == 0)
        buf[0] = atomic_inc(ticket);
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong t = (ulong)buf[0], base = t * group * VT;
    barrier(CLK_LOCAL_MEM_FENCE); /* buf is the scan's next */
    long total = tile_rank(in, base, n, mask, buf, flags, index);
    if (lid == 0) {
        long before = 0;
        if (t > 0) {
            status[t] = STATUS_AGGREGATE | (ulong)total;
            for (ulong p = t - 1;; p--) {
                ulong s;
                do
                    s = status[p];
                while (s == 0);
                before += STATUS_VALUE(s);
                if (s & STATUS_INCLUSIVE)
                    break;
            }
        }
        status[t] = STATUS_INCLUSIVE | (ulong)(before + total);
        buf[0] = before;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    tile_emit(out, buf[0], total, rows, index, lshape, ndim);
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
