/*
 * NonZeroPlugin on CUDA against CUB's DeviceSelect and the copy.
 *
 * Cases (float32 input, PERF.md):
 *   - 4096² and 16384² at densities 0.5, 0.1, 0.01, rowOrder 1 ("row": K x 2)
 *     and 0 ("col": 2 x K): a one-layer engine, prt_context_enqueue timed
 *     with events, median of >= 30 runs, buffers rotated when a set is
 *     smaller than 4 x L2;
 *   - 128² (the sample's size), density 0.5, row order: the latency of a
 *     whole enqueue, eager and as a CUDA-graph replay (captured once with
 *     prt_context_capture_graph, replayed with prt_context_launch_graph),
 *     per run over many runs queued back to back; also from idle (the
 *     stream drained before each run).
 *
 * Bytes moved per run: the input once (4 R C), the index pairs once (8 K)
 * and the count (8). The copy moves as many bytes (bench_time_copy).
 *
 * CUB, producing the same index pairs in the same order, two ways (the
 * faster is the peer in the table):
 *   cub_if       DeviceSelect::If over the counting iterator with the
 *                predicate x[i] != 0;
 *   cub_flagged  DeviceSelect::FlaggedIf with x itself as the flags and the
 *                predicate flag != 0 (x loaded by CUB's own block loads);
 * both writing (i / C, i % C) through a transform output iterator: as int2
 * pairs (row order), or rows in place and columns to a staging buffer that
 * one more kernel moves behind them once K is known on the device (column
 * order, since K is not known while selecting).
 *
 * Every implementation's result is checked against a plain C reference on
 * the host before it is timed (count and every pair; outputs poisoned
 * first), and the counts of every buffer set again after timing.
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/tuple.h>

#define NZ_SEED 20261129u

/* ---- CUB ---------------------------------------------------------------- */

struct nz_at {
    const float *x;
    __device__ bool operator()(int i) const { return x[i] != 0.0f; }
};

struct nz_flag {
    __device__ bool operator()(float v) const { return v != 0.0f; }
};

struct nz_pair {
    unsigned cols;
    __device__ int2 operator()(int i) const
    {
        unsigned u = (unsigned)i;
        return make_int2((int)(u / cols), (int)(u % cols));
    }
};

struct nz_pair_tuple {
    unsigned cols;
    __device__ thrust::tuple<int, int> operator()(int i) const
    {
        unsigned u = (unsigned)i;
        return thrust::make_tuple((int)(u / cols), (int)(u % cols));
    }
};

/* Column order: columns were staged in cols[0..K); they belong at
 * out[K..2K). */
__global__ static void nz_move_cols(int *out, const int *cols, const int *count)
{
    int k = *count;
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < k;
         j += gridDim.x * blockDim.x)
        out[k + j] = cols[j];
}

enum { CUB_IF = 0, CUB_FLAGGED = 1 };

typedef struct nz_size {
    int64_t rows, cols, n;
    int sets;
    float *x[BENCH_MAX_SETS];
    int32_t *y[BENCH_MAX_SETS]; /* plugrt: 2 n int32, the upper bound */
    int64_t *k[BENCH_MAX_SETS];
    int32_t *cy[BENCH_MAX_SETS]; /* CUB: 2 n int32 */
    int32_t *cstage;             /* CUB column order: n int32, shared by the sets */
    int *cnum[BENCH_MAX_SETS];
    void *temp;
    size_t temp_bytes;
    float *hx;           /* host copy of set 0's input */
    int32_t *hy;         /* host copy of an output */
    bench_engine eng[2]; /* [row_order] */
    bench_engine nv[2];  /* [row_order]: backend "nvrtc", a kernel layer */
} nz_size;

