/*
 * The CUDA side of the standard plugin library, as the C side sees it.
 *
 * Kernels live in plugins/<name>_cuda.cu; each plugin's .c file reaches them
 * through one table, plg_cuda() (common.h), from its enqueue when the device
 * is CUDA. Only plain C types cross this boundary, so the .c files never
 * include a CUDA header and the library still builds without CUDA (then
 * nothing here is compiled or called: every use sits under
 * PRT_PLUGINS_CUDA).
 *
 * The table is linked into the library, or, when the build defines
 * PRT_PLUGINS_CUDA_MODULE (the file name of a separate module holding the
 * .cu objects and the CUDA runtime), looked up in that module, loaded on
 * first use. The module keeps the CUDA runtime's load-time registration out
 * of the library's own dlopen, so a process that never uses CUDA never runs
 * it (it aborts the process when an allocation fails).
 *
 * Launchers queue work on `stream` (a cudaStream_t) only: no synchronization,
 * no allocation, no default-stream call, so an enqueue can be captured in a
 * CUDA graph. Scratch memory comes from the plugin's workspace, whose size
 * the plg_*_workspace functions below compute from the profile's largest
 * dims, in plain C (a build for the CPU asks too). Each launcher returns a
 * cudaError_t as int (0 = success), from cudaGetLastError() after its
 * launches; the caller turns it into a message with plg_cuda_fail.
 *
 * Dims that depend on data: a launcher is given the dims the host knows
 * (upper bounds where `dims_device` is not NULL) and sizes its grid from
 * them; the kernels read the true dims from `dims_device` on the device and
 * do only that much work.
 */
#ifndef PLUGRT_PLUGINS_CUDA_LAUNCH_H
#define PLUGRT_PLUGINS_CUDA_LAUNCH_H

#include <stdint.h>

#include "plugrt/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

static inline int64_t plg_up256(int64_t x)
{
    return (x + 255) / 256 * 256;
}

/* One input x and one output y of its dtype (CustomHardmax, circ pad). */
typedef struct plg_unary_io {
    const void *x;
    void *y;
    int32_t dtype;
    int32_t rank;
    int64_t dims[PRT_MAX_DIMS]; /* x's; upper bounds when dims_device is set */
    const int64_t *dims_device; /* x's true dims, or NULL */
} plg_unary_io;

/* ---- NonZeroPlugin (nonzero_cuda.cu) ------------------------------------ */

/* Tactics. AUTO picks by size: one block for small inputs, above that the
 * two kernels through the input's bitmap. In column order the one-pass
 * plans stage the column half at the end of the output's room until K is
 * known (nonzero_cuda.cu). */
enum {
    PLG_NZ_AUTO = 0,
    PLG_NZ_ONE_BLOCK = 1,        /* one block loops over the input */
    PLG_NZ_COUNT_SCAN_WRITE = 2, /* three kernels, the input read twice */
    PLG_NZ_ONE_PASS = 3,         /* one pass: decoupled look-back */
    PLG_NZ_ONE_PASS_WIDE = 4,    /* ONE_PASS with tiles of twice the size */
    PLG_NZ_MASKS = 5,            /* retired: set_tactic takes it as BITMAP */
    PLG_NZ_BITMAP = 6            /* count writing the input's bitmap, then write */
};

/* Elements per tile of the multi-block kernels: 256 threads x 16 items
 * (the wide tiles hold twice as many, so this count bounds both). */
#define PLG_NZ_TILE 4096

/* Workspace, for `tiles` tiles of PLG_NZ_TILE elements: the look-back's tile
 * dispenser and per-tile state (cleared before each run), then per-tile
 * offsets and counts (count, scan, write), then one bit per element (the
 * BITMAP plan, whose 8192-element tiles take 1024 bytes each). */
typedef struct plg_nz_layout {
    int64_t state, offset, count, mask, total; /* byte offsets; total = the size */
} plg_nz_layout;

static inline plg_nz_layout plg_nz_workspace_layout(int64_t tiles)
{
    plg_nz_layout l;
    l.state = 256; /* the dispenser sits at 0 */
    l.offset = plg_up256(l.state + 8 * tiles);
    l.count = plg_up256(l.offset + 8 * tiles);
    l.mask = plg_up256(l.count + 4 * tiles);
    l.total = plg_up256(l.mask + 1024 * ((tiles + 1) / 2));
    return l;
}

