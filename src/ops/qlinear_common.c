/* What the integer products share (qlinear.h). */
#include "ops/qlinear.h"

#include <string.h>

#include "ops/cpu/qgemm.h"

void ql_inputs_of(const op_object *o, int32_t nb_in, ql_inputs *q)
{
    const int32_t kind = o->cls->kind;
    q->kind = kind;
    q->a = 0;
    q->a_scale = q->b_scale = q->y_scale = q->y_zp = q->bias = -1;
    if (kind == QL_MATMUL_INTEGER || kind == QL_CONV_INTEGER) {
        q->b = 1;
        q->a_zp = nb_in > 2 ? 2 : -1;
        q->b_zp = nb_in > 3 ? 3 : -1;
        return;
    }
    q->a_scale = 1;
    q->a_zp = 2;
    q->b = 3;
    q->b_scale = 4;
    q->b_zp = 5;
    q->y_scale = 6;
    q->y_zp = 7;
    q->bias = kind == QL_QLINEAR_CONV && nb_in > 8 ? 8 : -1;
}

#define QL_BYTES (OP_DT(PRT_UINT8) | OP_DT(PRT_INT8))

uint32_t ql_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    const int32_t kind = o->cls->kind;
    const int integer = kind == QL_MATMUL_INTEGER || kind == QL_CONV_INTEGER;
    /* A zero point takes its tensor's dtype. */
    int32_t of = integer ? (index >= 2 ? index - 2 : -1)
                         : (index == 2   ? 0
                            : index == 5 ? 3
                                         : -1);
    if (of >= 0)
        return types[of] >= 0 && types[of] < PRT_DTYPE_COUNT ? OP_DT(types[of]) : 0;
    if (integer)
        return QL_BYTES;
    switch (index) {
    case 1:
    case 4:
    case 6:
        return OP_DT(PRT_FLOAT32);
    case 8:
        return OP_DT(PRT_INT32);
    default: /* a, b, y's zero point */
        return QL_BYTES;
    }
}

int32_t ql_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in)
{
    const int32_t kind = o->cls->kind;
    if (kind == QL_MATMUL_INTEGER || kind == QL_CONV_INTEGER)
        return PRT_INT32;
    return nb_in > 7 ? types[7] : PRT_UINT8;
}

/* Input k (if any) holds one value, or `alt` values when alt > 0. */
static prt_status ql_check_count(const op_object *o, const prt_dims *in, int32_t k,
                                 const char *what, int64_t alt, const char *alt_what)
{
    int64_t v;
    char buf[128];
    if (k < 0)
        return PRT_OK;
    v = base_volume(&in[k]);
    if (v == 1 || (alt > 0 && v == alt))
        return PRT_OK;
    if (alt > 0)
        return op_fail(o, PRT_ERR_SHAPE,
                       "%s %s has %lld values; it takes one, or one per %s (%lld)", what,
                       base_dims_format(&in[k], BASE_DIMS_LIST, buf, sizeof buf),
                       (long long)v, alt_what, (long long)alt);
    return op_fail(o, PRT_ERR_SHAPE, "%s %s has %lld values; it takes one (per tensor)",
                   what, base_dims_format(&in[k], BASE_DIMS_LIST, buf, sizeof buf),
                   (long long)v);
}

prt_status ql_check_params(const op_object *o, const ql_inputs *q, const prt_dims *in,
                           int64_t rows, int64_t chans)
{
    const int conv = q->kind == QL_CONV_INTEGER || q->kind == QL_QLINEAR_CONV;
    const char *per = conv ? "output channel" : "column of B";
    prt_status st = ql_check_count(o, in, q->a_zp, conv ? "x_zero_point" : "a_zero_point",
                                   rows, "row of A");
    if (!st)
        st = ql_check_count(o, in, q->a_scale, conv ? "x_scale" : "a_scale", 0, NULL);
    if (!st)
        st = ql_check_count(o, in, q->b_zp, conv ? "w_zero_point" : "b_zero_point", chans,
                            per);
    if (!st)
        st = ql_check_count(o, in, q->b_scale, conv ? "w_scale" : "b_scale", chans, per);
    if (!st)
        st = ql_check_count(o, in, q->y_scale, "y_scale", 0, NULL);
    if (!st)
        st = ql_check_count(o, in, q->y_zp, "y_zero_point", 0, NULL);
    return st;
}

void ql_values_of(const ql_inputs *q, const prt_tensor_desc *in, const void *const *x,
                  ql_values *v)
{
    v->a_dtype = in[q->a].dtype;
    v->b_dtype = in[q->b].dtype;
    v->a_zp = q->a_zp >= 0 ? (int32_t)op_int_at(x[q->a_zp], in[q->a_zp].dtype, 0) : 0;
    v->a_zps = q->a_zp >= 0 && base_volume(&in[q->a_zp].dims) > 1 ? x[q->a_zp] : NULL;
    v->b_zps = q->b_zp >= 0 ? x[q->b_zp] : NULL;
    v->b_nzp = q->b_zp >= 0 ? base_volume(&in[q->b_zp].dims) : 0;
    v->b_scale = q->b_scale >= 0 ? x[q->b_scale] : NULL;
    v->b_nscale = q->b_scale >= 0 ? base_volume(&in[q->b_scale].dims) : 0;
    v->a_scale = q->a_scale >= 0 ? *(const float *)x[q->a_scale] : 1.0f;
    v->y_scale = q->y_scale >= 0 ? *(const float *)x[q->y_scale] : 1.0f;
    v->y_zp = q->y_zp >= 0 ? (int32_t)op_int_at(x[q->y_zp], in[q->y_zp].dtype, 0) : 0;
    v->out = q->y_zp < 0                      ? OP_QG_OUT_I32
             : in[q->y_zp].dtype == PRT_UINT8 ? OP_QG_OUT_U8
                                              : OP_QG_OUT_I8;
}

