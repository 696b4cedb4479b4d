/*
 * The invariant check on an engine (engine_impl.h lists the invariants):
 * engine_validate, which every engine read from bytes passes before
 * anything else touches it, and every engine the builder makes before it
 * is handed out.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_impl.h"
#include "kernel/kernel.h"

static prt_status invalid(const char *fmt, ...) BASE_PRINTF(1, 2);
static prt_status invalid(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return base_error(PRT_ERR_MALFORMED, "invalid engine: %s", msg);
}

static const char *tname(const prt_engine *e, int32_t t)
{
    return e->tensors[t].name;
}

static prt_status validate_counts(const prt_engine *e)
{
    if (e->device != PRT_DEVICE_CPU && e->device != PRT_DEVICE_CUDA)
        return invalid("unknown target device %d", (int)e->device);
    if (e->nb_tensors < 0 || e->nb_layers < 0 || e->nb_inputs < 0 || e->nb_outputs < 0 ||
        e->nb_profiles < 0 || e->nb_sizes < 0 || e->exprs.nb_nodes < 0)
        return invalid("a negative count");
    if ((e->nb_tensors && !e->tensors) || (e->nb_layers && !e->layers) ||
        (e->nb_inputs && !e->input_tensors) || (e->nb_outputs && !e->output_tensors) ||
        (e->exprs.nb_nodes && !e->exprs.nodes))
        return invalid("an array is missing");
    if (e->arena_size < 0 || e->workspace_size < 0 ||
        e->arena_size > INT64_MAX - e->workspace_size)
        return invalid("arena size %lld and workspace size %lld",
                       (long long)e->arena_size, (long long)e->workspace_size);
    /* Each size id names a distinct tensor; this also bounds what the size
     * check below allocates. */
    if (e->nb_sizes > e->nb_tensors)
        return invalid("%d size tensors but only %d tensors", (int)e->nb_sizes,
                       (int)e->nb_tensors);
    /* Profiles are indexed profile * nb_inputs + input in int32. */
    if (e->nb_profiles < 1)
        return invalid("no optimization profile");
    if ((int64_t)e->nb_profiles * e->nb_inputs > INT32_MAX)
        return invalid("%d profiles of %d inputs are too many", (int)e->nb_profiles,
                       (int)e->nb_inputs);
    if (e->nb_inputs && (!e->prof_min || !e->prof_opt || !e->prof_max || !e->prof_vmin ||
                         !e->prof_vopt || !e->prof_vmax))
        return invalid("profile arrays are missing");
    return PRT_OK;
}

/* input_tensors / output_tensors against the tensors' input_index and
 * output_index (both directions are checked: here the lists, in
 * validate_tensor_source each tensor). */
static prt_status validate_io_lists(const prt_engine *e)
{
    for (int32_t i = 0; i < e->nb_inputs; i++) {
        int32_t t = e->input_tensors[i];
        if (t < 0 || t >= e->nb_tensors)
            return invalid("input %d is tensor %d, outside 0..%d", (int)i, (int)t,
                           (int)e->nb_tensors - 1);
        if (e->tensors[t].input_index != i)
            return invalid("input %d is tensor %d ('%s'), whose input index "
                           "is %d",
                           (int)i, (int)t, tname(e, t), (int)e->tensors[t].input_index);
    }
    for (int32_t i = 0; i < e->nb_outputs; i++) {
        int32_t t = e->output_tensors[i];
        if (t < 0 || t >= e->nb_tensors)
            return invalid("output %d is tensor %d, outside 0..%d", (int)i, (int)t,
                           (int)e->nb_tensors - 1);
        if (e->tensors[t].output_index != i)
            return invalid("output %d is tensor %d ('%s'), whose output index "
                           "is %d",
                           (int)i, (int)t, tname(e, t), (int)e->tensors[t].output_index);
    }
    return PRT_OK;
}

/* What the tensor is: its name, dtype, format and rank, and dims that are
 * nodes of the program. */
