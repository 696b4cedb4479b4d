/* The walk over a broadcast output shared by the elementwise ops (Add and
 * its family, the comparisons, Where), Expand, LayerNormalization's scale
 * and MatMul's batch: merged rows, an odometer over the outer dims. See
 * op_common.h. */
#include "ops/op_common.h"

int op_bcast_walk(const prt_dims *out, int32_t nb, const prt_dims *in, const size_t *es,
                  size_t out_es, const void *const *x, void *y, op_row_fn fn,
                  const void *ctx)
{
    int64_t s0[OP_WALK_MAX][PRT_MAX_DIMS], s[OP_WALK_MAX][PRT_MAX_DIMS];
    int64_t d[PRT_MAX_DIMS], idx[PRT_MAX_DIMS] = {0}, off[OP_WALK_MAX] = {0};
    int64_t outer = 1, n, oy = 0;
    int32_t r = 0;
    for (int32_t k = 0; k < nb; k++)
        op_broadcast_strides(&in[k], out, s0[k]);
    /* Drop size-1 dims and merge neighbours that stay contiguous in every
     * input, so rows are as long as possible. A row's strides are then 0 or
     * 1: the last dim kept is each input's innermost one above 1, or one it
     * broadcasts. */
    for (int32_t i = 0; i < out->nb_dims; i++) {
        int merge = r > 0;
        if (out->d[i] == 0)
            return 0; /* no elements, no rows */
        if (out->d[i] == 1)
            continue;
        for (int32_t k = 0; merge && k < nb; k++)
            merge = s[k][r - 1] == s0[k][i] * out->d[i];
        if (merge) {
            d[r - 1] *= out->d[i];
            for (int32_t k = 0; k < nb; k++)
                s[k][r - 1] = s0[k][i];
            continue;
        }
        d[r] = out->d[i];
        for (int32_t k = 0; k < nb; k++)
            s[k][r] = s0[k][i];
        r++;
    }
    if (r == 0) {
        d[0] = 1;
        for (int32_t k = 0; k < nb; k++)
            s[k][0] = 0;
        r = 1;
    }
    n = d[r - 1];
    for (int32_t i = 0; i < r - 1; i++)
        outer *= d[i];
    for (int64_t it = 0; it < outer; it++) {
        const uint8_t *p[OP_WALK_MAX];
        int64_t rs[OP_WALK_MAX];
        int code;
        for (int32_t k = 0; k < nb; k++) {
            p[k] = (const uint8_t *)x[k] + (size_t)off[k] * es[k];
            rs[k] = s[k][r - 1];
        }
        code = fn(ctx, p, rs, (uint8_t *)y + (size_t)oy * out_es, n);
        if (code)
            return code;
        oy += n;
        for (int32_t j = r - 2; j >= 0; j--) {
            idx[j]++;
            for (int32_t k = 0; k < nb; k++)
                off[k] += s[k][j];
            if (idx[j] < d[j])
                break;
            for (int32_t k = 0; k < nb; k++)
                off[k] -= s[k][j] * d[j];
            idx[j] = 0;
        }
    }
    return 0;
}
