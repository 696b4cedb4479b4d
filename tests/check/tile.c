/*
 * check::Tile@1, a plugin with a shape input, which `plugrt check` must
 * find and exercise: built as it should be (BROKEN_NONE) and with one
 * defect (BROKEN_STALE_REPEATS).
 *
 * One float32 input x of rank 1..4 and one shape input, repeats, with as
 * many values as x has dims (prt_network_add_plugin's shape_inputs: the
 * values reach get_output_shapes as expressions, not enqueue). The output
 * is x tiled repeats[i] times along dim i: dims x.d[i] * repeats[i]. On
 * the CPU only. Enqueue reads the repeats from its tensors (out.d[i] /
 * x.d[i]), the only place a run has them.
 *
 * Defect:
 *   STALE_REPEATS  configure keeps the smallest repeats of the profile and
 *                  enqueue tiles by those, whatever the run's are: part of
 *                  the output stays unwritten when a run's repeats are
 *                  larger (only shape-input values that vary within the
 *                  profile show it)
 */
#include <stdlib.h>
#include <string.h>

#include "plugrt/plugin.h"
#include "scaffold.h"

#if !defined(BROKEN_NONE) && !defined(BROKEN_STALE_REPEATS)
#error "define one BROKEN_* (BROKEN_NONE for the plugin without a defect)"
#endif

typedef struct tile {
    prt_plugin base;
    int32_t rank;
    int64_t stale[PRT_MAX_DIMS]; /* STALE_REPEATS: the profile's smallest repeats */
    prt_field_collection fields;
} tile;

static tile *me(prt_plugin *p)
{
    return (tile *)p;
}

SCAFFOLD_CORE("Tile", 1u << PRT_DEVICE_CPU);

/* ---- build ------------------------------------------------------------------ */

static int32_t nb_outputs(const prt_plugin *self)
{
    (void)self;
    return 1;
}

static prt_status output_dtypes(prt_plugin *self, int32_t *out, int32_t nb_out,
                                const int32_t *in, int32_t nb_in)
{
    (void)self;
    if (nb_in != 1 || nb_out != 1)
        return fail(PRT_ERR_INVALID_ARGUMENT, "Tile takes 1 input and 1 output");
    if (in[0] != PRT_FLOAT32)
        return fail(PRT_ERR_UNSUPPORTED, "Tile takes a float32 input");
    out[0] = PRT_FLOAT32;
    return PRT_OK;
}

static prt_status output_shapes(prt_plugin *self, const prt_dim_exprs *in, int32_t nb_in,
                                const prt_dim_exprs *shape_in, int32_t nb_shape_in,
                                prt_dim_exprs *out, int32_t nb_out, prt_expr_builder *b)
{
    (void)self;
    if (nb_in != 1 || nb_out != 1)
        return fail(PRT_ERR_INVALID_ARGUMENT, "Tile takes 1 input and 1 output");
    if (nb_shape_in != 1)
        return fail(PRT_ERR_SHAPE, "Tile takes its repeats as 1 shape input");
    if (in[0].nb_dims < 1 || in[0].nb_dims > 4)
        return fail(PRT_ERR_SHAPE, "Tile takes an input of rank 1 to 4");
    if (shape_in[0].nb_dims != in[0].nb_dims)
        return fail(PRT_ERR_SHAPE, "Tile: repeats has one value per dim of the input");
    out[0].nb_dims = in[0].nb_dims;
    for (int32_t i = 0; i < in[0].nb_dims; i++) {
        out[0].d[i] = b->operation(b, PRT_DIM_PROD, in[0].d[i], shape_in[0].d[i]);
        if (!out[0].d[i])
            return fail(PRT_ERR_SHAPE, "Tile: an output dim could not be made");
    }
    return PRT_OK;
}

static int32_t supports(prt_plugin *self, int32_t pos, const prt_dynamic_tensor_desc *io,
                        int32_t nb_in, int32_t nb_out)
{
    (void)self;
    return nb_in == 1 && nb_out == 1 && pos >= 0 && pos <= 1 &&
           io[pos].desc.format == PRT_FORMAT_LINEAR && io[pos].desc.dtype == PRT_FLOAT32;
}

static prt_status configure(prt_plugin *self, const prt_dynamic_tensor_desc *in,
                            int32_t nb_in, const prt_dynamic_tensor_desc *out,
                            int32_t nb_out)
{
    tile *t = me(self);
    if (nb_in != 1 || nb_out != 1 || in[0].min.nb_dims != out[0].min.nb_dims)
        return fail(PRT_ERR_INVALID_ARGUMENT, "Tile: configured with other tensors");
    t->rank = in[0].min.nb_dims;
    for (int32_t i = 0; i < t->rank; i++)
        t->stale[i] = in[0].min.d[i] > 0 ? out[0].min.d[i] / in[0].min.d[i] : 1;
    return PRT_OK;
}

