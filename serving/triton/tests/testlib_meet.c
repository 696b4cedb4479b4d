/*
 * A plugin library for the Triton tests' concurrency check, written against
 * plugin.h only. Its one plugin, Meet@1, makes runs wait for each other:
 * each enqueue waits until `parties` enqueues (of any model, any instance
 * of this process) are in it at once, or until `timeout_ms` has passed,
 * and writes how many it met (itself included) to its 0-D int32 output.
 *
 * So concurrency is checked by construction, not by timing: runs that can
 * be in flight together all answer `parties`, however slow the machine
 * (the timeout only bounds a failure); runs that cannot (a model whose
 * `threads` is 1) each answer 1 after the timeout, however fast.
 *
 * Fields: parties (int32, default 2), timeout_ms (int32, default 30000).
 * Its input (float32, any shape) is read by no one: it gives the layer a
 * place in the network. On the CPU only.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugrt/plugin.h"

static const prt_host_services *host;

/* The rendezvous, shared by every Meet of the process: runs arrive in
 * rounds; a round ends when `parties` have arrived, and a run that gives
 * up leaves its round. */
static pthread_mutex_t meet_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t meet_cond = PTHREAD_COND_INITIALIZER;
static int32_t meet_arrived; /* runs waiting in the current round */
static uint64_t meet_rounds; /* rounds completed */

static prt_status fail(prt_status st, const char *msg)
{
    if (host && host->struct_size >= sizeof *host && host->set_error)
        host->set_error(host->host, st, msg);
    return st;
}

typedef struct meet_plugin {
    prt_plugin base;
    int32_t parties, timeout_ms;
    prt_field field[2];
    prt_field_collection fields;
} meet_plugin;

static prt_plugin *meet_new(int32_t parties, int32_t timeout_ms);

static const char *mt_name(const prt_plugin *self)
{
    return "Meet";
}
static const char *mt_version(const prt_plugin *self)
{
    return "1";
}
static const char *mt_namespace(const prt_plugin *self)
{
    return "";
}
static uint32_t mt_devices(const prt_plugin *self)
{
    return 1u << PRT_DEVICE_CPU;
}

static int32_t mt_nb_outputs(const prt_plugin *self)
{
    return 1;
}

static prt_status mt_dtypes(prt_plugin *self, int32_t *out_types, int32_t nb_outputs,
                            const int32_t *in_types, int32_t nb_inputs)
{
    if (nb_inputs != 1 || nb_outputs != 1)
        return fail(PRT_ERR_INVALID_ARGUMENT, "Meet takes one input");
    out_types[0] = PRT_INT32;
    return PRT_OK;
}

static prt_status mt_shapes(prt_plugin *self, const prt_dim_exprs *inputs,
                            int32_t nb_inputs, const prt_dim_exprs *shape_inputs,
                            int32_t nb_shape_inputs, prt_dim_exprs *outputs,
                            int32_t nb_outputs, prt_expr_builder *exprs)
{
    outputs[0].nb_dims = 0;
    return PRT_OK;
}

static int32_t mt_formats(prt_plugin *self, int32_t pos,
                          const prt_dynamic_tensor_desc *in_out, int32_t nb_inputs,
                          int32_t nb_outputs)
{
    return in_out[pos].desc.dtype == (pos == 0 ? PRT_FLOAT32 : PRT_INT32) &&
           in_out[pos].desc.format == PRT_FORMAT_LINEAR;
}

static prt_status mt_enqueue(prt_plugin *self, const prt_tensor_desc *in_desc,
                             const prt_tensor_desc *out_desc, const void *const *inputs,
                             void *const *outputs, void *workspace, int32_t device,
                             void *stream)
{
    const meet_plugin *p = (const meet_plugin *)self;
    struct timespec until;
    uint64_t round;
    int32_t met;
    int rc = 0;
    clock_gettime(CLOCK_REALTIME, &until); /* the condition's clock */
    until.tv_sec += p->timeout_ms / 1000;
    until.tv_nsec += (long)(p->timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&meet_lock);
    round = meet_rounds;
    if (++meet_arrived >= p->parties) {
        met = meet_arrived;
        meet_arrived = 0;
        meet_rounds++;
        pthread_cond_broadcast(&meet_cond);
    } else {
        while (meet_rounds == round && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&meet_cond, &meet_lock, &until);
        if (meet_rounds != round) {
            met = p->parties;
        } else {
            met = meet_arrived--; /* gives up, and leaves the round */
        }
    }
    pthread_mutex_unlock(&meet_lock);
    memcpy(outputs[0], &met, sizeof met);
    return PRT_OK;
}

