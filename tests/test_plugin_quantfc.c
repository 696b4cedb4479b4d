/*
 * QuantFC (plugins/quant_fc.c) and tensor quantization in the ABI, through
 * the public API: network (prt_network_set_tensor_quant) -> build -> bytes
 * -> engine -> context -> run on the CPU.
 *  - the integer path (int8 and uint8 x with zero points, per-tensor and
 *    per-channel w, bias, ReLU, float32, int8 and uint8 y): exact against
 *    the kernel's arithmetic on the int32 dot, and within float rounding of
 *    the result from dequantized values (one step of y's scale for an
 *    integer y);
 *  - the float path against the same reference;
 *  - the scales survive the engine file (prt_engine_get_tensor_quant on the
 *    loaded engine), and a damaged QNTZ section is a clean
 *    PRT_ERR_MALFORMED;
 *  - refusals: an int8 x without a scale, with per-channel scales, int8 w
 *    with a zero point (no combination, naming the layer); a scale on a
 *    float tensor (the build names the tensor); bad arguments to
 *    prt_network_set_tensor_quant.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan_bytes.h"
#include "quantfc_case.h"

#define NAME "test_plugin_quantfc"

static prt_status build_cpu(prt_network *net, const prt_registry *reg, prt_engine **built,
                            prt_engine **loaded)
{
    prt_builder_config *cfg = NULL;
    void *bytes = NULL;
    size_t size = 0;
    prt_status st = prt_builder_config_create(&cfg);
    *built = *loaded = NULL;
    if (!st)
        st = prt_engine_build(net, cfg, reg, built);
    if (!st)
        st = prt_engine_serialize(*built, &bytes, &size);
    if (!st)
        st = prt_engine_deserialize(reg, bytes, size, loaded);
    prt_free(bytes);
    prt_builder_config_destroy(cfg);
    return st;
}

static prt_status run_once(prt_engine *e, const void *x, void *y)
{
    prt_context *ctx = NULL;
    prt_status st = prt_context_create(e, &ctx);
    if (!st)
        st = prt_context_set_tensor_address(ctx, "x", (void *)x);
    if (!st)
        st = prt_context_set_tensor_address(ctx, "y", y);
    if (!st)
        st = prt_context_enqueue(ctx, NULL);
    prt_context_destroy(ctx);
    return st;
}

/* One case: build, check the loaded engine's scales, run, compare. */
static int check_case(prt_registry *reg, qfc_case c, uint64_t seed)
{
    prt_network *net = NULL;
    prt_engine *built = NULL, *e = NULL;
    size_t ysize = c.y_dtype == PRT_FLOAT32 ? 4 : 1;
    double *real = NULL;
    void *y = NULL, *exact = NULL;
    int64_t total = c.m * c.n, bad_exact = 0, bad_real = 0;
    REQUIRE(qfc_case_fill(&c, seed) == 0);
    real = malloc(sizeof(double) * (size_t)total);
    y = calloc((size_t)total, ysize);
    exact = calloc((size_t)total, ysize);
    REQUIRE(real && y && exact);
    CHECK_OK(qfc_case_network(&c, reg, &net));
    if (net)
        CHECK_OK(build_cpu(net, reg, &built, &e));
    if (e && c.x_dtype != PRT_FLOAT32) {
        /* The scales as the file gave them back. */
        prt_quant_desc q;
        int32_t n = prt_engine_tensor_count(e);
        int found = 0;
        memset(&q, 0, sizeof q);
        q.struct_size = sizeof q;
        for (int32_t i = 0; i < n; i++) {
            prt_tensor_info info;
            memset(&info, 0, sizeof info);
            info.struct_size = sizeof info;
            CHECK_OK(prt_engine_get_tensor(e, i, &info));
            CHECK_OK(prt_engine_get_tensor_quant(e, i, &q));
            if (strcmp(info.name, "x") == 0) {
                found++;
                CHECK(q.kind == PRT_QUANT_PER_TENSOR && q.count == 1 && q.scale == c.sx &&
                      q.zero_point == c.zx && q.scales[0] == c.sx);
            } else if (strcmp(info.name, "w") == 0) {
                found++;
                CHECK(q.kind ==
                      (c.per_channel ? PRT_QUANT_PER_CHANNEL : PRT_QUANT_PER_TENSOR));
                CHECK(q.count == (c.per_channel ? c.n : 1));
                for (int64_t k = 0; k < q.count; k++)
                    CHECK(q.scales[k] == c.sw[k] && q.zero_points[k] == 0);
            } else if (strcmp(info.name, "b") == 0) {
                CHECK(q.kind == PRT_QUANT_NONE);
            }
        }
        CHECK(found == 2);
    }
    if (e)
        CHECK_OK(run_once(e, c.x, y));
    qfc_case_real(&c, real);
    qfc_case_exact(&c, real, exact);
    for (int64_t i = 0; i < total; i++) {
        double got, want = real[i];
        if (c.y_dtype == PRT_FLOAT32) {
            got = ((float *)y)[i];
            /* Float rounding of the sum: a few ulps of its magnitude. */
            bad_real += fabs(got - want) > 1e-5 * (1.0 + fabs(want)) * sqrt((double)c.k);
            bad_exact +=
                c.x_dtype != PRT_FLOAT32 && ((float *)y)[i] != ((float *)exact)[i];
        } else {
            double lo = c.y_dtype == PRT_INT8 ? -128 : 0,
                   hi = c.y_dtype == PRT_INT8 ? 127 : 255;
            double q = fmin(fmax(nearbyint(want / c.sy) + c.zy, lo), hi);
            got = c.y_dtype == PRT_INT8 ? ((int8_t *)y)[i] : ((uint8_t *)y)[i];
            /* Within one step: a result next to a rounding midpoint may
             * round either way between float and double. */
            bad_real += fabs(got - q) > 1.0;
            if (c.x_dtype != PRT_FLOAT32)
                bad_exact += c.y_dtype == PRT_INT8
                                 ? ((int8_t *)y)[i] != ((int8_t *)exact)[i]
                                 : ((uint8_t *)y)[i] != ((uint8_t *)exact)[i];
        }
    }
    CHECK(bad_real == 0);
    CHECK(bad_exact == 0);
    if (bad_real || bad_exact)
        fprintf(stderr,
                "  case x %s y %s m %lld k %lld n %lld per_channel %d bias %d relu %d: "
                "%lld off the real result, %lld off the exact\n",
                prt_dtype_name(c.x_dtype), prt_dtype_name(c.y_dtype), (long long)c.m,
                (long long)c.k, (long long)c.n, c.per_channel, c.bias, c.relu,
                (long long)bad_real, (long long)bad_exact);
    prt_engine_destroy(e);
    prt_engine_destroy(built);
    prt_network_destroy(net);
    free(real);
    free(y);
    free(exact);
    qfc_case_free(&c);
    return 0;
}

