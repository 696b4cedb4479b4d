#include "op_testutil.h"

#include <math.h>
#include <stdlib.h>

#include "base/base.h"

/* ---- tensors --------------------------------------------------------------- */

prt_dims ot_dims5(int32_t nb, int64_t a, int64_t b, int64_t c, int64_t d, int64_t e)
{
    const int64_t v[5] = {a, b, c, d, e};
    return tu_dims(nb, v);
}

ot_tensor ot_make(int32_t dtype, prt_dims dims)
{
    ot_tensor t;
    t.dtype = dtype;
    t.dims = dims;
    t.data = calloc((size_t)(tu_volume(&dims) + 1), prt_dtype_size(dtype));
    return t;
}

void ot_free(ot_tensor *t)
{
    free(t->data);
    t->data = NULL;
}

double ot_get(const ot_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case PRT_FLOAT32:
        return ((const float *)t->data)[i];
    case PRT_FLOAT16:
        return prt_half_to_float(((const uint16_t *)t->data)[i]);
    case PRT_BFLOAT16:
        return prt_bf16_to_float(((const uint16_t *)t->data)[i]);
    case PRT_INT8:
        return ((const int8_t *)t->data)[i];
    case PRT_UINT8:
    case PRT_BOOL:
        return ((const uint8_t *)t->data)[i];
    case PRT_INT32:
        return ((const int32_t *)t->data)[i];
    case PRT_FLOAT8E4M3FN:
    case PRT_FLOAT8E5M2:
        return prt_fp8_to_float(t->dtype, ((const uint8_t *)t->data)[i]);
    case PRT_FLOAT64:
        return ((const double *)t->data)[i];
    case PRT_INT16:
        return ((const int16_t *)t->data)[i];
    case PRT_UINT16:
        return ((const uint16_t *)t->data)[i];
    case PRT_UINT32:
        return ((const uint32_t *)t->data)[i];
    case PRT_UINT64:
        return (double)((const uint64_t *)t->data)[i];
    default:
        return (double)((const int64_t *)t->data)[i];
    }
}

void ot_set(ot_tensor *t, int64_t i, double v)
{
    switch (t->dtype) {
    case PRT_FLOAT32:
        ((float *)t->data)[i] = (float)v;
        break;
    case PRT_FLOAT16:
        ((uint16_t *)t->data)[i] = prt_float_to_half((float)v);
        break;
    case PRT_BFLOAT16:
        ((uint16_t *)t->data)[i] = prt_float_to_bf16((float)v);
        break;
    case PRT_INT8:
        ((int8_t *)t->data)[i] = (int8_t)v;
        break;
    case PRT_UINT8:
    case PRT_BOOL:
        ((uint8_t *)t->data)[i] = (uint8_t)v;
        break;
    case PRT_INT32:
        ((int32_t *)t->data)[i] = (int32_t)v;
        break;
    case PRT_FLOAT8E4M3FN:
    case PRT_FLOAT8E5M2:
        ((uint8_t *)t->data)[i] = prt_float_to_fp8(t->dtype, (float)v, 1);
        break;
    case PRT_FLOAT64:
        ((double *)t->data)[i] = v;
        break;
    /* integers: v's low bits (a negative value wraps, as a cast does) */
    case PRT_INT16:
    case PRT_UINT16:
        ((uint16_t *)t->data)[i] = (uint16_t)(int64_t)v;
        break;
    case PRT_UINT32:
        ((uint32_t *)t->data)[i] = (uint32_t)(int64_t)v;
        break;
    case PRT_UINT64:
        ((uint64_t *)t->data)[i] =
            v >= 9223372036854775808.0 ? (uint64_t)v : (uint64_t)(int64_t)v;
        break;
    default:
        ((int64_t *)t->data)[i] = (int64_t)v;
        break;
    }
}

int ot_is_float(int32_t dtype)
{
    return dtype == PRT_FLOAT32 || dtype == PRT_FLOAT16 || dtype == PRT_BFLOAT16 ||
           dtype == PRT_FLOAT8E4M3FN || dtype == PRT_FLOAT8E5M2 || dtype == PRT_FLOAT64;
}

ot_tensor ot_random(int32_t dtype, prt_dims dims, tu_rng *r, int nonzero)
{
    ot_tensor t = ot_make(dtype, dims);
    for (int64_t i = 0; i < tu_volume(&dims); i++) {
        double v;
        if (ot_is_float(dtype))
            v = tu_rng_uniform(r) * 2.0 - 1.0;
        else if (dtype == PRT_BOOL)
            v = (double)tu_rng_range(r, 0, 1);
        else if (dtype == PRT_UINT8)
            v = (double)tu_rng_range(r, 0, 255);
        else if (dtype == PRT_UINT16 || dtype == PRT_UINT32 || dtype == PRT_UINT64)
            v = (double)tu_rng_range(r, 0, 40);
        else
            v = (double)tu_rng_range(r, -20, 20);
        if (nonzero && v == 0)
            v = 1;
        ot_set(&t, i, v);
    }
    return t;
}

