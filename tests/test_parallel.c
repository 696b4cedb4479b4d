/*
 * Intra-op threads and the per-layer profiler:
 *  - the pool behind base_parallel_for: every index covered exactly once,
 *    ranges at least `grain` long (but the last), n = 0, grain > n, grain
 *    <= 0, nested calls serial, thread indices in range and never shared by
 *    two ranges at once, the workers taking part, sleeping workers woken,
 *    back-to-back jobs never mixed up by a late worker,
 *    no pool installed, many pools used from many threads at once;
 *  - contexts: the threads option (default, bounds, a caller's older
 *    struct), prt_context_get_threads, the builder's thread count;
 *  - plugins: prt_host_services.parallel_for from a plugin library
 *    (tests/libs/testlib_parallel.c) runs on the context's threads, and
 *    serially outside a run; contexts with pools of their own on several
 *    threads at once; MatMul's constant B packed once and shared by
 *    contexts made, run and destroyed on several threads at once;
 *  - the profiler: every layer reported once per run, in order, with the
 *    engine's layer names; a failed run reports the layers before the
 *    failure; removing it stops the reports;
 *  - the built-in ops that use threads give the same bits on 1, 2, 3 and 4
 *    threads; Relu keeps NaN and -0.
 * scripts/test.sh runs this test under ThreadSanitizer as well.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/parallel.h"
#include "op_testutil.h"

/* ---- the pool ------------------------------------------------------------------ */

#define MAX_T 8

typedef struct cover {
    _Atomic int *hits;
    int64_t n, grain;
    int32_t threads;
    _Atomic int ranges, short_ranges, bad_bounds, bad_index, overlap, nested_bad;
    _Atomic int busy[MAX_T];
    _Atomic uint32_t seen; /* bit i: thread index i ran a range */
    int wait_for_other;    /* thread 0's first range waits for another's */
    int nest;              /* each range runs a nested loop */
} cover;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

typedef struct nested {
    int64_t m;
    _Atomic int calls;
    _Atomic int bad;
} nested;

static void nested_fn(void *arg, int64_t b, int64_t e)
{
    nested *ns = arg;
    ns->calls++;
    if (b != 0 || e != ns->m)
        ns->bad++;
}

static void cover_fn(void *arg, int64_t b, int64_t e)
{
    cover *c = arg;
    int32_t idx = base_parallel_thread_index();
    c->ranges++;
    if (b < 0 || e > c->n || b >= e) {
        c->bad_bounds++;
        return;
    }
    if (e - b < c->grain && e != c->n)
        c->short_ranges++;
    if (idx < 0 || idx >= c->threads || idx >= MAX_T) {
        c->bad_index++;
        return;
    }
    if (atomic_exchange(&c->busy[idx], 1))
        c->overlap++;
    atomic_fetch_or(&c->seen, 1u << idx);
    if (c->wait_for_other && idx == 0)
        for (int k = 0; k < 10000 && atomic_load(&c->seen) == 1u; k++)
            sleep_ms(1);
    for (int64_t i = b; i < e; i++)
        c->hits[i]++;
    if (c->nest) {
        /* A nested loop runs serially, on this thread. */
        nested ns = {17, 0, 0};
        if (base_parallel_threads() != 1)
            c->nested_bad++;
        base_parallel_for(ns.m, 1, nested_fn, &ns);
        if (ns.calls != 1 || ns.bad || base_parallel_thread_index() != idx)
            c->nested_bad++;
    }
    atomic_store(&c->busy[idx], 0);
}

/* One loop over [0, n) with the calling thread's pool; checks coverage. */
static void run_cover(int32_t threads, int64_t n, int64_t grain, int nest)
{
    cover c;
    int bad = 0;
    memset(&c, 0, sizeof c);
    c.hits = calloc((size_t)(n > 0 ? n : 1), sizeof *c.hits);
    c.n = n;
    c.grain = grain < 1 ? 1 : grain;
    c.threads = threads;
    c.nest = nest;
    if (!c.hits) {
        CHECK(!"out of memory");
        return;
    }
    base_parallel_for(n, grain, cover_fn, &c);
    for (int64_t i = 0; i < n; i++)
        bad += c.hits[i] != 1;
    CHECK(bad == 0);
    CHECK(c.bad_bounds == 0);
    CHECK(c.bad_index == 0);
    CHECK(c.overlap == 0);
    CHECK(c.nested_bad == 0);
    CHECK(c.short_ranges == 0);
    if (n == 0)
        CHECK(c.ranges == 0);
    /* One call when the loop cannot be split: n <= grain, or one thread. */
    if (n > 0 && (n <= c.grain || threads == 1))
        CHECK(c.ranges == 1 && c.seen == 1u);
    if (bad || c.short_ranges)
        fprintf(stderr, "  threads %d n %lld grain %lld: %d wrong, %d short of %d\n",
                (int)threads, (long long)n, (long long)grain, bad, (int)c.short_ranges,
                (int)c.ranges);
    free(c.hits);
}

