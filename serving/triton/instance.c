/*
 * Model instances: one execution context each, and the execution of the
 * requests the server hands an instance.
 *
 * An execution serves its requests in groups, each group one enqueue:
 * requests of a model with a batch dim that agree in their other dims go
 * together (the dynamic batcher sends such), their inputs gathered row
 * after row, their outputs cut row by row; a model without a batch dim runs
 * each request alone. A request that cannot run (its inputs disagree with
 * the engine) is answered with an error on its own; a group whose run
 * fails answers each of its requests with plugrt's message. Every request
 * is answered and released, whatever happens.
 *
 * Memory: the context, its scratch memory and one staging block per input
 * and output at its largest size are made when the instance is; an
 * execution allocates nothing (a single request's input already where the
 * engine reads it is bound in place). On CUDA the instance lives on the GPU
 * the server gives it (its engine there, its stream, its staging blocks in
 * that GPU's memory); inputs come from host memory (pinned or not) or a
 * GPU's, outputs go where the server's allocator puts them, copies go on
 * the instance's stream, and the responses wait for it. A CPU engine given
 * GPU memory (CUDA shared memory) copies through the default stream.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "instance.h"

/* Alignment of an input read in place: in host memory, cache lines (and
 * every dtype's); in GPU memory, that of plugrt's own allocations. */
#define TP_ALIGN 64
#define TP_ALIGN_GPU 256

static int64_t volume(const prt_dims *d, int32_t from)
{
    int64_t v = 1;
    for (int32_t k = from; k < d->nb_dims; k++)
        v *= d->d[k];
    return v;
}

/* ---- creation ------------------------------------------------------------ */

static int32_t stage_device(const tp_instance *inst, const tp_io *t);

void tp_instance_destroy(tp_instance *inst)
{
    int32_t saved = -1;
    TRITONSERVER_Error *err;
    if (!inst)
        return;
    /* Its memory and stream belong to its GPU. */
    if ((err = tp_device_enter(inst->device, inst->index, &saved))) {
        tp_log(TRITONSERVER_LOG_WARN, "instance '%s': %s", inst->name,
               TRITONSERVER_ErrorMessage(err));
        TRITONSERVER_ErrorDelete(err);
    }
    prt_context_destroy(inst->ctx);
    for (int32_t i = 0; inst->in_stage && i < inst->m->nb_in; i++)
        prt_device_free(stage_device(inst, &inst->m->in[i]), inst->in_stage[i]);
    for (int32_t o = 0; inst->out_stage && o < inst->m->nb_out; o++)
        prt_device_free(stage_device(inst, &inst->m->out[o]), inst->out_stage[o]);
    if (inst->stream)
        prt_stream_destroy(inst->device, inst->stream);
    tp_device_leave(inst->device, saved);
    free(inst->in_stage);
    free(inst->out_stage);
    free(inst->reqs);
    free(inst->group);
    free(inst->req_shapes);
    free(inst->in_shape);
    free(inst->out_shape);
    free(inst);
}

/* Host memory for host tensors, the engine's device's for the others;
 * both aligned as plugrt aligns its own (256 bytes). */
static int32_t stage_device(const tp_instance *inst, const tp_io *t)
{
    return t->location == PRT_LOCATION_DEVICE ? inst->device : PRT_DEVICE_CPU;
}

static TRITONSERVER_Error *stage_alloc(tp_instance *inst, const tp_io *t, void **out)
{
    size_t bytes = t->max_bytes > 0 ? (size_t)t->max_bytes : 1;
    prt_status st = prt_device_malloc(stage_device(inst, t), bytes, out);
    if (st)
        return tp_prt_error(st, "staging memory");
    return NULL;
}

/* Whether an instance of `kind` can run the model's engine; the reason
 * when not. */
