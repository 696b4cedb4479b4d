// CUDA kernels of Resize (launch.h): the taps of every axis, one thread per
// output index of an axis, with resize.c's own code (resize_taps.h), into
// the op's workspace; then one thread per output element summing its taps
// in the CPU's order (resize.c's rs_sum, unrolled into a loop). Built with
// -fmad=false (CMakeLists.txt), so double sums and products round as the
// CPU's do.
#include "ops/cuda/launch.cuh"
#include "ops/resize_taps.h"

namespace opk
{
namespace
{

__global__ void resize_taps_kernel(rs_plan pl, const void *sizes, int32_t sizes_dtype,
                                   int64_t rows)
{
    OPK_FOR(e, rows)
    {
        int64_t x = e;
        int32_t i = 0;
        while (i < pl.rank - 1 && x >= pl.ax[i].out)
            x -= pl.ax[i++].out;
        rs_axis a = pl.ax[i];
        if (pl.keep_on_device && pl.axis_of[i] >= 0) {
            int64_t dims[8];
            for (int32_t k = 0; k < pl.rank; k++)
                dims[k] = pl.ax[k].in;
            a.scale = rs_keep_scale(&pl.p, pl.rank, pl.axis_of, sizes, sizes_dtype, dims);
        }
        rs_axis_row(&pl.p, &a, x);
    }
}

// resize.c's rs_sum: the last axis's taps summed in full, the others' taps
// of weight 0 skipped, each axis's weighted sum in tap order.
__device__ double resize_sum(const rs_plan &pl, const int64_t *o, const int64_t *stride,
                             const float *x)
{
    const int32_t last = pl.rank - 1;
    int64_t k[8], off[8];
    double acc[8];
    int32_t a = 0;
    k[0] = 0;
    off[0] = 0;
    acc[0] = 0.0;
    for (;;) {
        const rs_axis &ax = pl.ax[a];
        const double *w = ax.w + o[a] * ax.taps;
        const int64_t lo = ax.lo[o[a]], n = ax.cnt[o[a]];
        double s;
        if (a == last) {
            s = 0.0;
            for (int64_t t = 0; t < n; t++)
                s += w[t] * (double)x[off[a] + lo + t];
        } else {
            while (k[a] < n && w[k[a]] == 0.0)
                k[a]++;
            if (k[a] < n) {
                off[a + 1] = off[a] + (lo + k[a]) * stride[a];
                a++;
                k[a] = 0;
                acc[a] = 0.0;
                continue;
            }
            s = acc[a];
        }
        if (a == 0)
            return s;
        a--;
        acc[a] += pl.ax[a].w[o[a] * pl.ax[a].taps + k[a]] * s;
        k[a]++;
    }
}

__global__ void resize_kernel(rs_plan pl, int32_t dtype, int32_t esize, const void *x,
                              const float *xf, void *y, int64_t n)
{
    int64_t stride[8], s = 1;
    for (int32_t i = pl.rank - 1; i >= 0; i--) {
        stride[i] = s;
        s *= pl.ax[i].in;
    }
    OPK_FOR(q, n)
    {
        int64_t o[8], rest = q, off = 0;
        int extrap = 0;
        for (int32_t i = pl.rank - 1; i >= 0; i--) {
            o[i] = rest % pl.ax[i].out;
            rest /= pl.ax[i].out;
            extrap |= pl.ax[i].cnt[o[i]] == 0;
            off += pl.ax[i].lo[o[i]] * stride[i];
        }
        if (extrap) {
            rs_store(dtype, y, q, pl.extrapolation);
        } else if (pl.p.mode == RS_NEAREST) {
            switch (esize) {
            case 1:
                ((uint8_t *)y)[q] = ((const uint8_t *)x)[off];
                break;
            case 2:
                ((uint16_t *)y)[q] = ((const uint16_t *)x)[off];
                break;
            case 4:
                ((uint32_t *)y)[q] = ((const uint32_t *)x)[off];
                break;
            default:
                ((uint64_t *)y)[q] = ((const uint64_t *)x)[off];
                break;
            }
        } else {
            rs_store(dtype, y, q, resize_sum(pl, o, stride, xf));
        }
    }
}

} // namespace
} // namespace opk

using namespace opk;

extern "C" int opk_resize(const rs_plan *pl, const void *sizes, int32_t sizes_dtype,
                          int32_t dtype, int32_t esize, const void *x, float *xf,
                          int64_t x_count, void *y, int64_t n, void *stream)
{
    int64_t rows = 0;
    if (n == 0)
        return 0;
    if (pl->rank < 1 || pl->rank > OPK_MAX_RANK)
        return (int)cudaErrorInvalidValue;
    for (int32_t i = 0; i < pl->rank; i++)
        rows += pl->ax[i].out;
    resize_taps_kernel<<<blocks_for(rows), kThreads, 0, (cudaStream_t)stream>>>(
        *pl, sizes, sizes_dtype, rows);
    if (int err = launched())
        return err;
    if (pl->p.mode != RS_NEAREST) {
        if (dtype != PRT_FLOAT32) {
            int err = opk_to_f32(dtype, x, xf, x_count, stream);
            if (err)
                return err;
        } else {
            xf = (float *)x;
        }
    }
    resize_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(*pl, dtype, esize,
                                                                        x, xf, y, n);
    return launched();
}
