/*
 * The build contract: outputs (count and dtypes, and discovery of what the
 * plugin accepts), shapes (expressions consistent with the same shapes as
 * constants), size tensors, format negotiation reading only positions up
 * to pos, workspace monotone in the profile, stated output values.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_layer.h"
#include "check_run.h"

/* ---- outputs ------------------------------------------------------------------- */

static void dtype_list(const chk_layer *L, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int32_t o = 0; o < L->nb_out && n < cap; o++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", o ? ", " : "",
                              prt_dtype_name(L->out_types[o]));
}

/* The same dtypes from a second call and from a second plugin. (Clones are
 * the clone check's: one that frees what its original still holds would
 * end this check before the plan is known.) */
static int dtypes_stable(chk_ctx *c, chk_layer *L, char *why, size_t cap)
{
    chk_layer L2;
    int32_t again[CHK_MAX_OUT];
    int rc;
    chk_call_begin(c, "get_output_dtypes, a second time");
    if (chk_call_end(c, L->p->vt->build->get_output_dtypes(L->p, again, L->nb_out,
                                                           L->sig.types, L->nb_in)) ||
        memcmp(again, L->out_types, sizeof(int32_t) * (size_t)L->nb_out))
        return chk_say(why, cap,
                       "get_output_dtypes answers differently when asked again");
    memset(&L2, 0, sizeof L2);
    rc = L->sig.static_dims ? CHK_OK : chk_layer_open(c, &L->sig, NULL, &L2);
    if (!L->sig.static_dims &&
        (rc != CHK_OK || L2.nb_out != L->nb_out ||
         memcmp(L2.out_types, L->out_types, sizeof(int32_t) * (size_t)L->nb_out))) {
        chk_layer_close(&L2);
        return chk_say(why, cap,
                       "a second plugin of the same fields answers differently");
    }
    chk_layer_close(&L2);
    return 0;
}

void chk_check_outputs(chk_ctx *c)
{
    chk_plan *plan = &c->sh->plan;
    char why[CHK_MSG], sig[256], types[512] = "";
    uint32_t devices = 0;
    prt_plugin *p = chk_create(c, PRT_PHASE_BUILD, c->fields, NULL);
    int rc;
    if (!p) {
        /* The abi check said so already; nothing can be tested. */
        plan->done = 1;
        snprintf(plan->why, sizeof plan->why,
                 "the creator refuses its %s fields%s: %.700s",
                 c->fields->nb_fields ? "example" : "default",
                 c->fields->nb_fields ? "" : " (give example values with --fields)",
                 chk_call_error(c));
        chk_skip(c, "%s", plan->why);
        return;
    }
    chk_call_begin(c, "core.devices");
    devices = p->vt->core->devices(p);
    chk_call_end(c, PRT_OK);
    chk_destroy(c, p);
    rc = chk_discover(c, why, sizeof why);
    plan->devices = devices;
    plan->done = 1;
    if (rc == CHK_BROKEN) {
        chk_fail(c, "%s", why);
        return;
    }
    if (plan->nb_sigs == 0) {
        chk_skip(c, "%s", plan->why);
        return;
    }
    for (int32_t s = 0; s < plan->nb_sigs; s++) {
        chk_layer L;
        chk_mode mode = {0, -1};
        memset(&L, 0, sizeof L);
        chk_rng_init(&c->rng, c->seed, 100 + (uint64_t)s);
        rc = chk_layer_setup(c, &plan->sigs[s], &c->rng, mode, 4, &L);
        if (rc == CHK_OK && dtypes_stable(c, &L, why, sizeof why) != 0)
            rc = CHK_BROKEN;
        else if (rc != CHK_OK)
            snprintf(why, sizeof why, "%s", L.why);
        if (rc == CHK_OK && s == 0) {
            dtype_list(&L, types, sizeof types);
            plan->nb_outputs = L.nb_out;
        }
        chk_layer_close(&L);
        if (rc == CHK_BROKEN) {
            chk_fail(c, "%s: %s", chk_sig_str(&plan->sigs[s], sig, sizeof sig), why);
            return;
        }
    }
    chk_pass(c, "%d output%s (%s); testing %s", (int)plan->nb_outputs,
             plan->nb_outputs == 1 ? "" : "s", types,
             chk_plan_str(plan, sig, sizeof sig));
}

