/* loader.c — opens the OpenCL ICD loader at run time and names OpenCL error codes. */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "ocl.h"

rg_cl_api rg_cl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static bool loaded;
static char load_error[1024];

/* Appends one failed attempt to load_error, keeping what fits. */
static void note_failure(const char *what)
{
    size_t used = 0;
    while (used < sizeof load_error && load_error[used])
        used++;
    snprintf(load_error + used, sizeof load_error - used, "%s%s", used ? "; " : "", what);
}

static void *open_loader(const char **opened)
{
    const char *env = getenv("RAGGED_OPENCL_LIBRARY");
    const char *names[] = {"libOpenCL.so.1", "libOpenCL.so"};
    if (env && *env) {
        names[0] = env;
        names[1] = NULL;
    }
    for (size_t i = 0; i < 2 && names[i]; i++) {
        void *handle = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (handle) {
            *opened = names[i];
            return handle;
        }
        const char *why = dlerror();
        note_failure(why ? why : names[i]);
    }
    return NULL;
}

/* Runs once per process: the table is shared by every context and thread. */
static void load_table(void)
{
    const char *name = NULL;
    void *handle = open_loader(&name);
    if (!handle)
        return;
    const char *missing = NULL;
#define RG_CL_RESOLVE(name)                                          \
    rg_cl.name = (__typeof__(rg_cl.name))dlsym(handle, #name);       \
    if (!rg_cl.name && !missing)                                     \
        missing = #name;
    RG_CL_FUNCTIONS(RG_CL_RESOLVE)
#undef RG_CL_RESOLVE
    if (missing) {
        char what[256];
        snprintf(what, sizeof what, "%s lacks %s (not an OpenCL 1.2 loader?)", name, missing);
        note_failure(what);
        dlclose(handle);
        return;
    }
    /* The handle stays open for the life of the process: contexts come and go. */
    loaded = true;
}

rg_status rg_cl_load(rg_context *ctx)
{
    pthread_once(&load_once, load_table);
    if (!loaded)
        return rg_set_error(ctx, RG_ENODEVICE, "no OpenCL ICD loader: %s", load_error);
    return RG_OK;
}

const char *rg_cl_error_name(cl_int err)
{
    switch (err) {
#define RG_CL_CODE(code) case code: return #code;
    RG_CL_CODE(CL_SUCCESS)
    RG_CL_CODE(CL_DEVICE_NOT_FOUND)
    RG_CL_CODE(CL_DEVICE_NOT_AVAILABLE)
    RG_CL_CODE(CL_COMPILER_NOT_AVAILABLE)
    RG_CL_CODE(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    RG_CL_CODE(CL_OUT_OF_RESOURCES)
    RG_CL_CODE(CL_OUT_OF_HOST_MEMORY)
    RG_CL_CODE(CL_PROFILING_INFO_NOT_AVAILABLE)
    RG_CL_CODE(CL_MEM_COPY_OVERLAP)
    RG_CL_CODE(CL_IMAGE_FORMAT_MISMATCH)
    RG_CL_CODE(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    RG_CL_CODE(CL_BUILD_PROGRAM_FAILURE)
    RG_CL_CODE(CL_MAP_FAILURE)
    RG_CL_CODE(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    RG_CL_CODE(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    RG_CL_CODE(CL_COMPILE_PROGRAM_FAILURE)
    RG_CL_CODE(CL_LINKER_NOT_AVAILABLE)
    RG_CL_CODE(CL_LINK_PROGRAM_FAILURE)
    RG_CL_CODE(CL_DEVICE_PARTITION_FAILED)
    RG_CL_CODE(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    RG_CL_CODE(CL_INVALID_VALUE)
    RG_CL_CODE(CL_INVALID_DEVICE_TYPE)
    RG_CL_CODE(CL_INVALID_PLATFORM)
    RG_CL_CODE(CL_INVALID_DEVICE)
    RG_CL_CODE(CL_INVALID_CONTEXT)
    RG_CL_CODE(CL_INVALID_QUEUE_PROPERTIES)
    RG_CL_CODE(CL_INVALID_COMMAND_QUEUE)
    RG_CL_CODE(CL_INVALID_HOST_PTR)
    RG_CL_CODE(CL_INVALID_MEM_OBJECT)
    RG_CL_CODE(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    RG_CL_CODE(CL_INVALID_IMAGE_SIZE)
    RG_CL_CODE(CL_INVALID_SAMPLER)
    RG_CL_CODE(CL_INVALID_BINARY)
    RG_CL_CODE(CL_INVALID_BUILD_OPTIONS)
    RG_CL_CODE(CL_INVALID_PROGRAM)
    RG_CL_CODE(CL_INVALID_PROGRAM_EXECUTABLE)
    RG_CL_CODE(CL_INVALID_KERNEL_NAME)
    RG_CL_CODE(CL_INVALID_KERNEL_DEFINITION)
    RG_CL_CODE(CL_INVALID_KERNEL)
    RG_CL_CODE(CL_INVALID_ARG_INDEX)
    RG_CL_CODE(CL_INVALID_ARG_VALUE)
    RG_CL_CODE(CL_INVALID_ARG_SIZE)
    RG_CL_CODE(CL_INVALID_KERNEL_ARGS)
    RG_CL_CODE(CL_INVALID_WORK_DIMENSION)
    RG_CL_CODE(CL_INVALID_WORK_GROUP_SIZE)
    RG_CL_CODE(CL_INVALID_WORK_ITEM_SIZE)
    RG_CL_CODE(CL_INVALID_GLOBAL_OFFSET)
    RG_CL_CODE(CL_INVALID_EVENT_WAIT_LIST)
    RG_CL_CODE(CL_INVALID_EVENT)
    RG_CL_CODE(CL_INVALID_OPERATION)
    RG_CL_CODE(CL_INVALID_GL_OBJECT)
    RG_CL_CODE(CL_INVALID_BUFFER_SIZE)
    RG_CL_CODE(CL_INVALID_MIP_LEVEL)
    RG_CL_CODE(CL_INVALID_GLOBAL_WORK_SIZE)
    RG_CL_CODE(CL_INVALID_PROPERTY)
    RG_CL_CODE(CL_INVALID_IMAGE_DESCRIPTOR)
    RG_CL_CODE(CL_INVALID_COMPILER_OPTIONS)
    RG_CL_CODE(CL_INVALID_LINKER_OPTIONS)
    RG_CL_CODE(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef RG_CL_CODE
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    }
    return "unknown OpenCL error";
}

rg_status rg_cl_fail(rg_context *ctx, cl_int err, bool alloc, const char *what)
{
    /* Out-of-resources at a launch is usually a crashed kernel, not memory. */
    bool memory = err == CL_MEM_OBJECT_ALLOCATION_FAILURE || (alloc && err == CL_OUT_OF_RESOURCES);
    rg_status st = err == CL_OUT_OF_HOST_MEMORY ? RG_ENOMEM : memory ? RG_EDEVMEM : RG_EDEVICE;
    /* After the op queued work on its output, only RG_EDEVICE says that the
     * output may be partly written. */
    bool partial = ctx && ctx->op_wrote;
    return rg_set_error(ctx, partial ? RG_EDEVICE : st, "%s: %s (%d)%s", what,
                        rg_cl_error_name(err), (int)err,
                        partial ? "; the op had already queued work on its output, which may "
                                  "now be partly written"
                                : "");
}
