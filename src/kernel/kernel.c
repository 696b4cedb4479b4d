/*
 * Kernel layers: the engine's copy of a plugin's kernel description, its
 * hash, and the checks that keep a file's kernel from launching anything
 * other than what its code declares (kernel.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kernel/kernel.h"

void kernel_free(eng_kernel *k)
{
    if (!k)
        return;
    for (int32_t i = 0; k->code && i < k->nb_code; i++)
        base_free(k->code[i].data);
    base_free(k->code);
    for (int32_t i = 0; k->launches && i < k->nb_launches; i++) {
        base_free(k->launches[i].entry);
        base_free(k->launches[i].args);
    }
    base_free(k->launches);
    expr_program_free(&k->exprs);
    memset(k, 0, sizeof *k);
}

prt_status kernel_copy(const eng_kernel *src, eng_kernel *dst)
{
    memset(dst, 0, sizeof *dst);
    dst->layer = src->layer;
    dst->hash = src->hash;
    dst->code = base_calloc((size_t)src->nb_code + 1, sizeof *dst->code);
    dst->launches = base_calloc((size_t)src->nb_launches + 1, sizeof *dst->launches);
    if (!dst->code || !dst->launches)
        goto oom;
    dst->nb_code = src->nb_code;
    for (int32_t i = 0; i < src->nb_code; i++) {
        dst->code[i] = src->code[i];
        dst->code[i].data = base_malloc((size_t)src->code[i].size + 1);
        if (!dst->code[i].data)
            goto oom;
        memcpy(dst->code[i].data, src->code[i].data, (size_t)src->code[i].size);
        dst->code[i].data[src->code[i].size] = 0; /* PTX loads as a C string */
    }
    dst->nb_launches = src->nb_launches;
    for (int32_t i = 0; i < src->nb_launches; i++) {
        const eng_kernel_launch *s = &src->launches[i];
        eng_kernel_launch *l = &dst->launches[i];
        *l = *s;
        l->entry = base_strdup(s->entry);
        l->args = base_calloc((size_t)s->nb_args + 1, sizeof *l->args);
        if (!l->entry || !l->args)
            goto oom;
        memcpy(l->args, s->args, sizeof *l->args * (size_t)s->nb_args);
    }
    if (expr_program_copy(&src->exprs, &dst->exprs))
        goto oom;
    return PRT_OK;
oom:
    kernel_free(dst);
    return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory copying a kernel");
}

static uint64_t hash_i64(uint64_t h, int64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)((uint64_t)v >> (8 * i));
    return base_fnv1a64(b, 8, h);
}

uint64_t kernel_hash(const eng_kernel *k)
{
    uint64_t h = base_fnv1a64("plugrt kernel", 13, BASE_FNV_SEED);
    h = hash_i64(h, k->nb_code);
    for (int32_t i = 0; i < k->nb_code; i++) {
        h = hash_i64(h, k->code[i].kind);
        h = hash_i64(h, k->code[i].arch);
        h = hash_i64(h, k->code[i].size);
        h = base_fnv1a64(k->code[i].data, (size_t)k->code[i].size, h);
    }
    h = hash_i64(h, k->exprs.nb_nodes);
    for (int32_t i = 0; i < k->exprs.nb_nodes; i++) {
        const expr_node *n = &k->exprs.nodes[i];
        h = hash_i64(h, n->kind);
        h = hash_i64(h, n->op);
        h = hash_i64(h, n->imm);
        h = hash_i64(h, n->a);
        h = hash_i64(h, n->b);
    }
    h = hash_i64(h, k->nb_launches);
    for (int32_t i = 0; i < k->nb_launches; i++) {
        const eng_kernel_launch *l = &k->launches[i];
        h = base_fnv1a64(l->entry, strlen(l->entry) + 1, h);
        for (int d = 0; d < 3; d++) {
            h = hash_i64(h, l->grid[d]);
            h = hash_i64(h, l->block[d]);
        }
        h = hash_i64(h, l->shared_bytes);
        h = hash_i64(h, l->nb_args);
        for (int32_t a = 0; a < l->nb_args; a++) {
            int64_t bits;
            memcpy(&bits, &l->args[a].fvalue, sizeof bits);
            h = hash_i64(h, l->args[a].kind);
            h = hash_i64(h, l->args[a].index);
            h = hash_i64(h, l->args[a].node);
            h = hash_i64(h, bits);
        }
    }
    return h;
}

/* ---- parameters ----------------------------------------------------------- */

