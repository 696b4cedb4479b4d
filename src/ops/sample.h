/*
 * The element arithmetic of GridSample (grid_sample.c) and RoiAlign
 * (roi_align.c), written once as op_elem.h's OPK_HD code: the CPU kernels
 * and the CUDA kernels (cuda/sample.cu, one thread per output element) call
 * the same functions, so both devices compute each element with the same
 * operations in the same order (the .cu is built with -fmad=false, and the
 * C compiler contracts nothing in ISO C mode), in double, rounded once to
 * the output's dtype.
 *
 * The rules are onnxruntime's (which ONNX's reference implementations of
 * both ops copy); what they leave undefined is settled here, the same on
 * every device:
 *  - GridSample: a grid value that is NaN or infinite gives NaN; with
 *    padding "zeros" a coordinate is first clamped to [-4, size + 3],
 *    which changes nothing (every tap of a coordinate beyond that reads the
 *    padding's 0) but keeps the tap indices in range of int64.
 *  - RoiAlign: a region whose corners or sampling grid are NaN gives NaN;
 *    a sampling grid of more than OPK_ROI_MAX_SAMPLES points, or a batch
 *    index outside X, fails the CPU's run, and on CUDA (which cannot
 *    refuse: DESIGN-NOTES) gives NaN and 0 respectively.
 */
#ifndef PLUGRT_OPS_SAMPLE_H
#define PLUGRT_OPS_SAMPLE_H

#include <math.h>
#include <stdint.h>

#include "ops/op_elem.h"

/* GridSample's spatial rank: X's rank less N and C. */
#define OPK_GS_MAX_R (PRT_MAX_DIMS - 2)

enum { OPK_GS_LINEAR, OPK_GS_NEAREST, OPK_GS_CUBIC };
enum { OPK_GS_ZEROS, OPK_GS_BORDER, OPK_GS_REFLECTION };

/* One GridSample run: X [N, C, in...], grid [N, out..., r], Y [N, C, out...]. */
typedef struct opk_gs_params {
    int32_t mode, padding, align_corners;
    int32_t r;        /* spatial rank, 1..OPK_GS_MAX_R */
    int32_t xdt, gdt; /* X's and grid's dtypes (float32, float16, bfloat16) */
    int64_t C;
    int64_t in_vol, out_vol; /* elements of one spatial plane of X, of Y */
    int64_t in[OPK_GS_MAX_R], out[OPK_GS_MAX_R];
} opk_gs_params;

/* x reflected by the nearer bound until it lies in [lo, hi] (onnxruntime's
 * GsReflect, with the fold counted in double so a far coordinate cannot
 * overflow an int). A finite x only. */
OPK_HD double opk_gs_reflect(double x, double lo, double hi)
{
    const double range = hi - lo;
    double d, n, r;
    if (x >= lo && x <= hi)
        return x;
    if (range <= 0.0)
        return lo;
    d = x < lo ? lo - x : x - hi;
    n = floor(d / range);
    r = d - n * range;
    if (fmod(n, 2.0) == 0.0)
        return x < lo ? lo + r : hi - r;
    return x < lo ? hi - r : lo + r;
}

/* Tap index i of an axis of `size` under the padding: -1 for "zeros" out
 * of range (the tap reads 0). */
OPK_HD int64_t opk_gs_tap(const opk_gs_params *p, int64_t i, int64_t size)
{
    if (p->padding == OPK_GS_ZEROS)
        return i >= 0 && i < size ? i : -1;
    if (p->padding == OPK_GS_REFLECTION) {
        const double lo = p->align_corners ? 0.0 : -0.5;
        const double hi = p->align_corners ? (double)(size - 1) : (double)size - 0.5;
        i = (int64_t)opk_gs_reflect((double)i, lo, hi);
    }
    return i < 0 ? 0 : i >= size ? size - 1 : i;
}

/* Keys' cubic convolution weights (a = -0.75) of the 4 taps around a point
 * at fraction t in [0, 1) past the second tap (onnxruntime's
 * GsGetCubicCoeffs). */
OPK_HD void opk_gs_cubic(double t, double *w)
{
    const double a = -0.75, t1 = t + 1.0, u = 1.0 - t, u1 = 2.0 - t;
    w[0] = ((a * t1 - 5.0 * a) * t1 + 8.0 * a) * t1 - 4.0 * a;
    w[1] = ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
    w[2] = ((a + 2.0) * u - (a + 3.0)) * u * u + 1.0;
    w[3] = ((a * u1 - 5.0 * a) * u1 + 8.0 * a) * u1 - 4.0 * a;
}

