/*
 * Loading a model: its configuration's parameters, its own plugin registry,
 * the engine (a plan, or an ONNX model built with the configuration's
 * profile), and the configuration checked against the engine and completed
 * from it.
 *
 * Parameters (config.pbtxt `parameters`, string values):
 *   plugins      the plugin libraries of this model's registry, separated
 *                by commas; relative paths are relative to the model's
 *                directory, `standard` is the standard library. Absent: the
 *                standard library alone (plugins.c)
 *   device       "cpu" or "cuda": the device an ONNX model is built for
 *                (default: cuda when the instance groups are KIND_GPU); a
 *                plan runs where it was built, and a device that disagrees
 *                is refused. On CUDA the model is built (or loaded) on the
 *                first GPU its KIND_GPU groups name and loaded again on each
 *                further GPU an instance is on
 *   threads      at most this many enqueues of the model at once, across
 *                its instances, sharing that many scratch blocks (0 or
 *                absent: no limit, one block per instance)
 *   min_shapes, opt_shapes, max_shapes
 *                the optimization profile an ONNX model is built with:
 *                NAME:DIMS[,NAME:DIMS...] with DIMS like 1x32 (full
 *                shapes, batch dim included); what they leave out comes
 *                from the configuration (set_profile)
 *   plugin_ops   OP=PLUGIN[@VERSION][/NAMESPACE][,...]: import every OP
 *                node of an ONNX model as that plugin
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "json.h"
#include "model.h"
#include "plugrt/onnx.h"

#define TP_PATH_MAX 4096

/* ---- the configuration --------------------------------------------------- */

/* A string parameter (NULL if absent). */
static const char *param(const tj_value *cfg, const char *key)
{
    return tj_as_string(tj_get(tj_get(tj_get(cfg, "parameters"), key), "string_value"));
}

static int json_dims(const tj_value *arr, prt_dims *out)
{
    out->nb_dims = 0;
    if (!arr)
        return 1;
    if (arr->kind != TJ_ARRAY || arr->count > PRT_MAX_DIMS)
        return 0;
    for (int32_t k = 0; k < arr->count; k++)
        if (!tj_as_int(arr->items[k], &out->d[k]) || out->d[k] < -1)
            return 0;
    out->nb_dims = arr->count;
    return 1;
}

static tj_value *json_dims_new(const prt_dims *d, int32_t from)
{
    tj_value *a = tj_new(TJ_ARRAY);
    for (int32_t k = from; a && k < d->nb_dims; k++)
        if (!tj_append(a, tj_new_int(d->d[k]))) {
            tj_free(a);
            return NULL;
        }
    return a;
}

/* The dims of a config entry as the engine has them: its reshape's shape
 * when it has one (Triton reshapes requests and responses between the two,
 * as for the TensorRT backend), else its dims; batch dim excluded either
 * way. 0 when malformed. */
static int entry_engine_dims(const tj_value *entry, prt_dims *out, int *has_reshape)
{
    const tj_value *reshape = tj_get(entry, "reshape");
    *has_reshape = reshape != NULL;
    return json_dims(reshape ? tj_get(reshape, "shape") : tj_get(entry, "dims"), out);
}

/* The entry named `name` in the config's "input" or "output" array. */
static tj_value *config_entry(const tj_value *cfg, const char *section, const char *name)
{
    tj_value *arr = tj_get(cfg, section);
    for (int32_t k = 0; arr && arr->kind == TJ_ARRAY && k < arr->count; k++) {
        const char *n = tj_as_string(tj_get(arr->items[k], "name"));
        if (n && strcmp(n, name) == 0)
            return arr->items[k];
    }
    return NULL;
}

/* ---- files and plugins ------------------------------------------------- */

static TRITONSERVER_Error *read_file(const char *path, void **out, size_t *out_size)
{
    FILE *f = fopen(path, "rb");
    long n;
    void *buf;
    if (!f)
        return tp_error(TRITONSERVER_ERROR_NOT_FOUND, "cannot open %s: %s", path,
                        strerror(errno));
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return tp_error(TRITONSERVER_ERROR_INTERNAL, "cannot read %s", path);
    }
    buf = malloc(n ? (size_t)n : 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        return tp_error(TRITONSERVER_ERROR_INTERNAL, "cannot read %s", path);
    }
    fclose(f);
    *out = buf;
    *out_size = (size_t)n;
    return NULL;
}

static int file_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f)
        fclose(f);
    return f != NULL;
}

static void trim(char *s)
{
    size_t n = strlen(s), a = 0;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = 0;
    while (s[a] == ' ' || s[a] == '\t')
        a++;
    memmove(s, s + a, n - a + 1);
}

TRITONSERVER_Error *tp_each_item(tp_model *m, const char *list, tp_item_fn fn, void *ctx)
{
    char *copy, *save = NULL;
    TRITONSERVER_Error *err = NULL;
    if (!list)
        return NULL;
    if (!(copy = strdup(list)))
        return tp_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    for (char *tok = strtok_r(copy, ",", &save); tok && !err;
         tok = strtok_r(NULL, ",", &save)) {
        trim(tok);
        if (tok[0])
            err = fn(m, tok, ctx);
    }
    free(copy);
    return err;
}

/* ---- building an ONNX model ------------------------------------------- */

/* "NAME:1x32,NAME2:4" -> the dims given for `name` (1) or none (0); -1 on
 * a malformed list, with the reason in why. */
