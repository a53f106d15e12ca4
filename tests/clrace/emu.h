/* emu.h — enough of OpenCL C to compile a kernel file as C and run each
 * work-item as a thread (emu.c), so that ThreadSanitizer sees races between
 * the work-items of a group.  PoCL, which runs the suite's OpenCL tests,
 * runs them one after another in order between barriers and cannot show
 * such races; GPUs run them in lockstep and in any order. */
#ifndef RG_CLRACE_EMU_H
#define RG_CLRACE_EMU_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;

#define kernel
#define global
#define local
#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2

extern __thread size_t emu_lid, emu_gid;
extern size_t emu_lsize, emu_ngroups;
#define get_local_id(d) emu_lid
#define get_group_id(d) emu_gid
#define get_local_size(d) emu_lsize
#define get_num_groups(d) emu_ngroups
#define get_global_id(d) (emu_gid * emu_lsize + emu_lid)
#define get_global_size(d) (emu_ngroups * emu_lsize)
#define min(a, b) ({ __typeof__(a) a_ = (a); __typeof__(b) b_ = (b); a_ < b_ ? a_ : b_; })
#define max(a, b) ({ __typeof__(a) a_ = (a); __typeof__(b) b_ = (b); a_ > b_ ? a_ : b_; })
#define popcount(x) ((uint)__builtin_popcount(x))
#define clz(x) ((uint)__builtin_clz(x))
#define atomic_inc(p) __atomic_fetch_add((p), 1u, __ATOMIC_RELAXED)

/* Every work-item of the group waits here; a work-item at another barrier
 * (by line) than work-item 0 counts as an error (a divergent barrier). */
void emu_barrier(int line);
#define barrier(flags) emu_barrier(__LINE__)

/* Runs body on groups * lsize threads, all groups at once; a deadlock (a
 * barrier not every work-item reaches) ends the process after 120 s. */
void emu_launch(size_t groups, size_t lsize, void (*body)(void));

extern int emu_errors; /* divergent barriers seen */

/* argv of a test, "GROUP X SEED": GROUP into *group, X into *x, and rand()
 * seeded with SEED; exits with 2 on any other argc. */
void emu_args(int argc, char **argv, size_t *group, size_t *x);

/* nsegs + 1 ascending offsets from 0: a third of the segments empty, the
 * rest 0 .. short_max - 1 elements long, or where long_max > 0 one in four
 * 0 .. long_max - 1 (tiles inside one segment). */
long *emu_offsets(ulong nsegs, int short_max, int long_max);

#endif
