/*
 * The data-movement and data-dependent built-ins (ops_data.h) and the
 * attributes added to the shape ops (Slice's opset 1-9 fields, Size),
 * through the public API: one-op networks with data inputs as network
 * inputs (static, or dynamic with a profile around the run's dims) and
 * shape inputs as constants, built, run, serialized, loaded through an
 * empty registry and run again (both runs must agree byte for byte), and
 * compared with plain C references written here, over every dtype:
 *
 *  - Split (split field and input, num_outputs' ceil rule, equal parts),
 *    GatherND (batch_dims, negative indices), ScatterND and ScatterElements
 *    (every reduction, repeated indices), Tile, Pad (every mode, negative
 *    pads, axes, the constant from a field or an input), Trilu, OneHot,
 *    DepthToSpace (DCR, CRD) and SpaceToDepth, EyeLike, Hardmax (both
 *    opsets' rules, ties, NaN), Slice's fields, the values Size and Tile
 *    state (shapes made from them at build time);
 *  - the data-dependent ops (NonZero, Compress, Unique): true dims after
 *    the run, a later layer that sees them, NaN and -0 in Unique;
 *  - NonMaxSuppression against a naive greedy reference (pairwise IoU from
 *    the raw boxes): both box formats, ties, identical and empty boxes,
 *    max_output 0, thresholds as inputs and as fields, its refusals;
 *  - errors that name the field, the value or the element: bad modes and
 *    reductions, indices out of range, parts that do not add up;
 *  - allocation failures in a build and run of a multi-output op.
 */
#include <math.h>
#include <stdlib.h>

#include "base/base.h"
#include "op_testutil.h"

#define NDT PRT_DTYPE_COUNT
/* The dtypes before the 8-bit floats (the last two), which the ops that
 * make or compare values (Pad's constant, Scatter's reductions, EyeLike,
 * OneHot, NonZero, Unique) do not take (op_common.h: OP_DT_NO_FP8). */
#define NDT_VALUES PRT_FLOAT8E4M3FN

/* How an op's argument enters the network. */
enum {
    A_DATA,  /* a network input (dynamic dims when the run asks) */
    A_CONST, /* a constant data input */
    A_SHAPE, /* a constant shape input only */
    A_BOTH,  /* a constant, both a data input and a shape input */
    A_FIXED  /* a network input, static dims in every run */
};

typedef struct arg {
    const ot_tensor *t;
    int kind;
} arg;

/* Runs engine e: inputs X<i> from the A_DATA args, outputs Y0..Y(nb_out-1)
 * into out[] with their dims after the run (true dims of data-dependent
 * outputs); the caller frees them. */
static prt_status run_engine(const prt_engine *e, const arg *a, int32_t na,
                             ot_tensor *out, int32_t nb_out)
{
    prt_context *ctx = NULL;
    void *buf[8] = {0};
    prt_status st = prt_context_create(e, &ctx);
    for (int32_t i = 0; !st && i < na; i++) {
        char name[16];
        if (a[i].kind != A_DATA && a[i].kind != A_FIXED)
            continue;
        snprintf(name, sizeof name, "X%d", (int)i);
        st = prt_context_set_input_shape(ctx, name, &a[i].t->dims);
        if (!st)
            st = prt_context_set_tensor_address(ctx, name, a[i].t->data);
    }
    for (int32_t k = 0; !st && k < nb_out; k++) {
        char name[16];
        prt_dims d;
        snprintf(name, sizeof name, "Y%d", (int)k);
        st = prt_context_get_tensor_shape(ctx, name, &d); /* the upper bound */
        if (!st) {
            buf[k] = calloc((size_t)(tu_volume(&d) + 1), 8);
            st = buf[k] ? prt_context_set_tensor_address(ctx, name, buf[k])
                        : PRT_ERR_OUT_OF_MEMORY;
        }
    }
    if (!st)
        st = prt_context_enqueue(ctx, NULL);
    for (int32_t k = 0; !st && k < nb_out; k++) {
        char name[16];
        prt_io_info io = {.struct_size = sizeof io};
        int32_t idx;
        prt_dims d;
        snprintf(name, sizeof name, "Y%d", (int)k);
        st = prt_context_get_tensor_shape(ctx, name, &d);
        if (!st)
            st = prt_engine_find_io(e, name, &idx);
        if (!st)
            st = prt_engine_get_io(e, idx, &io);
        if (!st) {
            out[k] = ot_make(io.dtype, d);
            if (!out[k].data)
                st = PRT_ERR_OUT_OF_MEMORY;
            else
                memcpy(out[k].data, buf[k],
                       (size_t)tu_volume(&d) * prt_dtype_size(io.dtype));
        }
    }
    for (int32_t k = 0; k < 8; k++)
        free(buf[k]);
    prt_context_destroy(ctx);
    return st;
}

/* Builds op over args (dyn: the data inputs' dims are dynamic, with a
 * profile from their dims to 2 more), runs it, reloads the engine and runs
 * again (one check that both agree); out[0..nb_out) as run_engine. */
static prt_status run_op(const char *op, const prt_field *f, int32_t nf, const arg *a,
                         int32_t na, int dyn, ot_tensor *out, int32_t nb_out)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL, *e2 = NULL;
    prt_plugin *p = NULL;
    int32_t data[8], shape[8], nd = 0, ns = 0, layer, prof;
    ot_tensor again[8];
    prt_status st = prt_network_create(&net);
    memset(again, 0, sizeof again);
    memset(out, 0, sizeof *out * (size_t)nb_out);
    if (!st)
        st = prt_builder_config_create(&cfg);
    if (!st && dyn)
        st = prt_builder_config_add_profile(cfg, &prof);
    for (int32_t i = 0; !st && i < na; i++) {
        char name[16];
        int32_t t = -1;
        if (a[i].kind == A_DATA || a[i].kind == A_FIXED) {
            prt_dims d = a[i].t->dims, mx = d;
            int vary = dyn && a[i].kind == A_DATA;
            snprintf(name, sizeof name, "X%d", (int)i);
            for (int32_t k = 0; vary && k < d.nb_dims; k++) {
                d.d[k] = -1;
                mx.d[k] += 2;
            }
            st = prt_network_add_input(net, name, a[i].t->dtype, &d, &t);
            if (!st && vary)
                st = prt_builder_config_set_profile_dims(cfg, prof, name, &a[i].t->dims,
                                                         &a[i].t->dims, &mx);
        } else {
            snprintf(name, sizeof name, "C%d", (int)i);
            st = prt_network_add_constant(net, name, a[i].t->dtype, &a[i].t->dims,
                                          a[i].t->data, &t);
        }
        if (a[i].kind != A_SHAPE)
            data[nd++] = t;
        if (a[i].kind == A_SHAPE || a[i].kind == A_BOTH)
            shape[ns++] = t;
    }
    if (!st)
        st = ot_make_op(op, f, nf, &p);
    if (!st) {
        st = prt_network_add_plugin(net, data, nd, shape, ns, p, &layer);
        if (st)
            p->vt->runtime->destroy(p);
    }
    for (int32_t k = 0; !st && k < nb_out; k++) {
        char name[16];
        int32_t t;
        snprintf(name, sizeof name, "Y%d", (int)k);
        st = prt_network_get_layer_output(net, layer, k, &t);
        if (!st)
            st = prt_network_set_tensor_name(net, t, name);
        if (!st)
            st = prt_network_mark_output(net, t);
    }
    if (!st)
        st = prt_engine_build(net, cfg, NULL, &e);
    if (!st)
        st = run_engine(e, a, na, out, nb_out);
    if (!st)
        st = ot_reload(e, &e2);
    if (!st)
        st = run_engine(e2, a, na, again, nb_out);
    for (int32_t k = 0; !st && k < nb_out; k++) {
        tu_checks++;
        if (!ot_dims_eq(&again[k].dims, &out[k].dims) ||
            memcmp(again[k].data, out[k].data,
                   (size_t)tu_volume(&out[k].dims) * prt_dtype_size(out[k].dtype))) {
            fprintf(stderr, "%s: output %d of the loaded engine differs\n", op, (int)k);
            tu_failures++;
        }
    }
    for (int32_t k = 0; k < 8; k++)
        ot_free(&again[k]);
    if (st)
        for (int32_t k = 0; k < nb_out; k++)
            ot_free(&out[k]);
    prt_engine_destroy(e2);
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return st;
}

/* One output, checked against want (dims wd) exactly; frees it. */
static void check1(const char *what, const char *op, const prt_field *f, int32_t nf,
                   const arg *a, int32_t na, int dyn, const prt_dims *wd,
                   const double *want)
{
    ot_tensor y = {0};
    tu_checks++;
    if (run_op(op, f, nf, a, na, dyn, &y, 1) != PRT_OK) {
        fprintf(stderr, "%s: %s\n", what, prt_last_error());
        tu_failures++;
        return;
    }
    ot_check_close(what, &y, wd, want, 0);
    ot_free(&y);
}

/* A tensor from values. */
static ot_tensor tv(int32_t dtype, prt_dims d, const double *v)
{
    ot_tensor t = ot_make(dtype, d);
    for (int64_t i = 0; t.data && i < tu_volume(&d); i++)
        ot_set(&t, i, v[i]);
    return t;
}

static ot_tensor i64v(int64_t n, const int64_t *v)
{
    ot_tensor t = ot_make(PRT_INT64, D1(n));
    if (t.data)
        memcpy(t.data, v, sizeof(int64_t) * (size_t)n);
    return t;
}

static const char *dtn(int32_t dt)
{
    return prt_dtype_name(dt);
}

/* ---- Split ---------------------------------------------------------------- */

