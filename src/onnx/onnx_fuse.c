/* Fusions the importer makes: a few node patterns become one built-in
 * layer, which computes the same values in one pass over memory instead of
 * several, and one layer's overhead instead of several (MobileNet-v3-small:
 * 81 layers for its 159 nodes' layers; bench/RESULTS.md, "CPU kernels").
 *
 *  - Conv -> Relu | LeakyRelu | Clip | HardSigmoid | HardSwish | Sigmoid: a
 *    Conv with fields activation and activation_params (ops/conv.c). Clip's
 *    min and max must be constants (or attributes before opset 11). The
 *    same after BatchNormalization, InstanceNormalization,
 *    GroupNormalization and LpNormalization (one output): the norm with the
 *    same two fields (ops/norm.c; DenseNet's BN -> ReLU after each Concat,
 *    the GroupNorm -> SiLU of diffusion U-Nets).
 *  - Conv -> Add(conv, skip) (either order) -> Relu | Clip | LeakyRelu?,
 *    the Conv without an activation of its own and skip of the Conv's
 *    output shape, proved from the graph (onnx_fuse_shapes.c: no
 *    broadcast): one Conv with skip as its residual input Z (field
 *    residual; ops/conv.c) and the activation after the sum. ResNet's and
 *    ResNeXt's blocks, MobileNet's inverted residuals. An info line names
 *    each.
 *  - SiLU (Swish) as PyTorch exports it, Conv -> Sigmoid -> Mul of the
 *    Conv's output and the Sigmoid's (either order): a Conv with activation
 *    Silu. The Conv's output is read by those two nodes alone. The same
 *    after the normalizations above.
 *  - GELU as PyTorch exports it, x * 0.5 * (1 + erf(x / sqrt 2)):
 *      Div(x, sqrt 2) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5), or with
 *      Mul(x, 0.5) first and the last Mul taking the Add's output:
 *    a built-in Gelu (approximate "none"); GPT-2's tanh form (fc_gelu_tanh,
 *    named after its Pow) a Gelu with approximate "tanh".
 *  - MatMul(A, W) -> Add(bias) with W a constant matrix (rank 2, N
 *    columns) and bias a constant vector of N floats: a MatMul with bias
 *    as its third input (ops/matmul.c), added to each row as the product
 *    is stored. A constant seen through Identity nodes counts.
 *  - DequantizeLinear of constants (x, scale and zero point): a float32
 *    constant (onnx_qdq.c), when every node reading it is a built-in (a
 *    plugin may take the integers and their scale instead: the builder's
 *    DQ fold, builder/fold.c, needs the DQ layer there).
 *  - DQ(x) -> Conv(DQ(w), DQ(bias)?) -> Q, as ONNX Runtime's quantize_static
 *    writes a QDQ Conv: a QLinearConv (ops/qconv.c) on x's integers, as
 *    ORT's own QDQ transformer makes (onnx_qdq.c says what must match). A
 *    Relu or Clip between the Conv and the Q joins when it changes nothing
 *    the Q can output (onnx_qdq_act_idle: a Relu before a Q whose zero
 *    point is the least integer), as ORT's ReluQuantFusion and
 *    ClipQuantFusion remove it first.
 *  - DQ(x) -> MatMul(x, DQ(w)) -> Q, w a constant 8-bit matrix quantized per
 *    tensor or per column: a QLinearMatMul (ops/qmatmul.c), as ORT's QDQ
 *    transformer makes. A QDQ pattern that does not match is left as it
 *    is, the reason in an info line of the log.
 *  - DynamicQuantizeLinear -> MatMulInteger(., constant B) -> Cast(float)
 *    -> Mul(scale product) [-> Add(bias)], ONNX Runtime's quantize_dynamic:
 *    one DynamicQuantizeMatMul, or MatMulIntegerToFloat beside a shared
 *    DynamicQuantizeLinear (onnx_dynq.c says when); a Relu, Gelu or the
 *    GELU pattern after it joins as field activation (fc_act_after).
 *  - Self-attention as PyTorch exports it (BERT, GPT-2, ViT; fc_attention):
 *      MatMul(Q', K') -> Mul or Div by a constant? -> Add(mask)? ->
 *      Softmax(last axis) -> [Where(IsNaN(p), 0, p) | Cast(float)]? ->
 *      MatMul(p, V)
 *    with Q' = Q or Mul(Q, constant), K' = K^T or Mul(K^T, constant), K^T
 *    = Transpose(K, perm 0 1 3 2) (then K is the input) or any rank-4
 *    value (the layer reads it as K^T: field k_transposed): one Attention
 *    layer (ops/attention.c) with the constants' product as its scale, the
 *    mask added to the scores, and the NaN guard as empty_rows_zero. Q, K
 *    and V must be known to have rank 4 (a Transpose of 4 dims made them,
 *    or a Gather of one index from a Transpose of 5: ViT's split of QKV);
 *    otherwise the pattern is left, with an info line saying so. A mask
 *    Where(keep, 0, -inf) read by the Add alone joins too: keep is the
 *    layer's boolean mask. When Q, K^T (or K) and V are each
 *      Reshape(x3, [B, S, H, D]) -> Transpose(0 2 1 3) (K^T: 0 2 3 1)
 *    and the second MatMul is followed by Transpose(0 2 1 3) ->
 *    Reshape(., [B, S, H Dv]), every one read once, with B and S proved
 *    x3's dims and H and D numbers (onnx_fuse_facts.c: the shapes known from the
 *    graph alone), these join as well: the layer reads the rank-3 x3s with
 *    q_num_heads and kv_num_heads and writes the last Reshape's output.
 *    When Shape nodes also read the merge Transpose (GPT-2), they read a
 *    Reshape view of the layer's output with the Transpose's dims
 *    (fc_import_view); a merge Reshape to rank 1 or 2 (the dynamo export's
 *    [-1, H Dv]) stays, reading the layer's output (fc_import_kept).
 *    When one projection x3 [B, S, 3 H D] makes Q, K and V (ViT: Reshape
 *    to [B, S, 3, H, D], then Gathers or a Split with Squeezes, of it or
 *    of its Transpose(2 0 3 1 4); fc_qkv_split), the same proofs let a
 *    Split of x3 into thirds (named after the Reshape, its outputs x3's
 *    name with :q, :k and :v) feed the rank-3 layer in their place.
 *  - Add -> LayerNormalization over the last axis: a SkipLayerNormalization
 *    (ops/skip_layer_norm.c), which also writes the sum when another node
 *    reads it (fc_skip_ln says where it goes then).
 *  - MatMul (-> Add of a bias, as above) -> Relu | Gelu | the GELU pattern:
 *    a MatMul with field activation (ops/matmul.c).
 *  - A run of 2 to 8 elementwise built-ins (Add Sub Mul Div Pow Relu
 *    Sigmoid Tanh Erf Sqrt Exp Log Neg Abs Reciprocal), each value read by
 *    the next node alone, with a float constant operand: an
 *    ElementwiseChain (ops/ew_chain.c), planned after every other pattern.
 *    These three name their layer after every node they replace, joined
 *    by '+', and log an info line each.
 *
 * Rules. Every node of a pattern is one the importer would make a built-in
 * of that op (a --plugin-op mapping of any of them keeps them apart); every
 * value inside the pattern is read by the next node alone and is no graph
 * output, so no layer needs it; constants are checked by value. The fused
 * layer is added where the pattern's last node comes in the topological
 * order (every input of the pattern is there by then, and its output is
 * read only later), named after the pattern's first node (the Erf for
 * GELU), and its output carries the last node's output name, so the
 * graph's names and --compare-layers still line up; the values inside the
 * pattern have no tensor. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnx_fuse_facts.h"
#include "onnx_internal.h"
/* ElementwiseChain's ops and limits: the one internal header the importer
 * includes, self-contained (it says why). */
#include "../ops/ew_chain_prog.h"

enum {
    FUSE_CONV_ACT,
    FUSE_GELU,
    FUSE_MATMUL_ADD,
    FUSE_DQ_CONST,
    FUSE_QCONV,
    FUSE_QMATMUL,
    FUSE_ATTENTION,
    FUSE_QPOOL,
    FUSE_QADD,
    FUSE_CONV_ADD,
    FUSE_DYNQ
};
enum { FUSE_SKIP_LN = 16, FUSE_MATMUL_ACT, FUSE_EW_CHAIN }; /* the sections at the end */

typedef struct fusion {
    int32_t kind;
    int32_t first, last; /* order positions of the node naming the layer and of
                            the node where it is added */
    int32_t nb_members;
    int32_t members[24]; /* order positions */
    const char *input;   /* GELU: x; MatMul: the bias */
    const char *output;  /* the last node's output */
    const char *act;     /* Conv: the activation's op name */
    float params[2];
    int32_t nb_params;
    const Onnx__TensorProto *q[3]; /* DQ of constants: x, scale, zero point */
    int64_t axis;
    const char *ins[9]; /* QLinearConv's inputs; Attention's Q, K, V, mask */
    int32_t nb_ins;
    int32_t flags[4];     /* Attention: k_transposed, empty_rows_zero, and for
                             rank-3 Q, K, V: q_num_heads, kv_num_heads (else 0) */
    const char *sum;      /* SkipLayerNormalization: the Add's output when read
                             elsewhere, else NULL */
    int32_t view;         /* Attention: order position of the merge Transpose whose
                             output Shape nodes read (fc_head_merge), else -1 */
    int64_t view_dims[2]; /* its dims 2 and 3: H and Dv */
    int32_t kept;         /* Attention: order position of a merge Reshape to rank
                             2 reading the layer's output (named after the
                             merge Transpose node), else -1 */
    const char *qkv;      /* Attention: the rank-3 QKV value that a Split cuts into
                             Q, K and V (fc_qkv_split), else NULL */
    int32_t qkv_at;       /* its Reshape to rank 5: the Split is named after it */
    int32_t parts[3];     /* the thirds Q, K and V read */
    float epsilon;
    /* ElementwiseChain's fields */
    char ops[EC_MAX_STEPS * 16];
    int32_t operands[2 * EC_MAX_STEPS];
    float consts[EC_MAX_CONSTS];
    int32_t nb_steps, nb_consts;
} fusion;

struct onnx_fusions {
    int32_t *role; /* per order position: -1 alone, -2 inside a fusion, k >= 0 add
                      fusion k here */
    fusion *f;
    int32_t nb;
};

const Onnx__NodeProto *fc_node(const fuse_ctx *c, int32_t pos)
{
    return c->imp->graph->node[c->order[pos]];
}

/* The node at `pos` is imported as the built-in `op`. */
int fc_is(const fuse_ctx *c, int32_t pos, const char *op)
{
    const prt_plugin_creator *cr = pos >= 0 ? c->choices[pos].creator : NULL;
    return cr && !c->taken[pos] &&
           strcmp(cr->plugin_namespace, PRT_BUILTIN_NAMESPACE) == 0 &&
           strcmp(cr->name, op) == 0 &&
           strcmp(onnx_str(fc_node(c, pos)->op_type), op) == 0;
}

int32_t fc_get(const onnx_names *t, const char *name)
{
    int32_t v;
    return name[0] && onnx_names_get(t, name, &v) == 0 ? v : -1;
}

/* The one node reading `name` (read once, no graph output), else -1. */
static int32_t fc_only_reader(const fuse_ctx *c, const char *name)
{
    return fc_get(&c->uses, name) == 1 ? fc_get(&c->consumer, name) : -1;
}

const char *fc_out(const Onnx__NodeProto *n)
{
    return n->n_output == 1 ? onnx_str(n->output[0]) : "";
}

/* The value of a one-element float constant (an initializer or a Constant
 * node's value / value_float): 1 and *v (and its dtype in *dt unless
 * NULL), else 0. */
static int fc_scalar_dt(const fuse_ctx *c, const char *name, float *v, int32_t *dt)
{
    prt_status st;
    const Onnx__TensorProto *tp = NULL;
    const onnx_value *val;
    onnx_tensor t;
    int32_t pos;
    int ok = 0;
    if (!name[0])
        return 0;
    pos = fc_get(&c->producer, name);
    if (pos >= 0) {
        const Onnx__NodeProto *n = fc_node(c, pos);
        const Onnx__AttributeProto *a = n->n_attribute == 1 ? n->attribute[0] : NULL;
        if (strcmp(onnx_str(n->op_type), "Constant") != 0 || !a)
            return 0;
        if (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT &&
            strcmp(onnx_str(a->name), "value_float") == 0) {
            *v = a->f;
            if (dt)
                *dt = PRT_FLOAT32;
            return 1;
        }
        if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR || !a->t ||
            strcmp(onnx_str(a->name), "value") != 0)
            return 0;
        tp = a->t;
    } else if ((val = onnx_value_find(c->imp, name)) != NULL &&
               val->kind == ONNX_VALUE_CONSTANT) {
        tp = val->init;
    }
    if (!tp)
        return 0;
    if ((st = onnx_tensor_load(tp, c->imp->base_dir, name, &t)) != PRT_OK) {
        if (st == PRT_ERR_OUT_OF_MEMORY)
            *c->oom = st;
        prt_clear_error(); /* not a constant we can use: no fusion */
        return 0;
    }
    if (t.bytes == prt_dtype_size(t.dtype) && onnx_dtype_is_float(t.dtype)) {
        ok = 1;
        *v = onnx_tensor_float(&t, 0);
        if (dt)
            *dt = t.dtype;
    }
    onnx_tensor_free(&t);
    return ok;
}

static int fc_scalar(const fuse_ctx *c, const char *name, float *v)
{
    return fc_scalar_dt(c, name, v, NULL);
}

/* The tensor of a constant: an initializer, a Constant node's 'value', or
 * either through built-in Identity nodes; NULL for anything else. */
const Onnx__TensorProto *fc_const_proto(const fuse_ctx *c, const char *name)
{
    int32_t pos;
    for (int hops = 0; name[0] && hops < 16; hops++) {
        pos = fc_get(&c->producer, name);
        if (pos < 0) {
            const onnx_value *v = onnx_value_find(c->imp, name);
            return v && v->kind == ONNX_VALUE_CONSTANT ? v->init : NULL;
        }
        if (fc_is(c, pos, "Identity") && fc_node(c, pos)->n_input == 1) {
            name = onnx_node_input(fc_node(c, pos), 0);
            continue;
        }
        if (strcmp(onnx_str(fc_node(c, pos)->op_type), "Constant") == 0 &&
            fc_node(c, pos)->n_attribute == 1) {
            const Onnx__AttributeProto *a = fc_node(c, pos)->attribute[0];
            return a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR &&
                           strcmp(onnx_str(a->name), "value") == 0
                       ? a->t
                       : NULL;
        }
        return NULL;
    }
    return NULL;
}

