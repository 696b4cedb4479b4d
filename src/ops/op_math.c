/* Shared arithmetic of the built-in ops' definitions: broadcasting and
 * half-float conversion (the matrix products are the CPU's, cpu/products.c).
 * See op_common.h. */
#include "ops/op_common.h"

#include <string.h>

/* ------------------------------------------------------------------------ */
/* Broadcasting                                                              */
/* ------------------------------------------------------------------------ */

/* The one message of both broadcasts, over dims already written out. */
static prt_status bcast_fail(const op_object *o, const char *what, const char *a,
                             const char *b, int32_t dim, int64_t va, int64_t vb)
{
    return op_fail(o, PRT_ERR_SHAPE,
                   "cannot broadcast %s: shapes %s and %s differ in output dim %d "
                   "(%lld vs %lld; each must be equal or 1)",
                   what, a, b, (int)dim, (long long)va, (long long)vb);
}

prt_status op_broadcast_exprs(op_object *o, prt_expr_builder *eb, const prt_dim_exprs *a,
                              const prt_dim_exprs *b, prt_dim_exprs *out,
                              const char *what)
{
    int32_t r = a->nb_dims > b->nb_dims ? a->nb_dims : b->nb_dims;
    char sa[128], sb[128];
    for (int32_t i = 0; i < r; i++) {
        int32_t ia = i - (r - a->nb_dims), ib = i - (r - b->nb_dims);
        const prt_expr *ea = ia >= 0 ? a->d[ia] : NULL;
        const prt_expr *e2 = ib >= 0 ? b->d[ib] : NULL;
        int64_t va = 0, vb = 0;
        int ca, cb;
        if (!ea || !e2 || ea == e2) {
            out->d[i] = ea ? ea : e2;
            continue;
        }
        ca = eb->is_constant(eb, ea, &va);
        cb = eb->is_constant(eb, e2, &vb);
        if (ca && va == 1)
            out->d[i] = e2;
        else if (cb && vb == 1)
            out->d[i] = ea;
        else if (ca && cb)
            return bcast_fail(o, what, op_exprs_str(eb, a, sa, sizeof sa),
                              op_exprs_str(eb, b, sb, sizeof sb), i, va, vb);
        else if (ca)
            out->d[i] = ea; /* the symbol must be va or 1 */
        else if (cb)
            out->d[i] = e2;
        else
            out->d[i] = eb->operation(eb, PRT_DIM_MAX, ea, e2);
    }
    out->nb_dims = r;
    return PRT_OK;
}

prt_status op_broadcast_dims(const op_object *o, const prt_dims *a, const prt_dims *b,
                             prt_dims *out, const char *what)
{
    int32_t r = a->nb_dims > b->nb_dims ? a->nb_dims : b->nb_dims;
    char sa[128], sb[128];
    for (int32_t i = 0; i < r; i++) {
        int32_t ia = i - (r - a->nb_dims), ib = i - (r - b->nb_dims);
        int64_t va = ia >= 0 ? a->d[ia] : 1, vb = ib >= 0 ? b->d[ib] : 1;
        if (va == vb || vb == 1)
            out->d[i] = va;
        else if (va == 1)
            out->d[i] = vb;
        else
            return bcast_fail(o, what, base_dims_format(a, BASE_DIMS_LIST, sa, sizeof sa),
                              base_dims_format(b, BASE_DIMS_LIST, sb, sizeof sb), i, va,
                              vb);
    }
    out->nb_dims = r;
    return PRT_OK;
}

void op_broadcast_strides(const prt_dims *in, const prt_dims *out, int64_t *strides)
{
    int64_t s = 1;
    int32_t shift = out->nb_dims - in->nb_dims;
    for (int32_t i = out->nb_dims - 1; i >= 0; i--) {
        int32_t k = i - shift;
        if (k < 0 || in->d[k] == 1) {
            strides[i] = 0;
        } else {
            strides[i] = s;
            s *= in->d[k];
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Half-float conversion                                                     */
/* ------------------------------------------------------------------------ */

void op_to_f32(const void *src, int32_t dtype, int64_t n, float *dst)
{
    if (dtype == PRT_FLOAT16) {
        const uint16_t *h = src;
        for (int64_t i = 0; i < n; i++)
            dst[i] = prt_half_to_float(h[i]);
    } else if (dtype == PRT_BFLOAT16) {
        const uint16_t *h = src;
        for (int64_t i = 0; i < n; i++)
            dst[i] = prt_bf16_to_float(h[i]);
    } else if (n > 0) {
        memcpy(dst, src, sizeof(float) * (size_t)n);
    }
}

void op_from_f32(const float *src, int32_t dtype, int64_t n, void *dst)
{
    if (dtype == PRT_FLOAT16) {
        uint16_t *h = dst;
        for (int64_t i = 0; i < n; i++)
            h[i] = prt_float_to_half(src[i]);
    } else if (dtype == PRT_BFLOAT16) {
        uint16_t *h = dst;
        for (int64_t i = 0; i < n; i++)
            h[i] = prt_float_to_bf16(src[i]);
    } else if (n > 0) {
        memcpy(dst, src, sizeof(float) * (size_t)n);
    }
}
