/*
 * plugrt public API: errors and logging, registries, networks, the builder,
 * engines and execution contexts.
 *
 * Conventions, stated once:
 *
 *  - Every public symbol starts with prt_ / PRT_.
 *  - Every fallible function returns prt_status (PRT_OK == 0) and writes its
 *    results through out_ parameters, which are left untouched on failure.
 *    The calling thread's last error message is prt_last_error().
 *  - Objects are opaque handles made by prt_<object>_create (or _build,
 *    _deserialize) and freed by prt_<object>_destroy, which accepts NULL.
 *  - Functions named _get_ return borrowed pointers; the comment says how long
 *    they live. Memory the caller must free says so and is freed with
 *    prt_free().
 *  - Nothing prints unless a logger is installed; nothing exits or aborts.
 *  - Threads: registries, networks, builders and configs are used by one
 *    thread at a time. An engine is immutable once built or loaded and may be
 *    shared by threads; each thread runs its own execution context. Within
 *    one run a context may spread its layers' loops over worker threads of
 *    its own (prt_context_options.threads); results never depend on how many.
 *  - Tensors in a network are named by int32 ids; layers likewise.
 */
#ifndef PLUGRT_PLUGRT_H
#define PLUGRT_PLUGRT_H

#include <stddef.h>
#include <stdint.h>

#include "plugin.h"
#include "plugrt/version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PRT_NODISCARD __attribute__((warn_unused_result))
#else
#define PRT_NODISCARD
#endif

/* Marks the functions libplugrt exports. The library is built with hidden
 * visibility, so everything not marked stays internal (nm -D shows only
 * prt_ symbols). */
#if defined(_WIN32)
#define PRT_API
#elif defined(__GNUC__)
#define PRT_API __attribute__((visibility("default")))
#else
#define PRT_API
#endif

/* The version of the library as built: PRT_VERSION and PRT_VERSION_NUMBER
 * (version.h) of libplugrt itself, which differ from the header's when a
 * program runs against another build. Static storage. */
PRT_API const char *prt_version_string(void);
PRT_API int32_t prt_version_number(void);

/* ------------------------------------------------------------------------ */
/* Errors, logging, memory                                                   */
/* ------------------------------------------------------------------------ */

/* The calling thread's last error message ("" if none). Valid until the next
 * plugrt call on this thread. */
PRT_API const char *prt_last_error(void);

/* Clears the calling thread's last error message (for callers that invoke
 * plugin or creator entries themselves and want to tell whether the callee
 * described its failure). */
PRT_API void prt_clear_error(void);

/* Short name of a status code, e.g. "PRT_ERR_SHAPE". Static storage. */
PRT_API const char *prt_status_name(prt_status status);

/* Receives log messages of severity <= the installed threshold. May be called
 * from any thread that calls plugrt. */
typedef void (*prt_log_fn)(void *user, int32_t severity, const char *message);

/* Installs a process-wide logger (NULL removes it). Messages more verbose than
 * max_severity are dropped. Not thread-safe against concurrent logging. */
PRT_API void prt_set_logger(prt_log_fn fn, void *user, int32_t max_severity);

/* Frees memory that a plugrt function handed to the caller. NULL is fine. */
PRT_API void prt_free(void *p);
/* Allocates memory that prt_free frees (for code that hands memory to plugrt
 * users, e.g. the ONNX importer). NULL on failure; prt_malloc(0) is valid. */
PRT_API void *prt_malloc(size_t size);

/* Size in bytes of one element; 0 for an invalid dtype. */
PRT_API size_t prt_dtype_size(int32_t dtype);
/* "float32", "float16", ...; "invalid" for an unknown value. */
PRT_API const char *prt_dtype_name(int32_t dtype);

/* IEEE binary16 and bfloat16 bits to float32 and back (round to nearest
 * even; NaN stays NaN, overflow gives infinity). */
PRT_API float prt_half_to_float(uint16_t h);
PRT_API uint16_t prt_float_to_half(float f);
PRT_API float prt_bf16_to_float(uint16_t h);
PRT_API uint16_t prt_float_to_bf16(float f);
/* An 8-bit float's bits (dtype PRT_FLOAT8E4M3FN or PRT_FLOAT8E5M2) to
 * float32, exact (NaN a quiet NaN), and back as ONNX's Cast and
 * QuantizeLinear convert: round to nearest even; with `saturate` non-zero,
 * infinities and values beyond the largest finite give +-largest, else
 * NaN (E4M3FN) or +-infinity (E5M2). Another dtype gives NaN and 0. */
PRT_API float prt_fp8_to_float(int32_t dtype, uint8_t v);
PRT_API uint8_t prt_float_to_fp8(int32_t dtype, float f, int saturate);

/* The host services plugrt offers to plugins (logging, errors). For code that
 * registers creators directly rather than through a library. Static storage. */
PRT_API const prt_host_services *prt_host_services_get(void);

/* ------------------------------------------------------------------------ */
/* Devices: memory, copies, streams and events                               */
/* ------------------------------------------------------------------------ */

/* The device behind engines (prt_device) as plugrt uses it, for programs
 * and language bindings that do not link a device runtime of their own (the
 * plugrt program moves .npy data and times runs with these). On CUDA the
 * handles are the CUDA runtime's (cudaStream_t, cudaEvent_t) and memory is
 * cudaMalloc'd, so they mix with the caller's own CUDA code; on the CPU,
 * memory is host memory, streams are tokens and every call completes before
 * it returns. Every function may be called from any thread. */

/* PRT_OK when this build and machine can use the device; else
 * PRT_ERR_UNSUPPORTED with the reason (no CUDA in this build, no driver, no
 * GPU). */
PRT_API PRT_NODISCARD prt_status prt_device_check(int32_t device);

/* What a device is. Set struct_size = sizeof(prt_device_info) first. */
typedef struct prt_device_info {
    uint32_t struct_size;
    int32_t device;   /* prt_device */
    char name[96];    /* "NVIDIA H200", "cpu" */
    int32_t cc_major; /* CUDA compute capability; 0 on the CPU */
    int32_t cc_minor;
    int32_t multiprocessors;
    int64_t memory_bytes;
} prt_device_info;
PRT_API PRT_NODISCARD prt_status prt_device_get_info(int32_t device,
                                                     prt_device_info *out);

/* Several GPUs: every call here, and engines built or loaded, contexts
 * made and run, use the calling thread's current device of their kind
 * (CUDA: the CUDA runtime's current device, cudaSetDevice, which these
 * set too). An engine's weights and a context's memory stay on the device
 * that was current when they were made: make that device current on any
 * thread that uses them (load the engine once per GPU to run it on
 * several). The CPU is one device, index 0. prt_device_count answers
 * PRT_ERR_UNSUPPORTED with the reason where the device is not usable;
 * prt_device_set_current an index out of range with
 * PRT_ERR_INVALID_ARGUMENT naming the count. */
PRT_API PRT_NODISCARD prt_status prt_device_count(int32_t device, int32_t *out);
PRT_API PRT_NODISCARD prt_status prt_device_get_current(int32_t device, int32_t *out);
PRT_API PRT_NODISCARD prt_status prt_device_set_current(int32_t device, int32_t index);

