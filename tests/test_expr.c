/*
 * Symbolic dimension expressions: construction, hash-consing, folding, the
 * ABI builder table, size tensors, concrete evaluation, bounds, validation
 * and allocation failure. Every expected value is computed here by a plain
 * reference (ref_apply, brute force over a box, or a reference program
 * evaluator), never copied from the implementation.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr.h"
#include "testutil.h"

/* ------------------------------------------------------------------------ */
/* Reference arithmetic, written independently of expr_ops.c                */
/* ------------------------------------------------------------------------ */

/* floor(a / b) from the definition: the q with q * b <= a < (q + 1) * b for
 * b > 0, reduced to that case by symmetry. Inputs are small enough (checked
 * by callers) that nothing overflows. */
static int64_t ref_floor_div(int64_t a, int64_t b)
{
    if (b < 0)
        return ref_floor_div(-a, -b);
    if (a >= 0)
        return a / b;
    return -((-a + b - 1) / b);
}

static int64_t ref_ceil_div(int64_t a, int64_t b)
{
    return -ref_floor_div(-a, b);
}

/* The float32 a FLOOR_MUL_F32 key stands for: |key| is its bits, the
 * key's sign its sign. */
static float ref_key_float(int64_t key)
{
    uint32_t u = key < 0 ? 0x80000000u | (uint32_t)-key : (uint32_t)key;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* floor(a * f) in double: exact while |a| < 2^29 (f has 24 bits). */
static int64_t ref_floor_mul(int64_t a, int64_t key)
{
    return (int64_t)floor((double)a * (double)ref_key_float(key));
}

static int64_t ref_apply(int op, int64_t a, int64_t b)
{
    switch (op) {
    case PRT_DIM_SUM:
        return a + b;
    case PRT_DIM_PROD:
        return a * b;
    case PRT_DIM_MAX:
        return a > b ? a : b;
    case PRT_DIM_MIN:
        return a < b ? a : b;
    case PRT_DIM_SUB:
        return a - b;
    case PRT_DIM_EQUAL:
        return a == b ? 1 : 0;
    case PRT_DIM_LESS:
        return a < b ? 1 : 0;
    case PRT_DIM_FLOOR_DIV:
        return ref_floor_div(a, b);
    case PRT_DIM_FLOOR_MUL_F32:
        return ref_floor_mul(a, b);
    default:
        return ref_ceil_div(a, b);
    }
}

static int is_div(int op)
{
    return op == PRT_DIM_FLOOR_DIV || op == PRT_DIM_CEIL_DIV;
}

static prt_dims dims2(int64_t d0, int64_t d1)
{
    int64_t d[2] = {d0, d1};
    return tu_dims(2, d);
}

/* ------------------------------------------------------------------------ */
/* Every operation, on constants and on symbols                              */
/* ------------------------------------------------------------------------ */

/* The double-based floor/ceil cross-check the integer reference itself. */
static void test_reference_division(void)
{
    for (int64_t a = -20; a <= 20; a++) {
        for (int64_t b = -7; b <= 7; b++) {
            if (b == 0)
                continue;
            CHECK(ref_floor_div(a, b) == (int64_t)floor((double)a / (double)b));
            CHECK(ref_ceil_div(a, b) == (int64_t)ceil((double)a / (double)b));
        }
    }
}

static void test_fold_constants(void)
{
    expr_pool *pool = expr_pool_create();
    int bad = 0;
    CHECK(pool != NULL);
    if (!pool)
        return;
    for (int op = 0; op < EXPR_OP_COUNT; op++) {
        for (int64_t a = -9; a <= 9; a++) {
            for (int64_t b = -9; b <= 9; b++) {
                const prt_expr *e;
                int64_t v = 0;
                if (is_div(op) && b == 0)
                    continue;
                e = expr_op(pool, op, expr_const(pool, a), expr_const(pool, b));
                if (!e || !expr_is_const(pool, e, &v) || v != ref_apply(op, a, b)) {
                    bad++;
                    fprintf(stderr, "fold %s(%lld, %lld) wrong\n", expr_op_name(op),
                            (long long)a, (long long)b);
                }
            }
        }
    }
    CHECK(bad == 0);
    expr_pool_destroy(pool);
}

/* op(x, y) on two input dims, evaluated over a grid including negatives. */
static void test_eval_ops(void)
{
    expr_pool *pool = expr_pool_create();
    const prt_expr *x, *y, *e[EXPR_OP_COUNT];
    const expr_program *p;
    int bad = 0;
    CHECK(pool != NULL);
    if (!pool)
        return;
    x = expr_input_dim(pool, 0, 0);
    y = expr_input_dim(pool, 0, 1);
    for (int op = 0; op < EXPR_OP_COUNT; op++) {
        e[op] = expr_op(pool, op, x, y);
        CHECK(e[op] != NULL && !expr_is_const(pool, e[op], NULL));
    }
    p = expr_pool_program(pool);
    for (int64_t a = -11; a <= 11; a++) {
        for (int64_t b = -6; b <= 6; b++) {
            prt_dims d = dims2(a, b);
            expr_env env = {1, &d, 0, NULL, NULL, NULL};
            int64_t values[64];
            uint8_t known[64];
            prt_status st;
            if (b == 0)
                continue;
            st = expr_program_eval(p, &env, values, known);
            CHECK_OK(st);
            for (int op = 0; op < EXPR_OP_COUNT && st == PRT_OK; op++) {
                int32_t id = expr_id(e[op]);
                if (id < 0 || !known[id] || values[id] != ref_apply(op, a, b))
                    bad++;
            }
        }
    }
    CHECK(bad == 0);
    expr_pool_destroy(pool);
}

/* ------------------------------------------------------------------------ */
/* Folding identities and construction errors                                */
/* ------------------------------------------------------------------------ */

static int is_const_value(expr_pool *pool, const prt_expr *e, int64_t want)
{
    int64_t v;
    return e && expr_is_const(pool, e, &v) && v == want;
}

static void test_identities(void)
{
    expr_pool *pool = expr_pool_create();
    const prt_expr *x, *y, *c0, *c1, *e;
    CHECK(pool != NULL);
    if (!pool)
        return;
    x = expr_op(pool, PRT_DIM_SUM, expr_input_dim(pool, 0, 0),
                expr_input_dim(pool, 1, 2));
    y = expr_input_dim(pool, 0, 1);
    c0 = expr_const(pool, 0);
    c1 = expr_const(pool, 1);
    CHECK(x && y && c0 && c1);
    CHECK(expr_op(pool, PRT_DIM_SUM, x, c0) == x);
    CHECK(expr_op(pool, PRT_DIM_SUM, c0, x) == x);
    CHECK(expr_op(pool, PRT_DIM_PROD, x, c1) == x);
    CHECK(expr_op(pool, PRT_DIM_PROD, c1, x) == x);
    CHECK(expr_op(pool, PRT_DIM_PROD, x, c0) == c0);
    CHECK(expr_op(pool, PRT_DIM_PROD, c0, x) == c0);
    CHECK(expr_op(pool, PRT_DIM_SUB, x, c0) == x);
    CHECK(is_const_value(pool, expr_op(pool, PRT_DIM_SUB, x, x), 0));
    CHECK(expr_op(pool, PRT_DIM_MAX, x, x) == x);
    CHECK(expr_op(pool, PRT_DIM_MIN, x, x) == x);
    CHECK(is_const_value(pool, expr_op(pool, PRT_DIM_EQUAL, x, x), 1));
    CHECK(is_const_value(pool, expr_op(pool, PRT_DIM_LESS, x, x), 0));
    CHECK(expr_op(pool, PRT_DIM_FLOOR_DIV, x, c1) == x);
    CHECK(expr_op(pool, PRT_DIM_CEIL_DIV, x, c1) == x);

    /* Not identities: these need nodes. */
    e = expr_op(pool, PRT_DIM_SUB, c0, x);
    CHECK(e && e != x && !expr_is_const(pool, e, NULL));
    e = expr_op(pool, PRT_DIM_FLOOR_DIV, c1, x);
    CHECK(e && e != x && !expr_is_const(pool, e, NULL));
    e = expr_op(pool, PRT_DIM_SUM, x, c1);
    CHECK(e && e != x && expr_id(e) > expr_id(x));
    CHECK(expr_op(pool, PRT_DIM_SUB, x, y) != c0);

    /* Division by a constant zero, symbolic or constant numerator. */
    CHECK(expr_op(pool, PRT_DIM_FLOOR_DIV, x, c0) == NULL);
    CHECK(strstr(expr_pool_error(pool), "zero") != NULL);
    CHECK(strstr(prt_last_error(), "zero") != NULL);
    CHECK(expr_op(pool, PRT_DIM_CEIL_DIV, x, c0) == NULL);
    CHECK(expr_op(pool, PRT_DIM_CEIL_DIV, c1, c0) == NULL);
    CHECK(strstr(expr_pool_error(pool), "zero") != NULL);
    expr_pool_destroy(pool);
}

static void check_overflow(expr_pool *pool, int op, int64_t a, int64_t b)
{
    const prt_expr *e = expr_op(pool, op, expr_const(pool, a), expr_const(pool, b));
    CHECK(e == NULL);
    CHECK(strstr(expr_pool_error(pool), "overflow") != NULL);
}

static void test_construction_errors(void)
{
    expr_pool *pool = expr_pool_create();
    expr_pool *other = expr_pool_create();
    const prt_expr *x, *foreign;
    CHECK(pool && other);
    if (!pool || !other)
        goto done;
    check_overflow(pool, PRT_DIM_SUM, INT64_MAX, 1);
    check_overflow(pool, PRT_DIM_SUB, INT64_MIN, 1);
    check_overflow(pool, PRT_DIM_PROD, INT64_MAX / 2 + 1, 2);
    check_overflow(pool, PRT_DIM_PROD, INT64_MIN, -1);
    check_overflow(pool, PRT_DIM_FLOOR_DIV, INT64_MIN, -1);
    check_overflow(pool, PRT_DIM_CEIL_DIV, INT64_MIN, -1);
    /* Extremes that do not overflow still fold. */
    CHECK(is_const_value(pool,
                         expr_op(pool, PRT_DIM_SUM, expr_const(pool, INT64_MAX),
                                 expr_const(pool, INT64_MIN)),
                         -1));
    CHECK(is_const_value(pool,
                         expr_op(pool, PRT_DIM_FLOOR_DIV, expr_const(pool, INT64_MIN),
                                 expr_const(pool, 2)),
                         INT64_MIN / 2));

    x = expr_input_dim(pool, 0, 0);
    CHECK(expr_op(pool, -1, x, x) == NULL);
    CHECK(strstr(expr_pool_error(pool), "-1") != NULL);
    CHECK(expr_op(pool, EXPR_OP_COUNT, x, x) == NULL);
    CHECK(expr_input_dim(pool, -1, 0) == NULL);
    CHECK(expr_input_dim(pool, 0, PRT_MAX_DIMS) == NULL);
    CHECK(expr_input_dim(pool, 0, -1) == NULL);
    CHECK(expr_op(pool, PRT_DIM_SUM, x, NULL) == NULL);
    CHECK(expr_op(pool, PRT_DIM_SUM, NULL, x) == NULL);
    CHECK(expr_op(NULL, PRT_DIM_SUM, x, x) == NULL);
    CHECK(expr_const(NULL, 1) == NULL);

    /* An expression of another build is refused, not misread. */
    foreign = expr_input_dim(other, 3, 3);
    CHECK(foreign != NULL);
    CHECK(expr_op(pool, PRT_DIM_SUM, x, foreign) == NULL);
    CHECK(strstr(expr_pool_error(pool), "not an expression") != NULL);
    CHECK(!expr_is_const(pool, foreign, NULL));
    CHECK(expr_id(NULL) == -1);
done:
    expr_pool_destroy(pool);
    expr_pool_destroy(other);
}

/* A NULL operand keeps the message of the failure that made it. */
static void test_null_propagation(void)
{
    expr_pool *pool = expr_pool_create();
    const prt_expr *x, *bad, *e;
    CHECK(pool != NULL);
    if (!pool)
        return;
    x = expr_input_dim(pool, 0, 0);
    CHECK(expr_pool_error(pool)[0] == '\0');
    CHECK(expr_op(pool, PRT_DIM_SUM, x, NULL) == NULL);
    CHECK(strstr(expr_pool_error(pool), "NULL") != NULL);
    bad = expr_op(pool, PRT_DIM_FLOOR_DIV, x, expr_const(pool, 0));
    e = expr_op(pool, PRT_DIM_SUM, bad, x);
    e = expr_op(pool, PRT_DIM_PROD, e, x);
    CHECK(bad == NULL && e == NULL);
    CHECK(strstr(expr_pool_error(pool), "zero") != NULL);
    expr_pool_destroy(pool);
}

/* ------------------------------------------------------------------------ */
/* Hash-consing                                                              */
/* ------------------------------------------------------------------------ */

static const prt_expr *build_poly(expr_pool *pool, int32_t k)
{
    /* ((x + k) * (y - k)) max (x ceil_div (k + 1)) */
    const prt_expr *x = expr_input_dim(pool, 0, 0);
    const prt_expr *y = expr_input_dim(pool, 1, 1);
    const prt_expr *c = expr_const(pool, k);
    const prt_expr *l = expr_op(pool, PRT_DIM_PROD, expr_op(pool, PRT_DIM_SUM, x, c),
                                expr_op(pool, PRT_DIM_SUB, y, c));
    const prt_expr *r = expr_op(pool, PRT_DIM_CEIL_DIV, x, expr_const(pool, k + 1));
    return expr_op(pool, PRT_DIM_MAX, l, r);
}

static void test_hash_consing(void)
{
    expr_pool *pool = expr_pool_create();
    const prt_expr *x, *y, *first[600];
    const expr_program *p;
    int32_t count;
    int ok = 1;
    int32_t ranks[2] = {2, 2};
    CHECK(pool != NULL);
    if (!pool)
        return;
    x = expr_input_dim(pool, 0, 0);
    y = expr_input_dim(pool, 1, 1);
    CHECK(x && y && x != y);
    CHECK(expr_input_dim(pool, 0, 0) == x);
    CHECK(expr_input_dim(pool, 1, 0) != expr_input_dim(pool, 0, 1));
    CHECK(expr_const(pool, 7) == expr_const(pool, 7));
    CHECK(expr_const(pool, 7) != expr_const(pool, 8));
    CHECK(expr_const(pool, -7) != expr_const(pool, 7));
    for (int op = 0; op < EXPR_OP_COUNT; op++) {
        const prt_expr *xy = expr_op(pool, op, x, y);
        const prt_expr *yx = expr_op(pool, op, y, x);
        int commutes = op == PRT_DIM_SUM || op == PRT_DIM_PROD || op == PRT_DIM_MAX ||
                       op == PRT_DIM_MIN || op == PRT_DIM_EQUAL;
        CHECK(xy && yx);
        CHECK(expr_op(pool, op, x, y) == xy);
        CHECK((xy == yx) == commutes);
        for (int other = 0; other < op; other++)
            CHECK(expr_op(pool, other, x, y) != xy);
    }
    /* Many nodes: crosses chunk boundaries and table growth; every pointer
     * built first must come back unchanged (stable, one per expression). */
    for (int32_t k = 0; k < 600; k++)
        first[k] = build_poly(pool, k);
    p = expr_pool_program(pool);
    count = p->nb_nodes;
    CHECK(count > 2000);
    for (int32_t k = 0; k < 600; k++) {
        if (!first[k] || build_poly(pool, k) != first[k])
            ok = 0;
        if (k > 0 && first[k] == first[k - 1])
            ok = 0;
    }
    CHECK(ok);
    CHECK(expr_pool_program(pool)->nb_nodes == count);
    /* Ids are dense, operands come first: the pool is a valid program. */
    CHECK_OK(expr_program_validate(expr_pool_program(pool), 2, ranks, NULL, 0));
    expr_pool_destroy(pool);
}

/* ------------------------------------------------------------------------ */
/* The ABI builder table                                                     */
/* ------------------------------------------------------------------------ */

static void test_builder_abi(void)
{
    expr_pool *pool = expr_pool_create();
    prt_expr_builder *b;
    const prt_expr *c6, *c7, *sum, *x, *s;
    int64_t v = 0;
    CHECK(pool != NULL);
    if (!pool)
        return;
    b = expr_pool_builder(pool);
    CHECK(b != NULL && b->struct_size == sizeof(prt_expr_builder));
    CHECK(b->abi_version == PRT_PLUGIN_ABI_VERSION);
    CHECK(b->constant && b->operation && b->declare_size_tensor && b->is_constant);
    c6 = b->constant(b, 6);
    c7 = b->constant(b, 7);
    CHECK(c6 == expr_const(pool, 6));
    sum = b->operation(b, PRT_DIM_PROD, c6, c7);
    CHECK(b->is_constant(b, sum, &v) == 1 && v == 42);
    CHECK(b->is_constant(b, sum, NULL) == 1);
    x = expr_input_dim(pool, 0, 0);
    sum = b->operation(b, PRT_DIM_SUM, x, c6);
    CHECK(sum == expr_op(pool, PRT_DIM_SUM, c6, x));
    v = 99;
    CHECK(b->is_constant(b, sum, &v) == 0 && v == 99);
    CHECK(b->operation(b, 1000, x, c6) == NULL);
    CHECK(b->operation(b, PRT_DIM_SUM, NULL, c6) == NULL);
    CHECK(b->is_constant(b, NULL, &v) == 0);

    CHECK(b->declare_size_tensor(b, 0, x, sum) == NULL); /* no layer yet */
    expr_pool_begin_layer(pool, 5, 2);
    s = b->declare_size_tensor(b, 1, x, sum);
    CHECK(s != NULL && b->is_constant(b, s, &v) == 0);
    CHECK(s == expr_size(pool, 1, x, sum));
    CHECK(expr_pool_size_count(pool) == 1);
    expr_pool_destroy(pool);
}

/* ------------------------------------------------------------------------ */
/* Size tensors                                                              */
/* ------------------------------------------------------------------------ */

static void test_size_rules(void)
{
    expr_pool *pool = expr_pool_create();
    const prt_expr *x, *up, *s0, *s1, *e;
    int32_t layer, out;
    CHECK(pool != NULL);
    if (!pool)
        return;
    x = expr_input_dim(pool, 0, 0);
    up = expr_op(pool, PRT_DIM_PROD, x, expr_const(pool, 4));
    CHECK(expr_size(pool, 0, x, up) == NULL);
    CHECK(strstr(expr_pool_error(pool), "outside") != NULL);

    expr_pool_begin_layer(pool, 3, 2);
    CHECK(expr_size(pool, 2, x, up) == NULL);
    CHECK(strstr(expr_pool_error(pool), "no output 2") != NULL);
    CHECK(expr_size(pool, -1, x, up) == NULL);
    CHECK(expr_size(pool, 0, x, expr_const(pool, -1)) == NULL);
    CHECK(expr_size(pool, 0, NULL, up) == NULL);
    CHECK(expr_pool_size_count(pool) == 0);

    s0 = expr_size(pool, 0, x, up);
    CHECK(s0 != NULL && expr_pool_size_count(pool) == 1);
    CHECK(expr_size(pool, 0, x, up) == s0);    /* same declaration */
    CHECK(expr_size(pool, 0, up, up) == NULL); /* different opt */
    CHECK(strstr(expr_pool_error(pool), "again") != NULL);
    CHECK(expr_size(pool, 0, x, x) == NULL); /* different upper */

    /* opt may not depend on a size, however indirectly; upper may. */
    e = expr_op(pool, PRT_DIM_MIN, expr_op(pool, PRT_DIM_SUM, s0, x), up);
    CHECK(expr_size(pool, 1, e, up) == NULL);
    CHECK(strstr(expr_pool_error(pool), "opt depends on a size") != NULL);
    s1 = expr_size(pool, 1, x, e);
    CHECK(s1 != NULL && s1 != s0);

    /* Another layer with the same opt and upper is a new symbol. */
    expr_pool_begin_layer(pool, 4, 2);
    e = expr_size(pool, 0, x, up);
    CHECK(e != NULL && e != s0 && e != s1);
    /* s0 - s0 folds to 0, so it no longer depends on a size. */
    CHECK(expr_size(pool, 1, expr_op(pool, PRT_DIM_SUB, s0, s0), e) != NULL);
    /* Back in layer 3 (another profile), the old symbol is found. */
    expr_pool_begin_layer(pool, 3, 2);
    CHECK(expr_size(pool, 0, x, up) == s0);
    CHECK(expr_pool_size_count(pool) == 4);
    expr_pool_size_owner(pool, 1, &layer, &out);
    CHECK(layer == 3 && out == 1);
    expr_pool_size_owner(pool, 2, &layer, &out);
    CHECK(layer == 4 && out == 0);
    expr_pool_size_owner(pool, 3, &layer, &out);
    CHECK(layer == 4 && out == 1);
    expr_pool_size_owner(pool, 4, &layer, &out);
    CHECK(layer == -1 && out == -1);
    /* SIZE nodes are not constants and are distinct from everything. */
    CHECK(!expr_is_const(pool, s0, NULL));
    CHECK(expr_op(pool, PRT_DIM_SUM, s0, s1) != expr_op(pool, PRT_DIM_SUM, s0, s0));
    expr_pool_destroy(pool);
}

/* ------------------------------------------------------------------------ */
/* Concrete evaluation                                                       */
/* ------------------------------------------------------------------------ */

static void test_eval_unknown(void)
{
    expr_pool *pool = expr_pool_create();
    const prt_expr *x, *y, *s, *xs, *xy, *c;
    int64_t values[32], size_value = 0;
    uint8_t known[32], size_known = 0;
    prt_dims d[2];
    expr_env env;
    const expr_program *p;
    CHECK(pool != NULL);
    if (!pool)
        return;
    x = expr_input_dim(pool, 0, 1);
    y = expr_input_dim(pool, 1, 0);
    expr_pool_begin_layer(pool, 0, 1);
    s = expr_size(pool, 0, x, expr_op(pool, PRT_DIM_PROD, x, y));
    xs = expr_op(pool, PRT_DIM_PROD, x, s);
    xy = expr_op(pool, PRT_DIM_SUB, x, y);
    c = expr_const(pool, -3);
    CHECK(s && xs && xy && c);
    p = expr_pool_program(pool);
    CHECK(p->nb_nodes <= 32);
    d[0] = dims2(2, 9);
    d[1] = dims2(4, 1);
    env = (expr_env){2, d, 1, &size_value, &size_known, NULL};
    CHECK_OK(expr_program_eval(p, &env, values, known));
    CHECK(known[expr_id(x)] && values[expr_id(x)] == 9);
    CHECK(known[expr_id(y)] && values[expr_id(y)] == 4);
    CHECK(known[expr_id(xy)] && values[expr_id(xy)] == 9 - 4);
    CHECK(known[expr_id(c)] && values[expr_id(c)] == -3);
    CHECK(!known[expr_id(s)] && !known[expr_id(xs)]);

    size_known = 1;
    size_value = 17;
    CHECK_OK(expr_program_eval(p, &env, values, known));
    CHECK(known[expr_id(s)] && values[expr_id(s)] == 17);
    CHECK(known[expr_id(xs)] && values[expr_id(xs)] == 9 * 17);
    env.size_known = NULL; /* all known */
    CHECK_OK(expr_program_eval(p, &env, values, known));
    CHECK(known[expr_id(xs)] && values[expr_id(xs)] == 9 * 17);

    /* Fewer inputs or sizes than the program names. */
    env.nb_inputs = 1;
    CHECK_ERR(expr_program_eval(p, &env, values, known), PRT_ERR_SHAPE, "input 1");
    env.nb_inputs = 2;
    env.nb_sizes = 0;
    CHECK_ERR(expr_program_eval(p, &env, values, known), PRT_ERR_SHAPE, "size 0");
    d[0].nb_dims = 1;
    env.nb_sizes = 1;
    CHECK_ERR(expr_program_eval(p, &env, values, known), PRT_ERR_SHAPE, "no dim 1");
    expr_pool_destroy(pool);
}

static void test_eval_errors(void)
{
    expr_pool *pool = expr_pool_create();
    const prt_expr *x, *y, *prod, *fdiv, *cdiv, *sub;
    int64_t values[16];
    uint8_t known[16];
    prt_dims d;
    expr_env env = {1, &d, 0, NULL, NULL, NULL};
    char want[64];
    CHECK(pool != NULL);
    if (!pool)
        return;
    x = expr_input_dim(pool, 0, 0);
    y = expr_input_dim(pool, 0, 1);
    prod = expr_op(pool, PRT_DIM_PROD, x, y);
    CHECK(prod != NULL);
    d = dims2(INT64_C(1) << 32, INT64_C(1) << 31);
    snprintf(want, sizeof want, "node %d", (int)expr_id(prod));
    CHECK_ERR(expr_program_eval(expr_pool_program(pool), &env, values, known),
              PRT_ERR_SHAPE, want);
    CHECK(strstr(prt_last_error(), "overflow") != NULL);
    d = dims2(INT64_C(1) << 31, INT64_C(1) << 31);
    CHECK_OK(expr_program_eval(expr_pool_program(pool), &env, values, known));
    CHECK(values[expr_id(prod)] == INT64_C(1) << 62);

    fdiv = expr_op(pool, PRT_DIM_FLOOR_DIV, x, y);
    cdiv = expr_op(pool, PRT_DIM_CEIL_DIV, y, x);
    sub = expr_op(pool, PRT_DIM_SUB, x, y);
    CHECK(fdiv && cdiv && sub);
    d = dims2(5, 0);
    snprintf(want, sizeof want, "node %d", (int)expr_id(fdiv));
    CHECK_ERR(expr_program_eval(expr_pool_program(pool), &env, values, known),
              PRT_ERR_SHAPE, want);
    CHECK(strstr(prt_last_error(), "division by zero") != NULL);
    d = dims2(0, 5);
    snprintf(want, sizeof want, "node %d", (int)expr_id(cdiv));
    CHECK_ERR(expr_program_eval(expr_pool_program(pool), &env, values, known),
              PRT_ERR_SHAPE, want);
    d = dims2(INT64_MIN, 1);
    snprintf(want, sizeof want, "node %d", (int)expr_id(sub));
    CHECK_ERR(expr_program_eval(expr_pool_program(pool), &env, values, known),
              PRT_ERR_SHAPE, want);
    CHECK_ERR(expr_program_eval(NULL, &env, values, known), PRT_ERR_INVALID_ARGUMENT,
              NULL);
    expr_pool_destroy(pool);
}

/* ------------------------------------------------------------------------ */
/* Bounds                                                                    */
/* ------------------------------------------------------------------------ */

/* An input box [a0, a1] x [b0, b1] with opt point (ao, bo). */
typedef struct box {
    int64_t a0, a1, b0, b1, ao, bo;
} box;

/* For one op over two independent input dims, interval arithmetic is exact:
 * bounds must equal the brute-force range over the box, and be refused
 * exactly when a divisor range contains 0. Returns 1 on a mismatch. */
static int check_box(expr_pool *pool, int op, const prt_expr *e, box x, int *refused)
{
    prt_dims mn = dims2(x.a0, x.b0), o = dims2(x.ao, x.bo), mx = dims2(x.a1, x.b1);
    expr_profile prof = {1, &mn, &o, &mx, NULL, NULL, NULL};
    int64_t lo[4], opt[4], hi[4], rlo = INT64_MAX, rhi = INT64_MIN;
    int32_t id = expr_id(e);
    prt_status st;
    if (id < 0 || expr_pool_program(pool)->nb_nodes > 4)
        return 1;
    st = expr_program_bounds(expr_pool_program(pool), &prof, lo, opt, hi);
    if (is_div(op) && x.b0 <= 0 && x.b1 >= 0) {
        (*refused)++;
        return st != PRT_ERR_SHAPE || !strstr(prt_last_error(), "contains 0");
    }
    for (int64_t a = x.a0; a <= x.a1; a++) {
        for (int64_t b = x.b0; b <= x.b1; b++) {
            int64_t v = ref_apply(op, a, b);
            rlo = v < rlo ? v : rlo;
            rhi = v > rhi ? v : rhi;
        }
    }
    if (st == PRT_OK && lo[id] == rlo && hi[id] == rhi &&
        opt[id] == ref_apply(op, x.ao, x.bo))
        return 0;
    fprintf(stderr, "bounds %s [%lld,%lld]x[%lld,%lld]: want [%lld,%lld]\n",
            expr_op_name(op), (long long)x.a0, (long long)x.a1, (long long)x.b0,
            (long long)x.b1, (long long)rlo, (long long)rhi);
    return 1;
}

static void test_bounds_exact_single_op(void)
{
    tu_rng rng;
    int bad = 0, boxes = 0, refused = 0;
    tu_rng_seed(&rng, 7);
    for (int op = 0; op < EXPR_OP_COUNT; op++) {
        expr_pool *pool = expr_pool_create();
        const prt_expr *e;
        if (!pool) {
            bad++;
            continue;
        }
        e = expr_op(pool, op, expr_input_dim(pool, 0, 0), expr_input_dim(pool, 0, 1));
        /* Every small box, point boxes and touching boxes included. */
        for (int64_t a0 = -3; a0 <= 3; a0++)
            for (int64_t wa = 0; wa <= 2; wa++)
                for (int64_t b0 = -3; b0 <= 3; b0++)
                    for (int64_t wb = 0; wb <= 2; wb++, boxes++)
                        bad += check_box(
                            pool, op, e,
                            (box){a0, a0 + wa, b0, b0 + wb, a0 + wa / 2, b0 + wb},
                            &refused);
        /* Wider random boxes. */
        for (int k = 0; k < 100; k++, boxes++) {
            box x;
            x.a0 = tu_rng_range(&rng, -40, 40);
            x.a1 = x.a0 + tu_rng_range(&rng, 0, 30);
            x.b0 = tu_rng_range(&rng, -20, 20);
            x.b1 = x.b0 + tu_rng_range(&rng, 0, 15);
            x.ao = tu_rng_range(&rng, x.a0, x.a1);
            x.bo = tu_rng_range(&rng, x.b0, x.b1);
            bad += check_box(pool, op, e, x, &refused);
        }
        expr_pool_destroy(pool);
    }
    CHECK(bad == 0);
    CHECK(boxes > 4000 && refused > 100);
}

/* A reference program the test builds alongside the pool. */
enum { R_CONST, R_INPUT, R_SIZE, R_OP };
#define R_MAX 64
typedef struct ref_prog {
    int n;
    int kind[R_MAX], op[R_MAX], a[R_MAX], b[R_MAX];
    int64_t imm[R_MAX];
    int has_size[R_MAX];
    const prt_expr *e[R_MAX];
} ref_prog;

static int ref_push(ref_prog *r, int kind, int op, int a, int b, int64_t imm,
                    const prt_expr *e)
{
    int i = r->n++;
    r->kind[i] = kind;
    r->op[i] = op;
    r->a[i] = a;
    r->b[i] = b;
    r->imm[i] = imm;
    r->e[i] = e;
    r->has_size[i] =
        kind == R_SIZE || (kind == R_OP && (r->has_size[a] || r->has_size[b]));
    return i;
}

static int ref_op(ref_prog *r, expr_pool *pool, int op, int a, int b)
{
    return ref_push(r, R_OP, op, a, b, 0, expr_op(pool, op, r->e[a], r->e[b]));
}

/* Values in __int128 so that the reference itself never overflows for the
 * small programs built here; *wide is set if a value leaves int64. */
static void ref_eval(const ref_prog *r, const prt_dims *in, int64_t size_v, __int128 *v,
                     int *wide)
{
    const __int128 lim = (__int128)INT64_MAX;
    *wide = 0;
    for (int i = 0; i < r->n; i++) {
        __int128 x = v[r->a[i]], y = v[r->b[i]];
        switch (r->kind[i]) {
        case R_CONST:
            v[i] = r->imm[i];
            break;
        case R_INPUT:
            v[i] = in[r->a[i]].d[r->b[i]];
            break;
        case R_SIZE:
            v[i] = size_v;
            break;
        default:
            if (*wide)
                return; /* operands may be garbage: stop */
            if (r->op[i] == PRT_DIM_SUM)
                v[i] = x + y;
            else if (r->op[i] == PRT_DIM_SUB)
                v[i] = x - y;
            else if (r->op[i] == PRT_DIM_PROD)
                v[i] = x * y;
            else /* results no wider than the operands */
                v[i] = ref_apply(r->op[i], (int64_t)x, (int64_t)y);
        }
        if (v[i] > lim || v[i] < -lim - 1)
            *wide = 1;
    }
}

/* Builds a random program over two rank-2 inputs (and maybe one size). */
static void random_program(ref_prog *r, expr_pool *pool, tu_rng *rng, int with_size,
                           int nb_ops)
{
    r->n = 0;
    for (int in = 0; in < 2; in++)
        for (int d = 0; d < 2; d++)
            ref_push(r, R_INPUT, 0, in, d, 0, expr_input_dim(pool, in, d));
    for (int k = 0; k < 3; k++) {
        int64_t c = tu_rng_range(rng, -4, 6);
        ref_push(r, R_CONST, 0, 0, 0, c, expr_const(pool, c));
    }
    if (with_size) {
        int opt = (int)tu_rng_range(rng, 0, r->n - 1);
        int64_t k = tu_rng_range(rng, 0, 5);
        int kc = ref_push(r, R_CONST, 0, 0, 0, k, expr_const(pool, k));
        int up = ref_op(r, pool, PRT_DIM_MAX, (int)tu_rng_range(rng, 0, r->n - 1), kc);
        expr_pool_begin_layer(pool, 0, 1);
        ref_push(r, R_SIZE, 0, opt, up, 0, expr_size(pool, 0, r->e[opt], r->e[up]));
    }
    for (int k = 0; k < nb_ops && r->n < R_MAX - 3; k++) {
        int op = (int)tu_rng_range(rng, 0, EXPR_OP_COUNT - 1);
        int a = (int)tu_rng_range(rng, 0, r->n - 1);
        int b = (int)tu_rng_range(rng, 0, r->n - 1);
        if (is_div(op)) {
            /* A divisor kept away from 0: max(b, 1) or min(b, -1). */
            int pos = (int)tu_rng_range(rng, 0, 1);
            int c = ref_push(r, R_CONST, 0, 0, 0, pos ? 1 : -1,
                             expr_const(pool, pos ? 1 : -1));
            b = ref_op(r, pool, pos ? PRT_DIM_MAX : PRT_DIM_MIN, b, c);
        }
        ref_op(r, pool, op, a, b);
    }
}

static void random_profile(tu_rng *rng, prt_dims *mn, prt_dims *op, prt_dims *mx)
{
    for (int in = 0; in < 2; in++) {
        int64_t lo[2], o[2], hi[2];
        for (int d = 0; d < 2; d++) {
            lo[d] = tu_rng_range(rng, 0, 6);
            hi[d] = lo[d] + tu_rng_range(rng, 0, 8);
            o[d] = tu_rng_range(rng, lo[d], hi[d]);
        }
        mn[in] = tu_dims(2, lo);
        op[in] = tu_dims(2, o);
        mx[in] = tu_dims(2, hi);
    }
}

/* Samples shapes inside the profile (and a size inside its bound); every
 * node's value must match the reference and lie in [lo, hi]. Returns the
 * number of failures. */
static int sample_program(const ref_prog *r, expr_pool *pool, tu_rng *rng,
                          const prt_dims *mn, const prt_dims *mx, const int64_t *lo,
                          const int64_t *hi)
{
    const expr_program *p = expr_pool_program(pool);
    int64_t *values = malloc((size_t)p->nb_nodes * sizeof *values);
    uint8_t *known = malloc((size_t)p->nb_nodes);
    int bad = 0;
    for (int s = 0; s < 200 && values && known; s++) {
        prt_dims in[2] = {mn[0], mn[1]};
        __int128 v[R_MAX], up = 0;
        int64_t size_v = 0;
        int wide;
        expr_env env = {2, in, 1, &size_v, NULL, NULL};
        for (int i = 0; i < 2; i++)
            for (int d = 0; d < 2; d++)
                in[i].d[d] = tu_rng_range(rng, mn[i].d[d], mx[i].d[d]);
        ref_eval(r, in, 0, v, &wide);
        for (int i = 0; i < r->n; i++)
            if (r->kind[i] == R_SIZE)
                up = v[r->b[i]];
        size_v = tu_rng_range(rng, 0, (int64_t)up);
        ref_eval(r, in, size_v, v, &wide);
        if (wide || expr_program_eval(p, &env, values, known) != PRT_OK) {
            bad++; /* bounds succeeded, so nothing may overflow here */
            continue;
        }
        for (int i = 0; i < r->n; i++) {
            int32_t id = expr_id(r->e[i]);
            if (!known[id] || values[id] != (int64_t)v[i] || values[id] < lo[id] ||
                values[id] > hi[id])
                bad++;
        }
    }
    free(values);
    free(known);
    return bad;
}

/* At the opt shapes with each size at its opt (clamped into [0, its
 * bound's hi]), bounds' opt is the value. */
static int check_opt(const ref_prog *r, const prt_dims *opt_dims, const int64_t *opt,
                     const int64_t *hi)
{
    __int128 v[R_MAX];
    int64_t size_opt = 0;
    int wide, bad = 0;
    ref_eval(r, opt_dims, 0, v, &wide);
    for (int i = 0; i < r->n; i++)
        if (r->kind[i] == R_SIZE) {
            int64_t up = hi[expr_id(r->e[i])];
            size_opt = (int64_t)v[r->a[i]];
            size_opt = size_opt < 0 ? 0 : size_opt > up ? up : size_opt;
        }
    ref_eval(r, opt_dims, size_opt, v, &wide);
    for (int i = 0; i < r->n && !wide; i++)
        if (opt[expr_id(r->e[i])] != (int64_t)v[i])
            bad++;
    return bad;
}

static void test_bounds_soundness(void)
{
    tu_rng rng;
    int bad = 0, sound = 0, refused = 0;
    tu_rng_seed(&rng, 2024);
    for (int round = 0; round < 300; round++) {
        expr_pool *pool = expr_pool_create();
        ref_prog r;
        prt_dims mn[2], op[2], mx[2];
        expr_profile prof = {2, mn, op, mx, NULL, NULL, NULL};
        int64_t lo[4 * R_MAX], opt[4 * R_MAX], hi[4 * R_MAX];
        int complete = 1;
        prt_status st;
        if (!pool) {
            bad++;
            break;
        }
        random_program(&r, pool, &rng, round % 2, 6 + round % 12);
        random_profile(&rng, mn, op, mx);
        for (int i = 0; i < r.n; i++)
            complete &= r.e[i] != NULL;
        if (!complete || expr_pool_program(pool)->nb_nodes > 4 * R_MAX) {
            bad++;
            expr_pool_destroy(pool);
            continue;
        }
        st = expr_program_bounds(expr_pool_program(pool), &prof, lo, opt, hi);
        if (st == PRT_OK) {
            sound++;
            bad += sample_program(&r, pool, &rng, mn, mx, lo, hi);
            bad += check_opt(&r, op, opt, hi);
        } else {
            /* Only an overflowing bound may refuse: divisors avoid 0. */
            refused++;
            bad += st != PRT_ERR_SHAPE || !strstr(prt_last_error(), "overflow");
        }
        expr_pool_destroy(pool);
    }
    CHECK(bad == 0);
    CHECK(sound > 200);
    printf("bounds soundness: %d programs sampled, %d refused (overflow)\n", sound,
           refused);
}

static void test_bounds_sizes_and_errors(void)
{
    expr_pool *pool = expr_pool_create();
    const prt_expr *x, *y, *up, *s, *e, *neg;
    int64_t lo[32], opt[32], hi[32];
    prt_dims mn = dims2(2, 3), op = dims2(5, 4), mx = dims2(7, 9);
    expr_profile prof = {1, &mn, &op, &mx, NULL, NULL, NULL};
    const expr_program *p;
    CHECK(pool != NULL);
    if (!pool)
        return;
    x = expr_input_dim(pool, 0, 0);
    y = expr_input_dim(pool, 0, 1);
    up = expr_op(pool, PRT_DIM_PROD, x, y);
    expr_pool_begin_layer(pool, 0, 1);
    s = expr_size(pool, 0, expr_op(pool, PRT_DIM_FLOOR_DIV, up, expr_const(pool, 2)), up);
    e = expr_op(pool, PRT_DIM_SUM, s, x);
    CHECK(s && e);
    p = expr_pool_program(pool);
    CHECK_OK(expr_program_bounds(p, &prof, lo, opt, hi));
    CHECK(lo[expr_id(s)] == 0 && hi[expr_id(s)] == 7 * 9);
    CHECK(opt[expr_id(s)] == (5 * 4) / 2);
    CHECK(lo[expr_id(e)] == 2 && hi[expr_id(e)] == 7 * 9 + 7);
    CHECK(opt[expr_id(e)] == (5 * 4) / 2 + 5);

    /* Divisor range containing 0, named by node. */
    neg = expr_op(pool, PRT_DIM_SUB, y, expr_const(pool, 4)); /* [-1, 5] */
    e = expr_op(pool, PRT_DIM_CEIL_DIV, x, neg);
    CHECK(e != NULL);
    CHECK_ERR(expr_program_bounds(expr_pool_program(pool), &prof, lo, opt, hi),
              PRT_ERR_SHAPE, "contains 0");
    expr_pool_destroy(pool);

    /* Overflow of a bound. */
    pool = expr_pool_create();
    CHECK(pool != NULL);
    if (!pool)
        return;
    mx = dims2(INT64_C(1) << 40, INT64_C(1) << 40);
    x = expr_input_dim(pool, 0, 0);
    y = expr_input_dim(pool, 0, 1);
    CHECK(expr_op(pool, PRT_DIM_PROD, x, y) != NULL);
    CHECK_ERR(expr_program_bounds(expr_pool_program(pool), &prof, lo, opt, hi),
              PRT_ERR_SHAPE, "overflow");
    /* A profile whose min exceeds its max. */
    mx = dims2(1, 9);
    CHECK_ERR(expr_program_bounds(expr_pool_program(pool), &prof, lo, opt, hi),
              PRT_ERR_SHAPE, "out of order");
    /* A profile missing an input the program names. */
    mx = dims2(7, 9);
    prof.nb_inputs = 0;
    CHECK_ERR(expr_program_bounds(expr_pool_program(pool), &prof, lo, opt, hi),
              PRT_ERR_SHAPE, "input 0");
    expr_pool_destroy(pool);
}

/* ------------------------------------------------------------------------ */
/* Validation, copy                                                          */
/* ------------------------------------------------------------------------ */

static prt_status validate1(expr_node bad_last)
{
    /* const 3, input 0 dim 1, size 0 (opt node 0, upper node 1), SUM(1, 2),
     * then the node under test. */
    expr_node nodes[5] = {{EXPR_CONST, 0, 3, 0, 0},
                          {EXPR_INPUT_DIM, 0, 0, 0, 1},
                          {EXPR_SIZE, 0, 0, 0, 1},
                          {EXPR_OP, PRT_DIM_SUM, 0, 1, 2},
                          bad_last};
    expr_program p = {5, nodes};
    int32_t ranks[2] = {2, 3};
    return expr_program_validate(&p, 2, ranks, NULL, 1);
}

static void test_validate(void)
{
    expr_node ok = {EXPR_OP, PRT_DIM_CEIL_DIV, 0, 3, 0};
    expr_node n;
    expr_program empty = {0, NULL}, neg = {-1, NULL}, copy;
    int32_t ranks[1] = {1};
    CHECK_OK(validate1(ok));
    CHECK_OK(validate1((expr_node){EXPR_INPUT_DIM, 0, 0, 1, 2}));
    CHECK_OK(expr_program_validate(&empty, 0, NULL, NULL, 0));
    CHECK_ERR(expr_program_validate(&neg, 0, NULL, NULL, 0), PRT_ERR_MALFORMED, NULL);
    CHECK_ERR(expr_program_validate(NULL, 0, NULL, NULL, 0), PRT_ERR_MALFORMED, NULL);

    n = ok;
    n.a = 4; /* operand is the node itself */
    CHECK_ERR(validate1(n), PRT_ERR_MALFORMED, "node 4");
    n = ok;
    n.b = 7;
    CHECK_ERR(validate1(n), PRT_ERR_MALFORMED, "node 4");
    n = ok;
    n.a = -1;
    CHECK_ERR(validate1(n), PRT_ERR_MALFORMED, "node 4");
    n = ok;
    n.kind = 5;
    CHECK_ERR(validate1(n), PRT_ERR_MALFORMED, "kind 5");
    n = ok;
    n.kind = EXPR_INPUT_VALUE; /* no input has values here */
    CHECK_ERR(validate1(n), PRT_ERR_MALFORMED, "shape input");
    n = ok;
    n.kind = -1;
    CHECK_ERR(validate1(n), PRT_ERR_MALFORMED, "kind -1");
    n = ok;
    n.op = EXPR_OP_COUNT;
    CHECK_ERR(validate1(n), PRT_ERR_MALFORMED, "operation 10");
    n = ok;
    n.op = -2;
    CHECK_ERR(validate1(n), PRT_ERR_MALFORMED, "node 4");
    n = (expr_node){EXPR_INPUT_DIM, 0, 0, 2, 0};
    CHECK_ERR(validate1(n), PRT_ERR_MALFORMED, "input 2");
    n = (expr_node){EXPR_INPUT_DIM, 0, 0, -1, 0};
    CHECK_ERR(validate1(n), PRT_ERR_MALFORMED, "input -1");
    n = (expr_node){EXPR_INPUT_DIM, 0, 0, 0, 2};
    CHECK_ERR(validate1(n), PRT_ERR_MALFORMED, "dim 2");
    n = (expr_node){EXPR_SIZE, 0, 1, 0, 1};
    CHECK_ERR(validate1(n), PRT_ERR_MALFORMED, "size id 1");
    n = (expr_node){EXPR_SIZE, 0, 0, 0, 4};
    CHECK_ERR(validate1(n), PRT_ERR_MALFORMED, "node 4");
    n = (expr_node){EXPR_SIZE, 0, 0, 3, 1}; /* opt depends on size 0 */
    CHECK_ERR(validate1(n), PRT_ERR_MALFORMED, "opt");
    n = (expr_node){EXPR_SIZE, 0, 0, 1, 3}; /* upper may */
    CHECK_OK(validate1(n));

    /* Walks refuse a malformed program too, without reading out of bounds. */
    {
        expr_node nodes[2] = {{EXPR_CONST, 0, 1, 0, 0}, {EXPR_OP, PRT_DIM_SUM, 0, 0, 5}};
        expr_program p = {2, nodes};
        prt_dims d = dims2(1, 1);
        expr_env env = {1, &d, 0, NULL, NULL, NULL};
        expr_profile prof = {1, &d, &d, &d, NULL, NULL, NULL};
        int64_t v[2], lo[2], opt[2], hi[2];
        uint8_t known[2];
        CHECK_ERR(expr_program_eval(&p, &env, v, known), PRT_ERR_MALFORMED, "node 1");
        CHECK_ERR(expr_program_bounds(&p, &prof, lo, opt, hi), PRT_ERR_MALFORMED,
                  "node 1");
        CHECK_ERR(expr_program_validate(&p, 1, ranks, NULL, 0), PRT_ERR_MALFORMED,
                  "node 1");

        CHECK_OK(expr_program_copy(&p, &copy));
        CHECK(copy.nb_nodes == 2 && copy.nodes != nodes &&
              memcmp(copy.nodes, nodes, sizeof nodes) == 0);
        expr_program_free(&copy);
        CHECK(copy.nodes == NULL && copy.nb_nodes == 0);
        expr_program_free(NULL);
        /* An empty program needs no output arrays. */
        CHECK_OK(expr_program_eval(&empty, &env, NULL, NULL));
        CHECK_OK(expr_program_bounds(&empty, &prof, NULL, NULL, NULL));
        CHECK_OK(expr_program_copy(&empty, &copy));
        CHECK(copy.nb_nodes == 0);
        expr_program_free(&copy);
        CHECK_ERR(expr_program_copy(&neg, &copy), PRT_ERR_INVALID_ARGUMENT, NULL);
    }
}

/* ------------------------------------------------------------------------ */
/* Allocation failure                                                        */
/* ------------------------------------------------------------------------ */

#define FAIL_SEQ 320

/* A fixed construction sequence, enough nodes to grow every array and cross
 * a chunk boundary. Returns how many steps gave NULL. */
static int build_sequence(expr_pool *pool, const prt_expr **out)
{
    int nulls = 0;
    const prt_expr *x = expr_input_dim(pool, 0, 0);
    const prt_expr *y = expr_input_dim(pool, 1, 0);
    const prt_expr *acc = x;
    expr_pool_begin_layer(pool, 1, 1);
    for (int k = 0; k < FAIL_SEQ; k++) {
        const prt_expr *e;
        if (k == FAIL_SEQ / 2)
            e = expr_size(pool, 0, x, acc);
        else if (k % 3 == 0)
            e = expr_op(pool, PRT_DIM_SUM, acc, expr_const(pool, k));
        else
            e = expr_op(pool, k % 2 ? PRT_DIM_MAX : PRT_DIM_CEIL_DIV, y,
                        expr_const(pool, k));
        out[k] = e;
        nulls += e == NULL;
        /* A failed step stays NULL down the chain, as in a plugin, so a
         * failed run never makes a node a clean run would not. */
        if (k % 3 == 0)
            acc = e;
    }
    return nulls;
}

/* Fails the n-th allocation for every n until a run sees none: each run
 * must end in NULLs with a message (never a crash; ASan checks leaks), and
 * the pool must stay consistent: building again without failures gives the
 * same objects and exactly as many nodes as a clean pool. */
static void test_alloc_failures(void)
{
    const prt_expr *clean_out[FAIL_SEQ], *first[FAIL_SEQ], *again[FAIL_SEQ];
    expr_pool *clean = expr_pool_create();
    int32_t clean_nodes, n, bad = 0, failed_runs = 0;
    CHECK(clean != NULL);
    if (!clean)
        return;
    CHECK(build_sequence(clean, clean_out) == 0);
    clean_nodes = expr_pool_program(clean)->nb_nodes;
    expr_pool_destroy(clean);

    for (n = 0; n < 1000; n++) {
        expr_pool *pool;
        expr_program copy;
        int nulls;
        prt_status st;
        base_fail_alloc_after(n);
        pool = expr_pool_create();
        if (!pool) {
            bad += n != 0;
            base_fail_alloc_after(-1);
            failed_runs++;
            continue;
        }
        nulls = build_sequence(pool, first);
        st = expr_program_copy(expr_pool_program(pool), &copy);
        if (st == PRT_OK)
            expr_program_free(&copy);
        st = st == PRT_OK ? expr_program_validate(expr_pool_program(pool), 2,
                                                  (int32_t[2]){1, 1}, NULL, 1)
                          : st;
        base_fail_alloc_after(-1);
        if (nulls && !expr_pool_error(pool)[0])
            bad++;
        if (st != PRT_OK && st != PRT_ERR_OUT_OF_MEMORY)
            bad++;
        bad += build_sequence(pool, again) != 0;
        for (int k = 0; k < FAIL_SEQ; k++)
            bad += first[k] && first[k] != again[k];
        bad += expr_pool_program(pool)->nb_nodes != clean_nodes;
        expr_pool_destroy(pool);
        if (!nulls && st == PRT_OK)
            break;
        failed_runs++;
    }
    base_fail_alloc_after(-1);
    CHECK(bad == 0);
    CHECK(failed_runs > 5 && n < 1000);
}

/* Signs: dims and sizes are >= 0, so comparisons with negative constants
 * fold; shape-input values may be negative, so theirs do not. */
static int test_sign_folds(void)
{
    expr_pool *pool = expr_pool_create();
    const prt_expr *d, *v, *m1, *zero, *c;
    int64_t x = 99;
    REQUIRE(pool);
    d = expr_op(
        pool, PRT_DIM_PROD, expr_input_dim(pool, 0, 0),
        expr_op(pool, PRT_DIM_SUM, expr_input_dim(pool, 0, 1), expr_const(pool, 2)));
    v = expr_input_value(pool, 1, 0);
    m1 = expr_const(pool, -1);
    zero = expr_const(pool, 0);
    REQUIRE(d && v && m1 && zero);
    CHECK(expr_is_const(pool, expr_op(pool, PRT_DIM_EQUAL, d, m1), &x) && x == 0);
    CHECK(expr_is_const(pool, expr_op(pool, PRT_DIM_EQUAL, m1, d), &x) && x == 0);
    CHECK(expr_is_const(pool, expr_op(pool, PRT_DIM_LESS, d, zero), &x) && x == 0);
    CHECK(expr_is_const(pool, expr_op(pool, PRT_DIM_LESS, m1, d), &x) && x == 1);
    CHECK(expr_op(pool, PRT_DIM_MAX, d, zero) == d);
    CHECK(expr_is_const(pool, expr_op(pool, PRT_DIM_MIN, m1, d), &x) && x == -1);
    /* Not decidable: a value may be -1; d - 3 may be negative. */
    CHECK(!expr_is_const(pool, expr_op(pool, PRT_DIM_EQUAL, v, m1), NULL));
    c = expr_op(pool, PRT_DIM_SUB, d, expr_const(pool, 3));
    CHECK(!expr_is_const(pool, expr_op(pool, PRT_DIM_EQUAL, c, m1), NULL));
    /* The exporters' Where(Equal(dim, -1), 1, dim) folds back to dim. */
    {
        const prt_expr *cond = expr_op(pool, PRT_DIM_EQUAL, d, m1);
        const prt_expr *one = expr_const(pool, 1);
        const prt_expr *w = expr_op(
            pool, PRT_DIM_SUM, expr_op(pool, PRT_DIM_PROD, cond, one),
            expr_op(pool, PRT_DIM_PROD, expr_op(pool, PRT_DIM_SUB, one, cond), d));
        CHECK(w == d);
    }
    expr_pool_destroy(pool);
    return 0;
}

/* Values of shape inputs: a leaf like an input dim, with its own bounds. */
/* A dim times a float32 value (Resize's scales known at run time): keys
 * keep the floats' order, the product is floored exactly, and bounds over
 * a box of dims and values hold. */
static int test_floor_mul_f32(void)
{
    const float order[] = {-INFINITY, -2.5f, -1e-40f, -0.0f, 0.0f,    1e-45f,  0.75f,
                           1.0f,      1.3f,  1.5f,    2.3f,  3.4e38f, INFINITY};
    const float scales[] = {0.75f, 1.3f, 1.4f, 2.3f, 1e-3f, 3.0f, 0.5f, 1.0f / 3.0f};
    const int64_t dims[] = {0, 1, 5, 7, 10, 99, 123457, 100000007};
    const size_t no = sizeof order / sizeof order[0];
    expr_pool *pool = expr_pool_create();
    const prt_expr *d, *v, *e;
    const expr_program *p;
    int64_t values[16], lo[16], opt[16], hi[16], out;
    uint8_t known[16];
    int bad = 0;
    REQUIRE(pool);
    for (size_t i = 0; i < no; i++) {
        float back = base_key_f32(base_f32_key(order[i]));
        CHECK(back == order[i] && ref_key_float(base_f32_key(order[i])) == order[i]);
        if (i)
            CHECK(base_f32_key(order[i - 1]) <= base_f32_key(order[i]));
    }
    CHECK(base_f32_key(-0.0f) == 0 && isnan(base_key_f32(0x7f800001)) &&
          isnan(base_key_f32(-0x7f800001)));
    for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++)
        for (size_t j = 0; j < sizeof dims / sizeof dims[0]; j++) {
            int64_t want = (int64_t)floor((double)dims[j] * (double)scales[i]);
            int64_t neg = (int64_t)floor(-(double)dims[j] * (double)scales[i]);
            if (!base_floor_mul_f32(dims[j], scales[i], &out) || out != want ||
                !base_floor_mul_f32(-dims[j], scales[i], &out) || out != neg) {
                bad++;
                fprintf(stderr, "floor(%lld * %g) wrong\n", (long long)dims[j],
                        (double)scales[i]);
            }
        }
    CHECK(bad == 0);
    CHECK(base_floor_mul_f32((int64_t)1 << 40, 3.4e38f, &out) == 0); /* overflow */
    CHECK(base_floor_mul_f32(3, INFINITY, &out) == 0);
    CHECK(base_floor_mul_f32(3, NAN, &out) == 0);
    CHECK(base_floor_mul_f32(0, 3.4e38f, &out) == 1 && out == 0);
    /* Folded: times 1.0f is the dim itself, times 0 is 0; a constant
     * product folds to the exact floor. */
    d = expr_input_dim(pool, 0, 0);
    CHECK(expr_op(pool, PRT_DIM_FLOOR_MUL_F32, d, expr_const(pool, base_f32_key(1.0f))) ==
          d);
    CHECK(expr_is_const(
              pool, expr_op(pool, PRT_DIM_FLOOR_MUL_F32, d, expr_const(pool, 0)), &out) &&
          out == 0);
    CHECK(expr_is_const(pool,
                        expr_op(pool, PRT_DIM_FLOOR_MUL_F32, expr_const(pool, 10),
                                expr_const(pool, base_f32_key(1.3f))),
                        &out) &&
          out == 12); /* 1.3f is 1.29999995...: exactly, 10 x it floors to 12 */
    CHECK(expr_op(pool, PRT_DIM_FLOOR_MUL_F32, expr_const(pool, 3),
                  expr_const(pool, 0x7fc00000)) == NULL); /* NaN */
    /* Evaluated and bounded with the value a shape input's. */
    v = expr_input_value(pool, 1, 0);
    e = expr_op(pool, PRT_DIM_FLOOR_MUL_F32, d, v);
    REQUIRE(e);
    p = expr_pool_program(pool);
    {
        prt_dims in[2] = {{1, {7}}, {1, {1}}};
        prt_dims vals[2] = {{0, {0}}, {1, {base_f32_key(1.4f)}}};
        expr_env env = {2, in, 0, NULL, NULL, vals};
        CHECK_OK(expr_program_eval(p, &env, values, known));
        CHECK(known[expr_id(e)] && values[expr_id(e)] == (int64_t)floor(7.0 * 1.4f));
        vals[1].d[0] = 0x7fc00000;
        CHECK_ERR(expr_program_eval(p, &env, values, known), PRT_ERR_SHAPE,
                  "not a float");
    }
    {
        prt_dims mn[2] = {{1, {2}}, {1, {1}}}, op[2] = {{1, {5}}, {1, {1}}},
                 mx[2] = {{1, {10}}, {1, {1}}};
        prt_dims vmn[2] = {{0, {0}}, {1, {base_f32_key(0.5f)}}},
                 vop[2] = {{0, {0}}, {1, {base_f32_key(1.5f)}}},
                 vmx[2] = {{0, {0}}, {1, {base_f32_key(2.5f)}}};
        expr_profile prof = {2, mn, op, mx, vmn, vop, vmx};
        CHECK_OK(expr_program_bounds(p, &prof, lo, opt, hi));
        CHECK(lo[expr_id(e)] == 1 && opt[expr_id(e)] == 7 && hi[expr_id(e)] == 25);
    }
    expr_pool_destroy(pool);
    return 0;
}

