/*
 * The engine as the builder produces it, the serializer writes and reads it,
 * and the runtime executes it (internal).
 *
 * Invariants (the builder establishes them; engine_validate checks them on
 * bytes read from a file, before anything else touches the engine):
 *  - layers are in a topological order: a layer's inputs are network inputs
 *    or outputs of earlier layers;
 *  - every tensor dim is a node of `exprs`;
 *  - an arena tensor's [offset, offset + max_bytes) lies inside arena_size;
 *  - I/O tensors (input_index or output_index >= 0) live in user memory and
 *    have offset -1;
 *  - a constant (const_offset >= 0) has static dims, no producer, offset -1,
 *    and its [const_offset, const_offset + max_bytes) lies inside weights;
 *  - an arena offset is a multiple of ENG_ARENA_ALIGN (and so of its dtype's
 *    size), a const_offset a multiple of ENG_WEIGHTS_ALIGN;
 *  - the memory plan asks for no more than the shapes can need: a tensor's
 *    max_bytes is exactly what its dims give at their upper bounds over all
 *    profiles, arena_size is at most the sum of the arena tensors' max_bytes
 *    each rounded up to ENG_ARENA_ALIGN, and workspace_size is the largest
 *    layer workspace;
 *  - a CHW8 tensor lies inside a CPU engine.
 * What only the layers' plugins know (each layer's workspace, the dtypes
 * and formats it takes) engine_check_layers checks once they are made.
 */
#ifndef PLUGRT_ENGINE_IMPL_H
#define PLUGRT_ENGINE_IMPL_H

#include <pthread.h>
#include <stdint.h>

#include "base/base.h"
#include "base/quant.h"
#include "device/device.h"
#include "expr/expr.h"

/* Engine file format version; bump on any incompatible change. */
#define ENG_FORMAT_VERSION 1u
#define ENG_MAGIC "PLUGRTEN" /* 8 bytes at offset 0 */

/* Every arena tensor starts on this boundary: a multiple of every dtype's
 * size, and enough for any vector load on CPU and GPU. The builder's
 * PLAN_ALIGN must be this value (tests/test_engine_format.c asserts it). */
#define ENG_ARENA_ALIGN 256
/* Every constant starts on this boundary in the weights block. */
#define ENG_WEIGHTS_ALIGN 64

typedef struct eng_tensor {
    char *name;
    int32_t dtype;  /* prt_dtype */
    int32_t format; /* prt_format */
    int32_t nb_dims;
    int32_t dim_expr[PRT_MAX_DIMS]; /* node index in prt_engine.exprs */
    int32_t input_index;            /* index in input_tensors, or -1 */
    int32_t output_index;           /* index in output_tensors, or -1 */
    int32_t size_id;                /* >= 0: this is size tensor size_id */
    int32_t producer;               /* layer index, or -1 for an input */
    int64_t offset;                 /* arena byte offset; -1 when not in the arena */
    int64_t max_bytes;              /* bytes at the largest shapes of every profile */
    /* Constants: byte offset of the data in prt_engine.weights (which holds
     * max_bytes bytes there); -1 for every other tensor. */
    int64_t const_offset;
    /* Derived, not serialized (engine_prepare): bit d set when dim d
     * depends on a size tensor's value. */
    uint32_t dd_mask;
    /* Its quantization (kind NONE: none); section QNTZ on file. The
     * runtime's descriptors point to quant.d. */
    base_quant quant;
    /* CPU fallback (fallback.c; derived, not serialized): byte offset of
     * the tensor's host copy in a context's host block when a CPU layer of
     * an engine for another device reads or writes it; -1 otherwise. */
    int64_t host_offset;
} eng_tensor;

