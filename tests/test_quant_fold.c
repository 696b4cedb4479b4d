/*
 * The builder folds DequantizeLinear into the plugins that take its integer
 * input with the scale (src/builder/fold.c), against the layer contract of
 * the built-in op (inputs x, x_scale, x_zero_point (optional); field axis),
 * played by the built-in op where this build has it, else by a stand-in
 * of the same identity ("plugrt" / "DequantizeLinear") with a CPU kernel.
 * An engine that keeps the stand-in cannot be made (its layer cannot be
 * created again from the built-ins, as loading would), so there the cases
 * where the DQ stays check the build's log only; with the built-in they
 * also run and check the result:
 *  - x (int8 input, per-tensor) and w (int8 constant, per-channel) each
 *    through a DQ into QuantFC: both fold, the engine holds QuantFC alone,
 *    x and w carry the scales, the result matches the real one, and the
 *    log names both folds;
 *  - the same with w a float constant: QuantFC takes an integer x only
 *    beside an integer w, so nothing folds, the log says why, and the
 *    float path gives the same result;
 *  - a consumer that takes int8 without reading the scale (Identity): the
 *    DQ stays, since the plugin answers alike with and without it;
 *  - a DQ output read twice: the DQ stays;
 *  - QuantFC's float output through a QuantizeLinear: the Q folds too,
 *    QuantFC writes int8 on the Q's scale (the engine from bytes, whose
 *    loading asks QuantFC that it does), and the result is the quantized
 *    one; a Q after Identity stays;
 *  - QuantFC -> Q -> DQ -> QuantFC: on one scale everything folds and the
 *    int8 tensor passes between the two; on two scales (a requantization)
 *    the second QuantFC's DQs stay.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define NAME "test_quant_fold"

/* ---- the stand-in DequantizeLinear ---------------------------------------- */

typedef struct dq_plugin {
    prt_plugin base;
    int quantize; /* plays QuantizeLinear: y, scale, zero point -> z */
    int32_t axis;
    prt_field field;
    prt_field_collection fc;
    int32_t nb_in;
} dq_plugin;

