/*
 * CustomHardmax (namespace "", version "1").
 *
 * One float32 or float16 input of rank 1..8; one output of the same dtype
 * and shape holding 1 at the FIRST maximum along `axis` and 0 elsewhere.
 *
 * Field: axis (int32, default -1). Negative counts from the end; an axis out
 * of range for the input's rank fails get_output_shapes (and configure,
 * on_shape_change, enqueue) naming the axis and the rank.
 *
 * NaN rule: NaN compares greater than every number, and the first NaN along
 * the axis wins. That is what numpy.argmax does (it returns the index of the
 * first NaN), so hardmax(x) == one_hot(argmax(x)). A float16 NaN is any
 * encoding with all exponent bits set and a non-zero mantissa.
 *
 * CUDA (hardmax_cuda.cu), tactics (cuda_launch.h): 0 picks by shape; 1 a
 * group of threads per axis line; 2 the axis split across blocks, for few
 * long lines, with partial maxima in the workspace. On the CPU every tactic
 * runs the same loop.
 */
#include "common.h"

#include <string.h>

typedef struct hardmax {
    plg_object obj;
    int32_t axis; /* as given: negative counts from the end */
    int32_t tactic;
    prt_field ser[1];
} hardmax;

/* The tactics (cuda_launch.h), AUTO first: a build without autotuning takes
 * the first listed (plugin.h). None without the CUDA kernels. */
#ifdef PRT_PLUGINS_CUDA
static const int32_t hardmax_tactics[] = {PLG_HM_AUTO, PLG_HM_SHORT_AXIS,
                                          PLG_HM_LONG_AXIS};
#define HM_NB_TACTICS 3
#else
static const int32_t hardmax_tactics[] = {0};
#define HM_NB_TACTICS 0
#endif

static hardmax *hm(prt_plugin *p)
{
    return (hardmax *)p;
}

/* Resolves the axis for an input of `rank`. */
static prt_status hardmax_axis(const hardmax *h, int32_t rank, int32_t *out)
{
    int32_t a = h->axis;
    if (rank < 1 || rank > PRT_MAX_DIMS)
        return plg_fail(&h->obj, PRT_ERR_SHAPE,
                        "input has rank %d; CustomHardmax takes rank 1 to %d", (int)rank,
                        PRT_MAX_DIMS);
    if (a < -rank || a >= rank)
        return plg_fail(&h->obj, PRT_ERR_SHAPE,
                        "axis %d is out of range for an input of rank %d "
                        "(valid: %d to %d)",
                        (int)h->axis, (int)rank, (int)-rank, (int)rank - 1);
    *out = a < 0 ? a + rank : a;
    return PRT_OK;
}

/* One input (x), one output (y). */
static prt_status hardmax_check_io(const hardmax *h, int32_t nb_in, int32_t nb_out)
{
    return plg_check_io(&h->obj, nb_in, nb_out, 1, 1);
}

/* ---- build --------------------------------------------------------------- */

static int32_t hardmax_nb_outputs(const prt_plugin *self)
{
    (void)self;
    return 1;
}

static prt_status hardmax_get_output_dtypes(prt_plugin *self, int32_t *out_types,
                                            int32_t nb_outputs, const int32_t *in_types,
                                            int32_t nb_inputs)
{
    prt_status st = hardmax_check_io(hm(self), nb_inputs, nb_outputs);
    if (st == PRT_OK)
        st = plg_check_float_input(&hm(self)->obj, in_types[0]);
    if (st != PRT_OK)
        return st;
    out_types[0] = in_types[0];
    return PRT_OK;
}

static prt_status hardmax_get_output_shapes(prt_plugin *self, const prt_dim_exprs *inputs,
                                            int32_t nb_inputs,
                                            const prt_dim_exprs *shape_inputs,
                                            int32_t nb_shape_inputs,
                                            prt_dim_exprs *outputs, int32_t nb_outputs,
                                            prt_expr_builder *exprs)
{
    int32_t axis;
    prt_status st = hardmax_check_io(hm(self), nb_inputs, nb_outputs);
    (void)shape_inputs, (void)nb_shape_inputs, (void)exprs;
    if (st == PRT_OK)
        st = hardmax_axis(hm(self), inputs[0].nb_dims, &axis);
    if (st != PRT_OK)
        return st;
    outputs[0] = inputs[0];
    return PRT_OK;
}