typedef struct eng_layer {
    char *name;
    char *plugin_namespace;
    char *plugin_name;
    char *plugin_version;
    char *library;         /* creator's library path as loaded; "" if none */
    uint64_t library_hash; /* content hash of that library; 0 if none */
    uint32_t plugin_abi;   /* the creator's abi_version */
    int32_t device;        /* prt_device the layer runs on */

    /* The plugin's serialized fields: `fields` point into `field_blob`. */
    int32_t nb_fields;
    prt_field *fields;
    uint8_t *field_blob;
    int64_t field_blob_size;

    int32_t nb_inputs;
    int32_t *inputs; /* tensor ids */
    int32_t nb_outputs;
    int32_t *outputs; /* tensor ids */
    /* Per output: the input index it aliases (in place), or -1; and whether
     * the runtime must copy that input into the output's memory first
     * (because the input lives on after this layer or is user memory that
     * differs from the output's). */
    int32_t *alias_input;
    uint8_t *alias_copy;

    int32_t tactic;
    int64_t workspace; /* bytes at the largest shapes */
    /* 1: the plugin needs the true dims of data-dependent tensors in
     * `dims` at enqueue (it cannot read dims_device), so on a device that
     * keeps sizes in its own memory the runtime waits for them before this
     * layer. */
    int32_t host_dims;
    /* 1: the plugin said its enqueue must not be captured into a graph
     * (prt_plugin_build.capture_safe answered 0), so graph capture refuses
     * the engine naming this layer. 0 for plugins without the entry. */
    int32_t no_capture;
    /* 1: runs skip the layer, since nothing reads what it writes: no output
     * is an engine output or a size tensor, and no layer that runs takes
     * one as an input (a Shape -> Gather -> Concat chain whose values only
     * ever fed shapes, as expressions). Derived by engine_prepare, not
     * serialized. */
    int32_t skipped;

    /* A kernel layer's kernel (kernel.h): one of the engine's `kernels`,
     * or NULL. Derived from the kernel section, not serialized here. The
     * layer's key, library and fields stay the plugin's that made it, for
     * people; it runs as the kernel, with no creator. */
    const struct eng_kernel *kernel;

    /* CPU fallback (fallback.c; derived, not serialized), for a CPU layer
     * of an engine for another device that runs (not skipped); NULL for
     * every other layer. Per input: 1 when the runtime copies it from the
     * device to its host copy before the layer (it comes from the device:
     * a network input or a device layer's output, not yet copied by an
     * earlier CPU layer). Per output: 1 when it copies it back to the
     * device after the layer (an engine output, a size tensor, or read by
     * a device layer). */
    uint8_t *fetch;
    uint8_t *push;

    /* Runtime-phase plugin (not serialized): made by the builder as a clone,
     * or recreated through the registry on load. Contexts attach clones. */
    prt_plugin *plugin;
} eng_layer;

/* A plugin library the engine carries (builder config embed_plugins;
 * embedded.c). Its bytes are the library file as it was loaded when the
 * engine was built; `hash` is theirs (base_fnv1a64, as the registry hashes
 * files) and equals the library_hash of every layer it serves. */
typedef struct eng_library {
    char *name; /* the file's base name: [A-Za-z0-9._+-], not starting '.' */
    uint64_t hash;
    uint8_t *bytes; /* owned */
    int64_t size;
    /* Not serialized: what loading did with it (PRT_EMBEDDED_LIBRARY_*). */
    int32_t source;
} eng_library;

struct prt_engine {
    int32_t device; /* prt_device */
    /* The device's implementation (src/device), chosen once when the engine
     * is built or loaded; not serialized. */
    const dev_ops *dev;
    /* The device it was built and tuned on (name "" when the file does not
     * say). */
    dev_info built_on;
    /* Which device of its kind holds its memory (its weights): the GPU that
     * was current when it was built or loaded; 0 on the CPU. Its contexts
     * run there (context.c, ctx_device_enter). Not serialized. */
    int32_t device_index;

    int32_t nb_tensors;
    eng_tensor *tensors;
    int32_t nb_layers;
    eng_layer *layers; /* topological order */

    int32_t nb_inputs;
    int32_t *input_tensors; /* network inputs, in order */
    int32_t nb_outputs;
    int32_t *output_tensors; /* marked outputs, in order */

    /* Profiles: [nb_profiles * nb_inputs] dims each, indexed
     * profile * nb_inputs + input. Static inputs have min = opt = max. */
    /* The builder's PRT_PRECISION_* flags (section PREC); the built-in ops
     * of every layer get them (op_set_precision). */
    uint32_t precision;

    int32_t nb_profiles;
    prt_dims *prof_min;
    prt_dims *prof_opt;
    prt_dims *prof_max;
    /* Same indexing: bounds of a shape input's values (nb_dims = how many
     * values, 1..PRT_MAX_DIMS); nb_dims 0 for inputs that are not shape
     * inputs. A shape input is a 1-D int32/int64 input with a static length
     * equal to that count, in every profile. */
    prt_dims *prof_vmin;
    prt_dims *prof_vopt;
    prt_dims *prof_vmax;

    expr_program exprs;
    int32_t nb_sizes; /* size tensors; tensor with size_id s exists for each */

