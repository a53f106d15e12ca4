/* reduce.c — front end of the segmented reductions: op and dtype tables, the
 * policy heuristic, argument checks, and dispatch to the backend. */
#include "config.h"

#include "internal.h"

const char *rg_reduce_op_name(rg_reduce_op op)
{
    switch (op) {
    case RG_REDUCE_SUM: return "sum";
    case RG_REDUCE_PROD: return "prod";
    case RG_REDUCE_MIN: return "min";
    case RG_REDUCE_MAX: return "max";
    case RG_REDUCE_ARGMIN: return "argmin";
    case RG_REDUCE_ARGMAX: return "argmax";
    case RG_REDUCE_COUNT: return "count";
    case RG_REDUCE_COUNT_NONZERO: return "count_nonzero";
    case RG_REDUCE_ANY: return "any";
    case RG_REDUCE_ALL: return "all";
    }
    return "unknown";
}

const char *rg_reduce_policy_name(rg_reduce_policy policy)
{
    switch (policy) {
    case RG_REDUCE_POLICY_AUTO: return "auto";
    case RG_REDUCE_POLICY_PER_SEGMENT: return "per-segment";
    case RG_REDUCE_POLICY_MERGE_PATH: return "merge-path";
    }
    return "unknown";
}

static bool is_unsigned(rg_dtype t)
{
    return t == RG_UINT8 || t == RG_UINT16 || t == RG_UINT32 || t == RG_UINT64;
}

static bool is_float(rg_dtype t)
{
    return t == RG_FLOAT32 || t == RG_FLOAT64;
}

rg_dtype rg_reduce_dtype(rg_reduce_op op, rg_dtype in)
{
    if (rg_dtype_size(in) == 0)
        return 0;
    switch (op) {
    case RG_REDUCE_SUM:
    case RG_REDUCE_PROD:
        /* Sums of small integers overflow their type at once: accumulate in 64 bits. */
        return is_float(in) ? in : is_unsigned(in) ? RG_UINT64 : RG_INT64;
    case RG_REDUCE_MIN:
    case RG_REDUCE_MAX:
        return in;
    case RG_REDUCE_ARGMIN:
    case RG_REDUCE_ARGMAX:
    case RG_REDUCE_COUNT:
    case RG_REDUCE_COUNT_NONZERO:
        return RG_INT64;
    case RG_REDUCE_ANY:
    case RG_REDUCE_ALL:
        return RG_BOOL;
    }
    return 0;
}

/* On a GPU one work-item per segment beats merge path where no segment is
 * longer than this.  H100, 2^27 float64, per-segment against merge path
 * (BENCHMARKS.md): sums of lengths 1..8 0.55 against 0.93 ms, 0..15 0.59
 * against 0.97, all 1 1.11 against 2.10, 1..199 0.61 against 0.64; argmax
 * of 1..199 0.70 against 1.16.  Longer uniform lengths were not measured
 * below a mean of 10^5, where per-segment was 30 times slower (2026-11-24):
 * a long segment held its whole warp back, and one huge one ran on one
 * work-item.  Per-segment now gives sums and products of 64 or more
 * elements to teams of 32 work-items and cuts segments of 8192 or more
 * (every op) into pieces across work-groups (lib/ocl/reduce.c).  H200,
 * 2^27 float64, per-segment against merge path: sums tie on long (0.29
 * against 0.31 ms), power-law (0.80 against 0.80) and one huge segment
 * (0.31 against 0.29), but argmax is 2.3x to 3.1x slower per-segment on
 * long and power-law lengths, so this threshold stays.  Since the GPUs'
 * per-segment sums load 8 elements before folding them (H200: 1..8 0.36
 * against merge path's 0.95 ms, 1..199 0.41 against 0.66), power-law and
 * long lengths have not been timed again. */
#define GPU_PER_SEGMENT_LONGEST 256

