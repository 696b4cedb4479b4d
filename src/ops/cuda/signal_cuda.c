/*
 * The CUDA kernels of the signal ops (ops.h): HannWindow, HammingWindow,
 * BlackmanWindow, MelWeightMatrix, DFT and STFT. Their CPU files' fields
 * and checks on the dims, then signal.cu's launchers; the values that
 * size the work stay in device memory (the kernels read them), so the
 * host takes bins and frames from the output's dims (SIGNAL_ON_DEVICE),
 * unless such an input is a shape input in host memory (a graph input):
 * then the host reads it and the kernel takes the value (size_arg).
 */
#include "ops/cuda/launch.h"
#include "ops/cuda/ops.h"
#include "ops/ops_signal.h"

static int is_index(int32_t dt)
{
    return dt == PRT_INT32 || dt == PRT_INT64;
}

/* A size input the kernel reads, or NULL when it is a shape input in host
 * memory (a graph input the runtime keeps there): then *v holds its value,
 * read here, and the kernel takes that (as Range's start and delta). */
static const void *size_arg(const prt_tensor_desc *d, const void *p, int64_t *v)
{
    if (!prt_tensor_desc_on_host(d))
        return p;
    *v = d->dtype == PRT_INT64 ? *(const int64_t *)p : *(const int32_t *)p;
    return NULL;
}

OPC_KERNEL(opc_window)
{
    double c[3];
    int32_t periodic;
    (void)dtype, (void)in, (void)nb_in, (void)x, (void)nb_out, (void)ws;
    if (out->dims.nb_dims != 1)
        return op_fail(o, PRT_ERR_SHAPE, "the output must be 1-D");
    signal_window_params(o, c, &periodic);
    return opc_status(o,
                      opk_window(out->dtype, y[0], out->dims.d[0], c, periodic, stream));
}

OPC_KERNEL(opc_mel_weight)
{
    int64_t len = 0;
    const void *lenp;
    (void)dtype, (void)nb_out, (void)ws;
    if (nb_in != 5 || out->dims.nb_dims != 2 || !is_index(in[1].dtype))
        return op_fail(o, PRT_ERR_SHAPE, "needs 5 inputs and a 2-D output");
    lenp = size_arg(&in[1], x[1], &len);
    return opc_status(o, opk_mel_weight(out->dtype, y[0], out->dims.d[0], out->dims.d[1],
                                        lenp, len, x[2], in[1].dtype, x[3], x[4],
                                        in[3].dtype, stream));
}

OPC_KERNEL(opc_dft)
{
    signal_dft_geom g;
    opk_dft_geom k;
    prt_status st = dft_geom(o, in, &out->dims, nb_in > 1 ? SIGNAL_ON_DEVICE : -1, &g);
    (void)nb_out, (void)ws;
    if (st)
        return st;
    k.outer = g.outer, k.axis_len = g.axis_len, k.inner = g.inner, k.comps = g.comps;
    k.len = g.len, k.bins = g.bins, k.inverse = g.inverse;
    return opc_status(o, opk_dft(dtype, x[0], y[0], &k,
                                 nb_in > 1 ? size_arg(&in[1], x[1], &k.len) : NULL,
                                 nb_in > 1 ? in[1].dtype : PRT_INT64, stream));
}

OPC_KERNEL(opc_stft)
{
    signal_stft_geom g;
    opk_stft_geom k;
    int32_t w, l;
    prt_status st;
    (void)nb_out, (void)ws;
    if (nb_in < 2 || !is_index(in[1].dtype))
        return op_fail(o, PRT_ERR_SHAPE, "needs signal and frame_step");
    stft_roles(in, nb_in, &w, &l);
    st = stft_geom(o, in, w, &out->dims, SIGNAL_ON_DEVICE, l >= 0 ? SIGNAL_ON_DEVICE : -1,
                   &g);
    if (st)
        return st;
    k.batch = g.batch, k.samples = g.samples, k.comps = g.comps, k.frames = g.frames;
    k.len = g.len, k.bins = g.bins, k.step = 0;
    return opc_status(o, opk_stft(dtype, x[0], w >= 0 ? x[w] : NULL, y[0], &k,
                                  size_arg(&in[1], x[1], &k.step), in[1].dtype,
                                  l >= 0 ? size_arg(&in[l], x[l], &k.len) : NULL,
                                  l >= 0 ? in[l].dtype : PRT_INT64, stream));
}
