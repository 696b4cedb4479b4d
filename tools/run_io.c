/* Inputs (files, the reference directory, random data) and output buffers
 * of `plugrt run`. */
#include "run_io.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "describe.h"
#include "numeric.h"
#include "tensor_file.h"
#include "text.h"

/* ---- inputs -------------------------------------------------------------- */

run_input *run_inputs_find(run_inputs *l, const char *name)
{
    for (int i = 0; i < l->count; i++)
        if (strcmp(l->items[i].name, name) == 0)
            return &l->items[i];
    return NULL;
}

/* A new or replaced entry named `name`; NULL on OOM (printed). */
static run_input *entry(run_inputs *l, const char *name)
{
    run_input *in = run_inputs_find(l, name), *items;
    char *copy;
    char en[CLI_ESC_CAP];
    if (in) {
        npy_array_free(&in->arr);
        free(in->path);
        in->path = NULL;
        return in;
    }
    copy = cli_strdup(name);
    items = copy ? realloc(l->items, sizeof *items * (size_t)(l->count + 1)) : NULL;
    if (!items) {
        free(copy);
        cli_error("out of memory for %s input %s",
                  copy ? "the list of inputs, adding" : "the name of",
                  cli_escape(name, en, sizeof en));
        return NULL;
    }
    l->items = items;
    in = &items[l->count++];
    memset(in, 0, sizeof *in);
    in->name = copy;
    return in;
}

/* Takes `arr` (freed on failure). */
static int add_array(run_inputs *l, const char *name, const char *path, int from_dir,
                     npy_array arr)
{
    char en[CLI_ESC_CAP];
    run_input *in;
    char *p = cli_strdup(path);
    if (!p)
        cli_error("out of memory for the path of input %s",
                  cli_escape(name, en, sizeof en));
    in = p ? entry(l, name) : NULL;
    if (!in) {
        free(p);
        npy_array_free(&arr);
        return CLI_FAIL;
    }
    in->path = p;
    in->from_dir = from_dir;
    in->arr = arr;
    return CLI_OK;
}

int run_inputs_add_file(run_inputs *l, const char *name, const char *path, int from_dir)
{
    char err[1024], en[CLI_ESC_CAP];
    npy_array arr;
    if (cli_tensor_read(path, &arr, NULL, err, sizeof err) != 0) {
        cli_error("input %s: %s", cli_escape(name, en, sizeof en), err);
        return CLI_FAIL;
    }
    return add_array(l, name, path, from_dir, arr);
}

/* DIR/input_K.pb (ONNX's test data): the input is the one the TensorProto
 * names. */
static int add_pb_from_dir(run_inputs *l, const char *path)
{
    char err[1024], ep[CLI_ESC_CAP];
    char *name = NULL;
    npy_array arr;
    int rc;
    if (cli_tensor_read(path, &arr, &name, err, sizeof err) != 0) {
        cli_error("%s", err);
        return CLI_FAIL;
    }
    if (!name[0]) {
        /* Not an error yet: --input may give that input. */
        cli_note("ignoring %s: it holds a tensor without a name, so it matches no "
                 "input (give it with --input NAME=%s)",
                 cli_escape(path, ep, sizeof ep), cli_escape(path, ep, sizeof ep));
        rc = CLI_OK;
        npy_array_free(&arr);
    } else if (run_inputs_find(l, name)) {
        rc = CLI_OK; /* --input overrides */
        npy_array_free(&arr);
    } else {
        rc = add_array(l, name, path, 1, arr);
    }
    free(name);
    return rc;
}

int run_inputs_scan_dir(run_inputs *l, const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int rc = CLI_OK;
    if (!d) {
        cli_error("cannot open the --compare directory %s: %s", dir, strerror(errno));
        return CLI_FAIL;
    }
    while (rc == CLI_OK && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        char name[512], path[4096];
        if (n > 9 && strncmp(e->d_name, "input_", 6) == 0 &&
            strcmp(e->d_name + n - 3, ".pb") == 0) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            rc = add_pb_from_dir(l, path);
            continue;
        }
        if (n <= 10 || strncmp(e->d_name, "input_", 6) != 0 ||
            strcmp(e->d_name + n - 4, ".npy") != 0 || n - 10 >= sizeof name)
            continue;
        memcpy(name, e->d_name + 6, n - 10);
        name[n - 10] = '\0';
        if (run_inputs_find(l, name))
            continue; /* --input overrides */
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        rc = run_inputs_add_file(l, name, path, 1);
    }
    closedir(d);
    return rc;
}

