/*
 * plugrt plugin ABI.
 *
 * The one header a plugin author includes. It depends on nothing of plugrt's
 * and compiles alone with -std=c11 -Wall -Wextra -pedantic. Plugins never link
 * against libplugrt: everything they need from the host arrives through the
 * function tables declared here.
 *
 * Conventions (they hold for every declaration below):
 *
 *  - Versioned tables. Every table of functions and every descriptor the host
 *    may extend opens with `struct_size` (sizeof the struct as the author
 *    compiled it) and `abi_version` (PRT_PLUGIN_ABI_VERSION as the author
 *    compiled it). Tables only ever grow at the end. The host reads an entry
 *    only when struct_size covers it, so a library built against an older
 *    header keeps loading. A changed meaning gets a new name, never a changed
 *    old entry.
 *  - Plain C types only: no variadic functions, no struct returned by value,
 *    no bit fields; every table can be filled from Python's ctypes.
 *  - Errors. Fallible entries return prt_status (0 = PRT_OK). A plugin that
 *    fails also describes the failure through prt_host_services.set_error so
 *    the user reads it from prt_last_error(). A plugin never aborts or exits
 *    the process.
 *  - Ownership is stated at every pointer. "Borrowed" means the callee must
 *    not free it and must not keep it past the stated lifetime.
 *  - Threading. The host never calls two entries of the same plugin object at
 *    once. Different plugin objects (e.g. per-context clones) may be called
 *    from different threads concurrently; creators must be thread-safe.
 *  - Four kinds of plugin object, each called on the thread that uses its
 *    owner (entries below say only what this does not):
 *      network plugin: made for PRT_PHASE_BUILD (by a creator) and added with
 *        prt_network_add_plugin; called by that call and by prt_engine_build
 *        (build entries, and the runtime entries prt_plugin_runtime names).
 *        The network destroys it.
 *      engine plugin: the builder's clone of a network plugin, or the
 *        creator's PRT_PHASE_RUNTIME object made by prt_engine_deserialize;
 *        gets set_tactic, then attach_to_context from each thread that
 *        creates a context. The engine destroys it.
 *      context plugin: what attach_to_context returned; gets set_tactic,
 *        then on_shape_change and enqueue from the thread that runs the
 *        context. The context destroys it.
 *      check plugin: made for PRT_PHASE_BUILD by prt_engine_deserialize,
 *        from a layer's stored fields, to confirm what the file says of the
 *        layer before anything runs: nb_outputs and get_output_dtypes (the
 *        engine's input dtypes), supports_format_combination at every
 *        position (the engine's dtypes and formats, profile 0's bounds, as
 *        the builder asked), then configure and get_workspace_size once per
 *        profile. Never get_output_shapes, never a run. An answer that
 *        disagrees with the file refuses the engine (PRT_ERR_MALFORMED). The
 *        loader destroys it before it returns.
 *  - NULL entries. "Required" entries must be set and covered by struct_size;
 *    the host refuses a plugin without them when it is added, loaded or
 *    attached. Others say what NULL means.
 */
#ifndef PLUGRT_PLUGIN_H
#define PLUGRT_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ABI version this header describes. Bumped when a table grows. */
#define PRT_PLUGIN_ABI_VERSION 1u

/* ------------------------------------------------------------------------ */
/* Status codes (shared with plugrt.h).                                      */
/* ------------------------------------------------------------------------ */

typedef int32_t prt_status;
enum {
    PRT_OK = 0,
    PRT_ERR_INVALID_ARGUMENT = 1, /* a bad value passed by the caller */
    PRT_ERR_OUT_OF_MEMORY = 2,
    PRT_ERR_NOT_FOUND = 3,      /* a name, key or file that does not exist */
    PRT_ERR_ALREADY_EXISTS = 4, /* duplicate key or name */
    PRT_ERR_UNSUPPORTED = 5,    /* valid, but not supported (dtype, device) */
    PRT_ERR_MALFORMED = 6,      /* untrusted bytes that do not parse */
    PRT_ERR_VERSION = 7,        /* a version this build cannot serve */
    PRT_ERR_SHAPE = 8,          /* a shape that breaks a rule or a bound */
    PRT_ERR_PLUGIN = 9,         /* a plugin reported or caused a failure */
    PRT_ERR_IO = 10,            /* file system or dynamic loader */
    PRT_ERR_STATE = 11,         /* a call made at the wrong time */
    PRT_ERR_INTERNAL = 12       /* a bug in plugrt; please report it */
};

/* ------------------------------------------------------------------------ */
/* Data types, formats, dims                                                 */
/* ------------------------------------------------------------------------ */

/* Element types. Stored as int32_t in every struct. Values are stable. */
typedef enum prt_dtype {
    PRT_FLOAT32 = 0,
    PRT_FLOAT16 = 1,
    PRT_BFLOAT16 = 2,
    PRT_INT8 = 3,
    PRT_UINT8 = 4,
    PRT_INT32 = 5,
    PRT_INT64 = 6,
    PRT_BOOL = 7, /* one byte, 0 or 1 */
    /* The 8-bit floats of ONNX opset 19 (the OCP FP8 formats), one byte:
     * E4M3FN (bias 7, no infinities, NaN S.1111.111, largest 448) and
     * E5M2 (bias 15, IEEE-like: infinities and NaNs, largest 57344). */
    PRT_FLOAT8E4M3FN = 8,
    PRT_FLOAT8E5M2 = 9,
    /* The wide and the other integer types ONNX has: IEEE double, and
     * two's complement int16, unsigned uint16/uint32/uint64. Built-in ops
     * take them on the CPU where their ONNX definition allows; a device
     * kernel takes them only where its table lists them. */
    PRT_FLOAT64 = 10,
    PRT_INT16 = 11,
    PRT_UINT16 = 12,
    PRT_UINT32 = 13,
    PRT_UINT64 = 14
} prt_dtype;
#define PRT_DTYPE_COUNT 15

