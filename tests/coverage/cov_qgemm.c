/*
 * Coverage cases of the integer products (src/ops/qlinear.h):
 * MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv. Bytes over their
 * whole range, B's (W's) dtype the other or the same as the key dtype,
 * zero points at the ends of their ranges and per row / column / channel,
 * B and W constants (packed once on the CPU) and inputs, sizes across the
 * kernel's tiles (8 x 32) and panels (16), K not a multiple of 4, and
 * batches. Sums are exact and the requantization the same float
 * operations on every device, so outputs compare exactly.
 */
#include <string.h>

#include "base/base.h"
#include "coverage/cov.h"

static int64_t rnd(cov *c, int64_t lo, int64_t hi)
{
    return tu_rng_range(cov_rng(c), lo, hi);
}

static ot_tensor q_bytes(cov *c, int32_t dt, prt_dims d)
{
    ot_tensor t = ot_make(dt, d);
    for (int64_t i = 0; t.data && i < base_volume(&d); i++)
        ((uint8_t *)t.data)[i] = (uint8_t)rnd(c, 0, 255);
    return t;
}

/* Zero points: the range's ends now and then. */
static ot_tensor q_zp(cov *c, int32_t dt, prt_dims d)
{
    ot_tensor t = q_bytes(c, dt, d);
    for (int64_t i = 0; t.data && i < base_volume(&d); i++)
        if (rnd(c, 0, 3) == 0)
            ((uint8_t *)t.data)[i] = rnd(c, 0, 1) ? 0x7f : 0x80; /* 127/-128, 127/128 */
        else if (rnd(c, 0, 3) == 0)
            ((uint8_t *)t.data)[i] = rnd(c, 0, 1) ? 0xff : 0x00;
    return t;
}

static ot_tensor q_scale(cov *c, prt_dims d, double lo, double hi)
{
    ot_tensor t = ot_make(PRT_FLOAT32, d);
    for (int64_t i = 0; t.data && i < base_volume(&d); i++)
        ((float *)t.data)[i] = (float)(lo + (hi - lo) * tu_rng_uniform(cov_rng(c)));
    return t;
}

static int32_t q_other(cov *c, int32_t dt)
{
    return rnd(c, 0, 1) ? dt : dt == PRT_UINT8 ? PRT_INT8 : PRT_UINT8;
}

static void gen_qmatmul(cov *c, const char *op, int32_t dt)
{
    const int qlinear = strcmp(op, "QLinearMatMul") == 0;
    for (int v = 0; v < 6; v++) {
        oc_case k = {.op = op, .exact = 1};
        int64_t M = rnd(c, 1, 40), K = rnd(c, 1, 150), N = rnd(c, 1, 70);
        const int32_t tb = q_other(c, dt), ty = q_other(c, dt);
        const int per_col = v % 2, per_row = !qlinear && v == 2;
        prt_dims a = v == 4 ? D3(2, M, K) : D2(M, K), b = v == 5 ? D3(2, K, N) : D2(K, N);
        char what[96];
        ot_tensor A = q_bytes(c, dt, a), B = q_bytes(c, tb, b);
        ot_tensor az = q_zp(c, dt, per_row ? D1(M) : D0());
        ot_tensor bz = q_zp(c, tb, per_col ? D1(N) : D0());
        if (qlinear) {
            ot_tensor in[8] = {A,
                               q_scale(c, D0(), 0.01, 0.05),
                               az,
                               B,
                               q_scale(c, per_col ? D1(N) : D0(), 0.001, 0.05),
                               bz,
                               q_scale(c, D0(), 0.5, 4),
                               q_zp(c, ty, D0())};
            memcpy(k.in, in, sizeof in);
            k.nb = 8;
            for (int i = 1; i < 8; i++)
                k.role[i] = i == 3 && v % 3 == 1 ? OC_DATA : OC_CONST;
        } else {
            ot_tensor in[4] = {A, B, az, bz};
            memcpy(k.in, in, sizeof in);
            k.nb = v == 3 ? 2 : 4;
            if (v == 3)
                ot_free(&k.in[2]), ot_free(&k.in[3]);
            for (int i = 1; i < k.nb; i++)
                k.role[i] = i == 1 && v % 3 == 1 ? OC_DATA : OC_CONST;
        }
        snprintf(what, sizeof what, "%s %s B%s%s%s%s", op, prt_dtype_name(tb),
                 per_col ? ", zp per column" : "", per_row ? ", per row" : "",
                 v == 4 ? ", batch" : "", v == 5 ? ", B batched" : "");
        cov_case(c, what, &k);
    }
}

