/*
 * The runtime on CUDA (ctest -L cuda): engines built for the GPU round-trip
 * and agree with the same engine on the CPU; two contexts run at once on
 * their own streams; a captured graph replays correctly, also when the
 * NonZero count changes between replays; contexts run in memory the caller
 * gives; a size beyond its bound is caught on the device and reported; the
 * engine says where it was built; GPUs are chosen by index (an engine runs
 * on a second GPU when there is one); a context used with another GPU
 * current fails naming both, or switches with switch_device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "runtime/context_impl.h"
#include "testutil.h"

#define R 128
#define C 128

/* X [1x1..256x256] -> NonZeroPlugin -> Y (indices), K (count). */
static prt_engine *build_nonzero(prt_registry *reg, int32_t device, int32_t row_order)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL, *loaded = NULL;
    prt_field f = {"rowOrder", &row_order, PRT_FIELD_INT32, 1};
    prt_plugin *p = tu_make_plugin(reg, "", "NonZeroPlugin", "1", &f, 1);
    prt_dims dyn = {2, {-1, -1}}, mn = {2, {1, 1}}, op = {2, {R, C}},
             mx = {2, {256, 256}};
    int32_t x, l, y, k, prof;
    void *bytes = NULL;
    size_t size = 0;
    if (!p)
        return NULL;
    CHECK_OK(prt_network_create(&net));
    CHECK_OK(prt_network_add_input(net, "X", PRT_FLOAT32, &dyn, &x));
    if (prt_network_add_plugin(net, &x, 1, NULL, 0, p, &l) != PRT_OK) {
        p->vt->runtime->destroy(p);
        prt_network_destroy(net);
        return NULL;
    }
    CHECK_OK(prt_network_get_layer_output(net, l, 0, &y));
    CHECK_OK(prt_network_get_layer_output(net, l, 1, &k));
    CHECK_OK(prt_network_set_tensor_name(net, y, "Y"));
    CHECK_OK(prt_network_set_tensor_name(net, k, "K"));
    CHECK_OK(prt_network_mark_output(net, y));
    CHECK_OK(prt_network_mark_output(net, k));
    CHECK_OK(prt_builder_config_create(&cfg));
    CHECK_OK(prt_builder_config_set_device(cfg, device));
    CHECK_OK(prt_builder_config_set_autotune(cfg, 1));
    CHECK_OK(prt_builder_config_add_profile(cfg, &prof));
    CHECK_OK(prt_builder_config_set_profile_dims(cfg, prof, "X", &mn, &op, &mx));
    CHECK_OK(prt_engine_build(net, cfg, reg, &e));
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    /* Always the loaded copy: what users run. */
    if (e && prt_engine_serialize(e, &bytes, &size) == PRT_OK)
        CHECK_OK(prt_engine_deserialize(reg, bytes, size, &loaded));
    prt_free(bytes);
    prt_engine_destroy(e);
    return loaded;
}

static void fill(float *x, int n, double density, unsigned seed)
{
    tu_rng r;
    tu_rng_seed(&r, seed);
    for (int i = 0; i < n; i++)
        x[i] = tu_rng_uniform(&r) < density ? (float)(tu_rng_uniform(&r) * 2 - 1) + 0.5f
                                            : 0.0f;
}

/* The reference: the same engine on the CPU. Returns K; idx gets 2K. */
static int64_t cpu_nonzero(prt_context *ctx, const float *x, int32_t *idx)
{
    prt_dims d = {2, {R, C}};
    int64_t k = -1;
    CHECK_OK(prt_context_set_input_shape(ctx, "X", &d));
    CHECK_OK(prt_context_set_tensor_address(ctx, "X", (void *)x));
    CHECK_OK(prt_context_set_tensor_address(ctx, "Y", idx));
    CHECK_OK(prt_context_set_tensor_address(ctx, "K", &k));
    CHECK_OK(prt_context_enqueue(ctx, NULL));
    return k;
}

/* Device buffers for one CUDA context. */
typedef struct gpu_io {
    float *x;
    int32_t *y;
    int64_t *k;
} gpu_io;

static void gpu_io_alloc(gpu_io *g)
{
    CHECK_OK(prt_device_malloc(PRT_DEVICE_CUDA, sizeof(float) * R * C, (void **)&g->x));
    CHECK_OK(
        prt_device_malloc(PRT_DEVICE_CUDA, sizeof(int32_t) * 2 * R * C, (void **)&g->y));
    CHECK_OK(prt_device_malloc(PRT_DEVICE_CUDA, sizeof(int64_t), (void **)&g->k));
}

