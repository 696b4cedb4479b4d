/*
 * The checker's own expression builder: what a plugin's get_output_shapes
 * and get_output_values receive, with the semantics plugin.h states and
 * libplugrt's builder has (hash-consed, so equal expressions are one
 * object; constants folded, with the same identities and sign facts; size
 * tensors declared once per output, opt free of sizes), and evaluation at
 * concrete dims and over a profile's bounds.
 *
 * Node addresses are stable for the pool's life: the pool has a fixed
 * capacity (CHK_POOL_NODES), and a plugin that needs more gets NULL, like
 * any failed constructor.
 */
#ifndef PLUGRT_TOOLS_CHECK_EXPR_H
#define PLUGRT_TOOLS_CHECK_EXPR_H

#include <stddef.h>
#include <stdint.h>

#include "plugrt/plugin.h"

#define CHK_POOL_NODES 8192

typedef struct chk_pool chk_pool;

chk_pool *chk_pool_create(void); /* NULL on out of memory */
void chk_pool_destroy(chk_pool *p);

/* The ABI table bound to this pool (borrowed for the pool's life). */
prt_expr_builder *chk_pool_builder(chk_pool *p);

/* declare_size_tensor is allowed between begin and end (one
 * get_output_shapes call of a plugin with nb_outputs outputs). */
void chk_pool_begin_shapes(chk_pool *p, int32_t nb_outputs);
void chk_pool_end_shapes(chk_pool *p);

const prt_expr *chk_pool_const(chk_pool *p, int64_t v);
const prt_expr *chk_pool_input_dim(chk_pool *p, int32_t input, int32_t dim);

/* 1 if e is a node of this pool. */
int chk_pool_owns(const chk_pool *p, const prt_expr *e);
int chk_pool_is_const(const chk_pool *p, const prt_expr *e, int64_t *v);
/* 1 if e depends on a size tensor. */
int chk_pool_has_size(const chk_pool *p, const prt_expr *e);
/* Why the last constructor returned NULL ("" if none). */
const char *chk_pool_error(const chk_pool *p);
/* "SUM(in0.d1, 2)" into buf; returns buf. */
char *chk_pool_str(const chk_pool *p, const prt_expr *e, char *buf, size_t cap);

/* Size tensors, in declaration order. */
int32_t chk_pool_size_count(const chk_pool *p);
int32_t chk_pool_size_output(const chk_pool *p, int32_t size_id);
const prt_expr *chk_pool_size_opt(const chk_pool *p, int32_t size_id);
const prt_expr *chk_pool_size_upper(const chk_pool *p, int32_t size_id);
/* The size id declared for output o, or -1. */
int32_t chk_pool_size_of_output(const chk_pool *p, int32_t output);

/* Concrete values: the inputs' dims and, when `sizes` is not NULL, the
 * value of each size tensor (else each takes its upper bound, what memory
 * is sized for). 0 and *out, or -1 with the reason in why. */
typedef struct chk_env {
    int32_t nb_inputs;
    const prt_dims *dims;
    const int64_t *sizes; /* [chk_pool_size_count] or NULL */
} chk_env;
int chk_pool_eval(const chk_pool *p, const chk_env *env, const prt_expr *e, int64_t *out,
                  char *why, size_t cap);

/* Bounds over a profile, by interval arithmetic as the builder computes
 * them: *lo <= value <= *hi for every input shape within [min, max] (a size
 * lies in [0, hi(upper)]), *opt the value at the opt shapes with each size
 * at its opt clamped into [0, hi(upper)]. 0, or -1 with why (overflow, a
 * divisor whose interval holds 0). */
int chk_pool_bounds(const chk_pool *p, int32_t nb_inputs, const prt_dims *min,
                    const prt_dims *opt, const prt_dims *max, const prt_expr *e,
                    int64_t *lo, int64_t *out_opt, int64_t *hi, char *why, size_t cap);

#endif /* PLUGRT_TOOLS_CHECK_EXPR_H */
