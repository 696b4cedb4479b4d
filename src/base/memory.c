/* Allocation with a fault-injection hook (STYLE.md habit 9). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

/* Allocations left before the injected failure; negative: never fail. */
static _Atomic int64_t fail_countdown = -1;

void base_fail_alloc_after(int64_t n)
{
    atomic_store(&fail_countdown, n);
}

static int should_fail(void)
{
    int64_t c = atomic_load(&fail_countdown);
    while (c >= 0) {
        if (atomic_compare_exchange_weak(&fail_countdown, &c, c - 1))
            return c == 0;
    }
    return 0;
}

void *base_malloc(size_t n)
{
    if (should_fail())
        return NULL;
    return malloc(n ? n : 1);
}

void *base_calloc(size_t count, size_t size)
{
    if (should_fail())
        return NULL;
    if (count == 0 || size == 0)
        return calloc(1, 1);
    return calloc(count, size);
}

void *base_realloc(void *p, size_t n)
{
    if (should_fail())
        return NULL;
    return realloc(p, n ? n : 1);
}

void base_free(void *p)
{
    free(p);
}

void *base_aligned_alloc(size_t align, size_t n)
{
    void *p = NULL;
    if (should_fail())
        return NULL;
    if (posix_memalign(&p, align, n ? n : 1) != 0)
        return NULL;
    return p;
}

void base_aligned_free(void *p)
{
    free(p);
}

void prt_free(void *p)
{
    free(p);
}

void *prt_malloc(size_t size)
{
    return base_malloc(size);
}

char *base_strdup(const char *s)
{
    size_t n;
    char *r;
    if (!s)
        return NULL;
    n = strlen(s) + 1;
    r = base_malloc(n);
    if (r)
        memcpy(r, s, n);
    return r;
}
