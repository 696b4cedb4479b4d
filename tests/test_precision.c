/*
 * The builder's precision flags (issue 24, builder/precision.c), on the CPU:
 *  - x -> MatMul(W) -> Add(b) -> Relu = h -> Softmax -> circ_pad_plugin -> y,
 *    h and y both outputs, built in float32, FP16 and BF16: the 16-bit
 *    engines' outputs agree with the float32 engine's within the tolerance
 *    of the type (float16 1e-2, bfloat16 5e-2 of max|ref| plus relative),
 *    inputs and outputs keep float32, the 16-bit builds hold Cast layers and
 *    16-bit constants (W converted once), the float32 build none;
 *  - circ_pad_plugin takes float16 but not bfloat16 (its
 *    supports_format_combination): with FP16 its input is float16, with BF16
 *    it stays float32 and the log names it and why;
 *  - the flags travel through serialization; unknown bits are refused;
 *  - an FP16 build with its N-th allocation failing, for every N until one
 *    succeeds, fails cleanly (ASan's run checks that nothing leaks);
 *  - SkipLayerNormalization with all four outputs (its mean and inverse
 *    deviation float32 in any precision) runs in float16 under FP16, its
 *    statistics written in float32 as they are, no Cast for them; every
 *    output within float16's tolerance of the float32 engine's;
 *  - a Cast to float32 of a float32 input stays float32 under FP16 (its
 *    one float output would not be 16-bit: reading 16 bits would only
 *    round x), so y is x bit for bit.
 */
#include <math.h>
#include <stdlib.h>

#include "base/base.h"
#include "testutil.h"

#define M 4
#define K 16

static char g_log[16384];

static void log_fn(void *user, int32_t severity, const char *msg)
{
    size_t n = strlen(g_log);
    (void)user, (void)severity;
    snprintf(g_log + n, sizeof g_log - n, "%s\n", msg);
}

static prt_plugin *builtin(const char *name)
{
    const prt_plugin_creator *c = NULL;
    prt_plugin *p = NULL;
    prt_field_collection fc = {0, NULL};
    CHECK_OK(prt_builtin_find_creator(name, NULL, &c));
    if (c)
        CHECK_OK(c->create(c, name, &fc, PRT_PHASE_BUILD, &p));
    return p;
}

/* The built-in `name` with one int32 field. */
static prt_plugin *builtin_i32(const char *name, const char *field, int32_t v)
{
    const prt_plugin_creator *c = NULL;
    prt_plugin *p = NULL;
    prt_field f = {field, &v, PRT_FIELD_INT32, 1};
    prt_field_collection fc = {1, &f};
    CHECK_OK(prt_builtin_find_creator(name, NULL, &c));
    if (c)
        CHECK_OK(c->create(c, name, &fc, PRT_PHASE_BUILD, &p));
    return p;
}

static int32_t add_layer(prt_network *net, prt_plugin *p, const int32_t *in, int32_t n)
{
    int32_t layer = -1, t = -1;
    if (!p)
        return -1;
    if (prt_network_add_plugin(net, in, n, NULL, 0, p, &layer) != PRT_OK) {
        CHECK(0);
        return -1;
    }
    CHECK_OK(prt_network_get_layer_output(net, layer, 0, &t));
    return t;
}