static const char *arg_kind_name(int32_t kind)
{
    static const char *names[PRT_KARG_COUNT] = {
        "input pointer", "output pointer", "workspace pointer", "null pointer", "int32",
        "int64",         "float32",        "float64",           "dims pointer"};
    return kind >= 0 && kind < PRT_KARG_COUNT ? names[kind] : "?";
}

/* Bytes an argument of this kind passes. */
static int32_t arg_size(int32_t kind)
{
    return kind == PRT_KARG_INT32 || kind == PRT_KARG_FLOAT32 ? 4 : 8;
}

/* Whether a parameter of PTX class `cls` takes an argument of `kind`. */
static int arg_fits(int32_t kind, char cls)
{
    if (cls == 0 || cls == 'b')
        return 1; /* a cubin (sizes only) or untyped bits */
    if (cls == 'a')
        return 0;
    if (kind == PRT_KARG_FLOAT32 || kind == PRT_KARG_FLOAT64)
        return cls == 'f';
    return cls == 'u';
}

prt_status kernel_check_params(const eng_kernel *k, const char *layer)
{
    kernel_param *params = base_calloc(KERNEL_MAX_ARGS, sizeof *params);
    prt_status st = PRT_OK;
    if (!params)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory");
    for (int32_t c = 0; c < k->nb_code && !st; c++)
        for (int32_t li = 0; li < k->nb_launches && !st; li++) {
            const eng_kernel_launch *l = &k->launches[li];
            const char *what = k->code[c].kind == PRT_KERNEL_PTX ? "PTX" : "cubin";
            int32_t n = 0;
            st = kernel_code_params(&k->code[c], l->entry, params, KERNEL_MAX_ARGS, &n);
            if (st) {
                st = base_error_prefix(st == PRT_ERR_NOT_FOUND ? PRT_ERR_INVALID_ARGUMENT
                                                               : st,
                                       "layer '%s': kernel '%s' (%s for sm_%d)", layer,
                                       l->entry, what, (int)k->code[c].arch);
                break;
            }
            if (n != l->nb_args) {
                st = base_error(
                    PRT_ERR_INVALID_ARGUMENT,
                    "layer '%s': kernel '%s' (%s for sm_%d) takes %d parameters, "
                    "but its launch passes %d%s",
                    layer, l->entry, what, (int)k->code[c].arch, (int)n, (int)l->nb_args,
                    n > l->nb_args ? " (Triton 3 and later add two scratch "
                                     "pointers at the end: pass them as "
                                     "PRT_KARG_NULL or PRT_KARG_WORKSPACE)"
                                   : "");
                break;
            }
            for (int32_t a = 0; a < n && n <= KERNEL_MAX_ARGS; a++) {
                const kernel_param *p = &params[a];
                int32_t kind = l->args[a].kind, sz = arg_size(kind);
                if (p->size != sz || !arg_fits(kind, p->cls) || p->align % sz != 0) {
                    st = base_error(
                        PRT_ERR_INVALID_ARGUMENT,
                        "layer '%s': kernel '%s' (%s for sm_%d): parameter %d is "
                        "%s (%d bytes, aligned to %d), but the launch passes %s "
                        "(%d bytes)",
                        layer, l->entry, what, (int)k->code[c].arch, (int)a, p->type,
                        (int)p->size, (int)p->align, arg_kind_name(kind), (int)sz);
                    break;
                }
            }
        }
    base_free(params);
    return st;
}

/* ---- validation ----------------------------------------------------------- */

/* An error naming the layer after `lead`: "LEAD 'layer': message". */
static prt_status kfail(prt_status status, const char *lead, const char *layer,
                        const char *fmt, ...) BASE_PRINTF(4, 5);
static prt_status kfail(prt_status status, const char *lead, const char *layer,
                        const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return base_error(status, "%s '%s': %s", lead, layer, msg);
}

#define bad(layer, ...)                                                                  \
    kfail(PRT_ERR_MALFORMED, "malformed engine: kernel of layer", layer, __VA_ARGS__)
#define desc_fail(layer, ...)                                                            \
    kfail(PRT_ERR_PLUGIN, "get_kernel of layer", layer, __VA_ARGS__)

static int node_ok(const eng_kernel *k, int32_t node)
{
    return node >= 0 && node < k->exprs.nb_nodes;
}

