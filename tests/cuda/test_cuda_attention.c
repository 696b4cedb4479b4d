/*
 * Attention on CUDA (src/ops/cuda/attention.cu) against the CPU kernel
 * (src/ops/attention.c), ctest -L cuda. Each case is one Attention layer
 * built through the C API for each device (op_case.h) and run on the same
 * random inputs; every output element is compared:
 *   - every (Sq, Skv) pair of LENGTHS, which sit on and beside the CUDA
 *     kernel's edges (16 queries a block, 32 keys a tile) and past one CPU
 *     tile of 64 queries, head sizes of D_SIZES and grouped-query heads
 *     cycling through the pairs;
 *   - each head size in each dtype; every grouped-query split of 1..4
 *     heads in ranks 3 and 4; each mask kind (none, bool [Sq, Skv],
 *     additive [B, 1, 1, Skv] and [B, H, Sq, Skv], one shorter than the
 *     keys) with and without is_causal where Sq != Skv (ONNX's causal mask
 *     is upper-left aligned: query i sees keys j <= i), each with a fully
 *     masked row, with empty_rows_zero 0 (NaN) and 1 (zeros); softcap and
 *     scale; K given transposed; value heads of another size; a mask of
 *     another dtype than Q's; empty inputs;
 *   - a head size past 128 refused naming the layer and the limit;
 *   - a CUDA graph of an Attention engine, captured and replayed on new
 *     inputs, against the eager run of the same inputs (the same bytes).
 * Tolerances, as ot_check_close's (relative above 1, absolute below):
 * float32 1e-4 (both sides compute in float32, in other orders); float16
 * 2e-3 and bfloat16 1.6e-2 (both sides compute in float32 and round the
 * output once: a rounding boundary can put them one unit of the last place
 * apart, 4.9e-4 and 3.9e-3 at 1).
 * PRT_CUDA_TEST_QUICK=1 (the compute-sanitizer pass) runs a reduced set:
 * the pairs of QUICK_LENGTHS (no 600) and shorter lengths per dtype.
 * Without a GPU the test says why and exits 77 (skipped).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_case.h"

#define NAME "test_cuda_attention"

static const int64_t LENGTHS[] = {1, 2, 15, 16, 17, 31, 32, 33, 100, 129, 600};
static const int64_t QUICK_LENGTHS[] = {1, 16, 17, 33, 129};
static const int64_t D_SIZES[] = {8, 32, 64, 80, 128};
/* (Hq, Hkv) with Hkv dividing Hq, Hq 1..4. */
static const int32_t HEADS[][2] = {{1, 1}, {2, 1}, {2, 2}, {3, 1},
                                   {3, 3}, {4, 1}, {4, 2}, {4, 4}};

#define NLEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int quick, cases;
/* PLUGRT_TEST_HARNESS=cpu: the comparisons run on the CPU twice (no GPU
 * needed), which checks the cases and their tolerances, not the kernel. */
static int harness_cpu;

/* Mask kinds. */
enum { M_NONE, M_BOOL, M_ADD_KEYS, M_ADD_FULL, M_SHORT, M_KINDS };
static const char *const mask_names[] = {"no", "bool [Sq,Skv]", "additive [B,1,1,Skv]",
                                         "additive [B,H,Sq,Skv]",
                                         "short bool [Sq,Skv-k]"};

typedef struct acase {
    int32_t dt, mdt; /* Q/K/V's dtype, a float mask's (0: Q's) */
    int32_t rank, kt, causal, ez;
    int64_t B, Hq, Hkv, Sq, Skv, D, Dv;
    int mask;
    int masked_row; /* one query (or a batch, for M_ADD_KEYS) sees no key */
    float scale, softcap;
} acase;

static double tol(int32_t dt)
{
    return dt == PRT_FLOAT32 ? 1e-4 : dt == PRT_FLOAT16 ? 2e-3 : 1.6e-2;
}

