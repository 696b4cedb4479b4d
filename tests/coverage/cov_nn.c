/*
 * Generators of the coverage matrix (cov.h) for the ops of networks: the
 * products (MatMul, Gemm, Einsum), Conv and ConvTranspose, the pools, the
 * normalizations, Softmax and LogSoftmax, Resize. Shapes are chosen to take
 * each of the CPU's paths (Conv's pointwise, depthwise, direct and im2col
 * ones; the register tiles, the packed constant B and the vector products
 * of MatMul and Gemm; the row kernels of GlobalAveragePool, the norms and
 * softmax) besides random small ones; weights are constants now and then,
 * as an importer makes them.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cov.h"

static int64_t rnd(cov *c, int64_t lo, int64_t hi)
{
    return tu_rng_range(cov_rng(c), lo, hi);
}

/* t's values times `scale` (a real spread for softmax). */
static void scale_values(ot_tensor *t, double scale)
{
    for (int64_t i = 0; i < tu_volume(&t->dims); i++)
        ot_set(t, i, ot_get(t, i) * scale);
}

/* An int64 constant of n values (a shape input: sizes, axes, K). */
static ot_tensor i64s(int32_t n, const int64_t *v)
{
    ot_tensor t = ot_make(PRT_INT64, D1(n));
    for (int32_t i = 0; i < n; i++)
        ot_set(&t, i, (double)v[i]);
    return t;
}

/* ---- products ----------------------------------------------------------- */

/* MatMul: sizes around the register tiles' (16 to 130) with B a constant
 * (packed once at build time) and an input (packed per run), a batch as
 * one tall product, broadcast batches, vectors on either side (the vector
 * products), K = 0, and the bias input of floats, with and without the
 * fused activations. */
static void gen_matmul(cov *c, const char *op, int32_t dt)
{
    static const char *const whats[] = {"constant B",
                                        "B an input",
                                        "batch, constant B",
                                        "broadcast batches",
                                        "vector times",
                                        "times vector",
                                        "K = 0",
                                        "bias",
                                        "bias, activation Relu",
                                        "activation Gelu"};
    const int is_f = ot_is_float(dt);
    for (int v = 0; v < 10; v++) {
        /* cuBLAS sums in another order: test_cuda_ops's tolerance. */
        oc_case k = {.op = op, .nb = 2, .rtol = cov_rtol(dt, 1e-4), .exact = !is_f};
        int64_t M = rnd(c, 16, 130), K = rnd(c, 16, 130), N = rnd(c, 16, 130);
        prt_dims a = D2(M, K), b = D2(K, N);
        char what[96];
        prt_field f[1] = {ot_fld_str("activation", v == 8 ? "Relu" : "Gelu")};
        if (v >= 7 && (!is_f || dt == PRT_FLOAT64))
            continue; /* the bias and the activations: float32 and 16-bit floats */
        if (v >= 8) {
            k.f = f;
            k.nf = 1;
        }
        if (v == 2)
            a = D3(3, M, K);
        else if (v == 3) {
            prt_dims s = cov_dims(c, 3, 1);
            a = D4(2, 1, s.d[0], s.d[1]);
            b = D3(3, s.d[1], s.d[2]);
        } else if (v == 4)
            a = D1(K);
        else if (v == 5)
            b = D1(K);
        else if (v == 6) {
            a = D2(M % 9, 0);
            b = D2(0, N % 9);
        }
        k.in[0] = cov_random(c, dt, a, 0);
        k.in[1] = cov_random(c, dt, b, 0);
        k.role[1] = v == 1 || v == 3 ? OC_DATA : OC_CONST;
        if (v == 7 || v == 8) {
            k.in[2] = cov_random(c, dt, D2(1, N), 0);
            k.role[2] = OC_CONST;
            k.nb = 3;
        }
        snprintf(what, sizeof what, "MatMul %s", whats[v]);
        cov_case(c, what, &k);
    }
}

/* Gemm: every transposition, alpha and beta, every shape of C and none,
 * B a constant (packed once when it is not transposed) or an input; a row
 * of A (the vector products) and K = 0. */
static void gen_gemm(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 8; v++) {
        int32_t ta = v & 1, tb = (v >> 1) & 1;
        float alpha = v % 3 ? 1.0f : 0.75f, beta = v == 5 ? 0.0f : v % 2 ? -1.5f : 1.0f;
        int64_t M = v == 4 ? 1 : rnd(c, 16, 130), N = rnd(c, 16, 130),
                K = v == 6 ? 0 : rnd(c, 16, 130);
        prt_field f[4] = {ot_fld_f32("alpha", &alpha), ot_fld_f32("beta", &beta),
                          ot_fld_i32("transA", &ta, 1), ot_fld_i32("transB", &tb, 1)};
        prt_dims cd[6] = {D0(), D1(N), D2(M, 1), D2(M, N), D2(1, N), D0()};
        oc_case k = {.op = op, .f = f, .nf = 4, .nb = v % 6 == 5 ? 2 : 3};
        char what[128];
        k.rtol = cov_rtol(dt, 1e-4); /* as MatMul's */
        k.in[0] = cov_random(c, dt, ta ? D2(K, M) : D2(M, K), 0);
        k.in[1] = cov_random(c, dt, tb ? D2(N, K) : D2(K, N), 0);
        if (k.nb == 3)
            k.in[2] = cov_random(c, dt, cd[v % 6], 0);
        k.role[1] = k.role[2] = v % 4 == 1 ? OC_DATA : OC_CONST;
        snprintf(what, sizeof what, "Gemm transA %d transB %d alpha %g beta %g", (int)ta,
                 (int)tb, alpha, beta);
        cov_case(c, what, &k);
    }
}

/* Einsum: products, a batch, an outer product, a diagonal, a transpose, a
 * trace and a full sum; letters of random sizes (0 now and then); then
 * sums of 40 to 1517 terms into few outputs. */
static void gen_einsum(cov *c, const char *op, int32_t dt)
{
    static const struct {
        const char *eq;
        int nb;
        const char *terms[2]; /* the letters of each input */
    } cs[] = {
        {"ij,jk->ik", 2, {"ij", "jk"}},
        {"bij,bjk->bik", 2, {"bij", "bjk"}},
        {"ij,ij->i", 2, {"ij", "ij"}},
        {"i,j->ij", 2, {"i", "j"}},
        {"ii->i", 1, {"ii", ""}},
        {"ij->ji", 1, {"ij", ""}},
        {"ii", 1, {"ii", ""}},
        {"ij->", 1, {"ij", ""}},
        {"bhid,bhjd", 2, {"bhid", "bhjd"}},
    };
    static const char letters[] = "ijkbd";
    for (size_t e = 0; e < sizeof cs / sizeof cs[0]; e++) {
        prt_field f = ot_fld_str("equation", cs[e].eq);
        oc_case k = {.op = op, .f = &f, .nf = 1, .nb = cs[e].nb};
        prt_dims sizes = cov_dims(c, 5, 1); /* of i, j, k, b and d; h is 2 */
        char what[64];
        k.rtol = cov_rtol(dt, 1e-6);
        k.exact = !ot_is_float(dt);
        for (int i = 0; i < cs[e].nb; i++) {
            prt_dims d = D0();
            for (const char *p = cs[e].terms[i]; *p; p++) {
                const char *at = strchr(letters, *p);
                d.d[d.nb_dims++] = at ? sizes.d[at - letters] : 2;
            }
            k.in[i] = cov_random(c, dt, d, 0);
        }
        snprintf(what, sizeof what, "Einsum %s", cs[e].eq);
        cov_case(c, what, &k);
    }
    /* Long sums over few outputs (CUDA's warp-per-output kernel). */
    static const struct {
        const char *eq;
        int nb;
        prt_dims d[2];
    } ls[] = {
        {"ij,ij->i", 2, {{2, {8, 64}}, {2, {8, 64}}}},
        {"bij,bjk->bik", 2, {{3, {2, 3, 40}}, {3, {2, 40, 5}}}},
        {"ij->", 1, {{2, {37, 41}}, {0, {0}}}},
    };
    for (size_t e = 0; e < sizeof ls / sizeof ls[0]; e++) {
        prt_field f = ot_fld_str("equation", ls[e].eq);
        oc_case k = {.op = op, .f = &f, .nf = 1, .nb = ls[e].nb};
        char what[64];
        k.rtol = cov_rtol(dt, 1e-6);
        k.exact = !ot_is_float(dt);
        for (int i = 0; i < ls[e].nb; i++)
            k.in[i] = cov_random(c, dt, ls[e].d[i], 0);
        snprintf(what, sizeof what, "Einsum %s (long sums)", ls[e].eq);
        cov_case(c, what, &k);
    }
}

