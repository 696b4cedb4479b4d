/*
 * The reductions and the ops with shape inputs or several outputs of issue
 * 8 (namespace "plugrt"), each in a one-layer network that is built, run,
 * serialized, loaded through an empty registry and run again (both runs
 * must give the same bytes), and compared with a plain C reference:
 *
 *  - ReduceSum .. ReduceLogSumExp on random shapes (ranks 0 to 4, dims of 0
 *    and 1), random axes (negative, none, empty) given as the field or as a
 *    constant shape input, keepdims, noop_with_empty_axes, every dtype each
 *    takes; large inputs for LogSumExp, NaN for Max/Min; shape tensors
 *    (ReduceProd/ReduceSum of shape values feeding ConstantOfShape);
 *  - ArgMax, ArgMin: every axis, keepdims, select_last_index, ties and NaN;
 *  - CumSum: axis as a shape input and as the field, exclusive, reverse;
 *  - TopK: K as a shape input and as field k, largest, ties (the smaller
 *    index first), NaN, K = 0, 1, 17 (float32's first radix selection)
 *    and n, lines of 300 and 400 along the last axis and not, both outputs;
 *  - Dropout: no mask, a bool mask, a mask of the data's dtype, the ratio
 *    input, training_mode false (and true: an error);
 *  - shape tensors of Max, Min, Sum, Mod, Less, Not through ConstantOfShape;
 *  - the errors: axes that are not constants at build time (naming the
 *    layer), out of range or repeated, both a field and an input, K past
 *    the axis, an empty ArgMax axis;
 *  - allocation failure at every point of a ReduceLogSumExp and an ArgMin
 *    build, load and run.
 * One-op networks with constant shape inputs and several outputs are made
 * here (rd_run); tensors are op_testutil.h's.
 */
#include <math.h>
#include <stdlib.h>

#include "base/base.h"
#include "op_testutil.h"

static double tol_for(int32_t dt, double f32_tol)
{
    return dt == PRT_FLOAT16 ? 2e-3 : dt == PRT_BFLOAT16 ? 1.6e-2 : f32_tol;
}

/* ---- one-op networks with constant shape inputs and several outputs ------------ */

#define RD_MAX_OUT 2

/* The layer: data inputs X0.. (in[i]), int64 constants S0.. as shape inputs
 * (sv[k], sv_n[k] values; sv_n[k] -1 for a 0-D one), outputs Y0..Y{nb_out-1}. */
typedef struct rd_net {
    const char *op;
    const prt_field *fields;
    int32_t nb_fields;
    const ot_tensor *in;
    int32_t nb_in;
    const int64_t *const *sv;
    const int32_t *sv_n;
    int32_t nb_sv;
    int32_t nb_out;
} rd_net;

static rd_net rd_net_make(const char *op, const prt_field *fields, int32_t nb_fields,
                          const ot_tensor *in, int32_t nb_in, const int64_t *const *sv,
                          const int32_t *sv_n, int32_t nb_sv, int32_t nb_out)
{
    rd_net n = {op, fields, nb_fields, in, nb_in, sv, sv_n, nb_sv, nb_out};
    return n;
}

static prt_status rd_build(const rd_net *n, prt_engine **out)
{
    prt_plugin *p = NULL;
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    int32_t ids[OT_MAXIN], sids[4], l, y;
    prt_status st = ot_make_op(n->op, n->fields, n->nb_fields, &p);
    if (!st)
        st = prt_network_create(&net);
    if (!st)
        st = prt_builder_config_create(&cfg);
    for (int32_t i = 0; !st && i < n->nb_in; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "X%d", (int)i);
        st = prt_network_add_input(net, nm, n->in[i].dtype, &n->in[i].dims, &ids[i]);
    }
    for (int32_t k = 0; !st && k < n->nb_sv; k++) {
        char nm[16];
        prt_dims d = n->sv_n[k] < 0 ? D0() : D1(n->sv_n[k]);
        snprintf(nm, sizeof nm, "S%d", (int)k);
        st = prt_network_add_constant(net, nm, PRT_INT64, &d, n->sv[k], &sids[k]);
    }
    if (!st)
        st = prt_network_add_plugin(net, ids, n->nb_in, sids, n->nb_sv, p, &l);
    if (!st)
        p = NULL;
    for (int32_t k = 0; !st && k < n->nb_out; k++) {
        char nm[16];
        snprintf(nm, sizeof nm, "Y%d", (int)k);
        st = prt_network_get_layer_output(net, l, k, &y);
        if (!st)
            st = prt_network_set_tensor_name(net, y, nm);
        if (!st)
            st = prt_network_mark_output(net, y);
    }
    if (!st)
        st = prt_engine_build(net, cfg, NULL, out);
    if (p)
        p->vt->runtime->destroy(p);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return st;
}

static prt_status rd_exec(const prt_engine *e, const rd_net *n, ot_tensor *outs)
{
    prt_context *ctx = NULL;
    prt_status st = prt_context_create(e, &ctx);
    for (int32_t k = 0; k < n->nb_out; k++)
        outs[k].data = NULL;
    for (int32_t i = 0; !st && i < n->nb_in; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "X%d", (int)i);
        st = prt_context_set_tensor_address(ctx, nm, n->in[i].data);
    }
    for (int32_t k = 0; !st && k < n->nb_out; k++) {
        prt_io_info io = {.struct_size = sizeof(prt_io_info)};
        char nm[16];
        int32_t idx;
        prt_dims d;
        snprintf(nm, sizeof nm, "Y%d", (int)k);
        st = prt_engine_find_io(e, nm, &idx);
        if (!st)
            st = prt_engine_get_io(e, idx, &io);
        if (!st)
            st = prt_context_get_tensor_shape(ctx, nm, &d);
        if (!st) {
            outs[k] = ot_make(io.dtype, d);
            st = outs[k].data ? prt_context_set_tensor_address(ctx, nm, outs[k].data)
                              : PRT_ERR_OUT_OF_MEMORY;
        }
    }
    if (!st)
        st = prt_context_enqueue(ctx, NULL);
    if (st)
        for (int32_t k = 0; k < n->nb_out; k++)
            ot_free(&outs[k]);
    prt_context_destroy(ctx);
    return st;
}

