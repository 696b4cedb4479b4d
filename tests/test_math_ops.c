/*
 * The math and logic built-ins (namespace "plugrt"): Erf, Tanh, Softmax,
 * LayerNormalization, Equal, GreaterOrEqual, And, IsNaN, Where,
 * GatherElements, each in a one-layer network that is built, run,
 * serialized, loaded through an empty registry and run again (both runs must
 * give the same bytes), and compared with a plain C reference written here
 * in double:
 *
 *  - Erf and Tanh against erf() and tanh() from libm, with infinities, NaN,
 *    zeros and tiny values; float16 and bfloat16;
 *  - Softmax on ranks 1..4 along every axis (negative too, and the default),
 *    large inputs (the maximum is subtracted), -inf entries, NaN rows, half
 *    floats, dynamic dims, errors;
 *  - LayerNormalization on ranks 1..4 along every axis, Scale and B of the
 *    normalized dims' shape or broadcast (1s, fewer dims, leading 1s), B
 *    absent, epsilon, half floats, dynamic dims, errors;
 *  - Equal, GreaterOrEqual, And over every dtype they take and broadcast
 *    shapes (NaN, -0, infinities), IsNaN, dtype and shape errors;
 *  - Where over dtypes and three-way broadcasting, errors;
 *  - GatherElements on ranks 1..4 along every axis, int32 and int64
 *    indices, negative indices, an out-of-range index (a clear error), shape
 *    errors;
 *  - allocation failure at every point of a LayerNormalization build and run.
 *
 * The tensor and one-op network helpers are op_testutil.h's, shared with
 * test_ops.c.
 */
#include <math.h>
#include <stdlib.h>

#include "base/base.h"
#include "op_testutil.h"

/* The tolerance of a result computed in float32 and rounded once to dt,
 * relative to max(1, |want|): a few units in the last place. */
static double tol_for(int32_t dt, double f32_tol)
{
    return dt == PRT_FLOAT16 ? 2e-3 : dt == PRT_BFLOAT16 ? 1.6e-2 : f32_tol;
}

static const int32_t float_types[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16};
#define NB_FLOAT_TYPES 3

/* ---- the table ------------------------------------------------------------- */

static int test_table(void)
{
    static const char *const names[] = {
        "Erf", "Tanh",  "Softmax", "LayerNormalization", "Equal", "GreaterOrEqual",
        "And", "IsNaN", "Where",   "GatherElements"};
    static const int32_t nb_fields[] = {0, 0, 2, 4, 0, 0, 0, 0, 0, 1};
    const prt_plugin_creator *c = NULL;
    for (int i = 0; i < 10; i++) {
        CHECK_OK(prt_builtin_find_creator(names[i], "1", &c));
        CHECK(c && strcmp(c->name, names[i]) == 0 &&
              strcmp(c->plugin_namespace, PRT_BUILTIN_NAMESPACE) == 0 &&
              c->nb_fields == nb_fields[i]);
    }
    REQUIRE_OK(prt_builtin_find_creator("LayerNormalization", "1", &c));
    CHECK(strcmp(c->fields[0].name, "axis") == 0 &&
          c->fields[0].type == PRT_FIELD_INT32 &&
          strcmp(c->fields[1].name, "epsilon") == 0 &&
          c->fields[1].type == PRT_FIELD_FLOAT32 &&
          strcmp(c->fields[2].name, "stash_type") == 0);
    REQUIRE_OK(prt_builtin_find_creator("Softmax", "1", &c));
    CHECK(strcmp(c->fields[0].name, "axis") == 0);
    return 0;
}

/* ---- Erf and Tanh -------------------------------------------------------------- */

