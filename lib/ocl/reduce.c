/* reduce.c — the OpenCL backend's segmented reductions: reduce.cl's build options, the chunking
 * of the merge path, and the launches. */
#include "config.h"

#include <stdio.h>

#include "ocl.h"

/* Lanes of a per-segment reduction on CPU devices, from SEG_LANES_MIN
 * elements (SEG_LANES and SEG_LANES_MIN of reduce.cl): one segment of 2^24
 * float64 took about 20 ms on PoCL as one chain of additions, 5 to 7 ms in
 * lanes (min and argmax: 14 to 16 ms, 7 to 8 ms).  On an H100 the same
 * lanes made sums over 1 to 8 elements slower (0.62 against 0.54 ms at
 * 2^27) and argmax over 1 to 199 (0.85 against 0.70 ms). */
#define SEG_LANES_CPU 8
#define SEG_LANES_MIN 64
/* Per-segment sums and products on other devices: segments of TEAM_MIN
 * elements or more are reduced by TEAM work-items each (reduce.cl's
 * reduce_teams).  On an H100, 2^27 float64 in segments of 1 to 199: sum
 * 0.61 -> 0.53 ms; argmax 0.70 -> 0.86 ms, so the extremes keep one
 * work-item per segment. */
#define TEAM 32
#define TEAM_MIN 64
/* There too, segments of PIECE elements or more, of every op, are cut at
 * the multiples of PIECE: teams across work-groups reduce the pieces
 * (reduce_pieces), the segment's own team combines them.  One segment of
 * 2^27 float64 on one team took 0.31 s on an H100. */
#define PIECE 8192
/* reduce_teams looks at `block` segments per work-group at a time, its
 * whole work-group where that still leaves TEAM_BLOCKS_PER_UNIT blocks per
 * compute unit, fewer down to one per team otherwise (few, long
 * segments), so that the device stays busy. */
#define TEAM_BLOCKS_PER_UNIT 8
/* On NVIDIA's platform the reductions of the indexed class (min, max,
 * argmin, argmax, count_nonzero, any, all: a value and an index per
 * accumulator) are built to use at most this many registers per
 * work-item, so that more work-groups share a compute unit.  On an H200
 * (2^27 float64, twenty-sixth 2026-11-27 session) min and argmax by merge
 * path took 0.79x to 0.81x the time on every length distribution (argmax
 * on lengths 1 to 199999: 0.603 -> 0.473 ms); per segment within 2%, but
 * for lengths 1 to 199999 (1.69 -> 1.95 ms, where auto takes the merge
 * path; there reduce_teams now spills 128 bytes per work-item, the merge
 * path's kernels 28 to 36).  Sums by merge path lost on long lengths (84%
 * -> 77% of a copy), so they are left alone. */
#define INDEXED_NV_REGISTERS 32
/* A warp of NVIDIA's GPUs (TEAM: a team is one warp), reduce.cl's WARP. */
#define WARP 32
/* Merge-path steps per work-item per tile (VT of reduce.cl). */
#define REDUCE_VT 8
/* A tile's staged ends and elements, with reduce.cl's pad word after every 16. */
#define PADDED(n) ((n) + (n) / 16 + 1)
/* Bytes per chunk record and per work-item accumulator (by class of op);
 * reduce.cl refuses to build if its structs outgrow them. */
#define CHUNK_BYTES 64
#define ACC_BYTES(cls) ((cls) == CLASS_ARITH ? 8 : 16)
enum { CLASS_ARITH, CLASS_INDEXED }; /* CLASS of reduce.cl */
/* Chunks per compute unit.  Every chunk is the same work, so a launch of
 * barely more chunks than fit on the device at once takes two rounds for
 * the time of one: 32 per unit keeps that rounding loss under about 10%
 * wherever 4 to 8 work-groups fit on a unit. */
#define CHUNKS_PER_UNIT 32
/* Chunk records per work-item of reduce_fixup; bounds the chunk count at
 * group * FIXUP_PER_ITEM. */
