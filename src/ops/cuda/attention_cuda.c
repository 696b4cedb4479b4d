/*
 * Attention on CUDA (attention.cu): the CPU kernel's geometry
 * (attn_geometry, ops/attention.c) handed to one flash-attention style
 * kernel. Head sizes past OPK_ATTN_MAX_D are refused naming the layer: the
 * kernel keeps a query's output row in registers, 128 floats across a warp.
 */
#include <math.h>
#include <string.h>

#include "ops/cuda/launch.h"
#include "ops/cuda/ops.h"
#include "ops/ops_nn.h"

OPC_KERNEL(opc_attention)
{
    const attn_op *at = (const attn_op *)o;
    prt_dims dims[4];
    opk_attention_args a;
    attn_geom g;
    prt_status st;
    (void)ws, (void)nb_out, (void)out;
    for (int32_t k = 0; k < nb_in; k++)
        dims[k] = in[k].dims;
    st = attn_geometry(o, dims, nb_in, &g);
    if (st)
        return st;
    if (g.D > OPK_ATTN_MAX_D || g.Dv > OPK_ATTN_MAX_D)
        return op_fail(o, PRT_ERR_UNSUPPORTED,
                       "head size %lld (values %lld) is more than the CUDA kernel's %d",
                       (long long)g.D, (long long)g.Dv, OPK_ATTN_MAX_D);
    if (g.B > 65535 || g.Hq > 65535)
        return op_fail(
            o, PRT_ERR_UNSUPPORTED,
            "batch %lld and heads %lld: the CUDA kernel takes up to 65535 each",
            (long long)g.B, (long long)g.Hq);
    memset(&a, 0, sizeof a);
    a.dtype = dtype;
    a.mask_dtype = nb_in > 3 ? in[3].dtype : PRT_FLOAT32;
    a.B = g.B, a.Hq = g.Hq, a.Hkv = g.Hkv, a.Sq = g.Sq, a.Skv = g.Skv, a.D = g.D;
    a.Dv = g.Dv;
    memcpy(a.q, g.q, sizeof a.q);
    memcpy(a.k, g.k, sizeof a.k);
    memcpy(a.v, g.v, sizeof a.v);
    memcpy(a.y, g.y, sizeof a.y);
    memcpy(a.m, g.m, sizeof a.m);
    a.mlen = g.mlen;
    a.scale = at->scale != 0.0f ? at->scale : 1.0f / sqrtf((float)g.D);
    a.softcap = at->softcap;
    a.causal = at->is_causal;
    a.kt = at->k_transposed;
    a.empty_zero = at->empty_rows_zero;
    a.Q = x[0], a.K = x[1], a.V = x[2];
    a.mask = nb_in > 3 ? x[3] : NULL;
    a.Y = y[0];
    return opc_status(o, opk_attention(&a, stream));
}