static TRITONSERVER_Error *check_kind(const tp_model *m, const char *name,
                                      TRITONSERVER_InstanceGroupKind kind)
{
    if (kind == TRITONSERVER_INSTANCEGROUPKIND_GPU && m->device != PRT_DEVICE_CUDA)
        return tp_error(
            TRITONSERVER_ERROR_INVALID_ARG,
            "instance '%s' is KIND_GPU but model '%s' runs on the cpu (build it for "
            "cuda: parameter device \"cuda\", or a plan built with --device cuda)",
            name, m->name);
    if (kind == TRITONSERVER_INSTANCEGROUPKIND_CPU && m->device == PRT_DEVICE_CUDA)
        return tp_error(TRITONSERVER_ERROR_INVALID_ARG,
                        "instance '%s' is KIND_CPU but model '%s' runs on cuda (give it "
                        "instance_group [ { kind: KIND_GPU } ])",
                        name, m->name);
    if (kind != TRITONSERVER_INSTANCEGROUPKIND_GPU &&
        kind != TRITONSERVER_INSTANCEGROUPKIND_CPU)
        return tp_error(TRITONSERVER_ERROR_UNSUPPORTED,
                        "instance '%s' of model '%s' is of kind %d; the plugrt backend "
                        "serves KIND_CPU and KIND_GPU instances",
                        name, m->name, (int)kind);
    return NULL;
}

TRITONSERVER_Error *tp_instance_create(tp_model *m, TRITONBACKEND_ModelInstance *triton,
                                       tp_instance **out)
{
    tp_instance *inst = calloc(1, sizeof *inst);
    TRITONSERVER_InstanceGroupKind kind = TRITONSERVER_INSTANCEGROUPKIND_CPU;
    const char *name = "";
    int32_t device_id = 0, saved = -1, gpus = 0;
    TRITONSERVER_Error *err;
    prt_status st;
    if (!inst)
        return tp_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
    inst->m = m;
    inst->triton = triton;
    inst->device = m->device;
    if ((err = TRITONBACKEND_ModelInstanceName(triton, &name)) ||
        (err = TRITONBACKEND_ModelInstanceKind(triton, &kind)) ||
        (err = TRITONBACKEND_ModelInstanceDeviceId(triton, &device_id)))
        goto fail;
    snprintf(inst->name, sizeof inst->name, "%s", name);
    /* An instance runs where its engine does: a KIND_GPU instance on the
     * GPU the server gives it, with that GPU's engine, its own stream and
     * its own memory there. */
    if ((err = check_kind(m, inst->name, kind)))
        goto fail;
    if (m->device == PRT_DEVICE_CUDA) {
        if ((st = prt_device_count(PRT_DEVICE_CUDA, &gpus))) {
            err = tp_prt_error(st, "counting the GPUs");
            goto fail;
        }
        if (device_id < 0 || device_id >= gpus) {
            err = tp_error(TRITONSERVER_ERROR_INVALID_ARG,
                           "instance '%s' is on GPU %d; this machine has %d", inst->name,
                           (int)device_id, (int)gpus);
            goto fail;
        }
        inst->index = device_id;
    }
    if ((err = tp_device_enter(inst->device, inst->index, &saved)) ||
        (err = tp_model_engine(m, inst->index, &inst->eng)))
        goto fail;
    if (m->device == PRT_DEVICE_CUDA &&
        (st = prt_stream_create(m->device, &inst->stream))) {
        err = tp_prt_error(st, "creating the instance's stream");
        goto fail;
    }
    {
        prt_context_options o = {.struct_size = sizeof o};
        o.external_memory = m->threads > 0;
        /* Its runs make the instance's GPU current themselves, so a request
         * needs no bracketing of the server's thread (plugrt.h). */
        o.switch_device = 1;
        if ((st = prt_context_create_with_options(inst->eng->engine, &o, &inst->ctx))) {
            char what[256];
            snprintf(what, sizeof what, "instance '%s': creating its context",
                     inst->name);
            err = tp_prt_error(st, what);
            goto fail;
        }
    }
    inst->in_stage = calloc((size_t)m->nb_in + 1, sizeof *inst->in_stage);
    inst->out_stage = calloc((size_t)m->nb_out + 1, sizeof *inst->out_stage);
    inst->in_shape = calloc((size_t)m->nb_in + 1, sizeof *inst->in_shape);
    inst->out_shape = calloc((size_t)m->nb_out + 1, sizeof *inst->out_shape);
    /* Each request brings at least one row. */
    inst->cap_reqs = m->max_batch > 0 ? (uint32_t)m->max_batch : 1;
    inst->reqs = calloc(inst->cap_reqs, sizeof *inst->reqs);
    inst->group = calloc(inst->cap_reqs, sizeof *inst->group);
    inst->req_shapes =
        calloc((size_t)inst->cap_reqs * (size_t)(m->nb_in + 1), sizeof *inst->req_shapes);
    if (!inst->in_stage || !inst->out_stage || !inst->in_shape || !inst->out_shape ||
        !inst->reqs || !inst->group || !inst->req_shapes) {
        err = tp_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
        goto fail;
    }
    for (int32_t i = 0; i < m->nb_in; i++)
        if ((err = stage_alloc(inst, &m->in[i], &inst->in_stage[i])))
            goto fail;
    for (int32_t o = 0; o < m->nb_out; o++) {
        if ((err = stage_alloc(inst, &m->out[o], &inst->out_stage[o])))
            goto fail;
        if ((st = prt_context_set_tensor_address(inst->ctx, m->out[o].name,
                                                 inst->out_stage[o]))) {
            err = tp_prt_error(st, "binding an output");
            goto fail;
        }
    }
    if (m->device == PRT_DEVICE_CUDA)
        tp_log(TRITONSERVER_LOG_INFO,
               "instance '%s' of model '%s': one context on cuda, GPU %d, its own stream",
               inst->name, m->name, (int)inst->index);
    else
        tp_log(TRITONSERVER_LOG_INFO,
               "instance '%s' of model '%s': one context on the cpu", inst->name,
               m->name);
    tp_device_leave(inst->device, saved);
    *out = inst;
    return NULL;
fail:
    tp_instance_destroy(inst);
    tp_device_leave(m->device, saved);
    return err;
}

