/*
 * The CUDA kernels' launchers (internal; built with CUDA only): plain C
 * functions over the .cu files of this folder, called by the built-in ops'
 * CUDA kernels (ops.h, the op_kernel_fn of each op in the CUDA table).
 * Each queues its work on `stream` and returns a cudaError_t as int (0:
 * launched). Pointers are device memory; counts are elements. The caller
 * has checked shapes and dtypes.
 */
#ifndef PLUGRT_OPS_CUDA_LAUNCH_H
#define PLUGRT_OPS_CUDA_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "ops/cuda/gpu_args.h"

#define OPK_MAX_SP 3       /* spatial dims of a convolution */
#define OPK_MAX_LETTERS 52 /* einsum letters */
#define OPK_MAX_OPERANDS 8

#ifdef __cplusplus
extern "C" {
#endif

/* y = x < 0 ? 0 : x (NaN and -0 kept), as the CPU kernel; dtype float32,
 * float16, bfloat16, int8, int32 or int64. */
int opk_relu(int32_t dtype, const void *x, void *y, int64_t n, void *stream);

/* y (dims out_dims, row-major) = x permuted: element at output coordinate
 * c reads x at sum_k c[k] * in_stride[k], where in_stride[k] is the stride
 * in x of the input dim that output dim k comes from. esize 1, 2, 4 or 8. */
int opk_transpose(int32_t esize, const void *x, void *y, int32_t rank,
                  const int64_t *out_dims, const int64_t *in_stride, int64_t n,
                  void *stream);

/* Einsum as a loop nest: letters 0..out_rank-1 are the output's (in output
 * order), the others are summed. stride[k][l] is operand k's element
 * stride for letter l (0 when it lacks it; a diagonal adds strides).
 * dtype float32 / float16 (summed in double) or int32 / int64 (in int64). */
typedef struct opk_einsum_args {
    int32_t dtype;
    int32_t nb_ops;
    int32_t nb_letters;
    int32_t out_rank;
    int64_t size[OPK_MAX_LETTERS];
    int64_t stride[OPK_MAX_OPERANDS][OPK_MAX_LETTERS];
    const void *x[OPK_MAX_OPERANDS];
    void *y;
    int64_t out_count;
    int64_t sum_count;
} opk_einsum_args;
int opk_einsum(const opk_einsum_args *a, void *stream);

/* A direct N-D convolution (NC + up to three spatial dims), groups,
 * strides, dilations, begin pads; b may be NULL. dtype float32 or float16
 * (float accumulation). */
typedef struct opk_conv_args {
    int32_t dtype;
    int32_t ns;
    int64_t N, C, M, G, Cg, Mg;
    int64_t in[OPK_MAX_SP], k[OPK_MAX_SP], out[OPK_MAX_SP];
    int64_t s[OPK_MAX_SP], d[OPK_MAX_SP], pb[OPK_MAX_SP];
    int64_t ivol, kvol, ovol;
    const void *x, *w, *b;
    void *y;
    /* Fused activation: an OP_ACT_* kind (op_act.h) and its alpha and
     * beta, applied to each output before it is stored. */
    int32_t act;
    float act_alpha, act_beta;
    /* The residual input Z [N, M, ovol] of y's dtype, or NULL: added to the
     * sum with the bias (rounded to a float16 y's dtype first, as the Conv
     * layer's output would be), the sum rounded again as the Add layer's,
     * then the activation: the unfused layers' values. */
    const void *z;
} opk_conv_args;
int opk_conv(const opk_conv_args *a, void *stream);
/* A 2-D convolution as an implicit GEMM per group (64 x 64 tiles of output
 * channels x output positions, float32 sums; bias and activation fused);
 * cudaErrorInvalidValue for other ranks or sizes past its grid. */
int opk_conv_gemm(const opk_conv_args *a, void *stream);
/* The bias and activation of a convolution whose product y already holds
 * (a->y, [N, M, ovol], float32 or float16), in place; nothing without
 * either. */
int opk_conv_epilogue(const opk_conv_args *a, void *stream);

/* Elementwise float16/bfloat16 <-> float32 conversions, for MatMul's
 * 16-bit path: to_f32 widens n elements, from_f32 narrows them. */
int opk_to_f32(int32_t dtype, const void *x, float *y, int64_t n, void *stream);
int opk_from_f32(int32_t dtype, const float *x, void *y, int64_t n, void *stream);

/* ---- elementwise (ew.cu) --------------------------------------------
 *
 * dtype is a prt_dtype. Every launcher returns 0 without launching when
 * there is nothing to write (n == 0). Broadcast walks (opk_bcast, from
 * gpu_args.h) are passed by value with the launch. */

/* What opk_binary computes per element: arithmetic with the inputs' dtype
 * (binary.c's semantics: half floats in float32 rounded once, integers
 * wrapping, NaN winning Max and Min), comparisons and logic to bool
 * (compare.c's: bool inputs by truth value). */
enum opk_binary_kind {
    OPK_ADD,
    OPK_SUB,
    OPK_MUL,
    OPK_DIV,  /* integers truncated; by 0 gives 0 (the CPU fails its run) */
    OPK_MOD,  /* numpy.mod (the divisor's sign); integers by 0 give 0 */
    OPK_FMOD, /* C fmod (integers: %); by 0 gives 0 */
    OPK_MAX,
    OPK_MIN,
    OPK_PRELU, /* x < 0 ? x * slope : x */
    OPK_SHL,   /* uint8: BitShift */
    OPK_SHR,
    OPK_EQUAL, /* -> bool */
    OPK_LESS,
    OPK_LESS_EQUAL,
    OPK_GREATER,
    OPK_GREATER_EQUAL,
    OPK_AND, /* bool only */
    OPK_OR,
    OPK_XOR
};

/* y = a kind c over b's walk (2 inputs: a, c); y has n elements. */
int opk_binary(int32_t kind, int32_t dtype, const opk_bcast *b, const void *a,
               const void *c, void *y, int64_t n, void *stream);

/* y = cond ? x : z over b's walk (3 inputs), elements of esize bytes (1, 2,
 * 4 or 8); cond is bool (non-zero bytes true). */
int opk_where(int32_t esize, const opk_bcast *b, const void *cond, const void *x,
              const void *z, void *y, int64_t n, void *stream);

/* The float functions of unary_math.c (kind: its UM_* value, ew_kinds.h),
 * float32/float16/bfloat16, with the op's alpha, beta, gamma and Gelu's
 * approximate (0 none, 1 tanh). */
int opk_unary_math(int32_t kind, int32_t dtype, float alpha, float beta, float gamma,
                   int32_t approximate, const void *x, void *y, int64_t n, void *stream);

/* unary.c's Abs, Neg, Sign (kind: OPK_ABS...) over every dtype those take,
 * and compare.c's Not (bool), IsNaN and IsInf (floats; IsInf's detect flags
 * in alpha's place: detect_positive, detect_negative). */
enum opk_unary_kind { OPK_ABS, OPK_NEG, OPK_SIGN, OPK_NOT, OPK_ISNAN, OPK_ISINF };
int opk_unary(int32_t kind, int32_t dtype, int32_t flag_a, int32_t flag_b, const void *x,
              void *y, int64_t n, void *stream);

/* Clip (clip.c): y = min(max(x, lo), hi), NaN passing through; lo and hi
 * each read from device memory (one element of x's dtype) where the
 * pointer is set, else ilo/ihi (integer dtypes) or flo/fhi (floats). */
int opk_clip(int32_t dtype, const void *x, void *y, int64_t n, const void *lo,
             const void *hi, int64_t ilo, int64_t ihi, float flo, float fhi,
             void *stream);

/* Cast from dtype `from` to `to` (cast.c's rules: to bool x != 0; floats to
 * integers truncated and saturated, NaN 0; integers wrap; `saturate` for
 * the 8-bit floats, base/fp8.h). */
int opk_cast(int32_t from, int32_t to, const void *x, void *y, int64_t n, int saturate,
             void *stream);

/* y[i] = x[offset of i in b's walk (1 input)], elements of esize bytes:
 * Expand, Transpose, Slice with constant parameters. x_offset (elements)
 * is added to every source offset. */
int opk_copy(int32_t esize, const opk_bcast *b, const void *x, int64_t x_offset, void *y,
             int64_t n, void *stream);

/* bytes from x to y, both device memory (nothing when they are the same
 * address or bytes is 0): the reshaping ops, Identity, Cast to its own
 * dtype. */
int opk_device_copy(void *y, const void *x, size_t bytes, void *stream);

/* ---- data movement and fills (data.cu) ------------------------------ */

/* Gather along an axis: data viewed as [outer, d, inner], y as [outer, ni,
 * inner]; index k (int32 or int64, of idx_dtype) selects i (i + d when
 * negative). An index out of [-d, d-1] gives zeros (see DESIGN-NOTES:
 * a kernel cannot fail the run). */
int opk_gather(int32_t esize, const void *x, const void *idx, int32_t idx_dtype, void *y,
               int64_t outer, int64_t d, int64_t ni, int64_t inner, void *stream);

/* GatherElements: y (indices' dims idims, rank r) from data (dims ddims)
 * along `axis`; out-of-range indices give zeros. */
typedef struct opk_gather_elements_args {
    int32_t esize, idx_dtype, rank, axis;
    int64_t idims[OPK_MAX_RANK], ddims[OPK_MAX_RANK];
    const void *x, *idx;
    void *y;
    int64_t n;
} opk_gather_elements_args;
int opk_gather_elements(const opk_gather_elements_args *a, void *stream);

/* Slice whose starts (and axes, steps) are device data: each thread reads
 * the nb entries (int32 or int64 of vdtype; axes NULL: 0..nb-1, steps NULL:
 * 1) and computes starts and steps as slice.c does; y has dims odims
 * (rank r, the runtime's, computed from the same values), data ddims. */
typedef struct opk_slice_args {
    int32_t esize, rank, nb, vdtype;
    int64_t ddims[OPK_MAX_RANK], odims[OPK_MAX_RANK];
    const void *x, *starts, *axes, *steps;
    void *y;
    int64_t n;
} opk_slice_args;
int opk_slice(const opk_slice_args *a, void *stream);

/* Concat of nb (<= OPK_MAX_CONCAT) inputs along an axis: y viewed as
 * [outer, row], input k as [outer, len[k]] placed at column off[k]. */
#define OPK_MAX_CONCAT 8
typedef struct opk_concat_args {
    int32_t esize, nb;
    const void *x[OPK_MAX_CONCAT];
    int64_t len[OPK_MAX_CONCAT], off[OPK_MAX_CONCAT];
    int64_t outer, row;
    void *y;
} opk_concat_args;
int opk_concat(const opk_concat_args *a, void *stream);

/* Split along an axis, the mirror of Concat: x viewed as [outer, row],
 * output k as [outer, len[k]] taken from column off[k], nb (<=
 * OPK_MAX_CONCAT) outputs. One launch for them all. Both this and
 * opk_concat move the widest unit (16, 8, 4, 2 bytes or 1) that divides
 * every row, length, offset and address, a row of units per block row. */
typedef struct opk_split_args {
    int32_t esize, nb;
    const void *x;
    void *y[OPK_MAX_CONCAT];
    int64_t len[OPK_MAX_CONCAT], off[OPK_MAX_CONCAT];
    int64_t outer, row;
} opk_split_args;
int opk_split(const opk_split_args *a, void *stream);

/* n elements of esize bytes, each the low esize bytes of `pattern`
 * (ConstantOfShape). */
int opk_fill(int32_t esize, uint64_t pattern, void *y, int64_t n, void *stream);
/* y[i] = v[i] as int64, n <= OPK_MAX_RANK values given by the host (Shape,
 * Size). */
int opk_values(const int64_t *v, int32_t n, void *y, void *stream);
/* Range: y[i] = start + i * delta (int32 or int64), n elements. start and
 * delta are read from device memory, or, where NULL, are host_start and
 * host_delta (a shape input's values, which lie in host memory). */
int opk_range(int32_t dtype, const void *start, const void *delta, int64_t host_start,
              int64_t host_delta, void *y, int64_t n, void *stream);

/* ---- rows (rows.cu) -------------------------------------------------- */

/* Softmax (log_softmax: LogSoftmax) over rows of n elements spaced `inner`
 * apart: x viewed as [outer, n, inner]; softmax.c's semantics (the
 * maximum subtracted, the sum in double, NaN rows). Float dtypes. */
int opk_softmax(int32_t dtype, const void *x, void *y, int64_t outer, int64_t n,
                int64_t inner, int32_t log_softmax, void *stream);

/* LayerNormalization over rows of `norm` elements (layer_norm.c's
 * semantics): scale and bias (bias may be NULL) are read through walks of
 * the normalized dims (sb: 2 inputs, scale then bias); mean and inv_std
 * (may be NULL) are written in stash_dtype. Float dtypes. */
typedef struct opk_layer_norm_args {
    int32_t dtype, stash_dtype;
    int64_t rows, norm;
    float epsilon;
    opk_bcast sb;
    const void *x, *scale, *bias;
    void *y, *mean, *inv_std;
} opk_layer_norm_args;
int opk_layer_norm(const opk_layer_norm_args *a, void *stream);

/* y[r] = mean of row r (n elements; NaN when n is 0), summed in double:
 * GlobalAveragePool. Float dtypes. */
int opk_row_mean(int32_t dtype, const void *x, void *y, int64_t rows, int64_t n,
                 void *stream);

/* Gemm's epilogue on Y [M x N] float32 in place: Y = Y * alpha + C * beta
 * with C (float32, may be NULL: Y * alpha) read at C[i * si + j * sj]. */
int opk_gemm_epilogue(float *y, int64_t M, int64_t N, float alpha, const float *c,
                      int64_t si, int64_t sj, float beta, void *stream);

/* ---- data movement (move.cu) ------------------------------------------ */

/* Pad and Tile: output element at coordinates c of odims reads x at
 * sum_d opk_pad_source(mode, c[d] - begin[d], idims[d]) * istride[d]
 * (gpu_args.h), or the constant where a dim gives -1. The begins are
 * begin[] or, with `pads` (device data of pads_dtype), pads[i] for axis
 * ax[i], i < nax. The constant is *fill (device data) or, without it, the
 * low esize bytes of fill_bits. */
typedef struct opk_map_args {
    int32_t esize, rank, mode;
    int64_t idims[OPK_MAX_RANK], odims[OPK_MAX_RANK], istride[OPK_MAX_RANK];
    int64_t begin[OPK_MAX_RANK];
    const void *pads;
    int32_t pads_dtype, nax;
    int32_t ax[OPK_MAX_RANK];
    const void *fill;
    uint64_t fill_bits;
    const void *x;
    void *y;
    int64_t n;
} opk_map_args;
int opk_map(const opk_map_args *a, void *stream);

/* Trilu over n elements of [.., rows, cols] matrices: kept where j - i >= k
 * (upper) or <= k, else 0; k is element 0 of device data of k_dtype (int32
 * or int64), or 0 when NULL. */
int opk_trilu(int32_t esize, const void *x, void *y, int64_t n, int64_t rows,
              int64_t cols, const void *k, int32_t k_dtype, int32_t upper, void *stream);

/* EyeLike: y [rows x cols] is `one` (its low esize bytes) on diagonal k,
 * 0 elsewhere. */
int opk_eye(int32_t esize, uint64_t one, void *y, int64_t rows, int64_t cols, int64_t k,
            void *stream);

/* OneHot: y [outer, depth, inner] is vals[1] where the index (of any
 * numeric dtype, read as double; negative ones count from depth) at
 * [outer, inner] names the depth coordinate, else vals[0]. */
int opk_one_hot(int32_t esize, const void *idx, int32_t idx_dtype, const void *vals,
                void *y, int64_t outer, int64_t depth, int64_t inner, void *stream);

/* GatherND: output element e = (t, j), t the index tuple (in its batch
 * t / tuples), j within the slice of `slice` elements, reads x at
 * batch * per_batch + sum_q idx[t][q] * strides[b + q] + j (dims[b + q]
 * the tuple's dims); a tuple out of range gives zeros. */
typedef struct opk_gather_nd_args {
    int32_t esize, idx_dtype, b, m;
    int64_t dims[OPK_MAX_RANK], strides[OPK_MAX_RANK];
    int64_t per_batch, tuples, slice, n;
    const void *x, *idx;
    void *y;
} opk_gather_nd_args;
int opk_gather_nd(const opk_gather_nd_args *a, void *stream);

/* Scatter's reductions (scatter.c's order). */
enum { OPK_RED_NONE, OPK_RED_ADD, OPK_RED_MUL, OPK_RED_MAX, OPK_RED_MIN };

/* ScatterElements (elements: ddims the data's, idims the indices' and
 * updates', axis) and ScatterND (m index entries per tuple over ddims[0..m)
 * with strides dstride, `tuples` slices of `slice` elements). y may be x.
 * n: the data's elements. Updates in the order of the CPU's, so repeated
 * indices combine alike; an index out of range is skipped. */
typedef struct opk_scatter_args {
    int32_t elements, dtype, esize, idx_dtype, red, rank, axis, m;
    int64_t ddims[OPK_MAX_RANK], idims[OPK_MAX_RANK], dstride[OPK_MAX_RANK];
    int64_t tuples, slice, n;
    const void *x, *idx, *upd;
    void *y;
} opk_scatter_args;
int opk_scatter(const opk_scatter_args *a, void *stream);

/* Dims passed by value. */
typedef struct opk_dims_arg {
    int32_t rank;
    int64_t d[OPK_MAX_RANK];
} opk_dims_arg;

/* NonZero of n elements of dtype x (of dims d): y [rank, K] densely with
 * the true K, the coordinates of the non-zeros in row-major order; K into
 * *k (device memory). */
int opk_nonzero(int32_t dtype, const void *x, int64_t n, const opk_dims_arg *d,
                int64_t *y, int64_t *k, void *stream);

/* Compress: the slices i < min(nc, len) of x [outer, len, inner] whose
 * cond[i] (bool) is true, into y [outer, K, inner] densely; K into *k
 * (device memory). */
int opk_compress(int32_t esize, const void *x, const void *cond, int64_t nc, int64_t len,
                 int64_t outer, int64_t inner, void *y, int64_t *k, void *stream);

/* Unique (move.cu): x viewed as [outer, m, inner], m items of outer runs of
 * inner elements; unique.c's outputs (yi, yinv, ycnt, y densely with the
 * true K) and K into *k (device memory). ws: 4 int64 an item. */
typedef struct opk_unique_args {
    int32_t dtype, esize, sorted;
    int64_t m, outer, inner;
    const void *x;
    void *y;
    int64_t *yi, *yinv, *ycnt, *k, *ws;
} opk_unique_args;
int opk_unique(const opk_unique_args *u, void *stream);

/* NonMaxSuppression (nms.cu): nms.c's selection for boxes [batches, boxes,
 * 4] and scores [batches, classes, boxes]; y holds `slot` rows of 3 for
 * each (batch, class), and gets the rows densely with K into *k (device
 * memory). The optional inputs (device memory, NULL when absent) win over
 * the fields. ws: 4 bytes per 32 boxes for each (batch, class) run at
 * once, at least one. */
typedef struct opk_nms_args {
    const float *x_boxes, *x_scores;
    const int64_t *max_out_in;
    const float *iou_in, *score_th_in;
    int64_t batches, classes, boxes, slot, max_out;
    float iou, score_th;
    int32_t center, has_score_th;
    int64_t *y, *k;
} opk_nms_args;
int opk_nms(const opk_nms_args *a, void *ws, int64_t ws_bytes, void *stream);

/* ConvTranspose (convt.cu): Y [N, M, out...] from X [N, C, in...], W [C,
 * Mg, k...] and B [M] (may be NULL), groups of Cg input and Mg output
 * channels; Y at o gathers X at i where o = i s - pb + k dil. ivol: X's
 * spatial volume, kvol: the kernel's. dtype float32 or float16 (sums in
 * double, rounded once). */
#define OPK_CT_MAX_SP 6
typedef struct opk_convt_args {
    int32_t dtype, ns;
    int64_t C, M, Cg, Mg;
    int64_t in[OPK_CT_MAX_SP], out[OPK_CT_MAX_SP], k[OPK_CT_MAX_SP];
    int64_t s[OPK_CT_MAX_SP], dil[OPK_CT_MAX_SP], pb[OPK_CT_MAX_SP];
    int64_t ivol, kvol, n;
    const void *x, *w, *b;
    void *y;
} opk_convt_args;
int opk_conv_transpose(const opk_convt_args *a, void *stream);

/* Resize (resize.cu): the plan's tables (resize_taps.h; pointers into
 * device memory) filled on the device, keep_aspect_ratio_policy's scale
 * from sizes there when the plan says so; a 16-bit X interpolated through
 * xf (x_count floats of room); y has n elements. planes: every axis but the
 * last two maps each index to itself (a linear or cubic mode), so outputs
 * go by rows of planes; the same bits. */
struct rs_plan;
int opk_resize(const struct rs_plan *pl, const void *sizes, int32_t sizes_dtype,
               int32_t dtype, int32_t esize, const void *x, float *xf, int64_t x_count,
               void *y, int64_t n, int planes, void *stream);

/* ---- pools, reductions, scans, selection, normalizations -------------
 *
 * pool.cu, reduce.cu, pow.cu and norm.cu: each the CPU kernel's semantics
 * (the op's view, ops_views.h, gives the geometry, axes and flags), one
 * thread per output element or line in the CPU's order of operations (a
 * block per group for Instance- and GroupNormalization's statistics), so
 * results match it bit for bit where the CPU's order is the only one
 * (maxima, integer sums, the float32 sums of pools and scans) and to
 * rounding in double elsewhere. Nothing is launched when there is nothing
 * to write. */

#define OPK_MAX_SP_POOL (OPK_MAX_RANK - 2)

/* MaxPool, AveragePool, LpPool and the global ones (pool.c): x [planes,
 * ivol] to y [planes, ovol] (and idx, int64 or NULL: MaxPool's Indices).
 * kind 0 max, 1 mean, 2 p-norm; fast: cpu_pool2d_rows' arithmetic (a max
 * starting from lowest, a float32 mean), else pool_window's. dtype
 * float32, float16, bfloat16, int8 or uint8 (max only). */
typedef struct opk_pool_args {
    int32_t dtype, kind, p, with_pad, fast, ns;
    int64_t in[OPK_MAX_SP_POOL], k[OPK_MAX_SP_POOL], out[OPK_MAX_SP_POOL];
    int64_t s[OPK_MAX_SP_POOL], d[OPK_MAX_SP_POOL], pb[OPK_MAX_SP_POOL],
        pe[OPK_MAX_SP_POOL];
    int64_t ostr[OPK_MAX_SP_POOL];
    int64_t planes, ivol, ovol;
    float lowest;
    const void *x;
    void *y;
    int64_t *idx;
} opk_pool_args;
int opk_pool(const opk_pool_args *a, void *stream);

/* The Reduce ops (reduce.c) over X merged into m runs (d[k] elements,
 * red[k] reduced): kind an RD_* (ops_views.h), in_double the CPU's choice
 * of accumulator; empty: X has no elements (every output the initial
 * value); count the elements of each output's set. y has `nout`
 * elements of x's dtype. */
typedef struct opk_reduce_args {
    int32_t dtype, kind, in_double, empty, m;
    int64_t d[OPK_MAX_RANK];
    int32_t red[OPK_MAX_RANK];
    int64_t count, nout;
    const void *x;
    void *y;
} opk_reduce_args;
int opk_reduce(const opk_reduce_args *a, void *stream);

/* ArgMax (is_min 0) / ArgMin of x [outer, n, inner] along n into y
 * [outer, inner] int64; argmax.c's rule for ties (last: the last) and NaN. */
int opk_argmax(int32_t dtype, const void *x, int64_t *y, int64_t outer, int64_t n,
               int64_t inner, int32_t is_min, int32_t last, void *stream);

/* CumSum of x [outer, n, inner] along n (cumsum.c: float32 running sums,
 * integers in int64 wrapping). dtype float32, float16, bfloat16, int32,
 * int64. */
int opk_cumsum(int32_t dtype, const void *x, void *y, int64_t outer, int64_t n,
               int64_t inner, int32_t exclusive, int32_t reverse, void *stream);

/* Hardmax of x [outer, n, inner] along n: 1 at the first maximum (the
 * first NaN wins), 0 elsewhere. Float dtypes. */
int opk_hardmax(int32_t dtype, const void *x, void *y, int64_t outer, int64_t n,
                int64_t inner, void *stream);

/* TopK: the K best of each line of x [outer, n, inner] (largest or
 * smallest; NaN above every number; equal keys by index) into values
 * [outer, K, inner] (x's dtype) and indices (int64), best first. */
int opk_topk(int32_t dtype, const void *x, void *values, int64_t *indices, int64_t outer,
             int64_t n, int64_t inner, int64_t K, int32_t largest, void *stream);

/* Pow (pow.c) over b's walk (2 inputs: X of dtype xt, a float dtype, and
 * Y of dtype yt, any numeric one); y has n elements of xt. */
int opk_pow(int32_t xt, int32_t yt, const opk_bcast *b, const void *x, const void *e,
            void *y, int64_t n, void *stream);

/* The normalizations of norm.c; parameters are read in their own dtypes
 * (pdt[k] for input k, 1..4). X as [N, C, sp]. */
typedef struct opk_norm_args {
    int32_t dtype, kind; /* kind: ops_views.h's OPV_NORM_* */
    int32_t pdt[5];
    float epsilon;
    int64_t N, C, sp, per, G, cg;
    int32_t per_group, p;
    int64_t outer, n, inner; /* LpNormalization */
    const void *x;
    const void *par[5]; /* BatchNormalization: scale, B, mean, var at 1..4 */
    void *y;
    /* Fused activation (op_act.h), applied to each value before it is
     * stored, as opk_conv_args's. */
    int32_t act;
    float act_alpha, act_beta;
} opk_norm_args;
int opk_norm(const opk_norm_args *a, void *stream);

/* ---- Shrink, LRN, ReverseSequence, MaxUnpool (misc.cu) --------------- */

/* Shrink: x < -lambd ? x + bias : x > lambd ? x - bias : 0, integers in
 * double, truncated and saturated (shrink.c). */
int opk_shrink(int32_t dtype, const void *x, void *y, int64_t n, float lambd, float bias,
               void *stream);
/* LRN over x [N, C, inner] (lrn.c's window and arithmetic). */
int opk_lrn(int32_t dtype, const void *x, void *y, int64_t N, int64_t C, int64_t inner,
            int32_t size, float alpha, float beta, float bias, void *stream);
/* ReverseSequence over x [B, T, inner] (batch_axis 0) or [T, B, inner]
 * (1); lengths (int32 or int64, device data) clamped to [0, T]. */
int opk_reverse_sequence(int32_t esize, const void *x, const void *lens,
                         int32_t lens_dtype, void *y, int32_t batch_axis, int64_t B,
                         int64_t T, int64_t inner, void *stream);
/* MaxUnpool: y (dims yd) zeros but x[j] at frame element idx[j], placed at
 * y's origin, the last j winning; indices outside the frame skipped. ws:
 * 8 bytes per element of y. */
int opk_max_unpool(int32_t esize, const void *x, const int64_t *idx, int64_t n,
                   const opk_dims_arg *frame, const opk_dims_arg *yd, void *y, void *ws,
                   void *stream);
/* GridSample and RoiAlign (sample.cu): every one of the n output elements
 * by sample.h's element functions; y of dtype ydt (GridSample) or X's. */
struct opk_gs_params;
struct opk_roi_params;
int opk_grid_sample(const struct opk_gs_params *p, const void *x, const void *grid,
                    void *y, int32_t ydt, int64_t n, void *stream);
int opk_roi_align(const struct opk_roi_params *p, const void *x, const void *rois,
                  const void *bidx, void *y, int64_t n, void *stream);

/* LSTM, GRU and RNN (rnn.cu): one direction's pointers and rules (rnn.h's
 * rnn_desc; kind 0 RNN, 1 GRU, 2 LSTM; act[] RNN_ACT_* codes). xw [T B rows
 * in X's order, G H] (X W^T, rnn_cuda.c's cuBLAS product); r the
 * direction's R [G H, H]; hr [B, G H]; h, c, tmp [B, H]; bias, lens, h0,
 * c0, p, y, yh, yc may be NULL. */
typedef struct opk_rnn_args {
    int32_t kind, G, D, dir, rev, layout, lbr, input_forget, has_clip, per;
    float clip;
    int32_t act[6];
    float alpha[6], beta[6];
    int64_t T, B, H;
    const float *xw, *r, *bias, *h0, *c0, *p;
    const int32_t *lens;
    float *hr, *h, *c, *tmp, *y, *yh, *yc;
} opk_rnn_args;
/* The per-step path, between rnn_cuda.c's products H R^T into hr. */
/* h and c from h0 and c0 (0 where absent). */
int opk_rnn_init(const opk_rnn_args *a, void *stream);
/* Step s's gates and state (phase 0, and for GRU without
 * linear_before_reset phase 1 after the product of r H). */
int opk_rnn_step(const opk_rnn_args *a, int64_t s, int32_t phase, void *stream);
/* Y_h and Y_c from the final state (0 for a length of 0). */
int opk_rnn_final(const opk_rnn_args *a, void *stream);
/* The persistent path: every step of the nb (1 or 2) directions a[0..nb)
 * in one launch. Where a direction's R fits one block's shared memory,
 * independent warps (H at most 64) or blocks of a few batch entries each,
 * holding R and h in shared memory; else a cooperative launch (CUDA >= 12) of blocks that
 * each keep R's rows of their hidden units in shared memory (hr serves as
 * h's second buffer) and synchronize through the grid. *ran 0, nothing launched:
 * the path does not fit (R's slice past the shared memory, no cooperative
 * launch, a grid that cannot be co-resident), the per-step path must run.
 * The device's limits are read once. */
int opk_rnn_persist(const opk_rnn_args *a, int32_t nb, int32_t *ran, void *stream);

/* ---- quantization (quant.cu; quant.h's element code) ------------------ */

/* QuantizeLinear over x [outer, ch, inner] (xdt a float dtype), the scale
 * (sdt) and zero point (zdt; zp NULL: 0) element c applying to [:, c, :];
 * y int8, uint8 or an 8-bit float (ydt: x / scale converted with
 * `saturate`, the zero point not read). Scales and zero points are device
 * data. */
int opk_quantize(int32_t xdt, const void *x, int32_t sdt, const void *scale, int32_t zdt,
                 const void *zp, int32_t ydt, void *y, int64_t n, int64_t ch,
                 int64_t inner, int saturate, void *stream);
/* DequantizeLinear likewise: x int8, uint8, int32 or an 8-bit float (whose
 * zero point is not read); y of the scale's dtype. */
int opk_dequantize(int32_t xdt, const void *x, int32_t sdt, const void *scale,
                   int32_t zdt, const void *zp, void *y, int64_t n, int64_t ch,
                   int64_t inner, void *stream);
/* DynamicQuantizeLinear: scale and zp (device scalars) from x's range, then
 * y. */
int opk_dynamic_quantize(const float *x, int64_t n, uint8_t *y, float *scale, uint8_t *zp,
                         void *stream);
/* QLinearAdd (mul 0) or QLinearMul (1) of a and c over b's walk (2 inputs),
 * int8 or uint8 (dtype); every scale and zero point one value of device
 * data (zc NULL: 0). */
int opk_qlinear(int32_t mul, int32_t dtype, const opk_bcast *b, const void *a,
                const void *c, const float *sa, const void *za, const float *sb,
                const void *zb, const float *sc, const void *zc, void *y, int64_t n,
                void *stream);
/* LookupTable8: y[j] = table[x[j]] for j < n, the 256-byte table from the
 * host (passed by value with the launch). */
int opk_lut8(const uint8_t *table, const uint8_t *x, uint8_t *y, int64_t n, void *stream);

/* ---- the integer products (qgemm.cu) ------------------------------------ */

/* MatMulInteger, QLinearMatMul (conv 0) and ConvInteger, QLinearConv
 * (conv 1), qlinear.h's definitions: a thread per output element sums
 * (a - a_zp)(b - b_zp) in int32 (wrapping, as the CPU), then adds the bias
 * and requantizes (out OPK_Q_U8 / OPK_Q_I8) or stores the sum (OPK_Q_I32).
 * Zero points have their tensor's dtype (a_dtype, b_dtype), one value or
 * per row (a, MatMulInteger) and per column / output channel (b); scales
 * are float32 on the device. */
enum { OPK_Q_I32, OPK_Q_U8, OPK_Q_I8 };
typedef struct opk_qgemm_args {
    int32_t conv, out;
    int32_t a_dtype, b_dtype;
    const void *a, *b, *a_zp, *b_zp, *y_zp;
    int64_t a_nzp, b_nzp, b_nscale;
    const float *a_scale, *b_scale, *y_scale;
    const int32_t *bias;
    void *y;
    /* products: the output batch of brank dims, each A's and B's offset in
     * matrices a stride per dim (0 where broadcast) */
    int64_t M, N, K;
    int32_t brank;
    int64_t bdims[OPK_MAX_RANK], astr[OPK_MAX_RANK], bstr[OPK_MAX_RANK];
    /* convolutions */
    int32_t ns;
    int64_t n_img, C, Mc, Cg, Mg;
    int64_t in[OPK_MAX_SP], k[OPK_MAX_SP], o[OPK_MAX_SP];
    int64_t s[OPK_MAX_SP], d[OPK_MAX_SP], pb[OPK_MAX_SP];
    int64_t ivol, kvol, ovol;
    int64_t count; /* output elements */
} opk_qgemm_args;
int opk_qgemm(const opk_qgemm_args *a, void *stream);
/* DynamicQuantizeMatMul's and MatMulIntegerToFloat's epilogue
 * (qmatmul_float.c): y = c32 (rows x N int32 sums) as float times
 * a_scale[0] b_scale[j or 0] (b_nscale values), plus bias[j] (or not),
 * then act (MatMul's MM_ACT_*: 0 none, 1 Relu, 2 Gelu). */
int opk_qmf_epilogue(const int32_t *c32, const float *a_scale, const float *b_scale,
                     int64_t b_nscale, const float *bias, int32_t act, float *y,
                     int64_t rows, int64_t N, void *stream);
/* ConvInteger and QLinearConv (conv 1, 1 or 2 spatial dims) as an
 * implicit GEMM on the int8 tensor cores (mma.sync, sm_80 and later): the
 * same bytes as opk_qgemm. The caller checks the grid: ceil(N x ovol / 64)
 * below 2^31, ceil(Mg / 32) and the groups at most 65535.
 * opk_qconv_mma_ok: 1 when this device runs the kernel (else a stub). */
int opk_qconv_mma(const opk_qgemm_args *a, void *stream);
int opk_qconv_mma_ok(void);

/* The same products through cuBLASLt's int8 kernels (qgemm_cuda.c): A and
 * B re-signed to int8 (a uint8 side xor 0x80, its zero point less 128, as
 * the CPU's kernels flip the top bit) with A's row sums and B's column
 * sums, B transposed to N x K (cuBLASLt's "TN" form); cuBLASLt's exact
 * int32 product P; then the epilogue sum = P - beta_j RA_i - alpha_i CB_j
 * + K alpha_i beta_j (alpha, beta the re-signed zero points, wrapping as
 * the CPU), the bias and q's requantization, over rows r0 .. r0 + rc of
 * A's `rows` (its batch stacked; B one matrix). */
typedef struct opk_qlt_args {
    opk_qgemm_args q; /* M, N, K of one matrix; zero points, scales, y */
    int64_t rows;
    int8_t *a8, *b8t;
    int32_t *rowsum, *colsum; /* colsum zeroed by opk_qlt_prepare */
    const int32_t *c32;       /* the block's P, rc x N */
    int64_t r0, rc;
} opk_qlt_args;
int opk_qlt_prepare(const opk_qlt_args *a, void *stream);
int opk_qlt_epilogue(const opk_qlt_args *a, void *stream);

/* Attention (attention.c's semantics; attention.cu): one block per
 * (batch, head, tile of 4-16 queries), keys and values through shared
 * memory in tiles, the softmax online in float32; D and Dv up to
 * OPK_ATTN_MAX_D. Strides as attn_geom's; kt: K given as K^T; the mask is
 * bool (mask_dtype PRT_BOOL), a float dtype, or absent (mask NULL). */
#define OPK_ATTN_MAX_D 128
typedef struct opk_attention_args {
    int32_t dtype, mask_dtype;
    int64_t B, Hq, Hkv, Sq, Skv, D, Dv;
    int64_t q[3], k[3], v[3], y[3], m[4], mlen;
    float scale, softcap;
    int32_t causal, kt, empty_zero;
    const void *Q, *K, *V, *mask;
    void *Y;
} opk_attention_args;
int opk_attention(const opk_attention_args *a, void *stream);

/* ---- the signal ops (signal.cu) ---------------------------------------- */

/* A window of n points (ops_signal.h: signal_window_params's c). */
int opk_window(int32_t dtype, void *y, int64_t n, const double *c, int32_t periodic,
               void *stream);
/* MelWeightMatrix [R, M]; dft_length (len_value where len is NULL: a shape
 * input in host memory), sample_rate (idt) and the edges (fdt) are device
 * scalars. */
int opk_mel_weight(int32_t dtype, void *y, int64_t R, int64_t M, const void *len,
                   int64_t len_value, const void *rate, int32_t idt, const void *lo,
                   const void *hi, int32_t fdt, void *stream);
/* DFT's layout (ops_signal.h's signal_dft_geom; len used when the device
 * length is NULL). */
typedef struct opk_dft_geom {
    int64_t outer, axis_len, inner, comps, len, bins;
    int32_t inverse;
} opk_dft_geom;
int opk_dft(int32_t dtype, const void *x, void *y, const opk_dft_geom *g, const void *len,
            int32_t len_dtype, void *stream);
/* STFT's (signal_stft_geom); frame_step a device scalar or g->step (step
 * NULL: a shape input in host memory), the frame length likewise or g->len
 * (len NULL); w the window or NULL. DFT's length likewise. */
typedef struct opk_stft_geom {
    int64_t batch, samples, comps, frames, len, bins, step;
} opk_stft_geom;
int opk_stft(int32_t dtype, const void *x, const void *w, void *y, const opk_stft_geom *g,
             const void *step, int32_t step_dtype, const void *len, int32_t len_dtype,
             void *stream);

/* ---- the losses, MeanVarianceNormalization, Det (loss.cu) ---------------- */

/* Their parameters (loss_elem.h). */
struct opk_loss_params;
struct opk_mvn_params;
/* NegativeLogLikelihoodLoss over x (p's view; weight NULL or [C] of
 * p->wdt): the terms into y (ydt) with reduction none, else their
 * reduction, one block summing in double. A target outside [0, C) counts
 * as ignored. */
int opk_nll_loss(const struct opk_loss_params *p, const void *x, const void *target,
                 const void *weight, void *y, int32_t ydt, void *stream);
/* SoftmaxCrossEntropyLoss's log-softmax over C: lp (float32, x's elements)
 * and, when y is not NULL, log_prob y of ydt. */
int opk_sce_log_softmax(const struct opk_loss_params *p, const void *x, float *lp,
                        void *y, int32_t ydt, void *stream);
/* MeanVarianceNormalization: a block per group. */
int opk_mvn_norm(const struct opk_mvn_params *p, const void *x, void *y, void *stream);
/* Det of `batch` m x m matrices of x into y (ydt); ws: 8 bytes per element
 * of x. */
int opk_det_batch(int32_t dtype, const void *x, void *y, int32_t ydt, int64_t batch,
                  int64_t m, void *ws, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* PLUGRT_OPS_CUDA_LAUNCH_H */
