/*
 * The CUDA kernels of Split, Tile, Pad, Trilu, DepthToSpace, SpaceToDepth,
 * EyeLike, OneHot, GatherND, ScatterND and ScatterElements (ops.h): the
 * CPU kernel's checks (shared with it through ops_data.h), then the
 * launchers of move.cu, or strided copies (opk_copy).
 */
#include <string.h>

#include "ops/cuda/launch.h"
#include "ops/cuda/ops.h"
#include "ops/ops_data.h"

/* Up to OPK_MAX_CONCAT outputs in one launch (opk_split); more, each output
 * a strided copy of its part: [outer, len] at row stride. */
OPC_KERNEL(opc_split)
{
    const prt_dims *id = &in[0].dims;
    int64_t outer, inner, off = 0;
    int32_t axis = 0;
    prt_status st = split_check(o, in, nb_in, out, nb_out, NULL, &axis, &outer, &inner);
    (void)ws;
    if (st)
        return st;
    /* Up to OPK_MAX_CONCAT outputs: one launch for all. */
    if (nb_out <= OPK_MAX_CONCAT) {
        opk_split_args a;
        memset(&a, 0, sizeof a);
        a.esize = (int32_t)prt_dtype_size(dtype);
        a.nb = nb_out;
        a.x = x[0];
        a.outer = outer;
        a.row = id->d[axis] * inner;
        for (int32_t k = 0; k < nb_out; k++) {
            a.y[k] = y[k];
            a.len[k] = out[k].dims.d[axis] * inner;
            a.off[k] = off;
            off += a.len[k];
        }
        return opc_status(o, opk_split(&a, stream));
    }
    for (int32_t k = 0; k < nb_out; k++) {
        int64_t len = out[k].dims.d[axis] * inner, stride[2] = {id->d[axis] * inner, 1};
        prt_dims view = {2, {outer, len}};
        opk_bcast b;
        int err;
        if (outer * len == 0)
            continue;
        opk_bcast_init_strided(&b, &view, stride);
        err = opk_copy((int32_t)prt_dtype_size(dtype), &b, x[0], off, y[k], outer * len,
                       stream);
        if (err)
            return opc_status(o, err);
        off += len;
    }
    return PRT_OK;
}

/* The walk's dims and the input's strides. */
static void map_init(opk_map_args *a, int32_t dtype, const prt_dims *id,
                     const prt_dims *od, const void *x, void *y)
{
    int64_t s = 1;
    memset(a, 0, sizeof *a);
    a->esize = (int32_t)prt_dtype_size(dtype);
    a->rank = od->nb_dims;
    for (int32_t d = od->nb_dims - 1; d >= 0; d--) {
        a->idims[d] = id->d[d];
        a->odims[d] = od->d[d];
        a->istride[d] = s;
        s *= id->d[d];
    }
    a->x = x;
    a->y = y;
    a->n = base_volume(od);
}

OPC_KERNEL(opc_tile)
{
    opk_map_args a;
    prt_status st = tile_check(o, &in[0].dims, &out->dims);
    (void)nb_in, (void)nb_out, (void)ws;
    if (st)
        return st;
    if (out->dims.nb_dims == 0)
        return opc_status(o, opk_device_copy(y[0], x[0], prt_dtype_size(dtype), stream));
    map_init(&a, dtype, &in[0].dims, &out->dims, x[0], y[0]);
    a.mode = OPK_MAP_TILE;
    return opc_status(o, opk_map(&a, stream));
}

/* Pads from input 1 are device data the kernel reads (the output's dims,
 * from the same values as expressions, are what the host knows), unless
 * they are a shape input's values in host memory: then the host reads
 * them, as the CPU does. */
OPC_KERNEL(opc_pad)
{
    opk_map_args a;
    pad_plan pl;
    const void *host_pads = nb_in > 1 && prt_tensor_desc_on_host(&in[1]) ? x[1] : NULL;
    prt_status st = pad_plan_make(o, dtype, in, nb_in, &out->dims, host_pads, &pl);
    (void)nb_out, (void)ws;
    if (st)
        return st;
    if (out->dims.nb_dims == 0)
        return opc_status(o, opk_device_copy(y[0], x[0], prt_dtype_size(dtype), stream));
    map_init(&a, dtype, &in[0].dims, &out->dims, x[0], y[0]);
    a.mode = pl.mode;
    memcpy(a.begin, pl.begin, sizeof a.begin);
    if (!pl.pads_known) {
        a.pads = x[1];
        a.pads_dtype = in[1].dtype;
        a.nax = pl.nax;
        memcpy(a.ax, pl.ax, sizeof a.ax);
    }
    if (pl.fill_input >= 0)
        a.fill = x[pl.fill_input];
    else
        memcpy(&a.fill_bits, pl.fill, sizeof a.fill_bits);
    return opc_status(o, opk_map(&a, stream));
}

