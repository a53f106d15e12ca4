/* ocl.h — what the files of the OpenCL backend share: the loaded cl* table, device state, programs. */
#ifndef RAGGED_OCL_H
#define RAGGED_OCL_H

/* The OpenCL 1.2 host API only: NVIDIA's driver offers nothing newer we could rely on. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <stddef.h>

#include "../internal.h"

/* Every cl* entry point the backend calls.  The ICD loader is opened at run
 * time, so a library built with OpenCL still loads where there is none. */
#define RG_CL_FUNCTIONS(X)                                                             \
    X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo)      \
    X(clCreateContext) X(clReleaseContext)                                             \
    X(clCreateCommandQueue) X(clReleaseCommandQueue) X(clFinish)                       \
    X(clCreateBuffer) X(clRetainMemObject) X(clReleaseMemObject)                       \
    X(clGetMemObjectInfo) X(clEnqueueCopyBuffer)                                       \
    X(clEnqueueFillBuffer) X(clEnqueueWriteBuffer) X(clEnqueueReadBuffer)              \
    X(clCreateProgramWithSource) X(clCreateProgramWithBinary) X(clBuildProgram)        \
    X(clGetProgramInfo) X(clGetProgramBuildInfo) X(clReleaseProgram)                   \
    X(clCreateKernel) X(clReleaseKernel) X(clSetKernelArg) X(clGetKernelWorkGroupInfo) \
    X(clEnqueueNDRangeKernel) X(clWaitForEvents) X(clGetEventProfilingInfo)            \
    X(clReleaseEvent)

/* Called as rg_cl.clFinish(queue): the member has the function's own type. */
typedef struct rg_cl_api {
#define RG_CL_MEMBER(name) __typeof__(&name) name;
    RG_CL_FUNCTIONS(RG_CL_MEMBER)
#undef RG_CL_MEMBER
} rg_cl_api;

RG_HIDDEN extern rg_cl_api rg_cl;

/* Opens the ICD loader once per process; RG_ENODEVICE with dlerror's text if it cannot. */
RG_HIDDEN rg_status rg_cl_load(rg_context *ctx);

/* "CL_OUT_OF_RESOURCES" for -5; "unknown OpenCL error" for codes not listed. */
RG_HIDDEN const char *rg_cl_error_name(cl_int err);

/* Records "what: NAME (code)" as ctx's error: RG_EDEVMEM when the device ran
 * out of memory (with alloc, also for the codes an allocation reports), else RG_EDEVICE. */
RG_HIDDEN rg_status rg_cl_fail(rg_context *ctx, cl_int err, bool alloc, const char *what);

typedef struct rg_ocl_program rg_ocl_program;

/* The temporary device buffers of an op, by role: one op never needs two
 * of one role at once. */
typedef enum rg_ocl_scratch_role {
    RG_SCRATCH_BOUNDS,  /* where each merge-path tile starts */
    RG_SCRATCH_PARTIAL, /* a partial result per chunk, tile or piece */
    RG_SCRATCH_RECORDS, /* a merge-path reduction's carries per chunk */
    RG_SCRATCH_BITS,    /* nonzero's bitmask */
    RG_SCRATCH_ROLES
} rg_ocl_scratch_role;

/* ctx->impl of an OpenCL context. */
typedef struct rg_ocl {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    char device_name[256];
    char platform_name[256];
    char platform_version[256];
    char driver_version[256];
    size_t max_group;        /* device work-group limit, at most RG_OCL_MAX_GROUP and
                              * RAGGED_OPENCL_MAX_GROUP_SIZE */
    cl_uint compute_units;
    cl_ulong max_alloc;      /* CL_DEVICE_MAX_MEM_ALLOC_SIZE */
    bool cpu_kernels;        /* build the CPU variants of kernels (a CPU device, unless
                              * RAGGED_OPENCL_CPU_KERNELS=0) */
    bool nv_options;         /* the device takes NVIDIA's compiler options (-cl-nv-...) */
    size_t group_cap;        /* RAGGED_OPENCL_MAX_GROUPS, or 0: caps grid-stride launches */
    bool profile;            /* RAGGED_PROFILE=1: each launch waits and reports its time */
    bool serial;             /* PoCL: kernel runs and binary reads one at a time in the
                              * process (rg_ocl_serial_begin) */
    char build_options[256]; /* RAGGED_OPENCL_BUILD_OPTIONS: added to every program's build */
    rg_ocl_program *programs; /* built programs of this context, a list */
    rg_status deferred;      /* an upload in mem_of failed; the next launch reports it */
    char deferred_what[160]; /* and its message */
    cl_mem scratch[RG_SCRATCH_ROLES]; /* kept between ops (see rg_ocl_scratch) */
    size_t scratch_bytes[RG_SCRATCH_ROLES];
    cl_mem spare;            /* the buffer of the largest array freed last (ops.c) */
    size_t spare_bytes;      /* its size */
} rg_ocl;

/* Work-groups never exceed this: big enough to hide latency, small enough for
 * the local memory of the scan tiles. */
#define RG_OCL_MAX_GROUP 256

/* A kernel ready to launch and the (power-of-two) work-group size to launch it with. */
typedef struct rg_ocl_kernel {
    cl_kernel kernel;
    size_t group;
    const char *name;
} rg_ocl_kernel;

/* The kernel `name` of FILE.cl built with `options`, from the context's
 * cache, the disk cache, or a fresh build.  The kernel stays owned by the
 * context. */
RG_HIDDEN rg_status rg_ocl_get_kernel(rg_context *ctx, const char *file, const char *options,
                                      const char *name, rg_ocl_kernel *out);