static int test_input_values(void)
{
    expr_pool *pool = expr_pool_create();
    const prt_expr *v0, *v1, *d0, *e;
    const expr_program *p;
    prt_dims dims = {1, {2}}, vals = {2, {7, 3}};
    prt_dims vmin = {2, {1, 2}}, vopt = {2, {4, 3}}, vmax = {2, {9, 5}};
    int32_t ranks[1] = {1}, counts[1] = {2};
    int64_t values[16], lo[16], opt[16], hi[16];
    uint8_t known[16];
    REQUIRE(pool);
    v0 = expr_input_value(pool, 0, 0);
    v1 = expr_input_value(pool, 0, 1);
    d0 = expr_input_dim(pool, 0, 0);
    CHECK(v0 && v1 && v0 != v1 && v0 != d0);
    CHECK(expr_input_value(pool, 0, 0) == v0); /* hash-consed */
    CHECK(expr_input_value(pool, 0, PRT_MAX_DIMS) == NULL);
    e = expr_op(pool, PRT_DIM_PROD, v0, expr_op(pool, PRT_DIM_SUM, v1, d0));
    REQUIRE(e);
    p = expr_pool_program(pool);
    CHECK_OK(expr_program_validate(p, 1, ranks, counts, 0));
    CHECK_ERR(expr_program_validate(p, 1, ranks, NULL, 0), PRT_ERR_MALFORMED,
              "shape input");
    {
        expr_env env = {1, &dims, 0, NULL, NULL, &vals};
        expr_env none = {1, &dims, 0, NULL, NULL, NULL};
        CHECK_OK(expr_program_eval(p, &env, values, known));
        CHECK(values[expr_id(e)] == 7 * (3 + 2));
        CHECK_ERR(expr_program_eval(p, &none, values, known), PRT_ERR_SHAPE, "no values");
    }
    {
        expr_profile prof = {1, &dims, &dims, &dims, &vmin, &vopt, &vmax};
        CHECK_OK(expr_program_bounds(p, &prof, lo, opt, hi));
        CHECK(lo[expr_id(e)] == 1 * (2 + 2) && opt[expr_id(e)] == 4 * (3 + 2) &&
              hi[expr_id(e)] == 9 * (5 + 2));
    }
    expr_pool_destroy(pool);
    return 0;
}

int main(void)
{
    test_reference_division();
    test_fold_constants();
    test_eval_ops();
    test_identities();
    test_construction_errors();
    test_null_propagation();
    test_hash_consing();
    test_builder_abi();
    test_size_rules();
    test_eval_unknown();
    test_eval_errors();
    test_bounds_exact_single_op();
    test_bounds_soundness();
    test_bounds_sizes_and_errors();
    test_validate();
    test_alloc_failures();
    test_input_values();
    test_floor_mul_f32();
    test_sign_folds();
    return tu_finish("test_expr");
}
