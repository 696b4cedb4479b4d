/* The built-in op scaffold: messages, plugin tables, dtype negotiation,
 * run-time checks, creation. See op_common.h. */
#include "ops/op_common.h"
#include "ops/op_const.h"
#include "ops/op_device.h"
#include "ops/op_elem.h"
#include "ops/op_workspace.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Messages                                                                  */
/* ------------------------------------------------------------------------ */

const char *op_name(const op_object *o)
{
    return o->creator->name;
}

prt_status op_fail(const op_object *o, prt_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    status = op_vfail(op_name(o), o->layer, status, fmt, ap);
    va_end(ap);
    return status;
}

/* "float32, float16 or int32" for a mask. */
static const char *dtype_list(uint32_t mask, char *buf, size_t cap)
{
    size_t n = 0;
    int32_t count = 0, seen = 0;
    for (int32_t t = 0; t < PRT_DTYPE_COUNT; t++)
        count += (mask >> t) & 1u;
    buf[0] = '\0';
    for (int32_t t = 0; t < PRT_DTYPE_COUNT && n < cap; t++) {
        if (!((mask >> t) & 1u))
            continue;
        seen++;
        n += (size_t)snprintf(buf + n, cap - n, "%s%s",
                              seen == 1       ? ""
                              : seen == count ? " or "
                                              : ", ",
                              prt_dtype_name(t));
    }
    return buf;
}

const char *op_exprs_str(prt_expr_builder *eb, const prt_dim_exprs *d, char *buf,
                         size_t cap)
{
    prt_dims v;
    v.nb_dims = d->nb_dims < 0 || d->nb_dims > PRT_MAX_DIMS ? 0 : d->nb_dims;
    for (int32_t i = 0; i < v.nb_dims; i++)
        if (!d->d[i] || !eb->is_constant(eb, d->d[i], &v.d[i]))
            v.d[i] = BASE_DIM_UNKNOWN;
    return base_dims_format(&v, BASE_DIMS_LIST, buf, cap);
}

/* ------------------------------------------------------------------------ */
/* Checks shared by build and run                                            */
/* ------------------------------------------------------------------------ */

prt_status op_axis(const op_object *o, int32_t axis, int32_t r, int32_t end,
                   const char *what, int32_t *out)
{
    int32_t hi = end ? r : r - 1;
    if (hi < 0)
        return op_fail(o, PRT_ERR_SHAPE,
                       "axis %d needs %s of rank 1 or more, not a scalar", (int)axis,
                       what);
    if (axis < -r || axis > hi)
        return op_fail(o, PRT_ERR_SHAPE,
                       "axis %d is out of range for %s of rank %d (-%d to %d)", (int)axis,
                       what, (int)r, (int)r, (int)hi);
    *out = axis < 0 ? axis + r : axis;
    return PRT_OK;
}

static op_object *obj(prt_plugin *p)
{
    return (op_object *)p;
}
static const op_object *cobj(const prt_plugin *p)
{
    return (const op_object *)p;
}

/* The number of outputs of this object. */
static int32_t nb_outs(const op_object *o)
{
    return o->cls->nb_outputs ? o->cls->nb_outputs(o) : 1;
}

static prt_status check_io(const op_object *o, int32_t nb_in, int32_t nb_out)
{
    const op_class *c = o->cls;
    int32_t want = nb_outs(o);
    if (nb_in < c->min_inputs || nb_in > c->max_inputs) {
        if (c->min_inputs == c->max_inputs)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "takes %d input%s, got %d",
                           (int)c->min_inputs, c->min_inputs == 1 ? "" : "s", (int)nb_in);
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "takes %d to %d inputs, got %d",
                       (int)c->min_inputs, (int)c->max_inputs, (int)nb_in);
    }
    if (nb_out != want)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "has %d output%s, got %d", (int)want,
                       want == 1 ? "" : "s", (int)nb_out);
    return PRT_OK;
}

/* The mask input i accepts given the dtypes before it. */
static uint32_t in_mask(const op_object *o, int32_t i, const int32_t *types)
{
    if (o->cls->in_dtypes)
        return o->cls->in_dtypes(o, i, types);
    return i == 0 ? o->cls->dtypes : OP_DT(types[0]);
}

static int32_t out_dtype(const op_object *o, const int32_t *types, int32_t n);

/* Output k's dtype for these input dtypes (already checked). */
static int32_t out_dtype_at(const op_object *o, const int32_t *types, int32_t n,
                            int32_t k)
{
    if (o->cls->nb_outputs)
        return o->cls->out_dtype_n(o, types, n, k);
    return out_dtype(o, types, n);
}

/* The output dtype for these input dtypes (already checked). */
static int32_t out_dtype(const op_object *o, const int32_t *types, int32_t n)
{
    if (o->cls->out_dtype)
        return o->cls->out_dtype(o, types, n);
    return n > 0 ? types[0] : -1;
}

/* types[0..n): in the class's mask and all equal (by default), or each in
 * its in_dtypes mask. */
