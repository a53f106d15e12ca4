#!/usr/bin/env python3
"""compare_gpu.py — times what GPU users would otherwise write with CuPy on the
same segment lengths ragged_bench dumped (--dump DIR), next to a device fill
and a device-to-device copy of the same bytes (the bandwidth ceiling).
Run it on the GPU machine in the same session as ragged_bench, so that the
two are compared on the same device.  Needs numpy and CuPy there; ragged
itself never needs Python.

usage: compare_gpu.py DIR [--reps R] [--csv FILE] [--xp cupy|numpy]

--xp numpy runs the same code on the host (a dry run, for checking the
script where there is no GPU).

CuPy has no segmented reductions or ragged primitives of its own, so each op
is timed in the idioms a CuPy user reaches for:
  parents      searchsorted(ends, arange(n), 'right'), and a scatter of
               segment starts followed by a cumsum
  local_index  arange(n) - offsets[parents]
  sum          cumsum of the values, differenced at the offsets, and an
               atomic scatter_add by parents (parents given)
  nonzero      flatnonzero on 1%, 50% and 99% dense float64
Byte models as in ragged_bench: parents and local index write 8 bytes per
element and read the offsets; sum reads the values and the offsets and
writes a value per segment; nonzero reads 8 bytes per element and writes 8
per non-zero.  "of copy" = GB/s over the GB/s of the device copy.
"""
import argparse
import glob
import os
import sys
import time


