// CUDA kernels of LSTM, GRU and RNN (launch.h), rnn.c's equations and
// rules; rnn_cuda.c runs X W^T for every step through cuBLAS first. Five
// paths for the steps: where H is at most 32 and the activations are the
// defaults, the register kernel (a warp runs every step of one batch
// entry, R's rows and h in registers); where H is at most 64, R fits one block's shared
// memory and PRT_CUDA_RNN_WARP=1 (warp_wanted), the warp kernel (a warp
// runs every step of one batch entry, with no barrier but its own); where
// R fits, the batch-split
// kernel (a launch of independent blocks, each running every step of a
// few batch entries); else the persistent kernel
// (one cooperative launch for every step, each block R's rows of some
// units in shared memory); where that does not fit the device, per step a
// cuBLAS product H R^T and step_kernel, a thread per (batch entry, hidden
// unit) holding every gate of that unit. A length outside [0, T] is
// clamped to it (the CPU fails the run).
#include <sched.h>
#include <stdlib.h>

#include <atomic>

#include <cooperative_groups.h>

#include "ops/cuda/launch.cuh"

namespace opk
{
namespace
{

__device__ float act(int32_t kind, float a, float b, float x)
{
    switch (kind) {
    case 0: // Sigmoid
        return 1.0f / (1.0f + expf(-x));
    case 1: // Tanh
        return tanhf(x);
    case 2: // Relu
        return x < 0.0f ? 0.0f : x;
    case 3: // Affine
        return a * x + b;
    case 4: // LeakyRelu
        return x < 0.0f ? a * x : x;
    case 5: // ThresholdedRelu
        return x > a ? x : 0.0f;
    case 6: // ScaledTanh
        return a * tanhf(b * x);
    case 7: { // HardSigmoid
        float v = a * x + b;
        return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
    }
    case 8: // Elu
        return x < 0.0f ? a * (expf(x) - 1.0f) : x;
    case 9: // Softsign
        return x / (1.0f + fabsf(x));
    default: // Softplus
        return x > 20.0f ? x : log1pf(expf(x));
    }
}

// Activation k of the direction's list on x, clipped first when `clip`.
__device__ float actk(const opk_rnn_args &a, int32_t k, float x, int clip)
{
    const int32_t i = a.dir * a.per + k;
    if (clip && a.has_clip)
        x = x < -a.clip ? -a.clip : x > a.clip ? a.clip : x;
    return act(a.act[i], a.alpha[i], a.beta[i], x);
}

__device__ int64_t len_of(const opk_rnn_args &a, int64_t b)
{
    if (!a.lens)
        return a.T;
    int64_t l = a.lens[b];
    return l < 0 ? 0 : l > a.T ? a.T : l;
}

// Offset of direction dir's state of entry b in [D, B, H] or [B, D, H].
__device__ int64_t state_at(const opk_rnn_args &a, int64_t b)
{
    return (a.layout ? b * a.D + a.dir : a.dir * a.B + b) * a.H;
}

__device__ float bias_w(const opk_rnn_args &a, int64_t k)
{
    return a.bias ? a.bias[a.dir * 2 * a.G * a.H + k] : 0.0f;
}

__device__ float bias_r(const opk_rnn_args &a, int64_t k)
{
    return a.bias ? a.bias[a.dir * 2 * a.G * a.H + a.G * a.H + k] : 0.0f;
}

__global__ void init_kernel(opk_rnn_args a)
{
    OPK_FOR(i, a.B * a.H)
    {
        const int64_t b = i / a.H, j = i % a.H, at = state_at(a, b) + j;
        a.h[i] = a.h0 ? a.h0[at] : 0.0f;
        a.c[i] = a.c0 ? a.c0[at] : 0.0f;
    }
}

__global__ void final_kernel(opk_rnn_args a)
{
    OPK_FOR(i, a.B * a.H)
    {
        const int64_t b = i / a.H, j = i % a.H, at = state_at(a, b) + j;
        const int empty = len_of(a, b) == 0;
        if (a.yh)
            a.yh[at] = empty ? 0.0f : a.h[i];
        if (a.yc)
            a.yc[at] = empty ? 0.0f : a.c[i];
    }
}

// Y's offset of step t of entry b (layout 0: [T, D, B, H]; 1: [B, T, D, H]).
__device__ int64_t y_at(const opk_rnn_args &a, int64_t b, int64_t t)
{
    return (a.layout ? (b * a.T + t) * a.D + a.dir : (t * a.D + a.dir) * a.B + b) * a.H;
}

// X W^T's row of step t of entry b.
__device__ const float *xw_at(const opk_rnn_args &a, int64_t b, int64_t t)
{
    return a.xw + (a.layout ? b * a.T + t : t * a.B + b) * a.G * a.H;
}

// Unit j's gates in X W^T's row of a step: x.v[k] is column k H + j.
struct xgates {
    float v[4];
};

__device__ xgates load_x(const opk_rnn_args &a, const float *xr, int64_t j)
{
    xgates x = {{0.0f, 0.0f, 0.0f, 0.0f}};
#pragma unroll
    for (int k = 0; k < 4; k++)
        if (k < a.G)
            x.v[k] = xr[k * a.H + j];
    return x;
}

// Unit j's step, rnn.c's equations, shared by both kernels: g[k * gs] is
// gate k's product (row k H + j of H R^T), x its gates of X W^T, hp the
// previous h and *c LSTM's cell. GRU without linear_before_reset runs
// twice: phase 0 leaves z, activated, in g[0] and r hp in *rh and returns
// 0; phase 1 finds the product of r H in g[2 gs]. 1: *hn is the new h.
__device__ __forceinline__ int cell(const opk_rnn_args &a, int64_t j, xgates x, float *g,
                                    int64_t gs, float hp, float *c, int32_t phase,
                                    float *rh, float *hn)
{
    const int64_t H = a.H;
    if (a.kind == 0) {
        *hn = actk(a, 0, g[0] + x.v[0] + bias_w(a, j) + bias_r(a, j), 1);
    } else if (a.kind == 1) {
        float z, hh;
        if (phase == 0) {
            z = actk(a, 0, g[0] + x.v[0] + bias_w(a, j) + bias_r(a, j), 1);
            const float r =
                actk(a, 0, g[gs] + x.v[1] + bias_w(a, H + j) + bias_r(a, H + j), 1);
            if (!a.lbr) {
                g[0] = z;
                *rh = r * hp;
                return 0;
            }
            hh = x.v[2] + bias_w(a, 2 * H + j) + r * (g[2 * gs] + bias_r(a, 2 * H + j));
        } else {
            z = g[0];
            hh = g[2 * gs] + x.v[2] + bias_w(a, 2 * H + j) + bias_r(a, 2 * H + j);
        }
        hh = actk(a, 1, hh, 1);
        *hn = (1.0f - z) * hh + z * hp;
    } else {
        const float cp = *c;
        const float *p = a.p ? a.p + a.dir * 3 * H : nullptr;
        float pre[4];
#pragma unroll
        for (int k = 0; k < 4; k++)
            pre[k] = g[k * gs] + x.v[k] + bias_w(a, k * H + j) + bias_r(a, k * H + j);
        const float gi = actk(a, 0, pre[0] + (p ? p[j] * cp : 0.0f), 1);
        const float gf = a.input_forget
                             ? 1.0f - gi
                             : actk(a, 0, pre[2] + (p ? p[2 * H + j] * cp : 0.0f), 1);
        const float gc = actk(a, 1, pre[3], 1);
        const float cn = gf * cp + gi * gc;
        const float go = actk(a, 0, pre[1] + (p ? p[H + j] * cn : 0.0f), 1);
        *c = cn;
        *hn = go * actk(a, 2, cn, 0);
    }
    return 1;
}

// Step s of one direction. hr [B, G H] holds H R^T (GRU without
// linear_before_reset: its z and r columns; phase 1 then finds the
// product of r H in the h columns and z, activated, where phase 0 left it).
__global__ void step_kernel(opk_rnn_args a, int64_t s, int32_t phase)
{
    OPK_FOR(i, a.B * a.H)
    {
        const int64_t b = i / a.H, j = i % a.H;
        const int64_t len = len_of(a, b);
        float hn;
        if (s >= len)
            continue;
        const int64_t t = a.rev ? len - 1 - s : s;
        if (!cell(a, j, load_x(a, xw_at(a, b, t), j), a.hr + b * a.G * a.H + j, a.H,
                  a.h[i], a.c + i, phase, a.tmp + i, &hn))
            continue;
        a.h[i] = hn;
        if (a.y)
            a.y[y_at(a, b, t) + j] = hn;
    }
}

// ---- the persistent kernel ------------------------------------------------
//
// One launch runs every step of one or both directions. Block k of a
// direction owns hidden units [k U, k U + U): its G U rows of R (row q =
// gate q / U of unit q % U) stay in shared memory for the whole sequence,
// beside their products gs [G U, B] and a stage of h. Each step copies the
// whole previous h of every entry (written by the other blocks, so read
// through L2: __ldcg) into the stage, Bc entries at a time, computes its
// units' gates, writes their new h into the other of two buffers (h and
// hr, which this path leaves free) and Y, then all blocks of the
// direction synchronize through the grid (a cooperative launch). GRU
// without linear_before_reset synchronizes once more between z, r and the
// product of r H. Where R fits one block, the batch-split kernel below
// runs instead.

// How a launch splits the layer (persist_plan).
struct persist_cfg {
    int32_t U;    // hidden units per block
    int32_t nblk; // blocks per direction
    int32_t S;    // lanes per product (a power of 2 up to 32)
    int32_t Bc;   // batch entries of h staged at a time
    int32_t hst;  // their stride in the stage: H rounded up to 32, plus S,
                  // so that the entries a warp reads fall in different banks
};

__device__ void persist_sync()
{
    cooperative_groups::this_grid().sync();
}

// gs[q B + b] = row q of the slice times src[b], for the rows [q0, q1): S
// lanes per product splitting H, summed across them; a warp's groups take
// consecutive entries of one row, so that they read R's row as one.
__device__ void persist_dots(const opk_rnn_args &a, const persist_cfg &c, const float *rs,
                             float *gs, float *hs, int64_t j0, int64_t q0, int64_t q1,
                             const float *src)
{
    const int S = c.S, per = 32 / S, lane = threadIdx.x % 32, gl = lane % S;
    const int64_t H = a.H, B = a.B, nw = blockDim.x / 32;
    for (int64_t b0 = 0; b0 < B; b0 += c.Bc) {
        const int64_t nb = B - b0 < c.Bc ? B - b0 : c.Bc, n = (q1 - q0) * nb;
        __syncthreads(); // the stage's last readers are done
        for (int64_t i = threadIdx.x; i < nb * H; i += blockDim.x)
            hs[i / H * c.hst + i % H] = __ldcg(src + b0 * H + i);
        __syncthreads();
        // warp-uniform trips: every lane takes part in the shuffles
        for (int64_t it0 = threadIdx.x / 32 * per; it0 < n; it0 += nw * per) {
            const int64_t it = it0 + lane / S, q = q0 + it / nb, b = it % nb;
            const int ok = it < n && j0 + q % c.U < H;
            float acc = 0.0f;
            if (ok) {
                const float *r = rs + q * H, *h = hs + b * c.hst;
                for (int64_t k = gl; k < H; k += S)
                    acc += r[k] * h[k];
            }
            for (int o = S / 2; o > 0; o /= 2)
                acc += __shfl_xor_sync(0xffffffffu, acc, o);
            if (ok && gl == 0)
                gs[q * B + b0 + b] = acc;
        }
    }
}

// The thread's first (unit, entry) of the block's: its gates of X W^T at
// step s, loaded before the products so that their latency hides behind.
__device__ xgates persist_prefetch(const opk_rnn_args &a, int32_t U, int64_t j0,
                                   int64_t s)
{
    xgates x = {{0.0f, 0.0f, 0.0f, 0.0f}};
    if (threadIdx.x < U * a.B) {
        const int64_t b = threadIdx.x / U, j = j0 + threadIdx.x % U, len = len_of(a, b);
        if (j < a.H && s < len)
            x = load_x(a, xw_at(a, b, a.rev ? len - 1 - s : s), j);
    }
    return x;
}

// The block's units' step s from gs (phase as cell's); hp the previous h,
// hn the buffer of the new one, x0 the first (unit, entry)'s prefetch. An
// entry past its length keeps its state.
__device__ void persist_cells(const opk_rnn_args &a, int32_t U, float *gs, int64_t j0,
                              int64_t s, int32_t phase, const float *hp, float *hn,
                              xgates x0)
{
    const int64_t H = a.H, B = a.B;
    for (int64_t i = threadIdx.x; i < U * B; i += blockDim.x) {
        const int64_t u = i % U, b = i / U, j = j0 + u;
        if (j >= H)
            continue;
        const int64_t len = len_of(a, b);
        const float h = __ldcg(hp + b * H + j);
        float v;
        if (s >= len) {
            hn[b * H + j] = h;
            continue;
        }
        const int64_t t = a.rev ? len - 1 - s : s;
        const xgates x = i == threadIdx.x ? x0 : load_x(a, xw_at(a, b, t), j);
        if (!cell(a, j, x, gs + u * B + b, U * B, h, a.c + b * H + j, phase,
                  a.tmp + b * H + j, &v))
            continue;
        hn[b * H + j] = v;
        if (a.y)
            a.y[y_at(a, b, t) + j] = v;
    }
}

// a0's direction in blocks [0, nblk), a1's in [nblk, 2 nblk) when launched
// with both.
__global__ void __launch_bounds__(kThreads)
    persist_kernel(opk_rnn_args a0, opk_rnn_args a1, persist_cfg c)
{
    extern __shared__ float sm[];
    const opk_rnn_args &a = (int32_t)blockIdx.x < c.nblk ? a0 : a1;
    const int32_t U = c.U;
    const int64_t H = a.H, B = a.B, GU = (int64_t)a.G * U;
    const int64_t j0 = (int64_t)(blockIdx.x % c.nblk) * U;
    const int gru2 = a.kind == 1 && !a.lbr;
    float *rs = sm, *gs = rs + GU * H, *hs = gs + GU * B;
    for (int64_t i = threadIdx.x; i < GU * H; i += blockDim.x) {
        const int64_t q = i / H, k = i % H, j = j0 + q % U;
        rs[i] = j < H ? a.r[((q / U) * H + j) * H + k] : 0.0f;
    }
    for (int64_t i = threadIdx.x; i < U * B; i += blockDim.x) {
        const int64_t b = i / U, j = j0 + i % U, at = state_at(a, b) + j;
        if (j >= H)
            continue;
        a.h[b * H + j] = a.h0 ? a.h0[at] : 0.0f;
        a.c[b * H + j] = a.c0 ? a.c0[at] : 0.0f;
    }
    persist_sync();
    for (int64_t s = 0; s < a.T; s++) {
        const float *hp = s % 2 ? a.hr : a.h;
        float *hn = s % 2 ? a.h : a.hr;
        const xgates x0 = persist_prefetch(a, U, j0, s);
        persist_dots(a, c, rs, gs, hs, j0, 0, gru2 ? 2 * U : GU, hp);
        __syncthreads();
        if (gru2) {
            persist_cells(a, U, gs, j0, s, 0, hp, hn, x0);
            persist_sync(); // r H of every unit
            persist_dots(a, c, rs, gs, hs, j0, 2 * U, 3 * U, a.tmp);
            __syncthreads();
        }
        persist_cells(a, U, gs, j0, s, gru2, hp, hn, x0);
        persist_sync();
    }
    const float *hf = a.T % 2 ? a.hr : a.h;
    for (int64_t i = threadIdx.x; i < U * B; i += blockDim.x) {
        const int64_t b = i / U, j = j0 + i % U, at = state_at(a, b) + j;
        if (j >= H)
            continue;
        const int empty = len_of(a, b) == 0;
        if (a.yh)
            a.yh[at] = empty ? 0.0f : __ldcg(hf + b * H + j);
        if (a.yc)
            a.yc[at] = empty ? 0.0f : a.c[b * H + j];
    }
}

// ---- the batch-split kernel ------------------------------------------------
//
// Where a direction's whole R fits in one block's shared memory, the batch
// entries are independent of each other: block (direction, slice) runs
// every step of its Bb entries alone, with R, both buffers of h, the cell
// (GRU without linear_before_reset: r h) and the products in shared memory.
// No block waits for another, and nothing a step leaves for the next goes
// through global memory; X W^T's gates of the next step are loaded while
// the current one computes. Preferred to the kernel above wherever it fits
// and the warp kernel below does not (H past 64).
struct local_cfg {
    int32_t Bb;  // batch entries per block
    int32_t nsl; // blocks (slices of the batch) per direction
    int32_t S;   // lanes per product, as persist_cfg's
    int32_t hst; // the stride of an entry's h, as persist_cfg's
    int32_t rst; // the stride of R's rows: S more than a multiple of 32, so
                 // that the rows a warp's groups read fall in different banks
};

// gs[q Bb + b] = row q of R times src[b] (b < nb, stride c.hst), for the
// rows [q0, q1); persist_dots' lanes and sums without its stage.
__device__ void local_dots(const opk_rnn_args &a, const local_cfg &c, const float *rs,
                           float *gs, int64_t nb, int64_t q0, int64_t q1,
                           const float *src)
{
    const int S = c.S, per = 32 / S, lane = threadIdx.x % 32, gl = lane % S;
    const int64_t H = a.H, n = (q1 - q0) * nb, nw = blockDim.x / 32;
    for (int64_t it0 = threadIdx.x / 32 * per; it0 < n; it0 += nw * per) {
        const int64_t it = it0 + lane / S, q = q0 + it / nb, b = it % nb;
        float acc = 0.0f;
        if (it < n) {
            const float *r = rs + q * c.rst, *h = src + b * c.hst;
            for (int64_t k = gl; k < H; k += S)
                acc += r[k] * h[k];
        }
        for (int o = S / 2; o > 0; o /= 2)
            acc += __shfl_xor_sync(0xffffffffu, acc, o);
        if (it < n && gl == 0)
            gs[q * c.Bb + b] = acc;
    }
}

// The gates of X W^T at step s of the thread's first (unit, entry).
__device__ xgates local_prefetch(const opk_rnn_args &a, int64_t b0, int64_t nb, int64_t s)
{
    xgates x = {{0.0f, 0.0f, 0.0f, 0.0f}};
    if (threadIdx.x < nb * a.H && s < a.T) {
        const int64_t b = b0 + threadIdx.x / a.H, j = threadIdx.x % a.H,
                      len = len_of(a, b);
        if (s < len)
            x = load_x(a, xw_at(a, b, a.rev ? len - 1 - s : s), j);
    }
    return x;
}

// Step s of the block's entries (phase as cell's): gs the products, hp and
// hn the previous and next h, cs the cells, ts r h.
__device__ void local_cells(const opk_rnn_args &a, const local_cfg &c, int64_t b0,
                            int64_t nb, int64_t s, int32_t phase, float *gs,
                            const float *hp, float *hn, float *cs, float *ts, xgates x0)
{
    const int64_t H = a.H;
    for (int64_t i = threadIdx.x; i < nb * H; i += blockDim.x) {
        const int64_t b = i / H, j = i % H, len = len_of(a, b0 + b);
        const float h = hp[b * c.hst + j];
        float v;
        if (s >= len) {
            hn[b * c.hst + j] = h;
            continue;
        }
        const int64_t t = a.rev ? len - 1 - s : s;
        const xgates x = i == threadIdx.x ? x0 : load_x(a, xw_at(a, b0 + b, t), j);
        if (!cell(a, j, x, gs + j * c.Bb + b, H * c.Bb, h, cs + b * H + j, phase,
                  ts + b * c.hst + j, &v))
            continue;
        hn[b * c.hst + j] = v;
        if (a.y)
            a.y[y_at(a, b0 + b, t) + j] = v;
    }
}

__global__ void __launch_bounds__(kThreads)
    local_kernel(opk_rnn_args a0, opk_rnn_args a1, local_cfg c)
{
    extern __shared__ float sm[];
    const opk_rnn_args &a = (int32_t)blockIdx.x < c.nsl ? a0 : a1;
    const int64_t H = a.H, GH = (int64_t)a.G * H, Bb = c.Bb;
    const int64_t b0 = (int64_t)(blockIdx.x % c.nsl) * Bb;
    const int64_t nb = a.B - b0 < Bb ? a.B - b0 : Bb;
    const int gru2 = a.kind == 1 && !a.lbr;
    float *rs = sm, *gs = rs + GH * c.rst, *hs = gs + GH * Bb, *cs = hs + 2 * Bb * c.hst,
          *ts = cs + Bb * H;
    for (int64_t i = threadIdx.x; i < GH * H; i += blockDim.x)
        rs[i / H * c.rst + i % H] = a.r[i];
    for (int64_t i = threadIdx.x; i < Bb * c.hst; i += blockDim.x) {
        const int64_t b = i / c.hst, j = i % c.hst, at = state_at(a, b0 + b) + j;
        const int in = b < nb && j < H;
        hs[i] = in && a.h0 ? a.h0[at] : 0.0f;
        hs[Bb * c.hst + i] = 0.0f;
        ts[i] = 0.0f;
        if (j < H)
            cs[b * H + j] = in && a.c0 ? a.c0[at] : 0.0f;
    }
    __syncthreads();
    xgates x0 = local_prefetch(a, b0, nb, 0);
    for (int64_t s = 0; s < a.T; s++) {
        const float *hp = hs + (s % 2) * Bb * c.hst;
        float *hn = hs + ((s + 1) % 2) * Bb * c.hst;
        const xgates x1 = local_prefetch(a, b0, nb, s + 1); // used by the next step
        local_dots(a, c, rs, gs, nb, 0, gru2 ? 2 * H : GH, hp);
        __syncthreads();
        if (gru2) {
            local_cells(a, c, b0, nb, s, 0, gs, hp, hn, cs, ts, x0);
            __syncthreads();
            local_dots(a, c, rs, gs, nb, 2 * H, 3 * H, ts);
            __syncthreads();
        }
        local_cells(a, c, b0, nb, s, gru2, gs, hp, hn, cs, ts, x0);
        __syncthreads();
        x0 = x1;
    }
    const float *hf = hs + (a.T % 2) * Bb * c.hst;
    for (int64_t i = threadIdx.x; i < nb * H; i += blockDim.x) {
        const int64_t b = i / H, j = i % H, at = state_at(a, b0 + b) + j;
        const int empty = len_of(a, b0 + b) == 0;
        if (a.yh)
            a.yh[at] = empty ? 0.0f : hf[b * c.hst + j];
        if (a.yc)
            a.yc[at] = empty ? 0.0f : cs[b * H + j];
    }
}

// ---- the warp kernel --------------------------------------------------------
//
// Where H is at most 32 kWarpUnits (and R fits), a warp runs one batch
// entry alone: lane l owns units l, l + 32, ..., keeps their cells in
// registers and computes every gate product of them from R in shared
// memory (the block's warps share it; its rows strided by an odd count,
// so that the lanes' rows fall in different banks) and h, which each warp
// keeps in shared memory of its own (two buffers, and GRU's r h). A step
// needs no barrier but the warp's own, and runs only to the entry's
// length. Preferred to the batch-split kernel wherever it fits, once it
// has run on a GPU (warp_wanted).
constexpr int kWarpUnits = 2; // units per lane: H at most 64
constexpr int kWarpsPerBlock = 8;

struct warp_cfg {
    int32_t W;    // warps (batch entries) per block
    int32_t nblk; // blocks per direction
    int32_t rst;  // the stride of R's rows: H or H + 1, odd
};

// g[m][k] = row k H + u of R times h, u = lane + 32 m, for the gates
// [k0, k1) (rows of a lane past H read the last one; its sums go unused).
template <int M>
__device__ void warp_dots(const opk_rnn_args &a, const float *rs, int32_t rst, int k0,
                          int k1, const float *h, float (&g)[M][4])
{
    const int H = (int)a.H, lane = threadIdx.x % 32;
    float acc[M][4];
#pragma unroll
    for (int m = 0; m < M; m++)
#pragma unroll
        for (int k = 0; k < 4; k++)
            acc[m][k] = 0.0f;
    for (int i = 0; i < H; i++) {
        const float hv = h[i];
#pragma unroll
        for (int m = 0; m < M; m++) {
            const int u = lane + 32 * m < H ? lane + 32 * m : H - 1;
#pragma unroll
            for (int k = 0; k < 4; k++)
                if (k >= k0 && k < k1)
                    acc[m][k] += rs[(k * H + u) * rst + i] * hv;
        }
    }
#pragma unroll
    for (int m = 0; m < M; m++)
#pragma unroll
        for (int k = 0; k < 4; k++)
            if (k >= k0 && k < k1)
                g[m][k] = acc[m][k];
}

// The lane's units' gates of X W^T at step s of entry b (zero past len).
template <int M>
__device__ void warp_load_x(const opk_rnn_args &a, int64_t b, int64_t len, int64_t s,
                            xgates (&x)[M])
{
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int m = 0; m < M; m++) {
        const int64_t u = lane + 32 * m;
        x[m] = xgates{{0.0f, 0.0f, 0.0f, 0.0f}};
        if (s < len && u < a.H)
            x[m] = load_x(a, xw_at(a, b, a.rev ? len - 1 - s : s), u);
    }
}

template <int M>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    warp_kernel(opk_rnn_args a0, opk_rnn_args a1, warp_cfg c)
{
    extern __shared__ float sm[];
    const opk_rnn_args &a = (int32_t)blockIdx.x < c.nblk ? a0 : a1;
    const int H = (int)a.H, GH = a.G * H, lane = threadIdx.x % 32, w = threadIdx.x / 32;
    const int gru2 = a.kind == 1 && !a.lbr;
    float *rs = sm, *hp = rs + GH * c.rst + w * 3 * H, *hn = hp + H, *ts = hn + H;
    for (int i = threadIdx.x; i < GH * H; i += blockDim.x)
        rs[i / H * c.rst + i % H] = a.r[i];
    const int64_t b = (int64_t)(blockIdx.x % c.nblk) * c.W + w;
    __syncthreads(); // R is in; no block barrier after this
    if (b >= a.B)
        return;
    const int64_t at0 = state_at(a, b), len = len_of(a, b);
    float cs[M];
#pragma unroll
    for (int m = 0; m < M; m++) {
        const int u = lane + 32 * m;
        cs[m] = 0.0f;
        if (u < H) {
            hp[u] = a.h0 ? a.h0[at0 + u] : 0.0f;
            ts[u] = 0.0f;
            cs[m] = a.c0 ? a.c0[at0 + u] : 0.0f;
        }
    }
    xgates xc[M], xn[M];
    warp_load_x<M>(a, b, len, 0, xc);
    for (int64_t s = 0; s < len; s++) {
        const int64_t t = a.rev ? len - 1 - s : s;
        float g[M][4];
        warp_load_x<M>(a, b, len, s + 1, xn); // used by the next step
        __syncwarp();                         // the previous step's h
        warp_dots<M>(a, rs, c.rst, 0, gru2 ? 2 : a.G, hp, g);
        if (gru2) {
#pragma unroll
            for (int m = 0; m < M; m++) {
                const int u = lane + 32 * m;
                float v;
                if (u < H)
                    (void)cell(a, u, xc[m], g[m], 1, hp[u], &cs[m], 0, &ts[u], &v);
            }
            __syncwarp(); // r h of every unit
            warp_dots<M>(a, rs, c.rst, 2, 3, ts, g);
        }
#pragma unroll
        for (int m = 0; m < M; m++) {
            const int u = lane + 32 * m;
            float v;
            if (u < H && cell(a, u, xc[m], g[m], 1, hp[u], &cs[m], gru2, &ts[u], &v)) {
                hn[u] = v;
                if (a.y)
                    a.y[y_at(a, b, t) + u] = v;
            }
        }
        float *f = hp;
        hp = hn;
        hn = f;
#pragma unroll
        for (int m = 0; m < M; m++)
            xc[m] = xn[m];
    }
    __syncwarp();
#pragma unroll
    for (int m = 0; m < M; m++) {
        const int u = lane + 32 * m;
        if (u >= H)
            continue;
        if (a.yh)
            a.yh[at0 + u] = len == 0 ? 0.0f : hp[u];
        if (a.yc)
            a.yc[at0 + u] = len == 0 ? 0.0f : cs[m];
    }
}

// An environment switch read once per process into *cache (-1 unread): 1
// where it is "1", 0 where "0", else dflt. First callers may both read it;
// they agree.
int env_flag(std::atomic<int> &cache, const char *name, int dflt)
{
    int v = cache.load(std::memory_order_relaxed);
    if (v < 0) {
        const char *e = getenv(name);
        v = e && (e[0] == '0' || e[0] == '1') && e[1] == '\0' ? e[0] - '0' : dflt;
        cache.store(v, std::memory_order_relaxed);
    }
    return v;
}
std::atomic<int> reg_env{-1}, warp_env{-1};

// ---- the register kernel ----------------------------------------------------
//
// Where H is at most 32 and the activations are the ONNX defaults (Sigmoid,
// Tanh, Tanh; clip allowed), a warp runs every step of one batch entry of
// one direction with everything in registers: lane u owns unit u, its G
// rows of R (G x 32 floats), its biases and peepholes, its cell and its h.
// A product reads h through shuffles, so a step touches memory only for
// its gates of X W^T (loaded a step ahead) and its row of Y: no shared
// memory, no barrier. The other kernels keep R in shared memory and pay a
// load for every multiply-add of every step, which is what their steps
// cost (2.9 us a step on lstm_seq at H = 32; the warp kernel 7).
constexpr int kRegWarps = 4; // warps per block at most

__device__ __forceinline__ float reg_sigmoid(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

__device__ __forceinline__ float reg_clip(int on, float c, float x)
{
    return on ? (x < -c ? -c : x > c ? c : x) : x;
}

// acc[k] += row k of the lane's R times v (every lane's v; lanes past H
// hold 0, as do their columns of R), for the gates [k0, k1).
template <int G>
__device__ __forceinline__ void reg_dots(const float (&w)[G][32], float v,
                                         float (&acc)[G], int k0, int k1)
{
#pragma unroll
    for (int i = 0; i < 32; i++) {
        const float hi = __shfl_sync(0xffffffffu, v, i);
#pragma unroll
        for (int k = 0; k < G; k++)
            if (k >= k0 && k < k1)
                acc[k] += w[k][i] * hi;
    }
}

// G: 1 RNN, 3 GRU, 4 LSTM. a0's direction in blocks [0, nblk), a1's after.
template <int G>
__global__ void __launch_bounds__(32 * kRegWarps)
    reg_kernel(opk_rnn_args a0, opk_rnn_args a1, int32_t nblk)
{
    const int second = (int32_t)blockIdx.x >= nblk;
    const opk_rnn_args &a = second ? a1 : a0;
    const int lane = threadIdx.x % 32, H = (int)a.H, on = lane < H, u = on ? lane : 0;
    const int64_t b = (int64_t)(blockIdx.x % nblk) * (blockDim.x / 32) + threadIdx.x / 32;
    if (b >= a.B)
        return; // the whole warp
    float w[G][32], bw[G], br[G], pi = 0.0f, po = 0.0f, pf = 0.0f;
#pragma unroll
    for (int k = 0; k < G; k++) {
#pragma unroll
        for (int i = 0; i < 32; i++)
            w[k][i] = on && i < H ? a.r[((int64_t)k * H + u) * H + i] : 0.0f;
        bw[k] = bias_w(a, (int64_t)k * H + u);
        br[k] = bias_r(a, (int64_t)k * H + u);
    }
    if (G == 4 && a.p) {
        const float *p = a.p + (int64_t)a.dir * 3 * H;
        pi = p[u];
        po = p[H + u];
        pf = p[2 * H + u];
    }
    const int64_t at0 = state_at(a, b), len = len_of(a, b), T = a.T, GH = (int64_t)G * H;
    const int64_t D = a.D, B = a.B, dir = a.dir;
    const int rev = a.rev, layout = a.layout, lbr = a.lbr, fi = a.input_forget,
              cl = a.has_clip;
    const float clip = a.clip;
    const float *xw = a.xw;
    float *y = a.y;
    float hv = on && a.h0 ? a.h0[at0 + u] : 0.0f;
    float cv = G == 4 && on && a.c0 ? a.c0[at0 + u] : 0.0f;
    float xc[G], xn[G];
#pragma unroll
    for (int k = 0; k < G; k++)
        xc[k] = xn[k] = 0.0f;
    for (int64_t s = 0; s < len; s++) {
        const int64_t t = rev ? len - 1 - s : s;
        if (s == 0) {
            const float *xr = xw + (layout ? b * T + t : t * B + b) * GH;
#pragma unroll
            for (int k = 0; k < G; k++)
                xc[k] = xr[k * H + u];
        }
        if (s + 1 < len) { // the next step's gates, used by the next step
            const int64_t tn = rev ? len - 2 - s : s + 1;
            const float *xr = xw + (layout ? b * T + tn : tn * B + b) * GH;
#pragma unroll
            for (int k = 0; k < G; k++)
                xn[k] = xr[k * H + u];
        }
        float g[G], hn;
#pragma unroll
        for (int k = 0; k < G; k++)
            g[k] = 0.0f;
        if (G == 4) { // LSTM, cell()'s order
            reg_dots<G>(w, hv, g, 0, 4);
            float pre[4];
#pragma unroll
            for (int k = 0; k < 4; k++)
                pre[k] = g[k] + xc[k] + bw[k] + br[k];
            const float gi = reg_sigmoid(reg_clip(cl, clip, pre[0] + pi * cv));
            const float gf =
                fi ? 1.0f - gi : reg_sigmoid(reg_clip(cl, clip, pre[2] + pf * cv));
            const float gc = tanhf(reg_clip(cl, clip, pre[3]));
            const float cn = gf * cv + gi * gc;
            const float go = reg_sigmoid(reg_clip(cl, clip, pre[1] + po * cn));
            cv = cn;
            hn = go * tanhf(cn);
        } else if (G == 3) { // GRU
            float z, hh;
            reg_dots<G>(w, hv, g, 0, lbr ? 3 : 2); // without lbr: z and r first
            z = reg_sigmoid(reg_clip(cl, clip, g[0] + xc[0] + bw[0] + br[0]));
            const float r = reg_sigmoid(reg_clip(cl, clip, g[1] + xc[1] + bw[1] + br[1]));
            if (lbr) {
                hh = xc[2] + bw[2] + r * (g[2] + br[2]);
            } else {
                float g2[G] = {};
                reg_dots<G>(w, on ? r * hv : 0.0f, g2, 2, 3);
                hh = g2[2] + xc[2] + bw[2] + br[2];
            }
            hh = tanhf(reg_clip(cl, clip, hh));
            hn = (1.0f - z) * hh + z * hv;
        } else { // RNN
            reg_dots<G>(w, hv, g, 0, 1);
            hn = tanhf(reg_clip(cl, clip, g[0] + xc[0] + bw[0] + br[0]));
        }
        hv = on ? hn : 0.0f;
        if (y && on)
            y[(layout ? (b * T + t) * D + dir : (t * D + dir) * B + b) * H + u] = hn;
#pragma unroll
        for (int k = 0; k < G; k++)
            xc[k] = xn[k];
    }
    if (on && a.yh)
        a.yh[at0 + u] = len == 0 ? 0.0f : hv;
    if (G == 4 && on && a.yc)
        a.yc[at0 + u] = len == 0 ? 0.0f : cv;
}

// The register kernel takes the layer: H at most 32, the default
// activations, and not turned off (PRT_CUDA_RNN_REG=0, for comparisons;
// read once).
int reg_fits(const opk_rnn_args &a)
{
    if (!env_flag(reg_env, "PRT_CUDA_RNN_REG", 1) || a.H > 32 || a.H < 1)
        return 0;
    // Sigmoid is 0 and Tanh 1 (act()); per direction RNN f, GRU f g,
    // LSTM f g h.
    static const int32_t want[3][3] = {{1, -1, -1}, {0, 1, -1}, {0, 1, 1}};
    if (a.kind < 0 || a.kind > 2 || a.per != (a.kind == 2 ? 3 : a.kind + 1))
        return 0;
    for (int d = 0; d < a.D; d++)
        for (int k = 0; k < a.per; k++)
            if (a.act[d * a.per + k] != want[a.kind][k])
                return 0;
    return 1;
}

size_t warp_bytes(const opk_rnn_args &a, const warp_cfg &c)
{
    return sizeof(float) * (size_t)((int64_t)a.G * a.H * c.rst + (int64_t)c.W * 3 * a.H);
}

// The warp kernel is right on an H100 (session 39: test_op_coverage under
// racecheck and memcheck) but 2.5x slower than the batch-split kernel on
// lstm_seq (1.89 against 0.74 ms): it runs only where PRT_CUDA_RNN_WARP=1
// asks, and the batch-split kernel stays the default.
int warp_wanted()
{
    return env_flag(warp_env, "PRT_CUDA_RNN_WARP", 0);
}

// The warp kernel's split of nb directions on a device of sms SMs: the
// fewest entries per block that give every SM a block, or false where H
// is past 32 kWarpUnits or R does not fit smem bytes.
bool warp_plan(const opk_rnn_args &a, int32_t nb, int64_t sms, int64_t smem, warp_cfg *c)
{
    int64_t W = (a.B * nb + sms - 1) / sms;
    if (a.H > 32 * kWarpUnits)
        return false;
    W = W < 1 ? 1 : W > kWarpsPerBlock ? kWarpsPerBlock : W;
    c->W = (int32_t)W;
    c->nblk = (int32_t)((a.B + W - 1) / W);
    c->rst = (int32_t)(a.H | 1);
    return (int64_t)warp_bytes(a, *c) <= smem;
}

size_t local_bytes(const opk_rnn_args &a, const local_cfg &c)
{
    const int64_t GH = (int64_t)a.G * a.H;
    return sizeof(float) * (size_t)(GH * c.rst + GH * c.Bb + 3 * (int64_t)c.Bb * c.hst +
                                    (int64_t)c.Bb * a.H);
}

// The batch split of nb directions on a device of sms SMs with smem bytes a
// block may have: the entries per block that give every SM a block (at most
// a block's threads of (unit, entry) pairs), or false where R and one entry
// do not fit.
bool local_plan(const opk_rnn_args &a, int32_t nb, int64_t sms, int64_t smem,
                local_cfg *c)
{
    const int64_t H = a.H, GH = (int64_t)a.G * H;
    int64_t Bb = (a.B * nb + sms - 1) / sms, S = 1;
    if (Bb * H > kThreads)
        Bb = kThreads / H > 1 ? kThreads / H : 1;
    if (Bb > a.B)
        Bb = a.B;
    for (;; Bb--) {
        S = 1;
        while (S < 32 && GH * Bb * S < kThreads)
            S *= 2;
        while (S > 1 && S / 2 >= H)
            S /= 2;
        c->Bb = (int32_t)Bb;
        c->S = (int32_t)S;
        c->hst = (int32_t)((H + 31) / 32 * 32 + S);
        c->rst = (int32_t)(H + ((S - H) % 32 + 32) % 32);
        c->nsl = (int32_t)((a.B + Bb - 1) / Bb);
        if ((int64_t)local_bytes(a, *c) <= smem)
            return true;
        if (Bb == 1)
            return false;
    }
}

// The split with U units per block within smem bytes of shared memory, or
// false where not even one entry of h fits beside R's rows.
bool persist_plan(const opk_rnn_args &a, int64_t U, int64_t smem, persist_cfg *c)
{
    const int64_t H = a.H, B = a.B, GU = a.G * U;
    int64_t S = 1, hst, room;
    while (S < 32 && GU * B * S < kThreads) // enough products for every lane
        S *= 2;
    while (S > 1 && S / 2 >= H)
        S /= 2;
    hst = (H + 31) / 32 * 32 + S;
    room = smem / (int64_t)sizeof(float) - GU * (H + B);
    if (room < hst)
        return false;
    c->U = (int32_t)U;
    c->nblk = (int32_t)((H + U - 1) / U);
    c->S = (int32_t)S;
    c->Bc = (int32_t)(room / hst < B ? room / hst : B);
    c->hst = (int32_t)hst;
    return true;
}

size_t persist_bytes(const opk_rnn_args &a, const persist_cfg &c)
{
    return sizeof(float) *
           (size_t)((int64_t)a.G * c.U * (a.H + a.B) + (int64_t)c.Bc * c.hst);
}

// What each device allows, read once: cooperative launch (CUDA >= 12, which
// also captures it into graphs), its SMs and the shared memory a block may
// opt into, which both kernels are raised to.
constexpr int kMaxDevices = 64;
struct persist_device {
    int ok, coop, sms, smem;
};
persist_device devices[kMaxDevices];
// 0 unread, 1 being read by one thread, 2 read (std::call_once would
// export libstdc++'s symbols from libplugrt).
std::atomic<int> device_state[kMaxDevices];

void persist_read_device(int dev)
{
    persist_device &p = devices[dev];
    int coop = 0, sms = 0, smem = 0;
    p.ok = 0;
    if (cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) !=
            cudaSuccess ||
        cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) !=
            cudaSuccess ||
        cudaFuncSetAttribute(persist_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             smem) != cudaSuccess ||
        cudaFuncSetAttribute(local_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             smem) != cudaSuccess ||
        cudaFuncSetAttribute(warp_kernel<1>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             smem) != cudaSuccess ||
        cudaFuncSetAttribute(warp_kernel<2>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             smem) != cudaSuccess) {
        (void)cudaGetLastError(); // a query's failure: the per-step path
        return;
    }
    p.sms = sms;
    p.smem = smem;
    p.coop = coop && CUDART_VERSION >= 12000;
    p.ok = sms > 0 && smem > 0;
}

