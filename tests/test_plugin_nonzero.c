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

static int64_t volume(const prt_dims *d)
{
    int64_t v = 1;
    for (int i = 0; i < d->nb_dims; i++)
        v *= d->d[i];
    return v;
}

/* ---- engine plumbing ------------------------------------------------------ */

typedef struct nz_engine {
    prt_engine *engine; /* loaded back from bytes */
    prt_context *ctx;
} nz_engine;

static void nz_engine_destroy(nz_engine *e)
{
    prt_context_destroy(e->ctx);
    prt_engine_destroy(e->engine);
    e->ctx = NULL;
    e->engine = NULL;
}

/* x (dims, maybe dynamic with a profile) -> NonZero(rowOrder) -> y
 * (indices), k (count). */
static prt_status nz_build(prt_registry *reg, int32_t row_order, int32_t dtype,
                           const prt_dims *dims, const prt_dims *mn,
                           const prt_dims *opt, const prt_dims *mx,
                           nz_engine *out)
{
    prt_field f[2] = {{"rowOrder", &row_order, PRT_FIELD_INT32, 1},
                      {"backend", "cpu", PRT_FIELD_CHAR, 3}};
    prt_plugin *p = tu_make_plugin(reg, "", "NonZeroPlugin", "1", f, 2);
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *eng = NULL;
    void *bytes = NULL;
    size_t size = 0;
    int32_t x, layer, y, k, prof;
    prt_status st;
    out->engine = NULL;
    out->ctx = NULL;
    if (!p)
        return PRT_ERR_PLUGIN;
    st = prt_network_create(&net);
    if (!st)
        st = prt_network_add_input(net, "x", dtype, dims, &x);
    if (!st)
        st = prt_network_add_plugin(net, &x, 1, NULL, 0, p, &layer);
    if (!st) {
        p = NULL;
        st = prt_network_get_layer_output(net, layer, 0, &y);
    }
    if (!st)
        st = prt_network_get_layer_output(net, layer, 1, &k);
    if (!st)
        st = prt_network_set_tensor_name(net, y, "y");
    if (!st)
        st = prt_network_set_tensor_name(net, k, "k");
    if (!st)
        st = prt_network_mark_output(net, y);
    if (!st)
        st = prt_network_mark_output(net, k);
    if (!st)
        st = prt_builder_config_create(&cfg);
    if (!st && mn) {
        st = prt_builder_config_add_profile(cfg, &prof);
        if (!st)
            st = prt_builder_config_set_profile_dims(cfg, prof, "x", mn, opt,
                                                     mx);
    }
    if (!st)
        st = prt_build_engine(net, cfg, reg, &eng);
    if (!st)
        st = prt_engine_serialize(eng, &bytes, &size);
    if (!st)
        st = prt_engine_deserialize(reg, bytes, size, &out->engine);
    if (!st)
        st = prt_context_create(out->engine, &out->ctx);
    if (st)
        nz_engine_destroy(out);
    if (p)
        p->vt->runtime->destroy(p);
    prt_free(bytes);
    prt_engine_destroy(eng);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return st;
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
static void run_and_check(nz_engine *e, int32_t row_order, const prt_dims *d,
                          int dynamic, int first, const void *x,
                          const int32_t *ref, int64_t want_k)
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
        CHECK(volume(&ub) == 2 * bound);
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
    static const int64_t shapes[][2] = {{1, 1}, {1, 37}, {37, 1}, {7, 13},
                                        {128, 128}};
    static const double densities[] = {0.0, 0.01, 0.5, 1.0};
    tu_rng r;
    tu_rng_seed(&r, 1);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        prt_dims d = tu_dims(2, shapes[s]);
        int64_t n = volume(&d);
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
                nz_engine e;
                CHECK_OK(nz_build(reg, order, dtype, &d, NULL, NULL, NULL, &e));
                if (!e.ctx)
                    continue;
                /* One engine, several densities: K changes run to run. */
                for (size_t di = 0; di < 4; di++) {
                    int64_t k = make_input(&r, dtype, d.d[0], d.d[1],
                                           densities[di], x, ref);
                    if (densities[di] == 0.0)
                        CHECK(k == 0);
                    if (densities[di] == 1.0)
                        CHECK(k == n);
                    run_and_check(&e, order, &d, 0, di == 0, x, ref, k);
                }
                nz_engine_destroy(&e);
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
        nz_engine e;
        CHECK_OK(nz_build(reg, order, PRT_FLOAT32, &d, &dmin, &dopt, &dmax, &e));
        if (!e.ctx)
            continue;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            prt_dims cur = tu_dims(2, shapes[s]);
            int64_t n = volume(&cur);
            float *x = malloc(sizeof(float) * (size_t)n);
            int32_t *ref = malloc(sizeof(int32_t) * 2 * (size_t)n);
            if (x && ref) {
                int64_t k = make_input(&r, PRT_FLOAT32, cur.d[0], cur.d[1], 0.3,
                                       x, ref);
                run_and_check(&e, order, &cur, 1, s == 0, x, ref, k);
            }
            free(x);
            free(ref);
        }
        nz_engine_destroy(&e);
    }
}

