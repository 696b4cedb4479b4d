/*
 * The arithmetic the built-in ops' CUDA kernels do per element, run here on
 * the CPU (ops/cuda/gpu_args.h, ops/op_elem.h and base/fp16.h are compiled for both):
 * 16-bit float round trips and Cast's float-to-integer rule; broadcast walks (merged
 * dims) against a plain index walk; Slice's starts against the CPU op; and the dtypes
 * each op's CUDA kernel refuses, which leave CUDA out of the op's devices once
 * configured. Needs no GPU: CI runs it.
 */
#include <stdio.h>
#include <string.h>

#include "op_testutil.h"
#include "ops/cuda/gpu_args.h"

/* base/fp16.h is what prt_half_to_float and its kin are, so the kernels'
 * conversions are the CPU's by construction: here, that every half and
 * bfloat16 goes through float32 and back unchanged, NaN payloads too, and
 * Cast's float-to-integer rule. */
static void test_numbers(void)
{
    for (uint32_t h = 0; h < 65536; h++) {
        uint16_t a = base_f2h(base_h2f((uint16_t)h)),
                 b = base_f2bf(base_bf2f((uint16_t)h));
        /* A signaling NaN comes back quiet. */
        if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu))
            CHECK((a & 0x7c00u) == 0x7c00u && (a & 0x3ffu) &&
                  (a & 0x8000u) == (h & 0x8000u));
        else
            CHECK(a == h);
        if ((h & 0x7f80u) == 0x7f80u && (h & 0x7fu))
            CHECK(b == (h | 0x40u));
        else
            CHECK(b == h);
    }
    CHECK(base_f2h(65520.0f) == 0x7c00 && base_f2h(65519.0f) == 0x7bff);
    CHECK(base_f2h(5.9604644775390625e-8f) == 1 && base_f2h(2.9802322387695312e-8f) == 0);
    CHECK(base_f2bf(1.00390625f) == 0x3f80 && base_f2bf(1.01171875f) == 0x3f82);
    CHECK(base_f64_to_int(1e30, INT32_MIN, INT32_MAX) == INT32_MAX);
    CHECK(base_f64_to_int(-1e30, INT8_MIN, INT8_MAX) == INT8_MIN);
    CHECK(base_f64_to_int(-2.7, INT8_MIN, INT8_MAX) == -2);
    CHECK(base_f64_to_int(0.0 / 0.0, INT64_MIN, INT64_MAX) == 0);
    CHECK(base_f64_to_int(9.3e18, INT64_MIN, INT64_MAX) == INT64_MAX);
}

/* Random dims broadcast to out: each dim 1 or out's, leading dims dropped
 * at random. */
static prt_dims bcast_dims(tu_rng *r, const prt_dims *out)
{
    prt_dims d;
    int32_t drop = (int32_t)tu_rng_range(r, 0, out->nb_dims);
    if (tu_rng_range(r, 0, 2))
        drop = 0;
    d.nb_dims = out->nb_dims - drop;
    for (int32_t i = 0; i < d.nb_dims; i++)
        d.d[i] = tu_rng_range(r, 0, 2) ? out->d[i + drop] : 1;
    return d;
}