static prt_status check_dtypes(const op_object *o, const int32_t *types, int32_t n)
{
    char list[160];
    int32_t t0 = n > 0 ? types[0] : 0;
    if (o->cls->in_dtypes) {
        for (int32_t i = 0; i < n; i++) {
            uint32_t m = o->cls->in_dtypes(o, i, types);
            if (types[i] < 0 || types[i] >= PRT_DTYPE_COUNT || !((m >> types[i]) & 1u))
                return op_fail(o, PRT_ERR_UNSUPPORTED,
                               "input %d dtype %s is not supported here "
                               "(supported: %s)",
                               (int)i, prt_dtype_name(types[i]),
                               dtype_list(m, list, sizeof list));
        }
        return PRT_OK;
    }
    if (n == 0)
        return PRT_OK;
    if (t0 < 0 || t0 >= PRT_DTYPE_COUNT || !((o->cls->dtypes >> t0) & 1u))
        return op_fail(o, PRT_ERR_UNSUPPORTED,
                       "dtype %s is not supported (supported: %s)", prt_dtype_name(t0),
                       dtype_list(o->cls->dtypes, list, sizeof list));
    for (int32_t i = 1; i < n; i++)
        if (types[i] != t0)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "input %d is %s but input 0 is %s; all inputs "
                           "must share one dtype",
                           (int)i, prt_dtype_name(types[i]), prt_dtype_name(t0));
    return PRT_OK;
}

/* A run's format: LINEAR, or CHW8 of a float32 tensor of rank 3 or more
 * for a class that takes it somewhere (the kernel checks where). */
static int format_ok(const op_object *o, const prt_tensor_desc *d)
{
    return d->format == PRT_FORMAT_LINEAR ||
           (d->format == PRT_FORMAT_CHW8 && o->cls->chw8_ok && d->dtype == PRT_FLOAT32 &&
            d->dims.nb_dims >= 3);
}

static prt_status check_desc_dtypes(const op_object *o, const prt_tensor_desc *in,
                                    int32_t nb_in, const prt_tensor_desc *out,
                                    int32_t nb_out)
{
    int32_t types[OP_MAX_INPUTS];
    prt_status st;
    for (int32_t i = 0; i < nb_in; i++)
        types[i] = in[i].dtype;
    st = check_dtypes(o, types, nb_in);
    if (st)
        return st;
    for (int32_t k = 0; k < nb_out; k++) {
        int32_t want = out_dtype_at(o, types, nb_in, k);
        if (out[k].dtype != want)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "output %d dtype %s differs from %s, which the inputs give",
                           (int)k, prt_dtype_name(out[k].dtype), prt_dtype_name(want));
        if (!format_ok(o, &out[k]))
            return op_fail(o, PRT_ERR_UNSUPPORTED,
                           "output %d format %d is not one it takes", (int)k,
                           (int)out[k].format);
    }
    for (int32_t i = 0; i < nb_in; i++)
        if (!format_ok(o, &in[i]))
            return op_fail(o, PRT_ERR_UNSUPPORTED,
                           "input %d format %d is not one it takes", (int)i,
                           (int)in[i].format);
    return PRT_OK;
}

/* Which positions of these descriptors are CHW8 (op_object.chw8). */
static uint32_t chw8_mask(const prt_tensor_desc *in, int32_t nb_in,
                          const prt_tensor_desc *out, int32_t nb_out)
{
    uint32_t m = 0;
    for (int32_t i = 0; i < nb_in && i < OP_CHW8_OUT; i++)
        if (in[i].format == PRT_FORMAT_CHW8)
            m |= 1u << i;
    for (int32_t k = 0; k < nb_out && k < 32 - OP_CHW8_OUT; k++)
        if (out[k].format == PRT_FORMAT_CHW8)
            m |= 1u << (OP_CHW8_OUT + k);
    return m;
}

/* Concrete dims: infer the output and compare it with what the runtime
 * gives. */
static prt_status check_dims(const op_object *o, const prt_tensor_desc *in, int32_t nb_in,
                             const prt_tensor_desc *out, int32_t nb_out)
{
    prt_dims ind[OP_MAX_INPUTS], want[OP_MAX_OUTPUTS];
    char a[128], b[128];
    prt_status st;
    for (int32_t i = 0; i < nb_in; i++) {
        ind[i] = in[i].dims;
        if (base_volume(&ind[i]) < 0)
            return op_fail(o, PRT_ERR_SHAPE, "input %d dims %s are not valid", (int)i,
                           base_dims_format(&ind[i], BASE_DIMS_LIST, a, sizeof a));
    }
    if (o->cls->nb_outputs ? !o->cls->infer_n : !o->cls->infer)
        return PRT_OK; /* dims from values or data: run checks what it relies on */
    /* Only the outputs there are: this runs at every enqueue, and the whole
     * array (OP_MAX_OUTPUTS dims, 4.6 KB) cost a tiny layer more than its
     * kernel (bench/executor_overhead.py). */
    memset(want, 0, sizeof(prt_dims) * (size_t)(nb_out > 0 ? nb_out : 1));
    st = o->cls->nb_outputs ? o->cls->infer_n(o, ind, nb_in, want, nb_out)
                            : o->cls->infer(o, ind, nb_in, &want[0]);
    if (st)
        return st;
    for (int32_t k = 0; k < nb_out; k++)
        if (want[k].nb_dims != out[k].dims.nb_dims ||
            memcmp(want[k].d, out[k].dims.d, sizeof(int64_t) * (size_t)want[k].nb_dims))
            return op_fail(o, PRT_ERR_SHAPE,
                           "output %d dims %s differ from %s computed from the "
                           "inputs' dims",
                           (int)k,
                           base_dims_format(&out[k].dims, BASE_DIMS_LIST, a, sizeof a),
                           base_dims_format(&want[k], BASE_DIMS_LIST, b, sizeof b));
    return PRT_OK;
}

