/*
 * The elementwise, unary and reduction built-ins (issue 8): their creators
 * and the few helpers their files share (ew_common.c). Internal to
 * libplugrt; builtins.c lists the creators.
 *
 *   binary.c       Add Sub Mul Div Mod Max Min Sum Mean BitShift PRelu
 *   pow.c          Pow (base and exponent of different dtypes)
 *   compare.c      Equal Less LessOrEqual Greater GreaterOrEqual And Or Xor
 *                  Not IsNaN IsInf
 *   unary.c        Relu Identity Abs Neg Sign
 *   unary_math.c   the float functions: Exp Log Sqrt ... Erf Tanh Sigmoid
 *                  Gelu Mish, and the activations with parameters (Elu,
 *                  Selu, Celu, LeakyRelu, ThresholdedRelu, HardSigmoid,
 *                  HardSwish)
 *   clip.c         Clip
 *   cast.c         Cast CastLike
 *   dropout.c      Dropout
 *   reduce.c       ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd
 *                  ReduceL1 ReduceL2 ReduceSumSquare ReduceLogSum
 *                  ReduceLogSumExp
 *   argmax.c       ArgMax ArgMin
 *   cumsum.c       CumSum
 *   topk.c         TopK
 */
#ifndef PLUGRT_OPS_OPS_EW_H
#define PLUGRT_OPS_OPS_EW_H

#include <string.h>

#include "ops/ew_kinds.h"
#include "ops/op_common.h"

/* ---- creators -------------------------------------------------------------- */

extern const prt_plugin_creator op_mod_creator;
extern const prt_plugin_creator op_max_creator;
extern const prt_plugin_creator op_min_creator;
extern const prt_plugin_creator op_sum_creator;
extern const prt_plugin_creator op_mean_creator;
extern const prt_plugin_creator op_bit_shift_creator;
extern const prt_plugin_creator op_prelu_creator;
extern const prt_plugin_creator op_pow_creator;
extern const prt_plugin_creator op_less_creator;
extern const prt_plugin_creator op_less_or_equal_creator;
extern const prt_plugin_creator op_greater_creator;
extern const prt_plugin_creator op_or_creator;
extern const prt_plugin_creator op_xor_creator;
extern const prt_plugin_creator op_not_creator;
extern const prt_plugin_creator op_is_inf_creator;
extern const prt_plugin_creator op_abs_creator;
extern const prt_plugin_creator op_neg_creator;
extern const prt_plugin_creator op_sign_creator;
extern const prt_plugin_creator op_clip_creator;
extern const prt_plugin_creator op_cast_like_creator;
extern const prt_plugin_creator op_dropout_creator;
extern const prt_plugin_creator op_argmax_creator;
extern const prt_plugin_creator op_argmin_creator;
extern const prt_plugin_creator op_cumsum_creator;
extern const prt_plugin_creator op_topk_creator;

/* unary_math.c (Erf, Tanh, HardSigmoid and HardSwish are declared with
 * the older built-ins, in math_ops.h and op_common.h). */
extern const prt_plugin_creator op_exp_creator;
extern const prt_plugin_creator op_log_creator;
extern const prt_plugin_creator op_sqrt_creator;
extern const prt_plugin_creator op_reciprocal_creator;
extern const prt_plugin_creator op_floor_creator;
extern const prt_plugin_creator op_ceil_creator;
extern const prt_plugin_creator op_round_creator;
extern const prt_plugin_creator op_sin_creator;
extern const prt_plugin_creator op_cos_creator;
extern const prt_plugin_creator op_tan_creator;
extern const prt_plugin_creator op_asin_creator;
extern const prt_plugin_creator op_acos_creator;
extern const prt_plugin_creator op_atan_creator;
extern const prt_plugin_creator op_sinh_creator;
extern const prt_plugin_creator op_cosh_creator;
extern const prt_plugin_creator op_asinh_creator;
extern const prt_plugin_creator op_acosh_creator;
extern const prt_plugin_creator op_atanh_creator;
extern const prt_plugin_creator op_sigmoid_creator;
extern const prt_plugin_creator op_softplus_creator;
extern const prt_plugin_creator op_softsign_creator;
extern const prt_plugin_creator op_mish_creator;
extern const prt_plugin_creator op_gelu_creator;
extern const prt_plugin_creator op_elu_creator;
extern const prt_plugin_creator op_selu_creator;
extern const prt_plugin_creator op_celu_creator;
extern const prt_plugin_creator op_leaky_relu_creator;
extern const prt_plugin_creator op_thresholded_relu_creator;

/* reduce.c */
extern const prt_plugin_creator op_reduce_sum_creator;
extern const prt_plugin_creator op_reduce_mean_creator;
extern const prt_plugin_creator op_reduce_max_creator;
extern const prt_plugin_creator op_reduce_min_creator;
extern const prt_plugin_creator op_reduce_prod_creator;
extern const prt_plugin_creator op_reduce_l1_creator;
extern const prt_plugin_creator op_reduce_l2_creator;
extern const prt_plugin_creator op_reduce_sum_square_creator;
extern const prt_plugin_creator op_reduce_log_sum_creator;
extern const prt_plugin_creator op_reduce_log_sum_exp_creator;

/* ---- helpers (ew_common.c) ------------------------------------------------- */

/* Elements a kernel converts at a time into a buffer on its stack (a half
 * float row as float32, an integer row as int64). */
#define EW_CHUNK 256

