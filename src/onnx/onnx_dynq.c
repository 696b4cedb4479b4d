/* Dynamically quantized products as one layer (issue 30), planned in
 * onnx_fuse.c with the other quantized patterns.
 *
 * ONNX Runtime's quantize_dynamic writes each MatMul (or Gemm) of a float
 * model as
 *
 *   (q, s, z) = DynamicQuantizeLinear(x)
 *   y = Mul(Cast(MatMulInteger(q, B, z, b_zp), to=float), Mul(s, b_scale))
 *   [y = Add(y, bias)]
 *
 * with B a constant 8-bit [K, N] matrix, b_scale and b_zp constants of one
 * value or N (per column) and bias N floats. Run op by op that is six
 * layers and three passes over float or int32 tensors of the output's
 * size; ORT's optimizer makes it one DynamicQuantizeMatMul. So does this
 * fold (ops/qmatmul_float.c), with the same inputs:
 *
 *  - DynamicQuantizeMatMul(x, B, b_scale, b_zp?, bias?) when the
 *    DynamicQuantizeLinear feeds this chain alone: the layer quantizes x
 *    itself (the same bytes as the op's);
 *  - MatMulIntegerToFloat(q, B, s, b_scale, z, b_zp?, bias?) when it feeds
 *    several (BERT's Q, K and V projections read one): the
 *    DynamicQuantizeLinear layer stays and x is quantized once, not once
 *    per product (bench/RESULTS.md, session 38, measured both).
 *
 * Every value inside is read by the next node alone and is no graph
 * output (the scale product too); B, b_scale, b_zp and bias are constants
 * of the sizes above, the Cast is to float, so the fused output has the
 * unfused one's dims and dtype. A b_zp left off before a bias cannot be
 * given by position: that chain stays unfused with an info line, as does
 * one that fails another check after the MatMulInteger's inputs matched.
 * The layer is named after the MatMulInteger and added at the chain's
 * last node; its output is the last node's. */
#include <string.h>

#include "onnx_fuse_facts.h"
#include "onnx_internal.h"

/* The one node reading `name` (read once, no graph output), else -1. */
static int32_t dq_only_reader(const fuse_ctx *c, const char *name)
{
    return fc_get(&c->uses, name) == 1 ? fc_get(&c->consumer, name) : -1;
}

/* The input of binary node n that is not `name` (NULL when both are). */
static const char *dq_other(const Onnx__NodeProto *n, const char *name)
{
    const char *a = onnx_node_input(n, 0), *b = onnx_node_input(n, 1);
    if (n->n_input != 2)
        return NULL;
    if (strcmp(a, name) == 0 && strcmp(b, name) != 0)
        return b;
    if (strcmp(b, name) == 0 && strcmp(a, name) != 0)
        return a;
    return NULL;
}

static int dq_is_8bit(const Onnx__TensorProto *t)
{
    return t && (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT8 ||
                 t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__UINT8);
}

/* t holds one value or n, in at most one dim. */
static int dq_one_or(const Onnx__TensorProto *t, int64_t n)
{
    return t &&
           (t->n_dims == 0 || (t->n_dims == 1 && (t->dims[0] == 1 || t->dims[0] == n)));
}

/* The MatMulInteger at pos reading a DynamicQuantizeLinear: 1 and *d when
 * the chain folds. */
