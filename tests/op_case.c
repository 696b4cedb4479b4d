/* One built-in op as a one-layer network, built, loaded back and run on a
 * device (op_case.h). */
#include "op_case.h"

#include <stdlib.h>
#include <string.h>

prt_engine *oc_build(int32_t device, const oc_case *c, char *err, size_t cap)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL, *r = NULL;
    prt_plugin *p = NULL;
    int32_t data[OT_MAXIN], shape[OT_MAXIN], nd = 0, ns = 0, layer, y;
    prt_status st;
    char nm[16];
    err[0] = '\0';
    if (prt_network_create(&net) != PRT_OK) {
        snprintf(err, cap, "%s", prt_last_error());
        return NULL;
    }
    for (int32_t i = 0; i < c->nb; i++) {
        int32_t id;
        snprintf(nm, sizeof nm, "%s%d", c->role[i] == OC_DATA ? "X" : "C", (int)i);
        if (c->role[i] == OC_DATA)
            CHECK_OK(prt_network_add_input(net, nm, c->in[i].dtype, &c->in[i].dims, &id));
        else
            CHECK_OK(prt_network_add_constant(net, nm, c->in[i].dtype, &c->in[i].dims,
                                              c->in[i].data, &id));
        if (c->role[i] != OC_SHAPE)
            data[nd++] = id;
        if (c->role[i] == OC_SHAPE || c->role[i] == OC_BOTH)
            shape[ns++] = id;
    }
    st = ot_make_op(c->op, c->f, c->nf, &p);
    if (st == PRT_OK)
        st = prt_network_add_plugin(net, data, nd, shape, ns, p, &layer);
    else
        p = NULL;
    if (st == PRT_OK) {
        for (int32_t k = 0; k < (c->nb_out ? c->nb_out : 1); k++) {
            snprintf(nm, sizeof nm, "Y%d", (int)k);
            CHECK_OK(prt_network_get_layer_output(net, layer, k, &y));
            CHECK_OK(prt_network_set_tensor_name(net, y, nm));
            CHECK_OK(prt_network_mark_output(net, y));
        }
        CHECK_OK(prt_builder_config_create(&cfg));
        CHECK_OK(prt_builder_config_set_device(cfg, device));
        st = prt_engine_build(net, cfg, NULL, &e);
    } else if (p) {
        p->vt->runtime->destroy(p);
    }
    if (st != PRT_OK)
        snprintf(err, cap, "%s", prt_last_error());
    if (e && ot_reload(e, &r) != PRT_OK) {
        snprintf(err, cap, "reloading: %s", prt_last_error());
        CHECK(!"the engine reloads");
    }
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return r;
}

/* Input i's bytes. */
static size_t in_bytes(const oc_case *c, int32_t i)
{
    return (size_t)tu_volume(&c->in[i].dims) * prt_dtype_size(c->in[i].dtype);
}

