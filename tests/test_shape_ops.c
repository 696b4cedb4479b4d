/*
 * The shape built-ins (Shape, Gather, Reshape, Unsqueeze, Squeeze, Concat,
 * ConstantOfShape, Expand, Range, Slice, Cast) and the values they state
 * (shape tensors), through the public API: small networks are built (with a
 * dynamic input where shapes are computed), serialized, loaded through an
 * empty registry, run at several shapes and compared with plain C
 * references written here.
 *
 *  - the exporters' chain: Shape -> Gather -> Unsqueeze -> Concat ->
 *    Reshape, -1 and 0 in a Reshape, Add/Sub/Mul/Div on shape values,
 *    Range over a dim, ConstantOfShape and Expand from computed shapes,
 *    Slice ending at a computed dim, Cast of a dim, at two run shapes;
 *  - ConstantOfShape's value of every numeric field type, into integer,
 *    float and bool dtypes (truncation, saturation), and a non-number;
 *  - Expand's broadcasts: rank growth, a middle dim, the last dim (a fill),
 *    rows (a copy), scalars, size-1 dims, empty tensors, element sizes 1 to
 *    8;
 *  - Gather (negative indices, axis 1, int32 indices), Slice (negative
 *    starts and steps, clamping), Squeeze/Unsqueeze, Concat, Cast
 *    (saturation, bool), Shape's start/end;
 *  - Neg and Abs on shape values; which tensors the builder may need the
 *    values of (prt_network_is_shape_input);
 *  - build errors: a shape input whose values cannot be known, bad axes;
 *  - layers whose output is a constant shape value become constants
 *    (constfold.c): a channel split's Shape -> Gather -> Div -> Mul; a
 *    Range and Cast of constants are evaluated at build time;
 *  - Reshape as a view: in place where its input dies, a copy where not,
 *    and a run whose volumes differ refused before a byte moves.
 */
#include <math.h>
#include <stdlib.h>

#include "op_testutil.h"

#define MAXT 64

/* Data-only and shape-only shorthands. */
static int32_t op1(ot_net *g, const char *op, int32_t a)
{
    return ot_net_layer(g, op, NULL, 0, &a, 1, NULL, 0);
}
static int32_t op2(ot_net *g, const char *op, int32_t a, int32_t b)
{
    int32_t in[2] = {a, b};
    return ot_net_layer(g, op, NULL, 0, in, 2, NULL, 0);
}
/* data a, shape input s */
static int32_t op_s(ot_net *g, const char *op, int32_t a, int32_t s)
{
    return ot_net_layer(g, op, NULL, 0, &a, a >= 0, &s, 1);
}

static int32_t i64s(ot_net *g, int64_t v) /* a 0-D int64 */
{
    return ot_net_const(g, PRT_INT64, 0, 1, &v);
}
static int32_t i64v(ot_net *g, int64_t n, const int64_t *v) /* 1-D int64 */
{
    return ot_net_const(g, PRT_INT64, 1, n, v);
}

/* Builds with X in [1..8] x [1..8] (when dynamic), serializes and loads
 * through an empty registry. */
static prt_status build(ot_net *g, int dynamic, prt_engine **out_e)
{
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL;
    int32_t prof;
    prt_dims mn = {2, {1, 1}}, op = {2, {4, 4}}, mx = {2, {8, 8}};
    prt_status st = g->st;
    if (!st)
        st = prt_builder_config_create(&cfg);
    if (!st && dynamic)
        st = prt_builder_config_add_profile(cfg, &prof);
    if (!st && dynamic)
        st = prt_builder_config_set_profile_dims(cfg, prof, "X", &mn, &op, &mx);
    if (!st)
        st = prt_engine_build(g->n, cfg, NULL, &e);
    if (!st)
        st = ot_reload(e, out_e);
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    return st;
}

/* Runs with X (float32, dims xd) and fetches outputs by name into bufs
 * (each MAXT * 8 bytes), their dims into od. */
static prt_status run(prt_engine *e, const prt_dims *xd, const void *x,
                      const char *const *names, int32_t n, void *bufs, prt_dims *od)
{
    prt_context *ctx = NULL;
    prt_status st = prt_context_create(e, &ctx);
    if (!st)
        st = prt_context_set_input_shape(ctx, "X", xd);
    if (!st)
        st = prt_context_set_tensor_address(ctx, "X", (void *)x);
    for (int32_t i = 0; !st && i < n; i++) {
        st = prt_context_get_tensor_shape(ctx, names[i], &od[i]);
        if (!st && tu_volume(&od[i]) > MAXT)
            st = PRT_ERR_SHAPE;
        if (!st)
            st = prt_context_set_tensor_address(ctx, names[i],
                                                (char *)bufs + (size_t)i * MAXT * 8);
    }
    if (!st)
        st = prt_context_enqueue(ctx, NULL);
    prt_context_destroy(ctx);
    return st;
}

static int dims_are(const prt_dims *d, int32_t nb, int64_t a, int64_t b)
{
    return d->nb_dims == nb && (nb < 1 || d->d[0] == a) && (nb < 2 || d->d[1] == b);
}

/* ---- the exporters' chain --------------------------------------------------- */

