/* Errors and warnings through the public host services, a guarded unpack of
 * untrusted protobuf bytes, whole-file reads, and a table of names. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

/* prt_last_error() holds 2048 bytes; longer messages are cut there anyway. */
#define MSG_CAP 2048

prt_status onnx_error(prt_status status, const char *fmt, ...)
{
    const prt_host_services *hs = prt_host_services_get();
    char msg[MSG_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    hs->set_error(hs->host, status, msg);
    return status;
}

prt_status onnx_error_wrap(prt_status status, const char *fmt, ...)
{
    const prt_host_services *hs = prt_host_services_get();
    char msg[MSG_CAP];
    char cause[MSG_CAP];
    size_t n;
    va_list ap;
    /* Copy the cause first: set_error overwrites it. */
    snprintf(cause, sizeof cause, "%s", prt_last_error());
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    n = strlen(msg);
    if (cause[0] && n + 3 < sizeof msg) {
        size_t m = strlen(cause);
        if (m > sizeof msg - n - 3)
            m = sizeof msg - n - 3; /* cut: the message is for people */
        memcpy(msg + n, ": ", 2);
        memcpy(msg + n + 2, cause, m);
        msg[n + 2 + m] = '\0';
    }
    hs->set_error(hs->host, status, msg);
    return status;
}

void onnx_warn(const char *fmt, ...)
{
    const prt_host_services *hs = prt_host_services_get();
    char msg[MSG_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    hs->log(hs->host, PRT_SEV_WARNING, msg);
}

/* ---- guarded unpack -------------------------------------------------------- */

/* ONNX nests Model > Graph > Node > Attribute > Graph > ...; real models stay
 * far below this. The bound keeps protobuf-c's recursion off the stack's
 * edge. */
#define MAX_NESTING 64

static int read_varint(const uint8_t *p, size_t n, size_t *pos, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        uint8_t b;
        if (*pos >= n)
            return 0;
        b = p[(*pos)++];
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 1;
        }
    }
    return 0; /* more than 10 bytes */
}

/* Walks one message's wire format: every field's extent lies inside the
 * message, wire types are the four proto3 ones, and sub-messages that the
 * schema knows are checked in turn, at most MAX_NESTING deep. Returns NULL
 * when the bytes are sound, else a short reason. */
static const char *wire_walk(const uint8_t *p, size_t n,
                             const ProtobufCMessageDescriptor *desc, int depth)
{
    size_t pos = 0;
    while (pos < n) {
        uint64_t key, v;
        uint32_t wire;
        if (!read_varint(p, n, &pos, &key))
            return "a field key runs past the end";
        wire = (uint32_t)(key & 7);
        if ((key >> 3) == 0 || (key >> 3) > 0x1fffffff)
            return "a field number is out of range";
        switch (wire) {
        case 0: /* varint */
            if (!read_varint(p, n, &pos, &v))
                return "a varint runs past the end";
            break;
        case 1: /* 64-bit */
            if (n - pos < 8)
                return "a 64-bit value runs past the end";
            pos += 8;
            break;
        case 5: /* 32-bit */
            if (n - pos < 4)
                return "a 32-bit value runs past the end";
            pos += 4;
            break;
        case 2: { /* length-delimited */
            const ProtobufCFieldDescriptor *f;
            if (!read_varint(p, n, &pos, &v))
                return "a length runs past the end";
            if (v > n - pos)
                return "a length-delimited field runs past the end";
            f = desc ? protobuf_c_message_descriptor_get_field(desc, (unsigned)(key >> 3))
                     : NULL;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
                const char *why;
                if (depth + 1 >= MAX_NESTING)
                    return "messages are nested too deeply";
                why = wire_walk(p + pos, (size_t)v,
                                (const ProtobufCMessageDescriptor *)f->descriptor,
                                depth + 1);
                if (why)
                    return why;
            }
            pos += (size_t)v;
            break;
        }
        default:
            return "an unknown wire type (groups are not used by ONNX)";
        }
    }
    return NULL;
}

