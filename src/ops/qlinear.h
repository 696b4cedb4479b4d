/*
 * The integer products (internal to libplugrt): MatMulInteger and
 * QLinearMatMul (qmatmul.c), ConvInteger and QLinearConv (qconv.c), ONNX's
 * operators over 8-bit tensors with int32 sums. What the four share and
 * what other devices' kernels read (qlinear_common.c): where each input sits,
 * the checks on zero points and scales, and their values.
 *
 * Names: "a" is the activation (A, or Conv's X), "b" the weights (B, or
 * W). Zero points have their tensor's dtype (uint8 or int8). Sizes
 * accepted (ONNX's, as ONNX Runtime takes them):
 *  - a's zero point: one value; MatMulInteger also one per row of A (M
 *    values, whatever the shape: [M] or [M, 1]), shared by the batch;
 *  - b's zero point and scale: one value, or one per column of B (N
 *    values) for the products, per output channel (M values) for the
 *    convolutions;
 *  - a's scale, y's scale and zero point: one value;
 *  - QLinearConv's bias: int32, one per output channel.
 * Requantization (QLinear*): y = saturate(rint(sum * (a_scale b_scale /
 * y_scale)) + y_zp), the multiplier in float32 as written (ONNX Runtime's),
 * rint half to even, saturated to y's dtype (y_zero_point's).
 */
#ifndef PLUGRT_OPS_QLINEAR_H
#define PLUGRT_OPS_QLINEAR_H

#include "ops/op_common.h"

extern const prt_plugin_creator op_matmul_integer_creator;
extern const prt_plugin_creator op_qlinear_matmul_creator;
extern const prt_plugin_creator op_conv_integer_creator;
extern const prt_plugin_creator op_qlinear_conv_creator;
/* qmatmul_float.c: the products with float outputs (ORT's com.microsoft
 * ops), kinds QMF_DYNAMIC and QMF_INTEGER. */
extern const prt_plugin_creator op_dynamic_quantize_matmul_creator;
extern const prt_plugin_creator op_matmul_integer_to_float_creator;
enum { QMF_DYNAMIC = 16, QMF_INTEGER };

/* op_class.kind of the four. */
enum { QL_MATMUL_INTEGER, QL_QLINEAR_MATMUL, QL_CONV_INTEGER, QL_QLINEAR_CONV };

/* Input positions of an op's parts, -1 for one it has not (a zero point
 * left off, the bias, the scales of the *Integer ops). */
typedef struct ql_inputs {
    int32_t kind;
    int32_t a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, bias;
} ql_inputs;

/* The positions for o's kind and nb_in inputs. */
void ql_inputs_of(const op_object *o, int32_t nb_in, ql_inputs *q);
/* in_dtypes and out_dtype of the four (op_common.h). */
uint32_t ql_in_dtypes(const op_object *o, int32_t index, const int32_t *types);
int32_t ql_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in);
/* The sizes above for concrete dims: rows is M (A's rows) for
 * MatMulInteger, else 0 (a's zero point one value); chans is what b's
 * zero point and scale may have one of (N or the output channels). */
prt_status ql_check_params(const op_object *o, const ql_inputs *q, const prt_dims *in,
                           int64_t rows, int64_t chans);

/* ConvInteger's or QLinearConv's geometry from concrete input dims, with
 * Conv's checks and ql_check_params (qconv.c). */
struct op_conv_geom;
prt_status qconv_geom(const op_object *o, const prt_dims *in, int32_t nb_in,
                      struct op_conv_geom *g);

/* Values of one CPU run (host memory): zero points as int32, the
 * requantization's multiplier and output range. */
typedef struct ql_values {
    int32_t a_zp;      /* a's zero point (element 0) */
    const void *a_zps; /* per row: the tensor (NULL: one value) */
    int32_t a_dtype;
    int32_t b_dtype;
    const void *b_zps; /* b's zero points (NULL: none, 0) */
    int64_t b_nzp;     /* their count: 1 or per channel */
    const float *b_scale;
    int64_t b_nscale;
    float a_scale, y_scale;
    int32_t y_zp, out; /* out: OP_QG_OUT_* (qgemm.h) */
} ql_values;
void ql_values_of(const ql_inputs *q, const prt_tensor_desc *in, const void *const *x,
                  ql_values *v);
/* b's zero point for channel c (0 without one). */
int32_t ql_b_zp(const ql_values *v, int64_t c);
/* The multiplier for channel c: a_scale * b_scale[c] / y_scale. */
float ql_multiplier(const ql_values *v, int64_t c);

/* Which constant a `prepare` state was made from (its head after
 * op_const): a run uses the state only when given that constant. */
typedef struct ql_const_src {
    const void *data;
    prt_dims dims;
    int32_t dtype;
} ql_const_src;
void ql_const_set(ql_const_src *s, const prt_tensor_desc *d, const void *data);
/* 1 when the run's input (desc d, pointer x) is s's constant. */
int ql_const_is(const ql_const_src *s, const prt_tensor_desc *d, const void *x);

/* B' (a constant [K, N] matrix of bytes) packed once by `prepare` for the
 * CPU's products (qgemm.h): its panels, signed side (a uint8 B stored ^
 * 0x80), and column sums; src says which constant it was made from. */
typedef struct ql_packed_b {
    op_const head;
    ql_const_src src;
    int32_t *colsum; /* N, in this block */
    uint8_t *panels;
    int16_t *panels16; /* the panels widened (op_qg_args.bp16), NULL where
                          the AVX2 tile did not run when packed */
} ql_packed_b;
/* Packs B (desc b, host data, dims [K, N] read from its last two) into a
 * new ql_packed_b in *out; leaves *out alone (PRT_OK) when there is
 * nothing to pack or the size overflows. */
prt_status ql_pack_b_const(const op_object *o, const prt_tensor_desc *b, const void *data,
                           op_const **out);
/* Carves `bytes` from base at *off rounded up to QL_CARVE_ALIGN (base
 * NULL: only counts), advancing *off; 0 on overflow or negative bytes. */
#define QL_CARVE_ALIGN 64
int ql_carve(uint8_t *base, int64_t *off, int64_t bytes, void **out);

/* The buffers of a product in cuBLASLt's "TN" form, which CUDA's
 * MatMulInteger and QLinearMatMul carve from the op's workspace
 * (qgemm_cuda.c): A re-signed (rows x K bytes), B transposed (N x K), the
 * int32 row sums (rows) and column sums (N), each QL_TN_ALIGN-aligned from
 * base. Returns the bytes from base (base NULL: the most any base
 * alignment needs), -1 on overflow; at[0..3] the four buffers when base
 * is given. qmatmul.c's workspace covers it at every shape, so that path
 * is never refused for want of room (issue 30: small products were). */
#define QL_TN_ALIGN 256
int64_t ql_tn_layout(int64_t rows, int64_t N, int64_t K, uint8_t *base, void *at[4]);

/* The buffers CUDA's DynamicQuantizeMatMul and MatMulIntegerToFloat carve
 * from the op's workspace (qgemm_cuda.c): A's bytes (rows x K; unused by
 * MatMulIntegerToFloat), its scale (float) and zero point (uint8) and the
 * int32 sums (rows x N), each QL_TN_ALIGN-aligned from base. Returns the
 * bytes from base (base NULL: the most any alignment needs), -1 on
 * overflow; at[0..3] the four when base is given. */
int64_t ql_dq_layout(int64_t rows, int64_t K, int64_t N, uint8_t *base, void *at[4]);

#endif /* PLUGRT_OPS_QLINEAR_H */