/* Device memory (aligned to 256 bytes) and pinned host memory; free
 * accepts NULL. PRT_ERR_OUT_OF_MEMORY names the size. */
PRT_API PRT_NODISCARD prt_status prt_device_malloc(int32_t device, size_t bytes,
                                                   void **out);
PRT_API void prt_device_free(int32_t device, void *p);
PRT_API PRT_NODISCARD prt_status prt_device_malloc_host(int32_t device, size_t bytes,
                                                        void **out);
PRT_API void prt_device_free_host(int32_t device, void *p);

typedef enum prt_memcpy_kind {
    PRT_MEMCPY_HOST_TO_DEVICE = 0,
    PRT_MEMCPY_DEVICE_TO_HOST = 1,
    PRT_MEMCPY_DEVICE_TO_DEVICE = 2
} prt_memcpy_kind;
/* Copies and memsets are ordered on `stream` (NULL: the default stream)
 * and may return before they are done. */
PRT_API PRT_NODISCARD prt_status prt_device_memcpy(int32_t device, void *dst,
                                                   const void *src, size_t bytes,
                                                   int32_t kind, void *stream);
PRT_API PRT_NODISCARD prt_status prt_device_memset(int32_t device, void *dst,
                                                   int32_t value, size_t bytes,
                                                   void *stream);
/* Waits for all work on the device. */
PRT_API PRT_NODISCARD prt_status prt_device_synchronize(int32_t device);

PRT_API PRT_NODISCARD prt_status prt_stream_create(int32_t device, void **out);
PRT_API void prt_stream_destroy(int32_t device, void *stream);
PRT_API PRT_NODISCARD prt_status prt_stream_synchronize(int32_t device, void *stream);

PRT_API PRT_NODISCARD prt_status prt_event_create(int32_t device, void **out);
PRT_API void prt_event_destroy(int32_t device, void *event);
PRT_API PRT_NODISCARD prt_status prt_event_record(int32_t device, void *event,
                                                  void *stream);
PRT_API PRT_NODISCARD prt_status prt_event_synchronize(int32_t device, void *event);
/* Milliseconds between two recorded events that have completed. */
PRT_API PRT_NODISCARD prt_status prt_event_elapsed_ms(int32_t device, void *start,
                                                      void *end, double *out_ms);

/* ------------------------------------------------------------------------ */
/* Registry: creators keyed by (namespace, name, version)                    */
/* ------------------------------------------------------------------------ */

typedef struct prt_registry prt_registry;

/* A new, empty registry. Registries are independent: two may hold creators
 * with the same key. */
PRT_API PRT_NODISCARD prt_status prt_registry_create(prt_registry **out);
/* Unloads the libraries the registry loaded. Engines and plugins made from
 * them must be destroyed first. */
PRT_API void prt_registry_destroy(prt_registry *reg);

/* Adds a creator. It is borrowed: it must outlive the registry or its
 * deregistration. PRT_ERR_ALREADY_EXISTS if the key is taken;
 * PRT_ERR_VERSION if its abi_version is newer than PRT_PLUGIN_ABI_VERSION. */
PRT_API PRT_NODISCARD prt_status prt_registry_add_creator(prt_registry *reg,
                                                          const prt_plugin_creator *c);
/* Removes the creator with this key. PRT_ERR_NOT_FOUND if none. */
PRT_API PRT_NODISCARD prt_status prt_registry_remove_creator(prt_registry *reg,
                                                             const char *plugin_namespace,
                                                             const char *name,
                                                             const char *version);
/* Looks up a creator; NULL namespace means "", NULL version means "1".
 * PRT_ERR_NOT_FOUND names the key and the libraries loaded. The result is
 * borrowed until it is removed or its library unloaded. */
PRT_API PRT_NODISCARD prt_status prt_registry_find_creator(
    const prt_registry *reg, const char *plugin_namespace, const char *name,
    const char *version, const prt_plugin_creator **out);
/* Number of creators, and the i-th (borrowed, as above; NULL if out of
 * range). Order is the order of registration. */
PRT_API int32_t prt_registry_creator_count(const prt_registry *reg);
PRT_API const prt_plugin_creator *prt_registry_get_creator(const prt_registry *reg,
                                                           int32_t index);

/* Loads a plugin library with dlopen, calls its entry point
 * (PRT_PLUGIN_ENTRY_SYMBOL) and adds every creator it returns. Errors:
 * PRT_ERR_IO (cannot open), PRT_ERR_NOT_FOUND (no entry point),
 * PRT_ERR_VERSION (library refused our ABI or speaks a newer one),
 * PRT_ERR_ALREADY_EXISTS (a key clashes; nothing of the library is added),
 * PRT_ERR_MALFORMED (not a loadable library, or a broken description). The
 * message is "cannot load plugin library PATH: " and what is wrong, whole:
 * print it as it is. */
PRT_API PRT_NODISCARD prt_status prt_registry_load_library(prt_registry *reg,
                                                           const char *path);
/* Removes the library's creators and unloads it. PRT_ERR_NOT_FOUND if the
 * path was not loaded into this registry. */
PRT_API PRT_NODISCARD prt_status prt_registry_unload_library(prt_registry *reg,
                                                             const char *path);
/* Identity of the library a creator came from: its path as loaded and a hash
 * of its file content (0 for creators added directly). Borrowed like the
 * creator. Returns NULL path for a creator added directly. */
PRT_API const char *prt_registry_get_creator_library(const prt_registry *reg,
                                                     const prt_plugin_creator *c,
                                                     uint64_t *out_content_hash);

/* Built-in ops. plugrt's own operators (Relu, MatMul, Conv, ...) are plugins
 * in the namespace PRT_BUILTIN_NAMESPACE, served by plugrt itself: every
 * engine loader finds them without a registry entry. Creators have static
 * storage. PRT_ERR_NOT_FOUND names the op if there is no such built-in. */
#define PRT_BUILTIN_NAMESPACE "plugrt"
PRT_API PRT_NODISCARD prt_status prt_builtin_find_creator(const char *name,
                                                          const char *version,
                                                          const prt_plugin_creator **out);
PRT_API int32_t prt_builtin_creator_count(void);
PRT_API const prt_plugin_creator *prt_builtin_get_creator(int32_t index);
/* What built-in op `index` (0 to prt_builtin_creator_count() - 1) runs on
 * in this build: *out_mask gets, for `device` (prt_device), the dtypes its
 * kernel there takes for the op's key input (bit t set: prt_dtype t; the
 * key input is input 0, Where's X, or the output for an op without
 * inputs), 0 when the op has no kernel on that device. Every op runs on
 * the CPU. A network may narrow what one layer takes (its fields: Clip
 * with bounds takes floats only). PRT_ERR_INVALID_ARGUMENT for an index or
 * device out of range. Thread-safe. */
PRT_API PRT_NODISCARD prt_status prt_builtin_get_dtypes(int32_t index, int32_t device,
                                                        uint32_t *out_mask);

