/*
 * The table of built-in ops and the public functions that serve it
 * (prt_builtin_find_creator, prt_builtin_creator_count,
 * prt_builtin_get_creator). The table is static and read-only, so these
 * are thread-safe.
 */
#include <stdio.h>
#include <string.h>

#include "ops/math_ops.h"
#include "ops/op_common.h"
#include "ops/op_device.h"
#include "ops/ops_data.h"
#include "ops/ops_ew.h"
#include "ops/ops_loss.h"
#include "ops/ops_nn.h"
#include "ops/ops_signal.h"
#include "ops/rnn.h"
#include "ops/ops_quant.h"
#include "ops/qlinear.h"
#include "ops/shape_ops.h"
#include "ops/ew_chain.h"

static const prt_plugin_creator *const builtins[] = {
    &op_relu_creator,
    &op_identity_creator,
    &op_add_creator,
    &op_sub_creator,
    &op_mul_creator,
    &op_div_creator,
    &op_matmul_creator,
    &op_transpose_creator,
    &op_einsum_creator,
    &op_conv_creator,
    &op_hard_sigmoid_creator,
    &op_hard_swish_creator,
    &op_global_average_pool_creator,
    &op_flatten_creator,
    &op_gemm_creator,
    &op_erf_creator,
    &op_tanh_creator,
    &op_softmax_creator,
    &op_layer_norm_creator,
    &op_skip_layer_norm_creator,
    &op_ew_chain_creator,
    &op_equal_creator,
    &op_greater_or_equal_creator,
    &op_and_creator,
    &op_is_nan_creator,
    &op_where_creator,
    &op_gather_elements_creator,
    &op_shape_creator,
    &op_gather_creator,
    &op_reshape_creator,
    &op_unsqueeze_creator,
    &op_squeeze_creator,
    &op_concat_creator,
    &op_constant_of_shape_creator,
    &op_expand_creator,
    &op_range_creator,
    &op_slice_creator,
    &op_cast_creator,
    /* data movement and data-dependent ops (ops_data.h) */
    &op_size_creator,
    &op_split_creator,
    &op_gather_nd_creator,
    &op_scatter_nd_creator,
    &op_scatter_elements_creator,
    &op_tile_creator,
    &op_pad_creator,
    &op_trilu_creator,
    &op_one_hot_creator,
    &op_depth_to_space_creator,
    &op_space_to_depth_creator,
    &op_eye_like_creator,
    &op_nonzero_creator,
    &op_compress_creator,
    &op_unique_creator,
    &op_hardmax_creator,
    /* The elementwise, unary and reduction families (issue 8; ops_ew.h). */
    &op_mod_creator,
    &op_max_creator,
    &op_min_creator,
    &op_sum_creator,
    &op_mean_creator,
    &op_bit_shift_creator,
    &op_prelu_creator,
    &op_pow_creator,
    &op_less_creator,
    &op_less_or_equal_creator,
    &op_greater_creator,
    &op_or_creator,
    &op_xor_creator,
    &op_not_creator,
    &op_is_inf_creator,
    &op_abs_creator,
    &op_neg_creator,
    &op_sign_creator,
    &op_clip_creator,
    &op_cast_like_creator,
    &op_dropout_creator,
    &op_exp_creator,
    &op_log_creator,
    &op_sqrt_creator,
    &op_reciprocal_creator,
    &op_floor_creator,
    &op_ceil_creator,
    &op_round_creator,
    &op_sin_creator,
    &op_cos_creator,
    &op_tan_creator,
    &op_asin_creator,
    &op_acos_creator,
    &op_atan_creator,
    &op_sinh_creator,
    &op_cosh_creator,
    &op_asinh_creator,
    &op_acosh_creator,
    &op_atanh_creator,
    &op_sigmoid_creator,
    &op_softplus_creator,
    &op_softsign_creator,
    &op_mish_creator,
    &op_gelu_creator,
    &op_elu_creator,
    &op_selu_creator,
    &op_celu_creator,
    &op_leaky_relu_creator,
    &op_thresholded_relu_creator,
    &op_reduce_sum_creator,
    &op_reduce_mean_creator,
    &op_reduce_max_creator,
    &op_reduce_min_creator,
    &op_reduce_prod_creator,
    &op_reduce_l1_creator,
    &op_reduce_l2_creator,
    &op_reduce_sum_square_creator,
    &op_reduce_log_sum_creator,
    &op_reduce_log_sum_exp_creator,
    &op_argmax_creator,
    &op_argmin_creator,
    &op_cumsum_creator,
    &op_topk_creator,
    /* Normalization, linear and spatial ops (ops_nn.h). */
    &op_max_pool_creator,
    &op_average_pool_creator,
    &op_lp_pool_creator,
    &op_global_max_pool_creator,
    &op_global_lp_pool_creator,
    &op_conv_transpose_creator,
    &op_log_softmax_creator,
    &op_batch_norm_creator,
    &op_instance_norm_creator,
    &op_group_norm_creator,
    &op_lp_norm_creator,
    &op_resize_creator,
    /* LRN, Shrink, ReverseSequence, MaxUnpool (issue 25; ops_nn.h, ops_data.h). */
    &op_lrn_creator,
    &op_shrink_creator,
    &op_reverse_sequence_creator,
    &op_max_unpool_creator,
    /* The signal ops (ops_signal.h). */
    &op_hann_window_creator,
    &op_hamming_window_creator,
    &op_blackman_window_creator,
    &op_mel_weight_matrix_creator,
    &op_dft_creator,
    &op_stft_creator,
    /* The losses, MeanVarianceNormalization and Det (ops_loss.h). */
    &op_nll_loss_creator,
    &op_sce_loss_creator,
    &op_mvn_creator,
    &op_det_creator,
    &op_grid_sample_creator, /* sample.c */
    &op_roi_align_creator,
    /* NonMaxSuppression (nms.c; ops_data.h). */
    &op_nms_creator,
    &op_tfidf_creator, /* TfIdfVectorizer (tfidf.c; ops_data.h) */
    /* LSTM, GRU, RNN (issue 25; rnn.h). */
    &op_lstm_creator,
    &op_gru_creator,
    &op_rnn_creator,
    /* The quantization ops (issue 30; ops_quant.h). */
    &op_quantize_linear_creator,
    &op_dequantize_linear_creator,
    &op_dynamic_quantize_linear_creator,
    &op_qlinear_add_creator,
    &op_qlinear_mul_creator,
    &op_lookup_table8_creator, /* lookup_table.c */
    /* The integer products (issue 30; qlinear.h). */
    &op_matmul_integer_creator,
    &op_qlinear_matmul_creator,
    &op_conv_integer_creator,
    &op_qlinear_conv_creator,
    &op_dynamic_quantize_matmul_creator, /* qmatmul_float.c */
    &op_matmul_integer_to_float_creator,
    /* Attention (issue 24; ops_nn.h). */
    &op_attention_creator,
};

