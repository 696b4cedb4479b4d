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
#include <stdio.h>
#include <string.h>

#include "builder/builder.h"
#include "registry/registry.h"

typedef struct bld_tensor {
    int32_t dtype;
    int32_t format;
    prt_dim_exprs dims;
    int32_t size_id;  /* >= 0 for a size tensor */
    int32_t last_use; /* last consuming layer, or -1 */
    int32_t root;     /* tensor whose memory this one uses (aliasing) */
    /* Shape tensors: the values, row-major, as expressions; nb_dims is the
     * element count, -1 when the values are not known at build time. */
    prt_dim_exprs values;
} bld_tensor;

typedef struct bld_layer {
    prt_dynamic_tensor_desc *descs; /* nb_in + nb_out, profile 0, chosen */
    int32_t tactic;
    int64_t workspace;
    int32_t *alias_input;
    uint8_t *alias_copy;
} bld_layer;

typedef struct bld {
    const prt_network *net;
    const prt_builder_config *cfg;
    const prt_registry *reg;
    expr_pool *pool;
    bld_tensor *t;
    bld_layer *l;
    int32_t nb_profiles;
    prt_dims *pmin, *popt, *pmax; /* [profile * nb_inputs + input] */
    prt_dims *pvmin, *pvopt, *pvmax; /* shape-input values, same indexing */
    int32_t nb_nodes;
    int64_t *lo, *opt, *hi; /* [profile * nb_nodes + node] */
    uint8_t *dd;            /* [node]: depends on a size tensor's value */
} bld;

static const char *plugin_label(const prt_plugin *p)
{
    const char *n = p->vt->core->name(p);
    return n ? n : "?";
}

/* Wraps a plugin's failure with the layer; keeps the plugin's message. */
static prt_status plugin_fail(const net_layer *l, prt_status st, const char *what)
{
    if (!prt_last_error()[0])
        base_error(PRT_ERR_PLUGIN, "the plugin gave no message");
    if (st <= PRT_OK || st > PRT_ERR_INTERNAL)
        st = PRT_ERR_PLUGIN;
    return base_error_prefix(st, "layer '%s' (plugin %s): %s", l->name,
                             plugin_label(l->plugin), what);
}

/* ---- 1. profiles -------------------------------------------------------- */

static int dims_dynamic(const prt_dims *d)
{
    for (int32_t i = 0; i < d->nb_dims; i++)
        if (d->d[i] < 0)
            return 1;
    return 0;
}

