/* strategy.c — names of the parents strategies and the heuristic that picks one. */
#include "config.h"

#include "internal.h"

const char *rg_strategy_name(rg_strategy strategy)
{
    switch (strategy) {
    case RG_STRATEGY_AUTO: return "auto";
    case RG_STRATEGY_BSEARCH: return "bsearch";
    case RG_STRATEGY_PER_SEGMENT: return "per-segment";
    case RG_STRATEGY_FLOOD: return "flood";
    case RG_STRATEGY_MERGE_PATH: return "merge-path";
    }
    return "unknown";
}

/* Per-segment beats merge path on a GPU only where every segment has at
 * most this many elements: one work-item per segment then stores its
 * element beside its neighbours' (H100, 2^27 all-length-1: 0.76 against
 * 1.01 ms).  At 1 to 8 elements a work-item's stores are already spread
 * out and merge path won (0.67 against 1.54 ms). */
#define GPU_PER_SEGMENT_LONGEST 1

rg_strategy rg_strategy_pick(const rg_context *ctx, size_t nsegs, size_t nelems,
                             int64_t longest, const char **why)
{
    const char *reason;
    rg_strategy s;
    (void)nelems;
    if (ctx && ctx->device_kind == RG_DEVICE_CPU && ctx->backend == RG_BACKEND_OPENCL) {
        s = RG_STRATEGY_PER_SEGMENT;
        reason = "OpenCL on a CPU: one work-item per segment measured 2.2 to 6.6 times faster "
                 "than merge path on every length distribution with PoCL (BENCHMARKS.md)";
    } else if (ctx && ctx->device_kind == RG_DEVICE_CPU) {
        s = RG_STRATEGY_MERGE_PATH;
        reason = "CPU: each thread takes an equal share of elements + segments and walks "
                 "them in order, so skewed lengths (one huge segment, many empty ones) cannot "
                 "unbalance the threads";
    } else if (longest >= 0 && longest <= GPU_PER_SEGMENT_LONGEST) {
        s = RG_STRATEGY_PER_SEGMENT;
        reason = "GPU, no segment longer than one element (known from the offsets check): one "
                 "work-item per segment stores like a copy, faster than merge path's two "
                 "steps per element";
    } else if (nsegs == 1) {
        s = RG_STRATEGY_BSEARCH;
        reason = "GPU, one segment: binary search has nothing to search, and each work-item "
                 "stores beside its neighbours (H100, 2^27 elements: 0.35 against 0.38 ms "
                 "for merge path)";
    } else {
        /* Measured on an NVIDIA H100 at 2^27 elements (BENCHMARKS.md): the
         * tiled merge path was the fastest or within 1.1x of it on every
         * distribution but all-length-1 (taken above when the lengths are
         * known); per-segment on one huge segment took 610 ms against
         * 0.36.  Binary search tied on one segment and was 3.6x slower on
         * 1323 long ones. */
        s = RG_STRATEGY_MERGE_PATH;
        reason = "GPU: tiled merge path gives every work-group an equal share of elements + "
                 "segments, whatever the skew, and its stores coalesce";
    }
    if (why)
        *why = reason;
    return s;
}

rg_strategy rg_strategy_choose(const rg_context *ctx, size_t nsegs, size_t nelems,
                               const char **why)
{
    return rg_strategy_pick(ctx, nsegs, nelems, -1, why);
}
