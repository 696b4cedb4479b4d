/*
 * Conv with a residual input Z (field residual, ops/conv.c): Y = act(conv(X,
 * W) + B + Z) is, bit for bit, the unfused Conv, then Add(., Z), then the
 * activation, on every CPU path (pointwise, pointwise images side by side,
 * depthwise, depthwise eight at a time, direct, im2col, im2col side by
 * side; 1 and 2 spatial dims) and in the blocked format CHW8 (pointwise,
 * depthwise, the direct kind), with and without a bias and an activation,
 * on one thread and several, and after a round trip through bytes. A Z of
 * other dims fails the build naming it, and a bad residual field is
 * refused.
 *
 * Each case builds two networks over inputs X and Zin (a = X + X and
 * z = Zin + Zin, so that in a blocked engine both are CHW8 tensors inside
 * it): the reference S = Add(Conv(a, W, B), z), whose activation is
 * applied here with the same float operations as the kernels' (op_act.h),
 * doubled; and the fused Y = Add(y, y) of y = Conv(a, W, B, z; residual 1,
 * activation). Doubling is exact, so the two must be the same bits.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_testutil.h"

#define MAXC 8

typedef struct rnet {
    prt_network *net;
    float *consts[MAXC];
    int nb_consts;
    int failed;
} rnet;

static int64_t vol(const prt_dims *d)
{
    int64_t n = 1;
    for (int32_t i = 0; i < d->nb_dims; i++)
        n *= d->d[i];
    return n;
}

/* A float32 constant of values v (copied; kept until the build is done). */
static int32_t rn_const(rnet *b, prt_dims d, const float *v)
{
    int64_t n = vol(&d);
    float *c = malloc(sizeof(float) * (size_t)(n ? n : 1));
    int32_t id = -1;
    char nm[24];
    if (!c || b->nb_consts == MAXC) {
        free(c);
        b->failed = 1;
        return -1;
    }
    memcpy(c, v, sizeof(float) * (size_t)n);
    b->consts[b->nb_consts++] = c;
    snprintf(nm, sizeof nm, "c%d", b->nb_consts);
    if (prt_network_add_constant(b->net, nm, PRT_FLOAT32, &d, c, &id) != PRT_OK)
        b->failed = 1;
    return id;
}

static int32_t rn_op(rnet *b, const char *op, const prt_field *f, int32_t nf,
                     const int32_t *in, int32_t nin, const char *name)
{
    prt_plugin *p = NULL;
    int32_t l, y = -1;
    if (b->failed || ot_make_op(op, f, nf, &p) != PRT_OK ||
        prt_network_add_plugin(b->net, in, nin, NULL, 0, p, &l) != PRT_OK ||
        prt_network_get_layer_output(b->net, l, 0, &y) != PRT_OK ||
        prt_network_set_tensor_name(b->net, y, name) != PRT_OK) {
        b->failed = 1;
        return -1;
    }
    return y;
}

static void rn_free(rnet *b)
{
    prt_network_destroy(b->net);
    for (int i = 0; i < b->nb_consts; i++)
        free(b->consts[i]);
    memset(b, 0, sizeof *b);
}

/* One case's shapes and fields. */
typedef struct rcase {
    const char *what;
    int32_t ns; /* 1 or 2 spatial dims */
    int64_t N, C, M, H, W;
    int32_t k, stride, group, pad;
    int bias;
    const char *act; /* NULL: none */
    float params[2];
    int32_t nb_params;
} rcase;

static int64_t out_size(int64_t d, int32_t k, int32_t s, int32_t p)
{
    return (d + 2 * p - k) / s + 1;
}

