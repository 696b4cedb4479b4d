/*
 * The standard plugins on CUDA against their own CPU implementation (as
 * ggml's test-backend-ops): NonZeroPlugin, CustomHardmax, circ_pad_plugin
 * and AddInPlace, every dtype, both NonZero orders, every Hardmax axis,
 * every tactic each plugin lists.
 *
 *  - Through enqueue with descriptors filled here: CPU enqueue gives the
 *    reference; the CUDA run gets device buffers poisoned with 0xff bytes,
 *    plus 64 poisoned guard bytes before (when misaligned) and after each
 *    output, so an element left unwritten or written out of bounds fails.
 *  - Integers and one-hots compare exactly, copies bit for bit, sums bit for
 *    bit except that a NaN matches any NaN (the GPU's NaN is canonical).
 *  - Device pointers offset by one element (or 4 bytes for indices) take the
 *    kernels' scalar paths; shapes include 0, 1, odd sizes, sizes that are
 *    not a multiple of the vector width, and ones large enough for the
 *    multi-block and split-axis paths.
 *  - Dims from the device: descriptors holding upper bounds with the true
 *    dims in dims_device (every plugin), and two-layer CUDA engines in which
 *    a test plugin makes a data-dependent tensor for Hardmax, circ pad and
 *    AddInPlace to read. (NonZero cannot follow one: its size tensor's opt
 *    would depend on a size, which the builder refuses.)
 *  - CUDA graphs: a captured plugin enqueue replayed twice, and a captured
 *    128 x 128 NonZero engine, against the CPU; replay time printed.
 *  - Engines built for CUDA with autotuning: any "tactic disagrees" warning
 *    fails the test.
 *  - Timing of the large cases against a device-to-device copy of the same
 *    bytes, printed for information only.
 * Every failure prints the plugin, dtype, shape, tactic and first bad
 * element. Without a usable GPU the test exits 77 (skipped).
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_testutil.h"

#if defined(__GNUC__)
#define TC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TC_PRINTF(f, a)
#endif

#define NAME "test_cuda_plugins"
#define GUARD 64 /* poisoned bytes checked around each output */
#define MAX_TACTICS 8

static cudaStream_t g_stream;

/* Records a failure of the case `label`. */
static void case_fail(const char *label, const char *fmt, ...) TC_PRINTF(2, 3);
static void case_fail(const char *label, const char *fmt, ...)
{
    va_list ap;
    tu_failures++;
    fprintf(stderr, "FAIL %s: ", label);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n    last error: %s\n", prt_last_error());
}

static const char *dtype_str(int32_t dtype)
{
    return dtype == PRT_FLOAT32 ? "float32" : "float16";
}

static size_t dtype_bytes(int32_t dtype)
{
    return dtype == PRT_FLOAT32 ? 4 : 2;
}

static const char *dims_str(const prt_dims *d, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int32_t i = 0; i < d->nb_dims && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "",
                              (long long)d->d[i]);
    if (n < cap)
        snprintf(buf + n, cap - n, "]");
    return buf;
}

static prt_dims mkdims(int32_t nb, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    int64_t v[4] = {d0, d1, d2, d3};
    return tu_dims(nb, v);
}

/* ---- device buffers ------------------------------------------------------- */

/* `bytes` at p = base + off, with `off` poisoned bytes before and GUARD
 * after. */
typedef struct dbuf {
    unsigned char *base;
    void *p;
    size_t bytes, off;
} dbuf;

static size_t dbuf_span(const dbuf *b)
{
    return b->off + b->bytes + GUARD;
}

static int dbuf_poison(dbuf *b)
{
    return b->base && CUDA_OK(cudaMemset(b->base, 0xff, dbuf_span(b)));
}

static int dbuf_make(dbuf *b, size_t bytes, size_t off)
{
    memset(b, 0, sizeof *b);
    b->bytes = bytes;
    b->off = off;
    if (!CUDA_OK(cudaMalloc((void **)&b->base, dbuf_span(b)))) {
        b->base = NULL;
        return 0;
    }
    b->p = b->base + off;
    return dbuf_poison(b);
}

static void dbuf_free(dbuf *b)
{
    if (b->base)
        cudaFree(b->base);
    memset(b, 0, sizeof *b);
}

static int dbuf_put(dbuf *b, const void *host, size_t bytes)
{
    return bytes == 0 || CUDA_OK(cudaMemcpy(b->p, host, bytes, cudaMemcpyHostToDevice));
}

static int dbuf_get(void *host, const dbuf *b, size_t bytes)
{
    return bytes == 0 || CUDA_OK(cudaMemcpy(host, b->p, bytes, cudaMemcpyDeviceToHost));
}

/* 1 if the guard bytes before and after the buffer are still poison. */
static int dbuf_guards_ok(const dbuf *b, const char *label, const char *what)
{
    unsigned char g[GUARD];
    size_t at[2] = {0, b->off + b->bytes};
    size_t len[2] = {b->off < GUARD ? b->off : GUARD, GUARD};
    for (int k = 0; k < 2; k++) {
        if (len[k] == 0)
            continue;
        if (!CUDA_OK(cudaMemcpy(g, b->base + at[k], len[k], cudaMemcpyDeviceToHost)))
            return 0;
        for (size_t i = 0; i < len[k]; i++)
            if (g[i] != 0xff) {
                case_fail(label, "%s: a byte %s the buffer was written", what,
                          k ? "past the end of" : "before");
                return 0;
            }
    }
    return 1;
}

/* ---- calling a plugin directly ------------------------------------------- */

typedef struct prun {
    prt_plugin *p;
    int32_t nb_in, nb_out;
    prt_tensor_desc in[2], out[2];
} prun;

static prt_tensor_desc desc(int32_t dtype, const prt_dims *d)
{
    prt_tensor_desc t;
    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    t.format = PRT_FORMAT_LINEAR;
    t.dims = *d;
    return t;
}

static prt_dynamic_tensor_desc dyn(const prt_tensor_desc *t)
{
    prt_dynamic_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.desc = *t;
    d.desc.dims_device = NULL;
    d.min = d.opt = d.max = t->dims;
    return d;
}

/* configure at the descriptors' dims (upper bounds) and the workspace the
 * plugin asks for. */
static int prun_prepare(const prun *r, int64_t *ws)
{
    prt_dynamic_tensor_desc in[2], out[2];
    const prt_plugin_build *b = r->p->vt->build;
    for (int32_t i = 0; i < r->nb_in; i++)
        in[i] = dyn(&r->in[i]);
    for (int32_t i = 0; i < r->nb_out; i++)
        out[i] = dyn(&r->out[i]);
    *ws = 0;
    if (b->configure && b->configure(r->p, in, r->nb_in, out, r->nb_out) != PRT_OK)
        return 0;
    return !b->get_workspace_size ||
           b->get_workspace_size(r->p, in, r->nb_in, out, r->nb_out, ws) == PRT_OK;
}

/* The tactics the plugin lists (the standard plugins list 0 first), or 0
 * alone when it lists none; returns the count. */
static int prun_tactics(const prun *r, int32_t *t)
{
    int32_t n = 0;
    if (r->p->vt->build->get_valid_tactics(r->p, t, MAX_TACTICS, &n) != PRT_OK || n < 1 ||
        n > MAX_TACTICS) {
        t[0] = 0;
        n = 1;
    }
    return n;
}

static prt_status prun_enqueue(const prun *r, int32_t tactic, int32_t device,
                               const void *const *in, void *const *out, void *ws)
{
    const prt_plugin_runtime *rt = r->p->vt->runtime;
    prt_status st = rt->set_tactic(r->p, tactic);
    if (!st && rt->on_shape_change)
        st = rt->on_shape_change(r->p, r->in, r->nb_in, r->out, r->nb_out);
    if (!st)
        st = rt->enqueue(r->p, r->in, r->out, in, out, ws, device,
                         device == PRT_DEVICE_CUDA ? (void *)g_stream : NULL);
    return st;
}

/* ---- test data ------------------------------------------------------------ */

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* A random finite float32: any sign, exponents 2^-27..2^23. */
static uint32_t rng_f32(tu_rng *r)
{
    uint32_t e = (uint32_t)tu_rng_range(r, 100, 150),
             m = (uint32_t)tu_rng_range(r, 0, 0x7FFFFF);
    return (uint32_t)tu_rng_range(r, 0, 1) << 31 | e << 23 | m;
}

/* Any bits: copies must keep NaN payloads and signalling NaNs as they are. */
static void fill_bits(tu_rng *r, void *x, int32_t dtype, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t v = tu_rng_u64(r);
        if (dtype == PRT_FLOAT32)
            ((uint32_t *)x)[i] = (uint32_t)v;
        else
            ((uint16_t *)x)[i] = (uint16_t)v;
    }
}

/* Finite values of many magnitudes (float16 sums may overflow to inf). */
static void fill_finite(tu_rng *r, void *x, int32_t dtype, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        if (dtype == PRT_FLOAT32)
            ((uint32_t *)x)[i] = rng_f32(r);
        else
            ((uint16_t *)x)[i] = tu_rng_half(r, 30);
    }
}

/* Hardmax data: many ties (small integers, -0 beside +0), infinities, and
 * NaNs of several encodings, about one line in four holding one (`line`
 * elements per axis line). */
static void fill_hardmax(tu_rng *r, void *x, int32_t dtype, int64_t n, int64_t line)
{
    static const uint16_t h_small[] = {0xC000, 0xBC00, 0x0000, 0x8000, 0x3C00, 0x4000};
    static const uint16_t h_nan[] = {0x7E00, 0x7C01, 0xFE00, 0xFFFF};
    static const uint32_t f_nan[] = {0x7FC00000u, 0x7F800001u, 0xFFC00000u, 0xFFFFFFFFu};
    double p_nan = 0.25 / (double)(line > 0 ? line : 1);
    for (int64_t i = 0; i < n; i++) {
        int64_t kind = tu_rng_range(r, 0, 15);
        int nan = tu_rng_uniform(r) < p_nan;
        if (dtype == PRT_FLOAT32) {
            uint32_t v = kind < 6    ? f32_bits((float)tu_rng_range(r, -2, 2))
                         : kind == 6 ? 0x80000000u
                         : kind == 7 ? 0x7F800000u
                         : kind == 8 ? 0xFF800000u
                                     : rng_f32(r);
            ((uint32_t *)x)[i] = nan ? f_nan[tu_rng_range(r, 0, 3)] : v;
        } else {
            uint16_t v = kind < 6    ? h_small[kind]
                         : kind == 7 ? 0x7C00
                         : kind == 8 ? 0xFC00
                                     : tu_rng_half(r, 30);
            ((uint16_t *)x)[i] = nan ? h_nan[tu_rng_range(r, 0, 3)] : v;
        }
    }
}

/* NonZero data: a fraction `density` non-zero, the rest +0 or -0; non-zeros
 * include NaN, infinities and subnormals (the smallest ones too). */
static void fill_nonzero(tu_rng *r, void *x, int32_t dtype, int64_t n, double density)
{
    for (int64_t i = 0; i < n; i++) {
        int nz = density >= 1.0 || tu_rng_uniform(r) < density;
        int64_t kind = tu_rng_range(r, 0, 15);
        uint32_t sign = (uint32_t)tu_rng_range(r, 0, 1);
        if (dtype == PRT_FLOAT32) {
            uint32_t v = sign << 31;
            if (nz)
                v = kind == 0   ? 0x7FC00000u
                    : kind == 1 ? (sign << 31 | 1u)
                    : kind == 2 ? 0xFF800000u
                                : rng_f32(r);
            ((uint32_t *)x)[i] = v;
        } else {
            uint16_t v = (uint16_t)(sign << 15);
            if (nz) {
                v = (uint16_t)(v | tu_rng_range(r, 1, 0x7BFF));
                if (kind == 0)
                    v = 0x7E00;
                else if (kind == 1)
                    v = (uint16_t)(sign << 15 | 1u);
                else if (kind == 2)
                    v = 0x7C00;
            }
            ((uint16_t *)x)[i] = v;
        }
    }
}

/* ---- comparisons ---------------------------------------------------------- */

static int is_nan_bits(const void *p, int32_t dtype, int64_t i)
{
    if (dtype == PRT_FLOAT32) {
        uint32_t u = ((const uint32_t *)p)[i];
        return (u & 0x7F800000u) == 0x7F800000u && (u & 0x7FFFFFu);
    }
    {
        uint16_t h = ((const uint16_t *)p)[i];
        return (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu);
    }
}

static uint32_t elem_bits(const void *p, int32_t dtype, int64_t i)
{
    return dtype == PRT_FLOAT32 ? ((const uint32_t *)p)[i] : ((const uint16_t *)p)[i];
}

/* Index of the first element that differs (bitwise; with nan_loose, any NaN
 * matches any NaN), or -1. */
