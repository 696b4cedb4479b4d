/*
 * The built-in ops (namespace "plugrt"), through the public API: each op is
 * made with prt_builtin_find_creator, put in a one-layer network, built, run,
 * serialized, loaded through an empty registry (built-ins need none), run
 * again, and compared with a plain C reference written here.
 *
 *  - dims in messages: both spellings of base_dims_format, symbolic dims,
 *    ranks out of range, text cut short;
 *  - table: count, lookup, unknown names and versions;
 *  - plugin objects: identity, fields round trip, clone, bad fields;
 *  - Relu, Identity (every dtype, in-place chains);
 *  - Add/Sub/Mul/Div: dtypes x broadcasting (scalar, row, column, rank
 *    mismatch, both sides, a middle dim, size-1 dims between, long rows,
 *    empty tensors), dynamic dims, errors (a zero divisor in a later row);
 *  - MatMul: 1-D, 2-D, batched, broadcast batch, dtypes, B packed into
 *    panels (float32 and float16), errors; a constant B packed once at
 *    build and load, the same bytes as B given at run time;
 *  - Transpose: ranks 1..5, several perms, element sizes 1/2/4/8, errors;
 *  - Einsum: the listed equations, diagonals, implicit output, ellipsis,
 *    errors;
 *  - Conv: 1-D, 2-D, 3-D, pads/strides/dilations/groups/bias, auto_pad
 *    modes, float16, dynamic shapes, errors;
 *  - HardSigmoid, HardSwish: defaults and fields, float32/float16/bfloat16,
 *    saturation, infinities and NaN, field errors;
 *  - GlobalAveragePool: 1-D, 2-D, 3-D spatial, half floats, dynamic dims,
 *    an empty extent, errors;
 *  - Flatten: every axis (negative too) over several dtypes, scalars,
 *    dynamic dims (products of expressions), errors;
 *  - matrix products: the built-in loops and the BLAS against a double
 *    reference (every transposition, leading dims, blocks' edges, K = 0);
 *    a memory limit switches products to the loops at the next context;
 *  - Gemm: every transA/transB, alpha/beta (defaults too), C absent, scalar,
 *    row, column, full, [1, 1]; half floats; beta 0 with NaN in C; K = 0;
 *    dynamic dims; errors; a constant B, the same bytes as B at run time;
 *  - MobileNet's head (Conv, HardSwish, GlobalAveragePool, HardSigmoid,
 *    Flatten, Gemm) with a dynamic batch;
 *  - a small network chaining several ops with constants;
 *  - allocation failure at every point of build, load and run.
 * Integer ops, Relu, Identity, Transpose and single arithmetic operations
 * are compared exactly; sums of products with a relative tolerance. The
 * tensor and one-op network helpers are op_testutil.h's.
 */
#include <math.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "base/base.h"
#include "op_testutil.h"
#include "ops/op_common.h"

/* ---- dims in messages -------------------------------------------------------- */

static int test_dims_text(void)
{
    prt_dims d = D4(1, 3, 224, 224), bad = D0();
    char buf[64], tiny[6];
    CHECK(strcmp(base_dims_format(&d, BASE_DIMS_X, buf, sizeof buf), "1x3x224x224") == 0);
    CHECK(strcmp(base_dims_format(&d, BASE_DIMS_LIST, buf, sizeof buf),
                 "[1, 3, 224, 224]") == 0);
    base_dims_str(&d, buf, sizeof buf);
    CHECK(strcmp(buf, "1x3x224x224") == 0);
    d.d[1] = BASE_DIM_UNKNOWN;
    d.d[2] = -1; /* a dynamic dim of a descriptor reads as its value */
    CHECK(strcmp(base_dims_format(&d, BASE_DIMS_LIST, buf, sizeof buf),
                 "[1, ?, -1, 224]") == 0);
    CHECK(strcmp(base_dims_format(&d, BASE_DIMS_X, buf, sizeof buf), "1x?x-1x224") == 0);
    CHECK(strcmp(base_dims_format(&bad, BASE_DIMS_X, buf, sizeof buf), "scalar") == 0);
    CHECK(strcmp(base_dims_format(&bad, BASE_DIMS_LIST, buf, sizeof buf), "[]") == 0);
    bad.nb_dims = PRT_MAX_DIMS + 1;
    CHECK(strcmp(base_dims_format(&bad, BASE_DIMS_X, buf, sizeof buf), "(rank 9)") == 0);
    CHECK(strcmp(base_dims_format(&bad, BASE_DIMS_LIST, buf, sizeof buf), "[]") == 0);
    bad.nb_dims = -2;
    CHECK(strcmp(base_dims_format(&bad, BASE_DIMS_X, buf, sizeof buf), "(rank -2)") == 0);
    /* Cut short, but terminated and within the buffer. */
    d = D3(12345, 2, 3);
    CHECK(strcmp(base_dims_format(&d, BASE_DIMS_LIST, tiny, sizeof tiny), "[1234") == 0);
    CHECK(strcmp(base_dims_format(&d, BASE_DIMS_X, tiny, sizeof tiny), "12345") == 0);
    CHECK(strcmp(base_dims_format(&d, BASE_DIMS_X, tiny, 1), "") == 0);
    return 0;
}

/* ---- the table -------------------------------------------------------------- */

static const char *const all_ops[] = {"Relu",
                                      "Identity",
                                      "Add",
                                      "Sub",
                                      "Mul",
                                      "Div",
                                      "MatMul",
                                      "Transpose",
                                      "Einsum",
                                      "Conv",
                                      "HardSigmoid",
                                      "HardSwish",
                                      "GlobalAveragePool",
                                      "Flatten",
                                      "Gemm",
                                      "Erf",
                                      "Tanh",
                                      "Softmax",
                                      "LayerNormalization",
                                      "Equal",
                                      "GreaterOrEqual",
                                      "And",
                                      "IsNaN",
                                      "Where",
                                      "GatherElements",
                                      "Shape",
                                      "Gather",
                                      "Reshape",
                                      "Unsqueeze",
                                      "Squeeze",
                                      "Concat",
                                      "ConstantOfShape",
                                      "Expand",
                                      "Range",
                                      "Slice",
                                      "Cast",
                                      "Size",
                                      "Split",
                                      "GatherND",
                                      "ScatterND",
                                      "ScatterElements",
                                      "Tile",
                                      "Pad",
                                      "Trilu",
                                      "OneHot",
                                      "DepthToSpace",
                                      "SpaceToDepth",
                                      "EyeLike",
                                      "NonZero",
                                      "Compress",
                                      "Unique",
                                      "Hardmax",
                                      "Mod",
                                      "Max",
                                      "Min",
                                      "Sum",
                                      "Mean",
                                      "BitShift",
                                      "PRelu",
                                      "Pow",
                                      "Less",
                                      "LessOrEqual",
                                      "Greater",
                                      "Or",
                                      "Xor",
                                      "Not",
                                      "IsInf",
                                      "Abs",
                                      "Neg",
                                      "Sign",
                                      "Clip",
                                      "CastLike",
                                      "Dropout",
                                      "Exp",
                                      "Log",
                                      "Sqrt",
                                      "Reciprocal",
                                      "Floor",
                                      "Ceil",
                                      "Round",
                                      "Sin",
                                      "Cos",
                                      "Tan",
                                      "Asin",
                                      "Acos",
                                      "Atan",
                                      "Sinh",
                                      "Cosh",
                                      "Asinh",
                                      "Acosh",
                                      "Atanh",
                                      "Sigmoid",
                                      "Softplus",
                                      "Softsign",
                                      "Mish",
                                      "Gelu",
                                      "Elu",
                                      "Selu",
                                      "Celu",
                                      "LeakyRelu",
                                      "ThresholdedRelu",
                                      "ReduceSum",
                                      "ReduceMean",
                                      "ReduceMax",
                                      "ReduceMin",
                                      "ReduceProd",
                                      "ReduceL1",
                                      "ReduceL2",
                                      "ReduceSumSquare",
                                      "ReduceLogSum",
                                      "ReduceLogSumExp",
                                      "ArgMax",
                                      "ArgMin",
                                      "CumSum",
                                      "TopK",
                                      "MaxPool",
                                      "AveragePool",
                                      "LpPool",
                                      "GlobalMaxPool",
                                      "GlobalLpPool",
                                      "ConvTranspose",
                                      "LogSoftmax",
                                      "BatchNormalization",
                                      "InstanceNormalization",
                                      "GroupNormalization",
                                      "LpNormalization",
                                      "Resize",
                                      "LRN",
                                      "Shrink",
                                      "ReverseSequence",
                                      "MaxUnpool",
                                      "HannWindow",
                                      "HammingWindow",
                                      "BlackmanWindow",
                                      "MelWeightMatrix",
                                      "DFT",
                                      "STFT",
                                      "NegativeLogLikelihoodLoss",
                                      "SoftmaxCrossEntropyLoss",
                                      "MeanVarianceNormalization",
                                      "Det",
                                      "GridSample",
                                      "RoiAlign",
                                      "NonMaxSuppression",
                                      "LSTM",
                                      "GRU",
                                      "RNN",

                                      "QuantizeLinear",
                                      "DequantizeLinear",
                                      "DynamicQuantizeLinear",
                                      "QLinearAdd",
                                      "QLinearMul",
                                      "LookupTable8",

                                      "MatMulInteger",
                                      "QLinearMatMul",
                                      "ConvInteger",
                                      "QLinearConv",
                                      "DynamicQuantizeMatMul",
                                      "MatMulIntegerToFloat",
                                      "Attention",
                                      "SkipLayerNormalization",
                                      "ElementwiseChain",
                                      "TfIdfVectorizer"};
#define NB_OPS ((int32_t)(sizeof all_ops / sizeof all_ops[0]))

static int test_table(void)
{
    const prt_plugin_creator *c = NULL;
    CHECK(prt_builtin_creator_count() == NB_OPS);
    for (int32_t i = 0; i < prt_builtin_creator_count(); i++) {
        const prt_plugin_creator *ci = prt_builtin_get_creator(i);
        REQUIRE(ci != NULL);
        CHECK(strcmp(ci->plugin_namespace, PRT_BUILTIN_NAMESPACE) == 0);
        CHECK(strcmp(ci->version, "1") == 0);
        CHECK(ci->struct_size == sizeof(prt_plugin_creator));
        CHECK_OK(prt_builtin_find_creator(ci->name, "1", &c));
        CHECK(c == ci);
    }
    for (int32_t i = 0; i < NB_OPS; i++) {
        CHECK_OK(prt_builtin_find_creator(all_ops[i], NULL, &c));
        CHECK(c && strcmp(c->name, all_ops[i]) == 0);
    }
    CHECK(prt_builtin_get_creator(-1) == NULL);
    CHECK(prt_builtin_get_creator(NB_OPS) == NULL);
    CHECK_ERR(prt_builtin_find_creator("NoSuchOp", "1", &c), PRT_ERR_NOT_FOUND,
              "no built-in op plugrt::NoSuchOp version 1");
    CHECK_ERR(prt_builtin_find_creator("Relu", "2", &c), PRT_ERR_NOT_FOUND,
              "Relu version 2");
    CHECK_ERR(prt_builtin_find_creator(NULL, "1", &c), PRT_ERR_INVALID_ARGUMENT, NULL);
    return 0;
}

/* ---- plugin objects ---------------------------------------------------------- */

static int same_fields(const prt_field_collection *a, const prt_field_collection *b)
{
    if (a->nb_fields != b->nb_fields)
        return 0;
    for (int32_t i = 0; i < a->nb_fields; i++) {
        const prt_field *x = &a->fields[i], *y = &b->fields[i];
        if (strcmp(x->name, y->name) || x->type != y->type || x->length != y->length ||
            (x->length &&
             memcmp(x->data, y->data,
                    (size_t)x->length * (x->type == PRT_FIELD_CHAR ? 1 : 4))))
            return 0;
    }
    return 1;
}

static int test_objects(void)
{
    const prt_plugin_creator *c;
    prt_plugin *p = NULL, *q = NULL, *r = NULL, *s = NULL;
    const prt_field_collection *fa, *fb;
    int32_t pads[4] = {1, 0, 1, 0}, strides[2] = {2, 1}, group = 1, ks[2] = {3, 3};
    int64_t strides64[2] = {2, 1};
    float bad = 1.0f;
    prt_field f[5];
    prt_field_collection fc;
    REQUIRE_OK(prt_builtin_find_creator("Conv", "1", &c));
    f[0] = ot_fld_i32("pads", pads, 4);
    f[1] = ot_fld_i32("strides", strides, 2);
    f[2] = ot_fld_str("auto_pad", "NOTSET");
    f[3] = ot_fld_i32("group", &group, 1);
    f[4] = ot_fld_i32("kernel_shape", ks, 2);
    fc.nb_fields = 5;
    fc.fields = f;
    REQUIRE_OK(c->create(c, "conv", &fc, PRT_PHASE_BUILD, &p));
    CHECK(strcmp(p->vt->core->name(p), "Conv") == 0);
    CHECK(strcmp(p->vt->core->version(p), "1") == 0);
    CHECK(strcmp(p->vt->core->plugin_namespace(p), "plugrt") == 0);
    /* Conv has a CUDA kernel in builds with CUDA. */
#ifdef PRT_HAVE_CUDA
    CHECK(p->vt->core->devices(p) == ((1u << PRT_DEVICE_CPU) | (1u << PRT_DEVICE_CUDA)));
#else
    CHECK(p->vt->core->devices(p) == 1u << PRT_DEVICE_CPU);
#endif
    CHECK(p->vt->build != NULL && p->vt->build->nb_outputs(p) == 1);
    /* The serialized fields recreate an equal plugin in the runtime phase. */
    fa = p->vt->runtime->get_fields_to_serialize(p);
    REQUIRE(fa && fa->nb_fields == 5);
    REQUIRE_OK(c->create(c, "conv", fa, PRT_PHASE_RUNTIME, &q));
    CHECK(q->vt->build == NULL);
    fb = q->vt->runtime->get_fields_to_serialize(q);
    CHECK(same_fields(fa, fb));
    r = p->vt->runtime->clone(p);
    s = q->vt->runtime->attach_to_context(q, NULL);
    REQUIRE(r && s);
    CHECK(same_fields(r->vt->runtime->get_fields_to_serialize(r),
                      s->vt->runtime->get_fields_to_serialize(s)));
    CHECK_OK(s->vt->runtime->set_tactic(s, 0));
    CHECK_ERR(s->vt->runtime->set_tactic(s, 3), PRT_ERR_INVALID_ARGUMENT, "tactic 3");
    p->vt->runtime->destroy(p);
    q->vt->runtime->destroy(q);
    r->vt->runtime->destroy(r);
    s->vt->runtime->destroy(s);

    /* int64 fields are accepted and serialized back as int32. */
    f[0].name = "strides";
    f[0].data = strides64;
    f[0].type = PRT_FIELD_INT64;
    f[0].length = 2;
    fc.nb_fields = 1;
    REQUIRE_OK(c->create(c, "conv", &fc, PRT_PHASE_BUILD, &p));
    fa = p->vt->runtime->get_fields_to_serialize(p);
    CHECK(fa->nb_fields == 3 && strcmp(fa->fields[2].name, "strides") == 0 &&
          fa->fields[2].type == PRT_FIELD_INT32 &&
          ((const int32_t *)fa->fields[2].data)[0] == 2);
    p->vt->runtime->destroy(p);

    /* Bad fields. */
    f[0] = ot_fld_i32("padz", pads, 4);
    CHECK_ERR(c->create(c, "conv", &fc, PRT_PHASE_BUILD, &p), PRT_ERR_INVALID_ARGUMENT,
              "Conv (layer 'conv'): unknown field 'padz' (accepted: auto_pad, "
              "dilations, group, kernel_shape, pads, strides, activation, "
              "activation_params, residual)");
    f[0].name = "strides";
    f[0].data = &bad;
    f[0].type = PRT_FIELD_FLOAT32;
    f[0].length = 1;
    CHECK_ERR(c->create(c, "conv", &fc, PRT_PHASE_BUILD, &p), PRT_ERR_INVALID_ARGUMENT,
              "field 'strides' has type float32, expected int32");
    f[0] = ot_fld_i32("pads", pads, 4);
    f[1] = ot_fld_i32("pads", pads, 4);
    fc.nb_fields = 2;
    CHECK_ERR(c->create(c, "conv", &fc, PRT_PHASE_BUILD, &p), PRT_ERR_INVALID_ARGUMENT,
              "field 'pads' is given more than once");
    fc.nb_fields = 1;
    CHECK_ERR(c->create(c, "conv", &fc, 7, &p), PRT_ERR_INVALID_ARGUMENT, "phase 7");
    fc.nb_fields = 1;
    fc.fields = NULL;
    CHECK_ERR(c->create(c, "conv", &fc, PRT_PHASE_BUILD, &p), PRT_ERR_INVALID_ARGUMENT,
              "malformed field collection");
    REQUIRE_OK(prt_builtin_find_creator("Relu", "1", &c));
    fc.fields = f;
    CHECK_ERR(c->create(c, "r", &fc, PRT_PHASE_BUILD, &p), PRT_ERR_INVALID_ARGUMENT,
              "unknown field 'pads' (it takes no fields)");
    /* NULL fields and layer name are fine. */
    REQUIRE_OK(c->create(c, NULL, NULL, PRT_PHASE_BUILD, &p));
    CHECK(p->vt->runtime->get_fields_to_serialize(p)->nb_fields == 0);
    p->vt->runtime->destroy(p);
    return 0;
}

