/*
 * The CUDA kernels of Shrink, LRN, ReverseSequence and MaxUnpool (ops.h):
 * their CPU files' fields and checks, then misc.cu's launchers.
 */
#include <string.h>

#include "ops/cuda/launch.h"
#include "ops/cuda/ops.h"
#include "ops/ops_data.h"
#include "ops/ops_nn.h"

OPC_KERNEL(opc_shrink)
{
    float lambd, bias;
    (void)nb_in, (void)out, (void)nb_out, (void)ws;
    shrink_params(o, &lambd, &bias);
    return opc_status(
        o, opk_shrink(dtype, x[0], y[0], base_volume(&in[0].dims), lambd, bias, stream));
}

OPC_KERNEL(opc_lrn)
{
    const prt_dims *d = &in[0].dims;
    int32_t size;
    float alpha, beta, bias;
    int64_t nc;
    (void)nb_in, (void)out, (void)nb_out, (void)ws;
    if (d->nb_dims < 2)
        return op_fail(o, PRT_ERR_SHAPE, "LRN needs rank 2 or more, not %d",
                       (int)d->nb_dims);
    lrn_params(o, &size, &alpha, &beta, &bias);
    nc = d->d[0] * d->d[1];
    return opc_status(o, opk_lrn(dtype, x[0], y[0], d->d[0], d->d[1],
                                 nc > 0 ? base_volume(d) / nc : 0, size, alpha, beta,
                                 bias, stream));
}

/* A length outside [0, T] is clamped to it (the CPU fails the run). */
OPC_KERNEL(opc_reverse_sequence)
{
    const prt_dims *d = &in[0].dims;
    const int32_t ba = revseq_batch_axis(o);
    int64_t B, T, bt;
    (void)out, (void)nb_out, (void)ws;
    if (d->nb_dims < 2 || nb_in < 2)
        return op_fail(o, PRT_ERR_SHAPE,
                       "ReverseSequence needs rank 2 or more and lengths");
    B = d->d[ba];
    T = d->d[1 - ba];
    bt = B * T;
    if (base_volume(&in[1].dims) != B)
        return op_fail(o, PRT_ERR_SHAPE,
                       "sequence_lens holds %lld values for %lld batches",
                       (long long)base_volume(&in[1].dims), (long long)B);
    return opc_status(o, opk_reverse_sequence((int32_t)prt_dtype_size(dtype), x[0], x[1],
                                              in[1].dtype, y[0], ba, B, T,
                                              bt > 0 ? base_volume(d) / bt : 0, stream));
}

/* An index outside the frame is skipped (the CPU fails the run). */
OPC_KERNEL(opc_max_unpool)
{
    prt_dims frame;
    opk_dims_arg f, yd;
    prt_status st = max_unpool_frame(o, &in[0].dims, &in[1].dims, &out->dims, &frame);
    (void)nb_in, (void)nb_out;
    if (st)
        return st;
    if (out->dims.nb_dims > OPK_MAX_RANK)
        return op_fail(o, PRT_ERR_SHAPE, "rank %d on CUDA (at most %d)",
                       (int)out->dims.nb_dims, OPK_MAX_RANK);
    memset(&f, 0, sizeof f);
    memset(&yd, 0, sizeof yd);
    f.rank = yd.rank = out->dims.nb_dims;
    for (int32_t k = 0; k < out->dims.nb_dims; k++) {
        f.d[k] = frame.d[k];
        yd.d[k] = out->dims.d[k];
    }
    if (base_volume(&out->dims) > 0 && !ws)
        return op_fail(o, PRT_ERR_MALFORMED, "needs its workspace");
    return opc_status(o, opk_max_unpool((int32_t)prt_dtype_size(dtype), x[0], x[1],
                                        base_volume(&in[0].dims), &f, &yd, y[0], ws,
                                        stream));
}