/* A float attribute, or dflt when absent; 0 when it is not a FLOAT. */
static int fc_attr_f(const Onnx__NodeProto *n, const char *name, float dflt, float *v)
{
    const Onnx__AttributeProto *a = onnx_node_attr(n, name);
    *v = dflt;
    if (!a)
        return 1;
    if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT)
        return 0;
    *v = a->f;
    return 1;
}

/* A fusion of nb nodes (order positions in m[]) named after `first`. */
static void fc_init(fusion *f, int32_t kind, int32_t first, int32_t nb, const int32_t *m)
{
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->first = first;
    f->nb_members = nb;
    for (int32_t k = 0; k < nb; k++)
        f->members[k] = m[k];
}

static void fc_take(fuse_ctx *c, fusion *f)
{
    for (int32_t k = 0; k < f->nb_members; k++)
        c->taken[f->members[k]] = 1;
}

static int fc_act_params(fuse_ctx *c, const Onnx__NodeProto *an, const char *act,
                         fusion *f);
static int fc_act_after(fuse_ctx *c, const char *y, int wfloat, fusion *f);

/* The node at pos can take a fused activation: a Conv, or one of the
 * normalizations with its one output (ops/norm.c's field activation). */
static int fc_act_host(const fuse_ctx *c, int32_t pos)
{
    static const char *const norms[] = {"BatchNormalization", "InstanceNormalization",
                                        "GroupNormalization", "LpNormalization"};
    if (fc_is(c, pos, "Conv"))
        return 1;
    for (size_t k = 0; k < sizeof norms / sizeof norms[0]; k++)
        if (fc_is(c, pos, norms[k]))
            return fc_node(c, pos)->n_output == 1;
    return 0;
}

/* Conv (or a normalization) at pos -> its activation: 1 and *f when they
 * fuse. */
static int fc_conv_act(fuse_ctx *c, int32_t pos, fusion *f)
{
    static const char *const acts[] = {"Relu",        "LeakyRelu", "Clip",
                                       "HardSigmoid", "HardSwish", "Sigmoid"};
    enum { NB_ACTS = sizeof acts / sizeof acts[0] };
    const Onnx__NodeProto *conv = fc_node(c, pos), *an;
    const char *y = fc_out(conv);
    int32_t a = fc_only_reader(c, y), k;
    if (!fc_act_host(c, pos) || a < 0)
        return 0;
    for (k = 0; k < NB_ACTS && !fc_is(c, a, acts[k]); k++)
        ;
    an = fc_node(c, a);
    if (k == NB_ACTS || strcmp(onnx_node_input(an, 0), y) != 0 || !fc_out(an)[0])
        return 0;
    fc_init(f, FUSE_CONV_ACT, pos, 2, (const int32_t[]){pos, a});
    f->last = a;
    f->output = fc_out(an);
    f->act = acts[k];
    return fc_act_params(c, an, acts[k], f);
}

/* The parameters of activation node an (op `act`) into f: LeakyRelu's
 * alpha, HardSigmoid's alpha and beta, Clip's min and max (constants from
 * opset 11); 0 when they are not what the Conv can take. */
static int fc_act_params(fuse_ctx *c, const Onnx__NodeProto *an, const char *act,
                         fusion *f)
{
    const int k = strcmp(act, "LeakyRelu") == 0     ? 1
                  : strcmp(act, "Clip") == 0        ? 2
                  : strcmp(act, "HardSigmoid") == 0 ? 3
                                                    : 0;
    if (k == 1) {
        f->nb_params = 1;
        return fc_attr_f(an, "alpha", 0.01f, &f->params[0]);
    }
    if (k == 3) {
        f->nb_params = 2;
        return fc_attr_f(an, "alpha", 0.2f, &f->params[0]) &&
               fc_attr_f(an, "beta", 0.5f, &f->params[1]);
    }
    if (k == 2) {
        f->nb_params = 2;
        if (c->imp->opset < 11)
            return fc_attr_f(an, "min", -3.402823466e38f, &f->params[0]) &&
                   fc_attr_f(an, "max", 3.402823466e38f, &f->params[1]);
        f->params[0] = -3.402823466e38f;
        f->params[1] = 3.402823466e38f;
        for (size_t i = 1; i < an->n_input && i < 3; i++)
            if (onnx_node_input(an, i)[0] &&
                !fc_scalar(c, onnx_node_input(an, i), &f->params[i - 1]))
                return 0;
        return an->n_input <= 3;
    }
    return 1;
}

/* The other input of a two-input node than `name` (name must be one). */
static const char *fc_other(const Onnx__NodeProto *n, const char *name)
{
    if (n->n_input != 2)
        return NULL;
    if (strcmp(onnx_node_input(n, 0), name) == 0)
        return onnx_node_input(n, 1);
    if (strcmp(onnx_node_input(n, 1), name) == 0)
        return onnx_node_input(n, 0);
    return NULL;
}

/* Conv at pos -> Add(conv, skip) -> Relu | Clip | LeakyRelu?: 1 and *f
 * when they fold into a Conv with residual input skip (f->input). The
 * Conv's activation, if it had one, would already have fused it
 * (fc_conv_act: its output's one reader), so its only reader being the
 * Add says it has none. */
static int fc_conv_add(fuse_ctx *c, int32_t pos, fusion *f)
{
    static const char *const acts[] = {"Relu", "Clip", "LeakyRelu"};
    const Onnx__NodeProto *an;
    const char *y = fc_out(fc_node(c, pos)), *skip, *sum;
    int32_t a = fc_only_reader(c, y), r, k;
    fusion af;
    if (!fc_is(c, pos, "Conv") || !fc_is(c, a, "Add"))
        return 0;
    an = fc_node(c, a);
    skip = fc_other(an, y);
    sum = fc_out(an);
    /* Add(y, y) has no other operand; the shapes proved equal keep a
     * broadcast (a bias of [M, 1, 1]) an Add. */
    if (!skip || !skip[0] || strcmp(skip, y) == 0 || !sum[0] ||
        !fc_same_static_shape(c, y, skip))
        return 0;
    fc_init(f, FUSE_CONV_ADD, pos, 2, (const int32_t[]){pos, a});
    f->last = a;
    f->output = sum;
    f->input = skip;
    r = fc_only_reader(c, sum);
    for (k = 0; k < 3 && !fc_is(c, r, acts[k]); k++)
        ;
    /* The activation's parameters as fc_conv_act reads them; one whose
     * parameters are not constants stays a layer. */
    if (k < 3 && strcmp(onnx_node_input(fc_node(c, r), 0), sum) == 0 &&
        fc_out(fc_node(c, r))[0]) {
        memset(&af, 0, sizeof af);
        if (fc_act_params(c, fc_node(c, r), acts[k], &af)) {
            f->members[f->nb_members++] = r;
            f->last = r;
            f->output = fc_out(fc_node(c, r));
            f->act = acts[k];
            f->nb_params = af.nb_params;
            f->params[0] = af.params[0];
            f->params[1] = af.params[1];
        }
    }
    return 1;
}

/* Conv (or a normalization) at pos -> Sigmoid -> Mul(conv, sigmoid) in
 * either order: 1 and *f when they fuse into one layer with activation
 * Silu. */
static int fc_conv_silu(fuse_ctx *c, int32_t pos, fusion *f)
{
    const char *y = fc_out(fc_node(c, pos)), *s_out;
    const Onnx__NodeProto *mul;
    int32_t m, s;
    /* y is read twice, the Mul being the later reader in the order (it
     * reads the Sigmoid's output too). */
    if (!fc_act_host(c, pos) || fc_get(&c->uses, y) != 2)
        return 0;
    m = fc_get(&c->consumer, y);
    if (!fc_is(c, m, "Mul") || !fc_out(fc_node(c, m))[0])
        return 0;
    mul = fc_node(c, m);
    s_out = fc_other(mul, y);
    s = s_out ? fc_get(&c->producer, s_out) : -1;
    if (!fc_is(c, s, "Sigmoid") || fc_only_reader(c, s_out) != m ||
        fc_node(c, s)->n_input != 1 || strcmp(onnx_node_input(fc_node(c, s), 0), y) != 0)
        return 0;
    fc_init(f, FUSE_CONV_ACT, pos, 3, (const int32_t[]){pos, s, m});
    f->last = m;
    f->output = fc_out(mul);
    f->act = "Silu";
    return 1;
}

/* `name` is the other input of node pos and a constant equal to want
 * (within tol). */
static int fc_const_input(const fuse_ctx *c, int32_t pos, const char *name, float want,
                          float tol)
{
    const char *o = fc_other(fc_node(c, pos), name);
    float v;
    return o && fc_scalar(c, o, &v) && fabsf(v - want) <= tol;
}

/* GELU from the Div at pos. */
static int fc_gelu(fuse_ctx *c, int32_t pos, fusion *f)
{
    const Onnx__NodeProto *div = fc_node(c, pos);
    const char *x = onnx_node_input(div, 0), *q;
    float s;
    int32_t erf, add, m1, m2, h;
    if (!fc_is(c, pos, "Div") || div->n_input != 2 ||
        !fc_scalar(c, onnx_node_input(div, 1), &s) || fabsf(s - 1.41421356f) > 1e-6f)
        return 0;
    erf = fc_only_reader(c, fc_out(div));
    if (!fc_is(c, erf, "Erf"))
        return 0;
    add = fc_only_reader(c, fc_out(fc_node(c, erf)));
    if (!fc_is(c, add, "Add") ||
        !fc_const_input(c, add, fc_out(fc_node(c, erf)), 1.0f, 0))
        return 0;
    m1 = fc_only_reader(c, fc_out(fc_node(c, add)));
    if (!fc_is(c, m1, "Mul") || !fc_out(fc_node(c, m1))[0])
        return 0;
    q = fc_other(fc_node(c, m1), fc_out(fc_node(c, add)));
    if (!q)
        return 0;
    fc_init(f, FUSE_GELU, erf, 5, (const int32_t[]){pos, erf, add, m1, -1});
    f->input = x;
    if (strcmp(q, x) == 0) {
        /* (x * (1 + erf)) * 0.5 */
        m2 = fc_only_reader(c, fc_out(fc_node(c, m1)));
        if (!fc_is(c, m2, "Mul") || !fc_out(fc_node(c, m2))[0] ||
            !fc_const_input(c, m2, fc_out(fc_node(c, m1)), 0.5f, 0))
            return 0;
        f->members[4] = f->last = m2;
        f->output = fc_out(fc_node(c, m2));
        return 1;
    }
    /* (x * 0.5) * (1 + erf) */
    h = fc_get(&c->producer, q);
    if (fc_only_reader(c, q) != m1 || !fc_is(c, h, "Mul") ||
        !fc_const_input(c, h, x, 0.5f, 0) || !fc_other(fc_node(c, h), x))
        return 0;
    f->members[4] = h;
    f->last = m1 > h ? m1 : h;
    f->output = fc_out(fc_node(c, m1));
    return 1;
}

/* GPT-2's tanh GELU from the Pow at pos, as PyTorch's NewGELU exports it:
 *   Pow(x, 3) -> Mul(0.044715) -> Add(x) -> Mul(sqrt(2 / pi)) -> Tanh ->
 *   Add(1) -> Mul(Mul(x, 0.5), .)   (or Mul(x, .) -> Mul(0.5))
 * a built-in Gelu with approximate "tanh" (one pass where the unfused
 * ElementwiseChains made two over the 6 and 2 nodes, each step rounded). */
static int fc_gelu_tanh(fuse_ctx *c, int32_t pos, fusion *f)
{
    const Onnx__NodeProto *pw = fc_node(c, pos);
    const char *x = onnx_node_input(pw, 0), *q;
    float e;
    int32_t m[8], h;
    if (!fc_is(c, pos, "Pow") || pw->n_input != 2 ||
        !fc_scalar(c, onnx_node_input(pw, 1), &e) || e != 3.0f)
        return 0;
    m[0] = pos;
    m[1] = fc_only_reader(c, fc_out(pw));
    if (!fc_is(c, m[1], "Mul") || !fc_const_input(c, m[1], fc_out(pw), 0.044715f, 1e-7f))
        return 0;
    m[2] = fc_only_reader(c, fc_out(fc_node(c, m[1])));
    if (!fc_is(c, m[2], "Add") ||
        !(q = fc_other(fc_node(c, m[2]), fc_out(fc_node(c, m[1])))) || strcmp(q, x) != 0)
        return 0;
    m[3] = fc_only_reader(c, fc_out(fc_node(c, m[2])));
    if (!fc_is(c, m[3], "Mul") ||
        !fc_const_input(c, m[3], fc_out(fc_node(c, m[2])), 0.7978846f, 1e-6f))
        return 0;
    m[4] = fc_only_reader(c, fc_out(fc_node(c, m[3])));
    if (!fc_is(c, m[4], "Tanh"))
        return 0;
    m[5] = fc_only_reader(c, fc_out(fc_node(c, m[4])));
    if (!fc_is(c, m[5], "Add") ||
        !fc_const_input(c, m[5], fc_out(fc_node(c, m[4])), 1.0f, 0))
        return 0;
    m[6] = fc_only_reader(c, fc_out(fc_node(c, m[5])));
    if (!fc_is(c, m[6], "Mul") || !fc_out(fc_node(c, m[6]))[0] ||
        !(q = fc_other(fc_node(c, m[6]), fc_out(fc_node(c, m[5])))))
        return 0;
    if (strcmp(q, x) == 0) {
        /* (x * (1 + tanh)) * 0.5 */
        m[7] = fc_only_reader(c, fc_out(fc_node(c, m[6])));
        if (!fc_is(c, m[7], "Mul") || !fc_out(fc_node(c, m[7]))[0] ||
            !fc_const_input(c, m[7], fc_out(fc_node(c, m[6])), 0.5f, 0))
            return 0;
        fc_init(f, FUSE_GELU, pos, 8, m);
        f->last = m[7];
    } else {
        /* (x * 0.5) * (1 + tanh) */
        h = fc_get(&c->producer, q);
        if (fc_only_reader(c, q) != m[6] || !fc_is(c, h, "Mul") ||
            !fc_const_input(c, h, x, 0.5f, 0))
            return 0;
        m[7] = h;
        fc_init(f, FUSE_GELU, pos, 8, m);
        f->last = m[6] > h ? m[6] : h;
    }
    f->input = x;
    f->act = "tanh";
    f->output = fc_out(fc_node(c, f->last));
    return 1;
}