/* ---- Relu and Identity ------------------------------------------------------- */

static int test_relu_identity(void)
{
    static const int32_t relu_types[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16,
                                         PRT_INT8,    PRT_INT32,   PRT_INT64};
    tu_rng rng;
    tu_rng_seed(&rng, 11);
    for (size_t k = 0; k < sizeof relu_types / sizeof relu_types[0]; k++) {
        ot_tensor x = ot_random(relu_types[k], D3(2, 3, 5), &rng, 0), y;
        double want[30];
        if (relu_types[k] == PRT_FLOAT32) {
            ((float *)x.data)[3] = NAN;
            ((float *)x.data)[4] = -0.0f;
        }
        for (int64_t i = 0; i < 30; i++) {
            double v = ot_get(&x, i);
            want[i] = v < 0 ? 0 : v;
        }
        CHECK_OK(ot_run_op("Relu", NULL, 0, &x, 1, &y));
        if (y.data) {
            ot_check_close(prt_dtype_name(x.dtype), &y, &x.dims, want, 0);
            CHECK(y.dtype == x.dtype);
            if (relu_types[k] == PRT_FLOAT32)
                CHECK(signbit(((float *)y.data)[4]));
        }
        ot_free(&x);
        ot_free(&y);
    }
    /* Relu of bool is refused at build, naming the dtype. */
    {
        ot_tensor x = ot_make(PRT_BOOL, D1(4)), y;
        CHECK_ERR(ot_run_op("Relu", NULL, 0, &x, 1, &y), PRT_ERR_UNSUPPORTED,
                  "Relu (layer 'Relu'): dtype bool is not supported (supported: "
                  "float32, float16, bfloat16, int8, int32, int64, float64 or int16)");
        ot_free(&x);
    }
    for (int32_t dt = 0; dt < PRT_DTYPE_COUNT; dt++) {
        ot_tensor x = ot_random(dt, D4(2, 1, 3, 2), &rng, 0), y;
        double want[12];
        for (int64_t i = 0; i < 12; i++)
            want[i] = ot_get(&x, i);
        CHECK_OK(ot_run_op("Identity", NULL, 0, &x, 1, &y));
        if (y.data)
            ot_check_close("Identity", &y, &x.dims, want, 0);
        ot_free(&x);
        ot_free(&y);
    }
    /* A scalar and an empty tensor. */
    {
        ot_tensor x = ot_make(PRT_FLOAT32, D0()), y;
        double w = -2.5;
        ot_set(&x, 0, -2.5);
        CHECK_OK(ot_run_op("Identity", NULL, 0, &x, 1, &y));
        if (y.data)
            ot_check_close("Identity scalar", &y, &x.dims, &w, 0);
        ot_free(&y);
        ot_free(&x);
        x = ot_make(PRT_FLOAT32, D2(0, 3));
        CHECK_OK(ot_run_op("Relu", NULL, 0, &x, 1, &y));
        CHECK(y.data && y.dims.nb_dims == 2 && y.dims.d[0] == 0);
        ot_free(&y);
        ot_free(&x);
    }
    return 0;
}

/* Relu -> Identity -> Identity -> Relu: the middle layers share memory with
 * their inputs (aliasing), the result is still right. */
static int test_inplace_chain(void)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL;
    prt_dims d = D2(4, 6);
    const char *ops[4] = {"Relu", "Identity", "Identity", "Relu"};
    int32_t t, l;
    ot_tensor x, y;
    double want[24];
    tu_rng rng;
    tu_rng_seed(&rng, 5);
    REQUIRE_OK(prt_network_create(&net));
    REQUIRE_OK(prt_network_add_input(net, "X0", PRT_FLOAT32, &d, &t));
    for (int i = 0; i < 4; i++) {
        prt_plugin *p = NULL;
        REQUIRE_OK(ot_make_op(ops[i], NULL, 0, &p));
        REQUIRE_OK(prt_network_add_plugin(net, &t, 1, NULL, 0, p, &l));
        REQUIRE_OK(prt_network_get_layer_output(net, l, 0, &t));
    }
    REQUIRE_OK(prt_network_set_tensor_name(net, t, "Y"));
    REQUIRE_OK(prt_network_mark_output(net, t));
    REQUIRE_OK(prt_builder_config_create(&cfg));
    REQUIRE_OK(prt_engine_build(net, cfg, NULL, &e));
    {
        prt_layer_info li = {.struct_size = sizeof(prt_layer_info)};
        CHECK_OK(prt_engine_get_layer(e, 1, &li));
        CHECK(li.alias_input[0] == 0);
        CHECK(strcmp(li.plugin_namespace, "plugrt") == 0 && li.library[0] == '\0');
    }
    x = ot_random(PRT_FLOAT32, d, &rng, 0);
    for (int i = 0; i < 24; i++)
        want[i] = ot_get(&x, i) < 0 ? 0 : ot_get(&x, i);
    CHECK_OK(ot_run_engine(e, &x, 1, &y));
    if (y.data)
        ot_check_close("in-place chain", &y, &d, want, 0);
    ot_free(&x);
    ot_free(&y);
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return 0;
}

/* ---- Add, Sub, Mul, Div ------------------------------------------------------- */

static double ref_bin(int kind, int32_t dt, double a, double b)
{
    if (!ot_is_float(dt)) {
        int64_t x = (int64_t)a, y = (int64_t)b;
        int64_t r = kind == 0 ? x + y : kind == 1 ? x - y : kind == 2 ? x * y : x / y;
        /* The op wraps around in its own type. */
        return dt == PRT_INT8    ? (double)(int8_t)r
               : dt == PRT_UINT8 ? (double)(uint8_t)r
               : dt == PRT_INT32 ? (double)(int32_t)r
                                 : (double)r;
    } else {
        float x = (float)a, y = (float)b;
        float r = kind == 0 ? x + y : kind == 1 ? x - y : kind == 2 ? x * y : x / y;
        if (dt == PRT_FLOAT16)
            r = prt_half_to_float(prt_float_to_half(r));
        if (dt == PRT_BFLOAT16)
            r = prt_bf16_to_float(prt_float_to_bf16(r));
        return r;
    }
}

static void ref_broadcast_bin(int kind, const ot_tensor *a, const ot_tensor *b,
                              prt_dims *od, double *want)
{
    int64_t idx[PRT_MAX_DIMS];
    int32_t r = a->dims.nb_dims > b->dims.nb_dims ? a->dims.nb_dims : b->dims.nb_dims;
    od->nb_dims = r;
    for (int32_t i = 0; i < r; i++) {
        int32_t ia = i - (r - a->dims.nb_dims), ib = i - (r - b->dims.nb_dims);
        int64_t va = ia >= 0 ? a->dims.d[ia] : 1, vb = ib >= 0 ? b->dims.d[ib] : 1;
        od->d[i] = va == 1 ? vb : va;
    }
    for (int64_t i = 0; i < tu_volume(od); i++) {
        ot_unravel(od, i, idx);
        want[i] = ref_bin(kind, a->dtype, ot_get(a, ot_bcast_at(&a->dims, od, idx)),
                          ot_get(b, ot_bcast_at(&b->dims, od, idx)));
    }
}

static int test_binary(void)
{
    static const char *const names[4] = {"Add", "Sub", "Mul", "Div"};
    static const int32_t types[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16, PRT_INT8,
                                    PRT_UINT8,   PRT_INT32,   PRT_INT64};
    struct {
        prt_dims a, b;
    } cases[] = {
        {D3(2, 3, 4), D3(2, 3, 4)}, /* same */
        {D2(2, 3), D0()},           /* scalar */
        {D0(), D2(2, 3)},
        {D2(3, 4), D1(4)},       /* row */
        {D2(3, 4), D2(3, 1)},    /* column */
        {D3(2, 1, 4), D2(3, 1)}, /* rank mismatch, both broadcast */
        {D3(4, 1, 5), D3(1, 3, 1)},
        {D1(1), D4(2, 1, 3, 1)},
        {D0(), D0()},
        {D5(2, 1, 2, 1, 3), D4(3, 2, 1, 3)},
        {D1(4), D2(3, 4)},                /* row on the left */
        {D4(2, 3, 4, 5), D4(2, 1, 4, 5)}, /* a middle dim; the rest merge */
        {D4(2, 1, 3, 1), D4(1, 1, 3, 1)}, /* size-1 dims between */
        {D3(2, 3, 1), D3(2, 3, 1)},       /* same, ending in 1 */
        {D2(1000, 1), D0()},              /* long rows: same and scalars */
        {D0(), D1(1000)},
        {D2(10, 100), D2(10, 100)},
        {D2(0, 3), D1(3)}, /* empty */
        {D3(2, 0, 4), D3(2, 1, 4)},
        {D2(4, 1), D1(0)},
    };
    tu_rng rng;
    tu_rng_seed(&rng, 21);
    for (int kind = 0; kind < 4; kind++)
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
                ot_tensor in[2], y;
                double want[1024];
                prt_dims od;
                char what[96];
                in[0] = ot_random(types[t], cases[c].a, &rng, 0);
                in[1] = ot_random(types[t], cases[c].b, &rng, kind == 3);
                ref_broadcast_bin(kind, &in[0], &in[1], &od, want);
                snprintf(what, sizeof what, "%s %s case %d", names[kind],
                         prt_dtype_name(types[t]), (int)c);
                CHECK_OK(ot_run_op(names[kind], NULL, 0, in, 2, &y));
                if (y.data)
                    ot_check_close(what, &y, &od, want, 0);
                ot_free(&y);
                ot_free(&in[0]);
                ot_free(&in[1]);
            }

    /* Dynamic dims on both sides: the output dim is MAX(a, b); one engine
     * serves [4,3]+[1,3] and [1,3]+[4,3], and refuses [2,3]+[4,3]. */
    {
        uint32_t dyn[2] = {1u, 1u};
        ot_tensor in[2], y;
        double want[64];
        prt_dims od;
        prt_engine *e = NULL;
        in[0] = ot_random(PRT_FLOAT32, D2(4, 3), &rng, 0);
        in[1] = ot_random(PRT_FLOAT32, D2(1, 3), &rng, 0);
        ref_broadcast_bin(0, &in[0], &in[1], &od, want);
        CHECK_OK(ot_run_op_dyn("Add", NULL, 0, in, 2, dyn, &y));
        if (y.data)
            ot_check_close("Add dynamic", &y, &od, want, 0);
        ot_free(&y);
        /* Profile: X0 dim 0 in [1, 4], X1 dim 0 in [1, 4]. */
        ot_free(&in[0]);
        ot_free(&in[1]);
        in[0] = ot_random(PRT_FLOAT32, D2(1, 3), &rng, 0);
        in[1] = ot_random(PRT_FLOAT32, D2(1, 3), &rng, 0);
        REQUIRE_OK(ot_build_op("Add", NULL, 0, in, 2, dyn, &e));
        ot_free(&in[1]);
        in[1] = ot_random(PRT_FLOAT32, D2(4, 3), &rng, 0);
        ref_broadcast_bin(0, &in[0], &in[1], &od, want);
        CHECK_OK(ot_run_engine(e, in, 2, &y));
        if (y.data)
            ot_check_close("Add dynamic 2", &y, &od, want, 0);
        ot_free(&y);
        ot_free(&in[0]);
        in[0] = ot_random(PRT_FLOAT32, D2(2, 3), &rng, 0);
        CHECK_ERR(ot_run_engine(e, in, 2, &y), PRT_ERR_SHAPE,
                  "cannot broadcast inputs A and B: shapes [2, 3] and [4, 3] "
                  "differ in output dim 0 (2 vs 4");
        prt_engine_destroy(e);
        ot_free(&in[0]);
        ot_free(&in[1]);
    }

    /* Errors. */
    {
        ot_tensor in[2], y;
        in[0] = ot_make(PRT_FLOAT32, D2(2, 3));
        in[1] = ot_make(PRT_FLOAT32, D1(4));
        CHECK_ERR(ot_run_op("Mul", NULL, 0, in, 2, &y), PRT_ERR_SHAPE,
                  "Mul (layer 'Mul'): cannot broadcast inputs A and B: shapes "
                  "[2, 3] and [4] differ in output dim 1 (3 vs 4; each must be "
                  "equal or 1)");
        ot_free(&in[1]);
        in[1] = ot_make(PRT_INT32, D1(3));
        CHECK_ERR(ot_run_op("Add", NULL, 0, in, 2, &y), PRT_ERR_INVALID_ARGUMENT,
                  "input 1 is int32 but input 0 is float32");
        CHECK_ERR(ot_run_op("Add", NULL, 0, in, 1, &y), PRT_ERR_INVALID_ARGUMENT,
                  "Add (layer 'Add'): takes 2 inputs, got 1");
        ot_free(&in[0]);
        ot_free(&in[1]);
        in[0] = ot_random(PRT_INT32, D1(3), &rng, 1);
        in[1] = ot_make(PRT_INT32, D1(3));
        CHECK_ERR(ot_run_op("Div", NULL, 0, in, 2, &y), PRT_ERR_INVALID_ARGUMENT,
                  "integer division by zero");
        ot_free(&in[0]);
        ot_free(&in[1]);
        /* A zero divisor in the last of several rows stops the run, and one
         * broadcast over a whole row too. */
        in[0] = ot_random(PRT_INT64, D2(3, 4), &rng, 1);
        in[1] = ot_random(PRT_INT64, D2(3, 1), &rng, 1);
        ((int64_t *)in[1].data)[2] = 0;
        CHECK_ERR(ot_run_op("Div", NULL, 0, in, 2, &y), PRT_ERR_INVALID_ARGUMENT,
                  "integer division by zero (int64)");
        ot_free(&in[1]);
        in[1] = ot_make(PRT_INT64, D0());
        CHECK_ERR(ot_run_op("Div", NULL, 0, in, 2, &y), PRT_ERR_INVALID_ARGUMENT,
                  "integer division by zero (int64)");
        ot_free(&in[0]);
        ot_free(&in[1]);
    }
    /* Wrapping integer arithmetic and INT_MIN / -1. */
    {
        ot_tensor in[2], y;
        int32_t *a, *b;
        in[0] = ot_make(PRT_INT32, D1(2));
        in[1] = ot_make(PRT_INT32, D1(2));
        a = in[0].data;
        b = in[1].data;
        a[0] = INT32_MAX;
        b[0] = 1;
        a[1] = INT32_MIN;
        b[1] = -1;
        CHECK_OK(ot_run_op("Add", NULL, 0, in, 2, &y));
        CHECK(y.data && ((int32_t *)y.data)[0] == INT32_MIN);
        ot_free(&y);
        CHECK_OK(ot_run_op("Div", NULL, 0, in, 2, &y));
        CHECK(y.data && ((int32_t *)y.data)[1] == INT32_MIN);
        ot_free(&y);
        ot_free(&in[0]);
        ot_free(&in[1]);
    }
    return 0;
}

/* ---- MatMul -------------------------------------------------------------------- */

