/*
 * LSTM, GRU and RNN on the CPU against a plain reference in double (ONNX's
 * equations with ONNX Runtime's rules where ONNX leaves them open: clip on
 * every gate's input but not on LSTM's h(C); a batch entry of length L runs
 * L steps, a reverse direction from L - 1 down, Y 0 past L, Y_h and Y_c 0
 * for L = 0). Random layers over every option: direction, layout, ragged
 * sequence_lens, initial states, peepholes, bias, clip, GRU's
 * linear_before_reset, LSTM's input_forget, non-default activations, 1 to
 * 3 outputs, on 1 and 3 threads. Then the errors: an unknown activation,
 * a length past T, W of the wrong dims.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_case.h"
#include "testutil.h"

enum { K_RNN, K_GRU, K_LSTM };
static const char *const kind_names[3] = {"RNN", "GRU", "LSTM"};

/* The activations a case uses: index into these names, alpha, beta. */
enum { A_SIG, A_TANH, A_RELU, A_LEAKY, A_HSIG, A_SOFTSIGN };
static const char *const act_names[] = {"Sigmoid",   "Tanh",        "Relu",
                                        "LeakyRelu", "HardSigmoid", "Softsign"};

typedef struct spec {
    int kind, dir, layout, lbr, input_forget, has_b, has_seq, has_h0, has_c0, has_p;
    int nb_out, custom_acts;
    float clip; /* 0: none */
    int64_t T, B, I, H;
    int acts[6];
    float alpha[6], beta[6];
} spec;

static double act(int a, double al, double be, double x)
{
    switch (a) {
    case A_SIG:
        return 1.0 / (1.0 + exp(-x));
    case A_TANH:
        return tanh(x);
    case A_RELU:
        return x < 0 ? 0 : x;
    case A_LEAKY:
        return x < 0 ? al * x : x;
    case A_HSIG: {
        double v = al * x + be;
        return v < 0 ? 0 : v > 1 ? 1 : v;
    }
    default:
        return x / (1.0 + fabs(x));
    }
}

static double clipv(const spec *s, double x)
{
    if (s->clip > 0)
        return x < -s->clip ? -s->clip : x > s->clip ? s->clip : x;
    return x;
}

/* Activation k (of the case's list; one direction's) on clipped x. */
static double actk(const spec *s, int dir, int k, double x, int clip)
{
    int per = s->kind == K_LSTM ? 3 : s->kind == K_GRU ? 2 : 1, i = dir * per + k;
    if (clip)
        x = clipv(s, x);
    return act(s->acts[i], s->alpha[i], s->beta[i], x);
}

static double at(const ot_tensor *t, int64_t i)
{
    return t ? ot_get(t, i) : 0.0;
}

