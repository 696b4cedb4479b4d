/*
 * CustomHardmax from the standard plugin library, through the public API
 * only: registry -> network -> build -> bytes -> engine -> context -> run.
 *  - every rank 1..7 and every axis -rank..rank-1, random dims 1..3, values
 *    (u - 0.5) * 200, float32 and float16, exact against a plain reference;
 *  - ties (the first maximum wins) and NaN (NaN is greater than everything,
 *    the first NaN wins, as numpy.argmax);
 *  - dynamic dims with a profile, run at several shapes;
 *  - errors: axis out of range (build fails naming axis and rank), a field
 *    of the wrong type (named), an unsupported dtype;
 *  - the workspace asked for each target device (set_target_device).
 */
#include <math.h>
#include <stdlib.h>

#include "testutil.h"

/* Every half is exact in a float. */
static float half_to_float(uint16_t h)
{
    return (float)tu_half_to_double(h);
}

/* ---- reference ------------------------------------------------------------ */

/* y = one_hot(first argmax of x along axis); NaN greatest, first NaN wins. */
static void ref_hardmax(const float *x, float *y, const prt_dims *d, int axis)
{
    int64_t outer = 1, inner = 1, n = d->d[axis];
    for (int i = 0; i < axis; i++)
        outer *= d->d[i];
    for (int i = axis + 1; i < d->nb_dims; i++)
        inner *= d->d[i];
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t j = 0; j < inner; j++) {
            int64_t best = 0;
            for (int64_t k = 1; k < n; k++) {
                float b = x[(o * n + best) * inner + j];
                float v = x[(o * n + k) * inner + j];
                if (isnan(b))
                    break;
                if (isnan(v) || v > b)
                    best = k;
            }
            for (int64_t k = 0; k < n; k++)
                y[(o * n + k) * inner + j] = k == best ? 1.0f : 0.0f;
        }
    }
}

/* ---- engine plumbing ------------------------------------------------------ */

/* x -> CustomHardmax(axis) -> y, built and loaded back. `dims` may hold -1;
 * then min/opt/max give the profile. */
static prt_status hm_build(prt_registry *reg, int32_t axis, int32_t dtype,
                           const prt_dims *dims, const prt_dims *mn, const prt_dims *opt,
                           const prt_dims *mx, tu_engine *out)
{
    static const char *const outs[1] = {"y"};
    prt_field f = {"axis", &axis, PRT_FIELD_INT32, 1};
    prt_plugin *p = tu_make_plugin(reg, "", "CustomHardmax", "1", &f, 1);
    tu_input_spec x = {"x", dtype, dims, mn, opt, mx};
    return tu_build_roundtrip(reg, p, &x, 1, outs, 1, 0, out);
}

/* Runs once; shape set only when `dynamic`. Checks y's reported shape. */
static prt_status hm_run(tu_engine *e, const prt_dims *d, int dynamic, void *x, void *y)
{
    prt_dims got;
    prt_status st = PRT_OK;
    if (dynamic)
        st = prt_context_set_input_shape(e->ctx, "x", d);
    if (!st)
        st = prt_context_set_tensor_address(e->ctx, "x", x);
    if (!st)
        st = prt_context_set_tensor_address(e->ctx, "y", y);
    if (!st)
        st = prt_context_enqueue(e->ctx, NULL);
    if (!st)
        st = prt_context_get_tensor_shape(e->ctx, "y", &got);
    if (!st) {
        CHECK(got.nb_dims == d->nb_dims);
        for (int i = 0; i < d->nb_dims && i < got.nb_dims; i++)
            CHECK(got.d[i] == d->d[i]);
    }
    return st;
}

/* Value kinds for test data. */
enum { VALUES_RANDOM, VALUES_TIES, VALUES_NAN };