static prt_status validate_tensor_kind(const prt_engine *e, int32_t i)
{
    const eng_tensor *t = &e->tensors[i];
    const char *n = t->name;
    if (!n)
        return invalid("tensor %d has no name", (int)i);
    if (t->dtype < 0 || t->dtype >= PRT_DTYPE_COUNT)
        return invalid("tensor %d ('%s'): dtype %d out of range", (int)i, n,
                       (int)t->dtype);
    if (t->format < 0 || t->format >= PRT_FORMAT_COUNT)
        return invalid("tensor %d ('%s'): format %d out of range", (int)i, n,
                       (int)t->format);
    if (t->nb_dims < 0 || t->nb_dims > PRT_MAX_DIMS)
        return invalid("tensor %d ('%s'): rank %d outside 0..%d", (int)i, n,
                       (int)t->nb_dims, PRT_MAX_DIMS);
    /* Where the builder gives CHW8 (plugin.h): only CPU kernels read it. */
    if (t->format == PRT_FORMAT_CHW8 &&
        (t->nb_dims < 3 || t->dtype != PRT_FLOAT32 || t->input_index != -1 ||
         t->output_index != -1 || t->const_offset >= 0 || e->device != PRT_DEVICE_CPU))
        return invalid("tensor %d ('%s'): format CHW8 needs a float32 tensor of rank 3 "
                       "or more inside a CPU engine (not an input, output or constant)",
                       (int)i, n);
    for (int32_t d = 0; d < t->nb_dims; d++)
        if (t->dim_expr[d] < 0 || t->dim_expr[d] >= e->exprs.nb_nodes)
            return invalid("tensor %d ('%s'): dim %d is expression %d, "
                           "outside 0..%d",
                           (int)i, n, (int)d, (int)t->dim_expr[d],
                           (int)e->exprs.nb_nodes - 1);
    return PRT_OK;
}

/* Where the tensor's values come from. Every tensor has exactly one
 * source: the user, the engine's weights, or one layer. */
static prt_status validate_tensor_source(const prt_engine *e, int32_t i)
{
    const eng_tensor *t = &e->tensors[i];
    const char *n = t->name;
    int is_const = t->const_offset >= 0;
    if (t->input_index != -1 && (t->input_index < 0 || t->input_index >= e->nb_inputs ||
                                 e->input_tensors[t->input_index] != i))
        return invalid("tensor %d ('%s'): input index %d does not match the "
                       "input list",
                       (int)i, n, (int)t->input_index);
    if (t->output_index != -1 &&
        (t->output_index < 0 || t->output_index >= e->nb_outputs ||
         e->output_tensors[t->output_index] != i))
        return invalid("tensor %d ('%s'): output index %d does not match the "
                       "output list",
                       (int)i, n, (int)t->output_index);
    if (t->input_index >= 0 && t->output_index >= 0)
        return invalid("tensor %d ('%s') is both a network input and an output", (int)i,
                       n);
    if (t->producer < -1 || t->producer >= e->nb_layers)
        return invalid("tensor %d ('%s'): producer %d outside -1..%d", (int)i, n,
                       (int)t->producer, (int)e->nb_layers - 1);
    if (t->const_offset < -1)
        return invalid("tensor %d ('%s'): constant offset %lld", (int)i, n,
                       (long long)t->const_offset);
    if ((t->producer == -1) != (t->input_index >= 0 || is_const) ||
        (is_const && (t->input_index >= 0 || t->output_index >= 0)))
        return invalid("tensor %d ('%s'): %s", (int)i, n,
                       t->producer == -1 ? "has no producer but is neither a "
                                           "network input nor a constant"
                                         : "has a producer and another source");
    return PRT_OK;
}

/* A constant's bytes: inside the weights, where contexts read them in
 * place. */
static prt_status validate_tensor_constant(const prt_engine *e, int32_t i)
{
    const eng_tensor *t = &e->tensors[i];
    const char *n = t->name;
    int64_t end;
    if (t->const_offset < 0)
        return PRT_OK;
    if (t->offset != -1 || !base_add_i64(t->const_offset, t->max_bytes, &end) ||
        end > e->weights_size)
        return invalid("tensor %d ('%s'): constant bytes [%lld, +%lld) exceed "
                       "the %lld bytes of weights",
                       (int)i, n, (long long)t->const_offset, (long long)t->max_bytes,
                       (long long)e->weights_size);
    /* Contexts read constants in place, as typed elements. */
    if (t->const_offset % ENG_WEIGHTS_ALIGN != 0)
        return invalid("tensor %d ('%s'): constant offset %lld is not a "
                       "multiple of %d, the weights' alignment",
                       (int)i, n, (long long)t->const_offset, ENG_WEIGHTS_ALIGN);
    return PRT_OK;
}

/* A size tensor: a 0-D integer layer output, the only one with its size
 * id (size_seen counts the ids). */
static prt_status validate_tensor_size(const prt_engine *e, int32_t i, uint8_t *size_seen)
{
    const eng_tensor *t = &e->tensors[i];
    const char *n = t->name;
    if (t->size_id == -1)
        return PRT_OK;
    if (t->size_id < 0 || t->size_id >= e->nb_sizes)
        return invalid("tensor %d ('%s'): size id %d outside 0..%d", (int)i, n,
                       (int)t->size_id, (int)e->nb_sizes - 1);
    if (size_seen[t->size_id]++)
        return invalid("tensor %d ('%s'): size id %d is used twice", (int)i, n,
                       (int)t->size_id);
    if (t->nb_dims != 0 || (t->dtype != PRT_INT32 && t->dtype != PRT_INT64) ||
        t->producer < 0)
        return invalid("tensor %d ('%s'): a size tensor must be a 0-D "
                       "int32/int64 layer output",
                       (int)i, n);
    return PRT_OK;
}