/* Build, run, reload, run again: both runs give the same bytes. */
static prt_status rd_run(const rd_net *n, ot_tensor *outs)
{
    prt_engine *e = NULL, *e2 = NULL;
    ot_tensor again[RD_MAX_OUT];
    prt_status st = rd_build(n, &e);
    for (int32_t k = 0; k < n->nb_out; k++)
        outs[k].data = again[k].data = NULL;
    if (!st)
        st = rd_exec(e, n, outs);
    if (!st)
        st = ot_reload(e, &e2);
    if (!st)
        st = rd_exec(e2, n, again);
    for (int32_t k = 0; !st && k < n->nb_out; k++) {
        tu_checks++;
        if (!ot_dims_eq(&again[k].dims, &outs[k].dims) ||
            memcmp(again[k].data, outs[k].data,
                   (size_t)tu_volume(&outs[k].dims) * prt_dtype_size(outs[k].dtype))) {
            fprintf(stderr, "%s: the loaded engine gives other results\n", n->op);
            tu_failures++;
        }
    }
    for (int32_t k = 0; k < n->nb_out; k++) {
        if (st)
            ot_free(&outs[k]);
        ot_free(&again[k]);
    }
    prt_engine_destroy(e2);
    prt_engine_destroy(e);
    return st;
}

/* The elements of d before dim axis (outer) and after it (inner). */
static void split_axis(const prt_dims *d, int32_t axis, int64_t *outer, int64_t *inner)
{
    *outer = *inner = 1;
    for (int32_t i = 0; i < axis; i++)
        *outer *= d->d[i];
    for (int32_t i = axis + 1; i < d->nb_dims; i++)
        *inner *= d->d[i];
}

/* ---- reductions ----------------------------------------------------------------- */

enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_SSQ, R_LOG_SUM, R_LSE };

static const char *const rd_names[] = {
    "ReduceSum", "ReduceMean", "ReduceMax",       "ReduceMin",    "ReduceProd",
    "ReduceL1",  "ReduceL2",   "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"};

/* The reference: every input element added into its output element in
 * double (floats, and integers for L2, LogSum, LogSumExp) or int64 (the
 * other integer reductions, wrapping). mark[i]: dim i is reduced. */
static void ref_reduce(int32_t kind, const ot_tensor *x, const int32_t *mark, int keep,
                       prt_dims *yd, double *want)
{
    const prt_dims *d = &x->dims;
    int fl = ot_is_float(x->dtype) || kind == R_L2 || kind == R_LOG_SUM || kind == R_LSE;
    int64_t nout, count = 1, idx[PRT_MAX_DIMS];
    double *acc, *mx;
    int64_t *iacc;
    yd->nb_dims = 0;
    for (int32_t i = 0; i < d->nb_dims; i++) {
        if (mark[i])
            count *= d->d[i];
        if (!mark[i] || keep)
            yd->d[yd->nb_dims++] = mark[i] ? 1 : d->d[i];
    }
    nout = tu_volume(yd);
    acc = calloc((size_t)nout + 1, sizeof *acc);
    mx = calloc((size_t)nout + 1, sizeof *mx);
    iacc = calloc((size_t)nout + 1, sizeof *iacc);
    for (int64_t o = 0; o < nout; o++) {
        int64_t lo = x->dtype == PRT_INT8    ? INT8_MIN
                     : x->dtype == PRT_UINT8 ? 0
                     : x->dtype == PRT_INT32 ? INT32_MIN
                                             : INT64_MIN;
        int64_t hi = x->dtype == PRT_INT8    ? INT8_MAX
                     : x->dtype == PRT_UINT8 ? UINT8_MAX
                     : x->dtype == PRT_INT32 ? INT32_MAX
                                             : INT64_MAX;
        acc[o] = kind == R_PROD  ? 1
                 : kind == R_MAX ? -INFINITY
                 : kind == R_MIN ? INFINITY
                                 : 0;
        iacc[o] = kind == R_PROD ? 1 : kind == R_MAX ? lo : kind == R_MIN ? hi : 0;
        mx[o] = -INFINITY;
    }
    for (int pass = 0; pass < (kind == R_LSE ? 2 : 1); pass++)
        for (int64_t i = 0; i < tu_volume(d); i++) {
            int64_t o = 0;
            double v = ot_get(x, i);
            int64_t iv =
                x->dtype == PRT_INT64 ? ((const int64_t *)x->data)[i] : (int64_t)v;
            ot_unravel(d, i, idx);
            for (int32_t k = 0; k < d->nb_dims; k++)
                if (!mark[k])
                    o = o * d->d[k] + idx[k];
            if (kind == R_LSE && pass == 0) {
                mx[o] = v > mx[o] ? v : mx[o];
                continue;
            }
            if (fl) {
                switch (kind) {
                case R_MAX:
                    acc[o] = v != v || v > acc[o] ? v : acc[o];
                    break;
                case R_MIN:
                    acc[o] = v != v || v < acc[o] ? v : acc[o];
                    break;
                case R_PROD:
                    acc[o] *= v;
                    break;
                case R_L1:
                    acc[o] += fabs(v);
                    break;
                case R_L2:
                case R_SSQ:
                    acc[o] += v * v;
                    break;
                case R_LSE:
                    acc[o] += exp(v - (isinf(mx[o]) ? 0 : mx[o]));
                    break;
                default:
                    acc[o] += v;
                    break;
                }
                if (acc[o] != acc[o] && (kind == R_MAX || kind == R_MIN))
                    acc[o] = NAN; /* stays */
            } else {
                uint64_t a = (uint64_t)iacc[o], b = (uint64_t)iv;
                switch (kind) {
                case R_MAX:
                    iacc[o] = iv > iacc[o] ? iv : iacc[o];
                    break;
                case R_MIN:
                    iacc[o] = iv < iacc[o] ? iv : iacc[o];
                    break;
                case R_PROD:
                    iacc[o] = (int64_t)(a * b);
                    break;
                case R_L1:
                    iacc[o] = (int64_t)(a + (iv < 0 ? 0 - b : b));
                    break;
                case R_SSQ:
                    iacc[o] = (int64_t)(a + b * b);
                    break;
                default:
                    iacc[o] = (int64_t)(a + b);
                    break;
                }
            }
        }
    for (int64_t o = 0; o < nout; o++) {
        ot_tensor t = ot_make(x->dtype, D0());
        if (fl) {
            double v = acc[o];
            if (kind == R_MEAN)
                v /= (double)count;
            else if (kind == R_L2)
                v = sqrt(v);
            else if (kind == R_LOG_SUM)
                v = log(v);
            else if (kind == R_LSE)
                v = (isinf(mx[o]) ? 0 : mx[o]) + log(v);
            if (!ot_is_float(x->dtype)) {
                /* Truncated and saturated back. */
                double lo = x->dtype == PRT_INT32 ? INT32_MIN : (double)INT64_MIN;
                double hi = x->dtype == PRT_INT32 ? INT32_MAX : (double)INT64_MAX;
                v = v != v ? 0 : v <= lo ? lo : v >= hi ? hi : trunc(v);
                want[o] = v;
            } else {
                ot_set(&t, 0, v);
                want[o] = ot_get(&t, 0);
            }
        } else {
            int64_t v = iacc[o];
            if (kind == R_MEAN)
                v = count ? v / count : 0;
            switch (x->dtype) {
            case PRT_INT8:
                want[o] = (int8_t)(uint8_t)(uint64_t)v;
                break;
            case PRT_UINT8:
                want[o] = (uint8_t)(uint64_t)v;
                break;
            case PRT_INT32:
                want[o] = (int32_t)(uint32_t)(uint64_t)v;
                break;
            default:
                want[o] = (double)v;
                break;
            }
        }
        ot_free(&t);
    }
    free(acc);
    free(mx);
    free(iacc);
}