static int test_chain(void)
{
    static const char *const names[] = {"R", "F", "G", "Q", "C", "E", "S", "K", "D", "T"};
    enum { NOUT = 10 };
    ot_net g = {NULL, PRT_OK};
    prt_engine *e = NULL;
    prt_dims xdyn = {2, {-1, -1}};
    int64_t zero1[1] = {0}, m1[1] = {-1}, one1[1] = {1}, two1[1] = {2}, three1[1] = {3};
    int64_t row[3] = {1, 2, 3};
    int32_t x, s, d0, d1, u0, u1, t, i32one = 7;
    prt_field cos_f[2];
    int32_t cos_dt = PRT_INT32;
    int32_t to_f32 = PRT_FLOAT32;
    prt_field cast_f = {"to", &to_f32, PRT_FIELD_INT32, 1};
    static int64_t bufs[NOUT][MAXT];
    prt_dims od[NOUT];
    const prt_dims runs[2] = {{2, {3, 5}}, {2, {2, 7}}};

    cos_f[0] = (prt_field){"dtype", &cos_dt, PRT_FIELD_INT32, 1};
    cos_f[1] = (prt_field){"value", &i32one, PRT_FIELD_INT32, 1};
    REQUIRE_OK(prt_network_create(&g.n));
    CHECK_OK(prt_network_add_input(g.n, "X", PRT_FLOAT32, &xdyn, &x));
    s = op1(&g, "Shape", x);
    d0 = op2(&g, "Gather", s, i64s(&g, 0));             /* 0-D: X's dim 0 */
    d1 = op2(&g, "Gather", s, i64v(&g, 1, m1));         /* 1-D: [dim 1] */
    u0 = op_s(&g, "Unsqueeze", d0, i64v(&g, 1, zero1)); /* [dim 0] */
    /* R = Reshape(X, [d1, d0]) */
    ot_net_output(&g, op_s(&g, "Reshape", x, op2(&g, "Concat", d1, u0)), "R");
    /* F = Reshape(X, [-1]) */
    ot_net_output(&g, op_s(&g, "Reshape", x, i64v(&g, 1, m1)), "F");
    /* G = Reshape(X, [0, (d0 + d1 - d1) * 0 + 1 ... ]) : [0, -1] -> X's dims */
    {
        int64_t zm[2] = {0, -1};
        ot_net_output(&g, op_s(&g, "Reshape", x, i64v(&g, 2, zm)), "G");
    }
    /* Q = Range(0, d0 * d1 / 2 (int div), 1), Cast to float */
    t = op2(&g, "Div", op2(&g, "Mul", d0, op1(&g, "Identity", d1)), i64v(&g, 1, two1));
    {
        int32_t in[3] = {i64s(&g, 0), -1, i64s(&g, 1)};
        int32_t g0 = op2(&g, "Gather", t, i64s(&g, 0));
        in[1] = g0;
        t = ot_net_layer(&g, "Range", NULL, 0, in, 3, in, 3);
        ot_net_output(&g, ot_net_layer(&g, "Cast", &cast_f, 1, &t, 1, NULL, 0), "Q");
    }
    /* C = ConstantOfShape([d0, 2]) int32 7 */
    u1 = op2(&g, "Concat", u0, i64v(&g, 1, two1));
    ot_net_output(&g, ot_net_layer(&g, "ConstantOfShape", cos_f, 2, NULL, 0, &u1, 1),
                  "C");
    /* E = Expand([1, 2, 3], [d0 + d1, 1]) */
    t = op2(&g, "Add", u0, d1);
    ot_net_output(&g,
                  op_s(&g, "Expand", ot_net_const(&g, PRT_INT64, 1, 3, row),
                       op2(&g, "Concat", t, i64v(&g, 1, one1))),
                  "E");
    /* S = Slice(X, [1], [d1 - 1], [1], [1]) */
    {
        int32_t in[5];
        in[0] = x;
        in[1] = i64v(&g, 1, one1);
        in[2] = op2(&g, "Sub", d1, i64v(&g, 1, one1));
        in[3] = i64v(&g, 1, one1);
        in[4] = i64v(&g, 1, one1);
        ot_net_output(&g, ot_net_layer(&g, "Slice", NULL, 0, in, 5, in + 1, 4), "S");
    }
    /* K = Shape(X) with start -1: [d1]; D = Squeeze(Unsqueeze(X)) */
    {
        int32_t st1 = -1;
        prt_field f = {"start", &st1, PRT_FIELD_INT32, 1};
        ot_net_output(&g, ot_net_layer(&g, "Shape", &f, 1, &x, 1, NULL, 0), "K");
        ot_net_output(&g,
                      op_s(&g, "Squeeze", op_s(&g, "Unsqueeze", x, i64v(&g, 1, zero1)),
                           i64v(&g, 1, zero1)),
                      "D");
    }
    /* T = Slice(X, [1 - d1], [d1 + 3], [1], [1]): a start computed at run
     * time and negative there counts from the end (1), the end clamps. */
    {
        int32_t in[5];
        in[0] = x;
        in[1] = op2(&g, "Sub", i64v(&g, 1, one1), d1);
        in[2] = op2(&g, "Add", d1, i64v(&g, 1, three1));
        in[3] = i64v(&g, 1, one1);
        in[4] = i64v(&g, 1, one1);
        ot_net_output(&g, ot_net_layer(&g, "Slice", NULL, 0, in, 5, in + 1, 4), "T");
    }
    REQUIRE_OK(g.st);
    REQUIRE_OK(build(&g, 1, &e));
    for (int r = 0; r < 2; r++) {
        const prt_dims *xd = &runs[r];
        int64_t a = xd->d[0], b = xd->d[1];
        float xv[64];
        for (int i = 0; i < a * b; i++)
            xv[i] = (float)i * 0.5f - 3.0f;
        memset(bufs, 0, sizeof bufs);
        CHECK_OK(run(e, xd, xv, names, NOUT, bufs, od));
        CHECK(dims_are(&od[0], 2, b, a));
        CHECK(memcmp(bufs[0], xv, (size_t)(a * b) * 4) == 0);
        CHECK(dims_are(&od[1], 1, a * b, 0));
        CHECK(dims_are(&od[2], 2, a, b));
        CHECK(dims_are(&od[3], 1, a * b / 2, 0));
        for (int i = 0; i < a * b / 2; i++)
            CHECK(((const float *)bufs[3])[i] == (float)i);
        CHECK(dims_are(&od[4], 2, a, 2));
        for (int i = 0; i < a * 2; i++)
            CHECK(((const int32_t *)bufs[4])[i] == 7);
        CHECK(dims_are(&od[5], 2, a + b, 3));
        for (int i = 0; i < (a + b) * 3; i++)
            CHECK(bufs[5][i] == i % 3 + 1);
        CHECK(dims_are(&od[6], 2, a, b - 2));
        for (int i = 0; i < a; i++)
            for (int j = 0; j < b - 2; j++)
                CHECK(((const float *)bufs[6])[i * (b - 2) + j] == xv[i * b + j + 1]);
        CHECK(dims_are(&od[7], 1, 1, 0) && bufs[7][0] == b);
        CHECK(dims_are(&od[8], 2, a, b));
        CHECK(dims_are(&od[9], 2, a, b - 1));
        for (int i = 0; i < a; i++)
            for (int j = 0; j < b - 1; j++)
                CHECK(((const float *)bufs[9])[i * (b - 1) + j] == xv[i * b + j + 1]);
    }
    prt_engine_destroy(e);
    prt_network_destroy(g.n);
    return 0;
}