/* ------------------------------------------------------------------------ */
/* Core                                                                      */
/* ------------------------------------------------------------------------ */

static const char *core_name(const prt_plugin *p)
{
    return cobj(p)->creator->name;
}
static const char *core_version(const prt_plugin *p)
{
    return cobj(p)->creator->version;
}
static const char *core_namespace(const prt_plugin *p)
{
    return cobj(p)->creator->plugin_namespace;
}
static uint32_t core_devices(const prt_plugin *p)
{
    uint32_t mask = 1u << PRT_DEVICE_CPU;
    for (int32_t d = 0; d < PRT_DEVICE_COUNT; d++)
        if (cobj(p)->kern[d])
            mask |= 1u << d;
    return mask & ~cobj(p)->refused_devices;
}

/* The devices whose kernel refuses these descriptors' dtypes (which the
 * class accepts): the configuration's are kept for devices(). */
static uint32_t refused_for(const op_object *o, const prt_tensor_desc *in, int32_t nb_in,
                            const prt_tensor_desc *out, int32_t nb_out)
{
    const int32_t k = o->cls->dtype_input;
    const int32_t key = k < nb_in ? in[k].dtype : out[0].dtype;
    uint32_t refused = 0, all = 0;
    for (int32_t i = 0; i < nb_in; i++)
        all |= in[i].dtype >= 0 && in[i].dtype < PRT_DTYPE_COUNT ? OP_DT(in[i].dtype) : 0;
    for (int32_t i = 0; i < nb_out; i++)
        all |=
            out[i].dtype >= 0 && out[i].dtype < PRT_DTYPE_COUNT ? OP_DT(out[i].dtype) : 0;
    /* By dtype only. The blocked format (CPU kernels only) is no refusal
     * here: only a CPU build picks it, and the object outlives that build,
     * so a later build of the same network for CUDA would otherwise find
     * the device gone before it configures anything (runtime_configure
     * refuses CHW8 on another device itself). */
    for (int32_t d = 0; d < PRT_DEVICE_COUNT; d++) {
        const op_device_kernel *kd = o->kern[d];
        if (kd && (key < 0 || key >= PRT_DTYPE_COUNT ||
                   !(op_device_kernel_dtypes(kd) & OP_DT(key)) ||
                   (!kd->dtypes && (all & OP_DT_WIDE))))
            refused |= 1u << d;
    }
    return refused;
}

static const prt_plugin_core op_core = {sizeof(prt_plugin_core),
                                        PRT_PLUGIN_ABI_VERSION,
                                        core_name,
                                        core_version,
                                        core_namespace,
                                        core_devices};

/* ------------------------------------------------------------------------ */
/* Build                                                                     */
/* ------------------------------------------------------------------------ */

static int32_t bld_nb_outputs(const prt_plugin *p)
{
    return nb_outs(cobj(p));
}

static prt_status bld_dtypes(prt_plugin *p, int32_t *out_types, int32_t nb_outputs,
                             const int32_t *in_types, int32_t nb_inputs)
{
    op_object *o = obj(p);
    prt_status st = check_io(o, nb_inputs, nb_outputs);
    if (!st)
        st = check_dtypes(o, in_types, nb_inputs);
    for (int32_t k = 0; !st && k < nb_outputs; k++)
        out_types[k] = out_dtype_at(o, in_types, nb_inputs, k);
    return st;
}

static prt_status bld_shapes(prt_plugin *p, const prt_dim_exprs *inputs,
                             int32_t nb_inputs, const prt_dim_exprs *shape_inputs,
                             int32_t nb_shape_inputs, prt_dim_exprs *outputs,
                             int32_t nb_outputs, prt_expr_builder *exprs)
{
    op_object *o = obj(p);
    const op_class *c = o->cls;
    prt_status st = check_io(o, nb_inputs, nb_outputs);
    if (st)
        return st;
    if (nb_shape_inputs < c->min_shape_inputs || nb_shape_inputs > c->max_shape_inputs)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "takes %d to %d shape inputs, got %d",
                       (int)c->min_shape_inputs, (int)c->max_shape_inputs,
                       (int)nb_shape_inputs);
    for (int32_t i = 0; i < nb_inputs; i++)
        if (inputs[i].nb_dims < 0 || inputs[i].nb_dims > PRT_MAX_DIMS)
            return op_fail(o, PRT_ERR_SHAPE, "input %d has rank %d", (int)i,
                           (int)inputs[i].nb_dims);
    for (int32_t k = 0; k < nb_shape_inputs; k++)
        for (int32_t v = 0; v < shape_inputs[k].nb_dims; v++)
            if (!shape_inputs[k].d[v])
                return op_fail(o, PRT_ERR_SHAPE,
                               "shape input %d value %d has no expression", (int)k,
                               (int)v);
    if (c->nb_outputs)
        st = c->shapes_n(o, inputs, nb_inputs, shape_inputs, nb_shape_inputs, outputs,
                         nb_outputs, exprs);
    else
        st = c->shapes_sv ? c->shapes_sv(o, inputs, nb_inputs, shape_inputs,
                                         nb_shape_inputs, &outputs[0], exprs)
                          : c->shapes(o, inputs, nb_inputs, &outputs[0], exprs);
    if (st)
        return st;
    for (int32_t k = 0; k < nb_outputs; k++)
        for (int32_t d = 0; d < outputs[k].nb_dims; d++)
            if (!outputs[k].d[d])
                return op_fail(o, PRT_ERR_OUT_OF_MEMORY,
                               "building the expression of output %d dim %d failed",
                               (int)k, (int)d);
    o->bld_out = outputs[0];
    return PRT_OK;
}

