/*
 * circ_pad_plugin ("example") from the standard plugin library, through the
 * public API only: registry -> network -> build -> bytes -> engine ->
 * context -> run.
 *  - ranks 1..4, random dims and pads (zero pads, pads on fewer dims than
 *    the rank, pads equal to the dim), float32 and float16, bit-exact against
 *    a plain reference of torch.nn.functional.pad(mode="circular");
 *  - dynamic dims with a profile, run at several shapes;
 *  - errors: pad > dim (static: the build names the dim, its size and the
 *    pad; dynamic: the profile minimum is checked), odd pad count, negative
 *    pads, more pads than dims, a field of the wrong type.
 */
#include <stdlib.h>

#include "testutil.h"

/* Output dims: d + before + after on the last npads / 2 dims. */
static prt_dims padded_dims(const prt_dims *d, const int32_t *pads, int32_t npads)
{
    prt_dims o = *d;
    for (int32_t p = 0; p < npads / 2; p++)
        o.d[d->nb_dims - 1 - p] += pads[2 * p] + pads[2 * p + 1];
    return o;
}

/* Plain reference: every output element reads input index
 * (o - before) mod size on each padded dim. */
static void ref_circ_pad(const unsigned char *x, unsigned char *y, size_t es,
                         const prt_dims *d, const int32_t *pads, int32_t npads)
{
    prt_dims od = padded_dims(d, pads, npads);
    int64_t on = tu_volume(&od);
    for (int64_t o = 0; o < on; o++) {
        int64_t rem = o, src = 0, stride = 1;
        for (int k = d->nb_dims - 1; k >= 0; k--) {
            int p = d->nb_dims - 1 - k;
            int64_t ok = rem % od.d[k], before = p < npads / 2 ? pads[2 * p] : 0;
            int64_t ik = ((ok - before) % d->d[k] + d->d[k]) % d->d[k];
            rem /= od.d[k];
            src += ik * stride;
            stride *= d->d[k];
        }
        memcpy(y + (size_t)o * es, x + (size_t)src * es, es);
    }
}

/* ---- engine plumbing ------------------------------------------------------ */

/* x -> circ_pad_plugin(pads) -> y, built and loaded back; a profile when mn
 * is given. */
static prt_status cp_build(prt_registry *reg, const int32_t *pads, int32_t npads,
                           int32_t dtype, const prt_dims *dims, const prt_dims *mn,
                           const prt_dims *opt, const prt_dims *mx, tu_engine *out)
{
    static const char *const outs[1] = {"y"};
    prt_field f = {"pads", pads, PRT_FIELD_INT32, npads};
    prt_plugin *p = tu_make_plugin(reg, "example", "circ_pad_plugin", "1", &f, 1);
    tu_input_spec x = {"x", dtype, dims, mn, opt, mx};
    return tu_build_roundtrip(reg, p, &x, 1, outs, 1, 0, out);
}

/* Runs one shape and compares bytes with the reference. Input values are
 * random bits: the plugin copies, so any pattern must survive exactly. */
static void run_and_check(tu_engine *e, tu_rng *r, int32_t dtype, const prt_dims *d,
                          int dynamic, const int32_t *pads, int32_t npads)
{
    size_t es = prt_dtype_size(dtype);
    prt_dims od = padded_dims(d, pads, npads), got;
    int64_t n = tu_volume(d), on = tu_volume(&od);
    unsigned char *x = malloc((size_t)n * es + 1);
    unsigned char *y = malloc((size_t)on * es + 1);
    unsigned char *want = malloc((size_t)on * es + 1);
    if (!x || !y || !want) {
        CHECK(!"out of memory in test");
        goto done;
    }
    for (int64_t i = 0; i < n * (int64_t)es; i++)
        x[i] = (unsigned char)tu_rng_u64(r);
    ref_circ_pad(x, want, es, d, pads, npads);
    memset(y, 0xee, (size_t)on * es + 1);
    if (dynamic)
        CHECK_OK(prt_context_set_input_shape(e->ctx, "x", d));
    CHECK_OK(prt_context_set_tensor_address(e->ctx, "x", x));
    CHECK_OK(prt_context_set_tensor_address(e->ctx, "y", y));
    CHECK_OK(prt_context_enqueue(e->ctx, NULL));
    CHECK_OK(prt_context_get_tensor_shape(e->ctx, "y", &got));
    CHECK(got.nb_dims == od.nb_dims &&
          memcmp(got.d, od.d, sizeof(int64_t) * (size_t)od.nb_dims) == 0);
    CHECK(memcmp(y, want, (size_t)on * es) == 0);
    CHECK(y[(size_t)on * es] == 0xee); /* nothing written past the end */
done:
    free(x);
    free(y);
    free(want);
}

