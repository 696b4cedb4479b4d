/*
 * Resize (namespace "plugrt", version "1"): ONNX Resize at opsets 10-19 and
 * Upsample 7-9 (which the importer maps here), as ONNX's reference computes
 * it (onnx.reference's op_resize: each axis interpolated on its own, the
 * axes' weights multiplied).
 *
 * Inputs: X (rank r >= 1), and sizes (int32/int64) as a data input only when
 * keep_aspect_ratio_policy needs its values at run time, or scales (float32)
 * with the field scales_input 1. The output size comes from exactly one of:
 * the field `scales`, a shape input `sizes` (its values, as expressions), or
 * with scales_input a float32 shape input `scales` that is input 1 as well
 * (its values known at run time: O = floor(D * scale) is the expression
 * FLOOR_MUL_F32, and the run reads the scales from host memory). Both refer to `axes`
 * (default: all r axes); the other axes keep their size. scales:  O = floor(D * scale)
 * (exactly: a float32 scale is a binary fraction, so a dynamic D gives FLOOR_DIV(D * m,
 * 2^e)). sizes:   O = sizes, scale = O / D; with keep_aspect_ratio_policy not_larger
 * (not_smaller) one scale for the axes, the smallest (largest) of sizes / D, and O =
 * floor(scale * D + 0.5) (static dims only).
 *
 * Fields (ONNX attribute names; ints accepted as int32 or int64):
 *   mode                            nearest (default), linear, cubic
 *   coordinate_transformation_mode  half_pixel (default),
 *       half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric,
 *       tf_half_pixel_for_nn (opset 11), tf_crop_and_resize
 *   nearest_mode        round_prefer_floor (default), round_prefer_ceil,
 *                       floor, ceil
 *   cubic_coeff_a       float32, default -0.75
 *   exclude_outside     int32 0/1: linear and cubic taps outside X get
 *                       weight 0, the rest renormalized (nearest ignores it:
 *                       the reference's 0 / 0 there is no rule)
 *   extrapolation_value float32, default 0: tf_crop_and_resize's value
 *                       where the source lies outside X
 *   antialias           int32 0/1: linear and cubic widen their filter by
 *                       1 / scale when downsampling (normalized weights)
 *   axes                int32[], optional, in [-r, r-1], distinct
 *   keep_aspect_ratio_policy  stretch (default), not_larger, not_smaller
 *   scales              float32[] > 0 (from a constant input or Upsample's
 *                       attribute)
 *   roi                 float32[2 x axes]: begins, then ends, normalized;
 *                       tf_crop_and_resize only (default 0s and 1s)
 * A node that would need more than OP_MAX_FIELDS of them (cubic, crop,
 * antialias, axes and more, all at once) is refused at creation.
 *
 * Source coordinate of output index x (scale s, D in, O out, W = s D):
 * half_pixel (x + 0.5) / s - 0.5; pytorch_half_pixel the same but -0.5
 * when W is 1; half_pixel_symmetric adds D/2 (1 - O / W); align_corners
 * x (D - 1) / (W - 1) (0 when W is 1); asymmetric x / s;
 * tf_half_pixel_for_nn (x + 0.5) / s; tf_crop_and_resize
 * roi_b (D - 1) + x (roi_e - roi_b)(D - 1) / (W - 1). With base =
 * ceil(src) - 1 and ratio = src - base (in (0, 1]): nearest takes base or
 * base + 1 by nearest_mode (ratio 1: base + 1); linear weights 1 - ratio,
 * ratio; cubic Keys' kernel with cubic_coeff_a on base - 1 .. base + 2.
 * Taps outside X read its edge.
 *
 * dtypes: float32, float16, bfloat16; nearest also int8, uint8, int32,
 * int64 (it copies elements). Weights and sums are in double, each output
 * rounded once; half floats are converted to float32 in the workspace.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/parallel.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/ops_nn.h"
#include "ops/resize_taps.h"

static const char *const rs_modes[] = {"nearest", "linear", "cubic", NULL};
static const char *const rs_ctms[] = {
    "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
    "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize", NULL};
static const char *const rs_nearest[] = {"round_prefer_floor", "round_prefer_ceil",
                                         "floor", "ceil", NULL};
static const char *const rs_keeps[] = {"stretch", "not_larger", "not_smaller", NULL};

#define RS_MAX_ROI (2 * PRT_MAX_DIMS)

typedef struct resize_op {
    op_object o;
    int32_t mode, ctm, nearest, keep;
    float cubic_a, extrapolation;
    int32_t exclude_outside, antialias;
    int32_t nb_axes, axes[PRT_MAX_DIMS]; /* 0: all */
    int32_t nb_scales;                   /* -1: none (sizes, or scales_in) */
    int32_t scales_in;                   /* 1: scales is input 1, a float32 shape input */
    float scales[PRT_MAX_DIMS];
    int32_t nb_roi; /* -1: none */
    float roi[RS_MAX_ROI];
} resize_op;

static const resize_op *crs(const op_object *o)
{
    return (const resize_op *)o;
}

/* The fields the taps depend on (resize_taps.h). */
static rs_params rs_params_of(const resize_op *r)
{
    rs_params p = {
        r->mode,           r->ctm, r->nearest, r->keep, r->exclude_outside, r->antialias,
        (double)r->cubic_a};
    return p;
}

