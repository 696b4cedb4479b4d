/*
 * What the files of the ONNX importer share. The importer uses only the
 * public API (include/plugrt/) and the protobuf-c code generated from the
 * system's onnx.proto at build time (onnx.pb-c.h); nothing of src/.
 *
 *   onnx_util.c    errors and warnings through the host services, memory
 *                  through prt_malloc, safe unpacking of untrusted protobuf
 *                  bytes, regular-file reads, a name table, how near
 *                  two names are
 *   onnx_tensor.c  TensorProto -> dtype, dims and data (typed fields, raw
 *                  data, external files); prt_onnx_read_tensor_file
 *   onnx_fields.c  node attributes: found by name, read as a string, and
 *                  made plugin fields typed by a schema
 *   onnx_graph.c   topological order of the nodes, dangling inputs, cycles
 *   onnx_values.c  the values of one import by name, the network tensors
 *                  that hold them, and the constants among them read at
 *                  import
 *   onnx_layer.c   a node as one plugin layer (fields, data and shape
 *                  inputs, named outputs), which the op importers share
 *                  through onnx_ops_shared.h
 *   onnx_ops_*.c   the custom imports of the op families: const, data,
 *                  math, nn
 *   onnx_ops.c     the importer table and the choice of a node's creator
 *   onnx_parser.c  the parser object and the model walk
 *   onnx_describe.c  a model read only to be described (prt_onnx_model)
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
prt_status onnx_error_wrap(prt_status status, const char *fmt, ...) ONNX_PRINTF(2, 3);
/* Sends a warning to the user's logger (prt_set_logger). */
void onnx_warn(const char *fmt, ...) ONNX_PRINTF(1, 2);

/* ---- memory (onnx_util.c) ----------------------------------------------- */

/* Every allocation of the importer goes through prt_malloc / prt_free:
 * memory handed to users must be freed with prt_free, and libplugrt's
 * allocation-failure injection (the tests' base_fail_alloc_after) must reach
 * the importer too. These never set an error; the caller says "out of
 * memory". */

/* count * size zeroed bytes; NULL on failure or overflow. */
void *onnx_calloc(size_t count, size_t size);
/* Grows (or shrinks) a block of old_size bytes to new_size, keeping its
 * contents. On failure the old block is untouched and NULL returned. */
void *onnx_resize(void *p, size_t old_size, size_t new_size);
/* A copy of `s` (NULL on failure). */
char *onnx_strdup(const char *s);

/* A proto string field: protobuf-c leaves absent strings NULL. */
static inline const char *onnx_str(const char *s)
{
    return s ? s : "";
}

/* A node's input k, "" when the node omits it (an empty name) or has fewer
 * inputs. */
static inline const char *onnx_node_input(const Onnx__NodeProto *node, size_t k)
{
    return k < node->n_input ? onnx_str(node->input[k]) : "";
}

/* ---- untrusted bytes -> messages (onnx_util.c) --------------------------- */

/* Unpacks `size` bytes as a message of `desc`. Before protobuf-c sees them,
 * the bytes are walked once to check the wire format and to bound message
 * nesting (protobuf-c recurses once per level, so unbounded nesting in a
 * hostile file would exhaust the stack). `what` names the input in errors:
 * PRT_ERR_MALFORMED for bytes that do not parse, PRT_ERR_OUT_OF_MEMORY when
 * protobuf-c ran out of memory. On success free *out with
 * onnx_message_free. */
prt_status onnx_unpack(const ProtobufCMessageDescriptor *desc, const void *bytes,
                       size_t size, const char *what, ProtobufCMessage **out);
/* Frees a message of onnx_unpack (NULL is fine). */
void onnx_message_free(ProtobufCMessage *m);

/* Opens `path` for reading, only if it is a regular file. The open cannot
 * block (O_NONBLOCK: a FIFO would wait for a writer forever) and the type
 * is checked on the opened descriptor, so what is checked is what is read.
 * `flags` are more open() flags (O_NOFOLLOW). 0 with *out_fd and *out_size
 * set, or -1 with *why saying what is wrong ("No such file or directory",
 * "it is a directory", ...). */
