#!/bin/sh
# next-run.sh — the next GPU session's one run (BENCHMARKS.md, section
# "twenty-fourth 2026-11-27 session"), on the GPU machine from the top of
# the tree, after `PATCHES="..." sh bench/gpu-prepare.sh` here (the list
# is in that section) and with gpu-carry carried there: the device tool's
# `run` with carry ["gpu-carry"], timeout_s 600 and
# `sh bench/experiments/next-run.sh`.  Two tarballs come back in $OUT:
# gpu-out.tar.gz (main, the builds, the option and kernel variants, main
# again, the profile, the suites) and cupy-out.tar.gz (main's automatic
# choices and CuPy on the same lengths).  Each part has a time limit of
# its own, so that a slow one leaves time for the other.  For a dry run
# on PoCL: SIZES=65536 SUITES=context XP=numpy (numpy on PATH)
# OPTION_VARIANTS="regs32:-DRAGGED_DRY=32" OUT=/tmp/x sh bench/experiments/next-run.sh
set -u
: "${OUT:?OUT: where the tarballs go}"
sizes=${SIZES:-134217728}
ops=parents,local_index,sum,argmax
SIZES=$sizes BACKENDS=opencl OPS=$ops \
    BENCH_ARGS="--dists short,medium,powerlaw,halfempty,long --strategies auto,per-segment,merge-path" \
    OPTION_VARIANTS=${OPTION_VARIANTS-"regs32:-cl-nv-maxrregcount=32 regs48:-cl-nv-maxrregcount=48"} \
    CUPY=0 CHECK=0 PACK=$OUT/gpu-out.tar.gz \
    SUITES=${SUITES:-"parents reduce nonzero list transfers segd offsets array nested context faults"} \
    SUITE_S=150 \
    PROFILE_ARGS="--ops parents,sum,argmax --dists short,medium,powerlaw --strategies auto,per-segment" \
    timeout 400 sh bench/gpu.sh gpu-carry /tmp/next-run-1
# The second part times main alone: the builds and variants stay out.
mkdir -p /tmp/next-run-moved
mv gpu-carry/variants gpu-carry/builds gpu-carry/base /tmp/next-run-moved/ 2>/dev/null
SIZES=$sizes BACKENDS=opencl OPS=$ops \
    BENCH_ARGS="--dists short,medium,powerlaw,halfempty --strategies auto" \
    CHECK=0 XP=${XP:-cupy} PACK=$OUT/cupy-out.tar.gz \
    timeout 180 sh bench/gpu.sh gpu-carry /tmp/next-run-2
