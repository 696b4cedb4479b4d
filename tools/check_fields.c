/* Example field values from JSON (check_fields.h). */
#include "check_fields.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "describe.h"
#include "fields.h"

#define JSON_DEPTH 64

typedef struct reader {
    const char *s;
    size_t n, i;
    char *why;
    size_t cap;
} reader;

static int line_of(const reader *r)
{
    int line = 1;
    for (size_t k = 0; k < r->i && k < r->n; k++)
        line += r->s[k] == '\n';
    return line;
}

static int bad(reader *r, const char *what)
{
    return chk_say(r->why, r->cap, "line %d: %s", line_of(r), what);
}

static void skip_space(reader *r)
{
    while (r->i < r->n && (r->s[r->i] == ' ' || r->s[r->i] == '\t' ||
                           r->s[r->i] == '\n' || r->s[r->i] == '\r'))
        r->i++;
}

static int hex4(reader *r, unsigned *out)
{
    unsigned v = 0;
    if (r->n - r->i < 4)
        return bad(r, "a \\u escape needs four hex digits");
    for (int k = 0; k < 4; k++) {
        char ch = r->s[r->i++];
        v <<= 4;
        if (ch >= '0' && ch <= '9')
            v |= (unsigned)(ch - '0');
        else if (ch >= 'a' && ch <= 'f')
            v |= (unsigned)(ch - 'a' + 10);
        else if (ch >= 'A' && ch <= 'F')
            v |= (unsigned)(ch - 'A' + 10);
        else
            return bad(r, "a \\u escape needs four hex digits");
    }
    *out = v;
    return 0;
}

static size_t put_utf8(unsigned cp, char *o)
{
    if (cp < 0x80)
        return o[0] = (char)cp, 1;
    if (cp < 0x800)
        return o[0] = (char)(0xC0 | cp >> 6), o[1] = (char)(0x80 | (cp & 63)), 2;
    if (cp < 0x10000)
        return o[0] = (char)(0xE0 | cp >> 12), o[1] = (char)(0x80 | (cp >> 6 & 63)),
               o[2] = (char)(0x80 | (cp & 63)), 3;
    return o[0] = (char)(0xF0 | cp >> 18), o[1] = (char)(0x80 | (cp >> 12 & 63)),
           o[2] = (char)(0x80 | (cp >> 6 & 63)), o[3] = (char)(0x80 | (cp & 63)), 4;
}

/* A string at r->i (at its opening quote): a malloc'd copy in *out. */
static int read_string(reader *r, char **out, size_t *len)
{
    size_t cap = 16, n = 0;
    char *b = malloc(cap);
    if (!b)
        return bad(r, "out of memory");
    r->i++;
    for (;;) {
        unsigned char ch;
        if (n + 8 > cap) {
            char *g = realloc(b, cap *= 2);
            if (!g)
                return free(b), bad(r, "out of memory");
            b = g;
        }
        if (r->i >= r->n)
            return free(b), bad(r, "a string does not end");
        ch = (unsigned char)r->s[r->i++];
        if (ch == '"')
            break;
        if (ch < 0x20)
            return free(b), bad(r, "a control character inside a string");
        if (ch != '\\') {
            b[n++] = (char)ch;
            continue;
        }
        if (r->i >= r->n)
            return free(b), bad(r, "a string does not end");
        ch = (unsigned char)r->s[r->i++];
        switch (ch) {
        case '"':
        case '\\':
        case '/':
            b[n++] = (char)ch;
            break;
        case 'b':
            b[n++] = '\b';
            break;
        case 'f':
            b[n++] = '\f';
            break;
        case 'n':
            b[n++] = '\n';
            break;
        case 'r':
            b[n++] = '\r';
            break;
        case 't':
            b[n++] = '\t';
            break;
        case 'u': {
            unsigned cp, lo;
            if (hex4(r, &cp))
                return free(b), -1;
            if (cp >= 0xD800 && cp < 0xDC00) {
                if (r->n - r->i < 2 || r->s[r->i] != '\\' || r->s[r->i + 1] != 'u')
                    return free(b), bad(r, "a lone surrogate in a \\u escape");
                r->i += 2;
                if (hex4(r, &lo))
                    return free(b), -1;
                if (lo < 0xDC00 || lo > 0xDFFF)
                    return free(b), bad(r, "a lone surrogate in a \\u escape");
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                return free(b), bad(r, "a lone surrogate in a \\u escape");
            }
            n += put_utf8(cp, b + n);
            break;
        }
        default:
            return free(b), bad(r, "an unknown escape in a string");
        }
    }
    b[n] = '\0';
    *out = b;
    *len = n;
    return 0;
}