static void test_pool_coverage(void)
{
    static const int64_t ns[] = {0, 1, 2, 3, 7, 64, 1000, 100003};
    static const int64_t grains[] = {-5, 0, 1, 3, 64, 999};
    static const int32_t threads[] = {1, 2, 3, 5};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        base_pool *pool = NULL, *old;
        CHECK_OK(base_pool_create(threads[t], &pool));
        if (!pool)
            continue;
        CHECK(base_pool_threads(pool) == threads[t]);
        old = base_parallel_set_current(pool);
        CHECK(old == NULL);
        CHECK(base_parallel_threads() == threads[t]);
        CHECK(base_parallel_thread_index() == 0);
        for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
            for (size_t g = 0; g < sizeof grains / sizeof grains[0]; g++)
                run_cover(threads[t], ns[i], grains[g], 0);
            run_cover(threads[t], ns[i], ns[i], 0);     /* grain == n */
            run_cover(threads[t], ns[i], ns[i] + 1, 0); /* grain > n */
            run_cover(threads[t], ns[i], 1, 1);         /* nested loops */
        }
        CHECK(base_parallel_set_current(old) == pool);
        CHECK(base_parallel_threads() == 1);
        base_pool_destroy(pool);
    }
    /* No pool: the calling thread alone, one call. */
    run_cover(1, 1000, 1, 0);
    base_pool_destroy(NULL);
    CHECK(base_pool_threads(NULL) == 1);
    CHECK_ERR(base_pool_create(0, &(base_pool *){NULL}), PRT_ERR_INVALID_ARGUMENT, "0");
    CHECK_ERR(base_pool_create(BASE_MAX_THREADS + 1, &(base_pool *){NULL}),
              PRT_ERR_INVALID_ARGUMENT, NULL);
}

/* The workers take part (thread 0 waits until another thread runs a
 * range), also after they went to sleep; more threads than CPUs work. */
/* Back-to-back jobs of different chunk counts, functions and arguments: a
 * worker that saw one job's epoch and read the fields late must never run
 * a chunk of the next job's fields under the old epoch (which, before the
 * ticket was closed first, ran a chunk with the wrong job's argument and
 * counted it done in the next job, so that job returned with ranges still
 * running: about 250 bad indices and a few wrong-job calls in 100,000
 * pairs on two cores). More threads than cores, so workers are
 * descheduled inside that window. */
typedef struct seq_job {
    int magic;
    int64_t n;
    _Atomic int *hits;
    _Atomic int *wrong;
} seq_job;

static void seq_fn(seq_job *j, int magic, int64_t b, int64_t e)
{
    if (j->magic != magic || b < 0 || e > j->n) {
        atomic_fetch_add(j->wrong, 1);
        return;
    }
    for (int64_t i = b; i < e; i++)
        atomic_fetch_add(&j->hits[i], 1);
}

static void seq_fn_a(void *arg, int64_t b, int64_t e)
{
    seq_fn(arg, 0xA, b, e);
}

static void seq_fn_b(void *arg, int64_t b, int64_t e)
{
    seq_fn(arg, 0xB, b, e);
}

static void test_pool_consecutive_jobs(void)
{
    static const int32_t threads[] = {2, 3, 8};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        static _Atomic int ha[2], hb[64];
        _Atomic int wrong = 0;
        seq_job a = {0xA, 2, ha, &wrong}, b = {0xB, 64, hb, &wrong};
        long bad = 0;
        base_pool *pool = NULL;
        CHECK_OK(base_pool_create(threads[t], &pool));
        if (!pool)
            continue;
        base_parallel_set_current(pool);
        for (int it = 0; it < 30000; it++) {
            for (int i = 0; i < 2; i++)
                atomic_store(&ha[i], 0);
            base_parallel_for(2, 1, seq_fn_a, &a);
            for (int i = 0; i < 2; i++)
                bad += atomic_load(&ha[i]) != 1;
            for (int i = 0; i < 64; i++)
                atomic_store(&hb[i], 0);
            base_parallel_for(64, 1, seq_fn_b, &b);
            for (int i = 0; i < 64; i++)
                bad += atomic_load(&hb[i]) != 1;
        }
        base_parallel_set_current(NULL);
        base_pool_destroy(pool);
        CHECK(bad == 0);
        CHECK(atomic_load(&wrong) == 0);
    }
}

