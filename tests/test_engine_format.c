/*
 * The engine file format (src/engine/format.c) and the engine object
 * (src/engine/engine.c), on an engine built by hand: round trip of every
 * field, stable bytes, hostile bytes (every byte flipped, every truncation,
 * bad magic, a future version, corruption behind a valid checksum, lying
 * counts), optional and required unknown sections, allocation failures,
 * engine_validate's invariants, the queries, and deserialize recreating
 * plugins through a registry of test creators and asking them again
 * (engine_check_layers). On plans the builder made, altered behind a valid
 * checksum: the memory plan, built-in layers' workspace claims and formats
 * (refused at load; checked again at each run), and a standard plugin
 * handed a format it never accepted. tests/onnx/test_engine_format_models.c
 * does the same to real models.
 */
#include <stdlib.h>

#include "builder/builder.h"
#include "engine/engine_impl.h"
#include "op_testutil.h"
#include "ops/op_workspace.h"
#include "plan_bytes.h"
#include "testutil.h"

/* The engine may not include builder headers, so it names the arena's
 * alignment itself; the plans the builder makes must agree with it. */
_Static_assert(PLAN_ALIGN == ENG_ARENA_ALIGN,
               "the builder's arena alignment is the one engine_validate checks");

/* ------------------------------------------------------------------------ */
/* A hand-built engine                                                       */
/* ------------------------------------------------------------------------ */

/* Packs fields the way engine_read does: data 8-aligned, then the name, all
 * in one owned blob. */
static int set_fields(eng_layer *l, const prt_field *src, int32_t n)
{
    size_t size = 0, off = 0;
    for (int32_t i = 0; i < n; i++)
        size = ((size + 7) & ~(size_t)7) +
               (size_t)src[i].length * base_field_type_size(src[i].type) +
               strlen(src[i].name) + 1;
    l->field_blob = base_malloc(size);
    l->fields = base_calloc((size_t)n, sizeof *l->fields);
    if (!l->field_blob || !l->fields)
        return 0;
    l->field_blob_size = (int64_t)size;
    l->nb_fields = n;
    for (int32_t i = 0; i < n; i++) {
        size_t bytes = (size_t)src[i].length * base_field_type_size(src[i].type);
        off = (off + 7) & ~(size_t)7;
        if (bytes)
            memcpy(l->field_blob + off, src[i].data, bytes);
        l->fields[i].data = l->field_blob + off;
        off += bytes;
        memcpy(l->field_blob + off, src[i].name, strlen(src[i].name) + 1);
        l->fields[i].name = (const char *)l->field_blob + off;
        off += strlen(src[i].name) + 1;
        l->fields[i].type = src[i].type;
        l->fields[i].length = src[i].length;
    }
    return 1;
}

static int32_t *ids(int32_t n, const int32_t *v)
{
    int32_t *p = base_malloc(sizeof *p * (size_t)(n ? n : 1));
    if (p && n)
        memcpy(p, v, sizeof *p * (size_t)n);
    return p;
}

static void set_tensor(eng_tensor *t, const char *name, int32_t dtype, int32_t nb_dims,
                       const int32_t *dims, int32_t in, int32_t out, int32_t size_id,
                       int32_t producer, int64_t offset, int64_t max_bytes)
{
    t->name = base_strdup(name);
    t->dtype = dtype;
    t->format = PRT_FORMAT_LINEAR;
    t->nb_dims = nb_dims;
    for (int32_t i = 0; i < PRT_MAX_DIMS; i++)
        t->dim_expr[i] = i < nb_dims ? dims[i] : -1;
    t->input_index = in;
    t->output_index = out;
    t->size_id = size_id;
    t->producer = producer;
    t->offset = offset;
    t->max_bytes = max_bytes;
    t->const_offset = -1;
}

static void set_layer(eng_layer *l, const char *name, const char *ns, const char *pname,
                      const char *version, const char *library, uint64_t hash,
                      int32_t nb_in, const int32_t *in, int32_t nb_out,
                      const int32_t *out, const int32_t *alias, const uint8_t *copy,
                      int32_t tactic, int64_t workspace)
{
    l->name = base_strdup(name);
    l->plugin_namespace = base_strdup(ns);
    l->plugin_name = base_strdup(pname);
    l->plugin_version = base_strdup(version);
    l->library = base_strdup(library);
    l->library_hash = hash;
    l->plugin_abi = PRT_PLUGIN_ABI_VERSION;
    l->device = PRT_DEVICE_CPU;
    l->nb_inputs = nb_in;
    l->inputs = ids(nb_in, in);
    l->nb_outputs = nb_out;
    l->outputs = ids(nb_out, out);
    l->alias_input = ids(nb_out, alias);
    l->alias_copy = base_calloc((size_t)nb_out, 1);
    if (l->alias_copy)
        memcpy(l->alias_copy, copy, (size_t)nb_out);
    l->tactic = tactic;
    l->workspace = workspace;
}

#define LIB_PATH "/opt/plugrt/libtestplugins.so"
#define LIB_HASH 0x0123456789abcdefull

/* Field values of layer 0, one of each type (and an empty one). */
static const int8_t f_i8[] = {-128, 0, 127};
static const int16_t f_i16[] = {-32768, 1, 32767};
static const int32_t f_i32[] = {1};
static const int64_t f_i64[] = {INT64_MIN, -1, INT64_MAX};
static const uint16_t f_f16[] = {0x3c00, 0xc000, 0x7bff};
static const float f_f32[] = {0.5f, -2.25f};
static const double f_f64[] = {3.141592653589793};
static const uint16_t f_bf16[] = {0x3f80, 0x4049};
static const char f_char[] = "hello";
static const uint8_t f_bytes[] = {0, 1, 2, 0xfe, 0xff};
static prt_dims f_dims[2];

static prt_engine *make_engine(void)
{
    /* Expressions: N is input 0's dim 0; K is size tensor 0 (opt N, upper
     * 4N). */
    static const expr_node nodes[] = {
        {EXPR_CONST, 0, 4, 0, 0},         /* 0: 4 */
        {EXPR_INPUT_DIM, 0, 0, 0, 0},     /* 1: N */
        {EXPR_CONST, 0, 3, 0, 0},         /* 2: 3 */
        {EXPR_OP, PRT_DIM_PROD, 0, 1, 0}, /* 3: 4N */
        {EXPR_CONST, 0, 2, 0, 0},         /* 4: 2 */
        {EXPR_SIZE, 0, 0, 1, 3},          /* 5: K */
        {EXPR_OP, PRT_DIM_SUM, 0, 5, 2},  /* 6: K + 3 */
    };
    static const int32_t d_x[] = {1, 0}, d_y[] = {2}, d_idx[] = {4, 5}, d_mid[] = {6};
    prt_engine *e = engine_alloc();
    if (!e)
        return NULL;
    e->device = PRT_DEVICE_CPU;
    e->exprs.nb_nodes = (int32_t)(sizeof nodes / sizeof nodes[0]);
    e->exprs.nodes = base_malloc(sizeof nodes);
    memcpy(e->exprs.nodes, nodes, sizeof nodes);
    e->nb_sizes = 1;

    e->nb_tensors = 6;
    e->tensors = base_calloc(6, sizeof *e->tensors);
    set_tensor(&e->tensors[0], "x", PRT_FLOAT32, 2, d_x, 0, -1, -1, -1, -1, 2048);
    set_tensor(&e->tensors[1], "y", PRT_INT64, 1, d_y, 1, -1, -1, -1, -1, 24);
    set_tensor(&e->tensors[2], "count", PRT_INT64, 0, NULL, -1, 1, 0, 0, -1, 8);
    set_tensor(&e->tensors[3], "idx", PRT_INT64, 2, d_idx, -1, -1, -1, 0, 0, 8192);
    set_tensor(&e->tensors[4], "mid", PRT_FLOAT32, 1, d_mid, -1, -1, -1, 1, 8192, 2060);
    set_tensor(&e->tensors[5], "final", PRT_FLOAT32, 1, d_mid, -1, 0, -1, 2, -1, 2060);
    e->arena_size = 10320;
    e->workspace_size = 256;

    e->nb_inputs = 2;
    e->input_tensors = ids(2, (const int32_t[]){0, 1});
    e->nb_outputs = 2;
    e->output_tensors = ids(2, (const int32_t[]){5, 2});

    e->nb_layers = 3;
    e->layers = base_calloc(3, sizeof *e->layers);
    set_layer(&e->layers[0], "nz", "test", "NonZeroLike", "1", LIB_PATH, LIB_HASH, 1,
              (const int32_t[]){0}, 2, (const int32_t[]){2, 3}, (const int32_t[]){-1, -1},
              (const uint8_t[]){0, 0}, 0, 128);
    set_layer(&e->layers[1], "add", "", "AddLike", "2", "", 0, 2, (const int32_t[]){3, 1},
              1, (const int32_t[]){4}, (const int32_t[]){-1}, (const uint8_t[]){0}, 7,
              256);
    set_layer(&e->layers[2], "inplace", "test", "InPlace", "1", LIB_PATH, LIB_HASH, 1,
              (const int32_t[]){4}, 1, (const int32_t[]){5}, (const int32_t[]){0},
              (const uint8_t[]){1}, -3, 0);
    {
        const int64_t a[] = {2, 3, 4}, b[] = {7};
        prt_field f0[12];
        f_dims[0] = tu_dims(3, a);
        f_dims[1] = tu_dims(1, b);
        f0[0] = (prt_field){"i8", f_i8, PRT_FIELD_INT8, 3};
        f0[1] = (prt_field){"i16", f_i16, PRT_FIELD_INT16, 3};
        f0[2] = (prt_field){"axis", f_i32, PRT_FIELD_INT32, 1};
        f0[3] = (prt_field){"i64", f_i64, PRT_FIELD_INT64, 3};
        f0[4] = (prt_field){"half", f_f16, PRT_FIELD_FLOAT16, 3};
        f0[5] = (prt_field){"scale", f_f32, PRT_FIELD_FLOAT32, 2};
        f0[6] = (prt_field){"pi", f_f64, PRT_FIELD_FLOAT64, 1};
        f0[7] = (prt_field){"bf", f_bf16, PRT_FIELD_BFLOAT16, 2};
        f0[8] = (prt_field){"mode", f_char, PRT_FIELD_CHAR, 5};
        f0[9] = (prt_field){"shapes", f_dims, PRT_FIELD_DIMS, 2};
        f0[10] = (prt_field){"blob", f_bytes, PRT_FIELD_BYTES, 5};
        f0[11] = (prt_field){"", f_char, PRT_FIELD_CHAR, 0};
        set_fields(&e->layers[0], f0, 12);
        f0[0] = (prt_field){"alpha", f_f64, PRT_FIELD_FLOAT64, 1};
        set_fields(&e->layers[1], f0, 1);
    }

    e->nb_profiles = 2;
    e->prof_min = base_calloc(4, sizeof(prt_dims));
    e->prof_opt = base_calloc(4, sizeof(prt_dims));
    e->prof_max = base_calloc(4, sizeof(prt_dims));
    /* No shape inputs: value bounds of rank 0. */
    e->prof_vmin = base_calloc(4, sizeof(prt_dims));
    e->prof_vopt = base_calloc(4, sizeof(prt_dims));
    e->prof_vmax = base_calloc(4, sizeof(prt_dims));
    {
        const int64_t x1[] = {1, 4}, x8[] = {8, 4}, x32[] = {32, 4}, x64[] = {64, 4},
                      x128[] = {128, 4}, y3[] = {3};
        e->prof_min[0] = tu_dims(2, x1);
        e->prof_opt[0] = tu_dims(2, x8);
        e->prof_max[0] = tu_dims(2, x32);
        e->prof_min[1] = e->prof_opt[1] = e->prof_max[1] = tu_dims(1, y3);
        e->prof_min[2] = tu_dims(2, x1);
        e->prof_opt[2] = tu_dims(2, x64);
        e->prof_max[2] = tu_dims(2, x128);
        e->prof_min[3] = e->prof_opt[3] = e->prof_max[3] = tu_dims(1, y3);
    }
    /* As the builder and the loader leave every engine: ready to run and to
     * be queried. */
    if (engine_prepare(e) != PRT_OK) {
        engine_free(e);
        return NULL;
    }
    return e;
}

