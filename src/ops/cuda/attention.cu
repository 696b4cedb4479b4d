// Attention (ops/attention.c's semantics) in one kernel, flash-attention
// style: a block of 4 warps takes 4 R queries of one (batch, head); keys and
// values pass through shared memory in tiles of 32, and each warp keeps its
// R queries' running maximum, sum and output in float32 registers (the
// online softmax), so the S x S scores are never stored. A lane scores one
// key of the tile against the warp's R queries at once (R independent dot
// products over D from shared memory, each key element read once), then
// owns C = ceil(Dv / 32) of the output's columns. R shrinks to 2 or 1 when
// (batch, head, query tiles) would leave the GPU's multiprocessors idle;
// C is fixed per launch, so no lane loops over columns past Dv.
#include <math.h>

#include "ops/cuda/launch.cuh"

using namespace opk;

namespace
{

constexpr int kWarps = 4;
constexpr int kKeys = 32; // per tile: one per lane
constexpr int kMaxD = OPK_ATTN_MAX_D;

__device__ inline float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ inline float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// An element's bits, 4 or 2 bytes (the op's float32, float16 and
// bfloat16), and their float32 value: a tile's loads are issued together
// into registers, converted when they are stored to shared memory.
template <int SZ> __device__ inline uint32_t raw_at(const void *p, int64_t i)
{
    if (SZ == 4)
        return ((const uint32_t *)p)[i];
    return ((const uint16_t *)p)[i];
}

__device__ inline float raw_f(int32_t dtype, uint32_t v)
{
    return dtype == PRT_FLOAT32   ? __uint_as_float(v)
           : dtype == PRT_FLOAT16 ? base_h2f((uint16_t)v)
                                  : base_bf2f((uint16_t)v);
}

// The next tile's K and V bits, in registers while the current tile is
// scored: K as rows (keys warp + 4t, columns lane + 32c) or, for K^T, as
// columns (dims warp + 4t, key lane); V as rows. Zero bits (0.0f in every
// dtype) past Skv, D and Dv.
template <int C> struct tile_regs {
    uint32_t k[kKeys / kWarps * C], v[kKeys / kWarps * C];
};

template <int SZ, int C>
__device__ inline void load_tile(const opk_attention_args &a, int64_t kb, int64_t vb,
                                 int64_t j0, int lane, int warp, tile_regs<C> &t)
{
    constexpr int kT = kKeys / kWarps;
    if (a.kt) {
#pragma unroll
        for (int u = 0; u < kT * C; u++) {
            const int d = warp + kWarps * u;
            t.k[u] = j0 + lane < a.Skv && d < a.D
                         ? raw_at<SZ>(a.K, kb + d * a.k[2] + j0 + lane)
                         : 0u;
        }
    } else {
#pragma unroll
        for (int u = 0; u < kT; u++) {
            const int64_t j = j0 + warp + kWarps * u;
#pragma unroll
            for (int c = 0; c < C; c++) {
                const int d = lane + 32 * c;
                t.k[u * C + c] =
                    j < a.Skv && d < a.D ? raw_at<SZ>(a.K, kb + j * a.k[2] + d) : 0u;
            }
        }
    }
#pragma unroll
    for (int u = 0; u < kT; u++) {
        const int64_t j = j0 + warp + kWarps * u;
#pragma unroll
        for (int c = 0; c < C; c++) {
            const int d = lane + 32 * c;
            t.v[u * C + c] =
                j < a.Skv && d < a.Dv ? raw_at<SZ>(a.V, vb + j * a.v[2] + d) : 0u;
        }
    }
}

// The mask of the warp's R rows at key j (lane's key of a tile), read
// with the tile's loads: a float mask's value, or for a bool mask 1 where
// the key is masked out, else 0; 0 without a mask or outside the rows.
template <int R>
__device__ inline void load_mask(const opk_attention_args &a, int64_t b, int64_t h,
                                 int64_t i0, int64_t j, int64_t nkeys, float *m)
{
#pragma unroll
    for (int r = 0; r < R; r++) {
        const int64_t i = i0 + r;
        m[r] = 0.0f;
        if (a.mask && i < a.Sq && j < nkeys && j < a.mlen) {
            const int64_t mo = b * a.m[0] + h * a.m[1] + i * a.m[2] + j;
            if (a.mask_dtype == PRT_BOOL)
                m[r] = ((const uint8_t *)a.mask)[mo] ? 0.0f : 1.0f;
            else
                m[r] = load_f(a.mask_dtype, a.mask, mo);
        }
    }
}

template <int R, int C>
__global__ void __launch_bounds__(kWarps * 32) attention_kernel(opk_attention_args a)
{
    constexpr int kQueries = kWarps * R; // per block
    // K's rows padded by one float, so that 32 lanes reading 32 keys' same
    // column hit 32 banks; V's columns up to 32 C, zero past Dv.
    __shared__ float ks[kKeys][kMaxD + 1];
    __shared__ float vs[kKeys][32 * C];
    __shared__ float qs[kQueries][kMaxD];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int D = (int)a.D, Dv = (int)a.Dv;
    const int64_t i0 = (int64_t)blockIdx.x * kQueries, h = blockIdx.y, b = blockIdx.z;
    const int64_t kvh = h / (a.Hq / a.Hkv);
    const int64_t qb = b * a.q[0] + h * a.q[1], kb = b * a.k[0] + kvh * a.k[1];
    const int64_t vb = b * a.v[0] + kvh * a.v[1], yb = b * a.y[0] + h * a.y[1];
    float mx[R], l[R], acc[R][C];
    int64_t nkeys = a.Skv;
#pragma unroll
    for (int r = 0; r < R; r++) {
        mx[r] = -INFINITY;
        l[r] = 0.0f;
#pragma unroll
        for (int c = 0; c < C; c++)
            acc[r][c] = 0.0f;
    }
    for (int r = warp; r < kQueries; r += kWarps)
        for (int d = lane; d < D; d += 32)
            qs[r][d] =
                i0 + r < a.Sq ? load_f(a.dtype, a.Q, qb + (i0 + r) * a.q[2] + d) : 0.0f;
    // Causal: no query of the block sees a key past its last one.
    if (a.causal && i0 + kQueries < nkeys)
        nkeys = i0 + kQueries;
    tile_regs<C> tr;
    float mnext[R];
    const bool wide = a.dtype == PRT_FLOAT32;
    if (nkeys > 0) {
        if (wide)
            load_tile<4, C>(a, kb, vb, 0, lane, warp, tr);
        else
            load_tile<2, C>(a, kb, vb, 0, lane, warp, tr);
        load_mask<R>(a, b, h, i0 + warp * R, lane, nkeys, mnext);
    }
    for (int64_t j0 = 0; j0 < nkeys; j0 += kKeys) {
        const int64_t j = j0 + lane;
        const int jn = nkeys - j0 < kKeys ? (int)(nkeys - j0) : kKeys;
        float dot[R], p[R], mk[R];
#pragma unroll
        for (int r = 0; r < R; r++)
            mk[r] = mnext[r];
        __syncthreads(); // the previous tile is read
        if (a.kt) {
#pragma unroll
            for (int u = 0; u < kKeys / kWarps * C; u++) {
                const int d = warp + kWarps * u;
                if (d < 32 * C)
                    ks[lane][d] = raw_f(a.dtype, tr.k[u]);
            }
        } else {
#pragma unroll
            for (int u = 0; u < kKeys / kWarps; u++)
#pragma unroll
                for (int c = 0; c < C; c++)
                    ks[warp + kWarps * u][lane + 32 * c] =
                        raw_f(a.dtype, tr.k[u * C + c]);
        }
#pragma unroll
        for (int u = 0; u < kKeys / kWarps; u++)
#pragma unroll
            for (int c = 0; c < C; c++)
                vs[warp + kWarps * u][lane + 32 * c] = raw_f(a.dtype, tr.v[u * C + c]);
        __syncthreads();
        // The next tile's loads go out now and land while this one is scored.
        if (j0 + kKeys < nkeys) {
            if (wide)
                load_tile<4, C>(a, kb, vb, j0 + kKeys, lane, warp, tr);
            else
                load_tile<2, C>(a, kb, vb, j0 + kKeys, lane, warp, tr);
            load_mask<R>(a, b, h, i0 + warp * R, j + kKeys, nkeys, mnext);
        }
#pragma unroll
        for (int r = 0; r < R; r++)
            dot[r] = 0.0f;
#pragma unroll 4
        for (int d = 0; d < D; d++) {
            const float kd = ks[lane][d];
#pragma unroll
            for (int r = 0; r < R; r++)
                dot[r] = fmaf(qs[warp * R + r][d], kd, dot[r]);
        }
#pragma unroll
        for (int r = 0; r < R; r++) {
            const int64_t i = i0 + warp * R + r;
            float s = dot[r] * a.scale, m_new, corr;
            if (a.softcap > 0.0f)
                s = a.softcap * tanhf(s / a.softcap);
            if (i >= a.Sq || j >= nkeys || j >= a.mlen || (a.causal && j > i)) {
                s = -INFINITY;
            } else if (a.mask) {
                if (a.mask_dtype == PRT_BOOL)
                    s = mk[r] != 0.0f ? -INFINITY : s;
                else
                    s += mk[r];
            }
            m_new = fmaxf(mx[r], warp_max(s));
            if (m_new == -INFINITY) { // every key so far masked: nothing to add
                p[r] = 0.0f;
                continue;
            }
            p[r] = expf(s - m_new);
            corr = expf(mx[r] - m_new);
            l[r] = l[r] * corr + warp_sum(p[r]);
            mx[r] = m_new;
#pragma unroll
            for (int c = 0; c < C; c++)
                acc[r][c] *= corr;
        }
        for (int jj = 0; jj < jn; jj++) {
            float pj[R];
#pragma unroll
            for (int r = 0; r < R; r++)
                pj[r] = __shfl_sync(0xffffffffu, p[r], jj);
#pragma unroll
            for (int c = 0; c < C; c++) {
                const float v = vs[jj][lane + 32 * c];
#pragma unroll
                for (int r = 0; r < R; r++)
                    acc[r][c] = fmaf(pj[r], v, acc[r][c]);
            }
        }
    }
#pragma unroll
    for (int r = 0; r < R; r++) {
        const int64_t i = i0 + warp * R + r;
        const float inv = 1.0f / l[r];
        if (i >= a.Sq)
            continue;
#pragma unroll
        for (int c = 0; c < C; c++) {
            const int d = lane + 32 * c;
            float o = acc[r][c] * inv;
            if (!(l[r] > 0.0f) && !isnan(l[r])) // every key masked
                o = a.empty_zero ? 0.0f : NAN;
            if (d < Dv)
                store_f(a.dtype, a.Y, yb + i * a.y[2] + d, o);
        }
    }
}

template <int R>
int launch_rows(const opk_attention_args *a, int64_t cols, cudaStream_t stream)
{
    constexpr int kQueries = kWarps * R;
    dim3 grid((unsigned)((a->Sq + kQueries - 1) / kQueries), (unsigned)a->Hq,
              (unsigned)a->B);
    if (cols <= 1)
        attention_kernel<R, 1><<<grid, kWarps * 32, 0, stream>>>(*a);
    else if (cols <= 2)
        attention_kernel<R, 2><<<grid, kWarps * 32, 0, stream>>>(*a);
    else
        attention_kernel<R, kMaxD / 32><<<grid, kWarps * 32, 0, stream>>>(*a);
    return launched();
}

// The multiprocessors of the current device, asked once per process (a
// multi-GPU process sizes its blocks by the first device it runs on: only
// the choice of R depends on it, never a result).
int sm_count()
{
    static int sms;
    if (!sms) {
        int dev = 0, n = 0;
        if (cudaGetDevice(&dev) == cudaSuccess &&
            cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) ==
                cudaSuccess &&
            n > 0)
            sms = n;
        else
            sms = 132;
    }
    return sms;
}

} // namespace

extern "C" int opk_attention(const opk_attention_args *a, void *stream)
{
    const int64_t rows = a->Hq * a->B, cols = ((a->D > a->Dv ? a->D : a->Dv) + 31) / 32;
    const int64_t want = 2 * (int64_t)sm_count(); // blocks that fill the GPU
    if (a->Sq == 0 || a->Hq == 0 || a->B == 0 || a->Dv == 0)
        return 0;
    if (a->D > kMaxD || a->Dv > kMaxD || a->Hq > 65535 || a->B > 65535)
        return (int)cudaErrorInvalidValue;
    if ((a->Sq + 15) / 16 * rows >= want)
        return launch_rows<4>(a, cols, (cudaStream_t)stream);
    if ((a->Sq + 7) / 8 * rows >= want)
        return launch_rows<2>(a, cols, (cudaStream_t)stream);
    return launch_rows<1>(a, cols, (cudaStream_t)stream);
}