/* ---- shapes ------------------------------------------------------------------- */

/* The output dims from the same shapes given as constants (a second
 * plugin opened on them): 0 when the same as `sym`, -1 with why when not,
 * 1 when the plugin refuses the constants, which it may where it could not
 * check the symbols (AddInPlace's equal dims): no disagreement. */
static int constant_dims(chk_ctx *c, chk_layer *K, const chk_layer *L, const prt_dims *S,
                         const prt_dims *sym, char *why, size_t cap)
{
    prt_dims b[CHK_MAX_OUT];
    char x[PRT_MAX_DIMS * 24], y[PRT_MAX_DIMS * 24];
    int rc = chk_layer_open(c, &L->sig, S, K);
    if (rc == CHK_REFUSED)
        return 1;
    if (rc == CHK_BROKEN)
        return chk_say(why, cap, "with constant input dims: %s", K->why);
    if (memcmp(K->out_types, L->out_types, sizeof(int32_t) * (size_t)L->nb_out))
        return chk_say(why, cap, "output dtypes differ with constant input dims");
    if (chk_pool_size_count(K->pool) != chk_pool_size_count(L->pool))
        return chk_say(
            why, cap, "%d size tensors with symbolic input dims, %d with constant ones",
            (int)chk_pool_size_count(L->pool), (int)chk_pool_size_count(K->pool));
    if (chk_layer_out_dims(K, S, NULL, b) != 0)
        return chk_say(why, cap, "with constant input dims: %s", K->why);
    for (int32_t o = 0; o < L->nb_out; o++) {
        if (!chk_dims_equal(&sym[o], &b[o]))
            return chk_say(
                why, cap,
                "output %d is %s from symbolic input dims but %s from the same "
                "dims as constants",
                (int)o, cli_format_dims(&sym[o], x, sizeof x),
                cli_format_dims(&b[o], y, sizeof y));
        for (int32_t d = 0; d < b[o].nb_dims; d++)
            if (!chk_pool_has_size(K->pool, K->out_exprs[o].d[d]) &&
                !chk_pool_is_const(K->pool, K->out_exprs[o].d[d], NULL))
                return chk_say(
                    why, cap, "output %d dim %d is no constant though every input dim is",
                    (int)o, (int)d);
    }
    return 0;
}

/* Output dims from symbolic dims are valid at S and agree with those from
 * the same shapes as constants (constant_dims' answer). */
static int shapes_agree(chk_ctx *c, chk_layer *L, const prt_dims *S, char *why,
                        size_t cap)
{
    chk_layer K;
    prt_dims a[CHK_MAX_OUT];
    int rc;
    if (chk_layer_out_dims(L, S, NULL, a) != 0)
        return chk_say(why, cap, "%s", L->why);
    memset(&K, 0, sizeof K);
    rc = constant_dims(c, &K, L, S, a, why, cap);
    chk_layer_close(&K);
    return rc;
}

void chk_check_shapes(chk_ctx *c)
{
    int32_t cases = 0, compared = 0;
    for (int32_t s = 0; s < c->plan->nb_sigs && !chk_failed(c); s++)
        for (int32_t it = 0; it < c->iterations && !chk_failed(c); it++) {
            const chk_sig *sig = &c->plan->sigs[s];
            chk_layer L;
            chk_mode mode = {it & 1, -1};
            char why[CHK_MSG], shape[512];
            int rc;
            memset(&L, 0, sizeof L);
            rc = chk_layer_setup(c, sig, &c->rng, mode, 4, &L);
            if (rc == CHK_BROKEN)
                chk_fail(c, "%s", L.why);
            for (int32_t k = 0; rc == CHK_OK && k < 3 && !chk_failed(c); k++) {
                prt_dims S[CHK_MAX_DIMSETS], out[CHK_MAX_OUT];
                chk_layer_draw(&L, &c->rng, S);
                chk_shape_str(&L, S, shape, sizeof shape);
                cases++;
                if (chk_layer_out_dims(&L, S, NULL, out) != 0) {
                    chk_fail_at(c, shape, -1, "", -1, "%s", L.why);
                } else if (!sig->static_dims) {
                    int agree = shapes_agree(c, &L, S, why, sizeof why);
                    if (agree < 0)
                        chk_fail_at(c, shape, -1, "", -1, "%s", why);
                    compared += agree == 0;
                }
            }
            chk_layer_close(&L);
        }
    if (cases == 0)
        chk_skip(c, "no profile was accepted");
    else
        chk_pass(c,
                 "output dims valid at %d random shapes; at %d the same as from constant "
                 "input dims",
                 (int)cases, (int)compared);
}

