/*
 * The builder: network + config -> engine.
 *
 *  1. resolve profiles (min/opt/max for every input);
 *  2. infer each layer's output dtypes and symbolic shapes, in the network's
 *     (topological) order, declaring size tensors;
 *  3. bound every dim expression over each profile;
 *  4. per layer: negotiate dtypes/formats, configure per profile, size the
 *     workspace, list tactics and, when autotuning, time the candidates;
 *  5. decide in-place aliasing; plan the arena; assemble the engine.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/parallel.h"
#include "builder/builder.h"
#include "kernel/kernel.h"
#include "ops/op_const.h"

/* ---- 1. profiles -------------------------------------------------------- */

static int dims_dynamic(const prt_dims *d)
{
    for (int32_t i = 0; i < d->nb_dims; i++)
        if (d->d[i] < 0)
            return 1;
    return 0;
}

/* Whether any profile bounds the values of input `name`. */
static int bld_has_values(const prt_builder_config *cfg, const char *name)
{
    for (int32_t p = 0; p < cfg->nb_profiles; p++)
        for (int32_t e = 0; e < cfg->profiles[p].nb_entries; e++)
            if (cfg->profiles[p].entries[e].has_values &&
                strcmp(cfg->profiles[p].entries[e].input, name) == 0)
                return 1;
    return 0;
}

