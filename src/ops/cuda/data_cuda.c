/*
 * The CUDA kernels of the data-movement ops (ops.h): the reshaping copies,
 * Transpose, Expand, Concat, Gather, GatherElements, Slice, Shape, Size,
 * ConstantOfShape and Range, each the CPU kernel's semantics through the
 * launchers of data.cu, ew.cu and kernels.cu.
 */
#include <string.h>

#include "ops/cuda/launch.h"
#include "ops/cuda/ops.h"
#include "ops/shape_ops.h"

/* Reshape, Squeeze, Unsqueeze: the volumes checked, one copy (none where
 * the builder gave the output the input's memory: op_is_view). */
OPC_KERNEL(opc_copy)
{
    int64_t n = base_volume(&in[0].dims);
    prt_status st = op_copy_check(o, in, out);
    if (st || x[0] == y[0])
        return st;
    return opc_status(
        o, opk_device_copy(y[0], x[0], prt_dtype_size(dtype) * (size_t)n, stream));
}

/* Flatten: its infer has fixed the output's dims; one copy (none in place). */
OPC_KERNEL(opc_flatten)
{
    if (x[0] == y[0])
        return PRT_OK;
    return opc_status(
        o, opk_device_copy(y[0], x[0],
                           prt_dtype_size(dtype) * (size_t)base_volume(&in[0].dims),
                           stream));
}

/* One thread per output element, reading its permuted source. */
OPC_KERNEL(opc_transpose)
{
    const prt_dims *id = &in[0].dims;
    int32_t perm[PRT_MAX_DIMS];
    int64_t istr[PRT_MAX_DIMS], od[PRT_MAX_DIMS], src[PRT_MAX_DIMS], stride = 1;
    prt_status st = tp_perm(o, id->nb_dims, perm);
    if (st)
        return st;
    for (int32_t k = id->nb_dims - 1; k >= 0; k--) {
        istr[k] = stride;
        stride *= id->d[k];
    }
    for (int32_t i = 0; i < id->nb_dims; i++) {
        od[i] = out->dims.d[i];
        src[i] = istr[perm[i]];
    }
    return opc_status(o, opk_transpose((int32_t)prt_dtype_size(dtype), x[0], y[0],
                                       id->nb_dims, od, src, base_volume(id), stream));
}

OPC_KERNEL(opc_expand)
{
    opk_bcast w;
    prt_status st = expand_check(o, &in[0].dims, &out->dims);
    if (st)
        return st;
    opk_bcast_init(&w, &out->dims, 1, &in[0].dims);
    return opc_status(o, opk_copy((int32_t)prt_dtype_size(dtype), &w, x[0], 0, y[0],
                                  base_volume(&out->dims), stream));
}

OPC_KERNEL(opc_concat)
{
    opk_concat_args a;
    int32_t axis = 0;
    int64_t inner = 1, off = 0;
    prt_status st = concat_axis(o, out->dims.nb_dims, &axis);
    if (st)
        return st;
    if (nb_in > OPK_MAX_CONCAT)
        return op_fail(o, PRT_ERR_UNSUPPORTED, "%d inputs on CUDA (at most %d)",
                       (int)nb_in, OPK_MAX_CONCAT);
    memset(&a, 0, sizeof a);
    a.esize = (int32_t)prt_dtype_size(dtype);
    a.nb = nb_in;
    a.outer = 1;
    for (int32_t d = 0; d < axis; d++)
        a.outer *= out->dims.d[d];
    for (int32_t d = axis + 1; d < out->dims.nb_dims; d++)
        inner *= out->dims.d[d];
    a.row = out->dims.d[axis] * inner;
    for (int32_t i = 0; i < nb_in; i++) {
        a.x[i] = x[i];
        a.len[i] = in[i].dims.d[axis] * inner;
        a.off[i] = off;
        off += a.len[i];
    }
    a.y = y[0];
    return opc_status(o, opk_concat(&a, stream));
}

/* An index out of range gives zeros here (the CPU fails the run). */
OPC_KERNEL(opc_gather)
{
    int32_t axis = 0;
    int64_t outer = 1, inner = 1;
    prt_status st = gather_axis(o, in[0].dims.nb_dims, in[1].dims.nb_dims, &axis);
    if (st)
        return st;
    for (int32_t i = 0; i < axis; i++)
        outer *= in[0].dims.d[i];
    for (int32_t i = axis + 1; i < in[0].dims.nb_dims; i++)
        inner *= in[0].dims.d[i];
    return opc_status(o, opk_gather((int32_t)prt_dtype_size(dtype), x[0], x[1],
                                    in[1].dtype, y[0], outer, in[0].dims.d[axis],
                                    base_volume(&in[1].dims), inner, stream));
}

/* An index out of range gives zeros here (the CPU fails the run). */
OPC_KERNEL(opc_gather_elements)
{
    opk_gather_elements_args a;
    prt_status st;
    memset(&a, 0, sizeof a);
    st = ge_axis(o, in[0].dims.nb_dims, in[1].dims.nb_dims, &a.axis);
    if (st)
        return st;
    a.esize = (int32_t)prt_dtype_size(dtype);
    a.idx_dtype = in[1].dtype;
    a.rank = in[0].dims.nb_dims;
    for (int32_t k = 0; k < a.rank; k++) {
        a.ddims[k] = in[0].dims.d[k];
        a.idims[k] = in[1].dims.d[k];
    }
    a.x = x[0];
    a.idx = x[1];
    a.y = y[0];
    a.n = base_volume(&in[1].dims);
    return opc_status(o, opk_gather_elements(&a, stream));
}