static void test_pool_workers(void)
{
    for (int32_t threads = 2; threads <= 6; threads += 4) {
        base_pool *pool = NULL;
        CHECK_OK(base_pool_create(threads, &pool));
        if (!pool)
            continue;
        base_parallel_set_current(pool);
        for (int round = 0; round < 3; round++) {
            cover c;
            memset(&c, 0, sizeof c);
            c.hits = calloc(4096, sizeof *c.hits);
            c.n = 4096;
            c.grain = 16;
            c.threads = threads;
            c.wait_for_other = 1;
            if (!c.hits)
                break;
            base_parallel_for(c.n, c.grain, cover_fn, &c);
            CHECK((c.seen & ~1u) != 0); /* a worker ran a range */
            CHECK((c.seen >> threads) == 0);
            for (int64_t i = 0; i < c.n; i++)
                CHECK(c.hits[i] == 1);
            free(c.hits);
            /* Longer than workers spin: they sleep, and the next loop wakes
             * them. */
            sleep_ms(5);
        }
        base_parallel_set_current(NULL);
        base_pool_destroy(pool);
    }
    CHECK(base_cpu_count() >= 1 && base_cpu_count() <= BASE_MAX_THREADS);
    CHECK(prt_default_thread_count() == base_cpu_count());
}

/* Sums over blocks of 100 elements, each block's partial sum kept apart and
 * the partials added in block order after the loop: the determinism rule of
 * parallel.h, so every thread count gives the same bits. */
typedef struct block_sum {
    const float *x;
    int64_t n;
    double *partial;
} block_sum;

static void block_sum_fn(void *arg, int64_t b, int64_t e)
{
    block_sum *s = arg;
    for (int64_t blk = b; blk < e; blk++) {
        double acc = 0;
        for (int64_t i = blk * 100; i < (blk + 1) * 100 && i < s->n; i++)
            acc += s->x[i];
        s->partial[blk] = acc;
    }
}

static double sum_with(const float *x, int64_t n, double *partial)
{
    block_sum s = {x, n, partial};
    int64_t blocks = (n + 99) / 100;
    double total = 0;
    base_parallel_for(blocks, 2, block_sum_fn, &s);
    for (int64_t b = 0; b < blocks; b++)
        total += partial[b];
    return total;
}

typedef struct pool_user {
    int32_t threads;
    int failures;
    double want;
    const float *x;
    int64_t n;
} pool_user;

static void *pool_user_main(void *arg)
{
    pool_user *u = arg;
    base_pool *pool = NULL;
    double *partial = malloc(sizeof(double) * (size_t)((u->n + 99) / 100));
    if (!partial || base_pool_create(u->threads, &pool) != PRT_OK) {
        u->failures++;
        free(partial);
        return NULL;
    }
    base_parallel_set_current(pool);
    for (int it = 0; it < 200; it++)
        if (sum_with(u->x, u->n, partial) != u->want)
            u->failures++;
    base_parallel_set_current(NULL);
    base_pool_destroy(pool);
    free(partial);
    return NULL;
}

/* Many threads, each with a pool of its own, at once (TSan checks the
 * hand-offs); results equal the one-thread sum bit for bit. */
static void test_pools_concurrently(void)
{
    enum { USERS = 4, N = 20011 };
    float *x = malloc(sizeof(float) * N);
    double *partial = malloc(sizeof(double) * ((N + 99) / 100));
    pthread_t tid[USERS];
    pool_user users[USERS];
    tu_rng r;
    double want;
    if (!x || !partial) {
        CHECK(!"out of memory");
        free(x);
        free(partial);
        return;
    }
    tu_rng_seed(&r, 7);
    for (int i = 0; i < N; i++)
        x[i] = (float)(tu_rng_uniform(&r) * 2 - 1);
    want = sum_with(x, N, partial); /* no pool: one thread */
    for (int t = 0; t < USERS; t++) {
        users[t] = (pool_user){2 + t % 3, 0, want, x, N};
        CHECK(pthread_create(&tid[t], NULL, pool_user_main, &users[t]) == 0);
    }
    for (int t = 0; t < USERS; t++) {
        pthread_join(tid[t], NULL);
        CHECK(users[t].failures == 0);
    }
    free(x);
    free(partial);
}

/* ---- contexts and the builder ------------------------------------------------ */

/* X (float32 [rows, cols]) -> op -> Y, for the context tests. */
static prt_engine *relu_engine(int64_t rows, int64_t cols)
{
    ot_tensor x = ot_make(PRT_FLOAT32, D2(rows, cols));
    prt_engine *e = NULL;
    if (!x.data || ot_build_op("Relu", NULL, 0, &x, 1, NULL, &e) != PRT_OK)
        CHECK(!"building a Relu engine");
    ot_free(&x);
    return e;
}

