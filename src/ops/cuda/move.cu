// CUDA kernels of the data-movement built-ins that read each output element
// from one place, or combine places in a fixed order (launch.h): Pad and
// Tile's walk, Trilu, EyeLike, OneHot, GatherND, ScatterND and
// ScatterElements; NonZero and Compress, whose sizes come from the data
// (one block each, scanning in tiles, writing K on the device). Split and
// DepthToSpace/SpaceToDepth are strided copies (opk_copy). A kernel cannot fail the run,
// so an index the CPU would refuse reads or writes nothing (DESIGN-NOTES).
#include "ops/cuda/launch.cuh"

namespace opk
{
namespace
{

__device__ int64_t load_index(int32_t dtype, const void *p, int64_t i)
{
    return dtype == DT_I32 ? (int64_t)((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}

template <typename T> __global__ void map_kernel(opk_map_args a)
{
    int64_t begin[OPK_MAX_RANK];
    for (int32_t d = 0; d < a.rank; d++)
        begin[d] = a.begin[d];
    // Pads that are device data: the begins, one per padded axis.
    if (a.pads)
        for (int32_t i = 0; i < a.nax; i++)
            begin[a.ax[i]] = load_index(a.pads_dtype, a.pads, i);
    const T fill = a.fill ? *(const T *)a.fill : (T)a.fill_bits;
    OPK_FOR(e, a.n)
    {
        int64_t rest = e, src = 0;
        int pad = 0;
        for (int32_t d = a.rank - 1; d >= 0; d--) {
            int64_t c = rest % a.odims[d];
            rest /= a.odims[d];
            c = opk_pad_source(a.mode, c - begin[d], a.idims[d]);
            pad |= c < 0;
            src += c * a.istride[d];
        }
        ((T *)a.y)[e] = pad ? fill : ((const T *)a.x)[src];
    }
}

template <typename T>
__global__ void trilu_kernel(const T *x, T *y, int64_t n, int64_t rows, int64_t cols,
                             const void *kp, int32_t k_dtype, int32_t upper)
{
    const int64_t k = kp ? load_index(k_dtype, kp, 0) : 0;
    OPK_FOR(e, n)
    {
        int64_t j = e % cols, i = (e / cols) % rows;
        int keep = upper ? j - i >= k : j - i <= k;
        y[e] = keep ? x[e] : (T)0;
    }
}

template <typename T>
__global__ void eye_kernel(T *y, int64_t n, int64_t cols, int64_t k, T one)
{
    OPK_FOR(e, n)
    {
        int64_t j = e % cols, i = e / cols;
        y[e] = j == i + k ? one : (T)0;
    }
}

// An index of any numeric dtype as OneHot reads it (opd_get: floats and
// integers as double).
__device__ double load_number(int32_t dtype, const void *p, int64_t i)
{
    if (dtype == DT_F32 || dtype == DT_F16 || dtype == DT_BF16)
        return (double)opk_float_at(dtype, p, i);
    return (double)opk_int_at(dtype, p, i);
}

template <typename T>
__global__ void one_hot_kernel(const void *idx, int32_t idx_dtype, const T *vals, T *y,
                               int64_t depth, int64_t inner, int64_t n)
{
    const T off = vals[0], on = vals[1];
    OPK_FOR(e, n)
    {
        int64_t q = e % inner, r = e / inner, k = r % depth, p = r / depth;
        double v = load_number(idx_dtype, idx, p * inner + q);
        int hit = 0;
        if (v > -(double)depth - 1.0 && v < (double)depth + 1.0) {
            int64_t c = (int64_t)v;
            c = c < 0 ? c + depth : c;
            hit = c == k;
        }
        y[e] = hit ? on : off;
    }
}

template <typename T> __global__ void gather_nd_kernel(opk_gather_nd_args a)
{
    OPK_FOR(e, a.n)
    {
        int64_t j = e % a.slice, t = e / a.slice, bi = t / a.tuples;
        int64_t src = bi * a.per_batch + j;
        int ok = 1;
        for (int32_t q = 0; q < a.m; q++) {
            int64_t v = load_index(a.idx_dtype, a.idx, t * a.m + q), s = a.dims[a.b + q];
            v = v < 0 ? v + s : v;
            ok &= v >= 0 && v < s;
            src += v * a.strides[a.b + q];
        }
        ((T *)a.y)[e] = ok ? ((const T *)a.x)[src] : (T)0;
    }
}

// scatter.c's combine: floats in float32 (NaN wins max and min), integers
// wrapping, bool add and max as or, mul and min as and.
template <typename T> __device__ T combine(int32_t dtype, int32_t red, T d, T s)
{
    if (red == OPK_RED_NONE)
        return s;
    if (dtype == DT_F32 || dtype == DT_F16 || dtype == DT_BF16) {
        float a, b, r;
        a = opk_float_at(dtype, &d, 0);
        b = opk_float_at(dtype, &s, 0);
        switch (red) {
        case OPK_RED_ADD:
            r = a + b;
            break;
        case OPK_RED_MUL:
            r = a * b;
            break;
        case OPK_RED_MAX:
            r = b > a || b != b ? b : a;
            break;
        default:
            r = b < a || b != b ? b : a;
            break;
        }
        T out;
        opk_float_put(dtype, &out, 0, r);
        return out;
    }
    if (dtype == DT_BOOL)
        return red == OPK_RED_ADD || red == OPK_RED_MAX ? (T)((d | s) != 0) : (T)(d && s);
    // Integers: T is the unsigned type of the width; compare as signed
    // where the dtype is.
    int64_t a = opk_int_at(dtype, &d, 0), b = opk_int_at(dtype, &s, 0);
    switch (red) {
    case OPK_RED_ADD:
        return (T)((uint64_t)a + (uint64_t)b);
    case OPK_RED_MUL:
        return (T)((uint64_t)a * (uint64_t)b);
    case OPK_RED_MAX:
        return b > a ? s : d;
    default:
        return b < a ? s : d;
    }
}

// ScatterElements, one thread per output element: the updates that can
// land on it are those at its coordinates off the axis, which it applies in
// their row-major order (the CPU's), so repeated indices combine as they do
// there. In place when y is x.
template <typename T> __global__ void scatter_elements_kernel(opk_scatter_args a)
{
    OPK_FOR(e, a.n)
    {
        int64_t rest = e, ioff = 0, istride = 1, oc = 0, ax_stride = 1;
        int inside = 1;
        for (int32_t d = a.rank - 1; d >= 0; d--) {
            int64_t c = rest % a.ddims[d];
            rest /= a.ddims[d];
            if (d == a.axis) {
                oc = c;
                ax_stride = istride;
            } else {
                inside &= c < a.idims[d];
                ioff += c * istride;
            }
            istride *= a.idims[d];
        }
        T v = ((const T *)a.x)[e];
        if (inside)
            for (int64_t k = 0; k < a.idims[a.axis]; k++) {
                int64_t u = ioff + k * ax_stride;
                int64_t i = load_index(a.idx_dtype, a.idx, u), s = a.ddims[a.axis];
                i = i < 0 ? i + s : i;
                if (i == oc)
                    v = combine<T>(a.dtype, a.red, v, ((const T *)a.upd)[u]);
            }
        ((T *)a.y)[e] = v;
    }
}

// ScatterND on y (data already there), one thread per element of a slice:
// the index tuples in order, so repeated tuples combine as on the CPU.
// Slices start at multiples of the slice's size, so two threads never
// touch one element.
template <typename T> __global__ void scatter_nd_kernel(opk_scatter_args a)
{
    OPK_FOR(j, a.slice)
    {
        for (int64_t t = 0; t < a.tuples; t++) {
            int64_t dst = 0;
            int ok = 1;
            for (int32_t q = 0; q < a.m; q++) {
                int64_t v = load_index(a.idx_dtype, a.idx, t * a.m + q), s = a.ddims[q];
                v = v < 0 ? v + s : v;
                ok &= v >= 0 && v < s;
                dst += v * a.dstride[q];
            }
            if (ok) {
                T *p = (T *)a.y + dst + j;
                *p = combine<T>(a.dtype, a.red, *p, ((const T *)a.upd)[t * a.slice + j]);
            }
        }
    }
}

// Non-zero as NonZero reads it (opd_nonzero): floats != 0 (NaN counts, -0
// does not), integers and bool != 0.
__device__ int is_nonzero(int32_t dtype, const void *x, int64_t i)
{
    if (dtype == DT_F32 || dtype == DT_F16 || dtype == DT_BF16)
        return opk_float_at(dtype, x, i) != 0.0f;
    return opk_int_at(dtype, x, i) != 0;
}

constexpr int kScanThreads = 1024;

// The sum of v over the block (kScanThreads threads), in every thread.
__device__ int64_t block_sum(int64_t v)
{
    __shared__ int64_t part[32];
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x >> 5] = v;
    __syncthreads();
    v = 0;
    for (int w = 0; w < kScanThreads / 32; w++)
        v += part[w];
    __syncthreads();
    return v;
}

// The flags set in threads before this one of the block, and (*total) in
// all of them.
__device__ int64_t block_scan(int flag, int64_t *total)
{
    __shared__ int32_t warp_base[32];
    __shared__ int32_t all;
    const unsigned lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const unsigned ballot = __ballot_sync(0xffffffffu, flag);
    const int32_t before = __popc(ballot & ((1u << lane) - 1u));
    if (lane == 0)
        warp_base[wid] = __popc(ballot);
    __syncthreads();
    if (wid == 0) {
        int32_t v = warp_base[lane], incl = v;
        for (int o = 1; o < 32; o <<= 1) {
            int32_t t = __shfl_up_sync(0xffffffffu, incl, o);
            if ((int)lane >= o)
                incl += t;
        }
        warp_base[lane] = incl - v;
        if (lane == 31)
            all = incl;
    }
    __syncthreads();
    const int64_t r = warp_base[wid] + before;
    *total = all;
    __syncthreads();
    return r;
}

// NonZero in one block: the count K first, then the coordinates of each
// tile's non-zeros at their rank among all, row d of [r, K] densely.
__global__ void __launch_bounds__(kScanThreads)
    nonzero_kernel(int32_t dtype, const void *x, int64_t n, opk_dims_arg d, int64_t *y,
                   int64_t *k_out)
{
    int64_t c = 0, running = 0;
    for (int64_t i = threadIdx.x; i < n; i += kScanThreads)
        c += is_nonzero(dtype, x, i);
    const int64_t K = block_sum(c);
    for (int64_t base = 0; base < n; base += kScanThreads) {
        const int64_t i = base + threadIdx.x;
        const int flag = i < n && is_nonzero(dtype, x, i);
        int64_t tile;
        const int64_t p = block_scan(flag, &tile);
        if (flag) {
            int64_t rest = i;
            for (int32_t q = d.rank - 1; q >= 0; q--) {
                y[q * K + running + p] = rest % d.d[q];
                rest /= d.d[q];
            }
        }
        running += tile;
    }
    if (threadIdx.x == 0)
        *k_out = K;
}

// Compress in one block: K, then each tile's true entries' slices
// ([outer, len, inner] -> [outer, K, inner]) copied by the threads that
// hold them. Entries past len are not selected (the CPU fails the run).
template <typename T>
__global__ void __launch_bounds__(kScanThreads)
    compress_kernel(const T *x, const uint8_t *cond, int64_t nc, int64_t len,
                    int64_t outer, int64_t inner, T *y, int64_t *k_out)
{
    const int64_t m = nc < len ? nc : len;
    int64_t c = 0, running = 0;
    for (int64_t i = threadIdx.x; i < m; i += kScanThreads)
        c += cond[i] != 0;
    const int64_t K = block_sum(c);
    for (int64_t base = 0; base < m; base += kScanThreads) {
        const int64_t i = base + threadIdx.x;
        const int flag = i < m && cond[i] != 0;
        int64_t tile;
        const int64_t p = block_scan(flag, &tile);
        if (flag)
            for (int64_t b = 0; b < outer; b++)
                for (int64_t q = 0; q < inner; q++)
                    y[(b * K + running + p) * inner + q] = x[(b * len + i) * inner + q];
        running += tile;
    }
    if (threadIdx.x == 0)
        *k_out = K;
}

// ---- Unique --------------------------------------------------------------
//
// unique.c's results by a stable merge sort of the items' positions (log2 m
// passes, each element placed by a binary search in the other run of its
// pair: before equal items of the later run, after those of the earlier),
// then one block scanning the sorted items for the groups' starts, and, for
// sorted 0, the groups' first occurrences for their order. Buffers: the
// op's workspace (4 int64 an item: two for the sort, group ids, group
// starts) and inverse_indices as scratch before it is written.

// unique.c's elem_cmp: int64 exactly, the rest as double, NaN after every
// number and equal to NaN, -0 equal to 0.
__device__ int uq_elem_cmp(const void *x, int32_t dtype, int64_t a, int64_t b)
{
    if (dtype == DT_I64) {
        const int64_t p = ((const int64_t *)x)[a], q = ((const int64_t *)x)[b];
        return (p > q) - (p < q);
    }
    const double p = load_number(dtype, x, a), q = load_number(dtype, x, b);
    if (p != p || q != q)
        return (p != p) - (q != q);
    return (p > q) - (p < q);
}

__device__ int uq_item_cmp(const opk_unique_args &u, int64_t a, int64_t b)
{
    for (int64_t p = 0; p < u.outer; p++)
        for (int64_t q = 0; q < u.inner; q++) {
            const int64_t base = p * u.m * u.inner + q;
            const int r =
                uq_elem_cmp(u.x, u.dtype, base + a * u.inner, base + b * u.inner);
            if (r)
                return r;
        }
    return 0;
}

__global__ void uq_iota_kernel(int64_t *perm, int64_t m)
{
    OPK_FOR(i, m)
    perm[i] = i;
}

// One merge pass of runs of w: src -> dst.
__global__ void uq_merge_kernel(opk_unique_args u, const int64_t *src, int64_t *dst,
                                int64_t w)
{
    OPK_FOR(t, u.m)
    {
        const int64_t lo = t / (2 * w) * (2 * w), mid = lo + w < u.m ? lo + w : u.m;
        const int64_t hi = lo + 2 * w < u.m ? lo + 2 * w : u.m;
        const int64_t item = src[t];
        int64_t a, b, pos;
        if (t < mid) { // the earlier run: after the later run's smaller items
            a = mid;
            b = hi;
            while (a < b) {
                const int64_t c = a + (b - a) / 2;
                if (uq_item_cmp(u, src[c], item) < 0)
                    a = c + 1;
                else
                    b = c;
            }
            pos = lo + (t - lo) + (a - mid);
        } else { // the later run: after the earlier run's items not above it
            a = lo;
            b = mid;
            while (a < b) {
                const int64_t c = a + (b - a) / 2;
                if (uq_item_cmp(u, src[c], item) <= 0)
                    a = c + 1;
                else
                    b = c;
            }
            pos = lo + (t - mid) + (a - lo);
        }
        dst[pos] = item;
    }
}

// One block: group ids of the sorted positions, the groups' starts, K.
__global__ void __launch_bounds__(kScanThreads)
    uq_groups_kernel(opk_unique_args u, const int64_t *perm, int64_t *gid,
                     int64_t *gstart, int64_t *k_out)
{
    int64_t running = 0;
    for (int64_t base = 0; base < u.m; base += kScanThreads) {
        const int64_t t = base + threadIdx.x;
        const int flag = t < u.m && (t == 0 || uq_item_cmp(u, perm[t - 1], perm[t]) != 0);
        int64_t tile;
        const int64_t p = block_scan(flag, &tile);
        if (flag)
            gstart[running + p] = t;
        if (t < u.m)
            gid[t] = running + p + flag - 1;
        running += tile;
    }
    if (threadIdx.x == 0)
        *k_out = running;
}

// sorted 0: mark[i] = the group whose first occurrence item i is, else -1.
__global__ void uq_mark_kernel(const int64_t *perm, const int64_t *gstart,
                               const int64_t *k, int64_t *mark, int64_t m)
{
    OPK_FOR(i, m)
    mark[i] = -1;
}

__global__ void uq_mark_first_kernel(const int64_t *perm, const int64_t *gstart,
                                     const int64_t *k, int64_t *mark, int64_t m)
{
    const int64_t K = *k;
    OPK_FOR(g, m)
    if (g < K)
        mark[perm[gstart[g]]] = g;
}

// One block: pos[g] = the rank of group g's first occurrence among them.
__global__ void __launch_bounds__(kScanThreads)
    uq_order_kernel(const int64_t *mark, int64_t *pos, int64_t m)
{
    int64_t running = 0;
    for (int64_t base = 0; base < m; base += kScanThreads) {
        const int64_t i = base + threadIdx.x;
        const int flag = i < m && mark[i] >= 0;
        int64_t tile;
        const int64_t p = block_scan(flag, &tile);
        if (flag)
            pos[mark[i]] = running + p;
        running += tile;
    }
}

__global__ void uq_copy_kernel(const int64_t *from, int64_t *to, const int64_t *k,
                               int64_t m)
{
    const int64_t K = *k;
    OPK_FOR(g, m)
    if (g < K)
        to[g] = from[g];
}

// Per sorted position: inverse_indices, and at a group's start its first
// occurrence and count at the group's output position.
__global__ void uq_outputs_kernel(opk_unique_args u, const int64_t *perm,
                                  const int64_t *gid, const int64_t *gstart,
                                  const int64_t *pos, const int64_t *k, int64_t *yi,
                                  int64_t *yinv, int64_t *ycnt)
{
    const int64_t K = *k;
    OPK_FOR(t, u.m)
    {
        const int64_t g = gid[t], p = pos ? pos[g] : g;
        yinv[perm[t]] = p;
        if (gstart[g] == t) {
            yi[p] = perm[t];
            ycnt[p] = (g + 1 < K ? gstart[g + 1] : u.m) - t;
        }
    }
}

// Y [outer, K, inner] densely: the first occurrence's slice per position.
template <typename T>
__global__ void uq_y_kernel(opk_unique_args u, const int64_t *yi, const int64_t *k, T *y)
{
    const int64_t K = *k, n = u.outer * u.m * u.inner;
    OPK_FOR(e, n)
    {
        const int64_t i = e % u.inner, p = (e / u.inner) % u.m, q = e / (u.inner * u.m);
        if (p < K)
            y[(q * K + p) * u.inner + i] =
                ((const T *)u.x)[(q * u.m + yi[p]) * u.inner + i];
    }
}

} // namespace
} // namespace opk

using namespace opk;

extern "C" int opk_map(const opk_map_args *a, void *stream)
{
    if (a->n == 0)
        return 0;
    if (a->rank < 1 || a->rank > OPK_MAX_RANK || a->nax < 0 || a->nax > OPK_MAX_RANK)
        return (int)cudaErrorInvalidValue;
    return by_esize(a->esize, [&](auto t) {
        map_kernel<decltype(t)>
            <<<blocks_for(a->n), kThreads, 0, (cudaStream_t)stream>>>(*a);
    });
}

extern "C" int opk_trilu(int32_t esize, const void *x, void *y, int64_t n, int64_t rows,
                         int64_t cols, const void *k, int32_t k_dtype, int32_t upper,
                         void *stream)
{
    if (n == 0)
        return 0;
    return by_esize(esize, [&](auto t) {
        typedef decltype(t) T;
        trilu_kernel<T><<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(
            (const T *)x, (T *)y, n, rows, cols, k, k_dtype, upper);
    });
}

extern "C" int opk_eye(int32_t esize, uint64_t one, void *y, int64_t rows, int64_t cols,
                       int64_t k, void *stream)
{
    const int64_t n = rows * cols;
    if (n == 0)
        return 0;
    return by_esize(esize, [&](auto t) {
        typedef decltype(t) T;
        eye_kernel<T><<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(
            (T *)y, n, cols, k, (T)one);
    });
}

extern "C" int opk_one_hot(int32_t esize, const void *idx, int32_t idx_dtype,
                           const void *vals, void *y, int64_t outer, int64_t depth,
                           int64_t inner, void *stream)
{
    const int64_t n = outer * depth * inner;
    if (n == 0)
        return 0;
    return by_esize(esize, [&](auto t) {
        typedef decltype(t) T;
        one_hot_kernel<T><<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(
            idx, idx_dtype, (const T *)vals, (T *)y, depth, inner, n);
    });
}

extern "C" int opk_gather_nd(const opk_gather_nd_args *a, void *stream)
{
    if (a->n == 0)
        return 0;
    if (a->m < 1 || a->b < 0 || a->b + a->m > OPK_MAX_RANK || a->slice < 1)
        return (int)cudaErrorInvalidValue;
    return by_esize(a->esize, [&](auto t) {
        gather_nd_kernel<decltype(t)>
            <<<blocks_for(a->n), kThreads, 0, (cudaStream_t)stream>>>(*a);
    });
}

extern "C" int opk_scatter(const opk_scatter_args *a, void *stream)
{
    if (a->elements) {
        if (a->n == 0)
            return 0;
        if (a->rank < 1 || a->rank > OPK_MAX_RANK || a->axis < 0 || a->axis >= a->rank)
            return (int)cudaErrorInvalidValue;
        return by_esize(a->esize, [&](auto t) {
            scatter_elements_kernel<decltype(t)>
                <<<blocks_for(a->n), kThreads, 0, (cudaStream_t)stream>>>(*a);
        });
    }
    if (a->y != a->x && a->n > 0) {
        int err = opk_device_copy(a->y, a->x, (size_t)a->n * (size_t)a->esize, stream);
        if (err)
            return err;
    }
    if (a->slice == 0 || a->tuples == 0)
        return 0;
    if (a->m < 1 || a->m > OPK_MAX_RANK)
        return (int)cudaErrorInvalidValue;
    return by_esize(a->esize, [&](auto t) {
        scatter_nd_kernel<decltype(t)>
            <<<blocks_for(a->slice), kThreads, 0, (cudaStream_t)stream>>>(*a);
    });
}

extern "C" int opk_nonzero(int32_t dtype, const void *x, int64_t n, const opk_dims_arg *d,
                           int64_t *y, int64_t *k, void *stream)
{
    if (d->rank < 1 || d->rank > OPK_MAX_RANK)
        return (int)cudaErrorInvalidValue;
    nonzero_kernel<<<1, kScanThreads, 0, (cudaStream_t)stream>>>(dtype, x, n, *d, y, k);
    return launched();
}

extern "C" int opk_compress(int32_t esize, const void *x, const void *cond, int64_t nc,
                            int64_t len, int64_t outer, int64_t inner, void *y,
                            int64_t *k, void *stream)
{
    return by_esize(esize, [&](auto t) {
        typedef decltype(t) T;
        compress_kernel<T><<<1, kScanThreads, 0, (cudaStream_t)stream>>>(
            (const T *)x, (const uint8_t *)cond, nc, len, outer, inner, (T *)y, k);
    });
}

extern "C" int opk_unique(const opk_unique_args *u, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    const int64_t m = u->m;
    int64_t *a = u->ws, *b = u->ws + m, *gid = u->ws + 2 * m, *gstart = u->ws + 3 * m;
    int err;
    if (m == 0) {
        // K = 0: nothing else to write.
        return (int)cudaMemsetAsync(u->k, 0, sizeof(int64_t), s);
    }
    uq_iota_kernel<<<blocks_for(m), kThreads, 0, s>>>(a, m);
    for (int64_t w = 1; w < m; w *= 2) {
        uq_merge_kernel<<<blocks_for(m), kThreads, 0, s>>>(*u, a, b, w);
        int64_t *t = a;
        a = b;
        b = t;
    }
    uq_groups_kernel<<<1, kScanThreads, 0, s>>>(*u, a, gid, gstart, u->k);
    if ((err = launched()))
        return err;
    int64_t *pos = NULL;
    if (!u->sorted) {
        // b is free: the marks, then (through inverse_indices as scratch)
        // the groups' output positions.
        uq_mark_kernel<<<blocks_for(m), kThreads, 0, s>>>(a, gstart, u->k, b, m);
        uq_mark_first_kernel<<<blocks_for(m), kThreads, 0, s>>>(a, gstart, u->k, b, m);
        uq_order_kernel<<<1, kScanThreads, 0, s>>>(b, u->yinv, m);
        uq_copy_kernel<<<blocks_for(m), kThreads, 0, s>>>(u->yinv, b, u->k, m);
        pos = b;
    }
    uq_outputs_kernel<<<blocks_for(m), kThreads, 0, s>>>(*u, a, gid, gstart, pos, u->k,
                                                         u->yi, u->yinv, u->ycnt);
    if ((err = launched()))
        return err;
    if (u->outer * u->inner == 0)
        return 0;
    return by_esize(u->esize, [&](auto t) {
        typedef decltype(t) T;
        uq_y_kernel<T><<<blocks_for(u->outer * m * u->inner), kThreads, 0, s>>>(
            *u, u->yi, u->k, (T *)u->y);
    });
}
