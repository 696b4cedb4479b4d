// CustomHardmax on CUDA (cuda_launch.h): y = one_hot(first argmax of x along
// an axis), NaN greater than every number and the first NaN winning, as on
// the CPU. The input is viewed as [outer, n, inner] with n the axis; every
// element is read once and written once.
//
// SHORT_AXIS: a group of threads owns whole axis lines.
//  - inner == 1 (the axis is innermost; rows_kernel): G lanes per row
//    (G = 1, 4 or 32 by the row's length), 16-byte loads and stores when
//    every row is 16-byte aligned, a shuffle reduction, then the one-hot row.
//  - inner > 1 (a strided axis; cols_kernel): a block takes TX consecutive
//    inner positions (TX = min(32, inner) rounded up to a power of two) and
//    TY = 256 / TX axis positions at a time, so each warp reads contiguous
//    memory; each thread reduces its axis positions in registers, the block
//    reduces across TY in shared memory, then the same threads write the
//    one-hot lines in a second sweep of the same tile.
// LONG_AXIS: when those lines are too few to fill the GPU, each line is cut
// into chunks along the axis: part_kernel (or part_vec_kernel, 16-byte
// accesses of W columns per thread, read ahead by cp.async) writes a
// partial maximum per (line, chunk) to the workspace and zeros over its
// chunk of y as it reads x, so x is read once and y written once, as by a
// copy; combine_kernel reduces the partials per line and writes the line's
// one 1, launched as a programmatic dependent of the part kernel.
//
// Partial results combine with better(), a total order on (value, index):
// any split of the axis gives the CPU's first maximum.
#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda_device.cuh"
#include "cuda_launch.h"

