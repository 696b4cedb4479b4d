/*
 * Kernel layers (issue 26): what running GPU code from the engine costs.
 *
 *   - launch overhead: an engine whose one layer is a kernel layer copying
 *     one float (plg_bench_copy1, CUDA source the builder compiles with
 *     NVRTC), prt_context_enqueue timed per run (BENCH_LOOP: GPU time per
 *     run and host time per call over many queued back to back), against a
 *     direct cuLaunchKernel of the same source compiled by NVRTC for this
 *     GPU. Target: plugrt <= direct + 1 us (host time per call).
 *   - cold start: from the engine's bytes to its first finished run
 *     (deserialize through a registry with no plugin library, a context
 *     with allow_embedded_kernels, which loads the module, bind, enqueue,
 *     synchronize), median of COLD_RUNS, for the same layer with cubin +
 *     PTX (the builder's NVRTC output) and with PTX only (compiled here for
 *     compute_XX, so the driver compiles it at load); and the NonZero
 *     NVRTC backend's 128 x 128 engine (cubin + PTX) beside the compiled
 *     NonZero plugin's. The driver's JIT cache is off (CUDA_CACHE_DISABLE=1,
 *     set before CUDA starts), so every PTX load compiles.
 *
 * The copy plugin is defined here and registered in this process only; the
 * engines reload without it. Lines and @result records as bench.h; "us"
 * of a launch case is the GPU time per run, host_us the host's per call.
 * The NonZero kernel layer against the compiled plugin, CUB and PyTorch at
 * the large sizes is in bench_nonzero ("plugrt_nvrtc").
 */
#include "bench.h"

#include <cuda.h>
#include <nvrtc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define COLD_RUNS 15

static const char copy_src[] =
    "extern \"C\" __global__ void plg_bench_copy1(const float *x, float *y)\n"
    "{\n"
    "    y[0] = x[0];\n"
    "}\n";

static char *g_ptx; /* copy_src as PTX for compute_XX (main) */

/* ---- the copy plugin: y[1] = x[1] as a kernel layer ----------------------- */

typedef struct kplug {
    prt_plugin base;
    int32_t ptx_only; /* field "ptx": 1 gives PTX alone */
    prt_field f;
    prt_field_collection fc;
    prt_kernel_code code;
    prt_kernel_arg args[2];
    prt_kernel_launch launch;
} kplug;

