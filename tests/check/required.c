/*
 * check::Scale@1: y = k * x over a float32 tensor of any rank, with k the
 * field `k`, which is required (create refuses fields without it): checked
 * without --fields, nothing of it can run, which is no pass.
 *
 * BROKEN_NULL_PLUGIN: without k, create returns PRT_OK and no plugin.
 */
#if !defined(BROKEN_NONE) && !defined(BROKEN_NULL_PLUGIN)
#error "define BROKEN_NONE or BROKEN_NULL_PLUGIN"
#endif

#define SIMPLE_NAME "Scale"
#define SIMPLE_FIELD "k"
#define SIMPLE_DEFAULT 0
#define SIMPLE_REQUIRED 1
#include "simple.h"

SIMPLE_NB_OUTPUTS(1)

static prt_status output_dtypes(prt_plugin *self, int32_t *out, int32_t nb_out,
                                const int32_t *in, int32_t nb_in)
{
    (void)self;
    if (nb_in != 1 || nb_out != 1 || in[0] != PRT_FLOAT32)
        return fail(PRT_ERR_UNSUPPORTED, "Scale takes one float32 input");
    out[0] = PRT_FLOAT32;
    return PRT_OK;
}

static prt_status output_shapes(prt_plugin *self, const prt_dim_exprs *in, int32_t nb_in,
                                const prt_dim_exprs *shape_in, int32_t nb_shape_in,
                                prt_dim_exprs *out, int32_t nb_out, prt_expr_builder *b)
{
    (void)self, (void)shape_in, (void)nb_shape_in, (void)b;
    if (nb_in != 1 || nb_out != 1)
        return fail(PRT_ERR_SHAPE, "Scale takes one input");
    out[0] = in[0];
    return PRT_OK;
}

static int32_t supports(prt_plugin *self, int32_t pos, const prt_dynamic_tensor_desc *io,
                        int32_t nb_in, int32_t nb_out)
{
    static const int32_t want[2] = {PRT_FLOAT32, PRT_FLOAT32};
    (void)self;
    return supports_exactly(want, 1, 1, pos, io, nb_in, nb_out);
}

SIMPLE_BUILD(NULL);

static prt_status enqueue(prt_plugin *self, const prt_tensor_desc *in_desc,
                          const prt_tensor_desc *out_desc, const void *const *inputs,
                          void *const *outputs, void *ws, int32_t device, void *stream)
{
    const float *x = inputs[0];
    float *y = outputs[0];
    int64_t n = volume(&in_desc[0].dims);
    (void)out_desc, (void)ws, (void)stream;
    if (device != PRT_DEVICE_CPU)
        return fail(PRT_ERR_UNSUPPORTED, "Scale runs on the CPU");
    for (int64_t i = 0; i < n; i++)
        y[i] = (float)me(self)->k * x[i];
    return PRT_OK;
}
