/* Runs of a plugin on guarded buffers (check_run.h). */
#include "check_run.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_transfer.h"
#include "numeric.h"

/* ---- poison ------------------------------------------------------------------- */

/* Element bytes of poison 1 and 2: NaN for every float dtype (so a plugin
 * that reads its output before writing it shows), and for each dtype two
 * patterns no element can hold in both runs. */
static void poison_element(size_t es, int which, unsigned char *e)
{
    for (size_t i = 0; i < es; i++)
        e[i] = which == 1 ? 0xA5 : 0x5A;
    if (es >= 2) {
        e[es - 1] = which == 1 ? 0xFF : 0x7F;
        if (which == 2)
            e[es - 2] = 0xC5;
    }
}

static void poison_fill(unsigned char *data, size_t bytes, size_t es, int which)
{
    unsigned char e[16];
    poison_element(es, which, e);
    for (size_t i = 0; i + es <= bytes; i += es)
        memcpy(data + i, e, es);
}

/* ---- runs --------------------------------------------------------------------- */

void chk_outcome_free(chk_outcome *out)
{
    for (int32_t o = 0; o < CHK_MAX_OUT; o++)
        free(out->data[o]);
    memset(out, 0, sizeof *out);
}

static void bounds_problem(chk_outcome *out, const char *tensor, int64_t element,
                           const char *fmt, ...) CLI_PRINTF(4, 5);
static void bounds_problem(chk_outcome *out, const char *tensor, int64_t element,
                           const char *fmt, ...)
{
    va_list ap;
    if (out->bounds[0])
        return;
    va_start(ap, fmt);
    vsnprintf(out->bounds, sizeof out->bounds, fmt, ap);
    va_end(ap);
    snprintf(out->bounds_tensor, sizeof out->bounds_tensor, "%s", tensor);
    out->bounds_element = element;
}

static void check_guard(chk_outcome *out, const chk_buf *b, const char *tensor, size_t es)
{
    int found;
    int64_t at = chk_buf_guard_check(b, &found);
    if (!found)
        return;
    if (at < 0)
        bounds_problem(out, tensor, -1, "%s: byte %lld before its start was written",
                       tensor, (long long)at);
    else
        bounds_problem(out, tensor, at / (int64_t)es,
                       "%s: byte %lld was written, past its %zu bytes", tensor,
                       (long long)at, b->bytes);
}

static int same_desc(const prt_tensor_desc *a, const prt_tensor_desc *b)
{
    return a->dtype == b->dtype && a->format == b->format &&
           chk_dims_equal(&a->dims, &b->dims);
}

/* What the runtime compares before on_shape_change. */
static int same_descs(const chk_obj *o, const prt_tensor_desc *in, int32_t nb_in,
                      const prt_tensor_desc *out, int32_t nb_out)
{
    if (!o->told)
        return 0;
    for (int32_t i = 0; i < nb_in; i++)
        if (!same_desc(&o->in[i], &in[i]))
            return 0;
    for (int32_t p = 0; p < nb_out; p++)
        if (!same_desc(&o->out[p], &out[p]))
            return 0;
    return 1;
}

