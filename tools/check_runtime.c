/*
 * The runtime contract, on random shapes within accepted profiles and
 * random data: coverage (every output element written), bounds (nothing
 * written outside outputs and workspace, inputs intact, sizes within their
 * bounds), repeat, alias (in place agrees with apart), clone, attach,
 * serialize (the runtime-phase plugin from the serialized fields), two
 * contexts used alternately, zero-size inputs, tactics against tactic 0,
 * and errors (every failure comes with a message); each on the device the
 * check runs on (c->device). Two contexts at once on two threads are
 * check_threads.c's, the stream and CUDA against the CPU check_device.c's.
 *
 * Each case's reference is the first run of the configured build-phase
 * plugin (as the builder's timing runs it): poison 1, separate buffers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_objects.h"
#include "check_run.h"

/* Fresh allocations filled with garbage, so that memory a destroyed plugin
 * freed no longer holds what it did; freed with scribble_free. */
#define SCRIBBLES 24
static void scribble(void **blocks)
{
    for (int i = 0; i < SCRIBBLES; i++) {
        size_t n = (size_t)16 << (i % 10);
        blocks[i] = malloc(n);
        if (blocks[i])
            memset(blocks[i], 0xDB, n);
    }
}

static void scribble_free(void **blocks)
{
    for (int i = 0; i < SCRIBBLES; i++)
        free(blocks[i]);
}

/* ---- coverage, bounds, repeat, alias ------------------------------------------ */

/* Elements the coverage check looked at: of outputs that must be written
 * whole, and of outputs that alias an input, which hold the input's copy
 * at enqueue, so that an element left alone is the copy, not a gap. */
typedef struct coverage_count {
    int64_t written, aliased;
    int any_aliased;
} coverage_count;

static void coverage_case(chk_ctx *c, chk_rcase *x, void *user)
{
    chk_outcome two;
    coverage_count *n = user;
    memset(&two, 0, sizeof two);
    if (chk_run(c, &x->k, &x->o, 2, 0, &two) != PRT_OK) {
        chk_fail_at(c, x->k.shape, 0, "", -1, "a second run fails: %s", two.msg);
    } else {
        for (int32_t p = 0; p < x->L.nb_out; p++) {
            int64_t e;
            char name[16];
            if (x->L.alias[p] >= 0) {
                n->aliased += x->ref.count[p];
                n->any_aliased = 1;
                continue;
            }
            n->written += x->ref.count[p];
            if ((e = chk_unwritten(x->L.out_types[p], &x->ref, &two, p)) < 0)
                continue;
            snprintf(name, sizeof name, "out%d", (int)p);
            chk_fail_at(c, x->k.shape, 0, name, e,
                        "out%d element %lld of %lld was not written (it still holds the "
                        "poison of each run; out%d aliases no input)",
                        (int)p, (long long)e, (long long)x->ref.count[p], (int)p);
            break;
        }
    }
    chk_outcome_free(&two);
}

void chk_check_coverage(chk_ctx *c)
{
    coverage_count n = {0, 0, 0};
    int32_t ran = chk_for_cases(c, -1, coverage_case, &n, NULL);
    if (!n.any_aliased)
        chk_pass(c, "every output element written in %d cases (%lld elements)", (int)ran,
                 (long long)n.written);
    else if (n.written == 0)
        chk_pass(
            c,
            "every output aliases an input: in %d cases their %lld elements hold the "
            "input's copy where not written, as at run time",
            (int)ran, (long long)n.aliased);
    else
        chk_pass(c,
                 "every element of the outputs that alias no input written in %d cases "
                 "(%lld elements); the %lld elements of outputs that alias an input "
                 "hold its copy where not written, as at run time",
                 (int)ran, (long long)n.written, (long long)n.aliased);
}

static int bounds_of(chk_ctx *c, const chk_case *k, const chk_outcome *o, const char *run)
{
    if (!o->bounds[0])
        return 0;
    chk_fail_at(c, k->shape, 0, o->bounds_tensor, o->bounds_element, "%s: %s", run,
                o->bounds);
    return 1;
}

static int any_alias(const chk_layer *L)
{
    for (int32_t p = 0; p < L->nb_out; p++)
        if (L->alias[p] >= 0)
            return 1;
    return 0;
}