/* Neg and Abs state the values of small integer tensors: N = Reshape(X,
 * [|-d1|, -(-d0)]) and C = ConstantOfShape(Neg([-2])), as ONNX's expanded
 * LayerNormalization counts its reduced axes. */
static int test_neg_abs_values(void)
{
    static const char *const names[] = {"N", "C"};
    ot_net g = {NULL, PRT_OK};
    prt_engine *e = NULL;
    prt_dims xdyn = {2, {-1, -1}}, od[2];
    int64_t zero1[1] = {0}, m1[1] = {-1}, m2[1] = {-2};
    static int64_t bufs[2][MAXT];
    const prt_dims runs[2] = {{2, {3, 5}}, {2, {2, 7}}};
    int32_t x, s, d0, d1, t;
    REQUIRE_OK(prt_network_create(&g.n));
    CHECK_OK(prt_network_add_input(g.n, "X", PRT_FLOAT32, &xdyn, &x));
    s = op1(&g, "Shape", x);
    d0 = op_s(&g, "Unsqueeze", op2(&g, "Gather", s, i64s(&g, 0)), i64v(&g, 1, zero1));
    d1 = op2(&g, "Gather", s, i64v(&g, 1, m1));
    t = op2(&g, "Concat", op1(&g, "Abs", op1(&g, "Neg", d1)),
            op1(&g, "Neg", op1(&g, "Neg", d0)));
    ot_net_output(&g, op_s(&g, "Reshape", x, t), "N");
    ot_net_output(&g,
                  ot_net_layer(&g, "ConstantOfShape", NULL, 0, NULL, 0,
                               (int32_t[]){op1(&g, "Neg", i64v(&g, 1, m2))}, 1),
                  "C");
    REQUIRE_OK(g.st);
    REQUIRE_OK(build(&g, 1, &e));
    for (int r = 0; r < 2; r++) {
        float xv[64] = {0};
        CHECK_OK(run(e, &runs[r], xv, names, 2, bufs, od));
        CHECK(dims_are(&od[0], 2, runs[r].d[1], runs[r].d[0]));
        CHECK(dims_are(&od[1], 1, 2, 0));
    }
    /* Which tensors the builder may need the values of: the shape
     * arithmetic's, back to Shape's output, but not X (a float tensor,
     * only Shape's input); nor an int64 input that only indexes data. */
    {
        int32_t y, idx, need = -1,
                        c = ot_net_const(&g, PRT_FLOAT32, 1, 2, (float[]){1, 2});
        CHECK_OK(prt_network_add_input(g.n, "I", PRT_INT64, &(prt_dims){1, {1}}, &idx));
        y = op2(&g, "Gather", c, idx);
        ot_net_output(&g, y, "G");
        CHECK_OK(g.st);
        CHECK_OK(prt_network_is_shape_input(g.n, s, &need));
        CHECK(need == 1);
        CHECK_OK(prt_network_is_shape_input(g.n, d1, &need));
        CHECK(need == 1);
        CHECK_OK(prt_network_is_shape_input(g.n, x, &need));
        CHECK(need == 0);
        CHECK_OK(prt_network_is_shape_input(g.n, idx, &need));
        CHECK(need == 0);
        CHECK_OK(prt_network_is_shape_input(g.n, y, &need));
        CHECK(need == 0);
        CHECK_ERR(prt_network_is_shape_input(g.n, 9999, &need), PRT_ERR_INVALID_ARGUMENT,
                  "outside");
        CHECK_ERR(prt_network_is_shape_input(NULL, 0, &need), PRT_ERR_INVALID_ARGUMENT,
                  "NULL");
    }
    prt_engine_destroy(e);
    prt_network_destroy(g.n);
    return 0;
}

/* ---- single ops on static data ------------------------------------------------ */

/* One op over X (float32 [r, c] from xd) plus constant inputs; returns its
 * output in buf. */
static prt_status one(const char *opname, const prt_field *f, int32_t nf,
                      const prt_dims *xd, const float *x, const int32_t *extra_kind,
                      const void *const *extra, const int64_t *extra_n, int32_t nextra,
                      int32_t nshape_from, void *buf, prt_dims *od)
{
    ot_net g = {NULL, PRT_OK};
    prt_engine *e = NULL;
    const char *names[1] = {"Y"};
    int32_t in[6];
    prt_status st;
    if (prt_network_create(&g.n))
        return PRT_ERR_OUT_OF_MEMORY;
    g.st = prt_network_add_input(g.n, "X", PRT_FLOAT32, xd, &in[0]);
    for (int32_t i = 0; i < nextra; i++)
        in[1 + i] = ot_net_const(&g, extra_kind[i], extra_n[i] < 0 ? 0 : 1,
                                 extra_n[i] < 0 ? 1 : extra_n[i], extra[i]);
    /* nshape_from k > 0: inputs k.. are data and shape inputs; -k: shape
     * inputs only. */
    {
        int32_t k = nshape_from < 0 ? -nshape_from : nshape_from;
        ot_net_output(&g,
                      ot_net_layer(&g, opname, f, nf, in,
                                   nshape_from < 0 ? k : 1 + nextra, in + k,
                                   k ? 1 + nextra - k : 0),
                      "Y");
    }
    st = build(&g, 0, &e);
    if (!st)
        st = run(e, xd, x, names, 1, buf, od);
    prt_engine_destroy(e);
    prt_network_destroy(g.n);
    return st;
}