/* Memory layouts. Values are stable; new ones are appended.
 *  - LINEAR: dense, row-major, no padding.
 *  - CHW8: dim 1 (channels) in blocks of eight, for tensors of rank 3 or
 *    more: element (n, c, r) of dims [N, C, ...], r the row-major index
 *    over dims 2.., lies at ((n * C8 + c / 8) * R + r) * 8 + c % 8, where
 *    C8 = ceil(C / 8) and R is the product of dims 2... The tensor holds
 *    N * C8 * R * 8 elements: the lanes of the last block past C are
 *    padding. A producer writes them as zeros; a consumer must not let
 *    them reach its results. The builder gives it only to tensors inside a
 *    CPU engine (never to an engine's inputs or outputs), and only where
 *    the producer and every consumer accept it (supports_format_combination);
 *    prt_format_volume gives the element count. */
typedef enum prt_format { PRT_FORMAT_LINEAR = 0, PRT_FORMAT_CHW8 = 1 } prt_format;
#define PRT_FORMAT_COUNT 2

/* Devices. A plugin advertises a mask of (1u << prt_device). */
typedef enum prt_device { PRT_DEVICE_CPU = 0, PRT_DEVICE_CUDA = 1 } prt_device;
#define PRT_DEVICE_COUNT 2

#define PRT_MAX_DIMS 8

/* A concrete shape. nb_dims in 0..PRT_MAX_DIMS; a rank-0 tensor is a scalar.
 * In network and engine queries a dim of -1 means "not known until run". */
typedef struct prt_dims {
    int32_t nb_dims;
    int64_t d[PRT_MAX_DIMS];
} prt_dims;

/* Elements a tensor of these dims occupies in `format`: the product of the
 * dims, with dim 1 rounded up to a multiple of 8 for CHW8 (rank 3 or more).
 * -1 for a negative dim, an unknown format or a product past INT64_MAX. */
static inline int64_t prt_format_volume(int32_t format, const prt_dims *dims)
{
    int64_t v = 1;
    if (format < 0 || format > PRT_FORMAT_CHW8 || dims->nb_dims < 0 ||
        dims->nb_dims > PRT_MAX_DIMS || (format == PRT_FORMAT_CHW8 && dims->nb_dims < 3))
        return -1;
    for (int32_t i = 0; i < dims->nb_dims; i++) {
        int64_t d = dims->d[i];
        if (d < 0 || d > INT64_MAX - 7)
            return -1;
        if (format == PRT_FORMAT_CHW8 && i == 1)
            d = (d + 7) / 8 * 8;
        if (d && v > INT64_MAX / d)
            return -1;
        v *= d;
    }
    return v;
}

/* How an INT8 or UINT8 tensor's integers stand for real numbers (ONNX's
 * QuantizeLinear/DequantizeLinear): real = (q - zero_point) * scale. */
typedef enum prt_quant_kind {
    PRT_QUANT_NONE = 0,       /* plain integers */
    PRT_QUANT_PER_TENSOR = 1, /* one scale and zero point for every element */
    PRT_QUANT_PER_CHANNEL = 2 /* one per index along dim `axis` */
} prt_quant_kind;

/* A tensor's quantization, as prt_tensor_desc_quant gives it. Filled by
 * the host; the plugin reads it. Later versions may append members: read
 * one only when struct_size covers it. */
typedef struct prt_quant_desc {
    uint32_t struct_size;
    uint32_t abi_version;
    int32_t kind; /* prt_quant_kind, never PRT_QUANT_NONE here */
    /* PER_CHANNEL: the dim the scales run along, 0..nb_dims-1 (never
     * negative: the host resolves ONNX's negative axes). -1 for
     * PER_TENSOR. */
    int32_t axis;
    /* Entries of scales and zero_points: 1 for PER_TENSOR, the size of dim
     * `axis` for PER_CHANNEL. */
    int64_t count;
    /* Host memory, borrowed for the call (on CUDA too: a kernel that needs
     * them on the device passes them as launch arguments or copies them).
     * Scales are finite and > 0; zero points lie in the dtype's range (a
     * zero point of 0 everywhere is the symmetric case). */
    const float *scales;
    const int32_t *zero_points;
    /* PER_TENSOR: scales[0] and zero_points[0] again, for convenience;
     * PER_CHANNEL: 0. */
    float scale;
    int32_t zero_point;
} prt_quant_desc;

/* A tensor as seen at run time (on_shape_change, enqueue). */
typedef struct prt_tensor_desc {
    int32_t dtype;  /* prt_dtype */
    int32_t format; /* prt_format */
    /* Concrete dims. A dim that depends on data (a size-tensor dim) holds its
     * upper bound at enqueue; the plugin writes the tensor densely with the
     * true dims (so its first true-size elements are the result). */
    prt_dims dims;
    /* Slot for device-resident values of data-dependent dims: on CUDA, a
     * device pointer to nb_dims int64 values that are the true dims, so a
     * consumer needs no host round trip. NULL on the CPU and when no dim
     * depends on data. Borrowed for the duration of the call. */
    const int64_t *dims_device;
    /* reserved[0]: the tensor's quantization (a const prt_quant_desc *),
     * read it with prt_tensor_desc_quant. Set for an INT8 or UINT8 tensor
     * that has one (prt_network_set_tensor_quant, or a DequantizeLinear the
     * builder folded into this plugin), NULL otherwise; borrowed for the
     * call. reserved[1]: non-NULL when the data lies in host memory although
     * the layer runs on a device (on CUDA: a shape input's values, which
     * stay where the caller put them), read it with
     * prt_tensor_desc_on_host; NULL for device memory, and on the CPU,
     * where all memory is the host's. Set once when the host prepares the
     * layer's descriptors, also while a graph is captured. The slots were
     * always zero, so a plugin built before them never reads them, a host
     * built before them leaves them NULL, and the struct's layout and
     * source form did not change. */
    void *reserved[2]; /* kept so the array stride never changes */
} prt_tensor_desc;