/* MatMul at pos -> Add of a bias of its columns. */
static int fc_matmul_add(fuse_ctx *c, int32_t pos, fusion *f)
{
    const Onnx__NodeProto *mm = fc_node(c, pos), *add;
    const Onnx__TensorProto *w, *b;
    const char *y = fc_out(mm), *bias;
    int32_t a;
    if (!fc_is(c, pos, "MatMul") || mm->n_input != 2 || !y[0])
        return 0;
    a = fc_only_reader(c, y);
    if (!fc_is(c, a, "Add"))
        return 0;
    add = fc_node(c, a);
    bias = fc_other(add, y);
    w = fc_const_proto(c, onnx_node_input(mm, 1));
    b = bias ? fc_const_proto(c, bias) : NULL;
    /* Same float dtype (ONNX's Add demands it), W N columns, bias N
     * values: the sum's shape is the product's. */
    if (!w || !b || !fc_out(add)[0] || w->n_dims != 2 || b->n_dims != 1 ||
        b->dims[0] != w->dims[1] || w->data_type != b->data_type ||
        (w->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT &&
         w->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 &&
         w->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16))
        return 0;
    fc_init(f, FUSE_MATMUL_ADD, pos, 2, (const int32_t[]){pos, a});
    f->last = a;
    f->input = bias;
    f->output = fc_out(add);
    return 1;
}

/* DequantizeLinear at pos of constants, read by built-ins only. */
static int fc_dq_const(fuse_ctx *c, int32_t pos, fusion *f)
{
    const Onnx__NodeProto *dq = fc_node(c, pos);
    const Onnx__GraphProto *g = c->imp->graph;
    const Onnx__AttributeProto *a;
    const char *y = fc_out(dq), *zn;
    if (!fc_is(c, pos, "DequantizeLinear") || dq->n_input < 2 || dq->n_input > 3 || !y[0])
        return 0;
    a = onnx_node_attr(dq, "axis");
    if (a && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
        return 0;
    zn = dq->n_input > 2 ? onnx_node_input(dq, 2) : "";
    memset(f, 0, sizeof *f);
    f->q[0] = fc_const_proto(c, onnx_node_input(dq, 0));
    f->q[1] = fc_const_proto(c, onnx_node_input(dq, 1));
    f->q[2] = zn[0] ? fc_const_proto(c, zn) : NULL;
    f->axis = a ? a->i : 1;
    if (!f->q[0] || !f->q[1] || (zn[0] && !f->q[2]) ||
        !onnx_dq_const_ok(c->imp, f->q[0], f->q[1], f->q[2], f->axis))
        return 0;
    for (size_t k = 0; k < g->n_output; k++)
        if (strcmp(onnx_str(g->output[k]->name), y) == 0)
            return 0;
    for (int32_t i = 0; i < c->n; i++) {
        const Onnx__NodeProto *n = fc_node(c, i);
        const prt_plugin_creator *cr = c->choices[i].creator;
        for (size_t k = 0; k < n->n_input; k++)
            if (strcmp(onnx_str(n->input[k]), y) == 0 &&
                (!cr || strcmp(cr->plugin_namespace, PRT_BUILTIN_NAMESPACE) != 0))
                return 0;
    }
    {
        const Onnx__TensorProto *q[3] = {f->q[0], f->q[1], f->q[2]};
        const int64_t axis = f->axis;
        fc_init(f, FUSE_DQ_CONST, pos, 1, (const int32_t[]){pos});
        memcpy(f->q, q, sizeof q);
        f->axis = axis;
    }
    f->last = pos;
    f->output = y;
    return 1;
}

/* Every input of the node at pos comes from a DequantizeLinear read by it
 * alone, but x's (input 0) which others may read too (ResNet's blocks feed
 * one DQ to a Conv and the residual Add, or to two Convs; ORT gives each
 * reader its own, EnsureUniqueDQForNodeUnit): 1, their order positions
 * at[], nodes dq[] and constant inputs p[k][j] (NULL: not a constant or
 * absent; rows past the inputs NULL); *shared whether x's DQ has other
 * readers (then it stays out of the fusion: fc_drop_idle_dqs). */
static int fc_qdq_inputs(fuse_ctx *c, int32_t pos, int32_t *at,
                         const Onnx__NodeProto **dq, const Onnx__TensorProto *(*p)[3],
                         int *shared)
{
    const Onnx__NodeProto *node = fc_node(c, pos);
    *shared = 0;
    for (size_t k = 0; k < node->n_input; k++) {
        const char *in = onnx_node_input(node, k);
        at[k] = fc_get(&c->producer, in);
        if (!fc_is(c, at[k], "DequantizeLinear"))
            return 0;
        if (fc_only_reader(c, in) != pos) {
            if (k > 0 || fc_get(&c->uses, in) < 2)
                return 0;
            *shared = 1;
        }
        dq[k] = fc_node(c, at[k]);
    }
    for (int k = 0; k < 3; k++) {
        const Onnx__NodeProto *n = k < (int)node->n_input ? dq[k] : NULL;
        for (int j = 0; j < 3; j++)
            p[k][j] = n && j < (int)n->n_input && onnx_node_input(n, j)[0]
                          ? fc_const_proto(c, onnx_node_input(n, j))
                          : NULL;
    }
    return 1;
}

/* The node at pos is a Relu, or a Clip whose bounds are constants (or
 * absent): 1 and its range [*lo, *hi]. */
static int fc_qconv_act(fuse_ctx *c, int32_t pos, float *lo, float *hi)
{
    const Onnx__NodeProto *n;
    *lo = 0.0f;
    *hi = INFINITY;
    if (fc_is(c, pos, "Relu"))
        return 1;
    if (!fc_is(c, pos, "Clip"))
        return 0;
    n = fc_node(c, pos);
    *lo = -INFINITY;
    if (c->imp->opset < 11)
        return fc_attr_f(n, "min", -INFINITY, lo) && fc_attr_f(n, "max", INFINITY, hi);
    for (size_t i = 1; i < n->n_input && i < 3; i++)
        if (onnx_node_input(n, i)[0] &&
            !fc_scalar(c, onnx_node_input(n, i), i == 1 ? lo : hi))
            return 0;
    return n->n_input <= 3;
}

/* Taps of QLinearConv's depthwise kernel at most (conv_dw.c's op_dw,
 * OP_DW_MAX_TAPS: the importer sees no kernel headers). */
#define FC_QCONV_DW_TAPS 64

/* W (a constant, or NULL) of a depthwise convolution of `group` groups
 * that QLinearConv's depthwise kernel takes: [group, 1, kh, kw]. */
static int fc_qconv_depthwise(const Onnx__TensorProto *w, int64_t group)
{
    return w && w->n_dims == 4 && w->dims[0] == group && w->dims[1] == 1 &&
           w->dims[2] * w->dims[3] <= FC_QCONV_DW_TAPS;
}

/* The Conv at pos between DQs and a Q (through an idle Relu or Clip): 1
 * and *f when they make a QLinearConv. */
static int fc_qconv(fuse_ctx *c, int32_t pos, fusion *f)
{
    const Onnx__NodeProto *conv = fc_node(c, pos), *qn, *dq[3] = {NULL, NULL, NULL};
    const Onnx__TensorProto *p[3][3];
    const char *y = fc_out(conv), *why = NULL;
    int32_t q, act = -1, at[3] = {-1, -1, -1}, m[6], nb = 0;
    int shared;
    float lo = 0.0f, hi = 0.0f;
    char label[512];
    if (!fc_is(c, pos, "Conv") || conv->n_input < 2 || conv->n_input > 3 || !y[0])
        return 0;
    q = fc_only_reader(c, y);
    if (fc_qconv_act(c, q, &lo, &hi)) {
        act = q;
        q = fc_only_reader(c, fc_out(fc_node(c, act)));
    }
    if (!fc_is(c, q, "QuantizeLinear") || !fc_qdq_inputs(c, pos, at, dq, p, &shared))
        return 0; /* not a QDQ Conv (the fp32 model's): no log */
    qn = fc_node(c, q);
    /* Depthwise convolutions (one input channel per group, a constant W
     * of 2 spatial dims) fold: QLinearConv runs them through the float
     * depthwise kernel, exactly (qconv_kernel.h); other grouped ones run
     * on the channel-last VNNI tiles group by group. A depthwise one past
     * the depthwise kernel's taps stays dequantized: QLinearConv's
     * generic grouped path was slower than the float kernels there
     * (efficientnet_b0_w25_qdq, bench/RESULTS.md). */
    for (size_t k = 0; k < conv->n_attribute; k++) {
        const Onnx__AttributeProto *a = conv->attribute[k];
        if (a->name && strcmp(a->name, "group") == 0 && a->i > 1 && p[1][0] &&
            p[1][0]->n_dims >= 2 && p[1][0]->dims[0] == a->i && p[1][0]->dims[1] == 1 &&
            !fc_qconv_depthwise(p[1][0], a->i)) {
            onnx_node_label(conv, c->order[pos], label, sizeof label);
            onnx_info("%s: DequantizeLinear -> Conv -> QuantizeLinear left unfused: a "
                      "depthwise convolution (group %lld) that the 8-bit depthwise "
                      "kernel does not take runs faster dequantized",
                      label, (long long)a->i);
            return 0;
        }
    }
    why = onnx_qconv_mismatch(
        c->imp, dq, (const Onnx__TensorProto *const(*)[3])p, qn,
        fc_const_proto(c, qn->n_input > 1 ? onnx_node_input(qn, 1) : ""),
        fc_const_proto(c, qn->n_input > 2 ? onnx_node_input(qn, 2) : ""));
    if (!why && act >= 0)
        why = onnx_qdq_act_idle(c->imp, lo, hi, fc_const_proto(c, onnx_node_input(qn, 1)),
                                fc_const_proto(c, onnx_node_input(qn, 2)));
    if (why) {
        onnx_node_label(conv, c->order[pos], label, sizeof label);
        onnx_info("%s: DequantizeLinear -> Conv -> %sQuantizeLinear left unfused: %s",
                  label, act >= 0 ? "activation -> " : "", why);
        return 0;
    }
    for (size_t k = shared ? 1 : 0; k < conv->n_input; k++)
        m[nb++] = at[k];
    if (shared)
        c->shared_dq[at[0]] = 1;
    m[nb++] = pos;
    if (act >= 0)
        m[nb++] = act;
    m[nb++] = q;
    fc_init(f, FUSE_QCONV, pos, nb, m);
    f->last = q;
    f->output = fc_out(qn);
    f->ins[0] = onnx_node_input(dq[0], 0);
    f->ins[1] = onnx_node_input(dq[0], 1);
    f->ins[2] = onnx_node_input(dq[0], 2);
    f->ins[3] = onnx_node_input(dq[1], 0);
    f->ins[4] = onnx_node_input(dq[1], 1);
    f->ins[5] = onnx_node_input(dq[1], 2);
    f->ins[6] = onnx_node_input(qn, 1);
    f->ins[7] = onnx_node_input(qn, 2);
    f->ins[8] = dq[2] ? onnx_node_input(dq[2], 0) : "";
    f->nb_ins = dq[2] ? 9 : 8;
    return 1;
}

/* Whether constants a and b (names) hold the same one 8-bit value. */
static int fc_same_q8(const fuse_ctx *c, const char *a, const char *b)
{
    const Onnx__TensorProto *pa = fc_const_proto(c, a), *pb = fc_const_proto(c, b);
    onnx_tensor ta, tb;
    int same;
    if (!pa || !pb)
        return 0;
    if (onnx_tensor_load(pa, c->imp->base_dir, a, &ta)) {
        prt_clear_error();
        return 0;
    }
    if (onnx_tensor_load(pb, c->imp->base_dir, b, &tb)) {
        prt_clear_error();
        onnx_tensor_free(&ta);
        return 0;
    }
    same = ta.dtype == tb.dtype && (ta.dtype == PRT_UINT8 || ta.dtype == PRT_INT8) &&
           ta.bytes == 1 && tb.bytes == 1 && memcmp(ta.data, tb.data, 1) == 0;
    onnx_tensor_free(&ta);
    onnx_tensor_free(&tb);
    return same;
}

/* DequantizeLinear -> MaxPool -> QuantizeLinear with one scale and zero
 * point on both sides: MaxPool of the 8-bit x itself, exactly (max
 * commutes with the monotonic dequantization, and Q(DQ(v)) = v for the
 * same scale and zero point), as ONNX Runtime's QDQ transformer drops
 * them. The DQ stays when others read it. */
static int fc_qpool(fuse_ctx *c, int32_t pos, fusion *f)
{
    const Onnx__NodeProto *pool = fc_node(c, pos), *dqn, *qn;
    int32_t dq, q, m[3], nb = 0;
    float s0, s1;
    if (!fc_is(c, pos, "MaxPool") || pool->n_input != 1 || pool->n_output != 1 ||
        !fc_out(pool)[0])
        return 0;
    dq = fc_get(&c->producer, onnx_node_input(pool, 0));
    q = fc_only_reader(c, fc_out(pool));
    if (dq < 0 || !fc_is(c, dq, "DequantizeLinear") || c->taken[dq] ||
        !fc_is(c, q, "QuantizeLinear") || c->taken[q])
        return 0;
    dqn = fc_node(c, dq);
    qn = fc_node(c, q);
    if (dqn->n_input != 3 || qn->n_input != 3 ||
        !fc_scalar(c, onnx_node_input(dqn, 1), &s0) ||
        !fc_scalar(c, onnx_node_input(qn, 1), &s1) || s0 != s1 ||
        !fc_same_q8(c, onnx_node_input(dqn, 2), onnx_node_input(qn, 2)))
        return 0;
    if (fc_only_reader(c, fc_out(dqn)) == pos)
        m[nb++] = dq;
    m[nb++] = pos;
    m[nb++] = q;
    fc_init(f, FUSE_QPOOL, pos, nb, m);
    f->last = q;
    f->output = fc_out(qn);
    f->ins[0] = onnx_node_input(dqn, 0);
    f->nb_ins = 1;
    return 1;
}

/* The 8-bit type (ONNX's code) of a constant of one value, or 0. */
static int32_t fc_q8_scalar(const fuse_ctx *c, const char *name)
{
    const Onnx__TensorProto *t = name[0] ? fc_const_proto(c, name) : NULL;
    if (!t ||
        (t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 &&
         t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT8) ||
        !(t->n_dims == 0 || (t->n_dims == 1 && t->dims[0] == 1)))
        return 0;
    return t->data_type;
}

/* DequantizeLinear node dq with a float32 scale and an 8-bit zero point of
 * type dt, both one constant value. */
static int fc_dq_tensor(const fuse_ctx *c, const Onnx__NodeProto *n, int32_t dt)
{
    float s;
    int32_t sdt = 0;
    return n->n_input == 3 && fc_scalar_dt(c, onnx_node_input(n, 1), &s, &sdt) &&
           sdt == PRT_FLOAT32 && fc_q8_scalar(c, onnx_node_input(n, 2)) == dt;
}

/* DequantizeLinear (a), DequantizeLinear (b) -> Add -> [idle Relu or Clip]
 * -> QuantizeLinear, every scale and zero point one constant value of one
 * 8-bit type: QLinearAdd (qlinear.c), whose definition is these nodes'
 * float operations one for one (each dequantized product, their sum and
 * the quantization rounded apart, quant.h), so the bytes are those of the
 * unfused nodes; ONNX Runtime keeps the residual Add of a QDQ model in 8
 * bits the same way. A DQ that others read stays for them. */
static int fc_qadd(fuse_ctx *c, int32_t pos, fusion *f)
{
    const Onnx__NodeProto *add = fc_node(c, pos), *qn, *dq[2];
    int32_t at[2], q, act = -1, m[6], nb = 0, dt;
    float lo, hi;
    if (!fc_is(c, pos, "Add") || add->n_input != 2 || add->n_output != 1 ||
        !fc_out(add)[0])
        return 0;
    q = fc_only_reader(c, fc_out(add));
    if (fc_qconv_act(c, q, &lo, &hi)) {
        act = q;
        q = fc_only_reader(c, fc_out(fc_node(c, act)));
    }
    if (!fc_is(c, q, "QuantizeLinear") || c->taken[q] || (act >= 0 && c->taken[act]))
        return 0;
    qn = fc_node(c, q);
    dt = qn->n_input == 3 ? fc_q8_scalar(c, onnx_node_input(qn, 2)) : 0;
    if (!dt)
        return 0;
    {
        float s;
        int32_t sdt = 0;
        if (!fc_scalar_dt(c, onnx_node_input(qn, 1), &s, &sdt) || sdt != PRT_FLOAT32)
            return 0;
    }
    for (int k = 0; k < 2; k++) {
        at[k] = fc_get(&c->producer, onnx_node_input(add, (size_t)k));
        if (!fc_is(c, at[k], "DequantizeLinear") || c->taken[at[k]])
            return 0;
        dq[k] = fc_node(c, at[k]);
        if (!fc_dq_tensor(c, dq[k], dt))
            return 0;
    }
    if (act >= 0 &&
        onnx_qdq_act_idle(c->imp, lo, hi, fc_const_proto(c, onnx_node_input(qn, 1)),
                          fc_const_proto(c, onnx_node_input(qn, 2))))
        return 0;
    for (int k = 0; k < 2; k++)
        if (fc_only_reader(c, fc_out(dq[k])) == pos && (k == 0 || at[1] != at[0]))
            m[nb++] = at[k];
    m[nb++] = pos;
    if (act >= 0)
        m[nb++] = act;
    m[nb++] = q;
    fc_init(f, FUSE_QADD, pos, nb, m);
    f->last = q;
    f->output = fc_out(qn);
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 3; j++)
            f->ins[3 * k + j] = onnx_node_input(dq[k], (size_t)j);
    f->ins[6] = onnx_node_input(qn, 1);
    f->ins[7] = onnx_node_input(qn, 2);
    f->nb_ins = 8;
    return 1;
}

