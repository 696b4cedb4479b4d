/*
 * The scaffold every built-in op stands on (internal to libplugrt).
 *
 * A built-in op is a plugin of the ordinary ABI (plugin.h) in namespace
 * PRT_BUILTIN_NAMESPACE, version "1". Its creator's `user` points to an
 * op_class: a short description (fields, dtypes, number of inputs) plus the
 * few functions that differ between ops (parse fields, serialize them,
 * symbolic shapes, concrete shapes, workspace, run). Everything else is the
 * same for every op: the plugin tables, dtype and format negotiation, the
 * checks before every run and creation (op_common.c), field reading
 * (op_fields.c), broadcasting, GEMM and half-float conversion (op_math.c),
 * the BLAS behind GEMM (blas.c).
 * builtins.c holds the table of creators behind prt_builtin_find_creator.
 *
 * Rules every op obeys through the scaffold:
 *  - One output, unless the class says how many (nb_outputs and the *_n
 *    hooks). By default all inputs and the output share one dtype,
 *    taken from the class's mask; `in_dtypes` and `out_dtype` let an op mix
 *    dtypes (Gather's int64 indices, Shape's int64 output, Cast). The format
 *    is LINEAR; the devices are those the class has a kernel for.
 *  - Shape inputs (prt_network_add_plugin's shape_inputs): an op accepts
 *    min_shape_inputs..max_shape_inputs of them (0 by default) and sees
 *    their values as expressions in `shapes_sv`. An op whose output dims
 *    come from those values has no `infer` (the runtime's dims, computed
 *    from the same expressions, are trusted); its `run` checks whatever it
 *    relies on (a reshape the volume, Slice its dims from its parameters).
 *  - Shape tensors: `values` states the values of a small integer output
 *    (get_output_values), so later layers may take it as a shape input.
 *  - Objects are plain old data but for one shared pointer: clone and
 *    attach_to_context are a copy, destroy is a free. The exception is
 *    `cst`, state an op derives from its constant inputs (`prepare`),
 *    reference-counted and read-only once made, so that every context's
 *    clone shares the engine's copy (op_const). The serialized field
 *    collection points into the object and is rebuilt on every call.
 *  - Unknown fields are an error (an ONNX attribute we do not model must not
 *    be dropped silently). Integer fields accept any integer field type
 *    (int32 and int64 in practice) with values in int32's range; they are
 *    stored and serialized as int32.
 *  - Shape rules that can be decided from the symbolic dims fail
 *    get_output_shapes; the rest are checked by `infer` on concrete dims in
 *    configure (when the dims are static), on_shape_change and before every
 *    run, which also checks that the output dims are what infer computes, so
 *    a kernel never reads or writes out of bounds.
 */
#ifndef PLUGRT_OPS_OP_COMMON_H
#define PLUGRT_OPS_OP_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "ops/op_const.h"

#define OP_VERSION "1"
#define OP_LAYER_MAX 64 /* layer name kept for messages, maybe truncated */
#define OP_MAX_FIELDS 8 /* serialized fields of one op */
#define OP_MAX_SHAPE_INPUTS 4
#define OP_MAX_OUTPUTS 64 /* outputs of one op (Split) */

/* dtype masks */
#define OP_DT(t) (1u << (t))
#define OP_DT_ALL ((1u << PRT_DTYPE_COUNT) - 1u)
/* Every dtype but the 8-bit floats: for ops that make or compare values
 * (a fill value, a Pad constant, x != 0, sorting), which read numbers by
 * dtype and have no 8-bit float rules; the byte-moving ops take OP_DT_ALL. */
#define OP_DT_NO_FP8 (OP_DT_BASE & ~(OP_DT(PRT_FLOAT8E4M3FN) | OP_DT(PRT_FLOAT8E5M2)))
/* float64, int16, uint16, uint32, uint64 (appended to prt_dtype later):
 * an op that reads numbers takes them where its kernels were written for
 * them (OP_DT_NO_FP8 and the narrower masks leave them out); a device
 * kernel whose table entry lists no dtypes takes none of them. */
