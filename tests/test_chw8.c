/*
 * The blocked format CHW8 inside CPU engines (plugin.h, formats.c): the
 * builder gives it to the tensors between the convolutions, pooling and
 * element-wise ops that take it, never to inputs, outputs or tensors a
 * LINEAR-only plugin reads; and an engine with it computes what the same
 * network built all LINEAR (prt_builder_config_set_blocked_formats 0)
 * computes, at channel counts that are not multiples of 8, in batches, on
 * any number of threads, and after a round trip through bytes; max and
 * average pools between blocked convolutions read and write blocks.
 */
#include <math.h>
#include <stdlib.h>

#include "op_testutil.h"

#define MAXC 64 /* constants one network holds */

static int64_t vol(const prt_dims *d)
{
    int64_t n = 1;
    for (int32_t i = 0; i < d->nb_dims; i++)
        n *= d->d[i];
    return n;
}

typedef struct netb {
    prt_network *net;
    tu_rng rng;
    float *consts[MAXC];
    int nb_consts;
    int failed;
} netb;

/* A random float32 constant (kept until the build is done). */
static int32_t nb_const(netb *b, prt_dims d, double scale)
{
    int64_t n = vol(&d);
    float *v = malloc(sizeof(float) * (size_t)(n ? n : 1));
    int32_t id = -1;
    char nm[24];
    if (!v || b->nb_consts == MAXC) {
        free(v);
        b->failed = 1;
        return -1;
    }
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)((tu_rng_uniform(&b->rng) * 2 - 1) * scale);
    b->consts[b->nb_consts++] = v;
    snprintf(nm, sizeof nm, "c%d", b->nb_consts);
    if (prt_network_add_constant(b->net, nm, PRT_FLOAT32, &d, v, &id) != PRT_OK)
        b->failed = 1;
    return id;
}