/* The tensor's memory at run time: user memory for inputs and outputs, the
 * weights for constants, an aligned slot inside the arena for the rest. */
static prt_status validate_tensor_memory(const prt_engine *e, int32_t i)
{
    const eng_tensor *t = &e->tensors[i];
    const char *n = t->name;
    int is_io = t->input_index >= 0 || t->output_index >= 0;
    int is_const = t->const_offset >= 0;
    int64_t end;
    if (t->max_bytes < 0)
        return invalid("tensor %d ('%s'): negative max bytes %lld", (int)i, n,
                       (long long)t->max_bytes);
    if (t->offset < -1)
        return invalid("tensor %d ('%s'): arena offset %lld", (int)i, n,
                       (long long)t->offset);
    if (is_io && t->offset != -1)
        return invalid("tensor %d ('%s') is an input or output but has arena "
                       "offset %lld",
                       (int)i, n, (long long)t->offset);
    /* Everything else lives in the arena: the runtime needs its memory. */
    if (!is_io && !is_const && t->offset < 0)
        return invalid("tensor %d ('%s') has no memory: not an input, output or "
                       "constant, and no arena offset",
                       (int)i, n);
    if (t->offset < 0)
        return PRT_OK;
    if (!base_add_i64(t->offset, t->max_bytes, &end) || end > e->arena_size)
        return invalid("tensor %d ('%s'): arena bytes [%lld, +%lld) exceed "
                       "the arena of %lld bytes",
                       (int)i, n, (long long)t->offset, (long long)t->max_bytes,
                       (long long)e->arena_size);
    /* Kernels and plugins access the tensor as typed elements. */
    if (t->offset % (int64_t)prt_dtype_size(t->dtype) != 0)
        return invalid("tensor %d ('%s'): arena offset %lld is misaligned "
                       "for its %s elements",
                       (int)i, n, (long long)t->offset, prt_dtype_name(t->dtype));
    if (t->offset % ENG_ARENA_ALIGN != 0)
        return invalid("tensor %d ('%s'): arena offset %lld is not a "
                       "multiple of %d, the arena's alignment",
                       (int)i, n, (long long)t->offset, ENG_ARENA_ALIGN);
    return PRT_OK;
}

/* A quantized tensor (QNTZ): the checks that need its dims, as the builder
 * makes them (base/quant.h); a per-channel axis along a dim that is not a
 * constant could index past the scales. */
static prt_status validate_tensor_quant(const prt_engine *e, int32_t i)
{
    const eng_tensor *t = &e->tensors[i];
    int64_t axis_dim = -1;
    char what[160];
    if (t->quant.d.kind == PRT_QUANT_NONE)
        return PRT_OK;
    snprintf(what, sizeof what, "tensor %d ('%s')", (int)i, t->name);
    if (t->quant.d.kind == PRT_QUANT_PER_CHANNEL && t->quant.d.axis < t->nb_dims) {
        const expr_node *n = &e->exprs.nodes[t->dim_expr[t->quant.d.axis]];
        if (n->kind != EXPR_CONST)
            return invalid("%s: per-channel quantization along dim %d, which is not "
                           "static",
                           what, (int)t->quant.d.axis);
        axis_dim = n->imm;
    }
    if (base_quant_check_tensor(&t->quant, t->dtype, t->nb_dims, axis_dim, what))
        return invalid("%s", prt_last_error());
    return PRT_OK;
}

/* Tensor i: what it is first (every later message names it, and the
 * source check reads the input and output lists only through indices it
 * has bounded), then its source, its constant bytes, its size id and its
 * memory. The first fault found is the one reported. */
static prt_status validate_tensor(const prt_engine *e, int32_t i, uint8_t *size_seen)
{
    prt_status st;
    if ((st = validate_tensor_kind(e, i)) || (st = validate_tensor_source(e, i)) ||
        (st = validate_tensor_constant(e, i)) ||
        (st = validate_tensor_size(e, i, size_seen)) ||
        (st = validate_tensor_quant(e, i)))
        return st;
    return validate_tensor_memory(e, i);
}