static int test_erf_tanh(void)
{
    tu_rng rng;
    tu_rng_seed(&rng, 17);
    for (int tanh_op = 0; tanh_op < 2; tanh_op++)
        for (int t = 0; t < NB_FLOAT_TYPES; t++) {
            const char *name = tanh_op ? "Tanh" : "Erf";
            int32_t dt = float_types[t];
            ot_tensor x = ot_random(dt, D3(3, 5, 8), &rng, 0), y;
            double want[120];
            char what[64];
            /* Past both saturations, and the special values. */
            for (int64_t i = 0; i < 120; i++)
                ot_set(&x, i, ot_get(&x, i) * 5.0);
            ot_set(&x, 0, 0.0);
            ot_set(&x, 1, -0.0);
            ot_set(&x, 2, INFINITY);
            ot_set(&x, 3, -INFINITY);
            ot_set(&x, 4, NAN);
            ot_set(&x, 5, 1e-30);
            ot_set(&x, 6, 0.5);
            ot_set(&x, 7, -12.0);
            for (int64_t i = 0; i < 120; i++) {
                double v = ot_get(&x, i);
                want[i] = tanh_op ? tanh(v) : erf(v);
            }
            snprintf(what, sizeof what, "%s %s", name, prt_dtype_name(dt));
            CHECK_OK(ot_run_op(name, NULL, 0, &x, 1, &y));
            if (y.data) {
                ot_check_close(what, &y, &x.dims, want, tol_for(dt, 1e-6));
                CHECK(ot_get(&y, 2) == 1.0 && ot_get(&y, 3) == -1.0 &&
                      isnan(ot_get(&y, 4)) && ot_get(&y, 7) == -1.0);
                CHECK(ot_get(&y, 0) == 0.0 && signbit(ot_get(&y, 1)));
            }
            ot_free(&x);
            ot_free(&y);
        }
    /* Dynamic dims, an empty tensor, a scalar. */
    {
        uint32_t dyn[1] = {0x3u};
        ot_tensor x = ot_random(PRT_FLOAT32, D2(4, 6), &rng, 0), y;
        double want[24];
        for (int64_t i = 0; i < 24; i++)
            want[i] = erf(ot_get(&x, i));
        CHECK_OK(ot_run_op_dyn("Erf", NULL, 0, &x, 1, dyn, &y));
        if (y.data)
            ot_check_close("Erf dynamic", &y, &x.dims, want, 1e-6);
        ot_free(&x);
        ot_free(&y);
        x = ot_make(PRT_FLOAT32, D2(0, 3));
        CHECK_OK(ot_run_op("Tanh", NULL, 0, &x, 1, &y));
        CHECK(y.dims.nb_dims == 2 && y.dims.d[0] == 0);
        ot_free(&x);
        ot_free(&y);
        x = ot_make(PRT_FLOAT32, D0());
        ot_set(&x, 0, 0.25);
        want[0] = tanh((double)0.25f);
        CHECK_OK(ot_run_op("Tanh", NULL, 0, &x, 1, &y));
        if (y.data)
            ot_check_close("Tanh scalar", &y, &x.dims, want, 1e-6);
        ot_free(&x);
        ot_free(&y);
    }
    /* Integers are refused; fields are unknown. */
    {
        ot_tensor x = ot_make(PRT_INT32, D1(4)), y;
        const int32_t one = 1;
        prt_field f = ot_fld_i32("axis", &one, 1);
        prt_plugin *p = NULL;
        CHECK_ERR(ot_run_op("Erf", NULL, 0, &x, 1, &y), PRT_ERR_UNSUPPORTED,
                  "dtype int32 is not supported (supported: float32, float16, "
                  "bfloat16 or float64)");
        CHECK_ERR(ot_make_op("Tanh", &f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "unknown field 'axis'");
        ot_free(&x);
    }
    return 0;
}

/* ---- Softmax ------------------------------------------------------------------- */

/* Softmax of x along axis (in [0, r)) in double; a NaN makes its row NaN. */
static void ref_softmax(const ot_tensor *x, int32_t axis, double *want)
{
    const prt_dims *d = &x->dims;
    int64_t outer = 1, inner = 1, n = d->d[axis];
    for (int32_t i = 0; i < axis; i++)
        outer *= d->d[i];
    for (int32_t i = axis + 1; i < d->nb_dims; i++)
        inner *= d->d[i];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            int64_t base = o * n * inner + j;
            double mx = -INFINITY, sum = 0;
            int nan = 0;
            for (int64_t k = 0; k < n; k++) {
                double v = ot_get(x, base + k * inner);
                nan |= v != v;
                mx = v > mx ? v : mx;
            }
            for (int64_t k = 0; k < n; k++)
                sum += exp(ot_get(x, base + k * inner) - mx);
            for (int64_t k = 0; k < n; k++)
                want[base + k * inner] =
                    nan ? NAN : exp(ot_get(x, base + k * inner) - mx) / sum;
        }
}

