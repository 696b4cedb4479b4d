/* ONNX TensorProto -> dtype, dims and dense data in plugrt's layout, from
 * typed fields, raw_data or an external data file; and the reader of
 * serialized TensorProto files (prt_onnx_read_tensor_file). */
/* realpath is XSI; the build's _POSIX_C_SOURCE alone leaves it out. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onnx_internal.h"

/* raw_data and external data are little-endian byte images that are copied
 * as they are. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the ONNX importer copies little-endian tensor bytes as they are"
#endif

const char *onnx_elem_type_name(int32_t t)
{
    /* TensorProto.DataType, in the order onnx.proto numbers them. */
    static const char *const names[] = {
        "UNDEFINED",      "FLOAT",    "UINT8",        "INT8",           "UINT16",
        "INT16",          "INT32",    "INT64",        "STRING",         "BOOL",
        "FLOAT16",        "DOUBLE",   "UINT32",       "UINT64",         "COMPLEX64",
        "COMPLEX128",     "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
        "FLOAT8E5M2FNUZ", "UINT4",    "INT4",         "FLOAT4E2M1"};
    if (t < 0 || t >= (int32_t)(sizeof names / sizeof names[0]))
        return "unknown";
    return names[t];
}

prt_status onnx_dtype_from_onnx(int32_t t, const char *what, int32_t *out)
{
    switch (t) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
        *out = PRT_FLOAT32;
        return PRT_OK;
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16:
        *out = PRT_FLOAT16;
        return PRT_OK;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16:
        *out = PRT_BFLOAT16;
        return PRT_OK;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT8:
        *out = PRT_INT8;
        return PRT_OK;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8:
        *out = PRT_UINT8;
        return PRT_OK;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32:
        *out = PRT_INT32;
        return PRT_OK;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
        *out = PRT_INT64;
        return PRT_OK;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL:
        *out = PRT_BOOL;
        return PRT_OK;
    case 17: /* FLOAT8E4M3FN and FLOAT8E5M2 (opset 19): numbers, as the
              * onnx.proto that generated the enum may predate them */
        *out = PRT_FLOAT8E4M3FN;
        return PRT_OK;
    case 19:
        *out = PRT_FLOAT8E5M2;
        return PRT_OK;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE:
        *out = PRT_FLOAT64;
        return PRT_OK;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT16:
        *out = PRT_INT16;
        return PRT_OK;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16:
        *out = PRT_UINT16;
        return PRT_OK;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32:
        *out = PRT_UINT32;
        return PRT_OK;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64:
        *out = PRT_UINT64;
        return PRT_OK;
    default:
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "%s: ONNX element type %s (%d) is not supported "
                          "(plugrt has float32, float16, bfloat16, float64, int8, "
                          "uint8, int16, uint16, int32, uint32, int64, uint64, bool, "
                          "float8e4m3fn, float8e5m2)",
                          what, onnx_elem_type_name(t), (int)t);
    }
}

void onnx_tensor_free(onnx_tensor *t)
{
    if (!t)
        return;
    prt_free(t->data);
    t->data = NULL;
}

/* ---- elements ----------------------------------------------------------------- */

int onnx_dtype_is_float(int32_t dtype)
{
    return dtype == PRT_FLOAT32 || dtype == PRT_FLOAT16 || dtype == PRT_BFLOAT16;
}

int64_t onnx_tensor_int(const onnx_tensor *t, size_t k)
{
    switch (t->dtype) {
    case PRT_INT8:
        return ((const int8_t *)t->data)[k];
    case PRT_UINT8:
    case PRT_BOOL:
        return ((const uint8_t *)t->data)[k];
    case PRT_INT16:
        return ((const int16_t *)t->data)[k];
    case PRT_UINT16:
        return ((const uint16_t *)t->data)[k];
    case PRT_INT32:
        return ((const int32_t *)t->data)[k];
    case PRT_UINT32:
        return ((const uint32_t *)t->data)[k];
    default: /* int64, and uint64's bits */
        return ((const int64_t *)t->data)[k];
    }
}