static void test_bcast(tu_rng *r)
{
    for (int t = 0; t < 3000; t++) {
        prt_dims out, in[OPK_MAX_IN];
        int32_t nb = (int32_t)tu_rng_range(r, 1, OPK_MAX_IN);
        int64_t n, idx[PRT_MAX_DIMS], stride[PRT_MAX_DIMS], s = 1;
        opk_bcast b, bs;
        out.nb_dims = (int32_t)tu_rng_range(r, 0, PRT_MAX_DIMS);
        for (int32_t i = 0; i < out.nb_dims; i++)
            out.d[i] = tu_rng_range(r, 1, out.nb_dims > 5 ? 3 : 5);
        for (int32_t k = 0; k < nb; k++)
            in[k] = bcast_dims(r, &out);
        opk_bcast_init(&b, &out, nb, in);
        CHECK(b.rank <= out.nb_dims && b.nb == nb);
        /* A transposed read: strides of a random permutation. */
        for (int32_t i = out.nb_dims - 1; i >= 0; i--) {
            stride[i] = tu_rng_range(r, 0, 3) ? s : -s;
            s *= out.d[i];
        }
        opk_bcast_init_strided(&bs, &out, stride);
        n = tu_volume(&out);
        for (int64_t i = 0; i < n; i++) {
            int64_t off[OPK_MAX_IN], offs[OPK_MAX_IN], want = 0;
            ot_unravel(&out, i, idx);
            opk_bcast_offsets(&b, i, off);
            for (int32_t k = 0; k < nb; k++)
                if (off[k] != ot_bcast_at(&in[k], &out, idx)) {
                    fprintf(stderr, "walk %d: element %lld input %d: %lld, wanted %lld\n",
                            t, (long long)i, (int)k, (long long)off[k],
                            (long long)ot_bcast_at(&in[k], &out, idx));
                    CHECK(!"broadcast offsets");
                    return;
                }
            opk_bcast_offsets(&bs, i, offs);
            for (int32_t d = 0; d < out.nb_dims; d++)
                want += idx[d] * stride[d];
            if (offs[0] != want) {
                CHECK(!"strided offsets");
                return;
            }
        }
    }
}

/* Slice's starts as the kernel computes them, against the CPU op on the
 * same parameters (the output's first element is the data at the
 * starts). */
static void test_slice_entry(tu_rng *r)
{
    for (int t = 0; t < 400; t++) {
        int64_t dims[3] = {tu_rng_range(r, 1, 6), tu_rng_range(r, 1, 6),
                           tu_rng_range(r, 1, 6)};
        int64_t start[3] = {0, 0, 0}, step[3] = {1, 1, 1};
        int64_t axis = tu_rng_range(r, -3, 2), s = tu_rng_range(r, -8, 8);
        int64_t e = tu_rng_range(r, -8, 8), k = tu_rng_range(r, 0, 1) ? 1 : -1;
        int32_t a = (int32_t)(axis < 0 ? axis + 3 : axis), nf = 3;
        ot_tensor x = ot_make(PRT_INT64, D3(dims[0], dims[1], dims[2])), y = {0};
        int32_t fa = (int32_t)axis;
        int64_t fs = s, fe = e;
        prt_field f[3];
        CHECK(opk_slice_entry(3, dims, axis, s, k, start, step) == 1);
        for (int64_t i = 0; i < tu_volume(&x.dims); i++)
            ot_set(&x, i, (double)i);
        if (k < 0) { /* the fields (opsets 1-9) have no steps */
            ot_free(&x);
            continue;
        }
        f[0] = (prt_field){"starts", &fs, PRT_FIELD_INT64, 1};
        f[1] = (prt_field){"ends", &fe, PRT_FIELD_INT64, 1};
        f[2] = ot_fld_i32("axes", &fa, 1);
        if (ot_run_op("Slice", f, nf, &x, 1, &y) == PRT_OK && tu_volume(&y.dims) > 0) {
            int64_t at = start[a] * (a == 0 ? dims[1] * dims[2] : a == 1 ? dims[2] : 1);
            CHECK(ot_get(&y, 0) == (double)at);
        }
        ot_free(&x);
        ot_free(&y);
    }
    {
        int64_t dims[1] = {4}, start[1], step[1];
        CHECK(opk_slice_entry(1, dims, 1, 0, 1, start, step) == 0);
        CHECK(opk_slice_entry(1, dims, 0, 0, 0, start, step) == 0);
        CHECK(opk_slice_entry(1, dims, 0, 9, -1, start, step) == 1 && start[0] == 3);
        CHECK(opk_slice_entry(1, dims, -1, -9, 1, start, step) == 1 && start[0] == 0);
    }
}

