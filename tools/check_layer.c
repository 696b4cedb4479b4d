/* A plugin driven as the builder drives a layer, and discovery of what it
 * accepts (check_layer.h). */
#include "check_layer.h"
#include "check_case.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Dtypes in the order they are tried: the likely ones first. */
static const int32_t try_dtypes[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16, PRT_INT32,
                                     PRT_INT64,   PRT_INT8,    PRT_UINT8,    PRT_BOOL};
#define NB_TRY_DTYPES (int32_t)(sizeof try_dtypes / sizeof try_dtypes[0])

/* The largest dim of a random rank-r tensor: d^r stays within
 * CHK_VOLUME_CAP, and at least 2 so every rank has some room. */
static int64_t dim_cap(int32_t rank)
{
    int64_t d = 2;
    if (rank <= 0)
        return 1;
    for (;;) {
        int64_t v = 1;
        for (int32_t i = 0; i < rank && v <= CHK_VOLUME_CAP; i++)
            v *= d + 1;
        if (v > CHK_VOLUME_CAP || d + 1 > CHK_DIM_CAP)
            return d;
        d++;
    }
}

int chk_dims_equal(const prt_dims *a, const prt_dims *b)
{
    if (a->nb_dims != b->nb_dims)
        return 0;
    for (int32_t k = 0; k < a->nb_dims; k++)
        if (a->d[k] != b->d[k])
            return 0;
    return 1;
}

/* "; 1 shape input of 2 values" (nothing without shape inputs). */
static size_t shape_inputs_str(const chk_sig *s, char *buf, size_t cap)
{
    size_t n;
    if (s->nb_shape == 0 || cap == 0)
        return 0;
    n = (size_t)snprintf(buf, cap, "; %d shape input%s of ", (int)s->nb_shape,
                         s->nb_shape == 1 ? "" : "s");
    for (int32_t k = 0; k < s->nb_shape && n < cap; k++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%d", k ? "|" : "",
                              (int)s->shape_len[k]);
    if (n < cap)
        n += (size_t)snprintf(buf + n, cap - n, " value%s",
                              s->nb_shape == 1 && s->shape_len[0] == 1 ? "" : "s");
    return n < cap ? n : cap;
}

char *chk_sig_str(const chk_sig *s, char *buf, size_t cap)
{
    size_t n =
        (size_t)snprintf(buf, cap, "%d input%s", (int)s->nb_in, s->nb_in == 1 ? "" : "s");
    for (int32_t i = 0; i < s->nb_in && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s rank %d", i ? ", " : ": ",
                              prt_dtype_name(s->types[i]), (int)s->ranks[i]);
    if (n < cap)
        n += shape_inputs_str(s, buf + n, cap - n);
    if (s->static_dims && n < cap)
        snprintf(buf + n, cap - n, " (static dims)");
    return buf;
}

char *chk_plan_str(const chk_plan *plan, char *buf, size_t cap)
{
    int32_t nb_in = plan->nb_sigs ? plan->sigs[0].nb_in : 0;
    size_t n =
        (size_t)snprintf(buf, cap, "%d input%s", (int)nb_in, nb_in == 1 ? "" : "s");
    for (int32_t i = 0; i < nb_in && n < cap; i++) {
        uint32_t types = 0, ranks = 0;
        const char *sep = "";
        for (int32_t s = 0; s < plan->nb_sigs; s++) {
            types |= 1u << plan->sigs[s].types[i];
            ranks |= 1u << plan->sigs[s].ranks[i];
        }
        n += (size_t)snprintf(buf + n, cap - n, "%sin%d ", i ? "; " : ": ", (int)i);
        for (int32_t t = 0; t < PRT_DTYPE_COUNT && n < cap; t++)
            if (types & (1u << t)) {
                n += (size_t)snprintf(buf + n, cap - n, "%s%s", sep, prt_dtype_name(t));
                sep = "|";
            }
        sep = "";
        n += n < cap ? (size_t)snprintf(buf + n, cap - n, ", rank ") : 0;
        for (int32_t r = 0; r <= PRT_MAX_DIMS && n < cap; r++)
            if (ranks & (1u << r)) {
                n += (size_t)snprintf(buf + n, cap - n, "%s%d", sep, (int)r);
                sep = "|";
            }
    }
    if (plan->nb_sigs && plan->sigs[0].nb_shape && n < cap) {
        /* The numbers of values of every signature, as the ranks. */
        uint32_t lens = 0;
        const char *sep = "";
        for (int32_t s = 0; s < plan->nb_sigs; s++)
            for (int32_t k = 0; k < plan->sigs[s].nb_shape; k++)
                lens |= 1u << plan->sigs[s].shape_len[k];
        n += (size_t)snprintf(buf + n, cap - n, "; %d shape input%s of ",
                              (int)plan->sigs[0].nb_shape,
                              plan->sigs[0].nb_shape == 1 ? "" : "s");
        for (int32_t v = 0; v <= PRT_MAX_DIMS && n < cap; v++)
            if (lens & (1u << v)) {
                n += (size_t)snprintf(buf + n, cap - n, "%s%d", sep, (int)v);
                sep = "|";
            }
        n += n < cap ? (size_t)snprintf(buf + n, cap - n, " values") : 0;
    }
    if (plan->nb_sigs && plan->sigs[0].static_dims && n < cap)
        snprintf(buf + n, cap - n, " (constant dims only)");
    return buf;
}