/* Reads the size tensors, checks their bounds and sizes the results. */
static void read_outputs(chk_case *k, chk_outcome *out)
{
    chk_layer *L = k->L;
    for (int32_t s = 0; s < chk_pool_size_count(L->pool); s++) {
        int32_t o = chk_pool_size_output(L->pool, s);
        int64_t v = k->upper[o];
        char name[16];
        snprintf(name, sizeof name, "out%d", (int)o);
        if (!L->size_problem[0] && k->out[o].bytes >= prt_dtype_size(L->out_types[o]))
            v = L->out_types[o] == PRT_INT32 ? *(const int32_t *)k->out[o].data
                                             : *(const int64_t *)k->out[o].data;
        if ((v < 0 || v > k->upper[o]) && !out->size_bad[0]) {
            snprintf(out->size_bad, sizeof out->size_bad,
                     "%s, a size tensor, holds %lld, %s its upper bound %lld", name,
                     (long long)v, v < 0 ? "below 0 and" : "above",
                     (long long)k->upper[o]);
            snprintf(out->size_bad_tensor, sizeof out->size_bad_tensor, "%s", name);
        }
        if (v < 0 || v > k->upper[o]) {
            bounds_problem(out, name, 0,
                           "%s, a size tensor, holds %lld, %s its upper bound %lld", name,
                           (long long)v, v < 0 ? "below 0 and" : "above",
                           (long long)k->upper[o]);
            v = v < 0 ? 0 : k->upper[o];
        }
        out->sizes[s] = v;
    }
    if (chk_layer_out_dims(L, k->in_dims, out->sizes, out->true_dims) != 0)
        memcpy(out->true_dims, k->out_dims, sizeof(prt_dims) * (size_t)L->nb_out);
    for (int32_t o = 0; o < L->nb_out; o++) {
        size_t es = prt_dtype_size(L->out_types[o]);
        int64_t n = chk_volume(&out->true_dims[o]), cap = (int64_t)(k->out[o].bytes / es);
        out->count[o] = n < 0 || n > cap ? cap : n;
        out->data[o] = malloc((size_t)out->count[o] * es + 1);
        if (out->data[o])
            memcpy(out->data[o], k->out[o].data, (size_t)out->count[o] * es);
    }
}

static prt_status device_failed(chk_outcome *out)
{
    out->device_failed = 1;
    out->st = PRT_ERR_PLUGIN;
    return out->st;
}

