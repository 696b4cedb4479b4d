/*
 * End-to-end tests of builder, engine files and runtime with small plugins
 * defined here (registered directly, not through a library) and the standard
 * library's NonZeroPlugin:
 *  - a data-dependent dim flowing through a second layer (NonZero -> ToFloat);
 *  - build -> bytes -> engine -> run equals the first run, output allocator;
 *  - an output allocator is handed back the memory it returned last time
 *    (`current`), as plugrt.h says;
 *  - a plugin writing a size above its bound is caught; a layer whose only
 *    data-dependent output is a 0-D size tensor is checked against its real
 *    bound;
 *  - autotuning never picks a tactic that disagrees with tactic 0;
 *  - every single-byte flip and every truncation of an engine file fails
 *    cleanly; a wrong magic and a future version are named; an engine file
 *    whose size tensor has no SIZE expression node, or two, is rejected (the
 *    runtime reads that node's upper bound);
 *  - two outputs of one layer that alias the same input never share memory;
 *  - bad use: shape outside the profile, missing address, unknown plugin;
 *  - contexts on one engine run from several threads at once; contexts
 *    created concurrently never call the engine's plugin object from two
 *    threads at once (plugin.h's threading promise);
 *  - allocation failure at every point of build, load and run.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "engine/engine_impl.h"
#include "testutil.h"

/* ---- test plugins -------------------------------------------------------- */

/* Count: the number of positive elements, as a 0-D size tensor. Copy: y = x.
 * Dup2: two outputs, x + 1 and x + 2, both aliasing x. SlowAttach: a copy
 * whose attach_to_context notices two threads inside it at once. */
enum {
    KIND_TOFLOAT,
    KIND_BADSIZE,
    KIND_TACTICAL,
    KIND_FILL,
    KIND_SHAPEOF,
    KIND_COUNT,
    KIND_COPY,
    KIND_DUP2,
    KIND_ATTACH,
    KIND_BADATTACH,
    KIND_WRONGNAME,
    KIND_DROPFIELD,
    KIND_SILENTSIZE,
    KIND_SHAPEFAIL,
    NB_KINDS
};

typedef struct tplug {
    prt_plugin base;
    int32_t kind;
    int32_t tactic;
    prt_field_collection fc;
} tplug;

static const char *tp_name(const prt_plugin *p)
{
    static const char *const names[NB_KINDS] = {
        "ToFloat", "BadSize", "Tactical", "Fill", "ShapeOf", "Count", "Copy", "Dup2",
        "SlowAttach", "BadAttach",
        /* WrongName's plugin calls itself what no creator is called. */
        "NotItsName", "DropField", "SilentSize", "ShapeFail"};
    return names[((const tplug *)p)->kind];
}
static const char *tp_version(const prt_plugin *p)
{
    (void)p;
    return "1";
}
static const char *tp_ns(const prt_plugin *p)
{
    (void)p;
    return "test";
}
static uint32_t tp_devices(const prt_plugin *p)
{
    (void)p;
    return 1u << PRT_DEVICE_CPU;
}

static int32_t tp_nb_outputs(const prt_plugin *p)
{
    int32_t kind = ((const tplug *)p)->kind;
    return kind == KIND_BADSIZE || kind == KIND_SILENTSIZE || kind == KIND_DUP2 ? 2 : 1;
}

static prt_status tp_dtypes(prt_plugin *p, int32_t *out, int32_t nb_out,
                            const int32_t *in, int32_t nb_in)
{
    int32_t kind = ((tplug *)p)->kind;
    (void)nb_in;
    for (int32_t o = 0; o < nb_out; o++)
        out[o] = kind == KIND_SHAPEOF || kind == KIND_COUNT ? PRT_INT64 : PRT_FLOAT32;
    if (kind == KIND_BADSIZE || kind == KIND_SILENTSIZE)
        out[1] = PRT_INT64;
    (void)in;
    return PRT_OK;
}

static prt_status tp_shapes(prt_plugin *p, const prt_dim_exprs *in, int32_t nb_in,
                            const prt_dim_exprs *si, int32_t nb_si, prt_dim_exprs *out,
                            int32_t nb_out, prt_expr_builder *eb)
{
    (void)nb_in;
    if (((tplug *)p)->kind == KIND_SHAPEOF) {
        out[0].nb_dims = 1;
        out[0].d[0] = eb->constant(eb, in[0].nb_dims);
        return PRT_OK;
    }
    if (((tplug *)p)->kind == KIND_FILL) {
        /* Output dims are the values of shape input 0, plus one. */
        if (nb_si != 1 || si[0].nb_dims != 2)
            return PRT_ERR_SHAPE;
        out[0].nb_dims = 2;
        for (int d = 0; d < 2; d++)
            out[0].d[d] = eb->operation(eb, PRT_DIM_SUM, si[0].d[d], eb->constant(eb, 1));
        return out[0].d[0] && out[0].d[1] ? PRT_OK : PRT_ERR_PLUGIN;
    }
    if (((tplug *)p)->kind == KIND_BADSIZE || ((tplug *)p)->kind == KIND_SILENTSIZE) {
        /* out0: 1-D of K <= N elements, K a size tensor. */
        const prt_expr *n = in[0].d[0];
        out[0].nb_dims = 1;
        out[0].d[0] = eb->declare_size_tensor(eb, 1, n, n);
        out[1].nb_dims = 0;
        return out[0].d[0] ? PRT_OK : PRT_ERR_PLUGIN;
    }
    if (((tplug *)p)->kind == KIND_COUNT) {
        /* The count of positive elements: 0..N, tuned at N. */
        out[0].nb_dims = 0;
        return eb->declare_size_tensor(eb, 0, in[0].d[0], in[0].d[0]) ? PRT_OK
                                                                      : PRT_ERR_PLUGIN;
    }
    for (int32_t o = 0; o < nb_out; o++)
        out[o] = in[0];
    return PRT_OK;
}

static int32_t tp_supports(prt_plugin *p, int32_t pos, const prt_dynamic_tensor_desc *io,
                           int32_t nb_in, int32_t nb_out)
{
    const tplug *t = (const tplug *)p;
    (void)nb_out;
    if (io[pos].desc.format != PRT_FORMAT_LINEAR)
        return 0;
    if (pos < nb_in)
        return t->kind == KIND_TOFLOAT ? io[pos].desc.dtype == PRT_INT32
                                       : io[pos].desc.dtype == PRT_FLOAT32;
    if ((t->kind == KIND_BADSIZE || t->kind == KIND_SILENTSIZE) && pos == nb_in + 1)
        return io[pos].desc.dtype == PRT_INT64;
    if (t->kind == KIND_SHAPEOF || t->kind == KIND_COUNT)
        return io[pos].desc.dtype == PRT_INT64;
    return io[pos].desc.dtype == PRT_FLOAT32;
}

static int32_t tp_alias(const prt_plugin *p, int32_t o)
{
    (void)o;
    return ((const tplug *)p)->kind == KIND_DUP2 ? 0 : -1;
}

static prt_status tp_tactics(prt_plugin *p, int32_t *tactics, int32_t cap, int32_t *count)
{
    const tplug *t = (const tplug *)p;
    *count = t->kind == KIND_TACTICAL ? 2 : 0;
    for (int32_t i = 0; i < cap && i < *count; i++)
        tactics[i] = i + 1;
    return PRT_OK;
}

static prt_status tp_set_tactic(prt_plugin *p, int32_t tactic)
{
    ((tplug *)p)->tactic = tactic;
    return PRT_OK;
}

/* ShapeOf's enqueues: a layer whose outputs nothing reads is skipped. */
static int shapeof_runs;