/* 1 when the data behind the tensor `d` describes is in host memory although
 * the layer runs on a device (reserved[1]): its enqueue reads the values on
 * the host (a kernel cannot read pageable memory) and, if it is captured
 * into a graph, bakes them in, as graphs keep shape-input values anyway. */
static inline int prt_tensor_desc_on_host(const prt_tensor_desc *d)
{
    return d->reserved[1] != NULL;
}

/* The quantization of the tensor `d` describes (reserved[0]), or NULL. In
 * supports_format_combination it describes the candidate at each position,
 * so a plugin can take INT8 on an input only with a per-tensor scale
 * (answer 0 when this is NULL or of another kind). Read a member past
 * `zero_points` only when struct_size covers it. */
static inline const prt_quant_desc *prt_tensor_desc_quant(const prt_tensor_desc *d)
{
    return (const prt_quant_desc *)d->reserved[0];
}

/* A tensor as seen at build time: the dims (-1 where not known) plus the
 * bounds of the optimization profile being built. */
typedef struct prt_dynamic_tensor_desc {
    prt_tensor_desc desc;
    prt_dims min;
    prt_dims opt;
    prt_dims max;
} prt_dynamic_tensor_desc;

/* ------------------------------------------------------------------------ */
/* Fields: a plugin's parameters, in creators and in engine files            */
/* ------------------------------------------------------------------------ */

typedef enum prt_field_type {
    PRT_FIELD_INT8 = 0,
    PRT_FIELD_INT16 = 1,
    PRT_FIELD_INT32 = 2,
    PRT_FIELD_INT64 = 3,
    PRT_FIELD_FLOAT16 = 4, /* IEEE binary16 bits in uint16_t */
    PRT_FIELD_FLOAT32 = 5,
    PRT_FIELD_FLOAT64 = 6,
    PRT_FIELD_BFLOAT16 = 7, /* bfloat16 bits in uint16_t */
    PRT_FIELD_CHAR = 8,     /* bytes of a string; length counts them */
    PRT_FIELD_DIMS = 9,     /* an array of prt_dims */
    PRT_FIELD_BYTES = 10    /* opaque bytes */
} prt_field_type;
#define PRT_FIELD_TYPE_COUNT 11

/* One field: a 1-D array of `length` elements of `type`. For CHAR, length
 * counts bytes and need not include a terminating NUL. Name and data are
 * borrowed; whoever made the field states how long they live. */
typedef struct prt_field {
    const char *name;
    const void *data;
    int32_t type;   /* prt_field_type */
    int64_t length; /* number of elements, >= 0 */
} prt_field;

typedef struct prt_field_collection {
    int32_t nb_fields;
    const prt_field *fields; /* nb_fields entries, borrowed */
} prt_field_collection;

/* A creator's description of one field it accepts. */
typedef struct prt_field_schema {
    const char *name;
    int32_t type;    /* prt_field_type */
    int64_t length;  /* exact length, or -1 for any length */
    const char *doc; /* one line for people; may be NULL */
} prt_field_schema;

/* ------------------------------------------------------------------------ */
/* Host services                                                             */
/* ------------------------------------------------------------------------ */

typedef enum prt_severity {
    PRT_SEV_ERROR = 0,
    PRT_SEV_WARNING = 1,
    PRT_SEV_INFO = 2,
    PRT_SEV_VERBOSE = 3
} prt_severity;

/* One range of a parallel loop: fn(arg, begin, end) handles indices
 * begin..end-1. */
typedef void (*prt_range_fn)(void *arg, int64_t begin, int64_t end);

/* What the host offers a plugin library. Passed to the library's entry point;
 * valid until the library is unloaded. log and set_error may be called from
 * any thread. Entries after set_error were appended: a host built before them
 * passes a shorter struct_size, so read one only when struct_size covers it
 * (offsetof(prt_host_services, entry) + sizeof(void *) <= struct_size) and
 * do the work yourself otherwise. */
typedef struct prt_host_services {
    uint32_t struct_size;
    uint32_t abi_version;
    void *host; /* pass back as the first argument below */
    /* Send one message to the user's logger (prints nothing unless asked). */
    void (*log)(void *host, int32_t severity, const char *message);
    /* Record the calling thread's error: the user reads `message` from
     * prt_last_error(). Call it before returning the same non-zero status,
     * on the thread the host called (not from a worker thread of yours). */
    void (*set_error)(void *host, prt_status status, const char *message);

    /* ---- appended in ABI 1; read only when struct_size covers them ------ */

    /* The host's threads for one loop, so a plugin needs no pool of its
     * own: calls fn(arg, begin, end) over disjoint ranges that cover
     * [0, n) exactly once, each at least `grain` indices long but the last,
     * and returns when every range is done. Ranges run concurrently on the
     * threads of the context that is running (prt_context_options.threads)
     * and in any order; with one thread, outside enqueue, or when n <= grain
     * it is the single call fn(arg, 0, n) on the calling thread. Call it
     * from enqueue (on the thread the host called; elsewhere it runs
     * serially). fn must not call parallel_for again (a nested call runs
     * serially), must not call set_error (it may run on a thread that is
     * not the host's) and cannot fail: check everything first. The split
     * depends on the thread count and on timing, so write fn so that the
     * result does not: each output element computed whole within one range
     * (a sum across ranges goes into per-block partials, combined in block
     * order after the call). Never fails, allocates nothing. */
    void (*parallel_for)(void *host, int64_t n, int64_t grain, prt_range_fn fn,
                         void *arg);
    /* The threads parallel_for would use now on the calling thread (>= 1;
     * 1 inside fn): for sizing per-thread scratch, or choosing a grain. */
    int32_t (*nb_threads)(void *host);
    /* Inside fn: which of those threads runs this range, 0..nb_threads-1,
     * 0 being the thread that called parallel_for; two ranges that run at
     * the same time never share one, so it indexes per-thread scratch. 0
     * outside fn. */
    int32_t (*thread_index)(void *host);
} prt_host_services;