int32_t ql_b_zp(const ql_values *v, int64_t c)
{
    if (!v->b_zps)
        return 0;
    return (int32_t)op_int_at(v->b_zps, v->b_dtype, v->b_nzp > 1 ? c : 0);
}

float ql_multiplier(const ql_values *v, int64_t c)
{
    const float bs = v->b_scale ? v->b_scale[v->b_nscale > 1 ? c : 0] : 1.0f;
    return v->a_scale * bs / v->y_scale;
}

void ql_const_set(ql_const_src *s, const prt_tensor_desc *d, const void *data)
{
    s->data = data;
    s->dims = d->dims;
    s->dtype = d->dtype;
}

int ql_const_is(const ql_const_src *s, const prt_tensor_desc *d, const void *x)
{
    return s->data == x && s->dtype == d->dtype && s->dims.nb_dims == d->dims.nb_dims &&
           memcmp(s->dims.d, d->dims.d, sizeof(int64_t) * (size_t)d->dims.nb_dims) == 0;
}

int ql_carve(uint8_t *base, int64_t *off, int64_t bytes, void **out)
{
    int64_t o = (*off + QL_CARVE_ALIGN - 1) / QL_CARVE_ALIGN * QL_CARVE_ALIGN;
    if (bytes < 0 || !base_add_i64(o, bytes, off))
        return 0;
    if (base)
        *out = base + o;
    return 1;
}

prt_status ql_pack_b_const(const op_object *o, const prt_tensor_desc *b, const void *data,
                           op_const **out)
{
    const prt_dims *d = &b->dims;
    int64_t K, N, pb, bytes;
    ql_packed_b *c;
    if (!data || d->nb_dims < 2)
        return PRT_OK;
    K = d->d[d->nb_dims - 2];
    N = d->d[d->nb_dims - 1];
    pb = op_qg_panel_bytes(K, N);
    /* the panels, then (where the AVX2 tile runs) the same widened to int16 */
    if (N < 1 || pb < 0 || pb > INT64_MAX / 4 ||
        !base_add_i64(pb * (op_qg_wide() ? 3 : 1),
                      (int64_t)sizeof *c + 4 * N + 2 * QL_CARVE_ALIGN, &bytes))
        return PRT_OK;
    c = (ql_packed_b *)op_const_alloc((size_t)bytes);
    if (!c)
        return op_fail(o, PRT_ERR_OUT_OF_MEMORY, "out of memory packing B (%lld bytes)",
                       (long long)bytes);
    ql_const_set(&c->src, b, data);
    c->colsum = (int32_t *)(c + 1);
    c->panels = (uint8_t *)(((uintptr_t)(c->colsum + N) + QL_CARVE_ALIGN - 1) /
                            QL_CARVE_ALIGN * QL_CARVE_ALIGN);
    /* uint8 ^ 0x80 is the int8 v - 128: B on the signed side */
    op_qg_pack_b(K, N, data, N, b->dtype == PRT_UINT8 ? 0x80 : 0, 1, 0,
                 (N + OP_QG_PANEL - 1) / OP_QG_PANEL, c->panels, c->colsum);
    c->panels16 = NULL;
    if (op_qg_wide()) {
        c->panels16 = (int16_t *)(((uintptr_t)(c->panels + pb) + QL_CARVE_ALIGN - 1) /
                                  QL_CARVE_ALIGN * QL_CARVE_ALIGN);
        op_qg_widen_b(c->panels, pb, 1, c->panels16);
    }
    *out = &c->head;
    return PRT_OK;
}

/* Four buffers of sizes[] bytes from base, each QL_TN_ALIGN-aligned. */
static int64_t ql_layout4(const int64_t *sizes, uint8_t *base, void *at[4])
{
    const int64_t al = QL_TN_ALIGN;
    int64_t off;
    /* The first buffer starts at base rounded up; sized without a base,
     * the worst case of that rounding is counted. */
    off = base ? (int64_t)((al - (uintptr_t)base % al) % al) : al;
    for (int i = 0; i < 4; i++) {
        if (base)
            at[i] = base + off;
        if (!base_add_i64(off, (sizes[i] + al - 1) / al * al, &off))
            return -1;
    }
    return off;
}

int64_t ql_tn_layout(int64_t rows, int64_t N, int64_t K, uint8_t *base, void *at[4])
{
    int64_t sizes[4];
    if (rows < 0 || N < 0 || K < 0 || !base_mul_i64(rows, K, &sizes[0]) ||
        !base_mul_i64(N, K, &sizes[1]) || !base_mul_i64(rows, 4, &sizes[2]) ||
        !base_mul_i64(N, 4, &sizes[3]))
        return -1;
    return ql_layout4(sizes, base, at);
}

int64_t ql_dq_layout(int64_t rows, int64_t K, int64_t N, uint8_t *base, void *at[4])
{
    int64_t sizes[4] = {0, 4, 1, 0}, rn;
    if (rows < 0 || N < 0 || K < 0 || !base_mul_i64(rows, K, &sizes[0]) ||
        !base_mul_i64(rows, N, &rn) || !base_mul_i64(rn, 4, &sizes[3]))
        return -1;
    return ql_layout4(sizes, base, at);
}
