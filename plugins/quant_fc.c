/*
 * QuantFC (namespace "example", version "1"): a fully connected layer whose
 * INT8 kernel fuses the dequantization of its inputs into its output pass,
 * the sample of a quantized plugin (plugin.h, prt_quant_desc).
 *
 * Inputs: x [..., K]; w [N, K]; optionally bias [N], float32.
 * Output: y [..., N] = relu?(x . w^T + bias), in float32 or, with field
 * output_dtype, int8/uint8 on y's own per-tensor scale.
 *
 * Two ways in, chosen by dtypes (supports_format_combination):
 *  - float: x and w float32 (a network that dequantizes before the plugin);
 *  - integer: x int8 or uint8 with a per-tensor scale and zero point, w int8
 *    with a per-tensor or per-channel (axis 0) scale and zero points 0. The
 *    dot runs in int32 over the integers, x's zero point taken off as
 *    x_zp * sum(w) (no converted copy of x), and the dequantization is one
 *    multiply per output by x_scale * w_scale[n] before the bias: what the
 *    builder hands the plugin when it folds a DequantizeLinear into it.
 * A quantized tensor without its scale, or one with a kind this plugin does
 * not take, is refused at that position, so such a network fails to build
 * (or keeps its DequantizeLinear) rather than running on guessed scales.
 *
 * int32 accumulation is exact for K <= 65536 (|x - x_zp| <= 255, |w| <= 128:
 * 255 * 128 * 65536 < 2^31); a larger K on the integer path is refused.
 *
 * An integer y: q = saturate(round_half_even(v / y_scale) + y_zp), ONNX's
 * QuantizeLinear; a NaN becomes the zero point (ONNX leaves it undefined).
 *
 * Fields: relu (int32, default 0), output_dtype (int32 prt_dtype: float32
 * (default), int8 or uint8). A QuantizeLinear after a float y folds into
 * the plugin (src/builder/fold.c): it then writes the integers directly.
 *
 * CUDA (quant_fc_cuda.cu): the same arithmetic, a thread per output, __dp4a
 * where the rows allow it.
 */
#include "common.h"

#include <math.h>
#include <string.h>

/* K above this could overflow the int32 sum (see above). */
#define QFC_MAX_K 65536

typedef struct quant_fc {
    plg_object obj;
    int32_t relu;
    int32_t output_dtype;
    int32_t nb_inputs; /* 2 or 3 as on_shape_change saw them; 0 before */
    prt_field ser[2];
} quant_fc;

static quant_fc *qfc(prt_plugin *p)
{
    return (quant_fc *)p;
}

static int qfc_int_dtype(int32_t dtype)
{
    return dtype == PRT_INT8 || dtype == PRT_UINT8;
}

/* The quantization of a descriptor when it is of `kind` (a kind of 0 takes
 * per-tensor or per-channel); NULL otherwise. */
static const prt_quant_desc *qfc_quant(const prt_tensor_desc *d, int32_t kind)
{
    const prt_quant_desc *q = prt_tensor_desc_quant(d);
    if (!q || !PLG_HAS(q, prt_quant_desc, zero_point))
        return NULL;
    if (kind ? q->kind != kind
             : q->kind != PRT_QUANT_PER_TENSOR && q->kind != PRT_QUANT_PER_CHANNEL)
        return NULL;
    return q;
}

/* w's quantization as the integer path takes it: per tensor, or per
 * channel along dim 0, symmetric (the zero-point correction is x's alone). */
static const prt_quant_desc *qfc_weight_quant(const prt_tensor_desc *w)
{
    const prt_quant_desc *q = qfc_quant(w, 0);
    if (!q || (q->kind == PRT_QUANT_PER_CHANNEL && q->axis != 0))
        return NULL;
    for (int64_t i = 0; i < q->count; i++)
        if (q->zero_points && q->zero_points[i] != 0)
            return NULL;
    return q;
}

static prt_status qfc_check_io(const quant_fc *f, int32_t nb_in, int32_t nb_out)
{
    if ((nb_in == 2 || nb_in == 3) && nb_out == 1)
        return PRT_OK;
    return plg_fail(&f->obj, PRT_ERR_INVALID_ARGUMENT,
                    "expects 2 or 3 inputs (x, w, bias) and 1 output, got %d and %d",
                    (int)nb_in, (int)nb_out);
}

