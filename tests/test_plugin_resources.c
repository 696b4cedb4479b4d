/*
 * What a context gives its plugins (prt_plugin_resources, plugin.h) and
 * graph-capture safety declared per plugin (prt_plugin_build.capture_safe):
 *  - shared objects: one per context whichever layers ask, two contexts
 *    two, each destroyed once, after every plugin of its context, and the
 *    object each layer got is the one its results use;
 *  - memory: counted in prt_context_get_memory_size, refused past the
 *    context's memory limit naming the layer, freed whether the plugin
 *    frees it or not (the leak checkers of the ASan run see the rest);
 *  - errors a plugin reports fail the run in progress or the next one,
 *    from any thread, naming the layer, once;
 *  - a plugin that says its enqueue cannot be captured: the engine records
 *    it (prt_layer_info.capture_safe) through a save and a load, capture
 *    refuses the engine naming the layer and the plugin, and a build table
 *    too short to hold the entry is never read past its size;
 *  - the NCAP section's damaged bytes are refused.
 * CPU only; tests/cuda/test_cuda_capture_safe.c captures on a GPU.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_impl.h"
#include "plan_bytes.h"
#include "testutil.h"

enum {
    RES_SHARED,  /* acquires "test::shared", allocates and frees in destroy */
    RES_KEEP,    /* acquires "test::shared", allocates, never frees */
    RES_REPORT,  /* reports an error when its first input element is < 0 */
    RES_NOCAP,   /* capture_safe says 0 */
    RES_OLDNCAP, /* the same entry, past a build table's struct_size */
    RES_COUNT
};

/* The object the layers of one context share: each layer adds `add`. */
typedef struct shared_obj {
    int id;
    int users; /* attached plugins holding it */
    float add;
} shared_obj;

static atomic_int obj_created, obj_destroyed, obj_destroyed_in_use;
static atomic_int old_entry_read;
#define RES_BYTES 4096

static prt_status so_create(void *user, int32_t device, void **out)
{
    shared_obj *o = calloc(1, sizeof *o);
    (void)user;
    if (!o || device != PRT_DEVICE_CPU) {
        free(o);
        return PRT_ERR_OUT_OF_MEMORY;
    }
    o->id = atomic_fetch_add(&obj_created, 1) + 1;
    o->add = 10.0f * (float)o->id;
    *out = o;
    return PRT_OK;
}

static void so_destroy(void *user, void *object)
{
    shared_obj *o = object;
    (void)user;
    if (o->users != 0)
        atomic_fetch_add(&obj_destroyed_in_use, 1);
    atomic_fetch_add(&obj_destroyed, 1);
    free(o);
}

typedef struct rplug {
    prt_plugin base;
    int32_t kind;
    int attached;
    prt_plugin_resources res; /* what attach gave, copied (zero before) */
    shared_obj *obj;
    void *mem;
    prt_field_collection fc;
} rplug;

/* The resources the last RES_REPORT clone got, for a thread to report on. */
static prt_plugin_resources report_res;

static const char *const res_names[RES_COUNT] = {"ResShared", "ResKeep", "ResReport",
                                                 "ResNoCapture", "ResOldNoCapture"};

static const char *rp_name(const prt_plugin *p)
{
    return res_names[((const rplug *)p)->kind];
}
static const char *rp_version(const prt_plugin *p)
{
    (void)p;
    return "1";
}
static const char *rp_ns(const prt_plugin *p)
{
    (void)p;
    return "test";
}
static uint32_t rp_devices(const prt_plugin *p)
{
    (void)p;
    return 1u << PRT_DEVICE_CPU;
}
static int32_t rp_nb_outputs(const prt_plugin *p)
{
    (void)p;
    return 1;
}
static prt_status rp_dtypes(prt_plugin *p, int32_t *out, int32_t nb_out,
                            const int32_t *in, int32_t nb_in)
{
    (void)p, (void)nb_out, (void)in, (void)nb_in;
    out[0] = PRT_FLOAT32;
    return PRT_OK;
}
static prt_status rp_shapes(prt_plugin *p, const prt_dim_exprs *in, int32_t nb_in,
                            const prt_dim_exprs *si, int32_t nb_si, prt_dim_exprs *out,
                            int32_t nb_out, prt_expr_builder *eb)
{
    (void)p, (void)nb_in, (void)si, (void)nb_si, (void)nb_out, (void)eb;
    out[0] = in[0];
    return PRT_OK;
}
static int32_t rp_supports(prt_plugin *p, int32_t pos, const prt_dynamic_tensor_desc *io,
                           int32_t nb_in, int32_t nb_out)
{
    (void)p, (void)nb_in, (void)nb_out;
    return io[pos].desc.dtype == PRT_FLOAT32 && io[pos].desc.format == PRT_FORMAT_LINEAR;
}
static int32_t rp_capture_safe(const prt_plugin *p, int32_t device)
{
    const rplug *r = (const rplug *)p;
    (void)device;
    if (r->kind == RES_OLDNCAP)
        atomic_fetch_add(&old_entry_read, 1);
    return r->kind != RES_NOCAP && r->kind != RES_OLDNCAP;
}

