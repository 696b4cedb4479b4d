// The fused activations on the device (op_act.h's OP_ACT_*, the same
// formulas as the CPU's cpu_act_v8: comparisons let NaN through; Sigmoid
// with e = e^-|x|, which never overflows; Silu x times Sigmoid's rounded
// result): Conv's (kernels.cu) and the normalizations' (norm.cu).
#ifndef PLUGRT_OPS_CUDA_ACT_CUH
#define PLUGRT_OPS_CUDA_ACT_CUH

#include <math.h>
#include <stdint.h>

#include "ops/op_act.h"

namespace opk
{

__device__ inline float act_apply(int32_t kind, float alpha, float beta, float x)
{
    float h;
    switch (kind) {
    case OP_ACT_RELU:
        return x < 0.0f ? 0.0f : x;
    case OP_ACT_LEAKY_RELU:
        return x < 0.0f ? alpha * x : x;
    case OP_ACT_CLIP:
        x = x < alpha ? alpha : x;
        return x > beta ? beta : x;
    case OP_ACT_HARD_SIGMOID:
    case OP_ACT_HARD_SWISH:
        h = alpha * x + beta;
        h = h < 0.0f ? 0.0f : h > 1.0f ? 1.0f : h;
        return kind == OP_ACT_HARD_SWISH ? x * h : h;
    case OP_ACT_SIGMOID:
    case OP_ACT_SILU:
        h = expf(-fabsf(x));
        h = (x >= 0.0f ? 1.0f : h) / (1.0f + h);
        return kind == OP_ACT_SILU ? x * h : h;
    default:
        return x;
    }
}

} // namespace opk

#endif // PLUGRT_OPS_CUDA_ACT_CUH
