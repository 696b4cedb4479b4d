/*
 * GridSample and RoiAlign (namespace "plugrt", version "1"): the ops that
 * read a feature map at fractional positions, interpolating between its
 * pixels. Each output element is computed by sample.h's code, which the
 * CUDA kernels share; sample.h also says how each handles NaN.
 *
 * GridSample, ONNX opsets 16 (2-D) and 20 (N-D): X [N, C, D1..Dr] and grid
 * [N, O1..Or, r] give Y [N, C, O1..Or], Y[n, c, o] read at X's position
 * grid[n, o] (coordinates in [-1, 1], the innermost axis first: (x, y) in
 * 2-D). Fields:
 *   mode           linear (opset 16: bilinear, default), nearest, cubic
 *                  (bicubic: Keys' kernel with a = -0.75)
 *   padding_mode   zeros (default), border, reflection: what taps outside
 *                  X read
 *   align_corners  int32 0 (default)/1: -1 and 1 are the edge pixels'
 *                  centers (1) or their outer edges (0)
 * dtypes: X float32, float16, bfloat16; grid any of those.
 *
 * RoiAlign, ONNX opsets 10 and 16: X [N, C, H, W], rois [R, 4] (x1, y1,
 * x2, y2 in X's coordinates times 1 / spatial_scale, X's dtype) and
 * batch_indices [R] (int64, int32 accepted) give Y [R, C, oh, ow]: each
 * output bin the average (or max) of bilinear samples on a regular grid in
 * it. Fields:
 *   mode                 avg (default), max (onnxruntime's: the largest
 *                        weighted corner of each sample, then the largest
 *                        sample)
 *   output_height, output_width   int32 >= 1, default 1
 *   sampling_ratio       int32 >= 0 (default 0: ceil(region / bins) points
 *                        per bin and axis)
 *   spatial_scale        float32, default 1
 *   coordinate_transformation_mode  half_pixel (default; opset 16),
 *                        output_half_pixel (opset 10's rule: no half-pixel
 *                        shift, regions at least 1 x 1; the importer sets it
 *                        below opset 16)
 * dtypes: float32, float16, bfloat16.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/parallel.h"
#include "ops/ops_ew.h"
#include "ops/ops_nn.h"
#include "ops/sample.h"
#include "ops/shape_ops.h"

/* A string field that must be one of names[] (NULL-terminated): its index,
 * or dflt when absent. alias[i], where not NULL, is a second name for
 * names[i] (GridSample's opset-16 names). */
static prt_status sample_enum(const op_fields *f, const char *field,
                              const char *const *names, const char *const *alias,
                              int32_t dflt, int32_t *out)
{
    char buf[32], list[160] = "";
    int32_t len;
    size_t n = 0;
    prt_status st = op_field_str(f, field, buf, sizeof buf, &len);
    *out = dflt;
    if (st || len < 0)
        return st;
    for (int32_t i = 0; names[i]; i++) {
        if (strcmp(buf, names[i]) == 0 ||
            (alias && alias[i] && strcmp(buf, alias[i]) == 0)) {
            *out = i;
            return PRT_OK;
        }
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", names[i]);
        if (n >= sizeof list)
            n = sizeof list - 1;
    }
    return op_fields_fail(f, PRT_ERR_UNSUPPORTED, "%s '%s' is not supported (%s)", field,
                          buf, list);
}

static void sample_ser_str(prt_field *f, const char *name, const char *s)
{
    op_ser(f, name, PRT_FIELD_CHAR, s, (int64_t)strlen(s));
}

static uint32_t sample_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)types;
    /* RoiAlign's batch_indices; GridSample's grid may be any float dtype. */
    if (index == 2)
        return OP_DT_INDEX;
    if (index == 1 && o->cls->kind == 1)
        return OP_DT(types[0]);
    return EW_DT_FLOATS;
}

/* ---- GridSample ----------------------------------------------------------- */

