/*
 * NonZeroPlugin from the standard plugin library, through the public API
 * only: registry -> network -> build -> bytes -> engine -> context -> run.
 *  - both orders (K x 2 and 2 x K); shapes 1x1, 1xN, Nx1, 7x13, 128x128;
 *    densities 0, ~1 %, ~50 %, 100 %; float32 and float16 (-0 is zero, NaN
 *    and subnormals are not); count and indices exact;
 *  - the output buffer sized from the shape before the run (upper bound),
 *    the true shape read after it; the output-allocator path;
 *  - dynamic dims with a profile;
 *  - errors: a 3-D input fails the build naming the rank; a field of the
 *    wrong type is named.
 */
#include <math.h>
#include <stdlib.h>

#include "testutil.h"

/* x (dims, maybe dynamic with a profile) -> NonZero(rowOrder) -> y
 * (indices), k (count), built and loaded back. */
static prt_status nz_build(prt_registry *reg, int32_t row_order, int32_t dtype,
                           const prt_dims *dims, const prt_dims *mn, const prt_dims *opt,
                           const prt_dims *mx, tu_engine *out)
{
    static const char *const outs[2] = {"y", "k"};
    prt_field f[2] = {{"rowOrder", &row_order, PRT_FIELD_INT32, 1},
                      {"backend", "cpu", PRT_FIELD_CHAR, 3}};
    prt_plugin *p = tu_make_plugin(reg, "", "NonZeroPlugin", "1", f, 2);
    tu_input_spec x = {"x", dtype, dims, mn, opt, mx};
    return tu_build_roundtrip(reg, p, &x, 1, outs, 2, 0, out);
}

/* Test data: R x C values of dtype, a fraction `density` of them non-zero.
 * Zeros are +0 or -0; non-zeros include NaN and subnormals. Writes the
 * reference (row, col) pairs in row-major order to ref and returns K. */
static int64_t make_input(tu_rng *r, int32_t dtype, int64_t rows, int64_t cols,
                          double density, void *x, int32_t *ref)
{
    int64_t k = 0;
    for (int64_t i = 0; i < rows * cols; i++) {
        int nz = tu_rng_uniform(r) < density;
        if (dtype == PRT_FLOAT16) {
            uint16_t h = tu_rng_range(r, 0, 1) ? 0x8000 : 0x0000;
            if (nz) {
                int64_t kind = tu_rng_range(r, 0, 9);
                h = (uint16_t)(h | tu_rng_range(r, 1, 0x7BFF)); /* finite */
                if (kind == 0)
                    h = 0x7E00; /* NaN */
                else if (kind == 1)
                    h = 0x8001; /* smallest negative subnormal */
            }
            ((uint16_t *)x)[i] = h;
        } else {
            float v = tu_rng_range(r, 0, 1) ? -0.0f : 0.0f;
            if (nz) {
                int64_t kind = tu_rng_range(r, 0, 9);
                v = (float)((tu_rng_uniform(r) - 0.5) * 200.0);
                if (v == 0.0f)
                    v = 1.0f;
                if (kind == 0)
                    v = NAN;
                else if (kind == 1)
                    v = 1e-42f; /* subnormal */
            }
            ((float *)x)[i] = v;
        }
        if (nz) {
            ref[2 * k] = (int32_t)(i / cols);
            ref[2 * k + 1] = (int32_t)(i % cols);
            k++;
        }
    }
    return k;
}

/* Runs with y sized for the upper bound; checks the pre-run shape (the
 * bound), K, the post-run shape and every index. `first`: the context's
 * first run. */
