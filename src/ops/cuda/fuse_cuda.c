/*
 * The CUDA kernels of the importer's fused layers: SkipLayerNormalization
 * (skip_layer_norm.c; Add -> LayerNormalization) and ElementwiseChain
 * (ew_chain.c). Shapes and fields are checked by the ops, so only the
 * launches' arguments are made here.
 */
#include <string.h>

#include "ops/cuda/fuse.h"
#include "ops/cuda/ops.h"
#include "ops/ew_chain.h"
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

_Static_assert(OPK_SLN_MAX_DIMS == PRT_MAX_DIMS, "fuse.h's dims are plugin.h's");
_Static_assert(OPK_MAX_IN >= EC_MAX_INPUTS, "a chain's inputs fit one broadcast walk");

OPC_KERNEL(opc_ew_chain)
{
    opk_ew_chain_args a;
    prt_dims d[OP_WALK_MAX];
    const int32_t *prog;
    const float *consts;
    int32_t nb_consts;
    (void)ws, (void)nb_out;
    if (dtype != PRT_FLOAT32 && dtype != PRT_FLOAT16 && dtype != PRT_BFLOAT16)
        return op_fail(o, PRT_ERR_UNSUPPORTED, "dtype %s is not supported on CUDA",
                       prt_dtype_name(dtype));
    memset(&a, 0, sizeof a);
    ec_program(o, &a.nb_steps, &prog, &nb_consts, &consts);
    memcpy(a.prog, prog, sizeof(int32_t) * 3 * (size_t)a.nb_steps);
    memcpy(a.consts, consts, sizeof(float) * (size_t)nb_consts);
    for (int32_t k = 0; k < nb_in; k++) {
        d[k] = in[k].dims;
        a.x[k] = x[k];
    }
    opk_bcast_init(&a.b, &out->dims, nb_in, d);
    a.dtype = dtype;
    a.n = base_volume(&out->dims);
    a.y = y[0];
    return opc_status(o, opk_ew_chain(&a, stream));
}
