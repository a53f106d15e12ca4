/* device.c — picks an OpenCL device, creates its context and queue, and frees them. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"

/* One device seen while enumerating, with what ranking and reporting need. */
typedef struct candidate {
    cl_platform_id platform;
    cl_device_id device;
    cl_device_type type;
    char name[256];
    char platform_name[256];
} candidate;

typedef struct device_list {
    candidate *items;
    size_t count;
    char skipped[1024]; /* platforms that could not list their devices, for messages */
} device_list;

/* Case-insensitive strstr: RAGGED_DEVICE=nvidia matches "NVIDIA CUDA". */
static bool contains_nocase(const char *haystack, const char *needle)
{
    size_t n = strlen(needle);
    for (; *haystack; haystack++) {
        size_t i = 0;
        while (i < n && haystack[i] &&
               tolower((unsigned char)haystack[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return true;
    }
    return n == 0;
}

static void platform_string(cl_platform_id p, cl_platform_info what, char *buf, size_t size)
{
    if (rg_cl.clGetPlatformInfo(p, what, size, buf, NULL) != CL_SUCCESS)
        snprintf(buf, size, "?");
    buf[size - 1] = '\0';
}

static void device_string(cl_device_id d, cl_device_info what, char *buf, size_t size)
{
    if (rg_cl.clGetDeviceInfo(d, what, size, buf, NULL) != CL_SUCCESS)
        snprintf(buf, size, "?");
    buf[size - 1] = '\0';
}

static const char *type_name(cl_device_type type)
{
    if (type & CL_DEVICE_TYPE_GPU)
        return "GPU";
    if (type & CL_DEVICE_TYPE_ACCELERATOR)
        return "accelerator";
    if (type & CL_DEVICE_TYPE_CPU)
        return "CPU";
    return "other";
}

/* Lower is better: NVIDIA first, then GPU, accelerator, CPU. */
static int rank(const candidate *c)
{
    int kind = (c->type & CL_DEVICE_TYPE_GPU)           ? 0
               : (c->type & CL_DEVICE_TYPE_ACCELERATOR) ? 1
               : (c->type & CL_DEVICE_TYPE_CPU)         ? 2
                                                        : 3;
    return (contains_nocase(c->platform_name, "NVIDIA") ? 0 : 4) + kind;
}

/* Keeps the reason a platform was skipped, so that "no device" can say it. */
static void note_skipped(device_list *list, cl_platform_id platform, cl_int err)
{
    char name[256];
    platform_string(platform, CL_PLATFORM_NAME, name, sizeof name);
    size_t used = strlen(list->skipped);
    snprintf(list->skipped + used, sizeof list->skipped - used, "%s%s (clGetDeviceIDs: %s (%d))",
             used ? ", " : "", name, rg_cl_error_name(err), (int)err);
}

static rg_status add_platform_devices(rg_context *ctx, cl_platform_id platform,
                                      device_list *list)
{
    cl_uint n = 0;
    /* A platform that cannot list its devices (a half-installed driver) is
     * skipped, not fatal: another platform, or OpenMP under auto, may serve. */
    cl_int err = rg_cl.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, NULL, &n);
    if (err != CL_SUCCESS && err != CL_DEVICE_NOT_FOUND)
        note_skipped(list, platform, err);
    if (err != CL_SUCCESS || n == 0)
        return RG_OK;
    cl_device_id *ids = calloc(n, sizeof *ids);
    candidate *grown = realloc(list->items, (list->count + n) * sizeof *grown);
    if (grown)
        list->items = grown;
    if (!ids || !grown) {
        free(ids);
        return rg_set_error(ctx, RG_ENOMEM, "OpenCL device list: out of host memory");
    }
    err = rg_cl.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, ids, NULL);
    if (err != CL_SUCCESS) {
        note_skipped(list, platform, err);
        n = 0;
    }
    for (cl_uint i = 0; i < n; i++) {
        candidate *c = &list->items[list->count++];
        memset(c, 0, sizeof *c);
        c->platform = platform;
        c->device = ids[i];
        rg_cl.clGetDeviceInfo(ids[i], CL_DEVICE_TYPE, sizeof c->type, &c->type, NULL);
        device_string(ids[i], CL_DEVICE_NAME, c->name, sizeof c->name);
        platform_string(platform, CL_PLATFORM_NAME, c->platform_name, sizeof c->platform_name);
    }
    free(ids);
    return RG_OK;
}

/* Every device of every platform; no platform at all is RG_ENODEVICE, not a failure. */
static rg_status list_devices(rg_context *ctx, device_list *list)
{
    cl_uint n = 0;
    cl_int err = rg_cl.clGetPlatformIDs(0, NULL, &n);
    if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR: the ICD loader found no driver */ ||
        (err == CL_SUCCESS && n == 0))
        return rg_set_error(ctx, RG_ENODEVICE,
                            "no OpenCL platform: the ICD loader found no driver "
                            "(clGetPlatformIDs: %s (%d))",
                            rg_cl_error_name(err), (int)err);
    if (err != CL_SUCCESS)
        return rg_cl_fail(ctx, err, false, "clGetPlatformIDs");
    cl_platform_id *platforms = calloc(n, sizeof *platforms);
    if (!platforms)
        return rg_set_error(ctx, RG_ENOMEM, "OpenCL platform list: out of host memory");
    err = rg_cl.clGetPlatformIDs(n, platforms, &n);
    rg_status st = err == CL_SUCCESS ? RG_OK : rg_cl_fail(ctx, err, false, "clGetPlatformIDs");
    for (cl_uint i = 0; i < n && st == RG_OK; i++)
        st = add_platform_devices(ctx, platforms[i], list);
    free(platforms);
    return st;
}