/* ---- size tensors --------------------------------------------------------------- */

static int sizes_sane(chk_layer *L, const prt_dims *S, char *why, size_t cap)
{
    chk_env env = chk_layer_env(L, S, NULL);
    for (int32_t s = 0; s < chk_pool_size_count(L->pool); s++) {
        int64_t opt, upper;
        char e[256];
        int32_t o = chk_pool_size_output(L->pool, s);
        if (chk_pool_eval(L->pool, &env, chk_pool_size_opt(L->pool, s), &opt, e,
                          sizeof e) ||
            chk_pool_eval(L->pool, &env, chk_pool_size_upper(L->pool, s), &upper, e,
                          sizeof e))
            return chk_say(why, cap, "size tensor out%d: %s", (int)o, e);
        if (opt < 0 || upper < 0 || opt > upper)
            return chk_say(why, cap,
                           "size tensor out%d has opt %lld and upper bound %lld", (int)o,
                           (long long)opt, (long long)upper);
    }
    return 0;
}

typedef struct size_count {
    int32_t declared, runs;
} size_count;

static void size_case(chk_ctx *c, chk_rcase *x, void *user)
{
    size_count *n = user;
    char why[CHK_MSG];
    if (chk_pool_size_count(x->L.pool) == 0)
        return;
    n->declared = chk_pool_size_count(x->L.pool);
    n->runs++;
    if (x->L.size_problem[0])
        chk_fail(c, "%s", x->L.size_problem);
    else if (sizes_sane(&x->L, x->k.in_dims, why, sizeof why))
        chk_fail_at(c, x->k.shape, 0, "", -1, "%s", why);
    else if (x->ref.size_bad[0])
        chk_fail_at(c, x->k.shape, 0, x->ref.size_bad_tensor, 0, "%s", x->ref.size_bad);
}

void chk_check_size_tensors(chk_ctx *c)
{
    size_count n = {0, 0};
    chk_for_cases(c, -1, size_case, &n, NULL);
    if (n.declared == 0)
        chk_skip(c, "the plugin declares no size tensors");
    else
        chk_pass(c,
                 "%d size tensor%s: 0-D integers, 0 <= opt <= upper bound, values within "
                 "it in %d runs",
                 (int)n.declared, n.declared == 1 ? "" : "s", (int)n.runs);
}

/* ---- formats ----------------------------------------------------------------- */

/* Positions above pos changed to anything: dtypes, formats, dims, bounds. */
static void scramble_above(chk_rng *r, prt_dynamic_tensor_desc *d, int32_t n, int32_t pos)
{
    for (int32_t q = pos + 1; q < n; q++) {
        int32_t rank = (int32_t)chk_rand_range(r, 0, PRT_MAX_DIMS);
        d[q].desc.dtype = (int32_t)chk_rand_range(r, -1, PRT_DTYPE_COUNT);
        d[q].desc.format =
            chk_rand(r) & 1 ? PRT_FORMAT_LINEAR : (int32_t)(chk_rand(r) % 7);
        d[q].desc.dims.nb_dims = d[q].min.nb_dims = d[q].opt.nb_dims = d[q].max.nb_dims =
            rank;
        for (int32_t k = 0; k < rank; k++) {
            d[q].desc.dims.d[k] = chk_rand_range(r, -1, 99);
            d[q].min.d[k] = chk_rand_range(r, 0, 9);
            d[q].opt.d[k] = chk_rand_range(r, 0, 99);
            d[q].max.d[k] = chk_rand_range(r, 0, 999);
        }
    }
}

