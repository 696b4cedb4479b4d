/*
 * The operations of symbolic dims (prt_dim_op) on concrete values, and
 * their names. One definition below both constant folding (expr.c) and
 * evaluation and bounds (expr_eval.c), so that a folded constant and an
 * evaluated node round alike.
 */
#ifndef PLUGRT_EXPR_OPS_H
#define PLUGRT_EXPR_OPS_H

#include <stdint.h>

/* prt_dim_op values are 0 .. EXPR_OP_COUNT - 1. */
#define EXPR_OP_COUNT 10
/* "SUM", "FLOOR_DIV", ...; "?" for a value out of range. Static storage. */
const char *expr_op_name(int32_t op);
/* One operation on concrete values: NULL with *out set, or a static reason
 * ("overflow", "division by zero", "unknown operation") with *out
 * untouched. FLOOR_DIV rounds toward -inf and CEIL_DIV toward +inf for every
 * sign of either operand; FLOOR_MUL_F32 reads b as a float's order key
 * (base_f32_key) and fails ("not a float") on a key beyond infinity's and
 * for an infinite float. Records no error; callers name the node. */
const char *expr_apply(int32_t op, int64_t a, int64_t b, int64_t *out);

#endif /* PLUGRT_EXPR_OPS_H */