def load_xp(name):
    import numpy
    if name == "numpy":
        return numpy, numpy, None
    import cupy
    import cupyx
    return cupy, numpy, cupyx


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--csv")
    ap.add_argument("--xp", choices=["cupy", "numpy"], default="cupy")
    ap.add_argument("--verify", action="store_true",
                    help="check every idiom's result against a plain reference first")
    args = ap.parse_args()
    xp, np, cupyx = load_xp(args.xp)

    def sync():
        if cupyx is not None:
            xp.cuda.Device().synchronize()

    def median_time(fn):
        fn()  # warm-up (and CuPy's kernel compilation)
        sync()
        times = []
        for _ in range(args.reps):
            if cupyx is not None:
                start, stop = xp.cuda.Event(), xp.cuda.Event()
                start.record()
                fn()
                stop.record()
                stop.synchronize()
                times.append(xp.cuda.get_elapsed_time(start, stop) * 1e-3)
            else:
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
        times.sort()
        return times[len(times) // 2]

    def scatter_add(target, index, values):
        if cupyx is not None:
            cupyx.scatter_add(target, index, values)
        else:
            np.add.at(target, index, values)

    files = sorted(glob.glob(os.path.join(args.dir, "*.i64")),
                   key=lambda f: (int(f.rsplit("_", 1)[1][:-4]), f))
    if not files:
        sys.exit(f"compare_gpu.py: no lengths in {args.dir} (run ragged_bench --dump {args.dir})")
    if cupyx is not None:
        props = xp.cuda.runtime.getDeviceProperties(xp.cuda.Device().id)
        device = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        print(f"CuPy {xp.__version__} on {device}; medians of {args.reps} runs (CUDA events)")
    else:
        print(f"numpy {np.__version__} dry run on the host; medians of {args.reps} runs")
    print(f"{'dist':<10} {'elements':>10} {'segments':>10} {'op':<26} {'median ms':>10} "
          f"{'GB/s':>8} {'of copy':>8}")
    rows = []
    done_nonzero = set()
    for path in files:
        dist, n_text = os.path.basename(path)[:-4].rsplit("_", 1)
        host_lengths = np.fromfile(path, dtype=np.int64)
        n, nsegs = int(host_lengths.sum()), len(host_lengths)
        lengths = xp.asarray(host_lengths)
        offsets = xp.zeros(nsegs + 1, dtype=xp.int64)
        xp.cumsum(lengths, out=offsets[1:])
        out = xp.empty(n, dtype=xp.int64)
        src = xp.ones(n, dtype=xp.int64)
        values = xp.asarray(np.random.default_rng(1).random(n))
        ends = offsets[1:]
        starts = offsets[:-1]
        elem = xp.arange(n, dtype=xp.int64)
        parents = xp.searchsorted(ends, elem, side="right")
        sums = xp.empty(nsegs, dtype=xp.float64)

        def copy():
            out[...] = src

        def parents_scan():
            # the step in segment id at each non-empty segment's start, then a
            # running sum (non-empty segments have distinct starts)
            ids = xp.flatnonzero(lengths > 0)
            if ids.size == 0:
                return xp.zeros(n, dtype=xp.int64)
            marks = xp.zeros(n, dtype=xp.int64)
            marks[starts[ids[1:]]] = xp.diff(ids)
            result = xp.cumsum(marks)
            result += ids[0]
            return result

        def sum_cumsum():
            cs = xp.concatenate([xp.zeros(1), xp.cumsum(values)])
            return cs[ends] - cs[starts]

        def sum_scatter():
            sums.fill(0)
            scatter_add(sums, parents, values)

        if args.verify:  # every idiom against a plain host reference
            host = (lambda a: xp.asnumpy(a)) if cupyx is not None else (lambda a: a)
            ref_parents = np.repeat(np.arange(nsegs), host_lengths)
            ref_starts = np.cumsum(host_lengths) - host_lengths
            assert np.array_equal(host(parents), ref_parents), "parents searchsorted"
            assert np.array_equal(host(parents_scan()), ref_parents), "parents scatter+cumsum"
            assert np.array_equal(host(elem - offsets[parents]),
                                  np.arange(n) - np.repeat(ref_starts, host_lengths)), "local"
            ref_sum = np.zeros(nsegs)
            np.add.at(ref_sum, ref_parents, host(values))
            sum_scatter()
            assert np.allclose(host(sums), ref_sum, rtol=1e-9, atol=1e-6), "sum scatter_add"
            assert np.allclose(host(sum_cumsum()), ref_sum, rtol=1e-9, atol=1e-6), "sum cumsum"
            print(f"{dist:<10} {n:>10} {nsegs:>10} verified")

        elem_bytes = 8.0 * (nsegs + 1) + 8.0 * n
        sum_bytes = 8.0 * n + 8.0 * (nsegs + 1) + 8.0 * nsegs
        ops = [
            ("copy (ceiling)", copy, 16.0 * n),
            ("fill (ceiling)", lambda: out.fill(0), 8.0 * n),
            ("parents searchsorted", lambda: xp.searchsorted(ends, elem, side="right"),
             elem_bytes),
            ("parents scatter+cumsum", parents_scan, elem_bytes),
            ("local_index arange-take", lambda: elem - offsets[parents], elem_bytes),
            ("sum cumsum-diff", sum_cumsum, sum_bytes),
            ("sum scatter_add", sum_scatter, sum_bytes),
        ]
        copy_gbps = None
        for name, fn, nbytes in ops:
            t = median_time(fn)
            gbps = nbytes / t * 1e-9 if t > 0 else 0.0
            copy_gbps = gbps if name.startswith("copy") else copy_gbps
            frac = gbps / copy_gbps if copy_gbps else 0.0
            print(f"{dist:<10} {n:>10} {nsegs:>10} {name:<26} {t * 1e3:>10.3f} {gbps:>8.2f} "
                  f"{frac * 100:>7.0f}%")
            rows.append((dist, n, nsegs, name, t, gbps, frac))
        if n not in done_nonzero:  # nonzero does not depend on the lengths
            done_nonzero.add(n)
            for permille in (10, 500, 990):
                dense = xp.asarray(np.where(np.random.default_rng(2).random(n) * 1000 < permille,
                                            1.0, 0.0))
                nnz = int(xp.count_nonzero(dense))
                t = median_time(lambda: xp.flatnonzero(dense))
                nbytes = 8.0 * n + 8.0 * nnz
                gbps = nbytes / t * 1e-9 if t > 0 else 0.0
                frac = gbps / copy_gbps if copy_gbps else 0.0
                name = f"nonzero {permille / 10:g}%"
                print(f"{'-':<10} {n:>10} {0:>10} {name:<26} {t * 1e3:>10.3f} {gbps:>8.2f} "
                      f"{frac * 100:>7.0f}%")
                rows.append(("-", n, 0, name, t, gbps, frac))
        sys.stdout.flush()
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("dist,nelems,nsegs,op,median_s,gbps,frac_of_copy\n")
            for r in rows:
                f.write("%s,%d,%d,%s,%.6e,%.3f,%.4f\n" % r)


if __name__ == "__main__":
    main()