/* x split along axis into parts of len[k]: part k's elements. */
static void split_ref(const ot_tensor *x, int32_t axis, const int64_t *len, int32_t k,
                      prt_dims *wd, double *want)
{
    const prt_dims *d = &x->dims;
    int64_t outer = 1, inner = 1, off = 0, n = 0;
    for (int32_t i = 0; i < axis; i++)
        outer *= d->d[i];
    for (int32_t i = axis + 1; i < d->nb_dims; i++)
        inner *= d->d[i];
    for (int32_t j = 0; j < k; j++)
        off += len[j];
    *wd = *d;
    wd->d[axis] = len[k];
    for (int64_t b = 0; b < outer; b++)
        for (int64_t i = 0; i < len[k] * inner; i++)
            want[n++] = ot_get(x, (b * d->d[axis] + off) * inner + i);
}

static void split_case(const char *what, const ot_tensor *x, int32_t axis,
                       const prt_field *f, int32_t nf, const ot_tensor *split, int dyn,
                       const int64_t *len, int32_t n)
{
    arg a[2] = {{x, A_DATA}, {split, A_BOTH}};
    ot_tensor y[8];
    double want[256];
    prt_dims wd;
    memset(y, 0, sizeof y);
    tu_checks++;
    if (run_op("Split", f, nf, a, split ? 2 : 1, dyn, y, n) != PRT_OK) {
        fprintf(stderr, "%s: %s\n", what, prt_last_error());
        tu_failures++;
        return;
    }
    for (int32_t k = 0; k < n; k++) {
        split_ref(x, axis < 0 ? axis + x->dims.nb_dims : axis, len, k, &wd, want);
        ot_check_close(what, &y[k], &wd, want, 0);
        ot_free(&y[k]);
    }
}

static int test_split(void)
{
    tu_rng rng;
    tu_rng_seed(&rng, 11);
    for (int32_t dt = 0; dt < NDT; dt++) {
        ot_tensor x = ot_random(dt, D3(2, 7, 3), &rng, 0);
        int32_t ax1 = 1, axm = -2, three = 3, two = 2, sp[3] = {2, 0, 5};
        int64_t l_sp[3] = {2, 0, 5}, l_ceil[3] = {3, 3, 1}, l_in[2] = {4, 3};
        int64_t l_eq[2] = {1, 1}, in_v[2] = {4, 3};
        ot_tensor s = i64v(2, in_v);
        prt_field f[2];
        char what[64];
        for (int dyn = 0; dyn < 2; dyn++) {
            snprintf(what, sizeof what, "Split %s split field%s", dtn(dt),
                     dyn ? " dyn" : "");
            f[0] = ot_fld_i32("axis", &ax1, 1);
            f[1] = ot_fld_i32("split", sp, 3);
            split_case(what, &x, 1, f, 2, NULL, dyn, l_sp, 3);
            snprintf(what, sizeof what, "Split %s num_outputs%s", dtn(dt),
                     dyn ? " dyn" : "");
            f[0] = ot_fld_i32("axis", &axm, 1);
            f[1] = ot_fld_i32("num_outputs", &three, 1);
            split_case(what, &x, 1, f, 2, NULL, dyn, l_ceil, 3);
            snprintf(what, sizeof what, "Split %s input%s", dtn(dt), dyn ? " dyn" : "");
            f[0] = ot_fld_i32("axis", &ax1, 1);
            f[1] = ot_fld_i32("outputs", &two, 1);
            split_case(what, &x, 1, f, 2, &s, dyn, l_in, 2);
            snprintf(what, sizeof what, "Split %s equal%s", dtn(dt), dyn ? " dyn" : "");
            f[0] = ot_fld_i32("outputs", &two, 1);
            split_case(what, &x, 0, f, 1, NULL, dyn, l_eq, 2);
        }
        ot_free(&s);
        ot_free(&x);
    }
    {
        /* Parts that do not fit, counts that disagree. */
        ot_tensor x = ot_make(PRT_FLOAT32, D2(2, 7)), y[3];
        int32_t ax1 = 1, two = 2, three = 3, sp[2] = {3, 3}, neg[2] = {-1, 8};
        arg a[1] = {{&x, A_DATA}};
        prt_field f[2] = {ot_fld_i32("axis", &ax1, 1), ot_fld_i32("outputs", &two, 1)};
        memset(y, 0, sizeof y);
        CHECK_ERR(run_op("Split", f, 2, a, 1, 0, y, 2), PRT_ERR_SHAPE,
                  "dim 1 (7) does not split into 2 equal parts");
        f[1] = ot_fld_i32("split", sp, 2);
        CHECK_ERR(run_op("Split", f, 2, a, 1, 0, y, 2), PRT_ERR_SHAPE,
                  "sum to 6, but dim 1 is 7");
        CHECK_ERR(run_op("Split", f, 2, a, 1, 1, y, 2), PRT_ERR_SHAPE, "sum to 6");
        f[0] = ot_fld_i32("outputs", &three, 1);
        CHECK_ERR(run_op("Split", f, 2, a, 1, 0, y, 2), PRT_ERR_INVALID_ARGUMENT,
                  "disagree on the number of outputs");
        f[0] = ot_fld_i32("split", neg, 2);
        CHECK_ERR(run_op("Split", f, 1, a, 1, 0, y, 2), PRT_ERR_INVALID_ARGUMENT,
                  "field 'split' value 0 is -1");
        CHECK_ERR(run_op("Split", NULL, 0, a, 1, 0, y, 1), PRT_ERR_INVALID_ARGUMENT,
                  "needs the number of outputs");
        ot_free(&x);
    }
    return 0;
}

/* ---- GatherND, ScatterND, ScatterElements ------------------------------------ */

/* GatherND's reference: out dims indices[:-1] + data[b+m:]. */
static void gnd_ref(const ot_tensor *x, const ot_tensor *ind, int32_t b, prt_dims *wd,
                    double *want)
{
    const prt_dims *dd = &x->dims, *id = &ind->dims;
    int32_t q = id->nb_dims, r = dd->nb_dims, m = (int32_t)id->d[q - 1];
    int64_t slice = 1, tuples = tu_volume(id) / m, batch_tuples = 1, batch_size = 1;
    wd->nb_dims = 0;
    for (int32_t i = 0; i < q - 1; i++)
        wd->d[wd->nb_dims++] = id->d[i];
    for (int32_t i = b + m; i < r; i++) {
        wd->d[wd->nb_dims++] = dd->d[i];
        slice *= dd->d[i];
    }
    for (int32_t i = b; i < q - 1; i++)
        batch_tuples *= id->d[i];
    for (int32_t i = b; i < r; i++)
        batch_size *= dd->d[i];
    for (int64_t t = 0; t < tuples; t++) {
        int64_t bi = t / batch_tuples, off = bi * batch_size;
        for (int32_t j = 0; j < m; j++) {
            int64_t v = (int64_t)ot_get(ind, t * m + j), stride = 1;
            for (int32_t k = b + j + 1; k < r; k++)
                stride *= dd->d[k];
            off += (v < 0 ? v + dd->d[b + j] : v) * stride;
        }
        for (int64_t e = 0; e < slice; e++)
            want[t * slice + e] = ot_get(x, off + e);
    }
}

/* Random indices for dims d[first..first+m) into ind (its last dim m). */
static void random_indices(ot_tensor *ind, const prt_dims *d, int32_t first, tu_rng *r)
{
    int32_t m = (int32_t)ind->dims.d[ind->dims.nb_dims - 1];
    for (int64_t i = 0; i < tu_volume(&ind->dims); i++) {
        int64_t s = d->d[first + i % m];
        ot_set(ind, i, (double)tu_rng_range(r, -s, s - 1));
    }
}

static int test_gather_nd(void)
{
    tu_rng rng;
    double want[512];
    prt_dims wd;
    tu_rng_seed(&rng, 12);
    {
        /* ONNX's examples. */
        static const double x1[4] = {0, 1, 2, 3}, i1[4] = {0, 0, 1, 1}, w1[2] = {0, 3};
        static const double i2[2] = {1, 0}, w2[4] = {2, 3, 0, 1};
        static const double x3[8] = {0, 1, 2, 3, 4, 5, 6, 7}, w3[4] = {2, 3, 4, 5};
        ot_tensor x = tv(PRT_INT32, D2(2, 2), x1), a = tv(PRT_INT64, D2(2, 2), i1);
        ot_tensor b = tv(PRT_INT64, D2(2, 1), i2), x8 = tv(PRT_INT32, D3(2, 2, 2), x3);
        int32_t one = 1;
        prt_field bd = ot_fld_i32("batch_dims", &one, 1);
        arg g1[2] = {{&x, A_DATA}, {&a, A_DATA}}, g2[2] = {{&x, A_DATA}, {&b, A_FIXED}};
        arg g3[2] = {{&x8, A_DATA}, {&b, A_DATA}};
        wd = D1(2);
        check1("GatherND example 1", "GatherND", NULL, 0, g1, 2, 0, &wd, w1);
        wd = D2(2, 2);
        check1("GatherND example 2", "GatherND", NULL, 0, g2, 2, 1, &wd, w2);
        check1("GatherND batch_dims", "GatherND", &bd, 1, g3, 2, 0, &wd, w3);
        ot_free(&x), ot_free(&a), ot_free(&b), ot_free(&x8);
    }
    for (int32_t dt = 0; dt < NDT; dt++)
        for (int32_t b = 0; b < 2; b++) {
            ot_tensor x = ot_random(dt, D3(3, 4, 5), &rng, 0);
            ot_tensor ind =
                ot_make(b ? PRT_INT32 : PRT_INT64, b ? D3(3, 2, 2) : D2(6, 2));
            prt_field bd = ot_fld_i32("batch_dims", &b, 1);
            arg a[2] = {{&x, A_DATA}, {&ind, A_FIXED}};
            char what[64];
            random_indices(&ind, &x.dims, b, &rng);
            gnd_ref(&x, &ind, b, &wd, want);
            snprintf(what, sizeof what, "GatherND %s batch_dims %d", dtn(dt), (int)b);
            check1(what, "GatherND", &bd, 1, a, 2, b, &wd, want);
            ot_free(&x), ot_free(&ind);
        }
    {
        static const double bad[2] = {0, 2};
        ot_tensor x = ot_make(PRT_FLOAT32, D2(2, 2)), ind = tv(PRT_INT64, D1(2), bad), y;
        arg a[2] = {{&x, A_DATA}, {&ind, A_DATA}};
        CHECK_ERR(
            run_op("GatherND", NULL, 0, a, 2, 0, &y, 1), PRT_ERR_INVALID_ARGUMENT,
            "index 2 (element 1 of indices) is out of range for data dim 1 of size 2");
        ot_free(&ind);
        ind = ot_make(PRT_INT64, D1(3));
        CHECK_ERR(run_op("GatherND", NULL, 0, a, 2, 0, &y, 1), PRT_ERR_SHAPE,
                  "the last dim of indices is 3; it must be 1 to 2");
        ot_free(&x), ot_free(&ind);
    }
    return 0;
}

