/*
 * The normalization, linear and spatial built-ins (namespace "plugrt", ops
 * of ops_nn.h and the ones they changed), each in a one-layer network that
 * is built, run, serialized, loaded through an empty registry and run again
 * (both runs must give the same bytes), against plain C references written
 * here in double from ONNX's definitions:
 *
 *  - MaxPool (with Indices, both storage orders), AveragePool (with and
 *    without count_include_pad), LpPool: random ranks 1-3, kernels,
 *    strides, dilations, pads, every auto_pad and ceil_mode, dtypes
 *    (float16, int8, uint8), dynamic dims, empty batches; GlobalMaxPool,
 *    GlobalLpPool; errors;
 *  - ConvTranspose: random ranks, groups, strides, dilations, pads,
 *    output_padding, output_shape, every auto_pad, bias or none, float16,
 *    dynamic dims, errors;
 *  - Softmax and LogSoftmax along each axis and coerced to 2-D (opsets
 *    before 13), LayerNormalization's Mean and InvStdDev in every stash
 *    dtype;
 *  - BatchNormalization (spatial 1 and 0, mixed dtypes), Instance-,
 *    Group- (scales per group and per channel) and LpNormalization (p 1
 *    and 2, zero rows); errors;
 *  - Resize against a port of ONNX's reference (each axis interpolated
 *    over an edge-padded copy, the nearest taps found by sorting): every
 *    mode, coordinate transformation and nearest mode, cubic's A and
 *    exclude_outside, antialias, axes, scales or sizes (a shape input),
 *    keep_aspect_ratio_policy, tf_crop_and_resize's roi and extrapolation,
 *    integer dtypes, dynamic dims with scales; errors;
 *  - allocation failure at every point of a MaxPool and a Resize.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "ops/cpu/cpu_kernels.h"
#include "op_testutil.h"

#define NN_MAXOUT 3

/* ---- networks of several outputs and a constant shape input --------------- */

/* Inputs X0.. (static dims), the op, outputs Y0..; with nb_sv >= 0 also a
 * constant int64 tensor S of nb_sv values as the op's shape input. */
static prt_status nn_build(const char *name, const prt_field *f, int32_t nf,
                           const ot_tensor *in, int32_t nb_in, const int64_t *sv,
                           int32_t nb_sv, int32_t nb_out, prt_engine **out)
{
    prt_plugin *p = NULL;
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    int32_t ids[OT_MAXIN], sid = -1, l, y;
    prt_status st = ot_make_op(name, f, nf, &p);
    if (!st)
        st = prt_network_create(&net);
    if (!st)
        st = prt_builder_config_create(&cfg);
    for (int32_t i = 0; !st && i < nb_in; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "X%d", (int)i);
        st = prt_network_add_input(net, nm, in[i].dtype, &in[i].dims, &ids[i]);
    }
    if (!st && nb_sv >= 0) {
        prt_dims sd = D1(nb_sv);
        st = prt_network_add_constant(net, "S", PRT_INT64, &sd, sv, &sid);
    }
    if (!st)
        st = prt_network_add_plugin(net, ids, nb_in, sid >= 0 ? &sid : NULL,
                                    sid >= 0 ? 1 : 0, p, &l);
    if (!st)
        p = NULL;
    for (int32_t k = 0; !st && k < nb_out; k++) {
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

/* Runs e; out[k] (the caller frees) holds Y_k. */
static prt_status nn_exec(const prt_engine *e, const ot_tensor *in, int32_t nb_in,
                          int32_t nb_out, ot_tensor *out)
{
    prt_context *ctx = NULL;
    prt_status st = prt_context_create(e, &ctx);
    for (int32_t k = 0; k < nb_out; k++)
        out[k].data = NULL;
    for (int32_t i = 0; !st && i < nb_in; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "X%d", (int)i);
        st = prt_context_set_tensor_address(ctx, nm, in[i].data);
    }
    for (int32_t k = 0; !st && k < nb_out; k++) {
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
            out[k] = ot_make(io.dtype, d);
            st = out[k].data ? prt_context_set_tensor_address(ctx, nm, out[k].data)
                             : PRT_ERR_OUT_OF_MEMORY;
        }
    }
    if (!st)
        st = prt_context_enqueue(ctx, NULL);
    for (int32_t k = 0; st && k < nb_out; k++)
        ot_free(&out[k]);
    prt_context_destroy(ctx);
    return st;
}

/* nn_build, nn_exec, reload, exec again: one check that both give the same
 * bytes. */
static prt_status nn_run(const char *name, const prt_field *f, int32_t nf,
                         const ot_tensor *in, int32_t nb_in, const int64_t *sv,
                         int32_t nb_sv, int32_t nb_out, ot_tensor *out)
{
    prt_engine *e = NULL, *e2 = NULL;
    ot_tensor again[NN_MAXOUT];
    prt_status st = nn_build(name, f, nf, in, nb_in, sv, nb_sv, nb_out, &e);
    for (int32_t k = 0; k < nb_out; k++)
        out[k].data = again[k].data = NULL;
    if (!st)
        st = nn_exec(e, in, nb_in, nb_out, out);
    if (!st)
        st = ot_reload(e, &e2);
    if (!st)
        st = nn_exec(e2, in, nb_in, nb_out, again);
    for (int32_t k = 0; !st && k < nb_out; k++) {
        tu_checks++;
        if (!ot_dims_eq(&again[k].dims, &out[k].dims) ||
            memcmp(again[k].data, out[k].data,
                   (size_t)tu_volume(&out[k].dims) * prt_dtype_size(out[k].dtype)) != 0) {
            fprintf(stderr, "%s: the loaded engine gives other results (output %d)\n",
                    name, (int)k);
            tu_failures++;
        }
    }
    for (int32_t k = 0; k < nb_out; k++) {
        if (st)
            ot_free(&out[k]);
        ot_free(&again[k]);
    }
    prt_engine_destroy(e2);
    prt_engine_destroy(e);
    return st;
}

/* The tolerance of a float32 computation rounded once to dt. */
static double tol_for(int32_t dt, double f32)
{
    return dt == PRT_FLOAT16 ? 2e-3 : dt == PRT_BFLOAT16 ? 1.6e-2 : f32;
}

/* Row-major strides of d. */
static void strides_of(const prt_dims *d, int64_t *s)
{
    int64_t v = 1;
    for (int32_t i = d->nb_dims - 1; i >= 0; i--) {
        s[i] = v;
        v *= d->d[i];
    }
}

/* ---- the window ops' attributes ------------------------------------------- */

enum { AP_NOTSET, AP_VALID, AP_SAME_UPPER, AP_SAME_LOWER };
static const char *const ap_names[] = {"NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"};

typedef struct win_case {
    int32_t ns, ap, ceil;
    int32_t k[3], s[3], d[3], pads[6];
} win_case;

/* Fields of a window: auto_pad, kernel_shape (with_ks), strides,
 * dilations, pads (NOTSET only), then ceil_mode (with_ceil). Returns the
 * count; f must hold 6. */
static int32_t win_fields(const win_case *w, int with_ks, int with_ceil, prt_field *f)
{
    int32_t n = 0;
    f[n++] = ot_fld_str("auto_pad", ap_names[w->ap]);
    if (with_ks)
        f[n++] = ot_fld_i32("kernel_shape", w->k, w->ns);
    f[n++] = ot_fld_i32("strides", w->s, w->ns);
    f[n++] = ot_fld_i32("dilations", w->d, w->ns);
    if (w->ap == AP_NOTSET)
        f[n++] = ot_fld_i32("pads", w->pads, 2 * w->ns);
    if (with_ceil)
        f[n++] = ot_fld_i32("ceil_mode", &w->ceil, 1);
    return n;
}

/* ONNX's output size of a pool or Conv dim, with the padding it implies. */
static int64_t ref_win_out(const win_case *w, int32_t i, int64_t D, int64_t *pb,
                           int64_t *pe)
{
    int64_t ek = (int64_t)w->d[i] * (w->k[i] - 1) + 1, s = w->s[i], O;
    if (w->ap == AP_SAME_UPPER || w->ap == AP_SAME_LOWER) {
        int64_t total;
        O = (D + s - 1) / s;
        total = (O - 1) * s + ek - D;
        if (total < 0)
            total = 0;
        *pb = w->ap == AP_SAME_UPPER ? total / 2 : (total + 1) / 2;
        *pe = total - *pb;
        return O;
    }
    *pb = w->ap == AP_VALID ? 0 : w->pads[i];
    *pe = w->ap == AP_VALID ? 0 : w->pads[w->ns + i];
    if (!w->ceil)
        return (int64_t)floor((double)(D + *pb + *pe - ek) / (double)s) + 1;
    O = (int64_t)ceil((double)(D + *pb + *pe - ek) / (double)s) + 1;
    if ((O - 1) * s >= D + *pb)
        O--; /* the last window would start in the end padding */
    return O;
}

/* A random window over spatial dims in[] (ns of them), valid for them. */
static void rand_window(tu_rng *r, int32_t ns, const int64_t *in, int pool, win_case *w)
{
    for (;;) {
        int ok = 1;
        memset(w, 0, sizeof *w);
        w->ns = ns;
        w->ap = (int32_t)tu_rng_range(r, 0, 3);
        w->ceil = pool ? (int32_t)tu_rng_range(r, 0, 1) : 0;
        for (int32_t i = 0; i < ns; i++) {
            w->k[i] = (int32_t)tu_rng_range(r, 1, 3);
            w->s[i] = (int32_t)tu_rng_range(r, 1, 3);
            w->d[i] = (int32_t)tu_rng_range(r, 1, 2);
            w->pads[i] = (int32_t)tu_rng_range(r, 0, w->k[i] - 1);
            w->pads[ns + i] = (int32_t)tu_rng_range(r, 0, w->k[i] - 1);
        }
        for (int32_t i = 0; i < ns; i++) {
            int64_t pb, pe;
            int64_t ek = (int64_t)w->d[i] * (w->k[i] - 1) + 1;
            if (w->ap <= AP_VALID &&
                in[i] + (w->ap ? 0 : w->pads[i] + w->pads[ns + i]) < ek)
                ok = 0;
            else if (ref_win_out(w, i, in[i], &pb, &pe) < 1 && in[i] > 0)
                ok = 0;
        }
        if (ok)
            return;
    }
}

