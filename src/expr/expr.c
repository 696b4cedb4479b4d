/*
 * The expression pool: hash-consed, constant-folded construction of symbolic
 * dims, size-tensor symbols, and the prt_expr_builder table a plugin sees.
 * Evaluation of the resulting program lives in expr_eval.c, the arithmetic
 * of each operation, which folding shares with it, in expr_ops.c.
 *
 * Storage. The program (expr_node array) is reallocated as it grows, so the
 * objects handed out as prt_expr live apart from it, in fixed-size chunks
 * that never move: a plugin may hold a prt_expr across any number of later
 * constructions. Every construction reserves all memory it may need before
 * it changes anything, so an allocation failure leaves the pool exactly as it
 * was (no half-inserted node, no node missing from the hash table).
 */
#include "expr/expr.h"

#include <stdio.h>
#include <string.h>

#define EXPR_CHUNK_SHIFT 8
#define EXPR_CHUNK (1 << EXPR_CHUNK_SHIFT)
#define EXPR_TABLE_MIN 64u
/* Far below INT32_MAX so that ids, doubled capacities and table sizes never
 * overflow their int32/uint32 types; no real network comes near it. */
#define EXPR_MAX_NODES (1 << 28)

struct prt_expr {
    int32_t id;
    /* 1 if the value depends on a size symbol, directly or through an
     * operand; declare_size_tensor's opt must not. */
    uint8_t has_size;
    /* 1 if the value is >= 0 for every input: dims and sizes are, and so
     * are sums, products, quotients and maxima of such values. Lets
     * comparisons with negative constants fold (exporters write
     * Where(Equal(dim, -1), ...) around every reshape). */
    uint8_t nonneg;
};

/* Who declared size symbol k (sizes[k]), and its node. */
typedef struct expr_size_decl {
    int32_t layer;
    int32_t output_index;
    int32_t node;
} expr_size_decl;

struct expr_pool {
    expr_program prog;
    int32_t node_cap;
    prt_expr **chunks; /* chunk c holds ids [c * EXPR_CHUNK, (c+1) * ...) */
    int32_t nb_chunks;
    int32_t chunk_cap;
    /* Open addressing with linear probing over node ids (-1: empty); load
     * kept <= 1/2 so a probe always ends at an empty slot. SIZE nodes are
     * not in it: they are unique by construction. */
    int32_t *table;
    uint32_t table_cap; /* 0 or a power of two */
    uint32_t table_count;
    expr_size_decl *sizes;
    int32_t nb_sizes;
    int32_t size_cap;
    int32_t layer; /* set by expr_pool_begin_layer */
    int32_t layer_outputs;
    int layer_begun;
    prt_expr_builder builder;
    char error[256];
};

/* ------------------------------------------------------------------------ */
/* Errors and small helpers                                                  */
/* ------------------------------------------------------------------------ */

static const prt_expr *pool_fail(expr_pool *pool, prt_status status, const char *fmt, ...)
    BASE_PRINTF(3, 4);

/* Records why a constructor returns NULL, in the pool (expr_pool_error) and
 * as the thread's last error, so a builder that only sees the NULL late can
 * still report the cause. */
static const prt_expr *pool_fail(expr_pool *pool, prt_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pool->error, sizeof pool->error, fmt, ap);
    va_end(ap);
    base_error(status, "%s", pool->error);
    return NULL;
}

/* A NULL operand is nearly always an earlier failure flowing through a
 * plugin that checks once at the end (plugin.h allows that); the earlier
 * message names the real cause, so keep it when there is one. */
static const prt_expr *null_operand(expr_pool *pool, const char *what)
{
    if (pool->error[0])
        return NULL;
    return pool_fail(pool, PRT_ERR_INVALID_ARGUMENT, "%s: an operand is NULL", what);
}

static prt_expr *expr_slot(const expr_pool *pool, int32_t id)
{
    return &pool->chunks[id >> EXPR_CHUNK_SHIFT][id & (EXPR_CHUNK - 1)];
}

