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

int run_inputs_add_file(run_inputs *l, const char *name, const char *path, int from_dir)
{
    char err[1024], en[CLI_ESC_CAP];
    npy_array arr;
    run_input *in;
    char *p;
    if (npy_read(path, &arr, err, sizeof err) != 0) {
        cli_error("input %s: %s", cli_escape(name, en, sizeof en), err);
        return CLI_FAIL;
    }
    p = cli_strdup(path);
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
    vol = cli_volume(&dims);
    if (vol < 0 || (uint64_t)vol > SIZE_MAX / 8) {
        cli_error("input %s: shape %s is too large", name,
                  cli_format_dims(&dims, a, sizeof a));
        return CLI_FAIL;
    }
    bytes = (size_t)vol * prt_dtype_size(io->dtype);
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
        if (in->arr.dtype != io->dtype) {
            cli_error("input %s: %s holds %s, the model takes %s (convert it, e.g. "
                      "numpy's a.astype(np.%s))",
                      name, cli_escape(in->path, ep, sizeof ep),
                      prt_dtype_name(in->arr.dtype), prt_dtype_name(io->dtype),
                      io->dtype == PRT_BOOL ? "bool_" : prt_dtype_name(io->dtype));
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

/* ---- outputs ------------------------------------------------------------- */

static void *slot_reallocate(void *user, const char *tensor_name, void *current,
                             uint64_t size, uint64_t alignment)
{
    run_slot *s = user;
    void *mem = NULL;
    size_t align = alignment > 64 ? (size_t)alignment : 64;
    (void)tensor_name;
    (void)current;
    /* Reuse once big enough: after the first run the hot path allocates
     * nothing. */
    if (s->mem && size <= s->cap)
        return s->mem;
    if ((align & (align - 1)) != 0 || size > SIZE_MAX - 64)
        return NULL;
    if (posix_memalign(&mem, align, size ? (size_t)size : 1) != 0)
        return NULL;
    free(s->mem);
    s->mem = mem;
    s->cap = size;
    return mem;
}

static void slot_notify(void *user, const char *tensor_name, const prt_dims *dims)
{
    (void)tensor_name;
    ((run_slot *)user)->notified = *dims;
}

int run_ctx_create(run_ctx *rc, const prt_engine *engine, int32_t profile,
                   int64_t memory_limit)
{
    prt_context_options opt;
    prt_status st;
    memset(rc, 0, sizeof *rc);
    memset(&opt, 0, sizeof opt);
    opt.struct_size = sizeof opt;
    opt.memory_limit = memory_limit;
    if ((st = prt_context_create_with_options(engine, &opt, &rc->ctx))) {
        char need[32], limit[32];
        cli_error_api(st, "cannot create an execution context");
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
    return CLI_OK;
}

static int bind_output(run_ctx *rc, run_slot *s, const prt_io_info *io)
{
    prt_status st;
    char en[CLI_ESC_CAP];
    s->name = io->name;
    s->dtype = io->dtype;
    if (io->data_dependent_mask) {
        s->use_allocator = 1;
        s->alloc.struct_size = sizeof s->alloc;
        s->alloc.abi_version = PRT_PLUGIN_ABI_VERSION;
        s->alloc.user = s;
        s->alloc.reallocate = slot_reallocate;
        s->alloc.notify_shape = slot_notify;
        s->notified.nb_dims = -1;
        st = prt_context_set_output_allocator(rc->ctx, io->name, &s->alloc);
    } else {
        prt_dims dims;
        int64_t vol;
        uint64_t bytes;
        char a[128];
        st = prt_context_get_tensor_shape(rc->ctx, io->name, &dims);
        if (st == PRT_OK) {
            vol = cli_volume(&dims);
            if (vol < 0) {
                cli_error("output %s: cannot size a buffer for dims %s",
                          cli_escape(io->name, en, sizeof en),
                          cli_format_dims(&dims, a, sizeof a));
                return CLI_FAIL;
            }
            bytes = (uint64_t)vol * prt_dtype_size(io->dtype);
            if (!slot_reallocate(s, io->name, NULL, bytes, 64)) {
                cli_error("out of memory for output %s (%llu bytes)",
                          cli_escape(io->name, en, sizeof en), (unsigned long long)bytes);
                return CLI_FAIL;
            }
            st = prt_context_set_tensor_address(rc->ctx, io->name, s->mem);
        }
    }
    if (st) {
        cli_error_api(st, "output %s", cli_escape(io->name, en, sizeof en));
        return CLI_FAIL;
    }
    return CLI_OK;
}

int run_ctx_bind(run_ctx *rc, const run_model *m, const run_inputs *inputs)
{
    int32_t nb_out = m->nb_io - m->nb_inputs;
    prt_status st;
    rc->slots = calloc((size_t)(nb_out ? nb_out : 1), sizeof *rc->slots);
    if (!rc->slots) {
        cli_error("out of memory for the bookkeeping of %d outputs", (int)nb_out);
        return CLI_FAIL;
    }
    /* Inputs first: output sizes follow from the input shapes. */
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
    for (int32_t i = m->nb_inputs; i < m->nb_io; i++)
        if (bind_output(rc, &rc->slots[rc->nb_slots++], &m->io[i]) != CLI_OK)
            return CLI_FAIL;
    return CLI_OK;
}

void run_ctx_destroy(run_ctx *rc)
{
    prt_context_destroy(rc->ctx);
    for (int i = 0; i < rc->nb_slots; i++)
        free(rc->slots[i].mem);
    free(rc->slots);
    memset(rc, 0, sizeof *rc);
}

int run_ctx_output(const run_ctx *rc, int i, prt_dims *dims, const void **data)
{
    const run_slot *s = &rc->slots[i];
    int64_t vol;
    char en[CLI_ESC_CAP];
    prt_status st = prt_context_get_tensor_shape(rc->ctx, s->name, dims);
    if (st) {
        cli_error_api(st, "shape of output %s", cli_escape(s->name, en, sizeof en));
        return CLI_FAIL;
    }
    vol = cli_volume(dims);
    if (vol < 0 || (uint64_t)vol * prt_dtype_size(s->dtype) > s->cap ||
        (vol > 0 && !s->mem)) {
        char a[128];
        cli_error("output %s: the runtime reports dims %s, more than the %llu bytes it "
                  "was given (a bug in plugrt; please report it)",
                  cli_escape(s->name, en, sizeof en), cli_format_dims(dims, a, sizeof a),
                  (unsigned long long)s->cap);
        return CLI_FAIL;
    }
    *data = s->mem;
    return CLI_OK;
}
