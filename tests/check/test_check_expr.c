/*
 * The checker's expression builder (tools/check_expr.c): what plugins see
 * through it must be what plugin.h promises and libplugrt's builder does —
 * one object per expression, constants folded (with the identities and
 * sign facts), the size-tensor rules — and its evaluation and bounds must
 * be right, since every shape the checker runs comes from them.
 */
#include <stdio.h>
#include <string.h>

#include "check_expr.h"

static int failures;

#define EXPECT(cond)                                                                     \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);          \
            failures++;                                                                  \
        }                                                                                \
    } while (0)

static int64_t value(chk_pool *p, const prt_expr *e, const prt_dims *dims, int32_t n,
                     const int64_t *sizes)
{
    chk_env env = {n, dims, sizes};
    int64_t v = -12345;
    char why[256];
    EXPECT(chk_pool_eval(p, &env, e, &v, why, sizeof why) == 0);
    return v;
}

static void test_folding(void)
{
    chk_pool *p = chk_pool_create();
    prt_expr_builder *b = chk_pool_builder(p);
    const prt_expr *x = chk_pool_input_dim(p, 0, 0), *y = chk_pool_input_dim(p, 0, 1);
    const prt_expr *two = b->constant(b, 2), *zero = b->constant(b, 0);
    int64_t v;
    /* One object per expression, in either operand order when commutative. */
    EXPECT(b->constant(b, 2) == two);
    EXPECT(chk_pool_input_dim(p, 0, 0) == x);
    EXPECT(b->operation(b, PRT_DIM_SUM, x, y) == b->operation(b, PRT_DIM_SUM, y, x));
    EXPECT(b->operation(b, PRT_DIM_SUB, x, y) != b->operation(b, PRT_DIM_SUB, y, x));
    /* Constants fold; identities and sign facts as libplugrt folds them. */
    EXPECT(
        b->is_constant(b, b->operation(b, PRT_DIM_PROD, two, b->constant(b, 21)), &v) &&
        v == 42);
    EXPECT(b->is_constant(b, b->operation(b, PRT_DIM_FLOOR_DIV, b->constant(b, -7), two),
                          &v) &&
           v == -4);
    EXPECT(b->is_constant(b, b->operation(b, PRT_DIM_CEIL_DIV, b->constant(b, -7), two),
                          &v) &&
           v == -3);
    EXPECT(b->operation(b, PRT_DIM_SUM, x, zero) == x);
    EXPECT(b->operation(b, PRT_DIM_PROD, b->constant(b, 1), x) == x);
    EXPECT(b->is_constant(b, b->operation(b, PRT_DIM_SUB, x, x), &v) && v == 0);
    EXPECT(b->is_constant(b, b->operation(b, PRT_DIM_EQUAL, x, b->constant(b, -1)), &v) &&
           v == 0);
    EXPECT(b->operation(b, PRT_DIM_MAX, x, zero) == x);
    EXPECT(!b->is_constant(b, x, &v));
    /* Failures are NULL, and NULL operands give NULL. */
    EXPECT(b->operation(b, PRT_DIM_FLOOR_DIV, x, zero) == NULL);
    EXPECT(chk_pool_error(p)[0] != '\0');
    EXPECT(b->operation(b, PRT_DIM_SUM, NULL, x) == NULL);
    EXPECT(b->operation(b, 99, x, y) == NULL);
    EXPECT(b->operation(b, PRT_DIM_PROD, b->constant(b, INT64_MAX), two) == NULL);
    chk_pool_destroy(p);
}