/* A string field that must be one of names[] (NULL-terminated). */
static prt_status rs_enum(op_object *o, const op_fields *f, const char *field,
                          const char *const *names, int32_t *out)
{
    char buf[32], list[160] = "";
    int32_t len;
    size_t n = 0;
    prt_status st = op_field_str(f, field, buf, sizeof buf, &len);
    if (st)
        return st;
    *out = 0;
    if (len < 0)
        return PRT_OK;
    for (int32_t i = 0; names[i]; i++) {
        if (strcmp(buf, names[i]) == 0) {
            *out = i;
            return PRT_OK;
        }
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", names[i]);
        if (n >= sizeof list)
            n = sizeof list - 1;
    }
    return op_fail(o, PRT_ERR_UNSUPPORTED, "%s '%s' is not supported (%s)", field, buf,
                   list);
}

/* The fields rs_serialize writes for this object. */
static int32_t rs_nb_fields(const resize_op *r)
{
    int32_t n = 2; /* mode, coordinate_transformation_mode */
    n += r->mode == RS_NEAREST && r->nearest != RS_ROUND_PREFER_FLOOR;
    n += r->mode == RS_CUBIC && r->cubic_a != -0.75f;
    n += r->mode != RS_NEAREST && r->exclude_outside;
    n += r->mode != RS_NEAREST && r->antialias;
    n += r->ctm == RS_TF_CROP_AND_RESIZE && r->extrapolation != 0.0f;
    n += r->ctm == RS_TF_CROP_AND_RESIZE && r->nb_roi >= 0;
    n += r->nb_axes > 0;
    n += r->keep != RS_STRETCH;
    n += r->nb_scales >= 0;
    n += r->scales_in;
    return n;
}

static prt_status rs_parse(op_object *o, const op_fields *f)
{
    resize_op *r = (resize_op *)o;
    int32_t n;
    prt_status st = rs_enum(o, f, "mode", rs_modes, &r->mode);
    if (!st)
        st = rs_enum(o, f, "coordinate_transformation_mode", rs_ctms, &r->ctm);
    if (!st)
        st = rs_enum(o, f, "nearest_mode", rs_nearest, &r->nearest);
    if (!st)
        st = rs_enum(o, f, "keep_aspect_ratio_policy", rs_keeps, &r->keep);
    if (!st)
        st = op_field_f32(f, "cubic_coeff_a", -0.75f, &r->cubic_a);
    if (!st)
        st = op_field_f32(f, "extrapolation_value", 0.0f, &r->extrapolation);
    if (!st)
        st = op_field_i32(f, "exclude_outside", 0, &r->exclude_outside);
    if (!st)
        st = op_field_i32(f, "antialias", 0, &r->antialias);
    if (!st)
        st = op_field_i32(f, "scales_input", 0, &r->scales_in);
    if (!st && (r->exclude_outside & ~1 || r->antialias & ~1 || r->scales_in & ~1))
        st = op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                     "exclude_outside is %d, antialias %d and scales_input %d; each "
                     "must be 0 or 1",
                     (int)r->exclude_outside, (int)r->antialias, (int)r->scales_in);
    if (!st)
        st = op_field_i32_array(f, "axes", r->axes, PRT_MAX_DIMS, &n);
    if (st)
        return st;
    r->nb_axes = n < 0 ? 0 : n;
    st = op_field_f32_array(f, "scales", r->scales, PRT_MAX_DIMS, &r->nb_scales);
    if (!st)
        st = op_field_f32_array(f, "roi", r->roi, RS_MAX_ROI, &r->nb_roi);
    if (st)
        return st;
    if (r->nb_scales == 0)
        r->nb_scales = -1; /* an empty scales is none */
    if (r->nb_roi == 0)
        r->nb_roi = -1;
    for (int32_t i = 0; i < r->nb_scales; i++)
        if (!(r->scales[i] > 0.0f) || isinf(r->scales[i]))
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "scales[%d] is %g; scales must be finite and > 0", (int)i,
                           (double)r->scales[i]);
    for (int32_t i = 0; i < r->nb_axes; i++)
        for (int32_t j = 0; j < i; j++)
            if (r->axes[i] == r->axes[j])
                return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "axes holds %d twice",
                               (int)r->axes[i]);
    if (r->scales_in && (r->nb_scales >= 0 || r->keep != RS_STRETCH))
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "scales_input takes scales from input 1, so neither a scales "
                       "field nor keep_aspect_ratio_policy %s goes with it",
                       rs_keeps[r->keep]);
    if (r->nb_scales >= 0 && r->nb_axes && r->nb_scales != r->nb_axes)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "scales has %d values for %d axes",
                       (int)r->nb_scales, (int)r->nb_axes);
    if (r->ctm == RS_TF_CROP_AND_RESIZE && r->nb_roi >= 0 && r->nb_axes &&
        r->nb_roi != 2 * r->nb_axes)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "roi has %d values for %d axes",
                       (int)r->nb_roi, (int)r->nb_axes);
    if (rs_nb_fields(r) > OP_MAX_FIELDS)
        return op_fail(o, PRT_ERR_UNSUPPORTED,
                       "this combination needs %d fields besides their defaults; a "
                       "built-in op keeps at most %d",
                       (int)rs_nb_fields(r), OP_MAX_FIELDS);
    return PRT_OK;
}

