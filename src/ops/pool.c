/*
 * The pools (namespace "plugrt", version "1"), ONNX semantics at opsets
 * 7-19:
 *
 *  - MaxPool, AveragePool, LpPool: X [N, C, D1, ..., Dn] (n >= 1) ->
 *    Y [N, C, O1, ..., On], windows of kernel_shape over each image's
 *    channel. The output size and padding are the window rules of ops_nn.h
 *    (window.c, shared with Conv): auto_pad, pads, strides, dilations and
 *    ceil_mode. Padding holds nothing: a max, a mean or a p-norm over the
 *    window's elements inside X (AveragePool with count_include_pad counts
 *    the padding's positions in the divisor, but never positions past the
 *    padding, which ceil_mode's last window may reach).
 *    MaxPool: float32, float16, bfloat16, int8, uint8; optional second
 *    output Indices (int64, field nb_outputs = 2): the flat index into X of
 *    each maximum, N and C included, over row-major spatial dims, or
 *    column-major ones with storage_order 1 (ONNX's rule). The first
 *    maximum wins; a NaN is a maximum (numpy's max). A window with nothing
 *    inside X gives the dtype's lowest value and index -1.
 *    AveragePool and LpPool: float32, float16, bfloat16.
 *  - GlobalAveragePool, GlobalMaxPool, GlobalLpPool: Y [N, C, 1, ..., 1],
 *    one window over each channel's positions; over no positions the mean
 *    is NaN (numpy's), the maximum the lowest value, the p-norm 0.
 *    GlobalAveragePool sums in double whatever the spatial size; float32,
 *    float16, bfloat16 (GlobalMaxPool also int8, uint8).
 *  An empty AveragePool window (only padding) is 0 with count_include_pad,
 *  else NaN.
 *
 * Fields (ONNX attribute names; ints accepted as int32 or int64):
 *   auto_pad, dilations, kernel_shape (required), pads, strides: the window
 *   ceil_mode          int32 0 or 1, default 0 (MaxPool, AveragePool, LpPool)
 *   count_include_pad  int32 0 or 1, default 0 (AveragePool)
 *   storage_order      int32 0 or 1, default 0 (MaxPool)
 *   nb_outputs         int32 1 or 2, default 1 (MaxPool: 2 adds Indices)
 *   p                  int32 >= 1, default 2 (LpPool, GlobalLpPool)
 * Rank 2 and below are rejected, as ONNX Runtime does.
 *
 * MaxPool without Indices and AveragePool over one or two spatial dims run
 * cpu_pool2d_rows (cpu/pool2d.c): rows of outputs in vectors, LINEAR or
 * CHW8 (X and Y in the same format), means summed in float32 in window
 * order. The rest (Indices, three spatial dims, LpPool, GlobalMaxPool,
 * GlobalLpPool) is the generic loop here, means and p-norms in double,
 * rounded once. Half floats and 8-bit integers go through float32 in the
 * workspace (exact for the maximum).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "base/parallel.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/ops_nn.h"
#include "ops/ops_views.h"

enum { POOL_MAX, POOL_AVG, POOL_LP, POOL_GLOBAL_MAX, POOL_GLOBAL_LP };
_Static_assert((int)POOL_MAX == (int)OPV_POOL_MAX && (int)POOL_AVG == (int)OPV_POOL_AVG &&
                   (int)POOL_LP == (int)OPV_POOL_LP,
               "pool_ctx.kind holds the view's kind");

typedef struct pool_op {
    op_object o;
    op_window w;
    int32_t ceil_mode;
    int32_t count_include_pad; /* AveragePool */
    int32_t storage_order;     /* MaxPool */
    int32_t nb_outputs;        /* MaxPool: 1, or 2 with Indices */
    int32_t p;                 /* LpPool, GlobalLpPool */
} pool_op;

static const pool_op *cpl(const op_object *o)
{
    return (const pool_op *)o;
}

/* An int field in [lo, hi]. */
static prt_status pool_int(op_object *o, const op_fields *f, const char *name,
                           int32_t dflt, int32_t lo, int32_t hi, int32_t *out)
{
    prt_status st = op_field_i32(f, name, dflt, out);
    if (!st && (*out < lo || *out > hi))
        st = op_fail(o, PRT_ERR_UNSUPPORTED, "%s %d is not supported (%d to %d)", name,
                     (int)*out, (int)lo, (int)hi);
    return st;
}

static int pool_global(const op_object *o)
{
    return o->cls->kind >= POOL_GLOBAL_MAX;
}