static int read_number(reader *r, chk_json *j)
{
    size_t start = r->i;
    int digits = 0;
    if (r->s[r->i] == '-')
        r->i++;
    while (r->i < r->n && r->s[r->i] >= '0' && r->s[r->i] <= '9')
        r->i++, digits++;
    if (digits == 0 || (digits > 1 && r->s[start + (r->s[start] == '-')] == '0'))
        return bad(r, "a malformed number");
    if (r->i < r->n && r->s[r->i] == '.') {
        r->i++, digits = 0;
        while (r->i < r->n && r->s[r->i] >= '0' && r->s[r->i] <= '9')
            r->i++, digits++;
        if (!digits)
            return bad(r, "a malformed number");
    }
    if (r->i < r->n && (r->s[r->i] == 'e' || r->s[r->i] == 'E')) {
        r->i++, digits = 0;
        if (r->i < r->n && (r->s[r->i] == '+' || r->s[r->i] == '-'))
            r->i++;
        while (r->i < r->n && r->s[r->i] >= '0' && r->s[r->i] <= '9')
            r->i++, digits++;
        if (!digits)
            return bad(r, "a malformed number");
    }
    j->type = CHK_JSON_NUMBER;
    j->text = malloc(r->i - start + 1);
    if (!j->text)
        return bad(r, "out of memory");
    memcpy(j->text, r->s + start, r->i - start);
    j->text[r->i - start] = '\0';
    return 0;
}

static int read_value(reader *r, chk_json *j, int depth);
static void json_clear(chk_json *j);

/* An array or an object, at its opening bracket. */
static int read_container(reader *r, chk_json *j, int depth, int object)
{
    char close = object ? '}' : ']';
    int32_t cap = 0;
    j->type = object ? CHK_JSON_OBJECT : CHK_JSON_ARRAY;
    r->i++;
    skip_space(r);
    if (r->i < r->n && r->s[r->i] == close) {
        r->i++;
        return 0;
    }
    for (;;) {
        if (j->count == cap) {
            int32_t ncap = cap ? 2 * cap : 4;
            chk_json *items = realloc(j->items, sizeof *items * (size_t)ncap);
            char **keys = object ? realloc(j->keys, sizeof *keys * (size_t)ncap) : NULL;
            if (items)
                j->items = items;
            if (keys)
                j->keys = keys;
            if (!items || (object && !keys))
                return bad(r, "out of memory");
            cap = ncap;
        }
        memset(&j->items[j->count], 0, sizeof j->items[0]);
        skip_space(r);
        if (object) {
            size_t len;
            if (r->i >= r->n || r->s[r->i] != '"')
                return bad(r, "an object member must start with a quoted name");
            if (read_string(r, &j->keys[j->count], &len))
                return -1;
            skip_space(r);
            if (r->i >= r->n || r->s[r->i] != ':')
                return free(j->keys[j->count]),
                       bad(r, "':' expected after a member name");
            r->i++;
        }
        if (read_value(r, &j->items[j->count], depth + 1)) {
            if (object)
                free(j->keys[j->count]);
            json_clear(&j->items[j->count]);
            return -1;
        }
        j->count++;
        skip_space(r);
        if (r->i < r->n && r->s[r->i] == ',') {
            r->i++;
            continue;
        }
        if (r->i < r->n && r->s[r->i] == close) {
            r->i++;
            return 0;
        }
        return bad(r, object ? "',' or '}' expected" : "',' or ']' expected");
    }
}

static int read_value(reader *r, chk_json *j, int depth)
{
    static const struct {
        const char *word;
        int32_t type, value;
    } words[] = {{"true", CHK_JSON_BOOL, 1},
                 {"false", CHK_JSON_BOOL, 0},
                 {"null", CHK_JSON_NULL, 0}};
    if (depth > JSON_DEPTH)
        return bad(r, "nested too deeply");
    skip_space(r);
    if (r->i >= r->n)
        return bad(r, "a value expected");
    switch (r->s[r->i]) {
    case '{':
        return read_container(r, j, depth, 1);
    case '[':
        return read_container(r, j, depth, 0);
    case '"':
        j->type = CHK_JSON_STRING;
        return read_string(r, &j->text, &j->len);
    default:
        break;
    }
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
        size_t len = strlen(words[w].word);
        if (r->n - r->i >= len && memcmp(r->s + r->i, words[w].word, len) == 0) {
            r->i += len;
            j->type = words[w].type;
            j->boolean = words[w].value;
            return 0;
        }
    }
    if (r->s[r->i] == '-' || (r->s[r->i] >= '0' && r->s[r->i] <= '9'))
        return read_number(r, j);
    return bad(r, "a value expected");
}