static int shape_for(const char *list, const char *name, prt_dims *out, char *why,
                     size_t why_size)
{
    const char *p = list;
    size_t nlen = strlen(name);
    if (!list)
        return 0;
    while (*p) {
        const char *end = strchr(p, ','), *colon;
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len && *p == ' ')
            p++, len--;
        colon = memchr(p, ':', len);
        if (!colon) {
            snprintf(why, why_size, "'%.*s' is not NAME:DIMS", (int)len, p);
            return -1;
        }
        if ((size_t)(colon - p) == nlen && memcmp(p, name, nlen) == 0) {
            const char *q = colon + 1, *stop = p + len;
            out->nb_dims = 0;
            while (q < stop) {
                char *e;
                long long v = strtoll(q, &e, 10);
                if (e == q || v < 0 || out->nb_dims == PRT_MAX_DIMS ||
                    (e < stop && *e != 'x' && *e != ' ')) {
                    snprintf(why, why_size, "bad dims in '%.*s'", (int)len, p);
                    return -1;
                }
                out->d[out->nb_dims++] = v;
                q = e;
                while (q < stop && (*q == 'x' || *q == ' '))
                    q++;
            }
            return 1;
        }
        if (!end)
            break;
        p = end + 1;
    }
    return 0;
}

/* One entry of the plugin_ops parameter: OP=PLUGIN[@VERSION][/NAMESPACE]. */
static TRITONSERVER_Error *map_op(tp_model *m, char *item, void *ctx)
{
    prt_onnx_parser *parser = ctx;
    char *eq, *at, *slash;
    const char *ns = NULL, *ver = NULL;
    prt_status st;
    if (!(eq = strchr(item, '=')))
        return tp_error(TRITONSERVER_ERROR_INVALID_ARG,
                        "model '%s': plugin_ops entry '%s' is not OP=PLUGIN[@VERSION]"
                        "[/NAMESPACE]",
                        m->name, item);
    *eq++ = 0;
    if ((slash = strchr(eq, '/'))) {
        *slash = 0;
        ns = slash + 1;
    }
    if ((at = strchr(eq, '@'))) {
        *at = 0;
        ver = at + 1;
    }
    if ((st = prt_onnx_parser_map_op(parser, item, ns, eq, ver)))
        return tp_prt_error(st, "plugin_ops");
    return NULL;
}

/* One NAME:DIMS of a shapes parameter (ctx: the parameter and the
 * network): NAME must be an input of the network. */
typedef struct tp_shapes_ctx {
    const char *param;
    prt_network *net;
} tp_shapes_ctx;

static TRITONSERVER_Error *known_input(tp_model *m, char *item, void *ctx)
{
    const tp_shapes_ctx *c = ctx;
    char names[1024] = "";
    char *colon = strchr(item, ':');
    if (colon)
        *colon = 0;
    for (int32_t i = 0; i < prt_network_input_count(c->net); i++) {
        int32_t t;
        const char *name;
        size_t o = strlen(names);
        if (prt_network_get_input(c->net, i, &t) ||
            prt_network_get_tensor(c->net, t, &name, NULL, NULL))
            continue;
        if (strcmp(name, item) == 0)
            return NULL;
        snprintf(names + o, sizeof names - o, "%s'%s'", i ? ", " : "", name);
    }
    return tp_error(TRITONSERVER_ERROR_INVALID_ARG,
                    "model '%s': parameter %s names '%s', which is not an input of the "
                    "ONNX model (its inputs: %s)",
                    m->name, c->param, item, names);
}

/* The profile of each dynamic network input, dim by dim:
 *   - the shape min_shapes, opt_shapes or max_shapes gives (full shapes,
 *     batch dim included), for that one of the three;
 *   - else what the configuration fixes: a dim its input's dims give, the
 *     batch dim 1 to max_batch_size (opt: max_batch_size);
 *   - else min 1, opt the max, and the max from opt_shapes; a dynamic dim
 *     that nothing bounds is refused, naming the input and the dim.
 * So max_batch_size and the configuration's dims suffice where they fix
 * every dynamic dim, and max_shapes alone gives a range from 1 (plugrt
 * build, by contrast, pins a missing min to the max). */
