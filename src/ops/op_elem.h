/*
 * Element arithmetic written once for every device's kernels (internal to
 * libplugrt): plain C that nvcc compiles as __host__ __device__ code and
 * the C compiler as static inline functions (the number conversions are
 * base/fp16.h's), so a CPU kernel and a device's kernel of one op compute
 * each element with the same code (Cast's rules), and the CPU tests run it
 * on machines without a GPU.
 *
 * No device header is needed to include this.
 */
#ifndef PLUGRT_OPS_OP_ELEM_H
#define PLUGRT_OPS_OP_ELEM_H

#include <stdint.h>

#include "base/fp8.h"
#include "plugrt/plugin.h"

#define OPK_HD BASE_HD

/* ---- Cast ------------------------------------------------------------- */

/* An integer (or bool) element as int64: int8 signed, uint8 and bool as
 * their byte (op_int_at, op_common.h, is this). */
OPK_HD int64_t opk_int_at(int32_t dtype, const void *p, int64_t i)
{
    switch (dtype) {
    case PRT_INT64:
        return ((const int64_t *)p)[i];
    case PRT_INT32:
        return ((const int32_t *)p)[i];
    case PRT_INT8:
        return ((const int8_t *)p)[i];
    default:
        return ((const uint8_t *)p)[i];
    }
}

/* A float dtype's element i as float32, and v stored as one (rounded
 * once). */
OPK_HD float opk_float_at(int32_t dtype, const void *p, int64_t i)
{
    switch (dtype) {
    case PRT_FLOAT16:
        return base_h2f(((const uint16_t *)p)[i]);
    case PRT_BFLOAT16:
        return base_bf2f(((const uint16_t *)p)[i]);
    case PRT_FLOAT8E4M3FN:
        return base_e4m3_to_f32(((const uint8_t *)p)[i]);
    case PRT_FLOAT8E5M2:
        return base_e5m2_to_f32(((const uint8_t *)p)[i]);
    default:
        return ((const float *)p)[i];
    }
}

/* `saturate` concerns the 8-bit floats only (base/fp8.h). */
OPK_HD void opk_float_put_sat(int32_t dtype, void *p, int64_t i, float v, int saturate)
{
    switch (dtype) {
    case PRT_FLOAT16:
        ((uint16_t *)p)[i] = base_f2h(v);
        break;
    case PRT_BFLOAT16:
        ((uint16_t *)p)[i] = base_f2bf(v);
        break;
    case PRT_FLOAT8E4M3FN:
        ((uint8_t *)p)[i] = base_f32_to_e4m3(v, saturate);
        break;
    case PRT_FLOAT8E5M2:
        ((uint8_t *)p)[i] = base_f32_to_e5m2(v, saturate);
        break;
    default:
        ((float *)p)[i] = v;
        break;
    }
}

OPK_HD void opk_float_put(int32_t dtype, void *p, int64_t i, float v)
{
    opk_float_put_sat(dtype, p, i, v, 1);
}

OPK_HD int opk_is_float(int32_t dtype)
{
    return dtype == PRT_FLOAT32 || dtype == PRT_FLOAT16 || dtype == PRT_BFLOAT16 ||
           dtype == PRT_FLOAT8E4M3FN || dtype == PRT_FLOAT8E5M2;
}

/* y[i] = x[i] cast from dtype `from` to `to` (different dtypes), cast.c's
 * rules: to bool x != 0 (NaN is true); from bool 0 or 1; floats to
 * integers truncated toward zero and saturated, NaN 0; integers wrap;
 * integers to 16- and 8-bit floats through float32; `saturate` for the
 * 8-bit floats (base/fp8.h). */
OPK_HD void opk_cast_at_sat(int32_t from, int32_t to, const void *x, void *y, int64_t i,
                            int saturate)
{
    if (opk_is_float(from)) {
        float f = opk_float_at(from, x, i);
        switch (to) {
        case PRT_FLOAT32:
        case PRT_FLOAT16:
        case PRT_BFLOAT16:
        case PRT_FLOAT8E4M3FN:
        case PRT_FLOAT8E5M2:
            opk_float_put_sat(to, y, i, f, saturate);
            break;
        case PRT_BOOL:
            ((uint8_t *)y)[i] = f != 0.0f;
            break;
        case PRT_INT8:
            ((int8_t *)y)[i] = (int8_t)base_f64_to_int(f, INT8_MIN, INT8_MAX);
            break;
        case PRT_UINT8:
            ((uint8_t *)y)[i] = (uint8_t)base_f64_to_int(f, 0, UINT8_MAX);
            break;
        case PRT_INT32:
            ((int32_t *)y)[i] = (int32_t)base_f64_to_int(f, INT32_MIN, INT32_MAX);
            break;
        default:
            ((int64_t *)y)[i] = base_f64_to_int(f, INT64_MIN, INT64_MAX);
            break;
        }
    } else {
        int64_t v = opk_int_at(from, x, i);
        uint64_t u = (uint64_t)v;
        switch (to) {
        case PRT_FLOAT32:
        case PRT_FLOAT16:
        case PRT_BFLOAT16:
        case PRT_FLOAT8E4M3FN:
        case PRT_FLOAT8E5M2:
            opk_float_put_sat(to, y, i, (float)v, saturate);
            break;
        case PRT_BOOL:
            ((uint8_t *)y)[i] = v != 0;
            break;
        case PRT_INT8:
            ((int8_t *)y)[i] = (int8_t)(uint8_t)u;
            break;
        case PRT_UINT8:
            ((uint8_t *)y)[i] = (uint8_t)u;
            break;
        case PRT_INT32:
            ((int32_t *)y)[i] = (int32_t)(uint32_t)u;
            break;
        default:
            ((int64_t *)y)[i] = v;
            break;
        }
    }
}

OPK_HD void opk_cast_at(int32_t from, int32_t to, const void *x, void *y, int64_t i)
{
    opk_cast_at_sat(from, to, x, y, i, 1);
}

#endif /* PLUGRT_OPS_OP_ELEM_H */