prt_status kernel_validate(const eng_kernel *k, const char *layer, const kernel_io *io)
{
    int32_t n = io->nb_in + io->nb_out;
    prt_status st;
    if (k->nb_code < 1 || k->nb_code > KERNEL_MAX_CODE)
        return bad(layer, "%d codes (1..%d)", (int)k->nb_code, KERNEL_MAX_CODE);
    for (int32_t c = 0; c < k->nb_code; c++) {
        const eng_kernel_code *code = &k->code[c];
        int32_t arch = 0;
        if (code->kind != PRT_KERNEL_PTX && code->kind != PRT_KERNEL_CUBIN)
            return bad(layer, "code %d has kind %d, neither PTX nor cubin", (int)c,
                       (int)code->kind);
        if (code->size <= 0 || code->size > KERNEL_MAX_CODE_BYTES)
            return bad(layer, "code %d has %lld bytes", (int)c, (long long)code->size);
        if (kernel_code_arch(code->kind, code->data, code->size, &arch))
            return base_error_prefix(PRT_ERR_MALFORMED,
                                     "malformed engine: kernel of layer '%s': code %d",
                                     layer, (int)c);
        if (arch != code->arch)
            return bad(layer, "code %d is listed for sm_%d, but its %s is for sm_%d",
                       (int)c, (int)code->arch,
                       code->kind == PRT_KERNEL_PTX ? "PTX" : "cubin", (int)arch);
        for (int32_t d = 0; d < c; d++)
            if (k->code[d].kind == code->kind && k->code[d].arch == code->arch)
                return bad(layer, "codes %d and %d are both %s for sm_%d", (int)d, (int)c,
                           code->kind == PRT_KERNEL_PTX ? "PTX" : "cubin", (int)arch);
    }
    /* The program: constants, operations and this layer's dims only. */
    st = expr_program_validate(&k->exprs, n, io->ranks, NULL, 0);
    if (st)
        return base_error_prefix(PRT_ERR_MALFORMED,
                                 "malformed engine: kernel of layer '%s'", layer);
    for (int32_t i = 0; i < k->exprs.nb_nodes; i++) {
        int32_t kind = k->exprs.nodes[i].kind;
        if (kind != EXPR_CONST && kind != EXPR_OP && kind != EXPR_INPUT_DIM)
            return bad(layer,
                       "expression node %d is of kind %d: a kernel's sizes are "
                       "constants and operations over its layer's dims",
                       (int)i, (int)kind);
    }
    if (k->nb_launches < 1 || k->nb_launches > KERNEL_MAX_LAUNCHES)
        return bad(layer, "%d launches (1..%d)", (int)k->nb_launches,
                   KERNEL_MAX_LAUNCHES);
    for (int32_t li = 0; li < k->nb_launches; li++) {
        const eng_kernel_launch *l = &k->launches[li];
        size_t len = strlen(l->entry);
        if (len == 0 || len >= KERNEL_MAX_ENTRY)
            return bad(layer, "launch %d has an entry name of %zu bytes", (int)li, len);
        for (int d = 0; d < 3; d++)
            if (!node_ok(k, l->grid[d]) || !node_ok(k, l->block[d]))
                return bad(layer,
                           "launch %d: grid or block dim %d names expression %d or "
                           "%d, of %d",
                           (int)li, d, (int)l->grid[d], (int)l->block[d],
                           (int)k->exprs.nb_nodes);
        if (l->shared_bytes != -1 && !node_ok(k, l->shared_bytes))
            return bad(layer, "launch %d: shared memory names expression %d, of %d",
                       (int)li, (int)l->shared_bytes, (int)k->exprs.nb_nodes);
        if (l->nb_args < 0 || l->nb_args > KERNEL_MAX_ARGS)
            return bad(layer, "launch %d has %d arguments", (int)li, (int)l->nb_args);
        for (int32_t a = 0; a < l->nb_args; a++) {
            const eng_kernel_arg *g = &l->args[a];
            int need_node = g->kind == PRT_KARG_INT32 || g->kind == PRT_KARG_INT64;
            int may_node = need_node || g->kind == PRT_KARG_FLOAT32 ||
                           g->kind == PRT_KARG_FLOAT64 || g->kind == PRT_KARG_WORKSPACE;
            int32_t limit = g->kind == PRT_KARG_OUTPUT ? io->nb_out : io->nb_in;
            if (g->kind < 0 || g->kind >= PRT_KARG_COUNT)
                return bad(layer, "launch %d, argument %d has kind %d", (int)li, (int)a,
                           (int)g->kind);
            if (g->kind == PRT_KARG_INPUT || g->kind == PRT_KARG_OUTPUT ||
                g->kind == PRT_KARG_DIMS) {
                if (g->index < 0 || g->index >= limit)
                    return bad(
                        layer, "launch %d, argument %d names %s %d, but the layer has %d",
                        (int)li, (int)a, g->kind == PRT_KARG_OUTPUT ? "output" : "input",
                        (int)g->index, (int)limit);
            } else if (g->index != 0) {
                return bad(layer, "launch %d, argument %d (%s) has index %d", (int)li,
                           (int)a, arg_kind_name(g->kind), (int)g->index);
            }
            if ((need_node && !node_ok(k, g->node)) ||
                (!need_node && g->node != -1 && (!may_node || !node_ok(k, g->node))))
                return bad(layer,
                           "launch %d, argument %d (%s) names expression %d, of %d",
                           (int)li, (int)a, arg_kind_name(g->kind), (int)g->node,
                           (int)k->exprs.nb_nodes);
            if (!isfinite(g->fvalue))
                return bad(layer, "launch %d, argument %d has a value that is not finite",
                           (int)li, (int)a);
        }
    }
    st = kernel_check_params(k, layer);
    if (st)
        return base_error_prefix(PRT_ERR_MALFORMED, "malformed engine");
    if (kernel_hash(k) != k->hash)
        return bad(layer, "its content hash is %016llx, but the file says %016llx",
                   (unsigned long long)kernel_hash(k), (unsigned long long)k->hash);
    return PRT_OK;
}