static const char *dq_name(const prt_plugin *p)
{
    return ((const dq_plugin *)p)->quantize ? "QuantizeLinear" : "DequantizeLinear";
}
static const char *dq_version(const prt_plugin *p)
{
    (void)p;
    return "1";
}
static const char *dq_ns(const prt_plugin *p)
{
    (void)p;
    return PRT_BUILTIN_NAMESPACE;
}
static uint32_t dq_devices(const prt_plugin *p)
{
    (void)p;
    return 1u << PRT_DEVICE_CPU;
}
static int32_t dq_nb_outputs(const prt_plugin *p)
{
    (void)p;
    return 1;
}
static prt_status dq_dtypes(prt_plugin *p, int32_t *out, int32_t nb_out,
                            const int32_t *in, int32_t nb_in)
{
    (void)nb_out;
    out[0] = !((dq_plugin *)p)->quantize ? PRT_FLOAT32 : nb_in == 3 ? in[2] : PRT_UINT8;
    return PRT_OK;
}
static prt_status dq_shapes(prt_plugin *p, const prt_dim_exprs *in, int32_t nb_in,
                            const prt_dim_exprs *si, int32_t nsi, prt_dim_exprs *out,
                            int32_t nb_out, prt_expr_builder *e)
{
    (void)p, (void)nb_in, (void)si, (void)nsi, (void)nb_out, (void)e;
    out[0] = in[0];
    return PRT_OK;
}
static int32_t dq_supports(prt_plugin *p, int32_t pos, const prt_dynamic_tensor_desc *io,
                           int32_t nb_in, int32_t nb_out)
{
    const prt_tensor_desc *d = &io[pos].desc;
    (void)nb_out;
    if (d->format != PRT_FORMAT_LINEAR)
        return 0;
    if (((dq_plugin *)p)->quantize)
        return pos == 0 || pos == 1 ? d->dtype == PRT_FLOAT32
               : pos == 2 && nb_in == 3
                   ? d->dtype == PRT_INT8 || d->dtype == PRT_UINT8
                   : d->dtype == (nb_in == 3 ? io[2].desc.dtype : PRT_UINT8);
    if (pos == 0)
        return d->dtype == PRT_INT8 || d->dtype == PRT_UINT8;
    if (pos == 1)
        return d->dtype == PRT_FLOAT32;
    if (pos == 2 && nb_in == 3)
        return d->dtype == io[0].desc.dtype;
    return d->dtype == PRT_FLOAT32;
}
static prt_status dq_shape_change(prt_plugin *p, const prt_tensor_desc *in, int32_t nb_in,
                                  const prt_tensor_desc *out, int32_t nb_out)
{
    (void)in, (void)out, (void)nb_out;
    ((dq_plugin *)p)->nb_in = nb_in;
    return PRT_OK;
}
/* y = (x - zp) * scale, per tensor or along axis. */
static prt_status dq_enqueue(prt_plugin *p, const prt_tensor_desc *in,
                             const prt_tensor_desc *out, const void *const *inputs,
                             void *const *outputs, void *ws, int32_t device, void *stream)
{
    dq_plugin *q = (dq_plugin *)p;
    const prt_dims *d = &in[0].dims;
    int64_t n = tu_volume(d), cnt = tu_volume(&in[1].dims), inner = 1;
    int32_t axis = q->axis < 0 ? q->axis + d->nb_dims : q->axis;
    (void)out, (void)ws, (void)device, (void)stream;
    for (int32_t i = axis + 1; i < d->nb_dims; i++)
        inner *= d->d[i];
    for (int64_t i = 0; i < n && q->quantize; i++) {
        /* z = saturate(round_half_even(y / scale) + zp), ONNX's rule */
        int64_t c = cnt == 1 ? 0 : (i / inner) % cnt;
        int32_t z = q->nb_in < 3               ? 0
                    : out[0].dtype == PRT_INT8 ? ((const int8_t *)inputs[2])[c]
                                               : ((const uint8_t *)inputs[2])[c];
        float v =
            nearbyintf(((const float *)inputs[0])[i] / ((const float *)inputs[1])[c]) +
            (float)z;
        if (out[0].dtype == PRT_INT8)
            ((int8_t *)outputs[0])[i] = (int8_t)fminf(fmaxf(v, -128.0f), 127.0f);
        else
            ((uint8_t *)outputs[0])[i] = (uint8_t)fminf(fmaxf(v, 0.0f), 255.0f);
    }
    for (int64_t i = 0; i < n && !q->quantize; i++) {
        int64_t c = cnt == 1 ? 0 : (i / inner) % cnt;
        int32_t x = in[0].dtype == PRT_INT8 ? ((const int8_t *)inputs[0])[i]
                                            : ((const uint8_t *)inputs[0])[i];
        int32_t z = q->nb_in < 3              ? 0
                    : in[0].dtype == PRT_INT8 ? ((const int8_t *)inputs[2])[c]
                                              : ((const uint8_t *)inputs[2])[c];
        ((float *)outputs[0])[i] = (float)(x - z) * ((const float *)inputs[1])[c];
    }
    return PRT_OK;
}
static prt_plugin *dq_attach(prt_plugin *p, prt_plugin_resources *r);
static const prt_field_collection *dq_fields(prt_plugin *p)
{
    dq_plugin *q = (dq_plugin *)p;
    q->field.name = "axis";
    q->field.data = &q->axis;
    q->field.type = PRT_FIELD_INT32;
    q->field.length = 1;
    q->fc.nb_fields = 1;
    q->fc.fields = &q->field;
    return &q->fc;
}
static prt_plugin *dq_clone(const prt_plugin *p)
{
    dq_plugin *q = malloc(sizeof *q);
    if (q)
        memcpy(q, p, sizeof *q);
    return q ? &q->base : NULL;
}
static prt_plugin *dq_attach(prt_plugin *p, prt_plugin_resources *r)
{
    (void)r;
    return dq_clone(p);
}
static void dq_destroy(prt_plugin *p)
{
    free(p);
}

static const prt_plugin_core dq_core = {
    sizeof dq_core, PRT_PLUGIN_ABI_VERSION, dq_name, dq_version, dq_ns, dq_devices};