/* ---- Conv, ConvTranspose ------------------------------------------------- */

/* A window's shape: ns spatial dims of sizes in [lo, hi] (at least the
 * dilated kernel, padding included), a square kernel k with strides s,
 * dilations d, padding pad at the beginning and at the end but one less at
 * the end of the second dim (NOTSET), or auto_pad. */
typedef struct win_shape {
    const char *what;
    int32_t ns, group;
    int64_t n, c, m; /* images, input and output channels */
    int32_t k, s, d, pad;
    const char *auto_pad;
    int64_t lo, hi;
} win_shape;

/* The window fields of w into f (strides, dilations, kernel_shape, then
 * auto_pad or pads; arrays in v, which holds 15 values) and X's dims
 * [N, C, spatial...] into x; returns the count of fields. */
static int32_t win_case(cov *c, const win_shape *w, int32_t *v, prt_field *f, prt_dims *x)
{
    int32_t n = 0, *s = v, *d = v + 3, *ks = v + 6, *pads = v + 9;
    *x = D2(w->n, w->c);
    for (int32_t i = 0; i < w->ns; i++) {
        int64_t least = (int64_t)w->d * (w->k - 1) + 1;
        s[i] = w->s;
        d[i] = w->d;
        ks[i] = w->k;
        pads[i] = w->pad;
        pads[w->ns + i] = i == 1 && w->pad ? w->pad - 1 : w->pad;
        if (!w->auto_pad)
            least -= pads[i] + pads[w->ns + i];
        else if (strcmp(w->auto_pad, "VALID"))
            least = 1;
        x->d[x->nb_dims] = rnd(c, w->lo, w->hi);
        if (x->d[x->nb_dims] < least)
            x->d[x->nb_dims] = least;
        x->nb_dims++;
    }
    f[n++] = ot_fld_i32("strides", s, w->ns);
    f[n++] = ot_fld_i32("dilations", d, w->ns);
    f[n++] = ot_fld_i32("kernel_shape", ks, w->ns);
    f[n++] = w->auto_pad ? ot_fld_str("auto_pad", w->auto_pad)
                         : ot_fld_i32("pads", pads, 2 * w->ns);
    return n;
}

/* Conv: each CPU path (pointwise side by side, in blocks and of one pixel;
 * depthwise 3x3 and 5x5 at strides 1 and 2, channels multiples of 8 and 16
 * and odd; direct for a first layer and small groups; im2col), 1 and 3
 * spatial dims, auto_pad, and every fused activation in turn. */
static void gen_conv(cov *c, const char *op, int32_t dt)
{
    static const win_shape ws[] = {
        {"pointwise, small images", 2, 1, 2, 16, 24, 1, 1, 1, 0, NULL, 2, 7},
        {"pointwise, large image", 2, 1, 1, 8, 17, 1, 1, 1, 0, NULL, 11, 14},
        {"pointwise, one pixel", 2, 1, 3, 32, 16, 1, 1, 1, 0, NULL, 1, 1},
        {"pointwise, groups", 2, 3, 2, 9, 6, 1, 1, 1, 0, NULL, 3, 9},
        {"depthwise 3x3", 2, 16, 1, 16, 16, 3, 1, 1, 1, NULL, 1, 17},
        {"depthwise 3x3 stride 2", 2, 8, 2, 8, 8, 3, 2, 1, 1, NULL, 1, 17},
        {"depthwise 5x5", 2, 24, 1, 24, 24, 5, 1, 1, 2, NULL, 1, 13},
        {"depthwise 5x5 stride 2", 2, 13, 1, 13, 13, 5, 2, 1, 2, NULL, 1, 13},
        {"depthwise 5x5 stride 2, C 32", 2, 32, 2, 32, 32, 5, 2, 1, 2, NULL, 4, 21},
        {"depthwise 3x3, wide rows", 2, 16, 1, 16, 16, 3, 1, 1, 1, NULL, 2, 70},
        {"depthwise 1-D", 1, 7, 2, 7, 7, 3, 1, 2, 1, NULL, 1, 30},
        {"first layer", 2, 1, 1, 3, 16, 3, 2, 1, 1, NULL, 1, 19},
        {"direct, groups", 2, 2, 2, 4, 6, 3, 1, 2, 2, NULL, 1, 9},
        {"im2col", 2, 1, 1, 16, 8, 3, 1, 1, 1, NULL, 1, 11},
        {"1-D", 1, 1, 2, 5, 7, 3, 2, 1, 1, NULL, 1, 20},
        {"3-D", 3, 1, 1, 2, 3, 2, 1, 1, 0, NULL, 2, 5},
        {"SAME_UPPER", 2, 1, 1, 4, 5, 4, 2, 1, 0, "SAME_UPPER", 1, 9},
        {"SAME_LOWER depthwise", 2, 8, 1, 8, 8, 2, 1, 1, 0, "SAME_LOWER", 1, 9},
        {"VALID", 2, 1, 2, 3, 4, 3, 2, 1, 0, "VALID", 1, 9},
    };
    static const char *const acts[] = {
        "", "Relu", "LeakyRelu", "Clip", "HardSigmoid", "HardSwish", "Sigmoid", "Silu"};
    static const float params[2] = {-0.25f, 0.5f};
    for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++) {
        const win_shape *w = &ws[i];
        /* Each activation with and without a bias (i's parity). */
        const size_t ai = (i + i / 8) % 8;
        const char *act = acts[ai];
        int32_t v[15], g = w->group;
        prt_field f[7];
        oc_case k = {.op = op, .f = f, .nb = 2 + (int32_t)(i % 2)};
        prt_dims xd, wd = D2(w->m, w->c / w->group);
        char what[128];
        k.rtol = cov_rtol(dt, 1e-5);
        k.nf = win_case(c, w, v, f, &xd);
        f[k.nf++] = ot_fld_i32("group", &g, 1);
        /* The importer's fused activations, with and without parameters. */
        if (act[0])
            f[k.nf++] = ot_fld_str("activation", act);
        if (ai == 2 || ai == 3) {
            f[k.nf] = ot_fld_f32("activation_params", params);
            f[k.nf++].length = ai == 3 ? 2 : 1;
        }
        for (int32_t s = 0; s < w->ns; s++)
            wd.d[wd.nb_dims++] = w->k;
        k.in[0] = cov_random(c, dt, xd, 0);
        k.in[1] = cov_random(c, dt, wd, 0);
        if (k.nb == 3)
            k.in[2] = cov_random(c, dt, D1(w->m), 0);
        k.role[1] = k.role[2] = i % 3 ? OC_CONST : OC_DATA;
        snprintf(what, sizeof what, "Conv %s, activation '%s'", w->what, act);
        cov_case(c, what, &k);
    }
    /* The same shapes with a residual input Z of Y's dims (field residual:
     * act(conv + B + Z)), the activation after the sum; auto_pad's aside
     * (Z's dims from pads here). */
    for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++) {
        const win_shape *w = &ws[i];
        const size_t ai = i % 4; /* none, Relu, LeakyRelu, Clip */
        const char *act = acts[ai];
        int32_t v[15], g = w->group, one = 1;
        prt_field f[8];
        oc_case k = {.op = op, .f = f, .nb = 2 + (int32_t)(i % 2)};
        prt_dims xd, yd, wd = D2(w->m, w->c / w->group);
        char what[128];
        if (w->auto_pad)
            continue;
        k.rtol = cov_rtol(dt, 1e-5);
        k.nf = win_case(c, w, v, f, &xd);
        f[k.nf++] = ot_fld_i32("group", &g, 1);
        f[k.nf++] = ot_fld_i32("residual", &one, 1);
        if (act[0])
            f[k.nf++] = ot_fld_str("activation", act);
        if (ai == 2 || ai == 3) {
            f[k.nf] = ot_fld_f32("activation_params", params);
            f[k.nf++].length = ai == 3 ? 2 : 1;
        }
        yd = D2(w->n, w->m);
        for (int32_t s = 0; s < w->ns; s++) {
            wd.d[wd.nb_dims++] = w->k;
            /* v + 9: pads, begins then ends (win_case). */
            yd.d[yd.nb_dims++] = (xd.d[2 + s] + v[9 + s] + v[9 + w->ns + s] -
                                  (int64_t)w->d * (w->k - 1) - 1) /
                                     w->s +
                                 1;
        }
        k.in[0] = cov_random(c, dt, xd, 0);
        k.in[1] = cov_random(c, dt, wd, 0);
        if (k.nb == 3)
            k.in[2] = cov_random(c, dt, D1(w->m), 0);
        k.in[k.nb] = cov_random(c, dt, yd, 0);
        k.role[1] = k.role[2] = i % 3 ? OC_CONST : OC_DATA;
        k.role[k.nb] = OC_DATA;
        k.nb++;
        snprintf(what, sizeof what, "Conv %s, residual Z, activation '%s'", w->what, act);
        cov_case(c, what, &k);
    }
}

