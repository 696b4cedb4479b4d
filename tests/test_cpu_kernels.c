/*
 * The CPU's fast kernels (src/ops/cpu/cpu_kernels.h) against plain references
 * written here in double, in both builds (AVX2 + FMA where the CPU has it,
 * and the baseline one, forced with cpu_force_baseline):
 *  - Conv, through the op: random shapes made to take each path (the test
 *    asks op_conv_path which one they take): depthwise (1 or 2 spatial
 *    dims, 1 to 20 channels, kernels up to 7 x 7 and non-square, strides 1
 *    to 3, dilations, explicit and SAME/VALID padding, planes wider than a
 *    band and than eight pixels, channel counts that are not multiples of
 *    8; 3x3 at stride 2 from the rows in place, widths about its bounds),
 *    direct (depthwise with a channel multiplier or a kernel of more than
 *    64 taps, small groups, few input channels over many rows and wide
 *    rows, up to 8 outputs of 65 to 576 taps; 3x3 at stride 2 about the depthwise bounds,
 * 1 to 20 channels a group), pointwise (groups, widths that are not multiples of the
 * tiles; over a batch of small images side by side, each image the bits of it alone) and
 *    im2col (many taps, 3-D, 1x1 with a stride; over a batch of small
 *    images side by side, ViT's patches among them, each image the bits of
 *    it alone); with and without bias,
 *    each fused activation with random parameters, float32 and float16;
 *  - activation fields: every name and its parameters, the errors;
 *  - op_gemm_nn: edges of its tiles (M, N and K from 1), leading dims
 *    larger than the width, each epilogue, B packed into panels (B's
 *    stride a multiple of 64 floats, K past one panel); the same elements
 *    computed as blocks of any split are the same bits (what threads rely
 *    on), packed or not, and over B packed once (op_gemm_nn_panels);
 *  - op_gemv_f32: both forms, a few rows against B transposed (each row
 *    the bits of that row alone) and the shapes it declines;
 *  - op_attn_softmax_rows: every row length from 1 to 80 and about 128
 *    and 197, float, bool, no and causal masks, fully masked rows, each
 *    build against double; the columns past a row untouched; the AVX-512
 *    build's bits against the AVX2 build's;
 *  - op_gelu_f32: relative error against erfc in double, NaN, infinities,
 *    signed zeros, lengths that are not multiples of 8 (or 16); the AVX-512
 *    build's bits against the AVX2 build's;
 *  - op_sigmoid_f32: ulps and relative error against double over a dense
 *    range (subnormal results included), NaN, infinities, signed zeros,
 *    large magnitudes, lengths that are not multiples of 8 (or 16); the
 *    AVX-512 build's bits against the AVX2 build's; the fused Sigmoid and
 *    Silu give its bits;
 *  - op_bin_rows_f32, op_bin_c8_f32: Add, Sub, Mul, Div over every stride
 *    pattern (a plane times one value, a CHW8 block times one vector),
 *    tails, in place, NaN and infinities: the scalar operation's bits;
 *    op_cube_f32 the scalar cube's (overflow, subnormals, in place);
 *    CHW8's padding lanes 0;
 *  - op_act_bias: each activation's rule at NaN, -0 and the clamps;
 *  - the blocked format's kernels (conv_chw8.c, conv_dw8.c's blocks), called
 *    directly: pointwise, few input channels from planes, depthwise in
 *    place and through band buffers, channel counts that are not multiples
 *    of 8 and pixel counts that are not multiples of the tiles, each
 *    activation; the padding lanes must come out exactly 0. Where the CPU
 *    has AVX-512, the builds that have one (the pointwise kernel, the
 *    products over packed panels) give the AVX2 build's bits;
 *  - cpu_pool2d_rows: max and mean pools, LINEAR and CHW8 (test_pool2d);
 *  - op_copy_strided: strides of either sign, on threads (test_copy_strided);
 *  - op_tanh_f32: against tanh in double, the ends, both builds (test_tanh);
 *  - op_lut8: every length to 300, every byte value, each build (test_lut8).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "base/base.h"
#include "base/parallel.h"
#include "op_testutil.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/ew_kinds.h"
#include "ops/op_common.h"
#include "ops/ops_nn.h"

/* ---- activations in double --------------------------------------------------- */

static double ref_act(int32_t kind, double a, double b, double x)
{
    double h;
    switch (kind) {
    case OP_ACT_RELU:
        return x < 0 ? 0 : x;
    case OP_ACT_LEAKY_RELU:
        return x < 0 ? a * x : x;
    case OP_ACT_CLIP:
        x = x < a ? a : x;
        return x > b ? b : x;
    case OP_ACT_HARD_SIGMOID:
    case OP_ACT_HARD_SWISH:
        h = a * x + b;
        h = h < 0 ? 0 : h > 1 ? 1 : h;
        return kind == OP_ACT_HARD_SWISH ? x * h : h;
    case OP_ACT_SIGMOID:
    case OP_ACT_SILU:
        h = 1 / (1 + exp(-x));
        return kind == OP_ACT_SILU ? x * h : h;
    default:
        return x;
    }
}

/* ---- Conv ------------------------------------------------------------------------ */

typedef struct kconv {
    int32_t dtype, ns, group;
    prt_dims x, w;
    int32_t pads[6], strides[3], dil[3];
    const char *auto_pad; /* NULL: NOTSET with pads */
    int bias;
    int32_t act;
    float params[2];
} kconv;

/* Conv by its definition (ot_conv_ref), in double, with ONNX's padding
 * rules, then the activation. */
static void ref_kconv(const kconv *k, const ot_tensor *x, const ot_tensor *w,
                      const ot_tensor *b, prt_dims *od, double *want)
{
    const int32_t ns = k->ns;
    const int64_t N = k->x.d[0], M = k->w.d[0];
    int64_t D[3], K[3], O[3], S[3], L[3], P[3], ovol = 1;
    for (int32_t i = 0; i < ns; i++) {
        D[i] = k->x.d[2 + i];
        K[i] = k->w.d[2 + i];
        S[i] = k->strides[i];
        L[i] = k->dil[i];
        if (k->auto_pad && strcmp(k->auto_pad, "VALID") != 0) {
            int64_t tot;
            O[i] = (D[i] + S[i] - 1) / S[i];
            tot = (O[i] - 1) * S[i] + (K[i] - 1) * L[i] + 1 - D[i];
            tot = tot < 0 ? 0 : tot;
            P[i] = strcmp(k->auto_pad, "SAME_UPPER") == 0 ? tot / 2 : tot - tot / 2;
        } else {
            int64_t pb = k->auto_pad ? 0 : k->pads[i],
                    pe = k->auto_pad ? 0 : k->pads[ns + i];
            P[i] = pb;
            O[i] = (D[i] + pb + pe - (K[i] - 1) * L[i] - 1) / S[i] + 1;
        }
        ovol *= O[i];
    }
    od->nb_dims = ns + 2;
    od->d[0] = N;
    od->d[1] = M;
    for (int32_t i = 0; i < ns; i++)
        od->d[2 + i] = O[i];
    ot_conv_ref(x, w, b, k->group, S, L, P, O, want);
    for (int64_t i = 0; i < N * M * ovol; i++)
        want[i] = ref_act(k->act, k->params[0], k->params[1], want[i]);
}

static int32_t kconv_fields(const kconv *k, prt_field *f)
{
    int32_t n = 0;
    f[n++] = ot_fld_i32("group", &k->group, 1);
    f[n++] = ot_fld_i32("strides", k->strides, k->ns);
    f[n++] = ot_fld_i32("dilations", k->dil, k->ns);
    if (k->auto_pad)
        f[n++] = ot_fld_str("auto_pad", k->auto_pad);
    else
        f[n++] = ot_fld_i32("pads", k->pads, 2 * k->ns);
    if (k->act != OP_ACT_NONE) {
        f[n++] = ot_fld_str("activation", op_act_name(k->act));
        f[n] = ot_fld_f32("activation_params", k->params);
        f[n++].length = op_act_nb_params(k->act);
    }
    return n;
}

/* Runs one case in both builds against the reference; returns its path. */
static const char *run_kconv(const kconv *k, tu_rng *rng, const char *what)
{
    ot_tensor in[3], y;
    prt_field f[8];
    prt_plugin *p = NULL;
    prt_dims od;
    const char *path = NULL;
    int32_t nf = kconv_fields(k, f), nb_in = k->bias ? 3 : 2;
    int64_t ovol = 1;
    double *want;
    char name[160];
    in[0] = ot_random(k->dtype, k->x, rng, 0);
    in[1] = ot_random(k->dtype, k->w, rng, 0);
    if (k->bias)
        in[2] = ot_random(k->dtype, D1(k->w.d[0]), rng, 0);
    /* The output's size first, for the reference's buffer. */
    for (int32_t i = 0; i < k->ns; i++)
        ovol *= k->x.d[2 + i] + 8;
    want = malloc(sizeof(double) * (size_t)(k->x.d[0] * k->w.d[0] * ovol));
    if (!want)
        return NULL;
    ref_kconv(k, &in[0], &in[1], k->bias ? &in[2] : NULL, &od, want);
    if (ot_make_op("Conv", f, nf, &p) == PRT_OK) {
        path = op_conv_path(p, &k->x, &k->w);
        p->vt->runtime->destroy(p);
    }
    for (int base = 0; base < 2; base++) {
        cpu_force_baseline(base);
        snprintf(name, sizeof name, "%s (%s, %s, %s, act %s%s)", what, path ? path : "?",
                 prt_dtype_name(k->dtype), base ? "baseline" : "best build",
                 op_act_name(k->act), k->bias ? ", bias" : "");
        CHECK_OK(ot_run_op("Conv", f, nf, in, nb_in, &y));
        if (y.data)
            ot_check_close(name, &y, &od, want, k->dtype == PRT_FLOAT32 ? 2e-5 : 5e-3);
        ot_free(&y);
    }
    cpu_force_baseline(0);
    for (int32_t i = 0; i < nb_in; i++)
        ot_free(&in[i]);
    free(want);
    return path;
}

