/* fillprobe.c — how fast can an OpenCL kernel write on this GPU?  On an
 * H200 (twenty-sixth 2026-11-27 session) CuPy filled 2^27 int64 in 0.240
 * ms (4.47 TB/s of stores) while clEnqueueFillBuffer took 0.331 ms, and
 * the parents kernels, which mostly store, run at 66% to 85% of a copy.
 * This times a few ways of storing the same 1 GiB, by profiling events,
 * so that the store side of the parents target can be judged: if no
 * kernel here beats clEnqueueFillBuffer, the platform caps it; if one
 * does, its way of storing is the one to use.  Result there: a
 * grid-stride kernel of 65536 x 256 work-items 0.239 ms (4.50 TB/s),
 * clEnqueueFillBuffer 0.321 (with a 64-byte pattern 2.98), one work-item
 * per element in groups of 256 0.322 but in groups of 512 0.235, the
 * tile pattern of seg_merge_path's stores 0.236: stores alone do not
 * hold the parents kernels back, and rg_array_fill now uses such a loop
 * on GPUs (cl/scalar.cl).
 * Build: cc -O2 -o fillprobe fillprobe.c -lOpenCL; run: ./fillprobe [log2 n]. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *source =
    "kernel void fill_stride(global long *a, ulong n, long v)\n"
    "{ for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) a[i] = v; }\n"
    "kernel void fill_one(global long *a, ulong n, long v)\n"
    "{ size_t i = get_global_id(0); if (i < n) a[i] = v; }\n"
    "kernel void fill_one32(global long *a, uint n, long v)\n"
    "{ uint i = (uint)get_global_id(0); if (i < n) a[i] = v; }\n"
    "kernel void fill_v2(global long2 *a, ulong n, long v)\n"
    "{ size_t i = get_global_id(0); if (i < n) a[i] = (long2)(v); }\n"
    "kernel void fill_v4(global long4 *a, ulong n, long v)\n"
    "{ size_t i = get_global_id(0); if (i < n) a[i] = (long4)(v); }\n"
    "kernel void fill_stride_v2(global long2 *a, ulong n, long v)\n"
    "{ for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) a[i] = (long2)(v); }\n"
    "kernel void fill_unroll4(global long *a, ulong n, long v)\n"
    "{ ulong g = get_global_size(0);\n"
    "  for (ulong i = get_global_id(0); i < n; i += 4 * g) {\n"
    "    a[i] = v; if (i + g < n) a[i + g] = v; if (i + 2 * g < n) a[i + 2 * g] = v;\n"
    "    if (i + 3 * g < n) a[i + 3 * g] = v; } }\n"
    /* like seg_merge_path's stores: a tile of 2048 per group, 8 per work-item, coalesced */
    "kernel void fill_tiles(global long *a, ulong n, long v)\n"
    "{ ulong ntiles = (n + 2047) / 2048; uint lid = get_local_id(0), ls = get_local_size(0);\n"
    "  for (ulong t = get_group_id(0); t < ntiles; t += get_num_groups(0)) {\n"
    "    ulong k0 = t * 2048; uint nk = (uint)min((ulong)2048, n - k0);\n"
    "    for (uint j = lid; j < nk; j += ls) a[k0 + j] = v + j; } }\n"
    /* each work-item 8 consecutive elements: uncoalesced per instruction */
    "kernel void fill_runs(global long *a, ulong n, long v)\n"
    "{ size_t i = get_global_id(0) * 8; for (int j = 0; j < 8; j++) if (i + j < n) a[i + j] = v; }\n"
    "kernel void copy_one(global const long *a, global long *b, ulong n)\n"
    "{ size_t i = get_global_id(0); if (i < n) b[i] = a[i]; }\n";

#define CHECK(e)                                                                            \
    do {                                                                                    \
        cl_int err_ = (e);                                                                  \
        if (err_ != CL_SUCCESS) {                                                           \
            fprintf(stderr, "%s:%d: %s: %d\n", __FILE__, __LINE__, #e, (int)err_);          \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double event_ms(cl_event e)
{
    cl_ulong t0, t1;
    CHECK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL));
    CHECK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL));
    clReleaseEvent(e);
    return (double)(t1 - t0) * 1e-6;
}

#define REPS 9

static void report(const char *name, double *ms, double bytes)
{
    qsort(ms, REPS, sizeof *ms, cmp);
    printf("%-34s %9.4f ms %9.1f GB/s (min %.4f ms)\n", name, ms[REPS / 2],
           bytes / (ms[REPS / 2] * 1e-3) * 1e-9, ms[0]);
}