static void ref_matmul(const ot_tensor *a, const ot_tensor *b, prt_dims *od, double *want)
{
    int32_t ra = a->dims.nb_dims, rb = b->dims.nb_dims;
    prt_dims ad = a->dims, bd = b->dims, ba, bb, bo;
    int64_t M, K, N, idx[PRT_MAX_DIMS];
    if (ra == 1) {
        ad = D2(1, a->dims.d[0]);
        ra = 2;
    }
    if (rb == 1) {
        bd = D2(b->dims.d[0], 1);
        rb = 2;
    }
    M = ad.d[ra - 2];
    K = ad.d[ra - 1];
    N = bd.d[rb - 1];
    ba.nb_dims = ra - 2;
    bb.nb_dims = rb - 2;
    memcpy(ba.d, ad.d, sizeof ba.d);
    memcpy(bb.d, bd.d, sizeof bb.d);
    bo.nb_dims = ba.nb_dims > bb.nb_dims ? ba.nb_dims : bb.nb_dims;
    for (int32_t i = 0; i < bo.nb_dims; i++) {
        int32_t ia = i - (bo.nb_dims - ba.nb_dims), ib = i - (bo.nb_dims - bb.nb_dims);
        int64_t va = ia >= 0 ? ba.d[ia] : 1, vb = ib >= 0 ? bb.d[ib] : 1;
        bo.d[i] = va == 1 ? vb : va;
    }
    *od = bo;
    if (a->dims.nb_dims >= 2)
        od->d[od->nb_dims++] = M;
    if (b->dims.nb_dims >= 2)
        od->d[od->nb_dims++] = N;
    for (int64_t t = 0; t < tu_volume(&bo); t++) {
        int64_t oa, ob;
        ot_unravel(&bo, t, idx);
        oa = ot_bcast_at(&ba, &bo, idx);
        ob = ot_bcast_at(&bb, &bo, idx);
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double s = 0;
                for (int64_t k = 0; k < K; k++)
                    s +=
                        ot_get(a, (oa * M + i) * K + k) * ot_get(b, (ob * K + k) * N + j);
                want[(t * M + i) * N + j] = s;
            }
    }
}

static int test_matmul(void)
{
    struct {
        int32_t dtype;
        prt_dims a, b;
    } cases[] = {
        {PRT_FLOAT32, D2(3, 4), D2(4, 5)},
        {PRT_FLOAT32, D1(4), D2(4, 5)},
        {PRT_FLOAT32, D2(3, 4), D1(4)},
        {PRT_FLOAT32, D1(7), D1(7)},
        {PRT_FLOAT32, D3(2, 3, 4), D2(4, 5)},
        {PRT_FLOAT32, D3(2, 3, 4), D3(2, 4, 5)},
        {PRT_FLOAT32, D2(3, 4), D3(2, 4, 5)},
        {PRT_FLOAT32, D4(2, 1, 3, 4), D3(5, 4, 2)},
        {PRT_FLOAT32, D1(4), D3(3, 4, 2)},
        {PRT_FLOAT32, D3(2, 3, 4), D1(4)},
        {PRT_FLOAT32, D2(33, 130), D2(130, 47)},
        {PRT_FLOAT32, D2(3, 0), D2(0, 4)},
        {PRT_FLOAT16, D3(2, 3, 8), D3(2, 8, 5)},
        {PRT_FLOAT16, D1(6), D2(6, 3)},
        /* B packed into panels once (128 rows or more with the batch
         * stacked, K >= 64): after the half-float copies in the workspace,
         * a ragged last strip. */
        {PRT_FLOAT16, D3(2, 64, 70), D2(70, 31)},
        {PRT_FLOAT32, D3(3, 43, 70), D2(70, 31)},
        {PRT_BFLOAT16, D2(2, 4), D2(4, 3)},
        {PRT_INT32, D3(2, 3, 4), D2(4, 2)},
        {PRT_INT64, D2(3, 4), D3(2, 4, 5)},
    };
    tu_rng rng;
    tu_rng_seed(&rng, 31);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ot_tensor in[2], y;
        double *want = calloc(4096, sizeof(double));
        prt_dims od;
        char what[64];
        int32_t dt = cases[c].dtype;
        REQUIRE(want);
        in[0] = ot_random(dt, cases[c].a, &rng, 0);
        in[1] = ot_random(dt, cases[c].b, &rng, 0);
        ref_matmul(&in[0], &in[1], &od, want);
        snprintf(what, sizeof what, "MatMul case %d (%s)", (int)c, prt_dtype_name(dt));
        CHECK_OK(ot_run_op("MatMul", NULL, 0, in, 2, &y));
        if (y.data)
            ot_check_close(what, &y, &od, want,
                           dt == PRT_FLOAT32    ? 1e-4
                           : dt == PRT_FLOAT16  ? 2e-3
                           : dt == PRT_BFLOAT16 ? 1e-2
                                                : 0);
        ot_free(&y);
        ot_free(&in[0]);
        ot_free(&in[1]);
        free(want);
    }
    {
        ot_tensor in[2], y;
        in[0] = ot_make(PRT_FLOAT32, D2(3, 4));
        in[1] = ot_make(PRT_FLOAT32, D2(5, 2));
        CHECK_ERR(ot_run_op("MatMul", NULL, 0, in, 2, &y), PRT_ERR_SHAPE,
                  "MatMul (layer 'MatMul'): inner dims differ: A [3, 4] has K = 4, "
                  "B [5, 2] has K = 5");
        ot_free(&in[1]);
        in[1] = ot_make(PRT_FLOAT32, D0());
        CHECK_ERR(ot_run_op("MatMul", NULL, 0, in, 2, &y), PRT_ERR_SHAPE, "rank >= 1");
        ot_free(&in[0]);
        ot_free(&in[1]);
        in[0] = ot_make(PRT_FLOAT32, D3(2, 3, 4));
        in[1] = ot_make(PRT_FLOAT32, D3(3, 4, 2));
        CHECK_ERR(ot_run_op("MatMul", NULL, 0, in, 2, &y), PRT_ERR_SHAPE,
                  "cannot broadcast the batch dims of A and B");
        ot_free(&in[0]);
        ot_free(&in[1]);
    }
    /* The bias input (the importer's MatMul + Add): N values added to
     * every row; several blocks and a batch of B's own included. */
    {
        struct {
            int32_t dtype;
            prt_dims a, b, bias;
        } bc[] = {
            {PRT_FLOAT32, D3(2, 3, 16), D2(16, 24), D1(24)},
            {PRT_FLOAT32, D4(2, 3, 5, 7), D4(2, 3, 7, 9), D2(1, 9)},
            {PRT_FLOAT32, D2(200, 130), D2(130, 300), D1(300)},
            {PRT_FLOAT32, D1(40), D2(40, 70), D1(70)},
            {PRT_FLOAT16, D3(2, 3, 8), D2(8, 5), D1(5)},
            {PRT_BFLOAT16, D2(4, 8), D2(8, 6), D1(6)},
        };
        for (size_t c = 0; c < sizeof bc / sizeof bc[0]; c++) {
            ot_tensor in[3], y;
            double *want = calloc(200 * 300, sizeof(double));
            prt_dims od;
            char what[64];
            int32_t dt = bc[c].dtype;
            int64_t n;
            REQUIRE(want);
            in[0] = ot_random(dt, bc[c].a, &rng, 0);
            in[1] = ot_random(dt, bc[c].b, &rng, 0);
            in[2] = ot_random(dt, bc[c].bias, &rng, 0);
            ref_matmul(&in[0], &in[1], &od, want);
            n = tu_volume(&bc[c].bias);
            for (int64_t i = 0; i < tu_volume(&od); i++)
                want[i] += ot_get(&in[2], i % n);
            snprintf(what, sizeof what, "MatMul bias case %d (%s)", (int)c,
                     prt_dtype_name(dt));
            CHECK_OK(ot_run_op("MatMul", NULL, 0, in, 3, &y));
            if (y.data)
                ot_check_close(what, &y, &od, want,
                               dt == PRT_FLOAT32   ? 1e-4
                               : dt == PRT_FLOAT16 ? 2e-3
                                                   : 1e-2);
            ot_free(&y);
            for (int k = 0; k < 3; k++)
                ot_free(&in[k]);
            free(want);
        }
    }
    {
        ot_tensor in[3], y;
        in[0] = ot_make(PRT_FLOAT32, D2(3, 4));
        in[1] = ot_make(PRT_FLOAT32, D2(4, 24));
        in[2] = ot_make(PRT_FLOAT32, D1(5));
        CHECK_ERR(ot_run_op("MatMul", NULL, 0, in, 3, &y), PRT_ERR_SHAPE,
                  "the bias [5] must hold N values, one per column");
        ot_free(&in[2]);
        in[2] = ot_make(PRT_FLOAT32, D2(3, 24));
        CHECK_ERR(ot_run_op("MatMul", NULL, 0, in, 3, &y), PRT_ERR_SHAPE,
                  "the bias [3, 24] must be a vector of N values");
        for (int k = 0; k < 3; k++)
            ot_free(&in[k]);
        in[0] = ot_make(PRT_INT32, D2(3, 4));
        in[1] = ot_make(PRT_INT32, D2(4, 2));
        in[2] = ot_make(PRT_INT32, D1(2));
        CHECK_ERR(ot_run_op("MatMul", NULL, 0, in, 3, &y), PRT_ERR_UNSUPPORTED,
                  "input 2 dtype int32 is not supported here");
        ot_free(&in[1]);
        in[1] = ot_make(PRT_INT64, D2(4, 2));
        CHECK_ERR(ot_run_op("MatMul", NULL, 0, in, 2, &y), PRT_ERR_UNSUPPORTED,
                  "input 1 dtype int64 is not supported here (supported: int32)");
        for (int k = 0; k < 3; k++)
            ot_free(&in[k]);
    }
    /* Dynamic K and M: checked at run time. */
    {
        uint32_t dyn[2] = {3u, 1u};
        ot_tensor in[2], y;
        double want[64];
        prt_dims od;
        in[0] = ot_random(PRT_FLOAT32, D2(3, 4), &rng, 0);
        in[1] = ot_random(PRT_FLOAT32, D2(4, 5), &rng, 0);
        ref_matmul(&in[0], &in[1], &od, want);
        CHECK_OK(ot_run_op_dyn("MatMul", NULL, 0, in, 2, dyn, &y));
        if (y.data)
            ot_check_close("MatMul dynamic", &y, &od, want, 1e-4);
        ot_free(&y);
        ot_free(&in[0]);
        ot_free(&in[1]);
    }
    return 0;
}

/* Builds op `op` (fields f) over in[0..nb) twice, the inputs whose bit is
 * set in `consts` given at run time and then as constants, and checks the
 * first against the reference (want, od) and that the second gives its
 * bytes on one and two threads and after a reload. */
static void check_const_inputs(const char *what, const char *op, const prt_field *f,
                               int32_t nf, const ot_tensor *in, int32_t nb,
                               uint32_t consts, const prt_dims *od, const double *want,
                               double rtol)
{
    ot_tensor y_rt = {0}, got = {0};
    prt_engine *e_rt = NULL, *e_c = NULL, *e_l = NULL;
    CHECK_OK(ot_build_op(op, f, nf, in, nb, NULL, &e_rt));
    CHECK_OK(ot_build_op_const(op, f, nf, in, nb, consts, &e_c));
    if (e_c)
        CHECK_OK(ot_reload(e_c, &e_l));
    if (e_rt)
        CHECK_OK(ot_run_engine_threads(e_rt, in, nb, 1, &y_rt));
    if (y_rt.data)
        ot_check_close(what, &y_rt, od, want, rtol);
    for (int run = 0; y_rt.data && run < 3; run++) {
        /* built, on one thread and on two; then loaded */
        const prt_engine *e = run < 2 ? e_c : e_l;
        size_t bytes = (size_t)tu_volume(&y_rt.dims) * prt_dtype_size(y_rt.dtype);
        if (!e)
            continue;
        CHECK_OK(ot_run_engine_const(e, in, nb, consts, run == 1 ? 2 : 1, &got));
        CHECK(got.data && ot_dims_eq(&got.dims, &y_rt.dims) &&
              memcmp(got.data, y_rt.data, bytes) == 0);
        if (got.data && memcmp(got.data, y_rt.data, bytes) != 0)
            fprintf(stderr, "%s: run %d differs from inputs given at run time\n", what,
                    run);
        ot_free(&got);
    }
    ot_free(&y_rt);
    prt_engine_destroy(e_rt);
    prt_engine_destroy(e_c);
    prt_engine_destroy(e_l);
}

static double dtype_rtol(int32_t dt)
{
    return dt == PRT_FLOAT32    ? 1e-4
           : dt == PRT_FLOAT16  ? 2e-3
           : dt == PRT_BFLOAT16 ? 1e-2
                                : 0;
}

/* MatMul with a constant B, packed once when the engine is built or loaded
 * (op_pack_b), against the same product with B given at run time (packed
 * per run for 128 rows or more, else read in place): the same bytes. Products
 * of one row (a vector), batched B (not packed), blocks OpenBLAS takes
 * where it is in use, half floats and integers keep their paths. */
static int test_matmul_const_b(void)
{
    struct {
        int32_t dtype;
        prt_dims a, b;
        int bias;
    } cases[] = {
        {PRT_FLOAT32, D3(8, 32, 128), D2(128, 512), 1}, /* BERT at batch 8 */
        {PRT_FLOAT32, D3(8, 32, 512), D2(512, 128), 1},
        {PRT_FLOAT32, D3(1, 32, 128), D2(128, 128), 1}, /* batch 1: 32 rows */
        {PRT_FLOAT32, D2(1, 70), D2(70, 33), 0},
        {PRT_FLOAT32, D1(64), D2(64, 40), 0},
        {PRT_FLOAT32, D2(37, 70), D2(70, 31), 0},
        {PRT_FLOAT32, D2(37, 70), D2(70, 31), 1},
        {PRT_FLOAT32, D2(7, 3), D2(3, 20), 0},
        {PRT_FLOAT32, D2(131, 300), D2(300, 17), 0},
        {PRT_FLOAT32, D3(2, 5, 64), D3(1, 64, 48), 0},  /* one matrix of rank 3 */
        {PRT_FLOAT32, D3(3, 43, 70), D3(3, 70, 31), 0}, /* batched: in place */
        {PRT_FLOAT32, D4(2, 1, 3, 64), D3(5, 64, 20), 0},
        {PRT_FLOAT32, D2(100, 1400), D2(1400, 200), 0}, /* blocks over 2^23 */
        {PRT_FLOAT16, D3(2, 64, 70), D2(70, 31), 0},
        {PRT_FLOAT16, D2(9, 70), D2(70, 40), 1},
        {PRT_FLOAT16, D2(1, 70), D2(70, 40), 0},
        {PRT_BFLOAT16, D2(5, 16), D2(16, 16), 0},
        {PRT_INT32, D2(3, 4), D2(4, 20), 0},
    };
    tu_rng rng;
    tu_rng_seed(&rng, 37);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int32_t dt = cases[c].dtype, nb = cases[c].bias ? 3 : 2;
        const int64_t N = cases[c].b.d[cases[c].b.nb_dims - 1];
        const int64_t K = cases[c].a.d[cases[c].a.nb_dims - 1];
        ot_tensor in[3];
        prt_dims od;
        double *want;
        char what[96];
        in[0] = ot_random(dt, cases[c].a, &rng, 0);
        in[1] = ot_random(dt, cases[c].b, &rng, 0);
        if (nb == 3)
            in[2] = ot_random(dt, D1(N), &rng, 0);
        /* at most A's rows times B's batch times N */
        want = calloc((size_t)(tu_volume(&in[0].dims) / K * N * 8 + 1), sizeof(double));
        REQUIRE(want);
        ref_matmul(&in[0], &in[1], &od, want);
        for (int64_t i = 0; nb == 3 && i < tu_volume(&od); i++)
            want[i] += ot_get(&in[2], i % N);
        snprintf(what, sizeof what, "MatMul constant B case %d (%s)", (int)c,
                 prt_dtype_name(dt));
        check_const_inputs(what, "MatMul", NULL, 0, in, nb, nb == 3 ? 6u : 2u, &od, want,
                           dtype_rtol(dt));
        for (int32_t k = 0; k < nb; k++)
            ot_free(&in[k]);
        free(want);
    }
    {
        /* Allocation failure at every point of build (the packing's, a
         * float16 B converted first), load and run: a clean error, no leak. */
        ot_tensor in[2];
        int64_t n;
        in[0] = ot_random(PRT_FLOAT16, D2(4, 8), &rng, 0);
        in[1] = ot_random(PRT_FLOAT16, D2(8, 16), &rng, 0);
        for (n = 0; n < OT_MAX_ALLOCS; n++) {
            prt_engine *e = NULL, *e2 = NULL;
            ot_tensor y = {0};
            prt_status st;
            base_fail_alloc_after(n);
            st = ot_build_op_const("MatMul", NULL, 0, in, 2, 2u, &e);
            if (!st)
                st = ot_reload(e, &e2);
            if (!st)
                st = ot_run_engine_const(e2, in, 2, 2u, 1, &y);
            base_fail_alloc_after(-1);
            ot_free(&y);
            prt_engine_destroy(e);
            prt_engine_destroy(e2);
            if (st == PRT_OK)
                break;
            CHECK(prt_last_error()[0] != '\0');
        }
        CHECK(n > 3 && n < OT_MAX_ALLOCS);
        ot_free(&in[0]);
        ot_free(&in[1]);
    }
    return 0;
}

