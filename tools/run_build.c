/*
 * Building an ONNX model's engine for `plugrt run` (run_build.h): the
 * profile from --shapes and the inputs' data, shape inputs' values from
 * theirs.
 */
#include <stdio.h>
#include <stdlib.h>

#include "model.h"
#include "run_build.h"
#include "text.h"

static int network_has_input(const prt_network *net, const char *name)
{
    int32_t t, in;
    if (prt_network_find_tensor(net, name, &t) != PRT_OK)
        return 0;
    for (int32_t i = 0; i < prt_network_input_count(net); i++)
        if (prt_network_get_input(net, i, &in) == PRT_OK && in == t)
            return 1;
    return 0;
}

/* A --shapes name that is no input of the ONNX model is a usage error, as
 * for a plan (run_model_check_shapes); the builder would only say the
 * profile names a tensor that is not an input. */
static int check_shape_names(const prt_network *net, const cli_shapes *shapes)
{
    for (int i = 0; i < shapes->count; i++) {
        char en[CLI_ESC_CAP];
        if (network_has_input(net, shapes->items[i].name))
            continue;
        cli_error("--shapes %s: the model has no input of that name",
                  cli_escape(shapes->items[i].name, en, sizeof en));
        fprintf(stderr, "  the model's inputs:");
        for (int32_t k = 0; k < prt_network_input_count(net); k++) {
            int32_t t;
            const char *name = NULL;
            if (prt_network_get_input(net, k, &t) != PRT_OK ||
                prt_network_get_tensor(net, t, &name, NULL, NULL) != PRT_OK || !name)
                name = "?";
            fprintf(stderr, "%s %s", k ? "," : "", cli_escape(name, en, sizeof en));
        }
        fputc('\n', stderr);
        return cli_usage("give --shapes only for the model's inputs");
    }
    return CLI_OK;
}

/* Every network input whose values the build may need (a Reshape's shape,
 * Range's bounds) takes them from its data: min = opt = max = the values
 * given, as its dims are the data's. *out (malloc'd, the caller's) holds
 * one entry per such input; names are the network's. An input of that kind
 * without data fails: random values would size tensors at random. */
/* Whether o gives a range, and whether it names input `name`. */
static int has_range(const run_build_opts *o)
{
    return (o->min && o->min->count) || (o->max && o->max->count);
}

static int in_range(const run_build_opts *o, const char *name)
{
    return has_range(o) && ((o->min && cli_shapes_find(o->min, name)) ||
                            (o->opt && cli_shapes_find(o->opt, name)) ||
                            (o->max && cli_shapes_find(o->max, name)));
}

static int shape_values_from_data(const prt_network *net, const run_inputs *in,
                                  const run_build_opts *o, cli_shape_value **out,
                                  int *out_n)
{
    int32_t nin = prt_network_input_count(net);
    cli_shape_value *v = calloc((size_t)(nin > 0 ? nin : 1), sizeof *v);
    int n = 0;
    *out = v;
    *out_n = 0;
    if (!v) {
        cli_error("out of memory for the values of shape inputs");
        return CLI_FAIL;
    }
    for (int32_t i = 0; i < nin; i++) {
        int32_t t, dtype, needed = 0;
        const char *name = NULL;
        const run_input *r;
        const npy_array *a;
        prt_dims dims;
        char en[CLI_ESC_CAP];
        int64_t count;
        if (prt_network_get_input(net, i, &t) != PRT_OK ||
            prt_network_get_tensor(net, t, &name, &dtype, &dims) != PRT_OK || !name ||
            (dtype != PRT_INT32 && dtype != PRT_INT64 && dtype != PRT_FLOAT32) ||
            dims.nb_dims > 1 || prt_network_is_shape_input(net, t, &needed) != PRT_OK ||
            !needed || in_range(o, name))
            continue;
        if (!(r = run_inputs_match(in, name))) {
            cli_error("input %s is a shape input (the shapes of the model's tensors "
                      "depend on its values), so it needs data: give --input "
                      "%s=FILE.npy or put it in the --compare directory; random "
                      "values would size tensors at random",
                      cli_escape(name, en, sizeof en), cli_escape(name, en, sizeof en));
            return CLI_FAIL;
        }
        a = &r->arr;
        count = a->dims.nb_dims == 0 ? 1 : a->dims.d[0];
        /* Said here as run_inputs_bind would say it after the build, which
         * would only say that the values are missing. */
        if (a->dtype != dtype) {
            run_input_dtype_error(r, name, dtype);
            return CLI_FAIL;
        }
        if (a->dims.nb_dims > 1 || count < 1 || count > PRT_MAX_DIMS)
            continue; /* the builder says what a shape input must be */
        v[n].name = name;
        v[n].count = (int32_t)count;
        for (int64_t k = 0; k < count; k++) {
            if (a->dtype == PRT_FLOAT32) {
                float f = ((const float *)a->data)[k];
                if (f != f) {
                    cli_error("shape input %s: value %lld is NaN; the model's "
                              "shapes depend on its values (Resize's scales)",
                              cli_escape(name, en, sizeof en), (long long)k);
                    return CLI_FAIL;
                }
                v[n].v[k] = prt_float_shape_value(f);
            } else
                v[n].v[k] = a->dtype == PRT_INT32 ? ((const int32_t *)a->data)[k]
                                                  : ((const int64_t *)a->data)[k];
        }
        n++;
    }
    *out_n = n;
    return CLI_OK;
}