static TRITONSERVER_Error *set_profile(tp_model *m, const tj_value *cfg, prt_network *net,
                                       prt_builder_config *bc, int64_t max_batch)
{
    static const char *keys[3] = {"min_shapes", "opt_shapes", "max_shapes"};
    const char *lists[3];
    int32_t profile = -1;
    TRITONSERVER_Error *err;
    for (int w = 0; w < 3; w++) {
        tp_shapes_ctx c = {keys[w], net};
        lists[w] = param(cfg, keys[w]);
        if ((err = tp_each_item(m, lists[w], known_input, &c)))
            return err;
    }
    for (int32_t i = 0; i < prt_network_input_count(net); i++) {
        int32_t t, dynamic = 0, off = max_batch > 0 ? 1 : 0;
        const char *name;
        prt_dims dims, fix, given[3], p[3], cd;
        int got[3], reshaped;
        char why[256] = "", a[160];
        prt_status st;
        const tj_value *entry;
        if ((st = prt_network_get_input(net, i, &t)) ||
            (st = prt_network_get_tensor(net, t, &name, NULL, &dims)))
            return tp_prt_error(st, "reading the network's inputs");
        for (int32_t k = 0; k < dims.nb_dims; k++)
            dynamic |= dims.d[k] < 0;
        if (!dynamic)
            continue;
        /* What the configuration fixes (through its reshape, if any): -1
         * where it does not. */
        fix = dims;
        entry = config_entry(cfg, "input", name);
        if (entry && entry_engine_dims(entry, &cd, &reshaped) &&
            cd.nb_dims + off == dims.nb_dims)
            for (int32_t k = 0; k < cd.nb_dims; k++)
                if (dims.d[k + off] < 0)
                    fix.d[k + off] = cd.d[k];
        for (int w = 0; w < 3; w++) {
            got[w] = shape_for(lists[w], name, &given[w], why, sizeof why);
            if (got[w] < 0)
                return tp_error(TRITONSERVER_ERROR_INVALID_ARG,
                                "model '%s': parameter %s: %s", m->name, keys[w], why);
            if (got[w] && given[w].nb_dims != dims.nb_dims) {
                tp_dims_str(&dims, a, sizeof a);
                return tp_error(TRITONSERVER_ERROR_INVALID_ARG,
                                "model '%s': parameter %s gives '%s' %d dims; the ONNX "
                                "input is %s (full shapes, batch dim included)",
                                m->name, keys[w], name, (int)given[w].nb_dims, a);
            }
            p[w] = got[w] ? given[w] : fix;
        }
        for (int32_t k = 0; k < dims.nb_dims; k++) {
            int batch = off && k == 0 && dims.d[0] < 0;
            if (fix.d[k] >= 0 && !batch)
                continue; /* static, or fixed by the configuration */
            if (!got[0])
                p[0].d[k] = 1;
            if (!got[2])
                p[2].d[k] = batch ? max_batch : got[1] ? given[1].d[k] : -1;
            if (!got[1])
                p[1].d[k] = p[2].d[k];
            if (p[2].d[k] < 0) {
                tp_dims_str(&dims, a, sizeof a);
                return tp_error(
                    TRITONSERVER_ERROR_INVALID_ARG,
                    "model '%s': ONNX input '%s' is %s and nothing bounds its dim %d: "
                    "give its largest shape in the parameter max_shapes (%s:DIMS, "
                    "like 8x64, batch dim included), or fix the dim in the "
                    "configuration's input dims%s",
                    m->name, name, a, (int)k, name,
                    k == 0 && !off ? " (or, if it is a batch dim, set max_batch_size)"
                                   : "");
            }
        }
        if (profile < 0 && (st = prt_builder_config_add_profile(bc, &profile)))
            return tp_prt_error(st, "adding an optimization profile");
        if ((st = prt_builder_config_set_profile_dims(bc, profile, name, &p[0], &p[1],
                                                      &p[2]))) {
            char what[256];
            snprintf(what, sizeof what, "model '%s': the profile of input '%s'", m->name,
                     name);
            return tp_prt_error(st, what);
        }
    }
    return NULL;
}

static TRITONSERVER_Error *build_onnx(tp_model *m, const tj_value *cfg, const char *path,
                                      int32_t device)
{
    prt_onnx_parser *parser = NULL;
    prt_network *net = NULL;
    prt_builder_config *bc = NULL;
    TRITONSERVER_Error *err = NULL;
    prt_status st;
    int64_t max_batch = 0;
    char what[TP_PATH_MAX + 256];
    tj_as_int(tj_get(cfg, "max_batch_size"), &max_batch);
    if ((st = prt_onnx_parser_create(m->reg, &parser)))
        return tp_prt_error(st, "creating the ONNX parser");
    if ((err = tp_each_item(m, param(cfg, "plugin_ops"), map_op, parser)))
        goto done;
    if ((st = prt_onnx_parser_parse_file(parser, path, &net))) {
        snprintf(what, sizeof what, "model '%s': importing %s", m->name, path);
        err = tp_prt_error(st, what);
        goto done;
    }
    if ((st = prt_builder_config_create(&bc)) ||
        (st = prt_builder_config_set_device(bc, device))) {
        err = tp_prt_error(st, "builder configuration");
        goto done;
    }
    if ((err = set_profile(m, cfg, net, bc, max_batch)))
        goto done;
    if ((st = prt_engine_build(net, bc, m->reg, &m->engine))) {
        snprintf(what, sizeof what, "model '%s': building %s", m->name, path);
        err = tp_prt_error(st, what);
    }
done:
    prt_builder_config_destroy(bc);
    prt_network_destroy(net);
    prt_onnx_parser_destroy(parser);
    return err;
}

/* Where the model is to run: the device parameter, else CUDA when an
 * instance group is KIND_GPU; and on CUDA the GPU the first engine goes to
 * (the first KIND_GPU group's first GPU, else 0), which must be usable. */
static TRITONSERVER_Error *model_device(tp_model *m, const tj_value *cfg, int32_t *device,
                                        int32_t *index)
{
    const char *dev = param(cfg, "device");
    const tj_value *groups = tj_get(cfg, "instance_group");
    int32_t gpu_groups = 0;
    prt_status st;
    *device = PRT_DEVICE_CPU;
    *index = -1;
    for (int32_t k = 0; groups && groups->kind == TJ_ARRAY && k < groups->count; k++) {
        const char *kind = tj_as_string(tj_get(groups->items[k], "kind"));
        const tj_value *gpus = tj_get(groups->items[k], "gpus");
        int64_t id;
        if (!kind || strcmp(kind, "KIND_GPU") != 0)
            continue;
        gpu_groups++;
        if (*index < 0 && gpus && gpus->kind == TJ_ARRAY && gpus->count > 0 &&
            tj_as_int(gpus->items[0], &id) && id >= 0 && id <= INT32_MAX)
            *index = (int32_t)id;
    }
    if (*index < 0)
        *index = 0;
    if (dev && strcmp(dev, "cuda") == 0)
        *device = PRT_DEVICE_CUDA;
    else if (dev && strcmp(dev, "cpu") != 0)
        return tp_error(TRITONSERVER_ERROR_INVALID_ARG,
                        "model '%s': parameter device is '%s'; it takes cpu or cuda",
                        m->name, dev);
    else if (!dev && gpu_groups)
        *device = PRT_DEVICE_CUDA;
    if (*device == PRT_DEVICE_CUDA && (st = prt_device_check(PRT_DEVICE_CUDA))) {
        char what[256];
        snprintf(what, sizeof what, "model '%s' is to run on cuda (%s)", m->name,
                 dev ? "parameter device \"cuda\"" : "KIND_GPU instances");
        return tp_prt_error(st, what);
    }
    if (*device != PRT_DEVICE_CUDA)
        *index = 0;
    return NULL;
}