static int64_t first_diff(const void *got, const void *want, int32_t dtype, int64_t n,
                          int nan_loose)
{
    for (int64_t i = 0; i < n; i++) {
        if (elem_bits(got, dtype, i) == elem_bits(want, dtype, i))
            continue;
        if (nan_loose && is_nan_bits(got, dtype, i) && is_nan_bits(want, dtype, i))
            continue;
        return i;
    }
    return -1;
}

/* "[1, 0, 4]": the index of flat element i in dims d. */
static const char *index_str(const prt_dims *d, int64_t i, char *buf, size_t cap)
{
    prt_dims ix = *d;
    for (int32_t k = d->nb_dims - 1; k >= 0; k--) {
        ix.d[k] = d->d[k] ? i % d->d[k] : 0;
        i = d->d[k] ? i / d->d[k] : 0;
    }
    return dims_str(&ix, buf, cap);
}

/* ---- NonZeroPlugin -------------------------------------------------------- */

static prt_plugin *nz_plugin(prt_registry *reg, int32_t row_order)
{
    prt_field f = {"rowOrder", &row_order, PRT_FIELD_INT32, 1};
    return tu_make_plugin(reg, "", "NonZeroPlugin", "1", &f, 1);
}

/* x (dims `in`) -> indices (room for every element) and K. */
static void nz_descs(prun *r, prt_plugin *p, int32_t dtype, int32_t order,
                     const prt_dims *in)
{
    int64_t n = tu_volume(in);
    prt_dims o = order ? mkdims(2, n, 2, 0, 0) : mkdims(2, 2, n, 0, 0);
    prt_dims scalar = mkdims(0, 0, 0, 0, 0);
    memset(r, 0, sizeof *r);
    r->p = p;
    r->nb_in = 1;
    r->nb_out = 2;
    r->in[0] = desc(dtype, in);
    r->out[0] = desc(PRT_INT32, &o);
    r->out[1] = desc(PRT_INT64, &scalar);
}

/* The CPU's K and indices for x of true dims d. */
static int nz_cpu(prt_plugin *p, int32_t dtype, int32_t order, const prt_dims *d,
                  const void *x, int32_t *idx, int64_t *k)
{
    prun r;
    const void *in[1] = {x};
    void *out[2] = {idx, k};
    nz_descs(&r, p, dtype, order, d);
    return prun_enqueue(&r, 0, PRT_DEVICE_CPU, in, out, NULL) == PRT_OK;
}

/* Device buffers of one NonZero run. */
typedef struct nz_dev {
    dbuf x, idx, k, ws;
} nz_dev;

static void nz_dev_free(nz_dev *d)
{
    dbuf_free(&d->x);
    dbuf_free(&d->idx);
    dbuf_free(&d->k);
    dbuf_free(&d->ws);
}

/* K and the pairs against the CPU's. */
static void nz_compare(const char *label, int32_t order, int64_t k, int64_t k_want,
                       const int32_t *got, const int32_t *want)
{
    tu_checks++;
    if (k != k_want) {
        case_fail(label, "K = %lld, want %lld", (long long)k, (long long)k_want);
        return;
    }
    for (int64_t j = 0; j < k; j++) {
        int32_t gr = order ? got[2 * j] : got[j],
                gc = order ? got[2 * j + 1] : got[k + j];
        int32_t wr = order ? want[2 * j] : want[j],
                wc = order ? want[2 * j + 1] : want[k + j];
        if (gr != wr || gc != wc) {
            case_fail(label, "index pair %lld of %lld is (%d, %d), want (%d, %d)",
                      (long long)j, (long long)k, (int)gr, (int)gc, (int)wr, (int)wc);
            return;
        }
    }
}

/* Reads K and the indices a finished run left in d, checks them. */
static void nz_verify(const char *label, const prun *r, nz_dev *d, int32_t order,
                      int64_t k_want, const int32_t *want, int32_t *got)
{
    int64_t k = -1, cap = tu_volume(&r->out[0].dims) / 2;
    if (!CUDA_OK(cudaStreamSynchronize(g_stream)) || !dbuf_get(&k, &d->k, sizeof k))
        return;
    if (k < 0 || k > cap) {
        case_fail(label, "K = %lld, want %lld (the bound is %lld)", (long long)k,
                  (long long)k_want, (long long)cap);
        return;
    }
    if (!dbuf_get(got, &d->idx, (size_t)(2 * k) * sizeof(int32_t)))
        return;
    nz_compare(label, order, k, k_want, got, want);
    dbuf_guards_ok(&d->idx, label, "indices");
    dbuf_guards_ok(&d->k, label, "K");
}

static prt_status nz_enqueue_dev(const prun *r, int32_t tactic, nz_dev *d)
{
    const void *in[1] = {d->x.p};
    void *out[2] = {d->idx.p, d->k.p};
    return prun_enqueue(r, tactic, PRT_DEVICE_CUDA, in, out,
                        d->ws.bytes ? d->ws.p : NULL);
}

/* One CUDA run of r (outputs poisoned first), checked against the CPU. */
static void nz_cuda_check(const char *label, const prun *r, int32_t tactic, nz_dev *d,
                          int32_t order, int64_t k_want, const int32_t *want,
                          int32_t *got)
{
    if (!dbuf_poison(&d->idx) || !dbuf_poison(&d->k))
        return;
    tu_checks++;
    if (nz_enqueue_dev(r, tactic, d) != PRT_OK) {
        case_fail(label, "enqueue failed");
        return;
    }
    nz_verify(label, r, d, order, k_want, want, got);
}

/* Every density, both orders, every tactic, aligned and (when `misalign`)
 * with the input one element and the indices 4 bytes off alignment. */
static void nz_shape(prt_registry *reg, tu_rng *rng, int32_t dtype, int64_t rows,
                     int64_t cols, const double *dens, int nd, int misalign)
{
    prt_dims d = mkdims(2, rows, cols, 0, 0);
    int64_t n = rows * cols;
    size_t es = dtype_bytes(dtype);
    void *x = malloc((size_t)n * es + 1);
    int32_t *want = malloc(sizeof(int32_t) * (size_t)(2 * n + 1));
    int32_t *got = malloc(sizeof(int32_t) * (size_t)(2 * n + 1));
    prt_plugin *p[2] = {nz_plugin(reg, 0), nz_plugin(reg, 1)};
    nz_dev dev[2][2]; /* [order][misaligned] */
    prun r[2];
    int32_t t[2][MAX_TACTICS];
    int nt[2] = {0, 0};
    memset(dev, 0, sizeof dev);
    if (!x || !want || !got || !p[0] || !p[1]) {
        CHECK(!"out of memory or no plugin");
        goto done;
    }
    for (int o = 0; o < 2; o++) {
        int64_t ws = 0;
        nz_descs(&r[o], p[o], dtype, o, &d);
        CHECK(prun_prepare(&r[o], &ws));
        nt[o] = prun_tactics(&r[o], t[o]);
        /* Tactic 5, retired and no longer listed, still runs (as 6) for
         * engines that recorded it. */
        if (nt[o] < MAX_TACTICS)
            t[o][nt[o]++] = 5;
        for (int m = 0; m <= misalign; m++)
            if (!dbuf_make(&dev[o][m].x, (size_t)n * es, m ? es : 0) ||
                !dbuf_make(&dev[o][m].idx, sizeof(int32_t) * (size_t)(2 * n),
                           m ? 4 : 0) ||
                !dbuf_make(&dev[o][m].k, sizeof(int64_t), 0) ||
                !dbuf_make(&dev[o][m].ws, (size_t)ws, 0))
                goto done;
    }
    for (int di = 0; di < nd; di++) {
        fill_nonzero(rng, x, dtype, n, dens[di]);
        for (int o = 0; o < 2; o++) {
            int64_t k_want = -1;
            if (!nz_cpu(p[o], dtype, o, &d, x, want, &k_want)) {
                CHECK(!"NonZero on the CPU failed");
                continue;
            }
            for (int m = 0; m <= misalign; m++) {
                if (!dbuf_put(&dev[o][m].x, x, (size_t)n * es))
                    continue;
                for (int ti = 0; ti < nt[o]; ti++) {
                    char label[160];
                    /* Under the sanitizers (QUICK), one block (tactic 1)
                     * walking 16.8 M elements takes minutes; every smaller
                     * shape still runs it. */
                    if (getenv("PRT_CUDA_TEST_QUICK") && n > (1 << 20) && t[o][ti] == 1)
                        continue;
                    snprintf(label, sizeof label,
                             "NonZeroPlugin %s [%lld, %lld] rowOrder %d density %.2f "
                             "tactic %d%s",
                             dtype_str(dtype), (long long)rows, (long long)cols, o,
                             dens[di], (int)t[o][ti], m ? " misaligned" : "");
                    nz_cuda_check(label, &r[o], t[o][ti], &dev[o][m], o, k_want, want,
                                  got);
                }
            }
        }
    }
done:
    for (int o = 0; o < 2; o++) {
        for (int m = 0; m < 2; m++)
            nz_dev_free(&dev[o][m]);
        if (p[o])
            p[o]->vt->runtime->destroy(p[o]);
    }
    free(x);
    free(want);
    free(got);
}

/* The input's dims come from the device: descriptors hold the upper bound
 * `up`, dims_device the true dims `tr`, and x holds exactly tr's elements
 * (a kernel reading past them would count the 0xff guard bytes). */
static void nz_dims_device(prt_registry *reg, tu_rng *rng, int32_t dtype,
                           const prt_dims *up, const prt_dims *tr)
{
    int64_t n = tu_volume(tr), nu = tu_volume(up);
    size_t es = dtype_bytes(dtype);
    void *x = malloc((size_t)n * es + 1);
    int32_t *want = malloc(sizeof(int32_t) * (size_t)(2 * n + 1));
    int32_t *got = malloc(sizeof(int32_t) * (size_t)(2 * n + 1));
    dbuf ddims;
    char a[64], b[64];
    memset(&ddims, 0, sizeof ddims);
    if (!x || !want || !got || !dbuf_make(&ddims, 2 * sizeof(int64_t), 0) ||
        !dbuf_put(&ddims, tr->d, 2 * sizeof(int64_t))) {
        CHECK(!"out of memory");
        goto done;
    }
    fill_nonzero(rng, x, dtype, n, 0.3);
    for (int32_t o = 0; o < 2; o++) {
        prt_plugin *p = nz_plugin(reg, o);
        prun r;
        nz_dev dv;
        int64_t ws = 0, k_want = -1;
        int32_t t[MAX_TACTICS];
        int nt;
        memset(&dv, 0, sizeof dv);
        if (!p)
            continue;
        nz_descs(&r, p, dtype, o, up);
        r.in[0].dims_device = ddims.p;
        CHECK(prun_prepare(&r, &ws));
        nt = prun_tactics(&r, t);
        if (nz_cpu(p, dtype, o, tr, x, want, &k_want) &&
            dbuf_make(&dv.x, (size_t)n * es, 0) && dbuf_put(&dv.x, x, (size_t)n * es) &&
            dbuf_make(&dv.idx, sizeof(int32_t) * (size_t)(2 * nu), 0) &&
            dbuf_make(&dv.k, sizeof(int64_t), 0) && dbuf_make(&dv.ws, (size_t)ws, 0)) {
            for (int ti = 0; ti < nt; ti++) {
                char label[192];
                snprintf(
                    label, sizeof label,
                    "NonZeroPlugin %s dims_device %s of bound %s rowOrder %d tactic %d",
                    dtype_str(dtype), dims_str(tr, a, sizeof a),
                    dims_str(up, b, sizeof b), (int)o, (int)t[ti]);
                nz_cuda_check(label, &r, t[ti], &dv, o, k_want, want, got);
            }
        } else {
            CHECK(!"NonZero dims_device setup failed");
        }
        nz_dev_free(&dv);
        p->vt->runtime->destroy(p);
    }
done:
    dbuf_free(&ddims);
    free(x);
    free(want);
    free(got);
}