static int32_t rs_serialize(op_object *o, prt_field *ser)
{
    resize_op *r = (resize_op *)o;
    int32_t n = 0;
    const char *s;
    s = rs_modes[r->mode];
    op_ser(&ser[n++], "mode", PRT_FIELD_CHAR, s, (int64_t)strlen(s));
    s = rs_ctms[r->ctm];
    op_ser(&ser[n++], "coordinate_transformation_mode", PRT_FIELD_CHAR, s,
           (int64_t)strlen(s));
    if (r->mode == RS_NEAREST && r->nearest != RS_ROUND_PREFER_FLOOR) {
        s = rs_nearest[r->nearest];
        op_ser(&ser[n++], "nearest_mode", PRT_FIELD_CHAR, s, (int64_t)strlen(s));
    }
    if (r->mode == RS_CUBIC && r->cubic_a != -0.75f)
        op_ser(&ser[n++], "cubic_coeff_a", PRT_FIELD_FLOAT32, &r->cubic_a, 1);
    if (r->mode != RS_NEAREST && r->exclude_outside)
        op_ser(&ser[n++], "exclude_outside", PRT_FIELD_INT32, &r->exclude_outside, 1);
    if (r->mode != RS_NEAREST && r->antialias)
        op_ser(&ser[n++], "antialias", PRT_FIELD_INT32, &r->antialias, 1);
    if (r->ctm == RS_TF_CROP_AND_RESIZE && r->extrapolation != 0.0f)
        op_ser(&ser[n++], "extrapolation_value", PRT_FIELD_FLOAT32, &r->extrapolation, 1);
    if (r->ctm == RS_TF_CROP_AND_RESIZE && r->nb_roi >= 0)
        op_ser(&ser[n++], "roi", PRT_FIELD_FLOAT32, r->roi, r->nb_roi);
    if (r->nb_axes > 0)
        op_ser(&ser[n++], "axes", PRT_FIELD_INT32, r->axes, r->nb_axes);
    if (r->keep != RS_STRETCH) {
        s = rs_keeps[r->keep];
        op_ser(&ser[n++], "keep_aspect_ratio_policy", PRT_FIELD_CHAR, s,
               (int64_t)strlen(s));
    }
    if (r->nb_scales >= 0)
        op_ser(&ser[n++], "scales", PRT_FIELD_FLOAT32, r->scales, r->nb_scales);
    if (r->scales_in)
        op_ser(&ser[n++], "scales_input", PRT_FIELD_INT32, &r->scales_in, 1);
    return n;
}

/* Nearest copies any of these; linear and cubic compute in floats. */
#define RS_DT_FLOAT (OP_DT_FLOAT | OP_DT(PRT_BFLOAT16))
#define RS_DT_ALL                                                                        \
    (RS_DT_FLOAT | OP_DT(PRT_INT8) | OP_DT(PRT_UINT8) | OP_DT(PRT_INT32) |               \
     OP_DT(PRT_INT64))

static uint32_t rs_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)types;
    if (index == 0)
        return crs(o)->mode == RS_NEAREST ? RS_DT_ALL : RS_DT_FLOAT;
    if (crs(o)->scales_in)
        return OP_DT(PRT_FLOAT32);
    return OP_DT(PRT_INT32) | OP_DT(PRT_INT64); /* sizes */
}

/* axis_of[i] for every axis of X (rank r): the index into scales/sizes/roi
 * of axis i, or -1 for an axis not resized. */
static prt_status rs_axes(const op_object *o, int32_t r, int32_t nb_vals,
                          const char *what, int32_t *axis_of)
{
    const resize_op *rs = crs(o);
    int32_t want = rs->nb_axes ? rs->nb_axes : r;
    for (int32_t i = 0; i < r; i++)
        axis_of[i] = rs->nb_axes ? -1 : i;
    for (int32_t j = 0; j < rs->nb_axes; j++) {
        int32_t a;
        prt_status st = op_axis(o, rs->axes[j], r, 0, "X", &a);
        if (st)
            return st;
        if (axis_of[a] >= 0)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "axes names axis %d twice (as %d and %d)", (int)a,
                           (int)rs->axes[axis_of[a]], (int)rs->axes[j]);
        axis_of[a] = j;
    }
    if (nb_vals != want)
        return op_fail(
            o, PRT_ERR_SHAPE, "%s has %d values; X of rank %d with %s needs %d", what,
            (int)nb_vals, (int)r, rs->nb_axes ? "these axes" : "no axes", (int)want);
    if (rs->ctm == RS_TF_CROP_AND_RESIZE && rs->nb_roi >= 0 && rs->nb_roi != 2 * want)
        return op_fail(o, PRT_ERR_SHAPE, "roi has %d values; it needs %d (begins, ends)",
                       (int)rs->nb_roi, (int)(2 * want));
    return PRT_OK;
}

/* floor(D * s) for a positive float32 s, as an expression: s is m / 2^e
 * exactly. */