/* I/O names are how users address tensors; two alike would be ambiguous. */
static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static prt_status validate_io_names(const prt_engine *e)
{
    int32_t n = e->nb_inputs + e->nb_outputs;
    const char **names;
    if (n < 2)
        return PRT_OK;
    names = base_calloc((size_t)n, sizeof *names);
    if (!names)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory validating an engine");
    for (int32_t i = 0; i < e->nb_inputs; i++)
        names[i] = tname(e, e->input_tensors[i]);
    for (int32_t i = 0; i < e->nb_outputs; i++)
        names[e->nb_inputs + i] = tname(e, e->output_tensors[i]);
    qsort(names, (size_t)n, sizeof *names, cmp_names);
    for (int32_t i = 1; i < n; i++)
        if (strcmp(names[i - 1], names[i]) == 0) {
            prt_status st = invalid("two inputs or outputs are named '%s'", names[i]);
            base_free(names);
            return st;
        }
    base_free(names);
    return PRT_OK;
}

static prt_status validate_field(const eng_layer *l, int32_t li, int32_t fi)
{
    const prt_field *f = &l->fields[fi];
    size_t es = base_field_type_size(f->type);
    int64_t bytes;
    if (!f->name)
        return invalid("layer %d ('%s') field %d has no name", (int)li, l->name, (int)fi);
    if (es == 0)
        return invalid("layer %d ('%s') field '%s': unknown type %d", (int)li, l->name,
                       f->name, (int)f->type);
    if (f->length < 0 || !base_mul_i64(f->length, (int64_t)es, &bytes))
        return invalid("layer %d ('%s') field '%s': length %lld", (int)li, l->name,
                       f->name, (long long)f->length);
    if (f->length > 0 && !f->data)
        return invalid("layer %d ('%s') field '%s' has no data", (int)li, l->name,
                       f->name);
    if (f->type == PRT_FIELD_DIMS)
        for (int64_t k = 0; k < f->length; k++) {
            prt_dims d;
            memcpy(&d, (const uint8_t *)f->data + (size_t)k * sizeof d, sizeof d);
            if (d.nb_dims < 0 || d.nb_dims > PRT_MAX_DIMS)
                return invalid("layer %d ('%s') field '%s' element %lld: rank "
                               "%d outside 0..%d",
                               (int)li, l->name, f->name, (long long)k, (int)d.nb_dims,
                               PRT_MAX_DIMS);
        }
    return PRT_OK;
}