float onnx_tensor_float(const onnx_tensor *t, size_t k)
{
    switch (t->dtype) {
    case PRT_FLOAT16:
        return prt_half_to_float(((const uint16_t *)t->data)[k]);
    case PRT_BFLOAT16:
        return prt_bf16_to_float(((const uint16_t *)t->data)[k]);
    case PRT_FLOAT64:
        return (float)((const double *)t->data)[k];
    default:
        return ((const float *)t->data)[k];
    }
}

prt_status onnx_tensor_from_attr(const Onnx__AttributeProto *a, const char *what,
                                 onnx_tensor *out)
{
    int floats = a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT ||
                 a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    int scalar = a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT ||
                 a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    size_t n = scalar ? 1 : floats ? a->n_floats : a->n_ints;
    const void *src = floats ? (scalar ? (const void *)&a->f : (const void *)a->floats)
                             : (scalar ? (const void *)&a->i : (const void *)a->ints);
    memset(out, 0, sizeof *out);
    out->dtype = floats ? PRT_FLOAT32 : PRT_INT64;
    out->dims.nb_dims = scalar ? 0 : 1;
    out->dims.d[0] = (int64_t)n;
    out->bytes = n * (floats ? sizeof(float) : sizeof(int64_t));
    out->data = prt_malloc(out->bytes);
    if (!out->data)
        return onnx_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory", what);
    if (n)
        memcpy(out->data, src, out->bytes);
    return PRT_OK;
}

/* ---- external data --------------------------------------------------------- */

/* A decimal uint64 with nothing else around it. */
static int parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!s || !*s)
        return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
            return 0;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 1;
}

/* A location must stay below base_dir: relative, with no ".." component.
 * Backslashes count as separators too, so a model written on Windows cannot
 * smuggle a "..\\" past the check. */
static int location_is_safe(const char *loc)
{
    const char *p = loc;
    if (!*loc || loc[0] == '/' || loc[0] == '\\')
        return 0;
    while (*p) {
        size_t n = strcspn(p, "/\\");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return 0;
        p += n;
        if (*p)
            p++;
    }
    return 1;
}

/* Whether real path `p` is `dir` or lies below it (both resolved). */
static int path_is_inside(const char *p, const char *dir)
{
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/')
        return 1;
    return strncmp(p, dir, n) == 0 && (p[n] == '/' || p[n] == '\0');
}

/* Finds `location` under base_dir and opens it. As in ONNX Runtime, the
 * file must resolve inside base_dir's real path (a symlink may point
 * elsewhere in the folder, never out of it) and must be a regular file:
 * a model is untrusted, and a symlink to /etc/passwd or a FIFO is a file
 * that looks like weights. The resolved path is what is opened, without
 * following a final symlink, so a link swapped in between fails. */
static prt_status open_external(const char *base_dir, const char *location,
                                const char *what, int *out_fd, uint64_t *out_size)
{
    char dir_real[PATH_MAX], file_real[PATH_MAX], *path;
    size_t n = strlen(base_dir) + strlen(location) + 2;
    const char *why;
    prt_status st = PRT_OK;
    if (!realpath(base_dir, dir_real))
        return onnx_error(PRT_ERR_IO,
                          "%s: external data '%s': cannot resolve the model's folder "
                          "'%s': %s",
                          what, location, base_dir, strerror(errno));
    path = prt_malloc(n);
    if (!path)
        return onnx_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory", what);
    snprintf(path, n, "%s/%s", base_dir, location);
    if (!realpath(path, file_real))
        st = onnx_error(PRT_ERR_IO, "%s: cannot open external data file '%s': %s", what,
                        path, strerror(errno));
    else if (!path_is_inside(file_real, dir_real))
        st = onnx_error(PRT_ERR_IO,
                        "%s: external data location '%s' resolves to '%s', outside "
                        "the model's folder '%s' (a symlink out of the folder?)",
                        what, location, file_real, dir_real);
    else if (onnx_open_regular(file_real, O_NOFOLLOW, out_fd, out_size, &why) != 0)
        st = onnx_error(PRT_ERR_IO,
                        "%s: cannot open external data file '%s' (location "
                        "'%s'): %s",
                        what, path, location, why);
    prt_free(path);
    return st;
}

