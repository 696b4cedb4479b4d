/* The checker's expression builder: hash-consed nodes, folding, evaluation
 * and interval bounds (check_expr.h). */
#include "check_expr.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { N_CONST, N_INPUT_DIM, N_SIZE, N_OP };

typedef struct node {
    int32_t kind;
    int32_t op;
    int64_t imm;  /* CONST: value; SIZE: size id */
    int32_t a, b; /* INPUT_DIM: input, dim; SIZE: opt, upper; OP: operands */
    uint8_t has_size;
    uint8_t nonneg; /* >= 0 for every input: dims and sizes are */
} node;

#define TABLE_CAP (2 * CHK_POOL_NODES) /* a power of two */

typedef struct size_decl {
    int32_t output, node;
} size_decl;

struct chk_pool {
    prt_expr_builder builder;
    node *nodes;
    int32_t nb_nodes;
    int32_t table[TABLE_CAP]; /* node index + 1; 0 is empty */
    int32_t shapes_open, nb_outputs;
    size_decl sizes[CHK_MAX_OUT];
    int32_t nb_sizes;
    char error[256];
};

static const prt_expr *as_expr(const chk_pool *p, int32_t id)
{
    return (const prt_expr *)(const void *)&p->nodes[id];
}

int chk_pool_owns(const chk_pool *p, const prt_expr *e)
{
    const node *n = (const node *)(const void *)e;
    return p && e && n >= p->nodes && n < p->nodes + p->nb_nodes &&
           ((const char *)n - (const char *)p->nodes) % sizeof(node) == 0;
}

static int32_t id_of(const chk_pool *p, const prt_expr *e)
{
    return (int32_t)((const node *)(const void *)e - p->nodes);
}

static const prt_expr *pool_fail(chk_pool *p, const char *fmt, ...) CLI_PRINTF(2, 3);
static const prt_expr *pool_fail(chk_pool *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->error, sizeof p->error, fmt, ap);
    va_end(ap);
    return NULL;
}

const char *chk_pool_error(const chk_pool *p)
{
    return p ? p->error : "";
}

static uint32_t node_hash(const node *n)
{
    uint64_t h = 1469598103934665603ull;
    uint64_t parts[4] = {(uint64_t)n->kind << 32 | (uint32_t)n->op, (uint64_t)n->imm,
                         (uint64_t)(uint32_t)n->a, (uint64_t)(uint32_t)n->b};
    for (int i = 0; i < 4; i++) {
        h ^= parts[i];
        h *= 1099511628211ull;
        h ^= h >> 29;
    }
    return (uint32_t)h;
}

static uint8_t node_nonneg(const chk_pool *p, const node *n)
{
    uint8_t a, b;
    if (n->kind == N_CONST)
        return n->imm >= 0;
    if (n->kind != N_OP)
        return 1;
    a = p->nodes[n->a].nonneg;
    b = p->nodes[n->b].nonneg;
    switch (n->op) {
    case PRT_DIM_MAX:
        return a || b;
    case PRT_DIM_EQUAL:
    case PRT_DIM_LESS:
        return 1;
    case PRT_DIM_SUB:
        return 0;
    default:
        return a && b;
    }
}

/* The one node equal to *key, made if new; `intern` 0 makes a fresh node
 * (size symbols are new by definition). */
static const prt_expr *pool_node(chk_pool *p, const node *key, int intern)
{
    uint32_t h = node_hash(key), i = h & (TABLE_CAP - 1);
    node *n;
    if (intern) {
        for (; p->table[i]; i = (i + 1) & (TABLE_CAP - 1)) {
            const node *x = &p->nodes[p->table[i] - 1];
            if (x->kind == key->kind && x->op == key->op && x->imm == key->imm &&
                x->a == key->a && x->b == key->b)
                return as_expr(p, p->table[i] - 1);
        }
    }
    if (p->nb_nodes == CHK_POOL_NODES)
        return pool_fail(p, "the expression pool is full (%d nodes)", CHK_POOL_NODES);
    n = &p->nodes[p->nb_nodes];
    *n = *key;
    n->has_size =
        key->kind == N_SIZE ||
        (key->kind == N_OP && (p->nodes[key->a].has_size || p->nodes[key->b].has_size));
    n->nonneg = node_nonneg(p, key);
    if (intern)
        p->table[i] = p->nb_nodes + 1;
    return as_expr(p, p->nb_nodes++);
}

const prt_expr *chk_pool_const(chk_pool *p, int64_t v)
{
    node k = {N_CONST, 0, v, 0, 0, 0, 0};
    return p ? pool_node(p, &k, 1) : NULL;
}

