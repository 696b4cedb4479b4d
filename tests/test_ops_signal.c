/*
 * The signal ops (ops_signal.h) on the CPU against plain references
 * written here in double: DFT (real and complex, forward and inverse,
 * onesided, dft_length padding and truncating, every axis; power-of-two
 * lengths take the FFT, others the direct sum), STFT (a window, a
 * frame_length, both), the three windows (periodic and symmetric, from
 * their textbook forms) and MelWeightMatrix's peaks; one and several
 * threads give the same bits. Then the refusals, each naming the problem.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_case.h"

#define PI 3.14159265358979323846
/* float32 results of sums of up to 64 products of values in [-1, 1],
 * computed in double and rounded once: a few ulps of the largest bin. */
#define SIGNAL_RTOL 2e-6

static ot_tensor scalar(int32_t dt, double v)
{
    ot_tensor t = ot_make(dt, D0());
    ot_set(&t, 0, v);
    return t;
}

/* Builds and runs k on the CPU with `threads`; 0 with out[0] set. */
static int run_case(const char *what, oc_case *k, int32_t threads, ot_tensor *out)
{
    char err[512];
    prt_engine *e = oc_build(PRT_DEVICE_CPU, k, err, sizeof err);
    int rc = 1;
    if (!e) {
        fprintf(stderr, "%s: build fails: %s\n", what, err);
        CHECK(!"the case builds");
        return 1;
    }
    rc = oc_run(e, PRT_DEVICE_CPU, k, threads, 0x7f, out);
    prt_engine_destroy(e);
    return rc;
}

/* Checks got against want, then the same bits on 1 thread as on 3. */
static void check_case(const char *what, oc_case *k, const prt_dims *yd,
                       const double *want)
{
    ot_tensor got[OC_MAXOUT] = {{0}}, one[OC_MAXOUT] = {{0}};
    if (run_case(what, k, 3, got) == 0) {
        ot_check_close(what, &got[0], yd, want, SIGNAL_RTOL);
        if (run_case(what, k, 1, one) == 0)
            CHECK(one[0].data && got[0].data &&
                  memcmp(one[0].data, got[0].data,
                         (size_t)tu_volume(yd) * prt_dtype_size(got[0].dtype)) == 0);
    }
    ot_free(&got[0]);
    ot_free(&one[0]);
}

/* One bin by the definition: sum_t x[t] exp(sign 2 pi i k t / n). */
static void ref_bin(const double *xr, const double *xi, int64_t n, int64_t k, double sign,
                    double *re, double *im)
{
    double sr = 0.0, si = 0.0;
    for (int64_t t = 0; t < n; t++) {
        double a = sign * 2.0 * PI * (double)((k * t) % n) / (double)n;
        sr += xr[t] * cos(a) - xi[t] * sin(a);
        si += xr[t] * sin(a) + xi[t] * cos(a);
    }
    *re = sr;
    *im = si;
}

typedef struct dft_spec {
    int64_t outer, n, inner, comps, len; /* len 0: no dft_length */
    int32_t axis, inverse, onesided;
} dft_spec;

static void test_dft_one(tu_rng *r, const dft_spec *s)
{
    const int64_t L = s->len ? s->len : s->n, bins = s->onesided ? L / 2 + 1 : L;
    prt_dims xd = s->inner > 1 ? D4(s->outer, s->n, s->inner, s->comps)
                               : D3(s->outer, s->n, s->comps);
    prt_dims yd = xd;
    prt_field f[3] = {ot_fld_i32("axis", &s->axis, 1),
                      ot_fld_i32("inverse", &s->inverse, 1),
                      ot_fld_i32("onesided", &s->onesided, 1)};
    oc_case k = {.op = "DFT", .f = f, .nf = 3, .nb = 1};
    double *want = calloc((size_t)(s->outer * bins * s->inner * 2), sizeof(double));
    double *xr = calloc((size_t)L, sizeof(double)),
           *xi = calloc((size_t)L, sizeof(double));
    char what[160];
    yd.d[1] = bins;
    yd.d[yd.nb_dims - 1] = 2;
    k.in[0] = ot_random(PRT_FLOAT32, xd, r, 0);
    if (s->len) {
        k.in[1] = scalar(PRT_INT64, (double)s->len);
        k.role[1] = OC_BOTH;
        k.nb = 2;
    }
    for (int64_t o = 0; o < s->outer; o++)
        for (int64_t i = 0; i < s->inner; i++) {
            for (int64_t t = 0; t < L; t++) {
                int64_t at = ((o * s->n + t) * s->inner + i) * s->comps;
                xr[t] = t < s->n ? ot_get(&k.in[0], at) : 0.0;
                xi[t] = t < s->n && s->comps == 2 ? ot_get(&k.in[0], at + 1) : 0.0;
            }
            for (int64_t b = 0; b < bins; b++) {
                double re, im, sc = s->inverse ? 1.0 / (double)L : 1.0;
                int64_t at = ((o * bins + b) * s->inner + i) * 2;
                ref_bin(xr, xi, L, b, s->inverse ? 1.0 : -1.0, &re, &im);
                want[at] = re * sc;
                want[at + 1] = im * sc;
            }
        }
    snprintf(what, sizeof what, "DFT n %lld len %lld comps %lld%s%s", (long long)s->n,
             (long long)L, (long long)s->comps, s->inverse ? " inverse" : "",
             s->onesided ? " onesided" : "");
    check_case(what, &k, &yd, want);
    oc_free(&k);
    free(want);
    free(xr);
    free(xi);
}