char *chk_shape_str(const chk_layer *L, const prt_dims *in_dims, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < L->nb_in && n < cap; i++) {
        char d[PRT_MAX_DIMS * 24];
        n += (size_t)snprintf(buf + n, cap - n, "%sin%d %s %s", i ? ", " : "", (int)i,
                              prt_dtype_name(L->sig.types[i]),
                              cli_format_dims(&in_dims[i], d, sizeof d));
    }
    if (L->nb_in == 0)
        n = (size_t)snprintf(buf, cap, "no inputs");
    for (int32_t k = 0; k < L->sig.nb_shape && n < cap; k++) {
        const prt_dims *v = &in_dims[L->nb_in + k];
        n += (size_t)snprintf(buf + n, cap - n, ", shape%d (", (int)k);
        for (int32_t j = 0; j < v->nb_dims && n < cap; j++)
            n += (size_t)snprintf(buf + n, cap - n, "%s%lld", j ? ", " : "",
                                  (long long)v->d[j]);
        n += n < cap ? (size_t)snprintf(buf + n, cap - n, ")") : 0;
    }
    return buf;
}

chk_env chk_layer_env(const chk_layer *L, const prt_dims *dims, const int64_t *sizes)
{
    chk_env env = {L->nb_in + L->sig.nb_shape, dims, sizes};
    return env;
}

/* ---- open: dtypes, shapes, values -------------------------------------------- */

static int refused(chk_layer *L, const char *what)
{
    snprintf(L->why, sizeof L->why, "%s refuses %s: %s", L->c->call, what,
             chk_call_error(L->c));
    return CHK_REFUSED;
}

static int broken(chk_layer *L, const char *fmt, ...) CLI_PRINTF(2, 3);
static int broken(chk_layer *L, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(L->why, sizeof L->why, fmt, ap);
    va_end(ap);
    return CHK_BROKEN;
}

/* After an entry given guarded arrays (check_case.h): a write past one,
 * or into one it may only read, fails the check that made the call. */
static int guards_end(chk_layer *L, chk_guards *g)
{
    char why[CHK_MSG];
    if (chk_guards_end(g, L->c->call, why, sizeof why) == 0)
        return CHK_OK;
    chk_fail(L->c, "%s", why);
    return broken(L, "%s", why);
}

static int open_dtypes(chk_layer *L)
{
    chk_ctx *c = L->c;
    char sig[256];
    chk_guards g = {0};
    prt_status st;
    int32_t *out;
    for (int32_t o = 0; o < L->nb_out; o++)
        L->out_types[o] = -1;
    chk_call_begin(c, "get_output_dtypes (%s)", chk_sig_str(&L->sig, sig, sizeof sig));
    out = chk_guard_out(&g, "out_types", L->out_types, L->nb_out, sizeof *out);
    st = chk_call_end(c, L->p->vt->build->get_output_dtypes(
                             L->p, out, L->nb_out,
                             chk_guard_in(&g, "in_types", L->sig.types, L->nb_in,
                                          sizeof L->sig.types[0]),
                             L->nb_in));
    if (guards_end(L, &g))
        return CHK_BROKEN;
    if (st)
        return refused(L, "these input dtypes");
    for (int32_t o = 0; o < L->nb_out; o++)
        if (prt_dtype_size(L->out_types[o]) == 0)
            return broken(L, "get_output_dtypes gives output %d the dtype %d", (int)o,
                          (int)L->out_types[o]);
    return CHK_OK;
}

/* Size tensors must be 0-D int32/int64 outputs: noted for the size-tensors
 * check. */
static void note_sizes(chk_layer *L)
{
    for (int32_t s = 0; s < chk_pool_size_count(L->pool); s++) {
        int32_t o = chk_pool_size_output(L->pool, s);
        if (L->out_exprs[o].nb_dims != 0 ||
            (L->out_types[o] != PRT_INT32 && L->out_types[o] != PRT_INT64)) {
            snprintf(L->size_problem, sizeof L->size_problem,
                     "output %d is declared a size tensor but is a %s tensor of rank %d "
                     "(a size tensor is 0-D int32 or int64)",
                     (int)o, prt_dtype_name(L->out_types[o]),
                     (int)L->out_exprs[o].nb_dims);
            return;
        }
    }
}

