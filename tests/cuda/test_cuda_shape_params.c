/*
 * CUDA Slice, Pad and Range whose parameters are shape values (ctest -L
 * cuda), eagerly and captured into a graph, against the same network on
 * the CPU engine:
 *  - parameters a shape computation makes inside the engine (Shape ->
 *    Gather -> Concat, with Sub/Div/Mul on the values): device data, which
 *    the kernels read;
 *  - parameters that are shape inputs of the network: host memory, where
 *    the caller keeps them, which the runtime marks in the layers'
 *    descriptors (prt_tensor_desc_on_host), so the ops read them on the
 *    host, in a capture too (the values are then baked into the graph, as
 *    graphs keep shape-input values anyway), and a value changed in place
 *    after the capture makes the launch fail, naming the input.
 * Two run shapes and two sets of shape-input values; each compared
 * exactly (the ops move data, no arithmetic on floats).
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cuda_testutil.h"
#include "op_testutil.h"

static int32_t layer(ot_net *g, const char *op, const int32_t *in, int32_t nin,
                     const int32_t *sin, int32_t nsin)
{
    return ot_net_layer(g, op, NULL, 0, in, nin, sin, nsin);
}
static int32_t op2(ot_net *g, const char *op, int32_t a, int32_t b)
{
    int32_t in[2] = {a, b};
    return layer(g, op, in, 2, NULL, 0);
}
/* Data and shape inputs alike: Slice, Pad, Range read their parameters'
 * values for the output dims and their data in the run (every input but
 * the first, data for Slice and Pad; Range's three). */
static int32_t op_sv(ot_net *g, const char *op, const int32_t *in, int32_t nin)
{
    const int32_t skip = strcmp(op, "Range") != 0;
    return layer(g, op, in, nin, in + skip, nin - skip);
}
static int32_t i64c(ot_net *g, int32_t rank, int64_t n, const int64_t *v)
{
    return ot_net_const(g, PRT_INT64, rank, n, v);
}
static int32_t input(ot_net *g, const char *name, int32_t dtype, prt_dims d)
{
    int32_t t = -1;
    if (!g->st)
        g->st = prt_network_add_input(g->n, name, dtype, &d, &t);
    return t;
}
#define NOUT 6
static const char *const outs[NOUT] = {"S1", "P1", "R1", "S2", "P2", "R2"};

/* X [d0, d1] float32 (3..8 each); shape inputs ST, EN [2], PD [4], RS, RD
 * (0-D). S1, P1, R1 take their parameters from X's shape; S2, P2, R2 from
 * the shape inputs (R2's limit from X's shape: start and delta on the
 * host, the limit a device value no kernel reads). */
static prt_status network(prt_network **out_net)
{
    ot_net g = {NULL, PRT_OK};
    const int64_t i0 = 0, i1 = 1, m23[2] = {2, 3}, div[4] = {3, 4, 4, 3};
    const int64_t ax[2] = {0, 1}, one2[2] = {1, 1}, two = 2;
    int32_t x, s, g0, g1, dims, d0, d1, t[4];
    g.st = prt_network_create(&g.n);
    x = input(&g, "X", PRT_FLOAT32, (prt_dims){2, {-1, -1}});
    s = layer(&g, "Shape", &x, 1, NULL, 0);
    g0 = op2(&g, "Gather", s, i64c(&g, 1, 1, &i0)); /* [d0] */
    g1 = op2(&g, "Gather", s, i64c(&g, 1, 1, &i1)); /* [d1] */
    dims = op2(&g, "Concat", g0, g1);
    /* S1 = Slice(X, [d0 - 2, d1 - 3], [d0, d1], [0, 1], [1, 1]) */
    t[0] = op2(&g, "Sub", dims, i64c(&g, 1, 2, m23));
    int32_t s1[5] = {x, t[0], dims, i64c(&g, 1, 2, ax), i64c(&g, 1, 2, one2)};
    ot_net_output(&g, op_sv(&g, "Slice", s1, 5), "S1");
    /* P1 = Pad(X, [d0 / 3, d1 / 4, d1 / 4, d0 / 3]) */
    t[1] = op2(&g, "Div", op2(&g, "Concat", dims, op2(&g, "Concat", g1, g0)),
               i64c(&g, 1, 4, div));
    int32_t p1[2] = {x, t[1]};
    ot_net_output(&g, op_sv(&g, "Pad", p1, 2), "P1");
    /* R1 = Range(d0, d0 * d1, d1 - 2), 0-D values */
    d0 = op2(&g, "Gather", s, i64c(&g, 0, 1, &i0));
    d1 = op2(&g, "Gather", s, i64c(&g, 0, 1, &i1));
    int32_t r1[3] = {d0, op2(&g, "Mul", d0, d1),
                     op2(&g, "Sub", d1, i64c(&g, 0, 1, &two))};
    ot_net_output(&g, op_sv(&g, "Range", r1, 3), "R1");
    /* S2 = Slice(X, ST, EN); P2 = Pad(X, PD); R2 = Range(RS, d0 * d1, RD) */
    int32_t s2[3] = {x, input(&g, "ST", PRT_INT64, (prt_dims){1, {2}}),
                     input(&g, "EN", PRT_INT64, (prt_dims){1, {2}})};
    ot_net_output(&g, op_sv(&g, "Slice", s2, 3), "S2");
    int32_t p2[2] = {x, input(&g, "PD", PRT_INT64, (prt_dims){1, {4}})};
    ot_net_output(&g, op_sv(&g, "Pad", p2, 2), "P2");
    int32_t r2[3] = {input(&g, "RS", PRT_INT64, (prt_dims){0, {0}}), r1[1],
                     input(&g, "RD", PRT_INT64, (prt_dims){0, {0}})};
    ot_net_output(&g, op_sv(&g, "Range", r2, 3), "R2");
    if (g.st)
        prt_network_destroy(g.n);
    else
        *out_net = g.n;
    return g.st;
}

