/* JSON for model configurations: a recursive-descent parser with a depth
 * bound, and a compact writer. See json.h. */
#include "json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deeper than any model configuration nests (about 6 levels), shallow
 * enough that recursion cannot exhaust a server thread's stack. */
#define TJ_MAX_DEPTH 64

typedef struct tj_reader {
    const char *s;
    size_t n, i;
    char *err;
    size_t err_size;
} tj_reader;

static void tj_fail(tj_reader *r, const char *what)
{
    if (r->err && r->err_size && !r->err[0])
        snprintf(r->err, r->err_size, "%s at byte %zu", what, r->i);
}

static void tj_skip_ws(tj_reader *r)
{
    while (r->i < r->n && (r->s[r->i] == ' ' || r->s[r->i] == '\t' ||
                           r->s[r->i] == '\n' || r->s[r->i] == '\r'))
        r->i++;
}

tj_value *tj_new(int32_t kind)
{
    tj_value *v = calloc(1, sizeof *v);
    if (v)
        v->kind = kind;
    return v;
}

void tj_free(tj_value *v)
{
    if (!v)
        return;
    for (int32_t k = 0; k < v->count; k++) {
        tj_free(v->items[k]);
        if (v->keys)
            free(v->keys[k]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
    free(v);
}

static int tj_grow(tj_value *c)
{
    int32_t cap = c->cap ? c->cap * 2 : 8;
    tj_value **items;
    if (c->count < c->cap)
        return 1;
    items = realloc(c->items, sizeof *items * (size_t)cap);
    if (!items)
        return 0;
    c->items = items;
    if (c->kind == TJ_OBJECT) {
        char **keys = realloc(c->keys, sizeof *keys * (size_t)cap);
        if (!keys)
            return 0;
        c->keys = keys;
    }
    c->cap = cap;
    return 1;
}

static void tj_put_utf8(char *out, size_t *o, uint32_t cp)
{
    if (cp < 0x80) {
        out[(*o)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*o)++] = (char)(0xC0 | (cp >> 6));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out[(*o)++] = (char)(0xE0 | (cp >> 12));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    } else {
        out[(*o)++] = (char)(0xF0 | (cp >> 18));
        out[(*o)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    }
}

static int tj_hex4(tj_reader *r, uint32_t *out)
{
    uint32_t v = 0;
    if (r->n - r->i < 4)
        return 0;
    for (int k = 0; k < 4; k++) {
        char c = r->s[r->i++];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return 0;
    }
    *out = v;
    return 1;
}

/* The rest of a \u escape (after "\u"), as UTF-8 at out + *o; a surrogate
 * pair is one code point. 0 on a malformed one. */
static int tj_read_u_escape(tj_reader *r, char *out, size_t *o)
{
    uint32_t cp, lo;
    if (!tj_hex4(r, &cp)) {
        tj_fail(r, "bad \\u escape");
        return 0;
    }
    if (cp >= 0xD800 && cp < 0xDC00) {
        /* A high surrogate needs its low half: 12 bytes read, 4 written. */
        if (r->n - r->i < 6 || r->s[r->i] != '\\' || r->s[r->i + 1] != 'u') {
            tj_fail(r, "unpaired surrogate");
            return 0;
        }
        r->i += 2;
        if (!tj_hex4(r, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
            tj_fail(r, "unpaired surrogate");
            return 0;
        }
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        tj_fail(r, "unpaired surrogate");
        return 0;
    }
    tj_put_utf8(out, o, cp);
    return 1;
}

/* A string after its opening quote. An escape never writes more bytes than
 * it reads, so the output fits in the bytes left. */
static char *tj_read_string(tj_reader *r, size_t *out_len)
{
    char *out = malloc(r->n - r->i + 1);
    size_t o = 0;
    if (!out) {
        tj_fail(r, "out of memory");
        return NULL;
    }
    while (r->i < r->n) {
        unsigned char c = (unsigned char)r->s[r->i++];
        if (c == '"') {
            out[o] = 0;
            *out_len = o;
            return out;
        }
        if (c < 0x20) {
            r->i--;
            tj_fail(r, "control character in a string");
            break;
        }
        if (c != '\\') {
            out[o++] = (char)c;
            continue;
        }
        if (r->i >= r->n)
            break;
        c = (unsigned char)r->s[r->i++];
        if (c != 'u') {
            /* The one-character escapes and what they stand for. */
            static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
            const char *k = c ? strchr(from, c) : NULL;
            if (!k) {
                r->i--;
                tj_fail(r, "bad escape");
                free(out);
                return NULL;
            }
            out[o++] = to[k - from];
            continue;
        }
        if (!tj_read_u_escape(r, out, &o)) {
            free(out);
            return NULL;
        }
    }
    tj_fail(r, "unterminated string");
    free(out);
    return NULL;
}

/* One or more decimal digits; 0 (and an error) if there is none. */
static int tj_digits(tj_reader *r)
{
    size_t start = r->i;
    while (r->i < r->n && r->s[r->i] >= '0' && r->s[r->i] <= '9')
        r->i++;
    if (r->i == start)
        tj_fail(r, "bad number");
    return r->i != start;
}

static tj_value *tj_read_number(tj_reader *r)
{
    size_t start = r->i;
    int integral = 1;
    char buf[64];
    tj_value *v;
    if (r->i < r->n && r->s[r->i] == '-')
        r->i++;
    /* An integer part without leading zeros, then optional fraction and
     * exponent, each with at least one digit. */
    if (r->i < r->n && r->s[r->i] == '0')
        r->i++;
    else if (!tj_digits(r))
        return NULL;
    if (r->i < r->n && r->s[r->i] == '.') {
        integral = 0;
        r->i++;
        if (!tj_digits(r))
            return NULL;
    }
    if (r->i < r->n && (r->s[r->i] == 'e' || r->s[r->i] == 'E')) {
        integral = 0;
        r->i++;
        if (r->i < r->n && (r->s[r->i] == '+' || r->s[r->i] == '-'))
            r->i++;
        if (!tj_digits(r))
            return NULL;
    }
    if (r->i - start >= sizeof buf) {
        tj_fail(r, "number too long");
        return NULL;
    }
    memcpy(buf, r->s + start, r->i - start);
    buf[r->i - start] = 0;
    v = tj_new(TJ_NUMBER);
    if (!v) {
        tj_fail(r, "out of memory");
        return NULL;
    }
    v->number = strtod(buf, NULL);
    if (integral) {
        long long x;
        errno = 0;
        x = strtoll(buf, NULL, 10);
        if (errno == 0) {
            v->is_int = 1;
            v->integer = (int64_t)x;
        }
    }
    return v;
}

static tj_value *tj_read_value(tj_reader *r, int depth);

static tj_value *tj_read_container(tj_reader *r, int depth, int32_t kind)
{
    char close = kind == TJ_OBJECT ? '}' : ']';
    tj_value *c = tj_new(kind);
    if (!c) {
        tj_fail(r, "out of memory");
        return NULL;
    }
    r->i++; /* the opening bracket */
    tj_skip_ws(r);
    if (r->i < r->n && r->s[r->i] == close) {
        r->i++;
        return c;
    }
    for (;;) {
        char *key = NULL;
        size_t key_len;
        tj_value *item;
        tj_skip_ws(r);
        if (kind == TJ_OBJECT) {
            if (r->i >= r->n || r->s[r->i] != '"') {
                tj_fail(r, "expected a member name");
                goto fail;
            }
            r->i++;
            if (!(key = tj_read_string(r, &key_len)))
                goto fail;
            tj_skip_ws(r);
            if (r->i >= r->n || r->s[r->i] != ':') {
                free(key);
                tj_fail(r, "expected ':'");
                goto fail;
            }
            r->i++;
        }
        item = tj_read_value(r, depth + 1);
        if (!item || !tj_grow(c)) {
            if (item)
                tj_fail(r, "out of memory");
            tj_free(item);
            free(key);
            goto fail;
        }
        if (kind == TJ_OBJECT)
            c->keys[c->count] = key;
        c->items[c->count++] = item;
        tj_skip_ws(r);
        if (r->i < r->n && r->s[r->i] == ',') {
            r->i++;
            continue;
        }
        if (r->i < r->n && r->s[r->i] == close) {
            r->i++;
            return c;
        }
        tj_fail(r, kind == TJ_OBJECT ? "expected ',' or '}'" : "expected ',' or ']'");
        goto fail;
    }
fail:
    tj_free(c);
    return NULL;
}

static int tj_literal(tj_reader *r, const char *word)
{
    size_t k = strlen(word);
    if (r->n - r->i >= k && memcmp(r->s + r->i, word, k) == 0) {
        r->i += k;
        return 1;
    }
    return 0;
}

static tj_value *tj_read_value(tj_reader *r, int depth)
{
    tj_value *v;
    if (depth > TJ_MAX_DEPTH) {
        tj_fail(r, "nested too deeply");
        return NULL;
    }
    tj_skip_ws(r);
    if (r->i >= r->n) {
        tj_fail(r, "unexpected end");
        return NULL;
    }
    switch (r->s[r->i]) {
    case '{':
        return tj_read_container(r, depth, TJ_OBJECT);
    case '[':
        return tj_read_container(r, depth, TJ_ARRAY);
    case '"':
        r->i++;
        if (!(v = tj_new(TJ_STRING))) {
            tj_fail(r, "out of memory");
            return NULL;
        }
        if (!(v->string = tj_read_string(r, &v->len))) {
            tj_free(v);
            return NULL;
        }
        return v;
    default:
        break;
    }
    if (tj_literal(r, "true") || tj_literal(r, "false")) {
        if ((v = tj_new(TJ_BOOL)))
            v->boolean = r->s[r->i - 1] == 'e' && r->s[r->i - 2] == 'u';
        return v;
    }
    if (tj_literal(r, "null"))
        return tj_new(TJ_NULL);
    if (r->s[r->i] != '-' && (r->s[r->i] < '0' || r->s[r->i] > '9')) {
        tj_fail(r, "unexpected character");
        return NULL;
    }
    return tj_read_number(r);
}

tj_value *tj_parse(const char *text, size_t len, char *err, size_t err_size)
{
    tj_reader r = {text, len, 0, err, err_size};
    tj_value *v;
    if (err && err_size)
        err[0] = 0;
    v = tj_read_value(&r, 0);
    if (!v)
        return NULL;
    tj_skip_ws(&r);
    if (r.i != r.n) {
        tj_fail(&r, "text after the value");
        tj_free(v);
        return NULL;
    }
    return v;
}

tj_value *tj_get(const tj_value *v, const char *key)
{
    if (!v || v->kind != TJ_OBJECT)
        return NULL;
    for (int32_t k = 0; k < v->count; k++)
        if (strcmp(v->keys[k], key) == 0)
            return v->items[k];
    return NULL;
}

int tj_as_int(const tj_value *v, int64_t *out)
{
    if (!v)
        return 0;
    if (v->kind == TJ_NUMBER && v->is_int) {
        *out = v->integer;
        return 1;
    }
    if (v->kind == TJ_STRING && v->len > 0 && v->len < 24) {
        char *end;
        long long x;
        errno = 0;
        x = strtoll(v->string, &end, 10);
        if (errno == 0 && *end == 0 && end != v->string) {
            *out = (int64_t)x;
            return 1;
        }
    }
    return 0;
}

const char *tj_as_string(const tj_value *v)
{
    return v && v->kind == TJ_STRING ? v->string : NULL;
}

tj_value *tj_new_int(int64_t value)
{
    tj_value *v = tj_new(TJ_NUMBER);
    if (v) {
        v->is_int = 1;
        v->integer = value;
        v->number = (double)value;
    }
    return v;
}

tj_value *tj_new_string(const char *s)
{
    tj_value *v = tj_new(TJ_STRING);
    if (!v)
        return NULL;
    v->len = strlen(s);
    if (!(v->string = malloc(v->len + 1))) {
        free(v);
        return NULL;
    }
    memcpy(v->string, s, v->len + 1);
    return v;
}

int tj_append(tj_value *array, tj_value *v)
{
    if (!v || !array || array->kind != TJ_ARRAY || !tj_grow(array)) {
        tj_free(v);
        return 0;
    }
    array->items[array->count++] = v;
    return 1;
}

int tj_set(tj_value *object, const char *key, tj_value *v)
{
    char *k;
    if (!v || !object || object->kind != TJ_OBJECT) {
        tj_free(v);
        return 0;
    }
    for (int32_t i = 0; i < object->count; i++)
        if (strcmp(object->keys[i], key) == 0) {
            tj_free(object->items[i]);
            object->items[i] = v;
            return 1;
        }
    if (!tj_grow(object) || !(k = malloc(strlen(key) + 1))) {
        tj_free(v);
        return 0;
    }
    memcpy(k, key, strlen(key) + 1);
    object->keys[object->count] = k;
    object->items[object->count++] = v;
    return 1;
}

/* ---- writer ------------------------------------------------------------- */

typedef struct tj_buf {
    char *p;
    size_t n, cap;
    int oom;
} tj_buf;

static void tj_put(tj_buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        char *p;
        while (cap < b->n + n + 1)
            cap *= 2;
        if (!(p = realloc(b->p, cap))) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void tj_put_string(tj_buf *b, const char *s, size_t n)
{
    tj_put(b, "\"", 1);
    for (size_t k = 0; k < n; k++) {
        unsigned char c = (unsigned char)s[k];
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            tj_put(b, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            tj_put(b, esc, 6);
        } else {
            tj_put(b, (const char *)&s[k], 1);
        }
    }
    tj_put(b, "\"", 1);
}

static void tj_put_value(tj_buf *b, const tj_value *v)
{
    char num[40];
    switch (v->kind) {
    case TJ_NULL:
        tj_put(b, "null", 4);
        break;
    case TJ_BOOL:
        tj_put(b, v->boolean ? "true" : "false", v->boolean ? 4 : 5);
        break;
    case TJ_NUMBER:
        if (v->is_int)
            snprintf(num, sizeof num, "%lld", (long long)v->integer);
        else if (isfinite(v->number))
            snprintf(num, sizeof num, "%.17g", v->number);
        else
            snprintf(num, sizeof num, "null");
        tj_put(b, num, strlen(num));
        break;
    case TJ_STRING:
        tj_put_string(b, v->string, v->len);
        break;
    default:
        tj_put(b, v->kind == TJ_OBJECT ? "{" : "[", 1);
        for (int32_t k = 0; k < v->count; k++) {
            if (k)
                tj_put(b, ",", 1);
            if (v->kind == TJ_OBJECT) {
                tj_put_string(b, v->keys[k], strlen(v->keys[k]));
                tj_put(b, ":", 1);
            }
            tj_put_value(b, v->items[k]);
        }
        tj_put(b, v->kind == TJ_OBJECT ? "}" : "]", 1);
        break;
    }
}

char *tj_write(const tj_value *v, size_t *out_len)
{
    tj_buf b = {NULL, 0, 0, 0};
    tj_put_value(&b, v);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    if (out_len)
        *out_len = b.n;
    return b.p;
}
