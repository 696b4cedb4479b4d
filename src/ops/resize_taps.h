/*
 * Resize's per-axis taps (resize.c), written once for the CPU's kernel and
 * CUDA's (src/ops/cuda/resize.cu): plain C that nvcc compiles as
 * __host__ __device__ code (op_elem.h's OPK_HD), so both devices compute
 * each output index's source, taps and weights with the same code. The
 * rules are resize.c's header's.
 */
#ifndef PLUGRT_OPS_RESIZE_TAPS_H
#define PLUGRT_OPS_RESIZE_TAPS_H

#include <math.h>
#include <stdint.h>

#include "ops/op_elem.h"

enum { RS_NEAREST, RS_LINEAR, RS_CUBIC };
enum {
    RS_HALF_PIXEL,
    RS_HALF_PIXEL_SYMMETRIC,
    RS_PYTORCH_HALF_PIXEL,
    RS_ALIGN_CORNERS,
    RS_ASYMMETRIC,
    RS_TF_HALF_PIXEL_FOR_NN,
    RS_TF_CROP_AND_RESIZE
};
enum { RS_ROUND_PREFER_FLOOR, RS_ROUND_PREFER_CEIL, RS_FLOOR, RS_CEIL };
enum { RS_STRETCH, RS_NOT_LARGER, RS_NOT_SMALLER };

/* The fields the taps depend on. */
typedef struct rs_params {
    int32_t mode, ctm, nearest, keep;
    int32_t exclude_outside, antialias;
    double cubic_a;
} rs_params;

/* What run computes per axis from the concrete dims. */
typedef struct rs_axis {
    int64_t in, out;
    double scale;        /* s */
    double roi_b, roi_e; /* tf_crop_and_resize's crop, normalized */
    int64_t taps;        /* the widest tap list (capped at `in`) */
    int64_t *lo, *cnt;   /* per output index: first input index, taps */
    double *w;           /* per output index: `taps` weights */
} rs_axis;

/* A run's taps: the fields, and per axis of X (rank of them) its tables
 * and which resized axis it is (-1: none). keep_on_device: the scale of
 * keep_aspect_ratio_policy comes from sizes in device memory
 * (rs_keep_scale there), the resized axes' scales are unset. */
typedef struct rs_plan {
    rs_params p;
    int32_t rank;
    rs_axis ax[8]; /* PRT_MAX_DIMS */
    int32_t axis_of[8];
    int32_t keep_on_device;
    double extrapolation;
} rs_plan;

/* Output element i of dtype as resize.c stores a sum: floats rounded once
 * from double (16-bit ones through float32), integers by C's conversion. */
OPK_HD void rs_store(int32_t dtype, void *y, int64_t i, double v)
{
    switch (dtype) {
    case PRT_FLOAT32:
    case PRT_FLOAT16:
    case PRT_BFLOAT16:
        opk_float_put(dtype, y, i, (float)v);
        break;
    case PRT_INT8:
        ((int8_t *)y)[i] = (int8_t)v;
        break;
    case PRT_UINT8:
        ((uint8_t *)y)[i] = (uint8_t)v;
        break;
    case PRT_INT32:
        ((int32_t *)y)[i] = (int32_t)v;
        break;
    default:
        ((int64_t *)y)[i] = (int64_t)v;
        break;
    }
}

/* The raw taps of a filter: reference's start (first offset from base) and
 * count. */
OPK_HD int64_t rs_raw_taps(const rs_params *r, double scale, int64_t *start)
{
    if (r->mode == RS_NEAREST) {
        *start = 0;
        return 1;
    }
    if (r->antialias) {
        double s = scale < 1.0 ? scale : 1.0, R = r->mode == RS_CUBIC ? 2.0 : 1.0;
        *start = (int64_t)floor(-R / s) + 1;
        return 2 - 2 * *start;
    }
    *start = r->mode == RS_CUBIC ? -1 : 0;
    return r->mode == RS_CUBIC ? 4 : 2;
}