static int open_shapes(chk_layer *L)
{
    chk_ctx *c = L->c;
    char sig[256];
    prt_status st;
    chk_guards g = {0};
    const size_t es = sizeof(prt_dim_exprs);
    memset(L->out_exprs, 0, sizeof L->out_exprs);
    for (int32_t o = 0; o < L->nb_out; o++)
        L->out_exprs[o].nb_dims = -1;
    chk_pool_begin_shapes(L->pool, L->nb_out);
    chk_call_begin(c, "get_output_shapes (%s)", chk_sig_str(&L->sig, sig, sizeof sig));
    st = chk_call_end(
        c, L->p->vt->build->get_output_shapes(
               L->p, chk_guard_in(&g, "inputs", L->in_exprs, L->nb_in, es), L->nb_in,
               L->sig.nb_shape
                   ? chk_guard_in(&g, "shape_inputs", L->shape_exprs, L->sig.nb_shape, es)
                   : NULL,
               L->sig.nb_shape, chk_guard_out(&g, "outputs", L->out_exprs, L->nb_out, es),
               L->nb_out, chk_pool_builder(L->pool)));
    chk_pool_end_shapes(L->pool);
    if (guards_end(L, &g))
        return CHK_BROKEN;
    if (st)
        return refused(L, "these inputs");
    for (int32_t o = 0; o < L->nb_out; o++) {
        if (L->out_exprs[o].nb_dims < 0 || L->out_exprs[o].nb_dims > PRT_MAX_DIMS)
            return broken(L, "get_output_shapes gives output %d rank %d (0..%d)", (int)o,
                          (int)L->out_exprs[o].nb_dims, PRT_MAX_DIMS);
        for (int32_t d = 0; d < L->out_exprs[o].nb_dims; d++)
            if (!chk_pool_owns(L->pool, L->out_exprs[o].d[d]))
                return broken(L, "get_output_shapes gives output %d dim %d %s (%s)",
                              (int)o, (int)d,
                              L->out_exprs[o].d[d] ? "a pointer that is no expression"
                                                   : "no expression",
                              chk_pool_error(L->pool)[0] ? chk_pool_error(L->pool)
                                                         : "NULL returned");
    }
    note_sizes(L);
    return CHK_OK;
}

/* get_output_values, as the builder checks it (build.c: bld_layer_values);
 * a broken statement is noted for the values check. */
static int open_values(chk_layer *L)
{
    chk_ctx *c = L->c;
    prt_dim_exprs in_values[CHK_MAX_IN];
    prt_status st;
    chk_guards g = {0};
    const size_t es = sizeof(prt_dim_exprs);
    for (int32_t o = 0; o < L->nb_out; o++) {
        memset(&L->out_values[o], 0, sizeof L->out_values[o]);
        L->out_values[o].nb_dims = -1;
    }
    if (!CHK_BUILD(L->p, get_output_values))
        return CHK_OK;
    memset(in_values, 0, sizeof in_values);
    for (int32_t i = 0; i < L->nb_in; i++)
        in_values[i].nb_dims = -1; /* no input's values are known */
    chk_call_begin(c, "get_output_values");
    st = chk_call_end(
        c, CHK_BUILD(L->p, get_output_values)(
               L->p, chk_guard_in(&g, "in_dims", L->in_exprs, L->nb_in, es),
               chk_guard_in(&g, "in_values", in_values, L->nb_in, es), L->nb_in,
               chk_guard_out(&g, "out_values", L->out_values, L->nb_out, es), L->nb_out,
               chk_pool_builder(L->pool)));
    if (guards_end(L, &g))
        return CHK_BROKEN;
    if (st)
        return refused(L, "to state output values");
    for (int32_t o = 0; o < L->nb_out; o++) {
        const prt_dim_exprs *v = &L->out_values[o];
        int64_t count = 1, d;
        if (v->nb_dims < 0)
            continue;
        for (int32_t k = 0; k < L->out_exprs[o].nb_dims; k++)
            count = chk_pool_is_const(L->pool, L->out_exprs[o].d[k], &d) && count >= 0
                        ? count * d
                        : -1;
        if ((L->out_types[o] != PRT_INT32 && L->out_types[o] != PRT_INT64 &&
             L->out_types[o] != PRT_BOOL) ||
            L->out_exprs[o].nb_dims > 1 || v->nb_dims > PRT_MAX_DIMS ||
            count != v->nb_dims) {
            snprintf(L->values_problem, sizeof L->values_problem,
                     "output %d states %d values, but only a 0-D or 1-D int32/int64/bool "
                     "output of that static size can (it is %s, rank %d, size %lld)",
                     (int)o, (int)v->nb_dims, prt_dtype_name(L->out_types[o]),
                     (int)L->out_exprs[o].nb_dims, (long long)count);
            L->out_values[o].nb_dims = -1;
            continue;
        }
        for (int32_t k = 0; k < v->nb_dims; k++)
            if (!chk_pool_owns(L->pool, v->d[k])) {
                snprintf(L->values_problem, sizeof L->values_problem,
                         "output %d value %d has no expression", (int)o, (int)k);
                L->out_values[o].nb_dims = -1;
                break;
            }
        L->has_values |= L->out_values[o].nb_dims >= 0;
    }
    return CHK_OK;
}

