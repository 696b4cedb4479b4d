/*
 * The CUDA kernels of the network ops (ops.h): Conv, MatMul and Gemm (through
 * cuBLAS, blas_cuda.c), Einsum, Softmax and LogSoftmax, LayerNormalization
 * and GlobalAveragePool, each the CPU kernel's semantics through the
 * launchers of kernels.cu and rows.cu.
 */
#include <string.h>

#include "ops/cuda/blas.h"
#include "ops/cuda/fuse.h"
#include "ops/cuda/launch.h"
#include "ops/cuda/ops.h"
#include "ops/ops_nn.h"

/* A direct convolution, one thread per output element. */
OPC_KERNEL(opc_conv)
{
    prt_dims dims[3];
    op_conv_geom g;
    op_act act = conv_act(o);
    opk_blas *blas = o->res[PRT_DEVICE_CUDA];
    opk_conv_args a;
    prt_status st;
    for (int32_t k = 0; k < nb_in; k++)
        dims[k] = in[k].dims;
    st = conv_geom_of(o, dims, nb_in, &g);
    if (st)
        return st;
    if (g.w.ns > OPK_MAX_SP)
        return op_fail(o, PRT_ERR_UNSUPPORTED, "%d spatial dims on CUDA (at most %d)",
                       (int)g.w.ns, OPK_MAX_SP);
    memset(&a, 0, sizeof a);
    a.dtype = dtype;
    a.ns = g.w.ns;
    a.N = g.N;
    a.C = g.C;
    a.M = g.M;
    a.G = g.G;
    a.Cg = g.Cg;
    a.Mg = g.Mg;
    for (int32_t i = 0; i < g.w.ns; i++) {
        a.in[i] = g.w.in[i];
        a.k[i] = g.w.k[i];
        a.out[i] = g.w.out[i];
        a.s[i] = g.w.s[i];
        a.d[i] = g.w.d[i];
        a.pb[i] = g.w.pb[i];
    }
    a.ivol = g.w.ivol;
    a.kvol = g.w.kvol;
    a.ovol = g.w.ovol;
    a.x = x[0];
    a.w = x[1];
    a.b = nb_in == 3 ? x[2] : NULL;
    a.y = y[0];
    a.act = act.kind;
    a.act_alpha = act.alpha;
    a.act_beta = act.beta;
    /* A pointwise float32 convolution (1x1, stride 1, no padding, one
     * group) is a product per image, Y_n [M x ovol] = W [M x C] X_n [C x
     * ovol]: cuBLAS, one strided batch over the images, then the bias and
     * activation in one pass. */
    if (blas && g.direct && g.G == 1 && dtype == PRT_FLOAT32 && g.C > 0) {
        st = opk_blas_gemm(blas, stream, 0, 0, g.M, g.w.ovol, g.C, x[1], g.C, 0, x[0],
                           g.w.ovol, g.C * g.w.ovol, y[0], g.w.ovol, g.M * g.w.ovol, g.N);
        if (st)
            return op_fail(o, st, "%s", prt_last_error());
        return opc_status(o, opk_conv_epilogue(&a, stream));
    }
    return opc_status(o, opk_conv(&a, stream));
}

/* Float32 and 16-bit floats with cuBLAS: one product when B has no batch
 * of its own, one strided batch when A's and B's batches are the same,
 * else one product per output matrix. 16-bit A and B are read as they
 * are (tensor cores, float32 sums) into float32 Y in the workspace, where
 * the bias is added before the one rounding to the output's type. */
