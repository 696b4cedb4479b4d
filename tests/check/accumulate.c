/*
 * check::Accumulate@1: a and b float32 of one shape -> a + b, over a.
 * Output 0 aliases input 0, and enqueue relies on what plugin.h promises
 * for it: at enqueue the output holds a's data (a's memory, or a copy the
 * runtime makes first), so the kernel is out += b and never reads a.
 * `plugrt check` runs it apart (its own buffers, the output a copy of a)
 * and in place (the output is a), and both must agree. configure refuses
 * inputs of different shapes. Field: unused (an int32, default 1).
 *
 * BROKEN_HAZARD: writes the aliased output before it has read the input
 * it aliases (out = b, then out += a): right apart, 2 * b in place, as a
 * stencil or a transpose written in place goes wrong. The alias check
 * fails it.
 * BROKEN_THROUGH_INPUT: adds b into a through its input pointer, taking
 * "one address at run time" for granted: right in place, but apart (the
 * builder's timing runs) it writes an input. The bounds check fails it.
 */
#if !defined(BROKEN_NONE) && !defined(BROKEN_HAZARD) &&                                  \
    !defined(BROKEN_THROUGH_INPUT) && !defined(BROKEN_TACTICS)
#error "define BROKEN_NONE, BROKEN_HAZARD, BROKEN_THROUGH_INPUT or BROKEN_TACTICS"
#endif

#ifdef BROKEN_TACTICS
/* Not broken: two tactics, 0 relying on the copy (out += b), 1 reading a
 * itself (out = a + b); they agree only where the output holds a's data at
 * enqueue, the builder's timing runs included (alias.sh). */
#include "plugrt/plugin.h"
static prt_status set_tactic(prt_plugin *self, int32_t tactic);
#define SIMPLE_SET_TACTIC set_tactic
#endif

#define SIMPLE_NAME "Accumulate"
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
                                  "Accumulate takes a and b, float32 both");
}

static prt_status output_shapes(prt_plugin *self, const prt_dim_exprs *in, int32_t nb_in,
                                const prt_dim_exprs *shape_in, int32_t nb_shape_in,
                                prt_dim_exprs *out, int32_t nb_out, prt_expr_builder *b)
{
    (void)self, (void)shape_in, (void)nb_shape_in, (void)b;
    if (nb_in != 2 || nb_out != 1 || in[0].nb_dims != in[1].nb_dims)
        return fail(PRT_ERR_SHAPE, "Accumulate takes a and b of one rank");
    /* a's own expressions: an output aliases an input of its shape. */
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

static int same_dims(const prt_dims *a, const prt_dims *b)
{
    return a->nb_dims == b->nb_dims &&
           memcmp(a->d, b->d, sizeof a->d[0] * (size_t)a->nb_dims) == 0;
}

static prt_status configure(prt_plugin *self, const prt_dynamic_tensor_desc *in,
                            int32_t nb_in, const prt_dynamic_tensor_desc *out,
                            int32_t nb_out)
{
    (void)self, (void)out, (void)nb_out;
    if (nb_in != 2 || !same_dims(&in[0].min, &in[1].min) ||
        !same_dims(&in[0].opt, &in[1].opt) || !same_dims(&in[0].max, &in[1].max))
        return fail(PRT_ERR_SHAPE, "Accumulate: a and b must have one shape");
    return PRT_OK;
}

static int32_t aliased_input(const prt_plugin *self, int32_t output_index)
{
    (void)self;
    return output_index == 0 ? 0 : -1;
}

#ifdef BROKEN_TACTICS
static prt_status valid_tactics(prt_plugin *self, int32_t *tactics, int32_t capacity,
                                int32_t *out_count)
{
    (void)self;
    for (int32_t i = 0; i < 2 && i < capacity; i++)
        tactics[i] = i;
    *out_count = 2;
    return PRT_OK;
}

static prt_status set_tactic(prt_plugin *self, int32_t tactic)
{
    if (tactic != 0 && tactic != 1)
        return fail(PRT_ERR_INVALID_ARGUMENT, "Accumulate has tactics 0 and 1");
    me(self)->tactic = tactic;
    return PRT_OK;
}
#endif

static const prt_plugin_build build = {
    .struct_size = sizeof build,
    .abi_version = PRT_PLUGIN_ABI_VERSION,
    .nb_outputs = nb_outputs,
    .get_output_dtypes = output_dtypes,
    .get_output_shapes = output_shapes,
    .supports_format_combination = supports,
    .configure = configure,
    .get_aliased_input = aliased_input,
#ifdef BROKEN_TACTICS
    .get_valid_tactics = valid_tactics,
#endif
};

static prt_status enqueue(prt_plugin *self, const prt_tensor_desc *in_desc,
                          const prt_tensor_desc *out_desc, const void *const *inputs,
                          void *const *outputs, void *ws, int32_t device, void *stream)
{
    const float *b = inputs[1];
    float *out = outputs[0];
    int64_t n = volume(&out_desc[0].dims);
    (void)self, (void)ws, (void)stream;
    if (device != PRT_DEVICE_CPU)
        return fail(PRT_ERR_UNSUPPORTED, "Accumulate runs on the CPU");
    if (!same_dims(&in_desc[0].dims, &in_desc[1].dims) ||
        !same_dims(&in_desc[0].dims, &out_desc[0].dims))
        return fail(PRT_ERR_SHAPE, "Accumulate: a, b and the output must have one shape");
#ifdef BROKEN_HAZARD
    {
        const float *a = inputs[0];
        for (int64_t i = 0; i < n; i++)
            out[i] = b[i];
        for (int64_t i = 0; i < n; i++)
            out[i] += a[i];
    }
#elif defined(BROKEN_THROUGH_INPUT)
    {
        float *a = (float *)(uintptr_t)inputs[0];
        (void)out;
        for (int64_t i = 0; i < n; i++)
            a[i] += b[i];
    }
#else
#ifdef BROKEN_TACTICS
    if (me(self)->tactic == 1) {
        const float *a = inputs[0];
        for (int64_t i = 0; i < n; i++)
            out[i] = a[i] + b[i];
        return PRT_OK;
    }
#endif
    /* out holds a already (plugin.h, get_aliased_input). */
    for (int64_t i = 0; i < n; i++)
        out[i] += b[i];
#endif
    return PRT_OK;
}
