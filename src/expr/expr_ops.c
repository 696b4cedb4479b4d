/* The operations of symbolic dims on concrete values, and their names
 * (expr_ops.h). */
#include "expr/expr_ops.h"

#include <math.h>
#include <stddef.h>

#include "base/base.h"

#include "plugrt/plugin.h"

static const char *const op_names[EXPR_OP_COUNT] = {
    "SUM",   "PROD", "MAX",       "MIN",      "SUB",
    "EQUAL", "LESS", "FLOOR_DIV", "CEIL_DIV", "FLOOR_MUL_F32"};

const char *expr_op_name(int32_t op)
{
    return op >= 0 && op < EXPR_OP_COUNT ? op_names[op] : "?";
}

/* C's `/` truncates toward zero; these correct the truncated quotient by one
 * when the remainder is non-zero and the exact quotient lies on the other
 * side. |q| <= 2^62 whenever a correction happens (|b| >= 2), so q -/+ 1
 * cannot overflow; INT64_MIN / -1 is the only overflowing quotient. */
static const char *divide(int32_t op, int64_t a, int64_t b, int64_t *out)
{
    int64_t q, r;
    if (b == 0)
        return "division by zero";
    if (a == INT64_MIN && b == -1)
        return "overflow";
    q = a / b;
    r = a % b;
    if (r != 0) {
        int exact_negative = (r < 0) != (b < 0);
        if (op == PRT_DIM_FLOOR_DIV && exact_negative)
            q--;
        else if (op == PRT_DIM_CEIL_DIV && !exact_negative)
            q++;
    }
    *out = q;
    return NULL;
}

const char *expr_apply(int32_t op, int64_t a, int64_t b, int64_t *out)
{
    int64_t v;
    switch (op) {
    case PRT_DIM_SUM:
        if (__builtin_add_overflow(a, b, &v))
            return "overflow";
        break;
    case PRT_DIM_PROD:
        if (__builtin_mul_overflow(a, b, &v))
            return "overflow";
        break;
    case PRT_DIM_SUB:
        if (__builtin_sub_overflow(a, b, &v))
            return "overflow";
        break;
    case PRT_DIM_MAX:
        v = a > b ? a : b;
        break;
    case PRT_DIM_MIN:
        v = a < b ? a : b;
        break;
    case PRT_DIM_EQUAL:
        v = a == b;
        break;
    case PRT_DIM_LESS:
        v = a < b;
        break;
    case PRT_DIM_FLOOR_DIV:
    case PRT_DIM_CEIL_DIV:
        return divide(op, a, b, out);
    case PRT_DIM_FLOOR_MUL_F32: {
        float f = base_key_f32(b);
        if (!isfinite(f))
            return "not a float";
        if (!base_floor_mul_f32(a, f, &v))
            return "overflow";
        break;
    }
    default:
        return "unknown operation";
    }
    *out = v;
    return NULL;
}
