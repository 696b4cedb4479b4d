/*
 * ConvTranspose's CUDA kernel (ops.h): conv_transpose.c's geometry and
 * checks, then convt.cu's gather kernel.
 */
#include <string.h>

#include "ops/cuda/launch.h"
#include "ops/cuda/ops.h"
#include "ops/ops_nn.h"

OPC_KERNEL(opc_conv_transpose)
{
    prt_dims dims[3];
    op_conv_geom g;
    opk_convt_args a;
    prt_status st;
    (void)nb_out, (void)ws;
    for (int32_t k = 0; k < nb_in && k < 3; k++)
        dims[k] = in[k].dims;
    st = ct_geometry(o, dims, nb_in, &g);
    if (st)
        return st;
    if (g.w.ns > OPK_CT_MAX_SP)
        return op_fail(o, PRT_ERR_UNSUPPORTED, "%d spatial dims on CUDA (at most %d)",
                       (int)g.w.ns, OPK_CT_MAX_SP);
    memset(&a, 0, sizeof a);
    a.dtype = dtype;
    a.ns = g.w.ns;
    a.C = g.C;
    a.M = g.M;
    a.Cg = g.Cg;
    a.Mg = g.Mg;
    /* The window as col2im sees it: in = Y's spatial dims, out = X's. */
    for (int32_t d = 0; d < g.w.ns; d++) {
        a.in[d] = g.w.out[d];
        a.out[d] = g.w.in[d];
        a.k[d] = g.w.k[d];
        a.s[d] = g.w.s[d];
        a.dil[d] = g.w.d[d];
        a.pb[d] = g.w.pb[d];
    }
    a.ivol = g.w.ovol;
    a.kvol = g.w.kvol;
    a.x = x[0];
    a.w = x[1];
    a.b = nb_in == 3 ? x[2] : NULL;
    a.y = y[0];
    a.n = base_volume(&out->dims);
    return opc_status(o, opk_conv_transpose(&a, stream));
}