static void test_dft(void)
{
    static const dft_spec specs[] = {
        {3, 16, 1, 1, 0, 1, 0, 0},  {2, 10, 1, 2, 0, 1, 1, 0},
        {4, 64, 1, 1, 0, 1, 0, 1},  {2, 7, 1, 1, 0, 1, 0, 1},
        {1, 1, 1, 2, 0, 1, 0, 0},   {2, 12, 1, 2, 16, 1, 0, 1},
        {2, 40, 1, 1, 32, 1, 1, 0}, {2, 9, 3, 2, 0, 1, 0, 0},
        {1, 8, 5, 1, 0, -2, 0, 1},  {3, 13, 2, 2, 20, 1, 1, 1},
        {2, 100, 1, 1, 0, 1, 0, 0}, {1, 128, 1, 2, 0, 1, 1, 0},
    };
    tu_rng r;
    tu_rng_seed(&r, 1717);
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        test_dft_one(&r, &specs[i]);
}

/* STFT: real and complex signals, a window (frame_length from it),
 * frame_length alone (a rectangular window), both; onesided and not. */
static void test_stft(void)
{
    static const int64_t spec[6][6] = {
        /* n, step, samples, form (0 window, 1 length, 2 both), onesided, comps */
        {16, 8, 128, 2, 1, 1}, {10, 3, 41, 0, 1, 1}, {8, 8, 64, 1, 0, 1},
        {5, 2, 5, 0, 0, 1},    {12, 5, 60, 2, 1, 2}, {16, 4, 50, 1, 0, 2}};
    tu_rng r;
    tu_rng_seed(&r, 99);
    for (int v = 0; v < 6; v++) {
        const int64_t n = spec[v][0], step = spec[v][1], S = spec[v][2], C = spec[v][5];
        const int64_t frames = (S - n) / step + 1, bins = spec[v][4] ? n / 2 + 1 : n;
        const int32_t form = (int32_t)spec[v][3], onesided = (int32_t)spec[v][4];
        prt_field f[1] = {ot_fld_i32("onesided", &onesided, 1)};
        oc_case k = {.op = "STFT", .f = f, .nf = 1, .nb = 3};
        prt_dims yd = D4(2, frames, bins, 2);
        double *want = calloc((size_t)(2 * frames * bins * 2), sizeof(double));
        double xr[64], xi[64];
        char what[96];
        k.in[0] = ot_random(PRT_FLOAT32, D3(2, S, C), &r, 0);
        k.in[1] = scalar(PRT_INT64, (double)step);
        k.role[1] = OC_BOTH;
        if (form == 1) {
            k.in[2] = scalar(PRT_INT32, (double)n);
            k.role[2] = OC_BOTH;
        } else {
            k.in[2] = ot_random(PRT_FLOAT32, D1(n), &r, 0);
        }
        if (form == 2) {
            k.in[3] = scalar(PRT_INT64, (double)n);
            k.role[3] = OC_BOTH;
            k.nb = 4;
        }
        for (int64_t b = 0; b < 2; b++)
            for (int64_t fr = 0; fr < frames; fr++) {
                for (int64_t t = 0; t < n; t++) {
                    const int64_t at = (b * S + fr * step + t) * C;
                    const double w = form == 1 ? 1.0 : ot_get(&k.in[2], t);
                    xr[t] = ot_get(&k.in[0], at) * w;
                    xi[t] = C == 2 ? ot_get(&k.in[0], at + 1) * w : 0.0;
                }
                for (int64_t q = 0; q < bins; q++) {
                    int64_t at = ((b * frames + fr) * bins + q) * 2;
                    ref_bin(xr, xi, n, q, -1.0, &want[at], &want[at + 1]);
                }
            }
        snprintf(what, sizeof what, "STFT n %lld step %lld form %d", (long long)n,
                 (long long)step, (int)form);
        check_case(what, &k, &yd, want);
        oc_free(&k);
        free(want);
    }
}