static void grid_case(qfc_case c, uint64_t seed, void *reg)
{
    (void)check_case(reg, c, seed);
}

static void test_cases(prt_registry *reg)
{
    static const int64_t shapes[][3] = {
        {1, 1, 1}, {3, 17, 5}, {8, 64, 33}, {2, 300, 260}};
    qfc_case_grid(shapes, sizeof shapes / sizeof shapes[0], 4, grid_case, reg);
}

/* A build that must fail with `status` and a message holding `sub`. */
static void expect_build_error(prt_registry *reg, prt_network *net, prt_status status,
                               const char *sub)
{
    prt_engine *built = NULL, *e = NULL;
    CHECK_ERR(build_cpu(net, reg, &built, &e), status, sub);
    prt_engine_destroy(e);
    prt_engine_destroy(built);
}

static void test_refusals(prt_registry *reg)
{
    qfc_case c;
    prt_network *net = NULL;
    int32_t x = -1, w = -1, b = -1;
    float scales[2] = {0.5f, 0.25f}, bad[1] = {0.0f}, nan1[1] = {NAN};
    int32_t zps[2] = {3, 0}, far[1] = {300};
    prt_quant_desc q;
    memset(&c, 0, sizeof c);
    c.m = 2;
    c.k = 8;
    c.n = 2;
    c.x_dtype = PRT_INT8;
    c.y_dtype = PRT_FLOAT32;
    if (qfc_case_fill(&c, 99) != 0) {
        CHECK(0);
        return;
    }
    memset(&q, 0, sizeof q);
    q.struct_size = sizeof q;

    /* int8 x whose scale is taken away: the plugin takes no int8 without
     * it, so no combination is found. */
    CHECK_OK(qfc_case_network(&c, reg, &net));
    CHECK_OK(prt_network_find_tensor(net, "x", &x));
    CHECK_OK(prt_network_find_tensor(net, "w", &w));
    CHECK_OK(prt_network_find_tensor(net, "b", &b));
    CHECK_OK(prt_network_set_tensor_quant(net, x, NULL));
    CHECK_OK(prt_network_get_tensor_quant(net, x, &q));
    CHECK(q.kind == PRT_QUANT_NONE);
    expect_build_error(reg, net, PRT_ERR_UNSUPPORTED, "input 0 (int8 without a scale");
    /* Per-channel x: refused too. */
    q.kind = PRT_QUANT_PER_CHANNEL;
    q.axis = 1;
    q.count = 0;
    q.scales = scales;
    CHECK_ERR(prt_network_set_tensor_quant(net, x, &q), PRT_ERR_INVALID_ARGUMENT,
              "1..16777216 scales");
    q.axis = -1;
    q.count = 2;
    CHECK_ERR(prt_network_set_tensor_quant(net, x, &q), PRT_ERR_INVALID_ARGUMENT,
              "axis -1 is not a dim");
    q.axis = 0;
    q.count = 2;
    q.scales = scales;
    q.zero_points = NULL;
    CHECK_OK(prt_network_set_tensor_quant(net, x, &q));
    expect_build_error(reg, net, PRT_ERR_UNSUPPORTED,
                       "input 0 (int8 with per-channel scales");
    /* w with a zero point: the integer path is symmetric in w. */
    q.kind = PRT_QUANT_PER_TENSOR;
    q.axis = -1;
    q.count = 1;
    CHECK_OK(prt_network_set_tensor_quant(net, x, &q));
    q.zero_points = zps;
    CHECK_OK(prt_network_set_tensor_quant(net, w, &q));
    expect_build_error(reg, net, PRT_ERR_UNSUPPORTED,
                       "input 1 (int8 with a per-tensor scale");
    q.zero_points = NULL;
    CHECK_OK(prt_network_set_tensor_quant(net, w, &q));
    /* A scale on the float bias: the build names the tensor. */
    CHECK_OK(prt_network_set_tensor_quant(net, b, &q));
    expect_build_error(reg, net, PRT_ERR_INVALID_ARGUMENT, "tensor 'b'");
    CHECK_OK(prt_network_set_tensor_quant(net, b, NULL));
    /* Per-channel w along a dim of another size. */
    q.kind = PRT_QUANT_PER_CHANNEL;
    q.axis = 1;
    q.count = 2;
    q.scales = scales;
    CHECK_OK(prt_network_set_tensor_quant(net, w, &q));
    expect_build_error(reg, net, PRT_ERR_SHAPE, "tensor 'w'");
    q.axis = 2;
    CHECK_OK(prt_network_set_tensor_quant(net, w, &q));
    expect_build_error(reg, net, PRT_ERR_SHAPE, "rank 2");
    /* Zero points outside the dtype's range (uint8's 200 on int8 x). */
    q.kind = PRT_QUANT_PER_TENSOR;
    q.axis = -1;
    q.count = 1;
    q.zero_points = zps;
    zps[0] = 200;
    CHECK_OK(prt_network_set_tensor_quant(net, x, &q));
    expect_build_error(reg, net, PRT_ERR_INVALID_ARGUMENT, "-128..127");

    /* Arguments refused at once. */
    q.zero_points = NULL;
    q.scales = bad;
    CHECK_ERR(prt_network_set_tensor_quant(net, x, &q), PRT_ERR_INVALID_ARGUMENT, "> 0");
    q.scales = nan1;
    CHECK_ERR(prt_network_set_tensor_quant(net, x, &q), PRT_ERR_INVALID_ARGUMENT, "> 0");
    q.scales = scales;
    q.zero_points = far;
    CHECK_ERR(prt_network_set_tensor_quant(net, x, &q), PRT_ERR_INVALID_ARGUMENT,
              "-128..255");
    q.zero_points = NULL;
    q.count = 2;
    CHECK_ERR(prt_network_set_tensor_quant(net, x, &q), PRT_ERR_INVALID_ARGUMENT,
              "1 scale");
    q.kind = 7;
    CHECK_ERR(prt_network_set_tensor_quant(net, x, &q), PRT_ERR_INVALID_ARGUMENT,
              "kind 7");
    q.kind = PRT_QUANT_PER_TENSOR;
    q.count = 1;
    q.struct_size = 8;
    CHECK_ERR(prt_network_set_tensor_quant(net, x, &q), PRT_ERR_INVALID_ARGUMENT,
              "struct_size");
    q.struct_size = sizeof q;
    CHECK_ERR(prt_network_set_tensor_quant(net, 1000, &q), PRT_ERR_INVALID_ARGUMENT,
              "no tensor");
    CHECK_ERR(prt_network_set_tensor_quant(NULL, 0, &q), PRT_ERR_INVALID_ARGUMENT, NULL);
    prt_network_destroy(net);
    qfc_case_free(&c);
}