static prt_status bld_profiles(bld *b)
{
    const prt_network *net = b->net;
    const prt_builder_config *cfg = b->cfg;
    int32_t np = cfg->nb_profiles ? cfg->nb_profiles : 1;
    size_t n = (size_t)np * (size_t)(net->nb_inputs ? net->nb_inputs : 1);
    char buf[128];
    b->nb_profiles = np;
    b->pmin = base_calloc(n, sizeof(prt_dims));
    b->popt = base_calloc(n, sizeof(prt_dims));
    b->pmax = base_calloc(n, sizeof(prt_dims));
    b->pvmin = base_calloc(n, sizeof(prt_dims));
    b->pvopt = base_calloc(n, sizeof(prt_dims));
    b->pvmax = base_calloc(n, sizeof(prt_dims));
    if (!b->pmin || !b->popt || !b->pmax || !b->pvmin || !b->pvopt || !b->pvmax)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    /* Every profile entry must name an input. */
    for (int32_t p = 0; p < cfg->nb_profiles; p++)
        for (int32_t e = 0; e < cfg->profiles[p].nb_entries; e++) {
            const char *name = cfg->profiles[p].entries[e].input;
            int32_t id;
            if (prt_network_find_tensor(net, name, &id) != PRT_OK ||
                net->tensors[id].input_index < 0)
                return base_error(PRT_ERR_NOT_FOUND,
                                  "profile %d names '%s', which is not a network input",
                                  (int)p, name);
        }
    for (int32_t p = 0; p < np; p++) {
        for (int32_t i = 0; i < net->nb_inputs; i++) {
            const net_tensor *t = &net->tensors[net->inputs[i]];
            const cfg_entry *e = NULL;
            size_t k = (size_t)p * (size_t)net->nb_inputs + (size_t)i;
            if (p < cfg->nb_profiles)
                for (int32_t j = 0; j < cfg->profiles[p].nb_entries; j++)
                    if (strcmp(cfg->profiles[p].entries[j].input, t->name) == 0)
                        e = &cfg->profiles[p].entries[j];
            base_dims_str(&t->dims, buf, sizeof buf);
            if (net_is_direct_shape_input(net, net->inputs[i]) ||
                bld_has_values(cfg, t->name)) {
                /* 0-D holds one value, 1-D a static count of them (or a
                 * count the profile pins: min = max). */
                int64_t count = t->dims.nb_dims == 0 ? 1 : t->dims.d[0];
                if (t->dims.nb_dims == 1 && count < 0 && e && e->has_dims &&
                    e->min.nb_dims == 1 && e->min.d[0] == e->max.d[0])
                    count = e->min.d[0];
                /* The same count in every profile (profile 0's is set). */
                if (p > 0 && count != b->pvmin[i].nb_dims)
                    return base_error(PRT_ERR_SHAPE,
                                      "shape input '%s' has %lld values in profile %d "
                                      "and %d in profile 0; its length must be the "
                                      "same in every profile",
                                      t->name, (long long)count, (int)p,
                                      (int)b->pvmin[i].nb_dims);
                if (t->dims.nb_dims > 1 || count < 1 || count > PRT_MAX_DIMS ||
                    (t->dtype != PRT_INT32 && t->dtype != PRT_INT64 &&
                     t->dtype != PRT_FLOAT32))
                    return base_error(PRT_ERR_SHAPE,
                                      "input '%s' is a shape input, so it must be a "
                                      "0-D or 1-D int32/int64/float32 input of static "
                                      "length 1..%d; it is %s %s",
                                      t->name, PRT_MAX_DIMS, prt_dtype_name(t->dtype),
                                      buf);
                if (!e || !e->has_values || e->vmin.nb_dims != count)
                    return base_error(PRT_ERR_SHAPE,
                                      "shape input '%s' (%lld values) needs the bounds "
                                      "of its values in profile %d "
                                      "(prt_builder_config_set_profile_shape_values)",
                                      t->name, (long long)count, (int)p);
                for (int32_t v = 0; t->dtype == PRT_FLOAT32 && v < count; v++) {
                    const int64_t kv[3] = {e->vmin.d[v], e->vopt.d[v], e->vmax.d[v]};
                    for (int j = 0; j < 3; j++)
                        if (isnan(base_key_f32(kv[j])))
                            return base_error(
                                PRT_ERR_INVALID_ARGUMENT,
                                "float32 shape input '%s': profile %d bounds value %d "
                                "with %lld, which stands for no float "
                                "(prt_float_shape_value gives a float's value)",
                                t->name, (int)p, (int)v, (long long)kv[j]);
                }
                b->pvmin[k] = e->vmin;
                b->pvopt[k] = e->vopt;
                b->pvmax[k] = e->vmax;
            }
            if (!e || !e->has_dims) {
                if (dims_dynamic(&t->dims))
                    return base_error(PRT_ERR_SHAPE,
                                      "input '%s' has dynamic dims %s but profile %d "
                                      "gives no min/opt/max for it "
                                      "(prt_builder_config_set_profile_dims)",
                                      t->name, buf, (int)p);
                b->pmin[k] = b->popt[k] = b->pmax[k] = t->dims;
                continue;
            }
            if (e->min.nb_dims != t->dims.nb_dims)
                return base_error(PRT_ERR_SHAPE,
                                  "profile %d: input '%s' has rank %d, the profile "
                                  "gives rank %d",
                                  (int)p, t->name, (int)t->dims.nb_dims,
                                  (int)e->min.nb_dims);
            for (int32_t d = 0; d < t->dims.nb_dims; d++)
                if (t->dims.d[d] >= 0 &&
                    (e->min.d[d] != t->dims.d[d] || e->max.d[d] != t->dims.d[d]))
                    return base_error(PRT_ERR_SHAPE,
                                      "profile %d: input '%s' (dims %s) has static "
                                      "dim %d = %lld, but the profile gives %lld..%lld",
                                      (int)p, t->name, buf, (int)d,
                                      (long long)t->dims.d[d], (long long)e->min.d[d],
                                      (long long)e->max.d[d]);
            b->pmin[k] = e->min;
            b->popt[k] = e->opt;
            b->pmax[k] = e->max;
        }
    }
    return PRT_OK;
}

/* ---- 2. dtypes and shapes ----------------------------------------------- */

/* Dtypes whose small tensors can carry values as expressions (shape
 * tensors): integers, and booleans as 0/1 (conditions in shape arithmetic,
 * e.g. Equal -> Where). */
static int bld_value_dtype(int32_t dtype)
{
    return dtype == PRT_INT32 || dtype == PRT_INT64 || dtype == PRT_BOOL;
}

