/*
 * .npy reading and writing. The header is a Python dict literal,
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
 * parsed here by a small recursive-descent reader that accepts what numpy
 * writes (any key order, either quote, trailing commas, Python 2's 'L'
 * suffix) and rejects everything else with a message.
 */
#include "npy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
/* numpy keeps headers small; a larger one is garbage, not an array. */
#define NPY_MAX_HEADER (1u << 20)

static int fail(char *err, size_t errlen, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The message quotes the file's own bytes (a dtype, a key) and a path that
 * may come from a directory listing: both escaped (text.h). */
static int fail(char *err, size_t errlen, const char *name, const char *fmt, ...)
{
    char msg[512], en[CLI_ESC_CAP], em[4 * sizeof msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (err && errlen)
        snprintf(err, errlen, "%s: %s", cli_escape(name, en, sizeof en),
                 cli_escape(msg, em, sizeof em));
    return -1;
}

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

int64_t npy_volume(const prt_dims *dims)
{
    int64_t v = 1;
    for (int32_t i = 0; i < dims->nb_dims; i++) {
        if (dims->d[i] < 0)
            return -1;
        if (dims->d[i] != 0 && v > INT64_MAX / dims->d[i])
            return -1;
        v *= dims->d[i];
    }
    return v;
}

const char *npy_descr(int32_t dtype)
{
    /* Multi-byte types are written in the host's byte order. */
    int le = host_is_little_endian();
    switch (dtype) {
    case PRT_FLOAT32:
        return le ? "<f4" : ">f4";
    case PRT_FLOAT16:
        return le ? "<f2" : ">f2";
    case PRT_INT8:
        return "|i1";
    case PRT_UINT8:
        return "|u1";
    case PRT_INT32:
        return le ? "<i4" : ">i4";
    case PRT_INT64:
        return le ? "<i8" : ">i8";
    case PRT_FLOAT64:
        return le ? "<f8" : ">f8";
    case PRT_INT16:
        return le ? "<i2" : ">i2";
    case PRT_UINT16:
        return le ? "<u2" : ">u2";
    case PRT_UINT32:
        return le ? "<u4" : ">u4";
    case PRT_UINT64:
        return le ? "<u8" : ">u8";
    case PRT_BFLOAT16:
        /* numpy has no bfloat16: two raw bytes, as np.save writes
         * ml_dtypes' bfloat16 (read back with .view(ml_dtypes.bfloat16)). */
        return le ? "<V2" : ">V2";
    case PRT_BOOL:
        return "|b1";
    default:
        return NULL;
    }
}

void npy_array_free(npy_array *a)
{
    if (!a)
        return;
    free(a->data);
    memset(a, 0, sizeof *a);
}

/* ---- header parsing ------------------------------------------------------ */

typedef struct hparser {
    const char *p, *end;
    const char *start; /* for offsets in messages */
    const char *name;  /* file name, for messages */
    char *err;
    size_t errlen;
} hparser;

typedef struct header {
    int32_t dtype;
    int swap;    /* 1: stored in the other byte order */
    int fortran; /* 1: stored in Fortran (column-major) order */
    prt_dims dims;
} header;

static void skip_ws(hparser *h)
{
    while (h->p < h->end &&
           (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
        h->p++;
}

static int expect(hparser *h, char c, const char *what)
{
    skip_ws(h);
    if (h->p >= h->end || *h->p != c)
        return fail(h->err, h->errlen, h->name,
                    "malformed header: expected '%c' %s at byte %ld of the header", c,
                    what, (long)(h->p - h->start));
    h->p++;
    return 0;
}

/* A quoted string into buf (at most cap-1 bytes). */
static int parse_string(hparser *h, char *buf, size_t cap)
{
    char q;
    size_t n = 0;
    skip_ws(h);
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
        return fail(h->err, h->errlen, h->name, "malformed header: expected a string");
    q = *h->p++;
    while (h->p < h->end && *h->p != q) {
        if (*h->p == '\\' || n + 1 >= cap)
            return fail(h->err, h->errlen, h->name,
                        "malformed header: unexpected string (escape or too long)");
        buf[n++] = *h->p++;
    }
    if (h->p >= h->end)
        return fail(h->err, h->errlen, h->name, "malformed header: unterminated string");
    h->p++;
    buf[n] = '\0';
    return 0;
}

static int parse_bool(hparser *h, int *out)
{
    skip_ws(h);
    if (h->end - h->p >= 4 && memcmp(h->p, "True", 4) == 0) {
        h->p += 4;
        *out = 1;
        return 0;
    }
    if (h->end - h->p >= 5 && memcmp(h->p, "False", 5) == 0) {
        h->p += 5;
        *out = 0;
        return 0;
    }
    return fail(h->err, h->errlen, h->name,
                "malformed header: fortran_order must be True or False");
}

static int parse_shape(hparser *h, prt_dims *dims)
{
    int32_t n = 0;
    if (expect(h, '(', "to open the shape"))
        return -1;
    for (;;) {
        int64_t v = 0;
        skip_ws(h);
        if (h->p < h->end && *h->p == ')') {
            h->p++;
            break;
        }
        if (h->p >= h->end || *h->p < '0' || *h->p > '9')
            return fail(h->err, h->errlen, h->name,
                        "malformed header: shape must be a tuple of non-negative "
                        "integers");
        while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
            int d = *h->p++ - '0';
            if (v > (INT64_MAX - d) / 10)
                return fail(h->err, h->errlen, h->name,
                            "malformed header: a dimension overflows int64");
            v = v * 10 + d;
        }
        if (h->p < h->end && (*h->p == 'L' || *h->p == 'l'))
            h->p++; /* Python 2 long */
        if (n >= PRT_MAX_DIMS)
            return fail(h->err, h->errlen, h->name,
                        "rank is more than plugrt supports (%d dims)", PRT_MAX_DIMS);
        dims->d[n++] = v;
        skip_ws(h);
        if (h->p < h->end && *h->p == ',') {
            h->p++;
            continue;
        }
        if (h->p < h->end && *h->p == ')') {
            h->p++;
            break;
        }
        return fail(h->err, h->errlen, h->name,
                    "malformed header: expected ',' or ')' in the shape");
    }
    dims->nb_dims = n;
    return 0;
}

/* '<f4' and friends. */
static int parse_descr(hparser *h, const char *descr, header *out)
{
    static const struct {
        const char *code;
        int32_t dtype;
    } codes[] = {{"f4", PRT_FLOAT32}, {"f2", PRT_FLOAT16}, {"i1", PRT_INT8},
                 {"u1", PRT_UINT8},   {"i4", PRT_INT32},   {"i8", PRT_INT64},
                 {"b1", PRT_BOOL},    {"f8", PRT_FLOAT64}, {"i2", PRT_INT16},
                 {"u2", PRT_UINT16},  {"u4", PRT_UINT32},  {"u8", PRT_UINT64},
                 {"V2", PRT_BFLOAT16}};
    char order = descr[0];
    const char *code = descr + 1;
    if (order != '<' && order != '>' && order != '|' && order != '=') {
        order = '=';
        code = descr;
    }
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        size_t size;
        if (strcmp(code, codes[i].code) != 0)
            continue;
        size = prt_dtype_size(codes[i].dtype);
        if (size > 1 && order == '|' && codes[i].dtype != PRT_BFLOAT16) /* |V2 too */
            break;
        out->dtype = codes[i].dtype;
        out->swap = size > 1 && ((order == '<' && !host_is_little_endian()) ||
                                 (order == '>' && host_is_little_endian()));
        return 0;
    }
    return fail(h->err, h->errlen, h->name,
                "unsupported dtype '%s' (plugrt reads <f4, <f2, <f8, |i1, |u1, <i2, "
                "<u2, <i4, <u4, <i8, <u8, |b1 and <V2 as bfloat16; convert with "
                "numpy's astype)",
                descr);
}

static int parse_header(hparser *h, header *out)
{
    int have_descr = 0, have_fortran = 0, have_shape = 0, fortran = 0;
    char key[32], descr[32];
    if (expect(h, '{', "to open the header dict"))
        return -1;
    for (;;) {
        skip_ws(h);
        if (h->p < h->end && *h->p == '}') {
            h->p++;
            break;
        }
        if (parse_string(h, key, sizeof key) || expect(h, ':', "after a key"))
            return -1;
        if (strcmp(key, "descr") == 0 && !have_descr) {
            skip_ws(h);
            if (h->p < h->end && *h->p == '[')
                return fail(h->err, h->errlen, h->name,
                            "unsupported dtype: structured arrays are not tensors");
            if (parse_string(h, descr, sizeof descr) || parse_descr(h, descr, out))
                return -1;
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0 && !have_fortran) {
            if (parse_bool(h, &fortran))
                return -1;
            have_fortran = 1;
        } else if (strcmp(key, "shape") == 0 && !have_shape) {
            if (parse_shape(h, &out->dims))
                return -1;
            have_shape = 1;
        } else {
            return fail(h->err, h->errlen, h->name,
                        "malformed header: unexpected or repeated key '%s'", key);
        }
        skip_ws(h);
        if (h->p < h->end && *h->p == ',') {
            h->p++;
            continue;
        }
        if (expect(h, '}', "to close the header dict"))
            return -1;
        break;
    }
    skip_ws(h);
    if (h->p != h->end)
        return fail(h->err, h->errlen, h->name,
                    "malformed header: unexpected bytes after the dict");
    if (!have_descr || !have_fortran || !have_shape)
        return fail(h->err, h->errlen, h->name, "malformed header: missing key '%s'",
                    !have_descr     ? "descr"
                    : !have_fortran ? "fortran_order"
                                    : "shape");
    out->fortran = fortran;
    return 0;
}

/* The fixed prefix: magic, version, header length. *out_hlen and
 * *out_prefix (10 or 12) on success. `size` is how many bytes are there. */
static int parse_prefix(const char *name, const uint8_t *b, size_t size,
                        uint32_t *out_hlen, size_t *out_prefix, char *err, size_t errlen)
{
    if (size < NPY_MAGIC_LEN || memcmp(b, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
        return fail(err, errlen, name,
                    "not a .npy file (bad magic; expected \\x93NUMPY)");
    if (size < 10)
        return fail(err, errlen, name, "truncated in the header");
    if (b[6] == 1) {
        *out_hlen = (uint32_t)b[8] | (uint32_t)b[9] << 8;
        *out_prefix = 10;
    } else if (b[6] == 2 || b[6] == 3) {
        if (size < 12)
            return fail(err, errlen, name, "truncated in the header");
        *out_hlen = (uint32_t)b[8] | (uint32_t)b[9] << 8 | (uint32_t)b[10] << 16 |
                    (uint32_t)b[11] << 24;
        *out_prefix = 12;
    } else {
        return fail(err, errlen, name,
                    "format version %u.%u is not supported (1.0, 2.0 and 3.0 are)", b[6],
                    b[7]);
    }
    if (*out_hlen > NPY_MAX_HEADER)
        return fail(err, errlen, name, "header of %lu bytes is implausibly large",
                    (unsigned long)*out_hlen);
    return 0;
}

/* Checks the data length against the header; *out_nbytes on success. */
static int check_length(const char *name, const header *hd, uint64_t have,
                        size_t *out_nbytes, char *err, size_t errlen)
{
    int64_t vol = npy_volume(&hd->dims);
    size_t item = prt_dtype_size(hd->dtype);
    if (vol < 0 || (uint64_t)vol > (uint64_t)INT64_MAX / item ||
        (uint64_t)vol * item > (uint64_t)SIZE_MAX)
        return fail(err, errlen, name, "shape is too large");
    if ((uint64_t)vol * item != have)
        return fail(err, errlen, name,
                    "%s: the header's shape and dtype (%s) need %llu bytes of data, "
                    "the file has %llu",
                    have < (uint64_t)vol * item ? "truncated data" : "lying header",
                    prt_dtype_name(hd->dtype), (unsigned long long)((uint64_t)vol * item),
                    (unsigned long long)have);
    *out_nbytes = (size_t)((uint64_t)vol * item);
    return 0;
}

static void swap_bytes(void *data, size_t nbytes, size_t item)
{
    uint8_t *p = data;
    for (size_t i = 0; i + item <= nbytes; i += item)
        for (size_t a = 0, b = item - 1; a < b; a++, b--) {
            uint8_t t = p[i + a];
            p[i + a] = p[i + b];
            p[i + b] = t;
        }
}

/* Column-major data to row-major: element (i0, .., ik) of C flat index c
 * sits at sum(i_j * fstride_j) in the Fortran layout. Returns the new
 * buffer (the old one is freed) or NULL on OOM. */
static void *fortran_to_c(void *data, size_t nbytes, const prt_dims *dims, size_t item)
{
    int64_t idx[PRT_MAX_DIMS] = {0}, fstride[PRT_MAX_DIMS];
    int32_t rank = dims->nb_dims;
    uint8_t *dst = malloc(nbytes ? nbytes : 1);
    const uint8_t *src = data;
    size_t n = nbytes / item;
    if (!dst)
        return NULL;
    for (int32_t k = 0; k < rank; k++)
        fstride[k] = k ? fstride[k - 1] * dims->d[k - 1] : 1;
    for (size_t c = 0; c < n; c++) {
        int64_t off = 0;
        for (int32_t k = 0; k < rank; k++)
            off += idx[k] * fstride[k];
        memcpy(dst + c * item, src + (size_t)off * item, item);
        for (int32_t k = rank - 1; k >= 0; k--) {
            if (++idx[k] < dims->d[k])
                break;
            idx[k] = 0;
        }
    }
    free(data);
    return dst;
}

/* Byte order, layout and bool normalization once the data is in memory.
 * Returns the (possibly new) buffer, NULL on OOM (data is then freed). */
static void *finish_data(const header *hd, void *data, size_t nbytes)
{
    if (hd->swap)
        swap_bytes(data, nbytes, prt_dtype_size(hd->dtype));
    if (hd->dtype == PRT_BOOL) {
        uint8_t *p = data;
        for (size_t i = 0; i < nbytes; i++)
            p[i] = p[i] != 0;
    }
    if (hd->fortran && hd->dims.nb_dims > 1) {
        void *c = fortran_to_c(data, nbytes, &hd->dims, prt_dtype_size(hd->dtype));
        if (!c)
            free(data);
        return c;
    }
    return data;
}

int npy_parse(const char *name, const void *bytes, size_t size, npy_array *out, char *err,
              size_t errlen)
{
    const uint8_t *b = bytes;
    uint32_t hlen;
    size_t prefix, nbytes;
    header hd;
    hparser h;
    void *data;
    memset(&hd, 0, sizeof hd);
    if (parse_prefix(name, b, size, &hlen, &prefix, err, errlen))
        return -1;
    if (size - prefix < hlen)
        return fail(err, errlen, name, "truncated in the header");
    h.p = h.start = (const char *)b + prefix;
    h.end = h.p + hlen;
    h.name = name;
    h.err = err;
    h.errlen = errlen;
    if (parse_header(&h, &hd) ||
        check_length(name, &hd, size - prefix - hlen, &nbytes, err, errlen))
        return -1;
    data = malloc(nbytes ? nbytes : 1);
    if (!data)
        return fail(err, errlen, name, "out of memory for %zu bytes", nbytes);
    memcpy(data, b + prefix + hlen, nbytes);
    if (!(data = finish_data(&hd, data, nbytes)))
        return fail(err, errlen, name, "out of memory for %zu bytes", nbytes);
    out->dtype = hd.dtype;
    out->dims = hd.dims;
    out->data = data;
    out->nbytes = nbytes;
    return 0;
}

int npy_read(const char *path, npy_array *out, char *err, size_t errlen)
{
    uint8_t pre[12];
    char *hbuf = NULL;
    void *data = NULL;
    uint32_t hlen;
    size_t prefix, got, nbytes;
    long end;
    header hd;
    hparser h;
    FILE *f = fopen(path, "rb");
    memset(&hd, 0, sizeof hd);
    if (!f)
        return fail(err, errlen, path, "cannot open: %s", strerror(errno));
    if (fseek(f, 0, SEEK_END) != 0 || (end = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return fail(err, errlen, path, "cannot read (not a regular file?)");
    }
    got = fread(pre, 1, sizeof pre, f);
    if (parse_prefix(path, pre, got, &hlen, &prefix, err, errlen))
        goto bad;
    if ((uint64_t)end < prefix + (uint64_t)hlen) {
        fail(err, errlen, path, "truncated in the header");
        goto bad;
    }
    hbuf = malloc(hlen ? hlen : 1);
    if (!hbuf) {
        fail(err, errlen, path, "out of memory for the header");
        goto bad;
    }
    if (fseek(f, (long)prefix, SEEK_SET) != 0 || fread(hbuf, 1, hlen, f) != hlen) {
        fail(err, errlen, path, "read error in the header");
        goto bad;
    }
    h.p = h.start = hbuf;
    h.end = hbuf + hlen;
    h.name = path;
    h.err = err;
    h.errlen = errlen;
    if (parse_header(&h, &hd) ||
        check_length(path, &hd, (uint64_t)end - prefix - hlen, &nbytes, err, errlen))
        goto bad;
    data = malloc(nbytes ? nbytes : 1);
    if (!data) {
        fail(err, errlen, path, "out of memory for %zu bytes", nbytes);
        goto bad;
    }
    if (fread(data, 1, nbytes, f) != nbytes) {
        fail(err, errlen, path, "read error (the file changed while being read?)");
        goto bad;
    }
    fclose(f);
    free(hbuf);
    if (!(data = finish_data(&hd, data, nbytes)))
        return fail(err, errlen, path, "out of memory for %zu bytes", nbytes);
    out->dtype = hd.dtype;
    out->dims = hd.dims;
    out->data = data;
    out->nbytes = nbytes;
    return 0;
bad:
    free(data);
    free(hbuf);
    fclose(f);
    return -1;
}

/* ---- writing ------------------------------------------------------------- */

int npy_write(const char *path, int32_t dtype, const prt_dims *dims, const void *data,
              char *err, size_t errlen)
{
    const char *descr = npy_descr(dtype);
    char shape[PRT_MAX_DIMS * 24 + 8];
    char *hdr = NULL;
    size_t n = 0, hlen, prefix, total, nbytes;
    int64_t vol;
    FILE *f;
    if (!descr)
        return fail(err, errlen, path, "dtype %s has no .npy equivalent",
                    prt_dtype_name(dtype));
    if (dims->nb_dims < 0 || dims->nb_dims > PRT_MAX_DIMS || (vol = npy_volume(dims)) < 0)
        return fail(err, errlen, path, "invalid shape");
    nbytes = (size_t)vol * prt_dtype_size(dtype);
    n += (size_t)snprintf(shape + n, sizeof shape - n, "(");
    for (int32_t i = 0; i < dims->nb_dims; i++)
        n += (size_t)snprintf(shape + n, sizeof shape - n, "%s%lld", i ? ", " : "",
                              (long long)dims->d[i]);
    snprintf(shape + n, sizeof shape - n, dims->nb_dims == 1 ? ",)" : ")");
    hdr = malloc(256 + sizeof shape);
    if (!hdr)
        return fail(err, errlen, path, "out of memory for the header");
    hlen = (size_t)sprintf(hdr, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                           descr, shape);
    /* Pad with spaces and a final newline so the data starts 64-aligned. */
    prefix = 10;
    total = (prefix + hlen + 1 + 63) / 64 * 64;
    while (prefix + hlen + 1 < total)
        hdr[hlen++] = ' ';
    hdr[hlen++] = '\n';
    f = fopen(path, "wb");
    if (!f) {
        free(hdr);
        return fail(err, errlen, path, "cannot create: %s", strerror(errno));
    }
    {
        uint8_t pre[10] = {0x93,
                           'N',
                           'U',
                           'M',
                           'P',
                           'Y',
                           1,
                           0,
                           (uint8_t)(hlen & 0xff),
                           (uint8_t)(hlen >> 8)};
        int ok = fwrite(pre, 1, sizeof pre, f) == sizeof pre &&
                 fwrite(hdr, 1, hlen, f) == hlen &&
                 (nbytes == 0 || fwrite(data, 1, nbytes, f) == nbytes);
        free(hdr);
        if (fclose(f) != 0 || !ok) {
            remove(path);
            return fail(err, errlen, path, "write failed: %s", strerror(errno));
        }
    }
    return 0;
}
