/*
 * The tuner times kernel-layer tactics as their kernels (kernel_tune.c),
 * y = 2 x + 1 over a 1-D float tensor:
 *   - KERNELS: a plugin with no usable enqueue lists three tactics, each
 *     only a kernel from CUDA source: 1 slow (a dependent loop), 2 fast,
 *     3 fast but wrong (2 x + 2). Tactic 1 is listed first, so it is the
 *     reference: the engine must pick 2 (3 disagrees and is rejected), run
 *     it as a kernel layer and give the right y. NVRTC runs once (one
 *     source); built again through the timing cache file, the second build
 *     takes tactic and code from the cache and runs NVRTC not once.
 *   - MIXED_KERNEL_FAST: tactic 0 is enqueue (a host round trip, slow and
 *     the reference), tactic 1 the fast kernel: the kernel wins.
 *   - MIXED_ENQUEUE_FAST: the same enqueue, and tactic 1 the slow kernel
 *     (longer than the round trip): enqueue wins, no kernel layer.
 * Each engine's output is checked against the host's arithmetic. Without a
 * GPU or NVRTC the test exits 77 (skipped).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/kernel.h"
#include "kernel/kmod.h"
#include "cuda_testutil.h"

#define NAME "test_cuda_kernel_tune"
#define N_OPT 4096
#define MAX_N 65536
/* Iterations of the slow kernel's dependent loop: ~8 ms a thread on an
 * H100, far above the fast kernel and a host round trip of 16 KiB even on
 * a host busy with other work (at ~0.5 ms a loaded host's round trip
 * could outlast it). */
#define SPIN (1 << 22)

static const char source[] =
    "extern \"C\" __global__ void kt_slow(const float *x, float *y, long long n, int "
    "spin)\n"
    "{\n"
    "    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "    if (i >= n) return;\n"
    "    float v = x[i], acc = 0.0f;\n"
    "    for (int k = 0; k < spin; k++) acc = acc * 0.5f + v;\n"
    "    y[i] = v * 2.0f + 1.0f + (acc - acc);\n"
    "}\n"
    "extern \"C\" __global__ void kt_fast(const float *x, float *y, long long n, int "
    "spin)\n"
    "{\n"
    "    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = x[i] * 2.0f + 1.0f;\n"
    "}\n"
    "extern \"C\" __global__ void kt_wrong(const float *x, float *y, long long n, int "
    "spin)\n"
    "{\n"
    "    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = x[i] * 2.0f + 2.0f;\n"
    "}\n";

enum { KERNELS, MIXED_KERNEL_FAST, MIXED_ENQUEUE_FAST };
static const char *const mode_names[] = {"kernels only", "enqueue and a fast kernel",
                                         "enqueue and a slow kernel"};
enum { T_ENQUEUE = 0, T_SLOW = 1, T_FAST = 2, T_WRONG = 3 };

typedef tcu_plugin kplugin; /* kind: the test's variant */

static const prt_plugin_vtable kvt;

static const char *k_name(const prt_plugin *p)
{
    (void)p;
    return "KTune";
}
static prt_status k_tactics(prt_plugin *self, int32_t *tactics, int32_t cap,
                            int32_t *count)
{
    const kplugin *p = (const kplugin *)self;
    static const int32_t kernels[] = {T_SLOW, T_FAST, T_WRONG};
    const int32_t mixed[] = {T_ENQUEUE, p->kind == MIXED_KERNEL_FAST ? T_FAST : T_SLOW};
    const int32_t *list = p->kind == KERNELS ? kernels : mixed;
    *count = p->kind == KERNELS ? 3 : 2;
    for (int32_t i = 0; i < *count && i < cap; i++)
        tactics[i] = list[i];
    return PRT_OK;
}

static prt_status k_get_kernel(prt_plugin *self, int32_t tactic,
                               const prt_dynamic_tensor_desc *in, int32_t nb_in,
                               const prt_dynamic_tensor_desc *out, int32_t nb_out,
                               const prt_dim_exprs *in_dims,
                               const prt_dim_exprs *out_dims, prt_expr_builder *e,
                               prt_kernel_desc *k)
{
    static prt_kernel_code code;
    static prt_kernel_arg args[4];
    static prt_kernel_launch launch;
    const prt_expr *n = in_dims[0].d[0], *one = e->constant(e, 1);
    const prt_expr *block = e->constant(e, 128);
    (void)self, (void)in, (void)nb_in, (void)out, (void)nb_out, (void)out_dims;
    if (tactic == T_ENQUEUE)
        return PRT_ERR_UNSUPPORTED;
    code = (prt_kernel_code){PRT_KERNEL_CUDA_SOURCE, 0, source, (int64_t)strlen(source)};
    args[0] = (prt_kernel_arg){PRT_KARG_INPUT, 0, NULL, 0};
    args[1] = (prt_kernel_arg){PRT_KARG_OUTPUT, 0, NULL, 0};
    args[2] = (prt_kernel_arg){PRT_KARG_INT64, 0, n, 0};
    args[3] = (prt_kernel_arg){PRT_KARG_INT32, 0, e->constant(e, SPIN), 0};
    memset(&launch, 0, sizeof launch);
    launch.entry = tactic == T_SLOW   ? "kt_slow"
                   : tactic == T_FAST ? "kt_fast"
                                      : "kt_wrong";
    launch.grid[0] = e->operation(e, PRT_DIM_CEIL_DIV, n, block);
    launch.grid[1] = launch.grid[2] = one;
    launch.block[0] = block;
    launch.block[1] = launch.block[2] = one;
    launch.nb_args = 4;
    launch.args = args;
    k->nb_code = 1;
    k->code = &code;
    k->nb_launches = 1;
    k->launches = &launch;
    return PRT_OK;
}

