/*
 * Example field values for `plugrt check --fields FILE.json`: a small JSON
 * reader (RFC 8259; numbers kept as text so integers stay exact) and the
 * conversion of one plugin's values to a field collection typed by its
 * creator's schema:
 *
 *   {"ext::RowTopK@1": {"k": 3, "axes": [0, 1], "mode": "max",
 *                       "shape": [[2, 3]], "blob": [1, 2, 255]}}
 *
 * integers and floats as numbers (a list for several), char fields as
 * strings, dims as a list of ints (one dims) or of lists (several), bytes
 * as a list of 0..255 or a string. Plugin keys are written as `plugrt
 * plugins` prints them ("NonZeroPlugin@1", "example::AddInPlace@1").
 */
#ifndef PLUGRT_TOOLS_CHECK_FIELDS_H
#define PLUGRT_TOOLS_CHECK_FIELDS_H

#include "check.h"

typedef enum chk_json_type {
    CHK_JSON_NULL,
    CHK_JSON_BOOL,
    CHK_JSON_NUMBER,
    CHK_JSON_STRING,
    CHK_JSON_ARRAY,
    CHK_JSON_OBJECT
} chk_json_type;

typedef struct chk_json chk_json;
struct chk_json {
    int32_t type;
    int32_t boolean;
    char *text; /* NUMBER: its text; STRING: its bytes (NUL-terminated copy) */
    size_t len; /* STRING: bytes, which may include NUL */
    int32_t count;
    chk_json *items; /* ARRAY, OBJECT: count values */
    char **keys;     /* OBJECT: count member names */
};

/* Parses a whole document into *out (free with chk_json_free). 0, or -1
 * with the line and the reason in why. */
int chk_json_parse(const char *text, size_t n, chk_json **out, char *why, size_t cap);
void chk_json_free(chk_json *doc);

/* 1 if `pattern` names this creator: "ns::name@version", or without
 * "@version" (any version); an empty namespace may be written "::name". */
int chk_key_matches(const char *pattern, const char *ns, const char *name,
                    const char *version);

/* The field collection for one plugin's JSON object, typed by its schema
 * (free with chk_fields_free). 0, or -1 with why naming the field. */
int chk_fields_from_json(const chk_json *values, const chk_creator_info *info,
                         prt_field_collection **out, char *why, size_t cap);

#endif /* PLUGRT_TOOLS_CHECK_FIELDS_H */