static void test_nonzero(prt_registry *reg, int32_t dtype)
{
    static const int64_t shapes[][2] = {{1, 1},      {1, 37},     {37, 1},    {7, 13},
                                        {0, 5},      {5, 0},      {3, 1024},  {64, 64},
                                        {128, 128},  {100, 333},  {257, 255}, {17, 12291},
                                        {1000, 999}, {1024, 1024}};
    static const double dens[] = {0.0, 0.01, 0.5, 1.0};
    static const double big_dens[] = {0.01, 0.5};
    static const int64_t dd[][4] = {
        /* upper, true */
        {50, 70, 50, 70}, {50, 70, 13, 70}, {50, 70, 50, 9},       {50, 70, 1, 1},
        {50, 70, 0, 70},  {50, 70, 37, 0},  {1100, 1000, 700, 999}};
    tu_rng rng;
    tu_rng_seed(&rng, 11 + (uint64_t)dtype);
    {
        int fails = tu_failures;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            nz_shape(reg, &rng, dtype, shapes[s][0], shapes[s][1], dens, 4, 1);
        for (int i = 0; i < 4; i++)
            nz_shape(reg, &rng, dtype, tu_rng_range(&rng, 1, 300),
                     tu_rng_range(&rng, 1, 300), dens, 4, 1);
        /* Multi-block for real: 16.8 M elements, some 4 K tiles. Not under
         * racecheck (PRT_CUDA_TEST_SMALL, scripts/cuda-sanitize.sh), which
         * checks shared memory only: a tile uses it the same way in the
         * 1024 x 1024 case's 256 tiles, and the big case takes it past any
         * time limit. */
        const char *small = getenv("PRT_CUDA_TEST_SMALL");
        if (!small || !*small)
            nz_shape(reg, &rng, dtype, 4096, 4097, big_dens, 2, 0);
        for (size_t i = 0; i < sizeof dd / sizeof dd[0]; i++) {
            prt_dims up = mkdims(2, dd[i][0], dd[i][1], 0, 0);
            prt_dims tr = mkdims(2, dd[i][2], dd[i][3], 0, 0);
            nz_dims_device(reg, &rng, dtype, &up, &tr);
        }
        printf("NonZeroPlugin %s: %zu shapes (0 x 5 to 4096 x 4097) x densities 0, 0.01, "
               "0.5, 1 x both orders x every tactic, aligned and misaligned; %zu "
               "dims_device cases: %s\n",
               dtype_str(dtype), sizeof shapes / sizeof shapes[0] + 5,
               sizeof dd / sizeof dd[0], tu_failures == fails ? "ok" : "FAILED");
    }
}

/* ---- plugins with one float output: Hardmax, circ pad, AddInPlace --------- */

/* One case: inputs of true dims in_dims (all of `dtype`), the output of true
 * dims out_dims. With `up`, descriptors hold upper bounds (up->in[i],
 * up->out) and dims_device the true dims. */
typedef struct fbounds {
    prt_dims in[2], out;
} fbounds;

typedef struct fcase {
    const char *what; /* "CustomHardmax axis 1", for labels */
    prt_plugin *p;
    int32_t nb_in;
    int32_t dtype;
    prt_dims in_dims[2], out_dims;
    const fbounds *up;
    const void *host_in[2];
    int misalign;  /* every device pointer one element off alignment */
    int alias;     /* -1: a separate output; k: the output is input k */
    int nan_loose; /* a NaN matches any NaN (arithmetic) */
} fcase;

/* Runs c on the CPU (reference) and on CUDA with every tactic. */
static void fcase_run(const fcase *c)
{
    size_t es = dtype_bytes(c->dtype);
    int64_t n_out = tu_volume(&c->out_dims);
    size_t out_bytes_up = (size_t)tu_volume(c->up ? &c->up->out : &c->out_dims) * es;
    size_t off = c->misalign ? es : 0;
    void *want = malloc((size_t)n_out * es + 1), *got = malloc((size_t)n_out * es + 1);
    void *cpu_in[2] = {NULL, NULL};
    dbuf din[2], dout, dws, ddims[3]; /* dims of the inputs, the output */
    prun cpu, gpu;
    int64_t ws = 0;
    int32_t t[MAX_TACTICS];
    int nt;
    char a[96], lab[256];
    memset(din, 0, sizeof din);
    memset(ddims, 0, sizeof ddims);
    memset(&dout, 0, sizeof dout);
    memset(&dws, 0, sizeof dws);
    memset(&cpu, 0, sizeof cpu);
    cpu.p = c->p;
    cpu.nb_in = c->nb_in;
    cpu.nb_out = 1;
    for (int32_t i = 0; i < c->nb_in; i++)
        cpu.in[i] = desc(c->dtype, &c->in_dims[i]);
    cpu.out[0] = desc(c->dtype, &c->out_dims);
    gpu = cpu;
    if (c->up) {
        for (int32_t i = 0; i < c->nb_in; i++)
            gpu.in[i].dims = c->up->in[i];
        gpu.out[0].dims = c->up->out;
    }
    snprintf(lab, sizeof lab, "%s %s %s%s%s%s", c->what, dtype_str(c->dtype),
             dims_str(&c->in_dims[0], a, sizeof a), c->up ? " (dims_device)" : "",
             c->misalign ? " misaligned" : "",
             c->alias >= 0 ? (c->alias ? " out=b" : " in place") : "");
    if (!want || !got) {
        CHECK(!"out of memory");
        goto done;
    }
    /* The reference; in place on the CPU too when the case aliases. */
    {
        const void *in[2];
        void *out[1] = {want};
        for (int32_t i = 0; i < c->nb_in; i++) {
            size_t b = (size_t)tu_volume(&c->in_dims[i]) * es;
            cpu_in[i] = malloc(b + 1);
            if (!cpu_in[i])
                goto done;
            memcpy(cpu_in[i], c->host_in[i], b);
            in[i] = cpu_in[i];
        }
        if (c->alias >= 0)
            out[0] = cpu_in[c->alias];
        tu_checks++;
        if (prun_enqueue(&cpu, 0, PRT_DEVICE_CPU, in, out, NULL) != PRT_OK) {
            case_fail(lab, "the CPU run failed");
            goto done;
        }
        if (c->alias >= 0)
            memcpy(want, cpu_in[c->alias], (size_t)n_out * es);
    }
    CHECK(prun_prepare(&gpu, &ws));
    nt = prun_tactics(&gpu, t);
    for (int32_t i = 0; i < c->nb_in; i++) {
        /* Sized as the runtime sizes them: for the upper bound. */
        size_t b = (size_t)tu_volume(c->up ? &c->up->in[i] : &c->in_dims[i]) * es;
        if (!dbuf_make(&din[i], c->alias == i ? out_bytes_up : b, off))
            goto done;
        if (c->up) {
            if (!dbuf_make(&ddims[i], sizeof(int64_t) * PRT_MAX_DIMS, 0) ||
                !dbuf_put(&ddims[i], c->in_dims[i].d, sizeof(int64_t) * PRT_MAX_DIMS))
                goto done;
            gpu.in[i].dims_device = ddims[i].p;
        }
    }
    if (c->up) {
        if (!dbuf_make(&ddims[2], sizeof(int64_t) * PRT_MAX_DIMS, 0) ||
            !dbuf_put(&ddims[2], c->out_dims.d, sizeof(int64_t) * PRT_MAX_DIMS))
            goto done;
        gpu.out[0].dims_device = ddims[2].p;
    }
    if (c->alias < 0 && !dbuf_make(&dout, out_bytes_up, off))
        goto done;
    if (!dbuf_make(&dws, (size_t)ws, 0))
        goto done;
    for (int ti = 0; ti < nt; ti++) {
        const void *in[2];
        void *out[1];
        dbuf *ob = c->alias >= 0 ? &din[c->alias] : &dout;
        char label[320];
        int64_t bad;
        snprintf(label, sizeof label, "%s tactic %d", lab, (int)t[ti]);
        if (c->alias < 0 && !dbuf_poison(&dout))
            goto done;
        for (int32_t i = 0; i < c->nb_in; i++) {
            if (c->alias == i && !dbuf_poison(&din[i]))
                goto done;
            if (!dbuf_put(&din[i], c->host_in[i], (size_t)tu_volume(&c->in_dims[i]) * es))
                goto done;
            in[i] = din[i].p;
        }
        out[0] = ob->p;
        tu_checks++;
        if (prun_enqueue(&gpu, t[ti], PRT_DEVICE_CUDA, in, out, ws ? dws.p : NULL) !=
            PRT_OK) {
            case_fail(label, "enqueue failed");
            continue;
        }
        if (!CUDA_OK(cudaStreamSynchronize(g_stream)) ||
            !dbuf_get(got, ob, (size_t)n_out * es))
            continue;
        bad = first_diff(got, want, c->dtype, n_out, c->nan_loose);
        if (bad >= 0) {
            char ix[96];
            case_fail(label, "element %lld %s is 0x%0*x, want 0x%0*x", (long long)bad,
                      index_str(&c->out_dims, bad, ix, sizeof ix), (int)(2 * es),
                      (unsigned)elem_bits(got, c->dtype, bad), (int)(2 * es),
                      (unsigned)elem_bits(want, c->dtype, bad));
        }
        dbuf_guards_ok(ob, label, "output");
    }
done:
    for (int i = 0; i < 2; i++) {
        dbuf_free(&din[i]);
        free(cpu_in[i]);
    }
    for (int i = 0; i < 3; i++)
        dbuf_free(&ddims[i]);
    dbuf_free(&dout);
    dbuf_free(&dws);
    free(want);
    free(got);
}

/* Random dims of rank nb, each in [lo, hi]. */
static prt_dims rand_dims(tu_rng *r, int32_t nb, int64_t lo, int64_t hi)
{
    prt_dims d;
    memset(&d, 0, sizeof d);
    d.nb_dims = nb;
    for (int32_t i = 0; i < nb; i++)
        d.d[i] = tu_rng_range(r, lo, hi);
    return d;
}

/* Runs a one-input case of plugin p (which it destroys): x of dims d gives
 * an output of dims od; with `up`, descriptors hold up (and up_out). */
static void run_unary(const char *what, prt_plugin *p, int32_t dtype, const prt_dims *d,
                      const prt_dims *od, const void *x, int misalign, const prt_dims *up,
                      const prt_dims *up_out)
{
    fbounds b;
    fcase c;
    if (!p || !x) {
        CHECK(!"no plugin or out of memory");
        if (p)
            p->vt->runtime->destroy(p);
        return;
    }
    memset(&c, 0, sizeof c);
    c.what = what;
    c.p = p;
    c.nb_in = 1;
    c.dtype = dtype;
    c.in_dims[0] = *d;
    c.out_dims = *od;
    c.host_in[0] = x;
    c.misalign = misalign;
    c.alias = -1;
    if (up) {
        b.in[0] = *up;
        b.out = *up_out;
        c.up = &b;
    }
    fcase_run(&c);
    p->vt->runtime->destroy(p);
}

/* ---- CustomHardmax -------------------------------------------------------- */

static void hm_case(prt_registry *reg, tu_rng *rng, int32_t dtype, const prt_dims *d,
                    int32_t axis, int misalign, const prt_dims *up)
{
    int32_t given = axis - (tu_rng_range(rng, 0, 1) ? d->nb_dims : 0); /* negative too */
    prt_field f = {"axis", &given, PRT_FIELD_INT32, 1};
    int64_t n = tu_volume(d);
    void *x = malloc((size_t)n * dtype_bytes(dtype) + 1);
    char what[48];
    if (x)
        fill_hardmax(rng, x, dtype, n, d->d[axis]);
    snprintf(what, sizeof what, "CustomHardmax axis %d", (int)given);
    run_unary(what, tu_make_plugin(reg, "", "CustomHardmax", "1", &f, 1), dtype, d, d, x,
              misalign, up, up);
    free(x);
}

static void test_hardmax(prt_registry *reg, int32_t dtype)
{
    /* Axis lines short and long, innermost and strided; 16-byte rows (64
     * float32, 8 and 64 float16) for the vector path; few long lines for the
     * split one; zero-size tensors. */
    static const int64_t shapes[][4] = {
        {1, 1, 0, 0},     {1, 5, 0, 0},      {1, 1000, 0, 0},    {2, 1, 1, 0},
        {2, 3, 1000, 0},  {2, 1000, 3, 0},   {2, 257, 129, 0},   {3, 33, 17, 65},
        {2, 300, 64, 0},  {2, 300, 8, 0},    {2, 300, 12, 0},    {2, 64, 4096, 0},
        {2, 4096, 64, 0}, {1, 100003, 0, 0}, {2, 3, 40000, 0},   {2, 40000, 3, 0},
        {2, 0, 5, 0},     {3, 2, 0, 3},      {2, 1024, 1024, 0}, {2, 7, 100000, 0}};
    tu_rng rng;
    tu_rng_seed(&rng, 12 + (uint64_t)dtype);
    {
        int fails = tu_failures, cases = 0;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            prt_dims d = mkdims((int32_t)shapes[s][0], shapes[s][1], shapes[s][2],
                                shapes[s][3], 0);
            for (int32_t axis = 0; axis < d.nb_dims; axis++)
                for (int m = 0; m < 2; m++, cases++)
                    hm_case(reg, &rng, dtype, &d, axis, m, NULL);
        }
        /* Random shapes of every rank, every axis, aligned or not. */
        for (int32_t rank = 1; rank <= PRT_MAX_DIMS; rank++) {
            prt_dims d = rand_dims(&rng, rank, 1, rank <= 3 ? 40 : 5);
            for (int32_t axis = 0; axis < rank; axis++, cases++)
                hm_case(reg, &rng, dtype, &d, axis, (int)tu_rng_range(&rng, 0, 1), NULL);
        }
        /* Dims from the device, smaller than the descriptors' bounds. */
        {
            prt_dims up = mkdims(3, 9, 40, 70, 0), tr = mkdims(3, 9, 17, 70, 0);
            prt_dims up2 = mkdims(2, 3000, 64, 0, 0), tr2 = mkdims(2, 2000, 64, 0, 0);
            for (int32_t axis = 0; axis < 3; axis++, cases++)
                hm_case(reg, &rng, dtype, &tr, axis, 0, &up);
            for (int32_t axis = 0; axis < 2; axis++, cases++)
                hm_case(reg, &rng, dtype, &tr2, axis, 0, &up2);
        }
        printf("CustomHardmax %s: %d (shape, axis) cases, ranks 1-8, every tactic, "
               "ties, infinities and NaNs; dims_device included: %s\n",
               dtype_str(dtype), cases, tu_failures == fails ? "ok" : "FAILED");
    }
}