static prt_status build(prt_network *n, int32_t device, prt_engine **e)
{
    prt_builder_config *cfg = NULL;
    int32_t prof = 0;
    const prt_dims mn = {2, {3, 4}}, op = {2, {5, 6}}, mx = {2, {8, 8}};
    /* Non-negative: slice.c's dims count a negative start from the end only
     * when it is a constant. */
    const int64_t st_lo[2] = {0, 0}, st_hi[2] = {8, 8};
    const int64_t pd_lo[4] = {0, 0, 0, 0}, pd_hi[4] = {3, 3, 3, 3};
    const int64_t r_lo = -4, r_hi = 4, rd_lo = 1;
    prt_status st = prt_builder_config_create(&cfg);
    if (!st)
        st = prt_builder_config_set_device(cfg, device);
    if (!st)
        st = prt_builder_config_add_profile(cfg, &prof);
    if (!st)
        st = prt_builder_config_set_profile_dims(cfg, prof, "X", &mn, &op, &mx);
    if (!st)
        st = prt_builder_config_set_profile_shape_values(cfg, prof, "ST", st_lo, st_lo,
                                                         st_hi, 2);
    if (!st)
        st = prt_builder_config_set_profile_shape_values(cfg, prof, "EN", st_lo, st_hi,
                                                         st_hi, 2);
    if (!st)
        st = prt_builder_config_set_profile_shape_values(cfg, prof, "PD", pd_lo, pd_lo,
                                                         pd_hi, 4);
    if (!st)
        st = prt_builder_config_set_profile_shape_values(cfg, prof, "RS", &r_lo, &r_lo,
                                                         &r_hi, 1);
    if (!st)
        st = prt_builder_config_set_profile_shape_values(cfg, prof, "RD", &rd_lo, &rd_lo,
                                                         &r_hi, 1);
    if (!st)
        st = prt_engine_build(n, cfg, NULL, e);
    prt_builder_config_destroy(cfg);
    return st;
}

/* One run's inputs: X's dims and values, the shape inputs' values. */
typedef struct run_in {
    prt_dims xd;
    float x[64];
    int64_t st[2], en[2], pd[4], rs, rd;
} run_in;

/* The outputs of a run: dims and bytes (each at most 16 * 16 * 8). */
typedef struct run_out {
    prt_dims d[NOUT];
    uint8_t v[NOUT][2048];
} run_out;

static size_t out_bytes(const prt_dims *d, int32_t k)
{
    return (size_t)tu_volume(d) * (k == 2 || k == 5 ? 8 : 4);
}

/* Sets the context's shapes and host inputs; X's data at dx. */
static prt_status bind_inputs(prt_context *c, const run_in *r, void *dx)
{
    prt_status st = prt_context_set_input_shape(c, "X", &r->xd);
    if (!st)
        st = prt_context_set_tensor_address(c, "X", dx);
    if (!st)
        st = prt_context_set_tensor_address(c, "ST", (void *)r->st);
    if (!st)
        st = prt_context_set_tensor_address(c, "EN", (void *)r->en);
    if (!st)
        st = prt_context_set_tensor_address(c, "PD", (void *)r->pd);
    if (!st)
        st = prt_context_set_tensor_address(c, "RS", (void *)&r->rs);
    if (!st)
        st = prt_context_set_tensor_address(c, "RD", (void *)&r->rd);
    return st;
}

