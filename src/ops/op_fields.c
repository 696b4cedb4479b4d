/* Reading a creator's field collection: lookup, integer arrays, strings,
 * the unknown-field check, and the messages that name the field. See
 * op_common.h. */
#include "ops/op_common.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

prt_status op_vfail(const char *op, const char *layer, prt_status status, const char *fmt,
                    va_list ap)
{
    char msg[768];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (layer && layer[0])
        return base_error(status, "%s (layer '%s'): %s", op, layer, msg);
    return base_error(status, "%s: %s", op, msg);
}

prt_status op_fields_fail(const op_fields *f, prt_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    status = op_vfail(f->op, f->layer, status, fmt, ap);
    va_end(ap);
    return status;
}

/* ------------------------------------------------------------------------ */
/* Fields                                                                    */
/* ------------------------------------------------------------------------ */

prt_status op_field_find(const op_fields *f, const char *name, const prt_field **out)
{
    const prt_field *found = NULL;
    *out = NULL;
    if (!f->fc)
        return PRT_OK;
    for (int32_t i = 0; i < f->fc->nb_fields; i++) {
        const prt_field *fi = &f->fc->fields[i];
        if (!fi->name || strcmp(fi->name, name) != 0)
            continue;
        if (found)
            return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                                  "field '%s' is given more than once", name);
        found = fi;
    }
    if (found && found->length < 0)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field '%s' has a negative length (%lld)", name,
                              (long long)found->length);
    if (found && found->length > 0 && !found->data)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field '%s' has %lld elements but no data", name,
                              (long long)found->length);
    *out = found;
    return PRT_OK;
}

int op_field_number_at(const prt_field *fl, int64_t k, int64_t *i, double *d)
{
    const void *p = fl->data;
    *i = 0;
    *d = 0.0;
    switch (fl->type) {
    case PRT_FIELD_INT8:
        *i = ((const int8_t *)p)[k];
        return 1;
    case PRT_FIELD_INT16:
        *i = ((const int16_t *)p)[k];
        return 1;
    case PRT_FIELD_INT32:
        *i = ((const int32_t *)p)[k];
        return 1;
    case PRT_FIELD_INT64:
        *i = ((const int64_t *)p)[k];
        return 1;
    case PRT_FIELD_FLOAT32:
        *d = ((const float *)p)[k];
        return 2;
    case PRT_FIELD_FLOAT64:
        *d = ((const double *)p)[k];
        return 2;
    case PRT_FIELD_FLOAT16:
        *d = prt_half_to_float(((const uint16_t *)p)[k]);
        return 2;
    case PRT_FIELD_BFLOAT16:
        *d = prt_bf16_to_float(((const uint16_t *)p)[k]);
        return 2;
    default:
        return 0;
    }
}

static int field_is_int(const prt_field *fl)
{
    return fl->type == PRT_FIELD_INT8 || fl->type == PRT_FIELD_INT16 ||
           fl->type == PRT_FIELD_INT32 || fl->type == PRT_FIELD_INT64;
}

prt_status op_field_i32_array(const op_fields *f, const char *name, int32_t *dst,
                              int32_t cap, int32_t *out_len)
{
    const prt_field *fl;
    prt_status st = op_field_find(f, name, &fl);
    *out_len = -1;
    if (st || !fl)
        return st;
    if (!field_is_int(fl))
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field '%s' has type %s, expected int32 (or int64)", name,
                              base_field_type_name(fl->type));
    if (fl->length > cap)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field '%s' has %lld values; at most %d are allowed", name,
                              (long long)fl->length, (int)cap);
    for (int64_t k = 0; k < fl->length; k++) {
        int64_t v;
        double unused;
        op_field_number_at(fl, k, &v, &unused);
        if (v < INT32_MIN || v > INT32_MAX)
            return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                                  "field '%s' value %lld (index %lld) does not fit "
                                  "in int32",
                                  name, (long long)v, (long long)k);
        dst[k] = (int32_t)v;
    }
    *out_len = (int32_t)fl->length;
    return PRT_OK;
}

prt_status op_field_f32_array(const op_fields *f, const char *name, float *dst,
                              int32_t cap, int32_t *out_len)
{
    const prt_field *fl;
    prt_status st = op_field_find(f, name, &fl);
    *out_len = -1;
    if (st || !fl)
        return st;
    if (fl->length > cap)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field '%s' has %lld values; at most %d are allowed", name,
                              (long long)fl->length, (int)cap);
    for (int64_t k = 0; k < fl->length; k++) {
        int64_t iv;
        double dv;
        int kind = op_field_number_at(fl, k, &iv, &dv);
        if (kind == 0)
            return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                                  "field '%s' must be numbers", name);
        dst[k] = kind == 1 ? (float)iv : (float)dv;
    }
    *out_len = (int32_t)fl->length;
    return PRT_OK;
}