/* The Mul or Div at pos by a constant scalar of `x` (its other input): 1
 * and *v (1/c for a Div by c), else 0. */
static int fc_scaled(const fuse_ctx *c, int32_t pos, const char *x, float *v)
{
    const Onnx__NodeProto *n = pos >= 0 ? fc_node(c, pos) : NULL;
    const char *o;
    if (!n || n->n_input != 2)
        return 0;
    if (fc_is(c, pos, "Mul")) {
        o = fc_other(n, x);
        return o && fc_scalar(c, o, v) && isfinite(*v) && *v != 0.0f;
    }
    if (fc_is(c, pos, "Div") && strcmp(onnx_node_input(n, 0), x) == 0 &&
        fc_scalar(c, onnx_node_input(n, 1), v) && isfinite(*v) && *v != 0.0f) {
        *v = 1.0f / *v;
        return 1;
    }
    return 0;
}

/* The perm of the Transpose at pos: its length, perm in p[0..4]; 0 if
 * none or longer. */
int fc_perm(const fuse_ctx *c, int32_t pos, int64_t *p)
{
    const Onnx__AttributeProto *a;
    if (pos < 0 || strcmp(onnx_str(fc_node(c, pos)->op_type), "Transpose") != 0)
        return 0;
    a = onnx_node_attr(fc_node(c, pos), "perm");
    if (!a || a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS || a->n_ints > 5)
        return 0;
    for (size_t k = 0; k < a->n_ints; k++)
        p[k] = a->ints[k];
    return (int)a->n_ints;
}

/* The one axis the Squeeze at pos removes (its axes input, or attribute
 * before opset 13): 1 and *axis, else 0 (none given removes every dim of
 * 1, which may be B or S too). */
static int fc_squeeze_axis(const fuse_ctx *c, int32_t pos, int64_t *axis)
{
    const Onnx__NodeProto *n = fc_node(c, pos);
    const Onnx__AttributeProto *a = onnx_node_attr(n, "axes");
    if (n->n_input >= 2)
        return fc_ints(c, onnx_node_input(n, 1), axis, 1) == 1;
    if (!a || a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS || a->n_ints != 1)
        return 0;
    *axis = a->ints[0];
    return 1;
}

/* `name` is known to have rank 4: made by a Transpose of 4 dims, by a
 * Gather of one index (a scalar constant) or a Squeeze of one axis of a
 * Split from a Transpose of 5, or by a Mul of such a value by a scalar
 * constant. */
static int fc_rank4(const fuse_ctx *c, const char *name)
{
    int64_t p[5];
    for (int hops = 0; hops < 4; hops++) {
        int32_t pos = fc_get(&c->producer, name);
        const Onnx__NodeProto *n = pos >= 0 ? fc_node(c, pos) : NULL;
        const Onnx__TensorProto *ix;
        float v;
        if (!n)
            return 0;
        if (fc_perm(c, pos, p) == 4)
            return 1;
        if (strcmp(onnx_str(n->op_type), "Gather") == 0 && n->n_input == 2) {
            ix = fc_const_proto(c, onnx_node_input(n, 1));
            return ix && ix->n_dims == 0 &&
                   fc_perm(c, fc_get(&c->producer, onnx_node_input(n, 0)), p) == 5;
        }
        if (strcmp(onnx_str(n->op_type), "Squeeze") == 0 && fc_squeeze_axis(c, pos, p)) {
            int32_t sp = fc_get(&c->producer, onnx_node_input(n, 0));
            return sp >= 0 && strcmp(onnx_str(fc_node(c, sp)->op_type), "Split") == 0 &&
                   fc_node(c, sp)->n_input >= 1 &&
                   fc_perm(c, fc_get(&c->producer, onnx_node_input(fc_node(c, sp), 0)),
                           p) == 5;
        }
        if (strcmp(onnx_str(n->op_type), "Mul") != 0 || n->n_input != 2)
            return 0;
        name = fc_scalar(c, onnx_node_input(n, 1), &v)   ? onnx_node_input(n, 0)
               : fc_scalar(c, onnx_node_input(n, 0), &v) ? onnx_node_input(n, 1)
                                                         : "";
    }
    return 0;
}

/* `name`, read by the node at pos alone, made by a Mul of x by a scalar
 * constant: x, the constant multiplied into *scale and the Mul added to
 * m[]; else name. */
static const char *fc_unscale(const fuse_ctx *c, int32_t pos, const char *name,
                              float *scale, int32_t *m, int32_t *nb)
{
    int32_t at = fc_get(&c->producer, name);
    float s;
    if (fc_only_reader(c, name) != pos || at < 0 || fc_node(c, at)->n_input != 2 ||
        !fc_is(c, at, "Mul") || !fc_scaled(c, at, onnx_node_input(fc_node(c, at), 0), &s))
        return name;
    *scale *= s;
    m[(*nb)++] = at;
    return onnx_node_input(fc_node(c, at), 0);
}

/* Q (or K, or V) as Transpose(perm 0 2 1 3) — or (0 2 3 1) for K^T when
 * kt — of Reshape(x, [x's dim 0, x's dim 1, H, D]) of a rank-3 x, each
 * read once: x, H and D, and the two nodes in m[]; NULL when not. */
static const char *fc_head_split(const fuse_ctx *c, const char *name, int kt, int64_t *h,
                                 int64_t *d, int32_t *m)
{
    int32_t t = fc_get(&c->producer, name), r;
    int64_t p[5];
    const Onnx__NodeProto *rn;
    const Onnx__AttributeProto *az;
    fc_entry e[4];
    fc_fact x;
    int zc;
    if (fc_get(&c->uses, name) != 1 || !fc_is(c, t, "Transpose") ||
        fc_perm(c, t, p) != 4 || p[0] != 0 || p[1] != 2 || p[2] != (kt ? 3 : 1) ||
        p[3] != (kt ? 1 : 3))
        return NULL;
    r = fc_get(&c->producer, onnx_node_input(fc_node(c, t), 0));
    if (!fc_is(c, r, "Reshape") || fc_only_reader(c, fc_out(fc_node(c, r))) != t)
        return NULL;
    rn = fc_node(c, r);
    az = onnx_node_attr(rn, "allowzero");
    zc = !az || az->i == 0; /* the dynamo export writes allowzero 1 */
    if (rn->n_input != 2 || !fc_fact_of(c, onnx_node_input(rn, 0), &x) || x.rank != 3 ||
        x.last <= 0 || fc_shape_entries(c, onnx_node_input(rn, 1), e, 4) != 4 ||
        !fc_entry_keeps(c, &e[0], 0, &x, zc) || !fc_entry_keeps(c, &e[1], 1, &x, zc) ||
        e[3].kind != 1 || e[3].v <= 0 || x.last % e[3].v != 0 || e[2].kind != 1 ||
        (e[2].v != -1 && e[2].v * e[3].v != x.last))
        return NULL;
    *d = e[3].v;
    *h = x.last / e[3].v;
    m[0] = r;
    m[1] = t;
    return onnx_node_input(rn, 0);
}

/* Axis a of a rank-5 value is `want` (negative axes count from the end). */
static int fc_axis5(int64_t a, int64_t want)
{
    return a == want || a == want - 5;
}

/* One of Q, K (K^T when kt) and V cut from one QKV projection, as PyTorch
 * exports qkv.reshape(B, S, 3, H, D) followed by unbind or indexing:
 *   Gather(axis 0, i), or Squeeze(0) of output i of a Split (axis 0), of
 *     Transpose(2 0 3 1 4) (timm's permute to [3, B, H, S, D]);
 *   Transpose(0 2 1 3) (K^T: 0 2 3 1) of Gather(axis 2, i), or of
 *     Squeeze(2) of output i of a Split (axis 2), of the [B, S, 3, H, D]
 *     Reshape itself.
 * Each value read once by the next node: 1, with i in *part, the axis cut
 * in *axis (0 or 2), the node cut (the Gather's input's maker, or the
 * Split) in *up, and this part's own nodes in m[] (*nb); else 0. */
static int fc_qkv_part(const fuse_ctx *c, const char *name, int kt, int32_t *part,
                       int64_t *axis, int32_t *up, int32_t *m, int32_t *nb)
{
    int32_t at = fc_get(&c->producer, name);
    const Onnx__NodeProto *n;
    int64_t p[5], ix = 0;
    *nb = 0;
    *axis = 0;
    if (fc_get(&c->uses, name) != 1)
        return 0;
    if (fc_is(c, at, "Transpose")) {
        if (fc_perm(c, at, p) != 4 || p[0] != 0 || p[1] != 2 || p[2] != (kt ? 3 : 1) ||
            p[3] != (kt ? 1 : 3))
            return 0;
        m[(*nb)++] = at;
        name = onnx_node_input(fc_node(c, at), 0);
        if (fc_get(&c->uses, name) != 1)
            return 0;
        at = fc_get(&c->producer, name);
        *axis = 2;
    } else if (kt) {
        return 0; /* one Transpose of 5 makes Q, K and V alike: K, not K^T */
    }
    n = at >= 0 ? fc_node(c, at) : NULL;
    if (fc_is(c, at, "Gather") && n->n_input == 2) {
        const Onnx__AttributeProto *a = onnx_node_attr(n, "axis");
        const Onnx__TensorProto *t = fc_const_proto(c, onnx_node_input(n, 1));
        /* A scalar index removes the axis; [i] would keep it (rank 5). */
        if (!(a ? fc_axis5(a->i, *axis) : *axis == 0) || !t || t->n_dims != 0 ||
            fc_ints(c, onnx_node_input(n, 1), &ix, 1) != 1 || ix < -3 || ix > 2)
            return 0;
        *part = (int32_t)(ix < 0 ? ix + 3 : ix);
        *up = fc_get(&c->producer, onnx_node_input(n, 0));
    } else if (fc_is(c, at, "Squeeze") && n->n_input >= 1 &&
               fc_squeeze_axis(c, at, &ix) && fc_axis5(ix, *axis)) {
        const char *in = onnx_node_input(n, 0);
        int32_t s = fc_get(&c->producer, in);
        if (!fc_is(c, s, "Split") || fc_node(c, s)->n_output != 3 ||
            fc_get(&c->uses, in) != 1)
            return 0;
        *part = -1;
        for (int32_t k = 0; k < 3; k++)
            if (strcmp(onnx_str(fc_node(c, s)->output[k]), in) == 0)
                *part = k;
        *up = s;
    } else {
        return 0;
    }
    m[(*nb)++] = at;
    return *part >= 0 && *up >= 0;
}