static prt_status tp_enqueue(prt_plugin *p, const prt_tensor_desc *in_desc,
                             const prt_tensor_desc *out_desc, const void *const *in,
                             void *const *out, void *ws, int32_t device, void *stream)
{
    const tplug *t = (const tplug *)p;
    int64_t n = 1;
    (void)ws;
    (void)stream;
    (void)out_desc;
    if (device != PRT_DEVICE_CPU)
        return PRT_ERR_UNSUPPORTED;
    if (t->kind == KIND_SHAPEOF) {
        shapeof_runs++;
        for (int32_t d = 0; d < in_desc[0].dims.nb_dims; d++)
            ((int64_t *)out[0])[d] = in_desc[0].dims.d[d];
        return PRT_OK;
    }
    if (t->kind == KIND_FILL) {
        int64_t m = out_desc[0].dims.d[0] * out_desc[0].dims.d[1];
        for (int64_t i = 0; i < m; i++)
            ((float *)out[0])[i] = (float)i;
        return PRT_OK;
    }
    for (int32_t d = 0; d < in_desc[0].dims.nb_dims; d++)
        n *= in_desc[0].dims.d[d];
    if (t->kind == KIND_SHAPEFAIL) {
        /* A plugin that refuses a shape says so with its own status. */
        const prt_host_services *hs = prt_host_services_get();
        hs->set_error(hs->host, PRT_ERR_SHAPE, "ShapeFail: takes at most 3 elements");
        return PRT_ERR_SHAPE;
    }
    switch (t->kind) {
    case KIND_TOFLOAT:
        for (int64_t i = 0; i < n; i++)
            ((float *)out[0])[i] = (float)((const int32_t *)in[0])[i] * 0.5f;
        break;
    case KIND_BADSIZE:
        *(int64_t *)out[1] = n + 5; /* past the declared bound n */
        break;
    case KIND_COUNT: {
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++)
            k += ((const float *)in[0])[i] > 0;
        *(int64_t *)out[0] = k;
        break;
    }
    case KIND_DUP2:
        /* Written for in place: each element is read before either output
         * element is written. */
        for (int64_t i = 0; i < n; i++) {
            float a = ((const float *)in[0])[i];
            ((float *)out[0])[i] = a + 1;
            ((float *)out[1])[i] = a + 2;
        }
        break;
    case KIND_COPY:
    case KIND_ATTACH:
        for (int64_t i = 0; i < n; i++)
            ((float *)out[0])[i] = ((const float *)in[0])[i];
        break;
    default:
        /* Tactic 2 is "fast" and wrong: it must never be chosen. */
        for (int64_t i = 0; i < n; i++)
            ((float *)out[0])[i] =
                ((const float *)in[0])[i] * 2.0f + (t->tactic == 2 ? 1.0f : 0.0f);
        break;
    }
    return PRT_OK;
}

/* ShapeOf states its output's values: the input's dims. */
static prt_status tp_values(prt_plugin *p, const prt_dim_exprs *in_dims,
                            const prt_dim_exprs *in_values, int32_t nb_in,
                            prt_dim_exprs *out, int32_t nb_out, prt_expr_builder *eb)
{
    (void)in_values;
    (void)nb_in;
    (void)nb_out;
    (void)eb;
    if (((tplug *)p)->kind == KIND_SHAPEOF)
        out[0] = in_dims[0];
    return PRT_OK;
}

static prt_plugin *tp_clone(const prt_plugin *p)
{
    tplug *c = malloc(sizeof *c);
    if (c)
        *c = *(const tplug *)p;
    return c ? &c->base : NULL;
}

/* SlowAttach: flags two threads inside attach_to_context of one object. */
static atomic_int attach_inside, attach_overlaps;

/* BadAttach: attach_to_context hands back an object whose runtime table is
 * too short to hold destroy (static, so nothing leaks when the host rightly
 * refuses to call through it). */
static const prt_plugin_runtime bad_runtime = {
    8, PRT_PLUGIN_ABI_VERSION, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
static tplug bad_attached;

static prt_plugin *tp_attach(prt_plugin *p, prt_plugin_resources *r)
{
    (void)r;
    if (((tplug *)p)->kind == KIND_BADATTACH) {
        static prt_plugin_vtable vt;
        vt = *p->vt;
        vt.runtime = &bad_runtime;
        bad_attached = *(tplug *)p;
        bad_attached.base.vt = &vt;
        return &bad_attached.base;
    }
    if (((tplug *)p)->kind == KIND_ATTACH) {
        struct timespec ts = {0, 2000000};
        if (atomic_fetch_add(&attach_inside, 1) != 0)
            atomic_fetch_add(&attach_overlaps, 1);
        nanosleep(&ts, NULL);
        atomic_fetch_sub(&attach_inside, 1);
    }
    return tp_clone(p);
}
static const prt_field_collection *tp_fields(prt_plugin *p)
{
    return &((tplug *)p)->fc;
}
static void tp_destroy(prt_plugin *p)
{
    free(p);
}

static const prt_plugin_core tp_core = {
    sizeof tp_core, PRT_PLUGIN_ABI_VERSION, tp_name, tp_version, tp_ns, tp_devices};
static const prt_plugin_build tp_build = {sizeof tp_build,
                                          PRT_PLUGIN_ABI_VERSION,
                                          tp_nb_outputs,
                                          tp_dtypes,
                                          tp_shapes,
                                          tp_supports,
                                          NULL,
                                          NULL,
                                          tp_tactics,
                                          tp_alias,
                                          tp_values,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL};
static const prt_plugin_runtime tp_runtime = {sizeof tp_runtime, PRT_PLUGIN_ABI_VERSION,
                                              tp_set_tactic,     NULL,
                                              tp_enqueue,        tp_attach,
                                              tp_fields,         tp_clone,
                                              tp_destroy};
static const prt_plugin_vtable tp_vt = {sizeof tp_vt, PRT_PLUGIN_ABI_VERSION, &tp_core,
                                        &tp_build, &tp_runtime};

static prt_status tp_create(const prt_plugin_creator *c, const char *layer,
                            const prt_field_collection *f, int32_t phase,
                            prt_plugin **out)
{
    tplug *t;
    (void)layer;
    /* DropField needs a field its plugin never serializes. */
    if ((int32_t)(intptr_t)c->user == KIND_DROPFIELD && phase == PRT_PHASE_RUNTIME &&
        (!f || f->nb_fields == 0)) {
        const prt_host_services *hs = prt_host_services_get();
        hs->set_error(hs->host, PRT_ERR_INVALID_ARGUMENT,
                      "DropField: field 'needed' is "
                      "required");
        return PRT_ERR_INVALID_ARGUMENT;
    }
    t = calloc(1, sizeof *t);
    if (!t)
        return PRT_ERR_OUT_OF_MEMORY;
    t->base.vt = &tp_vt;
    t->kind = (int32_t)(intptr_t)c->user;
    *out = &t->base;
    return PRT_OK;
}

#define TP_CREATOR(name, kind)                                                           \
    {                                                                                    \
        sizeof(prt_plugin_creator), PRT_PLUGIN_ABI_VERSION, name, "1", "test", 0, NULL,  \
            tp_create, (void *)(intptr_t)(kind)                                          \
    }
static prt_plugin_creator tp_creators[NB_KINDS] = {
    TP_CREATOR("ToFloat", KIND_TOFLOAT), TP_CREATOR("BadSize", KIND_BADSIZE),
    TP_CREATOR("Tactical", KIND_TACTICAL), TP_CREATOR("Fill", KIND_FILL),
    TP_CREATOR("ShapeOf", KIND_SHAPEOF), TP_CREATOR("Count", KIND_COUNT),
    TP_CREATOR("Copy", KIND_COPY), TP_CREATOR("Dup2", KIND_DUP2),
    TP_CREATOR("SlowAttach", KIND_ATTACH), TP_CREATOR("BadAttach", KIND_BADATTACH),
    TP_CREATOR("WrongName", KIND_WRONGNAME), TP_CREATOR("DropField", KIND_DROPFIELD),
    /* SilentSize declares a size tensor and never writes it. */
    TP_CREATOR("SilentSize", KIND_SILENTSIZE),
    /* ShapeFail's enqueue fails with PRT_ERR_SHAPE. */
    TP_CREATOR("ShapeFail", KIND_SHAPEFAIL)};

static prt_registry *make_registry(void)
{
    prt_registry *reg = tu_registry_with_plugins();
    for (int i = 0; reg && i < NB_KINDS; i++)
        if (prt_registry_add_creator(reg, &tp_creators[i]) != PRT_OK) {
            tu_fail(__FILE__, __LINE__, "add test creator");
            prt_registry_destroy(reg);
            return NULL;
        }
    return reg;
}

/* ---- NonZero -> ToFloat, dynamic R x C ------------------------------------ */

static prt_status build_chain(prt_registry *reg, prt_engine **out)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_plugin *nz = tu_make_plugin(reg, "", "NonZeroPlugin", "1", NULL, 0);
    prt_plugin *tf = tu_make_plugin(reg, "test", "ToFloat", "1", NULL, 0);
    prt_dims dyn = {2, {-1, -1}}, mn = {2, {1, 1}}, op = {2, {8, 8}}, mx = {2, {16, 16}};
    int32_t x, l0, l1, idx, cnt, f, prof;
    prt_status st;
    if (!nz || !tf)
        return PRT_ERR_INTERNAL;
    st = prt_network_create(&net);
    if (!st)
        st = prt_network_add_input(net, "X", PRT_FLOAT32, &dyn, &x);
    if (!st)
        st = prt_network_add_plugin(net, &x, 1, NULL, 0, nz, &l0);
    if (!st) {
        nz = NULL;
        st = prt_network_get_layer_output(net, l0, 0, &idx);
    }
    if (!st)
        st = prt_network_get_layer_output(net, l0, 1, &cnt);
    if (!st)
        st = prt_network_add_plugin(net, &idx, 1, NULL, 0, tf, &l1);
    if (!st) {
        tf = NULL;
        st = prt_network_get_layer_output(net, l1, 0, &f);
    }
    if (!st)
        st = prt_network_set_tensor_name(net, f, "F");
    if (!st)
        st = prt_network_set_tensor_name(net, cnt, "K");
    if (!st)
        st = prt_network_mark_output(net, f);
    if (!st)
        st = prt_network_mark_output(net, cnt);
    /* Two layers, in the order they were added; none without a network. */
    if (!st && (prt_network_layer_count(net) != 2 || prt_network_layer_count(NULL) != 0))
        st = PRT_ERR_INTERNAL;
    if (!st)
        st = prt_builder_config_create(&cfg);
    if (!st)
        st = prt_builder_config_add_profile(cfg, &prof);
    if (!st)
        st = prt_builder_config_set_profile_dims(cfg, prof, "X", &mn, &op, &mx);
    if (!st)
        st = prt_engine_build(net, cfg, reg, out);
    if (nz)
        nz->vt->runtime->destroy(nz);
    if (tf)
        tf->vt->runtime->destroy(tf);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return st;
}

