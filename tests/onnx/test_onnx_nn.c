/*
 * The importer's rules for the normalization, linear and spatial ops, with
 * one-node models built in C (protobuf-c), imported, built and run:
 *  - Softmax and LogSoftmax before opset 13 coerce X to 2-D at `axis`
 *    (default 1), from 13 they work along one axis (default -1);
 *  - Resize's scales and roi come from constants (an initializer, a
 *    Constant node's tensor or value_floats) and sizes from a shape input;
 *    empty inputs at opset 11 are none; opset 10 and Upsample (attribute
 *    at 7, input at 9) use asymmetric coordinates and ONNX Runtime's
 *    nearest rounding; expected values from ONNX's operator documentation;
 *  - a scales input that is not a constant, an Upsample scale below 1 and
 *    a nearest Resize 10 that both up- and downsamples are refused, naming
 *    the node;
 *  - LayerNormalization makes the outputs the node names, up to the last
 *    (an empty one in between is computed and left unnamed).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "plugrt/onnx.h"
#include "testutil.h"

/* ---- one-node models ------------------------------------------------------------ */

/* The messages of one model live in a bump allocator, reset per model. */
static _Alignas(16) unsigned char heap[1 << 16];
static size_t heap_used;

static void *M(size_t n)
{
    void *p = heap + heap_used;
    heap_used += (n + 15) & ~(size_t)15;
    if (heap_used > sizeof heap) {
        fprintf(stderr, "test_onnx_nn: model heap exhausted\n");
        exit(1);
    }
    memset(p, 0, n);
    return p;
}

static char *Mstr(const char *s)
{
    return strcpy(M(strlen(s) + 1), s);
}

/* An attribute: 'i' INT, 'I' INTS, 'f' FLOAT, 'F' FLOATS, 's' STRING. */
typedef struct m_attr {
    const char *name;
    char kind;
    int64_t i;
    float f;
    const char *s;
    int n;
    const int64_t *ints;
    const float *floats;
} m_attr;

/* A constant value: how 0 an initializer, 1 a Constant node's TENSOR,
 * 2 a Constant node's value_floats; int64 when ints is set. n may be 0. */
typedef struct m_const {
    const char *name;
    int how;
    int n;
    const float *floats;
    const int64_t *ints;
} m_const;

typedef struct m_model {
    int64_t opset;
    const char *op;
    const char *in[4], *out[3]; /* node inputs ("" omitted), outputs */
    int nb_in, nb_out;
    m_attr attrs[5];
    int nb_attrs;
    m_const consts[3];
    int nb_consts;
    prt_dims x;  /* the graph input "X", float */
    prt_dims x2; /* a second float graph input "X2" when nb_dims > 0 */
} m_model;

/* Shorthands for the tables below. */
#define A_STR(nm, v)                                                                     \
    {                                                                                    \
        .name = (nm), .kind = 's', .s = (v)                                              \
    }
#define A_INT(nm, v)                                                                     \
    {                                                                                    \
        .name = (nm), .kind = 'i', .i = (v)                                              \
    }
#define A_FLOAT(nm, v)                                                                   \
    {                                                                                    \
        .name = (nm), .kind = 'f', .f = (v)                                              \
    }
#define A_FLOATS(nm, cnt, v)                                                             \
    {                                                                                    \
        .name = (nm), .kind = 'F', .n = (cnt), .floats = (v)                             \
    }
#define C_FLOATS(nm, how_, cnt, v)                                                       \
    {                                                                                    \
        .name = (nm), .how = (how_), .n = (cnt), .floats = (v)                           \
    }
#define C_INTS(nm, cnt, v)                                                               \
    {                                                                                    \
        .name = (nm), .n = (cnt), .ints = (v)                                            \
    }