const prt_expr *chk_pool_input_dim(chk_pool *p, int32_t input, int32_t dim)
{
    node k = {N_INPUT_DIM, 0, 0, input, dim, 0, 0};
    return p ? pool_node(p, &k, 1) : NULL;
}

int chk_pool_is_const(const chk_pool *p, const prt_expr *e, int64_t *v)
{
    const node *n;
    if (!chk_pool_owns(p, e))
        return 0;
    n = &p->nodes[id_of(p, e)];
    if (n->kind != N_CONST)
        return 0;
    if (v)
        *v = n->imm;
    return 1;
}

int chk_pool_has_size(const chk_pool *p, const prt_expr *e)
{
    return chk_pool_owns(p, e) && p->nodes[id_of(p, e)].has_size;
}

/* ---- operations ------------------------------------------------------------ */

static const char *const op_names[] = {"SUM",   "PROD", "MAX",       "MIN",     "SUB",
                                       "EQUAL", "LESS", "FLOOR_DIV", "CEIL_DIV"};
#define NB_OPS (int32_t)(sizeof op_names / sizeof op_names[0])

/* op(a, b) on values: NULL and *out, or the reason. Rounds as plugin.h
 * says (floor toward -inf, ceil toward +inf). */
static const char *apply(int32_t op, int64_t a, int64_t b, int64_t *out)
{
    int64_t q, r;
    switch (op) {
    case PRT_DIM_SUM:
        return __builtin_add_overflow(a, b, out) ? "overflow" : NULL;
    case PRT_DIM_PROD:
        return __builtin_mul_overflow(a, b, out) ? "overflow" : NULL;
    case PRT_DIM_SUB:
        return __builtin_sub_overflow(a, b, out) ? "overflow" : NULL;
    case PRT_DIM_MAX:
        *out = a > b ? a : b;
        return NULL;
    case PRT_DIM_MIN:
        *out = a < b ? a : b;
        return NULL;
    case PRT_DIM_EQUAL:
        *out = a == b;
        return NULL;
    case PRT_DIM_LESS:
        *out = a < b;
        return NULL;
    case PRT_DIM_FLOOR_DIV:
    case PRT_DIM_CEIL_DIV:
        if (b == 0)
            return "division by zero";
        if (a == INT64_MIN && b == -1)
            return "overflow";
        q = a / b;
        r = a % b;
        if (r != 0 && ((r < 0) != (b < 0)) == (op == PRT_DIM_FLOOR_DIV))
            q += op == PRT_DIM_FLOOR_DIV ? -1 : 1;
        *out = q;
        return NULL;
    default:
        return "unknown operation";
    }
}

/* What folds without a node, as libplugrt folds (src/expr/expr.c): the
 * result, or NULL when a node is needed. *failed is set when folding
 * itself fails. */
static const prt_expr *fold(chk_pool *p, int32_t op, const prt_expr *ea,
                            const prt_expr *eb, int *failed)
{
    const node *a = &p->nodes[id_of(p, ea)], *b = &p->nodes[id_of(p, eb)];
    int ca = a->kind == N_CONST, cb = b->kind == N_CONST;
    int64_t va = a->imm, vb = b->imm, v;
    int same = ea == eb;
    *failed = 0;
    if (ca && cb) {
        const char *why = apply(op, va, vb, &v);
        if (why) {
            *failed = 1;
            return pool_fail(p, "%s(%lld, %lld): %s", op_names[op], (long long)va,
                             (long long)vb, why);
        }
        return chk_pool_const(p, v);
    }
    if ((op == PRT_DIM_FLOOR_DIV || op == PRT_DIM_CEIL_DIV) && cb && vb == 0) {
        *failed = 1;
        return pool_fail(p, "%s(x, 0): division by constant zero", op_names[op]);
    }
    switch (op) {
    case PRT_DIM_SUM:
        return cb && vb == 0 ? ea : ca && va == 0 ? eb : NULL;
    case PRT_DIM_PROD:
        if ((ca && va == 0) || (cb && vb == 0))
            return chk_pool_const(p, 0);
        return cb && vb == 1 ? ea : ca && va == 1 ? eb : NULL;
    case PRT_DIM_SUB:
        return same ? chk_pool_const(p, 0) : cb && vb == 0 ? ea : NULL;
    case PRT_DIM_MAX:
        if (same || (a->nonneg && cb && vb <= 0))
            return ea;
        return b->nonneg && ca && va <= 0 ? eb : NULL;
    case PRT_DIM_MIN:
        if (same || (b->nonneg && ca && va <= 0))
            return ea;
        return a->nonneg && cb && vb <= 0 ? eb : NULL;
    case PRT_DIM_EQUAL:
        if (same)
            return chk_pool_const(p, 1);
        if ((a->nonneg && cb && vb < 0) || (b->nonneg && ca && va < 0))
            return chk_pool_const(p, 0);
        return NULL;
    case PRT_DIM_LESS:
        if (same || (a->nonneg && cb && vb <= 0))
            return chk_pool_const(p, 0);
        return b->nonneg && ca && va < 0 ? chk_pool_const(p, 1) : NULL;
    default: /* the divisions */
        return cb && vb == 1 ? ea : NULL;
    }
}