/* want = data combined with updates: ScatterND (nd) or ScatterElements. */
static double red_ref(const char *red, int32_t dt, double a, double b)
{
    double v = !red || !strcmp(red, "none") ? b
               : !strcmp(red, "add")        ? a + b
               : !strcmp(red, "mul")        ? a * b
               : !strcmp(red, "max")        ? (b > a ? b : a)
                                            : (b < a ? b : a);
    ot_tensor t = ot_make(dt, D0()); /* the dtype's wrap-around and rounding */
    if (dt == PRT_BOOL)
        v = v != 0;
    else if (dt == PRT_INT8)
        v = (double)(int8_t)(int64_t)v;
    else if (dt == PRT_UINT8)
        v = (double)(uint8_t)(int64_t)v;
    ot_set(&t, 0, v);
    v = ot_get(&t, 0);
    ot_free(&t);
    return v;
}

static void scatter_ref(int nd, int32_t axis, const char *red, const ot_tensor *x,
                        const ot_tensor *ind, const ot_tensor *u, double *want)
{
    const prt_dims *dd = &x->dims, *id = &ind->dims;
    int32_t r = dd->nb_dims;
    for (int64_t i = 0; i < tu_volume(dd); i++)
        want[i] = ot_get(x, i);
    if (nd) {
        int32_t m = (int32_t)id->d[id->nb_dims - 1];
        int64_t slice = 1;
        for (int32_t i = m; i < r; i++)
            slice *= dd->d[i];
        for (int64_t t = 0; t < tu_volume(id) / m; t++) {
            int64_t off = 0;
            for (int32_t j = 0; j < m; j++) {
                int64_t v = (int64_t)ot_get(ind, t * m + j), stride = slice;
                for (int32_t k = j + 1; k < m; k++)
                    stride *= dd->d[k];
                off += (v < 0 ? v + dd->d[j] : v) * stride;
            }
            for (int64_t e = 0; e < slice; e++)
                want[off + e] =
                    red_ref(red, x->dtype, want[off + e], ot_get(u, t * slice + e));
        }
        return;
    }
    for (int64_t e = 0; e < tu_volume(id); e++) {
        int64_t idx[PRT_MAX_DIMS], off = 0, v = (int64_t)ot_get(ind, e);
        ot_unravel(id, e, idx);
        idx[axis] = v < 0 ? v + dd->d[axis] : v;
        for (int32_t k = 0; k < r; k++)
            off = off * dd->d[k] + idx[k];
        want[off] = red_ref(red, x->dtype, want[off], ot_get(u, e));
    }
}

static int test_scatter(void)
{
    static const char *const reds[] = {"none", "add", "mul", "max", "min"};
    tu_rng rng;
    double want[512];
    tu_rng_seed(&rng, 13);
    {
        /* ONNX's examples. */
        static const double x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, i[4] = {4, 3, 1, 7};
        static const double u[4] = {9, 10, 11, 12}, w[8] = {1, 11, 3, 10, 9, 6, 7, 12};
        static const double ex[15] = {0}, ei[6] = {1, 0, 2, 0, 2, 1};
        static const double eu[6] = {1.0, 1.1, 1.2, 2.0, 2.1, 2.2};
        static const double ew[9] = {2.0, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2};
        ot_tensor tx = tv(PRT_FLOAT32, D1(8), x), ti = tv(PRT_INT64, D2(4, 1), i);
        ot_tensor tu = tv(PRT_FLOAT32, D1(4), u), sx = tv(PRT_FLOAT32, D2(3, 3), ex);
        ot_tensor si = tv(PRT_INT64, D2(2, 3), ei), su = tv(PRT_FLOAT32, D2(2, 3), eu);
        arg a[3] = {{&tx, A_DATA}, {&ti, A_DATA}, {&tu, A_DATA}};
        arg b[3] = {{&sx, A_DATA}, {&si, A_DATA}, {&su, A_DATA}};
        prt_dims wd = D1(8);
        double ewf[9];
        for (int k = 0; k < 9; k++)
            ewf[k] = (float)ew[k];
        check1("ScatterND example", "ScatterND", NULL, 0, a, 3, 0, &wd, w);
        wd = D2(3, 3);
        check1("ScatterElements example", "ScatterElements", NULL, 0, b, 3, 1, &wd, ewf);
        ot_free(&tx), ot_free(&ti), ot_free(&tu), ot_free(&sx), ot_free(&si),
            ot_free(&su);
    }
    for (int32_t dt = 0; dt < NDT_VALUES; dt++)
        for (int r = 0; r < 5; r++)
            for (int nd = 0; nd < 2; nd++) {
                /* Repeated indices on purpose: few distinct places. */
                ot_tensor x = ot_random(dt, D3(3, 2, 4), &rng, 0);
                ot_tensor ind = ot_make(PRT_INT64, nd ? D2(5, 2) : D3(3, 2, 3));
                ot_tensor u = ot_random(dt, nd ? D2(5, 4) : D3(3, 2, 3), &rng, 0);
                int32_t axis = nd ? 0 : 2 - 3 * (r % 2); /* 2 or -1 */
                prt_field f[2] = {ot_fld_str("reduction", reds[r]),
                                  ot_fld_i32("axis", &axis, 1)};
                arg a[3] = {{&x, A_DATA}, {&ind, A_FIXED}, {&u, A_DATA}};
                char what[64];
                if (nd)
                    random_indices(&ind, &x.dims, 0, &rng);
                else
                    for (int64_t i = 0; i < tu_volume(&ind.dims); i++)
                        ot_set(&ind, i, (double)tu_rng_range(&rng, -4, 3));
                /* "none" with repeated places is up to the op: keep them
                 * distinct there. */
                if (r == 0 && nd)
                    for (int64_t t = 0; t < 5; t++)
                        ot_set(&ind, 2 * t, (double)(t % 3)),
                            ot_set(&ind, 2 * t + 1, (double)(t / 3));
                if (r == 0 && !nd)
                    for (int64_t i = 0; i < tu_volume(&ind.dims); i++)
                        ot_set(&ind, i, (double)(i % 3 - (i / 3) % 2 * 4));
                scatter_ref(nd, nd ? 0 : 2, reds[r], &x, &ind, &u, want);
                snprintf(what, sizeof what, "%s %s %s",
                         nd ? "ScatterND" : "ScatterElements", dtn(dt), reds[r]);
                check1(what, nd ? "ScatterND" : "ScatterElements", f, nd ? 1 : 2, a, 3,
                       r % 2, &x.dims, want);
                ot_free(&x), ot_free(&ind), ot_free(&u);
            }
    {
        ot_tensor x = ot_make(PRT_FLOAT32, D2(2, 2)), i = ot_make(PRT_INT64, D2(1, 1)), y;
        ot_tensor u = ot_make(PRT_FLOAT32, D2(1, 1));
        arg a[3] = {{&x, A_DATA}, {&i, A_DATA}, {&u, A_DATA}};
        prt_field f = ot_fld_str("reduction", "xor");
        ot_set(&i, 0, -3);
        CHECK_ERR(
            run_op("ScatterElements", NULL, 0, a, 3, 0, &y, 1), PRT_ERR_INVALID_ARGUMENT,
            "index -3 (element 0 of indices) is out of range for data dim 0 of size 2");
        CHECK_ERR(run_op("ScatterND", &f, 1, a, 3, 0, &y, 1), PRT_ERR_UNSUPPORTED,
                  "reduction 'xor' is not supported");
        ot_free(&x), ot_free(&i), ot_free(&u);
    }
    return 0;
}

/* ---- Tile, Pad -------------------------------------------------------------- */

static int test_tile(void)
{
    /* Input dims and repeats: two dims repeated; one element splat 20 times
     * (detect_post's index); trailing dims repeated once, merged into one
     * run; odd repeats doubling at two levels; nothing repeated. */
    static const int64_t cases[][6] = {
        {2, 3, 2, 2, 1, 3}, {3, 1, 1, 1, 1, 20}, {2, 3, 5, 3, 1, 1},
        {1, 2, 3, 1, 5, 7}, {2, 2, 1, 1, 1, 1},
    };
    tu_rng rng;
    double want[1024];
    tu_rng_seed(&rng, 14);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int32_t dt = 0; dt < NDT; dt++)
            for (int dyn = 0; dyn < 2; dyn++) {
                const int64_t *cs = cases[c];
                int64_t zero[3] = {1, 0, 2};
                ot_tensor x = ot_random(dt, D3(cs[0], cs[1], cs[2]), &rng, 0);
                ot_tensor r = i64v(3, cs + 3), z = i64v(3, zero);
                arg a[2] = {{&x, A_DATA}, {&r, A_SHAPE}};
                prt_dims wd = D3(cs[0] * cs[3], cs[1] * cs[4], cs[2] * cs[5]);
                char what[96], xs[48];
                for (int64_t i = 0; i < tu_volume(&wd); i++) {
                    int64_t idx[3], src[3];
                    ot_unravel(&wd, i, idx);
                    for (int k = 0; k < 3; k++)
                        src[k] = idx[k] % x.dims.d[k];
                    want[i] = ot_get(&x, (src[0] * cs[1] + src[1]) * cs[2] + src[2]);
                }
                snprintf(what, sizeof what, "Tile %s %s%s",
                         base_dims_format(&x.dims, BASE_DIMS_LIST, xs, sizeof xs),
                         dtn(dt), dyn ? " dyn" : "");
                check1(what, "Tile", NULL, 0, a, 2, dyn, &wd, want);
                a[1].t = &z;
                wd = D3(cs[0], 0, cs[2] * 2);
                check1("Tile by 0", "Tile", NULL, 0, a, 2, dyn, &wd, want);
                ot_free(&x), ot_free(&r), ot_free(&z);
            }
    {
        int64_t neg[1] = {-1}, two[2] = {1, 2};
        ot_tensor x = ot_make(PRT_FLOAT32, D1(3)), r = i64v(1, neg), r2 = i64v(2, two), y;
        arg a[2] = {{&x, A_DATA}, {&r, A_SHAPE}};
        CHECK_ERR(run_op("Tile", NULL, 0, a, 2, 0, &y, 1), PRT_ERR_SHAPE,
                  "repeats value 0 is -1");
        a[1].t = &r2;
        CHECK_ERR(run_op("Tile", NULL, 0, a, 2, 0, &y, 1), PRT_ERR_SHAPE,
                  "repeats has 2 values for an input of rank 1");
        ot_free(&x), ot_free(&r), ot_free(&r2);
    }
    return 0;
}

