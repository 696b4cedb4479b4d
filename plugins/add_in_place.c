/*
 * AddInPlace (namespace "example", version "1"): out = a + b, written over a.
 *
 * Inputs: a and b, the same dtype (float32 or float16) and shape (rank
 * 0..8). Output 0 aliases input 0 (get_aliased_input(0) == 0): the runtime
 * hands enqueue the same pointer for both. The kernel is correct without
 * that guarantee too: each element reads a[i] and b[i] before writing
 * out[i], so an output that is exactly a or b, or apart from both, is fine;
 * for a partial overlap it picks the copy direction that never reads an
 * element it already wrote, and refuses the one layout where no direction
 * works.
 *
 * float16: each sum is computed in float32 and rounded once to float16.
 * float32 carries 24 significant bits >= 2 * 11 + 2, so the double rounding
 * (exact half inputs -> float32 -> float16) gives the correctly rounded half
 * sum.
 *
 * No fields.
 *
 * CUDA (add_in_place_cuda.cu): the same sums on the device. Threads run in
 * no order, so a partial overlap of the output with an input is refused
 * there; an output equal to an input (the in-place case) or apart from both
 * is fine.
 */
#include "common.h"

#include <string.h>

typedef struct add_in_place {
    plg_object obj;
} add_in_place;

static add_in_place *aip(prt_plugin *p)
{
    return (add_in_place *)p;
}

/* Two inputs (a, b), one output (a + b, over a). */
static prt_status aip_check_io(const add_in_place *a, int32_t nb_in, int32_t nb_out)
{
    return plg_check_io(&a->obj, nb_in, nb_out, 2, 1);
}

static prt_status aip_check_dtypes(const add_in_place *a, int32_t t0, int32_t t1)
{
    if (!plg_float_dtype_ok(t0) || t1 != t0)
        return plg_fail(&a->obj, PRT_ERR_UNSUPPORTED,
                        "inputs are %s and %s; expected two float32 or two "
                        "float16 tensors",
                        plg_dtype_name(t0), plg_dtype_name(t1));
    return PRT_OK;
}

/* ---- build --------------------------------------------------------------- */

static int32_t aip_nb_outputs(const prt_plugin *self)
{
    (void)self;
    return 1;
}

static prt_status aip_get_output_dtypes(prt_plugin *self, int32_t *out_types,
                                        int32_t nb_outputs, const int32_t *in_types,
                                        int32_t nb_inputs)
{
    prt_status st = aip_check_io(aip(self), nb_inputs, nb_outputs);
    if (st == PRT_OK)
        st = aip_check_dtypes(aip(self), in_types[0], in_types[1]);
    if (st != PRT_OK)
        return st;
    out_types[0] = in_types[0];
    return PRT_OK;
}

static prt_status aip_get_output_shapes(prt_plugin *self, const prt_dim_exprs *inputs,
                                        int32_t nb_inputs,
                                        const prt_dim_exprs *shape_inputs,
                                        int32_t nb_shape_inputs, prt_dim_exprs *outputs,
                                        int32_t nb_outputs, prt_expr_builder *exprs)
{
    add_in_place *a = aip(self);
    prt_status st = aip_check_io(a, nb_inputs, nb_outputs);
    (void)shape_inputs, (void)nb_shape_inputs;
    if (st != PRT_OK)
        return st;
    if (inputs[0].nb_dims != inputs[1].nb_dims)
        return plg_fail(&a->obj, PRT_ERR_SHAPE,
                        "inputs have ranks %d and %d; AddInPlace needs equal "
                        "shapes",
                        (int)inputs[0].nb_dims, (int)inputs[1].nb_dims);
    if (inputs[0].nb_dims < 0 || inputs[0].nb_dims > PRT_MAX_DIMS)
        return plg_fail(&a->obj, PRT_ERR_SHAPE, "input rank %d is not valid",
                        (int)inputs[0].nb_dims);
    /* Dims known now must agree; the others are checked at enqueue. */
    if (PLG_HAS(exprs, prt_expr_builder, is_constant)) {
        for (int32_t i = 0; i < inputs[0].nb_dims; i++) {
            int64_t x, y;
            if (exprs->is_constant(exprs, inputs[0].d[i], &x) &&
                exprs->is_constant(exprs, inputs[1].d[i], &y) && x != y)
                return plg_fail(&a->obj, PRT_ERR_SHAPE,
                                "input dims %d differ (%lld and %lld); "
                                "AddInPlace needs equal shapes",
                                (int)i, (long long)x, (long long)y);
        }
    }
    outputs[0] = inputs[0];
    return PRT_OK;
}

