// CUDA kernels of the built-ins that move data or make it from shapes
// (launch.h): Gather, GatherElements, Slice, Concat, ConstantOfShape's
// fill, Shape's values, Range. A kernel cannot fail the run, so an index
// that the CPU would refuse reads nothing and gives zeros (DESIGN-NOTES).
#include <string.h>

#include "ops/cuda/launch.cuh"

namespace opk
{
namespace
{

__device__ int64_t load_index(int32_t dtype, const void *p, int64_t i)
{
    return dtype == DT_I32 ? (int64_t)((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}

// Element i of a value array of Slice (int32 or int64).
__device__ int64_t load_value(int32_t dtype, const void *p, int64_t i)
{
    return load_index(dtype, p, i);
}

template <typename T>
__global__ void gather_kernel(const T *x, const void *idx, int32_t idx_dtype, T *y,
                              int64_t outer, int64_t d, int64_t ni, int64_t inner)
{
    const int64_t n = outer * ni * inner;
    OPK_FOR(e, n)
    {
        int64_t p = e % inner, r = e / inner, k = r % ni, b = r / ni;
        int64_t i = load_index(idx_dtype, idx, k);
        i = i < 0 ? i + d : i;
        y[e] = i >= 0 && i < d ? x[(b * d + i) * inner + p] : (T)0;
    }
}

__global__ void gather_elements_kernel(opk_gather_elements_args a)
{
    OPK_FOR(e, a.n)
    {
        int64_t rest = e, src = 0, stride = 1, v = 0;
        int ok = 1;
        v = load_index(a.idx_dtype, a.idx, e);
        if (v < 0)
            v += a.ddims[a.axis];
        ok = v >= 0 && v < a.ddims[a.axis];
        // Coordinates of e in the indices' dims; data's offset with the
        // axis coordinate replaced by the index.
        for (int32_t k = a.rank - 1; k >= 0; k--) {
            int64_t c = rest % a.idims[k];
            rest /= a.idims[k];
            src += (k == a.axis ? v : c) * stride;
            stride *= a.ddims[k];
        }
        switch (a.esize) {
        case 1:
            ((uint8_t *)a.y)[e] = ok ? ((const uint8_t *)a.x)[src] : 0;
            break;
        case 2:
            ((uint16_t *)a.y)[e] = ok ? ((const uint16_t *)a.x)[src] : 0;
            break;
        case 4:
            ((uint32_t *)a.y)[e] = ok ? ((const uint32_t *)a.x)[src] : 0;
            break;
        default:
            ((uint64_t *)a.y)[e] = ok ? ((const uint64_t *)a.x)[src] : 0;
            break;
        }
    }
}

// R: the rank, a constant (1 to 4: the per-axis loops unroll and the
// starts, steps and strides stay in registers, where indexed by a
// variable they went through local memory), or 0: a.rank's.
template <typename T, int R> __global__ void slice_kernel(opk_slice_args a)
{
    const int32_t rank = R > 0 ? R : a.rank;
    int64_t start[OPK_MAX_RANK], step[OPK_MAX_RANK], stride[OPK_MAX_RANK], vol = 1;
#pragma unroll
    for (int32_t d = rank - 1; d >= 0; d--) {
        start[d] = 0;
        step[d] = 1;
        stride[d] = vol;
        vol *= a.ddims[d];
    }
    // Every thread reads the (at most 8) entries: cheaper than a launch.
    // Each goes through opk_slice_entry on one axis's own pair of slots,
    // so that the arrays are indexed by constants only (registers).
    for (int32_t k = 0; k < a.nb; k++) {
        const int64_t ax = a.axes ? load_value(a.vdtype, a.axes, k) : k;
        const int64_t s0 = load_value(a.vdtype, a.starts, k);
        const int64_t st = a.steps ? load_value(a.vdtype, a.steps, k) : 1;
        const int64_t axn = ax < 0 ? ax + rank : ax;
#pragma unroll
        for (int32_t d = 0; d < (R > 0 ? R : OPK_MAX_RANK); d++) {
            int64_t one_start[1] = {start[d]}, one_step[1] = {step[d]};
            if (d >= rank || axn != d || ax < -rank || ax >= rank)
                continue;
            // The axis as the only one of a rank-1 view: the same rules.
            if (opk_slice_entry(1, a.ddims + d, 0, s0, st, one_start, one_step)) {
                start[d] = one_start[0];
                step[d] = one_step[0];
            }
        }
    }
    OPK_FOR(e, a.n)
    {
        int64_t rest = e, src = 0;
        int ok = 1;
#pragma unroll
        for (int32_t d = rank - 1; d >= 0; d--) {
            int64_t c = rest % a.odims[d], p;
            rest /= a.odims[d];
            p = start[d] + c * step[d];
            ok &= p >= 0 && p < a.ddims[d];
            src += p * stride[d];
        }
        ((T *)a.y)[e] = ok ? ((const T *)a.x)[src] : (T)0;
    }
}

// Concat and Split as moves of rows: the parts of a row (part k at
// column off[k], len[k] wide, in units of T) between the one wide tensor
// (whole rows of `row` units) and the nb narrow ones. Block columns walk a
// row, block rows (grid y) the rows; a thread finds its part among at most
// OPK_MAX_CONCAT offsets. split: from the wide one to the parts.
struct rows_args {
    int32_t nb, split;
    const void *src[OPK_MAX_CONCAT]; // concat: the parts; split: src[0]
    void *dst[OPK_MAX_CONCAT];       // concat: dst[0]; split: the parts
    int64_t len[OPK_MAX_CONCAT], off[OPK_MAX_CONCAT];
    int64_t outer, row;
};

template <typename T> __global__ void rows_kernel(rows_args a)
{
    const int64_t j0 = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j0 >= a.row)
        return;
    int32_t k = 0;
    while (k + 1 < a.nb && j0 >= a.off[k + 1])
        k++;
    const int64_t j = j0 - a.off[k];
    for (int64_t b = blockIdx.y; b < a.outer; b += gridDim.y) {
        if (a.split)
            ((T *)a.dst[k])[b * a.len[k] + j] = ((const T *)a.src[0])[b * a.row + j0];
        else
            ((T *)a.dst[0])[b * a.row + j0] = ((const T *)a.src[k])[b * a.len[k] + j];
    }
}

// The widest unit of 16, 8, 4, 2 or 1 bytes dividing the element size
// times every length, offset and the row, and every address.
static int rows_unit(const rows_args &a, int32_t esize)
{
    uint64_t bits = (uint64_t)(a.row * esize) | (uintptr_t)a.src[0] | (uintptr_t)a.dst[0];
    for (int32_t k = 0; k < a.nb; k++)
        bits |= (uint64_t)(a.len[k] * esize) | (uint64_t)(a.off[k] * esize) |
                (uintptr_t)(a.split ? a.dst[k] : a.src[k]);
    for (int u = 16; u > 1; u /= 2)
        if (bits % (uint64_t)u == 0)
            return u;
    return 1;
}

static int rows_move(rows_args a, int32_t esize, void *stream)
{
    const int w = rows_unit(a, esize), u = w < esize ? esize : w;
    const int64_t per = u / esize; // elements a unit (esize divides u: both powers of 2)
    if (a.outer * a.row == 0)
        return 0;
    a.row /= per;
    for (int32_t k = 0; k < a.nb; k++)
        a.len[k] /= per, a.off[k] /= per;
    if (a.row > (int64_t)kThreads * 0x7fffffff)
        return (int)cudaErrorInvalidValue;
    const dim3 grid((unsigned)((a.row + kThreads - 1) / kThreads),
                    (unsigned)(a.outer < 65535 ? a.outer : 65535));
    switch (u) {
    case 16:
        rows_kernel<uint4><<<grid, kThreads, 0, (cudaStream_t)stream>>>(a);
        break;
    case 8:
        rows_kernel<uint64_t><<<grid, kThreads, 0, (cudaStream_t)stream>>>(a);
        break;
    case 4:
        rows_kernel<uint32_t><<<grid, kThreads, 0, (cudaStream_t)stream>>>(a);
        break;
    case 2:
        rows_kernel<uint16_t><<<grid, kThreads, 0, (cudaStream_t)stream>>>(a);
        break;
    default:
        rows_kernel<uint8_t><<<grid, kThreads, 0, (cudaStream_t)stream>>>(a);
        break;
    }
    return launched();
}

template <typename T> __global__ void fill_kernel(T v, T *y, int64_t n)
{
    OPK_FOR(i, n)
    y[i] = v;
}

struct values8 {
    int64_t v[OPK_MAX_RANK];
};

__global__ void values_kernel(values8 v, int64_t *y, int32_t n)
{
    OPK_FOR(i, n)
    y[i] = v.v[i];
}

// start and delta from device memory, or (start == NULL, delta == NULL)
// the values hs and hd the host read from a shape input's host memory.
__global__ void range_kernel(int32_t dtype, const void *start, const void *delta, void *y,
                             int64_t n, int64_t hs, int64_t hd)
{
    const int64_t s = start ? load_index(dtype, start, 0) : hs;
    const int64_t d = delta ? load_index(dtype, delta, 0) : hd;
    OPK_FOR(i, n)
    {
        // In int64, wrapping as the CPU's (s + i * d) does for shape values.
        int64_t v = (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)d);
        if (dtype == DT_I64)
            ((int64_t *)y)[i] = v;
        else
            ((int32_t *)y)[i] = (int32_t)v;
    }
}

} // namespace
} // namespace opk