/* numpy's pad, one coordinate: the source along a dim of length d, or -1
 * for the constant. Reflection and wrapping step by step, unlike the op. */
static int64_t pad_ref_src(const char *mode, int64_t c, int64_t d)
{
    if (c >= 0 && c < d)
        return c;
    if (!strcmp(mode, "constant"))
        return -1;
    if (!strcmp(mode, "edge"))
        return c < 0 ? 0 : d - 1;
    if (d == 1)
        return 0;
    while (c < 0 || c >= d) {
        if (!strcmp(mode, "wrap"))
            c += c < 0 ? d : -d;
        else
            c = c < 0 ? -c : 2 * (d - 1) - c;
    }
    return c;
}

/* want for x padded by begin/end per dim, fill `value`. */
static void pad_ref(const char *mode, const ot_tensor *x, const int64_t *begin,
                    const int64_t *end, double value, prt_dims *wd, double *want)
{
    const prt_dims *d = &x->dims;
    *wd = *d;
    for (int32_t k = 0; k < d->nb_dims; k++)
        wd->d[k] += begin[k] + end[k];
    for (int64_t i = 0; i < tu_volume(wd); i++) {
        int64_t idx[PRT_MAX_DIMS], off = 0;
        int pad = 0;
        ot_unravel(wd, i, idx);
        for (int32_t k = 0; k < d->nb_dims; k++) {
            int64_t c = pad_ref_src(mode, idx[k] - begin[k], d->d[k]);
            pad |= c < 0;
            off = off * d->d[k] + c;
        }
        want[i] = pad ? value : ot_get(x, off);
    }
}

static int test_pad(void)
{
    static const char *const modes[] = {"constant", "reflect", "edge", "wrap"};
    tu_rng rng;
    double want[1024];
    prt_dims wd;
    tu_rng_seed(&rng, 15);
    {
        /* 1-D by hand: [1, 2, 3] with 2 before and 2 after; then cropped. */
        static const double x3[3] = {1, 2, 3};
        static const double w[4][7] = {{0, 0, 1, 2, 3, 0, 0},
                                       {3, 2, 1, 2, 3, 2, 1},
                                       {1, 1, 1, 2, 3, 3, 3},
                                       {2, 3, 1, 2, 3, 1, 2}};
        static const double crop[4] = {2, 3, 9, 9};
        ot_tensor x = tv(PRT_FLOAT32, D1(3), x3);
        int64_t p22[2] = {2, 2}, pcrop[2] = {-1, 2};
        float nine = 9;
        arg a[1] = {{&x, A_DATA}};
        prt_field f[3];
        for (int m = 0; m < 4; m++) {
            f[0] = ot_fld_str("mode", modes[m]);
            f[1] = (prt_field){"pads", p22, PRT_FIELD_INT64, 2};
            wd = D1(7);
            check1(modes[m], "Pad", f, 2, a, 1, m % 2, &wd, w[m]);
        }
        f[0] = (prt_field){"pads", pcrop, PRT_FIELD_INT64, 2};
        f[1] = ot_fld_f32("value", &nine);
        wd = D1(4);
        check1("Pad crop", "Pad", f, 2, a, 1, 0, &wd, crop);
        ot_free(&x);
    }
    for (int32_t dt = 0; dt < NDT_VALUES; dt++)
        for (int m = 0; m < 4; m++) {
            /* pads longer than the dim reflect and wrap more than once */
            int64_t pads[6] = {1, 0, 5, 2, 3, -1}, begin[3] = {1, 0, 5},
                    end[3] = {2, 3, -1};
            int64_t pads2[4] = {2, 1, 0, 3}, b2[3] = {0, 2, 1}, e2[3] = {0, 0, 3};
            int32_t axes[2] = {-2, 2};
            double cv = dt == PRT_BOOL ? 1 : 7;
            ot_tensor x = ot_random(dt, D3(2, 3, 4), &rng, 0), p = i64v(6, pads);
            ot_tensor c = ot_make(dt, D0());
            arg a[3] = {{&x, A_DATA}, {&p, A_BOTH}, {&c, A_CONST}};
            prt_field f[3] = {ot_fld_str("mode", modes[m])};
            char what[64];
            ot_set(&c, 0, cv);
            pad_ref(modes[m], &x, begin, end, m ? 0 : cv, &wd, want);
            snprintf(what, sizeof what, "Pad %s %s input", dtn(dt), modes[m]);
            check1(what, "Pad", f, 1, a, 3, m % 2, &wd, want);
            /* the pads as a field, on two axes, no constant */
            f[1] = (prt_field){"pads", pads2, PRT_FIELD_INT64, 4};
            f[2] = ot_fld_i32("axes", axes, 2);
            pad_ref(modes[m], &x, b2, e2, 0, &wd, want);
            snprintf(what, sizeof what, "Pad %s %s axes", dtn(dt), modes[m]);
            check1(what, "Pad", f, 3, a, 1, 0, &wd, want);
            ot_free(&x), ot_free(&p), ot_free(&c);
        }
    {
        ot_tensor x = ot_make(PRT_INT32, D2(0, 2)), y;
        int64_t p[4] = {1, 0, 0, 0}, p3[3] = {1, 0, 0};
        arg a[1] = {{&x, A_DATA}};
        prt_field f[2] = {ot_fld_str("mode", "edge"), {"pads", p, PRT_FIELD_INT64, 4}};
        CHECK_ERR(run_op("Pad", f, 2, a, 1, 0, &y, 1), PRT_ERR_SHAPE,
                  "mode edge cannot pad dim 0, which is empty");
        f[0] = ot_fld_str("mode", "symmetric");
        CHECK_ERR(run_op("Pad", f, 2, a, 1, 0, &y, 1), PRT_ERR_UNSUPPORTED,
                  "mode 'symmetric' is not supported");
        f[0] = (prt_field){"pads", p3, PRT_FIELD_INT64, 3};
        CHECK_ERR(run_op("Pad", f, 1, a, 1, 0, &y, 1), PRT_ERR_INVALID_ARGUMENT,
                  "field 'pads' has 3 values");
        p[0] = -1;
        f[0] = (prt_field){"pads", p, PRT_FIELD_INT64, 4};
        CHECK_ERR(run_op("Pad", f, 1, a, 1, 0, &y, 1), PRT_ERR_SHAPE,
                  "the pads make dim 0 -1 long");
        ot_free(&x);
    }
    return 0;
}

/* ---- Trilu, EyeLike, OneHot, Hardmax ------------------------------------------ */

static int test_trilu_eye(void)
{
    tu_rng rng;
    double want[512];
    tu_rng_seed(&rng, 16);
    for (int32_t dt = 0; dt < NDT; dt++)
        for (int upper = 0; upper < 2; upper++)
            for (int kk = 0; kk < 4; kk++) {
                static const int64_t ks[4] = {0, -1, 2, -100};
                ot_tensor x = ot_random(dt, D3(2, 3, 5), &rng, 0),
                          k = ot_make(PRT_INT64, D0());
                int32_t up = upper;
                prt_field f = ot_fld_i32("upper", &up, 1);
                arg a[2] = {{&x, A_DATA}, {&k, A_DATA}};
                char what[64];
                ot_set(&k, 0, (double)ks[kk]);
                for (int64_t i = 0; i < 30; i++) {
                    int64_t r = i / 5 % 3, c = i % 5;
                    int keep = upper ? c - r >= ks[kk] : c - r <= ks[kk];
                    want[i] = keep ? ot_get(&x, i) : 0;
                }
                snprintf(what, sizeof what, "Trilu %s upper %d k %lld", dtn(dt), upper,
                         (long long)ks[kk]);
                check1(what, "Trilu", &f, 1, a, kk ? 2 : 1, kk % 2, &x.dims, want);
                ot_free(&x), ot_free(&k);
            }
    for (int32_t dt = 0; dt < NDT_VALUES; dt++)
        for (int kk = 0; kk < 4; kk++) {
            static const int32_t ks[4] = {0, -1, 2, 9};
            ot_tensor x = ot_random(PRT_INT32, D2(3, 4), &rng, 0);
            prt_field f[2] = {ot_fld_i32("k", &ks[kk], 1), ot_fld_i32("dtype", &dt, 1)};
            arg a[1] = {{&x, A_DATA}};
            char what[64];
            for (int64_t i = 0; i < 12; i++)
                want[i] = i % 4 - i / 4 == ks[kk];
            snprintf(what, sizeof what, "EyeLike %s k %d", dtn(dt), (int)ks[kk]);
            check1(what, "EyeLike", f, 2, a, 1, kk % 2, &x.dims, want);
            ot_free(&x);
        }
    {
        ot_tensor x = ot_make(PRT_FLOAT32, D1(3)), y;
        arg a[1] = {{&x, A_DATA}};
        CHECK_ERR(run_op("Trilu", NULL, 0, a, 1, 0, &y, 1), PRT_ERR_SHAPE,
                  "the input has rank 1; it must be 2 or more");
        CHECK_ERR(run_op("EyeLike", NULL, 0, a, 1, 0, &y, 1), PRT_ERR_SHAPE,
                  "the input has rank 1; it must be 2");
        ot_free(&x);
    }
    return 0;
}