/* A random case of `kind` (0 depthwise, 1 direct, 2 pointwise, 3 im2col). */
static void make_kconv(int kind, tu_rng *r, kconv *k)
{
    int64_t C, M, G, ks[3] = {1, 1, 1};
    memset(k, 0, sizeof *k);
    k->dtype = tu_rng_range(r, 0, 5) == 0 ? PRT_FLOAT16 : PRT_FLOAT32;
    k->ns = kind == 3 && tu_rng_range(r, 0, 2) == 0 ? 3 : (int32_t)tu_rng_range(r, 1, 2);
    k->bias = (int)tu_rng_range(r, 0, 1);
    k->act = (int32_t)tu_rng_range(r, 0, OP_ACT_COUNT - 1);
    op_act_defaults(k->act, &k->params[0], &k->params[1]);
    if (k->act == OP_ACT_CLIP) {
        k->params[0] = (float)(tu_rng_uniform(r) - 0.8);
        k->params[1] = (float)(tu_rng_uniform(r) + 0.1);
    } else if (k->act == OP_ACT_LEAKY_RELU || k->act == OP_ACT_HARD_SIGMOID) {
        k->params[0] = (float)(tu_rng_uniform(r) * 0.5);
    }
    switch (kind) {
    case 0: /* depthwise: G = C = M, kh kw <= 64 */
        C = tu_rng_range(r, 1, 20);
        M = G = C;
        for (int32_t i = 0; i < k->ns; i++)
            ks[i] = tu_rng_range(r, 1, 7);
        if (ks[0] * ks[1] == 1)
            ks[k->ns - 1] = 3;
        break;
    case 1: /* direct: a channel multiplier, > 64 taps, small groups or few inputs */
        switch (tu_rng_range(r, 0, 4)) {
        case 4: /* few outputs of up to 576 taps (DenseNet's growth layers) */
            G = 1;
            C = tu_rng_range(r, 8, 40);
            M = tu_rng_range(r, 1, 8);
            k->ns = 2;
            ks[0] = ks[1] = C > 20 ? 3 : tu_rng_range(r, 3, 5);
            break;
        case 0:
            G = C = tu_rng_range(r, 1, 6);
            M = G * tu_rng_range(r, 2, 3);
            ks[0] = ks[1] = 3;
            break;
        case 1:
            G = C = M = tu_rng_range(r, 1, 5);
            k->ns = 2;
            ks[0] = 9;
            ks[1] = tu_rng_range(r, 8, 9);
            break;
        case 2:
            G = tu_rng_range(r, 2, 4);
            C = G * tu_rng_range(r, 2, 3);
            M = G * tu_rng_range(r, 1, 3);
            ks[0] = ks[1] = 3;
            break;
        default:
            G = 1;
            C = tu_rng_range(r, 1, 3);
            M = tu_rng_range(r, 2, 20);
            ks[0] = ks[1] = tu_rng_range(r, 2, 4);
            break;
        }
        break;
    case 2: /* pointwise */
        G = tu_rng_range(r, 1, 3);
        C = G * tu_rng_range(r, 1, 20);
        M = G * tu_rng_range(r, 1, 20);
        break;
    default: /* im2col: many taps, 3-D, or 1x1 with a stride */
        G = 1;
        C = tu_rng_range(r, 10, 12);
        /* Over 8 outputs: fewer of at most 576 taps go direct. */
        M = tu_rng_range(r, 9, 17);
        /* More than 64 taps per output: 7 in 1-D, 3 x 3, 2 x 2 x 2. */
        for (int32_t i = 0; i < k->ns; i++)
            ks[i] = k->ns == 3 ? 2 : k->ns == 2 ? 3 : 7;
        if (tu_rng_range(r, 0, 3) == 0) {
            ks[0] = ks[1] = ks[2] = 1;
            C = tu_rng_range(r, 1, 6);
        }
        break;
    }
    k->group = (int32_t)G;
    k->x.nb_dims = k->w.nb_dims = k->ns + 2;
    k->x.d[0] = tu_rng_range(r, 1, 2);
    k->x.d[1] = C;
    k->w.d[0] = M;
    k->w.d[1] = C / G;
    for (int32_t i = 0; i < k->ns; i++) {
        int64_t ek;
        k->w.d[2 + i] = ks[i];
        k->strides[i] = kind == 2 ? 1 : (int32_t)tu_rng_range(r, 1, 3);
        k->dil[i] = kind == 2 || tu_rng_range(r, 0, 3) ? 1 : 2;
        if (kind == 3 && ks[i] == 1)
            k->strides[i] = 2;
        ek = (ks[i] - 1) * k->dil[i] + 1;
        k->x.d[2 + i] = ek + tu_rng_range(r, 0, k->ns == 3 ? 4 : 30);
        if (kind == 2) {
            k->pads[i] = k->pads[k->ns + i] = 0;
        } else {
            k->pads[i] = (int32_t)tu_rng_range(r, 0, ks[i] - 1);
            k->pads[k->ns + i] = (int32_t)tu_rng_range(r, 0, ks[i] - 1);
        }
    }
    if (kind == 1 && G == 1 && k->ns == 2) {
        /* Many rows (past one block of output rows) and sometimes wide
         * ones (past one block of flat outputs). */
        k->x.d[2] = tu_rng_range(r, 20, 40);
        k->x.d[3] = tu_rng_range(r, 0, 1) ? tu_rng_range(r, 60, 130) : k->x.d[3];
        k->strides[0] = k->strides[1] = (int32_t)tu_rng_range(r, 1, 2);
    }
    if (kind != 2 && tu_rng_range(r, 0, 4) == 0) {
        static const char *const modes[] = {"SAME_UPPER", "SAME_LOWER", "VALID"};
        k->auto_pad = modes[tu_rng_range(r, 0, 2)];
    }
}

static int test_conv_paths(void)
{
    static const char *const names[] = {"depthwise", "direct", "pointwise", "im2col"};
    tu_rng rng;
    int hits[4] = {0}, dw8 = 0;
    tu_rng_seed(&rng, 2026);
    for (int it = 0; it < 240; it++) {
        kconv k;
        const char *path;
        char what[64];
        int kind = it % 4;
        make_kconv(kind, &rng, &k);
        snprintf(what, sizeof what, "Conv case %d", it);
        path = run_kconv(&k, &rng, what);
        /* Depthwise: planes at stride 1, eight channels at a time else. */
        if (path && kind == 0 && strcmp(path, "depthwise8") == 0)
            dw8++;
        if (path && (strcmp(path, names[kind]) == 0 ||
                     (kind == 0 && strcmp(path, "depthwise8") == 0)))
            hits[kind]++;
        else
            fprintf(stderr, "%s: meant for %s, took %s\n", what, names[kind],
                    path ? path : "none");
    }
    for (int kind = 0; kind < 4; kind++)
        CHECK(hits[kind] >= 50);
    CHECK(dw8 >= 10 && hits[0] - dw8 >= 10);
    /* Shapes of MobileNet-v3's layers and a band-sized depthwise one. */
    {
        static const int64_t shapes[][7] = {
            /* C, H, M, k, s, pad, group */
            {16, 112, 16, 3, 2, 1, 16}, {72, 56, 72, 3, 2, 1, 72},
            {88, 28, 88, 3, 1, 1, 88},  {96, 28, 96, 5, 2, 2, 96},
            {40, 14, 240, 1, 1, 0, 1},  {3, 224, 16, 3, 2, 1, 1},
            {17, 61, 17, 5, 1, 2, 17},
        };
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            kconv k;
            char what[64];
            memset(&k, 0, sizeof k);
            k.dtype = PRT_FLOAT32;
            k.ns = 2;
            k.group = (int32_t)shapes[i][6];
            k.x = D4(1, shapes[i][0], shapes[i][1], shapes[i][1]);
            k.w = D4(shapes[i][2], shapes[i][0] / k.group, shapes[i][3], shapes[i][3]);
            k.strides[0] = k.strides[1] = (int32_t)shapes[i][4];
            k.dil[0] = k.dil[1] = 1;
            for (int j = 0; j < 4; j++)
                k.pads[j] = (int32_t)shapes[i][5];
            k.bias = 1;
            k.act = (int32_t)(i % OP_ACT_COUNT);
            op_act_defaults(k.act, &k.params[0], &k.params[1]);
            snprintf(what, sizeof what, "Conv layer shape %zu", i);
            run_kconv(&k, &rng, what);
        }
    }
    /* 3 x 3 at stride 2 with one padding column before, which conv_dw.c
     * reads in place where 8 <= OW and 2 OW <= W (depthwise), and the
     * direct path's few input channels a group (a network's first layer,
     * 1 to 20 output channels a group) at the same shapes: widths on both sides of those
     * bounds (odd ones too), padding rows and after-columns of 0 to 2, 1-D, every
     * activation, with and without bias. */
    for (int it = 0; it < 120; it++) {
        kconv k;
        char what[64];
        const int dw = it % 2 == 0;
        int64_t G = dw ? tu_rng_range(&rng, 1, 12) : tu_rng_range(&rng, 1, 3);
        int64_t Cg = dw ? 1 : tu_rng_range(&rng, 1, 4),
                Mg = dw ? 1 : tu_rng_range(&rng, 1, 20);
        memset(&k, 0, sizeof k);
        k.dtype = PRT_FLOAT32;
        k.ns = it % 6 == 5 ? 1 : 2;
        k.group = (int32_t)G;
        k.x.nb_dims = k.w.nb_dims = k.ns + 2;
        k.x.d[0] = tu_rng_range(&rng, 1, 2);
        k.x.d[1] = G * Cg;
        k.w.d[0] = G * Mg;
        k.w.d[1] = Cg;
        for (int32_t i = 0; i < k.ns; i++) {
            k.x.d[2 + i] =
                i + 1 == k.ns ? tu_rng_range(&rng, 12, 70) : tu_rng_range(&rng, 3, 20);
            k.w.d[2 + i] = 3;
            k.strides[i] = 2;
            k.dil[i] = 1;
            k.pads[i] = i + 1 == k.ns ? 1 : (int32_t)tu_rng_range(&rng, 0, 2);
            k.pads[k.ns + i] = (int32_t)tu_rng_range(&rng, 0, 2);
        }
        k.bias = (int)tu_rng_range(&rng, 0, 1);
        k.act = (int32_t)(it % OP_ACT_COUNT);
        op_act_defaults(k.act, &k.params[0], &k.params[1]);
        snprintf(what, sizeof what, "%s 3x3 stride 2 case %d",
                 dw ? "depthwise" : "direct", it);
        run_kconv(&k, &rng, what);
    }
    return 0;
}

/* One convolution over a batch whose images may go side by side into one
 * product (conv.c: CONV_PW_BATCH_HW pointwise, CONV_COLS_BATCH_HW im2col):
 * c is N, C, H, W, M, group, kh, kw, stride, pad of H, pad of W (both
 * ends). Against the reference, and every image the bits of that image run
 * alone (batch 1, one product of its own), in both builds, on 1 and 2
 * threads. */
static void conv_batch_case(const char *kind, size_t ci, const int64_t *c, tu_rng *rng)
{
    const int64_t N = c[0], C = c[1], M = c[4], G = c[5];
    kconv k;
    ot_tensor in[3], one[3], y, y1;
    prt_field f[8];
    prt_dims od;
    prt_engine *e = NULL, *e1 = NULL;
    int32_t nf;
    int64_t hw;
    double *want;
    char what[96];
    memset(&k, 0, sizeof k);
    k.dtype = PRT_FLOAT32;
    k.ns = 2;
    k.group = (int32_t)G;
    k.x = D4(N, C, c[2], c[3]);
    k.w = D4(M, C / G, c[6], c[7]);
    k.strides[0] = k.strides[1] = (int32_t)c[8];
    k.dil[0] = k.dil[1] = 1;
    k.pads[0] = k.pads[2] = (int32_t)c[9];
    k.pads[1] = k.pads[3] = (int32_t)c[10];
    k.bias = ci % 4 != 3;
    k.act = (int32_t)(ci % OP_ACT_COUNT);
    op_act_defaults(k.act, &k.params[0], &k.params[1]);
    hw = ((c[2] + 2 * c[9] - c[6]) / c[8] + 1) * ((c[3] + 2 * c[10] - c[7]) / c[8] + 1);
    want = malloc(sizeof(double) * (size_t)(N * M * hw));
    if (!want) {
        CHECK(0);
        return;
    }
    nf = kconv_fields(&k, f);
    in[0] = ot_random(PRT_FLOAT32, k.x, rng, 0);
    in[1] = ot_random(PRT_FLOAT32, k.w, rng, 0);
    in[2] = ot_random(PRT_FLOAT32, D1(M), rng, 0);
    ref_kconv(&k, &in[0], &in[1], k.bias ? &in[2] : NULL, &od, want);
    one[0] = ot_make(PRT_FLOAT32, D4(1, C, c[2], c[3]));
    one[1] = in[1];
    one[2] = in[2];
    CHECK(one[0].data != NULL);
    CHECK_OK(ot_build_op("Conv", f, nf, in, k.bias ? 3 : 2, NULL, &e));
    CHECK_OK(ot_build_op("Conv", f, nf, one, k.bias ? 3 : 2, NULL, &e1));
    for (int base = 0; base < 2 && e && e1 && one[0].data; base++)
        for (int32_t threads = 1; threads <= 2; threads++) {
            cpu_force_baseline(base);
            snprintf(what, sizeof what, "%s batch case %zu (%s, %d threads)", kind, ci,
                     base ? "baseline" : "best build", (int)threads);
            CHECK_OK(ot_run_engine_threads(e, in, k.bias ? 3 : 2, threads, &y));
            if (!y.data)
                continue;
            ot_check_close(what, &y, &od, want, 2e-5);
            /* Images of one pixel and one group are the rows of one
             * product instead (squeeze-and-excitation), whose sums are
             * not those of an image alone. */
            for (int64_t n = 0; n < N && !(hw == 1 && G == 1); n++) {
                memcpy(one[0].data, (const float *)in[0].data + n * C * c[2] * c[3],
                       sizeof(float) * (size_t)(C * c[2] * c[3]));
                CHECK_OK(ot_run_engine_threads(e1, one, k.bias ? 3 : 2, threads, &y1));
                if (y1.data && memcmp(y1.data, (const float *)y.data + n * M * hw,
                                      sizeof(float) * (size_t)(M * hw)) != 0) {
                    fprintf(stderr, "%s: image %lld is not the bits of it alone\n", what,
                            (long long)n);
                    CHECK(0);
                }
                ot_free(&y1);
            }
            ot_free(&y);
        }
    cpu_force_baseline(0);
    prt_engine_destroy(e);
    prt_engine_destroy(e1);
    ot_free(&one[0]);
    for (int i = 0; i < 3; i++)
        ot_free(&in[i]);
    free(want);
}

/* Pointwise convolutions over a batch, whose images of few pixels go side
 * by side into one product (CONV_PW_BATCH_HW). Strips of 16 columns
 * inside one image and across two or more, K past one panel of 256 rows
 * (the straddling strips' partial sums), groups, row counts that leave a
 * last block of one row, every activation. */
