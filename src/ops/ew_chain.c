/*
 * ElementwiseChain (namespace "plugrt", version "1"): a chain of
 * elementwise ops evaluated per element in one pass, the importer's fusion
 * of a run of elementwise nodes where each value is read by the next node
 * alone (onnx_fuse.c): GPT-2's tanh GELU (Pow, Mul, Add, Mul, Tanh, Add,
 * Mul) is one layer instead of seven, and no intermediate tensor is
 * written.
 *
 * Inputs: 1 to 3 float tensors of one dtype (float32, float16, bfloat16),
 * broadcast together as Add's operands (numpy's rule); the output has
 * their dtype and the broadcast dims. Input 0 starts the chain: a value
 * `acc` is input 0's element, then each instruction of the program replaces
 * it, and the last value is stored.
 *
 * Fields:
 *   ops        char: the steps' ONNX op names separated by ',', 1 to
 *              EC_MAX_STEPS of: Add Sub Mul Div Pow (binary), Relu Sigmoid
 *              Tanh Erf Sqrt Exp Log Neg Abs Reciprocal (unary)
 *   operands   int32[2 n]: per step (operand, index). A binary op's operand
 *              is 0 a constant (constants[index]), 1 an input (its
 *              element), 2 acc itself; plus 4 when the operand comes first
 *              (c - acc, c / acc). Pow's is a constant, second. Unary ops
 *              ignore them.
 *   constants  float32[], up to EC_MAX_CONSTS: the scalar operands
 *
 * Each step computes what the op of that name computes for one float32
 * element (binary.c, unary_math.c, pow.c): Pow's exponent 2 as x * x, 3 as
 * x * x * x in double, others pow in double; Tanh and Sigmoid by the
 * same vector kernels, the rest by the same libm calls, so float32 gives
 * the ops' bits. Half floats are not rounded between steps (the ops apart
 * round each value): the chain is the more exact. The CPU evaluates a step
 * over a chunk of EC_CHUNK elements at a time (the vector kernels' width).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/parallel.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/ew_chain.h"
#include "ops/ew_kinds.h"
#include "ops/op_common.h"

typedef struct ec_op {
    op_object o;
    int32_t nb_steps, nb_consts;
    int32_t prog[EC_MAX_STEPS][3]; /* EC_* op, operand, index */
    float consts[EC_MAX_CONSTS];
    /* serialize's copies of the fields */
    char ops[EC_MAX_STEPS * 16];
    int32_t operands[2 * EC_MAX_STEPS];
} ec_op;

/* ops ("Pow,Mul,...") as EC_* codes into e->prog[s][0]. */
static prt_status ec_parse_ops(ec_op *e, const op_fields *f)
{
    char ops[EC_MAX_STEPS * 16], *p, *q;
    int32_t len;
    prt_status st = op_field_str(f, "ops", ops, sizeof ops, &len);
    if (st)
        return st;
    if (len <= 0)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "ops is missing: the chain's op names, separated by ','");
    e->nb_steps = 0;
    for (p = ops; p; p = q) {
        q = strchr(p, ',');
        if (q)
            *q++ = 0;
        if (e->nb_steps == EC_MAX_STEPS)
            return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                                  "ops has more than %d steps", EC_MAX_STEPS);
        e->prog[e->nb_steps][0] = ec_op_code(p);
        if (e->prog[e->nb_steps][0] < 0)
            return op_fields_fail(
                f, PRT_ERR_INVALID_ARGUMENT,
                "ops: '%s' is not Add, Sub, Mul, Div, Pow, Relu, Sigmoid, "
                "Tanh, Erf, Sqrt, Exp, Log, Neg, Abs or Reciprocal",
                p);
        e->nb_steps++;
    }
    return PRT_OK;
}