static void test_context_threads(void)
{
    prt_engine *e = relu_engine(2, 3);
    prt_context *ctx = NULL;
    prt_context_options opt = {.struct_size = sizeof opt};
    prt_builder_config *cfg = NULL;
    if (!e)
        return;
    /* Default: the CPUs this process may use. */
    CHECK_OK(prt_context_create(e, &ctx));
    CHECK(prt_context_get_threads(ctx) == prt_default_thread_count());
    prt_context_destroy(ctx);
    for (int32_t n = 1; n <= 4; n++) {
        opt.threads = n;
        ctx = NULL;
        CHECK_OK(prt_context_create_with_options(e, &opt, &ctx));
        CHECK(prt_context_get_threads(ctx) == n);
        prt_context_destroy(ctx);
    }
    opt.threads = -1;
    CHECK_ERR(prt_context_create_with_options(e, &opt, &ctx), PRT_ERR_INVALID_ARGUMENT,
              "threads is -1");
    opt.threads = BASE_MAX_THREADS + 1;
    CHECK_ERR(prt_context_create_with_options(e, &opt, &ctx), PRT_ERR_INVALID_ARGUMENT,
              "threads");
    /* A caller built before `threads` existed: its struct ends before it,
     * and whatever follows is not read. */
    opt.threads = -7;
    opt.struct_size = (uint32_t)(offsetof(prt_context_options, external_memory) +
                                 sizeof opt.external_memory);
    ctx = NULL;
    CHECK_OK(prt_context_create_with_options(e, &opt, &ctx));
    CHECK(prt_context_get_threads(ctx) == prt_default_thread_count());
    prt_context_destroy(ctx);
    CHECK(prt_context_get_threads(NULL) == 0);
    CHECK_ERR(prt_context_set_profiler(NULL, NULL, NULL), PRT_ERR_INVALID_ARGUMENT, NULL);

    CHECK_OK(prt_builder_config_create(&cfg));
    CHECK_OK(prt_builder_config_set_threads(cfg, 0));
    CHECK_OK(prt_builder_config_set_threads(cfg, 3));
    CHECK_ERR(prt_builder_config_set_threads(cfg, -1), PRT_ERR_INVALID_ARGUMENT, "-1");
    CHECK_ERR(prt_builder_config_set_threads(NULL, 1), PRT_ERR_INVALID_ARGUMENT, NULL);
    prt_builder_config_destroy(cfg);
    prt_engine_destroy(e);
}

/* ---- a plugin on the host's threads ------------------------------------------- */

#define PAR_LIB PRT_TESTLIB_DIR "/testlib_parallel.so"

typedef struct par_engine {
    prt_registry *reg;
    prt_engine *engine;
    int64_t n;
} par_engine;

/* X [rows, 1024] -> test::ParallelScale(wait) -> Y, Info. */
static int par_build(par_engine *pe, int64_t rows, int32_t wait)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_plugin *p = NULL;
    prt_field f = ot_fld_i32("wait", &wait, 1);
    prt_dims d = D2(rows, 1024);
    int32_t x, layer, y, info;
    memset(pe, 0, sizeof *pe);
    pe->n = rows * 1024;
    REQUIRE_OK(prt_registry_create(&pe->reg));
    REQUIRE_OK(prt_registry_load_library(pe->reg, PAR_LIB));
    REQUIRE((p = tu_make_plugin(pe->reg, "test", "ParallelScale", "1", &f, 1)) != NULL);
    REQUIRE_OK(prt_network_create(&net));
    REQUIRE_OK(prt_network_add_input(net, "X", PRT_FLOAT32, &d, &x));
    if (prt_network_add_plugin(net, &x, 1, NULL, 0, p, &layer) != PRT_OK) {
        CHECK(!"add_plugin");
        p->vt->runtime->destroy(p);
        prt_network_destroy(net);
        return 1;
    }
    CHECK_OK(prt_network_get_layer_output(net, layer, 0, &y));
    CHECK_OK(prt_network_get_layer_output(net, layer, 1, &info));
    CHECK_OK(prt_network_set_tensor_name(net, y, "Y"));
    CHECK_OK(prt_network_set_tensor_name(net, info, "Info"));
    CHECK_OK(prt_network_mark_output(net, y));
    CHECK_OK(prt_network_mark_output(net, info));
    CHECK_OK(prt_builder_config_create(&cfg));
    CHECK_OK(prt_engine_build(net, cfg, pe->reg, &pe->engine));
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return pe->engine ? 0 : 1;
}

static void par_free(par_engine *pe)
{
    prt_engine_destroy(pe->engine);
    prt_registry_destroy(pe->reg);
}

/* One run on a context of `threads`: Y checked, Info returned. */
static int par_run(const par_engine *pe, int32_t threads, int32_t info[3])
{
    prt_context_options opt = {.struct_size = sizeof opt, .threads = threads};
    prt_context *ctx = NULL;
    float *x = malloc(sizeof(float) * (size_t)pe->n);
    float *y = malloc(sizeof(float) * (size_t)pe->n);
    int bad = 0, rc = 1;
    if (!x || !y)
        goto done;
    for (int64_t i = 0; i < pe->n; i++)
        x[i] = (float)(i % 1000) - 500.0f;
    if (prt_context_create_with_options(pe->engine, &opt, &ctx) != PRT_OK ||
        prt_context_set_tensor_address(ctx, "X", x) != PRT_OK ||
        prt_context_set_tensor_address(ctx, "Y", y) != PRT_OK ||
        prt_context_set_tensor_address(ctx, "Info", info) != PRT_OK ||
        prt_context_enqueue(ctx, NULL) != PRT_OK)
        goto done;
    for (int64_t i = 0; i < pe->n; i++)
        bad += y[i] != 2.0f * x[i];
    rc = bad != 0;
done:
    prt_context_destroy(ctx);
    free(x);
    free(y);
    return rc;
}