static TRITONSERVER_Error *load_engine(tp_model *m, const tj_value *cfg, const char *dir,
                                       uint64_t version, int32_t device, int32_t index)
{
    const char *dev = param(cfg, "device"),
               *file = tj_as_string(tj_get(cfg, "default_model_filename"));
    char path[TP_PATH_MAX];
    size_t n;
    TRITONSERVER_Error *err;

    if (file && file[0]) {
        snprintf(path, sizeof path, "%s/%llu/%s", dir, (unsigned long long)version, file);
    } else {
        snprintf(path, sizeof path, "%s/%llu/model.plan", dir,
                 (unsigned long long)version);
        if (!file_exists(path))
            snprintf(path, sizeof path, "%s/%llu/model.onnx", dir,
                     (unsigned long long)version);
    }
    if (!file_exists(path))
        return tp_error(
            TRITONSERVER_ERROR_NOT_FOUND,
            "model '%s': no model file: %s/%llu/ holds neither model.plan nor "
            "model.onnx (or default_model_filename)",
            m->name, dir, (unsigned long long)version);
    n = strlen(path);
    if (n > 5 && strcmp(path + n - 5, ".onnx") == 0) {
        if ((err = build_onnx(m, cfg, path, device)))
            return err;
    } else {
        void *bytes = NULL;
        size_t size = 0;
        prt_status st;
        if ((err = read_file(path, &bytes, &size)))
            return err;
        st = prt_engine_deserialize(m->reg, bytes, size, &m->engine);
        free(bytes);
        if (st) {
            char what[TP_PATH_MAX + 256];
            snprintf(what, sizeof what, "model '%s': loading %s", m->name, path);
            return tp_prt_error(st, what);
        }
        if (dev && prt_engine_device(m->engine) != device)
            return tp_error(
                TRITONSERVER_ERROR_INVALID_ARG,
                "model '%s': parameter device is '%s' but %s was built for %s", m->name,
                dev, path,
                prt_engine_device(m->engine) == PRT_DEVICE_CUDA ? "cuda" : "cpu");
    }
    m->device = prt_engine_device(m->engine);
    if (!(m->engines = calloc(1, sizeof *m->engines)))
        return tp_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    m->engines->engine = m->engine;
    m->engines->index = m->device == PRT_DEVICE_CUDA ? index : 0;
    if (m->device == PRT_DEVICE_CUDA)
        tp_log(TRITONSERVER_LOG_INFO, "model '%s': %s, device cuda (GPU %d), %d layers",
               m->name, path, (int)m->engines->index,
               (int)prt_engine_layer_count(m->engine));
    else
        tp_log(TRITONSERVER_LOG_INFO, "model '%s': %s, device cpu, %d layers", m->name,
               path, (int)prt_engine_layer_count(m->engine));
    return NULL;
}

/* ---- the engine's inputs and outputs ---------------------------------- */

static TRITONSERVER_Error *read_io(tp_model *m)
{
    int32_t n = prt_engine_io_count(m->engine), nt = prt_engine_tensor_count(m->engine);
    prt_status st;
    for (int32_t i = 0; i < n; i++) {
        prt_io_info io = {.struct_size = sizeof io};
        if ((st = prt_engine_get_io(m->engine, i, &io)))
            return tp_prt_error(st, "reading the engine's inputs and outputs");
        if (io.is_input)
            m->nb_in++;
        else
            m->nb_out++;
    }
    m->in = calloc((size_t)m->nb_in + 1, sizeof *m->in);
    m->out = calloc((size_t)m->nb_out + 1, sizeof *m->out);
    if (!m->in || !m->out)
        return tp_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    for (int32_t i = 0, a = 0, b = 0; i < n; i++) {
        prt_io_info io = {.struct_size = sizeof io};
        tp_io *t;
        if ((st = prt_engine_get_io(m->engine, i, &io)))
            return tp_prt_error(st, "reading the engine's inputs and outputs");
        t = io.is_input ? &m->in[a++] : &m->out[b++];
        t->name = io.name;
        t->is_input = io.is_input;
        t->dtype = io.dtype;
        t->triton_dtype = tp_triton_dtype(io.dtype);
        t->location = io.location;
        t->is_shape_input = io.is_shape_input;
        t->dd_mask = io.data_dependent_mask;
        t->dims = io.dims;
        if (io.is_input && (st = prt_engine_get_profile_shape(m->engine, 0, io.name,
                                                              &t->min, &t->opt, &t->max)))
            return tp_prt_error(st, "reading the engine's profile");
        for (int32_t k = 0; k < nt; k++) {
            prt_tensor_info ti = {.struct_size = sizeof ti};
            if (prt_engine_get_tensor(m->engine, k, &ti) == PRT_OK &&
                strcmp(ti.name, io.name) == 0 &&
                ti.kind == (io.is_input ? PRT_TENSOR_INPUT : PRT_TENSOR_OUTPUT)) {
                t->max_bytes = ti.max_bytes;
                break;
            }
        }
        if (t->triton_dtype == TRITONSERVER_TYPE_INVALID)
            return tp_error(TRITONSERVER_ERROR_UNSUPPORTED,
                            "model '%s': %s '%s' is %s, which Triton has no type for",
                            m->name, io.is_input ? "input" : "output", io.name,
                            prt_dtype_name(io.dtype));
    }
    return NULL;
}

