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
 * The tensor and one-op network helpers are the ones of test_ops.c, copied
 * so each test program stands alone.
 */
#include <math.h>
#include <stdlib.h>

#include "base/base.h"
#include "testutil.h"

#define MAXIN 8

/* ---- tensors --------------------------------------------------------------- */

typedef struct tensor {
    int32_t dtype;
    prt_dims dims;
    void *data;
} tensor;

static int64_t vol(const prt_dims *d)
{
    int64_t v = 1;
    for (int32_t i = 0; i < d->nb_dims; i++)
        v *= d->d[i];
    return v;
}

static prt_dims mkdims(int32_t nb, int64_t a, int64_t b, int64_t c, int64_t d,
                       int64_t e)
{
    const int64_t v[5] = {a, b, c, d, e};
    return tu_dims(nb, v);
}
#define D0() mkdims(0, 0, 0, 0, 0, 0)
#define D1(a) mkdims(1, a, 0, 0, 0, 0)
#define D2(a, b) mkdims(2, a, b, 0, 0, 0)
#define D3(a, b, c) mkdims(3, a, b, c, 0, 0)
#define D4(a, b, c, d) mkdims(4, a, b, c, d, 0)
#define D5(a, b, c, d, e) mkdims(5, a, b, c, d, e)

static tensor t_make(int32_t dtype, prt_dims dims)
{
    tensor t;
    t.dtype = dtype;
    t.dims = dims;
    t.data = calloc((size_t)(vol(&dims) + 1), prt_dtype_size(dtype));
    return t;
}

static void t_free(tensor *t)
{
    free(t->data);
    t->data = NULL;
}

static double t_get(const tensor *t, int64_t i)
{
    switch (t->dtype) {
    case PRT_FLOAT32:
        return ((const float *)t->data)[i];
    case PRT_FLOAT16:
        return base_half_to_float(((const uint16_t *)t->data)[i]);
    case PRT_BFLOAT16:
        return base_bf16_to_float(((const uint16_t *)t->data)[i]);
    case PRT_INT8:
        return ((const int8_t *)t->data)[i];
    case PRT_UINT8:
    case PRT_BOOL:
        return ((const uint8_t *)t->data)[i];
    case PRT_INT32:
        return ((const int32_t *)t->data)[i];
    default:
        return (double)((const int64_t *)t->data)[i];
    }
}

static void t_set(tensor *t, int64_t i, double v)
{
    switch (t->dtype) {
    case PRT_FLOAT32:
        ((float *)t->data)[i] = (float)v;
        break;
    case PRT_FLOAT16:
        ((uint16_t *)t->data)[i] = base_float_to_half((float)v);
        break;
    case PRT_BFLOAT16:
        ((uint16_t *)t->data)[i] = base_float_to_bf16((float)v);
        break;
    case PRT_INT8:
        ((int8_t *)t->data)[i] = (int8_t)v;
        break;
    case PRT_UINT8:
    case PRT_BOOL:
        ((uint8_t *)t->data)[i] = (uint8_t)v;
        break;
    case PRT_INT32:
        ((int32_t *)t->data)[i] = (int32_t)v;
        break;
    default:
        ((int64_t *)t->data)[i] = (int64_t)v;
        break;
    }
}

static int is_float(int32_t dt)
{
    return dt == PRT_FLOAT32 || dt == PRT_FLOAT16 || dt == PRT_BFLOAT16;
}

/* Random values: floats uniform in [-1, 1), integers in [-20, 20] (bool and
 * uint8 in their range); `nonzero` replaces zeros with 1 (divisors). */
static tensor t_random(int32_t dtype, prt_dims dims, tu_rng *r, int nonzero)
{
    tensor t = t_make(dtype, dims);
    for (int64_t i = 0; i < vol(&dims); i++) {
        double v;
        if (is_float(dtype))
            v = tu_rng_uniform(r) * 2.0 - 1.0;
        else if (dtype == PRT_BOOL)
            v = (double)tu_rng_range(r, 0, 1);
        else if (dtype == PRT_UINT8)
            v = (double)tu_rng_range(r, 0, 255);
        else
            v = (double)tu_rng_range(r, -20, 20);
        if (nonzero && v == 0)
            v = 1;
        t_set(&t, i, v);
    }
    return t;
}

static void unravel(const prt_dims *d, int64_t lin, int64_t *idx)
{
    for (int32_t i = d->nb_dims - 1; i >= 0; i--) {
        idx[i] = d->d[i] ? lin % d->d[i] : 0;
        lin = d->d[i] ? lin / d->d[i] : 0;
    }
}

/* Linear index into `in` of output index idx (numpy broadcasting). */
static int64_t bcast_at(const prt_dims *in, const prt_dims *out,
                        const int64_t *idx)
{
    int64_t lin = 0;
    int32_t shift = out->nb_dims - in->nb_dims;
    for (int32_t i = 0; i < in->nb_dims; i++)
        lin = lin * in->d[i] + (in->d[i] == 1 ? 0 : idx[i + shift]);
    return lin;
}

static int dims_eq(const prt_dims *a, const prt_dims *b)
{
    if (a->nb_dims != b->nb_dims)
        return 0;
    for (int32_t i = 0; i < a->nb_dims; i++)
        if (a->d[i] != b->d[i])
            return 0;
    return 1;
}

/* got vs want: dims equal, values within rtol * max(1, |want|) (0: exact);
 * NaN equal to NaN. */
