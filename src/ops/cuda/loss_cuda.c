/*
 * The CUDA kernels of the losses, MeanVarianceNormalization and Det (ops.h):
 * their CPU files' fields and geometry (ops_loss.h), then loss.cu's
 * launchers. SoftmaxCrossEntropyLoss runs as on the CPU: the
 * log-probabilities as float32 in the workspace (and log_prob when asked
 * for), then NegativeLogLikelihoodLoss's kernel over them.
 */
#include "ops/cuda/launch.h"
#include "ops/cuda/ops.h"
#include "ops/ops_loss.h"

OPC_KERNEL(opc_nll_loss)
{
    opk_loss_params p;
    (void)dtype, (void)nb_out, (void)ws;
    loss_params(o, in, &p);
    return opc_status(o, opk_nll_loss(&p, x[0], x[1], nb_in > 2 ? x[2] : NULL, y[0],
                                      out[0].dtype, stream));
}

OPC_KERNEL(opc_sce_loss)
{
    opk_loss_params p;
    int err;
    (void)dtype;
    loss_params(o, in, &p);
    err = opk_sce_log_softmax(&p, x[0], ws, nb_out > 1 ? y[1] : NULL,
                              nb_out > 1 ? out[1].dtype : PRT_FLOAT32, stream);
    p.xdt = PRT_FLOAT32;
    if (!err)
        err = opk_nll_loss(&p, ws, x[1], nb_in > 2 ? x[2] : NULL, y[0], out[0].dtype,
                           stream);
    return opc_status(o, err);
}

OPC_KERNEL(opc_mvn)
{
    opk_mvn_params p;
    prt_status st = mvn_params(o, &in[0].dims, dtype, &p);
    (void)nb_in, (void)out, (void)nb_out, (void)ws;
    return st ? st : opc_status(o, opk_mvn_norm(&p, x[0], y[0], stream));
}

OPC_KERNEL(opc_det)
{
    int64_t batch, m;
    (void)nb_in, (void)nb_out;
    det_geom(&in[0].dims, &batch, &m);
    return opc_status(
        o, opk_det_batch(dtype, x[0], y[0], out[0].dtype, batch, m, ws, stream));
}