static void gpu_io_free(gpu_io *g)
{
    prt_device_free(PRT_DEVICE_CUDA, g->x);
    prt_device_free(PRT_DEVICE_CUDA, g->y);
    prt_device_free(PRT_DEVICE_CUDA, g->k);
}

static void bind(prt_context *ctx, const gpu_io *g)
{
    prt_dims d = {2, {R, C}};
    CHECK_OK(prt_context_set_input_shape(ctx, "X", &d));
    CHECK_OK(prt_context_set_tensor_address(ctx, "X", g->x));
    CHECK_OK(prt_context_set_tensor_address(ctx, "Y", g->y));
    CHECK_OK(prt_context_set_tensor_address(ctx, "K", g->k));
}

/* After a run on `stream`: the shape from the context, the data from the
 * device; compared with the CPU's. */
static void check_result(prt_context *ctx, const gpu_io *g, void *stream, int64_t want_k,
                         const int32_t *want, int32_t row_order, const char *what)
{
    prt_dims yd;
    int64_t k = -1;
    int32_t *got = malloc(sizeof(int32_t) * 2 * R * C);
    CHECK_OK(prt_context_get_tensor_shape(ctx, "Y", &yd));
    CHECK(yd.nb_dims == 2 && yd.d[row_order ? 0 : 1] == want_k &&
          yd.d[row_order ? 1 : 0] == 2);
    CHECK_OK(prt_device_memcpy(PRT_DEVICE_CUDA, &k, g->k, sizeof k,
                               PRT_MEMCPY_DEVICE_TO_HOST, stream));
    CHECK_OK(prt_device_memcpy(PRT_DEVICE_CUDA, got, g->y,
                               sizeof(int32_t) * 2 * (size_t)want_k,
                               PRT_MEMCPY_DEVICE_TO_HOST, stream));
    CHECK_OK(prt_stream_synchronize(PRT_DEVICE_CUDA, stream));
    CHECK(k == want_k);
    if (got && memcmp(got, want, sizeof(int32_t) * 2 * (size_t)want_k) != 0) {
        for (int64_t i = 0; i < 2 * want_k; i++)
            if (got[i] != want[i]) {
                printf("%s: index %lld is %d, the CPU has %d\n", what, (long long)i,
                       (int)got[i], (int)want[i]);
                break;
            }
        CHECK(!"CUDA indices equal the CPU's");
    }
    free(got);
}

static void test_round_trip_and_streams(prt_registry *reg, int32_t row_order)
{
    prt_engine *ge = build_nonzero(reg, PRT_DEVICE_CUDA, row_order);
    prt_engine *ce = build_nonzero(reg, PRT_DEVICE_CPU, row_order);
    prt_context *cc = NULL, *g1 = NULL, *g2 = NULL;
    void *s1 = NULL, *s2 = NULL;
    float *xa = malloc(sizeof(float) * R * C), *xb = malloc(sizeof(float) * R * C);
    int32_t *ia = malloc(sizeof(int32_t) * 2 * R * C),
            *ib = malloc(sizeof(int32_t) * 2 * R * C);
    gpu_io a, b;
    int64_t ka, kb;
    if (!ge || !ce || !xa || !xb || !ia || !ib) {
        CHECK(!"engines built");
        goto done;
    }
    CHECK(prt_engine_device(ge) == PRT_DEVICE_CUDA);
    fill(xa, R * C, 0.3, 1);
    fill(xb, R * C, 0.05, 2);
    CHECK_OK(prt_context_create(ce, &cc));
    ka = cpu_nonzero(cc, xa, ia);
    kb = cpu_nonzero(cc, xb, ib);
    CHECK(ka > 0 && kb > 0 && ka != kb);
    CHECK_OK(prt_context_create(ge, &g1));
    CHECK_OK(prt_context_create(ge, &g2));
    CHECK_OK(prt_stream_create(PRT_DEVICE_CUDA, &s1));
    CHECK_OK(prt_stream_create(PRT_DEVICE_CUDA, &s2));
    gpu_io_alloc(&a);
    gpu_io_alloc(&b);
    CHECK_OK(prt_device_memcpy(PRT_DEVICE_CUDA, a.x, xa, sizeof(float) * R * C,
                               PRT_MEMCPY_HOST_TO_DEVICE, s1));
    CHECK_OK(prt_device_memcpy(PRT_DEVICE_CUDA, b.x, xb, sizeof(float) * R * C,
                               PRT_MEMCPY_HOST_TO_DEVICE, s2));
    bind(g1, &a);
    bind(g2, &b);
    /* Both queued before either is waited for: they run concurrently. */
    for (int rep = 0; rep < 3; rep++) {
        CHECK_OK(prt_context_enqueue(g1, s1));
        CHECK_OK(prt_context_enqueue(g2, s2));
        check_result(g1, &a, s1, ka, ia, row_order, "context 1");
        check_result(g2, &b, s2, kb, ib, row_order, "context 2");
    }
    gpu_io_free(&a);
    gpu_io_free(&b);
done:
    prt_stream_destroy(PRT_DEVICE_CUDA, s1);
    prt_stream_destroy(PRT_DEVICE_CUDA, s2);
    prt_context_destroy(cc);
    prt_context_destroy(g1);
    prt_context_destroy(g2);
    prt_engine_destroy(ge);
    prt_engine_destroy(ce);
    free(xa);
    free(xb);
    free(ia);
    free(ib);
}