static const prt_plugin_build dq_build = {sizeof dq_build,
                                          PRT_PLUGIN_ABI_VERSION,
                                          dq_nb_outputs,
                                          dq_dtypes,
                                          dq_shapes,
                                          dq_supports,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL};
static const prt_plugin_runtime dq_runtime = {sizeof dq_runtime,
                                              PRT_PLUGIN_ABI_VERSION,
                                              NULL,
                                              dq_shape_change,
                                              dq_enqueue,
                                              dq_attach,
                                              dq_fields,
                                              dq_clone,
                                              dq_destroy};
static const prt_plugin_vtable dq_vt = {sizeof dq_vt, PRT_PLUGIN_ABI_VERSION, &dq_core,
                                        &dq_build, &dq_runtime};

/* The built-in DequantizeLinear and QuantizeLinear when there are. */
static const prt_plugin_creator *g_builtin_dq, *g_builtin_q;

/* A DequantizeLinear, or with `quantize` a QuantizeLinear. */
static prt_plugin *dq_make(int32_t axis, int quantize)
{
    const prt_plugin_creator *cr = quantize ? g_builtin_q : g_builtin_dq;
    dq_plugin *q;
    if (cr) {
        /* Its axis field as int32 or int64, whichever it takes. */
        prt_plugin *p = NULL;
        int64_t axis64 = axis;
        prt_field f = {"axis", &axis, PRT_FIELD_INT32, 1};
        prt_field_collection fc = {1, &f};
        if (cr->create(cr, "dq", &fc, PRT_PHASE_BUILD, &p) == PRT_OK)
            return p;
        f.data = &axis64;
        f.type = PRT_FIELD_INT64;
        CHECK_OK(cr->create(cr, "dq", &fc, PRT_PHASE_BUILD, &p));
        return p;
    }
    q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->base.vt = &dq_vt;
    q->axis = axis;
    q->quantize = quantize;
    return &q->base;
}

/* ---- the log ----------------------------------------------------------------- */

static char g_log[8192];

static void log_fn(void *user, int32_t severity, const char *msg)
{
    size_t n = strlen(g_log);
    (void)user, (void)severity;
    snprintf(g_log + n, sizeof g_log - n, "%s\n", msg);
}

/* ---- networks ----------------------------------------------------------------- */

#define M 3
#define K 16
#define N 5

typedef struct fold_net {
    int8_t x[M * K], w[N * K];
    float wf[N * K]; /* w dequantized, for a float w */
    float b[N], sx, sw[N], sy;
    int8_t zx, zy;
    int32_t dq_layers; /* in the network */
} fold_net;

static int add_qdq(prt_network *net, int32_t x, const char *name, const float *scales,
                   int64_t count, const int8_t *zps, int32_t axis, int quantize,
                   int32_t *out)
{
    int64_t c = count;
    prt_dims sd = count == 1 ? tu_dims(0, NULL) : tu_dims(1, &c);
    int32_t in[3], layer;
    char nm[64];
    prt_plugin *p = dq_make(axis, quantize);
    REQUIRE(p);
    snprintf(nm, sizeof nm, "%s_scale", name);
    REQUIRE_OK(prt_network_add_constant(net, nm, PRT_FLOAT32, &sd, scales, &in[1]));
    snprintf(nm, sizeof nm, "%s_zp", name);
    REQUIRE_OK(prt_network_add_constant(net, nm, PRT_INT8, &sd, zps, &in[2]));
    in[0] = x;
    if (prt_network_add_plugin(net, in, 3, NULL, 0, p, &layer) != PRT_OK) {
        p->vt->runtime->destroy(p);
        REQUIRE(0);
    }
    REQUIRE_OK(prt_network_set_layer_name(net, layer, name));
    REQUIRE_OK(prt_network_get_layer_output(net, layer, 0, out));
    return 0;
}

/* x (int8 input) -> DQ -> QuantFC(., w, b) -> y, w an int8 constant through a
 * DQ (float_w 0) or a float constant (float_w 1); with quant_y, y -> Q ->
 * z (int8), the output. */