/* With fields, or with a shape input's values in host memory, the
 * parameters are the host's: a strided copy. */
static prt_status slice_on_host(const op_object *o, int32_t esize,
                                const prt_tensor_desc *in, int32_t nb_in,
                                const void *const *x, const prt_tensor_desc *out, void *y,
                                void *stream)
{
    const prt_dims *dd = &in[0].dims;
    const int32_t r = dd->nb_dims;
    int64_t start[PRT_MAX_DIMS], step[PRT_MAX_DIMS], stride[PRT_MAX_DIMS];
    int64_t off = 0, is = 1;
    opk_bcast b;
    prt_status st = slice_host_params(o, in, nb_in, x, out, start, step);
    if (st)
        return st;
    for (int32_t d = r - 1; d >= 0; d--) {
        off += start[d] * is;
        stride[d] = step[d] * is;
        is *= dd->d[d];
    }
    opk_bcast_init_strided(&b, &out->dims, stride);
    return opc_status(o,
                      opk_copy(esize, &b, x[0], off, y, base_volume(&out->dims), stream));
}

/* With inputs in device memory the parameters are device data, which each thread of the
 * kernel reads (the output dims come from the same values as expressions,
 * so the CPU's check that they agree has nothing to read here; a source
 * element outside the data gives 0 rather than a read out of bounds). */
OPC_KERNEL(opc_slice)
{
    const prt_dims *dd = &in[0].dims;
    const int32_t r = dd->nb_dims, esize = (int32_t)prt_dtype_size(dtype);
    int32_t cnt = nb_in > 1 ? (int32_t)base_volume(&in[1].dims) : 0;
    opk_slice_args a;
    if (nb_in == 2)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "needs starts and ends");
    if (cnt > SLICE_MAX)
        return op_fail(o, PRT_ERR_SHAPE, "more than %d starts", SLICE_MAX);
    for (int32_t k = 1; k < nb_in; k++)
        if (in[k].dims.nb_dims != 1 || in[k].dims.d[0] != cnt)
            return op_fail(o, PRT_ERR_SHAPE, "input %d must hold %d values", (int)k,
                           (int)cnt);
    if (out->dims.nb_dims != r)
        return op_fail(o, PRT_ERR_SHAPE, "the output has rank %d, the data %d",
                       (int)out->dims.nb_dims, (int)r);
    if (nb_in == 1)
        return slice_on_host(o, esize, in, nb_in, x, out, y[0], stream);
    if (prt_tensor_desc_on_host(
            &in[1])) { /* a shape input: every parameter on the host */
        for (int32_t k = 2; k < nb_in; k++)
            if (!prt_tensor_desc_on_host(&in[k]))
                return op_fail(o, PRT_ERR_UNSUPPORTED,
                               "starts is a shape input in host memory and input %d is "
                               "device data: give starts, ends, axes and steps alike",
                               (int)k);
        return slice_on_host(o, esize, in, nb_in, x, out, y[0], stream);
    }
    memset(&a, 0, sizeof a);
    a.esize = esize;
    a.rank = r;
    a.nb = cnt;
    a.vdtype = in[1].dtype;
    for (int32_t d = 0; d < r; d++) {
        a.ddims[d] = dd->d[d];
        a.odims[d] = out->dims.d[d];
    }
    a.x = x[0];
    a.starts = x[1];
    a.axes = nb_in > 3 ? x[3] : NULL;
    a.steps = nb_in > 4 ? x[4] : NULL;
    a.y = y[0];
    a.n = base_volume(&out->dims);
    return opc_status(o, opk_slice(&a, stream));
}

/* The dims are the host's: written by a kernel that takes them by value
 * (no copy from host memory, so a graph can capture it). */
OPC_KERNEL(opc_shape)
{
    int32_t b, e;
    shape_range(o, in[0].dims.nb_dims, &b, &e);
    return opc_status(o, opk_values(in[0].dims.d + b, e - b, y[0], stream));
}

OPC_KERNEL(opc_size)
{
    int64_t n = base_volume(&in[0].dims);
    return opc_status(o, opk_values(&n, 1, y[0], stream));
}

OPC_KERNEL(opc_constant_of_shape)
{
    uint8_t one[8];
    uint64_t pattern;
    cos_element(o, dtype, one);
    memcpy(&pattern, one, sizeof pattern); /* the low bytes first, as the kernel reads */
    return opc_status(o, opk_fill((int32_t)prt_dtype_size(dtype), pattern, y[0],
                                  base_volume(&out->dims), stream));
}

/* A Range parameter's value on the host: 0-D int32 or int64. */
static int64_t range_host_value(int32_t dtype, const void *p)
{
    return dtype == PRT_INT64 ? *(const int64_t *)p : *(const int32_t *)p;
}

/* start and delta are device data, read by the kernel, unless they are
 * shape inputs in host memory: then their values are kernel arguments. The
 * length is the output's, computed from the same values as an expression
 * (a delta of 0, which the CPU refuses, writes start throughout). */
OPC_KERNEL(opc_range)
{
    const int sh = prt_tensor_desc_on_host(&in[0]), dh = prt_tensor_desc_on_host(&in[2]);
    if (out->dims.nb_dims != 1)
        return op_fail(o, PRT_ERR_SHAPE, "the output has rank %d, not 1",
                       (int)out->dims.nb_dims);
    return opc_status(o, opk_range(dtype, sh ? NULL : x[0], dh ? NULL : x[2],
                                   sh ? range_host_value(dtype, x[0]) : 0,
                                   dh ? range_host_value(dtype, x[2]) : 0, y[0],
                                   out->dims.d[0], stream));
}