/* Fills n values of dtype into buf and their float values into ref_in. */
static void fill(tu_rng *r, int kind, int32_t dtype, int64_t n, void *buf, float *ref_in)
{
    for (int64_t i = 0; i < n; i++) {
        float v;
        if (dtype == PRT_FLOAT16) {
            uint16_t h = tu_rng_half(r, 30);
            if (kind == VALUES_TIES)
                h = (uint16_t)(0x3C00 + 0x400 * tu_rng_range(r, 0, 2));
            if (kind == VALUES_NAN && tu_rng_range(r, 0, 4) == 0)
                h = (uint16_t)(tu_rng_range(r, 0, 1) ? 0x7E00 : 0xFC01);
            ((uint16_t *)buf)[i] = h;
            v = half_to_float(h);
        } else {
            v = (float)((tu_rng_uniform(r) - 0.5) * 200.0);
            if (kind == VALUES_TIES)
                v = (float)tu_rng_range(r, 0, 2);
            if (kind == VALUES_NAN && tu_rng_range(r, 0, 4) == 0)
                v = NAN;
            ((float *)buf)[i] = v;
        }
        ref_in[i] = v;
    }
}

static int64_t count_mismatches(int32_t dtype, const void *y, const float *want,
                                int64_t n)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        float g = dtype == PRT_FLOAT16 ? half_to_float(((const uint16_t *)y)[i])
                                       : ((const float *)y)[i];
        bad += g != want[i];
    }
    return bad;
}

/* One static-shape case: build, run, compare exactly. */
static void static_case(prt_registry *reg, tu_rng *r, const prt_dims *d, int32_t axis,
                        int32_t dtype, int kind)
{
    int64_t n = tu_volume(d);
    float *xin = malloc(sizeof(float) * (size_t)n);
    float *want = malloc(sizeof(float) * (size_t)n);
    void *x = malloc(4 * (size_t)n), *y = malloc(4 * (size_t)n);
    int rank = d->nb_dims;
    tu_engine e;
    if (!xin || !want || !x || !y) {
        CHECK(!"out of memory in test");
        goto done;
    }
    fill(r, kind, dtype, n, x, xin);
    ref_hardmax(xin, want, d, axis < 0 ? axis + rank : axis);
    CHECK_OK(hm_build(reg, axis, dtype, d, NULL, NULL, NULL, &e));
    if (!e.ctx)
        goto done;
    memset(y, 0x7f, 4 * (size_t)n);
    CHECK_OK(hm_run(&e, d, 0, x, y));
    {
        int64_t bad = count_mismatches(dtype, y, want, n);
        CHECK(bad == 0);
        if (bad)
            fprintf(stderr, "    rank %d axis %d %s kind %d: %lld wrong\n", rank,
                    (int)axis, prt_dtype_name(dtype), kind, (long long)bad);
    }
    tu_engine_destroy(&e);
done:
    free(xin);
    free(want);
    free(x);
    free(y);
}

static void test_all_ranks_and_axes(prt_registry *reg)
{
    tu_rng r;
    tu_rng_seed(&r, 42);
    for (int rank = 1; rank <= 7; rank++) {
        for (int axis = -rank; axis < rank; axis++) {
            int64_t d[PRT_MAX_DIMS];
            prt_dims dims;
            for (int i = 0; i < rank; i++)
                d[i] = tu_rng_range(&r, 1, 3);
            dims = tu_dims(rank, d);
            static_case(reg, &r, &dims, axis, PRT_FLOAT32, VALUES_RANDOM);
            static_case(reg, &r, &dims, axis, PRT_FLOAT16, VALUES_RANDOM);
        }
    }
}

static void test_ties_and_nan(prt_registry *reg)
{
    tu_rng r;
    int64_t d3[3] = {3, 4, 5};
    prt_dims dims = tu_dims(3, d3);
    tu_rng_seed(&r, 7);
    for (int axis = -3; axis < 3; axis++) {
        static_case(reg, &r, &dims, axis, PRT_FLOAT32, VALUES_TIES);
        static_case(reg, &r, &dims, axis, PRT_FLOAT16, VALUES_TIES);
        static_case(reg, &r, &dims, axis, PRT_FLOAT32, VALUES_NAN);
        static_case(reg, &r, &dims, axis, PRT_FLOAT16, VALUES_NAN);
    }
    /* The rule spelled out on one row: [1, 7, 7, NaN, 9, NaN] -> the first
     * NaN; [2, 5, 5, -1] -> the first 5. */
    {
        int64_t d1[1] = {6};
        prt_dims d = tu_dims(1, d1);
        float x[6] = {1, 7, 7, NAN, 9, NAN}, y[6];
        float x2[6] = {2, 5, 5, -1, -INFINITY, 4};
        tu_engine e;
        CHECK_OK(hm_build(reg, 0, PRT_FLOAT32, &d, NULL, NULL, NULL, &e));
        if (e.ctx) {
            CHECK_OK(hm_run(&e, &d, 0, x, y));
            CHECK(y[0] == 0 && y[1] == 0 && y[2] == 0 && y[3] == 1 && y[4] == 0 &&
                  y[5] == 0);
            CHECK_OK(hm_run(&e, &d, 0, x2, y));
            CHECK(y[0] == 0 && y[1] == 1 && y[2] == 0 && y[3] == 0 && y[4] == 0 &&
                  y[5] == 0);
        }
        tu_engine_destroy(&e);
    }
}

