/*
 * Graph-capture safety and plugin resources on CUDA (ctest -L cuda):
 *  - an engine whose plugin says its enqueue cannot be captured
 *    (capture_safe 0) is refused by prt_context_capture_graph naming the
 *    layer and the plugin, before anything is recorded (the stream is not
 *    left capturing: an eager run on it still works and is right);
 *  - the same plugin saying yes captures, and the replay computes y = x;
 *  - prt_plugin_resources on CUDA: alloc gives device memory the plugin's
 *    copies go through, counted in the context's memory; a shared object is
 *    made once per context; alloc during a capture is refused.
 * Each result is compared with the input it copies (the host reference).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cuda_testutil.h"

#define N 1000

enum { CS_SAFE, CS_UNSAFE, CS_RES, CS_ALLOC_IN_ENQUEUE, CS_COUNT };
static const char *const cs_names[CS_COUNT] = {"CopySafe", "CopyUnsafe", "CopyRes",
                                               "CopyAllocInEnqueue"};
static atomic_int objects_made, objects_freed;

typedef struct csplug {
    prt_plugin base;
    int32_t kind;
    prt_plugin_resources res;
    void *mem; /* CS_RES: a device bounce buffer from the context */
    prt_field_collection fc;
} csplug;

static const char *cs_name(const prt_plugin *p)
{
    return cs_names[((const csplug *)p)->kind];
}
static int32_t cs_supports(prt_plugin *p, int32_t pos, const prt_dynamic_tensor_desc *io,
                           int32_t nb_in, int32_t nb_out)
{
    (void)p, (void)nb_in, (void)nb_out;
    return io[pos].desc.dtype == PRT_FLOAT32 && io[pos].desc.format == PRT_FORMAT_LINEAR;
}
static int32_t cs_capture_safe(const prt_plugin *p, int32_t device)
{
    (void)device;
    return ((const csplug *)p)->kind != CS_UNSAFE;
}

static prt_status cs_enqueue(prt_plugin *p, const prt_tensor_desc *in_desc,
                             const prt_tensor_desc *out_desc, const void *const *in,
                             void *const *out, void *ws, int32_t device, void *stream)
{
    csplug *c = (csplug *)p;
    size_t bytes = (size_t)tu_volume(&in_desc[0].dims) * sizeof(float);
    cudaStream_t s = (cudaStream_t)stream;
    (void)out_desc, (void)ws, (void)device;
    if (c->kind == CS_ALLOC_IN_ENQUEUE && c->res.alloc) {
        void *m = NULL;
        prt_status st = c->res.alloc(c->res.context, 64, &m);
        if (st)
            return st;
        c->res.free(c->res.context, m);
    }
    if (c->kind == CS_RES && c->mem) {
        if (bytes > N * sizeof(float) ||
            cudaMemcpyAsync(c->mem, in[0], bytes, cudaMemcpyDeviceToDevice, s) ||
            cudaMemcpyAsync(out[0], c->mem, bytes, cudaMemcpyDeviceToDevice, s))
            return PRT_ERR_PLUGIN;
        return PRT_OK;
    }
    return cudaMemcpyAsync(out[0], in[0], bytes, cudaMemcpyDeviceToDevice, s)
               ? PRT_ERR_PLUGIN
               : PRT_OK;
}

static prt_plugin *cs_clone(const prt_plugin *p)
{
    csplug *c = malloc(sizeof *c);
    if (c) {
        *c = *(const csplug *)p;
        memset(&c->res, 0, sizeof c->res);
        c->mem = NULL;
    }
    return c ? &c->base : NULL;
}

static prt_status obj_create(void *user, int32_t device, void **out)
{
    (void)user;
    if (device != PRT_DEVICE_CUDA)
        return PRT_ERR_UNSUPPORTED;
    *out = (void *)(intptr_t)(atomic_fetch_add(&objects_made, 1) + 1);
    return PRT_OK;
}
static void obj_destroy(void *user, void *object)
{
    (void)user, (void)object;
    atomic_fetch_add(&objects_freed, 1);
}

static prt_plugin *cs_attach(prt_plugin *p, prt_plugin_resources *res)
{
    csplug *c = (csplug *)cs_clone(p);
    void *obj = NULL;
    if (!c || res->struct_size < offsetof(prt_plugin_resources, acquire) + sizeof(void *))
        return c ? &c->base : NULL;
    c->res = *res;
    if (c->kind == CS_RES && (res->acquire(res->context, "test::object", obj_create,
                                           obj_destroy, NULL, &obj) ||
                              res->alloc(res->context, N * sizeof(float), &c->mem))) {
        free(c);
        return NULL;
    }
    return &c->base;
}
static const prt_field_collection *cs_fields(prt_plugin *p)
{
    return &((csplug *)p)->fc;
}
static void cs_destroy(prt_plugin *p)
{
    csplug *c = (csplug *)p;
    if (c->mem)
        c->res.free(c->res.context, c->mem);
    free(p);
}

