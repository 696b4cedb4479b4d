/*
 * Writes seed engines for fuzz_engine, made by plugrt itself (engines are not
 * kept in the repository: they change with the format):
 *
 *   make_seeds OUTDIR [model.onnx ...]
 *
 * OUTDIR/nonzero.plan: one NonZeroPlugin layer on a 2-D float32 input with a
 * dynamic row count and a profile (size tensors, data-dependent dims, plugin
 * fields). For each model given, OUTDIR/<n>.plan: the model built with one
 * profile that lets every dynamic dim run from 1 to 4.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugrt/onnx.h"
#include "plugrt/plugrt.h"

static int write_engine(const prt_engine *engine, const char *dir, const char *name)
{
    char path[4096];
    void *bytes = NULL;
    size_t size = 0;
    FILE *f;
    int rc = 1;
    if (prt_engine_serialize(engine, &bytes, &size) != PRT_OK)
        return 1;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "wb");
    if (f) {
        rc = fwrite(bytes, 1, size, f) == size ? 0 : 1;
        rc |= fclose(f) != 0;
    }
    prt_free(bytes);
    if (!rc)
        printf("%s: %zu bytes\n", path, size);
    return rc;
}

/* A profile giving each dynamic dim of each input the range 1..4. */
static int add_profile(const prt_network *net, prt_builder_config *cfg)
{
    int32_t p;
    if (prt_builder_config_add_profile(cfg, &p) != PRT_OK)
        return 1;
    for (int32_t i = 0; i < prt_network_input_count(net); i++) {
        int32_t t, dtype;
        const char *name;
        prt_dims d, lo, opt, hi;
        int dynamic = 0;
        if (prt_network_get_input(net, i, &t) != PRT_OK ||
            prt_network_get_tensor(net, t, &name, &dtype, &d) != PRT_OK)
            return 1;
        lo = opt = hi = d;
        for (int32_t k = 0; k < d.nb_dims; k++)
            if (d.d[k] < 0) {
                lo.d[k] = 1, opt.d[k] = 2, hi.d[k] = 4;
                dynamic = 1;
            }
        if (dynamic &&
            prt_builder_config_set_profile_dims(cfg, p, name, &lo, &opt, &hi) != PRT_OK)
            return 1;
    }
    return 0;
}

static int nonzero_seed(prt_registry *reg, const char *dir)
{
    const prt_plugin_creator *creator = NULL;
    prt_plugin *plugin = NULL;
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *engine = NULL;
    const int32_t row_order = 1;
    prt_field field = {"rowOrder", &row_order, PRT_FIELD_INT32, 1};
    prt_field_collection fields = {1, &field};
    prt_dims dims = {2, {-1, 8}};
    int32_t in_t, layer, t0, t1;
    int rc = 1;

    if (prt_registry_find_creator(reg, "", "NonZeroPlugin", "1", &creator) != PRT_OK ||
        creator->create(creator, "nonzero", &fields, PRT_PHASE_BUILD, &plugin) != PRT_OK)
        return 1;
    if (prt_network_create(&net) != PRT_OK ||
        prt_network_add_input(net, "X", PRT_FLOAT32, &dims, &in_t) != PRT_OK) {
        plugin->vt->runtime->destroy(plugin);
        goto done;
    }
    if (prt_network_add_plugin(net, &in_t, 1, NULL, 0, plugin, &layer) != PRT_OK) {
        plugin->vt->runtime->destroy(plugin);
        goto done;
    }
    if (prt_network_get_layer_output(net, layer, 0, &t0) != PRT_OK ||
        prt_network_get_layer_output(net, layer, 1, &t1) != PRT_OK ||
        prt_network_set_tensor_name(net, t0, "Y") != PRT_OK ||
        prt_network_set_tensor_name(net, t1, "K") != PRT_OK ||
        prt_network_mark_output(net, t0) != PRT_OK ||
        prt_network_mark_output(net, t1) != PRT_OK)
        goto done;
    if (prt_builder_config_create(&cfg) != PRT_OK || add_profile(net, cfg) ||
        prt_engine_build(net, cfg, reg, &engine) != PRT_OK)
        goto done;
    rc = write_engine(engine, dir, "nonzero.plan");
done:
    prt_engine_destroy(engine);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return rc;
}

static int model_seed(prt_registry *reg, const char *model, const char *dir, int n)
{
    prt_onnx_parser *parser = NULL;
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *engine = NULL;
    char name[64];
    int rc = 1;
    if (prt_onnx_parser_create(reg, &parser) != PRT_OK ||
        prt_onnx_parser_parse_file(parser, model, &net) != PRT_OK ||
        prt_builder_config_create(&cfg) != PRT_OK || add_profile(net, cfg) ||
        prt_engine_build(net, cfg, reg, &engine) != PRT_OK)
        goto done;
    snprintf(name, sizeof name, "model%d.plan", n);
    rc = write_engine(engine, dir, name);
done:
    if (rc)
        fprintf(stderr, "make_seeds: %s: %s\n", model, prt_last_error());
    prt_engine_destroy(engine);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    prt_onnx_parser_destroy(parser);
    return rc;
}

int main(int argc, char **argv)
{
    prt_registry *reg = NULL;
    int rc = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: make_seeds OUTDIR [model.onnx ...]\n");
        return 2;
    }
    if (prt_registry_create(&reg) != PRT_OK ||
        prt_registry_load_library(reg, PRT_PLUGINS_PATH) != PRT_OK) {
        fprintf(stderr, "make_seeds: %s\n", prt_last_error());
        return 1;
    }
    if (nonzero_seed(reg, argv[1])) {
        fprintf(stderr, "make_seeds: nonzero: %s\n", prt_last_error());
        rc = 1;
    }
    for (int i = 2; i < argc; i++)
        rc |= model_seed(reg, argv[i], argv[1], i - 1);
    prt_registry_destroy(reg);
    return rc;
}
