/*
 * cuBLASLt for the 8-bit products (lt.h), opened on first use (dlopen) as
 * cuBLAS is (blas_cuda.c), so libplugrt loads where cuBLASLt is absent and
 * the integer ops keep plugrt's own kernels there.
 *
 * Each user (a QLinearMatMul or MatMulInteger object of one context) owns
 * a handle, a workspace and an int32 scratch, made by the CUDA table's
 * attach: the workspace is handed to every cublasLtMatmul, so cuBLASLt
 * allocates nothing itself, which graph capture requires. The algorithm
 * of the last shape is kept per handle (the heuristic query is host work,
 * but a few microseconds per product in eager runs).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* cublasLt.h declares cublasLtLoggerForceDisable() without a prototype. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <cublasLt.h>
#pragma GCC diagnostic pop
#include <cuda_runtime_api.h>

#include "device/device.h"
#include "ops/cuda/lt.h"

/* cuBLASLt's split-K and Hopper kernels ask for a few MiB at most;
 * PyTorch gives it 4 MiB (32 on Hopper), and 8 covers the shapes here. */
#define OPK_LT_WORKSPACE ((size_t)8 << 20)

typedef cublasStatus_t (*create_fn)(cublasLtHandle_t *);
typedef cublasStatus_t (*destroy_fn)(cublasLtHandle_t);
typedef cublasStatus_t (*desc_create_fn)(cublasLtMatmulDesc_t *, cublasComputeType_t,
                                         cudaDataType_t);
typedef cublasStatus_t (*desc_destroy_fn)(cublasLtMatmulDesc_t);
typedef cublasStatus_t (*desc_set_fn)(cublasLtMatmulDesc_t,
                                      cublasLtMatmulDescAttributes_t, const void *,
                                      size_t);
typedef cublasStatus_t (*layout_create_fn)(cublasLtMatrixLayout_t *, cudaDataType,
                                           uint64_t, uint64_t, int64_t);
typedef cublasStatus_t (*layout_destroy_fn)(cublasLtMatrixLayout_t);
typedef cublasStatus_t (*layout_set_fn)(cublasLtMatrixLayout_t,
                                        cublasLtMatrixLayoutAttribute_t, const void *,
                                        size_t);
typedef cublasStatus_t (*pref_create_fn)(cublasLtMatmulPreference_t *);
typedef cublasStatus_t (*pref_destroy_fn)(cublasLtMatmulPreference_t);
typedef cublasStatus_t (*pref_set_fn)(cublasLtMatmulPreference_t,
                                      cublasLtMatmulPreferenceAttributes_t, const void *,
                                      size_t);
typedef cublasStatus_t (*heuristic_fn)(cublasLtHandle_t, cublasLtMatmulDesc_t,
                                       cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                       cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                       cublasLtMatmulPreference_t, int,
                                       cublasLtMatmulHeuristicResult_t *, int *);
typedef cublasStatus_t (*algo_config_get_fn)(const cublasLtMatmulAlgo_t *,
                                             cublasLtMatmulAlgoConfigAttributes_t, void *,
                                             size_t, size_t *);
typedef cublasStatus_t (*matmul_fn)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *,
                                    const void *, cublasLtMatrixLayout_t, const void *,
                                    cublasLtMatrixLayout_t, const void *, const void *,
                                    cublasLtMatrixLayout_t, void *,
                                    cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t *,
                                    void *, size_t, cudaStream_t);

static struct {
    void *lib;
    char error[256];
    create_fn create;
    destroy_fn destroy;
    desc_create_fn desc_create;
    desc_destroy_fn desc_destroy;
    desc_set_fn desc_set;
    layout_create_fn layout_create;
    layout_destroy_fn layout_destroy;
    layout_set_fn layout_set;
    pref_create_fn pref_create;
    pref_destroy_fn pref_destroy;
    pref_set_fn pref_set;
    heuristic_fn heuristic;
    matmul_fn matmul;
    /* Diagnostics, optional (NULL where this cuBLASLt lacks them). */
    size_t (*version)(void);
    cublasStatus_t (*log_level)(int);
    algo_config_get_fn algo_config_get;
} lt;
static pthread_once_t lt_once = PTHREAD_ONCE_INIT;