prt_status onnx_unpack(const ProtobufCMessageDescriptor *desc, const void *bytes,
                       size_t size, const char *what, ProtobufCMessage **out)
{
    const char *why;
    ProtobufCMessage *m;
    if (!bytes && size)
        return onnx_error(PRT_ERR_INVALID_ARGUMENT, "%s: bytes are NULL", what);
    /* Protocol buffers are limited to 2 GiB; larger models keep their
     * weights in external data files. */
    if (size > (size_t)INT32_MAX)
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "%s: %zu bytes is over the 2 GiB protobuf limit (store "
                          "weights as external data)",
                          what, size);
    why = wire_walk(bytes, size, desc, 0);
    if (why)
        return onnx_error(PRT_ERR_MALFORMED, "%s: not a valid %s: %s", what,
                          desc->name, why);
    m = protobuf_c_message_unpack(desc, NULL, size, bytes);
    if (!m)
        return onnx_error(PRT_ERR_MALFORMED,
                          "%s: not a valid %s (a field has the wrong type or "
                          "bad contents)",
                          what, desc->name);
    *out = m;
    return PRT_OK;
}

prt_status onnx_read_file(const char *path, const char *what, uint8_t **out,
                          size_t *out_size)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    off_t end;
    if (!f)
        return onnx_error(PRT_ERR_IO, "%s '%s': cannot open: %s", what, path,
                          strerror(errno));
    if (fseeko(f, 0, SEEK_END) != 0 || (end = ftello(f)) < 0 ||
        fseeko(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return onnx_error(PRT_ERR_IO, "%s '%s': cannot seek (not a regular file?)",
                          what, path);
    }
    if ((uint64_t)end > (uint64_t)INT32_MAX) {
        fclose(f);
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "%s '%s': %lld bytes is over the 2 GiB protobuf limit",
                          what, path, (long long)end);
    }
    buf = malloc(end ? (size_t)end : 1);
    if (!buf) {
        fclose(f);
        return onnx_error(PRT_ERR_OUT_OF_MEMORY, "%s '%s': out of memory (%lld bytes)",
                          what, path, (long long)end);
    }
    if (end && fread(buf, 1, (size_t)end, f) != (size_t)end) {
        free(buf);
        fclose(f);
        return onnx_error(PRT_ERR_IO, "%s '%s': read failed", what, path);
    }
    fclose(f);
    *out = buf;
    *out_size = (size_t)end;
    return PRT_OK;
}

/* ---- names ----------------------------------------------------------------- */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

static size_t find_slot(const onnx_names *t, const char *key)
{
    size_t mask = t->cap - 1;
    size_t i = (size_t)hash_str(key) & mask;
    while (t->keys[i] && strcmp(t->keys[i], key) != 0)
        i = (i + 1) & mask;
    return i;
}

int onnx_names_get(const onnx_names *t, const char *key, int32_t *value)
{
    size_t i;
    if (!t->cap)
        return -1;
    i = find_slot(t, key);
    if (!t->keys[i])
        return -1;
    *value = t->values[i];
    return 0;
}

prt_status onnx_names_put(onnx_names *t, const char *key, int32_t value)
{
    size_t i;
    if ((t->count + 1) * 2 > t->cap) {
        onnx_names bigger;
        bigger.cap = t->cap ? t->cap * 2 : 64;
        bigger.count = 0;
        bigger.keys = calloc(bigger.cap, sizeof *bigger.keys);
        bigger.values = calloc(bigger.cap, sizeof *bigger.values);
        if (!bigger.keys || !bigger.values) {
            free(bigger.keys);
            free(bigger.values);
            return onnx_error(PRT_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
        }
        for (size_t j = 0; j < t->cap; j++)
            if (t->keys[j]) {
                size_t k = find_slot(&bigger, t->keys[j]);
                bigger.keys[k] = t->keys[j];
                bigger.values[k] = t->values[j];
                bigger.count++;
            }
        onnx_names_free(t);
        *t = bigger;
    }
    i = find_slot(t, key);
    if (!t->keys[i]) {
        t->keys[i] = key;
        t->count++;
    }
    t->values[i] = value;
    return PRT_OK;
}

void onnx_names_free(onnx_names *t)
{
    free(t->keys);
    free(t->values);
    memset(t, 0, sizeof *t);
}