static void plain_range(void *arg, int64_t b, int64_t e)
{
    int64_t *calls = arg;
    calls[0]++;
    calls[1] = b;
    calls[2] = e;
}

static void test_host_parallel_for(void)
{
    const prt_host_services *hs = prt_host_services_get();
    par_engine pe;
    int32_t info[3];
    int64_t calls[3] = {0, -1, -1};
    /* The entries are there, and outside a run there is one thread. */
    CHECK(hs->struct_size == sizeof *hs && hs->parallel_for && hs->nb_threads &&
          hs->thread_index);
    CHECK(hs->nb_threads(hs->host) == 1 && hs->thread_index(hs->host) == 0);
    hs->parallel_for(hs->host, 100000, 1, plain_range, calls);
    CHECK(calls[0] == 1 && calls[1] == 0 && calls[2] == 100000);
    hs->parallel_for(hs->host, 10, 1, NULL, NULL); /* no function: nothing */

    if (par_build(&pe, 64, 1) != 0) {
        par_free(&pe);
        return;
    }
    /* One thread: one range, on the calling thread. */
    memset(info, 0, sizeof info);
    CHECK(par_run(&pe, 1, info) == 0);
    CHECK(info[0] == 1 && info[1] == 1 && info[2] == 1);
    /* Two and three: the plugin sees them, and its ranges run on more than
     * one (it waits for a worker), covering X once in ranges of its grain. */
    for (int32_t t = 2; t <= 3; t++) {
        memset(info, 0, sizeof info);
        CHECK(par_run(&pe, t, info) == 0);
        CHECK(info[0] == t && info[1] >= 2 && info[1] <= t && info[2] == 1);
    }
    par_free(&pe);
}

/* ---- contexts with pools on several threads at once ------------------------- */

typedef struct par_user {
    const par_engine *pe;
    int failures;
} par_user;

static void *par_user_main(void *arg)
{
    par_user *u = arg;
    for (int it = 0; it < 20; it++) {
        int32_t info[3] = {0, 0, 0};
        if (par_run(u->pe, 2, info) != 0 || info[0] != 2 || info[2] != 1)
            u->failures++;
    }
    return NULL;
}

static void test_contexts_concurrently(void)
{
    enum { USERS = 3 };
    par_engine pe;
    pthread_t tid[USERS];
    par_user users[USERS];
    if (par_build(&pe, 16, 0) != 0) {
        par_free(&pe);
        return;
    }
    for (int t = 0; t < USERS; t++) {
        users[t] = (par_user){&pe, 0};
        CHECK(pthread_create(&tid[t], NULL, par_user_main, &users[t]) == 0);
    }
    for (int t = 0; t < USERS; t++) {
        pthread_join(tid[t], NULL);
        CHECK(users[t].failures == 0);
    }
    par_free(&pe);
}

/* ---- MatMul's constant B, shared by contexts ------------------------------------ */

/* A constant B is packed once per engine and shared, read-only and counted,
 * by every context's MatMul object (op_const, op_common.h): contexts made,
 * run and destroyed on several threads at once, each with two threads of
 * its own, give the bytes of B given at run time. */
typedef struct mmc_user {
    const prt_engine *e;
    const ot_tensor *in, *want;
    int failures;
} mmc_user;

static void *mmc_user_main(void *arg)
{
    mmc_user *u = arg;
    for (int it = 0; it < 5; it++) {
        ot_tensor got = {0};
        if (ot_run_engine_const(u->e, u->in, 3, 6u, 2, &got) != PRT_OK ||
            memcmp(got.data, u->want->data,
                   (size_t)tu_volume(&u->want->dims) * sizeof(float)) != 0)
            u->failures++;
        ot_free(&got);
    }
    return NULL;
}

static void test_matmul_const_contexts(void)
{
    enum { USERS = 3 };
    ot_tensor in[3], want = {0};
    prt_engine *e_rt = NULL, *e_c = NULL;
    prt_context *held = NULL;
    pthread_t tid[USERS];
    mmc_user users[USERS];
    tu_rng r;
    tu_rng_seed(&r, 7);
    in[0] = ot_random(PRT_FLOAT32, D3(8, 32, 128), &r, 0);
    in[1] = ot_random(PRT_FLOAT32, D2(128, 512), &r, 0);
    in[2] = ot_random(PRT_FLOAT32, D1(512), &r, 0);
    CHECK_OK(ot_build_op("MatMul", NULL, 0, in, 3, NULL, &e_rt));
    CHECK_OK(ot_build_op_const("MatMul", NULL, 0, in, 3, 6u, &e_c));
    if (e_rt)
        CHECK_OK(ot_run_engine_threads(e_rt, in, 3, 1, &want));
    /* One context lives through the others and ends last but for the
     * engine. */
    if (e_c)
        CHECK_OK(prt_context_create(e_c, &held));
    for (int t = 0; want.data && e_c && t < USERS; t++) {
        users[t] = (mmc_user){e_c, in, &want, 0};
        CHECK(pthread_create(&tid[t], NULL, mmc_user_main, &users[t]) == 0);
    }
    for (int t = 0; want.data && e_c && t < USERS; t++) {
        pthread_join(tid[t], NULL);
        CHECK(users[t].failures == 0);
    }
    prt_context_destroy(held);
    ot_free(&want);
    prt_engine_destroy(e_rt);
    prt_engine_destroy(e_c);
    for (int k = 0; k < 3; k++)
        ot_free(&in[k]);
}

