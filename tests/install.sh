#!/bin/sh
# install.sh — installs ragged into a temporary folder and builds the example
# consumer with nothing but `pkg-config --cflags --libs ragged`, then runs it.
set -eu
: "${top_builddir:?run through make check}" "${top_srcdir:?run through make check}"
tmp="$top_builddir/tests/install-tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
${MAKE:-make} -C "$top_builddir" install DESTDIR="$tmp/root" >"$tmp/install.log" 2>&1 || {
    cat "$tmp/install.log"; exit 1; }
pc=$(find "$tmp/root" -name ragged.pc | head -n 1)
[ -n "$pc" ] || { echo "ragged.pc was not installed" >&2; exit 1; }
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")
cldir=$(find "$tmp/root" -type d -path '*/ragged/cl' | head -n 1)
[ -f "$cldir/parents.cl" ] || { echo "kernels were not installed" >&2; exit 1; }
[ -f "$(dirname "$libdir")/include/ragged.h" ] || { echo "ragged.h was not installed" >&2; exit 1; }
# The .pc names the kernel folder (where it lies after --define-prefix).
pc_cldir=$(pkg-config --define-prefix --variable=kerneldir "$pc")
[ -f "$pc_cldir/parents.cl" ] || {
    echo "ragged.pc's kerneldir ($pc_cldir) holds no kernels" >&2; exit 1; }
cp "$top_srcdir/examples/consumer.c" "$top_srcdir/examples/Makefile.consumer" "$tmp/"
# --define-prefix makes the .pc's prefix follow where it now lies (DESTDIR).
# The consumer gets the library's compiler and flags: a library built with
# sanitizers needs its consumer built with them.
PKG_CONFIG="pkg-config --define-prefix" PKG_CONFIG_PATH="$pcdir" \
    ${MAKE:-make} -C "$tmp" -f Makefile.consumer CC="${RAGGED_TEST_CC:-${CC:-cc}}" \
    CFLAGS="${RAGGED_TEST_CFLAGS:-${CFLAGS:--O2}} -Wall" \
    LDFLAGS="${RAGGED_TEST_LDFLAGS:-${LDFLAGS:-}}"
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" RAGGED_KERNEL_PATH="$cldir" \
    "$tmp/consumer"
