/*
 * NonZeroPlugin's NVRTC backend: the kernels' source and their launches
 * (nonzero_nvrtc.h). The source is compiled by the builder, not here, so
 * this file is plain C and part of every build of the library.
 */
#include "nonzero_nvrtc.h"

#include <string.h>

/* NVRTC compiles this with no headers: built-in types only. Tiles are laid
 * out as in nonzero_cuda.cu: item e of lane l of warp w is element
 * w * 32 * ITEMS + e * 32 + l of the tile, so each load of a warp reads 32
 * consecutive elements, and row-major order within a warp is (item, lane):
 * one ballot per item places every lane's pair. Positions come from scans,
 * never atomics, so the output is deterministic. The three kernels read
 * the input the same way, so count and write agree on every tile. */
static const char nz_source[] =
    "typedef unsigned int u32;\n"
    "typedef unsigned short u16;\n"
    "typedef long long i64;\n"
    "#define FULL 0xffffffffu\n"
    "#define TILE_B 256\n"
    "#define ITEMS 16\n"
    "#define TILE (TILE_B * ITEMS)\n"
    "#define WARPS (TILE_B / 32)\n"
    "#define SCAN_B 1024\n"
    "\n"
    "/* Zero is +0 or -0: every bit but the sign clear (NaN counts). */\n"
    "__device__ __forceinline__ u32 nzbit(u32 b) { return (b & 0x7FFFFFFFu) != 0; }\n"
    "__device__ __forceinline__ u32 nzbit(u16 b) { return (b & 0x7FFFu) != 0; }\n"
    "\n"
    "/* The true element count and cols: dims_device when the input's dims\n"
    " * are data-dependent (the launch sizes hold upper bounds), else the\n"
    " * dims given. */\n"
    "__device__ __forceinline__ i64 true_n(const i64 *dims, i64 rows, i64 cols,\n"
    "                                      i64 &c)\n"
    "{\n"
    "    if (dims) {\n"
    "        rows = dims[0];\n"
    "        cols = dims[1];\n"
    "    }\n"
    "    c = cols;\n"
    "    return rows * cols;\n"
    "}\n"
    "\n"
    "/* Bit e: the lane's item e is non-zero. All loads issue before any use. */\n"
    "template <typename T>\n"
    "__device__ __forceinline__ u32 load_mask(const T *x, i64 first, i64 n)\n"
    "{\n"
    "    T v[ITEMS];\n"
    "    u32 m = 0;\n"
    "#pragma unroll\n"
    "    for (int e = 0; e < ITEMS; e++) {\n"
    "        const i64 i = first + 32 * e;\n"
    "        v[e] = i < n ? x[i] : (T)0;\n"
    "    }\n"
    "#pragma unroll\n"
    "    for (int e = 0; e < ITEMS; e++)\n"
    "        m |= nzbit(v[e]) << e;\n"
    "    return m;\n"
    "}\n"
    "\n"
    "__device__ __forceinline__ int warp_sum(int v)\n"
    "{\n"
    "#pragma unroll\n"
    "    for (int o = 16; o > 0; o >>= 1)\n"
    "        v += __shfl_down_sync(FULL, v, o);\n"
    "    return v;\n"
    "}\n"
    "\n"
    "template <typename T>\n"
    "__device__ void count_tile(const void *x, const i64 *dims, i64 rows, i64 cols,\n"
    "                           i64 *counts)\n"
    "{\n"
    "    __shared__ int wc[WARPS];\n"
    "    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
    "    i64 c;\n"
    "    const i64 n = true_n(dims, rows, cols, c);\n"
    "    const i64 base = (i64)blockIdx.x * TILE;\n"
    "    const u32 m = base < n ? load_mask((const T *)x,\n"
    "                                       base + warp * 32 * ITEMS + lane, n)\n"
    "                           : 0u;\n"
    "    const int k = warp_sum(__popc(m));\n"
    "    if (lane == 0)\n"
    "        wc[warp] = k;\n"
    "    __syncthreads();\n"
    "    if (threadIdx.x == 0) {\n"
    "        i64 s = 0;\n"
    "        for (int w = 0; w < WARPS; w++)\n"
    "            s += wc[w];\n"
    "        counts[blockIdx.x] = s;\n"
    "    }\n"
    "}\n"
    "\n"
    "template <typename T>\n"
    "__device__ void write_tile(const void *x, const i64 *dims, i64 rows, i64 cols,\n"
    "                           const i64 *offsets, i64 tiles, int *idx, int row_order)\n"
    "{\n"
    "    __shared__ int wc[WARPS];\n"
    "    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
    "    i64 C;\n"
    "    const i64 n = true_n(dims, rows, cols, C);\n"
    "    const i64 base = (i64)blockIdx.x * TILE;\n"
    "    if (base >= n) /* the whole block: past the true volume */\n"
    "        return;\n"
    "    const i64 first = base + warp * 32 * ITEMS + lane;\n"
    "    const u32 m = load_mask((const T *)x, first, n);\n"
    "    const int k = warp_sum(__popc(m));\n"
    "    if (lane == 0)\n"
    "        wc[warp] = k;\n"
    "    __syncthreads();\n"
    "    i64 pos = offsets[blockIdx.x];\n"
    "    for (int w = 0; w < warp; w++)\n"
    "        pos += wc[w];\n"
    "    const i64 K = offsets[tiles];\n"
    "    const u32 below = (1u << lane) - 1u;\n"
    "    /* 32-bit division where every index fits (C <= n then). */\n"
    "    const bool small = n <= 0xFFFFFFFFll;\n"
    "    const bool pairs = row_order && ((unsigned long long)idx & 7u) == 0;\n"
    "#pragma unroll\n"
    "    for (int e = 0; e < ITEMS; e++) {\n"
    "        const u32 bit = (m >> e) & 1u;\n"
    "        const u32 b = __ballot_sync(FULL, bit);\n"
    "        if (bit) {\n"
    "            const i64 o = pos + __popc(b & below);\n"
    "            const i64 i = first + 32 * e;\n"
    "            i64 r, c;\n"
    "            if (small) {\n"
    "                const u32 q = (u32)i / (u32)C;\n"
    "                r = q;\n"
    "                c = (u32)i - q * (u32)C;\n"
    "            } else {\n"
    "                r = i / C;\n"
    "                c = i - r * C;\n"
    "            }\n"
    "            if (pairs)\n"
    "                reinterpret_cast<int2 *>(idx)[o] = make_int2((int)r, (int)c);\n"
    "            else if (row_order) {\n"
    "                idx[2 * o] = (int)r;\n"
    "                idx[2 * o + 1] = (int)c;\n"
    "            } else {\n"
    "                idx[o] = (int)r;\n"
    "                idx[K + o] = (int)c;\n"
    "            }\n"
    "        }\n"
    "        pos += __popc(b);\n"
    "    }\n"
    "}\n"
    "\n"
    "extern \"C\" __global__ void __launch_bounds__(TILE_B)\n"
    "plg_nz_count_f32(const void *x, const i64 *dims, i64 rows, i64 cols, i64 *counts)\n"
    "{\n"
    "    count_tile<u32>(x, dims, rows, cols, counts);\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(TILE_B)\n"
    "plg_nz_count_f16(const void *x, const i64 *dims, i64 rows, i64 cols, i64 *counts)\n"
    "{\n"
    "    count_tile<u16>(x, dims, rows, cols, counts);\n"
    "}\n"
    "\n"
    "/* counts[tiles] -> offsets[tiles + 1] (exclusive; the last is K) and K,\n"
    " * SCAN_B tiles a round, carried from round to round. */\n"
    "extern \"C\" __global__ void __launch_bounds__(SCAN_B)\n"
    "plg_nz_scan(const i64 *counts, i64 tiles, i64 *offsets, i64 *k_out)\n"
    "{\n"
    "    __shared__ i64 ws[SCAN_B / 32];\n"
    "    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
    "    i64 carry = 0;\n"
    "    for (i64 base = 0; base < tiles; base += SCAN_B) {\n"
    "        const i64 i = base + threadIdx.x;\n"
    "        const i64 v = i < tiles ? counts[i] : 0;\n"
    "        i64 s = v;\n"
    "#pragma unroll\n"
    "        for (int o = 1; o < 32; o <<= 1) {\n"
    "            const i64 t = __shfl_up_sync(FULL, s, o);\n"
    "            s += lane >= o ? t : 0;\n"
    "        }\n"
    "        if (lane == 31)\n"
    "            ws[warp] = s;\n"
    "        __syncthreads();\n"
    "        if (warp == 0) {\n"
    "            i64 w = ws[lane];\n"
    "#pragma unroll\n"
    "            for (int o = 1; o < 32; o <<= 1) {\n"
    "                const i64 t = __shfl_up_sync(FULL, w, o);\n"
    "                w += lane >= o ? t : 0;\n"
    "            }\n"
    "            ws[lane] = w;\n"
    "        }\n"
    "        __syncthreads();\n"
    "        if (i < tiles)\n"
    "            offsets[i] = carry + (warp ? ws[warp - 1] : 0) + s - v;\n"
    "        carry += ws[SCAN_B / 32 - 1];\n"
    "        __syncthreads(); /* ws is written again next round */\n"
    "    }\n"
    "    if (threadIdx.x == 0) {\n"
    "        offsets[tiles] = carry;\n"
    "        *k_out = carry;\n"
    "    }\n"
    "}\n"
    "\n"
    "extern \"C\" __global__ void __launch_bounds__(TILE_B)\n"
    "plg_nz_write_f32(const void *x, const i64 *dims, i64 rows, i64 cols,\n"
    "                 const i64 *offsets, i64 tiles, int *idx, int row_order)\n"
    "{\n"
    "    write_tile<u32>(x, dims, rows, cols, offsets, tiles, idx, row_order);\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(TILE_B)\n"
    "plg_nz_write_f16(const void *x, const i64 *dims, i64 rows, i64 cols,\n"
    "                 const i64 *offsets, i64 tiles, int *idx, int row_order)\n"
    "{\n"
    "    write_tile<u16>(x, dims, rows, cols, offsets, tiles, idx, row_order);\n"
    "}\n";

