/*
 * CustomHardmax on CUDA against the copy (PyTorch's argmax + scatter_ comes
 * from bench/torch_peers.py in the same batch).
 *
 * Cases (float32, PERF.md): (65536, 1024) axis 1; (4096, 4096) axis 0, the
 * strided reduction; (64, 64, 2048) axis 2; (1, 512, 3) axis 1, a latency
 * case. Each is a one-layer engine timed by bench_run_case1 (bench.h):
 * prt_context_enqueue with events, median of >= 30 runs, buffers rotated
 * when a set is smaller than 4 x L2. Bytes moved: the input once and the
 * output once (8 bytes an element).
 *
 * Data: uniform in [-1, 1). The check (before timing and after it, the
 * output poisoned with NaN bits before the first run) is a plain C
 * reference on the host: 1 at the first maximum along the axis, 0
 * elsewhere, every element compared exactly.
 */
#include "bench.h"

#define HM_SEED 20261130u

typedef struct hm_spec {
    prt_dims dims;
    int32_t axis;
} hm_spec;

static int hm_check(const void *spec, const float *x, const float *y, char *why,
                    size_t size)
{
    const hm_spec *h = (const hm_spec *)spec;
    int64_t outer = 1, len = h->dims.d[h->axis], inner = 1;
    for (int32_t i = 0; i < h->axis; i++)
        outer *= h->dims.d[i];
    for (int32_t i = h->axis + 1; i < h->dims.nb_dims; i++)
        inner *= h->dims.d[i];
    for (int64_t o = 0; o < outer; o++) {
        const float *xo = x + o * len * inner;
        const float *yo = y + o * len * inner;
        for (int64_t in = 0; in < inner; in++) {
            int64_t best = 0;
            for (int64_t a = 1; a < len; a++)
                if (xo[a * inner + in] > xo[best * inner + in])
                    best = a;
            for (int64_t a = 0; a < len; a++) {
                float want = a == best ? 1.0f : 0.0f, got = yo[a * inner + in];
                if (!(got == want)) {
                    snprintf(why, size,
                             "y[outer %lld, axis %lld, inner %lld] = %g, expected %g "
                             "(first maximum at %lld)",
                             (long long)o, (long long)a, (long long)in, (double)got,
                             (double)want, (long long)best);
                    return 1;
                }
            }
        }
    }
    return 0;
}

int main(void)
{
    static const struct {
        int32_t rank;
        int64_t d[3];
        int32_t axis;
    } cases[] = {
        {2, {65536, 1024, 0}, 1},
        {2, {4096, 4096, 0}, 0},
        {3, {64, 64, 2048}, 2},
        {3, {1, 512, 3}, 1},
    };
    bench_env env;
    int rc = bench_init(&env, "bench_hardmax");
    if (rc)
        return rc;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hm_spec h;
        bench_case1 c;
        char id[96], dims[64];
        int64_t n = bench_dims(&h.dims, cases[i].rank, cases[i].d);
        prt_field f = {"axis", &h.axis, PRT_FIELD_INT32, 1};
        h.axis = cases[i].axis;
        snprintf(id, sizeof id, "hardmax %s axis=%d",
                 bench_dims_str(&h.dims, dims, sizeof dims), (int)h.axis);
        c.id = id;
        c.ns = "";
        c.name = "CustomHardmax";
        c.fields = &f;
        c.nb_fields = 1;
        c.dims = h.dims;
        c.out_elems = n;
        c.seed = HM_SEED + i;
        c.check = hm_check;
        c.spec = &h;
        bench_run_case1(&env, &c);
    }
    return bench_finish(&env);
}