prt_status chk_run(chk_ctx *c, chk_case *k, chk_obj *o, int poison, int aliased,
                   chk_outcome *out)
{
    chk_layer *L = k->L;
    prt_tensor_desc in[CHK_MAX_IN], od[CHK_MAX_OUT];
    const void *inputs[CHK_MAX_IN];
    void *outputs[CHK_MAX_OUT];
    int32_t aliased_by[CHK_MAX_IN];
    prt_status (*shape_change)(prt_plugin *, const prt_tensor_desc *, int32_t,
                               const prt_tensor_desc *, int32_t);
    prt_status st = PRT_OK;
    char why[CHK_MSG];
    chk_outcome_free(out);
    memset(in, 0, sizeof in);
    memset(od, 0, sizeof od);
    for (int32_t i = 0; i < L->nb_in; i++) {
        chk_buf_guard_reset(&k->in[i]);
        memcpy(k->in[i].data, k->in_ref[i], k->in[i].bytes);
        in[i] = (prt_tensor_desc){
            L->sig.types[i], PRT_FORMAT_LINEAR, k->in_dims[i], NULL, {NULL, NULL}};
        inputs[i] = chk_buf_ptr(c, &k->in[i]);
        aliased_by[i] = -1;
    }
    for (int32_t p = 0; p < L->nb_out; p++) {
        int32_t a = L->alias[p];
        chk_buf_guard_reset(&k->out[p]);
        poison_fill(k->out[p].data, k->out[p].bytes, prt_dtype_size(L->out_types[p]),
                    poison);
        od[p] = (prt_tensor_desc){
            L->out_types[p], PRT_FORMAT_LINEAR, k->out_dims[p], NULL, {NULL, NULL}};
        outputs[p] = chk_buf_ptr(c, &k->out[p]);
        if (a < 0)
            continue;
        /* An output that aliases an input holds that input's data at
         * enqueue (plugin.h): its memory, or a copy of it where memory
         * cannot be shared, which is what the runtime does (run.c), so a
         * plugin may compute out += b. Only the bytes of the output's
         * true size are copied; the rest, if any, stays poisoned. */
        memcpy(k->out[p].data, k->in_ref[a],
               k->out[p].bytes < k->in[a].bytes ? k->out[p].bytes : k->in[a].bytes);
        /* In place, as the runtime runs it: the output is the input (one
         * output per input, as the builder shares it). */
        if (aliased && aliased_by[a] < 0 && k->out[p].bytes == k->in[a].bytes) {
            inputs[a] = outputs[p];
            aliased_by[a] = p;
        }
    }
    chk_buf_guard_reset(&k->ws);
    poison_fill(k->ws.data, k->ws.bytes, 1, poison);
    if (c->device == PRT_DEVICE_CUDA && chk_dev_before(c, k, out->msg, sizeof out->msg))
        return device_failed(out);
    shape_change = CHK_RUNTIME(o->p, on_shape_change);
    if (!same_descs(o, in, L->nb_in, od, L->nb_out)) {
        o->told = 0;
        if (shape_change) {
            chk_guards g = {0};
            chk_call_begin(c, "on_shape_change (%s)", k->shape);
            st = chk_call_end(
                c, shape_change(
                       o->p, chk_guard_in(&g, "in", in, L->nb_in, sizeof *in), L->nb_in,
                       chk_guard_in(&g, "out", od, L->nb_out, sizeof *od), L->nb_out));
            if (chk_guards_end(&g, c->call, why, sizeof why))
                chk_fail_at(c, k->shape, o->tactic, "", -1, "%s", why);
        }
        if (st == PRT_OK) {
            o->told = 1;
            memcpy(o->in, in, sizeof in);
            memcpy(o->out, od, sizeof od);
        }
    }
    if (st == PRT_OK) {
        chk_guards g = {0};
        chk_call_begin(c, "enqueue (%s, tactic %d)", k->shape, (int)o->tactic);
        st = chk_call_end(
            c, o->p->vt->runtime->enqueue(
                   o->p, chk_guard_in(&g, "in_desc", in, L->nb_in, sizeof *in),
                   chk_guard_in(&g, "out_desc", od, L->nb_out, sizeof *od),
                   chk_guard_in(&g, "inputs", inputs, L->nb_in, sizeof *inputs),
                   chk_guard_in(&g, "outputs", outputs, L->nb_out, sizeof *outputs),
                   L->workspace ? chk_buf_ptr(c, &k->ws) : NULL, c->device,
                   c->device == PRT_DEVICE_CUDA ? c->stream : NULL));
        if (chk_guards_end(&g, c->call, why, sizeof why))
            chk_fail_at(c, k->shape, o->tactic, "", -1, "%s", why);
        /* Counted for the summary; the threads check runs from two threads. */
        if (st == PRT_OK)
            __atomic_add_fetch(&c->sh->runs, 1, __ATOMIC_RELAXED);
    }
    out->st = st;
    if (st != PRT_OK)
        snprintf(out->msg, sizeof out->msg, "%s: %s", c->call, chk_call_error(c));
    /* Even after a refusal: the plugin may have queued work before it. */
    if (c->device == PRT_DEVICE_CUDA) {
        if (chk_dev_after(c, k, why, sizeof why)) {
            snprintf(out->msg, sizeof out->msg, "%.300s, tactic %d: %.600s", k->shape,
                     (int)o->tactic, why);
            return device_failed(out);
        }
    }
    for (int32_t i = 0; i < L->nb_in; i++) {
        char name[16];
        snprintf(name, sizeof name, "in%d", (int)i);
        check_guard(out, &k->in[i], name, prt_dtype_size(L->sig.types[i]));
        if (aliased_by[i] < 0 && memcmp(k->in[i].data, k->in_ref[i], k->in[i].bytes)) {
            size_t b = 0, es = prt_dtype_size(L->sig.types[i]);
            int32_t by = -1;
            while (k->in[i].data[b] == k->in_ref[i][b])
                b++;
            for (int32_t p = 0; p < L->nb_out && by < 0; p++)
                by = L->alias[p] == i ? p : -1;
            if (by < 0)
                bounds_problem(
                    out, name, (int64_t)(b / es),
                    "%s, an input no output aliases, was written (element %lld)", name,
                    (long long)(b / es));
            else
                bounds_problem(
                    out, name, (int64_t)(b / es),
                    "%s was written (element %lld): out%d aliases it, but in a "
                    "run apart (as the builder's timing runs are) the input is "
                    "read-only and out%d holds its copy",
                    name, (long long)(b / es), (int)by, (int)by);
        }
    }
    for (int32_t p = 0; p < L->nb_out; p++) {
        char name[16];
        snprintf(name, sizeof name, "out%d", (int)p);
        check_guard(out, &k->out[p], name, prt_dtype_size(L->out_types[p]));
    }
    check_guard(out, &k->ws, "workspace", 1);
    /* Writes past a guard may have broken the heap: should the checker
     * crash from here on, its report says what the plugin wrote. */
    if (out->bounds[0]) {
        size_t n = strlen(c->sh->doing);
        snprintf(c->sh->doing + n, sizeof c->sh->doing - n, ", which wrote %.300s",
                 out->bounds);
    }
    if (st == PRT_OK)
        read_outputs(k, out);
    return st;
}

