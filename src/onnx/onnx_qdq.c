/* Quantized patterns the importer computes or rewrites itself (issue 30),
 * planned in onnx_fuse.c beside the other fusions.
 *
 * A DequantizeLinear whose x, x_scale and x_zero_point are all constants
 * (ONNX Runtime's quantize_static writes one for every weight and bias) is
 * one float32 constant: without it the weight of each QDQ Conv or MatMul
 * is a layer's output, dequantized again at every run, and the ops lose
 * their constant-weight paths (prepacked weights). The values are the op's
 * own: y = (float)(x - zp) * scale, one float32 product rounded once, as
 * ops/quant.h's opq_dequantize computes it (the importer cannot include
 * src/ops; the expression is short enough to say twice, and the CLI test
 * dq_fold.sh checks the two agree bit for bit). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "onnx_internal.h"

/* Scale or zero point dims: one value (per tensor), or 1-D. */
static int qdq_per_tensor(const Onnx__TensorProto *t)
{
    return t->n_dims == 0 || (t->n_dims == 1 && t->dims[0] == 1);
}

/* z holds zeros only (a tensor that does not load counts as not). */
static int qdq_zeros(const onnx_import *imp, const Onnx__TensorProto *z)
{
    onnx_tensor t;
    int ok = 1;
    if (onnx_tensor_load(z, imp->base_dir, "zero point", &t) != PRT_OK) {
        prt_clear_error();
        return 0;
    }
    for (size_t i = 0; ok && i < t.bytes / prt_dtype_size(t.dtype); i++)
        ok = onnx_tensor_int(&t, i) == 0;
    onnx_tensor_free(&t);
    return ok;
}