static int32_t hardmax_supports(prt_plugin *self, int32_t pos,
                                const prt_dynamic_tensor_desc *in_out, int32_t nb_inputs,
                                int32_t nb_outputs)
{
    (void)self;
    /* x: linear float32 or float16; y: linear, x's dtype. */
    return plg_supports_float_same_dtype(pos, in_out, nb_inputs, nb_outputs, 1, 1);
}

static prt_status hardmax_configure(prt_plugin *self, const prt_dynamic_tensor_desc *in,
                                    int32_t nb_in, const prt_dynamic_tensor_desc *out,
                                    int32_t nb_out)
{
    hardmax *h = hm(self);
    int32_t axis;
    prt_status st = hardmax_check_io(h, nb_in, nb_out);
    if (st == PRT_OK)
        st = plg_check_float_input(&h->obj, in[0].desc.dtype);
    if (st == PRT_OK)
        st = plg_check_same_dtype(&h->obj, out[0].desc.dtype, in[0].desc.dtype);
    if (st == PRT_OK)
        st = hardmax_axis(h, in[0].desc.dims.nb_dims, &axis);
    return st;
}

static prt_status hardmax_get_workspace_size(prt_plugin *self,
                                             const prt_dynamic_tensor_desc *in,
                                             int32_t nb_in,
                                             const prt_dynamic_tensor_desc *out,
                                             int32_t nb_out, int64_t *out_bytes)
{
    (void)self, (void)in, (void)nb_in, (void)out, (void)nb_out;
    *out_bytes = 0;
#ifdef PRT_PLUGINS_CUDA
    {
        int32_t axis = 0;
        int32_t rank = nb_in == 1 ? in[0].max.nb_dims : 0;
        /* The split's partial maxima, at the profile's largest dims. */
        if (plg_sizes_for_cuda(self) && rank >= 1 && rank <= PRT_MAX_DIMS &&
            plg_volume(&in[0].max) > 0 && hardmax_axis(hm(self), rank, &axis) == PRT_OK)
            *out_bytes = plg_hm_workspace(rank, in[0].max.d, axis);
    }
#endif
    return PRT_OK;
}

static prt_status hardmax_get_valid_tactics(prt_plugin *self, int32_t *tactics,
                                            int32_t capacity, int32_t *out_count)
{
    (void)self;
    return plg_list_tactics(hardmax_tactics, HM_NB_TACTICS, tactics, capacity, out_count);
}

static const prt_plugin_build hardmax_build = {
    sizeof(prt_plugin_build),
    PRT_PLUGIN_ABI_VERSION,
    hardmax_nb_outputs,
    hardmax_get_output_dtypes,
    hardmax_get_output_shapes,
    hardmax_supports,
    hardmax_configure,
    hardmax_get_workspace_size,
    hardmax_get_valid_tactics,
    plg_no_aliased_input,
    NULL, /* get_output_values: no shape-tensor outputs */
    NULL, /* requires_host_dims: the kernels read dims_device */
    plg_set_target_device,
    NULL, /* capture_safe: its enqueue may be captured into a graph */
    NULL, /* get_kernel */
};

/* ---- runtime ------------------------------------------------------------- */

static prt_status hardmax_set_tactic(prt_plugin *self, int32_t tactic)
{
    hardmax *h = hm(self);
    prt_status st = plg_check_tactic(&h->obj, tactic, hardmax_tactics, HM_NB_TACTICS);
    if (st == PRT_OK)
        h->tactic = tactic;
    return st;
}

static prt_status hardmax_on_shape_change(prt_plugin *self, const prt_tensor_desc *in,
                                          int32_t nb_in, const prt_tensor_desc *out,
                                          int32_t nb_out)
{
    int32_t axis;
    prt_status st = hardmax_check_io(hm(self), nb_in, nb_out);
    (void)out;
    if (st == PRT_OK)
        st = hardmax_axis(hm(self), in[0].dims.nb_dims, &axis);
    return st;
}

/* Positions along `inner` handled together: the loops over the axis then
 * read rows of HM_CHUNK contiguous values instead of strided single ones. */
#define HM_CHUNK 256

static void hm_load(const void *x, int32_t dtype, int64_t off, int64_t n, float *dst)
{
    if (dtype == PRT_FLOAT32) {
        memcpy(dst, (const float *)x + off, (size_t)n * sizeof(float));
    } else {
        const uint16_t *h = (const uint16_t *)x + off;
        for (int64_t j = 0; j < n; j++)
            dst[j] = plg_half_to_float(h[j]);
    }
}

