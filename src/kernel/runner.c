/*
 * The plugin a kernel layer runs as (kernel.h): it evaluates the kernel's
 * launch sizes from the shapes it is given (on_shape_change), and launches
 * its entries on the stream (enqueue). A context's clone loads the code
 * when attached, once, and unloads it when destroyed; a shape change loads
 * nothing. A plugin that is not attached (the builder's, timing a tactic)
 * loads on its first run.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernel/kmod.h"

typedef union karg_value {
    void *p;
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
} karg_value;

typedef struct runner {
    prt_plugin base;
    const eng_kernel *k; /* the engine's */
    char layer[256];
    int32_t nb_in, nb_out;
    void *module;
    void *fn[KERNEL_MAX_LAUNCHES];
    /* From the last on_shape_change. */
    int shapes_ok;
    int64_t *values; /* [exprs.nb_nodes] */
    uint8_t *known;
    uint32_t grid[KERNEL_MAX_LAUNCHES][3], block[KERNEL_MAX_LAUNCHES][3];
    uint32_t shared[KERNEL_MAX_LAUNCHES];
    karg_value *args; /* [KERNEL_MAX_ARGS] */
    void **params;    /* [KERNEL_MAX_ARGS] */
} runner;

#ifndef PRT_HAVE_CUDA
/* Without CUDA there is nothing to load: a kernel layer cannot run. */
static prt_status no_cuda(void)
{
    return base_error(PRT_ERR_UNSUPPORTED,
                      "kernel layers need CUDA; this plugrt was built "
                      "without it");
}
prt_status kmod_device_arch(int32_t *arch)
{
    (void)arch;
    return no_cuda();
}
prt_status kmod_load(const eng_kernel *k, const char *layer, void **module,
                     int32_t *which)
{
    (void)k, (void)layer, (void)module, (void)which;
    return no_cuda();
}
prt_status kmod_function(void *module, const char *entry, const char *layer, void **fn)
{
    (void)module, (void)entry, (void)layer, (void)fn;
    return no_cuda();
}
void kmod_unload(void *module)
{
    (void)module;
}
prt_status kmod_launch(void *fn, const uint32_t grid[3], const uint32_t block[3],
                       uint32_t shared_bytes, void *stream, void **params,
                       const char *layer, const char *entry)
{
    (void)fn, (void)grid, (void)block, (void)shared_bytes, (void)stream, (void)params;
    (void)layer, (void)entry;
    return no_cuda();
}
int64_t kmod_live_modules(void)
{
    return 0;
}
#endif

static const prt_plugin_vtable runner_vt;

static runner *as_runner(prt_plugin *p)
{
    return (runner *)p;
}

static const char *r_name(const prt_plugin *p)
{
    (void)p;
    return "KernelLayer";
}
static const char *r_version(const prt_plugin *p)
{
    (void)p;
    return "1";
}
static const char *r_namespace(const prt_plugin *p)
{
    (void)p;
    return PRT_BUILTIN_NAMESPACE;
}
static uint32_t r_devices(const prt_plugin *p)
{
    (void)p;
    return 1u << PRT_DEVICE_CUDA;
}

static prt_status r_load(runner *r)
{
    int32_t which = 0;
    prt_status st;
    if (r->module)
        return PRT_OK;
    st = kmod_load(r->k, r->layer, &r->module, &which);
    for (int32_t i = 0; !st && i < r->k->nb_launches; i++)
        st = kmod_function(r->module, r->k->launches[i].entry, r->layer, &r->fn[i]);
    if (st && r->module) {
        kmod_unload(r->module);
        r->module = NULL;
    }
    return st;
}

static prt_status r_set_tactic(prt_plugin *self, int32_t tactic)
{
    (void)self, (void)tactic;
    return PRT_OK;
}

/* A launch size: a node's value, in [lo, hi]. */
static prt_status r_size(const runner *r, int32_t node, int64_t lo, int64_t hi,
                         const char *what, int32_t li, uint32_t *out)
{
    int64_t v = r->values[node];
    if (v < lo || v > hi)
        return base_error(PRT_ERR_SHAPE,
                          "layer '%s': kernel '%s': %s is %lld at these shapes (must be "
                          "%lld..%lld)",
                          r->layer, r->k->launches[li].entry, what, (long long)v,
                          (long long)lo, (long long)hi);
    *out = (uint32_t)v;
    return PRT_OK;
}

