// circ_pad_plugin on CUDA (cuda_launch.h): circular padding, every output
// element written once, bit-exact (elements are copied as raw bits).
//
// The output is walked by rows (the last dim). An output row comes from one
// input row, found by wrapping each leading index; inside it, column c reads
// input column c - before, wrapped. Dims are right-aligned in arrays of
// PRT_MAX_DIMS (leading entries 1, unpadded), so every array index is a
// compile-time constant and the arrays live in registers; the kernels come
// for at most 3 dims (what nearly every padding merges to: unpadded
// neighbours are one dim) and for PRT_MAX_DIMS.
//
// Work items are (row, segment): a warp takes a contiguous run of items and
// walks the rows' leading indices like an odometer, dividing only once.
// Rows shorter than a warp are shared by groups of G lanes (G = 4, 8 or 16;
// the groups of a warp take consecutive rows, so its accesses stay
// contiguous); long rows with few of them are cut into segments so that
// every SM has work.
//
// Accesses: 16-byte loads and stores when the last dim's pads and length are
// multiples of the vector width and both tensors are 16-byte aligned (a
// vector then never straddles a wrap); otherwise one element per lane,
// coalesced, UNROLL at a time.
//
// With dims from dims_device, the kernels read the true input dims (the
// output's are input + pads). A pad larger than a true dim (the host checked
// only the upper bounds) wraps by a modulo, and an input dim of 0 under a
// non-zero pad gives zeros: there is no way to report an error from here.
#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda_device.cuh"
#include "cuda_launch.h"