/* Tactic 0 in the mixed modes: y = 2 x + 1 by a round trip through the
 * host (slow, and right). Every other tactic has only its kernel. */
static int32_t g_tactic_of_last_set;
static prt_status k_set_tactic(prt_plugin *self, int32_t tactic)
{
    (void)self;
    g_tactic_of_last_set = tactic;
    return PRT_OK;
}
static prt_status k_enqueue(prt_plugin *self, const prt_tensor_desc *in,
                            const prt_tensor_desc *out, const void *const *inputs,
                            void *const *outputs, void *ws, int32_t device, void *stream)
{
    const kplugin *p = (const kplugin *)self;
    int64_t n = in[0].dims.d[0];
    float *h;
    (void)out, (void)ws;
    if (p->kind == KERNELS || device != PRT_DEVICE_CUDA ||
        g_tactic_of_last_set != T_ENQUEUE)
        return base_error(PRT_ERR_INTERNAL,
                          "KTune's enqueue runs only tactic 0 on CUDA (asked for %d)",
                          (int)g_tactic_of_last_set);
    h = malloc((size_t)n * 4 + 4);
    if (!h ||
        cudaMemcpyAsync(h, inputs[0], (size_t)n * 4, cudaMemcpyDeviceToHost, stream) ||
        cudaStreamSynchronize(stream)) {
        free(h);
        return base_error(PRT_ERR_INTERNAL, "KTune: copy to the host failed");
    }
    for (int64_t i = 0; i < n; i++)
        h[i] = h[i] * 2.0f + 1.0f;
    if (cudaMemcpyAsync(outputs[0], h, (size_t)n * 4, cudaMemcpyHostToDevice, stream) ||
        cudaStreamSynchronize(stream)) {
        free(h);
        return base_error(PRT_ERR_INTERNAL, "KTune: copy to the device failed");
    }
    free(h);
    return PRT_OK;
}

static const prt_plugin_core kcore = {sizeof kcore,  PRT_PLUGIN_ABI_VERSION,
                                      k_name,        tcu_version,
                                      tcu_namespace, tcu_cuda_only};
static const prt_plugin_build kbuild = {.struct_size = sizeof kbuild,
                                        .abi_version = PRT_PLUGIN_ABI_VERSION,
                                        .nb_outputs = tcu_one_output,
                                        .get_output_dtypes = tcu_dtype_of_input,
                                        .get_output_shapes = tcu_shape_of_input,
                                        .supports_format_combination =
                                            tcu_supports_f32_1d,
                                        .get_valid_tactics = k_tactics,
                                        .get_kernel = k_get_kernel};
static const prt_plugin_runtime kruntime = {.struct_size = sizeof kruntime,
                                            .abi_version = PRT_PLUGIN_ABI_VERSION,
                                            .set_tactic = k_set_tactic,
                                            .enqueue = k_enqueue,
                                            .attach_to_context = tcu_attach,
                                            .get_fields_to_serialize = tcu_no_fields,
                                            .clone = tcu_clone,
                                            .destroy = tcu_destroy};
static const prt_plugin_vtable kvt = {sizeof kvt, PRT_PLUGIN_ABI_VERSION, &kcore, &kbuild,
                                      &kruntime};

static prt_status build(int32_t mode, const char *cache, prt_engine **out)
{
    return tcu_build_1d(&kvt, mode, N_OPT, MAX_N, 1, cache, out);
}

