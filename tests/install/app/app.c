/*
 * An application built out of tree against an installed plugrt (CMake's
 * find_package or pkg-config; tests/install/install.sh builds it both
 * ways): it loads the plugin library named on its command line, builds a
 * network of one Affine layer (scale 2, shift 0.5), saves and reloads the
 * engine, runs it and checks every element against y = 2x + 0.5.
 */
#include <stdio.h>
#include <string.h>

#include <plugrt/plugrt.h>

static int fail(const char *what)
{
    fprintf(stderr, "app: %s: %s\n", what, prt_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    enum { R = 3, C = 5 };
    prt_registry *reg = NULL;
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *built = NULL, *engine = NULL;
    prt_context *ctx = NULL;
    const prt_plugin_creator *creator = NULL;
    prt_plugin *plugin = NULL;
    const float scale = 2.0f, shift = 0.5f;
    prt_field fields[2] = {{"scale", &scale, PRT_FIELD_FLOAT32, 1},
                           {"shift", &shift, PRT_FIELD_FLOAT32, 1}};
    prt_field_collection fc = {2, fields};
    prt_dims dims = {2, {R, C}};
    int32_t in_t, layer, out_t;
    float x[R * C], y[R * C];
    void *bytes = NULL;
    size_t size = 0;
    int rc = 1, bad = 0;

    if (argc != 2) {
        fprintf(stderr, "usage: app PLUGIN_LIBRARY.so\n");
        return 2;
    }
    printf("plugrt %s\n", prt_version_string());
    for (int i = 0; i < R * C; i++)
        x[i] = (float)(i - 7) * 0.25f;
    if (prt_registry_create(&reg) || prt_registry_load_library(reg, argv[1])) {
        rc = fail("loading the plugin library");
        goto done;
    }
    if (prt_registry_find_creator(reg, "", "Affine", "1", &creator) ||
        creator->create(creator, "affine", &fc, PRT_PHASE_BUILD, &plugin)) {
        rc = fail("creating Affine");
        goto done;
    }
    if (prt_network_create(&net) ||
        prt_network_add_input(net, "x", PRT_FLOAT32, &dims, &in_t)) {
        rc = fail("building the network");
        goto done;
    }
    if (prt_network_add_plugin(net, &in_t, 1, NULL, 0, plugin, &layer)) {
        plugin->vt->runtime->destroy(plugin);
        rc = fail("adding the layer");
        goto done;
    }
    if (prt_network_get_layer_output(net, layer, 0, &out_t) ||
        prt_network_set_tensor_name(net, out_t, "y") ||
        prt_network_mark_output(net, out_t) || prt_builder_config_create(&cfg) ||
        prt_engine_build(net, cfg, reg, &built) ||
        prt_engine_serialize(built, &bytes, &size) ||
        prt_engine_deserialize(reg, bytes, size, &engine)) {
        rc = fail("building the engine");
        goto done;
    }
    memset(y, 0xff, sizeof y);
    if (prt_context_create(engine, &ctx) || prt_context_set_tensor_address(ctx, "x", x) ||
        prt_context_set_tensor_address(ctx, "y", y) || prt_context_enqueue(ctx, NULL)) {
        rc = fail("running");
        goto done;
    }
    for (int i = 0; i < R * C; i++)
        if (y[i] != 2.0f * x[i] + 0.5f) {
            fprintf(stderr, "app: y[%d] = %g, expected %g\n", i, y[i],
                    2.0f * x[i] + 0.5f);
            bad = 1;
        }
    if (!bad)
        printf("app: %d elements match y = 2x + 0.5\n", R * C);
    rc = bad;
done:
    prt_context_destroy(ctx);
    prt_engine_destroy(engine);
    prt_engine_destroy(built);
    prt_free(bytes);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    prt_registry_destroy(reg);
    return rc;
}