static void test_static(prt_registry *reg)
{
    tu_rng r;
    tu_rng_seed(&r, 11);
    for (int rank = 1; rank <= 4; rank++) {
        for (int rep = 0; rep < 8; rep++) {
            for (int dt = 0; dt < 2; dt++) {
                int32_t dtype = dt ? PRT_FLOAT16 : PRT_FLOAT32;
                int64_t d[PRT_MAX_DIMS];
                int32_t pads[2 * PRT_MAX_DIMS];
                int32_t npads = 2 * (int32_t)tu_rng_range(&r, 0, rank);
                prt_dims dims;
                tu_engine e;
                for (int i = 0; i < rank; i++)
                    d[i] = tu_rng_range(&r, 1, 5);
                dims = tu_dims(rank, d);
                /* pad in 0..size: zero pads and pad == size included */
                for (int32_t i = 0; i < npads; i++)
                    pads[i] = (int32_t)tu_rng_range(&r, 0, d[rank - 1 - i / 2]);
                CHECK_OK(cp_build(reg, pads, npads, dtype, &dims, NULL, NULL, NULL, &e));
                if (e.ctx)
                    run_and_check(&e, &r, dtype, &dims, 0, pads, npads);
                tu_engine_destroy(&e);
            }
        }
    }
    /* Fixed cases: one that pads only the last of 4 dims; all zero pads. */
    {
        int64_t d4[4] = {2, 3, 4, 5};
        prt_dims dims = tu_dims(4, d4);
        int32_t last[2] = {5, 2}, zeros[4] = {0, 0, 0, 0};
        tu_engine e;
        CHECK_OK(cp_build(reg, last, 2, PRT_FLOAT32, &dims, NULL, NULL, NULL, &e));
        if (e.ctx)
            run_and_check(&e, &r, PRT_FLOAT32, &dims, 0, last, 2);
        tu_engine_destroy(&e);
        CHECK_OK(cp_build(reg, zeros, 4, PRT_FLOAT16, &dims, NULL, NULL, NULL, &e));
        if (e.ctx)
            run_and_check(&e, &r, PRT_FLOAT16, &dims, 0, zeros, 4);
        tu_engine_destroy(&e);
    }
    /* torch's documented example: pad (1, 1) on [[0, 1, 2], [3, 4, 5]] gives
     * [[2, 0, 1, 2, 0], [5, 3, 4, 5, 3]]. */
    {
        int64_t d2[2] = {2, 3};
        prt_dims dims = tu_dims(2, d2);
        int32_t pads[2] = {1, 1};
        float x[6] = {0, 1, 2, 3, 4, 5}, y[10];
        static const float want[10] = {2, 0, 1, 2, 0, 5, 3, 4, 5, 3};
        tu_engine e;
        CHECK_OK(cp_build(reg, pads, 2, PRT_FLOAT32, &dims, NULL, NULL, NULL, &e));
        if (e.ctx) {
            CHECK_OK(prt_context_set_tensor_address(e.ctx, "x", x));
            CHECK_OK(prt_context_set_tensor_address(e.ctx, "y", y));
            CHECK_OK(prt_context_enqueue(e.ctx, NULL));
            CHECK(memcmp(y, want, sizeof want) == 0);
        }
        tu_engine_destroy(&e);
    }
}

static void test_dynamic(prt_registry *reg)
{
    int64_t dyn[3] = {-1, 3, -1}, mn[3] = {1, 3, 2}, op[3] = {2, 3, 8},
            mx[3] = {4, 3, 64};
    prt_dims d = tu_dims(3, dyn), dmin = tu_dims(3, mn), dopt = tu_dims(3, op),
             dmax = tu_dims(3, mx);
    static const int64_t shapes[][3] = {{1, 3, 2}, {4, 3, 64}, {3, 3, 5}};
    int32_t pads[4] = {2, 1, 3, 0}; /* last dim 2 / 1, middle dim 3 / 0 */
    tu_rng r;
    tu_rng_seed(&r, 12);
    for (int dt = 0; dt < 2; dt++) {
        int32_t dtype = dt ? PRT_FLOAT16 : PRT_FLOAT32;
        tu_engine e;
        CHECK_OK(cp_build(reg, pads, 4, dtype, &d, &dmin, &dopt, &dmax, &e));
        if (!e.ctx)
            continue;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            prt_dims cur = tu_dims(3, shapes[s]);
            run_and_check(&e, &r, dtype, &cur, 1, pads, 4);
        }
        tu_engine_destroy(&e);
    }
}