static prt_status rp_enqueue(prt_plugin *p, const prt_tensor_desc *in_desc,
                             const prt_tensor_desc *out_desc, const void *const *in,
                             void *const *out, void *ws, int32_t device, void *stream)
{
    rplug *r = (rplug *)p;
    const float *x = in[0];
    float *y = out[0];
    int64_t n = tu_volume(&in_desc[0].dims);
    float add = r->obj ? r->obj->add : 0.0f;
    (void)out_desc, (void)ws, (void)device, (void)stream;
    if (r->kind == RES_REPORT && n > 0 && x[0] < 0 && r->attached)
        r->res.report_error(r->res.context, PRT_ERR_SHAPE,
                            "the first element is negative");
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] + add;
    return PRT_OK;
}

static prt_plugin *rp_clone(const prt_plugin *p)
{
    rplug *c = malloc(sizeof *c);
    if (c) {
        *c = *(const rplug *)p;
        c->attached = 0;
        c->obj = NULL;
        c->mem = NULL;
        memset(&c->res, 0, sizeof c->res);
    }
    return c ? &c->base : NULL;
}

static prt_plugin *rp_attach(prt_plugin *p, prt_plugin_resources *res)
{
    rplug *c = (rplug *)rp_clone(p);
    if (!c)
        return NULL;
    c->attached = 1;
    /* plugin.h: read the appended entries only when struct_size covers them. */
    if (res->struct_size < offsetof(prt_plugin_resources, acquire) + sizeof(void *))
        return &c->base;
    c->res = *res;
    if (c->kind == RES_REPORT)
        report_res = *res;
    if (c->kind == RES_SHARED || c->kind == RES_KEEP) {
        void *o = NULL;
        if (res->acquire(res->context, "test::shared", so_create, so_destroy, NULL, &o) ||
            res->alloc(res->context, RES_BYTES, &c->mem)) {
            free(c);
            return NULL;
        }
        c->obj = o;
        c->obj->users++;
        memset(c->mem, 0x5a, RES_BYTES); /* it is memory of that size */
    }
    return &c->base;
}
static const prt_field_collection *rp_fields(prt_plugin *p)
{
    return &((rplug *)p)->fc;
}
static void rp_destroy(prt_plugin *p)
{
    rplug *r = (rplug *)p;
    if (r->obj)
        r->obj->users--;
    if (r->kind == RES_SHARED && r->mem)
        r->res.free(r->res.context, r->mem);
    free(p);
}

static const prt_plugin_core rp_core = {
    sizeof rp_core, PRT_PLUGIN_ABI_VERSION, rp_name, rp_version, rp_ns, rp_devices};
static const prt_plugin_build rp_build = {sizeof rp_build,
                                          PRT_PLUGIN_ABI_VERSION,
                                          rp_nb_outputs,
                                          rp_dtypes,
                                          rp_shapes,
                                          rp_supports,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          rp_capture_safe,
                                          NULL};
/* A plugin built against the header before capture_safe: its table ends
 * before the entry (what lies past it is the author's, here a function the
 * host must never call). */
static const prt_plugin_build rp_build_old = {offsetof(prt_plugin_build, capture_safe),
                                              PRT_PLUGIN_ABI_VERSION,
                                              rp_nb_outputs,
                                              rp_dtypes,
                                              rp_shapes,
                                              rp_supports,
                                              NULL,
                                              NULL,
                                              NULL,
                                              NULL,
                                              NULL,
                                              NULL,
                                              NULL,
                                              rp_capture_safe,
                                              NULL};