/* Runs the chain on an r x c input in ctx (a new one when NULL); checks
 * against a reference. F's memory past its true rows holds a poison no
 * result is. */
static int run_chain_in(const prt_engine *e, prt_context *ctx, int64_t r, int64_t c,
                        int use_allocator, uint64_t seed)
{
    int own = ctx == NULL;
    float *x = malloc(sizeof(float) * (size_t)(r * c));
    float *f = malloc(sizeof(float) * (size_t)(r * c * 2 + 1));
    int64_t k = -1, want = 0;
    prt_dims d = {2, {r, c}}, fd;
    tu_capture cap;
    prt_output_allocator alloc = tu_capture_allocator(&cap);
    tu_rng rng;
    int rc = 0;
    REQUIRE(x && f);
    tu_rng_seed(&rng, seed);
    for (int64_t i = 0; i < r * c; i++)
        x[i] = tu_rng_uniform(&rng) < 0.4 ? 0.0f : (float)tu_rng_range(&rng, 1, 9);
    for (int64_t i = 0; i < r * c * 2 + 1; i++)
        f[i] = -1.0f;
    if (own)
        REQUIRE_OK(prt_context_create(e, &ctx));
    CHECK_OK(prt_context_set_input_shape(ctx, "X", &d));
    /* Before a run, F's data-dependent dim stands at its upper bound. */
    CHECK_OK(prt_context_get_tensor_shape(ctx, "F", &fd));
    CHECK(fd.nb_dims == 2 && fd.d[0] == r * c && fd.d[1] == 2);
    CHECK_OK(prt_context_set_tensor_address(ctx, "X", x));
    CHECK_OK(prt_context_set_tensor_address(ctx, "K", &k));
    if (use_allocator)
        CHECK_OK(prt_context_set_output_allocator(ctx, "F", &alloc));
    else
        CHECK_OK(prt_context_set_tensor_address(ctx, "F", f));
    CHECK_OK(prt_context_enqueue(ctx, NULL));
    CHECK_OK(prt_context_get_tensor_shape(ctx, "F", &fd));
    for (int64_t i = 0; i < r * c; i++)
        want += x[i] != 0.0f;
    CHECK(k == want);
    CHECK(fd.nb_dims == 2 && fd.d[0] == want && fd.d[1] == 2);
    if (use_allocator) {
        CHECK(cap.notified == 1 && cap.dims.d[0] == want);
        CHECK(cap.size == (uint64_t)(want * 2) * sizeof(float));
        if (cap.mem)
            memcpy(f, cap.mem, (size_t)cap.size);
    }
    for (int64_t i = 0, j = 0; i < r * c && !rc; i++) {
        if (x[i] == 0.0f)
            continue;
        if (f[2 * j] != (float)(i / c) * 0.5f || f[2 * j + 1] != (float)(i % c) * 0.5f) {
            tu_fail(__FILE__, __LINE__, "chain output differs from the reference");
            rc = 1;
        }
        j++;
    }
    /* Nothing past the true rows: ToFloat was told want rows, not more. */
    if (!use_allocator && f[2 * want] != -1.0f) {
        tu_fail(__FILE__, __LINE__, "chain wrote past F's true rows");
        rc = 1;
    }
    free(cap.mem);
    free(x);
    free(f);
    if (own)
        prt_context_destroy(ctx);
    return rc;
}

static int run_chain(const prt_engine *e, int64_t r, int64_t c, int use_allocator,
                     uint64_t seed)
{
    return run_chain_in(e, NULL, r, c, use_allocator, seed);
}

/* One context, run after run: a run with the shapes and sizes of the last
 * reuses its layers' descriptors (context_impl.h, descs_current), so each
 * change of input shape or of a size (the count of nonzeros) must reach
 * ToFloat, whose dims depend on that size; back and forth, each run against
 * the reference. */
static int test_steady_runs(prt_registry *reg)
{
    static const struct {
        int64_t r, c;
        uint64_t seed;
    } runs[] = {{5, 7, 2}, {5, 7, 2}, {5, 7, 8},   {5, 7, 8},   {5, 7, 2},
                {9, 3, 4}, {5, 7, 2}, {16, 16, 3}, {16, 16, 3}, {1, 1, 1}};
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    REQUIRE_OK(build_chain(reg, &e));
    REQUIRE_OK(prt_context_create(e, &ctx));
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++)
        run_chain_in(e, ctx, runs[i].r, runs[i].c, 0, runs[i].seed);
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    return 0;
}

static int test_chain(prt_registry *reg)
{
    prt_engine *e = NULL, *e2 = NULL;
    void *bytes = NULL, *bytes2 = NULL;
    size_t size = 0, size2 = 0;
    prt_io_info io = {.struct_size = sizeof(prt_io_info)};
    REQUIRE_OK(build_chain(reg, &e));
    REQUIRE_OK(prt_engine_serialize(e, &bytes, &size));
    REQUIRE_OK(prt_engine_deserialize(reg, bytes, size, &e2));
    /* Serializing the loaded engine gives the same bytes. */
    REQUIRE_OK(prt_engine_serialize(e2, &bytes2, &size2));
    CHECK(size == size2 && memcmp(bytes, bytes2, size) == 0);
    CHECK(prt_engine_io_count(e2) == 3);
    CHECK_OK(prt_engine_get_io(e2, 1, &io));
    CHECK(strcmp(io.name, "F") == 0 && !io.is_input && io.dtype == PRT_FLOAT32);
    CHECK(io.dims.nb_dims == 2 && io.dims.d[0] == -1 && io.dims.d[1] == 2);
    CHECK(io.data_dependent_mask == 1u);
    CHECK_OK(prt_engine_get_io(e2, 2, &io));
    CHECK(io.is_size_tensor && io.dims.nb_dims == 0 && io.dtype == PRT_INT64);
    for (int rep = 0; rep < 2; rep++) {
        const prt_engine *which = rep ? e2 : e;
        run_chain(which, 1, 1, 0, 1);
        run_chain(which, 5, 7, 0, 2);
        run_chain(which, 16, 16, 0, 3);
        run_chain(which, 9, 3, 1, 4);
    }
    prt_free(bytes);
    prt_free(bytes2);
    prt_engine_destroy(e2);
    prt_engine_destroy(e);
    return 0;
}

/* ---- single-layer networks of the test plugins ---------------------------- */

/* X (n floats) -> test plugin `name` -> Y0 (and Y1 for BadSize), built and
 * loaded back. */
static prt_status build_one(prt_registry *reg, const char *name, int32_t autotune,
                            int64_t n, tu_engine *out)
{
    static const char *const outs[2] = {"Y0", "Y1"};
    prt_dims d = {1, {n}};
    tu_input_spec x = {"X", PRT_FLOAT32, &d, NULL, NULL, NULL};
    prt_plugin *p = tu_make_plugin(reg, "test", name, "1", NULL, 0);
    return tu_build_roundtrip(reg, p, &x, 1, outs, p ? tp_nb_outputs(p) : 0, autotune,
                              out);
}