static int test_gather_slice(void)
{
    prt_dims xd = {2, {3, 4}}, od;
    float x[12], y[MAXT * 2];
    for (int i = 0; i < 12; i++)
        x[i] = (float)i;
    /* Gather axis 1, int32 indices [-1, 0, 2] -> [3, 3] */
    {
        int32_t idx[3] = {-1, 0, 2}, axis = 1;
        prt_field f = {"axis", &axis, PRT_FIELD_INT32, 1};
        int32_t k = PRT_INT32;
        const void *ex = idx;
        int64_t n = 3;
        CHECK_OK(one("Gather", &f, 1, &xd, x, &k, &ex, &n, 1, 0, y, &od));
        CHECK(dims_are(&od, 2, 3, 3));
        for (int r = 0; r < 3; r++)
            for (int j = 0; j < 3; j++)
                CHECK(y[r * 3 + j] == x[r * 4 + (idx[j] < 0 ? idx[j] + 4 : idx[j])]);
        idx[1] = 4; /* out of range: the run fails */
        CHECK_ERR(one("Gather", &f, 1, &xd, x, &k, &ex, &n, 1, 0, y, &od),
                  PRT_ERR_INVALID_ARGUMENT, "out of range");
    }
    /* Gather axis 0, a 0-D index: [4] */
    {
        int64_t idx = -3;
        int32_t k = PRT_INT64;
        const void *ex = &idx;
        int64_t n = -1;
        CHECK_OK(one("Gather", NULL, 0, &xd, x, &k, &ex, &n, 1, 0, y, &od));
        CHECK(dims_are(&od, 1, 4, 0));
        for (int j = 0; j < 4; j++)
            CHECK(y[j] == x[j]);
    }
    /* Slice: rows from -1 down with step -2, columns 10..-100 step -3
     * (clamped), i.e. x[::-2, ::-3] -> [2, 2] */
    {
        int64_t starts[2] = {-1, 10}, ends[2] = {-100, -100}, axes[2] = {0, -1},
                steps[2] = {-2, -3};
        int32_t k[4] = {PRT_INT64, PRT_INT64, PRT_INT64, PRT_INT64};
        const void *ex[4] = {starts, ends, axes, steps};
        int64_t n[4] = {2, 2, 2, 2};
        CHECK_OK(one("Slice", NULL, 0, &xd, x, k, ex, n, 4, 1, y, &od));
        CHECK(dims_are(&od, 2, 2, 2));
        CHECK(y[0] == 11 && y[1] == 8 && y[2] == 3 && y[3] == 0);
    }
    /* Slice without axes/steps, start past the end: an empty dim */
    {
        int64_t starts[2] = {1, 5}, ends[2] = {3, 9};
        int32_t k[2] = {PRT_INT64, PRT_INT64};
        const void *ex[2] = {starts, ends};
        int64_t n[2] = {2, 2};
        CHECK_OK(one("Slice", NULL, 0, &xd, x, k, ex, n, 2, 1, y, &od));
        CHECK(dims_are(&od, 2, 2, 0));
    }
    /* Concat axis 1 with itself through Cast to check dtypes */
    return 0;
}

static int test_cast_concat_squeeze(void)
{
    prt_dims xd = {2, {2, 3}}, od;
    float x[6] = {-2.7f, 0.0f, 3e10f, NAN, 1.5f, -3e10f};
    uint8_t yb[MAXT * 8];
    /* float -> int32: truncation, saturation, NaN -> 0 */
    {
        int32_t to = PRT_INT32;
        prt_field f = {"to", &to, PRT_FIELD_INT32, 1};
        const int32_t *y = (const int32_t *)yb;
        CHECK_OK(one("Cast", &f, 1, &xd, x, NULL, NULL, NULL, 0, 0, yb, &od));
        CHECK(y[0] == -2 && y[1] == 0 && y[2] == INT32_MAX && y[3] == 0 && y[4] == 1 &&
              y[5] == INT32_MIN);
        to = PRT_BOOL;
        CHECK_OK(one("Cast", &f, 1, &xd, x, NULL, NULL, NULL, 0, 0, yb, &od));
        CHECK(yb[0] == 1 && yb[1] == 0 && yb[2] == 1 && yb[3] == 1);
        to = 99;
        CHECK_ERR(one("Cast", &f, 1, &xd, x, NULL, NULL, NULL, 0, 0, yb, &od),
                  PRT_ERR_INVALID_ARGUMENT, "prt_dtype");
    }
    /* Concat of X and a constant; a rank mismatch fails the build */
    {
        float c[2] = {9, 8};
        int32_t axis = -1, k = PRT_FLOAT32;
        prt_field f = {"axis", &axis, PRT_FIELD_INT32, 1};
        const void *ex = c;
        int64_t n = 2;
        prt_dims xd1 = {1, {3}};
        float x1[3] = {1, 2, 3};
        const float *y = (const float *)yb;
        CHECK_OK(one("Concat", &f, 1, &xd1, x1, &k, &ex, &n, 1, 0, yb, &od));
        CHECK(dims_are(&od, 1, 5, 0));
        CHECK(y[0] == 1 && y[2] == 3 && y[3] == 9 && y[4] == 8);
        CHECK_ERR(one("Concat", &f, 1, &xd, x, &k, &ex, &n, 1, 0, yb, &od), PRT_ERR_SHAPE,
                  "rank");
        axis = 1;
        CHECK_ERR(one("Concat", &f, 1, &xd1, x1, &k, &ex, &n, 1, 0, yb, &od),
                  PRT_ERR_SHAPE, "axis 1 is out of range for inputs of rank 1 (-1 to 0)");
    }
    /* Axes of Concat and Gather on scalars */
    {
        int32_t axis = 0;
        prt_field f = {"axis", &axis, PRT_FIELD_INT32, 1};
        ot_tensor in[2], y;
        in[0] = ot_make(PRT_FLOAT32, D0());
        in[1] = ot_make(PRT_FLOAT32, D0());
        CHECK_ERR(ot_run_op("Concat", &f, 1, in, 2, &y), PRT_ERR_SHAPE,
                  "Concat (layer 'Concat'): axis 0 needs inputs of rank 1 or more, not a "
                  "scalar");
        ot_free(&in[1]);
        in[1] = ot_make(PRT_INT64, D1(1));
        CHECK_ERR(ot_run_op("Gather", &f, 1, in, 2, &y), PRT_ERR_SHAPE,
                  "axis 0 needs data of rank 1 or more, not a scalar");
        ot_free(&in[0]);
        ot_free(&in[1]);
    }
    /* Squeeze without axes drops the 1s; Unsqueeze with two axes */
    {
        prt_dims d = {3, {1, 3, 1}};
        float v[3] = {1, 2, 3};
        int64_t axes[2] = {0, -1};
        int32_t k = PRT_INT64;
        const void *ex = axes;
        int64_t n = 2;
        CHECK_OK(one("Squeeze", NULL, 0, &d, v, NULL, NULL, NULL, 0, 0, yb, &od));
        CHECK(dims_are(&od, 1, 3, 0));
        CHECK_OK(one("Unsqueeze", NULL, 0, &d, v, &k, &ex, &n, 1, -1, yb, &od));
        CHECK(od.nb_dims == 5 && od.d[0] == 1 && od.d[4] == 1 && od.d[2] == 3);
        axes[1] = 1; /* dim 1 is 3: not squeezable */
        CHECK_ERR(one("Squeeze", NULL, 0, &d, v, &k, &ex, &n, 1, -1, yb, &od),
                  PRT_ERR_SHAPE, "squeezed");
    }
    return 0;
}