static const prt_expr *pool_op(chk_pool *p, int32_t op, const prt_expr *a,
                               const prt_expr *b)
{
    const prt_expr *r;
    int failed;
    node k;
    if (op < 0 || op >= NB_OPS)
        return pool_fail(p, "unknown dim operation %d", (int)op);
    if (!a || !b)
        return pool_fail(p, "%s: a NULL operand", op_names[op]);
    if (!chk_pool_owns(p, a) || !chk_pool_owns(p, b))
        return pool_fail(p, "%s: an operand is not an expression of this build",
                         op_names[op]);
    r = fold(p, op, a, b, &failed);
    if (r || failed)
        return r;
    /* One order for commutative operations: op(a, b) is op(b, a). */
    if (op != PRT_DIM_SUB && op != PRT_DIM_LESS && op != PRT_DIM_FLOOR_DIV &&
        op != PRT_DIM_CEIL_DIV && id_of(p, a) > id_of(p, b)) {
        const prt_expr *t = a;
        a = b;
        b = t;
    }
    k = (node){N_OP, op, 0, id_of(p, a), id_of(p, b), 0, 0};
    return pool_node(p, &k, 1);
}

/* ---- size tensors ---------------------------------------------------------- */

void chk_pool_begin_shapes(chk_pool *p, int32_t nb_outputs)
{
    p->shapes_open = 1;
    p->nb_outputs = nb_outputs;
}

void chk_pool_end_shapes(chk_pool *p)
{
    p->shapes_open = 0;
}

int32_t chk_pool_size_of_output(const chk_pool *p, int32_t output)
{
    for (int32_t k = 0; k < p->nb_sizes; k++)
        if (p->sizes[k].output == output)
            return k;
    return -1;
}

static const prt_expr *pool_size(chk_pool *p, int32_t output, const prt_expr *opt,
                                 const prt_expr *upper)
{
    int32_t k;
    int64_t v;
    node key;
    const prt_expr *e;
    if (!p->shapes_open)
        return pool_fail(p, "declare_size_tensor: called outside get_output_shapes");
    if (output < 0 || output >= p->nb_outputs)
        return pool_fail(p, "declare_size_tensor: no output %d (the plugin has %d)",
                         (int)output, (int)p->nb_outputs);
    if (!opt || !upper)
        return pool_fail(p, "declare_size_tensor: a NULL operand");
    if (!chk_pool_owns(p, opt) || !chk_pool_owns(p, upper))
        return pool_fail(p, "declare_size_tensor: an operand is not an expression of "
                            "this build");
    if (p->nodes[id_of(p, opt)].has_size)
        return pool_fail(p,
                         "declare_size_tensor: output %d: opt depends on a size tensor",
                         (int)output);
    if (chk_pool_is_const(p, upper, &v) && v < 0)
        return pool_fail(p,
                         "declare_size_tensor: output %d: upper bound %lld is negative",
                         (int)output, (long long)v);
    k = chk_pool_size_of_output(p, output);
    if (k >= 0) {
        const node *n = &p->nodes[p->sizes[k].node];
        if (n->a == id_of(p, opt) && n->b == id_of(p, upper))
            return as_expr(p, p->sizes[k].node);
        return pool_fail(p,
                         "declare_size_tensor: output %d declared again with another "
                         "opt or upper bound",
                         (int)output);
    }
    if (p->nb_sizes == CHK_MAX_OUT)
        return pool_fail(p, "declare_size_tensor: too many size tensors");
    key = (node){N_SIZE, 0, p->nb_sizes, id_of(p, opt), id_of(p, upper), 0, 0};
    e = pool_node(p, &key, 0);
    if (e)
        p->sizes[p->nb_sizes++] = (size_decl){output, id_of(p, e)};
    return e;
}

int32_t chk_pool_size_count(const chk_pool *p)
{
    return p->nb_sizes;
}

