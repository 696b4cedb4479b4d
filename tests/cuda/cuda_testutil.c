/* The CUDA tests' shared checks, plugin boilerplate and 8-bit product
 * comparisons (cuda_testutil.h). */
#include <stdio.h>
#include <stdlib.h>

#include "base/base.h"
#include "cuda_testutil.h"

int tcu_ok(cudaError_t e, const char *what, const char *file, int line)
{
    tu_checks++;
    if (e == cudaSuccess)
        return 1;
    tu_failures++;
    fprintf(stderr, "%s:%d: %s: %s (%s)\n", file, line, what, cudaGetErrorName(e),
            cudaGetErrorString(e));
    return 0;
}

const char *tcu_version(const prt_plugin *p)
{
    (void)p;
    return "1";
}

const char *tcu_namespace(const prt_plugin *p)
{
    (void)p;
    return "test";
}

uint32_t tcu_cuda_only(const prt_plugin *p)
{
    (void)p;
    return 1u << PRT_DEVICE_CUDA;
}

int32_t tcu_one_output(const prt_plugin *p)
{
    (void)p;
    return 1;
}

prt_status tcu_dtype_of_input(prt_plugin *p, int32_t *out, int32_t nb_out,
                              const int32_t *in, int32_t nb_in)
{
    (void)p, (void)nb_out, (void)nb_in;
    out[0] = in[0];
    return PRT_OK;
}

prt_status tcu_shape_of_input(prt_plugin *p, const prt_dim_exprs *in, int32_t nb_in,
                              const prt_dim_exprs *si, int32_t nb_si, prt_dim_exprs *out,
                              int32_t nb_out, prt_expr_builder *eb)
{
    (void)p, (void)nb_in, (void)si, (void)nb_si, (void)nb_out, (void)eb;
    out[0] = in[0];
    return PRT_OK;
}

int32_t tcu_supports_f32_1d(prt_plugin *p, int32_t pos, const prt_dynamic_tensor_desc *d,
                            int32_t nb_in, int32_t nb_out)
{
    (void)p, (void)nb_in, (void)nb_out;
    return d[pos].desc.dtype == PRT_FLOAT32 && d[pos].desc.format == PRT_FORMAT_LINEAR &&
           d[pos].desc.dims.nb_dims == 1;
}

prt_plugin *tcu_clone(const prt_plugin *p)
{
    tcu_plugin *c = malloc(sizeof *c);
    if (c)
        *c = *(const tcu_plugin *)p;
    return c ? &c->base : NULL;
}

prt_plugin *tcu_attach(prt_plugin *p, prt_plugin_resources *r)
{
    (void)r;
    return tcu_clone(p);
}

const prt_field_collection *tcu_no_fields(prt_plugin *p)
{
    static const prt_field_collection none = {0, NULL};
    (void)p;
    return &none;
}

void tcu_destroy(prt_plugin *p)
{
    free(p);
}

prt_status tcu_plugin_network(prt_plugin *p, const prt_dims *d, const char *layer,
                              prt_network **out)
{
    prt_network *net = NULL;
    int32_t x, l, y;
    prt_status st = prt_network_create(&net);
    if (!st)
        st = prt_network_add_input(net, "x", PRT_FLOAT32, d, &x);
    if (!st)
        st = prt_network_add_plugin(net, &x, 1, NULL, 0, p, &l);
    if (st) /* not the network's */
        p->vt->runtime->destroy(p);
    if (!st && layer)
        st = prt_network_set_layer_name(net, l, layer);
    if (!st)
        st = prt_network_get_layer_output(net, l, 0, &y);
    if (!st)
        st = prt_network_set_tensor_name(net, y, "y");
    if (!st)
        st = prt_network_mark_output(net, y);
    if (st) {
        prt_network_destroy(net);
        net = NULL;
    }
    *out = net;
    return st;
}

