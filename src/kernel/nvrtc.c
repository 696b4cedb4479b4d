/*
 * CUDA C++ from a plugin's kernel description, compiled at build time with
 * NVRTC (kernel.h). libnvrtc is opened at run time by its soname, so
 * libplugrt loads where it is absent; a build that needs it then fails
 * saying so. Its functions are declared here by their documented
 * signatures (nvrtc.h), so this file needs no CUDA header and is part of
 * every build.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "kernel/kernel.h"

typedef struct nvrtc_prog *nvrtc_program;
typedef int (*pfn_create)(nvrtc_program *, const char *, const char *, int,
                          const char *const *, const char *const *);
typedef int (*pfn_destroy)(nvrtc_program *);
typedef int (*pfn_compile)(nvrtc_program, int, const char *const *);
typedef int (*pfn_size)(nvrtc_program, size_t *);
typedef int (*pfn_get)(nvrtc_program, char *);
typedef const char *(*pfn_error)(int);

static struct {
    pthread_once_t once;
    void *lib;
    pfn_create create;
    pfn_destroy destroy;
    pfn_compile compile;
    pfn_size cubin_size, ptx_size, log_size;
    pfn_get cubin, ptx, log;
    pfn_error error;
} rtc = {PTHREAD_ONCE_INIT, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

static void rtc_open(void)
{
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12",
                                        "libnvrtc.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !rtc.lib; i++)
        rtc.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!rtc.lib)
        return;
    rtc.create = (pfn_create)dlsym(rtc.lib, "nvrtcCreateProgram");
    rtc.destroy = (pfn_destroy)dlsym(rtc.lib, "nvrtcDestroyProgram");
    rtc.compile = (pfn_compile)dlsym(rtc.lib, "nvrtcCompileProgram");
    rtc.cubin_size = (pfn_size)dlsym(rtc.lib, "nvrtcGetCUBINSize");
    rtc.cubin = (pfn_get)dlsym(rtc.lib, "nvrtcGetCUBIN");
    rtc.ptx_size = (pfn_size)dlsym(rtc.lib, "nvrtcGetPTXSize");
    rtc.ptx = (pfn_get)dlsym(rtc.lib, "nvrtcGetPTX");
    rtc.log_size = (pfn_size)dlsym(rtc.lib, "nvrtcGetProgramLogSize");
    rtc.log = (pfn_get)dlsym(rtc.lib, "nvrtcGetProgramLog");
    rtc.error = (pfn_error)dlsym(rtc.lib, "nvrtcGetErrorString");
    if (!rtc.create || !rtc.destroy || !rtc.compile || !rtc.cubin_size || !rtc.cubin ||
        !rtc.ptx_size || !rtc.ptx || !rtc.log_size || !rtc.log || !rtc.error)
        rtc.create = NULL;
}

/* Splits the options at spaces into argv (at most 64). */
static int split_options(char *buf, const char **argv, int max)
{
    int n = 0;
    for (char *p = buf; *p && n < max;) {
        while (*p == ' ')
            *p++ = '\0';
        if (!*p)
            break;
        argv[n++] = p;
        while (*p && *p != ' ')
            p++;
    }
    return n;
}

static prt_status get_output(nvrtc_program prog, pfn_size size_fn, pfn_get get_fn,
                             int32_t kind, int32_t arch, int text, eng_kernel_code *out)
{
    size_t n = 0;
    if (size_fn(prog, &n) != 0 || n == 0)
        return base_error(PRT_ERR_INTERNAL, "NVRTC gave no %s", text ? "PTX" : "cubin");
    out->data = base_malloc(n + 1);
    if (!out->data)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory");
    if (get_fn(prog, (char *)out->data) != 0)
        return base_error(PRT_ERR_INTERNAL, "NVRTC gave no %s", text ? "PTX" : "cubin");
    out->data[n] = 0;
    /* PTX's size leaves out its terminating NUL. */
    out->size = text && n > 0 && out->data[n - 1] == 0 ? (int64_t)n - 1 : (int64_t)n;
    out->kind = kind;
    out->arch = arch;
    return PRT_OK;
}

prt_status kernel_nvrtc_compile(const char *source, int64_t size, const char *options,
                                int32_t arch, const char *layer, eng_kernel_code *cubin,
                                eng_kernel_code *ptx)
{
    nvrtc_program prog = NULL;
    char *src = NULL, *opts = NULL, archopt[48];
    const char *argv[66];
    int argc = 0, r;
    prt_status st = PRT_OK;
    pthread_once(&rtc.once, rtc_open);
    if (!rtc.create)
        return base_error(
            PRT_ERR_UNSUPPORTED,
            "layer '%s': its kernel is CUDA source, and this machine has no "
            "NVRTC (libnvrtc.so.13 or .12) to compile it",
            layer);
    if (arch < 10)
        return base_error(
            PRT_ERR_UNSUPPORTED,
            "layer '%s': its kernel is CUDA source, compiled for the target "
            "GPU, and the build has none",
            layer);
    src = base_malloc((size_t)size + 1);
    opts = base_strdup(options ? options : "");
    if (!src || !opts) {
        st = base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    memcpy(src, source, (size_t)size);
    src[size] = '\0';
    snprintf(archopt, sizeof archopt, "--gpu-architecture=sm_%d", (int)arch);
    argv[argc++] = archopt;
    argc += split_options(opts, argv + argc, 64);
    r = rtc.create(&prog, src, layer, 0, NULL, NULL);
    if (r != 0) {
        st = base_error(PRT_ERR_PLUGIN, "layer '%s': NVRTC: %s", layer, rtc.error(r));
        goto done;
    }
    r = rtc.compile(prog, argc, argv);
    if (r != 0) {
        size_t n = 0;
        char *log = NULL;
        if (rtc.log_size(prog, &n) == 0 && n > 0 && (log = base_malloc(n + 1)) != NULL &&
            rtc.log(prog, log) == 0)
            log[n] = '\0';
        st = base_error(PRT_ERR_PLUGIN,
                        "layer '%s': NVRTC cannot compile its kernel (%s):\n%s", layer,
                        rtc.error(r), log ? log : "(no log)");
        base_free(log);
        goto done;
    }
    st = get_output(prog, rtc.cubin_size, rtc.cubin, PRT_KERNEL_CUBIN, arch, 0, cubin);
    /* PTX beside the cubin when NVRTC keeps it, for devices of a later
     * capability; a cubin alone is enough here. */
    if (!st && get_output(prog, rtc.ptx_size, rtc.ptx, PRT_KERNEL_PTX, arch, 1, ptx)) {
        base_clear_error();
        base_free(ptx->data);
        memset(ptx, 0, sizeof *ptx);
    }
done:
    if (prog)
        rtc.destroy(&prog);
    base_free(src);
    base_free(opts);
    return st;
}