/* ConvTranspose: strides with output_padding (on every other dim), groups, depthwise,
 * dilation, output_shape, SAME_UPPER, 1 to 3 spatial dims; a bias now and then. */
static void gen_conv_transpose(cov *c, const char *op, int32_t dt)
{
    static const win_shape ws[] = {
        {"stride 2, output_padding", 2, 1, 2, 3, 4, 3, 2, 1, 1, NULL, 1, 7},
        {"groups", 2, 2, 1, 4, 6, 2, 1, 1, 1, NULL, 2, 7},
        {"depthwise", 2, 5, 2, 5, 5, 3, 2, 1, 1, NULL, 2, 6},
        {"1-D dilated", 1, 1, 2, 3, 2, 3, 1, 2, 2, NULL, 1, 9},
        {"output_shape", 2, 1, 1, 2, 3, 3, 2, 1, 0, NULL, 2, 6},
        {"SAME_UPPER", 2, 1, 1, 3, 2, 3, 2, 1, 0, "SAME_UPPER", 1, 6},
        {"3-D", 3, 1, 1, 2, 2, 2, 2, 1, 0, NULL, 1, 4},
    };
    for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++) {
        const win_shape *w = &ws[i];
        int32_t v[15], g = w->group, opad[3], oshape[3];
        prt_field f[7];
        oc_case k = {.op = op, .f = f, .nb = 2 + (int32_t)(i % 2)};
        prt_dims xd, wd = D2(w->c, w->m / w->group);
        char what[96];
        k.rtol = cov_rtol(dt, 1e-5);
        k.nf = win_case(c, w, v, f, &xd);
        f[k.nf++] = ot_fld_i32("group", &g, 1);
        for (int32_t s = 0; s < w->ns; s++) {
            const int32_t ek = w->d * (w->k - 1) + 1;
            wd.d[wd.nb_dims++] = w->k;
            opad[s] = s % 2 ? 0 : w->s - 1;
            oshape[s] = (int32_t)(w->s * (xd.d[2 + s] - 1) + opad[s] + ek - 1);
        }
        f[k.nf++] = ot_fld_i32("output_padding", opad, w->ns);
        if (!strcmp(w->what, "output_shape"))
            f[k.nf++] = ot_fld_i32("output_shape", oshape, w->ns);
        k.in[0] = cov_random(c, dt, xd, 0);
        k.in[1] = cov_random(c, dt, wd, 0);
        if (k.nb == 3)
            k.in[2] = cov_random(c, dt, D1(w->m), 0);
        k.role[1] = k.role[2] = i % 3 ? OC_CONST : OC_DATA;
        snprintf(what, sizeof what, "ConvTranspose %s", w->what);
        cov_case(c, what, &k);
    }
}

/* ---- pools -------------------------------------------------------------- */

/* MaxPool, AveragePool, LpPool: padding, ceil_mode, dilations, auto_pad, 1
 * to 3 spatial dims, a wide kernel over 16 channels; MaxPool's Indices in
 * both storage orders, AveragePool's count_include_pad, LpPool's p. */
static void gen_pool(cov *c, const char *op, int32_t dt)
{
    static const win_shape ws[] = {
        {"3x3 stride 2", 2, 1, 2, 3, 0, 3, 2, 1, 1, NULL, 1, 11},
        {"3x3 stride 2, ceil_mode", 2, 1, 1, 5, 0, 3, 2, 1, 1, NULL, 1, 11},
        {"1-D dilated", 1, 1, 2, 2, 0, 2, 1, 2, 1, NULL, 1, 20},
        {"SAME_UPPER", 2, 1, 1, 4, 0, 2, 2, 1, 0, "SAME_UPPER", 1, 9},
        {"3-D SAME_LOWER", 3, 1, 1, 2, 0, 3, 2, 1, 0, "SAME_LOWER", 1, 5},
        {"5x5 over 16 channels", 2, 1, 1, 16, 0, 5, 1, 1, 2, NULL, 1, 14},
        {"VALID, ceil_mode", 2, 1, 0, 3, 0, 2, 3, 1, 0, "VALID", 1, 9},
    };
    const int max = !strcmp(op, "MaxPool"), avg = !strcmp(op, "AveragePool");
    for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++) {
        const win_shape *w = &ws[i];
        int32_t v[15], ceil_mode = (int32_t)(i == 1 || i == 6), odd = (int32_t)(i % 2),
                       order = (int32_t)(i / 2 % 2), two = 2, p = (int32_t)(i % 3 + 1);
        prt_field f[8];
        oc_case k = {.op = op, .f = f, .nb = 1, .exact = max};
        prt_dims xd;
        char what[96];
        k.rtol = cov_rtol(dt, 1e-6);
        k.nf = win_case(c, w, v, f, &xd);
        f[k.nf++] = ot_fld_i32("ceil_mode", &ceil_mode, 1);
        if (max && i % 2) {
            f[k.nf++] = ot_fld_i32("nb_outputs", &two, 1);
            f[k.nf++] = ot_fld_i32("storage_order", &order, 1);
            k.nb_out = 2;
        } else if (avg)
            f[k.nf++] = ot_fld_i32("count_include_pad", &odd, 1);
        else if (!max)
            f[k.nf++] = ot_fld_i32("p", &p, 1);
        k.in[0] = cov_random(c, dt, xd, 1);
        if (k.nb_out == 2)
            snprintf(what, sizeof what, "%s %s, Indices, storage_order %d", op, w->what,
                     (int)order);
        else if (avg)
            snprintf(what, sizeof what, "%s %s, count_include_pad %d", op, w->what,
                     (int)odd);
        else
            snprintf(what, sizeof what, "%s %s, p %d", op, w->what, (int)p);
        cov_case(c, what, &k);
    }
}

/* The global pools: random images, a long plane and a large one (the
 * vector means), 1 and 3 spatial dims, an empty plane; GlobalLpPool's p. */
static void gen_global_pool(cov *c, const char *op, int32_t dt)
{
    const int max = !strcmp(op, "GlobalMaxPool");
    for (int v = 0; v < 6; v++) {
        prt_dims xd[6] = {D4(2, 3, 7, 9),    D3(1, 5, 1000), D4(1, 16, 56, 56),
                          D5(2, 2, 3, 1, 5), D4(1, 3, 0, 4), cov_dims(c, 4, 1)};
        int32_t p = (int32_t)(v % 3 + 1);
        prt_field f = ot_fld_i32("p", &p, 1);
        oc_case k = {.op = op, .nb = 1, .exact = max};
        k.rtol = cov_rtol(dt, 1e-6);
        if (!strcmp(op, "GlobalLpPool")) {
            k.f = &f;
            k.nf = 1;
        }
        k.in[0] = cov_random(c, dt, xd[v], v == 0);
        cov_case(c, op, &k);
    }
}