static bool acceptable(const candidate *c, bool gpu_only, const char *filter)
{
    if (gpu_only && !(c->type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR)))
        return false;
    return !filter || contains_nocase(c->name, filter) || contains_nocase(c->platform_name, filter);
}

/* Says what was found and what was asked, since "no device" alone helps nobody. */
static rg_status no_match(rg_context *ctx, const device_list *list, bool gpu_only,
                          const char *filter)
{
    rg_set_error(ctx, RG_ENODEVICE, "no OpenCL device matches (wanted %s%s%s%s); found: ",
                 gpu_only ? "a GPU or accelerator" : "any device",
                 filter ? ", RAGGED_DEVICE=\"" : "", filter ? filter : "", filter ? "\"" : "");
    if (list->count == 0)
        rg_append_error(ctx, "no devices");
    for (size_t i = 0; i < list->count; i++) {
        char line[600];
        snprintf(line, sizeof line, "%s%s (%s, %s)", i ? ", " : "", list->items[i].name,
                 list->items[i].platform_name, type_name(list->items[i].type));
        rg_append_error(ctx, line);
    }
    if (list->skipped[0]) {
        rg_append_error(ctx, "; platforms skipped: ");
        rg_append_error(ctx, list->skipped);
    }
    return RG_ENODEVICE;
}

static rg_status pick_device(rg_context *ctx, bool gpu_only, candidate *out)
{
    device_list list = {NULL, 0, ""};
    rg_status st = list_devices(ctx, &list);
    const char *filter = getenv("RAGGED_DEVICE");
    if (filter && !*filter)
        filter = NULL;
    const candidate *best = NULL;
    for (size_t i = 0; st == RG_OK && i < list.count; i++)
        if (acceptable(&list.items[i], gpu_only, filter) &&
            (!best || rank(&list.items[i]) < rank(best)))
            best = &list.items[i];
    if (st == RG_OK && best)
        *out = *best;
    else if (st == RG_OK)
        st = no_match(ctx, &list, gpu_only, filter);
    free(list.items);
    return st;
}

static void read_limits(rg_ocl *ocl)
{
    size_t max_group = 1;
    rg_cl.clGetDeviceInfo(ocl->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_group,
                          &max_group, NULL);
    ocl->max_group = max_group < RG_OCL_MAX_GROUP ? max_group : RG_OCL_MAX_GROUP;
    ocl->compute_units = 1;
    rg_cl.clGetDeviceInfo(ocl->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof ocl->compute_units,
                          &ocl->compute_units, NULL);
    ocl->max_alloc = 0;
    rg_cl.clGetDeviceInfo(ocl->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof ocl->max_alloc,
                          &ocl->max_alloc, NULL);
}

/* Whether the device takes NVIDIA's compiler options (-cl-nv-verbose, -cl-nv-maxrregcount). */
static bool read_nv_options(const rg_ocl *ocl)
{
    size_t size = 0;
    if (rg_cl.clGetDeviceInfo(ocl->device, CL_DEVICE_EXTENSIONS, 0, NULL, &size) != CL_SUCCESS ||
        size == 0)
        return false;
    char *ext = malloc(size + 1);
    if (!ext)
        return false;
    bool nv = false;
    if (rg_cl.clGetDeviceInfo(ocl->device, CL_DEVICE_EXTENSIONS, size, ext, NULL) ==
        CL_SUCCESS) {
        ext[size] = '\0';
        nv = strstr(ext, "cl_nv_compiler_options") != NULL;
    }
    free(ext);
    return nv;
}