/* Threads of the count and write blocks, and of the scan's one block: the
 * source's TILE_B and SCAN_B. */
#define NZ_TILE_B 256
#define NZ_SCAN_B 1024

static int64_t nz_tiles(int64_t volume)
{
    int64_t t = (volume + PLG_NZ_NVRTC_TILE - 1) / PLG_NZ_NVRTC_TILE;
    return t > 0 ? t : 1;
}

int64_t plg_nz_nvrtc_workspace(int64_t max_volume)
{
    return 8 * nz_tiles(max_volume) + 8 * (nz_tiles(max_volume) + 1);
}

static prt_kernel_arg nz_arg(int32_t kind, int32_t index, const prt_expr *value)
{
    prt_kernel_arg a;
    memset(&a, 0, sizeof a);
    a.kind = kind;
    a.index = index;
    a.value = value;
    return a;
}

static void nz_launch(prt_kernel_launch *l, const char *entry, const prt_expr *grid,
                      const prt_expr *block, const prt_expr *one,
                      const prt_kernel_arg *args, int32_t nb_args)
{
    memset(l, 0, sizeof *l);
    l->entry = entry;
    l->grid[0] = grid;
    l->grid[1] = l->grid[2] = one;
    l->block[0] = block;
    l->block[1] = l->block[2] = one;
    l->nb_args = nb_args;
    l->args = args;
}

