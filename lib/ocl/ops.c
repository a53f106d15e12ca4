/* ops.c — the OpenCL backend's table: device arrays and the offsets primitives as kernel launches. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ocl.h"

/* Grid-stride kernels never get more work-groups than this: enough to fill
 * any device, and global sizes stay far from 2^32. */
#define MAX_STRIDE_GROUPS 65536
/* Reductions write one partial per work-group, which the host then reads. */
#define MAX_REDUCE_GROUPS 1024
/* Elements per work-item per tile in scan.cl: a tile of 256 * 8 longs is 16 KiB of local memory. */
#define SCAN_VT 8
/* Scan chunks per compute unit, as for merge-path reductions (reduce.c):
 * every chunk is the same work.  At most one chunk per work-item, 256 on
 * an H200's 132 units, filled a quarter of its work-item slots, and
 * the scan's first pass read at a third of a copy's speed. */
#define SCAN_CHUNKS_PER_UNIT 32
/* Chunk totals per work-item of scan_partials; bounds the chunk count at
 * group * SCAN_PARTIALS_PER_ITEM. */
#define SCAN_PARTIALS_PER_ITEM 32
/* Merge-path tiles: MERGE_PER_ITEM path steps per work-item, MERGE_GROUP
 * work-items (fewer where the device allows fewer); the tile's segment
 * ends and each element's segment (8 * 256 ints each, 16 KiB) sit in local
 * memory. */
#define MERGE_PER_ITEM 8
#define MERGE_GROUP 256
/* Per segment on GPUs (parents.cl's seg_staged): blocks of MERGE_GROUP
 * segments whose elements fit STAGED_PER_ITEM per work-item (16 KiB of
 * local memory) go through local memory; from STAGED_PIECE elements a
 * segment's writes are shared across work-groups (seg_pieces).  Segments
 * of one element keep seg_per_segment, whose stores already coalesce. */
#define STAGED_PER_ITEM 32
#define STAGED_PIECE 65536

enum { SCAN_ADD = 1, SCAN_MAX = 2 }; /* SCAN_OP of scan.cl */

static rg_ocl *ocl_of(const rg_array *a)
{
    return a->ctx->impl;
}

/* Remembers a failed upload of mem_in/mem_of for the next launch. */
static void defer_failure(rg_context *ctx, rg_status st)
{
    rg_ocl *ocl = ctx->impl;
    if (ocl->deferred != RG_OK)
        return; /* the first failure explains the rest */
    ocl->deferred = st;
    snprintf(ocl->deferred_what, sizeof ocl->deferred_what, "%s", rg_context_error(ctx));
}

/* Every array reaches a kernel through mem_in or mem_of, which makes this
 * the one place that cannot be forgotten for keeping the host mirror and
 * the device copy coherent: what the host changed is uploaded first
 * (rg_array_sync_device).  mem_of, the default, also marks the host copy
 * stale, since the kernel may write the array; mem_in is for arrays an op
 * only reads, whose host copy then stays valid.  An upload failure cannot
 * be returned from here, so it is parked in ocl->deferred and the next
 * launch reports it instead of running a kernel on stale data. */
static bool synced(const rg_array *a)
{
    rg_status st = rg_array_sync_device(a);
    if (st != RG_OK)
        defer_failure(a->ctx, st);
    return st == RG_OK;
}

cl_mem rg_ocl_mem_in(const rg_array *a)
{
    synced(a);
    return (cl_mem)a->dev;
}

cl_mem rg_ocl_mem_of(const rg_array *a)
{
    if (synced(a)) /* else the op fails at its launch, and the host copy stays the value */
        rg_array_touch_device(a);
    return (cl_mem)a->dev;
}

void rg_ocl_begin(rg_context *ctx)
{
    rg_ocl *ocl = ctx->impl;
    ocl->deferred = RG_OK;
}

/* The OpenCL C type of an index dtype (the front end allows only these two). */
static const char *cl_type(rg_dtype dtype)
{
    return dtype == RG_INT32 ? "int" : "long";
}

/* ---- launching ------------------------------------------------------------ */

/* The upload failure parked by rg_ocl_mem_in/of, if any, before work named `what`. */
static rg_status take_deferred(rg_context *ctx, const char *what)
{
    rg_ocl *ocl = ctx->impl;
    if (ocl->deferred == RG_OK)
        return RG_OK;
    rg_status st = ocl->deferred;
    ocl->deferred = RG_OK;
    return rg_set_error(ctx, st, "uploading an array's changed range before %s: %s", what,
                        ocl->deferred_what);
}

/* RAGGED_PROFILE=1: waits for the kernel and prints its device time from
 * the event's profiling counters (not the host's clock, which would add the
 * launch and the wait).  A failure here only loses the line. */
static void report_time(const rg_ocl_kernel *k, size_t groups, size_t group, cl_event done)
{
    cl_ulong start = 0, end = 0;
    if (rg_cl.clWaitForEvents(1, &done) == CL_SUCCESS &&
        rg_cl.clGetEventProfilingInfo(done, CL_PROFILING_COMMAND_START, sizeof start, &start,
                                      NULL) == CL_SUCCESS &&
        rg_cl.clGetEventProfilingInfo(done, CL_PROFILING_COMMAND_END, sizeof end, &end,
                                      NULL) == CL_SUCCESS &&
        end >= start)
        fprintf(stderr, "ragged profile: %s %zu x %zu work-items %.1f us\n", k->name, groups,
                group, (double)(end - start) * 1e-3);
    else
        fprintf(stderr, "ragged profile: %s %zu x %zu work-items (no time)\n", k->name, groups,
                group);
    rg_cl.clReleaseEvent(done);
}

/* PoCL keeps one list of loaded kernels for the whole process, and when a
 * kernel ends it looks the kernel's entry up by kernel and work-group size
 * alone, so the entry it finds can be another's: that of the same kernel
 * (built in another context) run on a wider grid from another queue, say.
 * It then aborts on an assertion (pocl_release_dlhandle_cache: PoCL 3.1,
 * when three threads' contexts built and ran the same programs at once).
 * So on PoCL, a launch takes this lock and holds it until its kernel is
 * done, one kernel at a time in the process, which costs a CPU device
 * little: each kernel uses every core anyway.  Reading a program's binaries
 * takes it too, as PoCL then compiles and lists the program's kernels. */
