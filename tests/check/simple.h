/*
 * The rest of a one-file test plugin whose whole state is one int32 field:
 * core (scaffold.h), runtime table, creator and library. The including
 * file defines, before including it,
 *   SIMPLE_NAME      the plugin's name ("Select"), namespace "check"
 *   SIMPLE_FIELD     the field's name ("segments")
 *   SIMPLE_DEFAULT   its value when not given
 *   SIMPLE_REQUIRED  1: create refuses fields without it (no default)
 * and, after, nb_outputs, output_dtypes, output_shapes, supports (and
 * configure), SIMPLE_BUILD and enqueue; me(p)->k is the field.
 * BROKEN_NULL_PLUGIN: create returns PRT_OK and no plugin where it should
 * refuse a missing required field.
 */
#ifndef PLUGRT_TESTS_CHECK_SIMPLE_H
#define PLUGRT_TESTS_CHECK_SIMPLE_H

#include <stdlib.h>
#include <string.h>

#include "plugrt/plugin.h"
#include "scaffold.h"

typedef struct simple {
    prt_plugin base;
    int32_t k;
    int32_t tactic; /* with SIMPLE_SET_TACTIC */
    prt_field ser[1];
    prt_field_collection fields;
} simple;

static simple *me(prt_plugin *p)
{
    return (simple *)p;
}

static const prt_plugin_build build;
static prt_status enqueue(prt_plugin *self, const prt_tensor_desc *in_desc,
                          const prt_tensor_desc *out_desc, const void *const *inputs,
                          void *const *outputs, void *ws, int32_t device, void *stream);

SCAFFOLD_CORE(SIMPLE_NAME, 1u << PRT_DEVICE_CPU);

static const prt_plugin_vtable vt_build, vt_runtime;

static prt_plugin *make(int32_t k, const prt_plugin_vtable *vt)
{
    simple *p = calloc(1, sizeof *p);
    if (!p) {
        fail(PRT_ERR_OUT_OF_MEMORY, SIMPLE_NAME ": out of memory");
        return NULL;
    }
    p->base.vt = vt;
    p->k = k;
    return &p->base;
}

static prt_plugin *attach(prt_plugin *self, prt_plugin_resources *res)
{
    (void)res;
    return make(me(self)->k, self->vt);
}

static prt_plugin *clone(const prt_plugin *self)
{
    return make(((const simple *)self)->k, self->vt);
}

static const prt_field_collection *fields(prt_plugin *self)
{
    simple *p = me(self);
    p->ser[0] = (prt_field){SIMPLE_FIELD, &p->k, PRT_FIELD_INT32, 1};
    p->fields.fields = p->ser;
    p->fields.nb_fields = 1;
    return &p->fields;
}

static void destroy(prt_plugin *self)
{
    free(self);
}

/* SIMPLE_SET_TACTIC: the including file's set_tactic (which keeps the
 * tactic in me(p)->tactic); else only tactic 0. */
#ifndef SIMPLE_SET_TACTIC
#define SIMPLE_SET_TACTIC NULL
#endif
static const prt_plugin_runtime runtime = {sizeof runtime,
                                           PRT_PLUGIN_ABI_VERSION,
                                           SIMPLE_SET_TACTIC,
                                           NULL,
                                           enqueue,
                                           attach,
                                           fields,
                                           clone,
                                           destroy};
static const prt_plugin_vtable vt_build = {sizeof vt_build, PRT_PLUGIN_ABI_VERSION, &core,
                                           &build, &runtime};
static const prt_plugin_vtable vt_runtime = {sizeof vt_runtime, PRT_PLUGIN_ABI_VERSION,
                                             &core, NULL, &runtime};

static const prt_field_schema schema[] = {{SIMPLE_FIELD, PRT_FIELD_INT32, 1, "an int32"}};