/* want[0..2]: Y, Y_h, Y_c in the case's layout. */
static void reference(const spec *s, const ot_tensor *x, const ot_tensor *w,
                      const ot_tensor *r, const ot_tensor *b, const ot_tensor *seq,
                      const ot_tensor *h0, const ot_tensor *c0, const ot_tensor *p,
                      double **want)
{
    const int64_t T = s->T, B = s->B, I = s->I, H = s->H;
    const int D = s->dir == 2 ? 2 : 1, G = s->kind == K_LSTM  ? 4
                                           : s->kind == K_GRU ? 3
                                                              : 1;
    double h[64], c[64], g[256], hn[64]; /* H <= 64 */
    memset(want[0], 0, sizeof(double) * (size_t)(T * D * B * H));
    for (int d = 0; d < D; d++) {
        int rev = s->dir == 1 || d == 1;
        for (int64_t bb = 0; bb < B; bb++) {
            int64_t L = seq ? (int64_t)ot_get(seq, bb) : T;
            int64_t st = s->layout ? (bb * D + d) * H : (d * B + bb) * H;
            for (int64_t j = 0; j < H; j++) {
                h[j] = at(h0, st + j);
                c[j] = at(c0, st + j);
            }
            for (int64_t q = 0; q < L; q++) {
                int64_t t = rev ? L - 1 - q : q;
                int64_t xo = s->layout ? (bb * T + t) * I : (t * B + bb) * I;
                /* g = X W^T + Wb (+ H R^T + Rb, but GRU's h block apart) */
                for (int64_t k = 0; k < G * H; k++) {
                    double a = at(b, d * 2 * G * H + k),
                           rr = at(b, d * 2 * G * H + G * H + k);
                    for (int64_t i = 0; i < I; i++)
                        a += ot_get(x, xo + i) * ot_get(w, (d * G * H + k) * I + i);
                    if (s->kind != K_GRU || k < 2 * H) {
                        for (int64_t j = 0; j < H; j++)
                            rr += h[j] * ot_get(r, (d * G * H + k) * H + j);
                        a += rr;
                    }
                    g[k] = a;
                }
                if (s->kind == K_RNN) {
                    for (int64_t j = 0; j < H; j++)
                        h[j] = actk(s, d, 0, g[j], 1);
                } else if (s->kind == K_GRU) {
                    for (int64_t j = 0; j < H; j++) {
                        double z = actk(s, d, 0, g[j], 1),
                               rg = actk(s, d, 0, g[H + j], 1);
                        double rb = at(b, d * 2 * G * H + G * H + 2 * H + j), hr = 0;
                        if (s->lbr) {
                            for (int64_t k = 0; k < H; k++)
                                hr += h[k] * ot_get(r, (d * G * H + 2 * H + j) * H + k);
                            hr = rg * (hr + rb);
                        } else {
                            for (int64_t k = 0; k < H; k++) {
                                double rgk = actk(s, d, 0, g[H + k], 1);
                                hr += rgk * h[k] *
                                      ot_get(r, (d * G * H + 2 * H + j) * H + k);
                            }
                            hr += rb;
                        }
                        double hh = actk(s, d, 1, g[2 * H + j] + hr, 1);
                        hn[j] = (1 - z) * hh + z * h[j];
                    }
                    memcpy(h, hn, sizeof(double) * (size_t)H);
                } else {
                    for (int64_t j = 0; j < H; j++) {
                        double pi = at(p, d * 3 * H + j), po = at(p, d * 3 * H + H + j);
                        double pf = at(p, d * 3 * H + 2 * H + j);
                        double i_ = actk(s, d, 0, g[j] + pi * c[j], 1);
                        double f_ = s->input_forget
                                        ? 1 - i_
                                        : actk(s, d, 0, g[2 * H + j] + pf * c[j], 1);
                        double cc = actk(s, d, 1, g[3 * H + j], 1);
                        c[j] = f_ * c[j] + i_ * cc;
                        double o_ = actk(s, d, 0, g[H + j] + po * c[j], 1);
                        hn[j] = o_ * actk(s, d, 2, c[j], 0);
                    }
                    memcpy(h, hn, sizeof(double) * (size_t)H);
                }
                for (int64_t j = 0; j < H; j++) {
                    int64_t yo = s->layout ? ((bb * T + t) * D + d) * H
                                           : ((t * D + d) * B + bb) * H;
                    want[0][yo + j] = h[j];
                }
            }
            for (int64_t j = 0; j < H; j++) {
                want[1][st + j] = L ? h[j] : 0;
                want[2][st + j] = L ? c[j] : 0;
            }
        }
    }
}

static ot_tensor rnd(tu_rng *g, prt_dims d, double scale)
{
    ot_tensor t = ot_make(PRT_FLOAT32, d);
    for (int64_t i = 0; i < tu_volume(&d); i++)
        ot_set(&t, i, scale * (2 * tu_rng_uniform(g) - 1));
    return t;
}