void run_inputs_free(run_inputs *l)
{
    for (int i = 0; i < l->count; i++) {
        free(l->items[i].name);
        free(l->items[i].path);
        npy_array_free(&l->items[i].arr);
    }
    free(l->items);
    l->items = NULL;
    l->count = 0;
}

/* 1 if concrete `dims` fit the engine's (same rank, equal static dims). */
static int dims_fit(const prt_dims *engine_dims, const prt_dims *dims)
{
    if (engine_dims->nb_dims != dims->nb_dims)
        return 0;
    for (int32_t i = 0; i < dims->nb_dims; i++)
        if (engine_dims->d[i] >= 0 && engine_dims->d[i] != dims->d[i])
            return 0;
    return 1;
}

/* Bytes of a tensor of concrete `dims`: 0, or -1 if they do not fit in
 * memory. */
static int dims_bytes(const prt_dims *dims, int32_t dtype, size_t *out)
{
    int64_t vol = cli_volume(dims);
    size_t es = prt_dtype_size(dtype);
    if (vol < 0 || es == 0 || (uint64_t)vol > SIZE_MAX / es)
        return -1;
    *out = (size_t)vol * es;
    return 0;
}

run_input *run_inputs_match(const run_inputs *l, const char *name)
{
    char safe[512];
    cli_safe_name(name, safe, sizeof safe);
    for (int i = 0; i < l->count; i++)
        if (strcmp(l->items[i].name, name) == 0)
            return &l->items[i];
    for (int i = 0; i < l->count; i++)
        if (l->items[i].from_dir && strcmp(l->items[i].name, safe) == 0)
            return &l->items[i];
    return NULL;
}

/* ---- the engine's I/O ---------------------------------------------------- */

int run_model_init(run_model *m, const prt_engine *engine)
{
    memset(m, 0, sizeof *m);
    if (cli_engine_io(engine, &m->io, &m->nb_io) != CLI_OK)
        return CLI_FAIL;
    while (m->nb_inputs < m->nb_io && m->io[m->nb_inputs].is_input)
        m->nb_inputs++;
    return CLI_OK;
}

void run_model_free(run_model *m)
{
    free(m->io);
    memset(m, 0, sizeof *m);
}

static void list_inputs(const run_model *m)
{
    fprintf(stderr, "  the model's inputs:");
    for (int32_t i = 0; i < m->nb_inputs; i++) {
        const prt_io_info *io = &m->io[i];
        char d[128], en[CLI_ESC_CAP];
        fprintf(stderr, "%s %s (%s %s)", i ? "," : "",
                cli_escape(io->name, en, sizeof en), prt_dtype_name(io->dtype),
                cli_format_dims(&io->dims, d, sizeof d));
    }
    fprintf(stderr, "%s\n", m->nb_inputs ? "" : " none");
}

int run_model_check_shapes(const run_model *m, const cli_shapes *shapes)
{
    for (int i = 0; i < shapes->count; i++) {
        const char *name = shapes->items[i].name;
        char en[CLI_ESC_CAP];
        int32_t k = 0;
        while (k < m->nb_inputs && strcmp(m->io[k].name, name) != 0)
            k++;
        if (k < m->nb_inputs)
            continue;
        cli_error("--shapes %s: the model has no input of that name",
                  cli_escape(name, en, sizeof en));
        list_inputs(m);
        return cli_usage("give --shapes only for the model's inputs");
    }
    return CLI_OK;
}

/* ---- inputs: binding ----------------------------------------------------- */

