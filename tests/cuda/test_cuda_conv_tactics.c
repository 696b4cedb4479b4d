/*
 * Conv's tactics on CUDA (nn_cuda.c, cudnn_cuda.c; ctest -L cuda): Convs of
 * many shapes (1x1, 3x3 stride 1 and 2, depthwise, grouped, dilated, 1-D
 * and 3-D, with bias and a fused activation), float32 and float16, built
 * for CUDA with autotuning while PRT_CUDA_CONV_IMPL forces each
 * implementation in turn (own kernel, cuBLAS, cuDNN), each engine
 * serialized and loaded back, its output compared with the CPU engine's
 * (float32 within 1e-4, float16 within 2e-2, relative and absolute). The
 * layer's tactic name says the implementation forced ran. Every case runs
 * twice: as it is, and with a residual input z (field residual: Y =
 * act(conv + b + z)), which every implementation adds where it stores y or
 * in its bias-and-activation pass. Then: a rebuild
 * through a timing cache file takes the tactic from the cache and times
 * nothing; built with TF32 allowed, no layer falls back from its cuDNN
 * tactic for want of workspace; a cuDNN Conv is captured into a CUDA graph
 * and replayed on new data. Without a GPU the test exits 77 (skipped); without cuDNN its
 * cuDNN cases are skipped with a line saying so.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "testutil.h"

#define NAME "test_cuda_conv_tactics"

typedef struct conv_case {
    const char *what;
    int32_t ns;            /* spatial dims */
    int64_t N, C, M, H, W; /* W used for ns >= 2, H for ns 3 as depth too */
    int32_t k, s, d, pad, group, bias;
    const char *act; /* NULL: none */
} conv_case;

static const conv_case cases[] = {
    {"1x1", 2, 2, 16, 24, 9, 9, 1, 1, 1, 0, 1, 1, NULL},
    {"1x1 relu", 2, 3, 8, 8, 7, 5, 1, 1, 1, 0, 1, 1, "Relu"},
    {"3x3 s1", 2, 2, 8, 16, 10, 10, 3, 1, 1, 1, 1, 1, "Relu"},
    {"3x3 s2", 2, 2, 12, 8, 11, 9, 3, 2, 1, 1, 1, 0, NULL},
    {"depthwise 3x3", 2, 2, 16, 16, 12, 12, 3, 1, 1, 1, 16, 1, "Relu"},
    {"depthwise 5x5 s2", 2, 1, 8, 8, 13, 13, 5, 2, 1, 2, 8, 1, NULL},
    {"grouped 3x3", 2, 2, 12, 8, 8, 8, 3, 1, 1, 1, 4, 1, NULL},
    {"dilated 3x3", 2, 1, 6, 10, 14, 14, 3, 1, 2, 2, 1, 1, "Relu"},
    {"1-D k5", 1, 2, 8, 12, 1, 40, 5, 1, 1, 2, 1, 1, NULL},
    {"3-D 3x3x3", 3, 1, 4, 6, 6, 6, 3, 1, 1, 1, 1, 1, "Relu"},
};
#define NB_CASES ((int)(sizeof cases / sizeof cases[0]))

static int have_cudnn(void)
{
    void *h = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    if (h)
        dlclose(h);
    return h != NULL;
}

/* Log lines of the builds, for the timing-cache check. */
static char logbuf[1 << 16];
static size_t loglen;
static void logger(void *user, int32_t sev, const char *msg)
{
    (void)user, (void)sev;
    if (loglen + strlen(msg) + 2 < sizeof logbuf)
        loglen += (size_t)snprintf(logbuf + loglen, sizeof logbuf - loglen, "%s\n", msg);
}

typedef struct tensors {
    prt_dims xd, wd, yd;
    int64_t nx, nw, ny;
    float *x, *w, *b; /* host, float32 values (rounded to half for float16) */
    float *z;         /* the residual input, ny values; used when g_res */
} tensors;

/* 1: the Conv has a residual input z (field residual). */
static int g_res;

static void spatial(const conv_case *c, int64_t *sp)
{
    sp[0] = c->ns == 1 ? c->W : c->H;
    sp[1] = c->ns == 3 ? c->H : c->W;
    sp[2] = c->W;
}

