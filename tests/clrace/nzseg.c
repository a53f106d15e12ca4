/* nzseg.c — nonzero.cl's nz_seg_bounds and nz_seg_merge (rg_segment_nonzero
 * on OpenCL) as threads, against a serial merge.  Usage: nzseg GROUP GROUPS SEED */
#include "emu.h"

#define OFF_T long
#define VT 4
#include "nonzero.cl"

#define MAX_GROUPS 64

static long *o, *pos, *seg_off, *ends[MAX_GROUPS], *vals[MAX_GROUPS];
static ulong nsegs, nnz, tile, *bounds;

static void run_bounds(void) { nz_seg_bounds(o, nsegs, pos, nnz, tile, bounds); }
static void run_merge(void)
{
    nz_seg_merge(o, nsegs, pos, nnz, tile, bounds, seg_off, ends[emu_gid], vals[emu_gid]);
}

int main(int argc, char **argv)
{
    size_t group, ngroups;
    emu_args(argc, argv, &group, &ngroups);
    if (ngroups < 1 || ngroups > MAX_GROUPS)
        return 2;
    /* Short and empty segments, so that tiles hold both ends and positions. */
    nsegs = 300 + (ulong)(rand() % 100);
    o = emu_offsets(nsegs, 6, 0);
    ulong n = (ulong)o[nsegs];
    pos = malloc((n + 1) * sizeof *pos);
    long *flat = malloc((n + 1) * sizeof *flat);
    for (ulong k = 0; k < n; k++)
        if (rand() % 3)
            flat[nnz] = pos[nnz] = (long)k, nnz++;
    seg_off = malloc((nsegs + 1) * sizeof *seg_off);
    tile = group * VT;
    ulong ntiles = (nsegs + nnz + tile - 1) / tile;
    bounds = malloc((ntiles + 1) * sizeof *bounds);
    for (size_t g = 0; g < ngroups; g++) {
        ends[g] = malloc(tile * sizeof **ends);
        vals[g] = malloc(tile * sizeof **vals);
    }
    emu_launch((ntiles + group) / group, group, run_bounds);
    emu_launch(ngroups, group, run_merge);
    int bad = 0;
    ulong j = 0;
    for (ulong s = 0; s < nsegs; s++) {
        bad += seg_off[s] != (long)j;
        for (; j < nnz && flat[j] < o[s + 1]; j++)
            bad += pos[j] != flat[j] - o[s];
    }
    bad += seg_off[nsegs] != (long)j;
    printf("nz_seg_merge: %lu segments, %lu positions, %lu tiles, %zu groups of %zu: %d wrong\n",
           nsegs, nnz, ntiles, ngroups, group, bad);
    return bad || emu_errors;
}