// The launch for nb directions on the current device: 1 with *local set
// (3: the register kernel, *wc's W and nblk set; 2: the warp kernel, *wc set; 1: the
// batch split, *lc set; 0: a cooperative launch, *c set), 0 where the per-step path must
// run.
int persist_choose(const opk_rnn_args &a, int32_t nb, persist_cfg *c, local_cfg *lc,
                   warp_cfg *wc, int *local)
{
    int dev = -1;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) {
        (void)cudaGetLastError();
        return 0;
    }
    int unread = 0;
    if (device_state[dev].compare_exchange_strong(unread, 1, std::memory_order_acq_rel)) {
        persist_read_device(dev);
        device_state[dev].store(2, std::memory_order_release);
    }
    while (device_state[dev].load(std::memory_order_acquire) != 2)
        sched_yield(); // another thread is reading it: a few microseconds
    const persist_device &p = devices[dev];
    if (!p.ok || a.H <= 0 || a.B <= 0 || a.H > (1 << 20) || a.B > (1 << 20))
        return 0;
    *local = 3;
    if (reg_fits(a)) { // the fewest warps a block that give every SM a block
        int64_t W = (a.B * nb + p.sms - 1) / p.sms;
        W = W < 1 ? 1 : W > kRegWarps ? kRegWarps : W;
        wc->W = (int32_t)W;
        wc->nblk = (int32_t)((a.B + W - 1) / W);
        wc->rst = 0;
        return 1;
    }
    *local = 2;
    if (warp_wanted() && warp_plan(a, nb, p.sms, p.smem, wc))
        return 1;
    *local = 1;
    if (local_plan(a, nb, p.sms, p.smem, lc))
        return 1;
    if (!p.coop)
        return 0;
    *local = 0;
    // One block per SM to start with: the fewest units per block; more
    // while the grid cannot be co-resident.
    for (int64_t U = (nb * a.H + p.sms - 1) / p.sms; U <= a.H; U++) {
        int per = 0;
        if (!persist_plan(a, U, p.smem, c))
            return 0; // R's slice does not fit: the per-step path
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                &per, persist_kernel, kThreads, persist_bytes(a, *c)) != cudaSuccess) {
            (void)cudaGetLastError();
            return 0;
        }
        if ((int64_t)nb * c->nblk <= (int64_t)per * p.sms)
            return 1;
    }
    return 0;
}

} // namespace
} // namespace opk

