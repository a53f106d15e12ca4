/* cltime.c — seconds an OpenCL platform takes to build one kernel file and
 * then to hand out its binary: PoCL compiles every kernel of the program
 * for the binary, so the second figure is their compile time (run with
 * POCL_KERNEL_CACHE=0, or PoCL answers from its cache).
 * Build: gcc -O1 -o cltime bench/experiments/cltime.c -lOpenCL
 * Usage: POCL_KERNEL_CACHE=0 ./cltime cl/reduce.cl "OPTIONS"
 * (RAGGED_PROFILE=1 prints the options ragged builds with). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: cltime FILE.cl \"OPTIONS\"\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0) {
        perror(argv[1]);
        return 1;
    }
    long n = ftell(f);
    rewind(f);
    char *src = malloc((size_t)n + 1);
    if (!src || fread(src, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "%s: cannot read\n", argv[1]);
        return 1;
    }
    src[n] = '\0';
    fclose(f);
    cl_platform_id platform;
    cl_device_id device;
    cl_int err;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS) {
        fprintf(stderr, "no OpenCL device\n");
        return 1;
    }
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    const char *s = src;
    cl_program program = context ? clCreateProgramWithSource(context, 1, &s, NULL, &err) : NULL;
    if (!program) {
        fprintf(stderr, "cannot create the program: %d\n", (int)err);
        return 1;
    }
    double t0 = now();
    err = clBuildProgram(program, 1, &device, argv[2], NULL, NULL);
    double t1 = now();
    if (err != CL_SUCCESS) {
        static char log[1 << 16];
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        fprintf(stderr, "build failed (%d):\n%s\n", (int)err, log);
        return 1;
    }
    size_t size = 0;
    unsigned char *binary = NULL;
    if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
        !(binary = malloc(size)) ||
        clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL) != CL_SUCCESS) {
        fprintf(stderr, "no binary\n");
        return 1;
    }
    double t2 = now();
    printf("build %.2f s, binaries %.2f s\n", t1 - t0, t2 - t1);
    free(binary);
    free(src);
    clReleaseProgram(program);
    clReleaseContext(context);
    return 0;
}