/* A size tensor the plugin never writes is not read from leftover memory:
 * the run says which layer and output, every time. */
static int test_silent_size(prt_registry *reg)
{
    tu_engine e;
    float x[4] = {1, 2, 3, 4}, y[4];
    int64_t k = 2; /* a plausible leftover the runtime must not believe */
    REQUIRE_OK(build_one(reg, "SilentSize", 0, 4, &e));
    CHECK_OK(prt_context_set_tensor_address(e.ctx, "X", x));
    CHECK_OK(prt_context_set_tensor_address(e.ctx, "Y0", y));
    CHECK_OK(prt_context_set_tensor_address(e.ctx, "Y1", &k));
    for (int rep = 0; rep < 2; rep++)
        CHECK_ERR(prt_context_enqueue(e.ctx, NULL), PRT_ERR_PLUGIN,
                  "did not write its size tensor 'Y1' (output 1)");
    tu_engine_destroy(&e);
    return 0;
}

/* A plugin's own status reaches the caller, with the layer and the plugin
 * (its namespace too) named: PRT_ERR_SHAPE stays PRT_ERR_SHAPE. */
static int test_plugin_status(prt_registry *reg)
{
    tu_engine e;
    float x[4] = {1, 2, 3, 4}, y[4];
    REQUIRE_OK(build_one(reg, "ShapeFail", 0, 4, &e));
    CHECK_OK(prt_context_set_tensor_address(e.ctx, "X", x));
    CHECK_OK(prt_context_set_tensor_address(e.ctx, "Y0", y));
    CHECK_ERR(prt_context_enqueue(e.ctx, NULL), PRT_ERR_SHAPE,
              "layer 'ShapeFail_0' (plugin test::ShapeFail): enqueue failed: ShapeFail: "
              "takes at most 3 elements");
    tu_engine_destroy(&e);
    return 0;
}

static int test_bad_size(prt_registry *reg)
{
    tu_engine e;
    prt_io_info io = {.struct_size = sizeof(prt_io_info)};
    float x[4] = {1, 2, 3, 4}, y[4];
    int64_t k;
    REQUIRE_OK(build_one(reg, "BadSize", 0, 4, &e));
    /* Y1 is still a size tensor once loaded: what lets the run catch it. */
    CHECK_OK(prt_engine_get_io(e.engine, 2, &io));
    CHECK(io.is_size_tensor && strcmp(io.name, "Y1") == 0);
    CHECK_OK(prt_context_set_tensor_address(e.ctx, "X", x));
    CHECK_OK(prt_context_set_tensor_address(e.ctx, "Y0", y));
    CHECK_OK(prt_context_set_tensor_address(e.ctx, "Y1", &k));
    CHECK_ERR(prt_context_enqueue(e.ctx, NULL), PRT_ERR_PLUGIN,
              "wrote 9 to size tensor 'Y1'");
    tu_engine_destroy(&e);
    return 0;
}

static char logged[4096];

static void capture_log(void *user, int32_t severity, const char *msg)
{
    (void)user;
    if (severity <= PRT_SEV_WARNING && strlen(logged) + strlen(msg) + 2 < sizeof logged) {
        strcat(logged, msg);
        strcat(logged, "\n");
    }
}

static int test_tactics(prt_registry *reg)
{
    for (int autotune = 0; autotune < 2; autotune++) {
        tu_engine e;
        float x[64], y[64];
        logged[0] = '\0';
        prt_set_logger(capture_log, NULL, PRT_SEV_WARNING);
        REQUIRE_OK(build_one(reg, "Tactical", autotune, 64, &e));
        prt_set_logger(NULL, NULL, 0);
        /* The logger hears why tactic 2 lost; without autotuning, nothing. */
        CHECK((strstr(logged, "tactic 2 disagrees with the reference") != NULL) ==
              autotune);
        /* Tactic 2 disagrees with the reference (tactic 1, the first listed)
         * and can never win; without autotuning the first listed is used,
         * never 0, which the plugin does not list. */
        CHECK(e.built->layers[0].tactic == 1);
        /* The engine file keeps the choice; the run below uses the loaded one. */
        CHECK(e.engine->layers[0].tactic == e.built->layers[0].tactic);
        for (int i = 0; i < 64; i++)
            x[i] = (float)i - 20.0f;
        CHECK_OK(prt_context_set_tensor_address(e.ctx, "X", x));
        CHECK_OK(prt_context_set_tensor_address(e.ctx, "Y0", y));
        CHECK_OK(prt_context_enqueue(e.ctx, NULL));
        for (int i = 0; i < 64; i++)
            CHECK(y[i] == x[i] * 2.0f);
        tu_engine_destroy(&e);
    }
    return 0;
}

/* ---- layers of the test plugins, built without a registry ---------------- */

