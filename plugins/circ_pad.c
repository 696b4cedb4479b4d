/*
 * circ_pad_plugin (namespace "example", version "1"): circular padding, as
 * torch.nn.functional.pad(x, pads, mode="circular").
 *
 * Field: pads (int32 array of even length m, m / 2 <= rank; default empty,
 * which copies the input). Torch's order, last dim first:
 *     pads = [last_before, last_after, second_last_before, ...]
 * Output dims: d + before + after for the last m / 2 dims, built as
 * SUM(d, constant) with the expression builder; other dims pass through.
 *
 * Input: float32 or float16, rank 1..8. Output: same dtype. The copy is by
 * element size, so values are bit-exact.
 *
 * Decisions:
 *  - Negative pads (torch crops with them) are rejected when the plugin is
 *    created: cropping combined with wrap-around has corner cases where torch
 *    itself reads memory it has not written.
 *  - Like torch, a pad may not exceed the dim it pads (it would wrap more
 *    than once). That needs concrete dims, so it is checked in configure
 *    (against the profile's minimum dims), in get_output_shapes when the dim
 *    is a constant, and in on_shape_change and enqueue (concrete dims). The
 *    message names the dim, its size and the pad.
 *  - CUDA (circ_pad_cuda.cu): the same copy, row by row. When the input's
 *    dims come from the device (dims_device), the host checked only their
 *    upper bounds: there a pad larger than the true dim wraps by a modulo
 *    and an empty dim under a pad gives zeros, since a kernel cannot fail.
 */
#include "common.h"

#include <string.h>

#define CP_MAX_PADS (2 * PRT_MAX_DIMS)

typedef struct circ_pad {
    plg_object obj;
    int32_t nb_pads; /* even, 0..CP_MAX_PADS */
    int32_t pads[CP_MAX_PADS];
    prt_field ser[1];
} circ_pad;

static circ_pad *cp(prt_plugin *p)
{
    return (circ_pad *)p;
}

/* One input (x), one output (the padded x). */
static prt_status cp_check_io(const circ_pad *c, int32_t nb_in, int32_t nb_out)
{
    return plg_check_io(&c->obj, nb_in, nb_out, 1, 1);
}

static prt_status cp_check_rank(const circ_pad *c, int32_t rank)
{
    if (rank < 1 || rank > PRT_MAX_DIMS)
        return plg_fail(&c->obj, PRT_ERR_SHAPE,
                        "input has rank %d; circ_pad_plugin takes rank 1 to %d",
                        (int)rank, PRT_MAX_DIMS);
    if (c->nb_pads / 2 > rank)
        return plg_fail(&c->obj, PRT_ERR_SHAPE,
                        "pads has %d values, padding %d dims, but the input "
                        "has rank %d",
                        (int)c->nb_pads, (int)(c->nb_pads / 2), (int)rank);
    return PRT_OK;
}

/* Pads of dim `dim` of a rank-`rank` input (0 if not padded). */
static void cp_dim_pads(const circ_pad *c, int32_t rank, int32_t dim, int64_t *before,
                        int64_t *after)
{
    int32_t p = rank - 1 - dim; /* pads pair index: last dim first */
    *before = *after = 0;
    if (p >= 0 && 2 * p + 1 < c->nb_pads) {
        *before = c->pads[2 * p];
        *after = c->pads[2 * p + 1];
    }
}

/* Torch's rule: each pad at most the dim it pads. `size` < 0 is unknown. */
static prt_status cp_check_dim(const circ_pad *c, int32_t rank, int32_t dim, int64_t size,
                               const char *what)
{
    int64_t before, after, pad;
    cp_dim_pads(c, rank, dim, &before, &after);
    pad = before > after ? before : after;
    if (size < 0 || pad <= size)
        return PRT_OK;
    return plg_fail(&c->obj, PRT_ERR_SHAPE,
                    "dim %d has %s size %lld but is padded by %lld (%s); "
                    "circular padding needs pad <= dim size",
                    (int)dim, what, (long long)size, (long long)pad,
                    before > after ? "before" : "after");
}

static prt_status cp_check_dims(const circ_pad *c, const prt_dims *d, const char *what)
{
    for (int32_t i = 0; i < d->nb_dims; i++) {
        prt_status st = cp_check_dim(c, d->nb_dims, i, d->d[i], what);
        if (st != PRT_OK)
            return st;
    }
    return PRT_OK;
}

/* ---- build --------------------------------------------------------------- */

static int32_t cp_nb_outputs(const prt_plugin *self)
{
    (void)self;
    return 1;
}