prt_status tcu_build_1d(const prt_plugin_vtable *vt, int32_t kind, int64_t opt,
                        int64_t max, int autotune, const char *cache, prt_engine **out)
{
    tcu_plugin *p = malloc(sizeof *p);
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    int64_t v1[] = {1}, vd[] = {-1};
    prt_dims lo = tu_dims(1, v1), op = tu_dims(1, &opt), hi = tu_dims(1, &max),
             d = tu_dims(1, vd);
    int32_t prof;
    prt_status st;
    if (!p)
        return PRT_ERR_OUT_OF_MEMORY;
    p->base.vt = vt;
    p->kind = kind;
    st = tcu_plugin_network(&p->base, &d, NULL, &net);
    if (!st)
        st = prt_builder_config_create(&cfg);
    if (!st)
        st = prt_builder_config_set_device(cfg, PRT_DEVICE_CUDA);
    if (!st && autotune)
        st = prt_builder_config_set_autotune(cfg, 1);
    if (!st && cache)
        st = prt_builder_config_set_timing_cache_file(cfg, cache);
    if (!st)
        st = prt_builder_config_add_profile(cfg, &prof);
    if (!st)
        st = prt_builder_config_set_profile_dims(cfg, prof, "x", &lo, &op, &hi);
    if (!st)
        st = prt_engine_build(net, cfg, NULL, out);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return st;
}

ot_tensor tcu_q_bytes(tu_rng *r, int32_t dtype, prt_dims d)
{
    ot_tensor t = ot_make(dtype, d);
    for (int64_t i = 0; t.data && i < base_volume(&d); i++)
        ((uint8_t *)t.data)[i] = (uint8_t)tu_rng_range(r, 0, 255);
    return t;
}

ot_tensor tcu_q_scales(tu_rng *r, int64_t n, float lo, float hi)
{
    ot_tensor t = ot_make(PRT_FLOAT32, n ? D1(n) : D0());
    for (int64_t i = 0; t.data && i < (n ? n : 1); i++)
        ((float *)t.data)[i] = lo + (hi - lo) * (float)tu_rng_uniform(r);
    return t;
}

/* Runs c on CUDA (the plain kernels when `plain`) into out; 1 on success. */
static int q_run_cuda(prt_engine *e, const oc_case *c, int plain, ot_tensor *out)
{
    int ok;
    if (plain)
        setenv("PRT_CUDA_QGEMM", "kernel", 1);
    ok = oc_run(e, PRT_DEVICE_CUDA, c, 0, 0x5a, out) == 0;
    unsetenv("PRT_CUDA_QGEMM");
    return ok;
}

void tcu_q_compare(const oc_case *c, const char *what, int64_t (*runs)(void), int expect,
                   const char *path)
{
    ot_tensor want[OC_MAXOUT] = {{0}}, fast[OC_MAXOUT] = {{0}}, own[OC_MAXOUT] = {{0}};
    char err[512];
    prt_engine *ecpu = oc_build(PRT_DEVICE_CPU, c, err, sizeof err);
    prt_engine *egpu = ecpu ? oc_build(PRT_DEVICE_CUDA, c, err, sizeof err) : NULL;
    CHECK(ecpu && egpu);
    if (!ecpu || !egpu) {
        fprintf(stderr, "  %s: build: %s\n", what, err);
    } else if (oc_run(ecpu, PRT_DEVICE_CPU, c, 0, 0x5a, want) == 0) {
        const int64_t before = runs();
        if (q_run_cuda(egpu, c, 0, fast)) {
            const int64_t ran = runs() - before;
            CHECK(expect ? ran > 0 : ran == 0);
            if (expect ? ran <= 0 : ran != 0)
                fprintf(stderr, "  %s: %s ran %lld times, expected %s\n", what, path,
                        (long long)ran, expect ? "some" : "none");
            oc_compare(what, c, fast, want);
        }
        if (q_run_cuda(egpu, c, 1, own))
            oc_compare(what, c, own, want);
    }
    for (int k = 0; k < OC_MAXOUT; k++)
        ot_free(&want[k]), ot_free(&fast[k]), ot_free(&own[k]);
    prt_engine_destroy(ecpu);
    prt_engine_destroy(egpu);
}