static const char *const gs_modes[] = {"linear", "nearest", "cubic", NULL};
static const char *const gs_modes16[] = {"bilinear", NULL, "bicubic", NULL};
static const char *const gs_pads[] = {"zeros", "border", "reflection", NULL};

typedef struct grid_sample_op {
    op_object o;
    int32_t mode, padding, align_corners;
} grid_sample_op;

static prt_status gs_parse(op_object *o, const op_fields *f)
{
    grid_sample_op *g = (grid_sample_op *)o;
    prt_status st = sample_enum(f, "mode", gs_modes, gs_modes16, OPK_GS_LINEAR, &g->mode);
    if (!st)
        st = sample_enum(f, "padding_mode", gs_pads, NULL, OPK_GS_ZEROS, &g->padding);
    if (!st)
        st = op_field_i32(f, "align_corners", 0, &g->align_corners);
    if (!st && g->align_corners & ~1)
        st = op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                            "align_corners is %d; it must be 0 or 1",
                            (int)g->align_corners);
    return st;
}

static int32_t gs_serialize(op_object *o, prt_field *ser)
{
    grid_sample_op *g = (grid_sample_op *)o;
    sample_ser_str(&ser[0], "mode", gs_modes[g->mode]);
    sample_ser_str(&ser[1], "padding_mode", gs_pads[g->padding]);
    op_ser(&ser[2], "align_corners", PRT_FIELD_INT32, &g->align_corners, 1);
    return 3;
}

/* The rank rules: X [N, C, D1..Dr] with r >= 1, grid of X's rank. */
static prt_status gs_ranks(const op_object *o, int32_t rx, int32_t rg)
{
    if (rx < 3)
        return op_fail(o, PRT_ERR_SHAPE,
                       "X has rank %d; it must be 3 or more ([N, C, spatial dims])",
                       (int)rx);
    if (rg != rx)
        return op_fail(o, PRT_ERR_SHAPE,
                       "grid has rank %d; it must be X's, %d ([N, output dims, %d])",
                       (int)rg, (int)rx, (int)(rx - 2));
    return PRT_OK;
}

static prt_status gs_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                            prt_dim_exprs *out, prt_expr_builder *eb)
{
    const int32_t rx = in[0].nb_dims;
    int64_t v;
    prt_status st = gs_ranks(o, rx, in[1].nb_dims);
    (void)nb_in;
    if (st)
        return st;
    if (eb->is_constant(eb, in[1].d[rx - 1], &v) && v != rx - 2)
        return op_fail(o, PRT_ERR_SHAPE,
                       "grid's last dim is %lld; it must be X's spatial rank, %d",
                       (long long)v, (int)(rx - 2));
    *out = in[1];
    out->d[0] = in[0].d[0];
    out->d[1] = in[0].d[1];
    for (int32_t i = 2; i < rx; i++)
        out->d[i] = in[1].d[i - 1];
    return PRT_OK;
}

static prt_status gs_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                           prt_dims *out)
{
    const int32_t rx = in[0].nb_dims;
    prt_status st = gs_ranks(o, rx, in[1].nb_dims);
    (void)nb_in;
    if (st)
        return st;
    if (in[1].d[rx - 1] != rx - 2)
        return op_fail(o, PRT_ERR_SHAPE,
                       "grid's last dim is %lld; it must be X's spatial rank, %d",
                       (long long)in[1].d[rx - 1], (int)(rx - 2));
    if (in[1].d[0] != in[0].d[0])
        return op_fail(o, PRT_ERR_SHAPE,
                       "grid's batch is %lld and X's %lld; they must match",
                       (long long)in[1].d[0], (long long)in[0].d[0]);
    *out = in[0];
    for (int32_t i = 2; i < rx; i++)
        out->d[i] = in[1].d[i - 1];
    if (base_volume(out) > 0)
        for (int32_t i = 2; i < rx; i++)
            if (in[0].d[i] == 0)
                return op_fail(o, PRT_ERR_SHAPE,
                               "X's spatial dim %d is 0; there is nothing to sample",
                               (int)(i - 2));
    return PRT_OK;
}