#define OP_DT_WIDE                                                                       \
    (OP_DT(PRT_FLOAT64) | OP_DT(PRT_INT16) | OP_DT(PRT_UINT16) | OP_DT(PRT_UINT32) |     \
     OP_DT(PRT_UINT64))
#define OP_DT_BASE (OP_DT_ALL & ~OP_DT_WIDE)
#define OP_DT_FLOAT (OP_DT(PRT_FLOAT32) | OP_DT(PRT_FLOAT16))

typedef struct op_object op_object;

/* State an op derives once from its constant inputs (MatMul's B packed into
 * panels), made by op_class.prepare on the engine's runtime object when the
 * engine is built or loaded and shared by every clone of it (the contexts'
 * objects): each object holding it holds a reference, and the last one
 * destroyed frees it. Never written after prepare returns, so the threads
 * of every context read it without locks. An op's own struct starts with
 * this head; the block is one allocation (op_const_alloc), freed whole. */
typedef struct op_const {
    _Atomic int32_t refs;
} op_const;

/* A zeroed block of `size` bytes (>= sizeof(op_const)) holding one
 * reference; NULL on out of memory. */
op_const *op_const_alloc(size_t size);

/* A field collection being read by a creator; names for messages. */
typedef struct op_fields {
    const char *op;
    const char *layer;              /* never NULL; may be "" */
    const prt_field_collection *fc; /* may be NULL: no fields */
} op_fields;

/* A kernel: see op_class.run. */
typedef prt_status (*op_kernel_fn)(const op_object *o, int32_t dtype,
                                   const prt_tensor_desc *in, int32_t nb_in,
                                   const prt_tensor_desc *out, int32_t nb_out,
                                   const void *const *x, void *const *y, void *ws,
                                   void *stream);

