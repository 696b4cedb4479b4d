/*
 * LookupTable8 (namespace "plugrt", version "1"; issue 30): y[i] =
 * table[byte(x[i])], x int8 or uint8, y int8 or uint8 (field
 * output_dtype, default x's), one byte an element. The importer makes it
 * of an 8-bit elementwise chain, DQ -> float ops -> Q, whose output
 * depends on one 8-bit input value alone (onnx_qdq.c: efficientnet's
 * quantized SiLU), so the chain's float work over the widest tensors
 * becomes one byte load a byte.
 *
 * Fields: table (256 values, PRT_FIELD_INT8 or PRT_FIELD_BYTES, required):
 * entry k is the output byte for the input whose byte is k (an int8 x of
 * -1 reads entry 255); output_dtype (int32, a prt_dtype: PRT_INT8 or
 * PRT_UINT8; default -1, x's). The table holds the output's bits; its
 * dtype only names them.
 *
 * The CPU kernel is cpu/lut_kernel.c's (vpermb where the CPU has AVX-512
 * VBMI, else a plain loop), over ranges of the elements spread on the
 * context's threads.
 */
#include <string.h>

#include "base/parallel.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/ops_ew.h"
#include "ops/ops_quant.h"

typedef struct lut_op {
    op_object o;
    uint8_t table[256];
    int32_t output_dtype; /* -1: x's */
} lut_op;

static prt_status lut_parse(op_object *o, const op_fields *f)
{
    lut_op *l = (lut_op *)o;
    const prt_field *fl;
    prt_status st = op_field_find(f, "table", &fl);
    if (st)
        return st;
    if (!fl)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field 'table' is missing; it holds the 256 output bytes");
    if ((fl->type != PRT_FIELD_INT8 && fl->type != PRT_FIELD_BYTES) || fl->length != 256)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field 'table' has type %s and %lld values; it must be 256 "
                              "int8 values or bytes",
                              base_field_type_name(fl->type), (long long)fl->length);
    memcpy(l->table, fl->data, 256);
    st = op_field_i32(f, "output_dtype", -1, &l->output_dtype);
    if (!st && l->output_dtype != -1 && l->output_dtype != PRT_INT8 &&
        l->output_dtype != PRT_UINT8)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field 'output_dtype' is %d; it must be -1 (x's), PRT_INT8 "
                              "(%d) or PRT_UINT8 (%d)",
                              (int)l->output_dtype, (int)PRT_INT8, (int)PRT_UINT8);
    return st;
}

static int32_t lut_serialize(op_object *o, prt_field *ser)
{
    lut_op *l = (lut_op *)o;
    op_ser(&ser[0], "table", PRT_FIELD_BYTES, l->table, 256);
    op_ser(&ser[1], "output_dtype", PRT_FIELD_INT32, &l->output_dtype, 1);
    return 2;
}

static prt_status lut_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                            prt_dims *out)
{
    (void)o, (void)nb_in;
    *out = in[0];
    return PRT_OK;
}

static int32_t lut_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in)
{
    const lut_op *l = (const lut_op *)o;
    (void)nb_in;
    return l->output_dtype >= 0 ? l->output_dtype : types[0];
}

const uint8_t *op_lut_table(const op_object *o)
{
    return ((const lut_op *)o)->table;
}

typedef struct lut_run {
    const uint8_t *x, *table;
    uint8_t *y;
} lut_run;

static void lut_range(void *arg, int64_t b, int64_t e)
{
    const lut_run *r = (const lut_run *)arg;
    op_lut8(r->table, r->x + b, r->y + b, e - b);
}

static prt_status lut_run_cpu(const op_object *o, int32_t dtype,
                              const prt_tensor_desc *in, int32_t nb_in,
                              const prt_tensor_desc *out, int32_t nb_out,
                              const void *const *x, void *const *ys, void *ws,
                              void *stream)
{
    const int64_t n = base_volume(&in[0].dims);
    lut_run r = {(const uint8_t *)x[0], op_lut_table(o), (uint8_t *)ys[0]};
    (void)dtype, (void)nb_in, (void)out, (void)nb_out, (void)ws, (void)stream;
    if (n > 0)
        base_parallel_for(n, OP_GRAIN_SIMPLE, lut_range, &r);
    return PRT_OK;
}

static const op_class lut_class = {
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT(PRT_INT8) | OP_DT(PRT_UINT8),
    .size = sizeof(lut_op),
    .alias_input = -1, /* x and y may differ in dtype */
    .parse = lut_parse,
    .serialize = lut_serialize,
    .shapes = ew_same_shapes,
    .infer = lut_infer,
    .run = lut_run_cpu,
    .out_dtype = lut_out_dtype,
};

static const prt_field_schema lut_schema[] = {
    {"table", PRT_FIELD_BYTES, 256,
     "the output byte for each input byte (entry k for the input whose byte is k)"},
    {"output_dtype", PRT_FIELD_INT32, 1,
     "the output's dtype: PRT_INT8 or PRT_UINT8; -1 (default) x's"},
};

const prt_plugin_creator op_lookup_table8_creator =
    OP_CREATOR("LookupTable8", lut_class, lut_schema, 2);