/* Constants: static dims, dtype from the network. */
static prt_status bld_constant_exprs(bld *b)
{
    for (int32_t id = 0; id < b->net->nb_tensors; id++) {
        const net_tensor *nt = &b->net->tensors[id];
        bld_tensor *t = &b->t[id];
        if (nt->const_bytes < 0)
            continue;
        t->dtype = nt->dtype;
        t->format = PRT_FORMAT_LINEAR;
        t->dims.nb_dims = nt->dims.nb_dims;
        for (int32_t d = 0; d < nt->dims.nb_dims; d++) {
            t->dims.d[d] = expr_const(b->pool, nt->dims.d[d]);
            if (!t->dims.d[d])
                return base_error(PRT_ERR_OUT_OF_MEMORY, "build: %s",
                                  expr_pool_error(b->pool));
        }
        /* A small integer constant is a shape tensor with known values. */
        if (bld_value_dtype(nt->dtype) && nt->dims.nb_dims <= 1 &&
            base_volume(&nt->dims) <= PRT_MAX_DIMS) {
            t->values.nb_dims = (int32_t)base_volume(&nt->dims);
            for (int32_t v = 0; v < t->values.nb_dims; v++) {
                int64_t x = nt->dtype == PRT_INT32 ? ((const int32_t *)nt->const_data)[v]
                            : nt->dtype == PRT_INT64
                                ? ((const int64_t *)nt->const_data)[v]
                                : ((const uint8_t *)nt->const_data)[v] != 0;
                t->values.d[v] = expr_const(b->pool, x);
                if (!t->values.d[v])
                    return base_error(PRT_ERR_OUT_OF_MEMORY, "build: %s",
                                      expr_pool_error(b->pool));
            }
        }
    }
    return PRT_OK;
}

static prt_status bld_input_exprs(bld *b)
{
    for (int32_t i = 0; i < b->net->nb_inputs; i++) {
        int32_t id = b->net->inputs[i];
        const net_tensor *nt = &b->net->tensors[id];
        bld_tensor *t = &b->t[id];
        t->dtype = nt->dtype;
        t->format = PRT_FORMAT_LINEAR;
        t->dims.nb_dims = nt->dims.nb_dims;
        for (int32_t d = 0; d < nt->dims.nb_dims; d++) {
            /* A dynamic dim every profile pins to one number is that
             * constant (the runtime enforces the bounds): shapes computed
             * from it fold at build time (constfold.c). */
            int64_t pin = nt->dims.d[d];
            for (int32_t p = 0; pin < 0 && p < b->nb_profiles; p++) {
                size_t k = (size_t)p * (size_t)b->net->nb_inputs + (size_t)i;
                int64_t lo = b->pmin[k].d[d], hi = b->pmax[k].d[d];
                if (lo != hi || (p > 0 && lo != b->pmin[i].d[d]))
                    break;
                if (p == b->nb_profiles - 1)
                    pin = lo;
            }
            t->dims.d[d] =
                pin >= 0 ? expr_const(b->pool, pin) : expr_input_dim(b->pool, i, d);
            if (!t->dims.d[d])
                return base_error(PRT_ERR_OUT_OF_MEMORY, "build: %s",
                                  expr_pool_error(b->pool));
        }
        /* Inputs with value bounds are shape tensors (bld_profiles checked
         * them: 1-D, static length, the same count in every profile). */
        t->values.nb_dims = b->pvmin[i].nb_dims > 0 ? b->pvmin[i].nb_dims : -1;
        for (int32_t v = 0; v < t->values.nb_dims; v++) {
            /* A value every profile pins to one number is that constant (the
             * runtime enforces the bounds), so ops that need constants — a
             * Slice's axes — accept it. */
            int pinned = 1;
            for (int32_t p = 0; p < b->nb_profiles; p++) {
                size_t k = (size_t)p * (size_t)b->net->nb_inputs + (size_t)i;
                pinned &= b->pvmin[k].d[v] == b->pvmax[k].d[v] &&
                          b->pvmin[k].d[v] == b->pvmin[i].d[v];
            }
            t->values.d[v] = pinned ? expr_const(b->pool, b->pvmin[i].d[v])
                                    : expr_input_value(b->pool, i, v);
            if (!t->values.d[v])
                return base_error(PRT_ERR_OUT_OF_MEMORY, "build: %s",
                                  expr_pool_error(b->pool));
        }
    }
    return PRT_OK;
}

/* Shape tensors: the values of this layer's small integer outputs, when the
 * plugin states them. */
