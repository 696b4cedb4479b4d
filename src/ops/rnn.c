/*
 * LSTM, GRU and RNN (namespace "plugrt", version "1"), ONNX opsets 7 to 22
 * (layout from 14), float32: the recurrent layers, forward, reverse or
 * bidirectional, with ONNX's optional inputs (rnn.h says how the layer
 * takes them) and outputs (Y, Y_h and LSTM's Y_c; the field nb_outputs
 * says how many the layer makes).
 *
 * Fields (ONNX's attributes): direction ("forward", "reverse",
 * "bidirectional"), hidden_size (default: R's last dim), layout (0 or 1),
 * clip (none by default), activations (the names, each NUL-terminated,
 * case-insensitive: Sigmoid, Tanh, Relu, Affine, LeakyRelu,
 * ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus; one
 * direction's list serves both when a bidirectional layer gives only
 * one), activation_alpha and activation_beta (consumed in order by the
 * functions that take them, ONNX Runtime's rule: a function that takes
 * alpha takes the next one, or its default when the list is spent --
 * LeakyRelu 0.01, ThresholdedRelu 1, HardSigmoid 0.2 and 0.5, Elu 1,
 * Affine and ScaledTanh 1 and 0 / 1), GRU's linear_before_reset, LSTM's
 * input_forget (f = 1 - i); plugrt's own: inputs (bit k - 3 set when ONNX
 * input k, of B..P, is given; absent: the inputs by position) and
 * nb_outputs.
 *
 * sequence_lens (int32) must lie in [0, T]: a batch entry of length L runs
 * L steps (a reverse direction from step L - 1 down), Y is 0 at its later
 * steps, and its Y_h and Y_c are the state after its last step (0 for
 * L = 0), as ONNX Runtime computes them. clip bounds the input of every
 * gate's function (not LSTM's h(C), again ONNX Runtime's rule).
 *
 * The CPU kernel: for each direction X W^T for every step is one product
 * (op_gemm_f32_par, with W and R transposed into the workspace so the
 * register-tiled kernel takes them), then per step one product H R^T
 * (GRU without linear_before_reset: two, the second on r * H) and the
 * gates, the batch rows spread over the threads: an LSTM of the default
 * functions in one fused pass (op_lstm_gates_f32), the others through the
 * vectorized sigmoid and tanh array functions (cpu_kernels.h). The two
 * directions of a bidirectional layer run on two threads.
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "base/parallel.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/rnn.h"

static const char *const rnn_act_names[RNN_ACT_COUNT] = {
    "Sigmoid",    "Tanh",        "Relu", "Affine",   "LeakyRelu", "ThresholdedRelu",
    "ScaledTanh", "HardSigmoid", "Elu",  "Softsign", "Softplus",
};
static const char *const rnn_input_names[RNN_NB_INPUTS] = {
    "X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};

#define RNN_NAMES_MAX 160 /* the activations field, serialized */

typedef struct rnn_op {
    op_object o;
    int32_t direction; /* 0 forward, 1 reverse, 2 bidirectional */
    int32_t hidden_size, layout, clip_set, lbr, input_forget, inputs, nb_outputs;
    float clip;
    int32_t nb_acts; /* as given; 0: the defaults */
    int32_t act[RNN_MAX_ACTS];
    int32_t nb_alpha, nb_beta;
    float alpha[RNN_MAX_ACTS], beta[RNN_MAX_ACTS];
    /* serialized from the fields above */
    char names[RNN_NAMES_MAX];
    int32_t names_len;
    char dir_name[16];
} rnn_op;

static int32_t rnn_kind(const op_object *o)
{
    return o->cls->kind;
}

static int32_t rnn_gates(int32_t kind)
{
    return kind == RNN_KIND_LSTM ? 4 : kind == RNN_KIND_GRU ? 3 : 1;
}

static int32_t rnn_per_dir(int32_t kind)
{
    return kind == RNN_KIND_LSTM ? 3 : kind == RNN_KIND_GRU ? 2 : 1;
}

static int rnn_streq_ci(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

static prt_status rnn_parse_acts(rnn_op *r, const op_fields *f)
{
    const prt_field *fl;
    prt_status st = op_field_find(f, "activations", &fl);
    const char *s, *end;
    if (st || !fl)
        return st;
    if (fl->type != PRT_FIELD_CHAR)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "activations must be a char field of names, each "
                              "NUL-terminated");
    s = fl->data;
    end = s + fl->length;
    while (s < end) {
        const char *z = memchr(s, 0, (size_t)(end - s));
        char name[32];
        size_t n = z ? (size_t)(z - s) : (size_t)(end - s);
        int32_t k;
        if (n == 0) { /* padding NULs */
            s = z ? z + 1 : end;
            continue;
        }
        if (r->nb_acts == RNN_MAX_ACTS)
            return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                                  "activations lists more than %d functions",
                                  RNN_MAX_ACTS);
        if (n >= sizeof name)
            n = sizeof name - 1;
        memcpy(name, s, n);
        name[n] = 0;
        for (k = 0; k < RNN_ACT_COUNT && !rnn_streq_ci(name, rnn_act_names[k]); k++)
            ;
        if (k == RNN_ACT_COUNT)
            return op_fields_fail(f, PRT_ERR_UNSUPPORTED,
                                  "activation '%s' is not supported (Sigmoid, Tanh, "
                                  "Relu, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, "
                                  "HardSigmoid, Elu, Softsign, Softplus are)",
                                  name);
        r->act[r->nb_acts++] = k;
        s = z ? z + 1 : end;
    }
    return PRT_OK;
}

/* The fields that differ from their defaults, which rnn_serialize writes:
 * their count, and with ser non-NULL the fields. */