static prt_status validate_layer(const prt_engine *e, int32_t li, uint8_t *produced)
{
    const eng_layer *l = &e->layers[li];
    const char *n = l->name;
    prt_status st;
    if (!n || !l->plugin_namespace || !l->plugin_name || !l->plugin_version ||
        !l->library)
        return invalid("layer %d ('%s'): a name, plugin key or library is "
                       "missing",
                       (int)li, n ? n : "?");
    if (l->device != PRT_DEVICE_CPU && l->device != PRT_DEVICE_CUDA)
        return invalid("layer %d ('%s'): unknown device %d", (int)li, n, (int)l->device);
    /* A layer of another device than the engine's can only be a CPU layer
     * of a GPU engine (CPU fallback): a CPU engine has no device memory
     * for a GPU layer. */
    if (l->device != e->device && l->device != PRT_DEVICE_CPU)
        return invalid("layer %d ('%s') runs on %s in an engine for %s", (int)li, n,
                       dev_name(l->device), dev_name(e->device));
    if (l->nb_inputs < 0 || l->nb_outputs < 0 || l->nb_fields < 0 ||
        (l->nb_inputs && !l->inputs) ||
        (l->nb_outputs && (!l->outputs || !l->alias_input || !l->alias_copy)) ||
        (l->nb_fields && !l->fields))
        return invalid("layer %d ('%s'): bad counts or missing arrays", (int)li, n);
    if (l->workspace < 0 || l->workspace > e->workspace_size)
        return invalid("layer %d ('%s'): workspace %lld outside 0..%lld", (int)li, n,
                       (long long)l->workspace, (long long)e->workspace_size);
    for (int32_t k = 0; k < l->nb_inputs; k++) {
        int32_t t = l->inputs[k];
        if (t < 0 || t >= e->nb_tensors)
            return invalid("layer %d ('%s') input %d is tensor %d, outside "
                           "0..%d",
                           (int)li, n, (int)k, (int)t, (int)e->nb_tensors - 1);
        /* Topological order; producer -1 is a network input (checked per
         * tensor). */
        if (e->tensors[t].producer >= li)
            return invalid("layer %d ('%s') input %d reads tensor %d ('%s'), "
                           "produced by layer %d, not an earlier one",
                           (int)li, n, (int)k, (int)t, tname(e, t),
                           (int)e->tensors[t].producer);
    }
    for (int32_t k = 0; k < l->nb_outputs; k++) {
        int32_t t = l->outputs[k];
        int32_t a = l->alias_input[k];
        if (t < 0 || t >= e->nb_tensors)
            return invalid("layer %d ('%s') output %d is tensor %d, outside "
                           "0..%d",
                           (int)li, n, (int)k, (int)t, (int)e->nb_tensors - 1);
        if (e->tensors[t].producer != li || produced[t])
            return invalid("layer %d ('%s') output %d is tensor %d ('%s'), "
                           "whose producer is %d%s",
                           (int)li, n, (int)k, (int)t, tname(e, t),
                           (int)e->tensors[t].producer,
                           produced[t] ? " and which is listed twice" : "");
        produced[t] = 1;
        if (a < -1 || a >= l->nb_inputs)
            return invalid("layer %d ('%s') output %d aliases input %d, outside "
                           "-1..%d",
                           (int)li, n, (int)k, (int)a, (int)l->nb_inputs - 1);
        if (l->alias_copy[k] > 1 || (a < 0 && l->alias_copy[k]))
            return invalid("layer %d ('%s') output %d: alias copy flag %d", (int)li, n,
                           (int)k, (int)l->alias_copy[k]);
        if (a >= 0) {
            /* In place: the output lives in the input's memory, so it must
             * be the same size; with hash-consed expressions, equal shapes
             * are equal node ids. Other dims only for a view (op_is_view:
             * output 0 as input 0's LINEAR bytes, never a copy), which
             * engine_check_layers confirms with the layer's op; the run
             * checks the two sizes agree before it moves a byte. */
            const eng_tensor *to = &e->tensors[t];
            const eng_tensor *ti = &e->tensors[l->inputs[a]];
            const int same = engine_same_dims(to, ti);
            const int view = k == 0 && a == 0 && !l->alias_copy[k] &&
                             to->format == PRT_FORMAT_LINEAR &&
                             ti->format == PRT_FORMAT_LINEAR;
            if (to->dtype != ti->dtype || (!same && !view))
                return invalid("layer %d ('%s') output %d ('%s') aliases input "
                               "%d ('%s') of another dtype or shape",
                               (int)li, n, (int)k, to->name, (int)a, ti->name);
        }
    }
    for (int32_t f = 0; f < l->nb_fields; f++)
        if ((st = validate_field(l, li, f)))
            return st;
    return PRT_OK;
}

/* A shape input's value bounds: the same count in every profile, matching
 * a 1-D int32/int64/float32 input of that static length; min <= opt <= max. */
static prt_status validate_shape_values(const prt_engine *e, int32_t p, int32_t i)
{
    size_t k = (size_t)p * (size_t)e->nb_inputs + (size_t)i;
    const eng_tensor *t = &e->tensors[e->input_tensors[i]];
    const prt_dims *mn = &e->prof_vmin[k], *op = &e->prof_vopt[k], *mx = &e->prof_vmax[k];
    int32_t n = mn->nb_dims;
    if (op->nb_dims != n || mx->nb_dims != n || n != e->prof_vmin[i].nb_dims)
        return invalid("profile %d input '%s': value bounds of different counts", (int)p,
                       t->name);
    if (n == 0)
        return PRT_OK;
    if ((t->dtype != PRT_INT32 && t->dtype != PRT_INT64 && t->dtype != PRT_FLOAT32) ||
        t->nb_dims > 1 || (t->nb_dims == 0 && n != 1) ||
        (t->nb_dims == 1 && (e->exprs.nodes[t->dim_expr[0]].kind != EXPR_CONST ||
                             e->exprs.nodes[t->dim_expr[0]].imm != n)))
        return invalid("input '%s' has %d value bounds but is not a 0-D or 1-D "
                       "int32/int64/float32 input of that static length",
                       t->name, (int)n);
    for (int32_t v = 0; v < n; v++)
        if (t->dtype == PRT_FLOAT32 &&
            (isnan(base_key_f32(mn->d[v])) || isnan(base_key_f32(mx->d[v]))))
            return invalid("profile %d input '%s' value %d: bounds %lld..%lld are no "
                           "float32 keys",
                           (int)p, t->name, (int)v, (long long)mn->d[v],
                           (long long)mx->d[v]);
        else if (mn->d[v] > op->d[v] || op->d[v] > mx->d[v])
            return invalid("profile %d input '%s' value %d: min %lld, opt %lld, max "
                           "%lld out of order",
                           (int)p, t->name, (int)v, (long long)mn->d[v],
                           (long long)op->d[v], (long long)mx->d[v]);
    return PRT_OK;
}