static void bounds_case(chk_ctx *c, chk_rcase *x, void *user)
{
    chk_outcome two;
    (void)user;
    memset(&two, 0, sizeof two);
    if (bounds_of(c, &x->k, &x->ref, "first run"))
        return;
    chk_run(c, &x->k, &x->o, 2, 0, &two);
    if (!bounds_of(c, &x->k, &two, "second run") && any_alias(&x->L)) {
        chk_run(c, &x->k, &x->o, 1, 1, &two);
        bounds_of(c, &x->k, &two, "in place");
    }
    chk_outcome_free(&two);
}

void chk_check_bounds(chk_ctx *c)
{
    int32_t ran = chk_for_cases(c, -1, bounds_case, NULL, NULL);
    chk_pass(c,
             "nothing written past any buffer or into an input, sizes within their "
             "bounds (%d cases, %d guard bytes a side)",
             (int)ran, CHK_GUARD);
}

/* Runs of one case after its reference, on its own object: shapes held
 * (the same case back to back) and varied (another case in between, which
 * on_shape_change is told), each compared with its case's reference. Every
 * run of the object is a reference or compared with one, so a plugin that
 * gives other bits on, say, every third call fails on every case. */
typedef struct repeat_count {
    int32_t runs;
} repeat_count;

static void repeat_case(chk_ctx *c, chk_rcase *x, void *user)
{
    repeat_count *n = user;
    chk_outcome got, ref2;
    chk_case k2;
    int have2;
    memset(&got, 0, sizeof got);
    have2 = chk_other_case(c, x, &k2, &ref2) == 0;
    for (int32_t r = 0; r < CHK_REPEAT_RUNS && !chk_failed(c); r++) {
        /* k k k2 k2 k k k2 k2 ...: two of each in a row, then the other. */
        int other = have2 && (r / 2) % 2 == 1;
        int changed = have2 && (r % 2 == 0);
        chk_case *k = other ? &k2 : &x->k;
        char what[128];
        snprintf(what, sizeof what, "run %d of %d on the same inputs (%s)", (int)r + 1,
                 CHK_REPEAT_RUNS, changed ? "after other shapes" : "shapes held");
        chk_run(c, k, &x->o, 1 + (r & 1), 0, &got);
        n->runs++;
        chk_differs(c, k, 0, &got, other ? &ref2 : &x->ref, what);
    }
    if (have2) {
        chk_outcome_free(&ref2);
        chk_case_free(&k2);
    }
    chk_outcome_free(&got);
}

void chk_check_repeat(chk_ctx *c)
{
    repeat_count n = {0};
    int32_t ran = chk_for_cases(c, -1, repeat_case, &n, NULL);
    chk_pass(c,
             "the same result on every run of the same inputs, shapes held and varied "
             "(%d cases, %d runs)",
             (int)ran, (int)n.runs);
}

static void alias_case(chk_ctx *c, chk_rcase *x, void *user)
{
    int32_t *aliased = user;
    chk_outcome in_place;
    if (x->L.alias_problem[0]) {
        chk_fail(c, "%s", x->L.alias_problem);
        return;
    }
    if (!any_alias(&x->L))
        return;
    (*aliased)++;
    memset(&in_place, 0, sizeof in_place);
    chk_run(c, &x->k, &x->o, 1, 1, &in_place);
    if (!chk_differs(c, &x->k, 0, &in_place, &x->ref,
                     "the run in place (an output over its aliased input)"))
        bounds_of(c, &x->k, &in_place, "in place");
    chk_outcome_free(&in_place);
}

void chk_check_alias(chk_ctx *c)
{
    int32_t aliased = 0;
    chk_for_cases(c, -1, alias_case, &aliased, NULL);
    if (aliased == 0)
        chk_skip(c, "no output aliases an input");
    else
        chk_pass(c, "in place and apart agree (%d cases)", (int)aliased);
}

/* ---- clone, attach, serialize, contexts --------------------------------------- */