static prt_status ec_parse(op_object *o, const op_fields *f)
{
    ec_op *e = (ec_op *)o;
    const prt_field *p = NULL, *c = NULL;
    prt_status st = ec_parse_ops(e, f);
    if (!st)
        st = op_field_find(f, "operands", &p);
    if (!st)
        st = op_field_find(f, "constants", &c);
    if (st)
        return st;
    if (!p || p->type != PRT_FIELD_INT32 || p->length != 2 * e->nb_steps)
        return op_fields_fail(
            f, PRT_ERR_INVALID_ARGUMENT,
            "operands must be int32 pairs (operand, index), one per step "
            "of ops (%d)",
            (int)e->nb_steps);
    if (c && (c->type != PRT_FIELD_FLOAT32 || c->length > EC_MAX_CONSTS))
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "constants must be float32, at most %d of them",
                              EC_MAX_CONSTS);
    e->nb_consts = c ? (int32_t)c->length : 0;
    if (c)
        memcpy(e->consts, c->data, sizeof(float) * (size_t)e->nb_consts);
    for (int32_t s = 0; s < e->nb_steps; s++) {
        int32_t *q = e->prog[s], kind;
        q[1] = ((const int32_t *)p->data)[2 * s];
        q[2] = ((const int32_t *)p->data)[2 * s + 1];
        kind = q[1] & 3;
        if (!EC_IS_BINARY(q[0])) {
            q[1] = q[2] = 0; /* unary */
            continue;
        }
        if (q[1] < 0 || q[1] > 6 || kind == 3 ||
            (kind == 0 && (q[2] < 0 || q[2] >= e->nb_consts)) ||
            (kind == 1 && (q[2] < 0 || q[2] >= EC_MAX_INPUTS)) ||
            (q[0] == EC_POW && q[1] != 0))
            return op_fields_fail(
                f, PRT_ERR_INVALID_ARGUMENT,
                "step %d (%s): operand %d index %d names no constant or "
                "input%s",
                (int)s, ec_op_name(q[0]), (int)q[1], (int)q[2],
                q[0] == EC_POW ? " (Pow's exponent is a constant)" : "");
    }
    return PRT_OK;
}

static int32_t ec_serialize(op_object *o, prt_field *ser)
{
    ec_op *e = (ec_op *)o;
    size_t len = 0;
    for (int32_t s = 0; s < e->nb_steps; s++) {
        int w = snprintf(e->ops + len, sizeof e->ops - len, "%s%s", s ? "," : "",
                         ec_op_name(e->prog[s][0]));
        len += w > 0 ? (size_t)w : 0;
        e->operands[2 * s] = e->prog[s][1];
        e->operands[2 * s + 1] = e->prog[s][2];
    }
    op_ser(&ser[0], "ops", PRT_FIELD_CHAR, e->ops, (int64_t)len);
    op_ser(&ser[1], "operands", PRT_FIELD_INT32, e->operands, 2 * e->nb_steps);
    op_ser(&ser[2], "constants", PRT_FIELD_FLOAT32, e->consts, e->nb_consts);
    return 3;
}

static prt_status ec_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                            prt_dim_exprs *out, prt_expr_builder *eb)
{
    const ec_op *e = (const ec_op *)o;
    prt_status st = PRT_OK;
    *out = in[0];
    for (int32_t s = 0; s < e->nb_steps; s++)
        if ((e->prog[s][1] & 3) == 1 && e->prog[s][2] >= nb_in)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "program step %d reads input %d; the layer has %d", (int)s,
                           (int)e->prog[s][2], (int)nb_in);
    for (int32_t k = 1; k < nb_in && !st; k++) {
        prt_dim_exprs t = *out;
        st = op_broadcast_exprs(o, eb, &t, &in[k], out, "the chain's inputs");
    }
    return st;
}

static prt_status ec_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                           prt_dims *out)
{
    prt_status st = PRT_OK;
    *out = in[0];
    for (int32_t k = 1; k < nb_in && !st; k++) {
        prt_dims t = *out;
        st = op_broadcast_dims(o, &t, &in[k], out, "the chain's inputs");
    }
    return st;
}

typedef struct ec_job {
    const ec_op *e;
    int32_t dtype, nb_in;
} ec_job;

#define EC_CHUNK 256 /* elements of a row evaluated at a time */

/* acc[i] = acc[i] op b[i] (b[0] for all when bs is 0; b op acc when swap)
 * over m floats: Add, Sub, Mul and Div by binary.c's vector rows (the same
 * bits), Pow's constant exponent as pow.c computes it. */
static void ec_binary(int32_t op, int swap, float *acc, const float *b, int64_t bs,
                      int64_t m)
{
    static const int32_t rk[4] = {BIN_R_ADD, BIN_R_SUB, BIN_R_MUL, BIN_R_DIV};
    const float e = b[0];
    if (op != EC_POW) {
        if (swap)
            op_bin_rows_f32(rk[op], b, bs, acc, 1, acc, m);
        else
            op_bin_rows_f32(rk[op], acc, 1, b, bs, acc, m);
    } else if (e == 2.0f) { /* a constant exponent, second (ec_parse) */
        for (int64_t i = 0; i < m; i++)
            acc[i] = acc[i] * acc[i];
    } else if (e == 3.0f) {
        op_cube_f32(acc, acc, m);
    } else {
        for (int64_t i = 0; i < m; i++)
            acc[i] = (float)pow((double)acc[i], (double)e);
    }
}

/* A unary step over m floats: Tanh and Sigmoid by the vector kernels that
 * the ops apart use (the same bits), the rest as those ops compute them. */
