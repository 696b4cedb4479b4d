/*
 * QuantFC cases (quantfc_case.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quantfc_case.h"

static size_t qfc_esize(int32_t dtype)
{
    return dtype == PRT_FLOAT32 ? 4 : 1;
}

int qfc_case_fill(qfc_case *c, uint64_t seed)
{
    tu_rng r;
    int64_t nw = c->per_channel ? c->n : 1;
    tu_rng_seed(&r, seed);
    c->x = malloc((size_t)(c->m * c->k) * qfc_esize(c->x_dtype) + 1);
    c->w = malloc((size_t)(c->n * c->k) * qfc_esize(c->x_dtype) + 1);
    c->b = malloc(sizeof(float) * (size_t)(c->n + 1));
    c->sw = malloc(sizeof(float) * (size_t)nw);
    if (!c->x || !c->w || !c->b || !c->sw)
        return 1;
    c->sx = (float)(0.01 + 0.05 * tu_rng_uniform(&r));
    c->zx = c->x_dtype == PRT_INT8    ? (int32_t)tu_rng_range(&r, -10, 10)
            : c->x_dtype == PRT_UINT8 ? (int32_t)tu_rng_range(&r, 100, 150)
                                      : 0;
    for (int64_t i = 0; i < nw; i++)
        c->sw[i] = (float)(0.002 + 0.02 * tu_rng_uniform(&r));
    for (int64_t i = 0; i < c->m * c->k; i++) {
        if (c->x_dtype == PRT_INT8)
            ((int8_t *)c->x)[i] = (int8_t)tu_rng_range(&r, -128, 127);
        else if (c->x_dtype == PRT_UINT8)
            ((uint8_t *)c->x)[i] = (uint8_t)tu_rng_range(&r, 0, 255);
        else
            ((float *)c->x)[i] = (float)(tu_rng_uniform(&r) * 4.0 - 2.0);
    }
    for (int64_t i = 0; i < c->n * c->k; i++) {
        if (c->x_dtype == PRT_FLOAT32)
            ((float *)c->w)[i] = (float)(tu_rng_uniform(&r) - 0.5);
        else
            ((int8_t *)c->w)[i] = (int8_t)tu_rng_range(&r, -127, 127);
    }
    for (int64_t i = 0; i < c->n; i++)
        c->b[i] = (float)(tu_rng_uniform(&r) * 2.0 - 1.0);
    /* y's scale spreads the results over most of the integer range. */
    c->sy = c->x_dtype == PRT_FLOAT32
                ? (float)(0.02 * sqrt((double)c->k))
                : (float)(c->sx * c->sw[0] * 40.0 * sqrt((double)c->k) + 0.01);
    c->zy = c->y_dtype == PRT_INT8 ? -5 : c->y_dtype == PRT_UINT8 ? 120 : 0;
    return 0;
}

void qfc_case_grid(const int64_t (*shapes)[3], size_t nb_shapes, int nb_variants,
                   void (*fn)(qfc_case c, uint64_t seed, void *user), void *user)
{
    static const int32_t xs[3] = {PRT_INT8, PRT_UINT8, PRT_FLOAT32};
    static const int32_t ys[3] = {PRT_FLOAT32, PRT_INT8, PRT_UINT8};
    uint64_t seed = 1;
    for (int xi = 0; xi < 3; xi++)
        for (int yi = 0; yi < 3; yi++)
            for (size_t s = 0; s < nb_shapes; s++)
                for (int v = 0; v < nb_variants; v++) {
                    qfc_case c;
                    memset(&c, 0, sizeof c);
                    c.m = shapes[s][0];
                    c.k = shapes[s][1];
                    c.n = shapes[s][2];
                    c.x_dtype = xs[xi];
                    c.y_dtype = ys[yi];
                    c.per_channel = v & 1;
                    c.bias = !(v & 2);
                    c.relu = (int)(s & 1) ^ (v & 1);
                    fn(c, seed++, user);
                }
}

void qfc_case_free(qfc_case *c)
{
    free(c->x);
    free(c->w);
    free(c->b);
    free(c->sw);
    c->x = c->w = NULL;
    c->b = c->sw = NULL;
}

static prt_quant_desc qfc_quant(int32_t kind, int32_t axis, int64_t count,
                                const float *scales, const int32_t *zps)
{
    prt_quant_desc q;
    memset(&q, 0, sizeof q);
    q.struct_size = sizeof q;
    q.kind = kind;
    q.axis = axis;
    q.count = count;
    q.scales = scales;
    q.zero_points = zps;
    return q;
}