static const prt_plugin_runtime rp_runtime = {sizeof rp_runtime,
                                              PRT_PLUGIN_ABI_VERSION,
                                              NULL,
                                              NULL,
                                              rp_enqueue,
                                              rp_attach,
                                              rp_fields,
                                              rp_clone,
                                              rp_destroy};
static const prt_plugin_vtable rp_vt = {sizeof rp_vt, PRT_PLUGIN_ABI_VERSION, &rp_core,
                                        &rp_build, &rp_runtime};
static const prt_plugin_vtable rp_vt_old = {sizeof rp_vt_old, PRT_PLUGIN_ABI_VERSION,
                                            &rp_core, &rp_build_old, &rp_runtime};

static prt_status rp_create(const prt_plugin_creator *c, const char *layer,
                            const prt_field_collection *f, int32_t phase,
                            prt_plugin **out)
{
    rplug *r = calloc(1, sizeof *r);
    (void)layer, (void)f, (void)phase;
    if (!r)
        return PRT_ERR_OUT_OF_MEMORY;
    r->kind = (int32_t)(intptr_t)c->user;
    r->base.vt = r->kind == RES_OLDNCAP ? &rp_vt_old : &rp_vt;
    *out = &r->base;
    return PRT_OK;
}

#define RP_CREATOR(kind)                                                                 \
    {                                                                                    \
        sizeof(prt_plugin_creator), PRT_PLUGIN_ABI_VERSION, res_names[kind], "1",        \
            "test", 0, NULL, rp_create, (void *)(intptr_t)(kind)                         \
    }
static prt_plugin_creator rp_creators[RES_COUNT];

static prt_registry *make_registry(void)
{
    prt_registry *reg = NULL;
    if (prt_registry_create(&reg) != PRT_OK)
        return NULL;
    for (int k = 0; k < RES_COUNT; k++) {
        prt_plugin_creator c = RP_CREATOR(k);
        rp_creators[k] = c;
        if (prt_registry_add_creator(reg, &rp_creators[k]) != PRT_OK) {
            prt_registry_destroy(reg);
            return NULL;
        }
    }
    return reg;
}

/* x [4] -> layer a -> layer b -> y, built, saved and loaded back. */
static prt_status build_two(prt_registry *reg, int32_t ka, int32_t kb, prt_engine **out)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *built = NULL;
    const prt_dims d = {1, {4}};
    int32_t x, la, lb, t;
    void *bytes = NULL;
    size_t size = 0;
    prt_plugin *a = NULL, *b = NULL;
    prt_status st = rp_create(&rp_creators[ka], "a", NULL, PRT_PHASE_BUILD, &a);
    if (!st)
        st = rp_create(&rp_creators[kb], "b", NULL, PRT_PHASE_BUILD, &b);
    if (!st)
        st = prt_network_create(&net);
    if (!st)
        st = prt_network_add_input(net, "x", PRT_FLOAT32, &d, &x);
    if (!st)
        st = prt_network_add_plugin(net, &x, 1, NULL, 0, a, &la);
    if (!st) {
        a = NULL;
        st = prt_network_set_layer_name(net, la, "first");
    }
    if (!st)
        st = prt_network_get_layer_output(net, la, 0, &t);
    if (!st)
        st = prt_network_add_plugin(net, &t, 1, NULL, 0, b, &lb);
    if (!st) {
        b = NULL;
        st = prt_network_set_layer_name(net, lb, "second");
    }
    if (!st)
        st = prt_network_get_layer_output(net, lb, 0, &t);
    if (!st)
        st = prt_network_set_tensor_name(net, t, "y");
    if (!st)
        st = prt_network_mark_output(net, t);
    if (!st)
        st = prt_builder_config_create(&cfg);
    if (!st)
        st = prt_engine_build(net, cfg, reg, &built);
    if (!st)
        st = prt_engine_serialize(built, &bytes, &size);
    if (!st)
        st = prt_engine_deserialize(reg, bytes, size, out);
    prt_free(bytes);
    prt_engine_destroy(built);
    if (a)
        rp_destroy(a);
    if (b)
        rp_destroy(b);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return st;
}

static prt_status run(prt_context *ctx, const float *x, float *y)
{
    prt_status st = prt_context_set_tensor_address(ctx, "x", (void *)(uintptr_t)x);
    if (!st)
        st = prt_context_set_tensor_address(ctx, "y", y);
    return st ? st : prt_context_enqueue(ctx, NULL);
}