static prt_status bld_layer_values(bld *b, int32_t li)
{
    const net_layer *l = &b->net->layers[li];
    prt_dim_exprs in_dims[64], in_values[64], out_values[64];
    prt_status st;
    if (!BUILD_ENTRY(l->plugin, get_output_values))
        return PRT_OK;
    for (int32_t i = 0; i < l->nb_inputs; i++) {
        in_dims[i] = b->t[l->inputs[i]].dims;
        in_values[i] = b->t[l->inputs[i]].values;
    }
    for (int32_t o = 0; o < l->nb_outputs; o++) {
        memset(&out_values[o], 0, sizeof out_values[o]);
        out_values[o].nb_dims = -1;
    }
    base_clear_error();
    st = BUILD_ENTRY(l->plugin, get_output_values)(
        l->plugin, in_dims, in_values, l->nb_inputs, out_values, l->nb_outputs,
        expr_pool_builder(b->pool));
    if (st)
        return bld_plugin_fail(l, st, "get_output_values failed");
    for (int32_t o = 0; o < l->nb_outputs; o++) {
        bld_tensor *t = &b->t[l->outputs[o]];
        int64_t count = 1;
        if (out_values[o].nb_dims < 0)
            continue;
        for (int32_t d = 0; d < t->dims.nb_dims; d++) {
            int64_t v;
            if (!expr_is_const(b->pool, t->dims.d[d], &v))
                count = -1;
            else if (count >= 0)
                count *= v;
        }
        if (!bld_value_dtype(t->dtype) || t->dims.nb_dims > 1 ||
            out_values[o].nb_dims > PRT_MAX_DIMS || count != out_values[o].nb_dims)
            return base_error(
                PRT_ERR_PLUGIN,
                "layer '%s': output %d states %d values, but only a 0-D "
                "or 1-D int32/int64/bool output of a static size up to %d can "
                "have them (it is %s, rank %d, size %lld)",
                l->name, (int)o, (int)out_values[o].nb_dims, PRT_MAX_DIMS,
                prt_dtype_name(t->dtype), (int)t->dims.nb_dims, (long long)count);
        for (int32_t v = 0; v < out_values[o].nb_dims; v++)
            if (!out_values[o].d[v])
                return base_error(PRT_ERR_PLUGIN,
                                  "layer '%s': output %d value %d has no "
                                  "expression (%s)",
                                  l->name, (int)o, (int)v, expr_pool_error(b->pool));
        t->values = out_values[o];
    }
    return PRT_OK;
}

/* A plugin layer's outputs against what the network's author declared for
 * them (prt_network_expect_tensor): a mismatch is a warning, or an error in
 * a strict network. Either way the declaration is only compared, never
 * used: every buffer is planned for what get_output_shapes gives. Built-in
 * ops are plugrt's own, so only plugins are checked. */
static prt_status bld_check_expected(bld *b, int32_t li)
{
    const net_layer *l = &b->net->layers[li];
    const prt_plugin *p = l->plugin;
    if (strcmp(p->vt->core->plugin_namespace(p), PRT_BUILTIN_NAMESPACE) == 0)
        return PRT_OK;
    for (int32_t o = 0; o < l->nb_outputs; o++) {
        const net_tensor *nt = &b->net->tensors[l->outputs[o]];
        const bld_tensor *t = &b->t[l->outputs[o]];
        char got[160], want[160];
        int bad = 0;
        size_t n = 0;
        if (!nt->has_expect)
            continue;
        bad |= nt->expect_dtype >= 0 && nt->expect_dtype != t->dtype;
        bad |= nt->expect_dims.nb_dims >= 0 && nt->expect_dims.nb_dims != t->dims.nb_dims;
        for (int32_t d = 0; !bad && nt->expect_dims.nb_dims >= 0 && d < t->dims.nb_dims;
             d++) {
            int64_t v;
            bad |= nt->expect_dims.d[d] >= 0 &&
                   expr_is_const(b->pool, t->dims.d[d], &v) && v != nt->expect_dims.d[d];
        }
        if (!bad)
            continue;
        /* "[2, ?]" for the layer's dims (? where only known at run time). */
        n += (size_t)snprintf(got, sizeof got, "%s [", prt_dtype_name(t->dtype));
        for (int32_t d = 0; d < t->dims.nb_dims && n < sizeof got; d++) {
            int64_t v;
            n += expr_is_const(b->pool, t->dims.d[d], &v)
                     ? (size_t)snprintf(got + n, sizeof got - n, "%s%lld", d ? ", " : "",
                                        (long long)v)
                     : (size_t)snprintf(got + n, sizeof got - n, "%s?", d ? ", " : "");
        }
        if (n < sizeof got)
            snprintf(got + n, sizeof got - n, "]");
        n = (size_t)snprintf(want, sizeof want, "%s [",
                             nt->expect_dtype >= 0 ? prt_dtype_name(nt->expect_dtype)
                                                   : "?");
        for (int32_t d = 0; d < nt->expect_dims.nb_dims && n < sizeof want; d++)
            n += nt->expect_dims.d[d] >= 0
                     ? (size_t)snprintf(want + n, sizeof want - n, "%s%lld",
                                        d ? ", " : "", (long long)nt->expect_dims.d[d])
                     : (size_t)snprintf(want + n, sizeof want - n, "%s?", d ? ", " : "");
        if (n < sizeof want)
            snprintf(want + n, sizeof want - n, "]");
        if (b->net->strict)
            return base_error(PRT_ERR_SHAPE,
                              "layer '%s' (plugin %s): output %d ('%s') is %s, but the "
                              "model declares %s",
                              l->name, bld_plugin_label(p).s, (int)o, nt->name, got,
                              want);
        base_log(PRT_SEV_WARNING,
                 "layer '%s' (plugin %s): output %d ('%s') is %s, but the model declares "
                 "%s; memory is planned for what the plugin gives, but a consumer sized "
                 "by the declaration would be wrong",
                 l->name, bld_plugin_label(p).s, (int)o, nt->name, got, want);
    }
    return PRT_OK;
}