static void test_sizes_and_eval(void)
{
    chk_pool *p = chk_pool_create();
    prt_expr_builder *b = chk_pool_builder(p);
    const prt_expr *x = chk_pool_input_dim(p, 0, 0), *y = chk_pool_input_dim(p, 0, 1);
    const prt_expr *n = b->operation(b, PRT_DIM_PROD, x, y);
    const prt_expr *opt = b->operation(b, PRT_DIM_CEIL_DIV, n, b->constant(b, 2));
    const prt_expr *k, *twice;
    prt_dims dims = {2, {3, 5}};
    int64_t sizes[1] = {4}, lo, mid, hi;
    char why[256];
    /* Only inside get_output_shapes, for an output that exists. */
    EXPECT(b->declare_size_tensor(b, 1, opt, n) == NULL);
    chk_pool_begin_shapes(p, 2);
    EXPECT(b->declare_size_tensor(b, 2, opt, n) == NULL);
    k = b->declare_size_tensor(b, 1, opt, n);
    EXPECT(k != NULL);
    /* Declared again: the same symbol when it says the same. */
    EXPECT(b->declare_size_tensor(b, 1, opt, n) == k);
    EXPECT(b->declare_size_tensor(b, 1, n, n) == NULL);
    /* opt may not depend on a size; a constant bound may not be negative. */
    EXPECT(b->declare_size_tensor(b, 0, k, n) == NULL);
    EXPECT(b->declare_size_tensor(b, 0, opt, b->constant(b, -1)) == NULL);
    chk_pool_end_shapes(p);
    EXPECT(chk_pool_size_count(p) == 1 && chk_pool_size_output(p, 0) == 1);
    EXPECT(chk_pool_size_of_output(p, 1) == 0 && chk_pool_size_of_output(p, 0) == -1);
    EXPECT(chk_pool_has_size(p, k) && !chk_pool_has_size(p, n));
    twice = b->operation(b, PRT_DIM_PROD, k, b->constant(b, 2));
    EXPECT(chk_pool_has_size(p, twice));
    /* Evaluation: sizes at their value, or at their upper bound. */
    EXPECT(value(p, n, &dims, 1, NULL) == 15);
    EXPECT(value(p, opt, &dims, 1, NULL) == 8);
    EXPECT(value(p, twice, &dims, 1, sizes) == 8);
    EXPECT(value(p, twice, &dims, 1, NULL) == 30);
    {
        chk_env env = {1, &dims, NULL};
        prt_dims one = {1, {3}};
        chk_env short_env = {1, &one, NULL};
        int64_t v;
        EXPECT(chk_pool_eval(p, &short_env, n, &v, why, sizeof why) == -1);
        EXPECT(strstr(why, "in0.d1") != NULL);
        EXPECT(chk_pool_eval(p, &env, NULL, &v, why, sizeof why) == -1);
    }
    /* Bounds over a profile, SUB's interval included. */
    {
        prt_dims min = {2, {1, 2}}, o = {2, {2, 3}}, max = {2, {4, 6}};
        const prt_expr *sub = b->operation(b, PRT_DIM_SUB, x, y);
        EXPECT(chk_pool_bounds(p, 1, &min, &o, &max, n, &lo, &mid, &hi, why,
                               sizeof why) == 0);
        EXPECT(lo == 2 && mid == 6 && hi == 24);
        EXPECT(chk_pool_bounds(p, 1, &min, &o, &max, sub, &lo, &mid, &hi, why,
                               sizeof why) == 0);
        EXPECT(lo == -5 && mid == -1 && hi == 2);
        EXPECT(chk_pool_bounds(p, 1, &min, &o, &max, k, &lo, &mid, &hi, why,
                               sizeof why) == 0);
        EXPECT(lo == 0 && mid == 3 && hi == 24);
        /* A divisor whose range holds 0 has no bound. */
        EXPECT(chk_pool_bounds(p, 1, &min, &o, &max,
                               b->operation(b, PRT_DIM_FLOOR_DIV, x, sub), &lo, &mid, &hi,
                               why, sizeof why) == -1);
    }
    chk_pool_destroy(p);
}

int main(void)
{
    test_folding();
    test_sizes_and_eval();
    if (failures) {
        fprintf(stderr, "%d expectation(s) failed\n", failures);
        return 1;
    }
    printf("test_check_expr: all passed\n");
    return 0;
}
