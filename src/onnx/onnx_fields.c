/* Node attributes: a node's attribute by name, a STRING attribute as a C
 * string, and all of a node's attributes as plugin fields. The creator's
 * field schema decides each field's type, as TensorRT's ONNX parser does
 * for plugin nodes: ONNX has only int64, float32, strings and tensors, while
 * a plugin may want int8 or float16. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

const Onnx__AttributeProto *onnx_node_attr(const Onnx__NodeProto *node, const char *name)
{
    for (size_t i = 0; i < node->n_attribute; i++)
        if (strcmp(onnx_str(node->attribute[i]->name), name) == 0)
            return node->attribute[i];
    return NULL;
}

prt_status onnx_take_dtype_attr(const Onnx__NodeProto *node, const char *label,
                                const char *name, Onnx__AttributeProto **attrs,
                                size_t cap, Onnx__NodeProto *out, int32_t *dtype,
                                int *found)
{
    const Onnx__AttributeProto *a = onnx_node_attr(node, name);
    size_t k = 0;
    *out = *node;
    *found = a != NULL;
    if (!a)
        return PRT_OK;
    if (node->n_attribute > cap)
        return onnx_error(PRT_ERR_INVALID_ARGUMENT, "%s: %s has %zu attributes", label,
                          onnx_str(node->op_type), node->n_attribute);
    if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
        return onnx_error(PRT_ERR_MALFORMED, "%s: attribute '%s' must be an INT", label,
                          name);
    {
        char what[600];
        snprintf(what, sizeof what, "%s: attribute '%s'", label, name);
        if (onnx_dtype_from_onnx((int32_t)a->i, what, dtype))
            return PRT_ERR_UNSUPPORTED;
    }
    for (size_t i = 0; i < node->n_attribute; i++)
        if (node->attribute[i] != a)
            attrs[k++] = node->attribute[i];
    out->attribute = attrs;
    out->n_attribute = k;
    return PRT_OK;
}

int onnx_attr_string(const Onnx__AttributeProto *a, char *buf, size_t cap)
{
    size_t n;
    if (a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING)
        return -1;
    n = a->s.len < cap - 1 ? a->s.len : cap - 1;
    if (n)
        memcpy(buf, a->s.data, n);
    buf[n] = '\0';
    return memchr(buf, '\0', n) ? -1 : 0;
}
/* ---- field and attribute types --------------------------------------------- */

static int is_int_field(int32_t t)
{
    return t == PRT_FIELD_INT8 || t == PRT_FIELD_INT16 || t == PRT_FIELD_INT32 ||
           t == PRT_FIELD_INT64;
}

static int is_float_field(int32_t t)
{
    return t == PRT_FIELD_FLOAT16 || t == PRT_FIELD_FLOAT32 || t == PRT_FIELD_FLOAT64 ||
           t == PRT_FIELD_BFLOAT16;
}

/* The same as base_field_type_name in libplugrt, which the importer
 * cannot call (it is built against the public API alone). */
static const char *field_type_name(int32_t t)
{
    static const char *const names[PRT_FIELD_TYPE_COUNT] = {
        "int8",    "int16",    "int32", "int64", "float16", "float32",
        "float64", "bfloat16", "char",  "dims",  "bytes"};
    if (t < 0 || t >= PRT_FIELD_TYPE_COUNT)
        return "invalid";
    return names[t];
}

static const char *attr_type_name(int32_t t)
{
    switch (t) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
        return "FLOAT";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
        return "INT";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
        return "STRING";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR:
        return "TENSOR";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH:
        return "GRAPH";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR:
        return "SPARSE_TENSOR";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO:
        return "TYPE_PROTO";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
        return "FLOATS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
        return "INTS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS:
        return "STRINGS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS:
        return "TENSORS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS:
        return "GRAPHS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS:
        return "SPARSE_TENSORS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS:
        return "TYPE_PROTOS";
    default:
        return "UNDEFINED";
    }
}

/* ---- one attribute ----------------------------------------------------------- */

/* The strings of a STRING or STRINGS attribute. */
typedef struct attr_src {
    size_t nb_strings;
    const ProtobufCBinaryData *strings;
} attr_src;

typedef struct field_ctx {
    const char *label; /* the node */
    const char *attr;  /* the attribute */
    const prt_field_schema *schema;
    const char *atype; /* ONNX type name of the attribute */
} field_ctx;

