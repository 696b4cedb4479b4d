/*
 * plugrt ONNX importer.
 *
 * Reads an ONNX model into a prt_network. Ops the importer implements become
 * built-in layers (PRT_BUILTIN_NAMESPACE); any other node becomes a plugin
 * layer when a creator is found, following TensorRT's rules: the key is
 * (op_type, attribute "plugin_version" default "1", attribute
 * "plugin_namespace" default ""), and a node that carries plugin_namespace is
 * always a plugin. The node's other attributes become plugin fields, typed by
 * the creator's field schema: INT(S) to its integer type (a value that does
 * not fit is an error), FLOAT(S) to its float type, STRING to char with the
 * trailing NUL counted, TENSOR to a typed array. An attribute the schema
 * does not name is left out with a PRT_SEV_WARNING to the logger; a schema
 * field the node lacks takes the creator's default.
 *
 * Models: IR version 3 and later; default-domain opsets 7 to the newest of
 * the onnx.proto plugrt was built with. Initializers and Constant nodes
 * become constants (a graph input that is also an initializer is the
 * constant); dims given by dim_param or not at all are dynamic (-1). Nodes
 * need not be sorted. Linking: a program links the static library
 * plugrt_onnx together with plugrt.
 *
 * Conventions are those of plugrt.h. A parser is used by one thread at a time.
 */
#ifndef PLUGRT_ONNX_H
#define PLUGRT_ONNX_H

#include "plugrt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct prt_onnx_parser prt_onnx_parser;

/* A parser that finds plugins in `reg` (borrowed; may be NULL for built-ins
 * only). */
PRT_NODISCARD prt_status prt_onnx_parser_create(const prt_registry *reg,
                                                prt_onnx_parser **out);
void prt_onnx_parser_destroy(prt_onnx_parser *parser);

/* Sends every node of `op_type` to the plugin (plugin_namespace,
 * plugin_name, plugin_version) instead of the built-in importer or the
 * node's own key. Later calls for the same op replace earlier ones. The
 * plugin is looked up when a model is parsed: in the registry, then among
 * the built-ins when the namespace is PRT_BUILTIN_NAMESPACE. A NULL
 * namespace means "", a NULL or empty version "1". */
PRT_NODISCARD prt_status prt_onnx_parser_map_op(prt_onnx_parser *parser,
                                                const char *op_type,
                                                const char *plugin_namespace,
                                                const char *plugin_name,
                                                const char *plugin_version);

/* 1: a plugin node whose output disagrees with the dtype or shape the model
 * declares for it (graph outputs, value_info) fails the build with
 * PRT_ERR_SHAPE naming the node, the plugin, the output and both shapes;
 * 0 (the library's default; `plugrt build` and `run` pass 1 unless given
 * --no-strict): a warning through the logger. Either way memory is planned
 * for what the plugin's get_output_shapes gives (prt_network_expect_tensor,
 * prt_network_set_strict). */
PRT_NODISCARD prt_status prt_onnx_parser_set_strict(prt_onnx_parser *parser,
                                                    int32_t strict);

/* 1 (default): a few node patterns become one built-in layer that computes
 * the same values in one pass: a Conv and the Relu, LeakyRelu, Clip,
 * HardSigmoid, HardSwish or Sigmoid that alone reads its output; a Conv,
 * a Sigmoid of its output and their product (SiLU); GELU written as
 * Div, Erf, Add and two Muls. The fused layer's output keeps the last
 * node's output name; the values inside the pattern have no tensor. Nodes
 * sent to a plugin (prt_onnx_parser_map_op) never fuse. 0: one layer per
 * node, so that every node's output is a tensor (plugrt run
 * --compare-layers). */
PRT_NODISCARD prt_status prt_onnx_parser_set_fuse(prt_onnx_parser *parser, int32_t fuse);

/* Parses a model file; external data files are looked up next to it. On
 * success *out is a new network owned by the caller. Errors name the node,
 * the op and what is wrong (PRT_ERR_MALFORMED for bytes that do not parse,
 * a dangling input, a cycle; PRT_ERR_UNSUPPORTED for an op with neither an
 * importer nor a creator, naming the libraries searched and listing the
 * model's other such ops; PRT_ERR_VERSION for an IR version or opset out
 * of range; PRT_ERR_IO for files; PRT_ERR_OUT_OF_MEMORY, saying "out of
 * memory", when an allocation fails). External data locations must be
 * relative paths without ".." components (PRT_ERR_MALFORMED), and must
 * name regular files that stay inside the model's folder once symlinks are
 * resolved, as in ONNX Runtime (PRT_ERR_IO: a symlink out of the folder, a
 * FIFO, a directory). The model file itself must be a regular file too. */
PRT_NODISCARD prt_status prt_onnx_parser_parse_file(prt_onnx_parser *parser,
                                                    const char *path, prt_network **out);
/* The same from bytes; base_dir (may be NULL) is where external data live,
 * and the folder they must stay inside. */