/* Workspace bytes for inputs of up to `max_volume` elements. */
static inline int64_t plg_nz_workspace(int64_t max_volume)
{
    int64_t tiles = (max_volume + PLG_NZ_TILE - 1) / PLG_NZ_TILE;
    return plg_nz_workspace_layout(tiles > 0 ? tiles : 1).total;
}

typedef struct plg_nz_launch {
    const void *x;              /* rows x cols, float32 or float16 */
    int32_t dtype;              /* PRT_FLOAT32 or PRT_FLOAT16 */
    int32_t row_order;          /* 1: K x 2, 0: 2 x K */
    int64_t rows, cols;         /* upper bounds when dims_device is set */
    const int64_t *dims_device; /* the true [rows, cols], or NULL */
    int32_t *idx;               /* room for `capacity` indices */
    int64_t capacity;           /* >= 2 * rows * cols */
    int64_t *count;             /* the size tensor K (device memory) */
    int32_t tactic;
    void *workspace; /* plg_nz_workspace(max volume) bytes, or NULL */
} plg_nz_launch;

int plg_nz_cuda(const plg_nz_launch *a, void *stream);

/* ---- CustomHardmax (hardmax_cuda.cu) ------------------------------------ */

/* Tactics. AUTO: SHORT_AXIS when its blocks fill the GPU, else LONG_AXIS. */
enum {
    PLG_HM_AUTO = 0,
    PLG_HM_SHORT_AXIS = 1, /* one group of threads owns a whole axis line */
    PLG_HM_LONG_AXIS = 2   /* the axis split across blocks: partial maxima
                              and zeros, then the ones (falls back to
                              SHORT_AXIS when the axis is too short to
                              split) */
};

/* LONG_AXIS cuts an axis line into chunks of at least PLG_HM_MIN_CHUNK
 * positions, at most PLG_HM_MAX_CHUNKS of them, and uses at most
 * PLG_HM_SPLIT_CAP bytes of workspace for the partial maxima (16 bytes per
 * line and chunk). */
#define PLG_HM_MIN_CHUNK 32
#define PLG_HM_MAX_CHUNKS 1024
#define PLG_HM_SPLIT_CAP ((int64_t)4 << 20)

static inline int64_t plg_hm_max_chunks(int64_t n)
{
    int64_t c = (n + PLG_HM_MIN_CHUNK - 1) / PLG_HM_MIN_CHUNK;
    return c < PLG_HM_MAX_CHUNKS ? c : PLG_HM_MAX_CHUNKS;
}

/* Workspace of `lines` lines in `nch` chunks: the partial maxima. Above
 * the cap: cap + 1. */
static inline int64_t plg_hm_split_bytes(int64_t lines, int64_t nch)
{
    if (lines > PLG_HM_SPLIT_CAP / 16 || nch > PLG_HM_MAX_CHUNKS)
        return PLG_HM_SPLIT_CAP + 1;
    return plg_up256(lines * nch * 16);
}

/* [outer, n, inner] of dims around `axis`. */
static inline void plg_hm_collapse(int32_t rank, const int64_t *dims, int32_t axis,
                                   int64_t *outer, int64_t *n, int64_t *inner)
{
    *outer = 1;
    *inner = 1;
    *n = dims[axis];
    for (int32_t i = 0; i < axis; i++)
        *outer *= dims[i];
    for (int32_t i = axis + 1; i < rank; i++)
        *inner *= dims[i];
}

/* Workspace for inputs up to `max_dims`: what LONG_AXIS may use. The size
 * grows with every dim, so the profile's largest dims bound every run's
 * need. */
static inline int64_t plg_hm_workspace(int32_t rank, const int64_t *max_dims,
                                       int32_t axis)
{
    int64_t outer, n, inner, b;
    if (rank < 1 || rank > PRT_MAX_DIMS || axis < 0 || axis >= rank)
        return 0;
    plg_hm_collapse(rank, max_dims, axis, &outer, &n, &inner);
    if (outer * n * inner == 0 || plg_hm_max_chunks(n) < 2)
        return 0; /* never split */
    b = plg_hm_split_bytes(outer * inner, plg_hm_max_chunks(n));
    return b < PLG_HM_SPLIT_CAP ? b : PLG_HM_SPLIT_CAP;
}

