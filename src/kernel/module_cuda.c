/*
 * Kernel layers on CUDA: the driver API's module loading and launch
 * (kmod.h), reached through the runtime's driver entry points, so that
 * libplugrt links no libcuda and loads where there is no GPU driver.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "kernel/kmod.h"

typedef CUresult (*pfn_load)(CUmodule *, const void *);
typedef CUresult (*pfn_unload)(CUmodule);
typedef CUresult (*pfn_get_function)(CUfunction *, CUmodule, const char *);
typedef CUresult (*pfn_launch)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                               unsigned, unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*pfn_error_string)(CUresult, const char **);
typedef CUresult (*pfn_func_set_attribute)(CUfunction, CUfunction_attribute, int);

static struct {
    pthread_once_t once;
    prt_status status;
    char error[256];
    pfn_load load;
    pfn_unload unload;
    pfn_get_function get_function;
    pfn_launch launch;
    pfn_error_string error_string;
    pfn_func_set_attribute set_attribute;
} drv = {PTHREAD_ONCE_INIT, PRT_OK, "", 0, 0, 0, 0, 0, 0};

static _Atomic int64_t live_modules;

static void *entry_point(const char *name)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) !=
            cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
        return NULL;
    return fn;
}

static void drv_open(void)
{
    /* The runtime's primary context: modules load into it. */
    cudaError_t e = cudaFree(NULL);
    if (e != cudaSuccess) {
        snprintf(drv.error, sizeof drv.error, "CUDA is not available: %s",
                 cudaGetErrorString(e));
        drv.status = PRT_ERR_UNSUPPORTED;
        return;
    }
    drv.load = (pfn_load)entry_point("cuModuleLoadData");
    drv.unload = (pfn_unload)entry_point("cuModuleUnload");
    drv.get_function = (pfn_get_function)entry_point("cuModuleGetFunction");
    drv.launch = (pfn_launch)entry_point("cuLaunchKernel");
    drv.error_string = (pfn_error_string)entry_point("cuGetErrorString");
    drv.set_attribute = (pfn_func_set_attribute)entry_point("cuFuncSetAttribute");
    if (!drv.load || !drv.unload || !drv.get_function || !drv.launch) {
        snprintf(
            drv.error, sizeof drv.error,
            "the CUDA driver does not give cuModuleLoadData, cuModuleGetFunction and "
            "cuLaunchKernel");
        drv.status = PRT_ERR_UNSUPPORTED;
    }
}

static prt_status drv_get(void)
{
    pthread_once(&drv.once, drv_open);
    return drv.status ? base_error(drv.status, "kernel layers: %s", drv.error) : PRT_OK;
}

static const char *cu_msg(CUresult r)
{
    const char *s = NULL;
    if (drv.error_string && drv.error_string(r, &s) == CUDA_SUCCESS && s)
        return s;
    return "unknown CUDA driver error";
}

prt_status kmod_device_arch(int32_t *arch)
{
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) !=
            cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) !=
            cudaSuccess)
        return base_error(PRT_ERR_UNSUPPORTED, "kernel layers: no CUDA device");
    *arch = major * 10 + minor;
    return PRT_OK;
}

/* Which code to load on a device of capability `dev`: -1 if none. */
static int32_t pick_code(const eng_kernel *k, int32_t dev)
{
    int32_t best = -1;
    for (int32_t i = 0; i < k->nb_code; i++)
        if (k->code[i].kind == PRT_KERNEL_CUBIN && k->code[i].arch == dev)
            return i;
    /* A cubin runs on its major's later minors. */
    for (int32_t i = 0; i < k->nb_code; i++)
        if (k->code[i].kind == PRT_KERNEL_CUBIN && k->code[i].arch / 10 == dev / 10 &&
            k->code[i].arch < dev && (best < 0 || k->code[i].arch > k->code[best].arch))
            best = i;
    if (best >= 0)
        return best;
    for (int32_t i = 0; i < k->nb_code; i++)
        if (k->code[i].kind == PRT_KERNEL_PTX && k->code[i].arch <= dev &&
            (best < 0 || k->code[i].arch > k->code[best].arch))
            best = i;
    return best;
}

prt_status kmod_load(const eng_kernel *k, const char *layer, void **module,
                     int32_t *which)
{
    int32_t dev = 0, i;
    CUmodule m = NULL;
    CUresult r;
    prt_status st = drv_get();
    if (!st)
        st = kmod_device_arch(&dev);
    if (st)
        return st;
    i = pick_code(k, dev);
    if (i < 0) {
        char list[256];
        size_t pos = 0;
        list[0] = '\0';
        for (int32_t c = 0; c < k->nb_code && pos < sizeof list; c++)
            pos += (size_t)snprintf(list + pos, sizeof list - pos, "%s%s sm_%d",
                                    c ? ", " : "",
                                    k->code[c].kind == PRT_KERNEL_PTX ? "PTX" : "cubin",
                                    (int)k->code[c].arch);
        return base_error(PRT_ERR_UNSUPPORTED,
                          "layer '%s': the engine's kernel has code for %s; none runs on "
                          "this device (sm_%d)",
                          layer, list, (int)dev);
    }
    /* cuModuleLoadData reads PTX up to its NUL: the engine keeps one past
     * the end of every code (kernel.c, format.c). */
    r = drv.load(&m, k->code[i].data);
    if (r != CUDA_SUCCESS)
        return base_error(PRT_ERR_UNSUPPORTED,
                          "layer '%s': loading its kernel (%s sm_%d): %s", layer,
                          k->code[i].kind == PRT_KERNEL_PTX ? "PTX" : "cubin",
                          (int)k->code[i].arch, cu_msg(r));
    atomic_fetch_add(&live_modules, 1);
    *module = m;
    *which = i;
    return PRT_OK;
}

prt_status kmod_function(void *module, const char *entry, const char *layer, void **fn)
{
    CUfunction f = NULL;
    CUresult r = drv.get_function(&f, (CUmodule)module, entry);
    if (r != CUDA_SUCCESS)
        return base_error(PRT_ERR_MALFORMED,
                          "layer '%s': its kernel has no entry '%s': %s", layer, entry,
                          cu_msg(r));
    *fn = f;
    return PRT_OK;
}

void kmod_unload(void *module)
{
    if (!module)
        return;
    (void)drv.unload((CUmodule)module);
    atomic_fetch_sub(&live_modules, 1);
}

prt_status kmod_launch(void *fn, const uint32_t grid[3], const uint32_t block[3],
                       uint32_t shared_bytes, void *stream, void **params,
                       const char *layer, const char *entry)
{
    CUresult r;
    /* Above 48 KiB of dynamic shared memory a function must opt in. */
    if (shared_bytes > 48 * 1024 && drv.set_attribute)
        (void)drv.set_attribute((CUfunction)fn,
                                CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                (int)shared_bytes);
    r = drv.launch((CUfunction)fn, grid[0], grid[1], grid[2], block[0], block[1],
                   block[2], shared_bytes, (CUstream)stream, params, NULL);
    if (r != CUDA_SUCCESS)
        return base_error(
            PRT_ERR_PLUGIN,
            "layer '%s': launching kernel '%s' (grid %u x %u x %u, block %u x "
            "%u x %u, %u bytes of shared memory): %s",
            layer, entry, grid[0], grid[1], grid[2], block[0], block[1], block[2],
            shared_bytes, cu_msg(r));
    return PRT_OK;
}

int64_t kmod_live_modules(void)
{
    return atomic_load(&live_modules);
}
