/*
 * check::Positives@1, the plugin `plugrt check` is tested on: built once
 * as it should be (BROKEN_NONE, which passes every check) and once per
 * defect, each switched on by one macro, so that a failure can be laid at
 * that defect's door alone.
 *
 * One float32 input x of rank 1..8. Fields: threshold (float32, default
 * 0); constant_dims (int32, default 0): 1 refuses input dims that are not
 * constants, as a plugin that must know its shapes at build time does.
 *   out0 float32 [K]     the elements of x above threshold, in order
 *   out1 int64   0-D     K: a size tensor, opt ceil(n / 2), upper bound n
 *   out2 int64   [rank]  x's dims, stated by get_output_values
 * with n the volume of x. Enqueue compacts into its workspace (4n bytes at
 * the profile's largest x) and copies out; it sizes its work from the
 * volume on_shape_change saw, kept in a state block of its own on the heap
 * (so a clone must copy it). Tactic 1 counts first and then writes.
 *
 * Defects (one per library, CMake's BROKEN_*):
 *   SIZE_BOUND     writes K = n + 1, one value past out0's bound
 *   CLONE_SHARE    clone and attach_to_context share the state block
 *   UNWRITTEN      leaves out0's last element unwritten
 *   FORMAT_READ    supports_format_combination(pos 0) reads position 1
 *   CRASH_ENQUEUE  enqueue writes through NULL
 *   SILENT_ERROR   get_output_shapes refuses rank 8 without a message
 *   IDENTITY       the plugin calls itself "Positive"
 *   SERIALIZE      get_fields_to_serialize forgets threshold
 *   TACTIC         tactic 1 drops the first element above threshold
 *   WORKSPACE      asks less workspace the larger the profile
 *   INPUT_WRITE    enqueue writes into x
 *   EMPTY_CRASH    divides by n: an empty x ends in SIGFPE
 *   EMPTY_HANG     never returns from an empty x
 *   VALUES         get_output_values states x's first dim plus one
 *   SHARED_SCRATCH enqueue compacts into one static buffer shared by every
 *                  object (and takes its time copying out), so two
 *                  contexts running at once on two threads mix results
 *   FORK_ORPHAN    the first enqueue of each object forks a process that
 *                  never exits (and holds the checker's stdout and stderr)
 *   SHAPES_OVERRUN get_output_shapes writes one prt_dim_exprs past the
 *                  nb_outputs it is given
 *   RANDOM_OUTPUT  every third enqueue of an object overwrites out0 with
 *                  rand() values
 *
 * Built with POSITIVES_CUDA it runs on CUDA too (positives_cuda.cu: one
 * kernel, given the defect to have), and these defects are on CUDA only,
 * the CPU staying right:
 *   CUDA_SIZE_BOUND  the kernel writes K = n + 1, one value past out0's bound
 *   CUDA_UNWRITTEN   the kernel leaves out0's last element unwritten
 *   CUDA_DISAGREE    the kernel scales what it keeps by 1.001: CUDA and the
 *                    CPU disagree
 *   CUDA_STREAM      the kernel is launched on the default stream, not on
 *                    the stream enqueue is given
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#endif

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "plugrt/plugin.h"
#include "scaffold.h"

#if !defined(BROKEN_NONE) && !defined(BROKEN_SIZE_BOUND) &&                              \
    !defined(BROKEN_CLONE_SHARE) && !defined(BROKEN_UNWRITTEN) &&                        \
    !defined(BROKEN_FORMAT_READ) && !defined(BROKEN_CRASH_ENQUEUE) &&                    \
    !defined(BROKEN_SILENT_ERROR) && !defined(BROKEN_IDENTITY) &&                        \
    !defined(BROKEN_SERIALIZE) && !defined(BROKEN_TACTIC) &&                             \
    !defined(BROKEN_WORKSPACE) && !defined(BROKEN_INPUT_WRITE) &&                        \
    !defined(BROKEN_EMPTY_CRASH) && !defined(BROKEN_EMPTY_HANG) &&                       \
    !defined(BROKEN_VALUES) && !defined(BROKEN_SHARED_SCRATCH) &&                        \
    !defined(BROKEN_FORK_ORPHAN) && !defined(BROKEN_SHAPES_OVERRUN) &&                   \
    !defined(BROKEN_RANDOM_OUTPUT) && !defined(BROKEN_CUDA_SIZE_BOUND) &&                \
    !defined(BROKEN_CUDA_UNWRITTEN) && !defined(BROKEN_CUDA_DISAGREE) &&                 \
    !defined(BROKEN_CUDA_STREAM)
#error "define one BROKEN_* (BROKEN_NONE for the plugin without a defect)"
#endif

#ifdef POSITIVES_CUDA
#include "positives_cuda.h"
#if defined(BROKEN_CUDA_SIZE_BOUND)
#define CUDA_DEFECT POS_CUDA_SIZE_BOUND
#elif defined(BROKEN_CUDA_UNWRITTEN)
#define CUDA_DEFECT POS_CUDA_UNWRITTEN
#elif defined(BROKEN_CUDA_DISAGREE)
#define CUDA_DEFECT POS_CUDA_DISAGREE
#elif defined(BROKEN_CUDA_STREAM)
#define CUDA_DEFECT POS_CUDA_STREAM
#else
#define CUDA_DEFECT POS_CUDA_NONE
#endif
#endif

typedef struct state {
    int64_t n; /* x's volume, from on_shape_change */
} state;

