/* Memory planning: one arena for every activation, reusing memory between
 * buffers whose lifetimes do not meet. */
#include "builder/builder.h"

static int64_t align_up(int64_t v)
{
    return (v + PLAN_ALIGN - 1) / PLAN_ALIGN * PLAN_ALIGN;
}

int64_t plan_arena(plan_item *items, int32_t n)
{
    int32_t *order;
    int64_t arena = 0;
    if (n == 0)
        return 0;
    order = base_malloc(sizeof(int32_t) * (size_t)n);
    if (!order)
        return -1;
    for (int32_t i = 0; i < n; i++) {
        order[i] = i;
        items[i].offset = -1;
        if (items[i].bytes < 0 || items[i].bytes > INT64_MAX / 4)
            goto fail;
    }
    /* Largest first (insertion sort: networks have few tensors; stable, so
     * the plan is deterministic). */
    for (int32_t i = 1; i < n; i++) {
        int32_t k = order[i], j = i - 1;
        while (j >= 0 && items[order[j]].bytes < items[k].bytes) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = k;
    }
    for (int32_t i = 0; i < n; i++) {
        plan_item *it = &items[order[i]];
        int64_t off = 0;
        int moved = 1;
        /* Lowest offset that clears every placed item alive at the same
         * time; repeat until a pass moves nothing. */
        while (moved) {
            moved = 0;
            for (int32_t j = 0; j < i; j++) {
                const plan_item *o = &items[order[j]];
                if (o->last < it->first || it->last < o->first)
                    continue;
                if (off < o->offset + align_up(o->bytes) &&
                    o->offset < off + align_up(it->bytes)) {
                    off = o->offset + align_up(o->bytes);
                    moved = 1;
                }
            }
        }
        it->offset = off;
        if (off + align_up(it->bytes) > arena)
            arena = off + align_up(it->bytes);
    }
    base_free(order);
    return arena;
fail:
    base_free(order);
    return -1;
}