static int64_t out_size(const conv_case *c, int64_t in)
{
    return (in + 2 * c->pad - c->d * (c->k - 1) - 1) / c->s + 1;
}

static void make_tensors(const conv_case *c, int32_t dtype, uint64_t seed, tensors *t)
{
    int64_t sp[3];
    tu_rng r;
    tu_rng_seed(&r, seed);
    spatial(c, sp);
    t->xd.nb_dims = t->wd.nb_dims = t->yd.nb_dims = 2 + c->ns;
    t->xd.d[0] = t->yd.d[0] = c->N;
    t->xd.d[1] = c->C;
    t->wd.d[0] = t->yd.d[1] = c->M;
    t->wd.d[1] = c->C / c->group;
    for (int32_t i = 0; i < c->ns; i++) {
        t->xd.d[2 + i] = sp[i];
        t->wd.d[2 + i] = c->k;
        t->yd.d[2 + i] = out_size(c, sp[i]);
    }
    t->nx = tu_volume(&t->xd);
    t->nw = tu_volume(&t->wd);
    t->ny = tu_volume(&t->yd);
    t->x = malloc(sizeof(float) * (size_t)t->nx);
    t->w = malloc(sizeof(float) * (size_t)t->nw);
    t->b = malloc(sizeof(float) * (size_t)c->M);
    t->z = malloc(sizeof(float) * (size_t)t->ny);
    for (int64_t i = 0; i < t->nx; i++)
        t->x[i] = (float)(tu_rng_uniform(&r) * 2 - 1);
    for (int64_t i = 0; i < t->nw; i++)
        t->w[i] = (float)(tu_rng_uniform(&r) * 2 - 1);
    for (int64_t i = 0; i < c->M; i++)
        t->b[i] = (float)(tu_rng_uniform(&r) - 0.5);
    for (int64_t i = 0; i < t->ny; i++)
        t->z[i] = (float)(tu_rng_uniform(&r) * 2 - 1);
    if (dtype == PRT_FLOAT16) {
        for (int64_t i = 0; i < t->ny; i++)
            t->z[i] = prt_half_to_float(prt_float_to_half(t->z[i]));
        for (int64_t i = 0; i < t->nx; i++)
            t->x[i] = prt_half_to_float(prt_float_to_half(t->x[i]));
        for (int64_t i = 0; i < t->nw; i++)
            t->w[i] = prt_half_to_float(prt_float_to_half(t->w[i]));
        for (int64_t i = 0; i < c->M; i++)
            t->b[i] = prt_half_to_float(prt_float_to_half(t->b[i]));
    }
}

static void free_tensors(tensors *t)
{
    free(t->x);
    free(t->w);
    free(t->b);
    free(t->z);
}

/* count values of dtype from floats (a new block; free()). */
static void *as_dtype(const float *v, int64_t count, int32_t dtype)
{
    void *p = malloc((size_t)count * prt_dtype_size(dtype));
    for (int64_t i = 0; p && i < count; i++) {
        if (dtype == PRT_FLOAT32)
            ((float *)p)[i] = v[i];
        else
            ((uint16_t *)p)[i] = prt_float_to_half(v[i]);
    }
    return p;
}

/* Whether build() autotunes (test_default turns it off). */
static int g_tune = 1;
/* The builder's precision flags (PRT_PRECISION_TF32 in test_tf32). */
static uint32_t g_precision;

/* x -> Conv "conv" (constant W and B) -> y, built for `device` (autotuned
 * unless g_tune is 0, through `cache` when not NULL), serialized and loaded
 * back. */
