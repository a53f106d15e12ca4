/* reduce.cl — segmented reductions: one work-item per segment, or merge path over work-groups with a combining pass. */

/* Build options (lib/ocl/reduce.c): -DT=element type, -DACC=accumulator of
 * sum and prod (ulong for integers: wrapping without UB; the float type for
 * floats), -DIS_FLOAT=0|1, -DT_MIN / -DT_MAX (identities of max and min),
 * -DVT=merge-path steps per work-item per tile, -DSEG_LANES (1: none) and
 * -DSEG_LANES_MIN, the lanes of a per-segment reduction (sum and prod in
 * class 0, the extremes in class 1) and the length from which it uses
 * them, -DTEAM and -DTEAM_MIN (0: none), the work-items per segment of
 * reduce_teams and the length from which segments are its, -DPIECE (0:
 * none) the length from which reduce_pieces cuts a segment of theirs,
 * -DWARP (0 or TEAM) and -DWARP_PTX, whether teams combine by warp
 * shuffles and whether by PTX (team_combine),
 * -DFLAT_BARRIERS=0|1, 1 on CPU devices: no barrier under a branch, even
 * a uniform one (PoCL took 35 s to compile reduce_chunks of class 1 with
 * its shares' scan under `if (pending)`, 4 s without),
 * -DNEED_FP64 when double is used,
 * -DPOLICY=1|2|3, the kernels the program holds: 1 per segment's (a
 * work-item or a team per segment), 2 merge path's, 3 (the default) both.  PoCL
 * compiles every kernel of a program when ragged asks for its binary (for
 * the disk cache): merge path's kernels took 4 to 6 s there, per
 * segment's under 0.4 s, and a CPU device's reductions go per segment
 * unless asked otherwise.  And
 * -DCLASS=0|1, the class of ops the program serves: 0 sum and prod, whose
 * running state is the accumulator alone, 1 the others, whose state is a
 * value and a position or count.  Within a class the op is the
 * run-time argument `op` (rg_reduce_op's numbers), so two programs per
 * dtype and policy serve every op: cold builds are slow (seconds each on
 * PoCL), and the branches on op are uniform.  The classes are separate
 * programs because carrying the wider state of the second through a sum
 * (and through the work-group scans of merge path) costs on GPUs.
 * Offsets are int or long, chosen at run time by `wide` for the same
 * reason.  Indices are 64-bit in global memory, 32-bit within a tile. */

#ifdef NEED_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define POLICY_SEGMENTS 1
#define POLICY_MERGE_PATH 2
#ifndef POLICY
#define POLICY (POLICY_SEGMENTS | POLICY_MERGE_PATH)
#endif

/* rg_reduce_op of ragged.h; count never comes here (the host derives it). */
#define OP_SUM 0
#define OP_PROD 1
#define OP_MIN 2
#define OP_MAX 3
#define OP_ARGMIN 4
#define OP_ARGMAX 5
#define OP_COUNT_NONZERO 7
#define OP_ANY 8
#define OP_ALL 9

#define IS_EXTREME(op) ((op) >= OP_MIN && (op) <= OP_ARGMAX)
#define IS_MAX(op) ((op) == OP_MAX || (op) == OP_ARGMAX)

#if IS_FLOAT
#define IS_NAN(x) isnan(x)
#else
#define IS_NAN(x) 0
#endif

#define CLASS_ARITH 0
#define CLASS_INDEXED 1

#if CLASS == CLASS_ARITH

/* The running state of one segment: its sum or product. */
typedef ACC acc_t;

acc_t ident(int op)
{
    return op == OP_PROD ? (ACC)1 : (ACC)0;
}

/* a then b, where a holds earlier elements. */
acc_t combine(acc_t a, acc_t b, int op)
{
    return op == OP_PROD ? a * b : a + b;
}

acc_t fold(acc_t a, T x, long k, int op)
{
    return combine(a, (ACC)x, op);
}

/* Writes the final value of segment seg to out, an array of ACC. */
void store(global uchar *out, ulong seg, acc_t a, long start, long end, int op)
{
    ((global ACC *)out)[seg] = a;
}

#else

/* The running state of one segment.  v: the extreme so far.  i:
 * min/max/argmin/argmax, the position of v (-1 while nothing has been
 * seen); count_nonzero/any/all, the count of nonzero elements (any is
 * count > 0, all is count == length). */