static void json_clear(chk_json *j)
{
    for (int32_t k = 0; k < j->count; k++) {
        json_clear(&j->items[k]);
        if (j->keys)
            free(j->keys[k]);
    }
    free(j->items);
    free(j->keys);
    free(j->text);
}

void chk_json_free(chk_json *j)
{
    if (!j)
        return;
    json_clear(j);
    free(j);
}

int chk_json_parse(const char *text, size_t n, chk_json **out, char *why, size_t cap)
{
    reader r = {text, n, 0, why, cap};
    chk_json *j = calloc(1, sizeof *j);
    if (!j)
        return chk_say(why, cap, "out of memory");
    if (read_value(&r, j, 0) != 0) {
        chk_json_free(j);
        return -1;
    }
    skip_space(&r);
    if (r.i != n) {
        chk_json_free(j);
        return bad(&r, "text after the document");
    }
    *out = j;
    return 0;
}

/* ---- keys ---------------------------------------------------------------------- */

int chk_key_matches(const char *pattern, const char *ns, const char *name,
                    const char *version)
{
    char key[3 * CHK_NAME_MAX + 8];
    size_t n;
    cli_plugin_key(ns, name, version, key, sizeof key);
    if (strncmp(pattern, "::", 2) == 0 && !ns[0])
        pattern += 2;
    if (strcmp(pattern, key) == 0)
        return 1;
    n = strlen(key) - strlen(version) - 1; /* the key without "@version" */
    return !strchr(pattern, '@') && strlen(pattern) == n && strncmp(pattern, key, n) == 0;
}

/* ---- values ---------------------------------------------------------------------- */

/* The numbers of a value: one number, or a list of them. */
static int numbers(const chk_json *v, const chk_json **items, int32_t *count)
{
    if (v->type == CHK_JSON_NUMBER) {
        *items = v;
        *count = 1;
        return 0;
    }
    if (v->type != CHK_JSON_ARRAY)
        return -1;
    for (int32_t k = 0; k < v->count; k++)
        if (v->items[k].type != CHK_JSON_NUMBER)
            return -1;
    *items = v->items;
    *count = v->count;
    return 0;
}

static int integer(const char *text, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    long long x;
    if (strpbrk(text, ".eE"))
        return -1;
    errno = 0;
    x = strtoll(text, &end, 10);
    if (errno || *end || x < lo || x > hi)
        return -1;
    *out = x;
    return 0;
}

static int fill_dims(const chk_json *v, prt_dims *d)
{
    if (v->type != CHK_JSON_ARRAY || v->count > PRT_MAX_DIMS)
        return -1;
    d->nb_dims = v->count;
    for (int32_t k = 0; k < v->count; k++)
        if (v->items[k].type != CHK_JSON_NUMBER ||
            integer(v->items[k].text, -1, INT64_MAX, &d->d[k]))
            return -1;
    return 0;
}

/* One field's data from its JSON value: *data (malloc'd) of *length
 * elements. */
