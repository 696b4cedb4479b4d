// Attention (ops/attention.c's semantics) in one kernel, flash-attention
// style: a block of 4 warps takes 16 queries of one (batch, head); keys and
// values pass through shared memory in tiles of 32, and each warp keeps
// its 4 queries' running maximum, sum and output in float32 registers (the
// online softmax), so the S x S scores are never stored. A lane scores one
// key of the tile against the query (the dot product over D from shared
// memory), then owns D / 32 of the output's columns.
#include <math.h>

#include "ops/cuda/launch.cuh"

using namespace opk;

namespace
{

constexpr int kWarps = 4;
constexpr int kRowsPerWarp = 4;
constexpr int kQueries = kWarps * kRowsPerWarp; // per block
constexpr int kKeys = 32;                       // per tile: one per lane
constexpr int kMaxD = OPK_ATTN_MAX_D;
constexpr int kCols = kMaxD / 32; // output columns per lane

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

__global__ void __launch_bounds__(kWarps * 32) attention_kernel(opk_attention_args a)
{
    // K's rows padded by one float, so that 32 lanes reading 32 keys' same
    // column hit 32 banks.
    __shared__ float ks[kKeys][kMaxD + 1];
    __shared__ float vs[kKeys][kMaxD];
    __shared__ float qs[kQueries][kMaxD];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int64_t i0 = (int64_t)blockIdx.x * kQueries, h = blockIdx.y, b = blockIdx.z;
    const int64_t kvh = h / (a.Hq / a.Hkv);
    const int64_t qb = b * a.q[0] + h * a.q[1], kb = b * a.k[0] + kvh * a.k[1];
    const int64_t vb = b * a.v[0] + kvh * a.v[1], yb = b * a.y[0] + h * a.y[1];
    float mx[kRowsPerWarp], l[kRowsPerWarp], acc[kRowsPerWarp][kCols];
    int64_t nkeys = a.Skv;
    for (int r = 0; r < kRowsPerWarp; r++) {
        mx[r] = -INFINITY;
        l[r] = 0.0f;
        for (int c = 0; c < kCols; c++)
            acc[r][c] = 0.0f;
    }
    for (int t = threadIdx.x; t < kQueries * a.D; t += blockDim.x) {
        const int64_t r = t / a.D, d = t % a.D;
        qs[r][d] =
            i0 + r < a.Sq ? load_f(a.dtype, a.Q, qb + (i0 + r) * a.q[2] + d) : 0.0f;
    }
    // Causal: no query of the block sees a key past its last one.
    if (a.causal && i0 + kQueries < nkeys)
        nkeys = i0 + kQueries;
    for (int64_t j0 = 0; j0 < nkeys; j0 += kKeys) {
        __syncthreads(); // the previous tile is read
        for (int t = threadIdx.x; t < kKeys * a.D; t += blockDim.x) {
            const int64_t j = t / a.D, d = t % a.D;
            float kv = 0.0f;
            if (j0 + j < a.Skv)
                kv = load_f(a.dtype, a.K,
                            a.kt ? kb + d * a.k[2] + j0 + j : kb + (j0 + j) * a.k[2] + d);
            ks[j][d] = kv;
        }
        for (int t = threadIdx.x; t < kKeys * a.Dv; t += blockDim.x) {
            const int64_t j = t / a.Dv, d = t % a.Dv;
            vs[j][d] =
                j0 + j < a.Skv ? load_f(a.dtype, a.V, vb + (j0 + j) * a.v[2] + d) : 0.0f;
        }
        __syncthreads();
        for (int r = 0; r < kRowsPerWarp; r++) {
            const int qr = warp * kRowsPerWarp + r;
            const int64_t i = i0 + qr, j = j0 + lane;
            float s = -INFINITY, m_new, p, corr;
            if (i >= a.Sq)
                break; // the warp's later rows are past the end too
            if (j < nkeys) {
                float dot = 0.0f;
                for (int d = 0; d < a.D; d++)
                    dot = fmaf(qs[qr][d], ks[lane][d], dot);
                s = dot * a.scale;
                if (a.softcap > 0.0f)
                    s = a.softcap * tanhf(s / a.softcap);
                if (j >= a.mlen || (a.causal && j > i)) {
                    s = -INFINITY;
                } else if (a.mask) {
                    const int64_t mo = b * a.m[0] + h * a.m[1] + i * a.m[2] + j;
                    if (a.mask_dtype == PRT_BOOL)
                        s = ((const uint8_t *)a.mask)[mo] ? s : -INFINITY;
                    else
                        s += load_f(a.mask_dtype, a.mask, mo);
                }
            }
            m_new = fmaxf(mx[r], warp_max(s));
            if (m_new == -INFINITY)
                continue; // every key so far masked: nothing to add
            p = expf(s - m_new);
            corr = expf(mx[r] - m_new);
            l[r] = l[r] * corr + warp_sum(p);
            mx[r] = m_new;
            for (int c = 0; c < kCols; c++)
                acc[r][c] *= corr;
            for (int jj = 0; jj < kKeys && j0 + jj < nkeys; jj++) {
                const float pj = __shfl_sync(0xffffffffu, p, jj);
                for (int c = 0; c < kCols; c++)
                    if (lane + 32 * c < a.Dv)
                        acc[r][c] = fmaf(pj, vs[jj][lane + 32 * c], acc[r][c]);
            }
        }
    }
    for (int r = 0; r < kRowsPerWarp; r++) {
        const int64_t i = i0 + warp * kRowsPerWarp + r;
        const float inv = 1.0f / l[r];
        if (i >= a.Sq)
            break;
        for (int c = 0; c < kCols; c++) {
            const int64_t d = lane + 32 * c;
            float o = acc[r][c] * inv;
            if (!(l[r] > 0.0f) && !isnan(l[r])) // every key masked
                o = a.empty_zero ? 0.0f : NAN;
            if (d < a.Dv)
                store_f(a.dtype, a.Y, yb + i * a.y[2] + d, o);
        }
    }
}

} // namespace

extern "C" int opk_attention(const opk_attention_args *a, void *stream)
{
    dim3 grid((unsigned)((a->Sq + kQueries - 1) / kQueries), (unsigned)a->Hq,
              (unsigned)a->B);
    if (a->Sq == 0 || a->Hq == 0 || a->B == 0 || a->Dv == 0)
        return 0;
    if (a->D > kMaxD || a->Dv > kMaxD || a->Hq > 65535 || a->B > 65535)
        return (int)cudaErrorInvalidValue;
    attention_kernel<<<grid, kWarps * 32, 0, (cudaStream_t)stream>>>(*a);
    return launched();
}