/* ---- references -------------------------------------------------------------- */

void ot_unravel(const prt_dims *d, int64_t lin, int64_t *idx)
{
    for (int32_t i = d->nb_dims - 1; i >= 0; i--) {
        idx[i] = d->d[i] ? lin % d->d[i] : 0;
        lin = d->d[i] ? lin / d->d[i] : 0;
    }
}

int64_t ot_bcast_at(const prt_dims *in, const prt_dims *out, const int64_t *idx)
{
    int64_t lin = 0;
    int32_t shift = out->nb_dims - in->nb_dims;
    for (int32_t i = 0; i < in->nb_dims; i++)
        lin = lin * in->d[i] + (in->d[i] == 1 ? 0 : idx[i + shift]);
    return lin;
}

int ot_dims_eq(const prt_dims *a, const prt_dims *b)
{
    if (a->nb_dims != b->nb_dims)
        return 0;
    for (int32_t i = 0; i < a->nb_dims; i++)
        if (a->d[i] != b->d[i])
            return 0;
    return 1;
}

void ot_check_close(const char *what, const ot_tensor *got, const prt_dims *want_dims,
                    const double *want, double rtol)
{
    char a[128], b[128];
    tu_checks++;
    if (!ot_dims_eq(&got->dims, want_dims)) {
        base_dims_str(&got->dims, a, sizeof a);
        base_dims_str(want_dims, b, sizeof b);
        fprintf(stderr, "%s: output dims %s, wanted %s\n", what, a, b);
        tu_failures++;
        return;
    }
    for (int64_t i = 0; i < tu_volume(want_dims); i++) {
        double g = ot_get(got, i), w = want[i];
        /* Equality first: inf - inf is NaN, which no tolerance accepts. */
        int ok = g == w || (g != g && w != w) ||
                 (rtol > 0 && fabs(g - w) <= rtol * (fabs(w) > 1 ? fabs(w) : 1));
        if (!ok) {
            fprintf(stderr, "%s: element %lld is %.9g, wanted %.9g\n", what, (long long)i,
                    g, w);
            tu_failures++;
            return;
        }
    }
}

void ot_conv_ref(const ot_tensor *x, const ot_tensor *w, const ot_tensor *b,
                 int64_t group, const int64_t *st, const int64_t *dl, const int64_t *pb,
                 const int64_t *O, double *want)
{
    const int32_t ns = x->dims.nb_dims - 2;
    const int64_t N = x->dims.d[0], C = x->dims.d[1], M = w->dims.d[0];
    const int64_t Cg = C / group, Mg = M / group;
    int64_t ovol = 1, kvol = 1;
    for (int32_t i = 0; i < ns; i++) {
        ovol *= O[i];
        kvol *= w->dims.d[2 + i];
    }
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t p = 0; p < ovol; p++) {
                int64_t o[3] = {0}, rem = p, g = m / Mg;
                double s = b ? ot_get(b, m) : 0;
                for (int32_t i = ns - 1; i >= 0; i--) {
                    o[i] = rem % O[i];
                    rem /= O[i];
                }
                for (int64_t c = 0; c < Cg; c++)
                    for (int64_t kp = 0; kp < kvol; kp++) {
                        int64_t kk[3], r2 = kp, xi = n * C + g * Cg + c, wi = m * Cg + c;
                        int inside = 1;
                        for (int32_t i = ns - 1; i >= 0; i--) {
                            kk[i] = r2 % w->dims.d[2 + i];
                            r2 /= w->dims.d[2 + i];
                        }
                        for (int32_t i = 0; i < ns; i++) {
                            int64_t q = o[i] * st[i] - pb[i] + kk[i] * dl[i];
                            inside &= q >= 0 && q < x->dims.d[2 + i];
                            xi = xi * x->dims.d[2 + i] + q;
                            wi = wi * w->dims.d[2 + i] + kk[i];
                        }
                        if (inside)
                            s += ot_get(x, xi) * ot_get(w, wi);
                    }
                want[(n * M + m) * ovol + p] = s;
            }
}

/* ---- fields ------------------------------------------------------------------ */

prt_field ot_fld_i32(const char *name, const int32_t *v, int64_t n)
{
    prt_field f = {name, v, PRT_FIELD_INT32, n};
    return f;
}

prt_field ot_fld_f32(const char *name, const float *v)
{
    prt_field f = {name, v, PRT_FIELD_FLOAT32, 1};
    return f;
}

