/*
 * What the built-in ops' CUDA launchers (launch.h) are given, and the
 * index arithmetic their kernels do per element, written once for both
 * sides: plain C that nvcc compiles as __host__ __device__ code and the C
 * compiler as static inline functions (the element code they share with
 * the CPU's kernels is op_elem.h's). So the CPU tests (test_gpu_args) run
 * the very walks the kernels run, on machines without a GPU.
 *
 * No CUDA header is needed to include this; it is part of every build.
 */
#ifndef PLUGRT_OPS_CUDA_GPU_ARGS_H
#define PLUGRT_OPS_CUDA_GPU_ARGS_H

#include <stdint.h>
#include <string.h>

#include "ops/op_elem.h"
#include "plugrt/plugin.h"

#define OPK_MAX_RANK 8 /* PRT_MAX_DIMS */
#define OPK_MAX_IN 3   /* inputs of one broadcast walk (Where's three) */

/* A broadcast walk over a dense output: element i of the output, at
 * coordinates c[] of dims[], reads input k at sum_d c[d] * stride[k][d]
 * (elements; 0 where input k is broadcast along d). opk_bcast_init drops
 * the output's size-1 dims and merges dims that are contiguous in every
 * input, so `rank` is often 1 (same shapes, or a scalar) and never more
 * than the output's. */
typedef struct opk_bcast {
    int32_t rank;
    int32_t nb; /* inputs, <= OPK_MAX_IN */
    int64_t dims[OPK_MAX_RANK];
    int64_t stride[OPK_MAX_IN][OPK_MAX_RANK];
} opk_bcast;

#ifdef __cplusplus
extern "C" {
#endif
/* b for nb inputs of dims in[] broadcast (numpy's rule, already checked)
 * to `out` (gpu_args.c). */
void opk_bcast_init(opk_bcast *b, const prt_dims *out, int32_t nb, const prt_dims *in);

/* The same for one input read at explicit element strides (a transpose, a
 * slice): out's dims, input stride[d] along output dim d. */
void opk_bcast_init_strided(opk_bcast *b, const prt_dims *out, const int64_t *stride);
#ifdef __cplusplus
}
#endif

/* Input offsets of output element i (i < the output's volume). */
OPK_HD void opk_bcast_offsets(const opk_bcast *b, int64_t i, int64_t *off)
{
    for (int32_t k = 0; k < b->nb; k++)
        off[k] = 0;
    for (int32_t d = b->rank - 1; d >= 0; d--) {
        int64_t c = i % b->dims[d];
        i /= b->dims[d];
        for (int32_t k = 0; k < b->nb; k++)
            off[k] += c * b->stride[k][d];
    }
}

/* ---- Slice ------------------------------------------------------------ */

#define OPK_SLICE_MAX 8 /* entries of starts/ends/axes/steps (SLICE_MAX) */

/* One entry of Slice's parameters (slice.c's slice_params): for data of
 * rank r and dims[], the entry's start clamped to its axis, and its step,
 * into start[] and step[] (indexed by axis); the end only sets the
 * output's length, which the host knows. 0 when the entry is not
 * valid (axis out of range, step 0 or INT64_MIN); the run on the CPU fails
 * there, a kernel leaves the axis whole. */
OPK_HD int opk_slice_entry(int32_t r, const int64_t *dims, int64_t axis, int64_t s,
                           int64_t k, int64_t *start, int64_t *step)
{
    int64_t d;
    if (axis < -r || axis >= r || k == 0 || k == INT64_MIN)
        return 0;
    axis = axis < 0 ? axis + r : axis;
    d = dims[axis];
    s = s < 0 ? (s < -d ? 0 : s + d) : s;
    if (k > 0)
        s = s > d ? d : s;
    else
        s = s > d - 1 ? d - 1 : s;
    start[axis] = s;
    step[axis] = k;
    return 1;
}

/* ---- Pad and Tile ------------------------------------------------------ */

/* Pad's modes (tile_pad.c's field mode, in its order), and Tile's walk. */
enum { OPK_PAD_CONSTANT, OPK_PAD_REFLECT, OPK_PAD_EDGE, OPK_PAD_WRAP, OPK_MAP_TILE };

/* The input coordinate that output coordinate k reads along a dim of
 * length d, where c = k - (the pads before it): c itself inside the dim,
 * else per mode (reflect mirrors without repeating the edge, numpy's rule,
 * which also serves pads longer than the dim; edge repeats the edge; wrap
 * is periodic), or -1 for the constant. Tile's walk is c modulo d. */
OPK_HD int64_t opk_pad_source(int32_t mode, int64_t c, int64_t d)
{
    int64_t p;
    if (c >= 0 && c < d)
        return c;
    switch (mode) {
    case OPK_PAD_EDGE:
        return c < 0 ? 0 : d - 1;
    case OPK_PAD_WRAP:
    case OPK_MAP_TILE:
        return (c % d + d) % d;
    case OPK_PAD_REFLECT:
        if (d == 1)
            return 0;
        p = 2 * (d - 1);
        c = (c % p + p) % p;
        return c < d ? c : p - c;
    default:
        return -1;
    }
}

#endif /* PLUGRT_OPS_CUDA_GPU_ARGS_H */