/* ------------------------------------------------------------------------ */
/* Network definition                                                        */
/* ------------------------------------------------------------------------ */

typedef struct prt_network prt_network;

PRT_API PRT_NODISCARD prt_status prt_network_create(prt_network **out);
/* Destroys the network and the plugins it owns. */
PRT_API void prt_network_destroy(prt_network *net);

/* Adds a network input. dims may hold -1 for dynamic dims (bounded by an
 * optimization profile). Names are unique among tensors. */
PRT_API PRT_NODISCARD prt_status prt_network_add_input(prt_network *net, const char *name,
                                                       int32_t dtype,
                                                       const prt_dims *dims,
                                                       int32_t *out_tensor);

/* Adds a constant tensor (weights). `data` holds volume(dims) elements of
 * dtype, C order, and is copied. dims must be static. */
PRT_API PRT_NODISCARD prt_status prt_network_add_constant(prt_network *net,
                                                          const char *name, int32_t dtype,
                                                          const prt_dims *dims,
                                                          const void *data,
                                                          int32_t *out_tensor);

/* Adds a plugin layer. On success the network owns `plugin` (made by a
 * creator for PRT_PHASE_BUILD); on failure the caller still does. `inputs`
 * are tensor ids; `shape_inputs` are tensor ids whose VALUES are fed to
 * get_output_shapes (may be NULL with 0): shape tensors — a 1-D int32/int64
 * network input with value bounds in every profile, a small integer
 * constant, or an output whose values a plugin states (get_output_values).
 * The builder fails, naming the layer, when a shape input's values cannot be
 * known. A tensor may be both an input and a shape input. */
PRT_API PRT_NODISCARD prt_status
prt_network_add_plugin(prt_network *net, const int32_t *inputs, int32_t nb_inputs,
                       const int32_t *shape_inputs, int32_t nb_shape_inputs,
                       prt_plugin *plugin, int32_t *out_layer);

/* The tensor id of a layer's output `index`. */
PRT_API PRT_NODISCARD prt_status prt_network_get_layer_output(const prt_network *net,
                                                              int32_t layer,
                                                              int32_t index,
                                                              int32_t *out_tensor);
/* Number of outputs of a layer (0 for an invalid id). */
PRT_API int32_t prt_network_layer_output_count(const prt_network *net, int32_t layer);
/* Number of layers (0 for NULL). Layer ids are 0..count-1 in the order the
 * layers were added, which is a topological order (a layer takes only
 * tensors that exist). With prt_network_get_layer_output and
 * prt_network_mark_output a caller can expose every intermediate tensor,
 * as `plugrt run --compare-layers` does. */
PRT_API int32_t prt_network_layer_count(const prt_network *net);
/* *out = 1 if the builder may need the values of `tensor` (not only its
 * dims): it is a shape input of some layer, or an input of a layer that
 * states its outputs' values (get_output_values) where one of those outputs
 * is; and, for a network input or a constant, it is a 0-D or 1-D int32/int64
 * (a network input also float32) tensor of 1..PRT_MAX_DIMS elements, or of a
 * dynamic length each profile pins (what can carry values). A network input
 * for which this is 1 takes the bounds of its values in every profile
 * (prt_builder_config_set_profile_shape_values); `plugrt run` sets them
 * from the input's data. */
PRT_API PRT_NODISCARD prt_status prt_network_is_shape_input(const prt_network *net,
                                                            int32_t tensor, int32_t *out);

/* Names a tensor (copied). Default names are "<layer name>:<index>". */
PRT_API PRT_NODISCARD prt_status prt_network_set_tensor_name(prt_network *net,
                                                             int32_t tensor,
                                                             const char *name);
/* Names a layer (copied). Default names are "<plugin name>_<layer id>". */
PRT_API PRT_NODISCARD prt_status prt_network_set_layer_name(prt_network *net,
                                                            int32_t layer,
                                                            const char *name);
/* Marks a tensor as a network output. */
PRT_API PRT_NODISCARD prt_status prt_network_mark_output(prt_network *net,
                                                         int32_t tensor);
/* Network inputs and marked outputs, in order: counts (0 for NULL), and the
 * tensor id of the index-th. */
PRT_API int32_t prt_network_input_count(const prt_network *net);
PRT_API int32_t prt_network_output_count(const prt_network *net);
PRT_API PRT_NODISCARD prt_status prt_network_get_input(const prt_network *net,
                                                       int32_t index,
                                                       int32_t *out_tensor);
PRT_API PRT_NODISCARD prt_status prt_network_get_output(const prt_network *net,
                                                        int32_t index,
                                                        int32_t *out_tensor);
/* A tensor's name (borrowed until it is renamed or the network destroyed),
 * dtype and dims. Inputs and constants have theirs (-1 for dynamic dims);
 * layer outputs are known only after a build: dtype -1, nb_dims -1. Any out
 * pointer may be NULL. */
PRT_API PRT_NODISCARD prt_status prt_network_get_tensor(const prt_network *net,
                                                        int32_t tensor,
                                                        const char **out_name,
                                                        int32_t *out_dtype,
                                                        prt_dims *out_dims);

/* Records the dtype and dims the network's author declares for a tensor
 * (an ONNX model's graph outputs and value_info): dtype -1 and dims NULL (or
 * nb_dims -1) leave either undeclared, a dim -1 is dynamic. When a plugin
 * layer's output disagrees — another dtype, another rank, or another value
 * for a dim both sides know — the builder warns naming the layer, the output
 * and both shapes, or fails the build when the network is strict. */
PRT_API PRT_NODISCARD prt_status prt_network_expect_tensor(prt_network *net,
                                                           int32_t tensor, int32_t dtype,
                                                           const prt_dims *dims);
/* 1: a declared shape or dtype that disagrees fails the build (default 0:
 * a warning through the logger). */
PRT_API PRT_NODISCARD prt_status prt_network_set_strict(prt_network *net, int32_t strict);

/* Sets the quantization of an INT8 or UINT8 tensor (plugin.h,
 * prt_quant_desc): what its integers stand for, which every plugin that
 * reads or writes it sees in its descriptors (prt_tensor_desc_quant). Set struct_size;
 * axis, count, scales and zero_points (NULL: all 0) as plugin.h says; the
 * arrays are copied. NULL or kind PRT_QUANT_NONE clears it. Checked here:
 * the kind, counts, finite positive scales, zero points in -128..255
 * (PRT_ERR_INVALID_ARGUMENT); at build: the tensor's dtype (INT8/UINT8),
 * its zero points' range, the axis within its rank and the count against
 * that dim. A layer output may carry one too: its producer then writes
 * integers on that scale (its supports_format_combination sees it). */
PRT_API PRT_NODISCARD prt_status prt_network_set_tensor_quant(
    prt_network *net, int32_t tensor, const prt_quant_desc *quant);
/* The quantization set on a tensor: kind PRT_QUANT_NONE when none. The
 * arrays are borrowed until it is set again or the network destroyed. Set
 * out->struct_size first. */
PRT_API PRT_NODISCARD prt_status prt_network_get_tensor_quant(const prt_network *net,
                                                              int32_t tensor,
                                                              prt_quant_desc *out);

