/*
 * Which GPU a context runs on (context_impl.h, ctx_device_enter). The CUDA
 * runtime queues work on the calling thread's current device, and an
 * engine's weights and a context's memory live on the device that was
 * current when they were made (prt_engine_get_device_index). A call made
 * with another GPU current would launch kernels there against the first
 * GPU's pointers; each call that queues or allocates checks once, and
 * fails naming both GPUs, or with prt_context_options.switch_device makes
 * the context's current and puts the caller's back afterwards. The check
 * is one cudaGetDevice a call.
 */
#include "runtime/context_impl.h"

prt_status ctx_device_check(const dev_ops *d, int32_t index, int switch_device,
                            const char *what, int32_t *saved)
{
    int32_t cur = 0, n = 0;
    prt_status st;
    *saved = -1;
    if (!d->get_current)
        return PRT_OK;
    st = d->get_current(&cur);
    if (st)
        return base_error_prefix(st, "%s", what);
    if (cur == index)
        return PRT_OK;
    if (!switch_device)
        return base_error(PRT_ERR_STATE,
                          "%s: the context runs on %s device %d (where its engine was "
                          "loaded), but the calling thread's current %s device is %d; "
                          "make device %d current first (prt_device_set_current), or "
                          "create the context with options.switch_device = 1",
                          what, d->name, (int)index, d->name, (int)cur, (int)index);
    /* A GPU that is not there is refused before the driver is asked (the
     * failed call would be an API error under compute-sanitizer). */
    if (d->count && !d->count(&n) && (index < 0 || index >= n))
        return base_error(PRT_ERR_STATE,
                          "%s: the context runs on %s device %d, which this process does "
                          "not see (%d device%s)",
                          what, d->name, (int)index, (int)n, n == 1 ? "" : "s");
    st = d->set_current(index);
    if (st)
        return base_error_prefix(st, "%s", what);
    *saved = cur;
    return PRT_OK;
}

prt_status ctx_device_enter(const prt_context *c, const char *what, int32_t *saved)
{
    return ctx_device_check(c->dev, c->device_index, c->switch_device, what, saved);
}

void ctx_device_leave(const dev_ops *d, int32_t saved)
{
    /* The caller's device comes back even if the call failed; a failure to
     * restore it is logged, the call's own status stands. */
    if (saved >= 0 && d->set_current(saved) != PRT_OK)
        base_log(PRT_SEV_WARNING,
                 "the context could not make device %d current again: %s", (int)saved,
                 prt_last_error());
}