static int32_t rnn_fields(rnn_op *r, prt_field *ser)
{
    int32_t n = 0, kind = rnn_kind(&r->o);
#define RNN_SER(cond, name, type, ptr, len)                                              \
    do {                                                                                 \
        if (cond) {                                                                      \
            if (ser)                                                                     \
                op_ser(&ser[n], name, type, ptr, len);                                   \
            n++;                                                                         \
        }                                                                                \
    } while (0)
    RNN_SER(r->direction != 0, "direction", PRT_FIELD_CHAR, r->dir_name,
            (int64_t)strlen(r->dir_name));
    RNN_SER(r->hidden_size, "hidden_size", PRT_FIELD_INT32, &r->hidden_size, 1);
    RNN_SER(r->layout, "layout", PRT_FIELD_INT32, &r->layout, 1);
    RNN_SER(r->clip_set, "clip", PRT_FIELD_FLOAT32, &r->clip, 1);
    RNN_SER(r->nb_acts, "activations", PRT_FIELD_CHAR, r->names, r->names_len);
    RNN_SER(r->nb_alpha, "activation_alpha", PRT_FIELD_FLOAT32, r->alpha, r->nb_alpha);
    RNN_SER(r->nb_beta, "activation_beta", PRT_FIELD_FLOAT32, r->beta, r->nb_beta);
    RNN_SER(kind == RNN_KIND_GRU && r->lbr, "linear_before_reset", PRT_FIELD_INT32,
            &r->lbr, 1);
    RNN_SER(kind == RNN_KIND_LSTM && r->input_forget, "input_forget", PRT_FIELD_INT32,
            &r->input_forget, 1);
    RNN_SER(r->inputs != -1, "inputs", PRT_FIELD_INT32, &r->inputs, 1);
    RNN_SER(r->nb_outputs != (kind == RNN_KIND_LSTM ? 3 : 2), "nb_outputs",
            PRT_FIELD_INT32, &r->nb_outputs, 1);
#undef RNN_SER
    return n;
}

static prt_status rnn_parse(op_object *o, const op_fields *f)
{
    rnn_op *r = (rnn_op *)o;
    int32_t kind = rnn_kind(o), len = 0;
    prt_status st = op_field_str(f, "direction", r->dir_name, sizeof r->dir_name, &len);
    if (!st) {
        if (len < 0)
            strcpy(r->dir_name, "forward");
        if (strcmp(r->dir_name, "forward") == 0)
            r->direction = 0;
        else if (strcmp(r->dir_name, "reverse") == 0)
            r->direction = 1;
        else if (strcmp(r->dir_name, "bidirectional") == 0)
            r->direction = 2;
        else
            st = op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                                "direction is '%s'; it must be forward, reverse or "
                                "bidirectional",
                                r->dir_name);
    }
    if (!st)
        st = op_field_i32(f, "hidden_size", 0, &r->hidden_size);
    if (!st && r->hidden_size < 0)
        st = op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                            "hidden_size is %d; it must be 1 or more (0: R's last dim)",
                            (int)r->hidden_size);
    if (!st)
        st = op_field_i32(f, "layout", 0, &r->layout);
    if (!st && r->layout != 0 && r->layout != 1)
        st = op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                            "layout is %d; it must be 0 or 1", (int)r->layout);
    if (!st) {
        const prt_field *fl;
        st = op_field_find(f, "clip", &fl);
        r->clip_set = fl != NULL;
    }
    if (!st && r->clip_set)
        st = op_field_f32(f, "clip", 0.0f, &r->clip);
    if (!st && r->clip_set && !(r->clip >= 0.0f))
        st = op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT, "clip is %g; it must be >= 0",
                            (double)r->clip);
    if (!st && kind == RNN_KIND_GRU)
        st = op_field_i32(f, "linear_before_reset", 0, &r->lbr);
    if (!st && kind == RNN_KIND_LSTM)
        st = op_field_i32(f, "input_forget", 0, &r->input_forget);
    if (!st)
        st = op_field_i32(f, "inputs", -1, &r->inputs);
    if (!st && r->inputs != -1 && (r->inputs < 0 || r->inputs > 31))
        st = op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                            "inputs is %d; it must be a mask of bits 0..4 (B, "
                            "sequence_lens, initial_h, initial_c, P), or -1",
                            (int)r->inputs);
    if (!st && r->inputs > 0 && kind != RNN_KIND_LSTM && (r->inputs & 0x18))
        st = op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                            "inputs is %d; initial_c and P are LSTM's", (int)r->inputs);
    if (!st)
        st = op_field_i32(f, "nb_outputs", kind == RNN_KIND_LSTM ? 3 : 2, &r->nb_outputs);
    if (!st && (r->nb_outputs < 1 || r->nb_outputs > (kind == RNN_KIND_LSTM ? 3 : 2)))
        st = op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                            "nb_outputs is %d; it must be 1 (Y) to %d",
                            (int)r->nb_outputs, kind == RNN_KIND_LSTM ? 3 : 2);
    if (!st)
        st = rnn_parse_acts(r, f);
    if (!st)
        st = op_field_f32_array(f, "activation_alpha", r->alpha, RNN_MAX_ACTS,
                                &r->nb_alpha);
    if (!st)
        st = op_field_f32_array(f, "activation_beta", r->beta, RNN_MAX_ACTS, &r->nb_beta);
    r->nb_alpha = r->nb_alpha < 0 ? 0 : r->nb_alpha;
    r->nb_beta = r->nb_beta < 0 ? 0 : r->nb_beta;
    if (!st && r->nb_acts) {
        int32_t per = rnn_per_dir(kind), dirs = r->direction == 2 ? 2 : 1;
        if (r->nb_acts != per && r->nb_acts != per * dirs)
            st = op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                                "activations lists %d functions; %s takes %d per "
                                "direction",
                                (int)r->nb_acts, f->op, (int)per);
    }
    if (!st) { /* the names, as serialized */
        int32_t n = 0;
        for (int32_t k = 0; k < r->nb_acts; k++) {
            size_t l = strlen(rnn_act_names[r->act[k]]) + 1;
            memcpy(r->names + n, rnn_act_names[r->act[k]], l);
            n += (int32_t)l;
        }
        r->names_len = n;
    }
    if (!st && rnn_fields(r, NULL) > OP_MAX_FIELDS)
        st = op_fields_fail(f, PRT_ERR_UNSUPPORTED,
                            "this combination needs %d fields besides their defaults; a "
                            "built-in op keeps at most %d",
                            (int)rnn_fields(r, NULL), OP_MAX_FIELDS);
    return st;
}

