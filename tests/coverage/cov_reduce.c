/*
 * Generators of the coverage matrix (cov.h) for the reductions and scans:
 * reduce.c's ten Reduce ops, ArgMax and ArgMin, CumSum, TopK. Axes come as
 * fields and as constant shape inputs (ONNX's later opsets), negative ones
 * too; values have ties (the arg ops and TopK pick among equals by index)
 * and, for floats, NaN and infinities.
 */
#include <math.h>
#include <string.h>

#include "cov.h"

static int64_t rnd(cov *c, int64_t lo, int64_t hi)
{
    return tu_rng_range(cov_rng(c), lo, hi);
}

/* A constant int64 tensor of n values, 0-D for n -1 (CumSum's axis). */
static ot_tensor i64s(int32_t n, const int64_t *v)
{
    ot_tensor t = ot_make(PRT_INT64, n < 0 ? D0() : D1(n));
    for (int32_t i = 0; i < (n < 0 ? 1 : n); i++)
        ot_set(&t, i, (double)v[i]);
    return t;
}

/* Few distinct values, so that equal ones meet: floats in steps of 1/4,
 * integers in [-4, 4]. NaN and infinities stay. */
static void make_ties(ot_tensor *t)
{
    for (int64_t i = 0; i < tu_volume(&t->dims); i++) {
        double x = ot_get(t, i);
        ot_set(t, i, ot_is_float(t->dtype) ? floor(x * 4) / 4 : fmod(x, 5));
    }
}

/* The Reduce ops: axes a random subset (field or shape input, negative
 * ones too), every axis, noop_with_empty_axes, long rows and a strided
 * axis, keepdims both ways, empty dims; values in each op's domain
 * (LogSum's positive, Prod's near 1), LogSumExp past float's exp. */
static void gen_reduce(cov *c, const char *op, int32_t dt)
{
    const int is_f = ot_is_float(dt);
    const int extreme = !strcmp(op, "ReduceMax") || !strcmp(op, "ReduceMin");
    const int log_sum = !strcmp(op, "ReduceLogSum"), prod = !strcmp(op, "ReduceProd");
    for (int v = 0; v < 6; v++) {
        int32_t rank = (int32_t)rnd(c, 1, 4), keep = v % 2, noop = 1, nb_axes = 0;
        int32_t axes[PRT_MAX_DIMS];
        int64_t axes64[PRT_MAX_DIMS];
        prt_dims d = v == 4 ? D2(3, 600) : v == 5 ? D3(4, 300, 3) : cov_dims(c, rank, 1);
        prt_field f[3];
        oc_case k = {.op = op, .f = f, .nb = 1, .exact = extreme || !is_f};
        char what[128];
        k.rtol = cov_rtol(dt, 1e-6);
        rank = d.nb_dims;
        if (v == 4 || v == 5) {
            axes[nb_axes++] = v == 4 ? -1 : 1;
        } else if (v < 2) {
            for (int32_t i = 0; i < rank; i++)
                if (rnd(c, 0, 1))
                    axes[nb_axes++] = rnd(c, 0, 1) ? i - rank : i;
            if (nb_axes == 0)
                axes[nb_axes++] = -rank;
        }
        f[k.nf++] = ot_fld_i32("keepdims", &keep, 1);
        if (v == 3) /* no axes: the input itself */
            f[k.nf++] = ot_fld_i32("noop_with_empty_axes", &noop, 1);
        if (v == 1 || v == 5) {
            for (int32_t i = 0; i < nb_axes; i++)
                axes64[i] = axes[i];
            k.in[1] = i64s(nb_axes, axes64);
            k.role[1] = OC_SHAPE;
            k.nb = 2;
        } else if (v != 2) {
            f[k.nf++] = ot_fld_i32("axes", axes, nb_axes);
        }
        k.in[0] = cov_random(c, dt, d, v == 2);
        for (int64_t i = 0; i < tu_volume(&d); i++) {
            double x = ot_get(&k.in[0], i);
            if (log_sum)
                ot_set(&k.in[0], i, fabs(x) + (is_f ? 0.25 : 1));
            else if (prod)
                ot_set(&k.in[0], i, is_f ? 1 + x / 8 : fmod(x, 4));
            else if (!strcmp(op, "ReduceLogSumExp") && is_f && v == 4)
                ot_set(&k.in[0], i, x + 80); /* e^x overflows float */
        }
        snprintf(what, sizeof what, "%s keepdims %d, axes%s", op, (int)keep,
                 k.nb == 2 ? " (input)"
                 : v == 2  ? " absent"
                           : "");
        for (int32_t i = 0; i < nb_axes; i++)
            cov_append(what, sizeof what, " %d", (int)axes[i]);
        if (v == 3)
            cov_append(what, sizeof what, " none, noop_with_empty_axes");
        cov_case(c, what, &k);
    }
}

/* ArgMax and ArgMin: every axis, keepdims, select_last_index, ties and
 * NaN, long axes at either end. */