/* ---- answering ----------------------------------------------------------- */

/* Reports a request's statistics and releases it. */
static void release(tp_instance *inst, tp_req *r, bool ok, uint64_t t0, uint64_t t1,
                    uint64_t t2, uint64_t t3)
{
    TRITONSERVER_Error *e = TRITONBACKEND_ModelInstanceReportStatistics(
        inst->triton, r->request, ok, t0, t1, t2, t3);
    if (e)
        TRITONSERVER_ErrorDelete(e);
    e = TRITONBACKEND_RequestRelease(r->request, TRITONSERVER_REQUEST_RELEASE_ALL);
    if (e)
        TRITONSERVER_ErrorDelete(e);
    r->done = 1;
}

/* Answers a request with an error (consumed), reports it failed, releases
 * it. */
static void answer_error(tp_instance *inst, tp_req *r, TRITONSERVER_Error *error)
{
    TRITONBACKEND_Response *resp = NULL;
    TRITONSERVER_Error *e = TRITONBACKEND_ResponseNew(&resp, r->request);
    if (!e)
        e = TRITONBACKEND_ResponseSend(resp, TRITONSERVER_RESPONSE_COMPLETE_FINAL, error);
    if (e) {
        tp_log(TRITONSERVER_LOG_ERROR,
               "model '%s': cannot send an error response (%s): %s", inst->m->name,
               TRITONSERVER_ErrorMessage(error), TRITONSERVER_ErrorMessage(e));
        TRITONSERVER_ErrorDelete(e);
    }
    TRITONSERVER_ErrorDelete(error);
    release(inst, r, false, 0, 0, 0, 0);
}

/* Reads and checks a request's inputs: every engine input present, its
 * dtype, rank and byte size; the batch (first dim, the same for every
 * input) when the model has one. */