    /* Constant data of every constant tensor, each at a 64-byte aligned
     * offset, in host memory (what the file holds). Owned. */
    uint8_t *weights;
    int64_t weights_size;
    /* The same bytes in the device's memory, where layers read them:
     * `weights` itself on a device whose memory is host memory, else an
     * upload owned by the engine (engine_upload_weights). */
    uint8_t *weights_dev;

    /* Kernel layers' code and launches (src/kernel), each naming its
     * layer. Owned. */
    int32_t nb_kernels;
    struct eng_kernel *kernels;
    /* 1: loaded with PRT_EMBEDDED_KERNELS allowed, so every context may
     * run the kernels; else each context must allow them. Not serialized. */
    int32_t kernels_allowed;

    /* CPU fallback (fallback.c; derived, not serialized): how many layers
     * run on the CPU in an engine for another device, and the host block
     * a context needs for them: their tensors' host copies
     * (eng_tensor.host_offset), then their largest workspace at
     * host_workspace_offset. All 0 in a CPU engine. */
    int32_t nb_host_layers;
    int64_t host_workspace_offset;
    int64_t host_size;

    int64_t arena_size;     /* activations */
    int64_t workspace_size; /* max over layers */

    /* Serializes calls on the layers' plugins (attach_to_context when a
     * context is created): the engine is shared by threads, and plugin.h
     * promises a plugin object is never called from two threads at once.
     * The one mutable part of an engine, so it lives outside the struct: a
     * const engine still reaches it honestly. Made by engine_alloc, freed by
     * engine_free. */
    pthread_mutex_t *plugin_lock;
    /* 1: loaded for inspection only (prt_engine_deserialize_unresolved):
     * no layer has a plugin and no device is bound, so every query works
     * but no context can be made. */
    int32_t unresolved;

    /* Plugin libraries carried in the file (LIBS section; embedded.c). */
    int32_t nb_libraries;
    eng_library *libraries;
    /* The registry holding the ones loaded from the engine's own bytes
     * (source PRT_EMBEDDED_LIBRARY_FROM_ENGINE), or NULL. Owned: destroyed
     * after the layers' plugins, whose code it holds. */
    prt_registry *embedded_reg;
};

/* Makes a valid engine ready to run: sets e->dev from e->device, puts the
 * weights in the device's memory (weights_dev) and derives each tensor's
 * dd_mask and each layer's `skipped`. PRT_ERR_UNSUPPORTED when this machine cannot run
 * the engine's device. Called once by the builder and the loader, after validation. */
prt_status engine_prepare(prt_engine *e);
/* The part of engine_prepare that needs neither a device nor plugins: each
 * tensor's dd_mask and each layer's `skipped`. What an engine loaded for
 * inspection gets. */
prt_status engine_derive(prt_engine *e);

/* Whether tensors a and b have the same dims: as many, each the same node
 * of the engine's expressions (the builder interns them, so equal dims are
 * equal ids). An alias's check (validate.c, check_layers.c). */
static inline int engine_same_dims(const eng_tensor *a, const eng_tensor *b)
{
    if (a->nb_dims != b->nb_dims)
        return 0;
    for (int32_t d = 0; d < a->nb_dims; d++)
        if (a->dim_expr[d] != b->dim_expr[d])
            return 0;
    return 1;
}

/* CPU fallback (fallback.c). Whether layer l runs on the host in an
 * engine for another device: its tensors are copied between the device
 * and host copies around it. */
static inline int engine_layer_on_host(const prt_engine *e, const eng_layer *l)
{
    return l->device == PRT_DEVICE_CPU && e->device != PRT_DEVICE_CPU;
}
/* Whether tensor t lies in host memory in an engine for a device: a shape
 * input, whose values the host reads where the caller put them
 * (prt_io_info.location). The one source for that fact: the I/O query and
 * the descriptors of the layers that read it (prt_tensor_desc_on_host). */
static inline int engine_tensor_on_host(const prt_engine *e, int32_t t)
{
    int32_t i = e->tensors[t].input_index;
    return e->device != PRT_DEVICE_CPU && i >= 0 && e->nb_profiles > 0 &&
           e->prof_vmin[i].nb_dims > 0;
}
/* Derives the fallback plan: host_offset, fetch/push, nb_host_layers,
 * host_size. After mark_skipped (engine_derive). Fails only for out of
 * memory. */
prt_status engine_derive_fallback(prt_engine *e);
/* The bytes a CPU layer's copies move at the largest shapes: into host
 * memory before it (*in) and back to the device after it (*out). */