static prt_status bld_layer_shapes(bld *b, int32_t li)
{
    const net_layer *l = &b->net->layers[li];
    const prt_plugin_build *bt = l->plugin->vt->build;
    int32_t in_types[64], out_types[64];
    prt_dim_exprs in_dims[64], out_dims[64], shape_values[64];
    prt_status st;
    int32_t nb_sizes_before = expr_pool_size_count(b->pool);

    if (l->nb_inputs > 64)
        return base_error(PRT_ERR_UNSUPPORTED, "layer '%s': more than 64 inputs",
                          l->name);
    if (l->nb_shape_inputs > 64)
        return base_error(PRT_ERR_UNSUPPORTED, "layer '%s': more than 64 shape inputs",
                          l->name);
    for (int32_t s = 0; s < l->nb_shape_inputs; s++) {
        if (b->t[l->shape_inputs[s]].dtype == PRT_FLOAT32 &&
            !op_float_shape_input(l->plugin, s))
            return base_error(PRT_ERR_UNSUPPORTED,
                              "layer '%s' (plugin %s): shape input %d ('%s') is float32, "
                              "and only a layer that reads float values takes one "
                              "(Resize's scales); its values would read as integers",
                              l->name, bld_plugin_label(l->plugin).s, (int)s,
                              b->net->tensors[l->shape_inputs[s]].name);
        shape_values[s] = b->t[l->shape_inputs[s]].values;
        if (shape_values[s].nb_dims < 0)
            return base_error(
                PRT_ERR_SHAPE,
                "layer '%s': shape input %d ('%s') has values the "
                "builder cannot know: it must be a network input with "
                "value bounds (prt_builder_config_set_profile_shape_values), "
                "a small integer constant, or computed from those by "
                "layers that state their values (get_output_values)",
                l->name, (int)s, b->net->tensors[l->shape_inputs[s]].name);
    }
    for (int32_t i = 0; i < l->nb_inputs; i++) {
        in_types[i] = b->t[l->inputs[i]].dtype;
        in_dims[i] = b->t[l->inputs[i]].dims;
    }
    for (int32_t o = 0; o < l->nb_outputs; o++)
        out_types[o] = -1;
    base_clear_error();
    st = bt->get_output_dtypes(l->plugin, out_types, l->nb_outputs, in_types,
                               l->nb_inputs);
    if (st)
        return bld_plugin_fail(l, st, "get_output_dtypes failed");
    for (int32_t o = 0; o < l->nb_outputs; o++)
        if (prt_dtype_size(out_types[o]) == 0)
            return base_error(PRT_ERR_PLUGIN,
                              "layer '%s': plugin gave invalid dtype %d for output %d",
                              l->name, (int)out_types[o], (int)o);
    /* A QuantizeLinear folded into this output: the plugin writes its
     * integers (it said so in supports_format_combination; fold.c). */
    for (int32_t o = 0; o < l->nb_outputs; o++)
        if (b->net->tensors[l->outputs[o]].q_folded)
            out_types[o] = b->net->tensors[l->outputs[o]].dtype;

    memset(out_dims, 0, sizeof out_dims);
    for (int32_t o = 0; o < l->nb_outputs; o++)
        out_dims[o].nb_dims = -1;
    expr_pool_begin_layer(b->pool, li, l->nb_outputs);
    base_clear_error();
    st = bt->get_output_shapes(l->plugin, in_dims, l->nb_inputs, shape_values,
                               l->nb_shape_inputs, out_dims, l->nb_outputs,
                               expr_pool_builder(b->pool));
    if (st)
        return bld_plugin_fail(l, st, "get_output_shapes failed");
    for (int32_t o = 0; o < l->nb_outputs; o++) {
        bld_tensor *t = &b->t[l->outputs[o]];
        if (out_dims[o].nb_dims < 0 || out_dims[o].nb_dims > PRT_MAX_DIMS)
            return base_error(PRT_ERR_PLUGIN,
                              "layer '%s': output %d has rank %d (0..%d allowed)",
                              l->name, (int)o, (int)out_dims[o].nb_dims, PRT_MAX_DIMS);
        for (int32_t d = 0; d < out_dims[o].nb_dims; d++)
            if (!out_dims[o].d[d])
                return base_error(PRT_ERR_PLUGIN,
                                  "layer '%s': output %d dim %d has no expression (%s)",
                                  l->name, (int)o, (int)d,
                                  expr_pool_error(b->pool)[0] ? expr_pool_error(b->pool)
                                                              : "NULL returned");
        t->dtype = out_types[o];
        t->format = PRT_FORMAT_LINEAR;
        t->dims = out_dims[o];
    }
    st = bld_check_expected(b, li);
    if (st)
        return st;
    /* Size tensors declared by this layer: 0-D integer outputs. */
    for (int32_t s = nb_sizes_before; s < expr_pool_size_count(b->pool); s++) {
        int32_t layer, oi;
        bld_tensor *t;
        expr_pool_size_owner(b->pool, s, &layer, &oi);
        t = &b->t[l->outputs[oi]];
        if (t->dims.nb_dims != 0 || (t->dtype != PRT_INT32 && t->dtype != PRT_INT64))
            return base_error(PRT_ERR_PLUGIN,
                              "layer '%s': output %d is declared a size tensor, so it "
                              "must be a 0-D int32 or int64 tensor",
                              l->name, (int)oi);
        t->size_id = s;
    }
    return bld_layer_values(b, li);
}