int onnx_dynq_match(fuse_ctx *c, int32_t pos, onnx_dynq *d)
{
    const Onnx__NodeProto *mm = fc_node(c, pos), *dql, *cast, *mul, *sm, *add;
    const Onnx__TensorProto *B, *bz = NULL, *bs, *bias = NULL;
    const Onnx__AttributeProto *to;
    const char *y = fc_out(mm), *s, *bsn, *why = NULL;
    int32_t q, ca, mu, smp, ad;
    int64_t N;
    char label[512];
    if (!fc_is(c, pos, "MatMulInteger") || mm->n_input < 3 || !y[0])
        return 0;
    q = fc_get(&c->producer, onnx_node_input(mm, 0));
    if (!fc_is(c, q, "DynamicQuantizeLinear"))
        return 0;
    dql = fc_node(c, q);
    if (dql->n_output != 3 || strcmp(onnx_str(dql->output[0]), onnx_node_input(mm, 0)) ||
        strcmp(onnx_str(dql->output[2]), onnx_node_input(mm, 2)) ||
        !onnx_str(dql->output[1])[0])
        return 0;
    onnx_node_label(mm, c->order[pos], label, sizeof label);
    B = fc_const_proto(c, onnx_node_input(mm, 1));
    if (!dq_is_8bit(B) || B->n_dims != 2) {
        onnx_info("%s: DynamicQuantizeLinear -> MatMulInteger left unfused: B is not a "
                  "constant 8-bit [K, N] matrix",
                  label);
        return 0;
    }
    N = B->dims[1];
    if (mm->n_input > 3 && onnx_node_input(mm, 3)[0]) {
        bz = fc_const_proto(c, onnx_node_input(mm, 3));
        if (!bz || bz->data_type != B->data_type || !dq_one_or(bz, N))
            why = "b_zero_point is not a constant of B's dtype, one value or one per "
                  "column";
    }
    ca = dq_only_reader(c, y);
    to = fc_is(c, ca, "Cast") ? onnx_node_attr(fc_node(c, ca), "to") : NULL;
    if (!why && (!to || to->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT ||
                 to->i != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT))
        why = "its output is not read by one Cast to float alone";
    cast = why ? NULL : fc_node(c, ca);
    mu = cast ? dq_only_reader(c, fc_out(cast)) : -1;
    if (!why && !fc_is(c, mu, "Mul"))
        why = "the Cast's output is not read by one Mul alone";
    mul = why ? NULL : fc_node(c, mu);
    s = mul ? dq_other(mul, fc_out(cast)) : NULL;
    smp = s ? fc_get(&c->producer, s) : -1;
    if (!why && (!fc_is(c, smp, "Mul") || dq_only_reader(c, s) != mu))
        why = "the Mul's other operand is not a Mul of scales read by it alone";
    sm = why ? NULL : fc_node(c, smp);
    bsn = sm ? dq_other(sm, onnx_str(dql->output[1])) : NULL;
    bs = bsn ? fc_const_proto(c, bsn) : NULL;
    if (!why && (!bs || bs->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ||
                 !dq_one_or(bs, N)))
        why = "the scale is not DynamicQuantizeLinear's times a float32 constant of one "
              "value or one per column";
    if (why) {
        onnx_info("%s: DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul left "
                  "unfused: %s",
                  label, why);
        return 0;
    }
    memset(d, 0, sizeof *d);
    d->output = fc_out(mul);
    d->last = mu;
    ad = dq_only_reader(c, d->output);
    if (fc_is(c, ad, "Add")) {
        const char *bn;
        add = fc_node(c, ad);
        bn = dq_other(add, d->output);
        bias = bn ? fc_const_proto(c, bn) : NULL;
        if (bias && bias->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT &&
            bias->n_dims == 1 && bias->dims[0] == N && fc_out(add)[0]) {
            if (!bz) {
                onnx_info("%s: DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul -> "
                          "Add left unfused: no b_zero_point before the bias",
                          label);
                return 0;
            }
            d->output = fc_out(add);
            d->last = ad;
            d->members[d->nb_members++] = ad;
            d->bias = bn;
        }
    }
    d->members[d->nb_members++] = pos;
    d->members[d->nb_members++] = ca;
    d->members[d->nb_members++] = smp;
    d->members[d->nb_members++] = mu;
    /* The DynamicQuantizeLinear joins when this chain reads all three of
     * its outputs alone. */
    d->dynamic = fc_get(&c->uses, onnx_str(dql->output[0])) == 1 &&
                 fc_get(&c->uses, onnx_str(dql->output[1])) == 1 &&
                 fc_get(&c->uses, onnx_str(dql->output[2])) == 1;
    if (d->dynamic) {
        d->members[d->nb_members++] = q;
        d->ins[d->nb_ins++] = onnx_node_input(dql, 0);
        d->ins[d->nb_ins++] = onnx_node_input(mm, 1);
        d->ins[d->nb_ins++] = bsn;
    } else {
        d->ins[d->nb_ins++] = onnx_str(dql->output[0]);
        d->ins[d->nb_ins++] = onnx_node_input(mm, 1);
        d->ins[d->nb_ins++] = onnx_str(dql->output[1]);
        d->ins[d->nb_ins++] = bsn;
        d->ins[d->nb_ins++] = onnx_str(dql->output[2]);
    }
    if (bz)
        d->ins[d->nb_ins++] = onnx_node_input(mm, 3);
    if (d->bias)
        d->ins[d->nb_ins++] = d->bias;
    return 1;
}
