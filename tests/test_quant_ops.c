/*
 * The quantization ops (issue 30) against a straightforward reference:
 * QuantizeLinear per tensor and per axis, int8 and uint8, saturation and
 * ties (x / scale exactly k + 1/2, which must round to the even k);
 * DequantizeLinear per axis; DynamicQuantizeLinear's parameters; QLinearAdd
 * and QLinearMul under broadcasting. The reference rounds half to even by
 * hand (floor and a comparison), not with the kernels' rintf. Then the
 * errors: a scale that is not positive and finite, a zero point whose dims
 * disagree with the scale's, a scale of the wrong length.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "op_testutil.h"

/* Round half to even by its definition. */
static double ref_round(double v)
{
    const double f = floor(v), d = v - f;
    if (d > 0.5)
        return f + 1.0;
    if (d < 0.5)
        return f;
    return fmod(f, 2.0) == 0.0 ? f : f + 1.0;
}

static double ref_quant(float x, float scale, int zp, int dt)
{
    const double lo = dt == PRT_INT8 ? -128 : 0, hi = dt == PRT_INT8 ? 127 : 255;
    double v;
    if (isnan(x))
        return lo;
    v = ref_round((double)(x / scale)) + zp; /* the division in float, as ORT */
    return v < lo ? lo : v > hi ? hi : v;
}

/* x [2, 3, 4] quantized along `axis` (or per tensor, axis < -9) to dt. */
static void check_quantize(int32_t dt, int32_t axis, tu_rng *r)
{
    const prt_dims d = D3(2, 3, 4);
    const int per_axis = axis > -9;
    const int32_t ax = axis < 0 ? axis + 3 : axis;
    const int64_t ch = per_axis ? d.d[ax] : 1;
    ot_tensor in[3], y = {0};
    prt_field f = ot_fld_i32("axis", &axis, 1);
    double want[24];
    char what[64];
    in[0] = ot_make(PRT_FLOAT32, d);
    in[1] = ot_make(PRT_FLOAT32, per_axis ? D1(ch) : D0());
    in[2] = ot_make(dt, per_axis ? D1(ch) : D0());
    for (int64_t c = 0; c < ch; c++) {
        ot_set(&in[1], c, c % 2 ? 0.25 : 0.5); /* exact quotients: planted ties */
        ot_set(&in[2], c, dt == PRT_INT8 ? (double)(c * 3 - 2) : (double)(c * 7 + 100));
    }
    for (int64_t i = 0; i < 24; i++) {
        int64_t idx[3], c;
        float x;
        ot_unravel(&d, i, idx);
        c = per_axis ? idx[ax] : 0;
        /* Ties k + 1/2 for k both odd and even, values far past the range
         * on both sides, an infinity and NaN, and ordinary values. */
        x = i % 6 == 0   ? (float)((tu_rng_range(r, -40, 40) + 0.5) * ot_get(&in[1], c))
            : i % 6 == 1 ? (float)(tu_rng_range(r, 0, 1) ? 1e4 : -1e4)
            : i == 5     ? INFINITY
            : i == 11    ? NAN
                         : (float)(tu_rng_uniform(r) * 60.0 - 30.0);
        ot_set(&in[0], i, x);
        want[i] = ref_quant(x, (float)ot_get(&in[1], c), (int)ot_get(&in[2], c), dt);
    }
    snprintf(what, sizeof what, "QuantizeLinear %s axis %d",
             dt == PRT_INT8 ? "int8" : "uint8", (int)axis);
    CHECK(ot_run_op("QuantizeLinear", &f, per_axis, in, 3, &y) == PRT_OK);
    CHECK(y.dtype == dt);
    ot_check_close(what, &y, &d, want, 0.0);
    ot_free(&y);
    /* Without a zero point: uint8, zero point 0. */
    if (!per_axis) {
        for (int64_t i = 0; i < 24; i++)
            want[i] = ref_quant((float)ot_get(&in[0], i), (float)ot_get(&in[1], 0), 0,
                                PRT_UINT8);
        CHECK(ot_run_op("QuantizeLinear", NULL, 0, in, 2, &y) == PRT_OK);
        CHECK(y.dtype == PRT_UINT8);
        ot_check_close("QuantizeLinear without a zero point", &y, &d, want, 0.0);
        ot_free(&y);
    }
    for (int k = 0; k < 3; k++)
        ot_free(&in[k]);
}

