/*
 * Regression tests from a review of builder, plan, runtime and engine code:
 *  - a layer whose only data-dependent output is a 0-D size tensor (no other
 *    output has a data-dependent dim) is checked against its real bound;
 *  - two outputs of one layer that alias the same input never share memory;
 *  - an engine file whose size tensor has no SIZE expression node, or two,
 *    is rejected (the runtime reads that node's upper bound);
 *  - an output allocator is handed back the memory it returned last time
 *    (`current`), as plugrt.h says;
 *  - contexts created concurrently from one engine never call the engine's
 *    plugin object from two threads at once (plugin.h's threading promise).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "engine/engine_impl.h"
#include "testutil.h"

enum { KIND_COUNT, KIND_COPY, KIND_DUP2, KIND_ATTACH, NB_KINDS };

typedef struct rplug {
    prt_plugin base;
    int32_t kind;
    prt_field_collection fc;
} rplug;

static const char *rp_name(const prt_plugin *p)
{
    static const char *const names[] = {"Count", "Copy", "Dup2", "SlowAttach"};
    return names[((const rplug *)p)->kind];
}
static const char *rp_version(const prt_plugin *p) { (void)p; return "1"; }
static const char *rp_ns(const prt_plugin *p) { (void)p; return "review"; }
static uint32_t rp_devices(const prt_plugin *p) { (void)p; return 1u << PRT_DEVICE_CPU; }

static int32_t rp_nb_outputs(const prt_plugin *p)
{
    return ((const rplug *)p)->kind == KIND_DUP2 ? 2 : 1;
}

static prt_status rp_dtypes(prt_plugin *p, int32_t *out, int32_t nb_out,
                            const int32_t *in, int32_t nb_in)
{
    (void)in;
    (void)nb_in;
    for (int32_t o = 0; o < nb_out; o++)
        out[o] = ((rplug *)p)->kind == KIND_COUNT ? PRT_INT64 : PRT_FLOAT32;
    return PRT_OK;
}

static prt_status rp_shapes(prt_plugin *p, const prt_dim_exprs *in, int32_t nb_in,
                            const prt_dim_exprs *si, int32_t nb_si, prt_dim_exprs *out,
                            int32_t nb_out, prt_expr_builder *eb)
{
    (void)nb_in;
    (void)si;
    (void)nb_si;
    if (((rplug *)p)->kind == KIND_COUNT) {
        /* The count of positive elements: 0..N, tuned at N. */
        out[0].nb_dims = 0;
        return eb->declare_size_tensor(eb, 0, in[0].d[0], in[0].d[0]) ? PRT_OK
                                                                       : PRT_ERR_PLUGIN;
    }
    for (int32_t o = 0; o < nb_out; o++)
        out[o] = in[0];
    return PRT_OK;
}

static int32_t rp_supports(prt_plugin *p, int32_t pos, const prt_dynamic_tensor_desc *io,
                           int32_t nb_in, int32_t nb_out)
{
    (void)nb_out;
    if (io[pos].desc.format != PRT_FORMAT_LINEAR)
        return 0;
    if (pos >= nb_in && ((rplug *)p)->kind == KIND_COUNT)
        return io[pos].desc.dtype == PRT_INT64;
    return io[pos].desc.dtype == PRT_FLOAT32;
}

static int32_t rp_alias(const prt_plugin *p, int32_t o)
{
    (void)o;
    return ((const rplug *)p)->kind == KIND_DUP2 ? 0 : -1;
}

static prt_status rp_enqueue(prt_plugin *p, const prt_tensor_desc *in_desc,
                             const prt_tensor_desc *out_desc, const void *const *in,
                             void *const *out, void *ws, int32_t device, void *stream)
{
    int64_t n = in_desc[0].dims.d[0];
    const float *x = in[0];
    (void)out_desc;
    (void)ws;
    (void)device;
    (void)stream;
    switch (((rplug *)p)->kind) {
    case KIND_COUNT: {
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++)
            k += x[i] > 0;
        *(int64_t *)out[0] = k;
        break;
    }
    case KIND_DUP2:
        /* Written for in place: each element is read before either output
         * element is written. */
        for (int64_t i = 0; i < n; i++) {
            float a = x[i];
            ((float *)out[0])[i] = a + 1;
            ((float *)out[1])[i] = a + 2;
        }
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            ((float *)out[0])[i] = x[i];
        break;
    }
    return PRT_OK;
}

