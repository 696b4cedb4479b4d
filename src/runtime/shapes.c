/*
 * A run's shapes: the engine's shape program evaluated from the context's
 * input shapes, shape-input values and the sizes known so far, exactly or
 * as upper bounds, and a tensor's dims read from the result. The context's
 * queries, the run and the device-side sizes all evaluate through here.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "runtime/context_impl.h"

int ctx_tensor_dims(const prt_engine *e, int32_t t, const int64_t *values,
                    const uint8_t *known, prt_dims *out)
{
    const eng_tensor *et = &e->tensors[t];
    prt_dims d;
    memset(&d, 0, sizeof d);
    d.nb_dims = et->nb_dims;
    for (int32_t k = 0; k < et->nb_dims; k++) {
        if (!known[et->dim_expr[k]])
            return 0;
        d.d[k] = values[et->dim_expr[k]];
    }
    *out = d;
    return 1;
}

static prt_status check_inputs_set(const prt_context *c)
{
    for (int32_t i = 0; i < c->e->nb_inputs; i++)
        if (!c->input_set[i])
            return base_error(PRT_ERR_STATE,
                              "input '%s' is dynamic and has no shape "
                              "(prt_context_set_input_shape)",
                              c->e->tensors[c->e->input_tensors[i]].name);
    return PRT_OK;
}

/* Value j of shape input t at its address p (host memory). */
static int64_t shape_value(const eng_tensor *t, const void *p, int32_t j)
{
    if (t->dtype == PRT_FLOAT32)
        return base_f32_key(((const float *)p)[j]);
    return t->dtype == PRT_INT32 ? ((const int32_t *)p)[j] : ((const int64_t *)p)[j];
}

/* A value as its input's dtype reads it, for messages. */
static const char *shape_value_str(const eng_tensor *t, int64_t v, char *buf, size_t n)
{
    if (t->dtype == PRT_FLOAT32)
        snprintf(buf, n, "%.9g", (double)base_key_f32(v));
    else
        snprintf(buf, n, "%lld", (long long)v);
    return buf;
}

/* Reads shape inputs' values from their (host) memory and checks them
 * against the profile. */
static prt_status load_shape_values(prt_context *c)
{
    const prt_engine *e = c->e;
    for (int32_t i = 0; i < e->nb_inputs; i++) {
        size_t k = (size_t)c->profile * (size_t)e->nb_inputs + (size_t)i;
        const prt_dims *mn = &e->prof_vmin[k], *mx = &e->prof_vmax[k];
        const eng_tensor *t = &e->tensors[e->input_tensors[i]];
        prt_dims *v = &c->input_values[i];
        v->nb_dims = mn->nb_dims;
        if (mn->nb_dims == 0)
            continue;
        if (!c->io_addr[i])
            return base_error(PRT_ERR_STATE,
                              "shape input '%s' has no address: its "
                              "values are needed to compute shapes "
                              "(prt_context_set_tensor_address)",
                              t->name);
        for (int32_t j = 0; j < mn->nb_dims; j++) {
            char a[32], b[32], d[32];
            v->d[j] = shape_value(t, c->io_addr[i], j);
            if (t->dtype == PRT_FLOAT32 && isnan(((const float *)c->io_addr[i])[j]))
                return base_error(PRT_ERR_SHAPE, "shape input '%s': value %d is NaN",
                                  t->name, (int)j);
            if (v->d[j] < mn->d[j] || v->d[j] > mx->d[j])
                return base_error(
                    PRT_ERR_SHAPE,
                    "shape input '%s': value %d is %s, "
                    "outside profile %d's %s..%s",
                    t->name, (int)j, shape_value_str(t, v->d[j], a, sizeof a),
                    (int)c->profile, shape_value_str(t, mn->d[j], b, sizeof b),
                    shape_value_str(t, mx->d[j], d, sizeof d));
        }
    }
    return PRT_OK;
}