namespace
{

using plg::FULL_MASK;

constexpr int B = 256;
constexpr int UNROLL = 8; // loads in flight per thread in the scans

struct part {
    float v;
    int32_t pad;
    int64_t k; // -1: no element
};
static_assert(sizeof(part) == 16, "cuda_launch.h sizes the workspace");

struct hm_params {
    const void *x;
    void *y;
    int64_t outer, n, inner;    // upper bounds when dims_device is set
    const int64_t *dims_device; // true dims, or NULL
    int32_t rank, axis;
    int32_t tx;  // cols_kernel / split: inner positions per block (power of 2)
    int32_t nch; // split: chunks per line
    part *parts; // split: [nch][outer * inner]
};

__device__ __forceinline__ void shape(const hm_params &p, int64_t &outer, int64_t &n,
                                      int64_t &inner)
{
    if (!p.dims_device) {
        outer = p.outer;
        n = p.n;
        inner = p.inner;
        return;
    }
    outer = 1;
    inner = 1;
    n = 1;
    for (int i = 0; i < p.rank; i++) {
        const int64_t d = p.dims_device[i];
        if (i < p.axis)
            outer *= d;
        else if (i == p.axis)
            n = d;
        else
            inner *= d;
    }
}

// Whether (v, k) beats (bv, bk): NaN above every number; then the larger
// value; then the smaller index. k < 0 is "no element".
__device__ __forceinline__ bool better(float v, int64_t k, float bv, int64_t bk)
{
    if (k < 0)
        return false;
    if (bk < 0)
        return true;
    const bool vn = v != v, bn = bv != bv;
    if (vn != bn)
        return vn;
    if (vn || v == bv)
        return k < bk;
    return v > bv;
}

__device__ __forceinline__ void update(float v, int64_t k, float &bv, int64_t &bk)
{
    if (better(v, k, bv, bk)) {
        bv = v;
        bk = k;
    }
}

template <typename T> __device__ __forceinline__ float load(const T *x, int64_t i)
{
    return plg::elem<T>::to_float(__ldg(x + i));
}

// Best of x[base + k * stride] for k = k0, k0 + step, ... < k1, UNROLL loads
// at a time.
template <typename T>
__device__ void scan_line(const T *x, int64_t base, int64_t stride, int64_t k0,
                          int64_t step, int64_t k1, float &bv, int64_t &bk)
{
    int64_t k = k0;
    for (; k + (UNROLL - 1) * step < k1; k += UNROLL * step) {
        float v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            v[u] = load(x, base + (k + u * step) * stride);
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            update(v[u], k + u * step, bv, bk);
    }
    for (; k < k1; k += step)
        update(load(x, base + k * stride), k, bv, bk);
}

// The block's best per column tx over its TY rows; every thread gets its
// column's result. Ends with a barrier, so the arrays may be reused.
__device__ void reduce_rows(float *sv, int64_t *sk, float &bv, int64_t &bk, int tx,
                            int ty, int TX, int TY)
{
    const int t = threadIdx.x;
    sv[t] = bv;
    sk[t] = bk;
    __syncthreads();
    for (int s = TY / 2; s >= 1; s >>= 1) {
        if (ty < s) {
            const int o = t + s * TX;
            if (better(sv[o], sk[o], sv[t], sk[t])) {
                sv[t] = sv[o];
                sk[t] = sk[o];
            }
        }
        __syncthreads();
    }
    bv = sv[tx];
    bk = sk[tx];
    __syncthreads();
}

// The column tiles of the strided kernels: TX inner positions (a power of
// two) by TY = B / TX axis positions per block; this thread's (tx, ty).
struct geom {
    int64_t outer, n, inner, ctiles;
    int TX, TY, tx, ty;
    __device__ explicit geom(const hm_params &p)
    {
        shape(p, outer, n, inner);
        TX = p.tx;
        TY = B / TX;
        tx = threadIdx.x & (TX - 1);
        ty = threadIdx.x / TX;
        ctiles = plg::ceil_div(inner, TX);
    }
};

// ---- SHORT_AXIS, inner == 1 -------------------------------------------------

template <typename T, int G, bool VEC>
__global__ void __launch_bounds__(B) rows_kernel(hm_params p)
{
    constexpr int W = VEC ? 16 / (int)sizeof(T) : 1; // elements per access
    constexpr int GPW = 32 / G;                      // rows per warp at a time
    union pack {
        uint4 v;
        T e[W > 1 ? W : 1];
    };
    int64_t outer, n, inner;
    shape(p, outer, n, inner);
    if (inner != 1 || n == 0) // with true dims, inner may be 0: nothing to do
        return;
    const T *x = static_cast<const T *>(p.x);
    T *y = static_cast<T *>(p.y);
    const plg::lane_group<G, B> g;
    const int gl = g.gl;
    // Warp-uniform loop: the shuffles below need every lane.
    for (int64_t r0 = g.warp * GPW; r0 < outer; r0 += g.nwarps * GPW) {
        const int64_t row = r0 + g.gw;
        const bool active = row < outer;
        float bv = 0.0f;
        int64_t bk = -1;
        if (active) {
            const T *xr = x + row * n;
            if (VEC) {
                const int64_t units = n / W;
                int64_t u = gl;
                for (; u + G < units; u += 2 * G) {
                    pack a, b;
                    a.v = __ldg(reinterpret_cast<const uint4 *>(xr + u * W));
                    b.v = __ldg(reinterpret_cast<const uint4 *>(xr + (u + G) * W));
#pragma unroll
                    for (int q = 0; q < W; q++)
                        update(plg::elem<T>::to_float(a.e[q]), u * W + q, bv, bk);
#pragma unroll
                    for (int q = 0; q < W; q++)
                        update(plg::elem<T>::to_float(b.e[q]), (u + G) * W + q, bv, bk);
                }
                if (u < units) {
                    pack a;
                    a.v = __ldg(reinterpret_cast<const uint4 *>(xr + u * W));
#pragma unroll
                    for (int q = 0; q < W; q++)
                        update(plg::elem<T>::to_float(a.e[q]), u * W + q, bv, bk);
                }
            } else {
                scan_line(xr, 0, 1, gl, G, n, bv, bk);
            }
        }
#pragma unroll
        for (int o = G / 2; o >= 1; o >>= 1) {
            const float ov = __shfl_xor_sync(FULL_MASK, bv, o);
            const int64_t ok = __shfl_xor_sync(FULL_MASK, bk, o);
            update(ov, ok, bv, bk);
        }
        if (active) {
            T *yr = y + row * n;
            if (VEC) {
                for (int64_t u = gl; u < n / W; u += G) {
                    pack a;
#pragma unroll
                    for (int q = 0; q < W; q++)
                        a.e[q] = u * W + q == bk ? plg::elem<T>::ONE : (T)0;
                    *reinterpret_cast<uint4 *>(yr + u * W) = a.v;
                }
            } else {
                for (int64_t k = gl; k < n; k += G)
                    yr[k] = k == bk ? plg::elem<T>::ONE : (T)0;
            }
        }
    }
}

// ---- SHORT_AXIS, strided ----------------------------------------------------

template <typename T> __global__ void __launch_bounds__(B) cols_kernel(hm_params p)
{
    __shared__ float sv[B];
    __shared__ int64_t sk[B];
    const geom g(p);
    const T *x = static_cast<const T *>(p.x);
    T *y = static_cast<T *>(p.y);
    const int64_t units = g.outer * g.ctiles;
    for (int64_t u = blockIdx.x; u < units; u += gridDim.x) { // block-uniform
        const int64_t o = u / g.ctiles;
        const int64_t j = (u - o * g.ctiles) * g.TX + g.tx;
        const bool valid = j < g.inner;
        const int64_t base = o * g.n * g.inner + j;
        float bv = 0.0f;
        int64_t bk = -1;
        if (valid)
            scan_line(x, base, g.inner, g.ty, g.TY, g.n, bv, bk);
        reduce_rows(sv, sk, bv, bk, g.tx, g.ty, g.TX, g.TY);
        if (valid)
            for (int64_t k = g.ty; k < g.n; k += g.TY)
                y[base + k * g.inner] = k == bk ? plg::elem<T>::ONE : (T)0;
    }
}

// ---- LONG_AXIS ----------------------------------------------------------------
// A task is one chunk of TY-row slabs of one column tile. Tasks are numbered
// chunk-major (task = ci * units + u), so the blocks running at once read
// neighbouring column tiles of the same rows. Partial maxima go to
// parts[ci * lines + line], so the combine reads them coalesced.

// The chunk of task `task`: its line (o, j) and axis range [k0, k1).
struct chunk {
    int64_t o, j, k0, k1, ci;
    bool valid;
};

__device__ __forceinline__ chunk chunk_of(int64_t task, int nch, int64_t units,
                                          int64_t ctiles, int64_t width, int64_t n,
                                          int TX, int tx)
{
    chunk c;
    c.ci = task / units;
    const int64_t u = task - c.ci * units, len = plg::ceil_div(n, nch);
    c.o = u / ctiles;
    c.j = (u - c.o * ctiles) * TX + tx; // in units of `width` columns
    c.valid = c.j < width;
    c.k0 = c.ci * len;
    c.k1 = c.k0 + len < n ? c.k0 + len : n;
    return c;
}

__device__ __forceinline__ void put_part(part *parts, int64_t at, float v, int64_t k)
{
    part q;
    q.v = v;
    q.pad = 0;
    q.k = k;
    parts[at] = q;
}

// One column per thread (any inner, true dims from dims_device): the
// chunk's partial maximum per line, and zeros in y over the chunk (the
// combine writes the ones).
template <typename T> __global__ void __launch_bounds__(B) part_kernel(hm_params p)
{
    __shared__ float sv[B];
    __shared__ int64_t sk[B];
    const geom g(p);
    const T *x = static_cast<const T *>(p.x);
    T *y = static_cast<T *>(p.y);
    const int64_t units = g.outer * g.ctiles, lines = g.outer * g.inner;
    const int64_t tasks = units * p.nch;
    for (int64_t task = blockIdx.x; task < tasks; task += gridDim.x) { // block-uniform
        const chunk c = chunk_of(task, p.nch, units, g.ctiles, g.inner, g.n, g.TX, g.tx);
        const int64_t base = c.o * g.n * g.inner + c.j;
        float bv = 0.0f;
        int64_t bk = -1;
        if (c.valid) {
            scan_line(x, base, g.inner, c.k0 + g.ty, g.TY, c.k1, bv, bk);
            for (int64_t k = c.k0 + g.ty; k < c.k1; k += g.TY)
                y[base + k * g.inner] = (T)0;
        }
        reduce_rows(sv, sk, bv, bk, g.tx, g.ty, g.TX, g.TY);
        if (g.ty == 0 && c.valid)
            put_part(p.parts, c.ci * lines + c.o * g.inner + c.j, bv, bk);
    }
}

// The same with 16-byte accesses, W = 16 / sizeof(T) columns per thread
// (inner a multiple of W, both tensors 16-byte aligned, known dims, the
// axis below 2^31): p.tx threads across a tile of p.tx * W columns. The
// reads go through shared memory by cp.async, VEC_STAGES stages of
// VEC_ROWS rows a thread in flight, without registers to hold them: each
// thread copies its own 16-byte pieces and reads back only those, so the
// pipeline needs no barrier. A thread visits its rows in increasing order,
// so update_first (the first maximum wins) suffices until the block
// combines its rows in one round through shared memory (reusing the
// stages' room).
constexpr int VEC_ROWS = 4, VEC_STAGES = 3;
constexpr int VEC_SMEM = VEC_STAGES * VEC_ROWS * B * 16; // 48 KiB: no opt-in

__device__ __forceinline__ void cp_async16(void *smem, const void *g)
{
    const unsigned a = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(a), "l"(g)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N> __device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// (v, k) after (bv, bk) in the same thread's increasing k: NaN above
// every number, the first NaN or maximum kept.
__device__ __forceinline__ void update_first(float v, int32_t k, float &bv, int32_t &bk)
{
    const bool take = v > bv || (v != v && bv == bv);
    bv = take ? v : bv;
    bk = take ? k : bk;
}

template <typename T> __global__ void __launch_bounds__(B) part_vec_kernel(hm_params p)
{
    constexpr int W = 16 / (int)sizeof(T);
    constexpr int U = VEC_ROWS, S = VEC_STAGES;
    union pack {
        uint4 v;
        T e[W];
    };
    static_assert(2 * B * W * 4 <= VEC_SMEM, "the block's combine fits the stages' room");
    __shared__ __align__(16) unsigned char smem[VEC_SMEM];
    uint4 *buf = reinterpret_cast<uint4 *>(smem); // [S][U][B]
    float *sv = reinterpret_cast<float *>(smem);  // [TY][tx * W + q], after the reads
    int32_t *sk = reinterpret_cast<int32_t *>(smem) + B * W;
    const int64_t outer = p.outer, n = p.n, inner = p.inner, iv = inner / W;
    const int TX = p.tx, TY = B / TX, tx = threadIdx.x & (TX - 1), ty = threadIdx.x / TX;
    const int64_t ctiles = plg::ceil_div(iv, TX), units = outer * ctiles;
    const int64_t lines = outer * inner, tasks = units * p.nch;
    const T *x = static_cast<const T *>(p.x);
    T *y = static_cast<T *>(p.y);
    const int cols = TX * W; // the tile's columns
    for (int64_t task = blockIdx.x; task < tasks; task += gridDim.x) { // block-uniform
        const chunk c = chunk_of(task, p.nch, units, ctiles, iv, n, TX, tx);
        const int64_t base = c.o * n * inner + c.j * W;
        const int32_t k0 = (int32_t)c.k0 + ty, k1 = (int32_t)c.k1;
        // This thread's rows: k0 + r * TY for r < nr.
        const int nr = c.valid && k0 < k1 ? (k1 - k0 + TY - 1) / TY : 0;
        float bv[W];
        int32_t bk[W];
#pragma unroll
        for (int q = 0; q < W; q++) {
            bv[q] = -__int_as_float(0x7f800000); // -inf: the first row is taken
            bk[q] = nr ? k0 : -1;
        }
        const uint4 zero = make_uint4(0, 0, 0, 0);
        auto issue = [&](int st) {
            uint4 *b = buf + (st % S) * U * B;
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int r = st * U + u;
                if (r < nr)
                    cp_async16(b + u * B + threadIdx.x,
                               x + base + (int64_t)(k0 + r * TY) * inner);
            }
            cp_async_commit(); // empty groups past the end keep the count
        };
        const int nst = plg::ceil_div(nr, U);
#pragma unroll
        for (int st = 0; st < S - 1; st++)
            issue(st);
        for (int st = 0; st < nst; st++) {
            issue(st + S - 1);
            cp_async_wait<S - 1>(); // stage st has landed
            const uint4 *b = buf + (st % S) * U * B;
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int r = st * U + u;
                if (r < nr) {
                    const int32_t k = k0 + r * TY;
                    pack a;
                    a.v = b[u * B + threadIdx.x];
                    __stcs(reinterpret_cast<uint4 *>(y + base + (int64_t)k * inner),
                           zero);
#pragma unroll
                    for (int q = 0; q < W; q++)
                        update_first(plg::elem<T>::to_float(a.e[q]), k, bv[q], bk[q]);
                }
            }
        }
        cp_async_wait<0>();
        __syncthreads(); // every thread is done with the stages: reuse them
#pragma unroll
        for (int q = 0; q < W; q++) {
            sv[ty * cols + tx * W + q] = bv[q];
            sk[ty * cols + tx * W + q] = bk[q];
        }
        __syncthreads();
        const int64_t j0 = (c.j - tx) * W; // the tile's first column
        for (int col = threadIdx.x; col < cols; col += B) {
            float v = sv[col];
            int64_t k = sk[col];
            for (int t = 1; t < TY; t++)
                update(sv[t * cols + col], sk[t * cols + col], v, k);
            if (j0 + col < inner)
                put_part(p.parts, c.ci * lines + c.o * inner + j0 + col, v, k);
        }
        __syncthreads(); // before the next task's copies land
    }
}

