// CUDA kernels of Resize (launch.h): the taps of every axis, one thread per
// output index of an axis, with resize.c's own code (resize_taps.h), into
// the op's workspace; then one thread per output element summing its taps
// in the CPU's order (resize.c's rs_sum, unrolled into a loop), or, where
// only the last two axes resize (`planes`), a block per output row. Built with
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

// The planes path (resize_taps.h's rs_planes_ok, checked on the host:
// every axis before the last two maps each index to itself): a block per
// output row of a plane at a time, its threads along the row, each output
// rs_planes_elem's operations (the rows of weight 0 skipped, the others'
// sums added to 0.0 in tap order): the generic kernel's bits, without its
// per-element index walk (the divisions of every axis) and stacks. An
// output row or column without taps (tf_crop_and_resize outside) is the
// extrapolation value.
__global__ void resize_planes_kernel(rs_plan pl, int32_t dtype, const float *xf, void *y,
                                     int64_t rows)
{
    const rs_axis &ay = pl.ax[pl.rank - 2], &axx = pl.ax[pl.rank - 1];
    const int64_t ih = ay.in, iw = axx.in, oh = ay.out, ow = axx.out;
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const int64_t p = r / oh, oy = r % oh, ly = ay.lo[oy], ny = ay.cnt[oy];
        const float *xp = xf + p * ih * iw;
        const double *wy = ay.w + oy * ay.taps;
        for (int64_t ox = threadIdx.x; ox < ow; ox += blockDim.x) {
            const int64_t q = r * ow + ox, lx = axx.lo[ox], nx = axx.cnt[ox];
            const double *wx = axx.w + ox * axx.taps;
            double acc = 0.0;
            if (ny == 0 || nx == 0) {
                rs_store(dtype, y, q, pl.extrapolation);
                continue;
            }
            for (int64_t k = 0; k < ny; k++) {
                const float *xr = xp + (ly + k) * iw + lx;
                double sx = 0.0;
                if (wy[k] == 0.0)
                    continue;
                for (int64_t j = 0; j < nx; j++)
                    sx += wx[j] * (double)xr[j];
                acc += wy[k] * sx;
            }
            rs_store(dtype, y, q, acc);
        }
    }
}

} // namespace
} // namespace opk

using namespace opk;

extern "C" int opk_resize(const rs_plan *pl, const void *sizes, int32_t sizes_dtype,
                          int32_t dtype, int32_t esize, const void *x, float *xf,
                          int64_t x_count, void *y, int64_t n, int planes, void *stream)
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
    if (planes && pl->p.mode != RS_NEAREST && pl->rank >= 2) {
        const int64_t ow = pl->ax[pl->rank - 1].out, rows = n / ow;
        const int threads = ow >= 256 ? 256 : ow >= 128 ? 128 : ow >= 64 ? 64 : 32;
        const int64_t grid = rows < (1 << 20) ? rows : (1 << 20);
        resize_planes_kernel<<<(unsigned)grid, threads, 0, (cudaStream_t)stream>>>(
            *pl, dtype, xf, y, rows);
        return launched();
    }
    resize_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(*pl, dtype, esize,
                                                                        x, xf, y, n);
    return launched();
}