/* ---- pools ----------------------------------------------------------------- */

enum { RP_MAX, RP_AVG, RP_LP };

/* A pool over x [N, C, spatial] by window w, in double: y and, for the
 * maximum, the flat index of each (storage_order 1: column-major spatial
 * dims). yd gets the output dims. */
static void ref_pool(int kind, const ot_tensor *x, const win_case *w, int with_pad, int p,
                     int storage_order, prt_dims *yd, double *y, int64_t *idx)
{
    int32_t ns = x->dims.nb_dims - 2;
    int64_t O[3], pb[3], pe[3], D[3], xs[8], cm[3], ivol = 1, ovol = 1, kvol = 1;
    int64_t planes = x->dims.d[0] * x->dims.d[1];
    strides_of(&x->dims, xs);
    *yd = x->dims;
    for (int32_t i = 0; i < ns; i++) {
        D[i] = x->dims.d[2 + i];
        O[i] = ref_win_out(w, i, D[i], &pb[i], &pe[i]);
        yd->d[2 + i] = O[i];
        cm[i] = ivol; /* column-major stride */
        ivol *= D[i];
        ovol *= O[i];
        kvol *= w->k[i];
    }
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t q = 0; q < ovol; q++) {
            int64_t oi[3], rem = q, cnt = 0, padded = 0, best = -1;
            double acc = 0.0, mx = 0.0;
            for (int32_t i = ns - 1; i >= 0; i--) {
                oi[i] = rem % O[i];
                rem /= O[i];
            }
            for (int64_t kq = 0; kq < kvol; kq++) {
                int64_t kr = kq, off = pl * ivol, coff = pl * ivol;
                int inside = 1, inpad = 1;
                for (int32_t i = ns - 1; i >= 0; i--) {
                    int64_t ki = kr % w->k[i], pos;
                    kr /= w->k[i];
                    pos = oi[i] * w->s[i] - pb[i] + ki * w->d[i];
                    inside &= pos >= 0 && pos < D[i];
                    inpad &= pos >= -pb[i] && pos < D[i] + pe[i];
                    off += pos * xs[2 + i];
                    coff += pos * cm[i];
                }
                padded += inpad;
                if (!inside)
                    continue;
                cnt++;
                {
                    double v = ot_get(x, off);
                    if (best < 0 || v > mx) {
                        mx = v;
                        best = storage_order ? coff : off;
                    }
                    acc += kind == RP_LP ? pow(fabs(v), p) : v;
                }
            }
            if (cnt == 0) /* a window of padding alone: the lowest value, index -1 */
                mx = x->dtype == PRT_INT8      ? -128.0
                     : x->dtype == PRT_UINT8   ? 0.0
                     : x->dtype == PRT_FLOAT16 ? -INFINITY
                                               : -3.4028234663852886e38;
            y[pl * ovol + q] = kind == RP_MAX   ? mx
                               : kind == RP_AVG ? acc / (double)(with_pad ? padded : cnt)
                                                : pow(acc, 1.0 / p);
            if (idx)
                idx[pl * ovol + q] = best;
        }
}

static int test_pools(void)
{
    static const char *const names[] = {"MaxPool", "AveragePool", "LpPool"};
    tu_rng rng;
    tu_rng_seed(&rng, 101);
    for (int cs = 0; cs < 240; cs++) {
        int kind = cs % 3, idx_out = kind == RP_MAX && cs % 2;
        int32_t ns = (int32_t)tu_rng_range(&rng, 1, 3), dt = PRT_FLOAT32;
        int32_t with_pad = (int32_t)tu_rng_range(&rng, 0, 1), order = cs % 4 == 1;
        int32_t p = (int32_t)tu_rng_range(&rng, 1, 3), two = 2;
        int64_t sp[3] = {1, 1, 1}, n = cs % 17 == 0 ? 0 : tu_rng_range(&rng, 1, 2);
        int64_t c = tu_rng_range(&rng, 1, 3);
        win_case w;
        prt_field f[9];
        int32_t nf;
        prt_dims xd;
        ot_tensor x, y[2];
        double *want;
        int64_t *widx;
        char what[160];
        int mode = (int)tu_rng_range(&rng, 0, 3);
        if (kind == RP_MAX && mode == 1)
            dt = PRT_INT8;
        else if (kind == RP_MAX && mode == 2)
            dt = PRT_UINT8;
        else if (mode == 3)
            dt = PRT_FLOAT16;
        for (int32_t i = 0; i < ns; i++)
            sp[i] = tu_rng_range(&rng, 1, ns == 3 ? 4 : 7);
        rand_window(&rng, ns, sp, 1, &w);
        xd = D3(n, c, sp[0]);
        for (int32_t i = 1; i < ns; i++)
            xd.d[xd.nb_dims++] = sp[i];
        x = ot_random(dt, xd, &rng, 0);
        if (dt == PRT_INT8 || dt == PRT_UINT8)
            for (int64_t i = 0; i < tu_volume(&xd); i++)
                ot_set(&x, i, (double)tu_rng_range(&rng, dt == PRT_INT8 ? -128 : 0, 127));
        nf = win_fields(&w, 1, 1, f);
        if (kind == RP_AVG)
            f[nf++] = ot_fld_i32("count_include_pad", &with_pad, 1);
        if (kind == RP_LP)
            f[nf++] = ot_fld_i32("p", &p, 1);
        if (idx_out) {
            f[nf++] = ot_fld_i32("nb_outputs", &two, 1);
            f[nf++] = ot_fld_i32("storage_order", &order, 1);
        }
        want = malloc(sizeof(double) * 4096);
        widx = malloc(sizeof(int64_t) * 4096);
        {
            prt_dims yd;
            ref_pool(kind, &x, &w, with_pad, p, order, &yd, want, widx);
            snprintf(what, sizeof what,
                     "%s case %d (%s, rank %d, %s, ceil %d, k %d s %d d %d, pads %d %d)",
                     names[kind], cs, prt_dtype_name(dt), (int)ns, ap_names[w.ap],
                     (int)w.ceil, (int)w.k[0], (int)w.s[0], (int)w.d[0], (int)w.pads[0],
                     (int)w.pads[ns]);
            CHECK_OK(nn_run(names[kind], f, nf, &x, 1, NULL, -1, idx_out ? 2 : 1, y));
            if (y[0].data) {
                ot_check_close(what, &y[0], &yd, want, tol_for(dt, 1e-5));
                if (idx_out) {
                    double *wi = malloc(sizeof(double) * 4096);
                    for (int64_t i = 0; i < tu_volume(&yd); i++)
                        wi[i] = (double)widx[i];
                    CHECK(y[1].dtype == PRT_INT64);
                    ot_check_close(what, &y[1], &yd, wi, 0);
                    free(wi);
                    ot_free(&y[1]);
                }
            }
        }
        ot_free(&y[0]);
        ot_free(&x);
        free(want);
        free(widx);
    }
    /* MaxPool of int8 and uint8 on their bytes (pool.c's 8-bit rows): rows
     * wide enough for its vectors of 16 outputs at strides 1 and 2 (a
     * row's last vector at stride 2 read from one column before). */
    for (int cs = 0; cs < 120; cs++) {
        const int32_t dt = cs % 2 ? PRT_INT8 : PRT_UINT8, ns = cs % 5 == 4 ? 1 : 2;
        int64_t sp[2] = {tu_rng_range(&rng, 1, 5), tu_rng_range(&rng, 16, 90)};
        win_case w;
        prt_field f[9];
        prt_dims xd, yd;
        ot_tensor x, y[2];
        double *want = malloc(sizeof(double) * 4096);
        char what[160];
        if (ns == 1)
            sp[0] = sp[1];
        rand_window(&rng, ns, sp, 1, &w);
        xd = ns == 1 ? D3(1, 2, sp[0]) : D4(1, 2, sp[0], sp[1]);
        x = ot_random(dt, xd, &rng, 0);
        for (int64_t i = 0; i < tu_volume(&xd); i++)
            ot_set(&x, i,
                   (double)tu_rng_range(&rng, dt == PRT_INT8 ? -128 : 0,
                                        dt == PRT_INT8 ? 127 : 255));
        ref_pool(RP_MAX, &x, &w, 0, 2, 0, &yd, want, NULL);
        snprintf(what, sizeof what,
                 "MaxPool 8-bit case %d (%s, %lldx%lld, k %d s %d d %d)", cs,
                 prt_dtype_name(dt), (long long)sp[0], (long long)sp[1], (int)w.k[ns - 1],
                 (int)w.s[ns - 1], (int)w.d[ns - 1]);
        CHECK_OK(nn_run("MaxPool", f, win_fields(&w, 1, 1, f), &x, 1, NULL, -1, 1, y));
        if (y[0].data)
            ot_check_close(what, &y[0], &yd, want, 0);
        ot_free(&y[0]);
        ot_free(&x);
        free(want);
    }
    /* Dynamic dims: the output size is an expression of them. */
    for (int ceil_mode = 0; ceil_mode < 2; ceil_mode++) {
        const int32_t k[2] = {3, 2}, s[2] = {2, 2}, pads[4] = {1, 0, 1, 1};
        const uint32_t dyn[1] = {0xdu};
        prt_field f[4] = {ot_fld_i32("kernel_shape", k, 2), ot_fld_i32("strides", s, 2),
                          ot_fld_i32("pads", pads, 4),
                          ot_fld_i32("ceil_mode", &ceil_mode, 1)};
        win_case w = {2, AP_NOTSET, ceil_mode, {3, 2}, {2, 2}, {1, 1}, {1, 0, 1, 1}};
        ot_tensor x = ot_random(PRT_FLOAT32, D4(2, 3, 7, 6), &rng, 0), y;
        double want[2 * 3 * 4 * 4];
        prt_dims yd;
        ref_pool(RP_AVG, &x, &w, 0, 2, 0, &yd, want, NULL);
        CHECK_OK(ot_run_op_dyn("AveragePool", f, 4, &x, 1, dyn, &y));
        if (y.data)
            ot_check_close("AveragePool dynamic", &y, &yd, want, 1e-5);
        ot_free(&x);
        ot_free(&y);
    }
    /* The global pools: one window over all positions, empty ones too. */
    for (int cs = 0; cs < 12; cs++) {
        int max = cs % 2;
        int32_t ns = (int32_t)tu_rng_range(&rng, 1, 3), p = (int32_t)(cs % 3 + 1);
        int32_t dt = cs % 4 == 3 ? PRT_FLOAT16 : PRT_FLOAT32;
        prt_dims xd = D2(tu_rng_range(&rng, 1, 2), tu_rng_range(&rng, 1, 3));
        prt_field f = ot_fld_i32("p", &p, 1);
        win_case w;
        ot_tensor x, y;
        double want[64];
        prt_dims yd;
        memset(&w, 0, sizeof w);
        w.ns = ns;
        for (int32_t i = 0; i < ns; i++) {
            xd.d[xd.nb_dims++] = cs == 5 && i == 0 ? 0 : tu_rng_range(&rng, 1, 5);
            w.k[i] = (int32_t)(xd.d[2 + i] ? xd.d[2 + i] : 1);
            w.s[i] = w.d[i] = 1;
        }
        x = ot_random(dt, xd, &rng, 0);
        CHECK_OK(ot_run_op(max ? "GlobalMaxPool" : "GlobalLpPool", &f, max ? 0 : 1, &x, 1,
                           &y));
        if (cs == 5) { /* an empty window: the lowest value, or a norm of 0 */
            CHECK(y.data && y.dims.nb_dims == ns + 2 && y.dims.d[2] == 1 &&
                  (max ? ot_get(&y, 0) < -1e30 || isinf(ot_get(&y, 0))
                       : ot_get(&y, 0) == 0.0));
        } else if (y.data) {
            ref_pool(max ? RP_MAX : RP_LP, &x, &w, 0, p, 0, &yd, want, NULL);
            ot_check_close(max ? "GlobalMaxPool" : "GlobalLpPool", &y, &yd, want,
                           tol_for(dt, 1e-5));
        }
        ot_free(&x);
        ot_free(&y);
    }
    /* A NaN is a maximum; the first of equal maxima wins. */
    {
        const int32_t k[1] = {3}, two = 2;
        prt_field f[2] = {ot_fld_i32("kernel_shape", k, 1),
                          ot_fld_i32("nb_outputs", &two, 1)};
        ot_tensor x = ot_make(PRT_FLOAT32, D3(1, 1, 6)), y[2];
        const double v[6] = {1, NAN, 5, 2, 2, 0};
        for (int i = 0; i < 6; i++)
            ot_set(&x, i, v[i]);
        CHECK_OK(nn_run("MaxPool", f, 2, &x, 1, NULL, -1, 2, y));
        if (y[0].data) {
            CHECK(isnan(ot_get(&y[0], 0)) && isnan(ot_get(&y[0], 1)) &&
                  ot_get(&y[0], 2) == 5 && ot_get(&y[0], 3) == 2);
            CHECK(ot_get(&y[1], 0) == 1 && ot_get(&y[1], 1) == 1 &&
                  ot_get(&y[1], 2) == 2 && ot_get(&y[1], 3) == 3);
            ot_free(&y[0]);
            ot_free(&y[1]);
        }
        ot_free(&x);
    }
    /* Errors. */
    {
        const int32_t k2[2] = {2, 2}, k1[1] = {9}, three = 3, bad = 2;
        prt_field f[2];
        prt_plugin *pl = NULL;
        ot_tensor x = ot_make(PRT_FLOAT32, D4(1, 1, 4, 4)), y;
        CHECK_ERR(ot_make_op("MaxPool", NULL, 0, &pl), PRT_ERR_INVALID_ARGUMENT,
                  "MaxPool (layer 'MaxPool'): kernel_shape is required");
        f[0] = ot_fld_i32("kernel_shape", k2, 2);
        f[1] = ot_fld_i32("nb_outputs", &three, 1);
        CHECK_ERR(ot_make_op("MaxPool", f, 2, &pl), PRT_ERR_UNSUPPORTED,
                  "nb_outputs 3 is not supported (1 to 2)");
        f[1] = ot_fld_i32("storage_order", &bad, 1);
        CHECK_ERR(ot_make_op("MaxPool", f, 2, &pl), PRT_ERR_UNSUPPORTED,
                  "storage_order 2 is not supported");
        f[1] = ot_fld_i32("count_include_pad", &bad, 1);
        CHECK_ERR(ot_make_op("AveragePool", f, 2, &pl), PRT_ERR_UNSUPPORTED,
                  "count_include_pad 2 is not supported");
        f[1] = ot_fld_i32("storage_order", &three, 1);
        CHECK_ERR(ot_make_op("AveragePool", f, 2, &pl), PRT_ERR_INVALID_ARGUMENT,
                  "unknown field 'storage_order'");
        f[1] = ot_fld_str("auto_pad", "SAME");
        CHECK_ERR(ot_make_op("LpPool", f, 2, &pl), PRT_ERR_INVALID_ARGUMENT,
                  "auto_pad 'SAME' is not NOTSET");
        f[0] = ot_fld_i32("kernel_shape", k1, 1);
        CHECK_ERR(ot_run_op("MaxPool", f, 1, &x, 1, &y), PRT_ERR_SHAPE,
                  "X has 2 spatial dims but dilations has 0 values, kernel_shape 1");
        f[0] = ot_fld_i32("kernel_shape", k2, 2);
        ot_free(&x);
        x = ot_make(PRT_FLOAT32, D4(1, 1, 1, 4));
        CHECK_ERR(ot_run_op("MaxPool", f, 1, &x, 1, &y), PRT_ERR_SHAPE,
                  "spatial dim 0: the padded input (1 + 0) is smaller than the dilated "
                  "kernel (2)");
        ot_free(&x);
        x = ot_make(PRT_FLOAT32, D2(1, 4));
        CHECK_ERR(ot_run_op("GlobalMaxPool", NULL, 0, &x, 1, &y), PRT_ERR_SHAPE,
                  "X must have rank 3 or more");
        ot_free(&x);
        x = ot_make(PRT_INT8, D4(1, 1, 4, 4));
        CHECK_ERR(ot_run_op("AveragePool", f, 1, &x, 1, &y), PRT_ERR_UNSUPPORTED, "int8");
        ot_free(&x);
    }
    return 0;
}