typedef struct op_class {
    int32_t kind;       /* variant, for families that share code (Add, Sub) */
    int32_t min_inputs; /* inputs accepted */
    int32_t max_inputs;
    uint32_t dtypes;     /* OP_DT mask; all inputs and the output share one */
    size_t size;         /* bytes of the op's object, >= sizeof(op_object) */
    int32_t alias_input; /* output 0 may share this input's memory; -1: no */
    /* 1: output 0 is input 0's bytes in the same order under other dims
     * (Reshape, Squeeze, Unsqueeze, Flatten); the builder may give it input
     * 0's memory (op_is_view), and the run copies only when not. */
    int32_t view;
    /* Reads fields into the object (creator defaults for absent ones).
     * NULL: the op has no fields. */
    prt_status (*parse)(op_object *o, const op_fields *f);
    /* Writes the fields that recreate the op into ser (OP_MAX_FIELDS
     * entries, pointing into the object) and returns their count. NULL:
     * none. */
    int32_t (*serialize)(op_object *o, prt_field *ser);
    /* Symbolic output dims. nb_in is within the class's range. */
    prt_status (*shapes)(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                         prt_dim_exprs *out, prt_expr_builder *eb);
    /* Concrete output dims from concrete input dims (all >= 0), with the
     * errors that need concrete values. */
    prt_status (*infer)(const op_object *o, const prt_dims *in, int32_t nb_in,
                        prt_dims *out);
    /* Scratch bytes for these concrete dims (out[0..nb_out): every
     * output's). The builder asks with every input's and output's profile
     * maximum, which together need not be a shape infer accepts, so this
     * must cope with any dims; the need must not decrease when a dim grows.
     * Before a run it is asked again with the real dims. NULL: none. -1:
     * overflow. */
    int64_t (*workspace)(const op_object *o, int32_t dtype, const prt_dims *in,
                         int32_t nb_in, const prt_dims *out, int32_t nb_out);
    /* The CPU kernel, the reference every other device's kernel is tested
     * against (other devices' kernels come from their tables, op_device.h):
     * computes every output, y[k] output k (non-NULL when it has elements;
     * an output whose dims depend on data holds its upper bound in
     * out[k].dims). Dims are checked; pointers point into the device's
     * memory; ws holds what `workspace` asked for. `dtype` is input 0's
     * (output 0's when the op has no inputs); with mixed dtypes read
     * in[i].dtype and out[k].dtype. `stream` is the device's queue (NULL on
     * the CPU, where the work is done on return). */
    op_kernel_fn run;

    /* ---- optional; zero/NULL keeps the rules above ---------------------- */
    /* The kernel computes matrix products (op_gemm_f32): attach_to_context
     * calls op_blas_prepare. */
    int32_t blas;
    /* Shape inputs accepted (both 0: none). */
    int32_t min_shape_inputs;
    int32_t max_shape_inputs;
    /* 1 when shape input `index` may be float32: its values reach shapes_sv
     * as order keys (PRT_DIM_FLOOR_MUL_F32). NULL: none may (the builder
     * refuses a float32 one, whose keys would read as huge integers). */
    int (*float_shape_input)(const op_object *o, int32_t index);
    /* The OP_DT mask input `index` accepts, given the dtypes of inputs
     * 0..index-1 in types[]. NULL: input 0 takes `dtypes`, the others input
     * 0's dtype. */
    uint32_t (*in_dtypes)(const op_object *o, int32_t index, const int32_t *types);
    /* The output dtype from the inputs' (nb_in may be 0). NULL: input 0's. */
    int32_t (*out_dtype)(const op_object *o, const int32_t *types, int32_t nb_in);
    /* Symbolic output dims when the op takes shape inputs: sv[k] holds
     * shape input k's values (sv[k].nb_dims of them). Used instead of
     * `shapes` when set. */
    prt_status (*shapes_sv)(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                            const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                            prt_expr_builder *eb);
    /* The output's values (get_output_values): in_values[i].nb_dims < 0
     * where input i's are not known; out_dims are the output dims `shapes`
     * gave. Set out_values->nb_dims (the element count, which must be the
     * output's static volume, <= PRT_MAX_DIMS) and d[], or leave it -1
     * (the scaffold also drops values whose count is not that volume).
     * Only an int32/int64/bool (0/1) output may have values (the builder
     * fails the layer otherwise): an op whose output dtype differs from its
     * inputs' checks it. NULL: never known. */
    prt_status (*values)(op_object *o, const prt_dim_exprs *in_dims,
                         const prt_dim_exprs *in_values, int32_t nb_in,
                         const prt_dim_exprs *out_dims, prt_dim_exprs *out_values,
                         prt_expr_builder *eb);

    /* ---- several outputs (optional; nb_outputs NULL: one, the hooks
     * above). With nb_outputs set these replace shapes/shapes_sv, infer
     * and out_dtype; `values` is not used. `workspace` and `run` take every
     * output either way. ------------------------------------------------- */
    /* How many outputs this object has (its fields may say: Split). */
    int32_t (*nb_outputs)(const op_object *o);
    /* Symbolic dims of every output; sv and nb_sv as for shapes_sv. Size
     * tensors are declared here through eb (the output they are declared
     * for must be a 0-D int32/int64 output). */
    prt_status (*shapes_n)(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                           const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                           int32_t nb_out, prt_expr_builder *eb);
    /* Concrete dims of every output (NULL: the runtime's are trusted and
     * run checks what it relies on, as for data-dependent outputs). */
    prt_status (*infer_n)(const op_object *o, const prt_dims *in, int32_t nb_in,
                          prt_dims *out, int32_t nb_out);
    /* Output `index`'s dtype from the inputs'. */
    int32_t (*out_dtype_n)(const op_object *o, const int32_t *types, int32_t nb_in,
                           int32_t index);
    /* ---- devices (optional) ------------------------------------------- */
    /* The input whose dtype names the op's cases (op_device.h: a device
     * kernel's dtypes, the coverage test's cells): 0 by default, Where's
     * X (1) rather than its bool condition. */
    int32_t dtype_input;

    /* ---- the blocked format (optional) --------------------------------- */
    /* Whether the CPU kernel takes the format at position pos (inputs, then
     * outputs; LINEAR or PRT_FORMAT_CHW8, plugin.h), given the dtypes and
     * formats before pos and every position's dims: asked for both
     * formats, so an op can refuse to mix them. NULL: LINEAR only. For
     * CHW8 the scaffold checks dtype float32 and rank 3 or more first, and
     * keeps which positions are CHW8 in the object (op_object.chw8) for
     * `workspace`; the kernel reads the formats from its descs. A CHW8
     * tensor never reaches another device's kernel: its object then lists
     * the CPU alone among its devices. */
    int (*chw8_ok)(const op_object *o, int32_t pos, const prt_dynamic_tensor_desc *io,
                   int32_t nb_in, int32_t nb_out);

    /* ---- constant inputs (optional) ------------------------------------ */
    /* State derived from the inputs that are constants of the engine, made
     * once (op_bind_constants, op_const.h): called on the engine's runtime
     * object of a CPU layer when a CPU engine is built or loaded, with every
     * input's desc and data[i] input i's bytes (host memory that lives as
     * long as the engine) or NULL for an input computed at run time. Sets
     * *out to a block of op_const_alloc, or leaves it NULL for none; fails
     * only for out of memory. A kernel that uses the state must check that
     * the run's input is that constant (the same pointer and dims) and
     * compute the same bits as without it. */
    prt_status (*prepare)(const op_object *o, const prt_tensor_desc *in, int32_t nb_in,
                          const void *const *data, op_const **out);
} op_class;