/* One built-in layer; its output's id, named `name`. */
static int32_t nb_op(netb *b, const char *op, const prt_field *f, int32_t nf,
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

/* Conv of x (cin channels) into cout, a k x k kernel, with bias. */
static int32_t nb_conv(netb *b, int32_t x, int64_t cin, int64_t cout, int32_t k,
                       int32_t stride, int32_t group, const char *act, const char *name)
{
    const int32_t ks[2] = {k, k}, st[2] = {stride, stride};
    const int32_t pads[4] = {k / 2, k / 2, k / 2, k / 2};
    prt_field f[5];
    int32_t nf = 0, in[3];
    f[nf++] = ot_fld_i32("kernel_shape", ks, 2);
    f[nf++] = ot_fld_i32("strides", st, 2);
    f[nf++] = ot_fld_i32("pads", pads, 4);
    f[nf++] = ot_fld_i32("group", &group, 1);
    if (act)
        f[nf++] = ot_fld_str("activation", act);
    in[0] = x;
    in[1] = nb_const(b, D4(cout, cin / group, k, k),
                     1.0 / sqrt((double)(cin / group * k * k)));
    in[2] = nb_const(b, D1(cout), 0.5);
    return nb_op(b, "Conv", f, nf, in, 3, name);
}

static void nb_free(netb *b)
{
    prt_network_destroy(b->net);
    for (int i = 0; i < b->nb_consts; i++)
        free(b->consts[i]);
}

/* An inverted-residual block as MobileNet-v3 has them, then a residual Add,
 * a LINEAR-only consumer where `plugin` is set (AddInPlace), and two
 * outputs: a convolution's and a pool's.
 *   X [N, C, H, W] -> a = conv(C, fk x fk at stride fs: pointwise, or of
 *   few channels as a first layer) -> e = pw(M, Relu) -> d = dw(k, s,
 *   HardSwish) -> s = HardSigmoid(pw(M, GAP(d))) -> m = s * d -> p = pw(C)
 *   -> r = p + a' (a' = a at stride 1, else pw(C) of a pooled copy: none) ->
 *   Y = pw(C) of r; P = GAP(r). */
static int make_net(netb *b, int64_t C, int64_t M, int32_t k, int32_t stride, int32_t fk,
                    int32_t fs, const prt_dims *xd, const prt_plugin_creator *inplace)
{
    int32_t x, a, e, d, g, s, m, p, r, y, pool, in2[2];
    memset(b, 0, sizeof *b);
    tu_rng_seed(&b->rng, 42);
    REQUIRE_OK(prt_network_create(&b->net));
    REQUIRE_OK(prt_network_add_input(b->net, "X", PRT_FLOAT32, xd, &x));
    a = nb_conv(b, x, C, C, fk, fs, 1, "HardSwish", "a");
    e = nb_conv(b, a, C, M, 1, 1, 1, "Relu", "e");
    d = nb_conv(b, e, M, M, k, stride, (int32_t)M, "HardSwish", "d");
    g = nb_op(b, "GlobalAveragePool", NULL, 0, &d, 1, "g");
    s = nb_conv(b, g, M, M, 1, 1, 1, "HardSigmoid", "s");
    in2[0] = s;
    in2[1] = d;
    m = nb_op(b, "Mul", NULL, 0, in2, 2, "m");
    p = nb_conv(b, m, M, C, 1, 1, 1, NULL, "p");
    r = p;
    if (stride == 1) {
        in2[0] = p;
        in2[1] = a;
        r = nb_op(b, "Add", NULL, 0, in2, 2, "r");
    }
    if (inplace && !b->failed) {
        /* AddInPlace(r, r2) reads r2 in LINEAR only: its producer must give
         * LINEAR, while r's other consumers need not. */
        int32_t r2 = nb_conv(b, r, C, C, 1, 1, 1, NULL, "r2"), l;
        prt_plugin *pl = NULL;
        prt_field_collection fc = {0, NULL};
        in2[0] = r2;
        in2[1] = r;
        if (r2 < 0 || inplace->create(inplace, "inplace", &fc, PRT_PHASE_BUILD, &pl) ||
            prt_network_add_plugin(b->net, in2, 2, NULL, 0, pl, &l) ||
            prt_network_get_layer_output(b->net, l, 0, &r) ||
            prt_network_set_tensor_name(b->net, r, "ri"))
            b->failed = 1;
    }
    y = nb_conv(b, r, C, C, 1, 1, 1, NULL, "Y");
    pool = nb_op(b, "GlobalAveragePool", NULL, 0, &r, 1, "P");
    REQUIRE(!b->failed);
    REQUIRE_OK(prt_network_mark_output(b->net, y));
    REQUIRE_OK(prt_network_mark_output(b->net, pool));
    return 0;
}

static prt_status build(const netb *b, int blocked, const prt_dims *xmin,
                        const prt_dims *xmax, prt_engine **e)
{
    prt_builder_config *cfg = NULL;
    prt_status st = prt_builder_config_create(&cfg);
    int32_t prof;
    if (!st)
        st = prt_builder_config_set_blocked_formats(cfg, blocked);
    if (!st && xmin) {
        st = prt_builder_config_add_profile(cfg, &prof);
        if (!st)
            st = prt_builder_config_set_profile_dims(cfg, prof, "X", xmin, xmax, xmax);
    }
    if (!st)
        st = prt_engine_build(b->net, cfg, NULL, e);
    prt_builder_config_destroy(cfg);
    return st;
}

/* Runs e on x; Y and P into y and pl (made here). */
static prt_status run(const prt_engine *e, const ot_tensor *x, int32_t threads,
                      ot_tensor *y, ot_tensor *pl)
{
    prt_context *ctx = NULL;
    prt_context_options opt = {.struct_size = sizeof opt, .threads = threads};
    prt_dims yd, pd;
    prt_status st = prt_context_create_with_options(e, &opt, &ctx);
    y->data = pl->data = NULL;
    if (!st)
        st = prt_context_set_input_shape(ctx, "X", &x->dims);
    if (!st)
        st = prt_context_set_tensor_address(ctx, "X", x->data);
    if (!st)
        st = prt_context_get_tensor_shape(ctx, "Y", &yd);
    if (!st)
        st = prt_context_get_tensor_shape(ctx, "P", &pd);
    if (!st) {
        *y = ot_make(PRT_FLOAT32, yd);
        *pl = ot_make(PRT_FLOAT32, pd);
        st = y->data && pl->data ? PRT_OK : PRT_ERR_OUT_OF_MEMORY;
    }
    if (!st)
        st = prt_context_set_tensor_address(ctx, "Y", y->data);
    if (!st)
        st = prt_context_set_tensor_address(ctx, "P", pl->data);
    if (!st)
        st = prt_context_enqueue(ctx, NULL);
    prt_context_destroy(ctx);
    return st;
}

/* CHW8 tensors of e; checks that inputs and outputs are LINEAR and that
 * `linear_name` (when set) is too. */
static int count_blocked(const prt_engine *e, const char *linear_name)
{
    int n = 0;
    for (int32_t i = 0; i < prt_engine_tensor_count(e); i++) {
        prt_tensor_info t = {.struct_size = sizeof t};
        CHECK_OK(prt_engine_get_tensor(e, i, &t));
        if (t.format != PRT_FORMAT_CHW8)
            continue;
        n++;
        CHECK(t.kind == PRT_TENSOR_ACTIVATION);
        CHECK(t.dtype == PRT_FLOAT32 && t.dims.nb_dims == 4);
        /* The arena holds whole blocks of eight channels. */
        if (t.dims.d[1] > 0 && t.dims.d[0] > 0)
            CHECK(t.max_bytes >= (int64_t)sizeof(float) * t.dims.d[0] *
                                     ((t.dims.d[1] + 7) / 8 * 8) * t.dims.d[2] *
                                     t.dims.d[3]);
        if (linear_name)
            CHECK(strcmp(t.name, linear_name) != 0);
    }
    return n;
}

/* The format of tensor `name` in e (-1: not found). */
static int32_t format_of(const prt_engine *e, const char *name)
{
    for (int32_t i = 0; i < prt_engine_tensor_count(e); i++) {
        prt_tensor_info t = {.struct_size = sizeof t};
        if (prt_engine_get_tensor(e, i, &t) == PRT_OK && strcmp(t.name, name) == 0)
            return t.format;
    }
    return -1;
}

static void check_same(const char *what, const ot_tensor *got, const ot_tensor *want)
{
    double *w = malloc(sizeof(double) * (size_t)(vol(&want->dims) + 1));
    if (!w) {
        CHECK(w != NULL);
        return;
    }
    for (int64_t i = 0; i < vol(&want->dims); i++)
        w[i] = ot_get(want, i);
    ot_check_close(what, got, &want->dims, w, 1e-4);
    free(w);
}

/* The blocked engine eb and the LINEAR el run on x give the same Y and P
 * (within check_same's tolerance; `what` names the case), eb on 3 threads
 * the same bits as on 1, and er (eb loaded back from bytes, when set) too. */
static void compare_runs(const prt_engine *eb, const prt_engine *el, const prt_engine *er,
                         const ot_tensor *x, const char *what)
{
    ot_tensor yb, pb, yl, pl, y3, p3, yr = {0}, pr = {0};
    char msg[160];
    CHECK_OK(run(eb, x, 1, &yb, &pb));
    CHECK_OK(run(el, x, 1, &yl, &pl));
    CHECK_OK(run(eb, x, 3, &y3, &p3));
    if (er)
        CHECK_OK(run(er, x, 1, &yr, &pr));
    if (yb.data && yl.data) {
        snprintf(msg, sizeof msg, "%s: Y, CHW8 against LINEAR", what);
        check_same(msg, &yb, &yl);
        snprintf(msg, sizeof msg, "%s: P, CHW8 against LINEAR", what);
        check_same(msg, &pb, &pl);
    }
    if (yb.data && y3.data) {
        CHECK(memcmp(yb.data, y3.data, sizeof(float) * (size_t)vol(&yb.dims)) == 0);
        CHECK(memcmp(pb.data, p3.data, sizeof(float) * (size_t)vol(&pb.dims)) == 0);
    }
    if (er && yb.data && yr.data)
        CHECK(memcmp(yb.data, yr.data, sizeof(float) * (size_t)vol(&yb.dims)) == 0);
    ot_free(&yb);
    ot_free(&pb);
    ot_free(&yl);
    ot_free(&pl);
    ot_free(&y3);
    ot_free(&p3);
    ot_free(&yr);
    ot_free(&pr);
}

/* One network: built both ways, run on the same X, and the blocked engine
 * again after a round trip and on 3 threads (bit for bit as on 1). */
static prt_registry *g_reg; /* the standard plugins, for loading engines back */

static void one_case(int64_t C, int64_t M, int32_t k, int32_t stride, int32_t fk,
                     int32_t fs, prt_dims xd, int dynamic_batch, /* 2: H, W */
                     const prt_plugin_creator *inplace)
{
    void *bytes = NULL;
    size_t size = 0;
    netb b;
    prt_engine *eb = NULL, *el = NULL, *er = NULL;
    prt_dims nd = xd, xmin = xd, xmax = xd;
    ot_tensor x;
    tu_rng rng;
    char what[96];
    printf("  C %lld M %lld k %d stride %d, first %dx%d stride %d, X "
           "%lldx%lldx%lldx%lld%s%s\n",
           (long long)C, (long long)M, (int)k, (int)stride, (int)fk, (int)fk, (int)fs,
           (long long)xd.d[0], (long long)xd.d[1], (long long)xd.d[2], (long long)xd.d[3],
           dynamic_batch == 1   ? ", dynamic batch"
           : dynamic_batch == 2 ? ", dynamic H and W (run at the least)"
                                : "",
           inplace ? ", LINEAR-only plugin" : "");
    if (dynamic_batch == 1) {
        nd.d[0] = -1;
        xmin.d[0] = 1;
        xmax.d[0] = xd.d[0] + 2;
    } else if (dynamic_batch == 2) {
        /* The workspace is sized at the largest H and W; a run at 1 x 1
         * takes the one-pixel pointwise path, whose buffers come from that
         * workspace too. */
        nd.d[2] = nd.d[3] = -1;
        xmax.d[2] = xd.d[2] + 4;
        xmax.d[3] = xd.d[3] + 4;
    }
    if (make_net(&b, C, M, k, stride, fk, fs, &nd, inplace)) {
        nb_free(&b);
        return;
    }
    CHECK_OK(build(&b, 1, dynamic_batch ? &xmin : NULL, &xmax, &eb));
    CHECK_OK(build(&b, 0, dynamic_batch ? &xmin : NULL, &xmax, &el));
    nb_free(&b);
    if (!eb || !el)
        goto done;
    /* AddInPlace reads r2 and r: both LINEAR, the rest blocked. */
    CHECK(count_blocked(eb, inplace ? "r2" : NULL) > 0);
    CHECK(count_blocked(eb, inplace ? "r" : NULL) > 0);
    CHECK(count_blocked(el, NULL) == 0);
    /* Every convolution here writes CHW8: the first from LINEAR X (few
     * channels or pointwise), the rest from blocks. */
    /* (With AddInPlace reading r, the residual Add, which does not mix
     * formats, keeps a LINEAR.) */
    CHECK(format_of(eb, "a") == (inplace ? PRT_FORMAT_LINEAR : PRT_FORMAT_CHW8));
    CHECK(format_of(eb, "e") == PRT_FORMAT_CHW8);
    CHECK(format_of(eb, "d") == PRT_FORMAT_CHW8);
    CHECK(format_of(eb, "X") == PRT_FORMAT_LINEAR);
    CHECK(format_of(eb, "Y") == PRT_FORMAT_LINEAR);
    CHECK_OK(prt_engine_serialize(eb, &bytes, &size));
    if (bytes)
        CHECK_OK(prt_engine_deserialize(g_reg, bytes, size, &er));
    prt_free(bytes);
    tu_rng_seed(&rng, 7);
    x = ot_random(PRT_FLOAT32, xd, &rng, 0);
    snprintf(what, sizeof what, "C %lld", (long long)C);
    compare_runs(eb, el, er, &x, what);
    ot_free(&x);
done:
    prt_engine_destroy(eb);
    prt_engine_destroy(el);
    prt_engine_destroy(er);
}

/* A layer between convolutions: X -> a = pw(C, Relu) -> q = the layer ->
 * Y = conv(C) of q; P = GAP(q). The layer is op with fields f (a pool), or
 * with op NULL a convolution of one group into M channels, k x k at
 * `stride` (the direct kind, from blocks into blocks), and then Y's is 3 x
 * 3 (from blocks into a LINEAR Y), else pointwise. Blocked, a and q are
 * CHW8, and the engine computes what the LINEAR one does, bit for bit on 3
 * threads as on 1. */
static void mid_case(const char *op, const prt_field *f, int32_t nf, int64_t C, int64_t M,
                     int32_t k, int32_t stride, int32_t group, prt_dims xd,
                     const char *what)
{
    netb b;
    prt_engine *eb = NULL, *el = NULL;
    int32_t x, a, q, y, g;
    ot_tensor xt;
    tu_rng rng;
    char msg[128];
    printf("  %s %s, C %lld\n", op ? op : "Conv", what, (long long)C);
    memset(&b, 0, sizeof b);
    tu_rng_seed(&b.rng, 5);
    if (prt_network_create(&b.net) != PRT_OK ||
        prt_network_add_input(b.net, "X", PRT_FLOAT32, &xd, &x) != PRT_OK) {
        CHECK(!"network");
        nb_free(&b);
        return;
    }
    a = nb_conv(&b, x, C, C, 1, 1, 1, "Relu", "a");
    if (op) {
        q = nb_op(&b, op, f, nf, &a, 1, "q");
        y = nb_conv(&b, q, C, C, 1, 1, 1, NULL, "Y");
    } else {
        q = nb_conv(&b, a, C, M, k, stride, group, "Relu", "q");
        y = nb_conv(&b, q, M, C, 3, 1, 1, NULL, "Y");
    }
    g = nb_op(&b, "GlobalAveragePool", NULL, 0, &q, 1, "P");
    if (b.failed || prt_network_mark_output(b.net, y) ||
        prt_network_mark_output(b.net, g)) {
        CHECK(!"network");
        nb_free(&b);
        return;
    }
    CHECK_OK(build(&b, 1, NULL, NULL, &eb));
    CHECK_OK(build(&b, 0, NULL, NULL, &el));
    nb_free(&b);
    if (!eb || !el)
        goto done;
    CHECK(format_of(eb, "a") == PRT_FORMAT_CHW8);
    CHECK(format_of(eb, "q") == PRT_FORMAT_CHW8);
    CHECK(count_blocked(el, NULL) == 0);
    tu_rng_seed(&rng, 9);
    xt = ot_random(PRT_FLOAT32, xd, &rng, 0);
    snprintf(msg, sizeof msg, "%s %s", op ? op : "Conv", what);
    compare_runs(eb, el, NULL, &xt, msg);
    ot_free(&xt);
done:
    prt_engine_destroy(eb);
    prt_engine_destroy(el);
}

/* Convolutions of the direct kind between blocks: ResNet's 3x3 (at strides
 * 1 and 2), a 5x5, a 1x1 at stride 2, channel counts that are not
 * multiples of 8, a batch; grouped ones. */
static void direct_cases(void)
{
    printf("convolutions of the direct kind from blocks into blocks:\n");
    mid_case(NULL, NULL, 0, 16, 16, 3, 1, 1, D4(1, 16, 14, 14), "3x3 s1");
    mid_case(NULL, NULL, 0, 13, 21, 3, 2, 1, D4(2, 13, 15, 11), "3x3 s2");
    mid_case(NULL, NULL, 0, 8, 32, 5, 1, 1, D4(1, 8, 9, 23), "5x5 s1");
    mid_case(NULL, NULL, 0, 24, 40, 1, 2, 1, D4(2, 24, 10, 10), "1x1 s2");
    mid_case(NULL, NULL, 0, 3, 5, 3, 1, 1, D4(1, 3, 6, 6), "3x3 s1, few channels");
    /* The AVX-512 build's tiles of three and two block pairs, with the
     * edge columns inside them: 3 pairs, 3 + 2, 2 + 2 and an odd block, on
     * rows of 29, 14 and 14 (tiles of 12 and 8, then 4, 2 and 1). */
    mid_case(NULL, NULL, 0, 24, 48, 3, 1, 1, D4(1, 24, 13, 29), "3x3 s1, 3 block pairs");
    mid_case(NULL, NULL, 0, 16, 80, 3, 2, 1, D4(2, 16, 17, 27), "3x3 s2, 5 block pairs");
    mid_case(NULL, NULL, 0, 8, 72, 3, 1, 1, D4(1, 8, 5, 14),
             "3x3 s1, 4 pairs and a block");
    /* Groups of whole blocks of outputs: 4 of 8, 2 of 16 to 32, 4 of 4 to
     * 8. */
    mid_case(NULL, NULL, 0, 32, 32, 3, 2, 4, D4(2, 32, 11, 11), "3x3 s2, 4 groups of 8");
    mid_case(NULL, NULL, 0, 32, 64, 3, 1, 2, D4(1, 32, 7, 10),
             "3x3 s1, 2 groups, 16 to 32");
    mid_case(NULL, NULL, 0, 16, 32, 5, 1, 4, D4(1, 16, 9, 9), "5x5 s1, 4 groups, 4 to 8");
}

static void pool_cases(void)
{
    const int32_t k3[2] = {3, 3}, k2[2] = {2, 2}, s2[2] = {2, 2}, s1[2] = {1, 1};
    const int32_t d2[2] = {2, 2}, p1[4] = {1, 1, 1, 1}, p0[4] = {0, 0, 0, 0};
    const int32_t one = 1;
    prt_field f[5];
    printf("pools between CHW8 convolutions:\n");
    /* ResNet's 3x3 at stride 2 with padding 1. */
    f[0] = ot_fld_i32("kernel_shape", k3, 2);
    f[1] = ot_fld_i32("strides", s2, 2);
    f[2] = ot_fld_i32("pads", p1, 4);
    mid_case("MaxPool", f, 3, 24, 0, 0, 0, 0, D4(1, 24, 17, 21), "3x3 s2 p1");
    mid_case("MaxPool", f, 3, 13, 0, 0, 0, 0, D4(2, 13, 9, 40), "3x3 s2 p1");
    mid_case("AveragePool", f, 3, 11, 0, 0, 0, 0, D4(2, 11, 12, 12), "3x3 s2 p1");
    /* SqueezeNet's ceil_mode. */
    f[2] = ot_fld_i32("pads", p0, 4);
    f[3] = ot_fld_i32("ceil_mode", &one, 1);
    mid_case("MaxPool", f, 4, 16, 0, 0, 0, 0, D4(1, 16, 14, 26), "3x3 s2 ceil_mode");
    f[3] = ot_fld_i32("count_include_pad", &one, 1);
    f[2] = ot_fld_i32("pads", p1, 4);
    f[1] = ot_fld_i32("strides", s1, 2);
    mid_case("AveragePool", f, 4, 9, 0, 0, 0, 0, D4(1, 9, 10, 19),
             "3x3 s1 p1 count_include_pad");
    f[0] = ot_fld_i32("kernel_shape", k2, 2);
    f[1] = ot_fld_i32("strides", s2, 2);
    mid_case("MaxPool", f, 2, 20, 0, 0, 0, 0, D4(3, 20, 8, 8), "2x2 s2");
    f[0] = ot_fld_i32("kernel_shape", k3, 2);
    f[1] = ot_fld_i32("dilations", d2, 2);
    f[2] = ot_fld_i32("pads", p1, 4);
    mid_case("MaxPool", f, 3, 7, 0, 0, 0, 0, D4(1, 7, 12, 30), "3x3 d2 p1");
}

int main(void)
{
    prt_registry *reg = tu_registry_with_plugins();
    g_reg = reg;
    const prt_plugin_creator *inplace =
        reg ? tu_find_creator(reg, "example", "AddInPlace", "1") : NULL;
    printf("CHW8 against LINEAR:\n");
    one_case(16, 24, 3, 1, 1, 1, D4(2, 16, 9, 9), 0, NULL);
    one_case(13, 21, 3, 2, 1, 1, D4(2, 13, 11, 9), 0, NULL);
    one_case(5, 11, 5, 1, 3, 1, D4(3, 5, 7, 7), 1, NULL);
    one_case(3, 16, 3, 1, 3, 2, D4(2, 3, 23, 17), 0, NULL);
    one_case(7, 12, 3, 2, 3, 2, D4(1, 7, 9, 12), 0, NULL);
    one_case(24, 40, 5, 2, 1, 1, D4(1, 24, 14, 14), 0, NULL);
    one_case(9, 19, 3, 1, 1, 1, D4(2, 9, 1, 1), 0, NULL);
    one_case(9, 19, 3, 1, 1, 1, D4(3, 9, 1, 1), 2, NULL);
    if (inplace)
        one_case(12, 20, 3, 1, 1, 1, D4(2, 12, 8, 8), 0, inplace);
    pool_cases();
    direct_cases();
    prt_registry_destroy(reg);
    return tu_finish("test_chw8");
}
