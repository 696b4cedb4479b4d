/*
 * The thread pool behind base_parallel_for.
 *
 * A loop is published as a job: the caller first closes the ticket, one
 * 64-bit word holding the job's epoch (high 32 bits) and the next unclaimed
 * chunk (low 32 bits), by moving it to a new epoch with no chunk left to
 * claim; then writes fn, arg, n and the chunk count; then opens the next
 * epoch at chunk 0. Every thread of the pool, the caller included, claims
 * chunks by compare-and-swap on that word, which fails once the epoch moved
 * on. A worker that saw an epoch and read the job's fields late may read
 * the next job's fields: had the caller written them while the ticket still
 * held the old epoch (past its last chunk, but below the next job's count),
 * that worker's claim would succeed and run a chunk with another job's
 * fields and count it done in the next job. Closing first makes any field
 * of the next job visible only after the ticket has left the old epoch, and
 * claim() reads the ticket after the fields (the fields are atomics for
 * that read; a fence orders the two). The caller returns when `done` counts
 * every chunk, so no range of the job is still running.
 *
 * Workers spin for a while after each job, since the next layer's loop
 * usually follows within microseconds and a wake-up through the kernel
 * costs more than most element-wise loops: SPIN_PURE_NS on the CPU, then
 * yielding it at each look until SPIN_NS (a BLAS's own threads or another
 * context may want it meanwhile); then they sleep on a condition variable
 * and the caller wakes as many as the job can use. The sleeper
 * count and the ticket are sequentially consistent, so a worker going to
 * sleep either sees the new job or is counted and woken (see publish()).
 *
 * Chunks: at most CHUNKS_PER_THREAD per thread and never shorter than
 * `grain`, cut evenly (base_parallel.h: ranges are at least grain long).
 * More chunks than threads let a thread that is free early take over work
 * of one the system descheduled, which on a loaded machine matters more
 * than the few compare-and-swaps it costs.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "parallel.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"

#define CHUNKS_PER_THREAD 4
#define SPIN_PURE_NS 20000 /* 20 us: most gaps between two layers' loops */
#define SPIN_NS 200000     /* 0.2 ms: a run's gaps between loops are shorter */
#define EPOCH_SHIFT 32
#define CHUNK_MASK 0xffffffffull

struct base_pool {
    int32_t threads; /* workers + the calling thread */
    int32_t started; /* workers running */
    pthread_t *tids;
    struct worker_arg *args;

    /* The job. Written by the caller before it publishes the ticket, read
     * by workers after; atomics so a late reader races with nothing. */
    _Atomic(base_range_fn) fn;
    _Atomic(void *) arg;
    _Atomic int64_t n;
    _Atomic int64_t nb_chunks;
    _Atomic uint64_t ticket; /* epoch << 32 | next chunk */
    _Atomic int64_t done;    /* chunks finished */

    _Atomic int32_t sleepers;
    _Atomic int stop;
    pthread_mutex_t lock;
    pthread_cond_t wake;
};

struct worker_arg {
    base_pool *pool;
    int32_t index;
};

/* The calling thread's pool, its index among the pool's threads, and
 * whether it is inside a loop already (nested calls run serially). */
static _Thread_local base_pool *tls_pool;
static _Thread_local int32_t tls_index;
static _Thread_local int tls_in_loop;

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Chunk i of k over [0, n): the first n % k chunks one longer. */
static void chunk_range(int64_t n, int64_t k, int64_t i, int64_t *begin, int64_t *end)
{
    int64_t q = n / k, r = n % k;
    *begin = i * q + (i < r ? i : r);
    *end = *begin + q + (i < r);
}

/* Runs chunks of the job of `epoch` until none is left to claim. The
 * compare-and-swap succeeds only while the ticket still carries `epoch`,
 * and the job's fields were read after seeing that epoch and before the
 * claim, which the caller cannot pass before this chunk is done: so they
 * are that job's. */
static void claim(base_pool *p, uint32_t epoch)
{
    base_range_fn fn = atomic_load_explicit(&p->fn, memory_order_relaxed);
    void *arg = atomic_load_explicit(&p->arg, memory_order_relaxed);
    int64_t n = atomic_load_explicit(&p->n, memory_order_relaxed);
    int64_t k = atomic_load_explicit(&p->nb_chunks, memory_order_relaxed);
    uint64_t t;
    /* With base_parallel_for's release fence: if any field above is the
     * next job's, the ticket below has left `epoch` (the file's comment). */
    atomic_thread_fence(memory_order_acquire);
    t = atomic_load_explicit(&p->ticket, memory_order_acquire);
    for (;;) {
        int64_t i = (int64_t)(t & CHUNK_MASK), b, e;
        if ((uint32_t)(t >> EPOCH_SHIFT) != epoch || i >= k)
            return;
        if (!atomic_compare_exchange_weak_explicit(
                &p->ticket, &t, t + 1, memory_order_acq_rel, memory_order_acquire))
            continue;
        chunk_range(n, k, i, &b, &e);
        fn(arg, b, e);
        atomic_fetch_add_explicit(&p->done, 1, memory_order_release);
        t = atomic_load_explicit(&p->ticket, memory_order_acquire);
    }
}