/* One object per context, whatever layers ask; two contexts, two; each
 * destroyed once, after its context's plugins. */
static void test_shared_objects(prt_registry *reg)
{
    prt_engine *e = NULL;
    prt_context *c1 = NULL, *c2 = NULL;
    const float x[4] = {1, -2, 3.5f, 0};
    float y1[4], y2[4];
    int created0 = atomic_load(&obj_created), destroyed0 = atomic_load(&obj_destroyed);
    int64_t own;
    CHECK_OK(build_two(reg, RES_SHARED, RES_KEEP, &e));
    if (!e)
        return;
    own = prt_engine_context_memory_size(e);
    CHECK_OK(prt_context_create(e, &c1));
    CHECK(atomic_load(&obj_created) == created0 + 1);
    CHECK_OK(prt_context_create(e, &c2));
    CHECK(atomic_load(&obj_created) == created0 + 2);
    /* Each layer holds RES_BYTES of its context's memory. */
    CHECK(prt_context_get_memory_size(c1) == own + 2 * RES_BYTES);
    CHECK(prt_context_get_memory_size(c2) == own + 2 * RES_BYTES);
    CHECK(prt_context_get_memory_size(NULL) == 0);
    CHECK_OK(run(c1, x, y1));
    CHECK_OK(run(c2, x, y2));
    /* Both layers of a context add its object's value, 10 * its id: the
     * two contexts' objects differ, and each layer got its context's. */
    for (int i = 0; i < 4; i++) {
        CHECK(y1[i] == x[i] + 2 * 10.0f * (float)(created0 + 1));
        CHECK(y2[i] == x[i] + 2 * 10.0f * (float)(created0 + 2));
    }
    prt_context_destroy(c1);
    CHECK(atomic_load(&obj_destroyed) == destroyed0 + 1);
    prt_context_destroy(c2);
    CHECK(atomic_load(&obj_destroyed) == destroyed0 + 2);
    CHECK(atomic_load(&obj_destroyed_in_use) == 0);
    CHECK(atomic_load(&obj_created) == created0 + 2);
    prt_engine_destroy(e);
}

/* The memory limit covers plugin memory: the second layer's request goes
 * past it, and the context is not made. */
static void test_memory_limit(prt_registry *reg)
{
    prt_engine *e = NULL;
    prt_context *c = NULL;
    prt_context_options opt = {.struct_size = sizeof opt};
    int created0 = atomic_load(&obj_created), destroyed0 = atomic_load(&obj_destroyed);
    CHECK_OK(build_two(reg, RES_SHARED, RES_KEEP, &e));
    if (!e)
        return;
    opt.memory_limit = prt_engine_context_memory_size(e) + RES_BYTES + RES_BYTES / 2;
    CHECK_ERR(prt_context_create_with_options(e, &opt, &c), PRT_ERR_PLUGIN, "'second'");
    CHECK(strstr(prt_last_error(), "over") || strstr(prt_last_error(), "limit"));
    CHECK(c == NULL);
    /* What the first layer made was destroyed with the failed context. */
    CHECK(atomic_load(&obj_created) == created0 + 1);
    CHECK(atomic_load(&obj_destroyed) == destroyed0 + 1);
    opt.memory_limit = prt_engine_context_memory_size(e) + 2 * RES_BYTES;
    CHECK_OK(prt_context_create_with_options(e, &opt, &c));
    CHECK(prt_context_get_memory_size(c) == opt.memory_limit);
    prt_context_destroy(c);
    prt_engine_destroy(e);
}

static void *report_from_thread(void *arg)
{
    (void)arg;
    report_res.report_error(report_res.context, 12345, "from a stream callback");
    return NULL;
}

