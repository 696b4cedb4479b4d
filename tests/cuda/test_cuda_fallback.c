/*
 * CPU fallback inside CUDA engines (ctest -L cuda;
 * prt_builder_config_set_cpu_fallback): an integer MatMul, which has no
 * CUDA kernel, runs on the CPU between CUDA layers.
 *  - without the option the build fails naming the layer and the option;
 *  - with it the layer's device is the CPU, the others CUDA, and a run on
 *    a stream computes what the host reference does (int32 exactly);
 *  - a network that is only the CPU layer (its input a network input, its
 *    output an engine output) runs right too;
 *  - prt_context_capture_graph refuses the engine naming the CPU layer,
 *    and an eager run after the refusal is still right.
 * The reference: Y = 2 * (|X| @ W) computed here on the host.
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "testutil.h"

#define M 5
#define K 7
#define NN 3

static prt_plugin *builtin_op(const char *op)
{
    const prt_plugin_creator *c = NULL;
    prt_field_collection none = {0, NULL};
    prt_plugin *p = NULL;
    if (prt_builtin_find_creator(op, "1", &c) != PRT_OK ||
        c->create(c, op, &none, PRT_PHASE_BUILD, &p) != PRT_OK)
        return NULL;
    return p;
}

static int32_t hx[M * K], hw[K * NN];

/* Adds layer `op` over inputs `in` named `name`; *out its output 0. */
static prt_status add(prt_network *net, const char *op, const int32_t *in, int32_t nb,
                      const char *name, int32_t *out)
{
    prt_plugin *p = builtin_op(op);
    int32_t layer;
    prt_status st =
        p ? prt_network_add_plugin(net, in, nb, NULL, 0, p, &layer) : PRT_ERR_INTERNAL;
    if (!st)
        st = prt_network_set_layer_name(net, layer, name);
    if (!st)
        st = prt_network_get_layer_output(net, layer, 0, out);
    return st;
}

/* whole 0: X -> Abs -> MatMul(W) -> Add(t, t) -> Y; whole 1: X -> MatMul(W)
 * -> Y. Built for CUDA with the fallback option `fallback`. */
static prt_status build(int whole, int fallback, prt_engine **out)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_dims dx = {2, {M, K}}, dw = {2, {K, NN}};
    int32_t x, w, t, in2[2];
    prt_status st = prt_network_create(&net);
    *out = NULL;
    if (!st)
        st = prt_network_add_input(net, "X", PRT_INT32, &dx, &x);
    if (!st)
        st = prt_network_add_constant(net, "W", PRT_INT32, &dw, hw, &w);
    t = x;
    if (!st && !whole)
        st = add(net, "Abs", &x, 1, "abs", &t);
    in2[0] = t;
    in2[1] = w;
    if (!st)
        st = add(net, "MatMul", in2, 2, "imatmul", &t);
    in2[0] = in2[1] = t;
    if (!st && !whole)
        st = add(net, "Add", in2, 2, "twice", &t);
    if (!st)
        st = prt_network_set_tensor_name(net, t, "Y");
    if (!st)
        st = prt_network_mark_output(net, t);
    if (!st)
        st = prt_builder_config_create(&cfg);
    if (!st)
        st = prt_builder_config_set_device(cfg, PRT_DEVICE_CUDA);
    if (!st)
        st = prt_builder_config_set_cpu_fallback(cfg, fallback);
    if (!st)
        st = prt_engine_build(net, cfg, NULL, out);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return st;
}

static void reference(int whole, int32_t *y)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < NN; j++) {
            int32_t s = 0;
            for (int k = 0; k < K; k++) {
                int32_t a = hx[i * K + k];
                s += (whole ? a : abs(a)) * hw[k * NN + j];
            }
            y[i * NN + j] = whole ? s : 2 * s;
        }
}