OPC_KERNEL(opc_trilu)
{
    const prt_dims *d = &in[0].dims;
    (void)out, (void)nb_out, (void)ws;
    if (d->nb_dims < 2)
        return op_fail(o, PRT_ERR_SHAPE, "the input has rank %d; Trilu needs 2 or more",
                       (int)d->nb_dims);
    return opc_status(
        o, opk_trilu((int32_t)prt_dtype_size(dtype), x[0], y[0], base_volume(d),
                     d->d[d->nb_dims - 2], d->d[d->nb_dims - 1], nb_in > 1 ? x[1] : NULL,
                     nb_in > 1 ? in[1].dtype : PRT_INT64, trilu_upper(o), stream));
}

/* DepthToSpace, SpaceToDepth: the 6-D walk as a strided copy. */
OPC_KERNEL(opc_depth_space)
{
    int64_t od[6], st[6];
    prt_dims view = {6, {0}};
    opk_bcast b;
    (void)nb_in, (void)out, (void)nb_out, (void)ws;
    if (base_volume(&in[0].dims) == 0)
        return PRT_OK;
    ds_view(o, &in[0].dims, od, st);
    memcpy(view.d, od, sizeof od);
    opk_bcast_init_strided(&b, &view, st);
    return opc_status(o, opk_copy((int32_t)prt_dtype_size(dtype), &b, x[0], 0, y[0],
                                  base_volume(&in[0].dims), stream));
}

OPC_KERNEL(opc_eye_like)
{
    uint8_t one[8];
    uint64_t bits;
    (void)dtype, (void)in, (void)nb_in, (void)nb_out, (void)x, (void)ws;
    if (out->dims.nb_dims != 2)
        return op_fail(o, PRT_ERR_SHAPE, "the output has rank %d, not 2",
                       (int)out->dims.nb_dims);
    eye_like_one(out->dtype, one);
    memcpy(&bits, one, sizeof bits);
    return opc_status(o, opk_eye((int32_t)prt_dtype_size(out->dtype), bits, y[0],
                                 out->dims.d[0], out->dims.d[1], eye_like_k(o), stream));
}

OPC_KERNEL(opc_one_hot)
{
    int64_t outer, depth, inner;
    prt_status st = oh_check(o, in, &out->dims, &outer, &depth, &inner);
    (void)dtype, (void)nb_in, (void)nb_out, (void)ws;
    if (st)
        return st;
    return opc_status(o,
                      opk_one_hot((int32_t)prt_dtype_size(out->dtype), x[0], in[0].dtype,
                                  x[1], y[0], outer, depth, inner, stream));
}

/* An index out of range gives zeros here (the CPU fails the run). */
OPC_KERNEL(opc_gather_nd)
{
    const prt_dims *dd = &in[0].dims, *id = &in[1].dims;
    opk_gather_nd_args a;
    int64_t s = 1;
    (void)nb_in, (void)out, (void)nb_out, (void)ws;
    memset(&a, 0, sizeof a);
    a.b = gnd_batch_dims(o);
    a.m = id->nb_dims ? (int32_t)id->d[id->nb_dims - 1] : 0;
    if (id->nb_dims < 1 || a.m < 1 || a.b + a.m > dd->nb_dims)
        return op_fail(o, PRT_ERR_SHAPE,
                       "indices' last dim (%d) does not suit data of rank %d", (int)a.m,
                       (int)dd->nb_dims);
    for (int32_t d = dd->nb_dims - 1; d >= 0; d--) {
        a.dims[d] = dd->d[d];
        a.strides[d] = s;
        s *= dd->d[d];
    }
    a.esize = (int32_t)prt_dtype_size(dtype);
    a.idx_dtype = in[1].dtype;
    a.per_batch = 1;
    for (int32_t d = a.b; d < dd->nb_dims; d++)
        a.per_batch *= dd->d[d];
    a.slice = a.strides[a.b + a.m - 1];
    a.tuples = 1;
    for (int32_t d = a.b; d < id->nb_dims - 1; d++)
        a.tuples *= id->d[d];
    a.n = base_volume(&out->dims);
    a.x = x[0];
    a.idx = x[1];
    a.y = y[0];
    return opc_status(o, opk_gather_nd(&a, stream));
}