/* A shape input computed by a layer that states no values (a float Add):
 * the build names the layer. */
static int test_unknown_values(void)
{
    ot_net g = {NULL, PRT_OK};
    prt_engine *e = NULL;
    prt_dims xd = {1, {2}};
    float two[2] = {1, 2};
    int32_t x, t;
    REQUIRE_OK(prt_network_create(&g.n));
    CHECK_OK(prt_network_add_input(g.n, "X", PRT_FLOAT32, &xd, &x));
    t = op2(&g, "Add", x, ot_net_const(&g, PRT_FLOAT32, 1, 2, two));
    ot_net_output(&g, op_s(&g, "Reshape", x, t), "Y");
    /* A float32 shape input goes only to a layer that reads floats. */
    CHECK_ERR(build(&g, 0, &e), PRT_ERR_UNSUPPORTED,
              "shape input 0 ('Add_0:0') is float32, and only a layer that reads float "
              "values takes one");
    prt_network_destroy(g.n);
    /* An integer one whose producer states no values (ArgMax). */
    g = (ot_net){NULL, PRT_OK};
    REQUIRE_OK(prt_network_create(&g.n));
    CHECK_OK(prt_network_add_input(g.n, "X", PRT_FLOAT32, &xd, &x));
    ot_net_output(&g, op_s(&g, "Reshape", x, op1(&g, "ArgMax", x)), "Y");
    CHECK_ERR(build(&g, 0, &e), PRT_ERR_SHAPE, "cannot know");
    prt_engine_destroy(e);
    prt_network_destroy(g.n);
    return 0;
}

/* Ops state the values of small integer outputs (shape tensors), but only a
 * 0-D or 1-D output can be a shape tensor: a 2-D int64 ConstantOfShape, an
 * Add of 2-D int64 constants or a Reshape of a known vector to 2-D must
 * build and run, not fail the build for stating values. */
static int test_values_rank2(void)
{
    ot_net g = {NULL, PRT_OK};
    prt_engine *e = NULL;
    prt_dims xd = {1, {2}}, od[3];
    float xv[2] = {1, 2};
    int64_t shp[2] = {2, 3}, four[4] = {1, 2, 3, 4}, s22[2] = {2, 2};
    int64_t bufs[3][MAXT];
    int32_t dt = PRT_INT64, x, c;
    int64_t seven = 7;
    prt_field f[2];
    const char *names[3] = {"C", "S", "R"};
    REQUIRE_OK(prt_network_create(&g.n));
    CHECK_OK(prt_network_add_input(g.n, "X", PRT_FLOAT32, &xd, &x));
    f[0] = ot_fld_i32("dtype", &dt, 1);
    f[1].name = "value";
    f[1].data = &seven;
    f[1].type = PRT_FIELD_INT64;
    f[1].length = 1;
    c = i64v(&g, 2, shp);
    ot_net_output(&g, ot_net_layer(&g, "ConstantOfShape", f, 2, NULL, 0, &c, 1), "C");
    {
        prt_dims d22 = {2, {2, 2}};
        int32_t a = -1;
        if (!g.st)
            g.st = prt_network_add_constant(g.n, "k22", PRT_INT64, &d22, four, &a);
        ot_net_output(&g, op2(&g, "Add", a, a), "S");
    }
    ot_net_output(&g, op_s(&g, "Reshape", i64v(&g, 4, four), i64v(&g, 2, s22)), "R");
    CHECK_OK(build(&g, 0, &e));
    if (e) {
        CHECK_OK(run(e, &xd, xv, names, 3, bufs, od));
        CHECK(dims_are(&od[0], 2, 2, 3) && bufs[0][0] == 7 && bufs[0][5] == 7);
        CHECK(dims_are(&od[1], 2, 2, 2) && bufs[1][0] == 2 && bufs[1][3] == 8);
        CHECK(dims_are(&od[2], 2, 2, 2) && bufs[2][0] == 1 && bufs[2][3] == 4);
    }
    prt_engine_destroy(e);
    prt_network_destroy(g.n);
    return 0;
}

/* ---- ConstantOfShape's value ----------------------------------------------- */

/* ConstantOfShape([2]) of dtype dt with a one-element value field of type
 * ftype; *got is element 1 of the result. */
static prt_status cos_value(int32_t dt, int32_t ftype, const void *v, double *got)
{
    ot_net g = {NULL, PRT_OK};
    prt_engine *e = NULL;
    prt_dims xd = {1, {2}}, od;
    float xv[2] = {0, 0};
    int64_t two = 2, buf[MAXT];
    const char *names[1] = {"C"};
    int32_t x, c;
    prt_field f[2];
    prt_status st;
    f[0] = ot_fld_i32("dtype", &dt, 1);
    f[1] = (prt_field){"value", v, ftype, 1};
    if (prt_network_create(&g.n))
        return PRT_ERR_OUT_OF_MEMORY;
    g.st = prt_network_add_input(g.n, "X", PRT_FLOAT32, &xd, &x);
    c = i64v(&g, 1, &two);
    ot_net_output(&g, ot_net_layer(&g, "ConstantOfShape", f, 2, NULL, 0, &c, 1), "C");
    st = build(&g, 0, &e);
    if (!st)
        st = run(e, &xd, xv, names, 1, buf, &od);
    if (!st) {
        ot_tensor t = {dt, od, buf};
        *got = ot_get(&t, 1);
    }
    prt_engine_destroy(e);
    prt_network_destroy(g.n);
    return st;
}

