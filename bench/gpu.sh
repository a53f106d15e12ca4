#!/bin/sh
# gpu.sh — run on an NVIDIA GPU machine from the top of the source tree,
# with DIR (default gpu-carry) made by bench/gpu-prepare.sh: builds the
# tarball against the carried packages (or takes the build carried in
# DIR/prebuilt where it runs here), runs the test suite (OpenCL on the
# GPU: NVIDIA's platform comes first), the benchmark on OpenCL and OpenMP,
# and bench/compare_gpu.py (CuPy) on the same lengths, in one go.
# Results go to OUT (default gpu-out), each file as soon as its step ends.
# Environment: SIZES (default 16777216,134217728), OPS (default all),
# BACKENDS (default opencl,openmp), XP (cupy, or numpy for a dry run),
# CHECK (0 skips make check), SUITES (instead of make check, these Check
# suites of tests/check_ragged only, run side by side, e.g. "nonzero
# reduce"; SUITE_S seconds each at most), PROFILE_ARGS (ragged_bench
# arguments of a run with RAGGED_PROFILE=1 into profile.txt: each kernel's
# device time, e.g. "--ops parents --dists short --strategies merge-path"),
# CUPY (0 skips compare_gpu.py), AGAIN (0 skips the second run of the new
# library), PACK (below), BENCH_ARGS (more ragged_bench arguments, e.g.
# "--dists medium --strategies auto,per-segment": device time is scarce),
# OPTION_VARIANTS (below: this tree again with other build options),
# PROBE (a program in DIR to run, e.g. bench/experiments/fillprobe built
# there as DIR/fillprobe).
# The benchmark runs before the tests, so that a time limit cuts the
# tests, not the figures.  Where DIR/base holds an older tarball (BASE=
# of gpu-prepare.sh), it is built too, and this tree's benchmark program
# runs on the old library and kernels right after the new, then on the new
# again, into bench-base.txt and bench-again.txt: old and new measured in
# one session by the same program.  Where DIR/variants holds kernel folders
# (PATCHES= of gpu-prepare.sh), this tree's library runs with each
# folder's kernels right after its own, into bench-NAME.txt, and then with
# its own again into bench-again.txt.  A patch that changes the host too
# (DIR/builds/NAME) is built like BASE and timed into bench-NAME.txt.
set -eu
dir=$(cd "${1:-gpu-carry}" && pwd)
mkdir -p "${2:-gpu-out}"
out=$(cd "${2:-gpu-out}" && pwd)
src=$(pwd)
sizes=${SIZES:-16777216,134217728}
ops=${OPS:-lengths,from_lengths,parents,local_index,starts,nonzero,sum,min,argmax}

# The packages, unpacked into a private prefix (never /).
prefix=$(mktemp -d)
for deb in "$dir"/debs/*.deb; do
    if command -v dpkg-deb >/dev/null; then
        dpkg-deb -x "$deb" "$prefix"
    else
        tmp=$(mktemp -d)
        (cd "$tmp" && ar x "$deb" && tar xf data.tar.* -C "$prefix")
        rm -rf "$tmp"
    fi
done
lib=$prefix/usr/lib/x86_64-linux-gnu

# NVIDIA's OpenCL: containers often ship the driver library without its
# ICD file; the carried ocl-icd loader then finds it through OCL_ICD_VENDORS
# (a copy of the installed ICD files, PoCL's say, plus nvidia.icd).
if ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
    mkdir -p "$prefix/vendors"
    cp /etc/OpenCL/vendors/*.icd "$prefix/vendors/" 2>/dev/null || true
    echo libnvidia-opencl.so.1 > "$prefix/vendors/nvidia.icd"
    export OCL_ICD_VENDORS=$prefix/vendors
fi
export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{ echo "== $(date -u)"; uname -a; nvidia-smi 2>&1 || true; echo "OCL_ICD_VENDORS=${OCL_ICD_VENDORS:-}"; } > "$out/machine.txt"

# Builds a tarball in a fresh folder and prints where; takes its tree
# from prebuilt/ beside it instead where one is there and its benchmark
# program runs here (bench/gpu-prepare.sh), unless `make check` is to run
# (its Makefiles name the folder it was built in).
build_tarball() {
    pre=$(dirname "$1")/prebuilt/$(basename "$1")
    if [ -f "$pre" ] && { [ -n "${SUITES:-}" ] || [ "${CHECK:-1}" = 0 ]; }; then
        b=$(mktemp -d)
        tar xzf "$pre" -C "$b"
        if (cd "$b"/ragged-*/ && LD_LIBRARY_PATH=$PWD/lib/.libs:$LD_LIBRARY_PATH \
                ./bench/.libs/ragged_bench --backends openmp --sizes 65536 --ops parents \
                --dists short --reps 1 > /dev/null 2>&1); then
            echo "prebuilt $pre: used" >> "$out/steps.txt"
            cd "$b"/ragged-*/
            pwd
            return
        fi
        echo "prebuilt $pre: its benchmark does not run here; building" >> "$out/steps.txt"
    fi
    b=$(mktemp -d)
    tar xzf "$1" -C "$b"
    cd "$b"/ragged-*/
    ./configure -q CPPFLAGS="-I$prefix/usr/include" LDFLAGS="-L$lib" \
        CHECK_CFLAGS="-I$prefix/usr/include" \
        CHECK_LIBS="$lib/libcheck_pic.a $lib/libsubunit.a -lm -lrt -pthread" \
        > "$out/build.txt" 2>&1 || { cat config.log >> "$out/build.txt"; exit 1; }
    make -j"$(nproc)" >> "$out/build.txt" 2>&1 || { tail -50 "$out/build.txt" >&2; exit 1; }
    rm "$out/build.txt" # kept only when the build fails
    pwd
}

