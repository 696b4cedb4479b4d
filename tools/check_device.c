/*
 * The checks of the device a plugin runs on: the probe of whether it can
 * be used at all, the stream check (runs queued behind earlier work on
 * their stream, the gate of check_transfer.c, agree with the reference)
 * and the reference check (CUDA against the CPU).
 */
#include <stdio.h>
#include <string.h>

#include "check_objects.h"
#include "check_run.h"
#include "check_transfer.h"
#include "numeric.h"

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
        (int)gated, (int)(chk_dev_gate_bytes() * CHK_GATE_COPIES >> 20));
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
