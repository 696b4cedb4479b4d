/*
 * Expression programs: concrete evaluation, interval bounds over a profile,
 * validation of untrusted programs, copy and free. A program is evaluated
 * front to back because every operand has a smaller index than its user.
 *
 * None of these trust the program's structure: even without a prior
 * expr_program_validate, a bad kind or operand index is an error, never a
 * read out of bounds.
 */
#include "expr/expr.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* Structure shared by every walk                                            */
/* ------------------------------------------------------------------------ */

static int program_ok(const expr_program *p)
{
    return p && p->nb_nodes >= 0 && (p->nb_nodes == 0 || p->nodes);
}

/* Checks what every walk relies on: a known kind and, for nodes with node
 * operands, operands before node i. */
static prt_status check_operands(const expr_node *n, int32_t i)
{
    if (n->kind < EXPR_CONST || n->kind > EXPR_INPUT_VALUE)
        return base_error(PRT_ERR_MALFORMED,
                          "expression node %d: unknown "
                          "kind %d",
                          i, (int)n->kind);
    if (n->kind == EXPR_OP && (n->op < 0 || n->op >= EXPR_OP_COUNT))
        return base_error(PRT_ERR_MALFORMED,
                          "expression node %d: unknown "
                          "operation %d",
                          i, (int)n->op);
    if (n->kind != EXPR_OP && n->kind != EXPR_SIZE)
        return PRT_OK;
    if (n->a < 0 || n->a >= i || n->b < 0 || n->b >= i)
        return base_error(PRT_ERR_MALFORMED,
                          "expression node %d: operands "
                          "(node %d, node %d) must come before it",
                          i, (int)n->a, (int)n->b);
    return PRT_OK;
}

/* ------------------------------------------------------------------------ */
/* Validation                                                                */
/* ------------------------------------------------------------------------ */

static prt_status validate_leaf(const expr_node *n, int32_t i, int32_t nb_inputs,
                                const int32_t *input_ranks, const int32_t *value_counts,
                                int32_t nb_sizes)
{
    if (n->kind == EXPR_INPUT_VALUE) {
        if (n->a < 0 || n->a >= nb_inputs || !value_counts)
            return base_error(PRT_ERR_MALFORMED,
                              "expression node %d: shape "
                              "input %d out of range (%d inputs)",
                              i, (int)n->a, nb_inputs);
        if (n->b < 0 || n->b >= value_counts[n->a] || n->b >= PRT_MAX_DIMS)
            return base_error(PRT_ERR_MALFORMED,
                              "expression node %d: value %d "
                              "out of range for input %d with %d values",
                              i, (int)n->b, (int)n->a, (int)value_counts[n->a]);
    }
    if (n->kind == EXPR_INPUT_DIM) {
        if (n->a < 0 || n->a >= nb_inputs)
            return base_error(PRT_ERR_MALFORMED,
                              "expression node %d: input "
                              "%d out of range (%d inputs)",
                              i, (int)n->a, nb_inputs);
        if (n->b < 0 || n->b >= input_ranks[n->a] || n->b >= PRT_MAX_DIMS)
            return base_error(PRT_ERR_MALFORMED,
                              "expression node %d: dim %d "
                              "out of range for input %d of rank %d",
                              i, (int)n->b, (int)n->a, (int)input_ranks[n->a]);
    }
    if (n->kind == EXPR_SIZE && (n->imm < 0 || n->imm >= nb_sizes))
        return base_error(PRT_ERR_MALFORMED,
                          "expression node %d: size id "
                          "%lld out of range (%d sizes)",
                          i, (long long)n->imm, nb_sizes);
    return PRT_OK;
}

/* has_size[i]: node i depends on a size symbol. A size's opt may not, the
 * same rule expr_size enforces on construction. */
static prt_status validate_nodes(const expr_program *p, int32_t nb_inputs,
                                 const int32_t *input_ranks, const int32_t *value_counts,
                                 int32_t nb_sizes, uint8_t *has_size)
{
    for (int32_t i = 0; i < p->nb_nodes; i++) {
        const expr_node *n = &p->nodes[i];
        prt_status st = check_operands(n, i);
        if (st == PRT_OK)
            st = validate_leaf(n, i, nb_inputs, input_ranks, value_counts, nb_sizes);
        if (st != PRT_OK)
            return st;
        if (n->kind == EXPR_SIZE && has_size[n->a])
            return base_error(PRT_ERR_MALFORMED,
                              "expression node %d: size "
                              "%lld has an opt (node %d) that depends on a "
                              "size",
                              i, (long long)n->imm, (int)n->a);
        has_size[i] = n->kind == EXPR_SIZE ||
                      (n->kind == EXPR_OP && (has_size[n->a] | has_size[n->b]));
    }
    return PRT_OK;
}