static int test_reduce(void)
{
    static const int32_t types[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16, PRT_INT32,
                                    PRT_INT64,   PRT_INT8,    PRT_UINT8};
    tu_rng rng;
    tu_rng_seed(&rng, 99);
    for (int kind = 0; kind < 10; kind++)
        for (int t = 0; t < 7; t++)
            for (int c = 0; c < 14; c++) {
                int32_t dt = types[t], keep = (int32_t)tu_rng_range(&rng, 0, 1);
                int32_t noop = (int32_t)tu_rng_range(&rng, 0, 1), nb_axes,
                        axes[PRT_MAX_DIMS];
                int32_t mark[PRT_MAX_DIMS] = {0},
                        as_input = (int32_t)tu_rng_range(&rng, 0, 1);
                int64_t sv_axes[PRT_MAX_DIMS];
                const int64_t *svp[1] = {sv_axes};
                int32_t sv_n[1];
                prt_field f[3];
                int32_t nf = 0;
                prt_dims xd, yd;
                ot_tensor x, y[1];
                double *want;
                char what[160];
                rd_net n;
                if ((dt == PRT_INT8 || dt == PRT_UINT8) && kind != R_MAX && kind != R_MIN)
                    continue;
                xd.nb_dims = (int32_t)tu_rng_range(&rng, 0, 4);
                for (int32_t i = 0; i < xd.nb_dims; i++)
                    xd.d[i] =
                        tu_rng_range(&rng, 0, 25) == 0 ? 0 : tu_rng_range(&rng, 1, 5);
                if (c == 0) /* a long row, past a chunk */
                    xd = D2(3, 600);
                /* Axes: -1 none, else a random subset, some negative. */
                nb_axes = tu_rng_range(&rng, 0, 4) == 0 ? -1 : 0;
                for (int32_t i = 0; nb_axes >= 0 && i < xd.nb_dims; i++)
                    if (tu_rng_range(&rng, 0, 1)) {
                        axes[nb_axes++] = tu_rng_range(&rng, 0, 1) ? i - xd.nb_dims : i;
                        mark[i] = 1;
                    }
                if (nb_axes <= 0 && !noop)
                    for (int32_t i = 0; i < xd.nb_dims; i++)
                        mark[i] = 1;
                if (c == 3 && (kind == R_MAX || kind == R_MIN)) {
                    /* Many short rows over the last axis (a detector's best
                     * class): float32's threaded row kernel, 8 rows at a
                     * time and a tail. */
                    xd = D2(1003, 20);
                    nb_axes = 1, axes[0] = -1, mark[0] = 0, mark[1] = 1;
                }
                x = ot_random(dt, xd, &rng, 0);
                if (c == 3 && (kind == R_MAX || kind == R_MIN) && ot_is_float(dt)) {
                    ot_set(&x, 7 * 20 + 5, NAN);     /* a NaN in an 8-row block */
                    ot_set(&x, 1001 * 20 + 19, NAN); /* and in the tail, last */
                }
                for (int64_t i = 0; i < tu_volume(&xd); i++) {
                    if (ot_is_float(dt))
                        ot_set(&x, i, ot_get(&x, i) * 2);
                    if ((kind == R_LOG_SUM) && ot_is_float(dt))
                        ot_set(&x, i, fabs(ot_get(&x, i)) + 0.25);
                    if (kind == R_LOG_SUM && !ot_is_float(dt))
                        ot_set(&x, i, fabs(ot_get(&x, i)) + 1);
                    if (kind == R_PROD && !ot_is_float(dt))
                        ot_set(&x, i, (double)((int64_t)ot_get(&x, i) % 4));
                }
                if (kind == R_LSE && ot_is_float(dt) && c == 1 && tu_volume(&xd) > 0)
                    for (int64_t i = 0; i < tu_volume(&xd); i++)
                        ot_set(&x, i, 80.0 + ot_get(&x, i)); /* e^x overflows float */
                if ((kind == R_MAX || kind == R_MIN) && ot_is_float(dt) && c == 2 &&
                    tu_volume(&xd) > 2)
                    ot_set(&x, 1, NAN);
                {
                    /* Room for any output: a reduced 0 dim gives elements. */
                    int64_t room = 2;
                    for (int32_t i = 0; i < xd.nb_dims; i++)
                        room *= xd.d[i] ? xd.d[i] : 1;
                    want = malloc(sizeof(double) * (size_t)room);
                }
                REQUIRE(want != NULL);
                if (nb_axes <= 0 && noop) {
                    yd = xd;
                    for (int64_t i = 0; i < tu_volume(&xd); i++)
                        want[i] = ot_get(&x, i);
                } else {
                    ref_reduce(kind, &x, mark, keep, &yd, want);
                }
                f[nf++] = ot_fld_i32("keepdims", &keep, 1);
                f[nf++] = ot_fld_i32("noop_with_empty_axes", &noop, 1);
                /* An empty axes input cannot be a shape tensor (it has no
                 * values): empty axes go as the field, which means the same. */
                as_input = as_input && nb_axes > 0;
                if (nb_axes >= 0 && !as_input)
                    f[nf++] = ot_fld_i32("axes", axes, nb_axes);
                for (int32_t i = 0; i < nb_axes; i++)
                    sv_axes[i] = axes[i];
                sv_n[0] = nb_axes;
                n = rd_net_make(rd_names[kind], f, nf, &x, 1, svp, sv_n, as_input, 1);
                snprintf(what, sizeof what,
                         "%s %s case %d (rank %d, %d axes%s, keep %d, noop %d)",
                         rd_names[kind], prt_dtype_name(dt), c, (int)xd.nb_dims,
                         (int)nb_axes, n.nb_sv ? " as input" : "", (int)keep, (int)noop);
                CHECK_OK(rd_run(&n, y));
                if (y[0].data) {
                    CHECK(y[0].dtype == dt);
                    ot_check_close(what, &y[0], &yd, want,
                                   ot_is_float(dt) ? tol_for(dt, 1e-6) : 0);
                } else {
                    fprintf(stderr, "%s: %s\n", what, prt_last_error());
                }
                free(want);
                ot_free(&x);
                ot_free(&y[0]);
            }
    return 0;
}