static prt_engine *build(const conv_case *c, int32_t dtype, const tensors *t,
                         int32_t device, const char *cache)
{
    int32_t pads[6], ks[3], ss[3], ds[3], in[4], l, y, group = c->group, one = 1;
    int32_t nin;
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *built = NULL, *e = NULL;
    const prt_plugin_creator *cr = NULL;
    prt_plugin *p = NULL;
    prt_field f[8];
    int32_t nf = 0;
    prt_dims bd = {1, {c->M}};
    void *wv = as_dtype(t->w, t->nw, dtype), *bv = as_dtype(t->b, c->M, dtype);
    void *bytes = NULL;
    size_t size = 0;
    prt_status st;
    for (int32_t i = 0; i < c->ns; i++) {
        pads[i] = pads[c->ns + i] = c->pad;
        ks[i] = c->k;
        ss[i] = c->s;
        ds[i] = c->d;
    }
    f[nf++] = (prt_field){"group", &group, PRT_FIELD_INT32, 1};
    f[nf++] = (prt_field){"pads", pads, PRT_FIELD_INT32, 2 * c->ns};
    f[nf++] = (prt_field){"kernel_shape", ks, PRT_FIELD_INT32, c->ns};
    f[nf++] = (prt_field){"strides", ss, PRT_FIELD_INT32, c->ns};
    f[nf++] = (prt_field){"dilations", ds, PRT_FIELD_INT32, c->ns};
    if (c->act)
        f[nf++] =
            (prt_field){"activation", c->act, PRT_FIELD_CHAR, (int64_t)strlen(c->act)};
    if (g_res)
        f[nf++] = (prt_field){"residual", &one, PRT_FIELD_INT32, 1};
    nin = c->bias ? 3 : 2;
    st = prt_network_create(&net);
    if (!st)
        st = prt_network_add_input(net, "x", dtype, &t->xd, &in[0]);
    if (!st)
        st = prt_network_add_constant(net, "w", dtype, &t->wd, wv, &in[1]);
    if (!st && c->bias)
        st = prt_network_add_constant(net, "b", dtype, &bd, bv, &in[2]);
    if (!st && g_res)
        st = prt_network_add_input(net, "z", dtype, &t->yd, &in[nin++]);
    if (!st)
        st = prt_builtin_find_creator("Conv", "1", &cr);
    if (!st) {
        prt_field_collection fc = {nf, f};
        st = cr->create(cr, "conv", &fc, PRT_PHASE_BUILD, &p);
    }
    if (!st)
        st = prt_network_add_plugin(net, in, nin, NULL, 0, p, &l);
    if (!st)
        st = prt_network_set_layer_name(net, l, "conv");
    if (!st)
        st = prt_network_get_layer_output(net, l, 0, &y);
    if (!st)
        st = prt_network_set_tensor_name(net, y, "y");
    if (!st)
        st = prt_network_mark_output(net, y);
    if (!st)
        st = prt_builder_config_create(&cfg);
    if (!st)
        st = prt_builder_config_set_device(cfg, device);
    if (!st)
        st = prt_builder_config_set_autotune(cfg, g_tune);
    if (!st && g_precision && device == PRT_DEVICE_CUDA)
        st = prt_builder_config_set_precision_flags(cfg, g_precision);
    if (!st && cache)
        st = prt_builder_config_set_timing_cache_file(cfg, cache);
    if (!st)
        st = prt_engine_build(net, cfg, NULL, &built);
    if (!st)
        st = prt_engine_serialize(built, &bytes, &size);
    if (!st)
        st = prt_engine_deserialize(NULL, bytes, size, &e);
    if (st)
        fprintf(stderr, "%s: %s (%s): %s\n", NAME, c->what, prt_dtype_name(dtype),
                prt_last_error());
    CHECK_OK(st);
    prt_free(bytes);
    prt_engine_destroy(built);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    free(wv);
    free(bv);
    return e;
}

/* y (floats) of e on x; on CUDA through device memory, by a graph
 * capture and replay when `graph`. 0 on success. */
