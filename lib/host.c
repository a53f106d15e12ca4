/* host.c — large host blocks in mappings of their own, aligned for transparent
 * huge pages (the OpenMP backend's arrays and the segment descriptors). */
#define _GNU_SOURCE /* MAP_ANONYMOUS and MADV_HUGEPAGE under -std=c11 */
#include "config.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

size_t rg_host_page_round(size_t nbytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (nbytes + page - 1) / page * page;
}

#if defined(MADV_HUGEPAGE) && defined(MAP_ANONYMOUS)
#define HUGE_PAGE ((size_t)2 << 20)

void *rg_host_map(size_t nbytes)
{
    size_t len = rg_host_page_round(nbytes), span = len + HUGE_PAGE;
    if (nbytes == 0 || len < nbytes || span < len)
        return NULL;
    char *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    /* Over-mapped by one huge page; the slack before and after goes back. */
    uintptr_t addr = (uintptr_t)p;
    char *start = p + ((HUGE_PAGE - addr % HUGE_PAGE) % HUGE_PAGE);
    if (start > p)
        munmap(p, (size_t)(start - p));
    if (start + len < p + span)
        munmap(start + len, (size_t)(p + span - (start + len)));
    madvise(start, len, MADV_HUGEPAGE); /* advice only: 4 KiB pages still work */
    return start;
}

void rg_host_unmap(void *p, size_t nbytes)
{
    if (p)
        munmap(p, rg_host_page_round(nbytes));
}
#else
void *rg_host_map(size_t nbytes)
{
    (void)nbytes;
    return NULL;
}

void rg_host_unmap(void *p, size_t nbytes)
{
    (void)p;
    (void)nbytes;
}
#endif
