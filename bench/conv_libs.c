/*
 * One convolution per input line, timed in the libraries plugrt could hand
 * its CPU convolutions to: oneDNN (Debian's libdnnl-dev, the C API) with
 * plain NCHW tensors, as plugrt's engine holds them, and with the blocked
 * layouts oneDNN picks for itself (format "any": nChw8c on AVX2), and
 * XNNPACK (libxnnpack-dev) in NHWC, the only layout it has. Built and run
 * by bench/conv_libs.py, which compares the figures with plugrt's own
 * layers; see there.
 *
 * stdin, one convolution per line:  N C H W M kh kw sh sw ph pw group name
 * stdout, per line:  name then the best time in ms of dnnl_nchw, dnnl_any,
 * xnnpack (-1 where a library is not built in or refused the shape).
 * The best of `reps` runs (argv[1], default 200) after 10 warm-up runs,
 * one thread (OMP_NUM_THREADS=1 for oneDNN, no threadpool for XNNPACK).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif
#ifdef HAVE_XNNPACK
#include <xnnpack.h>
#endif

typedef struct conv {
    long N, C, H, W, M, kh, kw, sh, sw, ph, pw, g, OH, OW;
} conv;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static float *filled(size_t n, float scale)
{
    float *p = malloc(n * sizeof(float) + 64);
    for (size_t i = 0; p && i < n; i++)
        p[i] = (float)((i * 2654435761u) % 1000) * scale - 0.5f * scale * 1000;
    return p;
}

#ifdef HAVE_DNNL
/* oneDNN: src and dst in `tag` (dnnl_nchw, or dnnl_format_tag_any for the
 * library's choice), weights in its own layout, reordered once. */
static double time_dnnl(const conv *c, int any, int reps)
{
    static dnnl_engine_t eng;
    static dnnl_stream_t st;
    dnnl_dims_t sd = {c->N, c->C, c->H, c->W}, dd = {c->N, c->M, c->OH, c->OW};
    dnnl_dims_t bd = {c->M}, w5 = {c->g, c->M / c->g, c->C / c->g, c->kh, c->kw};
    dnnl_dims_t w4 = {c->M, c->C, c->kh, c->kw}, strides = {c->sh, c->sw};
    dnnl_dims_t pads = {c->ph, c->pw}, dil = {0, 0};
    dnnl_memory_desc_t smd, dmd, wmd, bmd;
    dnnl_convolution_desc_t cd;
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    dnnl_memory_t ms, mw, mb, md;
    dnnl_format_tag_t t = any ? dnnl_format_tag_any : dnnl_nchw;
    double best = 1e30;
    float *p;
    if (!eng && (dnnl_engine_create(&eng, dnnl_cpu, 0) != dnnl_success ||
                 dnnl_stream_create(&st, eng, dnnl_stream_default_flags) != dnnl_success))
        return -1;
    if (dnnl_memory_desc_init_by_tag(&smd, 4, sd, dnnl_f32, t) ||
        dnnl_memory_desc_init_by_tag(&dmd, 4, dd, dnnl_f32, t) ||
        dnnl_memory_desc_init_by_tag(&wmd, c->g > 1 ? 5 : 4, c->g > 1 ? w5 : w4, dnnl_f32,
                                     dnnl_format_tag_any) ||
        dnnl_memory_desc_init_by_tag(&bmd, 1, bd, dnnl_f32, dnnl_x) ||
        dnnl_dilated_convolution_forward_desc_init(
            &cd, dnnl_forward_inference, dnnl_convolution_direct, &smd, &wmd, &bmd, &dmd,
            strides, dil, pads, pads) ||
        dnnl_primitive_desc_create(&pd, &cd, NULL, eng, NULL))
        return -1;
    if (dnnl_primitive_create(&prim, pd) ||
        dnnl_memory_create(&ms, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0),
                           eng, DNNL_MEMORY_ALLOCATE) ||
        dnnl_memory_create(&mw,
                           dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0),
                           eng, DNNL_MEMORY_ALLOCATE) ||
        dnnl_memory_create(&mb, &bmd, eng, DNNL_MEMORY_ALLOCATE) ||
        dnnl_memory_create(&md, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0),
                           eng, DNNL_MEMORY_ALLOCATE))
        return -1;
    if (dnnl_memory_get_data_handle(ms, (void **)&p) == dnnl_success)
        for (long i = 0; i < c->N * c->C * c->H * c->W; i++)
            p[i] = (float)(i % 17) * 0.1f;
    {
        dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, ms},
                                   {DNNL_ARG_WEIGHTS, mw},
                                   {DNNL_ARG_BIAS, mb},
                                   {DNNL_ARG_DST, md}};
        for (int i = 0; i < 10 + reps; i++) {
            double t0 = now();
            if (dnnl_primitive_execute(prim, st, 4, args) || dnnl_stream_wait(st))
                return -1;
            if (i >= 10 && now() - t0 < best)
                best = now() - t0;
        }
    }
    dnnl_memory_destroy(ms);
    dnnl_memory_destroy(mw);
    dnnl_memory_destroy(mb);
    dnnl_memory_destroy(md);
    dnnl_primitive_destroy(prim);
    dnnl_primitive_desc_destroy(pd);
    return best * 1e3;
}
#endif