static void clone_case(chk_ctx *c, chk_rcase *x, void *user)
{
    chk_outcome got, ref2;
    chk_case k2;
    chk_obj oc, oc2;
    void *junk[SCRIBBLES];
    (void)user;
    memset(&got, 0, sizeof got);
    memset(&oc, 0, sizeof oc);
    memset(&oc2, 0, sizeof oc2);
    oc.p = chk_clone(c, x->L.p, "clone");
    if (!oc.p)
        return;
    chk_run(c, &x->k, &oc, 1, 0, &got);
    if (chk_differs(c, &x->k, 0, &got, &x->ref, "the clone's run") ||
        chk_other_case(c, x, &k2, &ref2) != 0)
        goto done;
    /* other_case told the original other shapes: back to its own. */
    chk_run(c, &x->k, &x->o, 1, 0, &got);
    if (chk_differs(c, &x->k, 0, &got, &x->ref, "the original's run, back on its shapes"))
        goto done2;
    /* The clone runs other shapes; the original, told nothing new, runs
     * its own again: state they shared would show. */
    chk_run(c, &k2, &oc, 2, 0, &got);
    if (chk_differs(c, &k2, 0, &got, &ref2, "the clone's run of other shapes"))
        goto done2;
    chk_run(c, &x->k, &x->o, 2, 0, &got);
    if (chk_differs(c, &x->k, 0, &got, &x->ref,
                    "the original's run, after its clone ran other shapes"))
        goto done2;
    chk_run(c, &k2, &oc, 1, 0, &got);
    if (chk_differs(c, &k2, 0, &got, &ref2, "the clone's run, after the original ran"))
        goto done2;
    /* The clone outlives its original, and clones itself. */
    chk_destroy(c, x->L.p);
    x->L.p = x->o.p = NULL;
    scribble(junk);
    chk_run(c, &k2, &oc, 2, 0, &got);
    if (!chk_differs(c, &k2, 0, &got, &ref2,
                     "the clone's run, after the original was destroyed")) {
        oc2.p = chk_clone(c, oc.p, "a clone of a clone");
        if (oc2.p) {
            chk_destroy(c, oc.p);
            oc.p = NULL;
            chk_run(c, &x->k, &oc2, 1, 0, &got);
            chk_differs(c, &x->k, 0, &got, &x->ref,
                        "a clone's clone, after the clone was destroyed");
        }
    }
    scribble_free(junk);
done2:
    chk_outcome_free(&ref2);
    chk_case_free(&k2);
done:
    chk_outcome_free(&got);
    chk_destroy(c, oc.p);
    chk_destroy(c, oc2.p);
}

void chk_check_clone(chk_ctx *c)
{
    int32_t ran = chk_for_cases(c, -1, clone_case, NULL, NULL);
    chk_pass(c, "clones agree with their original and share nothing with it (%d cases)",
             (int)ran);
}

static void attach_case(chk_ctx *c, chk_rcase *x, void *user)
{
    chk_outcome got, ref2;
    chk_case k2;
    chk_obj o1, o2;
    prt_plugin *e = chk_engine_plugin(c, x->L.p, 0);
    (void)user;
    memset(&got, 0, sizeof got);
    memset(&o1, 0, sizeof o1);
    memset(&o2, 0, sizeof o2);
    if (!e || !chk_attach(c, e, c->device, 0, &o1))
        goto done;
    chk_run(c, &x->k, &o1, 1, 0, &got);
    if (chk_differs(c, &x->k, 0, &got, &x->ref, "a context's run") ||
        chk_other_case(c, x, &k2, &ref2) != 0)
        goto done;
    chk_run(c, &k2, &o1, 2, 0, &got);
    /* The engine plugin attaches again while a context has run: the new
     * context's plugin must not see the first one's state. */
    if (!chk_differs(c, &k2, 0, &got, &ref2, "a context's run of other shapes") &&
        chk_attach(c, e, c->device, 0, &o2)) {
        chk_run(c, &x->k, &o2, 1, 0, &got);
        if (!chk_differs(c, &x->k, 0, &got, &x->ref, "a context attached later")) {
            chk_destroy(c, e);
            e = NULL;
            chk_run(c, &x->k, &o1, 1, 0, &got);
            chk_differs(c, &x->k, 0, &got, &x->ref,
                        "a context's run, after its engine plugin was destroyed");
        }
    }
    chk_outcome_free(&ref2);
    chk_case_free(&k2);
done:
    chk_outcome_free(&got);
    chk_destroy(c, o1.p);
    chk_destroy(c, o2.p);
    chk_destroy(c, e);
}

void chk_check_attach(chk_ctx *c)
{
    int32_t ran = chk_for_cases(c, -1, attach_case, NULL, NULL);
    chk_pass(c,
             "attach_to_context gives plugins that agree with the built one and "
             "outlive their engine plugin (%d cases)",
             (int)ran);
}