/* Per axis 1 of [3, 2, 5]: (q - zp[c]) * scale[c]. */
static void check_dequantize(int32_t dt, tu_rng *r)
{
    const prt_dims d = D3(3, 2, 5);
    int32_t axis = 1;
    prt_field f = ot_fld_i32("axis", &axis, 1);
    ot_tensor in[3], y = {0};
    double want[30];
    in[0] = ot_make(dt, d);
    in[1] = ot_make(PRT_FLOAT32, D1(2));
    in[2] = ot_make(dt, D1(2));
    ot_set(&in[1], 0, 0.125);
    ot_set(&in[1], 1, 0.3);
    ot_set(&in[2], 0, dt == PRT_INT8 ? -7 : 9);
    ot_set(&in[2], 1, dt == PRT_INT8 ? 5 : 200);
    for (int64_t i = 0; i < 30; i++) {
        int64_t idx[3];
        ot_unravel(&d, i, idx);
        ot_set(&in[0], i,
               (double)(dt == PRT_INT8 ? tu_rng_range(r, -128, 127)
                                       : tu_rng_range(r, 0, 255)));
        want[i] = (float)((float)(ot_get(&in[0], i) - ot_get(&in[2], idx[1])) *
                          (float)ot_get(&in[1], idx[1]));
    }
    CHECK(ot_run_op("DequantizeLinear", &f, 1, in, 3, &y) == PRT_OK);
    CHECK(y.dtype == PRT_FLOAT32);
    ot_check_close("DequantizeLinear per axis", &y, &d, want, 0.0);
    ot_free(&y);
    for (int k = 0; k < 3; k++)
        ot_free(&in[k]);
}

/* The three outputs of DynamicQuantizeLinear for x in [-3, 5]: scale 8/255,
 * zero point round(3 / scale) = round(95.625) = 96, y by the reference. The
 * harness reads output 0; the parameters are checked through y. */
static void check_dynamic(void)
{
    const float xs[6] = {-3.0f, 5.0f, 0.0f, 1.0f, -1.5f, 2.2f};
    ot_tensor x = ot_make(PRT_FLOAT32, D1(6)), y = {0};
    const float scale = 8.0f / 255.0f;
    double want[6];
    const prt_dims d = D1(6);
    for (int i = 0; i < 6; i++) {
        ot_set(&x, i, xs[i]);
        want[i] =
            ref_quant(xs[i], scale, (int)ref_round(0.0 - (-3.0f / scale)), PRT_UINT8);
    }
    CHECK(ref_round(0.0 - (-3.0f / scale)) == 96.0);
    CHECK(ot_run_op("DynamicQuantizeLinear", NULL, 0, &x, 1, &y) == PRT_OK);
    ot_check_close("DynamicQuantizeLinear y", &y, &d, want, 0.0);
    ot_free(&y);
    ot_free(&x);
}

/* QLinearAdd/Mul of A [2, 3, 4] and B [3, 1] (both sides broadcast). */
static void check_qlinear(const char *op, int32_t dt, tu_rng *r)
{
    const prt_dims da = D3(2, 3, 4), db = D2(3, 1);
    const int mul = strcmp(op, "QLinearMul") == 0;
    const float sa = 0.05f, sb = 0.1f, sc = mul ? 0.2f : 0.15f;
    const int za = dt == PRT_INT8 ? 3 : 128, zb = dt == PRT_INT8 ? -10 : 100,
              zc = dt == PRT_INT8 ? 1 : 120;
    ot_tensor in[8], y = {0};
    double want[24];
    char what[64];
    in[0] = ot_make(dt, da);
    in[3] = ot_make(dt, db);
    in[1] = ot_make(PRT_FLOAT32, D0());
    in[4] = ot_make(PRT_FLOAT32, D0());
    in[6] = ot_make(PRT_FLOAT32, D1(1));
    in[2] = ot_make(dt, D0());
    in[5] = ot_make(dt, D0());
    in[7] = ot_make(dt, D1(1));
    ot_set(&in[1], 0, sa);
    ot_set(&in[4], 0, sb);
    ot_set(&in[6], 0, sc);
    ot_set(&in[2], 0, za);
    ot_set(&in[5], 0, zb);
    ot_set(&in[7], 0, zc);
    for (int64_t i = 0; i < 24; i++)
        ot_set(&in[0], i,
               (double)(dt == PRT_INT8 ? tu_rng_range(r, -128, 127)
                                       : tu_rng_range(r, 0, 255)));
    for (int64_t i = 0; i < 3; i++)
        ot_set(&in[3], i,
               (double)(dt == PRT_INT8 ? tu_rng_range(r, -128, 127)
                                       : tu_rng_range(r, 0, 255)));
    for (int64_t i = 0; i < 24; i++) {
        int64_t idx[3];
        float va, vb;
        ot_unravel(&da, i, idx);
        va = sa * (float)(ot_get(&in[0], i) - za);
        vb = sb * (float)(ot_get(&in[3], idx[1]) - zb);
        want[i] = ref_quant(mul ? va * vb : va + vb, sc, zc, dt);
    }
    snprintf(what, sizeof what, "%s %s", op, dt == PRT_INT8 ? "int8" : "uint8");
    CHECK(ot_run_op(op, NULL, 0, in, 8, &y) == PRT_OK);
    CHECK(y.dtype == dt);
    ot_check_close(what, &y, &da, want, 0.0);
    ot_free(&y);
    /* A scale of 0 fails the run naming it. */
    ot_set(&in[6], 0, 0.0);
    CHECK(ot_run_op(op, NULL, 0, in, 8, &y) != PRT_OK);
    CHECK(strstr(prt_last_error(), "C_scale is 0") != NULL);
    ot_free(&y);
    for (int k = 0; k < 8; k++)
        ot_free(&in[k]);
}