static TRITONSERVER_Error *check_request(tp_instance *inst, tp_req *r, prt_dims *shapes)
{
    const tp_model *m = inst->m;
    uint32_t nb = 0;
    TRITONSERVER_Error *err = TRITONBACKEND_RequestInputCount(r->request, &nb);
    if (err)
        return err;
    if (nb != (uint32_t)m->nb_in)
        return tp_error(TRITONSERVER_ERROR_INVALID_ARG,
                        "model '%s' takes %d inputs; the request has %u", m->name,
                        (int)m->nb_in, nb);
    r->batch = 1;
    for (int32_t i = 0; i < m->nb_in; i++) {
        const tp_io *t = &m->in[i];
        TRITONBACKEND_Input *in = NULL;
        TRITONSERVER_DataType dt;
        const int64_t *shape;
        uint32_t rank;
        uint64_t bytes;
        char a[160];
        if ((err = TRITONBACKEND_RequestInput(r->request, t->name, &in)) || !in) {
            if (err)
                TRITONSERVER_ErrorDelete(err);
            return tp_error(TRITONSERVER_ERROR_INVALID_ARG,
                            "model '%s': the request has no input '%s'", m->name,
                            t->name);
        }
        if ((err = TRITONBACKEND_InputProperties(in, NULL, &dt, &shape, &rank, &bytes,
                                                 NULL)))
            return err;
        if ((int32_t)dt != t->triton_dtype)
            return tp_error(TRITONSERVER_ERROR_INVALID_ARG,
                            "model '%s': input '%s' is %s; the engine takes %s", m->name,
                            t->name, tp_triton_dtype_name((int32_t)dt),
                            tp_triton_dtype_name(t->triton_dtype));
        /* A 0-D input served as [1] (tp_io.as_one) comes as [1]; the server
         * has checked that against the configuration. */
        if (rank != (uint32_t)(t->dims.nb_dims + t->as_one) ||
            (t->as_one && shape[0] != 1))
            return tp_error(TRITONSERVER_ERROR_INVALID_ARG,
                            "model '%s': input '%s' has %u dims; the engine's has %d",
                            m->name, t->name, rank, (int)t->dims.nb_dims);
        shapes[i].nb_dims = t->dims.nb_dims;
        for (int32_t k = 0; k < shapes[i].nb_dims; k++) {
            if (shape[k] < 0)
                return tp_error(TRITONSERVER_ERROR_INVALID_ARG,
                                "model '%s': input '%s' has a negative dim", m->name,
                                t->name);
            shapes[i].d[k] = shape[k];
        }
        if ((uint64_t)volume(&shapes[i], 0) * prt_dtype_size(t->dtype) != bytes) {
            tp_dims_str(&shapes[i], a, sizeof a);
            return tp_error(
                TRITONSERVER_ERROR_INVALID_ARG,
                "model '%s': input '%s' of shape %s needs %llu bytes; the request "
                "has %llu",
                m->name, t->name, a,
                (unsigned long long)volume(&shapes[i], 0) * prt_dtype_size(t->dtype),
                (unsigned long long)bytes);
        }
        if (m->max_batch > 0) {
            if (rank < 1 || shape[0] < 1)
                return tp_error(TRITONSERVER_ERROR_INVALID_ARG,
                                "model '%s': input '%s' has no batch", m->name, t->name);
            if (i == 0)
                r->batch = shape[0];
            else if (shape[0] != r->batch)
                return tp_error(TRITONSERVER_ERROR_INVALID_ARG,
                                "model '%s': inputs '%s' and '%s' differ in their batch",
                                m->name, m->in[0].name, t->name);
        }
    }
    return NULL;
}

/* Whether request shapes `s` may run with the group's (all dims but the
 * batch equal). */
static int same_rows(const tp_model *m, const prt_dims *group, const prt_dims *s)
{
    for (int32_t i = 0; i < m->nb_in; i++)
        for (int32_t k = 1; k < s[i].nb_dims; k++)
            if (s[i].d[k] != group[i].d[k])
                return 0;
    return 1;
}

/* Copies between host and GPU memory, either way: on the instance's
 * stream (CUDA engines; the default stream for CPU engines given GPU
 * memory). A copy that touches a GPU sets *queued: the caller waits for the
 * stream before the host reads the result or the server gets the buffer. */
