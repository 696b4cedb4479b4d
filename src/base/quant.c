/*
 * Tensor quantization (base/quant.h): copies and checks.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "base/quant.h"

/* A cap on per-channel counts: far above any channel count a model has, and
 * low enough that a file's count cannot make a reader allocate gigabytes. */
#define QUANT_MAX_COUNT (1 << 24)

void base_quant_free(base_quant *q)
{
    base_free(q->scales);
    base_free(q->zero_points);
    memset(q, 0, sizeof *q);
}

prt_status base_quant_set(base_quant *q, const prt_quant_desc *src, const char *what)
{
    base_quant n;
    int64_t count;
    if (!src || (src->struct_size >= offsetof(prt_quant_desc, axis) &&
                 src->kind == PRT_QUANT_NONE)) {
        base_quant_free(q);
        return PRT_OK;
    }
    if (src->struct_size < offsetof(prt_quant_desc, zero_points) + sizeof(void *))
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "%s: prt_quant_desc.struct_size %u is too small (set it to "
                          "sizeof(prt_quant_desc))",
                          what, (unsigned)src->struct_size);
    count = src->count;
    if (src->kind != PRT_QUANT_PER_TENSOR && src->kind != PRT_QUANT_PER_CHANNEL)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "%s: unknown quantization kind %d (PRT_QUANT_NONE, PER_TENSOR "
                          "or PER_CHANNEL)",
                          what, (int)src->kind);
    if (src->kind == PRT_QUANT_PER_TENSOR && count != 1)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "%s: a per-tensor quantization has 1 scale, not %lld", what,
                          (long long)count);
    if (src->kind == PRT_QUANT_PER_CHANNEL && (count < 1 || count > QUANT_MAX_COUNT))
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "%s: a per-channel quantization has 1..%d scales, not %lld",
                          what, QUANT_MAX_COUNT, (long long)count);
    if (src->kind == PRT_QUANT_PER_CHANNEL &&
        (src->axis < 0 || src->axis >= PRT_MAX_DIMS))
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "%s: per-channel axis %d is not a dim (0..%d)", what,
                          (int)src->axis, PRT_MAX_DIMS - 1);
    if (!src->scales)
        return base_error(PRT_ERR_INVALID_ARGUMENT, "%s: scales is NULL", what);
    for (int64_t i = 0; i < count; i++) {
        float s = src->scales[i];
        if (!isfinite(s) || !(s > 0.0f))
            return base_error(PRT_ERR_INVALID_ARGUMENT,
                              "%s: scale %lld is %g; scales must be finite and > 0", what,
                              (long long)i, (double)s);
        if (src->zero_points && (src->zero_points[i] < -128 || src->zero_points[i] > 255))
            return base_error(PRT_ERR_INVALID_ARGUMENT,
                              "%s: zero point %lld is %d, outside -128..255", what,
                              (long long)i, (int)src->zero_points[i]);
    }
    memset(&n, 0, sizeof n);
    n.scales = base_malloc(sizeof(float) * (size_t)count);
    n.zero_points = base_calloc((size_t)count, sizeof(int32_t));
    if (!n.scales || !n.zero_points) {
        base_quant_free(&n);
        return base_error(PRT_ERR_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    memcpy(n.scales, src->scales, sizeof(float) * (size_t)count);
    if (src->zero_points)
        memcpy(n.zero_points, src->zero_points, sizeof(int32_t) * (size_t)count);
    n.d.struct_size = sizeof(prt_quant_desc);
    n.d.abi_version = PRT_PLUGIN_ABI_VERSION;
    n.d.kind = src->kind;
    n.d.axis = src->kind == PRT_QUANT_PER_CHANNEL ? src->axis : -1;
    n.d.count = count;
    n.d.scales = n.scales;
    n.d.zero_points = n.zero_points;
    if (src->kind == PRT_QUANT_PER_TENSOR) {
        n.d.scale = n.scales[0];
        n.d.zero_point = n.zero_points[0];
    }
    base_quant_free(q);
    *q = n;
    return PRT_OK;
}

prt_status base_quant_copy(base_quant *dst, const base_quant *src)
{
    return base_quant_set(dst, base_quant_desc(src), "copying a tensor's quantization");
}

prt_status base_quant_check_tensor(const base_quant *q, int32_t dtype, int32_t rank,
                                   int64_t axis_dim, const char *what)
{
    int32_t lo = dtype == PRT_INT8 ? -128 : 0, hi = dtype == PRT_INT8 ? 127 : 255;
    if (q->d.kind == PRT_QUANT_NONE)
        return PRT_OK;
    if (dtype != PRT_INT8 && dtype != PRT_UINT8)
        return base_error(PRT_ERR_INVALID_ARGUMENT,
                          "%s has a quantization (scales) but dtype %s: only int8 and "
                          "uint8 tensors are quantized",
                          what, prt_dtype_name(dtype));
    for (int64_t i = 0; i < q->d.count; i++)
        if (q->zero_points[i] < lo || q->zero_points[i] > hi)
            return base_error(PRT_ERR_INVALID_ARGUMENT,
                              "%s: zero point %d is outside %s's range %d..%d", what,
                              (int)q->zero_points[i], prt_dtype_name(dtype), (int)lo,
                              (int)hi);
    if (q->d.kind == PRT_QUANT_PER_CHANNEL) {
        if (q->d.axis >= rank)
            return base_error(PRT_ERR_SHAPE,
                              "%s: per-channel axis %d is outside its rank %d", what,
                              (int)q->d.axis, (int)rank);
        if (axis_dim >= 0 && axis_dim != q->d.count)
            return base_error(PRT_ERR_SHAPE,
                              "%s: %lld per-channel scales for dim %d of size %lld", what,
                              (long long)q->d.count, (int)q->d.axis, (long long)axis_dim);
    }
    return PRT_OK;
}

int base_quant_equal(const base_quant *a, const base_quant *b)
{
    if (a->d.kind != b->d.kind)
        return 0;
    if (a->d.kind == PRT_QUANT_NONE)
        return 1;
    return a->d.axis == b->d.axis && a->d.count == b->d.count &&
           memcmp(a->scales, b->scales, sizeof(float) * (size_t)a->d.count) == 0 &&
           memcmp(a->zero_points, b->zero_points, sizeof(int32_t) * (size_t)a->d.count) ==
               0;
}