/* Reads `bytes` bytes of external data into a new buffer, *out (prt_malloc'd).
 * The buffer is allocated only once the file is known to hold the bytes: the
 * size comes from the model's dims, which cost nothing to lie about, and a
 * claim of terabytes must fail on the file's size, not in malloc. */
static prt_status load_external(const Onnx__TensorProto *t, const char *base_dir,
                                const char *what, size_t bytes, void **out)
{
    void *dst;
    const char *location = NULL;
    uint64_t offset = 0, length = bytes, end;
    int fd;
    prt_status st;
    for (size_t i = 0; i < t->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = t->external_data[i];
        const char *k = onnx_str(e->key), *v = onnx_str(e->value);
        if (strcmp(k, "location") == 0) {
            location = v;
        } else if (strcmp(k, "offset") == 0) {
            if (!parse_u64(v, &offset))
                return onnx_error(PRT_ERR_MALFORMED,
                                  "%s: external data offset '%s' is not a number", what,
                                  v);
        } else if (strcmp(k, "length") == 0) {
            if (!parse_u64(v, &length))
                return onnx_error(PRT_ERR_MALFORMED,
                                  "%s: external data length '%s' is not a number", what,
                                  v);
        } /* "checksum" and keys of later versions are not needed to read. */
    }
    if (!location)
        return onnx_error(PRT_ERR_MALFORMED,
                          "%s: external data without a 'location' entry", what);
    if (!location_is_safe(location))
        return onnx_error(PRT_ERR_MALFORMED,
                          "%s: external data location '%s' must be a relative "
                          "path without '..' components",
                          what, location);
    if (length != bytes)
        return onnx_error(PRT_ERR_MALFORMED,
                          "%s: external data length is %llu bytes; its dims and "
                          "type need %zu",
                          what, (unsigned long long)length, bytes);
    if (!base_dir)
        return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                          "%s: data lives in the external file '%s', but no base "
                          "directory was given to find it in",
                          what, location);
    st = open_external(base_dir, location, what, &fd, &end);
    if (st)
        return st;
    if (offset > end || end - offset < bytes) {
        st = onnx_error(PRT_ERR_MALFORMED,
                        "%s: external data file '%s' has %llu bytes; the tensor needs "
                        "%zu bytes at offset %llu",
                        what, location, (unsigned long long)end, bytes,
                        (unsigned long long)offset);
        close(fd);
        return st;
    }
    dst = prt_malloc(bytes);
    if (!dst) {
        close(fd);
        return onnx_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory (%zu bytes)", what,
                          bytes);
    }
    if (onnx_read_at(fd, dst, bytes, offset) != 0) {
        st = onnx_error(PRT_ERR_IO, "%s: reading external data file '%s' failed", what,
                        location);
        prt_free(dst);
        close(fd);
        return st;
    }
    close(fd);
    *out = dst;
    return PRT_OK;
}

/* ---- typed fields ------------------------------------------------------------ */

