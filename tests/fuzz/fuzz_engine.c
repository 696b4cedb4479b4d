/*
 * libFuzzer harness: engine bytes. prt_engine_deserialize with a registry
 * holding the standard plugin library; an engine that loads also gets an
 * execution context (which clones every plugin and allocates the arena).
 * Any input must end in PRT_OK or a clean error: no crash, no leak.
 *
 * The file ends in a CRC-32 of every byte before it, checked before any
 * section is parsed: nearly every mutation would stop there. So the harness
 * rewrites the last four bytes with the right CRC, and the parser and
 * engine_validate see the mutated bytes as if a writer had made them (the
 * mismatch path itself is covered by tests/test_engine_format.c). To replay
 * a finding outside the fuzzer, apply the same fix-up.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "plugrt/plugrt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static prt_registry *fuzz_registry(void)
{
    static prt_registry *reg;
    if (!reg) {
        /* Loaded once: dlopen per input would dominate the run time. */
        if (prt_registry_create(&reg) != PRT_OK ||
            prt_registry_load_library(reg, PRT_PLUGINS_PATH) != PRT_OK)
            abort(); /* a broken build, not a finding */
    }
    return reg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    prt_engine *engine = NULL;
    prt_context *ctx = NULL;
    uint8_t *bytes = malloc(size ? size : 1);
    if (!bytes)
        return 0;
    memcpy(bytes, data, size);
    if (size >= 4) {
        uint32_t crc = base_crc32(bytes, size - 4);
        for (int i = 0; i < 4; i++)
            bytes[size - 4 + i] = (uint8_t)(crc >> (8 * i));
    }
    if (prt_engine_deserialize(fuzz_registry(), bytes, size, &engine) == PRT_OK) {
        if (prt_context_create(engine, &ctx) == PRT_OK)
            prt_context_destroy(ctx);
        prt_engine_destroy(engine);
    }
    free(bytes);
    return 0;
}
