/*
 * The quantization ops (issue 30; internal to libplugrt): QuantizeLinear,
 * DequantizeLinear, DynamicQuantizeLinear (quantize.c), QLinearAdd and
 * QLinearMul (qlinear.c). Their element arithmetic is quant.h's, shared
 * with the CUDA kernels; here are the rules those kernels read.
 */
#ifndef PLUGRT_OPS_OPS_QUANT_H
#define PLUGRT_OPS_OPS_QUANT_H

#include "ops/op_common.h"
#include "ops/quant.h"

extern const prt_plugin_creator op_quantize_linear_creator;
extern const prt_plugin_creator op_dequantize_linear_creator;
extern const prt_plugin_creator op_dynamic_quantize_linear_creator;
extern const prt_plugin_creator op_qlinear_add_creator;
extern const prt_plugin_creator op_qlinear_mul_creator;
extern const prt_plugin_creator op_lookup_table8_creator; /* lookup_table.c */

/* QuantizeLinear's and DequantizeLinear's view of x: [outer, ch, inner],
 * the scale (and zero point) element c applying to the slice [:, c, :].
 * Per tensor (a scale of one element, a scalar or 1-D) ch is 1; per axis (a
 * 1-D scale of x's dim at the op's axis) ch is that dim. Fails naming the
 * problem: a scale of another shape, a zero point whose dims are not the
 * scale's. in: x, scale and, when nb_in > 2, the zero point. */
prt_status quant_view(const op_object *o, const prt_dims *in, int32_t nb_in,
                      int64_t *outer, int64_t *ch, int64_t *inner);

/* QuantizeLinear's field saturate (quantize.c: 8-bit float outputs). */
int op_quant_saturate(const op_object *o);
/* 1 for the 8-bit float dtypes, whose quantization has no zero point:
 * QuantizeLinear's y = fp8(x / scale), DequantizeLinear's y = x * scale
 * (a zero point, which picks the dtype, must be zero). */
static inline int op_is_fp8(int32_t dtype)
{
    return dtype == PRT_FLOAT8E4M3FN || dtype == PRT_FLOAT8E5M2;
}

/* 1 for QLinearMul, 0 for QLinearAdd. */
int32_t qlinear_is_mul(const op_object *o);
/* QLinearAdd/Mul's checks before a run: every scale and zero point holds
 * one element, A and B broadcast to the output. */
prt_status qlinear_check(const op_object *o, const prt_tensor_desc *in, int32_t nb_in,
                         const prt_tensor_desc *out);

/* LookupTable8's 256 output bytes, entry k for input byte k (the op's
 * own, valid while it lives). */
const uint8_t *op_lut_table(const op_object *o);

#endif /* PLUGRT_OPS_OPS_QUANT_H */