# bench TREE FILE [ARG...]: this tree's benchmark program on TREE's library
# and kernels into FILE (and a CSV beside it), with further arguments for
# ragged_bench.  KDIR=FOLDER: kernels from there instead of TREE/cl;
# OPTS=OPTIONS: RAGGED_OPENCL_BUILD_OPTIONS.
bench() {
    t=$1 f=$2
    shift 2
    (cd "$t" && LD_LIBRARY_PATH=$PWD/lib/.libs:$LD_LIBRARY_PATH RAGGED_KERNEL_PATH=${KDIR:-$PWD/cl} \
        RAGGED_OPENCL_BUILD_OPTIONS=${OPTS:-} \
        "$tree/bench/.libs/ragged_bench" \
        --backends "${BACKENDS:-opencl,openmp}" --sizes "$sizes" --ops "$ops" --reps 5 \
        --csv "${f%.txt}.csv" ${BENCH_ARGS:-} "$@" > "$f" 2>&1) || echo "ragged_bench failed: $?" >> "$f"
}

# Seconds since the start, per step, into steps.txt (device time is scarce).
t0=$(date +%s)
# PACK=FILE: after each step, every result so far (not the dumped data)
# also goes into the tarball FILE, e.g. $OUT/gpu-out.tar.gz with OUT a
# folder outside the device tool's $OUT, which returns at most 8 files:
# a run cut short by its time limit still returns what it had.
pack() {
    if [ -n "${PACK:-}" ]; then
        tar czf "$PACK.tmp" -C "$out" --exclude=./data . && mv "$PACK.tmp" "$PACK"
    fi
}
trap pack EXIT
step() {
    echo "$1 $(($(date +%s) - t0)) s" >> "$out/steps.txt"
    pack
}
tree=$(build_tarball "$dir"/ragged-*.tar.gz)
base=
for t in "$dir"/base/ragged-*.tar.gz; do
    if [ -f "$t" ]; then base=$(build_tarball "$t"); fi
done
# Patches that change the host too (DIR/builds/NAME): each its own build.
builds=
for t in "$dir"/builds/*/ragged-*.tar.gz; do
    if [ -f "$t" ]; then
        name=$(basename "$(dirname "$t")")
        if b=$(build_tarball "$t"); then
            builds="$builds $name=$b"
        else # an experiment that does not build must not cost the run
            echo "build $name: failed" >> "$out/steps.txt"
        fi
    fi
done
step built
cd "$tree"
bench "$tree" "$out/bench.txt" --dump "$out/data"
step bench
again=
if [ -n "$base" ]; then
    bench "$base" "$out/bench-base.txt"
    step "bench base"
    again=1
fi
for nb in $builds; do
    bench "${nb#*=}" "$out/bench-${nb%%=*}.txt"
    step "bench ${nb%%=*}"
    again=1
done
# OPTION_VARIANTS="NAME:OPTION ...": this tree's library again with
# RAGGED_OPENCL_BUILD_OPTIONS=OPTION (one option each, e.g.
# regs64:-cl-nv-maxrregcount=64), into bench-NAME.txt.
for nv in ${OPTION_VARIANTS:-}; do
    OPTS=${nv#*:}
    bench "$tree" "$out/bench-${nv%%:*}.txt"
    OPTS=
    step "bench ${nv%%:*}"
    again=1
done
for v in "$dir"/variants/*/; do
    if [ -d "$v" ]; then
        name=$(basename "$v")
        KDIR=$(cd "$v" && pwd)
        bench "$tree" "$out/bench-$name.txt"
        KDIR=
        step "bench $name"
        again=1
    fi