/* ---- build --------------------------------------------------------------- */

static int32_t qfc_nb_outputs(const prt_plugin *self)
{
    (void)self;
    return 1;
}

static prt_status qfc_get_output_dtypes(prt_plugin *self, int32_t *out_types,
                                        int32_t nb_outputs, const int32_t *in_types,
                                        int32_t nb_inputs)
{
    quant_fc *f = qfc(self);
    prt_status st = qfc_check_io(f, nb_inputs, nb_outputs);
    if (st)
        return st;
    if (in_types[0] != PRT_FLOAT32 && !qfc_int_dtype(in_types[0]))
        return plg_fail(
            &f->obj, PRT_ERR_UNSUPPORTED,
            "x dtype %s is not supported (float32, or int8/uint8 with a scale)",
            plg_dtype_name(in_types[0]));
    out_types[0] = f->output_dtype;
    return PRT_OK;
}

static prt_status qfc_get_output_shapes(prt_plugin *self, const prt_dim_exprs *inputs,
                                        int32_t nb_inputs,
                                        const prt_dim_exprs *shape_inputs,
                                        int32_t nb_shape_inputs, prt_dim_exprs *outputs,
                                        int32_t nb_outputs, prt_expr_builder *exprs)
{
    quant_fc *f = qfc(self);
    prt_status st = qfc_check_io(f, nb_inputs, nb_outputs);
    (void)shape_inputs, (void)nb_shape_inputs, (void)exprs;
    if (st)
        return st;
    if (inputs[0].nb_dims < 1 || inputs[1].nb_dims != 2 ||
        (nb_inputs == 3 && inputs[2].nb_dims != 1))
        return plg_fail(&f->obj, PRT_ERR_SHAPE,
                        "x has rank %d, w %d%s: x [..., K], w [N, K] and bias [N]",
                        (int)inputs[0].nb_dims, (int)inputs[1].nb_dims,
                        nb_inputs == 3 ? (inputs[2].nb_dims == 1 ? "" : ", bias not 1")
                                       : "");
    outputs[0] = inputs[0];
    outputs[0].d[inputs[0].nb_dims - 1] = inputs[1].d[0];
    return PRT_OK;
}

static int32_t qfc_supports(prt_plugin *self, int32_t pos,
                            const prt_dynamic_tensor_desc *in_out, int32_t nb_inputs,
                            int32_t nb_outputs)
{
    const prt_tensor_desc *d = &in_out[pos].desc;
    const prt_tensor_desc *x = &in_out[0].desc;
    if ((nb_inputs != 2 && nb_inputs != 3) || nb_outputs != 1 || pos < 0 ||
        pos >= nb_inputs + nb_outputs || d->format != PRT_FORMAT_LINEAR)
        return 0;
    if (pos == 0) /* x: float32, or integer with its per-tensor scale */
        return d->dtype == PRT_FLOAT32
                   ? prt_tensor_desc_quant(d) == NULL
                   : qfc_int_dtype(d->dtype) && qfc_quant(d, PRT_QUANT_PER_TENSOR);
    if (pos == 1) /* w: x's way in */
        return x->dtype == PRT_FLOAT32
                   ? d->dtype == PRT_FLOAT32 && prt_tensor_desc_quant(d) == NULL
                   : d->dtype == PRT_INT8 && qfc_weight_quant(d);
    if (pos == 2 && nb_inputs == 3) /* bias */
        return d->dtype == PRT_FLOAT32 && prt_tensor_desc_quant(d) == NULL;
    /* y: float32 as asked for, or int8/uint8 on its per-tensor scale,
     * which is also what a QuantizeLinear folded after it asks (the builder
     * offers the integer dtype where output_dtype says float32) */
    if (d->dtype == PRT_FLOAT32)
        return qfc(self)->output_dtype == PRT_FLOAT32 && prt_tensor_desc_quant(d) == NULL;
    return qfc_int_dtype(d->dtype) && qfc_quant(d, PRT_QUANT_PER_TENSOR) != NULL;
}

/* The dims x [..., K], w [N, K], bias [N], y [..., N] agree where known
 * (-1 is unknown at build). */
