/* emu.c — work-items as threads for emu.h.  The barrier is our own, built
 * on atomics: ThreadSanitizer takes pthread_barrier_wait as ordering every
 * later access too, and then misses races in the steps after it. */
#include "emu.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#define EMU_MAX_GROUP 1024

__thread size_t emu_lid, emu_gid;
size_t emu_lsize, emu_ngroups;
int emu_errors;

typedef struct group {
    int count, gen;
    int line[EMU_MAX_GROUP]; /* the barrier each work-item is at */
} group;

static group *groups;
static void (*body)(void);

static void wait_all(group *g)
{
    int gen = __atomic_load_n(&g->gen, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&g->count, 1, __ATOMIC_ACQ_REL) == (int)emu_lsize) {
        __atomic_store_n(&g->count, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&g->gen, gen + 1, __ATOMIC_RELEASE);
    } else {
        while (__atomic_load_n(&g->gen, __ATOMIC_ACQUIRE) == gen)
            sched_yield();
    }
}

void emu_barrier(int line)
{
    group *g = &groups[emu_gid];
    g->line[emu_lid] = line;
    wait_all(g);
    if (g->line[emu_lid] != g->line[0]) {
        fprintf(stderr, "divergent barrier: group %zu work-item %zu at line %d, work-item 0 at %d\n",
                emu_gid, emu_lid, line, g->line[0]);
        __atomic_fetch_add(&emu_errors, 1, __ATOMIC_RELAXED);
    }
    wait_all(g); /* no one writes line[] again before all have compared */
}

typedef struct ids {
    size_t lid, gid;
} ids;

static void *work_item(void *arg)
{
    const ids *id = arg;
    emu_lid = id->lid;
    emu_gid = id->gid;
    body();
    return NULL;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "deadlock: a barrier not every work-item reached?\n";
    if (write(2, msg, sizeof msg - 1) < 0)
        _exit(3);
    _exit(3);
}

void emu_args(int argc, char **argv, size_t *group, size_t *x)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s GROUP X SEED\n", argv[0]);
        exit(2);
    }
    *group = (size_t)atol(argv[1]);
    *x = (size_t)atol(argv[2]);
    srand((unsigned)atoi(argv[3]));
}

long *emu_offsets(ulong nsegs, int short_max, int long_max)
{
    long *o = malloc((nsegs + 1) * sizeof *o);
    if (!o) {
        fprintf(stderr, "emu_offsets: out of memory\n");
        exit(2);
    }
    o[0] = 0;
    for (ulong i = 0; i < nsegs; i++)
        o[i + 1] = o[i] + (rand() % 3 == 0                    ? 0
                           : long_max > 0 && rand() % 4 == 0 ? rand() % long_max
                                                              : rand() % short_max);
    return o;
}

void emu_launch(size_t ngroups, size_t lsize, void (*fn)(void))
{
    if (lsize == 0 || lsize > EMU_MAX_GROUP) {
        fprintf(stderr, "emu_launch: group of %zu work-items\n", lsize);
        exit(2);
    }
    signal(SIGALRM, on_alarm);
    alarm(120);
    emu_lsize = lsize;
    emu_ngroups = ngroups;
    body = fn;
    size_t n = ngroups * lsize;
    groups = calloc(ngroups, sizeof *groups);
    pthread_t *threads = malloc(n * sizeof *threads);
    ids *id = malloc(n * sizeof *id);
    if (!groups || !threads || !id) {
        fprintf(stderr, "emu_launch: out of memory\n");
        exit(2);
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 << 10);
    for (size_t i = 0; i < n; i++) {
        id[i] = (ids){i % lsize, i / lsize};
        if (pthread_create(&threads[i], &attr, work_item, &id[i]) != 0) {
            fprintf(stderr, "emu_launch: cannot start thread %zu\n", i);
            exit(2);
        }
    }
    for (size_t i = 0; i < n; i++)
        pthread_join(threads[i], NULL);
    pthread_attr_destroy(&attr);
    free(groups);
    free(threads);
    free(id);
    alarm(0);
}