/* Finds a tensor by name; PRT_ERR_NOT_FOUND if none. */
PRT_API PRT_NODISCARD prt_status prt_network_find_tensor(const prt_network *net,
                                                         const char *name,
                                                         int32_t *out_tensor);

/* ------------------------------------------------------------------------ */
/* Builder                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct prt_builder_config prt_builder_config;

PRT_API PRT_NODISCARD prt_status prt_builder_config_create(prt_builder_config **out);
PRT_API void prt_builder_config_destroy(prt_builder_config *cfg);

/* Target device (prt_device). Default PRT_DEVICE_CPU. PRT_ERR_UNSUPPORTED
 * if this build has no such device. */
PRT_API PRT_NODISCARD prt_status prt_builder_config_set_device(prt_builder_config *cfg,
                                                               int32_t device);
/* Cap on any one layer's workspace, in bytes; default 1 GiB. A layer that
 * asks for more fails the build with its name. */
PRT_API PRT_NODISCARD prt_status
prt_builder_config_set_workspace_limit(prt_builder_config *cfg, int64_t bytes);
/* 0 (default): take the first accepted format combination and each
 * plugin's first listed tactic (0 when it lists none; plugin.h,
 * get_valid_tactics). 1: time every accepted combination and listed tactic
 * on random data and keep the fastest. */
PRT_API PRT_NODISCARD prt_status prt_builder_config_set_autotune(prt_builder_config *cfg,
                                                                 int32_t on);
/* 1 (default): on the CPU, tensors inside the engine take the blocked
 * format PRT_FORMAT_CHW8 (plugin.h) wherever the layer producing one and
 * every layer reading it accept it (the built-in convolutions, pooling and
 * element-wise ops between them); `plugrt inspect` shows each tensor's
 * format. 0: every tensor LINEAR. Engine inputs and outputs are always
 * LINEAR, and CUDA engines use LINEAR only. */
PRT_API PRT_NODISCARD prt_status
prt_builder_config_set_blocked_formats(prt_builder_config *cfg, int32_t on);
/* Threads the timing runs of autotuning use, as prt_context_options.threads
 * (0, the default: prt_default_thread_count(); 1: none), so tactics are
 * timed as the contexts that will run them will run them. The threads
 * exist for the duration of an autotuning prt_engine_build. */
PRT_API PRT_NODISCARD prt_status prt_builder_config_set_threads(prt_builder_config *cfg,
                                                                int32_t threads);
/* A timing cache file: the tactic and format choices of earlier builds,
 * keyed by the layer's plugin, fields, shapes, dtypes and the device, and
 * the code NVRTC compiled from kernel source (plugin.h, get_kernel), keyed
 * by source, options, capability and NVRTC version. When
 * set, the builder reads it if it exists (a damaged or foreign file is
 * PRT_ERR_MALFORMED naming it; it is validated like an engine file), reuses
 * every choice that still applies instead of timing again, and after a
 * successful build writes it back with the new choices (replacing the file
 * atomically). NULL clears it. The path is copied. */
PRT_API PRT_NODISCARD prt_status
prt_builder_config_set_timing_cache_file(prt_builder_config *cfg, const char *path);
/* 1: the engine carries the plugin libraries its layers' creators came
 * from (TensorRT's setPluginsToSerialize): each library file once, with its
 * content hash, read when the engine is built, so the engine file is all a
 * deployment needs. Loading such an engine runs code from the file, so
 * prt_engine_deserialize_with_options must allow it
 * (PRT_EMBEDDED_PLUGIN_LIBRARIES). Every plugin layer must then come from a
 * library loaded by path (prt_registry_load_library with a '/' in it):
 * prt_engine_build fails with PRT_ERR_UNSUPPORTED naming a layer whose
 * creator was added directly or whose library was found by the loader's
 * search, and with PRT_ERR_IO when a library's file is gone or has changed
 * since it was loaded. 0 (default): the engine records each library's path
 * and hash only. */
PRT_API PRT_NODISCARD prt_status
prt_builder_config_set_embed_plugins(prt_builder_config *cfg, int32_t on);
/* 0 (default): building for a device where a layer's op or plugin has no
 * kernel (for its dtypes) fails naming the layer. 1: on a CUDA build such a
 * layer runs on the CPU instead, when its plugin runs there: the engine
 * copies the GPU tensors it reads to host memory before it and the tensors
 * it writes back to the GPU for their GPU readers, engine outputs and size
 * tensors after it (consecutive CPU layers share host tensors, with no copy
 * between). The build log names each such layer (a warning) and each
 * copy with its bytes at the largest shapes (info); `plugrt inspect` shows every layer's
 * device. A context runs a CPU layer when its inputs are ready: it waits for the stream
 * before the layer, so such an engine cannot be captured into a graph
 * (prt_context_capture_graph fails naming the layer). No effect on a CPU build.
 * PRT_ERR_INVALID_ARGUMENT for cfg NULL or `on` not 0/1. */
PRT_API PRT_NODISCARD prt_status
prt_builder_config_set_cpu_fallback(prt_builder_config *cfg, int32_t on);

/* Precision flags (issue 24; TensorRT's BuilderFlag kFP16, kBF16, kTF32).
 * Without them every layer runs in the dtypes the network gives it.
 * PRT_PRECISION_FP16 / PRT_PRECISION_BF16: the builder runs layers in that
 * 16-bit type where the op or plugin takes it on the target device (a
 * plugin only where its supports_format_combination accepts it), casting
 * at every boundary: network inputs and outputs keep their dtypes, shape
 * and size tensors stay integers, float32 constants read by 16-bit layers
 * are converted once at build. Reductions, Softmax and the normalizations
 * accumulate in float32 inside their 16-bit kernels. With both, float16 is
 * taken. The build log (PRT_SEV_INFO) counts the 16-bit layers and names
 * each layer kept in float32 and why. PRT_PRECISION_TF32: float32 products
 * and convolutions on CUDA may use TF32 tensor cores (10-bit mantissa
 * inputs, float32 sums); without it they are strict float32. The flags are
 * stored in the engine (prt_engine_get_precision_flags). */
#define PRT_PRECISION_FP16 0x1u
#define PRT_PRECISION_BF16 0x2u
#define PRT_PRECISION_TF32 0x4u
/* Sets the precision flags (an OR of PRT_PRECISION_*; 0, the default, is
 * strict typing). PRT_ERR_INVALID_ARGUMENT for NULL or an unknown bit. */
PRT_API PRT_NODISCARD prt_status
prt_builder_config_set_precision_flags(prt_builder_config *cfg, uint32_t flags);
/* The flags set (0 for NULL). */
PRT_API uint32_t prt_builder_config_get_precision_flags(const prt_builder_config *cfg);

/* Adds an optimization profile; *out_profile is its index (0, 1, ...). */
PRT_API PRT_NODISCARD prt_status prt_builder_config_add_profile(prt_builder_config *cfg,
                                                                int32_t *out_profile);
/* Sets min/opt/max dims of a dynamic input in a profile. Rank must match the
 * input; min <= opt <= max element-wise; static dims must equal the input's. */