static prt_network *make_net(prt_registry *reg, const float *w, const float *b)
{
    prt_network *net = NULL;
    int64_t xd[2] = {M, K}, wd[2] = {K, K}, bd[1] = {K};
    prt_dims dx = tu_dims(2, xd), dw = tu_dims(2, wd), db = tu_dims(1, bd);
    int32_t x, tw, tb, t, h, y, in[2];
    int32_t pads[2] = {1, 2};
    prt_field f = {"pads", pads, PRT_FIELD_INT32, 2};
    prt_plugin *cp;
    if (prt_network_create(&net) != PRT_OK)
        return NULL;
    CHECK_OK(prt_network_add_input(net, "x", PRT_FLOAT32, &dx, &x));
    CHECK_OK(prt_network_add_constant(net, "W", PRT_FLOAT32, &dw, w, &tw));
    CHECK_OK(prt_network_add_constant(net, "b", PRT_FLOAT32, &db, b, &tb));
    in[0] = x, in[1] = tw;
    t = add_layer(net, builtin("MatMul"), in, 2);
    in[0] = t, in[1] = tb;
    t = add_layer(net, builtin("Add"), in, 2);
    h = add_layer(net, builtin("Relu"), &t, 1);
    t = add_layer(net, builtin("Softmax"), &h, 1);
    cp = tu_make_plugin(reg, "example", "circ_pad_plugin", "1", &f, 1);
    y = add_layer(net, cp, &t, 1);
    if (h < 0 || y < 0) {
        prt_network_destroy(net);
        return NULL;
    }
    CHECK_OK(prt_network_set_tensor_name(net, h, "h"));
    CHECK_OK(prt_network_set_tensor_name(net, y, "y"));
    CHECK_OK(prt_network_mark_output(net, h));
    CHECK_OK(prt_network_mark_output(net, y));
    return net;
}

static prt_engine *build(prt_network *net, prt_registry *reg, uint32_t flags)
{
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL;
    g_log[0] = '\0';
    CHECK_OK(prt_builder_config_create(&cfg));
    if (!cfg)
        return NULL;
    CHECK_OK(prt_builder_config_set_precision_flags(cfg, flags));
    CHECK(prt_builder_config_get_precision_flags(cfg) == flags);
    CHECK_OK(prt_engine_build(net, cfg, reg, &e));
    prt_builder_config_destroy(cfg);
    return e;
}

static void run(prt_engine *e, const float *x, float *h, float *y)
{
    prt_context *ctx = NULL;
    CHECK_OK(prt_context_create(e, &ctx));
    if (!ctx)
        return;
    CHECK_OK(prt_context_set_tensor_address(ctx, "x", (void *)x));
    CHECK_OK(prt_context_set_tensor_address(ctx, "h", h));
    CHECK_OK(prt_context_set_tensor_address(ctx, "y", y));
    CHECK_OK(prt_context_enqueue(ctx, NULL));
    prt_context_destroy(ctx);
}

/* |got - ref| <= tol * (max|ref| + |ref|) for every element. */
static void check_close(const float *got, const float *ref, int64_t n, double tol,
                        const char *what)
{
    double mx = 0.0;
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        mx = fmax(mx, fabs(ref[i]));
    for (int64_t i = 0; i < n; i++)
        if (!(fabs((double)got[i] - ref[i]) <= tol * (mx + fabs(ref[i]))))
            bad++;
    if (bad)
        printf("  %s: %lld of %lld elements outside %g\n", what, (long long)bad,
               (long long)n, tol);
    CHECK(bad == 0);
}

/* The dtype of input `k` of the first layer whose plugin is `plugin`; -1 if
 * none. */
static int32_t layer_input_dtype(const prt_engine *e, const char *plugin, int32_t k,
                                 int32_t *kind)
{
    for (int32_t i = 0; i < prt_engine_layer_count(e); i++) {
        prt_layer_info li;
        prt_tensor_info ti;
        memset(&li, 0, sizeof li);
        li.struct_size = sizeof li;
        if (prt_engine_get_layer(e, i, &li) != PRT_OK || strcmp(li.plugin_name, plugin))
            continue;
        memset(&ti, 0, sizeof ti);
        ti.struct_size = sizeof ti;
        if (k >= li.nb_inputs || prt_engine_get_tensor(e, li.inputs[k], &ti) != PRT_OK)
            return -1;
        if (kind)
            *kind = ti.kind;
        return ti.dtype;
    }
    return -1;
}

static int count_layers(const prt_engine *e, const char *plugin)
{
    int n = 0;
    for (int32_t i = 0; i < prt_engine_layer_count(e); i++) {
        prt_layer_info li;
        memset(&li, 0, sizeof li);
        li.struct_size = sizeof li;
        if (prt_engine_get_layer(e, i, &li) == PRT_OK &&
            strcmp(li.plugin_name, plugin) == 0)
            n++;
    }
    return n;
}