/* Over an empty set, and the errors of axes. */
static int test_reduce_edges(void)
{
    static const double empty_want[] = {0, NAN, -INFINITY, INFINITY,  1,
                                        0, 0,   0,         -INFINITY, -INFINITY};
    ot_tensor x, y[1];
    int32_t axis1[1] = {1}, keep0 = 0;
    rd_net n;
    memset(&n, 0, sizeof n);
    for (int kind = 0; kind < 10; kind++) {
        prt_field f[2] = {ot_fld_i32("axes", axis1, 1),
                          ot_fld_i32("keepdims", &keep0, 1)};
        prt_dims yd = D1(3);
        double want[3];
        x = ot_make(PRT_FLOAT32, D2(3, 0));
        for (int i = 0; i < 3; i++)
            want[i] = empty_want[kind];
        n.op = rd_names[kind];
        n.fields = f;
        n.nb_fields = 2;
        n.in = &x;
        n.nb_in = 1;
        n.nb_out = 1;
        CHECK_OK(rd_run(&n, y));
        if (y[0].data)
            ot_check_close(rd_names[kind], &y[0], &yd, want, 0);
        ot_free(&y[0]);
        ot_free(&x);
    }
    /* Integer Max over an empty set: the dtype's lowest. */
    {
        prt_field f = ot_fld_i32("axes", axis1, 1);
        prt_dims yd = D2(2, 1);
        double want[2] = {INT8_MIN, INT8_MIN};
        x = ot_make(PRT_INT8, D2(2, 0));
        n.op = "ReduceMax";
        n.fields = &f;
        n.nb_fields = 1;
        n.in = &x;
        CHECK_OK(rd_run(&n, y));
        if (y[0].data)
            ot_check_close("ReduceMax int8 empty", &y[0], &yd, want, 0);
        ot_free(&y[0]);
        ot_free(&x);
    }
    /* Errors. */
    {
        int32_t bad[2] = {0, -2}, far[1] = {2};
        int64_t sv_axes[1] = {0};
        const int64_t *svp[1] = {sv_axes};
        int32_t sv_n[1] = {1};
        prt_field f = ot_fld_i32("axes", bad, 2);
        x = ot_make(PRT_FLOAT32, D2(2, 3));
        n.op = "ReduceSum";
        n.in = &x;
        n.fields = &f;
        n.nb_fields = 1;
        CHECK_ERR(rd_run(&n, y), PRT_ERR_SHAPE, "axes name dim 0 twice");
        f = ot_fld_i32("axes", far, 1);
        CHECK_ERR(rd_run(&n, y), PRT_ERR_SHAPE,
                  "axes value 2 is out of range for an input of rank 2 (-2 to 1)");
        n.sv = svp;
        n.sv_n = sv_n;
        n.nb_sv = 1;
        CHECK_ERR(rd_run(&n, y), PRT_ERR_INVALID_ARGUMENT,
                  "axes are given both as an attribute (field) and as an input");
        n.nb_sv = 0;
        ot_free(&x);
    }
    /* Axes computed at run time (ArgMax's output: no values) are not known
     * at build time, which names the layer; a network input's values with a
     * range are not constants. */
    for (int withvals = 0; withvals < 2; withvals++) {
        prt_network *net = NULL;
        prt_builder_config *cfg = NULL;
        prt_plugin *p = NULL, *am = NULL;
        prt_engine *e = NULL;
        int32_t xi, ai, l, yi, prof;
        prt_dims xd = D2(2, 3), ad = D1(1), zd = D1(4);
        int64_t lo[1] = {0}, hi[1] = {1};
        REQUIRE_OK(prt_network_create(&net));
        REQUIRE_OK(prt_builder_config_create(&cfg));
        REQUIRE_OK(ot_make_op("ReduceMean", NULL, 0, &p));
        REQUIRE_OK(prt_network_add_input(net, "X", PRT_FLOAT32, &xd, &xi));
        if (withvals) {
            REQUIRE_OK(prt_network_add_input(net, "axes", PRT_INT64, &ad, &ai));
            REQUIRE_OK(prt_builder_config_add_profile(cfg, &prof));
            REQUIRE_OK(
                prt_builder_config_set_profile_dims(cfg, prof, "axes", &ad, &ad, &ad));
            REQUIRE_OK(prt_builder_config_set_profile_shape_values(cfg, prof, "axes", lo,
                                                                   lo, hi, 1));
        } else {
            int32_t zi, al;
            /* ArgMax of a [4] keeps dims: an int64 [1] of unknown value. */
            REQUIRE_OK(prt_network_add_input(net, "Z", PRT_FLOAT32, &zd, &zi));
            REQUIRE_OK(ot_make_op("ArgMax", NULL, 0, &am));
            REQUIRE_OK(prt_network_add_plugin(net, &zi, 1, NULL, 0, am, &al));
            REQUIRE_OK(prt_network_get_layer_output(net, al, 0, &ai));
        }
        REQUIRE_OK(prt_network_add_plugin(net, &xi, 1, &ai, 1, p, &l));
        REQUIRE_OK(prt_network_set_layer_name(net, l, "my_mean"));
        REQUIRE_OK(prt_network_get_layer_output(net, l, 0, &yi));
        REQUIRE_OK(prt_network_mark_output(net, yi));
        if (withvals)
            CHECK_ERR(prt_engine_build(net, cfg, NULL, &e), PRT_ERR_SHAPE,
                      "axes value 0 is not a constant at build time");
        else
            CHECK_ERR(prt_engine_build(net, cfg, NULL, &e), PRT_ERR_SHAPE,
                      "layer 'my_mean': shape input 0");
        prt_builder_config_destroy(cfg);
        prt_network_destroy(net);
    }
    return 0;
}

