/*
 * Kernel layers on the GPU (plugin.h, "Kernel layers"): a plugin defined
 * here, with no library and no enqueue of its own, gives the builder two
 * launches, y = x a + m + d (int64 n, float a, int32 m, double d) and a
 * second pass through the layer's workspace with two null scratch
 * pointers (y += 1), as:
 *   - CUDA source the builder compiles with NVRTC,
 *   - PTX alone (the driver compiles it at load),
 *   - a cubin alone, and a cubin with PTX (NVRTC's output, compiled here).
 * Each engine: refused by a context without allow_embedded_kernels; run at
 * shapes from 1 to 100000 elements against the host's arithmetic; loaded
 * again from its bytes through an empty registry and run; shape changes
 * load no module again, and destroying the context unloads it; a CUDA
 * graph of it captured and replayed on new data. A launch description
 * one parameter short is refused at build, naming the kernel.
 * Without a GPU or NVRTC the test exits 77 (skipped).
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/kernel.h"
#include "kernel/kmod.h"
#include "cuda_testutil.h"

#define NAME "test_cuda_kernel_layers"
#define MAX_N 100000

static const char source[] =
    "extern \"C\" __global__ void kscale(const float *x, float *y, long long n, float "
    "a,\n"
    "                                   int m, double d)\n"
    "{\n"
    "    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = __fadd_rn(__fadd_rn(__fmul_rn(x[i], a), (float)m), "
    "(float)d);\n"
    "}\n"
    "extern \"C\" __global__ void kpost(float *y, float *ws, long long n, void *s0, void "
    "*s1)\n"
    "{\n"
    "    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "    if (i < n) { ws[i] = y[i] + 1.0f; y[i] = (s0 == 0 && s1 == 0) ? ws[i] : -1.0f; "
    "}\n"
    "}\n";

enum { CODE_SOURCE, CODE_PTX, CODE_CUBIN, CODE_BOTH, CODE_SHORT };
static const char *const code_names[] = {"NVRTC source", "PTX", "cubin", "cubin and PTX",
                                         "a short parameter list"};

/* NVRTC's cubin and PTX of `source` for this GPU, made once. */
static eng_kernel_code g_cubin, g_ptx;

static cudaStream_t g_stream;

typedef tcu_plugin kplugin; /* kind: the test's variant */

static const prt_plugin_vtable kvt;

static const char *k_name(const prt_plugin *p)
{
    (void)p;
    return "KScale";
}
static prt_status k_workspace(prt_plugin *p, const prt_dynamic_tensor_desc *in,
                              int32_t nb_in, const prt_dynamic_tensor_desc *out,
                              int32_t nb_out, int64_t *bytes)
{
    (void)p, (void)nb_in, (void)out, (void)nb_out;
    *bytes = in[0].max.d[0] * 4;
    return PRT_OK;
}

static prt_status k_get_kernel(prt_plugin *self, int32_t tactic,
                               const prt_dynamic_tensor_desc *in, int32_t nb_in,
                               const prt_dynamic_tensor_desc *out, int32_t nb_out,
                               const prt_dim_exprs *in_dims,
                               const prt_dim_exprs *out_dims, prt_expr_builder *e,
                               prt_kernel_desc *k)
{
    static prt_kernel_code code[2];
    static prt_kernel_arg a1[6], a2[5];
    static prt_kernel_launch launches[2];
    kplugin *p = (kplugin *)self;
    const prt_expr *n = in_dims[0].d[0], *one = e->constant(e, 1);
    const prt_expr *block = e->constant(e, 128);
    const prt_expr *grid = e->operation(e, PRT_DIM_CEIL_DIV, n, block);
    int32_t nc = 0;
    (void)tactic, (void)in, (void)nb_in, (void)out, (void)nb_out, (void)out_dims;
    if (p->kind == CODE_SOURCE) {
        code[nc++] =
            (prt_kernel_code){PRT_KERNEL_CUDA_SOURCE, 0, source, (int64_t)strlen(source)};
    } else {
        if (p->kind != CODE_PTX)
            code[nc++] = (prt_kernel_code){PRT_KERNEL_CUBIN, g_cubin.arch, g_cubin.data,
                                           g_cubin.size};
        if (p->kind == CODE_PTX || p->kind == CODE_BOTH || p->kind == CODE_SHORT)
            code[nc++] =
                (prt_kernel_code){PRT_KERNEL_PTX, g_ptx.arch, g_ptx.data, g_ptx.size};
    }
    a1[0] = (prt_kernel_arg){PRT_KARG_INPUT, 0, NULL, 0};
    a1[1] = (prt_kernel_arg){PRT_KARG_OUTPUT, 0, NULL, 0};
    a1[2] = (prt_kernel_arg){PRT_KARG_INT64, 0, n, 0};
    a1[3] = (prt_kernel_arg){PRT_KARG_FLOAT32, 0, NULL, 2.5};
    a1[4] = (prt_kernel_arg){PRT_KARG_INT32, 0, e->constant(e, 3), 0};
    a1[5] = (prt_kernel_arg){PRT_KARG_FLOAT64, 0, NULL, -0.25};
    a2[0] = (prt_kernel_arg){PRT_KARG_OUTPUT, 0, NULL, 0};
    a2[1] = (prt_kernel_arg){PRT_KARG_WORKSPACE, 0, NULL, 0};
    a2[2] = (prt_kernel_arg){PRT_KARG_INT64, 0, n, 0};
    a2[3] = (prt_kernel_arg){PRT_KARG_NULL, 0, NULL, 0};
    a2[4] = (prt_kernel_arg){PRT_KARG_NULL, 0, NULL, 0};
    for (int l = 0; l < 2; l++) {
        memset(&launches[l], 0, sizeof launches[l]);
        launches[l].entry = l ? "kpost" : "kscale";
        launches[l].grid[0] = grid;
        launches[l].grid[1] = launches[l].grid[2] = one;
        launches[l].block[0] = block;
        launches[l].block[1] = launches[l].block[2] = one;
        launches[l].nb_args = l ? 5 : 6;
        launches[l].args = l ? a2 : a1;
    }
    /* The second launch without its last scratch pointer. */
    if (p->kind == CODE_SHORT)
        launches[1].nb_args = 4;
    k->nb_code = nc;
    k->code = code;
    k->nb_launches = 2;
    k->launches = launches;
    return PRT_OK;
}

