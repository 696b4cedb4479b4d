/*
 * The builder's precision flags on CUDA (issue 24), against the float32
 * engine on the CPU:
 *  - products: x[M x K] -> MatMul(W1) -> Gemm(W2, c) -> y, and
 *  - convolutions: img -> Conv 3x3 (+bias) -> Relu -> Conv 1x1 (cuBLAS's
 *    pointwise path) -> z,
 * built for CUDA strict (no flag: within 1e-4 of max|ref|), with TF32
 * (cuBLAS's CUBLAS_COMPUTE_32F_FAST_TF32: 1e-2, a 10-bit mantissa's
 * rounding over sums of 64), FP16 (16-bit cuBLAS with float32 sums: 2e-2)
 * and BF16 (6e-2; Conv has no bfloat16 kernel, so the Convs stay float32
 * and the log says so). Inputs and outputs keep float32 throughout. Skips
 * without a GPU.
 */
#include <math.h>
#include <stdlib.h>

#include "testutil.h"

#define M 32
#define K 64
#define N 48
#define IC 8
#define OC 16
#define HW 12

static prt_plugin *builtin(const char *name, const prt_field *f, int32_t nf)
{
    const prt_plugin_creator *c = NULL;
    prt_plugin *p = NULL;
    prt_field_collection fc = {nf, f};
    CHECK_OK(prt_builtin_find_creator(name, NULL, &c));
    if (c)
        CHECK_OK(c->create(c, name, &fc, PRT_PHASE_BUILD, &p));
    return p;
}

static int32_t layer(prt_network *net, prt_plugin *p, const int32_t *in, int32_t n)
{
    int32_t l = -1, t = -1;
    if (!p || prt_network_add_plugin(net, in, n, NULL, 0, p, &l) != PRT_OK) {
        CHECK(0);
        return -1;
    }
    CHECK_OK(prt_network_get_layer_output(net, l, 0, &t));
    return t;
}

static int32_t constant(prt_network *net, const char *name, int32_t nb, const int64_t *d,
                        const float *v)
{
    prt_dims dims = tu_dims(nb, d);
    int32_t t = -1;
    CHECK_OK(prt_network_add_constant(net, name, PRT_FLOAT32, &dims, v, &t));
    return t;
}

static void fill(float *v, int64_t n, double scale, uint64_t seed)
{
    tu_rng r;
    tu_rng_seed(&r, seed);
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)((tu_rng_uniform(&r) * 2.0 - 1.0) * scale);
}

static float w1[K * N], w2[N * N], c2[N], cw[OC * IC * 9], cb[OC], pw[IC * OC];

/* Both networks in one: inputs x, img; outputs y, z. */
static prt_network *make_net(void)
{
    prt_network *net = NULL;
    int64_t xd[2] = {M, K}, id[4] = {1, IC, HW, HW};
    int64_t d1[2] = {K, N}, d2[2] = {N, N}, dc[1] = {N};
    int64_t dw[4] = {OC, IC, 3, 3}, db[1] = {OC}, dp[4] = {IC, OC, 1, 1};
    prt_dims dx = tu_dims(2, xd), di = tu_dims(4, id);
    int32_t x, img, t, y, z, in[3];
    int32_t pads[4] = {1, 1, 1, 1};
    prt_field fpads = {"pads", pads, PRT_FIELD_INT32, 4};
    if (prt_network_create(&net) != PRT_OK)
        return NULL;
    CHECK_OK(prt_network_add_input(net, "x", PRT_FLOAT32, &dx, &x));
    CHECK_OK(prt_network_add_input(net, "img", PRT_FLOAT32, &di, &img));
    in[0] = x, in[1] = constant(net, "W1", 2, d1, w1);
    t = layer(net, builtin("MatMul", NULL, 0), in, 2);
    in[0] = t, in[1] = constant(net, "W2", 2, d2, w2),
    in[2] = constant(net, "c", 1, dc, c2);
    y = layer(net, builtin("Gemm", NULL, 0), in, 3);
    in[0] = img, in[1] = constant(net, "CW", 4, dw, cw),
    in[2] = constant(net, "CB", 1, db, cb);
    t = layer(net, builtin("Conv", &fpads, 1), in, 3);
    t = layer(net, builtin("Relu", NULL, 0), &t, 1);
    in[0] = t, in[1] = constant(net, "PW", 4, dp, pw);
    z = layer(net, builtin("Conv", NULL, 0), in, 2);
    if (y < 0 || z < 0) {
        prt_network_destroy(net);
        return NULL;
    }
    CHECK_OK(prt_network_set_tensor_name(net, y, "y"));
    CHECK_OK(prt_network_set_tensor_name(net, z, "z"));
    CHECK_OK(prt_network_mark_output(net, y));
    CHECK_OK(prt_network_mark_output(net, z));
    return net;
}

