/*
 * What a context gives its plugins beside the device
 * (prt_plugin_resources, plugin.h): memory of the context's device that
 * counts in the context's memory and its limit, an error a plugin reports
 * for the next run, and objects shared by name among the context's
 * layers.
 *
 * One ctx_res per context, made before the plugins are attached and
 * destroyed after they are (prt_context_destroy): shared objects first,
 * newest first, then whatever memory is still held, so a plugin may use
 * both until its own destroy and a shared object may free its memory in
 * its destroy. Each layer gets its own `context` handle (ctx_res_layer),
 * so memory and errors are charged to the layer that asked.
 *
 * One recursive lock guards the lists: report_error may come from any
 * thread, and a shared object's create may allocate or acquire another
 * name while its own acquire holds the lock.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/plugin_label.h"
#include "runtime/context_impl.h"

typedef struct ctx_res ctx_res;

typedef struct ctx_res_layer {
    ctx_res *owner;
    int32_t layer;
} ctx_res_layer;

/* One block of plugin memory. */
typedef struct ctx_res_block {
    void *ptr;
    int64_t bytes;
    int host; /* host memory, for a CPU layer of a GPU engine (CPU fallback) */
    struct ctx_res_block *next;
} ctx_res_block;

typedef struct ctx_res_shared {
    char *name;
    void *object;
    prt_resource_destroy_fn destroy;
    void *user;
    int creating; /* create is running: asking for this name again is a cycle */
    struct ctx_res_shared *next;
} ctx_res_shared;

/* A reported error's message is kept up to this many bytes. */
#define CTX_RES_MSG 512

struct ctx_res {
    prt_context *c;
    pthread_mutex_t lock;
    ctx_res_layer *layers;           /* per layer: its `context` handle */
    prt_plugin_resources *per_layer; /* per layer: what attach_to_context gets */
    ctx_res_block *blocks;
    int64_t bytes;          /* held in blocks */
    ctx_res_shared *shared; /* newest first */
    int has_error;
    prt_status error;
    int32_t error_layer;
    char error_msg[CTX_RES_MSG];
};

static const eng_layer *res_layer(const ctx_res_layer *h)
{
    return &h->owner->c->e->layers[h->layer];
}

static base_label res_label(const ctx_res_layer *h)
{
    const eng_layer *l = res_layer(h);
    return base_plugin_label(l->plugin_namespace, l->plugin_name);
}

static int64_t own_bytes(const prt_context *c)
{
    return c->external_memory ? 0 : prt_engine_context_memory_size(c->e);
}

static prt_status res_alloc(void *context, uint64_t bytes, void **out)
{
    ctx_res_layer *h = context;
    ctx_res *r;
    prt_context *c;
    ctx_res_block *b;
    void *p = NULL;
    prt_status st;
    if (!h || !out)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_plugin_resources.alloc: NULL argument");
    r = h->owner;
    c = r->c;
    *out = NULL;
    if (c->capturing)
        return base_error(PRT_ERR_STATE,
                          "layer '%s' (plugin %s) asked for %llu bytes while a graph is "
                          "being captured, which cannot hold an allocation; allocate in "
                          "attach_to_context or on_shape_change",
                          res_layer(h)->name, res_label(h).s, (unsigned long long)bytes);
    pthread_mutex_lock(&r->lock);
    if (bytes > (uint64_t)INT64_MAX ||
        (c->memory_limit > 0 &&
         (int64_t)bytes > c->memory_limit - own_bytes(c) - r->bytes)) {
        st = base_error(PRT_ERR_OUT_OF_MEMORY,
                        "layer '%s' (plugin %s) asked for %llu bytes of context memory: "
                        "the context holds %lld (arena and workspace %lld, plugins %lld) "
                        "of its limit of %lld",
                        res_layer(h)->name, res_label(h).s, (unsigned long long)bytes,
                        (long long)(own_bytes(c) + r->bytes), (long long)own_bytes(c),
                        (long long)r->bytes, (long long)c->memory_limit);
        pthread_mutex_unlock(&r->lock);
        return st;
    }
    b = base_malloc(sizeof *b);
    /* A CPU layer's plugin gets host memory: its kernels run on the host. */
    if (b)
        b->host = engine_layer_on_host(c->e, res_layer(h));
    if (b && b->host)
        st = (p = base_aligned_alloc(ENG_ARENA_ALIGN, (size_t)bytes ? (size_t)bytes : 1))
                 ? PRT_OK
                 : PRT_ERR_OUT_OF_MEMORY;
    else
        st = b ? c->dev->alloc((size_t)bytes, &p) : PRT_ERR_OUT_OF_MEMORY;
    if (st) {
        base_free(b);
        pthread_mutex_unlock(&r->lock);
        return base_error_prefix(
            PRT_ERR_OUT_OF_MEMORY, "layer '%s' (plugin %s): allocating %llu bytes",
            res_layer(h)->name, res_label(h).s, (unsigned long long)bytes);
    }
    b->ptr = p;
    b->bytes = (int64_t)bytes;
    b->next = r->blocks;
    r->blocks = b;
    r->bytes += b->bytes;
    pthread_mutex_unlock(&r->lock);
    *out = p;
    return PRT_OK;
}

