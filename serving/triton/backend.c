/*
 * The plugrt backend for Triton Inference Server: the entry points the
 * server looks up in libtriton_plugrt.so, over models (model.h) and their
 * instances (instance.h).
 *
 * A Triton model is one plugrt engine (loaded from 1/model.plan or built
 * from 1/model.onnx) with its own plugin registry; a model instance is one
 * execution context of that engine. Only plugrt's public API is used
 * (include/plugrt), as by any other program.
 *
 * Threads: the server initializes and finalizes models and instances on its
 * own threads, one call at a time per object; it calls
 * TRITONBACKEND_ModelInstanceExecute from one thread per instance, so the
 * instances of a model run at once (model.h says what a model shares
 * between them).
 */
#include "common.h"
#include "instance.h"
#include "model.h"

/* plugrt's log goes to the server's log. */
static void tp_prt_log(void *user, int32_t severity, const char *message)
{
    TRITONSERVER_LogLevel level = severity == PRT_SEV_ERROR     ? TRITONSERVER_LOG_ERROR
                                  : severity == PRT_SEV_WARNING ? TRITONSERVER_LOG_WARN
                                  : severity == PRT_SEV_INFO    ? TRITONSERVER_LOG_INFO
                                                             : TRITONSERVER_LOG_VERBOSE;
    (void)user;
    tp_log(level, "plugrt: %s", message);
}

/* ---- entry points ------------------------------------------------------- */

TRITONSERVER_Error *TRITONBACKEND_Initialize(TRITONBACKEND_Backend *backend)
{
    uint32_t major = 0, minor = 0;
    const char *name = "";
    TRITONSERVER_Error *err = TRITONBACKEND_ApiVersion(&major, &minor);
    if (err)
        return err;
    if ((err = TRITONBACKEND_BackendName(backend, &name)))
        return err;
    if (major != TP_TRITONBACKEND_API_MAJOR || minor < TP_TRITONBACKEND_API_MINOR)
        return tp_error(
            TRITONSERVER_ERROR_UNSUPPORTED,
            "backend '%s' (plugrt %s) needs Triton backend API %d.%d or a later "
            "1.x; this server speaks %u.%u",
            name, prt_version_string(), TP_TRITONBACKEND_API_MAJOR,
            TP_TRITONBACKEND_API_MINOR, major, minor);
    /* Once, before any model loads: prt_set_logger is not safe against
     * concurrent logging. */
    prt_set_logger(tp_prt_log, NULL,
                   TRITONSERVER_LogIsEnabled(TRITONSERVER_LOG_VERBOSE) ? PRT_SEV_VERBOSE
                                                                       : PRT_SEV_INFO);
    tp_standard_plugins_find();
    tp_log(TRITONSERVER_LOG_INFO,
           "backend '%s': plugrt %s, Triton backend API %u.%u, standard plugins %s", name,
           prt_version_string(), major, minor,
           tp_standard_plugins() ? tp_standard_plugins() : "(none)");
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_Finalize(TRITONBACKEND_Backend *backend)
{
    (void)backend;
    prt_set_logger(NULL, NULL, PRT_SEV_ERROR);
    return NULL;
}

TRITONSERVER_Error *
TRITONBACKEND_GetBackendAttribute(TRITONBACKEND_Backend *backend,
                                  TRITONBACKEND_BackendAttribute *backend_attributes)
{
    (void)backend;
    /* A model that names no instance group runs on the CPU on every
     * machine, as plugrt builds for the CPU unless told otherwise (the
     * server would pick KIND_GPU where there is a GPU); KIND_GPU is asked
     * for in the configuration. */
    return TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup(
        backend_attributes, TRITONSERVER_INSTANCEGROUPKIND_CPU, 0, NULL, 0);
}

TRITONSERVER_Error *TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model *model)
{
    tp_model *m = NULL;
    TRITONSERVER_Error *err = tp_model_create(model, &m);
    if (err)
        return err;
    if ((err = TRITONBACKEND_ModelSetState(model, m)))
        tp_model_destroy(m);
    return err;
}

TRITONSERVER_Error *TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model *model)
{
    void *state = NULL;
    TRITONSERVER_Error *err = TRITONBACKEND_ModelState(model, &state);
    if (err)
        return err;
    tp_model_destroy(state);
    return NULL;
}

TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceInitialize(TRITONBACKEND_ModelInstance *instance)
{
    TRITONBACKEND_Model *model = NULL;
    void *state = NULL;
    tp_instance *inst = NULL;
    TRITONSERVER_Error *err = TRITONBACKEND_ModelInstanceModel(instance, &model);
    if (!err)
        err = TRITONBACKEND_ModelState(model, &state);
    if (!err)
        err = tp_instance_create(state, instance, &inst);
    if (!err && (err = TRITONBACKEND_ModelInstanceSetState(instance, inst)))
        tp_instance_destroy(inst);
    return err;
}

TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceFinalize(TRITONBACKEND_ModelInstance *instance)
{
    void *state = NULL;
    TRITONSERVER_Error *err = TRITONBACKEND_ModelInstanceState(instance, &state);
    if (err)
        return err;
    tp_instance_destroy(state);
    return NULL;
}

TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceExecute(TRITONBACKEND_ModelInstance *instance,
                                   TRITONBACKEND_Request **requests,
                                   const uint32_t request_count)
{
    void *state = NULL;
    TRITONSERVER_Error *err = TRITONBACKEND_ModelInstanceState(instance, &state);
    /* An error here leaves the requests with the server, which answers
     * them; from here on every request is answered and released. */
    if (err)
        return err;
    tp_instance_execute(state, requests, request_count);
    return NULL;
}