/* ---- ConvTranspose ---------------------------------------------------------- */

typedef struct ct_case {
    win_case w;
    int32_t group, opad[3], oshape[3], with_oshape;
} ct_case;

/* ConvTranspose by its definition: every input element adds x * w into
 * y[o], o = i s - pad_begin + k d, for the output positions that exist. */
static void ref_ct(const ot_tensor *x, const ot_tensor *wt, const ot_tensor *b,
                   const ct_case *c, prt_dims *yd, double *y)
{
    int32_t ns = x->dims.nb_dims - 2;
    int64_t N = x->dims.d[0], C = x->dims.d[1], G = c->group, Cg = C / G;
    int64_t Mg = wt->dims.d[1], M = Mg * G, O[3], pb[3], D[3], K[3];
    int64_t ivol = 1, ovol = 1, kvol = 1;
    for (int32_t i = 0; i < ns; i++) {
        int64_t s = c->w.s[i], full, total;
        D[i] = x->dims.d[2 + i];
        K[i] = wt->dims.d[2 + i];
        full = s * (D[i] - 1) + c->opad[i] + c->w.d[i] * (K[i] - 1) + 1;
        if (c->with_oshape || c->w.ap >= AP_SAME_UPPER) {
            O[i] = c->with_oshape ? c->oshape[i] : D[i] * s;
            total = full - O[i];
            pb[i] = c->w.ap == AP_SAME_UPPER ? total / 2 : total - total / 2;
        } else {
            pb[i] = c->w.ap == AP_VALID ? 0 : c->w.pads[i];
            O[i] = full - pb[i] - (c->w.ap == AP_VALID ? 0 : c->w.pads[ns + i]);
        }
        ivol *= D[i];
        ovol *= O[i];
        kvol *= K[i];
    }
    *yd = x->dims;
    yd->d[1] = M;
    for (int32_t i = 0; i < ns; i++)
        yd->d[2 + i] = O[i];
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t q = 0; q < ovol; q++)
                y[(n * M + m) * ovol + q] = b ? ot_get(b, m) : 0.0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t ci = 0; ci < C; ci++)
            for (int64_t ip = 0; ip < ivol; ip++)
                for (int64_t m = 0; m < Mg; m++)
                    for (int64_t kp = 0; kp < kvol; kp++) {
                        int64_t ri = ip, rk = kp, op = 0, mul = 1, g = ci / Cg;
                        int inside = 1;
                        for (int32_t i = ns - 1; i >= 0; i--) {
                            int64_t ii = ri % D[i], kk = rk % K[i], o;
                            ri /= D[i];
                            rk /= K[i];
                            o = ii * c->w.s[i] - pb[i] + kk * c->w.d[i];
                            inside &= o >= 0 && o < O[i];
                            op += o * mul;
                            mul *= O[i];
                        }
                        if (inside)
                            y[(n * M + g * Mg + m) * ovol + op] +=
                                ot_get(x, (n * C + ci) * ivol + ip) *
                                ot_get(wt, (ci * Mg + m) * kvol + kp);
                    }
}