static rg_status open_device(rg_context *ctx, rg_ocl *ocl, const candidate *c)
{
    ocl->platform = c->platform;
    ocl->device = c->device;
    snprintf(ocl->device_name, sizeof ocl->device_name, "%s", c->name);
    snprintf(ocl->platform_name, sizeof ocl->platform_name, "%s", c->platform_name);
    platform_string(c->platform, CL_PLATFORM_VERSION, ocl->platform_version,
                    sizeof ocl->platform_version);
    device_string(c->device, CL_DRIVER_VERSION, ocl->driver_version, sizeof ocl->driver_version);
    read_limits(ocl);
    ocl->nv_options = read_nv_options(ocl);
    ocl->serial = contains_nocase(c->platform_name, "Portable Computing Language");

    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)c->platform, 0};
    cl_int err;
    ocl->context = rg_cl.clCreateContext(props, 1, &c->device, NULL, NULL, &err);
    if (!ocl->context)
        return rg_cl_fail(ctx, err, true, "clCreateContext");
    ocl->queue = rg_cl.clCreateCommandQueue(
        ocl->context, c->device, ocl->profile ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    if (!ocl->queue)
        return rg_cl_fail(ctx, err, true, "clCreateCommandQueue");
    return RG_OK;
}

static void free_impl(rg_ocl *ocl)
{
    if (!ocl)
        return;
    if (ocl->queue)
        rg_cl.clFinish(ocl->queue);
    rg_ocl_scratch_free(ocl);
    rg_ocl_programs_free(ocl);
    if (ocl->queue)
        rg_cl.clReleaseCommandQueue(ocl->queue);
    if (ocl->context)
        rg_cl.clReleaseContext(ocl->context);
    free(ocl);
}

static rg_device_kind device_kind(cl_device_type type)
{
    if (type & CL_DEVICE_TYPE_GPU)
        return RG_DEVICE_GPU;
    if (type & CL_DEVICE_TYPE_ACCELERATOR)
        return RG_DEVICE_ACCELERATOR;
    return RG_DEVICE_CPU;
}

/* A cap read from the environment: unset or empty is no cap (0); otherwise
 * a whole number from 1 to 2^32 - 1 ("what" names its unit in the error). */
static rg_status read_cap(rg_context *ctx, const char *name, const char *what, size_t *cap)
{
    const char *v = getenv(name);
    *cap = 0;
    if (!v || !*v)
        return RG_OK;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (*v < '0' || *v > '9' || *end || errno || n == 0 || n > UINT32_MAX)
        return rg_set_error(ctx, RG_EINVAL, "%s=\"%s\": expected a whole number of %s "
                            "from 1 to %lu", name, v, what, (unsigned long)UINT32_MAX);
    *cap = (size_t)n;
    return RG_OK;
}

/* RAGGED_OPENCL_MAX_GROUPS caps the work-groups of every grid-stride launch,
 * so that tests on small inputs run each loop for many rounds, and
 * RAGGED_OPENCL_MAX_GROUP_SIZE the work-items of a work-group, as a device
 * with a small limit would. */
static rg_status read_caps(rg_context *ctx, size_t *groups, size_t *group_size)
{
    rg_status st = read_cap(ctx, "RAGGED_OPENCL_MAX_GROUPS", "work-groups", groups);
    if (st == RG_OK)
        st = read_cap(ctx, "RAGGED_OPENCL_MAX_GROUP_SIZE", "work-items", group_size);
    return st;
}

/* RAGGED_OPENCL_BUILD_OPTIONS: compiler options added to every program's
 * build (a vendor's, such as NVIDIA's -cl-nv-maxrregcount=N, for tuning);
 * they take part in the disk cache's key like the library's own. */
static rg_status read_build_options(rg_context *ctx, char *buf, size_t size)
{
    const char *v = getenv("RAGGED_OPENCL_BUILD_OPTIONS");
    buf[0] = '\0';
    if (!v)
        return RG_OK;
    if (strlen(v) >= size)
        return rg_set_error(ctx, RG_EINVAL, "RAGGED_OPENCL_BUILD_OPTIONS: %zu characters, "
                            "at most %zu", strlen(v), size - 1);
    /* PoCL 3.1 crashes (in clBuildProgram) on a -D or -I with nothing after
     * it; such a string cannot be meant, so it is refused here. */
    size_t end = strlen(v);
    while (end > 0 && isspace((unsigned char)v[end - 1]))
        end--;
    size_t start = end;
    while (start > 0 && !isspace((unsigned char)v[start - 1]))
        start--;
    if (end - start == 2 && (!strncmp(v + start, "-D", 2) || !strncmp(v + start, "-I", 2)))
        return rg_set_error(ctx, RG_EINVAL, "RAGGED_OPENCL_BUILD_OPTIONS=\"%s\": "
                            "%.2s at the end needs an argument", v, v + start);
    memcpy(buf, v, strlen(v) + 1);
    return RG_OK;
}