/* ---- rows: softmax, normalizations -------------------------------------- */

/* Softmax and LogSoftmax: every axis of ranks 1 to 4, coerce_2d, long rows
 * (the vector kernel), NaN and infinities. */
static void gen_softmax(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 6; v++) {
        int32_t rank = (int32_t)rnd(c, 1, 4), axis, c2 = v % 3 == 2;
        prt_dims d = cov_dims(c, rank, 1);
        prt_field f[2];
        oc_case k = {.op = op, .f = f, .nf = 2, .nb = 1};
        char what[96];
        k.rtol = cov_rtol(dt, 1e-5);
        if (v < 2)
            d.d[rank - 1] = v ? 3000 : 1024;
        axis = v < 2 ? -1 : (int32_t)rnd(c, -rank, rank - 1);
        f[0] = ot_fld_i32("axis", &axis, 1);
        f[1] = ot_fld_i32("coerce_2d", &c2, 1);
        k.in[0] = cov_random(c, dt, d, v == 3);
        scale_values(&k.in[0], 6.0);
        snprintf(what, sizeof what, "%s axis %d coerce_2d %d", op, (int)axis, (int)c2);
        cov_case(c, what, &k);
    }
}

/* LayerNormalization: every axis, Scale and B broadcast (and B absent or
 * shorter), one to three outputs in each stash_type, constants or inputs,
 * long rows (the vector kernel). */
static void gen_layer_norm(cov *c, const char *op, int32_t dt)
{
    static const int32_t stash[3] = {1, 10, 16};
    for (int v = 0; v < 6; v++) {
        int32_t rank = (int32_t)rnd(c, 1, 4), axis, nbo = 1 + v % 3,
                st = stash[v / 2 % 3];
        prt_dims d = cov_dims(c, rank, 0), sd;
        float eps = v % 2 ? 1e-5f : 1e-2f;
        prt_field f[4];
        oc_case k = {.op = op, .f = f, .nf = 4, .nb = 2 + v % 2, .nb_out = nbo};
        char what[128];
        k.rtol = cov_rtol(dt, 2e-5);
        if (v == 1 || v == 4)
            d.d[rank - 1] = v == 1 ? 2500 : 1025;
        axis = (int32_t)rnd(c, -rank, rank - 1);
        sd = d;
        for (int32_t i = 0; i < rank; i++)
            if (i < (axis < 0 ? axis + rank : axis) || rnd(c, 0, 2) == 0)
                sd.d[i] = 1;
        f[0] = ot_fld_i32("axis", &axis, 1);
        f[1] = ot_fld_f32("epsilon", &eps);
        f[2] = ot_fld_i32("stash_type", &st, 1);
        f[3] = ot_fld_i32("nb_outputs", &nbo, 1);
        k.in[0] = cov_random(c, dt, d, 0);
        k.in[1] = cov_random(c, dt, sd, 0);
        if (k.nb == 3) {
            sd.nb_dims--; /* B of fewer dims, aligned at the right */
            memmove(sd.d, sd.d + 1, sizeof(int64_t) * (size_t)sd.nb_dims);
            k.in[2] = cov_random(c, dt, sd, 0);
        }
        k.role[1] = k.role[2] = v % 2 ? OC_CONST : OC_DATA;
        if (st != 1) /* statistics rounded to 16 bits, and Y made from them */
            k.rtol = fmax(k.rtol, st == 10 ? 2e-3 : 1.6e-2);
        snprintf(what, sizeof what, "LayerNormalization axis %d, %d outputs, stash %d",
                 (int)axis, (int)nbo, (int)st);
        cov_case(c, what, &k);
    }
}

/* ElementwiseChain: every op as a step, constants, inputs (broadcast, read
 * first or second) and the value itself as operands, one to three inputs. */
static void gen_ew_chain(cov *c, const char *op, int32_t dt)
{
    static const char *const progs[] = {
        "Pow,Mul,Add,Mul,Tanh,Add,Mul", /* GPT-2's tanh GELU */
        "Sub,Mul,Add",                  /* a mask: (1 - m) * -1e4 + scores */
        "Sigmoid,Mul,Relu,Neg,Abs",
        "Div,Erf,Add,Mul",
        "Add,Abs,Sqrt,Reciprocal,Mul",
        "Mul,Exp,Add,Log,Sub",
    };
    static const int32_t operands[][14] = {
        {0, 0, 0, 1, 1, 0, 0, 2, 0, 0, 0, 3, 1, 1},
        {4, 3, 1, 1, 1, 2},
        {0, 0, 2, 0},
        {1, 1, 0, 0, 0, 3, 5, 0},
        {1, 1, 0, 0, 0, 0, 0, 0, 2, 0},
        {0, 4, 0, 0, 0, 3, 0, 0, 5, 1},
    };
    static const float consts[] = {3.0f, 0.044715f, 0.7978846f, 1.0f, 0.5f};
    static const int32_t nb_in[] = {2, 3, 1, 2, 2, 2};
    for (int v = 0; v < 6; v++) {
        int32_t steps = 1, rank = (int32_t)rnd(c, 1, 4);
        prt_dims d = cov_dims(c, rank, v == 2), sd = d;
        prt_field f[3];
        oc_case k = {.op = op, .f = f, .nf = 3, .nb = nb_in[v]};
        char what[96];
        for (const char *p = progs[v]; *p; p++)
            steps += *p == ',';
        k.rtol = cov_rtol(dt, 2e-6);
        f[0] = ot_fld_str("ops", progs[v]);
        f[1] = ot_fld_i32("operands", operands[v], 2 * steps);
        f[2] = (prt_field){"constants", consts, PRT_FIELD_FLOAT32, 5};
        for (int32_t i = 0; i < rank; i++)
            if (rnd(c, 0, 2) == 0)
                sd.d[i] = 1; /* the other inputs broadcast */
        k.in[0] = cov_random(c, dt, v == 4 ? sd : d, 0);
        for (int32_t i = 1; i < k.nb; i++)
            k.in[i] = cov_random(c, dt, v == 4 ? d : sd, 0);
        k.role[1] = v % 2 ? OC_CONST : OC_DATA;
        snprintf(what, sizeof what, "ElementwiseChain %s", progs[v]);
        cov_case(c, what, &k);
    }
}

/* SkipLayerNormalization: input and skip of one shape or either broadcast
 * (rows, leading dims, a value along the row), beta and bias present or
 * not, gamma of one value, one to four outputs, long rows. */
static void gen_skip_layer_norm(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 6; v++) {
        int32_t rank = (int32_t)rnd(c, 1, 4), nbo = 1 + v % 4;
        prt_dims d = cov_dims(c, rank, 0), sd, hd;
        float eps = v % 2 ? 1e-5f : 1e-2f;
        prt_field f[2];
        oc_case k = {.op = op, .f = f, .nf = 2, .nb = 3 + v % 3, .nb_out = nbo};
        char what[128];
        k.rtol = cov_rtol(dt, 2e-5);
        if (v == 1 || v == 4)
            d.d[rank - 1] = v == 1 ? 2500 : 1025;
        sd = d;
        for (int32_t i = 0; i < rank; i++)
            if (v >= 2 && rnd(c, 0, 2) == 0)
                sd.d[i] = 1; /* skip broadcast along some dims */
        hd = D1(d.d[rank - 1]);
        f[0] = ot_fld_f32("epsilon", &eps);
        f[1] = ot_fld_i32("nb_outputs", &nbo, 1);
        k.in[v == 3] = cov_random(c, dt, d, 0);
        k.in[v != 3] = cov_random(c, dt, sd, 0); /* v 3: the input is the short one */
        k.in[2] = cov_random(c, dt, v == 5 ? D1(1) : hd, 0);
        for (int32_t i = 3; i < k.nb; i++)
            k.in[i] = cov_random(c, dt, hd, 0);
        k.role[2] = k.role[3] = k.role[4] = v % 2 ? OC_CONST : OC_DATA;
        snprintf(what, sizeof what, "SkipLayerNormalization %d inputs, %d outputs",
                 (int)k.nb, (int)nbo);
        cov_case(c, what, &k);
    }
}