static prt_status create(const prt_plugin_creator *self, const char *layer,
                         const prt_field_collection *fc, int32_t phase, prt_plugin **out)
{
    int32_t k = SIMPLE_DEFAULT;
    int given = 0;
    (void)self, (void)layer;
    if (phase != PRT_PHASE_BUILD && phase != PRT_PHASE_RUNTIME)
        return fail(PRT_ERR_INVALID_ARGUMENT, SIMPLE_NAME ": unknown phase");
    for (int32_t i = 0; fc && i < fc->nb_fields; i++) {
        const prt_field *f = &fc->fields[i];
        if (!f->name || strcmp(f->name, SIMPLE_FIELD) != 0)
            continue;
        if (f->type != PRT_FIELD_INT32 || f->length != 1 || !f->data)
            return fail(PRT_ERR_INVALID_ARGUMENT,
                        SIMPLE_NAME ": " SIMPLE_FIELD " is one int32");
        memcpy(&k, f->data, sizeof k);
        given = 1;
    }
    if (SIMPLE_REQUIRED && !given) {
#ifdef BROKEN_NULL_PLUGIN
        return PRT_OK; /* forgot to refuse: *out is left alone */
#else
        return fail(PRT_ERR_INVALID_ARGUMENT,
                    SIMPLE_NAME ": the field " SIMPLE_FIELD " is required");
#endif
    }
    if (k < 1 || k > 64)
        return fail(PRT_ERR_INVALID_ARGUMENT, SIMPLE_NAME ": " SIMPLE_FIELD " is 1..64");
    *out = make(k, phase == PRT_PHASE_BUILD ? &vt_build : &vt_runtime);
    return *out ? PRT_OK : PRT_ERR_OUT_OF_MEMORY;
}

static const prt_plugin_creator creator = {sizeof creator,
                                           PRT_PLUGIN_ABI_VERSION,
                                           SIMPLE_NAME,
                                           "1",
                                           "check",
                                           1,
                                           schema,
                                           create,
                                           NULL};
SCAFFOLD_LIBRARY(SIMPLE_NAME, creator)

/* The volume of concrete dims. */
static inline int64_t volume(const prt_dims *d)
{
    int64_t v = 1;
    for (int32_t i = 0; i < d->nb_dims; i++)
        v *= d->d[i];
    return v;
}

/* supports_format_combination for exactly nb_in + nb_out linear tensors
 * of the dtypes `want` (inputs, then outputs). */
static inline int32_t supports_exactly(const int32_t *want, int32_t want_in,
                                       int32_t want_out, int32_t pos,
                                       const prt_dynamic_tensor_desc *io, int32_t nb_in,
                                       int32_t nb_out)
{
    return nb_in == want_in && nb_out == want_out && pos >= 0 && pos < nb_in + nb_out &&
           io[pos].desc.format == PRT_FORMAT_LINEAR && io[pos].desc.dtype == want[pos];
}

/* get_output_dtypes for two float32 inputs and one float32 output,
 * refusing with `msg` otherwise. */
static inline prt_status two_float32_in_one_out(int32_t *out, int32_t nb_out,
                                                const int32_t *in, int32_t nb_in,
                                                const char *msg)
{
    if (nb_in != 2 || nb_out != 1 || in[0] != PRT_FLOAT32 || in[1] != PRT_FLOAT32)
        return fail(PRT_ERR_UNSUPPORTED, msg);
    out[0] = PRT_FLOAT32;
    return PRT_OK;
}

/* configure for two inputs that share their first dim (min, opt and max
 * alike), refusing with `msg` otherwise. */
static inline prt_status first_dims_agree(const prt_dynamic_tensor_desc *in,
                                          int32_t nb_in, const char *msg)
{
    if (nb_in != 2 || in[0].min.d[0] != in[1].min.d[0] ||
        in[0].opt.d[0] != in[1].opt.d[0] || in[0].max.d[0] != in[1].max.d[0])
        return fail(PRT_ERR_SHAPE, msg);
    return PRT_OK;
}

/* nb_outputs answering N. */
#define SIMPLE_NB_OUTPUTS(N)                                                             \
    static int32_t nb_outputs(const prt_plugin *self)                                    \
    {                                                                                    \
        (void)self;                                                                      \
        return (N);                                                                      \
    }

/* The build table of the functions nb_outputs, output_dtypes,
 * output_shapes and supports, with `configure` (or NULL). */
#define SIMPLE_BUILD(CONFIGURE)                                                          \
    static const prt_plugin_build build = {.struct_size = sizeof build,                  \
                                           .abi_version = PRT_PLUGIN_ABI_VERSION,        \
                                           .nb_outputs = nb_outputs,                     \
                                           .get_output_dtypes = output_dtypes,           \
                                           .get_output_shapes = output_shapes,           \
                                           .supports_format_combination = supports,      \
                                           .configure = (CONFIGURE)}

#endif /* PLUGRT_TESTS_CHECK_SIMPLE_H */