static const char *kp_name(const prt_plugin *p)
{
    (void)p;
    return "KernelCopy1";
}
static const char *kp_version(const prt_plugin *p)
{
    (void)p;
    return "1";
}
static const char *kp_ns(const prt_plugin *p)
{
    (void)p;
    return "bench";
}
static uint32_t kp_devices(const prt_plugin *p)
{
    (void)p;
    return 1u << PRT_DEVICE_CUDA;
}
static int32_t kp_nb_outputs(const prt_plugin *p)
{
    (void)p;
    return 1;
}
static prt_status kp_dtypes(prt_plugin *p, int32_t *out, int32_t nb_out,
                            const int32_t *in, int32_t nb_in)
{
    (void)p, (void)nb_out, (void)nb_in;
    out[0] = in[0];
    return PRT_OK;
}
static prt_status kp_shapes(prt_plugin *p, const prt_dim_exprs *in, int32_t nb_in,
                            const prt_dim_exprs *si, int32_t nsi, prt_dim_exprs *out,
                            int32_t nb_out, prt_expr_builder *e)
{
    (void)p, (void)nb_in, (void)si, (void)nsi, (void)nb_out, (void)e;
    out[0] = in[0];
    return PRT_OK;
}
static int32_t kp_supports(prt_plugin *p, int32_t pos, const prt_dynamic_tensor_desc *io,
                           int32_t nb_in, int32_t nb_out)
{
    (void)p, (void)pos, (void)nb_in, (void)nb_out;
    return io[pos].desc.dtype == PRT_FLOAT32 && io[pos].desc.format == PRT_FORMAT_LINEAR;
}
static prt_status kp_get_kernel(prt_plugin *self, int32_t tactic,
                                const prt_dynamic_tensor_desc *in, int32_t nb_in,
                                const prt_dynamic_tensor_desc *out, int32_t nb_out,
                                const prt_dim_exprs *in_dims,
                                const prt_dim_exprs *out_dims, prt_expr_builder *e,
                                prt_kernel_desc *k)
{
    kplug *p = (kplug *)self;
    const prt_expr *one = e->constant(e, 1);
    (void)tactic, (void)in, (void)nb_in, (void)out, (void)nb_out, (void)in_dims;
    (void)out_dims;
    memset(&p->code, 0, sizeof p->code);
    p->code.kind = p->ptx_only ? PRT_KERNEL_PTX : PRT_KERNEL_CUDA_SOURCE;
    p->code.data = p->ptx_only ? (const void *)g_ptx : (const void *)copy_src;
    p->code.size = (int64_t)strlen((const char *)p->code.data);
    memset(p->args, 0, sizeof p->args);
    p->args[0].kind = PRT_KARG_INPUT;
    p->args[1].kind = PRT_KARG_OUTPUT;
    memset(&p->launch, 0, sizeof p->launch);
    p->launch.entry = "plg_bench_copy1";
    for (int d = 0; d < 3; d++)
        p->launch.grid[d] = p->launch.block[d] = one;
    p->launch.nb_args = 2;
    p->launch.args = p->args;
    k->nb_code = 1;
    k->code = &p->code;
    k->nb_launches = 1;
    k->launches = &p->launch;
    return PRT_OK;
}
static prt_status kp_set_tactic(prt_plugin *p, int32_t t)
{
    (void)p, (void)t;
    return PRT_OK;
}
static prt_status kp_shape_change(prt_plugin *p, const prt_tensor_desc *in, int32_t ni,
                                  const prt_tensor_desc *out, int32_t no)
{
    (void)p, (void)in, (void)ni, (void)out, (void)no;
    return PRT_OK;
}
/* Never the engine's way (it runs the kernel layer); right all the same. */
static prt_status kp_enqueue(prt_plugin *p, const prt_tensor_desc *id,
                             const prt_tensor_desc *od, const void *const *in,
                             void *const *out, void *ws, int32_t dev, void *stream)
{
    (void)p, (void)id, (void)od, (void)ws, (void)dev;
    return cudaMemcpyAsync(out[0], in[0], 4, cudaMemcpyDeviceToDevice,
                           (cudaStream_t)stream) == cudaSuccess
               ? PRT_OK
               : PRT_ERR_PLUGIN;
}
static prt_plugin *kp_clone(const prt_plugin *self)
{
    kplug *p = (kplug *)malloc(sizeof *p);
    if (p)
        memcpy(p, self, sizeof *p);
    return p ? &p->base : NULL;
}
static prt_plugin *kp_attach(prt_plugin *self, prt_plugin_resources *r)
{
    (void)r;
    return kp_clone(self);
}
static const prt_field_collection *kp_fields(prt_plugin *self)
{
    kplug *p = (kplug *)self;
    p->f.name = "ptx";
    p->f.data = &p->ptx_only;
    p->f.type = PRT_FIELD_INT32;
    p->f.length = 1;
    p->fc.nb_fields = 1;
    p->fc.fields = &p->f;
    return &p->fc;
}
static void kp_destroy(prt_plugin *p)
{
    free(p);
}

static const prt_plugin_core kp_core = {sizeof(prt_plugin_core),
                                        PRT_PLUGIN_ABI_VERSION,
                                        kp_name,
                                        kp_version,
                                        kp_ns,
                                        kp_devices};
static const prt_plugin_build kp_build = {sizeof(prt_plugin_build),
                                          PRT_PLUGIN_ABI_VERSION,
                                          kp_nb_outputs,
                                          kp_dtypes,
                                          kp_shapes,
                                          kp_supports,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL, /* capture_safe */
                                          kp_get_kernel};
static const prt_plugin_runtime kp_runtime = {sizeof(prt_plugin_runtime),
                                              PRT_PLUGIN_ABI_VERSION,
                                              kp_set_tactic,
                                              kp_shape_change,
                                              kp_enqueue,
                                              kp_attach,
                                              kp_fields,
                                              kp_clone,
                                              kp_destroy};
static const prt_plugin_vtable kp_vt = {sizeof(prt_plugin_vtable), PRT_PLUGIN_ABI_VERSION,
                                        &kp_core, &kp_build, &kp_runtime};

static prt_status kp_create(const prt_plugin_creator *c, const char *layer,
                            const prt_field_collection *fc, int32_t phase,
                            prt_plugin **out)
{
    kplug *p = (kplug *)calloc(1, sizeof *p);
    (void)c, (void)layer, (void)phase;
    if (!p)
        return PRT_ERR_OUT_OF_MEMORY;
    p->base.vt = &kp_vt;
    for (int32_t i = 0; fc && i < fc->nb_fields; i++)
        if (fc->fields[i].name && strcmp(fc->fields[i].name, "ptx") == 0 &&
            fc->fields[i].type == PRT_FIELD_INT32 && fc->fields[i].length == 1)
            p->ptx_only = *(const int32_t *)fc->fields[i].data;
    *out = &p->base;
    return PRT_OK;
}

