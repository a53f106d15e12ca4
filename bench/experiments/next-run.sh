#!/bin/sh
# next-run.sh — a GPU session's run from the top of the tree: times
# warp-shfl.patch (reductions by warp shuffles on NVIDIA) and
# parents-prefetch.patch (parents tiles with pipelined loads), both
# applied, against HEAD, and runs the reduce, parents and faults suites
# on the patched build (their headers say what they change; the two touch
# different ops, so each op's rows show one patch).  Prepare here, in a
# configured tree:
#   git apply bench/experiments/warp-shfl.patch bench/experiments/parents-prefetch.patch
#   BASE=HEAD sh bench/gpu-prepare.sh
# (the patched working tree becomes gpu-carry's main tarball, HEAD its
# base), then the device tool's `run` with carry ["gpu-carry"] and
# `sh bench/experiments/next-run.sh`.  One tarball comes back in $OUT:
# gpu-out.tar.gz (patched, HEAD, patched again, a profile of sums and
# parents by merge path, the suites).  Undo the patches here with
# `git apply -R` of both.  For a dry run on PoCL:
# SIZES=65536 SUITES=context OUT=/tmp/x sh bench/experiments/next-run.sh
# (fillprobe.c, the store probe of the twenty-sixth session, runs through
# PROBE=fillprobe of bench/gpu.sh once built into gpu-carry.)
set -u
: "${OUT:?OUT: where the tarball goes}"
rm -rf /tmp/next-run-1
SIZES=${SIZES:-134217728} BACKENDS=opencl OPS=parents,local_index,sum,argmax,min \
    BENCH_ARGS="--dists short,medium,powerlaw,long,halfempty --strategies auto,merge-path,per-segment" \
    CUPY=0 CHECK=0 PACK=$OUT/gpu-out.tar.gz \
    PROFILE_ARGS="--ops sum,parents --dists powerlaw,short --strategies merge-path" \
    SUITES=${SUITES:-"reduce parents faults"} SUITE_S=240 \
    timeout 420 sh bench/gpu.sh gpu-carry /tmp/next-run-1