int32_t chk_pool_size_output(const chk_pool *p, int32_t size_id)
{
    return p->sizes[size_id].output;
}

const prt_expr *chk_pool_size_opt(const chk_pool *p, int32_t size_id)
{
    return as_expr(p, p->nodes[p->sizes[size_id].node].a);
}

const prt_expr *chk_pool_size_upper(const chk_pool *p, int32_t size_id)
{
    return as_expr(p, p->nodes[p->sizes[size_id].node].b);
}

/* ---- the ABI table --------------------------------------------------------- */

static chk_pool *pool_of(prt_expr_builder *b)
{
    return b ? (chk_pool *)b->host : NULL;
}

static const prt_expr *abi_constant(prt_expr_builder *self, int64_t value)
{
    return chk_pool_const(pool_of(self), value);
}

static const prt_expr *abi_operation(prt_expr_builder *self, int32_t op,
                                     const prt_expr *a, const prt_expr *b)
{
    chk_pool *p = pool_of(self);
    return p ? pool_op(p, op, a, b) : NULL;
}

static const prt_expr *abi_declare_size(prt_expr_builder *self, int32_t output_index,
                                        const prt_expr *opt, const prt_expr *upper)
{
    chk_pool *p = pool_of(self);
    return p ? pool_size(p, output_index, opt, upper) : NULL;
}

static int32_t abi_is_constant(prt_expr_builder *self, const prt_expr *e, int64_t *value)
{
    return chk_pool_is_const(pool_of(self), e, value);
}

chk_pool *chk_pool_create(void)
{
    chk_pool *p = calloc(1, sizeof *p);
    if (p)
        p->nodes = calloc(CHK_POOL_NODES, sizeof *p->nodes);
    if (!p || !p->nodes) {
        free(p);
        return NULL;
    }
    p->builder.struct_size = sizeof p->builder;
    p->builder.abi_version = PRT_PLUGIN_ABI_VERSION;
    p->builder.constant = abi_constant;
    p->builder.operation = abi_operation;
    p->builder.declare_size_tensor = abi_declare_size;
    p->builder.is_constant = abi_is_constant;
    p->builder.host = p;
    return p;
}

void chk_pool_destroy(chk_pool *p)
{
    if (!p)
        return;
    free(p->nodes);
    free(p);
}

prt_expr_builder *chk_pool_builder(chk_pool *p)
{
    return &p->builder;
}

char *chk_pool_str(const chk_pool *p, const prt_expr *e, char *buf, size_t cap)
{
    const node *n;
    char a[192], b[192];
    if (!chk_pool_owns(p, e)) {
        snprintf(buf, cap, "%s", e ? "<not an expression>" : "NULL");
        return buf;
    }
    n = &p->nodes[id_of(p, e)];
    if (n->kind == N_CONST)
        snprintf(buf, cap, "%lld", (long long)n->imm);
    else if (n->kind == N_INPUT_DIM)
        snprintf(buf, cap, "in%d.d%d", (int)n->a, (int)n->b);
    else if (n->kind == N_SIZE)
        snprintf(buf, cap, "size%lld", (long long)n->imm);
    else
        snprintf(buf, cap, "%s(%s, %s)", op_names[n->op],
                 chk_pool_str(p, as_expr(p, n->a), a, sizeof a),
                 chk_pool_str(p, as_expr(p, n->b), b, sizeof b));
    return buf;
}

/* ---- evaluation ------------------------------------------------------------ */

static int input_dim(const node *n, int32_t nb_inputs, const prt_dims *dims, int64_t *out,
                     char *why, size_t cap)
{
    if (n->a < 0 || n->a >= nb_inputs || n->b < 0 || n->b >= dims[n->a].nb_dims) {
        snprintf(why, cap, "in%d.d%d does not exist", (int)n->a, (int)n->b);
        return -1;
    }
    *out = dims[n->a].d[n->b];
    return 0;
}

int chk_pool_eval(const chk_pool *p, const chk_env *env, const prt_expr *e, int64_t *out,
                  char *why, size_t cap)
{
    int32_t last;
    int64_t *v;
    int rc = 0;
    if (!chk_pool_owns(p, e)) {
        snprintf(why, cap, "not an expression");
        return -1;
    }
    last = id_of(p, e);
    v = malloc(sizeof(int64_t) * (size_t)(last + 1));
    if (!v) {
        snprintf(why, cap, "out of memory");
        return -1;
    }
    for (int32_t i = 0; i <= last && rc == 0; i++) {
        const node *n = &p->nodes[i];
        const char *bad;
        switch (n->kind) {
        case N_CONST:
            v[i] = n->imm;
            break;
        case N_INPUT_DIM:
            rc = input_dim(n, env->nb_inputs, env->dims, &v[i], why, cap);
            break;
        case N_SIZE:
            v[i] = env->sizes ? env->sizes[n->imm] : v[n->b];
            break;
        default:
            bad = apply(n->op, v[n->a], v[n->b], &v[i]);
            if (bad) {
                snprintf(why, cap, "%s(%lld, %lld): %s", op_names[n->op],
                         (long long)v[n->a], (long long)v[n->b], bad);
                rc = -1;
            }
        }
    }
    if (rc == 0)
        *out = v[last];
    free(v);
    return rc;
}

