/* program.c — finds kernel sources, builds programs, and caches them in memory and on disk. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ocl.h"

#ifndef RAGGED_KERNEL_DIR
#define RAGGED_KERNEL_DIR "/usr/local/share/ragged/cl"
#endif

typedef struct cached_kernel {
    char *name;
    cl_kernel kernel;
    size_t group;
    struct cached_kernel *next;
} cached_kernel;

/* A program of one source file built with one option string, and the kernels taken from it. */
struct rg_ocl_program {
    char *file;
    char *path; /* where file was found, for messages */
    char *options;
    cl_program program;
    cached_kernel *kernels;
    rg_ocl_program *next;
};

/* ---- kernel sources --------------------------------------------------- */

/* PATH opened for reading if it is a regular file, else NULL (opened
 * without blocking: a FIFO of that name, among the kernel sources or in a
 * shared cache folder, must not hang the program). */
static FILE *open_regular(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat info;
    if (fd < 0)
        return NULL;
    bool regular = fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
    FILE *f = regular ? fdopen(fd, "rb") : NULL;
    if (!f) {
        int why = regular ? errno : EINVAL; /* EINVAL: there, but not a regular file */
        close(fd);
        errno = why;
    }
    return f;
}

/* The whole file, NUL-terminated; NULL if it cannot be read or is not a
 * regular file. */
static char *read_file(const char *path, size_t *length)
{
    FILE *f = open_regular(path);
    if (!f)
        return NULL;
    size_t size = 0, cap = 4096;
    char *text = malloc(cap);
    while (text) {
        size += fread(text + size, 1, cap - size - 1, f);
        if (size < cap - 1)
            break;
        char *grown = realloc(text, cap *= 2);
        if (!grown)
            free(text);
        text = grown;
    }
    int why = !text ? ENOMEM : ferror(f) ? EIO : 0;
    fclose(f);
    if (why) {
        free(text);
        errno = why;
        return NULL;
    }
    text[size] = '\0';
    *length = size;
    return text;
}

/* Calls visit on RAGGED_KERNEL_PATH's folders (colon-separated, empty ones
 * skipped) and then the installed folder, until it returns true. */
static bool each_folder(bool (*visit)(const char *folder, size_t len, void *arg), void *arg)
{
    const char *env = getenv("RAGGED_KERNEL_PATH");
    for (const char *p = env ? env : ""; *p;) {
        size_t len = strcspn(p, ":");
        if (len > 0 && visit(p, len, arg))
            return true;
        p += len + (p[len] == ':');
    }
    return visit(RAGGED_KERNEL_DIR, strlen(RAGGED_KERNEL_DIR), arg);
}

typedef struct source_search {
    const char *file;
    char *path; /* the file found (for build messages) */
    size_t path_size;
    char *text;
    size_t length;
    char unreadable[600]; /* the first copy there but not read, and why */
} source_search;

/* Reads FOLDER/FILE if it is there.  A copy that is there but cannot be
 * read is passed over, as execvp passes over a file it may not run, and
 * named if no folder has a readable one. */
static bool try_folder(const char *folder, size_t len, void *arg)
{
    source_search *s = arg;
    int n = snprintf(s->path, s->path_size, "%.*s/%s", (int)len, folder, s->file);
    if (n <= 0 || (size_t)n >= s->path_size)
        return false;
    s->text = read_file(s->path, &s->length);
    if (!s->text && errno != ENOENT && errno != ENOTDIR && !s->unreadable[0])
        snprintf(s->unreadable, sizeof s->unreadable, "%s: %s", s->path,
                 errno == EINVAL ? "not a regular file" : strerror(errno));
    return s->text != NULL;
}

typedef struct folder_list {
    rg_context *ctx;
    size_t count;
} folder_list;

/* Appends one searched folder to the error message. */
static bool list_folder(const char *folder, size_t len, void *arg)
{
    folder_list *list = arg;
    char item[4096];
    snprintf(item, sizeof item, "%s%.*s", list->count++ ? ", " : "", (int)len, folder);
    rg_append_error(list->ctx, item);
    return false;
}