/* Adds a one-input layer of `kind` over `in`; *out0 is its output 0. */
static prt_status add(prt_network *net, int32_t kind, int32_t in, int32_t *layer,
                      int32_t *out0)
{
    prt_plugin *p = NULL;
    prt_field_collection fc = {0, NULL};
    prt_status st = tp_create(&tp_creators[kind], "x", &fc, PRT_PHASE_BUILD, &p);
    if (st)
        return st;
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

/* X: [-1] -> `kind` -> output `name`, built with build(). Non-zero (after a
 * recorded failure) if that fails. */
static int build_kind(int32_t kind, const char *name, prt_engine **e)
{
    prt_network *net = NULL;
    prt_dims dyn = {1, {-1}};
    int32_t tx, l, ty;
    REQUIRE_OK(prt_network_create(&net));
    REQUIRE_OK(prt_network_add_input(net, "X", PRT_FLOAT32, &dyn, &tx));
    REQUIRE_OK(add(net, kind, tx, &l, &ty));
    REQUIRE_OK(prt_network_set_tensor_name(net, ty, name));
    REQUIRE_OK(prt_network_mark_output(net, ty));
    CHECK_OK(build(net, e));
    prt_network_destroy(net);
    REQUIRE(*e != NULL);
    return 0;
}

/* A layer whose only data-dependent output is a 0-D size tensor (no other
 * output has a data-dependent dim) is checked against its real bound. */
static int test_size_only_layer(void)
{
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    prt_dims d5 = {1, {5}};
    float x[5] = {1, -1, 2, 0, 3};
    int64_t k = -1;
    if (build_kind(KIND_COUNT, "K", &e))
        return 1;
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

/* An output allocator is handed back the memory it returned last time. */
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
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    prt_dims d4 = {1, {4}}, d3 = {1, {3}};
    float x[4] = {1, 2, 3, 4};
    rec_alloc rec = {0};
    prt_output_allocator a = {sizeof a, PRT_PLUGIN_ABI_VERSION, &rec, rec_reallocate,
                              NULL};
    void *first;
    if (build_kind(KIND_COPY, "Y", &e))
        return 1;
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

/* ---- engine bytes ---------------------------------------------------------- */

static int test_corruption(prt_registry *reg)
{
    prt_engine *e = NULL, *bad = NULL;
    uint8_t *bytes = NULL, *copy;
    size_t size = 0;
    int ok_flips = 0;
    REQUIRE_OK(build_chain(reg, &e));
    REQUIRE_OK(prt_engine_serialize(e, (void **)&bytes, &size));
    copy = malloc(size);
    REQUIRE(copy);
    for (size_t i = 0; i < size; i++) {
        prt_status st;
        memcpy(copy, bytes, size);
        copy[i] ^= (uint8_t)(1u << (i % 8));
        st = prt_engine_deserialize(reg, copy, size, &bad);
        if (st == PRT_OK) {
            prt_engine_destroy(bad);
            ok_flips++;
        } else if (!prt_last_error()[0]) {
            tu_fail(__FILE__, __LINE__, "a flipped byte gave an empty message");
        }
    }
    CHECK(ok_flips == 0);
    /* Past the checksum: flip each byte and fix the CRC, so parsing,
     * validation and the plugins' own field checks must catch it. Each load
     * either fails cleanly or gives an engine a context can be made for. */
    {
        int loaded = 0;
        for (size_t i = 0; i + 4 < size; i++) {
            uint32_t crc;
            prt_context *ctx = NULL;
            memcpy(copy, bytes, size);
            copy[i] ^= (uint8_t)(1u << (i % 8));
            crc = base_crc32(copy, size - 4);
            for (int k = 0; k < 4; k++)
                copy[size - 4 + (size_t)k] = (uint8_t)(crc >> (8 * k));
            if (prt_engine_deserialize(reg, copy, size, &bad) != PRT_OK) {
                CHECK(prt_last_error()[0] != '\0');
                continue;
            }
            loaded++;
            if (prt_context_create(bad, &ctx) == PRT_OK)
                prt_context_destroy(ctx);
            prt_engine_destroy(bad);
        }
        printf("engine bytes flipped behind the checksum: %d of %zu still load\n", loaded,
               size - 4);
    }
    for (size_t n = 0; n < size; n++) {
        prt_status st = prt_engine_deserialize(reg, bytes, n, &bad);
        CHECK(st == PRT_ERR_MALFORMED || st == PRT_ERR_VERSION);
        if (st == PRT_OK)
            prt_engine_destroy(bad);
    }
    memcpy(copy, bytes, size);
    memcpy(copy, "NOTANENG", 8);
    CHECK_ERR(prt_engine_deserialize(reg, copy, size, &bad), PRT_ERR_MALFORMED, "magic");
    memcpy(copy, bytes, size);
    copy[8] = (uint8_t)(copy[8] + 1); /* format version, little-endian u32 */
    CHECK_ERR(prt_engine_deserialize(reg, copy, size, &bad), PRT_ERR_VERSION, "version");
    free(copy);
    prt_free(bytes);
    prt_engine_destroy(e);
    return 0;
}

/* An engine file needs exactly one SIZE expression node per size tensor. */
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
    /* Its own registry, holding only the kinds built without one. */
    for (int i = KIND_COUNT; i < NB_KINDS; i++)
        REQUIRE_OK(prt_registry_add_creator(reg, &tp_creators[i]));
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

/* ---- bad use ---------------------------------------------------------------- */

static int test_bad_use(prt_registry *reg)
{
    prt_engine *e = NULL, *e2 = NULL;
    prt_context *ctx = NULL;
    prt_registry *empty = NULL;
    void *bytes = NULL;
    size_t size;
    prt_dims big = {2, {17, 3}}, rank1 = {1, {3}}, ok = {2, {2, 2}};
    float x[4] = {0, 1, 0, 1};
    float f[8];
    int64_t k;
    REQUIRE_OK(build_chain(reg, &e));
    REQUIRE_OK(prt_context_create(e, &ctx));
    CHECK_ERR(prt_context_set_input_shape(ctx, "X", &big), PRT_ERR_SHAPE,
              "input 'X': shape 17x3 is outside profile 0 (min 1x1, max 16x16)");
    CHECK_ERR(prt_context_set_input_shape(ctx, "X", &rank1), PRT_ERR_SHAPE, "rank");
    CHECK_ERR(prt_context_set_input_shape(ctx, "nope", &ok), PRT_ERR_NOT_FOUND, "'nope'");
    CHECK_ERR(prt_context_enqueue(ctx, NULL), PRT_ERR_STATE, "input 'X'");
    CHECK_OK(prt_context_set_input_shape(ctx, "X", &ok));
    CHECK_ERR(prt_context_enqueue(ctx, NULL), PRT_ERR_STATE, "input 'X' has no address");
    CHECK_OK(prt_context_set_tensor_address(ctx, "X", x));
    CHECK_OK(prt_context_set_tensor_address(ctx, "K", &k));
    CHECK_ERR(prt_context_enqueue(ctx, NULL), PRT_ERR_STATE, "output 'F' has no address");
    CHECK_OK(prt_context_set_tensor_address(ctx, "F", f));
    CHECK_OK(prt_context_enqueue(ctx, NULL));
    CHECK(k == 2);
    prt_context_destroy(ctx);

    /* A registry without the plugins: the error names the key. */
    REQUIRE_OK(prt_engine_serialize(e, &bytes, &size));
    REQUIRE_OK(prt_registry_create(&empty));
    CHECK_ERR(prt_engine_deserialize(empty, bytes, size, &e2), PRT_ERR_NOT_FOUND,
              "NonZeroPlugin");
    CHECK_ERR(prt_engine_deserialize(empty, bytes, size, &e2), PRT_ERR_NOT_FOUND,
              "libplugrt_plugins");
    prt_registry_destroy(empty);
    prt_free(bytes);
    prt_engine_destroy(e);

    /* Builder errors. */
    {
        prt_network *net = NULL;
        prt_builder_config *cfg = NULL;
        prt_dims dyn = {2, {-1, 4}};
        int32_t t;
        REQUIRE_OK(prt_network_create(&net));
        REQUIRE_OK(prt_builder_config_create(&cfg));
        CHECK_ERR(prt_engine_build(net, cfg, reg, &e2), PRT_ERR_INVALID_ARGUMENT,
                  "no outputs");
        CHECK_OK(prt_network_add_input(net, "X", PRT_FLOAT32, &dyn, &t));
        CHECK_ERR(prt_network_add_input(net, "X", PRT_FLOAT32, &dyn, &t),
                  PRT_ERR_ALREADY_EXISTS, "'X'");
        {
            prt_plugin *p = tu_make_plugin(reg, "test", "Tactical", "1", NULL, 0);
            int32_t l, y;
            REQUIRE(p);
            REQUIRE_OK(prt_network_add_plugin(net, &t, 1, NULL, 0, p, &l));
            /* The network owns it now: a second add would free it twice. */
            CHECK_ERR(prt_network_add_plugin(net, &t, 1, NULL, 0, p, &l),
                      PRT_ERR_INVALID_ARGUMENT, "already layer");
            REQUIRE_OK(prt_network_get_layer_output(net, l, 0, &y));
            REQUIRE_OK(prt_network_mark_output(net, y));
        }
        CHECK_ERR(prt_engine_build(net, cfg, reg, &e2), PRT_ERR_SHAPE,
                  "input 'X' has dynamic dims -1x4");
        prt_builder_config_destroy(cfg);
        prt_network_destroy(net);
    }
    return 0;
}

/* ---- constants -------------------------------------------------------------- */

/* AddInPlace(constant, input): the output aliases the constant, so the
 * runtime must copy it first and never write into the engine's weights. */
static int test_constants(prt_registry *reg)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL, *e2 = NULL;
    prt_context *ctx = NULL;
    prt_plugin *p = tu_make_plugin(reg, "example", "AddInPlace", "1", NULL, 0);
    prt_dims d = {1, {5}};
    const float w[5] = {1, 2, 3, 4, 5};
    float a[5] = {10, 20, 30, 40, 50}, y[5];
    int32_t in[2], l, t;
    void *bytes = NULL;
    size_t size;
    prt_tensor_info ti = {.struct_size = sizeof(prt_tensor_info)};
    REQUIRE(p);
    REQUIRE_OK(prt_network_create(&net));
    CHECK_OK(prt_network_add_constant(net, "W", PRT_FLOAT32, &d, w, &in[0]));
    CHECK_OK(prt_network_add_input(net, "A", PRT_FLOAT32, &d, &in[1]));
    CHECK_ERR(prt_network_mark_output(net, in[0]), PRT_ERR_UNSUPPORTED, "constant");
    REQUIRE_OK(prt_network_add_plugin(net, in, 2, NULL, 0, p, &l));
    CHECK_OK(prt_network_get_layer_output(net, l, 0, &t));
    CHECK_OK(prt_network_set_tensor_name(net, t, "Y"));
    CHECK_OK(prt_network_mark_output(net, t));
    CHECK_OK(prt_builder_config_create(&cfg));
    REQUIRE_OK(prt_engine_build(net, cfg, reg, &e));
    REQUIRE_OK(prt_engine_serialize(e, &bytes, &size));
    REQUIRE_OK(prt_engine_deserialize(reg, bytes, size, &e2));
    CHECK(prt_engine_tensor_count(e2) == 3);
    CHECK_OK(prt_engine_get_tensor(e2, in[0], &ti));
    CHECK(ti.kind == PRT_TENSOR_CONSTANT && strcmp(ti.name, "W") == 0 &&
          ti.max_bytes == 20);
    REQUIRE_OK(prt_context_create(e2, &ctx));
    CHECK_OK(prt_context_set_tensor_address(ctx, "A", a));
    CHECK_OK(prt_context_set_tensor_address(ctx, "Y", y));
    for (int rep = 0; rep < 2; rep++) {
        CHECK_OK(prt_context_enqueue(ctx, NULL));
        for (int i = 0; i < 5; i++)
            CHECK(y[i] == w[i] + a[i]);
    }
    prt_context_destroy(ctx);
    prt_free(bytes);
    prt_engine_destroy(e2);
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return 0;
}

/* ---- two outputs aliasing one input ------------------------------------------ */

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

/* ---- shape inputs --------------------------------------------------------------- */

/* Fill takes no data, one shape input S (int64[2]); its output is
 * (S[0] + 1) x (S[1] + 1). */
static prt_status build_fill(prt_registry *reg, int with_values, int32_t s_dtype,
                             prt_engine **out)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_plugin *p = tu_make_plugin(reg, "test", "Fill", "1", NULL, 0);
    prt_dims sd = {1, {2}};
    const int64_t mn[2] = {0, 1}, op[2] = {2, 3}, mx[2] = {4, 5};
    int32_t s, l, y, prof;
    prt_status st;
    if (!p)
        return PRT_ERR_INTERNAL;
    st = prt_network_create(&net);
    if (!st)
        st = prt_network_add_input(net, "S", s_dtype, &sd, &s);
    if (!st)
        st = prt_network_add_plugin(net, NULL, 0, &s, 1, p, &l);
    if (st)
        p->vt->runtime->destroy(p);
    if (!st)
        st = prt_network_get_layer_output(net, l, 0, &y);
    if (!st)
        st = prt_network_set_tensor_name(net, y, "Y");
    if (!st)
        st = prt_network_mark_output(net, y);
    if (!st)
        st = prt_builder_config_create(&cfg);
    if (!st)
        st = prt_builder_config_add_profile(cfg, &prof);
    if (!st && with_values)
        st = prt_builder_config_set_profile_shape_values(cfg, prof, "S", mn, op, mx, 2);
    if (!st)
        st = prt_engine_build(net, cfg, reg, out);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return st;
}