/* The network: fused (Y) or the reference (S). */
static int make(rnet *b, const rcase *c, int fused, int tail, const float *w,
                const float *bias, const float *wa, const float *wz, prt_dims xd,
                prt_dims zd, prt_dims wd)
{
    const int32_t ks[2] = {c->k, c->k}, st[2] = {c->stride, c->stride};
    const int32_t pads[4] = {c->pad, c->pad, c->pad, c->pad}, one = 1;
    prt_field f[8];
    int32_t nf = 0, x, zi, in[4], nin = 0, a, z, y;
    prt_dims bd = D1(c->M);
    memset(b, 0, sizeof *b);
    REQUIRE_OK(prt_network_create(&b->net));
    REQUIRE_OK(prt_network_add_input(b->net, "X", PRT_FLOAT32, &xd, &x));
    REQUIRE_OK(prt_network_add_input(b->net, "Zin", PRT_FLOAT32, &zd, &zi));
    f[nf++] = ot_fld_i32("kernel_shape", ks + 2 - c->ns, c->ns);
    f[nf++] = ot_fld_i32("strides", st + 2 - c->ns, c->ns);
    f[nf++] = ot_fld_i32("pads", pads, 2 * c->ns);
    f[nf++] = ot_fld_i32("group", &c->group, 1);
    if (fused) {
        f[nf++] = ot_fld_i32("residual", &one, 1);
        if (c->act) {
            f[nf++] = ot_fld_str("activation", c->act);
            if (c->nb_params)
                f[nf++] = (prt_field){"activation_params", c->params, PRT_FIELD_FLOAT32,
                                      c->nb_params};
        }
    }
    /* 1x1 convolutions from the LINEAR inputs: their outputs may be CHW8. */
    in[0] = x;
    in[1] = rn_const(b, c->ns == 2 ? D4(c->C, c->C, 1, 1) : D3(c->C, c->C, 1), wa);
    a = rn_op(b, "Conv", NULL, 0, in, 2, "a");
    in[0] = zi;
    in[1] = rn_const(b, c->ns == 2 ? D4(c->M, c->M, 1, 1) : D3(c->M, c->M, 1), wz);
    z = rn_op(b, "Conv", NULL, 0, in, 2, "z");
    in[nin++] = a;
    in[nin++] = rn_const(b, wd, w);
    if (c->bias)
        in[nin++] = rn_const(b, bd, bias);
    if (fused)
        in[nin++] = z;
    y = rn_op(b, "Conv", f, nf, in, nin, fused ? "y" : "c");
    if (!tail) {
        in[0] = y;
        in[1] = fused ? y : z;
        y = rn_op(b, "Add", NULL, 0, in, 2, "Y");
    } else {
        /* Blocked: the unfused layers as layers (Add, the activation's
         * op), then in both a 1x1 convolution, which takes CHW8 in and
         * gives the LINEAR output. */
        if (!fused) {
            in[0] = y;
            in[1] = z;
            y = rn_op(b, "Add", NULL, 0, in, 2, "s");
            if (c->act && strcmp(c->act, "Clip") == 0) {
                in[0] = y;
                in[1] = rn_const(b, D0(), &c->params[0]);
                in[2] = rn_const(b, D0(), &c->params[1]);
                y = rn_op(b, "Clip", NULL, 0, in, 3, "t");
            } else if (c->act) {
                prt_field fa = ot_fld_f32("alpha", &c->params[0]);
                y = rn_op(b, c->act, &fa, strcmp(c->act, "LeakyRelu") == 0, &y, 1, "t");
            }
        }
        in[0] = y;
        in[1] = rn_const(b, D4(c->M, c->M, 1, 1), wz);
        y = rn_op(b, "Conv", NULL, 0, in, 2, "Y");
    }
    REQUIRE(!b->failed);
    REQUIRE_OK(prt_network_mark_output(b->net, y));
    return 0;
}

static prt_status build(const rnet *b, int blocked, prt_engine **e)
{
    prt_builder_config *cfg = NULL;
    prt_status st = prt_builder_config_create(&cfg);
    if (!st)
        st = prt_builder_config_set_blocked_formats(cfg, blocked);
    if (!st)
        st = prt_engine_build(b->net, cfg, NULL, e);
    prt_builder_config_destroy(cfg);
    return st;
}