static pthread_mutex_t serial_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local bool holding_serial, fork_took_serial;

void rg_ocl_serial_begin(const rg_ocl *ocl)
{
    if (ocl->serial) {
        pthread_mutex_lock(&serial_lock);
        holding_serial = true;
    }
}

void rg_ocl_serial_end(const rg_ocl *ocl)
{
    if (ocl->serial) {
        holding_serial = false;
        pthread_mutex_unlock(&serial_lock);
    }
}

void rg_ocl_serial_fork(bool take)
{
    if (take) {
        fork_took_serial = !holding_serial; /* a fork under it, by the driver: left alone */
        if (fork_took_serial)
            pthread_mutex_lock(&serial_lock);
    } else if (fork_took_serial) {
        pthread_mutex_unlock(&serial_lock);
    }
}

rg_status rg_ocl_launch(rg_context *ctx, const rg_ocl_kernel *k, size_t groups, size_t group,
                        const kernel_arg *args, size_t nargs)
{
    rg_ocl *ocl = ctx->impl;
    char what[128];
    rg_status st = take_deferred(ctx, k->name);
    if (st != RG_OK)
        return st;
    for (size_t i = 0; i < nargs; i++) {
        cl_int err = rg_cl.clSetKernelArg(k->kernel, (cl_uint)i, args[i].size, args[i].value);
        if (err != CL_SUCCESS) {
            snprintf(what, sizeof what, "clSetKernelArg(%s, %zu)", k->name, i);
            return rg_cl_fail(ctx, err, false, what);
        }
    }
    size_t global = groups * group, local = group;
    cl_event done = NULL;
    rg_ocl_serial_begin(ocl);
    cl_int err = rg_cl.clEnqueueNDRangeKernel(ocl->queue, k->kernel, 1, NULL, &global, &local,
                                              0, NULL, ocl->profile || ocl->serial ? &done : NULL);
    cl_int waited = CL_SUCCESS;
    if (err == CL_SUCCESS && ocl->serial)
        waited = rg_cl.clWaitForEvents(1, &done);
    rg_ocl_serial_end(ocl);
    if (err != CL_SUCCESS) {
        snprintf(what, sizeof what, "clEnqueueNDRangeKernel(%s)", k->name);
        return rg_cl_fail(ctx, err, false, what);
    }
    /* Whether the kernel may write the op's output: one of its buffers. */
    for (size_t i = 0; i < nargs; i++)
        if (args[i].buffer)
            rg_op_queued(ctx, *(const cl_mem *)args[i].value);
    if (waited != CL_SUCCESS) {
        rg_cl.clReleaseEvent(done);
        snprintf(what, sizeof what, "clWaitForEvents(%s)", k->name);
        return rg_cl_fail(ctx, waited, false, what);
    }
    if (ocl->profile)
        report_time(k, groups, group, done);
    else if (done)
        rg_cl.clReleaseEvent(done);
    return RG_OK;
}

size_t rg_ocl_stride_groups(const rg_context *ctx, size_t n, size_t group, size_t cap)
{
    const rg_ocl *ocl = ctx->impl;
    if (ocl->group_cap && ocl->group_cap < cap)
        cap = ocl->group_cap;
    size_t groups = n / group + (n % group != 0);
    return groups == 0 ? 1 : groups < cap ? groups : cap;
}

size_t rg_ocl_chunks(const rg_context *ctx, size_t n, size_t tile, size_t want, size_t *chunk)
{
    *chunk = tile;
    if (n == 0)
        return 0;
    size_t count = rg_ocl_stride_groups(ctx, n, tile, want);
    size_t per_chunk = n / count + (n % count != 0);
    *chunk = (per_chunk / tile + (per_chunk % tile != 0)) * tile;
    return n / *chunk + (n % *chunk != 0);
}

static bool out_of_memory(cl_int err)
{
    return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
           err == CL_OUT_OF_HOST_MEMORY;
}

rg_status rg_ocl_create_buffer(rg_context *ctx, cl_mem_flags flags, size_t nbytes, void *host,
                               const char *what, cl_mem *out)
{
    rg_ocl *ocl = ctx->impl;
    cl_int err;
    cl_mem mem = rg_cl.clCreateBuffer(ocl->context, flags, nbytes, host, &err);
    if (!mem && out_of_memory(err) && rg_ocl_scratch_free(ocl) > 0)
        mem = rg_cl.clCreateBuffer(ocl->context, flags, nbytes, host, &err);
    if (!mem)
        return rg_cl_fail(ctx, err, true, what);
    *out = mem;
    return RG_OK;
}

rg_status rg_ocl_scratch(rg_context *ctx, rg_ocl_scratch_role role, size_t nbytes, cl_mem *out)
{
    rg_ocl *ocl = ctx->impl;
    nbytes = nbytes > 0 ? nbytes : 1;
    if (ocl->scratch_bytes[role] < nbytes) {
        /* Freed first, so that the larger one may take its memory. */
        if (ocl->scratch[role])
            rg_cl.clReleaseMemObject(ocl->scratch[role]);
        ocl->scratch[role] = NULL;
        ocl->scratch_bytes[role] = 0;
        cl_mem mem;
        rg_status st = rg_ocl_create_buffer(ctx, CL_MEM_READ_WRITE, nbytes, NULL,
                                            "clCreateBuffer (temporary)", &mem);
        if (st != RG_OK)
            return st;
        ocl->scratch[role] = mem;
        ocl->scratch_bytes[role] = nbytes;
    }
    cl_int err = rg_cl.clRetainMemObject(ocl->scratch[role]);
    if (err != CL_SUCCESS)
        return rg_cl_fail(ctx, err, false, "clRetainMemObject");
    *out = ocl->scratch[role];
    return RG_OK;
}

