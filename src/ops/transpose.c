/*
 * Transpose (namespace "plugrt", version "1"). Any dtype.
 *
 * Field perm (int32 array; int64 accepted): output dim i is input dim
 * perm[i]. Absent or empty: the dims reversed (ONNX's default). A perm that
 * is not a permutation of 0..n-1 fails at creation; one whose length is not
 * the input's rank fails get_output_shapes.
 */
#include <string.h>

#include "ops/cpu/cpu_kernels.h"
#include "ops/shape_ops.h"

typedef struct transpose_op {
    op_object o;
    int32_t nb_perm; /* 0: reverse */
    int32_t perm[PRT_MAX_DIMS];
} transpose_op;

static const transpose_op *ctp(const op_object *o)
{
    return (const transpose_op *)o;
}

static const char *perm_str(const int32_t *perm, int32_t n, char *buf, size_t cap)
{
    prt_dims d;
    d.nb_dims = n;
    for (int32_t i = 0; i < n; i++)
        d.d[i] = perm[i];
    return base_dims_format(&d, BASE_DIMS_LIST, buf, cap);
}

static prt_status tp_parse(op_object *o, const op_fields *f)
{
    transpose_op *t = (transpose_op *)o;
    int32_t seen[PRT_MAX_DIMS] = {0}, n;
    char buf[128];
    prt_status st = op_field_i32_array(f, "perm", t->perm, PRT_MAX_DIMS, &n);
    if (st)
        return st;
    t->nb_perm = n < 0 ? 0 : n;
    for (int32_t i = 0; i < t->nb_perm; i++) {
        int32_t p = t->perm[i];
        if (p < 0 || p >= t->nb_perm || seen[p]++)
            return op_fail(
                o, PRT_ERR_INVALID_ARGUMENT, "perm %s is not a permutation of 0..%d",
                perm_str(t->perm, t->nb_perm, buf, sizeof buf), (int)t->nb_perm - 1);
    }
    return PRT_OK;
}

static int32_t tp_serialize(op_object *o, prt_field *ser)
{
    transpose_op *t = (transpose_op *)o;
    if (t->nb_perm == 0)
        return 0;
    op_ser(&ser[0], "perm", PRT_FIELD_INT32, t->perm, t->nb_perm);
    return 1;
}

/* The permutation for an input of rank r. */
prt_status tp_perm(const op_object *o, int32_t r, int32_t *perm)
{
    const transpose_op *t = ctp(o);
    char buf[128];
    if (t->nb_perm == 0) {
        for (int32_t i = 0; i < r; i++)
            perm[i] = r - 1 - i;
        return PRT_OK;
    }
    if (t->nb_perm != r)
        return op_fail(
            o, PRT_ERR_SHAPE, "perm %s has %d entries but the input has rank %d",
            perm_str(t->perm, t->nb_perm, buf, sizeof buf), (int)t->nb_perm, (int)r);
    memcpy(perm, t->perm, sizeof(int32_t) * (size_t)r);
    return PRT_OK;
}

static prt_status tp_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                            prt_dim_exprs *out, prt_expr_builder *eb)
{
    int32_t perm[PRT_MAX_DIMS];
    prt_status st = tp_perm(o, in[0].nb_dims, perm);
    (void)nb_in, (void)eb;
    if (st)
        return st;
    out->nb_dims = in[0].nb_dims;
    for (int32_t i = 0; i < out->nb_dims; i++)
        out->d[i] = in[0].d[perm[i]];
    return PRT_OK;
}

static prt_status tp_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                           prt_dims *out)
{
    int32_t perm[PRT_MAX_DIMS];
    prt_status st = tp_perm(o, in[0].nb_dims, perm);
    (void)nb_in;
    if (st)
        return st;
    out->nb_dims = in[0].nb_dims;
    for (int32_t i = 0; i < out->nb_dims; i++)
        out->d[i] = in[0].d[perm[i]];
    return PRT_OK;
}

/* y (dense, dims d[0..r)) from x read with element strides s[0..r), when
 * the input's contiguous dim kc (s[kc] == 1) is not the output's last: tiles of TP_TILE x
 * TP_TILE over dims (kc, r-1) keep both the strided reads and the writes in cache. ys:
 * the output's strides. */
