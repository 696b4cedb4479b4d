// CUDA reductions and scans of the built-ins (launch.h): the Reduce ops,
// ArgMax and ArgMin, CumSum, Hardmax and TopK. One thread per output
// element (Reduce) or per line along the axis (the others) runs the CPU
// kernel's loop in the CPU's order: maxima, ties and NaN come out as on
// the CPU, integer sums wrap alike, and double sums fold the same chunks
// (reduce.c's EW_CHUNK rows), so they round alike too. TopK ranks each
// element against its line (its rank is its output position), which gives
// the CPU heap's order exactly: the order is total.
#include <math.h>

#include <type_traits>

#include "ops/cuda/launch.cuh"
#include "ops/ew_kinds.h" // RD_*

namespace opk
{
namespace
{

constexpr int64_t kChunk = 256; // ops_ew.h's EW_CHUNK: the CPU folds rows in these

// An element as the CPU's ew_load_f64 / ew_load_i64 reads it.
__device__ double ld_f64(int32_t dtype, const void *x, int64_t i)
{
    if (dtype == DT_F32 || dtype == DT_F16 || dtype == DT_BF16)
        return (double)load_f(dtype, x, i);
    return (double)opk_int_at(dtype, x, i);
}

__device__ int64_t ld_i64(int32_t dtype, const void *x, int64_t i)
{
    return opk_int_at(dtype, x, i);
}

__device__ bool is_float(int32_t dtype)
{
    return dtype == DT_F32 || dtype == DT_F16 || dtype == DT_BF16;
}

__device__ void int_range(int32_t dtype, int64_t *lo, int64_t *hi)
{
    switch (dtype) {
    case DT_I8:
        *lo = INT8_MIN;
        *hi = INT8_MAX;
        break;
    case DT_U8:
        *lo = 0;
        *hi = UINT8_MAX;
        break;
    case DT_I32:
        *lo = INT32_MIN;
        *hi = INT32_MAX;
        break;
    default:
        *lo = INT64_MIN;
        *hi = INT64_MAX;
        break;
    }
}

// ew_store_f64 (floats rounded once; integers truncated and saturated, NaN
// 0) and ew_store_i64 (integers wrap) of one element.
__device__ void st_f64(int32_t dtype, void *y, int64_t i, double v)
{
    int64_t lo, hi, r;
    if (is_float(dtype)) {
        store_f(dtype, y, i, (float)v);
        return;
    }
    int_range(dtype, &lo, &hi);
    r = base_f64_to_int(v, lo, hi);
    if (dtype == DT_I8)
        ((int8_t *)y)[i] = (int8_t)r;
    else if (dtype == DT_U8)
        ((uint8_t *)y)[i] = (uint8_t)r;
    else if (dtype == DT_I32)
        ((int32_t *)y)[i] = (int32_t)r;
    else
        ((int64_t *)y)[i] = r;
}

__device__ void st_i64(int32_t dtype, void *y, int64_t i, int64_t v)
{
    const uint64_t u = (uint64_t)v;
    if (dtype == DT_I8)
        ((int8_t *)y)[i] = (int8_t)(uint8_t)u;
    else if (dtype == DT_U8)
        ((uint8_t *)y)[i] = (uint8_t)u;
    else if (dtype == DT_I32)
        ((int32_t *)y)[i] = (int32_t)(uint32_t)u;
    else
        ((int64_t *)y)[i] = v;
}

// reduce.c's G (per element) and C (combine) of each kind, in double: a
// NaN wins Max and Min; _rn so that nothing is fused.
__device__ double g_f64(int32_t kind, double v, double sh)
{
    switch (kind) {
    case RD_L1:
        return fabs(v);
    case RD_L2:
    case RD_SUM_SQUARE:
        return __dmul_rn(v, v);
    case RD_LSE_SHIFTED:
        return exp(__dsub_rn(v, sh));
    default:
        return v;
    }
}

__device__ double c_f64(int32_t kind, double a, double b)
{
    switch (kind) {
    case RD_MAX:
        return b > a || b != b ? b : a;
    case RD_MIN:
        return b < a || b != b ? b : a;
    case RD_PROD:
        return __dmul_rn(a, b);
    default:
        return __dadd_rn(a, b);
    }
}

// The same in int64, wrapping through uint64.
__device__ int64_t g_i64(int32_t kind, int64_t v)
{
    switch (kind) {
    case RD_L1:
        return v < 0 ? (int64_t)(0 - (uint64_t)v) : v;
    case RD_SUM_SQUARE:
        return (int64_t)((uint64_t)v * (uint64_t)v);
    default:
        return v;
    }
}

__device__ int64_t c_i64(int32_t kind, int64_t a, int64_t b)
{
    switch (kind) {
    case RD_MAX:
        return b > a ? b : a;
    case RD_MIN:
        return b < a ? b : a;
    case RD_PROD:
        return (int64_t)((uint64_t)a * (uint64_t)b);
    default:
        return (int64_t)((uint64_t)a + (uint64_t)b);
    }
}

// One pass of `kind` over output element o's set, from acc: the reduced
// runs in memory order; when the innermost run is reduced, its rows are
// folded in chunks of kChunk, each chunk from its first element and then
// combined into acc (reduce.c's RD_ROW), else each element is combined
// into acc. T is double or int64_t.
template <class T>
__device__ T fold(const opk_reduce_args &a, int32_t kind, int64_t o, T acc, double sh)
{
    int64_t stride[OPK_MAX_RANK], base = 0, nred = 1, s = 1, q = o;
    const int32_t last = a.m - 1;
    const int inner_red = a.red[last];
    const int64_t len = inner_red ? a.d[last] : 1;
    for (int32_t k = a.m - 1; k >= 0; k--) {
        stride[k] = s;
        s *= a.d[k];
    }
    // The kept runs' coordinates of o (row-major over the kept runs).
    for (int32_t k = a.m - 1; k >= 0; k--)
        if (!a.red[k]) {
            base += q % a.d[k] * stride[k];
            q /= a.d[k];
        } else if (k != last) {
            nred *= a.d[k];
        }
    for (int64_t r = 0; r < nred; r++) {
        // The r-th combination of the outer reduced runs, row-major.
        int64_t off = base, t = r;
        for (int32_t k = last - (inner_red ? 1 : 0); k >= 0; k--)
            if (a.red[k]) {
                off += t % a.d[k] * stride[k];
                t /= a.d[k];
            }
        if (!inner_red) {
            if (a.in_double)
                acc = (T)c_f64(kind, (double)acc,
                               g_f64(kind, ld_f64(a.dtype, a.x, off), sh));
            else
                acc =
                    (T)c_i64(kind, (int64_t)acc, g_i64(kind, ld_i64(a.dtype, a.x, off)));
            continue;
        }
        for (int64_t j = 0; j < len; j += kChunk) {
            const int64_t n = len - j < kChunk ? len - j : kChunk;
            if (a.in_double) {
                double c = g_f64(kind, ld_f64(a.dtype, a.x, off + j), sh);
                for (int64_t i = 1; i < n; i++)
                    c = c_f64(kind, c,
                              g_f64(kind, ld_f64(a.dtype, a.x, off + j + i), sh));
                acc = (T)c_f64(kind, (double)acc, c);
            } else {
                int64_t c = g_i64(kind, ld_i64(a.dtype, a.x, off + j));
                for (int64_t i = 1; i < n; i++)
                    c = c_i64(kind, c, g_i64(kind, ld_i64(a.dtype, a.x, off + j + i)));
                acc = (T)c_i64(kind, (int64_t)acc, c);
            }
        }
    }
    return acc;
}

__global__ void reduce_kernel(opk_reduce_args a)
{
    int64_t lo, hi;
    int_range(a.dtype, &lo, &hi);
    OPK_FOR(o, a.nout)
    {
        if (a.in_double) {
            double acc = a.kind == RD_PROD ? 1.0 : 0.0, sh = 0.0;
            if (a.kind == RD_MAX || a.kind == RD_MIN)
                acc = is_float(a.dtype) ? (a.kind == RD_MAX ? -INFINITY : INFINITY)
                                        : (double)(a.kind == RD_MAX ? lo : hi);
            if (a.kind == RD_LOG_SUM_EXP) {
                // The maximum, then the sum of e^(x - max) (a finite shift).
                sh = a.empty ? -INFINITY : fold<double>(a, RD_MAX, o, -INFINITY, 0.0);
                sh = isinf(sh) ? 0.0 : sh;
                if (!a.empty)
                    acc = fold<double>(a, RD_LSE_SHIFTED, o, acc, sh);
            } else if (!a.empty) {
                acc = fold<double>(a, a.kind, o, acc, 0.0);
            }
            switch (a.kind) {
            case RD_MEAN:
                acc = __ddiv_rn(acc, (double)a.count);
                break;
            case RD_L2:
                acc = sqrt(acc);
                break;
            case RD_LOG_SUM:
                acc = log(acc);
                break;
            case RD_LOG_SUM_EXP:
                acc = __dadd_rn(sh, log(acc));
                break;
            default:
                break;
            }
            st_f64(a.dtype, a.y, o, acc);
        } else {
            int64_t acc = a.kind == RD_PROD  ? 1
                          : a.kind == RD_MAX ? lo
                          : a.kind == RD_MIN ? hi
                                             : 0;
            if (!a.empty)
                acc = fold<int64_t>(a, a.kind, o, acc, 0.0);
            if (a.kind == RD_MEAN)
                acc = a.count ? acc / a.count : 0;
            st_i64(a.dtype, a.y, o, acc);
        }
    }
}

// argmax.c's ARG_BETTER: v replaces the best b.
template <class T> __device__ bool arg_better(T v, T b, int32_t is_min, int32_t last)
{
    if (last)
        return (!is_min ? v >= b : v <= b) || v != v;
    return (!is_min ? v > b : v < b) || (v != v && b == b);
}

// A key as argmax.c and topk.c read it: floats in double, integers in
// int64 (one template, not specializations, which nvcc exports).
template <class T> __device__ T ld_key(int32_t dtype, const void *x, int64_t i)
{
    if constexpr (std::is_same<T, double>::value)
        return ld_f64(dtype, x, i);
    else
        return ld_i64(dtype, x, i);
}

// The first element is the best so far; each next one replaces it when
// better (argmax.c: floats in double, integers in int64).
template <class T>
__global__ void argmax_kernel(int32_t dtype, const void *x, int64_t *y, int64_t outer,
                              int64_t n, int64_t inner, int32_t is_min, int32_t last)
{
    const int64_t lines = outer * inner;
    OPK_FOR(l, lines)
    {
        const int64_t base = l / inner * n * inner + l % inner;
        T b = ld_key<T>(dtype, x, base);
        int64_t bi = 0;
        for (int64_t k = 1; k < n; k++) {
            const T v = ld_key<T>(dtype, x, base + k * inner);
            if (arg_better(v, b, is_min, last)) {
                b = v;
                bi = k;
            }
        }
        y[l] = bi;
    }
}

// cumsum.c: floats summed in float32 (each output rounded to the dtype),
// integers in int64 wrapping.
__global__ void cumsum_kernel(int32_t dtype, const void *x, void *y, int64_t outer,
                              int64_t n, int64_t inner, int32_t exclusive,
                              int32_t reverse)
{
    const int64_t lines = outer * inner;
    const bool flt = is_float(dtype);
    OPK_FOR(l, lines)
    {
        const int64_t base = l / inner * n * inner + l % inner;
        float fa = 0.0f;
        int64_t ia = 0;
        for (int64_t t = 0; t < n; t++) {
            const int64_t i = base + (reverse ? n - 1 - t : t) * inner;
            if (flt) {
                const float v = load_f(dtype, x, i);
                const float before = fa;
                fa = __fadd_rn(fa, v);
                store_f(dtype, y, i, exclusive ? before : fa);
            } else {
                const int64_t v = ld_i64(dtype, x, i), before = ia;
                ia = (int64_t)((uint64_t)ia + (uint64_t)v);
                st_i64(dtype, y, i, exclusive ? before : ia);
            }
        }
    }
}

// hardmax.c's hm_argmax (in double; the first NaN stops the search), then
// the line written whole: 1 there, 0 elsewhere.
__global__ void hardmax_kernel(int32_t dtype, const void *x, void *y, int64_t outer,
                               int64_t n, int64_t inner)
{
    const int64_t lines = outer * inner;
    OPK_FOR(l, lines)
    {
        const int64_t base = l / inner * n * inner + l % inner;
        double mx = (double)load_f(dtype, x, base);
        int64_t best = 0;
        for (int64_t k = 1; k < n && mx == mx; k++) {
            const double v = (double)load_f(dtype, x, base + k * inner);
            if (v > mx || v != v) {
                mx = v;
                best = k;
            }
        }
        for (int64_t k = 0; k < n; k++)
            store_f(dtype, y, base + k * inner, k == best ? 1.0f : 0.0f);
    }
}

// topk.c's order: a NaN above every number and equal to another NaN.
template <class T> __device__ bool tk_gt(T x, T z)
{
    return x > z || (x != x && z == z);
}
template <class T> __device__ bool tk_eq(T x, T z)
{
    return x == z || (x != x && z != z);
}

// Element i's rank in its line: the elements it ranks below (topk.c's
// TOPK_WORSE of i against each j). A rank under K is its output position.
template <class T>
__global__ void topk_kernel(int32_t dtype, int32_t es, const void *x, void *vals,
                            int64_t *idx, int64_t outer, int64_t n, int64_t inner,
                            int64_t K, int32_t largest)
{
    const int64_t total = outer * inner * n;
    OPK_FOR(e, total)
    {
        const int64_t i = e % n, l = e / n;
        const int64_t s = l / inner, j0 = l % inner;
        const int64_t base = s * n * inner + j0;
        const T ki = ld_key<T>(dtype, x, base + i * inner);
        int64_t rank = 0;
        for (int64_t j = 0; j < n && rank < K; j++) {
            const T kj = ld_key<T>(dtype, x, base + j * inner);
            const bool worse =
                (largest ? tk_gt(kj, ki) : tk_gt(ki, kj)) || (tk_eq(ki, kj) && i > j);
            rank += worse;
        }
        if (rank < K) {
            const int64_t src = base + i * inner, dst = (s * K + rank) * inner + j0;
            idx[dst] = i;
            // The element's bytes, as the CPU's memcpy.
            switch (es) {
            case 1:
                ((uint8_t *)vals)[dst] = ((const uint8_t *)x)[src];
                break;
            case 2:
                ((uint16_t *)vals)[dst] = ((const uint16_t *)x)[src];
                break;
            case 4:
                ((uint32_t *)vals)[dst] = ((const uint32_t *)x)[src];
                break;
            default:
                ((uint64_t *)vals)[dst] = ((const uint64_t *)x)[src];
                break;
            }
        }
    }
}

int esize_of(int32_t dtype)
{
    switch (dtype) {
    case DT_I8:
    case DT_U8:
    case DT_BOOL:
        return 1;
    case DT_F16:
    case DT_BF16:
        return 2;
    case DT_I64:
        return 8;
    default:
        return 4;
    }
}

bool host_is_float(int32_t dtype)
{
    return dtype == DT_F32 || dtype == DT_F16 || dtype == DT_BF16;
}

} // namespace
} // namespace opk