/* A shape input of dynamic length: each profile must pin it, to the same
 * count in every profile. */
static int check_dynamic_length_values(prt_registry *reg)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL;
    prt_plugin *p = tu_make_plugin(reg, "test", "Fill", "1", NULL, 0);
    prt_dims sd = {1, {-1}}, two = {1, {2}}, three = {1, {3}};
    const int64_t v2[2] = {2, 3}, v3[3] = {2, 3, 4};
    int32_t s, l, y, p0, p1;
    REQUIRE(p);
    REQUIRE_OK(prt_network_create(&net));
    CHECK_OK(prt_network_add_input(net, "S", PRT_INT64, &sd, &s));
    CHECK_OK(prt_network_add_plugin(net, NULL, 0, &s, 1, p, &l));
    CHECK_OK(prt_network_get_layer_output(net, l, 0, &y));
    CHECK_OK(prt_network_mark_output(net, y));
    CHECK_OK(prt_builder_config_create(&cfg));
    CHECK_OK(prt_builder_config_add_profile(cfg, &p0));
    CHECK_OK(prt_builder_config_set_profile_dims(cfg, p0, "S", &two, &two, &two));
    CHECK_OK(prt_builder_config_set_profile_shape_values(cfg, p0, "S", v2, v2, v2, 2));
    CHECK_OK(prt_engine_build(net, cfg, reg, &e)); /* pinned: two values */
    prt_engine_destroy(e);
    e = NULL;
    CHECK_OK(prt_builder_config_add_profile(cfg, &p1));
    CHECK_OK(prt_builder_config_set_profile_dims(cfg, p1, "S", &three, &three, &three));
    CHECK_OK(prt_builder_config_set_profile_shape_values(cfg, p1, "S", v3, v3, v3, 3));
    CHECK_ERR(prt_engine_build(net, cfg, reg, &e), PRT_ERR_SHAPE,
              "shape input 'S' has 3 values in profile 1 and 2 in profile 0");
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return 0;
}

static int test_shape_inputs(prt_registry *reg)
{
    prt_engine *e = NULL, *e2 = NULL;
    prt_context *ctx = NULL;
    void *bytes = NULL;
    size_t size;
    int64_t s[2] = {3, 4}, bad[2] = {5, 1};
    float y[5 * 6];
    prt_dims d;
    prt_io_info io = {.struct_size = sizeof(prt_io_info)};
    CHECK_ERR(build_fill(reg, 0, PRT_INT64, &e), PRT_ERR_SHAPE,
              "shape input 'S' (2 values) needs the bounds of its values in profile 0");
    CHECK_ERR(build_fill(reg, 1, PRT_FLOAT16, &e), PRT_ERR_SHAPE,
              "1-D int32/int64/float32");
    /* A float32 one only where the layer reads floats (built-in Resize). */
    CHECK_ERR(build_fill(reg, 1, PRT_FLOAT32, &e), PRT_ERR_UNSUPPORTED,
              "layer 'Fill_0' (plugin test::Fill): shape input 0 ('S') is float32");
    CHECK(check_dynamic_length_values(reg) == 0);
    REQUIRE_OK(build_fill(reg, 1, PRT_INT64, &e));
    REQUIRE_OK(prt_engine_serialize(e, &bytes, &size));
    REQUIRE_OK(prt_engine_deserialize(reg, bytes, size, &e2));
    CHECK_OK(prt_engine_get_io(e2, 1, &io));
    CHECK(io.dims.nb_dims == 2 && io.dims.d[0] == -1 && io.dims.d[1] == -1);
    REQUIRE_OK(prt_context_create(e2, &ctx));
    CHECK_ERR(prt_context_get_tensor_shape(ctx, "Y", &d), PRT_ERR_STATE,
              "shape input 'S' has no address");
    CHECK_OK(prt_context_set_tensor_address(ctx, "S", s));
    CHECK_OK(prt_context_get_tensor_shape(ctx, "Y", &d));
    CHECK(d.nb_dims == 2 && d.d[0] == 4 && d.d[1] == 5);
    CHECK_OK(prt_context_set_tensor_address(ctx, "Y", y));
    CHECK_OK(prt_context_enqueue(ctx, NULL));
    for (int i = 0; i < 20; i++)
        CHECK(y[i] == (float)i);
    /* New values, new shape: no set_input_shape needed. */
    s[0] = 4;
    s[1] = 5;
    CHECK_OK(prt_context_enqueue(ctx, NULL));
    CHECK_OK(prt_context_get_tensor_shape(ctx, "Y", &d));
    CHECK(d.d[0] == 5 && d.d[1] == 6 && y[29] == 29.0f);
    /* The same values again, then the first ones twice: Fill's shape
     * follows the values alone, so each run with new ones must tell it
     * (a run with the last run's keeps its descriptors, context_impl.h);
     * it writes exactly its elements. */
    for (int rep = 0; rep < 4; rep++) {
        int64_t m;
        s[0] = rep == 0 ? 4 : 3;
        s[1] = rep == 0 ? 5 : 4;
        m = (s[0] + 1) * (s[1] + 1);
        for (int i = 0; i < 30; i++)
            y[i] = -1.0f;
        CHECK_OK(prt_context_enqueue(ctx, NULL));
        CHECK_OK(prt_context_get_tensor_shape(ctx, "Y", &d));
        CHECK(d.d[0] == s[0] + 1 && d.d[1] == s[1] + 1);
        for (int i = 0; i < 30; i++)
            CHECK(y[i] == (i < m ? (float)i : -1.0f));
    }
    /* Values written after a run and queried before the next: their shape,
     * not the last run's. */
    s[0] = 1;
    s[1] = 2;
    CHECK_OK(prt_context_get_tensor_shape(ctx, "Y", &d));
    CHECK(d.nb_dims == 2 && d.d[0] == 2 && d.d[1] == 3);
    CHECK_OK(prt_context_set_tensor_address(ctx, "S", bad));
    CHECK_ERR(prt_context_enqueue(ctx, NULL), PRT_ERR_SHAPE,
              "shape input 'S': value 0 is 5, outside profile 0's 0..4");
    prt_context_destroy(ctx);
    prt_free(bytes);
    prt_engine_destroy(e2);
    prt_engine_destroy(e);
    return 0;
}

/* Skipped layers: ShapeOf's output feeds only Fill's shape input, so runs
 * skip it (its values are in Y's shape already), unless the output is an
 * engine output too (`mark`), when it runs and holds X's dims. */