/* ---- the profiler ---------------------------------------------------------------- */

typedef struct prof_log {
    int32_t n;
    int32_t layer[64];
    char name[64][32];
    int64_t ns[64];
} prof_log;

static void prof_record(void *user, int32_t layer, const char *layer_name,
                        int64_t elapsed_ns)
{
    prof_log *l = user;
    if (l->n >= 64)
        return;
    l->layer[l->n] = layer;
    snprintf(l->name[l->n], sizeof l->name[0], "%s", layer_name ? layer_name : "(null)");
    l->ns[l->n] = elapsed_ns;
    l->n++;
}

/* X, Z (int32 [4]) -> "first" Relu -> "second" Div by Z -> "third" Neg -> Y. */
static prt_engine *three_layers(void)
{
    static const char *const ops[3] = {"Relu", "Div", "Neg"};
    static const char *const names[3] = {"first", "second", "third"};
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL;
    prt_dims d = D1(4);
    int32_t x, z, t;
    if (prt_network_create(&net) || prt_network_add_input(net, "X", PRT_INT32, &d, &x) ||
        prt_network_add_input(net, "Z", PRT_INT32, &d, &z)) {
        CHECK(!"network");
        prt_network_destroy(net);
        return NULL;
    }
    t = x;
    for (int i = 0; i < 3; i++) {
        prt_plugin *p = NULL;
        int32_t in[2] = {t, z}, layer;
        if (ot_make_op(ops[i], NULL, 0, &p) != PRT_OK ||
            prt_network_add_plugin(net, in, i == 1 ? 2 : 1, NULL, 0, p, &layer) !=
                PRT_OK) {
            CHECK(!"layer");
            if (p)
                p->vt->runtime->destroy(p);
            prt_network_destroy(net);
            return NULL;
        }
        CHECK_OK(prt_network_set_layer_name(net, layer, names[i]));
        CHECK_OK(prt_network_get_layer_output(net, layer, 0, &t));
    }
    CHECK_OK(prt_network_set_tensor_name(net, t, "Y"));
    CHECK_OK(prt_network_mark_output(net, t));
    CHECK_OK(prt_builder_config_create(&cfg));
    CHECK_OK(prt_engine_build(net, cfg, NULL, &e));
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return e;
}

static void test_profiler(void)
{
    prt_engine *e = three_layers();
    prt_context *ctx = NULL;
    prof_log log;
    int32_t x[4] = {-3, 4, 9, -1}, z[4] = {1, 2, 3, 4}, y[4];
    if (!e)
        return;
    memset(&log, 0, sizeof log);
    CHECK_OK(prt_context_create(e, &ctx));
    CHECK_OK(prt_context_set_tensor_address(ctx, "X", x));
    CHECK_OK(prt_context_set_tensor_address(ctx, "Z", z));
    CHECK_OK(prt_context_set_tensor_address(ctx, "Y", y));
    /* Without a profiler nothing is reported. */
    CHECK_OK(prt_context_enqueue(ctx, NULL));
    CHECK_OK(prt_context_set_profiler(ctx, prof_record, &log));
    for (int run = 0; run < 3; run++)
        CHECK_OK(prt_context_enqueue(ctx, NULL));
    CHECK(y[0] == 0 && y[1] == -2 && y[2] == -3 && y[3] == 0);
    /* Every layer once per run, in order, by the engine's names. */
    CHECK(log.n == 9);
    for (int32_t i = 0; i < log.n && i < 9; i++) {
        prt_layer_info li = {.struct_size = sizeof li};
        CHECK(log.layer[i] == i % 3);
        CHECK_OK(prt_engine_get_layer(e, log.layer[i], &li));
        CHECK(li.name && strcmp(li.name, log.name[i]) == 0);
        CHECK(log.ns[i] >= 0);
    }
    CHECK(strcmp(log.name[0], "first") == 0 && strcmp(log.name[2], "third") == 0);
    /* A run that fails in layer 1 (division by zero) reports layer 0. */
    log.n = 0;
    z[2] = 0;
    CHECK_ERR(prt_context_enqueue(ctx, NULL), PRT_ERR_INVALID_ARGUMENT, "second");
    CHECK(log.n == 1 && log.layer[0] == 0);
    /* Removed: no more reports. */
    z[2] = 3;
    log.n = 0;
    CHECK_OK(prt_context_set_profiler(ctx, NULL, NULL));
    CHECK_OK(prt_context_enqueue(ctx, NULL));
    CHECK(log.n == 0);
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
}