static prt_plugin *rp_clone(const prt_plugin *p)
{
    rplug *c = malloc(sizeof *c);
    if (c)
        *c = *(const rplug *)p;
    return c ? &c->base : NULL;
}

/* SlowAttach: flags two threads inside attach_to_context of one object. */
static atomic_int attach_inside, attach_overlaps;

static prt_plugin *rp_attach(prt_plugin *p, prt_plugin_resources *r)
{
    (void)r;
    if (((rplug *)p)->kind == KIND_ATTACH) {
        struct timespec ts = {0, 2000000};
        if (atomic_fetch_add(&attach_inside, 1) != 0)
            atomic_fetch_add(&attach_overlaps, 1);
        nanosleep(&ts, NULL);
        atomic_fetch_sub(&attach_inside, 1);
    }
    return rp_clone(p);
}
static const prt_field_collection *rp_fields(prt_plugin *p) { return &((rplug *)p)->fc; }
static void rp_destroy(prt_plugin *p) { free(p); }

static const prt_plugin_core rp_core = {sizeof rp_core, PRT_PLUGIN_ABI_VERSION, rp_name,
                                        rp_version, rp_ns, rp_devices};
static const prt_plugin_build rp_build = {
    sizeof rp_build, PRT_PLUGIN_ABI_VERSION, rp_nb_outputs, rp_dtypes, rp_shapes,
    rp_supports, NULL, NULL, NULL, rp_alias, NULL};
static const prt_plugin_runtime rp_runtime = {
    sizeof rp_runtime, PRT_PLUGIN_ABI_VERSION, NULL, NULL, rp_enqueue,
    rp_attach, rp_fields, rp_clone, rp_destroy};
static const prt_plugin_vtable rp_vt = {sizeof rp_vt, PRT_PLUGIN_ABI_VERSION, &rp_core,
                                        &rp_build, &rp_runtime};

static prt_status rp_create(const prt_plugin_creator *c, const char *layer,
                            const prt_field_collection *f, int32_t phase, prt_plugin **out)
{
    rplug *t = calloc(1, sizeof *t);
    (void)layer;
    (void)f;
    (void)phase;
    if (!t)
        return PRT_ERR_OUT_OF_MEMORY;
    t->base.vt = &rp_vt;
    t->kind = (int32_t)(intptr_t)c->user;
    *out = &t->base;
    return PRT_OK;
}

#define CREATOR(n, k)                                                           \
    {sizeof(prt_plugin_creator), PRT_PLUGIN_ABI_VERSION, n, "1", "review", 0, NULL, \
     rp_create, (void *)(intptr_t)(k)}
static prt_plugin_creator rp_creators[NB_KINDS] = {
    CREATOR("Count", KIND_COUNT), CREATOR("Copy", KIND_COPY), CREATOR("Dup2", KIND_DUP2),
    CREATOR("SlowAttach", KIND_ATTACH)};

static prt_plugin *make(int32_t kind)
{
    prt_plugin *p = NULL;
    prt_field_collection fc = {0, NULL};
    if (rp_create(&rp_creators[kind], "x", &fc, PRT_PHASE_BUILD, &p) != PRT_OK)
        return NULL;
    return p;
}

/* Adds a one-input layer of `kind` over `in`; *out0 is its output 0. */
static prt_status add(prt_network *net, int32_t kind, int32_t in, int32_t *layer,
                      int32_t *out0)
{
    prt_plugin *p = make(kind);
    prt_status st;
    if (!p)
        return PRT_ERR_OUT_OF_MEMORY;
    st = prt_network_add_plugin(net, &in, 1, NULL, 0, p, layer);
    if (st) {
        p->vt->runtime->destroy(p);
        return st;
    }
    return prt_network_get_layer_output(net, *layer, 0, out0);
}

/* Builds with one profile X: [1..16] (opt 8). */
static prt_status build(prt_network *net, prt_engine **out)
{
    prt_builder_config *cfg = NULL;
    prt_dims mn = {1, {1}}, op = {1, {8}}, mx = {1, {16}};
    int32_t prof;
    prt_status st = prt_builder_config_create(&cfg);
    if (!st)
        st = prt_builder_config_add_profile(cfg, &prof);
    if (!st)
        st = prt_builder_config_set_profile_dims(cfg, prof, "X", &mn, &op, &mx);
    if (!st)
        st = prt_engine_build(net, cfg, NULL, out);
    prt_builder_config_destroy(cfg);
    return st;
}

