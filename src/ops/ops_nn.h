/*
 * The normalization, linear and spatial built-ins (internal to libplugrt):
 * their creators, which builtins.c lists, and what the sliding-window ops
 * share (window.c): the ONNX window attributes (auto_pad, dilations,
 * kernel_shape, pads, strides), the output size and padding of each
 * spatial dim, and im2col/col2im. Conv, ConvTranspose and the pools stand
 * on it, so one rule decides every window's geometry.
 *
 * Window rules (ONNX's, for Conv and the pools; ConvTranspose has its own
 * output size and uses only the attributes and col2im). For input size D,
 * kernel K, stride s, dilation d, the dilated kernel is ek = d (K - 1) + 1:
 *  - NOTSET (explicit pads b, e) and VALID (pads 0):
 *    O = floor((D + b + e - ek) / s) + 1, which needs D + b + e >= ek;
 *    with ceil_mode, ceil instead of floor, less one when the last window
 *    would start in the end padding ((O - 1) s >= D + b: PyTorch's rule and
 *    ONNX Runtime's, so that no window holds only padding).
 *  - SAME_UPPER / SAME_LOWER: O = ceil(D / s), total padding
 *    max(0, (O - 1) s + ek - D) split in half, the odd one at the end
 *    (SAME_UPPER) or at the beginning (SAME_LOWER); ceil_mode is ignored.
 */
#ifndef PLUGRT_OPS_OPS_NN_H
#define PLUGRT_OPS_OPS_NN_H

#include "ops/op_act.h"
#include "ops/op_common.h"

extern const prt_plugin_creator op_log_softmax_creator;
extern const prt_plugin_creator op_batch_norm_creator;
extern const prt_plugin_creator op_instance_norm_creator;
extern const prt_plugin_creator op_group_norm_creator;
extern const prt_plugin_creator op_lp_norm_creator;
extern const prt_plugin_creator op_conv_transpose_creator;
extern const prt_plugin_creator op_max_pool_creator;
extern const prt_plugin_creator op_average_pool_creator;
extern const prt_plugin_creator op_lp_pool_creator;
extern const prt_plugin_creator op_global_max_pool_creator;
extern const prt_plugin_creator op_global_lp_pool_creator;
extern const prt_plugin_creator op_resize_creator;

/* Which of Conv's CPU paths (conv.c) a Conv plugin takes for X and W of
 * these dims: "pointwise", "depthwise", "direct" or "im2col"; NULL when
 * `conv` is no built-in Conv or the dims do not fit it. For tests. */
const char *op_conv_path(const prt_plugin *conv, const prt_dims *x, const prt_dims *w);

/* The mean of n > 0 floats and 1 / sqrt(variance + epsilon) (the
 * population variance), in double over two passes, rounded to float32.
 * (norm.c; LayerNormalization's too.) */
void op_norm_stats(const float *x, int64_t n, float epsilon, float *mean, float *inv);

/* ---- sliding windows (window.c) ----------------------------------------- */

#define OP_SP_MAX (PRT_MAX_DIMS - 2) /* spatial dims after N and C */

enum { OP_PAD_NOTSET, OP_PAD_SAME_UPPER, OP_PAD_SAME_LOWER, OP_PAD_VALID };

/* The window attributes as given; nb_*: 0 when absent. */
typedef struct op_window {
    int32_t auto_pad; /* OP_PAD_* */
    int32_t nb_dil, dil[OP_SP_MAX];
    int32_t nb_ks, ks[OP_SP_MAX];
    int32_t nb_pads, pads[2 * OP_SP_MAX]; /* begins, then ends */
    int32_t nb_str, str[OP_SP_MAX];
} op_window;

/* Reads auto_pad, dilations, kernel_shape, pads and strides: values
 * >= 1 (pads >= 0), an even number of pads, no explicit pads with an
 * auto_pad other than NOTSET, and the same number of spatial dims in every
 * array given. */