/* ---- circ_pad_plugin ------------------------------------------------------ */

static void cp_case(prt_registry *reg, tu_rng *rng, int32_t dtype, const prt_dims *d,
                    const int32_t *pads, int32_t nb_pads, int misalign,
                    const prt_dims *up)
{
    prt_field f = {"pads", (void *)pads, PRT_FIELD_INT32, nb_pads};
    int64_t n = tu_volume(d);
    void *x = malloc((size_t)n * dtype_bytes(dtype) + 1);
    prt_dims od = *d, uo = up ? *up : *d;
    char what[128];
    size_t len = (size_t)snprintf(what, sizeof what, "circ_pad_plugin pads [");
    for (int32_t i = 0; i < nb_pads && len < sizeof what; i++)
        len += (size_t)snprintf(what + len, sizeof what - len, "%s%d", i ? " " : "",
                                (int)pads[i]);
    if (len < sizeof what)
        snprintf(what + len, sizeof what - len, "]");
    for (int32_t k = 0; 2 * k + 1 < nb_pads; k++) {
        od.d[d->nb_dims - 1 - k] += pads[2 * k] + pads[2 * k + 1];
        uo.d[d->nb_dims - 1 - k] += pads[2 * k] + pads[2 * k + 1];
    }
    if (x)
        fill_bits(rng, x, dtype, n);
    run_unary(what,
              tu_make_plugin(reg, "example", "circ_pad_plugin", "1", nb_pads ? &f : NULL,
                             nb_pads ? 1 : 0),
              dtype, d, &od, x, misalign, up, &uo);
    free(x);
}

static void test_circ_pad(prt_registry *reg, int32_t dtype)
{
    /* dims (rank, d0..d3), then pads (count, values): the vector path
     * (float32 pads and rows multiples of 4, float16 of 8), pads equal to
     * the dim, unpadded dims between padded ones, no pads at all, few long
     * rows (segments), short rows (lane groups). */
    static const struct {
        int64_t d[5];
        int32_t np, pads[8];
    } cases[] = {
        {{1, 10}, 2, {3, 2}},
        {{1, 1}, 2, {1, 1}},
        {{2, 5, 7}, 4, {1, 2, 3, 0}},
        {{2, 3, 4}, 4, {4, 4, 3, 3}},
        {{3, 2, 3, 4}, 2, {4, 4}},
        {{3, 2, 3, 4}, 4, {1, 1, 1, 1}},
        {{3, 4, 3, 5}, 6, {0, 0, 2, 1, 3, 1}},
        {{4, 2, 3, 5, 7}, 8, {1, 1, 2, 2, 1, 0, 0, 1}},
        {{3, 3, 16, 32}, 4, {4, 8, 4, 4}},
        {{3, 2, 8, 64}, 4, {8, 16, 8, 0}},
        {{2, 7, 9}, 0, {0}},
        {{2, 2, 100000}, 2, {5, 3}},
        {{2, 3, 100000}, 2, {16, 8}},
        {{4, 2, 4, 64, 64}, 4, {1, 1, 1, 1}},
        {{4, 1, 3, 256, 256}, 4, {16, 16, 16, 16}},
        {{2, 6000, 3}, 2, {1, 2}},
        {{2, 0, 7}, 2, {2, 2}},
    };
    tu_rng rng;
    tu_rng_seed(&rng, 13 + (uint64_t)dtype);
    {
        int fails = tu_failures, count = 0;
        for (size_t s = 0; s < sizeof cases / sizeof cases[0]; s++) {
            prt_dims d = mkdims((int32_t)cases[s].d[0], cases[s].d[1], cases[s].d[2],
                                cases[s].d[3], cases[s].d[4]);
            for (int m = 0; m < 2; m++, count++)
                cp_case(reg, &rng, dtype, &d, cases[s].pads, cases[s].np, m, NULL);
        }
        /* Random ranks 1..8, random pads up to each dim. */
        for (int32_t rank = 1; rank <= PRT_MAX_DIMS; rank++, count++) {
            prt_dims d = rand_dims(&rng, rank, 1, rank <= 3 ? 30 : 4);
            int32_t pads[2 * PRT_MAX_DIMS];
            int32_t np = 2 * (int32_t)tu_rng_range(&rng, 1, rank);
            for (int32_t k = 0; k < np; k++)
                pads[k] = (int32_t)tu_rng_range(&rng, 0, d.d[rank - 1 - k / 2]);
            cp_case(reg, &rng, dtype, &d, pads, np, (int)tu_rng_range(&rng, 0, 1), NULL);
        }
        /* Dims from the device (pads within the true dims). */
        {
            prt_dims up = mkdims(3, 6, 40, 33, 0), tr = mkdims(3, 4, 17, 33, 0);
            static const int32_t pads[] = {2, 3, 1, 4, 0, 2};
            cp_case(reg, &rng, dtype, &tr, pads, 6, 0, &up);
            cp_case(reg, &rng, dtype, &tr, pads, 2, 1, &up);
            count += 2;
        }
        printf("circ_pad_plugin %s: %d cases, ranks 1-8, aligned and misaligned, "
               "dims_device included: %s\n",
               dtype_str(dtype), count, tu_failures == fails ? "ok" : "FAILED");
    }
}

/* ---- AddInPlace ----------------------------------------------------------- */

static void aip_case(prt_registry *reg, tu_rng *rng, int32_t dtype, const prt_dims *d,
                     int alias, int misalign, const prt_dims *up)
{
    int64_t n = tu_volume(d);
    size_t bytes = (size_t)n * dtype_bytes(dtype);
    void *a = malloc(bytes + 1), *b = malloc(bytes + 1);
    fbounds bd;
    fcase c;
    memset(&c, 0, sizeof c);
    c.p = tu_make_plugin(reg, "example", "AddInPlace", "1", NULL, 0);
    if (!c.p || !a || !b) {
        CHECK(!"no plugin or out of memory");
        goto done;
    }
    fill_finite(rng, a, dtype, n);
    fill_finite(rng, b, dtype, n);
    c.what = "AddInPlace";
    c.nb_in = 2;
    c.dtype = dtype;
    c.in_dims[0] = c.in_dims[1] = c.out_dims = *d;
    c.host_in[0] = a;
    c.host_in[1] = b;
    c.misalign = misalign;
    c.alias = alias;
    c.nan_loose = 1;
    if (up) {
        bd.in[0] = bd.in[1] = bd.out = *up;
        c.up = &bd;
    }
    fcase_run(&c);
done:
    if (c.p)
        c.p->vt->runtime->destroy(c.p);
    free(a);
    free(b);
}

/* On CUDA an output that partly overlaps an input is refused (the CPU
 * computes it, backwards). */
static void aip_overlap(prt_registry *reg)
{
    prt_plugin *p = tu_make_plugin(reg, "example", "AddInPlace", "1", NULL, 0);
    prt_dims d = mkdims(1, 64, 0, 0, 0);
    prun r;
    dbuf buf;
    memset(&buf, 0, sizeof buf);
    if (!p || !dbuf_make(&buf, 4 * 200, 0))
        goto done;
    memset(&r, 0, sizeof r);
    r.p = p;
    r.nb_in = 2;
    r.nb_out = 1;
    r.in[0] = r.in[1] = r.out[0] = desc(PRT_FLOAT32, &d);
    {
        float *base = buf.p;
        const void *in[2] = {base, base + 100};
        void *out[1] = {base + 8};
        CHECK_ERR(prun_enqueue(&r, 0, PRT_DEVICE_CUDA, in, out, NULL),
                  PRT_ERR_UNSUPPORTED, "partly overlaps");
    }
done:
    dbuf_free(&buf);
    if (p)
        p->vt->runtime->destroy(p);
}

static void test_add_in_place(prt_registry *reg, int32_t dtype)
{
    static const int64_t shapes[][4] = {
        {0, 0, 0, 0},    {1, 1, 0, 0},   {1, 7, 0, 0},       {2, 3, 5, 0},
        {1, 4096, 0, 0}, {3, 17, 31, 3}, {1, 1000003, 0, 0}, {2, 0, 4, 0}};
    tu_rng rng;
    tu_rng_seed(&rng, 14 + (uint64_t)dtype);
    {
        int fails = tu_failures, count = 0;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            prt_dims d = mkdims((int32_t)shapes[s][0], shapes[s][1], shapes[s][2],
                                shapes[s][3], 0);
            for (int alias = -1; alias <= 1; alias++)
                for (int m = 0; m < 2; m++, count++)
                    aip_case(reg, &rng, dtype, &d, alias, m, NULL);
        }
        {
            prt_dims up = mkdims(2, 100, 33, 0, 0), tr = mkdims(2, 61, 33, 0, 0);
            aip_case(reg, &rng, dtype, &tr, 0, 0, &up);
            aip_case(reg, &rng, dtype, &tr, -1, 1, &up);
            count += 2;
        }
        printf("AddInPlace %s: %d cases (separate, in place, out = b; aligned and "
               "misaligned; dims_device): %s\n",
               dtype_str(dtype), count, tu_failures == fails ? "ok" : "FAILED");
    }
}

/* ---- CUDA graphs of a plugin enqueue --------------------------------------- */

/* Captures one enqueue (ThreadLocal mode, as prt_context_capture_graph);
 * NULL if capture fails. The caller has run the same enqueue eagerly first,
 * so every kernel is loaded. */
typedef prt_status (*enqueue_fn)(void *arg);

static cudaGraphExec_t capture(enqueue_fn fn, void *arg, const char *label)
{
    cudaGraph_t g = NULL;
    cudaGraphExec_t x = NULL;
    prt_status st;
    if (!CUDA_OK(cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeThreadLocal)))
        return NULL;
    st = fn(arg);
    tu_checks++;
    if (!CUDA_OK(cudaStreamEndCapture(g_stream, &g)) || st != PRT_OK) {
        if (st != PRT_OK)
            case_fail(label, "enqueue failed while capturing");
        if (g)
            cudaGraphDestroy(g);
        return NULL;
    }
    if (!CUDA_OK(cudaGraphInstantiate(&x, g, 0)))
        x = NULL;
    cudaGraphDestroy(g);
    return x;
}

typedef struct nz_enq_arg {
    const prun *r;
    int32_t tactic;
    nz_dev *d;
} nz_enq_arg;

static prt_status nz_enq_thunk(void *arg)
{
    nz_enq_arg *a = arg;
    return nz_enqueue_dev(a->r, a->tactic, a->d);
}

/* NonZero, every tactic and order: eager, then a graph replayed twice with
 * the outputs poisoned before each replay (the look-back's tile state must
 * be cleared inside the graph), the second time on new data. */
