/*
 * The reductions (namespace "plugrt", version "1"), ONNX opset 1-19
 * semantics: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd,
 * ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp.
 *
 * Input data: float32, float16, bfloat16, float64, int32, uint32, int64
 * (ReduceMax and ReduceMin also int8 and uint8); the output has its dtype.
 * Axes: field axes (the attribute of opsets 1 to 17, ReduceSum's to 12), or
 * a shape input (ReduceSum from opset 13, the others from 18) whose values
 * must be constants at build time; in [-r, r-1], no repeats. Both given is
 * an error. The axes a shape input gives are resolved by get_output_shapes
 * and serialized as the field, so the engine's layer has no such input.
 * Fields keepdims (default 1): reduced dims stay as 1s, or go;
 * noop_with_empty_axes (default 0): without axes (absent or empty) every
 * dim is reduced, or, with 1, the output is the input.
 *
 * Values: Sum x, Mean sum / count, Max, Min, Prod, L1 sum |x|, L2
 * sqrt(sum x^2), SumSquare sum x^2, LogSum log(sum x), LogSumExp
 * log(sum e^x), taken as max + log(sum e^(x - max)) so it does not
 * overflow. Floats accumulate in double and round once; integers in int64
 * (wrapping as numpy's sums do), except L2, LogSum and LogSumExp, which go
 * through double and are truncated and saturated back; integer Mean
 * truncates toward zero. A NaN makes Max and Min NaN (numpy.max). Over an
 * empty set: Sum, L1, L2, SumSquare 0; Prod 1; Mean NaN (integers 0); Max
 * -inf (integers the dtype's lowest), Min +inf (the highest); LogSum and
 * LogSumExp -inf.
 *
 * The kernel walks the input once in memory order over its dims merged
 * into runs of kept and of reduced dims, adding each contiguous row into
 * the accumulators of its output elements.
 *
 * Shape tensors: Sum, Prod, Max and Min of a 1-D tensor with known values
 * state their result.
 */
#include <math.h>
#include <string.h>

#include "base/parallel.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/ops_ew.h"
#include "ops/ops_views.h"

typedef struct reduce_op {
    op_object o;
    int32_t keepdims, noop;
    int32_t nb_field; /* axes given as the field at creation; -1: none */
    int32_t field[PRT_MAX_DIMS];
    int32_t nb_axes; /* the axes in use (the field's, or the shape input's) */
    int32_t axes[PRT_MAX_DIMS];
} reduce_op;

static prt_status reduce_parse(op_object *o, const op_fields *f)
{
    reduce_op *r = (reduce_op *)o;
    prt_status st = ew_field_flag(f, "keepdims", 1, &r->keepdims);
    if (!st)
        st = ew_field_flag(f, "noop_with_empty_axes", 0, &r->noop);
    if (!st)
        st = op_field_i32_array(f, "axes", r->field, PRT_MAX_DIMS, &r->nb_field);
    r->nb_axes = r->nb_field;
    memcpy(r->axes, r->field, sizeof r->axes);
    return st;
}

static int32_t reduce_serialize(op_object *o, prt_field *ser)
{
    reduce_op *r = (reduce_op *)o;
    op_ser(&ser[0], "keepdims", PRT_FIELD_INT32, &r->keepdims, 1);
    op_ser(&ser[1], "noop_with_empty_axes", PRT_FIELD_INT32, &r->noop, 1);
    if (r->nb_axes < 0)
        return 2;
    op_ser(&ser[2], "axes", PRT_FIELD_INT32, r->axes, r->nb_axes);
    return 3;
}

/* mark[i] for the dims of a rank-r input that are reduced; 0 when the op
 * is the identity (noop_with_empty_axes with no axes), else 1. */
static int reduce_mark(const reduce_op *r, const int32_t *ax, int32_t n, int32_t rank,
                       int32_t *mark)
{
    for (int32_t i = 0; i < rank; i++)
        mark[i] = n <= 0;
    for (int32_t i = 0; i < n; i++)
        mark[ax[i]] = 1;
    return !(n <= 0 && r->noop);
}

