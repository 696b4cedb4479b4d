/* Decoding plugin fields by type, as text and as JSON. */
#include "fields.h"

#include <string.h>

#include "cli.h"

const char *cli_field_type_name(int32_t type)
{
    static const char *const names[PRT_FIELD_TYPE_COUNT] = {
        "int8",    "int16",    "int32", "int64", "float16", "float32",
        "float64", "bfloat16", "char",  "dims",  "bytes"};
    return type >= 0 && type < PRT_FIELD_TYPE_COUNT ? names[type] : "unknown";
}

/* Element i as a double, for the numeric types. */
static double number(const prt_field *fd, int64_t i)
{
    const void *p = fd->data;
    switch (fd->type) {
    case PRT_FIELD_INT8:
        return ((const int8_t *)p)[i];
    case PRT_FIELD_INT16:
        return ((const int16_t *)p)[i];
    case PRT_FIELD_INT32:
        return ((const int32_t *)p)[i];
    case PRT_FIELD_INT64:
        return (double)((const int64_t *)p)[i];
    case PRT_FIELD_FLOAT16:
        return prt_half_to_float(((const uint16_t *)p)[i]);
    case PRT_FIELD_FLOAT32:
        return ((const float *)p)[i];
    case PRT_FIELD_FLOAT64:
        return ((const double *)p)[i];
    case PRT_FIELD_BFLOAT16:
        return prt_bf16_to_float(((const uint16_t *)p)[i]);
    default:
        return 0.0;
    }
}

static int is_integer_type(int32_t t)
{
    return t == PRT_FIELD_INT8 || t == PRT_FIELD_INT16 || t == PRT_FIELD_INT32 ||
           t == PRT_FIELD_INT64;
}

/* Dims as everywhere else in the program's text (cli_format_dims). */
static void print_dims(FILE *f, const prt_dims *d)
{
    char buf[PRT_MAX_DIMS * 24 + 8];
    if (d->nb_dims < 0 || d->nb_dims > PRT_MAX_DIMS) {
        fputs("<invalid>", f);
        return;
    }
    fputs(cli_format_dims(d, buf, sizeof buf), f);
}

static void print_string(FILE *f, const char *s, int64_t n)
{
    fputc('"', f);
    for (int64_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            fprintf(f, "\\x%02x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

void cli_field_print(FILE *f, const prt_field *fd, int64_t max_elems)
{
    int64_t n = fd->length, shown;
    if (n < 0 || (n > 0 && !fd->data)) {
        fputs("<invalid>", f);
        return;
    }
    if (fd->type == PRT_FIELD_CHAR) {
        print_string(f, fd->data, n);
        return;
    }
    shown = max_elems > 0 && n > max_elems ? max_elems : n;
    if (fd->type == PRT_FIELD_BYTES) {
        for (int64_t i = 0; i < shown; i++)
            fprintf(f, "%02x", ((const unsigned char *)fd->data)[i]);
        if (shown < n)
            fprintf(f, "... (%lld bytes)", (long long)n);
        return;
    }
    if (n != 1)
        fputc('[', f);
    for (int64_t i = 0; i < shown; i++) {
        if (i)
            fputs(", ", f);
        if (fd->type == PRT_FIELD_DIMS)
            print_dims(f, &((const prt_dims *)fd->data)[i]);
        else if (fd->type == PRT_FIELD_INT64)
            fprintf(f, "%lld", (long long)((const int64_t *)fd->data)[i]);
        else if (is_integer_type(fd->type))
            fprintf(f, "%.0f", number(fd, i));
        else if (fd->type == PRT_FIELD_FLOAT64)
            fprintf(f, "%.17g", number(fd, i));
        else if (fd->type >= 0 && fd->type < PRT_FIELD_TYPE_COUNT)
            fprintf(f, "%.9g", number(fd, i));
        else
            fputs("?", f);
    }
    if (shown < n)
        fprintf(f, ", ... (%lld values)", (long long)n);
    if (n != 1)
        fputc(']', f);
}

void cli_json_dims(json_writer *w, const char *key, const prt_dims *d)
{
    json_begin_array(w, key);
    for (int32_t i = 0; i < d->nb_dims && i < PRT_MAX_DIMS; i++)
        json_int(w, NULL, d->d[i]);
    json_end_array(w);
}

void cli_field_json(json_writer *w, const prt_field *fd)
{
    int64_t n = fd->length;
    int valid = n >= 0 && (n == 0 || fd->data);
    json_begin_object(w, NULL);
    json_string(w, "name", fd->name ? fd->name : "");
    json_string(w, "type", cli_field_type_name(fd->type));
    json_int(w, "length", n);
    if (!valid || fd->type < 0 || fd->type >= PRT_FIELD_TYPE_COUNT) {
        json_null(w, "value");
    } else if (fd->type == PRT_FIELD_CHAR) {
        json_string_n(w, "value", fd->data, (size_t)n);
    } else if (fd->type == PRT_FIELD_BYTES) {
        json_hex(w, "value", fd->data, (size_t)n);
    } else {
        json_begin_array(w, "value");
        for (int64_t i = 0; i < n; i++) {
            if (fd->type == PRT_FIELD_DIMS) {
                cli_json_dims(w, NULL, &((const prt_dims *)fd->data)[i]);
            } else if (fd->type == PRT_FIELD_INT64) {
                json_int(w, NULL, ((const int64_t *)fd->data)[i]);
            } else if (is_integer_type(fd->type)) {
                json_int(w, NULL, (int64_t)number(fd, i));
            } else if (fd->type == PRT_FIELD_FLOAT64) {
                json_double(w, NULL, number(fd, i));
            } else {
                json_float(w, NULL, (float)number(fd, i));
            }
        }
        json_end_array(w);
    }
    json_end_object(w);
}