/* Output element e of GridSample (Y's flat index) from X and grid. */
OPK_HD double opk_gs_at(const opk_gs_params *p, const void *x, const void *grid,
                        int64_t e)
{
    const int64_t o = e % p->out_vol, nc = e / p->out_vol, n = nc / p->C;
    const int64_t g0 = (n * p->out_vol + o) * p->r;
    const int32_t taps = p->mode == OPK_GS_LINEAR ? 2 : p->mode == OPK_GS_CUBIC ? 4 : 1;
    int64_t first[OPK_GS_MAX_R];
    double w[OPK_GS_MAX_R][4], sum = 0.0;
    int64_t combos = 1;
    for (int32_t i = 0; i < p->r; i++) {
        /* grid's last dim lists the coordinates innermost axis first. */
        const double g = (double)opk_float_at(p->gdt, grid, g0 + p->r - 1 - i);
        const int64_t size = p->in[i];
        const double lo = p->align_corners ? 0.0 : -0.5;
        const double hi = p->align_corners ? (double)(size - 1) : (double)size - 0.5;
        double c;
        if (isnan(g) || isinf(g))
            return (double)NAN;
        c = p->align_corners ? (g + 1.0) / 2.0 * (double)(size - 1)
                             : ((g + 1.0) * (double)size - 1.0) / 2.0;
        if (p->mode == OPK_GS_NEAREST)
            c = rint(c); /* halves to even, as std::nearbyint */
        if (c < lo || c > hi) {
            if (p->padding == OPK_GS_BORDER)
                c = c < 0.0 ? 0.0 : c > (double)(size - 1) ? (double)(size - 1) : c;
            else if (p->padding == OPK_GS_REFLECTION)
                c = opk_gs_reflect(c, lo, hi);
        }
        if (p->padding == OPK_GS_ZEROS)
            c = c < -4.0 ? -4.0 : c > (double)size + 3.0 ? (double)size + 3.0 : c;
        if (p->mode == OPK_GS_NEAREST) {
            first[i] = (int64_t)c;
            w[i][0] = 1.0;
        } else {
            const double f = floor(c), t = c - f;
            if (p->mode == OPK_GS_LINEAR) {
                first[i] = (int64_t)f;
                w[i][0] = 1.0 - t;
                w[i][1] = t;
            } else {
                first[i] = (int64_t)f - 1;
                opk_gs_cubic(t, w[i]);
            }
        }
        combos *= taps;
    }
    /* Every combination of the axes' taps, the last axis's fastest. */
    for (int64_t k = 0; k < combos; k++) {
        int64_t off = 0, stride = 1, rest = k;
        double wt = 1.0;
        int32_t i = p->r - 1;
        for (; i >= 0; i--) {
            const int32_t t = (int32_t)(rest % taps);
            const int64_t at = opk_gs_tap(p, first[i] + t, p->in[i]);
            if (at < 0)
                break; /* "zeros" padding: this combination reads 0 */
            rest /= taps;
            wt *= w[i][t];
            off += at * stride;
            stride *= p->in[i];
        }
        if (i < 0)
            sum += wt * (double)opk_float_at(p->xdt, x, nc * p->in_vol + off);
    }
    return sum;
}

/* ---- RoiAlign ------------------------------------------------------------ */

/* The most sampling points one output element may average (a region's
 * sampling grid with sampling_ratio 0 grows with the region: a bound keeps a
 * wild region from stalling the run). */
#define OPK_ROI_MAX_SAMPLES (1 << 20)

/* One RoiAlign run: X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2) of X's
 * dtype, batch_indices [R] (int32 or int64), Y [R, C, oh, ow]. */
typedef struct opk_roi_params {
    int32_t xdt, idt;
    int32_t max_mode, half_pixel;
    int32_t sampling_ratio;
    double spatial_scale;
    int64_t N, C, H, W, oh, ow;
} opk_roi_params;

/* Region k's sampling grid (gh x gw points per output bin), its start and
 * bin size; 0, or 1 when NaN is in it, 2 when the grid exceeds
 * OPK_ROI_MAX_SAMPLES. */
