/*
 * What a device's kernels read of the pools', reductions', arg and scan
 * ops' and normalizations' objects (internal to libplugrt): each op's file
 * resolves its fields against concrete dims here, with the very functions
 * its CPU kernel runs, so a device kernel gets the geometry, axes and
 * flags the CPU uses and never re-derives them. Each fails as the CPU run
 * would (a bad axis, dims that do not fit), naming the problem.
 *
 *   pool.c     MaxPool AveragePool LpPool GlobalMaxPool GlobalLpPool
 *   reduce.c   the ten Reduce ops
 *   argmax.c   ArgMax ArgMin          cumsum.c   CumSum
 *   hardmax.c  Hardmax                topk.c     TopK
 *   norm.c     BatchNormalization InstanceNormalization GroupNormalization
 *              LpNormalization
 */
#ifndef PLUGRT_OPS_OPS_VIEWS_H
#define PLUGRT_OPS_OPS_VIEWS_H

#include "ops/ew_kinds.h"
#include "ops/ops_nn.h"

/* ---- pools (pool.c) ------------------------------------------------------ */

enum { OPV_POOL_MAX, OPV_POOL_AVG, OPV_POOL_LP };

typedef struct op_pool_view {
    op_win_geom g; /* the windows over X's spatial dims (one for a global pool) */
    int32_t kind;  /* OPV_POOL_*: the global pools are MAX and LP */
    int32_t p;     /* LP's order */
    int32_t with_pad;
    /* 1: the computation of cpu_pool2d_rows (MaxPool without Indices and
     * AveragePool over 1 or 2 spatial dims): a maximum starting from
     * `lowest` (so -inf elements give lowest), a mean summed in float32 and
     * divided in float32. 0: the generic loop: the first element starts
     * the maximum, means and p-norms in double rounded once. */
    int32_t fast;
    int64_t ostr[OP_SP_MAX]; /* the strides Indices counts in (storage_order) */
    float lowest;            /* the maximum of nothing, of the dtype */
} op_pool_view;

/* The pool `o` (any of the five; not GlobalAveragePool) over X of dims x
 * and dtype `dtype`. */
prt_status op_pool_view_of(const op_object *o, int32_t dtype, const prt_dims *x,
                           op_pool_view *v);

/* ---- reductions (reduce.c) ---------------------------------------------- */

/* The Reduce ops' kinds are ew_kinds.h's RD_*. */

/* The input's dims merged into runs, as the CPU walks them: run k has d[k]
 * elements, red[k] whether it is reduced; the output's elements are the
 * kept runs' positions, row-major. */
typedef struct op_reduce_view {
    int32_t kind;      /* RD_* */
    int32_t identity;  /* noop_with_empty_axes with no axes: y = x */
    int32_t empty;     /* X has no elements: every output is the initial value */
    int32_t in_double; /* accumulate in double (else int64) */
    int32_t m;
    int64_t d[PRT_MAX_DIMS];
    int32_t red[PRT_MAX_DIMS];
    int64_t count; /* elements reduced into each output (Mean's divisor) */
} op_reduce_view;

prt_status op_reduce_view_of(const op_object *o, int32_t dtype, const prt_dims *x,
                             op_reduce_view *v);

/* ---- ArgMax, ArgMin, CumSum, Hardmax, TopK -------------------------------- */

/* X viewed as [outer, n, inner] about the op's axis, and its flags. */
typedef struct op_axis_view {
    int64_t outer, n, inner;
    int32_t axis;
    int32_t is_min;    /* ArgMin */
    int32_t last;      /* ArgMax/ArgMin select_last_index */
    int32_t exclusive; /* CumSum */
    int32_t reverse;   /* CumSum */
    int32_t largest;   /* TopK */
} op_axis_view;

prt_status op_argmax_view_of(const op_object *o, const prt_dims *x, op_axis_view *v);
prt_status op_cumsum_view_of(const op_object *o, const prt_dims *x, op_axis_view *v);
/* Rows along the axis, or with coerce_2d over every dim from it (n). */
prt_status op_hardmax_view_of(const op_object *o, const prt_dims *x, op_axis_view *v);
/* Also checks the outputs' dims against X and K (K = out[0]'s dim along
 * the axis, at most n), as the CPU run does. */
prt_status op_topk_view_of(const op_object *o, const prt_dims *x, const prt_dims *values,
                           const prt_dims *indices, op_axis_view *v, int64_t *k);

/* ---- normalizations (norm.c) --------------------------------------------- */

enum { OPV_NORM_BATCH, OPV_NORM_INSTANCE, OPV_NORM_GROUP, OPV_NORM_LP };

typedef struct op_norm_view {
    int32_t kind; /* OPV_NORM_* */
    float epsilon;
    int64_t N, C, sp; /* X as [N, C, sp] (rank 1: [N, 1, 1]) */
    /* BatchNormalization: parameters per channel (1) or per channel and
     * position (spatial 0: sp). */
    int64_t per;
    /* Instance and Group: G groups of cg channels; per_group: scale and B
     * hold one value per group (else per channel). */
    int64_t G, cg;
    int32_t per_group;
    /* LpNormalization: rows of n elements `inner` apart, outer of them. */
    int64_t outer, n, inner;
    int32_t p;
    /* The fused activation applied to each value as it is stored
     * (OP_ACT_NONE: none). */
    op_act act;
} op_norm_view;

/* in: X then the parameters (nb_in of them, checked as the CPU does). */
prt_status op_norm_view_of(const op_object *o, const prt_dims *in, int32_t nb_in,
                           op_norm_view *v);

#endif /* PLUGRT_OPS_OPS_VIEWS_H */