static prt_network *make_fc_net(const prt_registry *reg, const fold_net *f, int float_w,
                                int quant_y)
{
    prt_network *net = NULL;
    int64_t xd[2] = {M, K}, wd[2] = {N, K}, bd[1] = {N};
    prt_dims xdims = tu_dims(2, xd), wdims = tu_dims(2, wd), bdims = tu_dims(1, bd);
    int32_t x, w, b, y, in[3], layer;
    int8_t zw[N] = {0};
    prt_plugin *p;
    if (prt_network_create(&net) != PRT_OK)
        return NULL;
    if (prt_network_add_input(net, "x", PRT_INT8, &xdims, &x) != PRT_OK ||
        add_qdq(net, x, "dq_x", &f->sx, 1, &f->zx, 1, 0, &in[0]) != 0 ||
        prt_network_add_constant(net, "w", float_w ? PRT_FLOAT32 : PRT_INT8, &wdims,
                                 float_w ? (const void *)f->wf : (const void *)f->w,
                                 &w) != PRT_OK ||
        (!float_w && add_qdq(net, w, "dq_w", f->sw, N, zw, 0, 0, &in[1]) != 0) ||
        prt_network_add_constant(net, "b", PRT_FLOAT32, &bdims, f->b, &b) != PRT_OK) {
        CHECK(0);
        prt_network_destroy(net);
        return NULL;
    }
    if (float_w)
        in[1] = w;
    in[2] = b;
    p = tu_make_plugin(reg, "example", "QuantFC", "1", NULL, 0);
    if (!p || prt_network_add_plugin(net, in, 3, NULL, 0, p, &layer) != PRT_OK) {
        CHECK(0);
        if (p)
            p->vt->runtime->destroy(p);
        prt_network_destroy(net);
        return NULL;
    }
    CHECK_OK(prt_network_set_layer_name(net, layer, "fc"));
    CHECK_OK(prt_network_get_layer_output(net, layer, 0, &y));
    CHECK_OK(prt_network_set_tensor_name(net, y, quant_y ? "y_float" : "y"));
    if (quant_y && add_qdq(net, y, "q_y", &f->sy, 1, &f->zy, 1, 1, &y) != 0) {
        prt_network_destroy(net);
        return NULL;
    }
    if (quant_y)
        CHECK_OK(prt_network_set_tensor_name(net, y, "z"));
    CHECK_OK(prt_network_mark_output(net, y));
    return net;
}

/* Builds; `dq_stays`: a DQ layer is left, which only the built-in can
 * be (the stand-in's build fails at its layer, after the log we check). */
static prt_engine *build(prt_network *net, const prt_registry *reg, int dq_stays)
{
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL;
    g_log[0] = '\0';
    CHECK_OK(prt_builder_config_create(&cfg));
    if (net && cfg && (!dq_stays || g_builtin_dq))
        CHECK_OK(prt_engine_build(net, cfg, reg, &e));
    else if (net && cfg)
        CHECK_ERR(prt_engine_build(net, cfg, reg, &e), PRT_ERR_PLUGIN,
                  "cannot be created again");
    prt_builder_config_destroy(cfg);
    return e;
}

static void run(prt_engine *e, const char *xname, const void *x, const char *yname,
                void *y)
{
    prt_context *ctx = NULL;
    CHECK_OK(prt_context_create(e, &ctx));
    if (!ctx)
        return;
    CHECK_OK(prt_context_set_tensor_address(ctx, xname, (void *)x));
    CHECK_OK(prt_context_set_tensor_address(ctx, yname, y));
    CHECK_OK(prt_context_enqueue(ctx, NULL));
    prt_context_destroy(ctx);
}

static void fill(fold_net *f)
{
    tu_rng r;
    tu_rng_seed(&r, 30);
    f->sx = 0.03f;
    f->zx = -4;
    f->sy = 0.02f;
    f->zy = 3;
    for (int i = 0; i < M * K; i++)
        f->x[i] = (int8_t)tu_rng_range(&r, -128, 127);
    for (int n = 0; n < N; n++) {
        f->sw[n] = 0.01f * (float)(n + 1);
        f->b[n] = (float)(tu_rng_uniform(&r) - 0.5);
        for (int k = 0; k < K; k++) {
            f->w[n * K + k] = (int8_t)tu_rng_range(&r, -127, 127);
            f->wf[n * K + k] = (float)f->w[n * K + k] * f->sw[n];
        }
    }
}

