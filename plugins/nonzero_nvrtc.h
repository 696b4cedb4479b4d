/*
 * NonZeroPlugin's NVRTC backend (backend = "nvrtc"): CUDA C++ source the
 * builder compiles with NVRTC for the target GPU and embeds in the engine
 * as a kernel layer (plugin.h, "Kernel layers"), so the engine runs it with
 * no plugin library. Three launches, in order on the layer's stream:
 *
 *   1. count   one block a tile of PLG_NZ_NVRTC_TILE elements: the tile's
 *              non-zeros into counts[tile] (workspace);
 *   2. scan    one block: counts -> exclusive offsets[tile] (workspace),
 *              offsets[tiles] = K, and K into output 1;
 *   3. write   one block a tile again: its indices from offsets[tile], in
 *              row-major order, densely with the true K (column order puts
 *              the columns at K + j, which launch 2 made known).
 *
 * The same results as the CPU loop and the compiled CUDA kernels: int32
 * indices K x 2 or 2 x K, K as int64, zero meaning +0 or -0 (tested on the
 * bits). Grids are tiles = max(1, ceil(rows * cols / TILE)) of the dims the
 * launch is given (upper bounds for a data-dependent input); the kernels
 * read the true dims from dims_device when there are some, and tiles past
 * the true volume count 0.
 */
#ifndef PLUGRT_PLUGINS_NONZERO_NVRTC_H
#define PLUGRT_PLUGINS_NONZERO_NVRTC_H

#include "common.h"

/* Elements per tile: 256 threads x 16 items. */
#define PLG_NZ_NVRTC_TILE 4096

/* Workspace bytes for inputs of up to max_volume elements: counts[tiles]
 * then offsets[tiles + 1], int64 each (the offsets start at 8 * tiles of
 * the current shape, which never passes the largest). */
int64_t plg_nz_nvrtc_workspace(int64_t max_volume);

/* What one description points into: it must outlive get_kernel's return
 * to the builder, so the caller keeps it (on its stack). */
typedef struct plg_nz_nvrtc_desc {
    prt_kernel_code code;
    prt_kernel_launch launch[3];
    prt_kernel_arg args[3][8];
} plg_nz_nvrtc_desc;

/* Fills *kernel (and *store, which it points into) for input dtype `dtype`
 * (float32 or float16) of dims `in` (rank 2) and the row order. */
prt_status plg_nz_nvrtc_kernel(const plg_object *o, int32_t dtype, int32_t row_order,
                               const prt_dim_exprs *in, prt_expr_builder *exprs,
                               plg_nz_nvrtc_desc *store, prt_kernel_desc *kernel);

#endif /* PLUGRT_PLUGINS_NONZERO_NVRTC_H */