static int test_softmax(void)
{
    const prt_dims shapes[] = {D1(7), D2(3, 5), D3(2, 3, 4), D4(2, 3, 2, 5),
                               D5(1, 2, 3, 2, 2)};
    tu_rng rng;
    tu_rng_seed(&rng, 29);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int32_t r = shapes[s].nb_dims;
        for (int32_t a = -r - 1; a < r; a++) /* -r-1: the default */
            for (int t = 0; t < NB_FLOAT_TYPES; t++) {
                int32_t dt = float_types[t], axis = a < -r ? -1 : a;
                prt_field f = ot_fld_i32("axis", &axis, 1);
                ot_tensor x = ot_random(dt, shapes[s], &rng, 0), y;
                int64_t n = tu_volume(&x.dims);
                double *want = malloc(sizeof(double) * (size_t)n);
                char what[96];
                REQUIRE(want != NULL);
                for (int64_t i = 0; i < n; i++)
                    ot_set(&x, i, ot_get(&x, i) * 6.0);
                ref_softmax(&x, axis < 0 ? axis + r : axis, want);
                snprintf(what, sizeof what, "Softmax rank %d axis %d%s %s", (int)r,
                         (int)axis, a < -r ? " (default)" : "", prt_dtype_name(dt));
                CHECK_OK(ot_run_op("Softmax", &f, a < -r ? 0 : 1, &x, 1, &y));
                if (y.data)
                    ot_check_close(what, &y, &x.dims, want, tol_for(dt, 1e-6));
                free(want);
                ot_free(&x);
                ot_free(&y);
            }
    }
    /* Stability and special values, rows along the last axis: huge values,
     * -inf entries, a NaN row, an all -inf row (NaN, as the reference). */
    {
        ot_tensor x = ot_make(PRT_FLOAT32, D2(5, 4)), y;
        static const double v[20] = {1000,  1001,      1002,      999,       -1000,
                                     -1001, -999,      -1002,     0,         -INFINITY,
                                     1,     -INFINITY, 1,         NAN,       2,
                                     3,     -INFINITY, -INFINITY, -INFINITY, -INFINITY};
        double want[20];
        for (int i = 0; i < 20; i++)
            ot_set(&x, i, v[i]);
        ref_softmax(&x, 1, want);
        CHECK(!isnan(want[0]) && isnan(want[12]) && isnan(want[16]));
        CHECK_OK(ot_run_op("Softmax", NULL, 0, &x, 1, &y));
        if (y.data) {
            ot_check_close("Softmax special values", &y, &x.dims, want, 1e-6);
            CHECK(ot_get(&y, 9) == 0.0 && ot_get(&y, 11) == 0.0);
        }
        ot_free(&x);
        ot_free(&y);
    }
    /* Dynamic dims along and across the axis; the field survives loading. */
    {
        uint32_t dyn[1] = {0x5u};
        int32_t axis = 1;
        prt_field f = ot_fld_i32("axis", &axis, 1);
        ot_tensor x = ot_random(PRT_FLOAT32, D3(2, 6, 3), &rng, 0), y;
        double want[36];
        ref_softmax(&x, 1, want);
        CHECK_OK(ot_run_op_dyn("Softmax", &f, 1, &x, 1, dyn, &y));
        if (y.data)
            ot_check_close("Softmax dynamic", &y, &x.dims, want, 1e-6);
        ot_free(&x);
        ot_free(&y);
    }
    /* Errors: axis out of range, a scalar, integers, a bad field type. */
    {
        int32_t axis = 3;
        const float fl = 1;
        prt_field f = ot_fld_i32("axis", &axis, 1);
        prt_plugin *p = NULL;
        ot_tensor x = ot_make(PRT_FLOAT32, D3(2, 3, 4)), y;
        CHECK_ERR(ot_run_op("Softmax", &f, 1, &x, 1, &y), PRT_ERR_SHAPE,
                  "axis 3 is out of range for an input of rank 3 (-3 to 2)");
        axis = -4;
        CHECK_ERR(ot_run_op("Softmax", &f, 1, &x, 1, &y), PRT_ERR_SHAPE,
                  "axis -4 is out of range");
        ot_free(&x);
        x = ot_make(PRT_FLOAT32, D0());
        CHECK_ERR(ot_run_op("Softmax", NULL, 0, &x, 1, &y), PRT_ERR_SHAPE,
                  "rank 1 or more");
        ot_free(&x);
        x = ot_make(PRT_INT64, D1(3));
        CHECK_ERR(ot_run_op("Softmax", NULL, 0, &x, 1, &y), PRT_ERR_UNSUPPORTED,
                  "dtype int64 is not supported");
        ot_free(&x);
        f = ot_fld_f32("axis", &fl);
        CHECK_ERR(ot_make_op("Softmax", &f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "field 'axis'");
    }
    return 0;
}

/* ---- LayerNormalization ---------------------------------------------------------- */

/* Y of LayerNormalization in double. s and b (b may be NULL) broadcast to
 * the normalized dims (numpy's rule, aligned at the right). */
static void ref_ln(const ot_tensor *x, const ot_tensor *s, const ot_tensor *b,
                   int32_t axis, double eps, double *want)
{
    const prt_dims *d = &x->dims;
    int64_t norm = 1, rows = 1, idx[PRT_MAX_DIMS];
    for (int32_t i = 0; i < axis; i++)
        rows *= d->d[i];
    for (int32_t i = axis; i < d->nb_dims; i++)
        norm *= d->d[i];
    for (int64_t r = 0; r < rows; r++) {
        double mean = 0, var = 0, inv;
        for (int64_t p = 0; p < norm; p++)
            mean += ot_get(x, r * norm + p);
        mean /= (double)norm;
        for (int64_t p = 0; p < norm; p++) {
            double dv = ot_get(x, r * norm + p) - mean;
            var += dv * dv;
        }
        inv = 1.0 / sqrt(var / (double)norm + eps);
        for (int64_t p = 0; p < norm; p++) {
            int64_t i = r * norm + p;
            double v;
            ot_unravel(d, i, idx);
            v = (ot_get(x, i) - mean) * inv * ot_get(s, ot_bcast_at(&s->dims, d, idx));
            if (b)
                v += ot_get(b, ot_bcast_at(&b->dims, d, idx));
            want[i] = v;
        }
    }
}