static int test_constant_value(void)
{
    static const int8_t i8 = -3;
    static const int16_t i16 = 300;
    static const int32_t i32 = -70000;
    static const int64_t i64 = 5000000000LL;
    static const float f32 = -2.75f;
    static const double f64 = 1.0e300;
    static const uint16_t h = 0x3e00, bf = 0x3fc0; /* 1.5 in both */
    static const char ch = 'x';
    static const struct {
        int32_t dtype, ftype;
        const void *value;
        double want;
    } cases[] = {
        {PRT_INT32, PRT_FIELD_INT8, &i8, -3},
        {PRT_INT32, PRT_FIELD_INT16, &i16, 300},
        {PRT_INT64, PRT_FIELD_INT32, &i32, -70000},
        {PRT_INT64, PRT_FIELD_INT64, &i64, 5000000000.0},
        {PRT_FLOAT32, PRT_FIELD_INT16, &i16, 300},
        {PRT_FLOAT32, PRT_FIELD_FLOAT32, &f32, -2.75},
        {PRT_FLOAT16, PRT_FIELD_FLOAT16, &h, 1.5},
        {PRT_BFLOAT16, PRT_FIELD_BFLOAT16, &bf, 1.5},
        {PRT_FLOAT32, PRT_FIELD_FLOAT64, &f64, INFINITY},
        /* A float for an integer dtype truncates, and saturates. */
        {PRT_INT32, PRT_FIELD_FLOAT32, &f32, -2},
        {PRT_INT64, PRT_FIELD_FLOAT64, &f64, (double)INT64_MAX},
        {PRT_BOOL, PRT_FIELD_INT16, &i16, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double got = 0;
        CHECK_OK(cos_value(cases[i].dtype, cases[i].ftype, cases[i].value, &got));
        if (got != cases[i].want) {
            fprintf(stderr, "ConstantOfShape case %d: %g, wanted %g\n", (int)i, got,
                    cases[i].want);
            CHECK(got == cases[i].want);
        }
    }
    {
        double got = 0;
        CHECK_ERR(cos_value(PRT_INT32, PRT_FIELD_CHAR, &ch, &got),
                  PRT_ERR_INVALID_ARGUMENT,
                  "field 'value' has type char, expected a number");
    }
    return 0;
}

/* ---- Expand ---------------------------------------------------------------- */

/* Expand(X, shape) with X of dtype and dims xd (random) and a constant
 * shape; checks Y's dims against want and its elements against X's,
 * broadcast. */
static int expand_case(int32_t dtype, prt_dims xd, int64_t nshape, const int64_t *shape,
                       prt_dims want, tu_rng *rng)
{
    ot_net g = {NULL, PRT_OK};
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    ot_tensor x = ot_random(dtype, xd, rng, 0), y = ot_make(dtype, want);
    int32_t tx;
    double ref[256];
    char what[96];
    snprintf(what, sizeof what, "Expand %s case %lld->%lld", prt_dtype_name(dtype),
             (long long)tu_volume(&xd), (long long)tu_volume(&want));
    REQUIRE(tu_volume(&want) <= 256 && x.data && y.data);
    for (int64_t i = 0; i < tu_volume(&want); i++) {
        int64_t idx[PRT_MAX_DIMS];
        ot_unravel(&want, i, idx);
        ref[i] = ot_get(&x, ot_bcast_at(&xd, &want, idx));
    }
    REQUIRE_OK(prt_network_create(&g.n));
    g.st = prt_network_add_input(g.n, "X", dtype, &xd, &tx);
    ot_net_output(&g, op_s(&g, "Expand", tx, i64v(&g, nshape, shape)), "Y");
    CHECK_OK(build(&g, 0, &e));
    if (e) {
        CHECK_OK(prt_context_create(e, &ctx));
        CHECK_OK(prt_context_set_tensor_address(ctx, "X", x.data));
        CHECK_OK(prt_context_set_tensor_address(ctx, "Y", y.data));
        CHECK_OK(prt_context_enqueue(ctx, NULL));
        CHECK_OK(prt_context_get_tensor_shape(ctx, "Y", &y.dims));
        ot_check_close(what, &y, &want, ref, 0);
    }
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    prt_network_destroy(g.n);
    ot_free(&x);
    ot_free(&y);
    return 0;
}

static int test_expand(void)
{
    static const int32_t types[] = {PRT_INT8, PRT_BOOL, PRT_FLOAT16, PRT_FLOAT32,
                                    PRT_INT64};
    const int64_t s234[3] = {2, 3, 4}, s34[2] = {3, 4}, s253[3] = {2, 5, 3},
                  s23[2] = {2, 3}, s3[1] = {3}, s111[3] = {1, 1, 1}, s04[2] = {0, 4},
                  s1[1] = {1}, s517[3] = {5, 1, 7}, s249[3] = {2, 4, 9};
    tu_rng rng;
    tu_rng_seed(&rng, 17);
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        int32_t dt = types[t];
        expand_case(dt, ot_dims5(2, 3, 1, 0, 0, 0), 3, s234, ot_dims5(3, 2, 3, 4, 0, 0),
                    &rng); /* rank, last dim */
        expand_case(dt, ot_dims5(2, 1, 4, 0, 0, 0), 2, s34, ot_dims5(2, 3, 4, 0, 0, 0),
                    &rng); /* rows */
        expand_case(dt, ot_dims5(3, 2, 1, 3, 0, 0), 3, s253, ot_dims5(3, 2, 5, 3, 0, 0),
                    &rng); /* a middle dim */
        expand_case(dt, ot_dims5(0, 0, 0, 0, 0, 0), 2, s23, ot_dims5(2, 2, 3, 0, 0, 0),
                    &rng); /* a scalar */
        expand_case(dt, ot_dims5(1, 3, 0, 0, 0, 0), 1, s3, ot_dims5(1, 3, 0, 0, 0, 0),
                    &rng); /* the same */
        expand_case(dt, ot_dims5(2, 2, 1, 0, 0, 0), 3, s111, ot_dims5(3, 1, 2, 1, 0, 0),
                    &rng); /* size-1 dims */
        expand_case(dt, ot_dims5(2, 0, 1, 0, 0, 0), 2, s04, ot_dims5(2, 0, 4, 0, 0, 0),
                    &rng); /* empty */
        expand_case(dt, ot_dims5(0, 0, 0, 0, 0, 0), 1, s1, ot_dims5(1, 1, 0, 0, 0, 0),
                    &rng); /* scalar to [1] */
        expand_case(dt, ot_dims5(3, 1, 3, 1, 0, 0), 3, s517, ot_dims5(3, 5, 3, 7, 0, 0),
                    &rng); /* outer and last dims, odd counts: copies repeated twice */
        expand_case(dt, ot_dims5(2, 4, 1, 0, 0, 0), 3, s249, ot_dims5(3, 2, 4, 9, 0, 0),
                    &rng); /* rank and last dim at once */
    }
    return 0;
}