static prt_plugin *mt_clone(const prt_plugin *self)
{
    const meet_plugin *p = (const meet_plugin *)self;
    return meet_new(p->parties, p->timeout_ms);
}

static prt_plugin *mt_attach(prt_plugin *self, prt_plugin_resources *resources)
{
    return mt_clone(self);
}

static const prt_field_collection *mt_fields(prt_plugin *self)
{
    return &((meet_plugin *)self)->fields;
}

static void mt_destroy(prt_plugin *self)
{
    free(self);
}

static const prt_plugin_core mt_core = {sizeof(prt_plugin_core),
                                        PRT_PLUGIN_ABI_VERSION,
                                        mt_name,
                                        mt_version,
                                        mt_namespace,
                                        mt_devices};
static const prt_plugin_build mt_build = {sizeof(prt_plugin_build),
                                          PRT_PLUGIN_ABI_VERSION,
                                          mt_nb_outputs,
                                          mt_dtypes,
                                          mt_shapes,
                                          mt_formats,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL};
static const prt_plugin_runtime mt_runtime = {sizeof(prt_plugin_runtime),
                                              PRT_PLUGIN_ABI_VERSION,
                                              NULL,
                                              NULL,
                                              mt_enqueue,
                                              mt_attach,
                                              mt_fields,
                                              mt_clone,
                                              mt_destroy};
static const prt_plugin_vtable mt_vtable = {
    sizeof(prt_plugin_vtable), PRT_PLUGIN_ABI_VERSION, &mt_core, &mt_build, &mt_runtime};

static prt_plugin *meet_new(int32_t parties, int32_t timeout_ms)
{
    meet_plugin *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->base.vt = &mt_vtable;
    p->parties = parties;
    p->timeout_ms = timeout_ms;
    p->field[0] = (prt_field){"parties", &p->parties, PRT_FIELD_INT32, 1};
    p->field[1] = (prt_field){"timeout_ms", &p->timeout_ms, PRT_FIELD_INT32, 1};
    p->fields.nb_fields = 2;
    p->fields.fields = p->field;
    return &p->base;
}

static prt_status mt_create(const prt_plugin_creator *self, const char *layer_name,
                            const prt_field_collection *fields, int32_t phase,
                            prt_plugin **out)
{
    int32_t v[2] = {2, 30000}; /* parties, timeout_ms */
    static const char *const names[2] = {"parties", "timeout_ms"};
    prt_plugin *p;
    for (int32_t k = 0; fields && k < fields->nb_fields; k++) {
        const prt_field *f = &fields->fields[k];
        for (int i = 0; i < 2; i++) {
            if (!f->name || strcmp(f->name, names[i]) != 0)
                continue;
            if (f->type != PRT_FIELD_INT32 || f->length != 1 || !f->data)
                return fail(PRT_ERR_INVALID_ARGUMENT, "Meet: its fields are one int32");
            memcpy(&v[i], f->data, sizeof v[i]);
        }
    }
    if (v[0] < 1 || v[1] < 0)
        return fail(PRT_ERR_INVALID_ARGUMENT, "Meet: parties >= 1, timeout_ms >= 0");
    if (!(p = meet_new(v[0], v[1])))
        return fail(PRT_ERR_OUT_OF_MEMORY, "Meet: out of memory");
    *out = p;
    return PRT_OK;
}

static const prt_field_schema mt_schema[] = {
    {"parties", PRT_FIELD_INT32, 1, "how many runs wait for each other"},
    {"timeout_ms", PRT_FIELD_INT32, 1, "how long a run waits for the others"},
};

static const prt_plugin_creator mt_creator = {sizeof(prt_plugin_creator),
                                              PRT_PLUGIN_ABI_VERSION,
                                              "Meet",
                                              "1",
                                              "",
                                              2,
                                              mt_schema,
                                              mt_create,
                                              NULL};

static const prt_plugin_creator *const creators[] = {&mt_creator};

static const prt_plugin_library library = {
    sizeof(prt_plugin_library), PRT_PLUGIN_ABI_VERSION, "testlib_meet", "1", 1, creators};

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
