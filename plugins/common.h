/*
 * Shared pieces of the standard plugin library (libplugrt_plugins).
 *
 * Everything here is internal to the library: it is built with hidden
 * visibility, so none of these symbols leaves the .so. Like any third-party
 * plugin library this code sees only include/plugrt/plugin.h; it never
 * includes anything from src/ and never links libplugrt.
 *
 * What lives here:
 *  - the host services the entry point received, and error/log helpers that
 *    go through them (plg_error, plg_log);
 *  - field lookup and validation for creators (plg_fields_*), whose messages
 *    name the plugin, the layer, the field, and the expected and actual type;
 *  - IEEE binary16 conversions;
 *  - a plugin-object scaffold (plg_object) shared by every plugin: identity
 *    comes from the creator, objects are plain old data so clone is a copy,
 *    and the core table and the generic runtime entries are shared;
 *  - the checks several plugins' entries make alike (input and output
 *    counts, float32/float16 inputs, an output in its input's dtype,
 *    supports_format_combination for that case), with one message each.
 */
#ifndef PLUGRT_PLUGINS_COMMON_H
#define PLUGRT_PLUGINS_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "plugrt/plugin.h"

#ifdef PRT_PLUGINS_CUDA
#include "cuda_launch.h"
#endif

#if defined(__GNUC__)
#define PLG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define PLG_PRINTF(f, a)
#endif

/* 1 if the table `tbl` (a pointer to a struct of type `type` that opens with
 * struct_size) is long enough to hold `member`. Tables the host hands us may
 * come from an older or newer header; we read an entry only when covered. */
#define PLG_HAS(tbl, type, member)                                                       \
    ((tbl) != NULL &&                                                                    \
     (size_t)(tbl)->struct_size >= offsetof(type, member) + sizeof(((type *)0)->member))

/* The devices this build of the library computes on: the CPU, and CUDA when
 * the kernels are built in (PRT_PLUGINS_CUDA, plugins/<name>_cuda.cu). devices()
 * answers this set less CUDA on a machine with no usable GPU. */
#ifdef PRT_PLUGINS_CUDA
#define PLG_DEVICES ((1u << PRT_DEVICE_CPU) | (1u << PRT_DEVICE_CUDA))
#else
#define PLG_DEVICES (1u << PRT_DEVICE_CPU)
#endif

/* ------------------------------------------------------------------------ */
/* Host services                                                             */
/* ------------------------------------------------------------------------ */

/* Keeps what the entry point received (NULL: errors and logs are dropped).
 * Copies the entries, so only the host's function pointers and its `host`
 * argument need to stay valid, which the ABI promises until unload. */
void plg_host_set(const prt_host_services *services);

/* Formats a message, hands it to the host's set_error with `status`, and
 * returns `status` so a caller can write `return plg_error(...)`. Messages
 * longer than 512 bytes are truncated. */
prt_status plg_error(prt_status status, const char *fmt, ...) PLG_PRINTF(2, 3);

/* The host's parallel_for (plugin.h, prt_host_services) when it offers
 * one, else the single call fn(arg, 0, n). */
void plg_parallel_for(int64_t n, int64_t grain, prt_range_fn fn, void *arg);

/* Formats a message for the host's logger. */
void plg_log(int32_t severity, const char *fmt, ...) PLG_PRINTF(2, 3);

/* "float32", "int64", ... for messages; "invalid" for anything else. */
const char *plg_dtype_name(int32_t dtype);
const char *plg_field_type_name(int32_t type);

/* Bytes of one element of a dtype this library handles; 0 otherwise. */
size_t plg_dtype_size(int32_t dtype);

/* ------------------------------------------------------------------------ */
/* Fields                                                                    */
/* ------------------------------------------------------------------------ */

/* A field collection being read by a creator, with the names used in
 * messages: "<plugin> (layer '<layer>'): field 'axis' ...". */
typedef struct plg_fields {
    const char *plugin;
    const char *layer;              /* may be "" */
    const prt_field_collection *fc; /* may be NULL: no fields */
} plg_fields;

/* Checks the collection itself (count >= 0, array present when non-empty).
 * Call it once before the lookups below. */
prt_status plg_fields_validate(const plg_fields *f);

/* Finds a field by name. *out is NULL if absent. A name given twice is
 * PRT_ERR_INVALID_ARGUMENT (ambiguous). Entries with a NULL name are
 * ignored, like any unknown field. */
prt_status plg_fields_find(const plg_fields *f, const char *name, const prt_field **out);

/* Checks a found field's type and length: length must lie in
 * [min_len, max_len] (max_len < 0: no upper limit), data must be present when
 * length > 0. Fails with PRT_ERR_INVALID_ARGUMENT naming the field and the
 * expected and actual type or length. */
prt_status plg_fields_check(const plg_fields *f, const prt_field *field, int32_t type,
                            int64_t min_len, int64_t max_len);