prt_field ot_fld_str(const char *name, const char *s)
{
    prt_field f = {name, s, PRT_FIELD_CHAR, (int64_t)strlen(s)};
    return f;
}

/* ---- one-op networks ---------------------------------------------------------- */

prt_status ot_make_op(const char *name, const prt_field *fields, int32_t nb_fields,
                      prt_plugin **out)
{
    const prt_plugin_creator *c;
    prt_field_collection fc = {nb_fields, fields};
    prt_status st = prt_builtin_find_creator(name, "1", &c);
    if (st)
        return st;
    return c->create(c, name, &fc, PRT_PHASE_BUILD, out);
}

static prt_status build_op(const char *name, const prt_field *fields, int32_t nb_fields,
                           const ot_tensor *in, int32_t nb_in, const uint32_t *dyn,
                           uint32_t consts, prt_engine **out)
{
    prt_plugin *p = NULL;
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    int32_t ids[OT_MAXIN], l, y, prof = -1;
    prt_status st = nb_in > OT_MAXIN ? PRT_ERR_INVALID_ARGUMENT
                                     : ot_make_op(name, fields, nb_fields, &p);
    if (!st)
        st = prt_network_create(&net);
    if (!st)
        st = prt_builder_config_create(&cfg);
    for (int32_t i = 0; !st && i < nb_in; i++) {
        char nm[16];
        prt_dims d = in[i].dims, mx = in[i].dims;
        snprintf(nm, sizeof nm, "X%d", (int)i);
        if (consts & (1u << i)) {
            st = prt_network_add_constant(net, nm, in[i].dtype, &d, in[i].data, &ids[i]);
            continue;
        }
        for (int32_t k = 0; dyn && k < d.nb_dims; k++)
            if (dyn[i] & (1u << k)) {
                d.d[k] = -1;
                mx.d[k] += 3;
            }
        st = prt_network_add_input(net, nm, in[i].dtype, &d, &ids[i]);
        if (!st && dyn && dyn[i]) {
            if (prof < 0)
                st = prt_builder_config_add_profile(cfg, &prof);
            if (!st)
                st = prt_builder_config_set_profile_dims(cfg, prof, nm, &in[i].dims,
                                                         &in[i].dims, &mx);
        }
    }
    if (!st)
        st = prt_network_add_plugin(net, ids, nb_in, NULL, 0, p, &l);
    if (!st) {
        p = NULL;
        st = prt_network_get_layer_output(net, l, 0, &y);
    }
    if (!st)
        st = prt_network_set_tensor_name(net, y, "Y");
    if (!st)
        st = prt_network_mark_output(net, y);
    if (!st)
        st = prt_engine_build(net, cfg, NULL, out);
    if (p)
        p->vt->runtime->destroy(p);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return st;
}

prt_status ot_build_op(const char *name, const prt_field *fields, int32_t nb_fields,
                       const ot_tensor *in, int32_t nb_in, const uint32_t *dyn,
                       prt_engine **out)
{
    return build_op(name, fields, nb_fields, in, nb_in, dyn, 0, out);
}

prt_status ot_build_op_const(const char *name, const prt_field *fields, int32_t nb_fields,
                             const ot_tensor *in, int32_t nb_in, uint32_t consts,
                             prt_engine **out)
{
    return build_op(name, fields, nb_fields, in, nb_in, NULL, consts, out);
}

prt_status ot_run_engine(const prt_engine *e, const ot_tensor *in, int32_t nb_in,
                         ot_tensor *out)
{
    return ot_run_engine_const(e, in, nb_in, 0, 0, out);
}

prt_status ot_run_engine_threads(const prt_engine *e, const ot_tensor *in, int32_t nb_in,
                                 int32_t threads, ot_tensor *out)
{
    return ot_run_engine_const(e, in, nb_in, 0, threads, out);
}

prt_status ot_run_engine_const(const prt_engine *e, const ot_tensor *in, int32_t nb_in,
                               uint32_t consts, int32_t threads, ot_tensor *out)
{
    prt_context *ctx = NULL;
    prt_io_info io = {.struct_size = sizeof(prt_io_info)};
    prt_context_options opt = {.struct_size = sizeof opt, .threads = threads};
    prt_dims yd;
    int32_t yi;
    prt_status st = prt_context_create_with_options(e, &opt, &ctx);
    out->data = NULL;
    for (int32_t i = 0, io_index = 0; !st && i < nb_in; i++) {
        char nm[16];
        if (consts & (1u << i))
            continue;
        snprintf(nm, sizeof nm, "X%d", (int)i);
        st = prt_engine_get_io(e, io_index++, &io);
        for (int32_t k = 0; !st && k < io.dims.nb_dims; k++)
            if (io.dims.d[k] < 0) {
                st = prt_context_set_input_shape(ctx, nm, &in[i].dims);
                break;
            }
        if (!st)
            st = prt_context_set_tensor_address(ctx, nm, in[i].data);
    }
    if (!st)
        st = prt_engine_find_io(e, "Y", &yi);
    if (!st)
        st = prt_engine_get_io(e, yi, &io);
    if (!st)
        st = prt_context_get_tensor_shape(ctx, "Y", &yd);
    if (!st) {
        *out = ot_make(io.dtype, yd);
        st = out->data ? prt_context_set_tensor_address(ctx, "Y", out->data)
                       : PRT_ERR_OUT_OF_MEMORY;
    }
    if (!st)
        st = prt_context_enqueue(ctx, NULL);
    if (st)
        ot_free(out);
    prt_context_destroy(ctx);
    return st;
}