static int test_one_hot(void)
{
    double want[512];
    for (int32_t dt = 0; dt < NDT_VALUES; dt++)
        for (int32_t axis = -3; axis <= 2; axis++) {
            /* indices [2, 3]: in range, negative, out of range both ways */
            static const double iv[6] = {0, 4, -1, -5, 5, -6};
            ot_tensor ind =
                tv(dt == PRT_BOOL || dt == PRT_UINT8 ? PRT_FLOAT32 : dt, D2(2, 3), iv);
            ot_tensor v = ot_make(dt, D1(2)), depth = ot_make(PRT_INT64, D1(1));
            int64_t d5 = 5;
            prt_field f[2] = {ot_fld_i32("axis", &axis, 1),
                              {"depth", &d5, PRT_FIELD_INT64, 1}};
            arg a[3] = {{&ind, A_DATA}, {&depth, A_SHAPE}, {&v, A_DATA}};
            arg b[2] = {{&ind, A_DATA}, {&v, A_DATA}};
            int32_t ax = axis < 0 ? axis + 3 : axis; /* of the output's rank 3 */
            prt_dims wd;
            char what[64];
            ot_set(&v, 0, dt == PRT_BOOL ? 0 : 3);
            ot_set(&v, 1, dt == PRT_BOOL ? 1 : -2 + 4 * (dt == PRT_UINT8));
            ot_set(&depth, 0, 5);
            wd.nb_dims = 3;
            for (int32_t k = 0, j = 0; k < 3; k++)
                wd.d[k] = k == ax ? 5 : ind.dims.d[j++];
            for (int64_t i = 0; i < tu_volume(&wd); i++) {
                int64_t idx[3], src[2], n = 0, iv2;
                ot_unravel(&wd, i, idx);
                for (int32_t k = 0; k < 3; k++)
                    if (k != ax)
                        src[n++] = idx[k];
                iv2 = (int64_t)iv[src[0] * 3 + src[1]];
                iv2 = iv2 < 0 ? iv2 + 5 : iv2;
                want[i] = ot_get(&v, iv2 == idx[ax]);
            }
            snprintf(what, sizeof what, "OneHot %s axis %d", dtn(dt), (int)axis);
            check1(what, "OneHot", f, 1, a, 3, axis % 2, &wd, want);
            snprintf(what, sizeof what, "OneHot %s axis %d depth field", dtn(dt),
                     (int)axis);
            check1(what, "OneHot", f, 2, b, 2, 0, &wd, want);
            ot_free(&ind), ot_free(&v), ot_free(&depth);
        }
    {
        ot_tensor ind = ot_make(PRT_INT64, D1(2)), v = ot_make(PRT_FLOAT32, D1(3)), y;
        int64_t d5 = 5;
        int32_t axis = 2;
        prt_field f[2] = {{"depth", &d5, PRT_FIELD_INT64, 1},
                          ot_fld_i32("axis", &axis, 1)};
        arg a[2] = {{&ind, A_DATA}, {&v, A_DATA}};
        CHECK_ERR(run_op("OneHot", f, 1, a, 2, 0, &y, 1), PRT_ERR_SHAPE,
                  "values must hold two elements");
        CHECK_ERR(run_op("OneHot", f, 2, a, 2, 0, &y, 1), PRT_ERR_SHAPE,
                  "axis 2 is out of range for the output of rank 2 (-2 to 1)");
        d5 = 0;
        CHECK_ERR(run_op("OneHot", f, 1, a, 2, 0, &y, 1), PRT_ERR_INVALID_ARGUMENT,
                  "field 'depth' is 0");
        ot_free(&ind), ot_free(&v);
    }
    return 0;
}

static int test_hardmax(void)
{
    tu_rng rng;
    double want[512];
    tu_rng_seed(&rng, 17);
    for (int32_t dt = 0; dt < 3; dt++) /* the float dtypes */
        for (int coerce = 0; coerce < 2; coerce++)
            for (int32_t axis = -3; axis < 3; axis++) {
                ot_tensor x = ot_random(dt, D3(2, 3, 4), &rng, 0);
                int32_t ax = axis < 0 ? axis + 3 : axis, co = coerce;
                int64_t outer = 1, n = 1, inner = 1;
                prt_field f[2] = {ot_fld_i32("axis", &axis, 1),
                                  ot_fld_i32("coerce_2d", &co, 1)};
                arg a[1] = {{&x, A_DATA}};
                char what[64];
                /* a tie (the first wins) and a NaN (it wins) */
                ot_set(&x, 5, 2.0), ot_set(&x, 9, 2.0), ot_set(&x, 1, 2.0);
                ot_set(&x, 16, NAN), ot_set(&x, 20, NAN);
                for (int32_t k = 0; k < 3; k++)
                    if (k < ax)
                        outer *= x.dims.d[k];
                    else if (k == ax || coerce)
                        n *= x.dims.d[k];
                    else
                        inner *= x.dims.d[k];
                for (int64_t p = 0; p < outer; p++)
                    for (int64_t q = 0; q < inner; q++) {
                        int64_t best = 0;
                        for (int64_t j = 0; j < n; j++) {
                            double v = ot_get(&x, (p * n + j) * inner + q);
                            double b = ot_get(&x, (p * n + best) * inner + q);
                            if (b == b && (v > b || v != v))
                                best = j;
                            want[(p * n + j) * inner + q] = 0;
                        }
                        want[(p * n + best) * inner + q] = 1;
                    }
                snprintf(what, sizeof what, "Hardmax %s axis %d coerce %d", dtn(dt),
                         (int)axis, coerce);
                check1(what, "Hardmax", f, 2, a, 1, coerce, &x.dims, want);
                ot_free(&x);
            }
    {
        ot_tensor x = ot_make(PRT_INT32, D1(3)), y;
        arg a[1] = {{&x, A_DATA}};
        CHECK_ERR(run_op("Hardmax", NULL, 0, a, 1, 0, &y, 1), PRT_ERR_UNSUPPORTED,
                  "dtype int32 is not supported");
        ot_free(&x);
    }
    return 0;
}

/* ---- DepthToSpace, SpaceToDepth ----------------------------------------------- */

static int test_depth_space(void)
{
    tu_rng rng;
    double want[1024];
    tu_rng_seed(&rng, 18);
    for (int32_t dt = 0; dt < NDT; dt++)
        for (int crd = 0; crd < 3; crd++) { /* DCR, CRD, SpaceToDepth */
            int32_t b = 2;
            int64_t n = 2, c = crd == 2 ? 3 : 12, h = crd == 2 ? 4 : 2,
                    w = crd == 2 ? 6 : 3;
            ot_tensor x = ot_random(dt, D4(n, c, h, w), &rng, 0);
            prt_field f[2] = {ot_fld_i32("blocksize", &b, 1),
                              ot_fld_str("mode", crd ? "CRD" : "DCR")};
            arg a[1] = {{&x, A_DATA}};
            prt_dims wd =
                crd == 2 ? D4(n, c * 4, h / 2, w / 2) : D4(n, c / 4, h * 2, w * 2);
            char what[64];
            for (int64_t e = 0; e < tu_volume(&wd); e++) {
                int64_t o[4], src;
                ot_unravel(&wd, e, o);
                if (crd ==
                    2) { /* out[n, (i*b + j)*C + c, h, w] = in[n, c, h*b + i, w*b + j] */
                    int64_t blk = o[1] / c, ch = o[1] % c, i = blk / 2, j = blk % 2;
                    src = ((o[0] * c + ch) * h + o[2] * 2 + i) * w + o[3] * 2 + j;
                } else {
                    int64_t cc = wd.d[1], i = o[2] % 2, j = o[3] % 2;
                    int64_t ch = crd ? o[1] * 4 + i * 2 + j : (i * 2 + j) * cc + o[1];
                    src = ((o[0] * c + ch) * h + o[2] / 2) * w + o[3] / 2;
                }
                want[e] = ot_get(&x, src);
            }
            snprintf(what, sizeof what, "%s %s",
                     crd == 2 ? "SpaceToDepth"
                     : crd    ? "CRD"
                              : "DCR",
                     dtn(dt));
            check1(what, crd == 2 ? "SpaceToDepth" : "DepthToSpace", f, crd == 2 ? 1 : 2,
                   a, 1, dt % 2, &wd, want);
            ot_free(&x);
        }
    {
        ot_tensor x = ot_make(PRT_FLOAT32, D4(1, 6, 2, 3)), y;
        int32_t b = 2, zero = 0;
        prt_field f[2] = {ot_fld_i32("blocksize", &b, 1), ot_fld_str("mode", "RDC")};
        arg a[1] = {{&x, A_DATA}};
        CHECK_ERR(run_op("DepthToSpace", f, 1, a, 1, 0, &y, 1), PRT_ERR_SHAPE,
                  "the channels (6) does not divide by 4");
        CHECK_ERR(run_op("SpaceToDepth", f, 1, a, 1, 0, &y, 1), PRT_ERR_SHAPE,
                  "the width (3) does not divide by 2");
        CHECK_ERR(run_op("DepthToSpace", f, 2, a, 1, 0, &y, 1), PRT_ERR_UNSUPPORTED,
                  "mode 'RDC' is not supported");
        f[0] = ot_fld_i32("blocksize", &zero, 1);
        CHECK_ERR(run_op("SpaceToDepth", f, 1, a, 1, 0, &y, 1), PRT_ERR_INVALID_ARGUMENT,
                  "field 'blocksize' is 0");
        ot_free(&x);
    }
    return 0;
}

/* ---- NonZero, Compress, Unique ---------------------------------------------------- */