prt_status ctx_check_graph_values(const prt_context *c)
{
    const prt_engine *e = c->e;
    for (int32_t i = 0; i < e->nb_inputs; i++) {
        const prt_dims *g = &c->graph_values[i];
        const eng_tensor *t = &e->tensors[e->input_tensors[i]];
        for (int32_t j = 0; j < g->nb_dims; j++) {
            int64_t v = shape_value(t, c->io_addr[i], j);
            char a[32], b[32];
            if (v != g->d[j])
                return base_error(PRT_ERR_STATE,
                                  "prt_context_launch_graph: shape input '%s' holds "
                                  "%s at value %d, the graph was captured with %s "
                                  "(its values are baked into the graph); capture it "
                                  "again",
                                  t->name, shape_value_str(t, v, a, sizeof a), (int)j,
                                  shape_value_str(t, g->d[j], b, sizeof b));
        }
    }
    return PRT_OK;
}

int ctx_shape_values_changed(const prt_context *c)
{
    const prt_engine *e = c->e;
    for (int32_t i = 0; i < e->nb_inputs; i++) {
        const eng_tensor *t = &e->tensors[e->input_tensors[i]];
        int32_t n =
            e->prof_vmin[(size_t)c->profile * (size_t)e->nb_inputs + (size_t)i].nb_dims;
        if (n == 0)
            continue;
        if (!c->io_addr[i] || !c->seen_valid || c->seen_values[i].nb_dims != n)
            return 1;
        for (int32_t j = 0; j < n; j++)
            if (shape_value(t, c->io_addr[i], j) != c->seen_values[i].d[j])
                return 1;
    }
    return 0;
}

prt_status ctx_eval_exact(prt_context *c)
{
    expr_env env = {c->e->nb_inputs, c->input_dims, c->e->nb_sizes,
                    c->size_values,  c->size_known, c->input_values};
    return expr_program_eval(&c->e->exprs, &env, c->values, c->known);
}

prt_status ctx_eval_upper(prt_context *c)
{
    expr_env env = {c->e->nb_inputs, c->input_dims, c->e->nb_sizes,
                    c->size_values,  c->size_known, c->input_values};
    return expr_program_eval_upper(&c->e->exprs, &env, c->size_scratch, c->known_scratch,
                                   c->up_values, c->up_known);
}

static int same_dims(const prt_dims *a, const prt_dims *b, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        if (a[i].nb_dims != b[i].nb_dims ||
            memcmp(a[i].d, b[i].d, sizeof(int64_t) * (size_t)a[i].nb_dims))
            return 0;
    return 1;
}

/* Whether this evaluation's inputs are the last one's (context_impl.h,
 * seen_*); when not, they become the seen ones and what was kept for the
 * old ones is dropped. */
static void note_shapes(prt_context *c)
{
    int32_t n = c->e->nb_inputs;
    c->same_shapes = c->seen_valid && same_dims(c->seen_dims, c->input_dims, n) &&
                     same_dims(c->seen_values, c->input_values, n);
    if (c->same_shapes)
        return;
    memcpy(c->seen_dims, c->input_dims, sizeof(prt_dims) * (size_t)n);
    memcpy(c->seen_values, c->input_values, sizeof(prt_dims) * (size_t)n);
    c->seen_valid = 1;
    c->values_current = 0;
    c->descs_current = 0;
}

prt_status ctx_prepare_shapes(prt_context *c, int upper)
{
    prt_status st = check_inputs_set(c);
    if (!st)
        st = load_shape_values(c);
    if (st)
        return st;
    note_shapes(c);
    memset(c->size_known, 0, (size_t)c->e->nb_sizes + 1);
    /* Without sizes nothing but this evaluation writes values/known, so
     * the same inputs leave them as they are. */
    if (!c->values_current) {
        st = ctx_eval_exact(c);
        c->values_current = !st && c->e->nb_sizes == 0;
    }
    if (!st && upper)
        st = ctx_eval_upper(c);
    return st;
}