static prt_status reduce_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                                const prt_dim_exprs *sv, int32_t nb_sv,
                                prt_dim_exprs *out, prt_expr_builder *eb)
{
    reduce_op *r = (reduce_op *)o;
    int32_t ax[PRT_MAX_DIMS], n, mark[PRT_MAX_DIMS], rank = in[0].nb_dims;
    prt_status st =
        ew_const_axes(o, r->field, r->nb_field, sv, nb_sv, eb, rank, "axes", ax, &n);
    (void)nb_in;
    if (st)
        return st;
    r->nb_axes = n;
    if (n > 0)
        memcpy(r->axes, ax, sizeof(int32_t) * (size_t)n);
    if (!reduce_mark(r, ax, n, rank, mark)) {
        *out = in[0];
        return PRT_OK;
    }
    out->nb_dims = 0;
    for (int32_t i = 0; i < rank; i++)
        if (!mark[i])
            out->d[out->nb_dims++] = in[0].d[i];
        else if (r->keepdims)
            out->d[out->nb_dims++] = eb->constant(eb, 1);
    return PRT_OK;
}

static prt_status reduce_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                               prt_dims *out)
{
    const reduce_op *r = (const reduce_op *)o;
    int32_t ax[PRT_MAX_DIMS], n, mark[PRT_MAX_DIMS], rank = in[0].nb_dims;
    prt_status st = ew_const_axes((op_object *)o, r->axes, r->nb_axes, NULL, 0, NULL,
                                  rank, "axes", ax, &n);
    (void)nb_in;
    if (st)
        return st;
    if (!reduce_mark(r, ax, n, rank, mark)) {
        *out = in[0];
        return PRT_OK;
    }
    out->nb_dims = 0;
    for (int32_t i = 0; i < rank; i++)
        if (!mark[i] || r->keepdims)
            out->d[out->nb_dims++] = mark[i] ? 1 : in[0].d[i];
    return PRT_OK;
}

/* Integers accumulate in int64 but for these. */
static int reduce_in_double(int32_t kind, int32_t dtype)
{
    return ew_is_float(dtype) || dtype == PRT_FLOAT64 || kind == RD_L2 ||
           kind == RD_LOG_SUM || kind == RD_LOG_SUM_EXP;
}

/* The accumulators (8 bytes per output element, twice for LogSumExp). */
static int64_t reduce_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                                int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    int64_t n = base_volume(out);
    (void)dtype, (void)in, (void)nb_in;
    if (n < 0 || !base_mul_i64(n, o->cls->kind == RD_LOG_SUM_EXP ? 16 : 8, &n))
        return -1;
    return n;
}

/* ---- rows ------------------------------------------------------------------ */

/* acc[j] = C(acc[j], G(v[j])) for j < n (a kept run innermost), or acc[0] =
 * C(acc[0], fold of G(v[j])) (a reduced run innermost). The fold starts
 * from the first element, so it needs no identity. `sh` is LogSumExp's
 * shift, per element as acc. */
#define RD_ROW(T, G, C)                                                                  \
    do {                                                                                 \
        if (!red) {                                                                      \
            for (int64_t j = 0; j < n; j++) {                                            \
                const T v = vals[j], s = sh ? sh[j] : 0;                                 \
                (void)s;                                                                 \
                acc[j] = C(acc[j], G(v, s));                                             \
            }                                                                            \
        } else {                                                                         \
            const T s = sh ? sh[0] : 0;                                                  \
            T a = G(vals[0], s);                                                         \
            (void)s;                                                                     \
            for (int64_t j = 1; j < n; j++)                                              \
                a = C(a, G(vals[j], s));                                                 \
            acc[0] = C(acc[0], a);                                                       \
        }                                                                                \
    } while (0)

#define G_ID(v, s) (v)
#define G_SQ(v, s) ((v) * (v))
#define G_EXP(v, s) exp((v) - (s))
#define G_ABS(v, s) fabs(v)
#define C_ADD(a, b) ((a) + (b))
#define C_MUL(a, b) ((a) * (b))
/* A NaN wins. */
#define C_MAX(a, b) ((b) > (a) || (b) != (b) ? (b) : (a))
#define C_MIN(a, b) ((b) < (a) || (b) != (b) ? (b) : (a))