/* The case's fields and inputs in *c (f holds the fields). */
static void make_case(const acase *a, tu_rng *r, prt_field *f, int32_t *iv, oc_case *c)
{
    prt_dims dq, dk, dv;
    int32_t mdt = a->mdt ? a->mdt : a->dt;
    memset(c, 0, sizeof *c);
    c->op = "Attention";
    c->f = f;
    c->nb = 3;
    c->rtol = tol(a->dt);
    iv[0] = a->causal, iv[1] = a->kt, iv[2] = a->ez;
    iv[3] = (int32_t)a->Hq, iv[4] = (int32_t)a->Hkv;
    f[c->nf++] = ot_fld_i32("is_causal", &iv[0], 1);
    f[c->nf++] = ot_fld_i32("k_transposed", &iv[1], 1);
    f[c->nf++] = ot_fld_i32("empty_rows_zero", &iv[2], 1);
    f[c->nf++] = ot_fld_f32("scale", &a->scale);
    f[c->nf++] = ot_fld_f32("softcap", &a->softcap);
    if (a->rank == 3) {
        f[c->nf++] = ot_fld_i32("q_num_heads", &iv[3], 1);
        f[c->nf++] = ot_fld_i32("kv_num_heads", &iv[4], 1);
        dq = D3(a->B, a->Sq, a->Hq * a->D);
        dk = D3(a->B, a->Skv, a->Hkv * a->D);
        dv = D3(a->B, a->Skv, a->Hkv * a->Dv);
    } else {
        dq = D4(a->B, a->Hq, a->Sq, a->D);
        dk = a->kt ? D4(a->B, a->Hkv, a->D, a->Skv) : D4(a->B, a->Hkv, a->Skv, a->D);
        dv = D4(a->B, a->Hkv, a->Skv, a->Dv);
    }
    c->in[0] = ot_random(a->dt, dq, r, 0);
    c->in[1] = ot_random(a->dt, dk, r, 0);
    c->in[2] = ot_random(a->dt, dv, r, 0);
    if (a->mask != M_NONE) {
        const int is_bool = a->mask == M_BOOL || a->mask == M_SHORT;
        const int64_t short_by = a->Skv > 3 ? 3 : a->Skv > 1 ? 1 : 0;
        prt_dims dm = a->mask == M_BOOL       ? D2(a->Sq, a->Skv)
                      : a->mask == M_SHORT    ? D2(a->Sq, a->Skv - short_by)
                      : a->mask == M_ADD_KEYS ? D4(a->B, 1, 1, a->Skv)
                                              : D4(a->B, a->Hq, a->Sq, a->Skv);
        ot_tensor m = ot_make(is_bool ? PRT_BOOL : mdt, dm);
        int64_t n = tu_volume(&dm), row = dm.d[dm.nb_dims - 1];
        /* The row left with no key: the middle query (of batch 0, head 0);
         * with [B,1,1,Skv] every query of the last batch. */
        int64_t dead0 = -1, dead1 = -1;
        if (a->masked_row && row > 0) {
            if (a->mask == M_ADD_KEYS) {
                dead0 = (a->B - 1) * row;
                dead1 = dead0 + row;
            } else {
                dead0 = ((a->Sq - 1) / 2) * row;
                dead1 = dead0 + row;
            }
        }
        for (int64_t i = 0; m.data && i < n; i++) {
            double u = tu_rng_uniform(r);
            int dead = i >= dead0 && i < dead1;
            if (is_bool)
                ot_set(&m, i, !dead && u < 0.8);
            else
                ot_set(&m, i, dead || u < 0.1 ? -INFINITY : 3.0 * (u - 0.5));
        }
        c->in[3] = m;
        c->nb = 4;
    }
}

static void describe(const acase *a, char *w, size_t cap)
{
    snprintf(
        w, cap,
        "Attention %s rank %d B %lld heads %lld/%lld Sq %lld Skv %lld D %lld Dv %lld, "
        "%s mask%s%s, causal %d, k_transposed %d, empty_rows_zero %d, scale %g, "
        "softcap %g",
        prt_dtype_name(a->dt), (int)a->rank, (long long)a->B, (long long)a->Hq,
        (long long)a->Hkv, (long long)a->Sq, (long long)a->Skv, (long long)a->D,
        (long long)a->Dv, mask_names[a->mask],
        a->mdt && a->mdt != a->dt ? " of another dtype" : "",
        a->masked_row ? " (a row fully masked)" : "", (int)a->causal, (int)a->kt,
        (int)a->ez, (double)a->scale, (double)a->softcap);
}

