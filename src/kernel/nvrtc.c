/*
 * CUDA C++ from a plugin's kernel description, compiled at build time with
 * NVRTC (kernel.h). libnvrtc is opened at run time by its soname, so
 * libplugrt loads where it is absent; a build that needs it then fails
 * saying so. Its functions are declared here by their documented
 * signatures (nvrtc.h), so this file needs no CUDA header and is part of
 * every build.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
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
typedef int (*pfn_version)(int *, int *);

static struct {
    pthread_once_t once;
    void *lib;
    pfn_create create;
    pfn_destroy destroy;
    pfn_compile compile;
    pfn_size cubin_size, ptx_size, log_size;
    pfn_get cubin, ptx, log;
    pfn_error error;
    int major, minor; /* nvrtcVersion: part of a cached result's key */
} rtc = {PTHREAD_ONCE_INIT, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

/* Compilations NVRTC ran in this process (kernel_nvrtc_compiles). */
static atomic_llong rtc_runs;

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
    {
        pfn_version version = (pfn_version)dlsym(rtc.lib, "nvrtcVersion");
        if (!version || version(&rtc.major, &rtc.minor) != 0)
            rtc.major = rtc.minor = 0;
    }
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
    atomic_fetch_add(&rtc_runs, 1);
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

int64_t kernel_nvrtc_compiles(void)
{
    return (int64_t)atomic_load(&rtc_runs);
}

/* Whether what a cache gave is a cubin for `arch` (and PTX beside it, if
 * any, that parses): code from a file is checked before it is used; the
 * launches are then checked against it like fresh code (kernel_from_desc). */
static int cached_code_fits(const eng_kernel_code *cubin, const eng_kernel_code *ptx,
                            int32_t arch)
{
    int32_t got = 0;
    if (cubin->kind != PRT_KERNEL_CUBIN || !cubin->data || cubin->size <= 0 ||
        kernel_code_arch(PRT_KERNEL_CUBIN, cubin->data, cubin->size, &got) || got != arch)
        return 0;
    if (ptx->size > 0 && (ptx->kind != PRT_KERNEL_PTX || !ptx->data ||
                          kernel_code_arch(PRT_KERNEL_PTX, ptx->data, ptx->size, &got)))
        return 0;
    return 1;
}

static void code_clear(eng_kernel_code *c)
{
    base_free(c->data);
    memset(c, 0, sizeof *c);
}

prt_status kernel_nvrtc_compile_cached(const char *source, int64_t size,
                                       const char *options, int32_t arch,
                                       const char *layer, const kernel_code_cache *cache,
                                       eng_kernel_code *cubin, eng_kernel_code *ptx)
{
    char key[160];
    int found = 0;
    prt_status st;
    memset(cubin, 0, sizeof *cubin);
    memset(ptx, 0, sizeof *ptx);
    pthread_once(&rtc.once, rtc_open);
    if (!cache || !rtc.create)
        return kernel_nvrtc_compile(source, size, options, arch, layer, cubin, ptx);
    /* What the result depends on: the compiler, the target, the source and
     * the options (two hashes of the source, so a collision needs both). */
    snprintf(key, sizeof key,
             "nvrtc %d.%d sm_%d src %" PRId64 " %016" PRIx64 " %016" PRIx64
             " opts %016" PRIx64,
             rtc.major, rtc.minor, (int)arch, size, base_fnv1a64(source, (size_t)size, 0),
             base_fnv1a64(source, (size_t)size, 0x9e3779b97f4a7c15ull),
             base_fnv1a64(options ? options : "", options ? strlen(options) : 0, 0));
    st = cache->get(cache->ctx, key, cubin, ptx, &found);
    if (st)
        return st;
    if (found && cached_code_fits(cubin, ptx, arch)) {
        base_log(PRT_SEV_VERBOSE,
                 "layer '%s': its kernel's cubin%s for sm_%d from the timing cache "
                 "(NVRTC not run)",
                 layer, ptx->size > 0 ? " and PTX" : "", (int)arch);
        return PRT_OK;
    }
    if (found)
        base_log(PRT_SEV_WARNING,
                 "layer '%s': the timing cache's code for its kernel source is not "
                 "a cubin for sm_%d (damaged?); compiling it again",
                 layer, (int)arch);
    code_clear(cubin);
    code_clear(ptx);
    st = kernel_nvrtc_compile(source, size, options, arch, layer, cubin, ptx);
    if (!st)
        st = cache->put(cache->ctx, key, cubin, ptx);
    if (st) {
        code_clear(cubin);
        code_clear(ptx);
    }
    return st;
}
