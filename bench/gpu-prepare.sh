#!/bin/sh
# gpu-prepare.sh — run on the build machine (configured tree, Debian with
# apt): puts into DIR (default gpu-carry, which git ignores) what
# bench/gpu.sh needs on a GPU machine that has a compiler but no autotools,
# no Check and maybe no OpenCL ICD loader: the `make dist` tarball and the
# Debian packages of Check, subunit, the ocl-icd loader and the OpenCL
# headers.  Then carry DIR to the GPU machine with the source tree.
# BASE=<git ref> also puts that commit's tarball into DIR/base, and
# bench/gpu.sh then times both builds in one run (old and new side by side).
# PATCHES="FILE ..." puts, per patch that changes only cl/, this tree's
# kernels with that patch applied into DIR/variants/NAME (NAME: the file's
# name less .patch); bench/gpu.sh times this tree's library with each
# variant's kernels as well (no second build: kernels load at run time).
# A patch that changes more than cl/ (the host's tile sizes, say) is
# applied to a checkout of HEAD instead, whose tarball goes into
# DIR/builds/NAME; bench/gpu.sh builds it and times it as it does BASE.
# Each tarball is also built here, library, benchmark and test programs
# (Check linked in statically), into DIR/prebuilt/ (DIR/base/prebuilt/):
# bench/gpu.sh uses such a tree where its programs run there, and builds
# the tarball otherwise (a build took 79 to 87 s of device time on an
# H200).  PREBUILT=0 skips this.
set -eu
dir=${1:-gpu-carry}
mkdir -p "$dir/debs"
make dist >/dev/null
rm -f "$dir"/ragged-*.tar.gz
mv ragged-*.tar.gz "$dir"/
rm -rf "$dir/base"
if [ -n "${BASE:-}" ]; then
    mkdir -p "$dir/base"
    tree=$(mktemp -d)
    git worktree add -q --detach "$tree/src" "$BASE"
    (cd "$tree/src" && autoreconf -fi >/dev/null 2>&1 && ./configure -q >/dev/null &&
     make dist >/dev/null)
    mv "$tree"/src/ragged-*.tar.gz "$dir/base/"
    git worktree remove --force "$tree/src"
    rm -rf "$tree"
fi
rm -rf "$dir/variants" "$dir/builds"
for p in ${PATCHES:-}; do
    name=$(basename "$p" .patch)
    if git apply --numstat "$p" | awk '{print $3}' | grep -qv '^cl/'; then
        mkdir -p "$dir/builds/$name"
        pabs=$(cd "$(dirname "$p")" && pwd)/$(basename "$p")
        tree=$(mktemp -d)
        git worktree add -q --detach "$tree/src" HEAD
        (cd "$tree/src" && git apply "$pabs" && autoreconf -fi >/dev/null 2>&1 &&
         ./configure -q >/dev/null && make dist >/dev/null)
        mv "$tree"/src/ragged-*.tar.gz "$dir/builds/$name/"
        git worktree remove --force "$tree/src"
        rm -rf "$tree"
        continue
    fi
    tree=$(mktemp -d)
    cp -r cl "$tree/cl"
    patch -s -p1 -d "$tree" < "$p"
    mkdir -p "$dir/variants"
    mv "$tree/cl" "$dir/variants/$name"
    rm -rf "$tree"
done
# prebuild TARBALL: its build tree, without object files, as
# prebuilt/TARBALL beside it.
prebuild() {
    b=$(mktemp -d)
    tar xzf "$1" -C "$b"
    libdir=/usr/lib/x86_64-linux-gnu
    (cd "$b"/ragged-*/ &&
     ./configure -q CHECK_CFLAGS= \
         CHECK_LIBS="$libdir/libcheck_pic.a $libdir/libsubunit.a -lm -lrt -pthread" >/dev/null &&
     make -j"$(nproc)" >/dev/null && make -j"$(nproc)" tests/check_ragged tests/libclfail.la >/dev/null &&
     find . \( -name '*.o' -o -name '*.a' \) -delete)
    mkdir -p "$(dirname "$1")/prebuilt"
    (cd "$b" && tar czf - ragged-*/) > "$(dirname "$1")/prebuilt/$(basename "$1")"
    rm -rf "$b"
}
rm -rf "$dir/prebuilt" "$dir/base/prebuilt"
if [ "${PREBUILT:-1}" != 0 ]; then
    for t in "$dir"/ragged-*.tar.gz "$dir"/base/ragged-*.tar.gz "$dir"/builds/*/ragged-*.tar.gz; do
        if [ -f "$t" ]; then prebuild "$t"; fi
    done
fi
(cd "$dir/debs" && rm -f ./*.deb &&
 apt-get download check libsubunit-dev ocl-icd-libopencl1 opencl-c-headers \
     opencl-clhpp-headers 2>/dev/null)
ls -lR "$dir"