/* The windows from their textbook forms (Hann as sin^2, as ONNX writes it). */
static double window_ref(const char *op, int64_t k, int64_t n, int periodic)
{
    double d = (double)(periodic ? n : n - 1), a = 2.0 * PI * (double)k / d;
    if (d == 0.0)
        return 1.0;
    if (!strcmp(op, "HannWindow"))
        return sin(PI * (double)k / d) * sin(PI * (double)k / d);
    if (!strcmp(op, "HammingWindow"))
        return 25.0 / 46.0 - (21.0 / 46.0) * cos(a);
    return 0.42 - 0.5 * cos(a) + 0.08 * cos(2.0 * a);
}

static void test_windows(void)
{
    static const char *const ops[3] = {"HannWindow", "HammingWindow", "BlackmanWindow"};
    static const int64_t sizes[5] = {10, 1, 2, 33, 0};
    for (int o = 0; o < 3; o++)
        for (int v = 0; v < 10; v++) {
            int32_t periodic = v % 2, n = (int32_t)sizes[v / 2];
            prt_field f[1] = {ot_fld_i32("periodic", &periodic, 1)};
            oc_case k = {.op = ops[o], .f = f, .nf = 1, .nb = 1};
            prt_dims yd = D1(n);
            double want[40];
            char what[96];
            k.in[0] = scalar(v % 4 < 2 ? PRT_INT64 : PRT_INT32, n);
            k.role[0] = OC_BOTH;
            for (int64_t i = 0; i < n; i++)
                want[i] = window_ref(ops[o], i, n, periodic);
            snprintf(what, sizeof what, "%s %d periodic %d", ops[o], (int)n,
                     (int)periodic);
            check_case(what, &k, &yd, want);
            oc_free(&k);
        }
}

/* The node test's MelWeightMatrix (8 bins, dft_length 16, 8192 Hz, 0 to
 * 4096 Hz): a peak of 1.0 in every filter, every value in [0, 1]. */
static void test_mel(void)
{
    static const double p[5] = {8, 16, 8192, 0, 4096};
    oc_case k = {.op = "MelWeightMatrix", .nb = 5};
    ot_tensor got[OC_MAXOUT] = {{0}};
    for (int i = 0; i < 5; i++)
        k.in[i] = scalar(i < 3 ? PRT_INT32 : PRT_FLOAT32, p[i]);
    k.role[0] = k.role[1] = OC_BOTH;
    if (run_case("MelWeightMatrix", &k, 1, got) == 0) {
        prt_dims want = D2(9, 8);
        CHECK(ot_dims_eq(&got[0].dims, &want));
        for (int64_t i = 0; i < 8 && ot_dims_eq(&got[0].dims, &want); i++) {
            double peak = 0.0;
            for (int64_t j = 0; j < 9; j++) {
                double v = ot_get(&got[0], j * 8 + i);
                CHECK(v >= 0.0 && v <= 1.0);
                peak = v > peak ? v : peak;
            }
            CHECK(peak == 1.0);
        }
    }
    ot_free(&got[0]);
    oc_free(&k);
}

/* ---- refusals ------------------------------------------------------------ */

static void expect_refusal(const char *what, oc_case *k, const char *needle)
{
    char err[512];
    prt_engine *e = oc_build(PRT_DEVICE_CPU, k, err, sizeof err);
    CHECK(e == NULL);
    if (!strstr(err, needle)) {
        fprintf(stderr, "%s: the error '%s' does not say '%s'\n", what, err, needle);
        CHECK(!"the error names the problem");
    }
    prt_engine_destroy(e);
    oc_free(k);
}