static int test_conv_pointwise_batch(void)
{
    static const int64_t cases[][6] = {
        /* N, C, H, W, M, group */
        {8, 96, 7, 7, 576, 1}, {8, 576, 7, 7, 96, 1}, {2, 3, 7, 7, 5, 1},
        {9, 17, 1, 1, 13, 1},  {3, 18, 1, 1, 15, 3},  {5, 7, 1, 2, 9, 1},
        {4, 33, 3, 5, 29, 1},  {7, 20, 4, 4, 31, 1},  {6, 13, 1, 17, 7, 1},
        {9, 300, 2, 3, 11, 1}, {2, 300, 7, 7, 19, 1}, {3, 12, 7, 9, 18, 3},
        {4, 10, 8, 8, 10, 2},  {5, 9, 5, 13, 25, 1},  {2, 9, 8, 10, 25, 1},
        {1, 40, 7, 7, 37, 1},  {8, 5, 7, 7, 1, 1},    {3, 24, 6, 6, 7, 1},
        {2, 96, 7, 7, 577, 1}, {8, 16, 7, 7, 16, 1},  {4, 11, 3, 3, 11, 1},
    };
    tu_rng rng;
    tu_rng_seed(&rng, 49);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        int64_t c[11] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0};
        memcpy(c, cases[ci], sizeof cases[ci]);
        conv_batch_case("pointwise", ci, c, &rng);
    }
    return 0;
}

/* im2col convolutions over a batch, whose images of at most 128 pixels go
 * side by side (CONV_COLS_BATCH_HW, CONV_COLS_BATCH columns at a time;
 * written as panels where an image is whole strips of 16 and no window
 * reaches padding along the last dim, padding rows among them):
 * ViT's patch embedding (16 x 16 at stride 16, K = 768 past the 256-row
 * panels) and a 4 x 4 one, windows that overlap, padding of the rows alone
 * (op_im2col's rows walk, zero rows) and of the columns (win_walk), groups,
 * several chunks of images, a batch of one, images of 128 pixels (two at a
 * time), of 196 and 324 (one at a time), every activation. */
static int test_conv_im2col_batch(void)
{
    static const int64_t cases[][11] = {
        /* N, C, H, W, M, group, kh, kw, stride, pad H, pad W */
        {8, 3, 128, 128, 64, 1, 16, 16, 16, 0, 0}, {5, 4, 20, 20, 7, 1, 4, 4, 4, 0, 0},
        {4, 12, 10, 13, 5, 1, 3, 3, 2, 0, 0},      {3, 10, 9, 11, 9, 1, 3, 3, 1, 1, 1},
        {3, 10, 9, 11, 9, 1, 3, 3, 1, 1, 0},       {6, 10, 1, 40, 8, 1, 1, 7, 1, 0, 0},
        {4, 20, 6, 6, 6, 2, 3, 3, 1, 1, 0},        {20, 8, 8, 8, 6, 1, 3, 3, 1, 0, 0},
        {1, 9, 8, 8, 4, 1, 3, 3, 1, 0, 0},         {2, 8, 18, 18, 4, 1, 3, 3, 1, 1, 1},
        {3, 2, 64, 48, 33, 1, 8, 8, 8, 0, 0},      {2, 64, 7, 7, 40, 1, 3, 3, 1, 1, 1},
        {4, 8, 8, 10, 6, 1, 3, 3, 1, 1, 0},        {5, 20, 8, 10, 8, 2, 3, 3, 1, 1, 0},
        {3, 8, 8, 16, 5, 1, 3, 3, 1, 1, 1},        {3, 8, 14, 14, 5, 1, 3, 3, 1, 1, 1},
    };
    tu_rng rng;
    tu_rng_seed(&rng, 768);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        conv_batch_case("im2col", ci, cases[ci], &rng);
    return 0;
}

static int test_conv_activation_fields(void)
{
    const float two[2] = {-1.0f, 1.0f};
    prt_field f[2];
    prt_plugin *p = NULL;
    prt_layer_info li = {.struct_size = sizeof(prt_layer_info)};
    prt_engine *e = NULL;
    ot_tensor in[2];
    tu_rng rng;
    tu_rng_seed(&rng, 5);
    for (int32_t k = 0; k < OP_ACT_COUNT; k++) {
        CHECK(op_act_kind(op_act_name(k)) == k);
        CHECK(op_act_nb_params(k) >= 0 && op_act_nb_params(k) <= 2);
    }
    CHECK(op_act_kind("Gelu") == -1);
    f[0] = ot_fld_str("activation", "Swish");
    CHECK_ERR(ot_make_op("Conv", f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
              "activation 'Swish' is not Relu, LeakyRelu, Clip, HardSigmoid, "
              "HardSwish, Sigmoid or Silu");
    f[0] = ot_fld_str("activation", "Relu");
    f[1] = ot_fld_f32("activation_params", two);
    CHECK_ERR(ot_make_op("Conv", f, 2, &p), PRT_ERR_INVALID_ARGUMENT,
              "activation_params has 1 values; activation 'Relu' takes 0");
    f[0] = ot_fld_str("activation", "Clip");
    f[1] = ot_fld_f32("activation_params", two);
    CHECK_ERR(ot_make_op("Conv", f, 2, &p), PRT_ERR_INVALID_ARGUMENT,
              "activation_params has 1 values; activation 'Clip' takes 2");
    f[1] = ot_fld_i32("activation_params", (const int32_t[]){1, 2}, 2);
    CHECK_ERR(ot_make_op("Conv", f, 2, &p), PRT_ERR_INVALID_ARGUMENT,
              "activation_params must be float32");
    /* The fields an engine keeps: both, and Clip's defaults when absent. */
    in[0] = ot_random(PRT_FLOAT32, D4(1, 2, 4, 4), &rng, 0);
    in[1] = ot_random(PRT_FLOAT32, D4(3, 2, 3, 3), &rng, 0);
    f[0] = ot_fld_str("activation", "Clip");
    REQUIRE_OK(ot_build_op("Conv", f, 1, in, 2, NULL, &e));
    REQUIRE_OK(prt_engine_get_layer(e, 0, &li));
    {
        int found = 0;
        for (int32_t i = 0; i < li.nb_fields; i++)
            if (strcmp(li.fields[i].name, "activation_params") == 0) {
                const float *v = li.fields[i].data;
                found = li.fields[i].length == 2 && v[0] < -1e38f && v[1] > 1e38f;
            }
        CHECK(found);
    }
    prt_engine_destroy(e);
    ot_free(&in[0]);
    ot_free(&in[1]);
    return 0;
}

/* ---- products ---------------------------------------------------------------------- */

/* C = epilogue(A B) in double, ld as given. */
static void ref_gemm(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                     const float *B, int64_t ldb, const op_epilogue *e, double *C)
{
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++)
                s += (double)A[i * lda + k] * B[k * ldb + j];
            if (e && e->row_bias)
                s += e->row_bias[i];
            if (e && e->col_bias)
                s += e->col_bias[j];
            C[i * N + j] = e ? ref_act(e->act.kind, e->act.alpha, e->act.beta, s) : s;
        }
}

static float *rand_floats(tu_rng *r, int64_t n)
{
    float *p = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; p && i < n; i++)
        p[i] = (float)(2 * tu_rng_uniform(r) - 1);
    return p;
}

static int close_to(const float *got, int64_t ldc, const double *want, int64_t M,
                    int64_t N, int64_t K, const char *what)
{
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double g = got[i * ldc + j], w = want[i * N + j];
            if (!(fabs(g - w) <= 1e-5 * (double)(K + 1))) {
                fprintf(stderr, "%s: C[%lld][%lld] is %.9g, wanted %.9g\n", what,
                        (long long)i, (long long)j, g, w);
                return 0;
            }
        }
    return 1;
}

/* C2 computed in blocks of mb x nb (op_gemm_nn over B, or
 * op_gemm_nn_panels over bp when it is not NULL, nb then a multiple of
 * 16), each block with its part of ep's biases: 1 when every element has
 * the bits of C. */
static int gemm_blocks_same(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                            const float *B, int64_t ldb, const float *bp,
                            const op_epilogue *ep, const float *C, float *C2, int64_t ldc,
                            int64_t mb, int64_t nb)
{
    int same = 1;
    for (int64_t i0 = 0; i0 < M; i0 += mb)
        for (int64_t j0 = 0; j0 < N; j0 += nb) {
            op_epilogue eb = {NULL, NULL, {OP_ACT_NONE, 0, 0}};
            int64_t mr = M - i0 < mb ? M - i0 : mb, nc = N - j0 < nb ? N - j0 : nb;
            if (ep) {
                eb = *ep;
                eb.row_bias = ep->row_bias ? ep->row_bias + i0 : NULL;
                eb.col_bias = ep->col_bias ? ep->col_bias + j0 : NULL;
            }
            if (bp)
                op_gemm_nn_panels(mr, nc, K, A + i0 * lda, lda, bp + j0 * K,
                                  C2 + i0 * ldc + j0, ldc, ep ? &eb : NULL);
            else
                op_gemm_nn(mr, nc, K, A + i0 * lda, lda, B + j0, ldb, C2 + i0 * ldc + j0,
                           ldc, ep ? &eb : NULL);
        }
    for (int64_t i = 0; i < M; i++)
        same &= memcmp(C + i * ldc, C2 + i * ldc, sizeof(float) * (size_t)N) == 0;
    return same;
}

/* Iteration it's epilogue in e: none every fifth, a row bias (rb) or a
 * column bias (cb) or neither in turn, a random activation with its
 * defaults. Returns e, or NULL for none. */
static const op_epilogue *rand_epilogue(tu_rng *r, int it, const float *rb,
                                        const float *cb, op_epilogue *e)
{
    *e = (op_epilogue){NULL, NULL, {OP_ACT_NONE, 0, 0}};
    if (it % 3 == 1)
        e->row_bias = rb;
    if (it % 3 == 2)
        e->col_bias = cb;
    e->act.kind = (int32_t)tu_rng_range(r, 0, OP_ACT_COUNT - 1);
    op_act_defaults(e->act.kind, &e->act.alpha, &e->act.beta);
    return it % 5 == 0 ? NULL : e;
}

static int test_gemm_nn(void)
{
    tu_rng rng;
    tu_rng_seed(&rng, 77);
    for (int it = 0; it < 330; it++) {
        /* From 300 on, products whose B is packed into panels: 128 rows or
         * more, K from 64 (past one 256-row panel too), B's stride a
         * multiple of 64 floats. */
        const int packed = it >= 300;
        int64_t M = packed ? tu_rng_range(&rng, 128, 160)
                           : tu_rng_range(&rng, 1, it < 150 ? 13 : 70);
        int64_t N = tu_rng_range(&rng, 1, it < 150 ? 40 : 150);
        int64_t K = packed ? tu_rng_range(&rng, 64, 600) : tu_rng_range(&rng, 1, 60);
        int64_t lda = K + tu_rng_range(&rng, 0, 3), ldb = N + tu_rng_range(&rng, 0, 5);
        if (packed)
            ldb = (N + 63) / 64 * 64 + 64 * tu_rng_range(&rng, 0, 1);
        int64_t ldc = N + tu_rng_range(&rng, 0, 5);
        float *A = rand_floats(&rng, M * lda), *B = rand_floats(&rng, K * ldb);
        float *rb = rand_floats(&rng, M), *cb = rand_floats(&rng, N);
        float *C = rand_floats(&rng, M * ldc), *C2 = rand_floats(&rng, M * ldc);
        double *want = malloc(sizeof(double) * (size_t)(M * N));
        op_epilogue e = {NULL, NULL, {OP_ACT_NONE, 0, 0}};
        const op_epilogue *ep = rand_epilogue(&rng, it, rb, cb, &e);
        char what[96];
        REQUIRE(A && B && rb && cb && C && C2 && want);
        ref_gemm(M, N, K, A, lda, B, ldb, ep, want);
        for (int base = 0; base < 2; base++) {
            cpu_force_baseline(base);
            snprintf(what, sizeof what, "op_gemm_nn %lldx%lldx%lld (%s)", (long long)M,
                     (long long)N, (long long)K, base ? "baseline" : "best build");
            op_gemm_nn(M, N, K, A, lda, B, ldb, C, ldc, ep);
            CHECK(close_to(C, ldc, want, M, N, K, what));
            /* Any split into blocks gives the same bits; so do blocks of
             * rows and whole strips over B packed once into panels
             * (MatMul's shared copy). */
            CHECK(gemm_blocks_same(M, N, K, A, lda, B, ldb, NULL, ep, C, C2, ldc,
                                   tu_rng_range(&rng, 1, M), tu_rng_range(&rng, 1, N)));
            if (packed) {
                float *bp = malloc(sizeof(float) * (size_t)op_gemm_panel_floats(K, N));
                REQUIRE(bp);
                op_gemm_pack_panels(K, N, B, ldb, 0, (N + 15) / 16, bp);
                CHECK(gemm_blocks_same(M, N, K, A, lda, B, ldb, bp, ep, C, C2, ldc,
                                       tu_rng_range(&rng, 1, M),
                                       16 * tu_rng_range(&rng, 1, 4)));
                free(bp);
            }
        }
        cpu_force_baseline(0);
        free(A);
        free(B);
        free(rb);
        free(cb);
        free(C);
        free(C2);
        free(want);
    }
    /* The dispatcher's blocks for threads cover the product in whole tiles. */
    {
        int64_t mb, nb;
        op_gemm_split(10, 10, 10, &mb, &nb);
        CHECK(mb == 10 && nb == 10);
        op_gemm_split(64, 12544, 16, &mb, &nb);
        CHECK(mb == 64 && nb % 16 == 0 && nb < 12544);
        op_gemm_split(576, 49, 96, &mb, &nb);
        CHECK(nb == 49 && mb % 6 == 0 && mb < 576);
    }
    return 0;
}

