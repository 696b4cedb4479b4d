/*
 * Autotuning on the CPU: time each (format combination, tactic) candidate of
 * a layer on random data at the profile's opt shapes and keep the fastest.
 * A candidate must first agree with the reference — candidate 0, the first
 * combination at tactic 0 — so a fast but wrong tactic can never win.
 */
#include <math.h>
#include <string.h>
#include <time.h>

#include "builder/builder.h"

#define TUNE_RUNS 5

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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
        case PRT_FLOAT32: ((float *)p)[i] = f; break;
        case PRT_FLOAT16: ((uint16_t *)p)[i] = prt_float_to_half(f); break;
        case PRT_BFLOAT16: ((uint16_t *)p)[i] = prt_float_to_bf16(f); break;
        case PRT_INT8: ((int8_t *)p)[i] = (int8_t)(r % 8); break;
        case PRT_UINT8: ((uint8_t *)p)[i] = (uint8_t)(r % 8); break;
        case PRT_INT32: ((int32_t *)p)[i] = (int32_t)(r % 8); break;
        case PRT_INT64: ((int64_t *)p)[i] = (int64_t)(r % 8); break;
        default: ((uint8_t *)p)[i] = (uint8_t)(r & 1); break;
        }
    }
}

static float as_float(const void *p, int32_t dtype, int64_t i)
{
    switch (dtype) {
    case PRT_FLOAT32: return ((const float *)p)[i];
    case PRT_FLOAT16: return prt_half_to_float(((const uint16_t *)p)[i]);
    default: return prt_bf16_to_float(((const uint16_t *)p)[i]);
    }
}

/* Outputs agree: integers exactly, floats within a tolerance fitting their
 * precision (tactics may sum in another order). */
static int outputs_agree(const void *a, const void *b, int32_t dtype, int64_t count)
{
    double tol;
    if (dtype != PRT_FLOAT32 && dtype != PRT_FLOAT16 && dtype != PRT_BFLOAT16)
        return memcmp(a, b, (size_t)count * prt_dtype_size(dtype)) == 0;
    tol = dtype == PRT_FLOAT32 ? 1e-4 : 1e-2;
    for (int64_t i = 0; i < count; i++) {
        float x = as_float(a, dtype, i), y = as_float(b, dtype, i);
        if (isnan(x) && isnan(y))
            continue;
        if (!(fabs((double)x - (double)y) <= tol + tol * fabs((double)y)))
            return 0;
    }
    return 1;
}

typedef struct tune_bufs {
    prt_tensor_desc desc[128];
    void *ptr[128];
    int64_t count[128];
    void *workspace;
} tune_bufs;

/* Concrete descs and buffers from the candidate's dynamic descs. */
static prt_status tune_alloc(const tune_candidate *c, int32_t nb_in, int32_t nb_out,
                             const uint32_t *out_dd, int64_t workspace, tune_bufs *tb)
{
    uint64_t seed = 0x5eed5eed12345ull; /* the same inputs for every candidate */
    for (int32_t k = 0; k < nb_in + nb_out; k++) {
        const prt_dynamic_tensor_desc *d = &c->descs[k];
        prt_tensor_desc *t = &tb->desc[k];
        int64_t n;
        memset(t, 0, sizeof *t);
        t->dtype = d->desc.dtype;
        t->format = d->desc.format;
        t->dims = d->opt;
        if (k >= nb_in)
            for (int32_t i = 0; i < d->opt.nb_dims; i++)
                if (out_dd[k - nb_in] & (1u << i))
                    t->dims.d[i] = d->max.d[i];
        n = base_volume(&t->dims);
        if (n < 0 || n > ((int64_t)1 << 31))
            return base_error(PRT_ERR_SHAPE, "tuning: tensor %d is too large", (int)k);
        tb->count[k] = n;
        tb->ptr[k] = base_calloc((size_t)n + 1, prt_dtype_size(t->dtype));
        if (!tb->ptr[k])
            return base_error(PRT_ERR_OUT_OF_MEMORY, "tuning: out of memory");
        if (k < nb_in)
            fill_random(tb->ptr[k], t->dtype, n, &seed);
    }
    tb->workspace = workspace ? base_malloc((size_t)workspace) : NULL;
    if (workspace && !tb->workspace)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "tuning: out of memory");
    return PRT_OK;
}

static void tune_free(tune_bufs *tb, int32_t n)
{
    for (int32_t k = 0; k < n; k++)
        base_free(tb->ptr[k]);
    base_free(tb->workspace);
    memset(tb, 0, sizeof *tb);
}

static prt_status tune_run(prt_plugin *p, tune_bufs *tb, int32_t nb_in, int32_t nb_out)
{
    for (int32_t o = 0; o < nb_out; o++)
        memset(tb->ptr[nb_in + o], 0,
               (size_t)tb->count[nb_in + o] * prt_dtype_size(tb->desc[nb_in + o].dtype));
    return p->vt->runtime->enqueue(p, tb->desc, tb->desc + nb_in,
                                   (const void *const *)tb->ptr, tb->ptr + nb_in,
                                   tb->workspace, PRT_DEVICE_CPU, NULL);
}

