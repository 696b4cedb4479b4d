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

/* ---- arrays the host hands a plugin ---------------------------------------------
 *
 * Every array an entry is given (the outputs of get_output_dtypes, _shapes
 * and _values, the descriptors of supports_format_combination, configure,
 * get_workspace_size, on_shape_change and enqueue, enqueue's pointer
 * arrays, a field collection, a tactic list, the resources of
 * attach_to_context) is handed over as a copy of its own that begins right
 * after a guard and ends exactly where the next one begins: no padding, so
 * that an entry writing one element past nb_outputs shows, where the
 * checker's own arrays (sized for CHK_MAX_OUT) would take the write
 * silently. Reads past the end cannot be seen; every guard byte has its
 * high bit set, so what such a read finds is a negative count or dtype, or
 * a pointer no process can follow, and the reader is likely to fail
 * visibly. An array given as const is compared with its source afterwards:
 * a write into it is named too. */
typedef struct chk_garr {
    unsigned char *block; /* guard | copy | guard, NULL when not allocated */
    void *src;            /* the caller's array */
    size_t bytes, elem;
    uint64_t seed;
    const char *name; /* "outputs", "in_out" */
    int out;          /* copied back to src by chk_guards_end */
    void *owned;      /* freed by chk_guards_end (what src points into) */
} chk_garr;

/* Zero it before the first chk_guard_*. */
typedef struct chk_guards {
    chk_garr *arr;
    int32_t n, cap;
} chk_guards;

/* The guarded copy of count elements of elem bytes at src, to hand to an
 * entry in its stead: chk_guard_in for an array the entry may only read,
 * chk_guard_out for one it writes (copied back by chk_guards_end). NULL
 * when src is NULL; src itself, unguarded, when memory runs out. */
const void *chk_guard_in(chk_guards *g, const char *name, const void *src, int32_t count,
                         size_t elem);
void *chk_guard_out(chk_guards *g, const char *name, void *src, int32_t count,
                    size_t elem);
/* After the entry returned: copies the outputs back and frees every copy.
 * 0 when every guard held and no const array changed, else -1 with why
 * ("get_output_shapes (...) wrote byte 4 past the end of its outputs array
 * (3 elements of 520 bytes)"), naming `entry`. */
int chk_guards_end(chk_guards *g, const char *entry, char *why, size_t cap);
/* A field collection for create, every part of it guarded and read-only:
 * the collection, its fields array, each name and each field's data. */
const prt_field_collection *chk_guard_fields(chk_guards *g,
                                             const prt_field_collection *fc);

#endif /* PLUGRT_TOOLS_CHECK_CASE_H */