using namespace opk;

extern "C" int opk_reduce(const opk_reduce_args *a, void *stream)
{
    if (a->nout <= 0)
        return 0;
    reduce_kernel<<<blocks_for(a->nout), kThreads, 0, (cudaStream_t)stream>>>(*a);
    return launched();
}

extern "C" int opk_argmax(int32_t dtype, const void *x, int64_t *y, int64_t outer,
                          int64_t n, int64_t inner, int32_t is_min, int32_t last,
                          void *stream)
{
    const int64_t lines = outer * inner;
    if (lines <= 0 || n <= 0)
        return 0;
    if (host_is_float(dtype))
        argmax_kernel<double><<<blocks_for(lines), kThreads, 0, (cudaStream_t)stream>>>(
            dtype, x, y, outer, n, inner, is_min, last);
    else
        argmax_kernel<int64_t><<<blocks_for(lines), kThreads, 0, (cudaStream_t)stream>>>(
            dtype, x, y, outer, n, inner, is_min, last);
    return launched();
}

extern "C" int opk_cumsum(int32_t dtype, const void *x, void *y, int64_t outer, int64_t n,
                          int64_t inner, int32_t exclusive, int32_t reverse, void *stream)
{
    const int64_t lines = outer * inner;
    if (lines <= 0 || n <= 0)
        return 0;
    cumsum_kernel<<<blocks_for(lines), kThreads, 0, (cudaStream_t)stream>>>(
        dtype, x, y, outer, n, inner, exclusive, reverse);
    return launched();
}

extern "C" int opk_hardmax(int32_t dtype, const void *x, void *y, int64_t outer,
                           int64_t n, int64_t inner, void *stream)
{
    const int64_t lines = outer * inner;
    if (lines <= 0 || n <= 0)
        return 0;
    hardmax_kernel<<<blocks_for(lines), kThreads, 0, (cudaStream_t)stream>>>(
        dtype, x, y, outer, n, inner);
    return launched();
}

extern "C" int opk_topk(int32_t dtype, const void *x, void *values, int64_t *indices,
                        int64_t outer, int64_t n, int64_t inner, int64_t K,
                        int32_t largest, void *stream)
{
    const int64_t total = outer * inner * n;
    if (total <= 0 || K <= 0)
        return 0;
    if (host_is_float(dtype))
        topk_kernel<double><<<blocks_for(total), kThreads, 0, (cudaStream_t)stream>>>(
            dtype, esize_of(dtype), x, values, indices, outer, n, inner, K, largest);
    else
        topk_kernel<int64_t><<<blocks_for(total), kThreads, 0, (cudaStream_t)stream>>>(
            dtype, esize_of(dtype), x, values, indices, outer, n, inner, K, largest);
    return launched();
}