static int convert(const chk_json *v, int32_t type, void **data, int64_t *length)
{
    static const int64_t lo[] = {INT8_MIN, INT16_MIN, INT32_MIN, INT64_MIN};
    static const int64_t hi[] = {INT8_MAX, INT16_MAX, INT32_MAX, INT64_MAX};
    const chk_json *items;
    int32_t n;
    unsigned char *out;
    size_t es = chk_field_type_size(type);
    if (type == PRT_FIELD_CHAR ||
        (type == PRT_FIELD_BYTES && v->type == CHK_JSON_STRING)) {
        if (v->type != CHK_JSON_STRING)
            return -1;
        *data = malloc(v->len + 1);
        if (!*data)
            return -1;
        memcpy(*data, v->text, v->len + 1);
        *length = (int64_t)v->len;
        return 0;
    }
    if (type == PRT_FIELD_DIMS) {
        int several = v->type == CHK_JSON_ARRAY && v->count > 0 &&
                      v->items[0].type == CHK_JSON_ARRAY;
        n = several ? v->count : 1;
        out = calloc((size_t)n + 1, es);
        if (!out)
            return -1;
        for (int32_t k = 0; k < n; k++)
            if (fill_dims(several ? &v->items[k] : v, (prt_dims *)out + k))
                return free(out), -1;
        *data = out;
        *length = n;
        return 0;
    }
    if (numbers(v, &items, &n))
        return -1;
    out = calloc((size_t)n + 1, es);
    if (!out)
        return -1;
    for (int32_t k = 0; k < n; k++) {
        int64_t x;
        double f = strtod(items[k].text, NULL);
        unsigned char *e = out + (size_t)k * es;
        uint16_t h;
        switch (type) {
        case PRT_FIELD_INT8:
        case PRT_FIELD_INT16:
        case PRT_FIELD_INT32:
        case PRT_FIELD_INT64:
            if (integer(items[k].text, lo[type], hi[type], &x))
                return free(out), -1;
            if (type == PRT_FIELD_INT8)
                *(int8_t *)e = (int8_t)x;
            else if (type == PRT_FIELD_INT16)
                *(int16_t *)(void *)e = (int16_t)x;
            else if (type == PRT_FIELD_INT32)
                *(int32_t *)(void *)e = (int32_t)x;
            else
                *(int64_t *)(void *)e = x;
            break;
        case PRT_FIELD_BYTES:
            if (integer(items[k].text, 0, 255, &x))
                return free(out), -1;
            *e = (unsigned char)x;
            break;
        case PRT_FIELD_FLOAT32:
            *(float *)(void *)e = (float)f;
            break;
        case PRT_FIELD_FLOAT64:
            *(double *)(void *)e = f;
            break;
        default: /* the 16-bit floats */
            h = type == PRT_FIELD_FLOAT16 ? prt_float_to_half((float)f)
                                          : prt_float_to_bf16((float)f);
            memcpy(e, &h, sizeof h);
        }
    }
    *data = out;
    *length = n;
    return 0;
}

static const char *expected(int32_t type)
{
    switch (type) {
    case PRT_FIELD_CHAR:
        return "a string";
    case PRT_FIELD_DIMS:
        return "a list of integers or a list of such lists";
    case PRT_FIELD_BYTES:
        return "a string or a list of integers 0..255";
    case PRT_FIELD_FLOAT16:
    case PRT_FIELD_FLOAT32:
    case PRT_FIELD_FLOAT64:
    case PRT_FIELD_BFLOAT16:
        return "a number or a list of numbers";
    default:
        return "an integer in range or a list of them";
    }
}

int chk_fields_from_json(const chk_json *values, const chk_creator_info *info,
                         prt_field_collection **out, char *why, size_t cap)
{
    prt_field_collection *fc;
    prt_field *f;
    if (values->type != CHK_JSON_OBJECT)
        return chk_say(why, cap, "its value must be an object of field values");
    fc = calloc(1, sizeof *fc);
    f = calloc((size_t)values->count + 1, sizeof *f);
    if (!fc || !f) {
        free(fc);
        free(f);
        return chk_say(why, cap, "out of memory");
    }
    fc->fields = f;
    for (int32_t k = 0; k < values->count; k++) {
        const chk_schema_info *s = NULL;
        void *data = NULL;
        int64_t length = 0;
        for (int32_t i = 0; i < info->nb_fields && !s; i++)
            if (strcmp(info->fields[i].name, values->keys[k]) == 0)
                s = &info->fields[i];
        if (!s) {
            chk_fields_free(fc);
            return chk_say(why, cap, "field '%s' is not in the creator's schema",
                           values->keys[k]);
        }
        if (convert(&values->items[k], s->type, &data, &length)) {
            chk_fields_free(fc);
            return chk_say(why, cap, "field '%s' is %s, so its value must be %s", s->name,
                           cli_field_type_name(s->type), expected(s->type));
        }
        f[k] = (prt_field){cli_strdup(s->name), data, s->type, length};
        fc->nb_fields = k + 1;
        if (!f[k].name) {
            chk_fields_free(fc);
            return chk_say(why, cap, "out of memory");
        }
    }
    *out = fc;
    return 0;
}