/* Interval of op over [a0, a1] x [b0, b1], from the corners (every
 * operation here is monotone in each operand on an interval whose divisor
 * keeps one sign). */
static const char *interval(int32_t op, const int64_t *a, const int64_t *b, int64_t *lo,
                            int64_t *hi)
{
    int64_t c[4];
    const char *why;
    if ((op == PRT_DIM_FLOOR_DIV || op == PRT_DIM_CEIL_DIV) && b[0] <= 0 && b[1] >= 0)
        return "a divisor whose range holds 0";
    if (op == PRT_DIM_EQUAL || op == PRT_DIM_LESS) {
        if (op == PRT_DIM_EQUAL) {
            int point = a[0] == a[1] && b[0] == b[1] && a[0] == b[0];
            int apart = a[1] < b[0] || b[1] < a[0];
            *lo = point;
            *hi = !apart;
        } else {
            *lo = a[1] < b[0]; /* always less */
            *hi = a[0] < b[1]; /* can be less */
        }
        return NULL;
    }
    if (op == PRT_DIM_SUB) {
        if ((why = apply(op, a[0], b[1], lo)) || (why = apply(op, a[1], b[0], hi)))
            return why;
        return NULL;
    }
    for (int i = 0; i < 4; i++)
        if ((why = apply(op, a[i >> 1], b[i & 1], &c[i])))
            return why;
    *lo = *hi = c[0];
    for (int i = 1; i < 4; i++) {
        *lo = c[i] < *lo ? c[i] : *lo;
        *hi = c[i] > *hi ? c[i] : *hi;
    }
    return NULL;
}

int chk_pool_bounds(const chk_pool *p, int32_t nb_inputs, const prt_dims *min,
                    const prt_dims *opt, const prt_dims *max, const prt_expr *e,
                    int64_t *lo, int64_t *out_opt, int64_t *hi, char *why, size_t cap)
{
    int32_t last;
    int64_t(*v)[3];
    int rc = 0;
    if (!chk_pool_owns(p, e)) {
        snprintf(why, cap, "not an expression");
        return -1;
    }
    last = id_of(p, e);
    v = malloc(sizeof *v * (size_t)(last + 1));
    if (!v) {
        snprintf(why, cap, "out of memory");
        return -1;
    }
    for (int32_t i = 0; i <= last && rc == 0; i++) {
        const node *n = &p->nodes[i];
        const char *bad = NULL;
        int64_t ab[2], bb[2];
        switch (n->kind) {
        case N_CONST:
            v[i][0] = v[i][1] = v[i][2] = n->imm;
            break;
        case N_INPUT_DIM:
            rc = input_dim(n, nb_inputs, min, &v[i][0], why, cap);
            if (rc == 0)
                rc = input_dim(n, nb_inputs, opt, &v[i][1], why, cap);
            if (rc == 0)
                rc = input_dim(n, nb_inputs, max, &v[i][2], why, cap);
            break;
        case N_SIZE:
            v[i][0] = 0;
            v[i][2] = v[n->b][2] > 0 ? v[n->b][2] : 0;
            v[i][1] = v[n->a][1] < 0 ? 0 : v[n->a][1] > v[i][2] ? v[i][2] : v[n->a][1];
            break;
        default:
            ab[0] = v[n->a][0], ab[1] = v[n->a][2];
            bb[0] = v[n->b][0], bb[1] = v[n->b][2];
            bad = interval(n->op, ab, bb, &v[i][0], &v[i][2]);
            if (!bad)
                bad = apply(n->op, v[n->a][1], v[n->b][1], &v[i][1]);
            if (bad) {
                snprintf(why, cap, "%s over the profile: %s", op_names[n->op], bad);
                rc = -1;
            }
        }
    }
    if (rc == 0) {
        *lo = v[last][0];
        *out_opt = v[last][1];
        *hi = v[last][2];
    }
    free(v);
    return rc;
}