/* ---- comparison -------------------------------------------------------------- */

/* Relative and absolute tolerance of a float dtype for `tol`. */
static void tolerance(int32_t dtype, int32_t tol, double *rtol, double *atol)
{
    if (tol == CHK_TOL_DEVICES) {
        *rtol = dtype == PRT_FLOAT32   ? CHK_DEV_RTOL_F32
                : dtype == PRT_FLOAT16 ? CHK_DEV_RTOL_F16
                                       : CHK_DEV_RTOL_BF16;
        *atol = dtype == PRT_FLOAT32   ? CHK_DEV_ATOL_F32
                : dtype == PRT_FLOAT16 ? CHK_DEV_ATOL_F16
                                       : CHK_DEV_ATOL_BF16;
        return;
    }
    *rtol = dtype == PRT_FLOAT32   ? CHK_RTOL_F32
            : dtype == PRT_FLOAT16 ? CHK_RTOL_F16
                                   : CHK_RTOL_BF16;
    *atol = CHK_ATOL;
}

static int close_enough(int32_t dtype, int32_t tol, const void *a, const void *b,
                        int64_t i)
{
    double x, y, rtol, atol;
    if (cli_dtype_is_integer(dtype))
        return cli_element_i64(dtype, a, i) == cli_element_i64(dtype, b, i);
    x = cli_element(dtype, a, i);
    y = cli_element(dtype, b, i);
    if (isnan(x) || isnan(y))
        return isnan(x) && isnan(y);
    if (x == y)
        return 1;
    tolerance(dtype, tol, &rtol, &atol);
    return fabs(x - y) <= atol + rtol * fabs(y);
}

int chk_outcome_compare(const chk_case *k, const chk_outcome *got, const chk_outcome *ref,
                        int32_t tol, int32_t *out_tensor, int64_t *out_element, char *why,
                        size_t cap)
{
    const chk_layer *L = k->L;
    /* "is 3, before 4" or "is 3 on CUDA, 4 on the CPU" */
    const char *on = tol == CHK_TOL_DEVICES ? " on CUDA" : "";
    const char *then = tol == CHK_TOL_DEVICES ? "" : "before ";
    const char *there = tol == CHK_TOL_DEVICES ? " on the CPU" : "";
    for (int32_t o = 0; o < L->nb_out; o++) {
        int32_t t = L->out_types[o];
        char a[PRT_MAX_DIMS * 24], b[PRT_MAX_DIMS * 24];
        *out_tensor = o;
        *out_element = -1;
        if (got->count[o] != ref->count[o] ||
            !chk_dims_equal(&got->true_dims[o], &ref->true_dims[o])) {
            snprintf(why, cap, "out%d has dims %s%s, %s%s%s", (int)o,
                     cli_format_dims(&got->true_dims[o], a, sizeof a), on, then,
                     cli_format_dims(&ref->true_dims[o], b, sizeof b), there);
            return -1;
        }
        for (int64_t i = 0; i < ref->count[o]; i++)
            if (!close_enough(t, tol, got->data[o], ref->data[o], i)) {
                *out_element = i;
                snprintf(why, cap, "out%d element %lld is %.9g%s, %s%.9g%s", (int)o,
                         (long long)i, cli_element(t, got->data[o], i), on, then,
                         cli_element(t, ref->data[o], i), there);
                return -1;
            }
    }
    return 0;
}

