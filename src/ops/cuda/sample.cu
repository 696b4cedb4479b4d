// CUDA kernels of GridSample and RoiAlign (launch.h): one thread per output
// element, each computed by sample.h's element function, the CPU kernel's
// own code. Built with -fmad=false (CMakeLists.txt), so the double
// arithmetic rounds as the CPU's does.
#include "ops/cuda/launch.cuh"
#include "ops/sample.h"

namespace opk
{
namespace
{

__global__ void grid_sample_kernel(opk_gs_params p, const void *x, const void *grid,
                                   void *y, int32_t ydt, int64_t n)
{
    OPK_FOR(e, n)
    {
        opk_float_put(ydt, y, e, (float)opk_gs_at(&p, x, grid, e));
    }
}

__global__ void roi_align_kernel(opk_roi_params p, const void *x, const void *rois,
                                 const void *bidx, void *y, int64_t n)
{
    OPK_FOR(e, n)
    {
        opk_float_put(p.xdt, y, e, (float)opk_roi_at(&p, x, rois, bidx, e));
    }
}

} // namespace
} // namespace opk

using namespace opk;

extern "C" int opk_grid_sample(const opk_gs_params *p, const void *x, const void *grid,
                               void *y, int32_t ydt, int64_t n, void *stream)
{
    if (n <= 0)
        return 0;
    grid_sample_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(*p, x, grid,
                                                                             y, ydt, n);
    return launched();
}

extern "C" int opk_roi_align(const opk_roi_params *p, const void *x, const void *rois,
                             const void *bidx, void *y, int64_t n, void *stream)
{
    if (n <= 0)
        return 0;
    roi_align_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(*p, x, rois,
                                                                           bidx, y, n);
    return launched();
}