static int32_t rnn_serialize(op_object *o, prt_field *ser)
{
    return rnn_fields((rnn_op *)o, ser);
}

static int32_t rnn_nb_outputs(const op_object *o)
{
    return ((const rnn_op *)o)->nb_outputs;
}

/* The ONNX input (RNN_*) that layer input `index` is. */
static int32_t rnn_role(const rnn_op *r, int32_t index)
{
    if (index < 3 || r->inputs < 0)
        return index;
    for (int32_t role = RNN_B, seen = 3; role < RNN_NB_INPUTS; role++)
        if ((r->inputs >> (role - RNN_B)) & 1) {
            if (seen == index)
                return role;
            seen++;
        }
    return RNN_NB_INPUTS; /* past the mask's inputs: refused by the count check */
}

/* in[] of rnn_desc for nb_in layer inputs, or an error. */
static prt_status rnn_map_inputs(const op_object *o, int32_t nb_in, int32_t *map)
{
    const rnn_op *r = (const rnn_op *)o;
    int32_t want = r->inputs < 0 ? -1 : 3 + __builtin_popcount((unsigned)r->inputs);
    int32_t top = rnn_kind(o) == RNN_KIND_LSTM ? RNN_NB_INPUTS : RNN_C0;
    if (want >= 0 && nb_in != want)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "the layer has %d inputs; its field inputs (%d) names %d",
                       (int)nb_in, (int)r->inputs, (int)want);
    if (want < 0 && nb_in > top)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "the layer has %d inputs; %s takes %d", (int)nb_in, op_name(o),
                       (int)top);
    for (int32_t k = 0; k < RNN_NB_INPUTS; k++)
        map[k] = -1;
    for (int32_t i = 0; i < nb_in; i++)
        map[rnn_role(r, i)] = i;
    return PRT_OK;
}

static uint32_t rnn_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)types;
    return rnn_role((const rnn_op *)o, index) == RNN_SEQ ? OP_DT(PRT_INT32)
                                                         : OP_DT(PRT_FLOAT32);
}

static int32_t rnn_out_dtype_n(const op_object *o, const int32_t *types, int32_t nb_in,
                               int32_t index)
{
    (void)o, (void)types, (void)nb_in, (void)index;
    return PRT_FLOAT32;
}

/* The functions of d: the defaults, or the names given (one direction's
 * for both), and their alpha and beta. */
static void rnn_acts(const rnn_op *r, rnn_desc *d)
{
    static const int32_t dflt[3][3] = {
        {RNN_ACT_TANH},
        {RNN_ACT_SIGMOID, RNN_ACT_TANH},
        {RNN_ACT_SIGMOID, RNN_ACT_TANH, RNN_ACT_TANH},
    };
    int32_t per = d->nb_per_dir, ia = 0, ib = 0;
    for (int32_t k = 0; k < per * d->dirs; k++) {
        int32_t a = r->nb_acts ? r->act[k % r->nb_acts] : dflt[d->kind][k % per];
        float al = 1.0f, be = 0.0f;
        int takes_a = 1, takes_b = 0;
        switch (a) {
        case RNN_ACT_LEAKY_RELU:
            al = 0.01f;
            break;
        case RNN_ACT_HARD_SIGMOID:
            al = 0.2f, be = 0.5f, takes_b = 1;
            break;
        case RNN_ACT_AFFINE:
            takes_b = 1;
            break;
        case RNN_ACT_SCALED_TANH:
            be = 1.0f, takes_b = 1;
            break;
        case RNN_ACT_THRESHOLDED_RELU:
        case RNN_ACT_ELU:
            break;
        default:
            takes_a = 0;
        }
        /* Values are consumed along the list as given (ONNX Runtime's rule);
         * a one-direction list given for both reads them again. */
        if (r->nb_acts && k % r->nb_acts == 0)
            ia = ib = 0;
        if (takes_a && ia < r->nb_alpha)
            al = r->alpha[ia++];
        if (takes_b && ib < r->nb_beta)
            be = r->beta[ib++];
        d->act[k] = a;
        d->alpha[k] = al;
        d->beta[k] = be;
    }
}

static prt_status rnn_dims_fail(const op_object *o, int32_t role, const prt_dims *got,
                                const prt_dims *want)
{
    char a[96], b[96];
    return op_fail(o, PRT_ERR_SHAPE, "%s is %s; it must be %s", rnn_input_names[role],
                   base_dims_format(got, BASE_DIMS_LIST, a, sizeof a),
                   base_dims_format(want, BASE_DIMS_LIST, b, sizeof b));
}

