/* reduce.c — reduce.cl's merge path (reduce_bounds, reduce_chunks,
 * reduce_fixup) on int64 values as threads, against a serial fold made of
 * the kernel file's own ident, fold and store.  Built with -DCLASS=0 (sum,
 * prod) or 1 (min, max, argmin, argmax, count_nonzero, any, all); and the
 * GPUs' per-segment kernels (reduce_segments, reduce_pieces,
 * reduce_teams), with small teams and pieces so that every path runs:
 * teams of 4 (combined by the emulated warp shuffles for class 0, as
 * lib/ocl/reduce.c builds sums on NVIDIA, by the tree for class 1), and
 * pieces of 32 elements.
 * Usage: reduce GROUP CHUNKS SEED */
#include "emu.h"

#define T long
#define ACC ulong
#define IS_FLOAT 0
#define T_MIN LONG_MIN
#define T_MAX LONG_MAX
#define VT 8
#define SEG_LANES 1
#define SEG_LANES_MIN 64
#define TEAM 4
#define PIECE 32
#if CLASS == 0
#define TEAM_MIN 8 /* as the host: the extremes' teams take only what is cut */
#define WARP TEAM
#else
#define TEAM_MIN PIECE
#define WARP 0
#endif
#define WARP_PTX 0
#ifndef FLAT_BARRIERS
#define FLAT_BARRIERS 0 /* as on GPUs */
#endif
#include "reduce.cl"

#define MAX_GROUPS 64
/* Work-groups of the per-segment kernels: each takes several blocks and
 * pieces in turn, and fewer threads run in less time than CHUNKS would. */
#define SEG_GROUPS 2
#define PADDED(n) ((n) + (n) / 16 + 1) /* as lib/ocl/reduce.c */

static long *x, *o64;
static int *o32;
static ulong nsegs, n, tile, tiles_per_chunk, nchunks, per_item, *bounds;
static int op;
static uchar *out;
static chunk_t *chunks;
static acc_t *sacc[MAX_GROUPS];
static int *sflag[MAX_GROUPS], *ends[MAX_GROUPS];
static long *sx[MAX_GROUPS];
static acc_t *partial, *part[MAX_GROUPS];
static uint *list[MAX_GROUPS], block;

static void run_bounds(void) { reduce_bounds(o32, o64, 1, nsegs, n, tile, bounds); }
static void run_chunks(void)
{
    reduce_chunks(x, o32, o64, 1, nsegs, n, tiles_per_chunk, bounds, op, out, chunks,
                  sacc[emu_gid], sflag[emu_gid], ends[emu_gid], sx[emu_gid]);
}
static void run_fixup(void)
{
    reduce_fixup(o32, o64, 1, nchunks, per_item, op, out, chunks, sacc[0], sflag[0]);
}

static void run_segments(void) { reduce_segments(x, o32, o64, 1, nsegs, op, out); }
static void run_pieces(void)
{
    reduce_pieces(x, o32, o64, 1, nsegs, n, op, partial, part[emu_gid]);
}
static void run_teams(void)
{
    reduce_teams(x, o32, o64, 1, nsegs, op, out, partial, block, part[emu_gid], list[emu_gid]);
}

int main(int argc, char **argv)
{
    size_t group, most;
    emu_args(argc, argv, &group, &most);
    if (most < 1 || most > MAX_GROUPS)
        return 2;
    nsegs = 100 + (ulong)(rand() % 50);
    o64 = emu_offsets(nsegs, 5, 600);
    /* One segment in five at a length where the kernels part ways: one
     * short of, at and one past TEAM_MIN, PIECE and twice PIECE. */
    static const long edges[] = {TEAM_MIN - 1, TEAM_MIN,      TEAM_MIN + 1, PIECE - 1,
                                 PIECE,        PIECE + 1,     2 * PIECE - 1, 2 * PIECE,
                                 2 * PIECE + 1};
    for (ulong s = 0, at = 0; s < nsegs; s++) {
        long len = o64[s + 1] - (long)at;
        if (rand() % 5 == 0)
            len = edges[rand() % (int)(sizeof edges / sizeof *edges)];
        at = (ulong)o64[s + 1];
        o64[s + 1] = o64[s] + len;
    }
    n = (ulong)o64[nsegs];
    x = malloc((n + 1) * sizeof *x);
    for (ulong k = 0; k < n; k++)
        x[k] = rand() % 9 - 3;
    tile = group * VT;
    ulong tiles = (nsegs + n + tile - 1) / tile;
    nchunks = tiles < most ? tiles : most;
    tiles_per_chunk = tiles / nchunks + (tiles % nchunks != 0);
    nchunks = tiles / tiles_per_chunk + (tiles % tiles_per_chunk != 0);
    per_item = nchunks / group + (nchunks % group != 0);
    bounds = malloc((tiles + 1) * sizeof *bounds);
    chunks = malloc(nchunks * sizeof *chunks);
    for (ulong g = 0; g < nchunks; g++) {
        sacc[g] = malloc(group * sizeof **sacc);
        sflag[g] = malloc(group * sizeof **sflag);
        ends[g] = malloc(PADDED(tile) * sizeof **ends);
        sx[g] = malloc(PADDED(tile) * sizeof **sx);
    }
    /* As the host: between one segment per team and one per work-item. */
    block = (uint)(group / TEAM + (size_t)rand() % (group - group / TEAM + 1));
    partial = malloc((n / PIECE + 1) * sizeof *partial);
    for (ulong g = 0; g < SEG_GROUPS; g++) {
        part[g] = malloc(group * sizeof **part);
        list[g] = malloc((group + 1) * sizeof **list);
    }
    out = malloc(nsegs * 16);
    uchar *want = malloc(nsegs * 16);
    static const int class_ops[2][7] = {
        {OP_SUM, OP_PROD}, {OP_MIN, OP_MAX, OP_ARGMIN, OP_ARGMAX, OP_COUNT_NONZERO, OP_ANY, OP_ALL}};
    int bad = 0, nops = CLASS == CLASS_ARITH ? 2 : 7;
    emu_launch((tiles + group) / group, group, run_bounds);
    for (int i = 0; i < nops; i++) {
        op = class_ops[CLASS][i];
        memset(out, 0xA5, nsegs * 16);
        memset(want, 0xA5, nsegs * 16);
        for (ulong s = 0; s < nsegs; s++) {
            acc_t a = ident(op);
            for (long k = o64[s]; k < o64[s + 1]; k++)
                a = fold(a, x[k], k, op);
            store(want, s, a, o64[s], o64[s + 1], op);
        }
        emu_launch(nchunks, group, run_chunks);
        emu_launch(1, group, run_fixup);
        bad += memcmp(out, want, nsegs * 16) != 0;
        memset(out, 0xA5, nsegs * 16);
        emu_launch(SEG_GROUPS, group, run_segments);
        emu_launch(SEG_GROUPS, group, run_pieces);
        emu_launch(SEG_GROUPS, group, run_teams);
        bad += memcmp(out, want, nsegs * 16) != 0;
    }
    printf("reduce_chunks, reduce_segments + reduce_pieces + reduce_teams (class %d, block %u):"
           " %lu segments, %lu elements, %lu chunks of %zu: %d runs wrong\n",
           CLASS, block, nsegs, n, nchunks, group, bad);
    return bad || emu_errors;
}
