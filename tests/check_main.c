/* check_main.c — runs every Check suite of ragged (forked tests; no context is made here),
 * its test cases spread over parallel processes. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

/* Read by AddressSanitizer when the tests are built with it (ignored
 * otherwise): test_huge_alloc asks for more memory than exists and expects
 * RG_ENOMEM, which needs malloc to return NULL rather than ASan to abort.
 * ASAN_OPTIONS in the environment still overrides this. */
const char *__asan_default_options(void);
__attribute__((visibility("default"), used)) const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}

/* Started first, longest first (their times in a run with empty kernel
 * caches on 2 cores), so that no long case starts last; the order only
 * changes how soon the run ends. */
static const char *const long_cases[] = {"reduce:small",  "reduce:big",     "nonzero:nonzero",
                                         "parents:big",   "reduce:values",  "reduce:windows",
                                         "offsets:lengths", "parents:strategies"};

/* One case's run in a child process: its output, its counts. */
typedef struct job {
    const char *suite, *tcase;
    size_t order; /* its place in the suites */
    pid_t pid;    /* 0: not started; -1: done */
    FILE *out;    /* stdout and stderr of the child */
    double start; /* seconds */
} job;

typedef struct counts {
    int run, failed;
} counts;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Processes to run cases in: RAGGED_TEST_JOBS, else the cores (at most 4).
 * One (a plain run of the whole runner, output as it comes) where Check is
 * told to run some suites or cases, to write a log file (one run, one
 * file), or not to fork. */
static long jobs_wanted(void)
{
    static const char *const serial_vars[] = {"CK_RUN_SUITE", "CK_RUN_CASE", "CK_LOG_FILE_NAME",
                                              "CK_XML_LOG_FILE_NAME", "CK_TAP_LOG_FILE_NAME"};
    for (size_t i = 0; i < sizeof serial_vars / sizeof *serial_vars; i++) {
        const char *v = getenv(serial_vars[i]);
        if (v && *v)
            return 1;
    }
    const char *fork_mode = getenv("CK_FORK");
    if (fork_mode && strcmp(fork_mode, "no") == 0)
        return 1;
    const char *env = getenv("RAGGED_TEST_JOBS");
    if (env && *env) {
        char *end;
        errno = 0;
        long n = strtol(env, &end, 10);
        if (errno || *end || n < 1 || n > 64) {
            fprintf(stderr, "check_ragged: RAGGED_TEST_JOBS=%s is not a whole number from 1 to 64\n",
                    env);
            exit(EXIT_FAILURE);
        }
        return n;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores < 1 ? 1 : cores > 4 ? 4 : cores;
}

static bool start(SRunner *sr, job *j, counts *slot)
{
    fflush(stdout);
    fflush(stderr);
    j->out = tmpfile();
    if (!j->out) {
        perror("check_ragged: tmpfile");
        return false;
    }
    j->start = now();
    j->pid = fork();
    if (j->pid < 0) {
        perror("check_ragged: fork");
        return false;
    }
    if (j->pid == 0) {
        dup2(fileno(j->out), STDOUT_FILENO);
        dup2(fileno(j->out), STDERR_FILENO);
        srunner_run_tagged(sr, j->suite, j->tcase, getenv("CK_INCLUDE_TAGS"),
                           getenv("CK_EXCLUDE_TAGS"), CK_NORMAL);
        slot->run = srunner_ntests_run(sr);
        slot->failed = srunner_ntests_failed(sr);
        fflush(NULL);
        _exit(slot->failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE);
    }
    return true;
}

/* Echoes a finished case's output; returns whether it passed. */
static bool finish(job *j, int status, const counts *slot)
{
    printf("== %s:%s (%.0f s)\n", j->suite, j->tcase, now() - j->start);
    rewind(j->out);
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, j->out)) > 0)
        fwrite(buf, 1, got, stdout);
    fclose(j->out);
    j->pid = -1;
    bool exited = WIFEXITED(status);
    if (!exited)
        printf("check_ragged: the runner of %s:%s ended by signal %d\n", j->suite, j->tcase,
               WTERMSIG(status));
    fflush(stdout);
    return exited && WEXITSTATUS(status) == 0 && slot->failed == 0;
}

static int long_rank(const job *j)
{
    enum { NLONG = sizeof long_cases / sizeof *long_cases };
    char name[128];
    snprintf(name, sizeof name, "%s:%s", j->suite, j->tcase);
    for (int r = 0; r < NLONG; r++)
        if (strcmp(long_cases[r], name) == 0)
            return r;
    return NLONG;
}

static int by_length(const void *a, const void *b)
{
    const job *x = a, *y = b;
    int rx = long_rank(x), ry = long_rank(y);
    return rx != ry ? rx - ry : (x->order > y->order) - (x->order < y->order);
}

static int run_parallel(SRunner *sr, long jobs)
{
    size_t n = test_ncases();
    job *list = calloc(n, sizeof *list);
    counts *slots = mmap(NULL, (n ? n : 1) * sizeof *slots, PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (!list || slots == MAP_FAILED) {
        fprintf(stderr, "check_ragged: out of memory\n");
        return EXIT_FAILURE;
    }
    for (size_t i = 0; i < n; i++) {
        test_case_name(i, &list[i].suite, &list[i].tcase);
        list[i].order = i;
    }
    qsort(list, n, sizeof *list, by_length);
    double t0 = now();
    printf("check_ragged: %zu cases in %ld processes (RAGGED_TEST_JOBS)\n", n, jobs);
    long running = 0;
    bool ok = true;
    size_t done = 0;
    while (done < n) {
        for (size_t i = 0; i < n && running < jobs; i++) {
            if (list[i].pid != 0)
                continue;
            slots[i] = (counts){0, 0};
            if (!start(sr, &list[i], &slots[i]))
                return EXIT_FAILURE;
            running++;
        }
        int status;
        pid_t pid = wait(&status);
        if (pid < 0) {
            perror("check_ragged: wait");
            return EXIT_FAILURE;
        }
        for (size_t i = 0; i < n; i++)
            if (list[i].pid == pid) {
                ok &= finish(&list[i], status, &slots[i]);
                running--;
                done++;
            }
    }
    int run = 0, failed = 0;
    for (size_t i = 0; i < n; i++) {
        run += slots[i].run;
        failed += slots[i].failed;
    }
    printf("check_ragged: all %zu cases: %d checks, %d failed, %.0f s%s\n", n, run, failed,
           now() - t0, ok ? "" : " (or a runner failed: see above)");
    munmap(slots, (n ? n : 1) * sizeof *slots);
    free(list);
    return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

int main(void)
{
    /* Contexts and OpenMP threads are only ever made inside the forked tests. */
    SRunner *sr = srunner_create(context_suite());
    srunner_add_suite(sr, array_suite());
    srunner_add_suite(sr, offsets_suite());
    srunner_add_suite(sr, parents_suite());
    srunner_add_suite(sr, segd_suite());
    srunner_add_suite(sr, nested_suite());
    srunner_add_suite(sr, nonzero_suite());
    srunner_add_suite(sr, list_suite());
    srunner_add_suite(sr, transfers_suite());
    srunner_add_suite(sr, reduce_suite());
    srunner_add_suite(sr, faults_suite());

    long jobs = jobs_wanted();
    int result;
    if (jobs > 1) {
        result = run_parallel(sr, jobs);
    } else {
        srunner_run_all(sr, CK_NORMAL);
        result = srunner_ntests_failed(sr) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
    }
    srunner_free(sr);
    return result;
}
