/*
 * The CUDA kernels of the elementwise ops (ops.h): unary.c's, unary_math.c's,
 * binary.c's and compare.c's ops, Clip, Cast, Where and Dropout, each the CPU
 * kernel's semantics through the launchers of ew.cu and kernels.cu.
 */
#include "ops/cuda/launch.h"
#include "ops/cuda/ops.h"
#include "ops/ops_ew.h"

OPC_KERNEL(opc_unary)
{
    int64_t n = base_volume(&in[0].dims);
    int err;
    switch (o->cls->kind) {
    case UNARY_IDENTITY:
        err = opk_device_copy(y[0], x[0], prt_dtype_size(dtype) * (size_t)n, stream);
        break;
    case UNARY_RELU:
        err = opk_relu(dtype, x[0], y[0], n, stream);
        break;
    case UNARY_ABS:
        err = opk_unary(OPK_ABS, dtype, 0, 0, x[0], y[0], n, stream);
        break;
    case UNARY_NEG:
        err = opk_unary(OPK_NEG, dtype, 0, 0, x[0], y[0], n, stream);
        break;
    default:
        err = opk_unary(OPK_SIGN, dtype, 0, 0, x[0], y[0], n, stream);
        break;
    }
    return opc_status(o, err);
}

OPC_KERNEL(opc_unary_math)
{
    const um_op *u = (const um_op *)o;
    return opc_status(o, opk_unary_math(o->cls->kind, dtype, u->alpha, u->beta, u->gamma,
                                        u->approximate, x[0], y[0],
                                        base_volume(&in[0].dims), stream));
}

/* The launcher's kind for a row of binary.c (BIN_R_*). */
static int32_t bin_launch_kind(int32_t rk)
{
    static const int32_t k[] = {
        [BIN_R_ADD] = OPK_ADD, [BIN_R_SUB] = OPK_SUB,    [BIN_R_MUL] = OPK_MUL,
        [BIN_R_DIV] = OPK_DIV, [BIN_R_MOD] = OPK_MOD,    [BIN_R_FMOD] = OPK_FMOD,
        [BIN_R_MAX] = OPK_MAX, [BIN_R_MIN] = OPK_MIN,    [BIN_R_SHL] = OPK_SHL,
        [BIN_R_SHR] = OPK_SHR, [BIN_R_PRELU] = OPK_PRELU};
    return k[rk];
}

/* The same walk as the CPU's, one launch per input after the first, in
 * place as on the CPU, and Mean's division as a float function. An integer
 * Div or Mod by zero, which fails the CPU's run, gives 0 (a kernel cannot
 * fail the run). */
OPC_KERNEL(opc_binary)
{
    const int32_t kind = bin_launch_kind(bin_row_kind(o));
    const int64_t n = base_volume(&out->dims);
    prt_dims d[2] = {in[0].dims, nb_in > 1 ? in[1].dims : in[0].dims};
    opk_bcast b;
    int err;
    if (nb_in == 1) /* Max, Min, Sum, Mean of one input: itself */
        return opc_status(
            o, opk_device_copy(y[0], x[0], prt_dtype_size(dtype) * (size_t)n, stream));
    opk_bcast_init(&b, &out->dims, 2, d);
    err = opk_binary(kind, dtype, &b, x[0], x[1], y[0], n, stream);
    /* More inputs: y = y op x[k], each element read before it is written. */
    for (int32_t k = 2; k < nb_in && !err; k++) {
        d[0] = out->dims;
        d[1] = in[k].dims;
        opk_bcast_init(&b, &out->dims, 2, d);
        err = opk_binary(kind, dtype, &b, y[0], x[k], y[0], n, stream);
    }
    if (!err && o->cls->kind == BIN_MEAN)
        err = opk_unary_math(UM_DIVIDE, dtype, (float)nb_in, 0, 0, 0, y[0], y[0], n,
                             stream);
    return opc_status(o, err);
}

OPC_KERNEL(opc_compare)
{
    static const int32_t kinds[] = {[CMP_EQUAL] = OPK_EQUAL,
                                    [CMP_LESS] = OPK_LESS,
                                    [CMP_LE] = OPK_LESS_EQUAL,
                                    [CMP_GREATER] = OPK_GREATER,
                                    [CMP_GE] = OPK_GREATER_EQUAL,
                                    [CMP_AND] = OPK_AND,
                                    [CMP_OR] = OPK_OR,
                                    [CMP_XOR] = OPK_XOR,
                                    [CMP_NOT] = OPK_NOT,
                                    [CMP_ISNAN] = OPK_ISNAN,
                                    [CMP_ISINF] = OPK_ISINF};
    const cmp_op *c = (const cmp_op *)o;
    const int32_t kind = kinds[o->cls->kind];
    const int64_t n = base_volume(&out->dims);
    opk_bcast b;
    if (nb_in == 1)
        return opc_status(o, opk_unary(kind, dtype, c->detect_positive,
                                       c->detect_negative, x[0], y[0], n, stream));
    opk_bcast_init(&b, &out->dims, 2, (const prt_dims[2]){in[0].dims, in[1].dims});
    return opc_status(o, opk_binary(kind, dtype, &b, x[0], x[1], y[0], n, stream));
}

/* The bound inputs are device data: the kernel reads them. */
OPC_KERNEL(opc_clip)
{
    const clip_op *c = (const clip_op *)o;
    const void *bound[2] = {NULL, NULL};
    int64_t lo = 0, hi = 0;
    ew_int_range(dtype, &lo, &hi);
    for (int32_t k = 1; k < nb_in; k++)
        bound[clip_bound_of(c, k)] = x[k];
    return opc_status(o, opk_clip(dtype, x[0], y[0], base_volume(&in[0].dims), bound[0],
                                  bound[1], lo, hi, c->min, c->max, stream));
}

OPC_KERNEL(opc_cast)
{
    int64_t n = base_volume(&in[0].dims);
    if (out->dtype == dtype)
        return opc_status(
            o, opk_device_copy(y[0], x[0], prt_dtype_size(dtype) * (size_t)n, stream));
    return opc_status(
        o, opk_cast(dtype, out->dtype, x[0], y[0], n, op_cast_saturate(o), stream));
}

OPC_KERNEL(opc_where)
{
    const prt_dims dims[3] = {in[0].dims, in[1].dims, in[2].dims};
    opk_bcast b;
    opk_bcast_init(&b, &out->dims, 3, dims);
    return opc_status(o, opk_where((int32_t)prt_dtype_size(in[1].dtype), &b, x[0], x[1],
                                   x[2], y[0], base_volume(&out->dims), stream));
}

OPC_KERNEL(opc_dropout)
{
    int64_t n = base_volume(&in[0].dims);
    int err = opk_device_copy(y[0], x[0], prt_dtype_size(dtype) * (size_t)n, stream);
    if (!err && nb_out > 1)
        err = opk_fill((int32_t)prt_dtype_size(out[1].dtype), dropout_one(out[1].dtype),
                       y[1], n, stream);
    return opc_status(o, err);
}