static prt_status qfc_check_dims(const quant_fc *f, const prt_dims *x, const prt_dims *w,
                                 const prt_dims *b)
{
    char a[96], c[96];
    int64_t k = x->nb_dims >= 1 ? x->d[x->nb_dims - 1] : -1;
    if (x->nb_dims < 1 || w->nb_dims != 2 || (b && b->nb_dims != 1) ||
        (k >= 0 && w->d[1] >= 0 && k != w->d[1]) ||
        (b && b->d[0] >= 0 && w->d[0] >= 0 && b->d[0] != w->d[0]))
        return plg_fail(&f->obj, PRT_ERR_SHAPE,
                        "x %s and w %s%s do not fit x [..., K], w [N, K], bias [N]",
                        plg_dims_str(x, a, sizeof a), plg_dims_str(w, c, sizeof c),
                        b ? " (with the bias)" : "");
    return PRT_OK;
}

static prt_status qfc_configure(prt_plugin *self, const prt_dynamic_tensor_desc *in,
                                int32_t nb_in, const prt_dynamic_tensor_desc *out,
                                int32_t nb_out)
{
    quant_fc *f = qfc(self);
    prt_status st = qfc_check_io(f, nb_in, nb_out);
    (void)out;
    if (st)
        return st;
    return qfc_check_dims(f, &in[0].desc.dims, &in[1].desc.dims,
                          nb_in == 3 ? &in[2].desc.dims : NULL);
}

static int32_t qfc_requires_host_dims(const prt_plugin *self, int32_t device)
{
    (void)self, (void)device;
    return 1; /* the rows are counted on the host, on CUDA too */
}

static const prt_plugin_build qfc_build = {
    sizeof(prt_plugin_build),
    PRT_PLUGIN_ABI_VERSION,
    qfc_nb_outputs,
    qfc_get_output_dtypes,
    qfc_get_output_shapes,
    qfc_supports,
    qfc_configure,
    plg_get_workspace_size,
    plg_get_valid_tactics,
    plg_no_aliased_input,
    NULL, /* get_output_values */
    qfc_requires_host_dims,
    plg_set_target_device,
    NULL, /* capture_safe: its enqueue may be captured into a graph */
    NULL, /* get_kernel */
};

/* ---- runtime ------------------------------------------------------------- */

/* What one enqueue computes, checked: the rows and sizes, and for the
 * integer path each tensor's scale. */
typedef struct qfc_job {
    const void *x, *w;
    const float *b;
    void *y;
    int32_t x_dtype, y_dtype;
    int64_t m, k, n;
    int32_t x_zp, relu, y_zp;
    float x_scale, y_scale;
    const prt_quant_desc *wq; /* NULL on the float path */
} qfc_job;