/* Whether the engine's first dim is a batch dim: every input and output has
 * it dynamic (outputs not data-dependent there), the inputs share its
 * bounds, and each output's first dim follows the inputs' when a context is
 * asked at the smallest and the largest batch. On 1, *out_max is the
 * profile's largest batch; on 0, why says why not. */
static int probe_batch(tp_model *m, int64_t *out_max, char *why, size_t why_size)
{
    int64_t lo = 0, hi = 0;
    prt_context *ctx = NULL;
    int ok = 1;
    if (m->nb_in == 0 || prt_engine_profile_count(m->engine) != 1) {
        snprintf(why, why_size, "%s",
                 m->nb_in ? "the engine has several profiles"
                          : "the engine has no inputs");
        return 0;
    }
    for (int32_t i = 0; i < m->nb_in; i++) {
        const tp_io *t = &m->in[i];
        if (t->is_shape_input || t->dims.nb_dims < 1 || t->dims.d[0] >= 0) {
            snprintf(why, why_size, "input '%s' has no dynamic first dim", t->name);
            return 0;
        }
        if (i == 0) {
            lo = t->min.d[0];
            hi = t->max.d[0];
        } else if (t->min.d[0] != lo || t->max.d[0] != hi) {
            snprintf(why, why_size,
                     "inputs '%s' and '%s' differ in their first dim's bounds",
                     m->in[0].name, t->name);
            return 0;
        }
    }
    if (lo > 1 || hi < 1) {
        snprintf(why, why_size, "the profile's first dim is %lld..%lld, which excludes 1",
                 (long long)lo, (long long)hi);
        return 0;
    }
    for (int32_t o = 0; o < m->nb_out; o++) {
        const tp_io *t = &m->out[o];
        if (t->dims.nb_dims < 1 || t->dims.d[0] >= 0 || (t->dd_mask & 1u)) {
            snprintf(why, why_size, "output '%s' has no batch-like first dim", t->name);
            return 0;
        }
    }
    if (prt_context_create(m->engine, &ctx) != PRT_OK) {
        snprintf(why, why_size, "a context cannot be made: %s", prt_last_error());
        return 0;
    }
    for (int pass = 0; pass < 2 && ok; pass++) {
        int64_t b = pass == 0 ? (lo < 1 ? 1 : lo) : hi;
        for (int32_t i = 0; i < m->nb_in && ok; i++) {
            prt_dims d = m->in[i].opt;
            d.d[0] = b;
            if (prt_context_set_input_shape(ctx, m->in[i].name, &d) != PRT_OK) {
                snprintf(why, why_size, "batch %lld is refused: %s", (long long)b,
                         prt_last_error());
                ok = 0;
            }
        }
        for (int32_t o = 0; o < m->nb_out && ok; o++) {
            prt_dims d;
            if (prt_context_get_tensor_shape(ctx, m->out[o].name, &d) != PRT_OK ||
                d.nb_dims < 1 || d.d[0] != b) {
                snprintf(why, why_size, "output '%s' does not follow the batch",
                         m->out[o].name);
                ok = 0;
            }
        }
    }
    prt_context_destroy(ctx);
    if (ok)
        *out_max = hi;
    return ok;
}

/* ---- the configuration against the engine ------------------------------ */

/* Fills an entry's dims from the engine's tensor (auto-complete). Triton
 * takes no empty dims: a tensor the batch dim describes whole, or a 0-D
 * one (NonZero's count), gets dims [1]; with a batch dim and reshape
 * { shape: [] }, as the TensorRT backend writes it, and without one as
 * dims [1] alone, which the backend serves as the 0-D tensor itself
 * (Triton refuses an empty reshape where there is no batching). */
static TRITONSERVER_Error *fill_dims(tp_model *m, tj_value *entry, tp_io *t)
{
    int32_t off = m->max_batch > 0 ? 1 : 0;
    prt_dims one = {.nb_dims = 1, .d = {1}};
    tj_value *reshape;
    if (t->dims.nb_dims > off)
        return tj_set(entry, "dims", json_dims_new(&t->dims, off))
                   ? NULL
                   : tp_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    if (!tj_set(entry, "dims", json_dims_new(&one, 0)))
        return tp_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    if (!off) {
        t->as_one = 1;
        return NULL;
    }
    if (!(reshape = tj_new(TJ_OBJECT)) || !tj_set(reshape, "shape", tj_new(TJ_ARRAY)) ||
        !tj_set(entry, "reshape", reshape))
        return tp_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    return NULL;
}

/* Checks one config entry against the engine's tensor (or fills it when
 * auto-complete may). Its reshape, if any, is what the engine has; its
 * dims are what clients see. */
