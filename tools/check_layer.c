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

/* How the inputs' dims relate, in words. */
static const char *rel_name(int32_t rel)
{
    switch (rel) {
    case CHK_REL_TRAILING:
        return "dims tied by trailing dims";
    case CHK_REL_LEADING:
        return "dims tied by leading dims";
    case CHK_REL_BROADCAST:
        return "dims broadcast";
    case CHK_REL_SPEC:
        return "dims as the input spec says";
    default:
        return "dims independent";
    }
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
    if (plan->nb_sigs && plan->sigs[0].rel != CHK_REL_INDEPENDENT && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, "; %s", rel_name(plan->sigs[0].rel));
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
    c->sh->profiles++;
    return CHK_OK;
}

/* The input with the highest rank (the first of them): the others' dims
 * are tied to its dims under the relations. */
static int32_t leader(const chk_sig *sig)
{
    int32_t best = 0;
    for (int32_t i = 1; i < sig->nb_in; i++)
        if (sig->ranks[i] > sig->ranks[best])
            best = i;
    return best;
}

/* Which dims are drawn, and which take another's value: per input dim,
 * the position (input * PRT_MAX_DIMS + dim) whose value it takes (itself
 * for a dim that is drawn, an "owner"), or -1 for the literal 1 of a
 * broadcast; per owner, the range it is drawn from. Owners come in the
 * order of their positions, so that the independent and trailing
 * relations draw what they drew before relations had names. */
typedef struct dim_map {
    int32_t rel;
    int32_t owner[CHK_MAX_IN][PRT_MAX_DIMS];
    int64_t lo[CHK_MAX_IN][PRT_MAX_DIMS], hi[CHK_MAX_IN][PRT_MAX_DIMS];
} dim_map;

#define POS(i, k) ((i)*PRT_MAX_DIMS + (k))

/* The relation a layer draws with: the signature's, else trailing in
 * tied mode. */
static int32_t relation(const chk_sig *sig, chk_mode mode)
{
    if (sig->rel != CHK_REL_INDEPENDENT)
        return sig->rel;
    return mode.tied && sig->nb_in > 1 ? CHK_REL_TRAILING : CHK_REL_INDEPENDENT;
}

static void make_map(const chk_sig *sig, chk_mode mode, dim_map *m)
{
    int32_t lead = leader(sig), rl = sig->ranks[lead];
    m->rel = relation(sig, mode);
    for (int32_t i = 0; i < sig->nb_in; i++) {
        int32_t shift = rl - sig->ranks[i], symbolic = 0;
        for (int32_t k = 0; k < sig->ranks[i]; k++)
            symbolic += m->rel == CHK_REL_SPEC &&
                        sig->sym_lo[sig->sym[i][k]] != sig->sym_hi[sig->sym[i][k]];
        for (int32_t k = 0; k < sig->ranks[i]; k++) {
            int32_t at = POS(i, k);
            m->lo[i][k] = 1;
            m->hi[i][k] = dim_cap(m->rel == CHK_REL_INDEPENDENT ? sig->ranks[i] : rl);
            switch (m->rel) {
            case CHK_REL_TRAILING:
                at = POS(lead, k + shift);
                break;
            case CHK_REL_LEADING:
                at = POS(lead, k);
                break;
            case CHK_REL_BROADCAST:
                at = i == lead ? at : k + 1 < sig->ranks[i] ? -1 : POS(lead, rl - 1);
                break;
            case CHK_REL_SPEC: {
                /* The first dim with this symbol owns it. */
                int32_t s = sig->sym[i][k];
                for (int32_t j = 0; j <= i && at == POS(i, k); j++)
                    for (int32_t q = 0; q < sig->ranks[j]; q++)
                        if (sig->sym[j][q] == s && POS(j, q) < at) {
                            at = POS(j, q);
                            break;
                        }
                m->lo[i][k] = sig->sym_lo[s];
                m->hi[i][k] = dim_cap(symbolic > 0 ? symbolic : 1);
                /* A literal, or a range below the cap, is kept as given. */
                if (sig->sym_hi[s] <= m->hi[i][k] || sig->sym_lo[s] == sig->sym_hi[s])
                    m->hi[i][k] = sig->sym_hi[s];
                else if (m->hi[i][k] < sig->sym_lo[s])
                    m->hi[i][k] = sig->sym_lo[s];
                break;
            }
            default:
                break;
            }
            m->owner[i][k] = at;
        }
    }
}