static prt_status validate_profiles(const prt_engine *e)
{
    /* An input's dims are what the user sets: dim d of input i is the
     * symbol (i, d), or a constant when static. Anything else would let the
     * runtime describe user memory with a shape the user did not give. */
    for (int32_t i = 0; i < e->nb_inputs; i++) {
        const eng_tensor *t = &e->tensors[e->input_tensors[i]];
        for (int32_t d = 0; d < t->nb_dims; d++) {
            const expr_node *x = &e->exprs.nodes[t->dim_expr[d]];
            if (x->kind != EXPR_CONST &&
                !(x->kind == EXPR_INPUT_DIM && x->a == i && x->b == d))
                return invalid("input %d ('%s') dim %d is expression %d, not "
                               "a constant or that input's own dim",
                               (int)i, t->name, (int)d, (int)t->dim_expr[d]);
        }
    }
    for (int32_t p = 0; p < e->nb_profiles; p++)
        for (int32_t i = 0; i < e->nb_inputs; i++) {
            size_t k = (size_t)p * (size_t)e->nb_inputs + (size_t)i;
            const eng_tensor *t = &e->tensors[e->input_tensors[i]];
            const prt_dims *mn = &e->prof_min[k];
            const prt_dims *op = &e->prof_opt[k];
            const prt_dims *mx = &e->prof_max[k];
            prt_status st = validate_shape_values(e, p, i);
            if (st)
                return st;
            if (mn->nb_dims != t->nb_dims || op->nb_dims != t->nb_dims ||
                mx->nb_dims != t->nb_dims)
                return invalid("profile %d input '%s': ranks %d/%d/%d, the "
                               "input has %d",
                               (int)p, t->name, (int)mn->nb_dims, (int)op->nb_dims,
                               (int)mx->nb_dims, (int)t->nb_dims);
            for (int32_t d = 0; d < t->nb_dims; d++) {
                const expr_node *x = &e->exprs.nodes[t->dim_expr[d]];
                if (mn->d[d] < 0 || mn->d[d] > op->d[d] || op->d[d] > mx->d[d])
                    return invalid("profile %d input '%s' dim %d: min %lld, "
                                   "opt %lld, max %lld are not 0 <= min <= opt "
                                   "<= max",
                                   (int)p, t->name, (int)d, (long long)mn->d[d],
                                   (long long)op->d[d], (long long)mx->d[d]);
                if (x->kind == EXPR_CONST && (mn->d[d] != x->imm || mx->d[d] != x->imm))
                    return invalid("profile %d input '%s' dim %d: static dim "
                                   "%lld, but the profile gives %lld..%lld",
                                   (int)p, t->name, (int)d, (long long)x->imm,
                                   (long long)mn->d[d], (long long)mx->d[d]);
            }
        }
    return PRT_OK;
}

/* Memory sizes against the shapes the program allows. The runtime places a
 * tensor in max_bytes (arena slot, staging buffer) and lets plugins write it
 * at the shapes it evaluates, so a file that understates max_bytes would
 * turn into writes out of bounds. Recompute what the builder computes: per
 * profile, sound bounds of every node (expr_program_bounds), and require
 * every dim's lower bound >= 0 and max_bytes >= dtype size * the product of
 * the upper bounds. need[t] receives the largest such product over the
 * profiles, for validate_memory_plan. */
static prt_status validate_bounds(const prt_engine *e, int64_t *need)
{
    size_t n = (size_t)e->exprs.nb_nodes;
    int64_t *lo = base_malloc(sizeof(int64_t) * (n ? 3 * n : 1));
    int64_t *opt = lo + n, *hi = lo + 2 * n;
    prt_status st = PRT_OK;
    if (!lo)
        return base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory validating an engine");
    for (int32_t i = 0; i < e->nb_tensors; i++)
        need[i] = 0;
    for (int32_t p = 0; p < e->nb_profiles && !st; p++) {
        size_t k = (size_t)p * (size_t)e->nb_inputs;
        expr_profile prof = {e->nb_inputs,    e->prof_min + k,  e->prof_opt + k,
                             e->prof_max + k, e->prof_vmin + k, e->prof_vopt + k,
                             e->prof_vmax + k};
        st = expr_program_bounds(&e->exprs, &prof, lo, opt, hi);
        if (st) {
            if (st != PRT_ERR_OUT_OF_MEMORY)
                st = base_error_prefix(PRT_ERR_MALFORMED, "invalid engine: profile %d",
                                       (int)p);
            break;
        }
        for (int32_t i = 0; i < e->nb_tensors && !st; i++) {
            const eng_tensor *t = &e->tensors[i];
            int64_t bytes = (int64_t)prt_dtype_size(t->dtype);
            for (int32_t d = 0; d < t->nb_dims && !st; d++) {
                int32_t x = t->dim_expr[d];
                int64_t h = hi[x];
                if (t->format == PRT_FORMAT_CHW8 && d == 1 && h >= 0 && h < INT64_MAX - 7)
                    h = (h + 7) / 8 * 8;
                if (lo[x] < 0)
                    st = invalid("tensor %d ('%s') dim %d can be negative (down "
                                 "to %lld) in profile %d",
                                 (int)i, t->name, (int)d, (long long)lo[x], (int)p);
                else if (!base_mul_i64(bytes, h, &bytes))
                    st = invalid("tensor %d ('%s') is too large to address in "
                                 "profile %d",
                                 (int)i, t->name, (int)p);
            }
            if (!st && t->max_bytes < bytes)
                st = invalid("tensor %d ('%s'): max bytes %lld, but profile %d "
                             "allows %lld",
                             (int)i, t->name, (long long)t->max_bytes, (int)p,
                             (long long)bytes);
            if (!st && bytes > need[i])
                need[i] = bytes;
        }
    }
    base_free(lo);
    return st;
}