PRT_API PRT_NODISCARD prt_status prt_builder_config_set_profile_dims(
    prt_builder_config *cfg, int32_t profile, const char *input_name, const prt_dims *min,
    const prt_dims *opt, const prt_dims *max);

/* Sets min/opt/max of the values of a shape input: a 0-D (count 1) or 1-D
 * int32/int64 network input of static length `count` (1..PRT_MAX_DIMS) whose
 * values some layer's shape depends on. Required in every profile for every shape input;
 * at run time its values (read from its address, host memory) must lie within them.
 * A float32 shape input (Resize's scales given at run time) takes the same
 * call with each float as prt_float_shape_value(v); NaN is never a value. */
/* The int64 that stands for the float32 v wherever shape values are int64
 * (profile bounds, get_output_shapes' values): an order key (|bits| with
 * v's sign), so keys compare as the floats do and min <= opt <= max holds
 * for them alike. */
PRT_API int64_t prt_float_shape_value(float v);
PRT_API PRT_NODISCARD prt_status prt_builder_config_set_profile_shape_values(
    prt_builder_config *cfg, int32_t profile, const char *input_name, const int64_t *min,
    const int64_t *opt, const int64_t *max, int32_t count);

typedef struct prt_engine prt_engine;

/* Builds an engine from a network. The registry (may be NULL) names the
 * library each plugin's creator came from, stored in the engine. The network
 * and config are only read. *out is owned by the caller. */
PRT_API PRT_NODISCARD prt_status prt_engine_build(const prt_network *net,
                                                  const prt_builder_config *cfg,
                                                  const prt_registry *reg,
                                                  prt_engine **out);

/* ------------------------------------------------------------------------ */
/* Engine                                                                    */
/* ------------------------------------------------------------------------ */

/* Destroys the engine. Its contexts must be destroyed first. */
PRT_API void prt_engine_destroy(prt_engine *engine);

/* Serializes: *out_bytes (free with prt_free) holds *out_size bytes. */
PRT_API PRT_NODISCARD prt_status prt_engine_serialize(const prt_engine *engine,
                                                      void **out_bytes, size_t *out_size);
/* Loads an engine from bytes (copied; the caller keeps them). Plugins are recreated
 * through `reg`. Every malformed, truncated or altered input is PRT_ERR_MALFORMED or
 * PRT_ERR_VERSION; a missing plugin is PRT_ERR_NOT_FOUND naming its key, its library
 * and the libraries searched; a plugin that refuses gives its own status, layer named. */
PRT_API PRT_NODISCARD prt_status prt_engine_deserialize(const prt_registry *reg,
                                                        const void *bytes, size_t size,
                                                        prt_engine **out);
/* Loads an engine from bytes for inspection only: the bytes are read and
 * checked as prt_engine_deserialize checks them, but no layer's plugin is
 * recreated, so neither a registry, nor the plugins' libraries, nor the
 * engine's device is needed. A plan is self-describing: every prt_engine_*
 * query works on the result, and prt_engine_get_layer gives each plugin's
 * key, library, content hash and serialized fields. What only the plugins
 * can confirm (their formats and workspace claims) is not checked, and
 * prt_context_create refuses the engine (PRT_ERR_STATE). Errors as
 * prt_engine_deserialize's for the bytes. */
PRT_API PRT_NODISCARD prt_status prt_engine_deserialize_unresolved(const void *bytes,
                                                                   size_t size,
                                                                   prt_engine **out);
/* How many of the engine's layers are kernel layers: code held in the
 * engine file, which a context runs only when allowed
 * (prt_context_options.allow_embedded_kernels). 0 for NULL. */
PRT_API int32_t prt_engine_get_nb_kernel_layers(const prt_engine *engine);

/* The precision flags the engine was built with
 * (prt_builder_config_set_precision_flags); 0 for NULL. */
PRT_API uint32_t prt_engine_get_precision_flags(const prt_engine *engine);

/* 1 if the engine came from prt_engine_deserialize_unresolved (it cannot
 * run), 0 otherwise and for NULL. */
PRT_API int32_t prt_engine_is_unresolved(const prt_engine *engine);

/* Code an engine file may carry for the loader to run: the bits of
 * prt_deserialize_options.allow_embedded. A file is data until its reader
 * says otherwise: an engine carrying code of a kind the caller did not
 * allow does not load (PRT_ERR_UNSUPPORTED naming what it carries and the
 * option), and prt_engine_deserialize allows nothing. */
#define PRT_EMBEDDED_PLUGIN_LIBRARIES 0x1u /* prt_builder_config_set_embed_plugins */
/* GPU kernel layers (plugin.h, "Kernel layers"): the engine loads either
 * way; with this bit its contexts run them, without it each context must
 * allow them (prt_context_options.allow_embedded_kernels). */
#define PRT_EMBEDDED_KERNELS 0x2u
/* Every kind this header knows (`plugrt run --allow-embedded-code`). A
 * later kind gets a new bit, which a caller built against this header does
 * not set: it allows only what it knew of. */
#define PRT_EMBEDDED_CODE (PRT_EMBEDDED_PLUGIN_LIBRARIES | PRT_EMBEDDED_KERNELS)

/* Options for prt_engine_deserialize_with_options: zero-initialize, set
 * struct_size = sizeof(prt_deserialize_options), then the fields you need. */
typedef struct prt_deserialize_options {
    uint32_t struct_size;
    /* PRT_EMBEDDED_* bits: the kinds of code from the file the loader may
     * run. 0 (default): none. With PRT_EMBEDDED_PLUGIN_LIBRARIES, each
     * library the engine carries and `reg` does not already hold (same
     * content hash: the caller's copy takes precedence, and needs no
     * permission) is written to a private temporary file (a new 0700
     * directory under $TMPDIR), checked, opened with dlopen and unlinked at
     * once; a library of the same hash already open in the process is
     * reused instead. The loaded libraries serve only this engine's layers
     * (never `reg`) and are closed when it is destroyed. */
    uint32_t allow_embedded;
} prt_deserialize_options;

/* prt_engine_deserialize with options (NULL: the defaults). `reg` may be
 * NULL when every plugin layer's library is carried by the engine and
 * allowed. Errors as prt_engine_deserialize's; PRT_ERR_UNSUPPORTED for
 * carried code the options do not allow, naming each library; a carried
 * library that does not load is its loader's error (PRT_ERR_IO,
 * PRT_ERR_MALFORMED, ...) naming it. */
PRT_API PRT_NODISCARD prt_status prt_engine_deserialize_with_options(
    const prt_registry *reg, const void *bytes, size_t size,
    const prt_deserialize_options *options, prt_engine **out);

/* Where a carried plugin library's code comes from in a loaded engine. */
typedef enum prt_embedded_library_source {
    /* Not loaded: the engine is for inspection only. */
    PRT_EMBEDDED_LIBRARY_NOT_LOADED = 0,
    /* From the engine's bytes (or the process's copy of the same bytes). */
    PRT_EMBEDDED_LIBRARY_FROM_ENGINE = 1,
    /* The caller's registry held a library of the same content hash, and
     * serves the layers. */
    PRT_EMBEDDED_LIBRARY_FROM_REGISTRY = 2
} prt_embedded_library_source;