/* ------------------------------------------------------------------------ */
/* Comparison                                                                */
/* ------------------------------------------------------------------------ */

static int same_dims(const prt_dims *a, const prt_dims *b)
{
    if (a->nb_dims != b->nb_dims)
        return 0;
    for (int32_t i = 0; i < a->nb_dims; i++)
        if (a->d[i] != b->d[i])
            return 0;
    return 1;
}

static int same_field(const prt_field *a, const prt_field *b)
{
    if (strcmp(a->name, b->name) || a->type != b->type || a->length != b->length)
        return 0;
    if (a->type == PRT_FIELD_DIMS) {
        for (int64_t i = 0; i < a->length; i++)
            if (!same_dims((const prt_dims *)a->data + i, (const prt_dims *)b->data + i))
                return 0;
        return 1;
    }
    return a->length == 0 ||
           memcmp(a->data, b->data, (size_t)a->length * base_field_type_size(a->type)) ==
               0;
}

static int compare_engines(const prt_engine *a, const prt_engine *b)
{
    int before = tu_failures;
    REQUIRE(a && b);
    CHECK(a->device == b->device);
    CHECK(a->arena_size == b->arena_size);
    CHECK(a->workspace_size == b->workspace_size);
    CHECK(a->nb_sizes == b->nb_sizes);
    REQUIRE(a->nb_tensors == b->nb_tensors);
    for (int32_t i = 0; i < a->nb_tensors; i++) {
        const eng_tensor *x = &a->tensors[i], *y = &b->tensors[i];
        CHECK(strcmp(x->name, y->name) == 0);
        CHECK(x->dtype == y->dtype && x->format == y->format);
        CHECK(x->nb_dims == y->nb_dims);
        for (int32_t d = 0; d < x->nb_dims && d < PRT_MAX_DIMS; d++)
            CHECK(x->dim_expr[d] == y->dim_expr[d]);
        CHECK(x->input_index == y->input_index);
        CHECK(x->output_index == y->output_index);
        CHECK(x->size_id == y->size_id);
        CHECK(x->producer == y->producer);
        CHECK(x->offset == y->offset);
        CHECK(x->max_bytes == y->max_bytes);
    }
    REQUIRE(a->nb_layers == b->nb_layers);
    for (int32_t i = 0; i < a->nb_layers; i++) {
        const eng_layer *x = &a->layers[i], *y = &b->layers[i];
        CHECK(strcmp(x->name, y->name) == 0);
        CHECK(strcmp(x->plugin_namespace, y->plugin_namespace) == 0);
        CHECK(strcmp(x->plugin_name, y->plugin_name) == 0);
        CHECK(strcmp(x->plugin_version, y->plugin_version) == 0);
        CHECK(strcmp(x->library, y->library) == 0);
        CHECK(x->library_hash == y->library_hash);
        CHECK(x->plugin_abi == y->plugin_abi);
        CHECK(x->device == y->device);
        CHECK(x->tactic == y->tactic);
        CHECK(x->workspace == y->workspace);
        REQUIRE(x->nb_inputs == y->nb_inputs);
        for (int32_t k = 0; k < x->nb_inputs; k++)
            CHECK(x->inputs[k] == y->inputs[k]);
        REQUIRE(x->nb_outputs == y->nb_outputs);
        for (int32_t k = 0; k < x->nb_outputs; k++) {
            CHECK(x->outputs[k] == y->outputs[k]);
            CHECK(x->alias_input[k] == y->alias_input[k]);
            CHECK(x->alias_copy[k] == y->alias_copy[k]);
        }
        REQUIRE(x->nb_fields == y->nb_fields);
        for (int32_t k = 0; k < x->nb_fields; k++) {
            CHECK(same_field(&x->fields[k], &y->fields[k]));
            /* Fields of a read engine live in its blob. */
            CHECK((const uint8_t *)y->fields[k].data >= y->field_blob &&
                  (const uint8_t *)y->fields[k].data <=
                      y->field_blob + y->field_blob_size);
            CHECK((const uint8_t *)y->fields[k].name >= y->field_blob &&
                  (const uint8_t *)y->fields[k].name <
                      y->field_blob + y->field_blob_size);
        }
        CHECK(y->plugin == NULL);
    }
    REQUIRE(a->nb_inputs == b->nb_inputs && a->nb_outputs == b->nb_outputs);
    for (int32_t i = 0; i < a->nb_inputs; i++)
        CHECK(a->input_tensors[i] == b->input_tensors[i]);
    for (int32_t i = 0; i < a->nb_outputs; i++)
        CHECK(a->output_tensors[i] == b->output_tensors[i]);
    REQUIRE(a->nb_profiles == b->nb_profiles);
    for (int32_t i = 0; i < a->nb_profiles * a->nb_inputs; i++) {
        CHECK(same_dims(&a->prof_min[i], &b->prof_min[i]));
        CHECK(same_dims(&a->prof_opt[i], &b->prof_opt[i]));
        CHECK(same_dims(&a->prof_max[i], &b->prof_max[i]));
        CHECK(same_dims(&a->prof_vmin[i], &b->prof_vmin[i]));
        CHECK(same_dims(&a->prof_vopt[i], &b->prof_vopt[i]));
        CHECK(same_dims(&a->prof_vmax[i], &b->prof_vmax[i]));
    }
    REQUIRE(a->exprs.nb_nodes == b->exprs.nb_nodes);
    for (int32_t i = 0; i < a->exprs.nb_nodes; i++) {
        const expr_node *x = &a->exprs.nodes[i], *y = &b->exprs.nodes[i];
        CHECK(x->kind == y->kind && x->op == y->op && x->imm == y->imm && x->a == y->a &&
              x->b == y->b);
    }
    return tu_failures != before;
}

/* ------------------------------------------------------------------------ */
/* Byte helpers                                                              */
/* ------------------------------------------------------------------------ */

static int serialize(const prt_engine *e, uint8_t **bytes, size_t *size)
{
    base_buf b = {0};
    if (engine_write(e, &b) != PRT_OK) {
        base_buf_free(&b);
        return 0;
    }
    *bytes = b.data;
    *size = b.size;
    return 1;
}