static prt_status r_on_shape_change(prt_plugin *self, const prt_tensor_desc *in,
                                    int32_t nb_in, const prt_tensor_desc *out,
                                    int32_t nb_out)
{
    runner *r = as_runner(self);
    prt_dims dims[128];
    expr_env env;
    prt_status st;
    static const char *const gnames[3] = {"grid x", "grid y", "grid z"};
    static const char *const bnames[3] = {"block x", "block y", "block z"};
    r->shapes_ok = 0;
    if (nb_in != r->nb_in || nb_out != r->nb_out || nb_in + nb_out > 128)
        return base_error(
            PRT_ERR_INVALID_ARGUMENT,
            "layer '%s': the kernel has %d inputs and %d outputs, not %d and %d",
            r->layer, (int)r->nb_in, (int)r->nb_out, (int)nb_in, (int)nb_out);
    for (int32_t i = 0; i < nb_in; i++)
        dims[i] = in[i].dims;
    for (int32_t o = 0; o < nb_out; o++)
        dims[nb_in + o] = out[o].dims;
    memset(&env, 0, sizeof env);
    env.nb_inputs = nb_in + nb_out;
    env.input_dims = dims;
    st = expr_program_eval(&r->k->exprs, &env, r->values, r->known);
    if (st)
        return base_error_prefix(st, "layer '%s': its kernel's launch sizes", r->layer);
    for (int32_t li = 0; li < r->k->nb_launches && !st; li++) {
        const eng_kernel_launch *l = &r->k->launches[li];
        for (int d = 0; d < 3 && !st; d++) {
            st = r_size(r, l->grid[d], 1, d == 0 ? INT32_MAX : 65535, gnames[d], li,
                        &r->grid[li][d]);
            if (!st)
                st = r_size(r, l->block[d], 1, 1024, bnames[d], li, &r->block[li][d]);
        }
        r->shared[li] = 0;
        if (!st && l->shared_bytes >= 0)
            st = r_size(r, l->shared_bytes, 0, 1 << 24, "shared memory", li,
                        &r->shared[li]);
        for (int32_t a = 0; a < l->nb_args && !st; a++) {
            const eng_kernel_arg *g = &l->args[a];
            if (g->kind == PRT_KARG_INT32 &&
                (r->values[g->node] < INT32_MIN || r->values[g->node] > INT32_MAX))
                st =
                    base_error(PRT_ERR_SHAPE,
                               "layer '%s': kernel '%s': int32 argument %d is %lld at "
                               "these shapes",
                               r->layer, l->entry, (int)a, (long long)r->values[g->node]);
            if (g->kind == PRT_KARG_WORKSPACE && g->node >= 0 && r->values[g->node] < 0)
                st = base_error(PRT_ERR_SHAPE,
                                "layer '%s': kernel '%s': workspace offset %lld",
                                r->layer, l->entry, (long long)r->values[g->node]);
        }
    }
    r->shapes_ok = !st;
    return st;
}

static prt_status r_enqueue(prt_plugin *self, const prt_tensor_desc *in_desc,
                            const prt_tensor_desc *out_desc, const void *const *inputs,
                            void *const *outputs, void *workspace, int32_t device,
                            void *stream)
{
    runner *r = as_runner(self);
    prt_status st;
    (void)out_desc;
    if (device != PRT_DEVICE_CUDA)
        return base_error(PRT_ERR_UNSUPPORTED, "layer '%s': a kernel layer runs on CUDA",
                          r->layer);
    if (!r->shapes_ok)
        return base_error(PRT_ERR_STATE, "layer '%s': kernel launched before its shapes",
                          r->layer);
    st = r_load(r);
    for (int32_t li = 0; li < r->k->nb_launches && !st; li++) {
        const eng_kernel_launch *l = &r->k->launches[li];
        for (int32_t a = 0; a < l->nb_args; a++) {
            const eng_kernel_arg *g = &l->args[a];
            karg_value *v = &r->args[a];
            double f = g->node >= 0 ? (double)r->values[g->node] : g->fvalue;
            switch (g->kind) {
            case PRT_KARG_INPUT:
                v->p = (void *)inputs[g->index];
                break;
            case PRT_KARG_OUTPUT:
                v->p = outputs[g->index];
                break;
            case PRT_KARG_WORKSPACE:
                v->p = workspace ? (uint8_t *)workspace +
                                       (g->node >= 0 ? r->values[g->node] : 0)
                                 : NULL;
                break;
            case PRT_KARG_DIMS:
                v->p = (void *)in_desc[g->index].dims_device;
                break;
            case PRT_KARG_INT32:
                v->i32 = (int32_t)r->values[g->node];
                break;
            case PRT_KARG_INT64:
                v->i64 = r->values[g->node];
                break;
            case PRT_KARG_FLOAT32:
                v->f32 = (float)f;
                break;
            case PRT_KARG_FLOAT64:
                v->f64 = f;
                break;
            default: /* PRT_KARG_NULL */
                v->p = NULL;
                break;
            }
            r->params[a] = v;
        }
        st = kmod_launch(r->fn[li], r->grid[li], r->block[li], r->shared[li], stream,
                         r->params, r->layer, l->entry);
    }
    return st;
}