static rg_status load_source(rg_context *ctx, const char *file, char **text, size_t *length,
                             char *path, size_t path_size)
{
    source_search s = {file, path, path_size, NULL, 0, ""};
    if (each_folder(try_folder, &s)) {
        *text = s.text;
        *length = s.length;
        return RG_OK;
    }
    rg_set_error(ctx, RG_ENOKERNEL,
                 "kernel source %s not found in RAGGED_KERNEL_PATH or the installed folder; "
                 "searched: ", file);
    folder_list list = {ctx, 0};
    each_folder(list_folder, &list);
    if (s.unreadable[0]) {
        rg_append_error(ctx, "; there but not read: ");
        rg_append_error(ctx, s.unreadable);
    }
    return RG_ENOKERNEL;
}

/* ---- building ----------------------------------------------------------- */

static char *build_log(const rg_ocl *ocl, cl_program program)
{
    size_t size = 0;
    if (rg_cl.clGetProgramBuildInfo(program, ocl->device, CL_PROGRAM_BUILD_LOG, 0, NULL,
                                    &size) != CL_SUCCESS)
        return NULL;
    char *log = malloc(size + 1);
    if (log && rg_cl.clGetProgramBuildInfo(program, ocl->device, CL_PROGRAM_BUILD_LOG, size,
                                           log, NULL) != CL_SUCCESS) {
        free(log);
        return NULL;
    }
    if (log)
        log[size] = '\0';
    return log;
}

/* The message carries path, options and the whole log: the log is the only useful part. */
static rg_status build_failed(rg_context *ctx, const rg_ocl *ocl, cl_program program,
                              cl_int err, const char *path, const char *options)
{
    rg_set_error(ctx, RG_EBUILD,
                 "clBuildProgram of %s with options \"%s\" for %s failed: %s (%d); build log:\n",
                 path, options, ocl->device_name, rg_cl_error_name(err), (int)err);
    char *log = build_log(ocl, program);
    rg_append_error(ctx, log && *log ? log : "(no build log)");
    free(log);
    return RG_EBUILD;
}

static rg_status build_from_source(rg_context *ctx, const rg_ocl *ocl, const char *source,
                                   size_t length, const char *path, const char *options,
                                   cl_program *out)
{
    cl_int err;
    cl_program program =
        rg_cl.clCreateProgramWithSource(ocl->context, 1, &source, &length, &err);
    if (!program)
        return rg_cl_fail(ctx, err, true, "clCreateProgramWithSource");
    err = rg_cl.clBuildProgram(program, 1, &ocl->device, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        rg_status st = err == CL_BUILD_PROGRAM_FAILURE || err == CL_INVALID_BUILD_OPTIONS
                           ? build_failed(ctx, ocl, program, err, path, options)
                           : rg_cl_fail(ctx, err, true, "clBuildProgram");
        rg_cl.clReleaseProgram(program);
        return st;
    }
    *out = program;
    return RG_OK;
}

/* ---- the disk cache ----------------------------------------------------- */

/* Two unrelated 64-bit hashes of the same bytes: a collision of both is not a concern. */
typedef struct cache_key {
    uint64_t a, b;
} cache_key;

static void key_bytes(cache_key *k, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        k->a = (k->a ^ p[i]) * UINT64_C(0x100000001b3); /* FNV-1a */
        k->b = (k->b + p[i] + 1) * UINT64_C(0x9e3779b97f4a7c15);
        k->b ^= k->b >> 29;
    }
}

/* Length-prefixed, so that moving bytes between fields changes the key. */
static void key_field(cache_key *k, const char *text, size_t length)
{
    uint64_t n = length;
    key_bytes(k, &n, sizeof n);
    key_bytes(k, text, length);
}

static cache_key make_key(const rg_ocl *ocl, const char *source, size_t length,
                          const char *options)
{
    cache_key k = {UINT64_C(0xcbf29ce484222325), UINT64_C(0x243f6a8885a308d3)};
    const char *fields[] = {RAGGED_VERSION_STRING, options, ocl->platform_version,
                            ocl->device_name, ocl->driver_version};
    key_field(&k, source, length);
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        key_field(&k, fields[i], strlen(fields[i]));
    return k;
}