PRT_NODISCARD prt_status prt_onnx_parser_parse_bytes(prt_onnx_parser *parser,
                                                     const void *bytes, size_t size,
                                                     const char *base_dir,
                                                     prt_network **out);

/* Reads a serialized ONNX TensorProto file (the node tests' input_0.pb).
 * On success *out_name (may be "" ) and *out_data are the caller's, freed
 * with prt_free; *out_data holds volume(dims) elements of *out_dtype. */
PRT_NODISCARD prt_status prt_onnx_read_tensor_file(const char *path, char **out_name,
                                                   int32_t *out_dtype, prt_dims *out_dims,
                                                   void **out_data);

/* ---- describing a model without importing it ------------------------------ */

/* A model read for description only (`plugrt inspect model.onnx`): its
 * graph's inputs, outputs and nodes as the file declares them. Nothing
 * needs to be importable: an op that nothing serves, a dtype plugrt lacks
 * or an opset out of range is described, not refused. Read-only, and used
 * by one thread at a time. */
typedef struct prt_onnx_model prt_onnx_model;

/* Reads a model file (the same checks of the bytes as
 * prt_onnx_parser_parse_file: PRT_ERR_MALFORMED, PRT_ERR_IO,
 * PRT_ERR_OUT_OF_MEMORY). External data is not read. *out is the caller's,
 * freed with prt_onnx_model_destroy. */
PRT_NODISCARD prt_status prt_onnx_model_read_file(const char *path, prt_onnx_model **out);
void prt_onnx_model_destroy(prt_onnx_model *model);

/* The model as a whole. Strings are borrowed for the model's lifetime,
 * "" when the file has none. Set struct_size first, as for plugrt.h's
 * query structs. */
typedef struct prt_onnx_model_info {
    uint32_t struct_size;
    int64_t ir_version;
    int64_t opset; /* of the default domain; 0 if the model imports none */
    const char *producer_name;
    const char *producer_version;
    const char *graph_name;
    int32_t nb_inputs; /* graph inputs that are not initializers */
    int32_t nb_outputs;
    int32_t nb_nodes;
    int32_t nb_initializers;
} prt_onnx_model_info;

/* Fills *out (whose struct_size the caller set); its strings stay the
 * model's. PRT_ERR_INVALID_ARGUMENT for a NULL model or out, or a
 * struct_size smaller than this header's. */
PRT_NODISCARD prt_status prt_onnx_model_get_info(const prt_onnx_model *model,
                                                 prt_onnx_model_info *out);

/* A graph input or output as declared. */
typedef struct prt_onnx_value_info {
    uint32_t struct_size;
    const char *name;
    /* prt_dtype, or -1 where plugrt has no such dtype or the model gives no
     * tensor element type (elem_type then says what it is). */
    int32_t dtype;
    const char *elem_type; /* ONNX's name: "FLOAT", "INT64", ...; "" if none */
    /* The declared rank; -1 when no shape is declared. dims and dim_params
     * hold the first min(rank, PRT_MAX_DIMS) dims. */
    int32_t rank;
    prt_dims dims;                        /* -1 where symbolic or unknown */
    const char *dim_params[PRT_MAX_DIMS]; /* symbolic names; "" where none */
} prt_onnx_value_info;

/* Graph inputs (initializers left out) and outputs, in the graph's order,
 * index 0 to nb_inputs / nb_outputs - 1 (prt_onnx_model_get_info); as
 * prt_onnx_model_get_info fills its struct, and PRT_ERR_INVALID_ARGUMENT
 * for an index out of range. */
PRT_NODISCARD prt_status prt_onnx_model_get_input(const prt_onnx_model *model,
                                                  int32_t index,
                                                  prt_onnx_value_info *out);
PRT_NODISCARD prt_status prt_onnx_model_get_output(const prt_onnx_model *model,
                                                   int32_t index,
                                                   prt_onnx_value_info *out);

/* A node as the file lists it. */
typedef struct prt_onnx_node_info {
    uint32_t struct_size;
    const char *name; /* "" if the node has none */
    const char *op_type;
    const char *domain;
    /* 1 if plugrt's importer implements the op (the default domain, and no
     * plugin_namespace attribute): it becomes a built-in layer, unless
     * prt_onnx_parser_map_op sends it elsewhere. 0: the node is served by
     * the plugin of key (plugin_namespace, op_type, plugin_version), as
     * onnx.h's rules say, when a registry holds one. */
    int32_t has_importer;
    const char *plugin_namespace; /* its attribute, else "" */
    const char *plugin_version;   /* its attribute, else "1" */
    int32_t nb_inputs;
    const char *const *inputs; /* names; "" for an omitted optional input */
    int32_t nb_outputs;
    const char *const *outputs;
    int32_t nb_attributes;
} prt_onnx_node_info;

/* Node `index` (0 to nb_nodes - 1), as the inputs and outputs above; the
 * name arrays are the model's too. */
PRT_NODISCARD prt_status prt_onnx_model_get_node(const prt_onnx_model *model,
                                                 int32_t index, prt_onnx_node_info *out);

#ifdef __cplusplus
}
#endif

#endif /* PLUGRT_ONNX_H */
