// The table through which the C side reaches the CUDA code (cuda_launch.h),
// and the CUDA runtime queries it needs.
#include <cuda_runtime.h>

#include "cuda_launch.h"

namespace
{

const char *error_name(int err)
{
    return cudaGetErrorName((cudaError_t)err);
}

const char *error_string(int err)
{
    return cudaGetErrorString((cudaError_t)err);
}

int device_count()
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        // No driver or no GPU: not an error of anyone's launch; clear it so
        // that a later cudaGetLastError() does not report it.
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

} // namespace

// Hidden inside the plugin library; the one export of a separate module.
#ifdef PRT_PLUGINS_CUDA_MODULE
#define PLG_CUDA_API_VISIBILITY __attribute__((visibility("default")))
#else
#define PLG_CUDA_API_VISIBILITY
#endif

extern "C" PLG_CUDA_API_VISIBILITY const plg_cuda_api plg_cuda_api_v1 = {
    sizeof(plg_cuda_api), error_name,  error_string, device_count, plg_nz_cuda,
    plg_hm_cuda,          plg_cp_cuda, plg_add_cuda, plg_qfc_cuda,
};