/* Every field of every pool: each op's schema admits only its own. */
static prt_status pool_parse(op_object *o, const op_fields *f)
{
    pool_op *p = (pool_op *)o;
    prt_status st = PRT_OK;
    if (!pool_global(o)) {
        st = op_window_parse(o, f, &p->w);
        if (!st && p->w.nb_ks == 0)
            st = op_fail(o, PRT_ERR_INVALID_ARGUMENT, "kernel_shape is required");
        if (!st)
            st = pool_int(o, f, "ceil_mode", 0, 0, 1, &p->ceil_mode);
    }
    if (!st)
        st = pool_int(o, f, "count_include_pad", 0, 0, 1, &p->count_include_pad);
    if (!st)
        st = pool_int(o, f, "storage_order", 0, 0, 1, &p->storage_order);
    if (!st)
        st = pool_int(o, f, "nb_outputs", 1, 1, 2, &p->nb_outputs);
    if (!st)
        st = pool_int(o, f, "p", 2, 1, INT32_MAX, &p->p);
    return st;
}

static int32_t pool_serialize(op_object *o, prt_field *ser)
{
    pool_op *p = (pool_op *)o;
    int32_t n = 0, kind = o->cls->kind;
    if (!pool_global(o)) {
        n = op_window_ser_pad(&p->w, ser);
        n += op_window_ser_arrays(&p->w, ser + n);
        op_ser(&ser[n++], "ceil_mode", PRT_FIELD_INT32, &p->ceil_mode, 1);
    }
    if (kind == POOL_AVG)
        op_ser(&ser[n++], "count_include_pad", PRT_FIELD_INT32, &p->count_include_pad, 1);
    if (kind == POOL_MAX) {
        op_ser(&ser[n++], "storage_order", PRT_FIELD_INT32, &p->storage_order, 1);
        op_ser(&ser[n++], "nb_outputs", PRT_FIELD_INT32, &p->nb_outputs, 1);
    }
    if (kind == POOL_LP || kind == POOL_GLOBAL_LP)
        op_ser(&ser[n++], "p", PRT_FIELD_INT32, &p->p, 1);
    return n;
}

static prt_status pool_rank(const op_object *o, int32_t r)
{
    prt_status st = op_window_rank(o, r);
    if (st || pool_global(o))
        return st;
    return op_window_check_ns(o, &cpl(o)->w, r - 2, "X");
}

static int32_t pool_nb_outputs(const op_object *o)
{
    return o->cls->kind == POOL_MAX ? cpl(o)->nb_outputs : 1;
}

static prt_status pool_shapes_n(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                                const prt_dim_exprs *sv, int32_t nb_sv,
                                prt_dim_exprs *out, int32_t nb_out, prt_expr_builder *eb)
{
    const pool_op *p = cpl(o);
    int32_t ns = in[0].nb_dims - 2;
    prt_status st = pool_rank(o, in[0].nb_dims);
    (void)nb_in, (void)sv, (void)nb_sv;
    if (st)
        return st;
    out[0] = in[0];
    for (int32_t i = 0; i < ns; i++) {
        if (pool_global(o))
            out[0].d[2 + i] = eb->constant(eb, 1);
        else
            st = op_window_out_expr(o, eb, &p->w, i, ns, in[0].d[2 + i],
                                    eb->constant(eb, p->w.ks[i]), p->ceil_mode,
                                    &out[0].d[2 + i]);
        if (st)
            return st;
    }
    for (int32_t k = 1; k < nb_out; k++)
        out[k] = out[0];
    return PRT_OK;
}

/* The windows over X; a global pool is one window of X's spatial size. */
static prt_status pool_geom(const op_object *o, const prt_dims *x, op_win_geom *g)
{
    const pool_op *p = cpl(o);
    int64_t k[OP_SP_MAX];
    prt_status st = pool_rank(o, x->nb_dims);
    if (st)
        return st;
    if (pool_global(o)) {
        /* One window over all of it (which may be empty). */
        memset(g, 0, sizeof *g);
        g->ns = x->nb_dims - 2;
        g->ivol = g->ovol = 1;
        for (int32_t i = 0; i < g->ns; i++) {
            g->in[i] = g->k[i] = x->d[2 + i];
            g->out[i] = g->s[i] = g->d[i] = 1;
            g->ivol *= x->d[2 + i];
        }
        g->kvol = g->ivol;
        return PRT_OK;
    }
    for (int32_t i = 0; i < x->nb_dims - 2; i++)
        k[i] = p->w.ks[i];
    return op_window_geom(o, &p->w, x->nb_dims - 2, x->d + 2, k, p->ceil_mode, g);
}

static prt_status pool_infer_n(const op_object *o, const prt_dims *in, int32_t nb_in,
                               prt_dims *out, int32_t nb_out)
{
    op_win_geom g;
    prt_status st = pool_geom(o, &in[0], &g);
    (void)nb_in;
    if (st)
        return st;
    out[0] = in[0];
    for (int32_t i = 0; i < g.ns; i++)
        out[0].d[2 + i] = g.out[i];
    for (int32_t k = 1; k < nb_out; k++)
        out[k] = out[0];
    return PRT_OK;
}

static int32_t pool_out_dtype_n(const op_object *o, const int32_t *types, int32_t nb_in,
                                int32_t index)
{
    (void)o, (void)nb_in;
    return index == 0 ? types[0] : PRT_INT64;
}