using namespace opk;

extern "C" int opk_gather(int32_t esize, const void *x, const void *idx,
                          int32_t idx_dtype, void *y, int64_t outer, int64_t d,
                          int64_t ni, int64_t inner, void *stream)
{
    const int64_t n = outer * ni * inner;
    if (n == 0)
        return 0;
    return by_esize(esize, [&](auto t) {
        typedef decltype(t) T;
        gather_kernel<T><<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(
            (const T *)x, idx, idx_dtype, (T *)y, outer, d, ni, inner);
    });
}

extern "C" int opk_gather_elements(const opk_gather_elements_args *a, void *stream)
{
    if (a->n == 0)
        return 0;
    if (a->rank < 1 || a->rank > OPK_MAX_RANK || a->axis < 0 || a->axis >= a->rank ||
        (a->esize != 1 && a->esize != 2 && a->esize != 4 && a->esize != 8))
        return (int)cudaErrorInvalidValue;
    gather_elements_kernel<<<blocks_for(a->n), kThreads, 0, (cudaStream_t)stream>>>(*a);
    return launched();
}

extern "C" int opk_slice(const opk_slice_args *a, void *stream)
{
    if (a->n == 0)
        return 0;
    if (a->rank < 1 || a->rank > OPK_MAX_RANK || a->nb < 0 || a->nb > OPK_SLICE_MAX)
        return (int)cudaErrorInvalidValue;
    return by_esize(a->esize, [&](auto t) {
        typedef decltype(t) T;
        const unsigned g = (unsigned)blocks_for(a->n);
        cudaStream_t s = (cudaStream_t)stream;
        switch (a->rank) {
        case 1:
            slice_kernel<T, 1><<<g, kThreads, 0, s>>>(*a);
            break;
        case 2:
            slice_kernel<T, 2><<<g, kThreads, 0, s>>>(*a);
            break;
        case 3:
            slice_kernel<T, 3><<<g, kThreads, 0, s>>>(*a);
            break;
        case 4:
            slice_kernel<T, 4><<<g, kThreads, 0, s>>>(*a);
            break;
        default:
            slice_kernel<T, 0><<<g, kThreads, 0, s>>>(*a);
            break;
        }
    });
}

