/* offsets.cl — checks offsets, derives lengths and totals lengths, with per-work-group partial results. */

/* Build options: -DIN_T=int|long (offsets or lengths read), -DOUT_T=int|long (lengths written),
 * -DFLAT_BARRIERS=0|1 (1 on CPU devices, see GROUP_REDUCE); or, for a
 * program holding compose alone, -DINNER_T as well.
 * Work-groups are a power of two in size (the tree reductions below need it).
 * Every loop strides by the global size, so any global size covers any n, and
 * all index arithmetic is 64-bit: n may pass 2^31. */

#ifndef INNER_T

#define NONE LONG_MAX /* "no bad index" while reducing with min */

/* Reduces x over the work-group with OP; every work-item gets the result.
 * With FLAT_BARRIERS (CPU devices) work-item 0 folds the values alone, with
 * no barrier in a loop: PoCL compiled offsets_check and lengths_total in
 * 0.7 and 1.5 s with the tree, 0.3 and 0.35 s so (and ragged's disk cache
 * has it compile every kernel of the program), and the check of the
 * 931743 offsets of 2^22 elements in segments of 1 to 8 ran in 3.0 ms
 * instead of 16.8. */
#if FLAT_BARRIERS
#define GROUP_FOLD(OP)                                             \
    if (lid == 0) {                                                \
        for (size_t i = 1; i < get_local_size(0); i++)             \
            x = OP(x, buf[i]);                                     \
        buf[0] = x;                                                \
    }                                                              \
    barrier(CLK_LOCAL_MEM_FENCE);
#else
#define GROUP_FOLD(OP)                                             \
    for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {       \
        if (lid < s)                                               \
            buf[lid] = OP(buf[lid], buf[lid + s]);                 \
        barrier(CLK_LOCAL_MEM_FENCE);                              \
    }
#endif
#define GROUP_REDUCE(fname, T, OP)                                 \
    T fname(T x, local T *buf)                                     \
    {                                                              \
        size_t lid = get_local_id(0);                              \
        buf[lid] = x;                                              \
        barrier(CLK_LOCAL_MEM_FENCE);                              \
        GROUP_FOLD(OP)                                             \
        T r = buf[0];                                              \
        barrier(CLK_LOCAL_MEM_FENCE); /* buf is reused next */     \
        return r;                                                  \
    }

/* a + b stuck at ULONG_MAX instead of wrapping: a total above LONG_MAX is
 * an overflow, while LONG_MAX itself still fits int64 offsets. */
ulong sat_add(ulong a, ulong b)
{
    return b > ULONG_MAX - a ? ULONG_MAX : a + b;
}

#define MIN_OP(a, b) min((a), (b))
#define MAX_OP(a, b) max((a), (b))
GROUP_REDUCE(group_min, long, MIN_OP)
GROUP_REDUCE(group_max, long, MAX_OP)
GROUP_REDUCE(group_sat_sum, ulong, sat_add)

/* With G groups: out[g] = the smallest i of group g's share with
 * (i == 0 ? o[0] != 0 : o[i] < o[i-1]), or LONG_MAX; out[G + g] = the
 * longest segment o[i] - o[i-1] of the share (meaningful only when no
 * group found a bad index), which the GPU heuristics use. */
kernel void offsets_check(global const IN_T *o, ulong n, local long *buf, global long *out)
{
    long bad = NONE, longest = 0;
    /* Indices rise along the stride: the first hit is this work-item's smallest. */
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
        if (i == 0 ? o[0] != 0 : o[i] < o[i - 1]) {
            bad = (long)i;
            break;
        }
        if (i > 0)
            longest = max(longest, (long)o[i] - (long)o[i - 1]);
    }
    bad = group_min(bad, buf);
    longest = group_max(longest, buf);
    if (get_local_id(0) == 0) {
        out[get_group_id(0)] = bad;
        out[get_num_groups(0) + get_group_id(0)] = longest;
    }
}

/* lengths[i] = o[i+1] - o[i] for i < nsegs. */
kernel void lengths(global const IN_T *o, ulong nsegs, global OUT_T *out)
{
    for (ulong i = get_global_id(0); i < nsegs; i += get_global_size(0))
        out[i] = (OUT_T)((long)o[i + 1] - (long)o[i]);
}

/* With G groups, per group g: out[g] = the smallest index of a negative
 * length (or LONG_MAX), out[G + g] = the saturated sum of the non-negative
 * ones (negatives make the total moot), out[2G + g] = the longest. */
kernel void lengths_total(global const IN_T *len, ulong n, local long *buf, global long *out)
{
    long bad = NONE, longest = 0;
    ulong sum = 0;
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
        long v = len[i];
        if (v < 0)
            bad = min(bad, (long)i);
        else
            sum = sat_add(sum, (ulong)v);
        longest = max(longest, v);
    }
    bad = group_min(bad, buf);
    sum = group_sat_sum(sum, (local ulong *)buf);
    longest = group_max(longest, buf);
    if (get_local_id(0) == 0) {
        size_t g = get_group_id(0), groups = get_num_groups(0);
        out[g] = bad;
        ((global ulong *)out)[groups + g] = sum;
        out[2 * groups + g] = longest;
    }
}

#else /* INNER_T */
/* out[i] = inner[outer[i]], composing two offsets levels into one; with
 * identity set, out[i] = outer[i] (a dtype-converting copy; inner unused). */
kernel void compose(global const IN_T *outer, global const INNER_T *inner, int identity,
                    ulong n, global OUT_T *out)
{
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
        long v = outer[i];
        out[i] = (OUT_T)(identity ? v : (long)inner[v]);
    }
}
#endif
