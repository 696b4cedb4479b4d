/*
 * AddInPlace ("example") from the standard plugin library, through the
 * public API only: registry -> network -> build -> bytes -> engine ->
 * context -> run.
 *  - y = x + b where y aliases x: run with y's address equal to x's (the
 *    sum lands in x's memory, computed in place) and with a separate y (the
 *    runtime copies x into y first; x must stay unchanged); float32 and
 *    float16 (the sum correctly rounded to half);
 *  - dynamic dims with a profile;
 *  - errors: different shapes, different dtypes.
 */
#include <math.h>
#include <stdlib.h>

#include "testutil.h"

/* ---- float16 reference (plain, independent of the library) --------------- */

/* Rounds a finite double to the nearest half, ties to even. The sum of two
 * halves is exact in a double, so this is the correctly rounded half sum. */
static uint16_t double_to_half(double x)
{
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    double a = fabs(x), m;
    int e;
    if (a >= 65520.0) /* half-way to 65536 and beyond: infinity */
        return sign | 0x7C00;
    if (a < ldexp(1.0, -14)) /* subnormal: a multiple of 2^-24 */
        return (uint16_t)(sign | (uint16_t)nearbyint(ldexp(a, 24)));
    frexp(a, &e);                    /* a = f * 2^e, f in [0.5, 1): half exponent e - 1 */
    m = nearbyint(ldexp(a, 11 - e)); /* 1024..2048 */
    if (m == 2048.0) {
        m = 1024.0;
        e++;
    }
    if (e - 1 > 15)
        return sign | 0x7C00;
    return (uint16_t)(sign | (uint16_t)((e - 1 + 15) << 10) | (uint16_t)(m - 1024.0));
}

/* ---- engine plumbing ------------------------------------------------------ */

/* x, b -> AddInPlace -> y, built and loaded back; when mn is given, one
 * profile bounds x and b alike. */
static prt_status aip_build(prt_registry *reg, int32_t dtype_x, int32_t dtype_b,
                            const prt_dims *dx, const prt_dims *db, const prt_dims *mn,
                            const prt_dims *opt, const prt_dims *mx, tu_engine *out)
{
    static const char *const outs[1] = {"y"};
    prt_plugin *p = tu_make_plugin(reg, "example", "AddInPlace", "1", NULL, 0);
    tu_input_spec in[2] = {{"x", dtype_x, dx, mn, opt, mx},
                           {"b", dtype_b, db, mn, opt, mx}};
    return tu_build_roundtrip(reg, p, in, 2, outs, 1, 0, out);
}

/* One run. in_place: y's address is x's. Checks y against x + b and, when
 * not in place, that x is unchanged. */
static void run_and_check(tu_engine *e, tu_rng *r, int32_t dtype, const prt_dims *d,
                          int dynamic, int in_place)
{
    size_t es = prt_dtype_size(dtype);
    int64_t n = tu_volume(d);
    unsigned char *x = malloc((size_t)n * es + 1);
    unsigned char *x0 = malloc((size_t)n * es + 1);
    unsigned char *b = malloc((size_t)n * es + 1);
    unsigned char *y = malloc((size_t)n * es + 1);
    unsigned char *want = malloc((size_t)n * es + 1);
    unsigned char *res;
    if (!x || !x0 || !b || !y || !want) {
        CHECK(!"out of memory in test");
        goto done;
    }
    for (int64_t i = 0; i < n; i++) {
        if (dtype == PRT_FLOAT16) {
            /* magnitudes below 2^11: sums stay finite */
            uint16_t u = tu_rng_half(r, 25), v = tu_rng_half(r, 25);
            uint16_t s = double_to_half(tu_half_to_double(u) + tu_half_to_double(v));
            memcpy(x + 2 * i, &u, 2);
            memcpy(b + 2 * i, &v, 2);
            memcpy(want + 2 * i, &s, 2);
        } else {
            float u = (float)((tu_rng_uniform(r) - 0.5) * 200.0);
            float v = (float)((tu_rng_uniform(r) - 0.5) * 200.0);
            float s = u + v;
            memcpy(x + 4 * i, &u, 4);
            memcpy(b + 4 * i, &v, 4);
            memcpy(want + 4 * i, &s, 4);
        }
    }
    memcpy(x0, x, (size_t)n * es);
    if (dynamic) {
        CHECK_OK(prt_context_set_input_shape(e->ctx, "x", d));
        CHECK_OK(prt_context_set_input_shape(e->ctx, "b", d));
    }
    res = in_place ? x : y;
    CHECK_OK(prt_context_set_tensor_address(e->ctx, "x", x));
    CHECK_OK(prt_context_set_tensor_address(e->ctx, "b", b));
    CHECK_OK(prt_context_set_tensor_address(e->ctx, "y", res));
    CHECK_OK(prt_context_enqueue(e->ctx, NULL));
    {
        int64_t bad = 0;
        for (int64_t i = 0; i < n; i++) {
            /* +0 and -0 are the same sum */
            if (memcmp(res + (size_t)i * es, want + (size_t)i * es, es) == 0)
                continue;
            if (dtype == PRT_FLOAT16) {
                uint16_t g, w;
                memcpy(&g, res + 2 * i, 2);
                memcpy(&w, want + 2 * i, 2);
                if (((g | w) & 0x7FFF) == 0)
                    continue;
            } else {
                float g, w;
                memcpy(&g, res + 4 * i, 4);
                memcpy(&w, want + 4 * i, 4);
                if (g == 0.0f && w == 0.0f)
                    continue;
            }
            bad++;
        }
        CHECK(bad == 0);
        if (bad)
            fprintf(stderr, "    %s %s: %lld of %lld wrong\n", prt_dtype_name(dtype),
                    in_place ? "in place" : "copied", (long long)bad, (long long)n);
    }
    if (!in_place)
        CHECK(memcmp(x, x0, (size_t)n * es) == 0);
done:
    free(x);
    free(x0);
    free(b);
    free(y);
    free(want);
}