static int bld_is_shape_input(const prt_network *net, int32_t tensor)
{
    for (int32_t l = 0; l < net->nb_layers; l++)
        for (int32_t k = 0; k < net->layers[l].nb_shape_inputs; k++)
            if (net->layers[l].shape_inputs[k] == tensor)
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
            if (bld_is_shape_input(net, net->inputs[i]) || bld_has_values(cfg, t->name)) {
                /* 0-D holds one value, 1-D a static count of them. */
                int64_t count = t->dims.nb_dims == 0 ? 1 : t->dims.d[0];
                if (t->dims.nb_dims > 1 || count < 1 || count > PRT_MAX_DIMS ||
                    (t->dtype != PRT_INT32 && t->dtype != PRT_INT64))
                    return base_error(PRT_ERR_SHAPE,
                                      "input '%s' is a shape input, so it must be a "
                                      "0-D or 1-D int32/int64 input of static length "
                                      "1..%d; it is %s %s", t->name, PRT_MAX_DIMS,
                                      prt_dtype_name(t->dtype), buf);
                if (!e || !e->has_values || e->vmin.nb_dims != count)
                    return base_error(PRT_ERR_SHAPE,
                                      "shape input '%s' (%lld values) needs the bounds "
                                      "of its values in profile %d "
                                      "(prt_builder_config_set_profile_shape_values)",
                                      t->name, (long long)count, (int)p);
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
                                  "gives rank %d", (int)p, t->name,
                                  (int)t->dims.nb_dims, (int)e->min.nb_dims);
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
                int64_t x = nt->dtype == PRT_INT32   ? ((const int32_t *)nt->const_data)[v]
                            : nt->dtype == PRT_INT64 ? ((const int64_t *)nt->const_data)[v]
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
            t->dims.d[d] = nt->dims.d[d] >= 0 ? expr_const(b->pool, nt->dims.d[d])
                                              : expr_input_dim(b->pool, i, d);
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
        return plugin_fail(l, st, "get_output_values failed");
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
            return base_error(PRT_ERR_PLUGIN,
                              "layer '%s': output %d states %d values, but only a 0-D "
                              "or 1-D int32/int64/bool output of a static size up to %d can "
                              "have them (it is %s, rank %d, size %lld)", l->name, (int)o,
                              (int)out_values[o].nb_dims, PRT_MAX_DIMS,
                              prt_dtype_name(t->dtype), (int)t->dims.nb_dims,
                              (long long)count);
        for (int32_t v = 0; v < out_values[o].nb_dims; v++)
            if (!out_values[o].d[v])
                return base_error(PRT_ERR_PLUGIN, "layer '%s': output %d value %d has no "
                                  "expression (%s)", l->name, (int)o, (int)v,
                                  expr_pool_error(b->pool));
        t->values = out_values[o];
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
        return base_error(PRT_ERR_UNSUPPORTED, "layer '%s': more than 64 inputs", l->name);
    if (l->nb_shape_inputs > 64)
        return base_error(PRT_ERR_UNSUPPORTED, "layer '%s': more than 64 shape inputs",
                          l->name);
    for (int32_t s = 0; s < l->nb_shape_inputs; s++) {
        shape_values[s] = b->t[l->shape_inputs[s]].values;
        if (shape_values[s].nb_dims < 0)
            return base_error(PRT_ERR_SHAPE,
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
        return plugin_fail(l, st, "get_output_dtypes failed");
    for (int32_t o = 0; o < l->nb_outputs; o++)
        if (prt_dtype_size(out_types[o]) == 0)
            return base_error(PRT_ERR_PLUGIN,
                              "layer '%s': plugin gave invalid dtype %d for output %d",
                              l->name, (int)out_types[o], (int)o);

    memset(out_dims, 0, sizeof out_dims);
    for (int32_t o = 0; o < l->nb_outputs; o++)
        out_dims[o].nb_dims = -1;
    expr_pool_begin_layer(b->pool, li, l->nb_outputs);
    base_clear_error();
    st = bt->get_output_shapes(l->plugin, in_dims, l->nb_inputs, shape_values,
                               l->nb_shape_inputs, out_dims, l->nb_outputs,
                               expr_pool_builder(b->pool));
    if (st)
        return plugin_fail(l, st, "get_output_shapes failed");
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
    /* Size tensors declared by this layer: 0-D integer outputs. */
    for (int32_t s = nb_sizes_before; s < expr_pool_size_count(b->pool); s++) {
        int32_t layer, oi;
        bld_tensor *t;
        expr_pool_size_owner(b->pool, s, &layer, &oi);
        t = &b->t[l->outputs[oi]];
        if (t->dims.nb_dims != 0 || (t->dtype != PRT_INT32 && t->dtype != PRT_INT64))
            return base_error(PRT_ERR_PLUGIN,
                              "layer '%s': output %d is declared a size tensor, so it "
                              "must be a 0-D int32 or int64 tensor", l->name, (int)oi);
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
        expr_profile prof = {b->net->nb_inputs, b->pmin + k,  b->popt + k,  b->pmax + k,
                             b->pvmin + k,      b->pvopt + k, b->pvmax + k};
        prt_status st = expr_program_bounds(prog, &prof, b->lo + o, b->opt + o, b->hi + o);
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
                    return base_error(PRT_ERR_SHAPE,
                                      "tensor '%s' dim %d can be negative (down to "
                                      "%lld) in profile %d", b->net->tensors[i].name,
                                      (int)d,
                                      (long long)b->lo[(size_t)p * (size_t)b->nb_nodes +
                                                       (size_t)node],
                                      (int)p);
            }
    }
    return PRT_OK;
}

/* The build-time descriptor of tensor `id` in profile p. */
static void bld_desc(const bld *b, int32_t id, int32_t p, prt_dynamic_tensor_desc *out)
{
    const bld_tensor *t = &b->t[id];
    size_t o = (size_t)p * (size_t)b->nb_nodes;
    memset(out, 0, sizeof *out);
    out->desc.dtype = t->dtype;
    out->desc.format = t->format;
    out->desc.dims.nb_dims = out->min.nb_dims = out->opt.nb_dims = out->max.nb_dims =
        t->dims.nb_dims;
    for (int32_t d = 0; d < t->dims.nb_dims; d++) {
        int32_t node = expr_id(t->dims.d[d]);
        int64_t v;
        out->desc.dims.d[d] = expr_is_const(b->pool, t->dims.d[d], &v) ? v : -1;
        out->min.d[d] = b->lo[o + (size_t)node];
        out->opt.d[d] = b->opt[o + (size_t)node];
        out->max.d[d] = b->hi[o + (size_t)node];
    }
}

/* ---- 4. formats, configure, workspace, tactics ---------------------------- */

#define MAX_COMBOS 16

typedef struct negotiation {
    int32_t nb_combos;
    int32_t formats[MAX_COMBOS][128]; /* per position */
    int32_t deepest;                  /* furthest position reached */
} negotiation;

/* Depth-first over positions in order; inputs keep their producer's dtype
 * and format, outputs try every format (in prt_format order) with the dtype
 * get_output_dtypes gave. Records up to MAX_COMBOS complete combinations in
 * the order found, which is the documented preference order. */
static void negotiate(prt_plugin *p, prt_dynamic_tensor_desc *descs, int32_t pos,
                      int32_t nb_in, int32_t nb_out, negotiation *ng)
{
    int32_t n = nb_in + nb_out;
    int32_t f0 = pos < nb_in ? descs[pos].desc.format : 0;
    int32_t f1 = pos < nb_in ? descs[pos].desc.format + 1 : PRT_FORMAT_COUNT;
    if (pos > ng->deepest)
        ng->deepest = pos;
    for (int32_t f = f0; f < f1 && ng->nb_combos < MAX_COMBOS; f++) {
        descs[pos].desc.format = f;
        if (!p->vt->build->supports_format_combination(p, pos, descs, nb_in, nb_out))
            continue;
        if (pos + 1 == n) {
            for (int32_t k = 0; k < n; k++)
                ng->formats[ng->nb_combos][k] = descs[k].desc.format;
            ng->nb_combos++;
        } else {
            negotiate(p, descs, pos + 1, nb_in, nb_out, ng);
        }
    }
}

static prt_status bld_configure(bld *b, const net_layer *l,
                                prt_dynamic_tensor_desc *descs, int32_t profile)
{
    int32_t n = l->nb_inputs + l->nb_outputs;
    int32_t fmt[128];
    prt_status st;
    for (int32_t k = 0; k < n; k++)
        fmt[k] = descs[k].desc.format;
    for (int32_t k = 0; k < n; k++) {
        int32_t id = k < l->nb_inputs ? l->inputs[k] : l->outputs[k - l->nb_inputs];
        bld_desc(b, id, profile, &descs[k]);
        descs[k].desc.format = fmt[k];
    }
    if (!BUILD_ENTRY(l->plugin, configure))
        return PRT_OK;
    base_clear_error();
    st = BUILD_ENTRY(l->plugin, configure)(l->plugin, descs, l->nb_inputs, descs + l->nb_inputs,
                       l->nb_outputs);
    return st ? plugin_fail(l, st, "configure failed") : PRT_OK;
}

static prt_status bld_tactics(const net_layer *l, int32_t **out, int32_t *out_n)
{
    int32_t count = 0, n = 1;
    int32_t *list;
    prt_status st;
    /* Without set_tactic a plugin has only the default tactic. */
    if (BUILD_ENTRY(l->plugin, get_valid_tactics) && RUNTIME_ENTRY(l->plugin, set_tactic)) {
        base_clear_error();
        st = BUILD_ENTRY(l->plugin, get_valid_tactics)(l->plugin, NULL, 0, &count);
        if (st)
            return plugin_fail(l, st, "get_valid_tactics failed");
        if (count < 0 || count > 1024)
            return base_error(PRT_ERR_PLUGIN, "layer '%s': plugin lists %d tactics",
                              l->name, (int)count);
    }
    list = base_malloc(sizeof(int32_t) * (size_t)(count + 1));
    if (!list)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    list[0] = 0;
    if (count) {
        int32_t got = 0;
        st = BUILD_ENTRY(l->plugin, get_valid_tactics)(l->plugin, list + 1, count, &got);
        if (st) {
            base_free(list);
            return plugin_fail(l, st, "get_valid_tactics failed");
        }
        if (got > count)
            got = count;
        for (int32_t i = 1; i <= got; i++)
            if (list[i] != 0)
                list[n++] = list[i];
    }
    *out = list;
    *out_n = n;
    return PRT_OK;
}

static prt_status bld_layer_formats(bld *b, int32_t li)
{
    const net_layer *l = &b->net->layers[li];
    bld_layer *bl = &b->l[li];
    int32_t nb_in = l->nb_inputs, nb_out = l->nb_outputs, n = nb_in + nb_out;
    negotiation *ng;
    int32_t *tactics = NULL, nb_tactics = 0, combo = 0;
    prt_status st = PRT_OK;
    char buf[128];

    if (n > 128)
        return base_error(PRT_ERR_UNSUPPORTED, "layer '%s': too many tensors", l->name);
    bl->descs = base_calloc((size_t)n, sizeof(prt_dynamic_tensor_desc));
    ng = base_calloc(1, sizeof *ng);
    if (!bl->descs || !ng) {
        base_free(ng);
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    }
    for (int32_t k = 0; k < n; k++)
        bld_desc(b, k < nb_in ? l->inputs[k] : l->outputs[k - nb_in], 0, &bl->descs[k]);
    negotiate(l->plugin, bl->descs, 0, nb_in, nb_out, ng);
    if (ng->nb_combos == 0) {
        const prt_dynamic_tensor_desc *d = &bl->descs[ng->deepest];
        base_dims_str(&d->desc.dims, buf, sizeof buf);
        st = base_error(PRT_ERR_UNSUPPORTED,
                        "layer '%s' (plugin %s) accepts no type/format combination: "
                        "it rejects %s %d (%s, dims %s)", l->name,
                        plugin_label(l->plugin), ng->deepest < nb_in ? "input" : "output",
                        (int)(ng->deepest < nb_in ? ng->deepest : ng->deepest - nb_in),
                        prt_dtype_name(d->desc.dtype), buf);
        goto done;
    }
    st = bld_tactics(l, &tactics, &nb_tactics);
    if (st)
        goto done;

    if (b->cfg->autotune && (ng->nb_combos > 1 || nb_tactics > 1)) {
        uint32_t out_dd[64] = {0};
        int32_t nc = ng->nb_combos * nb_tactics, best = 0;
        tune_candidate *cands = base_calloc((size_t)nc, sizeof *cands);
        prt_dynamic_tensor_desc *all = base_calloc((size_t)ng->nb_combos * (size_t)n,
                                                   sizeof *all);
        int64_t ws_max = 0;
        for (int32_t o = 0; o < nb_out && o < 64; o++) {
            const bld_tensor *t = &b->t[l->outputs[o]];
            for (int32_t d = 0; d < t->dims.nb_dims; d++)
                if (b->dd[expr_id(t->dims.d[d])])
                    out_dd[o] |= 1u << d;
        }
        if (!cands || !all) {
            base_free(cands);
            base_free(all);
            st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
            goto done;
        }
        for (int32_t c = 0; c < ng->nb_combos && !st; c++) {
            prt_dynamic_tensor_desc *d = all + (size_t)c * (size_t)n;
            int64_t ws = 0;
            for (int32_t k = 0; k < n; k++)
                d[k].desc.format = ng->formats[c][k];
            st = bld_configure(b, l, d, 0);
            if (!st && BUILD_ENTRY(l->plugin, get_workspace_size)) {
                st = BUILD_ENTRY(l->plugin, get_workspace_size)(l->plugin, d, nb_in, d + nb_in, nb_out, &ws);
                if (st)
                    st = plugin_fail(l, st, "get_workspace_size failed");
            }
            if (ws > ws_max)
                ws_max = ws;
            for (int32_t t = 0; t < nb_tactics; t++) {
                cands[c * nb_tactics + t].tactic = tactics[t];
                cands[c * nb_tactics + t].descs = d;
            }
        }
        if (!st && ws_max > b->cfg->workspace_limit)
            st = base_error(PRT_ERR_UNSUPPORTED,
                            "layer '%s' needs %lld bytes of workspace, over the limit "
                            "of %lld (prt_builder_config_set_workspace_limit)", l->name,
                            (long long)ws_max, (long long)b->cfg->workspace_limit);
        if (!st)
            st = tune_layer(l->plugin, l->name, nb_in, nb_out, cands, nc, ws_max,
                            out_dd, &best);
        if (!st) {
            combo = best / nb_tactics;
            bl->tactic = tactics[best % nb_tactics];
        }
        base_free(cands);
        base_free(all);
        if (st)
            goto done;
    }

    /* The chosen combination: configure for every profile; the workspace is
     * the largest any profile asks for. */
    for (int32_t k = 0; k < n; k++)
        bl->descs[k].desc.format = ng->formats[combo][k];
    for (int32_t p = b->nb_profiles - 1; p >= 0 && !st; p--) {
        int64_t ws = 0;
        st = bld_configure(b, l, bl->descs, p);
        if (!st && BUILD_ENTRY(l->plugin, get_workspace_size)) {
            base_clear_error();
            st = BUILD_ENTRY(l->plugin, get_workspace_size)(l->plugin, bl->descs, nb_in, bl->descs + nb_in,
                                        nb_out, &ws);
            if (st)
                st = plugin_fail(l, st, "get_workspace_size failed");
            else if (ws < 0)
                st = base_error(PRT_ERR_PLUGIN, "layer '%s': negative workspace %lld",
                                l->name, (long long)ws);
        }
        if (ws > bl->workspace)
            bl->workspace = ws;
    }
    if (!st && bl->workspace > b->cfg->workspace_limit)
        st = base_error(PRT_ERR_UNSUPPORTED,
                        "layer '%s' needs %lld bytes of workspace, over the limit of "
                        "%lld (prt_builder_config_set_workspace_limit)", l->name,
                        (long long)bl->workspace, (long long)b->cfg->workspace_limit);
    /* Outputs take the negotiated formats; consumers see them. */
    for (int32_t o = 0; !st && o < nb_out; o++)
        b->t[l->outputs[o]].format = bl->descs[nb_in + o].desc.format;
    base_log(PRT_SEV_VERBOSE, "layer '%s': tactic %d, workspace %lld, %d combination(s)",
             l->name, (int)bl->tactic, (long long)bl->workspace, (int)ng->nb_combos);
done:
    base_free(tactics);
    base_free(ng);
    return st;
}

/* ---- 5. aliasing, memory plan, assembly ---------------------------------- */

/* Tensors outside the arena: user memory and engine constants. */
static int is_io(const prt_network *net, int32_t id)
{
    return net->tensors[id].input_index >= 0 || net->tensors[id].is_output ||
           net->tensors[id].const_bytes >= 0;
}

static prt_status bld_alias(bld *b)
{
    const prt_network *net = b->net;
    for (int32_t li = 0; li < net->nb_layers; li++) {
        const net_layer *l = &net->layers[li];
        bld_layer *bl = &b->l[li];
        bl->alias_input = base_malloc(sizeof(int32_t) * (size_t)l->nb_outputs);
        bl->alias_copy = base_calloc((size_t)l->nb_outputs, 1);
        if (!bl->alias_input || !bl->alias_copy)
            return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
        for (int32_t o = 0; o < l->nb_outputs; o++) {
            int32_t in = BUILD_ENTRY(l->plugin, get_aliased_input) ? BUILD_ENTRY(l->plugin, get_aliased_input)(l->plugin, o) : -1;
            int32_t tin, tout = l->outputs[o], uses = 0;
            bl->alias_input[o] = -1;
            if (in < 0)
                continue;
            if (in >= l->nb_inputs)
                return base_error(PRT_ERR_PLUGIN,
                                  "layer '%s': output %d aliases input %d, but there "
                                  "are %d inputs", l->name, (int)o, (int)in,
                                  (int)l->nb_inputs);
            tin = l->inputs[in];
            if (b->t[tin].dtype != b->t[tout].dtype ||
                b->t[tin].dims.nb_dims != b->t[tout].dims.nb_dims ||
                memcmp(b->t[tin].dims.d, b->t[tout].dims.d,
                       sizeof(prt_expr *) * (size_t)b->t[tin].dims.nb_dims) != 0)
                return base_error(PRT_ERR_PLUGIN,
                                  "layer '%s': output %d aliases input %d, but their "
                                  "dtypes or shapes differ", l->name, (int)o, (int)in);
            for (int32_t k = 0; k < l->nb_inputs; k++)
                uses += l->inputs[k] == tin;
            /* An earlier output of this layer that already took the input's
             * memory counts as a use: two outputs in one buffer would
             * overwrite each other. */
            for (int32_t k = 0; k < o; k++)
                uses += bl->alias_input[k] == in && !bl->alias_copy[k];
            bl->alias_input[o] = in;
            /* Share memory only when nobody can see the input change: both
             * live in the arena, the input dies here and is read once. Else
             * the runtime copies the input into the output first. */
            if (!is_io(net, tin) && !is_io(net, tout) && b->t[tin].last_use == li &&
                uses == 1)
                b->t[tout].root = b->t[tin].root;
            else
                bl->alias_copy[o] = 1;
        }
    }
    return PRT_OK;
}

static prt_status tensor_max_bytes(const bld *b, int32_t id, int64_t *out)
{
    const bld_tensor *t = &b->t[id];
    int64_t best = 0;
    for (int32_t p = 0; p < b->nb_profiles; p++) {
        int64_t v = (int64_t)prt_dtype_size(t->dtype);
        for (int32_t d = 0; d < t->dims.nb_dims; d++) {
            int64_t hi = b->hi[(size_t)p * (size_t)b->nb_nodes +
                               (size_t)expr_id(t->dims.d[d])];
            if (!base_mul_i64(v, hi, &v))
                return base_error(PRT_ERR_SHAPE, "tensor '%s' is too large to address",
                                  b->net->tensors[id].name);
        }
        if (v > best)
            best = v;
    }
    *out = best;
    return PRT_OK;
}

static prt_status bld_copy_fields(const net_layer *l, eng_layer *el)
{
    const prt_field_collection *fc;
    size_t total = 0, off = 0;
    base_clear_error();
    fc = l->plugin->vt->runtime->get_fields_to_serialize(l->plugin);
    if (!fc)
        return plugin_fail(l, PRT_ERR_PLUGIN, "get_fields_to_serialize returned NULL");
    if (fc->nb_fields < 0 || fc->nb_fields > 4096 || (fc->nb_fields && !fc->fields))
        return base_error(PRT_ERR_PLUGIN, "layer '%s': bad field collection", l->name);
    for (int32_t i = 0; i < fc->nb_fields; i++) {
        const prt_field *f = &fc->fields[i];
        size_t es = base_field_type_size(f->type);
        if (!f->name || es == 0 || f->length < 0 || f->length > ((int64_t)1 << 40) ||
            (f->length && !f->data))
            return base_error(PRT_ERR_PLUGIN,
                              "layer '%s': serialized field %d is malformed", l->name,
                              (int)i);
        total += (strlen(f->name) + 1 + 7) / 8 * 8 + ((size_t)f->length * es + 7) / 8 * 8;
    }
    el->nb_fields = fc->nb_fields;
    el->fields = base_calloc((size_t)fc->nb_fields + 1, sizeof(prt_field));
    el->field_blob = base_calloc(total + 8, 1);
    el->field_blob_size = (int64_t)total;
    if (!el->fields || !el->field_blob)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    for (int32_t i = 0; i < fc->nb_fields; i++) {
        const prt_field *f = &fc->fields[i];
        size_t es = base_field_type_size(f->type);
        size_t nl = strlen(f->name) + 1, nb = (size_t)f->length * es;
        memcpy(el->field_blob + off, f->name, nl);
        el->fields[i].name = (const char *)el->field_blob + off;
        off += (nl + 7) / 8 * 8;
        if (f->type == PRT_FIELD_DIMS) {
            /* Member by member, so padding bytes stay zero in the file. */
            const prt_dims *src = f->data;
            prt_dims *dst = (prt_dims *)(void *)(el->field_blob + off);
            for (int64_t k = 0; k < f->length; k++) {
                dst[k].nb_dims = src[k].nb_dims;
                memcpy(dst[k].d, src[k].d, sizeof dst[k].d);
            }
        } else if (nb) {
            memcpy(el->field_blob + off, f->data, nb);
        }
        el->fields[i].data = el->field_blob + off;
        el->fields[i].type = f->type;
        el->fields[i].length = f->length;
        off += (nb + 7) / 8 * 8;
    }
    return PRT_OK;
}

static char *dup_or_empty(const char *s) { return base_strdup(s ? s : ""); }

static prt_status bld_assemble(bld *b, prt_engine **out)
{
    const prt_network *net = b->net;
    prt_engine *e = engine_alloc();
    plan_item *items = NULL;
    int32_t *item_of = NULL, nb_items = 0;
    int64_t weights_used = 0;
    prt_status st = PRT_OK;
    size_t np = (size_t)b->nb_profiles * (size_t)net->nb_inputs;

    if (!e)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    e->device = b->cfg->device;
    e->nb_tensors = net->nb_tensors;
    e->tensors = base_calloc((size_t)net->nb_tensors, sizeof(eng_tensor));
    e->nb_layers = net->nb_layers;
    e->layers = base_calloc((size_t)net->nb_layers + 1, sizeof(eng_layer));
    e->nb_inputs = net->nb_inputs;
    e->input_tensors = base_malloc(sizeof(int32_t) * (size_t)(net->nb_inputs + 1));
    e->nb_outputs = net->nb_outputs;
    e->output_tensors = base_malloc(sizeof(int32_t) * (size_t)(net->nb_outputs + 1));
    e->nb_profiles = b->nb_profiles;
    e->prof_min = base_malloc(sizeof(prt_dims) * (np + 1));
    e->prof_opt = base_malloc(sizeof(prt_dims) * (np + 1));
    e->prof_max = base_malloc(sizeof(prt_dims) * (np + 1));
    e->prof_vmin = base_calloc(np + 1, sizeof(prt_dims));
    e->prof_vopt = base_calloc(np + 1, sizeof(prt_dims));
    e->prof_vmax = base_calloc(np + 1, sizeof(prt_dims));
    items = base_calloc((size_t)net->nb_tensors + 1, sizeof *items);
    item_of = base_malloc(sizeof(int32_t) * ((size_t)net->nb_tensors + 1));
    if (!e->tensors || !e->layers || !e->input_tensors || !e->output_tensors ||
        !e->prof_min || !e->prof_opt || !e->prof_max || !e->prof_vmin ||
        !e->prof_vopt || !e->prof_vmax || !items || !item_of) {
        /* engine_free walks the counted arrays; none was filled yet. */
        if (!e->tensors)
            e->nb_tensors = 0;
        if (!e->layers)
            e->nb_layers = 0;
        st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
        goto fail;
    }
    if (net->nb_inputs)
        memcpy(e->input_tensors, net->inputs, sizeof(int32_t) * (size_t)net->nb_inputs);
    memcpy(e->output_tensors, net->outputs, sizeof(int32_t) * (size_t)net->nb_outputs);
    /* Zero the padding too: profiles are written to the file. */
    memset(e->prof_min, 0, sizeof(prt_dims) * (np + 1));
    memset(e->prof_opt, 0, sizeof(prt_dims) * (np + 1));
    memset(e->prof_max, 0, sizeof(prt_dims) * (np + 1));
    for (size_t k = 0; k < np; k++) {
        e->prof_min[k].nb_dims = b->pmin[k].nb_dims;
        e->prof_opt[k].nb_dims = b->popt[k].nb_dims;
        e->prof_max[k].nb_dims = b->pmax[k].nb_dims;
        memcpy(e->prof_min[k].d, b->pmin[k].d, sizeof b->pmin[k].d);
        memcpy(e->prof_opt[k].d, b->popt[k].d, sizeof b->popt[k].d);
        memcpy(e->prof_max[k].d, b->pmax[k].d, sizeof b->pmax[k].d);
        /* Unused value slots are zero in b (calloc): copy whole. */
        e->prof_vmin[k] = b->pvmin[k];
        e->prof_vopt[k] = b->pvopt[k];
        e->prof_vmax[k] = b->pvmax[k];
    }
    st = expr_program_copy(expr_pool_program(b->pool), &e->exprs);
    if (st)
        goto fail;
    e->nb_sizes = expr_pool_size_count(b->pool);

    /* Constants, each 64-byte aligned in one weights block. */
    for (int32_t i = 0; i < net->nb_tensors; i++)
        if (net->tensors[i].const_bytes >= 0)
            e->weights_size += (net->tensors[i].const_bytes + 63) / 64 * 64;
    e->weights = base_calloc((size_t)e->weights_size + 1, 1);
    if (!e->weights) {
        st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory for %lld bytes of "
                        "constants", (long long)e->weights_size);
        goto fail;
    }

    /* Tensors; arena items, one per memory root. */
    for (int32_t i = 0; i < net->nb_tensors; i++)
        item_of[i] = -1;
    for (int32_t i = 0; i < net->nb_tensors; i++) {
        const net_tensor *nt = &net->tensors[i];
        const bld_tensor *t = &b->t[i];
        eng_tensor *et = &e->tensors[i];
        et->name = base_strdup(nt->name);
        if (!et->name) {
            st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
            goto fail;
        }
        et->dtype = t->dtype;
        et->format = t->format;
        et->nb_dims = t->dims.nb_dims;
        for (int32_t d = 0; d < t->dims.nb_dims; d++)
            et->dim_expr[d] = expr_id(t->dims.d[d]);
        et->input_index = nt->input_index;
        et->output_index = -1;
        for (int32_t k = 0; k < net->nb_outputs; k++)
            if (net->outputs[k] == i)
                et->output_index = k;
        et->size_id = t->size_id;
        et->producer = nt->producer;
        et->offset = -1;
        et->const_offset = -1;
        st = tensor_max_bytes(b, i, &et->max_bytes);
        if (st)
            goto fail;
        if (nt->const_bytes >= 0) {
            et->const_offset = weights_used;
            if (nt->const_bytes)
                memcpy(e->weights + weights_used, nt->const_data, (size_t)nt->const_bytes);
            weights_used += (nt->const_bytes + 63) / 64 * 64;
        }
        if (!is_io(net, i)) {
            int32_t r = t->root;
            plan_item *it;
            if (item_of[r] < 0) {
                item_of[r] = nb_items++;
                items[item_of[r]].first = nt->producer;
                items[item_of[r]].last = nt->producer;
            }
            it = &items[item_of[r]];
            if (et->max_bytes > it->bytes)
                it->bytes = et->max_bytes;
            if (nt->producer < it->first)
                it->first = nt->producer;
            if (t->last_use > it->last)
                it->last = t->last_use;
            if (nt->producer > it->last)
                it->last = nt->producer;
        }
    }
    e->arena_size = plan_arena(items, nb_items);
    if (e->arena_size < 0) {
        st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: memory plan failed");
        goto fail;
    }
    for (int32_t i = 0; i < net->nb_tensors; i++)
        if (!is_io(net, i))
            e->tensors[i].offset = items[item_of[b->t[i].root]].offset;

    /* Layers. */
    for (int32_t li = 0; li < net->nb_layers; li++) {
        const net_layer *l = &net->layers[li];
        const bld_layer *bl = &b->l[li];
        eng_layer *el = &e->layers[li];
        const prt_plugin_creator *c = NULL;
        const char *lib = NULL;
        uint64_t hash = 0;
        const prt_plugin *p = l->plugin;
        if (b->reg && prt_registry_find_creator(b->reg, p->vt->core->plugin_namespace(p),
                                                p->vt->core->name(p),
                                                p->vt->core->version(p), &c) == PRT_OK)
            lib = prt_registry_get_creator_library(b->reg, c, &hash);
        base_clear_error();
        el->name = base_strdup(l->name);
        el->plugin_namespace = dup_or_empty(p->vt->core->plugin_namespace(p));
        el->plugin_name = dup_or_empty(p->vt->core->name(p));
        el->plugin_version = dup_or_empty(p->vt->core->version(p));
        el->library = dup_or_empty(lib);
        el->library_hash = hash;
        el->plugin_abi = c ? c->abi_version : p->vt->abi_version;
        el->device = e->device;
        el->nb_inputs = l->nb_inputs;
        el->inputs = base_malloc(sizeof(int32_t) * (size_t)(l->nb_inputs + 1));
        el->nb_outputs = l->nb_outputs;
        el->outputs = base_malloc(sizeof(int32_t) * (size_t)l->nb_outputs);
        el->alias_input = base_malloc(sizeof(int32_t) * (size_t)l->nb_outputs);
        el->alias_copy = base_malloc((size_t)l->nb_outputs);
        el->tactic = bl->tactic;
        el->workspace = bl->workspace;
        if (!el->name || !el->plugin_namespace || !el->plugin_name ||
            !el->plugin_version || !el->library || !el->inputs || !el->outputs ||
            !el->alias_input || !el->alias_copy) {
            st = base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
            goto fail;
        }
        memcpy(el->inputs, l->inputs, sizeof(int32_t) * (size_t)l->nb_inputs);
        memcpy(el->outputs, l->outputs, sizeof(int32_t) * (size_t)l->nb_outputs);
        memcpy(el->alias_input, bl->alias_input, sizeof(int32_t) * (size_t)l->nb_outputs);
        memcpy(el->alias_copy, bl->alias_copy, (size_t)l->nb_outputs);
        if (el->workspace > e->workspace_size)
            e->workspace_size = el->workspace;
        st = bld_copy_fields(l, el);
        if (st)
            goto fail;
        /* The engine's own plugin: a clone of the built one, at its tactic. */
        el->plugin = p->vt->runtime->clone(p);
        if (!el->plugin) {
            st = plugin_fail(l, PRT_ERR_PLUGIN, "clone failed");
            goto fail;
        }
        st = RUNTIME_ENTRY(el->plugin, set_tactic)
                 ? RUNTIME_ENTRY(el->plugin, set_tactic)(el->plugin, el->tactic)
                 : PRT_OK;
        if (st) {
            st = plugin_fail(l, st, "set_tactic failed");
            goto fail;
        }
    }
    st = engine_validate(e);
    if (st) {
        st = base_error_prefix(PRT_ERR_INTERNAL, "the built engine is inconsistent");
        goto fail;
    }
    base_free(items);
    base_free(item_of);
    *out = e;
    return PRT_OK;
fail:
    base_free(items);
    base_free(item_of);
    engine_free(e);
    return st;
}