prt_status op_window_parse(op_object *o, const op_fields *f, op_window *w);
/* Serializes auto_pad into ser[0]; returns 1. */
int32_t op_window_ser_pad(op_window *w, prt_field *ser);
/* Serializes the arrays given (dilations, kernel_shape, pads, strides, in
 * that order) from ser[0]; returns their count. */
int32_t op_window_ser_arrays(op_window *w, prt_field *ser);
/* The arrays given against ns spatial dims of `x` (the input's name). */
prt_status op_window_check_ns(const op_object *o, const op_window *w, int32_t ns,
                              const char *x);
/* Stride and dilation of spatial dim i (1 when not given). */
int64_t op_window_str(const op_window *w, int32_t i);
int64_t op_window_dil(const op_window *w, int32_t i);
/* Explicit pads of spatial dim i of ns (0 unless NOTSET with pads). */
int64_t op_window_pad_begin(const op_window *w, int32_t i, int32_t ns);
int64_t op_window_pad_end(const op_window *w, int32_t i, int32_t ns);

/* X [N, C, D1, ...] of rank r: 3 or more, else an error saying so. */
prt_status op_window_rank(const op_object *o, int32_t r);
/* Conv's and ConvTranspose's ranks: X's (op_window_rank), W's equal to it
 * (`wshape` says what W holds, e.g. "M x C/group x k1 ..."), B's 1 when
 * nb_in is 3, and w's arrays of X's spatial dims. */
prt_status op_conv_check_ranks(const op_object *o, const op_window *w, int32_t nb_in,
                               int32_t rx, int32_t rw, int32_t rb, const char *wshape);
/* kernel_shape, when given, against W's spatial dim i (size k). */
prt_status op_window_check_kernel(const op_object *o, const op_window *w, int32_t i,
                                  int64_t k);
/* Conv's and ConvTranspose's float16 path: the inputs (X, W, optional B)
 * as float32 from `ws` on, *x, *w and *b pointed at them; returns where Y's
 * float32 copy goes, after them. */
float *op_conv_to_f32(const void *const *xs, int32_t dtype, const prt_dims *dims,
                      int32_t nb_in, float *ws, const float **x, const float **w,
                      const float **b);
/* Adds to *n the floats op_conv_to_f32 and Y's copy take for these dims
 * (none unless dtype is float16); 0 on overflow. */
int op_conv_f16_floats(int32_t dtype, const prt_dims *in, int32_t nb_in,
                       const prt_dims *out, int64_t *n);

/* The output size of spatial dim i of ns as an expression of the input
 * size d and kernel size k (the rules above). Fails when both are constants
 * and the padded input is smaller than the dilated kernel. */
prt_status op_window_out_expr(op_object *o, prt_expr_builder *eb, const op_window *w,
                              int32_t i, int32_t ns, const prt_expr *d, const prt_expr *k,
                              int32_t ceil_mode, const prt_expr **out);

/* One concrete window: per spatial dim the input, kernel and output sizes,
 * stride, dilation and padding (pb at the beginning, pe at the end), and
 * the volumes of input, kernel and output. */
typedef struct op_win_geom {
    int32_t ns;
    int64_t in[OP_SP_MAX], k[OP_SP_MAX], out[OP_SP_MAX];
    int64_t s[OP_SP_MAX], d[OP_SP_MAX], pb[OP_SP_MAX], pe[OP_SP_MAX];
    int64_t ivol, kvol, ovol;
} op_win_geom;

/* One concrete Conv or ConvTranspose: batch, channels in and out, groups
 * and the channels of a group, and the window (ConvTranspose's as col2im
 * sees it: in = Y's spatial dims, out = X's). */
typedef struct op_conv_geom {
    op_win_geom w;
    int64_t N, C, M, G, Cg, Mg;
    int direct; /* Conv: 1x1, stride 1, no padding (X is its own im2col) */
} op_conv_geom;
/* Y's dims [N, M, sp...] for g's ns spatial sizes sp. */
void op_conv_out_dims(const op_conv_geom *g, const int64_t *sp, prt_dims *out);