/* ---- Transpose ------------------------------------------------------------------ */

static int test_transpose(void)
{
    struct {
        prt_dims d;
        int32_t nb_perm;
        int32_t perm[5];
    } cases[] = {
        {D1(5), 1, {0}},
        {D1(5), 0, {0}},
        {D2(3, 4), 2, {1, 0}},
        {D2(3, 4), 0, {0}},
        {D2(3, 4), 2, {0, 1}},
        {D3(2, 3, 4), 3, {2, 0, 1}},
        {D3(2, 3, 4), 3, {1, 2, 0}},
        {D3(2, 3, 4), 3, {0, 2, 1}},
        {D3(2, 1, 4), 3, {1, 2, 0}},
        {D4(2, 3, 4, 5), 4, {0, 2, 3, 1}},
        {D4(2, 3, 4, 5), 4, {3, 2, 1, 0}},
        {D4(2, 3, 4, 5), 4, {0, 1, 3, 2}},
        {D5(2, 3, 1, 4, 2), 5, {4, 1, 3, 0, 2}},
        {D5(2, 3, 2, 4, 2), 5, {0, 3, 1, 4, 2}},
        {D5(2, 3, 2, 4, 2), 0, {0}},
    };
    static const int32_t types[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_INT8, PRT_INT64,
                                    PRT_BOOL};
    tu_rng rng;
    tu_rng_seed(&rng, 41);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
            int32_t perm[5], r = cases[c].d.nb_dims;
            int64_t idx[5], src[5];
            prt_dims od;
            prt_field f = ot_fld_i32("perm", cases[c].perm, cases[c].nb_perm);
            ot_tensor x = ot_random(types[t], cases[c].d, &rng, 0), y;
            double want[512];
            char what[64];
            for (int32_t i = 0; i < r; i++)
                perm[i] = cases[c].nb_perm ? cases[c].perm[i] : r - 1 - i;
            od.nb_dims = r;
            for (int32_t i = 0; i < r; i++)
                od.d[i] = cases[c].d.d[perm[i]];
            for (int64_t i = 0; i < tu_volume(&od); i++) {
                int64_t lin = 0;
                ot_unravel(&od, i, idx);
                for (int32_t k = 0; k < r; k++)
                    src[perm[k]] = idx[k];
                for (int32_t k = 0; k < r; k++)
                    lin = lin * cases[c].d.d[k] + src[k];
                want[i] = ot_get(&x, lin);
            }
            snprintf(what, sizeof what, "Transpose case %d (%s)", (int)c,
                     prt_dtype_name(types[t]));
            CHECK_OK(ot_run_op("Transpose", &f, cases[c].nb_perm ? 1 : 0, &x, 1, &y));
            if (y.data)
                ot_check_close(what, &y, &od, want, 0);
            ot_free(&x);
            ot_free(&y);
        }
    {
        const int32_t dup[3] = {0, 0, 1}, big[2] = {0, 2}, two[2] = {1, 0};
        prt_field f = ot_fld_i32("perm", dup, 3);
        prt_plugin *p = NULL;
        ot_tensor x = ot_make(PRT_FLOAT32, D3(2, 3, 4)), y;
        CHECK_ERR(ot_make_op("Transpose", &f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "Transpose (layer 'Transpose'): perm [0, 0, 1] is not a "
                  "permutation of 0..2");
        f = ot_fld_i32("perm", big, 2);
        CHECK_ERR(ot_make_op("Transpose", &f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "perm [0, 2] is not a permutation of 0..1");
        f = ot_fld_i32("perm", two, 2);
        CHECK_ERR(ot_run_op("Transpose", &f, 1, &x, 1, &y), PRT_ERR_SHAPE,
                  "Transpose (layer 'Transpose'): perm [1, 0] has 2 entries but "
                  "the input has rank 3");
        ot_free(&x);
    }
    return 0;
}

/* ---- Einsum ---------------------------------------------------------------------- */

/* A naive reference over every assignment of the letters; `eq` is explicit
 * and has no spaces. */
static void ref_einsum(const char *eq, const ot_tensor *in, int32_t nb_in, prt_dims *od,
                       double *want)
{
    int64_t size[128] = {0}, val[128] = {0};
    char letters[64] = "";
    int32_t nl = 0, k = 0, pos = 0;
    const char *arrow = strstr(eq, "->");
    for (const char *p = eq; p < arrow; p++) {
        if (*p == ',') {
            k++;
            pos = 0;
            continue;
        }
        size[(int)*p] = in[k].dims.d[pos++];
        if (!strchr(letters, *p)) {
            letters[nl++] = *p;
            letters[nl] = '\0';
        }
    }
    od->nb_dims = (int32_t)strlen(arrow + 2);
    for (int32_t i = 0; i < od->nb_dims; i++)
        od->d[i] = size[(int)arrow[2 + i]];
    for (int64_t i = 0; i < tu_volume(od); i++)
        want[i] = 0;
    for (int32_t j = 0; j < nl; j++)
        if (size[(int)letters[j]] == 0)
            return; /* an empty sum */
    for (;;) {
        double prod = 1;
        int64_t oi = 0;
        const char *p = eq;
        for (int32_t t = 0; t < nb_in; t++) {
            int64_t lin = 0;
            for (; *p && *p != ',' && p < arrow; p++)
                lin = lin * size[(int)*p] + val[(int)*p];
            p++;
            prod *= ot_get(&in[t], lin);
        }
        for (int32_t i = 0; i < od->nb_dims; i++)
            oi = oi * od->d[i] + val[(int)arrow[2 + i]];
        if (tu_volume(od) > 0)
            want[oi] += prod;
        {
            int32_t j = nl - 1;
            for (; j >= 0; j--) {
                if (++val[(int)letters[j]] < size[(int)letters[j]])
                    break;
                val[(int)letters[j]] = 0;
            }
            if (j < 0)
                break;
        }
    }
}

static int test_einsum(void)
{
    struct {
        const char *eq;  /* given */
        const char *ref; /* explicit, for the reference */
        int32_t dtype;
        int32_t nb_in;
        prt_dims d[3];
    } cases[] = {
        {"ij,ij->i", "ij,ij->i", PRT_FLOAT32, 2, {D2(3, 5), D2(3, 5)}},
        {"ij,jk->ik", "ij,jk->ik", PRT_FLOAT32, 2, {D2(3, 4), D2(4, 5)}},
        {"bij,bjk->bik", "bij,bjk->bik", PRT_FLOAT32, 2, {D3(2, 3, 4), D3(2, 4, 5)}},
        {"ii->i", "ii->i", PRT_FLOAT32, 1, {D2(4, 4)}},
        {"ii->", "ii->", PRT_FLOAT32, 1, {D2(4, 4)}},
        {"ii", "ii->", PRT_FLOAT32, 1, {D2(3, 3)}},
        {"ij->ji", "ij->ji", PRT_FLOAT32, 1, {D2(3, 4)}},
        {"ij->", "ij->", PRT_FLOAT32, 1, {D2(3, 4)}},
        {"i->i", "i->i", PRT_FLOAT32, 1, {D1(6)}},
        {"ij,jk", "ij,jk->ik", PRT_FLOAT32, 2, {D2(2, 3), D2(3, 4)}},
        {"ba", "ba->ab", PRT_FLOAT32, 1, {D2(3, 2)}},
        {"i,i", "i,i->", PRT_FLOAT32, 2, {D1(7), D1(7)}},
        {"i,j->ij", "i,j->ij", PRT_FLOAT32, 2, {D1(3), D1(4)}},
        {" i j , j k -> i k ", "ij,jk->ik", PRT_FLOAT32, 2, {D2(2, 3), D2(3, 2)}},
        {"ij,jk,kl->il", "ij,jk,kl->il", PRT_FLOAT32, 3, {D2(2, 3), D2(3, 4), D2(4, 2)}},
        {"Ab,bC->AC", "Ab,bC->AC", PRT_FLOAT32, 2, {D2(2, 3), D2(3, 2)}},
        {"bAc", "bAc->Abc", PRT_FLOAT32, 1, {D3(2, 3, 4)}},
        {"iij,jk->ki", "iij,jk->ki", PRT_FLOAT32, 2, {D3(3, 3, 2), D2(2, 4)}},
        {"abcdefgh,hgfedcba->",
         "abcdefgh,hgfedcba->",
         PRT_FLOAT32,
         2,
         {{8, {2, 1, 2, 1, 2, 1, 2, 2}}, {8, {2, 2, 1, 2, 1, 2, 1, 2}}}},
        {"ij,jk->ik", "ij,jk->ik", PRT_FLOAT16, 2, {D2(3, 4), D2(4, 5)}},
        {"ij,ij->i", "ij,ij->i", PRT_INT32, 2, {D2(3, 5), D2(3, 5)}},
        {"bij,bjk->bik", "bij,bjk->bik", PRT_INT64, 2, {D3(2, 3, 4), D3(2, 4, 5)}},
        {"ij,jk->ik", "ij,jk->ik", PRT_FLOAT32, 2, {D2(2, 0), D2(0, 3)}},
        /* ellipsis: dims an operand does not name, right-aligned */
        {"...ij,...jk->...ik",
         "bij,bjk->bik",
         PRT_FLOAT32,
         2,
         {D3(2, 3, 4), D3(2, 4, 5)}},
        {"... i i -> ... i", "bii->bi", PRT_FLOAT32, 1, {D3(2, 3, 3)}},
        {"...ji", "bji->bij", PRT_FLOAT32, 1, {D3(2, 3, 4)}},
        {"...i,...i", "abi,bi->ab", PRT_FLOAT32, 2, {D3(2, 3, 4), D2(3, 4)}},
        {"ij...,jk->ik...", "ija,jk->ika", PRT_FLOAT64, 2, {D3(2, 3, 4), D2(3, 5)}},
        {"i...->i", "i->i", PRT_FLOAT32, 1, {D1(5)}},
    };
    tu_rng rng;
    tu_rng_seed(&rng, 51);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ot_tensor in[3], y;
        double want[256];
        prt_dims od;
        char what[96];
        prt_field f = ot_fld_str("equation", cases[c].eq);
        int32_t dt = cases[c].dtype;
        for (int32_t k = 0; k < cases[c].nb_in; k++)
            in[k] = ot_random(dt, cases[c].d[k], &rng, 0);
        ref_einsum(cases[c].ref, in, cases[c].nb_in, &od, want);
        snprintf(what, sizeof what, "Einsum '%s' (%s)", cases[c].eq, prt_dtype_name(dt));
        CHECK_OK(ot_run_op("Einsum", &f, 1, in, cases[c].nb_in, &y));
        if (y.data)
            ot_check_close(what, &y, &od, want,
                           dt == PRT_FLOAT32   ? 1e-4
                           : dt == PRT_FLOAT16 ? 2e-3
                                               : 0);
        ot_free(&y);
        for (int32_t k = 0; k < cases[c].nb_in; k++)
            ot_free(&in[k]);
    }
    /* Errors at creation: syntax. */
    {
        struct {
            const char *eq;
            prt_status st;
            const char *msg;
        } bad[] = {
            {"i..j->ij", PRT_ERR_INVALID_ARGUMENT,
             "a term holds '.' other than one '...'"},
            {"......i->i", PRT_ERR_INVALID_ARGUMENT, "other than one '...'"},
            {"...i$->i", PRT_ERR_INVALID_ARGUMENT, "'$' is not a letter"},
            {"ij,jk->iz", PRT_ERR_INVALID_ARGUMENT,
             "Einsum (layer 'Einsum'): equation 'ij,jk->iz': output letter 'z' "
             "does not appear in any input"},
            {"ij->ii", PRT_ERR_INVALID_ARGUMENT, "output letter 'i' appears twice"},
            {"i$j->ij", PRT_ERR_INVALID_ARGUMENT, "'$' is not a letter"},
            {"ij->i->j", PRT_ERR_INVALID_ARGUMENT, "more than one '->'"},
            {"ij-i", PRT_ERR_INVALID_ARGUMENT, "'-' is not a letter"},
            {"abcdefghi->a", PRT_ERR_UNSUPPORTED, "more than 8 letters"},
            {"i,i,i,i,i,i,i,i,i", PRT_ERR_UNSUPPORTED, "more than 8 operands"},
        };
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            prt_field f = ot_fld_str("equation", bad[k].eq);
            prt_plugin *p = NULL;
            CHECK_ERR(ot_make_op("Einsum", &f, 1, &p), bad[k].st, bad[k].msg);
        }
        {
            prt_plugin *p = NULL;
            CHECK_ERR(ot_make_op("Einsum", NULL, 0, &p), PRT_ERR_INVALID_ARGUMENT,
                      "field 'equation' is required");
        }
    }
    /* Errors at build: inputs against the equation. */
    {
        ot_tensor in[1], y;
        prt_field f = ot_fld_str("equation", "b...->b");
        in[0] = ot_make(PRT_FLOAT32, D3(2, 3, 4));
        CHECK_ERR(ot_run_op("Einsum", &f, 1, in, 1, &y), PRT_ERR_INVALID_ARGUMENT,
                  "the inputs' '...' stands for 2 dims but the output has no '...'");
        ot_free(&in[0]);
    }
    {
        ot_tensor in[2], y;
        prt_field f = ot_fld_str("equation", "ij,jk->ik");
        in[0] = ot_make(PRT_FLOAT32, D2(2, 3));
        in[1] = ot_make(PRT_FLOAT32, D2(4, 5));
        CHECK_ERR(ot_run_op("Einsum", &f, 1, in, 2, &y), PRT_ERR_SHAPE,
                  "equation 'ij,jk->ik': letter 'j' is 3 in input 0 and 4 in input 1");
        CHECK_ERR(ot_run_op("Einsum", &f, 1, in, 1, &y), PRT_ERR_SHAPE,
                  "equation 'ij,jk->ik' has 2 operands but the layer has 1 input");
        ot_free(&in[1]);
        in[1] = ot_make(PRT_FLOAT32, D3(3, 4, 5));
        CHECK_ERR(ot_run_op("Einsum", &f, 1, in, 2, &y), PRT_ERR_SHAPE,
                  "operand 1 ('jk') has 2 letters but input 1 has rank 3");
        ot_free(&in[0]);
        ot_free(&in[1]);
        /* A repeated letter of different static sizes in one operand. */
        f = ot_fld_str("equation", "ii->i");
        in[0] = ot_make(PRT_FLOAT32, D2(2, 3));
        CHECK_ERR(ot_run_op("Einsum", &f, 1, in, 1, &y), PRT_ERR_SHAPE,
                  "letter 'i' is 2 in input 0 and 3 in input 0");
        ot_free(&in[0]);
    }
    /* Dynamic sizes: a mismatch is found at run time. */
    {
        uint32_t dyn[2] = {3u, 3u};
        prt_field f = ot_fld_str("equation", "ij,ij->i");
        ot_tensor in[2], y;
        prt_engine *e = NULL;
        double want[64];
        prt_dims od;
        in[0] = ot_random(PRT_FLOAT32, D2(2, 3), &rng, 0);
        in[1] = ot_random(PRT_FLOAT32, D2(2, 3), &rng, 0);
        REQUIRE_OK(ot_build_op("Einsum", &f, 1, in, 2, dyn, &e));
        ref_einsum("ij,ij->i", in, 2, &od, want);
        CHECK_OK(ot_run_engine(e, in, 2, &y));
        if (y.data)
            ot_check_close("Einsum dynamic", &y, &od, want, 1e-4);
        ot_free(&y);
        ot_free(&in[1]);
        in[1] = ot_random(PRT_FLOAT32, D2(2, 4), &rng, 0);
        CHECK_ERR(ot_run_engine(e, in, 2, &y), PRT_ERR_SHAPE,
                  "letter 'j' is 3 in input 0 and 4 in input 1");
        prt_engine_destroy(e);
        ot_free(&in[0]);
        ot_free(&in[1]);
    }
    return 0;
}

/* ---- Conv ------------------------------------------------------------------------- */