static Onnx__AttributeProto *m_attribute(const m_attr *a)
{
    Onnx__AttributeProto *p = M(sizeof *p);
    onnx__attribute_proto__init(p);
    p->name = Mstr(a->name);
    p->has_type = 1;
    switch (a->kind) {
    case 'i':
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
        p->has_i = 1;
        p->i = a->i;
        break;
    case 'I':
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
        p->n_ints = (size_t)a->n;
        p->ints = M(sizeof(int64_t) * (size_t)a->n);
        memcpy(p->ints, a->ints, sizeof(int64_t) * (size_t)a->n);
        break;
    case 'f':
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
        p->has_f = 1;
        p->f = a->f;
        break;
    case 'F':
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
        p->n_floats = (size_t)a->n;
        p->floats = M(sizeof(float) * (size_t)a->n);
        memcpy(p->floats, a->floats, sizeof(float) * (size_t)a->n);
        break;
    default:
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
        p->has_s = 1;
        p->s.len = strlen(a->s);
        p->s.data = (uint8_t *)Mstr(a->s);
        break;
    }
    return p;
}

static Onnx__TensorProto *m_tensor(const m_const *c)
{
    Onnx__TensorProto *t = M(sizeof *t);
    size_t es = c->ints ? sizeof(int64_t) : sizeof(float);
    onnx__tensor_proto__init(t);
    t->name = Mstr(c->name);
    t->has_data_type = 1;
    t->data_type = c->ints ? ONNX__TENSOR_PROTO__DATA_TYPE__INT64
                           : ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    t->n_dims = 1;
    t->dims = M(sizeof(int64_t));
    t->dims[0] = c->n;
    t->has_raw_data = 1;
    t->raw_data.len = es * (size_t)c->n;
    t->raw_data.data = M(t->raw_data.len + 1);
    if (c->n)
        memcpy(t->raw_data.data,
               c->ints ? (const void *)c->ints : (const void *)c->floats,
               t->raw_data.len);
    return t;
}

