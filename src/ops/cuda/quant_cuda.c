/*
 * The CUDA kernels of QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, QLinearAdd and QLinearMul (ops.h): their CPU
 * files' shape checks (ops_quant.h), then quant.cu's launchers. The values
 * of scales and zero points stay on the device: the checks of them that
 * fail the CPU's run (a scale not positive and finite, an int32 x's
 * non-zero zero point) are not made here.
 */
#include "ops/cuda/gpu_args.h"
#include "ops/cuda/launch.h"
#include "ops/cuda/ops.h"
#include "ops/ops_quant.h"

/* x's view [outer, ch, inner] (quant_view's checks). */
static prt_status opc_quant_view(const op_object *o, const prt_tensor_desc *in,
                                 int32_t nb_in, int64_t *ch, int64_t *inner)
{
    prt_dims d[3];
    int64_t outer;
    for (int32_t k = 0; k < nb_in && k < 3; k++)
        d[k] = in[k].dims;
    return quant_view(o, d, nb_in, &outer, ch, inner);
}

OPC_KERNEL(opc_quantize_linear)
{
    int64_t ch, inner;
    prt_status st = opc_quant_view(o, in, nb_in, &ch, &inner);
    (void)nb_out, (void)ws;
    if (st)
        return st;
    return opc_status(o, opk_quantize(dtype, x[0], in[1].dtype, x[1],
                                      nb_in > 2 ? in[2].dtype : PRT_UINT8,
                                      nb_in > 2 ? x[2] : NULL, out->dtype, y[0],
                                      base_volume(&in[0].dims), ch, inner,
                                      op_quant_saturate(o), stream));
}

OPC_KERNEL(opc_dequantize_linear)
{
    int64_t ch, inner;
    prt_status st = opc_quant_view(o, in, nb_in, &ch, &inner);
    (void)out, (void)nb_out, (void)ws;
    if (st)
        return st;
    return opc_status(o, opk_dequantize(dtype, x[0], in[1].dtype, x[1],
                                        nb_in > 2 ? in[2].dtype : dtype,
                                        nb_in > 2 ? x[2] : NULL, y[0],
                                        base_volume(&in[0].dims), ch, inner, stream));
}

OPC_KERNEL(opc_dynamic_quantize_linear)
{
    (void)dtype, (void)nb_in, (void)out, (void)nb_out, (void)ws;
    return opc_status(o, opk_dynamic_quantize((const float *)x[0],
                                              base_volume(&in[0].dims), (uint8_t *)y[0],
                                              (float *)y[1], (uint8_t *)y[2], stream));
}

OPC_KERNEL(opc_qlinear)
{
    opk_bcast b;
    prt_status st = qlinear_check(o, in, nb_in, out);
    (void)nb_out, (void)ws;
    if (st)
        return st;
    opk_bcast_init(&b, &out->dims, 2, (const prt_dims[2]){in[0].dims, in[3].dims});
    return opc_status(o, opk_qlinear(qlinear_is_mul(o), dtype, &b, x[0], x[3],
                                     (const float *)x[1], x[2], (const float *)x[4], x[5],
                                     (const float *)x[6], nb_in > 7 ? x[7] : NULL, y[0],
                                     base_volume(&out->dims), stream));
}

OPC_KERNEL(opc_lookup_table8)
{
    (void)dtype, (void)nb_in, (void)out, (void)nb_out, (void)ws;
    return opc_status(o, opk_lut8(op_lut_table(o), (const uint8_t *)x[0], (uint8_t *)y[0],
                                  base_volume(&in[0].dims), stream));
}
