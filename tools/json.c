/* Streaming JSON with two-space indentation. */
#include "json.h"

#include <math.h>
#include <string.h>

void json_init(json_writer *w, FILE *f)
{
    w->f = f;
    w->depth = 0;
    w->count[0] = 0;
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t len;
    uint32_t cp;
    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xe0) == 0xc0) {
        len = 2;
        cp = s[0] & 0x1fu;
    } else if ((s[0] & 0xf0) == 0xe0) {
        len = 3;
        cp = s[0] & 0x0fu;
    } else if ((s[0] & 0xf8) == 0xf0) {
        len = 4;
        cp = s[0] & 0x07u;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    /* Overlong forms, surrogates and values past U+10FFFF are invalid. */
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return len;
}

static void put_string(FILE *f, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', f);
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        size_t len;
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc(c, f);
            i++;
        } else if (c == '\n') {
            fputs("\\n", f);
            i++;
        } else if (c == '\t') {
            fputs("\\t", f);
            i++;
        } else if (c == '\r') {
            fputs("\\r", f);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(f, "\\u%04x", c);
            i++;
        } else if ((len = utf8_len(s + i, n - i)) == 0) {
            /* Not UTF-8: keep the byte as its Latin-1 code point. */
            fprintf(f, "\\u%04x", c);
            i++;
        } else {
            fwrite(s + i, 1, len, f);
            i += len;
        }
    }
    fputc('"', f);
}

/* Comma, newline, indentation and key before a member. */
static void member(json_writer *w, const char *key)
{
    if (w->depth > 0) {
        fputs(w->count[w->depth]++ ? ",\n" : "\n", w->f);
        for (int i = 0; i < w->depth; i++)
            fputs("  ", w->f);
    }
    if (key) {
        put_string(w->f, key, strlen(key));
        fputs(": ", w->f);
    }
}

static void open_scope(json_writer *w, const char *key, char c)
{
    member(w, key);
    fputc(c, w->f);
    if (w->depth + 1 < JSON_MAX_DEPTH)
        w->depth++;
    w->count[w->depth] = 0;
}

static void close_scope(json_writer *w, char c)
{
    int had = w->count[w->depth];
    if (w->depth > 0)
        w->depth--;
    if (had) {
        fputc('\n', w->f);
        for (int i = 0; i < w->depth; i++)
            fputs("  ", w->f);
    }
    fputc(c, w->f);
}

void json_begin_object(json_writer *w, const char *key) { open_scope(w, key, '{'); }
void json_end_object(json_writer *w) { close_scope(w, '}'); }
void json_begin_array(json_writer *w, const char *key) { open_scope(w, key, '['); }
void json_end_array(json_writer *w) { close_scope(w, ']'); }

void json_string(json_writer *w, const char *key, const char *s)
{
    member(w, key);
    if (s)
        put_string(w->f, s, strlen(s));
    else
        fputs("null", w->f);
}

void json_string_n(json_writer *w, const char *key, const char *s, size_t n)
{
    member(w, key);
    put_string(w->f, s ? s : "", s ? n : 0);
}

void json_int(json_writer *w, const char *key, int64_t v)
{
    member(w, key);
    fprintf(w->f, "%lld", (long long)v);
}

void json_double(json_writer *w, const char *key, double v)
{
    member(w, key);
    if (isfinite(v))
        fprintf(w->f, "%.17g", v);
    else
        fputs("null", w->f);
}

void json_float(json_writer *w, const char *key, float v)
{
    member(w, key);
    if (isfinite(v))
        fprintf(w->f, "%.9g", (double)v);
    else
        fputs("null", w->f);
}

void json_hex(json_writer *w, const char *key, const void *bytes, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    const unsigned char *b = bytes;
    member(w, key);
    fputc('"', w->f);
    for (size_t i = 0; i < n; i++) {
        fputc(digits[b[i] >> 4], w->f);
        fputc(digits[b[i] & 15], w->f);
    }
    fputc('"', w->f);
}

void json_bool(json_writer *w, const char *key, int v)
{
    member(w, key);
    fputs(v ? "true" : "false", w->f);
}

void json_null(json_writer *w, const char *key)
{
    member(w, key);
    fputs("null", w->f);
}

void json_finish(json_writer *w) { fputc('\n', w->f); }