/* Whether e is an expression of this pool. Catches pointers from another
 * build (a plugin caching expressions) without trusting e->id blindly. */
static int pool_owns(const expr_pool *pool, const prt_expr *e)
{
    return e->id >= 0 && e->id < pool->prog.nb_nodes && expr_slot(pool, e->id) == e;
}

int expr_pool_owns(const expr_pool *pool, const prt_expr *e)
{
    return e && pool_owns(pool, e);
}

int32_t expr_id(const prt_expr *e)
{
    return e ? e->id : -1;
}

/* Grows an array to hold `need` elements, doubling. Returns the (possibly
 * moved) array, or NULL with *cap and the old array untouched. */
static void *grow(void *p, int32_t *cap, int32_t need, size_t elem)
{
    int32_t n = *cap ? *cap : 16;
    void *q;
    if (need <= *cap)
        return p;
    while (n < need)
        n *= 2; /* need <= EXPR_MAX_NODES, so no overflow */
    q = base_realloc(p, (size_t)n * elem);
    if (q)
        *cap = n;
    return q;
}

/* ------------------------------------------------------------------------ */
/* Hash table                                                                */
/* ------------------------------------------------------------------------ */

static uint64_t mix64(uint64_t x)
{
    /* splitmix64's finalizer: every input bit reaches every output bit. */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint32_t node_hash(const expr_node *n)
{
    uint64_t h = mix64((uint64_t)(uint32_t)n->kind << 32 | (uint32_t)n->op);
    h = mix64(h ^ (uint64_t)n->imm);
    h = mix64(h ^ ((uint64_t)(uint32_t)n->a << 32 | (uint32_t)n->b));
    return (uint32_t)(h ^ (h >> 32));
}

static int node_equal(const expr_node *x, const expr_node *y)
{
    return x->kind == y->kind && x->op == y->op && x->imm == y->imm && x->a == y->a &&
           x->b == y->b;
}

/* The id of the node equal to key, or -1. */
static int32_t table_find(const expr_pool *pool, const expr_node *key, uint32_t h)
{
    uint32_t mask = pool->table_cap - 1;
    if (pool->table_cap == 0)
        return -1;
    for (uint32_t i = h & mask;; i = (i + 1) & mask) {
        int32_t id = pool->table[i];
        if (id < 0 || node_equal(&pool->prog.nodes[id], key))
            return id;
    }
}

static void table_put(int32_t *table, uint32_t cap, int32_t id, uint32_t h)
{
    uint32_t i = h & (cap - 1);
    while (table[i] >= 0)
        i = (i + 1) & (cap - 1);
    table[i] = id;
}

/* Makes room for one more entry: 0 on out of memory (table unchanged). */
static int table_reserve(expr_pool *pool)
{
    uint32_t cap = pool->table_cap ? pool->table_cap * 2 : EXPR_TABLE_MIN;
    int32_t *t;
    if ((pool->table_count + 1) * 2 <= pool->table_cap)
        return 1;
    t = base_malloc((size_t)cap * sizeof *t);
    if (!t)
        return 0;
    memset(t, 0xff, (size_t)cap * sizeof *t); /* every slot -1 */
    for (uint32_t i = 0; i < pool->table_cap; i++) {
        int32_t id = pool->table[i];
        if (id >= 0)
            table_put(t, cap, id, node_hash(&pool->prog.nodes[id]));
    }
    base_free(pool->table);
    pool->table = t;
    pool->table_cap = cap;
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Adding nodes                                                              */
/* ------------------------------------------------------------------------ */

/* Reserves everything one more node needs; 0 (error recorded) on failure,
 * with the pool unchanged apart from spare capacity. */
static int pool_reserve(expr_pool *pool)
{
    int32_t n = pool->prog.nb_nodes;
    expr_node *nodes;
    if (n >= EXPR_MAX_NODES) {
        pool_fail(pool, PRT_ERR_UNSUPPORTED, "more than %d shape expressions",
                  EXPR_MAX_NODES);
        return 0;
    }
    nodes = grow(pool->prog.nodes, &pool->node_cap, n + 1, sizeof *nodes);
    if (!nodes)
        goto oom;
    pool->prog.nodes = nodes;
    if (n == pool->nb_chunks * EXPR_CHUNK) {
        prt_expr **chunks =
            grow(pool->chunks, &pool->chunk_cap, pool->nb_chunks + 1, sizeof *chunks);
        prt_expr *chunk;
        if (!chunks)
            goto oom;
        pool->chunks = chunks;
        chunk = base_malloc(EXPR_CHUNK * sizeof *chunk);
        if (!chunk)
            goto oom;
        pool->chunks[pool->nb_chunks++] = chunk;
    }
    if (!table_reserve(pool))
        goto oom;
    return 1;
oom:
    pool_fail(pool, PRT_ERR_OUT_OF_MEMORY, "out of memory adding shape expression %d", n);
    return 0;
}

/* Whether a new node's value is >= 0 for every input (see prt_expr.nonneg).
 * Operands, when there are any, exist already. */
static uint8_t node_nonneg(expr_pool *pool, const expr_node *n)
{
    uint8_t a, b;
    switch (n->kind) {
    case EXPR_CONST:
        return n->imm >= 0;
    case EXPR_INPUT_DIM:
    case EXPR_SIZE:
        return 1;
    case EXPR_OP:
        break;
    default:
        return 0; /* shape-input values may be negative (-1 in a shape) */
    }
    a = expr_slot(pool, n->a)->nonneg;
    b = expr_slot(pool, n->b)->nonneg;
    switch (n->op) {
    case PRT_DIM_SUM:
    case PRT_DIM_PROD:
    case PRT_DIM_MIN:
    case PRT_DIM_FLOOR_DIV:
    case PRT_DIM_CEIL_DIV:
    case PRT_DIM_FLOOR_MUL_F32: /* a key >= 0 is a float >= 0 */
        return a && b;
    case PRT_DIM_MAX:
        return a || b;
    case PRT_DIM_EQUAL:
    case PRT_DIM_LESS:
        return 1;
    default:
        return 0; /* SUB */
    }
}

/* Appends a node; `intern` also enters it in the hash table under hash h. */
static const prt_expr *pool_add(expr_pool *pool, const expr_node *node, uint8_t has_size,
                                int intern, uint32_t h)
{
    int32_t id;
    prt_expr *e;
    if (!pool_reserve(pool))
        return NULL;
    id = pool->prog.nb_nodes++;
    pool->prog.nodes[id] = *node;
    e = expr_slot(pool, id);
    e->id = id;
    e->has_size = has_size;
    e->nonneg = node_nonneg(pool, node);
    if (intern) {
        table_put(pool->table, pool->table_cap, id, h);
        pool->table_count++;
    }
    return e;
}

/* The one node equal to *node, made if it does not exist yet. */
static const prt_expr *pool_intern(expr_pool *pool, const expr_node *node,
                                   uint8_t has_size)
{
    uint32_t h = node_hash(node);
    int32_t id = table_find(pool, node, h);
    if (id >= 0)
        return expr_slot(pool, id);
    return pool_add(pool, node, has_size, 1, h);
}

/* ------------------------------------------------------------------------ */
/* Pool                                                                      */
/* ------------------------------------------------------------------------ */

static const prt_expr *abi_constant(prt_expr_builder *self, int64_t value);
static const prt_expr *abi_operation(prt_expr_builder *self, int32_t op,
                                     const prt_expr *a, const prt_expr *b);
static const prt_expr *abi_declare_size(prt_expr_builder *self, int32_t output_index,
                                        const prt_expr *opt, const prt_expr *upper);
static int32_t abi_is_constant(prt_expr_builder *self, const prt_expr *e, int64_t *value);

expr_pool *expr_pool_create(void)
{
    /* Arrays are made on the first node, so creation is one allocation. */
    expr_pool *pool = base_calloc(1, sizeof *pool);
    if (!pool) {
        base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory creating an "
                                          "expression pool");
        return NULL;
    }
    pool->builder.struct_size = sizeof pool->builder;
    pool->builder.abi_version = PRT_PLUGIN_ABI_VERSION;
    pool->builder.constant = abi_constant;
    pool->builder.operation = abi_operation;
    pool->builder.declare_size_tensor = abi_declare_size;
    pool->builder.is_constant = abi_is_constant;
    pool->builder.host = pool;
    return pool;
}

void expr_pool_destroy(expr_pool *pool)
{
    if (!pool)
        return;
    for (int32_t c = 0; c < pool->nb_chunks; c++)
        base_free(pool->chunks[c]);
    base_free(pool->chunks);
    base_free(pool->prog.nodes);
    base_free(pool->table);
    base_free(pool->sizes);
    base_free(pool);
}

const expr_program *expr_pool_program(const expr_pool *pool)
{
    return pool ? &pool->prog : NULL;
}

const char *expr_pool_error(const expr_pool *pool)
{
    return pool ? pool->error : "";
}

int expr_is_const(const expr_pool *pool, const prt_expr *e, int64_t *value)
{
    const expr_node *n;
    if (!pool || !e || !pool_owns(pool, e))
        return 0;
    n = &pool->prog.nodes[e->id];
    if (n->kind != EXPR_CONST)
        return 0;
    if (value)
        *value = n->imm;
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Leaves                                                                    */
/* ------------------------------------------------------------------------ */

const prt_expr *expr_const(expr_pool *pool, int64_t value)
{
    expr_node n = {EXPR_CONST, 0, value, 0, 0};
    if (!pool)
        return NULL;
    return pool_intern(pool, &n, 0);
}

const prt_expr *expr_input_dim(expr_pool *pool, int32_t input, int32_t dim)
{
    expr_node n = {EXPR_INPUT_DIM, 0, 0, input, dim};
    if (!pool)
        return NULL;
    if (input < 0 || dim < 0 || dim >= PRT_MAX_DIMS)
        return pool_fail(pool, PRT_ERR_INVALID_ARGUMENT,
                         "input %d dim %d: no such input dim", input, dim);
    return pool_intern(pool, &n, 0);
}

const prt_expr *expr_input_value(expr_pool *pool, int32_t input, int32_t index)
{
    expr_node n = {EXPR_INPUT_VALUE, 0, 0, input, index};
    if (!pool)
        return NULL;
    if (input < 0 || index < 0 || index >= PRT_MAX_DIMS)
        return pool_fail(pool, PRT_ERR_INVALID_ARGUMENT,
                         "input %d value %d: no such shape-input value", input, index);
    return pool_intern(pool, &n, 0);
}

/* ------------------------------------------------------------------------ */
/* Operations and folding                                                    */
/* ------------------------------------------------------------------------ */

static int op_commutes(int32_t op)
{
    return op == PRT_DIM_SUM || op == PRT_DIM_PROD || op == PRT_DIM_MAX ||
           op == PRT_DIM_MIN || op == PRT_DIM_EQUAL;
}

static int op_divides(int32_t op)
{
    return op == PRT_DIM_FLOOR_DIV || op == PRT_DIM_CEIL_DIV;
}

typedef enum fold_result {
    FOLD_NONE, /* needs a node */
    FOLD_A,    /* the result is operand a */
    FOLD_B,
    FOLD_ZERO,
    FOLD_ONE
} fold_result;

/* Algebraic identities that hold for every value of the non-constant side.
 * ca/cb say whether va/vb hold constant operand values. Because equal
 * expressions are one object, a == b is exact expression equality. */
static fold_result fold_identity(int32_t op, const prt_expr *a, const prt_expr *b, int ca,
                                 int64_t va, int cb, int64_t vb)
{
    switch (op) {
    case PRT_DIM_SUM:
        return cb && vb == 0 ? FOLD_A : ca && va == 0 ? FOLD_B : FOLD_NONE;
    case PRT_DIM_PROD:
        if ((ca && va == 0) || (cb && vb == 0))
            return FOLD_ZERO;
        return cb && vb == 1 ? FOLD_A : ca && va == 1 ? FOLD_B : FOLD_NONE;
    case PRT_DIM_SUB:
        return a == b ? FOLD_ZERO : cb && vb == 0 ? FOLD_A : FOLD_NONE;
    case PRT_DIM_MAX:
    case PRT_DIM_MIN:
        return a == b ? FOLD_A : FOLD_NONE;
    case PRT_DIM_EQUAL:
        return a == b ? FOLD_ONE : FOLD_NONE;
    case PRT_DIM_LESS:
        return a == b ? FOLD_ZERO : FOLD_NONE;
    case PRT_DIM_FLOOR_DIV:
    case PRT_DIM_CEIL_DIV:
        return cb && vb == 1 ? FOLD_A : FOLD_NONE;
    case PRT_DIM_FLOOR_MUL_F32: /* times 1.0f or +-0.0f */
        return cb && vb == 0x3f800000 ? FOLD_A : cb && vb == 0 ? FOLD_ZERO : FOLD_NONE;
    default:
        return FOLD_NONE;
    }
}

/* Facts from signs: a value known to be >= 0 never equals a negative
 * constant nor is below a constant <= 0, and bounds it from above. */
static fold_result fold_sign(int32_t op, const prt_expr *a, const prt_expr *b, int ca,
                             int64_t va, int cb, int64_t vb)
{
    int a_nn_b_neg = a->nonneg && cb && vb < 0; /* a >= 0 > b */
    int b_nn_a_neg = b->nonneg && ca && va < 0; /* b >= 0 > a */
    switch (op) {
    case PRT_DIM_EQUAL:
        return a_nn_b_neg || b_nn_a_neg ? FOLD_ZERO : FOLD_NONE;
    case PRT_DIM_LESS:
        if (a->nonneg && cb && vb <= 0)
            return FOLD_ZERO; /* a < b <= 0 <= a: never */
        return b_nn_a_neg ? FOLD_ONE : FOLD_NONE;
    case PRT_DIM_MAX:
        return a->nonneg && cb && vb <= 0   ? FOLD_A
               : b->nonneg && ca && va <= 0 ? FOLD_B
                                            : FOLD_NONE;
    case PRT_DIM_MIN:
        return a->nonneg && cb && vb <= 0   ? FOLD_B
               : b->nonneg && ca && va <= 0 ? FOLD_A
                                            : FOLD_NONE;
    default:
        return FOLD_NONE;
    }
}

/* The expression a fold_result names: 1 with *out set, or 0 for
 * FOLD_NONE. */
static int fold_take(expr_pool *pool, fold_result r, const prt_expr *a, const prt_expr *b,
                     const prt_expr **out)
{
    switch (r) {
    case FOLD_A:
        *out = a;
        return 1;
    case FOLD_B:
        *out = b;
        return 1;
    case FOLD_ZERO:
        *out = expr_const(pool, 0);
        return 1;
    case FOLD_ONE:
        *out = expr_const(pool, 1);
        return 1;
    default:
        return 0;
    }
}

/* Decides op(a, b) without a new OP node when it can. Returns 1 with *out
 * the result (NULL: failed, error recorded), or 0 when a node is needed. */
static int fold(expr_pool *pool, int32_t op, const prt_expr *a, const prt_expr *b,
                const prt_expr **out)
{
    int64_t va = 0, vb = 0, v;
    int ca = expr_is_const(pool, a, &va);
    int cb = expr_is_const(pool, b, &vb);
    if (ca && cb) {
        const char *why = expr_apply(op, va, vb, &v);
        *out = why ? pool_fail(pool, PRT_ERR_SHAPE, "%s(%lld, %lld): %s",
                               expr_op_name(op), (long long)va, (long long)vb, why)
                   : expr_const(pool, v);
        return 1;
    }
    if (op_divides(op) && cb && vb == 0) {
        *out = pool_fail(pool, PRT_ERR_SHAPE,
                         "%s(node %d, 0): division by "
                         "constant zero",
                         expr_op_name(op), a->id);
        return 1;
    }
    if (fold_take(pool, fold_sign(op, a, b, ca, va, cb, vb), a, b, out))
        return 1;
    return fold_take(pool, fold_identity(op, a, b, ca, va, cb, vb), a, b, out);
}

const prt_expr *expr_op(expr_pool *pool, int32_t op, const prt_expr *a, const prt_expr *b)
{
    const prt_expr *r;
    expr_node n;
    if (!pool)
        return NULL;
    if (op < 0 || op >= EXPR_OP_COUNT)
        return pool_fail(pool, PRT_ERR_INVALID_ARGUMENT, "unknown dim operation %d",
                         (int)op);
    if (!a || !b)
        return null_operand(pool, expr_op_name(op));
    if (!pool_owns(pool, a) || !pool_owns(pool, b))
        return pool_fail(pool, PRT_ERR_INVALID_ARGUMENT,
                         "%s: an operand is not an expression of this build",
                         expr_op_name(op));
    if (fold(pool, op, a, b, &r))
        return r;
    /* One order for commutative operations, so that op(a, b) and op(b, a)
     * hash to the same node. */
    if (op_commutes(op) && a->id > b->id) {
        const prt_expr *t = a;
        a = b;
        b = t;
    }
    n = (expr_node){EXPR_OP, op, 0, a->id, b->id};
    return pool_intern(pool, &n, a->has_size | b->has_size);
}

/* ------------------------------------------------------------------------ */
/* Size tensors                                                              */
/* ------------------------------------------------------------------------ */

void expr_pool_begin_layer(expr_pool *pool, int32_t layer, int32_t nb_outputs)
{
    if (!pool)
        return;
    pool->layer = layer;
    pool->layer_outputs = nb_outputs;
    pool->layer_begun = 1;
}

int32_t expr_pool_size_count(const expr_pool *pool)
{
    return pool ? pool->nb_sizes : 0;
}

void expr_pool_size_owner(const expr_pool *pool, int32_t size_id, int32_t *layer,
                          int32_t *output_index)
{
    int ok = pool && size_id >= 0 && size_id < pool->nb_sizes;
    if (layer)
        *layer = ok ? pool->sizes[size_id].layer : -1;
    if (output_index)
        *output_index = ok ? pool->sizes[size_id].output_index : -1;
}

/* The size id owned by (layer, output_index), or -1. Linear: a network has
 * few size tensors. */
static int32_t size_find(const expr_pool *pool, int32_t layer, int32_t output_index)
{
    for (int32_t k = 0; k < pool->nb_sizes; k++) {
        if (pool->sizes[k].layer == layer && pool->sizes[k].output_index == output_index)
            return k;
    }
    return -1;
}

/* A new size symbol for (current layer, output_index). */
static const prt_expr *size_new(expr_pool *pool, int32_t output_index,
                                const prt_expr *opt, const prt_expr *upper)
{
    expr_node n = {EXPR_SIZE, 0, pool->nb_sizes, opt->id, upper->id};
    expr_size_decl *sizes =
        grow(pool->sizes, &pool->size_cap, pool->nb_sizes + 1, sizeof *sizes);
    const prt_expr *e;
    if (!sizes)
        return pool_fail(pool, PRT_ERR_OUT_OF_MEMORY,
                         "out of memory declaring a size tensor");
    pool->sizes = sizes;
    /* Not interned: the symbol is new by definition, and one (layer,
     * output) maps to it through `sizes`, not through its content. */
    e = pool_add(pool, &n, 1, 0, 0);
    if (!e)
        return NULL;
    pool->sizes[pool->nb_sizes++] = (expr_size_decl){pool->layer, output_index, e->id};
    return e;
}

/* The rules of expr.h that do not depend on earlier declarations: upper
 * when they hold, else NULL with the error recorded. */
static const prt_expr *size_check(expr_pool *pool, int32_t output_index,
                                  const prt_expr *opt, const prt_expr *upper)
{
    int64_t v;
    if (!pool->layer_begun)
        return pool_fail(pool, PRT_ERR_STATE,
                         "declare_size_tensor: called "
                         "outside get_output_shapes");
    if (output_index < 0 || output_index >= pool->layer_outputs)
        return pool_fail(pool, PRT_ERR_INVALID_ARGUMENT,
                         "declare_size_tensor: layer %d has no output %d "
                         "(it has %d)",
                         pool->layer, output_index, pool->layer_outputs);
    if (!opt || !upper)
        return null_operand(pool, "declare_size_tensor");
    if (!pool_owns(pool, opt) || !pool_owns(pool, upper))
        return pool_fail(pool, PRT_ERR_INVALID_ARGUMENT,
                         "declare_size_tensor: an operand is not an "
                         "expression of this build");
    /* The builder tunes at opt before any plugin has run, so opt must be
     * computable from input dims alone. */
    if (opt->has_size)
        return pool_fail(pool, PRT_ERR_SHAPE,
                         "declare_size_tensor: layer %d "
                         "output %d: opt depends on a size tensor",
                         pool->layer, output_index);
    if (expr_is_const(pool, upper, &v) && v < 0)
        return pool_fail(pool, PRT_ERR_SHAPE,
                         "declare_size_tensor: layer %d "
                         "output %d: upper bound %lld is negative",
                         pool->layer, output_index, (long long)v);
    return upper;
}

const prt_expr *expr_size(expr_pool *pool, int32_t output_index, const prt_expr *opt,
                          const prt_expr *upper)
{
    int32_t k;
    const expr_node *n;
    if (!pool)
        return NULL;
    if (!size_check(pool, output_index, opt, upper))
        return NULL;
    k = size_find(pool, pool->layer, output_index);
    if (k < 0)
        return size_new(pool, output_index, opt, upper);
    /* A plugin may declare again (e.g. get_output_shapes called once per
     * profile); that is fine as long as it says the same thing. */
    n = &pool->prog.nodes[pool->sizes[k].node];
    if (n->a == opt->id && n->b == upper->id)
        return expr_slot(pool, pool->sizes[k].node);
    return pool_fail(pool, PRT_ERR_ALREADY_EXISTS,
                     "declare_size_tensor: "
                     "layer %d output %d declared again with a different opt "
                     "or upper bound",
                     pool->layer, output_index);
}

/* ------------------------------------------------------------------------ */
/* The ABI table                                                             */
/* ------------------------------------------------------------------------ */

static expr_pool *builder_pool(prt_expr_builder *self)
{
    return self ? (expr_pool *)self->host : NULL;
}

static const prt_expr *abi_constant(prt_expr_builder *self, int64_t value)
{
    return expr_const(builder_pool(self), value);
}

static const prt_expr *abi_operation(prt_expr_builder *self, int32_t op,
                                     const prt_expr *a, const prt_expr *b)
{
    return expr_op(builder_pool(self), op, a, b);
}

static const prt_expr *abi_declare_size(prt_expr_builder *self, int32_t output_index,
                                        const prt_expr *opt, const prt_expr *upper)
{
    return expr_size(builder_pool(self), output_index, opt, upper);
}

static int32_t abi_is_constant(prt_expr_builder *self, const prt_expr *e, int64_t *value)
{
    return expr_is_const(builder_pool(self), e, value);
}

prt_expr_builder *expr_pool_builder(expr_pool *pool)
{
    return pool ? &pool->builder : NULL;
}