/* The head of every op object. */
struct op_object {
    prt_plugin base;                   /* first: the vtable */
    const prt_plugin_creator *creator; /* identity */
    const op_class *cls;
    /* Inputs seen by configure or on_shape_change (enqueue is not told);
     * 0 until then. */
    int32_t nb_inputs;
    int32_t configured; /* configure or on_shape_change has run */
    /* Bit d: device d's kernel refuses the dtypes or formats last
     * configured (op_device_kernel.dtypes, CHW8), so devices() leaves it
     * out. */
    uint32_t refused_devices;
    /* The engine's PRT_PRECISION_* flags (op_set_precision, op_const.h);
     * 0 in the builder's timing runs and outside an engine. */
    uint32_t precision;
    /* Bit i: input i is CHW8; bit OP_CHW8_OUT + k: output k (k < 8). Set
     * from the descriptors before every workspace query and run. */
    uint32_t chw8;
    /* The output dims get_output_shapes gave, for get_output_values.
     * Expressions live only as long as the build: never read them after. */
    prt_dim_exprs bld_out;
    char layer[OP_LAYER_MAX];
    prt_field_collection fc; /* rebuilt by get_fields_to_serialize */
    prt_field ser[OP_MAX_FIELDS];
    /* Each device's kernel for this op (op_device.h), found by name when
     * the object is created; NULL where the device has none, and for the
     * CPU, whose kernel is cls->run. */
    const struct op_device_kernel *kern[PRT_DEVICE_COUNT];
    /* Each device's resources for this object (op_device_table.attach: a
     * cuBLAS handle), made when a context of the device attaches it (or,
     * for the builder's timing runs, at its first run) and freed with it;
     * never shared by clones. NULL elsewhere. */
    void *res[PRT_DEVICE_COUNT];
    /* The class's `prepare` state, or NULL: one reference, shared with the
     * object it was cloned from (op_const). */
    op_const *cst;
    /* Bytes of workspace its runs get (op_bind_workspace, op_workspace.h);
     * 0 until told. A run whose need at its shapes exceeds it fails. */
    int64_t ws_bytes;
    /* ---- tactics (op_device_tuning) ------------------------------------ */
    /* Each device's tactics for this op, found by name with kern; NULL
     * where it has none. */
    const struct op_device_tuning *tun[PRT_DEVICE_COUNT];
    /* The tactic set_tactic chose (0: the kernel's default); a kernel
     * reads it. */
    int32_t tactic;
    /* The build's target (set_target_device); -1 until told. Tactics are
     * listed for it alone, so a CPU build lists none. */
    int32_t target_device;
    /* The opt dims of the inputs at the last configure (the first
     * OP_TUNE_INPUTS), which the tactics are listed for; nb_opt of them. */
    int32_t nb_opt;
    int32_t opt_dtype; /* the dtype kernels get (input 0's) */
    prt_dims opt[3];
    prt_dims max[3]; /* the same inputs' profile maxima */
};
#define OP_TUNE_INPUTS 3
#define OP_MAX_TACTICS 32 /* tactics one op's kernel may list */