static char build_error[1024];

/* One case on the CPU (reference) and on CUDA, every element compared. */
static void run(const acase *a, tu_rng *r)
{
    prt_field f[8];
    int32_t iv[5];
    oc_case c;
    ot_tensor want = {0}, got = {0};
    prt_engine *ce, *ge;
    char what[400];
    const int32_t dev = harness_cpu ? PRT_DEVICE_CPU : PRT_DEVICE_CUDA;
    describe(a, what, sizeof what);
    make_case(a, r, f, iv, &c);
    cases++;
    ce = oc_build(PRT_DEVICE_CPU, &c, build_error, sizeof build_error);
    if (!ce)
        printf("%s: the CPU build fails: %s\n", what, build_error);
    CHECK(ce != NULL);
    ge = oc_build(dev, &c, build_error, sizeof build_error);
    if (!ge)
        printf("%s: the CUDA build fails: %s\n", what, build_error);
    CHECK(ge != NULL);
    /* The reference on 2 threads, the harness's second run on 1: the CPU's
     * result does not depend on its thread count. */
    if (ce && ge && oc_run(ce, PRT_DEVICE_CPU, &c, 2, 0xff, &want) == 0 &&
        oc_run(ge, dev, &c, 1, 0xff, &got) == 0)
        oc_compare(what, &c, &got, &want);
    ot_free(&want);
    ot_free(&got);
    prt_engine_destroy(ce);
    prt_engine_destroy(ge);
    oc_free(&c);
}

/* A case with the usual defaults: float32, rank 4, one head, no mask. */
static acase base(int64_t Sq, int64_t Skv, int64_t D)
{
    acase a = {.dt = PRT_FLOAT32, .rank = 4, .B = 1, .Hq = 1, .Hkv = 1};
    a.Sq = Sq, a.Skv = Skv, a.D = D, a.Dv = D;
    return a;
}

/* Every (Sq, Skv) pair; head size, heads, batch, rank and mask cycle
 * through the pairs (the index's residues), so each occurs with short and
 * long lengths. Pairs of many scores keep to one batch and two heads, so
 * the CPU's reference stays quick. */
static void test_lengths(tu_rng *r)
{
    const int64_t *L = quick ? QUICK_LENGTHS : LENGTHS;
    const int n = quick ? NLEN(QUICK_LENGTHS) : NLEN(LENGTHS);
    int idx = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++, idx++) {
            acase a = base(L[i], L[j], D_SIZES[idx % NLEN(D_SIZES)]);
            const int32_t *h = HEADS[(idx / 2) % NLEN(HEADS)];
            const int big = L[i] * L[j] > 20000;
            a.Hq = h[0], a.Hkv = h[1];
            if (big && a.Hq > 2)
                a.Hq = a.Hkv = a.Hq % 2 ? 1 : 2;
            a.B = big || idx % 2 ? 1 : 3;
            a.rank = idx % 3 == 2 ? 3 : 4;
            a.mask = idx % M_KINDS;
            a.causal = idx % 4 == 1;
            a.masked_row = a.mask != M_NONE && idx % 7 == 3;
            a.ez = idx % 2;
            a.kt = a.rank == 4 && idx % 5 == 4;
            run(&a, r);
        }
}

/* Each head size in each dtype, across tiles of both kernels, with a mask
 * (the half floats' in their own dtype). */
static void test_dtypes(tu_rng *r)
{
    static const int32_t dts[] = {PRT_FLOAT32, PRT_FLOAT16, PRT_BFLOAT16};
    for (int d = 0; d < NLEN(D_SIZES); d++)
        for (int t = 0; t < NLEN(dts); t++) {
            acase a = base(quick ? 17 : 33, quick ? 33 : 129, D_SIZES[d]);
            a.dt = dts[t];
            a.B = 3, a.Hq = 4, a.Hkv = 2;
            a.rank = (d + t) % 2 ? 3 : 4;
            a.mask = (d + t) % 2 ? M_ADD_FULL : M_BOOL;
            a.causal = d % 2;
            run(&a, r);
        }
}