static Onnx__NodeProto *m_node(const char *op, int nb_in, const char *const *in,
                               int nb_out, const char *const *out)
{
    Onnx__NodeProto *n = M(sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = Mstr(op);
    n->n_input = (size_t)nb_in;
    n->input = M(sizeof(char *) * (size_t)(nb_in + 1));
    for (int k = 0; k < nb_in; k++)
        n->input[k] = Mstr(in[k]);
    n->n_output = (size_t)nb_out;
    n->output = M(sizeof(char *) * (size_t)(nb_out + 1));
    for (int k = 0; k < nb_out; k++)
        n->output[k] = Mstr(out[k]);
    n->attribute = M(sizeof(void *) * 8);
    return n;
}

static Onnx__ValueInfoProto *m_value(const char *name, const prt_dims *d)
{
    Onnx__ValueInfoProto *v = M(sizeof *v);
    onnx__value_info_proto__init(v);
    v->name = Mstr(name);
    if (d) {
        Onnx__TypeProto *tp = M(sizeof *tp);
        Onnx__TypeProto__Tensor *tt = M(sizeof *tt);
        Onnx__TensorShapeProto *sh = M(sizeof *sh);
        onnx__type_proto__init(tp);
        onnx__type_proto__tensor__init(tt);
        onnx__tensor_shape_proto__init(sh);
        tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
        tp->tensor_type = tt;
        tt->has_elem_type = 1;
        tt->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
        tt->shape = sh;
        sh->n_dim = (size_t)d->nb_dims;
        sh->dim = M(sizeof(void *) * (size_t)(d->nb_dims + 1));
        for (int32_t i = 0; i < d->nb_dims; i++) {
            sh->dim[i] = M(sizeof *sh->dim[i]);
            onnx__tensor_shape_proto__dimension__init(sh->dim[i]);
            sh->dim[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            sh->dim[i]->dim_value = d->d[i];
        }
        v->type = tp;
    }
    return v;
}

/* The model's bytes, in memory the caller frees. */
static uint8_t *m_pack(const m_model *m, size_t *size)
{
    Onnx__ModelProto mp;
    Onnx__OperatorSetIdProto ops, *opsp = &ops;
    Onnx__GraphProto g;
    Onnx__NodeProto *nodes[4], *n;
    Onnx__ValueInfoProto *ins[2], *outs[3];
    Onnx__TensorProto *inits[3];
    uint8_t *buf;
    heap_used = 0;
    onnx__graph_proto__init(&g);
    g.name = Mstr("g");
    g.node = nodes;
    g.input = ins;
    g.output = outs;
    g.initializer = inits;
    for (int k = 0; k < m->nb_consts; k++) {
        const m_const *c = &m->consts[k];
        const char *name = c->name;
        if (c->how == 0) {
            inits[g.n_initializer++] = m_tensor(c);
            continue;
        }
        n = m_node("Constant", 0, NULL, 1, &name);
        if (c->how == 1) {
            n->attribute[0] = M(sizeof *n->attribute[0]);
            onnx__attribute_proto__init(n->attribute[0]);
            n->attribute[0]->name = Mstr("value");
            n->attribute[0]->has_type = 1;
            n->attribute[0]->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
            n->attribute[0]->t = m_tensor(c);
        } else {
            m_attr a = A_FLOATS("value_floats", c->n, c->floats);
            n->attribute[0] = m_attribute(&a);
        }
        n->n_attribute = 1;
        nodes[g.n_node++] = n;
    }
    n = m_node(m->op, m->nb_in, m->in, m->nb_out, m->out);
    for (int k = 0; k < m->nb_attrs; k++)
        n->attribute[n->n_attribute++] = m_attribute(&m->attrs[k]);
    nodes[g.n_node++] = n;
    ins[g.n_input++] = m_value("X", &m->x);
    if (m->x2.nb_dims > 0)
        ins[g.n_input++] = m_value("X2", &m->x2);
    for (int k = 0; k < m->nb_out; k++)
        if (m->out[k][0])
            outs[g.n_output++] = m_value(m->out[k], NULL);
    onnx__model_proto__init(&mp);
    onnx__operator_set_id_proto__init(&ops);
    ops.domain = Mstr("");
    ops.has_version = 1;
    ops.version = m->opset;
    mp.has_ir_version = 1;
    mp.ir_version = 8;
    mp.n_opset_import = 1;
    mp.opset_import = &opsp;
    mp.graph = &g;
    *size = onnx__model_proto__get_packed_size(&mp);
    buf = malloc(*size);
    onnx__model_proto__pack(&mp, buf);
    return buf;
}

/* Imports m into *net (which the caller destroys). */
static prt_status m_import(const m_model *m, prt_network **net)
{
    size_t size;
    uint8_t *bytes = m_pack(m, &size);
    prt_onnx_parser *p = NULL;
    prt_status st = prt_onnx_parser_create(NULL, &p);
    *net = NULL;
    if (!st)
        st = prt_onnx_parser_parse_bytes(p, bytes, size, NULL, net);
    prt_onnx_parser_destroy(p);
    free(bytes);
    return st;
}

/* Imports, builds and runs m with X = x; output `name` into y (cap floats)
 * and its dims into *yd. */
static prt_status m_run(const m_model *m, const float *x, const char *name, float *y,
                        size_t cap, prt_dims *yd)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    prt_status st = m_import(m, &net);
    if (!st)
        st = prt_builder_config_create(&cfg);
    if (!st)
        st = prt_engine_build(net, cfg, NULL, &e);
    if (!st)
        st = prt_context_create(e, &ctx);
    if (!st)
        st = prt_context_set_tensor_address(ctx, "X", (void *)x);
    for (int k = 0; !st && k < m->nb_out; k++) {
        static float scratch[4096];
        prt_dims d;
        if (!m->out[k][0])
            continue;
        st = prt_context_get_tensor_shape(ctx, m->out[k], &d);
        if (!st && strcmp(m->out[k], name) == 0) {
            *yd = d;
            st = tu_volume(&d) <= (int64_t)cap
                     ? prt_context_set_tensor_address(ctx, name, y)
                     : PRT_ERR_SHAPE;
        } else if (!st) {
            st = prt_context_set_tensor_address(ctx, m->out[k], scratch);
        }
    }
    if (!st)
        st = prt_context_enqueue(ctx, NULL);
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return st;
}

/* got (dims gd) against want (n values, dims wd) within tol. */
static void m_check(const char *what, const float *got, const prt_dims *gd,
                    const prt_dims *wd, const double *want, double tol)
{
    int same = gd->nb_dims == wd->nb_dims;
    for (int32_t i = 0; same && i < gd->nb_dims; i++)
        same = gd->d[i] == wd->d[i];
    tu_checks++;
    if (!same) {
        fprintf(stderr, "%s: the output's dims differ\n", what);
        tu_failures++;
        return;
    }
    for (int64_t i = 0; i < tu_volume(wd); i++) {
        tu_checks++;
        if (!(fabs((double)got[i] - want[i]) <= tol * fmax(1.0, fabs(want[i])))) {
            fprintf(stderr, "%s: element %lld is %.9g, wanted %.9g\n", what, (long long)i,
                    (double)got[i], want[i]);
            tu_failures++;
            return;
        }
    }
}

/* ---- Softmax and LogSoftmax -----------------------------------------------------------
 */

static void ref_sm(const float *x, int64_t rows, int64_t n, int64_t inner, int log_sm,
                   double *y)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < inner; j++) {
            double mx = -INFINITY, s = 0.0;
            const float *xr = x + r * n * inner + j;
            for (int64_t k = 0; k < n; k++)
                mx = fmax(mx, xr[k * inner]);
            for (int64_t k = 0; k < n; k++)
                s += exp(xr[k * inner] - mx);
            for (int64_t k = 0; k < n; k++)
                y[r * n * inner + j + k * inner] =
                    log_sm ? xr[k * inner] - mx - log(s) : exp(xr[k * inner] - mx) / s;
        }
}