/* x, y: [outer, n, inner] in dtype. For each (o, j) finds the first maximum
 * of x[o, :, j] (NaN greatest, first NaN wins) and writes the one-hot row. */
static void hm_kernel(const void *x, void *y, int32_t dtype, int64_t outer, int64_t n,
                      int64_t inner)
{
    float best[HM_CHUNK], v[HM_CHUNK];
    int64_t arg[HM_CHUNK];
    if (n == 0 || inner == 0)
        return;
    if (inner == 1) {
        /* The last axis (the usual case): each row is contiguous. */
        for (int64_t o = 0; o < outer; o++) {
            int64_t arg0 = 0, base = o * n;
            float b;
            hm_load(x, dtype, base, 1, &b);
            for (int64_t k = 1; k < n && b == b; k++) {
                float vk;
                if (dtype == PRT_FLOAT32)
                    vk = ((const float *)x)[base + k];
                else
                    vk = plg_half_to_float(((const uint16_t *)x)[base + k]);
                if (vk != vk || vk > b) {
                    b = vk;
                    arg0 = k;
                }
            }
            if (dtype == PRT_FLOAT32) {
                float *yr = (float *)y + base;
                for (int64_t k = 0; k < n; k++)
                    yr[k] = 0.0f;
                yr[arg0] = 1.0f;
            } else {
                uint16_t *yr = (uint16_t *)y + base;
                for (int64_t k = 0; k < n; k++)
                    yr[k] = 0;
                yr[arg0] = PLG_HALF_ONE;
            }
        }
        return;
    }
    for (int64_t o = 0; o < outer; o++) {
        int64_t base = o * n * inner;
        for (int64_t j0 = 0; j0 < inner; j0 += HM_CHUNK) {
            int64_t jn = inner - j0 < HM_CHUNK ? inner - j0 : HM_CHUNK;
            hm_load(x, dtype, base + j0, jn, best);
            for (int64_t j = 0; j < jn; j++)
                arg[j] = 0;
            for (int64_t k = 1; k < n; k++) {
                hm_load(x, dtype, base + k * inner + j0, jn, v);
                for (int64_t j = 0; j < jn; j++) {
                    /* A NaN best is final; otherwise a NaN or a strictly
                     * greater value takes over (ties keep the first). */
                    if (best[j] == best[j] && (v[j] != v[j] || v[j] > best[j])) {
                        best[j] = v[j];
                        arg[j] = k;
                    }
                }
            }
            for (int64_t k = 0; k < n; k++) {
                int64_t off = base + k * inner + j0;
                if (dtype == PRT_FLOAT32) {
                    float *yr = (float *)y + off;
                    for (int64_t j = 0; j < jn; j++)
                        yr[j] = arg[j] == k ? 1.0f : 0.0f;
                } else {
                    uint16_t *yr = (uint16_t *)y + off;
                    for (int64_t j = 0; j < jn; j++)
                        yr[j] = arg[j] == k ? PLG_HALF_ONE : 0;
                }
            }
        }
    }
}

