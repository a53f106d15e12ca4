#!/bin/sh
# cl_races.sh — runs the kernels of cl/ that share local memory (the
# merge paths of segment_nonzero, parents and the reductions, parents and
# the reductions per segment on GPUs, the scan, nonzero's count and write,
# and the offsets checks) as C, one thread per work-item, under
# ThreadSanitizer, in groups of several sizes, and checks their results
# (tests/clrace).  The OpenCL tests run on PoCL, which runs a group's
# work-items one after another in order, so a race between them shows
# only on a GPU; here ThreadSanitizer reports it.
# Skipped (77) where the compiler or the system cannot run ThreadSanitizer.
set -eu
: "${top_builddir:?run through make check}" "${top_srcdir:?run through make check}"
cc=${RAGGED_TEST_CC:-${CC:-cc}}
tmp="$top_builddir/tests/clrace-tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
printf 'int main(void) { return 0; }\n' >"$tmp/probe.c"
if ! "$cc" -fsanitize=thread "$tmp/probe.c" -o "$tmp/probe" 2>/dev/null || ! "$tmp/probe"; then
    echo "SKIP: $cc cannot build or run ThreadSanitizer programs here"
    exit 77
fi
src="$top_srcdir/tests/clrace"
build() { # name source, then -D options
    out=$1 file=$2
    shift 2
    "$cc" -std=gnu11 -O1 -g -fsanitize=thread "$@" -I"$src" -I"$top_srcdir/cl" \
        "$src/$file" "$src/emu.c" -o "$tmp/$out" -lpthread -lm
}
build nzseg nzseg.c
build nzcount nzcount.c
build parents parents.c
build scan scan.c
build offsets offsets.c
build reduce0 reduce.c -DCLASS=0
build reduce1 reduce.c -DCLASS=1
# The kernels as the host builds them for CPU devices (FLAT_BARRIERS=1,
# tested on PoCL, which runs work-items in turn): here at one group size.
build reduce0flat reduce.c -DCLASS=0 -DFLAT_BARRIERS=1
build reduce1flat reduce.c -DCLASS=1 -DFLAT_BARRIERS=1
build offsetsflat offsets.c -DFLAT_BARRIERS=1
# A report of ThreadSanitizer fails the run (exit 66), as a wrong result does.
export TSAN_OPTIONS="halt_on_error=1 exitcode=66"
for seed in 1 2 3; do
    for group in 8 32 64; do
        "$tmp/nzseg" "$group" 3 "$seed"
        "$tmp/parents" "$group" 3 "$seed"
        "$tmp/reduce0" "$group" 5 "$seed"
        "$tmp/reduce1" "$group" 5 "$seed"
        "$tmp/offsets" "$group" 3 "$seed"
    done
    "$tmp/reduce0flat" 32 5 "$seed"
    "$tmp/reduce1flat" 32 5 "$seed"
    "$tmp/offsetsflat" 32 3 "$seed"
    "$tmp/nzcount" 32 3 "$seed" # groups of whole blocks of 32
    "$tmp/nzcount" 64 2 "$seed"
    "$tmp/scan" 32 5000 "$seed"
    "$tmp/scan" 16 777 "$seed"
    "$tmp/scan" 4 1000 "$seed" # 16 chunks: 4 per work-item of scan_partials
done
rm -rf "$tmp"
