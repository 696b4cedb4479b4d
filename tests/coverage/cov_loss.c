/*
 * Generators of the coverage matrix (cov.h) for the losses
 * (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss),
 * MeanVarianceNormalization and Det. Targets lie in [0, C) but where they
 * are ignore_index (the CPU fails the run on any other, CUDA counts it as
 * ignored: the two differ there by design). Every reduction, with and
 * without weights and ignore_index, [N, C] and [N, C, d1, ...], enough
 * positions for CUDA's block sums to take several rounds, every position
 * ignored (mean NaN), none at all.
 */
#include <math.h>
#include <stdio.h>

#include "cov.h"

static int64_t rnd(cov *c, int64_t lo, int64_t hi)
{
    return tu_rng_range(cov_rng(c), lo, hi);
}

static void scale_values(ot_tensor *t, double scale)
{
    for (int64_t i = 0; i < tu_volume(&t->dims); i++)
        ot_set(t, i, ot_get(t, i) * scale);
}

static const char *const red_names[3] = {"none", "sum", "mean"};

/* One loss case: scores of dims xd, targets of dtype tdt in [0, C), a
 * share of them (1 in `every`; 0: none) set to ignore_index when ii is
 * given (has_ii), a weight when `weight`. */
typedef struct loss_spec {
    prt_dims xd;
    int32_t tdt, red, has_ii, ii, every, weight, log_prob, specials;
} loss_spec;

static void loss_case(cov *c, const char *op, int32_t dt, const loss_spec *s)
{
    const int32_t r = s->xd.nb_dims, sce = op[0] == 'S';
    const int64_t C = s->xd.d[1];
    int32_t two = 2, ii = s->ii;
    prt_dims td = s->xd;
    prt_field f[3];
    oc_case k = {.op = op, .f = f, .nb = 2};
    char what[160];
    k.rtol = cov_rtol(dt, 1e-6);
    td.nb_dims = r - 1;
    for (int32_t i = 1; i < r - 1; i++)
        td.d[i] = s->xd.d[i + 1];
    f[k.nf++] = ot_fld_str("reduction", red_names[s->red]);
    if (s->has_ii)
        f[k.nf++] = ot_fld_i32("ignore_index", &ii, 1);
    if (sce && s->log_prob) {
        f[k.nf++] = ot_fld_i32("nb_outputs", &two, 1);
        k.nb_out = 2;
    }
    k.in[0] = cov_random(c, dt, s->xd, s->specials);
    scale_values(&k.in[0], sce ? 6.0 : 1.0);
    k.in[1] = ot_make(s->tdt, td);
    for (int64_t i = 0; i < tu_volume(&td); i++) {
        int ignored = s->has_ii && s->every && rnd(c, 0, s->every - 1) == 0;
        ot_set(&k.in[1], i, ignored || C == 0 ? (double)ii : (double)rnd(c, 0, C - 1));
    }
    if (s->weight) {
        /* Positive, as class weights are: a weighted mean of mixed signs
         * may divide by nearly 0. */
        k.in[2] = cov_random(c, dt, D1(C), 0);
        for (int64_t i = 0; i < C; i++)
            ot_set(&k.in[2], i, fabs(ot_get(&k.in[2], i)) + 0.125);
        k.role[2] = rnd(c, 0, 1) ? OC_CONST : OC_DATA;
        k.nb = 3;
    }
    snprintf(what, sizeof what, "%s reduction %s%s%s%s, %s targets", op,
             red_names[s->red], s->has_ii ? " ignore_index" : "",
             s->weight ? " weight" : "", k.nb_out == 2 ? " log_prob" : "",
             prt_dtype_name(s->tdt));
    cov_case(c, what, &k);
}