static prt_engine *build(const prt_network *net, prt_registry *reg, int32_t device,
                         uint32_t flags)
{
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL, *loaded = NULL;
    void *bytes = NULL;
    size_t size = 0;
    CHECK_OK(prt_builder_config_create(&cfg));
    if (!cfg)
        return NULL;
    CHECK_OK(prt_builder_config_set_device(cfg, device));
    CHECK_OK(prt_builder_config_set_precision_flags(cfg, flags));
    CHECK_OK(prt_engine_build(net, cfg, reg, &e));
    prt_builder_config_destroy(cfg);
    /* The loaded copy, as users run it: the flags come from the file. */
    if (e && prt_engine_serialize(e, &bytes, &size) == PRT_OK)
        CHECK_OK(prt_engine_deserialize(reg, bytes, size, &loaded));
    prt_free(bytes);
    prt_engine_destroy(e);
    if (loaded)
        CHECK(prt_engine_get_precision_flags(loaded) == flags);
    return loaded;
}

static void run_cpu(prt_engine *e, const float *x, const float *img, float *y, float *z)
{
    prt_context *ctx = NULL;
    CHECK_OK(prt_context_create(e, &ctx));
    if (!ctx)
        return;
    CHECK_OK(prt_context_set_tensor_address(ctx, "x", (void *)x));
    CHECK_OK(prt_context_set_tensor_address(ctx, "img", (void *)img));
    CHECK_OK(prt_context_set_tensor_address(ctx, "y", y));
    CHECK_OK(prt_context_set_tensor_address(ctx, "z", z));
    CHECK_OK(prt_context_enqueue(ctx, NULL));
    prt_context_destroy(ctx);
}

static void run_gpu(prt_engine *e, const float *x, const float *img, float *y, float *z)
{
    const size_t bx = sizeof(float) * M * K, bi = sizeof(float) * IC * HW * HW;
    const size_t by = sizeof(float) * M * N, bz = sizeof(float) * IC * HW * HW;
    prt_context *ctx = NULL;
    void *dx = NULL, *di = NULL, *dy = NULL, *dz = NULL;
    CHECK_OK(prt_context_create(e, &ctx));
    CHECK_OK(prt_device_malloc(PRT_DEVICE_CUDA, bx, &dx));
    CHECK_OK(prt_device_malloc(PRT_DEVICE_CUDA, bi, &di));
    CHECK_OK(prt_device_malloc(PRT_DEVICE_CUDA, by, &dy));
    CHECK_OK(prt_device_malloc(PRT_DEVICE_CUDA, bz, &dz));
    if (ctx && dx && di && dy && dz) {
        CHECK_OK(prt_device_memcpy(PRT_DEVICE_CUDA, dx, x, bx, PRT_MEMCPY_HOST_TO_DEVICE,
                                   NULL));
        CHECK_OK(prt_device_memcpy(PRT_DEVICE_CUDA, di, img, bi,
                                   PRT_MEMCPY_HOST_TO_DEVICE, NULL));
        CHECK_OK(prt_context_set_tensor_address(ctx, "x", dx));
        CHECK_OK(prt_context_set_tensor_address(ctx, "img", di));
        CHECK_OK(prt_context_set_tensor_address(ctx, "y", dy));
        CHECK_OK(prt_context_set_tensor_address(ctx, "z", dz));
        CHECK_OK(prt_context_enqueue(ctx, NULL));
        CHECK_OK(prt_device_memcpy(PRT_DEVICE_CUDA, y, dy, by, PRT_MEMCPY_DEVICE_TO_HOST,
                                   NULL));
        CHECK_OK(prt_device_memcpy(PRT_DEVICE_CUDA, z, dz, bz, PRT_MEMCPY_DEVICE_TO_HOST,
                                   NULL));
        CHECK_OK(prt_stream_synchronize(PRT_DEVICE_CUDA, NULL));
    }
    prt_device_free(PRT_DEVICE_CUDA, dx);
    prt_device_free(PRT_DEVICE_CUDA, di);
    prt_device_free(PRT_DEVICE_CUDA, dy);
    prt_device_free(PRT_DEVICE_CUDA, dz);
    prt_context_destroy(ctx);
}