prt_status expr_program_validate(const expr_program *p, int32_t nb_inputs,
                                 const int32_t *input_ranks, const int32_t *value_counts,
                                 int32_t nb_sizes)
{
    uint8_t *has_size;
    prt_status st;
    if (!program_ok(p))
        return base_error(PRT_ERR_MALFORMED, "expression program: bad node "
                                             "count or no nodes");
    if (nb_inputs < 0 || (nb_inputs > 0 && !input_ranks) || nb_sizes < 0)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "expr_program_validate: "
                                                    "bad input or size counts");
    has_size = base_calloc((size_t)p->nb_nodes, 1);
    if (!has_size)
        return base_error(PRT_ERR_OUT_OF_MEMORY,
                          "out of memory validating "
                          "%d expression nodes",
                          p->nb_nodes);
    st = validate_nodes(p, nb_inputs, input_ranks, value_counts, nb_sizes, has_size);
    base_free(has_size);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Copy                                                                      */
/* ------------------------------------------------------------------------ */

prt_status expr_program_copy(const expr_program *src, expr_program *dst)
{
    expr_node *nodes;
    if (!program_ok(src) || !dst)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "expr_program_copy: bad "
                                                    "program");
    nodes = base_malloc((size_t)src->nb_nodes * sizeof *nodes);
    if (!nodes)
        return base_error(PRT_ERR_OUT_OF_MEMORY,
                          "out of memory copying %d "
                          "expression nodes",
                          src->nb_nodes);
    if (src->nb_nodes)
        memcpy(nodes, src->nodes, (size_t)src->nb_nodes * sizeof *nodes);
    dst->nb_nodes = src->nb_nodes;
    dst->nodes = nodes;
    return PRT_OK;
}

void expr_program_free(expr_program *p)
{
    if (!p)
        return;
    base_free(p->nodes);
    p->nodes = NULL;
    p->nb_nodes = 0;
}

/* ------------------------------------------------------------------------ */
/* Concrete evaluation                                                       */
/* ------------------------------------------------------------------------ */

static prt_status eval_input(const expr_node *n, int32_t i, const expr_env *env,
                             int64_t *value)
{
    const prt_dims *d;
    if (n->a < 0 || n->a >= env->nb_inputs || !env->input_dims)
        return base_error(PRT_ERR_SHAPE,
                          "expression node %d: input %d out "
                          "of range (%d inputs given)",
                          i, (int)n->a, (int)env->nb_inputs);
    d = &env->input_dims[n->a];
    if (n->b < 0 || n->b >= d->nb_dims || n->b >= PRT_MAX_DIMS)
        return base_error(PRT_ERR_SHAPE,
                          "expression node %d: input %d has "
                          "rank %d, no dim %d",
                          i, (int)n->a, (int)d->nb_dims, (int)n->b);
    *value = d->d[n->b];
    return PRT_OK;
}

static prt_status eval_value(const expr_node *n, int32_t i, const expr_env *env,
                             int64_t *value)
{
    const prt_dims *v;
    if (n->a < 0 || n->a >= env->nb_inputs || !env->input_values)
        return base_error(PRT_ERR_SHAPE,
                          "expression node %d: no values for "
                          "shape input %d",
                          i, (int)n->a);
    v = &env->input_values[n->a];
    if (n->b < 0 || n->b >= v->nb_dims || n->b >= PRT_MAX_DIMS)
        return base_error(PRT_ERR_SHAPE,
                          "expression node %d: shape input %d "
                          "has %d values, no value %d",
                          i, (int)n->a, (int)v->nb_dims, (int)n->b);
    *value = v->d[n->b];
    return PRT_OK;
}

static prt_status eval_size(const expr_node *n, int32_t i, const expr_env *env,
                            int64_t *value, uint8_t *known)
{
    if (n->imm < 0 || n->imm >= env->nb_sizes || !env->size_values)
        return base_error(PRT_ERR_SHAPE,
                          "expression node %d: size %lld out "
                          "of range (%d sizes given)",
                          i, (long long)n->imm, (int)env->nb_sizes);
    *known = env->size_known ? env->size_known[n->imm] != 0 : 1;
    *value = env->size_values[n->imm];
    return PRT_OK;
}

