/* scan.cl — inclusive scan by add or max in three passes (reduce, scan the partials, scan the chunks). */

/* Build options: -DIN_T and -DOUT_T (element types read and written),
 * -DSCAN_OP=1 (add) or 2 (max), -DVT=elements per work-item per tile.
 * Values are combined in long, which holds every index type.
 *
 * Reduce-then-scan: group g owns one contiguous chunk.  scan_reduce gives each
 * chunk's total, scan_partials turns the totals into each chunk's carry-in
 * (one work-group: there are at most as many chunks as work-items in a group),
 * scan_chunks scans each chunk from its carry-in.  No pass waits on another
 * work-group, so no forward-progress guarantee between groups is assumed. */

#define SCAN_ADD 1
#define SCAN_MAX 2

#if SCAN_OP == SCAN_ADD
#define IDENTITY 0L
#define OP(a, b) ((a) + (b))
#elif SCAN_OP == SCAN_MAX
#define IDENTITY LONG_MIN
#define OP(a, b) max((a), (b))
#else
#error "SCAN_OP must be 1 (add) or 2 (max)"
#endif

/* Exclusive scan of x over the work-group (Hillis-Steele in buf, one slot per
 * work-item); *total receives the whole group's reduction. */
long group_exclusive_scan(long x, local long *buf, long *total)
{
    size_t lid = get_local_id(0), n = get_local_size(0);
    buf[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t d = 1; d < n; d <<= 1) {
        long y = lid >= d ? buf[lid - d] : IDENTITY;
        barrier(CLK_LOCAL_MEM_FENCE);
        buf[lid] = OP(y, buf[lid]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    long before = lid > 0 ? buf[lid - 1] : IDENTITY;
    *total = buf[n - 1];
    barrier(CLK_LOCAL_MEM_FENCE); /* buf is reused next */
    return before;
}

/* partials[g] = the reduction of in[g*chunk .. min((g+1)*chunk, n)). */
kernel void scan_reduce(global const IN_T *in, ulong n, ulong chunk, global long *partials,
                        local long *buf)
{
    ulong begin = get_group_id(0) * chunk;
    ulong end = min(begin + chunk, n);
    long acc = IDENTITY;
    for (ulong i = begin + get_local_id(0); i < end; i += get_local_size(0))
        acc = OP(acc, (long)in[i]);
    long total;
    group_exclusive_scan(acc, buf, &total);
    if (get_local_id(0) == 0)
        partials[get_group_id(0)] = total;
}

/* partials[0 .. count) becomes its exclusive scan; one work-group, work-item
 * l taking partials [l * per_item, (l + 1) * per_item). */
kernel void scan_partials(global long *partials, ulong count, ulong per_item, local long *buf)
{
    ulong c = get_local_id(0) * per_item, cend = min(c + per_item, count);
    long acc = IDENTITY;
    for (ulong i = c; i < cend; i++)
        acc = OP(acc, partials[i]);
    long total;
    long before = group_exclusive_scan(acc, buf, &total);
    for (ulong i = c; i < cend; i++) {
        long v = partials[i];
        partials[i] = before;
        before = OP(before, v);
    }
}

/* out[i + shift] = carry_in[g] OP in[chunk start] OP ... OP in[i] over group g's
 * chunk.  shift 1 makes the exclusive layout of offsets (out[0] = identity,
 * written here); in and out may be the same buffer when shift is 0: each
 * tile is read whole before any of it is written. */
kernel void scan_chunks(global const IN_T *in, global OUT_T *out, ulong n, ulong chunk,
                        ulong shift, global const long *carry_in, local long *tile,
                        local long *buf)
{
    size_t lid = get_local_id(0), group = get_local_size(0);
    ulong begin = get_group_id(0) * chunk;
    ulong end = min(begin + chunk, n);
    long carry = carry_in[get_group_id(0)];
    if (shift && get_global_id(0) == 0)
        out[0] = (OUT_T)IDENTITY;
    for (ulong base = begin; base < end; base += group * VT) {
        /* Coalesced load: consecutive work-items read consecutive elements. */
        for (uint j = 0; j < VT; j++) {
            ulong i = base + j * group + lid;
            tile[j * group + lid] = i < end ? (long)in[i] : IDENTITY;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* Each work-item scans VT consecutive tile elements from its prefix. */
        long acc = IDENTITY;
        for (uint j = 0; j < VT; j++)
            acc = OP(acc, tile[lid * VT + j]);
        long total;
        long prefix = OP(carry, group_exclusive_scan(acc, buf, &total));
        for (uint j = 0; j < VT; j++) {
            prefix = OP(prefix, tile[lid * VT + j]);
            tile[lid * VT + j] = prefix;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint j = 0; j < VT; j++) {
            ulong i = base + j * group + lid;
            if (i < end)
                out[i + shift] = (OUT_T)tile[j * group + lid];
        }
        carry = OP(carry, total);
        barrier(CLK_LOCAL_MEM_FENCE); /* the next tile overwrites this one */
    }
}
