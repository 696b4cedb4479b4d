/*
 * The element arithmetic of NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (loss.c), MeanVarianceNormalization (mvn.c) and
 * Det (det.c), written once as op_elem.h's OPK_HD code: the CPU kernels and
 * the CUDA kernels (cuda/loss.cu) call the same functions, so both devices
 * compute each term, log-probability, normalized value and determinant with
 * the same operations in the same order (the .cu is built with
 * -fmad=false, and the C compiler contracts nothing in ISO C mode), in
 * double, rounded once to the output's dtype. Only the sums over many
 * terms (a loss's reduction, a group's mean and variance) run in another
 * order on CUDA, in double as on the CPU.
 */
#ifndef PLUGRT_OPS_LOSS_ELEM_H
#define PLUGRT_OPS_LOSS_ELEM_H

#include <math.h>
#include <stdint.h>

#include "ops/op_elem.h"

/* ---- the losses ------------------------------------------------------------ */

enum { OPK_LOSS_NONE, OPK_LOSS_SUM, OPK_LOSS_MEAN }; /* the field reduction */

/* One loss run: scores (or log-probabilities) viewed as [N, C, D], D the
 * product of the dims after C (1 for [N, C]), targets as [N, D]. */
typedef struct opk_loss_params {
    int64_t N, C, D;
    int32_t xdt;       /* the scores' dtype (SoftmaxCrossEntropyLoss's loss: the
                        * log-probabilities', float32) */
    int32_t wdt;       /* the weight's (the scores' dtype) */
    int32_t tdt;       /* the targets': int32 or int64 */
    int32_t reduction; /* OPK_LOSS_* */
    int32_t has_ignore;
    int64_t ignore_index; /* when has_ignore */
} opk_loss_params;

/* Position pos (of N * D) of NegativeLogLikelihoodLoss over x: its weight
 * w (weight[t], 1 without a weight; 0 for a target equal to ignore_index)
 * and its term -x[n, t, d] * w, in double. Returns 1 when the target is
 * outside [0, C) and not ignore_index (term and weight are then 0: what
 * CUDA keeps, since a kernel cannot fail the run; the CPU fails it), else
 * 0. weight may be NULL. */
OPK_HD int opk_nll_term(const opk_loss_params *p, const void *x, const void *target,
                        const void *weight, int64_t pos, double *term, double *w)
{
    const int64_t t = opk_int_at(p->tdt, target, pos);
    const int64_t n = pos / p->D, d = pos % p->D;
    *term = 0.0;
    *w = 0.0;
    if (p->has_ignore && t == p->ignore_index)
        return 0;
    if (t < 0 || t >= p->C)
        return 1;
    *w = weight ? (double)opk_float_at(p->wdt, weight, t) : 1.0;
    *term = -(double)opk_float_at(p->xdt, x, (n * p->C + t) * p->D + d) * *w;
    return 0;
}

/* The reduced loss from the sums of the terms and of the weights: the sum,
 * or ONNX's weighted mean sum / wsum (NaN when every position is ignored,
 * as the reference's 0 / 0). */
OPK_HD double opk_loss_reduce(int32_t reduction, double sum, double wsum)
{
    return reduction == OPK_LOSS_MEAN ? sum / wsum : sum;
}

/* SoftmaxCrossEntropyLoss's log-softmax over the C classes of position pos
 * of x: lp[i] = x[i] - max - log(sum_c exp(x[c] - max)) at every element i
 * of the position, in double, stored as float32 into lp (what the loss is
 * taken from) and, when y is not NULL, into y of dtype ydt (the output
 * log_prob). A NaN, or +inf, in the position makes it all NaN (numpy's
 * result for the reference's formula). */
