/* Fused activations: their names and parameters (op_act.h), and the two
 * fields that carry one (ops_nn.h's op_act_parse and op_act_serialize). */
#include "ops/op_act.h"

#include <string.h>

#include "ops/ops_nn.h"

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

prt_status op_act_parse(op_object *o, const op_fields *f, op_act *act, float params[2])
{
    char name[32];
    int32_t len, np;
    const prt_field *fl;
    prt_status st = op_field_str(f, "activation", name, sizeof name, &len);
    if (!st)
        st = op_field_find(f, "activation_params", &fl);
    if (st)
        return st;
    act->kind = op_act_kind(name);
    if (act->kind < 0)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "activation '%s' is not Relu, LeakyRelu, Clip, HardSigmoid, "
                       "HardSwish, Sigmoid or Silu",
                       name);
    np = op_act_nb_params(act->kind);
    op_act_defaults(act->kind, &act->alpha, &act->beta);
    if (fl && fl->length != np)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "activation_params has %lld values; activation '%s' takes %d",
                       (long long)fl->length, name, (int)np);
    for (int64_t k = 0; fl && k < np; k++) {
        int64_t unused;
        double d;
        if (op_field_number_at(fl, k, &unused, &d) != 2)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "activation_params must be float32 (or another float)");
        *(k == 0 ? &act->alpha : &act->beta) = (float)d;
    }
    params[0] = act->alpha;
    params[1] = act->beta;
    return PRT_OK;
}

int32_t op_act_serialize(const op_act *act, const float params[2], prt_field *ser)
{
    const char *name = op_act_name(act->kind);
    if (act->kind == OP_ACT_NONE)
        return 0;
    op_ser(&ser[0], "activation", PRT_FIELD_CHAR, name, (int64_t)strlen(name));
    op_ser(&ser[1], "activation_params", PRT_FIELD_FLOAT32, params,
           op_act_nb_params(act->kind));
    return 2;
}