#define FIXUP_PER_ITEM 32
/* Grid-stride caps of the per-segment and bounds kernels. */
#define MAX_SEGMENT_GROUPS 65536
#define MAX_BOUNDS_GROUPS 65536

/* The OpenCL C side of a content dtype. */
typedef struct cl_dtype {
    const char *type; /* T */
    const char *acc;  /* ACC: what sum and prod accumulate in */
    int is_float;
    const char *min, *max; /* T_MIN, T_MAX */
} cl_dtype;

static const cl_dtype *cl_dtype_of(rg_dtype t)
{
    /* float32 sums accumulate in float: double is slow or absent on many GPUs. */
    static const cl_dtype table[] = {
        [RG_BOOL] = {"uchar", "ulong", 0, "0", "1"},
        [RG_INT8] = {"char", "ulong", 0, "SCHAR_MIN", "SCHAR_MAX"},
        [RG_INT16] = {"short", "ulong", 0, "SHRT_MIN", "SHRT_MAX"},
        [RG_INT32] = {"int", "ulong", 0, "INT_MIN", "INT_MAX"},
        [RG_INT64] = {"long", "ulong", 0, "LONG_MIN", "LONG_MAX"},
        [RG_UINT8] = {"uchar", "ulong", 0, "0", "UCHAR_MAX"},
        [RG_UINT16] = {"ushort", "ulong", 0, "0", "USHRT_MAX"},
        [RG_UINT32] = {"uint", "ulong", 0, "0", "UINT_MAX"},
        [RG_UINT64] = {"ulong", "ulong", 0, "0", "ULONG_MAX"},
        [RG_FLOAT32] = {"float", "float", 1, "-INFINITY", "INFINITY"},
        [RG_FLOAT64] = {"double", "double", 1, "-INFINITY", "INFINITY"},
    };
    size_t i = (size_t)t;
    return i < sizeof table / sizeof *table && table[i].type ? &table[i] : NULL;
}

/* Everything one reduction launch needs. */
typedef struct reduce_job {
    rg_context *ctx;
    cl_mem x, o32, o64, out;
    cl_int wide, op, cls;
    cl_ulong nsegs, nelems;
    size_t elem_size;
    bool teams;      /* reduce_teams takes the segments of team_min or more */
    int64_t team_min;
    int64_t longest; /* the longest segment, or -1 when not known */
    char options[320];
} reduce_job;

static rg_status get_kernel(const reduce_job *job, const char *name, rg_ocl_kernel *k)
{
    return rg_ocl_get_kernel(job->ctx, "reduce.cl", job->options, name, k);
}

/* Whether segments of `length` elements or more may be there. */
static bool may_hold(const reduce_job *job, int64_t length)
{
    return job->nelems >= (cl_ulong)length && (job->longest < 0 || job->longest >= length);
}

