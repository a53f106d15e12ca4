#!/bin/sh
# tsan.sh — the OpenMP backend's tests under ThreadSanitizer, with LLVM's
# Archer telling it how OpenMP synchronises (barriers, criticals,
# reductions); without Archer it reports the runtime's own locks as races.
# Run from the top of a tree that clang built with
#     CFLAGS="-O1 -g -fsanitize=thread -DRG_OMP_MIN_PARALLEL=1" LDFLAGS=-fsanitize=thread
# (the define runs even tiny inputs in parallel), as .ci/run does.  The
# default tcases leave out those that take many minutes under ThreadSanitizer
# on two cores (parents big: tens of millions of elements checked serially).
# Any report fails the run.  Usage: sh tests/tsan.sh [SUITE:TCASE ...]
# (RAGGED_TEST_JOBS: how many cases run at once; default: the cores)
set -eu
lib=lib/.libs/libragged.so
# A build without ThreadSanitizer would pass without checking anything.
if ! nm -D "$lib" 2>/dev/null | grep -q __tsan_func_entry; then
    echo "tsan.sh: $lib is not built with -fsanitize=thread" >&2
    exit 1
fi
# Archer comes with the LLVM OpenMP runtime the library uses, beside it.
omp=$(ldd "$lib" | sed -n 's/.*libomp\.so[^ ]* => \([^ ]*\) .*/\1/p' | head -n 1)
if [ -z "${RAGGED_ARCHER:-}" ] && [ -z "$omp" ]; then
    echo "tsan.sh: $lib does not use LLVM's OpenMP runtime (build with clang)" >&2
    exit 1
fi
archer=${RAGGED_ARCHER:-$(dirname "$(readlink -f "$omp")")/libarcher.so}
if [ ! -f "$archer" ]; then
    echo "tsan.sh: no $archer (Debian: apt-get install libomp-dev); set RAGGED_ARCHER" >&2
    exit 1
fi
cases=${*:-"reduce:big nonzero:nonzero array:basics array:errors context:create
    context:strings context:environment offsets:validate offsets:lengths offsets:known segd:segd
    parents:strategies parents:errors nonzero:segments nonzero:errors reduce:values reduce:small
    reduce:windows reduce:errors list:operations list:random list:arithmetic nested:nested
    transfers:counts"}
# Reports from inside the uninstrumented runtime are left out; the
# huge-allocation tests want NULL from malloc, not an abort.
export TSAN_OPTIONS="ignore_noninstrumented_modules=1 allocator_may_return_null=1 exitcode=66"
export OMP_TOOL_LIBRARIES="$archer" ARCHER_OPTIONS=verbose=1
# OpenCL's threads are PoCL's, not instrumented; its kernels' races are
# tests/cl_races.sh's.
export RAGGED_TEST_REQUIRE_OPENCL=0 RAGGED_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1
log=tests/tsan.log
: >"$log"
# The cases run in RAGGED_TEST_JOBS processes at once (default: the cores),
# in the order given: the default list starts with its two longest (reduce
# big took 434 s and nonzero 180 s of a 913 s run, one case at a time).
jobs=${RAGGED_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
dir=tests/tsan-cases
rm -rf "$dir"
mkdir -p "$dir"
# shellcheck disable=SC2016,SC2086 # the inner script expands its own arguments; cases split
printf '%s\n' $cases | xargs -P "$jobs" -n 1 sh -c '
    f=$1/$(printf %s "$2" | tr : _)
    start=$(date +%s)
    CK_RUN_SUITE=${2%%:*} CK_RUN_CASE=${2#*:} ./tests/check_ragged >"$f.out" 2>&1 && rc=0 || rc=$?
    echo "$rc $(($(date +%s) - start))" >"$f.rc"' tsan-case "$dir"
failed=0
for sc in $cases; do
    f=$dir/$(printf %s "$sc" | tr : _)
    rc=1 secs='?'
    [ -f "$f.rc" ] && read -r rc secs <"$f.rc"
    out=$(cat "$f.out" 2>/dev/null || true)
    printf '%s\n' "$out" >>"$log"
    summary=$(printf '%s\n' "$out" | grep -E '^[0-9]+%: Checks: [1-9]' || true)
    reports=$(printf '%s\n' "$out" | grep -c 'WARNING: ThreadSanitizer' || true)
    echo "$sc: ${summary:-no checks ran}, $reports reports, $secs s"
    [ "$rc" -eq 0 ] && [ -n "$summary" ] && [ "$reports" -eq 0 ] || failed=1
done
# Archer says so when OpenMP starts (not in tcases that never start it).
if ! grep -q 'Archer detected OpenMP application' "$log"; then
    echo "tsan.sh: Archer was not loaded ($archer)" >&2
    failed=1
fi
[ "$failed" -eq 0 ] || { echo "tsan.sh: failures or reports: see $log" >&2; exit 1; }