static TRITONSERVER_Error *check_entry(tp_model *m, tj_value *entry, tp_io *t,
                                       int auto_complete, int *changed)
{
    int32_t off = m->max_batch > 0 ? 1 : 0;
    const char *type = tj_as_string(tj_get(entry, "data_type"));
    prt_dims cd, ed = t->dims;
    char a[160], b[160];
    int32_t want_rank = ed.nb_dims - off, bad = 0;
    int reshaped = 0;
    const char *kind = t->is_input ? "input" : "output";
    TRITONSERVER_Error *err;
    if (!type || strcmp(type, "TYPE_INVALID") == 0) {
        if (!auto_complete)
            return tp_error(
                TRITONSERVER_ERROR_INVALID_ARG,
                "model '%s': config %s '%s' has no data_type (the engine's is %s)",
                m->name, kind, t->name, tp_config_type_name(t->dtype));
        if (!tj_set(entry, "data_type", tj_new_string(tp_config_type_name(t->dtype))))
            return tp_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
        *changed = 1;
    } else if (tp_prt_dtype_of_config(type) != t->dtype) {
        return tp_error(
            TRITONSERVER_ERROR_INVALID_ARG,
            "model '%s': config %s '%s' is %s but the engine's '%s' is %s (%s)", m->name,
            kind, t->name, type, t->name, prt_dtype_name(t->dtype),
            tp_config_type_name(t->dtype));
    }
    if (!entry_engine_dims(entry, &cd, &reshaped))
        return tp_error(TRITONSERVER_ERROR_INVALID_ARG,
                        "model '%s': config %s '%s': bad dims or reshape", m->name, kind,
                        t->name);
    if (!reshaped && cd.nb_dims == 0 && auto_complete) {
        if ((err = fill_dims(m, entry, t)))
            return err;
        *changed = 1;
        return NULL;
    }
    if (reshaped && cd.nb_dims == 0 && !off)
        /* Triton would refuse it after us, less clearly. */
        return tp_error(
            TRITONSERVER_ERROR_INVALID_ARG,
            "model '%s': config %s '%s' has reshape { shape: [ ] }, which Triton "
            "refuses without a batch dim (max_batch_size 0); give it dims [ 1 ] "
            "without a reshape, and the backend serves the engine's 0-D '%s' as [1]",
            m->name, kind, t->name, t->name);
    if (!reshaped && !off && want_rank == 0 && cd.nb_dims == 1 && cd.d[0] == 1) {
        /* The 0-D tensor as [1]: the reshape Triton cannot express here. */
        t->as_one = 1;
        return NULL;
    }
    if (!reshaped && off && want_rank == 0 && cd.nb_dims == 1 && cd.d[0] == 1)
        return tp_error(TRITONSERVER_ERROR_INVALID_ARG,
                        "model '%s': config %s '%s' has dims [1] after the batch dim but "
                        "the engine's '%s' is the batch dim alone: add reshape: { shape: "
                        "[ ] }",
                        m->name, kind, t->name, t->name);
    if (cd.nb_dims != want_rank)
        bad = 1;
    for (int32_t k = 0; !bad && k < cd.nb_dims; k++) {
        int64_t e = ed.d[k + off], c = cd.d[k];
        if (c < 0)
            continue;
        if (e >= 0 && c != e)
            bad = 1;
        if (t->is_input && e < 0 && (c < t->min.d[k + off] || c > t->max.d[k + off]))
            bad = 1;
    }
    if (bad) {
        prt_dims lo = t->min, hi = t->max;
        tp_dims_str(&cd, a, sizeof a);
        tp_dims_str(&ed, b, sizeof b);
        if (t->is_input) {
            char c1[160], c2[160];
            tp_dims_str(&lo, c1, sizeof c1);
            tp_dims_str(&hi, c2, sizeof c2);
            return tp_error(TRITONSERVER_ERROR_INVALID_ARG,
                            "model '%s': config input '%s' has %s %s%s but the engine's "
                            "'%s' is %s (profile %s to %s)",
                            m->name, t->name, reshaped ? "reshape" : "dims", a,
                            off ? " after the batch dim" : "", t->name, b, c1, c2);
        }
        return tp_error(TRITONSERVER_ERROR_INVALID_ARG,
                        "model '%s': config output '%s' has %s %s%s but the engine's "
                        "'%s' is %s",
                        m->name, t->name, reshaped ? "reshape" : "dims", a,
                        off ? " after the batch dim" : "", t->name, b);
    }
    return NULL;
}