OPK_HD int opk_roi_region(const opk_roi_params *p, const void *rois, int64_t k,
                          double *start, double *bin, int64_t *gh, int64_t *gw)
{
    const double off = p->half_pixel ? 0.5 : 0.0, s = p->spatial_scale;
    const double sw = (double)opk_float_at(p->xdt, rois, 4 * k) * s - off;
    const double sh = (double)opk_float_at(p->xdt, rois, 4 * k + 1) * s - off;
    const double ew = (double)opk_float_at(p->xdt, rois, 4 * k + 2) * s - off;
    const double eh = (double)opk_float_at(p->xdt, rois, 4 * k + 3) * s - off;
    double rw = ew - sw, rh = eh - sh, fh, fw;
    if (!p->half_pixel) { /* the legacy rule: regions at least 1 x 1 */
        rw = rw < 1.0 ? 1.0 : rw;
        rh = rh < 1.0 ? 1.0 : rh;
    }
    start[0] = sh;
    start[1] = sw;
    bin[0] = rh / (double)p->oh;
    bin[1] = rw / (double)p->ow;
    fh = p->sampling_ratio > 0 ? (double)p->sampling_ratio : ceil(rh / (double)p->oh);
    fw = p->sampling_ratio > 0 ? (double)p->sampling_ratio : ceil(rw / (double)p->ow);
    if (isnan(sh) || isnan(sw) || isnan(fh) || isnan(fw))
        return 1;
    /* A grid of 0 or fewer points samples nothing (onnxruntime's loops). */
    fh = fh < 0.0 ? 0.0 : fh;
    fw = fw < 0.0 ? 0.0 : fw;
    if (fh * fw > (double)OPK_ROI_MAX_SAMPLES)
        return 2;
    *gh = (int64_t)fh;
    *gw = (int64_t)fw;
    return 0;
}

/* Output element e of RoiAlign (Y's flat index). An out-of-range batch
 * index gives 0 (the CPU checks them before). */
OPK_HD double opk_roi_at(const opk_roi_params *p, const void *x, const void *rois,
                         const void *bidx, int64_t e)
{
    const int64_t pw = e % p->ow, ph = e / p->ow % p->oh;
    const int64_t c = e / (p->ow * p->oh) % p->C, k = e / (p->ow * p->oh * p->C);
    const int64_t b = opk_int_at(p->idt, bidx, k);
    double start[2], bin[2], acc = 0.0;
    int64_t gh, gw, count, plane;
    int st, seen = 0;
    if (b < 0 || b >= p->N)
        return 0.0;
    st = opk_roi_region(p, rois, k, start, bin, &gh, &gw);
    if (st)
        return (double)NAN;
    count = gh * gw > 1 ? gh * gw : 1;
    plane = (b * p->C + c) * p->H * p->W;
    for (int64_t iy = 0; iy < gh; iy++) {
        double y0 =
            start[0] + (double)ph * bin[0] + ((double)iy + 0.5) * bin[0] / (double)gh;
        for (int64_t ix = 0; ix < gw; ix++) {
            double y = y0;
            double xx =
                start[1] + (double)pw * bin[1] + ((double)ix + 0.5) * bin[1] / (double)gw;
            double v = 0.0;
            if (!(y < -1.0 || y > (double)p->H || xx < -1.0 || xx > (double)p->W)) {
                int64_t yl, xl, yh, xh;
                double ly, lx, hy, hx, v1, v2, v3, v4;
                y = y <= 0.0 ? 0.0 : y;
                xx = xx <= 0.0 ? 0.0 : xx;
                yl = (int64_t)y;
                xl = (int64_t)xx;
                if (yl >= p->H - 1) {
                    yh = yl = p->H - 1;
                    y = (double)yl;
                } else {
                    yh = yl + 1;
                }
                if (xl >= p->W - 1) {
                    xh = xl = p->W - 1;
                    xx = (double)xl;
                } else {
                    xh = xl + 1;
                }
                ly = y - (double)yl;
                lx = xx - (double)xl;
                hy = 1.0 - ly;
                hx = 1.0 - lx;
                v1 = hy * hx * (double)opk_float_at(p->xdt, x, plane + yl * p->W + xl);
                v2 = hy * lx * (double)opk_float_at(p->xdt, x, plane + yl * p->W + xh);
                v3 = ly * hx * (double)opk_float_at(p->xdt, x, plane + yh * p->W + xl);
                v4 = ly * lx * (double)opk_float_at(p->xdt, x, plane + yh * p->W + xh);
                if (p->max_mode) {
                    /* std::max(a, b) is a < b ? b : a. */
                    v = v1 < v2 ? v2 : v1;
                    v = v < v3 ? v3 : v;
                    v = v < v4 ? v4 : v;
                } else {
                    v = v1 + v2 + v3 + v4;
                }
            }
            if (p->max_mode)
                acc = !seen ? v : acc < v ? v : acc;
            else
                acc += v;
            seen = 1;
        }
    }
    return p->max_mode ? acc : acc / (double)count;
}

#endif /* PLUGRT_OPS_SAMPLE_H */