static void run_spec(const spec *s, int threads, const char *what)
{
    const int64_t T = s->T, B = s->B, I = s->I, H = s->H;
    const int D = s->dir == 2 ? 2 : 1, G = s->kind == K_LSTM  ? 4
                                           : s->kind == K_GRU ? 3
                                                              : 1;
    static const char *const dirs[3] = {"forward", "reverse", "bidirectional"};
    tu_rng g;
    oc_case k = {.op = kind_names[s->kind], .nb_out = s->nb_out, .rtol = 2e-5};
    ot_tensor x, w, r, b = {0}, seq = {0}, h0 = {0}, c0 = {0}, p = {0}, got[3] = {{0}};
    prt_field f[10];
    char names[128];
    int32_t nf = 0, mask = 0, hs = (int32_t)H, layout = s->layout, lbr = s->lbr,
            inf = s->input_forget, nb_out = s->nb_out;
    size_t nl = 0;
    double *want[3];
    prt_dims sd = s->layout ? D3(B, D, H) : D3(D, B, H);
    prt_engine *e;
    char err[512];
    tu_rng_seed(&g, (uint64_t)(s->kind * 131 + s->dir * 17 + s->layout * 7 + T * 3 + B));
    x = rnd(&g, s->layout ? D3(B, T, I) : D3(T, B, I), 2.0);
    w = rnd(&g, D3(D, G * H, I), 0.8);
    r = rnd(&g, D3(D, G * H, H), 0.8);
    k.in[k.nb++] = x;
    k.in[k.nb++] = w;
    k.in[k.nb++] = r;
    if (s->has_b) {
        b = rnd(&g, D2(D, 2 * G * H), 0.5);
        k.in[k.nb++] = b;
        mask |= 1;
    }
    if (s->has_seq) {
        seq = ot_make(PRT_INT32, D1(B));
        for (int64_t i = 0; i < B; i++) /* T, 0 and values between */
            ot_set(&seq, i,
                   i == 0   ? (double)T
                   : i == 1 ? 0.0
                            : (double)tu_rng_range(&g, 1, T));
        k.in[k.nb++] = seq;
        mask |= 2;
    }
    if (s->has_h0) {
        h0 = rnd(&g, sd, 1.0);
        k.in[k.nb++] = h0;
        mask |= 4;
    }
    if (s->has_c0) {
        c0 = rnd(&g, sd, 1.5);
        k.in[k.nb++] = c0;
        mask |= 8;
    }
    if (s->has_p) {
        p = rnd(&g, D2(D, 3 * H), 0.7);
        k.in[k.nb++] = p;
        mask |= 16;
    }
    f[nf++] = ot_fld_str("direction", dirs[s->dir]);
    f[nf++] = ot_fld_i32("hidden_size", &hs, 1);
    f[nf++] = ot_fld_i32("layout", &layout, 1);
    f[nf++] = ot_fld_i32("inputs", &mask, 1);
    f[nf++] = ot_fld_i32("nb_outputs", &nb_out, 1);
    if (s->clip > 0)
        f[nf++] = ot_fld_f32("clip", &s->clip);
    if (s->kind == K_GRU)
        f[nf++] = ot_fld_i32("linear_before_reset", &lbr, 1);
    if (s->kind == K_LSTM)
        f[nf++] = ot_fld_i32("input_forget", &inf, 1);
    if (s->custom_acts) {
        int per = s->kind == K_LSTM ? 3 : s->kind == K_GRU ? 2 : 1;
        for (int i = 0; i < per * D; i++) {
            size_t l = strlen(act_names[s->acts[i]]) + 1;
            memcpy(names + nl, act_names[s->acts[i]], l);
            nl += l;
        }
        f[nf++] = (prt_field){"activations", names, PRT_FIELD_CHAR, (int64_t)nl};
        f[nf++] = (prt_field){"activation_alpha", s->alpha, PRT_FIELD_FLOAT32, 1};
    }
    k.f = f;
    k.nf = nf;
    for (int i = 0; i < 3; i++)
        want[i] = calloc((size_t)(T * D * B * H + 1), sizeof(double));
    reference(s, &x, &w, &r, s->has_b ? &b : NULL, s->has_seq ? &seq : NULL,
              s->has_h0 ? &h0 : NULL, s->has_c0 ? &c0 : NULL, s->has_p ? &p : NULL, want);
    e = oc_build(PRT_DEVICE_CPU, &k, err, sizeof err);
    if (!e) {
        fprintf(stderr, "%s: build fails: %s\n", what, err);
        CHECK(!"the case builds");
    } else if (oc_run(e, PRT_DEVICE_CPU, &k, threads, 0x7f, got) == 0) {
        char wn[200];
        prt_dims yd = s->layout ? D4(B, T, D, H) : D4(T, D, B, H);
        for (int i = 0; i < s->nb_out; i++) {
            snprintf(wn, sizeof wn, "%s output %d", what, i);
            ot_check_close(wn, &got[i], i ? &sd : &yd, want[i], 2e-5);
        }
        /* The same bits on one thread (threads > 1: the directions or the
         * products and gates split). */
        if (threads > 1) {
            ot_tensor one[3] = {{0}};
            if (oc_run(e, PRT_DEVICE_CPU, &k, 1, 0x7f, one) == 0)
                for (int i = 0; i < s->nb_out; i++)
                    CHECK(got[i].data && one[i].data &&
                          memcmp(got[i].data, one[i].data,
                                 sizeof(float) * (size_t)tu_volume(&got[i].dims)) == 0);
            for (int i = 0; i < 3; i++)
                ot_free(&one[i]);
        }
    }
    prt_engine_destroy(e);
    for (int i = 0; i < 3; i++) {
        ot_free(&got[i]);
        free(want[i]);
    }
    oc_free(&k);
}

