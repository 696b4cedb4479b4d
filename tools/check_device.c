/*
 * The device side of `plugrt check`: buffers and runs on CUDA (through
 * libplugrt's public device API, so the program links no CUDA runtime of
 * its own), the stream check, the reference check (CUDA against the CPU)
 * and the probe of whether a device can be used at all.
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
#include <stdio.h>
#include <string.h>

#include "check_run.h"
#include "numeric.h"

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

/* ---- the probe -------------------------------------------------------------------- */

void chk_probe_device(chk_ctx *c)
{
    prt_device_info info;
    prt_status st = prt_device_check(c->device);
    if (st != PRT_OK) {
        chk_skip(c, "%s [%s]", prt_last_error(), prt_status_name(st));
        return;
    }
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    if (prt_device_get_info(c->device, &info) != PRT_OK || c->device == PRT_DEVICE_CPU)
        chk_pass(c, "%s", c->device == PRT_DEVICE_CPU ? "cpu" : "cuda");
    else
        chk_pass(c, "%s, compute capability %d.%d", info.name, (int)info.cc_major,
                 (int)info.cc_minor);
}

/* ---- stream ------------------------------------------------------------------------ */

static void stream_case(chk_ctx *c, chk_rcase *x, void *user)
{
    int32_t *gated = user;
    chk_outcome got;
    memset(&got, 0, sizeof got);
    c->gated = 1;
    chk_run(c, &x->k, &x->o, 2, 0, &got);
    c->gated = 0;
    (*gated)++;
    if (chk_differs(c, &x->k, 0, &got, &x->ref,
                    "a run queued behind earlier work on its stream")) {
        chk_result *r = &c->sh->result;
        size_t n = strlen(r->message);
        snprintf(
            r->message + n, sizeof r->message - n,
            " (the plugin's work did not wait for the work queued before it on the "
            "stream enqueue was given: is it launched on another stream, the default "
            "one or one of the plugin's own?)");
    }
    chk_outcome_free(&got);
}

void chk_check_stream(chk_ctx *c)
{
    int32_t gated = 0;
    if (c->device != PRT_DEVICE_CUDA) {
        chk_skip(c, "CUDA only (--device cuda)");
        return;
    }
    chk_for_cases(c, -1, stream_case, &gated, NULL);
    chk_pass(
        c,
        "the work is queued on the stream enqueue is given: %d runs behind %d MiB of "
        "copies queued there first agree with the reference",
        (int)gated, (int)(gate_bytes * CHK_GATE_COPIES >> 20));
}

/* ---- reference: CUDA against the CPU ---------------------------------------------- */

typedef struct ref_count {
    int32_t cases;
    int64_t elements;
    uint32_t dtypes; /* float dtypes compared, (1u << dtype) */
} ref_count;

static void reference_case(chk_ctx *c, chk_rcase *x, void *user)
{
    ref_count *n = user;
    chk_outcome got;
    chk_obj cpu;
    prt_plugin *e = chk_engine_plugin(c, x->L.p, 0);
    int32_t t;
    int64_t el;
    char why[CHK_MSG], name[16];
    memset(&got, 0, sizeof got);
    memset(&cpu, 0, sizeof cpu);
    /* A CPU engine's context plugin, on the same inputs (the host mirrors
     * of the case's buffers). */
    if (!e || !chk_attach(c, e, PRT_DEVICE_CPU, 0, &cpu))
        goto done;
    c->device = PRT_DEVICE_CPU;
    chk_run(c, &x->k, &cpu, 1, 0, &got);
    c->device = PRT_DEVICE_CUDA;
    if (got.st != PRT_OK) {
        chk_fail_at(c, x->k.shape, 0, "", -1, "the CPU fails where CUDA ran: %s",
                    got.msg);
        goto done;
    }
    if (chk_outcome_compare(&x->k, &x->ref, &got, CHK_TOL_DEVICES, &t, &el, why,
                            sizeof why) != 0) {
        snprintf(name, sizeof name, "out%d", (int)t);
        chk_fail_at(c, x->k.shape, 0, name, el, "CUDA and the CPU disagree: %s", why);
        goto done;
    }
    n->cases++;
    for (int32_t p = 0; p < x->L.nb_out; p++) {
        n->elements += x->ref.count[p];
        if (!cli_dtype_is_integer(x->L.out_types[p]))
            n->dtypes |= 1u << x->L.out_types[p];
    }
done:
    chk_outcome_free(&got);
    chk_destroy(c, cpu.p);
    chk_destroy(c, e);
}

void chk_check_reference(chk_ctx *c)
{
    ref_count n;
    char tol[256] = "";
    size_t len = 0;
    memset(&n, 0, sizeof n);
    if (c->device != PRT_DEVICE_CUDA) {
        chk_skip(c, "compares CUDA with the CPU (--device cuda)");
        return;
    }
    chk_for_cases(c, -1, reference_case, &n, NULL);
    if (n.dtypes & (1u << PRT_FLOAT32))
        len +=
            (size_t)snprintf(tol + len, sizeof tol - len, "; float32 within %g + %g|x|",
                             CHK_DEV_ATOL_F32, CHK_DEV_RTOL_F32);
    if (n.dtypes & (1u << PRT_FLOAT16))
        len +=
            (size_t)snprintf(tol + len, sizeof tol - len, "; float16 within %g + %g|x|",
                             CHK_DEV_ATOL_F16, CHK_DEV_RTOL_F16);
    if (n.dtypes & (1u << PRT_BFLOAT16))
        snprintf(tol + len, sizeof tol - len, "; bfloat16 within %g + %g|x|",
                 CHK_DEV_ATOL_BF16, CHK_DEV_RTOL_BF16);
    chk_pass(c,
             "CUDA agrees with the CPU in %d cases (%lld elements; integers exactly%s)",
             (int)n.cases, (long long)n.elements, tol);
}