static void graph_nonzero(prt_registry *reg, int32_t dtype, int64_t rows, int64_t cols)
{
    prt_dims d = mkdims(2, rows, cols, 0, 0);
    int64_t n = rows * cols;
    size_t es = dtype_bytes(dtype);
    void *x[2] = {malloc((size_t)n * es), malloc((size_t)n * es)};
    int32_t *want[2] = {malloc(8 * (size_t)n), malloc(8 * (size_t)n)};
    int32_t *got = malloc(8 * (size_t)n);
    tu_rng rng;
    tu_rng_seed(&rng, 21);
    if (!x[0] || !x[1] || !want[0] || !want[1] || !got) {
        CHECK(!"out of memory");
        goto done;
    }
    fill_nonzero(&rng, x[0], dtype, n, 0.5);
    fill_nonzero(&rng, x[1], dtype, n, 0.01);
    for (int32_t o = 0; o < 2; o++) {
        prt_plugin *p = nz_plugin(reg, o);
        prun r;
        nz_dev dv;
        int64_t ws = 0, k_want[2] = {-1, -1};
        int32_t t[MAX_TACTICS];
        int nt;
        memset(&dv, 0, sizeof dv);
        if (!p)
            continue;
        nz_descs(&r, p, dtype, o, &d);
        CHECK(prun_prepare(&r, &ws));
        nt = prun_tactics(&r, t);
        if (!nz_cpu(p, dtype, o, &d, x[0], want[0], &k_want[0]) ||
            !nz_cpu(p, dtype, o, &d, x[1], want[1], &k_want[1]) ||
            !dbuf_make(&dv.x, (size_t)n * es, 0) ||
            !dbuf_make(&dv.idx, 8 * (size_t)n, 0) || !dbuf_make(&dv.k, 8, 0) ||
            !dbuf_make(&dv.ws, (size_t)ws, 0)) {
            CHECK(!"graph setup failed");
        } else {
            for (int ti = 0; ti < nt; ti++) {
                nz_enq_arg arg = {&r, t[ti], &dv};
                cudaGraphExec_t g;
                char label[160];
                snprintf(label, sizeof label,
                         "NonZeroPlugin %s [%lld, %lld] rowOrder %d tactic %d "
                         "graph",
                         dtype_str(dtype), (long long)rows, (long long)cols, (int)o,
                         (int)t[ti]);
                dbuf_put(&dv.x, x[0], (size_t)n * es);
                nz_cuda_check(label, &r, t[ti], &dv, o, k_want[0], want[0], got);
                if (!(g = capture(nz_enq_thunk, &arg, label)))
                    continue;
                for (int rep = 0; rep < 2; rep++) {
                    dbuf_put(&dv.x, x[rep], (size_t)n * es);
                    dbuf_poison(&dv.idx);
                    dbuf_poison(&dv.k);
                    if (CUDA_OK(cudaGraphLaunch(g, g_stream)))
                        nz_verify(label, &r, &dv, o, k_want[rep], want[rep], got);
                }
                cudaGraphExecDestroy(g);
            }
        }
        nz_dev_free(&dv);
        p->vt->runtime->destroy(p);
    }
done:
    for (int i = 0; i < 2; i++) {
        free(x[i]);
        free(want[i]);
    }
    free(got);
}

typedef struct hm_enq_arg {
    const prun *r;
    int32_t tactic;
    const void *x;
    void *y, *ws;
} hm_enq_arg;

static prt_status hm_enq_thunk(void *arg)
{
    hm_enq_arg *a = arg;
    const void *in[1] = {a->x};
    void *out[1] = {a->y};
    return prun_enqueue(a->r, a->tactic, PRT_DEVICE_CUDA, in, out, a->ws);
}

/* Hardmax with the axis split (three kernels and the workspace) in a graph. */
static void graph_hardmax(prt_registry *reg)
{
    int32_t axis = 0;
    prt_field f = {"axis", &axis, PRT_FIELD_INT32, 1};
    prt_plugin *p = tu_make_plugin(reg, "", "CustomHardmax", "1", &f, 1);
    prt_dims d = mkdims(2, 4096, 64, 0, 0);
    int64_t n = tu_volume(&d), ws = 0;
    float *x = malloc(4 * (size_t)n), *want = malloc(4 * (size_t)n),
          *got = malloc(4 * (size_t)n);
    dbuf dx, dy, dws;
    prun r;
    tu_rng rng;
    const char *label = "CustomHardmax float32 [4096, 64] axis 0 tactic 2 graph";
    memset(&dx, 0, sizeof dx);
    memset(&dy, 0, sizeof dy);
    memset(&dws, 0, sizeof dws);
    tu_rng_seed(&rng, 22);
    if (!p || !x || !want || !got)
        goto done;
    fill_hardmax(&rng, x, PRT_FLOAT32, n, 4096);
    memset(&r, 0, sizeof r);
    r.p = p;
    r.nb_in = r.nb_out = 1;
    r.in[0] = r.out[0] = desc(PRT_FLOAT32, &d);
    {
        const void *in[1] = {x};
        void *out[1] = {want};
        CHECK_OK(prun_enqueue(&r, 0, PRT_DEVICE_CPU, in, out, NULL));
    }
    CHECK(prun_prepare(&r, &ws));
    CHECK(ws > 0);
    if (dbuf_make(&dx, 4 * (size_t)n, 0) && dbuf_put(&dx, x, 4 * (size_t)n) &&
        dbuf_make(&dy, 4 * (size_t)n, 0) && dbuf_make(&dws, (size_t)ws, 0)) {
        hm_enq_arg arg = {&r, 2, dx.p, dy.p, ws ? dws.p : NULL};
        cudaGraphExec_t g;
        CHECK_OK(hm_enq_thunk(&arg)); /* eager first: loads the kernels */
        if ((g = capture(hm_enq_thunk, &arg, label))) {
            for (int rep = 0; rep < 2; rep++) {
                int64_t bad;
                dbuf_poison(&dy);
                if (!CUDA_OK(cudaGraphLaunch(g, g_stream)) ||
                    !CUDA_OK(cudaStreamSynchronize(g_stream)) ||
                    !dbuf_get(got, &dy, 4 * (size_t)n))
                    break;
                tu_checks++;
                bad = first_diff(got, want, PRT_FLOAT32, n, 0);
                if (bad >= 0)
                    case_fail(label, "replay %d: element %lld is 0x%08x, want 0x%08x",
                              rep, (long long)bad,
                              (unsigned)elem_bits(got, PRT_FLOAT32, bad),
                              (unsigned)elem_bits(want, PRT_FLOAT32, bad));
            }
            cudaGraphExecDestroy(g);
        }
    }
done:
    dbuf_free(&dx);
    dbuf_free(&dy);
    dbuf_free(&dws);
    if (p)
        p->vt->runtime->destroy(p);
    free(x);
    free(want);
    free(got);
}

static void test_graphs(prt_registry *reg)
{
    int fails = tu_failures;
    graph_nonzero(reg, PRT_FLOAT32, 128, 128);
    graph_nonzero(reg, PRT_FLOAT16, 1000, 999);
    graph_hardmax(reg);
    printf(
        "CUDA graphs of plugin enqueues (NonZero every tactic and order, Hardmax split), "
        "replayed twice: %s\n",
        tu_failures == fails ? "ok" : "FAILED");
}

/* ---- engines built for CUDA ------------------------------------------------- */

static int g_disagree; /* "tactic N disagrees" warnings heard */

static void tc_log(void *user, int32_t severity, const char *msg)
{
    (void)user;
    if (severity <= PRT_SEV_WARNING)
        fprintf(stderr, "plugrt: %s\n", msg);
    if (strstr(msg, "disagrees"))
        g_disagree++;
}

/* Adds a layer of `p` over tensors `in`; names its outputs and marks those
 * with a name (NULL: leave unmarked). Output tensor ids go to out_ids. */
static prt_status add_layer(prt_network *net, prt_plugin *p, const int32_t *in,
                            int32_t nb_in, const char *const *names, int32_t nb_out,
                            int32_t *out_ids)
{
    int32_t layer;
    prt_status st = prt_network_add_plugin(net, in, nb_in, NULL, 0, p, &layer);
    if (st) {
        p->vt->runtime->destroy(p); /* not taken */
        return st;
    }
    for (int32_t i = 0; !st && i < nb_out; i++) {
        st = prt_network_get_layer_output(net, layer, i, &out_ids[i]);
        if (!st && names[i])
            st = prt_network_set_tensor_name(net, out_ids[i], names[i]);
        if (!st && names[i])
            st = prt_network_mark_output(net, out_ids[i]);
    }
    return st;
}

/* Builds net for CUDA with autotuning and makes a context; a tactic that
 * disagrees with tactic 0 while tuning fails the case. */
static prt_status cuda_build(prt_registry *reg, const prt_network *net, const char *label,
                             prt_engine **eng, prt_context **ctx)
{
    prt_builder_config *cfg = NULL;
    int before = g_disagree;
    prt_status st = prt_builder_config_create(&cfg);
    *eng = NULL;
    *ctx = NULL;
    if (!st)
        st = prt_builder_config_set_device(cfg, PRT_DEVICE_CUDA);
    if (!st)
        st = prt_builder_config_set_autotune(cfg, 1);
    if (!st)
        st = prt_engine_build(net, cfg, reg, eng);
    if (!st)
        st = prt_context_create(*eng, ctx);
    prt_builder_config_destroy(cfg);
    tu_checks++;
    if (g_disagree != before)
        case_fail(label, "a tactic disagreed with tactic 0 while tuning");
    if (st)
        case_fail(label, "building or loading the CUDA engine failed");
    return st;
}

static int32_t layer_tactic(const prt_engine *e, int32_t layer)
{
    prt_layer_info li;
    return prt_engine_get_layer(e, layer, &li) == PRT_OK ? li.tactic : -1;
}

typedef struct nz_engine_bufs {
    dbuf x, y, k;
    int64_t n;
    int32_t *got;
} nz_engine_bufs;

/* One run of a NonZero engine, eager or (graph) a replay, on new data x. */
static void nz_engine_run(prt_context *ctx, int graph, const char *label, int32_t order,
                          nz_engine_bufs *b, const float *x, int64_t k_want,
                          const int32_t *want)
{
    prt_dims shape;
    int64_t k = -1;
    dbuf_put(&b->x, x, 4 * (size_t)b->n);
    dbuf_poison(&b->y);
    dbuf_poison(&b->k);
    CHECK_OK(graph ? prt_context_launch_graph(ctx, g_stream)
                   : prt_context_enqueue(ctx, g_stream));
    CHECK_OK(prt_context_get_tensor_shape(ctx, "y", &shape));
    CHECK(CUDA_OK(cudaStreamSynchronize(g_stream)) && dbuf_get(&k, &b->k, 8));
    CHECK(shape.nb_dims == 2 && shape.d[order ? 0 : 1] == k_want);
    if (k == k_want && dbuf_get(b->got, &b->y, 8 * (size_t)k))
        nz_compare(label, order, k, k_want, b->got, want);
    else
        case_fail(label, "%s: K = %lld, want %lld", graph ? "graph" : "eager",
                  (long long)k, (long long)k_want);
}

/* The 128 x 128 NonZero of TensorRT's sample as a CUDA engine: eager runs,
 * a captured graph replayed on new data, and the time of both. */
static void engine_nonzero(prt_registry *reg, int32_t order)
{
    const int64_t R = 128, C = 128, n = R * C;
    prt_dims d = mkdims(2, R, C, 0, 0);
    static const char *const outs[2] = {"y", "k"};
    prt_network *net = NULL;
    prt_engine *eng = NULL;
    prt_context *ctx = NULL;
    prt_plugin *p = nz_plugin(reg, order);
    float *x[2] = {malloc(4 * (size_t)n), malloc(4 * (size_t)n)};
    int32_t *want[2] = {malloc(8 * (size_t)n), malloc(8 * (size_t)n)},
            *got = malloc(8 * (size_t)n);
    int64_t k_want[2] = {-1, -1};
    int32_t xin, ids[2];
    nz_engine_bufs run;
    char label[96];
    tu_rng rng;
    memset(&run, 0, sizeof run);
    run.n = n;
    run.got = got;
    snprintf(label, sizeof label,
             "NonZeroPlugin float32 [128, 128] rowOrder %d CUDA engine", (int)order);
    tu_rng_seed(&rng, 31);
    if (!p || !x[0] || !x[1] || !want[0] || !want[1] || !got) {
        CHECK(!"out of memory");
        if (p)
            p->vt->runtime->destroy(p);
        goto done;
    }
    fill_nonzero(&rng, x[0], PRT_FLOAT32, n, 0.5);
    fill_nonzero(&rng, x[1], PRT_FLOAT32, n, 0.01);
    CHECK(nz_cpu(p, PRT_FLOAT32, order, &d, x[0], want[0], &k_want[0]));
    CHECK(nz_cpu(p, PRT_FLOAT32, order, &d, x[1], want[1], &k_want[1]));
    if (prt_network_create(&net) != PRT_OK ||
        prt_network_add_input(net, "x", PRT_FLOAT32, &d, &xin) != PRT_OK) {
        p->vt->runtime->destroy(p);
        goto done;
    }
    if (add_layer(net, p, &xin, 1, outs, 2, ids) != PRT_OK ||
        cuda_build(reg, net, label, &eng, &ctx) != PRT_OK)
        goto done;
    if (!dbuf_make(&run.x, 4 * (size_t)n, 0) || !dbuf_make(&run.y, 8 * (size_t)n, 0) ||
        !dbuf_make(&run.k, 8, 0))
        goto done;
    CHECK_OK(prt_context_set_tensor_address(ctx, "x", run.x.p));
    CHECK_OK(prt_context_set_tensor_address(ctx, "y", run.y.p));
    CHECK_OK(prt_context_set_tensor_address(ctx, "k", run.k.p));
    for (int rep = 0; rep < 3; rep++) /* eager: data changes, K with it */
        nz_engine_run(ctx, 0, label, order, &run, x[rep % 2], k_want[rep % 2],
                      want[rep % 2]);
    tu_checks++;
    if (prt_context_capture_graph(ctx, g_stream) != PRT_OK) {
        case_fail(label, "prt_context_capture_graph failed");
        goto done;
    }
    for (int rep = 0; rep < 2; rep++)
        nz_engine_run(ctx, 1, label, order, &run, x[rep], k_want[rep], want[rep]);
    /* Time per run, as the GPU sees it (events around 200 back-to-back runs). */
    {
        cudaEvent_t e0, e1;
        float ms_eager = -1, ms_graph = -1;
        const int runs = 200;
        int bad = 0;
        if (CUDA_OK(cudaEventCreate(&e0)) && CUDA_OK(cudaEventCreate(&e1))) {
            cudaEventRecord(e0, g_stream);
            for (int i = 0; i < runs; i++)
                bad += prt_context_launch_graph(ctx, g_stream) != PRT_OK;
            cudaEventRecord(e1, g_stream);
            if (CUDA_OK(cudaEventSynchronize(e1)))
                cudaEventElapsedTime(&ms_graph, e0, e1);
            cudaEventRecord(e0, g_stream);
            for (int i = 0; i < runs; i++)
                bad += prt_context_enqueue(ctx, g_stream) != PRT_OK;
            cudaEventRecord(e1, g_stream);
            if (CUDA_OK(cudaEventSynchronize(e1)))
                cudaEventElapsedTime(&ms_eager, e0, e1);
            cudaEventDestroy(e0);
            cudaEventDestroy(e1);
        }
        CHECK(bad == 0);
        printf(
            "%s (tactic %d): %.2f us per graph replay (target < 10), %.2f us per eager "
            "enqueue\n",
            label, (int)layer_tactic(eng, 0), 1e3 * ms_graph / runs,
            1e3 * ms_eager / runs);
    }
done:
    prt_context_destroy(ctx);
    prt_engine_destroy(eng);
    prt_network_destroy(net);
    dbuf_free(&run.x);
    dbuf_free(&run.y);
    dbuf_free(&run.k);
    for (int i = 0; i < 2; i++) {
        free(x[i]);
        free(want[i]);
    }
    free(got);
}