#ifdef HAVE_XNNPACK
/* XNNPACK: NHWC input and output, weights [M][kh][kw][C/g] (values do not
 * matter for the time), no threadpool. */
static double time_xnnpack(const conv *c, int reps)
{
    static int inited;
    xnn_operator_t op = NULL;
    size_t cg = (size_t)(c->C / c->g), mg = (size_t)(c->M / c->g);
    float *w = filled((size_t)(c->M * c->kh * c->kw) * cg, 1e-3f);
    float *b = filled((size_t)c->M, 1e-3f);
    float *x = filled((size_t)(c->N * c->H * c->W * c->C), 1e-3f);
    float *y = malloc(sizeof(float) * (size_t)(c->N * c->OH * c->OW * c->M) + 64);
    double best = 1e30;
    if (!inited && xnn_initialize(NULL) != xnn_status_success)
        return -1;
    inited = 1;
    if (!w || !b || !x || !y ||
        xnn_create_convolution2d_nhwc_f32(
            (uint32_t)c->ph, (uint32_t)c->pw, (uint32_t)c->ph, (uint32_t)c->pw,
            (uint32_t)c->kh, (uint32_t)c->kw, (uint32_t)c->sh, (uint32_t)c->sw, 1, 1,
            (uint32_t)c->g, cg, mg, (size_t)c->C, (size_t)c->M, w, b, -1e30f, 1e30f, 0,
            &op) != xnn_status_success ||
        xnn_setup_convolution2d_nhwc_f32(op, (size_t)c->N, (size_t)c->H, (size_t)c->W, x,
                                         y, NULL) != xnn_status_success)
        best = -1e-3;
    for (int i = 0; best > 0 && i < 10 + reps; i++) {
        double t0 = now();
        if (xnn_run_operator(op, NULL) != xnn_status_success) {
            best = -1e-3;
            break;
        }
        if (i >= 10 && now() - t0 < best)
            best = now() - t0;
    }
    if (op)
        xnn_delete_operator(op);
    free(w);
    free(b);
    free(x);
    free(y);
    return best * 1e3;
}
#endif

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 200;
    conv c;
    char name[512];
    while (scanf("%ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %511s", &c.N, &c.C,
                 &c.H, &c.W, &c.M, &c.kh, &c.kw, &c.sh, &c.sw, &c.ph, &c.pw, &c.g,
                 name) == 13) {
        double a = -1, b = -1, x = -1;
        c.OH = (c.H + 2 * c.ph - c.kh) / c.sh + 1;
        c.OW = (c.W + 2 * c.pw - c.kw) / c.sw + 1;
#ifdef HAVE_DNNL
        a = time_dnnl(&c, 0, reps);
        b = time_dnnl(&c, 1, reps);
#endif
#ifdef HAVE_XNNPACK
        x = time_xnnpack(&c, reps);
#endif
        printf("%s %.4f %.4f %.4f\n", name, a, b, x);
        fflush(stdout);
    }
    return 0;
}