/* ------------------------------------------------------------------------ */
/* Symbolic dimension expressions                                            */
/* ------------------------------------------------------------------------ */

/* An expression over input dims. Opaque and owned by the host: expressions
 * live until the build that made them ends. Equal expressions are one object
 * (hash-consing), so pointer equality is expression equality. */
typedef struct prt_expr prt_expr;

typedef enum prt_dim_op {
    PRT_DIM_SUM = 0,       /* a + b */
    PRT_DIM_PROD = 1,      /* a * b */
    PRT_DIM_MAX = 2,       /* max(a, b) */
    PRT_DIM_MIN = 3,       /* min(a, b) */
    PRT_DIM_SUB = 4,       /* a - b */
    PRT_DIM_EQUAL = 5,     /* a == b ? 1 : 0 */
    PRT_DIM_LESS = 6,      /* a < b ? 1 : 0 */
    PRT_DIM_FLOOR_DIV = 7, /* floor(a / b), b != 0 */
    PRT_DIM_CEIL_DIV = 8,  /* ceil(a / b), b != 0 */
    /* floor(a * f) exactly, f the float32 whose order key is b: a value of
     * a float32 shape input (a float32 shape input's values reach
     * get_output_shapes as such keys, prt_float_shape_value), or a constant
     * key; NaN, infinity or an overflow fail the build or the run. Added
     * after ABI 1's first release: a host that predates it refuses the op. */
    PRT_DIM_FLOOR_MUL_F32 = 9
} prt_dim_op;

/* The dims of one tensor as expressions. */
typedef struct prt_dim_exprs {
    int32_t nb_dims;
    const prt_expr *d[PRT_MAX_DIMS];
} prt_dim_exprs;

/* The expression builder handed to get_output_shapes and get_output_values,
 * borrowed for that call. Every entry returns NULL when it fails (bad
 * operand, division by a constant zero, out of memory); NULL operands give
 * NULL, so a plugin may check once at the end. */
typedef struct prt_expr_builder prt_expr_builder;
struct prt_expr_builder {
    uint32_t struct_size;
    uint32_t abi_version;
    const prt_expr *(*constant)(prt_expr_builder *self, int64_t value);
    const prt_expr *(*operation)(prt_expr_builder *self, int32_t op, const prt_expr *a,
                                 const prt_expr *b);
    /* Declares output `output_index` of this plugin a size tensor: a 0-D
     * int32 or int64 output whose value the plugin writes at run time. Returns
     * the symbolic value of that size, to be used as a dim of other outputs.
     * `opt` is the value to tune for and may not depend on a size tensor;
     * `upper_bound` bounds the value and sizes memory. */
    const prt_expr *(*declare_size_tensor)(prt_expr_builder *self, int32_t output_index,
                                           const prt_expr *opt,
                                           const prt_expr *upper_bound);
    /* 1 and *value set if e is a constant, else 0. */
    int32_t (*is_constant)(prt_expr_builder *self, const prt_expr *e, int64_t *value);
    void *host; /* private to the host */
};

/* ------------------------------------------------------------------------ */
/* Kernel layers: GPU code the engine holds and launches itself              */
/* ------------------------------------------------------------------------ */

/* What a plugin hands the builder through get_kernel (below): compiled
 * code (or CUDA C++ source the builder compiles with NVRTC), and how to
 * launch it, every size an expression over the layer's own dims. The
 * engine stores it; at run time the code is loaded once per context and
 * launched with the current shapes, with no plugin library and no Python. */
typedef enum prt_kernel_code_kind {
    PRT_KERNEL_PTX = 0,        /* PTX text; `arch` is its .target (0: read it) */
    PRT_KERNEL_CUBIN = 1,      /* an ELF cubin for compute capability `arch` */
    PRT_KERNEL_CUDA_SOURCE = 2 /* CUDA C++ for NVRTC; `arch` ignored */
} prt_kernel_code_kind;
#define PRT_KERNEL_CODE_KIND_COUNT 3

/* One piece of code. `arch` is major * 10 + minor (90 for sm_90). An engine
 * may hold a cubin per capability and PTX; loading takes the cubin for the
 * device, else PTX the driver compiles. */
typedef struct prt_kernel_code {
    int32_t kind; /* prt_kernel_code_kind */
    int32_t arch;
    const void *data;
    int64_t size; /* bytes */
} prt_kernel_code;

/* What the runtime passes for one kernel parameter, in order. */
typedef enum prt_kernel_arg_kind {
    PRT_KARG_INPUT = 0,     /* device pointer to input `index` */
    PRT_KARG_OUTPUT = 1,    /* device pointer to output `index` */
    PRT_KARG_WORKSPACE = 2, /* the layer's workspace, `value` bytes in (NULL: 0) */
    PRT_KARG_NULL = 3,      /* a null pointer (a scratch parameter left unused) */
    PRT_KARG_INT32 = 4,     /* `value`; a value outside int32 fails the launch */
    PRT_KARG_INT64 = 5,     /* `value` */
    PRT_KARG_FLOAT32 = 6,   /* `value` as a float, or `fvalue` when value is NULL */
    PRT_KARG_FLOAT64 = 7,   /* likewise, as a double */
    PRT_KARG_DIMS = 8       /* input `index`'s dims_device: int64[nb_dims] or NULL */
} prt_kernel_arg_kind;
#define PRT_KARG_COUNT 9

typedef struct prt_kernel_arg {
    int32_t kind; /* prt_kernel_arg_kind */
    int32_t index;
    const prt_expr *value; /* from the builder get_kernel was given */
    double fvalue;
} prt_kernel_arg;

/* One launch: the entry's name in the code, grid and block (each dim an
 * expression, >= 1 at run time), dynamic shared memory bytes (NULL: 0) and
 * the parameters. The builder checks the list against the entry's real
 * parameters (from the PTX .entry, or the cubin's parameter table): count,
 * sizes and alignment. */
