/* nonzero.c — the OpenCL backend's non-zero primitives: launches of nonzero.cl and trimming arrays. */
#include "config.h"

#include <stdio.h>

#include "ocl.h"

/* Elements per word of the bitmask (nonzero.cl's WORD): a work-item's share
 * of a tile.  A tile of 256 words stages its positions as 16 KiB of ushorts. */
#define NZ_WORD 32
/* Chunks (work-groups) per compute unit: on a GPU enough loads must be in
 * flight to cover the latency of its memory (256 groups reached 16-23% of a
 * copy on an H100).  At least two per work-item of a group, so that a CPU
 * device (and the test suite on PoCL) also takes nz_write's path for more
 * chunks than work-items. */
#define NZ_CHUNKS_PER_UNIT 8
/* The host adds up the chunk counts on its stack. */
#define NZ_MAX_CHUNKS 4096
/* Grid-stride segment kernels get at most this many work-groups (as in ops.c). */
#define NZ_MAX_GROUPS 65536
/* segment_nonzero's merge-path tiles: NZ_SEG_VT steps per work-item, at most
 * NZ_SEG_GROUP work-items (nonzero.cl's nz_seg_merge). */
#define NZ_SEG_VT 4
#define NZ_SEG_GROUP 256

/* The OpenCL C type that holds one element's bits. */
static const char *bits_type(size_t size)
{
    return size == 1 ? "uchar" : size == 2 ? "ushort" : size == 4 ? "uint" : "ulong";
}

/* The kernels, the chunking and the per-chunk counts of one input. */
typedef struct nz_plan {
    rg_ocl_kernel count, write;
    size_t group, chunks;
    cl_ulong n, chunk;
    union {
        cl_uchar u8;
        cl_ushort u16;
        cl_uint u32;
        cl_ulong u64;
    } mask; /* the mask as the element type: it is passed by value */
    size_t mask_size;
    cl_mem counts; /* one long per chunk */
    cl_mem bits;   /* one bit per element, in 32-bit words */
} nz_plan;

static void plan_free(nz_plan *p)
{
    if (p->counts)
        rg_cl.clReleaseMemObject(p->counts);
    if (p->bits)
        rg_cl.clReleaseMemObject(p->bits);
    p->counts = p->bits = NULL;
}

static rg_status plan_make(nz_plan *p, const rg_array *a, uint64_t mask, bool write)
{
    rg_context *ctx = a->ctx;
    size_t size = rg_dtype_size(a->dtype);
    rg_ocl *ocl = ctx->impl;
    p->counts = p->bits = NULL;
    /* The coalesced tiles of nz_count transpose blocks of 32 work-items;
     * with smaller work-groups each work-item makes whole words instead,
     * as on CPU devices (nz_write takes any group size). */
    rg_status st = RG_OK;
    int first = ocl->cpu_kernels || ocl->max_group < NZ_WORD; /* a kernel may allow fewer */
    for (int per_item = first; per_item <= 1; per_item++) {
        char options[64];
        snprintf(options, sizeof options, "-DT=%s -DWORD_PER_ITEM=%d", bits_type(size),
                 per_item);
        st = rg_ocl_get_kernel(ctx, "nonzero.cl", options, "nz_count", &p->count);
        if (st == RG_OK && write)
            st = rg_ocl_get_kernel(ctx, "nonzero.cl", options, "nz_write", &p->write);
        if (st != RG_OK)
            return st;
        p->group = p->count.group;
        if (write && p->write.group < p->group)
            p->group = p->write.group;
        if (per_item || p->group >= NZ_WORD) /* powers of two: from 32 on, whole words */
            break;
    }
    /* Chunks of whole tiles (of whole words). */
    size_t n = a->length, tile = p->group * NZ_WORD;
    size_t most = (size_t)ocl->compute_units * NZ_CHUNKS_PER_UNIT;
    most = most < 2 * p->group ? 2 * p->group : most > NZ_MAX_CHUNKS ? NZ_MAX_CHUNKS : most;
    size_t chunk;
    p->chunks = rg_ocl_chunks(ctx, n, tile, most, &chunk);
    p->chunk = chunk;
    p->n = n;
    p->mask_size = size;
    switch (size) {
    case 1: p->mask.u8 = (cl_uchar)mask; break;
    case 2: p->mask.u16 = (cl_ushort)mask; break;
    case 4: p->mask.u32 = (cl_uint)mask; break;
    default: p->mask.u64 = mask; break;
    }
    size_t words = n / NZ_WORD + (n % NZ_WORD != 0);
    st = rg_ocl_scratch(ctx, RG_SCRATCH_PARTIAL, p->chunks * sizeof(cl_long), &p->counts);
    if (st == RG_OK)
        st = rg_ocl_scratch(ctx, RG_SCRATCH_BITS, words * sizeof(cl_uint), &p->bits);
    return st; /* the caller frees the plan, also on failure */
}