/* Every element within tol * max|ref|; prints the worst. */
static void check_close(const float *got, const float *ref, int64_t n, double tol,
                        const char *what)
{
    double mx = 0.0, worst = 0.0;
    for (int64_t i = 0; i < n; i++)
        mx = fmax(mx, fabs(ref[i]));
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - ref[i]);
        worst = e > worst || isnan(e) ? e : worst;
    }
    printf("  %-10s max|err| %.3g of max|ref| %.3g (tolerance %.3g)\n", what, worst, mx,
           tol * mx);
    CHECK(worst <= tol * mx);
}

/* The dtype of input 0 of the first layer whose plugin is `op`; -1 if none. */
static int32_t input_dtype(const prt_engine *e, const char *op)
{
    for (int32_t i = 0; i < prt_engine_layer_count(e); i++) {
        prt_layer_info li;
        prt_tensor_info ti;
        memset(&li, 0, sizeof li);
        li.struct_size = sizeof li;
        memset(&ti, 0, sizeof ti);
        ti.struct_size = sizeof ti;
        if (prt_engine_get_layer(e, i, &li) == PRT_OK &&
            strcmp(li.plugin_name, op) == 0 && li.nb_inputs > 0 &&
            prt_engine_get_tensor(e, li.inputs[0], &ti) == PRT_OK)
            return ti.dtype;
    }
    return -1;
}

int main(void)
{
    static const struct {
        const char *name;
        uint32_t flags;
        double tol;
        int32_t matmul_dtype, conv_dtype;
    } cases[] = {
        {"float32", 0, 1e-4, PRT_FLOAT32, PRT_FLOAT32},
        {"tf32", PRT_PRECISION_TF32, 1e-2, PRT_FLOAT32, PRT_FLOAT32},
        {"fp16", PRT_PRECISION_FP16, 2e-2, PRT_FLOAT16, PRT_FLOAT16},
        {"bf16", PRT_PRECISION_BF16, 6e-2, PRT_BFLOAT16, PRT_FLOAT32},
    };
    static float x[M * K], img[IC * HW * HW], y32[M * N], z32[IC * HW * HW];
    static float y[M * N], z[IC * HW * HW];
    prt_registry *reg;
    prt_network *net;
    prt_engine *cpu;
    tu_require_cuda("test_cuda_precision");
    reg = tu_registry_with_plugins();
    fill(w1, K * N, 0.2, 1);
    fill(w2, N * N, 0.2, 2);
    fill(c2, N, 0.1, 3);
    fill(cw, OC * IC * 9, 0.2, 4);
    fill(cb, OC, 0.1, 5);
    fill(pw, IC * OC, 0.3, 6);
    fill(x, M * K, 1.0, 7);
    fill(img, IC * HW * HW, 1.0, 8);
    net = reg ? make_net() : NULL;
    cpu = net ? build(net, reg, PRT_DEVICE_CPU, 0) : NULL;
    if (cpu) {
        run_cpu(cpu, x, img, y32, z32);
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            prt_engine *e = build(net, reg, PRT_DEVICE_CUDA, cases[c].flags);
            if (!e)
                continue;
            printf("%s:\n", cases[c].name);
            CHECK(input_dtype(e, "MatMul") == cases[c].matmul_dtype);
            CHECK(input_dtype(e, "Conv") == cases[c].conv_dtype);
            memset(y, 0xff, sizeof y); /* NaN: unwritten elements show */
            memset(z, 0xff, sizeof z);
            run_gpu(e, x, img, y, z);
            check_close(y, y32, M * N, cases[c].tol, "products");
            check_close(z, z32, IC * HW * HW, cases[c].tol, "convs");
            prt_engine_destroy(e);
        }
    }
    prt_engine_destroy(cpu);
    prt_network_destroy(net);
    prt_registry_destroy(reg);
    return tu_finish("test_cuda_precision");
}