static rg_status by_segment(const reduce_job *job)
{
    rg_ocl_kernel k, teams_k = {0}, pieces_k = {0}; /* got only where needed */
    rg_status st = get_kernel(job, "reduce_segments", &k);
    bool long_ones = job->teams && may_hold(job, job->team_min);
    bool cut = job->teams && may_hold(job, PIECE);
    if (st == RG_OK && long_ones)
        st = get_kernel(job, "reduce_teams", &teams_k);
    if (st == RG_OK && cut)
        st = get_kernel(job, "reduce_pieces", &pieces_k);
    if (st == RG_OK && ((long_ones && teams_k.group < TEAM) || (cut && pieces_k.group < TEAM)))
        st = rg_set_error(job->ctx, RG_EDEVICE, "OpenCL backend: reduce_teams and reduce_pieces "
                          "need work-groups of %d work-items, the device allows fewer", TEAM);
    /* Allocated first: a failure leaves out untouched. */
    cl_mem partial = NULL;
    cl_ulong npieces = job->nelems / PIECE + (job->nelems % PIECE != 0);
    if (st == RG_OK && cut)
        st = rg_ocl_scratch(job->ctx, RG_SCRATCH_PARTIAL, npieces * ACC_BYTES(job->cls), &partial);
    kernel_arg args[] = {ARG(job->x),     ARG(job->o32), ARG(job->o64), ARG(job->wide),
                         ARG(job->nsegs), ARG(job->op),  ARG(job->out)};
    if (st == RG_OK)
        st = rg_ocl_launch(job->ctx, &k,
                           rg_ocl_stride_groups(job->ctx, job->nsegs, k.group, MAX_SEGMENT_GROUPS),
                           k.group, args, NARGS(args));
    if (st == RG_OK && cut) {
        kernel_arg pieces_args[] = {ARG(job->x),      ARG(job->o32),    ARG(job->o64),
                                    ARG(job->wide),   ARG(job->nsegs),  ARG(job->nelems),
                                    ARG(job->op),     ARG(partial),
                                    LOCAL_ARG(pieces_k.group * ACC_BYTES(job->cls))};
        st = rg_ocl_launch(job->ctx, &pieces_k,
                           rg_ocl_stride_groups(job->ctx, npieces, pieces_k.group / TEAM,
                                                MAX_SEGMENT_GROUPS),
                           pieces_k.group, pieces_args, NARGS(pieces_args));
    }
    if (st == RG_OK && long_ones) {
        rg_ocl *ocl = job->ctx->impl;
        size_t units = ocl->compute_units ? ocl->compute_units : 1;
        size_t block = job->nsegs / (units * TEAM_BLOCKS_PER_UNIT);
        if (block > teams_k.group)
            block = teams_k.group;
        if (block < teams_k.group / TEAM)
            block = teams_k.group / TEAM;
        cl_uint block32 = (cl_uint)block;
        kernel_arg teams_args[] = {ARG(job->x),     ARG(job->o32), ARG(job->o64),
                                   ARG(job->wide),  ARG(job->nsegs), ARG(job->op),
                                   ARG(job->out),   ARG(partial),  ARG(block32),
                                   LOCAL_ARG(teams_k.group * ACC_BYTES(job->cls)),
                                   LOCAL_ARG((teams_k.group + 1) * sizeof(cl_uint))};
        st = rg_ocl_launch(job->ctx, &teams_k,
                           rg_ocl_stride_groups(job->ctx, job->nsegs, block, MAX_SEGMENT_GROUPS),
                           teams_k.group, teams_args, NARGS(teams_args));
    }
    if (partial)
        rg_cl.clReleaseMemObject(partial);
    return st;
}

/* Merge path: the nsegs + nelems steps are cut into tiles of group *
 * REDUCE_VT steps, whose starts reduce_bounds finds first, and the tiles
 * into nchunks chunks of whole tiles, one work-group each; at most
 * CHUNKS_PER_UNIT per compute unit and group * FIXUP_PER_ITEM in all, so
 * reduce_fixup is one work-group. */
