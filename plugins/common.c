/* Shared pieces of the standard plugin library: host services, field
 * validation, half floats, the plugin-object scaffold. See common.h. */
#include "common.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PRT_PLUGINS_CUDA_MODULE
#include <dlfcn.h>
#endif

/* ------------------------------------------------------------------------ */
/* Host services                                                             */
/* ------------------------------------------------------------------------ */

/* A copy of the host's entries. The entry point may run more than once (two
 * registries loading the library share one dlopen handle); plg_host_set
 * writes only when something changed, so the common case (the same host
 * again) never writes while another thread reads. */
static struct {
    void *host;
    void (*log)(void *host, int32_t severity, const char *message);
    void (*set_error)(void *host, prt_status status, const char *message);
    void (*parallel_for)(void *host, int64_t n, int64_t grain, prt_range_fn fn,
                         void *arg);
} plg_host;

void plg_host_set(const prt_host_services *services)
{
    void *host = NULL;
    void (*log_fn)(void *, int32_t, const char *) = NULL;
    void (*err_fn)(void *, prt_status, const char *) = NULL;
    void (*pf_fn)(void *, int64_t, int64_t, prt_range_fn, void *) = NULL;
    if (PLG_HAS(services, prt_host_services, parallel_for))
        pf_fn = services->parallel_for;
    if (plg_host.parallel_for != pf_fn)
        plg_host.parallel_for = pf_fn;
    if (PLG_HAS(services, prt_host_services, host))
        host = services->host;
    if (PLG_HAS(services, prt_host_services, log))
        log_fn = services->log;
    if (PLG_HAS(services, prt_host_services, set_error))
        err_fn = services->set_error;
    if (plg_host.host != host)
        plg_host.host = host;
    if (plg_host.log != log_fn)
        plg_host.log = log_fn;
    if (plg_host.set_error != err_fn)
        plg_host.set_error = err_fn;
}

void plg_parallel_for(int64_t n, int64_t grain, prt_range_fn fn, void *arg)
{
    if (plg_host.parallel_for)
        plg_host.parallel_for(plg_host.host, n, grain, fn, arg);
    else if (n > 0)
        fn(arg, 0, n);
}

prt_status plg_error(prt_status status, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (plg_host.set_error)
        plg_host.set_error(plg_host.host, status, buf);
    return status;
}

void plg_log(int32_t severity, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    if (!plg_host.log)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    plg_host.log(plg_host.host, severity, buf);
}

const char *plg_dtype_name(int32_t dtype)
{
    static const char *const names[PRT_DTYPE_COUNT] = {
        "float32", "float16", "bfloat16", "int8",         "uint8",
        "int32",   "int64",   "bool",     "float8e4m3fn", "float8e5m2"};
    if (dtype < 0 || dtype >= PRT_DTYPE_COUNT)
        return "invalid";
    return names[dtype];
}

const char *plg_field_type_name(int32_t type)
{
    static const char *const names[PRT_FIELD_TYPE_COUNT] = {
        "int8",    "int16",    "int32", "int64", "float16", "float32",
        "float64", "bfloat16", "char",  "dims",  "bytes"};
    if (type < 0 || type >= PRT_FIELD_TYPE_COUNT)
        return "invalid";
    return names[type];
}

size_t plg_dtype_size(int32_t dtype)
{
    switch (dtype) {
    case PRT_FLOAT32:
    case PRT_INT32:
        return 4;
    case PRT_FLOAT16:
    case PRT_BFLOAT16:
        return 2;
    case PRT_INT8:
    case PRT_UINT8:
    case PRT_BOOL:
    case PRT_FLOAT8E4M3FN:
    case PRT_FLOAT8E5M2:
        return 1;
    case PRT_INT64:
        return 8;
    default:
        return 0;
    }
}

/* ------------------------------------------------------------------------ */
/* Fields                                                                    */
/* ------------------------------------------------------------------------ */

/* "NonZeroPlugin (layer 'nz'): " or "NonZeroPlugin: ". */
static void fields_prefix(const plg_fields *f, char *buf, size_t cap)
{
    const char *plugin = f->plugin ? f->plugin : "plugin";
    if (f->layer && f->layer[0])
        snprintf(buf, cap, "%s (layer '%s'): ", plugin, f->layer);
    else
        snprintf(buf, cap, "%s: ", plugin);
}