int64_t chk_unwritten(int32_t dtype, const chk_outcome *a, const chk_outcome *b,
                      int32_t output)
{
    size_t es = prt_dtype_size(dtype);
    unsigned char p1[16], p2[16];
    int64_t n = a->count[output] < b->count[output] ? a->count[output] : b->count[output];
    poison_element(es, 1, p1);
    poison_element(es, 2, p2);
    for (int64_t i = 0; i < n; i++)
        if (memcmp(a->data[output] + (size_t)i * es, p1, es) == 0 &&
            memcmp(b->data[output] + (size_t)i * es, p2, es) == 0)
            return i;
    return -1;
}

/* ---- finding a case that runs ---------------------------------------------------- */

int chk_find_case(chk_ctx *c, const chk_sig *sig, chk_rng *r, int zero_input, int sparse,
                  chk_layer *L, chk_case *k, chk_obj *o, chk_outcome *first)
{
    char last[CHK_MSG] = "";
    int rc = CHK_REFUSED;
    memset(k, 0, sizeof *k);
    for (int tied = 0; tied <= (sig->nb_in > 1); tied++)
        for (int pa = 0; pa < 3; pa++) {
            chk_mode mode = {tied, zero_input};
            memset(L, 0, sizeof *L);
            rc = chk_layer_setup(c, sig, r, mode, 4, L);
            /* A wrong aliasing answer is the alias check's to report; the
             * other checks run without aliasing. */
            if (rc == CHK_OK && chk_layer_alias(L) != CHK_OK) {
                snprintf(L->alias_problem, sizeof L->alias_problem, "%s", L->why);
                for (int32_t p = 0; p < L->nb_out; p++)
                    L->alias[p] = -1;
            }
            if (rc == CHK_BROKEN)
                return rc;
            if (rc == CHK_REFUSED) {
                snprintf(last, sizeof last, "%s", L->why);
                chk_layer_close(L);
                continue;
            }
            for (int sa = 0; sa < 4; sa++) {
                prt_dims dims[CHK_MAX_DIMSETS];
                chk_layer_draw(L, r, dims);
                memset(o, 0, sizeof *o);
                o->p = L->p;
                if (chk_case_init(k, L, dims, r, sparse) == 0 &&
                    chk_run(c, k, o, 1, 0, first) == PRT_OK)
                    return CHK_OK;
                if (first->device_failed) {
                    /* A kernel's fault is no refusal (and ends the device). */
                    snprintf(L->why, sizeof L->why, "%s", first->msg);
                    chk_outcome_free(first);
                    return CHK_BROKEN;
                }
                snprintf(last, sizeof last, "%s", first->st ? first->msg : L->why);
                chk_outcome_free(first);
                chk_case_free(k);
            }
            chk_layer_close(L);
        }
    memset(L, 0, sizeof *L);
    snprintf(L->why, sizeof L->why, "%s", last[0] ? last : "nothing ran");
    return CHK_REFUSED;
}

static void rcase_free(chk_rcase *x)
{
    chk_outcome_free(&x->ref);
    chk_case_free(&x->k);
    chk_layer_close(&x->L);
}