static void test_static(prt_registry *reg)
{
    int64_t d3[3] = {4, 5, 6}, d0[1] = {1000};
    tu_rng r;
    tu_rng_seed(&r, 21);
    for (int s = 0; s < 2; s++) {
        prt_dims d = s ? tu_dims(1, d0) : tu_dims(3, d3);
        for (int dt = 0; dt < 2; dt++) {
            int32_t dtype = dt ? PRT_FLOAT16 : PRT_FLOAT32;
            tu_engine e;
            CHECK_OK(aip_build(reg, dtype, dtype, &d, &d, NULL, NULL, NULL, &e));
            if (!e.ctx)
                continue;
            run_and_check(&e, &r, dtype, &d, 0, 1);
            run_and_check(&e, &r, dtype, &d, 0, 0);
            run_and_check(&e, &r, dtype, &d, 0, 1);
            tu_engine_destroy(&e);
        }
    }
}

static void test_dynamic(prt_registry *reg)
{
    int64_t dyn[2] = {-1, 8}, mn[2] = {1, 8}, op[2] = {4, 8}, mx[2] = {32, 8};
    prt_dims d = tu_dims(2, dyn), dmin = tu_dims(2, mn), dopt = tu_dims(2, op),
             dmax = tu_dims(2, mx);
    static const int64_t rows[] = {1, 32, 7};
    tu_rng r;
    tu_rng_seed(&r, 22);
    for (int dt = 0; dt < 2; dt++) {
        int32_t dtype = dt ? PRT_FLOAT16 : PRT_FLOAT32;
        tu_engine e;
        CHECK_OK(aip_build(reg, dtype, dtype, &d, &d, &dmin, &dopt, &dmax, &e));
        if (!e.ctx)
            continue;
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
            int64_t cur[2] = {rows[i], 8};
            prt_dims c = tu_dims(2, cur);
            run_and_check(&e, &r, dtype, &c, 1, (int)(i & 1));
        }
        tu_engine_destroy(&e);
    }
}

static void test_errors(prt_registry *reg)
{
    int64_t a[2] = {2, 3}, b[2] = {2, 4}, c[3] = {2, 3, 1};
    prt_dims da = tu_dims(2, a), db = tu_dims(2, b), dc = tu_dims(3, c);
    tu_engine e;
    prt_status st;
    st = aip_build(reg, PRT_FLOAT32, PRT_FLOAT32, &da, &db, NULL, NULL, NULL, &e);
    CHECK(st != PRT_OK);
    CHECK(strstr(prt_last_error(), "AddInPlace") != NULL);
    tu_engine_destroy(&e);
    st = aip_build(reg, PRT_FLOAT32, PRT_FLOAT32, &da, &dc, NULL, NULL, NULL, &e);
    CHECK(st != PRT_OK);
    CHECK(strstr(prt_last_error(), "rank") != NULL);
    tu_engine_destroy(&e);
    st = aip_build(reg, PRT_FLOAT32, PRT_FLOAT16, &da, &da, NULL, NULL, NULL, &e);
    CHECK(st != PRT_OK);
    CHECK(strstr(prt_last_error(), "float16") != NULL);
    tu_engine_destroy(&e);
}

int main(void)
{
    prt_registry *reg = tu_registry_with_plugins();
    if (!reg)
        return tu_finish("test_plugin_addinplace");
    test_static(reg);
    test_dynamic(reg);
    test_errors(reg);
    prt_registry_destroy(reg);
    return tu_finish("test_plugin_addinplace");
}