typedef struct prt_kernel_launch {
    const char *entry;
    const prt_expr *grid[3];
    const prt_expr *block[3];
    const prt_expr *shared_bytes;
    int32_t nb_args;
    const prt_kernel_arg *args;
} prt_kernel_launch;

/* A kernel layer: code and the launches of one run, in order, on the
 * layer's stream. What the pointers point to is the plugin's, and must
 * stay valid until the next call on the plugin or its destruction: the
 * builder copies it right after get_kernel returns. */
typedef struct prt_kernel_desc {
    uint32_t struct_size; /* sizeof(prt_kernel_desc), set by the builder */
    int32_t nb_code;
    const prt_kernel_code *code;
    int32_t nb_launches; /* 1..16 */
    const prt_kernel_launch *launches;
    /* Options for NVRTC when a code is PRT_KERNEL_CUDA_SOURCE, separated by
     * spaces (the builder adds the target's --gpu-architecture); NULL none. */
    const char *compile_options;
} prt_kernel_desc;

/* ------------------------------------------------------------------------ */
/* Plugins                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct prt_plugin prt_plugin;

/* Identity. Strings are borrowed for the plugin's lifetime. All four entries
 * are required. Called on network plugins: name by prt_network_add_plugin
 * (the default layer name) and the builder; devices at the start of each
 * build and again once the layer is configured with its first type/format
 * combination; the key by the builder, which records it in the engine. */
typedef struct prt_plugin_core {
    uint32_t struct_size;
    uint32_t abi_version;
    const char *(*name)(const prt_plugin *self);
    const char *(*version)(const prt_plugin *self);
    const char *(*plugin_namespace)(const prt_plugin *self);
    /* Mask of (1u << prt_device) this plugin can run on. Once configured it
     * may leave out a device whose kernel does not take the configured
     * dtypes (the CPU's takes more): the build for that device then fails
     * naming the layer, the plugin and the dtypes. */
    uint32_t (*devices)(const prt_plugin *self);
} prt_plugin_core;

/* Build-time capability: called on network plugins, by the thread that
 * builds (nb_outputs: the thread that adds the layer), and on check plugins
 * (above) by the thread that loads an engine. Per build, layer by
 * layer: get_output_dtypes, get_output_shapes, get_output_values; then per
 * layer: supports_format_combination, get_valid_tactics, configure and
 * get_workspace_size (with timing runs when autotuning has a choice); then
 * get_aliased_input. May be NULL in a runtime-phase plugin. */