rg_reduce_policy rg_reduce_policy_pick(const rg_context *ctx, size_t nsegs, size_t nelems,
                                       int64_t longest, const char **why)
{
    const char *reason;
    rg_reduce_policy p;
    (void)nsegs;
    if (ctx && ctx->device_kind == RG_DEVICE_CPU && ctx->backend == RG_BACKEND_OPENCL) {
        p = RG_REDUCE_POLICY_PER_SEGMENT;
        reason = "OpenCL on a CPU: one work-item per segment measured 3.9 to 17 times faster "
                 "than merge path on every length distribution with PoCL (BENCHMARKS.md)";
    } else if (ctx && ctx->device_kind == RG_DEVICE_CPU) {
        p = RG_REDUCE_POLICY_MERGE_PATH;
        reason = "CPU: each thread reduces an equal share of elements + segments, and the "
                 "few segments cut at thread boundaries are combined afterwards, so no length "
                 "distribution unbalances the threads";
    } else if (nelems == 0) {
        p = RG_REDUCE_POLICY_PER_SEGMENT;
        reason = "no content: every segment is empty, so one work-item per segment writes "
                 "the identity without a search or a combining pass";
    } else if (longest >= 0 && longest <= GPU_PER_SEGMENT_LONGEST) {
        p = RG_REDUCE_POLICY_PER_SEGMENT;
        reason = "GPU, no segment longer than 256 elements (known from the offsets check): "
                 "one work-item per segment needs no search and no combining pass";
    } else {
        p = RG_REDUCE_POLICY_MERGE_PATH;
        reason = "GPU: merge path gives every work-group an equal share of elements + "
                 "segments (many short segments per group, long ones split across groups and "
                 "combined after), whatever the skew; per-segment would need every length "
                 "read first to rule out one huge segment";
    }
    if (why)
        *why = reason;
    return p;
}

rg_reduce_policy rg_reduce_policy_choose(const rg_context *ctx, size_t nsegs, size_t nelems,
                                         const char **why)
{
    return rg_reduce_policy_pick(ctx, nsegs, nelems, -1, why);
}

/* content exists, belongs to ctx and has a known dtype; out has op's dtype. */
static rg_status check_arrays(rg_context *ctx, rg_array *out, const rg_array *content,
                              rg_reduce_op op, const char *fn)
{
    if (!content)
        return rg_set_error(ctx, RG_EINVAL, "%s: content is NULL", fn);
    if (content->ctx != ctx)
        return rg_foreign_array(ctx, content, fn, "content", "offsets");
    if (!out)
        return rg_set_error(ctx, RG_EINVAL, "%s: out is NULL", fn);
    if (out->ctx != ctx)
        return rg_foreign_array(ctx, out, fn, "out", "offsets");
    rg_dtype want = rg_reduce_dtype(op, content->dtype);
    if (out->dtype != want)
        return rg_set_error(ctx, RG_EDTYPE, "%s: %s of %s content gives %s, but out is %s", fn,
                            rg_reduce_op_name(op), rg_dtype_name(content->dtype),
                            rg_dtype_name(want), rg_dtype_name(out->dtype));
    return RG_OK;
}

rg_status rg_segment_reduce(rg_array *out, const rg_array *content, const rg_array *offsets,
                            rg_reduce_op op, rg_reduce_policy policy, rg_reduce_policy *used)
{
    static const char fn[] = "rg_segment_reduce";
    if (!offsets)
        return rg_null_arg(out ? out : content, fn, "offsets");
    rg_context *ctx = offsets->ctx;
    rg_status st = rg_check_index_array(ctx, offsets, fn, "offsets", "offsets");
    if (st == RG_OK && (op < RG_REDUCE_SUM || op > RG_REDUCE_ALL))
        st = rg_set_error(ctx, RG_EINVAL, "%s: unknown op %d", fn, (int)op);
    if (st == RG_OK &&
        (policy < RG_REDUCE_POLICY_AUTO || policy > RG_REDUCE_POLICY_MERGE_PATH))
        st = rg_set_error(ctx, RG_EINVAL, "%s: unknown policy %d", fn, (int)policy);
    if (st == RG_OK)
        st = check_arrays(ctx, out, content, op, fn);
    if (st == RG_OK)
        st = rg_check_not_input(ctx, out, fn, "out", content, "content");
    if (st == RG_OK)
        st = rg_check_not_input(ctx, out, fn, "out", offsets, "offsets");
    if (st == RG_OK)
        st = rg_check_offsets_for(ctx, offsets, content->length, fn);
    if (st == RG_OK)
        st = rg_check_length(out, fn, "out", offsets->length - 1, "nsegs");
    if (st != RG_OK)
        return st;
    size_t nsegs = offsets->length - 1;
    if (policy == RG_REDUCE_POLICY_AUTO)
        policy = rg_reduce_policy_pick(ctx, nsegs, content->length, offsets->offsets_longest,
                                       NULL);
    if (nsegs > 0) {
        rg_op_begin(out);
        /* Counts need only the offsets: the lengths primitive writes them. */
        st = op == RG_REDUCE_COUNT ? ctx->ops->lengths(out, offsets)
                                   : ctx->ops->segment_reduce(out, content, offsets, op, policy);
        st = rg_op_end(ctx, st);
    }
    if (st == RG_OK && used)
        *used = policy;
    return st;
}