prt_status rnn_describe(const op_object *o, const prt_dims *in, int32_t nb_in,
                        rnn_desc *d)
{
    const rnn_op *r = (const rnn_op *)o;
    const prt_dims *x, *w, *rr;
    prt_status st;
    int64_t gh, D;
    memset(d, 0, sizeof *d);
    d->kind = rnn_kind(o);
    d->gates = rnn_gates(d->kind);
    d->dirs = r->direction == 2 ? 2 : 1;
    d->reverse = r->direction == 1;
    d->layout = r->layout;
    d->linear_before_reset = r->lbr;
    d->input_forget = r->input_forget;
    d->has_clip = r->clip_set;
    d->clip = r->clip;
    d->nb_per_dir = rnn_per_dir(d->kind);
    rnn_acts(r, d);
    st = rnn_map_inputs(o, nb_in, d->in);
    if (st)
        return st;
    x = &in[d->in[RNN_X]];
    w = &in[d->in[RNN_W]];
    rr = &in[d->in[RNN_R]];
    for (int32_t k = 0; k < 3; k++)
        if (in[k].nb_dims != 3)
            return op_fail(o, PRT_ERR_SHAPE, "%s has rank %d; it must be 3",
                           rnn_input_names[k], (int)in[k].nb_dims);
    D = d->dirs;
    d->T = x->d[r->layout ? 1 : 0];
    d->B = x->d[r->layout ? 0 : 1];
    d->I = x->d[2];
    d->H = r->hidden_size ? r->hidden_size : rr->d[2];
    gh = d->gates * d->H;
    {
        prt_dims want = {3, {D, gh, d->I}};
        if (memcmp(w->d, want.d, sizeof(int64_t) * 3) != 0)
            return rnn_dims_fail(o, RNN_W, w, &want);
        want.d[2] = d->H;
        if (memcmp(rr->d, want.d, sizeof(int64_t) * 3) != 0)
            return rnn_dims_fail(o, RNN_R, rr, &want);
    }
    for (int32_t role = RNN_B; role < RNN_NB_INPUTS; role++) {
        prt_dims want = {0, {0}};
        const prt_dims *g;
        if (d->in[role] < 0)
            continue;
        g = &in[d->in[role]];
        if (role == RNN_B)
            want = (prt_dims){2, {D, 2 * gh}};
        else if (role == RNN_SEQ)
            want = (prt_dims){1, {d->B}};
        else if (role == RNN_P)
            want = (prt_dims){2, {D, 3 * d->H}};
        else if (r->layout)
            want = (prt_dims){3, {d->B, D, d->H}};
        else
            want = (prt_dims){3, {D, d->B, d->H}};
        if (g->nb_dims != want.nb_dims ||
            memcmp(g->d, want.d, sizeof(int64_t) * (size_t)want.nb_dims) != 0)
            return rnn_dims_fail(o, role, g, &want);
    }
    return PRT_OK;
}

static prt_status rnn_shapes_n(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                               const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                               int32_t nb_out, prt_expr_builder *eb)
{
    const rnn_op *r = (const rnn_op *)o;
    int32_t map[RNN_NB_INPUTS];
    const prt_expr *T, *B, *H, *D;
    prt_status st = rnn_map_inputs(o, nb_in, map);
    (void)sv, (void)nb_sv;
    if (st)
        return st;
    for (int32_t k = 0; k < 3; k++)
        if (in[k].nb_dims != 3)
            return op_fail(o, PRT_ERR_SHAPE, "%s has rank %d; it must be 3",
                           rnn_input_names[k], (int)in[k].nb_dims);
    T = in[0].d[r->layout ? 1 : 0];
    B = in[0].d[r->layout ? 0 : 1];
    H = r->hidden_size ? eb->constant(eb, r->hidden_size) : in[2].d[2];
    D = eb->constant(eb, r->direction == 2 ? 2 : 1);
    for (int32_t k = 0; k < nb_out; k++) {
        if (k == 0)
            out[0] = r->layout ? (prt_dim_exprs){4, {B, T, D, H}}
                               : (prt_dim_exprs){4, {T, D, B, H}};
        else
            out[k] =
                r->layout ? (prt_dim_exprs){3, {B, D, H}} : (prt_dim_exprs){3, {D, B, H}};
    }
    return PRT_OK;
}

static prt_status rnn_infer_n(const op_object *o, const prt_dims *in, int32_t nb_in,
                              prt_dims *out, int32_t nb_out)
{
    rnn_desc d;
    prt_status st = rnn_describe(o, in, nb_in, &d);
    if (st)
        return st;
    for (int32_t k = 0; k < nb_out; k++) {
        if (k == 0)
            out[0] = d.layout ? (prt_dims){4, {d.B, d.T, d.dirs, d.H}}
                              : (prt_dims){4, {d.T, d.dirs, d.B, d.H}};
        else
            out[k] = d.layout ? (prt_dims){3, {d.B, d.dirs, d.H}}
                              : (prt_dims){3, {d.dirs, d.B, d.H}};
    }
    return PRT_OK;
}

/* One direction's part of the CPU's workspace, in floats (rnn_run_dir lays
 * it out): W and R transposed, the biases, X W^T for every step, H R^T for
 * one, and the states; -1 on overflow. */
static int64_t rnn_dir_floats(int64_t tb, int64_t b, int64_t i, int64_t gh, int64_t h)
{
    int64_t parts[9], total = 0;
    if (!base_mul_i64(i, gh, &parts[0]) || !base_mul_i64(h, gh, &parts[1]) ||
        !base_mul_i64(tb, gh, &parts[4]) || !base_mul_i64(b, gh, &parts[5]) ||
        !base_mul_i64(b, h, &parts[6]))
        return -1;
    parts[2] = gh;
    parts[3] = h;
    parts[7] = parts[6];
    parts[8] = parts[6];
    for (int k = 0; k < 9; k++)
        if (!base_add_i64(total, parts[k], &total))
            return -1;
    return total;
}

/* The whole workspace: a part per direction (W's first dim), read from the
 * dims alone (any rank) so that it grows with every dim. */
static int64_t rnn_ws_floats(const prt_dims *in, int32_t nb_in, int64_t *out)
{
    int64_t tb, b, one;
    if (nb_in < 3 || in[0].nb_dims != 3 || in[2].nb_dims != 3 || in[1].nb_dims != 3) {
        *out = 0;
        return 1;
    }
    if (!base_mul_i64(in[0].d[0], in[0].d[1], &tb))
        return 0;
    b = in[0].d[0] > in[0].d[1] ? in[0].d[0] : in[0].d[1];
    one = rnn_dir_floats(tb, b, in[0].d[2], in[2].d[1], in[2].d[2]);
    return one >= 0 && base_mul_i64(one, in[1].d[0], out);
}

static int64_t rnn_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                             int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    int64_t n, bytes;
    (void)o, (void)dtype, (void)out, (void)nb_out;
    if (!rnn_ws_floats(in, nb_in, &n) || !base_mul_i64(n, (int64_t)sizeof(float), &bytes))
        return -1;
    return bytes;
}