/* devices() of a built-in op configured with dtype dt for every input
 * (and out_dt for its output). */
static uint32_t devices_for(const char *op, int32_t nb_in, int32_t dt, int32_t out_dt)
{
    prt_plugin *p = NULL;
    prt_dynamic_tensor_desc d[4];
    uint32_t mask = 0;
    memset(d, 0, sizeof d);
    for (int32_t k = 0; k < nb_in + 1; k++) {
        d[k].desc.dtype = k < nb_in ? dt : out_dt;
        d[k].desc.format = PRT_FORMAT_LINEAR;
        d[k].desc.dims = D2(3, 3);
        d[k].min = d[k].opt = d[k].max = d[k].desc.dims;
    }
    if (ot_make_op(op, NULL, 0, &p) != PRT_OK)
        return 0;
    if (p->vt->build->configure(p, d, nb_in, d + nb_in, 1) == PRT_OK)
        mask = p->vt->core->devices(p);
    p->vt->runtime->destroy(p);
    return mask;
}

static int test_devices(void)
{
    const uint32_t cpu = 1u << PRT_DEVICE_CPU, cuda = 1u << PRT_DEVICE_CUDA;
    uint32_t all;
    prt_plugin *p = NULL;
    REQUIRE_OK(ot_make_op("Div", NULL, 0, &p));
    all = p->vt->core->devices(p); /* before configure: every kernel's */
    p->vt->runtime->destroy(p);
    CHECK(all & cpu);
#ifdef PRT_HAVE_CUDA
    CHECK(all & cuda);
#endif
    /* Integer Div and Mod run on CUDA too (a zero divisor, which fails the
     * CPU's run, gives 0 there); integer MatMul stays on the CPU. */
    CHECK(devices_for("Div", 2, PRT_INT32, PRT_INT32) == all);
    CHECK(devices_for("Mod", 2, PRT_INT64, PRT_INT64) == all);
    CHECK(devices_for("Div", 2, PRT_FLOAT32, PRT_FLOAT32) == all);
    CHECK(devices_for("Add", 2, PRT_INT64, PRT_INT64) == all);
    CHECK(devices_for("MatMul", 2, PRT_INT32, PRT_INT32) == cpu);
    CHECK(devices_for("MatMul", 2, PRT_FLOAT16, PRT_FLOAT16) == all);
    (void)cuda;
    return 0;
}

/* A plugin may narrow its devices once configured (plugin.h, devices): the
 * builder asks again and fails naming the layer, the plugin and the dtypes.
 * Shown on the CPU with a built-in Add whose tables are wrapped so that,
 * configured with int32, it leaves the CPU out. */
static const prt_plugin_vtable *inner_vt;
static int narrowed;

static uint32_t narrow_devices(const prt_plugin *p)
{
    uint32_t m = inner_vt->core->devices(p);
    return narrowed ? m & ~(1u << PRT_DEVICE_CPU) : m;
}

static prt_status narrow_configure(prt_plugin *p, const prt_dynamic_tensor_desc *in,
                                   int32_t nb_in, const prt_dynamic_tensor_desc *out,
                                   int32_t nb_out)
{
    narrowed = nb_in > 0 && in[0].desc.dtype == PRT_INT32;
    return inner_vt->build->configure(p, in, nb_in, out, nb_out);
}