/* A graph replays the captured run; new input data with another count
 * gives the new count, because the kernels read sizes on the device. */
static void test_graph(prt_registry *reg)
{
    prt_engine *ge = build_nonzero(reg, PRT_DEVICE_CUDA, 1);
    prt_engine *ce = build_nonzero(reg, PRT_DEVICE_CPU, 1);
    prt_context *cc = NULL, *g = NULL;
    void *s = NULL;
    float *x = malloc(sizeof(float) * R * C);
    int32_t *want = malloc(sizeof(int32_t) * 2 * R * C);
    gpu_io io;
    if (!ge || !ce || !x || !want) {
        CHECK(!"engines built");
        goto done;
    }
    CHECK_OK(prt_context_create(ce, &cc));
    CHECK_OK(prt_context_create(ge, &g));
    CHECK_OK(prt_stream_create(PRT_DEVICE_CUDA, &s));
    gpu_io_alloc(&io);
    bind(g, &io);
    CHECK_ERR(prt_context_launch_graph(g, s), PRT_ERR_STATE, "no graph");
    CHECK_OK(prt_context_capture_graph(g, s));
    for (int rep = 0; rep < 4; rep++) {
        int64_t k;
        fill(x, R * C, rep == 3 ? 0.0 : 0.1 * (rep + 1), 10 + (unsigned)rep);
        k = cpu_nonzero(cc, x, want);
        CHECK_OK(prt_device_memcpy(PRT_DEVICE_CUDA, io.x, x, sizeof(float) * R * C,
                                   PRT_MEMCPY_HOST_TO_DEVICE, s));
        CHECK_OK(prt_context_launch_graph(g, s));
        check_result(g, &io, s, k, want, 1, "graph replay");
    }
    /* Eager runs still work beside the graph, and a changed address makes
     * the graph stale. */
    CHECK_OK(prt_context_enqueue(g, s));
    CHECK_OK(prt_stream_synchronize(PRT_DEVICE_CUDA, s));
    CHECK_OK(prt_context_set_tensor_address(g, "Y", io.y));
    CHECK_ERR(prt_context_launch_graph(g, s), PRT_ERR_STATE, "capture it again");
    gpu_io_free(&io);
done:
    prt_stream_destroy(PRT_DEVICE_CUDA, s);
    prt_context_destroy(cc);
    prt_context_destroy(g);
    prt_engine_destroy(ge);
    prt_engine_destroy(ce);
    free(x);
    free(want);
}