/* A reported error fails the run it came in, or the next, once. */
static void test_report_error(prt_registry *reg)
{
    prt_engine *e = NULL;
    prt_context *c = NULL;
    float x[4] = {-1000, 2, 3, 4}, y[4]; /* still negative after the first layer */
    pthread_t th;
    CHECK_OK(build_two(reg, RES_SHARED, RES_REPORT, &e));
    if (!e)
        return;
    CHECK_OK(prt_context_create(e, &c));
    if (!c) {
        prt_engine_destroy(e);
        return;
    }
    CHECK_ERR(run(c, x, y), PRT_ERR_SHAPE,
              "layer 'second' (plugin test::ResReport) reported an error: the first "
              "element is negative");
    x[0] = 1;
    CHECK_OK(run(c, x, y)); /* reported once, returned once */
    /* From another thread, between runs: the next run fails before it
     * starts, with PRT_ERR_PLUGIN for a status plugin.h does not list. */
    CHECK(pthread_create(&th, NULL, report_from_thread, NULL) == 0);
    pthread_join(th, NULL);
    y[0] = -7;
    CHECK_ERR(run(c, x, y), PRT_ERR_PLUGIN, "'second'");
    CHECK(strstr(prt_last_error(), "from a stream callback") != NULL);
    CHECK(y[0] == -7); /* nothing ran */
    CHECK_OK(run(c, x, y));
    prt_context_destroy(c);
    prt_engine_destroy(e);
}

/* capture_safe recorded per layer through a save and a load; capture
 * refuses naming the layer; an old table is not read past its size. */
static void test_capture_safe(prt_registry *reg)
{
    prt_engine *e = NULL;
    prt_context *c = NULL;
    prt_layer_info li = {.struct_size = sizeof li};
    CHECK_OK(build_two(reg, RES_SHARED, RES_NOCAP, &e));
    if (e) {
        CHECK_OK(prt_engine_get_layer(e, 0, &li));
        CHECK(li.capture_safe == 1);
        CHECK_OK(prt_engine_get_layer(e, 1, &li));
        CHECK(li.capture_safe == 0);
        CHECK_OK(prt_context_create(e, &c));
        CHECK_ERR(prt_context_capture_graph(c, NULL), PRT_ERR_UNSUPPORTED,
                  "layer 'second' (plugin test::ResNoCapture) says its enqueue cannot "
                  "be captured");
        prt_context_destroy(c);
        c = NULL;
        prt_engine_destroy(e);
        e = NULL;
    }
    CHECK_OK(build_two(reg, RES_SHARED, RES_SHARED, &e));
    if (e) {
        CHECK_OK(prt_engine_get_layer(e, 1, &li));
        CHECK(li.capture_safe == 1);
        CHECK_OK(prt_context_create(e, &c));
        /* Safe plugins on the CPU: the device's answer, not a layer's. */
        CHECK_ERR(prt_context_capture_graph(c, NULL), PRT_ERR_UNSUPPORTED,
                  "device cpu has none");
        prt_context_destroy(c);
        c = NULL;
        prt_engine_destroy(e);
        e = NULL;
    }
    CHECK_OK(build_two(reg, RES_OLDNCAP, RES_SHARED, &e));
    if (e) {
        CHECK(atomic_load(&old_entry_read) == 0);
        CHECK_OK(prt_engine_get_layer(e, 0, &li));
        CHECK(li.capture_safe == 1);
        prt_engine_destroy(e);
    }
}