namespace
{

constexpr int B = 256;
constexpr int MAXR = PRT_MAX_DIMS;
constexpr int UNROLL = 8; // scalar loads in flight per lane

struct cp_params {
    const void *x;
    void *y;
    int32_t rank;                 // of dims_device; the arrays are right-aligned
    int64_t in[MAXR];             // input dims (upper bounds with dims_device)
    int64_t bef[MAXR], aft[MAXR]; // pads
    const int64_t *dims_device;   // the true input dims, or NULL
    int64_t nseg;                 // segments per row (1 when G < 32)
};

__device__ __forceinline__ int64_t wrap_any(int64_t s, int64_t d)
{
    s %= d;
    return s < 0 ? s + d : s;
}

// s in [-d, 2d) -> [0, d) (pads <= dims); otherwise a modulo.
__device__ __forceinline__ int64_t wrap(int64_t s, int64_t d)
{
    if (s < 0)
        s += d;
    else if (s >= d)
        s -= d;
    return s >= 0 && s < d ? s : wrap_any(s, d);
}

template <int R> struct dims_t {
    int64_t in[R], od[R], bef[R];
    int64_t rows, olen, len, bl;
    bool zeros; // some input dim is 0 under a non-zero pad: nothing to read
};

// The last R dims of the right-aligned arrays (the host checked rank <= R).
template <int R> __device__ __forceinline__ dims_t<R> true_dims(const cp_params &p)
{
    constexpr int OFF = MAXR - R;
    dims_t<R> d;
    d.rows = 1;
    d.zeros = false;
#pragma unroll
    for (int i = 0; i < R; i++) {
        const int src = i - (R - p.rank);
        d.in[i] = p.dims_device ? (src >= 0 ? p.dims_device[src] : 1) : p.in[OFF + i];
        d.bef[i] = p.bef[OFF + i];
        d.od[i] = d.in[i] + d.bef[i] + p.aft[OFF + i];
        if (i < R - 1)
            d.rows *= d.od[i];
        d.zeros |= d.in[i] == 0;
    }
    d.olen = d.od[R - 1];
    d.len = d.in[R - 1];
    d.bl = d.bef[R - 1];
    return d;
}

// Adds `step` to the odometer idx (over od[0..R-2]).
template <int R>
__device__ __forceinline__ void advance(int64_t (&idx)[R], const int64_t (&od)[R],
                                        int64_t step)
{
    idx[R - 2] += step;
#pragma unroll
    for (int i = R - 2; i >= 1; i--) {
        if (idx[i] >= od[i]) {
            const int64_t q = idx[i] / od[i];
            idx[i] -= q * od[i];
            idx[i - 1] += q;
        }
    }
}

// Copies output row `r`'s columns [c0, c1) from input row `src`, one element
// per lane (lanes gl, gl + G, ...).
// wrap() in 32 bits, for rows shorter than 2^30 elements.
__device__ __forceinline__ int32_t wrap32(int32_t s, int32_t d)
{
    if (s < 0)
        s += d;
    else if (s >= d)
        s -= d;
    if (s >= 0 && s < d)
        return s;
    s %= d;
    return s < 0 ? s + d : s;
}

template <typename T, int G, int R>
__device__ void copy_scalar(const T *x, T *y, const dims_t<R> &d, int64_t src, int64_t r,
                            int64_t c0, int64_t c1, int gl)
{
    const T *xr = x + src * d.len;
    T *yr = y + r * d.olen;
    if (d.olen < (1 << 30) && d.bl < (1 << 30)) {
        // Column arithmetic in 32 bits: ncu counted about 54 instructions
        // an element on the 64-bit path, which made it issue-bound.
        const int32_t len = (int32_t)d.len, bl = (int32_t)d.bl, e1 = (int32_t)c1;
        int32_t c = (int32_t)c0 + gl;
        for (; c + (UNROLL - 1) * G < e1; c += UNROLL * G) {
            T v[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; u++)
                v[u] = __ldg(xr + wrap32(c + u * G - bl, len));
#pragma unroll
            for (int u = 0; u < UNROLL; u++)
                yr[c + u * G] = v[u];
        }
        for (; c < e1; c += G)
            yr[c] = __ldg(xr + wrap32(c - bl, len));
        return;
    }
    int64_t c = c0 + gl;
    for (; c + (UNROLL - 1) * G < c1; c += UNROLL * G) {
        T v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            v[u] = __ldg(xr + wrap(c + u * G - d.bl, d.len));
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            yr[c + u * G] = v[u];
    }
    for (; c < c1; c += G)
        yr[c] = __ldg(xr + wrap(c - d.bl, d.len));
}

// The same with 16-byte accesses: c0, c1, the pads and the row length are
// multiples of W, so a vector lies inside one of the row's three pieces.
template <typename T, int R>
__device__ void copy_vector(const T *x, T *y, const dims_t<R> &d, int64_t src, int64_t r,
                            int64_t c0, int64_t c1, int lane)
{
    constexpr int64_t W = 16 / sizeof(T);
    constexpr int VU = 4; // vectors in flight per lane
    const T *xr = x + src * d.len;
    T *yr = y + r * d.olen;
    int64_t c = c0 + lane * W;
    // Loads are batched by hand: x and y may alias as far as the compiler
    // knows, so it would not move a load above the previous store.
    for (; c + (VU - 1) * 32 * W < c1; c += VU * 32 * W) {
        uint4 v[VU];
#pragma unroll
        for (int u = 0; u < VU; u++) {
            int64_t s = c + u * 32 * W - d.bl;
            s = s < 0 ? s + d.len : s >= d.len ? s - d.len : s;
            v[u] = __ldg(reinterpret_cast<const uint4 *>(xr + s));
        }
#pragma unroll
        for (int u = 0; u < VU; u++)
            *reinterpret_cast<uint4 *>(yr + c + u * 32 * W) = v[u];
    }
    for (; c < c1; c += 32 * W) {
        int64_t s = c - d.bl;
        s = s < 0 ? s + d.len : s >= d.len ? s - d.len : s;
        *reinterpret_cast<uint4 *>(yr + c) =
            __ldg(reinterpret_cast<const uint4 *>(xr + s));
    }
}

template <typename T, int G, bool VEC, int R>
__global__ void __launch_bounds__(B) pad_kernel(cp_params p)
{
    constexpr int GPW = 32 / G; // rows a warp works on at once
    const dims_t<R> d = true_dims<R>(p);
    if (d.rows == 0 || d.olen == 0)
        return;
    const T *x = static_cast<const T *>(p.x);
    T *y = static_cast<T *>(p.y);
    const plg::lane_group<G, B> g;
    const int lane = g.lane, gl = g.gl;
    const int64_t nseg = p.nseg; // 1 when G < 32
    const int64_t items = d.rows * nseg;
    const int64_t per_warp = plg::ceil_div(plg::ceil_div(items, g.nwarps), GPW) * GPW;
    int64_t it = g.warp * per_warp + g.gw;
    const int64_t end = items < (g.warp + 1) * per_warp ? items : (g.warp + 1) * per_warp;
    if (it >= end)
        return; // no shuffles below: lanes may leave on their own
    // Segments: multiples of 32 vectors, so a vector never crosses one.
    const int64_t seg_len =
        plg::ceil_div(plg::ceil_div(d.olen, nseg), 32 * (16 / sizeof(T))) *
        (32 * (16 / sizeof(T)));
    int64_t r = it / nseg, sgi = it - r * nseg;
    int64_t idx[R]; // idx[R - 1] is unused: the odometer is over the rows
    idx[R - 1] = 0;
    {
        int64_t rem = r;
#pragma unroll
        for (int i = R - 2; i >= 0; i--) {
            idx[i] = rem % d.od[i];
            rem /= d.od[i];
        }
    }
    // Input row strides of the leading dims (in rows).
    int64_t istr[R];
    istr[R - 1] = 0;
    istr[R - 2] = 1;
#pragma unroll
    for (int i = R - 3; i >= 0; i--)
        istr[i] = istr[i + 1] * d.in[i + 1];
    for (; it < end; it += GPW) {
        const int64_t c0 = sgi * seg_len;
        const int64_t c1 = c0 + seg_len < d.olen ? c0 + seg_len : d.olen;
        if (d.zeros) {
            T *yr = y + r * d.olen;
            for (int64_t c = c0 + gl; c < c1; c += G)
                yr[c] = (T)0;
        } else {
            int64_t src = 0;
#pragma unroll
            for (int i = 0; i < R - 1; i++)
                src += wrap(idx[i] - d.bef[i], d.in[i]) * istr[i];
            if (VEC)
                copy_vector(x, y, d, src, r, c0, c1, lane);
            else
                copy_scalar<T, G, R>(x, y, d, src, r, c0, c1, gl);
        }
        if (nseg == 1) {
            advance(idx, d.od, GPW);
            r += GPW;
        } else if (++sgi == nseg) { // GPW == 1 here
            sgi = 0;
            advance(idx, d.od, 1);
            r++;
        }
    }
}

template <typename T, int G, bool VEC>
cudaError_t launch(const cp_params &p, int64_t rows, int sms, cudaStream_t s)
{
    const int64_t warps = plg::ceil_div(rows * p.nseg, 32 / G);
    const unsigned grid = plg::grid_for(plg::ceil_div(warps, B / 32), sms);
    if (p.rank <= 3)
        pad_kernel<T, G, VEC, 3><<<grid, B, 0, s>>>(p);
    else
        pad_kernel<T, G, VEC, MAXR><<<grid, B, 0, s>>>(p);
    return cudaGetLastError();
}

template <typename T>
cudaError_t launch_t(const plg_cp_launch *a, cp_params &p, cudaStream_t s)
{
    constexpr int64_t W = 16 / sizeof(T);
    const int sms = plg::sm_count();
    int64_t rows = 1;
    for (int i = 0; i < MAXR - 1; i++)
        rows *= p.in[i] + p.bef[i] + p.aft[i];
    const int64_t len = p.in[MAXR - 1], bl = p.bef[MAXR - 1], al = p.aft[MAXR - 1];
    const int64_t olen = len + bl + al;
    if (rows * olen == 0)
        return cudaSuccess;
    const bool vec = !a->io.dims_device && len % W == 0 && bl % W == 0 && al % W == 0 &&
                     plg::aligned16(p.x) && plg::aligned16(p.y);
    // Short rows: groups of G lanes, about two elements each.
    if (!vec && olen <= 32) {
        p.nseg = 1;
        if (olen <= 8)
            return launch<T, 4, false>(p, rows, sms, s);
        if (olen <= 16)
            return launch<T, 8, false>(p, rows, sms, s);
        return launch<T, 16, false>(p, rows, sms, s);
    }
    // A warp per row; few long rows are cut so that there are about four
    // items per resident warp, each at least 4 * 32 vectors long.
    const int64_t want = plg::ceil_div((int64_t)sms * 64 * 4, rows);
    const int64_t most = plg::ceil_div(olen, 4 * 32 * W);
    p.nseg = want < most ? want : most;
    if (p.nseg < 1)
        p.nseg = 1;
    return vec ? launch<T, 32, true>(p, rows, sms, s)
               : launch<T, 32, false>(p, rows, sms, s);
}

} // namespace