/* A context in memory the caller gives. */
static void test_external_memory(prt_registry *reg)
{
    prt_engine *ge = build_nonzero(reg, PRT_DEVICE_CUDA, 1);
    prt_engine *ce = build_nonzero(reg, PRT_DEVICE_CPU, 1);
    prt_context_options opt;
    prt_context *g = NULL, *cc = NULL;
    void *mem = NULL, *s = NULL;
    float *x = malloc(sizeof(float) * R * C);
    int32_t *want = malloc(sizeof(int32_t) * 2 * R * C);
    int64_t need, k;
    gpu_io io;
    if (!ge || !ce || !x || !want) {
        CHECK(!"engines built");
        goto done;
    }
    memset(&opt, 0, sizeof opt);
    opt.struct_size = sizeof opt;
    opt.external_memory = 1;
    need = prt_engine_context_memory_size(ge);
    CHECK(need > 0);
    CHECK_OK(prt_context_create_with_options(ge, &opt, &g));
    CHECK_OK(prt_context_create(ce, &cc));
    CHECK_OK(prt_stream_create(PRT_DEVICE_CUDA, &s));
    gpu_io_alloc(&io);
    bind(g, &io);
    CHECK_ERR(prt_context_enqueue(g, s), PRT_ERR_STATE, "prt_context_set_memory");
    CHECK_OK(prt_device_malloc(PRT_DEVICE_CUDA, (size_t)need, &mem));
    CHECK_ERR(prt_context_set_memory(g, mem, need - 1), PRT_ERR_INVALID_ARGUMENT,
              "needs");
    CHECK_ERR(prt_context_set_memory(g, (char *)mem + 8, need), PRT_ERR_INVALID_ARGUMENT,
              "aligned");
    CHECK_OK(prt_context_set_memory(g, mem, need));
    fill(x, R * C, 0.5, 99);
    k = cpu_nonzero(cc, x, want);
    CHECK_OK(prt_device_memcpy(PRT_DEVICE_CUDA, io.x, x, sizeof(float) * R * C,
                               PRT_MEMCPY_HOST_TO_DEVICE, s));
    CHECK_OK(prt_context_enqueue(g, s));
    check_result(g, &io, s, k, want, 1, "external memory");
    gpu_io_free(&io);
done:
    prt_stream_destroy(PRT_DEVICE_CUDA, s);
    prt_context_destroy(g);
    prt_context_destroy(cc);
    prt_device_free(PRT_DEVICE_CUDA, mem);
    prt_engine_destroy(ge);
    prt_engine_destroy(ce);
    free(x);
    free(want);
}

static void test_build_device(prt_registry *reg)
{
    prt_engine *ge = build_nonzero(reg, PRT_DEVICE_CUDA, 0);
    prt_device_info here, built;
    memset(&here, 0, sizeof here);
    memset(&built, 0, sizeof built);
    here.struct_size = built.struct_size = sizeof here;
    CHECK_OK(prt_device_get_info(PRT_DEVICE_CUDA, &here));
    if (ge) {
        CHECK_OK(prt_engine_get_build_device(ge, &built));
        CHECK(strcmp(here.name, built.name) == 0);
        CHECK(here.cc_major == built.cc_major && here.cc_minor == built.cc_minor);
        for (int32_t i = 0; i < prt_engine_io_count(ge); i++) {
            prt_io_info io = {.struct_size = sizeof io};
            CHECK_OK(prt_engine_get_io(ge, i, &io));
            CHECK(io.location == PRT_LOCATION_DEVICE);
        }
        printf("built on %s (compute capability %d.%d, %d multiprocessors)\n", built.name,
               (int)built.cc_major, (int)built.cc_minor, (int)here.multiprocessors);
    }
    prt_engine_destroy(ge);
}

/* ---- a plugin that writes a size past its bound, on the device ---------- */

static int32_t over_value; /* what OverCount writes as K */