/* BatchNormalization: ranks 1 to 4, spatial 0 (parameters per position),
 * parameters of float32 for half X (opset 15); fused activations (Relu,
 * Silu, Clip with its bounds) on three of them. */
static void gen_batch_norm(cov *c, const char *op, int32_t dt)
{
    static const char *const acts[5] = {"Relu", NULL, "Silu", NULL, "Clip"};
    static const float clip[2] = {-0.5f, 0.75f};
    for (int v = 0; v < 5; v++) {
        int32_t rank = v == 4 ? 3 : v + 1, spatial = v != 3;
        int32_t pdt = v == 4 ? PRT_FLOAT32 : dt;
        float eps = 1e-3f;
        prt_field f[4] = {ot_fld_f32("epsilon", &eps),
                          ot_fld_i32("spatial", &spatial, 1)};
        oc_case k = {.op = op, .f = f, .nf = 2, .nb = 5};
        prt_dims xd = v == 2 ? D3(2, 16, 143) : cov_dims(c, rank, 1),
                 pd = D1(rank > 1 ? xd.d[1] : 1);
        char what[96];
        k.rtol = cov_rtol(dt, 2e-5);
        if (!spatial) {
            pd = xd;
            pd.nb_dims--;
            memmove(pd.d, pd.d + 1, sizeof(int64_t) * (size_t)pd.nb_dims);
        }
        k.in[0] = cov_random(c, dt, xd, 0);
        for (int32_t i = 1; i < 5; i++) {
            k.in[i] = cov_random(c, pdt, pd, 0);
            k.role[i] = OC_CONST;
        }
        for (int64_t i = 0; i < tu_volume(&pd); i++)
            ot_set(&k.in[4], i, fabs(ot_get(&k.in[4], i))); /* a variance */
        if (acts[v]) {
            f[k.nf++] = ot_fld_str("activation", acts[v]);
            if (v == 4)
                f[k.nf++] = (prt_field){"activation_params", clip, PRT_FIELD_FLOAT32, 2};
        }
        snprintf(what, sizeof what, "BatchNormalization spatial %d, %s parameters%s%s",
                 (int)spatial, prt_dtype_name(pdt), acts[v] ? ", then " : "",
                 acts[v] ? acts[v] : "");
        cov_case(c, what, &k);
    }
}

/* InstanceNormalization and GroupNormalization: planes of a few and of
 * many positions (the vector statistics), channels odd and multiples of 8;
 * GroupNormalization's scale per group or per channel, groups of one
 * channel. */
static void gen_group_norm(cov *c, const char *op, int32_t dt)
{
    const int group = !strcmp(op, "GroupNormalization");
    for (int v = 0; v < 4; v++) {
        int32_t G = v == 3 ? 8 : (int32_t)rnd(c, 1, 3);
        float eps = v % 2 ? 1e-5f : 1e-2f;
        prt_field f[3] = {ot_fld_f32("epsilon", &eps), ot_fld_i32("num_groups", &G, 1)};
        oc_case k = {.op = op, .f = f, .nf = 1 + group, .nb = 3};
        prt_dims xd = cov_dims(c, (int32_t)rnd(c, group ? 2 : 3, 5), 0);
        int64_t P;
        char what[96];
        k.rtol = cov_rtol(dt, 2e-5);
        if (v == 1)
            xd = D4(1, 8, 40, 37);
        if (group)
            xd.d[1] = G * (v == 3 ? 1 : rnd(c, 1, 3));
        P = group && v % 2 == 0 ? G : xd.d[1];
        k.in[0] = cov_random(c, dt, xd, 0);
        k.in[1] = cov_random(c, dt, D1(P), 0);
        k.in[2] = cov_random(c, dt, D1(P), 0);
        k.role[1] = k.role[2] = v % 2 ? OC_CONST : OC_DATA;
        if (v == 1) /* GroupNorm -> SiLU, a U-Net's block */
            f[k.nf++] = ot_fld_str("activation", "Silu");
        snprintf(what, sizeof what, "%s num_groups %d, epsilon %g%s", op, (int)G, eps,
                 v == 1 ? ", then Silu" : "");
        cov_case(c, what, &k);
    }
}

/* LpNormalization: p 1 and 2 along every axis, a row of zeros. */
static void gen_lp_norm(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 4; v++) {
        int32_t rank = (int32_t)rnd(c, 1, 3), axis = (int32_t)rnd(c, -rank, rank - 1),
                p = v % 2 + 1;
        prt_field f[2] = {ot_fld_i32("axis", &axis, 1), ot_fld_i32("p", &p, 1)};
        oc_case k = {.op = op, .f = f, .nf = 2, .nb = 1};
        prt_dims d = cov_dims(c, rank, 1);
        int64_t stride = 1, a = axis < 0 ? axis + rank : axis;
        char what[64];
        k.rtol = cov_rtol(dt, 1e-5);
        k.in[0] = cov_random(c, dt, d, 0);
        for (int32_t i = (int32_t)a + 1; i < rank; i++)
            stride *= d.d[i];
        for (int64_t i = 0; v == 2 && tu_volume(&d) > 0 && i < d.d[a]; i++)
            ot_set(&k.in[0], i * stride, 0.0); /* the row through element 0 */
        snprintf(what, sizeof what, "LpNormalization axis %d p %d", (int)axis, (int)p);
        cov_case(c, what, &k);
    }
}

/* ---- Resize ------------------------------------------------------------- */

/* Resize: every mode (integers: nearest) and coordinate transformation,
 * scales or sizes (a shape input) over all axes or some, keep_aspect_ratio
 * (sizes also a data input), tf_crop_and_resize's roi and extrapolation,
 * antialias and exclude_outside when downsampling, cubic_coeff_a. */
