/* The host half of gpu_args.h: broadcast walks for the CUDA kernels. */
#include "ops/cuda/gpu_args.h"

#include "ops/op_common.h"

/* Drops size-1 dims of `out` (their coordinate is always 0) and merges a
 * dim into the one before it where every input's stride continues it
 * (stride[d-1] == stride[d] * dims[d], broadcast dims included: 0 == 0). */
static void bcast_compact(opk_bcast *b, const prt_dims *out,
                          int64_t s[OPK_MAX_IN][OPK_MAX_RANK])
{
    b->rank = 0;
    for (int32_t d = 0; d < out->nb_dims; d++) {
        int32_t r = b->rank, merge = r > 0;
        if (out->d[d] == 1)
            continue;
        for (int32_t k = 0; k < b->nb && merge; k++)
            merge = b->stride[k][r - 1] == s[k][d] * out->d[d];
        if (merge) {
            b->dims[r - 1] *= out->d[d];
            for (int32_t k = 0; k < b->nb; k++)
                b->stride[k][r - 1] = s[k][d];
            continue;
        }
        b->dims[r] = out->d[d];
        for (int32_t k = 0; k < b->nb; k++)
            b->stride[k][r] = s[k][d];
        b->rank = r + 1;
    }
}

void opk_bcast_init(opk_bcast *b, const prt_dims *out, int32_t nb, const prt_dims *in)
{
    int64_t s[OPK_MAX_IN][OPK_MAX_RANK];
    memset(b, 0, sizeof *b);
    b->nb = nb;
    for (int32_t k = 0; k < nb; k++)
        op_broadcast_strides(&in[k], out, s[k]);
    bcast_compact(b, out, s);
}

void opk_bcast_init_strided(opk_bcast *b, const prt_dims *out, const int64_t *stride)
{
    int64_t s[OPK_MAX_IN][OPK_MAX_RANK];
    memset(b, 0, sizeof *b);
    b->nb = 1;
    for (int32_t d = 0; d < out->nb_dims; d++)
        s[0][d] = stride[d];
    bcast_compact(b, out, s);
}