/* Every grouped-query split of 1..4 heads, ranks 3 and 4. */
static void test_heads(tu_rng *r)
{
    for (int h = 0; h < NLEN(HEADS); h++)
        for (int32_t rank = 3; rank <= 4; rank++) {
            acase a = base(17, 31, 32);
            a.Hq = HEADS[h][0], a.Hkv = HEADS[h][1];
            a.B = 3, a.rank = rank;
            a.mask = M_ADD_KEYS;
            run(&a, r);
        }
}

/* Each mask with and without is_causal, where the queries are fewer and
 * more than the keys, with a fully masked row and either empty-row rule;
 * float32 and float16. */
static void test_masks(tu_rng *r)
{
    static const int64_t lens[][2] = {{17, 100}, {100, 17}, {15, 33}};
    for (int m = 0; m < M_KINDS; m++)
        for (int l = 0; l < NLEN(lens); l++)
            for (int32_t causal = 0; causal <= 1; causal++) {
                acase a = base(lens[l][0], lens[l][1], 64);
                a.dt = (m + l) % 2 ? PRT_FLOAT16 : PRT_FLOAT32;
                a.B = 3, a.Hq = 4, a.Hkv = 2;
                a.rank = l == 2 ? 3 : 4;
                a.mask = m, a.causal = causal;
                a.masked_row = m != M_NONE;
                a.ez = (causal + l) % 2;
                run(&a, r);
            }
}

/* softcap and scale, scores large enough that the cap bites and the
 * softmax is peaked. */
static void test_scale_softcap(tu_rng *r)
{
    static const float scales[] = {0.0f, 0.3f, 2.0f}, caps[] = {0.0f, 0.5f, 5.0f};
    for (int s = 0; s < NLEN(scales); s++)
        for (int k = 0; k < NLEN(caps); k++) {
            acase a = base(33, 65, 80);
            a.B = 3, a.Hq = 2, a.Hkv = 1;
            a.scale = scales[s], a.softcap = caps[k];
            a.mask = (s + k) % 2 ? M_ADD_FULL : M_NONE;
            a.causal = k == 1;
            run(&a, r);
        }
}

/* K given transposed, value heads of another size, a mask of another
 * dtype than Q's, empty inputs. */
static void test_layouts(tu_rng *r)
{
    static const int64_t dv[][2] = {{64, 32}, {8, 128}, {128, 80}, {32, 8}};
    for (int k = 0; k < NLEN(dv); k++)
        for (int32_t kt = 0; kt <= 1; kt++) {
            acase a = base(31, 47, dv[k][0]);
            a.Dv = dv[k][1];
            a.B = 3, a.Hq = 4, a.Hkv = 2, a.kt = kt;
            a.rank = kt || k % 2 ? 4 : 3;
            a.mask = M_SHORT;
            a.causal = k % 2;
            run(&a, r);
        }
    {
        acase a = base(17, 40, 32);
        a.mask = M_ADD_FULL, a.mdt = PRT_FLOAT16;
        run(&a, r);
        a.dt = PRT_BFLOAT16, a.mdt = PRT_FLOAT32;
        run(&a, r);
        a.dt = PRT_FLOAT16, a.mdt = PRT_BFLOAT16, a.mask = M_ADD_KEYS;
        run(&a, r);
    }
    /* No keys (every row empty), no queries. */
    for (int32_t ez = 0; ez <= 1; ez++) {
        acase a = base(5, 0, 16);
        a.ez = ez;
        run(&a, r);
        a = base(0, 9, 16);
        run(&a, r);
    }
}

/* Device buffers for the case's inputs (dx[i] bound to X<i>) and for Y0
 * (*dy, ybytes); 1 on success. The caller frees them (unbind). */
static int bind_dev(prt_context *ctx, const oc_case *c, void **dx, void **dy,
                    size_t ybytes)
{
    int ok = 1;
    char nm[16];
    for (int32_t i = 0; i < c->nb && ok; i++) {
        size_t n = (size_t)tu_volume(&c->in[i].dims) * prt_dtype_size(c->in[i].dtype);
        snprintf(nm, sizeof nm, "X%d", (int)i);
        ok = prt_device_malloc(PRT_DEVICE_CUDA, n ? n : 1, &dx[i]) == PRT_OK &&
             prt_context_set_tensor_address(ctx, nm, dx[i]) == PRT_OK;
    }
    return ok && prt_device_malloc(PRT_DEVICE_CUDA, ybytes ? ybytes : 1, dy) == PRT_OK &&
           prt_context_set_tensor_address(ctx, "Y0", *dy) == PRT_OK;
}