static prt_status type_mismatch(const field_ctx *c)
{
    return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                      "%s: attribute '%s' is %s, which cannot fill plugin field "
                      "'%s' of type %s",
                      c->label, c->attr, c->atype, c->schema->name,
                      field_type_name(c->schema->type));
}

/* int64 values into an integer, float or dims field; range-checked. */
static prt_status ints_to_field(const field_ctx *c, const int64_t *v, size_t n,
                                void **out, int64_t *out_len)
{
    int32_t t = c->schema->type;
    void *d;
    if (t == PRT_FIELD_DIMS) {
        prt_dims *dims;
        if (n > PRT_MAX_DIMS)
            return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                              "%s: attribute '%s' has %zu values; a dims field holds "
                              "at most %d",
                              c->label, c->attr, n, PRT_MAX_DIMS);
        dims = onnx_calloc(1, sizeof *dims);
        if (!dims)
            return onnx_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory", c->label);
        dims->nb_dims = (int32_t)n;
        for (size_t i = 0; i < n; i++)
            dims->d[i] = v[i];
        *out = dims;
        *out_len = 1;
        return PRT_OK;
    }
    if (!is_int_field(t) && !is_float_field(t))
        return type_mismatch(c);
    d = prt_malloc(n * 8);
    if (!d)
        return onnx_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory", c->label);
    for (size_t i = 0; i < n; i++) {
        int64_t x = v[i], lo = INT64_MIN, hi = INT64_MAX;
        switch (t) {
        case PRT_FIELD_INT8:
            lo = INT8_MIN;
            hi = INT8_MAX;
            break;
        case PRT_FIELD_INT16:
            lo = INT16_MIN;
            hi = INT16_MAX;
            break;
        case PRT_FIELD_INT32:
            lo = INT32_MIN;
            hi = INT32_MAX;
            break;
        default:
            break;
        }
        if (x < lo || x > hi) {
            prt_free(d);
            return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                              "%s: attribute '%s' value %lld does not fit plugin "
                              "field '%s' of type %s (%lld to %lld)",
                              c->label, c->attr, (long long)x, c->schema->name,
                              field_type_name(t), (long long)lo, (long long)hi);
        }
        switch (t) {
        case PRT_FIELD_INT8:
            ((int8_t *)d)[i] = (int8_t)x;
            break;
        case PRT_FIELD_INT16:
            ((int16_t *)d)[i] = (int16_t)x;
            break;
        case PRT_FIELD_INT32:
            ((int32_t *)d)[i] = (int32_t)x;
            break;
        case PRT_FIELD_INT64:
            ((int64_t *)d)[i] = x;
            break;
        case PRT_FIELD_FLOAT16:
            ((uint16_t *)d)[i] = prt_float_to_half((float)x);
            break;
        case PRT_FIELD_BFLOAT16:
            ((uint16_t *)d)[i] = prt_float_to_bf16((float)x);
            break;
        case PRT_FIELD_FLOAT32:
            ((float *)d)[i] = (float)x;
            break;
        default:
            ((double *)d)[i] = (double)x;
            break;
        }
    }
    *out = d;
    *out_len = (int64_t)n;
    return PRT_OK;
}

/* float values into a float field. */
static prt_status floats_to_field(const field_ctx *c, const float *v, size_t n,
                                  void **out, int64_t *out_len)
{
    int32_t t = c->schema->type;
    void *d;
    if (!is_float_field(t))
        return type_mismatch(c);
    d = prt_malloc(n * 8);
    if (!d)
        return onnx_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory", c->label);
    for (size_t i = 0; i < n; i++) {
        switch (t) {
        case PRT_FIELD_FLOAT16:
            ((uint16_t *)d)[i] = prt_float_to_half(v[i]);
            break;
        case PRT_FIELD_BFLOAT16:
            ((uint16_t *)d)[i] = prt_float_to_bf16(v[i]);
            break;
        case PRT_FIELD_FLOAT32:
            ((float *)d)[i] = v[i];
            break;
        default:
            ((double *)d)[i] = (double)v[i];
            break;
        }
    }
    *out = d;
    *out_len = (int64_t)n;
    return PRT_OK;
}