static const char *oc_name(const prt_plugin *p)
{
    (void)p;
    return "OverCount";
}
static const char *oc_version(const prt_plugin *p)
{
    (void)p;
    return "1";
}
static const char *oc_ns(const prt_plugin *p)
{
    (void)p;
    return "test";
}
static uint32_t oc_devices(const prt_plugin *p)
{
    (void)p;
    return 1u << PRT_DEVICE_CUDA;
}
static int32_t oc_nb_outputs(const prt_plugin *p)
{
    (void)p;
    return 2;
}
static prt_status oc_dtypes(prt_plugin *p, int32_t *out, int32_t nb_out,
                            const int32_t *in, int32_t nb_in)
{
    (void)p, (void)nb_out, (void)in, (void)nb_in;
    out[0] = PRT_FLOAT32;
    out[1] = PRT_INT32;
    return PRT_OK;
}
/* Y [K], K <= n (opt n / 2). */
static prt_status oc_shapes(prt_plugin *p, const prt_dim_exprs *in, int32_t nb_in,
                            const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                            int32_t nb_out, prt_expr_builder *eb)
{
    const prt_expr *half =
        eb->operation(eb, PRT_DIM_CEIL_DIV, in[0].d[0], eb->constant(eb, 2));
    (void)p, (void)nb_in, (void)sv, (void)nb_sv, (void)nb_out;
    out[0].nb_dims = 1;
    out[0].d[0] = eb->declare_size_tensor(eb, 1, half, in[0].d[0]);
    out[1].nb_dims = 0;
    return out[0].d[0] ? PRT_OK : PRT_ERR_PLUGIN;
}
static int32_t oc_supports(prt_plugin *p, int32_t pos, const prt_dynamic_tensor_desc *io,
                           int32_t nb_in, int32_t nb_out)
{
    (void)p, (void)nb_in, (void)nb_out;
    return io[pos].desc.format == PRT_FORMAT_LINEAR &&
           io[pos].desc.dtype == (pos == 2 ? PRT_INT32 : PRT_FLOAT32);
}
static prt_status oc_enqueue(prt_plugin *p, const prt_tensor_desc *in,
                             const prt_tensor_desc *out, const void *const *x,
                             void *const *y, void *ws, int32_t device, void *stream)
{
    (void)p, (void)in, (void)out, (void)x, (void)ws, (void)device;
    if (over_value == -999) /* "forgets" to write K */
        return PRT_OK;
    return cudaMemcpyAsync(y[1], &over_value, sizeof over_value, cudaMemcpyHostToDevice,
                           (cudaStream_t)stream) == cudaSuccess
               ? PRT_OK
               : PRT_ERR_PLUGIN;
}
static prt_plugin *oc_clone(const prt_plugin *p)
{
    prt_plugin *c = malloc(sizeof *c);
    if (c)
        *c = *p;
    return c;
}
static prt_plugin *oc_attach(prt_plugin *p, prt_plugin_resources *r)
{
    (void)r;
    return oc_clone(p);
}
static const prt_field_collection oc_no_fields = {0, NULL};
static const prt_field_collection *oc_fields(prt_plugin *p)
{
    (void)p;
    return &oc_no_fields;
}
static void oc_destroy(prt_plugin *p)
{
    free(p);
}

static const prt_plugin_core oc_core = {
    sizeof oc_core, PRT_PLUGIN_ABI_VERSION, oc_name, oc_version, oc_ns, oc_devices};
static const prt_plugin_build oc_build = {sizeof oc_build,
                                          PRT_PLUGIN_ABI_VERSION,
                                          oc_nb_outputs,
                                          oc_dtypes,
                                          oc_shapes,
                                          oc_supports,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL};
static const prt_plugin_runtime oc_runtime = {sizeof oc_runtime,
                                              PRT_PLUGIN_ABI_VERSION,
                                              NULL,
                                              NULL,
                                              oc_enqueue,
                                              oc_attach,
                                              oc_fields,
                                              oc_clone,
                                              oc_destroy};
static const prt_plugin_vtable oc_vt = {sizeof oc_vt, PRT_PLUGIN_ABI_VERSION, &oc_core,
                                        &oc_build, &oc_runtime};

/* The device catches K beyond its bound; the host hears of it when it asks
 * for the shape, with the layer, the value and the bound. */