static void row_f64(int32_t kind, int red, const double *vals, int64_t n, double *acc,
                    const double *sh)
{
    switch (kind) {
    case RD_MAX:
        RD_ROW(double, G_ID, C_MAX);
        break;
    case RD_MIN:
        RD_ROW(double, G_ID, C_MIN);
        break;
    case RD_PROD:
        RD_ROW(double, G_ID, C_MUL);
        break;
    case RD_L1:
        RD_ROW(double, G_ABS, C_ADD);
        break;
    case RD_L2:
    case RD_SUM_SQUARE:
        RD_ROW(double, G_SQ, C_ADD);
        break;
    case RD_LSE_SHIFTED:
        RD_ROW(double, G_EXP, C_ADD);
        break;
    default: /* Sum, Mean, LogSum */
        RD_ROW(double, G_ID, C_ADD);
        break;
    }
}

/* Integers wrap: through uint64. */
#define W_ADD(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define W_MUL(a, b) ((int64_t)((uint64_t)(a) * (uint64_t)(b)))
#define W_SQ(v, s) W_MUL(v, v)
#define W_ABS(v, s) ((v) < 0 ? (int64_t)(0 - (uint64_t)(v)) : (v))

static void row_i64(int32_t kind, int red, const int64_t *vals, int64_t n, int64_t *acc)
{
    const int64_t *sh = NULL;
    switch (kind) {
    case RD_MAX:
        RD_ROW(int64_t, G_ID, C_MAX);
        break;
    case RD_MIN:
        RD_ROW(int64_t, G_ID, C_MIN);
        break;
    case RD_PROD:
        RD_ROW(int64_t, G_ID, W_MUL);
        break;
    case RD_L1:
        RD_ROW(int64_t, W_ABS, W_ADD);
        break;
    case RD_SUM_SQUARE:
        RD_ROW(int64_t, W_SQ, W_ADD);
        break;
    default: /* Sum, Mean */
        RD_ROW(int64_t, G_ID, W_ADD);
        break;
    }
}

/* The input merged into runs: d[k] elements, red[k] whether reduced; os[k]
 * the run's stride in the output (0 for a reduced run). */
typedef struct rd_view {
    int32_t m;
    int64_t d[PRT_MAX_DIMS], os[PRT_MAX_DIMS];
    int32_t red[PRT_MAX_DIMS];
} rd_view;

/* Returns 0 for an empty input (nothing to walk). */
static int rd_view_make(const prt_dims *in, const int32_t *mark, rd_view *v)
{
    int64_t st = 1;
    v->m = 0;
    for (int32_t i = 0; i < in->nb_dims; i++) {
        if (in->d[i] == 0)
            return 0;
        if (in->d[i] == 1)
            continue;
        if (v->m > 0 && v->red[v->m - 1] == mark[i]) {
            v->d[v->m - 1] *= in->d[i];
            continue;
        }
        v->d[v->m] = in->d[i];
        v->red[v->m++] = mark[i];
    }
    if (v->m == 0) {
        v->d[0] = 1;
        v->red[v->m++] = 0;
    }
    for (int32_t k = v->m - 1; k >= 0; k--) {
        v->os[k] = v->red[k] ? 0 : st;
        if (!v->red[k])
            st *= v->d[k];
    }
    return 1;
}

/* One pass of `kind` over x into acc (doubles or int64 by `dbl`). */
static void rd_walk(const rd_view *v, int32_t kind, int dbl, int32_t dtype, const void *x,
                    void *accv, const double *sh)
{
    const size_t es = prt_dtype_size(dtype);
    const int64_t len = v->d[v->m - 1];
    const int red = v->red[v->m - 1];
    int64_t outer = 1, idx[PRT_MAX_DIMS] = {0}, off_in = 0, off_out = 0;
    for (int32_t k = 0; k < v->m - 1; k++)
        outer *= v->d[k];
    for (int64_t it = 0; it < outer; it++) {
        for (int64_t j = 0; j < len; j += EW_CHUNK) {
            int64_t n = len - j < EW_CHUNK ? len - j : EW_CHUNK;
            const uint8_t *p = (const uint8_t *)x + (size_t)(off_in + j) * es;
            int64_t o = off_out + (red ? 0 : j);
            if (dbl) {
                double vals[EW_CHUNK];
                ew_load_f64(p, dtype, 1, n, vals);
                row_f64(kind, red, vals, n, (double *)accv + o, sh ? sh + o : NULL);
            } else {
                int64_t vals[EW_CHUNK];
                ew_load_i64(p, dtype, 1, n, vals);
                row_i64(kind, red, vals, n, (int64_t *)accv + o);
            }
        }
        off_in += len;
        for (int32_t k = v->m - 2; k >= 0; k--) {
            idx[k]++;
            off_out += v->os[k];
            if (idx[k] < v->d[k])
                break;
            off_out -= v->os[k] * v->d[k];
            idx[k] = 0;
        }
    }
}