/* The reference: the CPU engine, host memory throughout. */
static prt_status run_cpu(prt_engine *e, const run_in *r, run_out *o)
{
    prt_context *c = NULL;
    prt_status st = prt_context_create(e, &c);
    if (!st)
        st = bind_inputs(c, r, (void *)r->x);
    for (int32_t k = 0; !st && k < NOUT; k++) {
        st = prt_context_get_tensor_shape(c, outs[k], &o->d[k]);
        if (!st && out_bytes(&o->d[k], k) > sizeof o->v[k])
            st = PRT_ERR_SHAPE;
        if (!st)
            st = prt_context_set_tensor_address(c, outs[k], o->v[k]);
    }
    if (!st)
        st = prt_context_enqueue(c, NULL);
    prt_context_destroy(c);
    return st;
}

/* On CUDA: an eager run, then a captured graph launched, each compared
 * with `want`. */
static void run_cuda(prt_engine *e, const run_in *in, const run_out *want, void *s)
{
    run_in m = *in; /* the shape inputs' memory, changed below */
    const run_in *r = &m;
    prt_context *c = NULL;
    void *dx = NULL, *dy[NOUT] = {NULL};
    run_out got;
    CHECK_OK(prt_context_create(e, &c));
    if (!c)
        return;
    CUDA_OK(cudaMalloc(&dx, sizeof r->x));
    CUDA_OK(cudaMemcpy(dx, r->x, sizeof r->x, cudaMemcpyHostToDevice));
    CHECK_OK(bind_inputs(c, r, dx));
    for (int32_t k = 0; k < NOUT; k++) {
        CUDA_OK(cudaMalloc(&dy[k], sizeof got.v[k]));
        CHECK_OK(prt_context_set_tensor_address(c, outs[k], dy[k]));
    }
    for (int pass = 0; pass < 2; pass++) {
        const char *how = pass ? "captured" : "eager";
        for (int32_t k = 0; k < NOUT; k++)
            CUDA_OK(cudaMemsetAsync(dy[k], 0x5a, sizeof got.v[k], (cudaStream_t)s));
        if (pass == 0) {
            CHECK_OK(prt_context_enqueue(c, s));
        } else {
            CHECK_OK(prt_context_capture_graph(c, s));
            CHECK_OK(prt_context_launch_graph(c, s));
        }
        CUDA_OK(cudaStreamSynchronize((cudaStream_t)s));
        for (int32_t k = 0; k < NOUT; k++) {
            CHECK_OK(prt_context_get_tensor_shape(c, outs[k], &got.d[k]));
            if (!ot_dims_eq(&got.d[k], &want->d[k])) {
                CHECK(!"output dims differ from the CPU engine's");
                fprintf(stderr, "  %s run, output %s\n", how, outs[k]);
                continue;
            }
            CUDA_OK(cudaMemcpy(got.v[k], dy[k], out_bytes(&got.d[k], k),
                               cudaMemcpyDeviceToHost));
            if (memcmp(got.v[k], want->v[k], out_bytes(&got.d[k], k)) != 0) {
                CHECK(!"output differs from the CPU engine's");
                fprintf(stderr, "  %s run, output %s\n", how, outs[k]);
            }
        }
    }
    /* A shape input changed in place after the capture (no setter sees
     * it): the graph holds the old values, so launch refuses, naming it. */
    m.pd[0] ^= 1;
    CHECK_ERR(prt_context_launch_graph(c, s), PRT_ERR_STATE, "'PD'");
    m.pd[0] ^= 1;
    CHECK_OK(prt_context_launch_graph(c, s));
    CUDA_OK(cudaStreamSynchronize((cudaStream_t)s));
    for (int32_t k = 0; k < NOUT; k++)
        cudaFree(dy[k]);
    cudaFree(dx);
    prt_context_destroy(c);
}

int main(void)
{
    prt_network *n = NULL;
    prt_engine *cpu = NULL, *gpu = NULL;
    void *s = NULL;
    run_in runs[2] = {
        {{2, {3, 4}}, {0}, {1, 1}, {3, 4}, {1, 0, 2, 3}, -2, 1},
        {{2, {5, 7}}, {0}, {1, 2}, {8, 6}, {0, 3, 1, 0}, 3, 4},
    };
    tu_require_cuda("test_cuda_shape_params");
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 64; i++)
            runs[r].x[i] = (float)(i * (r + 3) % 17) - 8.0f;
    REQUIRE_OK(network(&n));
    REQUIRE_OK(build(n, PRT_DEVICE_CPU, &cpu));
    REQUIRE_OK(build(n, PRT_DEVICE_CUDA, &gpu));
    CHECK_OK(prt_stream_create(PRT_DEVICE_CUDA, &s));
    for (int r = 0; s && r < 2; r++) {
        static run_out want;
        memset(&want, 0, sizeof want);
        CHECK_OK(run_cpu(cpu, &runs[r], &want));
        run_cuda(gpu, &runs[r], &want, s);
    }
    prt_stream_destroy(PRT_DEVICE_CUDA, s);
    prt_engine_destroy(gpu);
    prt_engine_destroy(cpu);
    prt_network_destroy(n);
    return tu_finish("test_cuda_shape_params");
}