#define TP_TILE 32
#define TP_TILED(T)                                                                      \
    do {                                                                                 \
        const T *xt = x;                                                                 \
        T *yt = y;                                                                       \
        int64_t n = d[r - 1], s1 = s[r - 1], m = d[kc], ox = 0, oy = 0;                  \
        for (int64_t it = 0; it < outer; it++) {                                         \
            for (int64_t k0 = 0; k0 < m; k0 += TP_TILE)                                  \
                for (int64_t j0 = 0; j0 < n; j0 += TP_TILE) {                            \
                    int64_t k1 = k0 + TP_TILE < m ? k0 + TP_TILE : m;                    \
                    int64_t j1 = j0 + TP_TILE < n ? j0 + TP_TILE : n;                    \
                    for (int64_t k = k0; k < k1; k++) {                                  \
                        const T *xr = xt + ox + k;                                       \
                        T *yr = yt + oy + k * ys[kc];                                    \
                        for (int64_t j = j0; j < j1; j++)                                \
                            yr[j] = xr[j * s1];                                          \
                    }                                                                    \
                }                                                                        \
            for (int32_t q = r - 2; q >= 0; q--) {                                       \
                if (q == kc)                                                             \
                    continue;                                                            \
                ox += s[q];                                                              \
                oy += ys[q];                                                             \
                if (++idx[q] < d[q])                                                     \
                    break;                                                               \
                ox -= s[q] * d[q];                                                       \
                oy -= ys[q] * d[q];                                                      \
                idx[q] = 0;                                                              \
            }                                                                            \
        }                                                                                \
    } while (0)

#define TP_DISPATCH(MACRO)                                                               \
    do {                                                                                 \
        switch (es) {                                                                    \
        case 1:                                                                          \
            MACRO(uint8_t);                                                              \
            break;                                                                       \
        case 2:                                                                          \
            MACRO(uint16_t);                                                             \
            break;                                                                       \
        case 4:                                                                          \
            MACRO(uint32_t);                                                             \
            break;                                                                       \
        default:                                                                         \
            MACRO(uint64_t);                                                             \
            break;                                                                       \
        }                                                                                \
    } while (0)

static prt_status tp_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                         int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                         const void *const *xs, void *const *yv, void *ws, void *stream)
{
    void *y = yv[0];
    const prt_dims *id = &in[0].dims;
    const void *x = xs[0];
    int32_t perm[PRT_MAX_DIMS], r = 0, kc = -1;
    int64_t istr[PRT_MAX_DIMS], d[PRT_MAX_DIMS], s[PRT_MAX_DIMS];
    int64_t ys[PRT_MAX_DIMS];
    int64_t idx[PRT_MAX_DIMS] = {0}, stride = 1, outer = 1;
    size_t es = prt_dtype_size(dtype);
    prt_status st = tp_perm(o, id->nb_dims, perm);
    (void)nb_in, (void)out, (void)ws;
    if (st)
        return st;
    for (int32_t k = id->nb_dims - 1; k >= 0; k--) {
        istr[k] = stride;
        stride *= id->d[k];
    }
    /* Output dims in order with their input strides; size-1 dims dropped,
     * neighbours that are neighbours in the input merged. */
    for (int32_t i = 0; i < id->nb_dims; i++) {
        int64_t n = id->d[perm[i]], si = istr[perm[i]];
        if (n == 1)
            continue;
        if (r > 0 && s[r - 1] == si * n) {
            d[r - 1] *= n;
            s[r - 1] = si;
            continue;
        }
        d[r] = n;
        s[r] = si;
        r++;
    }
    if (r == 0 || (r == 1 && s[0] == 1)) {
        memcpy(y, x, es * (size_t)base_volume(id));
        return PRT_OK;
    }
    if (es != 1 && es != 2 && es != 4 && es != 8)
        return op_fail(o, PRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                       prt_dtype_name(dtype));
    ys[r - 1] = 1;
    for (int32_t k = r - 2; k >= 0; k--)
        ys[k] = ys[k + 1] * d[k + 1];
    for (int32_t k = 0; k < r - 1; k++)
        if (s[k] == 1 && s[r - 1] != 1)
            kc = k;
    for (int32_t k = 0; k < r - 1; k++)
        if (k != kc)
            outer *= d[k];
    if (kc >= 0)
        TP_DISPATCH(TP_TILED);
    else /* runs along the output's last dim, contiguous or strided */
        op_copy_strided(y, x, es, r, d, s);
    return PRT_OK;
}

static const op_class transpose_class = {
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_ALL,
    .size = sizeof(transpose_op),
    .alias_input = -1,
    .parse = tp_parse,
    .serialize = tp_serialize,
    .shapes = tp_shapes,
    .infer = tp_infer,
    .run = tp_run,
};

static const prt_field_schema transpose_schema[] = {
    {"perm", PRT_FIELD_INT32, -1,
     "output dim i is input dim perm[i]; absent or empty: reversed (ONNX)"},
};

const prt_plugin_creator op_transpose_creator =
    OP_CREATOR("Transpose", transpose_class, transpose_schema,
               (int32_t)(sizeof transpose_schema / sizeof transpose_schema[0]));
