/*
 * The 8-bit floats (PRT_FLOAT8E4M3FN, PRT_FLOAT8E5M2; base/fp8.h) against
 * a reference written from the formats' definitions, not from the code
 * under test: every one of the 256 codes decoded by sign * 2^e * (1 + m/2^M)
 * (subnormals and NaN/inf codes by hand), and encoding by brute force, the
 * nearest of all finite codes with ties to the even code, over every code's
 * value, every midpoint between neighbours (the ties), a float32 ulp either
 * side of each, values past the range, infinities, NaN and float32
 * subnormals, with saturate 0 and 1. Then the ops: QuantizeLinear (per
 * tensor and per axis) and DequantizeLinear with 8-bit floats, Cast both
 * ways, and the errors (a non-zero 8-bit float zero point).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "op_testutil.h"

typedef struct fmt {
    int32_t dtype;
    int mbits, bias;
    double max, beyond;              /* the largest finite and the next step past it */
    uint8_t max_code, overflow_code; /* overflow_code: without saturate */
} fmt;

static const fmt formats[2] = {
    {PRT_FLOAT8E4M3FN, 3, 7, 448.0, 480.0, 0x7e, 0x7f},
    {PRT_FLOAT8E5M2, 2, 15, 57344.0, 65536.0, 0x7b, 0x7c},
};

static int ref_is_nan(const fmt *f, uint8_t c)
{
    return f->dtype == PRT_FLOAT8E4M3FN ? (c & 0x7f) == 0x7f : (c & 0x7f) > 0x7c;
}

static double ref_decode(const fmt *f, uint8_t c)
{
    const int e = (c & 0x7f) >> f->mbits, m = c & ((1 << f->mbits) - 1);
    const double s = c & 0x80 ? -1.0 : 1.0;
    if (ref_is_nan(f, c))
        return NAN;
    if (f->dtype == PRT_FLOAT8E5M2 && (c & 0x7f) == 0x7c)
        return s * INFINITY;
    if (e == 0)
        return s * ldexp((double)m, 1 - f->bias - f->mbits);
    return s * ldexp(1.0 + ldexp((double)m, -f->mbits), e - f->bias);
}

/* x as the format by brute force over the finite codes. */
static uint8_t ref_encode(const fmt *f, float x, int saturate)
{
    const double a = fabs((double)x);
    const uint8_t sign = signbit(x) ? 0x80 : 0;
    uint8_t best = 0;
    double bd = INFINITY;
    if (isnan(x))
        return sign | 0x7f;
    if (isinf(x))
        return sign | (saturate ? f->max_code : f->overflow_code);
    for (int c = 0; c <= f->max_code; c++) {
        const double d = fabs(ref_decode(f, (uint8_t)c) - a);
        if (d < bd || (d == bd && !(c & 1))) {
            best = (uint8_t)c;
            bd = d;
        }
    }
    /* Past the largest finite, the next step (`beyond`) is a candidate
     * too: nearer to it (or a tie with an even code there) overflows. */
    {
        const double d = fabs(f->beyond - a);
        const int beyond_even = !((f->max_code + 1) & 1);
        if (a >= f->beyond || d < bd || (d == bd && beyond_even)) {
            /* ONNX Runtime's E4M3FN: [480, 496) without saturate is 448 */
            if (saturate || (f->dtype == PRT_FLOAT8E4M3FN && a >= 480.0 && a < 496.0))
                return sign | f->max_code;
            return sign | f->overflow_code;
        }
    }
    return sign | best;
}

static int same_code(const fmt *f, uint8_t a, uint8_t b)
{
    return a == b || (ref_is_nan(f, a) && ref_is_nan(f, b) && (a & 0x80) == (b & 0x80));
}

static void check_decode(const fmt *f)
{
    for (int c = 0; c < 256; c++) {
        const double want = ref_decode(f, (uint8_t)c);
        const float got = prt_fp8_to_float(f->dtype, (uint8_t)c);
        const int ok = isnan(want) ? isnan(got) && !signbit(got) == !(c & 0x80)
                                   : (double)got == want && !signbit(got) == !(c & 0x80);
        if (!ok)
            fprintf(stderr, "%s code 0x%02x: got %g, want %g\n", prt_dtype_name(f->dtype),
                    c, (double)got, want);
        CHECK(ok);
    }
}