/* The QNTZ section damaged in place (checksum fixed): each is refused with
 * PRT_ERR_MALFORMED, and the intact bytes load. */
static void test_damaged_section(prt_registry *reg)
{
    qfc_case c;
    prt_network *net = NULL;
    prt_engine *built = NULL, *e = NULL;
    prt_builder_config *cfg = NULL;
    void *bytes = NULL;
    size_t size = 0, at;
    uint8_t *copy;
    memset(&c, 0, sizeof c);
    c.m = 2;
    c.k = 8;
    c.n = 3;
    c.x_dtype = PRT_INT8;
    c.y_dtype = PRT_INT8;
    c.per_channel = 1;
    if (qfc_case_fill(&c, 7) != 0) {
        CHECK(0);
        return;
    }
    CHECK_OK(qfc_case_network(&c, reg, &net));
    CHECK_OK(prt_builder_config_create(&cfg));
    if (net && cfg)
        CHECK_OK(prt_engine_build(net, cfg, reg, &built));
    if (built)
        CHECK_OK(prt_engine_serialize(built, &bytes, &size));
    copy = bytes ? malloc(size) : NULL;
    at = bytes ? tu_plan_section_at(bytes, TU_TAG('Q', 'N', 'T', 'Z')) : 0;
    CHECK(at != 0);
    if (copy && at) {
        /* Records: u32 count, then i32 tensor, i32 kind, i32 axis, i64
         * count, scales, zero points; three tensors (x, w, y). */
        struct {
            size_t off;
            uint32_t value;
            const char *sub;
        } damage[] = {
            {0, 9, "quantized tensors"},        /* more records than tensors */
            {4, 1000, "out of order or range"}, /* tensor id */
            {8, 9, "unknown quantization kind"},
            {8, 0, "kind 0"},
            {12, 5, "kind 1 with axis 5"}, /* x is per-tensor */
            {16, 0, "scales do not fit"},  /* count 0 */
            {16, 100000, "scales do not fit"},
            {24, 0, "scale 0 is 0"},     /* x's scale */
            {24, 0x7fc00000u, "finite"}, /* NaN */
            {28, 1000, "zero point"},    /* x's zero point */
            {28, 200, "-128..127"},      /* outside int8 */
        };
        for (size_t i = 0; i < sizeof damage / sizeof damage[0]; i++) {
            memcpy(copy, bytes, size);
            tu_put32(copy + at + damage[i].off, damage[i].value);
            tu_plan_fix_crc(copy, size);
            CHECK_ERR(prt_engine_deserialize(reg, copy, size, &e), PRT_ERR_MALFORMED,
                      damage[i].sub);
            prt_engine_destroy(e);
            e = NULL;
        }
        memcpy(copy, bytes, size);
        CHECK_OK(prt_engine_deserialize(reg, copy, size, &e));
        prt_engine_destroy(e);
    }
    free(copy);
    prt_free(bytes);
    prt_engine_destroy(built);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    qfc_case_free(&c);
}

int main(void)
{
    prt_registry *reg = tu_registry_with_plugins();
    if (!reg)
        return tu_finish(NAME);
    test_cases(reg);
    test_refusals(reg);
    test_damaged_section(reg);
    prt_registry_destroy(reg);
    return tu_finish(NAME);
}