static prt_status rs_scaled_expr(op_object *o, prt_expr_builder *eb, const prt_expr *d,
                                 float s, const prt_expr **out)
{
    int e2;
    double f = frexp((double)s, &e2); /* s = f 2^e2, f in [0.5, 1) */
    int64_t m = (int64_t)ldexp(f, 24), vd;
    int32_t e = 24 - e2;
    if (eb->is_constant(eb, d, &vd)) {
        *out = eb->constant(eb, (int64_t)floor((double)vd * (double)s));
        return PRT_OK;
    }
    while (e > 0 && m % 2 == 0) {
        m /= 2;
        e--;
    }
    if (e <= 0) {
        *out = eb->operation(eb, PRT_DIM_PROD, d,
                             eb->constant(eb, (int64_t)ldexp(1.0, -e) * m));
        return PRT_OK;
    }
    if (e > 40)
        return op_fail(o, PRT_ERR_UNSUPPORTED,
                       "scale %g of a dynamic dim is not supported (too fine a fraction)",
                       (double)s);
    *out = eb->operation(eb, PRT_DIM_FLOOR_DIV,
                         eb->operation(eb, PRT_DIM_PROD, d, eb->constant(eb, m)),
                         eb->constant(eb, (int64_t)1 << e));
    return PRT_OK;
}

static prt_status rs_shapes_sv(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                               const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                               prt_expr_builder *eb)
{
    const resize_op *r = crs(o);
    const prt_dim_exprs *x = &in[0];
    int32_t rank = x->nb_dims, axis_of[PRT_MAX_DIMS];
    prt_status st;
    (void)nb_in;
    if (rank < 1)
        return op_fail(o, PRT_ERR_SHAPE, "X must have rank 1 or more, not be a scalar");
    if ((r->nb_scales >= 0) == (nb_sv > 0))
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       r->nb_scales >= 0 ? "both scales and sizes are given; give one"
                                         : "neither scales nor sizes is given");
    st = rs_axes(o, rank, r->nb_scales >= 0 ? r->nb_scales : sv[0].nb_dims,
                 r->nb_scales >= 0 || r->scales_in ? "scales" : "sizes", axis_of);
    if (st)
        return st;
    *out = *x;
    if (r->scales_in) {
        /* floor(D * scale), the scale a float32 value known at run time
         * (its order key); one known now is checked now. */
        for (int32_t i = 0; i < rank; i++) {
            int64_t key;
            const prt_expr *v;
            if (axis_of[i] < 0)
                continue;
            v = sv[0].d[axis_of[i]];
            if (eb->is_constant(eb, v, &key)) {
                float f = base_key_f32(key);
                if (!(f > 0.0f) || isinf(f))
                    return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                                   "scales[%d] is %g; scales must be finite and > 0",
                                   (int)axis_of[i], (double)f);
            }
            out->d[i] = eb->operation(eb, PRT_DIM_FLOOR_MUL_F32, x->d[i], v);
            if (!out->d[i])
                return op_fail(o, PRT_ERR_SHAPE,
                               "the output's dim %d (X's dim times scales[%d]) has no "
                               "expression: the scale overflows it",
                               (int)i, (int)axis_of[i]);
        }
        return PRT_OK;
    }
    if (r->nb_scales >= 0) {
        for (int32_t i = 0; i < rank && !st; i++)
            if (axis_of[i] >= 0)
                st = rs_scaled_expr(o, eb, x->d[i], r->scales[axis_of[i]], &out->d[i]);
        return st;
    }
    if (r->keep == RS_STRETCH) {
        for (int32_t i = 0; i < rank; i++)
            if (axis_of[i] >= 0)
                out->d[i] = sv[0].d[axis_of[i]];
        return PRT_OK;
    }
    {
        int64_t sizes[PRT_MAX_DIMS], dims[PRT_MAX_DIMS];
        double s;
        for (int32_t j = 0; j < sv[0].nb_dims; j++)
            if (!eb->is_constant(eb, sv[0].d[j], &sizes[j]))
                return op_fail(o, PRT_ERR_UNSUPPORTED,
                               "keep_aspect_ratio_policy %s needs sizes known when the "
                               "network is built",
                               rs_keeps[r->keep]);
        for (int32_t i = 0; i < rank; i++)
            if (axis_of[i] >= 0 &&
                (!eb->is_constant(eb, x->d[i], &dims[i]) || dims[i] < 1))
                return op_fail(o, PRT_ERR_UNSUPPORTED,
                               "keep_aspect_ratio_policy %s needs X's resized dims "
                               "static and non-empty",
                               rs_keeps[r->keep]);
        {
            rs_params rp = rs_params_of(r);
            s = rs_keep_scale(&rp, rank, axis_of, sizes, PRT_INT64, dims);
        }
        for (int32_t i = 0; i < rank; i++)
            if (axis_of[i] >= 0)
                out->d[i] = eb->constant(eb, (int64_t)(s * (double)dims[i] + 0.5));
    }
    return PRT_OK;
}

/* ---- the taps of one axis ----------------------------------------------- */

/* Workspace bound of one axis: its tables for these dims, never less than
 * what smaller dims need (the builder sizes for the profile's maxima). With
 * scales, or without antialias, the width is known and the tables are out
 * rows of it. From sizes with antialias the scale is out / in, so a row's
 * raw taps 2 - 2 floor(-R/s) - 2 <= 2 + 2 R in / out give out * width <=
 * 2 out + 4 in; keep_aspect_ratio_policy's scale is anything, so in
 * bounds the width there. */
