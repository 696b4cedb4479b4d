// CUDA kernels of the elementwise built-ins (launch.h): broadcast
// arithmetic, comparisons and logic, Where, the unary functions, Cast and
// the strided copy. Each computes what the CPU op's file says, element by
// element; every index is 64-bit and every loop grid-strided.
#include <math.h>

#include "ops/ew_kinds.h"
#include "ops/cuda/launch.cuh"

namespace opk
{
namespace
{

// ---- arithmetic ------------------------------------------------------------

__device__ float arith_f(int32_t kind, float a, float b)
{
    float r;
    switch (kind) {
    case OPK_ADD:
        return a + b;
    case OPK_SUB:
        return a - b;
    case OPK_MUL:
        return a * b;
    case OPK_DIV:
        return a / b;
    case OPK_MOD: // numpy.mod: the divisor's sign
        r = fmodf(a, b);
        return r != 0 && (r < 0) != (b < 0) ? r + b : r;
    case OPK_FMOD:
        return fmodf(a, b);
    case OPK_MAX: // a NaN on either side wins
        return a != a || a > b ? a : b;
    case OPK_MIN:
        return a != a || a < b ? a : b;
    default: // PRelu
        return a < 0 ? a * b : a;
    }
}

template <typename T> struct uns;
template <> struct uns<int8_t> {
    typedef uint8_t U;
};
template <> struct uns<uint8_t> {
    typedef uint8_t U;
};
template <> struct uns<int32_t> {
    typedef uint32_t U;
};
template <> struct uns<int64_t> {
    typedef uint64_t U;
};

// v < 0, spelled per type so that uint8 needs no comparison that is
// never true.
__device__ inline bool neg(int8_t v)
{
    return v < 0;
}
__device__ inline bool neg(uint8_t)
{
    return false;
}
__device__ inline bool neg(int32_t v)
{
    return v < 0;
}
__device__ inline bool neg(int64_t v)
{
    return v < 0;
}

// Integers wrap (through the unsigned type); a shift by the width or more
// gives 0 (BitShift, uint8 only).
template <typename T> __device__ T arith_i(int32_t kind, T a, T b)
{
    typedef typename uns<T>::U U;
    const T zero = 0;
    const int bits = 8 * (int)sizeof(T);
    switch (kind) {
    case OPK_ADD:
        return (T)((U)a + (U)b);
    case OPK_SUB:
        return (T)((U)a - (U)b);
    case OPK_MUL:
        return (T)((U)a * (U)b);
    case OPK_MAX:
        return a > b ? a : b;
    case OPK_MIN:
        return a < b ? a : b;
    case OPK_SHL:
        return neg(b) || (int64_t)b >= bits ? zero : (T)((U)a << (int)b);
    case OPK_SHR:
        return neg(b) || (int64_t)b >= bits ? zero : (T)((U)a >> (int)b);
    case OPK_DIV: // binary.c's: truncated; by -1 wraps; by 0 the CPU fails
    case OPK_MOD: // numpy.mod (the divisor's sign)
    case OPK_FMOD: {
        T r;
        if (b == zero)
            return zero; // the CPU fails the run; a kernel cannot (DESIGN-NOTES)
        if (neg((T)-1) && b == (T)-1)
            r = kind == OPK_DIV ? (T)(zero - (U)a) : zero;
        else
            r = kind == OPK_DIV ? (T)(a / b) : (T)(a % b);
        if (kind == OPK_MOD && r != zero && neg(r) != neg(b))
            r = (T)((U)r + (U)b);
        return r;
    }
    default: // PRelu
        return neg(a) ? (T)((U)a * (U)b) : a;
    }
}

template <typename T> __device__ uint8_t compare(int32_t kind, T a, T b)
{
    switch (kind) {
    case OPK_EQUAL:
        return a == b;
    case OPK_LESS:
        return a < b;
    case OPK_LESS_EQUAL:
        return a <= b;
    case OPK_GREATER:
        return a > b;
    default:
        return a >= b;
    }
}

// Bools by truth value (any non-zero byte is true).
__device__ uint8_t logic(int32_t kind, uint8_t a, uint8_t b)
{
    int x = a != 0, z = b != 0;
    switch (kind) {
    case OPK_EQUAL:
        return x == z;
    case OPK_AND:
        return x && z;
    case OPK_OR:
        return x || z;
    default:
        return x != z;
    }
}

// The integers as their own codec (launch.cuh's cf32 and kin for the
// floats): values computed in V, stored as S.
template <typename T> struct cint {
    typedef T S;
    typedef T V;
    static __device__ T ld(T v) { return v; }
    static __device__ T st(T v) { return v; }
};

__device__ inline float arith(int32_t kind, float a, float b)
{
    return arith_f(kind, a, b);
}
template <typename T> __device__ T arith(int32_t kind, T a, T b)
{
    return arith_i<T>(kind, a, b);
}

template <class C>
__global__ void binary_kernel(int32_t kind, opk_bcast b, const typename C::S *a,
                              const typename C::S *c, typename C::S *y, int64_t n)
{
    OPK_FOR(i, n)
    {
        int64_t off[OPK_MAX_IN];
        offsets(b, i, off);
        y[i] = C::st(arith(kind, C::ld(a[off[0]]), C::ld(c[off[1]])));
    }
}

template <class C>
__global__ void compare_kernel(int32_t kind, opk_bcast b, const typename C::S *a,
                               const typename C::S *c, uint8_t *y, int64_t n)
{
    OPK_FOR(i, n)
    {
        int64_t off[OPK_MAX_IN];
        offsets(b, i, off);
        y[i] = compare(kind, C::ld(a[off[0]]), C::ld(c[off[1]]));
    }
}

__global__ void logic_kernel(int32_t kind, opk_bcast b, const uint8_t *a,
                             const uint8_t *c, uint8_t *y, int64_t n)
{
    OPK_FOR(i, n)
    {
        int64_t off[OPK_MAX_IN];
        offsets(b, i, off);
        y[i] = logic(kind, a[off[0]], c[off[1]]);
    }
}

template <class C>
int launch_binary(int32_t kind, const opk_bcast &b, const void *a, const void *c, void *y,
                  int64_t n, cudaStream_t s)
{
    typedef typename C::S S;
    if (kind >= OPK_EQUAL)
        compare_kernel<C><<<blocks_for(n), kThreads, 0, s>>>(
            kind, b, (const S *)a, (const S *)c, (uint8_t *)y, n);
    else
        binary_kernel<C><<<blocks_for(n), kThreads, 0, s>>>(kind, b, (const S *)a,
                                                            (const S *)c, (S *)y, n);
    return launched();
}

// Integer Div and Mod as binary.c computes them; a zero divisor, which
// fails the CPU's run, gives 0 here (a kernel cannot fail the run).
template <typename T>
int launch_binary_i(int32_t kind, const opk_bcast &b, const void *a, const void *c,
                    void *y, int64_t n, cudaStream_t s)
{
    return launch_binary<cint<T>>(kind, b, a, c, y, n, s);
}

// ---- Where -----------------------------------------------------------------

template <typename T>
__global__ void where_kernel(opk_bcast b, const uint8_t *cond, const T *x, const T *z,
                             T *y, int64_t n)
{
    OPK_FOR(i, n)
    {
        int64_t off[OPK_MAX_IN];
        offsets(b, i, off);
        y[i] = cond[off[0]] ? x[off[1]] : z[off[2]];
    }
}

// ---- the float functions ---------------------------------------------------

__device__ float softplus(float v)
{
    return v > 0.0f ? v + log1pf(expf(-v)) : log1pf(expf(v));
}

// GELU as x (1 - e) or x e with e = erfc(|x| / sqrt 2) / 2, so negative x
// do not cancel (gelu.c's formulation); NaN passes as itself.
__device__ float gelu_erf(float v)
{
    float e = 0.5f * erfcf(fabsf(v) * 0.70710678118654752f);
    if (v != v)
        return v;
    return v * (v < 0.0f ? e : 1.0f - e);
}

__device__ float unary_math(int32_t kind, float v, float a, float b, float g,
                            int32_t approximate)
{
    float e, h;
    switch (kind) {
    case UM_EXP:
        return expf(v);
    case UM_LOG:
        return logf(v);
    case UM_SQRT:
        return sqrtf(v);
    case UM_RECIPROCAL:
        return 1.0f / v;
    case UM_FLOOR:
        return floorf(v);
    case UM_CEIL:
        return ceilf(v);
    case UM_ROUND:
        return rintf(v);
    case UM_SIN:
        return sinf(v);
    case UM_COS:
        return cosf(v);
    case UM_TAN:
        return tanf(v);
    case UM_ASIN:
        return asinf(v);
    case UM_ACOS:
        return acosf(v);
    case UM_ATAN:
        return atanf(v);
    case UM_SINH:
        return sinhf(v);
    case UM_COSH:
        return coshf(v);
    case UM_ASINH:
        return asinhf(v);
    case UM_ACOSH:
        return acoshf(v);
    case UM_ATANH:
        return atanhf(v);
    case UM_TANH:
        return tanhf(v);
    case UM_ERF:
        return erff(v);
    case UM_SIGMOID: // e^-|x| never overflows
        e = expf(-fabsf(v));
        return (v >= 0.0f ? 1.0f : e) / (1.0f + e);
    case UM_SOFTPLUS:
        return softplus(v);
    case UM_SOFTSIGN:
        return v / (1.0f + fabsf(v));
    case UM_MISH:
        return v * tanhf(softplus(v));
    case UM_GELU:
        if (approximate == 0)
            return gelu_erf(v);
        return 0.5f * v *
               (1.0f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
    case UM_ELU:
        return v < 0.0f ? a * expm1f(v) : v;
    case UM_SELU:
        return v <= 0.0f ? g * (a * expm1f(v)) : g * v;
    case UM_CELU:
        return v != v ? v : fmaxf(v, 0.0f) + fminf(0.0f, a * expm1f(v / a));
    case UM_LEAKY_RELU:
        return v < 0.0f ? a * v : v;
    case UM_THRESHOLDED_RELU:
        return v > a ? v : 0.0f;
    case UM_HARD_SIGMOID:
    case UM_HARD_SWISH:
        // The CPU rounds the product and the sum apart (no fused
        // multiply-add); comparisons let NaN through.
        h = __fadd_rn(__fmul_rn(a, v), b);
        h = h < 0.0f ? 0.0f : h > 1.0f ? 1.0f : h;
        return kind == UM_HARD_SWISH ? v * h : h;
    case UM_DIVIDE:
        return v / a;
    default:
        return v;
    }
}

template <class C>
__global__ void unary_math_kernel(int32_t kind, float a, float b, float g,
                                  int32_t approximate, const typename C::S *x,
                                  typename C::S *y, int64_t n)
{
    OPK_FOR(i, n)
    y[i] = C::st(unary_math(kind, C::ld(x[i]), a, b, g, approximate));
}

// ---- Clip ------------------------------------------------------------------

template <class C>
__global__ void clip_kernel(const typename C::S *x, typename C::S *y, int64_t n,
                            const typename C::S *plo, const typename C::S *phi,
                            typename C::V lo, typename C::V hi)
{
    if (plo)
        lo = C::ld(*plo);
    if (phi)
        hi = C::ld(*phi);
    OPK_FOR(i, n)
    {
        typename C::V v = C::ld(x[i]);
        v = v < lo ? lo : v; // comparisons let NaN through
        y[i] = C::st(v > hi ? hi : v);
    }
}

template <class C>
int launch_clip(const void *x, void *y, int64_t n, const void *lo, const void *hi,
                typename C::V dlo, typename C::V dhi, cudaStream_t s)
{
    typedef typename C::S S;
    clip_kernel<C><<<blocks_for(n), kThreads, 0, s>>>(
        (const S *)x, (S *)y, n, (const S *)lo, (const S *)hi, dlo, dhi);
    return launched();
}

// ---- Abs, Neg, Sign; Not, IsNaN, IsInf -------------------------------------

// 16-bit floats on their bits, exactly (unary.c): inf is +infinity's bits,
// one 1.0's.
__global__ void unary16_kernel(int32_t kind, const uint16_t *x, uint16_t *y, int64_t n,
                               uint16_t inf, uint16_t one)
{
    OPK_FOR(i, n)
    {
        uint16_t h = x[i], mag = (uint16_t)(h & 0x7FFFu);
        int number = mag != 0 && mag <= inf; // neither a zero nor NaN
        y[i] = kind == OPK_ABS   ? mag
               : kind == OPK_NEG ? (uint16_t)(h ^ 0x8000u)
               : number          ? (uint16_t)((h & 0x8000u) | one)
                                 : h;
    }
}

__global__ void unary_f32_kernel(int32_t kind, const float *x, float *y, int64_t n)
{
    OPK_FOR(i, n)
    {
        // Abs and Neg on the bits, as the CPU's are: float arithmetic on the
        // GPU would give NaN its canonical payload.
        float v = x[i];
        y[i] = kind == OPK_ABS   ? __uint_as_float(__float_as_uint(v) & 0x7FFFFFFFu)
               : kind == OPK_NEG ? __uint_as_float(__float_as_uint(v) ^ 0x80000000u)
               : v > 0           ? 1.0f
               : v < 0           ? -1.0f
                                 : v;
    }
}

template <typename T>
__global__ void unary_int_kernel(int32_t kind, const T *x, T *y, int64_t n)
{
    typedef typename uns<T>::U U;
    const T zero = 0;
    OPK_FOR(i, n)
    {
        T v = x[i];
        y[i] = kind == OPK_ABS   ? (neg(v) ? (T)(0 - (U)v) : v)
               : kind == OPK_NEG ? (T)(0 - (U)v)
                                 : (T)((v > zero) - (int)neg(v));
    }
}

template <class C>
__global__ void float_test_kernel(int32_t kind, int32_t pos, int32_t neg,
                                  const typename C::S *x, uint8_t *y, int64_t n)
{
    OPK_FOR(i, n)
    {
        float v = C::ld(x[i]);
        if (kind == OPK_ISNAN)
            y[i] = v != v;
        else
            y[i] = (pos && v == INFINITY) || (neg && v == -INFINITY);
    }
}

__global__ void not_kernel(const uint8_t *x, uint8_t *y, int64_t n)
{
    OPK_FOR(i, n)
    y[i] = x[i] == 0;
}

// ---- Cast ------------------------------------------------------------------

// op_elem.h's opk_cast_at: the CPU op's very code.
__global__ void cast_kernel(int32_t from, int32_t to, const void *x, void *y, int64_t n,
                            int saturate)
{
    OPK_FOR(i, n)
    opk_cast_at_sat(from, to, x, y, i, saturate);
}

// ---- strided copy ----------------------------------------------------------

template <typename T>
__global__ void copy_kernel(opk_bcast b, const T *x, int64_t x_offset, T *y, int64_t n)
{
    OPK_FOR(i, n)
    {
        int64_t off[OPK_MAX_IN];
        offsets(b, i, off);
        y[i] = x[x_offset + off[0]];
    }
}

} // namespace
} // namespace opk

using namespace opk;

extern "C" int opk_binary(int32_t kind, int32_t dtype, const opk_bcast *b, const void *a,
                          const void *c, void *y, int64_t n, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (n == 0)
        return 0;
    if (kind >= OPK_AND || dtype == DT_BOOL) { /* bools: logic and Equal */
        if (dtype != DT_BOOL || (kind < OPK_AND && kind != OPK_EQUAL))
            return (int)cudaErrorInvalidValue;
        logic_kernel<<<blocks_for(n), kThreads, 0, s>>>(
            kind, *b, (const uint8_t *)a, (const uint8_t *)c, (uint8_t *)y, n);
        return launched();
    }
    switch (dtype) {
    case DT_F32:
        return launch_binary<cf32>(kind, *b, a, c, y, n, s);
    case DT_F16:
        return launch_binary<cf16>(kind, *b, a, c, y, n, s);
    case DT_BF16:
        return launch_binary<cbf16>(kind, *b, a, c, y, n, s);
    case DT_I8:
        return launch_binary_i<int8_t>(kind, *b, a, c, y, n, s);
    case DT_U8:
        return launch_binary_i<uint8_t>(kind, *b, a, c, y, n, s);
    case DT_I32:
        return launch_binary_i<int32_t>(kind, *b, a, c, y, n, s);
    case DT_I64:
        return launch_binary_i<int64_t>(kind, *b, a, c, y, n, s);
    default:
        return (int)cudaErrorInvalidValue;
    }
}

extern "C" int opk_where(int32_t esize, const opk_bcast *b, const void *cond,
                         const void *x, const void *z, void *y, int64_t n, void *stream)
{
    if (n == 0)
        return 0;
    return by_esize(esize, [&](auto t) {
        typedef decltype(t) T;
        where_kernel<T><<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(
            *b, (const uint8_t *)cond, (const T *)x, (const T *)z, (T *)y, n);
    });
}

extern "C" int opk_unary_math(int32_t kind, int32_t dtype, float alpha, float beta,
                              float gamma, int32_t approximate, const void *x, void *y,
                              int64_t n, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (n == 0)
        return 0;
    switch (dtype) {
    case DT_F32:
        unary_math_kernel<cf32><<<blocks_for(n), kThreads, 0, s>>>(
            kind, alpha, beta, gamma, approximate, (const float *)x, (float *)y, n);
        break;
    case DT_F16:
        unary_math_kernel<cf16><<<blocks_for(n), kThreads, 0, s>>>(
            kind, alpha, beta, gamma, approximate, (const uint16_t *)x, (uint16_t *)y, n);
        break;
    case DT_BF16:
        unary_math_kernel<cbf16><<<blocks_for(n), kThreads, 0, s>>>(
            kind, alpha, beta, gamma, approximate, (const uint16_t *)x, (uint16_t *)y, n);
        break;
    default:
        return (int)cudaErrorInvalidValue;
    }
    return launched();
}

extern "C" int opk_unary(int32_t kind, int32_t dtype, int32_t flag_a, int32_t flag_b,
                         const void *x, void *y, int64_t n, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    const int bl = blocks_for(n);
    if (n == 0)
        return 0;
    if (kind == OPK_NOT) {
        not_kernel<<<bl, kThreads, 0, s>>>((const uint8_t *)x, (uint8_t *)y, n);
        return launched();
    }
    if (kind == OPK_ISNAN || kind == OPK_ISINF) {
        switch (dtype) {
        case DT_F32:
            float_test_kernel<cf32><<<bl, kThreads, 0, s>>>(
                kind, flag_a, flag_b, (const float *)x, (uint8_t *)y, n);
            break;
        case DT_F16:
            float_test_kernel<cf16><<<bl, kThreads, 0, s>>>(
                kind, flag_a, flag_b, (const uint16_t *)x, (uint8_t *)y, n);
            break;
        case DT_BF16:
            float_test_kernel<cbf16><<<bl, kThreads, 0, s>>>(
                kind, flag_a, flag_b, (const uint16_t *)x, (uint8_t *)y, n);
            break;
        default:
            return (int)cudaErrorInvalidValue;
        }
        return launched();
    }
    switch (dtype) {
    case DT_F32:
        unary_f32_kernel<<<bl, kThreads, 0, s>>>(kind, (const float *)x, (float *)y, n);
        break;
    case DT_F16:
        unary16_kernel<<<bl, kThreads, 0, s>>>(kind, (const uint16_t *)x, (uint16_t *)y,
                                               n, 0x7C00u, 0x3C00u);
        break;
    case DT_BF16:
        unary16_kernel<<<bl, kThreads, 0, s>>>(kind, (const uint16_t *)x, (uint16_t *)y,
                                               n, 0x7F80u, 0x3F80u);
        break;
    case DT_I8:
        unary_int_kernel<int8_t>
            <<<bl, kThreads, 0, s>>>(kind, (const int8_t *)x, (int8_t *)y, n);
        break;
    case DT_U8: // Abs and Sign (Neg does not take uint8)
        unary_int_kernel<uint8_t>
            <<<bl, kThreads, 0, s>>>(kind, (const uint8_t *)x, (uint8_t *)y, n);
        break;
    case DT_I32:
        unary_int_kernel<int32_t>
            <<<bl, kThreads, 0, s>>>(kind, (const int32_t *)x, (int32_t *)y, n);
        break;
    case DT_I64:
        unary_int_kernel<int64_t>
            <<<bl, kThreads, 0, s>>>(kind, (const int64_t *)x, (int64_t *)y, n);
        break;
    default:
        return (int)cudaErrorInvalidValue;
    }
    return launched();
}

extern "C" int opk_clip(int32_t dtype, const void *x, void *y, int64_t n, const void *lo,
                        const void *hi, int64_t ilo, int64_t ihi, float flo, float fhi,
                        void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (n == 0)
        return 0;
    switch (dtype) {
    case DT_F32:
        return launch_clip<cf32>(x, y, n, lo, hi, flo, fhi, s);
    case DT_F16:
        return launch_clip<cf16>(x, y, n, lo, hi, flo, fhi, s);
    case DT_BF16:
        return launch_clip<cbf16>(x, y, n, lo, hi, flo, fhi, s);
    case DT_I8:
        return launch_clip<cint<int8_t>>(x, y, n, lo, hi, (int8_t)ilo, (int8_t)ihi, s);
    case DT_U8:
        return launch_clip<cint<uint8_t>>(x, y, n, lo, hi, (uint8_t)ilo, (uint8_t)ihi, s);
    case DT_I32:
        return launch_clip<cint<int32_t>>(x, y, n, lo, hi, (int32_t)ilo, (int32_t)ihi, s);
    case DT_I64:
        return launch_clip<cint<int64_t>>(x, y, n, lo, hi, ilo, ihi, s);
    default:
        return (int)cudaErrorInvalidValue;
    }
}

extern "C" int opk_cast(int32_t from, int32_t to, const void *x, void *y, int64_t n,
                        int saturate, void *stream)
{
    if (n == 0)
        return 0;
    if (from < 0 || from >= PRT_DTYPE_COUNT || to < 0 || to >= PRT_DTYPE_COUNT)
        return (int)cudaErrorInvalidValue;
    cast_kernel<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(from, to, x, y, n,
                                                                      saturate);
    return launched();
}

extern "C" int opk_copy(int32_t esize, const opk_bcast *b, const void *x,
                        int64_t x_offset, void *y, int64_t n, void *stream)
{
    if (n == 0)
        return 0;
    return by_esize(esize, [&](auto t) {
        typedef decltype(t) T;
        copy_kernel<T><<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>(
            *b, (const T *)x, x_offset, (T *)y, n);
    });
}

extern "C" int opk_device_copy(void *y, const void *x, size_t bytes, void *stream)
{
    if (y == x || bytes == 0)
        return 0;
    return (int)cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice,
                                (cudaStream_t)stream);
}