/* A read that must fail cleanly: an error status and a message. */
static int read_fails(const uint8_t *p, size_t n, prt_status *st)
{
    prt_engine *e = NULL;
    base_clear_error();
    *st = engine_read(p, n, &e);
    if (*st == PRT_OK) {
        engine_free(e);
        return 0;
    }
    return e == NULL && prt_last_error()[0] != '\0';
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                     */
/* ------------------------------------------------------------------------ */

static int test_round_trip(void)
{
    prt_engine *e = make_engine(), *r = NULL;
    uint8_t *b1 = NULL, *b2 = NULL;
    size_t n1 = 0, n2 = 0;
    REQUIRE(e);
    CHECK_OK(engine_validate(e));
    REQUIRE(serialize(e, &b1, &n1));
    CHECK(memcmp(b1, ENG_MAGIC, 8) == 0);
    CHECK(tu_get32(b1 + 8) == ENG_FORMAT_VERSION);
    CHECK(tu_get32(b1 + 12) == PRT_PLUGIN_ABI_VERSION);
    CHECK(tu_get32(b1 + tu_plan_section_count_at(b1)) == 7);
    REQUIRE_OK(engine_read(b1, n1, &r));
    compare_engines(e, r);
    REQUIRE(serialize(r, &b2, &n2));
    CHECK(n1 == n2 && memcmp(b1, b2, n1) == 0);

    /* Through the public API too: the bytes are the same, freed by prt_free. */
    {
        void *pb = NULL;
        size_t pn = 0;
        CHECK_OK(prt_engine_serialize(r, &pb, &pn));
        CHECK(pn == n1 && pb && memcmp(pb, b1, n1) == 0);
        prt_free(pb);
    }
    engine_free(r);
    engine_free(e);
    base_free(b1);
    base_free(b2);
    return 0;
}

static int test_queries(void)
{
    prt_engine *e = make_engine();
    prt_io_info io = {.struct_size = sizeof(prt_io_info)};
    int32_t idx = -1;
    REQUIRE(e);
    CHECK(prt_engine_io_count(e) == 4);
    CHECK(prt_engine_profile_count(e) == 2);
    CHECK(prt_engine_layer_count(e) == 3);
    CHECK(prt_engine_device(e) == PRT_DEVICE_CPU);
    CHECK(prt_engine_context_memory_size(e) == 10320 + 256);

    CHECK_OK(prt_engine_get_io(e, 0, &io));
    CHECK(strcmp(io.name, "x") == 0 && io.is_input == 1);
    CHECK(io.dtype == PRT_FLOAT32 && io.format == PRT_FORMAT_LINEAR);
    CHECK(io.dims.nb_dims == 2 && io.dims.d[0] == -1 && io.dims.d[1] == 4);
    CHECK(io.data_dependent_mask == 0 && io.is_size_tensor == 0);

    CHECK_OK(prt_engine_get_io(e, 1, &io));
    CHECK(strcmp(io.name, "y") == 0 && io.is_input == 1);
    CHECK(io.dims.nb_dims == 1 && io.dims.d[0] == 3);

    CHECK_OK(prt_engine_get_io(e, 2, &io));
    CHECK(strcmp(io.name, "final") == 0 && io.is_input == 0);
    CHECK(io.dims.nb_dims == 1 && io.dims.d[0] == -1);
    CHECK(io.data_dependent_mask == 1u && io.is_size_tensor == 0);

    CHECK_OK(prt_engine_get_io(e, 3, &io));
    CHECK(strcmp(io.name, "count") == 0 && io.is_input == 0);
    CHECK(io.dims.nb_dims == 0 && io.is_size_tensor == 1);
    CHECK(io.dtype == PRT_INT64);

    CHECK_ERR(prt_engine_get_io(e, 4, &io), PRT_ERR_INVALID_ARGUMENT, NULL);
    CHECK_ERR(prt_engine_get_io(e, -1, &io), PRT_ERR_INVALID_ARGUMENT, NULL);
    CHECK_OK(prt_engine_find_io(e, "count", &idx));
    CHECK(idx == 3);
    CHECK_OK(prt_engine_find_io(e, "x", &idx));
    CHECK(idx == 0);
    CHECK_ERR(prt_engine_find_io(e, "mid", &idx), PRT_ERR_NOT_FOUND, "mid");

    /* Profile bounds, per input and profile; static inputs min = opt = max. */
    {
        prt_dims mn, op, mx;
        CHECK_OK(prt_engine_get_profile_shape(e, 0, "x", &mn, &op, &mx));
        CHECK(mn.nb_dims == 2 && mn.d[0] == 1 && op.d[0] == 8 && mx.d[0] == 32);
        CHECK(mx.d[1] == 4);
        CHECK_OK(prt_engine_get_profile_shape(e, 1, "x", NULL, &op, &mx));
        CHECK(op.d[0] == 64 && mx.d[0] == 128);
        CHECK_OK(prt_engine_get_profile_shape(e, 1, "y", &mn, NULL, &mx));
        CHECK(mn.nb_dims == 1 && mn.d[0] == 3 && mx.d[0] == 3);
        CHECK_ERR(prt_engine_get_profile_shape(e, 2, "x", &mn, &op, &mx),
                  PRT_ERR_INVALID_ARGUMENT, "profile 2");
        CHECK_ERR(prt_engine_get_profile_shape(e, 0, "final", &mn, &op, &mx),
                  PRT_ERR_NOT_FOUND, "final");
        CHECK_ERR(prt_engine_get_profile_shape(NULL, 0, "x", &mn, &op, &mx),
                  PRT_ERR_INVALID_ARGUMENT, NULL);
    }

    CHECK(prt_engine_io_count(NULL) == 0);
    CHECK(prt_engine_layer_count(NULL) == 0);
    prt_engine_destroy(NULL);
    engine_free(e);
    return 0;
}

static int test_flips_and_truncations(void)
{
    prt_engine *e = make_engine();
    uint8_t *b = NULL, *c;
    size_t n = 0;
    int bad = 0;
    prt_status st;
    static const uint8_t masks[] = {0x01, 0x10, 0x80, 0xff};
    REQUIRE(e && serialize(e, &b, &n));
    c = malloc(n);
    REQUIRE(c);
    for (size_t i = 0; i < n; i++)
        for (size_t m = 0; m < sizeof masks; m++) {
            memcpy(c, b, n);
            c[i] ^= masks[m];
            if (!read_fails(c, n, &st))
                bad++;
            else if (i < 8)
                bad += strstr(prt_last_error(), "magic") == NULL;
            else if (i < 12)
                bad += st != PRT_ERR_VERSION;
            else
                bad += st != PRT_ERR_MALFORMED;
        }
    CHECK(bad == 0);
    bad = 0;
    for (size_t len = 0; len < n; len++) {
        if (!read_fails(b, len, &st) || st != PRT_ERR_MALFORMED)
            bad++;
    }
    CHECK(bad == 0);

    memcpy(c, b, n);
    c[0] = 'X';
    {
        prt_engine *r = NULL;
        CHECK_ERR(engine_read(c, n, &r), PRT_ERR_MALFORMED, "magic");
        CHECK_ERR(engine_read("PLUG", 4, &r), PRT_ERR_MALFORMED, "magic");
        CHECK_ERR(engine_read(c, 0, &r), PRT_ERR_MALFORMED, "magic");
        CHECK(r == NULL);
    }

    memcpy(c, b, n);
    tu_put32(c + 8, ENG_FORMAT_VERSION + 1);
    tu_plan_fix_crc(c, n);
    {
        prt_engine *r = NULL;
        char want[64];
        snprintf(want, sizeof want, "engine format version %u, this plugrt reads %u",
                 ENG_FORMAT_VERSION + 1, ENG_FORMAT_VERSION);
        CHECK_ERR(engine_read(c, n, &r), PRT_ERR_VERSION, want);
        CHECK(r == NULL);
        /* The public entry point says the same. */
        CHECK_ERR(prt_engine_deserialize(NULL, c, n, &r), PRT_ERR_VERSION, want);
    }

    memcpy(c, b, n);
    c[n / 2] ^= 0x40;
    {
        prt_engine *r = NULL;
        CHECK_ERR(engine_read(c, n, &r), PRT_ERR_MALFORMED,
                  "checksum mismatch: the engine file is corrupted");
    }
    free(c);
    base_free(b);
    engine_free(e);
    return 0;
}

/* Corruption behind a valid checksum: parsing and engine_validate must catch
 * it, or the engine must be valid. Run under ASan this proves no byte makes
 * the reader touch memory it should not. */
static int try_fixed(uint8_t *c, size_t n, int *bad, int *accepted)
{
    prt_engine *r = NULL;
    prt_status st;
    tu_plan_fix_crc(c, n);
    base_clear_error();
    st = engine_read(c, n, &r);
    if (st == PRT_OK) {
        uint8_t *again = NULL;
        size_t m = 0;
        (*accepted)++;
        if (engine_validate(r) != PRT_OK || !serialize(r, &again, &m))
            (*bad)++;
        /* Queries must be safe on anything the reader accepts. */
        for (int32_t i = 0; i < prt_engine_io_count(r); i++) {
            prt_io_info io = {.struct_size = sizeof(prt_io_info)};
            if (prt_engine_get_io(r, i, &io) != PRT_OK)
                (*bad)++;
        }
        base_free(again);
        engine_free(r);
        return 0;
    }
    if (r != NULL || prt_last_error()[0] == '\0' ||
        (st != PRT_ERR_MALFORMED && st != PRT_ERR_VERSION)) {
        (*bad)++;
        fprintf(stderr, "    bad failure: %s: %s\n", prt_status_name(st),
                prt_last_error());
    }
    return 0;
}

static int test_corruption_behind_checksum(void)
{
    prt_engine *e = make_engine();
    uint8_t *b = NULL, *c;
    size_t n = 0;
    int bad = 0, accepted = 0;
    tu_rng rng;
    static const uint8_t masks[] = {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xff};
    static const uint32_t values[] = {
        0,          1,          2,          3,          7,       8,          0xff,
        0x7fffffff, 0x80000000, 0xffffffff, 0xfffffffe, 0x10000, 0x40000000, 0x00ffffff};
    REQUIRE(e && serialize(e, &b, &n));
    c = malloc(n);
    REQUIRE(c);
    /* Every byte, every single-bit flip and the full inversion. */
    for (size_t i = 0; i + 4 < n; i++)
        for (size_t m = 0; m < sizeof masks; m++) {
            memcpy(c, b, n);
            c[i] ^= masks[m];
            try_fixed(c, n, &bad, &accepted);
        }
    /* Lying counts and indices: every aligned-or-not 32-bit word set to
     * values that break counts, ids and lengths. */
    for (size_t i = 12; i + 8 <= n; i++)
        for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
            memcpy(c, b, n);
            tu_put32(c + i, values[v]);
            try_fixed(c, n, &bad, &accepted);
        }
    /* Random multi-byte damage. */
    tu_rng_seed(&rng, 12345);
    for (int it = 0; it < 20000; it++) {
        int k = (int)tu_rng_range(&rng, 1, 4);
        memcpy(c, b, n);
        for (int j = 0; j < k; j++)
            c[tu_rng_range(&rng, 12, (int64_t)n - 5)] = (uint8_t)tu_rng_u64(&rng);
        try_fixed(c, n, &bad, &accepted);
    }
    CHECK(bad == 0);
    /* Some flips (a tactic, a hash, a field value) are legal engines. */
    CHECK(accepted > 0);
    printf("corruption behind checksum: %d variants accepted as valid engines\n",
           accepted);
    free(c);
    base_free(b);
    engine_free(e);
    return 0;
}

/* Builds bytes with one extra section (tag, flags, payload) before the
 * checksum. Caller frees. */
static uint8_t *with_section(const uint8_t *b, size_t n, uint32_t tag, uint32_t flags,
                             const char *payload, size_t *out_n)
{
    size_t plen = strlen(payload);
    size_t m = n + 16 + plen;
    uint8_t *c = malloc(m);
    size_t at;
    if (!c)
        return NULL;
    memcpy(c, b, n - 4);
    at = n - 4;
    tu_put32(c + at, tag);
    tu_put32(c + at + 4, flags);
    tu_put32(c + at + 8, (uint32_t)plen);
    tu_put32(c + at + 12, 0);
    memcpy(c + at + 16, payload, plen);
    tu_put32(c + tu_plan_section_count_at(c),
             tu_get32(c + tu_plan_section_count_at(c)) + 1);
    tu_plan_fix_crc(c, m);
    *out_n = m;
    return c;
}

static int test_sections(void)
{
    prt_engine *e = make_engine(), *r = NULL;
    uint8_t *b = NULL, *c;
    size_t n = 0, m = 0;
    REQUIRE(e && serialize(e, &b, &n));

    /* An unknown optional section (a later plugrt's) is skipped. */
    c = with_section(b, n, TU_TAG('X', 'T', 'R', 'A'), 1, "later bytes", &m);
    REQUIRE(c);
    CHECK_OK(engine_read(c, m, &r));
    if (r)
        compare_engines(e, r);
    engine_free(r);
    r = NULL;
    free(c);

    /* An unknown required one is an error naming the tag. */
    c = with_section(b, n, TU_TAG('X', 'T', 'R', 'A'), 0, "later bytes", &m);
    REQUIRE(c);
    CHECK_ERR(engine_read(c, m, &r), PRT_ERR_MALFORMED, "'XTRA'");
    free(c);
    c = with_section(b, n, 0x00000007u, 2, "", &m);
    REQUIRE(c);
    CHECK_ERR(engine_read(c, m, &r), PRT_ERR_MALFORMED, "0x00000007");
    free(c);

    /* A known section twice. */
    c = with_section(b, n, TU_TAG('M', 'E', 'T', 'A'), 0, "", &m);
    REQUIRE(c);
    CHECK_ERR(engine_read(c, m, &r), PRT_ERR_MALFORMED, "meta");
    free(c);

    /* Reserved flag bits on a known section. */
    c = malloc(n);
    REQUIRE(c);
    memcpy(c, b, n);
    tu_put32(c + tu_plan_section_count_at(c) + 8, 4); /* the first section's flags */
    tu_plan_fix_crc(c, n);
    CHECK_ERR(engine_read(c, n, &r), PRT_ERR_MALFORMED, "flags");
    /* A missing section: claim one section fewer, drop nothing. */
    memcpy(c, b, n);
    tu_put32(c + tu_plan_section_count_at(c), 6);
    tu_plan_fix_crc(c, n);
    CHECK_ERR(engine_read(c, n, &r), PRT_ERR_MALFORMED, "after the last section");
    /* A missing section: turn the last one (expressions) into an unknown
     * optional section, which the reader skips. */
    memcpy(c, b, n);
    {
        size_t at = tu_plan_section_count_at(c) + 4, last = at;
        for (uint32_t k = 0; k < 7; k++) {
            last = at;
            at += 16 + tu_get32(c + at + 8);
        }
        CHECK(tu_get32(c + last) == TU_TAG('E', 'X', 'P', 'R'));
        tu_put32(c + last, TU_TAG('X', 'P', 'R', 'E'));
        tu_put32(c + last + 4, 1);
    }
    tu_plan_fix_crc(c, n);
    CHECK_ERR(engine_read(c, n, &r), PRT_ERR_MALFORMED,
              "the expressions section is missing");
    free(c);
    CHECK(r == NULL);
    base_free(b);
    engine_free(e);
    return 0;
}

static int test_alloc_failures(void)
{
    prt_engine *e = make_engine();
    uint8_t *b = NULL;
    size_t n = 0;
    int64_t k;
    prt_status st = PRT_ERR_INTERNAL;
    REQUIRE(e && serialize(e, &b, &n));
    for (k = 0; k < 10000; k++) {
        prt_engine *r = NULL;
        base_fail_alloc_after(k);
        st = engine_read(b, n, &r);
        base_fail_alloc_after(-1);
        if (st == PRT_OK) {
            compare_engines(e, r);
            engine_free(r);
            break;
        }
        CHECK(st == PRT_ERR_OUT_OF_MEMORY && r == NULL);
    }
    CHECK(st == PRT_OK && k > 10);
    printf("engine_read: %lld allocation failures injected\n", (long long)k);

    for (k = 0; k < 1000; k++) {
        void *pb = NULL;
        size_t pn = 0;
        base_fail_alloc_after(k);
        st = prt_engine_serialize(e, &pb, &pn);
        base_fail_alloc_after(-1);
        if (st == PRT_OK) {
            CHECK(pn == n && memcmp(pb, b, n) == 0);
            prt_free(pb);
            break;
        }
        CHECK(st == PRT_ERR_OUT_OF_MEMORY && pb == NULL);
    }
    CHECK(st == PRT_OK);
    base_free(b);
    engine_free(e);
    return 0;
}

