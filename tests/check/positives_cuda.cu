/* The CUDA kernel of check::Positives (positives_cuda.h): one thread does
 * what the CPU does, in order, since the checker's tensors are small and
 * the point is the defects, not the speed. */
#include <cuda_runtime.h>

#include <stdio.h>

#include "positives_cuda.h"

namespace
{

struct dims_arg {
    int64_t d[PRT_MAX_DIMS];
};

__global__ void positives_kernel(const float *x, int64_t n, float threshold, float *y,
                                 int64_t *k_out, int64_t *dims_out, int32_t rank,
                                 dims_arg dims, int32_t defect)
{
    int64_t k = 0, keep = 0;
    if (defect == POS_CUDA_SIZE_BOUND) {
        for (int64_t i = 0; i < n; i++)
            y[i] = x[i];
        y[n] = 1.0f; /* one past the bound */
        k = n + 1;
    } else {
        for (int64_t i = 0; i < n; i++)
            keep += x[i] > threshold;
        for (int64_t i = 0; i < n; i++) {
            if (!(x[i] > threshold))
                continue;
            if (defect != POS_CUDA_UNWRITTEN || k + 1 < keep)
                y[k] = defect == POS_CUDA_DISAGREE ? x[i] * 1.001f : x[i];
            k++;
        }
    }
    *k_out = k;
    for (int32_t i = 0; i < rank; i++)
        dims_out[i] = dims.d[i];
}

} // namespace

extern "C" int pos_cuda(const pos_launch *a, void *stream)
{
    dims_arg d;
    cudaStream_t s = a->defect == POS_CUDA_STREAM ? 0 : (cudaStream_t)stream;
    for (int32_t i = 0; i < PRT_MAX_DIMS; i++)
        d.d[i] = i < a->rank ? a->dims[i] : 0;
    positives_kernel<<<1, 1, 0, s>>>(a->x, a->n, a->threshold, a->y, a->k, a->dims_out,
                                     a->rank, d, a->defect);
    return (int)cudaGetLastError();
}

extern "C" const char *pos_cuda_error(int err)
{
    static char buf[256];
    snprintf(buf, sizeof buf, "Positives: the kernel failed: %s: %s",
             cudaGetErrorName((cudaError_t)err), cudaGetErrorString((cudaError_t)err));
    return buf;
}
