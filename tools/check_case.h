/*
 * A case of `plugrt check`: one set of concrete shapes of a layer, the
 * guarded buffers a run of it uses, and its input data.
 *
 * Every buffer is an allocation of its own, guard | data | guard, so that a
 * write outside a tensor lands in a guard and shows, where an engine's
 * arena would place buffers side by side. On CUDA each block has a device
 * twin of the same layout, which a run fills from the host block and copies
 * back (check_transfer.c).
 */
#ifndef PLUGRT_TOOLS_CHECK_CASE_H
#define PLUGRT_TOOLS_CHECK_CASE_H

#include "check_layer.h"

typedef struct chk_buf {
    unsigned char *block; /* guard | data | guard */
    unsigned char *data;  /* 256-byte aligned, as the runtime's arena */
    size_t bytes;
    uint64_t seed;        /* of the guard pattern */
    unsigned char *dev;   /* on CUDA: the device's block (data at dev + CHK_GUARD) */
    unsigned char *stage; /* a gated run's staged copy of it, until the run ends */
} chk_buf;

/* One set of concrete shapes, its buffers and its input data. */
typedef struct chk_case {
    chk_layer *L;
    prt_dims in_dims[CHK_MAX_DIMSETS]; /* and the shape inputs' values */
    prt_dims out_dims[CHK_MAX_OUT];    /* what the buffers hold: sizes at their bounds */
    int64_t upper[CHK_MAX_OUT];        /* size-tensor outputs: the bound; else -1 */
    chk_buf in[CHK_MAX_IN], out[CHK_MAX_OUT], ws;
    unsigned char *in_ref[CHK_MAX_IN]; /* the inputs as filled */
    char shape[512];
} chk_case;

/* Bytes of b's block: guard, data, guard and the padding to the next
 * 256 bytes. */
size_t chk_buf_total(const chk_buf *b);
/* The data as the plugin is given it on c->device. */
static inline void *chk_buf_ptr(const chk_ctx *c, const chk_buf *b)
{
    return c->device == PRT_DEVICE_CUDA ? (void *)(b->dev + CHK_GUARD) : (void *)b->data;
}
/* Writes both guards' patterns afresh (on the host block). */
void chk_buf_guard_reset(chk_buf *b);
/* The first guard byte changed, as an offset from data (negative: before
 * it); 0 with *found = 0 when both guards hold. */
int64_t chk_buf_guard_check(const chk_buf *b, int *found);

/* Elements of d; -1 for a negative dim or an overflow. */
int64_t chk_volume(const prt_dims *d);

/* Buffers for concrete input shapes and random input data (`sparse`: a
 * third of the elements zero, so data-dependent sizes fall below their
 * bounds). 0, or -1 with L->why. */
int chk_case_init(chk_case *k, chk_layer *L, const prt_dims *in_dims, chk_rng *r,
                  int sparse);
void chk_case_free(chk_case *k);

#endif /* PLUGRT_TOOLS_CHECK_CASE_H */