static void gen_resize(cov *c, const char *op, int32_t dt)
{
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    static const char *const ctms[] = {"half_pixel",         "half_pixel_symmetric",
                                       "pytorch_half_pixel", "align_corners",
                                       "asymmetric",         "tf_half_pixel_for_nn"};
    static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil",
                                           "floor", "ceil"};
    static const char *const keeps[] = {"not_larger", "not_smaller"};
    static const float scale_set[] = {0.5f, 0.6f, 0.75f, 1.0f, 1.5f, 2.0f, 2.5f, 3.0f};
    const int is_f = ot_is_float(dt);
    /* v 7 to 9 scale only the last two axes (CUDA's planes kernel; v 1
     * too): linear, cubic, and an antialiased rank 3. */
    for (int v = 0; v < 10; v++) {
        const char *mode = modes[is_f ? (v >= 7 ? (v == 8 ? 2 : 1) : v % 3) : 0];
        const int nearest = mode[0] == 'n', crop = v == 3,
                  aa = (v == 4 || v == 9) && !nearest;
        const int sizes_in = v == 1 || v == 2;
        const char *ctm = crop ? "tf_crop_and_resize" : ctms[rnd(c, 0, nearest ? 5 : 4)];
        const char *near = nearests[rnd(c, 0, 3)], *keep = keeps[rnd(c, 0, 1)];
        int32_t rank = v == 5 ? 1 : v == 6 || v == 9 ? 3 : 4, axes[2] = {-2, 3};
        int32_t nv = sizes_in ? 2 : rank, one = 1;
        float scales[4], roi[8], a = -0.5f, extrap = 10.0f;
        int64_t sizes[4];
        prt_field f[8];
        oc_case k = {.op = op, .f = f, .nb = 1, .exact = !is_f};
        char what[160];
        k.rtol = cov_rtol(dt, 1e-5);
        f[k.nf++] = ot_fld_str("mode", mode);
        f[k.nf++] = ot_fld_str("coordinate_transformation_mode", ctm);
        if (nearest)
            f[k.nf++] = ot_fld_str("nearest_mode", near);
        for (int32_t j = 0; j < nv; j++) {
            scales[j] = scale_set[rnd(c, 0, aa ? 2 : 7)]; /* antialias: downsampling */
            if (v >= 7 && j < nv - 2)
                scales[j] = 1.0f;
            sizes[j] = rnd(c, 1, v == 2 ? 4 : 8);
            roi[j] = 0.1f * (float)(j + 1);
            roi[nv + j] = 0.7f + 0.2f * (float)j; /* past 1: extrapolation */
        }
        if (sizes_in) {
            f[k.nf++] = ot_fld_i32("axes", axes, 2);
            k.in[1] = i64s(nv, sizes);
            k.role[1] = v == 2 ? OC_BOTH : OC_SHAPE;
            k.nb = 2;
        } else {
            f[k.nf] = ot_fld_f32("scales", scales);
            f[k.nf++].length = nv;
        }
        if (v == 2)
            f[k.nf++] = ot_fld_str("keep_aspect_ratio_policy", keep);
        if (aa) {
            f[k.nf++] = ot_fld_i32("antialias", &one, 1);
            f[k.nf++] = ot_fld_i32("exclude_outside", &one, 1);
            f[k.nf++] = ot_fld_f32("cubic_coeff_a", &a);
        }
        if (crop) {
            f[k.nf] = ot_fld_f32("roi", roi);
            f[k.nf++].length = 2 * nv;
            f[k.nf++] = ot_fld_f32("extrapolation_value", &extrap);
        }
        k.in[0] = cov_random(c, dt, cov_dims(c, rank, v == 0), 0);
        snprintf(what, sizeof what, "Resize %s %s%s%s%s%s%s", mode, ctm,
                 nearest ? " " : "", nearest ? near : "",
                 sizes_in ? ", sizes of axes -2 and 3" : ", scales",
                 v == 2 ? ", keep_aspect_ratio_policy " : "", v == 2 ? keep : "");
        for (int32_t j = 0; j < nv; j++)
            cov_append(what, sizeof what, " %g", sizes_in ? (double)sizes[j] : scales[j]);
        if (aa)
            cov_append(what, sizeof what,
                       ", antialias, exclude_outside, cubic_coeff_a -0.5");
        cov_case(c, what, &k);
    }
}

/* ---- LRN, Shrink, ReverseSequence, MaxUnpool ------------------------------- */

/* LRN: odd and even sizes, wider than C, ranks 2 to 5, an empty batch. */
static void gen_lrn(cov *c, const char *op, int32_t dt)
{
    static const int32_t sizes[5] = {1, 2, 3, 5, 20};
    for (int v = 0; v < 5; v++) {
        oc_case k = {.op = op, .nb = 1, .rtol = cov_rtol(dt, 1e-5)};
        float alpha = v == 4 ? 0.5f : 2e-4f, beta = v % 2 ? 0.5f : 0.75f, bias = 1.5f;
        prt_field f[4] = {ot_fld_i32("size", &sizes[v], 1), ot_fld_f32("alpha", &alpha),
                          ot_fld_f32("beta", &beta), ot_fld_f32("bias", &bias)};
        char what[64];
        k.f = f;
        k.nf = 4;
        k.in[0] = cov_random(c, dt, cov_dims(c, (int32_t)rnd(c, 2, 5), v == 3), 0);
        snprintf(what, sizeof what, "LRN size %d", (int)sizes[v]);
        cov_case(c, what, &k);
    }
}

/* Shrink: soft and hard, with the specials (NaN gives 0); integers scaled
 * past the band. */
static void gen_shrink(cov *c, const char *op, int32_t dt)
{
    static const float lambds[3] = {0.5f, 0.0f, 3.0f}, biases[3] = {0.0f, 0.25f, 1.5f};
    for (int v = 0; v < 3; v++) {
        oc_case k = {.op = op, .nb = 1, .exact = 1};
        prt_field f[2] = {ot_fld_f32("lambd", &lambds[v]),
                          ot_fld_f32("bias", &biases[v])};
        char what[64];
        k.f = f;
        k.nf = 2;
        k.in[0] = cov_random(c, dt, cov_dims(c, (int32_t)rnd(c, 0, 4), 1), 1);
        snprintf(what, sizeof what, "Shrink lambd %g bias %g", (double)lambds[v],
                 (double)biases[v]);
        cov_case(c, what, &k);
    }
}

/* ReverseSequence: both axis orders, lengths 0 to T (int64 and int32). */
static void gen_reverse_sequence(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 4; v++) {
        oc_case k = {.op = op, .nb = 2, .exact = 1};
        int32_t ba = v % 2, ta = 1 - ba;
        prt_field f[2] = {ot_fld_i32("batch_axis", &ba, 1),
                          ot_fld_i32("time_axis", &ta, 1)};
        prt_dims d = cov_dims(c, (int32_t)rnd(c, 2, 4), v == 3);
        int64_t B = d.d[ba], T = d.d[ta];
        char what[64];
        k.f = f;
        k.nf = 2;
        k.in[0] = cov_random(c, dt, d, 1);
        k.in[1] = ot_make(v == 2 ? PRT_INT32 : PRT_INT64, D1(B));
        for (int64_t b = 0; b < B; b++)
            ot_set(&k.in[1], b, (double)rnd(c, 0, T));
        snprintf(what, sizeof what, "ReverseSequence batch_axis %d", (int)ba);
        cov_case(c, what, &k);
    }
}

/* MaxUnpool: 2x2 windows of stride 2, overlapping 3-wide ones with pads,
 * 1-D and 3-D; indices random in the frame (repeats: the last wins), and
 * now and then a larger output_shape. */
static void gen_max_unpool(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 5; v++) {
        oc_case k = {.op = op, .nb = 2, .exact = 1};
        int32_t ns = v == 3 ? 1 : v == 4 ? 3 : 2, ks[3], st[3], pads[6];
        int32_t with_shape = v == 1 || v == 4;
        prt_field f[3];
        prt_dims d = cov_dims(c, 2 + ns, 0), fr = d;
        int64_t fv = 1, os[PRT_MAX_DIMS];
        char what[64];
        for (int32_t i = 0; i < ns; i++) {
            ks[i] = v == 2 ? 3 : 2;
            st[i] = v == 2 ? 1 : 2;
            pads[i] = pads[ns + i] = v == 2 ? 1 : 0;
            d.d[2 + i] = rnd(c, 1, 4);
        }
        for (int32_t i = 0; i < ns; i++)
            fr.d[2 + i] =
                (d.d[2 + i] - 1) * st[i] + ks[i] - (with_shape ? 0 : 2 * pads[i]);
        for (int32_t i = 0; i < 2 + ns; i++) {
            fr.d[i] = i < 2 ? d.d[i] : fr.d[i];
            fv *= fr.d[i];
            os[i] = fr.d[i] + (i >= 2 ? rnd(c, 0, 2) : 0);
        }
        f[0] = ot_fld_i32("kernel_shape", ks, ns);
        f[1] = ot_fld_i32("strides", st, ns);
        f[2] = ot_fld_i32("pads", pads, 2 * ns);
        k.f = f;
        k.nf = 3;
        k.in[0] = cov_random(c, dt, d, 1);
        k.in[1] = ot_make(PRT_INT64, d);
        for (int64_t j = 0; j < tu_volume(&d); j++)
            ot_set(&k.in[1], j, (double)rnd(c, 0, fv - 1));
        if (with_shape) {
            k.in[2] = i64s(2 + ns, os);
            k.role[2] = OC_SHAPE;
            k.nb = 3;
        }
        snprintf(what, sizeof what, "MaxUnpool %dD kernel %d%s", (int)ns, (int)ks[0],
                 with_shape ? ", output_shape" : "");
        cov_case(c, what, &k);
    }
}