/* The geometry of ns spatial dims of sizes in[] under kernels k[] (the
 * rules above); fails naming the dim when an input is too small. */
prt_status op_window_geom(const op_object *o, const op_window *w, int32_t ns,
                          const int64_t *in, const int64_t *k, int32_t ceil_mode,
                          op_win_geom *g);

/* col[(c * kvol + kpos) * ovol + opos] = x[c][the input position of kernel
 * position kpos in window opos], 0 in the padding, for `channels` channels
 * of ivol elements each. */
void op_im2col(const op_win_geom *g, int64_t channels, const float *x, float *col);
/* 1 when no window reaches padding along the last dim, which
 * op_im2col_panels needs. */
int op_im2col_rows_ok(const op_win_geom *g);
/* op_im2col's rows k0 + [0, channels kvol) of a matrix of K rows, written
 * into the register tiles' panels (op_gemm_pack_panels' layout, 16
 * columns a strip: column p of row k at (p / 16) K 16 + k 16 + p % 16),
 * ovol columns from bp's first; only where op_im2col_rows_ok. */
void op_im2col_panels(const op_win_geom *g, int64_t channels, const float *x, int64_t K,
                      int64_t k0, float *bp);
/* The adjoint: x[c][position] += col[...] for every window element that
 * lies inside x (padding is dropped). x must be initialized. */
void op_col2im(const op_win_geom *g, int64_t channels, const float *col, float *x);

/* ---- what the ops' kernels on other devices read --------------------------
 *
 * Each op's fields (its object) and the rules of its definition that a
 * kernel applies, so that every device's kernel computes what the CPU's
 * does (src/ops/<device>/). */

/* Conv's geometry from concrete input dims, checked (conv.c). */
prt_status conv_geom_of(const op_object *o, const prt_dims *in, int32_t nb_in,
                        op_conv_geom *g);
/* ConvTranspose's geometry for inputs of dims in[] (conv_transpose.c; the
 * window as col2im sees it, above), with its checks. */
prt_status ct_geometry(const op_object *o, const prt_dims *in, int32_t nb_in,
                       op_conv_geom *g);
/* Conv's shape rules for window attributes w and `group` (conv.c), for
 * the ops that share them (ConvInteger, QLinearConv): symbolic output dims
 * and concrete geometry from X, W and, when nb_in is 3, B's dims. */
prt_status op_conv_shapes(op_object *o, const op_window *w, int32_t group,
                          const prt_dim_exprs *in, int32_t nb_in, prt_dim_exprs *out,
                          prt_expr_builder *eb);
prt_status op_conv_geom_make(const op_object *o, const op_window *w, int32_t group,
                             const prt_dims *in, int32_t nb_in, op_conv_geom *g);
/* The geometry of X, W and B alone (nb_in of them, no Z: a tuner's first
 * OP_TUNE_INPUTS inputs), conv.c. */
prt_status conv_geom_core(const op_object *o, const prt_dims *in, int32_t nb_in,
                          op_conv_geom *g);
/* Conv's fused activation (conv.c). */
op_act conv_act(const op_object *o);
/* Fields activation (char: an op_act_name) and activation_params (float32:
 * its alpha, beta), Conv's and the normalizations': *act (OP_ACT_NONE when
 * absent) and params as serialized; errors name the op. */
prt_status op_act_parse(op_object *o, const op_fields *f, op_act *act, float params[2]);
/* The two fields of an activation into ser (0 fields for none); how many. */
int32_t op_act_serialize(const op_act *act, const float params[2], prt_field *ser);
/* 1 when the Conv's last input is the residual Z (Y = act(conv + B + Z)),
 * else 0 (conv.c). */
int32_t conv_residual(const op_object *o);

/* The pieces of the two shapes, from concrete dims. */
typedef struct mm_geom {
    int64_t M, K, N, KB; /* KB: B's K, equal to K once checked */
    prt_dims ba, bb;     /* batch dims of A and B */
} mm_geom;

/* MatMul's pieces of A's and B's dims; the element offset, in matrices,
 * of batch b (row-major over bo) in a batch of dims `dims` broadcast to bo
 * (matmul.c). */