/* Every dim that is not drawn takes its owner's value (or 1). */
static void propagate(const chk_sig *sig, const dim_map *m, prt_dims *dims)
{
    for (int32_t i = 0; i < sig->nb_in; i++) {
        dims[i].nb_dims = sig->ranks[i];
        for (int32_t k = 0; k < sig->ranks[i]; k++) {
            int32_t at = m->owner[i][k];
            if (at != POS(i, k))
                dims[i].d[k] = at < 0 ? 1 : dims[at / PRT_MAX_DIMS].d[at % PRT_MAX_DIMS];
        }
    }
}

/* The least value a drawn dim may take in a profile: a spec's range, else
 * 1 (0 only where the empty-inputs check asks for it). */
static int64_t least(const dim_map *m, int32_t i, int32_t k)
{
    if (m->rel != CHK_REL_SPEC || m->lo[i][k] == m->hi[i][k])
        return m->rel == CHK_REL_SPEC ? m->lo[i][k] : 1;
    return m->lo[i][k] > 1 ? m->lo[i][k] : 1;
}

/* A random profile for the layer's ranks; `large` draws the minima from
 * the upper half (for plugins that need dims of some size, as a circular
 * pad does). */
static void draw_profile(chk_layer *L, chk_rng *r, int large)
{
    const chk_sig *sig = &L->sig;
    int32_t zi = L->mode.zero_input;
    dim_map m;
    make_map(sig, L->mode, &m);
    for (int32_t i = 0; i < sig->nb_in; i++) {
        L->pmin[i].nb_dims = L->popt[i].nb_dims = L->pmax[i].nb_dims = sig->ranks[i];
        for (int32_t k = 0; k < sig->ranks[i]; k++) {
            int64_t a = least(&m, i, k), b = m.hi[i][k], lo, hi;
            if (m.owner[i][k] != POS(i, k))
                continue;
            if (m.rel != CHK_REL_SPEC)
                lo = large ? chk_rand_range(r, (b + 1) / 2, b)
                           : chk_rand_range(r, 1, b > 3 ? b / 3 : 1);
            else
                lo = large ? chk_rand_range(r, a + (b - a) / 2, b)
                           : chk_rand_range(r, a, a + (b - a) / 3);
            hi = chk_rand_range(r, lo, b);
            L->pmin[i].d[k] = lo;
            L->pmax[i].d[k] = hi;
            L->popt[i].d[k] = chk_rand_range(r, lo, hi);
        }
    }
    propagate(sig, &m, L->pmin);
    propagate(sig, &m, L->popt);
    propagate(sig, &m, L->pmax);
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
    L->zero_dim = -1;
    if (zi >= 0 && chk_sig_can_be_empty(sig, zi)) {
        int32_t k = (int32_t)chk_rand_range(r, 0, sig->ranks[zi] - 1), at;
        /* A broadcast 1 stays 1, and a spec's dim may be 0 only where its
         * range starts at 0: the first dim from k on that may be 0. */
        while (m.owner[zi][k] < 0 ||
               (m.rel == CHK_REL_SPEC && sig->sym_lo[sig->sym[zi][k]] != 0))
            k = (k + 1) % sig->ranks[zi];
        at = m.owner[zi][k];
        L->zero_dim = k;
        L->pmin[at / PRT_MAX_DIMS].d[at % PRT_MAX_DIMS] = 0;
        propagate(sig, &m, L->pmin);
    }
}

int chk_sig_can_be_empty(const chk_sig *sig, int32_t input)
{
    if (input < 0 || input >= sig->nb_in || sig->ranks[input] == 0)
        return 0;
    if (sig->rel != CHK_REL_SPEC)
        return 1;
    for (int32_t k = 0; k < sig->ranks[input]; k++)
        if (sig->sym_lo[sig->sym[input][k]] == 0)
            return 1;
    return 0;
}