/* One int32: *out = the field's value, or `dflt` if the field is absent. */
prt_status plg_fields_get_i32(const plg_fields *f, const char *name, int32_t dflt,
                              int32_t *out);

/* An int32 array of at most `capacity` values copied to `dst`; *out_len is
 * its length (0 if absent). */
prt_status plg_fields_get_i32_array(const plg_fields *f, const char *name, int32_t *dst,
                                    int64_t capacity, int64_t *out_len);

/* A field of this type, if present; any length. Its value is not read. */
prt_status plg_fields_check_type(const plg_fields *f, const char *name, int32_t type);

/* ------------------------------------------------------------------------ */
/* Half precision                                                            */
/* ------------------------------------------------------------------------ */

/* IEEE binary16 <-> binary32. float -> half rounds to nearest even, keeps
 * NaN a NaN (quiet) and overflows to infinity. */
float plg_half_to_float(uint16_t h);
uint16_t plg_float_to_half(float f);

#define PLG_HALF_ONE ((uint16_t)0x3C00u)

/* ------------------------------------------------------------------------ */
/* Plugin objects                                                            */
/* ------------------------------------------------------------------------ */

#define PLG_LAYER_MAX 64

/* The head of every plugin object in this library. Objects are plain old
 * data, owned pointers are not allowed in them: clone is malloc + memcpy,
 * destroy is free. get_fields_to_serialize rebuilds its collection (pointing
 * into the object) on every call, so a copied object needs no fixing. */
typedef struct plg_object {
    prt_plugin base;                   /* first: the vtable */
    const prt_plugin_creator *creator; /* identity: name, version, namespace */
    size_t size;                       /* bytes of the whole object */
    char layer[PLG_LAYER_MAX];         /* layer name for messages, maybe truncated */
    prt_field_collection serialized;   /* filled by get_fields_to_serialize */
    int32_t target;                    /* set_target_device's device, -1 until told */
} plg_object;

/* Allocates a zeroed object of `size` bytes (>= sizeof(plg_object)) and
 * fills the head. NULL (and an error set) when out of memory. */
plg_object *plg_object_create(const prt_plugin_creator *creator,
                              const prt_plugin_vtable *vt, size_t size,
                              const char *layer);

/* The object of a plugin from this library. */
static inline plg_object *plg_obj(prt_plugin *p)
{
    return (plg_object *)p;
}
static inline const plg_object *plg_cobj(const prt_plugin *p)
{
    return (const plg_object *)p;
}

/* Reports an error about a plugin object, prefixed "<name> (layer '<l>'): ". */
prt_status plg_fail(const plg_object *o, prt_status status, const char *fmt, ...)
    PLG_PRINTF(3, 4);

/* The core table every plugin here uses: identity from the creator, devices
 * = PLG_DEVICES (CUDA only where a GPU is usable, checked once). */
extern const prt_plugin_core plg_core;

/* Generic runtime entries. */
prt_status plg_set_tactic(prt_plugin *self, int32_t tactic); /* only 0 */
prt_plugin *plg_attach_to_context(prt_plugin *self, prt_plugin_resources *resources);
prt_plugin *plg_clone(const prt_plugin *self);
void plg_destroy(prt_plugin *self);

/* Generic build entries: no workspace, no tactics beyond 0, no aliasing. */
prt_status plg_get_workspace_size(prt_plugin *self, const prt_dynamic_tensor_desc *in,
                                  int32_t nb_in, const prt_dynamic_tensor_desc *out,
                                  int32_t nb_out, int64_t *out_bytes);
prt_status plg_get_valid_tactics(prt_plugin *self, int32_t *tactics, int32_t capacity,
                                 int32_t *out_count);
int32_t plg_no_aliased_input(const prt_plugin *self, int32_t output_index);

/* Checks the arguments every enqueue shares: the device is one of
 * PLG_DEVICES, arrays are present. */
prt_status plg_check_enqueue(const plg_object *o, int32_t device,
                             const prt_tensor_desc *in_desc,
                             const prt_tensor_desc *out_desc, const void *const *inputs,
                             void *const *outputs);

/* ---- Tactics ---------------------------------------------------------------
 * A plugin with tactics keeps its list in a static array, its default
 * first (0 included where it is a real choice: plugin.h); these answer
 * get_valid_tactics and check set_tactic against it. */

/* Copies min(n, capacity) ids of `list` to `tactics`; *out_count = n. */
prt_status plg_list_tactics(const int32_t *list, int32_t n, int32_t *tactics,
                            int32_t capacity, int32_t *out_count);

/* PRT_OK for 0 (what engines of earlier plugrt versions recorded) and the
 * ids of `list`; otherwise PRT_ERR_INVALID_ARGUMENT, "unknown tactic 7
 * (valid: 0, 1, 2)". */
prt_status plg_check_tactic(const plg_object *o, int32_t tactic, const int32_t *list,
                            int32_t n);

/* build.set_target_device: keeps the device (a prt_device) in the object. */
prt_status plg_set_target_device(prt_plugin *self, int32_t device);