static void test_dynamic(prt_registry *reg)
{
    int64_t dyn[3] = {-1, 4, -1}, mn[3] = {1, 4, 1}, op[3] = {2, 4, 8},
            mx[3] = {5, 4, 300};
    prt_dims d = tu_dims(3, dyn), dmin = tu_dims(3, mn), dopt = tu_dims(3, op),
             dmax = tu_dims(3, mx);
    int64_t shapes[][3] = {{1, 4, 1}, {2, 4, 8}, {5, 4, 300}, {3, 4, 7}};
    tu_rng r;
    tu_rng_seed(&r, 99);
    for (int dt = 0; dt < 2; dt++) {
        int32_t dtype = dt ? PRT_FLOAT16 : PRT_FLOAT32;
        tu_engine e;
        CHECK_OK(hm_build(reg, 1, dtype, &d, &dmin, &dopt, &dmax, &e));
        if (!e.ctx)
            continue;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            prt_dims cur = tu_dims(3, shapes[s]);
            int64_t n = tu_volume(&cur);
            float *xin = malloc(sizeof(float) * (size_t)n);
            float *want = malloc(sizeof(float) * (size_t)n);
            void *x = malloc(4 * (size_t)n), *y = malloc(4 * (size_t)n);
            if (xin && want && x && y) {
                fill(&r, VALUES_RANDOM, dtype, n, x, xin);
                ref_hardmax(xin, want, &cur, 1);
                CHECK_OK(hm_run(&e, &cur, 1, x, y));
                CHECK(count_mismatches(dtype, y, want, n) == 0);
            }
            free(xin);
            free(want);
            free(x);
            free(y);
        }
        tu_engine_destroy(&e);
    }
}

static void test_errors(prt_registry *reg)
{
    const prt_plugin_creator *c;
    int64_t d3[3] = {2, 3, 4};
    prt_dims d = tu_dims(3, d3);
    tu_engine e;
    prt_status st;

    /* Axis out of range: the build fails, naming the axis and the rank. */
    st = hm_build(reg, 3, PRT_FLOAT32, &d, NULL, NULL, NULL, &e);
    CHECK(st != PRT_OK);
    CHECK(strstr(prt_last_error(), "axis 3") != NULL);
    CHECK(strstr(prt_last_error(), "rank 3") != NULL);
    tu_engine_destroy(&e);
    st = hm_build(reg, -4, PRT_FLOAT32, &d, NULL, NULL, NULL, &e);
    CHECK(st != PRT_OK);
    CHECK(strstr(prt_last_error(), "axis -4") != NULL);
    tu_engine_destroy(&e);

    /* Unsupported dtype. */
    st = hm_build(reg, 0, PRT_INT32, &d, NULL, NULL, NULL, &e);
    CHECK(st != PRT_OK);
    CHECK(strstr(prt_last_error(), "int32") != NULL);
    tu_engine_destroy(&e);

    /* A field of the wrong type is named, with both types. */
    c = tu_find_creator(reg, "", "CustomHardmax", "1");
    if (!c)
        return;
    {
        float axis = 1.0f;
        int32_t two[2] = {0, 1};
        prt_field f = {"axis", &axis, PRT_FIELD_FLOAT32, 1};
        prt_field_collection fc = {1, &f};
        prt_plugin *p = NULL;
        CHECK_ERR(c->create(c, "hm", &fc, PRT_PHASE_BUILD, &p), PRT_ERR_INVALID_ARGUMENT,
                  "'axis'");
        CHECK(strstr(prt_last_error(), "float32") != NULL);
        CHECK(strstr(prt_last_error(), "int32") != NULL);
        CHECK(strstr(prt_last_error(), "CustomHardmax") != NULL);
        CHECK(p == NULL);
        f.data = two;
        f.type = PRT_FIELD_INT32;
        f.length = 2;
        CHECK_ERR(c->create(c, "hm", &fc, PRT_PHASE_BUILD, &p), PRT_ERR_INVALID_ARGUMENT,
                  "'axis'");
        /* Unknown fields are ignored; absent axis means -1. */
        f.name = "unknownField";
        CHECK_OK(c->create(c, "hm", &fc, PRT_PHASE_BUILD, &p));
        if (p) {
            const prt_field_collection *s = p->vt->runtime->get_fields_to_serialize(p);
            CHECK(s->nb_fields == 1 && strcmp(s->fields[0].name, "axis") == 0 &&
                  *(const int32_t *)s->fields[0].data == -1);
            /* CUDA too, where this build and machine can use it. */
            CHECK(p->vt->core->devices(p) ==
                  ((1u << PRT_DEVICE_CPU) |
                   (prt_device_check(PRT_DEVICE_CUDA) == PRT_OK ? 1u << PRT_DEVICE_CUDA
                                                                : 0u)));
            p->vt->runtime->destroy(p);
        }
    }
}