/* One plugin library an engine carries (set struct_size first, as for
 * every query struct below). */
typedef struct prt_embedded_library_info {
    uint32_t struct_size;
    const char *name; /* the file's base name; borrowed for the engine's lifetime */
    uint64_t hash;    /* content hash, as prt_layer_info.library_hash */
    int64_t size;     /* bytes */
    int32_t source;   /* prt_embedded_library_source */
} prt_embedded_library_info;

/* How many plugin libraries the engine carries (0 for NULL). */
PRT_API int32_t prt_engine_embedded_library_count(const prt_engine *engine);
/* Library `index` (0 .. count-1). PRT_ERR_INVALID_ARGUMENT for a bad index
 * or struct_size. Never loads anything. */
PRT_API PRT_NODISCARD prt_status prt_engine_get_embedded_library(
    const prt_engine *engine, int32_t index, prt_embedded_library_info *out);

/* Where a tensor's memory lives: what prt_context_set_tensor_address
 * expects. */
typedef enum prt_location {
    PRT_LOCATION_HOST = 0,  /* host memory */
    PRT_LOCATION_DEVICE = 1 /* the engine's device's memory (CUDA: cudaMalloc'd) */
} prt_location;

/* The query structs below (and prt_device_info) are filled by the library
 * but allocated by the caller, so they open with struct_size: set it to
 * sizeof the struct before the call (e.g. `prt_io_info io = {.struct_size =
 * sizeof io};`). A later plugrt may append fields; it fills only what the
 * caller's struct_size covers. A struct_size smaller than this header's
 * struct is PRT_ERR_INVALID_ARGUMENT. */

/* One input or output of an engine. */
typedef struct prt_io_info {
    uint32_t struct_size;
    int32_t location; /* prt_location */
    const char *name; /* borrowed for the engine's lifetime */
    int32_t is_input;
    int32_t dtype;  /* prt_dtype */
    int32_t format; /* prt_format */
    prt_dims dims;  /* -1 where dynamic or data-dependent */
    /* Bit i set: dim i depends on data (a size tensor), known only after a
     * run. */
    uint32_t data_dependent_mask;
    /* 1 if this output is itself a size tensor (0-D). */
    int32_t is_size_tensor;
    /* 1 if this input is a shape input: its values are read from host
     * memory when shapes are computed (location is then HOST on every
     * device). */
    int32_t is_shape_input;
} prt_io_info;

PRT_API int32_t prt_engine_io_count(const prt_engine *engine);
/* Inputs come first, in network order, then outputs in marking order. */
PRT_API PRT_NODISCARD prt_status prt_engine_get_io(const prt_engine *engine,
                                                   int32_t index, prt_io_info *out);
/* Index of an I/O tensor by name; PRT_ERR_NOT_FOUND if none. */
PRT_API PRT_NODISCARD prt_status prt_engine_find_io(const prt_engine *engine,
                                                    const char *name, int32_t *out);
/* Bytes of device memory a context needs beyond the I/O buffers: the
 * activation arena at the largest profile plus the largest workspace. */
PRT_API int64_t prt_engine_context_memory_size(const prt_engine *engine);
PRT_API int32_t prt_engine_profile_count(const prt_engine *engine);
/* The min, opt and max dims optimization profile `profile` allows for the
 * input `input_name` (TensorRT's getProfileShape); an input whose shape is
 * static has min = opt = max = its dims. Any out pointer may be NULL.
 * PRT_ERR_NOT_FOUND if no input has that name (outputs have no profile),
 * PRT_ERR_INVALID_ARGUMENT for a profile that does not exist. */
PRT_API PRT_NODISCARD prt_status prt_engine_get_profile_shape(
    const prt_engine *engine, int32_t profile, const char *input_name, prt_dims *out_min,
    prt_dims *out_opt, prt_dims *out_max);
PRT_API int32_t prt_engine_layer_count(const prt_engine *engine);
/* Device the engine was built for (prt_device). */
PRT_API int32_t prt_engine_device(const prt_engine *engine);
/* Which device of its kind (a CUDA device ordinal) holds the engine's
 * memory: the calling thread's current device when it was built or
 * loaded; 0 on the CPU and for NULL. Its contexts run there
 * (prt_context_options.switch_device). To serve one model on several
 * GPUs, load the engine once per GPU with that GPU current. */
PRT_API int32_t prt_engine_get_device_index(const prt_engine *engine);
/* The device the engine was built and tuned on: name and compute
 * capability for GPU engines; {"cpu", 0, 0} for CPU engines; name "" when
 * the file does not say. Set out->struct_size first. */
PRT_API PRT_NODISCARD prt_status prt_engine_get_build_device(const prt_engine *engine,
                                                             prt_device_info *out);

/* Inspection: what `plugrt inspect` prints. Strings are borrowed for the
 * engine's lifetime. */
typedef enum prt_tensor_kind {
    PRT_TENSOR_INPUT = 0,
    PRT_TENSOR_OUTPUT = 1,
    PRT_TENSOR_ACTIVATION = 2, /* lives in the context's arena */
    PRT_TENSOR_CONSTANT = 3    /* weights stored in the engine */
} prt_tensor_kind;

typedef struct prt_tensor_info {
    uint32_t struct_size;
    const char *name;
    int32_t kind; /* prt_tensor_kind */
    int32_t dtype;
    int32_t format;
    prt_dims dims; /* -1 where dynamic or data-dependent */
    uint32_t data_dependent_mask;
    int32_t size_id;   /* >= 0: a size tensor */
    int32_t producer;  /* layer index, -1 for inputs and constants */
    int64_t offset;    /* arena offset (activations), -1 otherwise */
    int64_t max_bytes; /* bytes at the largest shapes */
} prt_tensor_info;

PRT_API int32_t prt_engine_tensor_count(const prt_engine *engine);
/* The quantization of engine tensor `index` (prt_network_set_tensor_quant,
 * or a DequantizeLinear the builder folded into its consumer): kind
 * PRT_QUANT_NONE when none. Arrays borrowed for the engine's lifetime. Set
 * out->struct_size first. */
PRT_API PRT_NODISCARD prt_status prt_engine_get_tensor_quant(const prt_engine *engine,
                                                             int32_t index,
                                                             prt_quant_desc *out);
PRT_API PRT_NODISCARD prt_status prt_engine_get_tensor(const prt_engine *engine,
                                                       int32_t index,
                                                       prt_tensor_info *out);
/* The value of size tensor `tensor` (an index whose prt_tensor_info has
 * size_id >= 0: a count a plugin writes at run time, such as NonZero's)
 * in optimization profile `profile`: *out_opt is its value at the
 * profile's opt shapes, taken from the plugin's declared opt (what the
 * builder tuned for), *out_max the upper bound the plugin declared,
 * evaluated over the whole profile (what the memory plan holds room for).
 * Either pointer may be NULL. PRT_ERR_INVALID_ARGUMENT for a tensor that
 * is not a size tensor or a profile that does not exist. */