// Per line, one warp: the best of its chunks' partial maxima (lanes over
// the chunks, then a shuffle reduction), and the line's one in y (the part
// kernels wrote the zeros; the launch order puts this after).
template <typename T> __global__ void __launch_bounds__(B) combine_kernel(hm_params p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // Launched as a programmatic dependent of the part kernel (launch_t):
    // wait here until it has finished and its writes are visible.
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    int64_t outer, n, inner;
    shape(p, outer, n, inner);
    T *y = static_cast<T *>(p.y);
    const int lane = threadIdx.x & 31;
    const int64_t lines = outer * inner;
    const int64_t nwarps = (int64_t)gridDim.x * (B / 32);
    for (int64_t l = ((int64_t)blockIdx.x * B + threadIdx.x) >> 5; l < lines;
         l += nwarps) { // warp-uniform
        float bv = 0.0f;
        int64_t bk = -1;
        for (int c = lane; c < p.nch; c += 32) {
            const part q = p.parts[(int64_t)c * lines + l];
            update(q.v, q.k, bv, bk);
        }
#pragma unroll
        for (int o = 16; o >= 1; o >>= 1) {
            const float ov = __shfl_xor_sync(FULL_MASK, bv, o);
            const int64_t ok = __shfl_xor_sync(FULL_MASK, bk, o);
            update(ov, ok, bv, bk);
        }
        const int64_t o = l / inner, j = l - o * inner;
        if (lane == 0 && bk >= 0)
            y[(o * n + bk) * inner + j] = plg::elem<T>::ONE;
    }
}

