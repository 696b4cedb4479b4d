/*
 * What the files of the ONNX importer share. The importer uses only the
 * public API (include/plugrt/) and the protobuf-c code generated from the
 * system's onnx.proto at build time (onnx.pb-c.h); nothing of src/.
 *
 *   onnx_util.c    errors and warnings through the host services, safe
 *                  unpacking of untrusted protobuf bytes, a name table
 *   onnx_tensor.c  TensorProto -> dtype, dims and data (typed fields, raw
 *                  data, external files); prt_onnx_read_tensor_file
 *   onnx_fields.c  node attributes -> plugin fields, typed by a schema
 *   onnx_graph.c   topological order of the nodes, dangling inputs, cycles
 *   onnx_ops.c     the importer table and the choice of a node's creator
 *   onnx_parser.c  the parser object and the model walk
 */
#ifndef PLUGRT_ONNX_INTERNAL_H
#define PLUGRT_ONNX_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "onnx.pb-c.h"
#include "plugrt/onnx.h"

#if defined(__GNUC__)
#define ONNX_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define ONNX_PRINTF(a, b)
#endif

/* ---- errors and warnings (onnx_util.c) ----------------------------------- */

/* Records the calling thread's error (read by prt_last_error()) through the
 * public host services and returns `status`. */
prt_status onnx_error(prt_status status, const char *fmt, ...) ONNX_PRINTF(2, 3);
/* Like onnx_error, with ": <the current prt_last_error()>" appended, to say
 * where a failure of a plugrt call happened. */
prt_status onnx_error_wrap(prt_status status, const char *fmt, ...)
    ONNX_PRINTF(2, 3);
/* Sends a warning to the user's logger (prt_set_logger). */
void onnx_warn(const char *fmt, ...) ONNX_PRINTF(1, 2);

/* A proto string field: protobuf-c leaves absent strings NULL. */
static inline const char *onnx_str(const char *s) { return s ? s : ""; }

/* ---- untrusted bytes -> messages (onnx_util.c) --------------------------- */

/* Unpacks `size` bytes as a message of `desc`. Before protobuf-c sees them,
 * the bytes are walked once to check the wire format and to bound message
 * nesting (protobuf-c recurses once per level, so unbounded nesting in a
 * hostile file would exhaust the stack). `what` names the input in errors.
 * On success free *out with protobuf_c_message_free_unpacked(*out, NULL). */
prt_status onnx_unpack(const ProtobufCMessageDescriptor *desc, const void *bytes,
                       size_t size, const char *what, ProtobufCMessage **out);

/* Reads a whole file into memory the caller frees with free(). */
prt_status onnx_read_file(const char *path, const char *what, uint8_t **out,
                          size_t *out_size);

/* ---- a table of names (onnx_util.c) -------------------------------------- */

/* Open addressing over borrowed strings; values are int32. */
typedef struct onnx_names {
    const char **keys;
    int32_t *values;
    size_t cap; /* a power of two, or 0 */
    size_t count;
} onnx_names;

/* 0 and *value set when found, else -1. */
int onnx_names_get(const onnx_names *t, const char *key, int32_t *value);
/* Inserts or replaces. PRT_ERR_OUT_OF_MEMORY on failure (error recorded). */
prt_status onnx_names_put(onnx_names *t, const char *key, int32_t value);
void onnx_names_free(onnx_names *t);

/* ---- tensors (onnx_tensor.c) --------------------------------------------- */

/* A tensor's contents in plugrt's layout: dense, C order, little-endian. */
typedef struct onnx_tensor {
    int32_t dtype; /* prt_dtype */
    prt_dims dims;
    void *data;   /* malloc'd, never NULL after a successful load */
    size_t bytes; /* volume * element size */
} onnx_tensor;

/* ONNX TensorProto.DataType -> prt_dtype. PRT_ERR_UNSUPPORTED names `what`
 * (a tensor) and the ONNX type when plugrt has no such dtype. */
prt_status onnx_dtype_from_onnx(int32_t elem_type, const char *what,
                                int32_t *out);
/* "FLOAT", "STRING", ... for messages. */
const char *onnx_elem_type_name(int32_t elem_type);

/* Reads a TensorProto's contents: typed fields (float_data, int32_data,
 * int64_data, ...), raw_data, or external data in a file relative to
 * base_dir (NULL: external data is an error). `what` names the tensor in
 * errors. */
prt_status onnx_tensor_load(const Onnx__TensorProto *t, const char *base_dir,
                            const char *what, onnx_tensor *out);
void onnx_tensor_free(onnx_tensor *t);

/* ---- the import of one model (onnx_parser.c, onnx_ops.c) ----------------- */

/* One op mapping from prt_onnx_parser_map_op. */
typedef struct onnx_mapping {
    char *op_type;
    char *plugin_namespace;
    char *plugin_name;
    char *plugin_version;
} onnx_mapping;

struct prt_onnx_parser {
    const prt_registry *reg; /* borrowed; may be NULL */
    onnx_mapping *maps;
    int32_t nb_maps;
    int32_t cap_maps;
};

/* What defines a name in the graph. */
enum { ONNX_VALUE_INPUT, ONNX_VALUE_CONSTANT, ONNX_VALUE_NODE };