PRT_API PRT_NODISCARD prt_status
prt_engine_get_size_tensor_bounds(const prt_engine *engine, int32_t profile,
                                  int32_t tensor, int64_t *out_opt, int64_t *out_max);

typedef struct prt_layer_info {
    uint32_t struct_size;
    const char *name;
    const char *plugin_namespace;
    const char *plugin_name;
    const char *plugin_version;
    const char *library; /* "" for built-ins and creators added directly */
    uint64_t library_hash;
    int32_t tactic;
    int64_t workspace;
    int32_t nb_inputs;
    const int32_t *inputs; /* tensor indices */
    int32_t nb_outputs;
    const int32_t *outputs;
    const int32_t *alias_input; /* per output: aliased input or -1 */
    int32_t nb_fields;
    const prt_field *fields; /* the plugin's serialized fields */
    /* 1: runs skip this layer, since nothing reads what it writes: none of
     * its outputs is an engine output or a size tensor, and every layer
     * that takes one is skipped too. Such layers compute shape tensors
     * whose values the builder already folded into the shapes that use
     * them (a Shape -> Gather -> Concat chain for a Reshape). Marking a
     * tensor an output makes its layer run. */
    int32_t skipped;
    /* 1: the layer's plugin lets its enqueue be captured into a graph
     * (prt_plugin_build.capture_safe; plugins without the entry, and
     * engines written before it, say 1); 0: prt_context_capture_graph
     * refuses the engine, naming this layer. */
    int32_t capture_safe;
    /* 1: a kernel layer (prt_engine_get_kernel_layer): it runs GPU code
     * the engine holds, not its plugin, which need not be loaded. */
    int32_t kernel;
    /* The prt_device the layer runs on: the engine's, or PRT_DEVICE_CPU
     * for a layer of a CUDA engine built with CPU fallback
     * (prt_builder_config_set_cpu_fallback). */
    int32_t device;
    /* Such a CPU layer's copies per run, in bytes at the largest shapes:
     * from the device to the host before it, and back after it; 0 for
     * every other layer. */
    int64_t copy_to_host_bytes;
    int64_t copy_to_device_bytes;
    /* What `tactic` is, for a built-in op whose kernel on the layer's
     * device has tactics (Conv on CUDA: "plugrt's direct kernel", "cuDNN
     * IMPLICIT_PRECOMP_GEMM"); "" otherwise. Static storage. */
    const char *tactic_name;
} prt_layer_info;

PRT_API PRT_NODISCARD prt_status prt_engine_get_layer(const prt_engine *engine,
                                                      int32_t index, prt_layer_info *out);

/* A kernel layer's code and launches, as the engine holds them; reading it
 * loads nothing. Strings are borrowed from the engine. */
#define PRT_KERNEL_INFO_MAX_CODE 16
typedef struct prt_kernel_layer_info {
    uint32_t struct_size;
    int32_t layer; /* its index in prt_engine_get_layer */
    uint64_t hash; /* content hash of code and launches, checked at load */
    int32_t nb_code;
    int32_t code_kind[PRT_KERNEL_INFO_MAX_CODE]; /* prt_kernel_code_kind */
    int32_t code_arch[PRT_KERNEL_INFO_MAX_CODE]; /* 90 for sm_90 */
    int64_t code_size[PRT_KERNEL_INFO_MAX_CODE];
    int32_t nb_launches;
} prt_kernel_layer_info;

/* Kernel layer `index` (0..prt_engine_get_nb_kernel_layers - 1). */
PRT_API PRT_NODISCARD prt_status prt_engine_get_kernel_layer(const prt_engine *engine,
                                                             int32_t index,
                                                             prt_kernel_layer_info *out);

/* Launch `launch` of kernel layer `index` as text, NUL-terminated in
 * buf[cap] (cut short when longer): its entry, grid, block and shared
 * memory as expressions over the layer's dims ("in0.d1" is dim 1 of input
 * 0), and its arguments in order. */
PRT_API PRT_NODISCARD prt_status prt_engine_describe_kernel_launch(
    const prt_engine *engine, int32_t index, int32_t launch, char *buf, size_t cap);

/* ------------------------------------------------------------------------ */
/* Execution context                                                         */
/* ------------------------------------------------------------------------ */

typedef struct prt_context prt_context;

/* A context runs one engine; it owns per-context plugin clones and scratch
 * memory. The engine must outlive it. */
PRT_API PRT_NODISCARD prt_status prt_context_create(const prt_engine *engine,
                                                    prt_context **out);

/* Options for prt_context_create_with_options. Zero-initialize, set
 * struct_size = sizeof(prt_context_options), then the fields you need;
 * fields added later read as zero for callers built against this header. */
typedef struct prt_context_options {
    uint32_t struct_size;
    uint32_t reserved;
    /* Most bytes of scratch memory (activation arena + workspace,
     * prt_engine_context_memory_size) the context may allocate; 0 for no
     * limit. An engine that needs more fails with PRT_ERR_OUT_OF_MEMORY
     * naming both sizes, before anything is allocated. Memory the layers'
     * plugins allocate through their resources (prt_plugin_resources.alloc)
     * counts too: a request that would take the context past the limit
     * fails. */
    int64_t memory_limit;
    /* 1: the context allocates no arena or workspace; the caller gives
     * prt_engine_context_memory_size bytes of the engine's device memory
     * with prt_context_set_memory before the first run (TensorRT's
     * createExecutionContextWithoutDeviceMemory). */
    int32_t external_memory;
    /* Threads the context's built-in ops and plugins (through
     * prt_host_services.parallel_for) may spread one run over: 0 (the
     * default) is prt_default_thread_count() on the CPU and 1 on CUDA; 1 is
     * the calling thread alone;
     * n > 1 starts n - 1 worker threads with the context, which wait between
     * runs and are joined when it is destroyed (PRT_ERR_INVALID_ARGUMENT
     * above 1024). Results do not depend on it: every op computes each
     * element the same way however its loop is split. A worker the system
     * will not start leaves fewer threads and a warning in the log
     * (prt_context_get_threads says how many). On CUDA it serves host-side
     * work only (a plugin's loops on the host). */
    int32_t threads;
    /* Which GPU: a context runs on its engine's device
     * (prt_engine_get_device_index), and every call that queues work or
     * allocates (create, enqueue, graph capture and launch) checks that it
     * is the calling thread's current device. 0 (the default): a mismatch
     * fails with PRT_ERR_STATE naming both devices. 1: the call makes the
     * context's device current and puts the caller's back before it
     * returns (one cudaSetDevice each way when they differ). Destroy
     * switches either way. Nothing on the CPU. */
    int32_t switch_device;
    /* 1: the context may run an engine's kernel layers (plugin.h, "Kernel
     * layers"): GPU code that came with the engine file and runs as it is,
     * so whoever wrote the file chooses what runs on the GPU. 0 (the
     * default): creating a context of an engine that has any fails with
     * PRT_ERR_UNSUPPORTED naming them, unless the engine was loaded with
     * PRT_EMBEDDED_KERNELS allowed. prt_engine_get_nb_kernel_layers
     * tells beforehand. */
    int32_t allow_embedded_kernels;
} prt_context_options;