void gs_params_of(const op_object *o, const prt_tensor_desc *in, const prt_dims *yd,
                  struct opk_gs_params *p)
{
    const grid_sample_op *g = (const grid_sample_op *)o;
    memset(p, 0, sizeof *p);
    p->mode = g->mode;
    p->padding = g->padding;
    p->align_corners = g->align_corners;
    p->r = in[0].dims.nb_dims - 2;
    p->xdt = in[0].dtype;
    p->gdt = in[1].dtype;
    p->C = in[0].dims.d[1];
    p->in_vol = p->out_vol = 1;
    for (int32_t i = 0; i < p->r; i++) {
        p->in[i] = in[0].dims.d[i + 2];
        p->out[i] = yd->d[i + 2];
        p->in_vol *= p->in[i];
        p->out_vol *= p->out[i];
    }
}

typedef struct gs_job {
    const opk_gs_params *p;
    const void *x, *grid;
    void *y;
    int32_t ydt;
} gs_job;

static void gs_range(void *arg, int64_t begin, int64_t end)
{
    const gs_job *j = arg;
    for (int64_t e = begin; e < end; e++)
        opk_float_put(j->ydt, j->y, e, (float)opk_gs_at(j->p, j->x, j->grid, e));
}

static prt_status gs_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                         int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                         const void *const *x, void *const *y, void *ws, void *stream)
{
    opk_gs_params p;
    gs_job j;
    const int64_t n = base_volume(&out->dims);
    (void)nb_in, (void)nb_out, (void)ws, (void)stream;
    if (n == 0)
        return PRT_OK;
    gs_params_of(o, in, &out->dims, &p);
    j.p = &p;
    j.x = x[0];
    j.grid = x[1];
    j.y = y[0];
    j.ydt = dtype;
    base_parallel_for(n, OP_GRAIN_MATH / 8, gs_range, &j);
    return PRT_OK;
}

static const op_class gs_class = {
    .min_inputs = 2,
    .max_inputs = 2,
    .dtypes = EW_DT_FLOATS,
    .size = sizeof(grid_sample_op),
    .alias_input = -1,
    .parse = gs_parse,
    .serialize = gs_serialize,
    .shapes = gs_shapes,
    .infer = gs_infer,
    .run = gs_run,
    .in_dtypes = sample_in_dtypes,
};

static const prt_field_schema gs_schema[] = {
    {"mode", PRT_FIELD_CHAR, -1,
     "linear (or bilinear, default), nearest, cubic (bicubic)"},
    {"padding_mode", PRT_FIELD_CHAR, -1, "zeros (default), border, reflection"},
    {"align_corners", PRT_FIELD_INT32, 1, "0 (default) or 1"},
};

const prt_plugin_creator op_grid_sample_creator =
    OP_CREATOR("GridSample", gs_class, gs_schema, 3);

/* ---- RoiAlign ------------------------------------------------------------- */

static const char *const roi_modes[] = {"avg", "max", NULL};
static const char *const roi_ctms[] = {"half_pixel", "output_half_pixel", NULL};

typedef struct roi_align_op {
    op_object o;
    int32_t mode, ctm, oh, ow, sampling_ratio;
    float spatial_scale;
} roi_align_op;