// ---- launch ------------------------------------------------------------------

template <typename T, int G, bool VEC>
cudaError_t launch_rows(const hm_params &p, int sms, cudaStream_t s)
{
    const int64_t rows_per_block = (B / 32) * (32 / G);
    rows_kernel<T, G, VEC>
        <<<plg::grid_for(plg::ceil_div(p.outer, rows_per_block), sms), B, 0, s>>>(p);
    return cudaGetLastError();
}

template <typename T, bool VEC>
cudaError_t launch_rows_g(const hm_params &p, int sms, cudaStream_t s)
{
    // Lanes per row: about two accesses per lane at least.
    const int64_t units = VEC ? p.n / (16 / (int64_t)sizeof(T)) : p.n;
    if (units <= 2)
        return launch_rows<T, 1, VEC>(p, sms, s);
    if (units <= 16)
        return launch_rows<T, 4, VEC>(p, sms, s);
    return launch_rows<T, 32, VEC>(p, sms, s);
}

template <typename T>
cudaError_t launch_t(const plg_hm_launch *a, hm_params &p, cudaStream_t s)
{
    const int sms = plg::sm_count();
    const int64_t target = (int64_t)sms * 8; // blocks of 256 at full occupancy
    const bool rows = p.inner == 1;
    const bool vec = rows && !p.dims_device && (p.n * (int64_t)sizeof(T)) % 16 == 0 &&
                     plg::aligned16(p.x) && plg::aligned16(p.y);
    int tx = 1;
    while (tx < 32 && tx < p.inner)
        tx <<= 1;
    p.tx = tx;
    const int64_t units = p.outer * plg::ceil_div(p.inner, tx);
    // Blocks SHORT_AXIS has work for.
    const int64_t short_blocks = rows ? plg::ceil_div(p.outer * 32, B) : units;
    // LONG_AXIS: 16-byte column vectors when a row of the tile allows them.
    constexpr int64_t W = 16 / (int64_t)sizeof(T);
    const bool split_vec = !rows && !p.dims_device && p.inner % W == 0 &&
                           p.n <= INT32_MAX && plg::aligned16(p.x) && plg::aligned16(p.y);
    int split_tx = tx;
    if (split_vec) {
        split_tx = 1;
        while (split_tx < 32 && split_tx < p.inner / W)
            split_tx <<= 1;
    }
    const int64_t split_units =
        split_vec ? p.outer * plg::ceil_div(p.inner / W, split_tx) : units;
    // The vector split's blocks hold 48 KiB of stages: four an SM.
    int64_t want = plg::ceil_div(split_vec ? target / 2 : target, split_units);
    if (a->tactic == PLG_HM_LONG_AXIS && want < 2)
        want = 2;
    const int64_t mc = plg_hm_max_chunks(p.n);
    const int64_t nch = want < mc ? want : mc;
    // plg_hm_workspace gave at least this much (the need grows with dims).
    const bool split_ok = a->workspace && nch >= 2 &&
                          plg_hm_split_bytes(p.outer * p.inner, nch) <= PLG_HM_SPLIT_CAP;
    const bool split = a->tactic == PLG_HM_LONG_AXIS ? split_ok
                       : a->tactic == PLG_HM_SHORT_AXIS
                           ? false
                           : split_ok && short_blocks < target / 2;
    if (split) {
        p.nch = (int32_t)nch;
        p.parts = static_cast<part *>(a->workspace);
        p.tx = split_tx;
        const unsigned grid = plg::grid_for(split_units * nch, sms);
        if (split_vec)
            part_vec_kernel<T><<<grid, B, 0, s>>>(p);
        else
            part_kernel<T><<<grid, B, 0, s>>>(p);
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            return e;
        // The combine as a programmatic dependent launch: it is set up while
        // the part kernel drains (measured 2.5 us of 46 at (4096, 4096) axis
        // 0) and waits in griddepcontrol.wait for its results.
        cudaLaunchAttribute at[1];
        at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        at[0].val.programmaticStreamSerializationAllowed = 1;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(plg::grid_for(plg::ceil_div(p.outer * p.inner * 32, B), sms));
        cfg.blockDim = dim3(B);
        cfg.stream = s;
        cfg.attrs = at;
        cfg.numAttrs = 1;
        return cudaLaunchKernelEx(&cfg, combine_kernel<T>, p);
    }
    if (rows)
        return vec ? launch_rows_g<T, true>(p, sms, s)
                   : launch_rows_g<T, false>(p, sms, s);
    cols_kernel<T><<<plg::grid_for(units, sms), B, 0, s>>>(p);
    return cudaGetLastError();
}

} // namespace

extern "C" int plg_hm_cuda(const plg_hm_launch *a, void *stream)
{
    hm_params p = {};
    p.x = a->io.x;
    p.y = a->io.y;
    p.dims_device = a->io.dims_device;
    p.rank = a->io.rank;
    p.axis = a->axis;
    plg_hm_collapse(a->io.rank, a->io.dims, a->axis, &p.outer, &p.n, &p.inner);
    if (p.outer * p.n * p.inner == 0)
        return (int)cudaSuccess;
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    return (int)(a->io.dtype == PRT_FLOAT32 ? launch_t<uint32_t>(a, p, s)
                                            : launch_t<uint16_t>(a, p, s));
}