/* The Split at pos cuts its input's `axis` (of 3) into thirds: 3 outputs,
 * and the sizes it is given, if any, are 1 each. */
static int fc_split_thirds(const fuse_ctx *c, int32_t pos, int64_t axis)
{
    const Onnx__NodeProto *n = fc_node(c, pos);
    const Onnx__AttributeProto *a = onnx_node_attr(n, "axis");
    const Onnx__AttributeProto *sa = onnx_node_attr(n, "split");
    const Onnx__AttributeProto *no = onnx_node_attr(n, "num_outputs");
    int64_t sz[3] = {1, 1, 1};
    if (n->n_output != 3 || !(a ? fc_axis5(a->i, axis) : axis == 0) || (no && no->i != 3))
        return 0;
    if (n->n_input >= 2 && onnx_node_input(n, 1)[0] &&
        fc_ints(c, onnx_node_input(n, 1), sz, 3) != 3)
        return 0;
    if (sa &&
        (sa->n_ints != 3 || sa->ints[0] != 1 || sa->ints[1] != 1 || sa->ints[2] != 1))
        return 0;
    return sz[0] == 1 && sz[1] == 1 && sz[2] == 1;
}

/* The node at `at` joins m[]: the maker of its input 0 when the node
 * alone reads that, else -1. */
static int32_t fc_qkv_down(const fuse_ctx *c, int32_t at, int32_t *m, int32_t *nb)
{
    const char *name = onnx_node_input(fc_node(c, at), 0);
    m[(*nb)++] = at;
    return fc_get(&c->uses, name) == 1 ? fc_get(&c->producer, name) : -1;
}

/* Q, K (K^T when kt) and V the three parts of one QKV value x3 [B, S, 3 H
 * D] (fc_qkv_part says how they are cut; the Reshape to [x3's dim 0, x3's
 * dim 1, 3, H, D] and a Transpose of 5 or a Split between are read by the
 * parts alone): x3, H and D, the part each reads in parts[], the Reshape's
 * position in *r and every node in m[] (*nb); else NULL with *why set. */
static const char *fc_qkv_split(const fuse_ctx *c, const char *const *qkv, int kt,
                                int64_t *h, int64_t *d, int32_t *parts, int32_t *r,
                                int32_t *m, int32_t *nb, const char **why)
{
    int32_t up[3], got, at, seen = 0;
    int64_t axis[3], p[5];
    const Onnx__NodeProto *rn;
    const Onnx__AttributeProto *az;
    const char *name;
    fc_entry e[5];
    fc_fact x;
    int zc;
    *nb = 0;
    *why = "K and V are not the other parts of that value (Gathers, or a Split "
           "with Squeezes, of [B, S, 3, H, D] or its Transpose to [3, B, H, S, D])";
    for (int i = 0; i < 3; i++) {
        if (!fc_qkv_part(c, qkv[i], i == 1 && kt, &parts[i], &axis[i], &up[i], m + *nb,
                         &got))
            return NULL;
        *nb += got;
        seen |= 1 << parts[i];
    }
    if (up[0] != up[1] || up[0] != up[2] || axis[0] != axis[1] || axis[0] != axis[2] ||
        seen != 7)
        return NULL;
    at = up[0];
    name = fc_out(fc_node(c, at));
    if (fc_is(c, at, "Split")) {
        if (!fc_split_thirds(c, at, axis[0]))
            return NULL;
        at = fc_qkv_down(c, at, m, nb);
    } else if (fc_get(&c->uses, name) != 3) {
        *why = "the QKV value is read by more than its three Gathers";
        return NULL;
    }
    if (axis[0] == 0) {
        if (!fc_is(c, at, "Transpose") || fc_perm(c, at, p) != 5 || p[0] != 2 ||
            p[1] != 0 || p[2] != 3 || p[3] != 1 || p[4] != 4)
            return NULL;
        at = fc_qkv_down(c, at, m, nb);
    }
    if (!fc_is(c, at, "Reshape") || fc_node(c, at)->n_input != 2)
        return NULL;
    rn = fc_node(c, at);
    az = onnx_node_attr(rn, "allowzero");
    zc = !az || az->i == 0;
    *why = "the QKV Reshape's B and S are not proved the projection's dims 0 and 1, "
           "or its 3, H and D not numbers whose product is its last dim";
    if (!fc_fact_of(c, onnx_node_input(rn, 0), &x) || x.rank != 3 || x.last <= 0 ||
        fc_shape_entries(c, onnx_node_input(rn, 1), e, 5) != 5 ||
        !fc_entry_keeps(c, &e[0], 0, &x, zc) || !fc_entry_keeps(c, &e[1], 1, &x, zc) ||
        e[2].kind != 1 || e[2].v != 3 || e[4].kind != 1 || e[4].v <= 0 ||
        x.last % (3 * e[4].v) != 0 || e[3].kind != 1 ||
        (e[3].v != -1 && e[3].v * 3 * e[4].v != x.last))
        return NULL;
    *d = e[4].v;
    *h = x.last / (3 * e[4].v);
    *r = at;
    m[(*nb)++] = at;
    return onnx_node_input(rn, 0);
}

/* The one Reshape reading the merge Transpose at t when every other node
 * reading its output is a Shape (PyTorch's x.size() for the view after
 * it) and it is no graph output: its position, *shapes whether there are
 * Shapes; else -1. */
static int32_t fc_merge_reshape(const fuse_ctx *c, int32_t t, int *shapes)
{
    const char *ot = fc_out(fc_node(c, t));
    int32_t r = -1, seen = 0, uses = fc_get(&c->uses, ot);
    *shapes = 0;
    for (int32_t i = t + 1; i < c->n && seen < uses; i++) {
        const Onnx__NodeProto *n = fc_node(c, i);
        for (size_t k = 0; k < n->n_input; k++) {
            if (strcmp(onnx_node_input(n, k), ot) != 0)
                continue;
            seen++;
            if (fc_is(c, i, "Shape"))
                *shapes = 1;
            else if (r < 0 && k == 0 && fc_is(c, i, "Reshape"))
                r = i;
            else
                return -1;
        }
    }
    return seen == uses ? r : -1; /* fewer: a graph output reads it too */
}

/* `name` is no value of the graph: no node makes or reads it, and it is
 * no constant and no graph input. */
static int fc_name_unused(const fuse_ctx *c, const char *name)
{
    const Onnx__GraphProto *g = c->imp->graph;
    if (!name[0] || fc_get(&c->producer, name) >= 0 || fc_get(&c->uses, name) >= 0 ||
        fc_const_proto(c, name))
        return 0;
    for (size_t k = 0; k < g->n_input; k++)
        if (strcmp(onnx_str(g->input[k]->name), name) == 0)
            return 0;
    return 1;
}

/* A name for the constant shape of the view that stands in for the merge
 * Transpose at t, or for the layer's output that a merge Reshape to rank 2
 * reads (fc_head_merge): the node's name, which lives as long as the
 * model, when it names no value of the graph and no other node; else
 * NULL. */
static const char *fc_view_name(const fuse_ctx *c, int32_t t)
{
    const char *name = onnx_str(fc_node(c, t)->name);
    if (!fc_name_unused(c, name))
        return NULL;
    /* Node names need not be unique; a second view of the name would fail
     * the import. */
    for (int32_t i = 0; i < c->n; i++)
        if (i != t && strcmp(onnx_str(fc_node(c, i)->name), name) == 0)
            return NULL;
    return name;
}

/* The suffixes of the names of the Split's outputs that Q, K and V read
 * when one QKV value makes them (the importer's own names,
 * onnx_value_name: no value of the graph holds these thirds). */
static const char *const fc_qkv_suffix[3] = {":q", ":k", ":v"};

/* The names fc_qkv_suffix gives the thirds of qkv are free. */
static int fc_qkv_names_free(const fuse_ctx *c, const char *qkv)
{
    char name[1024];
    for (int k = 0; k < 3; k++) {
        int n = snprintf(name, sizeof name, "%s%s", qkv, fc_qkv_suffix[k]);
        if (n < 0 || (size_t)n >= sizeof name || !fc_name_unused(c, name))
            return 0;
    }
    return 1;
}

/* Entry k (0 or 1) of the merge Reshape of the Transpose at t is Q's
 * (x's) dim k: fc_entry_keeps, or the Transpose's own size k. */
static int fc_merge_keeps(const fuse_ctx *c, const fc_entry *e, int64_t k,
                          const fc_fact *x, int32_t t)
{
    return fc_entry_keeps(c, e, k, x, 1) ||
           (e->kind == 2 && e->v == k && strcmp(e->t, fc_out(fc_node(c, t))) == 0);
}

/* The MatMul at mm2 writing [B, h, S, dv], read by Transpose(0 2 1 3)
 * alone, read by Reshape(., [B, S, h dv]) and else only by Shape nodes (q
 * is Q's rank-3 input, whose dims B and S are): the Reshape's output, the
 * two nodes in m[], and *view whether Shape nodes read the Transpose (the
 * fused layer then gives them a view of its output with the Transpose's
 * dims, fc_import_view). A Reshape to rank 2 or 1 alone (the dynamo
 * export's [-1, h dv]) reads the same elements in the same order from the
 * fused [B, S, h dv] output, and its 0 entries copy dims 0 and 1, which
 * the two forms share: it stays, reading the layer's output, which takes
 * the Transpose node's name (*kept is its position; the name is
 * returned). Else NULL. */
static const char *fc_head_merge(const fuse_ctx *c, int32_t mm2, const char *q, int64_t h,
                                 int64_t dv, int32_t *m, int *view, int32_t *kept)
{
    int32_t t = fc_only_reader(c, fc_out(fc_node(c, mm2))), r;
    int64_t p[5];
    const Onnx__AttributeProto *az;
    fc_entry e[3];
    fc_fact x;
    if (!fc_is(c, t, "Transpose") || fc_perm(c, t, p) != 4 || p[0] != 0 || p[1] != 2 ||
        p[2] != 1 || p[3] != 3)
        return NULL;
    *kept = -1;
    r = fc_merge_reshape(c, t, view);
    if (*view && !fc_view_name(c, t))
        return NULL;
    if (!*view && fc_is(c, r, "Reshape") && fc_node(c, r)->n_input == 2 &&
        fc_out(fc_node(c, r))[0] &&
        fc_fact_of(c, onnx_node_input(fc_node(c, r), 1), &x) && x.rank == 1 &&
        (x.last == 1 || x.last == 2)) {
        if (!fc_view_name(c, t))
            return NULL;
        m[0] = t;
        m[1] = r;
        *kept = r;
        return fc_view_name(c, t);
    }
    if (!fc_is(c, r, "Reshape") || fc_node(c, r)->n_input != 2 ||
        strcmp(onnx_node_input(fc_node(c, r), 0), fc_out(fc_node(c, t))) != 0 ||
        !fc_out(fc_node(c, r))[0] || !fc_fact_of(c, q, &x))
        return NULL;
    az = onnx_node_attr(fc_node(c, r), "allowzero");
    /* The transposed value's dims 0 and 1 are Q's (B, Sq): a 0 copies
     * them, and the sizes of a value of Q's lead are them too, as are the
     * transposed value's own sizes (GPT-2's x.size(k) of it), which the
     * view of the fused output keeps (fc_import_view). */
    if ((az && az->i != 0) ||
        fc_shape_entries(c, onnx_node_input(fc_node(c, r), 1), e, 3) != 3 ||
        !fc_merge_keeps(c, &e[0], 0, &x, t) || !fc_merge_keeps(c, &e[1], 1, &x, t) ||
        e[2].kind != 1 || (e[2].v != -1 && (e[2].v % h != 0 || e[2].v / h != dv)))
        return NULL;
    m[0] = t;
    m[1] = r;
    return fc_out(fc_node(c, r));
}

/* An info line: the attention pattern from the MatMul at pos is left. */
static int fc_attention_left(const fuse_ctx *c, int32_t pos, const char *why)
{
    char label[512];
    onnx_node_label(fc_node(c, pos), c->order[pos], label, sizeof label);
    onnx_info("%s: MatMul -> Softmax -> MatMul left unfused (no Attention): %s", label,
              why);
    return 0;
}

/* The MatMul at pos opening self-attention (onnx_fuse.c's header says
 * which nodes): 1 and *f when the pattern makes one Attention layer. */