/* The memory a context reserves, against what the shapes can need (need[t]
 * from validate_bounds): a file that claims more would make every context
 * allocate it. Each tensor's max_bytes is exactly its need, as the builder
 * computes it; the arena holds at most every arena tensor side by side, each
 * rounded up to ENG_ARENA_ALIGN, which is what a plan that shares nothing
 * takes; the workspace is the largest layer's (the layers' own claims are
 * checked against their plugins once those exist: engine_check_layers). */
static prt_status validate_memory_plan(const prt_engine *e, const int64_t *need)
{
    int64_t arena_max = 0, ws_max = 0;
    for (int32_t i = 0; i < e->nb_tensors; i++) {
        const eng_tensor *t = &e->tensors[i];
        int64_t slot;
        if (t->max_bytes > need[i])
            return invalid("tensor %d ('%s'): max bytes %lld, but its shapes "
                           "need at most %lld in every profile",
                           (int)i, t->name, (long long)t->max_bytes, (long long)need[i]);
        if (t->offset < 0)
            continue;
        /* Saturating: a sum past INT64_MAX bounds nothing further. */
        if (!base_add_i64(t->max_bytes, ENG_ARENA_ALIGN - 1, &slot) ||
            !base_add_i64(arena_max, slot / ENG_ARENA_ALIGN * ENG_ARENA_ALIGN,
                          &arena_max))
            arena_max = INT64_MAX;
    }
    if (e->arena_size > arena_max)
        return invalid("arena size %lld, but its tensors need at most %lld "
                       "bytes (each rounded up to %d)",
                       (long long)e->arena_size, (long long)arena_max, ENG_ARENA_ALIGN);
    for (int32_t l = 0; l < e->nb_layers; l++)
        if (e->layers[l].workspace > ws_max)
            ws_max = e->layers[l].workspace;
    if (e->workspace_size != ws_max)
        return invalid("workspace size %lld, but the largest layer workspace "
                       "is %lld",
                       (long long)e->workspace_size, (long long)ws_max);
    return PRT_OK;
}

/* Kernel layers: each kernel names a distinct CUDA layer that points back
 * at it, and what it says checks out against that layer (kernel_validate). */
static prt_status validate_kernels(const prt_engine *e)
{
    int32_t ranks[256];
    prt_status st = PRT_OK;
    if (e->nb_kernels < 0 || (e->nb_kernels > 0 && !e->kernels))
        return invalid("%d kernels", (int)e->nb_kernels);
    for (int32_t i = 0; i < e->nb_kernels && !st; i++) {
        const eng_kernel *k = &e->kernels[i];
        const eng_layer *l;
        kernel_io io;
        if (k->layer < 0 || k->layer >= e->nb_layers)
            return invalid("kernel %d names layer %d, of %d", (int)i, (int)k->layer,
                           (int)e->nb_layers);
        l = &e->layers[k->layer];
        if (l->kernel != k)
            return invalid("kernel %d names layer %d ('%s'), which has another", (int)i,
                           (int)k->layer, l->name);
        if (l->device != PRT_DEVICE_CUDA || e->device != PRT_DEVICE_CUDA)
            return invalid("layer %d ('%s') is a kernel layer in an engine for the CPU",
                           (int)k->layer, l->name);
        if (l->nb_inputs + l->nb_outputs > 256)
            return invalid("kernel layer '%s' has %d tensors", l->name,
                           (int)(l->nb_inputs + l->nb_outputs));
        for (int32_t t = 0; t < l->nb_inputs; t++)
            ranks[t] = e->tensors[l->inputs[t]].nb_dims;
        for (int32_t t = 0; t < l->nb_outputs; t++)
            ranks[l->nb_inputs + t] = e->tensors[l->outputs[t]].nb_dims;
        io.nb_in = l->nb_inputs;
        io.nb_out = l->nb_outputs;
        io.ranks = ranks;
        st = kernel_validate(k, l->name, &io);
    }
    for (int32_t li = 0; li < e->nb_layers && !st; li++) {
        const eng_kernel *k = e->layers[li].kernel;
        if (k && (k < e->kernels || k >= e->kernels + e->nb_kernels || k->layer != li))
            return invalid("layer %d ('%s') points at a kernel that is not its", (int)li,
                           e->layers[li].name);
    }
    return st;
}