/* Strings into a char or bytes field. A char field gets each string followed
 * by a NUL (so one STRING gives a C string whose NUL the length counts); a
 * bytes field gets the bytes as they are. */
static prt_status strings_to_field(const field_ctx *c, const attr_src *s, void **out,
                                   int64_t *out_len)
{
    int32_t t = c->schema->type;
    int nul = t == PRT_FIELD_CHAR;
    size_t total = 0, pos = 0;
    uint8_t *d;
    if (t != PRT_FIELD_CHAR && t != PRT_FIELD_BYTES)
        return type_mismatch(c);
    for (size_t i = 0; i < s->nb_strings; i++)
        total += s->strings[i].len + (size_t)nul;
    d = prt_malloc(total);
    if (!d)
        return onnx_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory", c->label);
    for (size_t i = 0; i < s->nb_strings; i++) {
        if (s->strings[i].len)
            memcpy(d + pos, s->strings[i].data, s->strings[i].len);
        pos += s->strings[i].len;
        if (nul)
            d[pos++] = 0;
    }
    *out = d;
    *out_len = (int64_t)total;
    return PRT_OK;
}

/* A TENSOR attribute: its elements, flattened, into the field's type. */
static prt_status tensor_to_field(const field_ctx *c, const Onnx__TensorProto *tp,
                                  const char *base_dir, void **out, int64_t *out_len)
{
    onnx_tensor t;
    char what[512];
    size_t n;
    prt_status st;
    int32_t ft = c->schema->type;
    snprintf(what, sizeof what, "%s: attribute '%s'", c->label, c->attr);
    st = onnx_tensor_load(tp, base_dir, what, &t);
    if (st)
        return st;
    n = t.bytes / prt_dtype_size(t.dtype);
    if (ft == PRT_FIELD_BYTES) {
        *out = t.data; /* the tensor's bytes, as they are */
        *out_len = (int64_t)t.bytes;
        return PRT_OK;
    }
    if (is_int_field(ft) || ft == PRT_FIELD_DIMS ||
        (is_float_field(ft) && !onnx_dtype_is_float(t.dtype))) {
        int64_t *v;
        if (onnx_dtype_is_float(t.dtype)) {
            onnx_tensor_free(&t);
            return type_mismatch(c);
        }
        v = prt_malloc(n * sizeof *v);
        if (!v) {
            onnx_tensor_free(&t);
            return onnx_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory", c->label);
        }
        for (size_t i = 0; i < n; i++)
            v[i] = onnx_tensor_int(&t, i);
        onnx_tensor_free(&t);
        st = ints_to_field(c, v, n, out, out_len);
        prt_free(v);
        return st;
    }
    if (is_float_field(ft)) {
        float *v = prt_malloc(n * sizeof *v);
        if (!v) {
            onnx_tensor_free(&t);
            return onnx_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory", c->label);
        }
        for (size_t i = 0; i < n; i++)
            v[i] = onnx_tensor_float(&t, i);
        onnx_tensor_free(&t);
        st = floats_to_field(c, v, n, out, out_len);
        prt_free(v);
        return st;
    }
    onnx_tensor_free(&t);
    return type_mismatch(c);
}

static prt_status attr_to_field(const Onnx__AttributeProto *a, const char *label,
                                const prt_field_schema *schema, const char *base_dir,
                                void **out, int64_t *out_len)
{
    field_ctx c;
    attr_src s;
    prt_status st;
    ProtobufCBinaryData one;
    c.label = label;
    c.attr = onnx_str(a->name);
    c.schema = schema;
    c.atype = attr_type_name(a->type);
    memset(&s, 0, sizeof s);
    switch (a->type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
        st = ints_to_field(&c, &a->i, 1, out, out_len);
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
        st = ints_to_field(&c, a->ints, a->n_ints, out, out_len);
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
        st = floats_to_field(&c, &a->f, 1, out, out_len);
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
        st = floats_to_field(&c, a->floats, a->n_floats, out, out_len);
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
        one = a->s;
        s.nb_strings = 1;
        s.strings = &one;
        st = strings_to_field(&c, &s, out, out_len);
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS:
        s.nb_strings = a->n_strings;
        s.strings = a->strings;
        st = strings_to_field(&c, &s, out, out_len);
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR:
        if (!a->t)
            return onnx_error(PRT_ERR_MALFORMED,
                              "%s: TENSOR attribute '%s' has no tensor", label, c.attr);
        st = tensor_to_field(&c, a->t, base_dir, out, out_len);
        break;
    default:
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "%s: attribute '%s' is %s, which plugin fields cannot "
                          "carry",
                          label, c.attr, c.atype);
    }
    if (st)
        return st;
    if (schema->length >= 0 && schema->type != PRT_FIELD_CHAR &&
        schema->type != PRT_FIELD_BYTES && *out_len != schema->length) {
        prt_free(*out);
        *out = NULL;
        return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                          "%s: attribute '%s' has %lld value%s; plugin field '%s' "
                          "takes exactly %lld",
                          label, c.attr, (long long)*out_len, *out_len == 1 ? "" : "s",
                          schema->name, (long long)schema->length);
    }
    return PRT_OK;
}