static int test_softmax_opsets(void)
{
    float x[24];
    double want[24];
    prt_dims xd = {3, {2, 3, 4}};
    for (int i = 0; i < 24; i++)
        x[i] = (float)sin(i * 1.7) * 3.0f;
    for (int log_sm = 0; log_sm < 2; log_sm++)
        for (int cs = 0; cs < 4; cs++) {
            /* opset 12 with axis 1, opset 12 without (1), opset 13 with
             * axis 1 (one axis), opset 13 without (-1). */
            int64_t opset = cs < 2 ? 12 : 13;
            int with_axis = cs % 2 == 0;
            m_model m = {.opset = opset,
                         .op = log_sm ? "LogSoftmax" : "Softmax",
                         .in = {"X"},
                         .out = {"Y"},
                         .nb_in = 1,
                         .nb_out = 1,
                         .x = xd};
            float y[24];
            prt_dims yd;
            char what[64];
            if (with_axis) {
                m.attrs[0] = (m_attr)A_INT("axis", 1);
                m.nb_attrs = 1;
            }
            if (opset == 12)
                ref_sm(x, 2, 12, 1, log_sm, want); /* rows of [3 x 4] */
            else if (with_axis)
                ref_sm(x, 2, 3, 4, log_sm, want);
            else
                ref_sm(x, 6, 4, 1, log_sm, want);
            snprintf(what, sizeof what, "%s opset %lld%s", m.op, (long long)opset,
                     with_axis ? " axis 1" : "");
            CHECK_OK(m_run(&m, x, "Y", y, 24, &yd));
            m_check(what, y, &yd, &xd, want, 1e-5);
        }
    return 0;
}

/* ---- Resize and Upsample
 * --------------------------------------------------------------- */

static const float X4[4] = {1, 2, 3, 4};             /* [1, 1, 2, 2] */
static const float X8[8] = {1, 2, 3, 4, 5, 6, 7, 8}; /* [1, 1, 2, 4] */