int onnx_open_regular(const char *path, int flags, int *out_fd, uint64_t *out_size,
                      const char **why);
/* Reads exactly n bytes at `offset`; 0 on success, -1 on a read error or an
 * early end. */
int onnx_read_at(int fd, void *buf, size_t n, uint64_t offset);

/* Reads a whole regular file into memory the caller frees with prt_free. */
prt_status onnx_read_file(const char *path, const char *what, uint8_t **out,
                          size_t *out_size);

/* ---- names (onnx_util.c) ------------------------------------------------- */

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

/* Edit distance of two short names, case-insensitive, capped at 9: how far
 * a misspelt op or plugin name is from a known one. */
int onnx_name_distance(const char *a, const char *b);

/* ---- tensors (onnx_tensor.c) --------------------------------------------- */

/* A tensor's contents in plugrt's layout: dense, C order, little-endian. */
typedef struct onnx_tensor {
    int32_t dtype; /* prt_dtype */
    prt_dims dims;
    void *data;   /* prt_malloc'd, never NULL after a successful load */
    size_t bytes; /* volume * element size */
} onnx_tensor;

/* ONNX TensorProto.DataType -> prt_dtype. PRT_ERR_UNSUPPORTED names `what`
 * (a tensor) and the ONNX type when plugrt has no such dtype. */
prt_status onnx_dtype_from_onnx(int32_t elem_type, const char *what, int32_t *out);
/* "FLOAT", "STRING", ... for messages. */
const char *onnx_elem_type_name(int32_t elem_type);

/* Reads a TensorProto's contents: typed fields (float_data, int32_data,
 * int64_data, ...), raw_data, or external data in a file relative to
 * base_dir (NULL: external data is an error). External data must be a
 * regular file inside base_dir once symlinks are resolved. `what` names the
 * tensor in errors. */
prt_status onnx_tensor_load(const Onnx__TensorProto *t, const char *base_dir,
                            const char *what, onnx_tensor *out);
void onnx_tensor_free(onnx_tensor *t);

/* A Constant node's value_float(s) or value_int(s) as a tensor: FLOAT and
 * FLOATS give float32, INT and INTS int64; FLOAT and INT are scalars
 * (dims []). `a` must be of one of those four types. PRT_ERR_OUT_OF_MEMORY
 * names `what`. */
prt_status onnx_tensor_from_attr(const Onnx__AttributeProto *a, const char *what,
                                 onnx_tensor *out);

/* Whether a prt_dtype is float32, float16 or bfloat16. */
int onnx_dtype_is_float(int32_t dtype);
/* Element k of an integer or bool tensor (int8, uint8, bool, int32,
 * int64), widened to int64. */
int64_t onnx_tensor_int(const onnx_tensor *t, size_t k);
/* Element k of a float32, float16 or bfloat16 tensor, as a float (exact). */
float onnx_tensor_float(const onnx_tensor *t, size_t k);

/* ---- the import of one model -------------------------------------------- */

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
    int32_t strict;  /* prt_onnx_parser_set_strict */
    int32_t no_fuse; /* prt_onnx_parser_set_fuse(0) */
};

/* What defines a name in the graph. */
enum { ONNX_VALUE_INPUT, ONNX_VALUE_CONSTANT, ONNX_VALUE_NODE };

/* A name in the graph: what holds its value. */
typedef struct onnx_value {
    const char *name; /* borrowed from the model */
    int32_t kind;     /* ONNX_VALUE_* */
    int32_t tensor;   /* network tensor id; -1 until made */
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
    /* Names the importer makes up (onnx_value_name), freed with the
     * import: values[] and names borrow them like the model's. */
    char **made;
    int32_t nb_made;
} onnx_import;

/* ---- the values of one import (onnx_values.c) ----------------------------- */

/* The value named `name`, or NULL. The pointer is good until the next
 * onnx_value_add, which may move the table. */
onnx_value *onnx_value_find(const onnx_import *imp, const char *name);

/* Adds a name to the graph (PRT_ERR_MALFORMED if it is taken). `kind` is
 * one of ONNX_VALUE_*; `tensor` may be -1 for a tensor made later. */
