/* nzcount.c — nonzero.cl's nz_count (coalesced tiles: the bits of 32
 * work-items transposed through local memory) and nz_write (rows staged in
 * local memory) as threads, against a serial nonzero, 1-D and 2-D, with a
 * bound on the rows.  Usage: nzcount GROUP GROUPS SEED (GROUP a multiple of 32) */
#include "emu.h"

#define T uint
#define WORD_PER_ITEM 0
#include "nonzero.cl"

#define MAX_GROUPS 64

static uint *in, *bits, ndim;
static long *counts, *out, shape[2], *buf[MAX_GROUPS], *lshape[MAX_GROUPS];
static uint *cols[MAX_GROUPS];
static ushort *staged[MAX_GROUPS];
static ulong n, chunk, rows;
static const uint mask = ~0u;

static void run_count(void) { nz_count(in, n, chunk, mask, bits, counts, buf[emu_gid], cols[emu_gid]); }
static void run_write(void)
{
    nz_write(bits, n, chunk, counts, shape, ndim, rows, out, buf[emu_gid], staged[emu_gid],
             lshape[emu_gid]);
}

int main(int argc, char **argv)
{
    size_t group, ngroups;
    emu_args(argc, argv, &group, &ngroups);
    if (ngroups < 1 || ngroups > MAX_GROUPS || group % WORD != 0)
        return 2;
    /* chunks of two or three tiles, the last one short (not a whole word) */
    ulong tile = group * WORD;
    chunk = tile * (ulong)(2 + rand() % 2);
    n = ngroups * chunk - (ulong)(rand() % (int)tile) - 1;
    n -= n % 2; /* shape {n / 2, 2} */
    ulong nchunks = (n + chunk - 1) / chunk;
    in = malloc(n * sizeof *in);
    bits = malloc((n / WORD + 1) * sizeof *bits);
    counts = malloc(nchunks * sizeof *counts);
    out = malloc(2 * n * sizeof *out);
    long *want = malloc((n + 1) * sizeof *want);
    /* runs of zeros and of non-zeros, then random */
    ulong nnz = 0;
    for (ulong k = 0; k < n; k++) {
        in[k] = k % 1000 < 100 ? 0 : k % 1000 < 200 ? 7 : rand() % 3 ? 0 : (uint)rand() | 1;
        if (in[k])
            want[nnz++] = (long)k;
    }
    for (size_t g = 0; g < nchunks; g++) {
        buf[g] = malloc(group * sizeof **buf);
        cols[g] = malloc(group * sizeof **cols);
        staged[g] = malloc(tile * sizeof **staged);
        lshape[g] = malloc(2 * sizeof **lshape);
    }
    emu_launch(nchunks, group, run_count);
    long total = 0;
    for (ulong g = 0; g < nchunks; g++)
        total += counts[g];
    int bad = total != (long)nnz;
    shape[0] = (long)n / 2;
    shape[1] = 2;
    for (ndim = 1; ndim <= 2; ndim++) {
        rows = ndim == 1 ? nnz : nnz - nnz / 3; /* the 2-D rows stop at the bound */
        memset(out, 0xff, 2 * n * sizeof *out);
        emu_launch(nchunks, group, run_write);
        for (ulong r = 0; r < nnz; r++) {
            if (ndim == 1)
                bad += out[r] != want[r];
            else if (r < rows)
                bad += out[2 * r] != want[r] / 2 || out[2 * r + 1] != want[r] % 2;
            else
                bad += out[2 * r] != -1 || out[2 * r + 1] != -1;
        }
    }
    printf("nz_count, nz_write: %lu elements, %lu non-zeros, %lu chunks of %lu, groups of %zu: "
           "%d wrong\n", n, nnz, nchunks, chunk, group, bad);
    return bad || emu_errors;
}
