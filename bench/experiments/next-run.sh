#!/bin/sh
# next-run.sh — a GPU session's run from the top of the tree: times
# warp-shfl.patch (reductions with warp shuffles on NVIDIA, see its
# header) against HEAD and runs the reduce and faults suites on the
# patched build.  Prepare here:
#   git apply bench/experiments/warp-shfl.patch
#   BASE=HEAD sh bench/gpu-prepare.sh
# (the patched working tree becomes gpu-carry's main tarball, HEAD its
# base), then the device tool's `run` with carry ["gpu-carry"] and
# `sh bench/experiments/next-run.sh`.  One tarball comes back in $OUT:
# gpu-out.tar.gz (patched, HEAD, patched again, the profile of sums by
# merge path on power-law lengths, the suites).  Undo the patch here with
# `git apply -R bench/experiments/warp-shfl.patch`.  For a dry run on PoCL:
# SIZES=65536 SUITES=context OUT=/tmp/x sh bench/experiments/next-run.sh
# (fillprobe.c, the store probe of the twenty-sixth session, runs through
# PROBE=fillprobe of bench/gpu.sh once built into gpu-carry.)
set -u
: "${OUT:?OUT: where the tarball goes}"
rm -rf /tmp/next-run-1
SIZES=${SIZES:-134217728} BACKENDS=opencl OPS=sum,argmax,min \
    BENCH_ARGS="--dists short,medium,powerlaw,long,halfempty --strategies auto,merge-path,per-segment" \
    CUPY=0 CHECK=0 PACK=$OUT/gpu-out.tar.gz \
    PROFILE_ARGS="--ops sum --dists powerlaw,medium --strategies merge-path,per-segment" \
    SUITES=${SUITES:-"reduce faults"} SUITE_S=240 \
    timeout 420 sh bench/gpu.sh gpu-carry /tmp/next-run-1