/* ---- 3. bounds ----------------------------------------------------------- */

static prt_status bld_bounds(bld *b)
{
    const expr_program *prog = expr_pool_program(b->pool);
    size_t n = (size_t)prog->nb_nodes * (size_t)b->nb_profiles;
    b->nb_nodes = prog->nb_nodes;
    b->lo = base_malloc(sizeof(int64_t) * (n ? n : 1));
    b->opt = base_malloc(sizeof(int64_t) * (n ? n : 1));
    b->hi = base_malloc(sizeof(int64_t) * (n ? n : 1));
    b->dd = base_calloc((size_t)prog->nb_nodes + 1, 1);
    if (!b->lo || !b->opt || !b->hi || !b->dd)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    for (int32_t i = 0; i < prog->nb_nodes; i++) {
        const expr_node *nd = &prog->nodes[i];
        b->dd[i] = nd->kind == EXPR_SIZE ||
                   (nd->kind == EXPR_OP && (b->dd[nd->a] || b->dd[nd->b]));
    }
    for (int32_t p = 0; p < b->nb_profiles; p++) {
        size_t k = (size_t)p * (size_t)b->net->nb_inputs;
        size_t o = (size_t)p * (size_t)prog->nb_nodes;
        expr_profile prof = {b->net->nb_inputs, b->pmin + k,  b->popt + k, b->pmax + k,
                             b->pvmin + k,      b->pvopt + k, b->pvmax + k};
        prt_status st =
            expr_program_bounds(prog, &prof, b->lo + o, b->opt + o, b->hi + o);
        if (st)
            return base_error_prefix(st, "profile %d", (int)p);
    }
    /* Every dim must be >= 0 over every profile. */
    for (int32_t i = 0; i < b->net->nb_tensors; i++) {
        const bld_tensor *t = &b->t[i];
        for (int32_t d = 0; d < t->dims.nb_dims; d++)
            for (int32_t p = 0; p < b->nb_profiles; p++) {
                int32_t node = expr_id(t->dims.d[d]);
                if (b->lo[(size_t)p * (size_t)b->nb_nodes + (size_t)node] < 0)
                    return base_error(
                        PRT_ERR_SHAPE,
                        "tensor '%s' dim %d can be negative (down to "
                        "%lld) in profile %d",
                        b->net->tensors[i].name, (int)d,
                        (long long)b->lo[(size_t)p * (size_t)b->nb_nodes + (size_t)node],
                        (int)p);
            }
    }
    return PRT_OK;
}