prt_status plg_fields_validate(const plg_fields *f)
{
    char pre[160];
    if (!f->fc)
        return PRT_OK;
    fields_prefix(f, pre, sizeof pre);
    if (f->fc->nb_fields < 0)
        return plg_error(PRT_ERR_INVALID_ARGUMENT,
                         "%sfield collection has a negative count (%d)", pre,
                         (int)f->fc->nb_fields);
    if (f->fc->nb_fields > 0 && !f->fc->fields)
        return plg_error(PRT_ERR_INVALID_ARGUMENT,
                         "%sfield collection has %d fields but no array", pre,
                         (int)f->fc->nb_fields);
    return PRT_OK;
}

prt_status plg_fields_find(const plg_fields *f, const char *name, const prt_field **out)
{
    const prt_field *found = NULL;
    *out = NULL;
    if (!f->fc || f->fc->nb_fields <= 0 || !f->fc->fields)
        return PRT_OK;
    for (int32_t i = 0; i < f->fc->nb_fields; i++) {
        const prt_field *fi = &f->fc->fields[i];
        if (!fi->name || strcmp(fi->name, name) != 0)
            continue;
        if (found) {
            char pre[160];
            fields_prefix(f, pre, sizeof pre);
            return plg_error(PRT_ERR_INVALID_ARGUMENT,
                             "%sfield '%s' is given more than once", pre, name);
        }
        found = fi;
    }
    *out = found;
    return PRT_OK;
}

prt_status plg_fields_check(const plg_fields *f, const prt_field *field, int32_t type,
                            int64_t min_len, int64_t max_len)
{
    char pre[160];
    fields_prefix(f, pre, sizeof pre);
    if (field->type != type)
        return plg_error(PRT_ERR_INVALID_ARGUMENT,
                         "%sfield '%s' has type %s (%d), expected %s", pre, field->name,
                         plg_field_type_name(field->type), (int)field->type,
                         plg_field_type_name(type));
    if (field->length < min_len || (max_len >= 0 && field->length > max_len)) {
        if (min_len == max_len)
            return plg_error(PRT_ERR_INVALID_ARGUMENT,
                             "%sfield '%s' (%s) has %lld elements, expected "
                             "%lld",
                             pre, field->name, plg_field_type_name(type),
                             (long long)field->length, (long long)min_len);
        if (max_len < 0)
            return plg_error(PRT_ERR_INVALID_ARGUMENT,
                             "%sfield '%s' (%s) has %lld elements, expected at "
                             "least %lld",
                             pre, field->name, plg_field_type_name(type),
                             (long long)field->length, (long long)min_len);
        return plg_error(PRT_ERR_INVALID_ARGUMENT,
                         "%sfield '%s' (%s) has %lld elements, expected %lld "
                         "to %lld",
                         pre, field->name, plg_field_type_name(type),
                         (long long)field->length, (long long)min_len,
                         (long long)max_len);
    }
    if (field->length > 0 && !field->data)
        return plg_error(PRT_ERR_INVALID_ARGUMENT,
                         "%sfield '%s' has %lld elements but no data", pre, field->name,
                         (long long)field->length);
    return PRT_OK;
}

prt_status plg_fields_get_i32(const plg_fields *f, const char *name, int32_t dflt,
                              int32_t *out)
{
    const prt_field *field;
    prt_status st = plg_fields_find(f, name, &field);
    if (st != PRT_OK)
        return st;
    if (!field) {
        *out = dflt;
        return PRT_OK;
    }
    st = plg_fields_check(f, field, PRT_FIELD_INT32, 1, 1);
    if (st != PRT_OK)
        return st;
    memcpy(out, field->data, sizeof *out); /* data may be unaligned */
    return PRT_OK;
}

prt_status plg_fields_get_i32_array(const plg_fields *f, const char *name, int32_t *dst,
                                    int64_t capacity, int64_t *out_len)
{
    const prt_field *field;
    prt_status st = plg_fields_find(f, name, &field);
    if (st != PRT_OK)
        return st;
    *out_len = 0;
    if (!field)
        return PRT_OK;
    st = plg_fields_check(f, field, PRT_FIELD_INT32, 0, capacity);
    if (st != PRT_OK)
        return st;
    if (field->length > 0)
        memcpy(dst, field->data, (size_t)field->length * sizeof *dst);
    *out_len = field->length;
    return PRT_OK;
}