/* ---- built-in ops: the same bits on any number of threads ------------------------ */

typedef struct op_case {
    const char *op;
    int32_t dtype;
    prt_dims dims[3];
    int32_t nb_in;
    prt_field fields[4];
    int32_t nb_fields;
} op_case;

static void check_thread_counts(const op_case *c)
{
    ot_tensor in[3], ref = {0};
    prt_engine *e = NULL;
    tu_rng r;
    memset(in, 0, sizeof in);
    tu_rng_seed(&r, 42);
    for (int32_t i = 0; i < c->nb_in; i++)
        in[i] = ot_random(c->dtype, c->dims[i], &r, 1);
    if (ot_build_op(c->op, c->fields, c->nb_fields, in, c->nb_in, NULL, &e) != PRT_OK ||
        ot_run_engine_threads(e, in, c->nb_in, 1, &ref) != PRT_OK) {
        fprintf(stderr, "  %s: %s\n", c->op, prt_last_error());
        CHECK(!"the op runs on one thread");
    } else {
        size_t bytes = (size_t)tu_volume(&ref.dims) * prt_dtype_size(ref.dtype);
        for (int32_t t = 2; t <= 4; t++) {
            ot_tensor got = {0};
            CHECK_OK(ot_run_engine_threads(e, in, c->nb_in, t, &got));
            CHECK(got.data && ot_dims_eq(&got.dims, &ref.dims) &&
                  memcmp(got.data, ref.data, bytes) == 0);
            if (got.data && memcmp(got.data, ref.data, bytes) != 0)
                fprintf(stderr, "  %s (%s): %d threads differ from 1\n", c->op,
                        prt_dtype_name(c->dtype), (int)t);
            ot_free(&got);
        }
    }
    ot_free(&ref);
    for (int32_t i = 0; i < c->nb_in; i++)
        ot_free(&in[i]);
    prt_engine_destroy(e);
}

