/*
 * Coverage generators of the quantization ops (issue 30): QuantizeLinear,
 * DequantizeLinear, DynamicQuantizeLinear, QLinearAdd and QLinearMul. Every
 * case is exact: the integers (and the dequantized floats) must be the
 * reference's bytes on every device and build, ties (x / scale a half)
 * included, which the cases plant on purpose.
 */
#include <stdio.h>

#include "cov.h"

/* Random values over the whole range of int8, uint8 or int32 (int32 within
 * +-2^20, where float32 holds every value); an 8-bit float's random codes,
 * NaN and infinities included. */
static ot_tensor q_random(cov *c, int32_t dt, prt_dims d)
{
    ot_tensor t = ot_make(dt, d);
    if (dt == PRT_FLOAT8E4M3FN || dt == PRT_FLOAT8E5M2) {
        for (int64_t i = 0; i < tu_volume(&d); i++)
            ((uint8_t *)t.data)[i] = (uint8_t)tu_rng_range(cov_rng(c), 0, 255);
        return t;
    }
    const int64_t lo = dt == PRT_INT8 ? -128 : dt == PRT_UINT8 ? 0 : -(1 << 20);
    const int64_t hi = dt == PRT_INT8 ? 127 : dt == PRT_UINT8 ? 255 : 1 << 20;
    for (int64_t i = 0; i < tu_volume(&d); i++)
        ot_set(&t, i, (double)tu_rng_range(cov_rng(c), lo, hi));
    return t;
}

/* n positive scales (powers of two now and then, so that planted ties are
 * exact), of dtype dt. */
static ot_tensor q_scales(cov *c, int32_t dt, prt_dims d)
{
    ot_tensor t = ot_make(dt, d);
    for (int64_t i = 0; i < tu_volume(&d); i++)
        ot_set(&t, i,
               tu_rng_range(cov_rng(c), 0, 1)
                   ? 1.0 / (double)(1 << tu_rng_range(cov_rng(c), 2, 7))
                   : 0.002 + 0.05 * tu_rng_uniform(cov_rng(c)));
    return t;
}

/* QuantizeLinear: per tensor and per axis (negative axes too), int8,
 * uint8 and 8-bit float zero points (v 6 and 7, saturate 0 and 1) and
 * none, scales as network inputs and as constants; x spans past the range
 * (saturation), with NaN and infinities, and every fifth element is a
 * planted tie (k + 1/2) * scale. */
static void gen_quantize(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 8; v++) {
        oc_case k = {.op = op, .nb = v == 3 ? 2 : 3, .exact = 1};
        const int32_t r = (int32_t)tu_rng_range(cov_rng(c), 1, 4);
        int32_t axis = (int32_t)tu_rng_range(cov_rng(c), 0, r - 1);
        const int per_axis = v == 2 || v == 4 || v == 5 || v == 7;
        prt_dims d = cov_dims(c, r, v == 5), sd = v == 1 ? D1(1) : D0();
        int32_t sat = v == 7;
        prt_field f[2] = {ot_fld_i32("axis", &axis, 1), ot_fld_i32("saturate", &sat, 1)};
        char what[64];
        if (per_axis)
            sd = D1(d.d[axis]);
        if (v == 4)
            axis -= r;
        k.in[0] = cov_random(c, dt, d, 1);
        k.in[1] = q_scales(c, dt, sd);
        for (int64_t i = 0; i < tu_volume(&d); i++) {
            /* Past the range at the smallest scales: saturation. Ties are
             * planted per tensor, where the scale is one. */
            ot_set(&k.in[0], i, ot_get(&k.in[0], i) * 300.0 * ot_get(&k.in[1], 0));
            if (i % 5 == 2 && !per_axis)
                ot_set(&k.in[0], i,
                       ((double)tu_rng_range(cov_rng(c), -200, 200) + 0.5) *
                           ot_get(&k.in[1], 0));
        }
        if (v >= 6) /* an 8-bit float's zero point is 0 */
            k.in[2] = ot_make(v == 6 ? PRT_FLOAT8E4M3FN : PRT_FLOAT8E5M2, sd);
        else if (v != 3)
            k.in[2] = q_random(c, v % 2 ? PRT_INT8 : PRT_UINT8, sd);
        k.role[1] = k.role[2] = v % 2 ? OC_CONST : OC_DATA;
        k.f = f;
        k.nf = per_axis ? 2 : v >= 6 ? 2 : 0;
        snprintf(what, sizeof what, "QuantizeLinear %s%s%s",
                 per_axis ? "per axis" : "per tensor", v == 3 ? ", no zero point" : "",
                 v == 6   ? ", float8e4m3fn"
                 : v == 7 ? ", float8e5m2"
                          : "");
        cov_case(c, what, &k);
    }
}

/* DequantizeLinear: per tensor and per axis, float32 and float16 scales,
 * with and without a zero point (int32: zero point 0 or none). */