/* ---- ArgMax, ArgMin -----------------------------------------------------------------
 */

static int test_argmax(void)
{
    static const int32_t types[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16, PRT_INT8,
                                    PRT_UINT8,   PRT_INT32,   PRT_INT64};
    static const prt_dims shapes[] = {{1, {7}},         {2, {3, 5}},   {3, {2, 3, 4}},
                                      {3, {2, 300, 2}}, {2, {600, 1}}, {2, {0, 3}}};
    tu_rng rng;
    tu_rng_seed(&rng, 3);
    for (int kind = 0; kind < 2; kind++)
        for (int t = 0; t < 7; t++)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                for (int32_t a = -shapes[s].nb_dims; a < shapes[s].nb_dims; a++)
                    for (int32_t last = 0; last < 2; last++) {
                        int32_t dt = types[t], keep = (a + last) & 1,
                                axis = a < 0 ? a + shapes[s].nb_dims : a;
                        prt_field f[3] = {ot_fld_i32("axis", &a, 1),
                                          ot_fld_i32("keepdims", &keep, 1),
                                          ot_fld_i32("select_last_index", &last, 1)};
                        ot_tensor x = ot_random(dt, shapes[s], &rng, 0), y;
                        const prt_dims *d = &shapes[s];
                        int64_t outer = 1, inner = 1, len = d->d[axis];
                        prt_dims yd = *d;
                        double *want;
                        char what[128];
                        if (len == 0) {
                            ot_free(&x);
                            continue;
                        }
                        split_axis(d, axis, &outer, &inner);
                        /* Few distinct values: ties; NaN now and then. */
                        for (int64_t i = 0; i < tu_volume(d); i++) {
                            ot_set(&x, i,
                                   ot_is_float(dt)
                                       ? floor(ot_get(&x, i) * 3)
                                       : (double)((int64_t)ot_get(&x, i) % 4));
                            if (ot_is_float(dt) && i % 11 == 5)
                                ot_set(&x, i, NAN);
                        }
                        want = malloc(sizeof(double) * (size_t)(outer * inner + 1));
                        REQUIRE(want != NULL);
                        for (int64_t o = 0; o < outer; o++)
                            for (int64_t j = 0; j < inner; j++) {
                                int64_t bi = 0;
                                double b = ot_get(&x, o * len * inner + j);
                                for (int64_t k = 1; k < len; k++) {
                                    double v = ot_get(&x, (o * len + k) * inner + j);
                                    int better = kind == 0 ? v > b : v < b;
                                    int same = v == b || (v != v && b != b);
                                    /* NaN is the extreme of both. */
                                    if (b != b)
                                        better = 0;
                                    else if (v != v)
                                        better = 1;
                                    if (better || (last && same)) {
                                        b = v;
                                        bi = k;
                                    }
                                }
                                want[o * inner + j] = (double)bi;
                            }
                        if (keep) {
                            yd.d[axis] = 1;
                        } else {
                            yd.nb_dims--;
                            for (int32_t i = axis; i < yd.nb_dims; i++)
                                yd.d[i] = d->d[i + 1];
                        }
                        snprintf(what, sizeof what, "%s %s shape %d axis %d last %d",
                                 kind ? "ArgMin" : "ArgMax", prt_dtype_name(dt), (int)s,
                                 (int)a, (int)last);
                        CHECK_OK(ot_run_op(kind ? "ArgMin" : "ArgMax", f, 3, &x, 1, &y));
                        if (y.data) {
                            CHECK(y.dtype == PRT_INT64);
                            ot_check_close(what, &y, &yd, want, 0);
                        }
                        free(want);
                        ot_free(&x);
                        ot_free(&y);
                    }
    /* An empty axis has no index; the axis must be in range. */
    {
        ot_tensor x = ot_make(PRT_FLOAT32, D2(3, 0)), y;
        int32_t a = 1, bad = 2;
        prt_field f = ot_fld_i32("axis", &a, 1);
        CHECK_ERR(ot_run_op("ArgMax", &f, 1, &x, 1, &y), PRT_ERR_SHAPE,
                  "the axis (dim 1) has no elements");
        f = ot_fld_i32("axis", &bad, 1);
        CHECK_ERR(ot_run_op("ArgMin", &f, 1, &x, 1, &y), PRT_ERR_SHAPE,
                  "axis 2 is out of range for data of rank 2");
        ot_free(&x);
    }
    return 0;
}