int main(int argc, char **argv)
{
    int lg = argc > 1 ? atoi(argv[1]) : 27;
    cl_ulong n = (cl_ulong)1 << lg;
    cl_platform_id plats[8];
    cl_uint np = 0;
    CHECK(clGetPlatformIDs(8, plats, &np));
    cl_device_id dev = NULL;
    for (cl_uint p = 0; p < np && !dev; p++) /* a GPU first */
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_GPU, 1, &dev, NULL) != CL_SUCCESS)
            dev = NULL;
    if (!dev)
        CHECK(clGetDeviceIDs(plats[0], CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    char name[256];
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL));
    cl_uint units;
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL));
    printf("fillprobe on %s (%u units), n = 2^%d int64, medians of %d\n", name, units, lg, REPS);
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    CHECK(err);
    if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
        char log[8192];
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build failed:\n%s\n", log);
        return 1;
    }
    size_t bytes = n * 8;
    cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err);
    cl_long v = 1;
    double ms[REPS];

    /* The driver's own fill, 8- and 64-byte patterns, and copy. */
    static const cl_long pat[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    size_t pats[] = {8, 64};
    for (size_t p = 0; p < 2; p++) {
        for (int r = -1; r < REPS; r++) {
            cl_event e;
            CHECK(clEnqueueFillBuffer(q, a, pat, pats[p], 0, bytes, 0, NULL, &e));
            CHECK(clFinish(q));
            double t = event_ms(e);
            if (r >= 0)
                ms[r] = t;
        }
        char label[64];
        snprintf(label, sizeof label, "clEnqueueFillBuffer %zu-byte", pats[p]);
        report(label, ms, (double)bytes);
    }
    for (int r = -1; r < REPS; r++) {
        cl_event e;
        CHECK(clEnqueueCopyBuffer(q, a, b, 0, 0, bytes, 0, NULL, &e));
        CHECK(clFinish(q));
        double t = event_ms(e);
        if (r >= 0)
            ms[r] = t;
    }
    report("clEnqueueCopyBuffer (r+w)", ms, 2.0 * bytes);

    struct {
        const char *kernel;
        size_t per_item;  /* elements per work-item (one-shot kernels) */
        size_t groups;    /* 0: enough for one pass; else a grid-stride launch */
        size_t group;
    } runs[] = {
        {"fill_stride", 1, 65536, 256},   {"fill_stride", 1, 4 * 132, 256},
        {"fill_stride", 1, 16 * 132, 256}, {"fill_one", 1, 0, 256},
        {"fill_one", 1, 0, 512},          {"fill_one", 1, 0, 1024},
        {"fill_one32", 1, 0, 256},        {"fill_v2", 2, 0, 256},
        {"fill_v4", 4, 0, 256},           {"fill_stride_v2", 2, 65536, 256},
        {"fill_unroll4", 1, 65536, 256},  {"fill_unroll4", 1, 8 * 132, 256},
        {"fill_tiles", 1, 65536, 256},    {"fill_runs", 8, 0, 256},
        {"copy_one", 1, 0, 256},
    };
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        cl_kernel k = clCreateKernel(prog, runs[i].kernel, &err);
        CHECK(err);
        cl_ulong items = n / runs[i].per_item;
        int copy = strcmp(runs[i].kernel, "copy_one") == 0;
        if (copy) {
            CHECK(clSetKernelArg(k, 0, sizeof a, &a)); /* a (the last fill) into b */
            CHECK(clSetKernelArg(k, 1, sizeof b, &b));
            CHECK(clSetKernelArg(k, 2, sizeof n, &n));
        } else {
            CHECK(clSetKernelArg(k, 0, sizeof a, &a));
            if (strcmp(runs[i].kernel, "fill_one32") == 0) {
                cl_uint n32 = (cl_uint)n;
                CHECK(clSetKernelArg(k, 1, sizeof n32, &n32));
            } else {
                cl_ulong arg = strstr(runs[i].kernel, "v2") || strstr(runs[i].kernel, "v4")
                                   ? items : n;
                CHECK(clSetKernelArg(k, 1, sizeof arg, &arg));
            }
            CHECK(clSetKernelArg(k, 2, sizeof v, &v));
        }
        size_t local = runs[i].group;
        size_t global = runs[i].groups ? runs[i].groups * local
                                       : (items + local - 1) / local * local;
        int ok = 1;
        for (int r = -1; r < REPS && ok; r++) {
            cl_event e;
            err = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, &e);
            if (err != CL_SUCCESS) {
                printf("%-34s launch failed: %d\n", runs[i].kernel, (int)err);
                ok = 0;
                break;
            }
            CHECK(clFinish(q));
            double t = event_ms(e);
            if (r >= 0)
                ms[r] = t;
        }
        if (ok) {
            char label[96];
            snprintf(label, sizeof label, "%s %zux%zu%s", runs[i].kernel, global / local, local,
                     copy ? " (r+w)" : "");
            report(label, ms, copy ? 2.0 * bytes : (double)bytes);
        }
        clReleaseKernel(k);
    }
    /* A check that the last fill wrote what it should. */
    cl_long probe[4];
    CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, (bytes / 2) & ~(size_t)31, sizeof probe, probe, 0,
                              NULL, NULL));
    printf("check: %s\n", probe[0] == 1 && probe[3] == 1 ? "ok" : "WRONG");
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