float rnn_act_scalar(const rnn_desc *d, int32_t k, float x)
{
    float a = d->alpha[k], b = d->beta[k];
    switch (d->act[k]) {
    case RNN_ACT_SIGMOID:
        return 1.0f / (1.0f + expf(-x));
    case RNN_ACT_TANH:
        return tanhf(x);
    case RNN_ACT_RELU:
        return x < 0.0f ? 0.0f : x;
    case RNN_ACT_AFFINE:
        return a * x + b;
    case RNN_ACT_LEAKY_RELU:
        return x < 0.0f ? a * x : x;
    case RNN_ACT_THRESHOLDED_RELU:
        return x > a ? x : 0.0f;
    case RNN_ACT_SCALED_TANH:
        return a * tanhf(b * x);
    case RNN_ACT_HARD_SIGMOID: {
        float v = a * x + b;
        return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
    }
    case RNN_ACT_ELU:
        return x < 0.0f ? a * (expf(x) - 1.0f) : x;
    case RNN_ACT_SOFTSIGN:
        return x / (1.0f + fabsf(x));
    default: /* RNN_ACT_SOFTPLUS */
        return x > 20.0f ? x : log1pf(expf(x));
    }
}

/* Activation k of d over n floats in place, clipped first when d clips
 * and `clip` is set. */
static void rnn_act_array_c(const rnn_desc *d, int32_t k, float *v, int64_t n, int clip)
{
    if (clip && d->has_clip)
        for (int64_t i = 0; i < n; i++)
            v[i] = v[i] < -d->clip ? -d->clip : v[i] > d->clip ? d->clip : v[i];
    switch (d->act[k]) {
    case RNN_ACT_SIGMOID:
        op_sigmoid_f32(v, v, n);
        break;
    case RNN_ACT_TANH:
        op_tanh_f32(v, v, n);
        break;
    case RNN_ACT_RELU:
        for (int64_t i = 0; i < n; i++)
            v[i] = v[i] < 0.0f ? 0.0f : v[i];
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            v[i] = rnn_act_scalar(d, k, v[i]);
    }
}

static void rnn_act_array(const rnn_desc *d, int32_t k, float *v, int64_t n)
{
    rnn_act_array_c(d, k, v, n, 1);
}

/* One direction's run: the pointers rnn_run lays out, and the step. */
typedef struct rnn_dir {
    const rnn_desc *d;
    int32_t dir, rev;
    const int32_t *lens; /* NULL: every entry T steps */
    const float *xw;     /* [T * B rows (X's order), G H] */
    const float *bx;     /* [G H]: Wb + Rb (GRU's h block: Wb, + Rb without lbr) */
    const float *rbh;    /* [H]: GRU's Rb of h (lbr) */
    const float *p;      /* LSTM's peepholes [3 H] or NULL */
    float *hr;           /* [B, G H]: H R^T, then the gates */
    float *h, *c, *tmp;  /* [B, H] each */
    float *y;            /* or NULL */
    int64_t s;           /* the step */
    int32_t phase;       /* GRU without lbr: 0 before r H's product, 1 after */
    int32_t fused;       /* LSTM of Sigmoid, Tanh, Tanh: op_lstm_gates_f32 */
} rnn_dir;

static int64_t rnn_len(const rnn_dir *r, int64_t b)
{
    return r->lens ? r->lens[b] : r->d->T;
}

/* The row of X W^T for step t of batch entry b. */
static const float *rnn_xrow(const rnn_dir *r, int64_t t, int64_t b)
{
    const rnn_desc *d = r->d;
    int64_t row = d->layout ? b * d->T + t : t * d->B + b;
    return r->xw + row * d->gates * d->H;
}

static void rnn_gates_rows(void *arg, int64_t b0, int64_t b1)
{
    const rnn_dir *r = arg;
    const rnn_desc *d = r->d;
    const int64_t H = d->H, gh = d->gates * H, L = d->nb_per_dir * r->dir;
    for (int64_t b = b0; b < b1; b++) {
        const int64_t len = rnn_len(r, b);
        float *g = r->hr + b * gh, *h = r->h + b * H, *c = r->c + b * H;
        float *tmp = r->tmp + b * H;
        const float *xr, *bx = r->bx;
        int64_t t;
        if (r->s >= len)
            continue;
        t = r->rev ? len - 1 - r->s : r->s;
        xr = rnn_xrow(r, t, b);
        if (d->kind == RNN_KIND_RNN) {
            for (int64_t j = 0; j < H; j++)
                g[j] += xr[j] + bx[j];
            rnn_act_array(d, L, g, H);
            memcpy(h, g, sizeof(float) * (size_t)H);
        } else if (d->kind == RNN_KIND_GRU) {
            float *z = g, *rg = g + H, *hh = g + 2 * H;
            if (r->phase == 0) {
                for (int64_t j = 0; j < 2 * H; j++)
                    g[j] += xr[j] + bx[j];
                rnn_act_array(d, L, g, 2 * H);
                if (!d->linear_before_reset) {
                    for (int64_t j = 0; j < H; j++)
                        tmp[j] = rg[j] * h[j];
                    continue; /* hh waits for (r * H) Rh^T */
                }
                for (int64_t j = 0; j < H; j++)
                    hh[j] = xr[2 * H + j] + bx[2 * H + j] + rg[j] * (hh[j] + r->rbh[j]);
            } else {
                for (int64_t j = 0; j < H; j++)
                    hh[j] += xr[2 * H + j] + bx[2 * H + j];
            }
            rnn_act_array(d, L + 1, hh, H);
            for (int64_t j = 0; j < H; j++)
                h[j] = (1.0f - z[j]) * hh[j] + z[j] * h[j];
        } else if (r->fused) { /* LSTM of the default functions: one pass */
            const op_lstm_row row = {g, xr, bx,      r->p,        c,
                                     h, H,  d->clip, d->has_clip, d->input_forget};
            op_lstm_gates_f32(&row);
        } else { /* LSTM: i, o, f, c */
            float *gi = g, *go = g + H, *gf = g + 2 * H, *gc = g + 3 * H;
            const float *p = r->p;
            for (int64_t j = 0; j < gh; j++)
                g[j] += xr[j] + bx[j];
            if (p)
                for (int64_t j = 0; j < H; j++) {
                    gi[j] += p[j] * c[j];
                    gf[j] += p[2 * H + j] * c[j];
                }
            rnn_act_array(d, L, gi, H);
            if (d->input_forget)
                for (int64_t j = 0; j < H; j++)
                    gf[j] = 1.0f - gi[j];
            else
                rnn_act_array(d, L, gf, H);
            rnn_act_array(d, L + 1, gc, H);
            for (int64_t j = 0; j < H; j++)
                c[j] = gf[j] * c[j] + gi[j] * gc[j];
            if (p)
                for (int64_t j = 0; j < H; j++)
                    go[j] += p[H + j] * c[j];
            rnn_act_array(d, L, go, H);
            /* h(C) unclipped: clip bounds the gates' inputs (ONNX Runtime). */
            memcpy(tmp, c, sizeof(float) * (size_t)H);
            rnn_act_array_c(d, L + 2, tmp, H, 0);
            for (int64_t j = 0; j < H; j++)
                h[j] = go[j] * tmp[j];
        }
        if (r->y) {
            int64_t at = d->layout ? (b * d->T + t) * d->dirs + r->dir
                                   : (t * d->dirs + r->dir) * d->B + b;
            memcpy(r->y + at * H, h, sizeof(float) * (size_t)H);
        }
    }
}

