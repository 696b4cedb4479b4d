/*
 * A tensor's quantization as plugrt keeps it (network, builder, engine):
 * the ABI's prt_quant_desc plus the arrays it points to, owned.
 */
#ifndef PLUGRT_BASE_QUANT_H
#define PLUGRT_BASE_QUANT_H

#include "base/base.h"

typedef struct base_quant {
    /* d.kind PRT_QUANT_NONE: no quantization (the zeroed struct). Otherwise
     * d.scales and d.zero_points point to the owned arrays below, so the
     * struct may be moved (a realloc'd array of tensors) but not copied
     * with memcpy: base_quant_copy makes the second owner. */
    prt_quant_desc d;
    float *scales;
    int32_t *zero_points;
} base_quant;

/* Copies `src` into q (freeing what q held). src NULL or of kind NONE
 * clears q. Checks what needs no tensor: a known kind, a count of 1 for
 * PER_TENSOR and >= 1 for PER_CHANNEL (at most 2^24), a per-channel axis
 * >= 0, scales present, finite and > 0, zero points (NULL: all 0) within
 * -128..255. `what` opens messages ("prt_network_set_tensor_quant: tensor
 * 'x'"). Only the members src->struct_size covers are read; one too short
 * for `zero_points` is refused. */
prt_status base_quant_set(base_quant *q, const prt_quant_desc *src, const char *what);
/* dst = a copy of src (dst's old content freed). */
prt_status base_quant_copy(base_quant *dst, const base_quant *src);
void base_quant_free(base_quant *q);
/* What a descriptor points to (base_quant_attach): NULL for kind NONE. */
static inline const prt_quant_desc *base_quant_desc(const base_quant *q)
{
    return q->d.kind == PRT_QUANT_NONE ? NULL : &q->d;
}
/* Points a descriptor at q (reserved[0], plugin.h: prt_tensor_desc_quant),
 * or at nothing for kind NONE. The descriptor only reads through it. */
static inline void base_quant_attach(prt_tensor_desc *d, const base_quant *q)
{
    d->reserved[0] = (void *)(uintptr_t)base_quant_desc(q);
}
/* The checks that need the tensor: dtype INT8 or UINT8, zero points in
 * its range, the axis inside `rank` and, where `axis_dim` >= 0 (known),
 * count == axis_dim. `what` names the tensor for messages. */
prt_status base_quant_check_tensor(const base_quant *q, int32_t dtype, int32_t rank,
                                   int64_t axis_dim, const char *what);
/* 1 when both describe the same quantization (NONE equals NONE). */
int base_quant_equal(const base_quant *a, const base_quant *b);

#endif /* PLUGRT_BASE_QUANT_H */