/* One float layer as a CUDA engine: inputs "a" (and "b") of dims d -> p ->
 * "z" of dims od, against p's CPU run; the inputs must be left as they
 * were (AddInPlace writes its network input's copy, never the input). */
static void engine_float(prt_registry *reg, const char *label, prt_plugin *p,
                         int32_t nb_in, int32_t dtype, const prt_dims *d,
                         const prt_dims *od)
{
    static const char *const in_names[2] = {"a", "b"};
    static const char *const outs[1] = {"z"};
    size_t es = dtype_bytes(dtype), ib = (size_t)tu_volume(d) * es,
           ob = (size_t)tu_volume(od) * es;
    void *h[2] = {malloc(ib + 1), malloc(ib + 1)}, *want = malloc(ob + 1),
         *got = malloc(ob + 1);
    prt_network *net = NULL;
    prt_engine *eng = NULL;
    prt_context *ctx = NULL;
    dbuf din[2], dz;
    int32_t ids[2], zid;
    prun r;
    tu_rng rng;
    prt_dims shape;
    int fails = tu_failures;
    memset(din, 0, sizeof din);
    memset(&dz, 0, sizeof dz);
    tu_rng_seed(&rng, 32);
    if (!p || !h[0] || !h[1] || !want || !got) {
        CHECK(!"no plugin or out of memory");
        if (p)
            p->vt->runtime->destroy(p);
        goto done;
    }
    memset(&r, 0, sizeof r);
    r.p = p;
    r.nb_in = nb_in;
    r.nb_out = 1;
    for (int32_t i = 0; i < nb_in; i++) {
        fill_hardmax(&rng, h[i], dtype, tu_volume(d), d->d[d->nb_dims - 1]);
        r.in[i] = desc(dtype, d);
    }
    r.out[0] = desc(dtype, od);
    {
        const void *in[2] = {h[0], h[1]};
        void *out[1] = {want};
        if (nb_in == 2) { /* the CPU computes in place into a copy */
            memcpy(want, h[0], ib);
            in[0] = want;
        }
        CHECK_OK(prun_enqueue(&r, 0, PRT_DEVICE_CPU, in, out, NULL));
    }
    if (prt_network_create(&net) != PRT_OK) {
        p->vt->runtime->destroy(p);
        goto done;
    }
    for (int32_t i = 0; i < nb_in; i++)
        CHECK_OK(prt_network_add_input(net, in_names[i], dtype, d, &ids[i]));
    if (add_layer(net, p, ids, nb_in, outs, 1, &zid) != PRT_OK ||
        cuda_build(reg, net, label, &eng, &ctx) != PRT_OK)
        goto done;
    for (int32_t i = 0; i < nb_in; i++) {
        if (!dbuf_make(&din[i], ib, 0) || !dbuf_put(&din[i], h[i], ib))
            goto done;
        CHECK_OK(prt_context_set_tensor_address(ctx, in_names[i], din[i].p));
    }
    if (!dbuf_make(&dz, ob, 0))
        goto done;
    CHECK_OK(prt_context_set_tensor_address(ctx, "z", dz.p));
    tu_checks++;
    if (prt_context_enqueue(ctx, g_stream) != PRT_OK) {
        case_fail(label, "enqueue failed");
        goto done;
    }
    CHECK_OK(prt_context_get_tensor_shape(ctx, "z", &shape));
    CHECK(shape.nb_dims == od->nb_dims && tu_volume(&shape) == tu_volume(od));
    if (CUDA_OK(cudaStreamSynchronize(g_stream)) && dbuf_get(got, &dz, ob)) {
        int64_t bad = first_diff(got, want, dtype, tu_volume(od), nb_in == 2);
        tu_checks++;
        if (bad >= 0)
            case_fail(label, "element %lld is 0x%x, want 0x%x", (long long)bad,
                      (unsigned)elem_bits(got, dtype, bad),
                      (unsigned)elem_bits(want, dtype, bad));
        for (int32_t i = 0; i < nb_in; i++)
            if (dbuf_get(got, &din[i], ib)) {
                tu_checks++;
                if (memcmp(got, h[i], ib) != 0)
                    case_fail(label, "network input %d was written", (int)i);
            }
        dbuf_guards_ok(&dz, label, "z");
    }
    printf("%s (tactic %d): %s\n", label, (int)layer_tactic(eng, 0),
           tu_failures == fails ? "ok" : "FAILED");
done:
    prt_context_destroy(ctx);
    prt_engine_destroy(eng);
    prt_network_destroy(net);
    for (int i = 0; i < 2; i++) {
        dbuf_free(&din[i]);
        free(h[i]);
    }
    dbuf_free(&dz);
    free(want);
    free(got);
}

static prt_plugin *hm_plugin(prt_registry *reg, int32_t axis)
{
    prt_field f = {"axis", &axis, PRT_FIELD_INT32, 1};
    return tu_make_plugin(reg, "", "CustomHardmax", "1", &f, 1);
}

static prt_plugin *cp_plugin(prt_registry *reg, const int32_t *pads, int32_t nb)
{
    prt_field f = {"pads", (void *)pads, PRT_FIELD_INT32, nb};
    return tu_make_plugin(reg, "example", "circ_pad_plugin", "1", &f, 1);
}

static void test_engines(prt_registry *reg)
{
    static const int32_t pads[4] = {1, 2, 3, 1};
    prt_dims a = mkdims(2, 512, 1000, 0, 0), b = mkdims(2, 1000, 512, 0, 0);
    prt_dims c = mkdims(4, 2, 3, 64, 64), co = mkdims(4, 2, 3, 68, 67);
    prt_dims e = mkdims(2, 1000, 1001, 0, 0);
    engine_nonzero(reg, 1);
    engine_nonzero(reg, 0);
    engine_float(reg, "CustomHardmax float32 [512, 1000] axis 1 CUDA engine",
                 hm_plugin(reg, 1), 1, PRT_FLOAT32, &a, &a);
    engine_float(reg, "CustomHardmax float16 [1000, 512] axis 0 CUDA engine",
                 hm_plugin(reg, 0), 1, PRT_FLOAT16, &b, &b);
    engine_float(reg, "circ_pad_plugin float32 [2, 3, 64, 64] pads [1 2 3 1] CUDA engine",
                 cp_plugin(reg, pads, 4), 1, PRT_FLOAT32, &c, &co);
    engine_float(reg, "AddInPlace float16 [1000, 1001] CUDA engine",
                 tu_make_plugin(reg, "example", "AddInPlace", "1", NULL, 0), 2,
                 PRT_FLOAT16, &e, &e);
}

/* ---- a producer of data-dependent dims, for engines ------------------------
 * TruncRows(x [R, ...], k int64 [1]) -> y [K, ...], K: y is x's first K rows
 * (x is copied whole; its first K rows are the dense result) and K the value
 * in k, both copied on the device, so the layer after it sees upper bounds
 * in its descriptors and the true dims only through dims_device. CUDA only. */

typedef struct trunc_rows {
    prt_plugin base;
    prt_field_collection none;
} trunc_rows;

static const char *tr_name(const prt_plugin *p)
{
    (void)p;
    return "TruncRows";
}
static const char *tr_version(const prt_plugin *p)
{
    (void)p;
    return "1";
}
static const char *tr_namespace(const prt_plugin *p)
{
    (void)p;
    return "test";
}
static uint32_t tr_devices(const prt_plugin *p)
{
    (void)p;
    return 1u << PRT_DEVICE_CUDA;
}
static int32_t tr_nb_outputs(const prt_plugin *p)
{
    (void)p;
    return 2;
}

static prt_status tr_dtypes(prt_plugin *p, int32_t *out, int32_t nb_out,
                            const int32_t *in, int32_t nb_in)
{
    (void)p;
    if (nb_in != 2 || nb_out != 2)
        return PRT_ERR_INVALID_ARGUMENT;
    out[0] = in[0];
    out[1] = PRT_INT64;
    return PRT_OK;
}

static prt_status tr_shapes(prt_plugin *p, const prt_dim_exprs *in, int32_t nb_in,
                            const prt_dim_exprs *si, int32_t nb_si, prt_dim_exprs *out,
                            int32_t nb_out, prt_expr_builder *x)
{
    const prt_expr *k;
    (void)p, (void)si, (void)nb_si;
    if (nb_in != 2 || nb_out != 2 || in[0].nb_dims < 1)
        return PRT_ERR_INVALID_ARGUMENT;
    k = x->declare_size_tensor(x, 1, in[0].d[0], in[0].d[0]);
    if (!k)
        return PRT_ERR_PLUGIN;
    out[0] = in[0];
    out[0].d[0] = k;
    out[1].nb_dims = 0;
    return PRT_OK;
}

static int32_t tr_supports(prt_plugin *p, int32_t pos, const prt_dynamic_tensor_desc *io,
                           int32_t nb_in, int32_t nb_out)
{
    int32_t t = io[pos].desc.dtype;
    (void)p, (void)nb_in, (void)nb_out;
    if (io[pos].desc.format != PRT_FORMAT_LINEAR)
        return 0;
    if (pos == 0)
        return t == PRT_FLOAT32 || t == PRT_FLOAT16;
    return pos == 2 ? t == io[0].desc.dtype : t == PRT_INT64;
}

static prt_status tr_enqueue(prt_plugin *p, const prt_tensor_desc *in,
                             const prt_tensor_desc *out, const void *const *inputs,
                             void *const *outputs, void *ws, int32_t device, void *stream)
{
    size_t bytes = (size_t)tu_volume(&in[0].dims) * prt_dtype_size(in[0].dtype);
    cudaStream_t s = (cudaStream_t)stream;
    (void)p, (void)out, (void)ws;
    if (device != PRT_DEVICE_CUDA)
        return PRT_ERR_UNSUPPORTED;
    if (bytes &&
        cudaMemcpyAsync(outputs[0], inputs[0], bytes, cudaMemcpyDeviceToDevice, s))
        return PRT_ERR_PLUGIN;
    if (cudaMemcpyAsync(outputs[1], inputs[1], sizeof(int64_t), cudaMemcpyDeviceToDevice,
                        s))
        return PRT_ERR_PLUGIN;
    return PRT_OK;
}

static prt_plugin *tr_clone(const prt_plugin *p)
{
    trunc_rows *c = malloc(sizeof *c);
    if (c)
        memcpy(c, p, sizeof *c);
    return c ? &c->base : NULL;
}

static prt_plugin *tr_attach(prt_plugin *p, prt_plugin_resources *r)
{
    (void)r;
    return tr_clone(p);
}

