/*
 * Kernel layers (internal): GPU code an engine holds and launches itself
 * (plugin.h, "Kernel layers"). A plugin's get_kernel describes the code and
 * its launches; the builder turns that into an eng_kernel (kernel.c), the
 * engine file stores it (format.c, section KERN), the loader checks every
 * byte of it (kernel_validate), and the layer's plugin becomes a runner
 * (runner.c) that loads the code once per context and launches it.
 *
 * Expressions. A kernel's sizes live in a program of its own, apart from the
 * engine's: its leaves are EXPR_INPUT_DIM nodes whose "input" is the
 * layer's I/O position (inputs 0..nb_in-1, then outputs) and whose dim is a
 * dim of that tensor, so the runner evaluates them from the descriptors it
 * is given, with no engine around it.
 */
#ifndef PLUGRT_KERNEL_H
#define PLUGRT_KERNEL_H

#include <stdint.h>

#include "base/base.h"
#include "expr/expr.h"

#define KERNEL_MAX_LAUNCHES 16
#define KERNEL_MAX_ARGS 256
#define KERNEL_MAX_CODE 16
#define KERNEL_MAX_CODE_BYTES ((int64_t)1 << 30)
#define KERNEL_MAX_ENTRY 1024

typedef struct eng_kernel_code {
    int32_t kind; /* PRT_KERNEL_PTX or PRT_KERNEL_CUBIN (source is compiled away) */
    int32_t arch; /* major * 10 + minor */
    uint8_t *data;
    int64_t size;
} eng_kernel_code;

typedef struct eng_kernel_arg {
    int32_t kind;  /* prt_kernel_arg_kind */
    int32_t index; /* tensor position for INPUT/OUTPUT/DIMS, else 0 */
    int32_t node;  /* node of the kernel's program, or -1 */
    double fvalue; /* FLOAT32/FLOAT64 without a node */
} eng_kernel_arg;

typedef struct eng_kernel_launch {
    char *entry;
    int32_t grid[3], block[3]; /* nodes */
    int32_t shared_bytes;      /* node, or -1 for 0 */
    int32_t nb_args;
    eng_kernel_arg *args;
} eng_kernel_launch;

typedef struct eng_kernel {
    int32_t layer; /* the layer it runs as */
    uint64_t hash; /* kernel_hash of everything below */
    int32_t nb_code;
    eng_kernel_code *code;
    expr_program exprs;
    int32_t nb_launches;
    eng_kernel_launch *launches;
} eng_kernel;

void kernel_free(eng_kernel *k); /* what it owns; accepts a zeroed one */
prt_status kernel_copy(const eng_kernel *src, eng_kernel *dst);

/* Content hash of the code, the program and the launches (not the layer):
 * what inspect shows and the loader checks. */
uint64_t kernel_hash(const eng_kernel *k);

/* The kernel's view of its layer: the rank of each I/O tensor (inputs,
 * then outputs). */
typedef struct kernel_io {
    int32_t nb_in, nb_out;
    const int32_t *ranks; /* [nb_in + nb_out] */
} kernel_io;

/* Checks a kernel from untrusted bytes against its layer: code kinds and
 * sizes, each cubin's ELF and capability, each entry present in every
 * code, the program (leaves naming a real tensor and dim), every node and
 * tensor index, and each launch's arguments against the entry's real
 * parameters (kernel_check_params); the hash. PRT_ERR_MALFORMED naming
 * the layer and what is wrong. */
prt_status kernel_validate(const eng_kernel *k, const char *layer, const kernel_io *io);

/* ---- the code (code.c) ---------------------------------------------------- */

/* One parameter of an entry as its code declares it. */
typedef struct kernel_param {
    int32_t size;  /* bytes */
    int32_t align; /* bytes; for a cubin, the offset's alignment it implies */
    /* PTX type class: 'u' unsigned/signed/untyped integer, 'f' float, 'b'
     * untyped bits, 'a' byte array (a struct); 0 for a cubin (sizes only). */
    char cls;
    char type[16]; /* ".u64", ".f32", ".b8[12]", "8 bytes" (a cubin) */
} kernel_param;

/* The parameters of `entry` in one code. PRT_ERR_NOT_FOUND when the code
 * has no such entry; PRT_ERR_MALFORMED when it cannot be read. At most
 * `cap` are written; *count is the true number. */