/* ReduceMax and ReduceMin of float32 over trailing axes (a detector's best
 * class of 20, an argmax's max): rows of the view's last run, its first
 * run kept (or none), threaded over rows. The same values as rd_walk, which
 * goes through double per element and chunk: a float's extreme is exact.
 * ReduceSum and ReduceMean likewise (ShuffleNet's mean over H and W, 8192
 * rows of 49 at batch 8, was 0.43 ms in the walk's serial double sums): a
 * double sum per row in vectors (op_row_sums, op_row_means, as
 * GlobalAveragePool's), rounded once; only the order of the double
 * additions differs from the walk's. */
typedef struct rd_rows_job {
    const float *x;
    float *y;
    int64_t n;
    int32_t kind;
} rd_rows_job;

/* Rows an op_row_minmax call takes at least: ~1 us of compares at 20 a row. */
#define RD_ROWS_GRAIN 256

static void rd_rows_range(void *arg, int64_t b, int64_t e)
{
    const rd_rows_job *j = arg;
    if (j->kind == RD_SUM)
        op_row_sums(j->x + b * j->n, e - b, j->n, j->y + b);
    else if (j->kind == RD_MEAN)
        op_row_means(j->x + b * j->n, e - b, j->n, j->y + b);
    else
        op_row_minmax(j->x + b * j->n, e - b, j->n, j->kind == RD_MAX, j->y + b);
}

static int rd_rows_fast(int32_t kind, int32_t dtype, const rd_view *v, const void *x,
                        void *y)
{
    rd_rows_job j;
    int64_t rows;
    if ((kind != RD_MAX && kind != RD_MIN && kind != RD_SUM && kind != RD_MEAN) ||
        dtype != PRT_FLOAT32 || !v->red[v->m - 1] || v->m > 2)
        return 0;
    rows = v->m == 2 ? v->d[0] : 1;
    j.x = x, j.y = y, j.n = v->d[v->m - 1], j.kind = kind;
    base_parallel_for(rows, RD_ROWS_GRAIN, rd_rows_range, &j);
    return 1;
}

