/* Helpers of the elementwise, unary and reduction families: same-dims
 * shapes, loads and stores through float32/double/int64, constant axes,
 * choice and flag fields. See ops_ew.h. */
#include <stdio.h>
#include <string.h>

#include "base/fp16.h"
#include "ops/op_elem.h"
#include "ops/ops_ew.h"

prt_status ew_same_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                          prt_dim_exprs *out, prt_expr_builder *eb)
{
    (void)o, (void)nb_in, (void)eb;
    *out = in[0];
    return PRT_OK;
}

prt_status ew_same_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                         prt_dims *out)
{
    (void)o, (void)nb_in;
    *out = in[0];
    return PRT_OK;
}

int ew_is_float(int32_t dtype)
{
    return dtype == PRT_FLOAT32 || dtype == PRT_FLOAT16 || dtype == PRT_BFLOAT16;
}

void ew_axis_split(const prt_dims *d, int32_t axis, int64_t *outer, int64_t *inner)
{
    *outer = *inner = 1;
    for (int32_t i = 0; i < axis; i++)
        *outer *= d->d[i];
    for (int32_t i = axis + 1; i < d->nb_dims; i++)
        *inner *= d->d[i];
}

/* dst[j] = CONV(src[j * stride]) for j < n, with a loop for each stride
 * kind so that the dense one vectorizes. */
#define EW_LOAD(T, CONV)                                                                 \
    do {                                                                                 \
        const T *s_ = (const T *)x;                                                      \
        if (stride == 1)                                                                 \
            for (int64_t j = 0; j < n; j++)                                              \
                dst[j] = CONV(s_[j]);                                                    \
        else                                                                             \
            for (int64_t j = 0; j < n; j++)                                              \
                dst[j] = CONV(s_[j * stride]);                                           \
    } while (0)

#define EW_AS_IS(v) (v)

void ew_load_f32(const void *x, int32_t dtype, int64_t stride, int64_t n, float *dst)
{
    switch (dtype) {
    case PRT_FLOAT16:
        EW_LOAD(uint16_t, prt_half_to_float);
        break;
    case PRT_BFLOAT16:
        EW_LOAD(uint16_t, prt_bf16_to_float);
        break;
    default:
        EW_LOAD(float, EW_AS_IS);
        break;
    }
}

#define EW_F64(v) ((double)(v))
#define EW_HALF_F64(v) ((double)prt_half_to_float(v))
#define EW_BF16_F64(v) ((double)prt_bf16_to_float(v))
#define EW_BOOL(v) ((v) != 0)

void ew_load_f64(const void *x, int32_t dtype, int64_t stride, int64_t n, double *dst)
{
    switch (dtype) {
    case PRT_FLOAT32:
        EW_LOAD(float, EW_F64);
        break;
    case PRT_FLOAT16:
        EW_LOAD(uint16_t, EW_HALF_F64);
        break;
    case PRT_BFLOAT16:
        EW_LOAD(uint16_t, EW_BF16_F64);
        break;
    case PRT_INT8:
        EW_LOAD(int8_t, EW_F64);
        break;
    case PRT_UINT8:
        EW_LOAD(uint8_t, EW_F64);
        break;
    case PRT_INT32:
        EW_LOAD(int32_t, EW_F64);
        break;
    case PRT_INT64:
        EW_LOAD(int64_t, EW_F64);
        break;
    case PRT_FLOAT64:
        EW_LOAD(double, EW_AS_IS);
        break;
    case PRT_INT16:
        EW_LOAD(int16_t, EW_F64);
        break;
    case PRT_UINT16:
        EW_LOAD(uint16_t, EW_F64);
        break;
    case PRT_UINT32:
        EW_LOAD(uint32_t, EW_F64);
        break;
    case PRT_UINT64:
        EW_LOAD(uint64_t, EW_F64);
        break;
    default:
        EW_LOAD(uint8_t, EW_BOOL);
        break;
    }
}