static const prt_field_collection *tr_fields(prt_plugin *p)
{
    trunc_rows *t = (trunc_rows *)p;
    t->none.nb_fields = 0;
    t->none.fields = NULL;
    return &t->none;
}

static void tr_destroy(prt_plugin *p)
{
    free(p);
}

static const prt_plugin_core tr_core = {sizeof(prt_plugin_core),
                                        PRT_PLUGIN_ABI_VERSION,
                                        tr_name,
                                        tr_version,
                                        tr_namespace,
                                        tr_devices};
static const prt_plugin_build tr_build = {sizeof(prt_plugin_build),
                                          PRT_PLUGIN_ABI_VERSION,
                                          tr_nb_outputs,
                                          tr_dtypes,
                                          tr_shapes,
                                          tr_supports,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL};
static const prt_plugin_runtime tr_runtime = {sizeof(prt_plugin_runtime),
                                              PRT_PLUGIN_ABI_VERSION,
                                              NULL,
                                              NULL,
                                              tr_enqueue,
                                              tr_attach,
                                              tr_fields,
                                              tr_clone,
                                              tr_destroy};
static const prt_plugin_vtable tr_vt = {sizeof(prt_plugin_vtable), PRT_PLUGIN_ABI_VERSION,
                                        &tr_core, &tr_build, &tr_runtime};

static prt_plugin *tr_make(void)
{
    trunc_rows *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->base.vt = &tr_vt;
    return &t->base;
}

/* Its creator: the builder re-creates every plugin from its creator and
 * serialized fields (no fields here), as loading the engine will. */
static prt_status tr_create(const prt_plugin_creator *c, const char *layer_name,
                            const prt_field_collection *fields, int32_t phase,
                            prt_plugin **out)
{
    (void)c, (void)layer_name, (void)fields, (void)phase;
    *out = tr_make();
    return *out ? PRT_OK : PRT_ERR_OUT_OF_MEMORY;
}

static const prt_plugin_creator tr_creator = {sizeof(prt_plugin_creator),
                                              PRT_PLUGIN_ABI_VERSION,
                                              "TruncRows",
                                              "1",
                                              "test",
                                              0,
                                              NULL,
                                              tr_create,
                                              NULL};

/* x [R, C] and k -> TruncRows -> y [K, C] -> p(y) or p(y, y) -> z, on CUDA,
 * against p's CPU run on x's first K rows; then K changes and it runs
 * again. `pad_rows`/`pad_cols`: what p adds to y's dims. */
static void dd_engine(prt_registry *reg, const char *label, prt_plugin *p, int32_t nb_in,
                      int32_t dtype, int64_t R, int64_t C, int64_t pad_rows,
                      int64_t pad_cols)
{
    static const char *const tr_outs[2] = {NULL, NULL};
    static const char *const outs[1] = {"z"};
    static const int64_t ks[3] = {-1, 1, -2}; /* R - 1 rows, one row, R - 2 */
    size_t es = dtype_bytes(dtype);
    int64_t nz_max = (R + pad_rows) * (C + pad_cols);
    prt_dims xd = mkdims(2, R, C, 0, 0), one = mkdims(1, 1, 0, 0, 0), shape;
    prt_network *net = NULL;
    prt_engine *eng = NULL;
    prt_context *ctx = NULL;
    void *x = malloc((size_t)(R * C) * es), *want = malloc((size_t)nz_max * es);
    void *got = malloc((size_t)nz_max * es), *tmp = malloc((size_t)(R * C) * es);
    prt_plugin *tr = tr_make();
    dbuf dx, dk, dz;
    int32_t xin, kin, tr_ids[2], zid;
    tu_rng rng;
    int fails = tu_failures;
    memset(&dx, 0, sizeof dx);
    memset(&dk, 0, sizeof dk);
    memset(&dz, 0, sizeof dz);
    tu_rng_seed(&rng, 41);
    if (!p || !tr || !x || !want || !got || !tmp || prt_network_create(&net) != PRT_OK) {
        CHECK(!"setup failed");
        if (p)
            p->vt->runtime->destroy(p);
        if (tr)
            tr->vt->runtime->destroy(tr);
        goto done;
    }
    fill_hardmax(&rng, x, dtype, R * C, R);
    {
        const prt_plugin_creator *have = NULL;
        if (prt_registry_find_creator(reg, "test", "TruncRows", "1", &have) != PRT_OK)
            CHECK_OK(prt_registry_add_creator(reg, &tr_creator));
    }
    CHECK_OK(prt_network_add_input(net, "x", dtype, &xd, &xin));
    CHECK_OK(prt_network_add_input(net, "k", PRT_INT64, &one, &kin));
    {
        int32_t tin[2] = {xin, kin}, yy[2];
        if (add_layer(net, tr, tin, 2, tr_outs, 2, tr_ids) != PRT_OK) {
            p->vt->runtime->destroy(p);
            goto done;
        }
        /* p is kept for the CPU reference: the network gets a clone. */
        prt_plugin *pc = p->vt->runtime->clone(p);
        yy[0] = yy[1] = tr_ids[0];
        if (!pc || add_layer(net, pc, yy, nb_in, outs, 1, &zid) != PRT_OK ||
            cuda_build(reg, net, label, &eng, &ctx) != PRT_OK) {
            CHECK(pc != NULL);
            p->vt->runtime->destroy(p);
            goto done;
        }
    }
    if (!dbuf_make(&dx, (size_t)(R * C) * es, 0) ||
        !dbuf_put(&dx, x, (size_t)(R * C) * es) || !dbuf_make(&dk, sizeof(int64_t), 0) ||
        !dbuf_make(&dz, (size_t)nz_max * es, 0)) {
        p->vt->runtime->destroy(p);
        goto done;
    }
    CHECK_OK(prt_context_set_tensor_address(ctx, "x", dx.p));
    CHECK_OK(prt_context_set_tensor_address(ctx, "k", dk.p));
    CHECK_OK(prt_context_set_tensor_address(ctx, "z", dz.p));
    for (int i = 0; i < 3; i++) {
        int64_t k = ks[i] < 0 ? R + ks[i] : ks[i];
        prt_dims yd = mkdims(2, k, C, 0, 0),
                 zd = mkdims(2, k + pad_rows, C + pad_cols, 0, 0);
        int64_t nz = tu_volume(&zd);
        prun r;
        char lab[200];
        snprintf(lab, sizeof lab, "%s, K = %lld of %lld", label, (long long)k,
                 (long long)R);
        memset(&r, 0, sizeof r);
        r.p = p;
        r.nb_in = nb_in;
        r.nb_out = 1;
        r.in[0] = r.in[1] = desc(dtype, &yd);
        r.out[0] = desc(dtype, &zd);
        {
            const void *in[2] = {x, x};
            void *out[1] = {want};
            if (nb_in == 2) { /* AddInPlace on the CPU: in place, on a copy */
                memcpy(tmp, x, (size_t)(k * C) * es);
                in[0] = tmp;
                out[0] = tmp;
            }
            if (prun_enqueue(&r, 0, PRT_DEVICE_CPU, in, out, NULL) != PRT_OK) {
                case_fail(lab, "the CPU run failed");
                continue;
            }
            if (nb_in == 2)
                memcpy(want, tmp, (size_t)nz * es);
        }
        if (!dbuf_put(&dk, &k, sizeof k) || !dbuf_poison(&dz))
            break;
        tu_checks++;
        if (prt_context_enqueue(ctx, g_stream) != PRT_OK) {
            case_fail(lab, "enqueue failed");
            continue;
        }
        CHECK_OK(prt_context_get_tensor_shape(ctx, "z", &shape));
        tu_checks++;
        if (shape.nb_dims != 2 || shape.d[0] != zd.d[0] || shape.d[1] != zd.d[1]) {
            char a[64];
            case_fail(lab, "z has shape %s, want [%lld, %lld]",
                      dims_str(&shape, a, sizeof a), (long long)zd.d[0],
                      (long long)zd.d[1]);
            continue;
        }
        if (CUDA_OK(cudaStreamSynchronize(g_stream)) &&
            dbuf_get(got, &dz, (size_t)nz * es)) {
            int64_t bad = first_diff(got, want, dtype, nz, nb_in == 2);
            tu_checks++;
            if (bad >= 0) {
                char ix[64];
                case_fail(lab, "element %lld %s is 0x%x, want 0x%x", (long long)bad,
                          index_str(&zd, bad, ix, sizeof ix),
                          (unsigned)elem_bits(got, dtype, bad),
                          (unsigned)elem_bits(want, dtype, bad));
            }
            dbuf_guards_ok(&dz, lab, "z");
        }
    }
    printf("%s (tactic %d) after a data-dependent layer: %s\n", label,
           (int)layer_tactic(eng, 1), tu_failures == fails ? "ok" : "FAILED");
    p->vt->runtime->destroy(p);
done:
    prt_context_destroy(ctx);
    prt_engine_destroy(eng);
    prt_network_destroy(net);
    dbuf_free(&dx);
    dbuf_free(&dk);
    dbuf_free(&dz);
    free(x);
    free(want);
    free(got);
    free(tmp);
}

static void test_dd_engines(prt_registry *reg)
{
    /* Pads only on the static dim: a pad on K would exceed K's minimum, 0,
     * which configure rejects. */
    static const int32_t pads[2] = {2, 1}, pads16[2] = {8, 8};
    dd_engine(reg, "CustomHardmax float32 axis 0 [K, 300]", hm_plugin(reg, 0), 1,
              PRT_FLOAT32, 700, 300, 0, 0);
    dd_engine(reg, "CustomHardmax float16 axis 1 [K, 300]", hm_plugin(reg, 1), 1,
              PRT_FLOAT16, 700, 300, 0, 0);
    dd_engine(reg, "CustomHardmax float32 axis 0 [K, 64]", hm_plugin(reg, 0), 1,
              PRT_FLOAT32, 9000, 64, 0, 0);
    dd_engine(reg, "circ_pad_plugin float32 pads [2 1] [K, 129]", cp_plugin(reg, pads, 2),
              1, PRT_FLOAT32, 300, 129, 0, 3);
    dd_engine(reg, "circ_pad_plugin float16 pads [8 8] [K, 64]",
              cp_plugin(reg, pads16, 2), 1, PRT_FLOAT16, 300, 64, 0, 16);
    dd_engine(reg, "AddInPlace float32 [K, 333]",
              tu_make_plugin(reg, "example", "AddInPlace", "1", NULL, 0), 2, PRT_FLOAT32,
              500, 333, 0, 0);
}

/* ---- timing (printed, not checked) ------------------------------------------
 * PERF.md's cases: CUDA events around each run, two warm-up runs, the median
 * of PERF_RUNS, against a device-to-device copy of the same number of bytes
 * (read + written) timed in the same run. Inputs are a random block repeated
 * to size (they are far larger than L2 except where PERF.md's case is not). */

#define PERF_RUNS 15

typedef struct perf {
    cudaEvent_t e0, e1;
    void *src, *dst; /* for the copies */
    size_t cap;
} perf;

typedef prt_status (*perf_fn)(void *arg);

static double perf_ms(perf *pf, perf_fn fn, void *arg)
{
    float t[PERF_RUNS];
    for (int i = 0; i < 2; i++)
        if (fn(arg) != PRT_OK)
            return -1;
    for (int i = 0; i < PERF_RUNS; i++) {
        cudaEventRecord(pf->e0, g_stream);
        if (fn(arg) != PRT_OK)
            return -1;
        cudaEventRecord(pf->e1, g_stream);
        if (!CUDA_OK(cudaEventSynchronize(pf->e1)))
            return -1;
        cudaEventElapsedTime(&t[i], pf->e0, pf->e1);
    }
    for (int i = 1; i < PERF_RUNS; i++)
        for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
            float v = t[j];
            t[j] = t[j - 1];
            t[j - 1] = v;
        }
    return t[PERF_RUNS / 2];
}

typedef struct copy_arg {
    perf *pf;
    size_t bytes;
} copy_arg;

static prt_status copy_thunk(void *arg)
{
    copy_arg *c = arg;
    return cudaMemcpyAsync(c->pf->dst, c->pf->src, c->bytes, cudaMemcpyDeviceToDevice,
                           g_stream) == cudaSuccess
               ? PRT_OK
               : PRT_ERR_INTERNAL;
}

/* Prints one line: time, bytes moved, TB/s, fraction of the copy. */
static void perf_report(perf *pf, const char *what, double ms, double moved)
{
    copy_arg c = {pf, (size_t)(moved / 2)};
    double copy_ms;
    if (c.bytes > pf->cap)
        c.bytes = pf->cap;
    copy_ms = perf_ms(pf, copy_thunk, &c) * (moved / 2) / (double)c.bytes;
    if (ms <= 0) {
        printf("perf %s: failed\n", what);
        return;
    }
    printf(
        "perf %s: %.1f us, %.1f MB moved, %.2f TB/s, %.0f%% of a copy of the same bytes "
        "(%.1f us)\n",
        what, 1e3 * ms, moved / 1e6, moved / (ms * 1e9), 100.0 * copy_ms / ms,
        1e3 * copy_ms);
}