static prt_status roi_parse(op_object *o, const op_fields *f)
{
    roi_align_op *r = (roi_align_op *)o;
    prt_status st = sample_enum(f, "mode", roi_modes, NULL, 0, &r->mode);
    if (!st)
        st = sample_enum(f, "coordinate_transformation_mode", roi_ctms, NULL, 0, &r->ctm);
    if (!st)
        st = op_field_i32(f, "output_height", 1, &r->oh);
    if (!st)
        st = op_field_i32(f, "output_width", 1, &r->ow);
    if (!st)
        st = op_field_i32(f, "sampling_ratio", 0, &r->sampling_ratio);
    if (!st)
        st = op_field_f32(f, "spatial_scale", 1.0f, &r->spatial_scale);
    if (st)
        return st;
    if (r->oh < 1 || r->ow < 1)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "output_height is %d and output_width %d; each must be 1 "
                              "or more",
                              (int)r->oh, (int)r->ow);
    if (r->sampling_ratio < 0)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "sampling_ratio is %d; it must be 0 (adaptive) or more",
                              (int)r->sampling_ratio);
    if (!isfinite(r->spatial_scale))
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "spatial_scale is %g; it must "
                              "be finite",
                              (double)r->spatial_scale);
    return PRT_OK;
}

static int32_t roi_serialize(op_object *o, prt_field *ser)
{
    roi_align_op *r = (roi_align_op *)o;
    sample_ser_str(&ser[0], "mode", roi_modes[r->mode]);
    sample_ser_str(&ser[1], "coordinate_transformation_mode", roi_ctms[r->ctm]);
    op_ser(&ser[2], "output_height", PRT_FIELD_INT32, &r->oh, 1);
    op_ser(&ser[3], "output_width", PRT_FIELD_INT32, &r->ow, 1);
    op_ser(&ser[4], "sampling_ratio", PRT_FIELD_INT32, &r->sampling_ratio, 1);
    op_ser(&ser[5], "spatial_scale", PRT_FIELD_FLOAT32, &r->spatial_scale, 1);
    return 6;
}

static prt_status roi_ranks(const op_object *o, const int32_t *r)
{
    if (r[0] != 4 || r[1] != 2 || r[2] != 1)
        return op_fail(o, PRT_ERR_SHAPE,
                       "X, rois and batch_indices have ranks %d, %d and %d; they must be "
                       "4 ([N, C, H, W]), 2 ([R, 4]) and 1 ([R])",
                       (int)r[0], (int)r[1], (int)r[2]);
    return PRT_OK;
}

static prt_status roi_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                             prt_dim_exprs *out, prt_expr_builder *eb)
{
    const roi_align_op *r = (const roi_align_op *)o;
    const int32_t ranks[3] = {in[0].nb_dims, in[1].nb_dims, in[2].nb_dims};
    int64_t v;
    prt_status st = roi_ranks(o, ranks);
    (void)nb_in;
    if (st)
        return st;
    if (eb->is_constant(eb, in[1].d[1], &v) && v != 4)
        return op_fail(o, PRT_ERR_SHAPE, "rois has %lld columns; it must have 4",
                       (long long)v);
    out->nb_dims = 4;
    out->d[0] = in[1].d[0];
    out->d[1] = in[0].d[1];
    out->d[2] = eb->constant(eb, r->oh);
    out->d[3] = eb->constant(eb, r->ow);
    return PRT_OK;
}

static prt_status roi_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                            prt_dims *out)
{
    const roi_align_op *r = (const roi_align_op *)o;
    const int32_t ranks[3] = {in[0].nb_dims, in[1].nb_dims, in[2].nb_dims};
    prt_status st = roi_ranks(o, ranks);
    (void)nb_in;
    if (st)
        return st;
    if (in[1].d[1] != 4)
        return op_fail(o, PRT_ERR_SHAPE, "rois has %lld columns; it must have 4",
                       (long long)in[1].d[1]);
    if (in[2].d[0] != in[1].d[0])
        return op_fail(
            o, PRT_ERR_SHAPE,
            "batch_indices has %lld values and rois %lld rows; they must match",
            (long long)in[2].d[0], (long long)in[1].d[0]);
    if (in[1].d[0] > 0 && in[0].d[1] > 0 && (in[0].d[2] == 0 || in[0].d[3] == 0))
        return op_fail(o, PRT_ERR_SHAPE,
                       "X's height or width is 0; there is nothing to "
                       "sample");
    out->nb_dims = 4;
    out->d[0] = in[1].d[0];
    out->d[1] = in[0].d[1];
    out->d[2] = r->oh;
    out->d[3] = r->ow;
    return PRT_OK;
}