static void lt_load(void)
{
    static const char *const names[] = {"libcublasLt.so.13", "libcublasLt.so.12",
                                        "libcublasLt.so",
                                        "/usr/local/cuda/lib64/libcublasLt.so.13",
                                        "/usr/local/cuda/lib64/libcublasLt.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lt.lib; i++)
        lt.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lt.lib) {
        snprintf(lt.error, sizeof lt.error,
                 "cuBLASLt is not installed or not on the library path (%s)", dlerror());
        return;
    }
    /* dlsym returns void *; POSIX lets it convert to a function pointer. */
    *(void **)&lt.create = dlsym(lt.lib, "cublasLtCreate");
    *(void **)&lt.destroy = dlsym(lt.lib, "cublasLtDestroy");
    *(void **)&lt.desc_create = dlsym(lt.lib, "cublasLtMatmulDescCreate");
    *(void **)&lt.desc_destroy = dlsym(lt.lib, "cublasLtMatmulDescDestroy");
    *(void **)&lt.desc_set = dlsym(lt.lib, "cublasLtMatmulDescSetAttribute");
    *(void **)&lt.layout_create = dlsym(lt.lib, "cublasLtMatrixLayoutCreate");
    *(void **)&lt.layout_destroy = dlsym(lt.lib, "cublasLtMatrixLayoutDestroy");
    *(void **)&lt.layout_set = dlsym(lt.lib, "cublasLtMatrixLayoutSetAttribute");
    *(void **)&lt.pref_create = dlsym(lt.lib, "cublasLtMatmulPreferenceCreate");
    *(void **)&lt.pref_destroy = dlsym(lt.lib, "cublasLtMatmulPreferenceDestroy");
    *(void **)&lt.pref_set = dlsym(lt.lib, "cublasLtMatmulPreferenceSetAttribute");
    *(void **)&lt.heuristic = dlsym(lt.lib, "cublasLtMatmulAlgoGetHeuristic");
    *(void **)&lt.matmul = dlsym(lt.lib, "cublasLtMatmul");
    *(void **)&lt.version = dlsym(lt.lib, "cublasLtGetVersion");
    *(void **)&lt.log_level = dlsym(lt.lib, "cublasLtLoggerSetLevel");
    *(void **)&lt.algo_config_get = dlsym(lt.lib, "cublasLtMatmulAlgoConfigGetAttribute");
    if (!lt.create || !lt.destroy || !lt.desc_create || !lt.desc_destroy ||
        !lt.desc_set || !lt.layout_create || !lt.layout_destroy || !lt.layout_set ||
        !lt.pref_create || !lt.pref_destroy || !lt.pref_set || !lt.heuristic ||
        !lt.matmul) {
        snprintf(lt.error, sizeof lt.error,
                 "the cuBLASLt found lacks the functions plugrt needs");
        dlclose(lt.lib);
        lt.lib = NULL;
    }
}

const char *opk_lt_unavailable(void)
{
    pthread_once(&lt_once, lt_load);
    return lt.lib ? NULL : lt.error;
}

size_t opk_lt_version(void)
{
    return opk_lt_unavailable() || !lt.version ? 0 : lt.version();
}

int opk_lt_log_level(int level)
{
    return !opk_lt_unavailable() && lt.log_level &&
           lt.log_level(level) == CUBLAS_STATUS_SUCCESS;
}

/* Kinds of the float products: LT_KIND_F32 + LT_F32_* flags (LT_F32_F16
 * and LT_F32_BF16: 16-bit operands and result). */
#define LT_KIND_F32 32
enum {
    LT_F32_RELU = 1,
    LT_F32_TF32 = 2,
    LT_F32_BIAS = 4,
    LT_F32_TA = 8,
    LT_F32_TB = 16,
    LT_F32_F16 = 32,
    LT_F32_BF16 = 64
};