int run_build_network(const prt_network *net, const prt_registry *reg,
                      const run_inputs *in, const run_build_opts *o, prt_engine **out)
{
    /* prof: the fixed entries; with a range, after a copy of its opt list
     * (so that the names keep `plugrt build`'s order, and its plan's bytes). */
    cli_shapes prof = {NULL, 0};
    cli_shape_value *values = NULL;
    int nb_values = 0;
    int rc = check_shape_names(net, o->shapes);
    for (int i = 0; rc == CLI_OK && has_range(o) && o->opt && i < o->opt->count; i++)
        rc = cli_shapes_set(&prof, o->opt->items[i].name, &o->opt->items[i].dims);
    for (int i = 0; rc == CLI_OK && i < o->shapes->count; i++)
        if (!in_range(o, o->shapes->items[i].name))
            rc = cli_shapes_set(&prof, o->shapes->items[i].name,
                                &o->shapes->items[i].dims);
    /* Walk the network's inputs, not the files, and find each one's file as
     * run_inputs_bind will: by name, or a reference-directory file named
     * after the file-safe name ('x:0' -> input_x_0.npy). A file for a
     * tensor that is no input (an intermediate's name) is noted later; put
     * into the profile it would fail the build ("not a network input"). */
    for (int32_t i = 0; rc == CLI_OK && i < prt_network_input_count(net); i++) {
        int32_t t;
        const char *name = NULL;
        const run_input *r;
        if (prt_network_get_input(net, i, &t) != PRT_OK ||
            prt_network_get_tensor(net, t, &name, NULL, NULL) != PRT_OK || !name ||
            cli_shapes_find(&prof, name) || in_range(o, name) ||
            !(r = run_inputs_match(in, name)))
            continue;
        rc = cli_shapes_set(&prof, name, &r->arr.dims);
    }
    if (rc == CLI_OK)
        rc = shape_values_from_data(net, in, o, &values, &nb_values);
    if (rc == CLI_OK) {
        cli_build_opts bo = {has_range(o) ? o->min : NULL,
                             &prof,
                             has_range(o) ? o->max : NULL,
                             o->device,
                             -1,
                             0,
                             NULL,
                             "give the shapes of dynamic inputs with --shapes "
                             "NAME:DIMS or their data with --input NAME=FILE.npy",
                             values,
                             nb_values,
                             has_range(o),
                             o->op_threads,
                             o->linear_formats,
                             0,
                             o->precision,
                             o->cpu_fallback};
        rc = cli_build_engine(net, reg, &bo, out);
    }
    free(values);
    cli_shapes_free(&prof);
    return rc;
}