// The parts' shape of either op into r (pointers left to the caller); 0,
// or the error for arguments no launch could take.
static int rows_parts(int32_t esize, int32_t nb, const int64_t *len, const int64_t *off,
                      int64_t outer, int64_t row, rows_args *r)
{
    if (nb < 1 || nb > OPK_MAX_CONCAT ||
        (esize != 1 && esize != 2 && esize != 4 && esize != 8))
        return (int)cudaErrorInvalidValue;
    memset(r, 0, sizeof *r);
    r->nb = nb;
    memcpy(r->len, len, sizeof(int64_t) * (size_t)nb);
    memcpy(r->off, off, sizeof(int64_t) * (size_t)nb);
    r->outer = outer;
    r->row = row;
    return 0;
}

extern "C" int opk_concat(const opk_concat_args *a, void *stream)
{
    rows_args r;
    int err;
    if (a->outer * a->row == 0)
        return 0;
    if ((err = rows_parts(a->esize, a->nb, a->len, a->off, a->outer, a->row, &r)) != 0)
        return err;
    r.dst[0] = a->y;
    for (int32_t k = 0; k < a->nb; k++)
        r.src[k] = a->x[k];
    return rows_move(r, a->esize, stream);
}

extern "C" int opk_split(const opk_split_args *a, void *stream)
{
    rows_args r;
    int err;
    if (a->outer * a->row == 0)
        return 0;
    if ((err = rows_parts(a->esize, a->nb, a->len, a->off, a->outer, a->row, &r)) != 0)
        return err;
    r.split = 1;
    r.src[0] = a->x;
    for (int32_t k = 0; k < a->nb; k++)
        r.dst[k] = a->y[k];
    return rows_move(r, a->esize, stream);
}

extern "C" int opk_fill(int32_t esize, uint64_t pattern, void *y, int64_t n, void *stream)
{
    if (n == 0)
        return 0;
    return by_esize(esize, [&](auto t) {
        typedef decltype(t) T;
        fill_kernel<T>
            <<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>((T)pattern, (T *)y, n);
    });
}

extern "C" int opk_values(const int64_t *v, int32_t n, void *y, void *stream)
{
    values8 vals;
    if (n == 0)
        return 0;
    if (n < 0 || n > OPK_MAX_RANK)
        return (int)cudaErrorInvalidValue;
    for (int32_t i = 0; i < OPK_MAX_RANK; i++)
        vals.v[i] = i < n ? v[i] : 0;
    values_kernel<<<1, OPK_MAX_RANK, 0, (cudaStream_t)stream>>>(vals, (int64_t *)y, n);
    return launched();
}

extern "C" int opk_range(int32_t dtype, const void *start, const void *delta,
                         int64_t host_start, int64_t host_delta, void *y, int64_t n,
                         void *stream)
{
    if (n == 0)
        return 0;
    if (dtype != DT_I32 && dtype != DT_I64)
        return (int)cudaErrorInvalidValue;
    range_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(
        dtype, start, delta, y, n, host_start, host_delta);
    return launched();
}