static prt_status run(const prt_engine *e, const ot_tensor *x, const ot_tensor *z,
                      int32_t threads, ot_tensor *y)
{
    prt_context *ctx = NULL;
    prt_context_options opt = {.struct_size = sizeof opt, .threads = threads};
    prt_dims yd;
    prt_status st = prt_context_create_with_options(e, &opt, &ctx);
    y->data = NULL;
    if (!st)
        st = prt_context_set_tensor_address(ctx, "X", x->data);
    if (!st)
        st = prt_context_set_tensor_address(ctx, "Zin", z->data);
    if (!st)
        st = prt_context_get_tensor_shape(ctx, "Y", &yd);
    if (!st) {
        *y = ot_make(PRT_FLOAT32, yd);
        st = y->data ? PRT_OK : PRT_ERR_OUT_OF_MEMORY;
    }
    if (!st)
        st = prt_context_set_tensor_address(ctx, "Y", y->data);
    if (!st)
        st = prt_context_enqueue(ctx, NULL);
    prt_context_destroy(ctx);
    return st;
}

/* The activation on s as the kernels compute it (op_act.h). */
static float act_of(const rcase *c, float s)
{
    if (!c->act)
        return s;
    if (strcmp(c->act, "Relu") == 0)
        return s < 0.0f ? 0.0f : s;
    if (strcmp(c->act, "LeakyRelu") == 0)
        return s < 0.0f ? c->params[0] * s : s;
    if (strcmp(c->act, "Clip") == 0) {
        s = s < c->params[0] ? c->params[0] : s;
        return s > c->params[1] ? c->params[1] : s;
    }
    return NAN;
}

static int g_blocked; /* cases whose Z and Y were CHW8 */

/* The format of e's tensor `name`, -1 if there is none. */
static int32_t format_of(const prt_engine *e, const char *name)
{
    for (int32_t t = 0; t < prt_engine_tensor_count(e); t++) {
        prt_tensor_info ti = {.struct_size = sizeof ti};
        if (prt_engine_get_tensor(e, t, &ti) == PRT_OK && ti.name &&
            strcmp(ti.name, name) == 0)
            return ti.format;
    }
    return -1;
}