static prt_status reduce_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                             int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                             const void *const *x, void *const *ys, void *ws,
                             void *stream)
{
    void *y = ys[0];
    const reduce_op *r = (const reduce_op *)o;
    const int32_t kind = o->cls->kind;
    const int dbl = reduce_in_double(kind, dtype);
    int32_t ax[PRT_MAX_DIMS], n, mark[PRT_MAX_DIMS], rank = in[0].dims.nb_dims;
    int64_t nout = base_volume(&out->dims), count = 1, lo, hi;
    rd_view v;
    prt_status st = ew_const_axes((op_object *)o, r->axes, r->nb_axes, NULL, 0, NULL,
                                  rank, "axes", ax, &n);
    int walk;
    (void)nb_in, (void)stream;
    if (st)
        return st;
    if (!reduce_mark(r, ax, n, rank, mark)) {
        if (x[0] != y)
            memmove(y, x[0], prt_dtype_size(dtype) * (size_t)nout);
        return PRT_OK;
    }
    for (int32_t i = 0; i < rank; i++)
        if (mark[i])
            count *= in[0].dims.d[i];
    walk = rd_view_make(&in[0].dims, mark, &v);
    if (walk && rd_rows_fast(kind, dtype, &v, x[0], y))
        return PRT_OK;
    ew_int_range(dtype, &lo, &hi);
    if (dbl) {
        double *acc = ws, *sh = kind == RD_LOG_SUM_EXP ? acc + nout : NULL;
        double init = kind == RD_PROD ? 1.0 : 0.0;
        if (kind == RD_MAX || kind == RD_MIN)
            init = ew_is_float(dtype) || dtype == PRT_FLOAT64
                       ? (kind == RD_MAX ? -INFINITY : INFINITY)
                       : (double)(kind == RD_MAX ? lo : hi);
        for (int64_t i = 0; i < nout; i++)
            acc[i] = init;
        if (sh) {
            /* The maximum, then the sum of e^(x - max) (a finite shift). */
            for (int64_t i = 0; i < nout; i++)
                sh[i] = -INFINITY;
            if (walk)
                rd_walk(&v, RD_MAX, 1, dtype, x[0], sh, NULL);
            for (int64_t i = 0; i < nout; i++)
                sh[i] = isinf(sh[i]) ? 0.0 : sh[i];
            if (walk)
                rd_walk(&v, RD_LSE_SHIFTED, 1, dtype, x[0], acc, sh);
        } else if (walk) {
            rd_walk(&v, kind, 1, dtype, x[0], acc, NULL);
        }
        for (int64_t i = 0; i < nout; i++)
            switch (kind) {
            case RD_MEAN:
                acc[i] /= (double)count;
                break;
            case RD_L2:
                acc[i] = sqrt(acc[i]);
                break;
            case RD_LOG_SUM:
                acc[i] = log(acc[i]);
                break;
            case RD_LOG_SUM_EXP:
                acc[i] = sh[i] + log(acc[i]);
                break;
            default:
                break;
            }
        ew_store_f64(acc, dtype, nout, y);
    } else {
        int64_t *acc = ws;
        int64_t init = kind == RD_PROD  ? 1
                       : kind == RD_MAX ? lo
                       : kind == RD_MIN ? hi
                                        : 0;
        for (int64_t i = 0; i < nout; i++)
            acc[i] = init;
        if (walk)
            rd_walk(&v, kind, 0, dtype, x[0], acc, NULL);
        if (kind == RD_MEAN)
            for (int64_t i = 0; i < nout; i++)
                acc[i] = count ? acc[i] / count : 0;
        ew_store_i64(acc, dtype, nout, y);
    }
    return PRT_OK;
}

/* ---- the view a device's kernel reads ------------------------------------------ */

prt_status op_reduce_view_of(const op_object *o, int32_t dtype, const prt_dims *x,
                             op_reduce_view *v)
{
    const reduce_op *r = (const reduce_op *)o;
    int32_t ax[PRT_MAX_DIMS], n, mark[PRT_MAX_DIMS], rank = x->nb_dims;
    rd_view w;
    prt_status st = ew_const_axes((op_object *)o, r->axes, r->nb_axes, NULL, 0, NULL,
                                  rank, "axes", ax, &n);
    if (st)
        return st;
    memset(v, 0, sizeof *v);
    v->kind = o->cls->kind;
    v->in_double = reduce_in_double(v->kind, dtype);
    v->identity = !reduce_mark(r, ax, n, rank, mark);
    v->count = 1;
    for (int32_t i = 0; i < rank; i++)
        if (mark[i])
            v->count *= x->d[i];
    v->empty = !rd_view_make(x, mark, &w);
    v->m = v->empty ? 0 : w.m;
    for (int32_t k = 0; k < v->m; k++) {
        v->d[k] = w.d[k];
        v->red[k] = w.red[k];
    }
    return PRT_OK;
}

/* ---- values ------------------------------------------------------------------ */

static prt_status reduce_values(op_object *o, const prt_dim_exprs *in_dims,
                                const prt_dim_exprs *in_values, int32_t nb_in,
                                const prt_dim_exprs *out_dims, prt_dim_exprs *out_values,
                                prt_expr_builder *eb)
{
    int32_t n = in_values[0].nb_dims, op;
    const prt_expr *v;
    (void)nb_in;
    switch (o->cls->kind) {
    case RD_SUM:
        op = PRT_DIM_SUM;
        break;
    case RD_PROD:
        op = PRT_DIM_PROD;
        break;
    case RD_MAX:
        op = PRT_DIM_MAX;
        break;
    case RD_MIN:
        op = PRT_DIM_MIN;
        break;
    default:
        return PRT_OK;
    }
    /* A 0-D or 1-D input to one value: all of its values are reduced (the
     * identity of noop_with_empty_axes keeps more than one, or just one). */
    if (n < 1 || in_dims[0].nb_dims > 1 || op_static_count(eb, out_dims) != 1)
        return PRT_OK;
    v = in_values[0].d[0];
    for (int32_t i = 1; i < n && v; i++)
        v = eb->operation(eb, op, v, in_values[0].d[i]);
    out_values->d[0] = v;
    out_values->nb_dims = 1;
    return PRT_OK;
}