static int test_gemv(void)
{
    tu_rng rng;
    tu_rng_seed(&rng, 78);
    for (int it = 0; it < 300; it++) {
        int64_t L = tu_rng_range(&rng, 1, 150), K = tu_rng_range(&rng, 1, 150);
        int ta = (int)tu_rng_range(&rng, 0, 1), tb = (int)tu_rng_range(&rng, 0, 1);
        /* M == 1, N == 1, or 2 to OP_GEMV_MAX_ROWS rows (against B
         * transposed most of the time) */
        int mode = it % 3, row = mode == 1;
        int64_t M = row ? 1 : mode == 0 ? L : tu_rng_range(&rng, 2, OP_GEMV_MAX_ROWS);
        int64_t N = mode == 0 ? 1 : mode == 1 ? L : tu_rng_range(&rng, 2, 150);
        /* Dense operands, leading dims as op_gemm_f32_t takes them. */
        int64_t lda = ta ? M : K, ldb = tb ? K : N;
        float *A = rand_floats(&rng, M * K), *B = rand_floats(&rng, K * N);
        float *C = rand_floats(&rng, M * N);
        double *want = malloc(sizeof(double) * (size_t)(M * N));
        int done;
        REQUIRE(A && B && C && want);
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double s = 0;
                for (int64_t k = 0; k < K; k++)
                    s += (double)(ta ? A[k * lda + i] : A[i * lda + k]) *
                         (tb ? B[j * ldb + k] : B[k * ldb + j]);
                want[i * N + j] = s;
            }
        for (int base = 0; base < 2; base++) {
            cpu_force_baseline(base);
            if (mode == 2 && it % 2)
                ta = 0, tb = 1, lda = K, ldb = K;
            if (mode == 2 && ta == 0 && tb == 1)
                for (int64_t i = 0; i < M; i++)
                    for (int64_t j = 0; j < N; j++) {
                        double s = 0;
                        for (int64_t k = 0; k < K; k++)
                            s += (double)A[i * lda + k] * B[j * ldb + k];
                        want[i * N + j] = s;
                    }
            done = op_gemv_f32(ta, tb, M, N, K, A, lda, B, ldb, C, N);
            /* Declined only when the vector is strided: A transposed with
             * M == 1 and lda > 1, or B not transposed with N == 1 and ldb > 1;
             * several rows only against B transposed. */
            CHECK(done == (mode == 2 ? !ta && tb
                           : row     ? (!ta || lda == 1)
                                     : (tb || ldb == 1)));
            if (done)
                CHECK(close_to(C, N, want, M, N, K, "op_gemv_f32"));
            /* Several rows: each the bits of that row alone. */
            if (done && mode == 2) {
                float *c1 = rand_floats(&rng, N);
                int same = 1;
                REQUIRE(c1);
                for (int64_t i = 0; i < M; i++) {
                    CHECK(op_gemv_f32(0, 1, 1, N, K, A + i * lda, lda, B, ldb, c1, N));
                    same &= memcmp(c1, C + i * N, sizeof(float) * (size_t)N) == 0;
                }
                CHECK(same);
                free(c1);
            }
        }
        cpu_force_baseline(0);
        free(A);
        free(B);
        free(C);
        free(want);
    }
    return 0;
}

/* ---- GELU and the activations --------------------------------------------------------
 */

static int test_gelu(void)
{
    enum { N = 400003 };
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
    const float sp[7] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1e-30f, -20.0f};
    float so[7];
    REQUIRE(x && y);
    for (int i = 0; i < N; i++)
        x[i] = -14.0f + 21.0f * (float)i / (N - 1);
    for (int base = 0; base < 2; base++) {
        double worst = 0;
        cpu_force_baseline(base);
        op_gelu_f32(x, y, N);
        for (int i = 0; i < N; i++) {
            double ref = 0.5 * x[i] * erfc(-x[i] / sqrt(2.0));
            if (fabs(ref) > 1e-37)
                worst = fmax(worst, fabs((y[i] - ref) / ref));
        }
        CHECK(worst < 6e-7);
        /* In place, and every length's tail. */
        for (int n = 1; n <= 17; n++) {
            float t[17];
            memcpy(t, x + 1000 * n, sizeof(float) * (size_t)n);
            op_gelu_f32(t, t, n);
            CHECK(memcmp(t, y + 1000 * n, sizeof(float) * (size_t)n) == 0);
        }
        op_gelu_f32(sp, so, 7);
        CHECK(so[0] != so[0]);
        if (!base) {
            /* The AVX-512 build, where it runs, has the AVX2 one's bits,
             * the specials included. */
            float *y2 = malloc(sizeof(float) * N), so2[7];
            REQUIRE(y2);
            cpu_force_avx2(1);
            op_gelu_f32(x, y2, N);
            op_gelu_f32(sp, so2, 7);
            cpu_force_avx2(0);
            CHECK(memcmp(y, y2, sizeof(float) * N) == 0);
            CHECK(memcmp(so, so2, sizeof so) == 0);
            free(y2);
        }
        CHECK(so[1] == INFINITY);
        CHECK(so[2] != so[2]); /* -inf * 0, as the formula gives */
        CHECK(so[3] == 0 && signbit(so[3]));
        CHECK(so[4] == 0 && !signbit(so[4]));
        CHECK(fabs(so[5] - 0.5e-30) < 1e-37);
        CHECK(so[6] == 0 && signbit(so[6]));
    }
    cpu_force_baseline(0);
    free(x);
    free(y);
    return 0;
}

/* ulps of the float nearest ref between got and ref (a subnormal's step
 * below 2^-126). */
static double ulps(float got, double ref)
{
    int e;
    frexp(ref, &e);
    return fabs(got - ref) / ldexp(1, e - 24 < -149 ? -149 : e - 24);
}

/* A float map kernel fn (op_sigmoid_f32, op_tanh_f32) gave y for x (n
 * floats) and so for sp (ns floats): in place and each tail length it gives
 * the same bits, and with base 0 so does the AVX-512 build where it runs,
 * the specials included. f: n floats of scratch. */
static void check_map_builds(void (*fn)(const float *, float *, int64_t), const float *x,
                             const float *y, float *f, int64_t n, const float *sp,
                             const float *so, int64_t ns, int base)
{
    float so2[32];
    for (int64_t k = 1; k <= 17; k++) {
        float t[17];
        memcpy(t, x + 1000 * k, sizeof(float) * (size_t)k);
        fn(t, t, k);
        CHECK(memcmp(t, y + 1000 * k, sizeof(float) * (size_t)k) == 0);
    }
    if (base || ns > 32)
        return;
    cpu_force_avx2(1);
    fn(x, f, n);
    fn(sp, so2, ns);
    cpu_force_avx2(0);
    CHECK(memcmp(y, f, sizeof(float) * (size_t)n) == 0);
    CHECK(memcmp(so, so2, sizeof(float) * (size_t)ns) == 0);
}

/* op_sigmoid_f32: every 4e-4 over [-110, 30] (results from 0 through the
 * subnormals to 1) against 1 / (1 + exp(-x)) in double, within 2.5 ulp and
 * 1.8e-7 (2e-7 baseline) relative where the result is normal; the ends
 * exactly; every length's tail and in place; the AVX-512 build's bits
 * against the AVX2 build's; the fused activations Sigmoid and Silu
 * (CPU_ACT_N) give the kernel's bits, and x times them. */
static int test_sigmoid(void)
{
    enum { N = 350003 };
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
    float *f = malloc(sizeof(float) * N);
    static const float sp[] = {NAN,     INFINITY, -INFINITY, -0.0f,     0.0f,     1e-30f,
                               -1e-30f, 200.0f,   -200.0f,   3.4e38f,   -3.4e38f, 17.0f,
                               -88.0f,  -100.0f,  -103.9f,   0x1p-149f, -1e4f};
    enum { NS = sizeof sp / sizeof sp[0] };
    float so[NS];
    REQUIRE(x && y && f);
    for (int i = 0; i < N; i++)
        x[i] = -110.0f + 140.0f * (float)i / (N - 1);
    for (int base = 0; base < 2; base++) {
        double worst = 0, worst_rel = 0;
        cpu_force_baseline(base);
        op_sigmoid_f32(x, y, N);
        for (int i = 0; i < N; i++) {
            const double ref = 1 / (1 + exp(-(double)x[i]));
            worst = fmax(worst, ulps(y[i], ref));
            if (ref >= 0x1p-126)
                worst_rel = fmax(worst_rel, fabs(y[i] - ref) / ref);
        }
        if (worst > 2.5 || worst_rel > (base ? 2e-7 : 1.8e-7))
            fprintf(stderr, "sigmoid (%s): %.3g ulp, %.3g relative\n",
                    base ? "baseline" : "best build", worst, worst_rel);
        CHECK(worst <= 2.5);
        CHECK(worst_rel <= (base ? 2e-7 : 1.8e-7));
        op_sigmoid_f32(sp, so, NS);
        check_map_builds(op_sigmoid_f32, x, y, f, N, sp, so, NS, base);
        CHECK(so[0] != so[0]);
        CHECK(so[1] == 1.0f);
        CHECK(so[2] == 0 && !signbit(so[2]));
        CHECK(so[3] == 0.5f && so[4] == 0.5f && so[5] == 0.5f && so[6] == 0.5f);
        CHECK(so[7] == 1.0f && so[8] == 0 && so[9] == 1.0f && so[10] == 0);
        for (int i = 11; i < NS; i++)
            CHECK(ulps(so[i], 1 / (1 + exp(-(double)sp[i]))) <= 1.5);
        CHECK(so[12] > 0 && so[12] < 0x1p-126f); /* subnormal, not 0 */
        CHECK(so[16] == 0);
        /* The fused activations: the kernel's bits, and Silu x times them. */
        for (int32_t k = OP_ACT_SIGMOID; k <= OP_ACT_SILU; k++) {
            const op_act a = {k, 0, 0};
            int same = 1;
            memcpy(f, x, sizeof(float) * N);
            op_act_bias(&a, 0.0f, f, N);
            for (int i = 0; i < N; i++) {
                const float want = k == OP_ACT_SILU ? x[i] * y[i] : y[i];
                same &= memcmp(&f[i], &want, sizeof want) == 0;
            }
            CHECK(same);
        }
    }
    cpu_force_baseline(0);
    free(x);
    free(y);
    free(f);
    return 0;
}

/* op_bin_rows_f32 and op_bin_c8_f32: each of Add, Sub, Mul, Div, every
 * pattern of strides, lengths about the vectors' (tails), in place, NaN,
 * infinities and zeros among the values: exactly the scalar operation's
 * result, in both builds; CHW8 padding lanes 0 even for 0 / 0. */