static prt_status eval_op(const expr_node *n, int32_t i, int64_t *values, uint8_t *known)
{
    int64_t a = values[n->a], b = values[n->b];
    const char *why;
    /* An unknown size makes its users unknown, not wrong: the runtime asks
     * again once the plugin that produces it has run. */
    known[i] = known[n->a] && known[n->b];
    if (!known[i])
        return PRT_OK;
    why = expr_apply(n->op, a, b, &values[i]);
    if (why)
        return base_error(PRT_ERR_SHAPE,
                          "expression node %d = %s(node %d, "
                          "node %d) = %s(%lld, %lld): %s",
                          i, expr_op_name(n->op), (int)n->a, (int)n->b,
                          expr_op_name(n->op), (long long)a, (long long)b, why);
    return PRT_OK;
}

static prt_status eval_node(const expr_program *p, int32_t i, const expr_env *env,
                            int64_t *values, uint8_t *known)
{
    const expr_node *n = &p->nodes[i];
    prt_status st = check_operands(n, i);
    if (st != PRT_OK)
        return st;
    known[i] = 1;
    switch (n->kind) {
    case EXPR_CONST:
        values[i] = n->imm;
        return PRT_OK;
    case EXPR_INPUT_DIM:
        return eval_input(n, i, env, &values[i]);
    case EXPR_INPUT_VALUE:
        return eval_value(n, i, env, &values[i]);
    case EXPR_SIZE:
        return eval_size(n, i, env, &values[i], &known[i]);
    default:
        return eval_op(n, i, values, known);
    }
}

prt_status expr_program_eval(const expr_program *p, const expr_env *env, int64_t *values,
                             uint8_t *known)
{
    if (!program_ok(p) || !env || (p->nb_nodes > 0 && (!values || !known)))
        return base_error(PRT_ERR_INVALID_ARGUMENT, "expr_program_eval: bad "
                                                    "arguments");
    for (int32_t i = 0; i < p->nb_nodes; i++) {
        prt_status st = eval_node(p, i, env, values, known);
        if (st != PRT_OK)
            return st;
    }
    return PRT_OK;
}

/* ------------------------------------------------------------------------ */
/* Bounds over a profile                                                     */
/* ------------------------------------------------------------------------ */

typedef struct interval {
    int64_t lo;
    int64_t hi;
} interval;

/* Over a box, the real product and quotient are extreme at corners (each is
 * monotone in either argument while the divisor keeps its sign), and floor
 * and ceil are monotone, so the extreme corners bound the rounded result. */
static const char *corners(int32_t op, interval a, interval b, interval *r)
{
    int64_t xs[2] = {a.lo, a.hi}, ys[2] = {b.lo, b.hi};
    for (int k = 0; k < 4; k++) {
        int64_t v;
        const char *why = expr_apply(op, xs[k >> 1], ys[k & 1], &v);
        if (why)
            return why;
        if (k == 0 || v < r->lo)
            r->lo = v;
        if (k == 0 || v > r->hi)
            r->hi = v;
    }
    return NULL;
}

/* 0/1 results: exact when the intervals decide the comparison. */
static interval compare(int32_t op, interval a, interval b)
{
    interval never = {0, 0}, always = {1, 1}, maybe = {0, 1};
    if (op == PRT_DIM_EQUAL) {
        if (a.hi < b.lo || b.hi < a.lo)
            return never;
        return a.lo == a.hi && b.lo == b.hi ? always : maybe;
    }
    if (a.hi < b.lo)
        return always;
    return a.lo >= b.hi ? never : maybe;
}

/* The interval of op over a x b; NULL, or the reason it has none. */
static const char *interval_op(int32_t op, interval a, interval b, interval *r)
{
    switch (op) {
    case PRT_DIM_SUM:
        return expr_apply(op, a.lo, b.lo, &r->lo) ? "overflow"
                                                  : expr_apply(op, a.hi, b.hi, &r->hi);
    case PRT_DIM_SUB:
        return expr_apply(op, a.lo, b.hi, &r->lo) ? "overflow"
                                                  : expr_apply(op, a.hi, b.lo, &r->hi);
    case PRT_DIM_MAX:
    case PRT_DIM_MIN: /* monotone in both; cannot fail */
        expr_apply(op, a.lo, b.lo, &r->lo);
        expr_apply(op, a.hi, b.hi, &r->hi);
        return NULL;
    case PRT_DIM_EQUAL:
    case PRT_DIM_LESS:
        *r = compare(op, a, b);
        return NULL;
    case PRT_DIM_FLOOR_DIV:
    case PRT_DIM_CEIL_DIV:
        if (b.lo <= 0 && b.hi >= 0)
            return "the divisor's range contains 0";
        return corners(op, a, b, r);
    default:
        return corners(op, a, b, r); /* PROD */
    }
}

