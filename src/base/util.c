/* Arithmetic with overflow checks, dims helpers, dtypes and half floats. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base.h"
#include "fp8.h"

int base_mul_i64(int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

int base_add_i64(int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

int64_t base_f32_key(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u >> 31 ? -(int64_t)(u & 0x7fffffffu) : (int64_t)u;
}

float base_key_f32(int64_t key)
{
    uint32_t u = key < 0 ? 0x80000000u | (uint32_t)(-key & 0x7fffffff)
                         : (uint32_t)(key & 0x7fffffff);
    float v;
    if (key > 0x7f800000 || key < -0x7f800000)
        u = 0x7fc00000u; /* NaN */
    memcpy(&v, &u, sizeof v);
    return v;
}

int base_floor_mul_f32(int64_t d, float s, int64_t *out)
{
    uint32_t u;
    int32_t ex;
    int64_t m, p;
    memcpy(&u, &s, sizeof u);
    ex = (int32_t)((u >> 23) & 0xff);
    if (ex == 0xff)
        return 0;
    m = (int64_t)(u & 0x7fffff);
    if (ex)
        m |= 0x800000;
    ex = ex ? ex - 150 : -149; /* s = m 2^ex */
    if (u >> 31)
        m = -m;
    if (__builtin_mul_overflow(d, m, &p))
        return 0;
    if (ex >= 0) {
        if (ex >= 63 && p != 0)
            return 0;
        if (p != 0 && (p > (INT64_MAX >> ex) || p < (INT64_MIN >> ex)))
            return 0;
        *out = p == 0 ? 0 : p * ((int64_t)1 << ex);
        return 1;
    }
    if (-ex >= 63) {
        *out = p < 0 ? -1 : 0;
        return 1;
    }
    {
        int64_t q = p / ((int64_t)1 << -ex);
        if (p % ((int64_t)1 << -ex) < 0)
            q--;
        *out = q;
    }
    return 1;
}

int64_t base_volume(const prt_dims *dims)
{
    int64_t v = 1;
    if (dims->nb_dims < 0 || dims->nb_dims > PRT_MAX_DIMS)
        return -1;
    for (int32_t i = 0; i < dims->nb_dims; i++) {
        if (dims->d[i] < 0 || !base_mul_i64(v, dims->d[i], &v))
            return -1;
    }
    return v;
}

/* Appends to buf at n, never past cap; returns the new length (cap - 1 at
 * most, so later appends are no-ops once the text is cut short). */
static size_t dims_put(char *buf, size_t cap, size_t n, const char *fmt, ...)
    BASE_PRINTF(4, 5);
static size_t dims_put(char *buf, size_t cap, size_t n, const char *fmt, ...)
{
    va_list ap;
    int w;
    if (n + 1 >= cap)
        return n;
    va_start(ap, fmt);
    w = vsnprintf(buf + n, cap - n, fmt, ap);
    va_end(ap);
    if (w < 0)
        return n;
    return (size_t)w < cap - n ? n + (size_t)w : cap - 1;
}

const char *base_dims_format(const prt_dims *dims, int32_t style, char *buf, size_t cap)
{
    int list = style == BASE_DIMS_LIST;
    int32_t nb = dims->nb_dims;
    size_t n = 0;
    if (cap == 0)
        return buf;
    buf[0] = '\0';
    if (nb < 0 || nb > PRT_MAX_DIMS) {
        if (list)
            dims_put(buf, cap, 0, "[]");
        else
            dims_put(buf, cap, 0, "(rank %d)", (int)nb);
        return buf;
    }
    if (nb == 0 && !list) {
        dims_put(buf, cap, 0, "scalar");
        return buf;
    }
    if (list)
        n = dims_put(buf, cap, n, "[");
    for (int32_t i = 0; i < nb; i++) {
        const char *sep = i == 0 ? "" : list ? ", " : "x";
        if (dims->d[i] == BASE_DIM_UNKNOWN)
            n = dims_put(buf, cap, n, "%s?", sep);
        else
            n = dims_put(buf, cap, n, "%s%lld", sep, (long long)dims->d[i]);
    }
    if (list)
        dims_put(buf, cap, n, "]");
    return buf;
}

void base_dims_str(const prt_dims *dims, char *buf, size_t cap)
{
    base_dims_format(dims, BASE_DIMS_X, buf, cap);
}