static int test_binary_kernels(void)
{
    enum { N = 67 };
    const int32_t kinds[4] = {BIN_R_ADD, BIN_R_SUB, BIN_R_MUL, BIN_R_DIV};
    float a[8 * N], b[8 * N], y[8 * N];
    tu_rng rng;
    tu_rng_seed(&rng, 31);
    for (int i = 0; i < 8 * N; i++) {
        a[i] = (float)(tu_rng_uniform(&rng) * 4 - 2);
        b[i] = (float)(tu_rng_uniform(&rng) * 4 - 2);
    }
    a[3] = NAN, b[5] = INFINITY, a[9] = -INFINITY, b[9] = 0.0f, a[12] = -0.0f,
    b[1] = 0.0f;
    for (int base = 0; base < 2; base++) {
        cpu_force_baseline(base);
        for (int k = 0; k < 4; k++)
            for (int sa = 0; sa < 2; sa++)
                for (int sb = 0; sb < 2; sb++)
                    for (int64_t n = 1; n <= N; n += n < 20 ? 1 : 23) {
                        int same = 1;
                        op_bin_rows_f32(kinds[k], a, sa, b, sb, y, n);
                        for (int64_t j = 0; j < n; j++) {
                            const float x = a[j * sa], z = b[j * sb];
                            const float w = k == 0   ? x + z
                                            : k == 1 ? x - z
                                            : k == 2 ? x * z
                                                     : x / z;
                            same &= (w != w && y[j] != y[j]) || memcmp(&w, &y[j], 4) == 0;
                        }
                        /* In place, over a. */
                        if (sa) {
                            float t[N];
                            memcpy(t, a, sizeof(float) * (size_t)n);
                            op_bin_rows_f32(kinds[k], t, 1, b, sb, t, n);
                            for (int64_t j = 0; j < n; j++)
                                same &= (t[j] != t[j] && y[j] != y[j]) ||
                                        memcmp(&t[j], &y[j], 4) == 0;
                        }
                        if (!same)
                            fprintf(stderr,
                                    "op_bin_rows_f32 kind %d, strides %d %d, n %lld\n", k,
                                    sa, sb, (long long)n);
                        CHECK(same);
                    }
        /* CHW8: R pixels, a side of step 0 one vector; live lanes 8 or 5. */
        for (int k = 0; k < 4; k++)
            for (int da = 0; da <= 8; da += 8)
                for (int db = 0; db <= 8; db += 8)
                    for (int64_t live = 5; live <= 8; live += 3) {
                        int same = 1;
                        float za[8 * N], zb[8 * N];
                        memcpy(za, a, sizeof za);
                        memcpy(zb, b, sizeof zb);
                        for (int64_t r = 0; r < N; r++)
                            for (int64_t l = live; l < 8; l++)
                                za[r * 8 + l] = zb[r * 8 + l] = 0.0f;
                        op_bin_c8_f32(kinds[k], za, da, zb, db, y, N, live);
                        for (int64_t r = 0; r < N; r++)
                            for (int64_t l = 0; l < 8; l++) {
                                const float x = za[r * da + l], z = zb[r * db + l];
                                float w = k == 0   ? x + z
                                          : k == 1 ? x - z
                                          : k == 2 ? x * z
                                                   : x / z;
                                if (l >= live)
                                    w = 0.0f;
                                same &= (w != w && y[r * 8 + l] != y[r * 8 + l]) ||
                                        memcmp(&w, &y[r * 8 + l], 4) == 0;
                            }
                        if (!same)
                            fprintf(stderr,
                                    "op_bin_c8_f32 kind %d, steps %d %d, live %lld\n", k,
                                    da, db, (long long)live);
                        CHECK(same);
                    }
        /* op_cube_f32: pow.c's scalar cube, bits, in place too; values
         * whose cube overflows float or falls to its subnormals. */
        {
            float c[N], t[N];
            int same = 1;
            memcpy(c, a, sizeof c);
            c[0] = 1e13f, c[1] = -7e12f, c[2] = 3e-14f, c[4] = 1e-40f, c[6] = -0.0f;
            c[7] = 16777215.0f, c[8] = 1.1754944e-38f;
            for (int64_t n = 1; n <= N; n += n < 12 ? 1 : 11) {
                memcpy(t, c, sizeof t);
                op_cube_f32(c, y, n);
                op_cube_f32(t, t, n);
                for (int64_t j = 0; j < n; j++) {
                    const double v = c[j];
                    const float w = (float)(v * v * v);
                    same &= ((w != w && y[j] != y[j] && t[j] != t[j]) ||
                             (memcmp(&w, &y[j], 4) == 0 && memcmp(&w, &t[j], 4) == 0));
                }
            }
            if (!same)
                fprintf(stderr, "op_cube_f32 (%s build)\n", base ? "baseline" : "best");
            CHECK(same);
        }
    }
    cpu_force_baseline(0);
    return 0;
}

static int test_act(void)
{
    const float xs[8] = {NAN, -0.0f, 0.0f, -3.0f, -0.25f, 0.5f, 2.0f, 7.0f};
    for (int base = 0; base < 2; base++) {
        cpu_force_baseline(base);
        for (int32_t k = 0; k < OP_ACT_COUNT; k++)
            for (int n = 1; n <= 8; n++) {
                op_act a = {k, 0, 0};
                float y[8];
                op_act_defaults(k, &a.alpha, &a.beta);
                if (k == OP_ACT_CLIP) {
                    a.alpha = -0.5f;
                    a.beta = 1.5f;
                }
                memcpy(y, xs, sizeof y);
                op_act_bias(&a, 0.0f, y, n);
                for (int i = 0; i < n; i++) {
                    double w = ref_act(k, a.alpha, a.beta, xs[i]);
                    CHECK((w != w && y[i] != y[i]) ||
                          fabs(y[i] - w) < 1e-6 * fmax(1, fabs(w)));
                }
                if ((k == OP_ACT_RELU || k == OP_ACT_SILU) && n >= 2)
                    CHECK(y[1] == 0 && signbit(y[1])); /* -0 stays */
            }
        {
            /* Silu at the ends: inf, -inf * 0 = NaN (as x * Sigmoid(x)),
             * a subnormal product, and large x. */
            op_act a = {OP_ACT_SILU, 0, 0};
            float y[4] = {INFINITY, -INFINITY, -100.0f, 100.0f};
            op_act_bias(&a, 0.0f, y, 4);
            CHECK(y[0] == INFINITY && y[1] != y[1] && y[3] == 100.0f);
            CHECK(fabs(y[2] - -100 * exp(-100.0)) <= 100 * 0x1p-149);
        }
        {
            /* min > max gives max everywhere, as ONNX's Clip. */
            op_act a = {OP_ACT_CLIP, 2.0f, 1.0f};
            float y[3] = {0.0f, 1.5f, 5.0f};
            op_act_bias(&a, 0.0f, y, 3);
            CHECK(y[0] == 1.0f && y[1] == 1.0f && y[2] == 1.0f);
            /* bias first, then the activation */
            a.kind = OP_ACT_RELU;
            y[0] = -1.0f;
            y[1] = 0.25f;
            op_act_bias(&a, 0.5f, y, 2);
            CHECK(y[0] == 0.0f && y[1] == 0.75f);
        }
    }
    cpu_force_baseline(0);
    return 0;
}

/* Row means: short rows (every tail) and long ones, against double sums;
 * both builds give the same bits (one order of additions, in double). Then
 * the same for a CHW8 block's lanes (op_block_means). */
static int test_row_means(void)
{
    enum { N = 12544 };
    tu_rng r;
    float *x = malloc(sizeof(float) * N * 3), nan_y;
    REQUIRE(x);
    tu_rng_seed(&r, 5);
    for (int i = 0; i < N * 3; i++)
        x[i] = (float)(2 * tu_rng_uniform(&r) - 1) + 100.0f * (i % 7 == 0);
    for (int64_t n = 1; n <= N; n = n < 70 ? n + 1 : n * 3 + 1) {
        float m[2][3];
        for (int base = 0; base < 2; base++) {
            cpu_force_baseline(base);
            op_row_means(x, 3, n, m[base]);
        }
        for (int rr = 0; rr < 3; rr++) {
            double s = 0;
            for (int64_t k = 0; k < n; k++)
                s += x[rr * n + k];
            CHECK(fabs(m[0][rr] - s / (double)n) <= 1e-6 * (1 + fabs(s / (double)n)));
        }
        CHECK(memcmp(m[0], m[1], sizeof m[0]) == 0);
    }
    op_row_means(x, 1, 0, &nan_y);
    CHECK(nan_y != nan_y);
    /* A CHW8 block's lanes: n pixels of eight (every tail of the four
     * running sums and of the sixteens), against double sums; both builds
     * the same bits. */
    for (int64_t n = 0; n * 8 <= N * 3; n = n < 40 ? n + 1 : n * 5 + 3) {
        float m[2][8];
        for (int base = 0; base < 2; base++) {
            cpu_force_baseline(base);
            op_block_means(x, n, m[base]);
        }
        for (int l = 0; l < 8; l++) {
            double s = 0;
            for (int64_t k = 0; k < n; k++)
                s += x[k * 8 + l];
            if (n == 0)
                CHECK(m[0][l] != m[0][l]);
            else
                CHECK(fabs(m[0][l] - s / (double)n) <= 1e-6 * (1 + fabs(s / (double)n)));
        }
        CHECK(memcmp(m[0], m[1], sizeof m[0]) == 0);
    }
    cpu_force_baseline(0);
    free(x);
    return 0;
}

/* Softmax rows against double, every tail; the rows the kernel leaves to
 * the caller (a NaN, an infinite largest value); the statistics and the
 * normalization of LayerNormalization. Both builds; the AVX-512 build of the
 * last two against the AVX2 build. */