static const prt_field_schema kp_schema[] = {
    {"ptx", PRT_FIELD_INT32, 1, "1: PTX only; 0: CUDA source (cubin + PTX)"}};
static const prt_plugin_creator kp_creator = {sizeof(prt_plugin_creator),
                                              PRT_PLUGIN_ABI_VERSION,
                                              "KernelCopy1",
                                              "1",
                                              "bench",
                                              1,
                                              kp_schema,
                                              kp_create,
                                              NULL};

/* ---- NVRTC here: the direct launch's cubin, the PTX-only code ------------- */

static char *nvrtc_compile(const char *src, const char *arch_opt, int cubin, size_t *size)
{
    nvrtcProgram prog;
    const char *opts[1] = {arch_opt};
    size_t n = 0;
    char *out;
    if (nvrtcCreateProgram(&prog, src, "copy1", 0, NULL, NULL) != NVRTC_SUCCESS)
        return NULL;
    if (nvrtcCompileProgram(prog, 1, opts) != NVRTC_SUCCESS ||
        (cubin ? nvrtcGetCUBINSize(prog, &n) : nvrtcGetPTXSize(prog, &n)) !=
            NVRTC_SUCCESS) {
        nvrtcDestroyProgram(&prog);
        return NULL;
    }
    out = (char *)bench_host_malloc(n + 1);
    if ((cubin ? nvrtcGetCUBIN(prog, out) : nvrtcGetPTX(prog, out)) != NVRTC_SUCCESS) {
        free(out);
        out = NULL;
    } else {
        out[n] = 0;
        *size = n;
    }
    nvrtcDestroyProgram(&prog);
    return out;
}

/* ---- engines ----------------------------------------------------------------- */

/* A one-layer CUDA engine x[dims] -> plugin(fields) -> outputs, as bytes. */
static void *engine_bytes(prt_registry *reg, const char *ns, const char *name,
                          const prt_field *f, int32_t nf, const prt_dims *dims,
                          const char *const *outs, int32_t nb_out, size_t *size)
{
    const prt_plugin_creator *c = NULL;
    prt_field_collection fc = {nf, f};
    prt_plugin *p = NULL;
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL;
    void *bytes = NULL;
    int32_t x, layer, t;
    prt_status st = prt_registry_find_creator(reg, ns, name, "1", &c);
    if (!st)
        st = c->create(c, name, &fc, PRT_PHASE_BUILD, &p);
    if (!st)
        st = prt_network_create(&net);
    if (!st)
        st = prt_network_add_input(net, "x", PRT_FLOAT32, dims, &x);
    if (!st)
        st = prt_network_add_plugin(net, &x, 1, NULL, 0, p, &layer);
    if (!st)
        p = NULL;
    for (int32_t i = 0; !st && i < nb_out; i++) {
        st = prt_network_get_layer_output(net, layer, i, &t);
        if (!st)
            st = prt_network_set_tensor_name(net, t, outs[i]);
        if (!st)
            st = prt_network_mark_output(net, t);
    }
    if (!st)
        st = prt_builder_config_create(&cfg);
    if (!st)
        st = prt_builder_config_set_device(cfg, PRT_DEVICE_CUDA);
    if (!st)
        st = prt_engine_build(net, cfg, reg, &e);
    if (!st)
        st = prt_engine_serialize(e, &bytes, size);
    if (st)
        printf("  building %s failed: %s\n", name, prt_last_error());
    if (p)
        p->vt->runtime->destroy(p);
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return st ? NULL : bytes;
}

