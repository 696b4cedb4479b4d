/*
 * The device side of a case's run on CUDA (check_transfer.h), through
 * libplugrt's public device API, so the program links no CUDA runtime of
 * its own.
 *
 * A run on CUDA (chk_dev_before, enqueue, chk_dev_after): every block,
 * guards included, goes to the device as its host mirror holds it; the
 * plugin is enqueued on the checker's own stream (non-blocking, so no
 * implicit ordering with the default stream); the stream, and then the
 * whole device, is waited for, so work a plugin queued elsewhere has ended
 * too, and a kernel's fault surfaces as that run's failure; then every
 * block comes back whole.
 *
 * The gated run (the stream check) shows a plugin that does not queue its
 * work on the stream it is given. Before enqueue, the stream is made busy
 * with device-to-device copies (CHK_GATE_BYTES, CHK_GATE_COPIES) while the
 * inputs on the device hold zeros; only behind those copies, on the same
 * stream, are the true inputs and the poisoned outputs copied into place.
 * Work queued on that stream runs after them and sees the true inputs;
 * work launched on another stream (the default one, a stream of its own)
 * runs at once, reads zeros and has its outputs overwritten by the poison,
 * so the result differs from the reference. The outputs are read back as
 * soon as the stream is done, before the device is waited for, so such
 * work that takes longer than the gate is caught unfinished instead. Only
 * device-to-device copies follow the first wait: a copy from pageable host
 * memory may make the host wait for the stream, which would end the gate
 * before enqueue.
 */
#include "check_transfer.h"

/* ---- buffers -------------------------------------------------------------- */

/* Every buffer of a case: inputs, outputs, workspace. */
static int32_t case_bufs(chk_case *k, chk_buf **list)
{
    int32_t n = 0;
    for (int32_t i = 0; i < k->L->nb_in; i++)
        list[n++] = &k->in[i];
    for (int32_t o = 0; o < k->L->nb_out; o++)
        list[n++] = &k->out[o];
    list[n++] = &k->ws;
    return n;
}

static int dev_fail(char *why, size_t cap, const char *what)
{
    return chk_say(why, cap, "%s: %s", what, prt_last_error());
}

static int copy(chk_ctx *c, void *dst, const void *src, size_t bytes, int32_t kind,
                char *why, size_t cap, const char *what)
{
    if (prt_device_memcpy(PRT_DEVICE_CUDA, dst, src, bytes, kind, c->stream) != PRT_OK)
        return dev_fail(why, cap, what);
    return 0;
}

/* ---- the gate ------------------------------------------------------------------ */

/* Two device buffers the gate copies between, made once per process;
 * smaller where the device has less memory to spare. */
static void *gate_src, *gate_dst;
static size_t gate_bytes;

size_t chk_dev_gate_bytes(void)
{
    return gate_bytes;
}

static int gate_make(void)
{
    for (size_t n = CHK_GATE_BYTES; !gate_bytes && n >= ((size_t)4 << 20); n /= 2) {
        if (prt_device_malloc(PRT_DEVICE_CUDA, n, &gate_src) != PRT_OK)
            continue;
        if (prt_device_malloc(PRT_DEVICE_CUDA, n, &gate_dst) != PRT_OK) {
            prt_device_free(PRT_DEVICE_CUDA, gate_src);
            continue;
        }
        gate_bytes = n;
    }
    return gate_bytes ? 0 : -1;
}

/* Frees the staged copies of a gated run's buffers. */
static void stage_free(chk_buf **list, int32_t n)
{
    for (int32_t j = 0; j < n; j++) {
        if (list[j]->stage)
            prt_device_free(PRT_DEVICE_CUDA, list[j]->stage);
        list[j]->stage = NULL;
    }
}