int32_t op_static_count(prt_expr_builder *eb, const prt_dim_exprs *d)
{
    int64_t n = 1, v;
    if (d->nb_dims < 0)
        return -1;
    for (int32_t i = 0; i < d->nb_dims; i++) {
        if (!d->d[i] || !eb->is_constant(eb, d->d[i], &v) || v < 0)
            return -1;
        n *= v;
        if (n > PRT_MAX_DIMS)
            return -1;
    }
    return (int32_t)n;
}

int64_t op_int_at(const void *x, int32_t dtype, int64_t i)
{
    return opk_int_at(dtype, x, i);
}

static prt_status bld_values(prt_plugin *p, const prt_dim_exprs *in_dims,
                             const prt_dim_exprs *in_values, int32_t nb_inputs,
                             prt_dim_exprs *out_values, int32_t nb_outputs,
                             prt_expr_builder *exprs)
{
    op_object *o = obj(p);
    prt_status st = check_io(o, nb_inputs, nb_outputs);
    if (st || !o->cls->values || o->cls->nb_outputs)
        return st;
    out_values[0].nb_dims = -1;
    st = o->cls->values(o, in_dims, in_values, nb_inputs, &o->bld_out, &out_values[0],
                        exprs);
    if (st)
        return st;
    /* Only a 0-D or 1-D output can be a shape tensor (the builder fails a
     * layer that states values of any other): an op's values hook counts
     * elements, so a 2-D int64 ConstantOfShape, or an Add of 2-D int64
     * constants, would otherwise fail the build of a valid network. */
    if (out_values[0].nb_dims >= 0 &&
        (o->bld_out.nb_dims > 1 ||
         out_values[0].nb_dims != op_static_count(exprs, &o->bld_out)))
        out_values[0].nb_dims = -1; /* not a shape tensor after all */
    for (int32_t v = 0; v < out_values[0].nb_dims; v++)
        if (!out_values[0].d[v])
            return op_fail(o, PRT_ERR_OUT_OF_MEMORY,
                           "building the expression of value %d failed", (int)v);
    return PRT_OK;
}

static int32_t bld_supports(prt_plugin *p, int32_t pos,
                            const prt_dynamic_tensor_desc *in_out, int32_t nb_inputs,
                            int32_t nb_outputs)
{
    const op_object *o = obj(p);
    int32_t t, types[OP_MAX_INPUTS];
    if (pos < 0 || pos >= nb_inputs + nb_outputs || nb_outputs != nb_outs(o) ||
        nb_inputs > OP_MAX_INPUTS)
        return 0;
    t = in_out[pos].desc.dtype;
    if (!format_ok(o, &in_out[pos].desc))
        return 0;
    if (o->cls->chw8_ok && !o->cls->chw8_ok(o, pos, in_out, nb_inputs, nb_outputs))
        return 0;
    for (int32_t i = 0; i < pos && i < nb_inputs; i++)
        types[i] = in_out[i].desc.dtype;
    if (pos < nb_inputs)
        return t >= 0 && t < PRT_DTYPE_COUNT && ((in_mask(o, pos, types) >> t) & 1u);
    return t == out_dtype_at(o, types, nb_inputs, pos - nb_inputs);
}