static prt_status k_enqueue(prt_plugin *self, const prt_tensor_desc *in,
                            const prt_tensor_desc *out, const void *const *inputs,
                            void *const *outputs, void *ws, int32_t device, void *stream)
{
    (void)self, (void)in, (void)out, (void)inputs, (void)outputs, (void)ws, (void)device;
    (void)stream;
    return base_error(PRT_ERR_INTERNAL, "KScale has no enqueue: its kernel layer runs");
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
                                        .get_workspace_size = k_workspace,
                                        .get_kernel = k_get_kernel};
static const prt_plugin_runtime kruntime = {.struct_size = sizeof kruntime,
                                            .abi_version = PRT_PLUGIN_ABI_VERSION,
                                            .enqueue = k_enqueue,
                                            .attach_to_context = tcu_attach,
                                            .get_fields_to_serialize = tcu_no_fields,
                                            .clone = tcu_clone,
                                            .destroy = tcu_destroy};
static const prt_plugin_vtable kvt = {sizeof kvt, PRT_PLUGIN_ABI_VERSION, &kcore, &kbuild,
                                      &kruntime};

static prt_status build(int32_t code, prt_engine **out)
{
    return tcu_build_1d(&kvt, code, 1000, MAX_N, 0, NULL, out);
}

typedef struct bufs {
    float *hx, *hy, *dx, *dy;
} bufs;

static void fill(tu_rng *r, float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)(tu_rng_uniform(r) * 200.0 - 100.0);
}

/* y against the host's arithmetic: each step rounded to float, as the
 * kernel's __f*_rn. */
static int check_y(const bufs *b, int64_t n, const char *what)
{
    for (int64_t i = 0; i < n; i++) {
        float want = b->hx[i] * 2.5f;
        want = want + 3.0f;
        want = want + (float)-0.25;
        want = want + 1.0f;
        if (b->hy[i] != want) {
            tu_failures++;
            fprintf(stderr, "FAIL %s: y[%lld] of %lld is %.9g, want %.9g\n", what,
                    (long long)i, (long long)n, b->hy[i], want);
            return 0;
        }
    }
    return 1;
}

static int run(prt_context *ctx, bufs *b, tu_rng *r, int64_t n, const char *what)
{
    prt_dims d = tu_dims(1, &n);
    fill(r, b->hx, n);
    CHECK_OK(prt_context_set_input_shape(ctx, "x", &d));
    if (!CUDA_OK(cudaMemcpy(b->dx, b->hx, (size_t)n * 4, cudaMemcpyHostToDevice)) ||
        !CUDA_OK(cudaMemset(b->dy, 0xff, (size_t)MAX_N * 4)))
        return 0;
    tu_checks++;
    if (prt_context_enqueue(ctx, g_stream) != PRT_OK) {
        tu_failures++;
        fprintf(stderr, "FAIL %s: enqueue at %lld: %s\n", what, (long long)n,
                prt_last_error());
        return 0;
    }
    if (!CUDA_OK(cudaStreamSynchronize(g_stream)) ||
        !CUDA_OK(cudaMemcpy(b->hy, b->dy, (size_t)n * 4, cudaMemcpyDeviceToHost)))
        return 0;
    tu_checks++;
    return check_y(b, n, what);
}

