/*
 * The built-in ops with CUDA kernels (Relu, Identity, Transpose, Einsum,
 * Conv, MatMul) against their CPU kernels (ctest -L cuda): random shapes
 * (odd sizes, sizes 1 and 0 where legal), every dtype the kernels take,
 * outputs poisoned before each run so an unwritten element fails. Each case
 * is a one-op engine built for each device and loaded back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_testutil.h"

/* X0.. -> op -> Y, static dims, built for `device` and reloaded. */
static prt_engine *build_on(int32_t device, const char *name, const prt_field *f,
                            int32_t nf, const ot_tensor *in, int32_t nb_in)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL, *r = NULL;
    prt_plugin *p = NULL;
    int32_t ids[OT_MAXIN], layer, y;
    char nm[16];
    if (prt_network_create(&net) != PRT_OK)
        return NULL;
    for (int32_t i = 0; i < nb_in; i++) {
        snprintf(nm, sizeof nm, "X%d", (int)i);
        CHECK_OK(prt_network_add_input(net, nm, in[i].dtype, &in[i].dims, &ids[i]));
    }
    CHECK_OK(ot_make_op(name, f, nf, &p));
    if (p && prt_network_add_plugin(net, ids, nb_in, NULL, 0, p, &layer) == PRT_OK) {
        CHECK_OK(prt_network_get_layer_output(net, layer, 0, &y));
        CHECK_OK(prt_network_set_tensor_name(net, y, "Y"));
        CHECK_OK(prt_network_mark_output(net, y));
        CHECK_OK(prt_builder_config_create(&cfg));
        CHECK_OK(prt_builder_config_set_device(cfg, device));
        CHECK_OK(prt_engine_build(net, cfg, NULL, &e));
    } else if (p) {
        p->vt->runtime->destroy(p);
    }
    if (e)
        CHECK_OK(ot_reload(e, &r));
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return r;
}

/* Runs a CUDA engine: inputs copied to the device, Y poisoned, run, Y back. */
static int run_cuda(prt_engine *e, const ot_tensor *in, int32_t nb_in, ot_tensor *out)
{
    prt_context *ctx = NULL;
    void *dx[OT_MAXIN] = {0}, *dy = NULL, *s = NULL;
    prt_dims yd;
    size_t ybytes;
    char nm[16];
    int ok = 0;
    REQUIRE_OK(prt_context_create(e, &ctx));
    REQUIRE_OK(prt_stream_create(PRT_DEVICE_CUDA, &s));
    for (int32_t i = 0; i < nb_in; i++) {
        size_t n = (size_t)tu_volume(&in[i].dims) * prt_dtype_size(in[i].dtype);
        snprintf(nm, sizeof nm, "X%d", (int)i);
        CHECK_OK(prt_device_malloc(PRT_DEVICE_CUDA, n, &dx[i]));
        CHECK_OK(prt_device_memcpy(PRT_DEVICE_CUDA, dx[i], in[i].data, n,
                                   PRT_MEMCPY_HOST_TO_DEVICE, s));
        CHECK_OK(prt_context_set_tensor_address(ctx, nm, dx[i]));
    }
    if (prt_context_get_tensor_shape(ctx, "Y", &yd) == PRT_OK) {
        prt_io_info io = {.struct_size = sizeof io};
        int32_t k = -1;
        CHECK_OK(prt_engine_find_io(e, "Y", &k));
        CHECK_OK(prt_engine_get_io(e, k, &io));
        *out = ot_make(io.dtype, yd);
        ybytes = (size_t)tu_volume(&yd) * prt_dtype_size(io.dtype);
        CHECK_OK(prt_device_malloc(PRT_DEVICE_CUDA, ybytes, &dy));
        CHECK_OK(prt_device_memset(PRT_DEVICE_CUDA, dy, 0xff, ybytes, s));
        CHECK_OK(prt_context_set_tensor_address(ctx, "Y", dy));
        if (prt_context_enqueue(ctx, s) == PRT_OK &&
            prt_device_memcpy(PRT_DEVICE_CUDA, out->data, dy, ybytes,
                              PRT_MEMCPY_DEVICE_TO_HOST, s) == PRT_OK &&
            prt_stream_synchronize(PRT_DEVICE_CUDA, s) == PRT_OK)
            ok = 1;
        CHECK(ok);
    }
    for (int32_t i = 0; i < nb_in; i++)
        prt_device_free(PRT_DEVICE_CUDA, dx[i]);
    prt_device_free(PRT_DEVICE_CUDA, dy);
    prt_stream_destroy(PRT_DEVICE_CUDA, s);
    prt_context_destroy(ctx);
    return ok ? 0 : 1;
}

static int cases, failures_before;