static void check_close(const char *what, const tensor *got,
                        const prt_dims *want_dims, const double *want,
                        double rtol)
{
    char a[128], b[128];
    tu_checks++;
    if (!dims_eq(&got->dims, want_dims)) {
        base_dims_str(&got->dims, a, sizeof a);
        base_dims_str(want_dims, b, sizeof b);
        fprintf(stderr, "%s: output dims %s, wanted %s\n", what, a, b);
        tu_failures++;
        return;
    }
    for (int64_t i = 0; i < vol(want_dims); i++) {
        double g = t_get(got, i), w = want[i];
        /* NaN matches NaN and an infinity itself, at any tolerance. */
        int ok = g == w || (g != g && w != w) ||
                 (rtol > 0 && fabs(g - w) <= rtol * (fabs(w) > 1 ? fabs(w) : 1));
        if (!ok) {
            fprintf(stderr, "%s: element %lld is %.9g, wanted %.9g\n", what,
                    (long long)i, g, w);
            tu_failures++;
            return;
        }
    }
}

/* ---- one-op networks -------------------------------------------------------- */

static prt_status make_op(const char *name, const prt_field *fields,
                          int32_t nb_fields, prt_plugin **out)
{
    const prt_plugin_creator *c;
    prt_field_collection fc = {nb_fields, fields};
    prt_status st = prt_get_builtin_creator(name, "1", &c);
    if (st)
        return st;
    return c->create(c, name, &fc, PRT_PHASE_BUILD, out);
}

/* Inputs X0.. with in[i]'s dtype and dims; dims whose bit is set in dyn[i]
 * are -1 with a profile from the given value to value + 3. Output Y. */
static prt_status build_op(const char *name, const prt_field *fields,
                           int32_t nb_fields, const tensor *in, int32_t nb_in,
                           const uint32_t *dyn, prt_engine **out)
{
    prt_plugin *p = NULL;
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    int32_t ids[MAXIN], l, y, prof = -1;
    prt_status st = make_op(name, fields, nb_fields, &p);
    if (!st)
        st = prt_network_create(&net);
    if (!st)
        st = prt_builder_config_create(&cfg);
    for (int32_t i = 0; !st && i < nb_in; i++) {
        char nm[16];
        prt_dims d = in[i].dims, mx = in[i].dims;
        snprintf(nm, sizeof nm, "X%d", (int)i);
        for (int32_t k = 0; dyn && k < d.nb_dims; k++)
            if (dyn[i] & (1u << k)) {
                d.d[k] = -1;
                mx.d[k] += 3;
            }
        st = prt_network_add_input(net, nm, in[i].dtype, &d, &ids[i]);
        if (!st && dyn && dyn[i]) {
            if (prof < 0)
                st = prt_builder_config_add_profile(cfg, &prof);
            if (!st)
                st = prt_builder_config_set_profile_dims(cfg, prof, nm, &in[i].dims,
                                                         &in[i].dims, &mx);
        }
    }
    if (!st)
        st = prt_network_add_plugin(net, ids, nb_in, NULL, 0, p, &l);
    if (!st) {
        p = NULL;
        st = prt_network_get_layer_output(net, l, 0, &y);
    }
    if (!st)
        st = prt_network_set_tensor_name(net, y, "Y");
    if (!st)
        st = prt_network_mark_output(net, y);
    if (!st)
        st = prt_build_engine(net, cfg, NULL, out);
    if (p)
        p->vt->runtime->destroy(p);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return st;
}

/* Runs an engine with inputs X0.. and allocates *out for Y. */
static prt_status run_engine(const prt_engine *e, const tensor *in,
                             int32_t nb_in, tensor *out)
{
    prt_context *ctx = NULL;
    prt_io_info io;
    prt_dims yd;
    int32_t yi;
    prt_status st = prt_context_create(e, &ctx);
    out->data = NULL;
    for (int32_t i = 0; !st && i < nb_in; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "X%d", (int)i);
        st = prt_engine_get_io(e, i, &io);
        for (int32_t k = 0; !st && k < io.dims.nb_dims; k++)
            if (io.dims.d[k] < 0) {
                st = prt_context_set_input_shape(ctx, nm, &in[i].dims);
                break;
            }
        if (!st)
            st = prt_context_set_tensor_address(ctx, nm, in[i].data);
    }
    if (!st)
        st = prt_engine_find_io(e, "Y", &yi);
    if (!st)
        st = prt_engine_get_io(e, yi, &io);
    if (!st)
        st = prt_context_get_tensor_shape(ctx, "Y", &yd);
    if (!st) {
        *out = t_make(io.dtype, yd);
        st = out->data ? prt_context_set_tensor_address(ctx, "Y", out->data)
                       : PRT_ERR_OUT_OF_MEMORY;
    }
    if (!st)
        st = prt_context_enqueue(ctx, NULL);
    if (st)
        t_free(out);
    prt_context_destroy(ctx);
    return st;
}

/* Build, run, serialize, load through an empty registry, run again: both
 * results must be the same bytes. *out holds the result. */
static prt_status run_op_dyn(const char *name, const prt_field *fields,
                             int32_t nb_fields, const tensor *in,
                             int32_t nb_in, const uint32_t *dyn, tensor *out)
{
    prt_engine *e = NULL, *e2 = NULL;
    prt_registry *reg = NULL;
    void *bytes = NULL;
    size_t size = 0;
    tensor again = {0};
    prt_status st = build_op(name, fields, nb_fields, in, nb_in, dyn, &e);
    out->data = NULL;
    if (!st)
        st = run_engine(e, in, nb_in, out);
    if (!st)
        st = prt_engine_serialize(e, &bytes, &size);
    if (!st)
        st = prt_registry_create(&reg);
    if (!st)
        st = prt_engine_deserialize(reg, bytes, size, &e2);
    if (!st)
        st = run_engine(e2, in, nb_in, &again);
    if (!st) {
        tu_checks++;
        if (!dims_eq(&again.dims, &out->dims) ||
            memcmp(again.data, out->data,
                   (size_t)vol(&out->dims) * prt_dtype_size(out->dtype)) != 0) {
            fprintf(stderr, "%s: the loaded engine gives other results\n", name);
            tu_failures++;
        }
    }
    if (st)
        t_free(out);
    t_free(&again);
    prt_free(bytes);
    prt_engine_destroy(e2);
    prt_engine_destroy(e);
    prt_registry_destroy(reg);
    return st;
}