static int fc_attention(fuse_ctx *c, int32_t pos, fusion *f)
{
    const Onnx__NodeProto *mm = fc_node(c, pos), *n;
    const char *q, *kt, *v, *mask = "", *y;
    int32_t m[24], nb = 0, at, sm, mm2;
    int64_t p[5];
    float scale = 1.0f, s;
    int empty_zero = 0, k_transposed = 1;
    int32_t heads[2] = {0, 0}; /* rank-3 Q, K, V: q_num_heads, kv_num_heads */
    int32_t view_at = -1;      /* the merge Transpose that Shape nodes read */
    int32_t kept_at = -1;      /* the merge Reshape to rank 2 that stays */
    int64_t view_dims[2] = {0, 0};
    const char *qkv = NULL; /* one QKV value cut into Q, K and V (fc_qkv_split) */
    int32_t qkv_at = -1, parts[3] = {0, 1, 2};
    if (!fc_is(c, pos, "MatMul") || mm->n_input != 2 || !fc_out(mm)[0])
        return 0;
    /* Forwards first, to the Softmax and the second MatMul: the pattern is
     * there before anything is checked for its sake. */
    y = fc_out(mm);
    at = fc_only_reader(c, y);
    if (fc_scaled(c, at, y, &s)) {
        scale *= s;
        m[nb++] = at;
        y = fc_out(fc_node(c, at));
        at = fc_only_reader(c, y);
    }
    if (fc_is(c, at, "Add") && fc_other(fc_node(c, at), y)) {
        int32_t w;
        float zero = 1.0f, ninf = 0.0f;
        mask = fc_other(fc_node(c, at), y);
        w = fc_get(&c->producer, mask);
        /* Where(keep, 0, -inf), this layer's own (BERT makes one per
         * layer from a shared boolean mask): the boolean itself, which the
         * layer reads as "true: attend" — the same scores, a quarter of
         * the mask's bytes, and no layer of its own. Another fill than
         * -inf (GPT-2's -FLT_MAX) is not the same and stays an addition. */
        if (fc_is(c, w, "Where") && fc_node(c, w)->n_input == 3 &&
            fc_only_reader(c, mask) == at &&
            fc_scalar(c, onnx_node_input(fc_node(c, w), 1), &zero) && zero == 0.0f &&
            fc_scalar(c, onnx_node_input(fc_node(c, w), 2), &ninf) && isinf(ninf) &&
            ninf < 0.0f) {
            m[nb++] = w;
            mask = onnx_node_input(fc_node(c, w), 0);
        }
        m[nb++] = at;
        y = fc_out(fc_node(c, at));
        at = fc_only_reader(c, y);
    }
    if (!fc_is(c, at, "Softmax") || !y[0])
        return 0;
    sm = at;
    n = fc_node(c, sm);
    {
        const Onnx__AttributeProto *ax = onnx_node_attr(n, "axis");
        if (c->imp->opset < 13 || (ax && ax->i != -1 && ax->i != 3))
            return 0;
    }
    m[nb++] = sm;
    y = fc_out(n);
    at = fc_only_reader(c, y);
    if (at < 0 && fc_get(&c->uses, y) == 2) {
        /* Where(IsNaN(p), 0, p): PyTorch's guard for fully masked rows. */
        int32_t isn = -1, wh = -1;
        float zero = 1.0f;
        for (int32_t i = sm + 1; i < c->n && (isn < 0 || wh < 0); i++) {
            const Onnx__NodeProto *r = fc_node(c, i);
            for (size_t k = 0; k < r->n_input; k++)
                if (strcmp(onnx_node_input(r, k), y) == 0)
                    *(fc_is(c, i, "IsNaN") ? &isn : &wh) = i;
        }
        if (isn < 0 || !fc_is(c, wh, "Where") || fc_node(c, wh)->n_input != 3 ||
            fc_only_reader(c, fc_out(fc_node(c, isn))) != wh ||
            strcmp(onnx_node_input(fc_node(c, wh), 0), fc_out(fc_node(c, isn))) != 0 ||
            !fc_scalar(c, onnx_node_input(fc_node(c, wh), 1), &zero) || zero != 0.0f ||
            strcmp(onnx_node_input(fc_node(c, wh), 2), y) != 0)
            return 0;
        m[nb++] = isn;
        m[nb++] = wh;
        empty_zero = 1;
        y = fc_out(fc_node(c, wh));
        at = fc_only_reader(c, y);
    } else if (fc_is(c, at, "Cast")) {
        const Onnx__AttributeProto *to = onnx_node_attr(fc_node(c, at), "to");
        if (!to || to->i != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
            return 0;
        m[nb++] = at;
        y = fc_out(fc_node(c, at));
        at = fc_only_reader(c, y);
    }
    if (!fc_is(c, at, "MatMul") || fc_node(c, at)->n_input != 2 ||
        strcmp(onnx_node_input(fc_node(c, at), 0), y) != 0 || !fc_out(fc_node(c, at))[0])
        return 0;
    mm2 = at;
    v = onnx_node_input(fc_node(c, mm2), 1);
    /* Backwards from the first MatMul: Q's and K^T's scales, K^T's
     * Transpose. */
    q = onnx_node_input(mm, 0);
    kt = onnx_node_input(mm, 1);
    q = fc_unscale(c, pos, q, &scale, m, &nb);
    kt = fc_unscale(c, pos, kt, &scale, m, &nb);
    at = fc_get(&c->producer, kt);
    if (fc_perm(c, at, p) == 4 && p[0] == 0 && p[1] == 1 && p[2] == 3 && p[3] == 2 &&
        fc_is(c, at, "Transpose") && fc_get(&c->uses, kt) == 1) {
        m[nb++] = at;
        kt = onnx_node_input(fc_node(c, at), 0);
        k_transposed = 0;
    }
    if (!(scale > 0.0f) || !isfinite(scale))
        return fc_attention_left(c, pos, "the scale is not a positive number");
    if (!fc_rank4(c, q) || !fc_rank4(c, v) || !(k_transposed ? fc_rank4(c, kt) : 1))
        return fc_attention_left(c, pos,
                                 "Q, K and V are not known to have rank 4 (a Transpose "
                                 "of 4 dims, or a Gather from one of 5, makes them)");
    m[nb++] = pos;
    m[nb++] = mm2;
    {
        /* The heads split and merged around the layer (Reshape and
         * Transpose each side) go when every one matches: the layer reads
         * and writes the rank-3 [B, S, H D] values in place, with the head
         * counts the Reshapes' constants give. */
        int64_t hq = 0, dq = 0, hk = 0, dk = 0, hv = 0, dv = 0;
        int32_t hm[8], qm[12], nq = 0;
        int view = 0;
        int32_t kept = -1;
        const char *qkv_why = NULL;
        const char *q3 = fc_head_split(c, q, 0, &hq, &dq, hm),
                   *k3 = q3 ? fc_head_split(c, kt, k_transposed, &hk, &dk, hm + 2) : NULL,
                   *v3 = k3 ? fc_head_split(c, v, 0, &hv, &dv, hm + 4) : NULL, *y3 = NULL;
        if (v3 && dq == dk && hk == hv && hq % hk == 0 && hq <= INT32_MAX)
            y3 = fc_head_merge(c, mm2, q3, hq, dv, hm + 6, &view, &kept);
        if (!q3) {
            /* One projection made Q, K and V (ViT): a Split of its rank-3
             * output into thirds feeds the layer. */
            const char *const names[3] = {q, kt, v};
            qkv = fc_qkv_split(c, names, k_transposed, &hq, &dq, parts, &qkv_at, qm, &nq,
                               &qkv_why);
            if (qkv && !fc_qkv_names_free(c, qkv)) {
                qkv_why =
                    "the names of its Split's outputs (the QKV value's name and :q, "
                    ":k, :v) are taken";
                qkv = NULL;
            }
            hk = hv = hq;
            dk = dv = dq;
            if (qkv && hq <= INT32_MAX)
                y3 = fc_head_merge(c, mm2, qkv, hq, dv, hm + 6, &view, &kept);
        }
        if (y3) {
            if (qkv) {
                char label[512];
                onnx_node_label(mm, c->order[pos], label, sizeof label);
                onnx_info(
                    "%s: self-attention fused into one rank-3 Attention (%lld heads "
                    "of %lld) reading the thirds of one Split of the QKV value '%s'",
                    label, (long long)hq, (long long)dq, qkv);
                for (int k = 0; k < nq; k++)
                    m[nb++] = qm[k];
                m[nb++] = hm[6];
                m[nb++] = hm[7];
                q = kt = v = qkv;
            } else {
                for (int k = 0; k < 8; k++)
                    m[nb++] = hm[k];
                q = q3;
                kt = k3;
                v = v3;
            }
            k_transposed = 0;
            heads[0] = (int32_t)hq;
            heads[1] = (int32_t)hk;
            /* With Shape nodes reading the merge Transpose, the layer and
             * its view come where the Transpose was: those nodes may come
             * before the Reshape. */
            view_at = view ? hm[6] : -1;
            view_dims[0] = hq;
            view_dims[1] = dv;
            y = kept >= 0 ? y3 : fc_out(fc_node(c, hm[7]));
            kept_at = kept;
            mm2 = view ? hm[6] : hm[7];
        } else {
            char label[512];
            onnx_node_label(mm, c->order[pos], label, sizeof label);
            if (qkv || (qkv_why && nq > 0))
                onnx_info(
                    "%s: Attention reads Q, K and V as [B, H, S, D]: Q is cut from "
                    "one QKV projection's value (ViT's form), but %s",
                    label,
                    qkv ? "the merge after the second MatMul (Transpose, then "
                          "Reshape to [B, S, H Dv] or to rank 1 or 2) does not match"
                        : qkv_why);
            else
                onnx_info(
                    "%s: Attention reads Q, K and V as [B, H, S, D]: their head split "
                    "(Reshape of a rank-3 value to [B, S, H, D] with H and D known, then "
                    "Transpose, each read once; or Gathers or a Split of one QKV value "
                    "[B, S, 3, H, D] or [3, B, H, S, D]) or the merge after the second "
                    "MatMul (Transpose, read besides by Shape nodes alone, then Reshape "
                    "to [B, S, H Dv], or Transpose read once, then Reshape to rank 1 or "
                    "2) does not match",
                    label);
        }
    }
    if (!heads[0])
        y = fc_out(fc_node(c, mm2));
    fc_init(f, FUSE_ATTENTION, pos, nb, m);
    f->view = view_at;
    f->kept = kept_at;
    f->view_dims[0] = view_dims[0];
    f->view_dims[1] = view_dims[1];
    f->flags[2] = heads[0];
    f->flags[3] = heads[1];
    f->last = mm2;
    f->output = y;
    f->params[0] = scale;
    f->flags[0] = k_transposed;
    f->flags[1] = empty_zero;
    f->ins[0] = q;
    f->ins[1] = kt;
    f->ins[2] = v;
    f->ins[3] = mask;
    f->nb_ins = mask[0] ? 4 : 3;
    f->qkv = heads[0] ? qkv : NULL;
    f->qkv_at = qkv_at;
    for (int k = 0; k < 3; k++)
        f->parts[k] = parts[k];
    return 1;
}

/* The MatMul at pos between DQs and a Q: 1 and *f when they make a
 * QLinearMatMul. */
static int fc_qmatmul(fuse_ctx *c, int32_t pos, fusion *f)
{
    const Onnx__NodeProto *mm = fc_node(c, pos), *qn, *dq[3] = {NULL, NULL, NULL};
    const Onnx__TensorProto *p[3][3];
    const char *y = fc_out(mm), *why;
    int32_t q, at[3] = {-1, -1, -1};
    int shared;
    char label[512];
    if (!fc_is(c, pos, "MatMul") || mm->n_input != 2 || !y[0])
        return 0;
    q = fc_only_reader(c, y);
    if (!fc_is(c, q, "QuantizeLinear") || !fc_qdq_inputs(c, pos, at, dq, p, &shared))
        return 0;
    qn = fc_node(c, q);
    why = onnx_qmatmul_mismatch(
        dq, (const Onnx__TensorProto *const(*)[3])p, qn,
        fc_const_proto(c, qn->n_input > 1 ? onnx_node_input(qn, 1) : ""),
        fc_const_proto(c, qn->n_input > 2 ? onnx_node_input(qn, 2) : ""));
    if (why) {
        onnx_node_label(mm, c->order[pos], label, sizeof label);
        onnx_info("%s: DequantizeLinear -> MatMul -> QuantizeLinear left unfused: %s",
                  label, why);
        return 0;
    }
    fc_init(f, FUSE_QMATMUL, pos, shared ? 3 : 4,
            shared ? (const int32_t[]){at[1], pos, q}
                   : (const int32_t[]){at[0], at[1], pos, q});
    if (shared)
        c->shared_dq[at[0]] = 1;
    f->last = q;
    f->output = fc_out(qn);
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 3; j++)
            f->ins[k * 3 + j] = onnx_node_input(dq[k], (size_t)j);
    f->ins[6] = onnx_node_input(qn, 1);
    f->ins[7] = onnx_node_input(qn, 2);
    f->nb_ins = 8;
    return 1;
}

/* The MatMulInteger at pos and the chain onnx_dynq_match folds. */
static int fc_dynq(fuse_ctx *c, int32_t pos, fusion *f)
{
    onnx_dynq d;
    if (!onnx_dynq_match(c, pos, &d))
        return 0;
    fc_init(f, FUSE_DYNQ, pos, d.nb_members, d.members);
    f->last = d.last;
    f->output = d.output;
    f->flags[0] = d.dynamic;
    f->flags[1] = d.bias != NULL;
    for (int32_t k = 0; k < d.nb_ins; k++)
        f->ins[k] = d.ins[k];
    f->nb_ins = d.nb_ins;
    /* a Relu or GELU after it joins, as after a float MatMul (its output
     * is float32: the Cast's) */
    (void)fc_act_after(c, d.output, 1, f);
    return 1;
}

/* A DQ of x that QDQ fusions read past (fc_qdq_inputs) goes too when
 * every node reading it went into one and it is no graph output: nothing
 * would read its layer. */
static void fc_drop_idle_dqs(fuse_ctx *c, onnx_fusions *p)
{
    for (int32_t i = 0; i < c->n; i++) {
        const char *y = fc_out(fc_node(c, i));
        int32_t readers = 0, fused = 0;
        if (!c->shared_dq[i] || p->role[i] != -1 || !y[0])
            continue;
        for (int32_t j = 0; j < c->n; j++) {
            const Onnx__NodeProto *n = fc_node(c, j);
            for (size_t k = 0; k < n->n_input; k++)
                if (strcmp(onnx_str(n->input[k]), y) == 0) {
                    readers++;
                    fused += p->role[j] != -1;
                }
        }
        if (readers > 0 && fused == readers && fc_get(&c->uses, y) == readers) {
            p->role[i] = -2;
            c->taken[i] = 1;
        }
    }
}

/* ---- residual + LayerNormalization ---------------------------------- */

/* The LayerNormalization at pos over the last axis (stash_type float32,
 * one output) of an Add's result: 1 and *f when they make one
 * SkipLayerNormalization. The Add's result may be read elsewhere (pre-LN
 * GPT-2 adds it to the next block's output): the fused layer then writes
 * it too, added where every input of the pair is there (the Add's
 * position, or a later producer of Scale or B) and before its first other
 * reader. */