static void unbind_dev(void **dx, void *dy)
{
    for (int i = 0; i < 4; i++)
        if (dx[i])
            prt_device_free(PRT_DEVICE_CUDA, dx[i]);
    if (dy)
        prt_device_free(PRT_DEVICE_CUDA, dy);
}

/* A head size past the kernel's 128 fails naming the layer and the limit:
 * the build has no per-shape refusal for a device, so the kernel's check
 * at the first run says it, before any launch (a build that refuses is
 * accepted too). */
static void test_refused(tu_rng *r)
{
    static const int64_t dv[][2] = {{160, 160}, {64, 192}};
    for (int k = 0; k < NLEN(dv); k++) {
        acase a = base(16, 16, dv[k][0]);
        prt_field f[8];
        int32_t iv[5];
        oc_case c;
        prt_engine *ge;
        char what[400];
        a.Dv = dv[k][1];
        describe(&a, what, sizeof what);
        make_case(&a, r, f, iv, &c);
        cases++;
        ge = oc_build(PRT_DEVICE_CUDA, &c, build_error, sizeof build_error);
        if (ge) {
            prt_context *ctx = NULL;
            void *dx[4] = {0}, *dy = NULL, *s = NULL;
            CHECK_OK(prt_context_create(ge, &ctx));
            CHECK_OK(prt_stream_create(PRT_DEVICE_CUDA, &s));
            if (ctx && s &&
                bind_dev(ctx, &c, dx, &dy, (size_t)(a.Sq * a.Dv) * sizeof(float))) {
                CHECK(prt_context_enqueue(ctx, s) != PRT_OK);
                snprintf(build_error, sizeof build_error, "%s", prt_last_error());
                CHECK_OK(prt_stream_synchronize(PRT_DEVICE_CUDA, s));
            }
            unbind_dev(dx, dy);
            if (s)
                prt_stream_destroy(PRT_DEVICE_CUDA, s);
            prt_context_destroy(ctx);
        }
        if (!strstr(build_error, "layer 'Attention_") || !strstr(build_error, "128")) {
            printf("%s: should be refused naming the layer and the limit of 128: %s\n",
                   what, build_error);
            CHECK(!"a head size past 128 refused with a clear message");
        }
        prt_engine_destroy(ge);
        oc_free(&c);
    }
}

/* ---- a CUDA graph of an Attention engine ---------------------------------- */

/* Copies the case's inputs into dx[] (device) and runs ctx once eagerly or
 * through its graph; y (host) gets the output. */
static int graph_step(prt_context *ctx, const oc_case *c, void *const *dx, void *dy,
                      void *y, size_t ybytes, void *s, int graph)
{
    int ok = 1;
    for (int32_t i = 0; i < c->nb && ok; i++)
        ok = prt_device_memcpy(PRT_DEVICE_CUDA, dx[i], c->in[i].data,
                               (size_t)tu_volume(&c->in[i].dims) *
                                   prt_dtype_size(c->in[i].dtype),
                               PRT_MEMCPY_HOST_TO_DEVICE, s) == PRT_OK;
    ok = ok && prt_device_memset(PRT_DEVICE_CUDA, dy, 0xff, ybytes, s) == PRT_OK;
    ok = ok && (graph ? prt_context_launch_graph(ctx, s) : prt_context_enqueue(ctx, s)) ==
                   PRT_OK;
    ok = ok && prt_device_memcpy(PRT_DEVICE_CUDA, y, dy, ybytes,
                                 PRT_MEMCPY_DEVICE_TO_HOST, s) == PRT_OK;
    ok = ok && prt_stream_synchronize(PRT_DEVICE_CUDA, s) == PRT_OK;
    if (!ok)
        printf("%s: a %s run failed: %s\n", NAME, graph ? "graph" : "eager",
               prt_last_error());
    return ok;
}