/* ---- CumSum ----------------------------------------------------------------------- */

static int test_cumsum(void)
{
    static const int32_t types[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16, PRT_INT32,
                                    PRT_INT64};
    static const prt_dims shapes[] = {
        {1, {7}}, {2, {3, 5}}, {3, {2, 3, 300}}, {2, {0, 3}}, {1, {1}}};
    tu_rng rng;
    tu_rng_seed(&rng, 8);
    for (int t = 0; t < 5; t++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int32_t a = -shapes[s].nb_dims; a < shapes[s].nb_dims; a++)
                for (int32_t mode = 0; mode < 8; mode++) {
                    int32_t dt = types[t], excl = mode & 1, rev = (mode >> 1) & 1;
                    int32_t as_field = (mode >> 2) & 1,
                            axis = a < 0 ? a + shapes[s].nb_dims : a;
                    int64_t sv_axis[1] = {a};
                    const int64_t *svp[1] = {sv_axis};
                    int32_t sv_n[1] = {-1}; /* a 0-D input, as ONNX's */
                    prt_field f[3] = {ot_fld_i32("exclusive", &excl, 1),
                                      ot_fld_i32("reverse", &rev, 1),
                                      ot_fld_i32("axis", &a, 1)};
                    const prt_dims *d = &shapes[s];
                    ot_tensor x = ot_random(dt, *d, &rng, 0), y[1];
                    int64_t outer = 1, inner = 1, len = d->d[axis];
                    double *want = malloc(sizeof(double) * (size_t)(tu_volume(d) + 1));
                    char what[128];
                    rd_net n;
                    REQUIRE(want != NULL);
                    split_axis(d, axis, &outer, &inner);
                    for (int64_t o = 0; o < outer; o++)
                        for (int64_t j = 0; j < inner; j++) {
                            double acc = 0;
                            for (int64_t q = 0; q < len; q++) {
                                int64_t k = rev ? len - 1 - q : q;
                                int64_t at = (o * len + k) * inner + j;
                                double v = ot_get(&x, at);
                                if (excl) {
                                    want[at] = acc;
                                    acc += v;
                                } else {
                                    acc += v;
                                    want[at] = acc;
                                }
                            }
                        }
                    for (int64_t i = 0; i < tu_volume(d) && dt != PRT_FLOAT32; i++) {
                        ot_tensor r = ot_make(dt, D0());
                        ot_set(&r, 0, want[i]);
                        want[i] = ot_get(&r, 0);
                        ot_free(&r);
                    }
                    n = rd_net_make("CumSum", f, as_field ? 3 : 2, &x, 1, svp, sv_n,
                                    !as_field, 1);
                    snprintf(what, sizeof what, "CumSum %s shape %d axis %d mode %d",
                             prt_dtype_name(dt), (int)s, (int)a, (int)mode);
                    CHECK_OK(rd_run(&n, y));
                    if (y[0].data)
                        ot_check_close(what, &y[0], d, want,
                                       ot_is_float(dt) ? tol_for(dt, 1e-5) * 4 : 0);
                    free(want);
                    ot_free(&x);
                    ot_free(&y[0]);
                }
    /* The axis is required, once. */
    {
        ot_tensor x = ot_make(PRT_FLOAT32, D1(3)), y[1];
        int32_t a = 0;
        int64_t sv_axis[1] = {0};
        const int64_t *svp[1] = {sv_axis};
        int32_t sv_n[1] = {1};
        prt_field f = ot_fld_i32("axis", &a, 1);
        rd_net n;
        n = rd_net_make("CumSum", NULL, 0, &x, 1, NULL, NULL, 0, 1);
        CHECK_ERR(rd_run(&n, y), PRT_ERR_INVALID_ARGUMENT, "needs the axis");
        n.fields = &f;
        n.nb_fields = 1;
        n.sv = svp;
        n.sv_n = sv_n;
        n.nb_sv = 1;
        CHECK_ERR(rd_run(&n, y), PRT_ERR_INVALID_ARGUMENT, "axis are given both");
        ot_free(&x);
    }
    return 0;
}

/* ---- TopK ---------------------------------------------------------------------------
 */

/* Whether (a, ia) comes before (b, ib) in TopK's order. */
static int topk_before(double a, int64_t ia, double b, int64_t ib, int largest)
{
    int an = a != a, bn = b != b;
    if (an != bn)
        return largest ? an : bn; /* NaN is the largest */
    if (!an && a != b)
        return largest ? a > b : a < b;
    return ia < ib;
}

