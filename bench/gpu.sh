#!/bin/sh
# gpu.sh — run on an NVIDIA GPU machine from the top of the source tree,
# with DIR (default gpu-carry) made by bench/gpu-prepare.sh: builds the
# tarball against the carried packages, runs the test suite (OpenCL on the
# GPU: NVIDIA's platform comes first), the benchmark on OpenCL and OpenMP,
# and bench/compare_gpu.py (CuPy) on the same lengths, in one go.
# Results go to OUT (default gpu-out).  Environment: SIZES (default
# 16777216,134217728), OPS (default all), XP (cupy, or numpy for a dry run).
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
# ICD file; the carried ocl-icd loader then finds it through OCL_ICD_VENDORS.
if ! ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1; then
    mkdir -p "$prefix/vendors"
    echo libnvidia-opencl.so.1 > "$prefix/vendors/nvidia.icd"
    export OCL_ICD_VENDORS=$prefix/vendors
fi
export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{ echo "== $(date -u)"; uname -a; nvidia-smi -L 2>&1 || true; } > "$out/machine.txt"

build=$(mktemp -d)
tar xzf "$dir"/ragged-*.tar.gz -C "$build"
cd "$build"/ragged-*/
./configure -q CPPFLAGS="-I$prefix/usr/include" LDFLAGS="-L$lib" \
    CHECK_CFLAGS="-I$prefix/usr/include" \
    CHECK_LIBS="$lib/libcheck_pic.a $lib/libsubunit.a -lm -lrt -pthread" \
    > "$out/configure.txt" 2>&1 || { cat config.log > "$out/config.log"; exit 1; }
make -j"$(nproc)" > "$out/build.txt" 2>&1
status=0
make check -j"$(nproc)" > "$out/check.txt" 2>&1 || status=$?
cp tests/*.log "$out"/ 2>/dev/null || true
RAGGED_KERNEL_PATH=$PWD/cl ./bench/ragged_bench --backends opencl,openmp --sizes "$sizes" \
    --ops "$ops" --reps 5 --csv "$out/bench.csv" --dump "$out/data" > "$out/bench.txt" 2>&1
python3 "$src/bench/compare_gpu.py" "$out/data" --verify --xp "${XP:-cupy}" \
    --csv "$out/cupy.csv" > "$out/cupy.txt" 2>&1
rm -rf "$out/data"
grep -E "^# (PASS|FAIL|ERROR)" "$out/check.txt" || true
exit $status