static void run_and_check(tu_engine *e, int32_t row_order, const prt_dims *d, int dynamic,
                          int first, const void *x, const int32_t *ref, int64_t want_k)
{
    prt_dims ub, got;
    int32_t *y = NULL;
    int64_t k = -1, bound = d->d[0] * d->d[1];
    if (dynamic)
        CHECK_OK(prt_context_set_input_shape(e->ctx, "x", d));
    CHECK_OK(prt_context_get_tensor_shape(e->ctx, "y", &ub));
    CHECK(ub.nb_dims == 2);
    /* Before the first run, and after an input shape is set, the shape is
     * the upper bound; after a run on unchanged shapes it is that run's
     * true shape (plugrt.h), so the buffer is sized from R * C here. */
    if (first || dynamic)
        CHECK(tu_volume(&ub) == 2 * bound);
    y = malloc(sizeof(int32_t) * (size_t)(2 * bound + 1));
    if (!y) {
        CHECK(!"out of memory in test");
        return;
    }
    y[2 * bound] = 0x5a5a5a5a; /* canary past the bound */
    CHECK_OK(prt_context_set_tensor_address(e->ctx, "x", (void *)x));
    CHECK_OK(prt_context_set_tensor_address(e->ctx, "y", y));
    CHECK_OK(prt_context_set_tensor_address(e->ctx, "k", &k));
    CHECK_OK(prt_context_enqueue(e->ctx, NULL));
    CHECK(k == want_k);
    CHECK_OK(prt_context_get_tensor_shape(e->ctx, "y", &got));
    CHECK(got.nb_dims == 2);
    if (row_order)
        CHECK(got.d[0] == want_k && got.d[1] == 2);
    else
        CHECK(got.d[0] == 2 && got.d[1] == want_k);
    if (k == want_k) {
        int64_t bad = 0;
        for (int64_t j = 0; j < k; j++) {
            int32_t r = row_order ? y[2 * j] : y[j];
            int32_t c = row_order ? y[2 * j + 1] : y[k + j];
            bad += r != ref[2 * j] || c != ref[2 * j + 1];
        }
        CHECK(bad == 0);
    }
    CHECK(y[2 * bound] == 0x5a5a5a5a);
    free(y);
}

static void test_static(prt_registry *reg)
{
    static const int64_t shapes[][2] = {{1, 1}, {1, 37}, {37, 1}, {7, 13}, {128, 128}};
    static const double densities[] = {0.0, 0.01, 0.5, 1.0};
    tu_rng r;
    tu_rng_seed(&r, 1);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        prt_dims d = tu_dims(2, shapes[s]);
        int64_t n = tu_volume(&d);
        void *x = malloc(4 * (size_t)n);
        int32_t *ref = malloc(sizeof(int32_t) * 2 * (size_t)n);
        if (!x || !ref) {
            CHECK(!"out of memory in test");
            free(x);
            free(ref);
            return;
        }
        for (int dt = 0; dt < 2; dt++) {
            for (int32_t order = 0; order < 2; order++) {
                int32_t dtype = dt ? PRT_FLOAT16 : PRT_FLOAT32;
                tu_engine e;
                CHECK_OK(nz_build(reg, order, dtype, &d, NULL, NULL, NULL, &e));
                if (!e.ctx)
                    continue;
                /* One engine, several densities: K changes run to run. */
                for (size_t di = 0; di < 4; di++) {
                    int64_t k =
                        make_input(&r, dtype, d.d[0], d.d[1], densities[di], x, ref);
                    if (densities[di] == 0.0)
                        CHECK(k == 0);
                    if (densities[di] == 1.0)
                        CHECK(k == n);
                    run_and_check(&e, order, &d, 0, di == 0, x, ref, k);
                }
                tu_engine_destroy(&e);
            }
        }
        free(x);
        free(ref);
    }
}

static void test_dynamic(prt_registry *reg)
{
    int64_t dyn[2] = {-1, -1}, mn[2] = {1, 1}, op[2] = {8, 8}, mx[2] = {40, 50};
    prt_dims d = tu_dims(2, dyn), dmin = tu_dims(2, mn), dopt = tu_dims(2, op),
             dmax = tu_dims(2, mx);
    static const int64_t shapes[][2] = {{1, 1}, {40, 50}, {5, 7}, {13, 2}};
    tu_rng r;
    tu_rng_seed(&r, 2);
    for (int32_t order = 0; order < 2; order++) {
        tu_engine e;
        CHECK_OK(nz_build(reg, order, PRT_FLOAT32, &d, &dmin, &dopt, &dmax, &e));
        if (!e.ctx)
            continue;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            prt_dims cur = tu_dims(2, shapes[s]);
            int64_t n = tu_volume(&cur);
            float *x = malloc(sizeof(float) * (size_t)n);
            int32_t *ref = malloc(sizeof(int32_t) * 2 * (size_t)n);
            if (x && ref) {
                int64_t k = make_input(&r, PRT_FLOAT32, cur.d[0], cur.d[1], 0.3, x, ref);
                run_and_check(&e, order, &cur, 1, s == 0, x, ref, k);
            }
            free(x);
            free(ref);
        }
        tu_engine_destroy(&e);
    }
}