/* Fills `bytes` of device memory with the host block, repeated. */
static int fill_tiled(void *dst, size_t bytes, const void *block, size_t block_bytes)
{
    size_t done = block_bytes < bytes ? block_bytes : bytes;
    if (!CUDA_OK(cudaMemcpy(dst, block, done, cudaMemcpyHostToDevice)))
        return 0;
    while (done < bytes) {
        size_t n = done < bytes - done ? done : bytes - done;
        if (!CUDA_OK(cudaMemcpy((unsigned char *)dst + done, dst, n,
                                cudaMemcpyDeviceToDevice)))
            return 0;
        done += n;
    }
    return 1;
}

typedef struct plug_arg {
    const prun *r;
    int32_t tactic;
    const void *in[2];
    void *out[2];
    void *ws;
} plug_arg;

static prt_status plug_thunk(void *arg)
{
    plug_arg *a = arg;
    return prun_enqueue(a->r, a->tactic, PRT_DEVICE_CUDA, a->in, a->out, a->ws);
}

/* NonZero on rows x cols float32 (a 1024 x 1024 block repeated), every
 * multi-block tactic of both orders; K is checked against the block's. */
static void perf_nonzero(prt_registry *reg, perf *pf, int64_t rows, int64_t cols,
                         double density)
{
    const int64_t bn = 1024 * 1024, n = rows * cols;
    prt_dims d = mkdims(2, rows, cols, 0, 0), bd = mkdims(2, 1024, 1024, 0, 0);
    float *blk = malloc(4 * (size_t)bn);
    int32_t *bidx = malloc(8 * (size_t)bn);
    dbuf dx, didx, dk, dws;
    tu_rng rng;
    memset(&dx, 0, sizeof dx);
    memset(&didx, 0, sizeof didx);
    memset(&dk, 0, sizeof dk);
    memset(&dws, 0, sizeof dws);
    tu_rng_seed(&rng, 51);
    if (!blk || !bidx || n % bn)
        goto done;
    fill_nonzero(&rng, blk, PRT_FLOAT32, bn, density);
    if (!dbuf_make(&dx, 4 * (size_t)n, 0) ||
        !fill_tiled(dx.p, 4 * (size_t)n, blk, 4 * (size_t)bn) ||
        !dbuf_make(&didx, 8 * (size_t)n, 0) || !dbuf_make(&dk, 8, 0))
        goto done;
    for (int32_t o = 1; o >= 0; o--) {
        prt_plugin *p = nz_plugin(reg, o);
        prun r;
        int64_t ws = 0, kb = -1, k = -1;
        int32_t t[MAX_TACTICS];
        int nt;
        if (!p)
            continue;
        nz_descs(&r, p, PRT_FLOAT32, o, &d);
        CHECK(prun_prepare(&r, &ws));
        nt = prun_tactics(&r, t);
        CHECK(nz_cpu(p, PRT_FLOAT32, o, &bd, blk, bidx, &kb));
        dbuf_free(&dws);
        if (!dbuf_make(&dws, (size_t)ws, 0)) {
            p->vt->runtime->destroy(p);
            break;
        }
        for (int ti = 0; ti < nt; ti++) {
            plug_arg a = {&r, t[ti], {dx.p, NULL}, {didx.p, dk.p}, ws ? dws.p : NULL};
            char what[160];
            double ms;
            if (t[ti] == 1)
                continue; /* one block: minutes at this size */
            ms = perf_ms(pf, plug_thunk, &a);
            CHECK(dbuf_get(&k, &dk, 8));
            tu_checks++;
            if (k != kb * (n / bn))
                case_fail("perf NonZero", "K = %lld, want %lld", (long long)k,
                          (long long)(kb * (n / bn)));
            snprintf(what, sizeof what,
                     "NonZeroPlugin float32 [%lld, %lld] density %.2f "
                     "rowOrder %d tactic %d",
                     (long long)rows, (long long)cols, density, (int)o, (int)t[ti]);
            perf_report(pf, what, ms, 4.0 * (double)n + 8.0 * (double)k);
        }
        p->vt->runtime->destroy(p);
    }
done:
    dbuf_free(&dx);
    dbuf_free(&didx);
    dbuf_free(&dk);
    dbuf_free(&dws);
    free(blk);
    free(bidx);
}

/* A one-input float32 plugin on x of dims d (out dims od), every tactic. */
static void perf_float(perf *pf, const char *name, prt_plugin *p, int32_t nb_in,
                       const prt_dims *d, const prt_dims *od)
{
    const size_t bb = (size_t)1 << 24;
    size_t ib = 4 * (size_t)tu_volume(d), ob = 4 * (size_t)tu_volume(od);
    void *blk = malloc(bb);
    dbuf din[2], dout, dws;
    prun r;
    int64_t ws = 0;
    int32_t t[MAX_TACTICS];
    int nt;
    tu_rng rng;
    memset(din, 0, sizeof din);
    memset(&dout, 0, sizeof dout);
    memset(&dws, 0, sizeof dws);
    tu_rng_seed(&rng, 52);
    if (!p || !blk)
        goto done;
    fill_hardmax(&rng, blk, PRT_FLOAT32, (int64_t)(bb / 4), 1024);
    memset(&r, 0, sizeof r);
    r.p = p;
    r.nb_in = nb_in;
    r.nb_out = 1;
    r.in[0] = r.in[1] = desc(PRT_FLOAT32, d);
    r.out[0] = desc(PRT_FLOAT32, od);
    CHECK(prun_prepare(&r, &ws));
    nt = prun_tactics(&r, t);
    for (int32_t i = 0; i < nb_in; i++)
        if (!dbuf_make(&din[i], ib, 0) || !fill_tiled(din[i].p, ib, blk, bb))
            goto done;
    if ((nb_in == 1 && !dbuf_make(&dout, ob, 0)) || !dbuf_make(&dws, (size_t)ws, 0))
        goto done;
    for (int ti = 0; ti < nt; ti++) {
        /* AddInPlace runs in place, as in an engine. */
        plug_arg a = {&r,
                      t[ti],
                      {din[0].p, din[1].p},
                      {nb_in == 1 ? dout.p : din[0].p, NULL},
                      ws ? dws.p : NULL};
        char what[160], ds[64];
        snprintf(what, sizeof what, "%s float32 %s tactic %d", name,
                 dims_str(d, ds, sizeof ds), (int)t[ti]);
        perf_report(pf, what, perf_ms(pf, plug_thunk, &a),
                    (double)(ib * (size_t)nb_in + ob));
    }
done:
    for (int i = 0; i < 2; i++)
        dbuf_free(&din[i]);
    dbuf_free(&dout);
    dbuf_free(&dws);
    if (p)
        p->vt->runtime->destroy(p);
    free(blk);
}

static void test_perf(prt_registry *reg)
{
    static const int32_t pads1[4] = {1, 1, 1, 1}, pads16[4] = {16, 16, 16, 16};
    prt_dims h0 = mkdims(2, 4096, 4096, 0, 0), h1 = mkdims(2, 65536, 1024, 0, 0);
    prt_dims c0 = mkdims(4, 8, 64, 256, 256), c0o = mkdims(4, 8, 64, 258, 258);
    prt_dims c1 = mkdims(4, 1, 3, 1024, 1024), c1o = mkdims(4, 1, 3, 1056, 1056);
    prt_dims a0 = mkdims(1, (int64_t)1 << 26, 0, 0, 0);
    perf pf;
    memset(&pf, 0, sizeof pf);
    pf.cap = (size_t)3 << 29; /* 1.5 GiB: NonZero 16384^2 at density 1/2 moves 3 GiB */
    if (!CUDA_OK(cudaEventCreate(&pf.e0)) || !CUDA_OK(cudaEventCreate(&pf.e1)) ||
        !CUDA_OK(cudaMalloc(&pf.src, pf.cap)) || !CUDA_OK(cudaMalloc(&pf.dst, pf.cap)) ||
        !CUDA_OK(cudaMemset(pf.src, 1, pf.cap)))
        goto done;
    perf_nonzero(reg, &pf, 16384, 16384, 0.5);
    perf_nonzero(reg, &pf, 16384, 16384, 0.01);
    perf_nonzero(reg, &pf, 4096, 4096, 0.5);
    perf_float(&pf, "CustomHardmax axis 0", hm_plugin(reg, 0), 1, &h0, &h0);
    perf_float(&pf, "CustomHardmax axis 1", hm_plugin(reg, 1), 1, &h0, &h0);
    perf_float(&pf, "CustomHardmax axis 1", hm_plugin(reg, 1), 1, &h1, &h1);
    perf_float(&pf, "CustomHardmax axis 0", hm_plugin(reg, 0), 1, &h1, &h1);
    perf_float(&pf, "circ_pad_plugin pads 1", cp_plugin(reg, pads1, 4), 1, &c0, &c0o);
    perf_float(&pf, "circ_pad_plugin pads 16", cp_plugin(reg, pads16, 4), 1, &c1, &c1o);
    perf_float(&pf, "AddInPlace",
               tu_make_plugin(reg, "example", "AddInPlace", "1", NULL, 0), 2, &a0, &a0);
done:
    if (pf.e0)
        cudaEventDestroy(pf.e0);
    if (pf.e1)
        cudaEventDestroy(pf.e1);
    cudaFree(pf.src);
    cudaFree(pf.dst);
}

/* ---- main ------------------------------------------------------------------ */

/* With a GPU here, every plugin of the library offers CUDA. */
static void test_devices(prt_registry *reg)
{
    static const char *const keys[4][2] = {{"", "NonZeroPlugin"},
                                           {"", "CustomHardmax"},
                                           {"example", "circ_pad_plugin"},
                                           {"example", "AddInPlace"}};
    for (int i = 0; i < 4; i++) {
        prt_plugin *p = tu_make_plugin(reg, keys[i][0], keys[i][1], "1", NULL, 0);
        if (!p)
            continue;
        CHECK(p->vt->core->devices(p) ==
              ((1u << PRT_DEVICE_CPU) | (1u << PRT_DEVICE_CUDA)));
        p->vt->runtime->destroy(p);
    }
}

/* PRT_CUDA_TEST_ONLY, when set, names the sections to run (any of
 * "devices nonzero hardmax circpad addinplace graphs engines ddengines
 * perf", separated by spaces or commas), so that scripts/cuda-sanitize.sh
 * can run the slow sanitizer tools over the sections in parallel. */
static int section(const char *name)
{
    const char *only = getenv("PRT_CUDA_TEST_ONLY");
    size_t len = strlen(name);
    if (!only || !*only)
        return 1;
    for (const char *q = only; (q = strstr(q, name)) != NULL; q += len) {
        int starts = q == only || q[-1] == ' ' || q[-1] == ',';
        int ends = q[len] == '\0' || q[len] == ' ' || q[len] == ',';
        if (starts && ends)
            return 1;
    }
    return 0;
}

int main(void)
{
    prt_registry *reg;
    tu_require_cuda(NAME);
    prt_set_logger(tc_log, NULL, PRT_SEV_WARNING);
    /* A blocking stream: the synchronous copies and memsets of this file
     * (legacy default stream) are ordered with the plugins' work. */
    if (!CUDA_OK(cudaStreamCreate(&g_stream)))
        return tu_finish(NAME);
    reg = tu_registry_with_plugins();
    if (reg) {
        if (section("devices"))
            test_devices(reg);
        for (int dt = 0; dt < 2; dt++) {
            int32_t dtype = dt ? PRT_FLOAT16 : PRT_FLOAT32;
            if (section("nonzero"))
                test_nonzero(reg, dtype);
            if (section("hardmax"))
                test_hardmax(reg, dtype);
            if (section("circpad"))
                test_circ_pad(reg, dtype);
            if (section("addinplace"))
                test_add_in_place(reg, dtype);
        }
        if (section("addinplace"))
            aip_overlap(reg);
        if (section("graphs"))
            test_graphs(reg);
        if (section("engines"))
            test_engines(reg);
        if (section("ddengines"))
            test_dd_engines(reg);
        /* Timings mean nothing under compute-sanitizer, which sets this. */
        if (!getenv("PRT_CUDA_TEST_QUICK") && section("perf"))
            test_perf(reg);
        prt_registry_destroy(reg);
    }
    cudaStreamDestroy(g_stream);
    prt_set_logger(NULL, NULL, PRT_SEV_ERROR);
    return tu_finish(NAME);
}
