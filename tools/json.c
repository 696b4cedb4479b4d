/* Streaming JSON with two-space indentation. */
#include "json.h"

#include <math.h>
#include <string.h>

#include "text.h"

void json_init(json_writer *w, FILE *f)
{
    w->f = f;
    w->depth = 0;
    w->count[0] = 0;
}

static void put_string(FILE *f, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', f);
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        unsigned cp = 0;
        size_t len = cli_utf8_next(s + i, n - i, &cp);
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc(c, f);
        } else if (c == '\n') {
            fputs("\\n", f);
        } else if (c == '\t') {
            fputs("\\t", f);
        } else if (c == '\r') {
            fputs("\\r", f);
        } else if (len == 0) {
            /* Not UTF-8: keep the byte as its Latin-1 code point. */
            fprintf(f, "\\u%04x", c);
        } else if (cli_is_control(cp)) {
            /* DEL and C1 are valid JSON raw, but a terminal showing the
             * document would act on them (U+009B is CSI). */
            fprintf(f, "\\u%04x", cp);
        } else {
            fwrite(s + i, 1, len, f);
        }
        i += len ? len : 1;
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

void json_begin_object(json_writer *w, const char *key)
{
    open_scope(w, key, '{');
}
void json_end_object(json_writer *w)
{
    close_scope(w, '}');
}
void json_begin_array(json_writer *w, const char *key)
{
    open_scope(w, key, '[');
}
void json_end_array(json_writer *w)
{
    close_scope(w, ']');
}

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

void json_finish(json_writer *w)
{
    fputc('\n', w->f);
}