static int run(prt_engine *e, int32_t device, int32_t dtype, const tensors *t, float *y,
               int graph)
{
    size_t es = prt_dtype_size(dtype);
    void *hx = as_dtype(t->x, t->nx, dtype), *hy = malloc((size_t)t->ny * es);
    void *hz = as_dtype(t->z, t->ny, dtype);
    void *dx = hx, *dy = hy, *dz = hz, *stream = NULL;
    prt_context *ctx = NULL;
    int bad = !hx || !hy || !hz || prt_context_create(e, &ctx) != PRT_OK;
    if (!bad && device == PRT_DEVICE_CUDA) {
        bad = cudaMalloc(&dz, (size_t)t->ny * es) != cudaSuccess ||
              cudaMemcpy(dz, hz, (size_t)t->ny * es, cudaMemcpyHostToDevice) !=
                  cudaSuccess ||
              cudaMalloc(&dx, (size_t)t->nx * es) != cudaSuccess ||
              cudaMalloc(&dy, (size_t)t->ny * es) != cudaSuccess ||
              cudaStreamCreate((cudaStream_t *)&stream) != cudaSuccess ||
              cudaMemcpy(dx, hx, (size_t)t->nx * es, cudaMemcpyHostToDevice) !=
                  cudaSuccess ||
              cudaMemset(dy, 0, (size_t)t->ny * es) != cudaSuccess ||
              cudaDeviceSynchronize() != cudaSuccess;
    }
    bad = bad || prt_context_set_tensor_address(ctx, "x", dx) != PRT_OK ||
          prt_context_set_tensor_address(ctx, "y", dy) != PRT_OK ||
          (g_res && prt_context_set_tensor_address(ctx, "z", dz) != PRT_OK);
    if (!bad && graph)
        bad = prt_context_capture_graph(ctx, stream) != PRT_OK ||
              prt_context_launch_graph(ctx, stream) != PRT_OK;
    else if (!bad)
        bad = prt_context_enqueue(ctx, stream) != PRT_OK;
    if (!bad && device == PRT_DEVICE_CUDA)
        bad =
            cudaStreamSynchronize((cudaStream_t)stream) != cudaSuccess ||
            cudaMemcpy(hy, dy, (size_t)t->ny * es, cudaMemcpyDeviceToHost) != cudaSuccess;
    if (bad)
        fprintf(stderr, "%s: run failed: %s\n", NAME, prt_last_error());
    for (int64_t i = 0; !bad && i < t->ny; i++)
        y[i] = dtype == PRT_FLOAT32 ? ((float *)hy)[i]
                                    : prt_half_to_float(((uint16_t *)hy)[i]);
    prt_context_destroy(ctx);
    if (device == PRT_DEVICE_CUDA) {
        cudaFree(dx);
        cudaFree(dy);
        cudaFree(dz);
        if (stream)
            cudaStreamDestroy((cudaStream_t)stream);
    }
    free(hx);
    free(hy);
    free(hz);
    return bad;
}

/* got against want within tol (relative and absolute); 0 if they agree. */
static int compare(const float *got, const float *want, int64_t n, double tol,
                   const char *what, const char *impl, int32_t dtype)
{
    for (int64_t i = 0; i < n; i++)
        if (!(fabs((double)got[i] - want[i]) <= tol * (1.0 + fabs((double)want[i])))) {
            fprintf(stderr, "%s: %s (%s, %s): y[%lld] = %g, the CPU's %g\n", NAME, what,
                    impl, prt_dtype_name(dtype), (long long)i, (double)got[i],
                    (double)want[i]);
            return 1;
        }
    return 0;
}

static const char *layer_tactic(const prt_engine *e, int32_t *tactic)
{
    prt_layer_info li = {.struct_size = sizeof li};
    if (prt_engine_get_layer(e, 0, &li) != PRT_OK)
        return "";
    *tactic = li.tactic;
    return li.tactic_name;
}