static TRITONSERVER_Error *copy_mem(tp_instance *inst, void *dst, int dst_gpu,
                                    const void *src, int src_gpu, size_t bytes,
                                    int *queued, const char *what, const char *name)
{
    prt_status st;
    if (!bytes)
        return NULL;
    if (!dst_gpu && !src_gpu) {
        memcpy(dst, src, bytes);
        return NULL;
    }
    st = prt_device_memcpy(PRT_DEVICE_CUDA, dst, src, bytes,
                           !src_gpu  ? PRT_MEMCPY_HOST_TO_DEVICE
                           : dst_gpu ? PRT_MEMCPY_DEVICE_TO_DEVICE
                                     : PRT_MEMCPY_DEVICE_TO_HOST,
                           inst->stream);
    if (st) {
        char msg[256];
        snprintf(msg, sizeof msg, "model '%s': %s '%s'", inst->m->name, what, name);
        return tp_prt_error(st, msg);
    }
    *queued = 1;
    return NULL;
}

/* Copies (or binds in place) one input of the group. Where the server has
 * the data (host memory, pinned or not, or a GPU's) and where the engine
 * reads it (the host, or its GPU) decide: a single buffer already where the
 * engine reads it, suitably aligned, is bound as it is; anything else is
 * copied into the staging block. *host_wait is set when a copy into host
 * memory was queued (the host must wait before it reads it). */
static TRITONSERVER_Error *gather_input(tp_instance *inst, int32_t i, tp_req **group,
                                        int32_t nb, size_t row_bytes, int *host_wait)
{
    const tp_io *t = &inst->m->in[i];
    int on_gpu = t->location == PRT_LOCATION_DEVICE;
    uint8_t *stage = inst->in_stage[i];
    TRITONSERVER_Error *err;
    prt_status st;
    for (int32_t g = 0; g < nb; g++) {
        TRITONBACKEND_Input *in = NULL;
        uint32_t nbuf = 0;
        size_t at = (size_t)group[g]->offset * row_bytes;
        if ((err = TRITONBACKEND_RequestInput(group[g]->request, t->name, &in)) ||
            (err =
                 TRITONBACKEND_InputProperties(in, NULL, NULL, NULL, NULL, NULL, &nbuf)))
            return err;
        for (uint32_t b = 0; b < nbuf; b++) {
            const void *buf = NULL;
            uint64_t bytes = 0;
            TRITONSERVER_MemoryType mt =
                on_gpu ? TRITONSERVER_MEMORY_GPU : TRITONSERVER_MEMORY_CPU;
            int64_t mt_id = on_gpu ? inst->index : 0;
            int src_gpu, queued = 0;
            if ((err = TRITONBACKEND_InputBuffer(in, b, &buf, &bytes, &mt, &mt_id)))
                return err;
            if (at + bytes > (size_t)t->max_bytes)
                return tp_error(
                    TRITONSERVER_ERROR_INVALID_ARG,
                    "model '%s': input '%s' is larger than the engine's profile",
                    inst->m->name, t->name);
            src_gpu = mt == TRITONSERVER_MEMORY_GPU;
            /* Binary tensors of the HTTP protocol sit at any offset of the
             * body: those are copied. plugrt never writes a network input. */
            if (nb == 1 && nbuf == 1 && src_gpu == on_gpu &&
                (!on_gpu || mt_id == inst->index) &&
                (uintptr_t)buf % (on_gpu ? TP_ALIGN_GPU : TP_ALIGN) == 0) {
                stage = (uint8_t *)(uintptr_t)buf;
                inst->in_place++;
                break;
            }
            if ((err = copy_mem(inst, stage + at, on_gpu, buf, src_gpu, (size_t)bytes,
                                &queued,
                                src_gpu ? "copying from GPU memory the input"
                                        : "copying to the GPU the input",
                                t->name)))
                return err;
            *host_wait |= queued && !on_gpu;
            at += (size_t)bytes;
        }
    }
    if ((st = prt_context_set_tensor_address(inst->ctx, t->name, stage)))
        return tp_prt_error(st, "binding an input");
    return NULL;
}

/* Takes a scratch slot (the threads parameter) and gives it back. */
/* The slots are the instance's engine's (its GPU's); one lock and one
 * condition serve all of a model's engines. */
