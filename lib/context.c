/* context.c — creating a context: reading the environment and picking a backend. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

/* Why the last rg_context_create of this thread failed (there is no context
 * to hold the message). */
static _Thread_local char create_error[4096];

static void remember_create_error(const rg_context *ctx, const char *fallback)
{
    const char *msg = ctx && ctx->error && ctx->error[0] ? ctx->error : fallback;
    snprintf(create_error, sizeof create_error, "%s", msg);
}

const char *rg_backend_name(rg_backend backend)
{
    switch (backend) {
    case RG_BACKEND_AUTO: return "auto";
    case RG_BACKEND_OPENCL: return "opencl";
    case RG_BACKEND_OPENMP: return "openmp";
    }
    return "unknown";
}

/* RAGGED_BACKEND, read only when the caller asked for RG_BACKEND_AUTO. */
static rg_status backend_from_env(rg_context *ctx, rg_backend *want)
{
    const char *env = getenv("RAGGED_BACKEND");
    if (!env || !*env || !strcasecmp(env, "auto"))
        *want = RG_BACKEND_AUTO;
    else if (!strcasecmp(env, "opencl"))
        *want = RG_BACKEND_OPENCL;
    else if (!strcasecmp(env, "openmp"))
        *want = RG_BACKEND_OPENMP;
    else
        return rg_set_error(ctx, RG_EINVAL,
                            "RAGGED_BACKEND=\"%s\": expected auto, opencl or openmp", env);
    return RG_OK;
}

static rg_status init_openmp(rg_context *ctx)
{
    ctx->backend = RG_BACKEND_OPENMP;
    return rg_omp_init(ctx);
}

/* A backend init that fails leaves ctx->ops NULL and nothing to free. */
static rg_status init_backend(rg_context *ctx, rg_backend want)
{
    if (want == RG_BACKEND_OPENMP)
        return init_openmp(ctx);
#ifdef RAGGED_HAVE_OPENCL
    ctx->backend = RG_BACKEND_OPENCL;
    rg_status st = rg_ocl_init(ctx, want == RG_BACKEND_AUTO);
    if (st == RG_OK || want == RG_BACKEND_OPENCL || st != RG_ENODEVICE)
        return st;
    /* auto and no GPU or accelerator: OpenMP, the documented fallback. */
    rg_clear_error(ctx);
    return init_openmp(ctx);
#else
    if (want == RG_BACKEND_OPENCL)
        return rg_set_error(ctx, RG_ENODEVICE,
                            "this build of ragged has no OpenCL backend (configured with "
                            "--enable-opencl=no or without OpenCL headers and loader)");
    return init_openmp(ctx);
#endif
}

rg_status rg_context_create(rg_context **out, rg_backend want)
{
    if (!out) {
        remember_create_error(NULL, "rg_context_create: out is NULL");
        return RG_EINVAL;
    }
    if (want != RG_BACKEND_AUTO && want != RG_BACKEND_OPENCL && want != RG_BACKEND_OPENMP) {
        char msg[80];
        snprintf(msg, sizeof msg, "rg_context_create: unknown backend value %d", (int)want);
        remember_create_error(NULL, msg);
        return RG_EINVAL;
    }
    rg_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        remember_create_error(NULL, "rg_context_create: out of host memory");
        return RG_ENOMEM;
    }
    rg_status st = RG_OK;
    if (want == RG_BACKEND_AUTO)
        st = backend_from_env(ctx, &want);
    if (st == RG_OK)
        st = init_backend(ctx, want);
    if (st != RG_OK) {
        remember_create_error(ctx, rg_strerror(st));
        free(ctx->error);
        free(ctx);
        return st;
    }
    /* create_error stays: a program that falls back from OpenCL to OpenMP
     * may then print why OpenCL failed. */
    *out = ctx;
    return RG_OK;
}

void rg_context_free(rg_context *ctx)
{
    if (!ctx)
        return;
    if (ctx->ops && ctx->ops->destroy)
        ctx->ops->destroy(ctx);
    free(ctx->error);
    free(ctx);
}

rg_backend rg_context_backend(const rg_context *ctx)
{
    return ctx ? ctx->backend : RG_BACKEND_AUTO;
}

rg_device_kind rg_context_device_kind(const rg_context *ctx)
{
    return ctx ? ctx->device_kind : RG_DEVICE_CPU;
}

const char *rg_context_device(const rg_context *ctx)
{
    return ctx ? ctx->device : "";
}

rg_status rg_context_finish(rg_context *ctx)
{
    return ctx ? ctx->ops->finish(ctx) : RG_EINVAL;
}

size_t rg_context_scratch_bytes(const rg_context *ctx)
{
    return ctx && ctx->ops->scratch_bytes ? ctx->ops->scratch_bytes(ctx) : 0;
}

rg_status rg_context_free_scratch(rg_context *ctx)
{
    if (!ctx)
        return RG_EINVAL;
    if (ctx->ops->scratch_free)
        ctx->ops->scratch_free(ctx);
    rg_segd_free_kept();
    return RG_OK;
}

const char *rg_context_error(const rg_context *ctx)
{
    if (!ctx)
        return create_error;
    return ctx->error ? ctx->error : "";
}