/* prt_context_create with options (NULL: the defaults). */
PRT_API PRT_NODISCARD prt_status prt_context_create_with_options(
    const prt_engine *engine, const prt_context_options *options, prt_context **out);
PRT_API void prt_context_destroy(prt_context *ctx);

/* The thread count a context (and an autotuning build) gets by default: the
 * CPUs this process may run on (its affinity mask), lowered to its cgroup's
 * CPU quota where one is set; at least 1. */
PRT_API int32_t prt_default_thread_count(void);
/* The threads the context runs with (>= 1; see prt_context_options.threads);
 * 0 for NULL. */
PRT_API int32_t prt_context_get_threads(const prt_context *ctx);
/* Bytes of the engine's device memory the context holds now: its arena and
 * workspace (prt_engine_context_memory_size; 0 with options.external_memory)
 * plus what its plugins hold through prt_plugin_resources.alloc. 0 for
 * NULL. */
PRT_API int64_t prt_context_get_memory_size(const prt_context *ctx);

/* Gives a context made with options.external_memory its scratch memory:
 * at least prt_engine_context_memory_size bytes of the engine's device
 * memory, aligned to 256 bytes, borrowed until the context is destroyed or
 * given other memory; one context's memory must not be in use by another
 * context's run at the same time. */
PRT_API PRT_NODISCARD prt_status prt_context_set_memory(prt_context *ctx, void *memory,
                                                        int64_t size);

/* Selects the optimization profile (default 0). Resets input shapes. */
PRT_API PRT_NODISCARD prt_status prt_context_set_profile(prt_context *ctx,
                                                         int32_t profile);

/* Sets the concrete shape of a dynamic input. PRT_ERR_SHAPE, naming the
 * input, the shape and the profile bounds, if it falls outside them. */
PRT_API PRT_NODISCARD prt_status prt_context_set_input_shape(prt_context *ctx,
                                                             const char *name,
                                                             const prt_dims *dims);

/* Sets the memory of an input or output (borrowed until the next run
 * returns). A shape input's values are read from it (host memory) when
 * shapes are computed: at enqueue and by get_tensor_shape. For an output whose dims
 * depend on data, the buffer must hold the upper-bound size (prt_context_get_tensor_shape
 * before a run gives it), or use an output allocator instead. */
PRT_API PRT_NODISCARD prt_status prt_context_set_tensor_address(prt_context *ctx,
                                                                const char *name,
                                                                void *address);

/* TensorRT's IOutputAllocator. After a run, for an output with this
 * allocator and no address set: reallocate is asked for memory of the final
 * size (return `current` if it is big enough, NULL on failure), the result is
 * written there, and notify_shape reports the final dims. */
typedef struct prt_output_allocator {
    uint32_t struct_size;
    uint32_t abi_version;
    void *user;
    void *(*reallocate)(void *user, const char *tensor_name, void *current, uint64_t size,
                        uint64_t alignment);
    void (*notify_shape)(void *user, const char *tensor_name, const prt_dims *dims);
} prt_output_allocator;

/* Installs an output allocator for an output (borrowed; NULL removes it). */
PRT_API PRT_NODISCARD prt_status prt_context_set_output_allocator(
    prt_context *ctx, const char *name, const prt_output_allocator *alloc);

/* Shape of an I/O tensor. Before a run (after input shapes are set) data-
 * dependent dims hold their upper bound; after a run, the true values. On a
 * device whose sizes stay in its own memory (CUDA), asking for an output's
 * shape after a run waits for that run's stream to finish and reads the
 * sizes once; nothing else in a run waits for the device. A plugin that
 * broke a size tensor's bound is reported here (PRT_ERR_PLUGIN naming the
 * layer, the value and the bound). */
PRT_API PRT_NODISCARD prt_status prt_context_get_tensor_shape(prt_context *ctx,
                                                              const char *name,
                                                              prt_dims *out);

/* Runs the engine. On the CPU it computes before returning (stream NULL).
 * On CUDA it queues the work on `stream` (a cudaStream_t; NULL is the
 * default stream) and returns: it allocates nothing and does not wait for
 * the device, except to tell an output allocator the size of a
 * data-dependent output, and before a layer whose plugin needs true dims on
 * the host (both logged at build time). Tensor addresses are then device
 * pointers (shape inputs' values stay in host memory). Several contexts of
 * one engine may run at once on their own streams. Fails with a message
 * naming what is missing: an input shape, an address. A plugin's error
 * reported through prt_plugin_resources.report_error fails the next run
 * before it starts (or the run that was going when it came), naming the
 * layer and the plugin. */
PRT_API PRT_NODISCARD prt_status prt_context_enqueue(prt_context *ctx, void *stream);

/* TensorRT's IProfiler: called once per layer of every run, in layer order,
 * with the layer's index and name (borrowed for the call) and the time it
 * took in nanoseconds. On the CPU, the wall time of the layer's part of
 * prt_context_enqueue (its shapes, the plugin's enqueue, reading its sizes),
 * reported as each layer ends, on the thread that enqueues; a failed run
 * reports the layers before the one that failed. On CUDA, the device time
 * between events recorded on the stream around the layer, reported at the
 * end of prt_context_enqueue, which then waits for the stream (a profiled
 * run is not asynchronous); a failed run reports nothing there. Layers of
 * a captured graph's replays are not reported. A layer the runs skip
 * (prt_layer_info.skipped) is reported with 0 ns. */
typedef void (*prt_profiler_fn)(void *user, int32_t layer, const char *layer_name,
                                int64_t elapsed_ns);
/* Installs a profiler for later runs (NULL fn removes it); `user` is passed
 * back. Without one, a run reads no clock. On CUDA it makes the events it
 * times with here (PRT_ERR_OUT_OF_MEMORY or the device's error if it
 * cannot), so enqueue still allocates nothing. */
PRT_API PRT_NODISCARD prt_status prt_context_set_profiler(prt_context *ctx,
                                                          prt_profiler_fn fn, void *user);

/* Graphs (CUDA): capture records one enqueue on `stream` (which must not be
 * capturing already) without running it; launch replays it on a stream,
 * with the shapes, shape-input values, addresses and memory of the capture
 * (changing any of them makes launch fail until the next capture). A replay
 * is a run: data-dependent outputs get their true shapes, which
 * prt_context_get_tensor_shape reads after it. PRT_ERR_UNSUPPORTED on a
 * device without graphs, and for engines whose run must wait for the host
 * (see prt_context_enqueue) or outputs bound to an output allocator;
 * PRT_ERR_UNSUPPORTED too, before anything is captured and on every
 * device, when a layer's plugin says its enqueue cannot be captured
 * (prt_layer_info.capture_safe), naming the layer and the plugin. */
PRT_API PRT_NODISCARD prt_status prt_context_capture_graph(prt_context *ctx,
                                                           void *stream);
PRT_API PRT_NODISCARD prt_status prt_context_launch_graph(prt_context *ctx, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* PLUGRT_PLUGRT_H */