static void test_size_bound(void)
{
    prt_plugin *p = malloc(sizeof *p);
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    prt_dims d = {1, {100}}, yd;
    int32_t x, l, y, k;
    float *dx = NULL, *dy = NULL;
    int32_t *dk = NULL;
    void *s = NULL;
    if (!p)
        return;
    p->vt = &oc_vt;
    CHECK_OK(prt_network_create(&net));
    CHECK_OK(prt_network_add_input(net, "X", PRT_FLOAT32, &d, &x));
    CHECK_OK(prt_network_add_plugin(net, &x, 1, NULL, 0, p, &l));
    CHECK_OK(prt_network_get_layer_output(net, l, 0, &y));
    CHECK_OK(prt_network_get_layer_output(net, l, 1, &k));
    CHECK_OK(prt_network_set_tensor_name(net, y, "Y"));
    CHECK_OK(prt_network_set_tensor_name(net, k, "K"));
    CHECK_OK(prt_network_mark_output(net, y));
    CHECK_OK(prt_network_mark_output(net, k));
    CHECK_OK(prt_builder_config_create(&cfg));
    CHECK_OK(prt_builder_config_set_device(cfg, PRT_DEVICE_CUDA));
    CHECK_OK(prt_engine_build(net, cfg, NULL, &e));
    CHECK_OK(prt_context_create(e, &ctx));
    CHECK_OK(prt_stream_create(PRT_DEVICE_CUDA, &s));
    CHECK_OK(prt_device_malloc(PRT_DEVICE_CUDA, 400, (void **)&dx));
    CHECK_OK(prt_device_malloc(PRT_DEVICE_CUDA, 400, (void **)&dy));
    CHECK_OK(prt_device_malloc(PRT_DEVICE_CUDA, 4, (void **)&dk));
    CHECK_OK(prt_context_set_tensor_address(ctx, "X", dx));
    CHECK_OK(prt_context_set_tensor_address(ctx, "Y", dy));
    CHECK_OK(prt_context_set_tensor_address(ctx, "K", dk));
    over_value = 37;
    CHECK_OK(prt_context_enqueue(ctx, s));
    CHECK_OK(prt_context_get_tensor_shape(ctx, "Y", &yd));
    CHECK(yd.nb_dims == 1 && yd.d[0] == 37);
    over_value = 103;
    CHECK_OK(prt_context_enqueue(ctx, s));
    CHECK_ERR(prt_context_get_tensor_shape(ctx, "Y", &yd), PRT_ERR_PLUGIN,
              "wrote 103 to size tensor 'K', outside its declared bounds 0..100");
    over_value = -999;
    CHECK_OK(prt_context_enqueue(ctx, s));
    CHECK_ERR(prt_context_get_tensor_shape(ctx, "Y", &yd), PRT_ERR_PLUGIN,
              "did not write its size tensor 'K'");
    over_value = 0;
    CHECK_OK(prt_context_enqueue(ctx, s));
    CHECK_OK(prt_context_get_tensor_shape(ctx, "Y", &yd));
    CHECK(yd.d[0] == 0);
    prt_device_free(PRT_DEVICE_CUDA, dx);
    prt_device_free(PRT_DEVICE_CUDA, dy);
    prt_device_free(PRT_DEVICE_CUDA, dk);
    prt_stream_destroy(PRT_DEVICE_CUDA, s);
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
}

/* GPU indices: the count, the current one, a bad index named; with two
 * GPUs, memory and an engine's run on the second one. */
static void test_device_index(prt_registry *reg)
{
    int32_t n = 0, cur = -1;
    char want[64];
    CHECK_OK(prt_device_count(PRT_DEVICE_CUDA, &n));
    CHECK(n >= 1);
    CHECK_OK(prt_device_set_current(PRT_DEVICE_CUDA, 0));
    CHECK_OK(prt_device_get_current(PRT_DEVICE_CUDA, &cur));
    CHECK(cur == 0);
    snprintf(want, sizeof want, "there is no device %d", (int)n);
    CHECK_ERR(prt_device_set_current(PRT_DEVICE_CUDA, n), PRT_ERR_INVALID_ARGUMENT, want);
    CHECK_OK(prt_device_get_current(PRT_DEVICE_CUDA, &cur));
    CHECK(cur == 0); /* a refused index changes nothing */
    if (n < 2) {
        printf("test_device_index: one GPU; the second-GPU checks are skipped\n");
        return;
    }
    {
        void *p = NULL;
        struct cudaPointerAttributes attr;
        CHECK_OK(prt_device_set_current(PRT_DEVICE_CUDA, 1));
        CHECK_OK(prt_device_get_current(PRT_DEVICE_CUDA, &cur));
        CHECK(cur == 1);
        CHECK_OK(prt_device_malloc(PRT_DEVICE_CUDA, 4096, &p));
        memset(&attr, 0, sizeof attr);
        CHECK(p && cudaPointerGetAttributes(&attr, p) == cudaSuccess && attr.device == 1);
        prt_device_free(PRT_DEVICE_CUDA, p);
        /* Built, loaded and run on GPU 1, checked against the CPU. */
        test_round_trip_and_streams(reg, 1);
        CHECK_OK(prt_device_set_current(PRT_DEVICE_CUDA, 0));
    }
}

