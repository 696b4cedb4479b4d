/*
 * The network definition (internal view for the builder).
 *
 * Layers can only consume tensors that already exist, so the order in which
 * layers were added is a topological order and a network has no cycles.
 */
#ifndef PLUGRT_NETWORK_H
#define PLUGRT_NETWORK_H

#include "base/base.h"
#include "base/quant.h"

typedef struct net_tensor {
    char *name;
    int32_t dtype;    /* network inputs only; layer outputs get theirs at build */
    prt_dims dims;    /* network inputs only */
    int32_t producer; /* layer id, or -1 for a network input */
    int32_t producer_output;
    int32_t input_index; /* index in prt_network.inputs, or -1 */
    int32_t is_output;
    void *const_data;    /* owned copy for constants (dtype and dims set) */
    int64_t const_bytes; /* -1 unless a constant */
    /* What the network's author declared (prt_network_expect_tensor): the
     * builder compares a plugin layer's output with it. */
    int32_t has_expect;
    int32_t expect_dtype; /* -1: not declared */
    prt_dims expect_dims; /* nb_dims -1: not declared; a dim -1: dynamic */
    /* The author's quantization (prt_network_set_tensor_quant); the builder
     * checks it against the tensor's dtype and dims. */
    base_quant quant;
    /* Set only in a network the builder made by folding a QuantizeLinear
     * into this layer output's producer (builder/fold.c): the output takes
     * `dtype` (int8/uint8, with `quant`) in place of the plugin's answer. */
    int32_t q_folded;
} net_tensor;

typedef struct net_layer {
    char *name;
    prt_plugin *plugin; /* owned */
    int32_t nb_inputs;
    int32_t *inputs;
    int32_t nb_shape_inputs;
    int32_t *shape_inputs;
    int32_t nb_outputs;
    int32_t *outputs;
} net_layer;

struct prt_network {
    int32_t nb_tensors, cap_tensors;
    net_tensor *tensors;
    int32_t nb_layers, cap_layers;
    net_layer *layers;
    int32_t nb_inputs, cap_inputs;
    int32_t *inputs; /* tensor ids of network inputs, in order */
    int32_t nb_outputs, cap_outputs;
    int32_t *outputs; /* tensor ids marked as outputs, in order */
    int32_t strict;   /* a declared shape or dtype that disagrees fails the build */
};

/* A plugin's optional table entry, or NULL when its table is too old (short)
 * to hold it or leaves it empty. */
#define BUILD_ENTRY(p, m) BASE_ENTRY((p)->vt->build, prt_plugin_build, m)
#define RUNTIME_ENTRY(p, m) BASE_ENTRY((p)->vt->runtime, prt_plugin_runtime, m)

/* Checks a plugin object's tables before plugrt calls into it: the vtable,
 * core and runtime tables present with a size covering every entry, and (for
 * build) the build table too. Errors name the plugin. */
prt_status network_check_plugin(const prt_plugin *p, int need_build);
/* Destroys a plugin through its table when the table can be trusted to hold
 * destroy (a plugin that failed network_check_plugin may not); else leaks
 * it rather than calling through a bad pointer. NULL is fine. */
void network_destroy_plugin(prt_plugin *p);

/* 1 if some layer takes `tensor` as a shape input itself. */
int net_is_direct_shape_input(const prt_network *net, int32_t tensor);

#endif /* PLUGRT_NETWORK_H */