static int test_conv_transpose(void)
{
    tu_rng rng;
    tu_rng_seed(&rng, 211);
    for (int cs = 0; cs < 160; cs++) {
        ct_case c;
        int32_t ns = (int32_t)tu_rng_range(&rng, 1, 3),
                dt = cs % 5 == 4 ? PRT_FLOAT16 : PRT_FLOAT32;
        int64_t N = tu_rng_range(&rng, 1, 2), Mg = tu_rng_range(&rng, 1, 3), C,
                sp[3] = {1, 1, 1};
        int with_bias = (int)tu_rng_range(&rng, 0, 1);
        prt_field f[9];
        int32_t nf;
        prt_dims xd, wd, yd;
        ot_tensor in[3], y;
        double *want;
        char what[160];
        memset(&c, 0, sizeof c);
        c.group = (int32_t)tu_rng_range(&rng, 1, 2);
        C = c.group * tu_rng_range(&rng, 1, 2);
        if (cs % 7 == 3) { /* depthwise */
            C = c.group = 3;
            Mg = 1;
        }
        for (int32_t i = 0; i < ns; i++)
            sp[i] = tu_rng_range(&rng, 1, ns == 3 ? 3 : 5);
        rand_window(&rng, ns, sp, 0, &c.w);
        for (int32_t i = 0; i < ns; i++) {
            int64_t ek = (int64_t)c.w.d[i] * (c.w.k[i] - 1) + 1, full;
            c.opad[i] = cs % 3 ? (int32_t)tu_rng_range(&rng, 0, c.w.s[i] - 1) : 0;
            /* SAME's total padding (output_padding + ek - stride) >= 0 */
            if (c.w.ap >= AP_SAME_UPPER && c.opad[i] + ek < c.w.s[i])
                c.w.s[i] = (int32_t)(c.opad[i] + ek);
            full = (int64_t)c.w.s[i] * (sp[i] - 1) + c.opad[i] + ek;
            c.oshape[i] =
                (int32_t)(full - tu_rng_range(&rng, 0, full > 2 ? 2 : full - 1));
            if (c.w.ap == AP_NOTSET && c.w.pads[i] + c.w.pads[ns + i] >= full)
                c.w.pads[i] = c.w.pads[ns + i] = 0;
        }
        c.with_oshape = cs % 4 == 1;
        xd = D3(N, C, sp[0]);
        wd = D3(C, Mg, c.w.k[0]);
        for (int32_t i = 1; i < ns; i++) {
            xd.d[xd.nb_dims++] = sp[i];
            wd.d[wd.nb_dims++] = c.w.k[i];
        }
        in[0] = ot_random(dt, xd, &rng, 0);
        in[1] = ot_random(dt, wd, &rng, 0);
        in[2] = ot_random(dt, D1(Mg * c.group), &rng, 0);
        nf = win_fields(&c.w, cs % 2, 0, f);
        f[nf++] = ot_fld_i32("group", &c.group, 1);
        if (cs % 3)
            f[nf++] = ot_fld_i32("output_padding", c.opad, ns);
        if (c.with_oshape)
            f[nf++] = ot_fld_i32("output_shape", c.oshape, ns);
        want = malloc(sizeof(double) * 20000);
        ref_ct(&in[0], &in[1], with_bias ? &in[2] : NULL, &c, &yd, want);
        snprintf(
            what, sizeof what,
            "ConvTranspose case %d (%s, rank %d, %s, group %d, k %d s %d d %d, out %lld)",
            cs, prt_dtype_name(dt), (int)ns, ap_names[c.w.ap], (int)c.group,
            (int)c.w.k[0], (int)c.w.s[0], (int)c.w.d[0], (long long)yd.d[2]);
        CHECK_OK(ot_run_op("ConvTranspose", f, nf, in, with_bias ? 3 : 2, &y));
        if (y.data)
            ot_check_close(what, &y, &yd, want, tol_for(dt, 1e-5));
        for (int k = 0; k < 3; k++)
            ot_free(&in[k]);
        ot_free(&y);
        free(want);
    }
    /* Dynamic dims, and an empty batch. */
    {
        const int32_t s[2] = {2, 1}, pads[4] = {1, 0, 0, 1};
        const uint32_t dyn[2] = {0xdu, 0};
        prt_field f[2] = {ot_fld_i32("strides", s, 2), ot_fld_i32("pads", pads, 4)};
        ct_case c;
        ot_tensor in[2], y;
        double want[2 * 4 * 7 * 5];
        prt_dims yd;
        memset(&c, 0, sizeof c);
        c.w = (win_case){2, AP_NOTSET, 0, {2, 3}, {2, 1}, {1, 1}, {1, 0, 0, 1}};
        c.group = 1;
        in[0] = ot_random(PRT_FLOAT32, D4(2, 3, 4, 3), &rng, 0);
        in[1] = ot_random(PRT_FLOAT32, D4(3, 4, 2, 3), &rng, 0);
        ref_ct(&in[0], &in[1], NULL, &c, &yd, want);
        CHECK_OK(ot_run_op_dyn("ConvTranspose", f, 2, in, 2, dyn, &y));
        if (y.data)
            ot_check_close("ConvTranspose dynamic", &y, &yd, want, 1e-5);
        ot_free(&y);
        ot_free(&in[0]);
        in[0] = ot_make(PRT_FLOAT32, D4(0, 3, 4, 3));
        CHECK_OK(ot_run_op("ConvTranspose", f, 2, in, 2, &y));
        CHECK(y.dims.d[0] == 0 && y.dims.d[1] == 4 && y.dims.d[2] == 7);
        ot_free(&y);
        ot_free(&in[0]);
        ot_free(&in[1]);
    }
    /* Errors. */
    {
        const int32_t op2[2] = {-1, 0}, os3[3] = {4, 4, 4}, g2 = 2;
        prt_field f[1];
        prt_plugin *p = NULL;
        ot_tensor in[3], y;
        f[0] = ot_fld_i32("output_padding", op2, 2);
        CHECK_ERR(ot_make_op("ConvTranspose", f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "output_padding[0] is -1; it must be >= 0");
        in[0] = ot_make(PRT_FLOAT32, D4(1, 3, 4, 4));
        in[1] = ot_make(PRT_FLOAT32, D4(2, 2, 3, 3));
        CHECK_ERR(ot_run_op("ConvTranspose", NULL, 0, in, 2, &y), PRT_ERR_SHAPE,
                  "X has 3 channels but W has 2");
        f[0] = ot_fld_i32("group", &g2, 1);
        CHECK_ERR(ot_run_op("ConvTranspose", f, 1, in, 2, &y), PRT_ERR_SHAPE,
                  "X has 3 channels, not a multiple of group 2");
        ot_free(&in[1]);
        in[1] = ot_make(PRT_FLOAT32, D4(3, 2, 3, 3));
        in[2] = ot_make(PRT_FLOAT32, D1(3));
        CHECK_ERR(ot_run_op("ConvTranspose", NULL, 0, in, 3, &y), PRT_ERR_SHAPE,
                  "B has 3 values but the output has 2 channels");
        f[0] = ot_fld_i32("output_shape", os3, 3);
        CHECK_ERR(ot_run_op("ConvTranspose", f, 1, in, 2, &y), PRT_ERR_SHAPE,
                  "output_shape 3");
        for (int k = 0; k < 3; k++)
            ot_free(&in[k]);
    }
    return 0;
}

/* ---- Softmax, LogSoftmax, LayerNormalization's statistics ------------------ */

/* (Log)softmax of x over rows: `axis` alone, or with coerce every dim from
 * axis on. */
static void ref_softmax(const ot_tensor *x, int32_t axis, int coerce, int log_sm,
                        double *y)
{
    const prt_dims *d = &x->dims;
    int64_t outer = 1, n = d->d[axis], inner = 1;
    for (int32_t i = 0; i < axis; i++)
        outer *= d->d[i];
    for (int32_t i = axis + 1; i < d->nb_dims; i++)
        inner *= d->d[i];
    if (coerce) {
        n *= inner;
        inner = 1;
    }
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            double mx = -INFINITY, sum = 0.0;
            int64_t base = o * n * inner + j;
            for (int64_t k = 0; k < n; k++)
                mx = fmax(mx, ot_get(x, base + k * inner));
            for (int64_t k = 0; k < n; k++)
                sum += exp(ot_get(x, base + k * inner) - mx);
            for (int64_t k = 0; k < n; k++) {
                double v = ot_get(x, base + k * inner) - mx;
                y[base + k * inner] = log_sm ? v - log(sum) : exp(v) / sum;
            }
        }
}