static int32_t ask(chk_ctx *c, chk_layer *L, int32_t pos,
                   const prt_dynamic_tensor_desc *d)
{
    int32_t ok;
    chk_guards g = {0};
    char why[CHK_MSG];
    chk_call_begin(c, "supports_format_combination(pos %d)", (int)pos);
    ok = L->p->vt->build->supports_format_combination(
        L->p, pos, chk_guard_in(&g, "in_out", d, L->nb_in + L->nb_out, sizeof *d),
        L->nb_in, L->nb_out);
    chk_call_end(c, PRT_OK);
    if (chk_guards_end(&g, c->call, why, sizeof why))
        chk_fail(c, "%s", why);
    return ok;
}

void chk_check_formats(chk_ctx *c)
{
    int32_t asked = 0;
    for (int32_t s = 0; s < c->plan->nb_sigs && !chk_failed(c); s++)
        for (int32_t it = 0; it < c->iterations && !chk_failed(c); it++) {
            chk_layer L;
            chk_mode mode = {it & 1, -1};
            int32_t n;
            memset(&L, 0, sizeof L);
            if (chk_layer_setup(c, &c->plan->sigs[s], &c->rng, mode, 4, &L) != CHK_OK) {
                chk_layer_close(&L);
                continue;
            }
            n = L.nb_in + L.nb_out;
            for (int32_t pos = 0; pos < n && !chk_failed(c); pos++)
                for (int32_t t = -1; t < PRT_DTYPE_COUNT && !chk_failed(c); t++) {
                    prt_dynamic_tensor_desc d[CHK_MAX_IO];
                    int32_t base;
                    char shape[512];
                    memcpy(d, L.descs, sizeof d[0] * (size_t)n);
                    if (t >= 0) /* another candidate at pos itself */
                        d[pos].desc.dtype = t;
                    base = ask(c, &L, pos, d);
                    for (int v = 0; v < 4 && !chk_failed(c); v++) {
                        int32_t again;
                        scramble_above(&c->rng, d, n, pos);
                        again = ask(c, &L, pos, d);
                        asked++;
                        if (again != base) {
                            chk_shape_str(&L, L.popt, shape, sizeof shape);
                            chk_fail_at(
                                c, shape, -1, "", -1,
                                "supports_format_combination(pos %d, %s) answers %d, "
                                "then %d once positions above %d change: it reads "
                                "entries above pos",
                                (int)pos, prt_dtype_name(d[pos].desc.dtype), (int)base,
                                (int)again, (int)pos);
                        }
                    }
                }
            chk_layer_close(&L);
        }
    if (asked == 0)
        chk_skip(c, "no profile was accepted");
    else
        chk_pass(c,
                 "answers depend only on positions <= pos (%d questions with the "
                 "later positions changed)",
                 (int)asked);
}

/* ---- workspace ---------------------------------------------------------------- */

/* The workspace of a profile with the maxima `bigger` (min and opt kept):
 * with constant dims, a second plugin opened on them. 0 and *ws, or -1
 * when the plugin refuses that profile (no comparison then). */
static int larger_profile(chk_ctx *c, chk_layer *L, const prt_dims *bigger, int64_t *ws)
{
    prt_dynamic_tensor_desc d[CHK_MAX_IO];
    chk_layer K;
    int rc;
    if (!L->sig.static_dims) {
        rc = chk_layer_descs(L, L->pmin, L->popt, bigger, d) == CHK_OK &&
             chk_layer_formats(L, d) == CHK_OK && chk_layer_configure(L, d) == CHK_OK;
        *ws = L->workspace;
        return rc ? 0 : -1;
    }
    memset(&K, 0, sizeof K);
    rc = chk_layer_open(c, &L->sig, bigger, &K) == CHK_OK &&
         chk_layer_descs(&K, bigger, bigger, bigger, K.descs) == CHK_OK &&
         chk_layer_formats(&K, K.descs) == CHK_OK &&
         chk_layer_configure(&K, K.descs) == CHK_OK;
    *ws = K.workspace;
    chk_layer_close(&K);
    return rc ? 0 : -1;
}

