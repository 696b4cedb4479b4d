/* The walk over a broadcast output shared by the elementwise ops (Add and
 * its family, the comparisons, Where), Expand, LayerNormalization's scale
 * and MatMul's batch: merged rows, an odometer over the outer dims; and the
 * same walk cut into ranges for the context's threads. See op_common.h. */
#include "base/parallel.h"
#include "ops/op_common.h"

/* The rows of a walk: r merged dims d[] (the last one a row of n
 * elements, `outer` rows) and each input's element strides s[k][]. */
typedef struct walk_plan {
    int32_t nb, r;
    int64_t d[PRT_MAX_DIMS];
    int64_t s[OP_WALK_MAX][PRT_MAX_DIMS];
    int64_t n, outer;
} walk_plan;

/* 0 when the output has no elements (no rows). */
static int walk_plan_make(const prt_dims *out, int32_t nb, const prt_dims *in,
                          walk_plan *w)
{
    int64_t s0[OP_WALK_MAX][PRT_MAX_DIMS];
    int32_t r = 0;
    w->nb = nb;
    for (int32_t k = 0; k < nb; k++)
        op_broadcast_strides(&in[k], out, s0[k]);
    /* Drop size-1 dims and merge neighbours that stay contiguous in every
     * input, so rows are as long as possible. A row's strides are then 0 or
     * 1: the last dim kept is each input's innermost one above 1, or one it
     * broadcasts. */
    for (int32_t i = 0; i < out->nb_dims; i++) {
        int merge = r > 0;
        if (out->d[i] == 0)
            return 0;
        if (out->d[i] == 1)
            continue;
        for (int32_t k = 0; merge && k < nb; k++)
            merge = w->s[k][r - 1] == s0[k][i] * out->d[i];
        if (merge) {
            w->d[r - 1] *= out->d[i];
            for (int32_t k = 0; k < nb; k++)
                w->s[k][r - 1] = s0[k][i];
            continue;
        }
        w->d[r] = out->d[i];
        for (int32_t k = 0; k < nb; k++)
            w->s[k][r] = s0[k][i];
        r++;
    }
    if (r == 0) {
        w->d[0] = 1;
        for (int32_t k = 0; k < nb; k++)
            w->s[k][0] = 0;
        r = 1;
    }
    w->r = r;
    w->n = w->d[r - 1];
    w->outer = 1;
    for (int32_t i = 0; i < r - 1; i++)
        w->outer *= w->d[i];
    return 1;
}

/* Rows [row, row + count), the first from element `col` on and the last
 * `last` elements long (n when it is whole), starting at output element
 * `oy`. Returns fn's first non-zero code. */
static int walk_rows(const walk_plan *w, const size_t *es, size_t out_es,
                     const void *const *x, void *y, op_row_fn fn, const void *ctx,
                     int64_t row, int64_t col, int64_t count, int64_t last, int64_t oy)
{
    int64_t idx[PRT_MAX_DIMS] = {0}, off[OP_WALK_MAX] = {0}, rs[OP_WALK_MAX];
    int32_t r = w->r;
    /* The odometer at `row` (its last outer dim turns fastest). */
    for (int32_t j = r - 2; j >= 0; j--) {
        idx[j] = row % w->d[j];
        row /= w->d[j];
        for (int32_t k = 0; k < w->nb; k++)
            off[k] += idx[j] * w->s[k][j];
    }
    for (int32_t k = 0; k < w->nb; k++)
        rs[k] = w->s[k][r - 1];
    for (int64_t it = 0; it < count; it++) {
        const uint8_t *p[OP_WALK_MAX];
        int64_t len = (it == count - 1 ? last : w->n) - col;
        int code;
        for (int32_t k = 0; k < w->nb; k++)
            p[k] = (const uint8_t *)x[k] + (size_t)(off[k] + col * rs[k]) * es[k];
        code = fn(ctx, p, rs, (uint8_t *)y + (size_t)oy * out_es, len);
        if (code)
            return code;
        oy += len;
        col = 0;
        for (int32_t j = r - 2; j >= 0; j--) {
            idx[j]++;
            for (int32_t k = 0; k < w->nb; k++)
                off[k] += w->s[k][j];
            if (idx[j] < w->d[j])
                break;
            for (int32_t k = 0; k < w->nb; k++)
                off[k] -= w->s[k][j] * w->d[j];
            idx[j] = 0;
        }
    }
    return 0;
}

int op_bcast_walk(const prt_dims *out, int32_t nb, const prt_dims *in, const size_t *es,
                  size_t out_es, const void *const *x, void *y, op_row_fn fn,
                  const void *ctx)
{
    walk_plan w;
    if (!walk_plan_make(out, nb, in, &w))
        return 0; /* no elements, no rows */
    return walk_rows(&w, es, out_es, x, y, fn, ctx, 0, 0, w.outer, w.n, 0);
}

typedef struct walk_job {
    const walk_plan *w;
    const size_t *es;
    size_t out_es;
    const void *const *x;
    void *y;
    op_row_fn fn;
    const void *ctx;
} walk_job;

/* Output elements [b, e): from row b / n, column b % n, to the row that
 * holds e - 1. */
static void walk_range(void *arg, int64_t b, int64_t e)
{
    const walk_job *j = arg;
    int64_t n = j->w->n, row = b / n, end_row = (e - 1) / n;
    (void)walk_rows(j->w, j->es, j->out_es, j->x, j->y, j->fn, j->ctx, row, b % n,
                    end_row - row + 1, e - end_row * n, b);
}

void op_bcast_walk_parallel(const prt_dims *out, int32_t nb, const prt_dims *in,
                            const size_t *es, size_t out_es, const void *const *x,
                            void *y, op_row_fn fn, const void *ctx, int64_t grain)
{
    walk_plan w;
    walk_job j = {&w, es, out_es, x, y, fn, ctx};
    if (walk_plan_make(out, nb, in, &w))
        base_parallel_for(w.outer * w.n, grain, walk_range, &j);
}