static int test_nonzero(void)
{
    tu_rng rng;
    double want[512];
    tu_rng_seed(&rng, 19);
    for (int32_t dt = 0; dt < NDT_VALUES; dt++)
        for (int32_t rank = 0; rank < 4; rank++) {
            prt_dims d = ot_dims5(rank, 3, 4, 2, 0, 0);
            ot_tensor x = ot_random(dt, d, &rng, 0);
            arg a[1] = {{&x, A_DATA}};
            int64_t k = 0, n = tu_volume(&d);
            prt_dims wd;
            char what[64];
            /* zeros, and the float corner cases */
            for (int64_t i = rank == 0; i < n; i += 3)
                ot_set(&x, i, 0);
            if (ot_is_float(dt) && n > 4)
                ot_set(&x, 1, -0.0), ot_set(&x, 4, NAN);
            for (int64_t i = 0; i < n; i++)
                k += ot_get(&x, i) != 0;
            wd = D2(rank ? rank : 1, k); /* a scalar as [1] */
            for (int64_t i = 0, j = 0; i < n; i++)
                if (ot_get(&x, i) != 0) {
                    int64_t idx[PRT_MAX_DIMS] = {0};
                    ot_unravel(&d, i, idx);
                    for (int32_t q = 0; q < wd.d[0]; q++)
                        want[q * k + j] = (double)idx[q];
                    j++;
                }
            snprintf(what, sizeof what, "NonZero %s rank %d", dtn(dt), (int)rank);
            check1(what, "NonZero", NULL, 0, a, 1, rank % 2, &wd, want);
            ot_free(&x);
        }
    return 0;
}

static int test_compress(void)
{
    tu_rng rng;
    double want[512];
    tu_rng_seed(&rng, 20);
    for (int32_t dt = 0; dt < NDT; dt++)
        for (int32_t axis = -2; axis < 3; axis++) { /* 2: no axis */
            ot_tensor x = ot_random(dt, D2(3, 4), &rng, 0);
            int32_t ax = axis < 0 ? axis + 2 : axis;
            int64_t len = axis == 2 ? 12 : x.dims.d[ax], nc = len - 1, k = 0, e = 0;
            ot_tensor c = ot_make(PRT_BOOL, D1(nc)); /* shorter than the axis */
            prt_field f = ot_fld_i32("axis", &axis, 1);
            arg a[2] = {{&x, A_DATA}, {&c, A_DATA}};
            prt_dims wd;
            char what[64];
            for (int64_t i = 0; i < nc; i++) {
                ot_set(&c, i, i % 3 != 1);
                k += i % 3 != 1;
            }
            if (axis == 2) {
                wd = D1(k);
                for (int64_t i = 0; i < nc; i++)
                    if (i % 3 != 1)
                        want[e++] = ot_get(&x, i);
            } else {
                wd = x.dims;
                wd.d[ax] = k;
                for (int64_t i = 0; i < tu_volume(&x.dims); i++) {
                    int64_t idx[2];
                    ot_unravel(&x.dims, i, idx);
                    if (idx[ax] < nc && idx[ax] % 3 != 1)
                        want[e++] = ot_get(&x, i);
                }
            }
            snprintf(what, sizeof what, "Compress %s axis %d", dtn(dt), (int)axis);
            check1(what, "Compress", &f, axis == 2 ? 0 : 1, a, 2, axis % 2, &wd, want);
            ot_free(&x), ot_free(&c);
        }
    {
        ot_tensor x = ot_make(PRT_FLOAT32, D1(2)), c = ot_make(PRT_BOOL, D1(3)), y[2];
        arg a[2] = {{&x, A_DATA}, {&c, A_DATA}};
        ot_set(&c, 2, 1);
        CHECK_ERR(run_op("Compress", NULL, 0, a, 2, 0, y, 1), PRT_ERR_INVALID_ARGUMENT,
                  "condition entry 2 is true, past the 2 elements");
        ot_free(&x), ot_free(&c);
    }
    return 0;
}

/* Unique's reference, O(m^2): items compared through their elements. */
static int uq_eq(const ot_tensor *x, int64_t outer, int64_t m, int64_t inner, int64_t a,
                 int64_t b)
{
    for (int64_t p = 0; p < outer; p++)
        for (int64_t q = 0; q < inner; q++) {
            double u = ot_get(x, (p * m + a) * inner + q),
                   v = ot_get(x, (p * m + b) * inner + q);
            if (!(u == v || (u != u && v != v)))
                return 0;
        }
    return 1;
}

static int uq_less(const ot_tensor *x, int64_t outer, int64_t m, int64_t inner, int64_t a,
                   int64_t b)
{
    for (int64_t p = 0; p < outer; p++)
        for (int64_t q = 0; q < inner; q++) {
            double u = ot_get(x, (p * m + a) * inner + q),
                   v = ot_get(x, (p * m + b) * inner + q);
            if (u == v || (u != u && v != v))
                continue;
            return v != v || u < v;
        }
    return 0;
}

static void unique_case(const char *what, const ot_tensor *x, int sorted, int32_t axis,
                        int dyn)
{
    const prt_dims *d = &x->dims;
    int32_t ax = axis < 0 ? axis + d->nb_dims : axis, so = sorted;
    int64_t outer = 1, m = tu_volume(d), inner = 1, k = 0;
    int64_t first[256], order[256], pos[256];
    double wy[512], wi[256], winv[256], wc[256];
    prt_field f[2] = {ot_fld_i32("sorted", &so, 1), ot_fld_i32("axis", &axis, 1)};
    arg a[1] = {{x, A_DATA}};
    ot_tensor y[4];
    prt_dims wd;
    if (axis < 8) {
        m = d->d[ax];
        for (int32_t i = 0; i < ax; i++)
            outer *= d->d[i];
        for (int32_t i = ax + 1; i < d->nb_dims; i++)
            inner *= d->d[i];
    }
    for (int64_t i = 0; i < m; i++) {
        int64_t g = 0;
        while (g < k && !uq_eq(x, outer, m, inner, first[g], i))
            g++;
        if (g == k)
            first[k++] = i;
    }
    for (int64_t g = 0; g < k; g++)
        order[g] = g;
    for (int64_t g = 0; sorted && g < k; g++) /* insertion sort by value */
        for (int64_t h = g;
             h > 0 && uq_less(x, outer, m, inner, first[order[h]], first[order[h - 1]]);
             h--) {
            int64_t t = order[h];
            order[h] = order[h - 1];
            order[h - 1] = t;
        }
    for (int64_t p = 0; p < k; p++) {
        pos[order[p]] = p;
        wi[p] = (double)first[order[p]];
        wc[p] = 0;
    }
    for (int64_t i = 0; i < m; i++)
        for (int64_t g = 0; g < k; g++)
            if (uq_eq(x, outer, m, inner, first[g], i)) {
                winv[i] = (double)pos[g];
                wc[pos[g]]++;
                break;
            }
    for (int64_t p0 = 0; p0 < outer; p0++)
        for (int64_t p = 0; p < k; p++)
            for (int64_t q = 0; q < inner; q++)
                wy[(p0 * k + p) * inner + q] =
                    ot_get(x, (p0 * m + first[order[p]]) * inner + q);
    memset(y, 0, sizeof y);
    tu_checks++;
    if (run_op("Unique", f, axis < 8 ? 2 : 1, a, 1, dyn, y, 4) != PRT_OK) {
        fprintf(stderr, "%s: %s\n", what, prt_last_error());
        tu_failures++;
        return;
    }
    if (axis < 8) {
        wd = *d;
        wd.d[ax] = k;
    } else {
        wd = D1(k);
    }
    ot_check_close(what, &y[0], &wd, wy, 0);
    wd = D1(k);
    ot_check_close(what, &y[1], &wd, wi, 0);
    ot_check_close(what, &y[3], &wd, wc, 0);
    wd = D1(m);
    ot_check_close(what, &y[2], &wd, winv, 0);
    for (int i = 0; i < 4; i++)
        ot_free(&y[i]);
}

static int test_unique(void)
{
    tu_rng rng;
    tu_rng_seed(&rng, 21);
    {
        /* ONNX's examples, then NaN and -0 */
        static const double x1[6] = {2, 1, 1, 3, 4, 3};
        static const double x2[9] = {1, 0, 0, 1, 0, 0, 2, 3, 4};
        static const double x3[7] = {NAN, 0, -0.0, 1, NAN, -1, 0};
        ot_tensor a = tv(PRT_FLOAT32, D1(6), x1), b = tv(PRT_FLOAT32, D2(3, 3), x2);
        ot_tensor c = tv(PRT_FLOAT32, D1(7), x3);
        unique_case("Unique unsorted", &a, 0, 99, 0);
        unique_case("Unique sorted", &a, 1, 99, 1);
        unique_case("Unique axis 0", &b, 1, 0, 0);
        unique_case("Unique axis -1", &b, 1, -1, 1);
        unique_case("Unique NaN", &c, 1, 99, 0);
        unique_case("Unique NaN unsorted", &c, 0, 99, 1);
        ot_free(&a), ot_free(&b), ot_free(&c);
    }
    for (int32_t dt = 0; dt < NDT_VALUES; dt++)
        for (int32_t axis = -1; axis < 3; axis++) { /* 2: flattened */
            ot_tensor x = ot_make(dt, D2(6, 4));
            char what[64];
            /* few distinct values, so that rows and columns repeat */
            for (int64_t i = 0; i < 24; i++)
                ot_set(&x, i, (double)tu_rng_range(&rng, 0, dt == PRT_BOOL ? 1 : 2));
            for (int64_t j = 0; j < 4; j++) /* row 4 repeats row 1 */
                ot_set(&x, 16 + j, ot_get(&x, 4 + j));
            for (int sorted = 0; sorted < 2; sorted++) {
                snprintf(what, sizeof what, "Unique %s axis %d sorted %d", dtn(dt),
                         (int)axis, sorted);
                unique_case(what, &x, sorted, axis == 2 ? 99 : axis, sorted);
            }
            ot_free(&x);
        }
    return 0;
}

/* ---- Slice's fields, Size, chains ------------------------------------------------ */

