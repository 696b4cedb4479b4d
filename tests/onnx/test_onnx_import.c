/*
 * Tests of the ONNX importer with models built in C from the protobuf-c
 * structs generated from onnx.proto, then packed to bytes:
 *  - a plugin node (plugin_namespace, plugin_version) whose attributes reach
 *    a test creator as fields of the schema's types; an unknown attribute
 *    is a warning; an INT that does not fit is an error; wrong types too;
 *  - an unknown op names the op, the node and the libraries searched;
 *  - prt_onnx_parser_map_op overrides the built-in table and the node's own key;
 *  - initializers and Constant nodes become constants (run and checked);
 *  - external data, and its unsafe or short forms; it stays inside the
 *    model's folder (no symlink out of it) and is a regular file (a FIFO
 *    fails at once instead of hanging);
 *  - TensorProto files of every dtype and data field;
 *  - every truncation and random byte flips of a model fail cleanly;
 *  - dangling inputs, cycles, unsorted nodes, omitted optional inputs,
 *    versions, dtypes, dynamic dims;
 *  - the seed models of /work/shared/models import and build;
 *  - failing each allocation of an import in turn ends in out of memory,
 *    said so, with nothing leaked.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "onnx.pb-c.h"
#include "plugrt/onnx.h"
#include "testutil.h"

/* ---- an arena for building messages --------------------------------------- */

static void **arena;
static int arena_n, arena_cap;

static void *A(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (arena_n == arena_cap) {
        arena_cap = arena_cap ? arena_cap * 2 : 256;
        arena = realloc(arena, sizeof *arena * (size_t)arena_cap);
    }
    if (!p || !arena) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    arena[arena_n++] = p;
    return p;
}

static const char *str_or(const char *s)
{
    return s ? s : "";
}

static char *S(const char *s)
{
    char *r = A(strlen(s) + 1);
    memcpy(r, s, strlen(s) + 1);
    return r;
}

static void arena_free(void)
{
    for (int i = 0; i < arena_n; i++)
        free(arena[i]);
    free(arena);
    arena = NULL;
    arena_n = arena_cap = 0;
}

#define CAP 16 /* room in every repeated field we build */

