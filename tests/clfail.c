/* clfail.c — a stand-in OpenCL ICD loader for the fault tests: named by
 * RAGGED_OPENCL_LIBRARY, it passes every call the library makes on to the
 * real libOpenCL.so.1, except those a test arms to fail.  Tests reach it by
 * dlopen on the same path (the same handle as the library's) and call
 * clfail_arm / clfail_max_alloc / clfail_kernel_group / clfail_fork_in. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CLFAIL_API __attribute__((visibility("default")))

static void *real_loader;
static struct {
    char name[64];
    int after; /* calls of name still let through; -1: not armed */
    cl_int err;
} armed[4] = {{"", -1, 0}, {"", -1, 0}, {"", -1, 0}, {"", -1, 0}};
static cl_ulong fake_max_alloc;
static size_t kernel_group_cap;

static void *real(const char *name)
{
    if (!real_loader)
        real_loader = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    void *f = real_loader ? dlsym(real_loader, name) : NULL;
    if (!f)
        abort(); /* the tests only use this where the real loader exists */
    return f;
}

/* The call of `name` after `after` more calls of it fails with err; up to
 * four functions at once (arming one again replaces its arming). */
CLFAIL_API void clfail_arm(const char *name, int after, cl_int err);
CLFAIL_API void clfail_arm(const char *name, int after, cl_int err)
{
    int slot = -1;
    for (int i = 0; i < 4 && slot < 0; i++)
        if (strcmp(armed[i].name, name) == 0)
            slot = i;
    for (int i = 0; i < 4 && slot < 0; i++)
        if (armed[i].after < 0)
            slot = i;
    slot = slot < 0 ? 0 : slot;
    strncpy(armed[slot].name, name, sizeof armed[slot].name - 1);
    armed[slot].after = after;
    armed[slot].err = err;
}

/* CL_DEVICE_MAX_MEM_ALLOC_SIZE reads as bytes (0: the device's own). */
CLFAIL_API void clfail_max_alloc(cl_ulong bytes);
CLFAIL_API void clfail_max_alloc(cl_ulong bytes)
{
    fake_max_alloc = bytes;
}

/* CL_KERNEL_WORK_GROUP_SIZE reads as at most bytes work-items (0: the
 * kernel's own), as for kernels that need many registers. */
CLFAIL_API void clfail_kernel_group(size_t items);
CLFAIL_API void clfail_kernel_group(size_t items)
{
    kernel_group_cap = items;
}

/* The next call of `name` forks first, as a driver that runs a helper
 * program might, and waits for the child (which exits at once). */
static char fork_in[64];

CLFAIL_API void clfail_fork_in(const char *name);
CLFAIL_API void clfail_fork_in(const char *name)
{
    strncpy(fork_in, name, sizeof fork_in - 1);
}

static int fails(const char *name, cl_int *err)
{
    if (fork_in[0] && strcmp(name, fork_in) == 0) {
        fork_in[0] = '\0';
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        if (pid > 0)
            waitpid(pid, NULL, 0);
    }
    for (int i = 0; i < 4; i++) {
        if (armed[i].after < 0 || strcmp(name, armed[i].name) != 0)
            continue;
        if (armed[i].after-- > 0)
            return 0;
        *err = armed[i].err; /* after is now -1: one failure per arming */
        return 1;
    }
    return 0;
}

/* A function returning cl_int; a function returning an object, its error
 * through errcode_ret (the last parameter). */