/* ---- a node's attributes -------------------------------------------------------- */

void onnx_fields_free(onnx_fields *f)
{
    if (!f)
        return;
    for (int32_t i = 0; i < f->nb_fields; i++)
        prt_free(f->blocks[i]);
    prt_free(f->blocks);
    prt_free(f->fields);
    memset(f, 0, sizeof *f);
}

static const prt_field_schema *schema_find(const prt_plugin_creator *c, const char *name)
{
    if (!c->fields)
        return NULL;
    for (int32_t i = 0; i < c->nb_fields; i++)
        if (c->fields[i].name && strcmp(c->fields[i].name, name) == 0)
            return &c->fields[i];
    return NULL;
}

prt_status onnx_fields_from_node(const Onnx__NodeProto *node, const char *label,
                                 const prt_plugin_creator *creator, const char *base_dir,
                                 onnx_fields *out)
{
    onnx_fields f;
    size_t n = node->n_attribute;
    memset(&f, 0, sizeof f);
    f.fields = onnx_calloc(n, sizeof *f.fields);
    f.blocks = onnx_calloc(n, sizeof *f.blocks);
    if (!f.fields || !f.blocks) {
        onnx_fields_free(&f);
        return onnx_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory", label);
    }
    for (size_t i = 0; i < n; i++) {
        const Onnx__AttributeProto *a = node->attribute[i];
        const char *name = onnx_str(a->name);
        const prt_field_schema *schema;
        void *data = NULL;
        int64_t len = 0;
        prt_status st;
        if (!name[0]) {
            onnx_fields_free(&f);
            return onnx_error(PRT_ERR_MALFORMED, "%s: attribute %zu has no name", label,
                              i);
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(onnx_str(node->attribute[j]->name), name) == 0) {
                onnx_fields_free(&f);
                return onnx_error(PRT_ERR_MALFORMED, "%s: attribute '%s' appears twice",
                                  label, name);
            }
        if (!a->has_type || a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED) {
            onnx_fields_free(&f);
            return onnx_error(PRT_ERR_MALFORMED, "%s: attribute '%s' has no type", label,
                              name);
        }
        if (a->ref_attr_name && a->ref_attr_name[0]) {
            onnx_fields_free(&f);
            return onnx_error(PRT_ERR_MALFORMED,
                              "%s: attribute '%s' refers to a function attribute, "
                              "which is only valid inside a function",
                              label, name);
        }
        /* The plugin's key, not its parameters. */
        if (strcmp(name, "plugin_namespace") == 0 || strcmp(name, "plugin_version") == 0)
            continue;
        schema = schema_find(creator, name);
        if (!schema) {
            onnx_warn("%s: attribute '%s' is not a field of plugin '%s%s%s' version "
                      "'%s'; it is ignored",
                      label, name, creator->plugin_namespace,
                      creator->plugin_namespace[0] ? "::" : "", creator->name,
                      creator->version);
            continue;
        }
        st = attr_to_field(a, label, schema, base_dir, &data, &len);
        if (st) {
            onnx_fields_free(&f);
            return st;
        }
        f.blocks[f.nb_fields] = data;
        f.fields[f.nb_fields].name = schema->name;
        f.fields[f.nb_fields].data = data;
        f.fields[f.nb_fields].type = schema->type;
        f.fields[f.nb_fields].length = len;
        f.nb_fields++;
    }
    *out = f;
    return PRT_OK;
}