static int64_t rs_axis_bound(const resize_op *r, int32_t j, int64_t in, int64_t out)
{
    const rs_params rp = rs_params_of(r);
    int64_t weights, n, cap;
    if (!base_mul_i64(out, in > 0 ? in : 1, &cap))
        return -1;
    if (r->nb_scales >= 0 && j >= 0)
        n = rs_axis_width(&rp, r->scales[j], in);
    else if (r->mode == RS_NEAREST || !r->antialias || j < 0)
        n = rs_axis_width(&rp, 1.0, in);
    else
        n = -1;
    if (n >= 0)
        weights = out * n;
    else if (r->keep != RS_STRETCH)
        weights = cap;
    else
        weights = 2 * out + 4 * in < cap ? 2 * out + 4 * in : cap;
    /* lo and cnt per row (int64), then the weights (double). */
    if (!base_add_i64(weights, 2 * out, &n) || !base_mul_i64(n, 8, &n))
        return -1;
    return n;
}

static int64_t rs_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                            int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    const resize_op *r = crs(o);
    int32_t rank = in[0].nb_dims, axis_of[PRT_MAX_DIMS];
    int64_t n = 0, v;
    (void)nb_in;
    if (rank < 1 || out->nb_dims != rank)
        return 0;
    for (int32_t i = 0; i < rank; i++)
        axis_of[i] = r->nb_axes ? -1 : i;
    for (int32_t j = 0; j < r->nb_axes; j++) {
        int32_t a = r->axes[j] < 0 ? r->axes[j] + rank : r->axes[j];
        if (a >= 0 && a < rank)
            axis_of[a] = j;
    }
    for (int32_t i = 0; i < rank; i++) {
        v = rs_axis_bound(r, axis_of[i], in[0].d[i], out->d[i]);
        if (v < 0 || !base_add_i64(n, v, &n))
            return -1;
    }
    if (r->mode != RS_NEAREST && dtype != PRT_FLOAT32) {
        v = base_volume(&in[0]);
        if (v < 0 || !base_mul_i64(v, (int64_t)sizeof(float), &v) ||
            !base_add_i64(n, v, &n))
            return -1;
    }
    return n;
}

prt_status rs_plan_make(const op_object *o, const prt_tensor_desc *in, int32_t nb_in,
                        const prt_dims *yd, const void *sizes, rs_plan *pl)
{
    const resize_op *r = crs(o);
    const prt_dims *xd = &in[0].dims;
    int32_t rank = xd->nb_dims, *axis_of = pl->axis_of;
    double keep = 0.0;
    char a[128], b[128];
    /* The counts were checked at build time. */
    int32_t nb_vals = r->nb_scales >= 0 ? r->nb_scales : r->nb_axes ? r->nb_axes : rank;
    prt_status st =
        rs_axes(o, rank, nb_vals, r->nb_scales >= 0 || r->scales_in ? "scales" : "sizes",
                axis_of);
    if (st)
        return st;
    if (r->scales_in) {
        if (nb_in < 2 || base_volume(&in[1].dims) != nb_vals ||
            in[1].dtype != PRT_FLOAT32)
            return op_fail(o, PRT_ERR_SHAPE, "scales (input 1) must be %d float32 values",
                           (int)nb_vals);
        if (!sizes)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "scales (input 1) must be in host memory: it is a shape "
                           "input");
    }
    pl->p = rs_params_of(r);
    pl->rank = rank;
    pl->extrapolation = r->extrapolation;
    pl->keep_on_device = 0;
    if (r->keep != RS_STRETCH) {
        if (nb_in < 2)
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "keep_aspect_ratio_policy %s needs sizes as its second input",
                           rs_keeps[r->keep]);
        if (base_volume(&in[1].dims) != nb_vals)
            return op_fail(o, PRT_ERR_SHAPE, "sizes has %lld values; it needs %d",
                           (long long)base_volume(&in[1].dims), (int)nb_vals);
        for (int32_t i = 0; i < rank; i++)
            if (axis_of[i] >= 0 && xd->d[i] < 1)
                return op_fail(o, PRT_ERR_SHAPE, "X's dim %d is empty", (int)i);
        /* Without the sizes on the host, the device computes the scale
         * (rs_keep_scale) and the output's dims are those the same sizes
         * gave at build time. */
        if (sizes)
            keep = rs_keep_scale(&pl->p, rank, axis_of, sizes, in[1].dtype, xd->d);
        else
            pl->keep_on_device = 1;
    }
    for (int32_t i = 0; i < rank; i++) {
        int32_t j = axis_of[i];
        int64_t want;
        rs_axis *ax = &pl->ax[i];
        ax->in = xd->d[i];
        ax->out = yd->d[i];
        ax->roi_b = 0.0;
        ax->roi_e = 1.0;
        if (j >= 0 && r->ctm == RS_TF_CROP_AND_RESIZE && r->nb_roi >= 0) {
            int32_t na = r->nb_roi / 2;
            ax->roi_b = r->roi[j];
            ax->roi_e = r->roi[na + j];
        }
        if (j < 0) {
            ax->scale = 1.0;
            want = xd->d[i];
        } else if (r->nb_scales >= 0) {
            ax->scale = r->scales[j];
            want = (int64_t)floor((double)xd->d[i] * ax->scale);
        } else if (r->scales_in) {
            float f = ((const float *)sizes)[j];
            if (!(f > 0.0f) || isinf(f) || !base_floor_mul_f32(xd->d[i], f, &want))
                return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                               "scales[%d] is %g; scales must be finite and > 0", (int)j,
                               (double)f);
            ax->scale = f;
        } else if (pl->keep_on_device) {
            ax->scale = 0.0; /* set on the device */
            want = yd->d[i];
        } else if (r->keep != RS_STRETCH) {
            ax->scale = keep;
            want = (int64_t)(keep * (double)xd->d[i] + 0.5);
        } else {
            ax->scale = xd->d[i] ? (double)yd->d[i] / (double)xd->d[i] : 1.0;
            want = yd->d[i];
        }
        if (want != yd->d[i])
            return op_fail(o, PRT_ERR_SHAPE,
                           "output dims %s do not follow from X %s (dim %d: %lld)",
                           base_dims_format(yd, BASE_DIMS_LIST, a, sizeof a),
                           base_dims_format(xd, BASE_DIMS_LIST, b, sizeof b), (int)i,
                           (long long)want);
        if (xd->d[i] == 0 && yd->d[i] > 0)
            return op_fail(o, PRT_ERR_SHAPE,
                           "X's dim %d is empty but the output's is %lld", (int)i,
                           (long long)yd->d[i]);
        /* An unknown scale: the widest list an axis can have (the
         * workspace's bound for keep_aspect_ratio_policy). */
        ax->taps =
            pl->keep_on_device && j >= 0 && r->antialias
                ? (ax->in > 0 ? ax->in : 1)
                : rs_axis_width(&pl->p, pl->keep_on_device && j >= 0 ? 1.0 : ax->scale,
                                ax->in);
    }
    return PRT_OK;
}

