/*
 * NonZeroPlugin with backend "nvrtc" on the GPU: the kernel layer the
 * builder compiles with NVRTC and embeds, against the plugin's CPU
 * implementation (a CPU engine of the same network).
 *
 *  - Per dtype (float32, float16) and order (rowOrder 1: K x 2, 0: 2 x K):
 *    one CUDA engine with a dynamic R x C input (profile 0 x 0 to
 *    1024 x 1100), serialized and loaded again through a registry with NO
 *    plugin library (the kernel layer needs none), run with
 *    allow_embedded_kernels at shapes from 0 x 5 and 1 x 1 to 1024 x 1024
 *    (sizes that are not multiples of the 4096-element tile, single rows
 *    and columns) and densities 0, 0.01, 0.5 and 1; non-zeros include NaN,
 *    infinities and subnormals, zeros are +0 and -0.
 *  - Each run: outputs poisoned (0xff) first; K, every index pair, the
 *    shape the context reports, and the room past 2K left untouched (the
 *    indices are written densely with the true K).
 *  - The loaded engine holds one kernel layer; a context without
 *    allow_embedded_kernels is refused naming it; the default backend's
 *    engine holds none; shape changes load no module again.
 * Without a usable GPU (or NVRTC on it) the test exits 77 (skipped). Run it
 * under compute-sanitizer on the GPU machine.
 */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/kmod.h"
#include "cuda_testutil.h"

#define NAME "test_cuda_nonzero_nvrtc"
#define MAX_R 1024
#define MAX_C 1100

static cudaStream_t g_stream;

static prt_dims dims2(int64_t r, int64_t c)
{
    int64_t v[2] = {r, c};
    return tu_dims(2, v);
}

/* Non-zeros with probability `density`: NaN, +-inf, subnormals and random
 * values among them; zeros are +0 or -0. */
static void fill(tu_rng *r, void *x, int32_t dtype, int64_t n, double density)
{
    for (int64_t i = 0; i < n; i++) {
        int nz = density >= 1.0 || tu_rng_uniform(r) < density;
        int64_t kind = tu_rng_range(r, 0, 15);
        uint32_t sign = (uint32_t)tu_rng_range(r, 0, 1);
        if (dtype == PRT_FLOAT32) {
            uint32_t v = sign << 31;
            if (nz)
                v = kind == 0   ? 0x7FC00000u
                    : kind == 1 ? (sign << 31 | 1u)
                    : kind == 2 ? 0xFF800000u
                                : (sign << 31 | (uint32_t)tu_rng_range(r, 1, 0x7F7FFFFF));
            ((uint32_t *)x)[i] = v;
        } else {
            uint16_t v = (uint16_t)(sign << 15);
            if (nz)
                v = kind == 0   ? 0x7E00
                    : kind == 1 ? (uint16_t)(sign << 15 | 1u)
                    : kind == 2 ? 0x7C00
                                : (uint16_t)(sign << 15 | tu_rng_range(r, 1, 0x7BFF));
            ((uint16_t *)x)[i] = v;
        }
    }
}

/* x (R x C, dynamic) -> NonZeroPlugin(rowOrder, backend) -> y, k. */
static prt_status make_net(prt_registry *reg, int32_t dtype, int32_t order,
                           const char *backend, prt_network **out)
{
    prt_field f[2] = {{"rowOrder", &order, PRT_FIELD_INT32, 1},
                      {"backend", backend, PRT_FIELD_CHAR, (int64_t)strlen(backend)}};
    prt_plugin *p = tu_make_plugin(reg, "", "NonZeroPlugin", "1", f, 2);
    prt_dims d = dims2(-1, -1);
    prt_network *net = NULL;
    int32_t x, layer, t;
    prt_status st = p ? prt_network_create(&net) : PRT_ERR_PLUGIN;
    if (!st)
        st = prt_network_add_input(net, "x", dtype, &d, &x);
    if (!st) {
        st = prt_network_add_plugin(net, &x, 1, NULL, 0, p, &layer);
        p = NULL; /* taken, or destroyed below */
    }
    for (int32_t o = 0; !st && o < 2; o++) {
        st = prt_network_get_layer_output(net, layer, o, &t);
        if (!st)
            st = prt_network_set_tensor_name(net, t, o ? "k" : "y");
        if (!st)
            st = prt_network_mark_output(net, t);
    }
    if (p)
        p->vt->runtime->destroy(p);
    if (st)
        prt_network_destroy(net);
    *out = st ? NULL : net;
    return st;
}