static int32_t aip_supports(prt_plugin *self, int32_t pos,
                            const prt_dynamic_tensor_desc *in_out, int32_t nb_inputs,
                            int32_t nb_outputs)
{
    (void)self;
    /* a: linear float32 or float16; b and the output: linear, a's dtype. */
    return plg_supports_float_same_dtype(pos, in_out, nb_inputs, nb_outputs, 2, 1);
}

static prt_status aip_configure(prt_plugin *self, const prt_dynamic_tensor_desc *in,
                                int32_t nb_in, const prt_dynamic_tensor_desc *out,
                                int32_t nb_out)
{
    add_in_place *a = aip(self);
    prt_status st = aip_check_io(a, nb_in, nb_out);
    if (st == PRT_OK)
        st = aip_check_dtypes(a, in[0].desc.dtype, in[1].desc.dtype);
    if (st == PRT_OK)
        st = plg_check_same_dtype(&a->obj, out[0].desc.dtype, in[0].desc.dtype);
    if (st == PRT_OK && in[0].desc.dims.nb_dims != in[1].desc.dims.nb_dims)
        st = plg_fail(&a->obj, PRT_ERR_SHAPE,
                      "inputs have ranks %d and %d; AddInPlace needs equal "
                      "shapes",
                      (int)in[0].desc.dims.nb_dims, (int)in[1].desc.dims.nb_dims);
    return st;
}

static int32_t aip_aliased_input(const prt_plugin *self, int32_t output_index)
{
    (void)self;
    return output_index == 0 ? 0 : -1;
}

static const prt_plugin_build aip_build = {
    sizeof(prt_plugin_build),
    PRT_PLUGIN_ABI_VERSION,
    aip_nb_outputs,
    aip_get_output_dtypes,
    aip_get_output_shapes,
    aip_supports,
    aip_configure,
    plg_get_workspace_size,
    plg_get_valid_tactics,
    aip_aliased_input,
    NULL, /* get_output_values: no shape-tensor outputs */
    NULL, /* requires_host_dims: the kernels read dims_device */
    plg_set_target_device,
    NULL, /* capture_safe: its enqueue may be captured into a graph */
    NULL, /* get_kernel */
};

/* ---- runtime ------------------------------------------------------------- */

static prt_status aip_check_shapes(const add_in_place *a, const prt_tensor_desc *in,
                                   const prt_tensor_desc *out)
{
    const prt_dims *d0 = &in[0].dims, *d1 = &in[1].dims;
    char x[96], y[96];
    if (d0->nb_dims != d1->nb_dims || d0->nb_dims < 0 || d0->nb_dims > PRT_MAX_DIMS ||
        memcmp(d0->d, d1->d, (size_t)d0->nb_dims * sizeof d0->d[0]) != 0)
        return plg_fail(&a->obj, PRT_ERR_SHAPE,
                        "inputs have shapes %s and %s; AddInPlace needs equal "
                        "shapes",
                        plg_dims_str(d0, x, sizeof x), plg_dims_str(d1, y, sizeof y));
    if (out && (out[0].dims.nb_dims != d0->nb_dims ||
                memcmp(out[0].dims.d, d0->d, (size_t)d0->nb_dims * sizeof d0->d[0]) != 0))
        return plg_fail(
            &a->obj, PRT_ERR_SHAPE, "output shape %s differs from the input shape %s",
            plg_dims_str(&out[0].dims, x, sizeof x), plg_dims_str(d0, y, sizeof y));
    return PRT_OK;
}