typedef struct positives {
    prt_plugin base;
    float threshold;
    int32_t constant_dims;
    int32_t tactic;
    state *st;     /* owned */
    int64_t calls; /* enqueues of this object (FORK_ORPHAN, RANDOM_OUTPUT) */
    prt_field ser[2];
    prt_field_collection fields;
} positives;

static positives *me(prt_plugin *p)
{
    return (positives *)p;
}

static int64_t volume(const prt_dims *d)
{
    int64_t v = 1;
    for (int32_t i = 0; i < d->nb_dims; i++)
        v *= d->d[i];
    return v;
}

/* ---- core ----------------------------------------------------------------- */

#ifdef BROKEN_IDENTITY
#define NAME "Positive"
#else
#define NAME "Positives"
#endif
#ifdef POSITIVES_CUDA
#define DEVICES ((1u << PRT_DEVICE_CPU) | (1u << PRT_DEVICE_CUDA))
#else
#define DEVICES (1u << PRT_DEVICE_CPU)
#endif
SCAFFOLD_CORE(NAME, DEVICES);

/* ---- build ------------------------------------------------------------------ */

static int32_t nb_outputs(const prt_plugin *self)
{
    (void)self;
    return 3;
}

static prt_status output_dtypes(prt_plugin *self, int32_t *out, int32_t nb_out,
                                const int32_t *in, int32_t nb_in)
{
    (void)self;
    if (nb_in != 1 || nb_out != 3)
        return fail(PRT_ERR_INVALID_ARGUMENT, "Positives takes 1 input and 3 outputs");
    if (in[0] != PRT_FLOAT32)
        return fail(PRT_ERR_UNSUPPORTED, "Positives takes a float32 input");
    out[0] = PRT_FLOAT32;
    out[1] = PRT_INT64;
    out[2] = PRT_INT64;
    return PRT_OK;
}

