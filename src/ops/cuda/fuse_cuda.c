/*
 * The CUDA kernel of SkipLayerNormalization (skip_layer_norm.c; the
 * importer's Add -> LayerNormalization): shapes and inputs checked by the
 * op's infer, so only the launch's arguments are made here.
 */
#include <string.h>

#include "ops/cuda/fuse.h"
#include "ops/cuda/ops.h"
#include "ops/ops_nn.h"

OPC_KERNEL(opc_skip_layer_norm)
{
    const prt_dims *od = &out[0].dims;
    opk_skip_ln_args a;
    (void)ws;
    if (dtype != PRT_FLOAT32 && dtype != PRT_FLOAT16 && dtype != PRT_BFLOAT16)
        return op_fail(o, PRT_ERR_UNSUPPORTED, "dtype %s is not supported on CUDA",
                       prt_dtype_name(dtype));
    memset(&a, 0, sizeof a);
    a.dtype = dtype;
    a.h = od->d[od->nb_dims - 1];
    /* Rows of nothing still get their (NaN) statistics. */
    a.rows = a.h > 0 ? base_volume(od) / a.h : nb_out > 1 ? base_volume(&out[1].dims) : 0;
    a.rank = od->nb_dims;
    memcpy(a.d, od->d, sizeof(int64_t) * (size_t)od->nb_dims);
    op_broadcast_strides(&in[0].dims, od, a.sx);
    op_broadcast_strides(&in[1].dims, od, a.ss);
    a.ng = base_volume(&in[2].dims);
    a.nbeta = nb_in > 3 ? base_volume(&in[3].dims) : 0;
    a.nbias = nb_in > 4 ? base_volume(&in[4].dims) : 0;
    a.epsilon = ((const sln_op *)o)->epsilon;
    a.x = x[0];
    a.skip = x[1];
    a.gamma = x[2];
    a.beta = nb_in > 3 ? x[3] : NULL;
    a.bias = nb_in > 4 ? x[4] : NULL;
    a.y = y[0];
    a.mean = nb_out > 1 ? y[1] : NULL;
    a.inv_std = nb_out > 2 ? y[2] : NULL;
    a.sum = nb_out > 3 ? y[3] : NULL;
    return opc_status(o, opk_skip_ln(&a, stream));
}