static rg_status by_merge_path(const reduce_job *job)
{
    rg_ocl *ocl = job->ctx->impl;
    rg_ocl_kernel bounds_k, chunks_k, fixup_k;
    rg_status st = get_kernel(job, "reduce_bounds", &bounds_k);
    if (st == RG_OK)
        st = get_kernel(job, "reduce_chunks", &chunks_k);
    if (st == RG_OK)
        st = get_kernel(job, "reduce_fixup", &fixup_k);
    if (st != RG_OK)
        return st;
    /* Both are powers of two, so the smaller divides the larger. */
    size_t group = chunks_k.group < fixup_k.group ? chunks_k.group : fixup_k.group;
    size_t steps = job->nsegs + job->nelems, tile = group * REDUCE_VT;
    size_t tiles = steps / tile + (steps % tile != 0);
    size_t most = (size_t)ocl->compute_units * CHUNKS_PER_UNIT;
    if (most > group * FIXUP_PER_ITEM)
        most = group * FIXUP_PER_ITEM;
    size_t tiles_per_chunk;
    size_t nchunks = rg_ocl_chunks(job->ctx, tiles, 1, most, &tiles_per_chunk);
    cl_ulong tpc = tiles_per_chunk, tile64 = tile;
    cl_ulong nchunks64 = nchunks, per_item = nchunks / group + (nchunks % group != 0);
    size_t acc_bytes = ACC_BYTES(job->cls);

    cl_mem records = NULL, bounds = NULL;
    kernel_arg bounds_args[] = {ARG(job->o32),    ARG(job->o64), ARG(job->wide),
                                ARG(job->nsegs),  ARG(job->nelems), ARG(tile64),
                                ARG(bounds)};
    kernel_arg chunk_args[] = {ARG(job->x),
                               ARG(job->o32),
                               ARG(job->o64),
                               ARG(job->wide),
                               ARG(job->nsegs),
                               ARG(job->nelems),
                               ARG(tpc),
                               ARG(bounds),
                               ARG(job->op),
                               ARG(job->out),
                               ARG(records),
                               LOCAL_ARG(group * acc_bytes),
                               LOCAL_ARG(group * sizeof(cl_int)),
                               LOCAL_ARG(PADDED(tile) * sizeof(cl_int)),
                               LOCAL_ARG(PADDED(tile) * job->elem_size)};
    kernel_arg fixup_args[] = {ARG(job->o32),     ARG(job->o64),
                               ARG(job->wide),    ARG(nchunks64),
                               ARG(per_item),     ARG(job->op),
                               ARG(job->out),     ARG(records),
                               LOCAL_ARG(group * acc_bytes),
                               LOCAL_ARG(group * sizeof(cl_int))};
    st = rg_ocl_scratch(job->ctx, RG_SCRATCH_RECORDS, nchunks * CHUNK_BYTES, &records);
    if (st == RG_OK)
        st = rg_ocl_scratch(job->ctx, RG_SCRATCH_BOUNDS, (tiles + 1) * sizeof(cl_ulong), &bounds);
    if (st == RG_OK)
        st = rg_ocl_launch(job->ctx, &bounds_k,
                           rg_ocl_stride_groups(job->ctx, tiles + 1, bounds_k.group,
                                                MAX_BOUNDS_GROUPS),
                           bounds_k.group, bounds_args, NARGS(bounds_args));
    if (st == RG_OK)
        st = rg_ocl_launch(job->ctx, &chunks_k, nchunks, group, chunk_args, NARGS(chunk_args));
    if (st == RG_OK)
        st = rg_ocl_launch(job->ctx, &fixup_k, 1, group, fixup_args, NARGS(fixup_args));
    if (bounds)
        rg_cl.clReleaseMemObject(bounds);
    if (records)
        rg_cl.clReleaseMemObject(records);
    return st;
}