/* One case: X of dims xd, Scale of sd, B of bd (nb_dims < 0: absent). */
static int ln_case(int32_t dt, prt_dims xd, int32_t axis, int given_axis, prt_dims sd,
                   prt_dims bd, const float *eps, tu_rng *rng, const uint32_t *dyn)
{
    prt_field f[2];
    int32_t nf = 0, nb_in = bd.nb_dims < 0 ? 2 : 3;
    int32_t r = xd.nb_dims;
    ot_tensor in[3], y;
    int64_t n = tu_volume(&xd);
    double *want = malloc(sizeof(double) * (size_t)(n ? n : 1));
    char what[320], a[64], b[64], c[64];
    REQUIRE(want != NULL);
    in[0] = ot_random(dt, xd, rng, 0);
    in[1] = ot_random(dt, sd, rng, 0);
    if (nb_in == 3)
        in[2] = ot_random(dt, bd, rng, 0);
    for (int64_t i = 0; i < n; i++) /* an offset, so the mean matters */
        ot_set(&in[0], i, ot_get(&in[0], i) * 3.0 + 2.0);
    if (given_axis)
        f[nf++] = ot_fld_i32("axis", &axis, 1);
    if (eps)
        f[nf++] = ot_fld_f32("epsilon", eps);
    ref_ln(&in[0], &in[1], nb_in == 3 ? &in[2] : NULL, axis < 0 ? axis + r : axis,
           eps ? (double)*eps : 1e-5, want);
    base_dims_str(&xd, a, sizeof a);
    base_dims_str(&sd, b, sizeof b);
    if (nb_in == 3)
        base_dims_str(&bd, c, sizeof c);
    snprintf(what, sizeof what, "LayerNorm X %s axis %d Scale %s B %s %s%s", a, (int)axis,
             b, nb_in == 3 ? c : "none", prt_dtype_name(dt), dyn ? " dynamic" : "");
    CHECK_OK(ot_run_op_dyn("LayerNormalization", f, nf, in, nb_in, dyn, &y));
    if (y.data)
        ot_check_close(what, &y, &xd, want, tol_for(dt, 1e-4));
    free(want);
    for (int32_t k = 0; k < nb_in; k++)
        ot_free(&in[k]);
    ot_free(&y);
    return 0;
}

static int test_layer_norm(void)
{
    const prt_dims shapes[] = {D1(7), D2(3, 5), D3(2, 3, 4), D4(2, 3, 2, 5)};
    const prt_dims none = {-1, {0}};
    const float eps = 0.25f;
    tu_rng rng;
    tu_rng_seed(&rng, 43);
    /* Every rank and axis; Scale and B of the normalized dims. */
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int32_t r = shapes[s].nb_dims;
        for (int32_t a = -r - 1; a < r; a++)
            for (int t = 0; t < NB_FLOAT_TYPES; t++) {
                int32_t axis = a < -r ? -1 : a, ax = axis < 0 ? axis + r : axis;
                prt_dims nd;
                nd.nb_dims = r - ax;
                for (int32_t i = 0; i < nd.nb_dims; i++)
                    nd.d[i] = shapes[s].d[ax + i];
                ln_case(float_types[t], shapes[s], axis, a >= -r, nd, (a & 1) ? none : nd,
                        (a & 2) ? &eps : NULL, &rng, NULL);
            }
    }
    /* Broadcast Scale and B: 1s, fewer dims, leading 1s before the axis. */
    ln_case(PRT_FLOAT32, D3(2, 3, 4), 1, 1, D2(1, 4), D1(4), NULL, &rng, NULL);
    ln_case(PRT_FLOAT32, D3(2, 3, 4), 1, 1, D3(1, 3, 4), D2(3, 1), NULL, &rng, NULL);
    ln_case(PRT_FLOAT32, D3(2, 3, 4), 1, 1, D0(), D3(1, 1, 1), NULL, &rng, NULL);
    ln_case(PRT_FLOAT16, D4(2, 3, 2, 5), -2, 1, D1(5), D2(2, 1), &eps, &rng, NULL);
    /* bert's shape: [batch, sequence, hidden] over the hidden dim, with a
     * dynamic batch and sequence. */
    {
        uint32_t dyn[3] = {0x3u, 0, 0};
        ln_case(PRT_FLOAT32, D3(2, 5, 64), -1, 0, D1(64), D1(64), NULL, &rng, dyn);
    }
    /* A constant row: the variance is 0, so Y is B (epsilon keeps it finite). */
    {
        ot_tensor in[3], y;
        double want[8];
        in[0] = ot_make(PRT_FLOAT32, D2(2, 4));
        in[1] = ot_random(PRT_FLOAT32, D1(4), &rng, 0);
        in[2] = ot_random(PRT_FLOAT32, D1(4), &rng, 0);
        for (int i = 0; i < 8; i++)
            ot_set(&in[0], i, 3.5);
        for (int i = 0; i < 8; i++)
            want[i] = ot_get(&in[2], i % 4);
        CHECK_OK(ot_run_op("LayerNormalization", NULL, 0, in, 3, &y));
        if (y.data)
            ot_check_close("LayerNorm constant rows", &y, &in[0].dims, want, 1e-6);
        for (int k = 0; k < 3; k++)
            ot_free(&in[k]);
        ot_free(&y);
    }
    /* Errors. */
    {
        int32_t axis = 1, st0 = 0;
        const float neg = -1.0f;
        prt_field f = ot_fld_i32("axis", &axis, 1);
        prt_plugin *p = NULL;
        ot_tensor in[3], y;
        in[0] = ot_make(PRT_FLOAT32, D3(2, 3, 4));
        in[1] = ot_make(PRT_FLOAT32, D1(5));
        in[2] = ot_make(PRT_FLOAT32, D1(4));
        CHECK_ERR(ot_run_op("LayerNormalization", NULL, 0, in, 2, &y), PRT_ERR_SHAPE,
                  "Scale [5] cannot be broadcast to X [2, 3, 4]'s normalized "
                  "dims (from axis 2)");
        ot_free(&in[1]);
        in[1] = ot_make(PRT_FLOAT32, D3(2, 3, 4)); /* varies per row */
        CHECK_ERR(ot_run_op("LayerNormalization", &f, 1, in, 2, &y), PRT_ERR_SHAPE,
                  "Scale [2, 3, 4] cannot be broadcast");
        ot_free(&in[1]);
        in[1] = ot_make(PRT_FLOAT32, D4(1, 2, 3, 4));
        CHECK_ERR(ot_run_op("LayerNormalization", NULL, 0, in, 2, &y), PRT_ERR_SHAPE,
                  "Scale has rank 4, more than X's 3");
        ot_free(&in[1]);
        in[1] = ot_make(PRT_FLOAT32, D1(4));
        ot_free(&in[2]);
        in[2] = ot_make(PRT_FLOAT32, D1(3));
        CHECK_ERR(ot_run_op("LayerNormalization", NULL, 0, in, 3, &y), PRT_ERR_SHAPE,
                  "B [3] cannot be broadcast");
        CHECK_ERR(ot_run_op("LayerNormalization", NULL, 0, in, 1, &y),
                  PRT_ERR_INVALID_ARGUMENT, "takes 2 to 3 inputs, got 1");
        axis = 3;
        CHECK_ERR(ot_run_op("LayerNormalization", &f, 1, in, 2, &y), PRT_ERR_SHAPE,
                  "axis 3 is out of range for X of rank 3 (-3 to 2)");
        f = ot_fld_i32("stash_type", &st0, 1);
        CHECK_ERR(ot_make_op("LayerNormalization", &f, 1, &p), PRT_ERR_UNSUPPORTED,
                  "stash_type 0 is not supported");
        f = ot_fld_f32("epsilon", &neg);
        CHECK_ERR(ot_make_op("LayerNormalization", &f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "epsilon must be >= 0");
        for (int k = 0; k < 3; k++)
            ot_free(&in[k]);
        /* Dtypes must agree; integers are refused. */
        in[0] = ot_make(PRT_FLOAT32, D2(2, 4));
        in[1] = ot_make(PRT_FLOAT16, D1(4));
        CHECK_ERR(ot_run_op("LayerNormalization", NULL, 0, in, 2, &y),
                  PRT_ERR_INVALID_ARGUMENT, "all inputs must share one dtype");
        ot_free(&in[0]);
        ot_free(&in[1]);
        in[0] = ot_make(PRT_INT32, D2(2, 4));
        in[1] = ot_make(PRT_INT32, D1(4));
        CHECK_ERR(ot_run_op("LayerNormalization", NULL, 0, in, 2, &y),
                  PRT_ERR_UNSUPPORTED, "dtype int32 is not supported");
        ot_free(&in[0]);
        ot_free(&in[1]);
    }
    /* A dynamic X whose normalized dim turns out not to match Scale: the
     * build cannot tell; setting the shape refuses (the runtime reports a
     * plugin's failure as PRT_ERR_PLUGIN, with its message). */
    {
        uint32_t dyn[2] = {0x2u, 0};
        prt_engine *e = NULL;
        ot_tensor in[2], y = {0};
        in[0] = ot_make(PRT_FLOAT32, D2(2, 4));
        in[1] = ot_make(PRT_FLOAT32, D1(4));
        CHECK_OK(ot_build_op("LayerNormalization", NULL, 0, in, 2, dyn, &e));
        ot_free(&in[0]);
        in[0] = ot_make(PRT_FLOAT32, D2(2, 5));
        if (e)
            CHECK_ERR(ot_run_engine(e, in, 2, &y), PRT_ERR_SHAPE,
                      "Scale [4] cannot be broadcast to X [2, 5]");
        ot_free(&y);
        prt_engine_destroy(e);
        ot_free(&in[0]);
        ot_free(&in[1]);
    }
    return 0;
}