typedef struct prt_plugin_build {
    uint32_t struct_size;
    uint32_t abi_version;

    /* Required. Called once, by prt_network_add_plugin; the count (1..64)
     * must not change afterwards. */
    int32_t (*nb_outputs)(const prt_plugin *self);

    /* Output dtypes from input dtypes. out_types has nb_outputs entries.
     * Required. Called once per build, before get_output_shapes. */
    prt_status (*get_output_dtypes)(prt_plugin *self, int32_t *out_types,
                                    int32_t nb_outputs, const int32_t *in_types,
                                    int32_t nb_inputs);

    /* Output shapes as expressions over the inputs' dims. `shape_inputs`
     * gives, for each shape input, its values as expressions (d[i] is value
     * i; a float32 shape input's values are order keys, PRT_DIM_FLOOR_MUL_F32). Fill
     * outputs[i].nb_dims and .d. Size tensors are declared here. Required. Called once
     * per build, not per profile: the expressions serve every profile. */
    prt_status (*get_output_shapes)(prt_plugin *self, const prt_dim_exprs *inputs,
                                    int32_t nb_inputs, const prt_dim_exprs *shape_inputs,
                                    int32_t nb_shape_inputs, prt_dim_exprs *outputs,
                                    int32_t nb_outputs, prt_expr_builder *exprs);

    /* 1 if the dtype/format at in_out[pos] is acceptable given the entries
     * at positions < pos (inputs first, then outputs). Entries above pos are
     * undefined and must not be read. The builder tries candidates in the
     * order of prt_dtype values (and prt_format values within a dtype) and
     * takes the first complete combination the plugin accepts; with
     * autotuning on it times every accepted combination instead. Required.
     * Called many times per build, depth-first over positions; in_out holds
     * profile 0's bounds. A check plugin is asked once per position, with
     * the engine's choice.
     * Quantization (prt_tensor_desc_quant): to fold a DequantizeLinear
     * into this plugin the builder offers an input its int8/uint8 tensor
     * with the scale, and to fold a QuantizeLinear it offers an output
     * int8/uint8 with the scale where get_output_dtypes gave a float dtype;
     * each is asked with and without the scale, and folds only when the
     * plugin takes it with the scale and refuses it without. A plugin
     * that says so for an output must then write the integers on that
     * scale (loading asks the same two questions). */
    int32_t (*supports_format_combination)(prt_plugin *self, int32_t pos,
                                           const prt_dynamic_tensor_desc *in_out,
                                           int32_t nb_inputs, int32_t nb_outputs);

    /* The chosen types, formats and profile bounds. May be NULL (nothing to
     * configure). Called once per profile for the chosen combination and,
     * when candidates are timed, once per candidate combination and again
     * before each candidate runs. The builder clones the engine plugin after the
     * last call; a loaded engine's plugin is never configured, so keep what
     * enqueue needs in the fields. */
    prt_status (*configure)(prt_plugin *self, const prt_dynamic_tensor_desc *in,
                            int32_t nb_in, const prt_dynamic_tensor_desc *out,
                            int32_t nb_out);

    /* Scratch bytes needed for any shape within the bounds. May be NULL (0).
     * Called after each configure; the engine keeps the largest answer.
     * Loading asks a check plugin again, at every profile, and refuses an
     * engine whose layer claims less than the largest answer now. */
    prt_status (*get_workspace_size)(prt_plugin *self, const prt_dynamic_tensor_desc *in,
                                     int32_t nb_in, const prt_dynamic_tensor_desc *out,
                                     int32_t nb_out, int64_t *out_bytes);

    /* Tactics the builder may choose. Writes up to `capacity` ids to
     * `tactics` (which may be NULL when capacity is 0) and the total to
     * *out_count. The listed tactics are the candidates, in this order (a
     * repeated id counts once): autotuning times them, the first one as the
     * reference the others must agree with, and a build without autotuning
     * takes the first. The builder never chooses a tactic that is not
     * listed; with none listed, the only tactic is 0. List 0 (first, to keep
     * it the default) when it is a real choice, such as one that picks by
     * shape; 0 should still run right when it is not listed, since it is a
     * plugin's tactic before set_tactic and engines built by earlier
     * versions of plugrt may have recorded it. May be NULL (only tactic 0);
     * ignored when set_tactic is NULL. Called twice per build, with and
     * without autotuning: to count, then to fill. */
    prt_status (*get_valid_tactics)(prt_plugin *self, int32_t *tactics, int32_t capacity,
                                    int32_t *out_count);

    /* The input whose memory output `output_index` shares (in place), or -1.
     * Dtype and shape must match; the builder checks. May be NULL (none).
     * Called once per output per build, after every layer's formats are
     * chosen. At run time that input and output are then one address
     * (copied first when memory cannot be shared); the builder's timing
     * runs pass separate buffers. */
    int32_t (*get_aliased_input)(const prt_plugin *self, int32_t output_index);

    /* Shape tensors (TensorRT's term): the VALUES of small integer outputs
     * as expressions, so later layers can take them as shape inputs (a
     * Reshape's target shape computed by Shape -> Gather -> Concat). Called
     * after get_output_shapes. For input i, in_values[i].nb_dims is the
     * number of elements whose values are known (a 0-D tensor has 1) and d[]
     * their expressions in row-major order, or -1 when they are not known.
     * For each output whose values follow from its inputs' dims and values,
     * set out_values[o].nb_dims to its element count (<= PRT_MAX_DIMS; the
     * output must be int32, int64 or bool, as 0/1) and d[]; leave -1 for the
     * others. At
     * run time the plugin must still compute those same values. May be
     * NULL (no values known). Called once per build, right after
     * get_output_shapes. */
    prt_status (*get_output_values)(prt_plugin *self, const prt_dim_exprs *in_dims,
                                    const prt_dim_exprs *in_values, int32_t nb_inputs,
                                    prt_dim_exprs *out_values, int32_t nb_outputs,
                                    prt_expr_builder *exprs);

    /* ---- appended in ABI 1 after the entries above; read only when
     * struct_size covers it ---------------------------------------------- */

    /* 1 if the plugin's enqueue on `device` needs the true dims of
     * data-dependent tensors in `dims` (it cannot size its work from
     * dims_device on the device). On a device that keeps sizes in its own
     * memory (CUDA) the runtime then waits for the device before this
     * layer whenever one of its tensors depends on an earlier layer's size,
     * and the build log names the layer. May be NULL (0: dims_device is
     * enough). Called by the builder, once per layer per build. */
    int32_t (*requires_host_dims)(const prt_plugin *self, int32_t device);

    /* The device (prt_device) the engine is for: told before each configure
     * of a build (the builder's target) and of a loaded engine's check
     * plugin (the engine's device), so a plugin whose kernels differ by
     * device sizes its workspace for that device alone: a CPU plan made on
     * a machine without a GPU then claims what the same plugin asks on one
     * with a GPU, and loads there. May be NULL (the plugin sizes its
     * workspace for every device it runs on). */
    prt_status (*set_target_device)(prt_plugin *self, int32_t device);

    /* ---- appended after set_target_device; read only when struct_size
     * covers it -------------------------------------------------------- */

    /* 1 if the plugin's enqueue on `device` may be recorded into a graph
     * (a CUDA graph: prt_context_capture_graph, `plugrt run --cuda-graph`)
     * and replayed, as XLA's kCmdBufferCompatible: it only queues work on
     * `stream` (no synchronization, no host callback that must run at each
     * replay, no allocation, no host-side decision that depends on values
     * of this run), and the same launches with the same pointers are right
     * for every replay at the captured shapes. 0 if not: the engine records
     * it for the layer, prt_layer_info.capture_safe and `plugrt inspect`
     * show it, and capturing a graph of a context of that engine fails
     * before anything is recorded, naming the layer and the plugin, instead
     * of failing inside the driver or replaying something wrong. Answer for
     * every tactic the plugin lists. May be NULL (1: capturable). Called by
     * the builder once per layer per build, after the layer's formats and
     * tactic are chosen, with the engine's device. */
    int32_t (*capture_safe)(const prt_plugin *self, int32_t device);

    /* ---- appended after capture_safe; read only when struct_size covers
     * it ------------------------------------------------------------------- */

    /* A kernel the engine launches in place of enqueue for `tactic` on
     * CUDA (a kernel layer, above). `in_dims` and `out_dims` are this
     * layer's own dims as expressions, to build the launch sizes from with
     * `exprs`; `in` and `out` are the chosen dtypes and formats at profile
     * 0. Fill *kernel and return PRT_OK, or return PRT_ERR_UNSUPPORTED when
     * this tactic has no kernel (enqueue then runs). The engine keeps the
     * kernel and needs neither the plugin's library nor its creator to
     * run it. May be NULL. Called by the builder for a CUDA target: for
     * each tactic it times, and for the one chosen, after configure. While
     * autotuning, a tactic with a kernel is timed and checked against the
     * reference as that kernel, never through enqueue, so a plugin whose
     * tactics are all kernels needs no working enqueue on CUDA and the
     * fastest kernel wins. CUDA source is compiled once per source,
     * options, capability and NVRTC version, and kept in the timing cache
     * when the build names one (prt_builder_config_set_timing_cache_file). */
    prt_status (*get_kernel)(prt_plugin *self, int32_t tactic,
                             const prt_dynamic_tensor_desc *in, int32_t nb_in,
                             const prt_dynamic_tensor_desc *out, int32_t nb_out,
                             const prt_dim_exprs *in_dims, const prt_dim_exprs *out_dims,
                             prt_expr_builder *exprs, prt_kernel_desc *kernel);
} prt_plugin_build;