/* ---- a layer that only outputs a size tensor ------------------------------ */

static int test_size_only_layer(void)
{
    prt_network *net = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    prt_dims dyn = {1, {-1}}, d5 = {1, {5}};
    float x[5] = {1, -1, 2, 0, 3};
    int64_t k = -1;
    int32_t tx, l, tk;
    REQUIRE_OK(prt_network_create(&net));
    REQUIRE_OK(prt_network_add_input(net, "X", PRT_FLOAT32, &dyn, &tx));
    REQUIRE_OK(add(net, KIND_COUNT, tx, &l, &tk));
    REQUIRE_OK(prt_network_set_tensor_name(net, tk, "K"));
    REQUIRE_OK(prt_network_mark_output(net, tk));
    CHECK_OK(build(net, &e));
    prt_network_destroy(net);
    REQUIRE(e != NULL);
    REQUIRE_OK(prt_context_create(e, &ctx));
    CHECK_OK(prt_context_set_input_shape(ctx, "X", &d5));
    CHECK_OK(prt_context_set_tensor_address(ctx, "X", x));
    CHECK_OK(prt_context_set_tensor_address(ctx, "K", &k));
    /* Before the fix the bound was read from upper-bound values never
     * evaluated for this layer (zero), so a count of 3 was "outside 0..0". */
    CHECK_OK(prt_context_enqueue(ctx, NULL));
    CHECK(k == 3);
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    return 0;
}

/* ---- two outputs aliasing one input --------------------------------------- */

static int test_two_aliases(void)
{
    prt_network *net = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    prt_dims dyn = {1, {-1}}, d4 = {1, {4}};
    float x[4] = {1, 2, 3, 4}, y0[4] = {0}, y1[4] = {0};
    int32_t tx, l, t, u0, u1, y0t, y1t;
    REQUIRE_OK(prt_network_create(&net));
    REQUIRE_OK(prt_network_add_input(net, "X", PRT_FLOAT32, &dyn, &tx));
    /* X -> Copy -> t -> Dup2 -> (u0, u1) -> Copy each -> Y0, Y1: t, u0 and
     * u1 all live in the arena, so the builder may place them in place. */
    REQUIRE_OK(add(net, KIND_COPY, tx, &l, &t));
    REQUIRE_OK(add(net, KIND_DUP2, t, &l, &u0));
    REQUIRE_OK(prt_network_get_layer_output(net, l, 1, &u1));
    REQUIRE_OK(add(net, KIND_COPY, u0, &l, &y0t));
    REQUIRE_OK(add(net, KIND_COPY, u1, &l, &y1t));
    REQUIRE_OK(prt_network_set_tensor_name(net, y0t, "Y0"));
    REQUIRE_OK(prt_network_set_tensor_name(net, y1t, "Y1"));
    REQUIRE_OK(prt_network_mark_output(net, y0t));
    REQUIRE_OK(prt_network_mark_output(net, y1t));
    CHECK_OK(build(net, &e));
    prt_network_destroy(net);
    REQUIRE(e != NULL);
    REQUIRE_OK(prt_context_create(e, &ctx));
    CHECK_OK(prt_context_set_input_shape(ctx, "X", &d4));
    CHECK_OK(prt_context_set_tensor_address(ctx, "X", x));
    CHECK_OK(prt_context_set_tensor_address(ctx, "Y0", y0));
    CHECK_OK(prt_context_set_tensor_address(ctx, "Y1", y1));
    CHECK_OK(prt_context_enqueue(ctx, NULL));
    for (int i = 0; i < 4; i++) {
        CHECK(y0[i] == x[i] + 1);
        CHECK(y1[i] == x[i] + 2);
    }
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    return 0;
}

/* ---- contexts created from threads ------------------------------------------ */

static void *make_contexts(void *arg)
{
    const prt_engine *e = arg;
    for (int i = 0; i < 10; i++) {
        prt_context *ctx = NULL;
        CHECK_OK(prt_context_create(e, &ctx));
        prt_context_destroy(ctx);
    }
    return NULL;
}

