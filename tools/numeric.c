/* Element access across dtypes, half precision, random contents. */
#include "numeric.h"

#include <string.h>

#include "plugrt/plugrt.h"

float cli_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t bits;
    float f;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13); /* inf, nan */
    } else if (exp != 0) {
        bits = sign | ((exp + 112u) << 23) | (man << 13);
    } else if (man == 0) {
        bits = sign;
    } else {
        /* Subnormal: normalize. */
        exp = 113;
        while (!(man & 0x400u)) {
            man <<= 1;
            exp--;
        }
        bits = sign | (exp << 23) | ((man & 0x3ffu) << 13);
    }
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t cli_float_to_half(float f)
{
    uint32_t x;
    uint32_t sign, exp, man;
    memcpy(&x, &f, sizeof x);
    sign = (x >> 16) & 0x8000u;
    exp = (x >> 23) & 0xffu;
    man = x & 0x7fffffu;
    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
    if (exp > 142)
        return (uint16_t)(sign | 0x7c00u); /* overflow to inf */
    if (exp < 113) {
        /* Subnormal or zero, round to nearest even. */
        uint32_t shift, half_man, rem, halfway;
        if (exp < 102)
            return (uint16_t)sign;
        man |= 0x800000u;
        shift = 126 - exp;
        half_man = man >> shift;
        rem = man & ((1u << shift) - 1);
        halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (half_man & 1u)))
            half_man++;
        return (uint16_t)(sign | half_man);
    }
    {
        uint32_t h = sign | ((exp - 112) << 10) | (man >> 13);
        uint32_t rem = man & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
            h++; /* may carry into the exponent: correct rounding to inf */
        return (uint16_t)h;
    }
}

float cli_bf16_to_float(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

double cli_element(int32_t dtype, const void *data, int64_t i)
{
    switch (dtype) {
    case PRT_FLOAT32: return ((const float *)data)[i];
    case PRT_FLOAT16: return cli_half_to_float(((const uint16_t *)data)[i]);
    case PRT_BFLOAT16: return cli_bf16_to_float(((const uint16_t *)data)[i]);
    case PRT_INT8: return ((const int8_t *)data)[i];
    case PRT_UINT8: return ((const uint8_t *)data)[i];
    case PRT_INT32: return ((const int32_t *)data)[i];
    case PRT_INT64: return (double)((const int64_t *)data)[i];
    case PRT_BOOL: return ((const uint8_t *)data)[i] ? 1.0 : 0.0;
    default: return 0.0;
    }
}

int cli_dtype_is_integer(int32_t dtype)
{
    return dtype == PRT_INT8 || dtype == PRT_UINT8 || dtype == PRT_INT32 ||
           dtype == PRT_INT64 || dtype == PRT_BOOL;
}

int64_t cli_element_i64(int32_t dtype, const void *data, int64_t i)
{
    switch (dtype) {
    case PRT_INT8: return ((const int8_t *)data)[i];
    case PRT_UINT8: return ((const uint8_t *)data)[i];
    case PRT_INT32: return ((const int32_t *)data)[i];
    case PRT_INT64: return ((const int64_t *)data)[i];
    case PRT_BOOL: return ((const uint8_t *)data)[i] != 0;
    default: return 0;
    }
}

static uint64_t next(uint64_t *s)
{
    /* xorshift64*: plenty for test data, and the same on every machine. */
    uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1dull;
}

void cli_fill_random(int32_t dtype, void *data, int64_t n, uint64_t *state)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = next(state);
        float u = (float)((double)(r >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
        switch (dtype) {
        case PRT_FLOAT32: ((float *)data)[i] = u; break;
        case PRT_FLOAT16: ((uint16_t *)data)[i] = cli_float_to_half(u); break;
        case PRT_BFLOAT16: {
            uint32_t bits;
            memcpy(&bits, &u, sizeof bits);
            ((uint16_t *)data)[i] = (uint16_t)(bits >> 16);
            break;
        }
        case PRT_INT8: ((int8_t *)data)[i] = (int8_t)((int)(r >> 60) - 8); break;
        case PRT_UINT8: ((uint8_t *)data)[i] = (uint8_t)(r >> 60); break;
        case PRT_INT32: ((int32_t *)data)[i] = (int32_t)(r >> 60); break;
        case PRT_INT64: ((int64_t *)data)[i] = (int64_t)(r >> 60); break;
        case PRT_BOOL: ((uint8_t *)data)[i] = (uint8_t)(r >> 63); break;
        default: break;
        }
    }
}
