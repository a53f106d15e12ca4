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

rg_strategy rg_strategy_choose(const rg_context *ctx, size_t nsegs, size_t nelems,
                               const char **why)
{
    const char *reason;
    rg_strategy s;
    if (ctx && ctx->device_kind == RG_DEVICE_CPU && ctx->backend == RG_BACKEND_OPENCL) {
        s = RG_STRATEGY_PER_SEGMENT;
        reason = "OpenCL on a CPU: one work-item per segment measured 2.2 to 6.6 times faster "
                 "than merge path on every length distribution with PoCL (BENCHMARKS.md)";
    } else if (ctx && ctx->device_kind == RG_DEVICE_CPU) {
        s = RG_STRATEGY_MERGE_PATH;
        reason = "CPU: each thread takes an equal share of elements + segments and walks "
                 "them in order, so skewed lengths (one huge segment, many empty ones) cannot "
                 "unbalance the threads";
    } else {
        /* Measured on an NVIDIA H100 at 2^27 elements (BENCHMARKS.md): the
         * tiled merge path was the fastest or within 1.1x of it on every
         * distribution but all-length-1, where one work-item per segment
         * was 1.6x faster; per-segment cannot be picked without reading
         * every length (one huge segment would run on one work-item:
         * 1500x slower).  Binary search tied on one segment and was 3.6x
         * slower on 1323 long ones. */
        s = RG_STRATEGY_MERGE_PATH;
        reason = "GPU: tiled merge path gives every work-group an equal share of elements + "
                 "segments, whatever the skew, and its stores coalesce";
    }
    if (why)
        *why = reason;
    return s;
}