static void check_io_float32(const prt_engine *e)
{
    CHECK(prt_engine_io_count(e) == 3);
    for (int32_t i = 0; i < prt_engine_io_count(e); i++) {
        prt_io_info io;
        memset(&io, 0, sizeof io);
        io.struct_size = sizeof io;
        CHECK_OK(prt_engine_get_io(e, i, &io));
        CHECK(io.dtype == PRT_FLOAT32);
    }
}

/* The engine read back from its bytes keeps its flags. */
static void check_roundtrip(const prt_engine *e, prt_registry *reg, uint32_t flags)
{
    void *bytes = NULL;
    size_t size = 0;
    prt_engine *back = NULL;
    CHECK(prt_engine_get_precision_flags(e) == flags);
    CHECK_OK(prt_engine_serialize(e, &bytes, &size));
    if (!bytes)
        return;
    CHECK_OK(prt_engine_deserialize(reg, bytes, size, &back));
    CHECK(prt_engine_get_precision_flags(back) == flags);
    prt_engine_destroy(back);
    prt_free(bytes);
}

/* Every allocation of an FP16 build failing in turn. */
static void check_alloc_failures(prt_network *net, prt_registry *reg)
{
    prt_builder_config *cfg = NULL;
    int64_t n;
    CHECK_OK(prt_builder_config_create(&cfg));
    if (!cfg)
        return;
    CHECK_OK(prt_builder_config_set_precision_flags(cfg, PRT_PRECISION_FP16));
    for (n = 0; n < 100000; n++) {
        prt_engine *e = NULL;
        prt_status st;
        base_fail_alloc_after(n);
        st = prt_engine_build(net, cfg, reg, &e);
        base_fail_alloc_after(-1);
        CHECK(st == PRT_OK ? e != NULL : e == NULL && prt_last_error()[0] != '\0');
        prt_engine_destroy(e);
        if (st == PRT_OK)
            break;
    }
    CHECK(n > 10 && n < 100000);
    prt_builder_config_destroy(cfg);
}

/* x + r -> SkipLayerNormalization(gamma), nb_outputs 4, every output
 * marked; the engine built with `flags` and run on x, the outputs in
 * y[4][M * K] (mean and inv_std_var M values each). */
static prt_engine *sln_build_run(prt_registry *reg, uint32_t flags, const float *x,
                                 const float *r, const float *gamma, float y[4][M * K])
{
    static const char *const names[4] = {"out", "mean", "inv", "sum"};
    prt_network *net = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    int64_t xd[2] = {M, K}, gd[1] = {K};
    prt_dims dx = tu_dims(2, xd), dg = tu_dims(1, gd);
    int32_t in[3], layer = -1;
    prt_plugin *p = builtin_i32("SkipLayerNormalization", "nb_outputs", 4);
    CHECK_OK(prt_network_create(&net));
    if (!net || !p) {
        prt_network_destroy(net);
        return NULL;
    }
    CHECK_OK(prt_network_add_input(net, "x", PRT_FLOAT32, &dx, &in[0]));
    CHECK_OK(prt_network_add_constant(net, "r", PRT_FLOAT32, &dx, r, &in[1]));
    CHECK_OK(prt_network_add_constant(net, "gamma", PRT_FLOAT32, &dg, gamma, &in[2]));
    CHECK_OK(prt_network_add_plugin(net, in, 3, NULL, 0, p, &layer));
    for (int32_t o = 0; o < 4 && layer >= 0; o++) {
        int32_t t = -1;
        CHECK_OK(prt_network_get_layer_output(net, layer, o, &t));
        CHECK_OK(prt_network_set_tensor_name(net, t, names[o]));
        CHECK_OK(prt_network_mark_output(net, t));
    }
    e = build(net, reg, flags);
    prt_network_destroy(net);
    if (e)
        CHECK_OK(prt_context_create(e, &ctx));
    if (!ctx)
        return e;
    CHECK_OK(prt_context_set_tensor_address(ctx, "x", (void *)x));
    for (int o = 0; o < 4; o++)
        CHECK_OK(prt_context_set_tensor_address(ctx, names[o], y[o]));
    CHECK_OK(prt_context_enqueue(ctx, NULL));
    prt_context_destroy(ctx);
    return e;
}