static int encode_one(const fmt *f, float x, int saturate)
{
    const uint8_t want = ref_encode(f, x, saturate);
    const uint8_t got = prt_float_to_fp8(f->dtype, x, saturate);
    if (same_code(f, got, want))
        return 1;
    fprintf(stderr, "%s of %.9g (saturate %d): got 0x%02x, want 0x%02x\n",
            prt_dtype_name(f->dtype), (double)x, saturate, got, want);
    return 0;
}

static void check_encode(const fmt *f, tu_rng *r)
{
    int bad = 0, n = 0;
    float extra[] = {INFINITY,
                     -INFINITY,
                     NAN,
                     -NAN,
                     0.0f,
                     -0.0f,
                     1e-45f,
                     -1e-40f,
                     1e30f,
                     -1e30f,
                     (float)f->max * 4.0f,
                     464.0f,
                     480.0f,
                     495.9f,
                     496.0f,
                     61440.0f,
                     61439.99f,
                     65536.0f,
                     -57344.0f};
    for (int s = 0; s < 2; s++) {
        for (size_t k = 0; k < sizeof extra / sizeof extra[0]; k++, n++)
            bad += !encode_one(f, extra[k], s);
        for (int c = 0; c < 256; c++) {
            const double v = ref_decode(f, (uint8_t)c);
            double next;
            float mid;
            if (isnan(v) || isinf(v))
                continue;
            bad += !encode_one(f, (float)v, s);
            /* the midpoint to the next code up (or past the largest) */
            next = (c & 0x7f) == f->max_code ? (c & 0x80 ? -f->beyond : f->beyond)
                                             : ref_decode(f, (uint8_t)(c + 1));
            mid = (float)((v + next) / 2); /* exact: a few bits each */
            bad += !encode_one(f, mid, s);
            bad += !encode_one(f, nextafterf(mid, INFINITY), s);
            bad += !encode_one(f, nextafterf(mid, -INFINITY), s);
            n += 4;
        }
        for (int k = 0; k < 20000; k++, n++) {
            /* random magnitudes across and past the range */
            const double e = tu_rng_uniform(r) * 44.0 - 26.0;
            const float x = (float)((tu_rng_range(r, 0, 1) ? 1 : -1) * pow(2.0, e));
            bad += !encode_one(f, x, s);
        }
    }
    CHECK(bad == 0);
    CHECK(n > 20000);
}

/* QuantizeLinear to f per tensor and along axis 1 of [2, 3, 4], then
 * DequantizeLinear back; Cast both ways with saturate 0. */
