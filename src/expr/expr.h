/*
 * Symbolic dimension expressions (internal).
 *
 * A pool owns expression nodes. Nodes are hash-consed (one object per distinct
 * expression) and constant-folded at construction, so a dim that is known is
 * a CONST node and pointer equality is expression equality. Node ids are
 * dense and increase in creation order, and an operation's operands always
 * have smaller ids, so the pool's nodes in id order are a program that can be
 * evaluated front to back. That program (expr_program) is what the engine
 * stores; all evaluation works on programs.
 */
#ifndef PLUGRT_EXPR_H
#define PLUGRT_EXPR_H

#include <stdint.h>

#include "base/base.h"
#include "expr/expr_ops.h" /* the operations on values, part of this interface */

typedef enum expr_kind {
    EXPR_CONST = 0,      /* imm = value */
    EXPR_INPUT_DIM = 1,  /* a = network input index, b = dim index */
    EXPR_SIZE = 2,       /* imm = size-tensor id, a = opt node, b = upper node */
    EXPR_OP = 3,         /* op = prt_dim_op, a and b = operand nodes */
    EXPR_INPUT_VALUE = 4 /* a = network input index, b = element index: a
                            value of a shape input (a 1-D int tensor whose
                            values shapes may depend on) */
} expr_kind;

/* One node of a program. Operand indices are < the node's own index. */
typedef struct expr_node {
    int32_t kind;
    int32_t op;
    int64_t imm;
    int32_t a;
    int32_t b;
} expr_node;

typedef struct expr_program {
    int32_t nb_nodes;
    expr_node *nodes; /* owned by whoever made the program */
} expr_program;

/* prt_expr (opaque in plugin.h) is defined in expr.c; its address is stable
 * for the pool's lifetime and expr_id gives its node index in the program
 * (-1 for NULL). */
int32_t expr_id(const prt_expr *e);

typedef struct expr_pool expr_pool;

/* 1 if e is a node of this pool (not NULL, not another pool's). */
int expr_pool_owns(const expr_pool *pool, const prt_expr *e);

expr_pool *expr_pool_create(void); /* NULL on out of memory */
void expr_pool_destroy(expr_pool *pool);

/* Node constructors. NULL on failure, with the reason in expr_pool_error;
 * NULL operands give NULL. */
const prt_expr *expr_const(expr_pool *pool, int64_t value);
const prt_expr *expr_input_dim(expr_pool *pool, int32_t input, int32_t dim);
/* Element `index` (0..PRT_MAX_DIMS-1) of shape input `input`. */
const prt_expr *expr_input_value(expr_pool *pool, int32_t input, int32_t index);
const prt_expr *expr_op(expr_pool *pool, int32_t op, const prt_expr *a,
                        const prt_expr *b);

/* Size tensors. Before calling a plugin's get_output_shapes the builder calls
 * expr_pool_begin_layer; declare_size_tensor (through the ABI builder or
 * expr_size) then creates a new size symbol owned by (layer, output_index).
 * Rules: output_index in [0, nb_outputs); opt must not depend on any size
 * symbol; upper may (a constant upper below 0 is refused); declaring the
 * same output twice in one layer returns the same symbol if opt and upper
 * are the same expressions, else NULL. */
void expr_pool_begin_layer(expr_pool *pool, int32_t layer, int32_t nb_outputs);
const prt_expr *expr_size(expr_pool *pool, int32_t output_index, const prt_expr *opt,
                          const prt_expr *upper);
int32_t expr_pool_size_count(const expr_pool *pool);
/* Owner of size symbol `size_id` (0..count-1). */
void expr_pool_size_owner(const expr_pool *pool, int32_t size_id, int32_t *layer,
                          int32_t *output_index);

/* The ABI table bound to this pool, for get_output_shapes. Borrowed for the
 * pool's lifetime. */
prt_expr_builder *expr_pool_builder(expr_pool *pool);

/* 1 and *value if e is a constant. */
int expr_is_const(const expr_pool *pool, const prt_expr *e, int64_t *value);
/* The pool's nodes as a program (borrowed; invalidated by the next node). */
const expr_program *expr_pool_program(const expr_pool *pool);
/* Message for the last NULL returned by a constructor ("" if none). */
const char *expr_pool_error(const expr_pool *pool);

/* Deep copy of a program (the engine keeps one). PRT_ERR_OUT_OF_MEMORY. */
prt_status expr_program_copy(const expr_program *src, expr_program *dst);
void expr_program_free(expr_program *p);
/* Checks a program from untrusted bytes: kinds, ops, operand order, input
 * and dim indices against the given counts (value_counts[i]: how many
 * values input i has as a shape input, 0 if none; NULL: no input has
 * values), size ids < nb_sizes. Returns
 * PRT_ERR_MALFORMED with a message naming the node. */
prt_status expr_program_validate(const expr_program *p, int32_t nb_inputs,
                                 const int32_t *input_ranks, const int32_t *value_counts,
                                 int32_t nb_sizes);

/* Concrete values of everything a program can depend on. */
typedef struct expr_env {
    int32_t nb_inputs;
    const prt_dims *input_dims; /* [nb_inputs] */
    int32_t nb_sizes;
    const int64_t *size_values; /* [nb_sizes] */
    const uint8_t *size_known;  /* [nb_sizes]; NULL: all known */
    /* Values of shape inputs, held in prt_dims (nb_dims = count); NULL when
     * no input is a shape input. [nb_inputs] */
    const prt_dims *input_values;
} expr_env;

/* Evaluates every node into values[nb_nodes]. A node that depends on an
 * unknown size has known[i] = 0 (values[i] undefined). Errors (PRT_ERR_SHAPE
 * with the node named): division by zero, overflow, an input index out of
 * range. */
prt_status expr_program_eval(const expr_program *p, const expr_env *env, int64_t *values,
                             uint8_t *known);

/* Like expr_program_eval, but a size that env does not know takes the value
 * of its upper-bound node (expr_upper.c): the dims memory must hold before a
 * data-dependent layer runs. size_scratch and known_scratch hold nb_sizes
 * entries. */
prt_status expr_program_eval_upper(const expr_program *p, const expr_env *env,
                                   int64_t *size_scratch, uint8_t *known_scratch,
                                   int64_t *values, uint8_t *known);

/* A profile: min/opt/max dims of every network input. */
typedef struct expr_profile {
    int32_t nb_inputs;
    const prt_dims *min; /* [nb_inputs] */
    const prt_dims *opt;
    const prt_dims *max;
    /* Bounds of shape inputs' values, as in expr_env; NULL when none. */
    const prt_dims *vmin;
    const prt_dims *vopt;
    const prt_dims *vmax;
} expr_profile;

/* Sound bounds of every node over the profile: lo[i] <= value <= hi[i] for
 * every input shape within [min, max] (interval arithmetic; a size symbol
 * lies in [0, hi(upper)]), and opt[i] the value at the opt shapes with every
 * size symbol at its opt clamped into [0, hi(upper)]. Folding assumes what
 * holds in every real network: input dims and sizes are >= 0. PRT_ERR_SHAPE for overflow
 * or a divisor interval that contains 0. */
prt_status expr_program_bounds(const expr_program *p, const expr_profile *prof,
                               int64_t *lo, int64_t *opt, int64_t *hi);

#endif /* PLUGRT_EXPR_H */