/* Builds X0, X1 (dtype dt, [4]) -> wrapped Add -> Y on the CPU. */
static prt_status build_narrowing(int32_t dt)
{
    static prt_plugin_core core;
    static prt_plugin_build build;
    static prt_plugin_vtable vt;
    const prt_dims d = D1(4);
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL;
    prt_plugin *p = NULL;
    int32_t ids[2], layer, y;
    prt_status st;
    narrowed = 0;
    REQUIRE_OK(ot_make_op("Add", NULL, 0, &p));
    inner_vt = p->vt;
    core = *inner_vt->core;
    core.devices = narrow_devices;
    build = *inner_vt->build;
    build.configure = narrow_configure;
    vt = *inner_vt;
    vt.core = &core;
    vt.build = &build;
    p->vt = &vt;
    REQUIRE_OK(prt_network_create(&net));
    CHECK_OK(prt_network_add_input(net, "X0", dt, &d, &ids[0]));
    CHECK_OK(prt_network_add_input(net, "X1", dt, &d, &ids[1]));
    CHECK_OK(prt_network_add_plugin(net, ids, 2, NULL, 0, p, &layer));
    CHECK_OK(prt_network_get_layer_output(net, layer, 0, &y));
    CHECK_OK(prt_network_mark_output(net, y));
    CHECK_OK(prt_builder_config_create(&cfg));
    st = prt_engine_build(net, cfg, NULL, &e);
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return st;
}

static int test_builder_narrowing(void)
{
    CHECK_OK(build_narrowing(PRT_FLOAT32));
    CHECK_ERR(build_narrowing(PRT_INT32), PRT_ERR_UNSUPPORTED,
              "plugin Add does not run on the CPU with dtypes (int32, int32) -> int32");
    return 0;
}

/* Every op the shared models' engines hold (bert_small, mobilenet_v3_small
 * after the importer's fusions; `plugrt inspect`) and the rest of the
 * families given CUDA kernels have one. */
static void test_cuda_coverage(void)
{
#ifdef PRT_HAVE_CUDA
    static const char *const ops[] = {"Unsqueeze",
                                      "MatMul",
                                      "Gather",
                                      "Shape",
                                      "Reshape",
                                      "Concat",
                                      "Add",
                                      "Transpose",
                                      "Mul",
                                      "Where",
                                      "LayerNormalization",
                                      "ConstantOfShape",
                                      "Range",
                                      "Expand",
                                      "Equal",
                                      "Softmax",
                                      "IsNaN",
                                      "Gelu",
                                      "And",
                                      "Tanh",
                                      "Slice",
                                      "GreaterOrEqual",
                                      "Gemm",
                                      "GatherElements",
                                      "Flatten",
                                      "Conv",
                                      "HardSwish",
                                      "Relu",
                                      "GlobalAveragePool",
                                      "HardSigmoid",
                                      "Erf",
                                      "Sub",
                                      "Div",
                                      "Mod",
                                      "Max",
                                      "Min",
                                      "Sum",
                                      "Mean",
                                      "PRelu",
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
                                      "Identity",
                                      "Squeeze",
                                      "Size",
                                      "Exp",
                                      "Log",
                                      "Sqrt",
                                      "Sigmoid",
                                      "LogSoftmax"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        prt_plugin *p = NULL;
        if (ot_make_op(ops[i], NULL, 0, &p) != PRT_OK) {
            fprintf(stderr, "%s: %s\n", ops[i], prt_last_error());
            CHECK(!"the op is made");
            continue;
        }
        if (!(p->vt->core->devices(p) & (1u << PRT_DEVICE_CUDA))) {
            fprintf(stderr, "%s has no CUDA kernel\n", ops[i]);
            CHECK(!"a CUDA kernel");
        }
        p->vt->runtime->destroy(p);
    }
    {
        int32_t to = PRT_BOOL;
        prt_field f = ot_fld_i32("to", &to, 1);
        prt_plugin *p = NULL;
        CHECK_OK(ot_make_op("Cast", &f, 1, &p));
        CHECK(p && (p->vt->core->devices(p) & (1u << PRT_DEVICE_CUDA)));
        if (p)
            p->vt->runtime->destroy(p);
    }
#endif
}

int main(void)
{
    tu_rng r;
    tu_rng_seed(&r, 20261203);
    test_numbers();
    test_bcast(&r);
    test_slice_entry(&r);
    (void)test_devices();
    (void)test_builder_narrowing();
    test_cuda_coverage();
    return tu_finish("test_gpu_args");
}