int chk_layer_open(chk_ctx *c, const chk_sig *sig, const prt_dims *static_dims,
                   chk_layer *L)
{
    int rc;
    memset(L, 0, sizeof *L);
    L->c = c;
    L->sig = *sig;
    L->nb_in = sig->nb_in;
    L->refused_pos = -1;
    L->mode.zero_input = -1;
    L->pool = chk_pool_create();
    if (!L->pool)
        return broken(L, "out of memory");
    L->p = chk_create(c, PRT_PHASE_BUILD, c->fields, NULL);
    if (!L->p)
        return refused(L, "its fields");
    chk_call_begin(c, "build.nb_outputs");
    L->nb_out = L->p->vt->build->nb_outputs(L->p);
    chk_call_end(c, PRT_OK);
    if (L->nb_out < 1 || L->nb_out > CHK_MAX_OUT)
        return broken(L, "nb_outputs answers %d (1..%d)", (int)L->nb_out, CHK_MAX_OUT);
    for (int32_t i = 0; i < L->nb_in; i++) {
        L->in_exprs[i].nb_dims = sig->ranks[i];
        for (int32_t d = 0; d < sig->ranks[i]; d++)
            L->in_exprs[i].d[d] = static_dims
                                      ? chk_pool_const(L->pool, static_dims[i].d[d])
                                      : chk_pool_input_dim(L->pool, i, d);
    }
    /* A shape input's values are symbols as an input's dims are: value v
     * of shape input k is "dim" v of entry nb_in + k (chk_layer_env). */
    for (int32_t k = 0; k < sig->nb_shape; k++) {
        int32_t at = L->nb_in + k;
        L->shape_exprs[k].nb_dims = sig->shape_len[k];
        for (int32_t v = 0; v < sig->shape_len[k]; v++)
            L->shape_exprs[k].d[v] = static_dims
                                         ? chk_pool_const(L->pool, static_dims[at].d[v])
                                         : chk_pool_input_dim(L->pool, at, v);
    }
    if ((rc = open_dtypes(L)) || (rc = open_shapes(L)) || (rc = open_values(L)))
        return rc;
    return CHK_OK;
}

void chk_layer_close(chk_layer *L)
{
    if (L->p)
        chk_destroy(L->c, L->p);
    L->p = NULL;
    chk_pool_destroy(L->pool);
    L->pool = NULL;
}

/* ---- profiles, formats, configure ---------------------------------------------- */

int chk_layer_descs(chk_layer *L, const prt_dims *min, const prt_dims *opt,
                    const prt_dims *max, prt_dynamic_tensor_desc *descs)
{
    memset(descs, 0, sizeof *descs * (size_t)(L->nb_in + L->nb_out));
    for (int32_t i = 0; i < L->nb_in; i++) {
        prt_dynamic_tensor_desc *d = &descs[i];
        int64_t v;
        d->desc.dtype = L->sig.types[i];
        d->desc.format = PRT_FORMAT_LINEAR;
        d->desc.dims.nb_dims = L->sig.ranks[i];
        for (int32_t k = 0; k < L->sig.ranks[i]; k++)
            d->desc.dims.d[k] =
                chk_pool_is_const(L->pool, L->in_exprs[i].d[k], &v) ? v : -1;
        d->min = min[i];
        d->opt = opt[i];
        d->max = max[i];
    }
    for (int32_t o = 0; o < L->nb_out; o++) {
        prt_dynamic_tensor_desc *d = &descs[L->nb_in + o];
        const prt_dim_exprs *e = &L->out_exprs[o];
        char why[256];
        d->desc.dtype = L->out_types[o];
        d->desc.format = PRT_FORMAT_LINEAR;
        d->desc.dims.nb_dims = d->min.nb_dims = d->opt.nb_dims = d->max.nb_dims =
            e->nb_dims;
        for (int32_t k = 0; k < e->nb_dims; k++) {
            int64_t v;
            if (chk_pool_bounds(L->pool, L->nb_in + L->sig.nb_shape, min, opt, max,
                                e->d[k], &d->min.d[k], &d->opt.d[k], &d->max.d[k], why,
                                sizeof why))
                return broken(L, "output %d dim %d cannot be bounded: %s", (int)o, (int)k,
                              why);
            if (d->min.d[k] < 0)
                return broken(L, "output %d dim %d can be negative (down to %lld)",
                              (int)o, (int)k, (long long)d->min.d[k]);
            d->desc.dims.d[k] = chk_pool_is_const(L->pool, e->d[k], &v) ? v : -1;
        }
    }
    return CHK_OK;
}

int chk_layer_formats(chk_layer *L, prt_dynamic_tensor_desc *descs)
{
    chk_ctx *c = L->c;
    int32_t n = L->nb_in + L->nb_out;
    L->refused_pos = -1;
    for (int32_t pos = 0; pos < n; pos++) {
        int32_t ok;
        chk_guards g = {0};
        chk_call_begin(c, "supports_format_combination(pos %d)", (int)pos);
        ok = L->p->vt->build->supports_format_combination(
            L->p, pos, chk_guard_in(&g, "in_out", descs, n, sizeof *descs), L->nb_in,
            L->nb_out);
        chk_call_end(c, PRT_OK);
        if (guards_end(L, &g))
            return CHK_BROKEN;
        if (!ok) {
            L->refused_pos = pos;
            snprintf(L->why, sizeof L->why,
                     "supports_format_combination refuses %s %d (%s, linear)",
                     pos < L->nb_in ? "input" : "output",
                     (int)(pos < L->nb_in ? pos : pos - L->nb_in),
                     prt_dtype_name(descs[pos].desc.dtype));
            return CHK_REFUSED;
        }
    }
    return CHK_OK;
}