/* Initial state [D, B, H] (layout 1: [B, D, H]) of direction dir into
 * s [B, H]; zeros when not given. */
static void rnn_state_in(const rnn_desc *d, const float *src, int32_t dir, float *s)
{
    const size_t row = sizeof(float) * (size_t)d->H;
    for (int64_t b = 0; b < d->B; b++) {
        if (!src)
            memset(s + b * d->H, 0, row);
        else
            memcpy(s + b * d->H,
                   src + (d->layout ? b * d->dirs + dir : dir * d->B + b) * d->H, row);
    }
}

/* The final state s [B, H] of direction dir into dst (as rnn_state_in
 * reads it); 0 for an entry of length 0, as ONNX Runtime gives. */
static void rnn_state_out(const rnn_desc *d, const float *s, const int32_t *lens,
                          int32_t dir, float *dst)
{
    const size_t row = sizeof(float) * (size_t)d->H;
    if (dst)
        for (int64_t b = 0; b < d->B; b++) {
            float *to = dst + (d->layout ? b * d->dirs + dir : dir * d->B + b) * d->H;
            if (lens && lens[b] == 0)
                memset(to, 0, row);
            else
                memcpy(to, s + b * d->H, row);
        }
}

/* m [rows, cols] transposed into t [cols, rows]. */
static void rnn_transpose(const float *m, int64_t rows, int64_t cols, float *t)
{
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            t[j * rows + i] = m[i * cols + j];
}

/* What a direction reads of W, R and B, laid out as the start of its
 * workspace part (rnn_dir_floats): W^T [I, G H], R^T [H, G H], the summed
 * biases bx [G H] (GRU with linear_before_reset: its h block Wb alone)
 * and that h block's Rb [H]. */
static int64_t rnn_weights_floats(int64_t I, int64_t gh, int64_t H)
{
    return I * gh + H * gh + gh + H;
}

static void rnn_fill_weights(int32_t kind, int32_t lbr, int64_t I, int64_t gh, int64_t H,
                             const float *W, const float *R, const float *Bias,
                             int32_t dir, float *dst)
{
    float *wt = dst, *rt = wt + I * gh, *bx = rt + H * gh, *rbh = bx + gh;
    const float *bw = Bias ? Bias + dir * 2 * gh : NULL;
    rnn_transpose(W + dir * gh * I, gh, I, wt);
    rnn_transpose(R + dir * gh * H, gh, H, rt);
    for (int64_t j = 0; j < gh; j++) {
        int h_rb = kind == RNN_KIND_GRU && lbr && j >= 2 * H;
        bx[j] = bw ? bw[j] + (h_rb ? 0.0f : bw[gh + j]) : 0.0f;
        if (h_rb)
            rbh[j - 2 * H] = bw ? bw[gh + j] : 0.0f;
    }
}

/* rnn_fill_weights of every direction, made once from constant W, R and
 * (if given) B when a CPU engine is built or loaded (op_class.prepare),
 * so runs skip the transposes: the same floats, so the same bits. */
typedef struct rnn_prep {
    op_const head;
    const void *w, *r, *b; /* the constants: a run checks it is given them */
    prt_dims wd, rd, bd;
    float *data; /* dirs x rnn_weights_floats, in this block */
} rnn_prep;

