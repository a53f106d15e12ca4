#!/usr/bin/env python3
"""compare.py — times what users would otherwise pick (numpy, awkward-array) on the
same segment lengths ragged_bench dumped (--dump DIR), next to a numpy fill and copy
of the same output.  Installs numpy and awkward with pip when they are missing;
ragged itself never needs Python.

usage: compare.py DIR [--reps R] [--csv FILE]
"""
import argparse
import glob
import os
import subprocess
import sys
import time


def need(module, package):
    try:
        return __import__(module)
    except ImportError:
        subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", package])
        return __import__(module)


np = need("numpy", "numpy")
ak = need("awkward", "awkward")


def median_time(fn, reps):
    fn()  # warm-up
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]


def cases(lengths):
    n = int(lengths.sum())
    nsegs = len(lengths)
    offsets = np.zeros(nsegs + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    out = np.empty(n, dtype=np.int64)
    src = np.zeros(n, dtype=np.int64)
    values = np.random.default_rng(1).random(n)
    arr = ak.unflatten(values, lengths)
    seg_ids = np.arange(nsegs, dtype=np.int64)
    nonempty = lengths > 0

    def reduceat_sum():
        # reduceat returns the element at an empty segment's start: mask those
        res = np.zeros(nsegs)
        if n:
            res[nonempty] = np.add.reduceat(values, offsets[:-1][nonempty])
        return res

    return n, nsegs, [
        ("fill (ceiling)", lambda: out.fill(0)),
        ("copy (ceiling)", lambda: np.copyto(out, src)),
        ("parents np.repeat", lambda: np.repeat(seg_ids, lengths)),
        ("local_index numpy", lambda: np.arange(n, dtype=np.int64) - np.repeat(offsets[:-1], lengths)),
        ("local_index ak", lambda: ak.local_index(arr, axis=1)),
        ("sum np.add.reduceat", reduceat_sum),
        ("sum ak", lambda: ak.sum(arr, axis=1)),
        ("min ak", lambda: ak.min(arr, axis=1)),
        ("argmax ak", lambda: ak.argmax(arr, axis=1)),
        ("nonzero np", lambda: np.nonzero(values > 0.5)),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--csv")
    args = ap.parse_args()
    files = sorted(glob.glob(os.path.join(args.dir, "*.i64")),
                   key=lambda f: (int(f.rsplit("_", 1)[1][:-4]), f))
    if not files:
        sys.exit(f"compare.py: no lengths in {args.dir} (run ragged_bench --dump {args.dir})")
    print(f"numpy {np.__version__}, awkward {ak.__version__}; medians of {args.reps} runs, "
          "single thread; ratio = time / numpy fill of the same int64 output")
    print(f"{'dist':<10} {'elements':>10} {'segments':>10} {'op':<20} {'median ms':>10} {'ratio':>8}")
    rows = []
    for path in files:
        dist, n_text = os.path.basename(path)[:-4].rsplit("_", 1)
        lengths = np.fromfile(path, dtype=np.int64)
        n, nsegs, ops = cases(lengths)
        fill = None
        for name, fn in ops:
            t = median_time(fn, args.reps)
            fill = fill or t
            print(f"{dist:<10} {n:>10} {nsegs:>10} {name:<20} {t * 1e3:>10.3f} {t / fill:>7.2f}x")
            rows.append((dist, n, nsegs, name, t, t / fill))
        sys.stdout.flush()
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("dist,nelems,nsegs,op,median_s,ratio_to_fill\n")
            for r in rows:
                f.write("%s,%d,%d,%s,%.6e,%.4f\n" % r)


if __name__ == "__main__":
    main()