void ew_load_i64(const void *x, int32_t dtype, int64_t stride, int64_t n, int64_t *dst)
{
    switch (dtype) {
    case PRT_INT8:
        EW_LOAD(int8_t, EW_AS_IS);
        break;
    case PRT_UINT8:
        EW_LOAD(uint8_t, EW_AS_IS);
        break;
    case PRT_INT32:
        EW_LOAD(int32_t, EW_AS_IS);
        break;
    case PRT_INT64:
    case PRT_UINT64: /* its bits */
        EW_LOAD(int64_t, EW_AS_IS);
        break;
    case PRT_INT16:
        EW_LOAD(int16_t, EW_AS_IS);
        break;
    case PRT_UINT16:
        EW_LOAD(uint16_t, EW_AS_IS);
        break;
    case PRT_UINT32:
        EW_LOAD(uint32_t, EW_AS_IS);
        break;
    default:
        EW_LOAD(uint8_t, EW_BOOL);
        break;
    }
}

int64_t ew_f64_to_int(double v, int64_t lo, int64_t hi)
{
    return base_f64_to_int(v, lo, hi);
}

void ew_int_range(int32_t dtype, int64_t *lo, int64_t *hi)
{
    switch (dtype) {
    case PRT_INT8:
        *lo = INT8_MIN;
        *hi = INT8_MAX;
        break;
    case PRT_UINT8:
        *lo = 0;
        *hi = UINT8_MAX;
        break;
    case PRT_INT32:
        *lo = INT32_MIN;
        *hi = INT32_MAX;
        break;
    case PRT_INT16:
        *lo = INT16_MIN;
        *hi = INT16_MAX;
        break;
    case PRT_UINT16:
        *lo = 0;
        *hi = UINT16_MAX;
        break;
    case PRT_UINT32:
        *lo = 0;
        *hi = UINT32_MAX;
        break;
    case PRT_UINT64: /* past 2^63 ew_store_f64 saturates itself */
        *lo = 0;
        *hi = INT64_MAX;
        break;
    case PRT_BOOL:
        *lo = 0;
        *hi = 1;
        break;
    default:
        *lo = INT64_MIN;
        *hi = INT64_MAX;
        break;
    }
}

void ew_store_f64(const double *src, int32_t dtype, int64_t n, void *dst)
{
    int64_t lo, hi;
    switch (dtype) {
    case PRT_FLOAT32:
        for (int64_t j = 0; j < n; j++)
            ((float *)dst)[j] = (float)src[j];
        return;
    case PRT_FLOAT16:
        for (int64_t j = 0; j < n; j++)
            ((uint16_t *)dst)[j] = prt_float_to_half((float)src[j]);
        return;
    case PRT_BFLOAT16:
        for (int64_t j = 0; j < n; j++)
            ((uint16_t *)dst)[j] = prt_float_to_bf16((float)src[j]);
        return;
    case PRT_BOOL:
        for (int64_t j = 0; j < n; j++)
            ((uint8_t *)dst)[j] = src[j] != 0.0;
        return;
    case PRT_FLOAT64:
        memcpy(dst, src, sizeof(double) * (size_t)n);
        return;
    case PRT_INT16:
    case PRT_UINT16:
    case PRT_UINT32:
    case PRT_UINT64:
        for (int64_t j = 0; j < n; j++)
            opk_int_put_f64(dtype, dst, j, src[j]);
        return;
    default:
        break;
    }
    ew_int_range(dtype, &lo, &hi);
    for (int64_t j = 0; j < n; j++) {
        int64_t v = ew_f64_to_int(src[j], lo, hi);
        switch (dtype) {
        case PRT_INT8:
            ((int8_t *)dst)[j] = (int8_t)v;
            break;
        case PRT_UINT8:
            ((uint8_t *)dst)[j] = (uint8_t)v;
            break;
        case PRT_INT32:
            ((int32_t *)dst)[j] = (int32_t)v;
            break;
        default:
            ((int64_t *)dst)[j] = v;
            break;
        }
    }
}

