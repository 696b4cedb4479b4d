/*
 * The CUDA kernels (ops.h) of the pools, the reductions, ArgMax and
 * ArgMin, CumSum, Hardmax, TopK, Pow and the normalizations of norm.c:
 * each reads the op's resolved geometry, axes and flags through
 * ops_views.h (what its CPU kernel uses, checked as the CPU run checks
 * them) and queues pool.cu's, reduce.cu's, pow.cu's or norm.cu's launcher.
 */
#include <string.h>

#include "ops/cuda/launch.h"
#include "ops/cuda/ops.h"
#include "ops/ops_views.h"

/* pool.cu and norm.cu number the kinds as ops_views.h does. */
_Static_assert(OPK_MAX_SP_POOL == OP_SP_MAX, "pool.cu's spatial dims");
_Static_assert(OPV_POOL_MAX == 0 && OPV_POOL_AVG == 1 && OPV_POOL_LP == 2,
               "pool.cu's kinds");
_Static_assert(OPV_NORM_BATCH == 0 && OPV_NORM_INSTANCE == 1 && OPV_NORM_GROUP == 2 &&
                   OPV_NORM_LP == 3,
               "norm.cu's kinds");

OPC_KERNEL(opc_pool)
{
    op_pool_view v;
    opk_pool_args a;
    prt_status st = op_pool_view_of(o, dtype, &in[0].dims, &v);
    (void)nb_in, (void)out, (void)ws;
    if (st)
        return st;
    memset(&a, 0, sizeof a);
    a.dtype = dtype;
    a.kind = v.kind;
    a.p = v.p;
    a.with_pad = v.with_pad;
    a.fast = v.fast;
    a.ns = v.g.ns;
    for (int32_t i = 0; i < v.g.ns; i++) {
        a.in[i] = v.g.in[i];
        a.k[i] = v.g.k[i];
        a.out[i] = v.g.out[i];
        a.s[i] = v.g.s[i];
        a.d[i] = v.g.d[i];
        a.pb[i] = v.g.pb[i];
        a.pe[i] = v.g.pe[i];
        a.ostr[i] = v.ostr[i];
    }
    a.planes = in[0].dims.d[0] * in[0].dims.d[1];
    a.ivol = v.g.ivol;
    a.ovol = v.g.ovol;
    a.lowest = v.lowest;
    a.x = x[0];
    a.y = y[0];
    a.idx = nb_out > 1 ? y[1] : NULL;
    return opc_status(o, opk_pool(&a, stream));
}

/* The ten Reduce ops; noop_with_empty_axes without axes is a copy. */
OPC_KERNEL(opc_reduce)
{
    op_reduce_view v;
    opk_reduce_args a;
    prt_status st = op_reduce_view_of(o, dtype, &in[0].dims, &v);
    (void)nb_in, (void)nb_out, (void)ws;
    if (st)
        return st;
    if (v.identity)
        return opc_status(
            o, opk_device_copy(y[0], x[0],
                               prt_dtype_size(dtype) * (size_t)base_volume(&out->dims),
                               stream));
    memset(&a, 0, sizeof a);
    a.dtype = dtype;
    a.kind = v.kind;
    a.in_double = v.in_double;
    a.empty = v.empty;
    a.m = v.m;
    for (int32_t k = 0; k < v.m; k++) {
        a.d[k] = v.d[k];
        a.red[k] = v.red[k];
    }
    a.count = v.count;
    a.nout = base_volume(&out->dims);
    a.x = x[0];
    a.y = y[0];
    return opc_status(o, opk_reduce(&a, stream));
}

OPC_KERNEL(opc_argmax)
{
    op_axis_view v;
    prt_status st = op_argmax_view_of(o, &in[0].dims, &v);
    (void)nb_in, (void)out, (void)nb_out, (void)ws;
    if (st)
        return st;
    return opc_status(o, opk_argmax(dtype, x[0], y[0], v.outer, v.n, v.inner, v.is_min,
                                    v.last, stream));
}

OPC_KERNEL(opc_cumsum)
{
    op_axis_view v;
    prt_status st = op_cumsum_view_of(o, &in[0].dims, &v);
    (void)nb_in, (void)out, (void)nb_out, (void)ws;
    if (st)
        return st;
    return opc_status(o, opk_cumsum(dtype, x[0], y[0], v.outer, v.n, v.inner, v.exclusive,
                                    v.reverse, stream));
}

OPC_KERNEL(opc_hardmax)
{
    op_axis_view v;
    prt_status st = op_hardmax_view_of(o, &in[0].dims, &v);
    (void)nb_in, (void)out, (void)nb_out, (void)ws;
    if (st)
        return st;
    return opc_status(o, opk_hardmax(dtype, x[0], y[0], v.outer, v.n, v.inner, stream));
}

OPC_KERNEL(opc_topk)
{
    op_axis_view v;
    int64_t K = 0;
    prt_status st;
    (void)nb_in, (void)ws;
    if (nb_out < 2)
        return op_fail(o, PRT_ERR_INTERNAL, "TopK has two outputs, %d given",
                       (int)nb_out);
    st = op_topk_view_of(o, &in[0].dims, &out[0].dims, &out[1].dims, &v, &K);
    if (st)
        return st;
    return opc_status(o, opk_topk(dtype, x[0], y[0], y[1], v.outer, v.n, v.inner, K,
                                  v.largest, stream));
}

/* X of a float dtype (the table's mask), Y of any numeric one. */
OPC_KERNEL(opc_pow)
{
    const prt_dims dims[2] = {in[0].dims, in[1].dims};
    opk_bcast b;
    (void)dtype, (void)nb_in, (void)nb_out, (void)ws;
    opk_bcast_init(&b, &out->dims, 2, dims);
    return opc_status(o, opk_pow(in[0].dtype, in[1].dtype, &b, x[0], x[1], y[0],
                                 base_volume(&out->dims), stream));
}

OPC_KERNEL(opc_norm)
{
    prt_dims dims[5];
    op_norm_view v;
    opk_norm_args a;
    prt_status st;
    (void)out, (void)nb_out, (void)ws;
    if (nb_in > 5)
        return op_fail(o, PRT_ERR_INTERNAL, "%d inputs (at most 5)", (int)nb_in);
    for (int32_t k = 0; k < nb_in; k++)
        dims[k] = in[k].dims;
    st = op_norm_view_of(o, dims, nb_in, &v);
    if (st)
        return st;
    memset(&a, 0, sizeof a);
    a.dtype = dtype;
    a.kind = v.kind;
    a.epsilon = v.epsilon;
    a.N = v.N;
    a.C = v.C;
    a.sp = v.sp;
    a.per = v.per;
    a.G = v.G;
    a.cg = v.cg;
    a.per_group = v.per_group;
    a.p = v.p;
    a.outer = v.outer;
    a.n = v.n;
    a.inner = v.inner;
    a.x = x[0];
    for (int32_t k = 1; k < nb_in; k++) {
        a.pdt[k] = in[k].dtype;
        a.par[k] = x[k];
    }
    a.y = y[0];
    a.act = v.act.kind;
    a.act_alpha = v.act.alpha;
    a.act_beta = v.act.beta;
    return opc_status(o, opk_norm(&a, stream));
}