prt_status plg_fields_check_type(const plg_fields *f, const char *name, int32_t type)
{
    const prt_field *field;
    prt_status st = plg_fields_find(f, name, &field);
    if (st != PRT_OK || !field)
        return st;
    return plg_fields_check(f, field, type, 0, -1);
}

/* ------------------------------------------------------------------------ */
/* Half precision                                                            */
/* ------------------------------------------------------------------------ */

float plg_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t man = h & 0x3FFu;
    uint32_t bits;
    float f;
    if (exp == 0) {
        /* Zero or subnormal: man * 2^-24, exact in binary32. */
        f = (float)man * 5.9604644775390625e-8f;
        return sign ? -f : f;
    }
    if (exp == 31)
        bits = sign | 0x7F800000u | (man << 13); /* inf, or NaN kept NaN */
    else
        bits = sign | ((exp + 112u) << 23) | (man << 13);
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t plg_float_to_half(float f)
{
    uint32_t x, ax, sign;
    memcpy(&x, &f, sizeof x);
    sign = (x >> 16) & 0x8000u;
    ax = x & 0x7FFFFFFFu;
    if (ax > 0x7F800000u) /* NaN: quiet, keep the top payload bits */
        return (uint16_t)(sign | 0x7E00u | ((ax >> 13) & 0x3FFu));
    /* 65520 is half-way between 65504 (largest half, odd mantissa) and
     * 65536; ties to even round it up, so it and above become infinity. */
    if (ax >= 0x477FF000u)
        return (uint16_t)(sign | 0x7C00u);
    if (ax < 0x38800000u) {
        /* Below 2^-14: a subnormal half, round(|f| * 2^24). With the
         * implicit bit m = 1.man * 2^23 and biased exponent e, that is
         * m >> (126 - e); below e = 102 everything rounds to zero. */
        uint32_t e = ax >> 23, m, s, q, rem, halfway;
        if (e < 102)
            return (uint16_t)sign;
        m = (ax & 0x7FFFFFu) | 0x800000u;
        s = 126u - e;
        q = m >> s;
        rem = m & ((1u << s) - 1u);
        halfway = 1u << (s - 1u);
        if (rem > halfway || (rem == halfway && (q & 1u)))
            q++; /* may carry into the smallest normal: still correct */
        return (uint16_t)(sign | q);
    }
    {
        uint32_t h = (((ax >> 23) - 112u) << 10) | ((ax & 0x7FFFFFu) >> 13);
        uint32_t rem = ax & 0x1FFFu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
            h++; /* a carry into the exponent is the right answer */
        return (uint16_t)(sign | h);
    }
}

/* ------------------------------------------------------------------------ */
/* Plugin objects                                                            */
/* ------------------------------------------------------------------------ */

plg_object *plg_object_create(const prt_plugin_creator *creator,
                              const prt_plugin_vtable *vt, size_t size, const char *layer)
{
    plg_object *o = calloc(1, size);
    if (!o) {
        plg_error(PRT_ERR_OUT_OF_MEMORY,
                  "%s: out of memory allocating a plugin object (%zu bytes)",
                  creator->name, size);
        return NULL;
    }
    o->base.vt = vt;
    o->creator = creator;
    o->size = size;
    o->target = -1;
    if (layer) {
        size_t n = strlen(layer);
        if (n >= sizeof o->layer)
            n = sizeof o->layer - 1;
        memcpy(o->layer, layer, n);
        o->layer[n] = '\0';
    }
    return o;
}

prt_status plg_fail(const plg_object *o, prt_status status, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (o->layer[0])
        return plg_error(status, "%s (layer '%s'): %s", o->creator->name, o->layer, msg);
    return plg_error(status, "%s: %s", o->creator->name, msg);
}

static const char *core_name(const prt_plugin *self)
{
    return plg_cobj(self)->creator->name;
}

static const char *core_version(const prt_plugin *self)
{
    return plg_cobj(self)->creator->version;
}

static const char *core_namespace(const prt_plugin *self)
{
    return plg_cobj(self)->creator->plugin_namespace;
}