/* ---- Equal, GreaterOrEqual, And, IsNaN ---------------------------------------- */

/* The broadcast shapes every binary test runs: same, scalar, row, column,
 * rank mismatch, both sides. */
static const struct {
    prt_dims a, b, y;
} bcast_cases[] = {
    {{3, {2, 3, 4}}, {3, {2, 3, 4}}, {3, {2, 3, 4}}},
    {{3, {2, 3, 4}}, {0, {0}}, {3, {2, 3, 4}}},
    {{2, {3, 4}}, {1, {4}}, {2, {3, 4}}},
    {{2, {3, 1}}, {2, {3, 4}}, {2, {3, 4}}},
    {{4, {2, 1, 3, 1}}, {2, {1, 5}}, {4, {2, 1, 3, 5}}},
    {{3, {1, 3, 1}}, {3, {2, 1, 4}}, {3, {2, 3, 4}}},
};
#define NB_BCAST ((int)(sizeof bcast_cases / sizeof bcast_cases[0]))

/* y[i] for the broadcast binary op; kind 0 Equal, 1 GreaterOrEqual, 2 And. */
static void ref_cmp(int kind, const ot_tensor *a, const ot_tensor *b, const prt_dims *yd,
                    double *want)
{
    int64_t idx[PRT_MAX_DIMS];
    for (int64_t i = 0; i < tu_volume(yd); i++) {
        double x, z;
        ot_unravel(yd, i, idx);
        x = ot_get(a, ot_bcast_at(&a->dims, yd, idx));
        z = ot_get(b, ot_bcast_at(&b->dims, yd, idx));
        want[i] = kind == 0 ? x == z : kind == 1 ? x >= z : (x != 0 && z != 0);
    }
}