static void test_errors(prt_registry *reg)
{
    int64_t d2[2] = {2, 3};
    prt_dims dims = tu_dims(2, d2);
    const prt_plugin_creator *c;
    tu_engine e;
    prt_status st;

    /* pad 4 after dim 1 of size 3: wraps more than once. */
    {
        int32_t pads[2] = {1, 4};
        st = cp_build(reg, pads, 2, PRT_FLOAT32, &dims, NULL, NULL, NULL, &e);
        CHECK(st != PRT_OK);
        CHECK(strstr(prt_last_error(), "dim 1") != NULL);
        CHECK(strstr(prt_last_error(), "size 3") != NULL);
        CHECK(strstr(prt_last_error(), "padded by 4") != NULL);
        tu_engine_destroy(&e);
    }
    /* The same with a dynamic dim: the profile's minimum (2) is too small
     * for a pad of 3; a minimum of 3 builds. */
    {
        int64_t dyn[2] = {2, -1}, mn[2] = {2, 2}, op[2] = {2, 6}, mx[2] = {2, 9};
        prt_dims d = tu_dims(2, dyn), dmin = tu_dims(2, mn), dopt = tu_dims(2, op),
                 dmax = tu_dims(2, mx);
        int32_t pads[2] = {3, 0};
        st = cp_build(reg, pads, 2, PRT_FLOAT32, &d, &dmin, &dopt, &dmax, &e);
        CHECK(st != PRT_OK);
        CHECK(strstr(prt_last_error(), "dim 1") != NULL);
        CHECK(strstr(prt_last_error(), "size 2") != NULL);
        tu_engine_destroy(&e);
        dmin.d[1] = 3;
        CHECK_OK(cp_build(reg, pads, 2, PRT_FLOAT32, &d, &dmin, &dopt, &dmax, &e));
        tu_engine_destroy(&e);
    }
    /* More padded dims than the rank. */
    {
        int32_t pads[6] = {1, 1, 1, 1, 1, 1};
        st = cp_build(reg, pads, 6, PRT_FLOAT32, &dims, NULL, NULL, NULL, &e);
        CHECK(st != PRT_OK);
        CHECK(strstr(prt_last_error(), "rank 2") != NULL);
        tu_engine_destroy(&e);
    }

    c = tu_find_creator(reg, "example", "circ_pad_plugin", "1");
    if (!c)
        return;
    {
        int32_t odd[3] = {1, 1, 1}, neg[2] = {1, -1};
        float fl[2] = {1, 1};
        prt_field f = {"pads", odd, PRT_FIELD_INT32, 3};
        prt_field_collection fc = {1, &f};
        prt_plugin *p = NULL;
        CHECK_ERR(c->create(c, "cp", &fc, PRT_PHASE_BUILD, &p), PRT_ERR_INVALID_ARGUMENT,
                  "even");
        f.data = neg;
        f.length = 2;
        CHECK_ERR(c->create(c, "cp", &fc, PRT_PHASE_BUILD, &p), PRT_ERR_INVALID_ARGUMENT,
                  "negative");
        f.data = fl;
        f.type = PRT_FIELD_FLOAT32;
        CHECK_ERR(c->create(c, "cp", &fc, PRT_PHASE_BUILD, &p), PRT_ERR_INVALID_ARGUMENT,
                  "'pads'");
        CHECK(strstr(prt_last_error(), "float32") != NULL);
        CHECK(strstr(prt_last_error(), "int32") != NULL);
        CHECK(p == NULL);
    }
}

int main(void)
{
    prt_registry *reg = tu_registry_with_plugins();
    if (!reg)
        return tu_finish("test_plugin_circpad");
    test_static(reg);
    test_dynamic(reg);
    test_errors(reg);
    prt_registry_destroy(reg);
    return tu_finish("test_plugin_circpad");
}