/* Every quantization the network's author set fits its tensor (dtype,
 * zero points, axis and channel count; base/quant.h), once dtypes and
 * dims are known: a scale on a float tensor would otherwise reach plugins
 * as a promise nobody keeps. */
static prt_status bld_check_quant(const bld *b)
{
    for (int32_t i = 0; i < b->net->nb_tensors; i++) {
        const base_quant *q = &b->net->tensors[i].quant;
        const bld_tensor *t = &b->t[i];
        int64_t axis_dim = -1;
        char what[160];
        prt_status st;
        if (q->d.kind == PRT_QUANT_NONE)
            continue;
        snprintf(what, sizeof what, "tensor '%s'", b->net->tensors[i].name);
        /* Per-channel scales are as many as the channels: that dim must be
         * known now, or a run could index past them. */
        if (q->d.kind == PRT_QUANT_PER_CHANNEL && q->d.axis < t->dims.nb_dims &&
            !expr_is_const(b->pool, t->dims.d[q->d.axis], &axis_dim))
            return base_error(PRT_ERR_SHAPE,
                              "%s: per-channel quantization along dim %d, which is not "
                              "static",
                              what, (int)q->d.axis);
        st = base_quant_check_tensor(q, t->dtype, t->dims.nb_dims, axis_dim, what);
        if (st)
            return st;
    }
    return PRT_OK;
}

/* ---- entry point --------------------------------------------------------- */

/* The pool autotuning's runs use, installed for the calling thread (the
 * one it replaces in *outer, to be put back). */
static prt_status bld_threads_begin(const prt_builder_config *cfg, base_pool **pool,
                                    base_pool **outer)
{
    int32_t n = cfg->threads ? cfg->threads : base_cpu_count();
    *pool = NULL;
    if (n > 1) {
        prt_status st = base_pool_create(n, pool);
        if (st)
            return base_error_prefix(st, "build: the threads for timing tactics");
    }
    *outer = base_parallel_set_current(*pool);
    return PRT_OK;
}

/* The build of `net`; with `cfold`, phase 3a may hand back a network with
 * the layers whose outputs the build knows (constant shape values, or
 * evaluated from constant inputs) replaced by constants, which is then
 * built instead; with `fold`, phase 3b may hand back a
 * network with DequantizeLinear layers folded away, likewise (once: it has
 * nothing left to fold into); with `prec`, phase 3c may hand back one with
 * layers in 16 bits, likewise. */