/* Eager on inputs A (checked against the CPU), capture, then replays on
 * new inputs B and on A again: each the same bytes as the eager run of the
 * same inputs. */
static void test_graph(tu_rng *r)
{
    acase a = base(100, 129, 64);
    prt_field f[8];
    int32_t iv[5];
    oc_case c1, c2;
    prt_engine *ce = NULL, *ge = NULL;
    prt_context *ctx = NULL;
    void *dx[4] = {0}, *dy = NULL, *s = NULL;
    ot_tensor want = {0}, ya = {0}, yb = {0}, gy = {0};
    size_t ybytes = 0;
    a.B = 3, a.Hq = 4, a.Hkv = 2, a.mask = M_ADD_FULL, a.causal = 1, a.masked_row = 1;
    a.ez = 1;
    make_case(&a, r, f, iv, &c1);
    make_case(&a, r, f, iv, &c2); /* the same fields (f, iv), new data */
    cases++;
    ce = oc_build(PRT_DEVICE_CPU, &c1, build_error, sizeof build_error);
    ge = oc_build(PRT_DEVICE_CUDA, &c1, build_error, sizeof build_error);
    CHECK(ce && ge);
    if (ce && ge && oc_run(ce, PRT_DEVICE_CPU, &c1, 0, 0xff, &want) == 0 &&
        prt_context_create(ge, &ctx) == PRT_OK &&
        prt_stream_create(PRT_DEVICE_CUDA, &s) == PRT_OK) {
        int ok = 1;
        ybytes = (size_t)tu_volume(&want.dims) * prt_dtype_size(want.dtype);
        ya = ot_make(want.dtype, want.dims);
        yb = ot_make(want.dtype, want.dims);
        gy = ot_make(want.dtype, want.dims);
        ok = bind_dev(ctx, &c1, dx, &dy, ybytes);
        CHECK(ok);
        /* Eager runs of A and B: the references of the replays. */
        ok = ok && graph_step(ctx, &c1, dx, dy, ya.data, ybytes, s, 0);
        if (ok)
            oc_compare("Attention graph case, eager against the CPU", &c1, &ya, &want);
        ok = ok && graph_step(ctx, &c2, dx, dy, yb.data, ybytes, s, 0);
        if (ok && prt_context_capture_graph(ctx, s) != PRT_OK) {
            printf("%s: capture: %s\n", NAME, prt_last_error());
            ok = 0;
        }
        CHECK(ok);
        for (int rep = 0; rep < 2 && ok; rep++) {
            const oc_case *c = rep ? &c1 : &c2;
            const ot_tensor *ref = rep ? &ya : &yb;
            ok = graph_step(ctx, c, dx, dy, gy.data, ybytes, s, 1);
            CHECK(ok);
            if (ok && memcmp(gy.data, ref->data, ybytes) != 0) {
                printf("%s: graph replay %d differs from the eager run\n", NAME, rep);
                CHECK(!"a replay gives the eager run's bytes");
            }
        }
    }
    unbind_dev(dx, dy);
    if (s)
        prt_stream_destroy(PRT_DEVICE_CUDA, s);
    prt_context_destroy(ctx);
    prt_engine_destroy(ce);
    prt_engine_destroy(ge);
    ot_free(&want);
    ot_free(&ya);
    ot_free(&yb);
    ot_free(&gy);
    oc_free(&c1);
    oc_free(&c2);
}

int main(void)
{
    tu_rng r;
    const char *h = getenv("PLUGRT_TEST_HARNESS");
    harness_cpu = h && strcmp(h, "cpu") == 0;
    if (!harness_cpu)
        tu_require_cuda(NAME);
    quick = getenv("PRT_CUDA_TEST_QUICK") != NULL;
    tu_rng_seed(&r, 20261206);
    if (!harness_cpu)
        test_refused(&r);
    test_heads(&r);
    test_dtypes(&r);
    test_masks(&r);
    test_scale_softcap(&r);
    test_layouts(&r);
    if (!harness_cpu)
        test_graph(&r);
    test_lengths(&r);
    printf("%s: %d cases%s\n", NAME, cases, quick ? " (quick)" : "");
    return tu_finish(NAME);
}