static rg_status launch_count(const rg_array *a, nz_plan *p)
{
    cl_mem in = rg_ocl_mem_in(a);
    kernel_arg args[] = {ARG(in),
                         ARG(p->n),
                         ARG(p->chunk),
                         {p->mask_size, &p->mask, false},
                         ARG(p->bits),
                         ARG(p->counts),
                         LOCAL_ARG(p->group * sizeof(cl_long)),
                         LOCAL_ARG(p->group * sizeof(cl_uint))};
    return rg_ocl_launch(a->ctx, &p->count, p->chunks, p->group, args, NARGS(args));
}

/* Waits for the queue up to here and adds up the chunk counts. */
static rg_status read_total(rg_context *ctx, const nz_plan *p, int64_t *total)
{
    int64_t counts[NZ_MAX_CHUNKS];
    rg_status st = rg_ocl_read_back(ctx, p->counts, p->chunks * sizeof(cl_long), counts);
    if (st != RG_OK)
        return st;
    int64_t sum = 0;
    for (size_t i = 0; i < p->chunks; i++)
        sum += counts[i];
    *total = sum;
    return RG_OK;
}

rg_status rg_ocl_nonzero_count(const rg_array *a, uint64_t mask, int64_t *nnz)
{
    rg_ocl_begin(a->ctx);
    nz_plan p;
    rg_status st = plan_make(&p, a, mask, false);
    if (st == RG_OK)
        st = launch_count(a, &p);
    if (st == RG_OK)
        st = read_total(a->ctx, &p, nnz);
    plan_free(&p);
    return st;
}

/* Enqueues nz_write for rows rows of room in out. */
static rg_status launch_write(const rg_array *a, nz_plan *p, const int64_t *shape, size_t ndim,
                              cl_ulong rows, rg_array *out)
{
    rg_context *ctx = a->ctx;
    /* Copied at creation: no transfer is enqueued and no wait is needed for it. */
    cl_mem shape_mem;
    rg_status st = rg_ocl_create_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                        ndim * sizeof(cl_long), (void *)shape,
                                        "clCreateBuffer (shape)", &shape_mem);
    if (st != RG_OK)
        return st;
    cl_mem dst = rg_ocl_mem_of(out);
    cl_uint nd = (cl_uint)ndim;
    kernel_arg args[] = {ARG(p->bits),
                         ARG(p->n),
                         ARG(p->chunk),
                         ARG(p->counts),
                         ARG(shape_mem),
                         ARG(nd),
                         ARG(rows),
                         ARG(dst),
                         LOCAL_ARG(p->group * sizeof(cl_long)),
                         LOCAL_ARG(p->group * NZ_WORD * sizeof(cl_ushort)),
                         LOCAL_ARG(ndim * sizeof(cl_long))};
    st = rg_ocl_launch(ctx, &p->write, p->chunks, p->group, args, NARGS(args));
    rg_cl.clReleaseMemObject(shape_mem); /* released once the kernel is done with it */
    return st;
}

/* Without a bound: count, read the total, allocate exactly, write.  With a
 * bound: allocate the bound, count and write back to back, then read the
 * total once (the queue is in order, so the write is done by then). */
rg_status rg_ocl_nonzero(rg_array **coords, int64_t *nnz, const rg_array *a, uint64_t mask,
                         const int64_t *shape, size_t ndim, int64_t bound)
{
    rg_ocl_begin(a->ctx);
    rg_context *ctx = a->ctx;
    nz_plan p;
    rg_array *out = NULL;
    int64_t total = 0;
    rg_status st = plan_make(&p, a, mask, true);
    if (st == RG_OK)
        st = launch_count(a, &p);
    if (st == RG_OK && bound < 0)
        st = read_total(ctx, &p, &total);
    int64_t rows = bound < 0 ? total : bound;
    size_t length = 0;
    if (st == RG_OK && __builtin_mul_overflow((size_t)rows, ndim, &length))
        st = rg_set_error(ctx, RG_EOVERFLOW, "OpenCL backend: %lld rows of %zu coordinates "
                          "overflow size_t", (long long)rows, ndim);
    if (st == RG_OK)
        st = rg_array_create_uninit(&out, ctx, RG_INT64, length);
    if (st == RG_OK && rows > 0)
        st = launch_write(a, &p, shape, ndim, (cl_ulong)rows, out);
    if (st == RG_OK && bound >= 0)
        st = read_total(ctx, &p, &total);
    plan_free(&p);
    if (st != RG_OK) {
        rg_array_free(out);
        return st;
    }
    *coords = out;
    *nnz = total;
    return RG_OK;
}

/* With room for a row per element, the count and the write go back to back
 * and the total is read once at the end; otherwise the total is read first
 * and the write is launched only when the rows fit (else coords is not
 * touched: no upload, no kernel). */