#define STATUS_FN(name, params, args)                                                      \
    CL_API_ENTRY cl_int CL_API_CALL name params                                            \
    {                                                                                      \
        cl_int err;                                                                        \
        if (fails(#name, &err))                                                            \
            return err;                                                                    \
        return ((__typeof__(&name))real(#name))args;                                       \
    }
#define OBJECT_FN(type, name, params, args)                                                \
    CL_API_ENTRY type CL_API_CALL name params                                              \
    {                                                                                      \
        cl_int err;                                                                        \
        if (fails(#name, &err)) {                                                          \
            if (errcode_ret)                                                               \
                *errcode_ret = err;                                                        \
            return NULL;                                                                   \
        }                                                                                  \
        return ((__typeof__(&name))real(#name))args;                                       \
    }

STATUS_FN(clGetPlatformIDs, (cl_uint n, cl_platform_id *p, cl_uint *np), (n, p, np))
STATUS_FN(clGetPlatformInfo, (cl_platform_id p, cl_platform_info i, size_t s, void *v, size_t *r),
          (p, i, s, v, r))
STATUS_FN(clGetDeviceIDs,
          (cl_platform_id p, cl_device_type t, cl_uint n, cl_device_id *d, cl_uint *nd),
          (p, t, n, d, nd))
CL_API_ENTRY cl_int CL_API_CALL clGetDeviceInfo(cl_device_id d, cl_device_info i, size_t s,
                                                void *v, size_t *r)
{
    if (i == CL_DEVICE_MAX_MEM_ALLOC_SIZE && fake_max_alloc && v && s == sizeof(cl_ulong)) {
        memcpy(v, &fake_max_alloc, sizeof fake_max_alloc);
        return CL_SUCCESS;
    }
    return ((__typeof__(&clGetDeviceInfo))real("clGetDeviceInfo"))(d, i, s, v, r);
}
OBJECT_FN(cl_context, clCreateContext,
          (const cl_context_properties *p, cl_uint n, const cl_device_id *d,
           void(CL_CALLBACK *f)(const char *, const void *, size_t, void *), void *u,
           cl_int *errcode_ret),
          (p, n, d, f, u, errcode_ret))
STATUS_FN(clReleaseContext, (cl_context c), (c))
OBJECT_FN(cl_command_queue, clCreateCommandQueue,
          (cl_context c, cl_device_id d, cl_command_queue_properties p, cl_int *errcode_ret),
          (c, d, p, errcode_ret))
STATUS_FN(clReleaseCommandQueue, (cl_command_queue q), (q))
STATUS_FN(clFinish, (cl_command_queue q), (q))
OBJECT_FN(cl_mem, clCreateBuffer, (cl_context c, cl_mem_flags f, size_t s, void *h, cl_int *errcode_ret),
          (c, f, s, h, errcode_ret))
STATUS_FN(clRetainMemObject, (cl_mem m), (m))
STATUS_FN(clGetMemObjectInfo, (cl_mem m, cl_mem_info i, size_t n, void *v, size_t *r),
          (m, i, n, v, r))
STATUS_FN(clReleaseMemObject, (cl_mem m), (m))
STATUS_FN(clEnqueueCopyBuffer,
          (cl_command_queue q, cl_mem a, cl_mem b, size_t ao, size_t bo, size_t s, cl_uint n,
           const cl_event *w, cl_event *e),
          (q, a, b, ao, bo, s, n, w, e))
STATUS_FN(clEnqueueFillBuffer,
          (cl_command_queue q, cl_mem m, const void *p, size_t ps, size_t o, size_t s, cl_uint n,
           const cl_event *w, cl_event *e),
          (q, m, p, ps, o, s, n, w, e))
STATUS_FN(clEnqueueWriteBuffer,
          (cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t s, const void *p, cl_uint n,
           const cl_event *w, cl_event *e),
          (q, m, b, o, s, p, n, w, e))
STATUS_FN(clEnqueueReadBuffer,
          (cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t s, void *p, cl_uint n,
           const cl_event *w, cl_event *e),
          (q, m, b, o, s, p, n, w, e))
OBJECT_FN(cl_program, clCreateProgramWithSource,
          (cl_context c, cl_uint n, const char **s, const size_t *l, cl_int *errcode_ret),
          (c, n, s, l, errcode_ret))
OBJECT_FN(cl_program, clCreateProgramWithBinary,
          (cl_context c, cl_uint n, const cl_device_id *d, const size_t *l,
           const unsigned char **b, cl_int *st, cl_int *errcode_ret),
          (c, n, d, l, b, st, errcode_ret))
STATUS_FN(clBuildProgram,
          (cl_program p, cl_uint n, const cl_device_id *d, const char *o,
           void(CL_CALLBACK *f)(cl_program, void *), void *u),
          (p, n, d, o, f, u))
STATUS_FN(clGetProgramInfo, (cl_program p, cl_program_info i, size_t s, void *v, size_t *r),
          (p, i, s, v, r))
STATUS_FN(clGetProgramBuildInfo,
          (cl_program p, cl_device_id d, cl_program_build_info i, size_t s, void *v, size_t *r),
          (p, d, i, s, v, r))
STATUS_FN(clReleaseProgram, (cl_program p), (p))
OBJECT_FN(cl_kernel, clCreateKernel, (cl_program p, const char *n, cl_int *errcode_ret),
          (p, n, errcode_ret))
STATUS_FN(clReleaseKernel, (cl_kernel k), (k))
STATUS_FN(clSetKernelArg, (cl_kernel k, cl_uint i, size_t s, const void *v), (k, i, s, v))
CL_API_ENTRY cl_int CL_API_CALL clGetKernelWorkGroupInfo(cl_kernel k, cl_device_id d,
                                                         cl_kernel_work_group_info i, size_t s,
                                                         void *v, size_t *r)
{
    cl_int err;
    if (fails("clGetKernelWorkGroupInfo", &err))
        return err;
    err = ((__typeof__(&clGetKernelWorkGroupInfo))real("clGetKernelWorkGroupInfo"))(k, d, i, s,
                                                                                   v, r);
    if (err == CL_SUCCESS && i == CL_KERNEL_WORK_GROUP_SIZE && kernel_group_cap && v &&
        s == sizeof(size_t) && *(size_t *)v > kernel_group_cap)
        *(size_t *)v = kernel_group_cap;
    return err;
}
STATUS_FN(clEnqueueNDRangeKernel,
          (cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *o, const size_t *g,
           const size_t *l, cl_uint n, const cl_event *w, cl_event *e),
          (q, k, dim, o, g, l, n, w, e))
STATUS_FN(clWaitForEvents, (cl_uint n, const cl_event *e), (n, e))
STATUS_FN(clGetEventProfilingInfo, (cl_event e, cl_profiling_info i, size_t s, void *v, size_t *r),
          (e, i, s, v, r))
STATUS_FN(clReleaseEvent, (cl_event e), (e))