size_t rg_ocl_scratch_free(rg_ocl *ocl)
{
    size_t freed = 0;
    for (int r = 0; r < RG_SCRATCH_ROLES; r++) {
        if (ocl->scratch[r]) /* the memory goes once the ops that hold it are done */
            rg_cl.clReleaseMemObject(ocl->scratch[r]);
        freed += ocl->scratch_bytes[r];
        ocl->scratch[r] = NULL;
        ocl->scratch_bytes[r] = 0;
    }
    if (ocl->spare)
        rg_cl.clReleaseMemObject(ocl->spare);
    freed += ocl->spare_bytes;
    ocl->spare = NULL;
    ocl->spare_bytes = 0;
    return freed;
}

rg_status rg_ocl_read_back(rg_context *ctx, cl_mem mem, size_t nbytes, void *dst)
{
    rg_ocl *ocl = ctx->impl;
    cl_int err = rg_cl.clEnqueueReadBuffer(ocl->queue, mem, CL_TRUE, 0, nbytes, dst, 0, NULL,
                                           NULL);
    if (err != CL_SUCCESS)
        return rg_cl_fail(ctx, err, false, "clEnqueueReadBuffer");
    ctx->bytes_down += nbytes;
    return RG_OK;
}

static rg_status fill_zero(rg_context *ctx, cl_mem mem, size_t nbytes)
{
    rg_ocl *ocl = ctx->impl;
    static const cl_ulong zero = 0;
    /* The widest pattern that divides the size: byte patterns are slow on some drivers. */
    size_t pattern = 8;
    while (nbytes % pattern != 0)
        pattern /= 2;
    cl_int err = rg_cl.clEnqueueFillBuffer(ocl->queue, mem, &zero, pattern, 0, nbytes, 0, NULL,
                                           NULL);
    if (err != CL_SUCCESS)
        return rg_cl_fail(ctx, err, true, "clEnqueueFillBuffer");
    rg_op_queued(ctx, mem);
    return RG_OK;
}

/* ---- arrays --------------------------------------------------------------- */

/* The buffer of the largest array freed last, from SPARE_MIN to SPARE_MAX
 * bytes, is kept for the next array of about its size: a result made in a
 * loop (rg_nonzero's, rg_array_from_host's) then skips a device allocation
 * per call, which for large buffers costs GPUs about as much as the op
 * (CuPy pools its memory for the same reason).  Only arrays of at least
 * 4/5 of the spare take it, so that little of it lies unused. */
#define SPARE_MIN ((size_t)1 << 20)
#define SPARE_MAX ((size_t)1 << 30)

static cl_mem take_spare(rg_ocl *ocl, size_t nbytes)
{
    if (!ocl->spare || nbytes < SPARE_MIN || ocl->spare_bytes < nbytes ||
        ocl->spare_bytes - nbytes > ocl->spare_bytes / 5)
        return NULL;
    cl_mem mem = ocl->spare;
    ocl->spare = NULL;
    ocl->spare_bytes = 0;
    return mem;
}

/* Keeps mem as the spare if it is the larger; releases the other.  Its
 * size is the buffer's own: an array may hold a larger buffer than its
 * length needs (a spare it took, a capacity it grew to, a shrink in place). */
static void keep_spare(rg_ocl *ocl, cl_mem mem)
{
    size_t nbytes = 0;
    if (rg_cl.clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof nbytes, &nbytes, NULL) != CL_SUCCESS ||
        nbytes < SPARE_MIN || nbytes > SPARE_MAX || nbytes < ocl->spare_bytes) {
        rg_cl.clReleaseMemObject(mem);
        return;
    }
    if (ocl->spare)
        rg_cl.clReleaseMemObject(ocl->spare);
    ocl->spare = mem;
    ocl->spare_bytes = nbytes;
}

static rg_status array_alloc(rg_array *a, bool zero)
{
    rg_context *ctx = a->ctx;
    rg_ocl *ocl = ocl_of(a);
    a->dev = NULL;
    if (a->nbytes == 0)
        return RG_OK; /* OpenCL has no empty buffers; no op enqueues work for them */
    if (ocl->max_alloc > 0 && a->nbytes > ocl->max_alloc)
        return rg_set_error(ctx, RG_EDEVMEM,
                            "an array of %zu bytes exceeds the largest buffer %s allows "
                            "(CL_DEVICE_MAX_MEM_ALLOC_SIZE = %llu)",
                            a->nbytes, ocl->device_name, (unsigned long long)ocl->max_alloc);
    cl_mem mem = take_spare(ocl, a->nbytes);
    rg_status st = mem ? RG_OK
                       : rg_ocl_create_buffer(ctx, CL_MEM_READ_WRITE, a->nbytes, NULL,
                                              "clCreateBuffer", &mem);
    if (st != RG_OK)
        return st;
    st = zero ? fill_zero(ctx, mem, a->nbytes) : RG_OK;
    if (st != RG_OK) {
        keep_spare(ocl, mem);
        return st;
    }
    a->dev = mem;
    return RG_OK;
}

static void array_release(rg_array *a)
{
    if (a->dev) /* the queue is in order: a later op's use of it follows this one's */
        keep_spare(ocl_of(a), (cl_mem)a->dev);
    a->dev = NULL;
}

