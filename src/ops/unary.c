/*
 * Relu and Identity (namespace "plugrt", version "1"). No fields.
 *
 * Relu: float32, float16, bfloat16, int8, int32, int64; y = x < 0 ? 0 : x,
 * so NaN stays NaN and -0 stays -0 (what numpy.maximum(x, 0) gives for NaN;
 * ONNX leaves both open). Half floats are handled on their bits, exactly.
 *
 * Identity: any dtype. The output shares the input's memory when the builder
 * can arrange it (get_aliased_input); otherwise it is a copy.
 */
#include <string.h>

#include "ops/op_common.h"
#ifdef PRT_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "ops/ops_cuda.h"
#endif

enum { UNARY_RELU, UNARY_IDENTITY };

static prt_status unary_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                               prt_dim_exprs *out, prt_expr_builder *eb)
{
    (void)o, (void)nb_in, (void)eb;
    *out = in[0];
    return PRT_OK;
}

static prt_status unary_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                              prt_dims *out)
{
    (void)o, (void)nb_in;
    *out = in[0];
    return PRT_OK;
}

/* A 16-bit float below zero: sign set, not -0, not NaN. `inf` is the bits
 * of +infinity in the format (0x7C00 half, 0x7F80 bfloat16). */
static void relu_16(const uint16_t *x, uint16_t *y, int64_t n, uint16_t inf)
{
    for (int64_t i = 0; i < n; i++) {
        uint16_t h = x[i], mag = (uint16_t)(h & 0x7FFFu);
        y[i] = (h & 0x8000u) && mag != 0 && mag <= inf ? 0 : h;
    }
}

#define RELU_LOOP(T)                                                                     \
    do {                                                                                 \
        const T *a = x;                                                                  \
        T *b = y;                                                                        \
        for (int64_t i = 0; i < n; i++)                                                  \
            b[i] = a[i] < 0 ? (T)0 : a[i];                                               \
    } while (0)

static prt_status unary_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                            int32_t nb_in, const prt_tensor_desc *out,
                            const void *const *xs, void *y, void *ws, void *stream)
{
    int64_t n = base_volume(&in[0].dims);
    const void *x = xs[0];
    (void)nb_in, (void)out, (void)ws;
    if (o->cls->kind == UNARY_IDENTITY) {
        if (x != y)
            memmove(y, x, prt_dtype_size(dtype) * (size_t)n);
        return PRT_OK;
    }
    switch (dtype) {
    case PRT_FLOAT32:
        RELU_LOOP(float);
        break;
    case PRT_FLOAT16:
        relu_16(x, y, n, 0x7C00u);
        break;
    case PRT_BFLOAT16:
        relu_16(x, y, n, 0x7F80u);
        break;
    case PRT_INT8:
        RELU_LOOP(int8_t);
        break;
    case PRT_INT32:
        RELU_LOOP(int32_t);
        break;
    case PRT_INT64:
        RELU_LOOP(int64_t);
        break;
    default:
        return op_fail(o, PRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                       prt_dtype_name(dtype));
    }
    return PRT_OK;
}

#ifdef PRT_HAVE_CUDA
static prt_status unary_run_cuda(const op_object *o, int32_t dtype,
                                 const prt_tensor_desc *in, int32_t nb_in,
                                 const prt_tensor_desc *out, const void *const *xs,
                                 void *y, void *ws, void *stream)
{
    int64_t n = base_volume(&in[0].dims);
    int err;
    (void)nb_in, (void)out, (void)ws;
    if (o->cls->kind == UNARY_IDENTITY)
        err = xs[0] == y
                  ? 0
                  : (int)cudaMemcpyAsync(y, xs[0], prt_dtype_size(dtype) * (size_t)n,
                                         cudaMemcpyDeviceToDevice, (cudaStream_t)stream);
    else
        err = opk_relu(dtype, xs[0], y, n, stream);
    return err ? op_fail(o, PRT_ERR_INTERNAL, "CUDA kernel launch failed (error %d)", err)
               : PRT_OK;
}
#define UNARY_CUDA unary_run_cuda
#else
#define UNARY_CUDA NULL
#endif

static const op_class relu_class = {
    .kind = UNARY_RELU,
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16) | OP_DT(PRT_INT8) | OP_DT(PRT_INT32) |
              OP_DT(PRT_INT64),
    .size = sizeof(op_object),
    .alias_input = -1,
    .shapes = unary_shapes,
    .infer = unary_infer,
    .run = {[PRT_DEVICE_CPU] = unary_run, [PRT_DEVICE_CUDA] = UNARY_CUDA},
};

/* Identity's values are its input's (a shape tensor passes through). */
static prt_status identity_values(op_object *o, const prt_dim_exprs *in_dims,
                                  const prt_dim_exprs *in_values, int32_t nb_in,
                                  const prt_dim_exprs *out_dims,
                                  prt_dim_exprs *out_values, prt_expr_builder *eb)
{
    (void)o, (void)in_dims, (void)nb_in, (void)out_dims, (void)eb;
    *out_values = in_values[0];
    return PRT_OK;
}

static const op_class identity_class = {
    .kind = UNARY_IDENTITY,
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_ALL,
    .size = sizeof(op_object),
    .alias_input = 0, /* in place when the builder can arrange it */
    .shapes = unary_shapes,
    .infer = unary_infer,
    .run = {[PRT_DEVICE_CPU] = unary_run, [PRT_DEVICE_CUDA] = UNARY_CUDA},
    .values = identity_values,
};

const prt_plugin_creator op_relu_creator = OP_CREATOR("Relu", relu_class, NULL, 0);
const prt_plugin_creator op_identity_creator =
    OP_CREATOR("Identity", identity_class, NULL, 0);