static const prt_plugin_core cs_core = {sizeof cs_core, PRT_PLUGIN_ABI_VERSION,
                                        cs_name,        tcu_version,
                                        tcu_namespace,  tcu_cuda_only};
static const prt_plugin_build cs_build = {
    .struct_size = sizeof cs_build,
    .abi_version = PRT_PLUGIN_ABI_VERSION,
    .nb_outputs = tcu_one_output,
    .get_output_dtypes = tcu_dtype_of_input,
    .get_output_shapes = tcu_shape_of_input,
    .supports_format_combination = cs_supports,
    .capture_safe = cs_capture_safe,
};
static const prt_plugin_runtime cs_runtime = {sizeof cs_runtime,
                                              PRT_PLUGIN_ABI_VERSION,
                                              NULL,
                                              NULL,
                                              cs_enqueue,
                                              cs_attach,
                                              cs_fields,
                                              cs_clone,
                                              cs_destroy};
static const prt_plugin_vtable cs_vt = {sizeof cs_vt, PRT_PLUGIN_ABI_VERSION, &cs_core,
                                        &cs_build, &cs_runtime};

static prt_status cs_create(const prt_plugin_creator *cr, const char *layer,
                            const prt_field_collection *f, int32_t phase,
                            prt_plugin **out)
{
    csplug *c = calloc(1, sizeof *c);
    (void)layer, (void)f, (void)phase;
    if (!c)
        return PRT_ERR_OUT_OF_MEMORY;
    c->base.vt = &cs_vt;
    c->kind = (int32_t)(intptr_t)cr->user;
    *out = &c->base;
    return PRT_OK;
}

static prt_plugin_creator cs_creators[CS_COUNT];

/* x [N] -> kind -> y, built for CUDA, saved and loaded back. */
static prt_engine *build(prt_registry *reg, int32_t kind)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *built = NULL, *e = NULL;
    prt_plugin *p = NULL;
    const prt_dims d = {1, {N}};
    void *bytes = NULL;
    size_t size = 0;
    prt_status st = cs_create(&cs_creators[kind], "copy", NULL, PRT_PHASE_BUILD, &p);
    if (!st)
        st = tcu_plugin_network(p, &d, "copy", &net);
    if (!st)
        st = prt_builder_config_create(&cfg);
    if (!st)
        st = prt_builder_config_set_device(cfg, PRT_DEVICE_CUDA);
    if (!st)
        st = prt_engine_build(net, cfg, reg, &built);
    if (!st)
        st = prt_engine_serialize(built, &bytes, &size);
    if (!st)
        st = prt_engine_deserialize(reg, bytes, size, &e);
    CHECK_OK(st);
    prt_free(bytes);
    prt_engine_destroy(built);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return e;
}

typedef struct io {
    float *x, *y; /* device */
    float hx[N], hy[N];
} io;

static void bind(prt_context *c, io *b)
{
    CHECK_OK(prt_context_set_tensor_address(c, "x", b->x));
    CHECK_OK(prt_context_set_tensor_address(c, "y", b->y));
}

/* y on the device equals x, after the stream's work. */
static void check_copy(io *b, void *s, const char *what)
{
    CHECK(cudaStreamSynchronize((cudaStream_t)s) == cudaSuccess);
    CHECK(cudaMemcpy(b->hy, b->y, sizeof b->hy, cudaMemcpyDeviceToHost) == cudaSuccess);
    if (memcmp(b->hx, b->hy, sizeof b->hx) != 0)
        tu_fail(__FILE__, __LINE__, what);
}