/* The workspace follows the device the engine is for (set_target_device):
 * none for a CPU engine wherever it is asked, the CUDA kernels' scratch
 * for a CUDA one (where this build has them: a build without asks none);
 * not told, what the machine can run. A plan made where there is no GPU so
 * claims what the same layer asks on a machine with one, and loads there. */
static void test_workspace_by_target(prt_registry *reg)
{
    const prt_plugin_creator *c = tu_find_creator(reg, "", "CustomHardmax", "1");
    prt_field_collection fc = {0, NULL};
    prt_plugin *p = NULL;
    prt_dynamic_tensor_desc io[2];
    int64_t untold = -1, cpu = -1, cuda = -1;
    if (!c)
        return;
    CHECK_OK(c->create(c, "hm", &fc, PRT_PHASE_BUILD, &p));
    if (!p)
        return;
    memset(io, 0, sizeof io);
    for (int k = 0; k < 2; k++) {
        io[k].desc.dtype = PRT_FLOAT32;
        io[k].desc.dims = io[k].min = io[k].opt = io[k].max = (prt_dims){2, {64, 4096}};
    }
    CHECK(p->vt->build->set_target_device != NULL);
    CHECK_OK(p->vt->build->configure(p, io, 1, io + 1, 1));
    CHECK_OK(p->vt->build->get_workspace_size(p, io, 1, io + 1, 1, &untold));
    CHECK_OK(p->vt->build->set_target_device(p, PRT_DEVICE_CPU));
    CHECK_OK(p->vt->build->get_workspace_size(p, io, 1, io + 1, 1, &cpu));
    CHECK_OK(p->vt->build->set_target_device(p, PRT_DEVICE_CUDA));
    CHECK_OK(p->vt->build->get_workspace_size(p, io, 1, io + 1, 1, &cuda));
    CHECK(cpu == 0);
    CHECK(cuda >= untold && untold >= 0);
    CHECK(untold == (prt_device_check(PRT_DEVICE_CUDA) == PRT_OK ? cuda : 0));
    CHECK_ERR(p->vt->build->set_target_device(p, 7), PRT_ERR_INVALID_ARGUMENT,
              "unknown device 7");
    p->vt->runtime->destroy(p);
}

int main(void)
{
    prt_registry *reg = tu_registry_with_plugins();
    if (!reg)
        return tu_finish("test_plugin_hardmax");
    test_all_ranks_and_axes(reg);
    test_ties_and_nan(reg);
    test_dynamic(reg);
    test_errors(reg);
    test_workspace_by_target(reg);
    prt_registry_destroy(reg);
    return tu_finish("test_plugin_hardmax");
}