typedef struct plg_hm_launch {
    plg_unary_io io; /* rank 1..PRT_MAX_DIMS */
    int32_t axis;    /* resolved: 0..rank-1 */
    int32_t tactic;
    void *workspace; /* plg_hm_workspace(max dims) bytes, or NULL */
} plg_hm_launch;

int plg_hm_cuda(const plg_hm_launch *a, void *stream);

/* ---- circ_pad_plugin (circ_pad_cuda.cu) --------------------------------- */

typedef struct plg_cp_launch {
    plg_unary_io io;
    int64_t before[PRT_MAX_DIMS]; /* pads per dim (0 where not padded) */
    int64_t after[PRT_MAX_DIMS];
} plg_cp_launch;

int plg_cp_cuda(const plg_cp_launch *a, void *stream);

/* ---- AddInPlace (add_in_place_cuda.cu) ---------------------------------- */

typedef struct plg_add_launch {
    const void *a;
    const void *b;
    void *out; /* == a, == b, or apart from both */
    int32_t dtype;
    int32_t rank;
    int64_t count;              /* elements; the upper bound with dims_device */
    const int64_t *dims_device; /* a's true dims (rank values), or NULL */
} plg_add_launch;

int plg_add_cuda(const plg_add_launch *a, void *stream);

/* ---- QuantFC (quant_fc_cuda.cu) ----------------------------------------- */

/* Output channels per launch: their combined scales travel as a launch
 * argument (the quantization's scales are host memory, plugin.h), so a
 * launch needs no device copy and a run stays capturable in a graph. */
#define PLG_QFC_CHUNK 256

/* y[m, n] = act(dot(x[m, :], w[n, :]) * scale + bias[n]) for the channels
 * n0..n0+nc-1, then quantized when y is integer. x float32 with w float32
 * (scale 1), or x int8/uint8 with w int8: the dot in int32 over (x - x_zp)
 * and w. */
typedef struct plg_qfc_launch {
    const void *x;   /* [m, k] */
    const void *w;   /* [n, k] */
    const float *b;  /* [n] or NULL */
    void *y;         /* [m, n] */
    int32_t x_dtype; /* PRT_FLOAT32, PRT_INT8 or PRT_UINT8 */
    int32_t y_dtype; /* PRT_FLOAT32, PRT_INT8 or PRT_UINT8 */
    int64_t m, k, n; /* n: all of w's channels (y's row length) */
    int32_t x_zp;    /* x's zero point (integer x) */
    int32_t relu;    /* 1: max(0, .) before the output's quantization */
    float y_scale;   /* integer y: its scale (y = round(v / y_scale) + y_zp) */
    int32_t y_zp;
    int64_t n0, nc;             /* this launch's channels, nc <= PLG_QFC_CHUNK */
    float scale[PLG_QFC_CHUNK]; /* per channel: x's scale * w's (1 for floats) */
} plg_qfc_launch;

int plg_qfc_cuda(const plg_qfc_launch *a, void *stream);

/* ---- the table the C side calls (cuda_util.cu) ---------------------------- */

typedef struct plg_cuda_api {
    uint32_t struct_size;
    const char *(*error_name)(int err);   /* cudaGetErrorName */
    const char *(*error_string)(int err); /* cudaGetErrorString */
    /* CUDA devices this process can use (0 without a driver or a GPU);
     * leaves no error behind in the CUDA runtime. */
    int (*device_count)(void);
    int (*nonzero)(const plg_nz_launch *a, void *stream);
    int (*hardmax)(const plg_hm_launch *a, void *stream);
    int (*circ_pad)(const plg_cp_launch *a, void *stream);
    int (*add)(const plg_add_launch *a, void *stream);
    int (*quant_fc)(const plg_qfc_launch *a, void *stream);
} plg_cuda_api;

/* Its name in the module (PRT_PLUGINS_CUDA_MODULE). */
#define PLG_CUDA_API_SYMBOL "plg_cuda_api_v1"
extern const plg_cuda_api plg_cuda_api_v1;

#ifdef __cplusplus
}
#endif

#endif /* PLUGRT_PLUGINS_CUDA_LAUNCH_H */