static int test_slice_fields(void)
{
    tu_rng rng;
    double want[256];
    tu_rng_seed(&rng, 22);
    for (int32_t dt = 0; dt < NDT; dt++) {
        /* x[:, 1:INT64_MAX][-3:-1 along axis 0] */
        ot_tensor x = ot_random(dt, D2(5, 4), &rng, 0);
        int64_t starts[2] = {1, -3}, ends[2] = {INT64_MAX, -1}, axes[2] = {1, 0};
        prt_field f[3] = {{"starts", starts, PRT_FIELD_INT64, 2},
                          {"ends", ends, PRT_FIELD_INT64, 2},
                          {"axes", axes, PRT_FIELD_INT64, 2}};
        arg a[1] = {{&x, A_DATA}};
        prt_dims wd = D2(2, 3);
        char what[64];
        for (int64_t i = 0; i < 6; i++)
            want[i] = ot_get(&x, (2 + i / 3) * 4 + 1 + i % 3);
        snprintf(what, sizeof what, "Slice fields %s", dtn(dt));
        check1(what, "Slice", f, 3, a, 1, dt % 2, &wd, want);
        /* without axes: 0..n-1 */
        starts[0] = 3, ends[0] = 5, starts[1] = 0, ends[1] = 2;
        wd = D2(2, 2);
        for (int64_t i = 0; i < 4; i++)
            want[i] = ot_get(&x, (3 + i / 2) * 4 + i % 2);
        check1(what, "Slice", f, 2, a, 1, 0, &wd, want);
        ot_free(&x);
    }
    {
        ot_tensor x = ot_make(PRT_FLOAT32, D1(4)), s = ot_make(PRT_INT64, D1(1)), y;
        int64_t one[1] = {1};
        prt_field f[2] = {{"starts", one, PRT_FIELD_INT64, 1},
                          {"ends", one, PRT_FIELD_INT64, 1}};
        arg a[3] = {{&x, A_DATA}, {&s, A_BOTH}, {&s, A_BOTH}};
        CHECK_ERR(run_op("Slice", f, 1, a, 1, 0, &y, 1), PRT_ERR_INVALID_ARGUMENT,
                  "fields starts, ends (and axes) go together");
        CHECK_ERR(run_op("Slice", f, 2, a, 3, 0, &y, 1), PRT_ERR_INVALID_ARGUMENT,
                  "not both or neither");
        ot_free(&x), ot_free(&s);
    }
    return 0;
}

/* A layer of op over inputs in[] (shape inputs sin[]); its output `k`. */
static int32_t add_layer(prt_network *n, prt_status *st, const char *op,
                         const prt_field *f, int32_t nf, const int32_t *in, int32_t nin,
                         const int32_t *sin, int32_t nsin, int32_t k)
{
    prt_plugin *p = NULL;
    int32_t l = -1, t = -1;
    if (*st)
        return -1;
    *st = ot_make_op(op, f, nf, &p);
    if (!*st) {
        *st = prt_network_add_plugin(n, in, nin, sin, nsin, p, &l);
        if (*st)
            p->vt->runtime->destroy(p);
    }
    if (!*st)
        *st = prt_network_get_layer_output(n, l, k, &t);
    return t;
}

/* X (dynamic 2-D float32) -> NonZero -> Transpose: the later layer sees the
 * true K; Size(X) -> Unsqueeze -> Reshape(X) and Shape(X) -> Tile ->
 * ConstantOfShape: Size's and Tile's values make shapes at build time. */
static int test_chains(void)
{
    prt_network *n = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    prt_status st;
    prt_dims dyn = D2(-1, -1), mn = D2(1, 1), mx = D2(4, 4), d;
    int64_t zero = 0, ybuf[64], rbuf[64];
    int32_t x, nz, t, sz, u, r, c = -1, prof, ax0;
    static float cbuf[256];
    prt_io_info io = {.struct_size = sizeof io};
    REQUIRE_OK(prt_network_create(&n));
    st = prt_network_add_input(n, "X", PRT_FLOAT32, &dyn, &x);
    nz = add_layer(n, &st, "NonZero", NULL, 0, &x, 1, NULL, 0, 0);
    t = add_layer(n, &st, "Transpose", NULL, 0, &nz, 1, NULL, 0, 0);
    sz = add_layer(n, &st, "Size", NULL, 0, &x, 1, NULL, 0, 0);
    if (!st) {
        prt_dims one = D1(1);
        st = prt_network_add_constant(n, "zero", PRT_INT64, &one, &zero, &ax0);
    }
    u = add_layer(n, &st, "Unsqueeze", NULL, 0, &sz, 1, &ax0, 1, 0);
    r = add_layer(n, &st, "Reshape", NULL, 0, &x, 1, &u, 1, 0);
    if (!st) { /* C = ConstantOfShape(Tile(Shape(X), [2])): dims d0, d1, d0, d1 */
        int32_t shp = add_layer(n, &st, "Shape", NULL, 0, &x, 1, NULL, 0, 0), rep, tl;
        int64_t two = 2;
        prt_dims one = D1(1);
        if (!st)
            st = prt_network_add_constant(n, "two", PRT_INT64, &one, &two, &rep);
        tl = add_layer(n, &st, "Tile", NULL, 0, &shp, 1, &rep, 1, 0);
        c = add_layer(n, &st, "ConstantOfShape", NULL, 0, NULL, 0, &tl, 1, 0);
        if (!st)
            st = prt_network_set_tensor_name(n, c, "C");
        if (!st)
            st = prt_network_mark_output(n, c);
    }
    if (!st)
        st = prt_network_set_tensor_name(n, t, "T");
    if (!st)
        st = prt_network_set_tensor_name(n, r, "R");
    if (!st)
        st = prt_network_mark_output(n, t);
    if (!st)
        st = prt_network_mark_output(n, r);
    if (!st)
        st = prt_builder_config_create(&cfg);
    if (!st)
        st = prt_builder_config_add_profile(cfg, &prof);
    if (!st)
        st = prt_builder_config_set_profile_dims(cfg, prof, "X", &mn, &mx, &mx);
    if (!st)
        st = prt_engine_build(n, cfg, NULL, &e);
    CHECK_OK(st);
    if (!st) {
        int32_t idx;
        CHECK_OK(prt_engine_find_io(e, "T", &idx));
        CHECK_OK(prt_engine_get_io(e, idx, &io));
        CHECK(io.data_dependent_mask == 1u && io.dims.d[1] == 2);
        CHECK_OK(prt_engine_find_io(e, "R", &idx));
        CHECK_OK(prt_engine_get_io(e, idx, &io));
        CHECK(io.data_dependent_mask == 0);
    }
    for (int run = 0; !st && run < 2; run++) {
        float xv[12] = {0, 1, 0, 0, 2, 3, 0, 0, 0, 0, 0, 4};
        prt_dims xd = run ? D2(3, 4) : D2(2, 3);
        st = prt_context_create(e, &ctx);
        if (!st)
            st = prt_context_set_input_shape(ctx, "X", &xd);
        if (!st)
            st = prt_context_set_tensor_address(ctx, "X", xv);
        if (!st)
            st = prt_context_set_tensor_address(ctx, "T", ybuf);
        if (!st)
            st = prt_context_set_tensor_address(ctx, "R", rbuf);
        if (!st)
            st = prt_context_set_tensor_address(ctx, "C", cbuf);
        if (!st)
            st = prt_context_enqueue(ctx, NULL);
        CHECK_OK(st);
        if (!st && !run) { /* [[0,1],[1,1],[1,2]] */
            static const int64_t w[6] = {0, 1, 1, 1, 1, 2};
            CHECK_OK(prt_context_get_tensor_shape(ctx, "T", &d));
            CHECK(d.nb_dims == 2 && d.d[0] == 3 && d.d[1] == 2);
            CHECK(memcmp(ybuf, w, sizeof w) == 0);
        } else if (!st) { /* [0,1], [1,0], [1,1], [2,3] */
            static const int64_t w[8] = {0, 1, 1, 0, 1, 1, 2, 3};
            CHECK_OK(prt_context_get_tensor_shape(ctx, "T", &d));
            CHECK(d.nb_dims == 2 && d.d[0] == 4 && d.d[1] == 2);
            CHECK(memcmp(ybuf, w, sizeof w) == 0);
        }
        if (!st) {
            CHECK_OK(prt_context_get_tensor_shape(ctx, "C", &d));
            CHECK(d.nb_dims == 4 && d.d[0] == xd.d[0] && d.d[1] == xd.d[1] &&
                  d.d[2] == xd.d[0] && d.d[3] == xd.d[1]);
            CHECK_OK(prt_context_get_tensor_shape(ctx, "R", &d));
            CHECK(d.nb_dims == 1 && d.d[0] == xd.d[0] * xd.d[1]);
            CHECK(memcmp(rbuf, xv, sizeof(float) * (size_t)d.d[0]) == 0);
        }
        prt_context_destroy(ctx);
        ctx = NULL;
    }
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(n);
    return 0;
}

/* Every allocation of a build and run of Unique failing in turn ends in a
 * status and a message, then one succeeds. */
static int test_alloc_failures(void)
{
    static const double xv[6] = {3, 1, 3, 2, 1, 0};
    ot_tensor x = tv(PRT_INT32, D2(2, 3), xv);
    int32_t axis = 1;
    prt_field f = ot_fld_i32("axis", &axis, 1);
    arg a[1] = {{&x, A_DATA}};
    int64_t n;
    for (n = 0; n < OT_MAX_ALLOCS; n++) {
        ot_tensor y[4];
        prt_status st;
        memset(y, 0, sizeof y);
        base_fail_alloc_after(n);
        st = run_op("Unique", &f, 1, a, 1, 1, y, 4);
        base_fail_alloc_after(-1);
        for (int k = 0; k < 4; k++)
            ot_free(&y[k]);
        if (st == PRT_OK)
            break;
        if (!prt_last_error()[0]) {
            fprintf(stderr, "Unique, allocation %lld failing: no message\n",
                    (long long)n);
            tu_failures++;
            break;
        }
    }
    CHECK(n > 10 && n < OT_MAX_ALLOCS);
    CHECK(ot_alloc_failures("Trilu", NULL, 0, &x, 1) > 10);
    ot_free(&x);
    return 0;
}