/* An index out of range is skipped here (the CPU fails the run). */
OPC_KERNEL(opc_scatter)
{
    const prt_dims *dd = &in[0].dims, *id = &in[1].dims;
    opk_scatter_args a;
    int64_t s = 1;
    prt_status st;
    (void)nb_in, (void)out, (void)nb_out, (void)ws;
    memset(&a, 0, sizeof a);
    a.elements = scatter_is_elements(o);
    a.dtype = dtype;
    a.esize = (int32_t)prt_dtype_size(dtype);
    a.idx_dtype = in[1].dtype;
    a.red = scatter_reduction(o);
    a.rank = dd->nb_dims;
    for (int32_t d = dd->nb_dims - 1; d >= 0; d--) {
        a.ddims[d] = dd->d[d];
        a.dstride[d] = s;
        s *= dd->d[d];
    }
    a.n = base_volume(dd);
    a.x = x[0];
    a.idx = x[1];
    a.upd = x[2];
    a.y = y[0];
    if (a.elements) {
        st = scatter_axis(o, a.rank, &a.axis);
        if (st)
            return st;
        for (int32_t d = 0; d < id->nb_dims; d++)
            a.idims[d] = id->d[d];
        if (base_volume(id) == 0 && x[0] != y[0])
            return opc_status(
                o, opk_device_copy(y[0], x[0], (size_t)a.n * (size_t)a.esize, stream));
        if (base_volume(id) == 0)
            return PRT_OK;
    } else {
        a.m = id->nb_dims ? (int32_t)id->d[id->nb_dims - 1] : 0;
        if (a.m < 1 || a.m > dd->nb_dims)
            return op_fail(o, PRT_ERR_SHAPE,
                           "indices' last dim (%d) does not suit data of rank %d",
                           (int)a.m, (int)dd->nb_dims);
        a.slice = a.dstride[a.m - 1];
        a.tuples = base_volume(id) / a.m;
    }
    return opc_status(o, opk_scatter(&a, stream));
}

/* The count stays on the device: the runtime gives later layers the true
 * dims (they wait for the device: op_common.c's requires_host_dims). */
OPC_KERNEL(opc_nonzero)
{
    const prt_dims *d = &in[0].dims;
    opk_dims_arg a;
    int64_t n = base_volume(d);
    (void)nb_in, (void)nb_out, (void)ws;
    memset(&a, 0, sizeof a);
    a.rank = d->nb_dims ? d->nb_dims : 1; /* a scalar as [1] */
    for (int32_t q = 0; q < a.rank; q++)
        a.d[q] = d->nb_dims ? d->d[q] : 1;
    if (out[0].dims.nb_dims != 2 || out[0].dims.d[0] != a.rank || out[0].dims.d[1] < n)
        return op_fail(o, PRT_ERR_SHAPE,
                       "output 0 cannot hold the coordinates of %lld elements",
                       (long long)n);
    return opc_status(o, opk_nonzero(dtype, x[0], n, &a, y[0], y[1], stream));
}

/* A true entry past the axis' end is not selected (the CPU fails the run). */
OPC_KERNEL(opc_compress)
{
    int64_t outer, len, inner;
    int32_t axis;
    prt_status st = compress_geometry(o, &in[0].dims, &axis, &outer, &len, &inner);
    (void)nb_in, (void)nb_out, (void)ws;
    if (st)
        return st;
    if (out[0].dims.nb_dims < 1 ||
        out[0].dims.d[out[0].dims.nb_dims == 1 ? 0 : axis] <
            (base_volume(&in[1].dims) < len ? base_volume(&in[1].dims) : len))
        return op_fail(o, PRT_ERR_SHAPE, "output 0 cannot hold every selected slice");
    return opc_status(o, opk_compress((int32_t)prt_dtype_size(dtype), x[0], x[1],
                                      base_volume(&in[1].dims), len, outer, inner, y[0],
                                      y[1], stream));
}

/* The items sorted on the device (move.cu); K stays there. */
OPC_KERNEL(opc_unique)
{
    opk_unique_args u;
    prt_status st;
    (void)nb_in, (void)nb_out;
    memset(&u, 0, sizeof u);
    st = unique_plan(o, in, out, &u.m, &u.outer, &u.inner, &u.sorted);
    if (st)
        return st;
    if (u.m > 0 && !ws)
        return op_fail(o, PRT_ERR_MALFORMED, "needs its workspace");
    u.dtype = dtype;
    u.esize = (int32_t)prt_dtype_size(dtype);
    u.x = x[0];
    u.y = y[0];
    u.yi = y[1];
    u.yinv = y[2];
    u.ycnt = y[3];
    u.k = y[4];
    u.ws = ws;
    return opc_status(o, opk_unique(&u, stream));
}
