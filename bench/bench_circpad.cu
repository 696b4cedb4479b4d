/*
 * circ_pad_plugin on CUDA against the copy (PyTorch's F.pad(mode="circular")
 * comes from bench/torch_peers.py in the same batch).
 *
 * Cases (float32, PERF.md): (8, 64, 256, 256) with pads 1 and with pads 3
 * on each side of the last two dims; (1, 3, 1024, 1024) with pads 16. Each
 * is a one-layer engine timed by bench_run_case1 (bench.h):
 * prt_context_enqueue with events, median of >= 30 runs, buffers rotated
 * when a set is smaller than 4 x L2. Bytes moved: the input once and the
 * (larger) output once.
 *
 * Data: uniform in [-1, 1). The check (before timing and after it, the
 * output poisoned before the first run) is a plain C reference on the
 * host: out[.., i, j] = in[.., (i - p) mod H, (j - p) mod W], every element
 * compared bit for bit.
 */
#include "bench.h"

#include <string.h>

#define CP_SEED 20261201u

typedef struct cp_spec {
    int64_t d[4];
    int64_t pad;
} cp_spec;

static int cp_check(const void *spec, const float *x, const float *y, char *why,
                    size_t size)
{
    const cp_spec *c = (const cp_spec *)spec;
    int64_t planes = c->d[0] * c->d[1], h = c->d[2], w = c->d[3], p = c->pad;
    int64_t oh = h + 2 * p, ow = w + 2 * p;
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *xp = x + pl * h * w;
        const float *yp = y + pl * oh * ow;
        for (int64_t i = 0; i < oh; i++) {
            int64_t si = ((i - p) % h + h) % h;
            for (int64_t j = 0; j < ow; j++) {
                int64_t sj = ((j - p) % w + w) % w;
                if (memcmp(&yp[i * ow + j], &xp[si * w + sj], sizeof(float)) != 0) {
                    snprintf(
                        why, size,
                        "y[plane %lld, %lld, %lld] = %g, expected x[%lld, %lld] = %g",
                        (long long)pl, (long long)i, (long long)j, (double)yp[i * ow + j],
                        (long long)si, (long long)sj, (double)xp[si * w + sj]);
                    return 1;
                }
            }
        }
    }
    return 0;
}

int main(void)
{
    static const cp_spec cases[] = {
        {{8, 64, 256, 256}, 1},
        {{8, 64, 256, 256}, 3},
        {{1, 3, 1024, 1024}, 16},
    };
    bench_env env;
    int rc = bench_init(&env, "bench_circpad");
    if (rc)
        return rc;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const cp_spec *cs = &cases[i];
        int32_t p = (int32_t)cs->pad,
                pads[4] = {p, p, p, p}; /* last dim, then the one before */
        prt_field f = {"pads", pads, PRT_FIELD_INT32, 4};
        bench_case1 c;
        char id[96], dims[64];
        c.out_elems = cs->d[0] * cs->d[1] * (cs->d[2] + 2 * p) * (cs->d[3] + 2 * p);
        bench_dims(&c.dims, 4, cs->d);
        snprintf(id, sizeof id, "circpad %s pads=%d",
                 bench_dims_str(&c.dims, dims, sizeof dims), (int)p);
        c.id = id;
        c.ns = "example";
        c.name = "circ_pad_plugin";
        c.fields = &f;
        c.nb_fields = 1;
        c.seed = CP_SEED + i;
        c.check = cp_check;
        c.spec = cs;
        bench_run_case1(&env, &c);
    }
    return bench_finish(&env);
}
