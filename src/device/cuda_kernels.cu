// Kernels of the CUDA device itself (not of any op): the evaluation of
// size-dependent dims on the device (dev_ops.eval_sizes, device.h).
#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "device/device.h"
}

namespace
{

// expr.h's kinds and plugin.h's prt_dim_op values, restated for device code
// (device.h documents that dev_node uses them).
enum { K_CONST = 0, K_SIZE = 2, K_OP = 3 };

__device__ int64_t apply(int32_t op, int64_t a, int64_t b)
{
    switch (op) {
    case 0:
        return a + b; // SUM
    case 1:
        return a * b; // PROD
    case 2:
        return a > b ? a : b; // MAX
    case 3:
        return a < b ? a : b; // MIN
    case 4:
        return a - b; // SUB
    case 5:
        return a == b; // EQUAL
    case 6:
        return a < b; // LESS
    case 7: {         // FLOOR_DIV (toward -inf)
        if (b == 0)
            return 0;
        int64_t q = a / b;
        return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
    }
    case 8: { // CEIL_DIV (toward +inf)
        if (b == 0)
            return 0;
        int64_t q = a / b;
        return (q * b != a && ((a < 0) == (b < 0))) ? q + 1 : q;
    }
    default:
        return 0;
    }
}

__device__ int64_t operand(const int64_t *vals, const dev_size_args &a, int32_t code)
{
    return code >= 0 ? vals[code] : a.leaves[-(code + 1)];
}

// One thread: the size-dependent part of a shape program is a handful of
// nodes, and a single launch keeps the whole thing ordered on the stream.
__global__ void eval_sizes_kernel(dev_sizes s, dev_size_args a)
{
    if (a.first)
        s.status->failed = 0;
    for (int32_t i = 0; i < s.nb_nodes; i++) {
        const dev_node n = s.nodes[i];
        int64_t v = 0;
        if (n.kind == K_CONST) {
            v = n.imm;
        } else if (n.kind == K_OP) {
            v = apply(n.op, operand(s.node_values, a, n.a),
                      operand(s.node_values, a, n.b));
        } else if (n.kind == K_SIZE) {
            int32_t id = (int32_t)n.imm;
            int64_t upper = operand(s.node_values, a, n.b);
            int32_t p = s.producer[id];
            if (p < a.layer) {
                v = s.size_values[id];
            } else if (p == a.layer) {
                for (int32_t k = 0; k < a.nb_new; k++)
                    if (a.new_id[k] == id)
                        v = a.new_dtype[k] == 5 /* PRT_INT32 */
                                ? (int64_t) * (const int32_t *)a.new_ptr[k]
                                : *(const int64_t *)a.new_ptr[k];
                if (v < 0 || v > upper) {
                    // The runtime fills sizes with 0x80 bytes first: still
                    // so, the plugin never wrote it.
                    int unwritten = v == (int64_t)(int32_t)0x80808080u ||
                                    v == (int64_t)0x8080808080808080ull;
                    if (!s.status->failed) {
                        s.status->layer = a.layer;
                        s.status->size_id = id;
                        s.status->value = v;
                        s.status->upper = upper;
                        s.status->failed = unwritten ? 2 : 1;
                    }
                    v = v < 0 ? 0 : upper;
                }
                s.size_values[id] = v;
            } else {
                v = upper;
            }
        }
        s.node_values[i] = v;
    }
    for (int32_t d = 0; d < s.nb_dims; d++)
        s.dims[d] = operand(s.node_values, a, s.dim_code[d]);
}

} // namespace

extern "C" int dev_cuda_eval_sizes_launch(const dev_sizes *s, const dev_size_args *args,
                                          void *stream)
{
    eval_sizes_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(*s, *args);
    return (int)cudaGetLastError();
}