static prt_status cp_get_output_dtypes(prt_plugin *self, int32_t *out_types,
                                       int32_t nb_outputs, const int32_t *in_types,
                                       int32_t nb_inputs)
{
    prt_status st = cp_check_io(cp(self), nb_inputs, nb_outputs);
    if (st == PRT_OK)
        st = plg_check_float_input(&cp(self)->obj, in_types[0]);
    if (st != PRT_OK)
        return st;
    out_types[0] = in_types[0];
    return PRT_OK;
}

static prt_status cp_get_output_shapes(prt_plugin *self, const prt_dim_exprs *inputs,
                                       int32_t nb_inputs,
                                       const prt_dim_exprs *shape_inputs,
                                       int32_t nb_shape_inputs, prt_dim_exprs *outputs,
                                       int32_t nb_outputs, prt_expr_builder *exprs)
{
    circ_pad *c = cp(self);
    prt_dim_exprs o;
    int32_t rank = inputs[0].nb_dims;
    prt_status st = cp_check_io(c, nb_inputs, nb_outputs);
    (void)shape_inputs, (void)nb_shape_inputs;
    if (st == PRT_OK)
        st = cp_check_rank(c, rank);
    if (st != PRT_OK)
        return st;
    if (!PLG_HAS(exprs, prt_expr_builder, is_constant))
        return plg_fail(&c->obj, PRT_ERR_VERSION,
                        "the host's expression builder is too old");
    o = inputs[0];
    for (int32_t i = 0; i < rank; i++) {
        int64_t before, after, size;
        cp_dim_pads(c, rank, i, &before, &after);
        if (before + after == 0)
            continue;
        if (exprs->is_constant(exprs, inputs[0].d[i], &size)) {
            st = cp_check_dim(c, rank, i, size, "static");
            if (st != PRT_OK)
                return st;
        }
        o.d[i] = exprs->operation(exprs, PRT_DIM_SUM, inputs[0].d[i],
                                  exprs->constant(exprs, before + after));
        if (!o.d[i])
            return plg_fail(&c->obj, PRT_ERR_PLUGIN,
                            "the expression builder failed for output dim %d", (int)i);
    }
    outputs[0] = o;
    return PRT_OK;
}

static int32_t cp_supports(prt_plugin *self, int32_t pos,
                           const prt_dynamic_tensor_desc *in_out, int32_t nb_inputs,
                           int32_t nb_outputs)
{
    (void)self;
    /* x: linear float32 or float16; the output: linear, x's dtype. */
    return plg_supports_float_same_dtype(pos, in_out, nb_inputs, nb_outputs, 1, 1);
}

static prt_status cp_configure(prt_plugin *self, const prt_dynamic_tensor_desc *in,
                               int32_t nb_in, const prt_dynamic_tensor_desc *out,
                               int32_t nb_out)
{
    circ_pad *c = cp(self);
    const prt_dims *d;
    int32_t rank;
    prt_status st = cp_check_io(c, nb_in, nb_out);
    if (st == PRT_OK)
        st = plg_check_float_input(&c->obj, in[0].desc.dtype);
    if (st == PRT_OK)
        st = plg_check_same_dtype(&c->obj, out[0].desc.dtype, in[0].desc.dtype);
    if (st == PRT_OK)
        st = cp_check_rank(c, in[0].desc.dims.nb_dims);
    if (st != PRT_OK)
        return st;
    /* The smallest size each dim may take: the profile's min, or the static
     * dim when the builder gives no bounds. */
    rank = in[0].desc.dims.nb_dims;
    d = in[0].min.nb_dims == rank ? &in[0].min : &in[0].desc.dims;
    for (int32_t i = 0; i < rank; i++) {
        st = cp_check_dim(c, rank, i, d->d[i],
                          d == &in[0].min ? "minimum (profile)" : "static");
        if (st != PRT_OK)
            return st;
    }
    return PRT_OK;
}

static const prt_plugin_build cp_build = {
    sizeof(prt_plugin_build),
    PRT_PLUGIN_ABI_VERSION,
    cp_nb_outputs,
    cp_get_output_dtypes,
    cp_get_output_shapes,
    cp_supports,
    cp_configure,
    plg_get_workspace_size,
    plg_get_valid_tactics,
    plg_no_aliased_input,
    NULL, /* get_output_values: no shape-tensor outputs */
    NULL, /* requires_host_dims: the kernels read dims_device */
    plg_set_target_device,
    NULL, /* capture_safe: its enqueue may be captured into a graph */
    NULL, /* get_kernel */
};

/* ---- runtime ------------------------------------------------------------- */