#define OP_CHW8_OUT 16

/* A built-in creator for `cls` (an op_class object) with a schema array. */
#define OP_CREATOR(name, cls, schema, nb_schema)                                         \
    {                                                                                    \
        sizeof(prt_plugin_creator), PRT_PLUGIN_ABI_VERSION, (name), OP_VERSION,          \
            PRT_BUILTIN_NAMESPACE, (nb_schema), (schema), op_create, (void *)&(cls)      \
    }

/* The create function of every built-in creator. */
prt_status op_create(const prt_plugin_creator *self, const char *layer_name,
                     const prt_field_collection *fields, int32_t phase, prt_plugin **out);

/* "<Op> (layer '<layer>'): <message>" with `status`; returns status. */
prt_status op_fail(const op_object *o, prt_status status, const char *fmt, ...)
    BASE_PRINTF(3, 4);
/* The same for a creator reading fields (no object yet). */
prt_status op_fields_fail(const op_fields *f, prt_status status, const char *fmt, ...)
    BASE_PRINTF(3, 4);
/* The same from an op name, layer name ("" or NULL: none) and va_list. */
prt_status op_vfail(const char *op, const char *layer, prt_status status, const char *fmt,
                    va_list ap);
/* The op's name (its creator's). */
const char *op_name(const op_object *o);

/* ---- fields ------------------------------------------------------------- */

/* Finds a field by name (*out NULL if absent); a name given twice fails. */
prt_status op_field_find(const op_fields *f, const char *name, const prt_field **out);
/* One integer (int32 or int64 field of length 1), or dflt if absent. */
prt_status op_field_i32(const op_fields *f, const char *name, int32_t dflt, int32_t *out);
/* An integer array of at most cap values; *out_len = its length, -1 when
 * the field is absent. */
prt_status op_field_i32_array(const op_fields *f, const char *name, int32_t *dst,
                              int32_t cap, int32_t *out_len);
/* A numeric array of at most cap values as floats (integers converted);
 * *out_len = -1 when the field is absent. */
prt_status op_field_f32_array(const op_fields *f, const char *name, float *dst,
                              int32_t cap, int32_t *out_len);
/* One float (a float field of length 1: float32, or float64, float16 or
 * bfloat16 converted to float32), or dflt if absent. Float fields are
 * stored and serialized as float32. */
prt_status op_field_f32(const op_fields *f, const char *name, float dflt, float *out);
/* Element k of a numeric field: 1 for an integer type (the value in *i),
 * 2 for a float type (in *d, halves converted), 0 for any other type. */
int op_field_number_at(const prt_field *fl, int64_t k, int64_t *i, double *d);
/* A string (char field) of at most cap - 1 bytes, NUL-terminated in dst;
 * trailing NULs in the field are dropped, inner ones rejected. *out_len = -1
 * when absent (dst is then ""). */
prt_status op_field_str(const op_fields *f, const char *name, char *dst, size_t cap,
                        int32_t *out_len);

/* Checks a creator's collection: well formed, and every field named in
 * the creator's schema (an unknown field is an error naming the accepted
 * ones). */
prt_status op_fields_validate(const op_fields *f, const prt_plugin_creator *c);
/* Fills a serialized field. */
void op_ser(prt_field *f, const char *name, int32_t type, const void *data,
            int64_t length);

/* ---- shapes ------------------------------------------------------------- */

/* Dims in messages: base_dims_format(d, BASE_DIMS_LIST, ...) for concrete
 * ones ("[2, 3]"), this for symbolic ones: "[2, ?, 3]" (? for a dim that is
 * not a constant) into buf; returns buf. Element counts: base_volume. */