int chk_layer_configure(chk_layer *L, prt_dynamic_tensor_desc *descs)
{
    chk_ctx *c = L->c;
    int64_t ws = 0;
    const size_t es = sizeof *descs;
    prt_status st;
    /* Inputs and outputs are separate arrays here, each guarded. */
    if (CHK_BUILD(L->p, configure)) {
        chk_guards g = {0};
        chk_call_begin(c, "configure");
        st = chk_call_end(
            c, CHK_BUILD(L->p, configure)(
                   L->p, chk_guard_in(&g, "in", descs, L->nb_in, es), L->nb_in,
                   chk_guard_in(&g, "out", descs + L->nb_in, L->nb_out, es), L->nb_out));
        if (guards_end(L, &g))
            return CHK_BROKEN;
        if (st)
            return refused(L, "the profile");
    }
    if (CHK_BUILD(L->p, get_workspace_size)) {
        chk_guards g = {0};
        chk_call_begin(c, "get_workspace_size");
        st = chk_call_end(c,
                          CHK_BUILD(L->p, get_workspace_size)(
                              L->p, chk_guard_in(&g, "in", descs, L->nb_in, es), L->nb_in,
                              chk_guard_in(&g, "out", descs + L->nb_in, L->nb_out, es),
                              L->nb_out, &ws));
        if (guards_end(L, &g))
            return CHK_BROKEN;
        if (st)
            return refused(L, "to size its workspace");
        if (ws < 0)
            return broken(L, "get_workspace_size answers %lld bytes", (long long)ws);
    }
    L->workspace = ws;
    return CHK_OK;
}

/* The input with the highest rank: its dims are the others' trailing dims
 * in tied mode. */
static int32_t leader(const chk_sig *sig)
{
    int32_t best = 0;
    for (int32_t i = 1; i < sig->nb_in; i++)
        if (sig->ranks[i] > sig->ranks[best])
            best = i;
    return best;
}

static void copy_trailing(const chk_sig *sig, int32_t from, prt_dims *dims)
{
    for (int32_t i = 0; i < sig->nb_in; i++) {
        int32_t shift = sig->ranks[from] - sig->ranks[i];
        dims[i].nb_dims = sig->ranks[i];
        if (i != from)
            for (int32_t k = 0; k < sig->ranks[i]; k++)
                dims[i].d[k] = dims[from].d[k + shift];
    }
}

/* A random profile for the layer's ranks; `large` draws the minima from
 * the upper half (for plugins that need dims of some size, as a circular
 * pad does). */
static void draw_profile(chk_layer *L, chk_rng *r, int large)
{
    const chk_sig *sig = &L->sig;
    int32_t lead = leader(sig), zi = L->mode.zero_input;
    for (int32_t i = 0; i < sig->nb_in; i++) {
        int64_t cap = dim_cap(sig->ranks[lead]);
        if (L->mode.tied && i != lead)
            continue;
        cap = L->mode.tied ? cap : dim_cap(sig->ranks[i]);
        L->pmin[i].nb_dims = L->popt[i].nb_dims = L->pmax[i].nb_dims = sig->ranks[i];
        for (int32_t k = 0; k < sig->ranks[i]; k++) {
            int64_t lo = large ? chk_rand_range(r, (cap + 1) / 2, cap)
                               : chk_rand_range(r, 1, cap > 3 ? cap / 3 : 1);
            int64_t hi = chk_rand_range(r, lo, cap);
            L->pmin[i].d[k] = lo;
            L->pmax[i].d[k] = hi;
            L->popt[i].d[k] = chk_rand_range(r, lo, hi);
        }
    }
    if (L->mode.tied) {
        copy_trailing(sig, lead, L->pmin);
        copy_trailing(sig, lead, L->popt);
        copy_trailing(sig, lead, L->pmax);
    }
    /* Shape-input values: small positive numbers (repeats, sizes, pads). */
    for (int32_t k = 0; k < sig->nb_shape; k++) {
        int32_t at = sig->nb_in + k;
        L->pmin[at].nb_dims = L->popt[at].nb_dims = L->pmax[at].nb_dims =
            sig->shape_len[k];
        for (int32_t v = 0; v < sig->shape_len[k]; v++) {
            L->pmin[at].d[v] = chk_rand_range(r, 1, large ? 3 : 2);
            L->pmax[at].d[v] = chk_rand_range(r, L->pmin[at].d[v], CHK_VALUE_CAP);
            L->popt[at].d[v] = chk_rand_range(r, L->pmin[at].d[v], L->pmax[at].d[v]);
        }
    }
    if (zi >= 0 && sig->ranks[zi] > 0) {
        int32_t k = (int32_t)chk_rand_range(r, 0, sig->ranks[zi] - 1);
        int32_t at = L->mode.tied ? k + sig->ranks[lead] - sig->ranks[zi] : k;
        int32_t owner = L->mode.tied ? lead : zi;
        L->zero_dim = k;
        L->pmin[owner].d[at] = 0;
        if (L->mode.tied) {
            copy_trailing(sig, lead, L->pmin);
        }
    }
}