void chk_layer_draw(const chk_layer *L, chk_rng *r, prt_dims *in)
{
    const chk_sig *sig = &L->sig;
    int32_t zi = L->mode.zero_input;
    dim_map m;
    make_map(sig, L->mode, &m);
    for (int32_t i = 0; i < sig->nb_in; i++) {
        memset(&in[i], 0, sizeof in[i]);
        in[i].nb_dims = sig->ranks[i];
        for (int32_t k = 0; k < sig->ranks[i]; k++)
            in[i].d[k] = chk_rand_range(r, L->pmin[i].d[k], L->pmax[i].d[k]);
    }
    if (zi >= 0 && sig->ranks[zi] > 0 && L->zero_dim >= 0) {
        int32_t at = m.owner[zi][L->zero_dim];
        if (at >= 0)
            in[at / PRT_MAX_DIMS].d[at % PRT_MAX_DIMS] = 0;
    }
    propagate(sig, &m, in);
    for (int32_t k = 0; k < sig->nb_shape; k++) {
        const prt_dims *lo = &L->pmin[sig->nb_in + k], *hi = &L->pmax[sig->nb_in + k];
        prt_dims *v = &in[sig->nb_in + k];
        memset(v, 0, sizeof *v);
        v->nb_dims = sig->shape_len[k];
        for (int32_t j = 0; j < v->nb_dims; j++)
            v->d[j] = chk_rand_range(r, lo->d[j], hi->d[j]);
    }
}