static int test_topk(void)
{
    static const int32_t types[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16, PRT_INT8,
                                    PRT_UINT8,   PRT_INT32,   PRT_INT64};
    static const prt_dims shapes[] = {
        {1, {9}}, {2, {3, 7}}, {3, {2, 5, 3}}, {2, {2, 400}}, {3, {2, 300, 3}}};
    tu_rng rng;
    tu_rng_seed(&rng, 21);
    for (int t = 0; t < 7; t++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int32_t a = -1; a < shapes[s].nb_dims; a++)
                for (int32_t mode = 0; mode < 4; mode++) {
                    const prt_dims *d = &shapes[s];
                    int32_t dt = types[t], axis = a < 0 ? a + d->nb_dims : a;
                    int32_t largest = mode & 1, as_field = mode >> 1, sorted = 1;
                    int64_t len = d->d[axis], K = mode == 3 ? len
                                                  : mode == 2
                                                      ? (len > 17 ? 17 : 1)
                                                      : tu_rng_range(&rng, 0, len);
                    int32_t k32 = (int32_t)K;
                    int64_t sv_k[1] = {K};
                    const int64_t *svp[1] = {sv_k};
                    int32_t sv_n[1] = {1};
                    prt_field f[4] = {
                        ot_fld_i32("axis", &a, 1), ot_fld_i32("largest", &largest, 1),
                        ot_fld_i32("sorted", &sorted, 1), ot_fld_i32("k", &k32, 1)};
                    ot_tensor x = ot_random(dt, *d, &rng, 0), y[2];
                    int64_t outer = 1, inner = 1;
                    prt_dims yd = *d;
                    double *wv, *wi;
                    int64_t *order = malloc(sizeof(int64_t) * (size_t)len);
                    char what[128];
                    rd_net n;
                    split_axis(d, axis, &outer, &inner);
                    yd.d[axis] = K;
                    wv = malloc(sizeof(double) * (size_t)(outer * inner * K + 1));
                    wi = malloc(sizeof(double) * (size_t)(outer * inner * K + 1));
                    REQUIRE(order && wv && wi);
                    /* Ties and NaN. */
                    for (int64_t i = 0; i < tu_volume(d); i++) {
                        ot_set(&x, i,
                               ot_is_float(dt) ? floor(ot_get(&x, i) * 4)
                                               : (double)((int64_t)ot_get(&x, i) % 5));
                        if (ot_is_float(dt) && i % 13 == 4)
                            ot_set(&x, i, NAN);
                    }
                    for (int64_t o = 0; o < outer; o++)
                        for (int64_t j = 0; j < inner; j++) {
                            /* Insertion sort by TopK's order: stable. */
                            for (int64_t q = 0; q < len; q++) {
                                int64_t p = q;
                                double v = ot_get(&x, (o * len + q) * inner + j);
                                while (
                                    p > 0 &&
                                    topk_before(
                                        v, q,
                                        ot_get(&x, (o * len + order[p - 1]) * inner + j),
                                        order[p - 1], largest)) {
                                    order[p] = order[p - 1];
                                    p--;
                                }
                                order[p] = q;
                            }
                            for (int64_t k = 0; k < K; k++) {
                                wi[(o * K + k) * inner + j] = (double)order[k];
                                wv[(o * K + k) * inner + j] =
                                    ot_get(&x, (o * len + order[k]) * inner + j);
                            }
                        }
                    n = rd_net_make("TopK", f, as_field ? 4 : 3, &x, 1, svp, sv_n,
                                    !as_field, 2);
                    snprintf(what, sizeof what,
                             "TopK %s shape %d axis %d K %d largest %d",
                             prt_dtype_name(dt), (int)s, (int)a, (int)K, (int)largest);
                    CHECK_OK(rd_run(&n, y));
                    if (y[0].data && y[1].data) {
                        CHECK(y[0].dtype == dt && y[1].dtype == PRT_INT64);
                        ot_check_close(what, &y[0], &yd, wv, 0);
                        ot_check_close(what, &y[1], &yd, wi, 0);
                    }
                    free(order);
                    free(wv);
                    free(wi);
                    ot_free(&x);
                    ot_free(&y[0]);
                    ot_free(&y[1]);
                }
    /* Errors: K past the axis, K missing, K twice, a negative k. */
    {
        ot_tensor x = ot_make(PRT_FLOAT32, D2(2, 3)), y[2];
        int64_t sv_k[1] = {4};
        const int64_t *svp[1] = {sv_k};
        int32_t sv_n[1] = {1}, k = 1, neg = -1;
        prt_field f = ot_fld_i32("k", &k, 1);
        prt_plugin *p = NULL;
        rd_net n;
        n = rd_net_make("TopK", NULL, 0, &x, 1, NULL, NULL, 0, 2);
        CHECK_ERR(rd_run(&n, y), PRT_ERR_INVALID_ARGUMENT, "needs K");
        n.sv = svp;
        n.sv_n = sv_n;
        n.nb_sv = 1;
        CHECK_ERR(rd_run(&n, y), PRT_ERR_SHAPE, "K 4 exceeds the axis' dim 3");
        n.fields = &f;
        n.nb_fields = 1;
        CHECK_ERR(rd_run(&n, y), PRT_ERR_INVALID_ARGUMENT, "K is given both");
        f = ot_fld_i32("k", &neg, 1);
        CHECK_ERR(ot_make_op("TopK", &f, 1, &p), PRT_ERR_INVALID_ARGUMENT, "k is -1");
        ot_free(&x);
    }
    return 0;
}

/* ---- Dropout --------------------------------------------------------------------------
 */

static int test_dropout(void)
{
    tu_rng rng;
    tu_rng_seed(&rng, 4);
    for (int t = 0; t < 3; t++)
        for (int32_t mask = 0; mask < 3; mask++)
            for (int variant = 0; variant < 3; variant++) {
                /* 0: data only; 1: with ratio; 2: with ratio and training_mode */
                static const int32_t ft[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16};
                int32_t dt = ft[t];
                float ratio = 0.3f;
                prt_field f[2] = {ot_fld_i32("mask", &mask, 1),
                                  ot_fld_f32("ratio", &ratio)};
                ot_tensor in[2], y[2];
                int64_t tm[1] = {0};
                const int64_t *svp[1] = {tm};
                int32_t sv_n[1] = {-1};
                double want[600], ones[600];
                rd_net n;
                in[0] = ot_random(dt, D2(2, 300), &rng, 0);
                in[1] = ot_make(PRT_FLOAT32, D0());
                ot_set(&in[1], 0, 0.5);
                for (int i = 0; i < 600; i++) {
                    want[i] = ot_get(&in[0], i);
                    ones[i] = 1;
                }
                n = rd_net_make("Dropout", f, variant == 0 ? 2 : 1, in,
                                variant == 0 ? 1 : 2, svp, sv_n, variant == 2,
                                mask ? 2 : 1);
                CHECK_OK(rd_run(&n, y));
                if (y[0].data)
                    ot_check_close("Dropout", &y[0], &in[0].dims, want, 0);
                if (mask && y[1].data) {
                    CHECK(y[1].dtype == (mask == 1 ? PRT_BOOL : dt));
                    ot_check_close("Dropout mask", &y[1], &in[0].dims, ones, 0);
                }
                ot_free(&y[0]);
                if (mask)
                    ot_free(&y[1]);
                /* training_mode true is an error. */
                if (variant == 2) {
                    tm[0] = 1;
                    CHECK_ERR(rd_run(&n, y), PRT_ERR_UNSUPPORTED,
                              "training_mode true is not supported");
                }
                ot_free(&in[0]);
                ot_free(&in[1]);
            }
    return 0;
}