void *rs_plan_place(rs_plan *pl, void *ws)
{
    uint8_t *w = ws;
    for (int32_t i = 0; i < pl->rank; i++) {
        rs_axis *ax = &pl->ax[i];
        ax->lo = (int64_t *)(void *)w;
        ax->cnt = ax->lo + ax->out;
        ax->w = (double *)(void *)(ax->cnt + ax->out);
        w = (uint8_t *)(ax->w + ax->out * ax->taps);
    }
    return w;
}

/* ---- run ---------------------------------------------------------------- */

typedef struct rs_run_ctx {
    int32_t rank;
    const rs_axis *ax;
    int64_t stride[PRT_MAX_DIMS]; /* X's row-major strides */
    const float *x;
} rs_run_ctx;

/* The weighted sum over axes a.. of X's taps, from element offset `off`. */
static double rs_sum(const rs_run_ctx *c, int32_t a, const int64_t *o, int64_t off)
{
    const rs_axis *ax = &c->ax[a];
    const double *w = ax->w + o[a] * ax->taps;
    int64_t lo = ax->lo[o[a]], n = ax->cnt[o[a]];
    double acc = 0.0;
    if (a == c->rank - 1) {
        const float *xr = c->x + off + lo;
        for (int64_t k = 0; k < n; k++)
            acc += w[k] * (double)xr[k];
        return acc;
    }
    for (int64_t k = 0; k < n; k++)
        if (w[k] != 0.0)
            acc += w[k] * rs_sum(c, a + 1, o, off + (lo + k) * c->stride[a]);
    return acc;
}

/* The common case (bilinear or bicubic over the last two axes, the axes
 * before them untouched) as planes: the sum of rs_sum without its
 * recursion and per-element index walk, threaded over the planes. Each
 * element is the same double operations in the same order (an untouched
 * axis' one tap of weight 1 adds v to 0.0, which changes nothing but the
 * sign of a zero, and the inner sums start from 0.0 already), so the
 * same bits as rs_sum. The inner sums (along x) depend on the input row
 * and the output column only, so rs_planes_row computes each once a plane
 * and keeps a few rows of them: a bilinear x4 upscale (DeepLab's last
 * layer) then does 2 products an output along y and 2 per input row and
 * output column along x, where each output took 6 and two row walks. */
typedef struct rs_planes {
    const rs_plan *pl;
    const float *x;
    void *y;
    int32_t dtype;
    int64_t ih, iw, oh, ow;
    int extrap; /* some output row or column has no taps (extrapolation) */
} rs_planes;

/* Rows of horizontal sums a plane keeps (bicubic's 4 taps a column), and
 * the widest output they hold: 4 x 1024 doubles, 32 KB of a thread's stack. */
#define RS_ROWS 4
#define RS_ROW_MAX 1024

/* Input row iy of plane xp summed along x for every output column: the
 * inner sum of rs_planes_elem, the same operations in the same order. */
static inline CPU_INLINE void rs_hrow(const rs_axis *axx, const float *xp, int64_t iw,
                                      int64_t iy, int64_t ow, double *row)
{
    const float *xr = xp + iy * iw;
    if (axx->taps == 2) {
        /* Linear's two taps unrolled (the loop below on two: the same
         * operations); a column with fewer takes the loop. */
        for (int64_t ox = 0; ox < ow; ox++) {
            const double *wx = axx->w + ox * 2;
            const float *xs = xr + axx->lo[ox];
            if (axx->cnt[ox] == 2)
                row[ox] = (0.0 + wx[0] * (double)xs[0]) + wx[1] * (double)xs[1];
            else
                row[ox] = axx->cnt[ox] == 1 ? 0.0 + wx[0] * (double)xs[0] : 0.0;
        }
        return;
    }
    for (int64_t ox = 0; ox < ow; ox++) {
        const double *wx = axx->w + ox * axx->taps;
        const float *xs = xr + axx->lo[ox];
        double r = 0.0;
        for (int64_t j = 0; j < axx->cnt[ox]; j++)
            r += wx[j] * (double)xs[j];
        row[ox] = r;
    }
}

