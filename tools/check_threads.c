/*
 * The threads check: two contexts of one engine run at once, each from a
 * thread of its own, as two threads may each call prt_context_enqueue on
 * their own context; each must give what a run alone gives (the case's
 * reference). A plugin that keeps scratch memory in a static, or shares
 * one object's state among the plugins attach_to_context makes, is caught
 * here when two contexts used one after the other (the contexts check) do
 * not show it.
 *
 * The runs are in lockstep: both threads wait at a barrier before each
 * run, so that their runs overlap however the scheduler treats two
 * threads (unsynchronised, one thread could finish all its runs before the
 * other made its first, and a plugin whose contexts share state would pass:
 * the state's last writer is right). After the first runs, each context's
 * plugin has been told its shapes (on_shape_change), so state shared
 * between the two then holds the other context's, on every later run. A
 * thread that failed stops the pair at the next barrier.
 *
 * Each thread works in a chk_ctx of its own: its own call state and
 * shared block, so verdicts and set_error calls do not mix (the host
 * services send a thread's set_error to the context bound to it,
 * chk_host_bind), and on CUDA a stream of its own, waited for alone.
 * Afterwards the threads' verdicts join the check's.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"

typedef struct worker {
    chk_ctx c;
    int32_t which, other;
    chk_case *k;
    chk_obj *o;
    const chk_outcome *ref;
    pthread_barrier_t *step;
    /* 0, or the run before which both stop: set (once) by a thread that
     * failed, to its next run, so that both read it after the same
     * barrier whichever way the threads are scheduled. */
    atomic_int *stop;
    int32_t runs;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    chk_outcome got;
    memset(&got, 0, sizeof got);
    chk_host_bind(&w->c);
    for (int32_t r = 0; r < CHK_THREAD_RUNS; r++) {
        char what[128];
        int stop;
        pthread_barrier_wait(w->step);
        stop = atomic_load(w->stop);
        if (stop && stop <= r)
            break;
        snprintf(what, sizeof what,
                 "context %d's run %d on a thread of its own, while context %d ran on "
                 "another,",
                 (int)w->which, (int)r + 1, (int)w->other);
        chk_run(&w->c, w->k, w->o, 1 + (r & 1), 0, &got);
        w->runs++;
        if (chk_differs(&w->c, w->k, 0, &got, w->ref, what) || chk_failed(&w->c)) {
            int none = 0;
            atomic_compare_exchange_strong(w->stop, &none, r + 1);
        }
    }
    chk_outcome_free(&got);
    if (w->c.stream)
        prt_stream_destroy(PRT_DEVICE_CUDA, w->c.stream);
    w->c.stream = NULL;
    chk_host_bind(NULL);
    return NULL;
}

/* A worker's verdict and silent failures, into the check's. */
static void merge(chk_ctx *c, const chk_shared *from)
{
    chk_shared *sh = c->sh;
    /* The workers' enqueue runs, for the summary's count. */
    sh->runs += from->runs;
    if (from->nb_silent) {
        if (sh->nb_silent == 0)
            snprintf(sh->silent, sizeof sh->silent, "%s", from->silent);
        sh->nb_silent += from->nb_silent;
    }
    if (from->result.verdict == CHK_FAIL && !chk_failed(c))
        sh->result = from->result;
}

/* Runs both workers at once; 0, or -1 when a thread could not start. */
static int run_workers(chk_ctx *c, worker *w)
{
    pthread_barrier_t step;
    atomic_int stop = 0;
    pthread_t t[2];
    int started = 0, rc = 0;
    if (pthread_barrier_init(&step, NULL, 2) != 0) {
        chk_fail(c, "cannot make a barrier for two threads");
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        w[i].step = &step;
        w[i].stop = &stop;
    }
    /* The second worker runs on this thread: the first one's barrier
     * waits then never wait for a thread that did not start. */
    if (pthread_create(&t[0], NULL, work, &w[0]) != 0) {
        chk_fail(c, "cannot start a thread");
        rc = -1;
    } else {
        started = 1;
        work(&w[1]);
        chk_host_bind(NULL);
    }
    if (started)
        pthread_join(t[0], NULL);
    pthread_barrier_destroy(&step);
    return rc;
}