static TRITONSERVER_Error *slot_take(tp_instance *inst, int32_t *slot)
{
    tp_model *m = inst->m;
    tp_engine *e = inst->eng;
    prt_status st;
    *slot = -1;
    if (!m->threads)
        return NULL;
    pthread_mutex_lock(&m->lock);
    while (e->nb_free == 0)
        pthread_cond_wait(&m->cond, &m->lock);
    *slot = e->slot_free[--e->nb_free];
    pthread_mutex_unlock(&m->lock);
    if ((st = prt_context_set_memory(inst->ctx, e->slot_memory[*slot],
                                     m->ctx_memory ? m->ctx_memory : 256)))
        return tp_prt_error(st, "scratch memory");
    return NULL;
}

static void slot_give(tp_instance *inst, int32_t slot)
{
    tp_model *m = inst->m;
    tp_engine *e = inst->eng;
    if (slot < 0)
        return;
    pthread_mutex_lock(&m->lock);
    e->slot_free[e->nb_free++] = slot;
    pthread_cond_broadcast(&m->cond);
    pthread_mutex_unlock(&m->lock);
}

/* Sends one request its outputs: the rows [offset, offset + batch) of each
 * (or the whole output when the model has no batch dim). */
static TRITONSERVER_Error *answer(tp_instance *inst, tp_req *r, int64_t total)
{
    const tp_model *m = inst->m;
    TRITONBACKEND_Response *resp = NULL;
    uint32_t nb = 0;
    int queued = 0;
    TRITONSERVER_Error *err = TRITONBACKEND_RequestOutputCount(r->request, &nb);
    if (!err)
        err = TRITONBACKEND_ResponseNew(&resp, r->request);
    for (uint32_t k = 0; !err && k < nb; k++) {
        const char *name = NULL;
        int32_t o = -1;
        prt_dims shape;
        size_t row_bytes, bytes, at;
        TRITONBACKEND_Output *out = NULL;
        void *buf = NULL;
        TRITONSERVER_MemoryType mt;
        int64_t mt_id;
        int on_gpu;
        if ((err = TRITONBACKEND_RequestOutputName(r->request, k, &name)))
            break;
        for (int32_t j = 0; j < m->nb_out; j++)
            if (m->out[j].served && strcmp(m->out[j].name, name) == 0)
                o = j;
        if (o < 0) {
            err = tp_error(TRITONSERVER_ERROR_INVALID_ARG,
                           "model '%s' has no output '%s'", m->name, name);
            break;
        }
        shape = inst->out_shape[o];
        if (m->out[o].as_one) /* its 0-D value, as [1] */
            shape = (prt_dims){.nb_dims = 1, .d = {1}};
        row_bytes = (size_t)volume(&shape, m->max_batch > 0 ? 1 : 0) *
                    prt_dtype_size(m->out[o].dtype);
        at = 0;
        if (m->max_batch > 0) {
            if (shape.d[0] != total) {
                err =
                    tp_error(TRITONSERVER_ERROR_INTERNAL,
                             "model '%s': output '%s' has %lld rows for a batch of %lld",
                             m->name, name, (long long)shape.d[0], (long long)total);
                break;
            }
            shape.d[0] = r->batch;
            at = (size_t)r->offset * row_bytes;
            bytes = (size_t)r->batch * row_bytes;
        } else {
            bytes = row_bytes;
        }
        /* Asked for where the output is (the engine's GPU, or the host);
         * written wherever the server's allocator puts it (HTTP and gRPC
         * answer host memory, CUDA shared memory a GPU's). */
        on_gpu = m->out[o].location == PRT_LOCATION_DEVICE;
        mt = on_gpu ? TRITONSERVER_MEMORY_GPU : TRITONSERVER_MEMORY_CPU;
        mt_id = on_gpu ? inst->index : 0;
        if ((err = TRITONBACKEND_ResponseOutput(resp, &out, name, m->out[o].triton_dtype,
                                                shape.d, (uint32_t)shape.nb_dims)) ||
            (err = TRITONBACKEND_OutputBuffer(out, &buf, bytes, &mt, &mt_id)))
            break;
        if (bytes && !buf) {
            err = tp_error(TRITONSERVER_ERROR_INTERNAL,
                           "model '%s': the server gave output '%s' no memory", m->name,
                           name);
            break;
        }
        if ((err = copy_mem(inst, buf, mt == TRITONSERVER_MEMORY_GPU,
                            (uint8_t *)inst->out_stage[o] + at, on_gpu, bytes, &queued,
                            "copying the output", name)))
            break;
    }
    if (!err && queued) {
        prt_status st = prt_stream_synchronize(PRT_DEVICE_CUDA, inst->stream);
        if (st)
            err = tp_prt_error(st, "waiting for the device");
    }
    if (err) {
        if (resp)
            TRITONBACKEND_ResponseDelete(resp);
        return err;
    }
    return TRITONBACKEND_ResponseSend(resp, TRITONSERVER_RESPONSE_COMPLETE_FINAL, NULL);
}

