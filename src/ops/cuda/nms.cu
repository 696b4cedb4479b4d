// NonMaxSuppression on CUDA (nms_cuda.c): nms.c's selection, one block per
// (batch, class), then one block that packs the rows.
//
// A block repeats what the CPU's heap does: take the best candidate left
// (descending score, equal scores by the smaller index, NaN after every
// number), drop it when a box already chosen in its class suppresses it,
// else choose it, until max_output_boxes_per_class are chosen or none is
// left. "Best left" is a block-wide maximum of a 64-bit key over the
// candidates whose bit in the block's mask is clear; the check against the
// chosen boxes is spread over the threads. Each (batch, class) writes its
// rows into its own slot of output 0 (the output holds slot rows for each,
// the bound the shape function declared), a row with batch -1 after its
// last; the packing block then moves the slots' rows to the front in order
// and writes K. The corner, area and IoU arithmetic is nms.c's, operation
// for operation, rounded the same way (no contraction), so the same boxes
// are chosen.
#include "ops/cuda/launch.cuh"

namespace
{

constexpr int kNmsThreads = 256;

struct nms_box {
    float c[4]; // x_min, y_min, x_max, y_max
    float area;
};

__device__ void nms_minmax(float a, float b, float *lo, float *hi)
{
    *lo = a < b ? a : b;
    *hi = a < b ? b : a;
}

__device__ nms_box nms_load(const float *bx, int center)
{
    nms_box r;
    if (center) {
        float hw = __fdiv_rn(bx[2], 2.0f), hh = __fdiv_rn(bx[3], 2.0f);
        r.c[0] = __fsub_rn(bx[0], hw), r.c[2] = __fadd_rn(bx[0], hw);
        r.c[1] = __fsub_rn(bx[1], hh), r.c[3] = __fadd_rn(bx[1], hh);
    } else {
        nms_minmax(bx[1], bx[3], &r.c[0], &r.c[2]);
        nms_minmax(bx[0], bx[2], &r.c[1], &r.c[3]);
    }
    r.area = __fmul_rn(__fsub_rn(r.c[2], r.c[0]), __fsub_rn(r.c[3], r.c[1]));
    return r;
}

// nms.c's nms_suppresses.
__device__ int nms_suppresses(const nms_box &a, const nms_box &b, float iou)
{
    float x0 = a.c[0] > b.c[0] ? a.c[0] : b.c[0], x1 = a.c[2] < b.c[2] ? a.c[2] : b.c[2];
    float y0, y1, inter, uni;
    if (x1 <= x0)
        return 0;
    y0 = a.c[1] > b.c[1] ? a.c[1] : b.c[1], y1 = a.c[3] < b.c[3] ? a.c[3] : b.c[3];
    if (y1 <= y0)
        return 0;
    inter = __fmul_rn(__fsub_rn(x1, x0), __fsub_rn(y1, y0));
    if (inter <= 0.0f)
        return 0;
    uni = __fsub_rn(__fadd_rn(a.area, b.area), inter);
    if (a.area <= 0.0f || b.area <= 0.0f || uni <= 0.0f)
        return 0;
    return __fdiv_rn(inter, uni) > iou;
}

// A candidate's key: larger is taken first. Scores order as numbers (-0
// as +0), NaN below every number; equal scores by the smaller index. Never
// 0, which means "none left".
__device__ uint64_t nms_key(float s, int64_t i)
{
    uint32_t ord;
    if (s != s) {
        ord = 0;
    } else {
        uint32_t u = __float_as_uint(s == 0.0f ? 0.0f : s);
        ord = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    }
    return ((uint64_t)ord << 32) | (uint64_t)(0xFFFFFFFFu - (uint32_t)i);
}

__device__ uint64_t block_max(uint64_t v, uint64_t *red)
{
    for (int o = 16; o > 0; o /= 2) {
        uint64_t w = __shfl_down_sync(0xFFFFFFFFu, v, o);
        v = w > v ? w : v;
    }
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : 0;
        for (int o = 16; o > 0; o /= 2) {
            uint64_t w = __shfl_down_sync(0xFFFFFFFFu, v, o);
            v = w > v ? w : v;
        }
        if (threadIdx.x == 0)
            red[32] = v;
    }
    __syncthreads();
    v = red[32];
    __syncthreads();
    return v;
}