/* The widest tap list of an axis: the raw count, capped at `in`. */
OPK_HD int64_t rs_axis_width(const rs_params *r, double scale, int64_t in)
{
    int64_t start, n = rs_raw_taps(r, scale, &start);
    return n < in ? n : in > 0 ? in : 1;
}

/* Keys' cubic kernel at distance t with parameter A. */
OPK_HD double rs_cubic(double t, double A)
{
    t = fabs(t);
    if (t <= 1.0)
        return ((A + 2.0) * t - (A + 3.0)) * t * t + 1.0;
    if (t < 2.0)
        return ((A * t - 5.0 * A) * t + 8.0 * A) * t - 4.0 * A;
    return 0.0;
}

/* The source coordinate of output index x; 0 with *outside set where
 * tf_crop_and_resize extrapolates. */
OPK_HD double rs_source(const rs_params *r, const rs_axis *a, int64_t x, int *outside)
{
    double D = (double)a->in, s = a->scale, W = s * D, xo;
    *outside = 0;
    switch (r->ctm) {
    case RS_HALF_PIXEL_SYMMETRIC:
        return D / 2.0 * (1.0 - (double)a->out / W) + (x + 0.5) / s - 0.5;
    case RS_PYTORCH_HALF_PIXEL:
        return W == 1.0 ? -0.5 : (x + 0.5) / s - 0.5;
    case RS_ALIGN_CORNERS:
        return W == 1.0 ? 0.0 : (double)x * (D - 1.0) / (W - 1.0);
    case RS_ASYMMETRIC:
        return (double)x / s;
    case RS_TF_HALF_PIXEL_FOR_NN:
        return (x + 0.5) / s;
    case RS_TF_CROP_AND_RESIZE:
        xo = W == 1.0 ? (a->roi_e - a->roi_b) * (D - 1.0) / 2.0
                      : (double)x * (a->roi_e - a->roi_b) * (D - 1.0) / (W - 1.0);
        xo += a->roi_b * (D - 1.0);
        *outside = xo < 0.0 || xo > D - 1.0;
        return xo;
    default:
        return (x + 0.5) / s - 0.5;
    }
}

/* The weight of raw tap t (at base + start + t) for a source `ratio` past
 * base, before normalization. */
OPK_HD double rs_weight(const rs_params *r, const rs_axis *a, int64_t base, int64_t start,
                        int64_t t, double ratio)
{
    double d = (double)(start + t) - ratio; /* tap position - source */
    double s = a->scale < 1.0 ? a->scale : 1.0;
    int64_t p = base + start + t;
    if (r->exclude_outside && (p < 0 || p >= a->in))
        return 0.0;
    if (r->antialias) /* the filter stretched by 1 / scale */
        d *= s;
    return r->mode == RS_CUBIC ? rs_cubic(d, r->cubic_a) : fmax(0.0, 1.0 - fabs(d));
}

/* Output index x's row of a's taps into *lo, *cnt and w (a->taps weights;
 * a's own tables are not touched). */