/* ---- output allocator ----------------------------------------------------- */

typedef struct alloc_state {
    void *mem;
    uint64_t size;
    int reallocs;
    int notified;
    prt_dims dims;
} alloc_state;

static void *oa_reallocate(void *user, const char *name, void *current,
                           uint64_t size, uint64_t alignment)
{
    alloc_state *s = user;
    (void)name;
    (void)alignment;
    s->reallocs++;
    if (current && size <= s->size)
        return current;
    free(s->mem);
    s->mem = malloc(size ? (size_t)size : 1);
    s->size = s->mem ? size : 0;
    return s->mem;
}

static void oa_notify(void *user, const char *name, const prt_dims *dims)
{
    alloc_state *s = user;
    (void)name;
    s->notified++;
    s->dims = *dims;
}

static void test_output_allocator(prt_registry *reg)
{
    int64_t d2[2] = {9, 11};
    prt_dims d = tu_dims(2, d2);
    float x[99];
    int32_t ref[198];
    int64_t k = -1, want;
    alloc_state s;
    prt_output_allocator oa = {sizeof oa, PRT_PLUGIN_ABI_VERSION, &s,
                               oa_reallocate, oa_notify};
    nz_engine e;
    tu_rng r;
    memset(&s, 0, sizeof s);
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
    nz_engine_destroy(&e);
    free(s.mem);
}

static void test_errors(prt_registry *reg)
{
    int64_t d3[3] = {2, 3, 4};
    prt_dims d = tu_dims(3, d3);
    const prt_plugin_creator *c = NULL;
    nz_engine e;
    prt_status st = nz_build(reg, 1, PRT_FLOAT32, &d, NULL, NULL, NULL, &e);
    CHECK(st != PRT_OK);
    CHECK(strstr(prt_last_error(), "rank 3") != NULL);
    CHECK(strstr(prt_last_error(), "NonZeroPlugin") != NULL);
    nz_engine_destroy(&e);

    st = nz_build(reg, 1, PRT_INT32, &d, NULL, NULL, NULL, &e);
    CHECK(st != PRT_OK);
    nz_engine_destroy(&e);

    if (prt_registry_find_creator(reg, "", "NonZeroPlugin", "1", &c) != PRT_OK) {
        CHECK(!"NonZeroPlugin not found");
        return;
    }
    {
        float one = 1.0f;
        prt_field f = {"rowOrder", &one, PRT_FIELD_FLOAT32, 1};
        prt_field_collection fc = {1, &f};
        prt_plugin *p = NULL;
        CHECK_ERR(c->create(c, "nz", &fc, PRT_PHASE_BUILD, &p),
                  PRT_ERR_INVALID_ARGUMENT, "'rowOrder'");
        CHECK(strstr(prt_last_error(), "float32") != NULL);
        CHECK(strstr(prt_last_error(), "int32") != NULL);
        f.name = "backend";
        CHECK_ERR(c->create(c, "nz", &fc, PRT_PHASE_BUILD, &p),
                  PRT_ERR_INVALID_ARGUMENT, "'backend'");
        CHECK(p == NULL);
        /* A runtime-phase plugin has no build table. */
        f.name = "rowOrder";
        f.data = &(int32_t){0};
        f.type = PRT_FIELD_INT32;
        CHECK_OK(c->create(c, "nz", &fc, PRT_PHASE_RUNTIME, &p));
        if (p) {
            const prt_field_collection *s =
                p->vt->runtime->get_fields_to_serialize(p);
            CHECK(p->vt->build == NULL);
            CHECK(s->nb_fields == 1 &&
                  *(const int32_t *)s->fields[0].data == 0);
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