static prt_status aip_on_shape_change(prt_plugin *self, const prt_tensor_desc *in,
                                      int32_t nb_in, const prt_tensor_desc *out,
                                      int32_t nb_out)
{
    add_in_place *a = aip(self);
    prt_status st = aip_check_io(a, nb_in, nb_out);
    if (st == PRT_OK)
        st = aip_check_shapes(a, in, out);
    return st;
}

/* Whether [p, p + n) and [q, q + n) share a byte. */
static int aip_overlap(uintptr_t p, uintptr_t q, uintptr_t n)
{
    return p < q + n && q < p + n;
}

/* out[i] = a[i] + b[i] for i in [0, n), forward or backward. Each element
 * reads both inputs before it writes. */
#define AIP_LOOP(T, LOAD, STORE)                                                         \
    do {                                                                                 \
        const T *x = a;                                                                  \
        const T *y = b;                                                                  \
        T *z = out;                                                                      \
        if (forward) {                                                                   \
            for (int64_t i = 0; i < n; i++) {                                            \
                float s = LOAD(x[i]) + LOAD(y[i]);                                       \
                z[i] = STORE(s);                                                         \
            }                                                                            \
        } else {                                                                         \
            for (int64_t i = n - 1; i >= 0; i--) {                                       \
                float s = LOAD(x[i]) + LOAD(y[i]);                                       \
                z[i] = STORE(s);                                                         \
            }                                                                            \
        }                                                                                \
    } while (0)
#define AIP_ID(v) (v)

static void aip_kernel(const void *a, const void *b, void *out, int32_t dtype, int64_t n,
                       int forward)
{
    if (dtype == PRT_FLOAT32)
        AIP_LOOP(float, AIP_ID, AIP_ID);
    else
        AIP_LOOP(uint16_t, plg_half_to_float, plg_float_to_half);
}

static prt_status aip_enqueue(prt_plugin *self, const prt_tensor_desc *in_desc,
                              const prt_tensor_desc *out_desc, const void *const *inputs,
                              void *const *outputs, void *workspace, int32_t device,
                              void *stream)
{
    add_in_place *a = aip(self);
    int64_t n;
    uintptr_t pa, pb, po, bytes;
    int fwd_ok = 1, bwd_ok = 1;
    prt_status st =
        plg_check_enqueue(&a->obj, device, in_desc, out_desc, inputs, outputs);
    (void)workspace, (void)stream;
    if (st == PRT_OK)
        st = aip_check_dtypes(a, in_desc[0].dtype, in_desc[1].dtype);
    if (st == PRT_OK)
        st = plg_check_same_dtype(&a->obj, out_desc[0].dtype, in_desc[0].dtype);
    if (st == PRT_OK)
        st = aip_check_shapes(a, in_desc, out_desc);
    if (st != PRT_OK)
        return st;
    n = plg_volume(&in_desc[0].dims);
    if (n < 0)
        return plg_fail(&a->obj, PRT_ERR_SHAPE, "input dims are not valid");
    if (n == 0)
        return PRT_OK;
    if (!inputs[0] || !inputs[1] || !outputs[0])
        return plg_fail(&a->obj, PRT_ERR_INVALID_ARGUMENT,
                        "enqueue with a NULL tensor pointer");
    /* Element i is read (a[i], b[i]) and then written (out[i]). Going
     * forward never clobbers an unread input element when the output starts
     * at or before every input it overlaps; going backward, at or after. An
     * output equal to an input satisfies both. */
    pa = (uintptr_t)inputs[0];
    pb = (uintptr_t)inputs[1];
    po = (uintptr_t)outputs[0];
    bytes = (uintptr_t)n * (uintptr_t)plg_dtype_size(in_desc[0].dtype);
    if (aip_overlap(po, pa, bytes)) {
        fwd_ok &= po <= pa;
        bwd_ok &= po >= pa;
    }
    if (aip_overlap(po, pb, bytes)) {
        fwd_ok &= po <= pb;
        bwd_ok &= po >= pb;
    }
    if (!fwd_ok && !bwd_ok)
        return plg_fail(&a->obj, PRT_ERR_INVALID_ARGUMENT,
                        "the output partly overlaps both inputs from opposite "
                        "sides; no element order computes it in place");
#ifdef PRT_PLUGINS_CUDA
    if (device == PRT_DEVICE_CUDA) {
        plg_add_launch l;
        int err;
        if ((po != pa && aip_overlap(po, pa, bytes)) ||
            (po != pb && aip_overlap(po, pb, bytes)))
            return plg_fail(&a->obj, PRT_ERR_UNSUPPORTED,
                            "on CUDA the output must be an input or apart "
                            "from both; it partly overlaps one");
        memset(&l, 0, sizeof l);
        l.a = inputs[0];
        l.b = inputs[1];
        l.out = outputs[0];
        l.dtype = in_desc[0].dtype;
        l.rank = in_desc[0].dims.nb_dims;
        l.count = n;
        l.dims_device = in_desc[0].dims_device;
        if (!plg_cuda())
            return plg_cuda_unavailable(&a->obj);
        err = plg_cuda()->add(&l, stream);
        return err ? plg_cuda_fail(&a->obj, err, "the add kernel") : PRT_OK;
    }
#endif
    aip_kernel(inputs[0], inputs[1], outputs[0], in_desc[0].dtype, n, fwd_ok);
    return PRT_OK;
}