/* QuantFC's result in double, before any quantization. */
static double fc_ref(const fold_net *f, int m, int n)
{
    double v = f->b[n];
    for (int k = 0; k < K; k++)
        v += ((double)f->x[m * K + k] - f->zx) * f->sx * f->w[n * K + k] * f->sw[n];
    return v;
}

static void check_fc(const fold_net *f, const float *y)
{
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double v = fc_ref(f, m, n);
            CHECK(fabs(y[m * N + n] - v) <= 1e-5 * (1 + fabs(v)));
        }
}

/* The layers of an engine by plugin name, joined: "QuantFC" or
 * "DequantizeLinear,QuantFC". */
static void layers_of(const prt_engine *e, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (int32_t i = 0; i < prt_engine_layer_count(e); i++) {
        prt_layer_info info;
        size_t n = strlen(buf);
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        CHECK_OK(prt_engine_get_layer(e, i, &info));
        snprintf(buf + n, cap - n, "%s%s", n ? "," : "", info.plugin_name);
    }
}

static prt_quant_desc tensor_quant(const prt_engine *e, const char *name)
{
    prt_quant_desc q;
    memset(&q, 0, sizeof q);
    q.struct_size = sizeof q;
    for (int32_t i = 0; i < prt_engine_tensor_count(e); i++) {
        prt_tensor_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        CHECK_OK(prt_engine_get_tensor(e, i, &info));
        if (strcmp(info.name, name) == 0)
            CHECK_OK(prt_engine_get_tensor_quant(e, i, &q));
    }
    return q;
}

static void test_fc_folds(const prt_registry *reg, const fold_net *f)
{
    prt_network *net = make_fc_net(reg, f, 0, 0);
    prt_engine *e = build(net, reg, 0), *loaded = NULL;
    char layers[256];
    float y[M * N];
    void *bytes = NULL;
    size_t size = 0;
    if (!e) {
        prt_network_destroy(net);
        return;
    }
    layers_of(e, layers, sizeof layers);
    CHECK(strcmp(layers, "QuantFC") == 0);
    CHECK(strstr(g_log, "folded DequantizeLinear layer 'dq_x' into layer 'fc'") != NULL);
    CHECK(strstr(g_log, "folded DequantizeLinear layer 'dq_w' into layer 'fc'") != NULL);
    CHECK(strstr(g_log, "per-channel scale") != NULL);
    /* The scales are x's and w's now, and survive the file (with no DQ
     * left, the stand-in is not needed to load it). */
    CHECK_OK(prt_engine_serialize(e, &bytes, &size));
    if (bytes)
        CHECK_OK(prt_engine_deserialize(reg, bytes, size, &loaded));
    if (loaded) {
        prt_quant_desc qx = tensor_quant(loaded, "x"), qw = tensor_quant(loaded, "w");
        CHECK(qx.kind == PRT_QUANT_PER_TENSOR && qx.scale == f->sx &&
              qx.zero_point == f->zx);
        CHECK(qw.kind == PRT_QUANT_PER_CHANNEL && qw.axis == 0 && qw.count == N);
        for (int n = 0; n < N && qw.kind == PRT_QUANT_PER_CHANNEL; n++)
            CHECK(qw.scales[n] == f->sw[n] && qw.zero_points[n] == 0);
        memset(y, 0, sizeof y);
        run(loaded, "x", f->x, "y", y);
        check_fc(f, y);
    }
    /* The network itself is unchanged: a second build folds again. */
    prt_engine_destroy(e);
    e = build(net, reg, 0);
    if (e) {
        layers_of(e, layers, sizeof layers);
        CHECK(strcmp(layers, "QuantFC") == 0);
    }
    prt_free(bytes);
    prt_engine_destroy(loaded);
    prt_engine_destroy(e);
    prt_network_destroy(net);
}