void roi_params_of(const op_object *o, const prt_tensor_desc *in,
                   struct opk_roi_params *p)
{
    const roi_align_op *r = (const roi_align_op *)o;
    memset(p, 0, sizeof *p);
    p->xdt = in[0].dtype;
    p->idt = in[2].dtype;
    p->max_mode = r->mode == 1;
    p->half_pixel = r->ctm == 0;
    p->sampling_ratio = r->sampling_ratio;
    p->spatial_scale = (double)r->spatial_scale;
    p->N = in[0].dims.d[0];
    p->C = in[0].dims.d[1];
    p->H = in[0].dims.d[2];
    p->W = in[0].dims.d[3];
    p->oh = r->oh;
    p->ow = r->ow;
}

typedef struct roi_job {
    const opk_roi_params *p;
    const void *x, *rois, *bidx;
    void *y;
} roi_job;

static void roi_range(void *arg, int64_t begin, int64_t end)
{
    const roi_job *j = arg;
    for (int64_t e = begin; e < end; e++)
        opk_float_put(j->p->xdt, j->y, e,
                      (float)opk_roi_at(j->p, j->x, j->rois, j->bidx, e));
}

static prt_status roi_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *x, void *const *y, void *ws, void *stream)
{
    opk_roi_params p;
    roi_job j = {&p, x[0], x[1], x[2], y[0]};
    const int64_t n = base_volume(&out->dims), R = in[1].dims.d[0];
    (void)dtype, (void)nb_in, (void)nb_out, (void)ws, (void)stream;
    if (n == 0)
        return PRT_OK;
    roi_params_of(o, in, &p);
    /* What the kernel cannot refuse on another device is refused here. */
    for (int64_t k = 0; k < R; k++) {
        const int64_t b = opk_int_at(p.idt, x[2], k);
        double start[2], bin[2];
        int64_t gh, gw;
        if (b < 0 || b >= p.N)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "batch_indices[%lld] is %lld; X's batch has %lld images",
                           (long long)k, (long long)b, (long long)p.N);
        if (opk_roi_region(&p, x[1], k, start, bin, &gh, &gw) == 2)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "region %lld needs more than %d sampling points per output "
                           "bin; give sampling_ratio or smaller regions",
                           (long long)k, OPK_ROI_MAX_SAMPLES);
    }
    base_parallel_for(n, OP_GRAIN_MATH / 8, roi_range, &j);
    return PRT_OK;
}

static const op_class roi_class = {
    .kind = 1,
    .min_inputs = 3,
    .max_inputs = 3,
    .dtypes = EW_DT_FLOATS,
    .size = sizeof(roi_align_op),
    .alias_input = -1,
    .parse = roi_parse,
    .serialize = roi_serialize,
    .shapes = roi_shapes,
    .infer = roi_infer,
    .run = roi_run,
    .in_dtypes = sample_in_dtypes,
};

static const prt_field_schema roi_schema[] = {
    {"mode", PRT_FIELD_CHAR, -1, "avg (default) or max"},
    {"coordinate_transformation_mode", PRT_FIELD_CHAR, -1,
     "half_pixel (default) or output_half_pixel"},
    {"output_height", PRT_FIELD_INT32, 1, "bins down, >= 1 (default 1)"},
    {"output_width", PRT_FIELD_INT32, 1, "bins across, >= 1 (default 1)"},
    {"sampling_ratio", PRT_FIELD_INT32, 1,
     "points per bin and axis; 0 (default): adaptive"},
    {"spatial_scale", PRT_FIELD_FLOAT32, 1, "rois' scale into X (default 1)"},
};

const prt_plugin_creator op_roi_align_creator =
    OP_CREATOR("RoiAlign", roi_class, roi_schema, 6);