int onnx_dq_const_ok(const onnx_import *imp, const Onnx__TensorProto *x,
                     const Onnx__TensorProto *s, const Onnx__TensorProto *z, int64_t axis)
{
    if (x->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT8 &&
        x->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 &&
        x->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT32)
        return 0;
    /* float32 scales only: a half-float DQ rounds its product to the half
     * type, which the op does and this fold would have to repeat. */
    if (s->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
        return 0;
    /* An int32 x has zero point 0 (ORT's bias DQ gives one, of zeros); the
     * op fails the run on another, so that one is left to it. */
    if (z &&
        (z->data_type != x->data_type ||
         (x->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT32 && !qdq_zeros(imp, z))))
        return 0;
    if (!qdq_per_tensor(s)) {
        if (s->n_dims != 1 || axis < -(int64_t)x->n_dims || axis >= (int64_t)x->n_dims)
            return 0;
        if (axis < 0)
            axis += (int64_t)x->n_dims;
        if (s->dims[0] != x->dims[axis])
            return 0;
    }
    if (z && !(qdq_per_tensor(s) && qdq_per_tensor(z)) &&
        (z->n_dims != s->n_dims || (z->n_dims == 1 && z->dims[0] != s->dims[0])))
        return 0;
    return 1;
}

prt_status onnx_dq_const_import(onnx_import *imp, const char *label, const char *out,
                                const Onnx__TensorProto *xp, const Onnx__TensorProto *sp,
                                const Onnx__TensorProto *zp, int64_t axis)
{
    onnx_tensor x, s, z, y;
    int64_t outer = 1, ch = 1, inner = 1, n;
    prt_status st;
    memset(&x, 0, sizeof x);
    memset(&s, 0, sizeof s);
    memset(&z, 0, sizeof z);
    memset(&y, 0, sizeof y);
    st = onnx_tensor_load(xp, imp->base_dir, label, &x);
    if (!st)
        st = onnx_tensor_load(sp, imp->base_dir, label, &s);
    if (!st && zp)
        st = onnx_tensor_load(zp, imp->base_dir, label, &z);
    if (st)
        goto done;
    n = (int64_t)(x.bytes / prt_dtype_size(x.dtype));
    inner = n;
    if (s.bytes / sizeof(float) > 1) {
        if (axis < 0)
            axis += x.dims.nb_dims;
        ch = x.dims.d[axis];
        inner = 1;
        for (int32_t k = 0; k < x.dims.nb_dims; k++)
            if (k < axis)
                outer *= x.dims.d[k];
            else if (k > axis)
                inner *= x.dims.d[k];
    }
    if ((int64_t)(s.bytes / sizeof(float)) != ch ||
        (zp && (int64_t)(z.bytes / prt_dtype_size(z.dtype)) != ch) ||
        outer * ch * inner != n) {
        st = onnx_error(PRT_ERR_INVALID_ARGUMENT,
                        "%s: the scale (%zu values) or zero point does not fit x's dims",
                        label, s.bytes / sizeof(float));
        goto done;
    }
    y.dtype = PRT_FLOAT32;
    y.dims = x.dims;
    y.bytes = (size_t)n * sizeof(float);
    y.data = prt_malloc(y.bytes ? y.bytes : 1);
    if (!y.data) {
        st = onnx_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory", label);
        goto done;
    }
    for (int64_t i = 0; i < n; i++) {
        const int64_t c = (i / inner) % ch;
        const float scale = ((const float *)s.data)[c];
        const int32_t q = (int32_t)onnx_tensor_int(&x, (size_t)i);
        const int32_t zero = zp ? (int32_t)onnx_tensor_int(&z, (size_t)c) : 0;
        ((float *)y.data)[i] = (float)(q - zero) * scale;
    }
    st = onnx_value_add_constant(imp, out, &y, label);
done:
    onnx_tensor_free(&x);
    onnx_tensor_free(&s);
    onnx_tensor_free(&z);
    onnx_tensor_free(&y);
    return st;
}

void onnx_info(const char *fmt, ...)
{
    const prt_host_services *hs = prt_host_services_get();
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    hs->log(hs->host, PRT_SEV_INFO, msg);
}

static int qdq_is_8bit(const Onnx__TensorProto *t)
{
    return t && (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT8 ||
                 t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__UINT8);
}

/* A float32 scale and an 8-bit zero point, both of one value. */
static int qdq_tensor_params(const Onnx__TensorProto *s, const Onnx__TensorProto *z)
{
    return s && z && s->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT &&
           qdq_per_tensor(s) && qdq_is_8bit(z) && qdq_per_tensor(z);
}

static const char qdq_x_why[] = "x's DequantizeLinear is not per tensor with a constant "
                                "float32 scale and 8-bit zero point",
                  qdq_q_why[] = "the QuantizeLinear is not per tensor with a constant "
                                "float32 scale and 8-bit zero point";

/* The bias DQ's scale is x_scale * w_scale[c] (float32, as ORT computes
 * it) in every channel, and its zero points are 0: then its int32 values
 * are QLinearConv's B as they stand. */
static const char *qdq_bias_check(const onnx_import *imp, const Onnx__TensorProto *xs,
                                  const Onnx__TensorProto *ws,
                                  const Onnx__TensorProto *const *b, int64_t m)
{
    onnx_tensor x, w, s;
    const char *why = NULL;
    int64_t nw, nb;
    if (!b[0] || !b[1] || b[0]->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT32 ||
        b[0]->n_dims != 1 || b[0]->dims[0] != m ||
        b[1]->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
        return "the bias is not a constant int32 vector of the output channels with a "
               "float32 scale";
    if (b[2] && (b[2]->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT32 ||
                 !qdq_zeros(imp, b[2])))
        return "the bias has a non-zero zero point";
    memset(&x, 0, sizeof x);
    memset(&w, 0, sizeof w);
    memset(&s, 0, sizeof s);
    if (onnx_tensor_load(xs, imp->base_dir, "x_scale", &x) ||
        onnx_tensor_load(ws, imp->base_dir, "w_scale", &w) ||
        onnx_tensor_load(b[1], imp->base_dir, "bias scale", &s)) {
        prt_clear_error();
        why = "a scale does not load";
        goto done;
    }
    nw = (int64_t)(w.bytes / sizeof(float));
    nb = (int64_t)(s.bytes / sizeof(float));
    for (int64_t c = 0; !why && c < m; c++) {
        const float want =
            ((const float *)x.data)[0] * ((const float *)w.data)[nw > 1 ? c : 0];
        if (((const float *)s.data)[nb > 1 ? c : 0] != want)
            why = "the bias scale is not x_scale * w_scale";
    }
done:
    onnx_tensor_free(&x);
    onnx_tensor_free(&w);
    onnx_tensor_free(&s);
    return why;
}

/* The weight's DQ (node dq, constant w, scale ws, zero point wz): an 8-bit
 * w of rank `rank` (a minimum when `at_least`) with a float32 scale and a
 * zero point of w's dtype, per tensor or per axis `axis` (the DQ's axis
 * attribute that, or its negative form; absent counts too). NULL when it
 * is, else which of the two fails: `kind` or `per_axis`. */
static const char *qdq_weight_why(const Onnx__NodeProto *dq, const Onnx__TensorProto *w,
                                  const Onnx__TensorProto *ws,
                                  const Onnx__TensorProto *wz, size_t rank, int at_least,
                                  int64_t axis, const char *kind, const char *per_axis)
{
    const Onnx__AttributeProto *a = onnx_node_attr(dq, "axis");
    if (dq->n_input != 3 || !qdq_is_8bit(w) || w->n_dims < rank ||
        (!at_least && w->n_dims != rank) || !ws || !wz ||
        ws->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ||
        wz->data_type != w->data_type)
        return kind;
    if (!(qdq_per_tensor(ws) && qdq_per_tensor(wz)) &&
        !(ws->n_dims == 1 && ws->dims[0] == w->dims[axis] && wz->n_dims == 1 &&
          wz->dims[0] == w->dims[axis] &&
          (!a || (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT &&
                  (a->i == axis || a->i == axis - (int64_t)w->n_dims)))))
        return per_axis;
    return NULL;
}

const char *onnx_qconv_mismatch(const onnx_import *imp, const Onnx__NodeProto *const *dq,
                                const Onnx__TensorProto *const (*p)[3],
                                const Onnx__NodeProto *q, const Onnx__TensorProto *qs,
                                const Onnx__TensorProto *qz)
{
    const Onnx__TensorProto *w = p[1][0], *ws = p[1][1];
    const char *why;
    if (dq[0]->n_input != 3 || !qdq_tensor_params(p[0][1], p[0][2]))
        return qdq_x_why;
    why = qdq_weight_why(dq[1], w, ws, p[1][2], 3, 1, 0,
                         "the weight is not a constant 8-bit tensor with a float32 scale "
                         "and a zero point",
                         "the weight's quantization is neither per tensor nor per output "
                         "channel (axis 0)");
    if (why)
        return why;
    if (dq[2] && qdq_bias_check(imp, p[0][1], ws, p[2], w->dims[0]))
        return qdq_bias_check(imp, p[0][1], ws, p[2], w->dims[0]);
    if (q->n_input != 3 || !qdq_tensor_params(qs, qz))
        return qdq_q_why;
    return NULL;
}

const char *onnx_qmatmul_mismatch(const Onnx__NodeProto *const *dq,
                                  const Onnx__TensorProto *const (*p)[3],
                                  const Onnx__NodeProto *q, const Onnx__TensorProto *qs,
                                  const Onnx__TensorProto *qz)
{
    const char *why;
    if (dq[0]->n_input != 3 || !qdq_tensor_params(p[0][1], p[0][2]))
        return qdq_x_why;
    /* per column: DequantizeLinear's axis 1 (its default) of the [K, N] weight */
    why = qdq_weight_why(dq[1], p[1][0], p[1][1], p[1][2], 2, 0, 1,
                         "the weight is not a constant 8-bit matrix with a float32 scale "
                         "and a zero point",
                         "the weight's quantization is neither per tensor nor per column "
                         "(axis 1)");
    if (why)
        return why;
    if (q->n_input != 3 || !qdq_tensor_params(qs, qz))
        return qdq_q_why;
    return NULL;
}

const char *onnx_qdq_act_idle(const onnx_import *imp, float lo, float hi,
                              const Onnx__TensorProto *s, const Onnx__TensorProto *z)
{
    onnx_tensor st, zt;
    const char *why = NULL;
    memset(&st, 0, sizeof st);
    memset(&zt, 0, sizeof zt);
    if (onnx_tensor_load(s, imp->base_dir, "y_scale", &st) ||
        onnx_tensor_load(z, imp->base_dir, "y_zero_point", &zt)) {
        prt_clear_error();
        why = "the QuantizeLinear's scale or zero point does not load";
    } else {
        const float scale = ((const float *)st.data)[0];
        const int64_t zp = onnx_tensor_int(&zt, 0),
                      qmin = zt.dtype == PRT_INT8 ? -128 : 0;
        /* QuantizeLinear's rounding of x / scale (in float32), half to even:
         * round(t) <= k, and round(t) >= K; NaN bounds count as busy */
        const int64_t k = qmin - zp, K = qmin + 255 - zp;
        const double t = (double)(lo / scale), u = (double)(hi / scale);
        if (!(t < (double)k + 0.5 || (t == (double)k + 0.5 && !(k & 1))))
            why = "the activation's lower bound lies inside the output's range (a Relu "
                  "needs the zero point to be the least integer)";
        else if (!(u > (double)K - 0.5 || (u == (double)K - 0.5 && !(K & 1))))
            why = "the activation's upper bound lies inside the output's range";
    }
    onnx_tensor_free(&st);
    onnx_tensor_free(&zt);
    return why;
}