int32_t chk_for_cases(chk_ctx *c, int zero_input, chk_case_fn fn, void *user,
                      int32_t *refused)
{
    int32_t ran = 0, nb_refused = 0;
    char last[CHK_MSG] = "";
    for (int32_t s = 0; s < c->plan->nb_sigs && !chk_failed(c); s++) {
        const chk_sig *sig = &c->plan->sigs[s];
        if (zero_input >= 0 && !chk_sig_can_be_empty(sig, zero_input))
            continue;
        for (int32_t it = 0; it < c->iterations && !chk_failed(c); it++) {
            chk_rcase x;
            int rc;
            memset(&x, 0, sizeof x);
            rc = chk_find_case(c, sig, &c->rng, zero_input, it & 1, &x.L, &x.k, &x.o,
                               &x.ref);
            if (rc == CHK_BROKEN) {
                chk_fail(c, "%s", x.L.why);
            } else if (rc == CHK_REFUSED) {
                nb_refused++;
                snprintf(last, sizeof last, "%s", x.L.why);
            } else {
                ran++;
                fn(c, &x, user);
            }
            rcase_free(&x);
        }
    }
    if (refused)
        *refused = nb_refused;
    if (zero_input < 0 && ran == 0)
        chk_fail(c,
                 "no shape within a profile the plugin accepts runs (last refusal: %s)",
                 last[0] ? last : "none");
    return ran;
}

/* ---- against the reference ------------------------------------------------------ */

int chk_differs(chk_ctx *c, const chk_case *k, int32_t tactic, const chk_outcome *got,
                const chk_outcome *ref, const char *what)
{
    int32_t t;
    int64_t e;
    char why[CHK_MSG], name[16];
    if (got->st != PRT_OK) {
        chk_fail_at(c, k->shape, tactic, "", -1, "%s fails where the reference ran: %s",
                    what, got->msg);
        return 1;
    }
    if (chk_outcome_compare(k, got, ref, CHK_TOL_SAME, &t, &e, why, sizeof why) == 0)
        return 0;
    snprintf(name, sizeof name, "out%d", (int)t);
    chk_fail_at(c, k->shape, tactic, name, e, "%s differs: %s", what, why);
    return 1;
}

static int64_t case_size(const chk_layer *L, const prt_dims *dims)
{
    int64_t n = 0;
    for (int32_t i = 0; i < L->nb_in; i++)
        n += chk_volume(&dims[i]);
    for (int32_t k = 0; k < L->sig.nb_shape; k++)
        for (int32_t v = 0; v < dims[L->nb_in + k].nb_dims; v++)
            n += dims[L->nb_in + k].d[v];
    return n;
}

int64_t chk_case_size(const chk_case *k)
{
    return case_size(k->L, k->in_dims);
}

int chk_other_case(chk_ctx *c, chk_rcase *x, chk_case *k2, chk_outcome *ref2)
{
    prt_dims dims[CHK_MAX_DIMSETS], draw[CHK_MAX_DIMSETS];
    int64_t size = case_size(&x->L, x->k.in_dims);
    memset(k2, 0, sizeof *k2);
    memset(ref2, 0, sizeof *ref2);
    for (int a = 0; a < 4; a++) {
        /* Of 8 draws, the size farthest from x's: state a plugin keeps per
         * size, shared where it must not be, shows only between cases of
         * different sizes, and the more surely the more they differ. */
        int64_t best = -1;
        for (int d = 0; d < 8; d++) {
            int64_t apart;
            chk_layer_draw(&x->L, &c->rng, draw);
            apart = case_size(&x->L, draw) - size;
            apart = apart < 0 ? -apart : apart;
            if (apart > best) {
                best = apart;
                memcpy(dims, draw, sizeof dims);
            }
        }
        if (chk_case_init(k2, &x->L, dims, &c->rng, 0) == 0 &&
            chk_run(c, k2, &x->o, 1, 0, ref2) == PRT_OK)
            return 0;
        chk_outcome_free(ref2);
        chk_case_free(k2);
    }
    return -1;
}
