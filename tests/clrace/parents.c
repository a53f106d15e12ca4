/* parents.c — parents.cl's seg_merge_bounds and seg_merge_path (parents,
 * local index and starts by merge path), and seg_staged and seg_pieces
 * (per segment on GPUs), as threads, against a serial loop.
 * Usage: parents GROUP GROUPS SEED */
#include "emu.h"

#define OFF_T long
#define OUT_T long
#define VT 8
#define PIECE 64 /* small: long segments cut into several pieces */
#include "parents.cl"

#define MAX_GROUPS 64
/* seg_staged's blocks fit STAGED per work-item: short lengths fill most
 * blocks, long ones (emu_offsets' long_max) overflow them. */
#define STAGED 4

static long *o, *out;
static int *ends[MAX_GROUPS], kind;
static uint *segof[MAX_GROUPS], *list[MAX_GROUPS];
static ushort *marks[MAX_GROUPS];
static long *sstart[MAX_GROUPS];
static ulong nsegs, n, tile, *bounds;
static uint cap;

static void run_bounds(void) { seg_merge_bounds(o, nsegs, n, tile, bounds); }
static void run_merge(void)
{
    seg_merge_path(o, nsegs, n, tile, bounds, kind, out, ends[emu_gid], segof[emu_gid]);
}
static void run_staged(void)
{
    seg_staged(o, nsegs, kind, out, cap, marks[emu_gid], sstart[emu_gid], list[emu_gid]);
}
static void run_pieces(void) { seg_pieces(o, nsegs, n, kind, out); }

/* Wrong elements of out for the current kind. */
static int wrong(void)
{
    int bad = 0;
    for (ulong s = 0; s < nsegs; s++)
        for (long k = o[s]; k < o[s + 1]; k++)
            bad += out[k] != (kind == KIND_PARENTS ? (long)s : kind == KIND_LOCAL ? k - o[s] : o[s]);
    return bad;
}

int main(int argc, char **argv)
{
    size_t group, ngroups;
    emu_args(argc, argv, &group, &ngroups);
    if (ngroups < 1 || ngroups > MAX_GROUPS)
        return 2;
    int bad = 0;
    for (int lengths = 0; lengths < 2; lengths++) {
        nsegs = 200 + (ulong)(rand() % 100);
        o = emu_offsets(nsegs, 9, lengths ? 300 : 0);
        n = (ulong)o[nsegs];
        out = malloc((n + 1) * sizeof *out);
        tile = group * VT;
        cap = (uint)(group * STAGED);
        ulong ntiles = (nsegs + n + tile - 1) / tile;
        bounds = malloc((ntiles + 1) * sizeof *bounds);
        for (size_t g = 0; g < ngroups; g++) {
            ends[g] = malloc(tile * sizeof **ends);
            segof[g] = malloc(tile * sizeof **segof);
            marks[g] = malloc(cap * sizeof **marks);
            sstart[g] = malloc(group * sizeof **sstart);
            list[g] = malloc((group + 1) * sizeof **list);
        }
        emu_launch((ntiles + group) / group, group, run_bounds);
        int bad_merge = 0, bad_staged = 0;
        for (kind = KIND_PARENTS; kind <= KIND_STARTS; kind++) {
            memset(out, 0xff, (n + 1) * sizeof *out);
            emu_launch(ngroups, group, run_merge);
            bad_merge += wrong();
            memset(out, 0xff, (n + 1) * sizeof *out);
            emu_launch(ngroups, group, run_staged);
            emu_launch(ngroups, group, run_pieces);
            bad_staged += wrong();
        }
        printf("%s lengths, %lu segments, %lu elements, %zu groups of %zu: seg_merge_path "
               "(%lu tiles) %d wrong, seg_staged + seg_pieces %d wrong\n",
               lengths ? "long" : "short", nsegs, n, ngroups, group, ntiles, bad_merge,
               bad_staged);
        bad += bad_merge + bad_staged;
        for (size_t g = 0; g < ngroups; g++) {
            free(ends[g]);
            free(segof[g]);
            free(marks[g]);
            free(sstart[g]);
            free(list[g]);
        }
        free(bounds);
        free(out);
        free(o);
    }
    return bad || emu_errors;
}