static prt_status run_op(const char *name, const prt_field *fields,
                         int32_t nb_fields, const tensor *in, int32_t nb_in,
                         tensor *out)
{
    return run_op_dyn(name, fields, nb_fields, in, nb_in, NULL, out);
}

static prt_field fld_i32(const char *name, const int32_t *v, int64_t n)
{
    prt_field f = {name, v, PRT_FIELD_INT32, n};
    return f;
}

static prt_field fld_f32(const char *name, const float *v)
{
    prt_field f = {name, v, PRT_FIELD_FLOAT32, 1};
    return f;
}

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
        "Erf",   "Tanh",           "Softmax", "LayerNormalization",
        "Equal", "GreaterOrEqual", "And",     "IsNaN",
        "Where", "GatherElements"};
    static const int32_t nb_fields[] = {0, 0, 1, 3, 0, 0, 0, 0, 0, 1};
    const prt_plugin_creator *c = NULL;
    for (int i = 0; i < 10; i++) {
        CHECK_OK(prt_get_builtin_creator(names[i], "1", &c));
        CHECK(c && strcmp(c->name, names[i]) == 0 &&
              strcmp(c->plugin_namespace, PRT_BUILTIN_NAMESPACE) == 0 &&
              c->nb_fields == nb_fields[i]);
    }
    REQUIRE_OK(prt_get_builtin_creator("LayerNormalization", "1", &c));
    CHECK(strcmp(c->fields[0].name, "axis") == 0 &&
          c->fields[0].type == PRT_FIELD_INT32 &&
          strcmp(c->fields[1].name, "epsilon") == 0 &&
          c->fields[1].type == PRT_FIELD_FLOAT32 &&
          strcmp(c->fields[2].name, "stash_type") == 0);
    REQUIRE_OK(prt_get_builtin_creator("Softmax", "1", &c));
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
            tensor x = t_random(dt, D3(3, 5, 8), &rng, 0), y;
            double want[120];
            char what[64];
            /* Past both saturations, and the special values. */
            for (int64_t i = 0; i < 120; i++)
                t_set(&x, i, t_get(&x, i) * 5.0);
            t_set(&x, 0, 0.0);
            t_set(&x, 1, -0.0);
            t_set(&x, 2, INFINITY);
            t_set(&x, 3, -INFINITY);
            t_set(&x, 4, NAN);
            t_set(&x, 5, 1e-30);
            t_set(&x, 6, 0.5);
            t_set(&x, 7, -12.0);
            for (int64_t i = 0; i < 120; i++) {
                double v = t_get(&x, i);
                want[i] = tanh_op ? tanh(v) : erf(v);
            }
            snprintf(what, sizeof what, "%s %s", name, prt_dtype_name(dt));
            CHECK_OK(run_op(name, NULL, 0, &x, 1, &y));
            if (y.data) {
                check_close(what, &y, &x.dims, want, tol_for(dt, 1e-6));
                CHECK(t_get(&y, 2) == 1.0 && t_get(&y, 3) == -1.0 &&
                      isnan(t_get(&y, 4)) && t_get(&y, 7) == -1.0);
                CHECK(t_get(&y, 0) == 0.0 && signbit(t_get(&y, 1)));
            }
            t_free(&x);
            t_free(&y);
        }
    /* Dynamic dims, an empty tensor, a scalar. */
    {
        uint32_t dyn[1] = {0x3u};
        tensor x = t_random(PRT_FLOAT32, D2(4, 6), &rng, 0), y;
        double want[24];
        for (int64_t i = 0; i < 24; i++)
            want[i] = erf(t_get(&x, i));
        CHECK_OK(run_op_dyn("Erf", NULL, 0, &x, 1, dyn, &y));
        if (y.data)
            check_close("Erf dynamic", &y, &x.dims, want, 1e-6);
        t_free(&x);
        t_free(&y);
        x = t_make(PRT_FLOAT32, D2(0, 3));
        CHECK_OK(run_op("Tanh", NULL, 0, &x, 1, &y));
        CHECK(y.dims.nb_dims == 2 && y.dims.d[0] == 0);
        t_free(&x);
        t_free(&y);
        x = t_make(PRT_FLOAT32, D0());
        t_set(&x, 0, 0.25);
        want[0] = tanh((double)0.25f);
        CHECK_OK(run_op("Tanh", NULL, 0, &x, 1, &y));
        if (y.data)
            check_close("Tanh scalar", &y, &x.dims, want, 1e-6);
        t_free(&x);
        t_free(&y);
    }
    /* Integers are refused; fields are unknown. */
    {
        tensor x = t_make(PRT_INT32, D1(4)), y;
        const int32_t one = 1;
        prt_field f = fld_i32("axis", &one, 1);
        prt_plugin *p = NULL;
        CHECK_ERR(run_op("Erf", NULL, 0, &x, 1, &y), PRT_ERR_UNSUPPORTED,
                  "dtype int32 is not supported (supported: float32, float16 "
                  "or bfloat16)");
        CHECK_ERR(make_op("Tanh", &f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "unknown field 'axis'");
        t_free(&x);
    }
    return 0;
}

/* ---- Softmax ------------------------------------------------------------------- */