RG_HIDDEN void rg_ocl_programs_free(rg_ocl *ocl);

/* ---- launching (ops.c) ---- */

typedef struct kernel_arg {
    size_t size;
    const void *value; /* NULL: local memory of `size` bytes */
    bool buffer;       /* value points to a cl_mem */
} kernel_arg;

#define ARG(x) {sizeof(x), &(x), _Generic((x), cl_mem: true, default: false)}
#define LOCAL_ARG(bytes) {(bytes), NULL, false}
#define NARGS(args) (sizeof(args) / sizeof *(args))

/* The device buffer of an array a kernel is about to use, with the host's
 * changes uploaded first: rg_ocl_mem_in for arrays the kernel only reads,
 * rg_ocl_mem_of for arrays it may write (the host copy then goes stale).
 * Every array reaches a kernel through one of the two (see ops.c). */
RG_HIDDEN cl_mem rg_ocl_mem_in(const rg_array *a);
RG_HIDDEN cl_mem rg_ocl_mem_of(const rg_array *a);

/* Starts an op: an upload failure parked by an earlier op that failed (or
 * returned) before its launch is dropped, so it cannot fail this one; that
 * array's host copy still holds its changes, and they go up next time. */
RG_HIDDEN void rg_ocl_begin(rg_context *ctx);

/* Around PoCL's kernel runs and program binary reads: a process-wide lock
 * on PoCL, nothing elsewhere (ops.c says why). */
RG_HIDDEN void rg_ocl_serial_begin(const rg_ocl *ocl);
RG_HIDDEN void rg_ocl_serial_end(const rg_ocl *ocl);
/* Takes (true) or gives back the lock whatever the device, around a fork
 * (device.c), unless the forking thread holds it. */
RG_HIDDEN void rg_ocl_serial_fork(bool take);

/* Sets the arguments and enqueues groups work-groups of group work-items
 * (on PoCL, waits for them). */
RG_HIDDEN rg_status rg_ocl_launch(rg_context *ctx, const rg_ocl_kernel *k, size_t groups,
                                  size_t group, const kernel_arg *args, size_t nargs);
/* Work-groups for a grid-stride loop over n items, at least 1, at most cap
 * and at most the context's group_cap. */
RG_HIDDEN size_t rg_ocl_stride_groups(const rg_context *ctx, size_t n, size_t group, size_t cap);
/* Cuts n items into chunks of whole tiles of `tile` items, one
 * work-group each, as near to `want` chunks as whole tiles allow (and at
 * most the context's group_cap).  Returns the chunk count and sets *chunk
 * to the items per chunk, a multiple of tile (the last chunk may hold
 * fewer; no chunks for n = 0). */
RG_HIDDEN size_t rg_ocl_chunks(const rg_context *ctx, size_t n, size_t tile, size_t want,
                               size_t *chunk);
/* clCreateBuffer(flags, nbytes, host); where the device or host is out of
 * memory and the context keeps scratch buffers, it frees them and tries once
 * more.  `what` names the buffer in the error message. */
RG_HIDDEN rg_status rg_ocl_create_buffer(rg_context *ctx, cl_mem_flags flags, size_t nbytes,
                                         void *host, const char *what, cl_mem *out);
/* A temporary buffer of at least nbytes for `role`, the context's own,
 * reused from op to op: creating one per call costs more than some ops take
 * on GPUs, and the in-order queue runs an op's kernels after the previous
 * op's.  The caller gets its own reference and releases it as it would a
 * fresh buffer; its contents are undefined. */
RG_HIDDEN rg_status rg_ocl_scratch(rg_context *ctx, rg_ocl_scratch_role role, size_t nbytes,
                                   cl_mem *out);
/* Drops the context's references to its scratch buffers and its spare
 * array buffer; returns the bytes they held. */
RG_HIDDEN size_t rg_ocl_scratch_free(rg_ocl *ocl);
/* Blocking read of the first nbytes of mem. */
RG_HIDDEN rg_status rg_ocl_read_back(rg_context *ctx, cl_mem mem, size_t nbytes, void *dst);

/* ---- non-zero elements (nonzero.c): the rg_ops entries, see internal.h ---- */
RG_HIDDEN bool rg_ocl_array_trim(rg_array *a, size_t old_nbytes);
RG_HIDDEN rg_status rg_ocl_nonzero_count(const rg_array *a, uint64_t mask, int64_t *nnz);
RG_HIDDEN rg_status rg_ocl_nonzero(rg_array **coords, int64_t *nnz, const rg_array *a,
                                   uint64_t mask, const int64_t *shape, size_t ndim,
                                   int64_t bound);
RG_HIDDEN rg_status rg_ocl_nonzero_into(rg_array *coords, int64_t *nnz, const rg_array *a,
                                        uint64_t mask, const int64_t *shape, size_t ndim);
RG_HIDDEN rg_status rg_ocl_segment_nonzero(rg_array *seg_offsets, rg_array *positions,
                                           const rg_array *offsets);

/* The segment_reduce entry of the backend table (reduce.c). */
RG_HIDDEN rg_status rg_ocl_segment_reduce(rg_array *out, const rg_array *content,
                                          const rg_array *offsets, rg_reduce_op op,
                                          rg_reduce_policy policy);

/* The backend table, filled in ops.c. */
RG_HIDDEN extern const rg_ops rg_ocl_ops;
RG_HIDDEN void rg_ocl_destroy(rg_context *ctx);

#endif /* RAGGED_OCL_H */