rg_status rg_ocl_nonzero_into(rg_array *coords, int64_t *nnz, const rg_array *a, uint64_t mask,
                              const int64_t *shape, size_t ndim)
{
    rg_ocl_begin(a->ctx);
    rg_context *ctx = a->ctx;
    size_t room = coords->length / ndim;
    bool worst_case = room >= a->length;
    int64_t total = 0;
    nz_plan p;
    rg_status st = plan_make(&p, a, mask, true);
    if (st == RG_OK)
        st = launch_count(a, &p);
    if (st == RG_OK && !worst_case)
        st = read_total(ctx, &p, &total);
    if (st == RG_OK && (worst_case || (total > 0 && (uint64_t)total <= room)))
        st = launch_write(a, &p, shape, ndim, worst_case ? (cl_ulong)room : (cl_ulong)total,
                          coords);
    if (st == RG_OK && worst_case)
        st = read_total(ctx, &p, &total);
    plan_free(&p);
    if (st == RG_OK)
        *nnz = total;
    return st;
}

rg_status rg_ocl_segment_nonzero(rg_array *seg_offsets, rg_array *positions,
                                 const rg_array *offsets)
{
    rg_ocl_begin(seg_offsets->ctx);
    rg_context *ctx = offsets->ctx;
    const char *off_type = offsets->dtype == RG_INT32 ? "int" : "long";
    char options[48];
    snprintf(options, sizeof options, "-DOFF_T=%s -DVT=%d", off_type, NZ_SEG_VT);
    rg_ocl_kernel kb, km;
    rg_status st = rg_ocl_get_kernel(ctx, "nonzero.cl", options, "nz_seg_bounds", &kb);
    if (st == RG_OK)
        st = rg_ocl_get_kernel(ctx, "nonzero.cl", options, "nz_seg_merge", &km);
    if (st != RG_OK)
        return st;
    cl_mem o = rg_ocl_mem_in(offsets), pos = rg_ocl_mem_of(positions);
    cl_mem so = rg_ocl_mem_of(seg_offsets);
    cl_ulong nsegs = offsets->length - 1, nnz = positions->length;
    /* Tiles of NZ_SEG_VT merge steps per work-item, whose ends and
     * positions (as longs) sit in local memory: 16 KiB at 256 work-items. */
    size_t group = km.group < NZ_SEG_GROUP ? km.group : NZ_SEG_GROUP;
    cl_ulong tile = (cl_ulong)group * NZ_SEG_VT, steps = nsegs + nnz;
    size_t tiles = (size_t)(steps / tile + (steps % tile != 0));
    cl_mem bounds = NULL;
    st = rg_ocl_scratch(ctx, RG_SCRATCH_BOUNDS, (tiles + 1) * sizeof(cl_ulong), &bounds);
    kernel_arg bounds_args[] = {ARG(o), ARG(nsegs), ARG(pos), ARG(nnz), ARG(tile), ARG(bounds)};
    kernel_arg args[] = {ARG(o),      ARG(nsegs),
                         ARG(pos),    ARG(nnz),
                         ARG(tile),   ARG(bounds),
                         ARG(so),     LOCAL_ARG(tile * sizeof(cl_long)),
                         LOCAL_ARG(tile * sizeof(cl_long))};
    /* In this order: the bounds search the positions before they are made local. */
    if (st == RG_OK)
        st = rg_ocl_launch(ctx, &kb, rg_ocl_stride_groups(ctx, tiles + 1, kb.group, NZ_MAX_GROUPS),
                           kb.group, bounds_args, NARGS(bounds_args));
    if (st == RG_OK)
        st = rg_ocl_launch(ctx, &km, rg_ocl_stride_groups(ctx, tiles, 1, NZ_MAX_GROUPS), group,
                           args, NARGS(args));
    if (bounds)
        rg_cl.clReleaseMemObject(bounds);
    return st;
}

/* A shrunk array keeps its buffer unless it now uses less than half of it;
 * then its elements move to a fitting buffer, on the device. */
bool rg_ocl_array_trim(rg_array *a, size_t old_nbytes)
{
    rg_ocl *ocl = a->ctx->impl;
    cl_mem old = a->dev;
    if (!old || a->nbytes > old_nbytes / 2)
        return false;
    cl_mem fresh = NULL;
    cl_int err = CL_SUCCESS;
    if (a->nbytes > 0)
        fresh = rg_cl.clCreateBuffer(ocl->context, CL_MEM_READ_WRITE, a->nbytes, NULL, &err);
    if (fresh)
        err = rg_cl.clEnqueueCopyBuffer(ocl->queue, old, fresh, 0, 0, a->nbytes, 0, NULL, NULL);
    if (a->nbytes > 0 && (!fresh || err != CL_SUCCESS)) {
        if (fresh)
            rg_cl.clReleaseMemObject(fresh);
        return false; /* best effort: the old buffer still holds the elements */
    }
    rg_cl.clReleaseMemObject(old);
    a->dev = fresh;
    return true;
}