static int test_row_kernels(void)
{
    enum { N = 1000 };
    tu_rng r;
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
    float sc[N], bi[N];
    REQUIRE(x && y);
    tu_rng_seed(&r, 9);
    for (int i = 0; i < N; i++) {
        x[i] = (float)(60 * tu_rng_uniform(&r) - 30);
        sc[i] = (float)(tu_rng_uniform(&r) + 0.5);
        bi[i] = (float)(tu_rng_uniform(&r) - 0.5);
    }
    for (int base = 0; base < 2; base++) {
        cpu_force_baseline(base);
        for (int64_t n = 1; n <= N; n = n < 40 ? n + 1 : n * 2 + 3) {
            for (int lg = 0; lg < 2; lg++) {
                double mx = -INFINITY, sum = 0, worst = 0;
                for (int64_t k = 0; k < n; k++)
                    mx = x[k] > mx ? x[k] : mx;
                for (int64_t k = 0; k < n; k++)
                    sum += exp((double)x[k] - mx);
                CHECK(op_softmax_row(x, y, n, lg) == 1);
                for (int64_t k = 0; k < n; k++) {
                    double w = lg ? (double)x[k] - mx - log(sum) : exp(x[k] - mx) / sum;
                    worst = fmax(worst, fabs(y[k] - w) / (lg ? 1 + fabs(w) : 1e-30 + w));
                }
                /* x - max is rounded to float (as every float softmax does): up
                 * to 2^-19 of error in an exponent of -60. */
                CHECK(worst < (lg ? 1e-6 : 4e-6));
            }
        }
        {
            float t[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, u[9];
            t[5] = NAN;
            CHECK(op_softmax_row(t, u, 9, 0) == 0);
            t[5] = INFINITY;
            CHECK(op_softmax_row(t, u, 9, 1) == 0);
            for (int k = 0; k < 9; k++)
                t[k] = -INFINITY;
            CHECK(op_softmax_row(t, u, 9, 0) == 0);
            /* Far below the largest: exactly 0, and 1 for it. */
            t[0] = 0.0f;
            t[1] = -200.0f;
            CHECK(op_softmax_row(t, u, 2, 0) == 1 && u[0] == 1.0f && u[1] == 0.0f);
        }
        for (int64_t n = 1; n <= N; n = n < 40 ? n + 1 : n * 2 + 3) {
            float mean, inv;
            double m = 0, v = 0, worst = 0;
            for (int64_t k = 0; k < n; k++)
                m += x[k];
            m /= (double)n;
            for (int64_t k = 0; k < n; k++)
                v += ((double)x[k] - m) * ((double)x[k] - m);
            v /= (double)n;
            op_row_stats(x, n, 1e-5f, &mean, &inv);
            CHECK(fabs(mean - m) <= 1e-6 * (1 + fabs(m)));
            CHECK(fabs(inv - 1 / sqrt(v + 1e-5)) <= 1e-6 / sqrt(v + 1e-5));
            op_norm_apply(x, n, mean, inv, sc, bi, y);
            for (int64_t k = 0; k < n; k++)
                worst = fmax(worst,
                             fabs(y[k] - ((x[k] - mean) * (double)inv * sc[k] + bi[k])));
            CHECK(worst < 1e-5);
            if (!base) {
                /* The AVX-512 builds, where they run, have the AVX2 ones'
                 * bits. */
                float mean2, inv2, y2[N];
                cpu_force_avx2(1);
                op_row_stats(x, n, 1e-5f, &mean2, &inv2);
                op_norm_apply(x, n, mean, inv, sc, bi, y2);
                cpu_force_avx2(0);
                CHECK(mean2 == mean && inv2 == inv);
                CHECK(memcmp(y, y2, sizeof(float) * (size_t)n) == 0);
            }
        }
    }
    cpu_force_baseline(0);
    free(x);
    free(y);
    return 0;
}

/* op_gemm_nn_panels in its AVX-512 build (where the CPU has AVX-512) against
 * the AVX2 build and the reference: the same bits, every edge of its tiles
 * (12 rows, full and ragged strips), each epilogue. Elsewhere the AVX2 build
 * against the reference, and a line says the comparison did not run. */
static int test_gemm_panels_avx512(void)
{
    tu_rng rng;
    const int wide = cpu_avx512();
    tu_rng_seed(&rng, 512);
    if (!wide)
        printf("test_cpu_kernels: no AVX-512 here: its build of op_gemm_nn_panels "
               "is not compared\n");
    for (int it = 0; it < 120; it++) {
        const int64_t M = tu_rng_range(&rng, 1, it < 60 ? 40 : 300);
        const int64_t N = tu_rng_range(&rng, 1, 70), K = tu_rng_range(&rng, 1, 300);
        const int64_t lda = K + tu_rng_range(&rng, 0, 3),
                      ldc = N + tu_rng_range(&rng, 0, 5);
        float *A = rand_floats(&rng, M * lda), *B = rand_floats(&rng, K * N);
        float *rb = rand_floats(&rng, M), *cb = rand_floats(&rng, N);
        float *C = rand_floats(&rng, M * ldc), *C2 = rand_floats(&rng, M * ldc);
        float *bp = malloc(sizeof(float) * (size_t)op_gemm_panel_floats(K, N));
        double *want = malloc(sizeof(double) * (size_t)(M * N));
        op_epilogue e = {NULL, NULL, {OP_ACT_NONE, 0, 0}};
        const op_epilogue *ep = rand_epilogue(&rng, it, rb, cb, &e);
        REQUIRE(A && B && rb && cb && C && C2 && bp && want);
        op_gemm_pack_panels(K, N, B, N, 0, (N + 15) / 16, bp);
        ref_gemm(M, N, K, A, lda, B, N, ep, want);
        op_gemm_nn_panels(M, N, K, A, lda, bp, C, ldc, ep);
        CHECK(close_to(C, ldc, want, M, N, K, "op_gemm_nn_panels"));
        cpu_force_avx2(1);
        op_gemm_nn_panels(M, N, K, A, lda, bp, C2, ldc, ep);
        cpu_force_avx2(0);
        for (int64_t i = 0; i < M; i++)
            if (memcmp(C + i * ldc, C2 + i * ldc, sizeof(float) * (size_t)N) != 0) {
                fprintf(stderr,
                        "op_gemm_nn_panels %lldx%lldx%lld: row %lld differs between "
                        "the AVX-512 and AVX2 builds\n",
                        (long long)M, (long long)N, (long long)K, (long long)i);
                CHECK(0);
                break;
            }
        free(A), free(B), free(rb), free(cb), free(C), free(C2), free(bp), free(want);
    }
    return 0;
}

/* ---- the blocked format's kernels ------------------------------------------------ */

static const op_act chw8_acts[OP_ACT_COUNT] = {{OP_ACT_NONE, 0, 0},
                                               {OP_ACT_RELU, 0, 0},
                                               {OP_ACT_LEAKY_RELU, 0.1f, 0},
                                               {OP_ACT_CLIP, -0.3f, 0.4f},
                                               {OP_ACT_HARD_SIGMOID, 0.2f, 0.5f},
                                               {OP_ACT_HARD_SWISH, 1.0f / 6, 0.5f},
                                               {OP_ACT_SIGMOID, 0, 0},
                                               {OP_ACT_SILU, 0, 0}};

/* y (nb blocks of P pixels) against want[c][p] (C channels): every live
 * lane within tol, every padding lane exactly 0. */
static int chw8_close(const float *y, const double *want, int64_t C, int64_t P,
                      double tol, const char *what, int act)
{
    for (int64_t cb = 0; cb < (C + 7) / 8; cb++)
        for (int64_t q = 0; q < P; q++)
            for (int64_t l = 0; l < 8; l++) {
                const int64_t c = cb * 8 + l;
                const double g = y[(cb * P + q) * 8 + l];
                if (c >= C ? g != 0.0 : !(fabs(g - want[c * P + q]) <= tol)) {
                    fprintf(stderr,
                            "%s (activation %d): channel %lld pixel %lld is %.9g, "
                            "wanted %.9g\n",
                            what, act, (long long)c, (long long)q, g,
                            c >= C ? 0.0 : want[c * P + q]);
                    return 0;
                }
            }
    return 1;
}

/* Channels [0, C) of planes x (C x R) into CHW8 blocks, padding lanes 0. */
static float *chw8_blocks(const float *x, int64_t C, int64_t R)
{
    const int64_t C8 = (C + 7) / 8;
    float *y = malloc(sizeof(float) * (size_t)(C8 * 8 * R));
    for (int64_t cb = 0; y && cb < C8; cb++)
        for (int64_t q = 0; q < R; q++)
            for (int64_t l = 0; l < 8; l++)
                y[(cb * R + q) * 8 + l] = cb * 8 + l < C ? x[(cb * 8 + l) * R + q] : 0.0f;
    return y;
}

/* A 2-D convolution of one group per channel (depthwise, dw) or of every
 * input channel (full), in double: want[m][oh][ow]. */
static void ref_conv2(int dw, const float *x, int64_t C, int64_t H, int64_t W,
                      const float *w, const float *bias, int64_t M, int64_t k, int64_t st,
                      int64_t pad, int64_t dl, const op_act *a, int64_t OH, int64_t OW,
                      double *want)
{
    for (int64_t m = 0; m < M; m++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                double acc = bias ? bias[m] : 0.0;
                for (int64_t c = dw ? m : 0; c < (dw ? m + 1 : C); c++)
                    for (int64_t i = 0; i < k; i++)
                        for (int64_t j = 0; j < k; j++) {
                            const int64_t ih = oh * st - pad + i * dl,
                                          iw = ow * st - pad + j * dl;
                            const int64_t wi = dw ? i * k + j : (c * k + i) * k + j;
                            if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                                acc += (double)w[m * (dw ? 1 : C) * k * k + wi] *
                                       x[(c * H + ih) * W + iw];
                        }
                want[(m * OH + oh) * OW + ow] = ref_act(a->kind, a->alpha, a->beta, acc);
            }
}

static int test_chw8_kernels(void)
{
    tu_rng rng;
    tu_rng_seed(&rng, 88);
    for (int base = 0; base < 2; base++) {
        cpu_force_baseline(base);
        for (int32_t ai = 0; ai < OP_ACT_COUNT; ai++) {
            const op_act *a = &chw8_acts[ai];
            /* Pointwise: 13 outputs (a block pair, the second part padding),
             * 11 inputs, 23 pixels (tiles of 6, then 4 and 1; of 12 in the
             * AVX-512 build); then 37 outputs (two pairs and a single
             * block), 20 inputs, 61 pixels; then 29 outputs (two pairs, the
             * last block part padding: the AVX-512 build's tile of two
             * pairs finishes its second in halves), 19 inputs, 42 pixels
             * (after the first 7, tiles of 12, 8, 2 and 1). */
            for (int shape = 0; shape < 3; shape++) {
                static const int64_t shapes[3][3] = {
                    {13, 11, 23}, {37, 20, 61}, {29, 19, 42}};
                const int64_t M = shapes[shape][0], K = shapes[shape][1],
                              P = shapes[shape][2];
                const int64_t M8 = (M + 7) / 8;
                float *w = rand_floats(&rng, M * K), *b = rand_floats(&rng, M);
                float *x = rand_floats(&rng, K * P), *x8 = chw8_blocks(x, K, P);
                float *wp = malloc(sizeof(float) * (size_t)(M8 * 8 * K));
                float *y = malloc(sizeof(float) * (size_t)(M8 * 8 * P));
                float *y2 = malloc(sizeof(float) * (size_t)(M8 * 8 * P));
                double *want = malloc(sizeof(double) * (size_t)(M * P));
                REQUIRE(w && b && x && x8 && wp && y && y2 && want);
                op_pw8_pack(w, M, K, wp);
                ref_conv2(0, x, K, 1, P, w, ai % 2 ? b : NULL, M, 1, 1, 0, 1, a, 1, P,
                          want);
                {
                    const op_pw8 p = {K, M, P, wp, ai % 2 ? b : NULL, *a, 0};
                    /* In two calls: every block from pixel 0 to 7, then on. */
                    op_pw8_run(&p, x8, 0, M8, 0, 7, y);
                    op_pw8_run(&p, x8, 0, M8, 7, P, y);
                    /* The AVX-512 build, where it runs, has the AVX2 one's bits. */
                    cpu_force_avx2(1);
                    op_pw8_run(&p, x8, 0, M8, 0, P, y2);
                    cpu_force_avx2(0);
                }
                CHECK(chw8_close(y, want, M, P, 1e-5 * (K + 1), "op_pw8_run", ai));
                CHECK(memcmp(y, y2, sizeof(float) * (size_t)(M8 * 8 * P)) == 0);
                /* X as LINEAR planes (x_linear): the blocks' bits, in both
                 * builds. */
                for (int avx2 = 0; avx2 < 2; avx2++) {
                    const op_pw8 p = {K, M, P, wp, ai % 2 ? b : NULL, *a, 1};
                    memset(y2, 0xff, sizeof(float) * (size_t)(M8 * 8 * P));
                    cpu_force_avx2(avx2);
                    op_pw8_run(&p, x, 0, M8, 0, 5, y2);
                    op_pw8_run(&p, x, 0, M8, 5, P, y2);
                    cpu_force_avx2(0);
                    CHECK(memcmp(y, y2, sizeof(float) * (size_t)(M8 * 8 * P)) == 0);
                }
                free(w), free(b), free(x), free(x8), free(wp), free(y), free(y2),
                    free(want);
            }
            /* One group, direct: 3 channels of 9 x 11 into 13 channels,
             * and of 9 x 51 (its rows hold the AVX-512 build's tiles of 12)
             * into 29 (a whole block pair, then a pair whose second block
             * is part padding), 11 channels of 9 x 23 into 21; 3x3 at
             * stride 2 with one padding pixel a side. From planes, and from
             * CHW8 blocks of the same values: the same bits. */
            for (int wide = 0; wide < 3; wide++) {
                const int64_t C = wide == 2 ? 11 : 3, H = 9,
                              W = wide == 2 ? 23
                                  : wide    ? 51
                                            : 11,
                              M = wide == 2 ? 21
                                  : wide    ? 29
                                            : 13,
                              k = 3, st = 2, pad = 1;
                const int64_t OH = (H + 2 * pad - k) / st + 1,
                              OW = (W + 2 * pad - k) / st + 1;
                const int64_t K = C * k * k, M8 = (M + 7) / 8;
                const int64_t in[2] = {H, W}, kk[2] = {k, k}, out[2] = {OH, OW},
                              ss[2] = {st, st}, dd[2] = {1, 1}, pb[2] = {pad, pad};
                float *w = rand_floats(&rng, M * K), *b = rand_floats(&rng, M);
                float *x = rand_floats(&rng, C * H * W);
                float *wp = malloc(sizeof(float) * (size_t)(M8 * 8 * K));
                float *y = malloc(sizeof(float) * (size_t)(M8 * 8 * OH * OW));
                float *y2 = malloc(sizeof(float) * (size_t)(M8 * 8 * OH * OW));
                double *want = malloc(sizeof(double) * (size_t)(M * OH * OW));
                op_cv8 p;
                REQUIRE(w && b && x && wp && y && y2 && want);
                memset(&p, 0, sizeof p);
                REQUIRE(op_win2_make(2, in, kk, out, ss, dd, pb, &p.g));
                op_cv8_pack(w, M, K, wp);
                p.C = C, p.M = M, p.w = wp, p.bias = ai % 2 ? NULL : b, p.act = *a;
                ref_conv2(0, x, C, H, W, w, p.bias, M, k, st, pad, 1, a, OH, OW, want);
                op_cv8_run(&p, x, 0, 2, y);
                op_cv8_run(&p, x, 2, OH, y);
                CHECK(chw8_close(y, want, M, OH * OW, 1e-5 * (K + 1), "op_cv8_run", ai));
                /* The AVX-512 build, where it runs, has the AVX2 one's bits. */
                memcpy(y2, y, sizeof(float) * (size_t)(M8 * 8 * OH * OW));
                cpu_force_avx2(1);
                op_cv8_run(&p, x, 0, OH, y);
                cpu_force_avx2(0);
                CHECK(memcmp(y, y2, sizeof(float) * (size_t)(M8 * 8 * OH * OW)) == 0);
                {
                    float *xb = chw8_blocks(x, C, H * W);
                    REQUIRE(xb);
                    p.blocked = 1;
                    op_cv8_run(&p, xb, 0, 3, y2);
                    op_cv8_run(&p, xb, 3, OH, y2);
                    CHECK(memcmp(y, y2, sizeof(float) * (size_t)(M8 * 8 * OH * OW)) == 0);
                    free(xb);
                }
                free(w), free(b), free(x), free(wp), free(y), free(y2), free(want);
            }
            /* A group's channels from the middle of a block: channels 5 to
             * 9 of 13 (c0 5, the padded copy's channel by channel fill),
             * 3x3 at stride 1 and 3 with padding 1, and 5x5 at dilation 2
             * (padding 4) into 11, from CHW8 blocks and from planes: the
             * reference's values, and the same bits either way. */
            for (int shape = 0; shape < 3; shape++) {
                const int64_t Ct = 13, c0 = 5, C = 5, H = 10, W = 12, M = 11;
                const int64_t k = shape == 2 ? 5 : 3, st = shape == 1 ? 3 : 1,
                              dl = shape == 2 ? 2 : 1, pad = shape == 2 ? 4 : 1;
                const int64_t OH = (H + 2 * pad - dl * (k - 1) - 1) / st + 1,
                              OW = (W + 2 * pad - dl * (k - 1) - 1) / st + 1;
                const int64_t K = C * k * k, M8 = (M + 7) / 8;
                const int64_t in[2] = {H, W}, kk[2] = {k, k}, out[2] = {OH, OW},
                              ss[2] = {st, st}, dd[2] = {dl, dl}, pb[2] = {pad, pad};
                float *w = rand_floats(&rng, M * K), *b = rand_floats(&rng, M);
                float *x = rand_floats(&rng, Ct * H * W), *xb = chw8_blocks(x, Ct, H * W);
                float *wp = malloc(sizeof(float) * (size_t)(M8 * 8 * K));
                float *y = malloc(sizeof(float) * (size_t)(M8 * 8 * OH * OW));
                float *y2 = malloc(sizeof(float) * (size_t)(M8 * 8 * OH * OW));
                double *want = malloc(sizeof(double) * (size_t)(M * OH * OW));
                op_cv8 p;
                REQUIRE(w && b && x && xb && wp && y && y2 && want);
                memset(&p, 0, sizeof p);
                REQUIRE(op_win2_make(2, in, kk, out, ss, dd, pb, &p.g));
                op_cv8_pack(w, M, K, wp);
                p.C = C, p.M = M, p.w = wp, p.bias = b, p.act = *a, p.c0 = c0;
                ref_conv2(0, x + c0 * H * W, C, H, W, w, b, M, k, st, pad, dl, a, OH, OW,
                          want);
                op_cv8_run(&p, x, 0, OH, y);
                CHECK(
                    chw8_close(y, want, M, OH * OW, 1e-5 * (K + 1), "op_cv8_run c0", ai));
                p.blocked = 1;
                op_cv8_run(&p, xb, 0, 1, y2);
                op_cv8_run(&p, xb, 1, OH, y2);
                CHECK(memcmp(y, y2, sizeof(float) * (size_t)(M8 * 8 * OH * OW)) == 0);
                free(w), free(b), free(x), free(xb), free(wp), free(y), free(y2),
                    free(want);
            }
            /* Depthwise, 13 channels (a full block and one of 5): 3x3 at
             * stride 2 in place, 5x5 at stride 1 through band buffers; 17 x
             * 15 pixels, and 61 x 40 (bands of rows: 3 of 23, as pairs 6 of
             * 11). */
            for (int band = 0; band < 3; band++) {
                const int64_t C = 13, H = band == 2 ? 61 : 17, W = band == 2 ? 40 : 15;
                const int64_t k = band ? 5 : 3, st = band ? 1 : 2;
                const int64_t pad = k / 2, OH = (H + 2 * pad - k) / st + 1,
                              OW = (W + 2 * pad - k) / st + 1;
                const int64_t in[2] = {H, W}, kk[2] = {k, k}, out[2] = {OH, OW},
                              ss[2] = {st, st}, dd[2] = {1, 1}, pb[2] = {pad, pad};
                float *w = rand_floats(&rng, C * k * k), *b = rand_floats(&rng, C);
                float *x = rand_floats(&rng, C * H * W), *x8 = chw8_blocks(x, C, H * W);
                float *y = malloc(sizeof(float) * (size_t)(2 * 8 * OH * OW));
                double *want = malloc(sizeof(double) * (size_t)(C * OH * OW));
                float *scratch =
                    malloc(sizeof(float) * (size_t)op_dw8_slot(kk, out, ss, dd));
                op_dw8 p;
                REQUIRE(w && b && x && x8 && y && want && scratch);
                REQUIRE(op_dw8_plan(2, in, kk, out, ss, dd, pb, &p));
                ref_conv2(1, x, C, H, W, w, ai % 2 ? b : NULL, C, k, st, pad, 1, a, OH,
                          OW, want);
                for (int64_t cb = 0; cb < 2; cb++) {
                    const float *xb = x8 + cb * H * W * 8,
                                *bb = ai % 2 ? b + cb * 8 : NULL;
                    float *yb = y + cb * OH * OW * 8;
                    const int64_t nc = cb ? C - 8 : 8;
                    if (band) {
                        op_dw8b_run(&p, xb, w + cb * 8 * k * k, bb, a, nc, yb, scratch);
                    } else {
                        op_dw8d_run(&p, xb, w + cb * 8 * k * k, bb, a, nc, 0, 3, yb);
                        op_dw8d_run(&p, xb, w + cb * 8 * k * k, bb, a, nc, 3, OH, yb);
                    }
                }
                CHECK(chw8_close(y, want, C, OH * OW, 1e-5 * (double)(k * k + 1),
                                 band ? "op_dw8b_run" : "op_dw8d_run", ai));
                if (band) {
                    /* Both blocks as a pair (one pass of 16-float vectors
                     * where AVX-512 is): the two calls' bits. */
                    float *y2 = malloc(sizeof(float) * (size_t)(2 * 8 * OH * OW));
                    REQUIRE(y2);
                    memset(y2, 0x7f, sizeof(float) * (size_t)(2 * 8 * OH * OW));
                    op_dw8b_run_pair(&p, x8, w, ai % 2 ? b : NULL, a, C, y2, scratch);
                    CHECK(memcmp(y, y2, sizeof(float) * (size_t)(2 * 8 * OH * OW)) == 0);
                    free(y2);
                }
                free(w), free(b), free(x), free(x8), free(y), free(want), free(scratch);
            }
        }
    }
    cpu_force_baseline(0);
    return 1;
}

/* cpu_pool2d_rows (pool2d.c), called directly: max and mean, LINEAR planes
 * and CHW8 blocks of the same channels, against a reference in double over
 * the window's elements inside X; random windows (1 x 1 to 5 x 5, strides
 * 1 to 3, dilations, begin and end pads, rows that end past the padding as
 * ceil_mode's do), widths about the vector's eight outputs and stride 2's
 * sixteen floats, rows of up to 1000, channel counts that are not
 * multiples of 8, NaNs in X, the lowest value of int8 as well as float.
 * The padding lanes come out 0; LINEAR and CHW8 give the same bits, the
 * baseline and AVX2 builds the same bits, and any split of the rows too. */
static double ref_pool2(const cpu_pool2d *p, const float *x, int64_t oy, int64_t ox)
{
    double acc = p->avg ? 0.0 : (double)p->lowest;
    int64_t cnt = 0, padded = 0, nan = 0;
    for (int64_t ky = 0; ky < p->kh; ky++)
        for (int64_t kx = 0; kx < p->kw; kx++) {
            const int64_t iy = oy * p->sh - p->pt + ky * p->dh;
            const int64_t ix = ox * p->sw - p->pl + kx * p->dw;
            if (iy >= -p->pt && iy < p->ih + p->pb && ix >= -p->pl && ix < p->iw + p->pr)
                padded++;
            if (iy < 0 || iy >= p->ih || ix < 0 || ix >= p->iw)
                continue;
            cnt++;
            if (isnan(x[iy * p->iw + ix]))
                nan = 1;
            else if (p->avg)
                acc += x[iy * p->iw + ix];
            else if (x[iy * p->iw + ix] > acc)
                acc = x[iy * p->iw + ix];
        }
    if (nan)
        return NAN;
    if (!p->avg)
        return cnt ? acc : p->lowest;
    if (!p->with_pad)
        return cnt ? acc / (double)cnt : NAN;
    return acc / (double)padded;
}

static int test_pool2d(void)
{
    tu_rng r;
    tu_rng_seed(&r, 77);
    for (int it = 0; it < 400; it++) {
        cpu_pool2d p = {.avg = (int32_t)(it % 2),
                        .with_pad = (int32_t)tu_rng_range(&r, 0, 1)};
        const int64_t C = tu_rng_range(&r, 1, 19), C8 = (C + 7) / 8;
        int64_t oh, ow, R, P, ok = 1;
        float *x, *xb, *yl[2] = {NULL, NULL}, *yb[2] = {NULL, NULL};
        p.ih = tu_rng_range(&r, 1, 9);
        /* Wider rows now and then: the maximum's ring (pool2d.c) over many
         * output groups, and rows too wide for it (p2_row). */
        p.iw = it / 2 % 5 == 1    ? tu_rng_range(&r, 41, 130)
               : it / 2 % 25 == 3 ? tu_rng_range(&r, 600, 1000)
                                  : tu_rng_range(&r, 1, 40);
        p.kh = tu_rng_range(&r, 1, 5);
        p.kw = tu_rng_range(&r, 1, 5);
        p.sh = tu_rng_range(&r, 1, 3);
        p.sw = tu_rng_range(&r, 1, 3);
        p.dh = tu_rng_range(&r, 1, 2);
        p.dw = it % 5 == 0 ? 2 : 1;
        p.pt = tu_rng_range(&r, 0, (p.kh - 1) * p.dh / 2);
        p.pb = tu_rng_range(&r, 0, (p.kh - 1) * p.dh / 2);
        p.pl = tu_rng_range(&r, 0, (p.kw - 1) * p.dw / 2);
        p.pr = tu_rng_range(&r, 0, (p.kw - 1) * p.dw / 2);
        p.lowest = it % 4 == 2 ? -128.0f : -FLT_MAX;
        oh = (p.ih + p.pt + p.pb - (p.kh - 1) * p.dh - 1) / p.sh + 1;
        ow = (p.iw + p.pl + p.pr - (p.kw - 1) * p.dw - 1) / p.sw + 1;
        if (oh < 1 || ow < 1)
            continue;
        /* ceil_mode: a last window that starts inside and ends past the
         * padding. */
        p.oh = oh + (it % 3 == 0 && oh * p.sh < p.ih + p.pt);
        p.ow = ow + (it % 3 == 0 && ow * p.sw < p.iw + p.pl);
        R = p.ih * p.iw;
        P = p.oh * p.ow;
        x = rand_floats(&r, C * R);
        if (it % 7 == 0)
            x[tu_rng_range(&r, 0, C * R - 1)] = NAN;
        xb = chw8_blocks(x, C, R);
        for (int base = 0; base < 2; base++) {
            cpu_force_baseline(base);
            yl[base] = malloc(sizeof(float) * (size_t)(C * P));
            yb[base] = malloc(sizeof(float) * (size_t)(C8 * 8 * P));
            for (int64_t i = 0; i < C8 * 8 * P; i++)
                yb[base][i] = 12345.0f;
            /* Rows in two uneven parts, as threads would split them. */
            cpu_pool2d_rows(&p, x, yl[base], 0, C * p.oh / 3, 0);
            cpu_pool2d_rows(&p, x, yl[base], C * p.oh / 3, C * p.oh, 0);
            cpu_pool2d_rows(&p, xb, yb[base], 0, C8 * p.oh, C);
        }
        cpu_force_baseline(0);
        for (int64_t c = 0; c < C8 * 8 && ok; c++)
            for (int64_t q = 0; q < P && ok; q++) {
                const float b = yb[0][((c / 8) * P + q) * 8 + c % 8];
                if (c >= C) {
                    ok = b == 0.0f;
                    continue;
                }
                {
                    const double w = ref_pool2(&p, x + c * R, q / p.ow, q % p.ow);
                    const float l = yl[0][c * P + q];
                    ok = (isnan(w) ? isnan(l) : fabs(l - w) <= 1e-5 * (1 + fabs(w))) &&
                         (memcmp(&l, &b, sizeof l) == 0 || (isnan(l) && isnan(b)));
                    if (!ok)
                        fprintf(
                            stderr,
                            "pool2d case %d (%s, with_pad %d, %lldx%lld k %lldx%lld s "
                            "%lldx%lld d %lldx%lld pads %lld %lld %lld %lld): channel "
                            "%lld out %lld: LINEAR %.9g, CHW8 %.9g, want %.9g\n",
                            it, p.avg ? "avg" : "max", (int)p.with_pad, (long long)p.ih,
                            (long long)p.iw, (long long)p.kh, (long long)p.kw,
                            (long long)p.sh, (long long)p.sw, (long long)p.dh,
                            (long long)p.dw, (long long)p.pt, (long long)p.pl,
                            (long long)p.pb, (long long)p.pr, (long long)c, (long long)q,
                            l, b, w);
                }
            }
        CHECK(ok);
        CHECK(memcmp(yl[0], yl[1], sizeof(float) * (size_t)(C * P)) == 0);
        CHECK(memcmp(yb[0], yb[1], sizeof(float) * (size_t)(C8 * 8 * P)) == 0);
        free(x);
        free(xb);
        for (int base = 0; base < 2; base++) {
            free(yl[base]);
            free(yb[base]);
        }
    }
    return 0;
}

/* op_copy_strided (copy.c): random dims (size-1 and mergeable ones among
 * them) and strides of either sign, elements of 1, 2, 4, 8 and 3 bytes,
 * against a plain walk; on a pool of 3 threads with rows small enough to
 * be split, so each part finds its own start. */
static int test_copy_strided(void)
{
    tu_rng r;
    base_pool *pool = NULL, *prev;
    REQUIRE_OK(base_pool_create(3, &pool));
    prev = base_parallel_set_current(pool);
    tu_rng_seed(&r, 31);
    for (int it = 0; it < 300; it++) {
        static const size_t sizes[5] = {1, 2, 4, 8, 3};
        const size_t es = sizes[it % 5];
        const int32_t nd = (int32_t)tu_rng_range(&r, 1, 5);
        int64_t d[PRT_MAX_DIMS], s[PRT_MAX_DIMS], span = 1, lo = 0, n = 1, stride = 1;
        uint8_t *x, *y, *want;
        for (int32_t k = nd - 1; k >= 0; k--) {
            d[k] = tu_rng_range(&r, 1, it % 7 == 0 && k == nd - 1 ? 300 : 6);
            /* Contiguous, stepped or reversed, or a dim of the source's
             * own order (mergeable). */
            s[k] = tu_rng_range(&r, 0, 2) == 0 ? stride : stride * tu_rng_range(&r, 1, 3);
            if (tu_rng_range(&r, 0, 3) == 0)
                s[k] = -s[k];
            stride = (s[k] < 0 ? -s[k] : s[k]) * d[k];
            n *= d[k];
        }
        for (int32_t k = 0; k < nd; k++) {
            if (s[k] < 0)
                lo += s[k] * (d[k] - 1);
            span += (s[k] < 0 ? -s[k] : s[k]) * (d[k] - 1);
        }
        x = malloc(es * (size_t)span);
        y = malloc(es * (size_t)n);
        want = malloc(es * (size_t)n);
        REQUIRE(x && y && want);
        for (int64_t i = 0; i < (int64_t)es * span; i++)
            x[i] = (uint8_t)tu_rng_range(&r, 0, 255);
        for (int64_t i = 0; i < n; i++) {
            int64_t off = -lo, t = i;
            for (int32_t k = nd - 1; k >= 0; k--) {
                off += t % d[k] * s[k];
                t /= d[k];
            }
            memcpy(want + i * (int64_t)es, x + off * (int64_t)es, es);
        }
        op_copy_strided(y, x - lo * (int64_t)es, es, nd, d, s);
        CHECK(memcmp(y, want, es * (size_t)n) == 0);
        free(x);
        free(y);
        free(want);
    }
    base_parallel_set_current(prev);
    base_pool_destroy(pool);
    return 0;
}

/* op_tanh_f32 (tanh.c) against tanh in double: a dense range over [-12,
 * 12] (both sides of the 0.5 switch and of 9.1), tiny values, NaN,
 * infinities, signed zeros; in place and every tail; both builds, and the
 * AVX-512 build's bits where it runs. */
static int test_tanh(void)
{
    enum { N = 480007 };
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
    float *f = malloc(sizeof(float) * N);
    static const float sp[] = {NAN,    INFINITY, -INFINITY, -0.0f,     0.0f,
                               1e-30f, -1e-30f,  0.5f,      -0.5f,     9.1f,
                               -9.1f,  9.0f,     3.4e38f,   0x1p-149f, 0.49999997f};
    enum { NS = sizeof sp / sizeof sp[0] };
    float so[NS];
    REQUIRE(x && y && f);
    for (int i = 0; i < N; i++)
        x[i] = -12.0f + 24.0f * (float)i / (N - 1);
    for (int base = 0; base < 2; base++) {
        double worst = 0;
        cpu_force_baseline(base);
        op_tanh_f32(x, y, N);
        for (int i = 0; i < N; i++)
            worst = fmax(worst, ulps(y[i], tanh((double)x[i])));
        if (worst > 3)
            fprintf(stderr, "tanh (%s): %.3g ulp\n", base ? "baseline" : "best build",
                    worst);
        CHECK(worst <= 3);
        op_tanh_f32(sp, so, NS);
        check_map_builds(op_tanh_f32, x, y, f, N, sp, so, NS, base);
        CHECK(so[0] != so[0]);
        CHECK(so[1] == 1.0f && so[2] == -1.0f);
        CHECK(so[3] == 0 && signbit(so[3]) && so[4] == 0 && !signbit(so[4]));
        CHECK(so[5] == 1e-30f && so[6] == -1e-30f && so[13] == 0x1p-149f);
        CHECK(so[9] == 1.0f && so[10] == -1.0f && so[12] == 1.0f);
        for (int i = 7; i < NS; i++)
            CHECK(ulps(so[i], tanh((double)sp[i])) <= 3);
    }
    cpu_force_baseline(0);
    free(x);
    free(y);
    free(f);
    return 0;
}

/* ---- op_lut8 ---------------------------------------------------------------- */

/* op_lut8 in each build (0 the best there is: VBMI or AVX2, 1 AVX2, 2 the
 * plain loop) against table[x] for every length to 300 and a long one
 * (vectors of 32 and 64 and their tails), every byte value at every
 * position of a vector, random tables; bytes past n untouched. */
static int test_lut8(void)
{
    enum { N = 4133 };
    uint8_t table[256], *x = malloc(N), *y = malloc(N + 1);
    tu_rng r;
    REQUIRE(x && y);
    tu_rng_seed(&r, 8);
    for (int level = 0; level < 3; level++) {
        cpu_force_avx2(level == 1);
        cpu_force_baseline(level == 2);
        for (int t = 0; t < 4; t++) {
            for (int i = 0; i < 256; i++)
                table[i] = (uint8_t)tu_rng_range(&r, 0, 255);
            for (int i = 0; i < N; i++)
                x[i] = (uint8_t)(t == 0 ? (i * 7 + i / 256) & 255
                                        : tu_rng_range(&r, 0, 255));
            for (int64_t n = 0; n <= N; n = n < 300 ? n + 1 : N) {
                int64_t bad = -1;
                y[n] = 0xa5;
                op_lut8(table, x, y, n);
                for (int64_t i = 0; i < n && bad < 0; i++)
                    if (y[i] != table[x[i]])
                        bad = i;
                if (bad >= 0 || y[n] != 0xa5)
                    fprintf(stderr, "op_lut8 (level %d, n %lld): byte %lld wrong\n",
                            level, (long long)n, (long long)(bad >= 0 ? bad : n));
                CHECK(bad < 0 && y[n] == 0xa5);
                if (n == N)
                    break;
            }
        }
    }
    cpu_force_avx2(0);
    cpu_force_baseline(0);
    free(x);
    free(y);
    return 0;
}

/* ---- Attention's softmax rows ------------------------------------------------ */

/* op_attn_softmax_rows once in the build `level` forces (0 the best there
 * is, 1 AVX2, 2 the baseline) on a copy of s. */
static void attn_rows_in(int level, float *s, int64_t ld, int64_t rows, int64_t n,
                         int64_t i0, int causal, float scale, const float *madd,
                         const uint8_t *mbool, float *inv)
{
    cpu_force_avx2(level == 1);
    cpu_force_baseline(level == 2);
    op_attn_softmax_rows(s, ld, rows, n, i0, causal, scale, madd, mbool, n, inv);
    cpu_force_avx2(0);
    cpu_force_baseline(0);
}

/* The rows' softmax (the row's exponentials times inv) against double at
 * every length from 1 to 80 and ViT's, BERT's and GPT-2's lengths about
 * them (the rows' odd ends take masked vectors), with a float mask, a
 * bool mask, none, causal rows and fully masked rows; the columns past n
 * are not written; the AVX-512 build's bits are the AVX2 build's. */
static int test_attn_softmax(void)
{
    enum { ROWS = 3, PAD = 9 };
    static const int64_t extra[] = {97, 127, 128, 129, 196, 197, 200};
    tu_rng r;
    tu_rng_seed(&r, 2425);
    for (int li = 0; li < 80 + (int)(sizeof extra / sizeof extra[0]); li++) {
        const int64_t n = li < 80 ? li + 1 : extra[li - 80], ld = n + PAD;
        for (int mode = 0; mode < 4; mode++) { /* none, float, bool, causal */
            float *s0 = rand_floats(&r, ROWS * ld), *s[3], *madd = NULL;
            uint8_t *mbool = NULL;
            float inv[3][ROWS];
            const float scale = 0.35f;
            const int64_t i0 = n > 2 ? n / 2 - 1 : 0;
            REQUIRE(s0);
            for (int64_t k = 0; k < ROWS * ld; k++)
                s0[k] *= 8.0f;
            if (mode == 1) {
                madd = rand_floats(&r, ROWS * n);
                REQUIRE(madd);
                for (int64_t k = 0; k < ROWS * n; k += 3)
                    madd[k] = -1e4f;
            } else if (mode == 2) {
                mbool = malloc((size_t)(ROWS * n));
                REQUIRE(mbool);
                for (int64_t k = 0; k < ROWS * n; k++)
                    mbool[k] = (uint8_t)(k % 4 != 1 && k >= n); /* row 0: none kept */
            }
            for (int lv = 0; lv < 3; lv++) {
                s[lv] = malloc(sizeof(float) * (size_t)(ROWS * ld));
                REQUIRE(s[lv]);
                memcpy(s[lv], s0, sizeof(float) * (size_t)(ROWS * ld));
                attn_rows_in(lv, s[lv], ld, ROWS, n, i0, mode == 3, scale, madd, mbool,
                             inv[lv]);
            }
            if (cpu_avx2()) {
                int same = memcmp(s[0], s[1], sizeof(float) * (size_t)(ROWS * ld)) == 0 &&
                           memcmp(inv[0], inv[1], sizeof inv[0]) == 0;
                if (!same)
                    fprintf(stderr,
                            "attn softmax: n %lld mode %d: AVX-512 and AVX2 differ\n",
                            (long long)n, mode);
                CHECK(same);
            }
            for (int lv = 0; lv < 3; lv++)
                for (int64_t i = 0; i < ROWS; i++) {
                    const float *row = s[lv] + i * ld, *in = s0 + i * ld;
                    const int64_t lim = mode == 3 && i0 + i + 1 < n ? i0 + i + 1 : n;
                    double x[200], mx = -INFINITY, sum = 0;
                    int bad = 0;
                    for (int64_t j = 0; j < lim; j++) {
                        x[j] = (double)in[j] * scale;
                        if (madd)
                            x[j] += madd[i * n + j];
                        if (mbool && !mbool[i * n + j])
                            x[j] = -INFINITY;
                        mx = fmax(mx, x[j]);
                    }
                    for (int64_t j = ld - PAD; j < ld; j++)
                        bad |= memcmp(&row[j], &in[j], sizeof(float)) != 0;
                    if (mx == -INFINITY) { /* every key masked: the caller's */
                        CHECK(inv[lv][i] == 0.0f && !bad);
                        continue;
                    }
                    for (int64_t j = 0; j < lim; j++)
                        sum += exp(x[j] - mx);
                    for (int64_t j = 0; j < n; j++) {
                        double want = j < lim ? exp(x[j] - mx) / sum : 0.0;
                        bad |= !(fabs((double)row[j] * inv[lv][i] - want) <= 2e-6);
                    }
                    if (bad)
                        fprintf(
                            stderr,
                            "attn softmax: n %lld mode %d build %d row %lld differs\n",
                            (long long)n, mode, lv, (long long)i);
                    CHECK(!bad);
                }
            for (int lv = 0; lv < 3; lv++)
                free(s[lv]);
            free(s0);
            free(madd);
            free(mbool);
        }
    }
    return 0;
}

int main(void)
{
    test_tanh();
    test_lut8();
    test_copy_strided();
    test_pool2d();
    test_chw8_kernels();
    test_gemm_panels_avx512();
    test_row_kernels();
    test_row_means();
    test_act();
    test_binary_kernels();
    test_sigmoid();
    test_gelu();
    test_attn_softmax();
    test_gemv();
    test_gemm_nn();
    test_conv_activation_fields();
    test_conv_paths();
    test_conv_pointwise_batch();
    test_conv_im2col_batch();
    return tu_finish("test_cpu_kernels");
}