static void test_fc_float_w_stays(const prt_registry *reg, const fold_net *f)
{
    prt_network *net = make_fc_net(reg, f, 1, 0);
    prt_engine *e = build(net, reg, 1);
    char layers[256];
    float y[M * N];
    CHECK(strstr(g_log, "DequantizeLinear layer 'dq_x' stays a separate layer: layer "
                        "'fc' (plugin example::QuantFC) does not take int8") != NULL);
    if (e) {
        layers_of(e, layers, sizeof layers);
        CHECK(strcmp(layers, "DequantizeLinear,QuantFC") == 0);
        memset(y, 0, sizeof y);
        run(e, "x", f->x, "y", y);
        check_fc(f, y);
    }
    prt_engine_destroy(e);
    prt_network_destroy(net);
}

/* x -> DQ -> QuantFC -> Q -> z: both DQs and the Q fold, QuantFC writes z's
 * integers (an engine loaded from bytes checks that it does: check_layers),
 * which are the quantized result within one step. */
static void test_fc_q_folds(const prt_registry *reg, const fold_net *f)
{
    prt_network *net = make_fc_net(reg, f, 0, 1);
    prt_engine *e = build(net, reg, 0), *loaded = NULL;
    char layers[256];
    int8_t z[M * N];
    void *bytes = NULL;
    size_t size = 0;
    if (e) {
        layers_of(e, layers, sizeof layers);
        CHECK(strcmp(layers, "QuantFC") == 0);
        CHECK(strstr(g_log, "folded QuantizeLinear layer 'q_y' into layer 'fc' (plugin "
                            "example::QuantFC): output 0 writes int8 'z' with its "
                            "per-tensor scale") != NULL);
        CHECK_OK(prt_engine_serialize(e, &bytes, &size));
    }
    if (bytes)
        CHECK_OK(prt_engine_deserialize(reg, bytes, size, &loaded));
    if (loaded) {
        prt_quant_desc qz = tensor_quant(loaded, "z");
        CHECK(qz.kind == PRT_QUANT_PER_TENSOR && qz.scale == f->sy &&
              qz.zero_point == f->zy);
        memset(z, 0, sizeof z);
        run(loaded, "x", f->x, "z", z);
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) {
                double q =
                    fmin(fmax(nearbyint(fc_ref(f, m, n) / f->sy) + f->zy, -128), 127);
                CHECK(fabs(z[m * N + n] - q) <= 1);
            }
    }
    prt_free(bytes);
    prt_engine_destroy(loaded);
    prt_engine_destroy(e);
    prt_network_destroy(net);
}

/* Adds QuantFC(in, w through a DQ, b) -> its output; w is [n, k] of f->w's
 * values with f->sw's scales. */
static int add_fc(const prt_registry *reg, prt_network *net, const fold_net *f,
                  int32_t in, int64_t n, int64_t k, const char *name, int32_t *out)
{
    int64_t wd[2] = {n, k}, bd[1] = {n};
    prt_dims wdims = tu_dims(2, wd), bdims = tu_dims(1, bd);
    int8_t zw[N] = {0};
    int32_t w, ins[3], layer;
    char nm[64];
    prt_plugin *p;
    snprintf(nm, sizeof nm, "%s_w", name);
    REQUIRE_OK(prt_network_add_constant(net, nm, PRT_INT8, &wdims, f->w, &w));
    snprintf(nm, sizeof nm, "%s_dq_w", name);
    REQUIRE(add_qdq(net, w, nm, f->sw, n, zw, 0, 0, &ins[1]) == 0);
    snprintf(nm, sizeof nm, "%s_b", name);
    REQUIRE_OK(prt_network_add_constant(net, nm, PRT_FLOAT32, &bdims, f->b, &ins[2]));
    ins[0] = in;
    p = tu_make_plugin(reg, "example", "QuantFC", "1", NULL, 0);
    REQUIRE(p);
    if (prt_network_add_plugin(net, ins, 3, NULL, 0, p, &layer) != PRT_OK) {
        p->vt->runtime->destroy(p);
        REQUIRE(0);
    }
    REQUIRE_OK(prt_network_set_layer_name(net, layer, name));
    REQUIRE_OK(prt_network_get_layer_output(net, layer, 0, out));
    return 0;
}

/* x -> DQ -> fc1 -> Q(sy, zy) -> DQ(s2, zy) -> fc2 -> y, a QDQ pair
 * between two plugins: with s2 == sy everything folds and the integers
 * pass from fc1 to fc2; on another scale (a requantization) fc2's DQs
 * stay. */