void chk_layer_grow(const chk_layer *L, chk_rng *r, prt_dims *bigger)
{
    const chk_sig *sig = &L->sig;
    dim_map m;
    make_map(sig, L->mode, &m);
    for (int32_t i = 0; i < sig->nb_in; i++)
        for (int32_t k = 0; k < sig->ranks[i]; k++) {
            int64_t d = bigger[i].d[k];
            if (m.owner[i][k] != POS(i, k) ||
                (m.rel == CHK_REL_SPEC && m.lo[i][k] == m.hi[i][k]))
                continue;
            bigger[i].d[k] += m.rel == CHK_REL_INDEPENDENT && !sig->static_dims
                                  ? chk_rand_range(r, 0, d)
                                  : d;
        }
    propagate(sig, &m, bigger);
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

/* How far a refused candidate got, so that when nothing is found the
 * report quotes the refusal that matters: the candidate that got furthest
 * through the builder's steps, not the last one tried. */
enum {
    STAGE_CREATE = 10,
    STAGE_INPUT_FORMATS = 20, /* + the input position refused */
    STAGE_DTYPES = 40,
    STAGE_SHAPES = 50,
    STAGE_VALUES = 55,
    STAGE_FORMATS = 60, /* + the position refused */
    STAGE_CONFIGURE = 140,
    STAGE_WORKSPACE = 150
};

/* Questions to supports_format_combination in the dtype search of one
 * number of inputs: enough for every dtype at every position of the
 * first lists found, a bound for a plugin that accepts everything. */
#define DTYPE_QUESTIONS 4096
#define DTYPE_LISTS 4 /* input dtype lists tested per number of inputs */

typedef struct finder {
    chk_ctx *c;
    chk_rng rng;
    char best[CHK_MSG];     /* the refusal of the candidate that got furthest */
    char best_why[CHK_MSG]; /* the same without the candidate */
    int32_t best_stage;
    char broken[CHK_MSG];
} finder;

static void note_refusal(finder *f, int32_t stage, const char *what, const char *why)
{
    if (stage <= f->best_stage)
        return;
    f->best_stage = stage;
    snprintf(f->best, sizeof f->best, "%.300s: %.700s", what, why);
    snprintf(f->best_why, sizeof f->best_why, "%s", why);
}

static int32_t stage_of(const chk_layer *L)
{
    static const struct {
        const char *call;
        int32_t stage;
    } calls[] = {{"create", STAGE_CREATE},
                 {"get_output_dtypes", STAGE_DTYPES},
                 {"get_output_shapes", STAGE_SHAPES},
                 {"get_output_values", STAGE_VALUES},
                 {"configure", STAGE_CONFIGURE},
                 {"get_workspace_size", STAGE_WORKSPACE}};
    if (L->refused_pos >= 0)
        return STAGE_FORMATS + L->refused_pos;
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        if (strncmp(L->why, calls[i].call, strlen(calls[i].call)) == 0)
            return calls[i].stage;
    return STAGE_CREATE;
}

/* Tries one signature through open, a profile, formats and configure,
 * under each relation of the inputs' dims in turn (the first accepted is
 * kept in sig->rel). Independent dims come first: what a plugin accepts
 * with dims drawn apart is what it says it handles, and the checks then
 * test it so. */
static int try_sig(finder *f, chk_sig *sig, int attempts)
{
    static const int32_t rels[] = {CHK_REL_INDEPENDENT, CHK_REL_TRAILING, CHK_REL_LEADING,
                                   CHK_REL_BROADCAST};
    int32_t nb_rels = sig->rel == CHK_REL_SPEC ? 1 : sig->nb_in > 1 ? 4 : 1;
    int rc = CHK_REFUSED;
    char what[256];
    for (int32_t k = 0; k < nb_rels && rc == CHK_REFUSED; k++) {
        chk_layer L;
        chk_mode mode = {0, -1};
        memset(&L, 0, sizeof L);
        if (sig->rel != CHK_REL_SPEC)
            sig->rel = rels[k];
        rc = chk_layer_setup(f->c, sig, &f->rng, mode, attempts, &L);
        /* Inputs accepted but an output refused in the dtype
         * get_output_dtypes gave it: the two entries disagree. */
        if (rc == CHK_REFUSED && L.refused_pos >= L.nb_in && L.nb_out > 0 &&
            !f->broken[0])
            snprintf(
                f->broken, sizeof f->broken,
                "get_output_dtypes gives output %d %s, but supports_format_combination "
                "refuses it there (%s)",
                (int)(L.refused_pos - L.nb_in),
                prt_dtype_name(L.out_types[L.refused_pos - L.nb_in]),
                chk_sig_str(sig, what, sizeof what));
        if (rc == CHK_BROKEN && !f->broken[0])
            snprintf(f->broken, sizeof f->broken, "%s", L.why);
        if (rc == CHK_REFUSED && L.why[0]) {
            size_t n = strlen(chk_sig_str(sig, what, sizeof what));
            if (sig->nb_in > 1 && sig->rel != CHK_REL_SPEC && n < sizeof what)
                snprintf(what + n, sizeof what - n, ", %s", rel_name(sig->rel));
            note_refusal(f, stage_of(&L), what, L.why);
        }
        chk_layer_close(&L);
    }
    if (rc != CHK_OK && sig->rel != CHK_REL_SPEC)
        sig->rel = CHK_REL_INDEPENDENT;
    return rc;
}

/* The search of input dtype lists for one number of inputs. */
typedef struct dsearch {
    finder *f;
    prt_plugin *p;
    int32_t n, nb_out;
    prt_dynamic_tensor_desc d[CHK_MAX_IO];
    int32_t asked;
    int32_t found;
    int32_t (*out)[CHK_MAX_IN];
} dsearch;

/* Does get_output_dtypes accept the dtype list in s->d? */
static int dtypes_ok(dsearch *s)
{
    chk_layer L;
    int rc;
    char what[256];
    memset(&L, 0, sizeof L);
    L.c = s->f->c;
    L.p = s->p;
    L.nb_in = L.sig.nb_in = s->n;
    L.nb_out = s->nb_out;
    for (int32_t i = 0; i < s->n; i++) {
        L.sig.types[i] = s->d[i].desc.dtype;
        L.sig.ranks[i] = s->d[i].desc.dims.nb_dims;
    }
    rc = open_dtypes(&L);
    if (rc == CHK_BROKEN && !s->f->broken[0])
        snprintf(s->f->broken, sizeof s->f->broken, "%s", L.why);
    if (rc == CHK_REFUSED)
        note_refusal(s->f, STAGE_DTYPES, chk_sig_str(&L.sig, what, sizeof what), L.why);
    return rc == CHK_OK;
}

/* Depth first, position by position: the dtypes supports_format_combination
 * accepts at pos given those before it, in try order. */
static void dtype_search(dsearch *s, int32_t pos)
{
    chk_ctx *c = s->f->c;
    int any = 0;
    if (pos == s->n) {
        if (dtypes_ok(s)) {
            for (int32_t i = 0; i < s->n; i++)
                s->out[s->found][i] = s->d[i].desc.dtype;
            s->found++;
        }
        return;
    }
    for (int32_t t = 0; t < NB_TRY_DTYPES && s->found < DTYPE_LISTS && !s->f->broken[0];
         t++) {
        int32_t ok;
        if (s->asked++ >= DTYPE_QUESTIONS)
            return;
        s->d[pos].desc.dtype = try_dtypes[t];
        chk_call_begin(c, "supports_format_combination(pos %d)", (int)pos);
        ok = s->p->vt->build->supports_format_combination(s->p, pos, s->d, s->n,
                                                          s->nb_out);
        chk_call_end(c, PRT_OK);
        if (ok) {
            any = 1;
            dtype_search(s, pos + 1);
        }
    }
    if (!any) {
        char what[256];
        size_t k = (size_t)snprintf(what, sizeof what, "%d input%s", (int)s->n,
                                    s->n == 1 ? "" : "s");
        for (int32_t i = 0; i < pos && k < sizeof what; i++)
            k += (size_t)snprintf(what + k, sizeof what - k, "%s%s", i ? ", " : " (",
                                  prt_dtype_name(s->d[i].desc.dtype));
        if (pos > 0 && k < sizeof what)
            snprintf(what + k, sizeof what - k, " before it)");
        s->d[pos].desc.dtype = PRT_FLOAT32;
        note_refusal(s->f, STAGE_INPUT_FORMATS + pos, what,
                     "supports_format_combination accepts no dtype for this input in the "
                     "linear format");
    }
}

/* Input dtype lists for n inputs (up to DTYPE_LISTS), as the builder
 * negotiates them: supports_format_combination position by position, then
 * get_output_dtypes for each whole list. Mixed lists are found as uniform
 * ones are: a plugin may accept any dtypes in get_output_dtypes and filter
 * in supports_format_combination, as TensorRT plugins do. The inputs are
 * described at a rank tried in turn (2, 1, 0, 3, 4), for a plugin that
 * looks at ranks there too. */
static int32_t find_dtypes(finder *f, int32_t n, int32_t (*out)[CHK_MAX_IN])
{
    static const int32_t ranks[] = {2, 1, 0, 3, 4};
    dsearch s;
    memset(&s, 0, sizeof s);
    s.f = f;
    s.n = n;
    s.out = out;
    s.p = chk_create(f->c, PRT_PHASE_BUILD, f->c->fields, NULL);
    if (!s.p) {
        note_refusal(f, STAGE_CREATE, "create", chk_call_error(f->c));
        return 0;
    }
    chk_call_begin(f->c, "build.nb_outputs");
    s.nb_out = s.p->vt->build->nb_outputs(s.p);
    chk_call_end(f->c, PRT_OK);
    if (s.nb_out < 1 || s.nb_out > CHK_MAX_OUT) {
        if (!f->broken[0])
            snprintf(f->broken, sizeof f->broken, "nb_outputs answers %d (1..%d)",
                     (int)s.nb_out, CHK_MAX_OUT);
        chk_destroy(f->c, s.p);
        return 0;
    }
    for (size_t r = 0;
         r < sizeof ranks / sizeof ranks[0] && s.found == 0 && !f->broken[0]; r++) {
        for (int32_t i = 0; i < n + s.nb_out; i++) {
            prt_dynamic_tensor_desc *d = &s.d[i];
            memset(d, 0, sizeof *d);
            d->desc.dtype = PRT_FLOAT32;
            d->desc.format = PRT_FORMAT_LINEAR;
            d->desc.dims.nb_dims = d->min.nb_dims = d->opt.nb_dims = d->max.nb_dims =
                i < n ? ranks[r] : 1;
            for (int32_t k = 0; k < d->desc.dims.nb_dims; k++) {
                d->desc.dims.d[k] = -1;
                d->min.d[k] = 1;
                d->opt.d[k] = 2;
                d->max.d[k] = 4;
            }
        }
        s.asked = 0;
        dtype_search(&s, 0);
    }
    chk_destroy(f->c, s.p);
    return s.found;
}

/* Up to three of the accepted ranks: the lowest, the highest, and one
 * between (2 when accepted). */
static int32_t pick_ranks(const int32_t *ok, int32_t nb_ok, int32_t *out)
{
    int32_t n = 0, mid = -1;
    if (nb_ok == 0)
        return 0;
    out[n++] = 0;
    for (int32_t i = 1; i + 1 < nb_ok; i++)
        if (mid < 0 || ok[i] == 2)
            mid = i;
    if (mid >= 0)
        out[n++] = mid;
    if (nb_ok > 1)
        out[n++] = nb_ok - 1;
    return n;
}

static void add_sig(chk_plan *plan, const chk_sig *s)
{
    if (plan->nb_sigs < CHK_MAX_SIGS)
        plan->sigs[plan->nb_sigs++] = *s;
}

/* The uniform ranks accepted (symbols or constants), three of them picked
 * into the plan with the relation each needed; the number accepted. */
static int32_t uniform_ranks(finder *f, chk_plan *plan, chk_sig s)
{
    int32_t ok[PRT_MAX_DIMS + 1], rel[PRT_MAX_DIMS + 1], nb_ok = 0, picked[3], nb_picked;
    for (int32_t r = 0; r <= PRT_MAX_DIMS; r++) {
        for (int32_t i = 0; i < s.nb_in; i++)
            s.ranks[i] = r;
        s.rel = CHK_REL_INDEPENDENT;
        if (try_sig(f, &s, 4) == CHK_OK) {
            rel[nb_ok] = s.rel;
            ok[nb_ok++] = r;
        }
        if (s.nb_in == 0)
            break;
    }
    nb_picked = pick_ranks(ok, nb_ok, picked);
    for (int32_t k = 0; k < nb_picked; k++) {
        for (int32_t i = 0; i < s.nb_in; i++)
            s.ranks[i] = ok[picked[k]];
        s.rel = rel[picked[k]];
        add_sig(plan, &s);
    }
    return nb_ok;
}

/* The rank lists for one dtype list: uniform ranks, else independent ones
 * (two or three inputs), else constant dims. */
static void find_ranks(finder *f, chk_plan *plan, const int32_t *types, int32_t n)
{
    int32_t nb_ok;
    chk_sig s;
    memset(&s, 0, sizeof s);
    s.nb_in = n;
    memcpy(s.types, types, sizeof s.types);
    nb_ok = uniform_ranks(f, plan, s);
    if (nb_ok || n == 0)
        return;
    for (int64_t code = 0, total = n == 2   ? 81
                                   : n == 3 ? 729
                                            : 0;
         code < total && nb_ok < 3; code++) {
        int64_t k = code;
        int uniform = 1;
        for (int32_t i = 0; i < n; i++, k /= PRT_MAX_DIMS + 1) {
            s.ranks[i] = (int32_t)(k % (PRT_MAX_DIMS + 1));
            uniform &= s.ranks[i] == s.ranks[0];
        }
        s.rel = CHK_REL_INDEPENDENT;
        if (!uniform && try_sig(f, &s, 4) == CHK_OK) {
            add_sig(plan, &s);
            nb_ok++;
        }
    }
    if (nb_ok)
        return;
    s.static_dims = 1;
    uniform_ranks(f, plan, s);
}

/* With nb_shape shape inputs: per uniform rank, the first number of values
 * (1..PRT_MAX_DIMS, the same for each shape input) accepted with it, so
 * that a plugin whose values go with the rank (repeats, pads) and one that
 * takes a fixed number are both found; symbols first, then constants. */
static void find_shaped(finder *f, chk_plan *plan, const int32_t *types, int32_t n,
                        int32_t nb_shape)
{
    for (int32_t constant = 0; constant <= 1 && plan->nb_sigs == 0; constant++) {
        int32_t ok[PRT_MAX_DIMS + 1], len[PRT_MAX_DIMS + 1], rel[PRT_MAX_DIMS + 1];
        int32_t nb_ok = 0, picked[3], nb_picked;
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
                s.rel = CHK_REL_INDEPENDENT;
                if (try_sig(f, &s, 4) == CHK_OK) {
                    len[nb_ok] = v;
                    rel[nb_ok] = s.rel;
                    ok[nb_ok++] = r;
                    break;
                }
            }
            if (n == 0)
                break;
        }
        nb_picked = pick_ranks(ok, nb_ok, picked);
        for (int32_t k = 0; k < nb_picked; k++) {
            for (int32_t i = 0; i < n; i++)
                s.ranks[i] = ok[picked[k]];
            for (int32_t j = 0; j < nb_shape; j++)
                s.shape_len[j] = len[picked[k]];
            s.rel = rel[picked[k]];
            add_sig(plan, &s);
        }
    }
}

