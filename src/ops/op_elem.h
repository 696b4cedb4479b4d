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

/* An integer (or bool) element as int64: int8/int16 signed, uint8 and bool
 * as their byte, uint16/uint32 as their value, uint64 as its bits (op_int_at,
 * op_common.h, is this). */
OPK_HD int64_t opk_int_at(int32_t dtype, const void *p, int64_t i)
{
    switch (dtype) {
    case PRT_INT64:
    case PRT_UINT64:
        return ((const int64_t *)p)[i];
    case PRT_INT32:
        return ((const int32_t *)p)[i];
    case PRT_UINT32:
        return ((const uint32_t *)p)[i];
    case PRT_INT16:
        return ((const int16_t *)p)[i];
    case PRT_UINT16:
        return ((const uint16_t *)p)[i];
    case PRT_INT8:
        return ((const int8_t *)p)[i];
    default:
        return ((const uint8_t *)p)[i];
    }
}

/* A float dtype's element i as float32, and v stored as one (rounded
 * once). float64 reads rounded to float32 (opk_f64_at reads it whole). */
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
    case PRT_FLOAT64:
        return (float)((const double *)p)[i];
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
    case PRT_FLOAT64:
        ((double *)p)[i] = v;
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
           dtype == PRT_FLOAT8E4M3FN || dtype == PRT_FLOAT8E5M2 || dtype == PRT_FLOAT64;
}

/* Any number's element i as a double: floats exactly, integers (uint64 as
 * unsigned) rounded to nearest past 2^53. */
OPK_HD double opk_f64_at(int32_t dtype, const void *p, int64_t i)
{
    if (dtype == PRT_FLOAT64)
        return ((const double *)p)[i];
    if (opk_is_float(dtype))
        return opk_float_at(dtype, p, i);
    if (dtype == PRT_UINT64)
        return (double)((const uint64_t *)p)[i];
    return (double)opk_int_at(dtype, p, i);
}

/* An integer dtype's element i = the low bits of v (two's complement: it
 * wraps). */
OPK_HD void opk_int_put(int32_t dtype, void *y, int64_t i, uint64_t u)
{
    switch (dtype) {
    case PRT_BOOL:
        ((uint8_t *)y)[i] = u != 0;
        break;
    case PRT_INT8:
    case PRT_UINT8:
        ((uint8_t *)y)[i] = (uint8_t)u;
        break;
    case PRT_INT16:
    case PRT_UINT16:
        ((uint16_t *)y)[i] = (uint16_t)u;
        break;
    case PRT_INT32:
    case PRT_UINT32:
        ((uint32_t *)y)[i] = (uint32_t)u;
        break;
    default:
        ((uint64_t *)y)[i] = u;
        break;
    }
}

/* A float value d to an integer dtype: truncated toward zero and saturated
 * to the type's range, NaN 0. */
OPK_HD void opk_int_put_f64(int32_t dtype, void *y, int64_t i, double d)
{
    switch (dtype) {
    case PRT_BOOL:
        ((uint8_t *)y)[i] = d != 0.0;
        break;
    case PRT_INT8:
        ((int8_t *)y)[i] = (int8_t)base_f64_to_int(d, INT8_MIN, INT8_MAX);
        break;
    case PRT_UINT8:
        ((uint8_t *)y)[i] = (uint8_t)base_f64_to_int(d, 0, UINT8_MAX);
        break;
    case PRT_INT16:
        ((int16_t *)y)[i] = (int16_t)base_f64_to_int(d, INT16_MIN, INT16_MAX);
        break;
    case PRT_UINT16:
        ((uint16_t *)y)[i] = (uint16_t)base_f64_to_int(d, 0, UINT16_MAX);
        break;
    case PRT_INT32:
        ((int32_t *)y)[i] = (int32_t)base_f64_to_int(d, INT32_MIN, INT32_MAX);
        break;
    case PRT_UINT32:
        ((uint32_t *)y)[i] = (uint32_t)base_f64_to_int(d, 0, UINT32_MAX);
        break;
    case PRT_UINT64:
        /* 2^64 and up saturate; below 2^63 int64's rule serves */
        ((uint64_t *)y)[i] = d != d || d <= 0.0            ? 0u
                             : d >= 18446744073709551616.0 ? UINT64_MAX
                             : d >= 9223372036854775808.0  ? (uint64_t)d
                                                           : (uint64_t)(int64_t)d;
        break;
    default:
        ((int64_t *)y)[i] = base_f64_to_int(d, INT64_MIN, INT64_MAX);
        break;
    }
}

/* y[i] = x[i] cast from dtype `from` to `to` (different dtypes), cast.c's
 * rules: to bool x != 0 (NaN is true); from bool 0 or 1; floats to
 * integers truncated toward zero and saturated, NaN 0; integers wrap;
 * integers to 16- and 8-bit floats through float32 (uint64 as unsigned);
 * float64 to the narrower floats through float32, as ONNX Runtime does;
 * `saturate` for the 8-bit floats (base/fp8.h). */
OPK_HD void opk_cast_at_sat(int32_t from, int32_t to, const void *x, void *y, int64_t i,
                            int saturate)
{
    if (opk_is_float(from)) {
        if (to == PRT_BOOL) {
            /* NaN is true */
            ((uint8_t *)y)[i] = from == PRT_FLOAT64 ? ((const double *)x)[i] != 0.0
                                                    : opk_float_at(from, x, i) != 0.0f;
        } else if (to == PRT_FLOAT64) {
            ((double *)y)[i] = opk_f64_at(from, x, i);
        } else if (opk_is_float(to)) {
            opk_float_put_sat(to, y, i, opk_float_at(from, x, i), saturate);
        } else {
            /* float32 values are doubles exactly */
            opk_int_put_f64(to, y, i, opk_f64_at(from, x, i));
        }
    } else {
        int64_t v = opk_int_at(from, x, i);
        if (to == PRT_FLOAT64)
            ((double *)y)[i] = opk_f64_at(from, x, i);
        else if (opk_is_float(to))
            opk_float_put_sat(
                to, y, i, from == PRT_UINT64 ? (float)(uint64_t)v : (float)v, saturate);
        else
            opk_int_put(to, y, i, (uint64_t)v);
    }
}

OPK_HD void opk_cast_at(int32_t from, int32_t to, const void *x, void *y, int64_t i)
{
    opk_cast_at_sat(from, to, x, y, i, 1);
}

#endif /* PLUGRT_OPS_OP_ELEM_H */