static prt_status allowed_context(const prt_engine *e, prt_context **out)
{
    prt_context_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.allow_embedded_kernels = 1;
    return prt_context_create_with_options(e, &o, out);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e6 * (double)ts.tv_sec + 1e-3 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Bytes -> first finished run, COLD_RUNS times; the median and the fastest.
 * x and the outputs are device buffers big enough for the engine. */
static void cold_start(bench_env *env, const char *id, const char *impl,
                       const prt_registry *reg, const void *bytes, size_t size,
                       const char *const *names, void *const *bufs, int nb,
                       const char *note)
{
    double us[COLD_RUNS];
    bench_timing t;
    for (int r = 0; r < COLD_RUNS; r++) {
        prt_engine *e = NULL;
        prt_context *c = NULL;
        prt_status st;
        double t0;
        BENCH_CUDA(cudaStreamSynchronize(env->stream));
        t0 = now_us();
        st = prt_engine_deserialize(reg, bytes, size, &e);
        if (!st)
            st = allowed_context(e, &c);
        for (int i = 0; !st && i < nb; i++)
            st = prt_context_set_tensor_address(c, names[i], bufs[i]);
        if (!st)
            st = prt_context_enqueue(c, env->stream);
        if (!st)
            BENCH_CUDA(cudaStreamSynchronize(env->stream));
        us[r] = now_us() - t0;
        if (st) {
            printf("  %s: %s\n", id, prt_last_error());
            bench_result(id, impl, "error", NULL, NULL, 0, "a cold run failed (above)");
            env->failures++;
            prt_context_destroy(c);
            prt_engine_destroy(e);
            return;
        }
        prt_context_destroy(c);
        prt_engine_destroy(e);
    }
    qsort(us, COLD_RUNS, sizeof us[0], cmp_double);
    memset(&t, 0, sizeof t);
    t.us = us[COLD_RUNS / 2];
    t.min_us = us[0];
    t.iters = COLD_RUNS;
    t.sets = 1;
    t.method = BENCH_ISOLATED;
    bench_result(id, impl, "ok", &t, NULL, 0, note);
}

/* ---- launch overhead ----------------------------------------------------------- */

typedef struct direct {
    bench_env *env;
    CUfunction fn;
    void *params[2];
    prt_context *ctx;
} direct;

static int run_direct(void *user, int set)
{
    direct *d = (direct *)user;
    (void)set;
    return cuLaunchKernel(d->fn, 1, 1, 1, 1, 1, 1, 0, (CUstream)d->env->stream, d->params,
                          NULL) != CUDA_SUCCESS;
}

static int run_layer(void *user, int set)
{
    direct *d = (direct *)user;
    (void)set;
    return bench_enqueue(d->env, d->ctx);
}

int main(void)
{
    static const char *const one_out[1] = {"y"};
    static const char *const copy_io[2] = {"x", "y"};
    static const char *const nz_io[3] = {"x", "y", "k"};
    bench_env env;
    prt_registry *kreg = NULL, *bare = NULL;
    float *x = NULL, *y = NULL, hx = 3.5f, hy = 0;
    int32_t *ny = NULL;
    int64_t *nk = NULL;
    char arch[48], note[160];
    size_t cubin_size = 0, ptx_size = 0, src_n = 0, ptx_n = 0;
    void *src_bytes = NULL, *ptx_bytes = NULL;
    char *cubin;
    int major = 0, minor = 0, rc;
    /* Before CUDA starts: every PTX load compiles (no JIT cache). */
    setenv("CUDA_CACHE_DISABLE", "1", 1);
    rc = bench_init(&env, "bench_kernels");
    if (rc)
        return rc;
    BENCH_CUDA(
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, env.device));
    BENCH_CUDA(
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, env.device));
    if (prt_registry_create(&kreg) != PRT_OK || prt_registry_create(&bare) != PRT_OK ||
        prt_registry_add_creator(kreg, &kp_creator) != PRT_OK) {
        printf("bench_kernels: registries: %s\n", prt_last_error());
        return 1;
    }
    snprintf(arch, sizeof arch, "--gpu-architecture=compute_%d%d", major, minor);
    g_ptx = nvrtc_compile(copy_src, arch, 0, &ptx_size);
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", major, minor);
    cubin = nvrtc_compile(copy_src, arch, 1, &cubin_size);
    if (!g_ptx || !cubin) {
        printf("bench_kernels: NVRTC cannot compile the copy kernel here\n");
        return 1;
    }
    x = (float *)bench_malloc(4);
    y = (float *)bench_malloc(4);
    ny = (int32_t *)bench_malloc(8 * 128 * 128);
    nk = (int64_t *)bench_malloc(8);
    BENCH_CUDA(cudaMemcpy(x, &hx, 4, cudaMemcpyHostToDevice));

    /* Launch overhead: the engine's enqueue against cuLaunchKernel. */
    {
        int64_t one = 1;
        int32_t zero = 0;
        prt_dims d;
        prt_field f = {"ptx", &zero, PRT_FIELD_INT32, 1};
        prt_engine *e = NULL;
        CUmodule mod;
        direct dr;
        bench_timing tl, td;
        const char *id = "kernel layer 1-element launch";
        bench_dims(&d, 1, &one);
        src_bytes =
            engine_bytes(kreg, "bench", "KernelCopy1", &f, 1, &d, one_out, 1, &src_n);
        zero = 1;
        ptx_bytes =
            engine_bytes(kreg, "bench", "KernelCopy1", &f, 1, &d, one_out, 1, &ptx_n);
        memset(&dr, 0, sizeof dr);
        dr.env = &env;
        dr.params[0] = &x;
        dr.params[1] = &y;
        if (!src_bytes || prt_engine_deserialize(bare, src_bytes, src_n, &e) != PRT_OK ||
            allowed_context(e, &dr.ctx) != PRT_OK ||
            prt_context_set_tensor_address(dr.ctx, "x", x) != PRT_OK ||
            prt_context_set_tensor_address(dr.ctx, "y", y) != PRT_OK ||
            cuModuleLoadData(&mod, cubin) != CUDA_SUCCESS ||
            cuModuleGetFunction(&dr.fn, mod, "plg_bench_copy1") != CUDA_SUCCESS) {
            printf("  %s: setup failed: %s\n", id, prt_last_error());
            env.failures++;
        } else if (run_layer(&dr, 0) ||
                   cudaStreamSynchronize(env.stream) != cudaSuccess ||
                   cudaMemcpy(&hy, y, 4, cudaMemcpyDeviceToHost) != cudaSuccess ||
                   hy != hx) {
            bench_result(id, "plugrt", "wrong", NULL, NULL, 8, "y != x after one run");
            env.failures++;
        } else if (bench_time(&env, run_layer, &dr, 1, BENCH_LOOP, &tl) == 0 &&
                   bench_time(&env, run_direct, &dr, 1, BENCH_LOOP, &td) == 0) {
            snprintf(note, sizeof note,
                     "host %.2f us a call vs %.2f direct: %+.2f us (target <= +1)",
                     tl.host_us, td.host_us, tl.host_us - td.host_us);
            bench_result(id, "plugrt", "ok", &tl, NULL, 8, note);
            bench_result(id, "cuLaunchKernel", "ok", &td, NULL, 8,
                         "the same source, NVRTC cubin, launched directly");
            printf("launch overhead: %s\n", note);
        } else {
            env.failures++;
        }
        prt_context_destroy(dr.ctx);
        prt_engine_destroy(e);
    }

    /* Cold start: cubin + PTX against PTX only, then NonZero. */
    if (src_bytes && ptx_bytes) {
        void *bufs[2] = {x, y};
        cold_start(&env, "kernel layer cold start (1-element copy)", "cubin+ptx", bare,
                   src_bytes, src_n, copy_io, bufs, 2, "module from the cubin");
        cold_start(&env, "kernel layer cold start (1-element copy)", "ptx", bare,
                   ptx_bytes, ptx_n, copy_io, bufs, 2,
                   "driver JIT of the PTX, cache off");
    }
    {
        int64_t d2[2] = {128, 128};
        int32_t row = 1;
        prt_dims d;
        prt_field f[2] = {{"rowOrder", &row, PRT_FIELD_INT32, 1},
                          {"backend", "nvrtc", PRT_FIELD_CHAR, 5}};
        void *bufs[3] = {ny, ny, nk};
        void *nv, *cu;
        size_t nv_n = 0, cu_n = 0;
        float *nx = (float *)bench_malloc(4 * 128 * 128);
        bufs[0] = nx;
        bench_fill_sparse(nx, 128 * 128, 1234, 0.5, env.stream);
        bench_dims(&d, 2, d2);
        nv = engine_bytes(env.reg, "", "NonZeroPlugin", f, 2, &d, nz_io + 1, 2, &nv_n);
        cu = engine_bytes(env.reg, "", "NonZeroPlugin", f, 1, &d, nz_io + 1, 2, &cu_n);
        if (nv)
            cold_start(&env, "nonzero 128x128 cold start", "nvrtc cubin+ptx", bare, nv,
                       nv_n, nz_io, bufs, 3, "kernel layer, no plugin library");
        if (cu)
            cold_start(&env, "nonzero 128x128 cold start", "plugin", env.reg, cu, cu_n,
                       nz_io, bufs, 3, "compiled plugin (library already loaded)");
        if (!nv || !cu)
            env.failures++;
        prt_free(nv);
        prt_free(cu);
        BENCH_CUDA(cudaFree(nx));
    }
    prt_free(src_bytes);
    prt_free(ptx_bytes);
    free(g_ptx);
    free(cubin);
    BENCH_CUDA(cudaFree(x));
    BENCH_CUDA(cudaFree(y));
    BENCH_CUDA(cudaFree(ny));
    BENCH_CUDA(cudaFree(nk));
    prt_registry_destroy(bare);
    prt_registry_destroy(kreg);
    return bench_finish(&env);
}