OPC_KERNEL(opc_matmul)
{
    opk_blas *blas = o->res[PRT_DEVICE_CUDA];
    const char *A = x[0], *B = x[1];
    const size_t es = prt_dtype_size(dtype);
    float *Y = y[0];
    prt_dims bo;
    mm_geom g;
    int64_t nb;
    prt_status st;
    int err = 0;
    if (dtype != PRT_FLOAT32 && dtype != PRT_FLOAT16 && dtype != PRT_BFLOAT16)
        return op_fail(o, PRT_ERR_UNSUPPORTED,
                       "%s on CUDA is not supported (float32, "
                       "float16 and bfloat16 are)",
                       prt_dtype_name(dtype));
    mm_split(&in[0].dims, &in[1].dims, &g);
    st = op_broadcast_dims(o, &g.ba, &g.bb, &bo, "the batch dims of A and B");
    if (st)
        return st;
    if (dtype != PRT_FLOAT32)
        Y = ws; /* float32 sums, rounded once below */
    nb = base_volume(&bo);
    if (base_volume(&g.bb) == 1)
        st = opk_blas_gemm_ex(blas, stream, dtype, PRT_FLOAT32, 0, 0, nb * g.M, g.N, g.K,
                              A, g.K, 0, B, g.N, 0, Y, g.N, 0, 1);
    else if (base_volume(&g.ba) == nb && base_volume(&g.bb) == nb &&
             g.ba.nb_dims == g.bb.nb_dims &&
             memcmp(g.ba.d, g.bb.d, sizeof(int64_t) * (size_t)g.ba.nb_dims) == 0)
        st = opk_blas_gemm_ex(blas, stream, dtype, PRT_FLOAT32, 0, 0, g.M, g.N, g.K, A,
                              g.K, g.M * g.K, B, g.N, g.K * g.N, Y, g.N, g.M * g.N, nb);
    else
        for (int64_t b = 0; b < nb && !st; b++)
            st = opk_blas_gemm_ex(
                blas, stream, dtype, PRT_FLOAT32, 0, 0, g.M, g.N, g.K,
                A + (size_t)(mm_batch_offset(&g.ba, &bo, b) * g.M * g.K) * es, g.K, 0,
                B + (size_t)(mm_batch_offset(&g.bb, &bo, b) * g.K * g.N) * es, g.N, 0,
                Y + b * g.M * g.N, g.N, 0, 1);
    if (st)
        return op_fail(o, st, "%s", prt_last_error());
    /* The bias and the fused activation in one pass (fuse.cu). */
    if ((nb_in == 3 || ((const mm_op *)o)->act) &&
        (err = opk_bias_act_rows(dtype, nb_in == 3 ? x[2] : NULL, ((const mm_op *)o)->act,
                                 Y, base_volume(&out->dims) / (g.N > 0 ? g.N : 1), g.N,
                                 stream)) != 0)
        return opc_status(o, err);
    if (dtype != PRT_FLOAT32 &&
        (err = opk_from_f32(dtype, Y, y[0], base_volume(&out->dims), stream)) != 0)
        return opc_status(o, err);
    return PRT_OK;
}

/* cuBLAS's product (16-bit A and B read as they are, float32 sums; C and
 * Y in float32 in the workspace, laid out as on the CPU: A, B, C, then
 * Y), then alpha and C in one pass. */
OPC_KERNEL(opc_gemm)
{
    const gemm_op *g = (const gemm_op *)o;
    const void *A = x[0], *B = x[1];
    const float *C = nb_in == 3 ? x[2] : NULL;
    float *Y = y[0];
    int64_t M = out->dims.d[0], N = out->dims.d[1];
    int64_t K = in[0].dims.d[g->trans_a ? 0 : 1];
    int64_t si = 0, sj = 0;
    prt_status st;
    int err = 0;
    if (dtype == PRT_FLOAT16 || dtype == PRT_BFLOAT16) {
        float *w = ws + base_volume(&in[0].dims) + base_volume(&in[1].dims);
        if (C) {
            err = opk_to_f32(dtype, x[2], w, base_volume(&in[2].dims), stream);
            C = w;
            w += base_volume(&in[2].dims);
        }
        Y = w;
    } else if (dtype != PRT_FLOAT32) {
        return op_fail(o, PRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                       prt_dtype_name(dtype));
    }
    if (err)
        return opc_status(o, err);
    st = opk_blas_gemm_ex(o->res[PRT_DEVICE_CUDA], stream, dtype, PRT_FLOAT32, g->trans_a,
                          g->trans_b, M, N, K, A, g->trans_a ? M : K, 0, B,
                          g->trans_b ? K : N, 0, Y, N, 0, 1);
    if (st)
        return op_fail(o, st, "%s", prt_last_error());
    if (C && g->beta != 0.0f) {
        gemm_c_strides(&in[2].dims, &si, &sj);
        err = opk_gemm_epilogue(Y, M, N, g->alpha, C, si, sj, g->beta, stream);
    } else if (g->alpha != 1.0f) {
        err = opk_gemm_epilogue(Y, M, N, g->alpha, NULL, 0, 0, 0.0f, stream);
    }
    if (!err && Y != y[0])
        err = opk_from_f32(dtype, Y, y[0], M * N, stream);
    return opc_status(o, err);
}