static int test_concurrent_attach(void)
{
    prt_network *net = NULL;
    prt_engine *e = NULL;
    pthread_t th[4];
    int32_t tx, l, ty;
    prt_dims dyn = {1, {-1}};
    REQUIRE_OK(prt_network_create(&net));
    REQUIRE_OK(prt_network_add_input(net, "X", PRT_FLOAT32, &dyn, &tx));
    REQUIRE_OK(add(net, KIND_ATTACH, tx, &l, &ty));
    REQUIRE_OK(prt_network_mark_output(net, ty));
    CHECK_OK(build(net, &e));
    prt_network_destroy(net);
    REQUIRE(e != NULL);
    atomic_store(&attach_overlaps, 0);
    for (int i = 0; i < 4; i++)
        REQUIRE(pthread_create(&th[i], NULL, make_contexts, e) == 0);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    /* plugin.h: "The host never calls two entries of the same plugin object
     * at once." Every context attaches from the engine's one plugin. */
    CHECK(atomic_load(&attach_overlaps) == 0);
    prt_engine_destroy(e);
    return 0;
}

/* ---- engine files: one SIZE node per size tensor --------------------------- */

/* X: [5] static -> Count -> K. The program is [CONST 5, SIZE(0, 5, 5)]. */
static prt_status build_static_count(prt_engine **out)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_dims d5 = {1, {5}};
    int32_t tx, l, tk;
    prt_status st = prt_network_create(&net);
    if (!st)
        st = prt_network_add_input(net, "X", PRT_FLOAT32, &d5, &tx);
    if (!st)
        st = add(net, KIND_COUNT, tx, &l, &tk);
    if (!st)
        st = prt_network_set_tensor_name(net, tk, "K");
    if (!st)
        st = prt_network_mark_output(net, tk);
    if (!st)
        st = prt_builder_config_create(&cfg);
    if (!st)
        st = prt_engine_build(net, cfg, NULL, out);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return st;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void fix_crc(uint8_t *p, size_t size)
{
    put_le(p + size - 4, base_crc32(p, size - 4), 4);
}

/* Offset of the EXPR section's header (tag) in an engine file, or 0. */
static size_t expr_section(const uint8_t *p, size_t size)
{
    for (size_t i = 0; i + 4 <= size; i++)
        if (memcmp(p + i, "EXPR", 4) == 0)
            return i;
    return 0;
}

#define NODE_FILE_BYTES 24 /* i32 kind, i32 op, i64 imm, i32 a, i32 b */

static int test_size_nodes(void)
{
    prt_registry *reg = NULL;
    prt_engine *e = NULL, *back = NULL;
    uint8_t *bytes = NULL, *big = NULL;
    size_t size = 0, sec, nodes;
    int32_t size_node = -1;
    REQUIRE_OK(prt_registry_create(&reg));
    for (int i = 0; i < NB_KINDS; i++)
        REQUIRE_OK(prt_registry_add_creator(reg, &rp_creators[i]));
    REQUIRE_OK(build_static_count(&e));
    for (int32_t i = 0; i < e->exprs.nb_nodes; i++)
        if (e->exprs.nodes[i].kind == EXPR_SIZE)
            size_node = i;
    REQUIRE(size_node > 0 && e->exprs.nodes[0].kind == EXPR_CONST);
    REQUIRE_OK(prt_engine_serialize(e, (void **)&bytes, &size));
    sec = expr_section(bytes, size);
    REQUIRE(sec > 0);
    nodes = sec + 16 + 4; /* tag, flags, length; node count */

    /* No SIZE node for size 0: before the fix the file loaded, and the
     * runtime took node 0 for the size's node and read its upper bound at
     * up_values[node 0's b], which nothing checks on a CONST node: a read
     * far out of bounds (ASan: SEGV in run_layer). */
    {
        uint8_t *c = malloc(size);
        REQUIRE(c != NULL);
        memcpy(c, bytes, size);
        put_le(c + nodes + (size_t)size_node * NODE_FILE_BYTES, EXPR_CONST, 4);
        put_le(c + nodes + 20, 1u << 28, 4); /* node 0's b */
        fix_crc(c, size);
        CHECK_ERR(prt_engine_deserialize(reg, c, size, &back), PRT_ERR_MALFORMED,
                  "size 0 has no expression node");
        prt_engine_destroy(back);
        back = NULL;
        free(c);
    }

    /* Two SIZE nodes for size 0 (a second node could give another bound to
     * whatever uses it; the runtime checks the value against only one). */
    big = malloc(size + NODE_FILE_BYTES);
    REQUIRE(big != NULL);
    {
        size_t end = nodes + (size_t)e->exprs.nb_nodes * NODE_FILE_BYTES;
        uint64_t len = 0;
        for (int i = 7; i >= 0; i--)
            len = len << 8 | bytes[sec + 8 + (size_t)i];
        memcpy(big, bytes, end);
        memcpy(big + end, bytes + nodes + (size_t)size_node * NODE_FILE_BYTES,
               NODE_FILE_BYTES);
        memcpy(big + end + NODE_FILE_BYTES, bytes + end, size - end);
        put_le(big + sec + 8, len + NODE_FILE_BYTES, 8);
        put_le(big + nodes - 4, (uint64_t)e->exprs.nb_nodes + 1, 4);
        fix_crc(big, size + NODE_FILE_BYTES);
        CHECK_ERR(prt_engine_deserialize(reg, big, size + NODE_FILE_BYTES, &back),
                  PRT_ERR_MALFORMED, "size 0 has two expression nodes");
        prt_engine_destroy(back);
    }
    free(big);
    prt_free(bytes);
    prt_engine_destroy(e);
    prt_registry_destroy(reg);
    return 0;
}

