/*
 * A small JSON document model for the backend: the server hands model
 * configurations over as JSON text, and auto-complete hands them back.
 * Parsing is strict RFC 8259 (UTF-8 text, no comments, no trailing commas),
 * bounded in nesting depth; objects keep their keys in order. Values are
 * owned by their parent; tj_free frees a whole tree.
 */
#ifndef PLUGRT_TRITON_JSON_H
#define PLUGRT_TRITON_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef enum tj_kind {
    TJ_NULL = 0,
    TJ_BOOL = 1,
    TJ_NUMBER = 2,
    TJ_STRING = 3,
    TJ_ARRAY = 4,
    TJ_OBJECT = 5
} tj_kind;

typedef struct tj_value tj_value;
struct tj_value {
    int32_t kind;    /* tj_kind */
    int32_t boolean; /* TJ_BOOL */
    double number;   /* TJ_NUMBER */
    /* TJ_NUMBER written as an integer that fits int64: its exact value. */
    int32_t is_int;
    int64_t integer;
    char *string; /* TJ_STRING: NUL-terminated UTF-8 (may hold NULs; len counts) */
    size_t len;
    /* TJ_ARRAY and TJ_OBJECT: count items; objects name each by keys[i]. */
    int32_t count, cap;
    tj_value **items;
    char **keys;
};

/* Parses `len` bytes. NULL on error, with a message (and byte offset) in
 * err. The caller owns the result. */
tj_value *tj_parse(const char *text, size_t len, char *err, size_t err_size);
void tj_free(tj_value *v);

/* The member `key` of an object (NULL if v is not an object or has none). */
tj_value *tj_get(const tj_value *v, const char *key);
/* Integer value of a number, or of a string holding a decimal integer (the
 * protobuf JSON mapping writes int64 fields as strings). 0 if it is
 * neither, 1 on success. */
int tj_as_int(const tj_value *v, int64_t *out);
/* The string of a TJ_STRING, else NULL. */
const char *tj_as_string(const tj_value *v);

/* Builders: NULL when out of memory. */
tj_value *tj_new(int32_t kind);
tj_value *tj_new_int(int64_t value);
tj_value *tj_new_string(const char *s);
/* Adds v to an array (1), or sets an object's member, replacing an old one
 * (1); 0 when out of memory, and v is then freed. */
int tj_append(tj_value *array, tj_value *v);
int tj_set(tj_value *object, const char *key, tj_value *v);

/* Compact JSON text of v, NUL-terminated, in memory the caller frees with
 * free(); NULL when out of memory. */
char *tj_write(const tj_value *v, size_t *out_len);

#endif /* PLUGRT_TRITON_JSON_H */
