/*
 * check::Select@1: data float32 [N] and mask bool [N] -> the elements of
 * data where mask is set (float32 [K]) and K (int32 0-D, a size tensor:
 * opt ceil(N / 2), upper bound N). As TensorRT plugins often do, it
 * accepts any dtypes in get_output_dtypes and says which it takes in
 * supports_format_combination alone: discovery must find the mixed list
 * (float32, bool) there. configure refuses data and mask of other lengths.
 * Field: unused (an int32, default 1).
 *
 * BROKEN_OVERRUN: enqueue writes every element of data and a 0 after them
 * and sets K = N + 1, past the size tensor's bound and out0's buffer.
 */
#if !defined(BROKEN_NONE) && !defined(BROKEN_OVERRUN)
#error "define BROKEN_NONE or BROKEN_OVERRUN"
#endif

#define SIMPLE_NAME "Select"
#define SIMPLE_FIELD "unused"
#define SIMPLE_DEFAULT 1
#define SIMPLE_REQUIRED 0
#include "simple.h"

SIMPLE_NB_OUTPUTS(2)

/* Any dtypes: the outputs follow the data's. */
static prt_status output_dtypes(prt_plugin *self, int32_t *out, int32_t nb_out,
                                const int32_t *in, int32_t nb_in)
{
    (void)self;
    if (nb_in != 2 || nb_out != 2)
        return fail(PRT_ERR_INVALID_ARGUMENT,
                    "Select takes 2 inputs and gives 2 outputs");
    out[0] = in[0];
    out[1] = PRT_INT32;
    return PRT_OK;
}

static prt_status output_shapes(prt_plugin *self, const prt_dim_exprs *in, int32_t nb_in,
                                const prt_dim_exprs *shape_in, int32_t nb_shape_in,
                                prt_dim_exprs *out, int32_t nb_out, prt_expr_builder *b)
{
    const prt_expr *k;
    (void)self, (void)shape_in, (void)nb_shape_in;
    if (nb_in != 2 || nb_out != 2 || in[0].nb_dims != 1 || in[1].nb_dims != 1)
        return fail(PRT_ERR_SHAPE, "Select takes data [N] and mask [N]");
    k = b->declare_size_tensor(
        b, 1, b->operation(b, PRT_DIM_CEIL_DIV, in[0].d[0], b->constant(b, 2)),
        in[0].d[0]);
    if (!k)
        return fail(PRT_ERR_PLUGIN, "Select: the size tensor could not be declared");
    out[0].nb_dims = 1;
    out[0].d[0] = k;
    out[1].nb_dims = 0;
    return PRT_OK;
}

static int32_t supports(prt_plugin *self, int32_t pos, const prt_dynamic_tensor_desc *io,
                        int32_t nb_in, int32_t nb_out)
{
    static const int32_t want[4] = {PRT_FLOAT32, PRT_BOOL, PRT_FLOAT32, PRT_INT32};
    (void)self;
    return supports_exactly(want, 2, 2, pos, io, nb_in, nb_out);
}

static prt_status configure(prt_plugin *self, const prt_dynamic_tensor_desc *in,
                            int32_t nb_in, const prt_dynamic_tensor_desc *out,
                            int32_t nb_out)
{
    (void)self, (void)out, (void)nb_out;
    return first_dims_agree(in, nb_in, "Select: data and mask must have the same length");
}

SIMPLE_BUILD(configure);

static prt_status enqueue(prt_plugin *self, const prt_tensor_desc *in_desc,
                          const prt_tensor_desc *out_desc, const void *const *inputs,
                          void *const *outputs, void *ws, int32_t device, void *stream)
{
    const float *x = inputs[0];
    const uint8_t *mask = inputs[1];
    float *y = outputs[0];
    int32_t k = 0;
    int64_t n = volume(&in_desc[0].dims);
    (void)self, (void)out_desc, (void)ws, (void)stream;
    if (device != PRT_DEVICE_CPU)
        return fail(PRT_ERR_UNSUPPORTED, "Select runs on the CPU");
    if (volume(&in_desc[1].dims) != n)
        return fail(PRT_ERR_SHAPE, "Select: data and mask must have the same length");
#ifdef BROKEN_OVERRUN
    (void)mask;
    for (int64_t i = 0; i < n; i++)
        y[k++] = x[i];
    y[k++] = 0.0f;
#else
    for (int64_t i = 0; i < n; i++)
        if (mask[i])
            y[k++] = x[i];
#endif
    memcpy(outputs[1], &k, sizeof k);
    return PRT_OK;
}
