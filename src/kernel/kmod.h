/*
 * Loading and launching a kernel layer's code on the current CUDA device
 * (module_cuda.c), through the driver API, whose entry points come from
 * the CUDA runtime at run time (cudaGetDriverEntryPointByVersion): nothing
 * links libcuda. Without CUDA every call is PRT_ERR_UNSUPPORTED.
 */
#ifndef PLUGRT_KMOD_H
#define PLUGRT_KMOD_H

#include "kernel/kernel.h"

/* The current device's compute capability (major * 10 + minor). */
prt_status kmod_device_arch(int32_t *arch);

/* Loads the code of k that suits the current device: the cubin for its
 * capability, else a cubin of the same major and a lower minor, else PTX
 * for a capability at most the device's (the driver compiles it). *which
 * is the code's index. PRT_ERR_UNSUPPORTED naming the engine's
 * capabilities and the device's when none suits. */
prt_status kmod_load(const eng_kernel *k, const char *layer, void **module,
                     int32_t *which);
/* The entry's function in a loaded module. */
prt_status kmod_function(void *module, const char *entry, const char *layer, void **fn);
void kmod_unload(void *module);

/* Queues one launch on `stream`; params[i] points at argument i's value. */
prt_status kmod_launch(void *fn, const uint32_t grid[3], const uint32_t block[3],
                       uint32_t shared_bytes, void *stream, void **params,
                       const char *layer, const char *entry);

/* Modules loaded now in this process (loads minus unloads): what tests
 * watch to see that shape changes load nothing. */
int64_t kmod_live_modules(void);

#endif /* PLUGRT_KMOD_H */