static prt_status bld_run(const prt_network *net, const prt_builder_config *cfg,
                          const prt_registry *reg, int cfold, int fold, int prec,
                          prt_engine **out)
{
    bld b;
    base_pool *tune_pool = NULL, *outer_pool = NULL;
    prt_network *consts = NULL, *folded = NULL, *lowered = NULL;
    prt_status st = PRT_OK;
    memset(&b, 0, sizeof b);
    st = dev_get(cfg->device, &b.dev);
    if (!st)
        st = b.dev->info(&b.dev_info);
    if (!st && cfg->timing_cache)
        st = tc_load(&b.cache, cfg->timing_cache);
    if (st)
        return st;
    b.net = net;
    b.cfg = cfg;
    b.reg = reg;
    b.pool = expr_pool_create();
    b.t = base_calloc((size_t)net->nb_tensors + 1, sizeof(bld_tensor));
    b.l = base_calloc((size_t)net->nb_layers + 1, sizeof(bld_layer));
    if (!b.pool || !b.t || !b.l) {
        st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
        goto done;
    }
    for (int32_t i = 0; i < net->nb_tensors; i++) {
        b.t[i].size_id = -1;
        b.t[i].last_use = -1;
        b.t[i].root = i;
        b.t[i].values.nb_dims = -1;
    }
    for (int32_t li = 0; li < net->nb_layers; li++) {
        const net_layer *l = &net->layers[li];
        uint32_t devs = l->plugin->vt->core->devices(l->plugin);
        for (int32_t k = 0; k < l->nb_inputs; k++)
            b.t[l->inputs[k]].last_use = li;
        b.l[li].device = cfg->device;
        if (!(devs & (1u << cfg->device)) && bld_can_fall_back(&b, devs)) {
            b.l[li].device = PRT_DEVICE_CPU;
        } else if (!(devs & (1u << cfg->device))) {
            const char *ns = l->plugin->vt->core->plugin_namespace(l->plugin);
            st = base_error(PRT_ERR_UNSUPPORTED,
                            "layer '%s': plugin %s does not run on %s%s%s", l->name,
                            bld_plugin_label(l->plugin).s,
                            cfg->device == PRT_DEVICE_CPU ? "the CPU" : "CUDA",
                            ns && strcmp(ns, PRT_BUILTIN_NAMESPACE) == 0
                                ? " (`plugrt plugins --builtins` lists where each "
                                  "built-in op runs)"
                                : "",
                            bld_fallback_hint(&b, devs));
            goto done;
        }
    }
    st = bld_profiles(&b);
    if (!st)
        st = bld_input_exprs(&b);
    if (!st)
        st = bld_constant_exprs(&b);
    for (int32_t li = 0; !st && li < net->nb_layers; li++)
        st = bld_layer_shapes(&b, li);
    if (!st)
        st = bld_bounds(&b);
    if (!st)
        st = bld_check_quant(&b);
    if (!st && cfold)
        st = bld_constfold(&b, &consts);
    if (consts)
        goto done;
    if (!st && fold)
        st = bld_fold(&b, &folded);
    if (folded)
        goto done;
    if (!st && prec)
        st = bld_precision(&b, &lowered);
    if (lowered)
        goto done;
    /* Tactics are timed on the threads the contexts will have. */
    if (!st && cfg->autotune)
        st = bld_threads_begin(cfg, &tune_pool, &outer_pool);
    if (!st)
        st = bld_plan_formats(&b);
    for (int32_t li = 0; !st && li < net->nb_layers; li++)
        st = bld_layer_formats(&b, li);
    if (cfg->autotune) {
        base_parallel_set_current(outer_pool);
        base_pool_destroy(tune_pool);
        tune_pool = NULL;
    }
    if (!st)
        st = bld_host_dims(&b);
    if (!st)
        st = bld_alias(&b);
    if (!st)
        st = bld_assemble(&b, out);
    if (!st && cfg->timing_cache && b.cache.dirty) {
        st = tc_save(&b.cache, cfg->timing_cache);
        if (st) {
            prt_engine_destroy(*out);
            *out = NULL;
        }
    }
done:
    tc_free(&b.cache);
    if (b.l)
        for (int32_t li = 0; li < net->nb_layers; li++) {
            base_free(b.l[li].descs);
            base_free(b.l[li].alias_input);
            base_free(b.l[li].alias_copy);
            kernel_free(b.l[li].kernel);
            base_free(b.l[li].kernel);
        }
    base_free(b.l);
    base_free(b.t);
    base_free(b.pmin);
    base_free(b.popt);
    base_free(b.pmax);
    base_free(b.pvmin);
    base_free(b.pvopt);
    base_free(b.pvmax);
    base_free(b.lo);
    base_free(b.opt);
    base_free(b.hi);
    base_free(b.dd);
    expr_pool_destroy(b.pool);
    if (!st && consts)
        st = bld_run(consts, cfg, reg, 0, fold, prec, out);
    else if (!st && folded)
        st = bld_run(folded, cfg, reg, 0, 0, prec, out);
    else if (!st && lowered)
        st = bld_run(lowered, cfg, reg, 0, 0, 0, out);
    bld_constfold_free(consts);
    bld_fold_free(folded);
    bld_precision_free(lowered);
    return st;
}

prt_status bld_build_plain(const prt_network *net, const prt_builder_config *cfg,
                           const prt_registry *reg, prt_engine **out)
{
    return bld_run(net, cfg, reg, 0, 0, 0, out);
}

prt_status prt_engine_build(const prt_network *net, const prt_builder_config *cfg,
                            const prt_registry *reg, prt_engine **out)
{
    if (!net || !cfg || !out)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_engine_build: NULL argument");
    if (net->nb_outputs == 0)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "the network has no outputs (prt_network_mark_output)");
    return bld_run(net, cfg, reg, 1, 1, 1, out);
}