/* Prepares and runs candidate c once (its result stays in tb). */
static prt_status tune_first_run(prt_plugin *plugin, const tune_candidate *c,
                                 int32_t nb_in, int32_t nb_out, const uint32_t *out_dd,
                                 int64_t workspace, tune_bufs *tb)
{
    prt_status st = tune_alloc(c, nb_in, nb_out, out_dd, workspace, tb);
    if (!st && BUILD_ENTRY(plugin, configure))
        st = BUILD_ENTRY(plugin, configure)(plugin, c->descs, nb_in, c->descs + nb_in, nb_out);
    if (!st && RUNTIME_ENTRY(plugin, set_tactic))
        st = RUNTIME_ENTRY(plugin, set_tactic)(plugin, c->tactic);
    if (!st && RUNTIME_ENTRY(plugin, on_shape_change))
        st = RUNTIME_ENTRY(plugin, on_shape_change)(plugin, tb->desc, nb_in, tb->desc + nb_in, nb_out);
    if (!st)
        st = tune_run(plugin, tb, nb_in, nb_out);
    return st;
}

static int same_formats(const tune_candidate *a, const tune_candidate *b, int32_t n)
{
    for (int32_t k = 0; k < n; k++)
        if (a->descs[k].desc.format != b->descs[k].desc.format)
            return 0;
    return 1;
}

prt_status tune_layer(prt_plugin *plugin, const char *layer_name, int32_t nb_in,
                      int32_t nb_out, const tune_candidate *cands, int32_t nb_cands,
                      int64_t workspace, const uint32_t *out_dd, int32_t *best)
{
    void *ref[64] = {0};
    double best_t = 0;
    int32_t best_i = -1;
    prt_status st = PRT_OK;
    if (nb_out > 64 || nb_in + nb_out > 128)
        return base_error(PRT_ERR_UNSUPPORTED, "tuning '%s': too many tensors", layer_name);
    for (int32_t c = 0; c < nb_cands && !st; c++) {
        tune_bufs tb;
        double times[TUNE_RUNS];
        int32_t runs = 0;
        memset(&tb, 0, sizeof tb);
        base_clear_error();
        st = tune_first_run(plugin, &cands[c], nb_in, nb_out, out_dd, workspace, &tb);
        if (st && c == 0) {
            st = base_error_prefix(PRT_ERR_PLUGIN, "layer '%s': the reference candidate "
                                   "(tactic 0) failed while tuning", layer_name);
        } else if (st) {
            base_log(PRT_SEV_WARNING, "layer '%s': tactic %d failed while tuning and is "
                     "skipped: %s", layer_name, (int)cands[c].tactic, prt_last_error());
            st = PRT_OK;
        } else if (c == 0) {
            for (int32_t o = 0; o < nb_out && !st; o++) {
                size_t bytes = (size_t)tb.count[nb_in + o] *
                               prt_dtype_size(tb.desc[nb_in + o].dtype);
                ref[o] = base_malloc(bytes + 1);
                if (!ref[o])
                    st = base_error(PRT_ERR_OUT_OF_MEMORY, "tuning: out of memory");
                else
                    memcpy(ref[o], tb.ptr[nb_in + o], bytes);
            }
        } else if (same_formats(&cands[c], &cands[0], nb_in + nb_out)) {
            /* Layouts match the reference's, so the values can be compared. */
            for (int32_t o = 0; o < nb_out; o++)
                if (!outputs_agree(tb.ptr[nb_in + o], ref[o], tb.desc[nb_in + o].dtype,
                                   tb.count[nb_in + o])) {
                    base_log(PRT_SEV_WARNING, "layer '%s': tactic %d disagrees with the "
                             "reference on output %d and is skipped", layer_name,
                             (int)cands[c].tactic, (int)o);
                    tune_free(&tb, nb_in + nb_out);
                    break;
                }
        }
        /* tb.ptr[0] is NULL when the candidate was dropped above. */
        if (!st && (nb_in + nb_out == 0 || tb.ptr[0] != NULL)) {
            for (; runs < TUNE_RUNS; runs++) {
                double t0 = now_s();
                if (tune_run(plugin, &tb, nb_in, nb_out) != PRT_OK)
                    break;
                times[runs] = now_s() - t0;
            }
            if (runs == TUNE_RUNS) {
                /* Median of the runs. */
                for (int i = 1; i < runs; i++)
                    for (int j = i; j > 0 && times[j - 1] > times[j]; j--) {
                        double x = times[j];
                        times[j] = times[j - 1];
                        times[j - 1] = x;
                    }
                base_log(PRT_SEV_VERBOSE, "layer '%s': candidate %d (tactic %d): %.3f us",
                         layer_name, (int)c, (int)cands[c].tactic,
                         times[runs / 2] * 1e6);
                if (best_i < 0 || times[runs / 2] < best_t) {
                    best_t = times[runs / 2];
                    best_i = c;
                }
            }
        }
        tune_free(&tb, nb_in + nb_out);
    }
    for (int32_t o = 0; o < 64; o++)
        base_free(ref[o]);
    if (!st)
        *best = best_i < 0 ? 0 : best_i;
    return st;
}