static void gen_qconv(cov *c, const char *op, int32_t dt)
{
    const int qlinear = strcmp(op, "QLinearConv") == 0;
    for (int v = 0; v < 6; v++) {
        const int32_t tw = q_other(c, dt), ty = q_other(c, dt);
        int32_t group = v == 3 ? 2 : 1, ns = v == 5 ? 1 : 2;
        int32_t s[2] = {1, 1}, dl[2] = {1, 1}, pads[4] = {0, 0, 0, 0};
        int64_t C = group * rnd(c, 1, 6), M = group * rnd(c, 1, 20);
        int64_t k0 = v == 0 ? 1 : rnd(c, 1, 3), k1 = v == 0 ? 1 : rnd(c, 1, 3);
        int64_t H = rnd(c, 3, 12), W = rnd(c, 3, 12);
        const int per_ch = v % 2;
        prt_field f[4];
        oc_case k = {.op = op, .f = f, .nf = 4, .exact = 1};
        char what[96];
        ot_tensor X, Wt, xz, wz;
        if (v == 2 || v == 4) {
            s[0] = s[1] = 2;
            pads[0] = pads[1] = pads[2] = pads[3] = 1;
        }
        if (v == 4)
            dl[0] = dl[1] = 2;
        X = q_bytes(c, dt, ns == 1 ? D3(2, C, H) : D4(1, C, H, W));
        Wt = q_bytes(c, tw, ns == 1 ? D3(M, C / group, k0) : D4(M, C / group, k0, k1));
        xz = q_zp(c, dt, D0());
        wz = q_zp(c, tw, per_ch ? D1(M) : D0());
        f[0] = ot_fld_i32("strides", s, ns);
        f[1] = ot_fld_i32("dilations", dl, ns);
        f[2] = ot_fld_i32("pads", pads, 2 * ns);
        f[3] = ot_fld_i32("group", &group, 1);
        if (qlinear) {
            ot_tensor in[9] = {X,
                               q_scale(c, D0(), 0.01, 0.05),
                               xz,
                               Wt,
                               q_scale(c, per_ch ? D1(M) : D0(), 0.001, 0.05),
                               wz,
                               q_scale(c, D0(), 0.5, 4),
                               q_zp(c, ty, D0()),
                               ot_make(PRT_INT32, D1(M))};
            for (int64_t m = 0; m < M; m++)
                ((int32_t *)in[8].data)[m] = (int32_t)rnd(c, -3000, 3000);
            memcpy(k.in, in, sizeof in);
            k.nb = v == 1 ? 8 : 9;
            if (v == 1)
                ot_free(&k.in[8]);
            for (int i = 1; i < k.nb; i++)
                k.role[i] = i == 3 && v == 2 ? OC_DATA : OC_CONST;
        } else {
            ot_tensor in[4] = {X, Wt, xz, wz};
            memcpy(k.in, in, sizeof in);
            k.nb = 4;
            for (int i = 1; i < 4; i++)
                k.role[i] = i == 1 && v == 2 ? OC_DATA : OC_CONST;
        }
        snprintf(what, sizeof what, "%s %s W, %dx%d, group %d%s", op, prt_dtype_name(tw),
                 (int)k0, (int)(ns == 1 ? 1 : k1), (int)group,
                 per_ch ? ", per channel" : "");
        cov_case(c, what, &k);
    }
}

/* DynamicQuantizeMatMul (float A) and MatMulIntegerToFloat (8-bit A):
 * the key dtype is A's; field activation Gelu and Relu in two cases. Sums
 * are exact; the epilogue is a multiply-add that one build contracts and
 * another does not, hence rtol. */
static void gen_qmatmul_float(cov *c, const char *op, int32_t dt)
{
    const int dynamic = strcmp(op, "DynamicQuantizeMatMul") == 0;
    for (int v = 0; v < 4; v++) {
        prt_field act = ot_fld_str("activation", v == 1 ? "Gelu" : "Relu");
        oc_case k = {.op = op, .rtol = 1e-5, .f = &act, .nf = v == 1 || v == 2};
        const int64_t M = rnd(c, 1, 40), K = rnd(c, 1, 150), N = rnd(c, 1, 70);
        const int32_t tb = rnd(c, 0, 1) ? PRT_UINT8 : PRT_INT8;
        const int per_col = v % 2, bias = v != 2;
        prt_dims a = v == 3 ? D3(2, M, K) : D2(M, K);
        char what[96];
        int32_t nb = 0;
        k.in[nb++] = dynamic ? q_scale(c, a, -2.0, 3.0) : q_bytes(c, dt, a);
        k.in[nb++] = q_bytes(c, tb, D2(K, N));
        if (!dynamic)
            k.in[nb++] = q_scale(c, D0(), 0.01, 0.05);
        k.in[nb++] = q_scale(c, per_col ? D1(N) : D0(), 0.001, 0.05);
        if (!dynamic)
            k.in[nb++] = q_zp(c, dt, D0());
        k.in[nb++] = q_zp(c, tb, per_col ? D1(N) : D0());
        if (bias)
            k.in[nb++] = q_scale(c, D1(N), -2.0, 2.0);
        k.nb = nb;
        for (int i = 1; i < nb; i++)
            k.role[i] = i == 1 && v == 1 ? OC_DATA : OC_CONST;
        snprintf(what, sizeof what, "%s %s B%s%s%s%s", op, prt_dtype_name(tb),
                 per_col ? ", per column" : "", bias ? ", bias" : "",
                 v == 3 ? ", batch" : "", k.nf ? (v == 1 ? ", Gelu" : ", Relu") : "");
        cov_case(c, what, &k);
    }
}

const cov_entry cov_qgemm_entries[] = {
    {"MatMulInteger", gen_qmatmul},
    {"QLinearMatMul", gen_qmatmul},
    {"ConvInteger", gen_qconv},
    {"QLinearConv", gen_qconv},
    {"DynamicQuantizeMatMul", gen_qmatmul_float},
    {"MatMulIntegerToFloat", gen_qmatmul_float},
    {NULL, NULL},
};