#ifdef PRT_PLUGINS_CUDA
/* The CUDA kernels' table (cuda_launch.h): linked in, or loaded from the
 * module PRT_PLUGINS_CUDA_MODULE on the first call (thread-safe); NULL when
 * that module cannot be loaded. Never unloaded. */
const plg_cuda_api *plg_cuda(void);

/* x = input 0 and y = output 0 of an enqueue, with input 0's dims. */
void plg_unary_io_fill(plg_unary_io *io, const prt_tensor_desc *in,
                       const void *const *inputs, void *const *outputs);

/* 1 when the CUDA kernels load and a GPU is there (asked once). Devices
 * follow it; workspace follows the device the engine is for
 * (plg_sizes_for_cuda): a CPU engine asks for no CUDA scratch wherever it
 * is built or loaded. */
int plg_cuda_usable(void);

/* Whether the object's workspace includes its CUDA kernels' scratch: for
 * an engine built for (or loaded as) CUDA, or, not told the device, where
 * CUDA is usable. */
int plg_sizes_for_cuda(const prt_plugin *self);

/* PRT_ERR_UNSUPPORTED: "the CUDA kernels (<module>) could not be loaded:
 * <dlerror>". */
prt_status plg_cuda_unavailable(const plg_object *o);

/* A failed CUDA launch (a cudaError_t from a cuda_launch.h launcher):
 * PRT_ERR_PLUGIN, "<what> failed on CUDA: cudaErrorX (description)". */
prt_status plg_cuda_fail(const plg_object *o, int err, const char *what);
#endif

/* ---- Checks the build and runtime entries share --------------------------
 * Each reports through plg_fail, so its message starts with the plugin's
 * name and layer. What a plugin accepts beyond these (ranks, axes, pads,
 * output dtypes of its own) stays in its file. */

/* The entry was called with `want_in` inputs and `want_out` outputs;
 * otherwise PRT_ERR_INVALID_ARGUMENT, "expects 1 input and 2 outputs, got 1
 * and 1". */
prt_status plg_check_io(const plg_object *o, int32_t nb_in, int32_t nb_out,
                        int32_t want_in, int32_t want_out);

/* 1 for the dtypes the kernels here compute in: float32 and float16. */
int plg_float_dtype_ok(int32_t dtype);

/* The input's dtype is float32 or float16; otherwise PRT_ERR_UNSUPPORTED,
 * "input dtype int32 is not supported (float32 or float16)". */
prt_status plg_check_float_input(const plg_object *o, int32_t dtype);

/* An output in its input's dtype; otherwise PRT_ERR_INVALID_ARGUMENT,
 * "output dtype float16 differs from input dtype float32". */
prt_status plg_check_same_dtype(const plg_object *o, int32_t out_dtype, int32_t in_dtype);

/* *out_vol = the elements of an input's concrete dims (out_vol may be NULL);
 * dims that plg_volume refuses are PRT_ERR_SHAPE, "input dims [2, -1] are
 * not valid". */
prt_status plg_check_input_volume(const plg_object *o, const prt_dims *d,
                                  int64_t *out_vol);

/* For supports_format_combination: the descriptor at `pos` when the call
 * has `want_in` inputs and `want_out` outputs, `pos` is one of them and its
 * format is linear (the only one this library reads); NULL otherwise, which
 * the caller answers with 0 (not supported). */
const prt_tensor_desc *plg_linear_desc(int32_t pos, const prt_dynamic_tensor_desc *in_out,
                                       int32_t nb_inputs, int32_t nb_outputs,
                                       int32_t want_in, int32_t want_out);

/* supports_format_combination of a plugin whose tensors are all linear,
 * input 0 float32 or float16 and every other tensor in input 0's dtype. */
int32_t plg_supports_float_same_dtype(int32_t pos, const prt_dynamic_tensor_desc *in_out,
                                      int32_t nb_inputs, int32_t nb_outputs,
                                      int32_t want_in, int32_t want_out);

/* Elements of concrete dims; -1 if a dim is negative or the product would
 * overflow int64. */
int64_t plg_volume(const prt_dims *d);

/* "[2, 3, 4]" into buf, for messages. Returns buf. */
const char *plg_dims_str(const prt_dims *d, char *buf, size_t cap);

/* Picks the vtable for a creator's phase argument; NULL (error set) for an
 * unknown phase. */
const prt_plugin_vtable *plg_phase_vtable(const char *plugin, int32_t phase,
                                          const prt_plugin_vtable *build_vt,
                                          const prt_plugin_vtable *runtime_vt);

/* Creator entries of the plugins, defined in their files. */
extern const prt_plugin_creator plg_nonzero_creator;
extern const prt_plugin_creator plg_hardmax_creator;
extern const prt_plugin_creator plg_circ_pad_creator;
extern const prt_plugin_creator plg_add_in_place_creator;
extern const prt_plugin_creator plg_quant_fc_creator;

#endif /* PLUGRT_PLUGINS_COMMON_H */