/* ---- constant shape values become constants ----------------------------- */

/* A channel split as exporters write it: with X of dims [-1, 6], Shape ->
 * Gather(dim 1) -> Div 2 -> Mul 2 are numbers at build time (6, 3, 6), so
 * the builder removes Gather, Div and Mul and their outputs become
 * constants (constfold.c); Shape, read by nothing then, is skipped. A = X[:,
 * :3], B = X[:, 3:], and K = h + 0, an output of the network, stays a layer
 * that runs. And P = X + Cast(Range(0, dim 1)): Range and Cast have
 * constant inputs and are evaluated at build time. 12 layers in the
 * network, 6 in the engine. */
static int test_constfold(void)
{
    static const char *const names[] = {"A", "B", "K", "P"};
    ot_net g = {NULL, PRT_OK};
    prt_builder_config *cfg = NULL;
    prt_engine *built = NULL, *e = NULL;
    prt_dims xdyn = {2, {-1, 6}}, mn = {2, {1, 6}}, op = {2, {3, 6}}, mx = {2, {8, 6}};
    int64_t zero1[1] = {0}, one1[1] = {1}, two1[1] = {2};
    int32_t x, h, e2, prof, nb = 0;
    static int64_t bufs[4][MAXT];
    prt_dims od[4];
    prt_layer_info li = {.struct_size = sizeof li};
    REQUIRE_OK(prt_network_create(&g.n));
    CHECK_OK(prt_network_add_input(g.n, "X", PRT_FLOAT32, &xdyn, &x));
    h = op2(&g, "Div", op2(&g, "Gather", op1(&g, "Shape", x), i64v(&g, 1, one1)),
            i64v(&g, 1, two1));
    e2 = op2(&g, "Mul", h, i64v(&g, 1, two1));
    {
        int32_t in[4] = {x, i64v(&g, 1, zero1), h, i64v(&g, 1, one1)};
        ot_net_output(&g, ot_net_layer(&g, "Slice", NULL, 0, in, 4, in + 1, 3), "A");
        in[1] = h;
        in[2] = e2;
        ot_net_output(&g, ot_net_layer(&g, "Slice", NULL, 0, in, 4, in + 1, 3), "B");
    }
    ot_net_output(&g, op2(&g, "Add", h, i64v(&g, 1, zero1)), "K");
    /* P = X + Cast(Range(0, 6, 1)) (broadcast over rows): Gather(dim 1)
     * is the value 6, Range of it has 6 elements (no values then) and is
     * evaluated on the CPU, then its Cast: both become constants. */
    {
        int32_t rin[3] = {i64s(&g, 0), -1, i64s(&g, 1)}, r;
        int32_t to_f32 = PRT_FLOAT32;
        prt_field cast_f = {"to", &to_f32, PRT_FIELD_INT32, 1};
        rin[1] = op2(&g, "Gather", op1(&g, "Shape", x), i64s(&g, 1));
        r = ot_net_layer(&g, "Range", NULL, 0, rin, 3, rin, 3);
        ot_net_output(
            &g, op2(&g, "Add", x, ot_net_layer(&g, "Cast", &cast_f, 1, &r, 1, NULL, 0)),
            "P");
    }
    REQUIRE_OK(g.st);
    REQUIRE_OK(prt_builder_config_create(&cfg));
    CHECK_OK(prt_builder_config_add_profile(cfg, &prof));
    CHECK_OK(prt_builder_config_set_profile_dims(cfg, prof, "X", &mn, &op, &mx));
    CHECK_OK(prt_engine_build(g.n, cfg, NULL, &built));
    if (built)
        CHECK_OK(ot_reload(built, &e));
    REQUIRE(e != NULL);
    while (prt_engine_get_layer(e, nb, &li) == PRT_OK) {
        const int shape = strcmp(li.plugin_name, "Shape") == 0;
        static const char *const gone[] = {"Gather", "Div", "Mul", "Range", "Cast"};
        for (int k = 0; k < 5; k++)
            CHECK(strcmp(li.plugin_name, gone[k]) != 0);
        CHECK(li.skipped == shape);
        nb++;
    }
    /* Shape (twice, skipped), the Slices, K's Add and P's Add. */
    CHECK(nb == 6);
    for (int64_t a = 1; a <= 8; a += 7) {
        prt_dims xd = {2, {a, 6}};
        float xv[48];
        for (int i = 0; i < a * 6; i++)
            xv[i] = (float)i * 0.25f - 1.0f;
        memset(bufs, 0, sizeof bufs);
        CHECK_OK(run(e, &xd, xv, names, 4, bufs, od));
        CHECK(dims_are(&od[0], 2, a, 3) && dims_are(&od[1], 2, a, 3));
        for (int i = 0; i < a; i++)
            for (int j = 0; j < 3; j++) {
                CHECK(((const float *)bufs[0])[i * 3 + j] == xv[i * 6 + j]);
                CHECK(((const float *)bufs[1])[i * 3 + j] == xv[i * 6 + 3 + j]);
            }
        CHECK(dims_are(&od[2], 1, 1, 0) && bufs[2][0] == 3);
        CHECK(dims_are(&od[3], 2, a, 6));
        for (int i = 0; i < a * 6; i++)
            CHECK(((const float *)bufs[3])[i] == xv[i] + (float)(i % 6));
    }
    prt_engine_destroy(e);
    prt_engine_destroy(built);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(g.n);
    return 0;
}