typedef struct {
    T v;
    long i;
} acc_t;

/* The empty segment's state. */
acc_t ident(int op)
{
    acc_t r;
    r.v = IS_MAX(op) ? (T)(T_MIN) : (T)(T_MAX);
    r.i = IS_EXTREME(op) ? -1 : 0;
    return r;
}

/* Whether b replaces a as the extreme: the first NaN wins, otherwise the
 * better value, and of equal ones the first.  Positions decide, not which
 * side is which, so partials of interleaved elements combine correctly. */
bool takes_over(acc_t a, acc_t b, int op)
{
    if (a.i < 0)
        return true;
    if (b.i < 0)
        return false;
    bool an = IS_NAN(a.v), bn = IS_NAN(b.v);
    if (an || bn)
        return bn && (!an || b.i < a.i);
    if (b.v == a.v)
        return b.i < a.i;
    return IS_MAX(op) ? b.v > a.v : b.v < a.v;
}

/* a then b, where a holds earlier elements.  Associative, so any grouping
 * of an ordered sequence gives the same answer. */
acc_t combine(acc_t a, acc_t b, int op)
{
    if (IS_EXTREME(op))
        return takes_over(a, b, op) ? b : a;
    a.i += b.i;
    return a;
}

/* Element x at position k, folded into a (a holds earlier elements). */
acc_t fold(acc_t a, T x, long k, int op)
{
    acc_t b;
    b.v = x;
    b.i = IS_EXTREME(op) ? k : (long)(x != (T)0); /* NaN != 0: nonzero, as in numpy */
    return combine(a, b, op);
}

/* Writes the final value of segment seg = [start, end) to out, an array of
 * rg_reduce_dtype(op, T). */
void store(global uchar *out, ulong seg, acc_t a, long start, long end, int op)
{
    if (op == OP_MIN || op == OP_MAX)
        ((global T *)out)[seg] = a.v;
    else if (op == OP_ARGMIN || op == OP_ARGMAX)
        ((global long *)out)[seg] = a.i < 0 ? -1L : a.i - start;
    else if (op == OP_COUNT_NONZERO)
        ((global long *)out)[seg] = a.i;
    else
        out[seg] = op == OP_ANY ? a.i > 0 : a.i == end - start;
}

#endif

/* Offsets are int (wide == 0) or long. */
#define OFF(i) (wide ? o64[(i)] : (long)o32[(i)])

/* ---- one work-item per segment -------------------------------------------- */

#if POLICY & POLICY_SEGMENTS

#if SEG_LANES > 1
#if SEG_LANES != 8
#error "SEG_LANES: 1 or 8"
#endif
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

#if CLASS == CLASS_ARITH
#define ACC8 CAT(ACC, 8)
/* The whole groups of 8 elements from x[*k] (up to end) folded as 8
 * interleaved lanes (lane j takes *k + j, *k + j + 8, ...), the lanes
 * combined as j with j + 4, then j + 2, then j + 1; *k moves past them.
 * Eight additions are in flight instead of one chain at the add's latency,
 * which bounded a long segment's work-item.  This is the order of an
 * OpenMP thread's part (ragged.h). */
acc_t arith_lanes(global const T *x, long *k, long end, int op)
{
    long b = *k, stop = b + (end - b) / 8 * 8;
    ACC8 v = (ACC8)(ident(op));
    if (op == OP_PROD)
        for (; b < stop; b += 8)
            v *= CAT(convert_, ACC8)(vload8(0, x + b));
    else
        for (; b < stop; b += 8)
            v += CAT(convert_, ACC8)(vload8(0, x + b));
    *k = b;
    CAT(ACC, 4) v4 = op == OP_PROD ? v.lo * v.hi : v.lo + v.hi;
    CAT(ACC, 2) v2 = op == OP_PROD ? v4.lo * v4.hi : v4.lo + v4.hi;
    return combine(v2.lo, v2.hi, op);
}
#else
#define T8 CAT(T, 8)
/* min, max, argmin, argmax: the whole groups of 8 elements from x[*k] (up
 * to end) scanned as 8 interleaved lanes, lane j keeping the first extreme
 * of *k + j, *k + j + 8, ...; the lanes' best (the lowest position of
 * equals) then joins a.  The same result as the fold, with 8 independent
 * selects in flight.  *k moves past the groups, or stays, with a returned
 * as it came, if they hold a NaN (the fold then finds the first). */