/* A context used from a thread whose current GPU is not the context's
 * fails naming both; with switch_device it runs there and puts the
 * thread's GPU back. With two GPUs for real; with one, the context is told
 * it lives on GPU 1 (nothing runs while it believes so). */
static void test_wrong_device(prt_registry *reg)
{
    prt_engine *ge = build_nonzero(reg, PRT_DEVICE_CUDA, 1);
    prt_engine *ce = build_nonzero(reg, PRT_DEVICE_CPU, 1);
    prt_context *cc = NULL, *gc = NULL, *sc = NULL;
    prt_context_options sw = {.struct_size = sizeof sw, .switch_device = 1};
    float *x = malloc(sizeof(float) * R * C);
    int32_t *want = malloc(sizeof(int32_t) * 2 * R * C), n = 0, cur = -1;
    int64_t k;
    gpu_io g;
    if (!ge || !ce || !x || !want) {
        CHECK(!"engines built");
        goto done;
    }
    CHECK_OK(prt_device_count(PRT_DEVICE_CUDA, &n));
    CHECK(prt_engine_get_device_index(ge) == 0 && prt_engine_get_device_index(ce) == 0);
    fill(x, R * C, 0.2, 3);
    CHECK_OK(prt_context_create(ce, &cc));
    k = cpu_nonzero(cc, x, want);
    CHECK_OK(prt_context_create(ge, &gc));
    gpu_io_alloc(&g);
    CHECK_OK(prt_device_memcpy(PRT_DEVICE_CUDA, g.x, x, sizeof(float) * R * C,
                               PRT_MEMCPY_HOST_TO_DEVICE, NULL));
    bind(gc, &g);
    if (n >= 2) {
        CHECK_OK(prt_device_set_current(PRT_DEVICE_CUDA, 1));
        CHECK_ERR(prt_context_enqueue(gc, NULL), PRT_ERR_STATE, "cuda device 0");
        CHECK(strstr(prt_last_error(), "current cuda device is 1") != NULL);
        /* Made and run from GPU 1, on GPU 0, and GPU 1 current after. */
        CHECK_OK(prt_context_create_with_options(ge, &sw, &sc));
        if (sc) {
            bind(sc, &g);
            CHECK_OK(prt_context_enqueue(sc, NULL));
            CHECK_OK(prt_device_get_current(PRT_DEVICE_CUDA, &cur));
            CHECK(cur == 1);
            check_result(sc, &g, NULL, k, want, 1, "switch_device from GPU 1");
        }
        CHECK_OK(prt_device_set_current(PRT_DEVICE_CUDA, 0));
    } else {
        gc->device_index = 1;
        CHECK_ERR(prt_context_enqueue(gc, NULL), PRT_ERR_STATE, "cuda device 1");
        CHECK(strstr(prt_last_error(), "current cuda device is 0") != NULL);
        CHECK(strstr(prt_last_error(), "prt_context_enqueue") != NULL);
        /* Switching to a GPU that is not there fails the call cleanly and
         * leaves the thread's. */
        gc->switch_device = 1;
        CHECK_ERR(prt_context_enqueue(gc, NULL), PRT_ERR_STATE,
                  "runs on cuda device 1, which this process does not see (1 device)");
        CHECK_OK(prt_device_get_current(PRT_DEVICE_CUDA, &cur));
        CHECK(cur == 0);
        gc->device_index = 0;
        gc->switch_device = 0;
    }
    /* On its own GPU it runs, and gives the CPU's result. */
    CHECK_OK(prt_context_enqueue(gc, NULL));
    check_result(gc, &g, NULL, k, want, 1, "on its own GPU");
    gpu_io_free(&g);
done:
    prt_context_destroy(sc);
    prt_context_destroy(gc);
    prt_context_destroy(cc);
    prt_engine_destroy(ge);
    prt_engine_destroy(ce);
    free(x);
    free(want);
}

int main(void)
{
    prt_registry *reg;
    tu_require_cuda("test_cuda_runtime");
    reg = tu_registry_with_plugins();
    if (!reg)
        return tu_finish("test_cuda_runtime");
    test_build_device(reg);
    test_device_index(reg);
    test_wrong_device(reg);
    test_round_trip_and_streams(reg, 1);
    test_round_trip_and_streams(reg, 0);
    test_graph(reg);
    test_external_memory(reg);
    test_size_bound();
    prt_registry_destroy(reg);
    return tu_finish("test_cuda_runtime");
}