static void one_case(const rcase *c, int blocked)
{
    tu_rng rng;
    const int64_t OH = c->ns == 2 ? out_size(c->H, c->k, c->stride, c->pad) : 1;
    const int64_t OW = out_size(c->W, c->k, c->stride, c->pad);
    prt_dims xd = c->ns == 2 ? D4(c->N, c->C, c->H, c->W) : D3(c->N, c->C, c->W);
    prt_dims zd = c->ns == 2 ? D4(c->N, c->M, OH, OW) : D3(c->N, c->M, OW);
    prt_dims wd = c->ns == 2 ? D4(c->M, c->C / c->group, c->k, c->k)
                             : D3(c->M, c->C / c->group, c->k);
    ot_tensor x, z, w, bias, wa, wz, s = {0}, y = {0}, y1 = {0}, yr = {0};
    prt_engine *ef = NULL, *er = NULL, *eb = NULL;
    rnet rf, rr;
    char what[160];
    snprintf(what, sizeof what, "%s, %s%s, act %s, %s", c->what,
             c->bias ? "bias" : "no bias", "", c->act ? c->act : "none",
             blocked ? "blocked" : "linear");
    tu_rng_seed(&rng, 7);
    x = ot_random(PRT_FLOAT32, xd, &rng, 0);
    z = ot_random(PRT_FLOAT32, zd, &rng, 0);
    w = ot_random(PRT_FLOAT32, wd, &rng, 0);
    bias = ot_random(PRT_FLOAT32, D1(c->M), &rng, 0);
    wa = ot_random(PRT_FLOAT32, D1(c->C * c->C), &rng, 0);
    wz = ot_random(PRT_FLOAT32, D1(c->M * c->M), &rng, 0);
    if (make(&rf, c, 1, blocked, w.data, bias.data, wa.data, wz.data, xd, zd, wd) ||
        make(&rr, c, 0, blocked, w.data, bias.data, wa.data, wz.data, xd, zd, wd))
        goto done;
    CHECK_OK(build(&rf, blocked, &ef));
    CHECK_OK(build(&rr, blocked, &er));
    if (!ef || !er)
        goto done;
    /* Z and Y share one format; where the kernels take blocks, both are
     * CHW8 (counted: pointwise, depthwise and the direct kind must). */
    if (blocked) {
        const int32_t fz = format_of(ef, "z"), fy = format_of(ef, "y");
        CHECK(fz == fy);
        g_blocked += fz == PRT_FORMAT_CHW8 && fy == PRT_FORMAT_CHW8;
    }
    CHECK_OK(run(er, &x, &z, 0, &s));
    CHECK_OK(run(ef, &x, &z, 0, &y));
    CHECK_OK(run(ef, &x, &z, 1, &y1));
    CHECK_OK(ot_reload(ef, &eb));
    if (eb)
        CHECK_OK(run(eb, &x, &z, 0, &yr));
    if (s.data && y.data && y1.data && yr.data) {
        const int64_t n = vol(&zd);
        double *want = malloc(sizeof(double) * (size_t)n);
        CHECK(want);
        for (int64_t i = 0; want && i < n; i++) {
            const float a = act_of(c, ((const float *)s.data)[i]);
            /* Blocked: the reference network's own output. */
            want[i] = blocked ? (double)((const float *)s.data)[i] : (double)(a + a);
        }
        if (want) {
            ot_check_close(what, &y, &zd, want, 0.0);
            ot_check_close(what, &y1, &zd, want, 0.0);
            ot_check_close(what, &yr, &zd, want, 0.0);
        }
        free(want);
    }
done:
    prt_engine_destroy(ef);
    prt_engine_destroy(er);
    prt_engine_destroy(eb);
    rn_free(&rf);
    rn_free(&rr);
    ot_free(&x);
    ot_free(&z);
    ot_free(&w);
    ot_free(&bias);
    ot_free(&wa);
    ot_free(&wz);
    ot_free(&s);
    ot_free(&y);
    ot_free(&y1);
    ot_free(&yr);
}

/* The paths (conv.c's list) by shape, each with every activation, with and
 * without a bias, planes and blocks. */