const char *op_exprs_str(prt_expr_builder *eb, const prt_dim_exprs *d, char *buf,
                         size_t cap);

/* An axis field for inputs of rank r, normalized into [0, r) ([0, r] with
 * `end` set: an axis that may name the end, as Flatten's) or an error naming
 * `what` (e.g. "X", "data", "an input"): "axis -4 is out of range for X of
 * rank 3 (-3 to 2)", and without `end` "axis 0 needs X of rank 1 or more,
 * not a scalar". */
prt_status op_axis(const op_object *o, int32_t axis, int32_t r, int32_t end,
                   const char *what, int32_t *out);

/* Multidirectional (numpy) broadcast of two symbolic shapes, aligned at the
 * right. Per dim: equal expressions give that one; a constant 1 gives the
 * other side; two different constants fail naming `what` and the dim; one
 * constant c != 1 gives c (the other must be c or 1, checked at run time);
 * two different symbols give MAX(a, b), which assumes the run-time values
 * are equal or one of them is 1 and the other >= 1 (checked at run time:
 * broadcasting 0 against a symbolic dim that turns out 1 is rejected). */
prt_status op_broadcast_exprs(op_object *o, prt_expr_builder *eb, const prt_dim_exprs *a,
                              const prt_dim_exprs *b, prt_dim_exprs *out,
                              const char *what);
/* The same for concrete dims; fails naming `what` and the dim. */
prt_status op_broadcast_dims(const op_object *o, const prt_dims *a, const prt_dims *b,
                             prt_dims *out, const char *what);
/* Element strides of `in` (rank <= out's) broadcast to `out`: 0 where the
 * input has size 1 (or lacks the dim), its dense stride elsewhere. */
void op_broadcast_strides(const prt_dims *in, const prt_dims *out, int64_t *strides);

#define OP_WALK_MAX 3 /* inputs of one walk */

/* One row of a walk: y[j] from the inputs' elements p[k] + j * s[k] (in
 * elements of each input), j < n; every s[k] is 0 or 1. Returns 0, or a
 * code of the op's own that stops the walk. */
typedef int (*op_row_fn)(const void *ctx, const uint8_t *const *p, const int64_t *s,
                         uint8_t *y, int64_t n);

/* Calls fn over the rows of `out`, nb (<= OP_WALK_MAX) inputs of dims in[k]
 * broadcast to it (numpy's rule; checked before), element sizes es[k] and
 * out_es (an "element" may be a whole block, as MatMul's matrices). Size-1
 * dims are dropped and dims contiguous in every input merged, so rows are
 * as long as the layout allows: inputs of the output's shape, or scalars,
 * make a single row. Returns 0, or the first non-zero code of fn (the
 * remaining rows are not visited). (broadcast_walk.c) */
int op_bcast_walk(const prt_dims *out, int32_t nb, const prt_dims *in, const size_t *es,
                  size_t out_es, const void *const *x, void *y, op_row_fn fn,
                  const void *ctx);

/* op_bcast_walk over the threads of the running context (base/parallel.h):
 * the output's elements are cut into ranges of at least `grain`, and each
 * range visits its part of the rows (a row may be split between ranges).
 * For row functions that cannot fail and whose elements do not depend on
 * one another: fn must return 0, and is called concurrently with the same
 * ctx. The result is the serial walk's, bit for bit. */
void op_bcast_walk_parallel(const prt_dims *out, int32_t nb, const prt_dims *in,
                            const size_t *es, size_t out_es, const void *const *x,
                            void *y, op_row_fn fn, const void *ctx, int64_t grain);

/* Grains for base_parallel_for in the ops (the fewest elements, or rows of
 * that many elements, one range takes): a few microseconds of work on one
 * core (8192 vectorized float operations, or 2048 libm calls), several
 * times what handing a range to a spinning worker costs, so that MobileNet's
 * squeeze-excite multiplications (28K to 200K elements) still split. */