static prt_status build(const prt_network *net, prt_registry *reg, int32_t device,
                        prt_engine **out)
{
    prt_builder_config *cfg = NULL;
    prt_dims lo = dims2(0, 0), opt = dims2(64, 64), hi = dims2(MAX_R, MAX_C);
    int32_t prof;
    prt_status st = prt_builder_config_create(&cfg);
    if (!st)
        st = prt_builder_config_set_device(cfg, device);
    if (!st)
        st = prt_builder_config_add_profile(cfg, &prof);
    if (!st)
        st = prt_builder_config_set_profile_dims(cfg, prof, "x", &lo, &opt, &hi);
    if (!st)
        st = prt_engine_build(net, cfg, reg, out);
    prt_builder_config_destroy(cfg);
    return st;
}

/* Serialized and loaded again through `reg`. */
static prt_status reload(const prt_engine *e, const prt_registry *reg, prt_engine **out)
{
    void *bytes = NULL;
    size_t n = 0;
    prt_status st = prt_engine_serialize(e, &bytes, &n);
    if (!st)
        st = prt_engine_deserialize(reg, bytes, n, out);
    prt_free(bytes);
    return st;
}

typedef struct bufs {
    void *hx, *dx;          /* input, host and device */
    int32_t *hy, *dy, *got; /* indices: CPU result, device, device result */
    int64_t *dk, hk;        /* K on the device, on the CPU */
    size_t ybytes;          /* room for every element's pair */
} bufs;

/* One shape and density: the CPU engine's result against the kernel
 * layer's. */
static void run_case(prt_context *cpu, prt_context *gpu, bufs *b, tu_rng *rng,
                     int32_t dtype, int32_t order, int64_t R, int64_t C, double density)
{
    const size_t es = dtype == PRT_FLOAT32 ? 4 : 2;
    const int64_t n = R * C;
    prt_dims d = dims2(R, C), shape;
    int64_t k = -1;
    char label[128];
    snprintf(label, sizeof label,
             "NonZeroPlugin nvrtc %s [%lld, %lld] rowOrder %d density %.2f",
             dtype == PRT_FLOAT32 ? "float32" : "float16", (long long)R, (long long)C,
             (int)order, density);
    fill(rng, b->hx, dtype, n, density);
    b->hk = -1;
    CHECK_OK(prt_context_set_input_shape(cpu, "x", &d));
    CHECK_OK(prt_context_set_input_shape(gpu, "x", &d));
    CHECK_OK(prt_context_enqueue(cpu, NULL));
    if (!CUDA_OK(cudaMemcpy(b->dx, b->hx, (size_t)n * es + 1, cudaMemcpyHostToDevice)) ||
        !CUDA_OK(cudaMemset(b->dy, 0xff, b->ybytes)) ||
        !CUDA_OK(cudaMemset(b->dk, 0xff, sizeof(int64_t))))
        return;
    tu_checks++;
    if (prt_context_enqueue(gpu, g_stream) != PRT_OK) {
        tu_failures++;
        fprintf(stderr, "FAIL %s: enqueue: %s\n", label, prt_last_error());
        return;
    }
    if (!CUDA_OK(cudaStreamSynchronize(g_stream)) ||
        !CUDA_OK(cudaMemcpy(&k, b->dk, sizeof k, cudaMemcpyDeviceToHost)) ||
        !CUDA_OK(cudaMemcpy(b->got, b->dy, b->ybytes, cudaMemcpyDeviceToHost)))
        return;
    tu_checks++;
    if (k != b->hk) {
        tu_failures++;
        fprintf(stderr, "FAIL %s: K = %lld, the CPU's %lld\n", label, (long long)k,
                (long long)b->hk);
        return;
    }
    /* Both write densely with the true K, so the layouts agree word for
     * word; past 2K the device's room is as poisoned. */
    for (int64_t j = 0; j < 2 * k; j++)
        if (b->got[j] != b->hy[j]) {
            tu_failures++;
            fprintf(stderr, "FAIL %s: index word %lld of %lld is %d, the CPU's %d\n",
                    label, (long long)j, (long long)(2 * k), (int)b->got[j],
                    (int)b->hy[j]);
            return;
        }
    for (int64_t j = 2 * k; j < (int64_t)(b->ybytes / 4); j++)
        if (b->got[j] != -1) {
            tu_failures++;
            fprintf(stderr, "FAIL %s: index word %lld, past 2K = %lld, was written\n",
                    label, (long long)j, (long long)(2 * k));
            return;
        }
    tu_checks++;
    CHECK_OK(prt_context_get_tensor_shape(gpu, "y", &shape));
    CHECK(shape.nb_dims == 2 && shape.d[order ? 0 : 1] == k &&
          shape.d[order ? 1 : 0] == 2);
}

