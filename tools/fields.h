/* Plugin fields for people and for JSON: values decoded by their type
 * (integers, floats including float16/bfloat16, strings, dims, bytes). */
#ifndef PLUGRT_TOOLS_FIELDS_H
#define PLUGRT_TOOLS_FIELDS_H

#include <stdio.h>

#include "json.h"
#include "plugrt/plugin.h"

/* "int32", "char", ...; "unknown" otherwise. */
const char *cli_field_type_name(int32_t type);
/* Writes the value: a string in quotes, one number, or [a, b, ...] with at
 * most `max_elems` elements shown (0: all). */
void cli_field_print(FILE *f, const prt_field *field, int64_t max_elems);
/* Dims as a JSON array of integers (-1 where dynamic). */
void cli_json_dims(json_writer *w, const char *key, const prt_dims *dims);
/* {"name", "type", "length", "value"}; strings as strings, dims as arrays
 * of arrays, bytes as a hex string. */
void cli_field_json(json_writer *w, const prt_field *field);

#endif /* PLUGRT_TOOLS_FIELDS_H */