/* ---- shape tensors
 * ----------------------------------------------------------------------- */

/* The dims of ConstantOfShape's output when its shape comes from op(c0, c1)
 * (int64 constants): the op's values, worked out at build time. */
static prt_status shape_of(const char *op, const prt_field *f, int32_t nf,
                           const int64_t *c0, int32_t n0, const int64_t *c1, int32_t n1,
                           prt_dims *out)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_plugin *p = NULL, *q = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    int32_t ids[2], l, v, l2, y;
    prt_dims d0 = D1(n0), d1 = D1(n1);
    prt_status st = prt_network_create(&net);
    if (!st)
        st = prt_builder_config_create(&cfg);
    if (!st)
        st = prt_network_add_constant(net, "C0", PRT_INT64, &d0, c0, &ids[0]);
    if (!st && c1)
        st = prt_network_add_constant(net, "C1", PRT_INT64, &d1, c1, &ids[1]);
    if (!st)
        st = ot_make_op(op, f, nf, &p);
    if (!st)
        st = prt_network_add_plugin(net, ids, c1 ? 2 : 1, NULL, 0, p, &l);
    if (!st) {
        p = NULL;
        st = prt_network_get_layer_output(net, l, 0, &v);
    }
    if (!st)
        st = ot_make_op("ConstantOfShape", NULL, 0, &q);
    if (!st)
        st = prt_network_add_plugin(net, NULL, 0, &v, 1, q, &l2);
    if (!st) {
        q = NULL;
        st = prt_network_get_layer_output(net, l2, 0, &y);
    }
    if (!st)
        st = prt_network_set_tensor_name(net, y, "Y");
    if (!st)
        st = prt_network_mark_output(net, y);
    if (!st)
        st = prt_engine_build(net, cfg, NULL, &e);
    if (!st)
        st = prt_context_create(e, &ctx);
    if (!st)
        st = prt_context_get_tensor_shape(ctx, "Y", out);
    if (p)
        p->vt->runtime->destroy(p);
    if (q)
        q->vt->runtime->destroy(q);
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return st;
}

static int test_shape_values(void)
{
    static const int64_t a[3] = {2, 7, 3}, b[3] = {4, 5, 3}, c[1] = {2};
    int32_t zero = 0, one = 1, axes0[1] = {0};
    prt_field fm0 = ot_fld_i32("fmod", &zero, 1), fm1 = ot_fld_i32("fmod", &one, 1);
    prt_field keep0[2] = {ot_fld_i32("keepdims", &zero, 1), ot_fld_i32("axes", axes0, 1)};
    prt_dims d;
    CHECK_OK(shape_of("Max", NULL, 0, a, 3, b, 3, &d));
    CHECK(d.nb_dims == 3 && d.d[0] == 4 && d.d[1] == 7 && d.d[2] == 3);
    CHECK_OK(shape_of("Min", NULL, 0, a, 3, c, 1, &d));
    CHECK(d.nb_dims == 3 && d.d[0] == 2 && d.d[1] == 2 && d.d[2] == 2);
    CHECK_OK(shape_of("Mod", &fm0, 1, b, 3, c, 1, &d));
    CHECK(d.nb_dims == 3 && d.d[0] == 0 && d.d[1] == 1 && d.d[2] == 1);
    CHECK_OK(shape_of("Mod", &fm1, 1, a, 3, c, 1, &d));
    CHECK(d.nb_dims == 3 && d.d[0] == 0 && d.d[1] == 1 && d.d[2] == 1);
    CHECK_OK(shape_of("ReduceProd", NULL, 0, a, 3, NULL, 0, &d));
    CHECK(d.nb_dims == 1 && d.d[0] == 42);
    CHECK_OK(shape_of("ReduceSum", keep0, 2, a, 3, NULL, 0, &d));
    CHECK(d.nb_dims == 1 && d.d[0] == 12); /* a 0-D shape tensor: one value */
    CHECK_OK(shape_of("ReduceMax", NULL, 0, b, 3, NULL, 0, &d));
    CHECK(d.nb_dims == 1 && d.d[0] == 5);
    /* Comparisons give bools, which ConstantOfShape takes as 0/1 dims. */
    CHECK_OK(shape_of("Less", NULL, 0, a, 3, b, 3, &d));
    CHECK(d.nb_dims == 3 && d.d[0] == 1 && d.d[1] == 0 && d.d[2] == 0);
    CHECK_OK(shape_of("GreaterOrEqual", NULL, 0, a, 3, b, 3, &d));
    CHECK(d.nb_dims == 3 && d.d[0] == 0 && d.d[1] == 1 && d.d[2] == 1);
    return 0;
}

/* Allocation failure at every point of a build, load and run. */
static int test_alloc_failures(void)
{
    int32_t axes[2] = {0, -1}, keep = 0;
    prt_field f[2] = {ot_fld_i32("axes", axes, 2), ot_fld_i32("keepdims", &keep, 1)};
    tu_rng rng;
    ot_tensor x;
    int64_t n;
    tu_rng_seed(&rng, 6);
    x = ot_random(PRT_FLOAT16, D3(2, 3, 8), &rng, 0);
    n = ot_alloc_failures("ReduceLogSumExp", f, 2, &x, 1);
    CHECK(n > 3 && n < OT_MAX_ALLOCS);
    n = ot_alloc_failures("ArgMin", NULL, 0, &x, 1);
    CHECK(n > 3 && n < OT_MAX_ALLOCS);
    ot_free(&x);
    return 0;
}

int main(void)
{
    test_reduce();
    test_reduce_edges();
    test_argmax();
    test_cumsum();
    test_topk();
    test_dropout();
    test_shape_values();
    test_alloc_failures();
    return tu_finish("test_ops_reduce");
}