OPK_HD void rs_axis_row_at(const rs_params *r, const rs_axis *a, int64_t x, int64_t *lo,
                           int64_t *cnt, double *w)
{
    int64_t start, n = rs_raw_taps(r, a->scale, &start);
    /* Antialias and exclude_outside normalize the weights to sum 1. */
    int normalize = r->antialias || r->exclude_outside;
    int outside;
    double src = rs_source(r, a, x, &outside), ratio, sum = 0.0;
    int64_t base = (int64_t)ceil(src) - 1, first, last;
    ratio = src - (double)base; /* in (0, 1] */
    *lo = 0;
    *cnt = 0;
    if (outside)
        return; /* tf_crop_and_resize: extrapolation_value */
    if (r->mode == RS_NEAREST) {
        int64_t i = base + 1; /* ratio 1: the source itself */
        if (ratio < 1.0) {
            int down = r->nearest == RS_FLOOR ||
                       (r->nearest == RS_ROUND_PREFER_FLOOR && ratio <= 0.5) ||
                       (r->nearest == RS_ROUND_PREFER_CEIL && ratio < 0.5);
            i = down ? base : base + 1;
        }
        *lo = i < 0 ? 0 : i >= a->in ? a->in - 1 : i;
        *cnt = 1;
        w[0] = 1.0;
        return;
    }
    for (int64_t t = 0; normalize && t < n; t++)
        sum += rs_weight(r, a, base, start, t, ratio);
    /* Taps past X's edges read the edge: they gather at index 0 and in - 1,
     * so the list spans at most `in` indices. */
    first = base + start;
    last = base + start + n - 1;
    first = first < 0 ? 0 : first >= a->in ? a->in - 1 : first;
    last = last < 0 ? 0 : last >= a->in ? a->in - 1 : last;
    *lo = first;
    *cnt = last - first + 1;
    for (int64_t k = 0; k < *cnt; k++)
        w[k] = 0.0;
    for (int64_t t = 0; t < n; t++) {
        int64_t p = base + start + t;
        double v = rs_weight(r, a, base, start, t, ratio);
        p = p < 0 ? 0 : p >= a->in ? a->in - 1 : p;
        w[p - first] += normalize ? v / sum : v;
    }
}

/* Output index x's row of a's tables: lo[x], cnt[x] and its weights. */
OPK_HD void rs_axis_row(const rs_params *r, rs_axis *a, int64_t x)
{
    rs_axis_row_at(r, a, x, a->lo + x, a->cnt + x, a->w + x * a->taps);
}

/* Whether every axis before the last two maps each output index to its own
 * input index alone with weight 1 (the planes path: each output plane
 * resizes one input plane; an unscaled linear axis has taps (0, 1) on
 * index - 1 and index, and a zero weight is skipped by both kernels), from
 * rows computed here one at a time. An axis
 * whose scale the device computes (keep_on_device) does not qualify, nor
 * one wider than 8 taps (an axis of in == out has a scale of at least 1:
 * 2 or 4 taps). */
OPK_HD int rs_planes_ok(const rs_plan *pl)
{
    int64_t lo, cnt;
    double w[8];
    if (pl->rank < 2 || pl->p.mode == RS_NEAREST)
        return 0;
    for (int32_t i = 0; i < pl->rank - 2; i++) {
        const rs_axis *a = &pl->ax[i];
        if (a->in != a->out || (pl->keep_on_device && pl->axis_of[i] >= 0) ||
            a->taps < 1 || a->taps > 8)
            return 0;
        for (int64_t x = 0; x < a->out; x++) {
            int64_t live = 0;
            rs_axis_row_at(&pl->p, a, x, &lo, &cnt, w);
            for (int64_t k = 0; k < cnt; k++)
                if (w[k] != 0.0) {
                    if (w[k] != 1.0 || lo + k != x)
                        return 0;
                    live++;
                }
            if (live != 1)
                return 0;
        }
    }
    return 1;
}

/* keep_aspect_ratio_policy's one scale, from the sizes (element j of
 * `sizes`, of dtype sizes_dtype, for the resized axis j = axis_of[i]) and
 * X's dims. */
OPK_HD double rs_keep_scale(const rs_params *r, int32_t rank, const int32_t *axis_of,
                            const void *sizes, int32_t sizes_dtype, const int64_t *dims)
{
    double s = r->keep == RS_NOT_LARGER ? INFINITY : 0.0;
    for (int32_t i = 0; i < rank; i++) {
        double v;
        if (axis_of[i] < 0)
            continue;
        v = (double)opk_int_at(sizes_dtype, sizes, axis_of[i]) / (double)dims[i];
        s = r->keep == RS_NOT_LARGER ? fmin(s, v) : fmax(s, v);
    }
    return s;
}

#endif /* PLUGRT_OPS_RESIZE_TAPS_H */
