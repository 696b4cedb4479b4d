/*
 * The CUDA kernel of LSTM, GRU and RNN (ops.h): rnn.c's checks
 * (rnn_describe), then per direction X W^T for every step as one cuBLAS
 * product into the workspace, then the steps: where rnn.cu's kernels fit
 * the device (opk_rnn_persist), one launch for both directions (or one per
 * direction) that runs every step;
 * otherwise per step H R^T through cuBLAS (GRU without
 * linear_before_reset: also (r H) Rh^T between two passes of the gates)
 * and rnn.cu's gate kernel. The workspace is the CPU's (rnn.c lays it out,
 * a part per direction; the transposed weights' part goes unused here).
 * The lengths stay on the device, so every direction runs T steps, a
 * batch entry's threads idle past its length; a length outside [0, T] is
 * clamped (the CPU fails the run).
 */
#include <string.h>

#include <cuda_runtime.h>

#include "ops/cuda/blas.h"
#include "ops/cuda/launch.h"
#include "ops/cuda/ops.h"
#include "ops/rnn.h"

OPC_KERNEL(opc_rnn)
{
    prt_dims dims[RNN_NB_INPUTS];
    rnn_desc d;
    opk_rnn_args a, args[2];
    opk_blas *blas = o->res[PRT_DEVICE_CUDA];
    prt_status st;
    int64_t H, gh, TB, part;
    int32_t ran = 0;
    float *f = ws;
    (void)out;
    for (int32_t i = 0; i < nb_in; i++)
        dims[i] = in[i].dims;
    st = rnn_describe(o, dims, nb_in, &d);
    if (st)
        return st;
    if (!blas)
        return op_fail(o, PRT_ERR_STATE, "has no cuBLAS handle");
    H = d.H;
    gh = d.gates * H;
    TB = d.T * d.B;
    memset(&a, 0, sizeof a);
    a.kind = d.kind == RNN_KIND_LSTM ? 2 : d.kind == RNN_KIND_GRU ? 1 : 0;
    a.G = d.gates;
    a.D = d.dirs;
    a.layout = d.layout;
    a.lbr = d.linear_before_reset;
    a.input_forget = d.input_forget;
    a.has_clip = d.has_clip;
    a.clip = d.clip;
    a.per = d.nb_per_dir;
    for (int32_t k = 0; k < RNN_MAX_ACTS; k++) {
        a.act[k] = d.act[k];
        a.alpha[k] = d.alpha[k];
        a.beta[k] = d.beta[k];
    }
    a.T = d.T;
    a.B = d.B;
    a.H = H;
    a.bias = d.in[RNN_B] >= 0 ? x[d.in[RNN_B]] : NULL;
    a.h0 = d.in[RNN_H0] >= 0 ? x[d.in[RNN_H0]] : NULL;
    a.c0 = d.in[RNN_C0] >= 0 ? x[d.in[RNN_C0]] : NULL;
    a.p = d.in[RNN_P] >= 0 ? x[d.in[RNN_P]] : NULL;
    a.lens = d.in[RNN_SEQ] >= 0 ? x[d.in[RNN_SEQ]] : NULL;
    a.y = nb_out > 0 ? y[0] : NULL;
    a.yh = nb_out > 1 ? y[1] : NULL;
    a.yc = nb_out > 2 ? y[2] : NULL;
    if (a.y && a.lens &&
        cudaMemsetAsync(a.y, 0, sizeof(float) * (size_t)(TB * d.dirs * H),
                        (cudaStream_t)stream) != cudaSuccess)
        return op_fail(o, PRT_ERR_INTERNAL, "clearing Y failed");
    if (d.B == 0 || H == 0)
        return PRT_OK;
    if (!ws)
        return op_fail(o, PRT_ERR_MALFORMED, "needs its workspace");
    /* The op's workspace holds a part per direction, in rnn.c's layout: W^T,
     * R^T, two biases, then these. */
    part = o->cls->workspace(o, dtype, dims, nb_in, NULL, 0) / (int64_t)sizeof(float) /
           d.dirs;
    for (int32_t dir = 0; dir < d.dirs; dir++) {
        opk_rnn_args *p = &args[dir];
        *p = a;
        p->dir = dir;
        p->rev = d.reverse || dir == 1;
        p->r = (const float *)x[d.in[RNN_R]] + dir * gh * H;
        p->xw = f + dir * part + d.I * gh + H * gh + gh + H;
        p->hr = (float *)p->xw + TB * gh;
        p->h = p->hr + d.B * gh;
        p->c = p->h + d.B * H;
        p->tmp = p->c + d.B * H;
        if (!st)
            st = opk_blas_gemm(blas, stream, 0, 1, TB, gh, d.I, x[d.in[RNN_X]], d.I, 0,
                               (const float *)x[d.in[RNN_W]] + dir * gh * d.I, d.I, 0,
                               (float *)p->xw, gh, 0, 1);
    }
    if (st)
        return st;
    st = opc_status(o, opk_rnn_persist(args, d.dirs, &ran, stream));
    if (!st && !ran && d.dirs == 2) { /* both directions' blocks do not fit at once */
        st = opc_status(o, opk_rnn_persist(&args[0], 1, &ran, stream));
        if (!st && ran)
            st = opc_status(o, opk_rnn_persist(&args[1], 1, &ran, stream));
    }
    if (st || ran)
        return st;
    for (int32_t dir = 0; dir < d.dirs && !st; dir++) {
        const opk_rnn_args *p = &args[dir];
        const int gru2 = d.kind == RNN_KIND_GRU && !d.linear_before_reset;
        st = opc_status(o, opk_rnn_init(p, stream));
        for (int64_t s = 0; s < d.T && !st; s++) {
            st = opk_blas_gemm(blas, stream, 0, 1, d.B, gru2 ? 2 * H : gh, H, p->h, H, 0,
                               p->r, H, 0, p->hr, gh, 0, 1);
            if (!st)
                st = opc_status(o, opk_rnn_step(p, s, 0, stream));
            if (!st && gru2)
                st = opk_blas_gemm(blas, stream, 0, 1, d.B, H, H, p->tmp, H, 0,
                                   p->r + 2 * H * H, H, 0, p->hr + 2 * H, gh, 0, 1);
            if (!st && gru2)
                st = opc_status(o, opk_rnn_step(p, s, 1, stream));
        }
        if (!st)
            st = opc_status(o, opk_rnn_final(p, stream));
    }
    return st;
}