/* Softmax of x along axis (in [0, r)) in double; a NaN makes its row NaN. */
static void ref_softmax(const tensor *x, int32_t axis, double *want)
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
                double v = t_get(x, base + k * inner);
                nan |= v != v;
                mx = v > mx ? v : mx;
            }
            for (int64_t k = 0; k < n; k++)
                sum += exp(t_get(x, base + k * inner) - mx);
            for (int64_t k = 0; k < n; k++)
                want[base + k * inner] =
                    nan ? NAN : exp(t_get(x, base + k * inner) - mx) / sum;
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
                prt_field f = fld_i32("axis", &axis, 1);
                tensor x = t_random(dt, shapes[s], &rng, 0), y;
                int64_t n = vol(&x.dims);
                double *want = malloc(sizeof(double) * (size_t)n);
                char what[96];
                REQUIRE(want != NULL);
                for (int64_t i = 0; i < n; i++)
                    t_set(&x, i, t_get(&x, i) * 6.0);
                ref_softmax(&x, axis < 0 ? axis + r : axis, want);
                snprintf(what, sizeof what, "Softmax rank %d axis %d%s %s",
                         (int)r, (int)axis, a < -r ? " (default)" : "",
                         prt_dtype_name(dt));
                CHECK_OK(run_op("Softmax", &f, a < -r ? 0 : 1, &x, 1, &y));
                if (y.data)
                    check_close(what, &y, &x.dims, want, tol_for(dt, 1e-6));
                free(want);
                t_free(&x);
                t_free(&y);
            }
    }
    /* Stability and special values, rows along the last axis: huge values,
     * -inf entries, a NaN row, an all -inf row (NaN, as the reference). */
    {
        tensor x = t_make(PRT_FLOAT32, D2(5, 4)), y;
        static const double v[20] = {
            1000, 1001, 1002, 999,     -1000, -1001, -999, -1002,
            0,    -INFINITY, 1, -INFINITY, 1, NAN, 2, 3,
            -INFINITY, -INFINITY, -INFINITY, -INFINITY};
        double want[20];
        for (int i = 0; i < 20; i++)
            t_set(&x, i, v[i]);
        ref_softmax(&x, 1, want);
        CHECK(!isnan(want[0]) && isnan(want[12]) && isnan(want[16]));
        CHECK_OK(run_op("Softmax", NULL, 0, &x, 1, &y));
        if (y.data) {
            check_close("Softmax special values", &y, &x.dims, want, 1e-6);
            CHECK(t_get(&y, 9) == 0.0 && t_get(&y, 11) == 0.0);
        }
        t_free(&x);
        t_free(&y);
    }
    /* Dynamic dims along and across the axis; the field survives loading. */
    {
        uint32_t dyn[1] = {0x5u};
        int32_t axis = 1;
        prt_field f = fld_i32("axis", &axis, 1);
        tensor x = t_random(PRT_FLOAT32, D3(2, 6, 3), &rng, 0), y;
        double want[36];
        ref_softmax(&x, 1, want);
        CHECK_OK(run_op_dyn("Softmax", &f, 1, &x, 1, dyn, &y));
        if (y.data)
            check_close("Softmax dynamic", &y, &x.dims, want, 1e-6);
        t_free(&x);
        t_free(&y);
    }
    /* Errors: axis out of range, a scalar, integers, a bad field type. */
    {
        int32_t axis = 3;
        const float fl = 1;
        prt_field f = fld_i32("axis", &axis, 1);
        prt_plugin *p = NULL;
        tensor x = t_make(PRT_FLOAT32, D3(2, 3, 4)), y;
        CHECK_ERR(run_op("Softmax", &f, 1, &x, 1, &y), PRT_ERR_SHAPE,
                  "axis 3 is out of range for an input of rank 3 (-3 to 2)");
        axis = -4;
        CHECK_ERR(run_op("Softmax", &f, 1, &x, 1, &y), PRT_ERR_SHAPE,
                  "axis -4 is out of range");
        t_free(&x);
        x = t_make(PRT_FLOAT32, D0());
        CHECK_ERR(run_op("Softmax", NULL, 0, &x, 1, &y), PRT_ERR_SHAPE,
                  "rank 1 or more");
        t_free(&x);
        x = t_make(PRT_INT64, D1(3));
        CHECK_ERR(run_op("Softmax", NULL, 0, &x, 1, &y), PRT_ERR_UNSUPPORTED,
                  "dtype int64 is not supported");
        t_free(&x);
        f = fld_f32("axis", &fl);
        CHECK_ERR(make_op("Softmax", &f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "field 'axis'");
    }
    return 0;
}

/* ---- LayerNormalization ---------------------------------------------------------- */

/* Y of LayerNormalization in double. s and b (b may be NULL) broadcast to
 * the normalized dims (numpy's rule, aligned at the right). */
static void ref_ln(const tensor *x, const tensor *s, const tensor *b,
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
            mean += t_get(x, r * norm + p);
        mean /= (double)norm;
        for (int64_t p = 0; p < norm; p++) {
            double dv = t_get(x, r * norm + p) - mean;
            var += dv * dv;
        }
        inv = 1.0 / sqrt(var / (double)norm + eps);
        for (int64_t p = 0; p < norm; p++) {
            int64_t i = r * norm + p;
            double v;
            unravel(d, i, idx);
            v = (t_get(x, i) - mean) * inv * t_get(s, bcast_at(&s->dims, d, idx));
            if (b)
                v += t_get(b, bcast_at(&b->dims, d, idx));
            want[i] = v;
        }
    }
}