static TRITONSERVER_Error *check_config(tp_model *m, tj_value *cfg, int auto_complete,
                                        int *changed)
{
    int64_t cfg_batch = 0, eng_batch = 0;
    char why[512] = "";
    int batchable = probe_batch(m, &eng_batch, why, sizeof why);
    TRITONSERVER_Error *err;
    const char *sections[2] = {"input", "output"};
    tj_as_int(tj_get(cfg, "max_batch_size"), &cfg_batch);
    if (cfg_batch > 0) {
        if (!batchable)
            return tp_error(
                TRITONSERVER_ERROR_INVALID_ARG,
                "model '%s': config max_batch_size is %lld but the engine has no "
                "batch dim: %s",
                m->name, (long long)cfg_batch, why);
        if (cfg_batch > eng_batch)
            return tp_error(TRITONSERVER_ERROR_INVALID_ARG,
                            "model '%s': config max_batch_size is %lld but the engine's "
                            "profile allows a batch of at most %lld (first dim of '%s')",
                            m->name, (long long)cfg_batch, (long long)eng_batch,
                            m->in[0].name);
    } else if (auto_complete && batchable && eng_batch > 1) {
        /* As the TensorRT backend: an engine with a batch dim serves
         * batches up to its profile's, through the dynamic batcher unless
         * the configuration chose a scheduler. */
        cfg_batch = eng_batch;
        if (!tj_set(cfg, "max_batch_size", tj_new_int(cfg_batch)))
            return tp_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
        if (!tj_get(cfg, "dynamic_batching") && !tj_get(cfg, "sequence_batching") &&
            !tj_get(cfg, "ensemble_scheduling") &&
            !tj_set(cfg, "dynamic_batching", tj_new(TJ_OBJECT)))
            return tp_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
        *changed = 1;
        tp_log(TRITONSERVER_LOG_INFO, "model '%s': max_batch_size %lld from the profile",
               m->name, (long long)cfg_batch);
    }
    m->max_batch = (int32_t)cfg_batch;

    /* Every config entry names an engine tensor of its kind. */
    for (int s = 0; s < 2; s++) {
        tj_value *arr = tj_get(cfg, sections[s]);
        tp_io *list = s ? m->out : m->in;
        int32_t nb = s ? m->nb_out : m->nb_in;
        for (int32_t k = 0; arr && arr->kind == TJ_ARRAY && k < arr->count; k++) {
            const char *n = tj_as_string(tj_get(arr->items[k], "name"));
            int32_t found = -1;
            char names[1024] = "";
            for (int32_t i = 0; n && i < nb; i++)
                if (strcmp(list[i].name, n) == 0)
                    found = i;
            if (found >= 0) {
                if ((err = check_entry(m, arr->items[k], &list[found], auto_complete,
                                       changed)))
                    return err;
                if (s)
                    m->out[found].served = 1;
                continue;
            }
            for (int32_t i = 0; i < nb; i++) {
                size_t o = strlen(names);
                snprintf(names + o, sizeof names - o, "%s'%s'", i ? ", " : "",
                         list[i].name);
            }
            return tp_error(
                TRITONSERVER_ERROR_INVALID_ARG,
                "model '%s': config %s '%s' is not an %s of the engine (its %ss: "
                "%s)",
                m->name, sections[s], n ? n : "(no name)", sections[s], sections[s],
                names);
        }
    }
    /* Engine tensors the configuration leaves out: filled in, or refused
     * (inputs) / not served (outputs). */
    for (int s = 0; s < 2; s++) {
        tp_io *list = s ? m->out : m->in;
        int32_t nb = s ? m->nb_out : m->nb_in;
        for (int32_t i = 0; i < nb; i++) {
            tj_value *arr, *e;
            if (config_entry(cfg, sections[s], list[i].name))
                continue;
            if (!auto_complete) {
                if (s)
                    continue;
                return tp_error(TRITONSERVER_ERROR_INVALID_ARG,
                                "model '%s': the engine's input '%s' is not in the "
                                "configuration (and auto-complete is off)",
                                m->name, list[i].name);
            }
            if (!(arr = tj_get(cfg, sections[s]))) {
                if (!tj_set(cfg, sections[s], tj_new(TJ_ARRAY)))
                    return tp_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
                arr = tj_get(cfg, sections[s]);
            }
            if (!(e = tj_new(TJ_OBJECT)) ||
                !tj_set(e, "name", tj_new_string(list[i].name)) ||
                !tj_set(e, "data_type",
                        tj_new_string(tp_config_type_name(list[i].dtype))) ||
                !tj_append(arr, e))
                return tp_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
            if ((err = fill_dims(m, e, &list[i])))
                return err;
            if (s)
                list[i].served = 1;
            *changed = 1;
        }
    }
    return NULL;
}

/* ---- threads ------------------------------------------------------------- */

/* The `threads` scratch blocks of one engine, on its device (current). */
static TRITONSERVER_Error *engine_slots(tp_model *m, tp_engine *e)
{
    prt_status st;
    if (!m->threads)
        return NULL;
    e->slot_memory = calloc((size_t)m->threads, sizeof *e->slot_memory);
    e->slot_free = calloc((size_t)m->threads, sizeof *e->slot_free);
    if (!e->slot_memory || !e->slot_free)
        return tp_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    for (int32_t k = 0; k < m->threads; k++) {
        /* At least one alignment unit: a context needs a non-NULL block. */
        if ((st = prt_device_malloc(m->device,
                                    (size_t)(m->ctx_memory ? m->ctx_memory : 256),
                                    &e->slot_memory[k])))
            return tp_prt_error(st, "scratch memory for the threads parameter");
        e->slot_free[e->nb_free++] = k;
    }
    return NULL;
}

static TRITONSERVER_Error *setup_threads(tp_model *m, const tj_value *cfg)
{
    const char *s = param(cfg, "threads");
    char *end;
    long v;
    if (!s)
        return NULL;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > 1024)
        return tp_error(TRITONSERVER_ERROR_INVALID_ARG,
                        "model '%s': parameter threads is '%s'; it takes 0 to 1024",
                        m->name, s);
    m->threads = (int32_t)v;
    m->ctx_memory = prt_engine_context_memory_size(m->engine);
    return engine_slots(m, m->engines);
}

/* ---- the model ---------------------------------------------------------- */

static void engine_destroy(tp_model *m, tp_engine *e)
{
    int32_t saved = -1;
    TRITONSERVER_Error *err = tp_device_enter(m->device, e->index, &saved);
    /* Without its GPU current the engine is freed anyway (CUDA frees any
     * GPU's memory); the log says why the device could not be set. */
    if (err) {
        tp_log(TRITONSERVER_LOG_WARN, "model '%s': %s", m->name,
               TRITONSERVER_ErrorMessage(err));
        TRITONSERVER_ErrorDelete(err);
    }
    for (int32_t k = 0; e->slot_memory && k < m->threads; k++)
        prt_device_free(m->device, e->slot_memory[k]);
    free(e->slot_memory);
    free(e->slot_free);
    prt_engine_destroy(e->engine);
    tp_device_leave(m->device, saved);
    free(e);
}