/* A shared object's maker and destroyer (prt_plugin_resources.acquire).
 * create makes the object for a context on `device` (prt_device) and
 * returns PRT_OK with *out set, or a status after set_error; destroy frees
 * what create made. `user` is what acquire was given. */
typedef prt_status (*prt_resource_create_fn)(void *user, int32_t device, void **out);
typedef void (*prt_resource_destroy_fn)(void *user, void *object);

/* What the context a clone is made for gives it (attach_to_context), as
 * TensorRT's IPluginResourceContext: the device the context runs on, so a
 * plugin can make device resources (a cuBLAS handle, say) once, at context
 * creation, rather than in enqueue; and, appended later, the context's
 * memory, error reporting and objects shared by its layers.
 *
 * The struct is borrowed for the attach_to_context call; `context` and the
 * entries stay valid until the context is destroyed, so a clone that needs
 * them later copies them (the fields its struct_size covers) into itself.
 * Keep them in the clone, never in the engine plugin (self of
 * attach_to_context), which outlives the context. A host built before an
 * entry passes a shorter struct_size: read an entry only when struct_size
 * covers it (offsetof(prt_plugin_resources, entry) + sizeof(void *) <=
 * struct_size) and do the work yourself otherwise (cudaMalloc, your own
 * handle) -- as a plugin must anyway where it is not attached: the
 * builder's autotuning runs enqueue on the network plugin, and `plugrt
 * check` attaches with the device only. */
typedef struct prt_plugin_resources {
    uint32_t struct_size;
    uint32_t abi_version;
    int32_t device; /* prt_device of the context's engine */

    /* ---- appended after device; read only when struct_size covers them */

    void *context; /* pass back as the first argument below; one per layer */
    /* Memory of the context's device (host memory on the CPU), `bytes`
     * (0 is valid) aligned to 256, contents undefined, for memory that
     * lives across runs or whose size a plugin learns only in
     * on_shape_change (per-run scratch of a size known at build is the
     * workspace, get_workspace_size). It counts in the context's memory
     * (prt_context_get_memory_size) and against its memory limit
     * (prt_context_options.memory_limit): a request past the limit fails
     * with PRT_ERR_OUT_OF_MEMORY naming the layer, the request and the
     * limit. Device allocation may synchronize the device: call it from
     * attach_to_context or on_shape_change, not enqueue; never during a
     * graph capture (PRT_ERR_STATE). Call it, and free, on the thread the
     * host called the plugin on (attach_to_context, on_shape_change,
     * enqueue, destroy, or a shared object's create/destroy). */
    prt_status (*alloc)(void *context, uint64_t bytes, void **out);
    /* Returns memory alloc gave (NULL is fine). Whatever a plugin has not
     * freed when its context is destroyed is freed then, after every
     * plugin of the context and every shared object is destroyed. */
    void (*free)(void *context, void *memory);
    /* Records an error of this layer that the context's next
     * prt_context_enqueue (or graph capture or launch) returns before it
     * runs anything -- and the run in progress too, when reported during
     * its enqueue -- as `status` (PRT_ERR_PLUGIN for a status outside the
     * codes plugin.h lists), with a message naming the layer, the plugin
     * and `message` (copied). For failures a plugin learns outside a call
     * it can fail (a stream callback, an error flag read back from the
     * device, a worker thread's); the first one reported wins until a run
     * returns it. Any thread, any time while the context lives. */
    void (*report_error)(void *context, prt_status status, const char *message);
    /* The context's object called `name`: made once per context, by the
     * first layer (in attach order) to ask, with that caller's `create`
     * and `user`, and the same pointer returned to every plugin of the
     * context that asks for that name afterwards (the other callers'
     * create, destroy and user are ignored). Two contexts have two objects.
     * It is destroyed with the first caller's `destroy` (NULL: nothing to
     * free) and `user` when the context is destroyed, after every plugin of
     * the context, so plugins may use it until their own destroy; so
     * `destroy` and `user` must stay valid until then: a function of the
     * library and static data or NULL, never the plugin object. Objects
     * are destroyed in the reverse order of their creation. For a cuBLAS
     * or cuDNN handle, a compiled module, a table built once: name it after
     * the plugin's namespace (e.g. "myns::cublas"), since every library's
     * plugins share one name space per context. PRT_ERR_INVALID_ARGUMENT
     * for a NULL or empty name, or a NULL create; create's status (and
     * message) when it fails, and the next acquire tries again; PRT_ERR_STATE
     * when create asks for its own name. create may call alloc and acquire
     * (other names). Same threads as alloc. */
    prt_status (*acquire)(void *context, const char *name, prt_resource_create_fn create,
                          prt_resource_destroy_fn destroy, void *user, void **out);
} prt_plugin_resources;

/* Run-time capability: required in every plugin. Called on engine and
 * context plugins as the general rule says, and on network plugins by the
 * builder: while autotuning (set_tactic, on_shape_change, enqueue, on random
 * data at profile 0's opt shapes) and once the build is done
 * (get_fields_to_serialize, clone). A runtime-phase plugin needs this table
 * and the core table, nothing else. */
