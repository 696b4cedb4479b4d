/* What the data-movement and data-dependent built-ins share: reading
 * elements of any dtype, strides, and the size tensor's declaration. See
 * ops_data.h. */
#include "ops/ops_data.h"

#include <string.h>

double opd_get(const void *x, int32_t dtype, int64_t i)
{
    switch (dtype) {
    case PRT_FLOAT32:
        return ((const float *)x)[i];
    case PRT_FLOAT16:
        return prt_half_to_float(((const uint16_t *)x)[i]);
    case PRT_BFLOAT16:
        return prt_bf16_to_float(((const uint16_t *)x)[i]);
    case PRT_INT8:
        return ((const int8_t *)x)[i];
    case PRT_INT32:
        return ((const int32_t *)x)[i];
    case PRT_INT64:
        return (double)((const int64_t *)x)[i];
    default: /* uint8, bool */
        return ((const uint8_t *)x)[i];
    }
}

int opd_nonzero(const void *x, int32_t dtype, int64_t i)
{
    switch (dtype) {
    case PRT_FLOAT32:
        return ((const float *)x)[i] != 0.0f; /* NaN != 0 holds */
    case PRT_FLOAT16:
    case PRT_BFLOAT16:
        return (((const uint16_t *)x)[i] & 0x7FFFu) != 0;
    case PRT_INT32:
        return ((const int32_t *)x)[i] != 0;
    case PRT_INT64:
        return ((const int64_t *)x)[i] != 0;
    default: /* int8, uint8, bool */
        return ((const uint8_t *)x)[i] != 0;
    }
}

int opd_dims_eq(const prt_dims *a, const prt_dims *b)
{
    return a->nb_dims == b->nb_dims &&
           memcmp(a->d, b->d, sizeof(int64_t) * (size_t)a->nb_dims) == 0;
}

void opd_strides(const prt_dims *d, int64_t *strides)
{
    int64_t s = 1;
    for (int32_t k = d->nb_dims - 1; k >= 0; k--) {
        strides[k] = s;
        s *= d->d[k];
    }
}

const prt_expr *opd_declare_size(op_object *o, prt_expr_builder *eb, int32_t index,
                                 const prt_expr *upper)
{
    const prt_expr *opt = eb->operation(eb, PRT_DIM_CEIL_DIV, upper, eb->constant(eb, 2));
    const prt_expr *k = eb->declare_size_tensor(eb, index, opt, upper);
    if (!k)
        op_fail(o, PRT_ERR_OUT_OF_MEMORY, "declaring the size tensor (output %d) failed",
                (int)index);
    return k;
}