/* The plugins of every pair, destroyed when the check ends (as an
 * engine's contexts outlive many runs): a plugin whose contexts share what
 * they free crashes there, after every pair had its chance to show the
 * sharing in its results, where destroying each pair at once would end the
 * check at the first (one of whose two sizes may hide it). */
typedef struct threads_count {
    int32_t pairs, runs, skipped;
    prt_plugin **later;
    int32_t nb_later, cap_later;
} threads_count;

/* Keeps p for destroy_later; destroys it now when memory runs out. */
static void keep(chk_ctx *c, threads_count *n, prt_plugin *p)
{
    if (!p)
        return;
    if (n->nb_later == n->cap_later) {
        int32_t cap = n->cap_later ? 2 * n->cap_later : 16;
        prt_plugin **more = realloc(n->later, sizeof *more * (size_t)cap);
        if (!more) {
            chk_destroy(c, p);
            return;
        }
        n->later = more;
        n->cap_later = cap;
    }
    n->later[n->nb_later++] = p;
}

/* Contexts first, then their engine plugin, as an engine is destroyed. */
static void destroy_later(chk_ctx *c, threads_count *n)
{
    for (int32_t i = n->nb_later; i-- > 0;)
        chk_destroy(c, n->later[i]);
    free(n->later);
    n->later = NULL;
    n->nb_later = n->cap_later = 0;
}

static void threads_case(chk_ctx *c, chk_rcase *x, void *user)
{
    threads_count *n = user;
    chk_outcome ref2;
    chk_case k2;
    chk_obj o[2];
    worker w[2];
    prt_plugin *e = NULL;
    memset(o, 0, sizeof o);
    memset(w, 0, sizeof w);
    if (chk_other_case(c, x, &k2, &ref2) != 0)
        goto done;
    /* Two cases of one size hide state the contexts share per size (a
     * profile with no room for another): the first two such pairs wait
     * for a case with room, before anything is made of them. */
    if (chk_case_size(&k2) == chk_case_size(&x->k) && n->pairs == 0 && n->skipped < 2) {
        n->skipped++;
        goto done;
    }
    e = chk_engine_plugin(c, x->L.p, 0);
    /* Made on this thread, as prt_context_create makes them. */
    if (!e || !chk_attach(c, e, c->device, 0, &o[0]) ||
        !chk_attach(c, e, c->device, 0, &o[1]))
        goto done;
    for (int i = 0; i < 2; i++) {
        w[i].c = *c;
        w[i].c.sh = calloc(1, sizeof *w[i].c.sh);
        w[i].c.stream = NULL;
        w[i].c.device_sync = 0;
        w[i].which = i + 1;
        w[i].other = 2 - i;
        w[i].o = &o[i];
        w[i].k = i ? &k2 : &x->k;
        w[i].ref = i ? &ref2 : &x->ref;
        if (!w[i].c.sh) {
            chk_fail(c, "out of memory");
            goto done;
        }
    }
    /* Should a thread crash, the report says where. */
    snprintf(c->sh->doing, sizeof c->sh->doing,
             "two contexts running at once on two threads (%.200s; %.200s)", x->k.shape,
             k2.shape);
    c->sh->in_call = 1;
    if (run_workers(c, w) == 0) {
        n->pairs++;
        for (int i = 0; i < 2; i++) {
            merge(c, w[i].c.sh);
            n->runs += w[i].runs;
        }
    }
    c->sh->in_call = 0;
done:
    for (int i = 0; i < 2; i++)
        free(w[i].c.sh);
    chk_outcome_free(&ref2);
    chk_case_free(&k2);
    keep(c, n, e);
    keep(c, n, o[0].p);
    keep(c, n, o[1].p);
}

void chk_check_threads(chk_ctx *c)
{
    threads_count n;
    memset(&n, 0, sizeof n);
    chk_for_cases(c, -1, threads_case, &n, NULL);
    destroy_later(c, &n);
    chk_pass(c,
             "two contexts run at once from two threads agree with runs alone (%d cases, "
             "%d runs in lockstep)",
             (int)n.pairs, (int)n.runs);
}