/* One case: the op on the CPU (reference) and on CUDA, compared. */
static void compare(const char *what, const char *name, const prt_field *f, int32_t nf,
                    const ot_tensor *in, int32_t nb_in, double rtol)
{
    ot_tensor want = {0}, got = {0};
    prt_engine *ge;
    double *ref;
    cases++;
    if (ot_run_op(name, f, nf, in, nb_in, &want) != PRT_OK) {
        printf("%s: the CPU rejects the case: %s\n", what, prt_last_error());
        CHECK(!"CPU reference runs");
        return;
    }
    ge = build_on(PRT_DEVICE_CUDA, name, f, nf, in, nb_in);
    CHECK(ge != NULL);
    if (ge && run_cuda(ge, in, nb_in, &got) == 0) {
        int64_t n = tu_volume(&want.dims);
        ref = malloc(sizeof(double) * (size_t)(n + 1));
        for (int64_t i = 0; ref && i < n; i++)
            ref[i] = ot_get(&want, i);
        if (ref)
            ot_check_close(what, &got, &want.dims, ref, rtol);
        free(ref);
    }
    prt_engine_destroy(ge);
    ot_free(&want);
    ot_free(&got);
}

static void test_relu(tu_rng *r)
{
    static const int32_t dts[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16,
                                  PRT_INT8,    PRT_INT32,   PRT_INT64};
    static const int64_t sizes[] = {1, 7, 1000, 65537, 0};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            ot_tensor x = ot_random(dts[d], D2(sizes[k], 3), r, 0);
            char what[64];
            snprintf(what, sizeof what, "Relu %s [%lld, 3]", prt_dtype_name(dts[d]),
                     (long long)sizes[k]);
            compare(what, "Relu", NULL, 0, &x, 1, 0);
            compare(what, "Identity", NULL, 0, &x, 1, 0);
            ot_free(&x);
        }
}

static void test_transpose(tu_rng *r)
{
    static const int32_t dts[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_INT8, PRT_INT64};
    for (int t = 0; t < 24; t++) {
        int32_t rank = 1 + (int32_t)tu_rng_range(r, 0, 5), perm[8];
        int64_t d[6];
        prt_dims dims;
        prt_field f;
        ot_tensor x;
        char what[96];
        for (int32_t i = 0; i < rank; i++) {
            d[i] = tu_rng_range(r, 1, 9);
            perm[i] = i;
        }
        for (int32_t i = rank - 1; i > 0; i--) {
            int32_t j = (int32_t)tu_rng_range(r, 0, i), tmp = perm[i];
            perm[i] = perm[j];
            perm[j] = tmp;
        }
        dims = tu_dims(rank, d);
        x = ot_random(dts[t % 4], dims, r, 0);
        f = ot_fld_i32("perm", perm, rank);
        snprintf(what, sizeof what, "Transpose %s rank %d case %d",
                 prt_dtype_name(dts[t % 4]), (int)rank, t);
        compare(what, "Transpose", &f, 1, &x, 1, 0);
        ot_free(&x);
    }
}

static void test_einsum(tu_rng *r)
{
    static const struct {
        const char *eq;
        int nb;
        prt_dims d[2];
    } cs[] = {
        {"ij,ij->i", 2, {{2, {5, 32}}, {2, {5, 32}}}},
        {"ij,jk->ik", 2, {{2, {7, 9}}, {2, {9, 3}}}},
        {"bij,bjk->bik", 2, {{3, {2, 4, 5}}, {3, {2, 5, 6}}}},
        {"ii->i", 1, {{2, {6, 6}}}},
        {"ij->ji", 1, {{2, {3, 8}}}},
        {"ij->", 1, {{2, {4, 33}}}},
    };
    static const int32_t dts[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_INT32, PRT_INT64};
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++)
        for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
            ot_tensor x[2];
            prt_field f = ot_fld_str("equation", cs[c].eq);
            char what[96];
            for (int k = 0; k < cs[c].nb; k++)
                x[k] = ot_random(dts[d], cs[c].d[k], r, 0);
            snprintf(what, sizeof what, "Einsum %s %s", cs[c].eq, prt_dtype_name(dts[d]));
            compare(what, "Einsum", &f, 1, x, cs[c].nb,
                    dts[d] == PRT_FLOAT16 ? 2e-3 : 1e-6);
            for (int k = 0; k < cs[c].nb; k++)
                ot_free(&x[k]);
        }
}

