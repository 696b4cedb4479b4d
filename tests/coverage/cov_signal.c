/*
 * Generators of the coverage matrix (cov.h) for the signal ops: the window
 * functions, MelWeightMatrix, DFT and STFT. Lengths take both of the CPU's
 * paths (the radix-2 FFT for powers of two, the direct sum otherwise) and
 * the size values are shape inputs that are also data (OC_BOTH), as the
 * importer makes them. Inputs carry no NaN or infinity: the FFT and the
 * direct sum spread them over different bins.
 */
#include <stdio.h>

#include "cov.h"

static int64_t rnd(cov *c, int64_t lo, int64_t hi)
{
    return tu_rng_range(cov_rng(c), lo, hi);
}

/* A 0-D integer of dtype dt holding v. */
static ot_tensor scalar(int32_t dt, double v)
{
    ot_tensor t = ot_make(dt, D0());
    ot_set(&t, 0, v);
    return t;
}

static const int32_t out_dts[3] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16};

/* Every size from 0 to 33 once in a while, both forms, every output dtype. */
static void gen_window(cov *c, const char *op, int32_t dt)
{
    static const int64_t sizes[6] = {1, 2, 7, 16, 33, 0};
    for (int v = 0; v < 6; v++) {
        int32_t periodic = v % 2, to = out_dts[v % 3];
        oc_case k = {.op = op, .nb = 1, .rtol = cov_rtol(to, 1e-6)};
        prt_field f[2] = {ot_fld_i32("periodic", &periodic, 1),
                          ot_fld_i32("dtype", &to, 1)};
        char what[96];
        k.f = f;
        k.nf = 2;
        k.in[0] = scalar(dt, (double)sizes[v]);
        k.role[0] = OC_BOTH;
        snprintf(what, sizeof what, "%s size %lld periodic %d to %s", op,
                 (long long)sizes[v], (int)periodic, prt_dtype_name(to));
        cov_case(c, what, &k);
    }
}

/* Filters wider and narrower than a bin, odd and even DFT lengths. */
static void gen_mel(cov *c, const char *op, int32_t dt)
{
    static const double p[4][5] = {{8, 16, 8192, 0, 4096},
                                   {5, 64, 16000, 20, 7000},
                                   {20, 511, 22050, 100, 11000},
                                   {1, 7, 1000, 10, 400}};
    for (int v = 0; v < 4; v++) {
        int32_t to = out_dts[v % 3];
        oc_case k = {.op = op, .nb = 5, .rtol = cov_rtol(to, 1e-6)};
        prt_field f[1] = {ot_fld_i32("dtype", &to, 1)};
        char what[96];
        k.f = f;
        k.nf = 1;
        for (int i = 0; i < 5; i++)
            k.in[i] = scalar(i < 3 ? dt : PRT_FLOAT32, p[v][i]);
        k.role[0] = k.role[1] = OC_BOTH;
        snprintf(what, sizeof what, "MelWeightMatrix %g bins, dft_length %g", p[v][0],
                 p[v][1]);
        cov_case(c, what, &k);
    }
}

/* Real and complex, forward and inverse, onesided, the axis in front, in
 * the middle and last, dft_length padding and truncating. */
static void gen_dft(cov *c, const char *op, int32_t dt)
{
    static const int64_t lens[7] = {16, 10, 1, 32, 7, 12, 64};
    for (int v = 0; v < 7; v++) {
        int32_t axis = v == 3   ? 2
                       : v == 4 ? -1
                                : 1,
                inverse = v % 3 == 1, onesided = v == 2 || v >= 5;
        int64_t comps = v % 2 ? 2 : 1, n = lens[v];
        prt_dims d = v == 3 || v == 4
                         ? ot_dims5(4, rnd(c, 1, 3), rnd(c, 1, 5), n, comps, 0)
                         : D3(rnd(c, 1, 4), n, comps);
        oc_case k = {.op = op, .nb = 1, .rtol = cov_rtol(dt, 1e-5)};
        prt_field f[3] = {ot_fld_i32("axis", &axis, 1),
                          ot_fld_i32("inverse", &inverse, 1),
                          ot_fld_i32("onesided", &onesided, 1)};
        char what[96];
        k.f = f;
        k.nf = 3;
        k.in[0] = cov_random(c, dt, d, 0);
        if (v >= 5) {
            /* Zero-padded to 16 from 12, truncated to 48 from 64. */
            k.in[1] = scalar(PRT_INT64, v == 5 ? 16 : 48);
            k.role[1] = OC_BOTH;
            k.nb = 2;
        }
        snprintf(what, sizeof what, "DFT n %lld axis %d%s%s%s", (long long)n, (int)axis,
                 comps == 2 ? " complex" : "", inverse ? " inverse" : "",
                 onesided ? " onesided" : "");
        cov_case(c, what, &k);
    }
}

/* A window alone, frame_length alone, both; real and complex signals. */
static void gen_stft(cov *c, const char *op, int32_t dt)
{
    static const int64_t lens[4] = {16, 10, 8, 5};
    for (int v = 0; v < 4; v++) {
        int32_t onesided = v != 2;
        int64_t n = lens[v], comps = v == 2 ? 2 : 1, step = rnd(c, 1, n);
        int64_t samples = n + rnd(c, 0, 40);
        oc_case k = {.op = op, .nb = 3, .rtol = cov_rtol(dt, 1e-5)};
        prt_field f[1] = {ot_fld_i32("onesided", &onesided, 1)};
        char what[96];
        k.f = f;
        k.nf = 1;
        k.in[0] = cov_random(c, dt, D3(rnd(c, 1, 3), samples, comps), 0);
        k.in[1] = scalar(PRT_INT64, (double)step);
        k.role[1] = OC_BOTH;
        if (v == 1) {
            k.in[2] = scalar(PRT_INT64, (double)n);
            k.role[2] = OC_BOTH;
        } else {
            k.in[2] = cov_random(c, dt, D1(n), 0);
        }
        if (v == 2) {
            k.in[3] = scalar(PRT_INT32, (double)n);
            k.role[3] = OC_BOTH;
            k.nb = 4;
        }
        snprintf(what, sizeof what, "STFT frame %lld step %lld%s%s", (long long)n,
                 (long long)step, v == 1 ? " no window" : "",
                 comps == 2 ? " complex" : "");
        cov_case(c, what, &k);
    }
}

const cov_entry cov_signal_entries[] = {
    {"HannWindow", gen_window},
    {"HammingWindow", gen_window},
    {"BlackmanWindow", gen_window},
    {"MelWeightMatrix", gen_mel},
    {"DFT", gen_dft},
    {"STFT", gen_stft},
    {NULL, NULL},
};