/* The numeric dtypes (every dtype but bool) and the float ones with
 * bfloat16. */
#define EW_DT_FLOATS (OP_DT_FLOAT | OP_DT(PRT_BFLOAT16))
#define EW_DT_INTS                                                                       \
    (OP_DT(PRT_INT8) | OP_DT(PRT_UINT8) | OP_DT(PRT_INT32) | OP_DT(PRT_INT64))
#define EW_DT_NUMERIC (EW_DT_FLOATS | EW_DT_INTS)

/* Output dims = input 0's (shapes and infer of the ops that keep them). */
prt_status ew_same_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                          prt_dim_exprs *out, prt_expr_builder *eb);
prt_status ew_same_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                         prt_dims *out);

/* float32, float16 or bfloat16. */
int ew_is_float(int32_t dtype);

/* The element counts of d before dim `axis` (outer) and after it (inner):
 * the view [outer, d[axis], inner] of the ops along one axis. */
void ew_axis_split(const prt_dims *d, int32_t axis, int64_t *outer, int64_t *inner);

/* n elements spaced `stride` apart (0: one element repeated) of a float32,
 * float16 or bfloat16 tensor as float32. */
void ew_load_f32(const void *x, int32_t dtype, int64_t stride, int64_t n, float *dst);
/* The same for any numeric dtype (bool as 0/1), as double: exact. */
void ew_load_f64(const void *x, int32_t dtype, int64_t stride, int64_t n, double *dst);
/* The same for an integer dtype (or bool), as int64: exact. */
void ew_load_i64(const void *x, int32_t dtype, int64_t stride, int64_t n, int64_t *dst);
/* Stores n doubles as dtype: floats rounded once to nearest even; integers
 * truncated toward zero and saturated at the dtype's range, NaN as 0; bool
 * as v != 0 (so NaN is true). */
void ew_store_f64(const double *src, int32_t dtype, int64_t n, void *dst);
/* Stores n int64 as an integer dtype (wrapping, two's complement) or bool
 * (v != 0). */
void ew_store_i64(const int64_t *src, int32_t dtype, int64_t n, void *dst);
/* A double as an integer of [lo, hi]: truncated toward zero, saturated, NaN
 * as 0 (Cast's rule for floats to integers). */
int64_t ew_f64_to_int(double v, int64_t lo, int64_t hi);
/* The range of an integer dtype (bool: 0..1). */
void ew_int_range(int32_t dtype, int64_t *lo, int64_t *hi);

/* Axes from a field (nb_field >= 0 values in field[]) or a shape input (its
 * values, which must be constants), for an input of rank r: normalized into
 * [0, r), no repeats, into ax[] with *out_n. Neither given: *out_n = -1.
 * Both given fails. Messages name `what` ("axes", "axis"). */
prt_status ew_const_axes(op_object *o, const int32_t *field, int32_t nb_field,
                         const prt_dim_exprs *sv, int32_t nb_sv, prt_expr_builder *eb,
                         int32_t r, const char *what, int32_t *ax, int32_t *out_n);

/* A string field that must be one of `names` (nb of them): its index into
 * *out, dflt when absent; another value fails naming the field, the value
 * and the accepted ones. */
prt_status ew_field_choice(const op_fields *f, const char *name, const char *const *names,
                           int32_t nb, int32_t dflt, int32_t *out);
/* An integer field that must be 0 or 1 (flags such as keepdims); dflt when
 * absent. */
prt_status ew_field_flag(const op_fields *f, const char *name, int32_t dflt,
                         int32_t *out);

/* ---- what the ops' kernels on other devices read --------------------------
 *
 * Each op's fields (its object) and the rules of its definition that a
 * kernel applies, so that every device's kernel computes what the CPU's
 * does (src/ops/<device>/). */

/* What a row of binary.c's op computes (BIN_R_*, ew_kinds.h). */
int32_t bin_row_kind(const op_object *o);

typedef struct clip_op {
    op_object o;
    int32_t has_min, has_max; /* fields given */
    float min, max;
    int32_t max_only;
} clip_op;

/* Which bound Clip's input k (1 or 2) is: 0 min, 1 max (clip.c). */
int clip_bound_of(const clip_op *c, int32_t k);

typedef struct cmp_op {
    op_object o;
    int32_t detect_positive, detect_negative; /* IsInf */
} cmp_op;

typedef struct um_op {
    op_object o;
    float alpha, beta, gamma;
    int32_t approximate; /* Gelu: index into gelu_modes */
} um_op;

/* Cast's and CastLike's field saturate (cast.c), for a device's kernel. */
int op_cast_saturate(const op_object *o);

/* A float's rank in ascending order as an unsigned integer (its bits, the
 * sign flipped for a positive value and all flipped for a negative one),
 * -0 ranked as 0 (they compare equal); not for NaN. For keys that order
 * (value, index) pairs with one integer comparison (TopK, NonMaxSuppression). */
static inline uint32_t ew_f32_rank(float v)
{
    uint32_t u;
    if (v == 0.0f)
        v = 0.0f;
    memcpy(&u, &v, sizeof u);
    return u ^ (u >> 31 ? UINT32_MAX : 0x80000000u);
}

/* Dropout's mask element: true, or 1 in the mask's dtype, its bytes
 * first (dropout.c). */
uint64_t dropout_one(int32_t mask_dtype);

#endif /* PLUGRT_OPS_OPS_EW_H */