/* Reshape is a view (op_is_view): where its input dies there, its output
 * takes the input's memory although the dims differ, and nothing is
 * copied. Y = Relu(Reshape(Relu(X), [-1])): the Reshape in place. Z =
 * Reshape(N, [-1]) + Abs(Reshape(N, [-1])), N = Neg(X): the first Reshape
 * of N copies (N is read again), the second takes N's memory. The values
 * at two shapes. Then V = Relu(Reshape(Relu(X), Shape(W))) run with W of another
 * volume: the run refuses before a byte moves (the output's memory is the
 * input's, and their sizes differ). */
static int test_reshape_view(void)
{
    static const char *const names[] = {"Y", "Z"};
    ot_net g = {NULL, PRT_OK};
    prt_engine *e = NULL;
    int64_t m1[1] = {-1};
    int32_t x, n, in_place = 0, copies = 0, nb = 0;
    static int64_t bufs[2][MAXT];
    prt_dims od[2];
    prt_layer_info li = {.struct_size = sizeof li};
    REQUIRE_OK(prt_network_create(&g.n));
    CHECK_OK(prt_network_add_input(g.n, "X", PRT_FLOAT32, &(prt_dims){2, {-1, -1}}, &x));
    ot_net_output(
        &g, op1(&g, "Relu", op_s(&g, "Reshape", op1(&g, "Relu", x), i64v(&g, 1, m1))),
        "Y");
    n = op1(&g, "Neg", x);
    {
        int32_t r1 = op_s(&g, "Reshape", n, i64v(&g, 1, m1));
        int32_t r2 = op_s(&g, "Reshape", n, i64v(&g, 1, m1));
        ot_net_output(&g, op2(&g, "Add", r1, op1(&g, "Abs", r2)), "Z");
    }
    REQUIRE_OK(build(&g, 1, &e));
    while (prt_engine_get_layer(e, nb, &li) == PRT_OK) {
        if (strcmp(li.plugin_name, "Reshape") == 0) {
            in_place += li.alias_input[0] == 0;
            copies += li.alias_input[0] == -1;
        }
        nb++;
    }
    CHECK(in_place == 2 && copies == 1);
    for (int64_t a = 1; a <= 8; a += 3) {
        prt_dims xd = {2, {a, 8 - a + 1}};
        const int64_t v = a * (8 - a + 1);
        float xv[MAXT];
        for (int64_t i = 0; i < v; i++)
            xv[i] = (float)i * 0.5f - 5.0f;
        memset(bufs, 0, sizeof bufs);
        CHECK_OK(run(e, &xd, xv, names, 2, bufs, od));
        CHECK(dims_are(&od[0], 1, v, 0) && dims_are(&od[1], 1, v, 0));
        for (int64_t i = 0; i < v; i++) {
            CHECK(((const float *)bufs[0])[i] == (xv[i] > 0.0f ? xv[i] : 0.0f));
            CHECK(((const float *)bufs[1])[i] == -xv[i] + fabsf(xv[i]));
        }
    }
    prt_engine_destroy(e);
    prt_network_destroy(g.n);

    /* V = Relu(Reshape(Relu(X), Shape(W))). */
    {
        prt_builder_config *cfg = NULL;
        prt_context *ctx = NULL;
        prt_dims dyn = {2, {-1, -1}}, mn = {2, {1, 1}}, op = {2, {4, 4}},
                 mx = {2, {8, 8}};
        prt_dims xd = {2, {2, 3}}, wd = {2, {4, 4}};
        float xv[6] = {1, -2, 3, -4, 5, -6}, wv[16] = {0}, vv[64];
        int32_t w, prof;
        g = (ot_net){NULL, PRT_OK};
        e = NULL;
        REQUIRE_OK(prt_network_create(&g.n));
        CHECK_OK(prt_network_add_input(g.n, "X", PRT_FLOAT32, &dyn, &x));
        CHECK_OK(prt_network_add_input(g.n, "W", PRT_FLOAT32, &dyn, &w));
        ot_net_output(
            &g,
            op1(&g, "Relu", op_s(&g, "Reshape", op1(&g, "Relu", x), op1(&g, "Shape", w))),
            "V");
        REQUIRE_OK(g.st);
        REQUIRE_OK(prt_builder_config_create(&cfg));
        CHECK_OK(prt_builder_config_add_profile(cfg, &prof));
        CHECK_OK(prt_builder_config_set_profile_dims(cfg, prof, "X", &mn, &op, &mx));
        CHECK_OK(prt_builder_config_set_profile_dims(cfg, prof, "W", &mn, &op, &mx));
        CHECK_OK(prt_engine_build(g.n, cfg, NULL, &e));
        REQUIRE(e != NULL);
        REQUIRE_OK(prt_context_create(e, &ctx));
        CHECK_OK(prt_context_set_input_shape(ctx, "X", &xd));
        CHECK_OK(prt_context_set_input_shape(ctx, "W", &wd));
        CHECK_OK(prt_context_set_tensor_address(ctx, "X", xv));
        CHECK_OK(prt_context_set_tensor_address(ctx, "W", wv));
        CHECK_OK(prt_context_set_tensor_address(ctx, "V", vv));
        CHECK_ERR(prt_context_enqueue(ctx, NULL), PRT_ERR_SHAPE, "sizes differ");
        /* The same volume runs. */
        wd = (prt_dims){2, {3, 2}};
        CHECK_OK(prt_context_set_input_shape(ctx, "W", &wd));
        CHECK_OK(prt_context_enqueue(ctx, NULL));
        for (int i = 0; i < 6; i++)
            CHECK(vv[i] == (xv[i] > 0.0f ? xv[i] : 0.0f));
        prt_context_destroy(ctx);
        prt_engine_destroy(e);
        prt_builder_config_destroy(cfg);
        prt_network_destroy(g.n);
    }
    return 0;
}

int main(void)
{
    test_chain();
    test_constfold();
    test_reshape_view();
    test_gather_slice();
    test_expand();
    test_constant_value();
    test_cast_concat_squeeze();
    test_unknown_values();
    test_neg_abs_values();
    test_values_rank2();
    return tu_finish("test_shape_ops");
}
