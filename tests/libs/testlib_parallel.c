/*
 * A test plugin library whose plugin spreads its work over the host's
 * threads (prt_host_services.parallel_for), as a third party's would:
 * test::ParallelScale@1 takes a float32 tensor X and writes
 *   Y = 2 X, through parallel_for in ranges of at least 256 elements;
 *   Info (int32 [3]) = {nb_threads at enqueue, how many distinct thread
 *     indices ran a range, 1 if every range was at least 256 long but the
 *     last and the ranges covered X exactly once, else 0}.
 * Field "wait" (int32, default 0): 1 makes the range run by thread 0 wait
 * (up to 10 s) until a range runs on another thread, so a test can see the
 * host's workers take part rather than the calling thread doing it all.
 * A host whose services lack parallel_for (an older one) gets the work
 * done on its own thread: Info = {1, 1, 1}.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugrt/plugin.h"

#define GRAIN 256
#define MAX_INDEX 64

static const prt_host_services *host;

/* An entry of the host's services, or NULL when its struct is older. */
#define HOST_HAS(member)                                                                 \
    (host &&                                                                             \
     host->struct_size >= offsetof(prt_host_services, member) + sizeof(host->member) &&  \
     host->member)

typedef struct par_plugin {
    prt_plugin base;
    int32_t wait;
    prt_field field;
    prt_field_collection fc;
    /* One enqueue's bookkeeping, written by the ranges. */
    _Atomic int64_t covered;
    _Atomic int32_t short_ranges;
    _Atomic uint64_t seen; /* bit i: thread index i ran a range */
} par_plugin;

typedef struct par_job {
    par_plugin *p;
    const float *x;
    float *y;
    int64_t n;
    int32_t nb_threads;
} par_job;

static int32_t thread_index(void)
{
    return HOST_HAS(thread_index) ? host->thread_index(host->host) : 0;
}

static void sleep_a_little(void)
{
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
}

static void scale_range(void *arg, int64_t begin, int64_t end)
{
    par_job *j = arg;
    int32_t idx = thread_index();
    atomic_fetch_or(&j->p->seen, (uint64_t)1 << (idx < MAX_INDEX ? idx : MAX_INDEX - 1));
    if (end - begin < GRAIN && end != j->n)
        atomic_fetch_add(&j->p->short_ranges, 1);
    atomic_fetch_add(&j->p->covered, end - begin);
    /* Up to 2 minutes: a hang guard, not a timing assumption (a loaded
     * machine under ThreadSanitizer once took over 10 s to start a
     * worker). */
    if (j->p->wait && idx == 0 && j->nb_threads > 1)
        for (int k = 0; k < 120000 && atomic_load(&j->p->seen) == 1; k++)
            sleep_a_little();
    for (int64_t i = begin; i < end; i++)
        j->y[i] = 2.0f * j->x[i];
}