/* Output row oy of a plane from the horizontal sums of its input rows,
 * each computed once a plane (an upscale by 4 reads each input row for
 * four output rows) and kept in `rows` (slot iy % RS_ROWS, tag the row it
 * holds). The weighted sum over y is rs_planes_elem's: the rows of weight
 * 0 skipped, the others added to 0.0 in tap order. */
static inline CPU_INLINE void rs_planes_row(const rs_planes *c, const float *xp,
                                            int64_t oy, int64_t q,
                                            double (*rows)[RS_ROW_MAX], int64_t *tag)
{
    const rs_axis *ay = &c->pl->ax[c->pl->rank - 2], *axx = &c->pl->ax[c->pl->rank - 1];
    const double *wy = ay->w + oy * ay->taps, *lr[RS_ROWS];
    double lw[RS_ROWS];
    int64_t ly = ay->lo[oy], ny = ay->cnt[oy], live = 0;
    for (int64_t k = 0; k < ny; k++) {
        int64_t iy = ly + k, slot = iy % RS_ROWS;
        if (wy[k] == 0.0)
            continue;
        if (tag[slot] != iy) {
            rs_hrow(axx, xp, c->iw, iy, c->ow, rows[slot]);
            tag[slot] = iy;
        }
        lr[live] = rows[slot];
        lw[live++] = wy[k];
    }
    if (c->dtype == PRT_FLOAT32 && live == 2) {
        /* restrict: the rows are the caller's stack, Y the output, so the
         * loop vectorizes (it stayed scalar through lr[]). */
        float *restrict y = (float *)c->y + q;
        const double *restrict r0 = lr[0], *restrict r1 = lr[1];
        const double w0 = lw[0], w1 = lw[1];
        for (int64_t ox = 0; ox < c->ow; ox++)
            y[ox] = (float)((0.0 + w0 * r0[ox]) + w1 * r1[ox]);
    } else {
        for (int64_t ox = 0; ox < c->ow; ox++) {
            double acc = 0.0;
            for (int64_t m = 0; m < live; m++)
                acc += lw[m] * lr[m][ox];
            rs_store(c->dtype, c->y, q + ox, acc);
        }
    }
    for (int64_t ox = 0; c->extrap && ox < c->ow; ox++)
        if (ny == 0 || axx->cnt[ox] == 0)
            rs_store(c->dtype, c->y, q + ox, c->pl->extrapolation);
}

/* Element (oy, ox) of a plane: rs_sum's two innermost levels. */
static inline CPU_INLINE double rs_planes_elem(const rs_planes *c, const float *xp,
                                               int64_t oy, int64_t ox)
{
    const rs_axis *ay = &c->pl->ax[c->pl->rank - 2], *axx = &c->pl->ax[c->pl->rank - 1];
    const double *wy = ay->w + oy * ay->taps, *wx = axx->w + ox * axx->taps;
    int64_t ly = ay->lo[oy], ny = ay->cnt[oy], lx = axx->lo[ox], nx = axx->cnt[ox];
    double acc = 0.0;
    for (int64_t k = 0; k < ny; k++) {
        const float *xr = xp + (ly + k) * c->iw + lx;
        double r = 0.0;
        if (wy[k] == 0.0)
            continue;
        for (int64_t j = 0; j < nx; j++)
            r += wx[j] * (double)xr[j];
        acc += wy[k] * r;
    }
    return acc;
}

static inline CPU_INLINE void rs_planes_body(void *arg, int64_t begin, int64_t end)
{
    const rs_planes *c = arg;
    const rs_axis *ay = &c->pl->ax[c->pl->rank - 2], *axx = &c->pl->ax[c->pl->rank - 1];
    /* Rows of sums fit when a column's taps and the width do (linear and
     * cubic always have them but for antialiased downscales). */
    const int cached = ay->taps <= RS_ROWS && c->ow <= RS_ROW_MAX;
    double rows[RS_ROWS][RS_ROW_MAX];
    for (int64_t p = begin; p < end; p++) {
        const float *xp = c->x + p * c->ih * c->iw;
        int64_t q = p * c->oh * c->ow, tag[RS_ROWS];
        for (int32_t k = 0; k < RS_ROWS; k++)
            tag[k] = -1; /* a new plane: no row kept */
        for (int64_t oy = 0; oy < c->oh; oy++) {
            if (cached) {
                rs_planes_row(c, xp, oy, q, rows, tag);
                q += c->ow;
                continue;
            }
            for (int64_t ox = 0; ox < c->ow; ox++, q++) {
                if (ay->cnt[oy] == 0 || axx->cnt[ox] == 0)
                    rs_store(c->dtype, c->y, q, c->pl->extrapolation);
                else
                    rs_store(c->dtype, c->y, q, rs_planes_elem(c, xp, oy, ox));
            }
        }
    }
}

/* The planes' loops in a baseline and an AVX2 build (four doubles a vector
 * in rs_planes_row's loop over the columns, eight floats in the rounding):
 * this file is not built with contraction (ISO C's -ffp-contract=off), so
 * both builds do the same double operations and give the same bits. */
CPU_BUILDS(rs_planes_range, rs_planes_body, (void *arg, int64_t begin, int64_t end),
           (arg, begin, end))

