/*
 * Reading and altering a serialized engine in place, for tests that craft
 * hostile plans: the checksum fixed after a change, so the bytes reach
 * every check behind it. Offsets follow the layout at the top of
 * src/engine/format.c; every integer is little-endian.
 */
#ifndef PLUGRT_TESTS_PLAN_BYTES_H
#define PLUGRT_TESTS_PLAN_BYTES_H

#include <stddef.h>
#include <stdint.h>

#define TU_TAG(a, b, c, d)                                                               \
    ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)

uint32_t tu_get32(const uint8_t *p);
void tu_put32(uint8_t *p, uint32_t v);
uint64_t tu_get64(const uint8_t *p);
void tu_put64(uint8_t *p, uint64_t v);

/* Writes the CRC-32 of the first size - 4 bytes into the last four. */
void tu_plan_fix_crc(uint8_t *p, size_t size);
/* Offset of the section count (after magic, version, ABI, version string
 * and device). */
size_t tu_plan_section_count_at(const uint8_t *p);
/* Offset of the payload of the section tagged `tag`; 0 if none. */
size_t tu_plan_section_at(const uint8_t *p, uint32_t tag);

/* Where tensor record fields lie (section TENS). */
typedef struct tu_plan_tensor {
    size_t format; /* i32; the dtype is the i32 before it, nb_dims after */
    size_t offset; /* i64 arena offset; max_bytes at +8, const_offset at +16 */
} tu_plan_tensor;
/* Tensor record `index`; 0 when there is none. */
int tu_plan_tensor_fields(const uint8_t *p, uint32_t index, tu_plan_tensor *out);
/* Offset of the i64 arena offset of the tensor named `name` (max_bytes at
 * +8, const_offset at +16); 0 if none. */
size_t tu_plan_tensor_named(const uint8_t *p, const char *name);
/* Offset of layer `index`'s i64 workspace (section LAYR); 0 if none. */
size_t tu_plan_layer_workspace(const uint8_t *p, uint32_t index);

#endif /* PLUGRT_TESTS_PLAN_BYTES_H */
