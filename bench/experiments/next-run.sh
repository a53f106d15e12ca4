#!/bin/sh
# next-run.sh — a GPU session's first run from the top of the tree: the
# rows still short of issue 7's targets (sums on power-law lengths;
# parents and local index on short, power-law and half-empty lengths) and
# what the thirtieth session (no GPU) built for them, untimed:
#  - HEAD's per-segment parents, local index and starts on GPUs
#    (parents.cl's seg_staged and seg_pieces; the automatic choice still
#    takes merge path): the "per-segment" rows against BASE's;
#  - reduce-blocks.patch (host and kernels, so a build of its own): sums
#    per segment as one kernel staging blocks of 256 segments in local
#    memory (reduce.cl's reduce_blocks): its "per-segment" sum rows,
#    against HEAD's, on power-law lengths above all (merge path's
#    reduce_chunks took about 707 us there against 260 us for a plain
#    sum; per segment 0.85 ms, H200, twenty-ninth session).
#  - HEAD's reduce_chunks (merge path), whose loop the thirty-second
#    session reshaped (one scan of the shares, for PoCL's compile time;
#    the same barriers under the same branches on GPUs): its "merge-path"
#    sum rows against BASE's, which should not move.
# Each kernel's device time for the sums on power-law and medium lengths
# by both policies, then the reduce and parents suites on HEAD (the
# patch's tests run on PoCL only, so apply it and run the reduce suite on
# the GPU before landing it).
# Prepare here, in a configured tree at HEAD with a clean working tree:
#   BASE=9712142 PATCHES=bench/experiments/reduce-blocks.patch sh bench/gpu-prepare.sh
# then the device tool's `run` with carry ["gpu-carry"] and
# `sh bench/experiments/next-run.sh`, timeout about 480.  One tarball
# comes back in $OUT: gpu-out.tar.gz.  For a dry run on PoCL (slow: cold
# kernel builds): SIZES=65536 SUITES=context OUT=/tmp/x sh bench/experiments/next-run.sh
# (fillprobe.c, the store probe of the twenty-sixth session, runs through
# PROBE=fillprobe of bench/gpu.sh once built into gpu-carry.)
set -u
: "${OUT:?OUT: where the tarball goes}"
rm -rf /tmp/next-run-1
SIZES=${SIZES:-134217728} BACKENDS=opencl OPS=parents,local_index,sum \
    BENCH_ARGS="--dists short,medium,long,powerlaw,halfempty,ones --strategies auto,merge-path,per-segment" \
    CUPY=0 CHECK=0 PACK=$OUT/gpu-out.tar.gz \
    PROFILE_ARGS="--ops sum --dists powerlaw,medium --strategies merge-path,per-segment" \
    SUITES=${SUITES:-"reduce parents"} SUITE_S=180 \
    timeout 480 sh bench/gpu.sh gpu-carry /tmp/next-run-1