static prt_status cp_on_shape_change(prt_plugin *self, const prt_tensor_desc *in,
                                     int32_t nb_in, const prt_tensor_desc *out,
                                     int32_t nb_out)
{
    circ_pad *c = cp(self);
    prt_status st = cp_check_io(c, nb_in, nb_out);
    (void)out;
    if (st == PRT_OK)
        st = cp_check_rank(c, in[0].dims.nb_dims);
    if (st == PRT_OK)
        st = cp_check_dims(c, &in[0].dims, "concrete");
    return st;
}

/* Copies x (dims d) into y (dims od) with circular padding. The output is
 * walked row by row (a row = the last dim); each output row comes from one
 * input row, found by wrapping every leading index, and is three copies:
 * the input row's tail, the row, its head. Requires pad <= dim everywhere. */
static void cp_kernel(const circ_pad *c, const unsigned char *x, unsigned char *y,
                      size_t es, const prt_dims *d, const prt_dims *od)
{
    int32_t rank = d->nb_dims;
    int64_t before[PRT_MAX_DIMS], after[PRT_MAX_DIMS];
    int64_t in_stride[PRT_MAX_DIMS]; /* in rows of the input */
    int64_t idx[PRT_MAX_DIMS] = {0};
    int64_t rows = 1, len = d->d[rank - 1], olen = od->d[rank - 1];
    size_t row_bytes = (size_t)len * es;

    for (int32_t i = 0; i < rank; i++)
        cp_dim_pads(c, rank, i, &before[i], &after[i]);
    in_stride[rank - 1] = 1;
    for (int32_t i = rank - 2; i >= 0; i--)
        in_stride[i] = i == rank - 2 ? 1 : in_stride[i + 1] * d->d[i + 1];
    for (int32_t i = 0; i < rank - 1; i++)
        rows *= od->d[i];
    if (olen == 0)
        return;
    for (int64_t r = 0; r < rows; r++) {
        int64_t src_row = 0;
        unsigned char *dst = y + (size_t)r * (size_t)olen * es;
        const unsigned char *src;
        for (int32_t i = 0; i < rank - 1; i++) {
            /* pad <= dim, so one wrap suffices. */
            int64_t s = idx[i] - before[i];
            if (s < 0)
                s += d->d[i];
            else if (s >= d->d[i])
                s -= d->d[i];
            src_row += s * in_stride[i];
        }
        src = x + (size_t)src_row * row_bytes;
        memcpy(dst, src + (size_t)(len - before[rank - 1]) * es,
               (size_t)before[rank - 1] * es);
        dst += (size_t)before[rank - 1] * es;
        memcpy(dst, src, row_bytes);
        dst += row_bytes;
        memcpy(dst, src, (size_t)after[rank - 1] * es);
        for (int32_t i = rank - 2; i >= 0; i--) {
            if (++idx[i] < od->d[i])
                break;
            idx[i] = 0;
        }
    }
}

static prt_status cp_enqueue(prt_plugin *self, const prt_tensor_desc *in_desc,
                             const prt_tensor_desc *out_desc, const void *const *inputs,
                             void *const *outputs, void *workspace, int32_t device,
                             void *stream)
{
    circ_pad *c = cp(self);
    const prt_dims *d = &in_desc[0].dims;
    prt_dims want;
    char a[96], b[96];
    prt_status st =
        plg_check_enqueue(&c->obj, device, in_desc, out_desc, inputs, outputs);
    (void)workspace, (void)stream;
    if (st == PRT_OK)
        st = plg_check_float_input(&c->obj, in_desc[0].dtype);
    if (st == PRT_OK)
        st = cp_check_rank(c, d->nb_dims);
    if (st == PRT_OK)
        st = cp_check_dims(c, d, "concrete");
    if (st == PRT_OK)
        st = plg_check_input_volume(&c->obj, d, NULL);
    if (st != PRT_OK)
        return st;
    want = *d;
    for (int32_t i = 0; i < d->nb_dims; i++) {
        int64_t before, after;
        cp_dim_pads(c, d->nb_dims, i, &before, &after);
        want.d[i] += before + after;
    }
    if (out_desc[0].dtype != in_desc[0].dtype ||
        out_desc[0].dims.nb_dims != want.nb_dims ||
        memcmp(out_desc[0].dims.d, want.d, (size_t)want.nb_dims * sizeof want.d[0]) != 0)
        return plg_fail(&c->obj, PRT_ERR_SHAPE, "output is %s %s; expected %s %s",
                        plg_dtype_name(out_desc[0].dtype),
                        plg_dims_str(&out_desc[0].dims, a, sizeof a),
                        plg_dtype_name(in_desc[0].dtype),
                        plg_dims_str(&want, b, sizeof b));
    if (plg_volume(&want) <= 0)
        return PRT_OK; /* nothing to write (an input dim of 0 has pads 0) */
    if (!inputs[0] || !outputs[0])
        return plg_fail(&c->obj, PRT_ERR_INVALID_ARGUMENT,
                        "enqueue with a NULL tensor pointer");
#ifdef PRT_PLUGINS_CUDA
    if (device == PRT_DEVICE_CUDA) {
        plg_cp_launch l;
        int err;
        memset(&l, 0, sizeof l);
        plg_unary_io_fill(&l.io, in_desc, inputs, outputs);
        for (int32_t i = 0; i < d->nb_dims; i++)
            cp_dim_pads(c, d->nb_dims, i, &l.before[i], &l.after[i]);
        if (!plg_cuda())
            return plg_cuda_unavailable(&c->obj);
        err = plg_cuda()->circ_pad(&l, stream);
        return err ? plg_cuda_fail(&c->obj, err, "the padding kernel") : PRT_OK;
    }
#endif
    cp_kernel(c, inputs[0], outputs[0], plg_dtype_size(in_desc[0].dtype), d, &want);
    return PRT_OK;
}