#define OP_GRAIN_SIMPLE 8192 /* a load, an operation and a store */
#define OP_GRAIN_MATH 2048   /* a libm function per element */

/* ---- compute ------------------------------------------------------------ */

/* C[M x N] = A[M x K] * B[K x N] (row-major, leading dims given): see
 * op_gemm_f32_ep. */
void op_gemm_f32(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                 const float *B, int64_t ldb, float *C, int64_t ldc);
/* C[M x N] = op(A) * op(B), op(X) = X or its transpose (BLAS's rule: with
 * trans_a, A is stored K x M with leading dim lda; with trans_b, B is N x
 * K). op_gemm_f32 is this with both 0. */
void op_gemm_f32_t(int32_t trans_a, int32_t trans_b, int64_t M, int64_t N, int64_t K,
                   const float *A, int64_t lda, const float *B, int64_t ldb, float *C,
                   int64_t ldc);
struct op_epilogue;
/* op_gemm_f32_t, then e's bias and activation on every element (e may be
 * NULL; cpu_kernels.h). The kernel by shape: a matrix times a vector
 * op_gemv_f32; without transposes, up to 2^23 multiply-adds or where
 * OpenBLAS is not in use, op_gemm_nn (which applies e as it stores);
 * otherwise OpenBLAS's cblas_sgemm where it is in use (op_blas_prepare),
 * else op_gemm_f32_loops. Every kernel sums each element over k in a fixed
 * order, so a caller that splits C into blocks at bounds of its own gets
 * results that do not depend on how the blocks are spread over threads. */
void op_gemm_f32_ep(int32_t trans_a, int32_t trans_b, int64_t M, int64_t N, int64_t K,
                    const float *A, int64_t lda, const float *B, int64_t ldb, float *C,
                    int64_t ldc, const struct op_epilogue *e);
/* op_gemm_f32_ep over the running context's threads (base/parallel.h): C
 * in the blocks of op_gemm_split, each block one op_gemm_f32_ep call, so
 * the kernel each block takes and every element's bits depend on the shape
 * alone, never on the thread count. For a product on its own (MatMul,
 * Gemm); a caller already inside a parallel loop calls op_gemm_f32_ep. */
void op_gemm_f32_par(int32_t trans_a, int32_t trans_b, int64_t M, int64_t N, int64_t K,
                     const float *A, int64_t lda, const float *B, int64_t ldb, float *C,
                     int64_t ldc, const struct op_epilogue *e);
/* op_gemm_f32_par with B also in panels (bp, op_pack_b; NULL: none), read
 * by the blocks that would take the register tiles (op_gemm_takes_nn) when
 * neither side is transposed: the same bits as op_gemm_f32_par. */
void op_gemm_f32_par_panels(int32_t trans_a, int32_t trans_b, int64_t M, int64_t N,
                            int64_t K, const float *A, int64_t lda, const float *B,
                            int64_t ldb, const float *bp, float *C, int64_t ldc,
                            const struct op_epilogue *e);
/* Blocks for spreading an M x N x K product over threads: mb rows by nb
 * columns, one block for a small product, else blocks of about 2^17
 * multiply-adds (2^15 for a matrix times a vector) along the longer side
 * (whole tiles of op_gemm_nn). They depend on the shape alone, never on
 * the thread count. */
void op_gemm_split(int64_t M, int64_t N, int64_t K, int64_t *mb, int64_t *nb);
/* 1 when op_gemm_f32_ep(0, 0, M, N, K, A, lda, B, ldb, ...) computes with
 * the register tiles (op_gemm_nn), whose sums op_gemm_nn_panels repeats
 * bit for bit: not a vector (op_gemv_f32) and not OpenBLAS's. */
int op_gemm_takes_nn(int64_t M, int64_t N, int64_t K, int64_t ldb);
/* The same with the built-in loops: what op_gemm_f32_t computes where
 * OpenBLAS is not in use. Each element is the float sum over k in order,
 * bit for bit (register tiles only change which sums run together). */