static int make_random(run_inputs *l, const prt_io_info *io, prt_context *ctx,
                       const cli_shapes *shapes, uint64_t *seed)
{
    const cli_shape *sh = cli_shapes_find(shapes, io->name);
    prt_dims dims = io->dims, fixed;
    char a[128], b[128], en[CLI_ESC_CAP];
    const char *name = cli_escape(io->name, en, sizeof en);
    int64_t vol;
    size_t bytes;
    run_input *in;
    void *data;
    if (sh) {
        if (!dims_fit(&io->dims, &sh->dims)) {
            cli_error("--shapes %s:%s does not fit the input's dims %s", name,
                      cli_format_dims(&sh->dims, a, sizeof a),
                      cli_format_dims(&io->dims, b, sizeof b));
            return CLI_FAIL;
        }
        dims = sh->dims;
    } else if (prt_context_get_tensor_shape(ctx, io->name, &fixed) == PRT_OK) {
        /* The context knows the shape before any is set only when the
         * profile fixes it (min = max). */
        dims = fixed;
    }
    for (int32_t i = 0; i < dims.nb_dims; i++)
        if (dims.d[i] < 0) {
            cli_error("input %s has dynamic dims %s; give its shape for random data with "
                      "--shapes %s:DIMS",
                      name, cli_format_dims(&io->dims, a, sizeof a), name);
            return CLI_FAIL;
        }
    if (dims_bytes(&dims, io->dtype, &bytes) != 0) {
        cli_error("input %s: shape %s is too large", name,
                  cli_format_dims(&dims, a, sizeof a));
        return CLI_FAIL;
    }
    vol = cli_volume(&dims);
    data = malloc(bytes ? bytes : 1);
    if (!data) {
        cli_error("out of memory for the random data of input %s (%zu bytes)", name,
                  bytes);
        return CLI_FAIL;
    }
    if (!(in = entry(l, io->name))) {
        free(data);
        return CLI_FAIL;
    }
    cli_fill_random(io->dtype, data, vol, seed);
    in->arr.dtype = io->dtype;
    in->arr.dims = dims;
    in->arr.data = data;
    in->arr.nbytes = bytes;
    in->used = 1;
    return CLI_OK;
}

void run_input_dtype_error(const run_input *in, const char *name, int32_t want)
{
    char en[CLI_ESC_CAP], ep[CLI_ESC_CAP];
    cli_error("input %s: %s holds %s, the model takes %s (convert it, e.g. numpy's "
              "a.astype(np.%s))",
              cli_escape(name, en, sizeof en),
              in->path ? cli_escape(in->path, ep, sizeof ep) : "its data",
              prt_dtype_name(in->arr.dtype), prt_dtype_name(want),
              want == PRT_BOOL ? "bool_" : prt_dtype_name(want));
}

int run_inputs_bind(run_inputs *l, const run_model *m, prt_context *ctx,
                    const cli_shapes *shapes, int random_allowed, uint64_t seed)
{
    int bad = 0, listed = 0;
    uint64_t state = seed;
    for (int32_t i = 0; i < m->nb_inputs; i++) {
        const prt_io_info *io = &m->io[i];
        run_input *in = run_inputs_match(l, io->name);
        char a[128], b[128], en[CLI_ESC_CAP], ep[CLI_ESC_CAP];
        const char *name = cli_escape(io->name, en, sizeof en);
        if (!in) {
            if (!random_allowed) {
                char safe[512];
                cli_safe_name(io->name, safe, sizeof safe);
                cli_error("no data for input %s (%s %s): give --input %s=FILE.npy, put "
                          "input_%s.npy in the --compare directory, or pass "
                          "--random-inputs",
                          name, prt_dtype_name(io->dtype),
                          cli_format_dims(&io->dims, a, sizeof a), name, safe);
                bad = 1;
            } else if (make_random(l, io, ctx, shapes, &state) != CLI_OK) {
                bad = 1;
            }
            continue;
        }
        in->used = 1;
        if (io->dtype == PRT_BFLOAT16 && in->arr.dtype == PRT_UINT16)
            in->arr.dtype = PRT_BFLOAT16; /* bfloat16's bits, as numpy holds them */
        if (in->arr.dtype != io->dtype) {
            run_input_dtype_error(in, io->name, io->dtype);
            bad = 1;
        } else if (!dims_fit(&io->dims, &in->arr.dims)) {
            cli_error("input %s: %s has shape %s, the model takes %s", name,
                      cli_escape(in->path, ep, sizeof ep),
                      cli_format_dims(&in->arr.dims, a, sizeof a),
                      cli_format_dims(&io->dims, b, sizeof b));
            bad = 1;
        } else {
            const cli_shape *sh = cli_shapes_find(shapes, io->name);
            if (sh && !dims_fit(&sh->dims, &in->arr.dims)) {
                cli_error("input %s: --shapes says %s but %s has shape %s", name,
                          cli_format_dims(&sh->dims, a, sizeof a),
                          cli_escape(in->path, ep, sizeof ep),
                          cli_format_dims(&in->arr.dims, b, sizeof b));
                bad = 1;
            }
        }
    }
    for (int i = 0; i < l->count; i++) {
        run_input *in = &l->items[i];
        char en[CLI_ESC_CAP], ep[CLI_ESC_CAP];
        if (in->used)
            continue;
        if (in->from_dir) {
            cli_note("ignoring %s: the model has no input %s",
                     cli_escape(in->path, ep, sizeof ep),
                     cli_escape(in->name, en, sizeof en));
        } else {
            cli_error("--input %s: the model has no input of that name",
                      cli_escape(in->name, en, sizeof en));
            if (!listed++)
                list_inputs(m);
            bad = 1;
        }
    }
    return bad ? CLI_FAIL : CLI_OK;
}