static void test_sln_stats(prt_registry *reg, tu_rng *r)
{
    static float x[M * K], res[M * K], gamma[K], y32[4][M * K], y16[4][M * K];
    prt_engine *e32, *e16;
    for (int i = 0; i < M * K; i++) {
        x[i] = (float)(tu_rng_uniform(r) * 4.0 - 2.0);
        res[i] = (float)(tu_rng_uniform(r) - 0.5);
    }
    for (int i = 0; i < K; i++)
        gamma[i] = (float)(tu_rng_uniform(r) + 0.5);
    prt_set_logger(log_fn, NULL, PRT_SEV_INFO);
    e32 = sln_build_run(reg, 0, x, res, gamma, y32);
    e16 = sln_build_run(reg, PRT_PRECISION_FP16, x, res, gamma, y16);
    prt_set_logger(NULL, NULL, 0);
    CHECK(e32 && e16);
    if (e32 && e16) {
        if (strstr(g_log, "stays float32"))
            printf("the log:\n%s", g_log);
        CHECK(strstr(g_log, "stays float32") == NULL);
        CHECK(layer_input_dtype(e16, "SkipLayerNormalization", 0, NULL) == PRT_FLOAT16);
        /* The output and the sum each through one Cast; no Cast for the
         * statistics, nor for x beyond one. */
        CHECK(count_layers(e16, "Cast") == 3);
        check_close(y16[0], y32[0], M * K, 1e-2, "fp16 SkipLayerNormalization output");
        check_close(y16[1], y32[1], M, 1e-2, "fp16 SkipLayerNormalization mean");
        check_close(y16[2], y32[2], M, 1e-2, "fp16 SkipLayerNormalization inv_std_var");
        check_close(y16[3], y32[3], M * K, 1e-2, "fp16 SkipLayerNormalization sum");
    }
    prt_engine_destroy(e32);
    prt_engine_destroy(e16);
}

static void test_cast_f32(prt_registry *reg, tu_rng *r)
{
    static float x[M * K], y[M * K];
    int64_t xd[2] = {M, K};
    prt_dims dx = tu_dims(2, xd);
    prt_network *net = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    int32_t in = -1, layer = -1, t = -1;
    prt_plugin *p = builtin_i32("Cast", "to", PRT_FLOAT32);
    for (int i = 0; i < M * K; i++)
        x[i] = (float)(tu_rng_uniform(r) * 4.0 - 2.0) + 1e-4f;
    CHECK_OK(prt_network_create(&net));
    if (!net || !p) {
        prt_network_destroy(net);
        return;
    }
    CHECK_OK(prt_network_add_input(net, "x", PRT_FLOAT32, &dx, &in));
    CHECK_OK(prt_network_add_plugin(net, &in, 1, NULL, 0, p, &layer));
    CHECK_OK(prt_network_get_layer_output(net, layer, 0, &t));
    CHECK_OK(prt_network_set_tensor_name(net, t, "y"));
    CHECK_OK(prt_network_mark_output(net, t));
    e = build(net, reg, PRT_PRECISION_FP16);
    prt_network_destroy(net);
    if (e)
        CHECK_OK(prt_context_create(e, &ctx));
    if (ctx) {
        CHECK(count_layers(e, "Cast") == 1);
        CHECK(layer_input_dtype(e, "Cast", 0, NULL) == PRT_FLOAT32);
        CHECK_OK(prt_context_set_tensor_address(ctx, "x", x));
        CHECK_OK(prt_context_set_tensor_address(ctx, "y", y));
        CHECK_OK(prt_context_enqueue(ctx, NULL));
        CHECK(memcmp(x, y, sizeof x) == 0);
    }
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
}