static int fc_skip_ln(fuse_ctx *c, int32_t pos, fusion *f)
{
    const Onnx__NodeProto *ln = fc_node(c, pos), *add;
    const Onnx__AttributeProto *ax = onnx_node_attr(ln, "axis"),
                               *stash = onnx_node_attr(ln, "stash_type");
    const char *y;
    int32_t a, at, uses;
    if (!fc_is(c, pos, "LayerNormalization") || ln->n_input < 2 || ln->n_input > 3 ||
        !fc_out(ln)[0] ||
        (ax && (ax->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT || ax->i != -1)) ||
        (stash &&
         (stash->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT || stash->i != 1)))
        return 0;
    y = onnx_node_input(ln, 0);
    a = fc_get(&c->producer, y);
    if (!fc_is(c, a, "Add") || fc_node(c, a)->n_input != 2 || !fc_out(fc_node(c, a))[0])
        return 0;
    add = fc_node(c, a);
    at = a;
    for (size_t k = 1; k < ln->n_input; k++) {
        int32_t p = fc_get(&c->producer, onnx_node_input(ln, k));
        at = p > at ? p : at;
    }
    uses = fc_get(&c->uses, y);
    for (size_t k = 1; k < ln->n_input; k++) /* LN(y, y): the sum read again */
        uses -= strcmp(onnx_node_input(ln, k), y) == 0;
    if (uses > 1) {
        /* Every other reader after the fused layer's place. */
        for (int32_t i = 0; i <= at; i++) {
            const Onnx__NodeProto *n = fc_node(c, i);
            for (size_t k = 0; k < n->n_input; k++)
                if (i != pos && strcmp(onnx_node_input(n, k), y) == 0)
                    return 0;
        }
    } else {
        at = pos;
    }
    fc_init(f, FUSE_SKIP_LN, a, 2, (const int32_t[]){a, pos});
    if (!fc_attr_f(ln, "epsilon", 1e-5f, &f->epsilon))
        return 0;
    f->last = at;
    f->output = fc_out(ln);
    f->sum = uses > 1 ? y : NULL;
    f->ins[0] = onnx_node_input(add, 0);
    f->ins[1] = onnx_node_input(add, 1);
    f->ins[2] = onnx_node_input(ln, 1);
    f->ins[3] = ln->n_input > 2 ? onnx_node_input(ln, 2) : "";
    f->nb_ins = f->ins[3][0] ? 4 : 3;
    return 1;
}

/* The fused layer's name: its nodes' names joined by '+' in their order
 * (unnamed nodes as their op), so inspect and --profile-layers say which
 * layers it replaced. */
static void fc_join_names(const onnx_import *imp, const fusion *f, const int32_t *order,
                          char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (int32_t k = 0; k < f->nb_members && len + 1 < cap; k++) {
        const Onnx__NodeProto *n = imp->graph->node[order[f->members[k]]];
        const char *nm = n->name && n->name[0] ? n->name : onnx_str(n->op_type);
        int w = snprintf(buf + len, cap - len, "%s%s", k ? "+" : "", nm);
        len = w < 0 ? cap : len + (size_t)w;
    }
}

static prt_status fc_import_skip_ln(onnx_import *imp, const fusion *f,
                                    const Onnx__NodeProto *first, const int32_t *order)
{
    const prt_plugin_creator *c = NULL;
    int32_t nb_out = f->sum ? 4 : 1;
    const char *outs[4] = {f->output, "", "", f->sum ? f->sum : ""};
    prt_field extra[2] = {{"epsilon", &f->epsilon, PRT_FIELD_FLOAT32, 1},
                          {"nb_outputs", &nb_out, PRT_FIELD_INT32, 1}};
    Onnx__NodeProto named = *first;
    char name[512], label[600];
    prt_status st = prt_builtin_find_creator("SkipLayerNormalization", "1", &c);
    if (st)
        return st;
    fc_join_names(imp, f, order, name, sizeof name);
    named.name = name;
    /* The Add's attributes are none of SkipLayerNormalization's fields. */
    named.n_attribute = 0;
    snprintf(label, sizeof label, "node '%s' (Add -> LayerNormalization)", name);
    onnx_info("%s: fused into one SkipLayerNormalization%s", label,
              f->sum ? " (writing the sum too: read elsewhere)" : "");
    return onnx_import_fused(imp, &named, label, c, extra, 2, (const char **)f->ins,
                             (size_t)f->nb_ins, outs, (size_t)nb_out);
}

/* ---- MatMul epilogues ------------------------------------------------- */

/* The one Div reading `name` (read twice: GELU's x), else -1. */
static int32_t fc_div_reader(const fuse_ctx *c, const char *name)
{
    for (int32_t i = 0; i < c->n; i++)
        if (fc_is(c, i, "Div") && fc_node(c, i)->n_input == 2 &&
            strcmp(onnx_node_input(fc_node(c, i), 0), name) == 0)
            return i;
    return -1;
}

/* The activation reading a product's output y alone: a Relu, a Gelu
 * (approximate none) or fc_gelu's pattern of y; 1 with its nodes added to
 * f's members and f->act, f->last and f->output set, else 0 (f as it
 * was). wfloat: y is known to be float (a Relu of integers stays). */
static int fc_act_after(fuse_ctx *c, const char *y, int wfloat, fusion *f)
{
    int32_t r = fc_only_reader(c, y);
    fusion g;
    if (r >= 0 && (fc_is(c, r, "Relu") || fc_is(c, r, "Gelu")) &&
        fc_node(c, r)->n_input == 1 && fc_out(fc_node(c, r))[0]) {
        const Onnx__AttributeProto *a = onnx_node_attr(fc_node(c, r), "approximate");
        if ((a && (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING ||
                   a->s.len != 4 || memcmp(a->s.data, "none", 4) != 0)) ||
            (!wfloat && fc_is(c, r, "Relu")))
            return 0;
        f->act = onnx_str(fc_node(c, r)->op_type);
        f->members[f->nb_members++] = r;
        f->last = r;
        f->output = fc_out(fc_node(c, r));
        return 1;
    }
    /* x / 2 (1 + erf(x / sqrt 2)): x read by the Div and one Mul alone. */
    if (fc_get(&c->uses, y) != 2 || (r = fc_div_reader(c, y)) < 0 || !fc_gelu(c, r, &g) ||
        strcmp(g.input, y) != 0)
        return 0;
    for (int32_t k = 0; k < g.nb_members; k++)
        f->members[f->nb_members + k] = g.members[k];
    f->nb_members += g.nb_members;
    f->act = "Gelu";
    f->last = g.last;
    f->output = g.output;
    return 1;
}

/* MatMul at pos (-> Add of a bias, as fc_matmul_add) -> Relu, Gelu
 * (approximate none) or the GELU pattern of fc_gelu: a MatMul with field
 * activation, applied as the product is stored. */
static int fc_matmul_act(fuse_ctx *c, int32_t pos, fusion *f)
{
    const Onnx__NodeProto *mm = fc_node(c, pos);
    const char *y;
    int wfloat = 1;
    if (!fc_is(c, pos, "MatMul") || mm->n_input != 2 || !fc_out(mm)[0])
        return 0;
    if (fc_matmul_add(c, pos, f)) {
        y = f->output;
    } else {
        /* Without a bias nothing says the product is float (Relu takes
         * integers; MatMul's activation does not): a constant float W
         * does, and Gelu, which MatMul's dtypes leave no other way. */
        const Onnx__TensorProto *w = fc_const_proto(c, onnx_node_input(mm, 1));
        wfloat = w && (w->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ||
                       w->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 ||
                       w->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16);
        fc_init(f, FUSE_MATMUL_ACT, pos, 1, (const int32_t[]){pos});
        f->input = NULL;
        y = fc_out(mm);
    }
    f->kind = FUSE_MATMUL_ACT;
    return fc_act_after(c, y, wfloat, f);
}

static prt_status fc_import_matmul_act(onnx_import *imp, const fusion *f,
                                       const Onnx__NodeProto *first, const int32_t *order)
{
    const char *ins[3] = {onnx_str(first->input[0]), onnx_str(first->input[1]),
                          f->input ? f->input : ""};
    const char *outs[1] = {f->output};
    prt_field extra[1] = {
        {"activation", f->act, PRT_FIELD_CHAR, (int64_t)strlen(f->act) + 1}};
    const prt_plugin_creator *c = NULL;
    Onnx__NodeProto named = *first;
    char name[1024], label[1100];
    prt_status st = prt_builtin_find_creator("MatMul", "1", &c);
    if (st)
        return st;
    fc_join_names(imp, f, order, name, sizeof name);
    named.name = name;
    snprintf(label, sizeof label, "node '%s' (MatMul%s -> %s)", name,
             f->input ? " -> Add" : "", f->act);
    onnx_info("%s: fused into one MatMul with activation %s", label, f->act);
    return onnx_import_fused(imp, &named, label, c, extra, 1, ins, f->input ? 3 : 2, outs,
                             1);
}

/* ---- elementwise chains ---------------------------------------------- */

/* A binary step's operand `name` in f: a scalar float constant (*is_float
 * set when it is float32, float16 or bfloat16, which fixes the chain's
 * dtype, ONNX's binary ops taking one), the chain's value itself, or an
 * input of the layer. 0 when there is no room for it. */
static int fc_chain_operand(const fuse_ctx *c, fusion *f, const char *name,
                            const char *acc, int32_t *kind, int32_t *idx, int *is_float)
{
    int32_t dt;
    float v;
    if (!name[0])
        return 0;
    if (strcmp(name, acc) == 0) {
        *kind = 2;
        *idx = 0;
        return 1;
    }
    if (fc_scalar_dt(c, name, &v, &dt)) {
        if (f->nb_consts == EC_MAX_CONSTS)
            return 0;
        *is_float |= dt == PRT_FLOAT32 || dt == PRT_FLOAT16 || dt == PRT_BFLOAT16;
        *kind = 0;
        *idx = f->nb_consts;
        f->consts[f->nb_consts++] = v;
        return 1;
    }
    *kind = 1;
    for (*idx = 0; *idx < f->nb_ins; (*idx)++)
        if (strcmp(f->ins[*idx], name) == 0)
            return 1;
    if (f->nb_ins == EC_MAX_INPUTS)
        return 0;
    f->ins[f->nb_ins++] = name;
    return 1;
}

/* Node `pos` as the next step of chain f whose value is `acc` (the chain's
 * input for the first step): 1 and the step appended, else 0 (f as it
 * was). */
static int fc_chain_step(const fuse_ctx *c, int32_t pos, fusion *f, const char *acc,
                         int *is_float)
{
    const Onnx__NodeProto *n = fc_node(c, pos);
    const char *op = onnx_str(n->op_type);
    int32_t code = ec_op_code(op), kind = 0, idx = 0, swap = 0, nb_ins = f->nb_ins,
            nb_consts = f->nb_consts, pow_float = 0;
    const char *other;
    if (code < 0 || !fc_is(c, pos, op) || f->nb_steps == EC_MAX_STEPS || !fc_out(n)[0] ||
        n->n_input != (EC_IS_BINARY(code) ? 2u : 1u))
        return 0;
    if (!EC_IS_BINARY(code)) {
        if (strcmp(onnx_node_input(n, 0), acc) != 0)
            return 0;
    } else {
        swap = strcmp(onnx_node_input(n, 0), acc) != 0;
        other = onnx_node_input(n, swap ? 0 : 1);
        if (swap && strcmp(onnx_node_input(n, 1), acc) != 0)
            return 0;
        /* Pow's exponent may have a dtype of its own: it tells nothing. */
        if (!fc_chain_operand(c, f, other, acc, &kind, &idx,
                              code == EC_POW ? &pow_float : is_float) ||
            (code == EC_POW && (kind != 0 || swap))) {
            f->nb_ins = nb_ins;
            f->nb_consts = nb_consts;
            return 0;
        }
    }
    {
        size_t len = strlen(f->ops);
        snprintf(f->ops + len, sizeof f->ops - len, "%s%s", len ? "," : "", op);
    }
    f->operands[2 * f->nb_steps] = kind | (swap ? 4 : 0);
    f->operands[2 * f->nb_steps + 1] = idx;
    f->nb_steps++;
    f->members[f->nb_members++] = pos;
    return 1;
}

/* A run of elementwise built-ins from node pos, each value read by the
 * next node alone, of float32, float16 or bfloat16 (a float constant
 * operand says which: the importer knows no dtypes; without one the nodes
 * stay apart): one ElementwiseChain layer, of 2 to EC_MAX_STEPS nodes and
 * up to EC_MAX_INPUTS tensor inputs. */
static int fc_ew_chain(fuse_ctx *c, int32_t pos, fusion *f)
{
    const Onnx__NodeProto *n = fc_node(c, pos);
    const char *acc;
    int is_float = 0;
    int32_t r;
    float v;
    if (ec_op_code(onnx_str(n->op_type)) < 0 || n->n_input < 1 || n->n_input > 2)
        return 0;
    fc_init(f, FUSE_EW_CHAIN, pos, 0, NULL);
    /* The chain's input: the first operand, or the second when the first
     * is a constant (Sub(1, x)). */
    acc = onnx_node_input(n, 0);
    if (n->n_input == 2 && fc_scalar(c, acc, &v) &&
        !fc_scalar(c, onnx_node_input(n, 1), &v))
        acc = onnx_node_input(n, 1);
    if (!acc[0])
        return 0;
    f->ins[f->nb_ins++] = acc;
    if (!fc_chain_step(c, pos, f, acc, &is_float))
        return 0;
    acc = fc_out(n);
    while ((r = fc_only_reader(c, acc)) >= 0 && fc_chain_step(c, r, f, acc, &is_float))
        acc = fc_out(fc_node(c, r));
    if (f->nb_steps < 2 || !is_float)
        return 0;
    f->last = f->members[f->nb_members - 1];
    f->output = acc;
    return 1;
}

static prt_status fc_import_ew_chain(onnx_import *imp, const fusion *f,
                                     const Onnx__NodeProto *first, const int32_t *order)
{
    const char *outs[1] = {f->output};
    prt_field extra[3] = {{"ops", f->ops, PRT_FIELD_CHAR, (int64_t)strlen(f->ops) + 1},
                          {"operands", f->operands, PRT_FIELD_INT32, 2 * f->nb_steps},
                          {"constants", f->consts, PRT_FIELD_FLOAT32, f->nb_consts}};
    const prt_plugin_creator *c = NULL;
    Onnx__NodeProto named = *first;
    char name[1024], label[1100];
    prt_status st = prt_builtin_find_creator("ElementwiseChain", "1", &c);
    if (st)
        return st;
    fc_join_names(imp, f, order, name, sizeof name);
    named.name = name;
    named.n_attribute = 0;
    snprintf(label, sizeof label, "node '%s' (%d elementwise nodes)", name,
             (int)f->nb_steps);
    onnx_info("%s: fused into one ElementwiseChain", label);
    return onnx_import_fused(imp, &named, label, c, extra, 3, (const char **)f->ins,
                             (size_t)f->nb_ins, outs, 1);
}

