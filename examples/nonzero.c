/*
 * The NonZero sample in C: load the standard plugin library, build a network
 * with one NonZeroPlugin layer on a 128x128 float32 input, serialize the
 * engine, load it back, run it, and check the indices against a plain C
 * reference.
 *
 *   nonzero_example [path/to/libplugrt_plugins.so]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugrt/plugrt.h"

#define R 128
#define C 128

static int fail(const char *what)
{
    fprintf(stderr, "error: %s: %s\n", what, prt_last_error());
    return 1;
}

/* Random values, about a third of them exactly zero. */
static void make_input(float *x)
{
    uint32_t s = 12345;
    for (int i = 0; i < R * C; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = (s >> 8) % 3 == 0 ? 0.0f : (float)((s >> 8) % 1000) / 100.0f - 5.0f;
    }
}

/* Reference: (row, col) of every non-zero, in row-major order. */
static int64_t reference(const float *x, int32_t *idx)
{
    int64_t k = 0;
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++)
            if (x[r * C + c] != 0.0f) {
                idx[2 * k] = r;
                idx[2 * k + 1] = c;
                k++;
            }
    return k;
}

int main(int argc, char **argv)
{
    const char *lib = argc > 1 ? argv[1] : PRT_PLUGINS_PATH;
    static float x[R * C];
    static int32_t got[2 * R * C], want[2 * R * C];
    int64_t count = -1, want_count;
    prt_registry *reg = NULL;
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *built = NULL, *engine = NULL;
    prt_context *ctx = NULL;
    const prt_plugin_creator *creator = NULL;
    prt_plugin *plugin = NULL;
    const int32_t row_order = 1;
    prt_field field = {"rowOrder", &row_order, PRT_FIELD_INT32, 1};
    prt_field_collection fields = {1, &field};
    prt_dims dims = {2, {R, C}}, out_dims;
    int32_t in_t, layer, idx_t, cnt_t;
    void *bytes = NULL;
    size_t size = 0;
    int rc = 1;

    make_input(x);
    want_count = reference(x, want);

    if (prt_registry_create(&reg) || prt_registry_load_library(reg, lib)) {
        fail("loading the plugin library");
        goto done;
    }
    if (prt_registry_find_creator(reg, "", "NonZeroPlugin", "1", &creator) ||
        creator->create(creator, "nonzero", &fields, PRT_PHASE_BUILD, &plugin)) {
        fail("creating NonZeroPlugin");
        goto done;
    }
    if (prt_network_create(&net) ||
        prt_network_add_input(net, "X", PRT_FLOAT32, &dims, &in_t)) {
        fail("building the network");
        goto done;
    }
    if (prt_network_add_plugin(net, &in_t, 1, NULL, 0, plugin, &layer)) {
        plugin->vt->runtime->destroy(plugin);
        fail("adding the plugin layer");
        goto done;
    }
    if (prt_network_get_layer_output(net, layer, 0, &idx_t) ||
        prt_network_get_layer_output(net, layer, 1, &cnt_t) ||
        prt_network_set_tensor_name(net, idx_t, "Y") ||
        prt_network_set_tensor_name(net, cnt_t, "K") ||
        prt_network_mark_output(net, idx_t) || prt_network_mark_output(net, cnt_t)) {
        fail("naming the outputs");
        goto done;
    }
    if (prt_builder_config_create(&cfg) || prt_engine_build(net, cfg, reg, &built)) {
        fail("building the engine");
        goto done;
    }
    if (prt_engine_serialize(built, &bytes, &size) ||
        prt_engine_deserialize(reg, bytes, size, &engine)) {
        fail("serializing and loading the engine");
        goto done;
    }
    printf("engine: %zu bytes, %lld bytes of working memory\n", size,
           (long long)prt_engine_context_memory_size(engine));
    /* Y's buffer holds the upper bound (R*C pairs); K is one int64. */
    if (prt_context_create(engine, &ctx) || prt_context_set_tensor_address(ctx, "X", x) ||
        prt_context_set_tensor_address(ctx, "Y", got) ||
        prt_context_set_tensor_address(ctx, "K", &count) ||
        prt_context_enqueue(ctx, NULL) ||
        prt_context_get_tensor_shape(ctx, "Y", &out_dims)) {
        fail("running the engine");
        goto done;
    }
    printf("non-zeros: %lld of %d, output shape %lldx%lld\n", (long long)count, R * C,
           (long long)out_dims.d[0], (long long)out_dims.d[1]);
    if (count != want_count || out_dims.nb_dims != 2 || out_dims.d[0] != count ||
        out_dims.d[1] != 2 ||
        memcmp(got, want, sizeof(int32_t) * 2 * (size_t)count) != 0) {
        fprintf(stderr, "Inference result wrong: expected %lld non-zeros\n",
                (long long)want_count);
        goto done;
    }
    printf("Inference result correct!\n");
    rc = 0;
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
