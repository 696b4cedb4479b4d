/*
 * QuantFC on CUDA (ctest -L cuda; skipped without a GPU): the same network
 * (tests/quantfc_case.h) built for the CPU and for CUDA, run on the same x,
 * over the integer path (int8 with __dp4a where k % 4 == 0, int8 with an
 * odd k, uint8; per-tensor and per-channel w; float, int8 and uint8 y; more
 * than one launch's channels) and the float path. The integer path must
 * agree with the CPU to the bit (and with the kernel's arithmetic computed
 * here); the float path within rounding of the real result.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "quantfc_case.h"

#define NAME "test_cuda_quantfc"

static prt_engine *build_for(const qfc_case *c, prt_registry *reg, int32_t device)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL, *loaded = NULL;
    void *bytes = NULL;
    size_t size = 0;
    CHECK_OK(qfc_case_network(c, reg, &net));
    CHECK_OK(prt_builder_config_create(&cfg));
    CHECK_OK(prt_builder_config_set_device(cfg, device));
    if (net && cfg)
        CHECK_OK(prt_engine_build(net, cfg, reg, &e));
    if (e)
        CHECK_OK(prt_engine_serialize(e, &bytes, &size));
    if (bytes)
        CHECK_OK(prt_engine_deserialize(reg, bytes, size, &loaded));
    prt_free(bytes);
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return loaded;
}

/* Runs e on x (host memory) into y (host memory); on CUDA through device
 * copies. */
static void run(prt_engine *e, int32_t device, const void *x, size_t xbytes, void *y,
                size_t ybytes)
{
    prt_context *ctx = NULL;
    void *dx = NULL, *dy = NULL;
    const void *ax = x;
    void *ay = y;
    CHECK_OK(prt_context_create(e, &ctx));
    if (!ctx)
        return;
    if (device == PRT_DEVICE_CUDA) {
        CHECK(cudaMalloc(&dx, xbytes + 1) == cudaSuccess);
        CHECK(cudaMalloc(&dy, ybytes + 1) == cudaSuccess);
        CHECK(cudaMemcpy(dx, x, xbytes, cudaMemcpyHostToDevice) == cudaSuccess);
        CHECK(cudaMemset(dy, 0x5a, ybytes) == cudaSuccess);
        ax = dx;
        ay = dy;
    }
    CHECK_OK(prt_context_set_tensor_address(ctx, "x", (void *)ax));
    CHECK_OK(prt_context_set_tensor_address(ctx, "y", ay));
    CHECK_OK(prt_context_enqueue(ctx, NULL));
    if (device == PRT_DEVICE_CUDA) {
        CHECK(cudaDeviceSynchronize() == cudaSuccess);
        CHECK(cudaMemcpy(y, dy, ybytes, cudaMemcpyDeviceToHost) == cudaSuccess);
        cudaFree(dx);
        cudaFree(dy);
    }
    prt_context_destroy(ctx);
}

static void check_case(prt_registry *reg, qfc_case c, uint64_t seed)
{
    size_t xs = c.x_dtype == PRT_FLOAT32 ? 4 : 1, ys = c.y_dtype == PRT_FLOAT32 ? 4 : 1;
    size_t xbytes, ybytes;
    void *ycpu, *ygpu, *exact;
    double *real;
    prt_engine *ecpu, *egpu;
    int64_t bad = 0;
    if (qfc_case_fill(&c, seed) != 0) {
        CHECK(0);
        return;
    }
    xbytes = (size_t)(c.m * c.k) * xs;
    ybytes = (size_t)(c.m * c.n) * ys;
    ycpu = calloc(1, ybytes + 1);
    ygpu = calloc(1, ybytes + 1);
    exact = calloc(1, ybytes + 1);
    real = malloc(sizeof(double) * (size_t)(c.m * c.n));
    ecpu = build_for(&c, reg, PRT_DEVICE_CPU);
    egpu = build_for(&c, reg, PRT_DEVICE_CUDA);
    if (ycpu && ygpu && exact && real && ecpu && egpu) {
        run(ecpu, PRT_DEVICE_CPU, c.x, xbytes, ycpu, ybytes);
        run(egpu, PRT_DEVICE_CUDA, c.x, xbytes, ygpu, ybytes);
        qfc_case_real(&c, real);
        qfc_case_exact(&c, real, exact);
        if (c.x_dtype != PRT_FLOAT32) {
            bad += memcmp(ycpu, ygpu, ybytes) != 0;
            bad += memcmp(exact, ygpu, ybytes) != 0;
        } else {
            for (int64_t i = 0; i < c.m * c.n; i++) {
                double g = c.y_dtype == PRT_FLOAT32 ? ((float *)ygpu)[i]
                           : c.y_dtype == PRT_INT8  ? ((int8_t *)ygpu)[i]
                                                    : ((uint8_t *)ygpu)[i];
                double w = c.y_dtype == PRT_FLOAT32 ? real[i]
                           : c.y_dtype == PRT_INT8  ? ((int8_t *)exact)[i]
                                                    : ((uint8_t *)exact)[i];
                double tol = c.y_dtype == PRT_FLOAT32
                                 ? 1e-5 * (1.0 + fabs(w)) * sqrt((double)c.k)
                                 : 1.0;
                bad += fabs(g - w) > tol;
            }
        }
        CHECK(bad == 0);
        if (bad)
            fprintf(stderr, "  x %s y %s m %lld k %lld n %lld per_channel %d: mismatch\n",
                    prt_dtype_name(c.x_dtype), prt_dtype_name(c.y_dtype), (long long)c.m,
                    (long long)c.k, (long long)c.n, c.per_channel);
    } else {
        CHECK(0);
    }
    prt_engine_destroy(ecpu);
    prt_engine_destroy(egpu);
    free(ycpu);
    free(ygpu);
    free(exact);
    free(real);
    qfc_case_free(&c);
}

static void grid_case(qfc_case c, uint64_t seed, void *reg)
{
    check_case(reg, c, seed);
}

int main(void)
{
    /* k 64: __dp4a; k 17: bytes; n 600: three launches of channels. */
    static const int64_t shapes[][3] = {
        {1, 1, 1}, {3, 17, 5}, {8, 64, 33}, {5, 256, 600}};
    prt_registry *reg;
    tu_require_cuda(NAME);
    reg = tu_registry_with_plugins();
    if (!reg)
        return tu_finish(NAME);
    qfc_case_grid(shapes, sizeof shapes / sizeof shapes[0], 2, grid_case, reg);
    prt_registry_destroy(reg);
    return tu_finish(NAME);
}