#ifdef PRT_PLUGINS_CUDA
#ifdef PRT_PLUGINS_CUDA_MODULE
/* Threads racing here all get the same handle from dlopen (it counts
 * references) and store the same table. */
static const plg_cuda_api *_Atomic plg_cuda_table;
static _Atomic int plg_cuda_tried;

const plg_cuda_api *plg_cuda(void)
{
    const plg_cuda_api *t = plg_cuda_table;
    void *h;
    if (t || plg_cuda_tried)
        return t;
    /* Found through this library's RUNPATH ($ORIGIN): the module sits
     * beside it. */
    h = dlopen(PRT_PLUGINS_CUDA_MODULE, RTLD_NOW | RTLD_LOCAL);
    t = h ? (const plg_cuda_api *)dlsym(h, PLG_CUDA_API_SYMBOL) : NULL;
    if (t && t->struct_size < sizeof(plg_cuda_api))
        t = NULL; /* a module from another build */
    if (!t && h)
        dlclose(h);
    plg_cuda_table = t;
    plg_cuda_tried = 1;
    return t;
}

prt_status plg_cuda_unavailable(const plg_object *o)
{
    const char *why = dlerror();
    return plg_fail(o, PRT_ERR_UNSUPPORTED,
                    "the CUDA kernels (%s) could not be loaded%s%s",
                    PRT_PLUGINS_CUDA_MODULE, why ? ": " : "", why ? why : "");
}
#else
const plg_cuda_api *plg_cuda(void)
{
    return &plg_cuda_api_v1;
}

prt_status plg_cuda_unavailable(const plg_object *o)
{
    return plg_fail(o, PRT_ERR_INTERNAL, "the CUDA kernels are missing");
}
#endif

/* 0: not asked yet, 1: no usable GPU, 2: a GPU. Threads racing to fill it
 * compute the same answer. */
static _Atomic int plg_cuda_state;

int plg_cuda_usable(void)
{
    int s = plg_cuda_state;
    if (s == 0) {
        const plg_cuda_api *cu = plg_cuda();
        s = cu && cu->device_count() > 0 ? 2 : 1;
        plg_cuda_state = s;
    }
    return s == 2;
}
#endif

static uint32_t core_devices(const prt_plugin *self)
{
    (void)self;
#ifdef PRT_PLUGINS_CUDA
    /* The library loads without a GPU (static CUDA runtime); there it offers
     * only the CPU, so a build for CUDA fails on the device check first. */
    if (!plg_cuda_usable())
        return PLG_DEVICES & ~(1u << PRT_DEVICE_CUDA);
#endif
    return PLG_DEVICES;
}

const prt_plugin_core plg_core = {sizeof(prt_plugin_core),
                                  PRT_PLUGIN_ABI_VERSION,
                                  core_name,
                                  core_version,
                                  core_namespace,
                                  core_devices};

prt_status plg_set_tactic(prt_plugin *self, int32_t tactic)
{
    if (tactic != 0)
        return plg_fail(plg_obj(self), PRT_ERR_INVALID_ARGUMENT,
                        "unknown tactic %d (only the default, 0, exists)", (int)tactic);
    return PRT_OK;
}

prt_plugin *plg_clone(const prt_plugin *self)
{
    const plg_object *o = plg_cobj(self);
    plg_object *c = malloc(o->size);
    if (!c) {
        plg_fail(o, PRT_ERR_OUT_OF_MEMORY, "out of memory cloning (%zu bytes)", o->size);
        return NULL;
    }
    memcpy(c, o, o->size);
    c->serialized.nb_fields = 0;
    c->serialized.fields = NULL;
    return &c->base;
}

prt_plugin *plg_attach_to_context(prt_plugin *self, prt_plugin_resources *resources)
{
    (void)resources;
    return plg_clone(self); /* no per-context resources: a full copy */
}

void plg_destroy(prt_plugin *self)
{
    free(self);
}

prt_status plg_set_target_device(prt_plugin *self, int32_t device)
{
    if (device < 0 || device >= PRT_DEVICE_COUNT)
        return plg_fail(plg_obj(self), PRT_ERR_INVALID_ARGUMENT, "unknown device %d",
                        (int)device);
    plg_obj(self)->target = device;
    return PRT_OK;
}

