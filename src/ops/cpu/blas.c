/*
 * The BLAS behind the CPU matrix products (op_gemm_f32): OpenBLAS, loaded
 * when the first context that computes products is made, and used only
 * while the process has no memory limit; the built-in loops (products.c)
 * otherwise. See op_common.h.
 *
 * Why OpenBLAS is neither linked nor called under a limit. OpenBLAS 0.3.21
 * (Debian 12's) gives every thread that computes a product, and each thread
 * of its own server, a buffer of BUFFER_SIZE (128 MiB of address space on
 * x86-64); when mmap and malloc both refuse it, it asks again, forever
 * (driver/others/memory.c, blas_memory_alloc: the retry loop has no exit).
 * Its constructor starts the server threads, which ask for their buffers at
 * once (blas_server.c, blas_thread_server), and its destructor joins them.
 * Linked into libplugrt, the constructor ran when the program loaded, so
 * under `ulimit -v` a server thread spun from the start and the program,
 * having reported a clean error, hung in exit() joining it; runs that got
 * further spun inside cblas_sgemm. Later releases start server threads
 * without a buffer, but the retry loop has no exit still: no setting (thread
 * count, buffer size) turns a refused allocation into an error, and one
 * more thread calling a product needs one more buffer. The safe course is
 * not to load it where an allocation can be refused.
 *
 * A process is refused address space for its own limits: RLIMIT_AS (ulimit
 * -v) and RLIMIT_DATA (ulimit -d, which counts private mappings since Linux
 * 4.7). Without either, OpenBLAS is dlopen'ed (once, never closed) and
 * computes every product. With one, products take the built-in loops
 * (results within float rounding of OpenBLAS's, two to four times slower)
 * and OpenBLAS is not loaded, so neither its constructor nor its destructor
 * runs (loaded before the limit came, it is left idle). The limits are read at each
 * context creation of an op with products (attach_to_context) and at the first product if
 * nothing has read them yet, so a limit the process sets itself counts from its next
 * context on; a product only reads an atomic.
 */
#include "ops/op_common.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>

#ifdef PRT_HAVE_CBLAS
#include <cblas.h>
#include <dlfcn.h>
#endif

enum { BLAS_UNDECIDED = -1, BLAS_LOOPS = 0, BLAS_OPENBLAS = 1 };

static _Atomic int32_t blas_mode = BLAS_UNDECIDED;

#ifdef PRT_HAVE_CBLAS

/* The limit that can refuse this process memory, or NULL when none. */
static const char *blas_limit(void)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
        return "an address-space limit (RLIMIT_AS, ulimit -v)";
    if (getrlimit(RLIMIT_DATA, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
        return "a data limit (RLIMIT_DATA, ulimit -d)";
    return NULL;
}

/* The header's own prototype, so a call that does not match it fails to
 * compile; nothing links against the symbol. */
typedef __typeof__(&cblas_sgemm) blas_sgemm_fn;
typedef __typeof__(&openblas_set_num_threads) blas_threads_fn;

/* Guards the loading and the changes of blas_mode; products do not take it. */
static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;
static int blas_tried; /* dlopen attempted (it is not retried) */
static blas_sgemm_fn blas_sgemm;

/* Under blas_lock. */
static void blas_load(void)
{
    void *h = dlopen(PRT_CBLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    void *sym = h ? dlsym(h, "cblas_sgemm") : NULL;
    blas_tried = 1;
    if (!sym) {
        base_log(PRT_SEV_WARNING,
                 "cannot load %s (%s): matrix products use the built-in loops",
                 PRT_CBLAS_LIBRARY, h ? "it has no cblas_sgemm" : dlerror());
        if (h)
            dlclose(h);
        return;
    }
    /* POSIX guarantees a data pointer from dlsym converts to a function
     * pointer. */
    blas_sgemm = (blas_sgemm_fn)sym;
    /* One thread: plugrt spreads its products over the context's threads
     * itself (base_parallel_for), in blocks whose bounds do not depend on
     * the thread count; OpenBLAS's own threads would compete with those
     * and, by default one per core, spin on cores a one-thread run was not
     * given (sched_yield in its server loop). */
    sym = dlsym(h, "openblas_set_num_threads");
    if (sym)
        ((blas_threads_fn)sym)(1);
}

void op_blas_prepare(void)
{
    const char *limit = blas_limit();
    int32_t mode;
    pthread_mutex_lock(&blas_lock);
    if (!limit && !blas_tried)
        blas_load();
    mode = !limit && blas_sgemm ? BLAS_OPENBLAS : BLAS_LOOPS;
    if (mode != atomic_load(&blas_mode)) {
        if (mode == BLAS_OPENBLAS)
            base_log(PRT_SEV_INFO, "matrix products: OpenBLAS (%s)", PRT_CBLAS_LIBRARY);
        else if (limit)
            base_log(PRT_SEV_INFO,
                     "matrix products: the built-in loops, since the process "
                     "has %s and OpenBLAS would hang when refused memory",
                     limit);
    }
    /* The release pairs with the products' acquire: who sees
     * BLAS_OPENBLAS sees blas_sgemm. */
    atomic_store(&blas_mode, mode);
    pthread_mutex_unlock(&blas_lock);
}

/* blas_mode, decided if nothing has decided it yet. */
static int32_t blas_current(void)
{
    int32_t mode = atomic_load_explicit(&blas_mode, memory_order_acquire);
    if (mode == BLAS_UNDECIDED) {
        op_blas_prepare();
        mode = atomic_load_explicit(&blas_mode, memory_order_acquire);
    }
    return mode;
}

int op_blas_in_use(void)
{
    return blas_current() == BLAS_OPENBLAS;
}

int op_blas_sgemm(int32_t trans_a, int32_t trans_b, int64_t M, int64_t N, int64_t K,
                  const float *A, int64_t lda, const float *B, int64_t ldb, float *C,
                  int64_t ldc)
{
    int32_t mode = blas_current();
    if (mode != BLAS_OPENBLAS || M > INT_MAX || N > INT_MAX || K > INT_MAX ||
        lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX)
        return 0;
    blas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
               trans_b ? CblasTrans : CblasNoTrans, (int)M, (int)N, (int)K, 1.0f, A,
               (int)lda, B, (int)ldb, 0.0f, C, (int)ldc);
    return 1;
}

#else /* no BLAS in this build */

void op_blas_prepare(void)
{
    atomic_store(&blas_mode, BLAS_LOOPS);
}

int op_blas_in_use(void)
{
    return 0;
}

int op_blas_sgemm(int32_t trans_a, int32_t trans_b, int64_t M, int64_t N, int64_t K,
                  const float *A, int64_t lda, const float *B, int64_t ldb, float *C,
                  int64_t ldc)
{
    (void)trans_a, (void)trans_b, (void)M, (void)N, (void)K, (void)A, (void)lda;
    (void)B, (void)ldb, (void)C, (void)ldc;
    return 0;
}

#endif