void mm_split(const prt_dims *a, const prt_dims *b, mm_geom *g);

/* MatMul's fused activation (field "activation", the importer's MatMul ->
 * Relu | Gelu): what each element of the product (plus bias) becomes as it
 * is stored. */
enum { MM_ACT_NONE, MM_ACT_RELU, MM_ACT_GELU };
typedef struct mm_op {
    op_object o;
    int32_t act; /* MM_ACT_* */
} mm_op;
/* The field's parse, serialize and schema, for an op whose object is an
 * mm_op (MatMul; DynamicQuantizeMatMul and MatMulIntegerToFloat). */
prt_status mm_act_parse(op_object *o, const op_fields *f);
int32_t mm_act_serialize(op_object *o, prt_field *ser);
extern const prt_field_schema mm_act_schema[1];
int64_t mm_batch_offset(const prt_dims *dims, const prt_dims *bo, int64_t b);
/* MatMul's symbolic and concrete output dims (with its checks) for A and
 * B, and its bias when nb_in is 3 (matmul.c); the integer products share
 * them. */
prt_status mm_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                     prt_dim_exprs *out, prt_expr_builder *eb);
prt_status mm_infer(const op_object *o, const prt_dims *in, int32_t nb_in, prt_dims *out);

typedef struct gemm_op {
    op_object o;
    float alpha, beta;
    int32_t trans_a, trans_b; /* 0 or 1 */
} gemm_op;

/* Gemm's C: its element strides along Y's rows and columns (0 where it is
 * broadcast; gemm.c). */
void gemm_c_strides(const prt_dims *c, int64_t *si, int64_t *sj);
/* A 16-bit Gemm's workspace holds float32 copies of A, B, C and Y (the
 * CPU's layout); the CUDA kernel, which needs only Y and C, starts each at
 * a multiple of this many floats (256 bytes, nn_cuda.c says why), so the
 * workspace has room for that padding too. */
#define GEMM_WS_ALIGN_FLOATS 64

#define ES_EQ_MAX 256 /* bytes of the equation, whitespace included */
#define ES_MAX_OPS 8  /* OP_MAX_INPUTS was 8; the CUDA kernel's OPK_MAX_OPERANDS */
#define ES_MAX_LETTERS 52

typedef struct einsum_op {
    op_object o;
    char equation[ES_EQ_MAX]; /* as given (serialized back) */
    int32_t eq_len;
    int32_t nb_ops;
    int32_t rank[ES_MAX_OPS];
    /* Letter ids per operand dim. Ids 0..out_rank-1 are the output's
     * letters in output order; the summed letters follow. */
    int8_t label[ES_MAX_OPS][PRT_MAX_DIMS];
    int32_t nb_letters;
    int32_t out_rank;
    char letter[ES_MAX_LETTERS]; /* id -> character, for messages */
    /* The equation has '...' (ellipsis): labels are made when the inputs'
     * ranks are first known (get_output_shapes), which rewrites the
     * equation with letters in their place; that form is serialized. */
    int32_t ellipsis;
} einsum_op;

/* The size of every letter of Einsum's equation from concrete dims; fails
 * on a mismatch (einsum.c). */
prt_status es_letter_sizes(const einsum_op *e, const prt_dims *in, int32_t nb_in,
                           int64_t *size);

/* Softmax's and LogSoftmax's op_class.kind; the rows of x (dims d) viewed
 * as [outer, n, inner], each row n elements spaced inner apart
 * (softmax.c). */
enum { SOFTMAX, LOG_SOFTMAX }; /* op_class.kind */
prt_status softmax_view(const op_object *o, const prt_dims *d, int64_t *outer, int64_t *n,
                        int64_t *inner);

typedef struct ln_op {
    op_object o;
    int32_t axis;
    float epsilon;
    int32_t stash_type;
    int32_t nb_outputs;
} ln_op;