static void test_output_allocator(prt_registry *reg)
{
    int64_t d2[2] = {9, 11};
    prt_dims d = tu_dims(2, d2);
    float x[99];
    int32_t ref[198];
    int64_t k = -1, want;
    tu_capture s;
    prt_output_allocator oa = tu_capture_allocator(&s);
    tu_engine e;
    tu_rng r;
    tu_rng_seed(&r, 3);
    want = make_input(&r, PRT_FLOAT32, 9, 11, 0.2, x, ref);
    CHECK_OK(nz_build(reg, 0, PRT_FLOAT32, &d, NULL, NULL, NULL, &e));
    if (!e.ctx)
        return;
    CHECK_OK(prt_context_set_tensor_address(e.ctx, "x", x));
    CHECK_OK(prt_context_set_tensor_address(e.ctx, "k", &k));
    CHECK_OK(prt_context_set_output_allocator(e.ctx, "y", &oa));
    CHECK_OK(prt_context_enqueue(e.ctx, NULL));
    CHECK(k == want);
    CHECK(s.reallocs >= 1);
    CHECK(s.notified == 1);
    CHECK(s.dims.nb_dims == 2 && s.dims.d[0] == 2 && s.dims.d[1] == want);
    CHECK(s.mem != NULL && s.size >= (uint64_t)(2 * want) * sizeof(int32_t));
    if (s.mem && k == want) {
        const int32_t *y = s.mem;
        int64_t bad = 0;
        for (int64_t j = 0; j < k; j++)
            bad += y[j] != ref[2 * j] || y[k + j] != ref[2 * j + 1];
        CHECK(bad == 0);
    }
    tu_engine_destroy(&e);
    free(s.mem);
}

static void test_errors(prt_registry *reg)
{
    int64_t d3[3] = {2, 3, 4};
    prt_dims d = tu_dims(3, d3);
    const prt_plugin_creator *c;
    tu_engine e;
    prt_status st = nz_build(reg, 1, PRT_FLOAT32, &d, NULL, NULL, NULL, &e);
    CHECK(st != PRT_OK);
    CHECK(strstr(prt_last_error(), "rank 3") != NULL);
    CHECK(strstr(prt_last_error(), "NonZeroPlugin") != NULL);
    tu_engine_destroy(&e);

    st = nz_build(reg, 1, PRT_INT32, &d, NULL, NULL, NULL, &e);
    CHECK(st != PRT_OK);
    tu_engine_destroy(&e);

    c = tu_find_creator(reg, "", "NonZeroPlugin", "1");
    if (!c)
        return;
    {
        float one = 1.0f;
        prt_field f = {"rowOrder", &one, PRT_FIELD_FLOAT32, 1};
        prt_field_collection fc = {1, &f};
        prt_plugin *p = NULL;
        CHECK_ERR(c->create(c, "nz", &fc, PRT_PHASE_BUILD, &p), PRT_ERR_INVALID_ARGUMENT,
                  "'rowOrder'");
        CHECK(strstr(prt_last_error(), "float32") != NULL);
        CHECK(strstr(prt_last_error(), "int32") != NULL);
        f.name = "backend";
        CHECK_ERR(c->create(c, "nz", &fc, PRT_PHASE_BUILD, &p), PRT_ERR_INVALID_ARGUMENT,
                  "'backend'");
        CHECK(p == NULL);
        /* A runtime-phase plugin has no build table. */
        f.name = "rowOrder";
        f.data = &(int32_t){0};
        f.type = PRT_FIELD_INT32;
        CHECK_OK(c->create(c, "nz", &fc, PRT_PHASE_RUNTIME, &p));
        if (p) {
            const prt_field_collection *s = p->vt->runtime->get_fields_to_serialize(p);
            CHECK(p->vt->build == NULL);
            CHECK(s->nb_fields == 1 && *(const int32_t *)s->fields[0].data == 0);
            p->vt->runtime->destroy(p);
        }
    }
}

int main(void)
{
    prt_registry *reg = tu_registry_with_plugins();
    if (!reg)
        return tu_finish("test_plugin_nonzero");
    test_static(reg);
    test_dynamic(reg);
    test_output_allocator(reg);
    test_errors(reg);
    prt_registry_destroy(reg);
    return tu_finish("test_plugin_nonzero");
}
