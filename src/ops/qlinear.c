/*
 * QLinearAdd and QLinearMul (namespace "plugrt", version "1"): ONNX
 * Runtime's com.microsoft ops of QOperator models (issue 30), imported from
 * that domain alone. No fields.
 *
 * Inputs A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale and
 * the optional C_zero_point (absent: 0): A, B and the zero points int8 or
 * uint8 (one dtype), the scales float32, every scale and zero point one
 * value (a scalar or 1-D; ONNX Runtime has no per-axis form). A and B
 * broadcast (numpy's rule); C has their dtype and
 *
 *   QLinearAdd: C = quantize(A_scale (A - A_zp) + B_scale (B - B_zp))
 *   QLinearMul: C = quantize(A_scale (A - A_zp) * B_scale (B - B_zp))
 *
 * with C_scale and C_zp (quant.h: float32, each operation rounded apart,
 * halves to even, saturated). ONNX Runtime's x86 kernels compute the same in
 * fixed point for speed, so they may differ from this by one in the last
 * place now and then; the definition is the one above. Every scale must be
 * positive and finite (the run fails naming the first that is not).
 */
#include <math.h>
#include <string.h>

#include "ops/cpu/cpu_kernels.h"
#include "ops/ops_quant.h"

enum { QL_ADD, QL_MUL };

static const char *const ql_names[8] = {"A",       "A_scale",     "A_zero_point",
                                        "B",       "B_scale",     "B_zero_point",
                                        "C_scale", "C_zero_point"};

int32_t qlinear_is_mul(const op_object *o)
{
    return o->cls->kind == QL_MUL;
}

static prt_status ql_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                            prt_dim_exprs *out, prt_expr_builder *eb)
{
    (void)nb_in;
    return op_broadcast_exprs(o, eb, &in[0], &in[3], out, "A and B");
}

static prt_status ql_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                           prt_dims *out)
{
    char buf[96];
    for (int32_t k = 1; k < nb_in; k++) {
        if (k == 3)
            continue;
        if (in[k].nb_dims > 1 || base_volume(&in[k]) != 1)
            return op_fail(o, PRT_ERR_SHAPE,
                           "%s has dims %s; it must hold one value (a scalar or 1-D)",
                           ql_names[k],
                           base_dims_format(&in[k], BASE_DIMS_LIST, buf, sizeof buf));
    }
    return op_broadcast_dims(o, &in[0], &in[3], out, "A and B");
}

static uint32_t ql_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    if (index == 0)
        return o->cls->dtypes;
    if (index == 1 || index == 4 || index == 6)
        return OP_DT(PRT_FLOAT32);
    return OP_DT(types[0]);
}

prt_status qlinear_check(const op_object *o, const prt_tensor_desc *in, int32_t nb_in,
                         const prt_tensor_desc *out)
{
    prt_dims d[8], y;
    prt_status st;
    char a[96], b[96];
    for (int32_t k = 0; k < nb_in && k < 8; k++)
        d[k] = in[k].dims;
    st = ql_infer(o, d, nb_in, &y);
    if (st)
        return st;
    if (memcmp(y.d, out->dims.d, sizeof(int64_t) * (size_t)y.nb_dims) != 0 ||
        y.nb_dims != out->dims.nb_dims)
        return op_fail(o, PRT_ERR_SHAPE, "C has dims %s, not A and B's broadcast %s",
                       base_dims_format(&out->dims, BASE_DIMS_LIST, a, sizeof a),
                       base_dims_format(&y, BASE_DIMS_LIST, b, sizeof b));
    return PRT_OK;
}

/* The parameters from the (host) inputs, each scale checked. */
static prt_status ql_params(const op_object *o, const prt_tensor_desc *in, int32_t nb_in,
                            const void *const *x, opq_binary *p)
{
    const int32_t dt = in[0].dtype;
    const int32_t sk[3] = {1, 4, 6};
    float s[3];
    for (int32_t k = 0; k < 3; k++) {
        s[k] = *(const float *)x[sk[k]];
        if (!(s[k] > 0.0f && isfinite(s[k])))
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "%s is %g; a scale must be positive and finite",
                           ql_names[sk[k]], (double)s[k]);
    }
    p->sa = s[0];
    p->sb = s[1];
    p->sc = s[2];
    p->za = (int32_t)opk_int_at(dt, x[2], 0);
    p->zb = (int32_t)opk_int_at(dt, x[5], 0);
    p->zc = nb_in > 7 ? (int32_t)opk_int_at(dt, x[7], 0) : 0;
    p->lo = opq_lo(dt);
    p->hi = opq_hi(dt);
    return PRT_OK;
}

typedef struct ql_ctx {
    opq_binary p;
    int32_t mul, dtype;
} ql_ctx;

static int ql_row(const void *ctx, const uint8_t *const *p, const int64_t *s, uint8_t *y,
                  int64_t n)
{
    const ql_ctx *c = (const ql_ctx *)ctx;
    op_qbinary_row(c->mul, c->dtype, p[0], s[0], p[1], s[1], y, n, &c->p);
    return 0;
}

static prt_status ql_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                         int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                         const void *const *x, void *const *ys, void *ws, void *stream)
{
    ql_ctx c;
    prt_dims d[2];
    const size_t es[2] = {1, 1};
    const void *ab[2];
    prt_status st = qlinear_check(o, in, nb_in, out);
    (void)nb_out, (void)ws, (void)stream;
    if (st)
        return st;
    if (base_volume(&out->dims) == 0)
        return PRT_OK;
    st = ql_params(o, in, nb_in, x, &c.p);
    if (st)
        return st;
    c.mul = qlinear_is_mul(o);
    c.dtype = dtype;
    d[0] = in[0].dims;
    d[1] = in[3].dims;
    ab[0] = x[0];
    ab[1] = x[3];
    op_bcast_walk_parallel(&out->dims, 2, d, es, 1, ab, ys[0], ql_row, &c,
                           OP_GRAIN_SIMPLE);
    return PRT_OK;
}

#define QL_CLASS(k)                                                                      \
    {                                                                                    \
        .kind = (k), .min_inputs = 7, .max_inputs = 8,                                   \
        .dtypes = OP_DT(PRT_INT8) | OP_DT(PRT_UINT8), .size = sizeof(op_object),         \
        .alias_input = -1, .shapes = ql_shapes, .infer = ql_infer, .run = ql_run,        \
        .in_dtypes = ql_in_dtypes,                                                       \
    }

static const op_class qlinear_add_class = QL_CLASS(QL_ADD);
static const op_class qlinear_mul_class = QL_CLASS(QL_MUL);

const prt_plugin_creator op_qlinear_add_creator =
    OP_CREATOR("QLinearAdd", qlinear_add_class, NULL, 0);
const prt_plugin_creator op_qlinear_mul_creator =
    OP_CREATOR("QLinearMul", qlinear_mul_class, NULL, 0);