/* ---- classes ------------------------------------------------------------------ */

/* ReduceMax and ReduceMin also take int8 and uint8. */
#define RD_DT                                                                            \
    (EW_DT_FLOATS | OP_DT(PRT_INT32) | OP_DT(PRT_INT64) | OP_DT(PRT_FLOAT64) |           \
     OP_DT(PRT_UINT32))
#define RD_DT_ORDER (RD_DT | OP_DT(PRT_INT8) | OP_DT(PRT_UINT8))

#define RD_CLASS(k, dt)                                                                  \
    {                                                                                    \
        .kind = (k), .min_inputs = 1, .max_inputs = 1, .dtypes = (dt),                   \
        .size = sizeof(reduce_op), .alias_input = -1, .parse = reduce_parse,             \
        .serialize = reduce_serialize, .infer = reduce_infer,                            \
        .workspace = reduce_workspace, .run = reduce_run, .max_shape_inputs = 1,         \
        .shapes_sv = reduce_shapes, .values = reduce_values,                             \
    }

static const op_class rd_classes[] = {
    [RD_SUM] = RD_CLASS(RD_SUM, RD_DT),
    [RD_MEAN] = RD_CLASS(RD_MEAN, RD_DT),
    [RD_MAX] = RD_CLASS(RD_MAX, RD_DT_ORDER),
    [RD_MIN] = RD_CLASS(RD_MIN, RD_DT_ORDER),
    [RD_PROD] = RD_CLASS(RD_PROD, RD_DT),
    [RD_L1] = RD_CLASS(RD_L1, RD_DT),
    [RD_L2] = RD_CLASS(RD_L2, RD_DT),
    [RD_SUM_SQUARE] = RD_CLASS(RD_SUM_SQUARE, RD_DT),
    [RD_LOG_SUM] = RD_CLASS(RD_LOG_SUM, RD_DT),
    [RD_LOG_SUM_EXP] = RD_CLASS(RD_LOG_SUM_EXP, RD_DT),
};

static const prt_field_schema rd_schema[] = {
    {"axes", PRT_FIELD_INT32, -1,
     "the axes to reduce (the attribute of opsets before 13/18; later a shape input)"},
    {"keepdims", PRT_FIELD_INT32, 1, "1 (default): reduced dims stay as 1; 0: they go"},
    {"noop_with_empty_axes", PRT_FIELD_INT32, 1,
     "0 (default): no axes reduce all dims; 1: no axes give the input"},
};

#define RD_CREATOR(name, k) OP_CREATOR(name, rd_classes[k], rd_schema, 3)

const prt_plugin_creator op_reduce_sum_creator = RD_CREATOR("ReduceSum", RD_SUM);
const prt_plugin_creator op_reduce_mean_creator = RD_CREATOR("ReduceMean", RD_MEAN);
const prt_plugin_creator op_reduce_max_creator = RD_CREATOR("ReduceMax", RD_MAX);
const prt_plugin_creator op_reduce_min_creator = RD_CREATOR("ReduceMin", RD_MIN);
const prt_plugin_creator op_reduce_prod_creator = RD_CREATOR("ReduceProd", RD_PROD);
const prt_plugin_creator op_reduce_l1_creator = RD_CREATOR("ReduceL1", RD_L1);
const prt_plugin_creator op_reduce_l2_creator = RD_CREATOR("ReduceL2", RD_L2);
const prt_plugin_creator op_reduce_sum_square_creator =
    RD_CREATOR("ReduceSumSquare", RD_SUM_SQUARE);
const prt_plugin_creator op_reduce_log_sum_creator =
    RD_CREATOR("ReduceLogSum", RD_LOG_SUM);
const prt_plugin_creator op_reduce_log_sum_exp_creator =
    RD_CREATOR("ReduceLogSumExp", RD_LOG_SUM_EXP);