/* Queues one CUB selection for set s; with temp NULL only sizes temp. */
static cudaError_t cub_select(nz_size *z, int variant, int row_order, int s, void *temp,
                              size_t *temp_bytes, cudaStream_t stream)
{
    thrust::counting_iterator<int> idx(0);
    int n = (int)z->n;
    cudaError_t err;
    if (row_order) {
        auto out = thrust::make_transform_output_iterator((int2 *)z->cy[s],
                                                          nz_pair{(unsigned)z->cols});
        if (variant == CUB_IF)
            return cub::DeviceSelect::If(temp, *temp_bytes, idx, out, z->cnum[s], n,
                                         nz_at{z->x[s]}, stream);
        return cub::DeviceSelect::FlaggedIf(temp, *temp_bytes, idx, z->x[s], out,
                                            z->cnum[s], n, nz_flag{}, stream);
    }
    auto out = thrust::make_transform_output_iterator(
        thrust::make_zip_iterator(thrust::make_tuple(z->cy[s], z->cstage)),
        nz_pair_tuple{(unsigned)z->cols});
    if (variant == CUB_IF)
        err = cub::DeviceSelect::If(temp, *temp_bytes, idx, out, z->cnum[s], n,
                                    nz_at{z->x[s]}, stream);
    else
        err = cub::DeviceSelect::FlaggedIf(temp, *temp_bytes, idx, z->x[s], out,
                                           z->cnum[s], n, nz_flag{}, stream);
    if (err != cudaSuccess || !temp)
        return err;
    nz_move_cols<<<264, 256, 0, stream>>>(z->cy[s], z->cstage, z->cnum[s]);
    return cudaGetLastError();
}

/* ---- runs ------------------------------------------------------------------- */

typedef struct nz_run {
    bench_env *env;
    nz_size *z;
    int row_order;
    int variant;           /* CUB */
    cudaGraphExec_t graph; /* CUB in a graph */
} nz_run;

static int run_plugrt(void *user, int set)
{
    nz_run *r = (nz_run *)user;
    return bench_enqueue(r->env, r->z->eng[r->row_order].ctx[set]);
}

static int run_nvrtc(void *user, int set)
{
    nz_run *r = (nz_run *)user;
    return bench_enqueue(r->env, r->z->nv[r->row_order].ctx[set]);
}

static int run_plugrt_graph(void *user, int set)
{
    nz_run *r = (nz_run *)user;
    prt_status st =
        prt_context_launch_graph(r->z->eng[r->row_order].ctx[set], r->env->stream);
    if (st != PRT_OK) {
        printf("  prt_context_launch_graph failed: %s: %s\n", prt_status_name(st),
               prt_last_error());
        return 1;
    }
    return 0;
}

static int run_cub(void *user, int set)
{
    nz_run *r = (nz_run *)user;
    size_t bytes = r->z->temp_bytes;
    cudaError_t err = cub_select(r->z, r->variant, r->row_order, set, r->z->temp, &bytes,
                                 r->env->stream);
    if (err != cudaSuccess) {
        printf("  CUB DeviceSelect failed: %s\n", cudaGetErrorString(err));
        return 1;
    }
    return 0;
}

static int run_cub_graph(void *user, int set)
{
    nz_run *r = (nz_run *)user;
    (void)set;
    BENCH_CUDA(cudaGraphLaunch(r->graph, r->env->stream));
    return 0;
}

/* ---- checks ------------------------------------------------------------------ */

/* Compares K pairs at hy (row order: K x 2; column order: 2 x K) with the
 * non-zeros of hx in row-major order. Writes the first difference to why. */
static int check_pairs(const nz_size *z, int row_order, int64_t kref, int64_t k,
                       const int32_t *hy, char *why, size_t size)
{
    int64_t j = 0, i = 0;
    if (k != kref) {
        snprintf(why, size, "count %lld, expected %lld", (long long)k, (long long)kref);
        return 1;
    }
    for (int64_t r = 0; r < z->rows; r++) {
        for (int64_t c = 0; c < z->cols; c++, i++) {
            int32_t gr, gc;
            if (z->hx[i] == 0.0f)
                continue;
            gr = row_order ? hy[2 * j] : hy[j];
            gc = row_order ? hy[2 * j + 1] : hy[k + j];
            if (gr != (int32_t)r || gc != (int32_t)c) {
                snprintf(why, size, "pair %lld is (%d, %d), expected (%lld, %lld)",
                         (long long)j, (int)gr, (int)gc, (long long)r, (long long)c);
                return 1;
            }
            j++;
        }
    }
    return 0;
}