/* Runs one group: shapes, inputs, enqueue, outputs, answers. */
static void run_group(tp_instance *inst, tp_req **group, int32_t nb, uint64_t exec_start)
{
    tp_model *m = inst->m;
    int64_t total = 0;
    uint64_t t1, t2, t3;
    int32_t slot = -1;
    int host_wait = 0;
    TRITONSERVER_Error *err = NULL;
    prt_status st = PRT_OK;
    inst->in_place = 0;
    for (int32_t g = 0; g < nb; g++) {
        group[g]->offset = total;
        total += group[g]->batch;
    }
    for (int32_t i = 0; i < m->nb_in && !err; i++) {
        prt_dims d = inst->in_shape[i];
        if (m->max_batch > 0)
            d.d[0] = total;
        /* Static inputs too: the configuration may allow dims (-1) the
         * engine fixes, and the engine must not read past a request's
         * smaller buffer. */
        if ((st = prt_context_set_input_shape(inst->ctx, m->in[i].name, &d))) {
            char what[256];
            snprintf(what, sizeof what, "model '%s'", m->name);
            err = tp_prt_error(st, what);
        }
        if (!err)
            err = gather_input(inst, i, group, nb,
                               (size_t)volume(&d, m->max_batch > 0 ? 1 : 0) *
                                   prt_dtype_size(m->in[i].dtype),
                               &host_wait);
    }
    /* Host memory the GPU wrote (a CPU engine's input, a shape input) is
     * read by the run: wait for it. A CUDA engine's device inputs are
     * ordered before its run on the same stream. */
    if (!err && host_wait && (st = prt_stream_synchronize(PRT_DEVICE_CUDA, inst->stream)))
        err = tp_prt_error(st, "waiting for the inputs' copies");
    t1 = tp_now_ns();
    if (!err)
        err = slot_take(inst, &slot);
    if (!err && (st = prt_context_enqueue(inst->ctx, inst->stream))) {
        char what[256];
        snprintf(what, sizeof what, "model '%s': the run failed", m->name);
        err = tp_prt_error(st, what);
    }
    for (int32_t o = 0; o < m->nb_out && !err; o++)
        if (m->out[o].served && (st = prt_context_get_tensor_shape(
                                     inst->ctx, m->out[o].name, &inst->out_shape[o]))) {
            char what[256];
            snprintf(what, sizeof what, "model '%s': output '%s'", m->name,
                     m->out[o].name);
            err = tp_prt_error(st, what);
        }
    if (!err && inst->stream && (st = prt_stream_synchronize(inst->device, inst->stream)))
        err = tp_prt_error(st, "waiting for the device");
    slot_give(inst, slot);
    t2 = tp_now_ns();
    if (err) {
        /* Every request of the group gets the message. */
        const char *msg = TRITONSERVER_ErrorMessage(err);
        TRITONSERVER_Error_Code code = TRITONSERVER_ErrorCode(err);
        for (int32_t g = 0; g < nb; g++)
            answer_error(inst, group[g], TRITONSERVER_ErrorNew(code, msg));
        TRITONSERVER_ErrorDelete(err);
        return;
    }
    /* For tests and people reading a verbose log: which instance ran what,
     * when (steady-clock ns), and how its inputs came; logged before the
     * answers, so a client that has its answer finds the line. */
    if (TRITONSERVER_LogIsEnabled(TRITONSERVER_LOG_VERBOSE))
        tp_log(TRITONSERVER_LOG_VERBOSE,
               "instance '%s': %d request(s), batch %lld, run %llu..%llu ns, %d of %d "
               "inputs read in place",
               inst->name, (int)nb, (long long)total, (unsigned long long)t1,
               (unsigned long long)t2, (int)inst->in_place, (int)m->nb_in);
    for (int32_t g = 0; g < nb; g++) {
        TRITONSERVER_Error *e = answer(inst, group[g], total);
        t3 = tp_now_ns();
        if (e)
            answer_error(inst, group[g], e);
        else
            release(inst, group[g], true, exec_start, t1, t2, t3);
    }
    t3 = tp_now_ns();
    err = TRITONBACKEND_ModelInstanceReportBatchStatistics(
        inst->triton, m->max_batch > 0 ? (uint64_t)total : 1, exec_start, t1, t2, t3);
    if (err)
        TRITONSERVER_ErrorDelete(err);
}

