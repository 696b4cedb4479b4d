/*
 * check::SegmentSum@1: data float32 [N, D] and ids int32 [N] -> out
 * float32 [S, D], row s the sum of the rows of data whose id is s (ids
 * outside 0..S-1 are dropped); S is the field `segments` (default 4). Its
 * inputs share their leading dim, which configure checks: discovery finds
 * it by tying leading dims.
 *
 * BROKEN_OVERRUN: enqueue also writes a row of totals after the last
 * segment, past out's buffer.
 * BROKEN_REFUSE_ALL: configure refuses every profile, so nothing runs: the
 * checker must say so (untested), quoting configure's refusal, the
 * furthest any candidate got, not the last candidate's.
 */
#if !defined(BROKEN_NONE) && !defined(BROKEN_OVERRUN) && !defined(BROKEN_REFUSE_ALL)
#error "define BROKEN_NONE, BROKEN_OVERRUN or BROKEN_REFUSE_ALL"
#endif

#define SIMPLE_NAME "SegmentSum"
#define SIMPLE_FIELD "segments"
#define SIMPLE_DEFAULT 4
#define SIMPLE_REQUIRED 0
#include "simple.h"

SIMPLE_NB_OUTPUTS(1)

static prt_status output_dtypes(prt_plugin *self, int32_t *out, int32_t nb_out,
                                const int32_t *in, int32_t nb_in)
{
    (void)self;
    if (nb_in != 2 || nb_out != 1 || in[0] != PRT_FLOAT32 || in[1] != PRT_INT32)
        return fail(PRT_ERR_UNSUPPORTED, "SegmentSum takes data float32 and ids int32");
    out[0] = PRT_FLOAT32;
    return PRT_OK;
}

static prt_status output_shapes(prt_plugin *self, const prt_dim_exprs *in, int32_t nb_in,
                                const prt_dim_exprs *shape_in, int32_t nb_shape_in,
                                prt_dim_exprs *out, int32_t nb_out, prt_expr_builder *b)
{
    (void)shape_in, (void)nb_shape_in;
    if (nb_in != 2 || nb_out != 1 || in[0].nb_dims != 2 || in[1].nb_dims != 1)
        return fail(PRT_ERR_SHAPE, "SegmentSum takes data [N, D] and ids [N]");
    out[0].nb_dims = 2;
    out[0].d[0] = b->constant(b, me(self)->k);
    out[0].d[1] = in[0].d[1];
    return PRT_OK;
}

static int32_t supports(prt_plugin *self, int32_t pos, const prt_dynamic_tensor_desc *io,
                        int32_t nb_in, int32_t nb_out)
{
    static const int32_t want[3] = {PRT_FLOAT32, PRT_INT32, PRT_FLOAT32};
    (void)self;
    return supports_exactly(want, 2, 1, pos, io, nb_in, nb_out);
}

static prt_status configure(prt_plugin *self, const prt_dynamic_tensor_desc *in,
                            int32_t nb_in, const prt_dynamic_tensor_desc *out,
                            int32_t nb_out)
{
    (void)self, (void)out, (void)nb_out;
#ifdef BROKEN_REFUSE_ALL
    (void)in, (void)nb_in;
    return fail(PRT_ERR_SHAPE, "SegmentSum: no profile suits it");
#else
    return first_dims_agree(in, nb_in,
                            "SegmentSum: data [N, D] and ids [N] must share N");
#endif
}

SIMPLE_BUILD(configure);

static prt_status enqueue(prt_plugin *self, const prt_tensor_desc *in_desc,
                          const prt_tensor_desc *out_desc, const void *const *inputs,
                          void *const *outputs, void *ws, int32_t device, void *stream)
{
    const float *x = inputs[0];
    const int32_t *ids = inputs[1];
    float *y = outputs[0];
    int64_t n = in_desc[0].dims.d[0], d = in_desc[0].dims.d[1], s = me(self)->k;
    (void)out_desc, (void)ws, (void)stream;
    if (device != PRT_DEVICE_CPU)
        return fail(PRT_ERR_UNSUPPORTED, "SegmentSum runs on the CPU");
    if (in_desc[1].dims.d[0] != n)
        return fail(PRT_ERR_SHAPE, "SegmentSum: data [N, D] and ids [N] must share N");
    memset(y, 0, sizeof *y * (size_t)(s * d));
    for (int64_t i = 0; i < n; i++)
        if (ids[i] >= 0 && ids[i] < s)
            for (int64_t j = 0; j < d; j++)
                y[ids[i] * d + j] += x[i * d + j];
#ifdef BROKEN_OVERRUN
    for (int64_t j = 0; j < d; j++)
        y[s * d + j] = 0.0f;
#endif
    return PRT_OK;
}