/* Raw copies, counted; the array layer (rg_mirror_write/read) decides when. */
static rg_status upload(rg_array *a, size_t byte_off, const void *src, size_t nbytes)
{
    if (nbytes == 0)
        return RG_OK;
    cl_int err = rg_cl.clEnqueueWriteBuffer(ocl_of(a)->queue, (cl_mem)a->dev, CL_TRUE, byte_off,
                                            nbytes, src, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        return rg_cl_fail(a->ctx, err, false, "clEnqueueWriteBuffer");
    a->ctx->bytes_up += nbytes;
    return RG_OK;
}

static rg_status download(const rg_array *a, size_t byte_off, void *dst, size_t nbytes)
{
    if (nbytes == 0)
        return RG_OK;
    cl_int err = rg_cl.clEnqueueReadBuffer(ocl_of(a)->queue, (cl_mem)a->dev, CL_TRUE, byte_off,
                                           nbytes, dst, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        return rg_cl_fail(a->ctx, err, false, "clEnqueueReadBuffer");
    a->ctx->bytes_down += nbytes;
    return RG_OK;
}

/* A zero-filled buffer of the new capacity with the old buffer copied in
 * (on the device: a growing list never sends its content up again). */
static rg_status array_grow(rg_array *a, size_t old_capacity)
{
    rg_context *ctx = a->ctx;
    rg_ocl *ocl = ocl_of(a);
    size_t size = rg_dtype_size(a->dtype), old_bytes = old_capacity * size;
    size_t nbytes = a->capacity * size;
    if (ocl->max_alloc > 0 && nbytes > ocl->max_alloc)
        return rg_set_error(ctx, RG_EDEVMEM,
                            "growing an array to %zu bytes exceeds the largest buffer %s allows "
                            "(CL_DEVICE_MAX_MEM_ALLOC_SIZE = %llu)",
                            nbytes, ocl->device_name, (unsigned long long)ocl->max_alloc);
    cl_mem mem;
    rg_status st = rg_ocl_create_buffer(ctx, CL_MEM_READ_WRITE, nbytes, NULL,
                                        "clCreateBuffer (growing an array)", &mem);
    if (st != RG_OK)
        return st;
    st = fill_zero(ctx, mem, nbytes);
    if (st == RG_OK && a->dev && old_bytes > 0) {
        cl_int err = rg_cl.clEnqueueCopyBuffer(ocl->queue, (cl_mem)a->dev, mem, 0, 0, old_bytes,
                                               0, NULL, NULL);
        if (err != CL_SUCCESS)
            st = rg_cl_fail(ctx, err, true, "clEnqueueCopyBuffer (growing an array)");
    }
    if (st != RG_OK) {
        rg_cl.clReleaseMemObject(mem);
        return st;
    }
    if (a->dev)
        rg_cl.clReleaseMemObject((cl_mem)a->dev); /* released once the copy is done */
    a->dev = mem;
    return RG_OK;
}

static const char *cl_value_type(rg_dtype dtype, int *kind);
static rg_status scalar_fill(rg_array *a, const void *value);

static rg_status array_fill(rg_array *a, const void *value)
{
    rg_ocl_begin(a->ctx);
    int kind;
    /* A kernel on GPUs (scalar.cl says why); the driver's fill on CPUs,
     * where PoCL's was the faster, and for bool, which has no T there. */
    if (!ocl_of(a)->cpu_kernels && cl_value_type(a->dtype, &kind))
        return scalar_fill(a, value);
    cl_mem mem = rg_ocl_mem_of(a);
    rg_status st = take_deferred(a->ctx, "a fill");
    if (st != RG_OK)
        return st;
    cl_int err = rg_cl.clEnqueueFillBuffer(ocl_of(a)->queue, mem, value, rg_dtype_size(a->dtype),
                                           0, a->nbytes, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        return rg_cl_fail(a->ctx, err, false, "clEnqueueFillBuffer");
    rg_op_queued(a->ctx, mem);
    return RG_OK;
}

static rg_status array_copy(rg_array *dst, const rg_array *src)
{
    rg_ocl_begin(dst->ctx);
    cl_mem from = rg_ocl_mem_in(src), to = rg_ocl_mem_of(dst);
    rg_status st = take_deferred(dst->ctx, "a copy");
    if (st != RG_OK)
        return st;
    cl_int err = rg_cl.clEnqueueCopyBuffer(ocl_of(dst)->queue, from, to, 0, 0, src->nbytes, 0,
                                           NULL, NULL);
    if (err != CL_SUCCESS)
        return rg_cl_fail(dst->ctx, err, false, "clEnqueueCopyBuffer");
    rg_op_queued(dst->ctx, to);
    return RG_OK;
}

static rg_status finish(rg_context *ctx)
{
    cl_int err = rg_cl.clFinish(((rg_ocl *)ctx->impl)->queue);
    return err == CL_SUCCESS ? RG_OK : rg_cl_fail(ctx, err, false, "clFinish");
}

static size_t scratch_bytes(const rg_context *ctx)
{
    const rg_ocl *ocl = ctx->impl;
    size_t sum = ocl->spare_bytes;
    for (int r = 0; r < RG_SCRATCH_ROLES; r++)
        sum += ocl->scratch_bytes[r];
    return sum;
}

static void scratch_free(rg_context *ctx)
{
    rg_ocl_scratch_free(ctx->impl);
}

/* ---- offsets.cl: checks, lengths, totals ---------------------------------- */

static rg_status offsets_kernel(rg_context *ctx, rg_dtype in, rg_dtype out, const char *name,
                                rg_ocl_kernel *k)
{
    char options[80];
    snprintf(options, sizeof options, "-DIN_T=%s -DOUT_T=%s -DFLAT_BARRIERS=%d", cl_type(in),
             cl_type(out), ctx->device_kind == RG_DEVICE_CPU);
    return rg_ocl_get_kernel(ctx, "offsets.cl", options, name, k);
}

static int64_t min_of(const int64_t *v, size_t n)
{
    int64_t m = INT64_MAX;
    for (size_t i = 0; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

static int64_t max_of(const int64_t *v, size_t n)
{
    int64_t m = INT64_MIN;
    for (size_t i = 0; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

/* Launches an offsets.cl reduction kernel (in, n, local buffer, out) over
 * groups work-groups, each writing `fields` partial results, and reads the
 * groups * fields partials back into part. */
static rg_status partials(rg_context *ctx, const rg_ocl_kernel *k, cl_mem in, cl_ulong n,
                          size_t groups, size_t fields, int64_t *part)
{
    cl_mem out = NULL;
    kernel_arg args[] = {ARG(in), ARG(n), LOCAL_ARG(k->group * sizeof(cl_long)), ARG(out)};
    rg_status st = rg_ocl_scratch(ctx, RG_SCRATCH_PARTIAL, groups * fields * sizeof(cl_long), &out);
    if (st == RG_OK)
        st = rg_ocl_launch(ctx, k, groups, k->group, args, NARGS(args));
    if (st == RG_OK)
        st = rg_ocl_read_back(ctx, out, groups * fields * sizeof(cl_long), part);
    if (out)
        rg_cl.clReleaseMemObject(out);
    return st;
}

static rg_status offsets_check(const rg_array *offsets, int64_t *first_bad, int64_t *longest)
{
    rg_ocl_begin(offsets->ctx);
    rg_context *ctx = offsets->ctx;
    rg_ocl_kernel k;
    rg_status st = offsets_kernel(ctx, offsets->dtype, offsets->dtype, "offsets_check", &k);
    if (st != RG_OK)
        return st;
    size_t groups = rg_ocl_stride_groups(ctx, offsets->length, k.group, MAX_REDUCE_GROUPS);
    int64_t part[2 * MAX_REDUCE_GROUPS];
    st = partials(ctx, &k, rg_ocl_mem_in(offsets), offsets->length, groups, 2, part);
    if (st == RG_OK) {
        int64_t m = min_of(part, groups);
        *first_bad = m == INT64_MAX ? -1 : m;
        *longest = m == INT64_MAX ? max_of(part + groups, groups) : -1;
    }
    return st;
}

static rg_status lengths(rg_array *out, const rg_array *offsets)
{
    rg_ocl_begin(out->ctx);
    rg_context *ctx = offsets->ctx;
    cl_ulong nsegs = offsets->length - 1;
    if (nsegs == 0)
        return RG_OK;
    rg_ocl_kernel k;
    rg_status st = offsets_kernel(ctx, offsets->dtype, out->dtype, "lengths", &k);
    cl_mem o = rg_ocl_mem_in(offsets), dst = rg_ocl_mem_of(out);
    kernel_arg args[] = {ARG(o), ARG(nsegs), ARG(dst)};
    if (st == RG_OK)
        st = rg_ocl_launch(ctx, &k, rg_ocl_stride_groups(ctx, nsegs, k.group, MAX_STRIDE_GROUPS),
                           k.group, args, NARGS(args));
    return st;
}

static uint64_t saturated_sum(const uint64_t *v, size_t n)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum = v[i] > UINT64_MAX - sum ? UINT64_MAX : sum + v[i];
    return sum;
}

static rg_status lengths_total(const rg_array *len, int64_t *first_negative, uint64_t *total,
                               int64_t *longest)
{
    rg_ocl_begin(len->ctx);
    rg_context *ctx = len->ctx;
    cl_ulong n = len->length;
    if (n == 0) {
        *first_negative = -1;
        *total = 0;
        *longest = 0;
        return RG_OK;
    }
    rg_ocl_kernel k;
    rg_status st = offsets_kernel(ctx, len->dtype, len->dtype, "lengths_total", &k);
    if (st != RG_OK)
        return st;
    size_t groups = rg_ocl_stride_groups(ctx, n, k.group, MAX_REDUCE_GROUPS);
    int64_t part[3 * MAX_REDUCE_GROUPS];
    st = partials(ctx, &k, rg_ocl_mem_in(len), n, groups, 3, part);
    if (st == RG_OK) {
        uint64_t sum[MAX_REDUCE_GROUPS];
        memcpy(sum, part + groups, groups * sizeof *sum);
        int64_t m = min_of(part, groups);
        *first_negative = m == INT64_MAX ? -1 : m;
        *total = saturated_sum(sum, groups);
        *longest = max_of(part + 2 * groups, groups);
    }
    return st;
}

/* out[i] = inner[outer[i]], or a converting copy of outer when inner is NULL. */
static rg_status compose(rg_array *out, const rg_array *outer, const rg_array *inner)
{
    rg_ocl_begin(out->ctx);
    rg_context *ctx = out->ctx;
    cl_ulong n = out->length;
    if (n == 0)
        return RG_OK;
    const rg_array *src = inner ? inner : outer;
    char options[96];
    snprintf(options, sizeof options, "-DIN_T=%s -DOUT_T=%s -DINNER_T=%s", cl_type(outer->dtype),
             cl_type(out->dtype), cl_type(src->dtype));
    rg_ocl_kernel k;
    rg_status st = rg_ocl_get_kernel(ctx, "offsets.cl", options, "compose", &k);
    cl_mem o = rg_ocl_mem_in(outer), in = rg_ocl_mem_in(src), dst = rg_ocl_mem_of(out);
    cl_int identity = inner == NULL;
    kernel_arg args[] = {ARG(o), ARG(in), ARG(identity), ARG(n), ARG(dst)};
    if (st == RG_OK)
        st = rg_ocl_launch(ctx, &k, rg_ocl_stride_groups(ctx, n, k.group, MAX_STRIDE_GROUPS),
                           k.group, args, NARGS(args));
    return st;
}

/* ---- scan.cl -------------------------------------------------------------- */

typedef struct scan_kernels {
    rg_ocl_kernel reduce, partials, chunks;
    size_t group; /* one size for all three */
} scan_kernels;

static rg_status get_scan_kernels(rg_context *ctx, rg_dtype in, rg_dtype out, int op,
                                  scan_kernels *s)
{
    char options[96];
    snprintf(options, sizeof options, "-DIN_T=%s -DOUT_T=%s -DSCAN_OP=%d -DVT=%d", cl_type(in),
             cl_type(out), op, SCAN_VT);
    rg_status st = rg_ocl_get_kernel(ctx, "scan.cl", options, "scan_reduce", &s->reduce);
    if (st == RG_OK)
        st = rg_ocl_get_kernel(ctx, "scan.cl", options, "scan_partials", &s->partials);
    if (st == RG_OK)
        st = rg_ocl_get_kernel(ctx, "scan.cl", options, "scan_chunks", &s->chunks);
    if (st != RG_OK)
        return st;
    s->group = s->reduce.group;
    if (s->partials.group < s->group)
        s->group = s->partials.group;
    if (s->chunks.group < s->group)
        s->group = s->chunks.group;
    return st;
}

/* A scan of n elements (n > 0) made ready to run: its kernels, chunking
 * and temporary buffer, obtained before anything is written, so that an op
 * that scans its output after writing it fails (missing or broken scan.cl,
 * no device memory) with the output untouched. */
typedef struct scan_plan {
    scan_kernels s;
    size_t n, count;
    cl_ulong chunk, per_item;
    cl_mem partial;
} scan_plan;

static rg_status scan_prepare(rg_context *ctx, rg_dtype in_type, rg_dtype out_type, int op,
                              size_t n, scan_plan *p)
{
    p->partial = NULL;
    rg_status st = get_scan_kernels(ctx, in_type, out_type, op, &p->s);
    if (st != RG_OK)
        return st;
    /* Chunks of whole tiles: SCAN_CHUNKS_PER_UNIT per compute unit, or one
     * per work-item of a group where that is more (devices with few
     * units), and at most SCAN_PARTIALS_PER_ITEM per work-item. */
    size_t group = p->s.group, tile = group * SCAN_VT;
    rg_ocl *ocl = ctx->impl;
    size_t most = (size_t)ocl->compute_units * SCAN_CHUNKS_PER_UNIT;
    if (most > group * SCAN_PARTIALS_PER_ITEM)
        most = group * SCAN_PARTIALS_PER_ITEM;
    if (most < group)
        most = group;
    size_t chunk;
    p->count = rg_ocl_chunks(ctx, n, tile, most, &chunk);
    p->chunk = chunk;
    p->per_item = p->count / group + (p->count % group != 0);
    p->n = n;
    return rg_ocl_scratch(ctx, RG_SCRATCH_PARTIAL, p->count * sizeof(cl_long), &p->partial);
}

/* out[i + shift] = in[0] op ... op in[i] for i < n; shift 1 also writes
 * out[0] = 0 (add only).  in and out may be one buffer when shift is 0. */
static rg_status scan_run(rg_context *ctx, scan_plan *p, cl_mem in, cl_mem out, cl_ulong shift)
{
    size_t group = p->s.group, tile = group * SCAN_VT;
    cl_ulong n64 = p->n, count64 = p->count;
    kernel_arg reduce_args[] = {ARG(in), ARG(n64), ARG(p->chunk), ARG(p->partial),
                                LOCAL_ARG(group * sizeof(cl_long))};
    kernel_arg partial_args[] = {ARG(p->partial), ARG(count64), ARG(p->per_item),
                                 LOCAL_ARG(group * sizeof(cl_long))};
    kernel_arg chunk_args[] = {ARG(in),       ARG(out),
                               ARG(n64),      ARG(p->chunk),
                               ARG(shift),    ARG(p->partial),
                               LOCAL_ARG(tile * sizeof(cl_long)),
                               LOCAL_ARG(group * sizeof(cl_long))};
    rg_status st =
        rg_ocl_launch(ctx, &p->s.reduce, p->count, group, reduce_args, NARGS(reduce_args));
    if (st == RG_OK)
        st = rg_ocl_launch(ctx, &p->s.partials, 1, group, partial_args, NARGS(partial_args));
    if (st == RG_OK)
        st = rg_ocl_launch(ctx, &p->s.chunks, p->count, group, chunk_args, NARGS(chunk_args));
    return st;
}

static void scan_release(scan_plan *p)
{
    if (p->partial)
        rg_cl.clReleaseMemObject(p->partial);
    p->partial = NULL;
}

static rg_status offsets_from_lengths(rg_array *offsets, const rg_array *len)
{
    rg_ocl_begin(offsets->ctx);
    rg_context *ctx = offsets->ctx;
    if (len->length == 0) {
        static const int64_t zero = 0;
        return rg_mirror_write(offsets, 0, &zero, rg_dtype_size(offsets->dtype));
    }
    scan_plan plan;
    rg_status st = scan_prepare(ctx, len->dtype, offsets->dtype, SCAN_ADD, len->length, &plan);
    if (st == RG_OK)
        st = scan_run(ctx, &plan, rg_ocl_mem_in(len), rg_ocl_mem_of(offsets), 1);
    scan_release(&plan);
    return st;
}

/* ---- parents.cl ----------------------------------------------------------- */

typedef struct seg_job {
    rg_context *ctx;
    cl_mem o, out;
    cl_ulong nsegs, nelems;
    cl_int kind;
    int64_t longest; /* the longest segment, or -1 when not known */
    char options[96];
} seg_job;

static rg_status seg_kernel(const seg_job *job, const char *name, rg_ocl_kernel *k)
{
    return rg_ocl_get_kernel(job->ctx, "parents.cl", job->options, name, k);
}

static rg_status by_bsearch(seg_job *job)
{
    rg_ocl_kernel k;
    rg_status st = seg_kernel(job, "seg_bsearch", &k);
    kernel_arg args[] = {ARG(job->o), ARG(job->nsegs), ARG(job->nelems), ARG(job->kind),
                         ARG(job->out)};
    return st != RG_OK ? st
                       : rg_ocl_launch(job->ctx, &k,
                                       rg_ocl_stride_groups(job->ctx, job->nelems, k.group,
                                                            MAX_STRIDE_GROUPS),
                                       k.group, args, NARGS(args));
}

/* Per segment on a GPU, unless every segment is known to have at most one
 * element: seg_staged, then seg_pieces where a segment may be long. */
static rg_status by_segment_staged(seg_job *job)
{
    rg_ocl_kernel k, pieces_k = {0}; /* pieces_k: only where needed */
    bool cut = job->longest < 0 || job->longest >= STAGED_PIECE;
    rg_status st = seg_kernel(job, "seg_staged", &k);
    if (st == RG_OK && cut)
        st = seg_kernel(job, "seg_pieces", &pieces_k);
    if (st != RG_OK)
        return st;
    size_t group = k.group < MERGE_GROUP ? k.group : MERGE_GROUP;
    size_t blocks = job->nsegs / group + (job->nsegs % group != 0);
    size_t per_item = job->longest >= 0 && job->longest < STAGED_PER_ITEM ? (size_t)job->longest
                                                                          : STAGED_PER_ITEM;
    cl_uint cap = (cl_uint)(group * per_item); /* under STAGED_PIECE: no staged block holds a cut */
    kernel_arg args[] = {ARG(job->o),
                         ARG(job->nsegs),
                         ARG(job->kind),
                         ARG(job->out),
                         ARG(cap),
                         LOCAL_ARG(cap * sizeof(cl_ushort)),
                         LOCAL_ARG(group * sizeof(cl_long)),
                         LOCAL_ARG((group + 1) * sizeof(cl_uint))};
    kernel_arg pieces_args[] = {ARG(job->o), ARG(job->nsegs), ARG(job->nelems), ARG(job->kind),
                                ARG(job->out)};
    size_t npieces = job->nelems / STAGED_PIECE + (job->nelems % STAGED_PIECE != 0);
    st = rg_ocl_launch(job->ctx, &k, rg_ocl_stride_groups(job->ctx, blocks, 1, MAX_STRIDE_GROUPS),
                       group, args, NARGS(args));
    if (st == RG_OK && cut)
        st = rg_ocl_launch(job->ctx, &pieces_k,
                           rg_ocl_stride_groups(job->ctx, npieces, 1, MAX_STRIDE_GROUPS),
                           pieces_k.group, pieces_args, NARGS(pieces_args));
    return st;
}

static rg_status by_segment(seg_job *job)
{
    rg_ocl *ocl = job->ctx->impl;
    if (!ocl->cpu_kernels && job->longest != 0 && job->longest != 1)
        return by_segment_staged(job);
    rg_ocl_kernel k;
    rg_status st = seg_kernel(job, "seg_per_segment", &k);
    kernel_arg args[] = {ARG(job->o), ARG(job->nsegs), ARG(job->kind), ARG(job->out)};
    return st != RG_OK ? st
                       : rg_ocl_launch(job->ctx, &k,
                                       rg_ocl_stride_groups(job->ctx, job->nsegs, k.group,
                                                            MAX_STRIDE_GROUPS),
                                       k.group, args, NARGS(args));
}

static rg_status by_merge_path(seg_job *job)
{
    rg_ocl_kernel bounds_k, k;
    rg_status st = seg_kernel(job, "seg_merge_bounds", &bounds_k);
    if (st == RG_OK)
        st = seg_kernel(job, "seg_merge_path", &k);
    if (st != RG_OK)
        return st;
    /* A tile of MERGE_PER_ITEM path steps per work-item; its segment ends
     * and the segment of each of its elements (at most tile of each, as
     * ints) go to local memory: 16 KiB at 256 work-items.  Where each tile
     * starts is found first, by a kernel of its own. */
    size_t group = k.group < MERGE_GROUP ? k.group : MERGE_GROUP;
    cl_ulong tile = (cl_ulong)group * MERGE_PER_ITEM;
    size_t steps = job->nsegs + job->nelems;
    size_t tiles = steps / tile + (steps % tile != 0);
    cl_mem bounds = NULL;
    st = rg_ocl_scratch(job->ctx, RG_SCRATCH_BOUNDS, (tiles + 1) * sizeof(cl_ulong), &bounds);
    kernel_arg bounds_args[] = {ARG(job->o), ARG(job->nsegs), ARG(job->nelems), ARG(tile),
                                ARG(bounds)};
    kernel_arg args[] = {ARG(job->o),   ARG(job->nsegs),
                         ARG(job->nelems), ARG(tile),
                         ARG(bounds),   ARG(job->kind),
                         ARG(job->out), LOCAL_ARG(tile * sizeof(cl_int)),
                         LOCAL_ARG(tile * sizeof(cl_uint))};
    if (st == RG_OK)
        st = rg_ocl_launch(job->ctx, &bounds_k,
                           rg_ocl_stride_groups(job->ctx, tiles + 1, bounds_k.group,
                                                MAX_STRIDE_GROUPS),
                           bounds_k.group, bounds_args, NARGS(bounds_args));
    if (st == RG_OK)
        st = rg_ocl_launch(job->ctx, &k,
                           rg_ocl_stride_groups(job->ctx, tiles, 1, MAX_STRIDE_GROUPS), group,
                           args, NARGS(args));
    if (bounds)
        rg_cl.clReleaseMemObject(bounds);
    return st;
}

/* Zero, mark each non-empty segment's first element, flood the marks with a
 * max-scan in place; the local index then subtracts the flooded starts. */
static rg_status by_flood(seg_job *job, rg_dtype out_type)
{
    rg_ocl_kernel scatter, local = {0}; /* local: only for the local index */
    rg_status st = seg_kernel(job, "flood_scatter", &scatter);
    if (st == RG_OK && job->kind == RG_ELEM_LOCAL)
        st = seg_kernel(job, "flood_local", &local);
    scan_plan plan = {.partial = NULL};
    if (st == RG_OK) /* before the first write, as every kernel it needs */
        st = scan_prepare(job->ctx, out_type, out_type, SCAN_MAX, job->nelems, &plan);
    kernel_arg scatter_args[] = {ARG(job->o), ARG(job->nsegs), ARG(job->kind), ARG(job->out)};
    kernel_arg local_args[] = {ARG(job->out), ARG(job->nelems)};
    if (st == RG_OK) /* the fill is no launch: a failed upload must stop it here */
        st = take_deferred(job->ctx, "flood_scatter");
    if (st == RG_OK)
        st = fill_zero(job->ctx, job->out, job->nelems * rg_dtype_size(out_type));
    if (st == RG_OK)
        st = rg_ocl_launch(job->ctx, &scatter,
                           rg_ocl_stride_groups(job->ctx, job->nsegs, scatter.group,
                                                MAX_STRIDE_GROUPS),
                           scatter.group, scatter_args, NARGS(scatter_args));
    if (st == RG_OK)
        st = scan_run(job->ctx, &plan, job->out, job->out, 0);
    scan_release(&plan);
    if (st == RG_OK && job->kind == RG_ELEM_LOCAL)
        st = rg_ocl_launch(job->ctx, &local,
                           rg_ocl_stride_groups(job->ctx, job->nelems, local.group,
                                                MAX_STRIDE_GROUPS),
                           local.group, local_args, NARGS(local_args));
    return st;
}

static rg_status elem_segments(rg_array *out, const rg_array *offsets, rg_strategy strategy,
                               rg_elem_kind kind)
{
    rg_ocl_begin(out->ctx);
    if (out->length == 0)
        return RG_OK; /* no elements, nothing to write (and no buffer to write to) */
    seg_job job = {out->ctx,    rg_ocl_mem_in(offsets), rg_ocl_mem_of(out),
                   offsets->length - 1, out->length, (cl_int)kind,
                   offsets->offsets_ok ? offsets->offsets_longest : -1, ""};
    /* A program per strategy, holding its kernels only (KERNELS of
     * parents.cl): where ragged stores binaries, PoCL compiles every kernel
     * of the program. */
    bool cpu_kernels = ((rg_ocl *)out->ctx->impl)->cpu_kernels;
    int kernels = strategy == RG_STRATEGY_BSEARCH       ? 1
                  : strategy == RG_STRATEGY_PER_SEGMENT ? (cpu_kernels ? 2 : 2 + 4)
                  : strategy == RG_STRATEGY_FLOOD       ? 8
                                                        : 16;
    snprintf(job.options, sizeof job.options,
             "-DOFF_T=%s -DOUT_T=%s -DVT=%d -DPIECE=%d -DKERNELS=%d", cl_type(offsets->dtype),
             cl_type(out->dtype), MERGE_PER_ITEM, STAGED_PIECE, kernels);
    switch (strategy) {
    case RG_STRATEGY_BSEARCH: return by_bsearch(&job);
    case RG_STRATEGY_PER_SEGMENT: return by_segment(&job);
    case RG_STRATEGY_FLOOD: return by_flood(&job, out->dtype);
    case RG_STRATEGY_MERGE_PATH: return by_merge_path(&job);
    case RG_STRATEGY_AUTO: break;
    }
    return rg_set_error(out->ctx, RG_EINVAL, "elem_segments: strategy %d is not a concrete one",
                        (int)strategy);
}

/* ---- scalar.cl ------------------------------------------------------------ */

/* The OpenCL C type of a numeric dtype and the KIND of scalar.cl (0 signed
 * integer, 1 unsigned integer, 2 floating point). */
static const char *cl_value_type(rg_dtype dtype, int *kind)
{
    switch (dtype) {
    case RG_INT8: *kind = 0; return "char";
    case RG_INT16: *kind = 0; return "short";
    case RG_INT32: *kind = 0; return "int";
    case RG_INT64: *kind = 0; return "long";
    case RG_UINT8: *kind = 1; return "uchar";
    case RG_UINT16: *kind = 1; return "ushort";
    case RG_UINT32: *kind = 1; return "uint";
    case RG_UINT64: *kind = 1; return "ulong";
    case RG_FLOAT32: *kind = 2; return "float";
    case RG_FLOAT64: *kind = 2; return "double";
    case RG_BOOL: break;
    }
    return NULL;
}

/* One program per dtype, the operation a kernel argument: 4 times fewer
 * cold builds.  name is scalar_op (op: an rg_arith) or scalar_fill (op < 0). */
static rg_status scalar_launch(rg_array *a, const char *name, int op, const void *value)
{
    rg_context *ctx = a->ctx;
    int kind = 0;
    const char *type = cl_value_type(a->dtype, &kind);
    if (!type)
        return rg_set_error(ctx, RG_EDTYPE, "OpenCL backend: no arithmetic on %s arrays",
                            rg_dtype_name(a->dtype));
    char options[128];
    /* OpenCL allows float division 2.5 ulp off unless asked; OpenMP divides exactly. */
    snprintf(options, sizeof options, "-DT=%s -DKIND=%d%s%s", type, kind,
             a->dtype == RG_FLOAT64 ? " -DFP64" : "",
             a->dtype == RG_FLOAT32 ? " -cl-fp32-correctly-rounded-divide-sqrt" : "");
    rg_ocl_kernel k;
    rg_status st = rg_ocl_get_kernel(ctx, "scalar.cl", options, name, &k);
    if (st != RG_OK)
        return st;
    cl_mem mem = rg_ocl_mem_of(a);
    cl_ulong n = a->length;
    cl_int code = (cl_int)op;
    kernel_arg args[] = {ARG(mem), ARG(n), {rg_dtype_size(a->dtype), value, false}, ARG(code)};
    return rg_ocl_launch(ctx, &k, rg_ocl_stride_groups(ctx, n, k.group, MAX_STRIDE_GROUPS),
                         k.group, args, op < 0 ? 3 : NARGS(args));
}

static rg_status scalar(rg_array *a, rg_arith op, const void *value)
{
    rg_ocl_begin(a->ctx);
    return scalar_launch(a, "scalar_op", (int)op, value);
}

static rg_status scalar_fill(rg_array *a, const void *value)
{
    return scalar_launch(a, "scalar_fill", -1, value);
}

const rg_ops rg_ocl_ops = {
    .destroy = rg_ocl_destroy,
    .array_alloc = array_alloc,
    .array_release = array_release,
    .array_write = rg_mirror_write,
    .array_read = rg_mirror_read,
    .array_fill = array_fill,
    .array_copy = array_copy,
    .finish = finish,
    .scratch_bytes = scratch_bytes,
    .scratch_free = scratch_free,
    .offsets_check = offsets_check,
    .lengths = lengths,
    .lengths_total = lengths_total,
    .offsets_from_lengths = offsets_from_lengths,
    .elem_segments = elem_segments,
    .compose = compose,
    .array_trim = rg_ocl_array_trim,
    .nonzero_count = rg_ocl_nonzero_count,
    .nonzero = rg_ocl_nonzero,
    .nonzero_into = rg_ocl_nonzero_into,
    .segment_nonzero = rg_ocl_segment_nonzero,
    .array_grow = array_grow,
    .scalar = scalar,
    .dev_upload = upload,
    .dev_download = download,
    .segment_reduce = rg_ocl_segment_reduce,
};