static prt_status bld_configure(prt_plugin *p, const prt_dynamic_tensor_desc *in,
                                int32_t nb_in, const prt_dynamic_tensor_desc *out,
                                int32_t nb_out)
{
    op_object *o = obj(p);
    prt_tensor_desc descs[OP_MAX_INPUTS], odescs[OP_MAX_OUTPUTS];
    prt_dims ind[OP_MAX_INPUTS], want[OP_MAX_OUTPUTS];
    char a[128], b[128];
    int known = 1;
    prt_status st = check_io(o, nb_in, nb_out);
    if (st)
        return st;
    memset(descs, 0, sizeof descs);
    for (int32_t i = 0; i < nb_in; i++) {
        descs[i] = in[i].desc;
        ind[i] = in[i].desc.dims;
        for (int32_t d = 0; d < ind[i].nb_dims; d++)
            known &= ind[i].d[d] >= 0;
    }
    for (int32_t k = 0; k < nb_out; k++)
        odescs[k] = out[k].desc;
    st = check_desc_dtypes(o, descs, nb_in, odescs, nb_out);
    if (st)
        return st;
    o->refused_devices = refused_for(o, descs, nb_in, odescs, nb_out);
    o->chw8 = chw8_mask(descs, nb_in, odescs, nb_out);
    o->nb_inputs = nb_in;
    o->configured = 1;
    o->nb_opt = nb_in < OP_TUNE_INPUTS ? nb_in : OP_TUNE_INPUTS;
    o->opt_dtype = nb_in ? in[0].desc.dtype : out[0].desc.dtype;
    for (int32_t i = 0; i < o->nb_opt; i++)
        o->opt[i] = in[i].opt, o->max[i] = in[i].max;
    if (!known || (o->cls->nb_outputs ? !o->cls->infer_n : !o->cls->infer))
        return PRT_OK;
    /* Static dims: the concrete rules apply now, not only at run time. */
    memset(want, 0, sizeof want);
    st = o->cls->nb_outputs ? o->cls->infer_n(o, ind, nb_in, want, nb_out)
                            : o->cls->infer(o, ind, nb_in, &want[0]);
    if (st)
        return st;
    for (int32_t k = 0; k < nb_out; k++) {
        if (want[k].nb_dims != out[k].desc.dims.nb_dims)
            return op_fail(o, PRT_ERR_SHAPE, "output %d rank %d differs from %d", (int)k,
                           (int)out[k].desc.dims.nb_dims, (int)want[k].nb_dims);
        for (int32_t d = 0; d < want[k].nb_dims; d++)
            if (out[k].desc.dims.d[d] >= 0 && out[k].desc.dims.d[d] != want[k].d[d])
                return op_fail(
                    o, PRT_ERR_SHAPE,
                    "output %d dims %s differ from %s computed from the "
                    "inputs' dims",
                    (int)k,
                    base_dims_format(&out[k].desc.dims, BASE_DIMS_LIST, a, sizeof a),
                    base_dims_format(&want[k], BASE_DIMS_LIST, b, sizeof b));
    }
    return PRT_OK;
}

static int op_has_tactics(const op_object *o)
{
    for (int32_t d = 0; d < PRT_DEVICE_COUNT; d++)
        if (o->tun[d])
            return 1;
    return 0;
}

/* The workspace o's tactic needs on `device` (op_device_tuning.workspace). */
static int64_t tactic_workspace(const op_object *o, int32_t device)
{
    const op_device_tuning *t =
        device > PRT_DEVICE_CPU && device < PRT_DEVICE_COUNT ? o->tun[device] : NULL;
    return t && t->workspace && o->tactic ? t->workspace(o->tactic) : 0;
}

static prt_status bld_workspace(prt_plugin *p, const prt_dynamic_tensor_desc *in,
                                int32_t nb_in, const prt_dynamic_tensor_desc *out,
                                int32_t nb_out, int64_t *out_bytes)
{
    op_object *o = obj(p);
    prt_dims ind[OP_MAX_INPUTS], outd[OP_MAX_OUTPUTS];
    int64_t n;
    prt_status st = check_io(o, nb_in, nb_out);
    if (st)
        return st;
    /* The tactic's need (the larger one is the layer's). */
    *out_bytes = tactic_workspace(o, o->target_device);
    if (!o->cls->workspace)
        return PRT_OK;
    {
        prt_tensor_desc di[OP_MAX_INPUTS] = {0}, dout[OP_MAX_OUTPUTS] = {0};
        for (int32_t i = 0; i < nb_in && i < OP_MAX_INPUTS; i++)
            di[i] = in[i].desc;
        for (int32_t k = 0; k < nb_out && k < OP_MAX_OUTPUTS; k++)
            dout[k] = out[k].desc;
        o->chw8 = chw8_mask(di, nb_in, dout, nb_out);
    }
    /* The need grows with every dim, so the profile's maxima bound it. */
    for (int32_t i = 0; i < nb_in; i++)
        ind[i] = in[i].max;
    for (int32_t k = 0; k < nb_out; k++)
        outd[k] = out[k].max;
    n = o->cls->workspace(o, nb_in ? in[0].desc.dtype : out[0].desc.dtype, ind, nb_in,
                          outd, nb_out);
    if (n < 0)
        return op_fail(o, PRT_ERR_SHAPE,
                       "the workspace for the largest shapes overflows");
    if (n > *out_bytes)
        *out_bytes = n;
    return PRT_OK;
}

/* The target device's tactics for the op (op_device_tuning), at the last
 * configure's opt dims; none for a device without them (the CPU). */
static prt_status bld_tactics(prt_plugin *p, int32_t *tactics, int32_t capacity,
                              int32_t *out_count)
{
    const op_object *o = cobj(p);
    const int32_t d = o->target_device;
    int32_t list[OP_MAX_TACTICS], n = 0;
    *out_count = 0;
    if (d > PRT_DEVICE_CPU && d < PRT_DEVICE_COUNT && o->tun[d] && o->kern[d] &&
        o->configured && o->nb_opt > 0 && !(o->refused_devices & (1u << d)) && !o->chw8)
        n = o->tun[d]->tactics(o, o->opt_dtype, o->opt, o->max, o->nb_opt, list,
                               OP_MAX_TACTICS);
    for (int32_t i = 0; i < n && i < capacity && tactics; i++)
        tactics[i] = list[i];
    *out_count = n;
    return PRT_OK;
}

static prt_status bld_target_device(prt_plugin *p, int32_t device)
{
    obj(p)->target_device = device;
    return PRT_OK;
}

static int32_t bld_alias(const prt_plugin *p, int32_t output_index)
{
    return output_index == 0 ? cobj(p)->cls->alias_input : -1;
}