static prt_status rnn_prepare(const op_object *o, const prt_tensor_desc *in,
                              int32_t nb_in, const void *const *data, op_const **out)
{
    const rnn_op *r = (const rnn_op *)o;
    int32_t map[RNN_NB_INPUTS];
    const prt_dims *w, *rd;
    int64_t D, gh, I, H, per, total;
    rnn_prep *pp;
    if (rnn_map_inputs(o, nb_in, map) != PRT_OK)
        return PRT_OK; /* the run reports it */
    w = &in[map[RNN_W]].dims;
    rd = &in[map[RNN_R]].dims;
    if (!data[map[RNN_W]] || !data[map[RNN_R]] ||
        (map[RNN_B] >= 0 && !data[map[RNN_B]]) || w->nb_dims != 3 || rd->nb_dims != 3 ||
        in[map[RNN_W]].dtype != PRT_FLOAT32)
        return PRT_OK;
    D = w->d[0], gh = w->d[1], I = w->d[2], H = rd->d[2];
    if (D != (r->direction == 2 ? 2 : 1) || rd->d[0] != D || rd->d[1] != gh ||
        gh != rnn_gates(rnn_kind(o)) * H || (r->hidden_size && H != r->hidden_size) ||
        H <= 0 || I <= 0)
        return PRT_OK;
    if (map[RNN_B] >= 0) {
        const prt_dims *bd = &in[map[RNN_B]].dims;
        if (bd->nb_dims != 2 || bd->d[0] != D || bd->d[1] != 2 * gh)
            return PRT_OK;
    }
    per = rnn_weights_floats(I, gh, H);
    total = (int64_t)sizeof(rnn_prep) + (int64_t)sizeof(float) * per * D;
    pp = (rnn_prep *)op_const_alloc((size_t)total);
    if (!pp)
        return op_fail(o, PRT_ERR_OUT_OF_MEMORY, "out of memory for its weights");
    pp->w = data[map[RNN_W]];
    pp->r = data[map[RNN_R]];
    pp->b = map[RNN_B] >= 0 ? data[map[RNN_B]] : NULL;
    pp->wd = *w;
    pp->rd = *rd;
    if (pp->b)
        pp->bd = in[map[RNN_B]].dims;
    pp->data = (float *)(pp + 1);
    for (int32_t dir = 0; dir < D; dir++)
        rnn_fill_weights(rnn_kind(o), r->lbr, I, gh, H, pp->w, pp->r, pp->b, dir,
                         pp->data + dir * per);
    *out = &pp->head;
    return PRT_OK;
}

/* o's prepared weights when this run's W, R and B are the constants they
 * were made from, else NULL. */
static const rnn_prep *rnn_prep_for(const op_object *o, const rnn_desc *d,
                                    const prt_tensor_desc *in, const void *const *x)
{
    const rnn_prep *pp = (const rnn_prep *)o->cst;
    const int32_t b = d->in[RNN_B];
    if (!pp || x[d->in[RNN_W]] != pp->w || x[d->in[RNN_R]] != pp->r ||
        (b >= 0 ? x[b] : NULL) != pp->b ||
        memcmp(&in[d->in[RNN_W]].dims, &pp->wd, sizeof pp->wd) != 0 ||
        memcmp(&in[d->in[RNN_R]].dims, &pp->rd, sizeof pp->rd) != 0 ||
        (b >= 0 && memcmp(&in[b].dims, &pp->bd, sizeof pp->bd) != 0))
        return NULL;
    return pp;
}

/* One run's inputs and outputs, for each direction's job. */
typedef struct rnn_job {
    const rnn_desc *d;
    const void *const *x;
    void *const *ys;
    int32_t nb_out;
    const int32_t *lens;
    int64_t steps;
    float *ws;            /* rnn_dir_floats per direction */
    const rnn_prep *prep; /* or NULL: the weights go into ws */
} rnn_job;

/* Direction dir of a run, whole, in its own part of the workspace: W and
 * R transposed, the biases, X W^T for every step, then the steps. */
static void rnn_run_dir(const rnn_job *job, int32_t dir)
{
    const rnn_desc *d = job->d;
    const void *const *x = job->x;
    const int64_t H = d->H, gh = d->gates * H, TB = d->T * d->B;
    const int64_t per = rnn_weights_floats(d->I, gh, H);
    float *own = job->ws + dir * rnn_dir_floats(d->T * d->B, d->B, d->I, gh, H);
    const float *wt = job->prep ? job->prep->data + dir * per : own;
    const float *rt = wt + d->I * gh, *bx = rt + H * gh, *rbh = bx + gh;
    float *xw = own + per, *hr = xw + TB * gh, *h = hr + d->B * gh, *c = h + d->B * H;
    float *tmp = c + d->B * H;
    const float *h0 = d->in[RNN_H0] >= 0 ? x[d->in[RNN_H0]] : NULL;
    const float *c0 = d->in[RNN_C0] >= 0 ? x[d->in[RNN_C0]] : NULL;
    const float *P = d->in[RNN_P] >= 0 ? x[d->in[RNN_P]] : NULL;
    const int gru2 = d->kind == RNN_KIND_GRU && !d->linear_before_reset;
    const int32_t *fn = d->act + dir * d->nb_per_dir;
    /* Gate rows a range takes: a few thousand floats of gate work. */
    const int64_t grain = gh >= 4096 ? 1 : 4096 / gh;
    rnn_dir r = {.d = d,
                 .dir = dir,
                 .rev = d->reverse || dir == 1,
                 .lens = job->lens,
                 .xw = xw,
                 .bx = bx,
                 .rbh = rbh,
                 .p = P ? P + dir * 3 * H : NULL,
                 .hr = hr,
                 .h = h,
                 .c = c,
                 .tmp = tmp,
                 .y = job->nb_out > 0 ? job->ys[0] : NULL};
    r.fused = d->kind == RNN_KIND_LSTM && fn[0] == RNN_ACT_SIGMOID &&
              fn[1] == RNN_ACT_TANH && fn[2] == RNN_ACT_TANH;
    memset(tmp, 0, sizeof(float) * (size_t)(d->B * H));
    if (!job->prep)
        rnn_fill_weights(d->kind, d->linear_before_reset, d->I, gh, H, x[d->in[RNN_W]],
                         x[d->in[RNN_R]], d->in[RNN_B] >= 0 ? x[d->in[RNN_B]] : NULL, dir,
                         own);
    if (TB > 0 && d->I > 0)
        op_gemm_f32_par(0, 0, TB, gh, d->I, x[d->in[RNN_X]], d->I, wt, gh, xw, gh, NULL);
    else
        memset(xw, 0, sizeof(float) * (size_t)(TB * gh));
    rnn_state_in(d, h0, dir, h);
    rnn_state_in(d, d->kind == RNN_KIND_LSTM ? c0 : NULL, dir, c);
    for (int64_t s = 0; s < job->steps; s++) {
        r.s = s;
        r.phase = 0;
        op_gemm_f32_par(0, 0, d->B, gru2 ? 2 * H : gh, H, h, H, rt, gh, hr, gh, NULL);
        base_parallel_for(d->B, grain, rnn_gates_rows, &r);
        if (gru2) {
            op_gemm_f32_par(0, 0, d->B, H, H, tmp, H, rt + 2 * H, gh, hr + 2 * H, gh,
                            NULL);
            r.phase = 1;
            base_parallel_for(d->B, grain, rnn_gates_rows, &r);
        }
    }
    if (job->nb_out > 1)
        rnn_state_out(d, h, job->lens, dir, job->ys[1]);
    if (job->nb_out > 2)
        rnn_state_out(d, c, job->lens, dir, job->ys[2]);
}