prt_status engine_validate(const prt_engine *e)
{
    uint8_t *seen = NULL;
    int32_t *ranks = NULL;
    int64_t *need = NULL;
    prt_status st;
    if (!e)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "engine_validate: NULL engine");
    if ((st = validate_counts(e)) || (st = validate_io_lists(e)))
        return st;

    /* One byte per tensor: size ids seen, then tensors produced. */
    seen = base_calloc((size_t)e->nb_tensors, 1);
    ranks = base_calloc((size_t)e->nb_inputs * 2 + 1, sizeof *ranks);
    need = base_calloc((size_t)e->nb_tensors + 1, sizeof *need);
    if (!seen || !ranks || !need) {
        st = base_error(PRT_ERR_OUT_OF_MEMORY, "out of memory validating an engine");
        goto done;
    }
    for (int32_t i = 0; i < e->nb_tensors && !st; i++)
        st = validate_tensor(e, i, seen);
    if (st)
        goto done;
    for (int32_t s = 0; s < e->nb_sizes; s++)
        if (!seen[s]) {
            st = invalid("no tensor is size tensor %d", (int)s);
            goto done;
        }

    /* The expression program before anything evaluates it. */
    for (int32_t i = 0; i < e->nb_inputs; i++)
        ranks[i] = e->tensors[e->input_tensors[i]].nb_dims;
    /* Value counts of shape inputs (validate_profiles made them agree
     * across profiles); after the ranks in the same allocation. */
    for (int32_t i = 0; i < e->nb_inputs; i++)
        ranks[e->nb_inputs + i] = e->nb_profiles ? e->prof_vmin[i].nb_dims : 0;
    st = expr_program_validate(&e->exprs, e->nb_inputs, ranks, ranks + e->nb_inputs,
                               e->nb_sizes);
    if (st) {
        if (st != PRT_ERR_OUT_OF_MEMORY)
            st = base_error_prefix(PRT_ERR_MALFORMED, "invalid engine: expressions");
        goto done;
    }

    /* Exactly one SIZE node per size id (the builder makes one per size
     * tensor): the runtime checks a size's value against the upper bound
     * of its one node and treats node 0 as the node of a size that has
     * none. A missing node sends that check to whatever node 0's operand
     * field holds (unchecked on a leaf), a second node with another bound
     * lets a value through that the other node's users were not sized for. */
    memset(seen, 0, (size_t)e->nb_tensors);
    for (int32_t i = 0; i < e->exprs.nb_nodes; i++)
        if (e->exprs.nodes[i].kind == EXPR_SIZE && seen[e->exprs.nodes[i].imm]++) {
            st = invalid("size %lld has two expression nodes",
                         (long long)e->exprs.nodes[i].imm);
            goto done;
        }
    for (int32_t s = 0; s < e->nb_sizes; s++)
        if (!seen[s]) {
            st = invalid("size %d has no expression node", (int)s);
            goto done;
        }

    memset(seen, 0, (size_t)e->nb_tensors);
    for (int32_t l = 0; l < e->nb_layers && !st; l++)
        st = validate_layer(e, l, seen);
    if (st)
        goto done;
    for (int32_t i = 0; i < e->nb_tensors; i++)
        if (e->tensors[i].producer >= 0 && !seen[i]) {
            st = invalid("tensor %d ('%s') names layer %d as its producer, "
                         "which does not output it",
                         (int)i, tname(e, i), (int)e->tensors[i].producer);
            goto done;
        }
    if ((st = validate_profiles(e)) || (st = validate_bounds(e, need)) ||
        (st = validate_memory_plan(e, need)) || (st = validate_io_names(e)) ||
        (st = validate_kernels(e)) || (st = engine_validate_libraries(e)))
        goto done;
done:
    base_free(seen);
    base_free(ranks);
    base_free(need);
    return st;
}