static prt_status qfc_prepare(const quant_fc *f, const prt_tensor_desc *in, int32_t nb_in,
                              const prt_tensor_desc *out, int32_t nb_out, qfc_job *j)
{
    const prt_dims *xd = &in[0].dims;
    const prt_quant_desc *xq, *yq;
    char a[96];
    prt_status st = qfc_check_io(f, nb_in, nb_out);
    if (!st)
        st = qfc_check_dims(f, xd, &in[1].dims, nb_in == 3 ? &in[2].dims : NULL);
    if (st)
        return st;
    memset(j, 0, sizeof *j);
    j->x_dtype = in[0].dtype;
    j->y_dtype = out[0].dtype;
    j->k = in[1].dims.d[1];
    j->n = in[1].dims.d[0];
    j->relu = f->relu;
    if (plg_volume(xd) < 0 || j->k < 0 || j->n < 0)
        return plg_fail(&f->obj, PRT_ERR_SHAPE, "x dims %s are not valid",
                        plg_dims_str(xd, a, sizeof a));
    j->m = 1;
    for (int32_t i = 0; i + 1 < xd->nb_dims; i++)
        j->m *= xd->d[i];
    if (j->x_dtype == PRT_FLOAT32) {
        if (in[1].dtype != PRT_FLOAT32)
            return plg_fail(&f->obj, PRT_ERR_UNSUPPORTED,
                            "float32 x with %s w (both float32, or both quantized)",
                            plg_dtype_name(in[1].dtype));
    } else {
        xq = qfc_int_dtype(j->x_dtype) ? qfc_quant(&in[0], PRT_QUANT_PER_TENSOR) : NULL;
        j->wq = in[1].dtype == PRT_INT8 ? qfc_weight_quant(&in[1]) : NULL;
        if (!xq || !j->wq)
            return plg_fail(
                &f->obj, PRT_ERR_UNSUPPORTED,
                "%s x and %s w: an integer x needs its per-tensor scale and "
                "int8 w its per-tensor or per-channel (axis 0) scale with zero "
                "points 0",
                plg_dtype_name(j->x_dtype), plg_dtype_name(in[1].dtype));
        if (j->wq->count != 1 && j->wq->count != j->n)
            return plg_fail(&f->obj, PRT_ERR_SHAPE,
                            "%lld weight scales for %lld channels",
                            (long long)j->wq->count, (long long)j->n);
        if (j->k > QFC_MAX_K)
            return plg_fail(&f->obj, PRT_ERR_UNSUPPORTED,
                            "K = %lld: the int32 sum is exact up to K = %d",
                            (long long)j->k, QFC_MAX_K);
        j->x_scale = xq->scale;
        j->x_zp = xq->zero_point;
    }
    if (j->y_dtype != PRT_FLOAT32) {
        yq = qfc_int_dtype(j->y_dtype) ? qfc_quant(&out[0], PRT_QUANT_PER_TENSOR) : NULL;
        if (!yq)
            return plg_fail(&f->obj, PRT_ERR_UNSUPPORTED,
                            "%s y needs its per-tensor scale",
                            plg_dtype_name(j->y_dtype));
        j->y_scale = yq->scale;
        j->y_zp = yq->zero_point;
    }
    if (nb_in == 3 && in[2].dtype != PRT_FLOAT32)
        return plg_fail(&f->obj, PRT_ERR_UNSUPPORTED, "bias dtype %s (float32)",
                        plg_dtype_name(in[2].dtype));
    return PRT_OK;
}

static prt_status qfc_on_shape_change(prt_plugin *self, const prt_tensor_desc *in,
                                      int32_t nb_in, const prt_tensor_desc *out,
                                      int32_t nb_out)
{
    qfc_job j;
    prt_status st = qfc_prepare(qfc(self), in, nb_in, out, nb_out, &j);
    /* enqueue is not told the input count (plugin.h); keep it. */
    qfc(self)->nb_inputs = st ? 0 : nb_in;
    return st;
}

/* The combined scale of channel n: x's times w's, one float product, as the
 * CUDA side's launch argument is computed. */
static float qfc_channel_scale(const qfc_job *j, int64_t n)
{
    return j->x_scale * j->wq->scales[j->wq->count == 1 ? 0 : n];
}

/* Bias, ReLU and y's dtype: the epilogue both paths share. */
static void qfc_store(const qfc_job *j, int64_t m, int64_t n, float v)
{
    float q, lo, hi;
    if (j->b)
        v = v + j->b[n];
    if (j->relu && !(v > 0.0f))
        v = v != v ? v : 0.0f;
    if (j->y_dtype == PRT_FLOAT32) {
        ((float *)j->y)[m * j->n + n] = v;
        return;
    }
    lo = j->y_dtype == PRT_INT8 ? -128.0f : 0.0f;
    hi = j->y_dtype == PRT_INT8 ? 127.0f : 255.0f;
    q = v != v ? (float)j->y_zp : rintf(v / j->y_scale) + (float)j->y_zp;
    q = fminf(fmaxf(q, lo), hi);
    if (j->y_dtype == PRT_INT8)
        ((int8_t *)j->y)[m * j->n + n] = (int8_t)(int)q;
    else
        ((uint8_t *)j->y)[m * j->n + n] = (uint8_t)(int)q;
}

/* sum(x * w) - x_zp * sum(w) over k in int32: both sums in one pass, a
 * loop the compiler vectorizes (this file builds with -O3). */
static int32_t qfc_dot_i8(const int8_t *x, const int8_t *w, int64_t k, int32_t x_zp)
{
    int32_t acc = 0, wsum = 0;
    for (int64_t i = 0; i < k; i++) {
        acc += (int32_t)x[i] * (int32_t)w[i];
        wsum += w[i];
    }
    return acc - x_zp * wsum;
}

