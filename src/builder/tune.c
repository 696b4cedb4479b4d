/*
 * Autotuning on the engine's device: time each (format combination, tactic) candidate of
 * a layer on random data at the profile's opt shapes and keep the fastest.
 * A candidate must first agree with the reference — on a device other than
 * the CPU, the plugin's CPU implementation on the same inputs when it has
 * one; else candidate 0, the first combination at the first tactic the
 * plugin lists (0 when it lists none) — so a fast but wrong tactic can never
 * win.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "builder/builder.h"
#include "ops/op_workspace.h"

/* Timed runs per candidate (median); on a GPU, after warm-up runs, more of
 * them since each is short and noisy. */
#define TUNE_RUNS_HOST 5
#define TUNE_RUNS_DEVICE 21
#define TUNE_WARMUP_DEVICE 3
#define TUNE_MAX_RUNS 32

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dull;
}

/* Random values that are valid for every dtype: floats in [-1, 1), small
 * non-negative integers, booleans 0/1. */
static void fill_random(void *p, int32_t dtype, int64_t count, uint64_t *seed)
{
    for (int64_t i = 0; i < count; i++) {
        uint64_t r = rng_next(seed);
        float f = (float)((double)(r >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0);
        switch (dtype) {
        case PRT_FLOAT32:
            ((float *)p)[i] = f;
            break;
        case PRT_FLOAT16:
            ((uint16_t *)p)[i] = prt_float_to_half(f);
            break;
        case PRT_BFLOAT16:
            ((uint16_t *)p)[i] = prt_float_to_bf16(f);
            break;
        case PRT_INT8:
            ((int8_t *)p)[i] = (int8_t)(r % 8);
            break;
        case PRT_UINT8:
            ((uint8_t *)p)[i] = (uint8_t)(r % 8);
            break;
        case PRT_INT32:
            ((int32_t *)p)[i] = (int32_t)(r % 8);
            break;
        case PRT_INT64:
            ((int64_t *)p)[i] = (int64_t)(r % 8);
            break;
        default:
            ((uint8_t *)p)[i] = (uint8_t)(r & 1);
            break;
        }
    }
}

static float as_float(const void *p, int32_t dtype, int64_t i)
{
    switch (dtype) {
    case PRT_FLOAT32:
        return ((const float *)p)[i];
    case PRT_FLOAT16:
        return prt_half_to_float(((const uint16_t *)p)[i]);
    default:
        return prt_bf16_to_float(((const uint16_t *)p)[i]);
    }
}

/* The first element where two outputs disagree, or -1: integers exactly,
 * floats within a tolerance fitting their precision (tactics may sum in
 * another order). */
static int64_t first_disagreement(const void *a, const void *b, int32_t dtype,
                                  int64_t count, int tf32)
{
    double tol;
    if (dtype != PRT_FLOAT32 && dtype != PRT_FLOAT16 && dtype != PRT_BFLOAT16) {
        size_t es = prt_dtype_size(dtype);
        for (int64_t i = 0; i < count; i++)
            if (memcmp((const uint8_t *)a + (size_t)i * es,
                       (const uint8_t *)b + (size_t)i * es, es) != 0)
                return i;
        return -1;
    }
    tol = dtype == PRT_FLOAT32 && !tf32 ? 1e-4 : 1e-2;
    for (int64_t i = 0; i < count; i++) {
        float x = as_float(a, dtype, i), y = as_float(b, dtype, i);
        if (isnan(x) && isnan(y))
            continue;
        if (!(fabs((double)x - (double)y) <= tol + tol * fabs((double)y)))
            return i;
    }
    return -1;
}

/* Element i as a double, for messages. */
static double element(const void *p, int32_t dtype, int64_t i)
{
    switch (dtype) {
    case PRT_FLOAT32:
    case PRT_FLOAT16:
    case PRT_BFLOAT16:
        return (double)as_float(p, dtype, i);
    case PRT_INT8:
        return ((const int8_t *)p)[i];
    case PRT_UINT8:
    case PRT_BOOL:
        return ((const uint8_t *)p)[i];
    case PRT_INT32:
        return ((const int32_t *)p)[i];
    default:
        return (double)((const int64_t *)p)[i];
    }
}

typedef struct tune_bufs {
    const dev_ops *dev;
    void *stream;
    prt_tensor_desc desc[128];
    void *ptr[128]; /* device memory */
    int64_t count[128];
    void *workspace;
    void *host; /* staging for inputs and for reading outputs back */
    size_t host_size;
} tune_bufs;

static size_t tune_bytes(const tune_bufs *tb, int32_t k)
{
    return (size_t)tb->count[k] * prt_dtype_size(tb->desc[k].dtype);
}

/* Concrete descs and device buffers from the candidate's dynamic descs;
 * inputs get the same random values for every candidate. */
static prt_status tune_alloc(const tune_candidate *c, int32_t nb_in, int32_t nb_out,
                             const uint32_t *out_dd, int64_t workspace, tune_bufs *tb)
{
    uint64_t seed = 0x5eed5eed12345ull;
    prt_status st;
    for (int32_t k = 0; k < nb_in + nb_out; k++) {
        const prt_dynamic_tensor_desc *d = &c->descs[k];
        prt_tensor_desc *t = &tb->desc[k];
        int64_t n;
        memset(t, 0, sizeof *t);
        t->dtype = d->desc.dtype;
        t->format = d->desc.format;
        t->reserved[0] = d->desc.reserved[0];
        t->dims = d->opt;
        if (k >= nb_in)
            for (int32_t i = 0; i < d->opt.nb_dims; i++)
                if (out_dd[k - nb_in] & (1u << i))
                    t->dims.d[i] = d->max.d[i];
        n = prt_format_volume(t->format, &t->dims);
        if (n < 0 || n > ((int64_t)1 << 31))
            return base_error(PRT_ERR_SHAPE, "tuning: tensor %d is too large", (int)k);
        tb->count[k] = n;
        if (tune_bytes(tb, k) > tb->host_size)
            tb->host_size = tune_bytes(tb, k);
    }
    st = tb->dev->alloc_host(tb->host_size, &tb->host);
    for (int32_t k = 0; !st && k < nb_in + nb_out; k++) {
        st = tb->dev->alloc(tune_bytes(tb, k), &tb->ptr[k]);
        if (!st && k < nb_in) {
            fill_random(tb->host, tb->desc[k].dtype, tb->count[k], &seed);
            st = tb->dev->copy(tb->ptr[k], tb->host, tune_bytes(tb, k), DEV_COPY_H2D,
                               tb->stream);
            /* The staging buffer is reused for the next input. */
            if (!st)
                st = tb->dev->stream_sync(tb->stream);
        }
    }
    if (!st && workspace)
        st = tb->dev->alloc((size_t)workspace, &tb->workspace);
    return st ? base_error_prefix(st, "tuning") : PRT_OK;
}

static void tune_free(tune_bufs *tb, int32_t n)
{
    const dev_ops *dev = tb->dev;
    void *stream = tb->stream;
    for (int32_t k = 0; k < n; k++)
        dev->free(tb->ptr[k]);
    dev->free(tb->workspace);
    dev->free_host(tb->host);
    memset(tb, 0, sizeof *tb);
    tb->dev = dev;
    tb->stream = stream;
}

/* Clears the outputs, then runs the plugin once on the tuning stream. An
 * output that aliases an input holds that input's data instead, as
 * plugin.h promises at every enqueue (the runtime copies it where the
 * memory is not shared; here it never is). */
static prt_status tune_run(prt_plugin *p, tune_bufs *tb, int32_t nb_in, int32_t nb_out)
{
    for (int32_t o = 0; o < nb_out; o++) {
        int32_t in = BUILD_ENTRY(p, get_aliased_input)
                         ? BUILD_ENTRY(p, get_aliased_input)(p, o)
                         : -1;
        size_t bytes = tune_bytes(tb, nb_in + o);
        prt_status st;
        if (in >= 0 && in < nb_in && tb->desc[in].dtype == tb->desc[nb_in + o].dtype) {
            size_t from = tune_bytes(tb, in);
            st = bytes > from ? tb->dev->memset(tb->ptr[nb_in + o], 0, bytes, tb->stream)
                              : PRT_OK;
            if (!st)
                st = tb->dev->copy(tb->ptr[nb_in + o], tb->ptr[in],
                                   bytes < from ? bytes : from, DEV_COPY_D2D, tb->stream);
        } else {
            st = tb->dev->memset(tb->ptr[nb_in + o], 0, bytes, tb->stream);
        }
        if (st)
            return st;
    }
    return p->vt->runtime->enqueue(p, tb->desc, tb->desc + nb_in,
                                   (const void *const *)tb->ptr, tb->ptr + nb_in,
                                   tb->workspace, tb->dev->device, tb->stream);
}

/* Output o of the last run, copied to host memory `dst`. */
static prt_status tune_read_output(tune_bufs *tb, int32_t k, void *dst)
{
    prt_status st =
        tb->dev->copy(dst, tb->ptr[k], tune_bytes(tb, k), DEV_COPY_D2H, tb->stream);
    return st ? st : tb->dev->stream_sync(tb->stream);
}

/* Prepares and runs candidate c once (its result stays in tb). */
static prt_status tune_first_run(prt_plugin *plugin, const tune_candidate *c,
                                 int32_t nb_in, int32_t nb_out, const uint32_t *out_dd,
                                 int64_t workspace, tune_bufs *tb)
{
    prt_status st = tune_alloc(c, nb_in, nb_out, out_dd, workspace, tb);
    if (!st && BUILD_ENTRY(plugin, configure))
        st = BUILD_ENTRY(plugin, configure)(plugin, c->descs, nb_in, c->descs + nb_in,
                                            nb_out);
    if (!st && RUNTIME_ENTRY(plugin, set_tactic))
        st = RUNTIME_ENTRY(plugin, set_tactic)(plugin, c->tactic);
    if (!st && RUNTIME_ENTRY(plugin, on_shape_change))
        st = RUNTIME_ENTRY(plugin, on_shape_change)(plugin, tb->desc, nb_in,
                                                    tb->desc + nb_in, nb_out);
    if (!st)
        st = tune_run(plugin, tb, nb_in, nb_out);
    if (!st)
        st = tb->dev->stream_sync(tb->stream);
    return st;
}

/* Median time in ms of the candidate's timed runs (after warm-up runs on a
 * GPU), measured with the device's events; -1 when a run fails. */
static double tune_time(prt_plugin *plugin, tune_bufs *tb, int32_t nb_in, int32_t nb_out,
                        void *ev0, void *ev1)
{
    double times[TUNE_MAX_RUNS];
    int32_t runs = tb->dev->host_visible ? TUNE_RUNS_HOST : TUNE_RUNS_DEVICE;
    int32_t warmup = tb->dev->host_visible ? 0 : TUNE_WARMUP_DEVICE;
    for (int32_t r = 0; r < warmup; r++)
        if (tune_run(plugin, tb, nb_in, nb_out) != PRT_OK)
            return -1;
    for (int32_t r = 0; r < runs; r++) {
        if (tb->dev->event_record(ev0, tb->stream) != PRT_OK ||
            tune_run(plugin, tb, nb_in, nb_out) != PRT_OK ||
            tb->dev->event_record(ev1, tb->stream) != PRT_OK ||
            tb->dev->event_sync(ev1) != PRT_OK ||
            tb->dev->event_elapsed_ms(ev0, ev1, &times[r]) != PRT_OK)
            return -1;
    }
    for (int i = 1; i < runs; i++)
        for (int j = i; j > 0 && times[j - 1] > times[j]; j--) {
            double x = times[j];
            times[j] = times[j - 1];
            times[j - 1] = x;
        }
    return times[runs / 2];
}

static int same_formats(const tune_candidate *a, const tune_candidate *b, int32_t n)
{
    for (int32_t k = 0; k < n; k++)
        if (a->descs[k].desc.format != b->descs[k].desc.format)
            return 0;
    return 1;
}

/* The reference outputs in host memory: the plugin's CPU implementation on
 * the same inputs when the target is another device and the plugin runs on
 * the CPU, else candidate 0 on the target (filled by the caller). */
typedef struct tune_ref {
    void *out[64];
    int from_cpu;
    char label[48]; /* names the reference in messages */
} tune_ref;

/* Frees the outputs kept; the label stays. */
static void ref_free(tune_ref *r)
{
    for (int32_t o = 0; o < 64; o++) {
        base_free(r->out[o]);
        r->out[o] = NULL;
    }
    r->from_cpu = 0;
}

/* Copies the outputs of the run in tb into r (host memory). */
static prt_status ref_keep(tune_ref *r, tune_bufs *tb, int32_t nb_in, int32_t nb_out)
{
    prt_status st = PRT_OK;
    for (int32_t o = 0; o < nb_out && !st; o++) {
        r->out[o] = base_malloc(tune_bytes(tb, nb_in + o) + 1);
        st = r->out[o] ? tune_read_output(tb, nb_in + o, r->out[o])
                       : base_error(PRT_ERR_OUT_OF_MEMORY, "tuning: out of memory");
    }
    return st;
}

/* Candidate 0 (the first combination at the first tactic) on the CPU. 0
 * with a warning when the CPU run fails: the target's candidate 0 is then
 * the reference. */
static int ref_on_cpu(prt_plugin *plugin, const char *layer_name,
                      const tune_candidate *c0, int32_t nb_in, int32_t nb_out,
                      const uint32_t *out_dd, int64_t workspace, tune_ref *r)
{
    tune_bufs tb;
    void *stream = NULL;
    prt_status st;
    memset(&tb, 0, sizeof tb);
    tb.dev = &dev_cpu_ops;
    dev_cpu_ops.stream_create(&stream);
    tb.stream = stream;
    base_clear_error();
    st = tune_first_run(plugin, c0, nb_in, nb_out, out_dd, workspace, &tb);
    if (!st)
        st = ref_keep(r, &tb, nb_in, nb_out);
    tune_free(&tb, nb_in + nb_out);
    if (st) {
        base_log(PRT_SEV_WARNING,
                 "layer '%s': the CPU implementation failed while tuning "
                 "(%s); tactics are checked against tactic %d on the device instead",
                 layer_name, prt_last_error(), (int)c0->tactic);
        ref_free(r);
        return 0;
    }
    r->from_cpu = 1;
    snprintf(r->label, sizeof r->label, "the CPU implementation");
    return 1;
}

/* 1 if candidate c's outputs (in tb) agree with the reference; else logs
 * which output and element differ and returns 0. */
static int agrees(tune_bufs *tb, const tune_ref *r, const tune_candidate *c,
                  int32_t nb_in, int32_t nb_out, void *got, const char *layer_name,
                  int tf32, prt_status *st)
{
    for (int32_t o = 0; o < nb_out; o++) {
        int32_t k = nb_in + o, dt = tb->desc[k].dtype;
        int64_t bad;
        *st = tune_read_output(tb, k, got);
        if (*st)
            return 0;
        bad = first_disagreement(got, r->out[o], dt, tb->count[k], tf32);
        if (bad >= 0) {
            base_log(
                PRT_SEV_WARNING,
                "layer '%s': tactic %d disagrees with the reference "
                "(%s) and is rejected: output %d element %lld is %g, the reference's "
                "%g",
                layer_name, (int)c->tactic, r->label, (int)o, (long long)bad,
                element(got, dt, bad), element(r->out[o], dt, bad));
            return 0;
        }
    }
    return 1;
}

prt_status tune_layer(const dev_ops *dev, prt_plugin *plugin, const char *layer_name,
                      int32_t nb_in, int32_t nb_out, const tune_candidate *cands,
                      int32_t nb_cands, int64_t workspace, const uint32_t *out_dd,
                      uint32_t precision, int32_t *best, double *best_ms)
{
    const int tf32 = (precision & PRT_PRECISION_TF32) != 0;
    tune_ref ref;
    void *got = NULL, *stream = NULL, *ev0 = NULL, *ev1 = NULL;
    size_t got_size = 0;
    double best_t = 0;
    int32_t best_i = -1, rejected = 0;
    prt_status st = PRT_OK;
    memset(&ref, 0, sizeof ref);
    snprintf(ref.label, sizeof ref.label, "tactic %d",
             nb_cands ? (int)cands[0].tactic : 0);
    if (nb_out > 64 || nb_in + nb_out > 128)
        return base_error(PRT_ERR_UNSUPPORTED, "tuning '%s': too many tensors",
                          layer_name);
    /* The runs get `workspace` bytes; a built-in op checks against it. */
    op_bind_workspace(plugin, workspace);
    st = dev->stream_create(&stream);
    if (!st)
        st = dev->event_create(&ev0);
    if (!st)
        st = dev->event_create(&ev1);
    if (st)
        st = base_error_prefix(st, "tuning '%s'", layer_name);
    if (!st && !dev->host_visible &&
        (plugin->vt->core->devices(plugin) & (1u << PRT_DEVICE_CPU)))
        ref_on_cpu(plugin, layer_name, &cands[0], nb_in, nb_out, out_dd, workspace, &ref);
    for (int32_t c = 0; c < nb_cands && !st; c++) {
        tune_bufs tb;
        int keep = 1;
        memset(&tb, 0, sizeof tb);
        tb.dev = dev;
        tb.stream = stream;
        base_clear_error();
        st = tune_first_run(plugin, &cands[c], nb_in, nb_out, out_dd, workspace, &tb);
        if (st && c == 0) {
            st = base_error_prefix(base_plugin_status(st),
                                   "layer '%s': the reference candidate "
                                   "(tactic %d) failed while tuning",
                                   layer_name, (int)cands[0].tactic);
            keep = 0;
        } else if (st) {
            base_log(PRT_SEV_WARNING,
                     "layer '%s': tactic %d failed while tuning and is "
                     "skipped: %s",
                     layer_name, (int)cands[c].tactic, prt_last_error());
            st = PRT_OK;
            keep = 0;
        } else if (c == 0 && !ref.from_cpu) {
            st = ref_keep(&ref, &tb, nb_in, nb_out);
        } else if (same_formats(&cands[c], &cands[0], nb_in + nb_out)) {
            /* Layouts match the reference's, so the values can be compared. */
            if (tb.host_size + 1 > got_size) {
                base_free(got);
                got_size = tb.host_size + 1;
                got = base_malloc(got_size);
                if (!got)
                    st = base_error(PRT_ERR_OUT_OF_MEMORY, "tuning: out of memory");
            }
            if (!st && !agrees(&tb, &ref, &cands[c], nb_in, nb_out, got, layer_name, tf32,
                               &st)) {
                keep = 0;
                rejected++;
            }
        }
        if (!st && keep) {
            double t = tune_time(plugin, &tb, nb_in, nb_out, ev0, ev1);
            if (t >= 0) {
                base_log(PRT_SEV_VERBOSE, "layer '%s': candidate %d (tactic %d): %.3f us",
                         layer_name, (int)c, (int)cands[c].tactic, t * 1e3);
                if (best_i < 0 || t < best_t) {
                    best_t = t;
                    best_i = c;
                }
            }
        }
        tune_free(&tb, nb_in + nb_out);
    }
    if (!st && best_i < 0 && rejected > 0)
        st = base_error(PRT_ERR_PLUGIN,
                        "layer '%s': no tactic agrees with the reference "
                        "(%s); the build log names each one's first wrong element",
                        layer_name, ref.label);
    ref_free(&ref);
    base_free(got);
    dev->event_destroy(ev0);
    dev->event_destroy(ev1);
    dev->stream_destroy(stream);
    if (!st)
        *best = best_i < 0 ? 0 : best_i;
    if (!st && best_ms)
        *best_ms = best_i < 0 ? -1 : best_t;
    return st;
}