static void *worker_main(void *argp)
{
    struct worker_arg *wa = argp;
    base_pool *p = wa->pool;
    uint32_t seen = 0;
    tls_index = wa->index;
    tls_in_loop = 1; /* a range that calls base_parallel_for runs it serially */
    for (;;) {
        uint64_t t = atomic_load_explicit(&p->ticket, memory_order_acquire);
        if ((uint32_t)(t >> EPOCH_SHIFT) == seen) {
            /* Spin, then spin yielding the CPU to whoever else wants it
             * (a library's own threads, another context), then sleep until
             * a job or stop. */
            int64_t start = now_ns(), now = start;
            for (int spins = 1;; spins++) {
                cpu_relax();
                t = atomic_load_explicit(&p->ticket, memory_order_acquire);
                if ((uint32_t)(t >> EPOCH_SHIFT) != seen ||
                    atomic_load_explicit(&p->stop, memory_order_relaxed))
                    break;
                if (spins % 64 == 0)
                    now = now_ns();
                if (now - start > SPIN_PURE_NS)
                    sched_yield();
                if (now - start > SPIN_NS) {
                    pthread_mutex_lock(&p->lock);
                    atomic_fetch_add(&p->sleepers, 1);
                    while ((uint32_t)(atomic_load(&p->ticket) >> EPOCH_SHIFT) == seen &&
                           !atomic_load(&p->stop))
                        pthread_cond_wait(&p->wake, &p->lock);
                    atomic_fetch_sub(&p->sleepers, 1);
                    pthread_mutex_unlock(&p->lock);
                    break;
                }
            }
            if (atomic_load(&p->stop))
                return NULL;
            t = atomic_load_explicit(&p->ticket, memory_order_acquire);
        }
        seen = (uint32_t)(t >> EPOCH_SHIFT);
        claim(p, seen);
    }
}

/* The epoch after ticket t's. */
static uint64_t next_epoch(uint64_t t)
{
    return ((t >> EPOCH_SHIFT) + 1) & CHUNK_MASK;
}

/* Makes the job visible and wakes sleeping workers it can use. */
static void publish(base_pool *p, int64_t k)
{
    uint64_t t = atomic_load_explicit(&p->ticket, memory_order_relaxed);
    uint64_t epoch = next_epoch(t);
    int32_t sleepers;
    /* seq_cst against the sleeper count (the file's comment). */
    atomic_store(&p->ticket, epoch << EPOCH_SHIFT);
    sleepers = atomic_load(&p->sleepers);
    if (sleepers > 0) {
        int64_t want = k - 1 < sleepers ? k - 1 : sleepers;
        pthread_mutex_lock(&p->lock);
        if (want >= sleepers)
            pthread_cond_broadcast(&p->wake);
        else
            for (int64_t i = 0; i < want; i++)
                pthread_cond_signal(&p->wake);
        pthread_mutex_unlock(&p->lock);
    }
}

void base_parallel_for(int64_t n, int64_t grain, base_range_fn fn, void *arg)
{
    base_pool *p = tls_pool;
    int64_t k;
    if (n <= 0)
        return;
    if (grain < 1)
        grain = 1;
    k = n / grain;
    if (p && k > (int64_t)p->threads * CHUNKS_PER_THREAD)
        k = (int64_t)p->threads * CHUNKS_PER_THREAD;
    if (!p || p->threads < 2 || tls_in_loop || k < 2) {
        /* Inside fn, nested loops are serial and a kernel sees one thread,
         * however this loop was run. */
        int was = tls_in_loop;
        tls_in_loop = 1;
        fn(arg, 0, n);
        tls_in_loop = was;
        return;
    }
    /* Close the last job's epoch before writing this job's fields (the
     * file's comment): a new epoch with no chunk to claim. */
    {
        uint64_t t = atomic_load_explicit(&p->ticket, memory_order_relaxed);
        uint64_t closed = next_epoch(t);
        atomic_store(&p->ticket, closed << EPOCH_SHIFT | CHUNK_MASK);
        atomic_thread_fence(memory_order_release);
    }
    atomic_store_explicit(&p->fn, fn, memory_order_relaxed);
    atomic_store_explicit(&p->arg, arg, memory_order_relaxed);
    atomic_store_explicit(&p->n, n, memory_order_relaxed);
    atomic_store_explicit(&p->nb_chunks, k, memory_order_relaxed);
    atomic_store_explicit(&p->done, 0, memory_order_relaxed);
    publish(p, k);
    tls_in_loop = 1;
    claim(p, (uint32_t)(atomic_load_explicit(&p->ticket, memory_order_relaxed) >>
                        EPOCH_SHIFT));
    tls_in_loop = 0;
    /* The last chunks are running elsewhere: wait, yielding the CPU when
     * it takes long (their thread may be waiting for it). */
    for (int spins = 0; atomic_load_explicit(&p->done, memory_order_acquire) < k;
         spins++) {
        if (spins < 4096)
            cpu_relax();
        else
            sched_yield();
    }
}