static void new_input(io *b, unsigned seed)
{
    tu_rng r;
    tu_rng_seed(&r, seed);
    for (int i = 0; i < N; i++)
        b->hx[i] = (float)tu_rng_uniform(&r);
    CHECK(cudaMemcpy(b->x, b->hx, sizeof b->hx, cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(cudaMemset(b->y, 0, sizeof b->hy) == cudaSuccess);
    /* cudaMemset may return before it is done, and the runs go on another
     * stream: finished before they start. */
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
}

static void test_capture(prt_registry *reg, io *b, void *s)
{
    prt_engine *unsafe = build(reg, CS_UNSAFE), *safe = build(reg, CS_SAFE);
    prt_context *cu = NULL, *cs = NULL;
    prt_layer_info li = {.struct_size = sizeof li};
    if (unsafe) {
        CHECK_OK(prt_engine_get_layer(unsafe, 0, &li));
        CHECK(li.capture_safe == 0);
        CHECK_OK(prt_context_create(unsafe, &cu));
        bind(cu, b);
        CHECK_ERR(prt_context_capture_graph(cu, s), PRT_ERR_UNSUPPORTED,
                  "layer 'copy' (plugin test::CopyUnsafe) says its enqueue cannot be "
                  "captured");
        /* Nothing was recorded: the stream is not capturing, and eager runs
         * on it are right. */
        new_input(b, 1);
        CHECK_OK(prt_context_enqueue(cu, s));
        check_copy(b, s, "eager run after a refused capture");
    }
    if (safe) {
        CHECK_OK(prt_engine_get_layer(safe, 0, &li));
        CHECK(li.capture_safe == 1);
        CHECK_OK(prt_context_create(safe, &cs));
        bind(cs, b);
        CHECK_OK(prt_context_capture_graph(cs, s));
        for (unsigned rep = 0; rep < 3; rep++) {
            new_input(b, 10 + rep);
            CHECK_OK(prt_context_launch_graph(cs, s));
            check_copy(b, s, "graph replay");
        }
    }
    prt_context_destroy(cu);
    prt_context_destroy(cs);
    prt_engine_destroy(unsafe);
    prt_engine_destroy(safe);
}

static void test_resources(prt_registry *reg, io *b, void *s)
{
    prt_engine *e = build(reg, CS_RES), *ae = build(reg, CS_ALLOC_IN_ENQUEUE);
    prt_context *c1 = NULL, *c2 = NULL, *ca = NULL;
    int made0 = atomic_load(&objects_made), freed0 = atomic_load(&objects_freed);
    if (e) {
        CHECK_OK(prt_context_create(e, &c1));
        CHECK_OK(prt_context_create(e, &c2));
        CHECK(atomic_load(&objects_made) == made0 + 2);
        CHECK(prt_context_get_memory_size(c1) ==
              prt_engine_context_memory_size(e) + (int64_t)(N * sizeof(float)));
        bind(c1, b);
        new_input(b, 3);
        CHECK_OK(prt_context_enqueue(c1, s));
        check_copy(b, s, "a copy through the context's memory");
        /* Captured too: the bounce buffer is the context's, fixed. */
        CHECK_OK(prt_context_capture_graph(c1, s));
        new_input(b, 4);
        CHECK_OK(prt_context_launch_graph(c1, s));
        check_copy(b, s, "a replay through the context's memory");
        prt_context_destroy(c1);
        CHECK(atomic_load(&objects_freed) == freed0 + 1);
        prt_context_destroy(c2);
        CHECK(atomic_load(&objects_freed) == freed0 + 2);
    }
    if (ae) {
        CHECK_OK(prt_context_create(ae, &ca));
        bind(ca, b);
        CHECK_OK(prt_context_enqueue(ca, s)); /* allowed outside a capture */
        CHECK(cudaStreamSynchronize((cudaStream_t)s) == cudaSuccess);
        CHECK_ERR(prt_context_capture_graph(ca, s), PRT_ERR_STATE,
                  "while a graph is being captured");
        new_input(b, 5);
        CHECK_OK(prt_context_enqueue(ca, s));
        check_copy(b, s, "eager run after a failed capture");
        prt_context_destroy(ca);
    }
    prt_engine_destroy(e);
    prt_engine_destroy(ae);
}

int main(void)
{
    prt_registry *reg = NULL;
    void *s = NULL;
    io *b = calloc(1, sizeof *b);
    tu_require_cuda("test_cuda_capture_safe");
    CHECK(b != NULL);
    CHECK_OK(prt_registry_create(&reg));
    for (int k = 0; k < CS_COUNT; k++) {
        prt_plugin_creator c = {
            sizeof c,  PRT_PLUGIN_ABI_VERSION, cs_names[k], "1", "test", 0, NULL,
            cs_create, (void *)(intptr_t)k};
        cs_creators[k] = c;
        CHECK_OK(prt_registry_add_creator(reg, &cs_creators[k]));
    }
    CHECK_OK(prt_stream_create(PRT_DEVICE_CUDA, &s));
    if (b && reg && s && cudaMalloc((void **)&b->x, sizeof b->hx) == cudaSuccess &&
        cudaMalloc((void **)&b->y, sizeof b->hy) == cudaSuccess) {
        test_capture(reg, b, s);
        test_resources(reg, b, s);
    }
    if (b) {
        cudaFree(b->x);
        cudaFree(b->y);
    }
    free(b);
    prt_stream_destroy(PRT_DEVICE_CUDA, s);
    prt_registry_destroy(reg);
    return tu_finish("test_cuda_capture_safe");
}