static int test_compare(void)
{
    static const int32_t types[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16, PRT_INT8,
                                    PRT_UINT8,   PRT_INT32,   PRT_INT64,    PRT_BOOL};
    static const char *const names[] = {"Equal", "GreaterOrEqual", "And"};
    tu_rng rng;
    tu_rng_seed(&rng, 61);
    for (int kind = 0; kind < 3; kind++)
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
            for (int c = 0; c < NB_BCAST; c++) {
                int32_t dt = types[t];
                ot_tensor in[2], y;
                double want[256];
                char what[128];
                if ((kind == 1 && dt == PRT_BOOL) || (kind == 2 && dt != PRT_BOOL))
                    continue;
                in[0] = ot_random(dt, bcast_cases[c].a, &rng, 0);
                in[1] = ot_random(dt, bcast_cases[c].b, &rng, 0);
                /* Few distinct values, so equal pairs are common. */
                for (int k = 0; k < 2; k++)
                    for (int64_t i = 0; i < tu_volume(&in[k].dims); i++)
                        ot_set(&in[k], i,
                               dt == PRT_BOOL ? ot_get(&in[k], i)
                               : ot_is_float(dt)
                                   ? floor(ot_get(&in[k], i) * 2)
                                   : (double)((int64_t)ot_get(&in[k], i) % 3));
                if (ot_is_float(dt) && tu_volume(&in[0].dims) > 3) {
                    ot_set(&in[0], 0, NAN);
                    ot_set(&in[0], 1, -0.0);
                    ot_set(&in[0], 2, INFINITY);
                }
                ref_cmp(kind, &in[0], &in[1], &bcast_cases[c].y, want);
                snprintf(what, sizeof what, "%s %s case %d", names[kind],
                         prt_dtype_name(dt), c);
                CHECK_OK(ot_run_op(names[kind], NULL, 0, in, 2, &y));
                if (y.data) {
                    CHECK(y.dtype == PRT_BOOL);
                    ot_check_close(what, &y, &bcast_cases[c].y, want, 0);
                }
                ot_free(&in[0]);
                ot_free(&in[1]);
                ot_free(&y);
            }
    /* Dynamic dims. */
    {
        uint32_t dyn[2] = {0x1u, 0};
        ot_tensor in[2], y;
        double want[24];
        prt_dims yd = D2(6, 4);
        in[0] = ot_random(PRT_INT64, D2(6, 4), &rng, 0);
        in[1] = ot_random(PRT_INT64, D1(4), &rng, 0);
        ref_cmp(0, &in[0], &in[1], &yd, want);
        CHECK_OK(ot_run_op_dyn("Equal", NULL, 0, in, 2, dyn, &y));
        if (y.data)
            ot_check_close("Equal dynamic", &y, &yd, want, 0);
        ot_free(&y);
        ot_free(&in[0]);
        ot_free(&in[1]);
    }
    /* IsNaN. */
    for (int t = 0; t < NB_FLOAT_TYPES; t++) {
        ot_tensor x = ot_random(float_types[t], D2(3, 4), &rng, 0), y;
        double want[12];
        ot_set(&x, 1, NAN);
        ot_set(&x, 5, INFINITY);
        ot_set(&x, 7, -NAN);
        for (int i = 0; i < 12; i++)
            want[i] = i == 1 || i == 7;
        CHECK_OK(ot_run_op("IsNaN", NULL, 0, &x, 1, &y));
        if (y.data) {
            CHECK(y.dtype == PRT_BOOL);
            ot_check_close("IsNaN", &y, &x.dims, want, 0);
        }
        ot_free(&x);
        ot_free(&y);
    }
    /* Errors: mixed dtypes, And on ints, GreaterOrEqual on bools, IsNaN on
     * ints, shapes that do not broadcast. */
    {
        ot_tensor in[2], y;
        in[0] = ot_make(PRT_INT32, D1(3));
        in[1] = ot_make(PRT_INT64, D1(3));
        CHECK_ERR(ot_run_op("Equal", NULL, 0, in, 2, &y), PRT_ERR_UNSUPPORTED,
                  "input 1 dtype int64 is not supported here (supported: int32)");
        CHECK_ERR(ot_run_op("And", NULL, 0, in, 2, &y), PRT_ERR_UNSUPPORTED,
                  "input 0 dtype int32 is not supported here (supported: bool)");
        CHECK_ERR(ot_run_op("IsNaN", NULL, 0, in, 1, &y), PRT_ERR_UNSUPPORTED,
                  "input 0 dtype int32");
        ot_free(&in[0]);
        ot_free(&in[1]);
        in[0] = ot_make(PRT_BOOL, D1(3));
        in[1] = ot_make(PRT_BOOL, D1(3));
        CHECK_ERR(ot_run_op("GreaterOrEqual", NULL, 0, in, 2, &y), PRT_ERR_UNSUPPORTED,
                  "input 0 dtype bool");
        ot_free(&in[1]);
        in[1] = ot_make(PRT_BOOL, D1(4));
        CHECK_ERR(ot_run_op("And", NULL, 0, in, 2, &y), PRT_ERR_SHAPE, NULL);
        ot_free(&in[0]);
        ot_free(&in[1]);
    }
    return 0;
}

/* ---- Where ---------------------------------------------------------------------- */