/* A name in the graph: what holds its value. */
typedef struct onnx_value {
    const char *name;                /* borrowed from the model */
    int32_t kind;                    /* ONNX_VALUE_* */
    int32_t tensor;                  /* network tensor id; -1 until made */
    /* The tensor of an initializer or Constant node, made into a network
     * constant on first use; NULL for other values. */
    const Onnx__TensorProto *init;
} onnx_value;

typedef struct onnx_import {
    prt_onnx_parser *parser;
    const Onnx__GraphProto *graph;
    const char *base_dir; /* may be NULL */
    int64_t opset;        /* of the default domain */
    prt_network *net;
    onnx_value *values;
    int32_t nb_values;
    int32_t cap_values;
    onnx_names names; /* name -> index in values */
} onnx_import;

/* How a node is named in messages: "node 'name' (Op)" or "node #3 (Op)". */
void onnx_node_label(const Onnx__NodeProto *node, int32_t index, char *buf,
                     size_t cap);

/* Adds a name to the graph (PRT_ERR_MALFORMED if it is taken). `kind` is
 * one of ONNX_VALUE_*; `tensor` may be -1 for a tensor made later. */
prt_status onnx_value_add(onnx_import *imp, const char *name, int32_t kind,
                          int32_t tensor, const Onnx__TensorProto *init,
                          const char *who);
/* The network tensor holding `name`; an initializer or a Constant node's
 * tensor becomes a network constant on first use. PRT_ERR_NOT_FOUND if
 * nothing holds that name. */
prt_status onnx_value_tensor(onnx_import *imp, const char *name,
                             int32_t *out_tensor);

/* plugrt names a layer's outputs "<layer>:<i>" until told otherwise, and an
 * ONNX name may equal such a default. The ONNX name wins: the tensor holding
 * it is renamed "<name>~<k>". PRT_ERR_ALREADY_EXISTS if an ONNX value holds
 * it (onnx_ops.c). */
prt_status onnx_claim_name(onnx_import *imp, const char *name);
/* prt_network_add_constant under an ONNX name (claimed if need be). The
 * error is the network's (onnx_parser.c). */
prt_status onnx_add_constant(onnx_import *imp, const char *name, const onnx_tensor *t,
                             int32_t *out_tensor);

/* What will compute a node (onnx_ops.c). */
typedef struct onnx_choice {
    /* The plugin's creator; NULL when `custom` needs none (Constant). */
    const prt_plugin_creator *creator;
    /* An importer function of the table; NULL for the generic path. */
    prt_status (*custom)(onnx_import *imp, const Onnx__NodeProto *node,
                         const char *label, const prt_plugin_creator *creator);
    /* Bit k: ONNX input k is a shape input of the layer (its values feed
     * get_output_shapes); if also set in shape_data it stays a data input
     * too, otherwise it is left out of the data inputs. 0 for plugins. */
    uint32_t shape_inputs;
    uint32_t shape_data;
} onnx_choice;

/* Decides what computes node `index` (the rules are in onnx_ops.c) without
 * touching the network. PRT_ERR_UNSUPPORTED, with a message containing "has
 * no importer", for an op that nothing serves. */
prt_status onnx_choose(onnx_import *imp, const Onnx__NodeProto *node, int32_t index,
                       onnx_choice *out);
/* Imports node `index` (in topological order) into imp->net as chosen. */
prt_status onnx_import_node(onnx_import *imp, const Onnx__NodeProto *node,
                            int32_t index, const onnx_choice *choice);
/* Makes a graph output of constant tensor `src`, which the network cannot
 * mark: a built-in Identity copies it into a tensor named `name` (the
 * constant is renamed). */
prt_status onnx_output_constant(onnx_import *imp, const char *name, int32_t src,
                                int32_t *out_tensor);

/* ---- the order of nodes (onnx_graph.c) ----------------------------------- */

/* Writes into order[] (graph->n_node entries) an order in which every node
 * comes after the producers of its inputs. `known` holds the names defined
 * before any node (graph inputs and initializers). Errors: PRT_ERR_MALFORMED
 * for an input that nothing produces (dangling), a name produced twice, or a
 * cycle (naming a node on it). */
prt_status onnx_graph_order(const Onnx__GraphProto *graph,
                            const onnx_names *known, int32_t *order);

/* ---- attributes -> fields (onnx_fields.c) -------------------------------- */

/* Fields made from a node's attributes; they own their data. */
typedef struct onnx_fields {
    prt_field *fields;
    int32_t nb_fields;
    void **blocks; /* one malloc'd block per field */
} onnx_fields;

/* Converts the attributes of `node` into fields of `creator`'s schema:
 * INT/INTS to the schema's integer type (range-checked), FLOAT/FLOATS to its
 * float type, STRING to char (with the trailing NUL counted), TENSOR to a
 * typed array. Attributes the schema does not name are reported through the
 * logger as warnings and left out; so are plugin_namespace and
 * plugin_version, silently. `label` names the node in messages. */
prt_status onnx_fields_from_node(const Onnx__NodeProto *node, const char *label,
                                 const prt_plugin_creator *creator,
                                 const char *base_dir, onnx_fields *out);
void onnx_fields_free(onnx_fields *f);

/* The node's attribute called `name`, or NULL. */
const Onnx__AttributeProto *onnx_node_attr(const Onnx__NodeProto *node,
                                           const char *name);

#endif /* PLUGRT_ONNX_INTERNAL_H */