/* ---- GridSample, RoiAlign ----------------------------------------------- */

/* GridSample: every mode, padding mode and align_corners, on 1 to 3
 * spatial dims, coordinates a little past [-1, 1] (padding at work), grid
 * of X's dtype or float32, NaN and infinities now and then, an empty
 * batch. */
static void gen_grid_sample(cov *c, const char *op, int32_t dt)
{
    static const char *const modes[] = {"linear", "nearest", "cubic"};
    static const char *const pads[] = {"zeros", "border", "reflection"};
    for (int v = 0; v < 18; v++) {
        const int32_t r = 1 + v % 3, align = v / 9, gdt = v % 2 ? dt : PRT_FLOAT32;
        const char *mode = modes[v % 3], *pad = pads[v / 3 % 3];
        prt_dims xd = {.nb_dims = r + 2}, gd = {.nb_dims = r + 2};
        prt_field f[3];
        oc_case k = {.op = op, .f = f, .nf = 3, .nb = 2};
        char what[160];
        f[0] = ot_fld_str("mode", mode);
        f[1] = ot_fld_str("padding_mode", pad);
        f[2] = ot_fld_i32("align_corners", &align, 1);
        xd.d[0] = gd.d[0] = v == 17 ? 0 : rnd(c, 1, 2);
        xd.d[1] = rnd(c, 1, 3);
        for (int32_t i = 0; i < r; i++) {
            xd.d[i + 2] = rnd(c, 1, r == 3 ? 4 : 7);
            gd.d[i + 1] = rnd(c, 1, r == 3 ? 3 : 6);
        }
        gd.d[r + 1] = r;
        k.in[0] = cov_random(c, dt, xd, v % 4 == 3);
        k.in[1] = cov_random(c, gdt, gd, v % 5 == 4);
        scale_values(&k.in[1], 1.25);
        k.rtol = cov_rtol(dt, 1e-6);
        snprintf(what, sizeof what, "GridSample %s %s align_corners %d, %d-D, grid %s",
                 mode, pad, (int)align, (int)r,
                 gdt == PRT_FLOAT32 ? "float32" : "of X's dtype");
        cov_case(c, what, &k);
    }
}

/* RoiAlign: both modes and coordinate_transformation_modes, adaptive and
 * fixed sampling, a spatial_scale, regions partly outside X, inverted and
 * smaller than a pixel, int32 and int64 batch indices, no regions. */
static void gen_roi_align(cov *c, const char *op, int32_t dt)
{
    static const char *const modes[] = {"avg", "max"};
    static const char *const ctms[] = {"half_pixel", "output_half_pixel"};
    for (int v = 0; v < 8; v++) {
        const int64_t N = rnd(c, 1, 3), C = rnd(c, 1, 3), H = rnd(c, 1, 9),
                      W = rnd(c, 1, 9);
        const int64_t R = v == 7 ? 0 : rnd(c, 1, 4);
        int32_t oh = (int32_t)rnd(c, 1, 4), ow = (int32_t)rnd(c, 1, 4);
        int32_t sr = v % 4 < 2 ? 0 : (int32_t)rnd(c, 1, 3);
        float scale = v % 3 == 2 ? 0.5f : 1.0f;
        prt_field f[6];
        oc_case k = {.op = op, .f = f, .nf = 6, .nb = 3};
        char what[160];
        f[0] = ot_fld_str("mode", modes[v % 2]);
        f[1] = ot_fld_str("coordinate_transformation_mode", ctms[v / 2 % 2]);
        f[2] = ot_fld_i32("output_height", &oh, 1);
        f[3] = ot_fld_i32("output_width", &ow, 1);
        f[4] = ot_fld_i32("sampling_ratio", &sr, 1);
        f[5] = ot_fld_f32("spatial_scale", &scale);
        k.in[0] = cov_random(c, dt, D4(N, C, H, W), v == 5);
        k.in[1] = ot_make(dt, D2(R, 4));
        k.in[2] = ot_make(v % 2 ? PRT_INT32 : PRT_INT64, D1(R));
        for (int64_t j = 0; j < R; j++) {
            for (int32_t q = 0; q < 4;
                 q++) { /* x1 y1 x2 y2, a pixel past X now and then */
                const double ext = (double)(q % 2 ? H : W) / scale;
                ot_set(&k.in[1], 4 * j + q,
                       (double)rnd(c, -8, 8 + 8 * (int64_t)ext) / 8.0 - 1.0);
            }
            ot_set(&k.in[2], j, (double)rnd(c, 0, N - 1));
        }
        k.rtol = cov_rtol(dt, 1e-6);
        snprintf(
            what, sizeof what,
            "RoiAlign %s %s %dx%d, sampling_ratio %d, spatial_scale %g, %lld regions",
            modes[v % 2], ctms[v / 2 % 2], (int)oh, (int)ow, (int)sr, (double)scale,
            (long long)R);
        cov_case(c, what, &k);
    }
}

/* ---- LSTM, GRU, RNN ------------------------------------------------------- */

/* Each direction and layout, ragged lengths (0 and T among them), initial
 * states, LSTM's peepholes and input_forget, GRU's linear_before_reset,
 * clip, every output. The CUDA kernel's paths (rnn_cuda.c, on an H100):
 * even cases v 0 to 5 (H up to 17) and v 16 (H 18 to 32, 301 entries:
 * blocks of several warps, the last partly idle) run rnn.cu's register
 * kernel; odd v 0 to 5 (H 33 to 64) and 9 to 14 (the same variants, H of
 * 80 and more) its batch-split kernel, a block per direction and entry
 * (PRT_CUDA_RNN_REG=0: the even ones too); with PRT_CUDA_RNN_WARP=1, the
 * odd v 0 to 5 run its warp kernel instead (two units a lane); v 15 (H 33
 * to 64) has 301 entries, so that a block holds several; v 6 blocks of
 * several units (the last one short) that synchronize through the grid,
 * with 9 batch entries; v 7's R is too wide for both directions' blocks to
 * be co-resident, so each direction gets its own launch; v 8's rows of R
 * do not fit shared memory: the per-step path. */