/* ---- output allocator gets `current` ---------------------------------------- */

typedef struct rec_alloc {
    void *mem;
    uint64_t size;
    void *currents[4];
    int calls;
} rec_alloc;

static void *rec_reallocate(void *user, const char *name, void *current, uint64_t size,
                            uint64_t alignment)
{
    rec_alloc *r = user;
    (void)name;
    (void)alignment;
    if (r->calls < 4)
        r->currents[r->calls] = current;
    r->calls++;
    if (current && current == r->mem && size <= r->size)
        return current;
    free(r->mem);
    r->mem = malloc(size ? (size_t)size : 1);
    r->size = r->mem ? size : 0;
    return r->mem;
}

static int test_allocator_current(void)
{
    prt_network *net = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    prt_dims dyn = {1, {-1}}, d4 = {1, {4}}, d3 = {1, {3}};
    float x[4] = {1, 2, 3, 4};
    rec_alloc rec = {0};
    prt_output_allocator a = {sizeof a, PRT_PLUGIN_ABI_VERSION, &rec, rec_reallocate, NULL};
    int32_t tx, l, ty;
    void *first;
    REQUIRE_OK(prt_network_create(&net));
    REQUIRE_OK(prt_network_add_input(net, "X", PRT_FLOAT32, &dyn, &tx));
    REQUIRE_OK(add(net, KIND_COPY, tx, &l, &ty));
    REQUIRE_OK(prt_network_set_tensor_name(net, ty, "Y"));
    REQUIRE_OK(prt_network_mark_output(net, ty));
    CHECK_OK(build(net, &e));
    prt_network_destroy(net);
    REQUIRE(e != NULL);
    REQUIRE_OK(prt_context_create(e, &ctx));
    CHECK_OK(prt_context_set_input_shape(ctx, "X", &d4));
    CHECK_OK(prt_context_set_tensor_address(ctx, "X", x));
    CHECK_OK(prt_context_set_output_allocator(ctx, "Y", &a));
    CHECK_OK(prt_context_enqueue(ctx, NULL));
    first = rec.mem;
    CHECK_OK(prt_context_set_input_shape(ctx, "X", &d3));
    CHECK_OK(prt_context_enqueue(ctx, NULL));
    CHECK(rec.calls == 2);
    CHECK(rec.currents[0] == NULL);
    /* Before the fix `current` was always NULL, so the allocator could
     * never keep its memory. */
    CHECK(rec.currents[1] == first);
    CHECK(rec.mem == first);
    CHECK(rec.mem && ((float *)rec.mem)[2] == 3);
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    free(rec.mem);
    return 0;
}

int main(void)
{
    test_size_only_layer();
    test_two_aliases();
    test_concurrent_attach();
    test_size_nodes();
    test_allocator_current();
    return tu_finish("test_review_core");
}