/* Every case, every dtype, every implementation forced. */
static void test_cases(int cudnn)
{
    static const char *const impls[] = {"own", "cublas", "cudnn", "gemm"};
    for (int ci = 0; ci < 2 * NB_CASES; ci++)
        for (int di = 0; di < 2; di++) {
            const conv_case *c = &cases[ci % NB_CASES];
            const int32_t dtype = di ? PRT_FLOAT16 : PRT_FLOAT32;
            const double tol = di ? 2e-2 : 1e-4;
            tensors t;
            prt_engine *cpu;
            float *want, *got;
            g_res = ci >= NB_CASES;
            make_tensors(c, dtype, 100 + (uint64_t)ci, &t);
            want = malloc(sizeof(float) * (size_t)t.ny);
            got = malloc(sizeof(float) * (size_t)t.ny);
            unsetenv("PRT_CUDA_CONV_IMPL");
            cpu = build(c, dtype, &t, PRT_DEVICE_CPU, NULL);
            CHECK(cpu && !run(cpu, PRT_DEVICE_CPU, dtype, &t, want, 0));
            for (int ii = 0; cpu && ii < 4; ii++) {
                prt_engine *e;
                int32_t tactic = -1;
                const char *name;
                if (ii == 2 && !cudnn)
                    continue;
                setenv("PRT_CUDA_CONV_IMPL", impls[ii], 1);
                e = build(c, dtype, &t, PRT_DEVICE_CUDA, NULL);
                CHECK(e != NULL);
                if (!e)
                    continue;
                name = layer_tactic(e, &tactic);
                /* cuDNN takes every case here (symmetric pads, 1-3 spatial
                 * dims, float32 and float16); the implicit GEMM the 2-D
                 * ones with 8 rows and taps a group; cuBLAS the pointwise float32 and
                 * float16 ones (tactic 0 then); the own kernel the rest. */
                if (ii == 2)
                    CHECK(strncmp(name, "cuDNN ", 6) == 0);
                else if (ii == 3) /* 2-D with 8+ rows and taps a group */
                    CHECK(c->ns == 2 && c->M / c->group >= 8 &&
                                  c->C / c->group * c->k * c->k >= 8
                              ? strcmp(name, "plugrt's implicit GEMM") == 0
                              : tactic == 0);
                else if (ii == 0)
                    CHECK(tactic == 0 || strcmp(name, "plugrt's direct kernel") == 0);
                else
                    CHECK(tactic == 0);
                CHECK(!run(e, PRT_DEVICE_CUDA, dtype, &t, got, 0));
                if (compare(got, want, t.ny, tol, c->what,
                            g_res ? (ii == 0   ? "own, z"
                                     : ii == 1 ? "cublas, z"
                                     : ii == 2 ? "cudnn, z"
                                               : "gemm, z")
                                  : impls[ii],
                            dtype))
                    tu_fail(__FILE__, __LINE__, "CUDA Conv differs from the CPU's");
                prt_engine_destroy(e);
            }
            unsetenv("PRT_CUDA_CONV_IMPL");
            prt_engine_destroy(cpu);
            free(want);
            free(got);
            free_tensors(&t);
        }
    g_res = 0;
}

/* Built twice through one timing cache file: the second build takes the
 * same tactic from the cache (the log says so) and is right. */
static void test_timing_cache(int cudnn)
{
    const conv_case *c = &cases[2];
    char path[] = "/tmp/prt_conv_tc_XXXXXX";
    int fd = mkstemp(path);
    tensors t;
    prt_engine *a, *b, *cpu;
    int32_t ta = -1, tb = -2;
    float *want, *got;
    if (fd < 0) {
        tu_fail(__FILE__, __LINE__, "mkstemp");
        return;
    }
    close(fd);
    remove(path); /* the first build writes it */
    make_tensors(c, PRT_FLOAT32, 7, &t);
    want = malloc(sizeof(float) * (size_t)t.ny);
    got = malloc(sizeof(float) * (size_t)t.ny);
    cpu = build(c, PRT_FLOAT32, &t, PRT_DEVICE_CPU, NULL);
    a = build(c, PRT_FLOAT32, &t, PRT_DEVICE_CUDA, path);
    loglen = 0;
    logbuf[0] = '\0';
    prt_set_logger(logger, NULL, PRT_SEV_VERBOSE);
    b = build(c, PRT_FLOAT32, &t, PRT_DEVICE_CUDA, path);
    prt_set_logger(NULL, NULL, PRT_SEV_WARNING);
    CHECK(a && b && cpu);
    if (a && b && cpu) {
        layer_tactic(a, &ta);
        layer_tactic(b, &tb);
        CHECK(ta == tb);
        /* Without cuDNN the 3x3 Conv has one tactic: nothing to time or
         * cache. */
        CHECK(!cudnn || (strstr(logbuf, "layer 'conv': tactic ") &&
                         strstr(logbuf, "from the timing cache")));
        /* Nothing timed: no candidate's time in the second build's log. */
        CHECK(!strstr(logbuf, "layer 'conv': candidate "));
        CHECK(!run(cpu, PRT_DEVICE_CPU, PRT_FLOAT32, &t, want, 0));
        CHECK(!run(b, PRT_DEVICE_CUDA, PRT_FLOAT32, &t, got, 0));
        CHECK(!compare(got, want, t.ny, 1e-4, c->what, "cached", PRT_FLOAT32));
    }
    prt_engine_destroy(a);
    prt_engine_destroy(b);
    prt_engine_destroy(cpu);
    remove(path);
    free(want);
    free(got);
    free_tensors(&t);
}