/* ---- from a plugin's description ----------------------------------------- */

/* The node of an expression the plugin gave, which must come from `pool`. */
static int32_t desc_node(expr_pool *pool, const prt_expr *e)
{
    return e && expr_pool_owns(pool, e) ? expr_id(e) : -2;
}

static prt_status add_code(eng_kernel *k, int32_t kind, int32_t arch, const void *data,
                           int64_t size)
{
    eng_kernel_code *c = &k->code[k->nb_code];
    c->data = base_malloc((size_t)size + 1);
    if (!c->data)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory");
    memcpy(c->data, data, (size_t)size);
    c->data[size] = 0; /* PTX loads as a C string */
    c->kind = kind;
    c->arch = arch;
    c->size = size;
    k->nb_code++;
    return PRT_OK;
}

static prt_status copy_code(const prt_kernel_desc *d, int32_t arch, const char *layer,
                            const kernel_code_cache *cache, eng_kernel *k)
{
    prt_status st = PRT_OK;
    if (d->nb_code < 1 || d->nb_code > KERNEL_MAX_CODE / 2 || !d->code)
        return desc_fail(layer, "%d codes (1..%d)", (int)d->nb_code, KERNEL_MAX_CODE / 2);
    k->code = base_calloc(KERNEL_MAX_CODE, sizeof *k->code);
    if (!k->code)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory");
    for (int32_t i = 0; i < d->nb_code && !st; i++) {
        const prt_kernel_code *c = &d->code[i];
        int32_t carch = c->arch;
        if (!c->data || c->size <= 0 || c->size > KERNEL_MAX_CODE_BYTES)
            return desc_fail(layer, "code %d has no data (%lld bytes)", (int)i,
                             (long long)c->size);
        if (c->kind == PRT_KERNEL_CUDA_SOURCE) {
            eng_kernel_code cub, ptx;
            memset(&cub, 0, sizeof cub);
            memset(&ptx, 0, sizeof ptx);
            st = kernel_nvrtc_compile_cached(c->data, c->size, d->compile_options, arch,
                                             layer, cache, &cub, &ptx);
            if (!st)
                st = add_code(k, PRT_KERNEL_CUBIN, cub.arch, cub.data, cub.size);
            if (!st && ptx.size > 0)
                st = add_code(k, PRT_KERNEL_PTX, ptx.arch, ptx.data, ptx.size);
            base_free(cub.data);
            base_free(ptx.data);
            continue;
        }
        if (c->kind != PRT_KERNEL_PTX && c->kind != PRT_KERNEL_CUBIN)
            return desc_fail(layer, "code %d has kind %d", (int)i, (int)c->kind);
        if (kernel_code_arch(c->kind, c->data, c->size, &carch))
            return base_error_prefix(PRT_ERR_PLUGIN, "get_kernel of layer '%s': code %d",
                                     layer, (int)i);
        if (c->arch && c->arch != carch)
            return desc_fail(layer, "code %d says sm_%d, but its %s is for sm_%d", (int)i,
                             (int)c->arch, c->kind == PRT_KERNEL_PTX ? "PTX" : "cubin",
                             (int)carch);
        st = add_code(k, c->kind, carch, c->data, c->size);
    }
    return st;
}