/* int32_data carries every type narrower than 32 bits; each value must fit. */
static prt_status from_int32_data(const Onnx__TensorProto *t, int32_t dtype,
                                  const char *what, size_t count, void *dst)
{
    int64_t lo, hi;
    switch (dtype) {
    case PRT_INT8:
        lo = INT8_MIN;
        hi = INT8_MAX;
        break;
    case PRT_UINT8:
    case PRT_FLOAT8E4M3FN: /* the bits, as ONNX stores them */
    case PRT_FLOAT8E5M2:
        lo = 0;
        hi = UINT8_MAX;
        break;
    case PRT_BOOL:
        lo = 0;
        hi = 1;
        break;
    case PRT_FLOAT16:
    case PRT_BFLOAT16:
    case PRT_UINT16:
        lo = 0;
        hi = UINT16_MAX;
        break; /* the bits, or the value */
    case PRT_INT16:
        lo = INT16_MIN;
        hi = INT16_MAX;
        break;
    default:
        lo = INT32_MIN;
        hi = INT32_MAX;
        break;
    }
    for (size_t i = 0; i < count; i++) {
        int32_t v = t->int32_data[i];
        if (v < lo || v > hi)
            return onnx_error(PRT_ERR_MALFORMED,
                              "%s: int32_data[%zu] = %d does not fit %s", what, i, (int)v,
                              prt_dtype_name(dtype));
        switch (dtype) {
        case PRT_INT8:
            ((int8_t *)dst)[i] = (int8_t)v;
            break;
        case PRT_UINT8:
        case PRT_BOOL:
        case PRT_FLOAT8E4M3FN:
        case PRT_FLOAT8E5M2:
            ((uint8_t *)dst)[i] = (uint8_t)v;
            break;
        case PRT_FLOAT16:
        case PRT_BFLOAT16:
        case PRT_UINT16:
        case PRT_INT16:
            ((uint16_t *)dst)[i] = (uint16_t)v;
            break;
        default:
            ((int32_t *)dst)[i] = v;
            break;
        }
    }
    return PRT_OK;
}

prt_status onnx_tensor_load(const Onnx__TensorProto *t, const char *base_dir,
                            const char *what, onnx_tensor *out)
{
    onnx_tensor r;
    size_t esize, count = 1;
    prt_status st;
    memset(&r, 0, sizeof r);
    if (!t->has_data_type)
        return onnx_error(PRT_ERR_MALFORMED, "%s: tensor has no data_type", what);
    st = onnx_dtype_from_onnx(t->data_type, what, &r.dtype);
    if (st)
        return st;
    esize = prt_dtype_size(r.dtype);
    if (t->n_dims > PRT_MAX_DIMS)
        return onnx_error(PRT_ERR_UNSUPPORTED, "%s: rank %zu is over plugrt's %d", what,
                          t->n_dims, PRT_MAX_DIMS);
    r.dims.nb_dims = (int32_t)t->n_dims;
    for (size_t i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 0)
            return onnx_error(PRT_ERR_MALFORMED, "%s: dim %zu is %lld", what, i,
                              (long long)t->dims[i]);
        /* Keep count * esize within what a protobuf could hold, so the
         * checks below cannot overflow. */
        if (t->dims[i] && count > ((size_t)1 << 48) / (size_t)t->dims[i])
            return onnx_error(PRT_ERR_MALFORMED, "%s: too many elements", what);
        count *= (size_t)t->dims[i];
        r.dims.d[i] = t->dims[i];
    }
    if (t->segment)
        return onnx_error(PRT_ERR_UNSUPPORTED, "%s: segmented tensors are not supported",
                          what);
    r.bytes = count * esize;

    if (t->has_data_location &&
        t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        /* load_external allocates only after checking the file's size. */
        st = load_external(t, base_dir, what, r.bytes, &r.data);
        if (st)
            return st;
        *out = r;
        return PRT_OK;
    }

    if (t->has_raw_data && t->raw_data.len > 0) {
        if (t->raw_data.len != r.bytes)
            return onnx_error(PRT_ERR_MALFORMED,
                              "%s: raw_data has %zu bytes; %s with %zu elements "
                              "needs %zu",
                              what, t->raw_data.len, prt_dtype_name(r.dtype), count,
                              r.bytes);
        r.data = prt_malloc(r.bytes);
        if (!r.data)
            return onnx_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory", what);
        memcpy(r.data, t->raw_data.data, r.bytes);
        *out = r;
        return PRT_OK;
    }

    /* Typed fields. The count must match, which also bounds the allocation
     * by the size of the message. */
    {
        size_t have;
        const char *field;
        switch (r.dtype) {
        case PRT_FLOAT32:
            have = t->n_float_data;
            field = "float_data";
            break;
        case PRT_INT64:
            have = t->n_int64_data;
            field = "int64_data";
            break;
        case PRT_FLOAT64:
            have = t->n_double_data;
            field = "double_data";
            break;
        case PRT_UINT32:
        case PRT_UINT64:
            have = t->n_uint64_data;
            field = "uint64_data";
            break;
        default:
            have = t->n_int32_data;
            field = "int32_data";
            break;
        }
        if (have != count)
            return onnx_error(PRT_ERR_MALFORMED,
                              "%s: %s tensor of %zu elements has %zu values in %s "
                              "(and no raw_data)",
                              what, prt_dtype_name(r.dtype), count, have, field);
        r.data = prt_malloc(r.bytes);
        if (!r.data)
            return onnx_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory", what);
        if (r.dtype == PRT_FLOAT32) {
            if (count)
                memcpy(r.data, t->float_data, r.bytes);
        } else if (r.dtype == PRT_INT64) {
            if (count)
                memcpy(r.data, t->int64_data, r.bytes);
        } else if (r.dtype == PRT_FLOAT64) {
            if (count)
                memcpy(r.data, t->double_data, r.bytes);
        } else if (r.dtype == PRT_UINT64) {
            if (count)
                memcpy(r.data, t->uint64_data, r.bytes);
        } else if (r.dtype == PRT_UINT32) {
            /* uint64_data carries uint32 too; each value must fit. */
            for (size_t i = 0; i < count; i++) {
                if (t->uint64_data[i] > UINT32_MAX) {
                    prt_free(r.data);
                    return onnx_error(PRT_ERR_MALFORMED,
                                      "%s: uint64_data[%zu] = %llu does not fit uint32",
                                      what, i, (unsigned long long)t->uint64_data[i]);
                }
                ((uint32_t *)r.data)[i] = (uint32_t)t->uint64_data[i];
            }
        } else {
            st = from_int32_data(t, r.dtype, what, count, r.data);
            if (st) {
                prt_free(r.data);
                return st;
            }
        }
    }
    *out = r;
    return PRT_OK;
}