typedef struct conv_case {
    int32_t dtype;
    prt_dims x, w;
    int bias;
    const char *auto_pad; /* NULL: not given */
    int32_t group;        /* 0: not given */
    int32_t nb_sp;        /* arrays below have this many values (0: not given) */
    int32_t pads[6], strides[3], dil[3];
    int give_pads, give_strides, give_dil, give_ks;
} conv_case;

/* Direct convolution with ONNX's padding rules, written independently of
 * the op. */
static void ref_conv(const conv_case *cc, const ot_tensor *x, const ot_tensor *w,
                     const ot_tensor *b, prt_dims *od, double *want)
{
    int32_t ns = x->dims.nb_dims - 2, G = cc->group ? cc->group : 1;
    int64_t N = x->dims.d[0], M = w->dims.d[0];
    int64_t pb[3] = {0}, st[3], dl[3], K[3], D[3], O[3];
    const char *ap = cc->auto_pad ? cc->auto_pad : "NOTSET";
    for (int32_t i = 0; i < ns; i++) {
        st[i] = cc->give_strides ? cc->strides[i] : 1;
        dl[i] = cc->give_dil ? cc->dil[i] : 1;
        K[i] = w->dims.d[2 + i];
        D[i] = x->dims.d[2 + i];
        if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
            int64_t tot;
            O[i] = (D[i] + st[i] - 1) / st[i];
            tot = (O[i] - 1) * st[i] + (K[i] - 1) * dl[i] + 1 - D[i];
            if (tot < 0)
                tot = 0;
            pb[i] = !strcmp(ap, "SAME_UPPER") ? tot / 2 : (tot + 1) / 2;
        } else {
            int64_t b0 = 0, e0 = 0;
            if (!strcmp(ap, "NOTSET") && cc->give_pads) {
                b0 = cc->pads[i];
                e0 = cc->pads[ns + i];
            }
            pb[i] = b0;
            O[i] = (D[i] + b0 + e0 - (K[i] - 1) * dl[i] - 1) / st[i] + 1;
        }
    }
    od->nb_dims = ns + 2;
    od->d[0] = N;
    od->d[1] = M;
    for (int32_t i = 0; i < ns; i++)
        od->d[2 + i] = O[i];
    ot_conv_ref(x, w, b, G, st, dl, pb, O, want);
}

static int32_t conv_fields(const conv_case *cc, const prt_dims *w, prt_field *f,
                           int32_t *ks)
{
    int32_t n = 0;
    if (cc->auto_pad)
        f[n++] = ot_fld_str("auto_pad", cc->auto_pad);
    if (cc->group)
        f[n++] = ot_fld_i32("group", &cc->group, 1);
    if (cc->give_pads)
        f[n++] = ot_fld_i32("pads", cc->pads, 2 * cc->nb_sp);
    if (cc->give_strides)
        f[n++] = ot_fld_i32("strides", cc->strides, cc->nb_sp);
    if (cc->give_dil)
        f[n++] = ot_fld_i32("dilations", cc->dil, cc->nb_sp);
    if (cc->give_ks) {
        for (int32_t i = 0; i < cc->nb_sp; i++)
            ks[i] = (int32_t)w->d[2 + i];
        f[n++] = ot_fld_i32("kernel_shape", ks, cc->nb_sp);
    }
    return n;
}

static int run_conv_case(const conv_case *cc, int idx, const uint32_t *dyn, tu_rng *rng)
{
    ot_tensor in[3], y;
    prt_field f[6];
    int32_t ks[3], nf, nb_in = cc->bias ? 3 : 2;
    double *want = calloc(8192, sizeof(double));
    prt_dims od;
    char what[64];
    REQUIRE(want);
    in[0] = ot_random(cc->dtype, cc->x, rng, 0);
    in[1] = ot_random(cc->dtype, cc->w, rng, 0);
    if (cc->bias)
        in[2] = ot_random(cc->dtype, D1(cc->w.d[0]), rng, 0);
    nf = conv_fields(cc, &cc->w, f, ks);
    ref_conv(cc, &in[0], &in[1], cc->bias ? &in[2] : NULL, &od, want);
    snprintf(what, sizeof what, "Conv case %d (%s%s)", idx, prt_dtype_name(cc->dtype),
             dyn ? ", dynamic" : "");
    CHECK_OK(ot_run_op_dyn("Conv", f, nf, in, nb_in, dyn, &y));
    if (y.data)
        ot_check_close(what, &y, &od, want, cc->dtype == PRT_FLOAT32 ? 1e-4 : 4e-3);
    ot_free(&y);
    for (int32_t k = 0; k < nb_in; k++)
        ot_free(&in[k]);
    free(want);
    return 0;
}

