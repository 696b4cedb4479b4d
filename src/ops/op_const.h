/*
 * Constant inputs of built-in ops (internal to libplugrt): how the engine
 * tells a built-in op which of its inputs are constants, so that the op can
 * derive state from them once (op_class.prepare, op_common.h) instead of on
 * every run. The plugin ABI (plugin.h) has no such entry; built-in ops are
 * plugrt's own, so this one stays internal.
 */
#ifndef PLUGRT_OPS_OP_CONST_H
#define PLUGRT_OPS_OP_CONST_H

#include "base/base.h"

/* The most inputs of a built-in op. */
#define OP_MAX_INPUTS 9 /* QLinearConv takes 9 */

/* Calls the class's `prepare` on p, a built-in op's object, with every
 * input's desc (in[0..nb_in)) and data[i] the bytes of input i where it is
 * a constant (host memory living as long as every clone of p), NULL where
 * it is computed at run time (out[0..nb_out): the outputs' descs, of
 * which their formats are set first in op_object.chw8, so prepare knows
 * the layouts the layer runs in), and keeps the state in p for its later
 * clones (attach_to_context). For CPU layers of CPU engines only: a CUDA
 * kernel never reads the state. Does nothing for another plugin, an op
 * without `prepare`, or an object that has state already. Fails only for
 * out of memory. Called by the engine (builder and loader) while nothing
 * else uses p. */
prt_status op_bind_constants(prt_plugin *p, const prt_tensor_desc *in, int32_t nb_in,
                             const prt_tensor_desc *out, int32_t nb_out,
                             const void *const *data);

/* Gives p, a built-in op's object, the engine's precision flags
 * (PRT_PRECISION_*, prt_builder_config_set_precision_flags) in
 * op_object.precision, which its clones copy. A kernel reads them there:
 * `o->precision & PRT_PRECISION_TF32` allows TF32 tensor-core math for a
 * float32 product or convolution (cuBLAS's CUBLAS_COMPUTE_32F_FAST_TF32,
 * cuDNN's CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION); without it float32 stays
 * strict. Does nothing for another plugin. Called by the engine (builder
 * and loader) while nothing else uses p. */
void op_set_precision(prt_plugin *p, uint32_t flags);

/* 1 when p is a built-in op whose output 0 is its input 0's bytes in the
 * same order under other dims (op_class.view: Reshape, Squeeze, Unsqueeze,
 * Flatten). The builder then lets output 0 share input 0's memory even
 * though the dims differ (a plugin's get_aliased_input needs equal dims);
 * the op's run copies only when the two are apart. 0 for anything else. */
int op_is_view(const prt_plugin *p);

/* 1 when p, a built-in op's object, reads shape input `index` as float32
 * values (op_class.float_shape_input); 0 for another plugin, which sees
 * every shape input's values as integers. */
int op_float_shape_input(const prt_plugin *p, int32_t index);

#endif /* PLUGRT_OPS_OP_CONST_H */
