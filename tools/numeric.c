/* Element access across dtypes, random contents. */
#include "numeric.h"

#include "plugrt/plugrt.h"

double cli_element(int32_t dtype, const void *data, int64_t i)
{
    switch (dtype) {
    case PRT_FLOAT32:
        return ((const float *)data)[i];
    case PRT_FLOAT16:
        return prt_half_to_float(((const uint16_t *)data)[i]);
    case PRT_BFLOAT16:
        return prt_bf16_to_float(((const uint16_t *)data)[i]);
    case PRT_INT8:
        return ((const int8_t *)data)[i];
    case PRT_UINT8:
        return ((const uint8_t *)data)[i];
    case PRT_INT32:
        return ((const int32_t *)data)[i];
    case PRT_INT64:
        return (double)((const int64_t *)data)[i];
    case PRT_FLOAT64:
        return ((const double *)data)[i];
    case PRT_INT16:
        return ((const int16_t *)data)[i];
    case PRT_UINT16:
        return ((const uint16_t *)data)[i];
    case PRT_UINT32:
        return ((const uint32_t *)data)[i];
    case PRT_UINT64:
        return (double)((const uint64_t *)data)[i];
    case PRT_BOOL:
        return ((const uint8_t *)data)[i] ? 1.0 : 0.0;
    case PRT_FLOAT8E4M3FN:
    case PRT_FLOAT8E5M2:
        return prt_fp8_to_float(dtype, ((const uint8_t *)data)[i]);
    default:
        return 0.0;
    }
}

int cli_dtype_is_integer(int32_t dtype)
{
    return dtype == PRT_INT8 || dtype == PRT_UINT8 || dtype == PRT_INT32 ||
           dtype == PRT_INT64 || dtype == PRT_BOOL || dtype == PRT_INT16 ||
           dtype == PRT_UINT16 || dtype == PRT_UINT32 || dtype == PRT_UINT64;
}

int64_t cli_element_i64(int32_t dtype, const void *data, int64_t i)
{
    switch (dtype) {
    case PRT_INT8:
        return ((const int8_t *)data)[i];
    case PRT_UINT8:
        return ((const uint8_t *)data)[i];
    case PRT_INT32:
        return ((const int32_t *)data)[i];
    case PRT_INT64:
    case PRT_UINT64: /* the bits: equal exactly when the values are */
        return ((const int64_t *)data)[i];
    case PRT_INT16:
        return ((const int16_t *)data)[i];
    case PRT_UINT16:
        return ((const uint16_t *)data)[i];
    case PRT_UINT32:
        return ((const uint32_t *)data)[i];
    case PRT_BOOL:
        return ((const uint8_t *)data)[i] != 0;
    default:
        return 0;
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
        case PRT_FLOAT32:
            ((float *)data)[i] = u;
            break;
        case PRT_FLOAT16:
            ((uint16_t *)data)[i] = prt_float_to_half(u);
            break;
        case PRT_BFLOAT16:
            ((uint16_t *)data)[i] = prt_float_to_bf16(u);
            break;
        case PRT_INT8:
            ((int8_t *)data)[i] = (int8_t)((int)(r >> 60) - 8);
            break;
        case PRT_UINT8:
            ((uint8_t *)data)[i] = (uint8_t)(r >> 60);
            break;
        case PRT_INT32:
            ((int32_t *)data)[i] = (int32_t)(r >> 60);
            break;
        case PRT_INT64:
            ((int64_t *)data)[i] = (int64_t)(r >> 60);
            break;
        case PRT_FLOAT64:
            ((double *)data)[i] = (double)u;
            break;
        case PRT_INT16:
            ((int16_t *)data)[i] = (int16_t)((int)(r >> 60) - 8);
            break;
        case PRT_UINT16:
            ((uint16_t *)data)[i] = (uint16_t)(r >> 60);
            break;
        case PRT_UINT32:
            ((uint32_t *)data)[i] = (uint32_t)(r >> 60);
            break;
        case PRT_UINT64:
            ((uint64_t *)data)[i] = r >> 60;
            break;
        case PRT_BOOL:
            ((uint8_t *)data)[i] = (uint8_t)(r >> 63);
            break;
        case PRT_FLOAT8E4M3FN:
        case PRT_FLOAT8E5M2:
            ((uint8_t *)data)[i] = prt_float_to_fp8(dtype, u, 1);
            break;
        default:
            break;
        }
    }
}
