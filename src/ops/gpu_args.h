/*
 * What the built-in ops' CUDA launchers (ops_cuda.h) are given, and the
 * index arithmetic their kernels do per element, written once for both
 * sides: plain C that nvcc compiles as __host__ __device__ code and the C
 * compiler as static inline functions (the number conversions they share
 * with the CPU are base/fp16.h's). So the CPU tests (test_gpu_args) run the
 * very walks the kernels run, on machines without a GPU.
 *
 * No CUDA header is needed to include this; it is part of every build.
 */
#ifndef PLUGRT_OPS_GPU_ARGS_H
#define PLUGRT_OPS_GPU_ARGS_H

#include <stdint.h>
#include <string.h>

#include "base/fp16.h"
#include "plugrt/plugin.h"

#define OPK_HD BASE_HD

#define OPK_MAX_RANK 8 /* PRT_MAX_DIMS */
#define OPK_MAX_IN 3   /* inputs of one broadcast walk (Where's three) */

/* A broadcast walk over a dense output: element i of the output, at
 * coordinates c[] of dims[], reads input k at sum_d c[d] * stride[k][d]
 * (elements; 0 where input k is broadcast along d). opk_bcast_init drops
 * the output's size-1 dims and merges dims that are contiguous in every
 * input, so `rank` is often 1 (same shapes, or a scalar) and never more
 * than the output's. */
typedef struct opk_bcast {
    int32_t rank;
    int32_t nb; /* inputs, <= OPK_MAX_IN */
    int64_t dims[OPK_MAX_RANK];
    int64_t stride[OPK_MAX_IN][OPK_MAX_RANK];
} opk_bcast;

#ifdef __cplusplus
extern "C" {
#endif
/* b for nb inputs of dims in[] broadcast (numpy's rule, already checked)
 * to `out` (gpu_args.c). */
void opk_bcast_init(opk_bcast *b, const prt_dims *out, int32_t nb, const prt_dims *in);

/* The same for one input read at explicit element strides (a transpose, a
 * slice): out's dims, input stride[d] along output dim d. */
void opk_bcast_init_strided(opk_bcast *b, const prt_dims *out, const int64_t *stride);
#ifdef __cplusplus
}
#endif

/* Input offsets of output element i (i < the output's volume). */
OPK_HD void opk_bcast_offsets(const opk_bcast *b, int64_t i, int64_t *off)
{
    for (int32_t k = 0; k < b->nb; k++)
        off[k] = 0;
    for (int32_t d = b->rank - 1; d >= 0; d--) {
        int64_t c = i % b->dims[d];
        i /= b->dims[d];
        for (int32_t k = 0; k < b->nb; k++)
            off[k] += c * b->stride[k][d];
    }
}

/* ---- Cast ------------------------------------------------------------- */

/* An integer (or bool) element as int64: int8 signed, uint8 and bool as
 * their byte (op_int_at's reading). */
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
    default:
        return ((const float *)p)[i];
    }
}

OPK_HD void opk_float_put(int32_t dtype, void *p, int64_t i, float v)
{
    switch (dtype) {
    case PRT_FLOAT16:
        ((uint16_t *)p)[i] = base_f2h(v);
        break;
    case PRT_BFLOAT16:
        ((uint16_t *)p)[i] = base_f2bf(v);
        break;
    default:
        ((float *)p)[i] = v;
        break;
    }
}

/* y[i] = x[i] cast from dtype `from` to `to` (different dtypes), cast.c's
 * rules: to bool x != 0 (NaN is true); from bool 0 or 1; floats to
 * integers truncated toward zero and saturated, NaN 0; integers wrap;
 * integers to 16-bit floats through float32. */
OPK_HD void opk_cast_at(int32_t from, int32_t to, const void *x, void *y, int64_t i)
{
    if (from == PRT_FLOAT32 || from == PRT_FLOAT16 || from == PRT_BFLOAT16) {
        float f = opk_float_at(from, x, i);
        switch (to) {
        case PRT_FLOAT32:
        case PRT_FLOAT16:
        case PRT_BFLOAT16:
            opk_float_put(to, y, i, f);
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
            opk_float_put(to, y, i, (float)v);
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

/* ---- Slice ------------------------------------------------------------ */

#define OPK_SLICE_MAX 8 /* entries of starts/ends/axes/steps (SLICE_MAX) */

/* One entry of Slice's parameters (slice.c's slice_params): for data of
 * rank r and dims[], the entry's start clamped to its axis, and its step,
 * into start[] and step[] (indexed by axis); the end only sets the
 * output's length, which the host knows. 0 when the entry is not
 * valid (axis out of range, step 0 or INT64_MIN); the run on the CPU fails
 * there, a kernel leaves the axis whole. */
OPK_HD int opk_slice_entry(int32_t r, const int64_t *dims, int64_t axis, int64_t s,
                           int64_t k, int64_t *start, int64_t *step)
{
    int64_t d;
    if (axis < -r || axis >= r || k == 0 || k == INT64_MIN)
        return 0;
    axis = axis < 0 ? axis + r : axis;
    d = dims[axis];
    s = s < 0 ? (s < -d ? 0 : s + d) : s;
    if (k > 0)
        s = s > d ? d : s;
    else
        s = s > d - 1 ? d - 1 : s;
    start[axis] = s;
    step[axis] = k;
    return 1;
}

#endif /* PLUGRT_OPS_GPU_ARGS_H */