static void gen_arg(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 6; v++) {
        int32_t rank = (int32_t)rnd(c, 1, 4), axis = (int32_t)rnd(c, -rank, rank - 1);
        int32_t keep = v % 2, last = v / 2 % 2;
        prt_dims d = cov_dims(c, rank, 1);
        prt_field f[3] = {ot_fld_i32("axis", &axis, 1), ot_fld_i32("keepdims", &keep, 1),
                          ot_fld_i32("select_last_index", &last, 1)};
        oc_case k = {.op = op, .f = f, .nf = 3, .nb = 1, .exact = 1};
        char what[96];
        if (v >= 4) {
            d = v == 4 ? D2(3, 300) : D2(300, 3);
            axis = v == 4 ? -1 : 0;
        }
        if (d.d[axis < 0 ? axis + d.nb_dims : axis] == 0)
            d.d[axis < 0 ? axis + d.nb_dims : axis] = 3; /* no index of nothing */
        k.in[0] = cov_random(c, dt, d, v % 3 == 1);
        make_ties(&k.in[0]);
        snprintf(what, sizeof what, "%s axis %d keepdims %d select_last_index %d", op,
                 (int)axis, (int)keep, (int)last);
        cov_case(c, what, &k);
    }
}

/* CumSum: every axis, as a 0-D shape input or the field, exclusive and
 * reverse, a long axis, empty dims, NaN and infinities. */
static void gen_cumsum(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 5; v++) {
        int32_t rank = (int32_t)rnd(c, 1, 4), axis = (int32_t)rnd(c, -rank, rank - 1);
        int32_t excl = v & 1, rev = v >> 1 & 1, as_input = v % 3 != 1;
        int64_t axis64;
        prt_dims d = cov_dims(c, rank, 1);
        prt_field f[3] = {ot_fld_i32("exclusive", &excl, 1),
                          ot_fld_i32("reverse", &rev, 1), ot_fld_i32("axis", &axis, 1)};
        oc_case k = {.op = op, .f = f, .nf = as_input ? 2 : 3, .nb = 1};
        char what[96];
        k.rtol = cov_rtol(dt, 1e-6);
        k.exact = !ot_is_float(dt);
        if (v == 4) {
            d = D3(2, 3, 300);
            axis = -1;
        }
        axis64 = axis;
        if (as_input) {
            k.in[1] = i64s(-1, &axis64);
            k.role[1] = OC_SHAPE;
            k.nb = 2;
        }
        k.in[0] = cov_random(c, dt, d, v == 2);
        snprintf(what, sizeof what, "CumSum axis %d%s exclusive %d reverse %d", (int)axis,
                 as_input ? " (input)" : "", (int)excl, (int)rev);
        cov_case(c, what, &k);
    }
}

/* TopK: K a shape input or the field k, largest and smallest, every axis,
 * K of 0 and of the whole axis, a long axis, ties and NaN. */
static void gen_topk(cov *c, const char *op, int32_t dt)
{
    for (int v = 0; v < 6; v++) {
        int32_t rank = (int32_t)rnd(c, 1, 3), axis = (int32_t)rnd(c, -rank, rank - 1);
        int32_t largest = v % 2, sorted = 1, k32;
        prt_dims d = cov_dims(c, rank, 1);
        int64_t len, K;
        prt_field f[4];
        oc_case k = {.op = op, .f = f, .nf = 3, .nb = 1, .nb_out = 2, .exact = 1};
        char what[96];
        if (v >= 4) {
            d = D2(3, 400);
            axis = -1;
        }
        len = d.d[axis < 0 ? axis + d.nb_dims : axis];
        K = v == 2 ? len : v == 3 ? 0 : v == 4 ? 37 : rnd(c, 0, len);
        k32 = (int32_t)K;
        f[0] = ot_fld_i32("axis", &axis, 1);
        f[1] = ot_fld_i32("largest", &largest, 1);
        f[2] = ot_fld_i32("sorted", &sorted, 1);
        if (v == 1) {
            f[k.nf++] = ot_fld_i32("k", &k32, 1);
        } else {
            k.in[1] = i64s(1, &K);
            k.role[1] = OC_SHAPE;
            k.nb = 2;
        }
        k.in[0] = cov_random(c, dt, d, v % 3 == 0);
        make_ties(&k.in[0]);
        snprintf(what, sizeof what, "TopK axis %d K %lld%s largest %d", (int)axis,
                 (long long)K, v == 1 ? " (field)" : "", (int)largest);
        cov_case(c, what, &k);
    }
}

const cov_entry cov_reduce_entries[] = {
    {"ReduceSum", gen_reduce},
    {"ReduceMean", gen_reduce},
    {"ReduceMax", gen_reduce},
    {"ReduceMin", gen_reduce},
    {"ReduceProd", gen_reduce},
    {"ReduceL1", gen_reduce},
    {"ReduceL2", gen_reduce},
    {"ReduceSumSquare", gen_reduce},
    {"ReduceLogSum", gen_reduce},
    {"ReduceLogSumExp", gen_reduce},
    {"ArgMax", gen_arg},
    {"ArgMin", gen_arg},
    {"CumSum", gen_cumsum},
    {"TopK", gen_topk},
    {NULL, NULL},
};