static int32_t qfc_dot_u8(const uint8_t *x, const int8_t *w, int64_t k, int32_t x_zp)
{
    int32_t acc = 0, wsum = 0;
    for (int64_t i = 0; i < k; i++) {
        acc += (int32_t)x[i] * (int32_t)w[i];
        wsum += w[i];
    }
    return acc - x_zp * wsum;
}

/* Rows [begin, end) of y. */
static void qfc_rows(void *arg, int64_t begin, int64_t end)
{
    const qfc_job *j = (const qfc_job *)arg;
    for (int64_t m = begin; m < end; m++)
        for (int64_t n = 0; n < j->n; n++) {
            float v;
            if (j->x_dtype == PRT_FLOAT32) {
                const float *x = (const float *)j->x + m * j->k;
                const float *w = (const float *)j->w + n * j->k;
                v = 0.0f;
                for (int64_t i = 0; i < j->k; i++)
                    v += x[i] * w[i];
            } else {
                const int8_t *w = (const int8_t *)j->w + n * j->k;
                int32_t acc =
                    j->x_dtype == PRT_INT8
                        ? qfc_dot_i8((const int8_t *)j->x + m * j->k, w, j->k, j->x_zp)
                        : qfc_dot_u8((const uint8_t *)j->x + m * j->k, w, j->k, j->x_zp);
                v = (float)acc * qfc_channel_scale(j, n);
            }
            qfc_store(j, m, n, v);
        }
}

static prt_status qfc_enqueue(prt_plugin *self, const prt_tensor_desc *in_desc,
                              const prt_tensor_desc *out_desc, const void *const *inputs,
                              void *const *outputs, void *workspace, int32_t device,
                              void *stream)
{
    quant_fc *f = qfc(self);
    qfc_job j;
    int32_t nb_in = f->nb_inputs;
    prt_status st =
        plg_check_enqueue(&f->obj, device, in_desc, out_desc, inputs, outputs);
    (void)workspace;
    if (st)
        return st;
    if (nb_in == 0)
        return plg_fail(&f->obj, PRT_ERR_STATE, "enqueue before on_shape_change");
    st = qfc_prepare(f, in_desc, nb_in, out_desc, 1, &j);
    if (st)
        return st;
    j.x = inputs[0];
    j.w = inputs[1];
    j.b = nb_in == 3 ? (const float *)inputs[2] : NULL;
    j.y = outputs[0];
    if (j.m == 0 || j.n == 0)
        return PRT_OK;
    if (!j.x || !j.w || !j.y || (nb_in == 3 && !j.b))
        return plg_fail(&f->obj, PRT_ERR_INVALID_ARGUMENT,
                        "enqueue with a NULL tensor pointer");
#ifdef PRT_PLUGINS_CUDA
    if (device == PRT_DEVICE_CUDA) {
        plg_qfc_launch l;
        if (!plg_cuda())
            return plg_cuda_unavailable(&f->obj);
        memset(&l, 0, sizeof l);
        l.x = j.x;
        l.w = j.w;
        l.b = j.b;
        l.y = j.y;
        l.x_dtype = j.x_dtype;
        l.y_dtype = j.y_dtype;
        l.m = j.m;
        l.k = j.k;
        l.n = j.n;
        l.x_zp = j.x_zp;
        l.relu = j.relu;
        l.y_scale = j.y_scale;
        l.y_zp = j.y_zp;
        for (l.n0 = 0; l.n0 < j.n; l.n0 += PLG_QFC_CHUNK) {
            int err;
            l.nc = j.n - l.n0 < PLG_QFC_CHUNK ? j.n - l.n0 : PLG_QFC_CHUNK;
            for (int64_t c = 0; c < l.nc; c++)
                l.scale[c] = j.wq ? qfc_channel_scale(&j, l.n0 + c) : 1.0f;
            err = plg_cuda()->quant_fc(&l, stream);
            if (err)
                return plg_cuda_fail(&f->obj, err, "the QuantFC kernel");
        }
        return PRT_OK;
    }
#endif
    (void)stream;
    /* A grain of rows worth about 64K multiply-adds. */
    plg_parallel_for(j.m, 1 + 65536 / (j.n * j.k + 1), qfc_rows, &j);
    return PRT_OK;
}