static int check_skipped(prt_registry *reg, int mark)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL, *e2 = NULL;
    prt_context *ctx = NULL;
    prt_plugin *so = tu_make_plugin(reg, "test", "ShapeOf", "1", NULL, 0);
    prt_plugin *fill = tu_make_plugin(reg, "test", "Fill", "1", NULL, 0);
    prt_layer_info li0 = {.struct_size = sizeof li0}, li1 = {.struct_size = sizeof li1};
    prt_dims xd = {2, {3, 6}};
    float x[18], y[4 * 7];
    int64_t s[2] = {-1, -1};
    void *bytes = NULL;
    size_t size;
    int32_t xt, l0, l1, st, yt;
    REQUIRE(so && fill);
    REQUIRE_OK(prt_network_create(&net));
    CHECK_OK(prt_network_add_input(net, "X", PRT_FLOAT32, &xd, &xt));
    REQUIRE_OK(prt_network_add_plugin(net, &xt, 1, NULL, 0, so, &l0));
    CHECK_OK(prt_network_get_layer_output(net, l0, 0, &st));
    CHECK_OK(prt_network_set_tensor_name(net, st, "S"));
    REQUIRE_OK(prt_network_add_plugin(net, NULL, 0, &st, 1, fill, &l1));
    CHECK_OK(prt_network_get_layer_output(net, l1, 0, &yt));
    CHECK_OK(prt_network_set_tensor_name(net, yt, "Y"));
    CHECK_OK(prt_network_mark_output(net, yt));
    if (mark)
        CHECK_OK(prt_network_mark_output(net, st));
    CHECK_OK(prt_builder_config_create(&cfg));
    REQUIRE_OK(prt_engine_build(net, cfg, reg, &e));
    /* A loaded engine derives the same. */
    REQUIRE_OK(prt_engine_serialize(e, &bytes, &size));
    REQUIRE_OK(prt_engine_deserialize(reg, bytes, size, &e2));
    CHECK_OK(prt_engine_get_layer(e2, 0, &li0));
    CHECK_OK(prt_engine_get_layer(e2, 1, &li1));
    CHECK(li0.skipped == !mark && li1.skipped == 0);
    REQUIRE_OK(prt_context_create(e2, &ctx));
    CHECK_OK(prt_context_set_tensor_address(ctx, "X", x));
    CHECK_OK(prt_context_set_tensor_address(ctx, "Y", y));
    if (mark)
        CHECK_OK(prt_context_set_tensor_address(ctx, "S", s));
    shapeof_runs = 0;
    CHECK_OK(prt_context_enqueue(ctx, NULL));
    CHECK_OK(prt_context_enqueue(ctx, NULL));
    CHECK(shapeof_runs == (mark ? 2 : 0));
    CHECK(y[27] == 27.0f);
    CHECK(mark ? s[0] == 3 && s[1] == 6 : s[0] == -1);
    prt_context_destroy(ctx);
    prt_free(bytes);
    prt_engine_destroy(e2);
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return 0;
}

/* Shape tensors through layers: X (R x C) -> ShapeOf -> [R, C] -> Fill's
 * shape input -> Y of (R + 1) x (C + 1). And a shape input whose values no
 * one states is a build error naming the layer. */
static int test_shape_tensors(prt_registry *reg)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    prt_plugin *so = tu_make_plugin(reg, "test", "ShapeOf", "1", NULL, 0);
    prt_plugin *fill = tu_make_plugin(reg, "test", "Fill", "1", NULL, 0);
    prt_dims dyn = {2, {-1, -1}}, mn = {2, {1, 1}}, op = {2, {4, 4}}, mx = {2, {8, 8}};
    prt_dims xd = {2, {3, 6}}, yd;
    float x[18], y[9 * 9];
    int32_t xt, l0, l1, st, yt, prof;
    REQUIRE(so && fill);
    REQUIRE_OK(prt_network_create(&net));
    CHECK_OK(prt_network_add_input(net, "X", PRT_FLOAT32, &dyn, &xt));
    REQUIRE_OK(prt_network_add_plugin(net, &xt, 1, NULL, 0, so, &l0));
    CHECK_OK(prt_network_get_layer_output(net, l0, 0, &st));
    REQUIRE_OK(prt_network_add_plugin(net, NULL, 0, &st, 1, fill, &l1));
    CHECK_OK(prt_network_get_layer_output(net, l1, 0, &yt));
    CHECK_OK(prt_network_set_tensor_name(net, yt, "Y"));
    CHECK_OK(prt_network_mark_output(net, yt));
    CHECK_OK(prt_builder_config_create(&cfg));
    CHECK_OK(prt_builder_config_add_profile(cfg, &prof));
    CHECK_OK(prt_builder_config_set_profile_dims(cfg, prof, "X", &mn, &op, &mx));
    REQUIRE_OK(prt_engine_build(net, cfg, reg, &e));
    REQUIRE_OK(prt_context_create(e, &ctx));
    CHECK_OK(prt_context_set_input_shape(ctx, "X", &xd));
    CHECK_OK(prt_context_get_tensor_shape(ctx, "Y", &yd));
    CHECK(yd.nb_dims == 2 && yd.d[0] == 4 && yd.d[1] == 7);
    CHECK_OK(prt_context_set_tensor_address(ctx, "X", x));
    CHECK_OK(prt_context_set_tensor_address(ctx, "Y", y));
    CHECK_OK(prt_context_enqueue(ctx, NULL));
    CHECK(y[27] == 27.0f);
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    prt_network_destroy(net);
    /* Fill's shape input from ToFloat, which states no values. */
    {
        prt_plugin *tf = tu_make_plugin(reg, "test", "ToFloat", "1", NULL, 0);
        prt_plugin *f2 = tu_make_plugin(reg, "test", "Fill", "1", NULL, 0);
        prt_dims two = {1, {2}};
        int32_t it, ft;
        REQUIRE(tf && f2);
        REQUIRE_OK(prt_network_create(&net));
        CHECK_OK(prt_network_add_input(net, "I", PRT_INT32, &two, &it));
        REQUIRE_OK(prt_network_add_plugin(net, &it, 1, NULL, 0, tf, &l0));
        CHECK_OK(prt_network_get_layer_output(net, l0, 0, &ft));
        REQUIRE_OK(prt_network_add_plugin(net, NULL, 0, &ft, 1, f2, &l1));
        CHECK_OK(prt_network_get_layer_output(net, l1, 0, &yt));
        CHECK_OK(prt_network_mark_output(net, yt));
        prt_builder_config_destroy(cfg);
        CHECK_OK(prt_builder_config_create(&cfg));
        CHECK_ERR(prt_engine_build(net, cfg, reg, &e), PRT_ERR_UNSUPPORTED,
                  "shape input 0 ('ToFloat_0:0') is float32, and only a layer that "
                  "reads float values takes one");
        prt_network_destroy(net);
    }
    prt_builder_config_destroy(cfg);
    return 0;
}

/* ---- threads ------------------------------------------------------------------ */

/* One engine, one context per thread, all running at once: contexts share
 * nothing mutable, so every thread's results match the reference. */
typedef struct thread_job {
    const prt_engine *engine;
    int thread;
    int failures;
} thread_job;

static void *thread_main(void *arg)
{
    thread_job *j = arg;
    for (int it = 0; it < 40; it++) {
        int before = tu_failures;
        /* Different shapes and data per thread and iteration. */
        run_chain(j->engine, 1 + (j->thread + it) % 16, 1 + (3 * it + j->thread) % 16,
                  it % 3 == 0, (uint64_t)(1000 * j->thread + it + 1));
        if (tu_failures != before)
            j->failures++;
    }
    return NULL;
}