/* Dtypes computed in float32 in the workspace: X and Y as float32. */
static int64_t pool_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                              int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    int64_t vx = base_volume(&in[0]), vy = base_volume(&out[0]), n;
    (void)o, (void)nb_in, (void)nb_out;
    if (dtype == PRT_FLOAT32)
        return 0;
    if (vx < 0 || vy < 0 || !base_add_i64(vx, vy, &n) ||
        !base_mul_i64(n, (int64_t)sizeof(float), &n))
        return -1;
    return n;
}

/* x (n elements of dtype) as float32; every value of these dtypes is exact. */
static void pool_to_f32(const void *x, int32_t dtype, int64_t n, float *dst)
{
    if (dtype == PRT_INT8)
        for (int64_t i = 0; i < n; i++)
            dst[i] = ((const int8_t *)x)[i];
    else if (dtype == PRT_UINT8)
        for (int64_t i = 0; i < n; i++)
            dst[i] = ((const uint8_t *)x)[i];
    else
        op_to_f32(x, dtype, n, dst);
}

/* The inverse, for values of the dtype (a maximum of 8-bit inputs). */
static void pool_from_f32(const float *src, int32_t dtype, int64_t n, void *y)
{
    if (dtype == PRT_INT8)
        for (int64_t i = 0; i < n; i++)
            ((int8_t *)y)[i] = (int8_t)src[i];
    else if (dtype == PRT_UINT8)
        for (int64_t i = 0; i < n; i++)
            ((uint8_t *)y)[i] = (uint8_t)src[i];
    else
        op_from_f32(src, dtype, n, y);
}

typedef struct pool_ctx {
    int32_t kind;     /* POOL_MAX, POOL_AVG or POOL_LP */
    int32_t p;        /* the norm's order */
    int32_t with_pad; /* AveragePool's count_include_pad */
    const op_win_geom *g;
    int64_t istr[OP_SP_MAX]; /* row-major strides of X's spatial dims */
    int64_t ostr[OP_SP_MAX]; /* the strides Indices counts in */
    float lowest;            /* of the dtype: the maximum of nothing */
} pool_ctx;

/* The kernel positions [k0, k1) of a window starting at s0 (dilation d,
 * kernel K) that fall in [lo, hi). */
static void pool_span(int64_t s0, int64_t d, int64_t K, int64_t lo, int64_t hi,
                      int64_t *k0, int64_t *k1)
{
    int64_t a = s0 >= lo ? 0 : (lo - s0 + d - 1) / d;
    int64_t b = hi - s0 <= 0 ? 0 : (hi - s0 + d - 1) / d;
    *k0 = a;
    *k1 = b < K ? b : K;
    if (*k1 < *k0)
        *k1 = *k0;
}

/* One window of one image's channel x: the result, and for MaxPool *arg,
 * the maximum's spatial index in ostr's order (-1 for none). */
static float pool_window(const pool_ctx *c, const float *x, const int64_t *oidx,
                         int64_t *arg)
{
    const op_win_geom *g = c->g;
    int32_t ns = g->ns, i;
    int64_t start[OP_SP_MAX], k0[OP_SP_MAX], k1[OP_SP_MAX], kk[OP_SP_MAX];
    int64_t cnt = 1, padded = 1, a, b;
    double acc = 0.0;
    float mx = c->lowest;
    *arg = -1;
    for (i = 0; i < ns; i++) {
        start[i] = oidx[i] * g->s[i] - g->pb[i];
        pool_span(start[i], g->d[i], g->k[i], 0, g->in[i], &k0[i], &k1[i]);
        cnt *= k1[i] - k0[i];
        /* count_include_pad: the positions in the padded input. */
        pool_span(start[i], g->d[i], g->k[i], -g->pb[i], g->in[i] + g->pe[i], &a, &b);
        padded *= b - a;
        kk[i] = k0[i];
    }
    if (cnt == 0) /* nothing inside X: the lowest value; a mean over the padding */
        return c->kind == POOL_MAX   ? c->lowest
               : c->kind == POOL_AVG ? (float)(0.0 / (double)(c->with_pad ? padded : 0))
                                     : 0.0f;
    do {
        int64_t off = 0;
        float v;
        for (i = 0; i < ns; i++)
            off += (start[i] + kk[i] * g->d[i]) * c->istr[i];
        v = x[off];
        if (c->kind == POOL_MAX) {
            /* The first maximum; a NaN, once met, stays. */
            if (*arg < 0 || (mx == mx && (v > mx || v != v))) {
                mx = v;
                *arg = 0;
                for (i = 0; i < ns; i++)
                    *arg += (start[i] + kk[i] * g->d[i]) * c->ostr[i];
            }
        } else if (c->kind == POOL_AVG) {
            acc += v;
        } else {
            double m = fabs((double)v);
            acc += c->p == 1 ? m : c->p == 2 ? m * m : pow(m, c->p);
        }
        for (i = ns - 1; i >= 0; i--) {
            if (++kk[i] < k1[i])
                break;
            kk[i] = k0[i];
        }
    } while (i >= 0);
    if (c->kind == POOL_MAX)
        return mx;
    if (c->kind == POOL_AVG)
        return (float)(acc / (double)(c->with_pad ? padded : cnt));
    return (float)(c->p == 1 ? acc : c->p == 2 ? sqrt(acc) : pow(acc, 1.0 / c->p));
}