static void gen_dequantize(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 5; v++) {
        oc_case k = {.op = op, .nb = v == 3 ? 2 : 3, .exact = 1};
        const int32_t r = (int32_t)tu_rng_range(cov_rng(c), 1, 4);
        int32_t axis = (int32_t)tu_rng_range(cov_rng(c), 0, r - 1);
        const int per_axis = v == 2 || v == 4;
        prt_dims d = cov_dims(c, r, v == 4), sd = v == 1 ? D1(1) : D0();
        prt_field f = ot_fld_i32("axis", &axis, 1);
        char what[64];
        if (per_axis)
            sd = D1(d.d[axis]);
        k.in[0] = q_random(c, dt, d);
        k.in[1] = q_scales(c, v == 1 ? PRT_FLOAT16 : PRT_FLOAT32, sd);
        if (v != 3) /* int32's and 8-bit floats' zero point is 0 */
            k.in[2] = dt == PRT_INT32 || dt == PRT_FLOAT8E4M3FN || dt == PRT_FLOAT8E5M2
                          ? ot_make(dt, sd)
                          : q_random(c, dt, sd);
        k.role[1] = k.role[2] = v % 2 ? OC_CONST : OC_DATA;
        if (per_axis) {
            k.f = &f;
            k.nf = 1;
        }
        snprintf(what, sizeof what, "DequantizeLinear %s%s%s",
                 per_axis ? "per axis" : "per tensor", v == 1 ? ", float16 scale" : "",
                 v == 3 ? ", no zero point" : "");
        cov_case(c, what, &k);
    }
}

/* DynamicQuantizeLinear: ranges on both sides of 0, one side only, all
 * zeros, empty. */
static void gen_dynamic(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 5; v++) {
        oc_case k = {.op = op, .nb = 1, .nb_out = 3, .exact = 1};
        prt_dims d = cov_dims(c, (int32_t)tu_rng_range(cov_rng(c), 1, 4), v == 4);
        char what[64];
        k.in[0] = cov_random(c, dt, d, 0);
        for (int64_t i = 0; i < tu_volume(&d); i++) {
            const double x = ot_get(&k.in[0], i) * 7.0;
            ot_set(&k.in[0], i, v == 1 ? x * x : v == 2 ? -x * x : v == 3 ? 0.0 : x);
        }
        snprintf(what, sizeof what, "DynamicQuantizeLinear case %d", v);
        cov_case(c, what, &k);
    }
}

/* QLinearAdd and QLinearMul over every broadcast kind, scales and zero
 * points as inputs and as constants, C_zero_point absent now and then. */
static void gen_qlinear(cov *c, const char *op, int32_t dt)
{
    for (int kind = 0; kind < OC_BCAST_KINDS; kind++) {
        oc_case k = {.op = op, .nb = kind == 3 ? 7 : 8, .exact = 1};
        prt_dims a, b;
        char what[64];
        oc_bcast_pair(cov_rng(c), kind, &a, &b);
        k.in[0] = q_random(c, dt, a);
        k.in[3] = q_random(c, dt, b);
        for (int32_t s = 1; s < k.nb; s++) {
            if (s == 3)
                continue;
            if (s == 1 || s == 4 || s == 6)
                k.in[s] = q_scales(c, PRT_FLOAT32, kind == 2 ? D1(1) : D0());
            else
                k.in[s] = q_random(c, dt, D0());
            k.role[s] = kind % 2 ? OC_CONST : OC_DATA;
        }
        snprintf(what, sizeof what, "%s broadcast kind %d", op, kind);
        cov_case(c, what, &k);
    }
}

/* LookupTable8: a random table, output int8 or uint8 (the field) and the
 * default (x's); sizes past 64 with a tail (the VBMI loop's 64 bytes and its
 * masked rest) and size 0. Exact: the reference is the plain loop
 * (cpu_force_baseline). */
static void gen_lookup_table8(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 4; v++) {
        oc_case k = {.op = op, .nb = 1, .exact = 1};
        static uint8_t table[256];
        int32_t odt = v == 0 ? -1 : v % 2 ? PRT_INT8 : PRT_UINT8;
        prt_dims d = v == 3 ? D2(3, 131) : cov_dims(c, 1 + v % 3, v == 2);
        prt_field f[2] = {{"table", table, PRT_FIELD_BYTES, 256},
                          ot_fld_i32("output_dtype", &odt, 1)};
        char what[64];
        for (int i = 0; i < 256; i++)
            table[i] = (uint8_t)tu_rng_range(cov_rng(c), 0, 255);
        k.in[0] = q_random(c, dt, d);
        k.f = f;
        k.nf = 2;
        snprintf(what, sizeof what, "%s output dtype %d", op, (int)odt);
        cov_case(c, what, &k);
    }
}

const cov_entry cov_quant_entries[] = {
    {"QuantizeLinear", gen_quantize},
    {"DequantizeLinear", gen_dequantize},
    {"DynamicQuantizeLinear", gen_dynamic},
    {"QLinearAdd", gen_qlinear},
    {"QLinearMul", gen_qlinear},
    {"LookupTable8", gen_lookup_table8},
    {NULL, NULL},
};