/* Each breaks one invariant of a valid engine; validation must name it and
 * engine_write must refuse. */
static int expect_invalid(prt_engine *e, const char *sub, int line)
{
    base_buf b = {0};
    prt_status st = engine_validate(e);
    tu_checks++;
    if (st != PRT_ERR_MALFORMED || !strstr(prt_last_error(), sub)) {
        tu_failures++;
        fprintf(stderr,
                "%s:%d: engine_validate gave %s, wanted a message with "
                "\"%s\"\n    message: %s\n",
                __FILE__, line, prt_status_name(st), sub, prt_last_error());
    }
    CHECK(engine_write(e, &b) == PRT_ERR_INTERNAL);
    base_buf_free(&b);
    engine_free(e);
    return 0;
}
#define EXPECT_INVALID(e, sub) expect_invalid((e), (sub), __LINE__)

static int test_validate(void)
{
    prt_engine *e;

    e = make_engine();
    e->layers[1].inputs[0] = 5; /* produced by a later layer */
    EXPECT_INVALID(e, "layer 1 ('add') input 0");

    e = make_engine();
    e->tensors[3].size_id = 0; /* size id twice */
    EXPECT_INVALID(e, "size id 0");

    e = make_engine();
    e->tensors[4].max_bytes = 2065; /* more than K + 3 floats need */
    EXPECT_INVALID(e, "tensor 4 ('mid')");

    e = make_engine();
    e->tensors[4].offset = 8448; /* aligned, but past the arena */
    EXPECT_INVALID(e, "tensor 4 ('mid'): arena bytes [8448, +2060) exceed");

    e = make_engine();
    e->tensors[2].offset = 0; /* an output in the arena */
    EXPECT_INVALID(e, "tensor 2 ('count')");

    e = make_engine();
    e->prof_opt[2].d[0] = 256; /* opt > max */
    EXPECT_INVALID(e, "profile 1 input 'x' dim 0");

    e = make_engine();
    e->prof_max[1].d[0] = 4; /* a static dim with a range */
    EXPECT_INVALID(e, "profile 0 input 'y'");

    e = make_engine();
    e->tensors[3].dim_expr[1] = 7; /* no such node */
    EXPECT_INVALID(e, "expression 7");

    e = make_engine();
    e->exprs.nodes[5].a = 6; /* operand after the node */
    EXPECT_INVALID(e, "expression node 5");

    e = make_engine();
    e->exprs.nodes[1].b = 2; /* dim 2 of the rank-2 input x */
    EXPECT_INVALID(e, "expression node 1");

    e = make_engine();
    e->tensors[4].producer = 0; /* producer disagrees with the layer */
    EXPECT_INVALID(e, "tensor 4 ('mid')");

    e = make_engine();
    e->layers[2].alias_input[0] = 1; /* no input 1 */
    EXPECT_INVALID(e, "aliases input 1");

    e = make_engine();
    e->layers[0].alias_input[1] = 0; /* idx aliases x: other dtype */
    EXPECT_INVALID(e, "another dtype or shape");

    e = make_engine();
    e->tensors[5].dim_expr[0] = 1; /* final: N; a copy over mid under other dims */
    e->tensors[5].max_bytes = 512;
    EXPECT_INVALID(e, "another dtype or shape");

    e = make_engine();
    e->output_tensors[0] = 4; /* list and output_index disagree */
    EXPECT_INVALID(e, "output 0 is tensor 4");

    e = make_engine();
    e->tensors[1].dtype = PRT_DTYPE_COUNT;
    EXPECT_INVALID(e, "dtype");

    e = make_engine();
    e->tensors[5].format = 3;
    EXPECT_INVALID(e, "format");

    /* CHW8 only inside the engine, for float32 of rank 3 or more. */
    e = make_engine();
    e->tensors[0].format = PRT_FORMAT_CHW8; /* an input */
    EXPECT_INVALID(e, "format CHW8");

    e = make_engine();
    e->tensors[4].format = PRT_FORMAT_CHW8; /* rank 1 */
    EXPECT_INVALID(e, "format CHW8");

    e = make_engine();
    e->layers[0].fields[2].type = 42;
    EXPECT_INVALID(e, "field 'axis'");

    e = make_engine();
    {
        char *t = e->tensors[2].name;
        e->tensors[2].name = base_strdup("x");
        base_free(t);
    }
    EXPECT_INVALID(e, "named 'x'");

    e = make_engine();
    e->nb_profiles = 0;
    EXPECT_INVALID(e, "profile");

    e = make_engine();
    e->tensors[3].max_bytes = 8191; /* 2 x (4 x 128) int64 need 8192 */
    EXPECT_INVALID(e, "tensor 3 ('idx'): max bytes 8191, but profile 1 allows 8192");

    e = make_engine();
    e->tensors[5].max_bytes = 100; /* an output's staging size too */
    EXPECT_INVALID(e, "tensor 5 ('final')");

    e = make_engine();
    e->exprs.nodes[6].op = PRT_DIM_SUB; /* K - 3 can be negative */
    EXPECT_INVALID(e, "can be negative");

    e = make_engine();
    e->tensors[0].dim_expr[0] = 3; /* x's dim 0 as 4N: not the user's dim */
    EXPECT_INVALID(e, "input 0 ('x') dim 0");

    e = make_engine();
    e->layers[1].workspace = 257;
    EXPECT_INVALID(e, "workspace");

    /* The memory plan. Offsets are aligned for the dtype and the arena. */
    e = make_engine();
    e->tensors[4].offset = 8194;
    EXPECT_INVALID(e, "tensor 4 ('mid'): arena offset 8194 is misaligned for "
                      "its float32 elements");
    e = make_engine();
    e->tensors[3].offset = 8; /* int64-aligned, not arena-aligned */
    EXPECT_INVALID(e, "tensor 3 ('idx'): arena offset 8 is not a multiple of 256");
    /* No more memory than the shapes can need: an input's max bytes (its
     * staging size) above its bounds, an arena above its tensors side by
     * side (8192 + 2304 bytes), a workspace above the largest layer's. */
    e = make_engine();
    e->tensors[0].max_bytes = 4096;
    EXPECT_INVALID(e, "tensor 0 ('x'): max bytes 4096, but its shapes need at "
                      "most 2048");
    e = make_engine();
    e->arena_size = 10496;
    CHECK_OK(engine_validate(e));
    engine_free(e);
    e = make_engine();
    e->arena_size = 10497;
    EXPECT_INVALID(e, "arena size 10497, but its tensors need at most 10496");
    e = make_engine();
    e->workspace_size = 257;
    EXPECT_INVALID(e, "workspace size 257, but the largest layer workspace is 256");
    e = make_engine();
    e->layers[1].workspace = 0; /* the largest is 128 now */
    EXPECT_INVALID(e, "workspace size 256, but the largest layer workspace is 128");

    /* Valid, but a name longer than a file may hold: refused when written
     * rather than written unreadable. */
    e = make_engine();
    {
        base_buf b = {0};
        char *name = base_malloc(70001);
        REQUIRE(e && name);
        memset(name, 'n', 70000);
        name[70000] = '\0';
        base_free(e->tensors[3].name);
        e->tensors[3].name = name;
        CHECK_OK(engine_validate(e));
        CHECK_ERR(engine_write(e, &b), PRT_ERR_UNSUPPORTED, "tensor name");
        base_buf_free(&b);
        engine_free(e);
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* A plan the builder made, altered behind a valid checksum                  */
/* ------------------------------------------------------------------------ */

static prt_plugin *builtin_op(const char *op)
{
    const prt_plugin_creator *c = NULL;
    prt_field_collection none = {0, NULL};
    prt_plugin *p = NULL;
    if (prt_builtin_find_creator(op, "1", &c) != PRT_OK ||
        c->create(c, op, &none, PRT_PHASE_BUILD, &p) != PRT_OK)
        return NULL;
    return p;
}

#define PLAN_N 15 /* elements of every tensor of the plan: [3, 5] */

static float plan_x(int i)
{
    return (float)i - 7.0f;
}
static float plan_c(int i)
{
    return 0.5f * (float)i;
}

/* Builds net with cfg (reg may be NULL) unless `bad`, serializes it into
 * *bytes (prt_free), and destroys net and cfg; returns 1 on any failure
 * (recorded). */
static int finish_plan(prt_network *net, prt_builder_config *cfg, const prt_registry *reg,
                       int bad, void **bytes, size_t *size)
{
    prt_engine *e = NULL;
    bad = bad || prt_engine_build(net, cfg, reg, &e) != PRT_OK ||
          prt_engine_serialize(e, bytes, size) != PRT_OK;
    CHECK(!bad);
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return bad;
}

/* One layer over `a` and `b` (b < 0: none), its output named `name`. */
static int plan_layer(prt_network *net, const char *op, int32_t a, int32_t b,
                      const char *name, int32_t *out)
{
    int32_t in[2] = {a, b}, l;
    prt_plugin *p = builtin_op(op);
    REQUIRE(p);
    REQUIRE_OK(prt_network_add_plugin(net, in, b < 0 ? 1 : 2, NULL, 0, p, &l));
    REQUIRE_OK(prt_network_get_layer_output(net, l, 0, out));
    REQUIRE_OK(prt_network_set_tensor_name(net, *out, name));
    return 0;
}

/* y = relu(x + c) + c over [3, 5] floats: arena tensors "sum" and "relu"
 * (60 bytes each, live together, so in two 256-byte slots), the constant
 * "c" (60 bytes in 64 of weights), no workspace. *bytes: free with
 * prt_free. */
static int build_plan(void **bytes, size_t *size)
{
    prt_dims d = {2, {3, 5}};
    float c[PLAN_N];
    int32_t x, k, sum, relu, y;
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    int bad;
    for (int i = 0; i < PLAN_N; i++)
        c[i] = plan_c(i);
    REQUIRE_OK(prt_network_create(&net));
    bad = prt_network_add_input(net, "x", PRT_FLOAT32, &d, &x) != PRT_OK ||
          prt_network_add_constant(net, "c", PRT_FLOAT32, &d, c, &k) != PRT_OK ||
          plan_layer(net, "Add", x, k, "sum", &sum) ||
          plan_layer(net, "Relu", sum, -1, "relu", &relu) ||
          plan_layer(net, "Add", relu, k, "y", &y) ||
          prt_network_mark_output(net, y) != PRT_OK ||
          prt_builder_config_create(&cfg) != PRT_OK;
    return finish_plan(net, cfg, NULL, bad, bytes, size);
}

/* Runs a loaded plan once; 1 if y = relu(x + c) + c. */
static int run_plan(const prt_engine *e)
{
    float x[PLAN_N], y[PLAN_N];
    prt_context *ctx = NULL;
    int ok;
    for (int i = 0; i < PLAN_N; i++)
        x[i] = plan_x(i);
    ok = prt_context_create(e, &ctx) == PRT_OK &&
         prt_context_set_tensor_address(ctx, "x", x) == PRT_OK &&
         prt_context_set_tensor_address(ctx, "y", y) == PRT_OK &&
         prt_context_enqueue(ctx, NULL) == PRT_OK;
    for (int i = 0; ok && i < PLAN_N; i++) {
        float s = plan_x(i) + plan_c(i);
        ok = y[i] == (s > 0 ? s : 0) + plan_c(i);
    }
    prt_context_destroy(ctx);
    return ok;
}

/* The plan with the i64 at `at` set to `value`, checksum fixed, must be
 * refused naming `sub`. One that loads is run, so that a sanitizer build
 * shows what such a plan does to a context. */
static int expect_plan_refused(const uint8_t *b, size_t n, size_t at, int64_t value,
                               const char *sub, int line)
{
    uint8_t *c = malloc(n);
    prt_engine *e = NULL;
    prt_status st;
    REQUIRE(c && at && at + 8 <= n);
    memcpy(c, b, n);
    tu_put64(c + at, (uint64_t)value);
    tu_plan_fix_crc(c, n);
    base_clear_error();
    st = prt_engine_deserialize(NULL, c, n, &e);
    tu_checks++;
    if (st != PRT_ERR_MALFORMED || !strstr(prt_last_error(), sub)) {
        tu_failures++;
        fprintf(stderr,
                "%s:%d: deserialize gave %s, wanted a message with "
                "\"%s\"\n    message: %s\n",
                __FILE__, line, prt_status_name(st), sub, prt_last_error());
    }
    if (st == PRT_OK)
        fprintf(stderr, "    the altered plan %s\n",
                run_plan(e) ? "runs" : "fails to run or computes wrong values");
    prt_engine_destroy(e);
    free(c);
    return 0;
}
#define EXPECT_PLAN_REFUSED(b, n, at, value, sub)                                        \
    expect_plan_refused((b), (n), (at), (value), (sub), __LINE__)

static int test_memory_plan(void)
{
    void *pb = NULL;
    const uint8_t *b;
    size_t n = 0, sum, relu, c, y, meta;
    prt_engine *e = NULL;
    REQUIRE(!build_plan(&pb, &n));
    b = pb;
    sum = tu_plan_tensor_named(b, "sum");
    relu = tu_plan_tensor_named(b, "relu");
    c = tu_plan_tensor_named(b, "c");
    y = tu_plan_tensor_named(b, "y");
    meta = tu_plan_section_at(b, TU_TAG('M', 'E', 'T', 'A'));
    /* What the builder planned, as the comment of build_plan says. */
    REQUIRE(sum && relu && c && y && meta);
    CHECK((int64_t)tu_get64(b + sum) + (int64_t)tu_get64(b + relu) == ENG_ARENA_ALIGN);
    CHECK(tu_get64(b + sum + 8) == 60 && tu_get64(b + relu + 8) == 60);
    CHECK(tu_get64(b + c + 16) == 0 && tu_get64(b + c + 8) == 60);
    CHECK(tu_get64(b + y) == (uint64_t)-1 && tu_get64(b + y + 8) == 60);
    CHECK(tu_get64(b + meta) == 2 * ENG_ARENA_ALIGN && tu_get64(b + meta + 8) == 0);
    /* Intact, it loads and computes. */
    REQUIRE_OK(prt_engine_deserialize(NULL, b, n, &e));
    CHECK(run_plan(e));
    prt_engine_destroy(e);

    /* Misaligned for the dtype: float loads and stores off their boundary. */
    EXPECT_PLAN_REFUSED(b, n, sum, (int64_t)tu_get64(b + sum) + 2,
                        "('sum'): arena offset");
    EXPECT_PLAN_REFUSED(b, n, relu, (int64_t)tu_get64(b + relu) + 2,
                        "('relu'): arena offset");
    EXPECT_PLAN_REFUSED(b, n, c + 16, 2,
                        "('c'): constant offset 2 is not a "
                        "multiple of 64");
    /* Aligned for floats, not for the arena or the weights. */
    EXPECT_PLAN_REFUSED(b, n, sum, (int64_t)tu_get64(b + sum) + 64,
                        "is not a multiple of 256, the arena's alignment");
    EXPECT_PLAN_REFUSED(b, n, c + 16, 4,
                        "('c'): constant offset 4 is not a "
                        "multiple of 64");

    /* More memory than the shapes can need. */
    EXPECT_PLAN_REFUSED(b, n, meta, (int64_t)8 << 30,
                        "arena size 8589934592, but its tensors need at most 512");
    EXPECT_PLAN_REFUSED(b, n, meta, 2 * ENG_ARENA_ALIGN + 1,
                        "arena size 513, but its tensors need at most 512");
    EXPECT_PLAN_REFUSED(b, n, meta + 8, (int64_t)8 << 30,
                        "workspace size 8589934592, but the largest layer "
                        "workspace is 0");
    EXPECT_PLAN_REFUSED(b, n, sum + 8, 64,
                        "('sum'): max bytes 64, but its "
                        "shapes need at most 60");
    EXPECT_PLAN_REFUSED(b, n, y + 8, (int64_t)1 << 30,
                        "('y'): max bytes 1073741824, but its shapes need at "
                        "most 60");
    prt_free(pb);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* What only the layers' plugins know: workspace and formats                */
/* ------------------------------------------------------------------------ */

#define CV_C 8 /* channels: one CHW8 block */
#define CV_HW 6

static float cv_weight(int i)
{
    return (float)((i * 37) % 11) / 8.0f - 0.6f;
}

/* A Conv over `x` with constant weights w [CV_C, C / group, k, k]. */
static int cv_conv(prt_network *net, int32_t x, const char *name, int32_t group,
                   int32_t k, const char *out_name, int32_t *out)
{
    static float w[2][CV_C * CV_C * 9];
    const int32_t pad = k / 2, pads[4] = {pad, pad, pad, pad}, ks[2] = {k, k};
    const int32_t which = group == 1 ? 0 : 1, per = CV_C / group;
    prt_dims wd = {4, {CV_C, per, k, k}};
    prt_field f[3];
    prt_plugin *p = NULL;
    int32_t in[2], l;
    for (int i = 0; i < CV_C * per * k * k; i++)
        w[which][i] = cv_weight(i + which);
    f[0] = ot_fld_i32("group", &group, 1);
    f[1] = ot_fld_i32("pads", pads, 4);
    f[2] = ot_fld_i32("kernel_shape", ks, 2);
    in[0] = x;
    REQUIRE_OK(prt_network_add_constant(net, name, PRT_FLOAT32, &wd, w[which], &in[1]));
    REQUIRE_OK(ot_make_op("Conv", f, 3, &p));
    REQUIRE_OK(prt_network_add_plugin(net, in, 2, NULL, 0, p, &l));
    REQUIRE_OK(prt_network_set_layer_name(net, l, name));
    REQUIRE_OK(prt_network_get_layer_output(net, l, 0, out));
    REQUIRE_OK(prt_network_set_tensor_name(net, *out, out_name));
    return 0;
}

/* X0 [N, 8, 6, 6] -> pointwise Conv "pw" -> "a" -> depthwise 3x3 Conv "dw"
 * -> Y, N in 1..nmax: "a" is CHW8 when `blocked`, and both layers have
 * workspace. With `pad`, X0 goes through the standard circ_pad_plugin "cp"
 * (LINEAR only) into "t" before "pw". Built through reg, serialized
 * (*bytes: prt_free). */
static int build_conv_plan(prt_registry *reg, int blocked, int64_t nmax, int pad,
                           void **bytes, size_t *size)
{
    const prt_dims d = {4, {-1, CV_C, CV_HW, CV_HW}}, mn = {4, {1, CV_C, CV_HW, CV_HW}},
                   mx = {4, {nmax, CV_C, CV_HW, CV_HW}};
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    int32_t x, a, y, profile, bad = 0;
    REQUIRE_OK(prt_network_create(&net));
    CHECK_OK(prt_network_add_input(net, "X0", PRT_FLOAT32, &d, &x));
    if (pad) {
        static const int32_t pads[4] = {1, 1, 1, 1};
        prt_field f = {"pads", pads, PRT_FIELD_INT32, 4};
        prt_plugin *p = tu_make_plugin(reg, "example", "circ_pad_plugin", "1", &f, 1);
        int32_t l;
        bad = !p || prt_network_add_plugin(net, &x, 1, NULL, 0, p, &l) != PRT_OK ||
              prt_network_set_layer_name(net, l, "cp") != PRT_OK ||
              prt_network_get_layer_output(net, l, 0, &x) != PRT_OK ||
              prt_network_set_tensor_name(net, x, "t") != PRT_OK;
        CHECK(!bad);
    }
    bad =
        bad || cv_conv(net, x, "pw", 1, 1, "a", &a) ||
        cv_conv(net, a, "dw", CV_C, 3, "Y", &y) ||
        prt_network_mark_output(net, y) != PRT_OK ||
        prt_builder_config_create(&cfg) != PRT_OK ||
        prt_builder_config_set_blocked_formats(cfg, blocked) != PRT_OK ||
        prt_builder_config_add_profile(cfg, &profile) != PRT_OK ||
        prt_builder_config_set_profile_dims(cfg, profile, "X0", &mn, &mn, &mx) != PRT_OK;
    return finish_plan(net, cfg, reg, bad, bytes, size);
}

static int32_t layer_named(const prt_engine *e, const char *name)
{
    for (int32_t i = 0; i < e->nb_layers; i++)
        if (strcmp(e->layers[i].name, name) == 0)
            return i;
    return -1;
}

static int32_t tensor_named(const prt_engine *e, const char *name)
{
    for (int32_t i = 0; i < e->nb_tensors; i++)
        if (strcmp(e->tensors[i].name, name) == 0)
            return i;
    return -1;
}

/* Plan bytes with the i64 (or, `narrow`, i32) at at1 set to v1 and, when
 * at2, the i64 at at2 to v2; checksum fixed. NULL when out of memory. */
static uint8_t *altered(const uint8_t *b, size_t n, size_t at1, int64_t v1, int narrow,
                        size_t at2, int64_t v2)
{
    uint8_t *c = malloc(n);
    if (!c)
        return NULL;
    memcpy(c, b, n);
    if (narrow)
        tu_put32(c + at1, (uint32_t)v1);
    else
        tu_put64(c + at1, (uint64_t)v1);
    if (at2)
        tu_put64(c + at2, (uint64_t)v2);
    tu_plan_fix_crc(c, n);
    return c;
}

/* The plan must be refused (PRT_ERR_MALFORMED) naming `sub`. */
static void expect_refused(prt_registry *reg, uint8_t *c, size_t n, const char *sub,
                           int line)
{
    prt_engine *r = NULL;
    prt_status st;
    tu_checks++;
    base_clear_error();
    st = c ? prt_engine_deserialize(reg, c, n, &r) : PRT_ERR_OUT_OF_MEMORY;
    if (st != PRT_ERR_MALFORMED || !strstr(prt_last_error(), sub)) {
        tu_failures++;
        fprintf(stderr,
                "%s:%d: deserialize gave %s, wanted a message with \"%s\"\n"
                "    message: %s\n",
                __FILE__, line, prt_status_name(st), sub, prt_last_error());
    }
    prt_engine_destroy(r);
    free(c);
}

/* Y of e at batch n, against the LINEAR plan's (exact: the kernels of a
 * block and of a plane add in one order). */
static int conv_plan_runs(const prt_engine *e, const prt_engine *ref, int64_t n)
{
    tu_rng r;
    ot_tensor x, got = {0}, want = {0};
    int ok;
    tu_rng_seed(&r, 28);
    x = ot_random(PRT_FLOAT32, D4(n, CV_C, CV_HW, CV_HW), &r, 0);
    ok = ot_run_engine(e, &x, 1, &got) == PRT_OK &&
         ot_run_engine(ref, &x, 1, &want) == PRT_OK &&
         ot_dims_eq(&got.dims, &want.dims) &&
         memcmp(got.data, want.data, sizeof(float) * (size_t)tu_volume(&got.dims)) == 0;
    ot_free(&x);
    ot_free(&got);
    ot_free(&want);
    return ok;
}

/* The blocked two-Conv plan (N in 1..3), the same with every tensor LINEAR
 * (the reference), and the blocked one for N = 1 alone (its claims are the
 * need at one image), each as bytes and loaded. */
typedef struct conv_plans {
    void *bytes, *ref_bytes, *one_bytes; /* prt_free */
    size_t size, ref_size, one_size;
    prt_engine *e, *ref, *one;
} conv_plans;

static void conv_plans_free(conv_plans *p)
{
    prt_engine_destroy(p->e);
    prt_engine_destroy(p->ref);
    prt_engine_destroy(p->one);
    prt_free(p->bytes);
    prt_free(p->ref_bytes);
    prt_free(p->one_bytes);
}

static int conv_plans_make(conv_plans *p)
{
    memset(p, 0, sizeof *p);
    REQUIRE(!build_conv_plan(NULL, 1, 3, 0, &p->bytes, &p->size));
    REQUIRE(!build_conv_plan(NULL, 0, 3, 0, &p->ref_bytes, &p->ref_size));
    REQUIRE(!build_conv_plan(NULL, 1, 1, 0, &p->one_bytes, &p->one_size));
    REQUIRE_OK(prt_engine_deserialize(NULL, p->bytes, p->size, &p->e));
    REQUIRE_OK(prt_engine_deserialize(NULL, p->ref_bytes, p->ref_size, &p->ref));
    REQUIRE_OK(prt_engine_deserialize(NULL, p->one_bytes, p->one_size, &p->one));
    /* As build_conv_plan says: "a" is CHW8, both layers have workspace. */
    REQUIRE(layer_named(p->e, "pw") == 0 && layer_named(p->e, "dw") == 1);
    CHECK(p->e->tensors[tensor_named(p->e, "a")].format == PRT_FORMAT_CHW8);
    CHECK(p->e->layers[0].workspace > 0 && p->e->layers[1].workspace > 0);
    CHECK(p->one->layers[0].workspace < p->e->layers[0].workspace);
    CHECK(conv_plan_runs(p->e, p->ref, 3) && conv_plan_runs(p->e, p->ref, 1));
    return 0;
}

/* A built-in op checks each run's need at its shapes against its layer's
 * claim (op_bind_workspace), not only that some workspace was given: with
 * a claim cut to what one image needs (in memory, past any loader, the
 * context's block sized by it), a run of one image computes and a run of
 * three fails naming need and claim before the kernel writes. */
static int test_run_workspace(void)
{
    conv_plans p;
    tu_rng r;
    ot_tensor x, y = {0};
    char sub[256];
    int64_t one, need;
    if (conv_plans_make(&p)) {
        conv_plans_free(&p);
        return 1;
    }
    one = p.one->layers[0].workspace;
    need = p.e->layers[0].workspace;
    p.e->layers[0].workspace = one;
    p.e->workspace_size = one > p.e->layers[1].workspace ? one : p.e->layers[1].workspace;
    op_bind_workspace(p.e->layers[0].plugin, one);
    CHECK(conv_plan_runs(p.e, p.ref, 1));
    tu_rng_seed(&r, 3);
    x = ot_random(PRT_FLOAT32, D4(3, CV_C, CV_HW, CV_HW), &r, 0);
    snprintf(sub, sizeof sub,
             "Conv (layer 'pw'): needs %lld bytes of workspace at these shapes, but its "
             "layer has %lld",
             (long long)need, (long long)one);
    CHECK_ERR(ot_run_engine(p.e, &x, 1, &y), PRT_ERR_MALFORMED, sub);
    ot_free(&x);
    ot_free(&y);
    conv_plans_free(&p);
    return 0;
}

/* Built-in tactics (op_device_tuning; Conv's on CUDA): a CPU build lists
 * none, so its Convs keep tactic 0 and no tactic name (as before tactics);
 * a tactic no kernel of the op knows (a malformed file) is refused at load
 * naming the layer, the op and the tactic. */
static int test_builtin_tactics(void)
{
    conv_plans p;
    const uint8_t *b;
    size_t n;
    if (conv_plans_make(&p)) {
        conv_plans_free(&p);
        return 1;
    }
    b = p.bytes;
    n = p.size;
    for (int32_t li = 0; li < 2; li++) {
        prt_layer_info info = {.struct_size = sizeof info};
        const size_t at = tu_plan_layer_workspace(b, (uint32_t)li) - 4;
        static const int32_t bad[] = {12345, -1, 1 << 30};
        char sub[160];
        CHECK_OK(prt_engine_get_layer(p.e, li, &info));
        CHECK(info.tactic == 0 && info.tactic_name && info.tactic_name[0] == '\0');
        REQUIRE(at > 4 && (int32_t)tu_get32(b + at) == 0);
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            snprintf(sub, sizeof sub,
                     "layer '%s': set_tactic(%d): Conv (layer '%s'): tactic %d does not "
                     "exist",
                     p.e->layers[li].name, (int)bad[k], p.e->layers[li].name,
                     (int)bad[k]);
            {
                /* Refused by the layer's set_tactic (an invalid argument
                 * to the op), before the checks behind it. */
                uint8_t *c = altered(b, n, at, bad[k], 1, 0, 0);
                prt_engine *r = NULL;
                REQUIRE(c);
                CHECK_ERR(prt_engine_deserialize(NULL, c, n, &r),
                          PRT_ERR_INVALID_ARGUMENT, sub);
                prt_engine_destroy(r);
                free(c);
            }
        }
    }
    conv_plans_free(&p);
    return 0;
}

/* Workspace claims and formats of built-in layers, at load, on the two-Conv
 * plan: each claim a byte under or over its op's need (META's total with
 * it, so the file stays consistent) is refused naming the layer, the op,
 * the claim and the need, and so is a claim of 8 GiB; "a" relabelled
 * LINEAR is refused (or, had the file stayed true, would run right). */
static int test_builtin_claims(void)
{
    conv_plans p;
    const uint8_t *b;
    size_t n, meta;
    char sub[256];
    if (conv_plans_make(&p)) {
        conv_plans_free(&p);
        return 1;
    }
    b = p.bytes;
    n = p.size;
    meta = tu_plan_section_at(b, TU_TAG('M', 'E', 'T', 'A')) + 8;
    REQUIRE(meta > 8);
    for (int32_t li = 0; li < 2; li++) {
        const int64_t w = p.e->layers[li].workspace,
                      other = p.e->layers[1 - li].workspace;
        const size_t at = tu_plan_layer_workspace(b, (uint32_t)li);
        REQUIRE(at && (int64_t)tu_get64(b + at) == w);
        snprintf(
            sub, sizeof sub,
            "layer %d ('%s', op Conv): claims %lld bytes of workspace, less than the "
            "%lld its op asks for at the profiles' largest shapes",
            (int)li, p.e->layers[li].name, (long long)(w - 1), (long long)w);
        expect_refused(NULL,
                       altered(b, n, at, w - 1, 0, meta, w - 1 > other ? w - 1 : other),
                       n, sub, __LINE__);
        snprintf(
            sub, sizeof sub,
            "layer %d ('%s', op Conv): claims %lld bytes of workspace, more than the "
            "%lld its op can need",
            (int)li, p.e->layers[li].name, (long long)(w + 1), (long long)w);
        expect_refused(NULL,
                       altered(b, n, at, w + 1, 0, meta, w + 1 > other ? w + 1 : other),
                       n, sub, __LINE__);
    }
    /* A claim of 8 GiB, and the total with it. */
    expect_refused(NULL,
                   altered(b, n, tu_plan_layer_workspace(b, 0), (int64_t)8 << 30, 0, meta,
                           (int64_t)8 << 30),
                   n,
                   "layer 0 ('pw', op Conv): claims 8589934592 bytes of workspace, more",
                   __LINE__);
    /* "a" relabelled LINEAR: the Convs' workspace changes with it. */
    {
        tu_plan_tensor t;
        prt_engine *r = NULL;
        uint8_t *c;
        prt_status st;
        REQUIRE(tu_plan_tensor_fields(b, (uint32_t)tensor_named(p.e, "a"), &t));
        c = altered(b, n, t.format, PRT_FORMAT_LINEAR, 1, 0, 0);
        REQUIRE(c);
        st = prt_engine_deserialize(NULL, c, n, &r);
        CHECK(st == PRT_ERR_MALFORMED || (st == PRT_OK && conv_plan_runs(r, p.ref, 3)));
        CHECK(st != PRT_ERR_MALFORMED ||
              strstr(prt_last_error(), "layer 0 ('pw', op Conv)"));
        prt_engine_destroy(r);
        free(c);
    }
    conv_plans_free(&p);
    return 0;
}

/* A third-party plugin is asked again too: "t", the LINEAR output of the
 * standard circ_pad_plugin, relabelled CHW8 (which the pointwise Conv after
 * it would take) is refused naming the plugin's layer; the intact plan
 * loads and runs. */
static int test_plugin_formats(void)
{
    prt_registry *reg = tu_registry_with_plugins();
    prt_engine *e = NULL;
    void *pb = NULL;
    size_t n = 0;
    int32_t tt;
    tu_plan_tensor t;
    REQUIRE(reg);
    REQUIRE(!build_conv_plan(reg, 1, 2, 1, &pb, &n));
    REQUIRE_OK(prt_engine_deserialize(reg, pb, n, &e));
    {
        tu_rng r;
        ot_tensor x, y = {0};
        tu_rng_seed(&r, 5);
        x = ot_random(PRT_FLOAT32, D4(2, CV_C, CV_HW, CV_HW), &r, 0);
        CHECK_OK(ot_run_engine(e, &x, 1, &y));
        ot_free(&x);
        ot_free(&y);
    }
    tt = tensor_named(e, "t");
    REQUIRE(tt >= 0 && e->tensors[tt].format == PRT_FORMAT_LINEAR);
    CHECK(e->tensors[tensor_named(e, "a")].format == PRT_FORMAT_CHW8);
    REQUIRE(tu_plan_tensor_fields(pb, (uint32_t)tt, &t));
    expect_refused(
        reg, altered(pb, n, t.format, PRT_FORMAT_CHW8, 1, 0, 0), n,
        "layer 0 ('cp', plugin example::circ_pad_plugin): output 0 ('t', "
        "float32, format CHW8) is not a type and format its plugin takes there",
        __LINE__);
    prt_engine_destroy(e);
    prt_free(pb);
    prt_registry_destroy(reg);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Deserialize through a registry                                            */
/* ------------------------------------------------------------------------ */

typedef struct fake_state {
    int created; /* runtime-phase plugins */
    int destroyed;
    int checked; /* build-phase plugins, which loading makes to check layers */
    int checked_destroyed;
    int tactics[8];
    /* 1: create fails with a message; 2: bad tables; 3: the build phase
     * fails */
    int fail_create;
    int32_t axis;       /* the "axis" field seen by NonZeroLike */
    int64_t ws_need[3]; /* per layer: what get_workspace_size answers */
    int32_t refuse[3];  /* per layer: the position it refuses, or -1 */
    int32_t out_dtype;  /* >= 0: every output's dtype from get_output_dtypes */
    int32_t configured; /* configure calls */
} fake_state;

typedef struct fake_plugin {
    prt_plugin base;
    fake_state *st;
    int index;
    int build; /* made for the build phase */
} fake_plugin;

static const char *fk_name(const prt_plugin *p)
{
    (void)p;
    return "fake";
}
static uint32_t fk_devices(const prt_plugin *p)
{
    (void)p;
    return 1u;
}

static prt_status fk_set_tactic(prt_plugin *p, int32_t tactic)
{
    fake_plugin *f = (fake_plugin *)p;
    f->st->tactics[f->index] = tactic;
    return PRT_OK;
}

static void fk_destroy(prt_plugin *p)
{
    fake_plugin *f = (fake_plugin *)p;
    if (f->build)
        f->st->checked_destroyed++;
    else
        f->st->destroyed++;
    free(f);
}

/* The build entries loading asks (make_engine's layers: nz makes an int64
 * size and int64 indices, the other two float32). */
static int32_t fk_nb_outputs(const prt_plugin *p)
{
    return ((const fake_plugin *)p)->index == 0 ? 2 : 1;
}

static prt_status fk_dtypes(prt_plugin *p, int32_t *out, int32_t nb_out,
                            const int32_t *in, int32_t nb_in)
{
    fake_plugin *f = (fake_plugin *)p;
    (void)in, (void)nb_in;
    for (int32_t o = 0; o < nb_out; o++)
        out[o] = f->st->out_dtype >= 0 ? f->st->out_dtype
                 : f->index == 0       ? PRT_INT64
                                       : PRT_FLOAT32;
    return PRT_OK;
}

static prt_status fk_shapes(prt_plugin *p, const prt_dim_exprs *in, int32_t nb_in,
                            const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                            int32_t nb_out, prt_expr_builder *eb)
{
    (void)p, (void)in, (void)nb_in, (void)sv, (void)nb_sv, (void)out, (void)nb_out;
    (void)eb;
    return PRT_ERR_INTERNAL; /* loading never asks for shapes */
}

static int32_t fk_supports(prt_plugin *p, int32_t pos, const prt_dynamic_tensor_desc *io,
                           int32_t nb_in, int32_t nb_out)
{
    fake_plugin *f = (fake_plugin *)p;
    (void)io, (void)nb_in, (void)nb_out;
    return pos != f->st->refuse[f->index];
}

static prt_status fk_configure(prt_plugin *p, const prt_dynamic_tensor_desc *in,
                               int32_t nb_in, const prt_dynamic_tensor_desc *out,
                               int32_t nb_out)
{
    (void)in, (void)nb_in, (void)out, (void)nb_out;
    ((fake_plugin *)p)->st->configured++;
    return PRT_OK;
}

static prt_status fk_workspace(prt_plugin *p, const prt_dynamic_tensor_desc *in,
                               int32_t nb_in, const prt_dynamic_tensor_desc *out,
                               int32_t nb_out, int64_t *bytes)
{
    fake_plugin *f = (fake_plugin *)p;
    (void)in, (void)nb_in, (void)out, (void)nb_out;
    *bytes = f->st->ws_need[f->index];
    return PRT_OK;
}

static prt_status fk_enqueue(prt_plugin *p, const prt_tensor_desc *in,
                             const prt_tensor_desc *out, const void *const *ins,
                             void *const *outs, void *ws, int32_t device, void *stream)
{
    (void)p, (void)in, (void)out, (void)ins, (void)outs, (void)ws;
    (void)device, (void)stream;
    return PRT_ERR_UNSUPPORTED;
}
static prt_plugin *fk_attach(prt_plugin *p, prt_plugin_resources *r)
{
    (void)p, (void)r;
    return NULL;
}
static const prt_field_collection *fk_fields(prt_plugin *p)
{
    (void)p;
    return NULL;
}
static prt_plugin *fk_clone(const prt_plugin *p)
{
    (void)p;
    return NULL;
}

static const prt_plugin_core fk_core = {.struct_size = sizeof(prt_plugin_core),
                                        .abi_version = PRT_PLUGIN_ABI_VERSION,
                                        .name = fk_name,
                                        .version = fk_name,
                                        .plugin_namespace = fk_name,
                                        .devices = fk_devices};
static const prt_plugin_runtime fk_runtime = {.struct_size = sizeof(prt_plugin_runtime),
                                              .abi_version = PRT_PLUGIN_ABI_VERSION,
                                              .set_tactic = fk_set_tactic,
                                              .enqueue = fk_enqueue,
                                              .attach_to_context = fk_attach,
                                              .get_fields_to_serialize = fk_fields,
                                              .clone = fk_clone,
                                              .destroy = fk_destroy};
static const prt_plugin_vtable fk_vt = {.struct_size = sizeof(prt_plugin_vtable),
                                        .abi_version = PRT_PLUGIN_ABI_VERSION,
                                        .core = &fk_core,
                                        .build = NULL,
                                        .runtime = &fk_runtime};
static const prt_plugin_build fk_build = {.struct_size = sizeof(prt_plugin_build),
                                          .abi_version = PRT_PLUGIN_ABI_VERSION,
                                          .nb_outputs = fk_nb_outputs,
                                          .get_output_dtypes = fk_dtypes,
                                          .get_output_shapes = fk_shapes,
                                          .supports_format_combination = fk_supports,
                                          .configure = fk_configure,
                                          .get_workspace_size = fk_workspace};
static const prt_plugin_vtable fk_vt_build = {.struct_size = sizeof(prt_plugin_vtable),
                                              .abi_version = PRT_PLUGIN_ABI_VERSION,
                                              .core = &fk_core,
                                              .build = &fk_build,
                                              .runtime = &fk_runtime};
/* A runtime table without enqueue: must be refused, and still destroyed. */
static const prt_plugin_runtime fk_runtime_bad = {.struct_size =
                                                      sizeof(prt_plugin_runtime),
                                                  .abi_version = PRT_PLUGIN_ABI_VERSION,
                                                  .set_tactic = fk_set_tactic,
                                                  .destroy = fk_destroy};
static const prt_plugin_vtable fk_vt_bad = {.struct_size = sizeof(prt_plugin_vtable),
                                            .abi_version = PRT_PLUGIN_ABI_VERSION,
                                            .core = &fk_core,
                                            .build = NULL,
                                            .runtime = &fk_runtime_bad};

static prt_status fk_create(const prt_plugin_creator *c, const char *layer,
                            const prt_field_collection *fc, int32_t phase,
                            prt_plugin **out)
{
    fake_state *s = c->user;
    fake_plugin *f;
    if (phase == PRT_PHASE_BUILD && s->fail_create == 3) {
        prt_host_services_get()->set_error(NULL, PRT_ERR_UNSUPPORTED,
                                           "fake creator serves the runtime only");
        return PRT_ERR_UNSUPPORTED;
    }
    if (s->fail_create == 1) {
        prt_host_services_get()->set_error(NULL, PRT_ERR_INVALID_ARGUMENT,
                                           "fake creator refuses");
        return PRT_ERR_INVALID_ARGUMENT;
    }
    for (int32_t i = 0; i < fc->nb_fields; i++)
        if (strcmp(fc->fields[i].name, "axis") == 0 &&
            fc->fields[i].type == PRT_FIELD_INT32 && fc->fields[i].length == 1)
            memcpy(&s->axis, fc->fields[i].data, 4);
    f = calloc(1, sizeof *f);
    if (!f)
        return PRT_ERR_OUT_OF_MEMORY;
    f->base.vt = s->fail_create == 2        ? &fk_vt_bad
                 : phase == PRT_PHASE_BUILD ? &fk_vt_build
                                            : &fk_vt;
    f->st = s;
    f->index = strcmp(layer, "nz") == 0 ? 0 : strcmp(layer, "add") == 0 ? 1 : 2;
    f->build = phase == PRT_PHASE_BUILD;
    if (f->build)
        s->checked++;
    else
        s->created++;
    *out = &f->base;
    return PRT_OK;
}

/* A fake_state whose plugins accept everything and need no workspace. */
static void fake_reset(fake_state *s)
{
    memset(s, 0, sizeof *s);
    s->out_dtype = -1;
    for (int i = 0; i < 3; i++)
        s->refuse[i] = -1;
}

/* Loading asks every layer's plugin again (engine_check_layers): a plugin
 * made for the build phase from the layer's fields, asked its dtypes, every
 * position's format, configure and its workspace at both profiles, then
 * destroyed; what it disagrees with is refused naming the layer. */
static int check_layers_cases(prt_registry *reg, const void *b, size_t n, fake_state *s)
{
    prt_engine *r = NULL;
    fake_reset(s);
    REQUIRE_OK(prt_engine_deserialize(reg, b, n, &r));
    CHECK(s->created == 3 && s->checked == 3 && s->checked_destroyed == 3);
    CHECK(s->configured == 6);
    prt_engine_destroy(r);
    r = NULL;

    /* More than the layer claims (128 bytes): refused, naming both. */
    s->ws_need[0] = 129;
    CHECK_ERR(prt_engine_deserialize(reg, b, n, &r), PRT_ERR_MALFORMED,
              "invalid engine: layer 0 ('nz', plugin test::NonZeroLike): claims 128 "
              "bytes of workspace, less than the 129 its plugin asks for at the "
              "profiles' largest shapes");
    CHECK(r == NULL && s->created == s->destroyed && s->checked == s->checked_destroyed);
    /* The claim or less (a plugin's answer may depend on the machine): loads. */
    s->ws_need[0] = 128;
    s->ws_need[1] = 5;
    CHECK_OK(prt_engine_deserialize(reg, b, n, &r));
    prt_engine_destroy(r);
    r = NULL;
    s->ws_need[0] = s->ws_need[1] = 0;

    /* A dtype or format the plugin does not take there. */
    s->refuse[1] = 2;
    CHECK_ERR(prt_engine_deserialize(reg, b, n, &r), PRT_ERR_MALFORMED,
              "layer 1 ('add', plugin AddLike): output 0 ('mid', float32, format "
              "LINEAR) is not a type and format its plugin takes there");
    s->refuse[1] = -1;
    s->refuse[0] = 0;
    CHECK_ERR(prt_engine_deserialize(reg, b, n, &r), PRT_ERR_MALFORMED,
              "layer 0 ('nz', plugin test::NonZeroLike): input 0 ('x', float32, format "
              "LINEAR) is not");
    s->refuse[0] = -1;
    /* Outputs of a dtype the plugin does not make from these inputs. */
    s->out_dtype = PRT_FLOAT16;
    CHECK_ERR(prt_engine_deserialize(reg, b, n, &r), PRT_ERR_MALFORMED,
              "layer 0 ('nz', plugin test::NonZeroLike): output 0 ('count') is int64, "
              "but the plugin makes float16 from these inputs");
    s->out_dtype = -1;
    /* A creator that makes no build-phase plugin: the layer cannot be
     * checked, so the engine does not load. */
    s->fail_create = 3;
    CHECK_ERR(prt_engine_deserialize(reg, b, n, &r), PRT_ERR_UNSUPPORTED,
              "fake creator serves the runtime only");
    CHECK(strstr(prt_last_error(), "layer 0 ('nz', plugin test::NonZeroLike)") != NULL);
    CHECK(r == NULL && s->created == s->destroyed && s->checked == s->checked_destroyed);
    fake_reset(s);
    return 0;
}

static int test_deserialize(void)
{
    prt_engine *e = make_engine(), *r = NULL;
    prt_registry *reg = NULL;
    fake_state s;
    prt_plugin_creator cr[3];
    void *b = NULL;
    size_t n = 0;
    fake_reset(&s);
    REQUIRE(e);
    REQUIRE_OK(prt_engine_serialize(e, &b, &n));

    CHECK_ERR(prt_engine_deserialize(NULL, b, n, &r), PRT_ERR_INVALID_ARGUMENT,
              "no registry");
    CHECK_ERR(prt_engine_deserialize(NULL, NULL, n, &r), PRT_ERR_INVALID_ARGUMENT, NULL);
    REQUIRE_OK(prt_registry_create(&reg));
    /* Missing plugin: the key, the layer, the library it was built with and
     * what the registry searched. */
    CHECK_ERR(prt_engine_deserialize(reg, b, n, &r), PRT_ERR_NOT_FOUND,
              "plugin test::NonZeroLike version 1");
    CHECK(strstr(prt_last_error(), "'nz'") != NULL);
    CHECK(strstr(prt_last_error(), LIB_PATH) != NULL);
    CHECK(strstr(prt_last_error(), "0123456789abcdef") != NULL);
    CHECK(strstr(prt_last_error(), "no plugin libraries loaded") != NULL);

    for (int i = 0; i < 3; i++) {
        static const char *const ns[] = {"test", "", "test"};
        static const char *const nm[] = {"NonZeroLike", "AddLike", "InPlace"};
        static const char *const ver[] = {"1", "2", "1"};
        memset(&cr[i], 0, sizeof cr[i]);
        cr[i].struct_size = sizeof cr[i];
        cr[i].abi_version = PRT_PLUGIN_ABI_VERSION;
        cr[i].name = nm[i];
        cr[i].version = ver[i];
        cr[i].plugin_namespace = ns[i];
        cr[i].create = fk_create;
        cr[i].user = &s;
    }
    REQUIRE_OK(prt_registry_add_creator(reg, &cr[0]));
    REQUIRE_OK(prt_registry_add_creator(reg, &cr[2]));
    /* The second layer's plugin is missing now; the first is destroyed. */
    CHECK_ERR(prt_engine_deserialize(reg, b, n, &r), PRT_ERR_NOT_FOUND,
              "plugin ::AddLike version 2");
    CHECK(strstr(prt_last_error(), "registered directly") != NULL);
    CHECK(s.created == 1 && s.destroyed == 1);

    REQUIRE_OK(prt_registry_add_creator(reg, &cr[1]));
    s.created = s.destroyed = 0;
    s.fail_create = 1;
    CHECK_ERR(prt_engine_deserialize(reg, b, n, &r), PRT_ERR_INVALID_ARGUMENT,
              "layer 'nz' (plugin test::NonZeroLike): fake creator refuses");
    CHECK(r == NULL);

    s.fail_create = 2;
    CHECK_ERR(prt_engine_deserialize(reg, b, n, &r), PRT_ERR_PLUGIN,
              "layer 'nz': plugin 'fake::fake': runtime table is incomplete");
    CHECK(r == NULL && s.created == 1 && s.destroyed == 1);

    s.created = s.destroyed = 0;
    s.fail_create = 0;
    CHECK_OK(prt_engine_deserialize(reg, b, n, &r));
    CHECK(s.created == 3 && s.destroyed == 0);
    CHECK(s.tactics[0] == 0 && s.tactics[1] == 7 && s.tactics[2] == -3);
    CHECK(s.axis == 1);
    if (r) {
        CHECK(r->layers[0].plugin && r->layers[1].plugin && r->layers[2].plugin);
        CHECK(prt_engine_layer_count(r) == 3);
    }
    prt_engine_destroy(r);
    CHECK(s.destroyed == 3);
    check_layers_cases(reg, b, n, &s);

    /* Output 0 over input 0 under other dims, not a copy, LINEAR: the
     * file's own checks let it through as a view (Reshape's), but the
     * layer's plugin is not one. */
    {
        prt_engine *v = make_engine();
        void *vb = NULL;
        size_t vn = 0;
        REQUIRE(v);
        v->tensors[5].dim_expr[0] = 1;
        v->tensors[5].max_bytes = 512;
        v->layers[2].alias_copy[0] = 0;
        CHECK_OK(prt_engine_serialize(v, &vb, &vn));
        fake_reset(&s);
        r = NULL;
        CHECK_ERR(prt_engine_deserialize(reg, vb, vn, &r), PRT_ERR_MALFORMED,
                  "layer 2 ('inplace', plugin test::InPlace): output 0 ('final') shares "
                  "input 0's memory under other dims");
        CHECK(r == NULL && s.created == s.destroyed && s.checked == s.checked_destroyed);
        prt_free(vb);
        engine_free(v);
    }

    /* Allocation failures anywhere in deserialize: clean, no plugin leaks. */
    {
        int64_t k;
        prt_status st = PRT_ERR_INTERNAL;
        for (k = 0; k < 10000; k++) {
            r = NULL;
            s.created = s.destroyed = 0;
            base_fail_alloc_after(k);
            st = prt_engine_deserialize(reg, b, n, &r);
            base_fail_alloc_after(-1);
            if (st == PRT_OK)
                break;
            CHECK(st == PRT_ERR_OUT_OF_MEMORY && r == NULL);
            CHECK(s.created == s.destroyed && s.checked == s.checked_destroyed);
        }
        CHECK(st == PRT_OK);
        prt_engine_destroy(r);
    }
    prt_registry_destroy(reg);
    prt_free(b);
    engine_free(e);
    return 0;
}

/* With a real plugin library: a key found in a library whose content hash
 * differs from the one the engine recorded is a warning naming both; the
 * library's creator then fails, which is PRT_ERR_PLUGIN prefixed with the
 * layer. A missing key lists the libraries searched. */
static char logged[4096];
static void capture_log(void *user, int32_t severity, const char *message)
{
    (void)user;
    if (severity == PRT_SEV_WARNING)
        snprintf(logged, sizeof logged, "%s", message);
}

static int test_deserialize_library(void)
{
    const char *lib = PRT_TESTLIB_DIR "/testlib_foo_a.so";
    prt_engine *e = make_engine(), *r = NULL;
    prt_registry *reg = NULL;
    fake_state s;
    prt_plugin_creator cr[2];
    void *b = NULL;
    size_t n = 0;
    fake_reset(&s);
    REQUIRE(e);
    REQUIRE_OK(prt_registry_create(&reg));
    REQUIRE_OK(prt_registry_load_library(reg, lib));

    /* NonZeroLike is in no library: the loaded ones are listed. */
    REQUIRE_OK(prt_engine_serialize(e, &b, &n));
    CHECK_ERR(prt_engine_deserialize(reg, b, n, &r), PRT_ERR_NOT_FOUND,
              "plugin libraries loaded: " PRT_TESTLIB_DIR "/testlib_foo_a.so");
    prt_free(b);

    /* Layer 0 becomes test::Foo@1, recorded with another hash. */
    base_free(e->layers[0].plugin_name);
    e->layers[0].plugin_name = base_strdup("Foo");
    REQUIRE(e->layers[0].plugin_name);
    for (int i = 0; i < 2; i++) {
        memset(&cr[i], 0, sizeof cr[i]);
        cr[i].struct_size = sizeof cr[i];
        cr[i].abi_version = PRT_PLUGIN_ABI_VERSION;
        cr[i].name = i ? "InPlace" : "AddLike";
        cr[i].version = i ? "1" : "2";
        cr[i].plugin_namespace = i ? "test" : "";
        cr[i].create = fk_create;
        cr[i].user = &s;
        REQUIRE_OK(prt_registry_add_creator(reg, &cr[i]));
    }
    REQUIRE_OK(prt_engine_serialize(e, &b, &n));
    logged[0] = '\0';
    prt_set_logger(capture_log, NULL, PRT_SEV_WARNING);
    CHECK_ERR(prt_engine_deserialize(reg, b, n, &r), PRT_ERR_UNSUPPORTED,
              "layer 'nz' (plugin test::Foo): test::Foo (a) only exists to be found");
    prt_set_logger(NULL, NULL, 0);
    CHECK(r == NULL);
    CHECK(strstr(logged, LIB_PATH) != NULL);
    CHECK(strstr(logged, "0123456789abcdef") != NULL);
    CHECK(strstr(logged, "testlib_foo_a.so") != NULL);
    CHECK(strstr(logged, "'nz'") != NULL);
    CHECK(s.created == s.destroyed);
    prt_free(b);
    prt_registry_destroy(reg);
    engine_free(e);
    return 0;
}

/* A plan read without its plugins (prt_engine_deserialize_unresolved):
 * every query answers, nothing can run; and a size tensor's opt and bound
 * per profile. */
static int test_unresolved(void)
{
    prt_engine *e = make_engine(), *r = NULL;
    prt_layer_info li = {.struct_size = sizeof(prt_layer_info)};
    prt_context *ctx = NULL;
    void *b = NULL;
    size_t n = 0;
    int64_t opt = -1, bound = -1;
    REQUIRE(e);
    /* K is declared with opt N and bound 4N: profile 0 has N opt 8, max
     * 32; profile 1 opt 64, max 128. */
    CHECK_OK(prt_engine_get_size_tensor_bounds(e, 0, 2, &opt, &bound));
    CHECK(opt == 8 && bound == 128);
    CHECK_OK(prt_engine_get_size_tensor_bounds(e, 1, 2, &opt, NULL));
    CHECK(opt == 64);
    CHECK_OK(prt_engine_get_size_tensor_bounds(e, 1, 2, NULL, &bound));
    CHECK(bound == 512);
    CHECK_ERR(prt_engine_get_size_tensor_bounds(e, 0, 0, &opt, &bound),
              PRT_ERR_INVALID_ARGUMENT, "'x' is not a size tensor");
    CHECK_ERR(prt_engine_get_size_tensor_bounds(e, 2, 2, &opt, &bound),
              PRT_ERR_INVALID_ARGUMENT, "profile 2");
    CHECK_ERR(prt_engine_get_size_tensor_bounds(e, 0, 6, &opt, &bound),
              PRT_ERR_INVALID_ARGUMENT, "tensor 6");
    CHECK_ERR(prt_engine_get_size_tensor_bounds(NULL, 0, 2, &opt, &bound),
              PRT_ERR_INVALID_ARGUMENT, NULL);

    REQUIRE_OK(prt_engine_serialize(e, &b, &n));
    /* No registry at all: the plan still describes itself. */
    CHECK(prt_engine_is_unresolved(e) == 0);
    REQUIRE_OK(prt_engine_deserialize_unresolved(b, n, &r));
    CHECK(prt_engine_is_unresolved(r) == 1 && prt_engine_is_unresolved(NULL) == 0);
    CHECK(prt_engine_layer_count(r) == 3 && prt_engine_io_count(r) == 4);
    CHECK_OK(prt_engine_get_layer(r, 0, &li));
    CHECK(strcmp(li.plugin_namespace, "test") == 0 &&
          strcmp(li.plugin_name, "NonZeroLike") == 0 &&
          strcmp(li.library, LIB_PATH) == 0);
    CHECK(li.nb_fields == 12 && strcmp(li.fields[2].name, "axis") == 0);
    CHECK_OK(prt_engine_get_size_tensor_bounds(r, 1, 2, &opt, &bound));
    CHECK(opt == 64 && bound == 512);
    /* It cannot run: the context says why. */
    CHECK_ERR(prt_context_create(r, &ctx), PRT_ERR_STATE, "inspection only");
    CHECK(ctx == NULL);
    prt_engine_destroy(r);
    r = NULL;
    /* Bytes that are not a plan are refused as by prt_engine_deserialize. */
    ((uint8_t *)b)[n / 2] ^= 1;
    CHECK_ERR(prt_engine_deserialize_unresolved(b, n, &r), PRT_ERR_MALFORMED, "checksum");
    CHECK(r == NULL);
    CHECK_ERR(prt_engine_deserialize_unresolved(NULL, n, &r), PRT_ERR_INVALID_ARGUMENT,
              NULL);
    prt_free(b);
    engine_free(e);
    return 0;
}

int main(void)
{
    test_round_trip();
    test_queries();
    test_flips_and_truncations();
    test_corruption_behind_checksum();
    test_sections();
    test_alloc_failures();
    test_validate();
    test_memory_plan();
    test_run_workspace();
    test_builtin_claims();
    test_builtin_tactics();
    test_plugin_formats();
    test_deserialize();
    test_deserialize_library();
    test_unresolved();
    return tu_finish("test_engine_format");
}