/* Heuristic answers asked for: the first that runs in OPK_LT_WORKSPACE is
 * taken (the best one may want more workspace than the handle has). */
#define LT_ALGOS 8

/* The algorithm cuBLASLt chose for one product, kept for the next. */
typedef struct lt_plan {
    int valid;
    /* 0: int8; 1 + c_dtype: FP8; LT_KIND_F32 + flags: float (lt_gemm_float) */
    int32_t kind;
    int64_t M, N, K;
    uint32_t align;  /* the operands' alignment (lt_align), A's, Bt's, C's */
    int64_t more[3]; /* float32: the leading dims and the batch */
    cublasLtMatmulAlgo_t algo;
    /* The heuristic's usable answers in its order (algo is one of them):
     * cublasLtMatmul may still refuse one (NOT_SUPPORTED, before any
     * launch), and lt_run then tries the next. */
    cublasLtMatmulAlgo_t cand[LT_ALGOS];
    int nb_cand, at;
} lt_plan;

struct opk_lt {
    cublasLtHandle_t handle;
    void *workspace;
    size_t ws_size;
    int owns_ws; /* 0: the workspace is its opener's (opk_lt_open_shared) */
    int32_t *scratch;
    const dev_ops *dev; /* which allocated the buffers */
    lt_plan plan;
    int found; /* the last heuristic query's answers; -1: the plan was reused */
};

prt_status opk_lt_open(opk_lt **out)
{
    const char *why = opk_lt_unavailable();
    const dev_ops *dev;
    opk_lt *h;
    prt_status st;
    if (why)
        return base_error(PRT_ERR_UNSUPPORTED, "8-bit products through cuBLASLt: %s",
                          why);
    st = dev_get(PRT_DEVICE_CUDA, &dev);
    if (st)
        return st;
    h = base_calloc(1, sizeof *h);
    if (!h)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "cuBLASLt: out of memory");
    h->dev = dev;
    if (lt.create(&h->handle) != CUBLAS_STATUS_SUCCESS) {
        base_free(h);
        return base_error(PRT_ERR_INTERNAL, "cuBLASLt: creating a handle failed");
    }
    /* Through the device, as every allocation of device memory. */
    st = dev->alloc(OPK_LT_WORKSPACE, &h->workspace);
    h->ws_size = OPK_LT_WORKSPACE;
    h->owns_ws = 1;
    if (!st)
        st = dev->alloc(OPK_LT_SCRATCH, (void **)&h->scratch);
    if (st) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s", prt_last_error());
        opk_lt_close(h);
        return base_error(st, "cuBLASLt: its workspace: %s", msg);
    }
    *out = h;
    return PRT_OK;
}

prt_status opk_lt_open_shared(opk_lt **out, void *workspace, size_t bytes)
{
    const char *why = opk_lt_unavailable();
    opk_lt *h;
    if (why)
        return base_error(PRT_ERR_UNSUPPORTED, "cuBLASLt: %s", why);
    h = base_calloc(1, sizeof *h);
    if (!h)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "cuBLASLt: out of memory");
    if (lt.create(&h->handle) != CUBLAS_STATUS_SUCCESS) {
        base_free(h);
        return base_error(PRT_ERR_INTERNAL, "cuBLASLt: creating a handle failed");
    }
    h->workspace = workspace;
    h->ws_size = workspace ? bytes : 0;
    *out = h;
    return PRT_OK;
}

void opk_lt_close(opk_lt *h)
{
    if (!h)
        return;
    lt.destroy(h->handle);
    if (h->workspace && h->owns_ws)
        h->dev->free(h->workspace);
    if (h->scratch)
        h->dev->free(h->scratch);
    base_free(h);
}

int32_t *opk_lt_scratch(opk_lt *h)
{
    return h->scratch;
}

int opk_lt_last_found(const opk_lt *h)
{
    return h->found;
}

int opk_lt_s8_fits(int64_t N, int64_t K)
{
    return N > 0 && K > 0 && N % 4 == 0 && K % 4 == 0 && N <= INT32_MAX && K <= INT32_MAX;
}

