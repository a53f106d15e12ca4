#!/bin/sh
# next-run.sh — a GPU session's first run from the top of the tree: the
# rows still short of issue 7's targets (sums on power-law lengths;
# parents and local index on short, power-law and half-empty lengths),
# the working tree against HEAD, each kernel's device time for the sums
# on power-law and medium lengths by both policies (merge path's
# reduce_chunks took about 707 us there against 260 us for a plain sum,
# H200, twenty-ninth session), and the reduce and parents suites (whose
# whole runs on the GPU the twenty-ninth session could not afford).
# Prepare here, in a configured tree, with what is to be timed in the
# working tree (uncommitted, or a patch applied):
#   BASE=HEAD sh bench/gpu-prepare.sh
# (PATCHES="bench/experiments/NAME.patch" times a kernel patch as well;
# with nothing to compare, BASE=HEAD~1 times the last commit), then the
# device tool's `run` with carry ["gpu-carry"] and
# `sh bench/experiments/next-run.sh`, timeout about 420.  One tarball
# comes back in $OUT: gpu-out.tar.gz.  For a dry run on PoCL (slow: cold
# kernel builds): SIZES=65536 SUITES=context OUT=/tmp/x sh bench/experiments/next-run.sh
# (fillprobe.c, the store probe of the twenty-sixth session, runs through
# PROBE=fillprobe of bench/gpu.sh once built into gpu-carry.)
set -u
: "${OUT:?OUT: where the tarball goes}"
rm -rf /tmp/next-run-1
SIZES=${SIZES:-134217728} BACKENDS=opencl OPS=parents,local_index,sum \
    BENCH_ARGS="--dists short,medium,powerlaw,halfempty --strategies auto,merge-path,per-segment" \
    CUPY=0 CHECK=0 PACK=$OUT/gpu-out.tar.gz \
    PROFILE_ARGS="--ops sum --dists powerlaw,medium --strategies merge-path,per-segment" \
    SUITES=${SUITES:-"reduce parents"} SUITE_S=240 \
    timeout 420 sh bench/gpu.sh gpu-carry /tmp/next-run-1