rg_status rg_ocl_segment_reduce(rg_array *out, const rg_array *content, const rg_array *offsets,
                                rg_reduce_op op, rg_reduce_policy policy)
{
    rg_ocl_begin(out->ctx);
    rg_context *ctx = offsets->ctx;
    const cl_dtype *t = cl_dtype_of(content->dtype);
    if (!t || (offsets->dtype != RG_INT32 && offsets->dtype != RG_INT64))
        return rg_set_error(ctx, RG_EDTYPE, "OpenCL backend: no reduction of %s content",
                            rg_dtype_name(content->dtype));
    reduce_job job = {.ctx = ctx,
                      .x = rg_ocl_mem_in(content), /* NULL for empty content: never read */
                      .out = rg_ocl_mem_of(out),
                      .wide = offsets->dtype == RG_INT64,
                      .op = (cl_int)op, /* reduce.cl's OP_* are rg_reduce_op's numbers */
                      .cls = op == RG_REDUCE_SUM || op == RG_REDUCE_PROD ? CLASS_ARITH
                                                                         : CLASS_INDEXED,
                      .nsegs = offsets->length - 1,
                      .nelems = content->length,
                      .elem_size = rg_dtype_size(content->dtype)};
    /* The unused offsets pointer is NULL in the kernel. */
    if (job.wide)
        job.o64 = rg_ocl_mem_in(offsets);
    else
        job.o32 = rg_ocl_mem_in(offsets);
    /* Lanes on CPU devices (cpu_kernels); for the extremes only where a
     * segment may be long (the check measured one of SEG_LANES_MIN or more,
     * or nothing was measured): a second program, because on PoCL the
     * lanes' branch alone, never taken, made all-length-1 segments about
     * 1.2x slower. */
    int64_t longest = offsets->offsets_ok ? offsets->offsets_longest : -1;
    rg_ocl *ocl = ctx->impl;
    job.longest = longest;
    job.teams = !ocl->cpu_kernels && ocl->max_group >= TEAM;
    job.team_min = job.cls == CLASS_ARITH ? TEAM_MIN : PIECE;
    bool lanes = ocl->cpu_kernels &&
                 (job.cls == CLASS_ARITH || longest < 0 || longest >= SEG_LANES_MIN);
    bool fp64 = content->dtype == RG_FLOAT64;
    char registers[48] = "";
    if (ocl->nv_options && job.cls == CLASS_INDEXED)
        snprintf(registers, sizeof registers, " -cl-nv-maxrregcount=%d", INDEXED_NV_REGISTERS);
    /* Teams of sums and products combine by warp shuffles (WARP of
     * reduce.cl): by PTX on NVIDIA, emulated where the GPUs' kernels run
     * on a CPU device (the tests), not on other GPUs.  reduce.cl says why
     * not the other ops. */
    int warp = 0, warp_ptx = 0;
    if (job.teams && job.cls == CLASS_ARITH &&
        (ocl->nv_options || ctx->device_kind == RG_DEVICE_CPU)) {
        warp = WARP;
        warp_ptx = ocl->nv_options;
    }
    /* A program per policy (POLICY of reduce.cl): where ragged stores
     * binaries, PoCL compiles every kernel of the program, and merge
     * path's take seconds there, which a CPU device's reductions (per
     * segment) need not wait for.  Merge path's kernels read none of the
     * lanes', teams' and warps' options, so its programs take them as
     * none: one program serves every variant. */
    bool merge = policy == RG_REDUCE_POLICY_MERGE_PATH;
    bool teams = job.teams && !merge;
    if (merge) {
        lanes = false;
        warp = warp_ptx = 0;
    }
    snprintf(job.options, sizeof job.options,
             "-DT=%s -DACC=%s -DIS_FLOAT=%d -DT_MIN=%s -DT_MAX=%s -DVT=%d -DCLASS=%d "
             "-DSEG_LANES=%d -DSEG_LANES_MIN=%d -DTEAM=%d -DTEAM_MIN=%d -DPIECE=%d "
             "-DWARP=%d -DWARP_PTX=%d -DFLAT_BARRIERS=%d -DPOLICY=%d%s%s",
             t->type, t->acc, t->is_float, t->min, t->max, REDUCE_VT, (int)job.cls,
             lanes ? SEG_LANES_CPU : 1, SEG_LANES_MIN, TEAM, teams ? (int)job.team_min : 0,
             teams ? PIECE : 0, warp, warp_ptx, ctx->device_kind == RG_DEVICE_CPU,
             merge ? 2 : 1, fp64 ? " -DNEED_FP64" : "", registers);
    switch (policy) {
    case RG_REDUCE_POLICY_PER_SEGMENT: return by_segment(&job);
    case RG_REDUCE_POLICY_MERGE_PATH: return by_merge_path(&job);
    case RG_REDUCE_POLICY_AUTO: break;
    }
    return rg_set_error(ctx, RG_EINVAL, "OpenCL backend: reduce policy %d is not a concrete one",
                        (int)policy);
}