int oc_run(prt_engine *e, int32_t device, const oc_case *c, int32_t threads, int poison,
           ot_tensor *out)
{
    const int dev = device != PRT_DEVICE_CPU;
    const int32_t nb_out = c->nb_out ? c->nb_out : 1;
    prt_context_options opt = {.struct_size = sizeof opt, .threads = threads};
    prt_context *ctx = NULL;
    void *dx[OT_MAXIN] = {0}, *dy[OC_MAXOUT] = {0}, *s = NULL;
    size_t ybytes[OC_MAXOUT] = {0};
    char nm[16];
    int ok = 1;
    for (int32_t k = 0; k < nb_out; k++)
        memset(&out[k], 0, sizeof out[k]);
    REQUIRE_OK(prt_context_create_with_options(e, &opt, &ctx));
    if (dev)
        ok = prt_stream_create(device, &s) == PRT_OK;
    for (int32_t i = 0; i < c->nb && ok; i++) {
        size_t n = in_bytes(c, i);
        if (c->role[i] != OC_DATA)
            continue;
        snprintf(nm, sizeof nm, "X%d", (int)i);
        if (dev)
            ok = prt_device_malloc(device, n ? n : 1, &dx[i]) == PRT_OK &&
                 prt_device_memcpy(device, dx[i], c->in[i].data, n,
                                   PRT_MEMCPY_HOST_TO_DEVICE, s) == PRT_OK;
        ok = ok && prt_context_set_tensor_address(ctx, nm, dev ? dx[i] : c->in[i].data) ==
                       PRT_OK;
    }
    for (int32_t k = 0; k < nb_out && ok; k++) {
        prt_io_info io = {.struct_size = sizeof io};
        prt_dims yd;
        int32_t idx = -1;
        snprintf(nm, sizeof nm, "Y%d", (int)k);
        /* Before the run: the dims, or a data-dependent output's bound. */
        ok = prt_context_get_tensor_shape(ctx, nm, &yd) == PRT_OK &&
             prt_engine_find_io(e, nm, &idx) == PRT_OK &&
             prt_engine_get_io(e, idx, &io) == PRT_OK;
        if (!ok)
            break;
        out[k] = ot_make(io.dtype, yd);
        ybytes[k] = (size_t)tu_volume(&yd) * prt_dtype_size(io.dtype);
        if (dev)
            ok = prt_device_malloc(device, ybytes[k] ? ybytes[k] : 1, &dy[k]) == PRT_OK &&
                 prt_device_memset(device, dy[k], poison, ybytes[k], s) == PRT_OK;
        else
            memset(out[k].data, poison, ybytes[k]);
        ok = ok &&
             prt_context_set_tensor_address(ctx, nm, dev ? dy[k] : out[k].data) == PRT_OK;
    }
    if (ok && prt_context_enqueue(ctx, s) != PRT_OK) {
        printf("%s: enqueue: %s\n", c->op, prt_last_error());
        ok = 0;
    }
    for (int32_t k = 0; k < nb_out && ok && dev; k++)
        ok = prt_device_memcpy(device, out[k].data, dy[k], ybytes[k],
                               PRT_MEMCPY_DEVICE_TO_HOST, s) == PRT_OK;
    if (ok && dev && prt_stream_synchronize(device, s) != PRT_OK) {
        printf("%s: the run failed on the device: %s\n", c->op, prt_last_error());
        ok = 0;
    }
    /* After the run: a data-dependent output's dims are the run's (its
     * elements are dense at those dims). */
    for (int32_t k = 0; k < nb_out && ok; k++) {
        prt_dims yd;
        snprintf(nm, sizeof nm, "Y%d", (int)k);
        ok = prt_context_get_tensor_shape(ctx, nm, &yd) == PRT_OK &&
             tu_volume(&yd) <= tu_volume(&out[k].dims);
        if (ok)
            out[k].dims = yd;
    }
    CHECK(ok);
    for (int32_t i = 0; i < c->nb; i++)
        if (dx[i])
            prt_device_free(device, dx[i]);
    for (int32_t k = 0; k < nb_out; k++)
        if (dy[k])
            prt_device_free(device, dy[k]);
    if (s)
        prt_stream_destroy(device, s);
    prt_context_destroy(ctx);
    return ok ? 0 : 1;
}

void oc_compare(const char *what, const oc_case *c, const ot_tensor *got,
                const ot_tensor *want)
{
    for (int32_t k = 0; k < (c->nb_out ? c->nb_out : 1); k++) {
        int64_t n = tu_volume(&want[k].dims);
        double *ref = malloc(sizeof(double) * (size_t)(n + 1));
        char w[200];
        snprintf(w, sizeof w, "%s, output %d", what, (int)k);
        CHECK(ref != NULL);
        for (int64_t i = 0; ref && i < n; i++)
            ref[i] = ot_get(&want[k], i);
        if (ref)
            ot_check_close(w, &got[k], &want[k].dims, ref, c->rtol);
        if (c->exact && ot_dims_eq(&got[k].dims, &want[k].dims) &&
            memcmp(got[k].data, want[k].data,
                   (size_t)n * prt_dtype_size(want[k].dtype)) != 0) {
            printf("%s: the bytes differ from the reference's\n", w);
            CHECK(!"the same bytes as the reference");
        }
        free(ref);
    }
}

void oc_free(oc_case *c)
{
    for (int32_t i = 0; i < c->nb; i++)
        ot_free(&c->in[i]);
}

/* Output dims and two input dims broadcast to them, by kind: 0 same dims,
 * 1 a scalar, 2 a row, 3 both sides broadcast ([a, 1, c] and [b, 1]), 4 a
 * 1-element tensor of lower rank, 5 an empty dim, 6 rank 6 mixed. */
void oc_bcast_pair(tu_rng *r, int kind, prt_dims *a, prt_dims *b)
{
    int64_t x = tu_rng_range(r, 1, 9), y = tu_rng_range(r, 2, 7),
            z = tu_rng_range(r, 1, 40);
    switch (kind) {
    case 0:
        *a = *b = D3(x, y, z);
        break;
    case 1:
        *a = D3(x, y, z);
        *b = D0();
        break;
    case 2:
        *a = D3(x, y, z);
        *b = D1(z);
        break;
    case 3:
        *a = D3(x, 1, z);
        *b = D2(y, 1);
        break;
    case 4:
        *a = D1(1);
        *b = D4(2, x, y, 3);
        break;
    case 5:
        *a = D3(x, 0, z);
        *b = D1(z);
        break;
    default: {
        int64_t d[6], e[6];
        for (int i = 0; i < 6; i++) {
            d[i] = tu_rng_range(r, 1, 3);
            e[i] = tu_rng_range(r, 0, 1) ? d[i] : 1;
        }
        d[2] = 1;
        e[2] = 3;
        *a = tu_dims(6, d);
        *b = tu_dims(5, e + 1);
        break;
    }
    }
}
