/*
 * The CUDA kernels of MatMulInteger, QLinearMatMul, ConvInteger and
 * QLinearConv (ops.h): the CPU files' geometry and checks (qlinear.h),
 * then qgemm.cu's launcher with device pointers to the zero points, scales
 * and bias.
 */
#include <string.h>

#include "ops/cuda/launch.h"
#include "ops/cuda/ops.h"
#include "ops/ops_nn.h"
#include "ops/qlinear.h"

/* What both launches share: data, zero points, scales, bias, output. */
static void qc_common(const ql_inputs *q, const prt_tensor_desc *in,
                      const prt_tensor_desc *out, const void *const *x, void *y,
                      opk_qgemm_args *a)
{
    memset(a, 0, sizeof *a);
    a->a = x[q->a];
    a->b = x[q->b];
    a->a_dtype = in[q->a].dtype;
    a->b_dtype = in[q->b].dtype;
    a->a_zp = q->a_zp >= 0 ? x[q->a_zp] : NULL;
    a->a_nzp = q->a_zp >= 0 ? base_volume(&in[q->a_zp].dims) : 0;
    a->b_zp = q->b_zp >= 0 ? x[q->b_zp] : NULL;
    a->b_nzp = q->b_zp >= 0 ? base_volume(&in[q->b_zp].dims) : 0;
    a->a_scale = q->a_scale >= 0 ? x[q->a_scale] : NULL;
    a->b_scale = q->b_scale >= 0 ? x[q->b_scale] : NULL;
    a->b_nscale = q->b_scale >= 0 ? base_volume(&in[q->b_scale].dims) : 0;
    a->y_scale = q->y_scale >= 0 ? x[q->y_scale] : NULL;
    a->y_zp = q->y_zp >= 0 ? x[q->y_zp] : NULL;
    a->bias = q->bias >= 0 ? x[q->bias] : NULL;
    a->out = q->y_zp < 0 ? OPK_Q_I32 : out->dtype == PRT_UINT8 ? OPK_Q_U8 : OPK_Q_I8;
    a->y = y;
    a->count = base_volume(&out->dims);
}

OPC_KERNEL(opc_qmatmul)
{
    ql_inputs q;
    opk_qgemm_args a;
    mm_geom g;
    prt_dims bo;
    int64_t sa = 1, sb = 1;
    prt_status st;
    (void)dtype, (void)nb_out, (void)ws;
    ql_inputs_of(o, nb_in, &q);
    mm_split(&in[q.a].dims, &in[q.b].dims, &g);
    st = op_broadcast_dims(o, &g.ba, &g.bb, &bo, "the batch dims of A and B");
    if (st)
        return st;
    if (bo.nb_dims > OPK_MAX_RANK)
        return op_fail(o, PRT_ERR_SHAPE, "%d batch dims on CUDA (at most %d)",
                       (int)bo.nb_dims, OPK_MAX_RANK);
    qc_common(&q, in, out, x, y[0], &a);
    a.M = g.M;
    a.N = g.N;
    a.K = g.K;
    a.brank = bo.nb_dims;
    /* Each operand's batch stride in matrices, 0 along a broadcast dim
     * (mm_batch_offset's rule). */
    for (int32_t i = bo.nb_dims - 1; i >= 0; i--) {
        const int32_t ja = i - (bo.nb_dims - g.ba.nb_dims);
        const int32_t jb = i - (bo.nb_dims - g.bb.nb_dims);
        a.bdims[i] = bo.d[i];
        a.astr[i] = ja >= 0 && g.ba.d[ja] != 1 ? sa : 0;
        a.bstr[i] = jb >= 0 && g.bb.d[jb] != 1 ? sb : 0;
        sa *= ja >= 0 ? g.ba.d[ja] : 1;
        sb *= jb >= 0 ? g.bb.d[jb] : 1;
    }
    return opc_status(o, opk_qgemm(&a, stream));
}

OPC_KERNEL(opc_qconv)
{
    ql_inputs q;
    opk_qgemm_args a;
    op_conv_geom g;
    prt_dims dims[OP_MAX_INPUTS];
    prt_status st;
    (void)dtype, (void)nb_out, (void)ws;
    for (int32_t k = 0; k < nb_in; k++)
        dims[k] = in[k].dims;
    st = qconv_geom(o, dims, nb_in, &g);
    if (st)
        return st;
    if (g.w.ns > OPK_MAX_SP)
        return op_fail(o, PRT_ERR_SHAPE, "%d spatial dims on CUDA (at most %d)",
                       (int)g.w.ns, OPK_MAX_SP);
    ql_inputs_of(o, nb_in, &q);
    qc_common(&q, in, out, x, y[0], &a);
    a.conv = 1;
    a.ns = g.w.ns;
    a.n_img = g.N;
    a.C = g.C;
    a.Mc = g.M;
    a.Cg = g.Cg;
    a.Mg = g.Mg;
    for (int32_t i = 0; i < g.w.ns; i++) {
        a.in[i] = g.w.in[i];
        a.k[i] = g.w.k[i];
        a.o[i] = g.w.out[i];
        a.s[i] = g.w.s[i];
        a.d[i] = g.w.d[i];
        a.pb[i] = g.w.pb[i];
    }
    a.ivol = g.w.ivol;
    a.kvol = g.w.kvol;
    a.ovol = g.w.ovol;
    return opc_status(o, opk_qgemm(&a, stream));
}
