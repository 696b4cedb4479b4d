/*
 * Concat (namespace "plugrt", version "1"), ONNX opset 13 semantics: 1 to 8
 * inputs of one dtype (any) and one rank >= 1, joined along `axis`.
 *
 * Field axis (int32, required by ONNX; default 0 here), in [-r, r-1]. The
 * other dims must agree: equal expressions, or a constant and a symbol (the
 * constant is taken; the run checks), or two symbols (the first is taken;
 * the run checks). Values: 1-D inputs whose values are all known give
 * their concatenation (Shape -> Gather -> Unsqueeze -> Concat builds a
 * Reshape's target).
 */
#include <string.h>

#include "base/parallel.h"
#include "ops/shape_ops.h"

typedef struct concat_op {
    op_object o;
    int32_t axis;
} concat_op;

static prt_status concat_parse(op_object *o, const op_fields *f)
{
    return op_field_i32(f, "axis", 0, &((concat_op *)o)->axis);
}

static int32_t concat_serialize(op_object *o, prt_field *ser)
{
    op_ser(&ser[0], "axis", PRT_FIELD_INT32, &((concat_op *)o)->axis, 1);
    return 1;
}

prt_status concat_axis(const op_object *o, int32_t r, int32_t *out)
{
    return op_axis(o, ((const concat_op *)o)->axis, r, 0, "inputs", out);
}

static prt_status concat_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                                prt_dim_exprs *out, prt_expr_builder *eb)
{
    int32_t axis;
    prt_status st = concat_axis(o, in[0].nb_dims, &axis);
    if (st)
        return st;
    *out = in[0];
    for (int32_t i = 1; i < nb_in; i++) {
        if (in[i].nb_dims != in[0].nb_dims)
            return op_fail(o, PRT_ERR_SHAPE, "input %d has rank %d, input 0 %d", (int)i,
                           (int)in[i].nb_dims, (int)in[0].nb_dims);
        for (int32_t d = 0; d < in[0].nb_dims; d++) {
            int64_t a, b;
            int ca = eb->is_constant(eb, out->d[d], &a);
            int cb = eb->is_constant(eb, in[i].d[d], &b);
            if (d == axis)
                out->d[d] = eb->operation(eb, PRT_DIM_SUM, out->d[d], in[i].d[d]);
            else if (ca && cb && a != b)
                return op_fail(o, PRT_ERR_SHAPE,
                               "input %d dim %d is %lld, input 0's is %lld", (int)i,
                               (int)d, (long long)b, (long long)a);
            else if (cb)
                out->d[d] = in[i].d[d];
        }
    }
    return PRT_OK;
}

static prt_status concat_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                               prt_dims *out)
{
    int32_t axis;
    prt_status st = concat_axis(o, in[0].nb_dims, &axis);
    if (st)
        return st;
    *out = in[0];
    for (int32_t i = 1; i < nb_in; i++) {
        if (in[i].nb_dims != in[0].nb_dims)
            return op_fail(o, PRT_ERR_SHAPE, "input %d has rank %d, input 0 %d", (int)i,
                           (int)in[i].nb_dims, (int)in[0].nb_dims);
        for (int32_t d = 0; d < in[0].nb_dims; d++)
            if (d == axis)
                out->d[d] += in[i].d[d];
            else if (in[i].d[d] != in[0].d[d])
                return op_fail(o, PRT_ERR_SHAPE,
                               "input %d dim %d is %lld, input 0's is %lld", (int)i,
                               (int)d, (long long)in[i].d[d], (long long)in[0].d[d]);
    }
    return PRT_OK;
}

static prt_status concat_values(op_object *o, const prt_dim_exprs *in_dims,
                                const prt_dim_exprs *in_values, int32_t nb_in,
                                const prt_dim_exprs *out_dims, prt_dim_exprs *out_values,
                                prt_expr_builder *eb)
{
    int32_t n = 0;
    (void)o, (void)out_dims, (void)eb;
    for (int32_t i = 0; i < nb_in; i++)
        if (in_dims[i].nb_dims != 1 || in_values[i].nb_dims < 0 ||
            n + in_values[i].nb_dims > PRT_MAX_DIMS)
            return PRT_OK;
        else
            for (int32_t k = 0; k < in_values[i].nb_dims; k++)
                out_values->d[n++] = in_values[i].d[k];
    out_values->nb_dims = n;
    return PRT_OK;
}

/* The copies of one Concat: piece p = b * nb_in + i is input i's b-th
 * run of n[i] elements, to offset b * row + off[i] of the output. */
typedef struct concat_job {
    uint8_t *y;
    const void *const *x;
    int32_t nb_in;
    size_t es;
    int64_t row;
    int64_t n[8], off[8];
} concat_job;

static void concat_pieces(void *arg, int64_t begin, int64_t end)
{
    const concat_job *j = arg;
    for (int64_t p = begin; p < end; p++) {
        int64_t b = p / j->nb_in;
        int32_t i = (int32_t)(p % j->nb_in);
        if (j->n[i] > 0)
            memcpy(j->y + (size_t)(b * j->row + j->off[i]) * j->es,
                   (const uint8_t *)j->x[i] + (size_t)(b * j->n[i]) * j->es,
                   (size_t)j->n[i] * j->es);
    }
}

static prt_status concat_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                             int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                             const void *const *x, void *const *ys, void *ws,
                             void *stream)
{
    int32_t axis = 0;
    int64_t outer = 1, inner = 1, off = 0, total;
    concat_job j = {ys[0], x, nb_in, prt_dtype_size(dtype), 0, {0}, {0}};
    (void)ws;
    concat_axis(o, out->dims.nb_dims, &axis);
    for (int32_t d = 0; d < axis; d++)
        outer *= out->dims.d[d];
    for (int32_t d = axis + 1; d < out->dims.nb_dims; d++)
        inner *= out->dims.d[d];
    j.row = out->dims.d[axis] * inner;
    for (int32_t i = 0; i < nb_in; i++) {
        j.n[i] = in[i].dims.d[axis] * inner;
        j.off[i] = off;
        off += j.n[i];
    }
    /* Pieces on the pool's threads when the copy is large (each chunk at
     * least ~64 KiB on average); small ones stay on this thread. */
    total = outer * j.row * (int64_t)j.es;
    if (total < (int64_t)1 << 17 || outer * nb_in < 2)
        concat_pieces(&j, 0, outer * nb_in);
    else
        base_parallel_for(outer * nb_in,
                          total / (outer * nb_in) >= 65536
                              ? 1
                              : 65536 / (total / (outer * nb_in) + 1) + 1,
                          concat_pieces, &j);
    return PRT_OK;
}

static const op_class concat_class = {
    .min_inputs = 1,
    .max_inputs = 8, /* the header's "1 to 8" (OP_MAX_INPUTS is 9 for QLinearConv) */
    .dtypes = OP_DT_ALL,
    .size = sizeof(concat_op),
    .alias_input = -1,
    .parse = concat_parse,
    .serialize = concat_serialize,
    .shapes = concat_shapes,
    .infer = concat_infer,
    .run = concat_run,
    .values = concat_values,
};

static const prt_field_schema concat_schema[] = {
    {"axis", PRT_FIELD_INT32, 1, "the axis to join along, default 0; -r to r-1"},
};

const prt_plugin_creator op_concat_creator =
    OP_CREATOR("Concat", concat_class, concat_schema, 1);