/* Runs e once on stream s (eagerly) and compares with the reference. */
static void run_check(prt_context *c, int whole, void *s, int32_t *dx, int32_t *dy)
{
    int32_t y[M * NN], want[M * NN];
    memset(y, 0x55, sizeof y);
    /* On s: a plain cudaMemset need not be ordered with a non-blocking stream. */
    CHECK(cudaMemsetAsync(dy, 0, sizeof y, (cudaStream_t)s) == cudaSuccess);
    CHECK_OK(prt_context_enqueue(c, s));
    CHECK(cudaStreamSynchronize((cudaStream_t)s) == cudaSuccess);
    CHECK(cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost) == cudaSuccess);
    reference(whole, want);
    CHECK(memcmp(y, want, sizeof y) == 0);
    (void)dx;
}

static void test_engine(int whole, void *s, int32_t *dx, int32_t *dy)
{
    prt_engine *e = NULL;
    prt_context *c = NULL;
    int32_t nl;
    CHECK_ERR(build(whole, 0, &e), PRT_ERR_UNSUPPORTED, "--allow-cpu-fallback");
    CHECK(strstr(prt_last_error(), "'imatmul'") != NULL);
    prt_engine_destroy(e);
    CHECK_OK(build(whole, 1, &e));
    if (!e)
        return;
    nl = prt_engine_layer_count(e);
    for (int32_t i = 0; i < nl; i++) {
        prt_layer_info li = {.struct_size = sizeof li};
        CHECK_OK(prt_engine_get_layer(e, i, &li));
        CHECK(li.device ==
              (strcmp(li.name, "imatmul") == 0 ? PRT_DEVICE_CPU : PRT_DEVICE_CUDA));
        if (strcmp(li.name, "imatmul") == 0)
            CHECK(li.copy_to_host_bytes == (int64_t)sizeof hx &&
                  li.copy_to_device_bytes == (int64_t)(M * NN * sizeof(int32_t)));
    }
    CHECK_OK(prt_context_create(e, &c));
    if (c) {
        CHECK_OK(prt_context_set_tensor_address(c, "X", dx));
        CHECK_OK(prt_context_set_tensor_address(c, "Y", dy));
        run_check(c, whole, s, dx, dy);
        CHECK_ERR(prt_context_capture_graph(c, s), PRT_ERR_UNSUPPORTED,
                  "layer 'imatmul'");
        CHECK(strstr(prt_last_error(), "runs on the CPU") != NULL);
        run_check(c, whole, s, dx, dy); /* the refusal left nothing behind */
        /* Other inputs, the same context. */
        for (int i = 0; i < M * K; i++)
            hx[i] = (i * 7919) % 23 - 11;
        CHECK(cudaMemcpy(dx, hx, sizeof hx, cudaMemcpyHostToDevice) == cudaSuccess);
        run_check(c, whole, s, dx, dy);
    }
    prt_context_destroy(c);
    prt_engine_destroy(e);
}

int main(void)
{
    void *s = NULL;
    int32_t *dx = NULL, *dy = NULL;
    tu_require_cuda("test_cuda_fallback");
    for (int i = 0; i < M * K; i++)
        hx[i] = (i * 37) % 19 - 9;
    for (int i = 0; i < K * NN; i++)
        hw[i] = (i * 11) % 7 - 3;
    CHECK_OK(prt_stream_create(PRT_DEVICE_CUDA, &s));
    if (s && cudaMalloc((void **)&dx, sizeof hx) == cudaSuccess &&
        cudaMalloc((void **)&dy, M * NN * sizeof(int32_t)) == cudaSuccess) {
        for (int whole = 0; whole < 2; whole++) {
            for (int i = 0; i < M * K; i++)
                hx[i] = (i * 37) % 19 - 9;
            CHECK(cudaMemcpy(dx, hx, sizeof hx, cudaMemcpyHostToDevice) == cudaSuccess);
            test_engine(whole, s, dx, dy);
        }
    }
    cudaFree(dx);
    cudaFree(dy);
    prt_stream_destroy(PRT_DEVICE_CUDA, s);
    return tu_finish("test_cuda_fallback");
}