/* ---- entry point --------------------------------------------------------- */

prt_status prt_engine_build(const prt_network *net, const prt_builder_config *cfg,
                            const prt_registry *reg, prt_engine **out)
{
    bld b;
    prt_status st = PRT_OK;
    if (!net || !cfg || !out)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_engine_build: NULL argument");
    if (net->nb_outputs == 0)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "the network has no outputs (prt_network_mark_output)");
    memset(&b, 0, sizeof b);
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
        for (int32_t k = 0; k < l->nb_inputs; k++)
            b.t[l->inputs[k]].last_use = li;
        if (cfg->device != PRT_DEVICE_CPU ||
            !(l->plugin->vt->core->devices(l->plugin) & (1u << cfg->device))) {
            st = base_error(PRT_ERR_UNSUPPORTED, "layer '%s': plugin %s does not run on %s",
                            l->name, plugin_label(l->plugin),
                            cfg->device == PRT_DEVICE_CPU ? "the CPU" : "CUDA");
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
    for (int32_t li = 0; !st && li < net->nb_layers; li++)
        st = bld_layer_formats(&b, li);
    if (!st)
        st = bld_alias(&b);
    if (!st)
        st = bld_assemble(&b, out);
done:
    if (b.l)
        for (int32_t li = 0; li < net->nb_layers; li++) {
            base_free(b.l[li].descs);
            base_free(b.l[li].alias_input);
            base_free(b.l[li].alias_copy);
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
    return st;
}