void chk_check_workspace(chk_ctx *c)
{
    int32_t pairs = 0;
    int64_t largest = 0;
    for (int32_t s = 0; s < c->plan->nb_sigs && !chk_failed(c); s++)
        for (int32_t it = 0; it < c->iterations && !chk_failed(c); it++) {
            chk_layer L;
            chk_mode mode = {it & 1, -1};
            prt_dims bigger[CHK_MAX_DIMSETS];
            int64_t small, ws;
            char shape[512];
            memset(&L, 0, sizeof L);
            if (chk_layer_setup(c, &c->plan->sigs[s], &c->rng, mode, 4, &L) != CHK_OK ||
                !CHK_BUILD(L.p, get_workspace_size)) {
                chk_layer_close(&L);
                continue;
            }
            small = L.workspace;
            /* The same profile with larger maxima: the same or more bytes
             * (the relation of the inputs' dims kept). */
            memcpy(bigger, L.pmax, sizeof bigger);
            chk_layer_grow(&L, &c->rng, bigger);
            if (larger_profile(c, &L, bigger, &ws) == 0) {
                pairs++;
                largest = ws > largest ? ws : largest;
                if (ws < small) {
                    chk_shape_str(&L, bigger, shape, sizeof shape);
                    chk_fail_at(c, shape, -1, "workspace", -1,
                                "get_workspace_size asks %lld bytes for a profile with "
                                "these maxima but %lld for one with smaller maxima",
                                (long long)ws, (long long)small);
                }
            }
            chk_layer_close(&L);
        }
    if (pairs == 0)
        chk_skip(c, "get_workspace_size is NULL or no profile pair was accepted");
    else
        chk_pass(c,
                 "never shrinks as a profile grows (%d pairs of profiles; at most %lld "
                 "bytes)",
                 (int)pairs, (long long)largest);
}

/* ---- values ------------------------------------------------------------------- */

typedef struct value_count {
    int32_t compared, entry;
} value_count;

static void values_case(chk_ctx *c, chk_rcase *x, void *user)
{
    value_count *n = user;
    const chk_layer *L = &x->L;
    chk_env env = chk_layer_env(L, x->k.in_dims, x->ref.sizes);
    n->entry |= CHK_BUILD(L->p, get_output_values) != NULL;
    if (L->values_problem[0]) {
        chk_fail(c, "%s", L->values_problem);
        return;
    }
    for (int32_t p = 0; p < L->nb_out && !chk_failed(c); p++)
        for (int32_t v = 0; v < L->out_values[p].nb_dims && !chk_failed(c); v++) {
            const void *data = x->ref.data[p];
            int64_t want, got;
            char why[256], name[16];
            n->compared++;
            snprintf(name, sizeof name, "out%d", (int)p);
            if (chk_pool_eval(L->pool, &env, L->out_values[p].d[v], &want, why,
                              sizeof why)) {
                chk_fail_at(c, x->k.shape, 0, name, v, "out%d value %d: %s", (int)p,
                            (int)v, why);
                return;
            }
            got = L->out_types[p] == PRT_INT32   ? ((const int32_t *)data)[v]
                  : L->out_types[p] == PRT_INT64 ? ((const int64_t *)data)[v]
                                                 : ((const uint8_t *)data)[v];
            if (got != want)
                chk_fail_at(c, x->k.shape, 0, name, v,
                            "get_output_values states out%d value %d = %lld, enqueue "
                            "writes %lld",
                            (int)p, (int)v, (long long)want, (long long)got);
        }
}

void chk_check_values(chk_ctx *c)
{
    value_count n = {0, 0};
    chk_for_cases(c, -1, values_case, &n, NULL);
    if (n.compared == 0)
        chk_skip(c, "the plugin states no output values (%s)",
                 n.entry ? "get_output_values states none" : "get_output_values is NULL");
    else
        chk_pass(c, "%d stated values agree with what enqueue computes", (int)n.compared);
}
