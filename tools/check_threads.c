/*
 * The threads check: two contexts of one engine run at once, each from a
 * thread of its own, as two threads may each call prt_context_enqueue on
 * their own context; each must give what a run alone gives (the case's
 * reference). A plugin that keeps scratch memory in a static, or shares
 * one object's state among the plugins attach_to_context makes, is caught
 * here when two contexts used one after the other (the contexts check) do
 * not show it.
 *
 * Each thread works in a chk_ctx of its own: its own call state and
 * shared block, so verdicts and set_error calls do not mix (the host
 * services send a thread's set_error to the context bound to it,
 * chk_host_bind), and on CUDA a stream of its own, waited for alone.
 * Afterwards the threads' verdicts join the check's.
 */
#include <pthread.h>
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
    pthread_barrier_t *start;
    int32_t runs;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    chk_outcome got;
    memset(&got, 0, sizeof got);
    chk_host_bind(&w->c);
    pthread_barrier_wait(w->start);
    for (int32_t r = 0; r < CHK_THREAD_RUNS && !chk_failed(&w->c); r++) {
        char what[128];
        snprintf(what, sizeof what,
                 "context %d's run %d on a thread of its own, while context %d ran on "
                 "another,",
                 (int)w->which, (int)r + 1, (int)w->other);
        chk_run(&w->c, w->k, w->o, 1 + (r & 1), 0, &got);
        w->runs++;
        chk_differs(&w->c, w->k, 0, &got, w->ref, what);
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
    pthread_barrier_t start;
    pthread_t t[2];
    int started = 0, rc = 0;
    if (pthread_barrier_init(&start, NULL, 2) != 0) {
        chk_fail(c, "cannot make a barrier for two threads");
        return -1;
    }
    for (int i = 0; i < 2; i++)
        w[i].start = &start;
    /* The second worker runs on this thread: the first one's barrier
     * wait then never waits for a thread that did not start. */
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
    pthread_barrier_destroy(&start);
    return rc;
}

static void threads_case(chk_ctx *c, chk_rcase *x, void *user)
{
    int32_t *runs = user;
    chk_outcome ref2;
    chk_case k2;
    chk_obj o[2];
    worker w[2];
    prt_plugin *e = chk_engine_plugin(c, x->L.p, 0);
    memset(o, 0, sizeof o);
    memset(w, 0, sizeof w);
    memset(&k2, 0, sizeof k2);
    memset(&ref2, 0, sizeof ref2);
    /* Made on this thread, as prt_context_create makes them. */
    if (!e || !chk_attach(c, e, c->device, 0, &o[0]) ||
        !chk_attach(c, e, c->device, 0, &o[1]) || chk_other_case(c, x, &k2, &ref2) != 0)
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
    if (run_workers(c, w) == 0)
        for (int i = 0; i < 2; i++) {
            merge(c, w[i].c.sh);
            *runs += w[i].runs;
        }
    c->sh->in_call = 0;
done:
    for (int i = 0; i < 2; i++)
        free(w[i].c.sh);
    chk_outcome_free(&ref2);
    chk_case_free(&k2);
    chk_destroy(c, o[0].p);
    chk_destroy(c, o[1].p);
    chk_destroy(c, e);
}

void chk_check_threads(chk_ctx *c)
{
    int32_t runs = 0;
    int32_t ran = chk_for_cases(c, -1, threads_case, &runs, NULL);
    chk_pass(c,
             "two contexts run at once from two threads agree with runs alone (%d cases, "
             "%d runs)",
             (int)ran, (int)runs);
}