static void test_one(prt_registry *reg, prt_registry *bare, int32_t dtype, int32_t order)
{
    static const int64_t shapes[][2] = {
        {0, 5},      {5, 0},      {1, 1},       {1, 37},   {37, 1},    {7, 13},
        {64, 64},    {1, 1100},   {1024, 1},    {4, 1024}, {100, 333}, {257, 255},
        {513, 1099}, {1000, 999}, {1024, 1024}, {3, 5}};
    static const double dens[] = {0.0, 0.01, 0.5, 1.0};
    const size_t es = dtype == PRT_FLOAT32 ? 4 : 2;
    const int64_t cap = (int64_t)MAX_R * MAX_C;
    prt_network *net = NULL;
    prt_engine *cpu_e = NULL, *built = NULL, *loaded = NULL, *plain = NULL;
    prt_context *cpu = NULL, *gpu = NULL, *refused = NULL;
    prt_context_options opts;
    bufs b;
    tu_rng rng;
    int64_t modules;
    int fails = tu_failures;
    memset(&b, 0, sizeof b);
    tu_rng_seed(&rng, 7 + (uint64_t)dtype * 2 + (uint64_t)order);
    if (make_net(reg, dtype, order, "nvrtc", &net) != PRT_OK ||
        build(net, reg, PRT_DEVICE_CPU, &cpu_e) != PRT_OK ||
        build(net, reg, PRT_DEVICE_CUDA, &built) != PRT_OK) {
        CHECK(!"building the NVRTC NonZero engines failed");
        fprintf(stderr, "  %s\n", prt_last_error());
        goto done;
    }
    /* Only the CUDA engine has a kernel layer; it loads with no plugin
     * library, and runs only when allowed. */
    CHECK(prt_engine_get_nb_kernel_layers(cpu_e) == 0);
    CHECK(prt_engine_get_nb_kernel_layers(built) == 1);
    CHECK_OK(reload(built, bare, &loaded));
    if (!loaded)
        goto done;
    CHECK(prt_engine_get_nb_kernel_layers(loaded) == 1);
    CHECK_ERR(prt_context_create(loaded, &refused), PRT_ERR_UNSUPPORTED,
              "allow_embedded_kernels");
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.allow_embedded_kernels = 1;
    CHECK_OK(prt_context_create_with_options(loaded, &opts, &gpu));
    CHECK_OK(prt_context_create(cpu_e, &cpu));
    if (!gpu || !cpu)
        goto done;
    b.ybytes = (size_t)(2 * cap) * sizeof(int32_t);
    b.hx = malloc((size_t)cap * es + 1);
    b.hy = malloc(b.ybytes);
    b.got = malloc(b.ybytes);
    if (!b.hx || !b.hy || !b.got || !CUDA_OK(cudaMalloc(&b.dx, (size_t)cap * es + 1)) ||
        !CUDA_OK(cudaMalloc((void **)&b.dy, b.ybytes)) ||
        !CUDA_OK(cudaMalloc((void **)&b.dk, sizeof(int64_t))))
        goto done;
    CHECK_OK(prt_context_set_tensor_address(cpu, "x", b.hx));
    CHECK_OK(prt_context_set_tensor_address(cpu, "y", b.hy));
    CHECK_OK(prt_context_set_tensor_address(cpu, "k", &b.hk));
    CHECK_OK(prt_context_set_tensor_address(gpu, "x", b.dx));
    CHECK_OK(prt_context_set_tensor_address(gpu, "y", b.dy));
    CHECK_OK(prt_context_set_tensor_address(gpu, "k", b.dk));
    modules = kmod_live_modules();
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t di = 0; di < sizeof dens / sizeof dens[0]; di++)
            run_case(cpu, gpu, &b, &rng, dtype, order, shapes[s][0], shapes[s][1],
                     dens[di]);
    /* Loaded once, with the context: no shape change loaded it again. */
    CHECK(kmod_live_modules() == modules);
    /* The default backend: the compiled kernels, no kernel layer. */
    prt_network_destroy(net);
    net = NULL;
    if (make_net(reg, dtype, order, "", &net) == PRT_OK &&
        build(net, reg, PRT_DEVICE_CUDA, &plain) == PRT_OK)
        CHECK(prt_engine_get_nb_kernel_layers(plain) == 0);
    else
        CHECK(!"building the default NonZero engine failed");
    printf("%s: %s rowOrder %d: %zu shapes x 4 densities against the CPU: %s\n", NAME,
           dtype == PRT_FLOAT32 ? "float32" : "float16", (int)order,
           sizeof shapes / sizeof shapes[0], tu_failures == fails ? "ok" : "FAILED");