static void test_ops_thread_counts(void)
{
    static const int32_t axis1 = 1, k3[2] = {3, 3}, s2[2] = {2, 2}, p1[4] = {1, 1, 1, 1};
    static const int32_t p2[4] = {2, 2, 2, 2}, g72 = 72, g4 = 4, g240 = 240, one = 1;
    static const int32_t last = -1;
    const op_case cases[] = {
        {"Relu", PRT_FLOAT32, {D2(4, 50001)}, 1, {{0}}, 0},
        {"Relu", PRT_FLOAT16, {D2(4, 50001)}, 1, {{0}}, 0},
        {"Abs", PRT_INT32, {D2(3, 40000)}, 1, {{0}}, 0},
        {"Erf", PRT_FLOAT32, {D3(8, 32, 512)}, 1, {{0}}, 0},
        {"Tanh", PRT_BFLOAT16, {D2(64, 1000)}, 1, {{0}}, 0},
        {"HardSwish", PRT_FLOAT32, {D4(2, 16, 112, 112)}, 1, {{0}}, 0},
        {"Sigmoid", PRT_FLOAT32, {D4(2, 16, 112, 112)}, 1, {{0}}, 0},
        {"Add", PRT_FLOAT32, {D3(8, 32, 512), D1(512)}, 2, {{0}}, 0},
        {"Add", PRT_FLOAT16, {D3(8, 32, 512), D3(8, 32, 512)}, 2, {{0}}, 0},
        {"Mul", PRT_FLOAT32, {D4(8, 24, 56, 56), D4(8, 24, 1, 1)}, 2, {{0}}, 0},
        {"Div", PRT_FLOAT32, {D3(8, 32, 512), D0()}, 2, {{0}}, 0},
        {"Sub", PRT_FLOAT32, {D3(7, 1, 3001), D2(5, 1)}, 2, {{0}}, 0},
        {"Max", PRT_FLOAT32, {D2(300, 301), D2(300, 301), D1(301)}, 3, {{0}}, 0},
        {"Softmax", PRT_FLOAT32, {D3(8, 128, 129)}, 1, {{0}}, 0},
        {"Softmax",
         PRT_FLOAT32,
         {D3(16, 300, 20)},
         1,
         {ot_fld_i32("axis", &axis1, 1)},
         1},
        {"LogSoftmax", PRT_FLOAT16, {D2(1000, 70)}, 1, {ot_fld_i32("axis", &last, 1)}, 1},
        {"LayerNormalization",
         PRT_FLOAT32,
         {D3(8, 64, 256), D1(256), D1(256)},
         3,
         {{0}},
         0},
        {"GlobalAveragePool", PRT_FLOAT32, {D4(8, 64, 28, 28)}, 1, {{0}}, 0},
        {"MaxPool",
         PRT_FLOAT32,
         {D4(4, 16, 57, 57)},
         1,
         {ot_fld_i32("kernel_shape", k3, 2), ot_fld_i32("strides", s2, 2)},
         2},
        /* Conv by each of its paths (conv.c), some with a fused activation. */
        {"Conv",
         PRT_FLOAT32,
         {D4(2, 32, 28, 28), D4(64, 32, 1, 1), D1(64)},
         3,
         {ot_fld_str("activation", "HardSwish")},
         1},
        {"Conv",
         PRT_FLOAT32,
         {D4(2, 72, 56, 56), D4(72, 1, 3, 3), D1(72)},
         3,
         {ot_fld_i32("group", &g72, 1), ot_fld_i32("strides", s2, 2),
          ot_fld_i32("pads", p1, 4), ot_fld_str("activation", "Relu")},
         4},
        {"Conv",
         PRT_FLOAT32,
         {D4(1, 240, 14, 14), D4(240, 1, 5, 5), D1(240)},
         3,
         {ot_fld_i32("group", &g240, 1), ot_fld_i32("pads", p2, 4),
          ot_fld_str("activation", "Silu")},
         3},
        {"Conv",
         PRT_FLOAT32,
         {D4(1, 3, 64, 64), D4(16, 3, 3, 3), D1(16)},
         3,
         {ot_fld_i32("strides", s2, 2), ot_fld_i32("pads", p1, 4)},
         2},
        {"Conv",
         PRT_FLOAT32,
         {D4(2, 16, 20, 20), D4(16, 4, 3, 3)},
         2,
         {ot_fld_i32("group", &g4, 1), ot_fld_i32("pads", p1, 4)},
         2},
        {"Conv",
         PRT_FLOAT32,
         {D4(1, 32, 20, 20), D4(48, 32, 3, 3), D1(48)},
         3,
         {ot_fld_i32("pads", p1, 4), ot_fld_str("activation", "Sigmoid")},
         2},
        {"Conv", PRT_FLOAT16, {D4(1, 16, 30, 30), D4(24, 16, 1, 1)}, 2, {{0}}, 0},
        {"Conv",
         PRT_FLOAT32,
         {D4(8, 144, 1, 1), D4(576, 144, 1, 1), D1(576)},
         3,
         {ot_fld_str("activation", "HardSigmoid")},
         1},
        /* Products: one tall one with a bias, a batch of small ones, a
         * vector times a matrix, Gemm with transB and its bias. */
        {"MatMul", PRT_FLOAT32, {D3(4, 64, 128), D2(128, 512), D1(512)}, 3, {{0}}, 0},
        {"MatMul", PRT_FLOAT32, {D4(2, 4, 32, 32), D4(2, 4, 32, 32)}, 2, {{0}}, 0},
        {"MatMul", PRT_FLOAT32, {D2(1, 1024), D2(1024, 1000)}, 2, {{0}}, 0},
        {"MatMul", PRT_FLOAT16, {D3(2, 100, 64), D2(64, 300)}, 2, {{0}}, 0},
        {"Gemm",
         PRT_FLOAT32,
         {D2(8, 1024), D2(1000, 1024), D1(1000)},
         3,
         {ot_fld_i32("transB", &one, 1)},
         1},
        {"Gemm",
         PRT_FLOAT32,
         {D2(1, 576), D2(1024, 576), D1(1024)},
         3,
         {ot_fld_i32("transB", &one, 1)},
         1},
        {"Gemm", PRT_FLOAT32, {D2(300, 200), D2(200, 400), D2(300, 400)}, 3, {{0}}, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_thread_counts(&cases[i]);
}

/* Relu's branch-free path keeps what the plain one does: NaN and -0 pass,
 * negatives (-inf too) give +0, at every position of a vector. */
static void test_relu_values(void)
{
    const float special[] = {NAN,      -0.0f,  -1.0f,   2.0f, -INFINITY,
                             INFINITY, 1e-40f, -1e-40f, 0.0f};
    enum { N = 9 * 7 };
    ot_tensor x = ot_make(PRT_FLOAT32, D1(N)), y = {0};
    if (!x.data)
        return;
    for (int i = 0; i < N; i++)
        ((float *)x.data)[i] = special[i % 9];
    CHECK_OK(ot_run_op("Relu", NULL, 0, &x, 1, &y));
    for (int i = 0; y.data && i < N; i++) {
        float v = special[i % 9], got = ((float *)y.data)[i];
        if (v != v)
            CHECK(got != got);
        else if (v < 0)
            CHECK(got == 0.0f && !signbit(got));
        else
            CHECK(got == v && signbit(got) == signbit(v));
    }
    ot_free(&x);
    ot_free(&y);
}

int main(void)
{
    test_pool_coverage();
    test_pool_workers();
    test_pool_consecutive_jobs();
    test_pools_concurrently();
    test_context_threads();
    test_host_parallel_for();
    test_contexts_concurrently();
    test_matmul_const_contexts();
    test_profiler();
    test_ops_thread_counts();
    test_relu_values();
    return tu_finish("test_parallel");
}
