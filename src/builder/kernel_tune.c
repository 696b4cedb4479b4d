/*
 * Timing kernel-layer tactics (builder.h, bld_tune_plugin). On a CUDA
 * target a tactic for which the plugin's get_kernel gives a kernel runs, in
 * the engine, as that kernel and not through enqueue; so the tuner must
 * time the kernel. tune_layer is handed this proxy: its entries forward to
 * the layer's plugin, except that set_tactic asks for the tactic's kernel
 * at the candidate's formats (bld_kernel_for, NVRTC through the timing
 * cache) and, when there is one, on_shape_change and enqueue on the GPU go
 * to a runner of it (kernel_runner_create), as in the engine. A plugin
 * whose tactics exist only as kernels (no working enqueue) is then tuned
 * like any other: the reference check (candidate 0) and the timing are the
 * kernels'. A run on the CPU (tune.c's CPU reference) is the plugin's own.
 */
#include <string.h>

#include "builder/builder.h"
#include "kernel/kernel.h"

typedef struct kproxy {
    prt_plugin base;
    prt_plugin *real;
    bld *b;
    int32_t li;
    const prt_dynamic_tensor_desc *descs; /* the last configure's (the candidate's) */
    eng_kernel *kernel;                   /* the current tactic's, or NULL */
    prt_plugin *runner;                   /* runs kernel */
} kproxy;

static const prt_plugin_vtable kproxy_vt;

static kproxy *as_proxy(const prt_plugin *p)
{
    return (kproxy *)p;
}

static void drop_kernel(kproxy *k)
{
    if (k->runner)
        k->runner->vt->runtime->destroy(k->runner);
    if (k->kernel) {
        kernel_free(k->kernel);
        base_free(k->kernel);
    }
    k->runner = NULL;
    k->kernel = NULL;
}

static const char *kp_name(const prt_plugin *p)
{
    const prt_plugin *r = as_proxy(p)->real;
    return r->vt->core->name(r);
}
static const char *kp_version(const prt_plugin *p)
{
    const prt_plugin *r = as_proxy(p)->real;
    return r->vt->core->version(r);
}
static const char *kp_namespace(const prt_plugin *p)
{
    const prt_plugin *r = as_proxy(p)->real;
    return r->vt->core->plugin_namespace(r);
}
static uint32_t kp_devices(const prt_plugin *p)
{
    const prt_plugin *r = as_proxy(p)->real;
    return r->vt->core->devices(r);
}

static int32_t kp_nb_outputs(const prt_plugin *p)
{
    const prt_plugin *r = as_proxy(p)->real;
    return r->vt->build->nb_outputs(r);
}

static prt_status kp_configure(prt_plugin *self, const prt_dynamic_tensor_desc *in,
                               int32_t nb_in, const prt_dynamic_tensor_desc *out,
                               int32_t nb_out)
{
    kproxy *k = as_proxy(self);
    prt_status (*configure)(prt_plugin *, const prt_dynamic_tensor_desc *, int32_t,
                            const prt_dynamic_tensor_desc *, int32_t) =
        BUILD_ENTRY(k->real, configure);
    /* tune.c passes one array, inputs then outputs (tune_candidate). */
    k->descs = in;
    drop_kernel(k);
    return configure ? configure(k->real, in, nb_in, out, nb_out) : PRT_OK;
}

/* Aliasing is the layer's, kernel or not (bld_alias asks the plugin). */
static int32_t kp_aliased_input(const prt_plugin *self, int32_t output)
{
    const prt_plugin *r = as_proxy(self)->real;
    return BUILD_ENTRY(r, get_aliased_input)
               ? BUILD_ENTRY(r, get_aliased_input)(r, output)
               : -1;
}

static prt_status kp_set_tactic(prt_plugin *self, int32_t tactic)
{
    kproxy *k = as_proxy(self);
    const net_layer *l = &k->b->net->layers[k->li];
    prt_status st = PRT_OK;
    drop_kernel(k);
    if (!k->descs)
        return base_error(PRT_ERR_INTERNAL, "tuning '%s': set_tactic before configure",
                          l->name);
    st = bld_kernel_for(k->b, k->li, k->descs, tactic, &k->kernel);
    if (!st && k->kernel)
        st = kernel_runner_create(k->kernel, l->name, l->nb_inputs, l->nb_outputs,
                                  &k->runner);
    if (st) {
        drop_kernel(k);
        return st;
    }
    if (k->kernel)
        base_log(PRT_SEV_VERBOSE, "layer '%s': tactic %d is timed as its kernel", l->name,
                 (int)tactic);
    /* The plugin is told too: its CPU run (the reference) and any tactic
     * without a kernel go through it. */
    return RUNTIME_ENTRY(k->real, set_tactic)
               ? RUNTIME_ENTRY(k->real, set_tactic)(k->real, tactic)
               : PRT_OK;
}