prt_status ot_reload(const prt_engine *e, prt_engine **out)
{
    prt_registry *reg = NULL;
    void *bytes = NULL;
    size_t size = 0;
    prt_status st = prt_engine_serialize(e, &bytes, &size);
    if (!st)
        st = prt_registry_create(&reg);
    if (!st)
        st = prt_engine_deserialize(reg, bytes, size, out);
    prt_free(bytes);
    prt_registry_destroy(reg);
    return st;
}

prt_status ot_run_op_dyn(const char *name, const prt_field *fields, int32_t nb_fields,
                         const ot_tensor *in, int32_t nb_in, const uint32_t *dyn,
                         ot_tensor *out)
{
    prt_engine *e = NULL, *e2 = NULL;
    ot_tensor again = {0};
    prt_status st = ot_build_op(name, fields, nb_fields, in, nb_in, dyn, &e);
    out->data = NULL;
    if (!st)
        st = ot_run_engine(e, in, nb_in, out);
    if (!st)
        st = ot_reload(e, &e2);
    if (!st)
        st = ot_run_engine(e2, in, nb_in, &again);
    if (!st) {
        tu_checks++;
        if (!ot_dims_eq(&again.dims, &out->dims) ||
            memcmp(again.data, out->data,
                   (size_t)tu_volume(&out->dims) * prt_dtype_size(out->dtype)) != 0) {
            fprintf(stderr, "%s: the loaded engine gives other results\n", name);
            tu_failures++;
        }
    }
    if (st)
        ot_free(out);
    ot_free(&again);
    prt_engine_destroy(e2);
    prt_engine_destroy(e);
    return st;
}

prt_status ot_run_op(const char *name, const prt_field *fields, int32_t nb_fields,
                     const ot_tensor *in, int32_t nb_in, ot_tensor *out)
{
    return ot_run_op_dyn(name, fields, nb_fields, in, nb_in, NULL, out);
}

int64_t ot_alloc_failures(const char *name, const prt_field *fields, int32_t nb_fields,
                          const ot_tensor *in, int32_t nb_in)
{
    int64_t n;
    for (n = 0; n < OT_MAX_ALLOCS; n++) {
        ot_tensor y = {0};
        prt_status st;
        base_fail_alloc_after(n);
        st = ot_run_op(name, fields, nb_fields, in, nb_in, &y);
        base_fail_alloc_after(-1);
        ot_free(&y);
        if (st == PRT_OK)
            break;
        if (!prt_last_error()[0]) {
            fprintf(stderr, "%s, allocation %lld failing:\n", name, (long long)n);
            tu_fail(__FILE__, __LINE__, "an allocation failure left no message");
            break;
        }
    }
    return n;
}

int32_t ot_net_layer(ot_net *g, const char *op, const prt_field *f, int32_t nf,
                     const int32_t *in, int32_t nin, const int32_t *sin, int32_t nsin)
{
    prt_plugin *p = NULL;
    int32_t l = -1, t = -1;
    if (g->st)
        return -1;
    g->st = ot_make_op(op, f, nf, &p);
    if (!g->st) {
        g->st = prt_network_add_plugin(g->n, in, nin, sin, nsin, p, &l);
        if (g->st)
            p->vt->runtime->destroy(p);
    }
    if (!g->st)
        g->st = prt_network_get_layer_output(g->n, l, 0, &t);
    return t;
}

int32_t ot_net_const(ot_net *g, int32_t dtype, int32_t rank, int64_t n, const void *v)
{
    static int counter;
    char name[32];
    prt_dims d = {rank, {n}};
    int32_t t = -1;
    snprintf(name, sizeof name, "c%d", counter++);
    if (!g->st)
        g->st = prt_network_add_constant(g->n, name, dtype, &d, v, &t);
    return t;
}

void ot_net_output(ot_net *g, int32_t t, const char *name)
{
    if (!g->st)
        g->st = prt_network_set_tensor_name(g->n, t, name);
    if (!g->st)
        g->st = prt_network_mark_output(g->n, t);
}