/* The built-in kernels size their work from `dims`. */
static int32_t bld_host_dims(const prt_plugin *p, int32_t device)
{
    (void)p;
    return device != PRT_DEVICE_CPU;
}

static const prt_plugin_build op_build = {sizeof(prt_plugin_build),
                                          PRT_PLUGIN_ABI_VERSION,
                                          bld_nb_outputs,
                                          bld_dtypes,
                                          bld_shapes,
                                          bld_supports,
                                          bld_configure,
                                          bld_workspace,
                                          bld_tactics,
                                          bld_alias,
                                          bld_values,
                                          bld_host_dims,
                                          bld_target_device,
                                          NULL,
                                          NULL};

/* ------------------------------------------------------------------------ */
/* Runtime                                                                   */
/* ------------------------------------------------------------------------ */

/* 0, or a tactic some device's kernel names (op_device_tuning): the
 * builder only sets listed ones, so another comes from an altered engine
 * file, which then fails to load naming the layer and the tactic. */
static prt_status rt_set_tactic(prt_plugin *p, int32_t tactic)
{
    op_object *o = obj(p);
    int known = tactic == 0;
    for (int32_t d = 0; d < PRT_DEVICE_COUNT && !known; d++)
        known = o->tun[d] && o->tun[d]->name(tactic) != NULL;
    if (!known)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "tactic %d does not exist (%s)",
                       (int)tactic,
                       op_has_tactics(o) ? "not one its kernels list" : "only 0");
    o->tactic = tactic;
    return PRT_OK;
}

static prt_status rt_shape_change(prt_plugin *p, const prt_tensor_desc *in, int32_t nb_in,
                                  const prt_tensor_desc *out, int32_t nb_out)
{
    op_object *o = obj(p);
    prt_status st = check_io(o, nb_in, nb_out);
    if (!st)
        st = check_desc_dtypes(o, in, nb_in, out, nb_out);
    if (!st)
        st = check_dims(o, in, nb_in, out, nb_out);
    if (!st) {
        o->refused_devices = refused_for(o, in, nb_in, out, nb_out);
        o->chw8 = chw8_mask(in, nb_in, out, nb_out);
        o->nb_inputs = nb_in;
        o->configured = 1;
    }
    return st;
}

static prt_status rt_enqueue(prt_plugin *p, const prt_tensor_desc *in_desc,
                             const prt_tensor_desc *out_desc, const void *const *inputs,
                             void *const *outputs, void *workspace, int32_t device,
                             void *stream)
{
    op_object *o = obj(p);
    int32_t nb_in = 0, nb_out = nb_outs(o);
    int64_t out_elems = 0;
    prt_status st;
    op_kernel_fn run;
    if (device < 0 || device >= PRT_DEVICE_COUNT ||
        (device != PRT_DEVICE_CPU && !o->kern[device]))
        return op_fail(o, PRT_ERR_UNSUPPORTED,
                       "enqueue on device %d: this op has no kernel for it", (int)device);
    run = device == PRT_DEVICE_CPU ? o->cls->run : o->kern[device]->run;
    if (!in_desc || !out_desc || !inputs || !outputs)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "enqueue without tensor descriptors or pointers");
    /* enqueue is not told the number of inputs; configure and
     * on_shape_change (which the runtime calls before the first run) are. */
    nb_in = o->nb_inputs;
    if (!o->configured && o->cls->min_inputs == o->cls->max_inputs)
        nb_in = o->cls->min_inputs;
    else if (!o->configured)
        return op_fail(o, PRT_ERR_STATE,
                       "enqueue before configure or on_shape_change: the "
                       "number of inputs is not known");
    st = check_desc_dtypes(o, in_desc, nb_in, out_desc, nb_out);
    if (!st)
        st = check_dims(o, in_desc, nb_in, out_desc, nb_out);
    if (st)
        return st;
    o->chw8 = chw8_mask(in_desc, nb_in, out_desc, nb_out);
    if (o->chw8 && device != PRT_DEVICE_CPU)
        return op_fail(o, PRT_ERR_UNSUPPORTED,
                       "the blocked format (CHW8) has no kernel on device %d",
                       (int)device);
    if (refused_for(o, in_desc, nb_in, out_desc, nb_out) & (1u << device)) {
        /* Named by the key input, as the table's dtypes are, or by the
         * first wide dtype a kernel without a list refuses. */
        int32_t k = o->cls->dtype_input < nb_in ? o->cls->dtype_input : -1;
        int32_t dt = k >= 0 ? in_desc[k].dtype : out_desc[0].dtype;
        char which[32] = "the output";
        if (dt >= 0 && dt < PRT_DTYPE_COUNT &&
            (op_device_kernel_dtypes(o->kern[device]) & OP_DT(dt))) {
            for (int32_t i = nb_in + nb_out - 1; i >= 0; i--) {
                int32_t t = i < nb_in ? in_desc[i].dtype : out_desc[i - nb_in].dtype;
                if (t >= 0 && t < PRT_DTYPE_COUNT && (OP_DT(t) & OP_DT_WIDE)) {
                    dt = t;
                    k = i < nb_in ? i : -1 - (i - nb_in);
                }
            }
        }
        if (k >= 0)
            snprintf(which, sizeof which, "input %d", (int)k);
        else if (k < -1)
            snprintf(which, sizeof which, "output %d", (int)(-1 - k));
        return op_fail(o, PRT_ERR_UNSUPPORTED,
                       "the %s kernel does not take dtype %s (of %s)",
                       op_device_table_get(device)->name, prt_dtype_name(dt), which);
    }
    for (int32_t k = 0; k < nb_out; k++) {
        int64_t v = base_volume(&out_desc[k].dims);
        if (v > 0 && !outputs[k])
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "output %d pointer is NULL",
                           (int)k);
        out_elems += v;
    }
    /* Nothing to write (a size tensor is 0-D, one element, so an op with one
     * always runs). */
    if (out_elems == 0)
        return PRT_OK;
    for (int32_t i = 0; i < nb_in; i++)
        if (!inputs[i] && base_volume(&in_desc[i].dims) > 0)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "input %d pointer is NULL",
                           (int)i);
    if (o->cls->workspace || tactic_workspace(o, device)) {
        prt_dims ind[OP_MAX_INPUTS], outd[OP_MAX_OUTPUTS];
        int64_t need = 0, tneed = tactic_workspace(o, device);
        for (int32_t i = 0; i < nb_in; i++)
            ind[i] = in_desc[i].dims;
        for (int32_t k = 0; k < nb_out; k++)
            outd[k] = out_desc[k].dims;
        if (o->cls->workspace)
            need = o->cls->workspace(o, nb_in ? in_desc[0].dtype : out_desc->dtype, ind,
                                     nb_in, outd, nb_out);
        if (need >= 0 && tneed > need)
            need = tneed;
        /* The claim, not just a pointer: an engine file that understates
         * it would otherwise have the kernel write past the block. The
         * caller gets this status as it is (base_plugin_status), so it
         * names the cause: an altered engine, not a bad argument. */
        if (need < 0)
            return op_fail(o, PRT_ERR_SHAPE, "the workspace for these shapes overflows");
        if (need > o->ws_bytes || (need > 0 && !workspace))
            return op_fail(o, PRT_ERR_MALFORMED,
                           "needs %lld bytes of workspace at these shapes, but its layer "
                           "has %lld%s",
                           (long long)need, (long long)o->ws_bytes,
                           workspace ? "" : " (none given)");
    }
    /* The builder's timing runs use objects no context attached. */
    if (device != PRT_DEVICE_CPU && o->kern[device]->resources && !o->res[device]) {
        st = op_device_table_get(device)->attach(o, stream);
        if (st)
            return op_fail(o, st, "%s", prt_last_error());
    }
    return run(o, nb_in ? in_desc[0].dtype : out_desc->dtype, in_desc, nb_in, out_desc,
               nb_out, inputs, outputs, workspace, stream);
}