typedef struct pool_job {
    const pool_ctx *c;
    const float *X;
    float *Y;
    int64_t *I;
} pool_job;

/* Planes (image, channel) [b, e), each whole on one thread. */
static void pool_range(void *arg, int64_t b, int64_t e)
{
    const pool_job *j = arg;
    const op_win_geom *g = j->c->g;
    int64_t oidx[OP_SP_MAX];
    for (int64_t pl = b; pl < e; pl++) {
        const float *xp = j->X + pl * g->ivol;
        float *yp = j->Y + pl * g->ovol;
        memset(oidx, 0, sizeof oidx);
        for (int64_t q = 0; q < g->ovol; q++) {
            int64_t arg_max;
            yp[q] = pool_window(j->c, xp, oidx, &arg_max);
            if (j->I)
                j->I[pl * g->ovol + q] = arg_max < 0 ? -1 : pl * g->ivol + arg_max;
            for (int32_t i = g->ns - 1; i >= 0; i--) {
                if (++oidx[i] < g->out[i])
                    break;
                oidx[i] = 0;
            }
        }
    }
}

/* Whether cpu_pool2d_rows computes the pool: a max without Indices or a
 * mean, over one or two spatial dims. */
static int pool_fast(const op_object *o, int32_t ns)
{
    const int32_t kind = o->cls->kind;
    return ns <= 2 && ((kind == POOL_MAX && cpl(o)->nb_outputs == 1) || kind == POOL_AVG);
}

/* The kernel's geometry: one spatial dim is a row of one. */
static cpu_pool2d pool2d_of(const op_win_geom *g, const pool_ctx *c)
{
    const int32_t r = g->ns - 1; /* the columns' dim */
    cpu_pool2d k = {.avg = c->kind == POOL_AVG,
                    .with_pad = c->with_pad,
                    .ih = 1,
                    .iw = g->in[r],
                    .oh = 1,
                    .ow = g->out[r],
                    .kh = 1,
                    .kw = g->k[r],
                    .sh = 1,
                    .sw = g->s[r],
                    .dh = 1,
                    .dw = g->d[r],
                    .pl = g->pb[r],
                    .pr = g->pe[r],
                    .lowest = c->lowest};
    if (g->ns == 2) {
        k.ih = g->in[0];
        k.oh = g->out[0];
        k.kh = g->k[0];
        k.sh = g->s[0];
        k.dh = g->d[0];
        k.pt = g->pb[0];
        k.pb = g->pe[0];
    }
    return k;
}

typedef struct pool2d_job {
    const cpu_pool2d *k;
    const float *x;
    float *y;
    int64_t chw8_channels; /* 0: LINEAR */
} pool2d_job;

static void pool2d_range(void *arg, int64_t b, int64_t e)
{
    const pool2d_job *j = arg;
    cpu_pool2d_rows(j->k, j->x, j->y, b, e, j->chw8_channels);
}

/* MaxPool of 8-bit x on its bytes (a QDQ model's DequantizeLinear ->
 * MaxPool -> QuantizeLinear, onnx_fuse.c): output rows [b, e) of planes *
 * oh, each kernel row and column a run of maxima over the outputs whose
 * tap lies inside x. The lowest value stands for a window all padding, as
 * in the float kernel. */
typedef struct pool_q8_job {
    const cpu_pool2d *k;
    const uint8_t *x;
    uint8_t *y;
    int is_signed;
} pool_q8_job;

/* A row's outputs in three parts: those whose taps all lie inside x's
 * columns ([oa, ob)) in vectors of 16, the maximum of every tap kept in a
 * register and stored once (a last vector ends at ob, over outputs done
 * already: the same values); the rest one by one over their inside taps.
 * Stride 1 and 2 only (a stride-2 vector reads 32 bytes, which must stay
 * in the row: `vok`). */