static void serialize_case(chk_ctx *c, chk_rcase *x, void *user)
{
    const prt_field_collection *ser, *again;
    prt_field_collection *copy = NULL;
    chk_outcome got;
    chk_obj r;
    char why[CHK_MSG];
    (void)user;
    memset(&got, 0, sizeof got);
    memset(&r, 0, sizeof r);
    chk_call_begin(c, "get_fields_to_serialize");
    ser = x->L.p->vt->runtime->get_fields_to_serialize(x->L.p);
    chk_call_end(c, PRT_OK);
    if (chk_fields_problem(ser, why, sizeof why)) {
        chk_fail(c, "%s", why);
        return;
    }
    copy = chk_fields_copy(ser);
    r.p = copy ? chk_create(c, PRT_PHASE_RUNTIME, copy, NULL) : NULL;
    if (!r.p) {
        chk_fail(c, "create(runtime phase) refuses the serialized fields: %s",
                 chk_call_error(c));
        goto done;
    }
    if (chk_set_tactic(c, &r, 0) != PRT_OK) {
        chk_fail(c, "the recreated plugin refuses tactic 0: %s", chk_call_error(c));
        goto done;
    }
    chk_run(c, &x->k, &r, 1, 0, &got);
    if (chk_differs(c, &x->k, 0, &got, &x->ref, "the plugin recreated from its fields"))
        goto done;
    chk_call_begin(c, "get_fields_to_serialize (the recreated plugin)");
    again = r.p->vt->runtime->get_fields_to_serialize(r.p);
    chk_call_end(c, PRT_OK);
    if (chk_fields_problem(again, why, sizeof why))
        chk_fail(c, "the recreated plugin: %s", why);
    else if (!chk_fields_equal(again, copy))
        chk_fail(c, "the recreated plugin serializes other fields than it was made from");
done:
    chk_outcome_free(&got);
    chk_destroy(c, r.p);
    chk_fields_free(copy);
}

void chk_check_serialize(chk_ctx *c)
{
    int32_t ran = chk_for_cases(c, -1, serialize_case, NULL, NULL);
    chk_pass(c,
             "get_fields_to_serialize -> create(runtime phase) runs alike and "
             "serializes the same fields (%d cases)",
             (int)ran);
}

static void contexts_case(chk_ctx *c, chk_rcase *x, void *user)
{
    chk_outcome got, ref2;
    chk_case k2;
    chk_obj o[2];
    prt_plugin *e = chk_engine_plugin(c, x->L.p, 0);
    (void)user;
    memset(&got, 0, sizeof got);
    memset(o, 0, sizeof o);
    if (!e || !chk_attach(c, e, c->device, 0, &o[0]) ||
        !chk_attach(c, e, c->device, 0, &o[1]) || chk_other_case(c, x, &k2, &ref2) != 0)
        goto done;
    /* Alternately, each context on its own shapes, then swapped. */
    for (int step = 0; step < 6 && !chk_failed(c); step++) {
        int which = step & 1, swap = step >= 4;
        chk_case *k = which ^ swap ? &k2 : &x->k;
        const chk_outcome *ref = which ^ swap ? &ref2 : &x->ref;
        char what[64];
        snprintf(what, sizeof what, "context %d's run %d (of two used alternately)",
                 which + 1, step / 2 + 1);
        chk_run(c, k, &o[which], 1 + (step & 1), 0, &got);
        chk_differs(c, k, 0, &got, ref, what);
    }
    chk_outcome_free(&ref2);
    chk_case_free(&k2);
done:
    chk_outcome_free(&got);
    chk_destroy(c, o[0].p);
    chk_destroy(c, o[1].p);
    chk_destroy(c, e);
}

void chk_check_contexts(chk_ctx *c)
{
    int32_t ran = chk_for_cases(c, -1, contexts_case, NULL, NULL);
    chk_pass(c, "two contexts used alternately do not disturb each other (%d cases)",
             (int)ran);
}

/* ---- zero-size inputs ------------------------------------------------------- */

static void empty_case(chk_ctx *c, chk_rcase *x, void *user)
{
    chk_outcome two;
    (void)user;
    memset(&two, 0, sizeof two);
    if (bounds_of(c, &x->k, &x->ref, "zero-size input"))
        return;
    if (chk_run(c, &x->k, &x->o, 2, 0, &two) != PRT_OK) {
        chk_fail_at(c, x->k.shape, 0, "", -1, "a second run fails: %s", two.msg);
    } else if (!bounds_of(c, &x->k, &two, "zero-size input")) {
        for (int32_t p = 0; p < x->L.nb_out; p++) {
            int64_t e = chk_unwritten(x->L.out_types[p], &x->ref, &two, p);
            char name[16];
            if (e < 0)
                continue;
            snprintf(name, sizeof name, "out%d", (int)p);
            chk_fail_at(c, x->k.shape, 0, name, e, "out%d element %lld was not written",
                        (int)p, (long long)e);
            break;
        }
    }
    chk_outcome_free(&two);
}