size_t prt_dtype_size(int32_t dtype)
{
    switch (dtype) {
    case PRT_FLOAT32:
    case PRT_INT32:
    case PRT_UINT32:
        return 4;
    case PRT_FLOAT16:
    case PRT_BFLOAT16:
    case PRT_INT16:
    case PRT_UINT16:
        return 2;
    case PRT_INT8:
    case PRT_UINT8:
    case PRT_BOOL:
    case PRT_FLOAT8E4M3FN:
    case PRT_FLOAT8E5M2:
        return 1;
    case PRT_INT64:
    case PRT_FLOAT64:
    case PRT_UINT64:
        return 8;
    default:
        return 0;
    }
}

const char *prt_dtype_name(int32_t dtype)
{
    static const char *const names[PRT_DTYPE_COUNT] = {
        "float32", "float16", "bfloat16", "int8",         "uint8",
        "int32",   "int64",   "bool",     "float8e4m3fn", "float8e5m2",
        "float64", "int16",   "uint16",   "uint32",       "uint64"};
    if (dtype < 0 || dtype >= PRT_DTYPE_COUNT)
        return "invalid";
    return names[dtype];
}

float prt_half_to_float(uint16_t h)
{
    return base_h2f(h);
}

uint16_t prt_float_to_half(float f)
{
    return base_f2h(f);
}

float prt_bf16_to_float(uint16_t h)
{
    return base_bf2f(h);
}

uint16_t prt_float_to_bf16(float f)
{
    return base_f2bf(f);
}

float prt_fp8_to_float(int32_t dtype, uint8_t v)
{
    if (dtype == PRT_FLOAT8E4M3FN)
        return base_e4m3_to_f32(v);
    return dtype == PRT_FLOAT8E5M2 ? base_e5m2_to_f32(v) : NAN;
}

uint8_t prt_float_to_fp8(int32_t dtype, float f, int saturate)
{
    if (dtype == PRT_FLOAT8E4M3FN)
        return base_f32_to_e4m3(f, saturate);
    return dtype == PRT_FLOAT8E5M2 ? base_f32_to_e5m2(f, saturate) : 0;
}

uint64_t base_fnv1a64(const void *data, size_t n, uint64_t seed)
{
    const uint8_t *p = data;
    uint64_t h = seed;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

uint32_t base_crc32(const void *data, size_t n)
{
    static uint32_t table[256];
    static _Atomic int ready;
    const uint8_t *p = data;
    uint32_t c = 0xffffffffu;
    if (!ready) {
        /* Idempotent: racing threads compute the same table. */
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t v = i;
            for (int k = 0; k < 8; k++)
                v = (v & 1) ? 0xedb88320u ^ (v >> 1) : v >> 1;
            table[i] = v;
        }
        ready = 1;
    }
    for (size_t i = 0; i < n; i++)
        c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

size_t base_field_type_size(int32_t type)
{
    switch (type) {
    case PRT_FIELD_INT8:
    case PRT_FIELD_CHAR:
    case PRT_FIELD_BYTES:
        return 1;
    case PRT_FIELD_INT16:
    case PRT_FIELD_FLOAT16:
    case PRT_FIELD_BFLOAT16:
        return 2;
    case PRT_FIELD_INT32:
    case PRT_FIELD_FLOAT32:
        return 4;
    case PRT_FIELD_INT64:
    case PRT_FIELD_FLOAT64:
        return 8;
    case PRT_FIELD_DIMS:
        return sizeof(prt_dims);
    default:
        return 0;
    }
}

const char *base_field_type_name(int32_t type)
{
    static const char *const names[PRT_FIELD_TYPE_COUNT] = {
        "int8",    "int16",    "int32", "int64", "float16", "float32",
        "float64", "bfloat16", "char",  "dims",  "bytes"};
    if (type < 0 || type >= PRT_FIELD_TYPE_COUNT)
        return "invalid";
    return names[type];
}

int base_name_distance(const char *a, const char *b)
{
    int prev[65], cur[65];
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return 9;
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int ca = a[i - 1] >= 'A' && a[i - 1] <= 'Z' ? a[i - 1] + 32 : a[i - 1];
            int cb = b[j - 1] >= 'A' && b[j - 1] <= 'Z' ? b[j - 1] + 32 : b[j - 1];
            int best = prev[j - 1] + (ca != cb);
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            cur[j] = best;
        }
        memcpy(prev, cur, sizeof(int) * (lb + 1));
    }
    return prev[lb] > 9 ? 9 : prev[lb];
}