acc_t extreme_lanes(global const T *x, long *k, long end, int op, acc_t a)
{
    long b = *k, stop = b + (end - b) / 8 * 8;
    T8 v = vload8(0, x + b);
    long8 at = (long8)(b) + (long8)(0, 1, 2, 3, 4, 5, 6, 7);
#if IS_FLOAT
    int nan = any(isnan(v));
#endif
    for (long g = b + 8; g < stop; g += 8) {
        T8 y = vload8(0, x + g);
        /* Lanes where y takes over (not where equal: the first stays).  A
         * vector condition selects per lane; min and max are undefined on
         * infinities. */
        long8 take = convert_long8(IS_MAX(op) ? y > v : y < v);
        v = (IS_MAX(op) ? y > v : y < v) ? y : v;
        at = take ? (long8)(g) + (long8)(0, 1, 2, 3, 4, 5, 6, 7) : at;
#if IS_FLOAT
        nan |= any(isnan(y));
#endif
    }
#if IS_FLOAT
    if (nan)
        return a;
#endif
    *k = stop;
    T lv[8];
    long lat[8];
    vstore8(v, 0, lv);
    vstore8(at, 0, lat);
    for (int j = 0; j < 8; j++) {
        acc_t c;
        c.v = lv[j];
        c.i = lat[j];
        a = combine(a, c, op);
    }
    return a;
}
#endif
#endif

/* Folds x[k], x[k + step], ... below end into a, in that order.  On GPUs
 * (TEAM_MIN > 0) BATCH loads are issued before the first of them is
 * folded: a loop that folds each load as it comes keeps one load of a
 * work-item in flight at a time.  On an H200 (2^27 float64) per-segment
 * sums on lengths 1 to 199 went from 0.47 to 0.41 ms, on 1 to 8 from
 * 0.42 to 0.36.  Same order of folds, so the same results. */
#define BATCH 8
acc_t fold_run(global const T *x, long k, long end, long step, int op, acc_t a)
{
#if TEAM_MIN > 0
    for (; k < end; k += BATCH * step) {
        T v[BATCH];
        for (int i = 0; i < BATCH; i++) /* predicated: no load past end */
            v[i] = k + i * step < end ? x[k + i * step] : (T)0;
        for (int i = 0; i < BATCH; i++)
            if (k + i * step < end)
                a = fold(a, v[i], k + i * step, op);
    }
#else
    for (; k < end; k += step)
        a = fold(a, x[k], k, op);
#endif
    return a;
}

/* With TEAM_MIN > 0 (GPUs), segments of TEAM_MIN elements or more are
 * reduce_teams' and skipped here. */
kernel void reduce_segments(global const T *x, global const int *o32, global const long *o64,
                            int wide, ulong nsegs, int op, global uchar *out)
{
    for (ulong s = get_global_id(0); s < nsegs; s += get_global_size(0)) {
        long start = OFF(s), end = OFF(s + 1);
#if TEAM_MIN > 0
        if (end - start >= TEAM_MIN)
            continue;
#endif
        acc_t a = ident(op);
        long k = start;
#if SEG_LANES > 1 && CLASS == CLASS_ARITH
        if (end - k >= SEG_LANES_MIN)
            a = arith_lanes(x, &k, end, op);
#elif SEG_LANES > 1
        if (IS_EXTREME(op) && end - k >= SEG_LANES_MIN)
            a = extreme_lanes(x, &k, end, op, a);
#endif
#if CLASS == CLASS_ARITH
        a = fold_run(x, k, end, 1, op, a);
#else
        /* Not batched: argmax on lengths 0 to 15, half of them 0, took
         * 0.89 ms batched, 0.68 not (H200, 2^27 float64). */
        for (; k < end; k++)
            a = fold(a, x[k], k, op);
#endif
        store(out, s, a, start, end, op);
    }
}

#if TEAM_MIN > 0
#if PIECE > 0 && PIECE < TEAM_MIN
#error "PIECE: 0 or at least TEAM_MIN"
#endif

