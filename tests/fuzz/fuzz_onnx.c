/*
 * libFuzzer harness: ONNX model bytes. prt_onnx_parser_parse_bytes with a registry
 * holding the standard plugin library; a model that parses is also built
 * with an empty builder config (no profiles: a dynamic input then fails the
 * build cleanly). Any input must end in PRT_OK or a clean error: no crash,
 * no leak. base_dir is NULL, so external data is refused without touching
 * the file system.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "plugrt/onnx.h"
#include "plugrt/plugrt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static prt_registry *fuzz_registry(void)
{
    static prt_registry *reg;
    if (!reg) {
        if (prt_registry_create(&reg) != PRT_OK ||
            prt_registry_load_library(reg, PRT_PLUGINS_PATH) != PRT_OK)
            abort(); /* a broken build, not a finding */
    }
    return reg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    prt_registry *reg = fuzz_registry();
    prt_onnx_parser *parser = NULL;
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *engine = NULL;

    if (prt_onnx_parser_create(reg, &parser) != PRT_OK)
        abort();
    if (prt_onnx_parser_parse_bytes(parser, data, size, NULL, &net) == PRT_OK) {
        if (prt_builder_config_create(&cfg) != PRT_OK)
            abort();
        if (prt_engine_build(net, cfg, reg, &engine) == PRT_OK)
            prt_engine_destroy(engine);
        prt_builder_config_destroy(cfg);
        prt_network_destroy(net);
    }
    prt_onnx_parser_destroy(parser);
    return 0;
}