static void path_cases(void)
{
    static const rcase shapes[] = {
        {"pointwise", 2, 1, 16, 24, 9, 11, 1, 1, 1, 0, 1, NULL, {0}, 0},
        {"pointwise images side by side",
         2,
         3,
         16,
         20,
         5,
         5,
         1,
         1,
         1,
         0,
         1,
         NULL,
         {0},
         0},
        {"depthwise 3x3", 2, 2, 12, 12, 10, 9, 3, 1, 12, 1, 1, NULL, {0}, 0},
        {"depthwise 3x3 stride 2", 2, 1, 16, 16, 11, 12, 3, 2, 16, 1, 1, NULL, {0}, 0},
        {"depthwise8 5x5 stride 2", 2, 2, 10, 10, 13, 12, 5, 2, 10, 2, 1, NULL, {0}, 0},
        {"direct 3x3, few channels", 2, 2, 3, 13, 12, 10, 3, 1, 1, 1, 1, NULL, {0}, 0},
        {"direct, groups", 2, 1, 16, 16, 9, 9, 3, 1, 4, 1, 1, NULL, {0}, 0},
        {"im2col 3x3", 2, 2, 16, 21, 14, 15, 3, 1, 1, 1, 1, NULL, {0}, 0},
        {"im2col images side by side", 2, 4, 24, 16, 7, 7, 3, 1, 1, 1, 1, NULL, {0}, 0},
        {"im2col 3x3 stride 2", 2, 2, 16, 12, 13, 14, 3, 2, 1, 1, 1, NULL, {0}, 0},
        {"1-D im2col", 1, 2, 12, 10, 1, 30, 3, 1, 1, 1, 1, NULL, {0}, 0},
        {"1-D pointwise", 1, 2, 12, 10, 1, 30, 1, 1, 1, 0, 1, NULL, {0}, 0},
        {"1-D depthwise", 1, 2, 12, 12, 1, 30, 5, 1, 12, 2, 1, NULL, {0}, 0},
    };
    static const struct {
        const char *name;
        float p[2];
        int32_t np;
    } acts[] = {{NULL, {0}, 0},
                {"Relu", {0}, 0},
                {"LeakyRelu", {0.125f, 0}, 1},
                {"Clip", {0.25f, 0.75f}, 2}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        for (size_t a = 0; a < sizeof acts / sizeof *acts; a++)
            for (int bias = 0; bias < 2; bias++)
                for (int blocked = 0; blocked < 2; blocked++) {
                    rcase c = shapes[i];
                    /* Blocks take 2-D convolutions only. */
                    if (blocked && c.ns != 2)
                        continue;
                    c.bias = bias;
                    c.act = acts[a].name;
                    c.params[0] = acts[a].p[0];
                    c.params[1] = acts[a].p[1];
                    c.nb_params = acts[a].np;
                    one_case(&c, blocked);
                }
}

/* float16: the fused op rounds the Conv's output, then the sum, then the
 * activation to float16, as the Conv, Add and activation layers would:
 * checked against the unfused Conv's float16 output with the rest done
 * here (ot_set rounds to half). */
static void f16_cases(void)
{
    static const struct {
        int32_t k, pad, group;
        int64_t C, M;
    } shapes[] = {{1, 0, 1, 8, 12}, {3, 1, 1, 8, 12}, {3, 1, 8, 8, 8}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        for (int act = 0; act < 2; act++) {
            const int32_t ks[2] = {shapes[i].k, shapes[i].k}, one = 1;
            const int32_t pads[4] = {shapes[i].pad, shapes[i].pad, shapes[i].pad,
                                     shapes[i].pad};
            prt_field f[6] = {
                ot_fld_i32("kernel_shape", ks, 2), ot_fld_i32("pads", pads, 4),
                ot_fld_i32("group", &shapes[i].group, 1), ot_fld_i32("residual", &one, 1),
                ot_fld_str("activation", "Relu")};
            const prt_dims yd = D4(2, shapes[i].M, 6, 7);
            ot_tensor in[4], u = {0}, y = {0}, h = ot_make(PRT_FLOAT16, D1(1));
            double *want = malloc(sizeof(double) * 2 * 12 * 6 * 7);
            tu_rng rng;
            tu_rng_seed(&rng, 11);
            in[0] = ot_random(PRT_FLOAT16, D4(2, shapes[i].C, 6, 7), &rng, 0);
            in[1] = ot_random(
                PRT_FLOAT16,
                D4(shapes[i].M, shapes[i].C / shapes[i].group, shapes[i].k, shapes[i].k),
                &rng, 0);
            in[2] = ot_random(PRT_FLOAT16, D1(shapes[i].M), &rng, 0);
            in[3] = ot_random(PRT_FLOAT16, yd, &rng, 0);
            CHECK(want != NULL);
            CHECK_OK(ot_run_op("Conv", f, 3, in, 3, &u));
            CHECK_OK(ot_run_op("Conv", f, act ? 5 : 4, in, 4, &y));
            for (int64_t j = 0; want && u.data && j < vol(&yd); j++) {
                double v;
                ot_set(&h, 0, ot_get(&u, j) + ot_get(&in[3], j));
                v = ot_get(&h, 0);
                want[j] = act && v < 0 ? 0.0 : v;
            }
            if (want && u.data && y.data)
                ot_check_close(act ? "float16, Relu" : "float16", &y, &yd, want, 0.0);
            free(want);
            for (int k = 0; k < 4; k++)
                ot_free(&in[k]);
            ot_free(&u);
            ot_free(&y);
            ot_free(&h);
        }
}

/* A Z of other dims than Y fails the build naming the residual input; a
 * residual field other than 0 or 1, or one without a Z, is refused. */
static void error_cases(void)
{
    const int32_t ks[2] = {1, 1}, one = 1, two = 2;
    prt_field f[2] = {ot_fld_i32("kernel_shape", ks, 2), ot_fld_i32("residual", &one, 1)};
    ot_tensor in[3], y = {0};
    prt_plugin *p = NULL;
    tu_rng rng;
    tu_rng_seed(&rng, 3);
    in[0] = ot_random(PRT_FLOAT32, D4(1, 4, 5, 5), &rng, 0);
    in[1] = ot_random(PRT_FLOAT32, D4(6, 4, 1, 1), &rng, 0);
    in[2] = ot_random(PRT_FLOAT32, D4(1, 6, 5, 4), &rng, 0);
    CHECK_ERR(ot_run_op("Conv", f, 2, in, 3, &y), PRT_ERR_SHAPE,
              "the residual input Z (input 2) has 4 in dim 3 but Y has 5");
    ot_free(&y);
    ot_free(&in[2]);
    in[2] = ot_random(PRT_FLOAT32, D3(1, 6, 25), &rng, 0);
    CHECK_ERR(ot_run_op("Conv", f, 2, in, 3, &y), PRT_ERR_SHAPE,
              "the residual input Z (input 2) has rank 3 but Y has rank 4");
    ot_free(&y);
    /* residual with X and W alone: no Z. */
    CHECK_ERR(ot_run_op("Conv", f, 2, in, 2, &y), PRT_ERR_INVALID_ARGUMENT,
              "residual is set but there is no Z after X and W");
    ot_free(&y);
    {
        /* Every field given (nine; the plan keeps eight: SAME's zero pads
         * go), through a reload (ot_run_op), the same as without Z plus
         * Z then LeakyRelu. */
        const int32_t k3[2] = {3, 3}, s1[2] = {1, 1}, p0[4] = {0, 0, 0, 0}, g1 = 1;
        const float alpha = 0.25f;
        prt_field a[9] = {
            ot_fld_str("auto_pad", "SAME_UPPER"),   ot_fld_i32("pads", p0, 4),
            ot_fld_i32("dilations", s1, 2),         ot_fld_i32("kernel_shape", k3, 2),
            ot_fld_i32("strides", s1, 2),           ot_fld_i32("group", &g1, 1),
            ot_fld_i32("residual", &one, 1),        ot_fld_str("activation", "LeakyRelu"),
            ot_fld_f32("activation_params", &alpha)};
        ot_tensor u = {0}, zz = ot_random(PRT_FLOAT32, D4(1, 6, 5, 5), &rng, 0);
        ot_tensor in4[3] = {in[0], ot_random(PRT_FLOAT32, D4(6, 4, 3, 3), &rng, 0), zz};
        CHECK_OK(ot_run_op("Conv", a, 6, in4, 2, &u));
        CHECK_OK(ot_run_op("Conv", a, 9, in4, 3, &y));
        if (u.data && y.data) {
            double want[150];
            for (int64_t i = 0; i < 150; i++) {
                const float v = ((const float *)u.data)[i] + ((const float *)zz.data)[i];
                want[i] = v < 0 ? alpha * v : v;
            }
            ot_check_close("every field, SAME_UPPER", &y, &zz.dims, want, 0.0);
        }
        ot_free(&u);
        ot_free(&y);
        ot_free(&in4[1]);
        ot_free(&zz);
    }
    f[1] = ot_fld_i32("residual", &two, 1);
    CHECK_ERR(ot_make_op("Conv", f, 2, &p), PRT_ERR_INVALID_ARGUMENT,
              "residual is 2; it must be 0 or 1");
    for (int k = 0; k < 3; k++)
        ot_free(&in[k]);
}

int main(void)
{
    path_cases();
    /* 3 kinds x 3 shapes at least (pointwise, depthwise, direct) x 8. */
    CHECK(g_blocked >= 24);
    f16_cases();
    error_cases();
    return tu_finish("test_conv_residual");
}