#define CACHE_MAGIC "RGCLBIN2"

/* File layout: this header, then the binary (host byte order: the key pins
 * the machine).  The checksum matters: PoCL aborts on a damaged binary
 * instead of failing, so damage must be caught before the driver sees it. */
typedef struct cache_header {
    char magic[8];
    uint64_t a, b;  /* the key */
    uint64_t size;  /* of the binary */
    uint64_t check; /* of the binary */
} cache_header;

static uint64_t checksum(const unsigned char *binary, size_t size)
{
    cache_key k = {UINT64_C(0xcbf29ce484222325), 0};
    key_bytes(&k, binary, size);
    return k.a ^ k.b;
}

/* The cache folder, or false when RAGGED_CACHE=0 or no folder can be named. */
static bool cache_dir(char *dir, size_t size)
{
    if (rg_env_off("RAGGED_CACHE"))
        return false;
    const char *env = getenv("RAGGED_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n;
    if (env && *env)
        n = snprintf(dir, size, "%s", env);
    else if (xdg && *xdg)
        n = snprintf(dir, size, "%s/ragged", xdg);
    else if (home && *home)
        n = snprintf(dir, size, "%s/.cache/ragged", home);
    else
        return false;
    return n > 0 && (size_t)n < size;
}

static bool cache_path(char *path, size_t size, const char *dir, cache_key key)
{
    int n = snprintf(path, size, "%s/%016llx%016llx.clbin", dir, (unsigned long long)key.a,
                     (unsigned long long)key.b);
    return n > 0 && (size_t)n < size;
}

/* The binary stored under key, or NULL for any kind of miss. */
static unsigned char *cache_read(const char *path, cache_key key, size_t *size)
{
    FILE *f = open_regular(path);
    if (!f)
        return NULL;
    cache_header h;
    unsigned char *binary = NULL;
    bool ok = fread(&h, sizeof h, 1, f) == 1 && memcmp(h.magic, CACHE_MAGIC, 8) == 0 &&
              h.a == key.a && h.b == key.b && h.size > 0 && h.size < ((uint64_t)1 << 31);
    if (ok)
        binary = malloc(h.size);
    /* Exactly h.size bytes must follow: a truncated or padded entry is a miss. */
    ok = binary && fread(binary, 1, h.size, f) == h.size && fgetc(f) == EOF &&
         checksum(binary, h.size) == h.check;
    fclose(f);
    if (!ok) {
        free(binary);
        return NULL;
    }
    *size = h.size;
    return binary;
}

/* A program from a cached binary, or NULL (a miss) if the driver refuses it. */
static cl_program cache_load(const rg_ocl *ocl, const char *dir, cache_key key,
                             const char *options)
{
    char path[4096];
    size_t size = 0;
    unsigned char *binary = cache_path(path, sizeof path, dir, key)
                                ? cache_read(path, key, &size) : NULL;
    if (!binary)
        return NULL;
    cl_int err, binary_status = CL_SUCCESS;
    const unsigned char *bin = binary;
    cl_program program = rg_cl.clCreateProgramWithBinary(ocl->context, 1, &ocl->device, &size,
                                                         &bin, &binary_status, &err);
    free(binary);
    if (program && (binary_status != CL_SUCCESS ||
                    rg_cl.clBuildProgram(program, 1, &ocl->device, options, NULL, NULL) !=
                        CL_SUCCESS)) {
        rg_cl.clReleaseProgram(program);
        program = NULL;
    }
    return program;
}

/* mkdir -p; errors surface later when the temp file cannot be created. */
static void make_dirs(const char *dir)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return;
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        mkdir(path, 0777);
        *p = '/';
    }
    mkdir(path, 0777);
}

/* PoCL compiles the program's kernels to give its binary, adding them to
 * its list of loaded kernels: hence the lock (see rg_ocl_serial_begin). */
static unsigned char *program_binary(const rg_ocl *ocl, cl_program program, size_t *size)
{
    rg_ocl_serial_begin(ocl);
    unsigned char *binary = NULL;
    if (rg_cl.clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof *size, size, NULL) ==
            CL_SUCCESS && *size > 0)
        binary = malloc(*size);
    if (binary && rg_cl.clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binary, &binary,
                                         NULL) != CL_SUCCESS) {
        free(binary);
        binary = NULL;
    }
    rg_ocl_serial_end(ocl);
    return binary;
}