static prt_status fc_index(fuse_ctx *c)
{
    const Onnx__GraphProto *g = c->imp->graph;
    prt_status st = PRT_OK;
    for (int32_t i = 0; i < c->n && !st; i++) {
        const Onnx__NodeProto *n = fc_node(c, i);
        for (size_t k = 0; k < n->n_input && !st; k++) {
            const char *name = onnx_str(n->input[k]);
            int32_t u = fc_get(&c->uses, name);
            if (!name[0])
                continue;
            st = onnx_names_put(&c->uses, name, u < 0 ? 1 : u + 1);
            if (!st)
                st = onnx_names_put(&c->consumer, name, i);
        }
        for (size_t k = 0; k < n->n_output && !st; k++)
            if (onnx_str(n->output[k])[0])
                st = onnx_names_put(&c->producer, onnx_str(n->output[k]), i);
    }
    for (size_t k = 0; k < g->n_output && !st; k++) {
        const char *name = onnx_str(g->output[k]->name);
        int32_t u = fc_get(&c->uses, name);
        if (name[0])
            st = onnx_names_put(&c->uses, name, u < 0 ? 1 : u + 1);
    }
    return st;
}

prt_status onnx_fuse_plan(onnx_import *imp, const int32_t *order,
                          const onnx_choice *choices, onnx_fusions **out)
{
    fuse_ctx c;
    onnx_fusions *p;
    prt_status st, oom = PRT_OK;
    memset(&c, 0, sizeof c);
    c.oom = &oom;
    c.imp = imp;
    c.order = order;
    c.choices = choices;
    c.n = (int32_t)imp->graph->n_node;
    *out = NULL;
    p = onnx_calloc(1, sizeof *p);
    c.taken = onnx_calloc((size_t)c.n + 1, sizeof *c.taken);
    c.shared_dq = onnx_calloc((size_t)c.n + 1, sizeof *c.shared_dq);
    if (p) {
        p->role = onnx_calloc((size_t)c.n + 1, sizeof *p->role);
        p->f = onnx_calloc((size_t)c.n + 1, sizeof *p->f);
    }
    st = p && c.taken && c.shared_dq && p->role && p->f ? fc_index(&c)
                                                        : PRT_ERR_OUT_OF_MEMORY;
    for (int32_t i = 0; !st && i < c.n; i++)
        p->role[i] = -1;
    if (!st && !(c.facts = onnx_calloc((size_t)c.n + 1, sizeof *c.facts)))
        st = PRT_ERR_OUT_OF_MEMORY;
    for (int32_t i = 0; !st && i < c.n; i++)
        fc_fact_node(&c, i);
    /* QDQ patterns first: their weight DQs would otherwise fold into
     * float constants (fc_dq_const) at their earlier positions. */
    for (int32_t i = 0; !st && i < c.n; i++) {
        fusion *f = &p->f[p->nb];
        if (fc_qconv(&c, i, f) || fc_qmatmul(&c, i, f) || fc_qpool(&c, i, f) ||
            fc_qadd(&c, i, f) || fc_dynq(&c, i, f)) {
            fc_take(&c, f);
            for (int32_t k = 0; k < f->nb_members; k++)
                p->role[f->members[k]] = -2;
            p->role[f->last] = p->nb++;
        }
    }
    if (!st)
        fc_drop_idle_dqs(&c, p);
    for (int32_t i = 0; !st && i < c.n; i++) {
        fusion *f = &p->f[p->nb];
        if (fc_conv_act(&c, i, f) || fc_conv_silu(&c, i, f) || fc_conv_add(&c, i, f) ||
            fc_gelu(&c, i, f) || fc_gelu_tanh(&c, i, f) || fc_attention(&c, i, f) ||
            fc_matmul_act(&c, i, f) || fc_matmul_add(&c, i, f) || fc_dq_const(&c, i, f) ||
            fc_skip_ln(&c, i, f)) {
            fc_take(&c, f);
            for (int32_t k = 0; k < f->nb_members; k++)
                p->role[f->members[k]] = -2;
            p->role[f->last] = p->nb++;
        }
    }
    /* Elementwise chains last: every other pattern takes its nodes first. */
    for (int32_t i = 0; !st && i < c.n; i++) {
        fusion *f = &p->f[p->nb];
        if (fc_ew_chain(&c, i, f)) {
            fc_take(&c, f);
            for (int32_t k = 0; k < f->nb_members; k++)
                p->role[f->members[k]] = -2;
            p->role[f->last] = p->nb++;
        }
    }
    onnx_names_free(&c.uses);
    onnx_names_free(&c.consumer);
    onnx_names_free(&c.producer);
    prt_free(c.taken);
    prt_free(c.shared_dq);
    prt_free(c.facts);
    prt_free(c.sdims);
    if (!st)
        st = oom;
    if (st) {
        onnx_fuse_free(p);
        return st == PRT_ERR_OUT_OF_MEMORY
                   ? onnx_error(st, "ONNX import: out of memory planning fusions")
                   : st;
    }
    *out = p;
    return PRT_OK;
}

int32_t onnx_fuse_role(const onnx_fusions *p, int32_t pos)
{
    return p ? p->role[pos] : -1;
}

/* The value of the merge Transpose that Shape nodes read (fc_head_merge),
 * [B, S, H, Dv]: Reshape(the layer's [B, S, H Dv] output, [0, 0, H, Dv]),
 * named as the Transpose and its output. Only Shape nodes read it, so runs
 * skip it (DESIGN-NOTES, "Layers nothing reads are skipped"). Its shape
 * constant takes the Transpose's name, which names no value
 * (fc_view_name). */
static prt_status fc_import_view(onnx_import *imp, const fusion *f, const int32_t *order)
{
    const Onnx__NodeProto *t = imp->graph->node[order[f->view]];
    const char *name = onnx_str(t->name);
    int64_t dims[4] = {0, 0, f->view_dims[0], f->view_dims[1]};
    onnx_tensor shape = {PRT_INT64, {1, {4}}, dims, sizeof dims};
    char *ins[2] = {(char *)f->output, (char *)name};
    Onnx__NodeProto view = *t;
    onnx_choice choice;
    prt_status st;
    view.op_type = (char *)"Reshape";
    view.n_attribute = 0; /* perm is none of Reshape's */
    view.input = ins;
    view.n_input = 2;
    st = onnx_value_add_constant(imp, name, &shape, name);
    if (!st)
        st = onnx_choose(imp, &view, order[f->view], &choice);
    return st ? st : onnx_import_node(imp, &view, order[f->view], &choice);
}

/* The merge Reshape to rank 2 (fc_head_merge), reading the layer's output
 * in place of the merge Transpose's. */
static prt_status fc_import_kept(onnx_import *imp, const fusion *f, const int32_t *order)
{
    const Onnx__NodeProto *r = imp->graph->node[order[f->kept]];
    char *ins[2] = {(char *)f->output, r->input[1]};
    Onnx__NodeProto node = *r;
    onnx_choice choice;
    prt_status st;
    node.input = ins;
    st = onnx_choose(imp, &node, order[f->kept], &choice);
    return st ? st : onnx_import_node(imp, &node, order[f->kept], &choice);
}

/* The Split of the QKV value into the thirds that Q, K and V read
 * (fc_qkv_split): one layer named after the rank-5 Reshape it replaces,
 * its outputs named as fc_qkv_suffix says; ins[0..2] become them. */
static prt_status fc_import_qkv(onnx_import *imp, const fusion *f, const int32_t *order,
                                const char **ins)
{
    const Onnx__NodeProto *r = imp->graph->node[order[f->qkv_at]];
    Onnx__NodeProto node = *r;
    const char *outs[3], *in[1] = {f->qkv};
    int32_t axis = 2, n = 3;
    prt_field extra[2] = {{"axis", &axis, PRT_FIELD_INT32, 1},
                          {"outputs", &n, PRT_FIELD_INT32, 1}};
    const prt_plugin_creator *c = NULL;
    char label[512];
    prt_status st;
    for (int k = 0; k < 3; k++) {
        const char *name = onnx_value_name(imp, f->qkv, fc_qkv_suffix[k]);
        if (!name)
            return onnx_error(PRT_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
        ins[k] = name;
        outs[f->parts[k]] = name;
    }
    node.op_type = (char *)"Split";
    node.n_attribute = 0; /* allowzero is none of Split's */
    onnx_node_label(r, order[f->qkv_at], label, sizeof label);
    st = prt_builtin_find_creator("Split", "1", &c);
    return st ? st : onnx_import_fused(imp, &node, label, c, extra, 2, in, 1, outs, 3);
}

prt_status onnx_fuse_import(onnx_import *imp, const onnx_fusions *p, int32_t pos,
                            const int32_t *order)
{
    const fusion *f = &p->f[p->role[pos]];
    const Onnx__NodeProto *first = imp->graph->node[order[f->first]];
    const char *outs[1] = {f->output};
    const prt_plugin_creator *c = NULL;
    char label[512];
    onnx_node_label(first, order[f->first], label, sizeof label);
    if (f->kind == FUSE_SKIP_LN)
        return fc_import_skip_ln(imp, f, first, order);
    if (f->kind == FUSE_MATMUL_ACT)
        return fc_import_matmul_act(imp, f, first, order);
    if (f->kind == FUSE_EW_CHAIN)
        return fc_import_ew_chain(imp, f, first, order);
    if (f->kind == FUSE_DQ_CONST)
        return onnx_dq_const_import(imp, label, f->output, f->q[0], f->q[1], f->q[2],
                                    f->axis);
    if (f->kind == FUSE_QCONV || f->kind == FUSE_QMATMUL || f->kind == FUSE_QPOOL ||
        f->kind == FUSE_QADD) {
        prt_status st =
            prt_builtin_find_creator(f->kind == FUSE_QCONV     ? "QLinearConv"
                                     : f->kind == FUSE_QMATMUL ? "QLinearMatMul"
                                     : f->kind == FUSE_QADD    ? "QLinearAdd"
                                                               : "MaxPool",
                                     "1", &c);
        if (st)
            return st;
        return onnx_import_fused(imp, first, label, c, NULL, 0, (const char **)f->ins,
                                 (size_t)f->nb_ins, outs, 1);
    }
    if (f->kind == FUSE_DYNQ) {
        const char *op = f->flags[0] ? "DynamicQuantizeMatMul" : "MatMulIntegerToFloat";
        prt_field act = {"activation", f->act, PRT_FIELD_CHAR,
                         f->act ? (int64_t)strlen(f->act) + 1 : 0};
        prt_status st = prt_builtin_find_creator(op, "1", &c);
        if (st)
            return st;
        onnx_info(
            "%s: DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul%s%s%s folded "
            "into one %s",
            label, f->flags[1] ? " -> Add" : "", f->act ? " -> " : "",
            f->act ? f->act : "", op);
        return onnx_import_fused(imp, first, label, c, &act, f->act ? 1 : 0,
                                 (const char **)f->ins, (size_t)f->nb_ins, outs, 1);
    }
    if (f->kind == FUSE_ATTENTION) {
        prt_field extra[5] = {
            {"scale", f->params, PRT_FIELD_FLOAT32, 1},
            {"k_transposed", &f->flags[0], PRT_FIELD_INT32, 1},
            {"empty_rows_zero", &f->flags[1], PRT_FIELD_INT32, 1},
            {"q_num_heads", &f->flags[2], PRT_FIELD_INT32, 1},
            {"kv_num_heads", &f->flags[3], PRT_FIELD_INT32, 1},
        };
        const char *ins[4] = {f->ins[0], f->ins[1], f->ins[2], f->ins[3]};
        prt_status st = f->qkv ? fc_import_qkv(imp, f, order, ins) : PRT_OK;
        if (!st)
            st = prt_builtin_find_creator("Attention", "1", &c);
        if (!st)
            st = onnx_import_fused(imp, first, label, c, extra, f->flags[2] ? 5 : 3, ins,
                                   (size_t)f->nb_ins, outs, 1);
        if (!st && f->view >= 0)
            st = fc_import_view(imp, f, order);
        if (!st && f->kept >= 0)
            st = fc_import_kept(imp, f, order);
        return st;
    }
    if (f->kind == FUSE_CONV_ADD) {
        const int32_t one = 1;
        prt_field extra[3] = {
            {"residual", &one, PRT_FIELD_INT32, 1},
            {"activation", f->act, PRT_FIELD_CHAR,
             f->act ? (int64_t)strlen(f->act) + 1 : 0},
            {"activation_params", f->params, PRT_FIELD_FLOAT32, f->nb_params},
        };
        const char *ins[4];
        size_t nb = 0;
        prt_status st = prt_builtin_find_creator("Conv", "1", &c);
        if (st)
            return st;
        for (size_t k = 0; k < first->n_input && k < 3; k++)
            if (k < 2 || onnx_node_input(first, k)[0])
                ins[nb++] = onnx_node_input(first, k);
        ins[nb++] = f->input;
        onnx_info("%s: Conv -> Add%s%s folded into one Conv with residual input '%s'",
                  label, f->act ? " -> " : "", f->act ? f->act : "", f->input);
        return onnx_import_fused(imp, first, label, c, extra, f->act ? 3 : 1, ins, nb,
                                 outs, 1);
    }
    if (f->kind == FUSE_CONV_ACT) {
        prt_field extra[2] = {
            {"activation", f->act, PRT_FIELD_CHAR, (int64_t)strlen(f->act) + 1},
            {"activation_params", f->params, PRT_FIELD_FLOAT32, f->nb_params},
        };
        prt_status st = prt_builtin_find_creator(onnx_str(first->op_type), "1", &c);
        if (st)
            return st;
        return onnx_import_fused(imp, first, label, c, extra, 2,
                                 (const char **)first->input, first->n_input, outs, 1);
    } else if (f->kind == FUSE_MATMUL_ADD) {
        const char *ins[3] = {onnx_str(first->input[0]), onnx_str(first->input[1]),
                              f->input};
        prt_status st = prt_builtin_find_creator("MatMul", "1", &c);
        if (st)
            return st;
        return onnx_import_fused(imp, first, label, c, NULL, 0, ins, 3, outs, 1);
    } else {
        const char *ins[1] = {f->input};
        prt_field tanh_mode = {"approximate", f->act, PRT_FIELD_CHAR,
                               f->act ? (int64_t)strlen(f->act) + 1 : 0};
        prt_status st = prt_builtin_find_creator("Gelu", "1", &c);
        if (st)
            return st;
        return onnx_import_fused(imp, first, label, c, &tanh_mode, f->act ? 1 : 0, ins, 1,
                                 outs, 1);
    }
}

void onnx_fuse_free(onnx_fusions *p)
{
    if (!p)
        return;
    prt_free(p->role);
    prt_free(p->f);
    prt_free(p);
}