static void ec_unary(int32_t op, float *acc, int64_t m)
{
    if (op == EC_TANH)
        op_tanh_f32(acc, acc, m);
    else if (op == EC_SIGMOID)
        op_sigmoid_f32(acc, acc, m);
    else
        for (int64_t i = 0; i < m; i++)
            acc[i] = ec_step(op, acc[i], 0.0f);
}

/* A row of the walk: each input's chunk as float32, the program step by
 * step over the chunk, the result stored. */
static int ec_row(const void *ctx, const uint8_t *const *p, const int64_t *s, uint8_t *y,
                  int64_t n)
{
    const ec_job *j = ctx;
    const ec_op *e = j->e;
    const size_t es = prt_dtype_size(j->dtype);
    float buf[OP_WALK_MAX][EC_CHUNK], acc[EC_CHUNK];
    const float *v[OP_WALK_MAX];
    for (int64_t b = 0; b < n; b += EC_CHUNK) {
        const int64_t m = n - b < EC_CHUNK ? n - b : EC_CHUNK;
        for (int32_t k = 0; k < j->nb_in; k++) {
            const uint8_t *src = p[k] + (s[k] ? (size_t)b * es : 0);
            v[k] = (const float *)src; /* float32 read in place */
            if (j->dtype != PRT_FLOAT32) {
                op_to_f32(src, j->dtype, s[k] ? m : 1, buf[k]);
                v[k] = buf[k];
            }
        }
        if (s[0])
            memcpy(acc, v[0], sizeof(float) * (size_t)m);
        else
            for (int64_t i = 0; i < m; i++)
                acc[i] = v[0][0];
        for (int32_t st = 0; st < e->nb_steps; st++) {
            const int32_t op = e->prog[st][0], kind = e->prog[st][1] & 3,
                          idx = e->prog[st][2];
            if (!EC_IS_BINARY(op))
                ec_unary(op, acc, m);
            else if (kind == 0)
                ec_binary(op, e->prog[st][1] & 4, acc, &e->consts[idx], 0, m);
            else if (kind == 1)
                ec_binary(op, e->prog[st][1] & 4, acc, v[idx], s[idx], m);
            else
                ec_binary(op, 0, acc, acc, 1, m);
        }
        op_from_f32(acc, j->dtype, m, y + (size_t)b * es);
    }
    return 0;
}

static prt_status ec_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                         int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                         const void *const *x, void *const *y, void *ws, void *stream)
{
    const ec_job j = {(const ec_op *)o, dtype, nb_in};
    prt_dims d[OP_WALK_MAX];
    size_t es[OP_WALK_MAX];
    (void)nb_out, (void)ws, (void)stream;
    for (int32_t k = 0; k < nb_in; k++) {
        d[k] = in[k].dims;
        es[k] = prt_dtype_size(dtype);
    }
    op_bcast_walk_parallel(&out->dims, nb_in, d, es, prt_dtype_size(dtype), x, y[0],
                           ec_row, &j, OP_GRAIN_SIMPLE / j.e->nb_steps);
    return PRT_OK;
}

static const op_class ec_class = {
    .min_inputs = 1,
    .max_inputs = EC_MAX_INPUTS,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16),
    .size = sizeof(ec_op),
    .alias_input = -1,
    .parse = ec_parse,
    .serialize = ec_serialize,
    .shapes = ec_shapes,
    .infer = ec_infer,
    .run = ec_run,
};

static const prt_field_schema ec_schema[] = {
    {"ops", PRT_FIELD_CHAR, -1,
     "the steps' ops, ',' between: Add Sub Mul Div Pow Relu Sigmoid Tanh Erf Sqrt Exp "
     "Log "
     "Neg Abs Reciprocal"},
    {"operands", PRT_FIELD_INT32, -1,
     "per step (operand, index): 0 constant, 1 input, 2 the value itself; +4 operand "
     "first"},
    {"constants", PRT_FIELD_FLOAT32, -1, "the scalar operands"},
};

_Static_assert(EC_MAX_INPUTS <= OP_WALK_MAX, "a chain's inputs are one walk's");

const prt_plugin_creator op_ew_chain_creator =
    OP_CREATOR("ElementwiseChain", ec_class, ec_schema, 3);

/* The CUDA kernel's view of a chain (ew_chain.h). */
void ec_program(const op_object *o, int32_t *nb_steps, const int32_t **prog,
                int32_t *nb_consts, const float **consts)
{
    const ec_op *e = (const ec_op *)o;
    *nb_steps = e->nb_steps;
    *prog = &e->prog[0][0];
    *nb_consts = e->nb_consts;
    *consts = e->consts;
}