static int test_resize_import(void)
{
    static const float sc2[4] = {1, 1, 2, 2}, sc23[4] = {1, 1, 2, 3};
    static const float sc06[4] = {1, 1, 0.6f, 0.6f}, sc_mixed[4] = {1, 1, 0.5f, 2};
    static const int64_t sz3[4] = {1, 1, 1, 3}, sz33[4] = {1, 1, 3, 3};
    static const float roi[8] = {0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f};
    /* ONNX's documented outputs (Operators.md, Resize and Upsample). */
    static const double lin[16] = {1,   1.25, 1.75, 2,   1.5, 1.75, 2.25, 2.5,
                                   2.5, 2.75, 3.25, 3.5, 3,   3.25, 3.75, 4};
    static const double near23[24] = {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,
                                      3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4};
    static const double down10[2] = {1, 3}, down_sizes[3] = {1, 2, 4};
    static const double crop[9] = {7.6f, 7.9f, 8.2f, 8.8f, 9.1f, 9.4f, 10, 10.3f, 10.6f};
    const prt_dims x22 = {4, {1, 1, 2, 2}}, x24 = {4, {1, 1, 2, 4}};
    const prt_dims y44 = {4, {1, 1, 4, 4}}, y46 = {4, {1, 1, 4, 6}};
    const prt_dims y12 = {4, {1, 1, 1, 2}}, y13 = {4, {1, 1, 1, 3}},
                   y33 = {4, {1, 1, 3, 3}};
    float y[64], x16[16];
    prt_dims yd;
    for (int i = 0; i < 16; i++)
        x16[i] = (float)(i + 1);
    /* Opset 13: scales an initializer, linear half_pixel. */
    {
        m_model m = {13,
                     "Resize",
                     {"X", "", "S"},
                     {"Y"},
                     3,
                     1,
                     {A_STR("mode", "linear")},
                     1,
                     {C_FLOATS("S", 0, 4, sc2)},
                     1,
                     x22,
                     {0, {0}}};
        CHECK_OK(m_run(&m, X4, "Y", y, 64, &yd));
        m_check("Resize 13 linear", y, &yd, &y44, lin, 1e-6);
    }
    /* Scales from a Constant's tensor and from its value_floats. */
    for (int how = 1; how <= 2; how++) {
        m_model m = {13,
                     "Resize",
                     {"X", "", "S"},
                     {"Y"},
                     3,
                     1,
                     {A_STR("mode", "nearest")},
                     1,
                     {C_FLOATS("S", how, 4, sc23)},
                     1,
                     x22,
                     {0, {0}}};
        CHECK_OK(m_run(&m, X4, "Y", y, 64, &yd));
        m_check(how == 1 ? "Resize nearest, Constant tensor" : "Resize, value_floats", y,
                &yd, &y46, near23, 0);
    }
    /* Opset 11: empty roi and scales, sizes an initializer. */
    {
        m_model m = {
            11,
            "Resize",
            {"X", "R", "S", "Z"},
            {"Y"},
            4,
            1,
            {A_STR("mode", "nearest")},
            1,
            {C_FLOATS("R", 1, 0, NULL), C_FLOATS("S", 1, 0, NULL), C_INTS("Z", 4, sz3)},
            3,
            x24,
            {0, {0}}};
        CHECK_OK(m_run(&m, X8, "Y", y, 64, &yd));
        m_check("Resize 11 sizes", y, &yd, &y13, down_sizes, 0);
    }
    /* tf_crop_and_resize with roi and sizes initializers. */
    {
        const prt_dims x44 = {4, {1, 1, 4, 4}};
        m_model m = {13,
                     "Resize",
                     {"X", "R", "", "Z"},
                     {"Y"},
                     4,
                     1,
                     {A_STR("mode", "linear"),
                      A_STR("coordinate_transformation_mode", "tf_crop_and_resize"),
                      A_FLOAT("extrapolation_value", 10.0f)},
                     3,
                     {C_FLOATS("R", 0, 8, roi), C_INTS("Z", 4, sz33)},
                     2,
                     x44,
                     {0, {0}}};
        CHECK_OK(m_run(&m, x16, "Y", y, 64, &yd));
        m_check("Resize tf_crop_and_resize", y, &yd, &y33, crop, 1e-6);
    }
    /* Opset 10 rounds a downsampling nearest up (ONNX Runtime's rule). */
    {
        m_model m = {10,
                     "Resize",
                     {"X", "S"},
                     {"Y"},
                     2,
                     1,
                     {A_STR("mode", "nearest")},
                     1,
                     {C_FLOATS("S", 0, 4, sc06)},
                     1,
                     x24,
                     {0, {0}}};
        CHECK_OK(m_run(&m, X8, "Y", y, 64, &yd));
        m_check("Resize 10 downsampling", y, &yd, &y12, down10, 0);
    }
    /* Upsample: scales an input at 9, an attribute at 7. */
    {
        m_model m = {9,
                     "Upsample",
                     {"X", "S"},
                     {"Y"},
                     2,
                     1,
                     {A_STR("mode", "nearest")},
                     1,
                     {C_FLOATS("S", 0, 4, sc23)},
                     1,
                     x22,
                     {0, {0}}};
        CHECK_OK(m_run(&m, X4, "Y", y, 64, &yd));
        m_check("Upsample 9", y, &yd, &y46, near23, 0);
        m.opset = 7;
        m.nb_in = 1;
        m.nb_consts = 0;
        m.attrs[1] = (m_attr)A_FLOATS("scales", 4, sc23);
        m.nb_attrs = 2;
        CHECK_OK(m_run(&m, X4, "Y", y, 64, &yd));
        m_check("Upsample 7", y, &yd, &y46, near23, 0);
        /* Upsample's linear is asymmetric: (x / 2) over [1, 2]. */
        m.attrs[0].s = "linear";
        m.attrs[1].floats = sc2;
        CHECK_OK(m_run(&m, X4, "Y", y, 64, &yd));
        {
            const double up_lin[16] = {1, 1.5, 2, 2, 2, 2.5, 3, 3,
                                       3, 3.5, 4, 4, 3, 3.5, 4, 4};
            m_check("Upsample 7 linear", y, &yd, &y44, up_lin, 1e-6);
        }
    }
    /* Refusals. */
    {
        prt_network *net = NULL;
        m_model m = {13,
                     "Resize",
                     {"X", "", "X2"},
                     {"Y"},
                     3,
                     1,
                     {A_STR("mode", "linear")},
                     1,
                     {C_FLOATS("", 0, 0, NULL)},
                     0,
                     x22,
                     {1, {4}}};
        /* Scales a float32 graph input: a float32 shape input
         * (test_resize_runtime_scales.py runs such models). */
        CHECK_OK(m_import(&m, &net));
        prt_network_destroy(net);
        net = NULL;
        m = (m_model){9,
                      "Upsample",
                      {"X", "S"},
                      {"Y"},
                      2,
                      1,
                      {A_STR("mode", "nearest")},
                      1,
                      {C_FLOATS("S", 0, 4, sc06)},
                      1,
                      x22,
                      {0, {0}}};
        CHECK_ERR(m_import(&m, &net), PRT_ERR_UNSUPPORTED,
                  "Upsample's scales[2] is 0.6; it takes scales >= 1");
        m = (m_model){10,
                      "Resize",
                      {"X", "S"},
                      {"Y"},
                      2,
                      1,
                      {A_STR("mode", "nearest")},
                      1,
                      {C_FLOATS("S", 0, 4, sc_mixed)},
                      1,
                      x22,
                      {0, {0}}};
        CHECK_ERR(m_import(&m, &net), PRT_ERR_UNSUPPORTED,
                  "nearest Resize 10 both up- and downsamples");
    }
    return 0;
}