void chk_layer_draw(const chk_layer *L, chk_rng *r, prt_dims *in)
{
    const chk_sig *sig = &L->sig;
    int32_t lead = leader(sig), zi = L->mode.zero_input;
    for (int32_t i = 0; i < sig->nb_in; i++) {
        memset(&in[i], 0, sizeof in[i]);
        in[i].nb_dims = sig->ranks[i];
        for (int32_t k = 0; k < sig->ranks[i]; k++)
            in[i].d[k] = chk_rand_range(r, L->pmin[i].d[k], L->pmax[i].d[k]);
    }
    if (zi >= 0 && sig->ranks[zi] > 0) {
        int32_t owner = L->mode.tied ? lead : zi;
        int32_t at =
            L->mode.tied ? L->zero_dim + sig->ranks[lead] - sig->ranks[zi] : L->zero_dim;
        in[owner].d[at] = 0;
    }
    if (L->mode.tied)
        copy_trailing(sig, lead, in);
    for (int32_t k = 0; k < sig->nb_shape; k++) {
        const prt_dims *lo = &L->pmin[sig->nb_in + k], *hi = &L->pmax[sig->nb_in + k];
        prt_dims *v = &in[sig->nb_in + k];
        memset(v, 0, sizeof *v);
        v->nb_dims = sig->shape_len[k];
        for (int32_t j = 0; j < v->nb_dims; j++)
            v->d[j] = chk_rand_range(r, lo->d[j], hi->d[j]);
    }
}

int chk_layer_setup(chk_ctx *c, const chk_sig *sig, chk_rng *r, chk_mode mode,
                    int attempts, chk_layer *L)
{
    int rc = CHK_REFUSED;
    if (!sig->static_dims && !L->p) {
        rc = chk_layer_open(c, sig, NULL, L);
        if (rc)
            return rc;
    }
    for (int a = 0; a < attempts; a++) {
        L->mode = mode;
        L->sig = *sig;
        draw_profile(L, r, a >= (attempts + 1) / 2);
        if (sig->static_dims) {
            prt_dims shape[CHK_MAX_DIMSETS];
            int32_t zero_dim = L->zero_dim;
            chk_layer_draw(L, r, shape);
            chk_layer_close(L);
            rc = chk_layer_open(c, sig, shape, L);
            L->mode = mode;
            L->zero_dim = zero_dim;
            memcpy(L->pmin, shape, sizeof shape);
            memcpy(L->popt, shape, sizeof shape);
            memcpy(L->pmax, shape, sizeof shape);
            if (rc)
                continue;
        }
        rc = chk_layer_descs(L, L->pmin, L->popt, L->pmax, L->descs);
        if (rc == CHK_OK)
            rc = chk_layer_formats(L, L->descs);
        if (rc == CHK_OK)
            rc = chk_layer_configure(L, L->descs);
        if (rc != CHK_REFUSED)
            return rc;
    }
    return rc;
}

int chk_layer_out_dims(chk_layer *L, const prt_dims *in_dims, const int64_t *sizes,
                       prt_dims *out_dims)
{
    chk_env env = chk_layer_env(L, in_dims, sizes);
    for (int32_t o = 0; o < L->nb_out; o++) {
        memset(&out_dims[o], 0, sizeof out_dims[o]);
        out_dims[o].nb_dims = L->out_exprs[o].nb_dims;
        for (int32_t k = 0; k < L->out_exprs[o].nb_dims; k++) {
            char why[256];
            if (chk_pool_eval(L->pool, &env, L->out_exprs[o].d[k], &out_dims[o].d[k], why,
                              sizeof why))
                return broken(L, "output %d dim %d: %s", (int)o, (int)k, why);
            if (out_dims[o].d[k] < 0)
                return broken(L, "output %d dim %d is %lld", (int)o, (int)k,
                              (long long)out_dims[o].d[k]);
        }
    }
    return 0;
}

/* ---- discovery ------------------------------------------------------------------ */

typedef struct finder {
    chk_ctx *c;
    chk_rng rng;
    char last[CHK_MSG]; /* the last refusal, for the report */
    char broken[CHK_MSG];
} finder;

/* Tries one signature through open, a profile, formats and configure. */
static int try_sig(finder *f, const chk_sig *sig)
{
    chk_layer L;
    chk_mode mode = {0, -1};
    int rc;
    memset(&L, 0, sizeof L);
    rc = chk_layer_setup(f->c, sig, &f->rng, mode, 4, &L);
    if (rc == CHK_REFUSED && sig->nb_in > 1 && !mode.tied) {
        mode.tied = 1;
        chk_layer_close(&L);
        memset(&L, 0, sizeof L);
        rc = chk_layer_setup(f->c, sig, &f->rng, mode, 4, &L);
    }
    /* Inputs accepted but an output refused in the dtype get_output_dtypes
     * gave it: the two entries disagree. */
    if (rc == CHK_REFUSED && L.refused_pos >= L.nb_in && !f->broken[0])
        snprintf(f->broken, sizeof f->broken,
                 "get_output_dtypes gives output %d %s, but supports_format_combination "
                 "refuses it there (%s)",
                 (int)(L.refused_pos - L.nb_in),
                 prt_dtype_name(L.out_types[L.refused_pos - L.nb_in]),
                 chk_sig_str(sig, f->last, sizeof f->last));
    if (rc == CHK_BROKEN && !f->broken[0])
        snprintf(f->broken, sizeof f->broken, "%s", L.why);
    if (rc != CHK_OK && L.why[0])
        snprintf(f->last, sizeof f->last, "%s", L.why);
    chk_layer_close(&L);
    return rc;
}