static prt_status output_shapes(prt_plugin *self, const prt_dim_exprs *in, int32_t nb_in,
                                const prt_dim_exprs *shape_in, int32_t nb_shape_in,
                                prt_dim_exprs *out, int32_t nb_out, prt_expr_builder *b)
{
    const prt_expr *n, *k;
    (void)shape_in, (void)nb_shape_in;
    if (nb_in != 1 || nb_out != 3)
        return fail(PRT_ERR_INVALID_ARGUMENT, "Positives takes 1 input and 3 outputs");
#ifdef BROKEN_SILENT_ERROR
    if (in[0].nb_dims == 8)
        return PRT_ERR_SHAPE;
#endif
    if (in[0].nb_dims < 1)
        return fail(PRT_ERR_SHAPE, "Positives takes an input of rank 1 to 8");
    for (int32_t i = 0; me(self)->constant_dims && i < in[0].nb_dims; i++)
        if (!b->is_constant(b, in[0].d[i], NULL))
            return fail(PRT_ERR_SHAPE, "Positives (constant_dims 1) needs constant dims");
    n = in[0].d[0];
    for (int32_t i = 1; i < in[0].nb_dims; i++)
        n = b->operation(b, PRT_DIM_PROD, n, in[0].d[i]);
    k = b->declare_size_tensor(
        b, 1, b->operation(b, PRT_DIM_CEIL_DIV, n, b->constant(b, 2)), n);
    if (!k)
        return fail(PRT_ERR_PLUGIN, "Positives: the size tensor could not be declared");
    out[0].nb_dims = 1;
    out[0].d[0] = k;
    out[1].nb_dims = 0;
    out[2].nb_dims = 1;
    out[2].d[0] = b->constant(b, in[0].nb_dims);
#ifdef BROKEN_SHAPES_OVERRUN
    out[nb_out].nb_dims = 0; /* one output more than asked */
#endif
    return PRT_OK;
}

static int32_t supports(prt_plugin *self, int32_t pos, const prt_dynamic_tensor_desc *io,
                        int32_t nb_in, int32_t nb_out)
{
    static const int32_t want[4] = {PRT_FLOAT32, PRT_FLOAT32, PRT_INT64, PRT_INT64};
    (void)self;
    if (nb_in != 1 || nb_out != 3 || pos < 0 || pos > 3 ||
        io[pos].desc.format != PRT_FORMAT_LINEAR)
        return 0;
#ifdef BROKEN_FORMAT_READ
    if (pos == 0 && io[1].desc.dtype != PRT_FLOAT32)
        return 0;
#endif
    return io[pos].desc.dtype == want[pos];
}

static prt_status configure(prt_plugin *self, const prt_dynamic_tensor_desc *in,
                            int32_t nb_in, const prt_dynamic_tensor_desc *out,
                            int32_t nb_out)
{
    (void)self, (void)out;
    if (nb_in != 1 || nb_out != 3 || in[0].desc.dtype != PRT_FLOAT32)
        return fail(PRT_ERR_INVALID_ARGUMENT, "Positives: configured with other tensors");
    if (out[0].desc.dtype != PRT_FLOAT32 || out[1].desc.dtype != PRT_INT64 ||
        out[2].desc.dtype != PRT_INT64)
        return fail(PRT_ERR_INVALID_ARGUMENT, "Positives: outputs of other dtypes");
    return PRT_OK;
}

static prt_status workspace(prt_plugin *self, const prt_dynamic_tensor_desc *in,
                            int32_t nb_in, const prt_dynamic_tensor_desc *out,
                            int32_t nb_out, int64_t *bytes)
{
    (void)self, (void)nb_in, (void)out, (void)nb_out;
#ifdef BROKEN_WORKSPACE
    *bytes = 4 * ((int64_t)1 << 20) / (volume(&in[0].max) + 1);
#else
    *bytes = 4 * volume(&in[0].max);
#endif
    return PRT_OK;
}

static prt_status valid_tactics(prt_plugin *self, int32_t *tactics, int32_t cap,
                                int32_t *count)
{
    (void)self;
    if (cap >= 1)
        tactics[0] = 1;
    *count = 1;
    return PRT_OK;
}

static int32_t aliased(const prt_plugin *self, int32_t o)
{
    (void)self, (void)o;
    return -1;
}