static int test_conv(void)
{
    conv_case cases[] = {
        /* 2-D, pads, bias */
        {PRT_FLOAT32,
         D4(1, 3, 7, 7),
         D4(4, 3, 3, 3),
         1,
         NULL,
         0,
         2,
         {1, 1, 1, 1},
         {1, 1},
         {1, 1},
         1,
         0,
         0,
         0},
        /* 2-D, strides 2, dilations 2, asymmetric pads, kernel_shape */
        {PRT_FLOAT32,
         D4(2, 2, 9, 8),
         D4(3, 2, 3, 2),
         0,
         "NOTSET",
         1,
         2,
         {0, 1, 2, 1},
         {2, 2},
         {2, 2},
         1,
         1,
         1,
         1},
        /* groups */
        {PRT_FLOAT32,
         D4(2, 4, 6, 5),
         D4(6, 2, 3, 2),
         1,
         NULL,
         2,
         2,
         {1, 0, 1, 0},
         {1, 2},
         {1, 1},
         1,
         1,
         0,
         0},
        /* depthwise */
        {PRT_FLOAT32,
         D4(1, 3, 5, 5),
         D4(3, 1, 3, 3),
         1,
         NULL,
         3,
         2,
         {1, 1, 1, 1},
         {1, 1},
         {1, 1},
         1,
         0,
         0,
         0},
        /* 1-D with everything */
        {PRT_FLOAT32,
         D3(2, 2, 10),
         D3(3, 2, 3),
         1,
         NULL,
         0,
         1,
         {1, 2},
         {2},
         {2},
         1,
         1,
         1,
         1},
        /* 1-D plain */
        {PRT_FLOAT32, D3(1, 1, 5), D3(1, 1, 2), 0, NULL, 0, 1, {0}, {1}, {1}, 0, 0, 0, 0},
        /* auto_pad */
        {PRT_FLOAT32,
         D4(1, 2, 7, 6),
         D4(3, 2, 3, 3),
         1,
         "SAME_UPPER",
         0,
         2,
         {0},
         {2, 2},
         {1, 1},
         0,
         1,
         0,
         0},
        {PRT_FLOAT32,
         D4(1, 2, 7, 6),
         D4(3, 2, 3, 3),
         1,
         "SAME_LOWER",
         0,
         2,
         {0},
         {2, 2},
         {1, 1},
         0,
         1,
         0,
         0},
        {PRT_FLOAT32,
         D4(1, 2, 6, 6),
         D4(2, 2, 2, 2),
         0,
         "SAME_UPPER",
         0,
         2,
         {0},
         {1, 1},
         {2, 2},
         0,
         0,
         1,
         0},
        {PRT_FLOAT32,
         D4(1, 2, 6, 6),
         D4(2, 2, 2, 2),
         0,
         "SAME_LOWER",
         0,
         2,
         {0},
         {1, 1},
         {1, 1},
         0,
         0,
         0,
         0},
        {PRT_FLOAT32,
         D4(1, 2, 7, 6),
         D4(3, 2, 3, 2),
         1,
         "VALID",
         0,
         2,
         {0},
         {2, 1},
         {1, 1},
         0,
         1,
         0,
         0},
        /* 1x1: no im2col */
        {PRT_FLOAT32,
         D4(2, 8, 4, 4),
         D4(5, 8, 1, 1),
         1,
         NULL,
         0,
         2,
         {0},
         {1, 1},
         {1, 1},
         0,
         0,
         0,
         0},
        /* 1x1 with stride */
        {PRT_FLOAT32,
         D4(1, 3, 5, 5),
         D4(2, 3, 1, 1),
         0,
         NULL,
         0,
         2,
         {0},
         {2, 2},
         {1, 1},
         0,
         1,
         0,
         0},
        /* 3-D */
        {PRT_FLOAT32,
         D5(1, 2, 4, 5, 3),
         D5(2, 2, 2, 3, 2),
         1,
         NULL,
         0,
         3,
         {1, 0, 1, 0, 1, 1},
         {1, 2, 1},
         {1, 1, 2},
         1,
         1,
         1,
         0},
        /* float16 */
        {PRT_FLOAT16,
         D4(1, 3, 6, 6),
         D4(4, 3, 3, 3),
         1,
         NULL,
         0,
         2,
         {1, 1, 1, 1},
         {2, 1},
         {1, 1},
         1,
         1,
         0,
         0},
        {PRT_FLOAT16,
         D3(2, 4, 9),
         D3(4, 2, 3),
         0,
         "SAME_UPPER",
         2,
         1,
         {0},
         {2},
         {1},
         0,
         1,
         0,
         0},
    };
    tu_rng rng;
    tu_rng_seed(&rng, 61);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        run_conv_case(&cases[c], (int)c, NULL, &rng);
    /* Dynamic N and spatial dims: output dims are expressions. */
    {
        uint32_t dyn[3] = {0xDu, 0u, 0u};
        run_conv_case(&cases[1], 1, dyn, &rng);
        run_conv_case(&cases[6], 6, dyn, &rng);
        run_conv_case(&cases[7], 7, dyn, &rng);
        run_conv_case(&cases[4], 4, dyn, &rng);
    }
    /* One dynamic engine, two shapes. */
    {
        conv_case cc = cases[0];
        uint32_t dyn[3] = {0xDu, 0u, 0u};
        ot_tensor in[3], y;
        prt_field f[6];
        int32_t ks[3], nf = conv_fields(&cc, &cc.w, f, ks);
        prt_engine *e = NULL;
        double *want = calloc(4096, sizeof(double));
        prt_dims od;
        REQUIRE(want);
        in[0] = ot_random(PRT_FLOAT32, cc.x, &rng, 0);
        in[1] = ot_random(PRT_FLOAT32, cc.w, &rng, 0);
        in[2] = ot_random(PRT_FLOAT32, D1(4), &rng, 0);
        REQUIRE_OK(ot_build_op("Conv", f, nf, in, 3, dyn, &e));
        ot_free(&in[0]);
        cc.x = D4(3, 3, 9, 8);
        in[0] = ot_random(PRT_FLOAT32, cc.x, &rng, 0);
        ref_conv(&cc, &in[0], &in[1], &in[2], &od, want);
        CHECK_OK(ot_run_engine(e, in, 3, &y));
        if (y.data)
            ot_check_close("Conv dynamic engine", &y, &od, want, 1e-4);
        ot_free(&y);
        {
            prt_layer_info li = {.struct_size = sizeof(prt_layer_info)};
            CHECK_OK(prt_engine_get_layer(e, 0, &li));
            CHECK(li.nb_fields == 3 && strcmp(li.fields[0].name, "auto_pad") == 0 &&
                  strcmp(li.fields[2].name, "pads") == 0);
        }
        prt_engine_destroy(e);
        for (int k = 0; k < 3; k++)
            ot_free(&in[k]);
        free(want);
    }

    /* Errors at creation. */
    {
        const int32_t odd[3] = {1, 1, 1}, zero[2] = {0, 1}, pads[4] = {1, 1, 1, 1};
        const int32_t g0 = 0, two[2] = {1, 1}, three[3] = {1, 1, 1};
        prt_field f[2];
        prt_plugin *p = NULL;
        f[0] = ot_fld_str("auto_pad", "SAME");
        CHECK_ERR(ot_make_op("Conv", f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "auto_pad 'SAME' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID");
        f[0] = ot_fld_i32("pads", odd, 3);
        CHECK_ERR(ot_make_op("Conv", f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "pads has 3 values");
        f[0] = ot_fld_i32("strides", zero, 2);
        CHECK_ERR(ot_make_op("Conv", f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "strides[0] is 0; it must be >= 1");
        f[0] = ot_fld_i32("group", &g0, 1);
        CHECK_ERR(ot_make_op("Conv", f, 1, &p), PRT_ERR_INVALID_ARGUMENT, "group is 0");
        f[0] = ot_fld_str("auto_pad", "VALID");
        f[1] = ot_fld_i32("pads", pads, 4);
        CHECK_ERR(ot_make_op("Conv", f, 2, &p), PRT_ERR_INVALID_ARGUMENT,
                  "explicit pads cannot be used with auto_pad VALID");
        f[0] = ot_fld_i32("strides", two, 2);
        f[1] = ot_fld_i32("dilations", three, 3);
        CHECK_ERR(ot_make_op("Conv", f, 2, &p), PRT_ERR_INVALID_ARGUMENT,
                  "disagree on the number of spatial dims");
    }
    /* Errors at build. */
    {
        ot_tensor in[3], y;
        const int32_t ks[2] = {3, 2}, g2 = 2, pads2[2] = {0, 0};
        prt_field f[2];
        in[0] = ot_make(PRT_FLOAT32, D4(1, 3, 5, 5));
        in[1] = ot_make(PRT_FLOAT32, D4(4, 2, 3, 3));
        in[2] = ot_make(PRT_FLOAT32, D1(5));
        CHECK_ERR(
            ot_run_op("Conv", NULL, 0, in, 2, &y), PRT_ERR_SHAPE,
            "Conv (layer 'Conv'): X has 3 channels but W takes 2 per group x 1 group");
        ot_free(&in[1]);
        in[1] = ot_make(PRT_FLOAT32, D4(4, 3, 3, 3));
        CHECK_ERR(ot_run_op("Conv", NULL, 0, in, 3, &y), PRT_ERR_SHAPE,
                  "B has 5 values but W has 4 output channels");
        f[0] = ot_fld_i32("kernel_shape", ks, 2);
        CHECK_ERR(ot_run_op("Conv", f, 1, in, 2, &y), PRT_ERR_SHAPE,
                  "kernel_shape[1] is 2 but W's spatial dim 1 is 3");
        f[0] = ot_fld_i32("group", &g2, 1);
        CHECK_ERR(ot_run_op("Conv", f, 1, in, 2, &y), PRT_ERR_SHAPE,
                  "per group x 2 groups");
        f[0] = ot_fld_i32("pads", pads2, 2);
        CHECK_ERR(ot_run_op("Conv", f, 1, in, 2, &y), PRT_ERR_SHAPE,
                  "X has 2 spatial dims but dilations has 0 values, kernel_shape 0, "
                  "strides 0, pads 2");
        ot_free(&in[0]);
        in[0] = ot_make(PRT_FLOAT32, D4(1, 3, 2, 5));
        CHECK_ERR(ot_run_op("Conv", NULL, 0, in, 2, &y), PRT_ERR_SHAPE,
                  "spatial dim 0: the padded input (2 + 0) is smaller than the "
                  "dilated kernel (3)");
        ot_free(&in[0]);
        in[0] = ot_make(PRT_FLOAT32, D2(1, 3));
        CHECK_ERR(ot_run_op("Conv", NULL, 0, in, 2, &y), PRT_ERR_SHAPE,
                  "X must have rank 3 or more");
        ot_free(&in[0]);
        in[0] = ot_make(PRT_INT32, D4(1, 3, 5, 5));
        ot_free(&in[1]);
        in[1] = ot_make(PRT_INT32, D4(4, 3, 3, 3));
        CHECK_ERR(ot_run_op("Conv", NULL, 0, in, 2, &y), PRT_ERR_UNSUPPORTED,
                  "dtype int32 is not supported (supported: float32 or float16)");
        for (int k = 0; k < 3; k++)
            ot_free(&in[k]);
    }
    return 0;
}

/* ---- HardSigmoid and HardSwish ----------------------------------------------------- */

/* ONNX's definitions in float32, rounded to the dtype: the op computes in
 * float32 and rounds once, so half floats match exactly too. */
static double ref_hard(int swish, int32_t dt, float alpha, float beta, double xv)
{
    float x = (float)xv, v = alpha * x + beta, r;
    v = v < 0 ? 0 : v > 1 ? 1 : v; /* NaN passes, as in numpy.clip */
    r = swish ? x * v : v;
    if (dt == PRT_FLOAT16)
        r = prt_half_to_float(prt_float_to_half(r));
    if (dt == PRT_BFLOAT16)
        r = prt_bf16_to_float(prt_float_to_bf16(r));
    return r;
}

static int test_hard(void)
{
    static const int32_t types[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16};
    const float alpha = 0.35f, beta = 0.25f;
    tu_rng rng;
    tu_rng_seed(&rng, 91);
    for (int swish = 0; swish < 2; swish++)
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
            for (int given = 0; given < (swish ? 1 : 3); given++) {
                /* given: 0 defaults, 1 both fields, 2 alpha only */
                const char *name = swish ? "HardSwish" : "HardSigmoid";
                float a = swish ? 1.0f / 6.0f : given ? alpha : 0.2f;
                float b = swish ? 0.5f : given == 1 ? beta : 0.5f;
                prt_field f[2];
                int32_t nf = 0;
                ot_tensor x = ot_random(types[t], D3(2, 3, 7), &rng, 0), y;
                double want[42];
                char what[96];
                if (given)
                    f[nf++] = ot_fld_f32("alpha", &alpha);
                if (given == 1)
                    f[nf++] = ot_fld_f32("beta", &beta);
                /* Values past both ends of the linear part, and special ones. */
                for (int64_t i = 0; i < 42; i++)
                    ot_set(&x, i, ot_get(&x, i) * 8.0);
                ot_set(&x, 0, -3.0);
                ot_set(&x, 1, 3.0);
                ot_set(&x, 2, 0.0);
                ot_set(&x, 3, INFINITY);
                ot_set(&x, 4, -INFINITY);
                ot_set(&x, 5, NAN);
                for (int64_t i = 0; i < 42; i++)
                    want[i] = ref_hard(swish, types[t], a, b, ot_get(&x, i));
                snprintf(what, sizeof what, "%s %s fields %d", name,
                         prt_dtype_name(types[t]), given);
                CHECK_OK(ot_run_op(name, f, nf, &x, 1, &y));
                if (y.data) {
                    ot_check_close(what, &y, &x.dims, want, 0);
                    /* HardSwish(-inf) = -inf * 0, NaN like the reference. */
                    CHECK(isnan(ot_get(&y, 5)) &&
                          (swish ? isnan(ot_get(&y, 4)) : ot_get(&y, 4) == 0));
                }
                ot_free(&x);
                ot_free(&y);
            }
    /* Dynamic dims; the fields survive serialization (run_op_dyn reloads). */
    {
        uint32_t dyn[1] = {0x5u};
        prt_field f[2] = {ot_fld_f32("alpha", &alpha), ot_fld_f32("beta", &beta)};
        ot_tensor x = ot_random(PRT_FLOAT32, D3(2, 3, 4), &rng, 0), y;
        double want[24];
        for (int64_t i = 0; i < 24; i++)
            want[i] = ref_hard(0, PRT_FLOAT32, alpha, beta, ot_get(&x, i) * 4);
        for (int64_t i = 0; i < 24; i++)
            ot_set(&x, i, ot_get(&x, i) * 4);
        CHECK_OK(ot_run_op_dyn("HardSigmoid", f, 2, &x, 1, dyn, &y));
        if (y.data)
            ot_check_close("HardSigmoid dynamic", &y, &x.dims, want, 0);
        ot_free(&y);
        CHECK_OK(ot_run_op_dyn("HardSwish", NULL, 0, &x, 1, dyn, &y));
        ot_free(&y);
        ot_free(&x);
    }
    /* Fields: float64 is read as float32; wrong types, lengths, names. */
    {
        const prt_plugin_creator *c;
        prt_plugin *p = NULL;
        const prt_field_collection *fa;
        const double a64 = 0.125;
        const int32_t one = 1;
        const float two[2] = {1, 2};
        prt_field f = {"alpha", &a64, PRT_FIELD_FLOAT64, 1};
        prt_field_collection fc = {1, &f};
        REQUIRE_OK(prt_builtin_find_creator("HardSigmoid", "1", &c));
        CHECK(c->nb_fields == 2 && strcmp(c->fields[0].name, "alpha") == 0 &&
              c->fields[0].type == PRT_FIELD_FLOAT32 &&
              strcmp(c->fields[1].name, "beta") == 0);
        REQUIRE_OK(c->create(c, "hs", &fc, PRT_PHASE_BUILD, &p));
        fa = p->vt->runtime->get_fields_to_serialize(p);
        CHECK(fa->nb_fields == 2 && fa->fields[0].type == PRT_FIELD_FLOAT32 &&
              *(const float *)fa->fields[0].data == 0.125f &&
              *(const float *)fa->fields[1].data == 0.5f);
        p->vt->runtime->destroy(p);
        f = ot_fld_i32("alpha", &one, 1);
        CHECK_ERR(ot_make_op("HardSigmoid", &f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "field 'alpha' has type int32, expected float32");
        f.name = "beta";
        f.data = two;
        f.type = PRT_FIELD_FLOAT32;
        f.length = 2;
        CHECK_ERR(ot_make_op("HardSigmoid", &f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "field 'beta' must hold one value, it holds 2");
        f.name = "alpha";
        f.length = 1;
        CHECK_ERR(ot_make_op("HardSwish", &f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "HardSwish (layer 'HardSwish'): unknown field 'alpha' (it takes "
                  "no fields)");
    }
    /* Integer inputs are refused at build. */
    {
        ot_tensor x = ot_make(PRT_INT32, D1(4)), y;
        CHECK_ERR(ot_run_op("HardSwish", NULL, 0, &x, 1, &y), PRT_ERR_UNSUPPORTED,
                  "dtype int32 is not supported (supported: float32, float16, "
                  "bfloat16 or float64)");
        CHECK_ERR(ot_run_op("HardSigmoid", NULL, 0, &x, 1, &y), PRT_ERR_UNSUPPORTED,
                  "dtype int32");
        ot_free(&x);
    }
    return 0;
}

/* ---- GlobalAveragePool --------------------------------------------------------------
 */

static void ref_gap(const ot_tensor *x, prt_dims *od, double *want)
{
    int64_t rows = x->dims.d[0] * x->dims.d[1];
    int64_t sp = tu_volume(&x->dims) / (rows ? rows : 1);
    *od = x->dims;
    for (int32_t i = 2; i < od->nb_dims; i++)
        od->d[i] = 1;
    for (int64_t r = 0; r < rows; r++) {
        double s = 0;
        for (int64_t k = 0; k < sp; k++)
            s += ot_get(x, r * sp + k);
        want[r] = s / (double)sp;
        if (x->dtype == PRT_FLOAT16)
            want[r] = prt_half_to_float(prt_float_to_half((float)want[r]));
        else if (x->dtype == PRT_BFLOAT16)
            want[r] = prt_bf16_to_float(prt_float_to_bf16((float)want[r]));
    }
}

static int test_gap(void)
{
    struct {
        int32_t dtype;
        prt_dims x;
    } cases[] = {
        {PRT_FLOAT32, D3(2, 3, 7)},       /* 1-D spatial */
        {PRT_FLOAT32, D4(2, 5, 6, 7)},    /* 2-D */
        {PRT_FLOAT32, D5(1, 3, 4, 3, 5)}, /* 3-D */
        {PRT_FLOAT32, D4(3, 2, 1, 1)},    /* already pooled */
        {PRT_FLOAT32, D4(1, 4, 56, 56)},  /* MobileNet's largest */
        {PRT_FLOAT16, D4(2, 3, 5, 4)},     {PRT_FLOAT16, D3(1, 2, 9)},
        {PRT_BFLOAT16, D5(1, 2, 2, 3, 2)},
    };
    tu_rng rng;
    tu_rng_seed(&rng, 101);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ot_tensor x = ot_random(cases[c].dtype, cases[c].x, &rng, 0), y;
        double want[64];
        prt_dims od;
        char what[64];
        ref_gap(&x, &od, want);
        snprintf(what, sizeof what, "GlobalAveragePool case %d (%s)", (int)c,
                 prt_dtype_name(cases[c].dtype));
        CHECK_OK(ot_run_op("GlobalAveragePool", NULL, 0, &x, 1, &y));
        /* float32 sums in double and rounds once: within an ulp or so. */
        if (y.data)
            ot_check_close(what, &y, &od, want, cases[c].dtype == PRT_FLOAT32 ? 1e-6 : 0);
        ot_free(&x);
        ot_free(&y);
    }
    /* Dynamic N and spatial dims: the output's spatial dims are constant 1s;
     * one engine, two shapes. */
    {
        uint32_t dyn[1] = {0xDu};
        ot_tensor x = ot_random(PRT_FLOAT32, D4(1, 3, 4, 5), &rng, 0), y;
        double want[64];
        prt_dims od;
        prt_engine *e = NULL;
        prt_io_info io = {.struct_size = sizeof(prt_io_info)};
        ref_gap(&x, &od, want);
        CHECK_OK(ot_run_op_dyn("GlobalAveragePool", NULL, 0, &x, 1, dyn, &y));
        if (y.data)
            ot_check_close("GlobalAveragePool dynamic", &y, &od, want, 1e-6);
        ot_free(&y);
        REQUIRE_OK(ot_build_op("GlobalAveragePool", NULL, 0, &x, 1, dyn, &e));
        CHECK_OK(prt_engine_get_io(e, 1, &io));
        CHECK(io.dims.nb_dims == 4 && io.dims.d[0] == -1 && io.dims.d[1] == 3 &&
              io.dims.d[2] == 1 && io.dims.d[3] == 1);
        ot_free(&x);
        x = ot_random(PRT_FLOAT32, D4(4, 3, 6, 8), &rng, 0);
        ref_gap(&x, &od, want);
        CHECK_OK(ot_run_engine(e, &x, 1, &y));
        if (y.data)
            ot_check_close("GlobalAveragePool dynamic engine", &y, &od, want, 1e-6);
        ot_free(&y);
        ot_free(&x);
        prt_engine_destroy(e);
    }
    /* An empty spatial extent: the mean of nothing is NaN (numpy's). */
    {
        ot_tensor x = ot_make(PRT_FLOAT32, D4(1, 2, 0, 3)), y;
        CHECK_OK(ot_run_op("GlobalAveragePool", NULL, 0, &x, 1, &y));
        CHECK(y.data && y.dims.nb_dims == 4 && y.dims.d[2] == 1 && isnan(ot_get(&y, 0)) &&
              isnan(ot_get(&y, 1)));
        ot_free(&y);
        ot_free(&x);
    }
    /* Errors. */
    {
        ot_tensor x = ot_make(PRT_FLOAT32, D2(2, 3)), y;
        const int32_t one = 1;
        prt_field f = ot_fld_i32("kernel_shape", &one, 1);
        prt_plugin *p = NULL;
        CHECK_ERR(ot_run_op("GlobalAveragePool", NULL, 0, &x, 1, &y), PRT_ERR_SHAPE,
                  "GlobalAveragePool (layer 'GlobalAveragePool'): X must have rank 3 "
                  "or more (N x C x D1 ...), it has rank 2");
        ot_free(&x);
        x = ot_make(PRT_INT32, D3(1, 2, 3));
        CHECK_ERR(ot_run_op("GlobalAveragePool", NULL, 0, &x, 1, &y), PRT_ERR_UNSUPPORTED,
                  "dtype int32 is not supported");
        ot_free(&x);
        CHECK_ERR(ot_make_op("GlobalAveragePool", &f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "unknown field 'kernel_shape' (it takes no fields)");
    }
    return 0;
}

/* ---- Flatten
 * --------------------------------------------------------------------------- */

static prt_dims ref_flatten_dims(const prt_dims *x, int32_t axis)
{
    prt_dims o = D2(1, 1);
    if (axis < 0)
        axis += x->nb_dims;
    for (int32_t i = 0; i < x->nb_dims; i++)
        o.d[i >= axis] *= x->d[i];
    return o;
}

static int test_flatten(void)
{
    static const int32_t types[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_INT8,
                                    PRT_INT64,   PRT_BOOL,    PRT_UINT8};
    tu_rng rng;
    tu_rng_seed(&rng, 111);
    /* Every axis of a rank-4 input, -4 to 4, and the default (1). */
    for (int32_t axis = -4; axis <= 5; axis++)
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
            int given = axis <= 4;
            ot_tensor x = ot_random(types[t], D4(2, 3, 1, 4), &rng, 0), y;
            prt_field f = ot_fld_i32("axis", &axis, 1);
            prt_dims od = ref_flatten_dims(&x.dims, given ? axis : 1);
            double want[24];
            char what[64];
            for (int64_t i = 0; i < 24; i++)
                want[i] = ot_get(&x, i);
            snprintf(what, sizeof what, "Flatten %s axis %d%s", prt_dtype_name(types[t]),
                     (int)(given ? axis : 1), given ? "" : " (default)");
            CHECK_OK(ot_run_op("Flatten", &f, given, &x, 1, &y));
            if (y.data)
                ot_check_close(what, &y, &od, want, 0);
            ot_free(&x);
            ot_free(&y);
        }
    /* A scalar is [1, 1] (axis 0 or its own rank 0); a rank-1 input. */
    {
        const int32_t zero = 0, m1 = -1;
        prt_field f = ot_fld_i32("axis", &zero, 1);
        ot_tensor x = ot_make(PRT_FLOAT32, D0()), y;
        double w = 4.5;
        ot_set(&x, 0, 4.5);
        CHECK_OK(ot_run_op("Flatten", &f, 1, &x, 1, &y));
        if (y.data) {
            prt_dims od = D2(1, 1);
            ot_check_close("Flatten scalar", &y, &od, &w, 0);
        }
        ot_free(&y);
        ot_free(&x);
        x = ot_random(PRT_INT32, D1(5), &rng, 0);
        f = ot_fld_i32("axis", &m1, 1);
        CHECK_OK(ot_run_op("Flatten", &f, 1, &x, 1, &y));
        CHECK(y.data && y.dims.nb_dims == 2 && y.dims.d[0] == 1 && y.dims.d[1] == 5 &&
              memcmp(y.data, x.data, 20) == 0);
        ot_free(&y);
        ot_free(&x);
    }
    /* Dynamic dims: the output dims are products of expressions. One engine
     * (dims 0 and 2 dynamic, axis 2) serves two shapes; an int64 field. */
    {
        uint32_t dyn[1] = {0x5u};
        const int64_t axis64 = 2;
        prt_field f = {"axis", &axis64, PRT_FIELD_INT64, 1};
        ot_tensor x = ot_random(PRT_FLOAT32, D4(2, 3, 4, 5), &rng, 0), y;
        prt_engine *e = NULL;
        prt_io_info io = {.struct_size = sizeof(prt_io_info)};
        prt_layer_info li = {.struct_size = sizeof(prt_layer_info)};
        prt_dims od;
        double want[7 * 3 * 6 * 5];
        for (int64_t i = 0; i < 120; i++)
            want[i] = ot_get(&x, i);
        od = ref_flatten_dims(&x.dims, 2);
        CHECK_OK(ot_run_op_dyn("Flatten", &f, 1, &x, 1, dyn, &y));
        if (y.data)
            ot_check_close("Flatten dynamic", &y, &od, want, 0);
        ot_free(&y);
        REQUIRE_OK(ot_build_op("Flatten", &f, 1, &x, 1, dyn, &e));
        CHECK_OK(prt_engine_get_io(e, 1, &io));
        CHECK(io.dims.nb_dims == 2 && io.dims.d[0] == -1 && io.dims.d[1] == -1);
        CHECK_OK(prt_engine_get_layer(e, 0, &li));
        CHECK(li.nb_fields == 1 && strcmp(li.fields[0].name, "axis") == 0 &&
              li.fields[0].type == PRT_FIELD_INT32 &&
              *(const int32_t *)li.fields[0].data == 2);
        ot_free(&x);
        x = ot_random(PRT_FLOAT32, D4(5, 3, 7, 5), &rng, 0);
        for (int64_t i = 0; i < 525; i++)
            want[i] = ot_get(&x, i);
        od = ref_flatten_dims(&x.dims, 2);
        CHECK_OK(ot_run_engine(e, &x, 1, &y));
        if (y.data)
            ot_check_close("Flatten dynamic engine", &y, &od, want, 0);
        ot_free(&y);
        ot_free(&x);
        prt_engine_destroy(e);
    }
    /* Errors: an axis outside [-r, r] fails the build naming both. */
    {
        const int32_t five = 5, m4 = -4;
        prt_field f = ot_fld_i32("axis", &five, 1);
        ot_tensor x = ot_make(PRT_FLOAT32, D4(1, 2, 3, 4)), y;
        CHECK_ERR(ot_run_op("Flatten", &f, 1, &x, 1, &y), PRT_ERR_SHAPE,
                  "Flatten (layer 'Flatten'): axis 5 is out of range for an input of "
                  "rank 4 (-4 to 4)");
        ot_free(&x);
        x = ot_make(PRT_FLOAT32, D3(1, 2, 3));
        f = ot_fld_i32("axis", &m4, 1);
        CHECK_ERR(ot_run_op("Flatten", &f, 1, &x, 1, &y), PRT_ERR_SHAPE,
                  "axis -4 is out of range for an input of rank 3");
        ot_free(&x);
    }
    return 0;
}

/* ---- matrix products
 * ------------------------------------------------------------------------ */

/* C = op(A) op(B), leading dims as op_gemm_f32_t takes them: in double, and
 * in float summing k in order (what the built-in loops promise, bit for
 * bit). */
static void ref_product(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A,
                        int64_t lda, const float *B, int64_t ldb, double *C, float *Cf)
{
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = 0;
            float sf = 0;
            for (int64_t k = 0; k < K; k++) {
                float a = ta ? A[k * lda + i] : A[i * lda + k];
                float b = tb ? B[j * ldb + k] : B[k * ldb + j];
                s += (double)a * b;
                sf += a * b;
            }
            C[i * N + j] = s;
            Cf[i * N + j] = sf;
        }
}

/* A product of op_gemm_f32_t's rule through fn; 0 when C matches (exactly
 * the in-order float sums with `exact`). ldc > N, and the padding of every
 * row must stay as it was. */
static int
check_product(const char *what,
              void (*fn)(int32_t, int32_t, int64_t, int64_t, int64_t, const float *,
                         int64_t, const float *, int64_t, float *, int64_t),
              int exact, int ta, int tb, int64_t M, int64_t N, int64_t K, tu_rng *rng)
{
    int64_t lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 2, ldc = N + 5;
    int64_t na = (ta ? K : M) * lda, nb = (tb ? N : K) * ldb;
    float *A = malloc(sizeof(float) * (size_t)(na + 1));
    float *B = malloc(sizeof(float) * (size_t)(nb + 1));
    float *C = malloc(sizeof(float) * (size_t)(M * ldc + 1));
    double *want = malloc(sizeof(double) * (size_t)(M * N + 1));
    float *wantf = malloc(sizeof(float) * (size_t)(M * N + 1));
    int bad = 0;
    REQUIRE(A && B && C && want && wantf);
    for (int64_t i = 0; i < na; i++)
        A[i] = (float)(tu_rng_uniform(rng) * 2 - 1);
    for (int64_t i = 0; i < nb; i++)
        B[i] = (float)(tu_rng_uniform(rng) * 2 - 1);
    for (int64_t i = 0; i < M * ldc; i++)
        C[i] = NAN; /* every element of the product must be written */
    ref_product(ta, tb, M, N, K, A, lda, B, ldb, want, wantf);
    fn(ta, tb, M, N, K, A, lda, B, ldb, C, ldc);
    for (int64_t i = 0; i < M && !bad; i++)
        for (int64_t j = 0; j < ldc && !bad; j++) {
            double got = C[i * ldc + j];
            if (j >= N)
                bad = !isnan(got);
            else if (exact)
                bad = C[i * ldc + j] != wantf[i * N + j];
            else
                bad = !(fabs(got - want[i * N + j]) <= 1e-5 * (1 + sqrt((double)K)));
            if (bad)
                fprintf(stderr,
                        "%s transA %d transB %d %lldx%lldx%lld: C[%lld, %lld] = %g, "
                        "wanted %g\n",
                        what, ta, tb, (long long)M, (long long)N, (long long)K,
                        (long long)i, (long long)j, got, j >= N ? NAN : want[i * N + j]);
        }
    CHECK(!bad);
    free(A);
    free(B);
    free(C);
    free(want);
    free(wantf);
    return bad;
}

/* A process whose limit is finite however large: OpenBLAS would spin where
 * it is refused memory, so products must not go to it (ops/blas.c). */
static int set_data_limit(rlim_t cur)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_DATA, &r) != 0 ||
        (r.rlim_max != RLIM_INFINITY && cur > r.rlim_max))
        return -1;
    r.rlim_cur = cur;
    return setrlimit(RLIMIT_DATA, &r);
}

static int test_products(void)
{
    /* Whole and partial tiles (4 x 8), past the panels of 256 rows of K. */
    static const int64_t sizes[][3] = {{1, 1, 1},   {3, 4, 5},      {7, 1, 9},
                                       {1, 13, 2},  {5, 1030, 300}, {17, 33, 257},
                                       {8, 16, 64}, {4, 8, 513}};
    tu_rng rng;
    float one = 1.0f, c[2] = {7.0f, 7.0f};
    int blas, limited;
    ot_tensor in[2], y;
    tu_rng_seed(&rng, 141);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                check_product("op_gemm_f32_loops", op_gemm_f32_loops, 1, ta, tb,
                              sizes[s][0], sizes[s][1], sizes[s][2], &rng);
                check_product("op_gemm_f32_t", op_gemm_f32_t, 0, ta, tb, sizes[s][0],
                              sizes[s][1], sizes[s][2], &rng);
            }
    /* K = 0: a sum of nothing. */
    op_gemm_f32_loops(0, 0, 1, 2, 0, &one, 1, &one, 2, c, 2);
    CHECK(c[0] == 0.0f && c[1] == 0.0f);

    /* Whether products go to the BLAS in this process and build (1 with
     * OpenBLAS loaded, 0 without one). */
    blas = op_blas_sgemm(0, 0, 1, 1, 1, &one, 1, &one, 1, c, 1);
    /* A finite limit, even one nothing reaches: the next context of an op
     * with products takes the loops, and its results are right. */
    limited = set_data_limit(RLIM_INFINITY - 1) == 0;
    if (!limited)
        fprintf(stderr, "note: cannot set RLIMIT_DATA; the limit case is not tested\n");
    in[0] = ot_random(PRT_FLOAT32, D2(3, 4), &rng, 0);
    in[1] = ot_random(PRT_FLOAT32, D2(4, 2), &rng, 0);
    if (limited) {
        double want[6];
        prt_dims od;
        CHECK_OK(ot_run_op("MatMul", NULL, 0, in, 2, &y));
        CHECK(op_blas_sgemm(0, 0, 1, 1, 1, &one, 1, &one, 1, c, 1) == 0);
        ref_matmul(&in[0], &in[1], &od, want);
        if (y.data)
            ot_check_close("MatMul under a limit", &y, &od, want, 1e-6);
        ot_free(&y);
        CHECK(set_data_limit(RLIM_INFINITY) == 0);
    }
    /* Without it, the next context goes back to what the process had. */
    CHECK_OK(ot_run_op("MatMul", NULL, 0, in, 2, &y));
    CHECK(op_blas_sgemm(0, 0, 1, 1, 1, &one, 1, &one, 1, c, 1) == blas);
    ot_free(&y);
    ot_free(&in[0]);
    ot_free(&in[1]);
    return 0;
}