/* Without --autotune the builder takes the first listed tactic: by
 * default cuDNN's own first choice for a convolution neither pointwise nor
 * grouped (where cuDNN is installed), tactic 0 (cuBLAS or the direct
 * kernel) for the rest; with PRT_CUDA_CONV_DNN_FIRST=0 (off) tactic 0 for
 * every one. Every one right, float32 and float16. */
static void test_default(int cudnn)
{
    g_tune = 0;
    unsetenv("PRT_CUDA_CONV_IMPL");
    for (int off = 0; off < 2; off++) {
        if (off)
            setenv("PRT_CUDA_CONV_DNN_FIRST", "0", 1);
        else
            unsetenv("PRT_CUDA_CONV_DNN_FIRST");
        for (int ci = 0; ci < NB_CASES; ci++)
            for (int di = 0; di < 2; di++) {
                const conv_case *c = &cases[ci];
                const int32_t dtype = di ? PRT_FLOAT16 : PRT_FLOAT32;
                const int pointwise = c->k == 1 && c->s == 1 && c->pad == 0;
                const int dnn = !off && cudnn && c->group == 1 && !pointwise;
                tensors t;
                prt_engine *cpu, *e;
                int32_t tactic = -1;
                float *want, *got;
                make_tensors(c, dtype, 300 + (uint64_t)ci, &t);
                want = malloc(sizeof(float) * (size_t)t.ny);
                got = malloc(sizeof(float) * (size_t)t.ny);
                cpu = build(c, dtype, &t, PRT_DEVICE_CPU, NULL);
                e = build(c, dtype, &t, PRT_DEVICE_CUDA, NULL);
                CHECK(cpu && e);
                if (cpu && e) {
                    const char *name = layer_tactic(e, &tactic);
                    if (dnn && strncmp(name, "cuDNN ", 6) != 0)
                        fprintf(stderr, "%s: %s (%s): untuned tactic %s, not cuDNN's\n",
                                NAME, c->what, prt_dtype_name(dtype), name);
                    CHECK(dnn ? strncmp(name, "cuDNN ", 6) == 0 : tactic == 0);
                    CHECK(!run(cpu, PRT_DEVICE_CPU, dtype, &t, want, 0));
                    CHECK(!run(e, PRT_DEVICE_CUDA, dtype, &t, got, 0));
                    CHECK(!compare(got, want, t.ny, di ? 2e-2 : 1e-4, c->what, "untuned",
                                   dtype));
                }
                prt_engine_destroy(e);
                prt_engine_destroy(cpu);
                free(want);
                free(got);
                free_tensors(&t);
            }
    }
    unsetenv("PRT_CUDA_CONV_DNN_FIRST");
    g_tune = 1;
}

/* Built with TF32 allowed, untuned and tuned: the cuDNN tactic chosen is
 * listed, sized and timed under TF32 math, so its workspace is what the run
 * asks for and no layer falls back to the direct kernel ("cannot run" in
 * the log). The float32 cases and deeplab_w8's stride-2 3x3 convolutions
 * at batch 8, whose TF32 algorithm needs more workspace than the strict
 * one; y within 1e-2 of the CPU's (a 10-bit mantissa's products). */