TRITONSERVER_Error *tp_model_engine(tp_model *m, int32_t index, tp_engine **out)
{
    tp_engine *e, *last = NULL;
    TRITONSERVER_Error *err = NULL;
    void *plan = NULL;
    size_t size = 0;
    prt_status st;
    if (m->device != PRT_DEVICE_CUDA) {
        *out = m->engines;
        return NULL;
    }
    pthread_mutex_lock(&m->lock);
    for (e = m->engines; e; last = e, e = e->next)
        if (e->index == index)
            break;
    if (!e) {
        /* Another GPU: the first engine's plan, loaded here. */
        if (!(e = calloc(1, sizeof *e))) {
            err = tp_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
        } else {
            e->index = index;
            if ((st = prt_engine_serialize(m->engine, &plan, &size)) ||
                (st = prt_engine_deserialize(m->reg, plan, size, &e->engine))) {
                char what[256];
                snprintf(what, sizeof what, "model '%s': loading its engine on GPU %d",
                         m->name, (int)index);
                err = tp_prt_error(st, what);
            }
            prt_free(plan);
            if (!err)
                err = engine_slots(m, e);
            if (err) {
                engine_destroy(m, e);
                e = NULL;
            } else {
                last->next = e;
                tp_log(TRITONSERVER_LOG_INFO, "model '%s': engine loaded on GPU %d",
                       m->name, (int)index);
            }
        }
    }
    pthread_mutex_unlock(&m->lock);
    *out = e;
    return err;
}

void tp_model_destroy(tp_model *m)
{
    if (!m)
        return;
    if (!m->engines) /* failed before the list was made */
        prt_engine_destroy(m->engine);
    while (m->engines) {
        tp_engine *next = m->engines->next;
        engine_destroy(m, m->engines);
        m->engines = next;
    }
    free(m->in);
    free(m->out);
    prt_registry_destroy(m->reg);
    pthread_cond_destroy(&m->cond);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

TRITONSERVER_Error *tp_model_create(TRITONBACKEND_Model *triton, tp_model **out)
{
    tp_model *m = calloc(1, sizeof *m);
    const char *name = "", *dir = NULL, *json = NULL;
    uint64_t version = 1;
    TRITONBACKEND_ArtifactType art;
    TRITONSERVER_Message *msg = NULL;
    TRITONSERVER_Error *err;
    tj_value *cfg = NULL;
    size_t json_len = 0;
    bool auto_complete = false;
    int changed = 0;
    int32_t device = PRT_DEVICE_CPU, index = 0, saved = -1;
    char perr[256];
    prt_status st;
    if (!m)
        return tp_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->cond, NULL);
    m->triton = triton;
    if ((err = TRITONBACKEND_ModelName(triton, &name)) ||
        (err = TRITONBACKEND_ModelVersion(triton, &version)) ||
        (err = TRITONBACKEND_ModelRepository(triton, &art, &dir)) ||
        (err = TRITONBACKEND_ModelAutoCompleteConfig(triton, &auto_complete)) ||
        (err = TRITONBACKEND_ModelConfig(triton, 1, &msg)) ||
        (err = TRITONSERVER_MessageSerializeToJson(msg, &json, &json_len)))
        goto fail;
    snprintf(m->name, sizeof m->name, "%s", name);
    if (art != TRITONBACKEND_ARTIFACT_FILESYSTEM) {
        err = tp_error(TRITONSERVER_ERROR_UNSUPPORTED,
                       "model '%s': only models on a file system are served", m->name);
        goto fail;
    }
    if (!(cfg = tj_parse(json, json_len, perr, sizeof perr)) || cfg->kind != TJ_OBJECT) {
        err = tp_error(TRITONSERVER_ERROR_INTERNAL,
                       "model '%s': the server's configuration is not a JSON object: %s",
                       m->name, perr);
        goto fail;
    }
    tp_log(TRITONSERVER_LOG_VERBOSE, "model '%s': configuration %.*s", m->name,
           (int)json_len, json);
    if ((st = prt_registry_create(&m->reg))) {
        err = tp_prt_error(st, "creating the model's registry");
        goto fail;
    }
    /* On CUDA everything from here (the build, the weights, the probing
     * context, the scratch blocks) goes to the first GPU. */
    if ((err = tp_model_load_plugins(m, param(cfg, "plugins"), dir)) ||
        (err = model_device(m, cfg, &device, &index)) ||
        (err = tp_device_enter(device, index, &saved)))
        goto fail;
    if ((err = load_engine(m, cfg, dir, version, device, index))) {
        if (m->no_standard) {
            /* A plugin the engine needs may be the standard library's. */
            TRITONSERVER_Error *why = tp_error(
                TRITONSERVER_ErrorCode(err), "%s (and no standard plugin library: %s)",
                TRITONSERVER_ErrorMessage(err), m->no_standard);
            TRITONSERVER_ErrorDelete(err);
            err = why;
        }
        goto fail;
    }
    if ((err = read_io(m)) || (err = check_config(m, cfg, auto_complete, &changed)) ||
        (err = setup_threads(m, cfg)))
        goto fail;
    tp_device_leave(device, saved);
    saved = -1;
    if (changed) {
        size_t n = 0;
        char *text = tj_write(cfg, &n);
        TRITONSERVER_Message *upd = NULL;
        if (!text) {
            err = tp_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
            goto fail;
        }
        tp_log(TRITONSERVER_LOG_VERBOSE, "model '%s': auto-completed configuration %s",
               m->name, text);
        err = TRITONSERVER_MessageNewFromSerializedJson(&upd, text, n);
        free(text);
        if (!err)
            err = TRITONBACKEND_ModelSetConfig(triton, 1, upd);
        if (upd)
            TRITONSERVER_MessageDelete(upd);
        if (err)
            goto fail;
    }
    tj_free(cfg);
    TRITONSERVER_MessageDelete(msg);
    *out = m;
    return NULL;
fail:
    tj_free(cfg);
    if (msg)
        TRITONSERVER_MessageDelete(msg);
    tp_model_destroy(m);
    tp_device_leave(device, saved);
    return err;
}
