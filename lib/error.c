/* error.c — status strings and the per-context last-error message. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *rg_strerror(rg_status status)
{
    switch (status) {
    case RG_OK: return "success";
    case RG_EINVAL: return "invalid argument";
    case RG_ENOMEM: return "out of host memory";
    case RG_EDTYPE: return "unsupported dtype";
    case RG_ESIZE: return "array sizes do not fit together";
    case RG_EOFFSETS: return "invalid offsets";
    case RG_ERANGE: return "index out of range";
    case RG_EOVERFLOW: return "size or value overflows its type";
    case RG_ENODEVICE: return "no suitable device";
    case RG_EBUILD: return "kernel build failed";
    case RG_ENOKERNEL: return "kernel source not found";
    case RG_EDEVICE: return "OpenCL device error";
    case RG_EDEVMEM: return "out of device memory";
    }
    return "unknown status";
}

const char *rg_version_string(void)
{
    return RAGGED_VERSION_STRING;
}

rg_status rg_set_error(rg_context *ctx, rg_status status, const char *fmt, ...)
{
    if (!ctx)
        return status;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    /* Keep the old text if the new one cannot be stored: better than none. */
    char *msg = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!msg)
        return status;
    va_start(ap, fmt);
    vsnprintf(msg, (size_t)n + 1, fmt, ap);
    va_end(ap);
    /* Exchanged, not assigned: the queries of a descriptor may fail in
     * several threads at once (ragged.h), and each frees only the text it
     * took out. */
    free(__atomic_exchange_n(&ctx->error, msg, __ATOMIC_ACQ_REL));
    return status;
}

void rg_append_error(rg_context *ctx, const char *text)
{
    if (!ctx || !text)
        return;
    size_t old = ctx->error ? strlen(ctx->error) : 0, add = strlen(text);
    char *msg = realloc(ctx->error, old + add + 1);
    if (!msg)
        return;
    memcpy(msg + old, text, add + 1);
    ctx->error = msg;
}

void rg_clear_error(rg_context *ctx)
{
    if (ctx && ctx->error)
        ctx->error[0] = '\0';
}

rg_status rg_prefix_error(rg_context *ctx, rg_status status, const char *fn)
{
    /* rg_set_error formats before it frees the old message. */
    if (status != RG_OK && ctx && ctx->error && ctx->error[0])
        rg_set_error(ctx, status, "%s: %s", fn, ctx->error);
    return status;
}

rg_status rg_null_arg(const rg_array *other, const char *fn, const char *name)
{
    return other ? rg_set_error(other->ctx, RG_EINVAL, "%s: %s is NULL", fn, name) : RG_EINVAL;
}

rg_status rg_foreign_array(rg_context *ctx, const rg_array *a, const char *fn, const char *name,
                           const char *ref)
{
    static const char fmt[] = "%s: %s and %s belong to different contexts";
    rg_set_error(a->ctx, RG_EINVAL, fmt, fn, name, ref);
    return rg_set_error(ctx, RG_EINVAL, fmt, fn, name, ref);
}