static void test_tf32(int cudnn)
{
    static const conv_case big[] = {
        {"stride-2 3x3 32->48", 2, 8, 32, 48, 64, 64, 3, 2, 1, 1, 1, 1, "Relu"},
        {"stride-2 3x3 48->64", 2, 8, 48, 64, 32, 32, 3, 2, 1, 1, 1, 1, "Relu"},
    };
    const int nb = (int)(sizeof big / sizeof big[0]);
    g_precision = PRT_PRECISION_TF32;
    unsetenv("PRT_CUDA_CONV_IMPL");
    for (int tune = 0; tune < 2; tune++)
        for (int ci = 0; ci < NB_CASES + nb; ci++) {
            const conv_case *c = ci < NB_CASES ? &cases[ci] : &big[ci - NB_CASES];
            const int pointwise = c->k == 1 && c->s == 1 && c->pad == 0;
            tensors t;
            prt_engine *cpu, *e;
            int32_t tactic = -1;
            float *want, *got;
            g_tune = tune;
            make_tensors(c, PRT_FLOAT32, 500 + (uint64_t)ci, &t);
            want = malloc(sizeof(float) * (size_t)t.ny);
            got = malloc(sizeof(float) * (size_t)t.ny);
            cpu = build(c, PRT_FLOAT32, &t, PRT_DEVICE_CPU, NULL);
            loglen = 0;
            logbuf[0] = '\0';
            prt_set_logger(logger, NULL, PRT_SEV_WARNING);
            e = build(c, PRT_FLOAT32, &t, PRT_DEVICE_CUDA, NULL);
            CHECK(cpu && e);
            if (cpu && e) {
                const char *name = layer_tactic(e, &tactic);
                if (!tune && cudnn && c->group == 1 && !pointwise)
                    CHECK(strncmp(name, "cuDNN ", 6) == 0);
                CHECK(!run(cpu, PRT_DEVICE_CPU, PRT_FLOAT32, &t, want, 0));
                CHECK(!run(e, PRT_DEVICE_CUDA, PRT_FLOAT32, &t, got, 0));
                CHECK(!compare(got, want, t.ny, 1e-2, c->what,
                               tune ? "tf32 tuned" : "tf32", PRT_FLOAT32));
                if (strstr(logbuf, "cannot run"))
                    fprintf(stderr, "%s: %s (tf32, %s, tactic %s): %s", NAME, c->what,
                            tune ? "tuned" : "untuned", name, logbuf);
                CHECK(!strstr(logbuf, "cannot run"));
            }
            prt_set_logger(NULL, NULL, PRT_SEV_WARNING);
            prt_engine_destroy(e);
            prt_engine_destroy(cpu);
            free(want);
            free(got);
            free_tensors(&t);
        }
    g_precision = 0;
    g_tune = 1;
}

/* A cuDNN Conv recorded into a CUDA graph and replayed: the CPU's y. */
static void test_graph(void)
{
    const conv_case *c = &cases[4];
    tensors t;
    prt_engine *e, *cpu;
    int32_t tactic = -1;
    float *want, *got;
    make_tensors(c, PRT_FLOAT32, 9, &t);
    want = malloc(sizeof(float) * (size_t)t.ny);
    got = malloc(sizeof(float) * (size_t)t.ny);
    cpu = build(c, PRT_FLOAT32, &t, PRT_DEVICE_CPU, NULL);
    setenv("PRT_CUDA_CONV_IMPL", "cudnn", 1);
    e = build(c, PRT_FLOAT32, &t, PRT_DEVICE_CUDA, NULL);
    unsetenv("PRT_CUDA_CONV_IMPL");
    CHECK(e && cpu);
    if (e && cpu) {
        CHECK(strncmp(layer_tactic(e, &tactic), "cuDNN ", 6) == 0);
        CHECK(!run(cpu, PRT_DEVICE_CPU, PRT_FLOAT32, &t, want, 0));
        CHECK(!run(e, PRT_DEVICE_CUDA, PRT_FLOAT32, &t, got, 1));
        CHECK(!compare(got, want, t.ny, 1e-4, c->what, "cuDNN in a graph", PRT_FLOAT32));
    }
    prt_engine_destroy(e);
    prt_engine_destroy(cpu);
    free(want);
    free(got);
    free_tensors(&t);
}

int main(void)
{
    int cudnn;
    tu_require_cuda(NAME);
    cudnn = have_cudnn();
    if (!cudnn)
        printf("%s: cuDNN is not installed: its cases are skipped\n", NAME);
    test_cases(cudnn);
    test_timing_cache(cudnn);
    test_default(cudnn);
    test_tf32(cudnn);
    if (cudnn)
        test_graph();
    return tu_finish(NAME);
}