int opk_lt_fp8_fits(int32_t cc, int64_t N, int64_t K)
{
    return cc >= 89 && N > 0 && K > 0 && N % 16 == 0 && K % 16 == 0 && N <= INT32_MAX &&
           K <= INT32_MAX;
}

/* One product's descriptors, made per call (host objects only, so a graph
 * capture may make them) and destroyed by lt_free. */
typedef struct lt_call {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, c, d;
} lt_call;

static void lt_free(lt_call *c)
{
    if (c->desc)
        lt.desc_destroy(c->desc);
    if (c->a)
        lt.layout_destroy(c->a);
    if (c->b)
        lt.layout_destroy(c->b);
    if (c->c)
        lt.layout_destroy(c->c);
    if (c->d)
        lt.layout_destroy(c->d);
}

/* Column-major, cuBLASLt's view: D[N x M] = op(Bt) op(A) with Bt's stored
 * K x N transposed and A's K x M not, which is row-major C = A Bt^T. */
static cublasStatus_t lt_layouts(lt_call *c, cudaDataType ab, cudaDataType ct,
                                 cudaDataType dt, int64_t M, int64_t N, int64_t K)
{
    cublasStatus_t s = lt.layout_create(&c->a, ab, (uint64_t)K, (uint64_t)N, K);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = lt.layout_create(&c->b, ab, (uint64_t)K, (uint64_t)M, K);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = lt.layout_create(&c->c, ct, (uint64_t)N, (uint64_t)M, N);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = lt.layout_create(&c->d, dt, (uint64_t)N, (uint64_t)M, N);
    return s;
}

/* The largest power of two up to 256 dividing p's address. */
static uint32_t lt_align(const void *p)
{
    uint32_t a = 256;
    while (a > 1 && (uintptr_t)p % a)
        a /= 2;
    return a;
}

/* The name of a cuBLAS status, for messages. */
static const char *lt_status_name(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_SUCCESS:
        return "SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
        return "NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
        return "ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
        return "INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
        return "ARCH_MISMATCH";
    case CUBLAS_STATUS_EXECUTION_FAILED:
        return "EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR:
        return "INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED:
        return "NOT_SUPPORTED";
    default:
        return "unknown";
    }
}

/* 1 if `a` splits K (its config's SPLITK_NUM above 1); 0 when cuBLASLt
 * cannot say (no cublasLtMatmulAlgoConfigGetAttribute). */
static int lt_splits_k(const cublasLtMatmulAlgo_t *a)
{
    uint32_t n = 1;
    size_t got = 0;
    return lt.algo_config_get &&
           lt.algo_config_get(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &n, sizeof n, &got) ==
               CUBLAS_STATUS_SUCCESS &&
           got == sizeof n && n > 1;
}

/* The algorithm for this product: the handle's plan when it is for the
 * same shape, kind and alignments (al: cuBLASLt's A, B and D, lt_align),
 * else the first of cuBLASLt's heuristic answers for them that fits the
 * workspace (and, for 16-bit operands, does not split K). cuBLASLt's heuristic assumes
 * 256-byte aligned operands unless told (CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*), and a row
 * block past the first may start less aligned. *none: 1 when the query succeeded but gave
 * nothing usable (status NOT_SUPPORTED then). */