#define POOL_Q8_ROWS(T, VT)                                                              \
    for (int64_t r = b; r < e; r++) {                                                    \
        const int64_t oh = r % k->oh, ih0 = oh * k->sh - k->pt;                          \
        const int64_t reach = (k->kw - 1) * k->dw - k->pl;                               \
        const T *xp = (const T *)j->x + r / k->oh * k->ih * k->iw;                       \
        T *yr = (T *)j->y + r * k->ow;                                                   \
        int64_t oa = (k->pl + k->sw - 1) / k->sw, ob, o = 0;                             \
        ob = k->iw - 1 - reach < 0 ? 0 : (k->iw - 1 - reach) / k->sw + 1;                \
        ob = ob < k->ow ? ob : k->ow;                                                    \
        oa = oa < ob ? oa : ob;                                                          \
        for (; o < k->ow; o++) {                                                         \
            if (o == oa && k->sw <= 2) {                                                 \
                for (; o + 16 <= ob && POOL_Q8_VOK(o); o += 16)                          \
                    POOL_Q8_VEC(T, VT, o, 0);                                            \
                if (o < ob && ob - 16 >= oa && POOL_Q8_VOK(ob - 16)) {                   \
                    POOL_Q8_VEC(T, VT, ob - 16, 0);                                      \
                    o = ob;                                                              \
                } else if (o < ob && ob - 16 >= oa && POOL_Q8_VOK_BACK(ob - 16)) {       \
                    POOL_Q8_VEC(T, VT, ob - 16, 1);                                      \
                    o = ob;                                                              \
                }                                                                        \
                if (o >= k->ow)                                                          \
                    break;                                                               \
            }                                                                            \
            {                                                                            \
                T m = (T)k->lowest;                                                      \
                for (int64_t i = 0; i < k->kh; i++) {                                    \
                    const int64_t ih = ih0 + i * k->dh;                                  \
                    if (ih < 0 || ih >= k->ih)                                           \
                        continue;                                                        \
                    for (int64_t t = 0; t < k->kw; t++) {                                \
                        const int64_t iw = o * k->sw - k->pl + t * k->dw;                \
                        if (iw >= 0 && iw < k->iw && xp[ih * k->iw + iw] > m)            \
                            m = xp[ih * k->iw + iw];                                     \
                    }                                                                    \
                }                                                                        \
                yr[o] = m;                                                               \
            }                                                                            \
        }                                                                                \
    }

/* The 16 outputs from o read inside the row: 16 bytes at stride 1, 32 at
 * stride 2 from each tap's column o sw + t dw - pl; or, at stride 2 (a
 * row's last vector, whose 32nd byte would lie past the row: 56 outputs
 * of 112 columns), the 32 bytes from one column before, odd lanes. */
#define POOL_Q8_VOK(o) ((k->sw == 1 ? (o) + 16 : ((o) + 16) * 2) + reach <= k->iw)
#define POOL_Q8_VOK_BACK(o)                                                              \
    (k->sw == 2 && ((o) + 16) * 2 - 1 + reach <= k->iw && (o)*2 - k->pl >= 1)

#define POOL_Q8_VEC(T, VT, o, back)                                                      \
    do {                                                                                 \
        VT acc_;                                                                         \
        memset(&acc_, 0, sizeof acc_);                                                   \
        acc_ += (T)k->lowest;                                                            \
        for (int64_t i = 0; i < k->kh; i++) {                                            \
            const int64_t ih = ih0 + i * k->dh;                                          \
            if (ih < 0 || ih >= k->ih)                                                   \
                continue;                                                                \
            for (int64_t t = 0; t < k->kw; t++) {                                        \
                const T *xr_ = xp + ih * k->iw + (o)*k->sw - k->pl + t * k->dw;          \
                VT a_, c_, m_;                                                           \
                if (back) {                                                              \
                    memcpy(&a_, xr_ - 1, 16);                                            \
                    memcpy(&c_, xr_ + 15, 16);                                           \
                    a_ = __builtin_shufflevector(a_, c_, 1, 3, 5, 7, 9, 11, 13, 15, 17,  \
                                                 19, 21, 23, 25, 27, 29, 31);            \
                } else {                                                                 \
                    memcpy(&a_, xr_, 16);                                                \
                    if (k->sw == 2) {                                                    \
                        memcpy(&c_, xr_ + 16, 16);                                       \
                        a_ = __builtin_shufflevector(a_, c_, 0, 2, 4, 6, 8, 10, 12, 14,  \
                                                     16, 18, 20, 22, 24, 26, 28, 30);    \
                    }                                                                    \
                }                                                                        \
                m_ = (VT)(a_ > acc_);                                                    \
                acc_ = (a_ & m_) | (acc_ & ~m_);                                         \
            }                                                                            \
        }                                                                                \
        memcpy(yr + (o), &acc_, 16);                                                     \
    } while (0)

typedef uint8_t pool_u8x16 __attribute__((vector_size(16)));
typedef int8_t pool_i8x16 __attribute__((vector_size(16)));

static void pool_q8_range(void *arg, int64_t b, int64_t e)
{
    const pool_q8_job *j = arg;
    const cpu_pool2d *k = j->k;
    if (j->is_signed) {
        POOL_Q8_ROWS(int8_t, pool_i8x16)
    } else {
        POOL_Q8_ROWS(uint8_t, pool_u8x16)
    }
}

/* X and Y both LINEAR, or both CHW8 where the vector kernel runs (rank 3
 * or 4, no Indices). */
