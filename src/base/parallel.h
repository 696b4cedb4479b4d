/*
 * Intra-op parallelism: the one call kernels make to spread a loop over the
 * threads the running context was given.
 *
 *   base_parallel_for(n, grain, fn, arg)
 *
 * calls fn(arg, begin, end) over disjoint ranges that cover [0, n) exactly
 * once, each at least `grain` long (but the last), and returns when all are
 * done. Ranges may run on other threads, concurrently, in any order; fn
 * must not call base_parallel_for itself (a nested call runs serially).
 * With one thread, or n <= grain, it is a plain call fn(arg, 0, n) on the
 * calling thread. It never fails and never allocates.
 *
 * Which threads: those of the pool the runtime installs for the calling
 * thread while a context enqueues (base_parallel_set_current); outside of
 * that, the calling thread alone.
 */
#ifndef PLUGRT_BASE_PARALLEL_H
#define PLUGRT_BASE_PARALLEL_H

#include <stdint.h>

typedef void (*base_range_fn)(void *arg, int64_t begin, int64_t end);

void base_parallel_for(int64_t n, int64_t grain, base_range_fn fn, void *arg);

/* The number of threads base_parallel_for may use on this thread now (>= 1),
 * for kernels that size per-thread scratch. */
int32_t base_parallel_threads(void);

#endif /* PLUGRT_BASE_PARALLEL_H */