static prt_status copy_launch(const prt_kernel_launch *s, expr_pool *pool,
                              const char *layer, int32_t li, eng_kernel_launch *l)
{
    if (!s->entry || !s->entry[0] || strlen(s->entry) >= KERNEL_MAX_ENTRY)
        return desc_fail(layer, "launch %d has no entry name", (int)li);
    if (s->nb_args < 0 || s->nb_args > KERNEL_MAX_ARGS || (s->nb_args && !s->args))
        return desc_fail(layer, "launch %d has %d arguments", (int)li, (int)s->nb_args);
    l->entry = base_strdup(s->entry);
    l->args = base_calloc((size_t)s->nb_args + 1, sizeof *l->args);
    if (!l->entry || !l->args)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory");
    for (int d = 0; d < 3; d++) {
        l->grid[d] = desc_node(pool, s->grid[d]);
        l->block[d] = desc_node(pool, s->block[d]);
        if (l->grid[d] < 0 || l->block[d] < 0)
            return desc_fail(
                layer,
                "launch %d: grid or block dim %d is not an expression of the "
                "builder get_kernel was given",
                (int)li, d);
    }
    l->shared_bytes = s->shared_bytes ? desc_node(pool, s->shared_bytes) : -1;
    if (l->shared_bytes == -2)
        return desc_fail(layer,
                         "launch %d: shared_bytes is not an expression of the "
                         "builder get_kernel was given",
                         (int)li);
    l->nb_args = s->nb_args;
    for (int32_t a = 0; a < s->nb_args; a++) {
        const prt_kernel_arg *g = &s->args[a];
        eng_kernel_arg *o = &l->args[a];
        o->kind = g->kind;
        o->index = g->kind == PRT_KARG_INPUT || g->kind == PRT_KARG_OUTPUT ||
                           g->kind == PRT_KARG_DIMS
                       ? g->index
                       : 0;
        o->node = g->value ? desc_node(pool, g->value) : -1;
        o->fvalue = g->value ? 0.0 : g->fvalue;
        if (g->kind < 0 || g->kind >= PRT_KARG_COUNT)
            return desc_fail(layer, "launch %d, argument %d has kind %d", (int)li, (int)a,
                             (int)g->kind);
        if (o->node == -2)
            return desc_fail(layer,
                             "launch %d, argument %d: its value is not an expression "
                             "of the builder get_kernel was given",
                             (int)li, (int)a);
        if ((g->kind == PRT_KARG_INT32 || g->kind == PRT_KARG_INT64) && o->node < 0)
            return desc_fail(layer, "launch %d, argument %d (%s) has no value", (int)li,
                             (int)a, arg_kind_name(g->kind));
        if (!isfinite(o->fvalue))
            return desc_fail(layer, "launch %d, argument %d: its value is not finite",
                             (int)li, (int)a);
    }
    return PRT_OK;
}

prt_status kernel_from_desc(const prt_kernel_desc *d, expr_pool *pool, int32_t arch,
                            const char *layer, const kernel_io *io, eng_kernel *out)
{
    return kernel_from_desc_cached(d, pool, arch, layer, io, NULL, out);
}

prt_status kernel_from_desc_cached(const prt_kernel_desc *d, expr_pool *pool,
                                   int32_t arch, const char *layer, const kernel_io *io,
                                   const kernel_code_cache *cache, eng_kernel *out)
{
    prt_status st;
    memset(out, 0, sizeof *out);
    if (d->nb_launches < 1 || d->nb_launches > KERNEL_MAX_LAUNCHES || !d->launches)
        return desc_fail(layer, "%d launches (1..%d)", (int)d->nb_launches,
                         KERNEL_MAX_LAUNCHES);
    st = copy_code(d, arch, layer, cache, out);
    if (!st) {
        out->launches = base_calloc((size_t)d->nb_launches, sizeof *out->launches);
        if (!out->launches)
            st = base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory");
        else
            out->nb_launches = d->nb_launches;
    }
    for (int32_t i = 0; !st && i < d->nb_launches; i++)
        st = copy_launch(&d->launches[i], pool, layer, i, &out->launches[i]);
    if (!st)
        st = expr_program_copy(expr_pool_program(pool), &out->exprs);
    if (!st) {
        out->hash = kernel_hash(out);
        st = kernel_check_params(out, layer);
    }
    if (!st)
        st = kernel_validate(out, layer, io);
    if (st)
        kernel_free(out);
    return st;
}