static int32_t popcount64(uint64_t v)
{
    int32_t n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

/* ---- core ----------------------------------------------------------------- */

static const char *par_name(const prt_plugin *self)
{
    (void)self;
    return "ParallelScale";
}
static const char *par_version(const prt_plugin *self)
{
    (void)self;
    return "1";
}
static const char *par_namespace(const prt_plugin *self)
{
    (void)self;
    return "test";
}
static uint32_t par_devices(const prt_plugin *self)
{
    (void)self;
    return 1u << PRT_DEVICE_CPU;
}

/* ---- build ---------------------------------------------------------------- */

static int32_t par_nb_outputs(const prt_plugin *self)
{
    (void)self;
    return 2;
}

static prt_status par_dtypes(prt_plugin *self, int32_t *out_types, int32_t nb_outputs,
                             const int32_t *in_types, int32_t nb_inputs)
{
    (void)self, (void)nb_outputs, (void)in_types, (void)nb_inputs;
    out_types[0] = PRT_FLOAT32;
    out_types[1] = PRT_INT32;
    return PRT_OK;
}

static prt_status par_shapes(prt_plugin *self, const prt_dim_exprs *inputs,
                             int32_t nb_inputs, const prt_dim_exprs *shape_inputs,
                             int32_t nb_shape_inputs, prt_dim_exprs *outputs,
                             int32_t nb_outputs, prt_expr_builder *exprs)
{
    (void)self, (void)nb_inputs, (void)shape_inputs, (void)nb_shape_inputs,
        (void)nb_outputs;
    outputs[0] = inputs[0];
    outputs[1].nb_dims = 1;
    outputs[1].d[0] = exprs->constant(exprs, 3);
    return outputs[1].d[0] ? PRT_OK : PRT_ERR_OUT_OF_MEMORY;
}

static int32_t par_supports(prt_plugin *self, int32_t pos,
                            const prt_dynamic_tensor_desc *in_out, int32_t nb_inputs,
                            int32_t nb_outputs)
{
    (void)self, (void)nb_inputs, (void)nb_outputs;
    return in_out[pos].desc.format == PRT_FORMAT_LINEAR &&
           in_out[pos].desc.dtype == (pos == 2 ? PRT_INT32 : PRT_FLOAT32);
}

/* ---- runtime -------------------------------------------------------------- */

static prt_status par_enqueue(prt_plugin *self, const prt_tensor_desc *in_desc,
                              const prt_tensor_desc *out_desc, const void *const *inputs,
                              void *const *outputs, void *workspace, int32_t device,
                              void *stream)
{
    par_plugin *p = (par_plugin *)self;
    par_job j = {p, inputs[0], outputs[0], 1, 1};
    int32_t *info = outputs[1];
    (void)out_desc, (void)workspace, (void)device, (void)stream;
    for (int32_t d = 0; d < in_desc[0].dims.nb_dims; d++)
        j.n *= in_desc[0].dims.d[d];
    atomic_store(&p->covered, 0);
    atomic_store(&p->short_ranges, 0);
    atomic_store(&p->seen, 0);
    if (HOST_HAS(parallel_for)) {
        j.nb_threads = HOST_HAS(nb_threads) ? host->nb_threads(host->host) : 1;
        host->parallel_for(host->host, j.n, GRAIN, scale_range, &j);
    } else {
        scale_range(&j, 0, j.n);
    }
    info[0] = j.nb_threads;
    info[1] = popcount64(atomic_load(&p->seen));
    info[2] = atomic_load(&p->covered) == j.n && atomic_load(&p->short_ranges) == 0;
    return PRT_OK;
}

static prt_plugin *par_make(int32_t wait);

static prt_plugin *par_clone(const prt_plugin *self)
{
    return par_make(((const par_plugin *)self)->wait);
}

static prt_plugin *par_attach(prt_plugin *self, prt_plugin_resources *resources)
{
    (void)resources;
    return par_clone(self);
}

static const prt_field_collection *par_fields(prt_plugin *self)
{
    return &((par_plugin *)self)->fc;
}

static void par_destroy(prt_plugin *self)
{
    free(self);
}

static const prt_plugin_core core = {sizeof core, PRT_PLUGIN_ABI_VERSION, par_name,
                                     par_version, par_namespace,          par_devices};
static const prt_plugin_build build = {
    .struct_size = sizeof build,
    .abi_version = PRT_PLUGIN_ABI_VERSION,
    .nb_outputs = par_nb_outputs,
    .get_output_dtypes = par_dtypes,
    .get_output_shapes = par_shapes,
    .supports_format_combination = par_supports,
};
static const prt_plugin_runtime runtime = {
    .struct_size = sizeof runtime,
    .abi_version = PRT_PLUGIN_ABI_VERSION,
    .enqueue = par_enqueue,
    .attach_to_context = par_attach,
    .get_fields_to_serialize = par_fields,
    .clone = par_clone,
    .destroy = par_destroy,
};
static const prt_plugin_vtable vtable = {sizeof vtable, PRT_PLUGIN_ABI_VERSION, &core,
                                         &build, &runtime};

static prt_plugin *par_make(int32_t wait)
{
    par_plugin *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->base.vt = &vtable;
    p->wait = wait;
    p->field.name = "wait";
    p->field.data = &p->wait;
    p->field.type = PRT_FIELD_INT32;
    p->field.length = 1;
    p->fc.nb_fields = 1;
    p->fc.fields = &p->field;
    return &p->base;
}

/* ---- creator and library -------------------------------------------------- */

static prt_status par_create(const prt_plugin_creator *self, const char *layer_name,
                             const prt_field_collection *fields, int32_t phase,
                             prt_plugin **out)
{
    int32_t wait = 0;
    (void)self, (void)layer_name, (void)phase;
    for (int32_t i = 0; fields && i < fields->nb_fields; i++) {
        const prt_field *f = &fields->fields[i];
        if (f->name && strcmp(f->name, "wait") == 0 && f->type == PRT_FIELD_INT32 &&
            f->length == 1 && f->data)
            memcpy(&wait, f->data, sizeof wait);
    }
    *out = par_make(wait);
    return *out ? PRT_OK : PRT_ERR_OUT_OF_MEMORY;
}

static const prt_field_schema par_schema[] = {
    {"wait", PRT_FIELD_INT32, 1, "1: thread 0's range waits for another thread's"},
};

static const prt_plugin_creator creator = {sizeof creator,
                                           PRT_PLUGIN_ABI_VERSION,
                                           "ParallelScale",
                                           "1",
                                           "test",
                                           1,
                                           par_schema,
                                           par_create,
                                           NULL};
static const prt_plugin_creator *const creators[] = {&creator};
static const prt_plugin_library library = {
    sizeof library, PRT_PLUGIN_ABI_VERSION, "testlib_parallel", "1", 1, creators};

PRT_PLUGIN_EXPORT const prt_plugin_library *
prt_plugin_library_open(uint32_t host_abi_version, const prt_host_services *services);
PRT_PLUGIN_EXPORT const prt_plugin_library *
prt_plugin_library_open(uint32_t host_abi_version, const prt_host_services *services)
{
    if (host_abi_version < PRT_PLUGIN_ABI_VERSION)
        return NULL;
    host = services;
    return &library;
}