/* Downloads set 0's output of plugrt (or CUB) and checks it. */
static int check_plugrt(bench_env *env, nz_size *z, int row_order, int64_t kref,
                        char *why, size_t size)
{
    int64_t k = -1;
    prt_dims d;
    prt_status st;
    BENCH_CUDA(cudaStreamSynchronize(env->stream));
    BENCH_CUDA(cudaMemcpy(&k, z->k[0], sizeof k, cudaMemcpyDeviceToHost));
    if (k < 0 || k > z->n) {
        snprintf(why, size, "count %lld out of range (expected %lld)", (long long)k,
                 (long long)kref);
        return 1;
    }
    /* The runtime's view of the true shape, read back from the device. */
    st = prt_context_get_tensor_shape(z->eng[row_order].ctx[0], "y", &d);
    if (st != PRT_OK) {
        snprintf(why, size, "prt_context_get_tensor_shape: %s", prt_last_error());
        return 1;
    }
    if (d.nb_dims != 2 || d.d[row_order ? 0 : 1] != k || d.d[row_order ? 1 : 0] != 2) {
        char a[64];
        snprintf(why, size, "output shape %s, expected K = %lld",
                 bench_dims_str(&d, a, sizeof a), (long long)k);
        return 1;
    }
    if (k > 0)
        BENCH_CUDA(cudaMemcpy(z->hy, z->y[0], sizeof(int32_t) * 2 * (size_t)k,
                              cudaMemcpyDeviceToHost));
    return check_pairs(z, row_order, kref, k, z->hy, why, size);
}

static int check_cub(bench_env *env, nz_size *z, int row_order, int64_t kref, char *why,
                     size_t size)
{
    int k = -1;
    BENCH_CUDA(cudaStreamSynchronize(env->stream));
    BENCH_CUDA(cudaMemcpy(&k, z->cnum[0], sizeof k, cudaMemcpyDeviceToHost));
    if (k < 0 || k > z->n) {
        snprintf(why, size, "count %d out of range", k);
        return 1;
    }
    if (k > 0)
        BENCH_CUDA(cudaMemcpy(z->hy, z->cy[0], sizeof(int32_t) * 2 * (size_t)k,
                              cudaMemcpyDeviceToHost));
    return check_pairs(z, row_order, kref, k, z->hy, why, size);
}

/* After timing: every set's count is still right. */
static int check_counts(nz_size *z, int cub, int64_t kref, char *why, size_t size)
{
    for (int s = 0; s < z->sets; s++) {
        int64_t k = -1;
        if (cub) {
            int ki = -1;
            BENCH_CUDA(cudaMemcpy(&ki, z->cnum[s], sizeof ki, cudaMemcpyDeviceToHost));
            k = ki;
        } else {
            BENCH_CUDA(cudaMemcpy(&k, z->k[s], sizeof k, cudaMemcpyDeviceToHost));
        }
        if (k != kref) {
            snprintf(why, size, "after timing, set %d has count %lld, expected %lld", s,
                     (long long)k, (long long)kref);
            return 1;
        }
    }
    return 0;
}

static void poison(bench_env *env, nz_size *z, int cub)
{
    BENCH_CUDA(cudaMemsetAsync(cub ? (void *)z->cy[0] : (void *)z->y[0], 0xff,
                               sizeof(int32_t) * 2 * (size_t)z->n, env->stream));
    BENCH_CUDA(cudaMemsetAsync(cub ? (void *)z->cnum[0] : (void *)z->k[0], 0xff,
                               cub ? sizeof(int) : sizeof(int64_t), env->stream));
}

/* ---- one size ------------------------------------------------------------------ */

static int size_alloc(bench_env *env, nz_size *z, int64_t rows, int64_t cols, int sets)
{
    static const char *const outs[2] = {"y", "k"};
    size_t tb = 0;
    memset(z, 0, sizeof *z);
    z->rows = rows;
    z->cols = cols;
    z->n = rows * cols;
    z->sets = sets;
    for (int s = 0; s < sets; s++) {
        z->x[s] = (float *)bench_malloc(sizeof(float) * (size_t)z->n);
        z->y[s] = (int32_t *)bench_malloc(sizeof(int32_t) * 2 * (size_t)z->n);
        z->k[s] = (int64_t *)bench_malloc(sizeof(int64_t));
        z->cy[s] = (int32_t *)bench_malloc(sizeof(int32_t) * 2 * (size_t)z->n);
        z->cnum[s] = (int *)bench_malloc(sizeof(int));
    }
    z->cstage = (int32_t *)bench_malloc(sizeof(int32_t) * (size_t)z->n);
    for (int v = 0; v < 2; v++) {
        for (int ro = 0; ro < 2; ro++) {
            size_t b = 0;
            BENCH_CUDA(cub_select(z, v, ro, 0, NULL, &b, env->stream));
            if (b > tb)
                tb = b;
        }
    }
    z->temp_bytes = tb;
    z->temp = bench_malloc(tb);
    z->hx = (float *)bench_host_malloc(sizeof(float) * (size_t)z->n);
    z->hy = (int32_t *)bench_host_malloc(sizeof(int32_t) * 2 * (size_t)z->n);

    /* The compiled kernels (eng) and the NVRTC backend's kernel layer (nv),
     * bound to the same buffers. */
    for (int e = 0; e < 4; e++) {
        int ro = e & 1;
        int64_t d2[2] = {rows, cols};
        prt_dims d;
        int32_t row_order = ro;
        prt_field f[2] = {{"rowOrder", &row_order, PRT_FIELD_INT32, 1},
                          {"backend", "nvrtc", PRT_FIELD_CHAR, 5}};
        bench_engine *eng = e < 2 ? &z->eng[ro] : &z->nv[ro];
        bench_dims(&d, 2, d2);
        if (bench_engine_build(env, "", "NonZeroPlugin", f, e < 2 ? 1 : 2, PRT_FLOAT32,
                               &d, outs, 2, sets, eng) != PRT_OK)
            continue;
        for (int s = 0; s < sets; s++) {
            prt_context *c = eng->ctx[s];
            if (prt_context_set_tensor_address(c, "x", z->x[s]) != PRT_OK ||
                prt_context_set_tensor_address(c, "y", z->y[s]) != PRT_OK ||
                prt_context_set_tensor_address(c, "k", z->k[s]) != PRT_OK) {
                printf("  binding buffers failed: %s\n", prt_last_error());
                bench_engine_destroy(eng);
                break;
            }
        }
    }
    return 0;
}

