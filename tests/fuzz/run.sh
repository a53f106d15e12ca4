#!/bin/sh
# tests/fuzz/run.sh [SECONDS] — fuzzes ragged with tests/fuzz/fuzz_ragged.c
# (clang's libFuzzer, ASan and UBSan): builds the library and the target in
# a copy of this tree, then fuzzes SECONDS (default 120) in each of four
# runs sharing one corpus: OpenMP, OpenMP without its AVX-512 paths, OpenCL,
# and OpenCL running the GPUs' kernels (the last two skipped when there is
# no device, unless RAGGED_TEST_REQUIRE_OPENCL=1).
# The library is built with RG_OMP_MIN_PARALLEL=1 so that the small inputs
# run on every thread, and the target sets 1 to 5 threads per input.
#
# Exits non-zero on the first finding; the input that found it is kept as
# $FUZZ_WORK/<run>-crash-* (FUZZ_WORK: a new temporary folder, kept then).
# Replay one with: $FUZZ_WORK/fuzz_ragged FILE.  FUZZ_CACHE: the OpenCL
# kernel cache to use (say, tests/cache after make check: no cold builds).
# FUZZ_SEED: libFuzzer's seed (default 1, as CI runs it; another seed
# explores other inputs in the same time).
# Needs clang with libFuzzer, libomp-dev and autotools; the tests' packages.
set -eu
secs=${1:-120}
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${FUZZ_WORK:-$(mktemp -d)}
mkdir -p "$work/src" "$work/corpus"

# The tree as it is, edits included, without build outputs.
(cd "$src" && git ls-files -co --exclude-standard -z | xargs -0 tar cf -) | (cd "$work/src" && tar xf -)
cd "$work/src"
autoreconf -fi >/dev/null 2>&1
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
./configure -q CC=clang --disable-shared \
    CFLAGS="-O1 -g $san -fsanitize=fuzzer-no-link -DRG_OMP_MIN_PARALLEL=1" LDFLAGS="$san"
make -j"$(nproc)" lib/libragged.la > "$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; exit 1; }
clang -O1 -g $san -fsanitize=fuzzer -fopenmp -Wall -Wextra -Iinclude \
    tests/fuzz/fuzz_ragged.c lib/.libs/libragged.a -ldl -lm -o "$work/fuzz_ragged"

# Leaks are checked (libFuzzer does, input by input, and at exit); LLVM's
# OpenMP runtime and the OpenCL runtime keep memory of their own (PoCL's
# LLVM allocates through C++'s operator new, which ragged, in C, never calls).
supp=$work/lsan.supp
cat tests/lsan.supp > "$supp"
printf 'leak:libomp.so\nleak:libstdc++.so\n' >> "$supp"
export LSAN_OPTIONS="suppressions=$supp:print_suppressions=0"
export UBSAN_OPTIONS=print_stacktrace=1
export RAGGED_KERNEL_PATH="$work/src/cl"
export RAGGED_CACHE_DIR="${FUZZ_CACHE:-$work/cache}"

fuzz() { # name, then environment assignments
    name=$1
    shift
    echo "== fuzz: $name, $secs s"
    rc=0
    env "$@" "$work/fuzz_ragged" -max_total_time="$secs" -seed="${FUZZ_SEED:-1}" -max_len=4096 \
        -timeout=120 -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$work/$name-" \
        "$work/corpus" > "$work/$name.log" 2>&1 || rc=$?
    grep -a '^stat::number_of_executed_units\|^Done' "$work/$name.log" || true
    if [ "$rc" = 77 ] && [ "${RAGGED_TEST_REQUIRE_OPENCL:-0}" != 1 ]; then
        echo "skipped: no OpenCL device"
    elif [ "$rc" != 0 ]; then
        grep -a -v '^#[0-9]' "$work/$name.log" | tail -n 60
        echo "fuzz: $name found a failure (rc $rc); inputs and log in $work" >&2
        exit 1
    fi
}
fuzz openmp FUZZ_BACKEND=openmp
fuzz openmp-noavx512 FUZZ_BACKEND=openmp RAGGED_AVX512=0
fuzz opencl FUZZ_BACKEND=opencl
# The kernels built for GPUs, on the CPU device, with 3 work-groups so that
# their loops over tiles, chunks and pieces run many rounds.
fuzz opencl-gpu-kernels FUZZ_BACKEND=opencl RAGGED_OPENCL_CPU_KERNELS=0 RAGGED_OPENCL_MAX_GROUPS=3
echo "== fuzz: no failures; corpus of $(ls "$work/corpus" | wc -l) inputs in $work"