prt_status kernel_code_params(const eng_kernel_code *c, const char *entry,
                              kernel_param *out, int32_t cap, int32_t *count);

/* The capability a code is for: a cubin's from its ELF header, PTX's from
 * its .target line. PRT_ERR_MALFORMED when it cannot be read. */
prt_status kernel_code_arch(int32_t kind, const uint8_t *data, int64_t size,
                            int32_t *arch);

/* Checks one launch's arguments against the parameters of its entry in
 * every code of k: count, size and alignment, and the PTX type class.
 * PRT_ERR_INVALID_ARGUMENT naming the kernel, the position and both types. */
prt_status kernel_check_params(const eng_kernel *k, const char *layer);

/* ---- from a plugin's description (kernel.c) -------------------------------- */

/* Copies what get_kernel gave into *out: the code (CUDA source compiled
 * with NVRTC for `arch` first: nvrtc.c), the launches, and the nodes of
 * `pool` they use. `pool` is the one whose builder get_kernel was handed,
 * with EXPR_INPUT_DIM leaves as above. Then checks the parameters.
 * PRT_ERR_PLUGIN naming the layer for a description that is not whole,
 * expressions from elsewhere, or a code that does not parse. */
prt_status kernel_from_desc(const prt_kernel_desc *d, expr_pool *pool, int32_t arch,
                            const char *layer, const kernel_io *io, eng_kernel *out);

/* ---- NVRTC (nvrtc.c) ------------------------------------------------------ */

/* Compiles CUDA C++ for compute capability `arch` into a cubin and PTX
 * (both owned by the caller, base_free). NVRTC is opened at run time;
 * PRT_ERR_UNSUPPORTED when this machine has none, PRT_ERR_PLUGIN with the
 * compiler's log on a compile error. */
prt_status kernel_nvrtc_compile(const char *source, int64_t size, const char *options,
                                int32_t arch, const char *layer, eng_kernel_code *cubin,
                                eng_kernel_code *ptx);

/* A store of compiled source across builds (the builder's timing cache).
 * get copies what is stored under key into cubin/ptx (caller frees
 * data with base_free; ptx->size 0 when none) and sets *found, 0 when
 * nothing is; put stores a copy. Errors are out of memory only. */
typedef struct kernel_code_cache {
    void *ctx;
    prt_status (*get)(void *ctx, const char *key, eng_kernel_code *cubin,
                      eng_kernel_code *ptx, int *found);
    prt_status (*put)(void *ctx, const char *key, const eng_kernel_code *cubin,
                      const eng_kernel_code *ptx);
} kernel_code_cache;

/* kernel_nvrtc_compile through `cache` (NULL: none): keyed by NVRTC's
 * version, arch, the source's hashes and size and the options' hash. A
 * stored result is used only when its cubin is for `arch` (and its PTX
 * parses), logged as "from the timing cache"; one that is not is logged
 * as a warning and compiled again. A fresh result is put in the cache. */
prt_status kernel_nvrtc_compile_cached(const char *source, int64_t size,
                                       const char *options, int32_t arch,
                                       const char *layer, const kernel_code_cache *cache,
                                       eng_kernel_code *cubin, eng_kernel_code *ptx);

/* How many compilations NVRTC ran in this process (tests: a cached build
 * runs none). */
int64_t kernel_nvrtc_compiles(void);

/* kernel_from_desc, compiling CUDA source through `cache` (NULL: none). */
prt_status kernel_from_desc_cached(const prt_kernel_desc *d, expr_pool *pool,
                                   int32_t arch, const char *layer, const kernel_io *io,
                                   const kernel_code_cache *cache, eng_kernel *out);

/* ---- running (runner.c) --------------------------------------------------- */

/* A runtime-phase plugin that launches k (borrowed: the engine's, which
 * outlives it) in place of the layer's own. Its clones for contexts load
 * the code when attached and unload it when destroyed. */
prt_status kernel_runner_create(const eng_kernel *k, const char *layer, int32_t nb_in,
                                int32_t nb_out, prt_plugin **out);

/* What a runner plugin reports: its kernel, or NULL for any other plugin. */
const eng_kernel *kernel_runner_kernel(const prt_plugin *p);

#endif /* PLUGRT_KERNEL_H */