int main(void)
{
    prt_registry *reg = tu_registry_with_plugins();
    float w[K * K], b[K], x[M * K];
    float h32[M * K], y32[M * (K + 3)], h[M * K], y[M * (K + 3)];
    prt_network *net;
    prt_engine *e32, *e16, *ebf;
    prt_builder_config *cfg = NULL;
    tu_rng r;
    int32_t kind = -1;
    if (!reg)
        return tu_finish("test_precision");
    tu_rng_seed(&r, 24);
    for (int i = 0; i < K * K; i++)
        w[i] = (float)(tu_rng_uniform(&r) - 0.5);
    for (int i = 0; i < K; i++)
        b[i] = (float)(tu_rng_uniform(&r) - 0.5) * 0.1f;
    for (int i = 0; i < M * K; i++)
        x[i] = (float)(tu_rng_uniform(&r) * 4.0 - 2.0);

    CHECK_OK(prt_builder_config_create(&cfg));
    CHECK_ERR(prt_builder_config_set_precision_flags(cfg, 0x80u),
              PRT_ERR_INVALID_ARGUMENT, "unknown flag bits");
    prt_builder_config_destroy(cfg);

    net = make_net(reg, w, b);
    if (!net) {
        prt_registry_destroy(reg);
        return tu_finish("test_precision");
    }
    prt_set_logger(log_fn, NULL, PRT_SEV_INFO);
    e32 = build(net, reg, 0);
    e16 = build(net, reg, PRT_PRECISION_FP16);
    ebf = build(net, reg, PRT_PRECISION_BF16);
    prt_set_logger(NULL, NULL, 0);
    /* The last log is BF16's: circ_pad_plugin is named with the reason. */
    if (!strstr(g_log, "refuses 16-bit"))
        printf("the log:\n%s", g_log);
    CHECK(strstr(g_log, "'circ_pad_plugin_4' (plugin example::circ_pad_plugin) stays "
                        "float32: its get_output_dtypes refuses 16-bit") != NULL);
    CHECK(strstr(g_log, "layers run in bfloat16") != NULL);
    if (e32 && e16 && ebf) {
        run(e32, x, h32, y32);

        CHECK(count_layers(e32, "Cast") == 0);
        CHECK(layer_input_dtype(e32, "MatMul", 1, NULL) == PRT_FLOAT32);

        /* FP16: everything in float16, the plugin included. */
        check_io_float32(e16);
        CHECK(count_layers(e16, "Cast") >= 2);
        CHECK(layer_input_dtype(e16, "MatMul", 0, NULL) == PRT_FLOAT16);
        CHECK(layer_input_dtype(e16, "MatMul", 1, &kind) == PRT_FLOAT16);
        CHECK(kind == PRT_TENSOR_CONSTANT);
        CHECK(layer_input_dtype(e16, "Softmax", 0, NULL) == PRT_FLOAT16);
        CHECK(layer_input_dtype(e16, "circ_pad_plugin", 0, NULL) == PRT_FLOAT16);
        memset(h, 0, sizeof h);
        memset(y, 0, sizeof y);
        run(e16, x, h, y);
        check_close(h, h32, M * K, 1e-2, "fp16 h");
        check_close(y, y32, M * (K + 3), 1e-2, "fp16 y");
        check_roundtrip(e16, reg, PRT_PRECISION_FP16);

        /* BF16: the plugin refuses bfloat16 and stays float32. */
        check_io_float32(ebf);
        CHECK(layer_input_dtype(ebf, "MatMul", 0, NULL) == PRT_BFLOAT16);
        CHECK(layer_input_dtype(ebf, "circ_pad_plugin", 0, NULL) == PRT_FLOAT32);
        memset(h, 0, sizeof h);
        memset(y, 0, sizeof y);
        run(ebf, x, h, y);
        check_close(h, h32, M * K, 5e-2, "bf16 h");
        check_close(y, y32, M * (K + 3), 5e-2, "bf16 y");
        check_roundtrip(ebf, reg, PRT_PRECISION_BF16);
        check_roundtrip(e32, reg, 0);
        check_alloc_failures(net, reg);
    }
    test_sln_stats(reg, &r);
    test_cast_f32(reg, &r);
    prt_engine_destroy(e32);
    prt_engine_destroy(e16);
    prt_engine_destroy(ebf);
    prt_network_destroy(net);
    prt_registry_destroy(reg);
    return tu_finish("test_precision");
}