/* The CPU's loop nest, one thread per output element. */
OPC_KERNEL(opc_einsum)
{
    const einsum_op *e = (const einsum_op *)o;
    opk_einsum_args a;
    prt_dims dims[ES_MAX_OPS] = {{0, {0}}};
    prt_status s;
    if (nb_in > OPK_MAX_OPERANDS)
        return op_fail(o, PRT_ERR_UNSUPPORTED, "%d operands on CUDA (at most %d)",
                       (int)nb_in, OPK_MAX_OPERANDS);
    memset(&a, 0, sizeof a);
    for (int32_t k = 0; k < nb_in; k++)
        dims[k] = in[k].dims;
    s = es_letter_sizes(e, dims, nb_in, a.size);
    if (s)
        return s;
    for (int32_t k = 0; k < nb_in; k++) {
        int64_t stride = 1;
        for (int32_t i = e->rank[k] - 1; i >= 0; i--) {
            a.stride[k][(int32_t)e->label[k][i]] += stride;
            stride *= dims[k].d[i];
        }
        a.x[k] = x[k];
    }
    a.dtype = dtype;
    a.nb_ops = nb_in;
    a.nb_letters = e->nb_letters;
    a.out_rank = e->out_rank;
    a.y = y[0];
    a.out_count = base_volume(&out->dims);
    a.sum_count = 1;
    for (int32_t l = e->out_rank; l < e->nb_letters; l++)
        a.sum_count *= a.size[l];
    return opc_status(o, opk_einsum(&a, stream));
}

OPC_KERNEL(opc_softmax)
{
    int64_t outer, inner, n;
    prt_status st = softmax_view(o, &in[0].dims, &outer, &n, &inner);
    if (st)
        return st;
    return opc_status(o, opk_softmax(dtype, x[0], y[0], outer, n, inner,
                                     o->cls->kind == LOG_SOFTMAX, stream));
}

/* Scale and B are read through a walk of the normalized dims (their dims
 * before the axis are 1, checked, and drop out of the walk). */
OPC_KERNEL(opc_layer_norm)
{
    const prt_dims *xd = &in[0].dims;
    int32_t axis = 0, types[1] = {dtype};
    opk_layer_norm_args a;
    prt_dims nd, sb[2];
    prt_status st = ln_axis(o, xd->nb_dims, &axis);
    if (st)
        return st;
    memset(&a, 0, sizeof a);
    a.dtype = dtype;
    a.stash_dtype = ln_out_dtype_n(o, types, 1, 1);
    a.norm = ln_norm_size(o, xd);
    if (a.norm < 0)
        return op_fail(o, PRT_ERR_SHAPE, "the normalized dims overflow");
    a.rows = a.norm > 0   ? base_volume(xd) / a.norm
             : nb_out > 1 ? base_volume(&out[1].dims)
                          : 0;
    a.epsilon = ((const ln_op *)o)->epsilon;
    nd.nb_dims = xd->nb_dims - axis;
    for (int32_t i = 0; i < nd.nb_dims; i++)
        nd.d[i] = xd->d[axis + i];
    for (int32_t k = 0; k < 2; k++) {
        /* Scale, then B (or Scale again in its place, unread). */
        prt_dims t = in[k + 1 < nb_in ? k + 1 : 1].dims;
        if (t.nb_dims > nd.nb_dims) { /* leading 1s before the axis */
            int32_t drop = t.nb_dims - nd.nb_dims;
            for (int32_t i = 0; i < nd.nb_dims; i++)
                t.d[i] = t.d[i + drop];
            t.nb_dims = nd.nb_dims;
        }
        sb[k] = t;
    }
    opk_bcast_init(&a.sb, &nd, 2, sb);
    a.x = x[0];
    a.scale = x[1];
    a.bias = nb_in == 3 ? x[2] : NULL;
    a.y = y[0];
    a.mean = nb_out > 1 ? y[1] : NULL;
    a.inv_std = nb_out > 2 ? y[2] : NULL;
    return opc_status(o, opk_layer_norm(&a, stream));
}

OPC_KERNEL(opc_global_average_pool)
{
    const prt_dims *d = &in[0].dims;
    int64_t sp = 1;
    for (int32_t i = 2; i < d->nb_dims; i++)
        sp *= d->d[i];
    return opc_status(o, opk_row_mean(dtype, x[0], y[0], d->d[0] * d->d[1], sp, stream));
}