static prt_status output_values(prt_plugin *self, const prt_dim_exprs *in_dims,
                                const prt_dim_exprs *in_values, int32_t nb_in,
                                prt_dim_exprs *out, int32_t nb_out, prt_expr_builder *b)
{
    (void)self, (void)in_values, (void)b;
    if (nb_in != 1 || nb_out != 3)
        return fail(PRT_ERR_INVALID_ARGUMENT, "Positives takes 1 input and 3 outputs");
    out[2] = in_dims[0];
#ifdef BROKEN_VALUES
    out[2].d[0] = b->operation(b, PRT_DIM_SUM, in_dims[0].d[0], b->constant(b, 1));
#endif
    return PRT_OK;
}

static const prt_plugin_build build = {sizeof build,  PRT_PLUGIN_ABI_VERSION,
                                       nb_outputs,    output_dtypes,
                                       output_shapes, supports,
                                       configure,     workspace,
                                       valid_tactics, aliased,
                                       output_values, NULL,
                                       NULL,          NULL,
                                       NULL};

/* ---- runtime ---------------------------------------------------------------- */

static prt_status set_tactic(prt_plugin *self, int32_t tactic)
{
    if (tactic != 0 && tactic != 1)
        return fail(PRT_ERR_INVALID_ARGUMENT, "Positives has tactics 0 and 1");
    me(self)->tactic = tactic;
    return PRT_OK;
}

static prt_status shape_change(prt_plugin *self, const prt_tensor_desc *in, int32_t nb_in,
                               const prt_tensor_desc *out, int32_t nb_out)
{
    (void)out;
    if (nb_in != 1 || nb_out != 3 || in[0].dims.nb_dims < 1)
        return fail(PRT_ERR_SHAPE, "Positives: an input of rank 1 to 8 and 3 outputs");
    me(self)->st->n = volume(&in[0].dims);
    return PRT_OK;
}