static cublasStatus_t lt_algo(opk_lt *h, lt_call *c, int32_t kind, int64_t M, int64_t N,
                              int64_t K, const uint32_t al[3], const int64_t more[3],
                              int *none)
{
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t res[LT_ALGOS];
    const size_t ws = h->ws_size;
    const uint32_t key = al[0] | al[1] << 9 | al[2] << 18;
    static const cublasLtMatmulPreferenceAttributes_t prefs[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    const int half =
        kind >= LT_KIND_F32 && (kind - LT_KIND_F32) & (LT_F32_F16 | LT_F32_BF16);
    int found = 0, pick = -1;
    cublasStatus_t s;
    *none = 0;
    if (h->plan.valid && h->plan.kind == kind && h->plan.M == M && h->plan.N == N &&
        h->plan.K == K && h->plan.align == key &&
        memcmp(h->plan.more, more, sizeof h->plan.more) == 0) {
        h->found = -1;
        return CUBLAS_STATUS_SUCCESS;
    }
    h->plan.valid = 0;
    h->found = 0;
    memset(res, 0, sizeof res);
    s = lt.pref_create(&pref);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = lt.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    /* C's alignment is D's: C is D, or (beta 0) not read. */
    for (int k = 0; k < 4 && s == CUBLAS_STATUS_SUCCESS; k++)
        s = lt.pref_set(pref, prefs[k], &al[k < 3 ? k : 2], sizeof al[0]);
    /* A float32 product split along K adds its parts in float32 scratch
     * (COMPUTE_TYPE), never in D itself (INPLACE), whose sums add in an
     * order that changes from run to run. A 16-bit one is not split at
     * all (mask NONE, and lt_splits_k below): on an H100, cuBLASLt 13's
     * split-K kernels for 16-bit operands added their parts in the 16-bit
     * type (bfloat16 results 2 units in the last place off the one
     * rounding), and racecheck reported shared-memory hazards inside them
     * (nvjet_sm90_hsh_*_splitK). */
    if (s == CUBLAS_STATUS_SUCCESS && kind >= LT_KIND_F32) {
        const uint32_t mask = half ? CUBLASLT_REDUCTION_SCHEME_NONE
                                   : CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
        s = lt.pref_set(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask,
                        sizeof mask);
    }
    if (s == CUBLAS_STATUS_SUCCESS)
        s = lt.heuristic(h->handle, c->desc, c->a, c->b, c->c, c->d, pref, LT_ALGOS, res,
                         &found);
    if (pref)
        lt.pref_destroy(pref);
    if (s != CUBLAS_STATUS_SUCCESS)
        return s;
    h->found = found;
    h->plan.nb_cand = 0;
    for (int k = 0; k < found && k < LT_ALGOS; k++)
        if (res[k].state == CUBLAS_STATUS_SUCCESS && res[k].workspaceSize <= ws &&
            !(half && lt_splits_k(&res[k].algo))) {
            pick = pick < 0 ? k : pick;
            h->plan.cand[h->plan.nb_cand++] = res[k].algo;
        }
    h->plan.at = 0;
    if (pick < 0) {
        *none = 1;
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    h->plan.valid = 1;
    h->plan.kind = kind;
    h->plan.M = M;
    h->plan.N = N;
    h->plan.K = K;
    h->plan.align = key;
    memcpy(h->plan.more, more, sizeof h->plan.more);
    h->plan.algo = res[pick].algo;
    return CUBLAS_STATUS_SUCCESS;
}

/* Runs the described product D = C = alpha op(Bt) op(A) (cuBLASLt's A is
 * our Bt, its B our A: lt_layouts); C_in is what cuBLASLt is given as C
 * (beta 0: read only as D itself, or NULL). A refusal (describing it, the
 * heuristic, or cublasLtMatmul's checks before it launches anything) is
 * PRT_ERR_UNSUPPORTED naming the stage, the status and the shape, and is
 * logged once per process and kind, so a run that expected cuBLASLt says
 * why it fell back (issue 30). `s`: the describing's status. */
static prt_status lt_run(opk_lt *h, lt_call *c, int32_t kind, const int64_t more[3],
                         void *stream, int64_t M, int64_t N, int64_t K, const void *alpha,
                         const void *beta, const void *A, const void *Bt,
                         const void *C_in, void *C, cublasStatus_t s, const char *what)
{
    /* The kinds whose refusal was logged, a bit each (kinds are below
     * LT_KIND_F32 + 128: the flags' sum is 127). */
    static _Atomic uint64_t told[(LT_KIND_F32 + 128 + 63) / 64];
    const int32_t k = kind >= 0 && kind < LT_KIND_F32 + 128 ? kind : 0;
    const uint64_t bit = (uint64_t)1 << (k % 64);
    const uint32_t al[3] = {lt_align(Bt), lt_align(A), lt_align(C)};
    const char *stage = "describing it";
    int none = 0;
    prt_status st;
    if (s == CUBLAS_STATUS_SUCCESS) {
        stage = "cublasLtMatmulAlgoGetHeuristic";
        s = lt_algo(h, c, kind, M, N, K, al, more, &none);
    }
    if (s == CUBLAS_STATUS_SUCCESS) {
        stage = "cublasLtMatmul";
        s = lt.matmul(h->handle, c->desc, alpha, Bt, c->a, A, c->b, beta, C_in, c->c, C,
                      c->d, &h->plan.algo, h->workspace, h->ws_size,
                      (cudaStream_t)stream);
        /* A refusal by cublasLtMatmul's own checks launches nothing: the
         * heuristic's next answer, and the one that runs stays the plan. */
        while (s == CUBLAS_STATUS_NOT_SUPPORTED && h->plan.valid &&
               h->plan.at + 1 < h->plan.nb_cand) {
            h->plan.algo = h->plan.cand[++h->plan.at];
            s = lt.matmul(h->handle, c->desc, alpha, Bt, c->a, A, c->b, beta, C_in, c->c,
                          C, c->d, &h->plan.algo, h->workspace, h->ws_size,
                          (cudaStream_t)stream);
        }
    }
    lt_free(c);
    if (s == CUBLAS_STATUS_SUCCESS)
        return PRT_OK;
    /* cublasLtMatmul's INVALID_VALUE and NOT_SUPPORTED come from its
     * checks, before a launch; a failure past them is an internal one. */
    st = strcmp(stage, "cublasLtMatmul") != 0 || s == CUBLAS_STATUS_NOT_SUPPORTED ||
                 s == CUBLAS_STATUS_INVALID_VALUE
             ? PRT_ERR_UNSUPPORTED
             : PRT_ERR_INTERNAL;
    if (none)
        base_error(st,
                   "cuBLASLt %s product %lld x %lld x %lld (M x N x K): the heuristic "
                   "returned %d algorithms, none running in %zu bytes of workspace "
                   "(operands aligned to %u, %u and %u bytes)",
                   what, (long long)M, (long long)N, (long long)K, h->found, h->ws_size,
                   al[1], al[0], al[2]);
    else
        base_error(st,
                   "cuBLASLt %s product %lld x %lld x %lld (M x N x K): %s: status %d "
                   "(CUBLAS_STATUS_%s; operands aligned to %u, %u and %u bytes)",
                   what, (long long)M, (long long)N, (long long)K, stage, (int)s,
                   lt_status_name(s), al[1], al[0], al[2]);
    if (!(atomic_fetch_or(&told[k / 64], bit) & bit))
        base_log(PRT_SEV_WARNING, "%s (logged once per kind of product)",
                 prt_last_error());
    return st;
}

/* The 8-bit products' plans have no more to their key. */
static const int64_t lt_no_more[3] = {0, 0, 0};

/* A fresh call: its descriptor for `compute` with scalars of `scale`, in
 * the "TN" form (lt.h). */
static cublasStatus_t lt_begin(lt_call *c, cublasComputeType_t compute,
                               cudaDataType scale)
{
    const cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
    cublasStatus_t s;
    memset(c, 0, sizeof *c);
    s = lt.desc_create(&c->desc, compute, scale);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = lt.desc_set(c->desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = lt.desc_set(c->desc, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof n);
    return s;
}

prt_status opk_lt_gemm_s8(opk_lt *h, void *stream, int64_t M, int64_t N, int64_t K,
                          const int8_t *A, const int8_t *Bt, int32_t *C)
{
    const int32_t one = 1, zero = 0;
    lt_call c;
    cublasStatus_t s;
    if (M <= 0 || M > INT32_MAX || !opk_lt_s8_fits(N, K))
        return base_error(PRT_ERR_UNSUPPORTED,
                          "cuBLASLt int8 product %lld x %lld x %lld: N and K must be "
                          "positive multiples of 4",
                          (long long)M, (long long)N, (long long)K);
    s = lt_begin(&c, CUBLAS_COMPUTE_32I, CUDA_R_32I);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = lt_layouts(&c, CUDA_R_8I, CUDA_R_32I, CUDA_R_32I, M, N, K);
    return lt_run(h, &c, 0, lt_no_more, stream, M, N, K, &one, &zero, A, Bt, C, C, s,
                  "int8 x int8 -> int32");
}

prt_status opk_lt_gemm_fp8(opk_lt *h, void *stream, int64_t M, int64_t N, int64_t K,
                           const void *A, const void *Bt, const float *a_scale,
                           const float *b_scale, int32_t c_dtype, void *C,
                           const float *d_scale)
{
    const float one = 1.0f, zero = 0.0f;
    char what[64];
    cudaDataType ct, dt;
    lt_call c;
    cublasStatus_t s;
    switch (c_dtype) {
    case PRT_FLOAT32:
        ct = dt = CUDA_R_32F;
        break;
    case PRT_FLOAT16:
        ct = dt = CUDA_R_16F;
        break;
    case PRT_BFLOAT16:
        ct = dt = CUDA_R_16BF;
        break;
    /* An E4M3 D takes a 16-bit C (cuBLASLt's FP8 table); with beta 0 C is
     * not read. */
    case PRT_FLOAT8E4M3FN:
        ct = CUDA_R_16BF, dt = CUDA_R_8F_E4M3;
        break;
    default:
        return base_error(PRT_ERR_UNSUPPORTED,
                          "cuBLASLt FP8 product: no %s result (float32, float16, "
                          "bfloat16 or float8e4m3fn)",
                          prt_dtype_name(c_dtype));
    }
    if (M <= 0 || M > INT32_MAX || N <= 0 || K <= 0 || N % 16 || K % 16 ||
        (dt == CUDA_R_8F_E4M3) != (d_scale != NULL))
        return base_error(PRT_ERR_UNSUPPORTED,
                          "cuBLASLt FP8 product %lld x %lld x %lld: N and K must be "
                          "positive multiples of 16, and a scale given for an FP8 result "
                          "alone",
                          (long long)M, (long long)N, (long long)K);
    s = lt_begin(&c, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    /* cuBLASLt's A is our Bt (lt_layouts), so their scales swap too. */
    if (s == CUBLAS_STATUS_SUCCESS)
        s = lt.desc_set(c.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &b_scale,
                        sizeof b_scale);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = lt.desc_set(c.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &a_scale,
                        sizeof a_scale);
    if (s == CUBLAS_STATUS_SUCCESS && d_scale)
        s = lt.desc_set(c.desc, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, &d_scale,
                        sizeof d_scale);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = lt_layouts(&c, CUDA_R_8F_E4M3, ct, dt, M, N, K);
    snprintf(what, sizeof what, "FP8 e4m3 x e4m3 -> %s", prt_dtype_name(c_dtype));
    /* C is NULL (beta 0; PyTorch's _scaled_mm does the same): an E4M3 D
     * has a 16-bit C layout, and cuBLASLt refuses C == D with layouts
     * that differ (INVALID_VALUE, issue 30). */
    return lt_run(h, &c, c_dtype + 1, lt_no_more, stream, M, N, K, &one, &zero, A, Bt,
                  NULL, C, s, what);
}

static cublasStatus_t lt_layout_attr(cublasLtMatrixLayout_t l,
                                     cublasLtMatrixLayoutAttribute_t a, const void *v,
                                     size_t n)
{
    return lt.layout_set(l, a, v, n);
}

/* A float operand's column-major layout: rows x cols of `type`, leading
 * dim ld, `batch` matrices `stride` elements apart. */
static cublasStatus_t lt_layout_float(cublasLtMatrixLayout_t *l, cudaDataType type,
                                      int64_t rows, int64_t cols, int64_t ld,
                                      int64_t batch, int64_t stride)
{
    const int32_t count = (int32_t)batch;
    cublasStatus_t s = lt.layout_create(l, type, (uint64_t)rows, (uint64_t)cols, ld);
    if (s == CUBLAS_STATUS_SUCCESS && batch > 1)
        s = lt_layout_attr(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
    if (s == CUBLAS_STATUS_SUCCESS && batch > 1)
        s = lt_layout_attr(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                           sizeof stride);
    return s;
}

prt_status opk_lt_gemm_float(opk_lt *h, void *stream, int32_t dtype, int tf32,
                             int32_t trans_a, int32_t trans_b, int64_t M, int64_t N,
                             int64_t K, float alpha, const void *A, int64_t lda,
                             int64_t stride_a, const void *B, int64_t ldb,
                             int64_t stride_b, const void *bias, int relu, void *Y,
                             int64_t batch)
{
    const cudaDataType type = dtype == PRT_FLOAT16    ? CUDA_R_16F
                              : dtype == PRT_BFLOAT16 ? CUDA_R_16BF
                                                      : CUDA_R_32F;
    const float zero = 0.0f;
    const cublasOperation_t ta = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                            tb = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasLtEpilogue_t epi =
        bias ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
             : (relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
    const int32_t kind = LT_KIND_F32 + (relu ? LT_F32_RELU : 0) +
                         (tf32 && type == CUDA_R_32F ? LT_F32_TF32 : 0) +
                         (bias ? LT_F32_BIAS : 0) + (trans_a ? LT_F32_TA : 0) +
                         (trans_b ? LT_F32_TB : 0) +
                         (type == CUDA_R_16F    ? LT_F32_F16
                          : type == CUDA_R_16BF ? LT_F32_BF16
                                                : 0);
    const int64_t more[3] = {lda, ldb, batch};
    char what[64];
    lt_call c;
    cublasStatus_t s;
    if (!h || M <= 0 || N <= 0 || K <= 0 || batch <= 0 || M > INT32_MAX ||
        N > INT32_MAX || K > INT32_MAX || batch > INT32_MAX ||
        (dtype != PRT_FLOAT32 && type == CUDA_R_32F))
        return base_error(PRT_ERR_UNSUPPORTED,
                          "cuBLASLt %s product %lld x %lld x %lld (batch %lld): not "
                          "taken",
                          prt_dtype_name(dtype), (long long)M, (long long)N, (long long)K,
                          (long long)batch);
    memset(&c, 0, sizeof c);
    s = lt.desc_create(&c.desc,
                       tf32 && type == CUDA_R_32F ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                  : CUBLAS_COMPUTE_32F,
                       CUDA_R_32F);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = lt.desc_set(c.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = lt.desc_set(c.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = lt.desc_set(c.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
    if (s == CUBLAS_STATUS_SUCCESS && bias)
        s = lt.desc_set(c.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
    /* Row-major Y[M x N] = op(A) op(B) is column-major Y^T[N x M] =
     * op(B)^T op(A)^T: cuBLASLt's A is our B (N x K unless transposed), its
     * B our A (K x M unless transposed), D is N x M, ld N; the bias is per
     * row of D, so per column of Y. */
    if (s == CUBLAS_STATUS_SUCCESS)
        s = trans_b ? lt_layout_float(&c.a, type, K, N, ldb, batch, stride_b)
                    : lt_layout_float(&c.a, type, N, K, ldb, batch, stride_b);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = trans_a ? lt_layout_float(&c.b, type, M, K, lda, batch, stride_a)
                    : lt_layout_float(&c.b, type, K, M, lda, batch, stride_a);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = lt_layout_float(&c.c, type, N, M, N, batch, M * N);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = lt_layout_float(&c.d, type, N, M, N, batch, M * N);
    snprintf(what, sizeof what, "%s%s", prt_dtype_name(dtype),
             tf32 && type == CUDA_R_32F ? " (TF32)" : "");
    return lt_run(h, &c, kind, more, stream, M, N, K, &alpha, &zero, A, B, Y, Y, s, what);
}