static void check_ops(const fmt *f, tu_rng *r)
{
    const prt_dims d = D3(2, 3, 4);
    for (int per_axis = 0; per_axis < 2; per_axis++)
        for (int32_t sat = 0; sat < 2; sat++) {
            int32_t axis = 1;
            prt_field fl[2] = {ot_fld_i32("axis", &axis, 1),
                               ot_fld_i32("saturate", &sat, 1)};
            ot_tensor in[3], y = {0}, z = {0};
            double want[24], back[24];
            const int64_t ch = per_axis ? 3 : 1;
            in[0] = ot_make(PRT_FLOAT32, d);
            in[1] = ot_make(PRT_FLOAT32, per_axis ? D1(3) : D0());
            in[2] = ot_make(f->dtype, per_axis ? D1(3) : D0());
            for (int64_t c = 0; c < ch; c++) {
                ot_set(&in[1], c, c == 1 ? 0.03 : 2.5);
                ((uint8_t *)in[2].data)[c] = c == 2 ? 0x80 : 0; /* -0 is a zero too */
            }
            for (int64_t i = 0; i < 24; i++) {
                int64_t idx[3];
                const double x = i == 7    ? 1e6
                                 : i == 8  ? -INFINITY
                                 : i == 13 ? NAN
                                           : tu_rng_uniform(r) * 600.0 - 300.0;
                float s;
                uint8_t q;
                ot_unravel(&d, i, idx);
                ot_set(&in[0], i, x);
                s = (float)ot_get(&in[1], per_axis ? idx[1] : 0);
                q = ref_encode(f, (float)x / s, sat);
                want[i] = ref_decode(f, q);
                back[i] = (double)(float)(want[i] * s);
            }
            CHECK(ot_run_op("QuantizeLinear", fl, 2, in, 3, &y) == PRT_OK);
            CHECK(y.dtype == f->dtype);
            ot_check_close("QuantizeLinear to fp8", &y, &d, want, 0.0);
            /* DequantizeLinear with and without the zero point */
            if (y.data) {
                ot_tensor dq[3] = {y, in[1], in[2]};
                CHECK(ot_run_op("DequantizeLinear", fl, 1, dq, 3, &z) == PRT_OK);
                ot_check_close("DequantizeLinear from fp8", &z, &d, back, 0.0);
                ot_free(&z);
                CHECK(ot_run_op("DequantizeLinear", fl, 1, dq, 2, &z) == PRT_OK);
                ot_check_close("DequantizeLinear from fp8, no zero point", &z, &d, back,
                               0.0);
                ot_free(&z);
            }
            ot_free(&y);
            /* Cast float32 -> fp8 -> float16 */
            {
                int32_t to = f->dtype, to16 = PRT_FLOAT16;
                prt_field cf[2] = {ot_fld_i32("to", &to, 1),
                                   ot_fld_i32("saturate", &sat, 1)};
                prt_field cb = ot_fld_i32("to", &to16, 1);
                double w[24], w16[24];
                for (int64_t i = 0; i < 24; i++) {
                    w[i] = ref_decode(f, ref_encode(f, (float)ot_get(&in[0], i), sat));
                    w16[i] = prt_half_to_float(prt_float_to_half((float)w[i]));
                }
                CHECK(ot_run_op("Cast", cf, 2, in, 1, &y) == PRT_OK);
                CHECK(y.dtype == f->dtype);
                ot_check_close("Cast to fp8", &y, &d, w, 0.0);
                if (y.data) {
                    CHECK(ot_run_op("Cast", &cb, 1, &y, 1, &z) == PRT_OK);
                    CHECK(z.dtype == PRT_FLOAT16);
                    ot_check_close("Cast from fp8", &z, &d, w16, 0.0);
                    ot_free(&z);
                }
                ot_free(&y);
            }
            for (int k = 0; k < 3; k++)
                ot_free(&in[k]);
        }
}

static void check_errors(const fmt *f)
{
    ot_tensor in[3], y = {0};
    in[0] = ot_make(PRT_FLOAT32, D1(4));
    in[1] = ot_make(PRT_FLOAT32, D0());
    in[2] = ot_make(f->dtype, D0());
    for (int i = 0; i < 4; i++)
        ot_set(&in[0], i, i);
    ot_set(&in[1], 0, 1.0);
    ot_set(&in[2], 0, 1.0);
    CHECK_ERR(ot_run_op("QuantizeLinear", NULL, 0, in, 3, &y), PRT_ERR_INVALID_ARGUMENT,
              "must be 0");
    ot_free(&y);
    CHECK(isnan(prt_fp8_to_float(PRT_INT8, 0)));
    CHECK(prt_float_to_fp8(PRT_FLOAT32, 1.0f, 1) == 0);
    for (int k = 0; k < 3; k++)
        ot_free(&in[k]);
}

int main(void)
{
    tu_rng r;
    tu_rng_seed(&r, 8);
    CHECK(prt_dtype_size(PRT_FLOAT8E4M3FN) == 1 && prt_dtype_size(PRT_FLOAT8E5M2) == 1);
    CHECK(strcmp(prt_dtype_name(PRT_FLOAT8E5M2), "float8e5m2") == 0);
    for (int k = 0; k < 2; k++) {
        check_decode(&formats[k]);
        check_encode(&formats[k], &r);
        check_ops(&formats[k], &r);
        check_errors(&formats[k]);
    }
    return tu_finish("test_fp8");
}