static const prt_plugin_build build = {sizeof build,  PRT_PLUGIN_ABI_VERSION,
                                       nb_outputs,    output_dtypes,
                                       output_shapes, supports,
                                       configure,     NULL,
                                       NULL,          NULL,
                                       NULL,          NULL,
                                       NULL,          NULL,
                                       NULL};

/* ---- runtime ---------------------------------------------------------------- */

static prt_status enqueue(prt_plugin *self, const prt_tensor_desc *in_desc,
                          const prt_tensor_desc *out_desc, const void *const *inputs,
                          void *const *outputs, void *ws, int32_t device, void *stream)
{
    const prt_dims *xd = &in_desc[0].dims;
    const float *x = inputs[0];
    float *y = outputs[0];
    int64_t od[PRT_MAX_DIMS], n = 1;
    int32_t r = xd->nb_dims;
    (void)ws, (void)stream;
    if (device != PRT_DEVICE_CPU)
        return fail(PRT_ERR_UNSUPPORTED, "Tile runs on the CPU");
    if (out_desc[0].dims.nb_dims != r)
        return fail(PRT_ERR_SHAPE, "Tile: the output's rank differs from the input's");
    for (int32_t i = 0; i < r; i++) {
#ifdef BROKEN_STALE_REPEATS
        od[i] = xd->d[i] * (i < me(self)->rank ? me(self)->stale[i] : 1);
#else
        (void)self;
        od[i] = out_desc[0].dims.d[i];
#endif
        n *= od[i];
    }
    for (int64_t e = 0; e < n; e++) {
        int64_t rest = e, src = 0, stride = 1;
        for (int32_t i = r - 1; i >= 0; i--) {
            int64_t c = rest % od[i];
            rest /= od[i];
            src += (c % xd->d[i]) * stride;
            stride *= xd->d[i];
        }
        y[e] = x[src];
    }
    return PRT_OK;
}

static prt_plugin *make(const prt_plugin_vtable *vt);

static prt_plugin *copy_of(const tile *t)
{
    tile *q = (tile *)make(t->base.vt);
    if (q) {
        q->rank = t->rank;
        memcpy(q->stale, t->stale, sizeof q->stale);
    }
    return q ? &q->base : NULL;
}

static prt_plugin *attach(prt_plugin *self, prt_plugin_resources *res)
{
    (void)res;
    return copy_of(me(self));
}

static prt_plugin *clone(const prt_plugin *self)
{
    return copy_of((const tile *)self);
}

static const prt_field_collection *fields(prt_plugin *self)
{
    me(self)->fields.nb_fields = 0;
    me(self)->fields.fields = NULL;
    return &me(self)->fields;
}

static void destroy(prt_plugin *self)
{
    free(self);
}

static const prt_plugin_runtime runtime = {
    sizeof runtime, PRT_PLUGIN_ABI_VERSION, NULL, NULL, enqueue, attach, fields, clone,
    destroy};

static const prt_plugin_vtable vt_build = {sizeof vt_build, PRT_PLUGIN_ABI_VERSION, &core,
                                           &build, &runtime};
static const prt_plugin_vtable vt_runtime = {sizeof vt_runtime, PRT_PLUGIN_ABI_VERSION,
                                             &core, NULL, &runtime};

static prt_plugin *make(const prt_plugin_vtable *vt)
{
    tile *t = calloc(1, sizeof *t);
    if (!t) {
        fail(PRT_ERR_OUT_OF_MEMORY, "Tile: out of memory");
        return NULL;
    }
    t->base.vt = vt;
    return &t->base;
}

/* ---- creator and library ------------------------------------------------------- */

static prt_status create(const prt_plugin_creator *self, const char *layer,
                         const prt_field_collection *fc, int32_t phase, prt_plugin **out)
{
    (void)self, (void)layer;
    if (phase != PRT_PHASE_BUILD && phase != PRT_PHASE_RUNTIME)
        return fail(PRT_ERR_INVALID_ARGUMENT, "Tile: unknown phase");
    if (fc && fc->nb_fields > 0)
        return fail(PRT_ERR_INVALID_ARGUMENT, "Tile has no fields");
    *out = make(phase == PRT_PHASE_BUILD ? &vt_build : &vt_runtime);
    return *out ? PRT_OK : PRT_ERR_OUT_OF_MEMORY;
}

static const prt_plugin_creator creator = {
    sizeof creator, PRT_PLUGIN_ABI_VERSION, "Tile", "1", "check", 0, NULL, create, NULL};
SCAFFOLD_LIBRARY("tile", creator)