static bool write_entry(int fd, cache_key key, const unsigned char *binary, size_t size)
{
    cache_header h;
    memcpy(h.magic, CACHE_MAGIC, 8);
    h.a = key.a;
    h.b = key.b;
    h.size = size;
    h.check = checksum(binary, size);
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        close(fd);
        return false;
    }
    bool ok = fwrite(&h, sizeof h, 1, f) == 1 && fwrite(binary, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

/* Temp file plus rename, so that a reader never sees half an entry.  Failures are ignored:
 * the cache only saves time. */
static void cache_store(const rg_ocl *ocl, const char *dir, cache_key key, cl_program program)
{
    char path[4096], tmp[4096];
    size_t size = 0;
    if (!cache_path(path, sizeof path, dir, key) ||
        snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", path) >= (int)sizeof tmp)
        return;
    unsigned char *binary = program_binary(ocl, program, &size);
    if (!binary)
        return;
    make_dirs(dir);
    int fd = mkstemp(tmp);
    if (fd >= 0) {
        if (!write_entry(fd, key, binary, size) || rename(tmp, path) != 0)
            unlink(tmp);
    }
    free(binary);
}

/* ---- programs and kernels of a context ---------------------------------- */

/* RAGGED_PROFILE=1: what a fresh build of FILE made, its log to stderr.
 * On NVIDIA's platform (built with -cl-nv-verbose) the log says how many
 * registers and how much local memory each kernel takes, which set how
 * many work-groups a compute unit holds. */
static void report_build(const rg_ocl *ocl, const char *file, const char *options,
                         cl_program program)
{
    char *log = build_log(ocl, program);
    fprintf(stderr, "ragged profile: built %s with \"%s\"%s%s\n", file, options,
            log && *log ? "; build log:\n" : "", log ? log : "");
    free(log);
}

static rg_status build_program(rg_context *ctx, rg_ocl *ocl, const char *file,
                               const char *options, cl_program *out, char *path,
                               size_t path_size)
{
    char dir[4096];
    char *source = NULL;
    size_t length = 0;
    rg_status st = load_source(ctx, file, &source, &length, path, path_size);
    if (st != RG_OK)
        return st;
    /* The library's options, then RAGGED_OPENCL_BUILD_OPTIONS's, then
     * when profiling NVIDIA's -cl-nv-verbose (registers in the log). */
    const char *extra = ocl->build_options;
    const char *verbose = ocl->profile && ocl->nv_options ? " -cl-nv-verbose" : "";
    size_t n = strlen(options) + 1 + strlen(extra) + strlen(verbose) + 1;
    char *all = malloc(n);
    if (!all) {
        free(source);
        return rg_set_error(ctx, RG_ENOMEM, "building %s: out of host memory", file);
    }
    snprintf(all, n, "%s%s%s%s", options, *extra ? " " : "", extra, verbose);
    if (ocl->profile) { /* afresh: a cached binary has no build log */
        st = build_from_source(ctx, ocl, source, length, path, all, out);
        if (st == RG_OK)
            report_build(ocl, file, all, *out);
    } else {
        bool use_cache = cache_dir(dir, sizeof dir);
        cache_key key = make_key(ocl, source, length, all);
        *out = use_cache ? cache_load(ocl, dir, key, all) : NULL;
        if (!*out) {
            st = build_from_source(ctx, ocl, source, length, path, all, out);
            if (st == RG_OK && use_cache)
                cache_store(ocl, dir, key, *out);
        }
    }
    free(all);
    free(source);
    return st;
}

static rg_ocl_program *find_program(const rg_ocl *ocl, const char *file, const char *options)
{
    for (rg_ocl_program *p = ocl->programs; p; p = p->next)
        if (strcmp(p->file, file) == 0 && strcmp(p->options, options) == 0)
            return p;
    return NULL;
}

static rg_status get_program(rg_context *ctx, rg_ocl *ocl, const char *file,
                             const char *options, rg_ocl_program **out)
{
    if ((*out = find_program(ocl, file, options)))
        return RG_OK;
    rg_ocl_program *p = calloc(1, sizeof *p);
    if (p) {
        p->file = strdup(file);
        p->options = strdup(options);
    }
    if (!p || !p->file || !p->options) {
        if (p) {
            free(p->file);
            free(p->options);
        }
        free(p);
        return rg_set_error(ctx, RG_ENOMEM, "program cache: out of host memory");
    }
    char path[4096];
    rg_status st = build_program(ctx, ocl, file, options, &p->program, path, sizeof path);
    if (st == RG_OK && !(p->path = strdup(path))) {
        rg_cl.clReleaseProgram(p->program);
        st = rg_set_error(ctx, RG_ENOMEM, "program cache: out of host memory");
    }
    if (st != RG_OK) {
        free(p->file);
        free(p->options);
        free(p);
        return st;
    }
    p->next = ocl->programs;
    ocl->programs = p;
    *out = p;
    return RG_OK;
}

/* The largest power of two within the device's and the kernel's limits: the
 * kernels' tree reductions assume one. */
static size_t group_size(const rg_ocl *ocl, cl_kernel kernel)
{
    size_t limit = ocl->max_group, group = 1;
    size_t kernel_limit = 0;
    if (rg_cl.clGetKernelWorkGroupInfo(kernel, ocl->device, CL_KERNEL_WORK_GROUP_SIZE,
                                       sizeof kernel_limit, &kernel_limit, NULL) == CL_SUCCESS &&
        kernel_limit > 0 && kernel_limit < limit)
        limit = kernel_limit;
    while (group * 2 <= limit)
        group *= 2;
    return group;
}

static rg_status create_kernel(rg_context *ctx, rg_ocl *ocl, rg_ocl_program *p,
                               const char *name, cached_kernel **out)
{
    cached_kernel *k = calloc(1, sizeof *k);
    if (!k || !(k->name = strdup(name))) {
        free(k);
        return rg_set_error(ctx, RG_ENOMEM, "kernel cache: out of host memory");
    }
    cl_int err;
    k->kernel = rg_cl.clCreateKernel(p->program, name, &err);
    if (!k->kernel) {
        free(k->name);
        free(k);
        /* A source that builds but lacks the kernel is a stale or cut-down
         * copy of the library's: a kernel not found, not a device fault. */
        if (err == CL_INVALID_KERNEL_NAME)
            return rg_set_error(ctx, RG_ENOKERNEL,
                                "kernel %s not found in %s (built; a file of another version "
                                "of the library?)",
                                name, p->path);
        char what[600];
        snprintf(what, sizeof what, "clCreateKernel(%s) from %s", name, p->path);
        return rg_cl_fail(ctx, err, false, what);
    }
    k->group = group_size(ocl, k->kernel);
    k->next = p->kernels;
    p->kernels = k;
    *out = k;
    return RG_OK;
}

rg_status rg_ocl_get_kernel(rg_context *ctx, const char *file, const char *options,
                            const char *name, rg_ocl_kernel *out)
{
    rg_ocl *ocl = ctx->impl;
    rg_ocl_program *p = NULL;
    rg_status st = get_program(ctx, ocl, file, options, &p);
    if (st != RG_OK)
        return st;
    cached_kernel *k = p->kernels;
    while (k && strcmp(k->name, name) != 0)
        k = k->next;
    if (!k && (st = create_kernel(ctx, ocl, p, name, &k)) != RG_OK)
        return st;
    out->kernel = k->kernel;
    out->group = k->group;
    out->name = k->name;
    return RG_OK;
}

void rg_ocl_programs_free(rg_ocl *ocl)
{
    while (ocl->programs) {
        rg_ocl_program *p = ocl->programs;
        ocl->programs = p->next;
        while (p->kernels) {
            cached_kernel *k = p->kernels;
            p->kernels = k->next;
            rg_cl.clReleaseKernel(k->kernel);
            free(k->name);
            free(k);
        }
        rg_cl.clReleaseProgram(p->program);
        free(p->file);
        free(p->path);
        free(p->options);
        free(p);
    }
}