typedef struct prt_plugin_runtime {
    uint32_t struct_size;
    uint32_t abi_version;

    /* Chooses the tactic to run: one of get_valid_tactics' list, or 0 when
     * it lists none (or an engine of an earlier plugrt recorded 0). May be
     * NULL: the plugin then has only tactic 0 (an engine that chose another
     * fails to load). Called on each engine and context plugin right after
     * it is made, and by the builder before timing each candidate. */
    prt_status (*set_tactic)(prt_plugin *self, int32_t tactic);

    /* Concrete shapes (and input counts) before a run with new shapes. The
     * runtime calls it before a plugin object's first enqueue and whenever
     * its tensors' shapes change since the last call, so a plugin may learn
     * its input and output counts here (enqueue is not told them). May be
     * NULL. Called from prt_context_enqueue on the context's thread, and by
     * the builder before timing each candidate. */
    prt_status (*on_shape_change)(prt_plugin *self, const prt_tensor_desc *in,
                                  int32_t nb_in, const prt_tensor_desc *out,
                                  int32_t nb_out);

    /* Computes the outputs. On the CPU, stream is NULL and the work happens
     * before return; on CUDA, stream is a cudaStream_t and the work is
     * enqueued on it. `workspace` holds at least the bytes get_workspace_size
     * asked for at the engine's profiles (NULL when that is 0): a loaded
     * engine that claims less than the plugin's answer at load is refused.
     * All pointers are borrowed for the call. A size-tensor
     * output receives the true size, which must not exceed its upper bound.
     * Required. Called from prt_context_enqueue on the context's thread,
     * once per layer per run in layer order, and repeatedly by the builder
     * while autotuning. */
    prt_status (*enqueue)(prt_plugin *self, const prt_tensor_desc *in_desc,
                          const prt_tensor_desc *out_desc, const void *const *inputs,
                          void *const *outputs, void *workspace, int32_t device,
                          void *stream);

    /* A full clone for one execution context; the caller owns it. Required.
     * Called on the engine plugin once per layer by prt_context_create, on
     * the creating thread: possibly several threads over time, but a lock
     * per engine keeps them from entering it at once. The clone must share
     * nothing mutable with self: it runs on its context's thread while self
     * attaches more. NULL fails the context's creation. */
    prt_plugin *(*attach_to_context)(prt_plugin *self, prt_plugin_resources *resources);

    /* The fields that recreate this plugin through its creator. The result is
     * owned by the plugin and valid until the next call on it or destroy.
     * Required in every plugin, though only network plugins are asked: once
     * per layer, as prt_engine_build writes the engine (after configure).
     * The engine keeps a copy; prt_engine_serialize writes that copy. */
    const prt_field_collection *(*get_fields_to_serialize)(prt_plugin *self);

    /* A deep copy; the caller owns it. NULL on failure. Required in every
     * plugin. Called by the builder once per layer at the end of a build,
     * for the engine plugin; a loaded engine's plugin comes from its creator
     * instead. Users clone to put one plugin in two layers. */
    prt_plugin *(*clone)(const prt_plugin *self);

    /* Frees the plugin and everything it owns. Required. Called once, by its
     * owner: the network, engine or context as it is destroyed (on that
     * thread), or whoever created it and could not hand it on. */
    void (*destroy)(prt_plugin *self);
} prt_plugin_runtime;

typedef struct prt_plugin_vtable {
    uint32_t struct_size;
    uint32_t abi_version;
    const prt_plugin_core *core;       /* required */
    const prt_plugin_build *build;     /* may be NULL in a runtime-phase plugin */
    const prt_plugin_runtime *runtime; /* required */
} prt_plugin_vtable;

/* A plugin object: this struct first, the author's state after it. */
struct prt_plugin {
    const prt_plugin_vtable *vt;
};

/* ------------------------------------------------------------------------ */
/* Creators and libraries                                                    */
/* ------------------------------------------------------------------------ */

typedef enum prt_plugin_phase {
    PRT_PHASE_BUILD = 0,  /* for a network or a check: all three capabilities */
    PRT_PHASE_RUNTIME = 1 /* from an engine: core and runtime suffice */
} prt_plugin_phase;

typedef struct prt_plugin_creator prt_plugin_creator;
struct prt_plugin_creator {
    uint32_t struct_size;
    uint32_t abi_version;
    const char *name;             /* e.g. "NonZeroPlugin" */
    const char *version;          /* e.g. "1" */
    const char *plugin_namespace; /* "" for none; never NULL */
    int32_t nb_fields;
    const prt_field_schema *fields; /* the fields it accepts */
    /* Makes a plugin from fields (borrowed for the call). Fields not given
     * take the creator's defaults. On success *out is owned by the caller.
     * Required. Called by users and the ONNX importer for PRT_PHASE_BUILD,
     * and by prt_engine_deserialize with the fields stored in the engine
     * file (untrusted bytes, check them): for PRT_PHASE_RUNTIME (the engine
     * plugin), then for PRT_PHASE_BUILD (a check plugin; a creator that
     * cannot make one fails the load). May be called from any thread,
     * concurrently. */
    prt_status (*create)(const prt_plugin_creator *self, const char *layer_name,
                         const prt_field_collection *fields, int32_t phase,
                         prt_plugin **out);
    void *user; /* the author's */
};

/* What a library's entry point returns: borrowed until the library is
 * unloaded. */
typedef struct prt_plugin_library {
    uint32_t struct_size;
    uint32_t abi_version; /* the ABI the library speaks; <= the host's */
    const char *name;     /* for people, e.g. "plugrt_plugins" */
    const char *version;
    int32_t nb_creators;
    const prt_plugin_creator *const *creators;
} prt_plugin_library;

/* The single symbol a plugin library exports. The host passes the highest ABI
 * version it speaks and its services (valid until unload). Return the library
 * description, or NULL if this library cannot serve that ABI version. Called
 * by prt_registry_load_library on the loading thread, once per load: a
 * library loaded into several registries is asked each time, possibly from
 * several threads at once. */
#define PRT_PLUGIN_ENTRY_SYMBOL "prt_plugin_library_open"
typedef const prt_plugin_library *(*prt_plugin_entry_fn)(
    uint32_t host_abi_version, const prt_host_services *services);

#if defined(_WIN32)
#define PRT_PLUGIN_EXPORT __declspec(dllexport)
#else
#define PRT_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
}
#endif

#endif /* PLUGRT_PLUGIN_H */