static prt_status enqueue(prt_plugin *self, const prt_tensor_desc *in_desc,
                          const prt_tensor_desc *out_desc, const void *const *inputs,
                          void *const *outputs, void *ws, int32_t device, void *stream)
{
    positives *p = me(self);
    const float *x = inputs[0];
    float *scratch = ws, *y = outputs[0];
    int64_t n = p->st->n, k = 0, *dims = outputs[2];
    (void)out_desc, (void)stream;
#ifdef POSITIVES_CUDA
    if (device == PRT_DEVICE_CUDA) {
        pos_launch a;
        int err;
        memset(&a, 0, sizeof a);
        a.x = x;
        a.n = n;
        a.threshold = p->threshold;
        a.y = y;
        a.k = outputs[1];
        a.dims_out = dims;
        a.rank = in_desc[0].dims.nb_dims;
        for (int32_t i = 0; i < a.rank; i++)
            a.dims[i] = in_desc[0].dims.d[i];
        a.defect = CUDA_DEFECT;
        err = pos_cuda(&a, stream);
        return err ? fail(PRT_ERR_PLUGIN, pos_cuda_error(err)) : PRT_OK;
    }
#endif
    if (device != PRT_DEVICE_CPU)
        return fail(PRT_ERR_UNSUPPORTED, "Positives runs on the CPU");
    p->calls++;
#ifdef BROKEN_FORK_ORPHAN
    if (p->calls == 1 && fork() == 0)
        for (;;)
            pause(); /* never exits, holding every descriptor of the caller */
#endif
#ifdef BROKEN_SHARED_SCRATCH
    {
        static float shared[(size_t)1 << 16];
        if ((size_t)n <= sizeof shared / sizeof shared[0])
            scratch = shared;
    }
#endif
#ifdef BROKEN_WORKSPACE
    scratch = malloc(sizeof *scratch * (size_t)(n + 1)); /* it asked too little */
    if (!scratch)
        return fail(PRT_ERR_OUT_OF_MEMORY, "Positives: out of memory");
#endif
#ifdef BROKEN_CRASH_ENQUEUE
    *(volatile int *)(uintptr_t)device = 1; /* device is 0: NULL */
#endif
#ifdef BROKEN_EMPTY_HANG
    for (volatile int64_t spin = n; spin == 0;)
        ;
#endif
#ifdef BROKEN_EMPTY_CRASH
    {
        volatile int64_t zero = n, per = 1024 / zero;
        (void)per;
    }
#endif
    if (p->tactic == 1) { /* count, then write in place */
        int64_t count = 0;
        for (int64_t i = 0; i < n; i++)
            count += x[i] > p->threshold;
        for (int64_t i = 0; i < n; i++)
            if (x[i] > p->threshold)
                scratch[k++] = x[i];
        (void)count;
#ifdef BROKEN_TACTIC
        if (k > 0)
            memmove(scratch, scratch + 1, sizeof *scratch * (size_t)--k);
#endif
    } else {
        for (int64_t i = 0; i < n; i++)
            if (x[i] > p->threshold)
                scratch[k++] = x[i];
    }
#ifdef BROKEN_SIZE_BOUND
    scratch = malloc(sizeof *scratch * (size_t)(n + 1));
    if (!scratch)
        return fail(PRT_ERR_OUT_OF_MEMORY, "Positives: out of memory");
    for (int64_t i = 0; i < n; i++)
        scratch[i] = x[i];
    scratch[n] = 1.0f;
    k = n + 1;
#endif
#ifdef BROKEN_SHARED_SCRATCH
    /* A plugin that takes its time (200 us) between filling its scratch and
     * reading it back: another thread's run fills the shared scratch
     * meanwhile. */
    {
        struct timespec pause = {0, 200000};
        nanosleep(&pause, NULL);
    }
#endif
#ifdef BROKEN_UNWRITTEN
    if (k > 1)
        memcpy(y, scratch, sizeof *y * (size_t)(k - 1));
#else
    if (k > 0) /* with an empty x, workspace and y may be NULL */
        memcpy(y, scratch, sizeof *y * (size_t)k);
#endif
#if defined(BROKEN_SIZE_BOUND) || defined(BROKEN_WORKSPACE)
    free(scratch);
#endif
#ifdef BROKEN_RANDOM_OUTPUT
    for (int64_t i = 0; p->calls % 3 == 0 && i < k; i++)
        y[i] = (float)rand() / (float)RAND_MAX;
#endif
#ifdef BROKEN_INPUT_WRITE
    if (n > 0)
        ((float *)inputs[0])[0] = -x[0];
#endif
    memcpy(outputs[1], &k, sizeof k);
    for (int32_t i = 0; i < in_desc[0].dims.nb_dims; i++)
        dims[i] = in_desc[0].dims.d[i];
    return PRT_OK;
}

static prt_plugin *make(float threshold, int32_t constant_dims,
                        const prt_plugin_vtable *vt);

static prt_plugin *copy_of(const positives *p)
{
#ifdef BROKEN_CLONE_SHARE
    positives *q = malloc(sizeof *q);
    if (q)
        *q = *p; /* the state block too: shared */
    return q ? &q->base : NULL;
#else
    positives *q = (positives *)make(p->threshold, p->constant_dims, p->base.vt);
    if (q) {
        q->tactic = p->tactic;
        *q->st = *p->st;
    }
    return q ? &q->base : NULL;
#endif
}

static prt_plugin *attach(prt_plugin *self, prt_plugin_resources *res)
{
    (void)res;
    return copy_of(me(self));
}

static prt_plugin *clone(const prt_plugin *self)
{
    return copy_of((const positives *)self);
}