/* ---- TensorProto files ------------------------------------------------------- */

prt_status prt_onnx_read_tensor_file(const char *path, char **out_name,
                                     int32_t *out_dtype, prt_dims *out_dims,
                                     void **out_data)
{
    uint8_t *bytes = NULL;
    size_t size = 0;
    ProtobufCMessage *m = NULL;
    const Onnx__TensorProto *t;
    onnx_tensor tensor;
    char *dir, *slash, *name;
    char what[512];
    prt_status st;
    if (!path || !out_name || !out_dtype || !out_dims || !out_data)
        return onnx_error(PRT_ERR_INVALID_ARGUMENT,
                          "prt_onnx_read_tensor_file: NULL argument");
    st = onnx_read_file(path, "tensor file", &bytes, &size);
    if (st)
        return st;
    snprintf(what, sizeof what, "tensor file '%s'", path);
    st = onnx_unpack(&onnx__tensor_proto__descriptor, bytes, size, what, &m);
    prt_free(bytes);
    if (st)
        return st;
    t = (const Onnx__TensorProto *)m;
    if (t->name && t->name[0])
        snprintf(what, sizeof what, "tensor '%s' in file '%s'", t->name, path);
    /* External data of a .pb lives next to it. */
    dir = onnx_strdup(path);
    if (!dir) {
        onnx_message_free(m);
        return onnx_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        strcpy(dir, ".");
    st = onnx_tensor_load(t, slash == dir ? "/" : dir, what, &tensor);
    prt_free(dir);
    if (st) {
        onnx_message_free(m);
        return st;
    }
    /* Both are prt_malloc'd: the caller frees them with prt_free. */
    name = onnx_strdup(onnx_str(t->name));
    onnx_message_free(m);
    if (!name) {
        onnx_tensor_free(&tensor);
        return onnx_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    *out_name = name;
    *out_dtype = tensor.dtype;
    *out_dims = tensor.dims;
    *out_data = tensor.data;
    return PRT_OK;
}