static int test_where(void)
{
    static const int32_t types[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_INT8,
                                    PRT_INT32,   PRT_INT64,   PRT_BOOL};
    static const struct {
        prt_dims c, x, y, out;
    } cases[] = {
        {{2, {3, 4}}, {2, {3, 4}}, {2, {3, 4}}, {2, {3, 4}}},
        {{1, {4}}, {2, {3, 4}}, {0, {0}}, {2, {3, 4}}},
        {{2, {3, 1}}, {1, {4}}, {3, {2, 1, 1}}, {3, {2, 3, 4}}},
        {{0, {0}}, {2, {2, 3}}, {2, {2, 3}}, {2, {2, 3}}},
        {{3, {2, 1, 4}}, {2, {3, 1}}, {1, {1}}, {3, {2, 3, 4}}},
    };
    tu_rng rng;
    tu_rng_seed(&rng, 67);
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            ot_tensor in[3], y;
            double want[64];
            int64_t idx[PRT_MAX_DIMS];
            const prt_dims *od = &cases[c].out;
            char what[96];
            in[0] = ot_random(PRT_BOOL, cases[c].c, &rng, 0);
            in[1] = ot_random(types[t], cases[c].x, &rng, 0);
            in[2] = ot_random(types[t], cases[c].y, &rng, 0);
            for (int64_t i = 0; i < tu_volume(od); i++) {
                ot_unravel(od, i, idx);
                want[i] = ot_get(&in[0], ot_bcast_at(&in[0].dims, od, idx))
                              ? ot_get(&in[1], ot_bcast_at(&in[1].dims, od, idx))
                              : ot_get(&in[2], ot_bcast_at(&in[2].dims, od, idx));
            }
            snprintf(what, sizeof what, "Where %s case %d", prt_dtype_name(types[t]),
                     (int)c);
            CHECK_OK(ot_run_op("Where", NULL, 0, in, 3, &y));
            if (y.data) {
                CHECK(y.dtype == types[t]);
                ot_check_close(what, &y, od, want, 0);
            }
            for (int k = 0; k < 3; k++)
                ot_free(&in[k]);
            ot_free(&y);
        }
    /* Dynamic dims; errors: a non-bool condition, X and Y differing. */
    {
        uint32_t dyn[3] = {0x1u, 0x1u, 0};
        ot_tensor in[3], y;
        in[0] = ot_random(PRT_BOOL, D2(5, 3), &rng, 0);
        in[1] = ot_random(PRT_FLOAT32, D2(5, 3), &rng, 0);
        in[2] = ot_random(PRT_FLOAT32, D1(3), &rng, 0);
        CHECK_OK(ot_run_op_dyn("Where", NULL, 0, in, 3, dyn, &y));
        if (y.data)
            for (int64_t i = 0; i < 15; i++)
                CHECK(ot_get(&y, i) ==
                      (ot_get(&in[0], i) ? ot_get(&in[1], i) : ot_get(&in[2], i % 3)));
        ot_free(&y);
        ot_free(&in[2]);
        in[2] = ot_make(PRT_FLOAT16, D1(3));
        CHECK_ERR(ot_run_op("Where", NULL, 0, in, 3, &y), PRT_ERR_UNSUPPORTED,
                  "input 2 dtype float16 is not supported here (supported: "
                  "float32)");
        ot_free(&in[0]);
        in[0] = ot_make(PRT_INT32, D2(5, 3));
        CHECK_ERR(ot_run_op("Where", NULL, 0, in, 3, &y), PRT_ERR_UNSUPPORTED,
                  "input 0 dtype int32 is not supported here (supported: bool)");
        for (int k = 0; k < 3; k++)
            ot_free(&in[k]);
    }
    return 0;
}

/* ---- GatherElements --------------------------------------------------------------- */

static void ref_gather_elements(const ot_tensor *data, const ot_tensor *ind, int32_t axis,
                                double *want)
{
    int64_t idx[PRT_MAX_DIMS];
    for (int64_t i = 0; i < tu_volume(&ind->dims); i++) {
        int64_t lin = 0, v = (int64_t)ot_get(ind, i);
        ot_unravel(&ind->dims, i, idx);
        if (v < 0)
            v += data->dims.d[axis];
        idx[axis] = v;
        for (int32_t k = 0; k < data->dims.nb_dims; k++)
            lin = lin * data->dims.d[k] + idx[k];
        want[i] = ot_get(data, lin);
    }
}