static void res_free(void *context, void *memory)
{
    ctx_res_layer *h = context;
    ctx_res *r;
    ctx_res_block **at;
    if (!h || !memory)
        return;
    r = h->owner;
    pthread_mutex_lock(&r->lock);
    for (at = &r->blocks; *at && (*at)->ptr != memory; at = &(*at)->next)
        ;
    if (*at) {
        ctx_res_block *b = *at;
        *at = b->next;
        r->bytes -= b->bytes;
        if (b->host)
            base_aligned_free(b->ptr);
        else
            r->c->dev->free(b->ptr);
        base_free(b);
    }
    pthread_mutex_unlock(&r->lock);
    /* Nothing to return a status to: a pointer alloc never gave is the
     * plugin's bug, said in the log rather than freed. */
    if (!*at)
        base_log(PRT_SEV_WARNING,
                 "layer '%s' (plugin %s) freed %p, which its context's "
                 "prt_plugin_resources.alloc did not give (or gave and took back); "
                 "ignored",
                 res_layer(h)->name, res_label(h).s, memory);
}

static void res_report_error(void *context, prt_status status, const char *message)
{
    ctx_res_layer *h = context;
    ctx_res *r;
    if (!h)
        return;
    r = h->owner;
    pthread_mutex_lock(&r->lock);
    if (!r->has_error) {
        r->has_error = 1;
        r->error = base_plugin_status(status);
        r->error_layer = h->layer;
        snprintf(r->error_msg, sizeof r->error_msg, "%s",
                 message && message[0] ? message : "no message from the plugin");
    }
    pthread_mutex_unlock(&r->lock);
}

static prt_status res_acquire(void *context, const char *name,
                              prt_resource_create_fn create,
                              prt_resource_destroy_fn destroy, void *user, void **out)
{
    ctx_res_layer *h = context;
    ctx_res *r;
    ctx_res_shared *s;
    prt_status st;
    void *obj = NULL;
    if (!h || !out || !name || !name[0] || !create)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "prt_plugin_resources.acquire: %s",
                          !h || !out ? "NULL context or out"
                          : !create  ? "NULL create"
                                     : "NULL or empty name");
    r = h->owner;
    *out = NULL;
    pthread_mutex_lock(&r->lock);
    for (s = r->shared; s && strcmp(s->name, name) != 0; s = s->next)
        ;
    if (s) {
        st = s->creating ? base_error(PRT_ERR_STATE,
                                      "layer '%s' (plugin %s): acquire('%s') was called "
                                      "while '%s' was being created: its create asks "
                                      "for itself",
                                      res_layer(h)->name, res_label(h).s, name, name)
                         : PRT_OK;
        if (!st)
            *out = s->object;
        pthread_mutex_unlock(&r->lock);
        return st;
    }
    s = base_calloc(1, sizeof *s);
    if (s)
        s->name = base_strdup(name);
    if (!s || !s->name) {
        base_free(s);
        pthread_mutex_unlock(&r->lock);
        return base_error(PRT_ERR_OUT_OF_MEMORY, "acquire('%s'): out of memory", name);
    }
    s->creating = 1;
    s->next = r->shared;
    r->shared = s;
    base_clear_error();
    st = create(user, r->c->e->device, &obj);
    /* Out of the list (objects create acquired went in front of it), and
     * back in front of them below when it succeeded. */
    for (ctx_res_shared **at = &r->shared; *at; at = &(*at)->next)
        if (*at == s) {
            *at = s->next;
            break;
        }
    if (st || !obj) {
        base_free(s->name);
        base_free(s);
        pthread_mutex_unlock(&r->lock);
        if (!st)
            base_error(PRT_ERR_PLUGIN, "create returned no object");
        else if (!prt_last_error()[0])
            base_error(PRT_ERR_PLUGIN, "no message from the plugin");
        return base_error_prefix(
            base_plugin_status(st ? st : PRT_ERR_PLUGIN),
            "layer '%s' (plugin %s): creating the shared object '%s'", res_layer(h)->name,
            res_label(h).s, name);
    }
    s->object = obj;
    s->destroy = destroy;
    s->user = user;
    s->creating = 0;
    /* Objects create made for itself (other names) were put in front of
     * it meanwhile; it goes in front of them, so it is destroyed before
     * what it may use. */
    s->next = r->shared;
    r->shared = s;
    pthread_mutex_unlock(&r->lock);
    *out = obj;
    return PRT_OK;
}