/* The spec is the plan: with symbolic dims, else (a plugin that needs
 * constant dims) with the spec's dims drawn as constants. */
static int discover_spec(finder *f, chk_plan *plan, char *why, size_t cap)
{
    chk_sig s = *f->c->spec;
    char what[256];
    for (s.static_dims = 0; s.static_dims <= 1; s.static_dims++)
        if (try_sig(f, &s, 8) == CHK_OK) {
            add_sig(plan, &s);
            return CHK_OK;
        }
    if (f->broken[0])
        snprintf(why, cap, "%s", f->broken);
    else
        snprintf(why, cap, "the plugin refuses the input spec (%s): %.700s",
                 chk_sig_str(f->c->spec, what, sizeof what),
                 f->best_why[0] ? f->best_why : "no refusal was recorded");
    snprintf(plan->why, sizeof plan->why, "%s", why);
    return CHK_BROKEN;
}

int chk_discover(chk_ctx *c, char *why, size_t cap)
{
    chk_plan *plan = &c->sh->plan;
    char best[CHK_MSG];
    finder f;
    memset(&f, 0, sizeof f);
    memset(plan, 0, sizeof *plan);
    f.c = c;
    chk_rng_init(&f.rng, c->seed, 0xd15c0);
    if (c->spec)
        return discover_spec(&f, plan, why, cap);
    for (int32_t n = 0; n <= CHK_MAX_IN && plan->nb_sigs == 0 && !f.broken[0]; n++) {
        int32_t types[DTYPE_LISTS][CHK_MAX_IN];
        int32_t nb = find_dtypes(&f, n, types);
        for (int32_t t = 0; t < nb; t++)
            find_ranks(&f, plan, types[t], n);
    }
    /* Nothing runs without shape inputs: with 1..CHK_MAX_SHAPE of them.
     * The refusal reported stays the one without. */
    snprintf(best, sizeof best, "%s", f.best);
    for (int32_t n = 0; n <= CHK_MAX_IN && plan->nb_sigs == 0 && !f.broken[0]; n++) {
        int32_t types[DTYPE_LISTS][CHK_MAX_IN];
        int32_t nb = find_dtypes(&f, n, types);
        for (int32_t ns = 1; ns <= CHK_MAX_SHAPE && plan->nb_sigs == 0; ns++)
            for (int32_t t = 0; t < nb && plan->nb_sigs == 0; t++)
                find_shaped(&f, plan, types[t], n, ns);
    }
    if (plan->nb_sigs == 0)
        snprintf(
            plan->why, sizeof plan->why,
            "no inputs the plugin accepts were found (0..%d inputs, dtypes asked of "
            "supports_format_combination position by position, ranks 0..%d, dims "
            "independent or tied, 0..%d shape inputs; the furthest refusal: %.700s); "
            "describe the inputs with --inputs",
            CHK_MAX_IN, PRT_MAX_DIMS, CHK_MAX_SHAPE, best[0] ? best : "none");
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