static prt_status hardmax_enqueue(prt_plugin *self, const prt_tensor_desc *in_desc,
                                  const prt_tensor_desc *out_desc,
                                  const void *const *inputs, void *const *outputs,
                                  void *workspace, int32_t device, void *stream)
{
    hardmax *h = hm(self);
    const prt_dims *d = &in_desc[0].dims;
    int64_t outer = 1, inner = 1, n, vol;
    int32_t axis = 0;
    char a[96], b[96];
    prt_status st =
        plg_check_enqueue(&h->obj, device, in_desc, out_desc, inputs, outputs);
    (void)workspace, (void)stream;
    if (st == PRT_OK)
        st = plg_check_float_input(&h->obj, in_desc[0].dtype);
    if (st == PRT_OK)
        st = hardmax_axis(h, d->nb_dims, &axis);
    if (st == PRT_OK)
        st = plg_check_input_volume(&h->obj, d, &vol);
    if (st != PRT_OK)
        return st;
    if (out_desc[0].dtype != in_desc[0].dtype || plg_volume(&out_desc[0].dims) != vol ||
        out_desc[0].dims.nb_dims != d->nb_dims)
        return plg_fail(&h->obj, PRT_ERR_SHAPE, "output %s %s does not match input %s %s",
                        plg_dtype_name(out_desc[0].dtype),
                        plg_dims_str(&out_desc[0].dims, a, sizeof a),
                        plg_dtype_name(in_desc[0].dtype), plg_dims_str(d, b, sizeof b));
    if (vol == 0)
        return PRT_OK;
    if (!inputs[0] || !outputs[0])
        return plg_fail(&h->obj, PRT_ERR_INVALID_ARGUMENT,
                        "enqueue with a NULL tensor pointer");
#ifdef PRT_PLUGINS_CUDA
    if (device == PRT_DEVICE_CUDA) {
        plg_hm_launch l;
        int err;
        plg_unary_io_fill(&l.io, in_desc, inputs, outputs);
        l.axis = axis;
        l.tactic = h->tactic;
        l.workspace = workspace;
        if (!plg_cuda())
            return plg_cuda_unavailable(&h->obj);
        err = plg_cuda()->hardmax(&l, stream);
        return err ? plg_cuda_fail(&h->obj, err, "the hardmax kernels") : PRT_OK;
    }
#endif
    for (int32_t i = 0; i < axis; i++)
        outer *= d->d[i];
    n = d->d[axis];
    for (int32_t i = axis + 1; i < d->nb_dims; i++)
        inner *= d->d[i];
    hm_kernel(inputs[0], outputs[0], in_desc[0].dtype, outer, n, inner);
    return PRT_OK;
}

static const prt_field_collection *hardmax_fields(prt_plugin *self)
{
    hardmax *h = hm(self);
    h->ser[0].name = "axis";
    h->ser[0].data = &h->axis;
    h->ser[0].type = PRT_FIELD_INT32;
    h->ser[0].length = 1;
    h->obj.serialized.nb_fields = 1;
    h->obj.serialized.fields = h->ser;
    return &h->obj.serialized;
}

static const prt_plugin_runtime hardmax_runtime = {
    sizeof(prt_plugin_runtime),
    PRT_PLUGIN_ABI_VERSION,
    hardmax_set_tactic,
    hardmax_on_shape_change,
    hardmax_enqueue,
    plg_attach_to_context,
    hardmax_fields,
    plg_clone,
    plg_destroy,
};

static const prt_plugin_vtable hardmax_vt_build = {sizeof(prt_plugin_vtable),
                                                   PRT_PLUGIN_ABI_VERSION, &plg_core,
                                                   &hardmax_build, &hardmax_runtime};
static const prt_plugin_vtable hardmax_vt_runtime = {
    sizeof(prt_plugin_vtable), PRT_PLUGIN_ABI_VERSION, &plg_core, NULL, &hardmax_runtime};

/* ---- creator ------------------------------------------------------------- */

static const prt_field_schema hardmax_schema[] = {
    {"axis", PRT_FIELD_INT32, 1,
     "axis of the maximum; negative counts from the end (default -1)"},
};

static prt_status hardmax_create(const prt_plugin_creator *self, const char *layer_name,
                                 const prt_field_collection *fields, int32_t phase,
                                 prt_plugin **out)
{
    plg_fields f = {self->name, layer_name ? layer_name : "", fields};
    const prt_plugin_vtable *vt;
    int32_t axis = -1;
    hardmax *h;
    prt_status st = plg_fields_validate(&f);
    if (st == PRT_OK)
        st = plg_fields_get_i32(&f, "axis", -1, &axis);
    if (st != PRT_OK)
        return st;
    vt = plg_phase_vtable(self->name, phase, &hardmax_vt_build, &hardmax_vt_runtime);
    if (!vt)
        return PRT_ERR_INVALID_ARGUMENT;
    h = (hardmax *)plg_object_create(self, vt, sizeof *h, f.layer);
    if (!h)
        return PRT_ERR_OUT_OF_MEMORY;
    h->axis = axis;
    *out = &h->obj.base;
    return PRT_OK;
}

const prt_plugin_creator plg_hardmax_creator = {
    sizeof(prt_plugin_creator),
    PRT_PLUGIN_ABI_VERSION,
    "CustomHardmax",
    "1",
    "",
    (int32_t)(sizeof hardmax_schema / sizeof hardmax_schema[0]),
    hardmax_schema,
    hardmax_create,
    NULL,
};