static void test_chain(const prt_registry *reg, const fold_net *f, float s2)
{
    prt_network *net = NULL;
    int64_t xd[2] = {M, K};
    prt_dims xdims = tu_dims(2, xd);
    int32_t x, t, y;
    int same = s2 == f->sy;
    prt_engine *e = NULL;
    CHECK_OK(prt_network_create(&net));
    if (!net)
        return;
    if (prt_network_add_input(net, "x", PRT_INT8, &xdims, &x) != PRT_OK ||
        add_qdq(net, x, "dq_x", &f->sx, 1, &f->zx, 1, 0, &t) != 0 ||
        add_fc(reg, net, f, t, N, K, "fc1", &t) != 0 ||
        add_qdq(net, t, "q_1", &f->sy, 1, &f->zy, 1, 1, &t) != 0 ||
        add_qdq(net, t, "dq_1", &s2, 1, &f->zy, 1, 0, &t) != 0 ||
        add_fc(reg, net, f, t, N, N, "fc2", &y) != 0) {
        CHECK(0);
        prt_network_destroy(net);
        return;
    }
    CHECK_OK(prt_network_set_tensor_name(net, y, "y"));
    CHECK_OK(prt_network_mark_output(net, y));
    e = build(net, reg, !same);
    CHECK(strstr(g_log, "folded QuantizeLinear layer 'q_1' into layer 'fc1'") != NULL);
    CHECK((strstr(g_log, "folded DequantizeLinear layer 'dq_1' into layer 'fc2'") !=
           NULL) == same);
    if (e && same) {
        char layers[256];
        float out[M * N];
        layers_of(e, layers, sizeof layers);
        CHECK(strcmp(layers, "QuantFC,QuantFC") == 0);
        memset(out, 0, sizeof out);
        run(e, "x", f->x, "y", out);
        /* fc2 over fc1's result quantized on sy; a result next to a rounding
         * midpoint may land one step apart, which moves y by at most sy
         * times a row of w's magnitudes. */
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) {
                double v = f->b[n], tol = 1e-4;
                for (int k = 0; k < N; k++) {
                    double q =
                        fmin(fmax(nearbyint(fc_ref(f, m, k) / f->sy) + f->zy, -128), 127);
                    v += (q - f->zy) * f->sy * f->w[n * N + k] * f->sw[n];
                    tol += f->sy * fabs(f->w[n * N + k] * f->sw[n]);
                }
                CHECK(fabs(out[m * N + n] - v) <= tol);
            }
    }
    prt_engine_destroy(e);
    prt_network_destroy(net);
}

/* x (float) -> Identity -> Q: Identity writes only its input's dtype, so
 * the Q stays. */
static void test_q_stays(const prt_registry *reg, const fold_net *f)
{
    prt_network *net = NULL;
    const prt_plugin_creator *cr = NULL;
    prt_plugin *p = NULL;
    int64_t xd[1] = {N};
    prt_dims xdims = tu_dims(1, xd);
    int32_t x, y, z, layer = -1;
    CHECK_OK(prt_builtin_find_creator("Identity", "1", &cr));
    CHECK_OK(prt_network_create(&net));
    if (!net || !cr)
        return;
    CHECK_OK(prt_network_add_input(net, "x", PRT_FLOAT32, &xdims, &x));
    CHECK_OK(cr->create(cr, "id", NULL, PRT_PHASE_BUILD, &p));
    if (p && prt_network_add_plugin(net, &x, 1, NULL, 0, p, &layer) != PRT_OK) {
        p->vt->runtime->destroy(p);
        layer = -1;
    }
    if (layer >= 0 && prt_network_get_layer_output(net, layer, 0, &y) == PRT_OK &&
        add_qdq(net, y, "q", &f->sy, 1, &f->zy, 1, 1, &z) == 0) {
        prt_engine *e;
        CHECK_OK(prt_network_set_tensor_name(net, z, "z"));
        CHECK_OK(prt_network_mark_output(net, z));
        e = build(net, reg, 1);
        CHECK(strstr(g_log,
                     "QuantizeLinear layer 'q' stays a separate layer: layer "
                     "'Identity_0' (plugin Identity) does not write int8") != NULL);
        if (e) {
            char layers[256];
            float xin[N];
            int8_t zout[N];
            layers_of(e, layers, sizeof layers);
            CHECK(strcmp(layers, "Identity,QuantizeLinear") == 0);
            for (int i = 0; i < N; i++)
                xin[i] = f->b[i];
            run(e, "x", xin, "z", zout);
            for (int i = 0; i < N; i++)
                CHECK(zout[i] ==
                      (int8_t)fmin(fmax(nearbyintf(xin[i] / f->sy) + f->zy, -128), 127));
        }
        prt_engine_destroy(e);
    }
    prt_network_destroy(net);
}