static void test_code(int32_t code, const prt_registry *bare, bufs *b)
{
    static const int64_t sizes[] = {1, 127, 128, 129, 5000, 65537, MAX_N, 3};
    const char *what = code_names[code];
    prt_engine *e = NULL, *loaded = NULL;
    prt_context *ctx = NULL, *refused = NULL;
    prt_context_options opts;
    void *bytes = NULL;
    size_t nbytes = 0;
    int64_t before, with;
    tu_rng r;
    int fails = tu_failures;
    tu_rng_seed(&r, 11 + (uint64_t)code);
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.allow_embedded_kernels = 1;
    if (code == CODE_SHORT) {
        CHECK_ERR(build(code, &e), PRT_ERR_INVALID_ARGUMENT,
                  "kernel 'kpost' (cubin for sm_");
        printf("%s: %s refused at build: %s\n", NAME, what, prt_last_error());
        prt_engine_destroy(e);
        return;
    }
    if (build(code, &e) != PRT_OK) {
        CHECK(!"build");
        fprintf(stderr, "  %s: %s\n", what, prt_last_error());
        return;
    }
    CHECK(prt_engine_get_nb_kernel_layers(e) == 1);
    CHECK_ERR(prt_context_create(e, &refused), PRT_ERR_UNSUPPORTED,
              "allow_embedded_kernels");
    before = kmod_live_modules();
    CHECK_OK(prt_context_create_with_options(e, &opts, &ctx));
    if (!ctx)
        goto done;
    with = kmod_live_modules();
    CHECK(with == before + 1);
    CHECK_OK(prt_context_set_tensor_address(ctx, "x", b->dx));
    CHECK_OK(prt_context_set_tensor_address(ctx, "y", b->dy));
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        run(ctx, b, &r, sizes[i], what);
    CHECK(kmod_live_modules() == with);
    /* A graph of the run at 4097 elements, replayed on new data. */
    {
        int64_t n = 4097;
        prt_dims d = tu_dims(1, &n);
        CHECK_OK(prt_context_set_input_shape(ctx, "x", &d));
        CHECK_OK(prt_context_capture_graph(ctx, g_stream));
        for (int rep = 0; rep < 3; rep++) {
            fill(&r, b->hx, n);
            if (!CUDA_OK(cudaMemcpy(b->dx, b->hx, (size_t)n * 4, cudaMemcpyHostToDevice)))
                break;
            CHECK_OK(prt_context_launch_graph(ctx, g_stream));
            if (!CUDA_OK(cudaStreamSynchronize(g_stream)) ||
                !CUDA_OK(cudaMemcpy(b->hy, b->dy, (size_t)n * 4, cudaMemcpyDeviceToHost)))
                break;
            tu_checks++;
            check_y(b, n, "graph replay");
        }
    }
    prt_context_destroy(ctx);
    ctx = NULL;
    CHECK(kmod_live_modules() == before);
    /* From its bytes, through a registry that has nothing. */
    CHECK_OK(prt_engine_serialize(e, &bytes, &nbytes));
    CHECK_OK(prt_engine_deserialize(bare, bytes, nbytes, &loaded));
    if (loaded) {
        CHECK_OK(prt_context_create_with_options(loaded, &opts, &ctx));
        if (ctx) {
            CHECK_OK(prt_context_set_tensor_address(ctx, "x", b->dx));
            CHECK_OK(prt_context_set_tensor_address(ctx, "y", b->dy));
            run(ctx, b, &r, 777, "reloaded");
        }
    }
    printf("%s: %s: %zu shapes, a graph and a reload: %s\n", NAME, what,
           sizeof sizes / sizeof sizes[0], tu_failures == fails ? "ok" : "FAILED");
done:
    prt_free(bytes);
    prt_context_destroy(ctx);
    prt_context_destroy(refused);
    prt_engine_destroy(loaded);
    prt_engine_destroy(e);
}

int main(void)
{
    prt_registry *bare = NULL;
    bufs b;
    int32_t arch = 0;
    prt_status st;
    tu_require_cuda(NAME);
    tu_watchdog(NAME, 600);
    memset(&b, 0, sizeof b);
    if (kmod_device_arch(&arch) != PRT_OK) {
        printf("%s: skipped: %s\n", NAME, prt_last_error());
        return TU_SKIP;
    }
    st = kernel_nvrtc_compile(source, (int64_t)strlen(source), NULL, arch, "kscale",
                              &g_cubin, &g_ptx);
    if (st == PRT_ERR_UNSUPPORTED) {
        printf("%s: skipped: %s\n", NAME, prt_last_error());
        return TU_SKIP;
    }
    CHECK_OK(st);
    CHECK(g_cubin.size > 0 && g_ptx.size > 0);
    if (st || !g_ptx.size || prt_registry_create(&bare) != PRT_OK ||
        !CUDA_OK(cudaStreamCreate(&g_stream)))
        return tu_finish(NAME);
    b.hx = malloc((size_t)MAX_N * 4);
    b.hy = malloc((size_t)MAX_N * 4);
    if (b.hx && b.hy && CUDA_OK(cudaMalloc((void **)&b.dx, (size_t)MAX_N * 4)) &&
        CUDA_OK(cudaMalloc((void **)&b.dy, (size_t)MAX_N * 4)))
        for (int32_t c = CODE_SOURCE; c <= CODE_SHORT; c++)
            test_code(c, bare, &b);
    cudaFree(b.dx);
    cudaFree(b.dy);
    free(b.hx);
    free(b.hy);
    base_free(g_cubin.data);
    base_free(g_ptx.data);
    cudaStreamDestroy(g_stream);
    prt_registry_destroy(bare);
    return tu_finish(NAME);
}