/* The gated upload (see the top of the file). */
static int before_gated(chk_ctx *c, chk_case *k, char *why, size_t cap)
{
    chk_buf *list[CHK_MAX_IO + 1];
    int32_t n = case_bufs(k, list), nb_in = k->L->nb_in, nb_staged = n - 1;
    int rc = 0;
    if (!gate_bytes && gate_make() != 0)
        return dev_fail(why, cap, "device memory for the stream check's busy copies");
    /* Inputs and outputs are staged; the workspace goes straight in. The
     * staged copies are freed once the run has ended (chk_dev_after). */
    for (int32_t j = 0; j < nb_staged && rc == 0; j++) {
        void *p = NULL;
        if (prt_device_malloc(PRT_DEVICE_CUDA, chk_buf_total(list[j]), &p) != PRT_OK)
            rc = dev_fail(why, cap, "device memory for a staged copy");
        list[j]->stage = p;
    }
    for (int32_t j = 0; j < n && rc == 0; j++) {
        chk_buf *b = list[j];
        size_t total = chk_buf_total(b);
        rc = copy(c, b->dev, b->block, total, PRT_MEMCPY_HOST_TO_DEVICE, why, cap,
                  "copying a buffer to the device");
        if (rc == 0 && j < nb_staged)
            rc = copy(c, b->stage, b->block, total, PRT_MEMCPY_HOST_TO_DEVICE, why, cap,
                      "copying a buffer to the device");
        /* The decoy: zeros where the plugin will look for its inputs. */
        if (rc == 0 && j < nb_in &&
            prt_device_memset(PRT_DEVICE_CUDA, b->dev + CHK_GUARD, 0, b->bytes,
                              c->stream) != PRT_OK)
            rc = dev_fail(why, cap, "clearing an input on the device");
    }
    if (rc == 0 && prt_stream_synchronize(PRT_DEVICE_CUDA, c->stream) != PRT_OK)
        rc = dev_fail(why, cap, "waiting for the copies to the device");
    for (int32_t g = 0; g < CHK_GATE_COPIES && rc == 0; g++)
        rc = copy(c, gate_dst, gate_src, gate_bytes, PRT_MEMCPY_DEVICE_TO_DEVICE, why,
                  cap, "keeping the stream busy");
    for (int32_t j = 0; j < nb_staged && rc == 0; j++)
        rc = copy(c, list[j]->dev, list[j]->stage, chk_buf_total(list[j]),
                  PRT_MEMCPY_DEVICE_TO_DEVICE, why, cap,
                  "copying the staged buffers into place");
    if (rc != 0)
        stage_free(list, nb_staged);
    return rc;
}

/* ---- runs ------------------------------------------------------------------------ */

int chk_dev_before(chk_ctx *c, chk_case *k, char *why, size_t cap)
{
    chk_buf *list[CHK_MAX_IO + 1];
    int32_t n = case_bufs(k, list);
    if (!c->stream && prt_stream_create(PRT_DEVICE_CUDA, &c->stream) != PRT_OK)
        return dev_fail(why, cap, "creating a stream");
    if (c->gated)
        return before_gated(c, k, why, cap);
    for (int32_t j = 0; j < n; j++)
        if (copy(c, list[j]->dev, list[j]->block, chk_buf_total(list[j]),
                 PRT_MEMCPY_HOST_TO_DEVICE, why, cap, "copying a buffer to the device"))
            return -1;
    if (prt_stream_synchronize(PRT_DEVICE_CUDA, c->stream) != PRT_OK)
        return dev_fail(why, cap, "waiting for the copies to the device");
    return 0;
}

int chk_dev_after(chk_ctx *c, chk_case *k, char *why, size_t cap)
{
    chk_buf *list[CHK_MAX_IO + 1];
    int32_t n = case_bufs(k, list);
    /* A gated run is read back as soon as its stream is done, before work
     * queued elsewhere has to end: a plugin's kernel on another stream that
     * is still running then shows too. Other runs wait for the whole
     * device first, so such a kernel has ended before they are read. */
    int whole_first = c->device_sync && !c->gated, rc = 0;
    /* A kernel's fault is reported by the first wait after it. */
    if (prt_stream_synchronize(PRT_DEVICE_CUDA, c->stream) != PRT_OK)
        rc = chk_say(why, cap, "after enqueue, waiting for the stream fails: %s",
                     prt_last_error());
    else if (whole_first && prt_device_synchronize(PRT_DEVICE_CUDA) != PRT_OK)
        rc = chk_say(why, cap, "after enqueue, waiting for the device fails: %s",
                     prt_last_error());
    for (int32_t j = 0; j < n && rc == 0; j++)
        rc = copy(c, list[j]->block, list[j]->dev, chk_buf_total(list[j]),
                  PRT_MEMCPY_DEVICE_TO_HOST, why, cap,
                  "copying a buffer back from the device");
    if (rc == 0 && prt_stream_synchronize(PRT_DEVICE_CUDA, c->stream) != PRT_OK)
        rc = dev_fail(why, cap, "waiting for the copies back from the device");
    if (rc == 0 && c->device_sync && !whole_first &&
        prt_device_synchronize(PRT_DEVICE_CUDA) != PRT_OK)
        rc = chk_say(why, cap, "after enqueue, waiting for the device fails: %s",
                     prt_last_error());
    /* Only now: freeing device memory waits for the whole device. */
    stage_free(list, n);
    return rc;
}