int32_t base_parallel_threads(void)
{
    return tls_pool && !tls_in_loop ? tls_pool->threads : 1;
}

int32_t base_parallel_thread_index(void)
{
    return tls_index;
}

base_pool *base_parallel_set_current(base_pool *pool)
{
    base_pool *old = tls_pool;
    tls_pool = pool;
    return old;
}

prt_status base_pool_create(int32_t threads, base_pool **out)
{
    base_pool *p;
    pthread_attr_t attr;
    int attr_ok;
    if (threads < 1 || threads > BASE_MAX_THREADS)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "thread count %d is not in 1..%d",
                          (int)threads, BASE_MAX_THREADS);
    p = base_calloc(1, sizeof *p);
    if (!p)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory for a thread pool");
    p->threads = 1;
    if (threads > 1) {
        p->tids = base_calloc((size_t)threads, sizeof *p->tids);
        p->args = base_calloc((size_t)threads, sizeof *p->args);
        if (!p->tids || !p->args) {
            base_free(p->tids);
            base_free(p->args);
            base_free(p);
            return base_error(PRT_ERR_OUT_OF_MEMORY,
                              "out of memory for a pool of %d threads", (int)threads);
        }
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    /* Workers run kernels' ranges, which need little stack; a small one
     * keeps many contexts' pools within an address-space limit. */
    attr_ok = pthread_attr_init(&attr) == 0;
    if (attr_ok)
        pthread_attr_setstacksize(&attr, (size_t)2 << 20);
    for (int32_t i = 1; i < threads; i++) {
        int err;
        p->args[i].pool = p;
        p->args[i].index = i;
        err =
            pthread_create(&p->tids[i], attr_ok ? &attr : NULL, worker_main, &p->args[i]);
        if (err) {
            base_log(PRT_SEV_WARNING,
                     "thread pool: worker %d of %d did not start (%s); running with %d "
                     "thread(s)",
                     (int)i, (int)threads - 1, strerror(err), (int)i);
            break;
        }
        p->started++;
    }
    if (attr_ok)
        pthread_attr_destroy(&attr);
    p->threads = p->started + 1;
    *out = p;
    return PRT_OK;
}

void base_pool_destroy(base_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    atomic_store(&p->stop, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int32_t i = 1; i <= p->started; i++)
        pthread_join(p->tids[i], NULL);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    base_free(p->tids);
    base_free(p->args);
    base_free(p);
}

int32_t base_pool_threads(const base_pool *p)
{
    return p ? p->threads : 1;
}

/* ---- the default count ----------------------------------------------------- */

/* The cgroup's CPU quota rounded up, or 0 when there is none (or no
 * cgroup file to read). v2: "cpu.max" holds "QUOTA PERIOD" or "max PERIOD";
 * v1: cpu.cfs_quota_us (-1 for none) and cpu.cfs_period_us. */
static int32_t cgroup_cpus(void)
{
    long long quota = -1, period = 0;
    char word[32];
    FILE *f = fopen("/sys/fs/cgroup/cpu.max", "r");
    if (f) {
        if (fscanf(f, "%31s %lld", word, &period) == 2 && strcmp(word, "max") != 0)
            quota = strtoll(word, NULL, 10);
        fclose(f);
    } else if ((f = fopen("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "r"))) {
        if (fscanf(f, "%lld", &quota) != 1)
            quota = -1;
        fclose(f);
        if ((f = fopen("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "r"))) {
            if (fscanf(f, "%lld", &period) != 1)
                period = 0;
            fclose(f);
        }
    }
    if (quota <= 0 || period <= 0)
        return 0;
    quota = (quota + period - 1) / period;
    return quota > BASE_MAX_THREADS ? BASE_MAX_THREADS : (int32_t)quota;
}

static int32_t cpu_count;
static pthread_once_t cpu_count_once = PTHREAD_ONCE_INIT;

static void count_cpus(void)
{
    cpu_set_t set;
    int32_t n = 0, q;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        n = CPU_COUNT(&set);
    if (n < 1) {
        long s = sysconf(_SC_NPROCESSORS_ONLN);
        n = s > 0 ? (int32_t)(s > BASE_MAX_THREADS ? BASE_MAX_THREADS : s) : 1;
    }
    q = cgroup_cpus();
    if (q > 0 && q < n)
        n = q;
    cpu_count = n > BASE_MAX_THREADS ? BASE_MAX_THREADS : n;
}

int32_t base_cpu_count(void)
{
    pthread_once(&cpu_count_once, count_cpus);
    return cpu_count;
}