static int pool_chw8_ok(const op_object *o, int32_t pos,
                        const prt_dynamic_tensor_desc *io, int32_t nb_in, int32_t nb_out)
{
    (void)nb_in, (void)nb_out;
    if (pos > 0)
        return io[pos].desc.format == io[0].desc.format;
    return io[0].desc.format == PRT_FORMAT_LINEAR ||
           pool_fast(o, io[0].desc.dims.nb_dims - 2);
}

static prt_status pool_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                           int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                           const void *const *xs, void *const *ys, void *ws, void *stream)
{
    const prt_dims *xd = &in[0].dims;
    op_pool_view v;
    op_win_geom g;
    pool_ctx c;
    const float *X = xs[0];
    float *Y = ys[0];
    int64_t *I = nb_out > 1 ? ys[1] : NULL, planes, s = 1;
    prt_status st = op_pool_view_of(o, dtype, xd, &v);
    (void)nb_in, (void)out, (void)stream;
    if (st)
        return st;
    /* What a device's kernel reads too (ops_views.h): one source. */
    g = v.g;
    c.kind = v.kind;
    c.p = v.p;
    c.with_pad = v.with_pad;
    c.g = &g;
    c.lowest = v.lowest;
    for (int32_t i = g.ns - 1; i >= 0; i--) {
        c.istr[i] = s;
        s *= g.in[i];
    }
    memcpy(c.ostr, v.ostr, sizeof c.ostr);
    planes = xd->d[0] * xd->d[1];
    if (v.fast) {
        /* Max (without Indices) and mean over 1 or 2 dims: the vector
         * kernel, LINEAR or CHW8. */
        const int c8 = in[0].format == PRT_FORMAT_CHW8;
        cpu_pool2d k = pool2d_of(&g, &c);
        pool2d_job j = {&k, X, Y, c8 ? xd->d[1] : 0};
        int64_t work = k.ow * k.kh * k.kw * (c8 ? 8 : 1);
        if (!c8 && !k.avg && (dtype == PRT_UINT8 || dtype == PRT_INT8)) {
            pool_q8_job q = {&k, xs[0], ys[0], dtype == PRT_INT8};
            base_parallel_for(planes * k.oh,
                              work > 0 ? (OP_GRAIN_SIMPLE + work - 1) / work
                                       : planes * k.oh,
                              pool_q8_range, &q);
            return PRT_OK;
        }
        if (c8)
            planes = xd->d[0] * ((xd->d[1] + 7) / 8);
        else if (dtype != PRT_FLOAT32) {
            float *w = ws;
            pool_to_f32(xs[0], dtype, planes * g.ivol, w);
            j.x = w;
            j.y = w + planes * g.ivol;
        }
        /* A row costs about a load per window element of each output. */
        base_parallel_for(planes * k.oh,
                          work > 0 ? (OP_GRAIN_SIMPLE + work - 1) / work : planes * k.oh,
                          pool2d_range, &j);
        if (!c8 && dtype != PRT_FLOAT32)
            pool_from_f32(j.y, dtype, planes * g.ovol, ys[0]);
        return PRT_OK;
    }
    if (dtype != PRT_FLOAT32) {
        float *w = ws;
        pool_to_f32(xs[0], dtype, planes * g.ivol, w);
        X = w;
        Y = w + planes * g.ivol;
    }
    {
        pool_job j = {&c, X, Y, I};
        int64_t work = g.ovol * (g.kvol > 0 ? g.kvol : 1);
        /* A plane costs about a load per kernel position of each window. */
        base_parallel_for(planes, work > 0 ? (OP_GRAIN_SIMPLE + work - 1) / work : planes,
                          pool_range, &j);
    }
    if (dtype != PRT_FLOAT32)
        pool_from_f32(Y, dtype, planes * g.ovol, ys[0]);
    return PRT_OK;
}

prt_status op_pool_view_of(const op_object *o, int32_t dtype, const prt_dims *x,
                           op_pool_view *v)
{
    const pool_op *p = cpl(o);
    const int32_t kind = o->cls->kind;
    int64_t s = 1;
    prt_status st = pool_geom(o, x, &v->g);
    if (st)
        return st;
    /* pool_run's choices, one for one. */
    v->kind = kind == POOL_GLOBAL_MAX || kind == POOL_MAX ? OPV_POOL_MAX
              : kind == POOL_AVG                          ? OPV_POOL_AVG
                                                          : OPV_POOL_LP;
    v->p = p->p;
    v->with_pad = p->count_include_pad;
    v->fast = pool_fast(o, v->g.ns);
    v->lowest = dtype == PRT_INT8 ? -128.0f : dtype == PRT_UINT8 ? 0.0f : -FLT_MAX;
    for (int32_t i = 0; i < v->g.ns; i++) {
        int64_t row = 1; /* the row-major stride of dim i */
        for (int32_t j = i + 1; j < v->g.ns; j++)
            row *= v->g.in[j];
        v->ostr[i] = p->storage_order ? s : row; /* 1: column-major */
        s *= v->g.in[i];
    }
    return PRT_OK;
}

