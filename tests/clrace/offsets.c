/* offsets.c — offsets.cl's offsets_check and lengths_total (per-group
 * reductions in local memory) as threads, against serial loops, on good
 * offsets, offsets that descend or do not start at 0, and lengths with
 * negatives or a total that saturates.
 * Usage: offsets GROUP GROUPS SEED */
#include "emu.h"

#define IN_T long
#define OUT_T long
#include "offsets.cl"

#define MAX_GROUPS 64

static long *in, *out, *buf[MAX_GROUPS];
static ulong n;

/* The harness's own saturating add (not the kernel file's sat_add, so
 * that a bug there cannot hide in the reference). */
static ulong ref_sat_add(ulong a, ulong b) { return b > ULONG_MAX - a ? ULONG_MAX : a + b; }

static void run_check(void) { offsets_check(in, n, buf[emu_gid], out); }
static void run_total(void) { lengths_total(in, n, buf[emu_gid], out); }

int main(int argc, char **argv)
{
    size_t group, ngroups;
    emu_args(argc, argv, &group, &ngroups);
    if (ngroups < 1 || ngroups > MAX_GROUPS)
        return 2;
    for (size_t g = 0; g < ngroups; g++)
        buf[g] = malloc(group * sizeof **buf);
    out = malloc(3 * ngroups * sizeof *out);
    int bad = 0, saturated = 0;
    for (int variant = 0; variant < 4; variant++) {
        ulong nsegs = 300 + (ulong)(rand() % 300);
        in = emu_offsets(nsegs, 9, 40);
        n = nsegs + 1;
        /* One segment far longer than the rest: the longest has one home. */
        ulong at = (ulong)rand() % nsegs;
        for (ulong i = at + 1; i <= nsegs; i++)
            in[i] += 1000;
        /* 0: good; 1: o[0] != 0; 2: one descent; 3: two (the first counts). */
        if (variant == 1)
            in[0] = 1;
        for (int d = 0; d < variant - 1; d++) {
            ulong i = 1 + (ulong)rand() % nsegs;
            in[i] = in[i - 1] - 1 - rand() % 3;
        }
        long want_bad = LONG_MAX, want_longest = 0;
        for (ulong i = 0; i < n && want_bad == LONG_MAX; i++) {
            if (i == 0 ? in[0] != 0 : in[i] < in[i - 1])
                want_bad = (long)i;
            else if (i > 0)
                want_longest = max(want_longest, in[i] - in[i - 1]);
        }
        memset(out, 0xA5, 3 * ngroups * sizeof *out);
        emu_launch(ngroups, group, run_check);
        long got_bad = LONG_MAX, got_longest = 0;
        for (size_t g = 0; g < ngroups; g++) {
            got_bad = min(got_bad, out[g]);
            got_longest = max(got_longest, out[ngroups + g]);
        }
        int wrong = got_bad != want_bad || (want_bad == LONG_MAX && got_longest != want_longest);
        if (wrong)
            printf("offsets_check, variant %d: first bad %ld (want %ld), longest %ld (want %ld)\n",
                   variant, got_bad, want_bad, got_longest, want_longest);
        bad += wrong;

        /* Lengths: 0: all >= 0; 1: some negative; 2: a total that
         * saturates; 3: both. */
        for (ulong i = 0; i < nsegs; i++)
            in[i] = in[i + 1] - in[i] < 0 ? 0 : in[i + 1] - in[i];
        n = nsegs;
        if (variant & 1)
            for (int d = 0; d < 3; d++)
                in[(ulong)rand() % nsegs] = -1 - rand() % 5;
        if (variant & 2) { /* four in a row: at least 2^65 - 4, so it saturates */
            ulong at = (ulong)rand() % (nsegs - 3);
            for (ulong d = 0; d < 4; d++)
                in[at + d] = LONG_MAX;
        }
        long want_neg = LONG_MAX, want_max = 0;
        ulong want_sum = 0;
        for (ulong i = 0; i < n; i++) {
            if (in[i] < 0)
                want_neg = min(want_neg, (long)i);
            else
                want_sum = ref_sat_add(want_sum, (ulong)in[i]);
            want_max = max(want_max, in[i]);
        }
        memset(out, 0xA5, 3 * ngroups * sizeof *out);
        emu_launch(ngroups, group, run_total);
        long got_neg = LONG_MAX, got_max = 0;
        ulong got_sum = 0;
        for (size_t g = 0; g < ngroups; g++) {
            got_neg = min(got_neg, out[g]);
            got_sum = ref_sat_add(got_sum, (ulong)out[ngroups + g]);
            got_max = max(got_max, out[2 * ngroups + g]);
        }
        wrong = got_neg != want_neg || got_sum != want_sum || got_max != want_max;
        if (wrong)
            printf("lengths_total, variant %d: first negative %ld (want %ld), total %lu (want %lu),"
                   " longest %ld (want %ld)\n",
                   variant, got_neg, want_neg, got_sum, want_sum, got_max, want_max);
        saturated += want_sum == ULONG_MAX;
        bad += wrong;
        free(in);
    }
    printf("offsets_check, lengths_total: groups of %zu, 4 variants (%d totals saturated): %d "
           "wrong\n",
           group, saturated, bad);
    return bad || emu_errors;
}