/* LayerNormalization (layer_norm.c): output `index`'s dtype (X's, then
 * stash_type's); the axis for rank r; the elements of x's normalized dims
 * (-1 on overflow or a bad axis). */
int32_t ln_out_dtype_n(const op_object *o, const int32_t *types, int32_t nb_in,
                       int32_t index);
prt_status ln_axis(const op_object *o, int32_t r, int32_t *out);
int64_t ln_norm_size(const op_object *o, const prt_dims *x);

/* SkipLayerNormalization (skip_layer_norm.c). */
typedef struct sln_op {
    op_object o;
    float epsilon;
    int32_t nb_outputs;
} sln_op;

/* Resize (resize.c): a run's taps for X in[0] and output dims yd, with the
 * checks the output's dims rely on; sizes: input 1's values on the host,
 * or NULL where they are device data (keep_aspect_ratio_policy's scale is
 * then the device's to compute). rs_plan_place points the tables into ws
 * (the op's workspace) and returns what follows them (room for X as
 * float32 when a 16-bit X is interpolated). */
struct rs_plan;
prt_status rs_plan_make(const op_object *o, const prt_tensor_desc *in, int32_t nb_in,
                        const prt_dims *yd, const void *sizes, struct rs_plan *pl);
void *rs_plan_place(struct rs_plan *pl, void *ws);

/* ---- LRN (lrn.c) and MaxUnpool (max_unpool.c) ---------------------------- */
extern const prt_plugin_creator op_lrn_creator;
extern const prt_plugin_creator op_max_unpool_creator;
/* LRN's fields. */
void lrn_params(const op_object *o, int32_t *size, float *alpha, float *beta,
                float *bias);
/* MaxUnpool's frame (max_unpool.c says which) for X, I and Y of these dims,
 * with the shape checks the kernels rely on (I of X's dims, Y of X's rank
 * and at least the frame in every dim). */
prt_status max_unpool_frame(const op_object *o, const prt_dims *x, const prt_dims *idx,
                            const prt_dims *y, prt_dims *frame);
/* Flat element f of the frame as an element of y (the frame at y's origin). */
int64_t max_unpool_place(const prt_dims *frame, const prt_dims *y, int64_t f);
/* GridSample and RoiAlign (sample.c): a run's parameters for sample.h's
 * element functions (in: the run's inputs; yd: GridSample's output dims). */
extern const prt_plugin_creator op_grid_sample_creator;
extern const prt_plugin_creator op_roi_align_creator;
struct opk_gs_params;
struct opk_roi_params;
void gs_params_of(const op_object *o, const prt_tensor_desc *in, const prt_dims *yd,
                  struct opk_gs_params *p);
void roi_params_of(const op_object *o, const prt_tensor_desc *in,
                   struct opk_roi_params *p);

/* Attention (attention.c; issue 24): its fields, read by each device's
 * kernel. */
extern const prt_plugin_creator op_attention_creator;
typedef struct attn_op {
    op_object o;
    int32_t is_causal;
    int32_t q_num_heads, kv_num_heads;
    float scale; /* 0: 1 / sqrt(head size) */
    float softcap;
    int32_t softmax_precision, qk_mode; /* accepted, unused */
    int32_t k_transposed;
    int32_t empty_rows_zero;
} attn_op;

/* Everything a kernel needs to find a head's rows. */
typedef struct attn_geom {
    int64_t B, Hq, Hkv, Sq, Skv, D, Dv;
    /* Element offsets: batch, head, row strides of Q, K, V, Y (a row is
     * contiguous: D, D or Dv elements); K^T's row is a key dim. */
    int64_t q[3], k[3], v[3], y[3];
    /* The mask: strides over (b, h, i, j) (0 where broadcast) and its
     * last dim (keys past it are masked). */
    int64_t m[4], mlen;
} attn_geom;

/* Checks Attention's input dims (nb_in of them) and fills g; an error
 * naming the problem otherwise. */
prt_status attn_geometry(const op_object *o, const prt_dims *in, int32_t nb_in,
                         attn_geom *g);

#endif /* PLUGRT_OPS_OPS_NN_H */