/* x -> DQ -> Identity (built-in: any dtype, scale or not) and, with
 * `twice`, a second Identity on the DQ's output. */
static void test_stays(const prt_registry *reg, const fold_net *f, int twice)
{
    prt_network *net = NULL;
    const prt_plugin_creator *cr = NULL;
    int64_t xd[2] = {M, K};
    prt_dims xdims = tu_dims(2, xd);
    int32_t x, t, y, layer;
    char layers[256];
    float out[M * K];
    CHECK_OK(prt_builtin_find_creator("Identity", "1", &cr));
    CHECK_OK(prt_network_create(&net));
    if (!net || !cr)
        return;
    CHECK_OK(prt_network_add_input(net, "x", PRT_INT8, &xdims, &x));
    if (add_qdq(net, x, "dq", &f->sx, 1, &f->zx, 1, 0, &t) == 0) {
        for (int i = 0; i < 1 + twice; i++) {
            prt_plugin *p = NULL;
            CHECK_OK(cr->create(cr, "id", NULL, PRT_PHASE_BUILD, &p));
            if (!p)
                break;
            if (prt_network_add_plugin(net, &t, 1, NULL, 0, p, &layer) != PRT_OK) {
                p->vt->runtime->destroy(p);
                CHECK(0);
                break;
            }
            CHECK_OK(prt_network_get_layer_output(net, layer, 0, &y));
            CHECK_OK(prt_network_set_tensor_name(net, y, i ? "y2" : "y"));
            CHECK_OK(prt_network_mark_output(net, y));
        }
        prt_engine *e = build(net, reg, 1);
        CHECK(strstr(g_log, "'dq' stays a separate layer") != NULL);
        CHECK(strstr(g_log, twice ? "read by more than one layer"
                                  : "(plugin Identity) does not take int8") != NULL);
        if (e) {
            layers_of(e, layers, sizeof layers);
            CHECK(strncmp(layers, "DequantizeLinear,Identity", 25) == 0);
            if (!twice) {
                run(e, "x", f->x, "y", out);
                for (int i = 0; i < M * K; i++)
                    CHECK(out[i] == (float)(f->x[i] - f->zx) * f->sx);
            }
        }
        prt_engine_destroy(e);
    }
    prt_network_destroy(net);
}

int main(void)
{
    prt_registry *reg = tu_registry_with_plugins();
    fold_net f;
    if (!reg)
        return tu_finish(NAME);
    fill(&f);
    if (prt_builtin_find_creator("DequantizeLinear", "1", &g_builtin_dq) != PRT_OK ||
        prt_builtin_find_creator("QuantizeLinear", "1", &g_builtin_q) != PRT_OK) {
        g_builtin_dq = g_builtin_q = NULL;
        prt_clear_error();
    }
    printf("%s: DequantizeLinear played by %s\n", NAME,
           g_builtin_dq ? "the built-in op" : "a stand-in");
    prt_set_logger(log_fn, NULL, PRT_SEV_INFO);
    test_fc_folds(reg, &f);
    test_fc_float_w_stays(reg, &f);
    test_fc_q_folds(reg, &f);
    test_q_stays(reg, &f);
    test_chain(reg, &f, f.sy);
    test_chain(reg, &f, 2 * f.sy);
    test_stays(reg, &f, 0);
    test_stays(reg, &f, 1);
    prt_set_logger(NULL, NULL, 0);
    prt_registry_destroy(reg);
    return tu_finish(NAME);
}