static void test_conv(tu_rng *r)
{
    for (int t = 0; t < 20; t++) {
        int32_t g = t % 3 == 0 ? 2 : 1, cg = (int32_t)tu_rng_range(r, 1, 4);
        int32_t mg = (int32_t)tu_rng_range(r, 1, 3), k0 = (int32_t)tu_rng_range(r, 1, 3);
        int32_t k1 = (int32_t)tu_rng_range(r, 1, 3), s[2], dl[2], pads[4];
        int64_t h = tu_rng_range(r, 3, 17), w = tu_rng_range(r, 3, 17);
        int32_t dt = t % 4 == 3 ? PRT_FLOAT16 : PRT_FLOAT32;
        static const char *const acts[] = {"",     "Relu",        "LeakyRelu",
                                           "Clip", "HardSigmoid", "HardSwish"};
        static const float params[2] = {-0.25f, 0.5f};
        const char *act = acts[t % 6];
        ot_tensor in[3];
        prt_field f[6];
        char what[160];
        int nb = t % 2 ? 3 : 2, nf = 4;
        s[0] = (int32_t)tu_rng_range(r, 1, 2);
        s[1] = (int32_t)tu_rng_range(r, 1, 2);
        dl[0] = (int32_t)tu_rng_range(r, 1, 2);
        dl[1] = (int32_t)tu_rng_range(r, 1, 2);
        for (int i = 0; i < 4; i++)
            pads[i] = (int32_t)tu_rng_range(r, 0, 2);
        in[0] = ot_random(dt, D4(tu_rng_range(r, 1, 2), g * cg, h, w), r, 0);
        in[1] = ot_random(dt, D4(g * mg, cg, k0, k1), r, 0);
        in[2] = ot_random(dt, D1(g * mg), r, 0);
        f[0] = ot_fld_i32("group", &g, 1);
        f[1] = ot_fld_i32("strides", s, 2);
        f[2] = ot_fld_i32("dilations", dl, 2);
        f[3] = ot_fld_i32("pads", pads, 4);
        /* The importer's fused activations (fields activation and
         * activation_params), each against the CPU's. */
        if (act[0])
            f[nf++] = ot_fld_str("activation", act);
        if (t % 6 == 2 || t % 6 == 3) {
            f[nf] = ot_fld_f32("activation_params", params);
            f[nf++].length = t % 6 == 3 ? 2 : 1;
        }
        snprintf(what, sizeof what,
                 "Conv %s case %d (g %d, k %dx%d, s %d,%d, d %d,%d, activation '%s')",
                 prt_dtype_name(dt), t, (int)g, (int)k0, (int)k1, (int)s[0], (int)s[1],
                 (int)dl[0], (int)dl[1], act);
        compare(what, "Conv", f, nf, in, nb, dt == PRT_FLOAT16 ? 4e-3 : 1e-5);
        for (int i = 0; i < 3; i++)
            ot_free(&in[i]);
    }
}

static void test_matmul(tu_rng *r)
{
    static const struct {
        prt_dims a, b;
    } cs[] = {
        {{2, {8, 32}}, {2, {32, 64}}},
        {{2, {1, 1}}, {2, {1, 1}}},
        {{3, {3, 5, 7}}, {2, {7, 4}}},
        {{3, {3, 5, 7}}, {3, {3, 7, 4}}},
        {{4, {2, 1, 5, 6}}, {3, {3, 6, 2}}},
        {{1, {9}}, {2, {9, 5}}},
        {{2, {4, 9}}, {1, {9}}},
        {{2, {0, 9}}, {2, {9, 5}}},
        {{2, {130, 257}}, {2, {257, 129}}},
    };
    static const int32_t dts[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16};
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++)
        for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
            ot_tensor x[2];
            char what[96];
            x[0] = ot_random(dts[d], cs[c].a, r, 0);
            x[1] = ot_random(dts[d], cs[c].b, r, 0);
            snprintf(what, sizeof what, "MatMul %s case %d", prt_dtype_name(dts[d]),
                     (int)c);
            /* cuBLAS sums in another order (and may use TF32-free FMAs). */
            compare(what, "MatMul", NULL, 0, x, 2, dts[d] == PRT_FLOAT32 ? 1e-4 : 1e-2);
            ot_free(&x[0]);
            ot_free(&x[1]);
        }
    /* The bias input (the importer's MatMul + Add), added by a kernel of
     * its own after cuBLAS. */
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (int c = 0; c < 3; c++) {
            static const prt_dims a[3] = {{3, {3, 5, 7}}, {2, {130, 257}}, {1, {9}}};
            static const prt_dims b[3] = {{2, {7, 4}}, {2, {257, 129}}, {2, {9, 5}}};
            static const prt_dims bias[3] = {{1, {4}}, {2, {1, 129}}, {1, {5}}};
            ot_tensor x[3];
            char what[96];
            x[0] = ot_random(dts[d], a[c], r, 0);
            x[1] = ot_random(dts[d], b[c], r, 0);
            x[2] = ot_random(dts[d], bias[c], r, 0);
            snprintf(what, sizeof what, "MatMul with bias %s case %d",
                     prt_dtype_name(dts[d]), c);
            compare(what, "MatMul", NULL, 0, x, 3, dts[d] == PRT_FLOAT32 ? 1e-4 : 1e-2);
            for (int k = 0; k < 3; k++)
                ot_free(&x[k]);
        }
}

int main(void)
{
    tu_rng r;
    tu_require_cuda("test_cuda_ops");
    tu_rng_seed(&r, 20261201);
    failures_before = tu_failures;
    test_relu(&r);
    test_transpose(&r);
    test_einsum(&r);
    test_conv(&r);
    test_matmul(&r);
    printf("test_cuda_ops: %d cases\n", cases);
    return tu_finish("test_cuda_ops");
}