done:
    prt_context_destroy(refused);
    prt_context_destroy(gpu);
    prt_context_destroy(cpu);
    prt_engine_destroy(plain);
    prt_engine_destroy(loaded);
    prt_engine_destroy(built);
    prt_engine_destroy(cpu_e);
    prt_network_destroy(net);
    cudaFree(b.dx);
    cudaFree(b.dy);
    cudaFree(b.dk);
    free(b.hx);
    free(b.hy);
    free(b.got);
}

int main(void)
{
    prt_registry *reg, *bare = NULL;
    tu_require_cuda(NAME);
    tu_watchdog(NAME, 1200);
    reg = tu_registry_with_plugins();
    if (!reg || prt_registry_create(&bare) != PRT_OK ||
        !CUDA_OK(cudaStreamCreate(&g_stream))) {
        prt_registry_destroy(reg);
        return tu_finish(NAME);
    }
    {
        /* NVRTC is opened by the builder; a GPU machine without it cannot
         * build this backend at all, which is a skip, not a failure. */
        prt_network *net = NULL;
        prt_engine *e = NULL;
        prt_status st = make_net(reg, PRT_FLOAT32, 1, "nvrtc", &net);
        if (!st)
            st = build(net, reg, PRT_DEVICE_CUDA, &e);
        if (st == PRT_ERR_UNSUPPORTED && strstr(prt_last_error(), "no NVRTC")) {
            printf("%s: skipped: %s\n", NAME, prt_last_error());
            prt_network_destroy(net);
            prt_registry_destroy(bare);
            prt_registry_destroy(reg);
            return TU_SKIP;
        }
        prt_engine_destroy(e);
        prt_network_destroy(net);
    }
    for (int t = 0; t < 2; t++)
        for (int32_t o = 1; o >= 0; o--)
            test_one(reg, bare, t ? PRT_FLOAT16 : PRT_FLOAT32, o);
    cudaStreamDestroy(g_stream);
    prt_registry_destroy(bare);
    prt_registry_destroy(reg);
    return tu_finish(NAME);
}