/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss. */
static void gen_loss(cov *c, const char *op, int32_t dt)
{
    const int32_t i64 = PRT_INT64, i32 = PRT_INT32;
    const loss_spec specs[] = {
        {D2(rnd(c, 1, 9), rnd(c, 1, 9)), i64, 2, 0, 0, 0, 0, 0, 0},
        {D3(rnd(c, 1, 5), 5, rnd(c, 1, 7)), i32, 1, 1, 2, 4, 1, 1, 0},
        {D4(rnd(c, 1, 3), 4, rnd(c, 1, 5), rnd(c, 1, 5)), i64, 0, 1, -1, 3, 1, 1, 0},
        {D3(3, 7, 700), i64, 2, 1, -100, 5, 1, 0, 0},
        {D3(2, 3, 4), i32, 2, 1, 1, 1, 1, 1, 0},
        {D3(0, 3, 2), i64, 2, 0, 0, 0, 1, 1, 0},
        {D2(rnd(c, 1, 9), 6), i64, 0, 0, 0, 0, 0, 1, 1},
        {ot_dims5(5, 2, 3, 2, 1, 3), i32, 1, 0, 0, 0, 1, 0, 0},
    };
    for (size_t v = 0; v < sizeof specs / sizeof specs[0]; v++)
        loss_case(c, op, dt, &specs[v]);
}

/* MeanVarianceNormalization: the default axes on rank 4, one axis, a
 * negative one, every dim (empty axes), axes apart, groups of thousands
 * of elements (CUDA's block sums) and of one. */
static void gen_mvn(cov *c, const char *op, int32_t dt)
{
    static const int32_t axes[6][3] = {{0, 2, 3}, {1, 0, 0}, {-1, 0, 0},
                                       {0, 0, 0}, {0, 2, 0}, {2, 3, 0}};
    static const int32_t nb[6] = {3, 1, 1, 0, 2, 2};
    for (int v = 0; v < 7; v++) {
        const int a = v % 6;
        prt_dims d = v == 1                       ? D3(rnd(c, 1, 4), 3000, rnd(c, 1, 3))
                     : v == 6                     ? D4(1, 5, 1, 1)
                     : a == 1 || a == 2 || a == 4 ? cov_dims(c, 3, 1)
                                                  : cov_dims(c, 4, 1);
        prt_field f[1] = {ot_fld_i32("axes", axes[a], nb[a])};
        oc_case k = {.op = op, .f = f, .nf = 1, .nb = 1};
        char what[96];
        k.rtol = cov_rtol(dt, 1e-5);
        k.in[0] = cov_random(c, dt, d, 0);
        scale_values(&k.in[0], 4.0);
        snprintf(what, sizeof what, "MeanVarianceNormalization %d axes from %d", nb[a],
                 (int)axes[a][0]);
        cov_case(c, what, &k);
    }
}

/* Det: 1 x 1 to 8 x 8, batches of rank 0 to 2, an empty matrix, an empty
 * batch, a singular matrix (two equal rows). */
static void gen_det(cov *c, const char *op, int32_t dt)
{
    static const int64_t ms[7] = {3, 1, 2, 5, 8, 0, 4};
    for (int v = 0; v < 7; v++) {
        const int64_t m = ms[v];
        prt_dims d = v == 0   ? D2(m, m)
                     : v == 2 ? D3(0, m, m)
                     : v % 2  ? D3(rnd(c, 1, 40), m, m)
                              : D4(rnd(c, 1, 3), rnd(c, 1, 4), m, m);
        oc_case k = {.op = op, .nb = 1};
        char what[96];
        k.rtol = cov_rtol(dt, 1e-6);
        k.in[0] = cov_random(c, dt, d, 0);
        if (v == 6) /* row 1 = row 0 in every matrix */
            for (int64_t b = 0; b < tu_volume(&d) / 16; b++)
                for (int64_t j = 0; j < 4; j++)
                    ot_set(&k.in[0], b * 16 + 4 + j, ot_get(&k.in[0], b * 16 + j));
        snprintf(what, sizeof what, "Det %lld x %lld%s", (long long)m, (long long)m,
                 v == 6 ? " singular" : "");
        cov_case(c, what, &k);
    }
}

const cov_entry cov_loss_entries[] = {
    {"NegativeLogLikelihoodLoss", gen_loss},
    {"SoftmaxCrossEntropyLoss", gen_loss},
    {"MeanVarianceNormalization", gen_mvn},
    {"Det", gen_det},
    {NULL, NULL},
};