extern "C" int plg_cp_cuda(const plg_cp_launch *a, void *stream)
{
    cp_params p = {};
    int32_t n = 0; // dims kept, before right-alignment
    int64_t in[MAXR], bef[MAXR], aft[MAXR];
    p.x = a->io.x;
    p.y = a->io.y;
    p.dims_device = a->io.dims_device;
    p.rank = a->io.rank;
    for (int32_t i = 0; i < a->io.rank; i++) {
        // Known dims: merge a dim into the previous one when neither is
        // padded (fewer leading indices, longer rows). True dims may differ
        // from the upper bounds, so with dims_device nothing is merged.
        if (!a->io.dims_device && n > 0 && bef[n - 1] == 0 && aft[n - 1] == 0 &&
            a->before[i] == 0 && a->after[i] == 0) {
            in[n - 1] *= a->io.dims[i];
            continue;
        }
        in[n] = a->io.dims[i];
        bef[n] = a->before[i];
        aft[n] = a->after[i];
        n++;
    }
    for (int i = 0; i < MAXR; i++) {
        const int src = i - (MAXR - n);
        p.in[i] = src >= 0 ? in[src] : 1;
        p.bef[i] = src >= 0 ? bef[src] : 0;
        p.aft[i] = src >= 0 ? aft[src] : 0;
    }
    if (!a->io.dims_device)
        p.rank = n;
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    return (int)(a->io.dtype == PRT_FLOAT32 ? launch_t<uint32_t>(a, p, s)
                                            : launch_t<uint16_t>(a, p, s));
}