/* Bad scales and zero points end in a clear error. */
static void check_errors(void)
{
    ot_tensor in[3], y = {0};
    int32_t axis = 0;
    prt_field f = ot_fld_i32("axis", &axis, 1);
    const double bad[3] = {0.0, -0.5, NAN};
    in[0] = ot_make(PRT_FLOAT32, D2(3, 2));
    in[1] = ot_make(PRT_FLOAT32, D0());
    in[2] = ot_make(PRT_INT8, D0());
    for (int k = 0; k < 3; k++) {
        ot_set(&in[1], 0, bad[k]);
        CHECK(ot_run_op("QuantizeLinear", NULL, 0, in, 3, &y) != PRT_OK);
        CHECK(strstr(prt_last_error(), "positive and finite") != NULL);
        ot_free(&y);
    }
    /* A per-axis scale of 3 with a zero point of 2. */
    ot_free(&in[1]);
    ot_free(&in[2]);
    in[1] = ot_make(PRT_FLOAT32, D1(3));
    in[2] = ot_make(PRT_INT8, D1(2));
    for (int k = 0; k < 3; k++)
        ot_set(&in[1], k, 1.0);
    CHECK(ot_run_op("QuantizeLinear", &f, 1, in, 3, &y) != PRT_OK);
    CHECK(strstr(prt_last_error(),
                 "zero point's dims [2] disagree with the scale's [3]") != NULL);
    ot_free(&y);
    /* A scale of 3 along an axis of 2. */
    axis = 1;
    ot_free(&in[2]);
    in[2] = ot_make(PRT_INT8, D1(3));
    CHECK(ot_run_op("QuantizeLinear", &f, 1, in, 3, &y) != PRT_OK);
    CHECK(strstr(prt_last_error(), "holds 3 values for x's dim 1 of 2") != NULL);
    ot_free(&y);
    /* A 2-D scale (blocked quantization). */
    ot_free(&in[1]);
    ot_free(&in[2]);
    in[1] = ot_make(PRT_FLOAT32, D2(3, 2));
    in[2] = ot_make(PRT_INT8, D2(3, 2));
    CHECK(ot_run_op("QuantizeLinear", &f, 1, in, 3, &y) != PRT_OK);
    CHECK(strstr(prt_last_error(), "blocked quantization") != NULL);
    ot_free(&y);
    for (int k = 0; k < 3; k++)
        ot_free(&in[k]);
}

int main(void)
{
    tu_rng r;
    tu_rng_seed(&r, 30);
    for (int t = 0; t < 2; t++) {
        const int32_t dt = t ? PRT_INT8 : PRT_UINT8;
        check_quantize(dt, -10, &r);
        check_quantize(dt, 1, &r);
        check_quantize(dt, -1, &r);
        check_quantize(dt, 0, &r);
        check_dequantize(dt, &r);
        check_qlinear("QLinearAdd", dt, &r);
        check_qlinear("QLinearMul", dt, &r);
    }
    check_dynamic();
    check_errors();
    return tu_finish("test_quant_ops");
}