prt_status qfc_case_network(const qfc_case *c, const prt_registry *reg, prt_network **out)
{
    prt_network *net = NULL;
    prt_plugin *p;
    prt_field f[2] = {{"relu", &c->relu, PRT_FIELD_INT32, 1},
                      {"output_dtype", &c->y_dtype, PRT_FIELD_INT32, 1}};
    int64_t xd[2] = {c->m, c->k}, wd[2] = {c->n, c->k}, bd[1] = {c->n};
    prt_dims xdims = tu_dims(2, xd), wdims = tu_dims(2, wd), bdims = tu_dims(1, bd);
    int32_t x, w, b, y, layer, in[3];
    int32_t wtype = c->x_dtype == PRT_FLOAT32 ? PRT_FLOAT32 : PRT_INT8;
    prt_status st = prt_network_create(&net);
    *out = NULL;
    if (!st)
        st = prt_network_add_input(net, "x", c->x_dtype, &xdims, &x);
    if (!st)
        st = prt_network_add_constant(net, "w", wtype, &wdims, c->w, &w);
    if (!st)
        st = prt_network_add_constant(net, "b", PRT_FLOAT32, &bdims, c->b, &b);
    if (!st && c->x_dtype != PRT_FLOAT32) {
        prt_quant_desc qx = qfc_quant(PRT_QUANT_PER_TENSOR, -1, 1, &c->sx, &c->zx);
        prt_quant_desc qw = c->per_channel
                                ? qfc_quant(PRT_QUANT_PER_CHANNEL, 0, c->n, c->sw, NULL)
                                : qfc_quant(PRT_QUANT_PER_TENSOR, -1, 1, c->sw, NULL);
        st = prt_network_set_tensor_quant(net, x, &qx);
        if (!st)
            st = prt_network_set_tensor_quant(net, w, &qw);
    }
    if (st) {
        prt_network_destroy(net);
        return st;
    }
    p = tu_make_plugin(reg, "example", "QuantFC", "1", f, 2);
    if (!p) {
        prt_network_destroy(net);
        return PRT_ERR_PLUGIN;
    }
    in[0] = x;
    in[1] = w;
    in[2] = b;
    st = prt_network_add_plugin(net, in, c->bias ? 3 : 2, NULL, 0, p, &layer);
    if (st)
        p->vt->runtime->destroy(p);
    if (!st)
        st = prt_network_get_layer_output(net, layer, 0, &y);
    if (!st)
        st = prt_network_set_tensor_name(net, y, "y");
    if (!st)
        st = prt_network_mark_output(net, y);
    if (!st && c->y_dtype != PRT_FLOAT32) {
        prt_quant_desc qy = qfc_quant(PRT_QUANT_PER_TENSOR, -1, 1, &c->sy, &c->zy);
        st = prt_network_set_tensor_quant(net, y, &qy);
    }
    if (st)
        prt_network_destroy(net);
    else
        *out = net;
    return st;
}

static double qfc_x(const qfc_case *c, int64_t i)
{
    if (c->x_dtype == PRT_INT8)
        return ((double)((const int8_t *)c->x)[i] - c->zx) * c->sx;
    if (c->x_dtype == PRT_UINT8)
        return ((double)((const uint8_t *)c->x)[i] - c->zx) * c->sx;
    return ((const float *)c->x)[i];
}

static double qfc_w(const qfc_case *c, int64_t n, int64_t i)
{
    if (c->x_dtype == PRT_FLOAT32)
        return ((const float *)c->w)[n * c->k + i];
    return (double)((const int8_t *)c->w)[n * c->k + i] * c->sw[c->per_channel ? n : 0];
}

void qfc_case_real(const qfc_case *c, double *real)
{
    for (int64_t m = 0; m < c->m; m++)
        for (int64_t n = 0; n < c->n; n++) {
            double v = c->bias ? c->b[n] : 0.0;
            for (int64_t i = 0; i < c->k; i++)
                v += qfc_x(c, m * c->k + i) * qfc_w(c, n, i);
            real[m * c->n + n] = c->relu && v < 0 ? 0.0 : v;
        }
}

void qfc_case_exact(const qfc_case *c, const double *real, void *exact)
{
    for (int64_t m = 0; m < c->m; m++)
        for (int64_t n = 0; n < c->n; n++) {
            float v, q;
            if (c->x_dtype == PRT_FLOAT32) {
                v = (float)real[m * c->n + n];
            } else {
                int32_t acc = 0;
                for (int64_t i = 0; i < c->k; i++) {
                    int32_t xi = c->x_dtype == PRT_INT8
                                     ? ((const int8_t *)c->x)[m * c->k + i]
                                     : ((const uint8_t *)c->x)[m * c->k + i];
                    acc += (xi - c->zx) * ((const int8_t *)c->w)[n * c->k + i];
                }
                v = (float)acc * (c->sx * c->sw[c->per_channel ? n : 0]);
                if (c->bias)
                    v = v + c->b[n];
                if (c->relu && v < 0.0f)
                    v = 0.0f;
            }
            if (c->y_dtype == PRT_FLOAT32) {
                ((float *)exact)[m * c->n + n] = v;
                continue;
            }
            q = rintf(v / c->sy) + (float)c->zy;
            if (c->y_dtype == PRT_INT8)
                ((int8_t *)exact)[m * c->n + n] =
                    (int8_t)fminf(fmaxf(q, -128.0f), 127.0f);
            else
                ((uint8_t *)exact)[m * c->n + n] = (uint8_t)fminf(fmaxf(q, 0.0f), 255.0f);
        }
}