#define POOL_CLASS(NAME, KIND, DTYPES)                                                   \
    static const op_class NAME = {                                                       \
        .kind = (KIND),                                                                  \
        .min_inputs = 1,                                                                 \
        .max_inputs = 1,                                                                 \
        .dtypes = (DTYPES),                                                              \
        .size = sizeof(pool_op),                                                         \
        .alias_input = -1,                                                               \
        .parse = pool_parse,                                                             \
        .serialize = pool_serialize,                                                     \
        .nb_outputs = pool_nb_outputs,                                                   \
        .shapes_n = pool_shapes_n,                                                       \
        .infer_n = pool_infer_n,                                                         \
        .out_dtype_n = pool_out_dtype_n,                                                 \
        .workspace = pool_workspace,                                                     \
        .run = pool_run,                                                                 \
        .chw8_ok = pool_chw8_ok,                                                         \
    }

#define POOL_DT_MAX                                                                      \
    (OP_DT_FLOAT | OP_DT(PRT_BFLOAT16) | OP_DT(PRT_INT8) | OP_DT(PRT_UINT8))
POOL_CLASS(max_pool_class, POOL_MAX, POOL_DT_MAX);
POOL_CLASS(average_pool_class, POOL_AVG, OP_DT_FLOAT | OP_DT(PRT_BFLOAT16));
POOL_CLASS(lp_pool_class, POOL_LP, OP_DT_FLOAT | OP_DT(PRT_BFLOAT16));
POOL_CLASS(global_max_pool_class, POOL_GLOBAL_MAX, POOL_DT_MAX);
POOL_CLASS(global_lp_pool_class, POOL_GLOBAL_LP, OP_DT_FLOAT | OP_DT(PRT_BFLOAT16));

#define POOL_WINDOW_SCHEMA                                                               \
    {"auto_pad", PRT_FIELD_CHAR, -1,                                                     \
     "NOTSET (default, use pads), SAME_UPPER, SAME_LOWER or VALID"},                     \
        {"ceil_mode", PRT_FIELD_INT32, 1, "1: output sizes round up; default 0"},        \
        {"dilations", PRT_FIELD_INT32, -1, "per spatial dim, default 1"},                \
        {"kernel_shape", PRT_FIELD_INT32, -1, "per spatial dim, required"},              \
        {"pads", PRT_FIELD_INT32, -1,                                                    \
         "begin of each spatial dim, then end of each; default 0"},                      \
    {                                                                                    \
        "strides", PRT_FIELD_INT32, -1, "per spatial dim, default 1"                     \
    }

static const prt_field_schema max_pool_schema[] = {
    POOL_WINDOW_SCHEMA,
    {"nb_outputs", PRT_FIELD_INT32, 1, "2: a second output, Indices (int64); default 1"},
    {"storage_order", PRT_FIELD_INT32, 1, "1: Indices over column-major dims; default 0"},
};
static const prt_field_schema average_pool_schema[] = {
    POOL_WINDOW_SCHEMA,
    {"count_include_pad", PRT_FIELD_INT32, 1, "1: the padding counts in the mean"},
};
static const prt_field_schema lp_pool_schema[] = {
    POOL_WINDOW_SCHEMA,
    {"p", PRT_FIELD_INT32, 1, "the norm's order, default 2"},
};
static const prt_field_schema global_lp_pool_schema[] = {
    {"p", PRT_FIELD_INT32, 1, "the norm's order, default 2"},
};

#define NB_SCHEMA(s) ((int32_t)(sizeof(s) / sizeof(s)[0]))

const prt_plugin_creator op_max_pool_creator =
    OP_CREATOR("MaxPool", max_pool_class, max_pool_schema, NB_SCHEMA(max_pool_schema));
const prt_plugin_creator op_average_pool_creator =
    OP_CREATOR("AveragePool", average_pool_class, average_pool_schema,
               NB_SCHEMA(average_pool_schema));
const prt_plugin_creator op_lp_pool_creator =
    OP_CREATOR("LpPool", lp_pool_class, lp_pool_schema, NB_SCHEMA(lp_pool_schema));
const prt_plugin_creator op_global_max_pool_creator =
    OP_CREATOR("GlobalMaxPool", global_max_pool_class, NULL, 0);
const prt_plugin_creator op_global_lp_pool_creator =
    OP_CREATOR("GlobalLpPool", global_lp_pool_class, global_lp_pool_schema,
               NB_SCHEMA(global_lp_pool_schema));

/* ---- GlobalAveragePool ------------------------------------------------------ */

static prt_status gap_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                             prt_dim_exprs *out, prt_expr_builder *eb)
{
    prt_status st = op_window_rank(o, in[0].nb_dims);
    (void)nb_in;
    if (st)
        return st;
    *out = in[0];
    for (int32_t i = 2; i < out->nb_dims; i++)
        out->d[i] = eb->constant(eb, 1);
    return PRT_OK;
}