static prt_status rs_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                         int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                         const void *const *xs, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    const prt_dims *xd = &in[0].dims, *yd = &out->dims;
    rs_plan pl;
    rs_run_ctx c;
    uint8_t *w;
    int64_t total = base_volume(yd), o_idx[PRT_MAX_DIMS] = {0}, s = 1;
    size_t es = prt_dtype_size(dtype);
    prt_status st = rs_plan_make(o, in, nb_in, yd, nb_in > 1 ? xs[1] : NULL, &pl);
    (void)nb_out, (void)stream;
    if (st)
        return st;
    w = rs_plan_place(&pl, ws);
    for (int32_t i = 0; i < pl.rank; i++)
        for (int64_t x = 0; x < pl.ax[i].out; x++)
            rs_axis_row(&pl.p, &pl.ax[i], x);
    for (int32_t i = pl.rank - 1; i >= 0; i--) {
        c.stride[i] = s;
        s *= xd->d[i];
    }
    c.rank = pl.rank;
    c.ax = pl.ax;
    c.x = xs[0];
    if (pl.p.mode != RS_NEAREST && dtype != PRT_FLOAT32) {
        op_to_f32(xs[0], dtype, base_volume(xd), (float *)(void *)w);
        c.x = (const float *)(void *)w;
    }
    if (total > 0 && rs_planes_ok(&pl)) {
        rs_planes c2 = {&pl,
                        c.x,
                        y,
                        dtype,
                        xd->d[pl.rank - 2],
                        xd->d[pl.rank - 1],
                        yd->d[pl.rank - 2],
                        yd->d[pl.rank - 1],
                        0};
        for (int32_t i = pl.rank - 2; i < pl.rank; i++)
            for (int64_t k = 0; k < pl.ax[i].out; k++)
                c2.extrap |= pl.ax[i].cnt[k] == 0;
        base_parallel_for(total / (c2.oh * c2.ow), 1, CPU_PICK(rs_planes_range), &c2);
        return PRT_OK;
    }
    for (int64_t q = 0; q < total; q++) {
        int extrap = 0;
        for (int32_t i = 0; i < pl.rank; i++)
            extrap |= pl.ax[i].cnt[o_idx[i]] == 0;
        if (extrap) {
            rs_store(dtype, y, q, pl.extrapolation);
        } else if (pl.p.mode == RS_NEAREST) {
            int64_t off = 0;
            for (int32_t i = 0; i < pl.rank; i++)
                off += pl.ax[i].lo[o_idx[i]] * c.stride[i];
            memcpy((uint8_t *)y + (size_t)q * es,
                   (const uint8_t *)xs[0] + (size_t)off * es, es);
        } else {
            rs_store(dtype, y, q, rs_sum(&c, 0, o_idx, 0));
        }
        for (int32_t i = pl.rank - 1; i >= 0; i--) {
            if (++o_idx[i] < yd->d[i])
                break;
            o_idx[i] = 0;
        }
    }
    return PRT_OK;
}

static int rs_float_shape_input(const op_object *o, int32_t index)
{
    return index == 0 && crs(o)->scales_in;
}

static const op_class resize_class = {
    .min_inputs = 1,
    .max_inputs = 2,
    .dtypes = RS_DT_ALL,
    .size = sizeof(resize_op),
    .alias_input = -1,
    .parse = rs_parse,
    .serialize = rs_serialize,
    .shapes_sv = rs_shapes_sv,
    .workspace = rs_workspace,
    .run = rs_run,
    .max_shape_inputs = 1,
    .float_shape_input = rs_float_shape_input,
    .in_dtypes = rs_in_dtypes,
};

static const prt_field_schema resize_schema[] = {
    {"antialias", PRT_FIELD_INT32, 1, "1: wider filters when downsampling; default 0"},
    {"axes", PRT_FIELD_INT32, -1, "the axes scales/sizes/roi refer to; default all"},
    {"coordinate_transformation_mode", PRT_FIELD_CHAR, -1,
     "half_pixel (default), half_pixel_symmetric, pytorch_half_pixel, align_corners, "
     "asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize"},
    {"cubic_coeff_a", PRT_FIELD_FLOAT32, 1, "cubic's A, default -0.75"},
    {"exclude_outside", PRT_FIELD_INT32, 1, "1: no weight outside X; default 0"},
    {"extrapolation_value", PRT_FIELD_FLOAT32, 1, "tf_crop_and_resize's outside value"},
    {"keep_aspect_ratio_policy", PRT_FIELD_CHAR, -1,
     "stretch (default), not_larger, not_smaller"},
    {"mode", PRT_FIELD_CHAR, -1, "nearest (default), linear, cubic"},
    {"nearest_mode", PRT_FIELD_CHAR, -1,
     "round_prefer_floor (default), round_prefer_ceil, floor, ceil"},
    {"roi", PRT_FIELD_FLOAT32, -1, "tf_crop_and_resize's crop: begins, then ends"},
    {"scales", PRT_FIELD_FLOAT32, -1, "per axis, > 0; or sizes as a shape input"},
    {"scales_input", PRT_FIELD_INT32, 1,
     "1: scales is input 1, a float32 shape input known at run time"},
};

const prt_plugin_creator op_resize_creator =
    OP_CREATOR("Resize", resize_class, resize_schema,
               (int32_t)(sizeof resize_schema / sizeof resize_schema[0]));