/* Grows the per-execution tables to `count` requests (more requests than
 * batch rows do not come; should they, the tables grow once). */
static int reserve(tp_instance *inst, uint32_t count)
{
    tp_req *r;
    tp_req **g;
    prt_dims *s;
    if (count <= inst->cap_reqs)
        return 1;
    r = realloc(inst->reqs, sizeof *r * count);
    if (r)
        inst->reqs = r;
    g = realloc(inst->group, sizeof *g * count);
    if (g)
        inst->group = g;
    s = realloc(inst->req_shapes, sizeof *s * count * (size_t)(inst->m->nb_in + 1));
    if (s)
        inst->req_shapes = s;
    if (!r || !g || !s)
        return 0;
    inst->cap_reqs = count;
    return 1;
}

void tp_instance_execute(tp_instance *inst, TRITONBACKEND_Request **requests,
                         uint32_t count)
{
    tp_model *m = inst->m;
    uint64_t exec_start = tp_now_ns();
    size_t nb_in = (size_t)m->nb_in;
    uint32_t pending = 0, first = 0;
    /* No GPU to make current here: the context makes its own current for
     * its runs (switch_device), and copies and waits on its stream need
     * none. */
    if (!reserve(inst, count)) {
        for (uint32_t k = 0; k < count; k++) {
            tp_req r = {requests[k], 1, 0, 0};
            answer_error(inst, &r,
                         tp_error(TRITONSERVER_ERROR_UNAVAILABLE,
                                  "model '%s': out of memory for %u requests", m->name,
                                  count));
        }
        return;
    }
    for (uint32_t k = 0; k < count; k++) {
        tp_req *r = &inst->reqs[k];
        TRITONSERVER_Error *err;
        r->request = requests[k];
        r->done = 0;
        if ((err = check_request(inst, r, &inst->req_shapes[k * nb_in])))
            answer_error(inst, r, err);
        else
            pending++;
    }
    /* Groups: the first pending request and every later one that fits with
     * it; run_group answers all of a group's. */
    while (pending) {
        int32_t nb = 0;
        int64_t rows = 0;
        while (inst->reqs[first].done)
            first++;
        memcpy(inst->in_shape, &inst->req_shapes[first * nb_in],
               sizeof(prt_dims) * nb_in);
        for (uint32_t k = first; k < count; k++) {
            tp_req *r = &inst->reqs[k];
            if (r->done)
                continue;
            if (nb > 0 && (m->max_batch == 0 || rows + r->batch > m->max_batch ||
                           !same_rows(m, inst->in_shape, &inst->req_shapes[k * nb_in])))
                continue;
            inst->group[nb++] = r;
            rows += r->batch;
        }
        run_group(inst, inst->group, nb, exec_start);
        pending -= (uint32_t)nb;
        exec_start = tp_now_ns();
    }
}
