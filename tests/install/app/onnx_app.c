/*
 * An application against the installed ONNX importer (plugrt::onnx or
 * pkg-config's plugrt-onnx): imports MODEL.onnx, whose one node is the
 * Affine plugin (scale -1.5, shift 3) from the library named second, over
 * a 4x6 float32 input x, builds and runs it and checks y = -1.5x + 3.
 */
#include <stdio.h>

#include <plugrt/onnx.h>
#include <plugrt/plugrt.h>

int main(int argc, char **argv)
{
    enum { N = 24 };
    prt_registry *reg = NULL;
    prt_onnx_parser *parser = NULL;
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *engine = NULL;
    prt_context *ctx = NULL;
    float x[N], y[N];
    int rc = 1;
    if (argc != 3) {
        fprintf(stderr, "usage: onnx_app MODEL.onnx PLUGIN_LIBRARY.so\n");
        return 2;
    }
    for (int i = 0; i < N; i++)
        x[i] = (float)i * 0.125f - 1.0f;
    if (prt_registry_create(&reg) || prt_registry_load_library(reg, argv[2]) ||
        prt_onnx_parser_create(reg, &parser) ||
        prt_onnx_parser_parse_file(parser, argv[1], &net) ||
        prt_builder_config_create(&cfg) || prt_engine_build(net, cfg, reg, &engine) ||
        prt_context_create(engine, &ctx) || prt_context_set_tensor_address(ctx, "x", x) ||
        prt_context_set_tensor_address(ctx, "y", y) || prt_context_enqueue(ctx, NULL)) {
        fprintf(stderr, "onnx_app: %s\n", prt_last_error());
        goto done;
    }
    rc = 0;
    for (int i = 0; i < N; i++)
        if (y[i] != -1.5f * x[i] + 3.0f) {
            fprintf(stderr, "onnx_app: y[%d] = %g, expected %g\n", i, y[i],
                    -1.5f * x[i] + 3.0f);
            rc = 1;
        }
    if (!rc)
        printf("onnx_app: %d elements match y = -1.5x + 3\n", N);
done:
    prt_context_destroy(ctx);
    prt_engine_destroy(engine);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    prt_onnx_parser_destroy(parser);
    prt_registry_destroy(reg);
    return rc;
}
