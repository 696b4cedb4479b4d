/* Errors and warnings through the public host services, memory through
 * prt_malloc, a guarded unpack of untrusted protobuf bytes, reads of
 * regular files, a table of names, and how near two names are. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* ---- memory ---------------------------------------------------------------- */

void *onnx_calloc(size_t count, size_t size)
{
    void *p;
    if (size && count > SIZE_MAX / size)
        return NULL;
    p = prt_malloc(count * size);
    if (p)
        memset(p, 0, count * size);
    return p;
}

/* prt_malloc has no realloc; every caller knows its old size. */
void *onnx_resize(void *p, size_t old_size, size_t new_size)
{
    void *q = prt_malloc(new_size);
    if (!q)
        return NULL;
    if (p && old_size)
        memcpy(q, p, old_size < new_size ? old_size : new_size);
    prt_free(p);
    return q;
}

char *onnx_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *r = prt_malloc(n);
    if (r)
        memcpy(r, s, n);
    return r;
}

/* protobuf-c returns NULL from unpack both for bad bytes and for a failed
 * allocation; the allocator tells the two apart by counting its failures in
 * allocator_data. */
static void *pb_alloc(void *data, size_t size)
{
    void *p = prt_malloc(size);
    if (!p && data)
        (*(int *)data)++;
    return p;
}

static void pb_free(void *data, void *p)
{
    (void)data;
    prt_free(p);
}

void onnx_message_free(ProtobufCMessage *m)
{
    ProtobufCAllocator a = {pb_alloc, pb_free, NULL};
    if (m)
        protobuf_c_message_free_unpacked(m, &a);
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
    int failed_allocs = 0;
    ProtobufCAllocator a = {pb_alloc, pb_free, &failed_allocs};
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
        return onnx_error(PRT_ERR_MALFORMED, "%s: not a valid %s: %s", what, desc->name,
                          why);
    m = protobuf_c_message_unpack(desc, &a, size, bytes);
    if (!m && failed_allocs)
        return onnx_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory unpacking %s", what,
                          desc->name);
    if (!m)
        return onnx_error(PRT_ERR_MALFORMED,
                          "%s: not a valid %s (a field has the wrong type or "
                          "bad contents)",
                          what, desc->name);
    *out = m;
    return PRT_OK;
}

/* What a file that is not a regular one is, for messages. */
static const char *file_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "it is a directory, not a regular file";
    if (S_ISFIFO(mode))
        return "it is a FIFO, not a regular file";
    if (S_ISSOCK(mode))
        return "it is a socket, not a regular file";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "it is a device, not a regular file";
    return "it is not a regular file";
}

int onnx_open_regular(const char *path, int flags, int *out_fd, uint64_t *out_size,
                      const char **why)
{
    struct stat sb;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | flags);
    if (fd < 0) {
        *why = strerror(errno);
        return -1;
    }
    if (fstat(fd, &sb) != 0) {
        *why = strerror(errno);
        close(fd);
        return -1;
    }
    if (!S_ISREG(sb.st_mode) || sb.st_size < 0) {
        *why = file_kind(sb.st_mode);
        close(fd);
        return -1;
    }
    *out_fd = fd;
    *out_size = (uint64_t)sb.st_size;
    return 0;
}

int onnx_read_at(int fd, void *buf, size_t n, uint64_t offset)
{
    uint8_t *p = buf;
    while (n > 0) {
        ssize_t got;
        if (offset > (uint64_t)INT64_MAX)
            return -1;
        got = pread(fd, p, n, (off_t)offset);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1; /* an error, or the file ended early (it shrank) */
        p += got;
        n -= (size_t)got;
        offset += (uint64_t)got;
    }
    return 0;
}

prt_status onnx_read_file(const char *path, const char *what, uint8_t **out,
                          size_t *out_size)
{
    uint8_t *buf;
    uint64_t size;
    const char *why;
    int fd;
    if (onnx_open_regular(path, 0, &fd, &size, &why) != 0)
        return onnx_error(PRT_ERR_IO, "%s '%s': cannot open: %s", what, path, why);
    if (size > (uint64_t)INT32_MAX) {
        close(fd);
        return onnx_error(PRT_ERR_UNSUPPORTED,
                          "%s '%s': %llu bytes is over the 2 GiB protobuf limit", what,
                          path, (unsigned long long)size);
    }
    buf = prt_malloc((size_t)size);
    if (!buf) {
        close(fd);
        return onnx_error(PRT_ERR_OUT_OF_MEMORY, "%s '%s': out of memory (%llu bytes)",
                          what, path, (unsigned long long)size);
    }
    if (onnx_read_at(fd, buf, (size_t)size, 0) != 0) {
        prt_free(buf);
        close(fd);
        return onnx_error(PRT_ERR_IO, "%s '%s': read failed", what, path);
    }
    close(fd);
    *out = buf;
    *out_size = (size_t)size;
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
        bigger.keys = onnx_calloc(bigger.cap, sizeof *bigger.keys);
        bigger.values = onnx_calloc(bigger.cap, sizeof *bigger.values);
        if (!bigger.keys || !bigger.values) {
            prt_free(bigger.keys);
            prt_free(bigger.values);
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
    prt_free(t->keys);
    prt_free(t->values);
    memset(t, 0, sizeof *t);
}

/* ---- near names ------------------------------------------------------------- */

/* The same as base_name_distance in libplugrt (src/base/util.c), which the
 * importer cannot call: it is built against the public API alone, and
 * libplugrt exports nothing but prt_ names. A change to one is a change to
 * both. */
int onnx_name_distance(const char *a, const char *b)
{
    int prev[65], cur[65];
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return 9;
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int ca = a[i - 1] >= 'A' && a[i - 1] <= 'Z' ? a[i - 1] + 32 : a[i - 1];
            int cb = b[j - 1] >= 'A' && b[j - 1] <= 'Z' ? b[j - 1] + 32 : b[j - 1];
            int best = prev[j - 1] + (ca != cb);
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            cur[j] = best;
        }
        memcpy(prev, cur, sizeof(int) * (lb + 1));
    }
    return prev[lb] > 9 ? 9 : prev[lb];
}
