/* Reading and altering serialized engines in tests; plan_bytes.h. */
#include "plan_bytes.h"

#include <string.h>

#include "base/base.h"

uint32_t tu_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

void tu_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

uint64_t tu_get64(const uint8_t *p)
{
    return (uint64_t)tu_get32(p) | (uint64_t)tu_get32(p + 4) << 32;
}

void tu_put64(uint8_t *p, uint64_t v)
{
    tu_put32(p, (uint32_t)v);
    tu_put32(p + 4, (uint32_t)(v >> 32));
}

void tu_plan_fix_crc(uint8_t *p, size_t size)
{
    tu_put32(p + size - 4, base_crc32(p, size - 4));
}

size_t tu_plan_section_count_at(const uint8_t *p)
{
    return 8 + 4 + 4 + 4 + tu_get32(p + 16) + 4;
}

size_t tu_plan_section_at(const uint8_t *p, uint32_t tag)
{
    size_t at = tu_plan_section_count_at(p) + 4;
    for (uint32_t k = 0; k < tu_get32(p + tu_plan_section_count_at(p)); k++) {
        if (tu_get32(p + at) == tag)
            return at + 16;
        at += 16 + (size_t)tu_get64(p + at + 8);
    }
    return 0;
}

/* Walks TENS to record `index` (name, dtype, format, nb_dims, dims, four
 * ids, three i64); *name_at the name's length field. */
static int tensor_record(const uint8_t *p, uint32_t index, size_t *name_at,
                         tu_plan_tensor *out)
{
    size_t at = tu_plan_section_at(p, TU_TAG('T', 'E', 'N', 'S'));
    uint32_t n = at ? tu_get32(p + at) : 0;
    at += 4;
    for (uint32_t i = 0; i < n; i++) {
        size_t name = at;
        at += 4 + tu_get32(p + at);
        if (i == index) {
            *name_at = name;
            out->format = at + 4;
            out->offset = at + 12 + 4 * (size_t)tu_get32(p + at + 8) + 16;
            return 1;
        }
        at += 12 + 4 * (size_t)tu_get32(p + at + 8) + 16 + 24;
    }
    return 0;
}

int tu_plan_tensor_fields(const uint8_t *p, uint32_t index, tu_plan_tensor *out)
{
    size_t name;
    return tensor_record(p, index, &name, out);
}

size_t tu_plan_tensor_named(const uint8_t *p, const char *name)
{
    size_t at;
    tu_plan_tensor t;
    for (uint32_t i = 0; tensor_record(p, i, &at, &t); i++)
        if (tu_get32(p + at) == strlen(name) &&
            memcmp(p + at + 4, name, strlen(name)) == 0)
            return t.offset;
    return 0;
}

/* The bytes of a string field (u32 length, then the bytes). */
static size_t skip_str(const uint8_t *p, size_t at)
{
    return at + 4 + tu_get32(p + at);
}

size_t tu_plan_layer_workspace(const uint8_t *p, uint32_t index)
{
    size_t at = tu_plan_section_at(p, TU_TAG('L', 'A', 'Y', 'R'));
    uint32_t n = at ? tu_get32(p + at) : 0;
    at += 4;
    for (uint32_t i = 0; i < n; i++) {
        size_t ws;
        uint32_t fields;
        for (int s = 0; s < 5; s++) /* name, namespace, plugin, version, library */
            at = skip_str(p, at);
        at += 8 + 4 + 4 + 4; /* library hash, ABI, device, tactic */
        ws = at;
        if (i == index)
            return ws;
        at += 8;
        at += 4 + 4 * (size_t)tu_get32(p + at);           /* inputs */
        at += 4 + (4 + 4 + 1) * (size_t)tu_get32(p + at); /* outputs */
        fields = tu_get32(p + at);
        at += 4;
        for (uint32_t f = 0; f < fields; f++) {
            at = skip_str(p, at);
            at += 4 + 8; /* type, length */
            at += 8 + (size_t)tu_get64(p + at);
        }
    }
    return 0;
}