static void test_random_layers(void)
{
    tu_rng g;
    tu_rng_seed(&g, 2512);
    for (int n = 0; n < 72; n++) {
        spec s = {0};
        char what[256];
        s.kind = n % 3;
        s.dir = (n / 3) % 3;
        s.layout = (n / 9) % 2;
        s.has_seq = (n / 18) % 2;
        s.has_b = tu_rng_range(&g, 0, 1);
        s.has_h0 = tu_rng_range(&g, 0, 1);
        s.has_c0 = s.kind == K_LSTM && tu_rng_range(&g, 0, 1);
        s.has_p = s.kind == K_LSTM && tu_rng_range(&g, 0, 1);
        s.lbr = s.kind == K_GRU && tu_rng_range(&g, 0, 1);
        s.input_forget = s.kind == K_LSTM && n % 7 == 0;
        s.clip = n % 4 == 1 ? 0.9f : 0.0f;
        s.nb_out = (int)tu_rng_range(&g, 1, s.kind == K_LSTM ? 3 : 2);
        s.T = tu_rng_range(&g, 1, 6);
        s.B = tu_rng_range(&g, 1, 5);
        s.I = tu_rng_range(&g, 1, 9);
        s.H = tu_rng_range(&g, 1, 20);
        s.custom_acts = n % 5 == 3;
        for (int i = 0; i < 6; i++) {
            int dflt[3][3] = {{A_TANH}, {A_SIG, A_TANH}, {A_SIG, A_TANH, A_TANH}};
            int per = s.kind == K_LSTM ? 3 : s.kind == K_GRU ? 2 : 1;
            s.acts[i] = dflt[s.kind][i % per];
            s.alpha[i] = 1.0f;
        }
        if (s.custom_acts) {
            /* One function that takes alpha (the list's one alpha), the
             * rest without. */
            static const int pick[4] = {A_RELU, A_HSIG, A_SOFTSIGN, A_SIG};
            s.acts[0] = A_LEAKY;
            s.alpha[0] = 0.3f;
            for (int i = 1; i < 6; i++) {
                s.acts[i] = pick[tu_rng_range(&g, 0, 3)];
                if (s.acts[i] == A_HSIG)
                    s.alpha[i] = 0.2f, s.beta[i] = 0.5f;
            }
        }
        snprintf(what, sizeof what,
                 "%s dir %d layout %d seq %d B %d h0 %d c0 %d P %d lbr %d if %d clip %g "
                 "acts %d T %lld B %lld I %lld H %lld outs %d",
                 kind_names[s.kind], s.dir, s.layout, s.has_seq, s.has_b, s.has_h0,
                 s.has_c0, s.has_p, s.lbr, s.input_forget, (double)s.clip, s.custom_acts,
                 (long long)s.T, (long long)s.B, (long long)s.I, (long long)s.H,
                 s.nb_out);
        run_spec(&s, n % 2 ? 3 : 1, what);
    }
}

/* Bidirectional LSTMs wide enough for the threaded products and gates
 * (hidden 60 and 64, batch 8 and 16), both layouts, ragged lengths. */