static const prt_field_collection *cp_fields(prt_plugin *self)
{
    circ_pad *c = cp(self);
    c->ser[0].name = "pads";
    c->ser[0].data = c->pads;
    c->ser[0].type = PRT_FIELD_INT32;
    c->ser[0].length = c->nb_pads;
    c->obj.serialized.nb_fields = 1;
    c->obj.serialized.fields = c->ser;
    return &c->obj.serialized;
}

static const prt_plugin_runtime cp_runtime = {
    sizeof(prt_plugin_runtime),
    PRT_PLUGIN_ABI_VERSION,
    plg_set_tactic,
    cp_on_shape_change,
    cp_enqueue,
    plg_attach_to_context,
    cp_fields,
    plg_clone,
    plg_destroy,
};

static const prt_plugin_vtable cp_vt_build = {
    sizeof(prt_plugin_vtable), PRT_PLUGIN_ABI_VERSION, &plg_core, &cp_build, &cp_runtime};
static const prt_plugin_vtable cp_vt_runtime = {
    sizeof(prt_plugin_vtable), PRT_PLUGIN_ABI_VERSION, &plg_core, NULL, &cp_runtime};

/* ---- creator ------------------------------------------------------------- */

static const prt_field_schema cp_schema[] = {
    {"pads", PRT_FIELD_INT32, -1,
     "torch order: [last_before, last_after, second_last_before, ...]; even "
     "length, non-negative (default: none)"},
};

static prt_status cp_create(const prt_plugin_creator *self, const char *layer_name,
                            const prt_field_collection *fields, int32_t phase,
                            prt_plugin **out)
{
    plg_fields f = {self->name, layer_name ? layer_name : "", fields};
    const char *sep = f.layer[0] ? " (layer '" : "";
    const char *end = f.layer[0] ? "')" : "";
    const prt_plugin_vtable *vt;
    int32_t pads[CP_MAX_PADS];
    int64_t nb = 0;
    circ_pad *c;
    prt_status st = plg_fields_validate(&f);
    if (st == PRT_OK)
        st = plg_fields_get_i32_array(&f, "pads", pads, CP_MAX_PADS, &nb);
    if (st != PRT_OK)
        return st;
    if (nb % 2 != 0)
        return plg_error(PRT_ERR_INVALID_ARGUMENT,
                         "%s%s%s%s: field 'pads' has %lld values; expected an "
                         "even count (a before and an after per dim)",
                         self->name, sep, f.layer, end, (long long)nb);
    for (int64_t i = 0; i < nb; i++)
        if (pads[i] < 0)
            return plg_error(PRT_ERR_INVALID_ARGUMENT,
                             "%s%s%s%s: field 'pads' value %lld is %d; "
                             "negative pads (cropping) are not supported",
                             self->name, sep, f.layer, end, (long long)i, (int)pads[i]);
    vt = plg_phase_vtable(self->name, phase, &cp_vt_build, &cp_vt_runtime);
    if (!vt)
        return PRT_ERR_INVALID_ARGUMENT;
    c = (circ_pad *)plg_object_create(self, vt, sizeof *c, f.layer);
    if (!c)
        return PRT_ERR_OUT_OF_MEMORY;
    c->nb_pads = (int32_t)nb;
    if (nb > 0)
        memcpy(c->pads, pads, (size_t)nb * sizeof pads[0]);
    *out = &c->obj.base;
    return PRT_OK;
}

const prt_plugin_creator plg_circ_pad_creator = {
    sizeof(prt_plugin_creator),
    PRT_PLUGIN_ABI_VERSION,
    "circ_pad_plugin",
    "1",
    "example",
    (int32_t)(sizeof cp_schema / sizeof cp_schema[0]),
    cp_schema,
    cp_create,
    NULL,
};