/* ---- NonMaxSuppression ---------------------------------------------------- */

/* A box's corners (x0, y0, x1, y1) as ONNX Runtime computes them. */
static void nms_ref_corners(const float *b, int center, float *c)
{
    if (center) {
        float hw = b[2] / 2, hh = b[3] / 2;
        c[0] = b[0] - hw, c[2] = b[0] + hw, c[1] = b[1] - hh, c[3] = b[1] + hh;
    } else {
        c[0] = fminf(b[1], b[3]), c[2] = fmaxf(b[1], b[3]);
        c[1] = fminf(b[0], b[2]), c[3] = fmaxf(b[0], b[2]);
    }
}

/* Whether boxes a and b overlap by more than iou, from their raw
 * coordinates (no precomputed areas). */
static int nms_ref_overlap(const float *a, const float *b, int center, float iou)
{
    float ca[4], cb[4], ix0, ix1, iy0, iy1, inter, aa, ab;
    nms_ref_corners(a, center, ca);
    nms_ref_corners(b, center, cb);
    ix0 = fmaxf(ca[0], cb[0]), ix1 = fminf(ca[2], cb[2]);
    iy0 = fmaxf(ca[1], cb[1]), iy1 = fminf(ca[3], cb[3]);
    if (ix1 <= ix0 || iy1 <= iy0)
        return 0;
    inter = (ix1 - ix0) * (iy1 - iy0);
    aa = (ca[2] - ca[0]) * (ca[3] - ca[1]);
    ab = (cb[2] - cb[0]) * (cb[3] - cb[1]);
    if (inter <= 0 || aa <= 0 || ab <= 0 || aa + ab - inter <= 0)
        return 0;
    return inter / (aa + ab - inter) > iou;
}

/* The naive greedy NMS: per batch and class, repeatedly the best live
 * candidate (highest score, then lowest index) is kept and every live box
 * it overlaps too much is dropped. Rows (b, c, box) into want; their
 * count. */
static int64_t nms_ref(const float *boxes, const float *scores, int64_t nb, int64_t nc,
                       int64_t n, int center, int64_t max_out, float iou, int has_th,
                       float th, double *want)
{
    int64_t k = 0;
    char live[64];
    for (int64_t b = 0; b < nb; b++)
        for (int64_t c = 0; c < nc; c++) {
            const float *sc = scores + (b * nc + c) * n;
            int64_t kept = 0;
            for (int64_t i = 0; i < n; i++)
                live[i] = !has_th || sc[i] > th;
            while (kept < max_out) {
                int64_t best = -1;
                for (int64_t i = 0; i < n; i++) /* a NaN after every number */
                    if (live[i] && (best < 0 || (!isnan(sc[i]) &&
                                                 (isnan(sc[best]) || sc[i] > sc[best]))))
                        best = i;
                if (best < 0)
                    break;
                live[best] = 0;
                want[3 * k] = (double)b, want[3 * k + 1] = (double)c;
                want[3 * k + 2] = (double)best;
                k++, kept++;
                for (int64_t i = 0; i < n; i++)
                    if (live[i] && nms_ref_overlap(boxes + 4 * (b * n + best),
                                                   boxes + 4 * (b * n + i), center, iou))
                        live[i] = 0;
            }
        }
    return k;
}

static int test_nms(void)
{
    enum { NB = 2, NC = 3, N = 40 };
    static const int64_t max_outs[] = {0, 1, 4, 100};
    static const float ious[] = {0.0f, 0.3f, 0.7f, 1.0f};
    double want[3 * NB * NC * N];
    tu_rng rng;
    tu_rng_seed(&rng, 23);
    for (int32_t round = 0; round < 16; round++) {
        int center = round & 1, th_in = (round >> 1) & 1, as_fields = (round >> 2) & 1;
        int64_t max_out = max_outs[round & 3];
        float iou = ious[(round >> 2) & 3], th = 0.4f;
        int has_th = round % 3 != 0;
        ot_tensor bx = ot_make(PRT_FLOAT32, D3(NB, N, 4)),
                  sc = ot_make(PRT_FLOAT32, D3(NB, NC, N));
        ot_tensor mo = i64v(1, &max_out), io = ot_make(PRT_FLOAT32, D1(1)),
                  st = ot_make(PRT_FLOAT32, D1(1));
        float *b = bx.data, *s = sc.data;
        int32_t cpb = center, mo32 = (int32_t)max_out;
        prt_field f[4];
        int32_t nf = 1;
        arg a[5] = {
            {&bx, A_DATA}, {&sc, A_DATA}, {&mo, A_DATA}, {&io, A_DATA}, {&st, A_DATA}};
        int32_t na = 2;
        prt_dims wd;
        char what[96];
        ((float *)io.data)[0] = iou;
        ((float *)st.data)[0] = th;
        for (int64_t i = 0; i < NB * N; i++) {
            float *q = b + 4 * i;
            /* Small boxes on a 4x4 field so that many overlap; corners in
             * either order for the corner format. */
            q[0] = (float)(4 * tu_rng_uniform(&rng)),
            q[1] = (float)(4 * tu_rng_uniform(&rng));
            q[2] = center ? (float)(0.2 + 1.5 * tu_rng_uniform(&rng))
                          : q[0] + (float)(3 * tu_rng_uniform(&rng) - 1);
            q[3] = center ? (float)(0.2 + 1.5 * tu_rng_uniform(&rng))
                          : q[1] + (float)(3 * tu_rng_uniform(&rng) - 1);
            if (i % 7 == 3) /* identical boxes */
                memcpy(q, q - 4, 4 * sizeof *q);
            if (i % 11 == 5) /* no area */
                q[2] = center ? 0.0f : q[0];
        }
        for (int64_t i = 0; i < NB * NC * N; i++) { /* few values: ties */
            s[i] = (float)tu_rng_range(&rng, 0, 8) / 8.0f;
            if (round >= 8) /* negative scores, 0 and -0 tied, NaNs last */
                s[i] = i % 13 == 4 ? NAN : i % 5 == 2 ? -0.0f : s[i] - 0.5f;
        }
        f[0] = ot_fld_i32("center_point_box", &cpb, 1);
        if (as_fields) {
            f[nf++] = ot_fld_i32("max_output_boxes_per_class", &mo32, 1);
            f[nf++] = ot_fld_f32("iou_threshold", &iou);
            if (has_th) /* all as fields: max bounds the output's rows */
                f[nf++] = ot_fld_f32("score_threshold", &th);
        } else {
            na = has_th ? 5 : 4;
            if (has_th && th_in) { /* the threshold as a field, the rest as inputs */
                f[nf++] = ot_fld_f32("score_threshold", &th);
                na = 4;
            }
        }
        wd = D2(nms_ref(b, s, NB, NC, N, center, max_out, iou, has_th, th, want), 3);
        snprintf(what, sizeof what,
                 "NonMaxSuppression center %d max %lld iou %g th %s (%s)", center,
                 (long long)max_out, (double)iou, has_th ? "0.4" : "none",
                 as_fields ? "fields" : "inputs");
        check1(what, "NonMaxSuppression", f, nf, a, na, round & 1, &wd, want);
        ot_free(&bx), ot_free(&sc), ot_free(&mo), ot_free(&io), ot_free(&st);
    }
    {
        /* Thresholds and shapes it refuses, by name. */
        ot_tensor bx = ot_make(PRT_FLOAT32, D3(1, 2, 4)),
                  sc = ot_make(PRT_FLOAT32, D3(1, 1, 2));
        ot_tensor b5 = ot_make(PRT_FLOAT32, D3(1, 2, 5)),
                  s3 = ot_make(PRT_FLOAT32, D3(1, 1, 3));
        ot_tensor mo = ot_make(PRT_INT64, D1(1)), io = ot_make(PRT_FLOAT32, D1(1)), y[2];
        float bad = 1.5f;
        int32_t two = 2;
        prt_field f = ot_fld_f32("iou_threshold", &bad);
        arg a[4] = {{&bx, A_DATA}, {&sc, A_DATA}, {&mo, A_DATA}, {&io, A_DATA}};
        memset(y, 0, sizeof y);
        ((int64_t *)mo.data)[0] = 3;
        ((float *)io.data)[0] = -0.5f;
        CHECK_ERR(run_op("NonMaxSuppression", &f, 1, a, 2, 0, y, 2),
                  PRT_ERR_INVALID_ARGUMENT,
                  "iou_threshold is 1.5; it must lie in [0, 1]");
        CHECK_ERR(run_op("NonMaxSuppression", NULL, 0, a, 4, 0, y, 2),
                  PRT_ERR_INVALID_ARGUMENT, "iou_threshold is -0.5");
        f = ot_fld_i32("center_point_box", &two, 1);
        CHECK_ERR(run_op("NonMaxSuppression", &f, 1, a, 2, 0, y, 2),
                  PRT_ERR_INVALID_ARGUMENT, "center_point_box is 2");
        a[0].t = &b5;
        CHECK_ERR(run_op("NonMaxSuppression", NULL, 0, a, 2, 0, y, 2), PRT_ERR_SHAPE,
                  "boxes' last dim is 5; it must be 4");
        a[0].t = &bx, a[1].t = &s3;
        CHECK_ERR(run_op("NonMaxSuppression", NULL, 0, a, 2, 0, y, 2), PRT_ERR_SHAPE,
                  "the box count: boxes have 2, scores 3");
        ot_free(&bx), ot_free(&sc), ot_free(&b5), ot_free(&s3), ot_free(&mo),
            ot_free(&io);
    }
    return 0;
}

int main(void)
{
    test_split();
    test_gather_nd();
    test_scatter();
    test_tile();
    test_pad();
    test_trilu_eye();
    test_one_hot();
    test_hardmax();
    test_depth_space();
    test_nonzero();
    test_compress();
    test_unique();
    test_nms();
    test_slice_fields();
    test_chains();
    test_alloc_failures();
    return tu_finish("test_ops_data");
}