void op_gemm_f32_loops(int32_t trans_a, int32_t trans_b, int64_t M, int64_t N, int64_t K,
                       const float *A, int64_t lda, const float *B, int64_t ldb, float *C,
                       int64_t ldc);
/* Whether products go to OpenBLAS (blas.c says why this is decided at run
 * time): loads it on the first call where the process has no memory limit
 * (RLIMIT_AS, RLIMIT_DATA), and switches to the built-in loops where it has
 * one. attach_to_context calls it for ops with `blas` set, so the choice and
 * the loading happen at context creation; the first product calls it if
 * nothing has. Thread-safe. */
void op_blas_prepare(void);
/* 1 when products go to OpenBLAS (deciding it, as the first product
 * would, if nothing has). */
int op_blas_in_use(void);
/* op_gemm_f32_t's product through OpenBLAS when it is in use and the sizes
 * fit its int: 1 when done, 0 when the caller must compute it. */
int op_blas_sgemm(int32_t trans_a, int32_t trans_b, int64_t M, int64_t N, int64_t K,
                  const float *A, int64_t lda, const float *B, int64_t ldb, float *C,
                  int64_t ldc);
/* A constant B of K x N (row-major, dense) packed once into the register
 * tiles' panels (op_gemm_pack_panels, cpu_kernels.h) as float32, 16-bit
 * floats converted exactly: an op's `prepare` state (op_const), shared by
 * the engine's object and every context's. */
typedef struct op_packed_b {
    op_const head;
    const void *b; /* the constant packed: a run checks it is given it */
    prt_dims dims; /* its dims and dtype */
    int32_t dtype;
    float *panels; /* op_gemm_panel_floats(K, N) floats, in this block */
} op_packed_b;
/* Fewer columns than this are not packed (one partial strip). */
#define OP_PACK_MIN_N 16
/* Packs b (desc b, bytes data) as K x N into a new block at *out; leaves
 * *out NULL for a B that is not float, narrower than OP_PACK_MIN_N or
 * empty. PRT_ERR_OUT_OF_MEMORY naming o. (op_math.c) */
prt_status op_pack_b(const op_object *o, const prt_tensor_desc *b, const void *data,
                     int64_t K, int64_t N, op_const **out);
/* o's packed B when the run's B (desc b, pointer x) is the constant it was
 * packed from (the same pointer, dtype and dims), else NULL. */
const op_packed_b *op_packed_b_for(const op_object *o, const prt_tensor_desc *b,
                                   const void *x);
/* Converts n elements of float16/bfloat16/float32 to float32 and back. */
void op_to_f32(const void *src, int32_t dtype, int64_t n, float *dst);
void op_from_f32(const float *src, int32_t dtype, int64_t n, void *dst);

/* ---- values (shape tensors) --------------------------------------------- */

/* The static element count of symbolic dims: -1 when a dim is not a
 * constant or the count exceeds PRT_MAX_DIMS. */
int32_t op_static_count(prt_expr_builder *eb, const prt_dim_exprs *d);
/* Reads element i of an int32/int64 (or bool, uint8, int8) tensor. */
int64_t op_int_at(const void *x, int32_t dtype, int64_t i);

/* Creators of the built-in ops, in their files. */
extern const prt_plugin_creator op_relu_creator;
extern const prt_plugin_creator op_identity_creator;
extern const prt_plugin_creator op_add_creator;
extern const prt_plugin_creator op_sub_creator;
extern const prt_plugin_creator op_mul_creator;
extern const prt_plugin_creator op_div_creator;
extern const prt_plugin_creator op_matmul_creator;
extern const prt_plugin_creator op_transpose_creator;
extern const prt_plugin_creator op_einsum_creator;
extern const prt_plugin_creator op_conv_creator;
extern const prt_plugin_creator op_hard_sigmoid_creator;
extern const prt_plugin_creator op_hard_swish_creator;
extern const prt_plugin_creator op_global_average_pool_creator;
extern const prt_plugin_creator op_flatten_creator;
extern const prt_plugin_creator op_gemm_creator;

#endif /* PLUGRT_OPS_OP_COMMON_H */