#ifdef PRT_PLUGINS_CUDA
int plg_sizes_for_cuda(const prt_plugin *self)
{
    const int32_t t = plg_cobj(self)->target;
    return t == PRT_DEVICE_CUDA || (t < 0 && plg_cuda_usable());
}
#endif

prt_status plg_get_workspace_size(prt_plugin *self, const prt_dynamic_tensor_desc *in,
                                  int32_t nb_in, const prt_dynamic_tensor_desc *out,
                                  int32_t nb_out, int64_t *out_bytes)
{
    (void)self, (void)in, (void)nb_in, (void)out, (void)nb_out;
    *out_bytes = 0;
    return PRT_OK;
}

prt_status plg_get_valid_tactics(prt_plugin *self, int32_t *tactics, int32_t capacity,
                                 int32_t *out_count)
{
    (void)self, (void)tactics, (void)capacity;
    *out_count = 0;
    return PRT_OK;
}

int32_t plg_no_aliased_input(const prt_plugin *self, int32_t output_index)
{
    (void)self, (void)output_index;
    return -1;
}

prt_status plg_check_enqueue(const plg_object *o, int32_t device,
                             const prt_tensor_desc *in_desc,
                             const prt_tensor_desc *out_desc, const void *const *inputs,
                             void *const *outputs)
{
    if (device < 0 || device >= PRT_DEVICE_COUNT || !(PLG_DEVICES & (1u << device)))
        return plg_fail(o, PRT_ERR_UNSUPPORTED,
                        "enqueue on device %d: this build of the library runs "
                        "on the CPU%s only",
                        (int)device,
                        (PLG_DEVICES & (1u << PRT_DEVICE_CUDA)) ? " and CUDA" : "");
    if (!in_desc || !out_desc || !inputs || !outputs)
        return plg_fail(o, PRT_ERR_INVALID_ARGUMENT,
                        "enqueue without tensor descriptors or pointers");
    return PRT_OK;
}

prt_status plg_list_tactics(const int32_t *list, int32_t n, int32_t *tactics,
                            int32_t capacity, int32_t *out_count)
{
    for (int32_t i = 0; i < n && i < capacity && tactics; i++)
        tactics[i] = list[i];
    *out_count = n;
    return PRT_OK;
}

prt_status plg_check_tactic(const plg_object *o, int32_t tactic, const int32_t *list,
                            int32_t n)
{
    char valid[96];
    size_t len;
    if (tactic == 0)
        return PRT_OK;
    for (int32_t i = 0; i < n; i++)
        if (list[i] == tactic)
            return PRT_OK;
    len = (size_t)snprintf(valid, sizeof valid, "0");
    for (int32_t i = 0; i < n && len < sizeof valid; i++)
        if (list[i] != 0) /* said first */
            len +=
                (size_t)snprintf(valid + len, sizeof valid - len, ", %d", (int)list[i]);
    return plg_fail(o, PRT_ERR_INVALID_ARGUMENT, "unknown tactic %d (valid: %s)",
                    (int)tactic, valid);
}

#ifdef PRT_PLUGINS_CUDA
void plg_unary_io_fill(plg_unary_io *io, const prt_tensor_desc *in,
                       const void *const *inputs, void *const *outputs)
{
    memset(io, 0, sizeof *io);
    io->x = inputs[0];
    io->y = outputs[0];
    io->dtype = in[0].dtype;
    io->rank = in[0].dims.nb_dims;
    memcpy(io->dims, in[0].dims.d, sizeof io->dims);
    io->dims_device = in[0].dims_device;
}

prt_status plg_cuda_fail(const plg_object *o, int err, const char *what)
{
    const plg_cuda_api *cu = plg_cuda();
    return plg_fail(o, PRT_ERR_PLUGIN, "%s failed on CUDA: %s (%s)", what,
                    cu ? cu->error_name(err) : "?", cu ? cu->error_string(err) : "?");
}
#endif

prt_status plg_check_io(const plg_object *o, int32_t nb_in, int32_t nb_out,
                        int32_t want_in, int32_t want_out)
{
    if (nb_in != want_in || nb_out != want_out)
        return plg_fail(o, PRT_ERR_INVALID_ARGUMENT,
                        "expects %d input%s and %d output%s, got %d and %d", (int)want_in,
                        want_in == 1 ? "" : "s", (int)want_out, want_out == 1 ? "" : "s",
                        (int)nb_in, (int)nb_out);
    return PRT_OK;
}