static const prt_field_collection *aip_fields(prt_plugin *self)
{
    add_in_place *a = aip(self);
    a->obj.serialized.nb_fields = 0;
    a->obj.serialized.fields = NULL;
    return &a->obj.serialized;
}

static const prt_plugin_runtime aip_runtime = {
    sizeof(prt_plugin_runtime),
    PRT_PLUGIN_ABI_VERSION,
    plg_set_tactic,
    aip_on_shape_change,
    aip_enqueue,
    plg_attach_to_context,
    aip_fields,
    plg_clone,
    plg_destroy,
};

static const prt_plugin_vtable aip_vt_build = {sizeof(prt_plugin_vtable),
                                               PRT_PLUGIN_ABI_VERSION, &plg_core,
                                               &aip_build, &aip_runtime};
static const prt_plugin_vtable aip_vt_runtime = {
    sizeof(prt_plugin_vtable), PRT_PLUGIN_ABI_VERSION, &plg_core, NULL, &aip_runtime};

/* ---- creator ------------------------------------------------------------- */

static prt_status aip_create(const prt_plugin_creator *self, const char *layer_name,
                             const prt_field_collection *fields, int32_t phase,
                             prt_plugin **out)
{
    plg_fields f = {self->name, layer_name ? layer_name : "", fields};
    const prt_plugin_vtable *vt;
    add_in_place *a;
    prt_status st = plg_fields_validate(&f); /* no fields; others ignored */
    if (st != PRT_OK)
        return st;
    vt = plg_phase_vtable(self->name, phase, &aip_vt_build, &aip_vt_runtime);
    if (!vt)
        return PRT_ERR_INVALID_ARGUMENT;
    a = (add_in_place *)plg_object_create(self, vt, sizeof *a, f.layer);
    if (!a)
        return PRT_ERR_OUT_OF_MEMORY;
    *out = &a->obj.base;
    return PRT_OK;
}

const prt_plugin_creator plg_add_in_place_creator = {
    sizeof(prt_plugin_creator),
    PRT_PLUGIN_ABI_VERSION,
    "AddInPlace",
    "1",
    "example",
    0,
    NULL,
    aip_create,
    NULL,
};