/* Combines a team's lanes' a as j with j + TEAM / 2, then j + TEAM / 4,
 * ..., j + 1, and returns the result in lane 0 (the others get partials,
 * never read).  Every work-item of the group must call it.
 *
 * WARP = TEAM (the host sets it for sums and products on NVIDIA, where a
 * team is one warp): shuffles move the partials, with no local memory and
 * no barriers (a sum of segments of mean 100 went from 64% to 73% of a
 * copy, H200).  The loop has no branch on data, because shfl.sync needs
 * every lane of the warp at the same instruction and the compiler need
 * not know that inline asm must not be moved into a branch: every lane
 * combines, and lanes >= d get partials no lane reads later.  Same order
 * of combination as the tree, so the same results bit for bit.  On NVIDIA
 * (WARP_PTX) by inline PTX, as its OpenCL has no subgroups; elsewhere
 * emulated through part and barriers, so the tests run this path on CPUs.
 * The extremes and counts keep the tree: with shuffles in the merge
 * path's scans as well, count_nonzero of int64 went wrong on the H200 and
 * the extremes got slower (twenty-ninth session). */
#if WARP > 0 && WARP != TEAM
#error "WARP: 0 or TEAM"
#endif
#if WARP > 0 && WARP_PTX
uint shfl_down_word(uint v, uint d)
{
    uint r;
    asm volatile("shfl.sync.down.b32 %0, %1, %2, 31, 0xffffffff;" : "=r"(r) : "r"(v), "r"(d));
    return r;
}

/* Lane lane + d's a (lane's own a where that is past the warp). */
acc_t warp_down(acc_t a, uint d, local acc_t *part, uint lid, uint lane)
{
    union {
        acc_t a;
        uint w[sizeof(acc_t) / 4];
    } u;
    typedef char whole_words[sizeof(acc_t) % 4 == 0 ? 1 : -1];
    u.a = a;
    for (uint i = 0; i < sizeof(acc_t) / 4; i++)
        u.w[i] = shfl_down_word(u.w[i], d);
    return u.a;
}
#elif WARP > 0
acc_t warp_down(acc_t a, uint d, local acc_t *part, uint lid, uint lane)
{
    barrier(CLK_LOCAL_MEM_FENCE); /* the last round's reads are done */
    part[lid] = a;
    barrier(CLK_LOCAL_MEM_FENCE);
    return lane + d < WARP ? part[lid + d] : a;
}
#endif

acc_t team_combine(acc_t a, local acc_t *part, uint lid, uint lane, int op)
{
#if WARP > 0
    for (uint d = TEAM / 2; d > 0; d >>= 1)
        a = combine(a, warp_down(a, d, part, lid, lane), op);
    return a;
#else
    part[lid] = a;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = TEAM / 2; d > 0; d >>= 1) {
        if (lane < d)
            part[lid] = combine(part[lid], part[lid + d], op);
        barrier(CLK_LOCAL_MEM_FENCE); /* also: part[lid + 1] is read before it is rewritten */
    }
    return part[lid];
#endif
}

#if PIECE > 0
/* The segment holding element k (< nelems): the largest s < nsegs with
 * o[s] <= k, so never an empty one. */