static void size_free(nz_size *z)
{
    for (int ro = 0; ro < 2; ro++) {
        bench_engine_destroy(&z->eng[ro]);
        bench_engine_destroy(&z->nv[ro]);
    }
    for (int s = 0; s < z->sets; s++) {
        BENCH_CUDA(cudaFree(z->x[s]));
        BENCH_CUDA(cudaFree(z->y[s]));
        BENCH_CUDA(cudaFree(z->k[s]));
        BENCH_CUDA(cudaFree(z->cy[s]));
        BENCH_CUDA(cudaFree(z->cnum[s]));
    }
    BENCH_CUDA(cudaFree(z->cstage));
    BENCH_CUDA(cudaFree(z->temp));
    free(z->hx);
    free(z->hy);
}

/* Fills every set with one input of `density`; returns the reference K
 * (counted on the host copy of set 0). */
static int64_t size_fill(bench_env *env, nz_size *z, double density, uint64_t seed)
{
    int64_t k = 0;
    bench_fill_sparse(z->x[0], z->n, seed, density, env->stream);
    for (int s = 1; s < z->sets; s++)
        BENCH_CUDA(cudaMemcpyAsync(z->x[s], z->x[0], sizeof(float) * (size_t)z->n,
                                   cudaMemcpyDeviceToDevice, env->stream));
    BENCH_CUDA(cudaStreamSynchronize(env->stream));
    BENCH_CUDA(
        cudaMemcpy(z->hx, z->x[0], sizeof(float) * (size_t)z->n, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < z->n; i++)
        k += z->hx[i] != 0.0f;
    return k;
}

static const char *impl_name(int variant)
{
    return variant == CUB_IF ? "cub_if" : "cub_flagged";
}

/* Poisons set 0's output, runs fn once on set 0 and checks the result
 * against the reference. Returns 0 when it is right; otherwise reports the
 * failure for (id, impl). */
static int first_run(bench_env *env, nz_run *r, bench_run_fn fn, int cub, int64_t kref,
                     int64_t bytes, const char *id, const char *impl)
{
    char why[256];
    int bad;
    poison(env, r->z, cub);
    if (fn(r, 0)) {
        bench_result(id, impl, "error", NULL, NULL, bytes,
                     "the first run failed (above)");
        env->failures++;
        return 1;
    }
    bad = cub ? check_cub(env, r->z, r->row_order, kref, why, sizeof why)
              : check_plugrt(env, r->z, r->row_order, kref, why, sizeof why);
    if (bad) {
        bench_result(id, impl, "wrong", NULL, NULL, bytes, why);
        env->failures++;
    }
    return bad;
}

/* Times fn over every set, checks every set's count again and reports. */
static void timed(bench_env *env, nz_run *r, bench_run_fn fn, int cub, int64_t kref,
                  int64_t bytes, const bench_timing *copy, const char *id,
                  const char *impl, const char *note)
{
    char why[256];
    bench_timing t;
    if (bench_time(env, fn, r, r->z->sets, BENCH_MEDIAN, &t)) {
        bench_result(id, impl, "error", NULL, NULL, bytes, "a timed run failed (above)");
        env->failures++;
    } else if (check_counts(r->z, cub, kref, why, sizeof why)) {
        bench_result(id, impl, "wrong", NULL, NULL, bytes, why);
        env->failures++;
    } else {
        bench_result(id, impl, "ok", &t, copy, bytes, note);
    }
}

/* Checks, times and reports plugrt and both CUB variants on one case. */
static void bench_case(bench_env *env, nz_size *z, int row_order, int64_t kref,
                       int64_t bytes, const bench_timing *copy, const char *id)
{
    char note[128];
    nz_run r;
    memset(&r, 0, sizeof r);
    r.env = env;
    r.z = z;
    r.row_order = row_order;

    bench_result(id, "copy", "ok", copy, NULL, bytes,
                 "cudaMemcpyAsync D2D of the same bytes");
    if (!z->eng[row_order].engine) {
        bench_result(id, "plugrt", "error", NULL, NULL, bytes,
                     "no engine (build failed, above)");
        env->failures++;
    } else if (!first_run(env, &r, run_plugrt, 0, kref, bytes, id, "plugrt")) {
        snprintf(note, sizeof note, "K = %lld, tactic %d", (long long)kref,
                 (int)z->eng[row_order].tactic);
        timed(env, &r, run_plugrt, 0, kref, bytes, copy, id, "plugrt", note);
    }
    /* The NVRTC backend: the same result from the kernel layer. */
    if (!z->nv[row_order].engine) {
        bench_result(id, "plugrt_nvrtc", "error", NULL, NULL, bytes,
                     "no engine (build failed, above)");
        env->failures++;
    } else if (!first_run(env, &r, run_nvrtc, 0, kref, bytes, id, "plugrt_nvrtc")) {
        snprintf(note, sizeof note, "K = %lld, kernel layer (backend nvrtc)",
                 (long long)kref);
        timed(env, &r, run_nvrtc, 0, kref, bytes, copy, id, "plugrt_nvrtc", note);
    }
    for (int v = 0; v < 2; v++) {
        r.variant = v;
        if (!first_run(env, &r, run_cub, 1, kref, bytes, id, impl_name(v)))
            timed(env, &r, run_cub, 1, kref, bytes, copy, id, impl_name(v), NULL);
    }
}

static void bench_large(bench_env *env, int64_t side)
{
    static const double densities[] = {0.5, 0.1, 0.01};
    nz_size z;
    int64_t n = side * side;
    /* Sets from the input alone: outputs only add to each set's bytes. */
    int sets = bench_sets_for(env, (int64_t)sizeof(float) * n);
    printf("NonZero %lldx%lld: %d buffer set%s\n", (long long)side, (long long)side, sets,
           sets == 1 ? "" : "s");
    size_alloc(env, &z, side, side, sets);
    for (size_t di = 0; di < sizeof densities / sizeof densities[0]; di++) {
        int64_t kref = size_fill(env, &z, densities[di], NZ_SEED + (uint64_t)side + di);
        int64_t bytes = 4 * n + 8 * kref + 8;
        bench_timing copy;
        if (bench_time_copy(env, bytes, sets, BENCH_MEDIAN, &copy)) {
            env->failures++;
            continue;
        }
        for (int ro = 1; ro >= 0; ro--) {
            char id[96];
            snprintf(id, sizeof id, "nonzero %lldx%lld d=%g %s", (long long)side,
                     (long long)side, densities[di], ro ? "row" : "col");
            if (bench_selected(id))
                bench_case(env, &z, ro, kref, bytes, &copy, id);
        }
    }
    size_free(&z);
}

/* ---- 128²: the latency of a whole enqueue ---------------------------------------- */

static void report_latency(bench_env *env, const char *id, const char *impl, nz_run *r,
                           bench_run_fn fn, const bench_timing *copy, int64_t bytes,
                           const char *note)
{
    bench_timing t;
    char impl_iso[48];
    if (bench_time(env, fn, r, 1, BENCH_LOOP, &t)) {
        bench_result(id, impl, "error", NULL, NULL, bytes, "a timed run failed (above)");
        env->failures++;
        return;
    }
    bench_result(id, impl, "ok", &t, copy, bytes, note);
    snprintf(impl_iso, sizeof impl_iso, "%s_idle", impl);
    if (bench_time(env, fn, r, 1, BENCH_ISOLATED, &t) == 0)
        bench_result(id, impl_iso, "ok", &t, NULL, bytes, "one run from an idle stream");
}

static void bench_small(bench_env *env)
{
    const int64_t side = 128;
    const double density = 0.5;
    const char *eager = "nonzero 128x128 d=0.5 row eager";
    const char *graph = "nonzero 128x128 d=0.5 row graph";
    nz_size z;
    nz_run r;
    int64_t kref, bytes;
    bench_timing copy;
    char why[256], note[96];
    prt_status st;

    printf("NonZero 128x128 (latency; the data stays in L2)\n");
    size_alloc(env, &z, side, side, 1);
    kref = size_fill(env, &z, density, NZ_SEED + 128);
    bytes = 4 * z.n + 8 * kref + 8;
    memset(&r, 0, sizeof r);
    r.env = env;
    r.z = &z;
    r.row_order = 1;

    if (bench_time_copy(env, bytes, 1, BENCH_LOOP, &copy) == 0) {
        bench_result(eager, "copy", "ok", &copy, NULL, bytes,
                     "cudaMemcpyAsync D2D of the same bytes");
        bench_result(graph, "copy", "ok", &copy, NULL, bytes,
                     "cudaMemcpyAsync D2D of the same bytes");
    } else {
        env->failures++;
    }

    /* plugrt, eager and as a graph. */
    if (!z.eng[1].engine) {
        bench_result(eager, "plugrt", "error", NULL, NULL, bytes,
                     "no engine (build failed, above)");
        bench_result(graph, "plugrt", "error", NULL, NULL, bytes,
                     "no engine (build failed, above)");
        env->failures += 2;
    } else {
        if (!first_run(env, &r, run_plugrt, 0, kref, bytes, eager, "plugrt")) {
            snprintf(note, sizeof note, "K = %lld, tactic %d", (long long)kref,
                     (int)z.eng[1].tactic);
            report_latency(env, eager, "plugrt", &r, run_plugrt, &copy, bytes, note);
        }
        st = prt_context_capture_graph(z.eng[1].ctx[0], env->stream);
        if (st != PRT_OK) {
            snprintf(why, sizeof why, "prt_context_capture_graph: %s: %s",
                     prt_status_name(st), prt_last_error());
            bench_result(graph, "plugrt", "error", NULL, NULL, bytes, why);
            env->failures++;
        } else if (!first_run(env, &r, run_plugrt_graph, 0, kref, bytes, graph,
                              "plugrt")) {
            snprintf(note, sizeof note, "K = %lld, graph replay", (long long)kref);
            report_latency(env, graph, "plugrt", &r, run_plugrt_graph, &copy, bytes,
                           note);
        }
    }

    /* CUB, eager and as a graph of the same calls. */
    for (int v = 0; v < 2; v++) {
        cudaGraph_t g = NULL;
        r.variant = v;
        if (first_run(env, &r, run_cub, 1, kref, bytes, eager, impl_name(v)))
            continue;
        report_latency(env, eager, impl_name(v), &r, run_cub, &copy, bytes, NULL);
        BENCH_CUDA(cudaStreamSynchronize(env->stream));
        /* Relaxed: CUB may query the device while it is being captured. */
        BENCH_CUDA(cudaStreamBeginCapture(env->stream, cudaStreamCaptureModeRelaxed));
        if (run_cub(&r, 0)) {
            cudaStreamEndCapture(env->stream, &g);
            if (g)
                cudaGraphDestroy(g);
            bench_result(graph, impl_name(v), "error", NULL, NULL, bytes,
                         "capture failed");
            env->failures++;
            continue;
        }
        BENCH_CUDA(cudaStreamEndCapture(env->stream, &g));
        BENCH_CUDA(cudaGraphInstantiate(&r.graph, g, 0));
        BENCH_CUDA(cudaGraphDestroy(g));
        if (!first_run(env, &r, run_cub_graph, 1, kref, bytes, graph, impl_name(v)))
            report_latency(env, graph, impl_name(v), &r, run_cub_graph, &copy, bytes,
                           "graph replay");
        BENCH_CUDA(cudaGraphExecDestroy(r.graph));
        r.graph = NULL;
    }
    size_free(&z);
}

int main(void)
{
    bench_env env;
    int rc = bench_init(&env, "bench_nonzero");
    if (rc)
        return rc;
    if (bench_selected("nonzero 128x128 d=0.5 row eager") ||
        bench_selected("nonzero 128x128 d=0.5 row graph"))
        bench_small(&env);
    bench_large(&env, 4096);
    bench_large(&env, 16384);
    return bench_finish(&env);
}