/* Runs e at n elements of random x and checks y = 2 x + 1. */
static void run_check(prt_engine *e, int64_t n, const char *what)
{
    prt_context_options opts;
    prt_context *ctx = NULL;
    prt_dims d = tu_dims(1, &n);
    float *hx = malloc((size_t)n * 4), *hy = malloc((size_t)n * 4), *dx = NULL,
          *dy = NULL;
    cudaStream_t stream = NULL;
    tu_rng r;
    tu_rng_seed(&r, (uint64_t)n);
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.allow_embedded_kernels = 1;
    CHECK(hx && hy);
    if (!hx || !hy || !CUDA_OK(cudaStreamCreate(&stream)) ||
        !CUDA_OK(cudaMalloc((void **)&dx, (size_t)n * 4)) ||
        !CUDA_OK(cudaMalloc((void **)&dy, (size_t)n * 4)))
        goto done;
    for (int64_t i = 0; i < n; i++)
        hx[i] = (float)(tu_rng_uniform(&r) * 200.0 - 100.0);
    CHECK_OK(prt_context_create_with_options(e, &opts, &ctx));
    if (!ctx)
        goto done;
    g_tactic_of_last_set = T_ENQUEUE; /* what the engine's plugin was told */
    CHECK_OK(prt_context_set_input_shape(ctx, "x", &d));
    CHECK_OK(prt_context_set_tensor_address(ctx, "x", dx));
    CHECK_OK(prt_context_set_tensor_address(ctx, "y", dy));
    if (!CUDA_OK(cudaMemcpy(dx, hx, (size_t)n * 4, cudaMemcpyHostToDevice)) ||
        !CUDA_OK(cudaMemset(dy, 0xff, (size_t)n * 4)))
        goto done;
    CHECK_OK(prt_context_enqueue(ctx, stream));
    if (!CUDA_OK(cudaStreamSynchronize(stream)) ||
        !CUDA_OK(cudaMemcpy(hy, dy, (size_t)n * 4, cudaMemcpyDeviceToHost)))
        goto done;
    tu_checks++;
    for (int64_t i = 0; i < n; i++)
        if (hy[i] != hx[i] * 2.0f + 1.0f) {
            tu_failures++;
            fprintf(stderr, "FAIL %s: y[%lld] is %.9g, want %.9g\n", what, (long long)i,
                    hy[i], hx[i] * 2.0f + 1.0f);
            break;
        }
done:
    prt_context_destroy(ctx);
    cudaFree(dx);
    cudaFree(dy);
    if (stream)
        cudaStreamDestroy(stream);
    free(hx);
    free(hy);
}

/* Builds in `mode` and checks the engine chose `want` (a kernel layer or
 * not) and computes y. */
static void test_mode(int32_t mode, const char *cache, int32_t want, int want_kernel)
{
    prt_engine *e = NULL;
    prt_layer_info info;
    prt_status st = build(mode, cache, &e);
    CHECK_OK(st);
    if (st) {
        fprintf(stderr, "  %s: %s\n", mode_names[mode], prt_last_error());
        return;
    }
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    CHECK_OK(prt_engine_get_layer(e, 0, &info));
    CHECK(info.tactic == want);
    CHECK(info.kernel == want_kernel);
    CHECK(prt_engine_get_nb_kernel_layers(e) == want_kernel);
    if (info.tactic != want || info.kernel != want_kernel)
        fprintf(stderr, "FAIL %s: tactic %d (kernel %d), want %d (kernel %d)\n",
                mode_names[mode], (int)info.tactic, (int)info.kernel, (int)want,
                want_kernel);
    run_check(e, N_OPT, mode_names[mode]);
    run_check(e, 777, mode_names[mode]);
    printf("%s: %s: tactic %d chosen%s\n", NAME, mode_names[mode], (int)info.tactic,
           info.kernel ? ", a kernel layer" : "");
    prt_engine_destroy(e);
}

int main(void)
{
    int32_t arch = 0;
    char cache[256];
    int64_t runs;
    tu_require_cuda(NAME);
    tu_watchdog(NAME, 600);
    if (kmod_device_arch(&arch) != PRT_OK) {
        printf("%s: skipped: %s\n", NAME, prt_last_error());
        return TU_SKIP;
    }
    {
        eng_kernel_code cub, ptx;
        prt_status st = kernel_nvrtc_compile(source, (int64_t)strlen(source), NULL, arch,
                                             "kt", &cub, &ptx);
        if (st == PRT_ERR_UNSUPPORTED) {
            printf("%s: skipped: %s\n", NAME, prt_last_error());
            return TU_SKIP;
        }
        CHECK_OK(st);
        base_free(cub.data);
        base_free(ptx.data);
    }
    snprintf(cache, sizeof cache, "%s/prt_kernel_tune_%d.tc",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    remove(cache);
    /* The three tactics' kernels share one source: compiled once while
     * tuning, and the chosen one's, asked again after tuning, comes from
     * the cache too. */
    runs = kernel_nvrtc_compiles();
    test_mode(KERNELS, cache, T_FAST, 1);
    CHECK(kernel_nvrtc_compiles() == runs + 1);
    /* Again through the saved cache: no NVRTC, no timing, same choice. */
    runs = kernel_nvrtc_compiles();
    test_mode(KERNELS, cache, T_FAST, 1);
    CHECK(kernel_nvrtc_compiles() == runs);
    remove(cache);
    test_mode(MIXED_KERNEL_FAST, NULL, T_FAST, 1);
    test_mode(MIXED_ENQUEUE_FAST, NULL, T_ENQUEUE, 0);
    return tu_finish(NAME);
}