static prt_plugin *rt_clone(const prt_plugin *p)
{
    const op_object *o = cobj(p);
    op_object *c = base_malloc(o->cls->size);
    if (!c) {
        op_fail(o, PRT_ERR_OUT_OF_MEMORY, "clone: out of memory");
        return NULL;
    }
    memcpy(c, o, o->cls->size);
    memset(c->res, 0, sizeof c->res); /* each object makes its own */
    if (c->cst)                       /* shared: read-only from here on */
        atomic_fetch_add_explicit(&c->cst->refs, 1, memory_order_relaxed);
    return &c->base;
}

/* The device a context gives at attach (resources may be NULL or short). */
static int32_t attach_device(const prt_plugin_resources *r)
{
    if (r && r->struct_size >= BASE_END_OF(prt_plugin_resources, device))
        return r->device;
    return PRT_DEVICE_CPU;
}

static void rt_destroy(prt_plugin *p);

static prt_plugin *rt_attach(prt_plugin *p, prt_plugin_resources *resources)
{
    const int32_t device = attach_device(resources);
    const op_device_kernel *kd = device > PRT_DEVICE_CPU && device < PRT_DEVICE_COUNT
                                     ? cobj(p)->kern[device]
                                     : NULL;
    prt_plugin *c;
    /* Here, not in the first run: loading a BLAS allocates and starts
     * threads, making a device's resources allocates, and enqueue allocates
     * nothing. */
    if (cobj(p)->cls->blas && device == PRT_DEVICE_CPU)
        op_blas_prepare();
    c = rt_clone(p);
    if (c && kd && kd->resources &&
        op_device_table_get(device)->attach(obj(c), NULL) != PRT_OK) {
        rt_destroy(c);
        return NULL;
    }
    return c;
}

static const prt_field_collection *rt_fields(prt_plugin *p)
{
    op_object *o = obj(p);
    o->fc.nb_fields = o->cls->serialize ? o->cls->serialize(o, o->ser) : 0;
    o->fc.fields = o->ser;
    return &o->fc;
}

static void rt_destroy(prt_plugin *p)
{
    op_const *cst = obj(p)->cst;
    for (int32_t d = 0; d < PRT_DEVICE_COUNT; d++)
        if (obj(p)->res[d])
            op_device_table_get(d)->detach(obj(p));
    /* The last reference frees it; acq_rel so that every other holder's
     * reads are done before. */
    if (cst && atomic_fetch_sub_explicit(&cst->refs, 1, memory_order_acq_rel) == 1)
        base_free(cst);
    base_free(p);
}