/* ---- Gemm
 * ---------------------------------------------------------------------------------- */

/* Y = alpha * A' * B' + beta * C in double, C broadcast to [M, N] (none
 * when c is NULL or beta is 0, as ONNX's reference does). */
static void ref_gemm(const ot_tensor *a, const ot_tensor *b, const ot_tensor *c, int ta,
                     int tb, double alpha, double beta, prt_dims *od, double *want)
{
    int64_t M = a->dims.d[ta ? 1 : 0], K = a->dims.d[ta ? 0 : 1];
    int64_t N = b->dims.d[tb ? 0 : 1];
    *od = D2(M, N);
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = 0;
            int64_t idx[2] = {i, j};
            for (int64_t k = 0; k < K; k++)
                s += ot_get(a, ta ? k * M + i : i * K + k) *
                     ot_get(b, tb ? j * K + k : k * N + j);
            s *= alpha;
            if (c && beta != 0)
                s += beta * ot_get(c, ot_bcast_at(&c->dims, od, idx));
            want[i * N + j] = s;
        }
}

static int32_t gemm_fields(prt_field *f, const float *alpha, const float *beta,
                           const int32_t *ta, const int32_t *tb)
{
    int32_t n = 0;
    if (alpha)
        f[n++] = ot_fld_f32("alpha", alpha);
    if (beta)
        f[n++] = ot_fld_f32("beta", beta);
    if (ta)
        f[n++] = ot_fld_i32("transA", ta, 1);
    if (tb)
        f[n++] = ot_fld_i32("transB", tb, 1);
    return n;
}

/* Gemm with a constant B: packed once without transposes (gemm_prepare),
 * the same bytes as B given at run time; with a transpose B is read as it
 * is. */
static int test_gemm_const_b(void)
{
    struct {
        int32_t dtype, ta, tb;
        int64_t M, K, N;
        int c; /* C: 0 none, 1 [N], 2 [M, N] */
        float alpha;
    } cases[] = {
        {PRT_FLOAT32, 0, 0, 300, 128, 512, 1, 1.0f}, /* strips copied per block */
        {PRT_FLOAT32, 0, 0, 37, 70, 31, 0, 1.0f},
        {PRT_FLOAT32, 0, 0, 1, 70, 40, 1, 1.0f},
        {PRT_FLOAT32, 0, 0, 130, 64, 16, 2, 0.5f},
        {PRT_FLOAT32, 0, 1, 300, 128, 64, 1, 1.0f},
        {PRT_FLOAT32, 1, 0, 20, 30, 40, 0, 1.0f},
        {PRT_FLOAT16, 0, 0, 150, 64, 128, 2, 0.5f},
        {PRT_BFLOAT16, 0, 0, 5, 16, 16, 1, 1.0f},
    };
    tu_rng rng;
    tu_rng_seed(&rng, 41);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int32_t dt = cases[c].dtype, nb = cases[c].c ? 3 : 2;
        const int64_t M = cases[c].M, K = cases[c].K, N = cases[c].N;
        const float beta = 1.0f;
        prt_field f[4];
        int32_t nf = gemm_fields(f, &cases[c].alpha, &beta, &cases[c].ta, &cases[c].tb);
        ot_tensor in[3];
        prt_dims od;
        double *want = calloc((size_t)(M * N), sizeof(double));
        char what[96];
        REQUIRE(want);
        in[0] = ot_random(dt, cases[c].ta ? D2(K, M) : D2(M, K), &rng, 0);
        in[1] = ot_random(dt, cases[c].tb ? D2(N, K) : D2(K, N), &rng, 0);
        if (nb == 3)
            in[2] = ot_random(dt, cases[c].c == 1 ? D1(N) : D2(M, N), &rng, 0);
        ref_gemm(&in[0], &in[1], nb == 3 ? &in[2] : NULL, cases[c].ta, cases[c].tb,
                 cases[c].alpha, beta, &od, want);
        snprintf(what, sizeof what, "Gemm constant B case %d (%s)", (int)c,
                 prt_dtype_name(dt));
        check_const_inputs(what, "Gemm", f, nf, in, nb, nb == 3 ? 6u : 2u, &od, want,
                           dt == PRT_FLOAT32   ? 1e-4
                           : dt == PRT_FLOAT16 ? 4e-3
                                               : 3e-2);
        for (int32_t i = 0; i < nb; i++)
            ot_free(&in[i]);
        free(want);
    }
    return 0;
}

