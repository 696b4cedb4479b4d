/*
 * LSTM, GRU and RNN (rnn.c), the recurrent built-ins (internal to
 * libplugrt): what every device's kernel reads of one layer, so that the
 * CPU's kernel (rnn.c) and the CUDA one (cuda/rnn_cuda.c) share the checks
 * and the rules.
 *
 * The layer's inputs are ONNX's in order with the omitted optional ones
 * left out: X, W, R, then those of B, sequence_lens, initial_h, initial_c
 * and P (LSTM) that the node gives (the field "inputs" says which; plugin
 * layers take inputs by position, and ONNX models omit B while giving
 * initial_h). rnn_desc.in[] maps each ONNX input to its layer input.
 */
#ifndef PLUGRT_OPS_RNN_H
#define PLUGRT_OPS_RNN_H

#include "ops/op_common.h"

extern const prt_plugin_creator op_lstm_creator;
extern const prt_plugin_creator op_gru_creator;
extern const prt_plugin_creator op_rnn_creator;

enum { RNN_KIND_RNN, RNN_KIND_GRU, RNN_KIND_LSTM };
/* ONNX's inputs, in order. */
enum { RNN_X, RNN_W, RNN_R, RNN_B, RNN_SEQ, RNN_H0, RNN_C0, RNN_P, RNN_NB_INPUTS };
/* The activation functions ONNX lists for the recurrent ops. */
enum {
    RNN_ACT_SIGMOID,
    RNN_ACT_TANH,
    RNN_ACT_RELU,
    RNN_ACT_AFFINE,           /* alpha x + beta */
    RNN_ACT_LEAKY_RELU,       /* x < 0 ? alpha x : x */
    RNN_ACT_THRESHOLDED_RELU, /* x > alpha ? x : 0 */
    RNN_ACT_SCALED_TANH,      /* alpha tanh(beta x) */
    RNN_ACT_HARD_SIGMOID,     /* min(max(alpha x + beta, 0), 1) */
    RNN_ACT_ELU,              /* x < 0 ? alpha (e^x - 1) : x */
    RNN_ACT_SOFTSIGN,         /* x / (1 + |x|) */
    RNN_ACT_SOFTPLUS,         /* log(1 + e^x); x past 20 (ONNX Runtime: inf past 88) */
    RNN_ACT_COUNT
};
#define RNN_MAX_ACTS 6 /* 3 per direction (LSTM's f, g, h) */

/* One layer at concrete dims. Gates: G blocks of H rows in W and R, in
 * ONNX's order (RNN i; GRU z, r, h; LSTM i, o, f, c). */
typedef struct rnn_desc {
    int32_t kind;    /* RNN_KIND_* */
    int32_t gates;   /* G: 1, 3 or 4 */
    int32_t dirs;    /* 1 or 2 */
    int32_t reverse; /* one direction, run backwards */
    int32_t layout;  /* 0: X [T, B, I], Y [T, D, B, H]; 1: [B, T, I], [B, T, D, H] */
    int32_t linear_before_reset, input_forget;
    int32_t has_clip;
    float clip;
    /* Per direction d, act[d * nb_per_dir + k] is function k (f, g, h). */
    int32_t nb_per_dir;
    int32_t act[RNN_MAX_ACTS];
    float alpha[RNN_MAX_ACTS], beta[RNN_MAX_ACTS];
    int32_t in[RNN_NB_INPUTS]; /* layer input of each ONNX input; -1: none */
    int64_t T, B, I, H;
} rnn_desc;

/* The layer at these input dims, checked (every input's dims against X's
 * and R's, the hidden size), or an error naming the input. */
prt_status rnn_describe(const op_object *o, const prt_dims *in, int32_t nb_in,
                        rnn_desc *d);
/* f(x) for activation k of d (scalar; every device's reference). */
float rnn_act_scalar(const rnn_desc *d, int32_t k, float x);

#endif /* PLUGRT_OPS_RNN_H */