static void r_destroy(prt_plugin *self)
{
    runner *r = as_runner(self);
    if (!r)
        return;
    kmod_unload(r->module);
    base_free(r->values);
    base_free(r->known);
    base_free(r->args);
    base_free(r->params);
    base_free(r);
}

static runner *r_new(const eng_kernel *k, const char *layer, int32_t nb_in,
                     int32_t nb_out)
{
    runner *r = base_calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->base.vt = &runner_vt;
    r->k = k;
    snprintf(r->layer, sizeof r->layer, "%s", layer);
    r->nb_in = nb_in;
    r->nb_out = nb_out;
    r->values = base_calloc((size_t)k->exprs.nb_nodes + 1, sizeof *r->values);
    r->known = base_calloc((size_t)k->exprs.nb_nodes + 1, 1);
    r->args = base_calloc(KERNEL_MAX_ARGS, sizeof *r->args);
    r->params = base_calloc(KERNEL_MAX_ARGS, sizeof *r->params);
    if (!r->values || !r->known || !r->args || !r->params) {
        r_destroy(&r->base);
        return NULL;
    }
    return r;
}

static prt_plugin *r_clone(const prt_plugin *self)
{
    const runner *s = (const runner *)self;
    runner *r = r_new(s->k, s->layer, s->nb_in, s->nb_out);
    return r ? &r->base : NULL;
}

static prt_plugin *r_attach(prt_plugin *self, prt_plugin_resources *res)
{
    runner *r = (runner *)r_clone(self);
    (void)res;
    if (r && r_load(r)) {
        /* The context's creation fails with this error (context.c keeps
         * the thread's last error). */
        r_destroy(&r->base);
        return NULL;
    }
    return r ? &r->base : NULL;
}

static const prt_field_collection *r_fields(prt_plugin *self)
{
    static const prt_field_collection none = {0, NULL};
    (void)self;
    return &none;
}

static const prt_plugin_core runner_core = {sizeof(prt_plugin_core),
                                            PRT_PLUGIN_ABI_VERSION,
                                            r_name,
                                            r_version,
                                            r_namespace,
                                            r_devices};
static const prt_plugin_runtime runner_runtime = {sizeof(prt_plugin_runtime),
                                                  PRT_PLUGIN_ABI_VERSION,
                                                  r_set_tactic,
                                                  r_on_shape_change,
                                                  r_enqueue,
                                                  r_attach,
                                                  r_fields,
                                                  r_clone,
                                                  r_destroy};
static const prt_plugin_vtable runner_vt = {sizeof(prt_plugin_vtable),
                                            PRT_PLUGIN_ABI_VERSION, &runner_core, NULL,
                                            &runner_runtime};

prt_status kernel_runner_create(const eng_kernel *k, const char *layer, int32_t nb_in,
                                int32_t nb_out, prt_plugin **out)
{
    runner *r = r_new(k, layer, nb_in, nb_out);
    if (!r)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory");
    *out = &r->base;
    return PRT_OK;
}

const eng_kernel *kernel_runner_kernel(const prt_plugin *p)
{
    return p && p->vt == &runner_vt ? ((const runner *)p)->k : NULL;
}