int plg_float_dtype_ok(int32_t dtype)
{
    return dtype == PRT_FLOAT32 || dtype == PRT_FLOAT16;
}

prt_status plg_check_float_input(const plg_object *o, int32_t dtype)
{
    if (!plg_float_dtype_ok(dtype))
        return plg_fail(o, PRT_ERR_UNSUPPORTED,
                        "input dtype %s is not supported (float32 or float16)",
                        plg_dtype_name(dtype));
    return PRT_OK;
}

prt_status plg_check_same_dtype(const plg_object *o, int32_t out_dtype, int32_t in_dtype)
{
    if (out_dtype != in_dtype)
        return plg_fail(o, PRT_ERR_INVALID_ARGUMENT,
                        "output dtype %s differs from input dtype %s",
                        plg_dtype_name(out_dtype), plg_dtype_name(in_dtype));
    return PRT_OK;
}

prt_status plg_check_input_volume(const plg_object *o, const prt_dims *d,
                                  int64_t *out_vol)
{
    int64_t vol = plg_volume(d);
    char a[96];
    if (vol < 0)
        return plg_fail(o, PRT_ERR_SHAPE, "input dims %s are not valid",
                        plg_dims_str(d, a, sizeof a));
    if (out_vol)
        *out_vol = vol;
    return PRT_OK;
}

const prt_tensor_desc *plg_linear_desc(int32_t pos, const prt_dynamic_tensor_desc *in_out,
                                       int32_t nb_inputs, int32_t nb_outputs,
                                       int32_t want_in, int32_t want_out)
{
    const prt_tensor_desc *d;
    if (nb_inputs != want_in || nb_outputs != want_out || pos < 0 ||
        pos >= want_in + want_out)
        return NULL;
    d = &in_out[pos].desc;
    return d->format == PRT_FORMAT_LINEAR ? d : NULL;
}

int32_t plg_supports_float_same_dtype(int32_t pos, const prt_dynamic_tensor_desc *in_out,
                                      int32_t nb_inputs, int32_t nb_outputs,
                                      int32_t want_in, int32_t want_out)
{
    const prt_tensor_desc *d =
        plg_linear_desc(pos, in_out, nb_inputs, nb_outputs, want_in, want_out);
    if (!d)
        return 0;
    if (pos == 0)
        return plg_float_dtype_ok(d->dtype);
    return d->dtype == in_out[0].desc.dtype;
}

int64_t plg_volume(const prt_dims *d)
{
    int64_t v = 1;
    if (d->nb_dims < 0 || d->nb_dims > PRT_MAX_DIMS)
        return -1;
    for (int32_t i = 0; i < d->nb_dims; i++) {
        if (d->d[i] < 0)
            return -1;
        if (d->d[i] != 0 && v > INT64_MAX / d->d[i])
            return -1;
        v *= d->d[i];
    }
    return v;
}

const char *plg_dims_str(const prt_dims *d, char *buf, size_t cap)
{
    size_t n = 0;
    int32_t nb = d->nb_dims;
    if (nb < 0 || nb > PRT_MAX_DIMS)
        nb = 0;
    if (cap == 0)
        return buf;
    buf[0] = '\0';
    n += (size_t)snprintf(buf + n, cap - n, "[");
    for (int32_t i = 0; i < nb && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "",
                              (long long)d->d[i]);
    if (n < cap)
        snprintf(buf + n, cap - n, "]");
    return buf;
}

const prt_plugin_vtable *plg_phase_vtable(const char *plugin, int32_t phase,
                                          const prt_plugin_vtable *build_vt,
                                          const prt_plugin_vtable *runtime_vt)
{
    if (phase == PRT_PHASE_BUILD)
        return build_vt;
    if (phase == PRT_PHASE_RUNTIME)
        return runtime_vt;
    plg_error(PRT_ERR_INVALID_ARGUMENT,
              "%s: unknown phase %d (expected PRT_PHASE_BUILD or "
              "PRT_PHASE_RUNTIME)",
              plugin, (int)phase);
    return NULL;
}