prt_status ctx_resources_create(prt_context *c)
{
    const prt_engine *e = c->e;
    size_t n = (size_t)e->nb_layers + 1;
    pthread_mutexattr_t attr;
    ctx_res *r = base_calloc(1, sizeof *r);
    if (!r)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "prt_context_create: out of memory");
    r->layers = base_calloc(n, sizeof *r->layers);
    r->per_layer = base_calloc(n, sizeof *r->per_layer);
    if (!r->layers || !r->per_layer || pthread_mutexattr_init(&attr)) {
        base_free(r->layers);
        base_free(r->per_layer);
        base_free(r);
        return base_error(PRT_ERR_OUT_OF_MEMORY, "prt_context_create: out of memory");
    }
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    if (pthread_mutex_init(&r->lock, &attr)) {
        pthread_mutexattr_destroy(&attr);
        base_free(r->layers);
        base_free(r->per_layer);
        base_free(r);
        return base_error(PRT_ERR_OUT_OF_MEMORY, "prt_context_create: no lock");
    }
    pthread_mutexattr_destroy(&attr);
    r->c = c;
    for (int32_t i = 0; i < e->nb_layers; i++) {
        prt_plugin_resources *p = &r->per_layer[i];
        r->layers[i].owner = r;
        r->layers[i].layer = i;
        p->struct_size = sizeof *p;
        p->abi_version = PRT_PLUGIN_ABI_VERSION;
        p->device = e->layers[i].device;
        p->context = &r->layers[i];
        p->alloc = res_alloc;
        p->free = res_free;
        p->report_error = res_report_error;
        p->acquire = res_acquire;
    }
    c->res = r;
    return PRT_OK;
}

prt_plugin_resources *ctx_resources_for(prt_context *c, int32_t li)
{
    return &c->res->per_layer[li];
}

void ctx_resources_destroy(prt_context *c)
{
    ctx_res *r = c->res;
    if (!r)
        return;
    /* Newest first: an object made while another was being created (by
     * its create) comes after it in the list, so it outlives it. */
    while (r->shared) {
        ctx_res_shared *s = r->shared;
        r->shared = s->next;
        if (s->destroy)
            s->destroy(s->user, s->object);
        base_free(s->name);
        base_free(s);
    }
    while (r->blocks) {
        ctx_res_block *b = r->blocks;
        r->blocks = b->next;
        if (b->host)
            base_aligned_free(b->ptr);
        else
            c->dev->free(b->ptr);
        base_free(b);
    }
    pthread_mutex_destroy(&r->lock);
    base_free(r->layers);
    base_free(r->per_layer);
    base_free(r);
    c->res = NULL;
}

prt_status ctx_resources_take_error(prt_context *c)
{
    ctx_res *r = c->res;
    prt_status st = PRT_OK;
    if (!r)
        return PRT_OK;
    pthread_mutex_lock(&r->lock);
    if (r->has_error) {
        const eng_layer *l = &c->e->layers[r->error_layer];
        st = base_error(r->error, "layer '%s' (plugin %s) reported an error: %s", l->name,
                        base_plugin_label(l->plugin_namespace, l->plugin_name).s,
                        r->error_msg);
        r->has_error = 0;
    }
    pthread_mutex_unlock(&r->lock);
    return st;
}

int64_t prt_context_get_memory_size(const prt_context *c)
{
    int64_t held;
    if (!c)
        return 0;
    if (!c->res)
        return own_bytes(c);
    pthread_mutex_lock(&c->res->lock);
    held = c->res->bytes;
    pthread_mutex_unlock(&c->res->lock);
    return own_bytes(c) + held;
}