static void test_wide(void)
{
    /* layout, T, B, I, H, initial_c, threads */
    static const int64_t v[3][7] = {
        {0, 12, 8, 24, 60, 1, 2},
        {1, 12, 8, 24, 60, 1, 2},
        /* Steps too large for a direction a thread: on four threads both
         * directions spread their products and gates. */
        {0, 5, 16, 20, 64, 0, 4},
    };
    for (int n = 0; n < 3; n++) {
        spec s = {
            .kind = K_LSTM, .dir = 2, .has_b = 1, .has_seq = 1, .has_h0 = 1, .nb_out = 3};
        char what[64];
        s.layout = (int)v[n][0];
        s.T = v[n][1];
        s.B = v[n][2];
        s.I = v[n][3];
        s.H = v[n][4];
        s.has_c0 = (int)v[n][5];
        for (int i = 0; i < 6; i++)
            s.acts[i] = i % 3 ? A_TANH : A_SIG;
        snprintf(what, sizeof what, "wide LSTM %d (batch %lld, hidden %lld, %d threads)",
                 n, (long long)s.B, (long long)s.H, (int)v[n][6]);
        run_spec(&s, (int)v[n][6], what);
    }
}

static void test_errors(void)
{
    char err[512];
    oc_case k = {.op = "LSTM", .nb_out = 1};
    static const char bad[] = "Sigmoid\0Swish\0Tanh";
    prt_field f[2] = {{"activations", bad, PRT_FIELD_CHAR, sizeof bad}};
    prt_plugin *pl = NULL;
    prt_engine *e;
    int32_t mask = 2;
    CHECK_ERR(ot_make_op("LSTM", f, 1, &pl), PRT_ERR_UNSUPPORTED, "activation 'Swish'");
    /* Nine fields besides their defaults do not fit a built-in. */
    {
        static const char acts[] = "Sigmoid\0Tanh\0Tanh";
        const int32_t three = 3, one = 1, two = 2;
        const float clip = 2.0f, ab[3] = {1, 2, 3};
        prt_field g[9] = {ot_fld_str("direction", "reverse"),
                          ot_fld_i32("hidden_size", &three, 1),
                          ot_fld_i32("layout", &one, 1),
                          ot_fld_f32("clip", &clip),
                          {"activations", acts, PRT_FIELD_CHAR, sizeof acts},
                          {"activation_alpha", ab, PRT_FIELD_FLOAT32, 3},
                          {"activation_beta", ab, PRT_FIELD_FLOAT32, 3},
                          ot_fld_i32("input_forget", &one, 1),
                          ot_fld_i32("nb_outputs", &two, 1)};
        CHECK_ERR(ot_make_op("LSTM", g, 9, &pl), PRT_ERR_UNSUPPORTED,
                  "this combination needs 9 fields besides their defaults");
        CHECK_OK(ot_make_op("LSTM", g, 8, &pl));
        if (pl)
            pl->vt->runtime->destroy(pl);
    }
    /* W for another hidden size: the build names W and its dims. */
    k.in[0] = ot_make(PRT_FLOAT32, D3(2, 1, 3));
    k.in[1] = ot_make(PRT_FLOAT32, D3(1, 16, 3));
    k.in[2] = ot_make(PRT_FLOAT32, D3(1, 20, 5));
    k.nb = 3;
    e = oc_build(PRT_DEVICE_CPU, &k, err, sizeof err);
    CHECK(!e && strstr(err, "W is [1, 16, 3]; it must be [1, 20, 3]"));
    prt_engine_destroy(e);
    oc_free(&k);
    /* A length past T fails the run, naming it. */
    {
        ot_tensor x[4], y = {0};
        int32_t one = 1;
        x[0] = ot_make(PRT_FLOAT32, D3(2, 1, 3));
        x[1] = ot_make(PRT_FLOAT32, D3(1, 4, 3));
        x[2] = ot_make(PRT_FLOAT32, D3(1, 4, 4));
        x[3] = ot_make(PRT_INT32, D1(1));
        ot_set(&x[3], 0, 3);
        f[0] = ot_fld_i32("inputs", &mask, 1);
        f[1] = ot_fld_i32("nb_outputs", &one, 1);
        e = NULL;
        CHECK_OK(ot_build_op("RNN", f, 2, x, 4, NULL, &e));
        if (e) {
            CHECK(ot_run_engine(e, x, 4, &y) != PRT_OK);
            CHECK(
                strstr(prt_last_error(), "sequence_lens[0] is 3; it must lie in [0, 2]"));
        }
        ot_free(&y);
        prt_engine_destroy(e);
        for (int i = 0; i < 4; i++)
            ot_free(&x[i]);
    }
}

int main(void)
{
    test_random_layers();
    test_wide();
    test_errors();
    return tu_finish("test_ops_rnn");
}