using namespace opk;

extern "C" int opk_rnn_init(const opk_rnn_args *a, void *stream)
{
    if (a->B * a->H == 0)
        return 0;
    init_kernel<<<blocks_for(a->B * a->H), kThreads, 0, (cudaStream_t)stream>>>(*a);
    return launched();
}

extern "C" int opk_rnn_step(const opk_rnn_args *a, int64_t s, int32_t phase, void *stream)
{
    if (a->B * a->H == 0)
        return 0;
    step_kernel<<<blocks_for(a->B * a->H), kThreads, 0, (cudaStream_t)stream>>>(*a, s,
                                                                                phase);
    return launched();
}

extern "C" int opk_rnn_final(const opk_rnn_args *a, void *stream)
{
    if (a->B * a->H == 0)
        return 0;
    final_kernel<<<blocks_for(a->B * a->H), kThreads, 0, (cudaStream_t)stream>>>(*a);
    return launched();
}

extern "C" int opk_rnn_persist(const opk_rnn_args *a, int32_t nb, int32_t *ran,
                               void *stream)
{
    opk_rnn_args a0 = a[0], a1 = a[nb > 1 ? 1 : 0];
    persist_cfg c;
    local_cfg lc;
    warp_cfg wc;
    int local = 0;
    *ran = persist_choose(a0, nb, &c, &lc, &wc, &local);
    if (!*ran)
        return 0;
    if (local == 3) {
        const dim3 grid((unsigned)(nb * wc.nblk)), block((unsigned)(32 * wc.W));
        if (a0.G == 4)
            reg_kernel<4><<<grid, block, 0, (cudaStream_t)stream>>>(a0, a1, wc.nblk);
        else if (a0.G == 3)
            reg_kernel<3><<<grid, block, 0, (cudaStream_t)stream>>>(a0, a1, wc.nblk);
        else
            reg_kernel<1><<<grid, block, 0, (cudaStream_t)stream>>>(a0, a1, wc.nblk);
        return launched();
    }
    if (local == 2) {
        const dim3 grid((unsigned)(nb * wc.nblk)), block((unsigned)(32 * wc.W));
        if (a0.H > 32)
            warp_kernel<2>
                <<<grid, block, warp_bytes(a0, wc), (cudaStream_t)stream>>>(a0, a1, wc);
        else
            warp_kernel<1>
                <<<grid, block, warp_bytes(a0, wc), (cudaStream_t)stream>>>(a0, a1, wc);
        return launched();
    }
    if (local) {
        local_kernel<<<(unsigned)(nb * lc.nsl), kThreads, local_bytes(a0, lc),
                       (cudaStream_t)stream>>>(a0, a1, lc);
        return launched();
    }
    void *args[] = {&a0, &a1, &c};
    return (int)cudaLaunchCooperativeKernel(
        (const void *)persist_kernel, dim3((unsigned)(nb * c.nblk)), dim3(kThreads), args,
        persist_bytes(a0, c), (cudaStream_t)stream);
}