/* ---- LayerNormalization's outputs
 * ------------------------------------------------------ */

static int test_layer_norm_outputs(void)
{
    static const float ones[4] = {1, 1, 1, 1};
    const prt_dims xd = {2, {2, 4}}, sd = {2, {2, 1}};
    const float x[8] = {1, 2, 3, 4, -1, 0, 1, 5};
    m_model m = {17,
                 "LayerNormalization",
                 {"X", "W"},
                 {"Y", "", "I"},
                 2,
                 3,
                 {A_STR("", "")},
                 0,
                 {C_FLOATS("W", 0, 4, ones)},
                 1,
                 xd,
                 {0, {0}}};
    float y[8];
    double want[2];
    prt_dims yd;
    for (int r = 0; r < 2; r++) {
        double mean = 0, var = 0;
        for (int k = 0; k < 4; k++)
            mean += x[r * 4 + k] / 4.0;
        for (int k = 0; k < 4; k++)
            var += pow(x[r * 4 + k] - mean, 2) / 4.0;
        want[r] = 1.0 / sqrt(var + 1e-5);
    }
    CHECK_OK(m_run(&m, x, "I", y, 8, &yd));
    m_check("LayerNormalization InvStdDev", y, &yd, &sd, want, 1e-6);
    return 0;
}

int main(void)
{
    test_softmax_opsets();
    test_resize_import();
    test_layer_norm_outputs();
    return tu_finish("test_onnx_nn");
}
