/*
 * check::Bias@1: x float32 [N, C] and b float32 [1, C] -> x + b (float32
 * [N, C]), b broadcast over the rows. configure refuses a b that is not
 * [1, C]: discovery finds it by broadcasting (the shorter input's last dim
 * the longer's, its other dims 1). Field: unused (an int32, default 1).
 */
#if !defined(BROKEN_NONE)
#error "define BROKEN_NONE"
#endif

#define SIMPLE_NAME "Bias"
#define SIMPLE_FIELD "unused"
#define SIMPLE_DEFAULT 1
#define SIMPLE_REQUIRED 0
#include "simple.h"

SIMPLE_NB_OUTPUTS(1)

static prt_status output_dtypes(prt_plugin *self, int32_t *out, int32_t nb_out,
                                const int32_t *in, int32_t nb_in)
{
    (void)self;
    return two_float32_in_one_out(out, nb_out, in, nb_in,
                                  "Bias takes x and b, float32 both");
}

static prt_status output_shapes(prt_plugin *self, const prt_dim_exprs *in, int32_t nb_in,
                                const prt_dim_exprs *shape_in, int32_t nb_shape_in,
                                prt_dim_exprs *out, int32_t nb_out, prt_expr_builder *b)
{
    (void)self, (void)shape_in, (void)nb_shape_in, (void)b;
    if (nb_in != 2 || nb_out != 1 || in[0].nb_dims != 2 || in[1].nb_dims != 2)
        return fail(PRT_ERR_SHAPE, "Bias takes x [N, C] and b [1, C]");
    out[0] = in[0];
    return PRT_OK;
}

static int32_t supports(prt_plugin *self, int32_t pos, const prt_dynamic_tensor_desc *io,
                        int32_t nb_in, int32_t nb_out)
{
    static const int32_t want[3] = {PRT_FLOAT32, PRT_FLOAT32, PRT_FLOAT32};
    (void)self;
    return supports_exactly(want, 2, 1, pos, io, nb_in, nb_out);
}

static prt_status configure(prt_plugin *self, const prt_dynamic_tensor_desc *in,
                            int32_t nb_in, const prt_dynamic_tensor_desc *out,
                            int32_t nb_out)
{
    (void)self, (void)out, (void)nb_out;
    if (nb_in != 2 || in[1].min.d[0] != 1 || in[1].max.d[0] != 1 ||
        in[0].min.d[1] != in[1].min.d[1] || in[0].opt.d[1] != in[1].opt.d[1] ||
        in[0].max.d[1] != in[1].max.d[1])
        return fail(PRT_ERR_SHAPE, "Bias: b must be [1, C] beside x [N, C]");
    return PRT_OK;
}

SIMPLE_BUILD(configure);

static prt_status enqueue(prt_plugin *self, const prt_tensor_desc *in_desc,
                          const prt_tensor_desc *out_desc, const void *const *inputs,
                          void *const *outputs, void *ws, int32_t device, void *stream)
{
    const float *x = inputs[0], *bias = inputs[1];
    float *y = outputs[0];
    int64_t n = in_desc[0].dims.d[0], c = in_desc[0].dims.d[1];
    (void)self, (void)out_desc, (void)ws, (void)stream;
    if (device != PRT_DEVICE_CPU)
        return fail(PRT_ERR_UNSUPPORTED, "Bias runs on the CPU");
    if (in_desc[1].dims.d[0] != 1 || in_desc[1].dims.d[1] != c)
        return fail(PRT_ERR_SHAPE, "Bias: b must be [1, C] beside x [N, C]");
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < c; j++)
            y[i * c + j] = x[i * c + j] + bias[j];
    return PRT_OK;
}