void ew_store_i64(const int64_t *src, int32_t dtype, int64_t n, void *dst)
{
    switch (dtype) {
    case PRT_INT8:
        for (int64_t j = 0; j < n; j++)
            ((int8_t *)dst)[j] = (int8_t)(uint8_t)(uint64_t)src[j];
        break;
    case PRT_UINT8:
        for (int64_t j = 0; j < n; j++)
            ((uint8_t *)dst)[j] = (uint8_t)(uint64_t)src[j];
        break;
    case PRT_INT32:
        for (int64_t j = 0; j < n; j++)
            ((int32_t *)dst)[j] = (int32_t)(uint32_t)(uint64_t)src[j];
        break;
    case PRT_INT64:
    case PRT_UINT64:
        memcpy(dst, src, sizeof(int64_t) * (size_t)n);
        break;
    case PRT_INT16:
    case PRT_UINT16:
    case PRT_UINT32:
        for (int64_t j = 0; j < n; j++)
            opk_int_put(dtype, dst, j, (uint64_t)src[j]);
        break;
    default:
        for (int64_t j = 0; j < n; j++)
            ((uint8_t *)dst)[j] = src[j] != 0;
        break;
    }
}

prt_status ew_const_axes(op_object *o, const int32_t *field, int32_t nb_field,
                         const prt_dim_exprs *sv, int32_t nb_sv, prt_expr_builder *eb,
                         int32_t r, const char *what, int32_t *ax, int32_t *out_n)
{
    int32_t n = nb_field, seen[PRT_MAX_DIMS] = {0};
    if (nb_sv > 0 && nb_field >= 0)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "%s are given both as an attribute (field) and as an input", what);
    if (nb_sv > 0)
        n = sv[0].nb_dims;
    *out_n = n;
    if (n > PRT_MAX_DIMS)
        return op_fail(o, PRT_ERR_SHAPE, "%d %s for an input of rank %d", (int)n, what,
                       (int)r);
    for (int32_t i = 0; i < n; i++) {
        int64_t v = 0;
        if (nb_sv == 0)
            v = field[i];
        else if (!eb->is_constant(eb, sv[0].d[i], &v))
            return op_fail(o, PRT_ERR_SHAPE,
                           "%s value %d is not a constant at build time (plugrt needs "
                           "the %s before it runs)",
                           what, (int)i, what);
        if (v < -r || v >= r)
            return op_fail(o, PRT_ERR_SHAPE,
                           "%s value %lld is out of range for an input of rank %d "
                           "(-%d to %d)",
                           what, (long long)v, (int)r, (int)r, (int)(r - 1));
        if (v < 0)
            v += r;
        if (seen[v]++)
            return op_fail(o, PRT_ERR_SHAPE, "%s name dim %lld twice", what,
                           (long long)v);
        ax[i] = (int32_t)v;
    }
    return PRT_OK;
}

prt_status ew_field_choice(const op_fields *f, const char *name, const char *const *names,
                           int32_t nb, int32_t dflt, int32_t *out)
{
    char buf[64], list[256];
    int32_t len;
    size_t pos = 0;
    prt_status st = op_field_str(f, name, buf, sizeof buf, &len);
    *out = dflt;
    if (st || len < 0)
        return st;
    for (int32_t k = 0; k < nb; k++)
        if (strcmp(buf, names[k]) == 0) {
            *out = k;
            return PRT_OK;
        }
    list[0] = '\0';
    for (int32_t k = 0; k < nb && pos < sizeof list; k++)
        pos += (size_t)snprintf(list + pos, sizeof list - pos, "%s'%s'",
                                k == 0        ? ""
                                : k == nb - 1 ? " or "
                                              : ", ",
                                names[k]);
    return op_fields_fail(f, PRT_ERR_UNSUPPORTED,
                          "%s '%s' is not supported (supported: %s)", name, buf, list);
}

prt_status ew_field_flag(const op_fields *f, const char *name, int32_t dflt, int32_t *out)
{
    prt_status st = op_field_i32(f, name, dflt, out);
    if (!st && *out != 0 && *out != 1)
        return op_fields_fail(f, PRT_ERR_UNSUPPORTED,
                              "%s %d is not supported (supported: 0 or 1)", name,
                              (int)*out);
    return st;
}