prt_status onnx_value_add(onnx_import *imp, const char *name, int32_t kind,
                          int32_t tensor, const Onnx__TensorProto *init, const char *who);
/* The network tensor holding `name`; an initializer or a Constant node's
 * tensor becomes a network constant on first use. PRT_ERR_NOT_FOUND if
 * nothing holds that name. */
prt_status onnx_value_tensor(onnx_import *imp, const char *name, int32_t *out_tensor);

/* plugrt names a layer's outputs "<layer>:<i>" until told otherwise, and an
 * ONNX name may equal such a default. The ONNX name wins: the tensor holding
 * it is renamed "<name>~<k>". PRT_ERR_ALREADY_EXISTS if an ONNX value holds
 * it. */
prt_status onnx_claim_name(onnx_import *imp, const char *name);
/* Adds ONNX value `name`, the output of node `label` folded at import, as a
 * network constant holding `t` (which the caller keeps); nothing when
 * `name` is "" (nobody can refer to it). */
prt_status onnx_value_add_constant(onnx_import *imp, const char *name,
                                   const onnx_tensor *t, const char *label);

/* `bytes` zeroed bytes that live as long as the import (freed with it);
 * NULL when out of memory. */
void *onnx_keep(onnx_import *imp, size_t bytes);

/* A value name of the importer's own, `base` followed by `suffix`, that
 * lives as long as the import (a fusion's values that the graph has no
 * name for: the Attention's Q, K and V cut from one QKV value); NULL when
 * out of memory. */
const char *onnx_value_name(onnx_import *imp, const char *base, const char *suffix);

/* The values of `name` when it is an ONNX constant (an initializer, or a
 * Constant node's TENSOR) of an integer, bool or float type, as int64
 * (floats truncated toward zero): *n is their count, or -1 when `name` is
 * not such a constant (a Constant's value_ints is a network constant that
 * only the builder reads). More than cap values is an error naming `what`;
 * `label` names the node. */
prt_status onnx_value_const_ints(onnx_import *imp, const char *name, const char *label,
                                 const char *what, int64_t *v, int32_t cap, int32_t *n);
/* The value of `name` when it is a constant: an initializer, or a Constant
 * node's tensor or value_float(s)/value_int(s). *found is 0 when it is
 * something else (a graph input, a node's output). `what` names it in
 * errors. */
prt_status onnx_value_const_tensor(onnx_import *imp, const char *name, const char *what,
                                   onnx_tensor *out, int *found);

/* ---- If, Loop and Scan (onnx_control.c) ------------------------------------ */

/* The graph to import in place of *g: *g itself when it has no If, Loop or
 * Scan node of the default domain, else a graph (kept by the import) whose
 * If nodes with a constant condition are their chosen branch, inlined,
 * whose Loop nodes with a constant trip count (and a condition that stays
 * true) and Scan nodes over sequences of a fixed length are unrolled; any
 * other is an error naming the node and what is not constant. */
prt_status onnx_control_flatten(onnx_import *imp, const Onnx__GraphProto **g);

/* ---- the choice and import of nodes (onnx_ops.c) -------------------------- */

/* A custom import function of the op table (onnx_ops_shared.h lists them):
 * imports `node` as one layer of `creator`; `label` names the node. */
typedef prt_status (*onnx_custom_fn)(onnx_import *imp, const Onnx__NodeProto *node,
                                     const char *label,
                                     const prt_plugin_creator *creator);