static void test_refusals(void)
{
    int32_t axis3 = 3, i32 = PRT_INT32, one = 1;
    prt_field fa[1] = {ot_fld_i32("axis", &axis3, 1)};
    prt_field fd[1] = {ot_fld_i32("dtype", &i32, 1)};
    prt_field fo[1] = {ot_fld_i32("onesided", &one, 1)};
    oc_case k;

    k = (oc_case){.op = "DFT", .nb = 1};
    k.in[0] = ot_make(PRT_FLOAT32, D3(2, 8, 3));
    expect_refusal("DFT comps 3", &k, "must be 1 (real) or 2 (complex)");

    k = (oc_case){.op = "DFT", .f = fa, .nf = 1, .nb = 1};
    k.in[0] = ot_make(PRT_FLOAT32, D3(2, 8, 1));
    expect_refusal("DFT axis 3", &k, "axis 3 is out of range");

    k = (oc_case){.op = "DFT", .nb = 1};
    k.in[0] = ot_make(PRT_FLOAT32, D1(2));
    expect_refusal("DFT rank 1", &k, "rank 2 or more");

    k = (oc_case){.op = "DFT", .nb = 2};
    k.in[0] = ot_make(PRT_FLOAT32, D3(2, 8, 1));
    k.in[1] = scalar(PRT_INT64, 0);
    k.role[1] = OC_BOTH;
    expect_refusal("DFT dft_length 0", &k, "dft_length is 0");

    k = (oc_case){.op = "DFT", .nb = 2};
    k.in[0] = ot_make(PRT_FLOAT32, D3(2, 8, 1));
    k.in[1] = scalar(PRT_INT64, 8);
    expect_refusal("DFT dft_length data", &k, "dft_length must be a shape input");

    k = (oc_case){.op = "DFT", .nb = 2};
    k.in[0] = ot_make(PRT_FLOAT32, D3(2, 8, 1));
    k.in[1] = ot_make(PRT_INT64, D1(1));
    ot_set(&k.in[1], 0, 8);
    k.role[1] = OC_BOTH;
    expect_refusal("DFT dft_length 1-D", &k, "dft_length must be a scalar");

    k = (oc_case){.op = "DFT", .nb = 1};
    k.in[0] = ot_make(PRT_INT32, D3(2, 8, 1));
    expect_refusal("DFT int32", &k, "int32");

    k = (oc_case){.op = "HannWindow", .nb = 1};
    k.in[0] = ot_make(PRT_INT64, D1(1));
    ot_set(&k.in[0], 0, 4);
    k.role[0] = OC_BOTH;
    expect_refusal("HannWindow 1-D size", &k, "size must be a scalar");

    k = (oc_case){.op = "HammingWindow", .nb = 1};
    k.in[0] = scalar(PRT_INT64, -3);
    k.role[0] = OC_BOTH;
    expect_refusal("HammingWindow size -3", &k, "size is -3");

    k = (oc_case){.op = "BlackmanWindow", .f = fd, .nf = 1, .nb = 1};
    k.in[0] = scalar(PRT_INT64, 4);
    k.role[0] = OC_BOTH;
    expect_refusal("BlackmanWindow to int32", &k, "is not supported");

    k = (oc_case){.op = "STFT", .f = fo, .nf = 1, .nb = 2};
    k.in[0] = ot_make(PRT_FLOAT32, D3(1, 32, 1));
    k.in[1] = scalar(PRT_INT64, 4);
    k.role[1] = OC_BOTH;
    expect_refusal("STFT no window", &k, "needs a window or a frame_length");

    k = (oc_case){.op = "STFT", .nb = 4};
    k.in[0] = ot_make(PRT_FLOAT32, D3(1, 32, 1));
    k.in[1] = scalar(PRT_INT64, 4);
    k.role[1] = OC_BOTH;
    k.in[2] = ot_make(PRT_FLOAT32, D1(5));
    k.in[3] = scalar(PRT_INT64, 8);
    k.role[3] = OC_BOTH;
    expect_refusal("STFT window 5 length 8", &k,
                   "frame_length is 8 but the window has 5");

    k = (oc_case){.op = "STFT", .nb = 3};
    k.in[0] = ot_make(PRT_FLOAT32, D3(1, 6, 1));
    k.in[1] = scalar(PRT_INT64, 4);
    k.role[1] = OC_BOTH;
    k.in[2] = ot_make(PRT_FLOAT32, D1(8));
    expect_refusal("STFT frame past the signal", &k, "shorter than one frame");

    k = (oc_case){.op = "STFT", .nb = 3};
    k.in[0] = ot_make(PRT_FLOAT32, D3(1, 32, 1));
    k.in[1] = scalar(PRT_INT64, 0);
    k.role[1] = OC_BOTH;
    k.in[2] = ot_make(PRT_FLOAT32, D1(8));
    expect_refusal("STFT step 0", &k, "frame_step is 0");
}

int main(void)
{
    test_dft();
    test_stft();
    test_windows();
    test_mel();
    test_refusals();
    return tu_finish("test_ops_signal");
}