/* ---- contexts and their memory ------------------------------------------ */

int run_allow_embedded_kernels;

int run_ctx_create(run_ctx *rc, const prt_engine *engine, int32_t profile,
                   int64_t memory_limit, int32_t threads)
{
    prt_context_options opt;
    prt_status st;
    memset(rc, 0, sizeof *rc);
    memset(&opt, 0, sizeof opt);
    opt.struct_size = sizeof opt;
    opt.memory_limit = memory_limit;
    opt.threads = threads;
    opt.allow_embedded_kernels = run_allow_embedded_kernels;
    rc->device = prt_engine_device(engine);
    if ((st = prt_context_create_with_options(engine, &opt, &rc->ctx))) {
        char need[32], limit[32];
        cli_error_api(st, "cannot create an execution context");
        if (prt_engine_get_nb_kernel_layers(engine) > 0 && !run_allow_embedded_kernels)
            fprintf(stderr, "  `plugrt inspect` lists the kernel layers; "
                            "--allow-embedded-kernels runs them\n");
        if (memory_limit > 0 && prt_engine_context_memory_size(engine) > memory_limit)
            fprintf(stderr,
                    "  the engine needs %s per context and --memory-limit allows "
                    "%s: raise the limit or leave it out\n",
                    cli_format_bytes(prt_engine_context_memory_size(engine), need,
                                     sizeof need),
                    cli_format_bytes(memory_limit, limit, sizeof limit));
        return CLI_FAIL;
    }
    if (profile != 0 && (st = prt_context_set_profile(rc->ctx, profile))) {
        cli_error_api(st, "--profile %d", (int)profile);
        return CLI_FAIL;
    }
    /* On the CPU a run computes on the calling thread and takes no stream
     * (plugrt.h); plugins there are promised none. */
    if (rc->device != PRT_DEVICE_CPU &&
        (st = prt_stream_create(rc->device, &rc->stream))) {
        cli_error_api(st, "cannot create a %s stream", cli_device_name(rc->device));
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* Device memory of `bytes` (at least one byte: an empty tensor still needs
 * an address). */
static int device_alloc(const run_ctx *rc, uint64_t bytes, void **out, const char *what,
                        const char *name)
{
    char en[CLI_ESC_CAP], b[32];
    prt_status st;
    if (bytes > SIZE_MAX) {
        cli_error("%s %s: %llu bytes do not fit in memory", what,
                  cli_escape(name, en, sizeof en), (unsigned long long)bytes);
        return CLI_FAIL;
    }
    st = prt_device_malloc(rc->device, bytes ? (size_t)bytes : 1, out);
    if (st) {
        cli_error_api(st, "%s %s: cannot allocate %s of %s memory", what,
                      cli_escape(name, en, sizeof en),
                      cli_format_bytes((int64_t)bytes, b, sizeof b),
                      cli_device_name(rc->device));
        return CLI_FAIL;
    }
    return CLI_OK;
}

static int bind_input(run_ctx *rc, const run_model *m, int32_t i, const run_input *in)
{
    const prt_io_info *io = &m->io[i];
    char en[CLI_ESC_CAP];
    const char *name = cli_escape(io->name, en, sizeof en);
    prt_status st;
    /* A shape input's values are read on the host, on every device. */
    if (m->io[i].is_shape_input)
        return CLI_OK; /* bound to its host data already */
    if (device_alloc(rc, in->arr.nbytes, &rc->in_dev[i], "input", io->name) != CLI_OK)
        return CLI_FAIL;
    st = prt_device_memcpy(rc->device, rc->in_dev[i], in->arr.data, in->arr.nbytes,
                           PRT_MEMCPY_HOST_TO_DEVICE, rc->stream);
    if (!st)
        st = prt_context_set_tensor_address(rc->ctx, io->name, rc->in_dev[i]);
    if (st) {
        cli_error_api(st, "input %s", name);
        return CLI_FAIL;
    }
    return CLI_OK;
}

static int bind_output(run_ctx *rc, run_slot *s, const prt_io_info *io)
{
    char en[CLI_ESC_CAP], a[128];
    const char *name = cli_escape(io->name, en, sizeof en);
    prt_dims dims;
    size_t bytes;
    prt_status st;
    s->name = io->name;
    s->dtype = io->dtype;
    /* Before a run, data-dependent dims hold their upper bound. */
    st = prt_context_get_tensor_shape(rc->ctx, io->name, &dims);
    if (st) {
        cli_error_api(st, "output %s", name);
        return CLI_FAIL;
    }
    if (dims_bytes(&dims, io->dtype, &bytes) != 0) {
        cli_error("output %s: cannot size a buffer for dims %s", name,
                  cli_format_dims(&dims, a, sizeof a));
        return CLI_FAIL;
    }
    s->bytes = bytes;
    if (!(s->host = malloc(bytes ? bytes : 1))) {
        cli_error("out of memory for output %s (%llu bytes)", name,
                  (unsigned long long)s->bytes);
        return CLI_FAIL;
    }
    if (device_alloc(rc, s->bytes, &s->dev, "output", io->name) != CLI_OK)
        return CLI_FAIL;
    if ((st = prt_context_set_tensor_address(rc->ctx, io->name, s->dev))) {
        cli_error_api(st, "output %s", name);
        return CLI_FAIL;
    }
    return CLI_OK;
}

int run_ctx_bind(run_ctx *rc, const run_model *m, const run_inputs *inputs)
{
    int32_t nb_out = m->nb_io - m->nb_inputs;
    prt_status st;
    rc->slots = calloc((size_t)(nb_out ? nb_out : 1), sizeof *rc->slots);
    rc->in_dev = calloc((size_t)(m->nb_inputs ? m->nb_inputs : 1), sizeof *rc->in_dev);
    if (!rc->slots || !rc->in_dev) {
        cli_error("out of memory for the bookkeeping of %d inputs and %d outputs",
                  (int)m->nb_inputs, (int)nb_out);
        return CLI_FAIL;
    }
    rc->nb_in = m->nb_inputs;
    /* Shapes first, and every input on its host data: output sizes follow
     * from the input shapes and shape inputs' values. */
    for (int32_t i = 0; i < m->nb_inputs; i++) {
        const prt_io_info *io = &m->io[i];
        const run_input *in = run_inputs_match(inputs, io->name);
        char en[CLI_ESC_CAP];
        int dynamic = 0;
        if (!in || !in->used) {
            cli_error("internal: input %s is not bound",
                      cli_escape(io->name, en, sizeof en));
            return CLI_FAIL;
        }
        for (int32_t d = 0; d < io->dims.nb_dims; d++)
            dynamic |= io->dims.d[d] < 0;
        if (dynamic &&
            (st = prt_context_set_input_shape(rc->ctx, io->name, &in->arr.dims))) {
            char a[128];
            cli_error_api(st, "input %s with shape %s",
                          cli_escape(io->name, en, sizeof en),
                          cli_format_dims(&in->arr.dims, a, sizeof a));
            return CLI_FAIL;
        }
        if ((st = prt_context_set_tensor_address(rc->ctx, io->name, in->arr.data))) {
            cli_error_api(st, "input %s", cli_escape(io->name, en, sizeof en));
            return CLI_FAIL;
        }
    }
    for (int32_t i = 0; i < m->nb_inputs; i++)
        if (bind_input(rc, m, i, run_inputs_match(inputs, m->io[i].name)) != CLI_OK)
            return CLI_FAIL;
    for (int32_t i = m->nb_inputs; i < m->nb_io; i++)
        if (bind_output(rc, &rc->slots[rc->nb_slots++], &m->io[i]) != CLI_OK)
            return CLI_FAIL;
    /* The copies are done before anything is timed or captured: a graph
     * capture then starts on an idle stream, and a failed copy is reported
     * here, as the input's. */
    if ((st = prt_stream_synchronize(rc->device, rc->stream))) {
        cli_error_api(st, "copying the inputs to %s memory", cli_device_name(rc->device));
        return CLI_FAIL;
    }
    return CLI_OK;
}

int run_ctx_fetch(run_ctx *rc)
{
    prt_status st;
    for (int i = 0; i < rc->nb_slots; i++) {
        run_slot *s = &rc->slots[i];
        char en[CLI_ESC_CAP], a[128];
        int64_t vol;
        uint64_t bytes;
        /* After a run this waits for the stream and reads the true sizes. */
        st = prt_context_get_tensor_shape(rc->ctx, s->name, &s->dims);
        if (st) {
            cli_error_api(st, "shape of output %s", cli_escape(s->name, en, sizeof en));
            return CLI_FAIL;
        }
        vol = cli_volume(&s->dims);
        bytes = vol < 0 ? UINT64_MAX : (uint64_t)vol * prt_dtype_size(s->dtype);
        if (vol < 0 || bytes > s->bytes) {
            cli_error("output %s: the runtime reports dims %s, more than the %llu bytes "
                      "of its upper bound (a bug in plugrt; please report it)",
                      cli_escape(s->name, en, sizeof en),
                      cli_format_dims(&s->dims, a, sizeof a),
                      (unsigned long long)s->bytes);
            return CLI_FAIL;
        }
        /* The data is written densely at the true dims (plugin.h). */
        st = prt_device_memcpy(rc->device, s->host, s->dev, (size_t)bytes,
                               PRT_MEMCPY_DEVICE_TO_HOST, rc->stream);
        if (st) {
            cli_error_api(st, "copying output %s to the host",
                          cli_escape(s->name, en, sizeof en));
            return CLI_FAIL;
        }
    }
    if ((st = prt_stream_synchronize(rc->device, rc->stream))) {
        cli_error_api(st, "waiting for the outputs' copies");
        return CLI_FAIL;
    }
    for (int i = 0; i < rc->nb_slots; i++)
        rc->slots[i].fetched = 1;
    return CLI_OK;
}

void run_ctx_destroy(run_ctx *rc)
{
    /* Work may still be queued after a failure: the memory it uses is freed
     * only once it is done. */
    if (rc->stream && prt_stream_synchronize(rc->device, rc->stream) != PRT_OK)
        cli_warn("waiting for the %s stream before freeing its memory: %s",
                 cli_device_name(rc->device), prt_last_error());
    prt_context_destroy(rc->ctx);
    for (int32_t i = 0; rc->in_dev && i < rc->nb_in; i++)
        prt_device_free(rc->device, rc->in_dev[i]);
    for (int i = 0; i < rc->nb_slots; i++) {
        prt_device_free(rc->device, rc->slots[i].dev);
        free(rc->slots[i].host);
    }
    prt_stream_destroy(rc->device, rc->stream);
    free(rc->in_dev);
    free(rc->slots);
    memset(rc, 0, sizeof *rc);
}

int run_ctx_output(const run_ctx *rc, int i, prt_dims *dims, const void **data)
{
    const run_slot *s = &rc->slots[i];
    char en[CLI_ESC_CAP];
    if (!s->fetched) {
        cli_error("internal: output %s was not fetched",
                  cli_escape(s->name, en, sizeof en));
        return CLI_FAIL;
    }
    *dims = s->dims;
    *data = s->host;
    return CLI_OK;
}
