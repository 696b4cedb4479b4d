/* Describing an engine for people: I/O tensors and plugin keys, shared by
 * `plugrt build`'s summary, `plugrt inspect` and `plugrt run`. */
#ifndef PLUGRT_TOOLS_DESCRIBE_H
#define PLUGRT_TOOLS_DESCRIBE_H

#include <stdio.h>

#include "cli.h"

/* "example::circ_pad_plugin@1" ("NonZeroPlugin@1" in the empty namespace). */
char *cli_plugin_key(const char *plugin_namespace, const char *name, const char *version,
                     char *buf, size_t cap);
/* "dims 0, 2" for a data-dependent mask; "" when 0. */
char *cli_mask_str(uint32_t mask, char *buf, size_t cap);
/* Every input and output of the engine, inputs first: *out (free with
 * free()) holds *count entries, names borrowed from the engine. Reading one
 * allocates inside plugrt and can fail; then the error is printed and
 * CLI_FAIL returned, so no caller goes on with an I/O missing. */
int cli_engine_io(const prt_engine *engine, prt_io_info **out, int32_t *count);
/* One line per input and output: name, dtype, dims, data-dependent dims.
 * CLI_FAIL (printed) if the I/O cannot be read. */
int cli_print_io(FILE *f, const prt_engine *engine, const char *indent);
/* 1 if the layer's plugin is one of plugrt's built-in ops. */
int cli_is_builtin(const prt_layer_info *li);

/* `plugrt inspect MODEL.onnx` (inspect_onnx.c): the model's I/O, ops and
 * nodes as text or JSON; plugin ops are looked up in `reg`. An exit code. */
int cli_inspect_onnx(const char *path, const prt_registry *reg, int json, int verbose);

#endif /* PLUGRT_TOOLS_DESCRIBE_H */