static int test_gemm(void)
{
    const int64_t M = 3, K = 5, N = 4;
    /* C: none, scalar, [1], [N], [1, N], [M, 1], [M, N], [1, 1]. */
    const prt_dims cdims[] = {D0(),     D0(),     D1(1),    D1(N),
                              D2(1, N), D2(M, 1), D2(M, N), D2(1, 1)};
    const float alphas[] = {1.0f, 0.5f, -2.0f}, betas[] = {1.0f, 0.25f, 0.0f};
    static const int32_t types[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16};
    int ncases = 0;
    tu_rng rng;
    tu_rng_seed(&rng, 121);
    for (int32_t ta = 0; ta < 2; ta++)
        for (int32_t tb = 0; tb < 2; tb++)
            for (size_t ab = 0; ab < 3; ab++)
                for (size_t ci = 0; ci < sizeof cdims / sizeof cdims[0]; ci++)
                    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
                        /* Half floats on a subset, float32 on all. */
                        int32_t dt = types[t], nb_in = ci ? 3 : 2, nf;
                        ot_tensor in[3], y;
                        prt_field f[4];
                        double want[12];
                        prt_dims od;
                        char what[128];
                        /* Fields given explicitly or left to their defaults
                         * (alpha = beta = 1, trans 0) in turn. */
                        int explicit_ = (ci + ab) % 2 || ta || tb;
                        if (dt != PRT_FLOAT32 && (ci % 3 != 0 || ab == 2))
                            continue;
                        in[0] = ot_random(dt, ta ? D2(K, M) : D2(M, K), &rng, 0);
                        in[1] = ot_random(dt, tb ? D2(N, K) : D2(K, N), &rng, 0);
                        if (ci)
                            in[2] = ot_random(dt, cdims[ci], &rng, 0);
                        nf = gemm_fields(f, ab || explicit_ ? &alphas[ab] : NULL,
                                         ab || explicit_ ? &betas[ab] : NULL,
                                         explicit_ ? &ta : NULL, explicit_ ? &tb : NULL);
                        ref_gemm(&in[0], &in[1], ci ? &in[2] : NULL, ta, tb, alphas[ab],
                                 betas[ab], &od, want);
                        snprintf(what, sizeof what,
                                 "Gemm %s transA %d transB %d alpha %g beta %g C case %d",
                                 prt_dtype_name(dt), (int)ta, (int)tb, alphas[ab],
                                 betas[ab], (int)ci);
                        CHECK_OK(ot_run_op("Gemm", f, nf, in, nb_in, &y));
                        if (y.data)
                            ot_check_close(what, &y, &od, want,
                                           dt == PRT_FLOAT32   ? 1e-5
                                           : dt == PRT_FLOAT16 ? 4e-3
                                                               : 3e-2);
                        ot_free(&y);
                        for (int32_t k = 0; k < nb_in; k++)
                            ot_free(&in[k]);
                        ncases++;
                    }
    CHECK(ncases == 2 * 2 * 3 * 8 + 2 * 2 * 2 * 3 * 2);
    /* beta 0: C is not read, so its NaN does not reach Y; alpha 0 still
     * multiplies (0 * inf is NaN, as dot(A, B) * 0 is in the reference). */
    {
        const float b0 = 0.0f, a0 = 0.0f;
        prt_field f[2] = {ot_fld_f32("beta", &b0), ot_fld_f32("alpha", &a0)};
        ot_tensor in[3], y;
        double want[4];
        prt_dims od;
        in[0] = ot_random(PRT_FLOAT32, D2(2, 3), &rng, 0);
        in[1] = ot_random(PRT_FLOAT32, D2(3, 2), &rng, 0);
        in[2] = ot_make(PRT_FLOAT32, D2(2, 2));
        for (int i = 0; i < 4; i++)
            ot_set(&in[2], i, NAN);
        ref_gemm(&in[0], &in[1], NULL, 0, 0, 1, 0, &od, want);
        CHECK_OK(ot_run_op("Gemm", f, 1, in, 3, &y));
        if (y.data)
            ot_check_close("Gemm beta 0, C NaN", &y, &od, want, 1e-5);
        ot_free(&y);
        ot_set(&in[0], 0, INFINITY);
        CHECK_OK(ot_run_op("Gemm", f, 2, in, 3, &y));
        CHECK(y.data && isnan(ot_get(&y, 0)) && isnan(ot_get(&y, 1)) &&
              ot_get(&y, 2) == 0 && ot_get(&y, 3) == 0);
        ot_free(&y);
        for (int k = 0; k < 3; k++)
            ot_free(&in[k]);
    }
    /* A larger product than the blocks of the loop fallback; K = 0. */
    {
        const int32_t one = 1;
        prt_field f = ot_fld_i32("transB", &one, 1);
        ot_tensor in[3], y;
        double *want = calloc(37 * 300, sizeof(double));
        prt_dims od;
        REQUIRE(want);
        in[0] = ot_random(PRT_FLOAT32, D2(37, 600), &rng, 0);
        in[1] = ot_random(PRT_FLOAT32, D2(300, 600), &rng, 0);
        in[2] = ot_random(PRT_FLOAT32, D1(300), &rng, 0);
        ref_gemm(&in[0], &in[1], &in[2], 0, 1, 1, 1, &od, want);
        CHECK_OK(ot_run_op("Gemm", &f, 1, in, 3, &y));
        if (y.data)
            ot_check_close("Gemm 37x600x300 transB", &y, &od, want, 1e-4);
        ot_free(&y);
        for (int k = 0; k < 3; k++)
            ot_free(&in[k]);
        in[0] = ot_make(PRT_FLOAT32, D2(2, 0));
        in[1] = ot_make(PRT_FLOAT32, D2(0, 3));
        in[2] = ot_random(PRT_FLOAT32, D1(3), &rng, 0);
        ref_gemm(&in[0], &in[1], &in[2], 0, 0, 1, 1, &od, want);
        CHECK_OK(ot_run_op("Gemm", NULL, 0, in, 3, &y));
        if (y.data)
            ot_check_close("Gemm K = 0", &y, &od, want, 0);
        ot_free(&y);
        for (int k = 0; k < 3; k++)
            ot_free(&in[k]);
        free(want);
    }
    /* Dynamic M (and K on both sides): one engine, two shapes; the fields
     * survive the engine. */
    {
        const int32_t one = 1;
        const float alpha = 0.5f;
        prt_field f[2] = {ot_fld_i32("transA", &one, 1), ot_fld_f32("alpha", &alpha)};
        uint32_t dyn[3] = {0x3u, 0x1u, 0x0u};
        ot_tensor in[3], y;
        double want[64];
        prt_dims od;
        prt_engine *e = NULL;
        prt_layer_info li = {.struct_size = sizeof(prt_layer_info)};
        in[0] = ot_random(PRT_FLOAT32, D2(3, 2), &rng, 0); /* K x M */
        in[1] = ot_random(PRT_FLOAT32, D2(3, 4), &rng, 0);
        in[2] = ot_random(PRT_FLOAT32, D2(1, 4), &rng, 0);
        ref_gemm(&in[0], &in[1], &in[2], 1, 0, 0.5, 1, &od, want);
        CHECK_OK(ot_run_op_dyn("Gemm", f, 2, in, 3, dyn, &y));
        if (y.data)
            ot_check_close("Gemm dynamic", &y, &od, want, 1e-5);
        ot_free(&y);
        REQUIRE_OK(ot_build_op("Gemm", f, 2, in, 3, dyn, &e));
        CHECK_OK(prt_engine_get_layer(e, 0, &li));
        CHECK(li.nb_fields == 4 && strcmp(li.fields[0].name, "alpha") == 0 &&
              *(const float *)li.fields[0].data == 0.5f &&
              *(const int32_t *)li.fields[2].data == 1 &&
              *(const int32_t *)li.fields[3].data == 0);
        ot_free(&in[0]);
        ot_free(&in[1]);
        in[0] = ot_random(PRT_FLOAT32, D2(5, 4), &rng, 0);
        in[1] = ot_random(PRT_FLOAT32, D2(5, 4), &rng, 0);
        ref_gemm(&in[0], &in[1], &in[2], 1, 0, 0.5, 1, &od, want);
        CHECK_OK(ot_run_engine(e, in, 3, &y));
        if (y.data)
            ot_check_close("Gemm dynamic engine", &y, &od, want, 1e-5);
        ot_free(&y);
        /* K differs between A and B at run time. */
        ot_free(&in[1]);
        in[1] = ot_random(PRT_FLOAT32, D2(4, 4), &rng, 0);
        CHECK_ERR(ot_run_engine(e, in, 3, &y), PRT_ERR_SHAPE,
                  "inner dims differ: A [5, 4] (transposed) has K = 5, B [4, 4] has "
                  "K = 4");
        prt_engine_destroy(e);
        for (int k = 0; k < 3; k++)
            ot_free(&in[k]);
    }
    /* Errors. */
    {
        const int32_t one = 1;
        const float two[2] = {1, 2};
        prt_field f = ot_fld_i32("transB", &one, 1);
        ot_tensor in[3], y;
        prt_plugin *p = NULL;
        in[0] = ot_make(PRT_FLOAT32, D2(2, 3));
        in[1] = ot_make(PRT_FLOAT32, D2(3, 4));
        in[2] = ot_make(PRT_FLOAT32, D2(2, 3));
        CHECK_ERR(ot_run_op("Gemm", NULL, 0, in, 3, &y), PRT_ERR_SHAPE,
                  "Gemm (layer 'Gemm'): C [2, 3] cannot be broadcast to M x N = "
                  "[2, 4]");
        CHECK_ERR(ot_run_op("Gemm", &f, 1, in, 2, &y), PRT_ERR_SHAPE,
                  "inner dims differ: A [2, 3] has K = 3, B [3, 4] (transposed) has "
                  "K = 4");
        ot_free(&in[2]);
        in[2] = ot_make(PRT_FLOAT32, D3(1, 2, 4));
        CHECK_ERR(ot_run_op("Gemm", NULL, 0, in, 3, &y), PRT_ERR_SHAPE,
                  "C must have rank 2 or less");
        ot_free(&in[0]);
        in[0] = ot_make(PRT_FLOAT32, D3(1, 2, 3));
        CHECK_ERR(ot_run_op("Gemm", NULL, 0, in, 2, &y), PRT_ERR_SHAPE,
                  "A and B must be 2-D; A has rank 3, B has rank 2");
        for (int k = 0; k < 3; k++)
            ot_free(&in[k]);
        in[0] = ot_make(PRT_INT32, D2(2, 3));
        in[1] = ot_make(PRT_INT32, D2(3, 4));
        CHECK_ERR(ot_run_op("Gemm", NULL, 0, in, 2, &y), PRT_ERR_UNSUPPORTED,
                  "dtype int32 is not supported (supported: float32, float16 or "
                  "bfloat16)");
        ot_free(&in[0]);
        ot_free(&in[1]);
        f.name = "alpha";
        f.data = two;
        f.type = PRT_FIELD_FLOAT32;
        f.length = 2;
        CHECK_ERR(ot_make_op("Gemm", &f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "field 'alpha' must hold one value, it holds 2");
        f = ot_fld_i32("broadcast", &one, 1);
        CHECK_ERR(ot_make_op("Gemm", &f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "unknown field 'broadcast' (accepted: alpha, beta, transA, transB)");
    }
    return 0;
}

/* ---- MobileNet's head: Conv -> HardSwish -> GlobalAveragePool -> Flatten -> Gemm
 * -------- */

/* X[N, 4, 5, 5] (N dynamic) -> Conv(W[6, 4, 1, 1]) -> HardSwish ->
 * GlobalAveragePool -> HardSigmoid -> Flatten -> Gemm(W2[3, 6], b[3],
 * transB 1): the shapes flow through symbolic dims into a 2-D Gemm. */
static int test_head(void)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL;
    prt_dims xd = D4(-1, 4, 5, 5), wd = D4(6, 4, 1, 1), w2d = D2(3, 6), bd = D1(3);
    prt_dims mn = D4(1, 4, 5, 5), mx = D4(4, 4, 5, 5);
    float w[24], w2[18], b[3];
    const int32_t one = 1;
    prt_field tb = ot_fld_i32("transB", &one, 1);
    int32_t tx, tw, tw2, tb2, t, l, ins[3], prof;
    tu_rng rng;
    tu_rng_seed(&rng, 131);
    for (int i = 0; i < 24; i++)
        w[i] = (float)(tu_rng_uniform(&rng) * 4 - 2);
    for (int i = 0; i < 18; i++)
        w2[i] = (float)(tu_rng_uniform(&rng) * 2 - 1);
    for (int i = 0; i < 3; i++)
        b[i] = (float)(tu_rng_uniform(&rng) * 2 - 1);
    REQUIRE_OK(prt_network_create(&net));
    REQUIRE_OK(prt_network_add_input(net, "X0", PRT_FLOAT32, &xd, &tx));
    REQUIRE_OK(prt_network_add_constant(net, "W", PRT_FLOAT32, &wd, w, &tw));
    REQUIRE_OK(prt_network_add_constant(net, "W2", PRT_FLOAT32, &w2d, w2, &tw2));
    REQUIRE_OK(prt_network_add_constant(net, "b", PRT_FLOAT32, &bd, b, &tb2));
    {
        static const char *const chain[] = {
            "Conv", "HardSwish", "GlobalAveragePool", "HardSigmoid", "Flatten", "Gemm"};
        t = tx;
        for (int i = 0; i < 6; i++) {
            prt_plugin *p = NULL;
            int32_t nb = 1;
            ins[0] = t;
            if (i == 0) {
                ins[1] = tw;
                nb = 2;
            } else if (i == 5) {
                ins[1] = tw2;
                ins[2] = tb2;
                nb = 3;
            }
            REQUIRE_OK(ot_make_op(chain[i], i == 5 ? &tb : NULL, i == 5, &p));
            REQUIRE_OK(prt_network_add_plugin(net, ins, nb, NULL, 0, p, &l));
            REQUIRE_OK(prt_network_get_layer_output(net, l, 0, &t));
        }
    }
    REQUIRE_OK(prt_network_set_tensor_name(net, t, "Y"));
    REQUIRE_OK(prt_network_mark_output(net, t));
    REQUIRE_OK(prt_builder_config_create(&cfg));
    REQUIRE_OK(prt_builder_config_add_profile(cfg, &prof));
    REQUIRE_OK(prt_builder_config_set_profile_dims(cfg, prof, "X0", &mn, &mn, &mx));
    REQUIRE_OK(prt_engine_build(net, cfg, NULL, &e));
    for (int64_t n = 1; n <= 4; n += 3) {
        ot_tensor x = ot_random(PRT_FLOAT32, D4(n, 4, 5, 5), &rng, 0), y;
        double want[12];
        prt_dims yd = D2(n, 3);
        for (int64_t i = 0; i < n; i++) {
            double pooled[6];
            for (int c = 0; c < 6; c++) {
                double s = 0;
                for (int p = 0; p < 25; p++) {
                    double v = 0, hs;
                    for (int k = 0; k < 4; k++)
                        v += w[c * 4 + k] * ot_get(&x, (i * 4 + k) * 25 + p);
                    hs = v / 6 + 0.5;
                    s += v * (hs < 0 ? 0 : hs > 1 ? 1 : hs);
                }
                s = s / 25 * 0.2 + 0.5;
                pooled[c] = s < 0 ? 0 : s > 1 ? 1 : s;
            }
            for (int j = 0; j < 3; j++) {
                double s = b[j];
                for (int c = 0; c < 6; c++)
                    s += pooled[c] * w2[j * 6 + c];
                want[i * 3 + j] = s;
            }
        }
        CHECK_OK(ot_run_engine(e, &x, 1, &y));
        if (y.data)
            ot_check_close(n == 1 ? "head N=1" : "head N=4", &y, &yd, want, 1e-5);
        ot_free(&y);
        ot_free(&x);
    }
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return 0;
}

/* ---- a network of several ops with constants --------------------------------------- */

/* X[4, 8] -> MatMul(W[8, 6]) -> Add(b[6]) -> Relu -> Identity ->
 * Einsum("ij,ij->i", t, t): the row sums of squares of relu(XW + b). */
static int test_chain(void)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL, *e2 = NULL;
    prt_registry *reg = NULL;
    prt_dims xd = D2(4, 8), wd = D2(8, 6), bd = D1(6), yd = D1(4);
    float w[48], b[6];
    ot_tensor x, y;
    double want[4];
    int32_t tx, tw, tb, t, l, ins[2];
    void *bytes = NULL;
    size_t size;
    prt_plugin *p;
    prt_field eq = ot_fld_str("equation", "ij,ij->i");
    tu_rng rng;
    tu_rng_seed(&rng, 71);
    for (int i = 0; i < 48; i++)
        w[i] = (float)(tu_rng_uniform(&rng) * 2 - 1);
    for (int i = 0; i < 6; i++)
        b[i] = (float)(tu_rng_uniform(&rng) * 2 - 1);
    x = ot_random(PRT_FLOAT32, xd, &rng, 0);
    for (int i = 0; i < 4; i++) {
        want[i] = 0;
        for (int j = 0; j < 6; j++) {
            double s = b[j];
            for (int k = 0; k < 8; k++)
                s += ot_get(&x, i * 8 + k) * w[k * 6 + j];
            s = s < 0 ? 0 : s;
            want[i] += s * s;
        }
    }
    REQUIRE_OK(prt_network_create(&net));
    REQUIRE_OK(prt_network_add_input(net, "X0", PRT_FLOAT32, &xd, &tx));
    REQUIRE_OK(prt_network_add_constant(net, "W", PRT_FLOAT32, &wd, w, &tw));
    REQUIRE_OK(prt_network_add_constant(net, "b", PRT_FLOAT32, &bd, b, &tb));
    ins[0] = tx;
    ins[1] = tw;
    REQUIRE_OK(ot_make_op("MatMul", NULL, 0, &p));
    REQUIRE_OK(prt_network_add_plugin(net, ins, 2, NULL, 0, p, &l));
    REQUIRE_OK(prt_network_get_layer_output(net, l, 0, &ins[0]));
    ins[1] = tb;
    REQUIRE_OK(ot_make_op("Add", NULL, 0, &p));
    REQUIRE_OK(prt_network_add_plugin(net, ins, 2, NULL, 0, p, &l));
    REQUIRE_OK(prt_network_get_layer_output(net, l, 0, &t));
    REQUIRE_OK(ot_make_op("Relu", NULL, 0, &p));
    REQUIRE_OK(prt_network_add_plugin(net, &t, 1, NULL, 0, p, &l));
    REQUIRE_OK(prt_network_get_layer_output(net, l, 0, &t));
    REQUIRE_OK(ot_make_op("Identity", NULL, 0, &p));
    REQUIRE_OK(prt_network_add_plugin(net, &t, 1, NULL, 0, p, &l));
    REQUIRE_OK(prt_network_get_layer_output(net, l, 0, &t));
    ins[0] = ins[1] = t;
    REQUIRE_OK(ot_make_op("Einsum", &eq, 1, &p));
    REQUIRE_OK(prt_network_add_plugin(net, ins, 2, NULL, 0, p, &l));
    REQUIRE_OK(prt_network_get_layer_output(net, l, 0, &t));
    REQUIRE_OK(prt_network_set_tensor_name(net, t, "Y"));
    REQUIRE_OK(prt_network_mark_output(net, t));
    REQUIRE_OK(prt_builder_config_create(&cfg));
    REQUIRE_OK(prt_engine_build(net, cfg, NULL, &e));
    CHECK_OK(ot_run_engine(e, &x, 1, &y));
    if (y.data)
        ot_check_close("chain", &y, &yd, want, 1e-4);
    ot_free(&y);
    REQUIRE_OK(prt_engine_serialize(e, &bytes, &size));
    REQUIRE_OK(prt_registry_create(&reg));
    CHECK_OK(prt_engine_deserialize(reg, bytes, size, &e2));
    if (e2) {
        CHECK_OK(ot_run_engine(e2, &x, 1, &y));
        if (y.data)
            ot_check_close("chain, loaded", &y, &yd, want, 1e-4);
        ot_free(&y);
    }
    /* No registry at all is fine for an engine of built-ins only. */
    prt_engine_destroy(e2);
    e2 = NULL;
    CHECK_OK(prt_engine_deserialize(NULL, bytes, size, &e2));
    prt_engine_destroy(e2);
    prt_free(bytes);
    prt_registry_destroy(reg);
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    ot_free(&x);
    return 0;
}

/* ---- allocation failures -------------------------------------------------------------
 */

static int test_alloc_failures(void)
{
    const int32_t pads[4] = {1, 1, 1, 1};
    prt_field f = ot_fld_i32("pads", pads, 4);
    ot_tensor in[3];
    tu_rng rng;
    int64_t n;
    tu_rng_seed(&rng, 81);
    in[0] = ot_random(PRT_FLOAT16, D4(1, 2, 5, 5), &rng, 0);
    in[1] = ot_random(PRT_FLOAT16, D4(3, 2, 3, 3), &rng, 0);
    in[2] = ot_random(PRT_FLOAT16, D1(3), &rng, 0);
    n = ot_alloc_failures("Conv", &f, 1, in, 3);
    CHECK(n > 3 && n < OT_MAX_ALLOCS);
    for (int k = 0; k < 3; k++)
        ot_free(&in[k]);
    return 0;
}

int main(void)
{
    test_dims_text();
    test_table();
    test_objects();
    test_relu_identity();
    test_inplace_chain();
    test_binary();
    test_matmul();
    test_matmul_const_b();
    test_transpose();
    test_einsum();
    test_conv();
    test_hard();
    test_gap();
    test_flatten();
    test_products();
    test_gemm();
    test_gemm_const_b();
    test_head();
    test_chain();
    test_alloc_failures();
    return tu_finish("test_ops");
}
