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
 *
 * Determinism. How [0, n) is split depends on the thread count and on which
 * thread is free first, so a kernel's result must not depend on the split:
 * each output element is computed by one range, whole, in the same order of
 * operations whatever range holds it. A reduction across ranges must not add
 * partial sums in completion order; give each fixed block of the index
 * space (independent of the thread count) its own partial result and
 * combine the blocks in index order afterwards, on the calling thread.
 * Then 1 thread and N threads give the same bits (tests check this for the
 * built-in ops that use it).
 *
 * fn runs on worker threads with no error state of the caller's: it must
 * not fail (check everything before the call) and must not report errors.
 */
#ifndef PLUGRT_BASE_PARALLEL_H
#define PLUGRT_BASE_PARALLEL_H

#include <stdint.h>

#include "plugrt/plugrt.h"

typedef void (*base_range_fn)(void *arg, int64_t begin, int64_t end);

void base_parallel_for(int64_t n, int64_t grain, base_range_fn fn, void *arg);

/* The number of threads base_parallel_for may use on this thread now (>= 1),
 * for kernels that size per-thread scratch. */
int32_t base_parallel_threads(void);

/* Inside fn: which of those threads runs this range, 0..threads-1 (0 is the
 * thread that called base_parallel_for); 0 outside. For per-thread scratch:
 * two ranges that run at once never share an index. */
int32_t base_parallel_thread_index(void);

/* ---- pools (the runtime's side) ------------------------------------------ */

/* A set of threads: the thread that installs it plus `threads - 1` workers,
 * started at creation and parked (spinning a little, then sleeping) between
 * loops. One thread at a time may have a given pool installed. */
typedef struct base_pool base_pool;

/* A pool of `threads` threads (1..BASE_MAX_THREADS). A worker the system
 * will not start leaves a smaller pool and a warning in the log, since the
 * count changes only speed, never results. PRT_ERR_OUT_OF_MEMORY if the
 * pool's own memory cannot be had. */
#define BASE_MAX_THREADS 1024
prt_status base_pool_create(int32_t threads, base_pool **out);
/* Stops and joins the workers. NULL is fine. Not while a loop runs. */
void base_pool_destroy(base_pool *pool);
/* Threads the pool has (>= 1; what started, see base_pool_create). */
int32_t base_pool_threads(const base_pool *pool);

/* Makes `pool` (NULL: none) the calling thread's pool for
 * base_parallel_for and returns the one it replaces, to be put back. */
base_pool *base_parallel_set_current(base_pool *pool);

/* The threads a pool gets by default: the CPUs this thread may run on
 * (sched_getaffinity), lowered to the cgroup's CPU quota when there is one
 * (cpu.max, or cpu.cfs_quota_us / cpu.cfs_period_us), at least 1. Read once
 * per process. */
int32_t base_cpu_count(void);

#endif /* PLUGRT_BASE_PARALLEL_H */