__global__ void nms_select_kernel(opk_nms_args a, int64_t first, uint32_t *masks,
                                  int64_t words)
{
    __shared__ uint64_t red[33];
    const int64_t g = first + blockIdx.x;
    if (g >= a.batches * a.classes)
        return;
    const int64_t bi = g / a.classes, ci = g % a.classes, n = a.boxes;
    const float *bx = a.x_boxes + bi * n * 4;
    const float *sc = a.x_scores + g * n;
    uint32_t *rm = masks + blockIdx.x * words;
    int64_t *rows = a.y + g * a.slot * 3;
    int64_t max_out = a.max_out_in ? *a.max_out_in : a.max_out;
    float iou = a.iou_in ? *a.iou_in : a.iou;
    int has_th = a.score_th_in ? 1 : a.has_score_th;
    float th = a.score_th_in ? *a.score_th_in : a.score_th;
    // The CPU refuses an IoU threshold outside [0, 1]; here nothing is
    // chosen (nms_cuda.c; DESIGN-NOTES, what a kernel cannot refuse).
    int64_t limit = iou >= 0.0f && iou <= 1.0f ? max_out : 0;
    if (limit > a.slot)
        limit = a.slot;
    for (int64_t w = threadIdx.x; w < words; w += blockDim.x) {
        uint32_t bits = 0;
        for (int q = 0; q < 32; q++) {
            int64_t i = w * 32 + q;
            if (i >= n || (has_th && !(sc[i] > th)))
                bits |= 1u << q;
        }
        rm[w] = bits;
    }
    __syncthreads();
    int64_t nsel = 0;
    while (nsel < limit) {
        uint64_t best = 0;
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
            if (!(rm[i / 32] >> (i % 32) & 1u)) {
                uint64_t k = nms_key(sc[i], i);
                best = k > best ? k : best;
            }
        best = block_max(best, red);
        if (best == 0)
            break;
        const int64_t j = 0xFFFFFFFFu - (uint32_t)best;
        const nms_box bj = nms_load(bx + j * 4, a.center);
        int sup = 0;
        for (int64_t s = threadIdx.x; s < nsel && !sup; s += blockDim.x)
            sup = nms_suppresses(nms_load(bx + rows[3 * s + 2] * 4, a.center), bj, iou);
        sup = __syncthreads_or(sup);
        if (threadIdx.x == 0) {
            rm[j / 32] |= 1u << (j % 32);
            if (!sup) {
                rows[3 * nsel] = bi, rows[3 * nsel + 1] = ci, rows[3 * nsel + 2] = j;
            }
        }
        nsel += !sup;
        __syncthreads();
    }
    if (threadIdx.x == 0 && nsel < a.slot)
        rows[3 * nsel] = -1;
}

// Moves each slot's rows (up to its -1 row) to the front, in slot order,
// and writes K. Rows only move towards the front; each chunk is read into
// registers before any of it is written.
__global__ void nms_pack_kernel(opk_nms_args a)
{
    __shared__ int64_t cnt;
    int64_t total = 0;
    for (int64_t g = 0; g < a.batches * a.classes && a.slot > 0; g++) {
        const int64_t *src = a.y + g * a.slot * 3;
        if (threadIdx.x == 0)
            cnt = a.slot;
        __syncthreads();
        for (int64_t s = threadIdx.x; s < a.slot; s += blockDim.x)
            if (src[3 * s] == -1)
                atomicMin((unsigned long long *)&cnt, (unsigned long long)s);
        __syncthreads();
        const int64_t m = 3 * cnt;
        int64_t *dst = a.y + 3 * total;
        for (int64_t base = 0; base < m; base += blockDim.x) {
            int64_t v = base + threadIdx.x < m ? src[base + threadIdx.x] : 0;
            __syncthreads();
            if (base + threadIdx.x < m)
                dst[base + threadIdx.x] = v;
            __syncthreads();
        }
        total += cnt;
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *a.k = total;
}

} // namespace

extern "C" int opk_nms(const opk_nms_args *a, void *ws, int64_t ws_bytes, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    const int64_t groups = a->batches * a->classes;
    const int64_t words = (a->boxes + 31) / 32;
    int64_t wave = words > 0 ? ws_bytes / (words * 4) : groups;
    opk_nms_args p = *a;
    if (groups > 0 && a->boxes > 0 && a->slot > 0) {
        if (wave < 1)
            return (int)cudaErrorInvalidValue;
        if (wave > 65535)
            wave = 65535;
        for (int64_t first = 0; first < groups; first += wave) {
            int64_t nb = groups - first < wave ? groups - first : wave;
            nms_select_kernel<<<(unsigned)nb, kNmsThreads, 0, s>>>(*a, first,
                                                                   (uint32_t *)ws, words);
        }
    } else {
        p.slot = 0; // nothing selected: K = 0
    }
    nms_pack_kernel<<<1, kNmsThreads, 0, s>>>(p);
    return opk::launched();
}