static const prt_plugin_runtime op_runtime = {sizeof(prt_plugin_runtime),
                                              PRT_PLUGIN_ABI_VERSION,
                                              rt_set_tactic,
                                              rt_shape_change,
                                              rt_enqueue,
                                              rt_attach,
                                              rt_fields,
                                              rt_clone,
                                              rt_destroy};

static const prt_plugin_vtable op_vt_build = {
    sizeof(prt_plugin_vtable), PRT_PLUGIN_ABI_VERSION, &op_core, &op_build, &op_runtime};
static const prt_plugin_vtable op_vt_runtime = {
    sizeof(prt_plugin_vtable), PRT_PLUGIN_ABI_VERSION, &op_core, NULL, &op_runtime};

const char *op_tactic_name(const prt_plugin *p, int32_t device, int32_t tactic)
{
    const op_object *o;
    if (!p || (p->vt != &op_vt_runtime && p->vt != &op_vt_build) ||
        device <= PRT_DEVICE_CPU || device >= PRT_DEVICE_COUNT)
        return NULL;
    o = cobj(p);
    return o->tun[device] ? o->tun[device]->name(tactic) : NULL;
}

/* ------------------------------------------------------------------------ */
/* Constant inputs (op_const.h)                                              */
/* ------------------------------------------------------------------------ */

op_const *op_const_alloc(size_t size)
{
    op_const *c = base_calloc(1, size);
    if (c)
        atomic_init(&c->refs, 1);
    return c;
}

prt_status op_bind_constants(prt_plugin *p, const prt_tensor_desc *in, int32_t nb_in,
                             const prt_tensor_desc *out, int32_t nb_out,
                             const void *const *data)
{
    op_object *o;
    op_const *cst = NULL;
    prt_status st;
    if (!p || (p->vt != &op_vt_runtime && p->vt != &op_vt_build))
        return PRT_OK;
    o = obj(p);
    if (!o->cls->prepare || o->cst || nb_in < o->cls->min_inputs ||
        nb_in > o->cls->max_inputs)
        return PRT_OK;
    o->chw8 = chw8_mask(in, nb_in, out, nb_out);
    st = o->cls->prepare(o, in, nb_in, data, &cst);
    if (st)
        return st;
    o->cst = cst;
    return PRT_OK;
}

void op_set_precision(prt_plugin *p, uint32_t flags)
{
    if (p && (p->vt == &op_vt_runtime || p->vt == &op_vt_build))
        obj(p)->precision = flags;
}

int op_is_view(const prt_plugin *p)
{
    return p && (p->vt == &op_vt_runtime || p->vt == &op_vt_build) && cobj(p)->cls->view;
}

/* ------------------------------------------------------------------------ */
/* Workspace (op_workspace.h)                                                */
/* ------------------------------------------------------------------------ */

int op_float_shape_input(const prt_plugin *p, int32_t index)
{
    if (!p || (p->vt != &op_vt_runtime && p->vt != &op_vt_build))
        return 0;
    return cobj(p)->cls->float_shape_input &&
           cobj(p)->cls->float_shape_input(cobj(p), index);
}

void op_bind_workspace(prt_plugin *p, int64_t bytes)
{
    if (p && (p->vt == &op_vt_runtime || p->vt == &op_vt_build))
        obj(p)->ws_bytes = bytes > 0 ? bytes : 0;
}

/* ------------------------------------------------------------------------ */
/* Creation                                                                  */
/* ------------------------------------------------------------------------ */

prt_status op_create(const prt_plugin_creator *self, const char *layer_name,
                     const prt_field_collection *fields, int32_t phase, prt_plugin **out)
{
    const op_class *cls;
    op_fields f;
    op_object *o;
    prt_status st;
    if (!self || !self->user || !out)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "built-in op create: NULL creator or output");
    cls = self->user;
    f.op = self->name;
    f.layer = layer_name ? layer_name : "";
    f.fc = fields;
    if (phase != PRT_PHASE_BUILD && phase != PRT_PHASE_RUNTIME)
        return op_fields_fail(&f, PRT_ERR_INVALID_ARGUMENT,
                              "unknown phase %d (expected PRT_PHASE_BUILD or "
                              "PRT_PHASE_RUNTIME)",
                              (int)phase);
    st = op_fields_validate(&f, self);
    if (st)
        return st;
    o = base_calloc(1, cls->size);
    if (!o)
        return op_fields_fail(&f, PRT_ERR_OUT_OF_MEMORY, "out of memory");
    o->base.vt = phase == PRT_PHASE_BUILD ? &op_vt_build : &op_vt_runtime;
    o->creator = self;
    o->cls = cls;
    for (int32_t d = 0; d < PRT_DEVICE_COUNT; d++) {
        o->kern[d] = op_device_kernel_find(op_device_table_get(d), self->name);
        o->tun[d] =
            o->kern[d] ? op_device_tuning_find(op_device_table_get(d), self->name) : NULL;
    }
    o->target_device = -1;
    snprintf(o->layer, sizeof o->layer, "%s", f.layer);
    if (cls->parse) {
        st = cls->parse(o, &f);
        if (st) {
            base_free(o);
            return st;
        }
    }
    *out = &o->base;
    return PRT_OK;
}