static int test_threads(prt_registry *reg)
{
    prt_engine *e = NULL;
    pthread_t th[4];
    thread_job jobs[4];
    REQUIRE_OK(build_chain(reg, &e));
    for (int i = 0; i < 4; i++) {
        jobs[i] = (thread_job){e, i, 0};
        REQUIRE(pthread_create(&th[i], NULL, thread_main, &jobs[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK(jobs[i].failures == 0);
    }
    prt_engine_destroy(e);
    return 0;
}

/* Contexts created from threads: every context attaches from the engine's
 * one plugin object, which must never be inside two calls at once. */
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

/* ---- allocation failures ---------------------------------------------------- */

static int test_alloc_failures(prt_registry *reg)
{
    int64_t n;
    /* Fail the n-th allocation of build + serialize + load + run, for every
     * n until the whole sequence succeeds; each must end cleanly. */
    for (n = 0; n < 100000; n++) {
        prt_engine *e = NULL, *e2 = NULL;
        prt_context *ctx = NULL;
        void *bytes = NULL;
        size_t size = 0;
        prt_dims d = {2, {3, 3}};
        float x[9] = {1, 0, 2, 0, 0, 3, 4, 5, 0}, f[18];
        int64_t k = 0;
        prt_status st;
        base_fail_alloc_after(n);
        st = build_chain(reg, &e);
        if (!st)
            st = prt_engine_serialize(e, &bytes, &size);
        if (!st)
            st = prt_engine_deserialize(reg, bytes, size, &e2);
        if (!st)
            st = prt_context_create(e2, &ctx);
        if (!st)
            st = prt_context_set_input_shape(ctx, "X", &d);
        if (!st)
            st = prt_context_set_tensor_address(ctx, "X", x);
        if (!st)
            st = prt_context_set_tensor_address(ctx, "F", f);
        if (!st)
            st = prt_context_set_tensor_address(ctx, "K", &k);
        if (!st)
            st = prt_context_enqueue(ctx, NULL);
        base_fail_alloc_after(-1);
        if (st)
            CHECK(prt_last_error()[0] != '\0');
        prt_context_destroy(ctx);
        prt_engine_destroy(e2);
        prt_engine_destroy(e);
        prt_free(bytes);
        if (st == PRT_OK) {
            CHECK(k == 5);
            break;
        }
    }
    CHECK(n > 10 && n < 100000);
    return 0;
}

static int cache_hits;
static void count_cache_hits(void *user, int32_t severity, const char *msg)
{
    (void)user, (void)severity;
    cache_hits += strstr(msg, "from the timing cache") != NULL;
}

/* X -> Tactical -> Y, autotuned with a timing cache file. */
static prt_status build_cached(const char *cache, prt_engine **out)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_dims dyn = {1, {-1}}, mn = {1, {1}}, op = {1, {8}}, mx = {1, {16}};
    int32_t tx, l, ty, prof;
    prt_status st = prt_network_create(&net);
    if (!st)
        st = prt_network_add_input(net, "X", PRT_FLOAT32, &dyn, &tx);
    if (!st)
        st = add(net, KIND_TACTICAL, tx, &l, &ty);
    if (!st)
        st = prt_network_mark_output(net, ty);
    if (!st)
        st = prt_builder_config_create(&cfg);
    if (!st)
        st = prt_builder_config_add_profile(cfg, &prof);
    if (!st)
        st = prt_builder_config_set_profile_dims(cfg, prof, "X", &mn, &op, &mx);
    if (!st)
        st = prt_builder_config_set_autotune(cfg, 1);
    if (!st)
        st = prt_builder_config_set_timing_cache_file(cfg, cache);
    if (!st)
        st = prt_engine_build(net, cfg, NULL, out);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return st;
}

/* The timing cache: written by a build, reused by the next, validated like
 * an engine file, and a file that cannot be written fails the build. */
static void test_timing_cache(void)
{
    char path[128], bad[160];
    prt_engine *e1 = NULL, *e2 = NULL, *e3 = NULL;
    FILE *f;
    long size;
    unsigned char *bytes;
    snprintf(path, sizeof path, "/tmp/prt_timing_cache_%d.bin", (int)getpid());
    remove(path);
    CHECK_OK(build_cached(path, &e1));
    f = fopen(path, "rb");
    CHECK(f != NULL);
    if (!f || !e1) {
        prt_engine_destroy(e1);
        return;
    }
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, 0, SEEK_SET);
    bytes = malloc((size_t)size);
    CHECK(bytes && fread(bytes, 1, (size_t)size, f) == (size_t)size);
    fclose(f);
    /* The second build takes the first one's choice without timing. */
    cache_hits = 0;
    prt_set_logger(count_cache_hits, NULL, PRT_SEV_VERBOSE);
    CHECK_OK(build_cached(path, &e2));
    prt_set_logger(NULL, NULL, 0);
    CHECK(cache_hits == 1);
    CHECK(e2 && e2->layers[0].tactic == e1->layers[0].tactic &&
          e1->layers[0].tactic != 2);
    /* Every damaged byte and every truncation is refused, naming the file. */
    for (long i = 0; bytes && i < size; i++) {
        bytes[i] ^= 0x41;
        f = fopen(path, "wb");
        fwrite(bytes, 1, (size_t)size, f);
        fclose(f);
        CHECK_ERR(build_cached(path, &e3),
                  i < 12 && i >= 8 ? PRT_ERR_VERSION : PRT_ERR_MALFORMED, path);
        bytes[i] ^= 0x41;
    }
    for (long n = 0; bytes && n < size; n += 3) {
        f = fopen(path, "wb");
        fwrite(bytes, 1, (size_t)n, f);
        fclose(f);
        CHECK(build_cached(path, &e3) == PRT_ERR_MALFORMED && e3 == NULL);
    }
    /* A key holding a NUL (the checksum made right) is named as such. */
    if (bytes && size > 24) {
        uint32_t crc;
        bytes[21] = 0; /* the key's second byte: u32 magic and counts, u32 length */
        crc = base_crc32(bytes, (size_t)size - 4);
        memcpy(bytes + size - 4, &crc, 4);
        f = fopen(path, "wb");
        fwrite(bytes, 1, (size_t)size, f);
        fclose(f);
        CHECK_ERR(build_cached(path, &e3), PRT_ERR_MALFORMED,
                  "entry 0: its key holds a NUL byte");
    }
    f = fopen(path, "w");
    fputs("not a cache at all\n", f);
    fclose(f);
    CHECK_ERR(build_cached(path, &e3), PRT_ERR_MALFORMED,
              "not a valid plugrt timing cache");
    remove(path);
    /* Not a regular file: a directory is said to be one (it was "out of
     * memory"), and a FIFO fails at once (the build waited for a writer
     * forever; the alarm turns that into a failure, not a hung test). */
    CHECK(mkdir(path, 0700) == 0);
    CHECK_ERR(build_cached(path, &e3), PRT_ERR_IO,
              "it is a directory, not a regular file");
    rmdir(path);
    CHECK(mkfifo(path, 0600) == 0);
    tu_watchdog("test_runtime", 60);
    CHECK_ERR(build_cached(path, &e3), PRT_ERR_IO, "it is a FIFO, not a regular file");
    tu_watchdog("test_runtime", 0);
    remove(path);
    snprintf(bad, sizeof bad, "/nonexistent-dir-%d/cache.bin", (int)getpid());
    CHECK_ERR(build_cached(bad, &e3), PRT_ERR_IO, "cannot write");
    CHECK(e3 == NULL);
    free(bytes);
    prt_engine_destroy(e1);
    prt_engine_destroy(e2);
}

/* Mistakes that used to surface only when a saved engine was loaded fail
 * the build, naming the cause: a plugin whose key is not its creator's, and
 * one whose serialized fields do not recreate it. */
static void test_build_recreates(prt_registry *reg)
{
    tu_engine e;
    memset(&e, 0, sizeof e);
    CHECK_ERR(build_one(reg, "WrongName", 0, 4, &e), PRT_ERR_PLUGIN,
              "its plugin says it is test::NotItsName version 1, but no creator");
    tu_engine_destroy(&e);
    CHECK_ERR(
        build_one(reg, "DropField", 0, 4, &e), PRT_ERR_PLUGIN,
        "created again from the fields it serializes, as loading the engine will: "
        "layer 'DropField_0' (plugin test::DropField): DropField: field 'needed' is "
        "required");
    tu_engine_destroy(&e);
}

/* A context whose plugin clone has a broken table fails to be made, with
 * the layer named, and does not call through the broken table. */
static void test_bad_attach(void)
{
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    if (build_kind(KIND_BADATTACH, "Y", &e))
        return;
    CHECK_ERR(prt_context_create(e, &ctx), PRT_ERR_PLUGIN, "attach_to_context failed");
    CHECK(ctx == NULL);
    prt_engine_destroy(e);
}

int main(void)
{
    prt_registry *reg = make_registry();
    if (!reg)
        return tu_finish("test_runtime");
    test_chain(reg);
    test_steady_runs(reg);
    test_bad_size(reg);
    test_silent_size(reg);
    test_plugin_status(reg);
    test_tactics(reg);
    test_size_only_layer();
    test_allocator_current();
    test_corruption(reg);
    test_size_nodes();
    test_bad_use(reg);
    test_constants(reg);
    test_two_aliases();
    test_shape_inputs(reg);
    test_shape_tensors(reg);
    check_skipped(reg, 0);
    check_skipped(reg, 1);
    test_threads(reg);
    test_concurrent_attach();
    test_bad_attach();
    test_build_recreates(reg);
    test_timing_cache();
    test_alloc_failures(reg);
    prt_registry_destroy(reg);
    return tu_finish("test_runtime");
}