/* NCAP: round trip, absence, and damaged bytes refused by name. */
static void test_ncap_section(prt_registry *reg)
{
    prt_engine *e = NULL, *r = NULL;
    void *bytes = NULL;
    size_t size = 0, at;
    uint8_t *p;
    CHECK_OK(build_two(reg, RES_NOCAP, RES_NOCAP, &e));
    if (!e)
        return;
    CHECK(e->layers[0].no_capture == 1 && e->layers[1].no_capture == 1);
    CHECK_OK(prt_engine_serialize(e, &bytes, &size));
    p = bytes;
    at = p ? tu_plan_section_at(p, TU_TAG('N', 'C', 'A', 'P')) : 0;
    CHECK(at != 0);
    if (at) {
        static const struct {
            uint32_t count;
            int32_t first, second;
            const char *why;
        } bad[] = {
            {3, 0, 1, "3 layers for 2"},         {2, 1, 0, "out of order"},
            {2, 0, 0, "out of order"},           {2, 0, 2, "out of order or range"},
            {2, -1, 1, "out of order or range"},
        };
        uint8_t *copy = malloc(size);
        CHECK(copy != NULL);
        if (!copy)
            at = 0, size = 0;
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            memcpy(copy, p, size);
            tu_put32(copy + at, bad[k].count);
            tu_put32(copy + at + 4, (uint32_t)bad[k].first);
            tu_put32(copy + at + 8, (uint32_t)bad[k].second);
            tu_plan_fix_crc(copy, size);
            r = NULL;
            CHECK_ERR(engine_read(copy, size, &r), PRT_ERR_MALFORMED, bad[k].why);
            CHECK(strstr(prt_last_error(), "no capture section") != NULL);
            CHECK(r == NULL);
        }
        /* One layer fewer: the section is one index longer than it says. */
        memcpy(copy, p, size);
        tu_put32(copy + at, 1);
        tu_plan_fix_crc(copy, size);
        CHECK_ERR(engine_read(copy, size, &r), PRT_ERR_MALFORMED, "left over");
        /* Every truncation is refused cleanly. */
        for (size_t n = at; n < size; n++) {
            r = NULL;
            CHECK(engine_read(p, n, &r) != PRT_OK && r == NULL);
        }
        free(copy);
    }
    CHECK_OK(engine_read(bytes, size, &r));
    CHECK(r && r->layers[0].no_capture == 1 && r->layers[1].no_capture == 1);
    engine_free(r);
    prt_free(bytes);
    /* Without the flag, no section, and the layers read capturable. */
    e->layers[0].no_capture = e->layers[1].no_capture = 0;
    CHECK_OK(prt_engine_serialize(e, &bytes, &size));
    CHECK(tu_plan_section_at(bytes, TU_TAG('N', 'C', 'A', 'P')) == 0);
    r = NULL;
    CHECK_OK(engine_read(bytes, size, &r));
    CHECK(r && r->layers[0].no_capture == 0 && r->layers[1].no_capture == 0);
    engine_free(r);
    prt_free(bytes);
    prt_engine_destroy(e);
}

/* The argument checks of the entries themselves. */
static prt_status cycle_create(void *user, int32_t device, void **out)
{
    const prt_plugin_resources *res = user;
    (void)device;
    return res->acquire(res->context, "test::cycle", cycle_create, NULL, user, out);
}

static prt_status fail_create(void *user, int32_t device, void **out)
{
    (void)user, (void)device, (void)out;
    return PRT_ERR_UNSUPPORTED;
}

static void test_entry_errors(prt_registry *reg)
{
    prt_engine *e = NULL;
    prt_context *c = NULL;
    void *o = NULL;
    const prt_plugin_resources *res = &report_res;
    CHECK_OK(build_two(reg, RES_SHARED, RES_REPORT, &e));
    if (e)
        CHECK_OK(prt_context_create(e, &c));
    if (!c) {
        prt_engine_destroy(e);
        return;
    }
    CHECK_ERR(res->acquire(res->context, "", so_create, NULL, NULL, &o),
              PRT_ERR_INVALID_ARGUMENT, "name");
    CHECK_ERR(res->acquire(res->context, "x", NULL, NULL, NULL, &o),
              PRT_ERR_INVALID_ARGUMENT, "create");
    CHECK_ERR(
        res->acquire(res->context, "test::cycle", cycle_create, NULL, (void *)res, &o),
        PRT_ERR_STATE, "asks for itself");
    CHECK_ERR(res->acquire(res->context, "test::fail", fail_create, NULL, NULL, &o),
              PRT_ERR_UNSUPPORTED, "'test::fail'");
    CHECK(o == NULL);
    /* The layer's own object is the one its context made. */
    CHECK_OK(res->acquire(res->context, "test::shared", fail_create, NULL, NULL, &o));
    CHECK(o != NULL && ((shared_obj *)o)->users == 1);
    res->free(res->context, NULL); /* fine */
    CHECK_OK(res->alloc(res->context, 0, &o));
    CHECK(prt_context_get_memory_size(c) ==
          prt_engine_context_memory_size(e) + RES_BYTES);
    res->free(res->context, o);
    CHECK(prt_context_get_memory_size(c) ==
          prt_engine_context_memory_size(e) + RES_BYTES);
    prt_context_destroy(c);
    prt_engine_destroy(e);
}

int main(void)
{
    prt_registry *reg = make_registry();
    CHECK(reg != NULL);
    if (reg) {
        test_shared_objects(reg);
        test_memory_limit(reg);
        test_report_error(reg);
        test_capture_safe(reg);
        test_ncap_section(reg);
        test_entry_errors(reg);
    }
    prt_registry_destroy(reg);
    return tu_finish("test_plugin_resources");
}