prt_status op_field_i32(const op_fields *f, const char *name, int32_t dflt, int32_t *out)
{
    int32_t v[1], len;
    const prt_field *fl;
    prt_status st = op_field_find(f, name, &fl);
    if (st)
        return st;
    if (fl && field_is_int(fl) && fl->length != 1)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field '%s' must hold one value, it holds %lld", name,
                              (long long)fl->length);
    st = op_field_i32_array(f, name, v, 1, &len);
    if (st)
        return st;
    *out = len < 0 ? dflt : v[0];
    return PRT_OK;
}

prt_status op_field_f32(const op_fields *f, const char *name, float dflt, float *out)
{
    const prt_field *fl;
    prt_status st = op_field_find(f, name, &fl);
    if (st)
        return st;
    *out = dflt;
    if (!fl)
        return PRT_OK;
    if (fl->type != PRT_FIELD_FLOAT32 && fl->type != PRT_FIELD_FLOAT64 &&
        fl->type != PRT_FIELD_FLOAT16 && fl->type != PRT_FIELD_BFLOAT16)
        return op_fields_fail(
            f, PRT_ERR_INVALID_ARGUMENT,
            "field '%s' has type %s, expected float32 (or another float)", name,
            base_field_type_name(fl->type));
    if (fl->length != 1)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field '%s' must hold one value, it holds %lld", name,
                              (long long)fl->length);
    {
        /* Out of float's range, a C conversion is undefined: saturate to
         * the infinity IEEE rounding gives (near enough at the edge). */
        int64_t unused;
        double d;
        op_field_number_at(fl, 0, &unused, &d);
        *out = d > FLT_MAX ? INFINITY : d < -FLT_MAX ? -INFINITY : (float)d;
    }
    return PRT_OK;
}

prt_status op_field_str(const op_fields *f, const char *name, char *dst, size_t cap,
                        int32_t *out_len)
{
    const prt_field *fl;
    const char *s;
    int64_t n;
    prt_status st = op_field_find(f, name, &fl);
    *out_len = -1;
    dst[0] = '\0';
    if (st || !fl)
        return st;
    if (fl->type != PRT_FIELD_CHAR)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field '%s' has type %s, expected char", name,
                              base_field_type_name(fl->type));
    s = fl->data;
    n = fl->length;
    while (n > 0 && s[n - 1] == '\0')
        n--;
    if ((uint64_t)n >= cap)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field '%s' is %lld bytes long; at most %zu are "
                              "allowed",
                              name, (long long)n, cap - 1);
    if (n > 0 && memchr(s, '\0', (size_t)n))
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field '%s' holds a NUL byte inside the string", name);
    if (n > 0)
        memcpy(dst, s, (size_t)n);
    dst[n] = '\0';
    *out_len = (int32_t)n;
    return PRT_OK;
}

void op_ser(prt_field *f, const char *name, int32_t type, const void *data,
            int64_t length)
{
    f->name = name;
    f->type = type;
    f->data = length > 0 ? data : NULL;
    f->length = length;
}

/* The collection is well formed and names only fields of the schema. */
prt_status op_fields_validate(const op_fields *f, const prt_plugin_creator *c)
{
    if (!f->fc)
        return PRT_OK;
    if (f->fc->nb_fields < 0 || (f->fc->nb_fields > 0 && !f->fc->fields))
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "malformed field collection (%d fields, array %s)",
                              (int)f->fc->nb_fields,
                              f->fc->fields ? "present" : "missing");
    for (int32_t i = 0; i < f->fc->nb_fields; i++) {
        const char *name = f->fc->fields[i].name;
        int32_t known = 0;
        char list[256];
        size_t n = 0;
        if (!name)
            return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT, "field %d has no name",
                                  (int)i);
        for (int32_t k = 0; k < c->nb_fields; k++)
            known |= strcmp(c->fields[k].name, name) == 0;
        if (known)
            continue;
        list[0] = '\0';
        for (int32_t k = 0; k < c->nb_fields && n < sizeof list; k++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", k ? ", " : "",
                                  c->fields[k].name);
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT, "unknown field '%s' (%s%s)",
                              name, c->nb_fields ? "accepted: " : "it takes no fields",
                              list);
    }
    return PRT_OK;
}
