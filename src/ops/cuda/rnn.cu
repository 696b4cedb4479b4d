// CUDA kernels of LSTM, GRU and RNN (launch.h): rnn_cuda.c runs the
// products through cuBLAS (X W^T for every step, then H R^T per step) and
// these the rest, a thread per (batch entry, hidden unit) holding every
// gate of that unit, rnn.c's equations and rules. A length outside [0, T]
// is clamped to it (the CPU fails the run).
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

// Step s of one direction. hr [B, G H] holds H R^T (GRU without
// linear_before_reset: its z and r columns; phase 1 then finds the
// product of r H in the h columns and z, activated, where phase 0 left it).
__global__ void step_kernel(opk_rnn_args a, int64_t s, int32_t phase)
{
    OPK_FOR(i, a.B * a.H)
    {
        const int64_t b = i / a.H, j = i % a.H, H = a.H, gh = a.G * H;
        const int64_t len = len_of(a, b);
        if (s >= len)
            continue;
        const int64_t t = a.rev ? len - 1 - s : s;
        const float *xr = a.xw + (a.layout ? b * a.T + t : t * a.B + b) * gh;
        float *g = a.hr + b * gh;
        float hn;
        if (a.kind == 0) {
            hn = actk(a, 0, g[j] + xr[j] + bias_w(a, j) + bias_r(a, j), 1);
        } else if (a.kind == 1) {
            float z, hh;
            if (phase == 0) {
                z = actk(a, 0, g[j] + xr[j] + bias_w(a, j) + bias_r(a, j), 1);
                const float r = actk(
                    a, 0, g[H + j] + xr[H + j] + bias_w(a, H + j) + bias_r(a, H + j), 1);
                if (!a.lbr) {
                    g[j] = z;
                    a.tmp[i] = r * a.h[i];
                    continue;
                }
                hh = xr[2 * H + j] + bias_w(a, 2 * H + j) +
                     r * (g[2 * H + j] + bias_r(a, 2 * H + j));
            } else {
                z = g[j];
                hh = g[2 * H + j] + xr[2 * H + j] + bias_w(a, 2 * H + j) +
                     bias_r(a, 2 * H + j);
            }
            hh = actk(a, 1, hh, 1);
            hn = (1.0f - z) * hh + z * a.h[i];
        } else {
            const float cp = a.c[i];
            const float *p = a.p ? a.p + a.dir * 3 * H : nullptr;
            float pre[4];
            for (int k = 0; k < 4; k++)
                pre[k] = g[k * H + j] + xr[k * H + j] + bias_w(a, k * H + j) +
                         bias_r(a, k * H + j);
            const float gi = actk(a, 0, pre[0] + (p ? p[j] * cp : 0.0f), 1);
            const float gf = a.input_forget
                                 ? 1.0f - gi
                                 : actk(a, 0, pre[2] + (p ? p[2 * H + j] * cp : 0.0f), 1);
            const float gc = actk(a, 1, pre[3], 1);
            const float c = gf * cp + gi * gc;
            const float go = actk(a, 0, pre[1] + (p ? p[H + j] * c : 0.0f), 1);
            a.c[i] = c;
            hn = go * actk(a, 2, c, 0);
        }
        a.h[i] = hn;
        if (a.y)
            a.y[(a.layout ? (b * a.T + t) * a.D + a.dir : (t * a.D + a.dir) * a.B + b) *
                    H +
                j] = hn;
    }
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