/* An input dim, or a shape input's value: both are boxes in the profile. */
static prt_status bounds_input(const expr_node *n, int32_t i, const expr_profile *prof,
                               int64_t *lo, int64_t *opt, int64_t *hi)
{
    int32_t in = n->a, d = n->b;
    int values = n->kind == EXPR_INPUT_VALUE;
    const prt_dims *mn = values ? prof->vmin : prof->min;
    const prt_dims *op = values ? prof->vopt : prof->opt;
    const prt_dims *mx = values ? prof->vmax : prof->max;
    if (in < 0 || in >= prof->nb_inputs || !mn || !op || !mx)
        return base_error(PRT_ERR_SHAPE,
                          "expression node %d: input %d out "
                          "of range (%d in the profile)",
                          i, (int)in, (int)prof->nb_inputs);
    if (d < 0 || d >= PRT_MAX_DIMS || d >= mn[in].nb_dims || d >= op[in].nb_dims ||
        d >= mx[in].nb_dims)
        return base_error(PRT_ERR_SHAPE,
                          "expression node %d: input %d %s %d "
                          "not in the profile",
                          i, (int)in, values ? "value" : "dim", (int)d);
    lo[i] = mn[in].d[d];
    opt[i] = op[in].d[d];
    hi[i] = mx[in].d[d];
    /* Interval arithmetic is only sound over non-empty intervals. */
    if (!(lo[i] <= opt[i] && opt[i] <= hi[i]))
        return base_error(PRT_ERR_SHAPE,
                          "expression node %d: profile of "
                          "input %d dim %d has min %lld, opt %lld, max %lld "
                          "out of order",
                          i, (int)in, (int)d, (long long)lo[i], (long long)opt[i],
                          (long long)hi[i]);
    return PRT_OK;
}

/* A size symbol lies in [0, its upper bound]. It is tuned at its opt,
 * clamped into that range (a size is never negative, so neither is the value
 * everything after it is tuned and folded for). */
static prt_status bounds_size(const expr_node *n, int32_t i, int64_t *lo, int64_t *opt,
                              int64_t *hi)
{
    lo[i] = 0;
    hi[i] = hi[n->b];
    opt[i] = opt[n->a] < 0 ? 0 : opt[n->a] > hi[i] ? hi[i] : opt[n->a];
    if (hi[i] < 0)
        return base_error(PRT_ERR_SHAPE,
                          "expression node %d: size %lld has "
                          "an upper bound (node %d) that is never above %lld",
                          i, (long long)n->imm, (int)n->b, (long long)hi[i]);
    return PRT_OK;
}

static prt_status bounds_op(const expr_node *n, int32_t i, int64_t *lo, int64_t *opt,
                            int64_t *hi)
{
    interval a = {lo[n->a], hi[n->a]}, b = {lo[n->b], hi[n->b]}, r = {0, 0};
    const char *why = interval_op(n->op, a, b, &r);
    if (!why)
        why = expr_apply(n->op, opt[n->a], opt[n->b], &opt[i]);
    if (why)
        return base_error(PRT_ERR_SHAPE,
                          "expression node %d = %s(node %d, "
                          "node %d) over [%lld, %lld] and [%lld, %lld]: %s",
                          i, expr_op_name(n->op), (int)n->a, (int)n->b, (long long)a.lo,
                          (long long)a.hi, (long long)b.lo, (long long)b.hi, why);
    lo[i] = r.lo;
    hi[i] = r.hi;
    return PRT_OK;
}

prt_status expr_program_bounds(const expr_program *p, const expr_profile *prof,
                               int64_t *lo, int64_t *opt, int64_t *hi)
{
    if (!program_ok(p) || !prof || (p->nb_nodes > 0 && (!lo || !opt || !hi)))
        return base_error(PRT_ERR_INVALID_ARGUMENT, "expr_program_bounds: bad "
                                                    "arguments");
    for (int32_t i = 0; i < p->nb_nodes; i++) {
        const expr_node *n = &p->nodes[i];
        prt_status st = check_operands(n, i);
        if (st != PRT_OK)
            return st;
        if (n->kind == EXPR_CONST) {
            lo[i] = opt[i] = hi[i] = n->imm;
        } else if (n->kind == EXPR_INPUT_DIM || n->kind == EXPR_INPUT_VALUE) {
            st = bounds_input(n, i, prof, lo, opt, hi);
        } else if (n->kind == EXPR_SIZE) {
            st = bounds_size(n, i, lo, opt, hi);
        } else {
            st = bounds_op(n, i, lo, opt, hi);
        }
        if (st != PRT_OK)
            return st;
    }
    return PRT_OK;
}