#define NB_BUILTINS ((int32_t)(sizeof builtins / sizeof builtins[0]))

int32_t prt_builtin_creator_count(void)
{
    return NB_BUILTINS;
}

const prt_plugin_creator *prt_builtin_get_creator(int32_t index)
{
    if (index < 0 || index >= NB_BUILTINS)
        return NULL;
    return builtins[index];
}

prt_status prt_builtin_find_creator(const char *name, const char *version,
                                    const prt_plugin_creator **out)
{
    char list[512];
    size_t n = 0;
    if (!name || !out)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_builtin_find_creator: NULL name or output");
    if (!version)
        version = OP_VERSION;
    for (int32_t i = 0; i < NB_BUILTINS; i++)
        if (strcmp(builtins[i]->name, name) == 0 &&
            strcmp(builtins[i]->version, version) == 0) {
            *out = builtins[i];
            return PRT_OK;
        }
    list[0] = '\0';
    for (int32_t i = 0; i < NB_BUILTINS && n < sizeof list; i++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "",
                              builtins[i]->name);
    return base_error(PRT_ERR_NOT_FOUND,
                      "no built-in op %s::%s version %s (built-ins, version "
                      "%s: %s)",
                      PRT_BUILTIN_NAMESPACE, name, version, OP_VERSION, list);
}

/* The lowest dtype of a non-empty mask. */
static int32_t first_dtype(uint32_t mask)
{
    for (int32_t t = 0; t < PRT_DTYPE_COUNT; t++)
        if ((mask >> t) & 1u)
            return t;
    return 0;
}

static prt_status builtin_dtypes(const prt_plugin_creator *c, int32_t device,
                                 uint32_t *out_mask)
{
    const op_class *cls;
    const op_device_kernel *kd;
    prt_plugin *p = NULL;
    const op_object *o;
    int32_t types[OP_MAX_INPUTS] = {0}, key;
    uint32_t mask;
    prt_status st;
    cls = c->user;
    *out_mask = 0;
    kd = op_device_kernel_find(op_device_table_get(device), c->name);
    if (device != PRT_DEVICE_CPU && !kd)
        return PRT_OK;
    key = cls->dtype_input;
    if (!cls->in_dtypes || key >= cls->max_inputs) {
        /* Without inputs the mask is the output's (ConstantOfShape's). */
        mask = cls->dtypes;
    } else {
        /* The creator's defaults decide what a field may narrow (Clip with
         * bounds takes floats only; without, every number). */
        st = op_create(c, "", NULL, PRT_PHASE_BUILD, &p);
        if (st == PRT_ERR_OUT_OF_MEMORY)
            return st;
        if (st) {
            /* A field it requires (Cast's `to`): the class's rule with every
             * field zero. */
            op_object *z = base_calloc(1, cls->size);
            if (!z)
                return base_error(PRT_ERR_OUT_OF_MEMORY,
                                  "prt_builtin_get_dtypes: out of memory");
            z->creator = c;
            z->cls = cls;
            p = &z->base;
            base_clear_error(); /* not this call's failure */
        }
        o = (const op_object *)p;
        for (int32_t i = 0; i < key; i++)
            types[i] = first_dtype(cls->in_dtypes(o, i, types));
        mask = cls->in_dtypes(o, key, types);
        if (st)
            base_free(p);
        else
            p->vt->runtime->destroy(p);
    }
    *out_mask = kd ? mask & op_device_kernel_dtypes(kd) : mask;
    return PRT_OK;
}

prt_status prt_builtin_get_dtypes(int32_t index, int32_t device, uint32_t *out_mask)
{
    if (!out_mask)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_builtin_get_dtypes: out_mask is NULL");
    if (index < 0 || index >= NB_BUILTINS)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_builtin_get_dtypes: index %d is out of range (0 to %d)",
                          (int)index, (int)NB_BUILTINS - 1);
    if (device < 0 || device >= PRT_DEVICE_COUNT)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_builtin_get_dtypes: unknown device %d", (int)device);
    return builtin_dtypes(builtins[index], device, out_mask);
}