static const prt_field_collection *fields(prt_plugin *self)
{
    positives *p = me(self);
    p->ser[0] = (prt_field){"constant_dims", &p->constant_dims, PRT_FIELD_INT32, 1};
    p->ser[1] = (prt_field){"threshold", &p->threshold, PRT_FIELD_FLOAT32, 1};
    p->fields.fields = p->ser;
#ifdef BROKEN_SERIALIZE
    p->fields.nb_fields = 1;
#else
    p->fields.nb_fields = 2;
#endif
    return &p->fields;
}

static void destroy(prt_plugin *self)
{
    free(me(self)->st);
    free(self);
}

static const prt_plugin_runtime runtime = {sizeof runtime, PRT_PLUGIN_ABI_VERSION,
                                           set_tactic,     shape_change,
                                           enqueue,        attach,
                                           fields,         clone,
                                           destroy};

static const prt_plugin_vtable vt_build = {sizeof vt_build, PRT_PLUGIN_ABI_VERSION, &core,
                                           &build, &runtime};
static const prt_plugin_vtable vt_runtime = {sizeof vt_runtime, PRT_PLUGIN_ABI_VERSION,
                                             &core, NULL, &runtime};

static prt_plugin *make(float threshold, int32_t constant_dims,
                        const prt_plugin_vtable *vt)
{
    positives *p = calloc(1, sizeof *p);
    if (p)
        p->st = calloc(1, sizeof *p->st);
    if (!p || !p->st) {
        free(p);
        fail(PRT_ERR_OUT_OF_MEMORY, "Positives: out of memory");
        return NULL;
    }
    p->base.vt = vt;
    p->threshold = threshold;
    p->constant_dims = constant_dims;
    return &p->base;
}

/* ---- creator and library ------------------------------------------------------- */

static const prt_field_schema schema[] = {
    {"threshold", PRT_FIELD_FLOAT32, 1, "elements above it are kept (default 0)"},
    {"constant_dims", PRT_FIELD_INT32, 1, "1: input dims must be constants (default 0)"},
};

/* A field of this name, type and length 1, or NULL; a known name with
 * another type is *bad. */
static const prt_field *field(const prt_field_collection *fc, const char *name,
                              int32_t type, int *bad)
{
    for (int32_t i = 0; fc && i < fc->nb_fields; i++) {
        const prt_field *f = &fc->fields[i];
        if (!f->name || strcmp(f->name, name) != 0)
            continue;
        if (f->type != type || f->length != 1 || !f->data)
            *bad = 1;
        return *bad ? NULL : f;
    }
    return NULL;
}

static prt_status create(const prt_plugin_creator *self, const char *layer,
                         const prt_field_collection *fc, int32_t phase, prt_plugin **out)
{
    float threshold = 0.0f;
    int32_t constant_dims = 0;
    int bad = 0;
    const prt_field *t = field(fc, "threshold", PRT_FIELD_FLOAT32, &bad);
    const prt_field *d = field(fc, "constant_dims", PRT_FIELD_INT32, &bad);
    (void)self, (void)layer;
    if (phase != PRT_PHASE_BUILD && phase != PRT_PHASE_RUNTIME)
        return fail(PRT_ERR_INVALID_ARGUMENT, "Positives: unknown phase");
    if (bad)
        return fail(PRT_ERR_INVALID_ARGUMENT,
                    "Positives: threshold is one float32, constant_dims one int32");
    if (t)
        memcpy(&threshold, t->data, sizeof threshold);
    if (d)
        memcpy(&constant_dims, d->data, sizeof constant_dims);
    *out = make(threshold, constant_dims,
                phase == PRT_PHASE_BUILD ? &vt_build : &vt_runtime);
    return *out ? PRT_OK : PRT_ERR_OUT_OF_MEMORY;
}

static const prt_plugin_creator creator = {sizeof creator,
                                           PRT_PLUGIN_ABI_VERSION,
                                           "Positives",
                                           "1",
                                           "check",
                                           (int32_t)(sizeof schema / sizeof schema[0]),
                                           schema,
                                           create,
                                           NULL};
SCAFFOLD_LIBRARY("positives", creator)
