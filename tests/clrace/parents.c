/* parents.c — parents.cl's seg_merge_bounds and seg_merge_path (parents,
 * local index and starts by merge path) as threads, against a serial loop.
 * Usage: parents GROUP GROUPS SEED */
#include "emu.h"

#define OFF_T long
#define OUT_T long
#define VT 8
#include "parents.cl"

#define MAX_GROUPS 64

static long *o, *out;
static int *ends[MAX_GROUPS], kind;
static uint *segof[MAX_GROUPS];
static ulong nsegs, n, tile, *bounds;

static void run_bounds(void) { seg_merge_bounds(o, nsegs, n, tile, bounds); }
static void run_merge(void)
{
    seg_merge_path(o, nsegs, n, tile, bounds, kind, out, ends[emu_gid], segof[emu_gid]);
}

int main(int argc, char **argv)
{
    size_t group, ngroups;
    emu_args(argc, argv, &group, &ngroups);
    if (ngroups < 1 || ngroups > MAX_GROUPS)
        return 2;
    nsegs = 200 + (ulong)(rand() % 100);
    o = emu_offsets(nsegs, 9, 0);
    n = (ulong)o[nsegs];
    out = malloc((n + 1) * sizeof *out);
    tile = group * VT;
    ulong ntiles = (nsegs + n + tile - 1) / tile;
    bounds = malloc((ntiles + 1) * sizeof *bounds);
    for (size_t g = 0; g < ngroups; g++) {
        ends[g] = malloc(tile * sizeof **ends);
        segof[g] = malloc(tile * sizeof **segof);
    }
    emu_launch((ntiles + group) / group, group, run_bounds);
    int bad = 0;
    for (kind = KIND_PARENTS; kind <= KIND_STARTS; kind++) {
        emu_launch(ngroups, group, run_merge);
        for (ulong s = 0; s < nsegs; s++)
            for (long k = o[s]; k < o[s + 1]; k++)
                bad += out[k] != (kind == KIND_PARENTS ? (long)s
                                  : kind == KIND_LOCAL ? k - o[s] : o[s]);
    }
    printf("seg_merge_path: %lu segments, %lu elements, %lu tiles, %zu groups of %zu: %d wrong\n",
           nsegs, n, ntiles, ngroups, group, bad);
    return bad || emu_errors;
}