OPK_HD void opk_log_softmax_at(const opk_loss_params *p, const void *x, int64_t pos,
                               float *lp, void *y, int32_t ydt)
{
    const int64_t n = pos / p->D, d = pos % p->D, base = n * p->C * p->D + d;
    double mx = -INFINITY, s = 0.0, ls;
    for (int64_t c = 0; c < p->C; c++) {
        const double v = (double)opk_float_at(p->xdt, x, base + c * p->D);
        if (v > mx)
            mx = v;
    }
    for (int64_t c = 0; c < p->C; c++)
        s += exp((double)opk_float_at(p->xdt, x, base + c * p->D) - mx);
    ls = log(s);
    for (int64_t c = 0; c < p->C; c++) {
        const int64_t i = base + c * p->D;
        const float v = (float)((double)opk_float_at(p->xdt, x, i) - mx - ls);
        lp[i] = v;
        if (y)
            opk_float_put(ydt, y, i, v);
    }
}

/* ---- MeanVarianceNormalization --------------------------------------------- */

/* X's elements as groups (one index of the dims not in axes) of `count`
 * elements (the dims in axes), each kind of dim merged where neighbours
 * are contiguous: group g's first element is at the offset its indices
 * over the kept dims give, element j of a group at the offset j's indices
 * over the reduced dims give from there. */
typedef struct opk_mvn_params {
    int32_t dtype;
    int32_t nk, nr; /* kept and reduced dims, after merging */
    int64_t groups, count;
    int64_t ksize[PRT_MAX_DIMS], kstride[PRT_MAX_DIMS];
    int64_t rsize[PRT_MAX_DIMS], rstride[PRT_MAX_DIMS];
} opk_mvn_params;

/* The offset of index i over n dims of sizes size[] and strides stride[]
 * (row-major: the last dim varies fastest). */
OPK_HD int64_t opk_mvn_offset(int32_t n, const int64_t *size, const int64_t *stride,
                              int64_t i)
{
    int64_t off = 0;
    for (int32_t k = n - 1; k >= 0; k--) {
        off += i % size[k] * stride[k];
        i /= size[k];
    }
    return off;
}

/* ONNX's function: (x - mean) / (sqrt(var) + 1e-9), var the population
 * variance. */
#define OPK_MVN_EPSILON 1e-9

OPK_HD double opk_mvn_value(double x, double mean, double var)
{
    return (x - mean) / (sqrt(var) + OPK_MVN_EPSILON);
}

/* ---- Det ----------------------------------------------------------------------- */

/* The determinant of the m x m matrix at element `base` of x (row-major,
 * dtype), by LU factorization with partial pivoting in double, in a (m * m
 * doubles of scratch): the product of the pivots, its sign flipped per row
 * swap. A column of zeros gives 0; a NaN is taken as the pivot, so it
 * reaches the result. m = 0 gives 1. */
OPK_HD double opk_det(int32_t dtype, const void *x, int64_t base, int64_t m, double *a)
{
    double det = 1.0;
    for (int64_t i = 0; i < m * m; i++)
        a[i] = (double)opk_float_at(dtype, x, base + i);
    for (int64_t k = 0; k < m; k++) {
        int64_t p = k;
        double best = fabs(a[k * m + k]);
        for (int64_t i = k + 1; i < m && best == best; i++) {
            const double v = fabs(a[i * m + k]);
            if (v > best || v != v) {
                best = v;
                p = i;
            }
        }
        if (best == 0.0)
            return 0.0;
        if (p != k) {
            for (int64_t j = 0; j < m; j++) {
                const double t = a[k * m + j];
                a[k * m + j] = a[p * m + j];
                a[p * m + j] = t;
            }
            det = -det;
        }
        det *= a[k * m + k];
        for (int64_t i = k + 1; i < m; i++) {
            const double f = a[i * m + k] / a[k * m + k];
            for (int64_t j = k + 1; j < m; j++)
                a[i * m + j] -= f * a[k * m + j];
        }
    }
    return det;
}

#endif /* PLUGRT_OPS_LOSS_ELEM_H */