static Onnx__AttributeProto *attr(const char *name, Onnx__AttributeProto__AttributeType t)
{
    Onnx__AttributeProto *a = A(sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = S(name);
    a->has_type = 1;
    a->type = t;
    return a;
}

static Onnx__AttributeProto *attr_i(const char *name, int64_t v)
{
    Onnx__AttributeProto *a = attr(name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1;
    a->i = v;
    return a;
}

static Onnx__AttributeProto *attr_ints(const char *name, int n, const int64_t *v)
{
    Onnx__AttributeProto *a = attr(name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->n_ints = (size_t)n;
    a->ints = A(sizeof(int64_t) * (size_t)n);
    memcpy(a->ints, v, sizeof(int64_t) * (size_t)n);
    return a;
}

static Onnx__AttributeProto *attr_f(const char *name, float v)
{
    Onnx__AttributeProto *a = attr(name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    a->has_f = 1;
    a->f = v;
    return a;
}

static Onnx__AttributeProto *attr_floats(const char *name, int n, const float *v)
{
    Onnx__AttributeProto *a = attr(name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
    a->n_floats = (size_t)n;
    a->floats = A(sizeof(float) * (size_t)n);
    memcpy(a->floats, v, sizeof(float) * (size_t)n);
    return a;
}

static Onnx__AttributeProto *attr_s(const char *name, const char *s)
{
    Onnx__AttributeProto *a = attr(name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    a->has_s = 1;
    a->s.len = strlen(s);
    a->s.data = (uint8_t *)S(s);
    return a;
}

static Onnx__AttributeProto *attr_t(const char *name, Onnx__TensorProto *t)
{
    Onnx__AttributeProto *a = attr(name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
    a->t = t;
    return a;
}

/* A tensor with raw data (NULL data: none). */
static Onnx__TensorProto *tensor_raw(const char *name, int32_t onnx_type, int nb,
                                     const int64_t *dims, const void *data, size_t bytes)
{
    Onnx__TensorProto *t = A(sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = S(name);
    t->has_data_type = 1;
    t->data_type = onnx_type;
    t->n_dims = (size_t)nb;
    t->dims = A(sizeof(int64_t) * (size_t)(nb + 1));
    if (nb)
        memcpy(t->dims, dims, sizeof(int64_t) * (size_t)nb);
    if (data) {
        t->has_raw_data = 1;
        t->raw_data.len = bytes;
        t->raw_data.data = A(bytes);
        memcpy(t->raw_data.data, data, bytes);
    }
    return t;
}

static Onnx__TensorProto *tensor_f32(const char *name, int nb, const int64_t *dims,
                                     const float *v, int n)
{
    Onnx__TensorProto *t =
        tensor_raw(name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, nb, dims, NULL, 0);
    t->n_float_data = (size_t)n;
    t->float_data = A(sizeof(float) * (size_t)n);
    memcpy(t->float_data, v, sizeof(float) * (size_t)n);
    return t;
}

static Onnx__NodeProto *node(const char *op, const char *name, const char *in0,
                             const char *in1, const char *in2, const char *out0)
{
    Onnx__NodeProto *n = A(sizeof *n);
    const char *ins[3] = {in0, in1, in2};
    onnx__node_proto__init(n);
    n->op_type = S(op);
    if (name)
        n->name = S(name);
    n->input = A(sizeof(char *) * CAP);
    n->output = A(sizeof(char *) * CAP);
    n->attribute = A(sizeof(void *) * CAP);
    for (int i = 0; i < 3 && ins[i]; i++)
        n->input[n->n_input++] = S(ins[i]);
    if (out0)
        n->output[n->n_output++] = S(out0);
    return n;
}

static void node_attr(Onnx__NodeProto *n, Onnx__AttributeProto *a)
{
    n->attribute[n->n_attribute++] = a;
}

/* dims: -1 becomes a dim_param. */
static Onnx__ValueInfoProto *value_info(const char *name, int32_t onnx_type, int nb,
                                        const int64_t *dims)
{
    Onnx__ValueInfoProto *v = A(sizeof *v);
    Onnx__TypeProto *tp = A(sizeof *tp);
    Onnx__TypeProto__Tensor *tt = A(sizeof *tt);
    Onnx__TensorShapeProto *sh = A(sizeof *sh);
    onnx__value_info_proto__init(v);
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    onnx__tensor_shape_proto__init(sh);
    v->name = S(name);
    v->type = tp;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    tt->has_elem_type = 1;
    tt->elem_type = onnx_type;
    tt->shape = sh;
    sh->n_dim = (size_t)nb;
    sh->dim = A(sizeof(void *) * (size_t)(nb + 1));
    for (int i = 0; i < nb; i++) {
        Onnx__TensorShapeProto__Dimension *d = A(sizeof *d);
        onnx__tensor_shape_proto__dimension__init(d);
        if (dims[i] >= 0) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = dims[i];
        } else {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = S("N");
        }
        sh->dim[i] = d;
    }
    return v;
}

static Onnx__ValueInfoProto *output_info(const char *name)
{
    Onnx__ValueInfoProto *v = A(sizeof *v);
    onnx__value_info_proto__init(v);
    v->name = S(name);
    return v;
}

static Onnx__GraphProto *graph(void)
{
    Onnx__GraphProto *g = A(sizeof *g);
    onnx__graph_proto__init(g);
    g->name = S("g");
    g->node = A(sizeof(void *) * CAP);
    g->input = A(sizeof(void *) * CAP);
    g->output = A(sizeof(void *) * CAP);
    g->initializer = A(sizeof(void *) * CAP);
    return g;
}

#define G_NODE(g, n) ((g)->node[(g)->n_node++] = (n))
#define G_IN(g, v) ((g)->input[(g)->n_input++] = (v))
#define G_OUT(g, name) ((g)->output[(g)->n_output++] = output_info(name))
#define G_INIT(g, t) ((g)->initializer[(g)->n_initializer++] = (t))

/* Packs a model; the bytes are the caller's (free()). */
static uint8_t *pack(Onnx__GraphProto *g, int64_t ir, int64_t opset, size_t *size)
{
    Onnx__ModelProto m;
    Onnx__OperatorSetIdProto op;
    Onnx__OperatorSetIdProto *ops[1] = {&op};
    uint8_t *buf;
    onnx__model_proto__init(&m);
    onnx__operator_set_id_proto__init(&op);
    /* A negative opset: the model imports only a custom domain. */
    op.domain = S(opset < 0 ? "com.example" : "");
    op.has_version = 1;
    op.version = opset < 0 ? 1 : opset;
    m.has_ir_version = 1;
    m.ir_version = ir;
    m.n_opset_import = 1;
    m.opset_import = ops;
    m.graph = g;
    *size = onnx__model_proto__get_packed_size(&m);
    buf = malloc(*size);
    onnx__model_proto__pack(&m, buf);
    return buf;
}

static const int64_t D23[2] = {2, 3};

/* ---- the test plugin: out = sum of its float32 inputs ---------------------- */

/* Everything the creator saw on its last create. */
#define MAX_CAPTURE 32
typedef struct captured {
    char name[64];
    int32_t type;
    int64_t length;
    uint8_t data[256];
} captured;
static captured cap_fields[MAX_CAPTURE];
static int cap_count = -1; /* fields of the last create; -1: none */
static int cap_creates;
static char cap_layer[128];

typedef struct sumplug {
    prt_plugin base;
    int32_t nb_in; /* from configure / on_shape_change */
} sumplug;

static const char *sp_name(const prt_plugin *p)
{
    (void)p;
    return "TestPlug";
}
static const char *sp_version(const prt_plugin *p)
{
    (void)p;
    return "2";
}
static const char *sp_ns(const prt_plugin *p)
{
    (void)p;
    return "tns";
}
static uint32_t sp_devices(const prt_plugin *p)
{
    (void)p;
    return 1u << PRT_DEVICE_CPU;
}
static int32_t sp_nb_outputs(const prt_plugin *p)
{
    (void)p;
    return 1;
}

static prt_status sp_dtypes(prt_plugin *p, int32_t *out, int32_t nb_out,
                            const int32_t *in, int32_t nb_in)
{
    (void)p;
    (void)nb_out;
    (void)in;
    (void)nb_in;
    out[0] = PRT_FLOAT32;
    return PRT_OK;
}

static prt_status sp_shapes(prt_plugin *p, const prt_dim_exprs *in, int32_t nb_in,
                            const prt_dim_exprs *si, int32_t nb_si, prt_dim_exprs *out,
                            int32_t nb_out, prt_expr_builder *eb)
{
    (void)p;
    (void)si;
    (void)nb_si;
    (void)nb_out;
    (void)eb;
    if (nb_in < 1)
        return PRT_ERR_INVALID_ARGUMENT;
    out[0] = in[0];
    return PRT_OK;
}

static int32_t sp_supports(prt_plugin *p, int32_t pos, const prt_dynamic_tensor_desc *io,
                           int32_t nb_in, int32_t nb_out)
{
    (void)p;
    (void)nb_in;
    (void)nb_out;
    return io[pos].desc.dtype == PRT_FLOAT32 && io[pos].desc.format == PRT_FORMAT_LINEAR;
}

static prt_status sp_enqueue(prt_plugin *p, const prt_tensor_desc *in_desc,
                             const prt_tensor_desc *out_desc, const void *const *in,
                             void *const *out, void *ws, int32_t device, void *stream)
{
    int64_t n = 1;
    int32_t nb_in = 0;
    (void)p;
    (void)ws;
    (void)device;
    (void)stream;
    for (int32_t d = 0; d < out_desc[0].dims.nb_dims; d++)
        n *= out_desc[0].dims.d[d];
    /* enqueue is not told how many inputs there are; on_shape_change is. */
    nb_in = ((sumplug *)p)->nb_in;
    for (int64_t i = 0; i < n; i++) {
        float s = 0;
        for (int32_t k = 0; k < nb_in; k++)
            s += ((const float *)in[k])[i];
        ((float *)out[0])[i] = s;
    }
    (void)in_desc;
    return PRT_OK;
}

static prt_plugin *sp_clone(const prt_plugin *p)
{
    sumplug *c = malloc(sizeof *c);
    if (c)
        *c = *(const sumplug *)p;
    return c ? &c->base : NULL;
}

static prt_plugin *sp_attach(prt_plugin *p, prt_plugin_resources *r)
{
    (void)r;
    return sp_clone(p);
}

static const prt_field_collection *sp_fields(prt_plugin *p)
{
    static const prt_field_collection none = {0, NULL};
    (void)p;
    return &none;
}

static void sp_destroy(prt_plugin *p)
{
    free(p);
}

static prt_status sp_set_tactic(prt_plugin *p, int32_t tactic)
{
    (void)p;
    return tactic == 0 ? PRT_OK : PRT_ERR_INVALID_ARGUMENT;
}

/* configure and on_shape_change tell the plugin how many inputs it has. */
static prt_status sp_configure(prt_plugin *p, const prt_dynamic_tensor_desc *in,
                               int32_t nb_in, const prt_dynamic_tensor_desc *out,
                               int32_t nb_out)
{
    (void)in;
    (void)out;
    (void)nb_out;
    ((sumplug *)p)->nb_in = nb_in;
    return PRT_OK;
}

static prt_status sp_shape_change(prt_plugin *p, const prt_tensor_desc *in, int32_t nb_in,
                                  const prt_tensor_desc *out, int32_t nb_out)
{
    (void)in;
    (void)out;
    (void)nb_out;
    ((sumplug *)p)->nb_in = nb_in;
    return PRT_OK;
}

static const prt_plugin_core sp_core = {
    sizeof sp_core, PRT_PLUGIN_ABI_VERSION, sp_name, sp_version, sp_ns, sp_devices};
static const prt_plugin_build sp_build = {sizeof sp_build,
                                          PRT_PLUGIN_ABI_VERSION,
                                          sp_nb_outputs,
                                          sp_dtypes,
                                          sp_shapes,
                                          sp_supports,
                                          sp_configure,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL};
static const prt_plugin_runtime sp_runtime = {sizeof sp_runtime, PRT_PLUGIN_ABI_VERSION,
                                              sp_set_tactic,     sp_shape_change,
                                              sp_enqueue,        sp_attach,
                                              sp_fields,         sp_clone,
                                              sp_destroy};
static const prt_plugin_vtable sp_vt = {sizeof sp_vt, PRT_PLUGIN_ABI_VERSION, &sp_core,
                                        &sp_build, &sp_runtime};

static size_t field_elem_size(int32_t t)
{
    switch (t) {
    case PRT_FIELD_INT8:
    case PRT_FIELD_CHAR:
    case PRT_FIELD_BYTES:
        return 1;
    case PRT_FIELD_INT16:
    case PRT_FIELD_FLOAT16:
    case PRT_FIELD_BFLOAT16:
        return 2;
    case PRT_FIELD_INT32:
    case PRT_FIELD_FLOAT32:
        return 4;
    case PRT_FIELD_DIMS:
        return sizeof(prt_dims);
    default:
        return 8;
    }
}

static prt_status sp_create(const prt_plugin_creator *c, const char *layer,
                            const prt_field_collection *f, int32_t phase,
                            prt_plugin **out)
{
    sumplug *s;
    (void)c;
    (void)phase;
    cap_creates++;
    snprintf(cap_layer, sizeof cap_layer, "%s", layer ? layer : "(null)");
    cap_count = 0;
    for (int32_t i = 0; i < f->nb_fields && i < MAX_CAPTURE; i++) {
        size_t n = (size_t)f->fields[i].length * field_elem_size(f->fields[i].type);
        captured *k = &cap_fields[cap_count++];
        snprintf(k->name, sizeof k->name, "%s", f->fields[i].name);
        k->type = f->fields[i].type;
        k->length = f->fields[i].length;
        memset(k->data, 0, sizeof k->data);
        memcpy(k->data, f->fields[i].data, n < sizeof k->data ? n : sizeof k->data);
    }
    s = calloc(1, sizeof *s);
    if (!s)
        return PRT_ERR_OUT_OF_MEMORY;
    s->base.vt = &sp_vt;
    *out = &s->base;
    return PRT_OK;
}

static const prt_field_schema sp_schema[] = {
    {"i8", PRT_FIELD_INT8, 1, NULL},     {"i16s", PRT_FIELD_INT16, -1, NULL},
    {"i32", PRT_FIELD_INT32, 1, NULL},   {"i64s", PRT_FIELD_INT64, -1, NULL},
    {"f32", PRT_FIELD_FLOAT32, 1, NULL}, {"f16s", PRT_FIELD_FLOAT16, -1, NULL},
    {"f64", PRT_FIELD_FLOAT64, 1, NULL}, {"name", PRT_FIELD_CHAR, -1, NULL},
    {"dims", PRT_FIELD_DIMS, 1, NULL},   {"blob", PRT_FIELD_BYTES, -1, NULL},
    {"tens", PRT_FIELD_INT32, -1, NULL}, {"ftens", PRT_FIELD_FLOAT32, -1, NULL},
};

static const prt_plugin_creator sp_creator = {
    sizeof(prt_plugin_creator),
    PRT_PLUGIN_ABI_VERSION,
    "TestPlug",
    "2",
    "tns",
    (int32_t)(sizeof sp_schema / sizeof sp_schema[0]),
    sp_schema,
    sp_create,
    NULL};

/* The same plugin under the empty namespace, version 1: reachable by a bare
 * op_type. */
static const prt_plugin_creator sp_creator_plain = {
    sizeof(prt_plugin_creator),
    PRT_PLUGIN_ABI_VERSION,
    "SumPlug",
    "1",
    "",
    (int32_t)(sizeof sp_schema / sizeof sp_schema[0]),
    sp_schema,
    sp_create,
    NULL};

static const captured *cap_find(const char *name)
{
    for (int i = 0; i < cap_count; i++)
        if (strcmp(cap_fields[i].name, name) == 0)
            return &cap_fields[i];
    return NULL;
}

/* ---- logger ----------------------------------------------------------------- */

static char log_text[8192];

static void capture_log(void *user, int32_t sev, const char *msg)
{
    size_t n = strlen(log_text);
    (void)user;
    if (sev == PRT_SEV_WARNING)
        snprintf(log_text + n, sizeof log_text - n, "%s\n", msg);
}

/* ---- helpers ----------------------------------------------------------------- */

static prt_registry *reg_global;

static prt_status parse(const uint8_t *bytes, size_t size, const char *base_dir,
                        prt_network **net)
{
    prt_onnx_parser *p = NULL;
    prt_status st = prt_onnx_parser_create(reg_global, &p);
    if (!st)
        st = prt_onnx_parser_parse_bytes(p, bytes, size, base_dir, net);
    prt_onnx_parser_destroy(p);
    return st;
}

/* Builds with X fixed at 2x3 (if it is an input) and runs with the given X;
 * writes output `out_name` (6 floats) to y. */
static int build_and_run(const prt_network *net, const float *x, const char *out_name,
                         float *y)
{
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    prt_dims d = {2, {2, 3}};
    int32_t prof, idx;
    int ok = 0;
    if (prt_builder_config_create(&cfg) || prt_builder_config_add_profile(cfg, &prof))
        goto out;
    if (x && prt_builder_config_set_profile_dims(cfg, prof, "X", &d, &d, &d))
        goto out;
    if (prt_engine_build(net, cfg, reg_global, &e) || prt_context_create(e, &ctx))
        goto out;
    if (x && (prt_context_set_input_shape(ctx, "X", &d) ||
              prt_context_set_tensor_address(ctx, "X", (void *)x)))
        goto out;
    if (prt_engine_find_io(e, out_name, &idx) ||
        prt_context_set_tensor_address(ctx, out_name, y) ||
        prt_context_enqueue(ctx, NULL))
        goto out;
    ok = 1;
out:
    if (!ok)
        fprintf(stderr, "build_and_run: %s\n", prt_last_error());
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    return ok;
}

/* ---- tests --------------------------------------------------------------------- */

/* X -> TestPlug(attributes) -> Y */
static Onnx__GraphProto *plugin_graph(Onnx__NodeProto **out_node)
{
    Onnx__GraphProto *g = graph();
    Onnx__NodeProto *n = node("TestPlug", "tp0", "X", NULL, NULL, "Y");
    node_attr(n, attr_s("plugin_namespace", "tns"));
    node_attr(n, attr_s("plugin_version", "2"));
    G_IN(g, value_info("X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, D23));
    G_NODE(g, n);
    G_OUT(g, "Y");
    *out_node = n;
    return g;
}

static int test_plugin_fields(void)
{
    Onnx__NodeProto *n;
    Onnx__GraphProto *g = plugin_graph(&n);
    const int64_t i16s[3] = {1, -2, 300}, i64s[1] = {(int64_t)1 << 40},
                  dims[3] = {2, 3, 4};
    const int64_t tdims[1] = {3}, tvals[3] = {7, 8, 9};
    const float f16s[2] = {1.0f, -2.0f};
    const float fvals[2] = {0.5f, 4.0f};
    const int64_t fdims[1] = {2};
    Onnx__TensorProto *tens = tensor_raw("", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1,
                                         tdims, tvals, sizeof tvals);
    prt_network *net = NULL;
    const captured *c;
    size_t size;
    uint8_t *bytes;
    float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {0};

    node_attr(n, attr_i("i8", -5));
    node_attr(n, attr_ints("i16s", 3, i16s));
    node_attr(n, attr_i("i32", 70000));
    node_attr(n, attr_ints("i64s", 1, i64s));
    node_attr(n, attr_f("f32", 1.5f));
    node_attr(n, attr_floats("f16s", 2, f16s));
    node_attr(n, attr_f("f64", 0.25f));
    node_attr(n, attr_s("name", "hello"));
    node_attr(n, attr_ints("dims", 3, dims));
    node_attr(n, attr_s("blob", "ab"));
    node_attr(n, attr_t("tens", tens));
    node_attr(n, attr_t("ftens", tensor_f32("", 1, fdims, fvals, 2)));
    node_attr(n, attr_i("bogus", 1));
    bytes = pack(g, 8, 17, &size);

    log_text[0] = '\0';
    prt_set_logger(capture_log, NULL, PRT_SEV_WARNING);
    cap_count = -1;
    CHECK_OK(parse(bytes, size, NULL, &net));
    prt_set_logger(NULL, NULL, 0);
    free(bytes);
    REQUIRE(net != NULL);
    CHECK(strcmp(cap_layer, "tp0") == 0);
    /* 12 schema fields; plugin_namespace, plugin_version and bogus are not
     * fields. */
    CHECK(cap_count == 12);
    CHECK(cap_find("plugin_namespace") == NULL && cap_find("plugin_version") == NULL);
    CHECK(cap_find("bogus") == NULL);
    CHECK(strstr(log_text, "'bogus'") && strstr(log_text, "tp0") &&
          strstr(log_text, "TestPlug"));
    CHECK(strstr(log_text, "plugin_namespace") == NULL);

    c = cap_find("i8");
    CHECK(c && c->type == PRT_FIELD_INT8 && c->length == 1 && (int8_t)c->data[0] == -5);
    c = cap_find("i16s");
    if (c) {
        int16_t v[3];
        memcpy(v, c->data, sizeof v);
        CHECK(c->type == PRT_FIELD_INT16 && c->length == 3 && v[0] == 1 && v[1] == -2 &&
              v[2] == 300);
    } else
        CHECK(!"i16s");
    c = cap_find("i32");
    if (c) {
        int32_t v;
        memcpy(&v, c->data, sizeof v);
        CHECK(c->type == PRT_FIELD_INT32 && c->length == 1 && v == 70000);
    } else
        CHECK(!"i32");
    c = cap_find("i64s");
    if (c) {
        int64_t v;
        memcpy(&v, c->data, sizeof v);
        CHECK(c->type == PRT_FIELD_INT64 && c->length == 1 && v == ((int64_t)1 << 40));
    } else
        CHECK(!"i64s");
    c = cap_find("f32");
    if (c) {
        float v;
        memcpy(&v, c->data, sizeof v);
        CHECK(c->type == PRT_FIELD_FLOAT32 && c->length == 1 && v == 1.5f);
    } else
        CHECK(!"f32");
    c = cap_find("f16s");
    if (c) {
        uint16_t v[2];
        memcpy(v, c->data, sizeof v);
        CHECK(c->type == PRT_FIELD_FLOAT16 && c->length == 2 && v[0] == 0x3c00 &&
              v[1] == 0xc000);
    } else
        CHECK(!"f16s");
    c = cap_find("f64");
    if (c) {
        double v;
        memcpy(&v, c->data, sizeof v);
        CHECK(c->type == PRT_FIELD_FLOAT64 && c->length == 1 && v == 0.25);
    } else
        CHECK(!"f64");
    c = cap_find("name");
    CHECK(c && c->type == PRT_FIELD_CHAR && c->length == 6 &&
          memcmp(c->data, "hello", 6) == 0);
    c = cap_find("dims");
    if (c) {
        prt_dims v;
        memcpy(&v, c->data, sizeof v);
        CHECK(c->type == PRT_FIELD_DIMS && c->length == 1 && v.nb_dims == 3 &&
              v.d[0] == 2 && v.d[1] == 3 && v.d[2] == 4);
    } else
        CHECK(!"dims");
    c = cap_find("blob");
    CHECK(c && c->type == PRT_FIELD_BYTES && c->length == 2 &&
          memcmp(c->data, "ab", 2) == 0);
    c = cap_find("tens");
    if (c) {
        int32_t v[3];
        memcpy(v, c->data, sizeof v);
        CHECK(c->type == PRT_FIELD_INT32 && c->length == 3 && v[0] == 7 && v[1] == 8 &&
              v[2] == 9);
    } else
        CHECK(!"tens");
    c = cap_find("ftens");
    if (c) {
        float v[2];
        memcpy(v, c->data, sizeof v);
        CHECK(c->type == PRT_FIELD_FLOAT32 && c->length == 2 && v[0] == 0.5f &&
              v[1] == 4.0f);
    } else
        CHECK(!"ftens");

    /* The layer runs: Y = X. */
    CHECK(build_and_run(net, x, "Y", y));
    CHECK(memcmp(x, y, sizeof x) == 0);
    prt_network_destroy(net);
    return 0;
}

/* One attribute on the plugin node; returns the parse status. */
static prt_status parse_with_attr(Onnx__AttributeProto *a)
{
    Onnx__NodeProto *n;
    Onnx__GraphProto *g = plugin_graph(&n);
    prt_network *net = NULL;
    size_t size;
    uint8_t *bytes;
    prt_status st;
    node_attr(n, a);
    bytes = pack(g, 8, 17, &size);
    st = parse(bytes, size, NULL, &net);
    free(bytes);
    prt_network_destroy(net);
    return st;
}

static int test_field_errors(void)
{
    const int64_t big[2] = {1, 40000};
    const float fl[3] = {1, 2, 3};
    CHECK_ERR(parse_with_attr(attr_i("i8", 300)), PRT_ERR_INVALID_ARGUMENT, "300");
    CHECK(strstr(prt_last_error(), "tp0") && strstr(prt_last_error(), "'i8'"));
    CHECK_ERR(parse_with_attr(attr_i("i8", -129)), PRT_ERR_INVALID_ARGUMENT, "-129");
    CHECK_ERR(parse_with_attr(attr_ints("i16s", 2, big)), PRT_ERR_INVALID_ARGUMENT,
              "40000");
    CHECK_ERR(parse_with_attr(attr_i("i32", (int64_t)1 << 31)), PRT_ERR_INVALID_ARGUMENT,
              "2147483648");
    /* Types that cannot fill the field. */
    CHECK_ERR(parse_with_attr(attr_s("f32", "x")), PRT_ERR_INVALID_ARGUMENT, "'f32'");
    CHECK_ERR(parse_with_attr(attr_f("i32", 1.0f)), PRT_ERR_INVALID_ARGUMENT, "FLOAT");
    CHECK_ERR(parse_with_attr(attr_i("name", 1)), PRT_ERR_INVALID_ARGUMENT, "'name'");
    /* Exact lengths. */
    CHECK_ERR(parse_with_attr(attr_floats("f32", 3, fl)), PRT_ERR_INVALID_ARGUMENT,
              "exactly 1");
    /* An INT into a float field converts. */
    CHECK_OK(parse_with_attr(attr_i("f32", 3)));
    /* A graph attribute cannot be a field. */
    {
        Onnx__AttributeProto *a =
            attr("i32", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
        a->g = graph();
        CHECK_ERR(parse_with_attr(a), PRT_ERR_UNSUPPORTED, "GRAPH");
    }
    /* An attribute without a type. */
    {
        Onnx__AttributeProto *a = attr_i("i32", 1);
        a->has_type = 0;
        CHECK_ERR(parse_with_attr(a), PRT_ERR_MALFORMED, "no type");
    }
    /* plugin_version must be a string. */
    {
        Onnx__NodeProto *n;
        Onnx__GraphProto *g = plugin_graph(&n);
        prt_network *net = NULL;
        size_t size;
        uint8_t *bytes;
        n->attribute[1] = attr_i("plugin_version", 2);
        bytes = pack(g, 8, 17, &size);
        CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_MALFORMED, "plugin_version");
        free(bytes);
        prt_network_destroy(net);
    }
    return 0;
}

static int test_unknown_op(void)
{
    Onnx__GraphProto *g = graph();
    prt_network *net = NULL;
    size_t size;
    uint8_t *bytes;
    const char *lib = strrchr(PRT_PLUGINS_PATH, '/');
    lib = lib ? lib + 1 : PRT_PLUGINS_PATH;
    G_IN(g, value_info("X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, D23));
    G_NODE(g, node("Frobnicate", "frob1", "X", NULL, NULL, "Y"));
    G_OUT(g, "Y");
    bytes = pack(g, 8, 17, &size);
    CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_UNSUPPORTED, "Frobnicate");
    CHECK(strstr(prt_last_error(), "frob1") != NULL);
    CHECK(strstr(prt_last_error(), lib) != NULL);
    free(bytes);

    /* An unnamed node is named by its index. */
    g->node[0]->name = NULL;
    bytes = pack(g, 8, 17, &size);
    CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_UNSUPPORTED, "node #0");
    free(bytes);

    /* A node that names a namespace nobody serves. */
    g->node[0] = node("TestPlug", "tp9", "X", NULL, NULL, "Y");
    node_attr(g->node[0], attr_s("plugin_namespace", "nope"));
    bytes = pack(g, 8, 17, &size);
    CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_UNSUPPORTED, "nope");
    CHECK(strstr(prt_last_error(), "tp9") && strstr(prt_last_error(), lib));

    /* Without a registry, nothing but built-ins. */
    {
        prt_onnx_parser *p = NULL;
        REQUIRE_OK(prt_onnx_parser_create(NULL, &p));
        CHECK_ERR(prt_onnx_parser_parse_bytes(p, bytes, size, NULL, &net),
                  PRT_ERR_UNSUPPORTED, "no registry");
        prt_onnx_parser_destroy(p);
    }
    free(bytes);

    /* A custom domain with a creator under the bare op name works. */
    g->node[0] = node("SumPlug", "sp", "X", NULL, NULL, "Y");
    g->node[0]->domain = S("com.example");
    bytes = pack(g, 8, 17, &size);
    CHECK_OK(parse(bytes, size, NULL, &net));
    prt_network_destroy(net);
    free(bytes);
    return 0;
}

static int test_map_op(void)
{
    Onnx__GraphProto *g = graph();
    prt_onnx_parser *p = NULL;
    prt_network *net = NULL;
    size_t size;
    uint8_t *bytes;
    int before;
    float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {0};
    Onnx__NodeProto *n = node("Relu", "r0", "X", NULL, NULL, "Y");
    node_attr(n, attr_i("i32", 11));
    G_IN(g, value_info("X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, D23));
    G_NODE(g, n);
    G_OUT(g, "Y");
    bytes = pack(g, 8, 17, &size);
    REQUIRE_OK(prt_onnx_parser_create(reg_global, &p));
    CHECK_ERR(prt_onnx_parser_map_op(p, NULL, "", "x", "1"), PRT_ERR_INVALID_ARGUMENT,
              NULL);
    /* Later calls replace earlier ones. */
    CHECK_OK(prt_onnx_parser_map_op(p, "Relu", "", "NoSuchPlugin", "1"));
    CHECK_ERR(prt_onnx_parser_parse_bytes(p, bytes, size, NULL, &net),
              PRT_ERR_UNSUPPORTED, "NoSuchPlugin");
    CHECK(strstr(prt_last_error(), "r0") != NULL);
    CHECK_OK(prt_onnx_parser_map_op(p, "Relu", "tns", "TestPlug", "2"));
    before = cap_creates;
    CHECK_OK(prt_onnx_parser_parse_bytes(p, bytes, size, NULL, &net));
    CHECK(cap_creates == before + 1);
    {
        const captured *c = cap_find("i32");
        int32_t v = 0;
        if (c)
            memcpy(&v, c->data, sizeof v);
        CHECK(c && v == 11);
    }
    /* TestPlug sums (here: copies), where Relu would clamp. */
    x[0] = -1;
    CHECK(net && build_and_run(net, x, "Y", y));
    CHECK(y[0] == -1.0f);
    prt_network_destroy(net);
    net = NULL;
    free(bytes);

    /* A mapping also beats a node's own plugin key. */
    g->node[0] = node("Foo", "f0", "X", NULL, NULL, "Y");
    node_attr(g->node[0], attr_s("plugin_namespace", "elsewhere"));
    bytes = pack(g, 8, 17, &size);
    CHECK_OK(prt_onnx_parser_map_op(p, "Foo", "", "SumPlug", NULL));
    CHECK_OK(prt_onnx_parser_parse_bytes(p, bytes, size, NULL, &net));
    prt_network_destroy(net);
    net = NULL;
    free(bytes);

    /* A mapping may name a built-in: Frob -> plugrt::Relu. */
    g->node[0] = node("Frob", "fr", "X", NULL, NULL, "Y");
    bytes = pack(g, 8, 17, &size);
    CHECK_OK(prt_onnx_parser_map_op(p, "Frob", PRT_BUILTIN_NAMESPACE, "Relu", "1"));
    CHECK_OK(prt_onnx_parser_parse_bytes(p, bytes, size, NULL, &net));
    x[0] = -1;
    CHECK(net && build_and_run(net, x, "Y", y));
    CHECK(y[0] == 0.0f && y[1] == 2.0f);
    prt_network_destroy(net);
    free(bytes);
    prt_onnx_parser_destroy(p);
    return 0;
}

/* Y = TestPlug(X, W, C) with W an initializer and C a Constant node. */
static Onnx__GraphProto *constants_graph(void)
{
    Onnx__GraphProto *g = graph();
    const float w[6] = {10, 20, 30, 40, 50, 60};
    const float c[6] = {100, 200, 300, 400, 500, 600};
    const float vf[3] = {1, 2, 3};
    const int64_t vi[2] = {4, 5};
    const double unused[1] = {1.0};
    const int64_t one[1] = {1};
    Onnx__NodeProto *cn = node("Constant", "c0", NULL, NULL, NULL, "C");
    Onnx__NodeProto *cf = node("Constant", "c1", NULL, NULL, NULL, "CF");
    Onnx__NodeProto *ci = node("Constant", "c2", NULL, NULL, NULL, "CI");
    Onnx__NodeProto *cs = node("Constant", "c3", NULL, NULL, NULL, "CS");
    Onnx__NodeProto *n = node("TestPlug", "sum", "X", "W", "C", "Y");
    node_attr(cn, attr_t("value", tensor_raw("", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2,
                                             D23, c, sizeof c)));
    node_attr(cf, attr_floats("value_floats", 3, vf));
    node_attr(ci, attr_ints("value_ints", 2, vi));
    node_attr(cs, attr_i("value_int", 9));
    node_attr(n, attr_s("plugin_namespace", "tns"));
    node_attr(n, attr_s("plugin_version", "2"));
    G_IN(g, value_info("X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, D23));
    /* W is also listed as an input: an initializer wins. */
    G_IN(g, value_info("W", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, D23));
    G_INIT(g, tensor_f32("W", 2, D23, w, 6));
    /* Unused, and of a type plugrt lacks: no harm. */
    G_INIT(g, tensor_raw("U", ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX64, 1, one, unused,
                         sizeof unused));
    G_NODE(g, cn);
    G_NODE(g, cf);
    G_NODE(g, ci);
    G_NODE(g, cs);
    G_NODE(g, n);
    /* An unused Constant of a type plugrt lacks: no harm either. */
    {
        Onnx__NodeProto *cd = node("Constant", "c4", NULL, NULL, NULL, "CD");
        node_attr(cd,
                  attr_t("value", tensor_raw("", ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 1,
                                             one, unused, sizeof unused)));
        G_NODE(g, cd);
    }
    G_OUT(g, "Y");
    return g;
}

static int test_constants(void)
{
    Onnx__GraphProto *g = constants_graph();
    prt_network *net = NULL;
    size_t size;
    uint8_t *bytes = pack(g, 8, 17, &size);
    float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {0};
    int32_t t;
    CHECK_OK(parse(bytes, size, NULL, &net));
    free(bytes);
    REQUIRE(net != NULL);
    CHECK_OK(prt_network_find_tensor(net, "W", &t));
    CHECK_OK(prt_network_find_tensor(net, "C", &t));
    CHECK_OK(prt_network_find_tensor(net, "CF", &t));
    CHECK_OK(prt_network_find_tensor(net, "CI", &t));
    CHECK_OK(prt_network_find_tensor(net, "CS", &t));
    CHECK_ERR(prt_network_find_tensor(net, "U", &t), PRT_ERR_NOT_FOUND, NULL);
    CHECK(build_and_run(net, x, "Y", y));
    for (int i = 0; i < 6; i++)
        CHECK(y[i] == x[i] + 10 * (i + 1) + 100 * (i + 1));
    prt_network_destroy(net);

    /* The unused COMPLEX64 initializer fails once it is used. */
    g->node[4]->input[2] = S("U");
    bytes = pack(g, 8, 17, &size);
    CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_UNSUPPORTED, "COMPLEX64");
    CHECK(strstr(prt_last_error(), "'U'") != NULL);
    free(bytes);
    /* Constant with an unsupported attribute. */
    g->node[4]->input[2] = S("C");
    g->node[0]->attribute[0] = attr_s("value_string", "x");
    bytes = pack(g, 8, 17, &size);
    CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_UNSUPPORTED, "value_string");
    free(bytes);
    return 0;
}

/* A Constant node's output and an initializer as graph outputs: a built-in
 * Identity copies each, since a network constant cannot be an output. */
static int test_constant_outputs(void)
{
    Onnx__GraphProto *g = graph();
    const float k[6] = {1, 2, 3, 4, 5, 6}, w[6] = {6, 5, 4, 3, 2, 1};
    Onnx__NodeProto *cn = node("Constant", "k", NULL, NULL, NULL, "K");
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    float ko[6] = {0}, wo[6] = {0};
    size_t size;
    uint8_t *bytes;
    int32_t prof;
    float x[6] = {1, 1, 1, 1, 1, 1}, yo[6] = {0};
    prt_dims d = {2, {2, 3}};
    node_attr(cn, attr_t("value", tensor_f32("", 2, D23, k, 6)));
    /* K is both an output and the input of a layer. */
    G_IN(g, value_info("X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, D23));
    G_INIT(g, tensor_f32("W", 2, D23, w, 6));
    G_NODE(g, cn);
    G_NODE(g, node("SumPlug", "s", "X", "K", NULL, "Y"));
    G_OUT(g, "K");
    G_OUT(g, "W");
    G_OUT(g, "Y");
    bytes = pack(g, 8, 17, &size);
    CHECK_OK(parse(bytes, size, NULL, &net));
    free(bytes);
    REQUIRE(net != NULL);
    CHECK_OK(prt_builder_config_create(&cfg));
    CHECK_OK(prt_builder_config_add_profile(cfg, &prof));
    CHECK_OK(prt_builder_config_set_profile_dims(cfg, prof, "X", &d, &d, &d));
    CHECK_OK(prt_engine_build(net, cfg, reg_global, &e));
    if (e) {
        CHECK_OK(prt_context_create(e, &ctx));
        CHECK_OK(prt_context_set_tensor_address(ctx, "X", x));
        CHECK_OK(prt_context_set_tensor_address(ctx, "K", ko));
        CHECK_OK(prt_context_set_tensor_address(ctx, "W", wo));
        CHECK_OK(prt_context_set_tensor_address(ctx, "Y", yo));
        CHECK_OK(prt_context_enqueue(ctx, NULL));
        CHECK(memcmp(ko, k, sizeof k) == 0 && memcmp(wo, w, sizeof w) == 0);
        CHECK(yo[0] == 2.0f && yo[5] == 7.0f);
    }
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    net = NULL;

    /* A graph input cannot also be an output: engine I/O names are
     * unique. */
    g = graph();
    G_IN(g, value_info("X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, D23));
    G_OUT(g, "X");
    bytes = pack(g, 8, 17, &size);
    CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_UNSUPPORTED, "also a graph input");
    free(bytes);
    return 0;
}

/* Every op that nothing serves is listed once; a model of custom-domain ops
 * need not import the default domain. */
static int test_op_listing(void)
{
    Onnx__GraphProto *g = graph();
    prt_network *net = NULL;
    size_t size;
    uint8_t *bytes;
    const char *msg, *others;
    G_IN(g, value_info("X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, D23));
    G_NODE(g, node("Foo1", "a", "X", NULL, NULL, "A"));
    G_NODE(g, node("Foo2", "b", "A", NULL, NULL, "B"));
    G_NODE(g, node("Foo1", "c", "B", NULL, NULL, "C"));
    G_NODE(g, node("Foo3", "d", "C", NULL, NULL, "Y"));
    G_OUT(g, "Y");
    bytes = pack(g, 8, 17, &size);
    CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_UNSUPPORTED, "node 'a' (Foo1)");
    free(bytes);
    msg = prt_last_error();
    others = strstr(msg, "other ops that nothing serves: Foo2, Foo3)");
    CHECK(others != NULL);
    CHECK(others && strstr(others, "Foo1") == NULL);

    /* Plugin nodes of a custom domain only, no default-domain opset. */
    g = graph();
    G_IN(g, value_info("X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, D23));
    G_NODE(g, node("SumPlug", "s", "X", NULL, NULL, "Y"));
    g->node[0]->domain = S("com.example");
    G_OUT(g, "Y");
    bytes = pack(g, 8, -1, &size);
    CHECK_OK(parse(bytes, size, NULL, &net));
    prt_network_destroy(net);
    net = NULL;
    free(bytes);
    /* ... but a default-domain op of the table then has no opset. */
    G_NODE(g, node("Relu", "r", "Y", NULL, NULL, "Z"));
    g->output[0] = output_info("Z");
    bytes = pack(g, 8, -1, &size);
    CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_MALFORMED, "imports no opset");
    free(bytes);
    return 0;
}

/* ONNX names that equal the default names plugrt gives unnamed tensors
 * ("<layer>:<i>"): the ONNX name wins. */
/* Node 0's output is omitted, so it keeps the default "TestPlug_0:0", which
 * node 1's output claims. */
static Onnx__GraphProto *clash_graph(void)
{
    Onnx__GraphProto *g = graph();
    G_IN(g, value_info("X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, D23));
    G_NODE(g, node("SumPlug", "n0", "X", NULL, NULL, NULL));
    G_NODE(g, node("SumPlug", "n1", "X", NULL, NULL, "TestPlug_0:0"));
    G_OUT(g, "TestPlug_0:0");
    return g;
}

static int test_name_clash(void)
{
    Onnx__GraphProto *g = clash_graph();
    const float w[6] = {1, 1, 1, 1, 1, 1};
    prt_network *net = NULL;
    size_t size;
    uint8_t *bytes;
    int32_t a, b;
    bytes = pack(g, 8, 17, &size);
    CHECK_OK(parse(bytes, size, NULL, &net));
    free(bytes);
    CHECK(net && prt_network_find_tensor(net, "TestPlug_0:0", &a) == PRT_OK &&
          prt_network_find_tensor(net, "TestPlug_0:0~0", &b) == PRT_OK && a != b);
    prt_network_destroy(net);
    net = NULL;
    /* An initializer made after the clash, by a later node. */
    g->node[1] = node("SumPlug", "n1", "X", "TestPlug_0:0", NULL, "Y");
    G_INIT(g, tensor_f32("TestPlug_0:0", 2, D23, w, 6));
    g->output[0] = output_info("Y");
    bytes = pack(g, 8, 17, &size);
    CHECK_OK(parse(bytes, size, NULL, &net));
    free(bytes);
    CHECK(net && prt_network_find_tensor(net, "TestPlug_0:0", &a) == PRT_OK);
    prt_network_destroy(net);
    return 0;
}

static char tmp_root[256];

/* What the tests create under tmp_root, removed in reverse at the end. */
static char *made[64];
static int nb_made;

static void remember(const char *path)
{
    int known = 0;
    for (int i = 0; i < nb_made; i++)
        known |= strcmp(made[i], path) == 0;
    if (!known && nb_made < 64)
        made[nb_made++] = strdup(path);
}

static int make_dir(const char *path)
{
    if (mkdir(path, 0700) != 0)
        return -1;
    remember(path);
    return 0;
}

static void remove_made(void)
{
    while (nb_made > 0) {
        char *p = made[--nb_made];
        if (remove(p) != 0)
            fprintf(stderr, "could not remove %s\n", p);
        free(p);
    }
}

static int write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f)
        remember(path);
    if (!f)
        return 0;
    if (n && fwrite(data, 1, n, f) != n) {
        fclose(f);
        return 0;
    }
    return fclose(f) == 0;
}

static Onnx__StringStringEntryProto *kv(const char *k, const char *v)
{
    Onnx__StringStringEntryProto *e = A(sizeof *e);
    onnx__string_string_entry_proto__init(e);
    e->key = S(k);
    e->value = S(v);
    return e;
}

/* W lives in <dir>/weights/w.bin at offset 16. */
static Onnx__GraphProto *external_graph(const char *location, const char *length)
{
    Onnx__GraphProto *g = constants_graph();
    Onnx__TensorProto *w = g->initializer[0];
    w->n_float_data = 0;
    w->has_data_location = 1;
    w->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    w->external_data = A(sizeof(void *) * 4);
    w->external_data[w->n_external_data++] = kv("location", location);
    w->external_data[w->n_external_data++] = kv("offset", "16");
    if (length)
        w->external_data[w->n_external_data++] = kv("length", length);
    return g;
}

static int test_external_data(void)
{
    char dir[512], path[600];
    float file[4 + 6] = {0};
    float x[6] = {0}, y[6] = {0};
    prt_network *net = NULL;
    prt_onnx_parser *p = NULL;
    size_t size;
    uint8_t *bytes;
    snprintf(dir, sizeof dir, "%s/ext", tmp_root);
    REQUIRE(make_dir(dir) == 0);
    snprintf(path, sizeof path, "%s/weights", dir);
    REQUIRE(make_dir(path) == 0);
    for (int i = 0; i < 6; i++)
        file[4 + i] = (float)(i + 1) * 1000;
    snprintf(path, sizeof path, "%s/weights/w.bin", dir);
    REQUIRE(write_file(path, file, sizeof file));

    bytes = pack(external_graph("weights/w.bin", "24"), 8, 17, &size);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    REQUIRE(write_file(path, bytes, size));
    REQUIRE_OK(prt_onnx_parser_create(reg_global, &p));
    CHECK_OK(prt_onnx_parser_parse_file(p, path, &net));
    CHECK(net && build_and_run(net, x, "Y", y));
    for (int i = 0; i < 6; i++)
        CHECK(y[i] == 1000.0f * (i + 1) + 100.0f * (i + 1));
    prt_network_destroy(net);
    net = NULL;
    /* From bytes, the base directory is the caller's to give. */
    CHECK_OK(prt_onnx_parser_parse_bytes(p, bytes, size, dir, &net));
    prt_network_destroy(net);
    net = NULL;
    CHECK_ERR(prt_onnx_parser_parse_bytes(p, bytes, size, NULL, &net),
              PRT_ERR_INVALID_ARGUMENT, "base directory");
    free(bytes);

    /* No length entry: the tensor's size is read. */
    bytes = pack(external_graph("weights/w.bin", NULL), 8, 17, &size);
    CHECK_OK(prt_onnx_parser_parse_bytes(p, bytes, size, dir, &net));
    prt_network_destroy(net);
    net = NULL;
    free(bytes);

    /* Paths that leave the model's directory. */
    bytes = pack(external_graph("../ext/weights/w.bin", "24"), 8, 17, &size);
    CHECK_ERR(prt_onnx_parser_parse_bytes(p, bytes, size, dir, &net), PRT_ERR_MALFORMED,
              "..");
    free(bytes);
    bytes = pack(external_graph("weights/../../w.bin", "24"), 8, 17, &size);
    CHECK_ERR(prt_onnx_parser_parse_bytes(p, bytes, size, dir, &net), PRT_ERR_MALFORMED,
              "relative");
    free(bytes);
    bytes = pack(external_graph(path, "24"), 8, 17, &size);
    CHECK_ERR(prt_onnx_parser_parse_bytes(p, bytes, size, dir, &net), PRT_ERR_MALFORMED,
              "relative");
    free(bytes);
    /* A length that disagrees with the dims; a file that is too short; a
     * missing file; a bad number. */
    bytes = pack(external_graph("weights/w.bin", "20"), 8, 17, &size);
    CHECK_ERR(prt_onnx_parser_parse_bytes(p, bytes, size, dir, &net), PRT_ERR_MALFORMED,
              "24");
    free(bytes);
    snprintf(path, sizeof path, "%s/weights/short.bin", dir);
    REQUIRE(write_file(path, file, 30));
    bytes = pack(external_graph("weights/short.bin", "24"), 8, 17, &size);
    CHECK_ERR(prt_onnx_parser_parse_bytes(p, bytes, size, dir, &net), PRT_ERR_MALFORMED,
              "30 bytes");
    free(bytes);
    bytes = pack(external_graph("weights/none.bin", "24"), 8, 17, &size);
    CHECK_ERR(prt_onnx_parser_parse_bytes(p, bytes, size, dir, &net), PRT_ERR_IO,
              "none.bin");
    free(bytes);
    bytes = pack(external_graph("weights/w.bin", "2x"), 8, 17, &size);
    CHECK_ERR(prt_onnx_parser_parse_bytes(p, bytes, size, dir, &net), PRT_ERR_MALFORMED,
              "2x");
    free(bytes);
    /* Dims that claim 16 TiB of external data: the file's size refutes them
     * before anything is allocated, so the error is the short file (or the
     * missing base directory), never out of memory (the buffer used to be
     * allocated from the dims alone, before any check). */
    {
        Onnx__GraphProto *g = external_graph("weights/w.bin", NULL);
        static const int64_t huge[2] = {(int64_t)1 << 21, (int64_t)1 << 21};
        g->initializer[0]->dims = A(sizeof huge);
        memcpy(g->initializer[0]->dims, huge, sizeof huge);
        bytes = pack(g, 8, 17, &size);
        CHECK_ERR(prt_onnx_parser_parse_bytes(p, bytes, size, dir, &net),
                  PRT_ERR_MALFORMED, "40 bytes");
        CHECK_ERR(prt_onnx_parser_parse_bytes(p, bytes, size, NULL, &net),
                  PRT_ERR_INVALID_ARGUMENT, "base directory");
        free(bytes);
    }
    prt_onnx_parser_destroy(p);
    return 0;
}

/* Makes the folder <tmp>/<name> (its path into dir), a folder <sub> in it
 * and the file <file> in it, of n bytes of data. 0 on failure. */
static int make_model_dir(const char *name, const char *sub, const char *file,
                          const void *data, size_t n, char *dir, size_t cap)
{
    char path[1024];
    snprintf(dir, cap, "%s/%s", tmp_root, name);
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    if (make_dir(dir) != 0 || make_dir(path) != 0)
        return 0;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return write_file(path, data, n);
}

/* Imports external_graph(location) from `dir`: PRT_OK, or the status `want`
 * with a message that contains `sub`, names the tensor ('W') and contains
 * `also`. */
static void import_external(prt_onnx_parser *p, const char *dir, const char *location,
                            prt_status want, const char *sub, const char *also)
{
    size_t size;
    uint8_t *bytes = pack(external_graph(location, "24"), 8, 17, &size);
    prt_network *net = NULL;
    prt_status st = prt_onnx_parser_parse_bytes(p, bytes, size, dir, &net);
    free(bytes);
    if (want == PRT_OK) {
        CHECK_OK(st);
        CHECK(net != NULL);
        prt_network_destroy(net);
        return;
    }
    CHECK_ERR(st, want, sub);
    CHECK(net == NULL);
    CHECK(strstr(prt_last_error(), "'W'") && strstr(prt_last_error(), also));
    if (st == PRT_OK)
        prt_network_destroy(net);
}

/* External data must be a regular file inside the model's folder once
 * symlinks are resolved (ONNX Runtime's rule), whatever the location
 * says. */
static int test_external_confinement(void)
{
    char dir[512], path[600], target[600];
    float file[4 + 6] = {0};
    prt_network *net = NULL;
    prt_onnx_parser *p = NULL;
    for (int i = 0; i < 6; i++)
        file[4 + i] = (float)(i + 1);
    REQUIRE(make_model_dir("conf", "sub", "w.bin", file, sizeof file, dir, sizeof dir));
    /* The same bytes outside the folder: without the check, a link to them
     * imports fine. */
    snprintf(target, sizeof target, "%s/outside.bin", tmp_root);
    REQUIRE(write_file(target, file, sizeof file));
    snprintf(path, sizeof path, "%s/conf/out.bin", tmp_root);
    REQUIRE(symlink(target, path) == 0);
    remember(path);
    snprintf(path, sizeof path, "%s/conf/sub/in.bin", tmp_root);
    REQUIRE(symlink("../w.bin", path) == 0);
    remember(path);
    snprintf(path, sizeof path, "%s/conf/fifo.bin", tmp_root);
    REQUIRE(mkfifo(path, 0600) == 0);
    remember(path);
    REQUIRE_OK(prt_onnx_parser_create(reg_global, &p));

    /* A symlink out of the folder; one that stays inside is fine, and so is
     * a plain file. */
    import_external(p, dir, "out.bin", PRT_ERR_IO, "outside", "'out.bin'");
    import_external(p, dir, "sub/in.bin", PRT_OK, NULL, NULL);
    import_external(p, dir, "w.bin", PRT_OK, NULL, NULL);
    /* "..", and an absolute path, even to a file inside the folder. */
    import_external(p, dir, "sub/../../conf/w.bin", PRT_ERR_MALFORMED, "'..'",
                    "sub/../../conf");
    snprintf(path, sizeof path, "%s/conf/w.bin", tmp_root);
    import_external(p, dir, path, PRT_ERR_MALFORMED, "relative", path);
    /* A FIFO and a directory are not data files. */
    /* A FIFO opened as data would wait for a writer forever. */
    tu_watchdog("test_onnx_import", 20);
    import_external(p, dir, "fifo.bin", PRT_ERR_IO, "FIFO", "fifo.bin");
    import_external(p, dir, "sub", PRT_ERR_IO, "directory", "'sub'");
    /* A FIFO as the model or as a tensor file fails at once too. */
    {
        char *name = NULL;
        int32_t dtype;
        prt_dims dims;
        void *data = NULL;
        snprintf(path, sizeof path, "%s/conf/fifo.bin", tmp_root);
        CHECK_ERR(prt_onnx_parser_parse_file(p, path, &net), PRT_ERR_IO, "FIFO");
        CHECK_ERR(prt_onnx_read_tensor_file(path, &name, &dtype, &dims, &data),
                  PRT_ERR_IO, "FIFO");
        CHECK_ERR(prt_onnx_parser_parse_file(p, dir, &net), PRT_ERR_IO, "directory");
    }
    tu_watchdog("test_onnx_import", 0);
    prt_onnx_parser_destroy(p);
    return 0;
}

/* Writes a TensorProto to <tmp>/<file> and reads it back. */
static prt_status tensor_roundtrip(Onnx__TensorProto *t, const char *file, int32_t *dtype,
                                   prt_dims *dims, void **data)
{
    char path[600], *name = NULL;
    size_t n = onnx__tensor_proto__get_packed_size(t);
    uint8_t *buf = malloc(n ? n : 1);
    prt_status st;
    onnx__tensor_proto__pack(t, buf);
    snprintf(path, sizeof path, "%s/%s", tmp_root, file);
    if (!write_file(path, buf, n)) {
        free(buf);
        return PRT_ERR_IO;
    }
    free(buf);
    *data = NULL;
    st = prt_onnx_read_tensor_file(path, &name, dtype, dims, data);
    if (!st)
        CHECK(strcmp(name, str_or(t->name)) == 0);
    prt_free(name);
    return st;
}

static int test_tensor_files(void)
{
    const int64_t d2[2] = {2, 2}, d1[1] = {3};
    int32_t dtype;
    prt_dims dims;
    void *data;
    Onnx__TensorProto *t;

    /* float_data */
    {
        const float v[4] = {1, -2, 3.5f, 4};
        t = tensor_f32("a", 2, d2, v, 4);
        CHECK_OK(tensor_roundtrip(t, "a.pb", &dtype, &dims, &data));
        CHECK(dtype == PRT_FLOAT32 && dims.nb_dims == 2 && dims.d[0] == 2 &&
              dims.d[1] == 2);
        CHECK(data && memcmp(data, v, sizeof v) == 0);
        prt_free(data);
        /* A count that does not match the dims. */
        t->n_float_data = 3;
        CHECK_ERR(tensor_roundtrip(t, "a.pb", &dtype, &dims, &data), PRT_ERR_MALFORMED,
                  "'");
    }
    /* int32_data carries int8, uint8, bool, float16 and int32. */
    {
        static const struct {
            int32_t onnx, prt;
            int32_t v[3];
        } cases[] = {
            {ONNX__TENSOR_PROTO__DATA_TYPE__INT8, PRT_INT8, {-128, 0, 127}},
            {ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, PRT_UINT8, {0, 200, 255}},
            {ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, PRT_BOOL, {1, 0, 1}},
            {ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16, PRT_FLOAT16, {0x3c00, 0xc000, 0}},
            {ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16, PRT_BFLOAT16, {0x3f80, 0, 1}},
            {ONNX__TENSOR_PROTO__DATA_TYPE__INT32, PRT_INT32, {-70000, 5, 70000}},
        };
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            size_t es = prt_dtype_size(cases[k].prt);
            t = tensor_raw("b", cases[k].onnx, 1, d1, NULL, 0);
            t->n_int32_data = 3;
            t->int32_data = A(sizeof(int32_t) * 3);
            memcpy(t->int32_data, cases[k].v, sizeof cases[k].v);
            CHECK_OK(tensor_roundtrip(t, "b.pb", &dtype, &dims, &data));
            CHECK(dtype == cases[k].prt && dims.nb_dims == 1 && dims.d[0] == 3);
            for (int i = 0; data && i < 3; i++) {
                int64_t got = 0;
                switch (es) {
                case 1:
                    got = cases[k].prt == PRT_INT8 ? ((int8_t *)data)[i]
                                                   : ((uint8_t *)data)[i];
                    break;
                case 2:
                    got = ((uint16_t *)data)[i];
                    break;
                default:
                    got = ((int32_t *)data)[i];
                    break;
                }
                CHECK(got == cases[k].v[i]);
            }
            prt_free(data);
        }
        /* A value that does not fit. */
        t = tensor_raw("c", ONNX__TENSOR_PROTO__DATA_TYPE__INT8, 1, d1, NULL, 0);
        t->n_int32_data = 3;
        t->int32_data = A(sizeof(int32_t) * 3);
        t->int32_data[1] = 128;
        CHECK_ERR(tensor_roundtrip(t, "c.pb", &dtype, &dims, &data), PRT_ERR_MALFORMED,
                  "128");
    }
    /* int64_data, and raw data. */
    {
        const int64_t v[3] = {-1, (int64_t)1 << 50, 7};
        t = tensor_raw("d", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, d1, NULL, 0);
        t->n_int64_data = 3;
        t->int64_data = A(sizeof v);
        memcpy(t->int64_data, v, sizeof v);
        CHECK_OK(tensor_roundtrip(t, "d.pb", &dtype, &dims, &data));
        CHECK(dtype == PRT_INT64 && data && memcmp(data, v, sizeof v) == 0);
        prt_free(data);
        t = tensor_raw("e", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, d1, v, sizeof v);
        CHECK_OK(tensor_roundtrip(t, "e.pb", &dtype, &dims, &data));
        CHECK(dtype == PRT_INT64 && data && memcmp(data, v, sizeof v) == 0);
        prt_free(data);
        /* Raw data of the wrong size. */
        t = tensor_raw("e", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, d1, v, sizeof v - 1);
        CHECK_ERR(tensor_roundtrip(t, "e.pb", &dtype, &dims, &data), PRT_ERR_MALFORMED,
                  "raw_data");
    }
    /* A scalar and an empty tensor. */
    {
        const float v = 2.5f;
        t = tensor_raw("s", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 0, NULL, &v, sizeof v);
        CHECK_OK(tensor_roundtrip(t, "s.pb", &dtype, &dims, &data));
        CHECK(dims.nb_dims == 0 && data && *(float *)data == 2.5f);
        prt_free(data);
        {
            const int64_t d0[2] = {0, 4};
            t = tensor_raw("z", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, d0, NULL, 0);
            CHECK_OK(tensor_roundtrip(t, "z.pb", &dtype, &dims, &data));
            CHECK(dims.nb_dims == 2 && dims.d[0] == 0 && data != NULL);
            prt_free(data);
        }
    }
    /* Types plugrt lacks, negative dims, no type. */
    t = tensor_raw("str", ONNX__TENSOR_PROTO__DATA_TYPE__STRING, 1, d1, NULL, 0);
    CHECK_ERR(tensor_roundtrip(t, "f.pb", &dtype, &dims, &data), PRT_ERR_UNSUPPORTED,
              "STRING");
    t = tensor_raw("cpx", ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX128, 1, d1, NULL, 0);
    CHECK_ERR(tensor_roundtrip(t, "f.pb", &dtype, &dims, &data), PRT_ERR_UNSUPPORTED,
              "cpx");
    {
        const int64_t neg[1] = {-3};
        t = tensor_raw("n", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1, neg, NULL, 0);
        CHECK_ERR(tensor_roundtrip(t, "f.pb", &dtype, &dims, &data), PRT_ERR_MALFORMED,
                  "-3");
    }
    t = tensor_raw("nt", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1, d1, NULL, 0);
    t->has_data_type = 0;
    CHECK_ERR(tensor_roundtrip(t, "f.pb", &dtype, &dims, &data), PRT_ERR_MALFORMED,
              "data_type");
    /* Not a file; not a tensor. */
    {
        char *name;
        CHECK_ERR(
            prt_onnx_read_tensor_file("/nonexistent/x.pb", &name, &dtype, &dims, &data),
            PRT_ERR_IO, "x.pb");
        CHECK_ERR(prt_onnx_read_tensor_file(NULL, &name, &dtype, &dims, &data),
                  PRT_ERR_INVALID_ARGUMENT, NULL);
    }
    return 0;
}

/* Every truncation of a model, and random flips of its bytes, end in a
 * clean status (run under ASan to see that nothing is read out of
 * bounds). */
static int test_garbage(void)
{
    size_t size;
    uint8_t *bytes = pack(constants_graph(), 8, 17, &size);
    uint8_t *copy = malloc(size);
    tu_rng rng;
    int ok_count = 0;
    REQUIRE(copy != NULL);
    for (size_t n = 0; n < size; n++) {
        prt_network *net = NULL;
        prt_status st;
        memcpy(copy, bytes, n);
        st = parse(copy, n, NULL, &net);
        if (st == PRT_OK) {
            ok_count++;
            prt_network_destroy(net);
        } else {
            CHECK(prt_last_error()[0] != '\0');
        }
    }
    /* Cuts at a field boundary can leave a valid model only after the graph,
     * which the packer writes last-but-one; most cuts must fail. */
    CHECK(ok_count < 3);
    tu_rng_seed(&rng, 42);
    for (int iter = 0; iter < 3000; iter++) {
        prt_network *net = NULL;
        int flips = (int)tu_rng_range(&rng, 1, 4);
        memcpy(copy, bytes, size);
        for (int k = 0; k < flips; k++)
            copy[tu_rng_range(&rng, 0, (int64_t)size - 1)] ^=
                (uint8_t)tu_rng_range(&rng, 1, 255);
        if (parse(copy, size, NULL, &net) == PRT_OK)
            prt_network_destroy(net);
        else
            CHECK(prt_last_error()[0] != '\0');
    }
    free(copy);
    free(bytes);

    /* Flips in a real model (initializers, attributes, dim_params). */
    {
        char path[1024];
        FILE *f;
        long n;
        snprintf(path, sizeof path, "%s/models/qa_custom_hardmax.onnx", PRT_SHARED_DIR);
        f = fopen(path, "rb");
        if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 &&
            fseek(f, 0, SEEK_SET) == 0) {
            uint8_t *orig = malloc((size_t)n), *buf = malloc((size_t)n);
            if (orig && buf && fread(orig, 1, (size_t)n, f) == (size_t)n) {
                for (int iter = 0; iter < 2000; iter++) {
                    prt_network *net = NULL;
                    int flips = (int)tu_rng_range(&rng, 1, 3);
                    memcpy(buf, orig, (size_t)n);
                    for (int k = 0; k < flips; k++)
                        buf[tu_rng_range(&rng, 0, n - 1)] ^=
                            (uint8_t)tu_rng_range(&rng, 1, 255);
                    if (parse(buf, (size_t)n, NULL, &net) == PRT_OK)
                        prt_network_destroy(net);
                    else
                        CHECK(prt_last_error()[0] != '\0');
                }
            }
            free(orig);
            free(buf);
        }
        if (f)
            fclose(f);
    }

    /* Deep nesting: a TENSOR attribute is fine, but a chain of GRAPH
     * attributes thousands deep is refused before protobuf-c recurses. */
    {
        enum { DEPTH = 5000 };
        uint8_t *deep = malloc(DEPTH * 16 + 64);
        size_t pos = 0, len = 0;
        prt_network *net = NULL;
        /* Built inside out: each level is a length-delimited field 7
         * (ModelProto.graph / AttributeProto.g is 6, GraphProto.node is 1,
         * NodeProto.attribute is 5): graph{node{attribute{g{node{...}}}}}. */
        uint8_t *buf = malloc(DEPTH * 16 + 64), *tmp = malloc(DEPTH * 16 + 64);
        REQUIRE(deep && buf && tmp);
        for (int level = 0; level < DEPTH; level++) {
            /* From the outside in: Graph.node, Node.attribute, Attribute.g. */
            static const uint8_t tags[3] = {(1 << 3) | 2, (5 << 3) | 2, (6 << 3) | 2};
            uint8_t tag = tags[(DEPTH - 1 - level) % 3];
            size_t hdr = 0;
            uint8_t vbuf[10];
            size_t v = len;
            do {
                vbuf[hdr++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
                v >>= 7;
            } while (v);
            tmp[0] = tag;
            memcpy(tmp + 1, vbuf, hdr);
            memcpy(tmp + 1 + hdr, buf, len);
            len += 1 + hdr;
            memcpy(buf, tmp, len);
        }
        deep[pos++] = (7 << 3) | 2; /* ModelProto.graph */
        {
            size_t v = len;
            do {
                deep[pos++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
                v >>= 7;
            } while (v);
        }
        memcpy(deep + pos, buf, len);
        pos += len;
        CHECK_ERR(parse(deep, pos, NULL, &net), PRT_ERR_MALFORMED, "nested too deeply");
        free(deep);
        free(buf);
        free(tmp);
    }
    /* Bytes that are not a protobuf at all, and nothing. */
    {
        prt_network *net = NULL;
        const char junk[] = "this is not an onnx model";
        CHECK_ERR(parse((const uint8_t *)junk, sizeof junk, NULL, &net),
                  PRT_ERR_MALFORMED, "ModelProto");
        CHECK_ERR(parse((const uint8_t *)"", 0, NULL, &net), PRT_ERR_VERSION,
                  "IR version");
    }
    return 0;
}

static int test_graph_errors(void)
{
    prt_network *net = NULL;
    size_t size;
    uint8_t *bytes;
    Onnx__GraphProto *g;

    /* Dangling input. */
    g = graph();
    G_IN(g, value_info("X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, D23));
    G_NODE(g, node("SumPlug", "s0", "X", "ghost", NULL, "Y"));
    G_OUT(g, "Y");
    bytes = pack(g, 8, 17, &size);
    CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_MALFORMED, "ghost");
    CHECK(strstr(prt_last_error(), "s0") != NULL);
    free(bytes);

    /* A cycle: a -> b -> a, behind a node that only follows it. */
    g = graph();
    G_IN(g, value_info("X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, D23));
    G_NODE(g, node("SumPlug", "after", "B", NULL, NULL, "Y"));
    G_NODE(g, node("SumPlug", "na", "X", "B", NULL, "A"));
    G_NODE(g, node("SumPlug", "nb", "A", NULL, NULL, "B"));
    G_OUT(g, "Y");
    bytes = pack(g, 8, 17, &size);
    CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_MALFORMED, "cycle");
    CHECK(strstr(prt_last_error(), "'na'") || strstr(prt_last_error(), "'nb'"));
    CHECK(strstr(prt_last_error(), "'after'") == NULL);
    free(bytes);

    /* Not sorted, but acyclic: sorted by the importer. */
    g = graph();
    G_IN(g, value_info("X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, D23));
    G_NODE(g, node("SumPlug", "last", "A", "B", NULL, "Y"));
    G_NODE(g, node("SumPlug", "second", "A", NULL, NULL, "B"));
    G_NODE(g, node("SumPlug", "first", "X", NULL, NULL, "A"));
    G_OUT(g, "Y");
    bytes = pack(g, 8, 17, &size);
    CHECK_OK(parse(bytes, size, NULL, &net));
    {
        float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {0};
        CHECK(net && build_and_run(net, x, "Y", y));
        CHECK(y[5] == 12.0f);
    }
    prt_network_destroy(net);
    net = NULL;
    free(bytes);

    /* Omitted optional inputs: trailing ones drop, a gap is refused. */
    g = graph();
    G_IN(g, value_info("X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, D23));
    G_NODE(g, node("SumPlug", "opt", "X", "", "", "Y"));
    G_OUT(g, "Y");
    bytes = pack(g, 8, 17, &size);
    CHECK_OK(parse(bytes, size, NULL, &net));
    prt_network_destroy(net);
    net = NULL;
    free(bytes);
    g->node[0]->input[2] = S("X");
    bytes = pack(g, 8, 17, &size);
    CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_UNSUPPORTED, "omitted");
    free(bytes);

    /* A name produced twice; an output nobody produces; no outputs. */
    g = graph();
    G_IN(g, value_info("X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, D23));
    G_NODE(g, node("SumPlug", "p1", "X", NULL, NULL, "Y"));
    G_NODE(g, node("SumPlug", "p2", "X", NULL, NULL, "Y"));
    G_OUT(g, "Y");
    bytes = pack(g, 8, 17, &size);
    CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_MALFORMED, "'p1'");
    free(bytes);
    g->n_node = 1;
    G_OUT(g, "Z");
    bytes = pack(g, 8, 17, &size);
    CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_MALFORMED, "'Z'");
    free(bytes);
    g->n_output = 0;
    bytes = pack(g, 8, 17, &size);
    CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_MALFORMED, "no outputs");
    free(bytes);

    /* Versions. */
    g->n_output = 1;
    bytes = pack(g, 2, 17, &size);
    CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_VERSION, "IR version");
    free(bytes);
    bytes = pack(g, 8, 0, &size);
    CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_VERSION, "opset 0");
    free(bytes);
    bytes = pack(g, 8, 99, &size);
    CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_VERSION, "99");
    free(bytes);
    /* Opsets below 7 are read; each op's own first opset guards the
     * semantics that changed before it: Add's broadcast attribute (7),
     * Relu's consumed_inputs (6). */
    {
        Onnx__GraphProto *o = graph();
        G_IN(o, value_info("X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, D23));
        G_NODE(o, node("Relu", "r", "X", NULL, NULL, "Y"));
        G_OUT(o, "Y");
        bytes = pack(o, 3, 6, &size);
        CHECK_OK(parse(bytes, size, NULL, &net));
        prt_network_destroy(net);
        net = NULL;
        free(bytes);
        bytes = pack(o, 3, 5, &size);
        CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_VERSION,
                  "Relu from opset 6; the model imports opset 5");
        free(bytes);
        o->node[0] = node("Add", "a", "X", "X", NULL, "Y");
        bytes = pack(o, 3, 6, &size);
        CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_VERSION,
                  "'a' (Add): plugrt imports Add from opset 7");
        free(bytes);
    }
    /* Newer IR versions are read. */
    bytes = pack(g, 10, 17, &size);
    CHECK_OK(parse(bytes, size, NULL, &net));
    prt_network_destroy(net);
    net = NULL;
    free(bytes);

    /* An input of a type plugrt lacks; an input without a shape. */
    g->input[0] = value_info("X", ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX64, 2, D23);
    bytes = pack(g, 8, 17, &size);
    CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_UNSUPPORTED, "'X'");
    free(bytes);
    g->input[0] = value_info("X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, D23);
    g->input[0]->type->tensor_type->shape = NULL;
    bytes = pack(g, 8, 17, &size);
    CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_UNSUPPORTED, "shape");
    free(bytes);
    return 0;
}

/* dim_param and missing dims become dynamic. */
static int test_dynamic_dims(void)
{
    Onnx__GraphProto *g = graph();
    const int64_t dims[2] = {-1, 3};
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL;
    prt_io_info io = {.struct_size = sizeof(prt_io_info)};
    int32_t prof, idx;
    prt_dims mn = {2, {1, 3}}, mx = {2, {8, 3}};
    size_t size;
    uint8_t *bytes;
    Onnx__ValueInfoProto *x =
        value_info("X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, dims);
    /* The second dim has neither a value nor a parameter. */
    x->type->tensor_type->shape->dim[1]->value_case =
        ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE__NOT_SET;
    G_IN(g, x);
    G_NODE(g, node("SumPlug", "s", "X", NULL, NULL, "Y"));
    G_OUT(g, "Y");
    bytes = pack(g, 8, 17, &size);
    CHECK_OK(parse(bytes, size, NULL, &net));
    free(bytes);
    REQUIRE(net != NULL);
    REQUIRE_OK(prt_builder_config_create(&cfg));
    REQUIRE_OK(prt_builder_config_add_profile(cfg, &prof));
    CHECK_OK(prt_builder_config_set_profile_dims(cfg, prof, "X", &mn, &mx, &mx));
    CHECK_OK(prt_engine_build(net, cfg, reg_global, &e));
    if (e) {
        CHECK_OK(prt_engine_find_io(e, "X", &idx));
        CHECK_OK(prt_engine_get_io(e, idx, &io));
        CHECK(io.dims.nb_dims == 2 && io.dims.d[0] == -1);
        CHECK_OK(prt_engine_find_io(e, "Y", &idx));
    }
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return 0;
}

/* ---- the seed models --------------------------------------------------------- */

static int seed_model(const char *file, int nb_inputs, const char *const *names,
                      const prt_dims *shapes)
{
    char path[1024];
    prt_onnx_parser *p = NULL;
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL;
    int32_t prof;
    prt_status st;
    snprintf(path, sizeof path, "%s/models/%s", PRT_SHARED_DIR, file);
    if (access(path, R_OK) != 0) {
        printf("seed model %s: not present; skipped\n", path);
        return 0;
    }
    REQUIRE_OK(prt_onnx_parser_create(reg_global, &p));
    st = prt_onnx_parser_parse_file(p, path, &net);
    prt_onnx_parser_destroy(p);
    if (st == PRT_ERR_UNSUPPORTED &&
        strstr(prt_last_error(), "available in this libplugrt")) {
        /* The built-in ops are landing separately; until then say so. */
        printf("seed model %s: skipped, a built-in op is missing: %s\n", file,
               prt_last_error());
        return 0;
    }
    CHECK_OK(st);
    if (st)
        return 1;
    REQUIRE_OK(prt_builder_config_create(&cfg));
    REQUIRE_OK(prt_builder_config_add_profile(cfg, &prof));
    for (int i = 0; i < nb_inputs; i++)
        CHECK_OK(prt_builder_config_set_profile_dims(cfg, prof, names[i], &shapes[i],
                                                     &shapes[i], &shapes[i]));
    CHECK_OK(prt_engine_build(net, cfg, reg_global, &e));
    if (e)
        printf("seed model %s: imported and built (%d layers)\n", file,
               (int)prt_engine_layer_count(e));
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return 0;
}

static int test_seed_models(void)
{
    static const char *const nz[] = {"X"}, *const qa[] = {"q", "k"}, *const cp[] = {"x"};
    const prt_dims nz_d[1] = {{2, {128, 128}}};
    const prt_dims qa_d[2] = {{2, {3, 32}}, {2, {64, 32}}};
    const prt_dims cp_d[1] = {{4, {2, 4, 16, 16}}};
    seed_model("nonzero_plugin.onnx", 1, nz, nz_d);
    seed_model("qa_custom_hardmax.onnx", 2, qa, qa_d);
    seed_model("circ_pad_conv.onnx", 1, cp, cp_d);
    return 0;
}

/* ---- allocation failure ------------------------------------------------------ */

/* One import as a user makes it: a parser, an op mapping, then the model
 * from bytes or, when `path` is set, from that file. */
static prt_status import_once(const uint8_t *bytes, size_t size, const char *path,
                              prt_network **net)
{
    prt_onnx_parser *p = NULL;
    prt_status st = prt_onnx_parser_create(reg_global, &p);
    if (!st)
        st = prt_onnx_parser_map_op(p, "Frob", PRT_BUILTIN_NAMESPACE, "Relu", "1");
    if (!st && path)
        st = prt_onnx_parser_parse_file(p, path, net);
    else if (!st)
        st = prt_onnx_parser_parse_bytes(p, bytes, size, NULL, net);
    prt_onnx_parser_destroy(p);
    return st;
}

/* Whether the failure that base_fail_alloc_after(n) set up is still to
 * come (the run since then made at most n allocations); then disables it. */
static int failure_pending(int64_t n)
{
    int pending = 0;
    for (int64_t i = 0; i <= n && !pending; i++) {
        void *q = base_malloc(1);
        pending = q == NULL;
        base_free(q);
    }
    base_fail_alloc_after(-1);
    return pending;
}

/* Fails allocation n = 0, 1, 2, ... of import_once (or, with `tensor_file`,
 * of prt_onnx_read_tensor_file) until a run makes no more than n. Every
 * run that meets its failure must end in PRT_ERR_OUT_OF_MEMORY with a
 * message that says so and leave its outputs untouched; the sanitizer build
 * finds what a run leaks. Returns how many runs failed with protobuf-c's
 * unpack out of memory. */
static int alloc_sweep(const char *what, const uint8_t *bytes, size_t size,
                       const char *path, int tensor_file)
{
    enum { MAX_RUNS = 20000, MAX_SHOWN = 5 };
    int bad = 0, in_unpack = 0;
    for (int64_t n = 0; n < MAX_RUNS; n++) {
        prt_network *net = NULL;
        char *name = NULL;
        void *data = NULL;
        int32_t dtype;
        prt_dims dims;
        prt_status st;
        base_fail_alloc_after(n);
        if (tensor_file)
            st = prt_onnx_read_tensor_file(path, &name, &dtype, &dims, &data);
        else
            st = import_once(bytes, size, path, &net);
        if (failure_pending(n)) {
            /* Success at the first n that the run never reached: an
             * import that met the failure and succeeded anyway has hidden
             * it (and may have dropped something). */
            CHECK(st == PRT_OK);
            CHECK(tensor_file ? name && data : net != NULL);
            prt_network_destroy(net);
            prt_free(name);
            prt_free(data);
            /* Failing the first allocation fails the import: the sweep
             * reached it. */
            CHECK(n > 0);
            CHECK(bad == 0);
            printf("%s: %lld allocations, each failed in turn\n", what, (long long)n);
            return in_unpack;
        }
        if (st == PRT_OK) {
            if (bad++ < MAX_SHOWN)
                fprintf(stderr, "%s: allocation %lld failed, yet the import succeeded\n",
                        what, (long long)n);
            prt_network_destroy(net);
            prt_free(name);
            prt_free(data);
            continue;
        }
        if (st != PRT_ERR_OUT_OF_MEMORY || !strstr(prt_last_error(), "out of memory") ||
            net || name || data) {
            if (bad++ < MAX_SHOWN)
                fprintf(stderr, "%s: allocation %lld failed: %s: %s\n", what,
                        (long long)n, prt_status_name(st), prt_last_error());
        }
        in_unpack += strstr(prt_last_error(), "unpacking") != NULL;
    }
    fprintf(stderr, "%s: no success after %d runs\n", what, MAX_RUNS);
    CHECK(!"the sweep ends in a successful import");
    return in_unpack;
}

/* X -> Relu -> Add(W) -> Reshape(S) -> Frob (mapped to Relu) -> Y, listed
 * out of order (so the nodes are sorted), with a Constant as a second
 * output (copied by an Identity). */
static Onnx__GraphProto *builtin_graph(void)
{
    Onnx__GraphProto *g = graph();
    const float w[6] = {1, 2, 3, 4, 5, 6}, k[6] = {6, 5, 4, 3, 2, 1};
    const int64_t shape[2] = {3, 2};
    Onnx__NodeProto *sn = node("Constant", "s", NULL, NULL, NULL, "S");
    Onnx__NodeProto *kn = node("Constant", "k", NULL, NULL, NULL, "K");
    node_attr(sn, attr_ints("value_ints", 2, shape));
    node_attr(kn, attr_t("value", tensor_raw("", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2,
                                             D23, k, sizeof k)));
    G_IN(g, value_info("X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, D23));
    G_INIT(g, tensor_f32("W", 2, D23, w, 6));
    G_NODE(g, node("Reshape", "reshape", "A", "S", NULL, "B"));
    G_NODE(g, node("Add", "add", "R", "W", NULL, "A"));
    G_NODE(g, node("Relu", NULL, "X", NULL, NULL, "R"));
    G_NODE(g, sn);
    G_NODE(g, node("Frob", "frob", "B", NULL, NULL, "Y"));
    G_NODE(g, kn);
    G_OUT(g, "Y");
    G_OUT(g, "K");
    return g;
}

static int test_alloc_failures(void)
{
    char dir[512], path[600];
    float file[4 + 6] = {0};
    const int64_t d1[1] = {3}, tvals[3] = {7, 8, 9};
    Onnx__NodeProto *n;
    Onnx__GraphProto *g;
    size_t size;
    uint8_t *bytes;
    prt_network *net = NULL;

    bytes = pack(builtin_graph(), 8, 17, &size);
    CHECK_OK(import_once(bytes, size, NULL, &net)); /* the model itself is sound */
    CHECK(net && prt_network_output_count(net) == 2);
    prt_network_destroy(net);
    CHECK(alloc_sweep("built-in ops", bytes, size, NULL, 0) > 0);
    free(bytes);

    g = plugin_graph(&n);
    node_attr(n, attr_i("i8", -5));
    node_attr(n, attr_ints("i16s", 3, tvals));
    node_attr(n, attr_f("f32", 1.5f));
    node_attr(n, attr_s("name", "hello"));
    node_attr(n, attr_ints("dims", 1, d1));
    node_attr(n, attr_t("tens", tensor_raw("", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1,
                                           d1, tvals, sizeof tvals)));
    bytes = pack(g, 8, 17, &size);
    CHECK(alloc_sweep("plugin attributes", bytes, size, NULL, 0) > 0);
    free(bytes);

    bytes = pack(constants_graph(), 8, 17, &size);
    CHECK(alloc_sweep("initializers and constants", bytes, size, NULL, 0) > 0);
    free(bytes);

    bytes = pack(clash_graph(), 8, 17, &size);
    CHECK(alloc_sweep("a renamed default name", bytes, size, NULL, 0) > 0);
    free(bytes);

    REQUIRE(make_model_dir("oom", "weights", "weights/w.bin", file, sizeof file, dir,
                           sizeof dir));
    bytes = pack(external_graph("weights/w.bin", "24"), 8, 17, &size);
    snprintf(path, sizeof path, "%s/oom/model.onnx", tmp_root);
    REQUIRE(write_file(path, bytes, size));
    free(bytes);
    CHECK(alloc_sweep("external data", NULL, 0, path, 0) > 0);

    {
        Onnx__TensorProto *t = tensor_f32("T", 1, d1, file, 3);
        uint8_t *buf;
        size = onnx__tensor_proto__get_packed_size(t);
        buf = malloc(size);
        REQUIRE(buf != NULL);
        onnx__tensor_proto__pack(t, buf);
        snprintf(path, sizeof path, "%s/oom/t.pb", tmp_root);
        CHECK(write_file(path, buf, size));
        free(buf);
        CHECK(alloc_sweep("tensor file", NULL, 0, path, 1) > 0);
    }
    return 0;
}

/* An op nothing serves, one letter or a case off a known one: the error
 * says what was probably meant. */
static int test_near_miss(void)
{
    static const struct {
        const char *op, *want;
    } cs[] = {{"relu", "did you mean the ONNX op 'Relu'?"},
              {"CustomHardMax", "did you mean the plugin ::CustomHardmax@1"},
              {"NonZeroPlugn", "did you mean the plugin ::NonZeroPlugin@1"},
              {"Zzyzx", NULL}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        Onnx__GraphProto *g = graph();
        prt_network *net = NULL;
        uint8_t *bytes;
        size_t size;
        G_IN(g, value_info("X", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, D23));
        G_NODE(g, node(cs[i].op, "n0", "X", NULL, NULL, "Y"));
        G_OUT(g, "Y");
        bytes = pack(g, 8, 13, &size);
        CHECK_ERR(parse(bytes, size, NULL, &net), PRT_ERR_UNSUPPORTED, "has no importer");
        if (cs[i].want)
            CHECK(strstr(prt_last_error(), cs[i].want) != NULL);
        else
            CHECK(strstr(prt_last_error(), "did you mean") == NULL);
        CHECK(net == NULL);
        free(bytes);
        arena_free();
    }
    return 0;
}

/* A plugin node whose output disagrees with what the model declares for it:
 * a warning naming the node, the output and both shapes; an error when the
 * parser is strict; nothing when they agree. */
static int test_declared_outputs(void)
{
    static const int64_t d2[1] = {2};
    for (int variant = 0; variant < 3; variant++) {
        Onnx__NodeProto *n;
        Onnx__GraphProto *g = plugin_graph(&n);
        prt_onnx_parser *p = NULL;
        prt_network *net = NULL;
        prt_builder_config *cfg = NULL;
        prt_engine *e = NULL;
        prt_dims d = {2, {2, 3}};
        int32_t prof;
        uint8_t *bytes;
        size_t size;
        prt_status st;
        /* variant 0: declared [2] (wrong rank); 1: the same, strict; 2: [2, 3]. */
        g->output[0] =
            variant < 2 ? value_info("Y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1, d2)
                        : value_info("Y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 2, D23);
        bytes = pack(g, 8, 13, &size);
        log_text[0] = '\0';
        prt_set_logger(capture_log, NULL, PRT_SEV_WARNING);
        REQUIRE_OK(prt_onnx_parser_create(reg_global, &p));
        CHECK_OK(prt_onnx_parser_set_strict(p, variant == 1));
        CHECK_OK(prt_onnx_parser_parse_bytes(p, bytes, size, NULL, &net));
        CHECK_OK(prt_builder_config_create(&cfg));
        CHECK_OK(prt_builder_config_add_profile(cfg, &prof));
        CHECK_OK(prt_builder_config_set_profile_dims(cfg, prof, "X", &d, &d, &d));
        st = net ? prt_engine_build(net, cfg, reg_global, &e) : PRT_ERR_STATE;
        prt_set_logger(NULL, NULL, 0);
        if (variant == 0) {
            CHECK_OK(st);
            CHECK(strstr(log_text,
                         "layer 'tp0' (plugin tns::TestPlug): output 0 ('Y') is float32 "
                         "[2, 3], but the model declares float32 [2]") != NULL);
        } else if (variant == 1) {
            CHECK(st == PRT_ERR_SHAPE && e == NULL);
            CHECK(strstr(prt_last_error(),
                         "output 0 ('Y') is float32 [2, 3], but the model "
                         "declares float32 [2]") != NULL);
        } else {
            CHECK_OK(st);
            CHECK(strstr(log_text, "declares") == NULL);
        }
        prt_engine_destroy(e);
        prt_builder_config_destroy(cfg);
        prt_network_destroy(net);
        prt_onnx_parser_destroy(p);
        free(bytes);
        arena_free();
    }
    return 0;
}

int main(void)
{
    char tmpl[] = "/tmp/prt_onnx_test_XXXXXX";
    if (!mkdtemp(tmpl)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(tmp_root, sizeof tmp_root, "%s", tmpl);
    remember(tmp_root);
    reg_global = tu_registry_with_plugins();
    if (!reg_global)
        return tu_finish("test_onnx_import");
    if (prt_registry_add_creator(reg_global, &sp_creator) != PRT_OK ||
        prt_registry_add_creator(reg_global, &sp_creator_plain) != PRT_OK) {
        tu_fail(__FILE__, __LINE__, "add test creators");
        return tu_finish("test_onnx_import");
    }
    test_plugin_fields();
    test_declared_outputs();
    test_near_miss();
    test_field_errors();
    test_unknown_op();
    test_map_op();
    test_constants();
    test_constant_outputs();
    test_op_listing();
    test_name_clash();
    test_external_data();
    test_external_confinement();
    test_tensor_files();
    test_garbage();
    test_graph_errors();
    test_dynamic_dims();
    test_seed_models();
    test_alloc_failures();
    prt_registry_destroy(reg_global);
    arena_free();
    remove_made();
    return tu_finish("test_onnx_import");
}