static prt_status kp_on_shape_change(prt_plugin *self, const prt_tensor_desc *in,
                                     int32_t nb_in, const prt_tensor_desc *out,
                                     int32_t nb_out)
{
    kproxy *k = as_proxy(self);
    prt_status st = PRT_OK;
    if (k->runner)
        st = k->runner->vt->runtime->on_shape_change(k->runner, in, nb_in, out, nb_out);
    if (!st && RUNTIME_ENTRY(k->real, on_shape_change))
        st = RUNTIME_ENTRY(k->real, on_shape_change)(k->real, in, nb_in, out, nb_out);
    /* A plugin with only kernels may refuse shapes for enqueue it never
     * runs; the kernel took them. */
    if (st && k->runner) {
        base_clear_error();
        st = PRT_OK;
    }
    return st;
}

static prt_status kp_enqueue(prt_plugin *self, const prt_tensor_desc *in_desc,
                             const prt_tensor_desc *out_desc, const void *const *inputs,
                             void *const *outputs, void *workspace, int32_t device,
                             void *stream)
{
    kproxy *k = as_proxy(self);
    prt_plugin *p = k->runner && device == PRT_DEVICE_CUDA ? k->runner : k->real;
    return p->vt->runtime->enqueue(p, in_desc, out_desc, inputs, outputs, workspace,
                                   device, stream);
}

static prt_plugin *kp_attach(prt_plugin *self, prt_plugin_resources *res)
{
    (void)self, (void)res;
    base_error(PRT_ERR_INTERNAL, "the tuning proxy is never attached");
    return NULL;
}

static const prt_field_collection *kp_fields(prt_plugin *self)
{
    prt_plugin *r = as_proxy(self)->real;
    return r->vt->runtime->get_fields_to_serialize(r);
}

static prt_plugin *kp_clone(const prt_plugin *self)
{
    (void)self;
    base_error(PRT_ERR_INTERNAL, "the tuning proxy is never cloned");
    return NULL;
}

static void kp_destroy(prt_plugin *self)
{
    if (!self)
        return;
    drop_kernel(as_proxy(self));
    base_free(self);
}

static const prt_plugin_core kproxy_core = {sizeof(prt_plugin_core),
                                            PRT_PLUGIN_ABI_VERSION,
                                            kp_name,
                                            kp_version,
                                            kp_namespace,
                                            kp_devices};
/* Only what tune.c asks for; the rest is NULL (absent). */
static const prt_plugin_build kproxy_build = {
    .struct_size = sizeof(prt_plugin_build),
    .abi_version = PRT_PLUGIN_ABI_VERSION,
    .nb_outputs = kp_nb_outputs,
    .configure = kp_configure,
    .get_aliased_input = kp_aliased_input,
};
static const prt_plugin_runtime kproxy_runtime = {sizeof(prt_plugin_runtime),
                                                  PRT_PLUGIN_ABI_VERSION,
                                                  kp_set_tactic,
                                                  kp_on_shape_change,
                                                  kp_enqueue,
                                                  kp_attach,
                                                  kp_fields,
                                                  kp_clone,
                                                  kp_destroy};
static const prt_plugin_vtable kproxy_vt = {sizeof(prt_plugin_vtable),
                                            PRT_PLUGIN_ABI_VERSION, &kproxy_core,
                                            &kproxy_build, &kproxy_runtime};

prt_status bld_tune_plugin(bld *b, int32_t li, prt_plugin **out)
{
    prt_plugin *real = b->net->layers[li].plugin;
    kproxy *k;
    *out = real;
    if (b->l[li].device != PRT_DEVICE_CUDA || !BUILD_ENTRY(real, get_kernel))
        return PRT_OK;
    k = base_calloc(1, sizeof *k);
    if (!k)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "build: out of memory");
    k->base.vt = &kproxy_vt;
    k->real = real;
    k->b = b;
    k->li = li;
    *out = &k->base;
    return PRT_OK;
}

void bld_tune_plugin_destroy(bld *b, int32_t li, prt_plugin *p)
{
    if (p && p != b->net->layers[li].plugin && p->vt == &kproxy_vt)
        kp_destroy(p);
}