static int test_softmax(void)
{
    static const prt_dims shapes[] = {
        {1, {7}}, {2, {3, 5}}, {3, {2, 3, 4}}, {4, {2, 1, 3, 4}}};
    tu_rng rng;
    tu_rng_seed(&rng, 307);
    for (int s = 0; s < 4; s++)
        for (int32_t coerce = 0; coerce < 2; coerce++)
            for (int log_sm = 0; log_sm < 2; log_sm++)
                for (int32_t a = -shapes[s].nb_dims; a < shapes[s].nb_dims; a++) {
                    int32_t dt = (a + 4) % 3 == 0 ? PRT_FLOAT16 : PRT_FLOAT32;
                    const char *name = log_sm ? "LogSoftmax" : "Softmax";
                    prt_field f[2] = {ot_fld_i32("axis", &a, 1),
                                      ot_fld_i32("coerce_2d", &coerce, 1)};
                    ot_tensor x = ot_random(dt, shapes[s], &rng, 0), y;
                    double want[64];
                    char what[96];
                    for (int64_t i = 0; i < tu_volume(&x.dims); i++)
                        ot_set(&x, i, ot_get(&x, i) * 8.0);
                    ref_softmax(&x, a < 0 ? a + shapes[s].nb_dims : a, coerce, log_sm,
                                want);
                    snprintf(what, sizeof what, "%s rank %d axis %d coerce %d %s", name,
                             (int)shapes[s].nb_dims, (int)a, (int)coerce,
                             prt_dtype_name(dt));
                    CHECK_OK(ot_run_op(name, f, 2, &x, 1, &y));
                    if (y.data)
                        ot_check_close(what, &y, &x.dims, want,
                                       dt == PRT_FLOAT16 ? (log_sm ? 1e-2 : 2e-3) : 1e-5);
                    ot_free(&x);
                    ot_free(&y);
                }
    /* LogSoftmax of large values subtracts the maximum; -inf stays -inf. */
    {
        ot_tensor x = ot_make(PRT_FLOAT32, D1(3)), y;
        ot_set(&x, 0, 1000.0);
        ot_set(&x, 1, 1001.0);
        ot_set(&x, 2, -INFINITY);
        CHECK_OK(ot_run_op("LogSoftmax", NULL, 0, &x, 1, &y));
        if (y.data)
            CHECK(fabs(ot_get(&y, 1) + log1p(exp(-1.0))) < 1e-6 && isinf(ot_get(&y, 2)) &&
                  ot_get(&y, 2) < 0);
        ot_free(&x);
        ot_free(&y);
    }
    {
        const int32_t two = 2;
        prt_field f = ot_fld_i32("coerce_2d", &two, 1);
        prt_plugin *p = NULL;
        CHECK_ERR(ot_make_op("LogSoftmax", &f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "coerce_2d is 2; it must be 0 or 1");
    }
    return 0;
}

static int test_layer_norm_stats(void)
{
    static const int32_t stashes[3] = {1, 10, 16};
    tu_rng rng;
    tu_rng_seed(&rng, 401);
    for (int32_t nb = 1; nb <= 3; nb++)
        for (int st = 0; st < 3; st++)
            for (int32_t axis = -3; axis < 3; axis++) {
                int32_t dt = st == 1 ? PRT_FLOAT16 : PRT_FLOAT32,
                        a = axis < 0 ? axis + 3 : axis;
                prt_field f[3] = {ot_fld_i32("axis", &axis, 1),
                                  ot_fld_i32("stash_type", &stashes[st], 1),
                                  ot_fld_i32("nb_outputs", &nb, 1)};
                prt_dims xd = D3(2, 3, 4), sd = xd;
                ot_tensor in[2], y[3];
                double want[24], mean[24], inv[24];
                int64_t norm = 1, rows;
                char what[96];
                for (int32_t i = a; i < 3; i++)
                    norm *= xd.d[i];
                rows = 24 / norm;
                sd.nb_dims = 3 - a;
                for (int32_t i = 0; i < sd.nb_dims; i++)
                    sd.d[i] = xd.d[a + i];
                in[0] = ot_random(dt, xd, &rng, 0);
                in[1] = ot_random(dt, sd, &rng, 0);
                for (int64_t r = 0; r < rows; r++) {
                    double m = 0.0, v = 0.0;
                    for (int64_t k = 0; k < norm; k++)
                        m += ot_get(&in[0], r * norm + k) / (double)norm;
                    for (int64_t k = 0; k < norm; k++)
                        v += pow(ot_get(&in[0], r * norm + k) - m, 2) / (double)norm;
                    mean[r] = m;
                    inv[r] = 1.0 / sqrt(v + 1e-5);
                    for (int64_t k = 0; k < norm; k++)
                        want[r * norm + k] = (ot_get(&in[0], r * norm + k) - m) * inv[r] *
                                             ot_get(&in[1], k);
                }
                snprintf(what, sizeof what,
                         "LayerNormalization axis %d stash %d (%d out)", (int)axis,
                         (int)stashes[st], (int)nb);
                CHECK_OK(nn_run("LayerNormalization", f, 3, in, 2, NULL, -1, nb, y));
                if (y[0].data) {
                    prt_dims md = xd;
                    double tol = st == 0 ? 1e-5 : st == 1 ? 2e-3 : 1.6e-2;
                    for (int32_t i = a; i < 3; i++)
                        md.d[i] = 1;
                    ot_check_close(what, &y[0], &xd, want, st == 0 ? 1e-5 : tol * 4);
                    for (int32_t k = 1; k < nb; k++) {
                        CHECK(y[k].dtype == (st == 0   ? PRT_FLOAT32
                                             : st == 1 ? PRT_FLOAT16
                                                       : PRT_BFLOAT16));
                        ot_check_close(what, &y[k], &md, k == 1 ? mean : inv, tol);
                    }
                }
                for (int32_t k = 0; k < nb; k++)
                    ot_free(&y[k]);
                ot_free(&in[0]);
                ot_free(&in[1]);
            }
    /* An empty normalized dim: the statistics of nothing are NaN. */
    {
        const int32_t three = 3, axis = 1;
        prt_field f[2] = {ot_fld_i32("nb_outputs", &three, 1),
                          ot_fld_i32("axis", &axis, 1)};
        ot_tensor in[2] = {ot_make(PRT_FLOAT32, D2(2, 0)), ot_make(PRT_FLOAT32, D1(0))},
                  y[3];
        CHECK_OK(nn_run("LayerNormalization", f, 2, in, 2, NULL, -1, 3, y));
        if (y[0].data) {
            CHECK(y[1].dims.nb_dims == 2 && y[1].dims.d[0] == 2 && y[1].dims.d[1] == 1);
            CHECK(isnan(ot_get(&y[1], 1)) && isnan(ot_get(&y[2], 0)));
        }
        for (int k = 0; k < 3; k++)
            ot_free(&y[k]);
        ot_free(&in[0]);
        ot_free(&in[1]);
    }
    {
        const int32_t bad = 11, four = 4;
        prt_field f = ot_fld_i32("stash_type", &bad, 1);
        prt_plugin *p = NULL;
        CHECK_ERR(
            ot_make_op("LayerNormalization", &f, 1, &p), PRT_ERR_UNSUPPORTED,
            "stash_type 11 is not supported (1: float32, 10: float16, 16: bfloat16)");
        f = ot_fld_i32("nb_outputs", &four, 1);
        CHECK_ERR(ot_make_op("LayerNormalization", &f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "nb_outputs is 4");
    }
    return 0;
}

/* ---- BatchNormalization, Instance-, Group- and LpNormalization ---------------- */

static int test_norms(void)
{
    tu_rng rng;
    tu_rng_seed(&rng, 503);
    /* BatchNormalization: ranks 1-4, spatial 1 and 0, mixed dtypes. */
    for (int cs = 0; cs < 24; cs++) {
        int32_t r = (int32_t)(cs % 4 + 1), spatial = cs % 3 != 2 || r == 1 ? 1 : 0;
        int32_t dx = cs % 5 == 1 ? PRT_FLOAT16 : PRT_FLOAT32;
        int32_t dp = cs % 6 == 2 ? PRT_FLOAT16 : PRT_FLOAT32,
                dm = cs % 4 == 3 ? PRT_FLOAT16 : dp;
        const float eps = 1e-3f;
        prt_dims xd = D1(tu_rng_range(&rng, 1, 3)), pd;
        prt_field f[2] = {ot_fld_f32("epsilon", &eps),
                          ot_fld_i32("spatial", &spatial, 1)};
        ot_tensor in[5], y;
        double want[512];
        int64_t C, sp = 1, per;
        char what[96];
        for (int32_t i = 1; i < r; i++)
            xd.d[xd.nb_dims++] = tu_rng_range(&rng, 1, 4);
        C = r >= 2 ? xd.d[1] : 1;
        for (int32_t i = 2; i < r; i++)
            sp *= xd.d[i];
        pd = D1(C);
        if (!spatial) {
            pd.nb_dims = r - 1;
            for (int32_t i = 1; i < r; i++)
                pd.d[i - 1] = xd.d[i];
        }
        per = spatial ? 1 : sp;
        in[0] = ot_random(dx, xd, &rng, 0);
        for (int k = 1; k < 5; k++) {
            in[k] = ot_random(k < 3 ? dp : dm, pd, &rng, 0);
            if (k == 4)
                for (int64_t i = 0; i < tu_volume(&pd); i++)
                    ot_set(&in[4], i, fabs(ot_get(&in[4], i)));
        }
        for (int64_t i = 0; i < tu_volume(&xd); i++) {
            int64_t c = (i / sp) % C, q = i % sp, pi = per == 1 ? c : c * sp + q;
            want[i] = (ot_get(&in[0], i) - ot_get(&in[3], pi)) /
                          sqrt(ot_get(&in[4], pi) + (double)eps) * ot_get(&in[1], pi) +
                      ot_get(&in[2], pi);
        }
        snprintf(what, sizeof what, "BatchNormalization case %d (rank %d, spatial %d)",
                 cs, (int)r, (int)spatial);
        CHECK_OK(ot_run_op("BatchNormalization", f, 2, in, 5, &y));
        if (y.data)
            ot_check_close(what, &y, &xd, want, tol_for(dx, 1e-5) * 2);
        for (int k = 0; k < 5; k++)
            ot_free(&in[k]);
        ot_free(&y);
    }
    /* InstanceNormalization and GroupNormalization (scales per group or per
     * channel); GroupNormalization with num_groups = C is instance norm. */
    for (int cs = 0; cs < 30; cs++) {
        int group = cs % 2;
        int32_t G = (int32_t)tu_rng_range(&rng, 1, 3),
                dt = cs % 7 == 3 ? PRT_FLOAT16 : PRT_FLOAT32;
        int64_t N = tu_rng_range(&rng, 1, 2),
                C = group ? G * tu_rng_range(&rng, 1, 2) : tu_rng_range(&rng, 1, 3);
        int64_t sp = 1, P = group && cs % 4 == 1 ? G : C, cg;
        const float eps = 1e-2f;
        prt_dims xd = D2(N, C);
        prt_field f[2] = {ot_fld_f32("epsilon", &eps), ot_fld_i32("num_groups", &G, 1)};
        ot_tensor in[3], y;
        double want[1024];
        char what[96];
        int32_t ns = (int32_t)tu_rng_range(&rng, group ? 0 : 1, 3);
        for (int32_t i = 0; i < ns; i++) {
            xd.d[xd.nb_dims++] = tu_rng_range(&rng, 1, 4);
            sp *= xd.d[2 + i];
        }
        if (!group)
            G = (int32_t)C;
        cg = C / G;
        in[0] = ot_random(dt, xd, &rng, 0);
        in[1] = ot_random(dt, D1(P), &rng, 0);
        in[2] = ot_random(dt, D1(P), &rng, 0);
        for (int64_t n = 0; n < N; n++)
            for (int64_t g = 0; g < G; g++) {
                int64_t base = (n * C + g * cg) * sp, cnt = cg * sp;
                double m = 0.0, v = 0.0;
                for (int64_t k = 0; k < cnt; k++)
                    m += ot_get(&in[0], base + k) / (double)cnt;
                for (int64_t k = 0; k < cnt; k++)
                    v += pow(ot_get(&in[0], base + k) - m, 2) / (double)cnt;
                for (int64_t k = 0; k < cnt; k++) {
                    int64_t c = g * cg + k / sp, pi = P == C ? c : g;
                    want[base + k] = (ot_get(&in[0], base + k) - m) /
                                         sqrt(v + (double)eps) * ot_get(&in[1], pi) +
                                     ot_get(&in[2], pi);
                }
            }
        snprintf(what, sizeof what, "%s case %d (C %lld, groups %d, params %lld)",
                 group ? "GroupNormalization" : "InstanceNormalization", cs, (long long)C,
                 (int)G, (long long)P);
        CHECK_OK(ot_run_op(group ? "GroupNormalization" : "InstanceNormalization", f,
                           group ? 2 : 1, in, 3, &y));
        if (y.data)
            ot_check_close(what, &y, &xd, want, tol_for(dt, 1e-5) * 2);
        for (int k = 0; k < 3; k++)
            ot_free(&in[k]);
        ot_free(&y);
    }
    /* LpNormalization, p 1 and 2, every axis, a zero row. */
    for (int32_t p = 1; p <= 2; p++)
        for (int32_t axis = -3; axis < 3; axis++) {
            prt_field f[2] = {ot_fld_i32("axis", &axis, 1), ot_fld_i32("p", &p, 1)};
            ot_tensor x = ot_random(PRT_FLOAT32, D3(2, 3, 4), &rng, 0), y;
            double want[24];
            int64_t st[3], a = axis < 0 ? axis + 3 : axis;
            strides_of(&x.dims, st);
            for (int64_t k = 0; k < x.dims.d[a]; k++)
                ot_set(&x, k * st[a], 0.0); /* the row through element 0 */
            for (int64_t i = 0; i < 24; i++) {
                int64_t start = i - ((i / st[a]) % x.dims.d[a]) * st[a];
                double nrm = 0.0;
                for (int64_t k = 0; k < x.dims.d[a]; k++) {
                    double v = ot_get(&x, start + k * st[a]);
                    nrm += p == 1 ? fabs(v) : v * v;
                }
                nrm = p == 1 ? nrm : sqrt(nrm);
                want[i] = nrm == 0.0 ? 0.0 : ot_get(&x, i) / nrm;
            }
            CHECK_OK(ot_run_op("LpNormalization", f, 2, &x, 1, &y));
            if (y.data)
                ot_check_close("LpNormalization", &y, &x.dims, want, 1e-5);
            ot_free(&x);
            ot_free(&y);
        }
    /* Errors. */
    {
        const int32_t one = 1, three = 3, zero = 0;
        prt_field f;
        prt_plugin *p = NULL;
        ot_tensor in[5], y;
        f = ot_fld_i32("training_mode", &one, 1);
        CHECK_ERR(ot_make_op("BatchNormalization", &f, 1, &p), PRT_ERR_UNSUPPORTED,
                  "training_mode 1 is not supported (inference only: 0)");
        f = ot_fld_i32("p", &three, 1);
        CHECK_ERR(ot_make_op("LpNormalization", &f, 1, &p), PRT_ERR_UNSUPPORTED,
                  "p 3 is not supported (1 to 2)");
        CHECK_ERR(ot_make_op("GroupNormalization", NULL, 0, &p), PRT_ERR_INVALID_ARGUMENT,
                  "num_groups is required");
        f = ot_fld_i32("num_groups", &zero, 1);
        CHECK_ERR(ot_make_op("GroupNormalization", &f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "num_groups must be >= 1");
        {
            prt_field g[2] = {ot_fld_i32("num_groups", &one, 1),
                              ot_fld_i32("stash_type", &three, 1)};
            CHECK_ERR(ot_make_op("GroupNormalization", g, 2, &p), PRT_ERR_UNSUPPORTED,
                      "stash_type 3 is not supported");
        }
        in[0] = ot_make(PRT_FLOAT32, D4(2, 3, 2, 2));
        for (int k = 1; k < 5; k++)
            in[k] = ot_make(PRT_FLOAT32, D1(k == 3 ? 4 : 3));
        CHECK_ERR(ot_run_op("BatchNormalization", NULL, 0, in, 5, &y), PRT_ERR_SHAPE,
                  "mean [4] does not fit X [2, 3, 2, 2] (it must be [C])");
        f = ot_fld_i32("num_groups", &three, 1);
        ot_free(&in[1]);
        in[1] = ot_make(PRT_FLOAT32, D1(2));
        CHECK_ERR(
            ot_run_op("GroupNormalization", &f, 1, in, 3, &y), PRT_ERR_SHAPE,
            "scale [2] does not fit X [2, 3, 2, 2] (it must be [num_groups] or [C])");
        f = ot_fld_i32("num_groups", &one, 1);
        ot_free(&in[0]);
        in[0] = ot_make(PRT_FLOAT32, D2(2, 3));
        CHECK_ERR(ot_run_op("InstanceNormalization", &f, 0, in, 3, &y), PRT_ERR_SHAPE,
                  "X must have rank 3 or more");
        for (int k = 0; k < 5; k++)
            ot_free(&in[k]);
    }
    return 0;
}

/* ---- Resize ----------------------------------------------------------------- */

typedef struct rs_case {
    const char *mode, *ctm, *nearest, *keep;
    float a, extrap;
    int32_t exclude, antialias;
    int32_t nb_axes, axes[4];
    int32_t nb_scales;
    float scales[4];
    int32_t nb_sizes;
    int64_t sizes[4];
    int32_t nb_roi;
    float roi[8];
} rs_case;

/* Keys' cubic kernel, as the reference writes it. */
static double ref_cubic(double x, double A)
{
    x = fabs(x);
    if (x <= 1)
        return (A + 2) * x * x * x - (A + 3) * x * x + 1;
    if (x < 2)
        return A * x * x * x - 5 * A * x * x + 8 * A * x - 4 * A;
    return 0.0;
}

/* The coefficients get_coeffs gives for `ratio` (onnx.reference's
 * _nearest/_linear/_cubic_coeffs and their antialias forms); returns their
 * count. */
static int ref_coeffs(const rs_case *c, double ratio, double scale, double *co)
{
    int n = 0;
    double s = scale < 1.0 ? scale : 1.0, A = c->a, sum = 0.0;
    if (strcmp(c->mode, "nearest") == 0) {
        int integer = ratio == 1.0, hi;
        if (integer)
            hi = 1;
        else if (strcmp(c->nearest, "round_prefer_floor") == 0)
            hi = ratio > 0.5;
        else if (strcmp(c->nearest, "round_prefer_ceil") == 0)
            hi = ratio >= 0.5;
        else
            hi = strcmp(c->nearest, "ceil") == 0;
        co[0] = !hi;
        co[1] = hi;
        return 2;
    }
    if (strcmp(c->mode, "linear") == 0 && !c->antialias) {
        co[0] = 1 - ratio;
        co[1] = ratio;
        return 2;
    }
    if (strcmp(c->mode, "linear") == 0) {
        int start = (int)floor(-1 / s) + 1, fp = 2 - 2 * start;
        for (int i = 0; i < fp; i++) {
            co[n] = fmax(0.0, fmin(1.0, 1 - fabs((start + i - ratio) * s)));
            sum += co[n++];
        }
    } else if (!c->antialias) {
        co[0] = ((A * (ratio + 1) - 5 * A) * (ratio + 1) + 8 * A) * (ratio + 1) - 4 * A;
        co[1] = ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1;
        co[2] = ((A + 2) * (1 - ratio) - (A + 3)) * (1 - ratio) * (1 - ratio) + 1;
        co[3] = ((A * ((1 - ratio) + 1) - 5 * A) * ((1 - ratio) + 1) + 8 * A) *
                    ((1 - ratio) + 1) -
                4 * A;
        return 4;
    } else {
        int i0 = (int)floor(-2 / s) + 1, i1 = 2 - i0;
        for (int i = i0; i < i1; i++) {
            co[n] = ref_cubic(s * (i - ratio), A);
            sum += co[n++];
        }
    }
    for (int i = 0; i < n; i++)
        co[i] /= sum;
    return n;
}

/* _interpolate_1d_with_x over data[0..n). */
static double ref_rs_1d(const rs_case *c, const double *data, int64_t n, double scale,
                        int64_t out_int, int64_t x, double rb, double re)
{
    double W = scale * (double)n, xo, ratio, co[64], padded[160], sum = 0.0, v = 0.0;
    int64_t pad, len, idx[64];
    int nc;
    const char *m = c->ctm;
    if (strcmp(m, "align_corners") == 0)
        xo = W == 1 ? 0.0 : (double)x * (double)(n - 1) / (W - 1);
    else if (strcmp(m, "asymmetric") == 0)
        xo = (double)x / scale;
    else if (strcmp(m, "tf_crop_and_resize") == 0) {
        xo = W == 1 ? (re - rb) * (double)(n - 1) / 2
                    : (double)x * (re - rb) * (double)(n - 1) / (W - 1);
        xo += rb * (double)(n - 1);
        if (xo < 0 || xo > (double)(n - 1))
            return c->extrap;
    } else if (strcmp(m, "pytorch_half_pixel") == 0)
        xo = W == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    else if (strcmp(m, "half_pixel_symmetric") == 0)
        xo = (double)n / 2 * (1 - (double)out_int / W) + (x + 0.5) / scale - 0.5;
    else if (strcmp(m, "tf_half_pixel_for_nn") == 0)
        xo = (x + 0.5) / scale;
    else
        xo = (x + 0.5) / scale - 0.5;
    ratio = xo == floor(xo) ? 1.0 : xo - floor(xo);
    nc = ref_coeffs(c, ratio, scale, co);
    /* _get_neighbor: the nc nearest indices of an edge-padded copy. */
    pad = (nc + 1) / 2;
    len = n + 2 * pad;
    for (int64_t i = 0; i < len; i++) {
        int64_t k = i - pad < 0 ? 0 : i - pad >= n ? n - 1 : i - pad;
        padded[i] = data[k];
    }
    for (int k = 0; k < nc; k++) {
        int64_t best = -1;
        for (int64_t i = 0; i < len; i++) {
            int taken = 0;
            for (int j = 0; j < k; j++)
                taken |= idx[j] == i;
            if (!taken && (best < 0 || fabs(xo + pad - i) < fabs(xo + pad - best)))
                best = i;
        }
        idx[k] = best;
    }
    for (int k = 1; k < nc; k++) /* ascending */
        for (int j = k; j > 0 && idx[j - 1] > idx[j]; j--) {
            int64_t t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    if (c->exclude) {
        for (int k = 0; k < nc; k++) {
            if (idx[k] - pad < 0 || idx[k] - pad >= n)
                co[k] = 0;
            sum += co[k];
        }
        for (int k = 0; k < nc; k++)
            co[k] /= sum;
    }
    for (int k = 0; k < nc; k++)
        v += co[k] * padded[idx[k]];
    return v;
}

/* _interpolate_nd_with_x: the outer axis over the inner results. */
static double ref_rs_nd(const rs_case *c, const ot_tensor *x, int64_t off, int32_t a,
                        const int64_t *st, const double *sc, const int64_t *outs,
                        const int64_t *xo, const double *rb, const double *re)
{
    int64_t n = x->dims.d[a];
    double vals[16];
    /* ref_resize's arrays hold 4 axes; saying so keeps GCC's -O3 array
     * bounds check from following the recursion past them. */
    if (a >= 4)
        return 0.0;
    for (int64_t i = 0; i < n; i++)
        vals[i] = a + 1 == x->dims.nb_dims
                      ? ot_get(x, off + i)
                      : ref_rs_nd(c, x, off + i * st[a], a + 1, st, sc, outs, xo, rb, re);
    return ref_rs_1d(c, vals, n, sc[a], outs[a], xo[a], rb[a], re[a]);
}

/* The reference's scales, sizes and roi for every axis, then each output,
 * into memory the caller frees. */
static double *ref_resize(const rs_case *c, const ot_tensor *x, prt_dims *yd)
{
    double *y;
    int32_t r = x->dims.nb_dims, of[4];
    double sc[4], rb[4], re[4];
    int64_t outs[4], st[4], xo[4];
    for (int32_t i = 0; i < r; i++) {
        of[i] = c->nb_axes ? -1 : i;
        rb[i] = 0.0;
        re[i] = 1.0;
    }
    for (int32_t j = 0; j < c->nb_axes; j++)
        of[c->axes[j] < 0 ? c->axes[j] + r : c->axes[j]] = j;
    for (int32_t i = 0; i < r; i++) {
        int64_t D = x->dims.d[i];
        if (of[i] >= 0 && c->nb_roi > 0) {
            rb[i] = c->roi[of[i]];
            re[i] = c->roi[c->nb_roi / 2 + of[i]];
        }
        if (c->nb_scales) {
            sc[i] = of[i] >= 0 ? (double)c->scales[of[i]] : 1.0;
            outs[i] = (int64_t)(sc[i] * (double)D);
        } else {
            outs[i] = of[i] >= 0 ? c->sizes[of[i]] : D;
            sc[i] = (double)outs[i] / (double)D;
        }
    }
    if (!c->nb_scales && strcmp(c->keep, "stretch") != 0) {
        double s = strcmp(c->keep, "not_larger") == 0 ? INFINITY : 0.0;
        for (int32_t i = 0; i < r; i++)
            if (of[i] >= 0)
                s = strcmp(c->keep, "not_larger") == 0 ? fmin(s, sc[i]) : fmax(s, sc[i]);
        for (int32_t i = 0; i < r; i++)
            if (of[i] >= 0) {
                sc[i] = s;
                outs[i] = (int64_t)(s * (double)x->dims.d[i] + 0.5);
            }
    }
    yd->nb_dims = r;
    for (int32_t i = 0; i < r; i++)
        yd->d[i] = outs[i];
    strides_of(&x->dims, st);
    y = malloc(sizeof(double) * (size_t)(tu_volume(yd) + 1));
    for (int64_t q = 0; y && q < tu_volume(yd); q++) {
        ot_unravel(yd, q, xo);
        y[q] = ref_rs_nd(c, x, 0, 0, st, sc, outs, xo, rb, re);
    }
    return y;
}

/* c's fields; f must hold 12. */
static int32_t rs_fields(const rs_case *c, prt_field *f)
{
    int32_t n = 0;
    f[n++] = ot_fld_str("mode", c->mode);
    f[n++] = ot_fld_str("coordinate_transformation_mode", c->ctm);
    f[n++] = ot_fld_str("nearest_mode", c->nearest);
    f[n++] = ot_fld_str("keep_aspect_ratio_policy", c->keep);
    f[n++] = ot_fld_f32("cubic_coeff_a", &c->a);
    f[n++] = ot_fld_f32("extrapolation_value", &c->extrap);
    f[n++] = ot_fld_i32("exclude_outside", &c->exclude, 1);
    f[n++] = ot_fld_i32("antialias", &c->antialias, 1);
    if (c->nb_axes)
        f[n++] = ot_fld_i32("axes", c->axes, c->nb_axes);
    if (c->nb_scales) {
        f[n] = ot_fld_f32("scales", c->scales);
        f[n++].length = c->nb_scales;
    }
    if (c->nb_roi) {
        f[n] = ot_fld_f32("roi", c->roi);
        f[n++].length = c->nb_roi;
    }
    return n;
}

static int test_resize(void)
{
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    static const char *const ctms[] = {
        "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",  "align_corners",
        "asymmetric", "tf_crop_and_resize",   "tf_half_pixel_for_nn"};
    static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil",
                                           "floor", "ceil"};
    static const char *const keeps[] = {"stretch", "not_larger", "not_smaller"};
    static const float scale_set[] = {0.5f, 0.6f, 0.75f, 1.0f, 1.5f, 2.0f, 2.5f, 3.0f};
    tu_rng rng;
    tu_rng_seed(&rng, 601);
    for (int cs = 0; cs < 400; cs++) {
        rs_case c;
        int32_t r = (int32_t)tu_rng_range(&rng, 1, 4), nb_in = 1, dt = PRT_FLOAT32, nvals;
        prt_dims xd = D0(), yd;
        ot_tensor in[2], y;
        prt_field f[12];
        int32_t nf;
        double *want;
        char what[256];
        memset(&c, 0, sizeof c);
        c.mode = modes[cs % 3];
        c.ctm = ctms[tu_rng_range(&rng, 0, c.mode[0] == 'n' ? 6 : 5)];
        c.nearest = nearests[tu_rng_range(&rng, 0, 3)];
        c.keep = keeps[0];
        c.a = tu_rng_range(&rng, 0, 1) ? -0.5f : -0.75f;
        c.exclude = c.mode[0] != 'n' && tu_rng_range(&rng, 0, 1);
        c.antialias = c.mode[0] != 'n' && tu_rng_range(&rng, 0, 2) == 0;
        if (strcmp(c.ctm, "tf_crop_and_resize") == 0) {
            c.a = -0.75f;
            c.exclude = c.antialias = 0;
            c.extrap = 10.0f;
        }
        for (int32_t i = 0; i < r; i++)
            xd.d[xd.nb_dims++] = tu_rng_range(&rng, 1, r >= 3 && i < r - 2 ? 2 : 5);
        if (tu_rng_range(&rng, 0, 2) == 0 && r >= 2) {
            c.nb_axes = (int32_t)tu_rng_range(&rng, 1, r - 1);
            for (int32_t j = 0; j < c.nb_axes; j++)
                c.axes[j] = r - c.nb_axes + j - (tu_rng_range(&rng, 0, 1) ? r : 0);
        }
        nvals = c.nb_axes ? c.nb_axes : r;
        if (cs % 2) {
            c.nb_scales = nvals;
            for (int32_t j = 0; j < nvals; j++)
                c.scales[j] = scale_set[tu_rng_range(&rng, 0, 7)];
        } else {
            c.nb_sizes = nvals;
            if (cs % 8 == 4)
                c.keep = keeps[tu_rng_range(&rng, 1, 2)];
            for (int32_t j = 0; j < nvals; j++)
                c.sizes[j] = tu_rng_range(&rng, 1, c.keep == keeps[0] ? 8 : 4);
        }
        if (strcmp(c.ctm, "tf_crop_and_resize") == 0) {
            c.nb_roi = 2 * nvals;
            for (int32_t j = 0; j < nvals; j++) {
                c.roi[j] = (float)(tu_rng_uniform(&rng) * 0.4);
                c.roi[nvals + j] = (float)(0.6 + tu_rng_uniform(&rng) * 0.6);
            }
        }
        if (cs % 9 == 5)
            dt = PRT_FLOAT16;
        else if (cs % 9 == 6 && c.mode[0] == 'n')
            dt = PRT_INT32;
        in[0] = ot_random(dt, xd, &rng, 0);
        nf = rs_fields(&c, f);
        want = ref_resize(&c, &in[0], &yd);
        if (strcmp(c.keep, "stretch") != 0) {
            in[1] = ot_make(PRT_INT64, D1(nvals));
            for (int32_t j = 0; j < nvals; j++)
                ot_set(&in[1], j, (double)c.sizes[j]);
            nb_in = 2;
        }
        snprintf(what, sizeof what,
                 "Resize case %d (%s, %s, %s, %s, a %g, excl %d, aa %d, %d axes, %s, %s, "
                 "rank %d)",
                 cs, prt_dtype_name(dt), c.mode, c.ctm, c.nearest, (double)c.a,
                 (int)c.exclude, (int)c.antialias, (int)c.nb_axes,
                 c.nb_scales ? "scales" : "sizes", c.keep, (int)r);
        CHECK_OK(
            nn_run("Resize", f, nf, in, nb_in, c.sizes, c.nb_scales ? -1 : nvals, 1, &y));
        if (y.data)
            ot_check_close(what, &y, &yd, want, tol_for(dt, 1e-5));
        ot_free(&y);
        ot_free(&in[0]);
        if (nb_in == 2)
            ot_free(&in[1]);
        free(want);
    }
    /* Dynamic dims with scales: floor(D * scale) as an expression. */
    {
        rs_case c;
        const uint32_t dyn[1] = {0xcu};
        prt_field f[12];
        ot_tensor x = ot_random(PRT_FLOAT32, D4(1, 2, 5, 7), &rng, 0), y;
        double *want;
        prt_dims yd;
        c = (rs_case){"linear",
                      "half_pixel",
                      "round_prefer_floor",
                      "stretch",
                      -0.75f,
                      0,
                      0,
                      0,
                      0,
                      {0},
                      4,
                      {1.0f, 1.0f, 0.6f, 2.5f},
                      0,
                      {0},
                      0,
                      {0}};
        want = ref_resize(&c, &x, &yd);
        CHECK_OK(ot_run_op_dyn("Resize", f, rs_fields(&c, f), &x, 1, dyn, &y));
        if (y.data)
            ot_check_close("Resize dynamic", &y, &yd, want, 1e-5);
        free(want);
        ot_free(&x);
        ot_free(&y);
    }
    /* The planes' baseline and AVX2 builds: the same bits (no contraction
     * in resize.c), for linear's two taps (unrolled) and cubic's four, on
     * an upscale and a downscale. */
    for (int k = 0; k < 4; k++) {
        rs_case c;
        prt_field f[12];
        ot_tensor x = ot_random(PRT_FLOAT32, D4(2, 3, 9, 13), &rng, 0), yb, ya;
        c = (rs_case){k % 2 ? "cubic" : "linear",
                      k < 2 ? "half_pixel" : "align_corners",
                      "round_prefer_floor",
                      "stretch",
                      -0.75f,
                      0,
                      0,
                      0,
                      0,
                      {0},
                      4,
                      {1.0f, 1.0f, k < 2 ? 4.0f : 0.5f, k < 2 ? 3.5f : 0.7f},
                      0,
                      {0},
                      0,
                      {0}};
        cpu_force_baseline(1);
        CHECK_OK(ot_run_op("Resize", f, rs_fields(&c, f), &x, 1, &yb));
        cpu_force_baseline(0);
        CHECK_OK(ot_run_op("Resize", f, rs_fields(&c, f), &x, 1, &ya));
        CHECK(yb.data && ya.data && ot_dims_eq(&yb.dims, &ya.dims) &&
              memcmp(yb.data, ya.data, sizeof(float) * (size_t)base_volume(&ya.dims)) ==
                  0);
        ot_free(&x);
        ot_free(&yb);
        ot_free(&ya);
    }
    /* Errors. */
    {
        const float sc2[2] = {2.0f, 2.0f}, neg[1] = {-1.0f};
        const int32_t ax2[2] = {1, -1}, one = 1;
        const int64_t sizes[2] = {4, 4};
        prt_field f[10];
        prt_plugin *p = NULL;
        ot_tensor x = ot_make(PRT_FLOAT32, D2(2, 2)), xi = ot_make(PRT_INT32, D2(2, 2)),
                  y;
        f[0] = ot_fld_str("mode", "bicubic");
        CHECK_ERR(ot_make_op("Resize", f, 1, &p), PRT_ERR_UNSUPPORTED,
                  "mode 'bicubic' is not supported (nearest, linear, cubic)");
        f[0] = ot_fld_f32("scales", neg);
        CHECK_ERR(ot_make_op("Resize", f, 1, &p), PRT_ERR_INVALID_ARGUMENT,
                  "scales[0] is -1; scales must be finite and > 0");
        f[0] = ot_fld_i32("axes", ax2, 2);
        f[1] = ot_fld_f32("scales", sc2);
        f[1].length = 2;
        CHECK_ERR(ot_run_op("Resize", f, 2, &x, 1, &y), PRT_ERR_INVALID_ARGUMENT,
                  "axes names axis 1 twice");
        CHECK_ERR(ot_run_op("Resize", NULL, 0, &x, 1, &y), PRT_ERR_INVALID_ARGUMENT,
                  "neither scales nor sizes is given");
        CHECK_ERR(nn_run("Resize", &f[1], 1, &x, 1, sizes, 2, 1, &y),
                  PRT_ERR_INVALID_ARGUMENT, "both scales and sizes are given");
        f[1].length = 1;
        CHECK_ERR(ot_run_op("Resize", &f[1], 1, &x, 1, &y), PRT_ERR_SHAPE,
                  "scales has 1 values; X of rank 2 with no axes needs 2");
        f[0] = ot_fld_str("mode", "linear");
        f[1].length = 2;
        CHECK_ERR(ot_run_op("Resize", f, 2, &xi, 1, &y), PRT_ERR_UNSUPPORTED, "int32");
        /* Nine fields besides their defaults do not fit a built-in. */
        {
            const float a = -0.5f, ex = 1.0f, roi[4] = {0, 0, 1, 1};
            f[0] = ot_fld_str("mode", "cubic");
            f[1] = ot_fld_str("coordinate_transformation_mode", "tf_crop_and_resize");
            f[2] = ot_fld_f32("cubic_coeff_a", &a);
            f[3] = ot_fld_i32("exclude_outside", &one, 1);
            f[4] = ot_fld_i32("antialias", &one, 1);
            f[5] = ot_fld_f32("extrapolation_value", &ex);
            f[6] = ot_fld_f32("roi", roi);
            f[6].length = 4;
            f[7] = ot_fld_i32("axes", ax2, 2);
            f[8] = ot_fld_str("keep_aspect_ratio_policy", "not_larger");
            CHECK_ERR(ot_make_op("Resize", f, 9, &p), PRT_ERR_UNSUPPORTED,
                      "this combination needs 9 fields besides their defaults");
        }
        ot_free(&x);
        ot_free(&xi);
    }
    return 0;
}

/* ---- allocation failures ------------------------------------------------------- */

static int test_alloc_failures(void)
{
    const int32_t k[2] = {2, 2};
    const float sc[4] = {1.0f, 1.0f, 1.5f, 2.0f};
    prt_field f[2] = {ot_fld_i32("kernel_shape", k, 2), ot_fld_str("mode", "linear")};
    prt_field g[2] = {ot_fld_f32("scales", sc), ot_fld_str("mode", "linear")};
    ot_tensor x = ot_make(PRT_FLOAT32, D4(1, 2, 4, 4));
    int64_t n;
    g[0].length = 4;
    n = ot_alloc_failures("MaxPool", f, 1, &x, 1);
    CHECK(n > 0 && n < OT_MAX_ALLOCS);
    n = ot_alloc_failures("Resize", g, 2, &x, 1);
    CHECK(n > 0 && n < OT_MAX_ALLOCS);
    ot_free(&x);
    return 0;
}

/* GridSample and RoiAlign against closed forms: a grid on X's own pixel
 * centers returns X in every mode; 1-D taps past the edges under each
 * padding (reflection by hand); RoiAlign's bins over a linear ramp average
 * to the ramp at the bin centers (bilinear samples of a plane are exact). */
static void test_sample(void)
{
    static const char *const modes[] = {"linear", "nearest", "bicubic"};
    static const char *const pads[] = {"zeros", "border", "reflection"};
    tu_rng r;
    tu_rng_seed(&r, 7);
    for (int m = 0; m < 3; m++)
        for (int q = 0; q < 3; q++) {
            const int32_t one = 1;
            prt_field f[3] = {ot_fld_str("mode", modes[m]),
                              ot_fld_str("padding_mode", pads[q]),
                              ot_fld_i32("align_corners", &one, 1)};
            ot_tensor in[2], y;
            double want[24];
            in[0] = ot_random(PRT_FLOAT32, D4(1, 2, 3, 4), &r, 0);
            in[1] = ot_make(PRT_FLOAT32, D4(1, 3, 4, 2));
            for (int64_t h = 0; h < 3; h++)
                for (int64_t w = 0; w < 4; w++) {
                    ot_set(&in[1], (h * 4 + w) * 2, -1.0 + 2.0 * (double)w / 3.0);
                    ot_set(&in[1], (h * 4 + w) * 2 + 1, -1.0 + (double)h);
                }
            for (int64_t i = 0; i < 24; i++)
                want[i] = ot_get(&in[0], i);
            CHECK_OK(ot_run_op("GridSample", f, 3, in, 2, &y));
            if (y.data)
                ot_check_close(modes[m], &y, &in[0].dims, want, 1e-5);
            ot_free(&in[0]);
            ot_free(&in[1]);
            ot_free(&y);
        }
    for (int q = 0; q < 3; q++) { /* X = 1 2 3; c = -2 and 4 (align_corners 0) */
        prt_field f = ot_fld_str("padding_mode", pads[q]);
        const double want[3][2] = {{0.0, 0.0}, {1.0, 3.0}, {2.0, 2.0}};
        ot_tensor in[2], y;
        in[0] = ot_make(PRT_FLOAT32, D3(1, 1, 3));
        in[1] = ot_make(PRT_FLOAT32, D3(1, 2, 1));
        for (int64_t i = 0; i < 3; i++)
            ot_set(&in[0], i, (double)(i + 1));
        ot_set(&in[1], 0, -2.0);
        ot_set(&in[1], 1, 2.0);
        CHECK_OK(ot_run_op("GridSample", &f, 1, in, 2, &y));
        if (y.data) {
            const prt_dims yd = D3(1, 1, 2);
            ot_check_close(pads[q], &y, &yd, want[q], 1e-6);
        }
        ot_free(&in[0]);
        ot_free(&in[1]);
        ot_free(&y);
    }
    for (int legacy = 0; legacy < 2; legacy++) {
        const int32_t two = 2;
        const double c0 = legacy ? 2.0 : 1.5; /* the first bin's center */
        prt_field f[4] = {ot_fld_i32("output_height", &two, 1),
                          ot_fld_i32("output_width", &two, 1),
                          ot_fld_i32("sampling_ratio", &two, 1),
                          ot_fld_str("coordinate_transformation_mode",
                                     legacy ? "output_half_pixel" : "half_pixel")};
        ot_tensor in[3], y, e = {0};
        const prt_dims yd = D4(1, 1, 2, 2);
        double want[4];
        in[0] = ot_make(PRT_FLOAT32, D4(1, 1, 8, 8));
        in[1] = ot_make(PRT_FLOAT32, D2(1, 4));
        in[2] = ot_make(PRT_INT64, D1(1));
        for (int64_t i = 0; i < 64; i++)
            ot_set(&in[0], i, (double)(i % 8) + 10.0 * (double)(i / 8));
        for (int64_t i = 0; i < 4; i++)
            ot_set(&in[1], i, i < 2 ? 1.0 : 5.0);
        for (int64_t i = 0; i < 4; i++)
            want[i] = c0 + 2.0 * (double)(i % 2) + 10.0 * (c0 + 2.0 * (double)(i / 2));
        CHECK_OK(ot_run_op("RoiAlign", f, 4, in, 3, &y));
        if (y.data)
            ot_check_close("RoiAlign", &y, &yd, want, 1e-6);
        ot_free(&y);
        ot_set(&in[2], 0, 1.0);
        CHECK_ERR(ot_run_op("RoiAlign", f, 4, in, 3, &e), PRT_ERR_INVALID_ARGUMENT,
                  "batch_indices[0] is 1");
        ot_free(&e);
        CHECK_ERR(ot_run_op("GridSample", NULL, 0, in, 2, &e), PRT_ERR_SHAPE,
                  "grid has rank 2");
        ot_free(&e);
        for (int i = 0; i < 3; i++)
            ot_free(&in[i]);
    }
}

int main(void)
{
    test_pools();
    test_conv_transpose();
    test_softmax();
    test_layer_norm_stats();
    test_norms();
    test_resize();
    test_sample();
    test_alloc_failures();
    return tu_finish("test_ops_nn");
}
