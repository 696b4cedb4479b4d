/* Fused activations: their names and parameters (op_act.h). */
#include "ops/op_act.h"

#include <string.h>

static const char *const act_names[OP_ACT_COUNT] = {
    [OP_ACT_NONE] = "",
    [OP_ACT_RELU] = "Relu",
    [OP_ACT_LEAKY_RELU] = "LeakyRelu",
    [OP_ACT_CLIP] = "Clip",
    [OP_ACT_HARD_SIGMOID] = "HardSigmoid",
    [OP_ACT_HARD_SWISH] = "HardSwish",
    [OP_ACT_SIGMOID] = "Sigmoid",
    [OP_ACT_SILU] = "Silu",
};

const char *op_act_name(int32_t kind)
{
    return kind >= 0 && kind < OP_ACT_COUNT ? act_names[kind] : "";
}

int32_t op_act_kind(const char *name)
{
    for (int32_t k = 0; k < OP_ACT_COUNT; k++)
        if (strcmp(name, act_names[k]) == 0)
            return k;
    return -1;
}

int32_t op_act_nb_params(int32_t kind)
{
    switch (kind) {
    case OP_ACT_LEAKY_RELU:
        return 1;
    case OP_ACT_CLIP:
    case OP_ACT_HARD_SIGMOID:
        return 2;
    default:
        return 0;
    }
}

void op_act_defaults(int32_t kind, float *alpha, float *beta)
{
    /* ONNX's defaults; HardSwish's are fixed. Clip's are the whole float
     * range, as the op without bounds. */
    *alpha = *beta = 0.0f;
    if (kind == OP_ACT_LEAKY_RELU)
        *alpha = 0.01f;
    else if (kind == OP_ACT_CLIP) {
        *alpha = -3.402823466e38f;
        *beta = 3.402823466e38f;
    } else if (kind == OP_ACT_HARD_SIGMOID) {
        *alpha = 0.2f;
        *beta = 0.5f;
    } else if (kind == OP_ACT_HARD_SWISH) {
        *alpha = 1.0f / 6.0f;
        *beta = 0.5f;
    }
}