void chk_check_empty(chk_ctx *c)
{
    int32_t handled = 0, rejected = 0, max_in = 0;
    for (int32_t s = 0; s < c->plan->nb_sigs; s++)
        max_in = c->plan->sigs[s].nb_in > max_in ? c->plan->sigs[s].nb_in : max_in;
    for (int32_t i = 0; i < max_in && !chk_failed(c); i++) {
        int32_t refused;
        handled += chk_for_cases(c, i, empty_case, NULL, &refused);
        rejected += refused;
    }
    if (handled + rejected == 0)
        chk_skip(c, "no input has a dim that could be 0");
    else
        chk_pass(c, "zero-size inputs: %d cases handled, %d rejected with an error",
                 (int)handled, (int)rejected);
}

/* ---- tactics ------------------------------------------------------------------ */

typedef struct tactic_list {
    int32_t n;
    int32_t ids[CHK_MAX_TACTICS];
    int32_t compared;
} tactic_list;

/* The plugin's tactics other than 0 (the reference every check runs),
 * checked as the builder reads them. */
static int list_tactics(chk_ctx *c, prt_plugin *p, tactic_list *t)
{
    prt_status (*get)(prt_plugin *, int32_t *, int32_t, int32_t *) =
        CHK_BUILD(p, get_valid_tactics);
    int32_t count = 0, got = 0;
    chk_guards g = {0};
    char why[CHK_MSG];
    prt_status st;
    t->n = 0;
    if (!get || !CHK_RUNTIME(p, set_tactic))
        return 0;
    chk_call_begin(c, "get_valid_tactics (count)");
    if (chk_call_end(c, get(p, NULL, 0, &count)))
        return chk_fail(c, "get_valid_tactics fails: %s", chk_call_error(c)), -1;
    if (count < 0 || count > CHK_MAX_TACTICS)
        return chk_fail(c, "get_valid_tactics counts %d tactics", (int)count), -1;
    chk_call_begin(c, "get_valid_tactics (fill)");
    st = chk_call_end(
        c,
        get(p, chk_guard_out(&g, "tactics", t->ids, count, sizeof *t->ids), count, &got));
    if (chk_guards_end(&g, c->call, why, sizeof why))
        return chk_fail(c, "%s", why), -1;
    if (st)
        return chk_fail(c, "get_valid_tactics fails: %s", chk_call_error(c)), -1;
    if (got != count)
        return chk_fail(c, "get_valid_tactics counts %d tactics, then lists %d",
                        (int)count, (int)got),
               -1;
    for (int32_t i = 0; i < count; i++) {
        for (int32_t j = 0; j < i; j++)
            if (t->ids[j] == t->ids[i])
                return chk_fail(c, "get_valid_tactics lists tactic %d twice",
                                (int)t->ids[i]),
                       -1;
        /* 0 may be listed (to make it a candidate); it is the reference. */
        if (t->ids[i] != 0)
            t->ids[t->n++] = t->ids[i];
    }
    return 0;
}

static void tactics_case(chk_ctx *c, chk_rcase *x, void *user)
{
    tactic_list *t = user;
    chk_outcome got;
    if (list_tactics(c, x->L.p, t) != 0)
        return;
    memset(&got, 0, sizeof got);
    for (int32_t i = 0; i < t->n && !chk_failed(c); i++) {
        int32_t id = t->ids[i];
        chk_obj ctx;
        prt_plugin *e;
        char what[96];
        /* As the builder times it: the built plugin, set to the tactic. */
        if (chk_set_tactic(c, &x->o, id) != PRT_OK) {
            chk_fail_at(c, x->k.shape, id, "", -1,
                        "set_tactic(%d) refuses a listed tactic: %s", (int)id,
                        chk_call_error(c));
            break;
        }
        chk_run(c, &x->k, &x->o, 1, 0, &got);
        snprintf(what, sizeof what, "tactic %d (against tactic 0)", (int)id);
        if (chk_differs(c, &x->k, id, &got, &x->ref, what))
            break;
        /* As an engine that chose it runs it: a context of it. */
        e = chk_engine_plugin(c, x->L.p, id);
        if (e && chk_attach(c, e, c->device, id, &ctx)) {
            chk_run(c, &x->k, &ctx, 2, 0, &got);
            snprintf(what, sizeof what, "a context of tactic %d (against tactic 0)",
                     (int)id);
            chk_differs(c, &x->k, id, &got, &x->ref, what);
            chk_destroy(c, ctx.p);
        }
        chk_destroy(c, e);
        t->compared++;
    }
    if (!chk_failed(c))
        chk_set_tactic(c, &x->o, 0);
    chk_outcome_free(&got);
}