static prt_status gap_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                            prt_dims *out)
{
    prt_status st = op_window_rank(o, in[0].nb_dims);
    (void)nb_in;
    if (st)
        return st;
    *out = in[0];
    for (int32_t i = 2; i < out->nb_dims; i++)
        out->d[i] = 1;
    return PRT_OK;
}

typedef struct gap_job {
    const float *x;
    float *y;
    int64_t sp;
} gap_job;

/* Planes [b, e), each whole on one thread. */
static void gap_range(void *arg, int64_t b, int64_t e)
{
    const gap_job *j = arg;
    op_row_means(j->x + b * j->sp, e - b, j->sp, j->y + b);
}

/* X LINEAR or CHW8 (plugin.h); Y LINEAR, or CHW8 from a CHW8 X. */
static int gap_chw8_ok(const op_object *o, int32_t pos, const prt_dynamic_tensor_desc *io,
                       int32_t nb_in, int32_t nb_out)
{
    (void)o, (void)nb_in, (void)nb_out;
    return pos == 0 || io[pos].desc.format == PRT_FORMAT_LINEAR ||
           io[0].desc.format == PRT_FORMAT_CHW8;
}

typedef struct gap_c8_job {
    const float *x;
    float *y;
    int64_t C, C8, sp;
    int out_c8;
} gap_c8_job;

/* Blocks [b, e): each lane's mean, summed in double as the planes are
 * (op_block_means). */
static void gap_c8_range(void *arg, int64_t b, int64_t e)
{
    const gap_c8_job *j = arg;
    for (int64_t it = b; it < e; it++) {
        const int64_t n = it / j->C8, cb = it % j->C8;
        float means[8];
        op_block_means(j->x + it * j->sp * 8, j->sp, means);
        for (int l = 0; l < 8; l++) {
            const int64_t c = cb * 8 + l;
            const float m = means[l];
            if (j->out_c8)
                j->y[it * 8 + l] = c < j->C ? m : 0.0f;
            else if (c < j->C)
                j->y[n * j->C + c] = m;
        }
    }
}

static prt_status gap_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *xs, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    const prt_dims *d = &in[0].dims;
    int64_t rows = d->d[0] * d->d[1], sp = 1;
    (void)nb_in, (void)out, (void)ws;
    for (int32_t i = 2; i < d->nb_dims; i++)
        sp *= d->d[i];
    if (in[0].format == PRT_FORMAT_CHW8) {
        gap_c8_job j = {
            xs[0], y, d->d[1], (d->d[1] + 7) / 8, sp, out->format == PRT_FORMAT_CHW8};
        base_parallel_for(d->d[0] * j.C8,
                          sp > 0 ? (OP_GRAIN_SIMPLE + 8 * sp - 1) / (8 * sp) : 1,
                          gap_c8_range, &j);
        return PRT_OK;
    }
    if (out->format == PRT_FORMAT_CHW8)
        return op_fail(o, PRT_ERR_UNSUPPORTED, "a CHW8 output needs a CHW8 input");
    if (dtype == PRT_FLOAT32) {
        gap_job j = {xs[0], y, sp};
        /* A plane costs an addition per element. */
        base_parallel_for(rows, sp > 0 ? (OP_GRAIN_SIMPLE + sp - 1) / sp : rows,
                          gap_range, &j);
        return PRT_OK;
    }
    for (int64_t r = 0; r < rows; r++) {
        double s = 0.0;
        float m;
        if (dtype == PRT_FLOAT32) {
            const float *x = (const float *)xs[0] + r * sp;
            for (int64_t k = 0; k < sp; k++)
                s += x[k];
        } else if (dtype == PRT_FLOAT16) {
            const uint16_t *x = (const uint16_t *)xs[0] + r * sp;
            for (int64_t k = 0; k < sp; k++)
                s += prt_half_to_float(x[k]);
        } else if (dtype == PRT_BFLOAT16) {
            const uint16_t *x = (const uint16_t *)xs[0] + r * sp;
            for (int64_t k = 0; k < sp; k++)
                s += prt_bf16_to_float(x[k]);
        } else {
            return op_fail(o, PRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                           prt_dtype_name(dtype));
        }
        m = sp > 0 ? (float)(s / (double)sp) : NAN;
        if (dtype == PRT_FLOAT32)
            ((float *)y)[r] = m;
        else if (dtype == PRT_FLOAT16)
            ((uint16_t *)y)[r] = prt_float_to_half(m);
        else
            ((uint16_t *)y)[r] = prt_float_to_bf16(m);
    }
    return PRT_OK;
}

static const op_class gap_class = {
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16),
    .size = sizeof(op_object),
    .alias_input = -1,
    .shapes = gap_shapes,
    .infer = gap_infer,
    .run = gap_run,
    .chw8_ok = gap_chw8_ok,
};

const prt_plugin_creator op_global_average_pool_creator =
    OP_CREATOR("GlobalAveragePool", gap_class, NULL, 0);
