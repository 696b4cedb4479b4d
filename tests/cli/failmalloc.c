/*
 * A test-only LD_PRELOAD shim that makes one allocation of a program fail,
 * for the out-of-memory sweep of `plugrt run` (oom.sh). The program links
 * the shared libplugrt, whose own fault hook is internal, so failure has to
 * come from below: malloc, calloc, realloc and the aligned allocators.
 *
 *   FAILMALLOC_AT=N     the N-th allocation (1-based, counted from when the
 *                       shim is initialized) returns NULL; every other one
 *                       succeeds
 *   FAILMALLOC_COUNT=1  at exit, print "failmalloc: C allocations" to
 *                       stderr, so the sweep knows how far to go
 *
 * It forwards to glibc's __libc_* entry points rather than to dlsym's
 * RTLD_NEXT, because dlsym itself allocates. That also means it cannot sit
 * in front of a sanitizer's allocator (whose free would then see glibc
 * pointers): oom.sh skips itself for sanitized programs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *ptr, size_t size);
void *__libc_memalign(size_t alignment, size_t size);

/* <malloc.h> declares it; -Wmissing-prototypes wants a declaration. */
void *memalign(size_t alignment, size_t size);

static long fail_at = -1;
static int count_mode;
static long calls;

__attribute__((constructor)) static void failmalloc_init(void)
{
    const char *at = getenv("FAILMALLOC_AT"), *count = getenv("FAILMALLOC_COUNT");
    if (at && *at)
        fail_at = strtol(at, NULL, 10);
    count_mode = count && strcmp(count, "1") == 0;
}

__attribute__((destructor)) static void failmalloc_report(void)
{
    char line[64];
    int n;
    if (!count_mode)
        return;
    n = snprintf(line, sizeof line, "failmalloc: %ld allocations\n",
                 __atomic_load_n(&calls, __ATOMIC_SEQ_CST));
    if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0)
        return;
}

/* 1 if this allocation is the one to fail. Counting starts only once the
 * constructor has run, so the count does not depend on what the loader did
 * before it. */
static int should_fail(void)
{
    long n;
    if (fail_at < 0 && !count_mode)
        return 0;
    n = __atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST);
    return n == fail_at;
}

void *malloc(size_t size)
{
    if (should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size)
{
    if (should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_calloc(count, size);
}

void *realloc(void *ptr, size_t size)
{
    if (should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_realloc(ptr, size);
}

void *memalign(size_t alignment, size_t size)
{
    if (should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size)
{
    return memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size)
{
    void *p;
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0)
        return EINVAL;
    p = memalign(alignment, size);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}