/* Does get_output_dtypes accept these input dtypes? */
static int dtypes_ok(finder *f, const chk_sig *sig)
{
    chk_layer L;
    int rc;
    chk_sig s = *sig;
    memset(&L, 0, sizeof L);
    L.c = f->c;
    L.sig = s;
    L.nb_in = s.nb_in;
    L.p = chk_create(f->c, PRT_PHASE_BUILD, f->c->fields, NULL);
    if (!L.p) {
        snprintf(f->last, sizeof f->last, "create: %s", chk_call_error(f->c));
        return 0;
    }
    chk_call_begin(f->c, "build.nb_outputs");
    L.nb_out = L.p->vt->build->nb_outputs(L.p);
    chk_call_end(f->c, PRT_OK);
    rc = L.nb_out >= 1 && L.nb_out <= CHK_MAX_OUT ? open_dtypes(&L) : CHK_BROKEN;
    if (rc == CHK_BROKEN && !f->broken[0])
        snprintf(f->broken, sizeof f->broken, "%s",
                 L.why[0] ? L.why : "nb_outputs is out of range");
    if (rc == CHK_REFUSED)
        snprintf(f->last, sizeof f->last, "%s", L.why);
    chk_layer_close(&L);
    return rc == CHK_OK;
}

/* Input dtype lists get_output_dtypes accepts for n inputs (up to 4). */
static int32_t find_dtypes(finder *f, int32_t n, int32_t (*out)[CHK_MAX_IN])
{
    int32_t found = 0;
    chk_sig s;
    memset(&s, 0, sizeof s);
    s.nb_in = n;
    for (int32_t t = 0; t < NB_TRY_DTYPES && found < 4; t++) {
        for (int32_t i = 0; i < n; i++)
            s.types[i] = try_dtypes[t];
        if (dtypes_ok(f, &s))
            memcpy(out[found++], s.types, sizeof s.types);
        if (n == 0)
            return found;
    }
    /* Mixed dtypes (indices beside data) for two or three inputs. */
    for (int64_t code = 0, total = n == 2   ? 64
                                   : n == 3 ? 512
                                            : 0;
         code < total && found == 0; code++) {
        int64_t k = code;
        int uniform = 1;
        for (int32_t i = 0; i < n; i++, k /= NB_TRY_DTYPES) {
            s.types[i] = try_dtypes[k % NB_TRY_DTYPES];
            uniform &= s.types[i] == s.types[0];
        }
        if (!uniform && dtypes_ok(f, &s))
            memcpy(out[found++], s.types, sizeof s.types);
    }
    return found;
}

/* Up to three of the accepted ranks: the lowest, the highest, and one
 * between (2 when accepted). */
static int32_t pick_ranks(const int32_t *ok, int32_t nb_ok, int32_t *out)
{
    int32_t n = 0, mid = -1;
    if (nb_ok == 0)
        return 0;
    out[n++] = ok[0];
    for (int32_t i = 1; i + 1 < nb_ok; i++)
        if (mid < 0 || ok[i] == 2)
            mid = ok[i];
    if (mid >= 0)
        out[n++] = mid;
    if (nb_ok > 1)
        out[n++] = ok[nb_ok - 1];
    return n;
}

static void add_sig(chk_plan *plan, const chk_sig *s)
{
    if (plan->nb_sigs < CHK_MAX_SIGS)
        plan->sigs[plan->nb_sigs++] = *s;
}

/* The rank lists for one dtype list: uniform ranks, else independent ones
 * (two or three inputs), else constant dims. */
static void find_ranks(finder *f, chk_plan *plan, const int32_t *types, int32_t n)
{
    int32_t ok[PRT_MAX_DIMS + 1], nb_ok = 0, picked[3], nb_picked;
    chk_sig s;
    memset(&s, 0, sizeof s);
    s.nb_in = n;
    memcpy(s.types, types, sizeof s.types);
    for (int32_t r = 0; r <= PRT_MAX_DIMS; r++) {
        for (int32_t i = 0; i < n; i++)
            s.ranks[i] = r;
        if (try_sig(f, &s) == CHK_OK)
            ok[nb_ok++] = r;
        if (n == 0)
            break;
    }
    nb_picked = pick_ranks(ok, nb_ok, picked);
    for (int32_t k = 0; k < nb_picked; k++) {
        for (int32_t i = 0; i < n; i++)
            s.ranks[i] = picked[k];
        add_sig(plan, &s);
    }
    if (nb_ok || n == 0)
        return;
    for (int64_t code = 0, total = n == 2   ? 81
                                   : n == 3 ? 729
                                            : 0;
         code < total && nb_ok < 3; code++) {
        int64_t k = code;
        for (int32_t i = 0; i < n; i++, k /= PRT_MAX_DIMS + 1)
            s.ranks[i] = (int32_t)(k % (PRT_MAX_DIMS + 1));
        if (try_sig(f, &s) == CHK_OK) {
            add_sig(plan, &s);
            nb_ok++;
        }
    }
    if (nb_ok)
        return;
    s.static_dims = 1;
    for (int32_t r = 0; r <= PRT_MAX_DIMS; r++) {
        for (int32_t i = 0; i < n; i++)
            s.ranks[i] = r;
        if (try_sig(f, &s) == CHK_OK)
            ok[nb_ok++] = r;
    }
    nb_picked = pick_ranks(ok, nb_ok, picked);
    for (int32_t k = 0; k < nb_picked; k++) {
        for (int32_t i = 0; i < n; i++)
            s.ranks[i] = picked[k];
        add_sig(plan, &s);
    }
}