static void rnn_dirs_range(void *arg, int64_t d0, int64_t d1)
{
    for (int64_t dir = d0; dir < d1; dir++)
        rnn_run_dir(arg, (int32_t)dir);
}

static prt_status rnn_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *x, void *const *ys, void *ws, void *stream)
{
    prt_dims dims[RNN_NB_INPUTS];
    rnn_desc d;
    rnn_job job = {&d, x, ys, nb_out, NULL, 0, ws, NULL};
    prt_status st;
    (void)dtype, (void)out, (void)stream;
    for (int32_t i = 0; i < nb_in; i++)
        dims[i] = in[i].dims;
    st = rnn_describe(o, dims, nb_in, &d);
    if (st)
        return st;
    job.prep = rnn_prep_for(o, &d, in, x);
    job.steps = d.T;
    if (d.in[RNN_SEQ] >= 0) {
        job.lens = x[d.in[RNN_SEQ]];
        job.steps = 0;
        for (int64_t b = 0; b < d.B; b++) {
            if (job.lens[b] < 0 || job.lens[b] > d.T)
                return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                               "sequence_lens[%lld] is %d; it must lie in [0, %lld] (T)",
                               (long long)b, (int)job.lens[b], (long long)d.T);
            job.steps = job.lens[b] > job.steps ? job.lens[b] : job.steps;
        }
        if (nb_out > 0 && ys[0])
            memset(ys[0], 0, sizeof(float) * (size_t)(d.T * d.B * d.dirs * d.H));
    }
    if (d.B == 0 || d.H == 0)
        return PRT_OK;
    /* A bidirectional layer's directions are independent: each takes a
     * thread, its products and gates then serial (a nested parallel loop
     * runs on its caller's thread, in the same blocks, so the bits do not
     * depend on the thread count), unless more than two threads could
     * share steps whose products are large (op_gemm_split's blocks). One
     * direction spreads its products and gates over the threads. */
    if (d.dirs == 2 &&
        (base_parallel_threads() <= 2 || d.B * d.gates * d.H * d.H < ((int64_t)1 << 17)))
        base_parallel_for(d.dirs, 1, rnn_dirs_range, &job);
    else
        rnn_dirs_range(&job, 0, d.dirs);
    return PRT_OK;
}

#define RNN_CLASS(name, k, top)                                                          \
    static const op_class name = {                                                       \
        .kind = (k),                                                                     \
        .min_inputs = 3,                                                                 \
        .max_inputs = (top),                                                             \
        .dtypes = OP_DT(PRT_FLOAT32),                                                    \
        .size = sizeof(rnn_op),                                                          \
        .alias_input = -1,                                                               \
        .parse = rnn_parse,                                                              \
        .serialize = rnn_serialize,                                                      \
        .workspace = rnn_workspace,                                                      \
        .run = rnn_run,                                                                  \
        .blas = 1,                                                                       \
        .in_dtypes = rnn_in_dtypes,                                                      \
        .nb_outputs = rnn_nb_outputs,                                                    \
        .shapes_n = rnn_shapes_n,                                                        \
        .infer_n = rnn_infer_n,                                                          \
        .out_dtype_n = rnn_out_dtype_n,                                                  \
        .prepare = rnn_prepare,                                                          \
    }

RNN_CLASS(lstm_class, RNN_KIND_LSTM, 8);
RNN_CLASS(gru_class, RNN_KIND_GRU, 6);
RNN_CLASS(rnn_class, RNN_KIND_RNN, 6);

#define RNN_COMMON_SCHEMA                                                                \
    {"direction", PRT_FIELD_CHAR, -1, "forward (default), reverse or bidirectional"},    \
        {"hidden_size", PRT_FIELD_INT32, 1, "H; default 0: R's last dim"},               \
        {"layout", PRT_FIELD_INT32, 1, "0: X [T, B, I] (default); 1: [B, T, I]"},        \
        {"clip", PRT_FIELD_FLOAT32, 1, "bound of the gates' inputs; default none"},      \
        {"activations", PRT_FIELD_CHAR, -1, "function names, each NUL-terminated"},      \
        {"activation_alpha", PRT_FIELD_FLOAT32, -1, "alphas, in the functions' order"},  \
        {"activation_beta", PRT_FIELD_FLOAT32, -1, "betas, in the functions' order"},    \
        {"inputs", PRT_FIELD_INT32, 1,                                                   \
         "bits of B, sequence_lens, initial_h(, initial_c, P) given; -1: by position"},  \
    {                                                                                    \
        "nb_outputs", PRT_FIELD_INT32, 1, "outputs made: Y, Y_h(, Y_c); default all"     \
    }

static const prt_field_schema lstm_schema[] = {
    RNN_COMMON_SCHEMA,
    {"input_forget", PRT_FIELD_INT32, 1, "1: the forget gate is 1 - input gate"},
};
static const prt_field_schema gru_schema[] = {
    RNN_COMMON_SCHEMA,
    {"linear_before_reset", PRT_FIELD_INT32, 1, "1: r applied after R's product"},
};
static const prt_field_schema rnn_schema[] = {RNN_COMMON_SCHEMA};

const prt_plugin_creator op_lstm_creator =
    OP_CREATOR("LSTM", lstm_class, lstm_schema, 10);
const prt_plugin_creator op_gru_creator = OP_CREATOR("GRU", gru_class, gru_schema, 10);
const prt_plugin_creator op_rnn_creator = OP_CREATOR("RNN", rnn_class, rnn_schema, 9);
