#!/bin/sh
# next-run.sh — a GPU session's run from the top of the tree (BENCHMARKS.md,
# section "twenty-sixth 2026-11-27 session"), after `BASE=<commit before
# the change> sh bench/gpu-prepare.sh` here, with gpu-carry carried there:
# the device tool's `run` with carry ["gpu-carry"] and `sh
# bench/experiments/next-run.sh`.  One tarball comes back in $OUT:
# gpu-out.tar.gz (main, the base, main again, the profile of argmax by
# merge path, five suites side by side).  For a dry run on PoCL:
# SIZES=65536 SUITES=context OUT=/tmp/x sh bench/experiments/next-run.sh
# (fillprobe.c, the store probe of the twenty-sixth session, runs through
# PROBE=fillprobe of bench/gpu.sh once built into gpu-carry.)
set -u
: "${OUT:?OUT: where the tarball goes}"
rm -rf /tmp/next-run-1
SIZES=${SIZES:-134217728} BACKENDS=opencl OPS=parents,sum,argmax,min \
    BENCH_ARGS="--dists short,medium,powerlaw,long --strategies auto,merge-path" \
    CUPY=0 CHECK=0 PACK=$OUT/gpu-out.tar.gz \
    PROFILE_ARGS="--ops argmax --dists long --strategies merge-path" \
    SUITES=${SUITES:-"parents reduce array faults context"} SUITE_S=180 \
    timeout 250 sh bench/gpu.sh gpu-carry /tmp/next-run-1