static const prt_field_collection *qfc_fields(prt_plugin *self)
{
    quant_fc *f = qfc(self);
    f->ser[0].name = "relu";
    f->ser[0].data = &f->relu;
    f->ser[0].type = PRT_FIELD_INT32;
    f->ser[0].length = 1;
    f->ser[1].name = "output_dtype";
    f->ser[1].data = &f->output_dtype;
    f->ser[1].type = PRT_FIELD_INT32;
    f->ser[1].length = 1;
    f->obj.serialized.nb_fields = 2;
    f->obj.serialized.fields = f->ser;
    return &f->obj.serialized;
}

static const prt_plugin_runtime qfc_runtime = {
    sizeof(prt_plugin_runtime),
    PRT_PLUGIN_ABI_VERSION,
    plg_set_tactic,
    qfc_on_shape_change,
    qfc_enqueue,
    plg_attach_to_context,
    qfc_fields,
    plg_clone,
    plg_destroy,
};

static const prt_plugin_vtable qfc_vt_build = {sizeof(prt_plugin_vtable),
                                               PRT_PLUGIN_ABI_VERSION, &plg_core,
                                               &qfc_build, &qfc_runtime};
static const prt_plugin_vtable qfc_vt_runtime = {
    sizeof(prt_plugin_vtable), PRT_PLUGIN_ABI_VERSION, &plg_core, NULL, &qfc_runtime};

/* ---- creator ------------------------------------------------------------- */

static const prt_field_schema qfc_schema[] = {
    {"relu", PRT_FIELD_INT32, 1, "1: max(0, y) before y's quantization (default 0)"},
    {"output_dtype", PRT_FIELD_INT32, 1,
     "y's prt_dtype: 0 float32 (default), 3 int8 or 4 uint8 (on y's per-tensor scale)"},
};

static prt_status qfc_create(const prt_plugin_creator *self, const char *layer_name,
                             const prt_field_collection *fields, int32_t phase,
                             prt_plugin **out)
{
    plg_fields fs = {self->name, layer_name ? layer_name : "", fields};
    const prt_plugin_vtable *vt;
    int32_t relu = 0, output_dtype = PRT_FLOAT32;
    quant_fc *f;
    prt_status st = plg_fields_validate(&fs);
    if (st == PRT_OK)
        st = plg_fields_get_i32(&fs, "relu", 0, &relu);
    if (st == PRT_OK)
        st = plg_fields_get_i32(&fs, "output_dtype", PRT_FLOAT32, &output_dtype);
    if (st != PRT_OK)
        return st;
    if (relu != 0 && relu != 1)
        return plg_error(PRT_ERR_INVALID_ARGUMENT,
                         "%s (layer '%s'): field 'relu' is %d, not 0 or 1", self->name,
                         fs.layer, (int)relu);
    if (output_dtype != PRT_FLOAT32 && !qfc_int_dtype(output_dtype))
        return plg_error(PRT_ERR_INVALID_ARGUMENT,
                         "%s (layer '%s'): field 'output_dtype' is %d; QuantFC writes "
                         "float32 (0), int8 (3) or uint8 (4)",
                         self->name, fs.layer, (int)output_dtype);
    vt = plg_phase_vtable(self->name, phase, &qfc_vt_build, &qfc_vt_runtime);
    if (!vt)
        return PRT_ERR_INVALID_ARGUMENT;
    f = (quant_fc *)plg_object_create(self, vt, sizeof *f, fs.layer);
    if (!f)
        return PRT_ERR_OUT_OF_MEMORY;
    f->relu = relu;
    f->output_dtype = output_dtype;
    *out = &f->obj.base;
    return PRT_OK;
}

const prt_plugin_creator plg_quant_fc_creator = {
    sizeof(prt_plugin_creator),
    PRT_PLUGIN_ABI_VERSION,
    "QuantFC",
    "1",
    "example",
    (int32_t)(sizeof qfc_schema / sizeof qfc_schema[0]),
    qfc_schema,
    qfc_create,
    NULL,
};
