/*
 * A streaming JSON writer for `plugrt inspect --json` and `plugrt plugins
 * --json`. Output is always valid JSON: strings are escaped (control
 * characters, quotes, backslashes, and bytes that are not UTF-8 as
 * \u00XX), non-finite numbers become null, 64-bit hashes are written as
 * hex strings so no reader loses digits.
 */
#ifndef PLUGRT_TOOLS_JSON_H
#define PLUGRT_TOOLS_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

typedef struct json_writer {
    FILE *f;
    int depth;
    int count[JSON_MAX_DEPTH]; /* members written at each level */
} json_writer;

void json_init(json_writer *w, FILE *f);
/* `key` names the member inside an object; pass NULL inside an array and at
 * the top. */
void json_begin_object(json_writer *w, const char *key);
void json_end_object(json_writer *w);
void json_begin_array(json_writer *w, const char *key);
void json_end_array(json_writer *w);
void json_string(json_writer *w, const char *key, const char *s);
void json_string_n(json_writer *w, const char *key, const char *s, size_t n);
void json_int(json_writer *w, const char *key, int64_t v);
void json_double(json_writer *w, const char *key, double v);
/* A float32 value with the 9 digits that round-trip it. */
void json_float(json_writer *w, const char *key, float v);
/* Bytes as a lowercase hex string. */
void json_hex(json_writer *w, const char *key, const void *bytes, size_t n);
void json_bool(json_writer *w, const char *key, int v);
void json_null(json_writer *w, const char *key);
/* Ends the document with a newline. */
void json_finish(json_writer *w);

#endif /* PLUGRT_TOOLS_JSON_H */