static void gen_rnn(cov *c, const char *op, int32_t dt)
{
    static const char *const dirs[3] = {"forward", "reverse", "bidirectional"};
    /* v 7's and v 8's H for RNN, GRU, LSTM: R's slice past 227 KB (an
     * H100's shared memory) for two directions' blocks, for one's. */
    static const int64_t wide[3][2] = {{2000, 3000}, {1200, 1700}, {1000, 1500}};
    const int lstm = strcmp(op, "LSTM") == 0, gru = strcmp(op, "GRU") == 0;
    const int64_t G = lstm ? 4 : gru ? 3 : 1;
    for (int v = 0; v < 17; v++) {
        oc_case k = {.op = op, .nb_out = lstm ? 3 : 2, .rtol = cov_rtol(dt, 1e-4)};
        /* x: the variant of inputs and fields (v 9 to 14 repeat 0 to 5, v 15
         * and 16 are 2: both directions, lengths, every initial state) */
        const int x = v >= 15 ? 2
                      : v < 9 ? v
                              : v - 9,
                  small = v < 6 || v >= 15, mid = v >= 9 && v < 15;
        const int di = small || mid ? x % 3 : v == 8 ? 0 : 2;
        const int64_t D = di == 2 ? 2 : 1,
                      T = small || mid || v == 6 ? rnd(c, 1, 6) + (v == 6) : 4 - v / 4,
                      B = v >= 15  ? 301
                          : small  ? rnd(c, 1, 5)
                          : mid    ? rnd(c, 3, 5)
                          : v == 6 ? 9
                                   : 2,
                      I = rnd(c, 1, 9),
                      H = v == 16  ? rnd(c, 18, 32)
                          : small  ? (v % 2 ? rnd(c, 33, 64) : rnd(c, 1, 17))
                          : mid    ? 80 + rnd(c, 0, 16)
                          : v == 6 ? 301
                                   : wide[lstm ? 2 : gru][v - 7];
        int32_t layout = small || mid ? (x / 3) % 2 : v == 6, mask = 1, flag = x % 2,
                hs = (int32_t)H;
        float clip = 0.8f;
        prt_field f[6];
        char what[128];
        int32_t nf = 0;
        f[nf++] = ot_fld_str("direction", dirs[di]);
        f[nf++] = ot_fld_i32("layout", &layout, 1);
        f[nf++] = ot_fld_i32("hidden_size", &hs, 1);
        k.in[k.nb++] = cov_random(c, dt, layout ? D3(B, T, I) : D3(T, B, I), 0);
        k.in[k.nb++] = cov_random(c, dt, D3(D, G * H, I), 0);
        k.in[k.nb++] = cov_random(c, dt, D3(D, G * H, H), 0);
        if (v >= 6) /* R's spectral radius about 0.6, as a trained layer's: in
                     * [-1, 1) the wide layers' steps amplify rounding */
            for (int64_t i = 0; i < D * G * H * H; i++)
                ot_set(&k.in[2], i, ot_get(&k.in[2], i) / sqrt((double)H));
        k.in[k.nb++] = cov_random(c, dt, D2(D, 2 * G * H), 0);
        if (x % 2 == 0) { /* lengths T, 0, then any */
            ot_tensor l = ot_make(PRT_INT32, D1(B));
            for (int64_t b = 0; b < B; b++)
                ot_set(&l, b, b == 0 ? (double)T : b == 1 ? 0.0 : (double)rnd(c, 0, T));
            k.in[k.nb++] = l;
            mask |= 2;
        }
        if (x != 1) {
            k.in[k.nb++] = cov_random(c, dt, layout ? D3(B, D, H) : D3(D, B, H), 0);
            mask |= 4;
        }
        if (lstm && x != 4) {
            k.in[k.nb++] = cov_random(c, dt, layout ? D3(B, D, H) : D3(D, B, H), 0);
            k.in[k.nb++] = cov_random(c, dt, D2(D, 3 * H), 0);
            mask |= 8 | 16;
        }
        f[nf++] = ot_fld_i32("inputs", &mask, 1);
        if (x == 3 || x == 7)
            f[nf++] = ot_fld_f32("clip", &clip);
        if (gru)
            f[nf++] = ot_fld_i32("linear_before_reset", &flag, 1);
        else if (lstm && x == 5)
            f[nf++] = ot_fld_i32("input_forget", &flag, 1);
        k.f = f;
        k.nf = nf;
        snprintf(what, sizeof what, "%s %s layout %d inputs %d, T %lld B %lld H %lld", op,
                 dirs[di], (int)layout, (int)mask, (long long)T, (long long)B,
                 (long long)H);
        cov_case(c, what, &k);
    }
}

/* Attention: rank 4 (grouped-query heads, K given transposed) and rank 3,
 * bool and float masks of ranks 2 to 4 (one shorter than the keys),
 * is_causal, scale and softcap; query lengths past one tile of 64 and
 * key lengths of 1. */
static void gen_attention(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 8; v++) {
        int64_t B = rnd(c, 1, 2), hkv = rnd(c, 1, 2), hq = hkv * rnd(c, 1, 3);
        int64_t sq = v == 2 ? 70 : rnd(c, 1, 9), skv = v == 5 ? 1 : rnd(c, 1, 12);
        int64_t D = v == 3 ? 80 : rnd(c, 1, 9), Dv = rnd(c, 1, 9);
        int32_t causal = v == 2 || v == 6, kt = v == 1, r3 = v == 4 || v == 7;
        int32_t qh = (int32_t)hq, kvh = (int32_t)hkv, ez = v == 6;
        float scale = v == 3 ? 0.25f : 0.0f, cap = v == 7 ? 1.5f : 0.0f;
        prt_field f[8];
        oc_case k = {.op = op, .f = f, .nf = 0, .nb = 3};
        prt_dims dq, dk, dv;
        char what[160];
        k.rtol = cov_rtol(dt, 2e-5);
        f[k.nf++] = ot_fld_i32("is_causal", &causal, 1);
        f[k.nf++] = ot_fld_f32("scale", &scale);
        f[k.nf++] = ot_fld_f32("softcap", &cap);
        f[k.nf++] = ot_fld_i32("k_transposed", &kt, 1);
        f[k.nf++] = ot_fld_i32("empty_rows_zero", &ez, 1);
        if (r3) {
            f[k.nf++] = ot_fld_i32("q_num_heads", &qh, 1);
            f[k.nf++] = ot_fld_i32("kv_num_heads", &kvh, 1);
            dq = (prt_dims){3, {B, sq, hq * D}};
            dk = (prt_dims){3, {B, skv, hkv * D}};
            dv = (prt_dims){3, {B, skv, hkv * Dv}};
        } else {
            dq = (prt_dims){4, {B, hq, sq, D}};
            dk = kt ? (prt_dims){4, {B, hkv, D, skv}} : (prt_dims){4, {B, hkv, skv, D}};
            dv = (prt_dims){4, {B, hkv, skv, Dv}};
        }
        k.in[0] = cov_random(c, dt, dq, 0);
        k.in[1] = cov_random(c, dt, dk, 0);
        k.in[2] = cov_random(c, dt, dv, 0);
        if (v == 0 || v == 4 || v == 6) { /* a bool mask [sq, skv] or [B, 1, sq, skv] */
            prt_dims dm =
                v == 4 ? (prt_dims){4, {B, 1, sq, skv}} : (prt_dims){2, {sq, skv}};
            k.in[3] = cov_random(c, PRT_BOOL, dm, 0);
            k.nb = 4;
        } else if (v == 3 || v == 7) { /* additive, the last dim short */
            prt_dims dm = {3, {hq, 1, skv > 1 ? skv - 1 : 1}};
            k.in[3] = cov_random(c, dt, dm, 0);
            k.nb = 4;
        }
        snprintf(what, sizeof what,
                 "Attention rank %d, %lld/%lld heads, Sq %lld Skv %lld D %lld Dv %lld, "
                 "causal %d, k_transposed %d, %s mask",
                 r3 ? 3 : 4, (long long)hq, (long long)hkv, (long long)sq, (long long)skv,
                 (long long)D, (long long)Dv, (int)causal, (int)kt,
                 k.nb < 4                    ? "no"
                 : k.in[3].dtype == PRT_BOOL ? "bool"
                                             : "float");
        cov_case(c, what, &k);
    }
}

const cov_entry cov_nn_entries[] = {
    {"MatMul", gen_matmul},
    {"Einsum", gen_einsum},
    {"Gemm", gen_gemm},
    {"Conv", gen_conv},
    {"ConvTranspose", gen_conv_transpose},
    {"MaxPool", gen_pool},
    {"AveragePool", gen_pool},
    {"LpPool", gen_pool},
    {"GlobalAveragePool", gen_global_pool},
    {"GlobalMaxPool", gen_global_pool},
    {"GlobalLpPool", gen_global_pool},
    {"Softmax", gen_softmax},
    {"LogSoftmax", gen_softmax},
    {"LayerNormalization", gen_layer_norm},
    {"SkipLayerNormalization", gen_skip_layer_norm},
    {"ElementwiseChain", gen_ew_chain},
    {"BatchNormalization", gen_batch_norm},
    {"InstanceNormalization", gen_group_norm},
    {"GroupNormalization", gen_group_norm},
    {"LpNormalization", gen_lp_norm},
    {"Resize", gen_resize},
    {"LRN", gen_lrn},
    {"Shrink", gen_shrink},
    {"ReverseSequence", gen_reverse_sequence},
    {"MaxUnpool", gen_max_unpool},
    {"GridSample", gen_grid_sample},
    {"RoiAlign", gen_roi_align},
    {"LSTM", gen_rnn},
    {"GRU", gen_rnn},
    {"RNN", gen_rnn},
    {"Attention", gen_attention},
    {NULL, NULL},
};