void chk_check_tactics(chk_ctx *c)
{
    tactic_list t;
    memset(&t, 0, sizeof t);
    chk_for_cases(c, -1, tactics_case, &t, NULL);
    if (t.n == 0)
        chk_pass(c, "only tactic 0 (no tactic is listed, or set_tactic is NULL)");
    else
        chk_pass(c, "%d listed tactic%s agree%s with tactic 0 (%d comparisons)", (int)t.n,
                 t.n == 1 ? "" : "s", t.n == 1 ? "s" : "", (int)t.compared);
}

/* ---- errors -------------------------------------------------------------------- */

/* Calls that must fail, or at least must not crash: each failure comes
 * with a message (chk_call_end notes one without). Together with what
 * every other check noticed, the parent reports them. */
static void provoke_create(chk_ctx *c, int32_t *provoked)
{
    const prt_plugin_creator *cr = c->creator;
    static const char text[] = "x";
    static const int32_t number = 7;
    prt_plugin *p;
    prt_status st;
    p = chk_create(c, 12345, c->fields, &st);
    *provoked += st != PRT_OK;
    chk_destroy(c, p);
    for (int32_t i = 0; i < cr->nb_fields && i < CHK_MAX_SCHEMA; i++) {
        prt_field f = {cr->fields[i].name, text, PRT_FIELD_CHAR, 1};
        prt_field_collection fc = {1, &f};
        if (cr->fields[i].type == PRT_FIELD_CHAR)
            f = (prt_field){cr->fields[i].name, &number, PRT_FIELD_INT32, 1};
        p = chk_create(c, PRT_PHASE_BUILD, &fc, &st);
        *provoked += st != PRT_OK;
        chk_destroy(c, p);
    }
}

static void provoke_build(chk_ctx *c, const chk_sig *sig, int32_t *provoked)
{
    chk_layer L;
    chk_mode mode = {0, -1};
    int32_t types[CHK_MAX_IN + 1], out[CHK_MAX_OUT];
    memset(&L, 0, sizeof L);
    if (chk_layer_setup(c, sig, &c->rng, mode, 4, &L) != CHK_OK) {
        chk_layer_close(&L);
        return;
    }
    memcpy(types, sig->types, sizeof sig->types);
    types[sig->nb_in] = sig->nb_in ? sig->types[0] : PRT_FLOAT32;
    chk_call_begin(c, "get_output_dtypes (one input too many)");
    *provoked += chk_call_end(c, L.p->vt->build->get_output_dtypes(
                                     L.p, out, L.nb_out, types, sig->nb_in + 1)) != 0;
    if (CHK_BUILD(L.p, configure) && L.nb_out > 0) {
        prt_dynamic_tensor_desc d[CHK_MAX_IO];
        memcpy(d, L.descs, sizeof d[0] * (size_t)(L.nb_in + L.nb_out));
        d[L.nb_in].desc.dtype = (L.out_types[0] + 3) % PRT_DTYPE_COUNT;
        chk_call_begin(c, "configure (output 0 of another dtype)");
        *provoked += chk_call_end(c, CHK_BUILD(L.p, configure)(
                                         L.p, d, L.nb_in, d + L.nb_in, L.nb_out)) != 0;
    }
    if (CHK_RUNTIME(L.p, set_tactic)) {
        chk_call_begin(c, "set_tactic(2147483000)");
        *provoked += chk_call_end(c, CHK_RUNTIME(L.p, set_tactic)(L.p, 2147483000)) != 0;
    }
    chk_layer_close(&L);
}

void chk_check_errors(chk_ctx *c)
{
    int32_t provoked = 0;
    provoke_create(c, &provoked);
    for (int32_t s = 0; s < c->plan->nb_sigs; s++)
        provoke_build(c, &c->plan->sigs[s], &provoked);
    if (c->sh->nb_silent)
        chk_fail(c, "%s", c->sh->silent);
    else
        chk_pass(c,
                 "%d failures provoked (bad fields, phase, input count, dtypes, "
                 "tactic), each with a message",
                 (int)provoked);
}