/* What will compute a node. */
typedef struct onnx_choice {
    /* The plugin's creator; NULL when `custom` needs none (Constant). */
    const prt_plugin_creator *creator;
    /* An importer function of the table; NULL for the generic path. */
    onnx_custom_fn custom;
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
/* 1 if the importer table implements `op_type` for a node of `domain`
 * (rule 2 of onnx_choose, whatever the model's opset): what
 * prt_onnx_model_get_node reports. */
int onnx_has_importer(const char *op_type, const char *domain);
/* Imports node `index` (in topological order) into imp->net as chosen. */
prt_status onnx_import_node(onnx_import *imp, const Onnx__NodeProto *node, int32_t index,
                            const onnx_choice *choice);
/* Imports `node`'s attributes (fields of creator c) plus `extra` as one
 * layer of c reading ins[0..nb_ins) and making outs[0..nb_outs) (names), in
 * place of the node's own inputs and outputs: a fused pattern
 * (onnx_fuse.c). In onnx_layer.c. */
prt_status onnx_import_fused(onnx_import *imp, const Onnx__NodeProto *node,
                             const char *label, const prt_plugin_creator *c,
                             const prt_field *extra, int32_t nb_extra, const char **ins,
                             size_t nb_ins, const char **outs, size_t nb_outs);

/* ---- fusions (onnx_fuse.c) ------------------------------------------------ */

/* Which nodes fuse into one built-in layer (onnx_fuse.c says which
 * patterns, and why they keep the graph's meaning). */
typedef struct onnx_fusions onnx_fusions;
/* Plans the fusions of the graph's nodes in topological order[] with their
 * choices[] (both by order position); *out is freed with onnx_fuse_free. */
prt_status onnx_fuse_plan(onnx_import *imp, const int32_t *order,
                          const onnx_choice *choices, onnx_fusions **out);
/* What order position pos does: -1 import the node alone, -2 nothing (it is
 * inside a fusion added elsewhere), >= 0 add a fused layer
 * (onnx_fuse_import). */
int32_t onnx_fuse_role(const onnx_fusions *p, int32_t pos);
prt_status onnx_fuse_import(onnx_import *imp, const onnx_fusions *p, int32_t pos,
                            const int32_t *order);
void onnx_fuse_free(onnx_fusions *p);

/* ---- 8-bit elementwise chains as one table (onnx_qlut.c) ------------------ */

/* The chains DQ(x) -> float elementwise ops -> Q of an 8-bit x found in the
 * graph (issue 30), each to become one LookupTable8. Planned before the
 * other fusions: a chain's nodes get a NULL creator in choices[], so that
 * no other pattern takes them (onnx_fuse.c fuses built-ins alone). */
typedef struct onnx_qluts onnx_qluts;
prt_status onnx_qlut_plan(onnx_import *imp, const int32_t *order, onnx_choice *choices,
                          onnx_qluts **out);
/* As onnx_fuse_role: -1 not in a chain, -2 inside one added elsewhere, >= 0
 * add the chain's layer here (onnx_qlut_import). NULL p: -1. */
int32_t onnx_qlut_role(const onnx_qluts *p, int32_t pos);
prt_status onnx_qlut_import(onnx_import *imp, const onnx_qluts *p, int32_t pos,
                            const int32_t *order);
void onnx_qlut_free(onnx_qluts *p);

/* ---- quantized patterns (onnx_qdq.c) ------------------------------------- */

/* 1 when a DequantizeLinear of the constants x, scale and zero point z
 * (NULL: none) along `axis` can be folded into a float32 constant: int8,
 * uint8 or int32 x (int32 with zero points 0), a float32 scale per
 * tensor or per axis, dims that agree. */
int onnx_dq_const_ok(const onnx_import *imp, const Onnx__TensorProto *x,
                     const Onnx__TensorProto *s, const Onnx__TensorProto *z,
                     int64_t axis);
/* Adds ONNX value `out` as the float32 constant that DequantizeLinear makes
 * of those constants (onnx_dq_const_ok said yes); `label` names the node. */
prt_status onnx_dq_const_import(onnx_import *imp, const char *label, const char *out,
                                const Onnx__TensorProto *x, const Onnx__TensorProto *s,
                                const Onnx__TensorProto *z, int64_t axis);

/* Why DQ(x) -> MatMul(DQ(w)) -> Q cannot become one QLinearMatMul, or NULL
 * when it can: as onnx_qconv_mismatch, w a constant 8-bit matrix [K, N]
 * quantized per tensor or per column. */
const char *onnx_qmatmul_mismatch(const Onnx__NodeProto *const *dq,
                                  const Onnx__TensorProto *const (*p)[3],
                                  const Onnx__NodeProto *q, const Onnx__TensorProto *qs,
                                  const Onnx__TensorProto *qz);

/* Why an activation clamping to [lo, hi] (a Relu: [0, inf]) before a
 * QuantizeLinear of constant per-tensor scale s and zero point z is not
 * idle, or NULL when it is: Q(lo) <= the least integer and Q(hi) >= the
 * greatest, so Q(clamp(v)) == Q(v) for every v (Q is monotone). Called
 * after onnx_qconv_mismatch has checked s and z. */
const char *onnx_qdq_act_idle(const onnx_import *imp, float lo, float hi,
                              const Onnx__TensorProto *s, const Onnx__TensorProto *z);

/* Why DQ(x) -> Conv(DQ(w), DQ(b)?) -> Q cannot become one QLinearConv, or
 * NULL when it can: dq[] the DQ nodes of x, w and b (NULL: no bias), p[k][j]
 * the constant tensors of dq[k]'s input j (NULL: not a constant or
 * absent), q the QuantizeLinear with its constant scale qs and zero point
 * qz. */
const char *onnx_qconv_mismatch(const onnx_import *imp, const Onnx__NodeProto *const *dq,
                                const Onnx__TensorProto *const (*p)[3],
                                const Onnx__NodeProto *q, const Onnx__TensorProto *qs,
                                const Onnx__TensorProto *qz);
/* An info line (PRT_SEV_INFO) through the host's logger. */
void onnx_info(const char *fmt, ...) ONNX_PRINTF(1, 2);

/* ---- the order of nodes (onnx_graph.c) ----------------------------------- */

/* Writes into order[] (graph->n_node entries) an order in which every node
 * comes after the producers of its inputs. `known` holds the names defined
 * before any node (graph inputs and initializers). Errors: PRT_ERR_MALFORMED
 * for an input that nothing produces (dangling), a name produced twice, or a
 * cycle (naming a node on it). */
prt_status onnx_graph_order(const Onnx__GraphProto *graph, const onnx_names *known,
                            int32_t *order);
/* How a node is named in messages: "node 'name' (Op)" or "node #3 (Op)". */
void onnx_node_label(const Onnx__NodeProto *node, int32_t index, char *buf, size_t cap);

/* ---- attributes -> fields (onnx_fields.c) -------------------------------- */

/* Fields made from a node's attributes; they own their data. */
typedef struct onnx_fields {
    prt_field *fields;
    int32_t nb_fields;
    void **blocks; /* one prt_malloc'd block per field */
} onnx_fields;

/* Converts the attributes of `node` into fields of `creator`'s schema:
 * INT/INTS to the schema's integer type (range-checked), FLOAT/FLOATS to its
 * float type, STRING to char (with the trailing NUL counted), TENSOR to a
 * typed array. Attributes the schema does not name are reported through the
 * logger as warnings and left out; so are plugin_namespace and
 * plugin_version, silently. `label` names the node in messages. */
prt_status onnx_fields_from_node(const Onnx__NodeProto *node, const char *label,
                                 const prt_plugin_creator *creator, const char *base_dir,
                                 onnx_fields *out);
void onnx_fields_free(onnx_fields *f);

/* The node's attribute called `name`, or NULL. */
const Onnx__AttributeProto *onnx_node_attr(const Onnx__NodeProto *node, const char *name);
/* An INT attribute `name` that names an ONNX element type, as a prt_dtype in
 * *dtype (left as it is when the node lacks it; *found says which), and
 * *out a copy of node without it, its other attributes in attrs (cap of
 * them: more is an error), for the creator's schema to read. */
prt_status onnx_take_dtype_attr(const Onnx__NodeProto *node, const char *label,
                                const char *name, Onnx__AttributeProto **attrs,
                                size_t cap, Onnx__NodeProto *out, int32_t *dtype,
                                int *found);
/* A STRING attribute's value as a C string in buf (cut to cap - 1 bytes);
 * -1 if it is not a STRING or holds a NUL. */
int onnx_attr_string(const Onnx__AttributeProto *a, char *buf, size_t cap);

/* The C library's allocator is off limits here (see onnx_calloc): a call
 * to it is a compile error rather than an allocation the failure tests
 * cannot reach or a block that prt_free must not see. */
#if defined(__GNUC__)
#pragma GCC poison malloc calloc realloc free strdup strndup
#endif

#endif /* PLUGRT_ONNX_INTERNAL_H */