void engine_fallback_bytes(const prt_engine *e, const eng_layer *l, int64_t *in,
                           int64_t *out);
/* Logs each layer that runs on the CPU (a warning) and each copy with
 * its bytes at the largest shapes (info); nothing when there is none. The builder's
 * report. */
void engine_log_fallback(const prt_engine *e);

/* Allocates an empty engine (all zero). NULL on out of memory (alloc.c). */
prt_engine *engine_alloc(void);
/* Frees everything the engine owns, including plugins (alloc.c). */
void engine_free(prt_engine *e);
/* Checks every invariant above and every index; PRT_ERR_MALFORMED naming the
 * offending item. Used on engines read from bytes (validate.c). */
prt_status engine_validate(const prt_engine *e);

/* Per expression node: 1 if it depends on a size tensor's value. Caller
 * frees with base_free; NULL on out of memory. */
uint8_t *engine_size_deps(const prt_engine *e);

/* Makes layer li's runtime-phase plugin (l->plugin) from its creator, found
 * by the layer's key (built-ins without a registry), and its stored fields,
 * at its tactic: what loading an engine does, and what the builder does
 * before it hands an engine out, so a plugin whose key or fields would not
 * bring it back fails at build. PRT_ERR_NOT_FOUND naming the key and the
 * libraries searched, or the plugin's own error. */
prt_status engine_recreate_plugin(const prt_registry *reg, eng_layer *l, int32_t li);

/* Asks each layer's plugin again what the file says of the layer, on a
 * plugin made for the build phase from the layer's fields (check_layers.c):
 * its output count and dtypes, the dtype and format at every position
 * (supports_format_combination), and its workspace at every profile. A
 * built-in op's workspace claim must be exactly its need at the profiles'
 * largest shapes, another plugin's at least its answer. PRT_ERR_MALFORMED
 * naming the layer, its op or plugin and what disagrees (the claim and the
 * need); a failing plugin entry is PRT_ERR_PLUGIN with its message. After
 * engine_validate and with every layer's plugin recreated, when an engine
 * is loaded. */
prt_status engine_check_layers(const prt_registry *reg, const prt_engine *e);

/* Tells the built-in ops of a CPU engine's CPU layers which of their
 * inputs are constants, with the constants' bytes in `weights`, so they
 * derive what they need from them once (op_bind_constants, op_const.h:
 * MatMul packs a constant B); does nothing for other engines. After every
 * layer's plugin is made, when the engine is built or loaded; contexts'
 * clones share the state. Fails only for out of memory. */
prt_status engine_bind_constants(prt_engine *e);
/* Hands e->precision to every built-in op of e (op_set_precision), before
 * any context exists; called beside engine_bind_constants. */
void engine_bind_precision(prt_engine *e);

/* Embedded plugin libraries (embedded.c). */
/* The builder's part (prt_builder_config_set_embed_plugins): stores in the
 * engine, once each, the file of every library a layer's creator came from,
 * read now and required to hash to the layer's library_hash. A layer of a
 * creator added directly, or of a library loaded by a bare name (no hash),
 * cannot be carried: PRT_ERR_UNSUPPORTED naming the layer. */
prt_status engine_embed_libraries(prt_engine *e);
/* The LIBS part of engine_validate: names, sizes, each library's bytes
 * hashing to its hash, no hash twice, each library serving some layer and
 * each layer's library (when it has a hash) stored. */
prt_status engine_validate_libraries(const prt_engine *e);
/* The loader's part, before any plugin is recreated: a library whose hash
 * the caller's registry holds is served by it (the caller's copy takes
 * precedence); the others are loaded from the engine's bytes into
 * e->embedded_reg when `allow` has PRT_EMBEDDED_PLUGIN_LIBRARIES, else
 * PRT_ERR_UNSUPPORTED naming them and the option. */
prt_status engine_load_libraries(prt_engine *e, const prt_registry *reg, uint32_t allow);
/* The registry that serves layer l: e->embedded_reg when l's library was
 * loaded from the engine's bytes, else `reg`. */
const prt_registry *engine_layer_registry(const prt_engine *e, const prt_registry *reg,
                                          const eng_layer *l);

/* Serialization (format.c). Writes the whole engine. */
prt_status engine_write(const prt_engine *e, base_buf *out);
/* Parses bytes into a new engine without plugins (layers' plugin == NULL).
 * Every malformed, truncated or altered input is a clean error. */
prt_status engine_read(const void *bytes, size_t size, prt_engine **out);

#endif /* PLUGRT_ENGINE_IMPL_H */