/* PoCL initialises its devices lazily at the first clGetDeviceIDs, and
 * another thread's clGetDeviceInfo in the meantime reads a device half made
 * (PoCL 3.1: a crash in strlen of CL_DEVICE_NAME, 8 of 10 runs of 8 threads
 * creating their first contexts at once).  So contexts are made one at a
 * time in the process: a creation takes milliseconds, a build far longer. */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

static rg_status init_locked(rg_context *ctx, bool gpu_only);

/* A fork while another thread holds one of the library's locks would leave
 * it held for ever in the child (whose OpenMP contexts, or auto falling
 * back to them, would then hang at their creation), so fork takes both
 * first: it waits for a creation, or a PoCL kernel, of another thread.  A
 * driver that forks inside a call made under a lock (this thread's) must
 * not wait for itself: that lock is left alone. */
static _Thread_local bool holding_init, fork_took_init;

static void fork_prepare(void)
{
    fork_took_init = !holding_init;
    if (fork_took_init)
        pthread_mutex_lock(&init_lock);
    rg_ocl_serial_fork(true);
}

static void fork_done(void)
{
    rg_ocl_serial_fork(false);
    if (fork_took_init)
        pthread_mutex_unlock(&init_lock);
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void watch_forks(void)
{
    pthread_atfork(fork_prepare, fork_done, fork_done);
}

rg_status rg_ocl_init(rg_context *ctx, bool gpu_only)
{
    pthread_once(&fork_once, watch_forks);
    pthread_mutex_lock(&init_lock);
    holding_init = true;
    rg_status st = init_locked(ctx, gpu_only);
    holding_init = false;
    pthread_mutex_unlock(&init_lock);
    return st;
}

static rg_status init_locked(rg_context *ctx, bool gpu_only)
{
    rg_status st = rg_cl_load(ctx);
    candidate chosen;
    size_t group_cap, group_size_cap;
    bool profile;
    char build_options[sizeof ((rg_ocl *)0)->build_options];
    if (st == RG_OK)
        st = pick_device(ctx, gpu_only, &chosen);
    if (st == RG_OK)
        st = read_caps(ctx, &group_cap, &group_size_cap);
    if (st == RG_OK)
        st = rg_env_switch(ctx, "RAGGED_PROFILE", &profile); /* rg_ocl.profile */
    if (st == RG_OK)
        st = read_build_options(ctx, build_options, sizeof build_options);
    /* Read again where they are used; checked here, so that a typo is an error. */
    if (st == RG_OK)
        st = rg_env_switch(ctx, "RAGGED_OPENCL_CPU_KERNELS", NULL);
    if (st == RG_OK)
        st = rg_env_switch(ctx, "RAGGED_CACHE", NULL);
    if (st != RG_OK)
        return st;
    rg_ocl *ocl = calloc(1, sizeof *ocl);
    if (!ocl)
        return rg_set_error(ctx, RG_ENOMEM, "OpenCL context: out of host memory");
    ocl->profile = profile;
    memcpy(ocl->build_options, build_options, sizeof build_options);
    st = open_device(ctx, ocl, &chosen);
    if (st != RG_OK) {
        free_impl(ocl);
        return st;
    }
    ctx->ops = &rg_ocl_ops;
    ctx->impl = ocl;
    ctx->device_kind = device_kind(chosen.type);
    /* =0 lets the tests run the GPUs' kernels on PoCL. */
    ocl->cpu_kernels =
        ctx->device_kind == RG_DEVICE_CPU && !rg_env_off("RAGGED_OPENCL_CPU_KERNELS");
    ocl->group_cap = group_cap;
    if (group_size_cap && group_size_cap < ocl->max_group)
        ocl->max_group = group_size_cap;
    /* A long name is cut short: the field is for reading, not parsing. */
    if (snprintf(ctx->device, sizeof ctx->device, "%s (%s)", ocl->device_name,
                 ocl->platform_name) < 0)
        ctx->device[0] = '\0';
    return RG_OK;
}

void rg_ocl_destroy(rg_context *ctx)
{
    free_impl(ctx->impl);
    ctx->impl = NULL;
}