ulong segment_of(global const int *o32, global const long *o64, int wide, ulong nsegs, long k)
{
    ulong lo = 0, hi = nsegs; /* o[lo] <= k < o[hi] */
    while (hi - lo > 1) {
        ulong mid = lo + (hi - lo) / 2;
        if (OFF(mid) <= k)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Segments of PIECE elements or more are cut at the multiples of PIECE
 * (positions in the content), so that work-groups share them: a long
 * segment on one team took 0.31 s for 2^27 float64 on an H100.  Piece p
 * holds elements p * PIECE .. (p + 1) * PIECE - 1; where the segment
 * holding its first element is long, a team folds the segment's part of
 * the piece into partial[p].  reduce_teams then folds a long segment's
 * part before its first piece start itself and combines the partials. */
kernel void reduce_pieces(global const T *x, global const int *o32, global const long *o64,
                          int wide, ulong nsegs, ulong nelems, int op, global acc_t *partial,
                          local acc_t *part)
{
    uint lid = get_local_id(0), lane = lid % TEAM, teams = get_local_size(0) / TEAM;
    ulong npieces = (nelems + PIECE - 1) / PIECE;
    for (ulong p0 = get_group_id(0) * teams; p0 < npieces; p0 += get_num_groups(0) * teams) {
        ulong p = p0 + lid / TEAM;
        long lo = 0, hi = 0;
        if (p < npieces) {
            lo = (long)(p * PIECE);
            ulong s = segment_of(o32, o64, wide, nsegs, lo);
            long start = OFF(s), end = OFF(s + 1);
            hi = end - start >= PIECE ? min(end, lo + PIECE) : lo;
        }
        acc_t a = fold_run(x, lo + lane, hi, TEAM, op, ident(op));
        a = team_combine(a, part, lid, lane, op);
        if (hi > lo && lane == 0)
            partial[p] = a;
    }
}
#endif

/* Segments of TEAM_MIN elements or more (the others are reduce_segments'),
 * TEAM work-items each: lane j folds elements j, j + TEAM, ... of the
 * segment, so that a team's loads are coalesced, and team_combine combines
 * the lanes.  One work-item per segment read its elements alone, 8 bytes
 * at a time from its own stretch of memory: 61% of a copy's speed on an
 * H100 for segments of 1 to 199 elements.  With PIECE > 0, a segment of
 * PIECE elements or more is cut at the multiples of PIECE: lane j folds
 * the elements j, j + TEAM, ... before the first cut (none if it starts
 * on one), then the partials of reduce_pieces for pieces j, j + TEAM, ...
 * of those from that cut on.  The group looks at `block` segments (at
 * most its size) at a time and lists those that are its (in any order:
 * each is reduced whole by one team), then its teams take them; where few
 * segments are long (power-law lengths), a round of teams per handful of
 * segments, each ending in barriers, cost more than the elements. */
kernel void reduce_teams(global const T *x, global const int *o32, global const long *o64,
                         int wide, ulong nsegs, int op, global uchar *out,
                         global const acc_t *partial, uint block, local acc_t *part,
                         local uint *list)
{
    uint lid = get_local_id(0), lane = lid % TEAM, teams = get_local_size(0) / TEAM;
    /* list holds the group's size + 1: the count in the last slot (not a
     * kernel-scope local, which tests/clrace could not share). */
    local uint *found = list + get_local_size(0);
    for (ulong b0 = get_group_id(0) * (ulong)block; b0 < nsegs;
         b0 += get_num_groups(0) * (ulong)block) {
        if (lid == 0)
            *found = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        ulong s = b0 + lid;
        if (lid < block && s < nsegs && OFF(s + 1) - OFF(s) >= TEAM_MIN)
            list[atomic_inc(found)] = lid;
        barrier(CLK_LOCAL_MEM_FENCE);
        uint n = *found;
        for (uint j0 = 0; j0 < n; j0 += teams) {
            uint j = j0 + lid / TEAM;
            ulong seg = 0;
            long start = 0, end = 0;
            if (j < n) {
                seg = b0 + list[j];
                start = OFF(seg);
                end = OFF(seg + 1);
            }
            long stop = end;
#if PIECE > 0
            bool cut = end - start >= PIECE;
            if (cut)
                stop = min(end, (start + PIECE - 1) / PIECE * PIECE); /* the first cut */
#endif
            acc_t a = fold_run(x, start + lane, stop, TEAM, op, ident(op));
#if PIECE > 0
            if (cut)
                for (long p = stop / PIECE + lane; p <= (end - 1) / PIECE; p += TEAM)
                    a = combine(a, partial[p], op);
#endif
            a = team_combine(a, part, lid, lane, op);
            if (j < n && lane == 0)
                store(out, seg, a, start, end, op);
        }
        barrier(CLK_LOCAL_MEM_FENCE); /* found and list are read before the next block */
    }
}
#endif

#endif /* POLICY & POLICY_SEGMENTS */

/* ---- merge path -------------------------------------------------------------
 *
 * The merge path of segment ends o[1..nsegs] and elements 0..nelems-1 has
 * nsegs + nelems steps (end i comes before element k when o[i+1] <= k).
 * It is cut into tiles of VT steps per work-item; reduce_bounds finds where
 * every tile starts, all at once.  Work-group g owns chunk g, a contiguous
 * run of whole tiles, so every group does the same work whatever the
 * lengths.  For each tile the group copies the offsets and the elements the
 * tile touches into local memory (coalesced: neighbouring work-items load
 * neighbouring words), and each work-item then finds its VT steps there by
 * a binary search and folds them in order, reading local memory only.  At
 * a segment end it stores the result, except for the first segment it
 * closes (its head), which may have begun in earlier work-items.  The open
 * segment at its end (its tail) and whether it closed anything feed a
 * segmented scan over the group, which gives each work-item the partial of
 * its head from the work-items and tiles (the carry) before it.  The first
 * segment closed in a chunk may have begun in an earlier chunk: its partial
 * goes to the chunk's record, and reduce_fixup combines the chunks' records
 * in order.  Nothing waits on another work-group; the order of every
 * combination is fixed, so results are deterministic. */

#if POLICY & POLICY_MERGE_PATH

typedef struct {
    acc_t carry; /* the open segment at the chunk's end: its partial from this chunk */
    acc_t head;  /* the first segment closed in the chunk: its partial from this chunk */
    long head_seg;
    int closed; /* whether the chunk closes any segment (else head is unused) */
} chunk_t;

/* The host allocates CHUNK_BYTES per chunk and ACC_BYTES per work-item of
 * local memory for acc_t: keep them in step with lib/ocl/reduce.c. */
#define CHUNK_BYTES 64
#define ACC_BYTES (CLASS == CLASS_ARITH ? 8 : 16)
typedef char chunk_fits[sizeof(chunk_t) <= CHUNK_BYTES ? 1 : -1];
typedef char acc_fits[sizeof(acc_t) <= ACC_BYTES ? 1 : -1];

/* How many segment ends lie among the first diag steps. */
ulong path_search(global const int *o32, global const long *o64, int wide, ulong nsegs,
                  ulong nelems, ulong diag)
{
    ulong lo = diag > nelems ? diag - nelems : 0UL;
    ulong hi = min(nsegs, diag);
    while (lo < hi) {
        ulong mid = lo + (hi - lo) / 2;
        if (OFF(mid + 1) <= (long)(diag - 1 - mid))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* bounds[t] = the segment ends among the first t * tile steps, for t = 0 ..
 * ntiles (the last is nsegs).  One work-item per tile, so the searches run
 * side by side instead of one after another inside each tile's group. */
kernel void reduce_bounds(global const int *o32, global const long *o64, int wide,
                          ulong nsegs, ulong nelems, ulong tile, global ulong *bounds)
{
    ulong steps = nsegs + nelems, ntiles = (steps + tile - 1) / tile;
    for (ulong t = get_global_id(0); t <= ntiles; t += get_global_size(0))
        bounds[t] = path_search(o32, o64, wide, nsegs, nelems, min(t * tile, steps));
}

/* Segmented inclusive scan over the work-group: each work-item gives (f, y),
 * where f says y starts afresh (a segment was closed) and otherwise y
 * continues the work-items before.  Returns the exclusive result for this
 * work-item (what precedes it in its open segment; ident when lid is 0) and
 * in *closed_before whether any earlier work-item closed a segment; *total
 * and *any_closed receive the inclusive result of the whole group. */
acc_t group_segscan(acc_t y, int f, int op, local acc_t *sacc, local int *sflag,
                    int *closed_before, acc_t *total, int *any_closed)
{
    size_t lid = get_local_id(0), n = get_local_size(0);
    sacc[lid] = y;
    sflag[lid] = f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t d = 1; d < n; d <<= 1) {
        acc_t py = y;
        int pf = 0;
        if (lid >= d) {
            py = sacc[lid - d];
            pf = sflag[lid - d];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid >= d) {
            if (!f)
                y = combine(py, y, op);
            f |= pf;
            sacc[lid] = y;
            sflag[lid] = f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    acc_t before = lid > 0 ? sacc[lid - 1] : ident(op);
    *closed_before = lid > 0 ? sflag[lid - 1] : 0;
    *total = sacc[n - 1];
    *any_closed = sflag[n - 1];
    barrier(CLK_LOCAL_MEM_FENCE); /* sacc and sflag are reused next */
    return before;
}

/* carry followed by the work-items' shares pend, in work-item order. */
acc_t add_shares(acc_t carry, acc_t pend, int op, local acc_t *sacc, local int *sflag)
{
    int closed_before, any_closed;
    acc_t shares;
    group_segscan(pend, 0, op, sacc, sflag, &closed_before, &shares, &any_closed);
    return combine(carry, shares, op);
}

/* Local arrays are read at a stride of about VT words in the walk below;
 * one pad word after every 16 spreads those reads over the banks (a stride
 * of 8 doubles would otherwise hit 2 of 16 bank pairs).  The host sizes
 * them PADDED(tile): keep in step with lib/ocl/reduce.c. */
#define PAD(j) ((j) + ((j) >> 4))

/* One work-group per chunk of tiles_per_chunk tiles of VT * group steps.
 * ends holds a tile's segment ends relative to its first element (at most
 * tile of them, each in [0, tile]: ints), sx its elements. */
kernel void reduce_chunks(global const T *x, global const int *o32, global const long *o64,
                          int wide, ulong nsegs, ulong nelems, ulong tiles_per_chunk,
                          global const ulong *bounds, int op, global uchar *out,
                          global chunk_t *chunks, local acc_t *sacc, local int *sflag,
                          local int *ends, local T *sx)
{
    uint lid = get_local_id(0), group = get_local_size(0);
    ulong steps = nsegs + nelems, tile = group * VT, ntiles = (steps + tile - 1) / tile;
    ulong t = get_group_id(0) * tiles_per_chunk, tend = min(t + tiles_per_chunk, ntiles);
    acc_t carry = ident(op);  /* the open segment's partial, from earlier tiles */
    int chunk_closed = 0;     /* whether an earlier tile closed a segment */
    /* This work-item's share of the open segment from tiles that end no
     * segment (inside a long one), not yet added to carry. */
    acc_t pend = ident(op);
    int pending = 0;
    for (;; t++) {
        /* Tiles that end no segment lie wholly inside segment bounds[t]:
         * no search, no local memory, no scan.  Work-item l folds elements
         * l, l + group, ... (coalesced loads); the group adds the shares
         * up once, at the next tile that ends a segment or at the chunk's
         * end. */
        for (; t < tend && bounds[t + 1] == bounds[t]; t++) {
            ulong d0 = t * tile, k0 = d0 - bounds[t];
            uint nk = (uint)(min(d0 + tile, steps) - d0);
            for (uint i = 0; i < VT; i++) {
                uint j = i * group + lid;
                if (j < nk)
                    pend = fold(pend, x[k0 + j], (long)(k0 + j), op);
            }
            pending = 1;
        }
        /* pending is uniform: every work-item saw the same tiles.  With
         * FLAT_BARRIERS the scan runs anyway and its result is dropped
         * when nothing is pending. */
        if (FLAT_BARRIERS || pending) {
            acc_t c = add_shares(carry, pend, op, sacc, sflag);
            carry = pending ? c : carry;
            pend = ident(op);
            pending = 0;
        }
        if (t == tend)
            break;
        ulong d0 = t * tile, s0 = bounds[t], s1 = bounds[t + 1], k0 = d0 - s0;
        /* ns ends (of segments s0 .. s1-1) and nk elements k0 .. k0+nk-1,
         * which lie in segments s0 .. s1; o[s0] <= k0 <= o[s0+1]. */
        uint ns = (uint)(s1 - s0), nk = (uint)(min(d0 + tile, steps) - d0) - ns;
#if CLASS == CLASS_ARITH
        /* The tile's ends, then its elements, are loaded into registers
         * all at once (the ends while the previous tile finishes), then
         * stored: loops storing each load as it came waited for them one
         * by one.  ns, nk <= tile = VT * group.  Sums by merge path, H200:
         * power-law lengths 0.81 -> 0.75 ms, long 0.30 -> 0.29, short,
         * medium and half-empty 1.08x to 1.09x faster.  Not for the other
         * class: min by merge path got 1.07x to 1.15x slower (its
         * registers are capped at 32), and the parents tiles with their
         * ends loaded so 1.02x to 1.17x (twenty-ninth session). */
        long ev[VT];
        for (uint i = 0; i < VT; i++) {
            uint j = i * group + lid;
            ev[i] = j < ns ? OFF(s0 + 1 + j) : 0;
        }
        barrier(CLK_LOCAL_MEM_FENCE); /* the previous tile is done with ends and sx */
        for (uint i = 0; i < VT; i++) {
            uint j = i * group + lid;
            if (j < ns)
                ends[PAD(j)] = (int)(ev[i] - (long)k0);
        }
        T xv[VT];
        for (uint i = 0; i < VT; i++) {
            uint j = i * group + lid;
            xv[i] = j < nk ? x[k0 + j] : (T)0;
        }
        for (uint i = 0; i < VT; i++) {
            uint j = i * group + lid;
            if (j < nk)
                sx[PAD(j)] = xv[i];
        }
#else
        barrier(CLK_LOCAL_MEM_FENCE); /* the previous tile is done with ends and sx */
        for (uint j = lid; j < ns; j += group)
            ends[PAD(j)] = (int)(OFF(s0 + 1 + j) - (long)k0);
        for (uint j = lid; j < nk; j += group)
            sx[PAD(j)] = x[k0 + j];
#endif
#if CLASS == CLASS_INDEXED
        long first = OFF(s0); /* where segment s0 starts: argmin's and all's need */
#else
        long first = 0;
#endif
        barrier(CLK_LOCAL_MEM_FENCE);

        /* Steps d .. dend-1 of the tile are this work-item's; e of the
         * tile's ends lie among the first d (the merge-path search). */
        uint d = min(lid * VT, ns + nk), dend = min(d + VT, ns + nk);
        uint lo = d > nk ? d - nk : 0, hi = min(d, ns);
        while (lo < hi) {
            uint mid = (lo + hi) / 2;
            if (ends[PAD(mid)] <= (int)(d - 1 - mid))
                lo = mid + 1;
            else
                hi = mid;
        }
        uint e = lo, k = d - lo, head_e = e;
        acc_t acc = ident(op), head = acc;
        int closed = 0;
        /* Past the tile's last end every step is an element. */
        int end = e < ns ? ends[PAD(e)] : INT_MAX;
        for (; d < dend; d++) {
            if (end <= (int)k) { /* segment s0 + e ends here (ends first on ties) */
                if (closed)
                    store(out, s0 + e, acc, (long)k0 + ends[PAD(e - 1)], (long)k0 + end, op);
                else
                    head = acc;
                closed = 1;
                acc = ident(op);
                e++;
                end = e < ns ? ends[PAD(e)] : INT_MAX;
            } else {
                acc = fold(acc, sx[PAD(k)], (long)(k0 + k), op);
                k++;
            }
        }

        /* Work-item 0 continues the carry of the tiles before. */
        if (lid == 0 && !closed)
            acc = combine(carry, acc, op);
        int closed_before, any_closed;
        acc_t total;
        acc_t before = group_segscan(acc, closed, op, sacc, sflag, &closed_before, &total,
                                     &any_closed);
        if (lid == 0)
            before = carry;
        if (closed) {
            acc_t h = combine(before, head, op);
            ulong head_seg = s0 + head_e;
            if (!closed_before && !chunk_closed) {
                chunks[get_group_id(0)].head = h; /* may continue an earlier chunk */
                chunks[get_group_id(0)].head_seg = (long)head_seg;
            } else {
                long hstart = head_e == 0 ? first : (long)k0 + ends[PAD(head_e - 1)];
                store(out, head_seg, h, hstart, (long)k0 + ends[PAD(head_e)], op);
            }
        }
        carry = total;
        chunk_closed |= any_closed;
    }
    if (lid == 0) {
        chunks[get_group_id(0)].carry = carry;
        chunks[get_group_id(0)].closed = chunk_closed;
    }
}

/* One work-group: combines the chunk records in order.  Work-item l takes
 * chunks [l * per_item, (l + 1) * per_item) like reduce_chunks takes steps:
 * the first head it meets may continue earlier work-items' chunks, the
 * others are final once the carry is added. */
kernel void reduce_fixup(global const int *o32, global const long *o64, int wide,
                         ulong nchunks, ulong per_item, int op, global uchar *out,
                         global const chunk_t *chunks, local acc_t *sacc,
                         local int *sflag)
{
    size_t lid = get_local_id(0);
    ulong c = lid * per_item, cend = min(c + per_item, nchunks);
    acc_t acc = ident(op), head = acc;
    long head_seg = 0;
    int closed = 0;
    for (; c < cend; c++) {
        chunk_t ch = chunks[c];
        if (ch.closed) {
            acc_t h = combine(acc, ch.head, op);
            if (closed) {
                store(out, (ulong)ch.head_seg, h, OFF(ch.head_seg),
                      OFF(ch.head_seg + 1), op);
            } else {
                head = h;
                head_seg = ch.head_seg;
            }
            closed = 1;
            acc = ch.carry;
        } else {
            acc = combine(acc, ch.carry, op);
        }
    }
    int closed_before, any_closed;
    acc_t total;
    acc_t before = group_segscan(acc, closed, op, sacc, sflag, &closed_before, &total,
                                 &any_closed);
    if (closed) {
        acc_t h = combine(before, head, op);
        store(out, (ulong)head_seg, h, OFF(head_seg), OFF(head_seg + 1), op);
    }
}

#endif /* POLICY & POLICY_MERGE_PATH */