/* With nb_shape shape inputs: per uniform rank, the first number of values
 * (1..PRT_MAX_DIMS, the same for each shape input) accepted with it, so
 * that a plugin whose values go with the rank (repeats, pads) and one that
 * takes a fixed number are both found; symbols first, then constants. */
static void find_shaped(finder *f, chk_plan *plan, const int32_t *types, int32_t n,
                        int32_t nb_shape)
{
    for (int32_t constant = 0; constant <= 1 && plan->nb_sigs == 0; constant++) {
        int32_t ok[PRT_MAX_DIMS + 1], len[PRT_MAX_DIMS + 1], nb_ok = 0, picked[3];
        int32_t nb_picked;
        chk_sig s;
        memset(&s, 0, sizeof s);
        s.nb_in = n;
        s.nb_shape = nb_shape;
        s.static_dims = constant;
        memcpy(s.types, types, sizeof s.types);
        for (int32_t r = 0; r <= PRT_MAX_DIMS; r++) {
            for (int32_t i = 0; i < n; i++)
                s.ranks[i] = r;
            for (int32_t v = 1; v <= PRT_MAX_DIMS; v++) {
                for (int32_t k = 0; k < nb_shape; k++)
                    s.shape_len[k] = v;
                if (try_sig(f, &s) == CHK_OK) {
                    len[nb_ok] = v;
                    ok[nb_ok++] = r;
                    break;
                }
            }
            if (n == 0)
                break;
        }
        nb_picked = pick_ranks(ok, nb_ok, picked);
        for (int32_t k = 0; k < nb_picked; k++) {
            int32_t at = 0;
            while (ok[at] != picked[k])
                at++;
            for (int32_t i = 0; i < n; i++)
                s.ranks[i] = picked[k];
            for (int32_t j = 0; j < nb_shape; j++)
                s.shape_len[j] = len[at];
            add_sig(plan, &s);
        }
    }
}

int chk_discover(chk_ctx *c, char *why, size_t cap)
{
    chk_plan *plan = &c->sh->plan;
    char last[CHK_MSG];
    finder f;
    memset(&f, 0, sizeof f);
    memset(plan, 0, sizeof *plan);
    f.c = c;
    chk_rng_init(&f.rng, c->seed, 0xd15c0);
    for (int32_t n = 0; n <= CHK_MAX_IN && plan->nb_sigs == 0; n++) {
        int32_t types[4][CHK_MAX_IN];
        int32_t nb = find_dtypes(&f, n, types);
        for (int32_t t = 0; t < nb; t++)
            find_ranks(&f, plan, types[t], n);
    }
    /* Nothing runs without shape inputs: with 1..CHK_MAX_SHAPE of them.
     * The refusal reported stays the one without. */
    snprintf(last, sizeof last, "%s", f.last);
    for (int32_t n = 0; n <= CHK_MAX_IN && plan->nb_sigs == 0 && !f.broken[0]; n++) {
        int32_t types[4][CHK_MAX_IN];
        int32_t nb = find_dtypes(&f, n, types);
        for (int32_t ns = 1; ns <= CHK_MAX_SHAPE && plan->nb_sigs == 0; ns++)
            for (int32_t t = 0; t < nb && plan->nb_sigs == 0; t++)
                find_shaped(&f, plan, types[t], n, ns);
    }
    if (plan->nb_sigs == 0)
        snprintf(plan->why, sizeof plan->why,
                 "no inputs the plugin accepts were found (0..%d inputs of every dtype, "
                 "ranks 0..%d, 0..%d shape inputs; last refusal: %.800s)",
                 CHK_MAX_IN, PRT_MAX_DIMS, CHK_MAX_SHAPE, last[0] ? last : "none");
    if (f.broken[0]) {
        snprintf(why, cap, "%s", f.broken);
        return CHK_BROKEN;
    }
    return plan->nb_sigs ? CHK_OK : CHK_REFUSED;
}

int chk_layer_alias(chk_layer *L)
{
    int32_t (*get)(const prt_plugin *, int32_t) = CHK_BUILD(L->p, get_aliased_input);
    for (int32_t o = 0; o < L->nb_out; o++) {
        int32_t a = -1;
        if (get) {
            chk_call_begin(L->c, "get_aliased_input(%d)", (int)o);
            a = get(L->p, o);
            chk_call_end(L->c, PRT_OK);
        }
        L->alias[o] = a;
        if (a < -1 || a >= L->nb_in)
            return broken(L, "get_aliased_input(%d) answers %d (-1 or an input 0..%d)",
                          (int)o, (int)a, (int)L->nb_in - 1);
        if (a >= 0 && L->sig.types[a] != L->out_types[o])
            return broken(L, "output %d (%s) aliases input %d (%s): the dtypes differ",
                          (int)o, prt_dtype_name(L->out_types[o]), (int)a,
                          prt_dtype_name(L->sig.types[a]));
    }
    return CHK_OK;
}