done
if [ -n "$again" ] && [ "${AGAIN:-1}" != 0 ]; then
    bench "$tree" "$out/bench-again.txt"
    step "bench again"
fi
if [ "${CUPY:-1}" != 0 ]; then
    python3 "$src/bench/compare_gpu.py" "$out/data" --verify --xp "${XP:-cupy}" \
        --csv "$out/cupy.csv" > "$out/cupy.txt" 2>&1 || echo "compare_gpu failed: $?" >> "$out/cupy.txt"
    step cupy
fi
if [ -n "${PROFILE_ARGS:-}" ]; then
    # Each kernel's device time (RAGGED_PROFILE=1) over a few bench rows.
    (LD_LIBRARY_PATH=$PWD/lib/.libs:$LD_LIBRARY_PATH RAGGED_KERNEL_PATH=$PWD/cl RAGGED_PROFILE=1 \
        ./bench/.libs/ragged_bench --backends opencl --sizes "$sizes" --reps 1 $PROFILE_ARGS \
        > "$out/profile.txt" 2>&1) || echo "profile failed: $?" >> "$out/profile.txt"
    step profile
fi
if [ -n "${PROBE:-}" ]; then
    # A program of bench/experiments (built on the build machine, carried
    # in DIR) run with the carried OpenCL loader, into probe.txt.
    ("$dir/$PROBE" > "$out/probe.txt" 2>&1) || echo "probe failed: $?" >> "$out/probe.txt"
    step probe
fi
status=0
if [ -n "${SUITES:-}" ]; then
    # All at once, each under SUITE_S seconds (default 240): on an H200 the
    # suites took 4 to 150 s side by side, parents over 185 s.  Each writes a
    # TAP log as it goes, so a suite cut short still shows what passed.
    # A prebuilt tree has them (and no object files for make to look at).
    if [ ! -x tests/.libs/check_ragged ] || [ ! -f tests/.libs/libclfail.so ]; then
        make -j"$(nproc)" tests/check_ragged tests/libclfail.la > /dev/null 2>&1 || status=$?
    fi
    # The exit status is caught with ||: under set -e a failed or timed-out
    # suite would otherwise end its subshell before it says so.
    for s in $SUITES; do
        (rc=0
         CK_RUN_SUITE=$s CK_TAP_LOG_FILE_NAME=$PWD/tap_$s.txt RAGGED_KERNEL_PATH=$PWD/cl \
            RAGGED_CACHE_DIR=$PWD/tests/cache RAGGED_TEST_CLFAIL=$PWD/tests/.libs/libclfail.so \
            RAGGED_TEST_REQUIRE_OPENCL=1 LD_LIBRARY_PATH=$PWD/lib/.libs:$LD_LIBRARY_PATH \
            timeout "${SUITE_S:-240}" ./tests/.libs/check_ragged \
            > "log_$s.txt" 2>&1 || rc=$?
         echo "suite $s: exit $rc" > "rc_$s.txt") &
    done
    wait
    for s in $SUITES; do
        { cat "rc_$s.txt" || echo "suite $s: no exit status"
          echo "ok $(grep -c '^ok' "tap_$s.txt"), not ok $(grep -c '^not ok' "tap_$s.txt")"
          grep '^not ok' "tap_$s.txt" || true; tail -2 "log_$s.txt"; } >> "$out/check.txt" 2>&1 || true
        cp "tap_$s.txt" "$out/" 2>/dev/null || true
        grep -qs 'exit 0' "rc_$s.txt" || status=1
    done
    step suites
elif [ "${CHECK:-1}" != 0 ]; then
    make check -j"$(nproc)" > "$out/check.txt" 2>&1 || status=$?
    cat tests/*.log >> "$out/check.txt" 2>/dev/null || true
    step check
fi
rm -rf "$out/data"
step done
grep -E "^# (PASS|FAIL|ERROR)" "$out/check.txt" 2>/dev/null || true
exit $status