/* One case: X of dims xd, Scale of sd, B of bd (nb_dims < 0: absent). */
static int ln_case(int32_t dt, prt_dims xd, int32_t axis, int given_axis,
                   prt_dims sd, prt_dims bd, const float *eps, tu_rng *rng,
                   const uint32_t *dyn)
{
    prt_field f[2];
    int32_t nf = 0, nb_in = bd.nb_dims < 0 ? 2 : 3;
    int32_t r = xd.nb_dims;
    tensor in[3], y;
    int64_t n = vol(&xd);
    double *want = malloc(sizeof(double) * (size_t)(n ? n : 1));
    char what[320], a[64], b[64], c[64];
    REQUIRE(want != NULL);
    in[0] = t_random(dt, xd, rng, 0);
    in[1] = t_random(dt, sd, rng, 0);
    if (nb_in == 3)
        in[2] = t_random(dt, bd, rng, 0);
    for (int64_t i = 0; i < n; i++) /* an offset, so the mean matters */
        t_set(&in[0], i, t_get(&in[0], i) * 3.0 + 2.0);
    if (given_axis)
        f[nf++] = fld_i32("axis", &axis, 1);
    if (eps)
        f[nf++] = fld_f32("epsilon", eps);
    ref_ln(&in[0], &in[1], nb_in == 3 ? &in[2] : NULL,
           axis < 0 ? axis + r : axis, eps ? (double)*eps : 1e-5, want);
    base_dims_str(&xd, a, sizeof a);
    base_dims_str(&sd, b, sizeof b);
    if (nb_in == 3)
        base_dims_str(&bd, c, sizeof c);
    snprintf(what, sizeof what, "LayerNorm X %s axis %d Scale %s B %s %s%s", a,
             (int)axis, b, nb_in == 3 ? c : "none", prt_dtype_name(dt),
             dyn ? " dynamic" : "");
    CHECK_OK(run_op_dyn("LayerNormalization", f, nf, in, nb_in, dyn, &y));
    if (y.data)
        check_close(what, &y, &xd, want, tol_for(dt, 1e-4));
    free(want);
    for (int32_t k = 0; k < nb_in; k++)
        t_free(&in[k]);
    t_free(&y);
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
                ln_case(float_types[t], shapes[s], axis, a >= -r, nd,
                        (a & 1) ? none : nd, (a & 2) ? &eps : NULL, &rng, NULL);
            }
    }
    /* Broadcast Scale and B: 1s, fewer dims, leading 1s before the axis. */
    ln_case(PRT_FLOAT32, D3(2, 3, 4), 1, 1, D2(1, 4), D1(4), NULL, &rng, NULL);
    ln_case(PRT_FLOAT32, D3(2, 3, 4), 1, 1, D3(1, 3, 4), D2(3, 1), NULL, &rng,
            NULL);
    ln_case(PRT_FLOAT32, D3(2, 3, 4), 1, 1, D0(), D3(1, 1, 1), NULL, &rng,
            NULL);
    ln_case(PRT_FLOAT16, D4(2, 3, 2, 5), -2, 1, D1(5), D2(2, 1), &eps, &rng,
            NULL);
    /* bert's shape: [batch, sequence, hidden] over the hidden dim, with a
     * dynamic batch and sequence. */
    {
        uint32_t dyn[3] = {0x3u, 0, 0};
        ln_case(PRT_FLOAT32, D3(2, 5, 64), -1, 0, D1(64), D1(64), NULL, &rng,
                dyn);
    }
    /* A constant row: the variance is 0, so Y is B (epsilon keeps it finite). */
    {
        tensor in[3], y;
        double want[8];
        in[0] = t_make(PRT_FLOAT32, D2(2, 4));
        in[1] = t_random(PRT_FLOAT32, D1(4), &rng, 0);
        in[2] = t_random(PRT_FLOAT32, D1(4), &rng, 0);
        for (int i = 0; i < 8; i++)
            t_set(&in[0], i, 3.5);
        for (int i = 0; i < 8; i++)
            want[i] = t_get(&in[2], i % 4);
        CHECK_OK(run_op("LayerNormalization", NULL, 0, in, 3, &y));
        if (y.data)
            check_close("LayerNorm constant rows", &y, &in[0].dims, want, 1e-6);
        for (int k = 0; k < 3; k++)
            t_free(&in[k]);
        t_free(&y);
    }
    /* Errors. */
    {
        int32_t axis = 1, st0 = 0;
        const float neg = -1.0f;
        prt_field f = fld_i32("axis", &axis, 1);
        prt_plugin *p = NULL;
        tensor in[3], y;
        in[0] = t_make(PRT_FLOAT32, D3(2, 3, 4));
        in[1] = t_make(PRT_FLOAT32, D1(5));
        in[2] = t_make(PRT_FLOAT32, D1(4));
        CHECK_ERR(run_op("LayerNormalization", NULL, 0, in, 2, &y), PRT_ERR_SHAPE,
                  "Scale [5] cannot be broadcast to X [2, 3, 4]'s normalized "
                  "dims (from axis 2)");
        t_free(&in[1]);
        in[1] = t_make(PRT_FLOAT32, D3(2, 3, 4)); /* varies per row */
        CHECK_ERR(run_op("LayerNormalization", &f, 1, in, 2, &y), PRT_ERR_SHAPE,
                  "Scale [2, 3, 4] cannot be broadcast");
        t_free(&in[1]);
        in[1] = t_make(PRT_FLOAT32, D4(1, 2, 3, 4));
        CHECK_ERR(run_op("LayerNormalization", NULL, 0, in, 2, &y), PRT_ERR_SHAPE,
                  "Scale has rank 4, more than X's 3");
        t_free(&in[1]);
        in[1] = t_make(PRT_FLOAT32, D1(4));
        t_free(&in[2]);
        in[2] = t_make(PRT_FLOAT32, D1(3));
        CHECK_ERR(run_op("LayerNormalization", NULL, 0, in, 3, &y), PRT_ERR_SHAPE,
                  "B [3] cannot be broadcast");
        CHECK_ERR(run_op("LayerNormalization", NULL, 0, in, 1, &y),
                  PRT_ERR_INVALID_ARGUMENT, "takes 2 to 3 inputs, got 1");
        axis = 3;
        CHECK_ERR(run_op("LayerNormalization", &f, 1, in, 2, &y), PRT_ERR_SHAPE,
                  "axis 3 is out of range for X of rank 3 (-3 to 2)");
        f = fld_i32("stash_type", &st0, 1);
        CHECK_ERR(make_op("LayerNormalization", &f, 1, &p), PRT_ERR_UNSUPPORTED,
                  "stash_type 0 is not supported");
        f = fld_f32("epsilon", &neg);
        CHECK_ERR(make_op("LayerNormalization", &f, 1, &p),
                  PRT_ERR_INVALID_ARGUMENT, "epsilon must be >= 0");
        for (int k = 0; k < 3; k++)
            t_free(&in[k]);
        /* Dtypes must agree; integers are refused. */
        in[0] = t_make(PRT_FLOAT32, D2(2, 4));
        in[1] = t_make(PRT_FLOAT16, D1(4));
        CHECK_ERR(run_op("LayerNormalization", NULL, 0, in, 2, &y),
                  PRT_ERR_INVALID_ARGUMENT, "all inputs must share one dtype");
        t_free(&in[0]);
        t_free(&in[1]);
        in[0] = t_make(PRT_INT32, D2(2, 4));
        in[1] = t_make(PRT_INT32, D1(4));
        CHECK_ERR(run_op("LayerNormalization", NULL, 0, in, 2, &y),
                  PRT_ERR_UNSUPPORTED, "dtype int32 is not supported");
        t_free(&in[0]);
        t_free(&in[1]);
    }
    /* A dynamic X whose normalized dim turns out not to match Scale: the
     * build cannot tell; setting the shape refuses (the runtime reports a
     * plugin's failure as PRT_ERR_PLUGIN, with its message). */
    {
        uint32_t dyn[2] = {0x2u, 0};
        prt_engine *e = NULL;
        tensor in[2], y = {0};
        in[0] = t_make(PRT_FLOAT32, D2(2, 4));
        in[1] = t_make(PRT_FLOAT32, D1(4));
        CHECK_OK(build_op("LayerNormalization", NULL, 0, in, 2, dyn, &e));
        t_free(&in[0]);
        in[0] = t_make(PRT_FLOAT32, D2(2, 5));
        if (e)
            CHECK_ERR(run_engine(e, in, 2, &y), PRT_ERR_PLUGIN,
                      "Scale [4] cannot be broadcast to X [2, 5]");
        t_free(&y);
        prt_engine_destroy(e);
        t_free(&in[0]);
        t_free(&in[1]);
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
static void ref_cmp(int kind, const tensor *a, const tensor *b,
                    const prt_dims *yd, double *want)
{
    int64_t idx[PRT_MAX_DIMS];
    for (int64_t i = 0; i < vol(yd); i++) {
        double x, z;
        unravel(yd, i, idx);
        x = t_get(a, bcast_at(&a->dims, yd, idx));
        z = t_get(b, bcast_at(&b->dims, yd, idx));
        want[i] = kind == 0 ? x == z : kind == 1 ? x >= z : (x != 0 && z != 0);
    }
}

static int test_compare(void)
{
    static const int32_t types[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16,
                                    PRT_INT8,    PRT_UINT8,   PRT_INT32,
                                    PRT_INT64,   PRT_BOOL};
    static const char *const names[] = {"Equal", "GreaterOrEqual", "And"};
    tu_rng rng;
    tu_rng_seed(&rng, 61);
    for (int kind = 0; kind < 3; kind++)
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
            for (int c = 0; c < NB_BCAST; c++) {
                int32_t dt = types[t];
                tensor in[2], y;
                double want[256];
                char what[128];
                if ((kind == 1 && dt == PRT_BOOL) || (kind == 2 && dt != PRT_BOOL))
                    continue;
                in[0] = t_random(dt, bcast_cases[c].a, &rng, 0);
                in[1] = t_random(dt, bcast_cases[c].b, &rng, 0);
                /* Few distinct values, so equal pairs are common. */
                for (int k = 0; k < 2; k++)
                    for (int64_t i = 0; i < vol(&in[k].dims); i++)
                        t_set(&in[k], i,
                              dt == PRT_BOOL ? t_get(&in[k], i)
                              : is_float(dt) ? floor(t_get(&in[k], i) * 2)
                                             : (double)((int64_t)t_get(&in[k], i) % 3));
                if (is_float(dt) && vol(&in[0].dims) > 3) {
                    t_set(&in[0], 0, NAN);
                    t_set(&in[0], 1, -0.0);
                    t_set(&in[0], 2, INFINITY);
                }
                ref_cmp(kind, &in[0], &in[1], &bcast_cases[c].y, want);
                snprintf(what, sizeof what, "%s %s case %d", names[kind],
                         prt_dtype_name(dt), c);
                CHECK_OK(run_op(names[kind], NULL, 0, in, 2, &y));
                if (y.data) {
                    CHECK(y.dtype == PRT_BOOL);
                    check_close(what, &y, &bcast_cases[c].y, want, 0);
                }
                t_free(&in[0]);
                t_free(&in[1]);
                t_free(&y);
            }
    /* Dynamic dims. */
    {
        uint32_t dyn[2] = {0x1u, 0};
        tensor in[2], y;
        double want[24];
        prt_dims yd = D2(6, 4);
        in[0] = t_random(PRT_INT64, D2(6, 4), &rng, 0);
        in[1] = t_random(PRT_INT64, D1(4), &rng, 0);
        ref_cmp(0, &in[0], &in[1], &yd, want);
        CHECK_OK(run_op_dyn("Equal", NULL, 0, in, 2, dyn, &y));
        if (y.data)
            check_close("Equal dynamic", &y, &yd, want, 0);
        t_free(&y);
        t_free(&in[0]);
        t_free(&in[1]);
    }
    /* IsNaN. */
    for (int t = 0; t < NB_FLOAT_TYPES; t++) {
        tensor x = t_random(float_types[t], D2(3, 4), &rng, 0), y;
        double want[12];
        t_set(&x, 1, NAN);
        t_set(&x, 5, INFINITY);
        t_set(&x, 7, -NAN);
        for (int i = 0; i < 12; i++)
            want[i] = i == 1 || i == 7;
        CHECK_OK(run_op("IsNaN", NULL, 0, &x, 1, &y));
        if (y.data) {
            CHECK(y.dtype == PRT_BOOL);
            check_close("IsNaN", &y, &x.dims, want, 0);
        }
        t_free(&x);
        t_free(&y);
    }
    /* Errors: mixed dtypes, And on ints, GreaterOrEqual on bools, IsNaN on
     * ints, shapes that do not broadcast. */
    {
        tensor in[2], y;
        in[0] = t_make(PRT_INT32, D1(3));
        in[1] = t_make(PRT_INT64, D1(3));
        CHECK_ERR(run_op("Equal", NULL, 0, in, 2, &y), PRT_ERR_UNSUPPORTED,
                  "input 1 dtype int64 is not supported here (supported: int32)");
        CHECK_ERR(run_op("And", NULL, 0, in, 2, &y), PRT_ERR_UNSUPPORTED,
                  "input 0 dtype int32 is not supported here (supported: bool)");
        CHECK_ERR(run_op("IsNaN", NULL, 0, in, 1, &y), PRT_ERR_UNSUPPORTED,
                  "input 0 dtype int32");
        t_free(&in[0]);
        t_free(&in[1]);
        in[0] = t_make(PRT_BOOL, D1(3));
        in[1] = t_make(PRT_BOOL, D1(3));
        CHECK_ERR(run_op("GreaterOrEqual", NULL, 0, in, 2, &y),
                  PRT_ERR_UNSUPPORTED, "input 0 dtype bool");
        t_free(&in[1]);
        in[1] = t_make(PRT_BOOL, D1(4));
        CHECK_ERR(run_op("And", NULL, 0, in, 2, &y), PRT_ERR_SHAPE, NULL);
        t_free(&in[0]);
        t_free(&in[1]);
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
            tensor in[3], y;
            double want[64];
            int64_t idx[PRT_MAX_DIMS];
            const prt_dims *od = &cases[c].out;
            char what[96];
            in[0] = t_random(PRT_BOOL, cases[c].c, &rng, 0);
            in[1] = t_random(types[t], cases[c].x, &rng, 0);
            in[2] = t_random(types[t], cases[c].y, &rng, 0);
            for (int64_t i = 0; i < vol(od); i++) {
                unravel(od, i, idx);
                want[i] = t_get(&in[0], bcast_at(&in[0].dims, od, idx))
                              ? t_get(&in[1], bcast_at(&in[1].dims, od, idx))
                              : t_get(&in[2], bcast_at(&in[2].dims, od, idx));
            }
            snprintf(what, sizeof what, "Where %s case %d",
                     prt_dtype_name(types[t]), (int)c);
            CHECK_OK(run_op("Where", NULL, 0, in, 3, &y));
            if (y.data) {
                CHECK(y.dtype == types[t]);
                check_close(what, &y, od, want, 0);
            }
            for (int k = 0; k < 3; k++)
                t_free(&in[k]);
            t_free(&y);
        }
    /* Dynamic dims; errors: a non-bool condition, X and Y differing. */
    {
        uint32_t dyn[3] = {0x1u, 0x1u, 0};
        tensor in[3], y;
        in[0] = t_random(PRT_BOOL, D2(5, 3), &rng, 0);
        in[1] = t_random(PRT_FLOAT32, D2(5, 3), &rng, 0);
        in[2] = t_random(PRT_FLOAT32, D1(3), &rng, 0);
        CHECK_OK(run_op_dyn("Where", NULL, 0, in, 3, dyn, &y));
        if (y.data)
            for (int64_t i = 0; i < 15; i++)
                CHECK(t_get(&y, i) == (t_get(&in[0], i) ? t_get(&in[1], i)
                                                         : t_get(&in[2], i % 3)));
        t_free(&y);
        t_free(&in[2]);
        in[2] = t_make(PRT_FLOAT16, D1(3));
        CHECK_ERR(run_op("Where", NULL, 0, in, 3, &y), PRT_ERR_UNSUPPORTED,
                  "input 2 dtype float16 is not supported here (supported: "
                  "float32)");
        t_free(&in[0]);
        in[0] = t_make(PRT_INT32, D2(5, 3));
        CHECK_ERR(run_op("Where", NULL, 0, in, 3, &y), PRT_ERR_UNSUPPORTED,
                  "input 0 dtype int32 is not supported here (supported: bool)");
        for (int k = 0; k < 3; k++)
            t_free(&in[k]);
    }
    return 0;
}

/* ---- GatherElements --------------------------------------------------------------- */

static void ref_gather_elements(const tensor *data, const tensor *ind,
                                int32_t axis, double *want)
{
    int64_t idx[PRT_MAX_DIMS];
    for (int64_t i = 0; i < vol(&ind->dims); i++) {
        int64_t lin = 0, v = (int64_t)t_get(ind, i);
        unravel(&ind->dims, i, idx);
        if (v < 0)
            v += data->dims.d[axis];
        idx[axis] = v;
        for (int32_t k = 0; k < data->dims.nb_dims; k++)
            lin = lin * data->dims.d[k] + idx[k];
        want[i] = t_get(data, lin);
    }
}

static int test_gather_elements(void)
{
    static const int32_t dtypes[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_INT64,
                                     PRT_BOOL};
    const prt_dims shapes[] = {D1(6), D2(3, 4), D3(2, 3, 4), D4(2, 2, 3, 2)};
    tu_rng rng;
    tu_rng_seed(&rng, 71);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int32_t r = shapes[s].nb_dims;
        for (int32_t a = -r; a < r; a++)
            for (size_t t = 0; t < sizeof dtypes / sizeof dtypes[0]; t++)
                for (int it = 0; it < 2; it++) {
                    int32_t ax = a < 0 ? a + r : a;
                    prt_dims idd = shapes[s];
                    tensor in[2], y;
                    double want[128];
                    prt_field f = fld_i32("axis", &a, 1);
                    char what[96];
                    /* Indices: the axis longer, the first other dim shorter. */
                    idd.d[ax] += 2;
                    for (int32_t k = 0; k < r; k++)
                        if (k != ax && idd.d[k] > 1) {
                            idd.d[k]--;
                            break;
                        }
                    in[0] = t_random(dtypes[t], shapes[s], &rng, 0);
                    in[1] = t_make(it ? PRT_INT64 : PRT_INT32, idd);
                    for (int64_t i = 0; i < vol(&idd); i++)
                        t_set(&in[1], i,
                              (double)tu_rng_range(&rng, -shapes[s].d[ax],
                                                   shapes[s].d[ax] - 1));
                    ref_gather_elements(&in[0], &in[1], ax, want);
                    snprintf(what, sizeof what,
                             "GatherElements rank %d axis %d %s %s", (int)r,
                             (int)a, prt_dtype_name(dtypes[t]),
                             prt_dtype_name(in[1].dtype));
                    CHECK_OK(run_op("GatherElements", &f, 1, in, 2, &y));
                    if (y.data) {
                        CHECK(y.dtype == dtypes[t]);
                        check_close(what, &y, &idd, want, 0);
                    }
                    t_free(&in[0]);
                    t_free(&in[1]);
                    t_free(&y);
                }
    }
    /* Default axis 0 and dynamic dims. */
    {
        uint32_t dyn[2] = {0x2u, 0x1u};
        tensor in[2], y;
        double want[12];
        in[0] = t_random(PRT_FLOAT32, D2(3, 4), &rng, 0);
        in[1] = t_make(PRT_INT64, D2(2, 4));
        for (int64_t i = 0; i < 8; i++)
            t_set(&in[1], i, (double)tu_rng_range(&rng, -3, 2));
        ref_gather_elements(&in[0], &in[1], 0, want);
        CHECK_OK(run_op_dyn("GatherElements", NULL, 0, in, 2, dyn, &y));
        if (y.data)
            check_close("GatherElements dynamic", &y, &in[1].dims, want, 0);
        t_free(&y);
        /* An index out of range fails the run and names it. */
        t_set(&in[1], 5, 3);
        CHECK_ERR(run_op("GatherElements", NULL, 0, in, 2, &y),
                  PRT_ERR_PLUGIN,
                  "index 3 at element 5 of indices is out of range for axis 0 "
                  "of size 3 (-3 to 2)");
        t_set(&in[1], 5, -4);
        CHECK_ERR(run_op("GatherElements", NULL, 0, in, 2, &y),
                  PRT_ERR_PLUGIN, "index -4 at element 5");
        t_free(&in[1]);
        /* Shape errors: rank, a non-axis dim too large, axis, dtype. */
        in[1] = t_make(PRT_INT64, D1(4));
        CHECK_ERR(run_op("GatherElements", NULL, 0, in, 2, &y), PRT_ERR_SHAPE,
                  "indices have rank 1 but data has rank 2");
        t_free(&in[1]);
        in[1] = t_make(PRT_INT64, D2(2, 5));
        CHECK_ERR(run_op("GatherElements", NULL, 0, in, 2, &y), PRT_ERR_SHAPE,
                  "indices [2, 5] exceed data [3, 4] in dim 1");
        t_free(&in[1]);
        in[1] = t_make(PRT_FLOAT32, D2(2, 4));
        CHECK_ERR(run_op("GatherElements", NULL, 0, in, 2, &y),
                  PRT_ERR_UNSUPPORTED, "input 1 dtype float32");
        t_free(&in[1]);
        {
            int32_t axis = 2;
            prt_field f = fld_i32("axis", &axis, 1);
            in[1] = t_make(PRT_INT64, D2(2, 4));
            CHECK_ERR(run_op("GatherElements", &f, 1, in, 2, &y), PRT_ERR_SHAPE,
                      "axis 2 is out of range for data of rank 2 (-2 to 1)");
            t_free(&in[1]);
        }
        t_free(&in[0]);
    }
    return 0;
}

/* ---- allocation failures ------------------------------------------------------ */

static int test_alloc_failures(void)
{
    tensor in[3];
    tu_rng rng;
    int64_t n;
    tu_rng_seed(&rng, 5);
    in[0] = t_random(PRT_FLOAT16, D3(2, 3, 8), &rng, 0);
    in[1] = t_random(PRT_FLOAT16, D1(8), &rng, 0);
    in[2] = t_random(PRT_FLOAT16, D1(8), &rng, 0);
    for (n = 0; n < 100000; n++) {
        tensor y = {0};
        prt_status st;
        base_fail_alloc_after(n);
        st = run_op("LayerNormalization", NULL, 0, in, 3, &y);
        base_fail_alloc_after(-1);
        t_free(&y);
        if (st == PRT_OK)
            break;
        if (!prt_last_error()[0]) {
            tu_fail(__FILE__, __LINE__, "an allocation failure left no message");
            break;
        }
    }
    CHECK(n > 3 && n < 100000);
    for (int k = 0; k < 3; k++)
        t_free(&in[k]);
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
