/*
 * NonZero (namespace "plugrt", version "1"), ONNX opsets 9 and 13: the
 * coordinates of the non-zero elements of an input of any dtype and rank r
 * (0 to 8), in row-major order, as numpy.nonzero gives them.
 *
 * Output 0: int64 [r, K]: row d holds coordinate d of every non-zero
 *   element. A scalar counts as a 1-D input of one element ([1, K], all
 *   coordinates 0), as numpy and ONNX Runtime take it. Output 1: K, the size tensor (a
 * 0-D int64), declared with upper bound the input's volume and opt half of it
 * (ops_data.h); the importer keeps it internal.
 *
 * Non-zero: floats compare != 0 (NaN counts; -0 does not), integers and
 * bool != 0. At run time output 0's descriptor holds the bound [r, volume];
 * the op counts first, then writes [r, K] densely, then K.
 */
#include <string.h>

#include "ops/ops_data.h"

static int32_t nz_nb_outputs(const op_object *o)
{
    (void)o;
    return 2;
}

static int32_t nz_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in,
                            int32_t index)
{
    (void)o, (void)types, (void)nb_in, (void)index;
    return PRT_INT64;
}

static prt_status nz_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                            const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                            int32_t nb_out, prt_expr_builder *eb)
{
    const prt_expr *vol = eb->constant(eb, 1), *k;
    (void)nb_in, (void)sv, (void)nb_sv, (void)nb_out;
    for (int32_t i = 0; i < in[0].nb_dims; i++)
        vol = eb->operation(eb, PRT_DIM_PROD, vol, in[0].d[i]);
    k = opd_declare_size(o, eb, 1, vol);
    if (!k)
        return PRT_ERR_OUT_OF_MEMORY;
    out[0].nb_dims = 2;
    out[0].d[0] = eb->constant(eb, in[0].nb_dims ? in[0].nb_dims : 1);
    out[0].d[1] = k;
    out[1].nb_dims = 0;
    return PRT_OK;
}

static prt_status nz_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                         int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                         const void *const *x, void *const *y, void *ws, void *stream)
{
    prt_dims d1 = {1, {1}};
    const prt_dims *d = in[0].dims.nb_dims ? &in[0].dims : &d1; /* a scalar as [1] */
    int32_t r = d->nb_dims;
    int64_t n = base_volume(d), k = 0, idx[PRT_MAX_DIMS] = {0}, j = 0;
    int64_t *yi = y[0];
    char a[128];
    (void)nb_in, (void)nb_out, (void)ws, (void)stream;
    for (int64_t i = 0; i < n; i++)
        k += opd_nonzero(x[0], dtype, i);
    if (out[0].dims.nb_dims != 2 || out[0].dims.d[0] != r || out[0].dims.d[1] < k)
        return op_fail(o, PRT_ERR_SHAPE, "output 0 %s cannot hold %lld coordinates of %d",
                       base_dims_format(&out[0].dims, BASE_DIMS_LIST, a, sizeof a),
                       (long long)k, (int)r);
    for (int64_t i = 0; i < n; i++) {
        if (opd_nonzero(x[0], dtype, i)) {
            for (int32_t q = 0; q < r; q++)
                yi[q * k + j] = idx[q];
            j++;
        }
        for (int32_t q = r - 1; q >= 0; q--) {
            if (++idx[q] < d->d[q])
                break;
            idx[q] = 0;
        }
    }
    memcpy(y[1], &k, sizeof k);
    return PRT_OK;
}

static const op_class nz_class = {
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_NO_FP8,
    .size = sizeof(op_object),
    .alias_input = -1,
    .nb_outputs = nz_nb_outputs,
    .shapes_n = nz_shapes,
    .out_dtype_n = nz_out_dtype,
    .run = nz_run,
};

const prt_plugin_creator op_nonzero_creator = OP_CREATOR("NonZero", nz_class, NULL, 0);
