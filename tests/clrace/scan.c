/* scan.c — scan.cl's scan_reduce, scan_partials and scan_chunks (inclusive,
 * in place, and exclusive, shifted by one) as threads, against a serial
 * sum.  Usage: scan GROUP N SEED */
#include "emu.h"

#define IN_T long
#define OUT_T long
#define SCAN_OP 1
#define VT 8
#include "scan.cl"

#define MAX_GROUPS 64

static long *in, *out, *part, *tiles[MAX_GROUPS], *buf[MAX_GROUPS];
static ulong n, chunk, count, per_item, shift;

static void run_reduce(void) { scan_reduce(in, n, chunk, part, buf[emu_gid]); }
static void run_partials(void) { scan_partials(part, count, per_item, buf[emu_gid]); }
static void run_chunks(void) { scan_chunks(in, out, n, chunk, shift, part, tiles[emu_gid], buf[emu_gid]); }

int main(int argc, char **argv)
{
    size_t group, elems;
    emu_args(argc, argv, &group, &elems);
    n = elems;
    ulong tile = group * VT;
    count = n / tile + (n % tile != 0);
    /* Up to 4 chunks per work-item of scan_partials (the library allows
     * more): small groups then take several chunk totals each. */
    count = count > 4 * group ? 4 * group : count ? count : 1;
    if (count > MAX_GROUPS)
        count = MAX_GROUPS;
    ulong per = n / count + (n % count != 0);
    chunk = (per / tile + (per % tile != 0)) * tile;
    count = chunk ? n / chunk + (n % chunk != 0) : 1;
    per_item = count / group + (count % group != 0);
    long *want = malloc((n + 1) * sizeof *want), sum = 0;
    in = malloc((n + 1) * sizeof *in);
    for (ulong i = 0; i < n; i++)
        want[i] = sum += in[i] = rand() % 7;
    part = malloc(count * sizeof *part);
    for (size_t g = 0; g < count; g++) {
        tiles[g] = malloc(tile * sizeof **tiles);
        buf[g] = malloc(group * sizeof **buf);
    }
    int bad = 0;
    long *copy = malloc((n + 1) * sizeof *copy);
    memcpy(copy, in, n * sizeof *in);
    for (shift = 0; shift <= 1; shift++) {
        memcpy(in, copy, n * sizeof *in);
        out = shift ? malloc((n + 1) * sizeof *out) : in;
        emu_launch(count, group, run_reduce);
        emu_launch(1, group, run_partials);
        emu_launch(count, group, run_chunks);
        for (ulong i = 0; i < n; i++)
            bad += out[i + shift] != want[i];
        bad += shift && out[0] != 0;
    }
    printf("scan_chunks: %lu elements, %lu chunks of %zu work-items (%lu per item of "
           "scan_partials): %d wrong\n",
           n, count, group, per_item, bad);
    return bad || emu_errors;
}