prt_status plg_nz_nvrtc_kernel(const plg_object *o, int32_t dtype, int32_t row_order,
                               const prt_dim_exprs *in, prt_expr_builder *exprs,
                               plg_nz_nvrtc_desc *s, prt_kernel_desc *kernel)
{
    const int f16 = dtype == PRT_FLOAT16;
    const prt_expr *one, *vol, *tiles, *tile_b, *scan_b, *offsets, *order;
    prt_kernel_arg *a;
    if (dtype != PRT_FLOAT32 && dtype != PRT_FLOAT16)
        return plg_fail(o, PRT_ERR_UNSUPPORTED,
                        "input dtype %s is not supported (float32 or float16)",
                        plg_dtype_name(dtype));
    if (!in || in->nb_dims != 2 || !exprs)
        return plg_fail(o, PRT_ERR_INVALID_ARGUMENT,
                        "get_kernel: expected the 2-D input's dims and a builder");
    one = exprs->constant(exprs, 1);
    vol = exprs->operation(exprs, PRT_DIM_PROD, in->d[0], in->d[1]);
    tiles = exprs->operation(exprs, PRT_DIM_MAX, one,
                             exprs->operation(exprs, PRT_DIM_CEIL_DIV, vol,
                                              exprs->constant(exprs, PLG_NZ_NVRTC_TILE)));
    tile_b = exprs->constant(exprs, NZ_TILE_B);
    scan_b = exprs->constant(exprs, NZ_SCAN_B);
    /* offsets[] follow counts[tiles] in the workspace. */
    offsets = exprs->operation(exprs, PRT_DIM_PROD, exprs->constant(exprs, 8), tiles);
    order = exprs->constant(exprs, row_order ? 1 : 0);
    if (!one || !vol || !tiles || !tile_b || !scan_b || !offsets || !order)
        return plg_fail(o, PRT_ERR_PLUGIN, "get_kernel: the expression builder failed");

    memset(s, 0, sizeof *s);
    s->code.kind = PRT_KERNEL_CUDA_SOURCE;
    s->code.data = nz_source;
    s->code.size = (int64_t)(sizeof nz_source - 1);

    a = s->args[0]; /* count(x, dims, rows, cols, counts) */
    a[0] = nz_arg(PRT_KARG_INPUT, 0, NULL);
    a[1] = nz_arg(PRT_KARG_DIMS, 0, NULL);
    a[2] = nz_arg(PRT_KARG_INT64, 0, in->d[0]);
    a[3] = nz_arg(PRT_KARG_INT64, 0, in->d[1]);
    a[4] = nz_arg(PRT_KARG_WORKSPACE, 0, NULL);
    nz_launch(&s->launch[0], f16 ? "plg_nz_count_f16" : "plg_nz_count_f32", tiles, tile_b,
              one, a, 5);

    a = s->args[1]; /* scan(counts, tiles, offsets, k) */
    a[0] = nz_arg(PRT_KARG_WORKSPACE, 0, NULL);
    a[1] = nz_arg(PRT_KARG_INT64, 0, tiles);
    a[2] = nz_arg(PRT_KARG_WORKSPACE, 0, offsets);
    a[3] = nz_arg(PRT_KARG_OUTPUT, 1, NULL);
    nz_launch(&s->launch[1], "plg_nz_scan", one, scan_b, one, a, 4);

    a = s->args[2]; /* write(x, dims, rows, cols, offsets, tiles, idx, order) */
    a[0] = nz_arg(PRT_KARG_INPUT, 0, NULL);
    a[1] = nz_arg(PRT_KARG_DIMS, 0, NULL);
    a[2] = nz_arg(PRT_KARG_INT64, 0, in->d[0]);
    a[3] = nz_arg(PRT_KARG_INT64, 0, in->d[1]);
    a[4] = nz_arg(PRT_KARG_WORKSPACE, 0, offsets);
    a[5] = nz_arg(PRT_KARG_INT64, 0, tiles);
    a[6] = nz_arg(PRT_KARG_OUTPUT, 0, NULL);
    a[7] = nz_arg(PRT_KARG_INT32, 0, order);
    nz_launch(&s->launch[2], f16 ? "plg_nz_write_f16" : "plg_nz_write_f32", tiles, tile_b,
              one, a, 8);

    kernel->nb_code = 1;
    kernel->code = &s->code;
    kernel->nb_launches = 3;
    kernel->launches = s->launch;
    kernel->compile_options = NULL;
    return PRT_OK;
}