static int test_gather_elements(void)
{
    static const int32_t dtypes[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_INT64, PRT_BOOL};
    /* D3(2, 3, 17): rows longer than a vector, of an odd length. */
    const prt_dims shapes[] = {D1(6), D2(3, 4), D3(2, 3, 4), D4(2, 2, 3, 2),
                               D3(2, 3, 17)};
    tu_rng rng;
    tu_rng_seed(&rng, 71);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int32_t r = shapes[s].nb_dims;
        for (int32_t a = -r; a < r; a++)
            for (size_t t = 0; t < sizeof dtypes / sizeof dtypes[0]; t++)
                /* it & 1: int64 indices; it & 2: each row along the last
                 * dim one index (a Tile'd index, the run's block copy). */
                for (int it = 0; it < 4; it++) {
                    int32_t ax = a < 0 ? a + r : a;
                    prt_dims idd = shapes[s];
                    ot_tensor in[2], y;
                    double want[256], v = 0;
                    prt_field f = ot_fld_i32("axis", &a, 1);
                    char what[96];
                    /* Indices: the axis longer, the first other dim shorter. */
                    idd.d[ax] += 2;
                    for (int32_t k = 0; k < r; k++)
                        if (k != ax && idd.d[k] > 1) {
                            idd.d[k]--;
                            break;
                        }
                    in[0] = ot_random(dtypes[t], shapes[s], &rng, 0);
                    in[1] = ot_make(it & 1 ? PRT_INT64 : PRT_INT32, idd);
                    for (int64_t i = 0; i < tu_volume(&idd); i++) {
                        if (!(it & 2) || i % idd.d[r - 1] == 0)
                            v = (double)tu_rng_range(&rng, -shapes[s].d[ax],
                                                     shapes[s].d[ax] - 1);
                        ot_set(&in[1], i, v);
                    }
                    ref_gather_elements(&in[0], &in[1], ax, want);
                    snprintf(what, sizeof what, "GatherElements rank %d axis %d %s %s%s",
                             (int)r, (int)a, prt_dtype_name(dtypes[t]),
                             prt_dtype_name(in[1].dtype),
                             it & 2 ? " rows of one index" : "");
                    CHECK_OK(ot_run_op("GatherElements", &f, 1, in, 2, &y));
                    if (y.data) {
                        CHECK(y.dtype == dtypes[t]);
                        ot_check_close(what, &y, &idd, want, 0);
                    }
                    ot_free(&in[0]);
                    ot_free(&in[1]);
                    ot_free(&y);
                }
    }
    /* Default axis 0 and dynamic dims. */
    {
        uint32_t dyn[2] = {0x2u, 0x1u};
        ot_tensor in[2], y;
        double want[12];
        in[0] = ot_random(PRT_FLOAT32, D2(3, 4), &rng, 0);
        in[1] = ot_make(PRT_INT64, D2(2, 4));
        for (int64_t i = 0; i < 8; i++)
            ot_set(&in[1], i, (double)tu_rng_range(&rng, -3, 2));
        ref_gather_elements(&in[0], &in[1], 0, want);
        CHECK_OK(ot_run_op_dyn("GatherElements", NULL, 0, in, 2, dyn, &y));
        if (y.data)
            ot_check_close("GatherElements dynamic", &y, &in[1].dims, want, 0);
        ot_free(&y);
        /* An index out of range fails the run and names it. */
        ot_set(&in[1], 5, 3);
        CHECK_ERR(ot_run_op("GatherElements", NULL, 0, in, 2, &y),
                  PRT_ERR_INVALID_ARGUMENT,
                  "index 3 at element 5 of indices is out of range for axis 0 "
                  "of size 3 (-3 to 2)");
        ot_set(&in[1], 5, -4);
        CHECK_ERR(ot_run_op("GatherElements", NULL, 0, in, 2, &y),
                  PRT_ERR_INVALID_ARGUMENT, "index -4 at element 5");
        ot_free(&in[1]);
        /* Shape errors: rank, a non-axis dim too large, axis, dtype. */
        in[1] = ot_make(PRT_INT64, D1(4));
        CHECK_ERR(ot_run_op("GatherElements", NULL, 0, in, 2, &y), PRT_ERR_SHAPE,
                  "indices have rank 1 but data has rank 2");
        ot_free(&in[1]);
        in[1] = ot_make(PRT_INT64, D2(2, 5));
        CHECK_ERR(ot_run_op("GatherElements", NULL, 0, in, 2, &y), PRT_ERR_SHAPE,
                  "indices [2, 5] exceed data [3, 4] in dim 1");
        ot_free(&in[1]);
        in[1] = ot_make(PRT_FLOAT32, D2(2, 4));
        CHECK_ERR(ot_run_op("GatherElements", NULL, 0, in, 2, &y), PRT_ERR_UNSUPPORTED,
                  "input 1 dtype float32");
        ot_free(&in[1]);
        {
            int32_t axis = 2;
            prt_field f = ot_fld_i32("axis", &axis, 1);
            in[1] = ot_make(PRT_INT64, D2(2, 4));
            CHECK_ERR(ot_run_op("GatherElements", &f, 1, in, 2, &y), PRT_ERR_SHAPE,
                      "axis 2 is out of range for data of rank 2 (-2 to 1)");
            ot_free(&in[1]);
        }
        ot_free(&in[0]);
    }
    return 0;
}

/* ---- allocation failures ------------------------------------------------------ */

static int test_alloc_failures(void)
{
    ot_tensor in[3];
    tu_rng rng;
    int64_t n;
    tu_rng_seed(&rng, 5);
    in[0] = ot_random(PRT_FLOAT16, D3(2, 3, 8), &rng, 0);
    in[1] = ot_random(PRT_FLOAT16, D1(8), &rng, 0);
    in[2] = ot_random(PRT_FLOAT16, D1(8), &rng, 0);
    n = ot_alloc_failures("LayerNormalization", NULL, 0, in, 3);
    CHECK(n > 3 && n < OT_MAX_ALLOCS);
    for (int k = 0; k < 3; k++)
        ot_free(&in[k]);
    return 0;
}

int main(void)
{
    test_table();
    test_erf_tanh();
    test_softmax();
    test_layer_norm();
    test_compare();
    test_where();
    test_gather_elements();
    test_alloc_failures();
    return tu_finish("test_math_ops");
}
