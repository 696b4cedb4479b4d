/*
 * The part of Triton Inference Server's C API that this backend calls and
 * implements, declared here from the documented API (TRITONBACKEND API
 * 1.19 and the TRITONSERVER core API it refers to, as served by
 * tritonserver 2.51.0). The official tritonbackend.h and tritonserver.h are
 * not used: they need C++ to compile (bool, default arguments) and their
 * build pulls other repositories. Only what the backend uses is here; the
 * enum values are the API's and must not change.
 *
 * Every TRITONSERVER_Error* result is NULL on success; a non-NULL error is
 * owned by whoever receives it and freed with TRITONSERVER_ErrorDelete.
 * Strings the server returns are borrowed for the lifetime of the object
 * they came from.
 */
#ifndef PLUGRT_TRITON_API_H
#define PLUGRT_TRITON_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The backend API version this backend is written against. */
#define TP_TRITONBACKEND_API_MAJOR 1
#define TP_TRITONBACKEND_API_MINOR 19

/* Entry points the server looks up in the backend library. */
#if defined(__GNUC__)
#define TP_EXPORT __attribute__((visibility("default")))
#else
#define TP_EXPORT
#endif

/* ---- opaque server objects ---------------------------------------------- */

typedef struct TRITONSERVER_Error TRITONSERVER_Error;
typedef struct TRITONSERVER_Message TRITONSERVER_Message;
typedef struct TRITONBACKEND_Backend TRITONBACKEND_Backend;
typedef struct TRITONBACKEND_Model TRITONBACKEND_Model;
typedef struct TRITONBACKEND_ModelInstance TRITONBACKEND_ModelInstance;
typedef struct TRITONBACKEND_Request TRITONBACKEND_Request;
typedef struct TRITONBACKEND_Response TRITONBACKEND_Response;
typedef struct TRITONBACKEND_Input TRITONBACKEND_Input;
typedef struct TRITONBACKEND_Output TRITONBACKEND_Output;
typedef struct TRITONBACKEND_BackendAttribute TRITONBACKEND_BackendAttribute;

/* ---- enums (values fixed by the API) ------------------------------------ */

/* Tensor element types. */
typedef enum TRITONSERVER_DataType {
    TRITONSERVER_TYPE_INVALID = 0,
    TRITONSERVER_TYPE_BOOL = 1,
    TRITONSERVER_TYPE_UINT8 = 2,
    TRITONSERVER_TYPE_UINT16 = 3,
    TRITONSERVER_TYPE_UINT32 = 4,
    TRITONSERVER_TYPE_UINT64 = 5,
    TRITONSERVER_TYPE_INT8 = 6,
    TRITONSERVER_TYPE_INT16 = 7,
    TRITONSERVER_TYPE_INT32 = 8,
    TRITONSERVER_TYPE_INT64 = 9,
    TRITONSERVER_TYPE_FP16 = 10,
    TRITONSERVER_TYPE_FP32 = 11,
    TRITONSERVER_TYPE_FP64 = 12,
    TRITONSERVER_TYPE_BYTES = 13,
    TRITONSERVER_TYPE_BF16 = 14
} TRITONSERVER_DataType;

/* Where a buffer lives; the id that goes with GPU memory is the device. */
typedef enum TRITONSERVER_MemoryType {
    TRITONSERVER_MEMORY_CPU = 0,
    TRITONSERVER_MEMORY_CPU_PINNED = 1,
    TRITONSERVER_MEMORY_GPU = 2
} TRITONSERVER_MemoryType;

typedef enum TRITONSERVER_InstanceGroupKind {
    TRITONSERVER_INSTANCEGROUPKIND_AUTO = 0,
    TRITONSERVER_INSTANCEGROUPKIND_CPU = 1,
    TRITONSERVER_INSTANCEGROUPKIND_GPU = 2,
    TRITONSERVER_INSTANCEGROUPKIND_MODEL = 3
} TRITONSERVER_InstanceGroupKind;

typedef enum TRITONSERVER_LogLevel {
    TRITONSERVER_LOG_INFO = 0,
    TRITONSERVER_LOG_WARN = 1,
    TRITONSERVER_LOG_ERROR = 2,
    TRITONSERVER_LOG_VERBOSE = 3
} TRITONSERVER_LogLevel;

typedef enum TRITONSERVER_Error_Code {
    TRITONSERVER_ERROR_UNKNOWN = 0,
    TRITONSERVER_ERROR_INTERNAL = 1,
    TRITONSERVER_ERROR_NOT_FOUND = 2,
    TRITONSERVER_ERROR_INVALID_ARG = 3,
    TRITONSERVER_ERROR_UNAVAILABLE = 4,
    TRITONSERVER_ERROR_UNSUPPORTED = 5,
    TRITONSERVER_ERROR_ALREADY_EXISTS = 6,
    TRITONSERVER_ERROR_CANCELLED = 7
} TRITONSERVER_Error_Code;

/* TRITONBACKEND_RequestRelease flags. */
#define TRITONSERVER_REQUEST_RELEASE_ALL 1u
/* TRITONBACKEND_ResponseSend flags: the last response of its request. */
#define TRITONSERVER_RESPONSE_COMPLETE_FINAL 1u

typedef enum TRITONBACKEND_ArtifactType {
    TRITONBACKEND_ARTIFACT_FILESYSTEM = 0
} TRITONBACKEND_ArtifactType;

/* ---- core API: errors, messages, logging -------------------------------- */

TRITONSERVER_Error *TRITONSERVER_ErrorNew(TRITONSERVER_Error_Code code, const char *msg);
void TRITONSERVER_ErrorDelete(TRITONSERVER_Error *error);
TRITONSERVER_Error_Code TRITONSERVER_ErrorCode(TRITONSERVER_Error *error);
const char *TRITONSERVER_ErrorMessage(TRITONSERVER_Error *error);

/* A message is a JSON document; the server copies `base`. */
TRITONSERVER_Error *
TRITONSERVER_MessageNewFromSerializedJson(TRITONSERVER_Message **message,
                                          const char *base, size_t byte_size);
TRITONSERVER_Error *TRITONSERVER_MessageDelete(TRITONSERVER_Message *message);
/* The JSON text, borrowed until the message is deleted (not NUL-terminated
 * by contract: use byte_size). */
TRITONSERVER_Error *TRITONSERVER_MessageSerializeToJson(TRITONSERVER_Message *message,
                                                        const char **base,
                                                        size_t *byte_size);

bool TRITONSERVER_LogIsEnabled(TRITONSERVER_LogLevel level);
TRITONSERVER_Error *TRITONSERVER_LogMessage(TRITONSERVER_LogLevel level,
                                            const char *filename, const int line,
                                            const char *msg);

/* ---- backend API: what the server offers the backend -------------------- */

TRITONSERVER_Error *TRITONBACKEND_ApiVersion(uint32_t *major, uint32_t *minor);
TRITONSERVER_Error *TRITONBACKEND_BackendName(TRITONBACKEND_Backend *backend,
                                              const char **name);

TRITONSERVER_Error *TRITONBACKEND_ModelName(TRITONBACKEND_Model *model,
                                            const char **name);
TRITONSERVER_Error *TRITONBACKEND_ModelVersion(TRITONBACKEND_Model *model,
                                               uint64_t *version);
/* The model's directory in the repository (artifact type FILESYSTEM). */
TRITONSERVER_Error *
TRITONBACKEND_ModelRepository(TRITONBACKEND_Model *model,
                              TRITONBACKEND_ArtifactType *artifact_type,
                              const char **location);
/* The model's configuration as JSON (config_version 1); the caller owns
 * the message. */
TRITONSERVER_Error *TRITONBACKEND_ModelConfig(TRITONBACKEND_Model *model,
                                              const uint32_t config_version,
                                              TRITONSERVER_Message **model_config);
/* Whether the backend is to fill in what the configuration leaves out. */
TRITONSERVER_Error *TRITONBACKEND_ModelAutoCompleteConfig(TRITONBACKEND_Model *model,
                                                          bool *auto_complete_config);
/* Replaces inputs, outputs, max_batch_size and (if none was chosen) the
 * scheduler; only from TRITONBACKEND_ModelInitialize. The caller keeps the
 * message. */
TRITONSERVER_Error *TRITONBACKEND_ModelSetConfig(TRITONBACKEND_Model *model,
                                                 const uint32_t config_version,
                                                 TRITONSERVER_Message *model_config);
TRITONSERVER_Error *TRITONBACKEND_ModelState(TRITONBACKEND_Model *model, void **state);
TRITONSERVER_Error *TRITONBACKEND_ModelSetState(TRITONBACKEND_Model *model, void *state);

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceName(TRITONBACKEND_ModelInstance *instance,
                                                    const char **name);
TRITONSERVER_Error *TRITONBACKEND_ModelInstanceKind(TRITONBACKEND_ModelInstance *instance,
                                                    TRITONSERVER_InstanceGroupKind *kind);
TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceDeviceId(TRITONBACKEND_ModelInstance *instance,
                                    int32_t *device_id);
TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceModel(TRITONBACKEND_ModelInstance *instance,
                                 TRITONBACKEND_Model **model);
TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceState(TRITONBACKEND_ModelInstance *instance, void **state);
TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceSetState(TRITONBACKEND_ModelInstance *instance, void *state);
/* Statistics: per request (success, and four steady-clock nanosecond
 * stamps: execution start, compute start, compute end, execution end),
 * before the request is released; per execution, the summed batch size. The
 * statistics extension's inference_count and execution_count come from
 * these. */
TRITONSERVER_Error *TRITONBACKEND_ModelInstanceReportStatistics(
    TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Request *request,
    const bool success, const uint64_t exec_start_ns, const uint64_t compute_start_ns,
    const uint64_t compute_end_ns, const uint64_t exec_end_ns);
TRITONSERVER_Error *TRITONBACKEND_ModelInstanceReportBatchStatistics(
    TRITONBACKEND_ModelInstance *instance, const uint64_t batch_size,
    const uint64_t exec_start_ns, const uint64_t compute_start_ns,
    const uint64_t compute_end_ns, const uint64_t exec_end_ns);

TRITONSERVER_Error *TRITONBACKEND_RequestId(TRITONBACKEND_Request *request,
                                            const char **id);
/* The request's input called `name`; an error if it has none. */
TRITONSERVER_Error *TRITONBACKEND_RequestInput(TRITONBACKEND_Request *request,
                                               const char *name,
                                               TRITONBACKEND_Input **input);
TRITONSERVER_Error *TRITONBACKEND_RequestInputCount(TRITONBACKEND_Request *request,
                                                    uint32_t *count);
/* The outputs the client asked for (all of them when it named none). */
TRITONSERVER_Error *TRITONBACKEND_RequestOutputCount(TRITONBACKEND_Request *request,
                                                     uint32_t *count);
TRITONSERVER_Error *TRITONBACKEND_RequestOutputName(TRITONBACKEND_Request *request,
                                                    const uint32_t index,
                                                    const char **output_name);
TRITONSERVER_Error *TRITONBACKEND_RequestRelease(TRITONBACKEND_Request *request,
                                                 uint32_t release_flags);

/* Any out pointer may be NULL. byte_size is what the client sent, which
 * need not match the shape. */
TRITONSERVER_Error *
TRITONBACKEND_InputProperties(TRITONBACKEND_Input *input, const char **name,
                              TRITONSERVER_DataType *datatype, const int64_t **shape,
                              uint32_t *dims_count, uint64_t *byte_size,
                              uint32_t *buffer_count);
/* One of the input's buffers; memory_type and memory_type_id say on entry
 * what the caller prefers and on return where the buffer is. */
TRITONSERVER_Error *TRITONBACKEND_InputBuffer(TRITONBACKEND_Input *input,
                                              const uint32_t index, const void **buffer,
                                              uint64_t *buffer_byte_size,
                                              TRITONSERVER_MemoryType *memory_type,
                                              int64_t *memory_type_id);

TRITONSERVER_Error *TRITONBACKEND_ResponseNew(TRITONBACKEND_Response **response,
                                              TRITONBACKEND_Request *request);
TRITONSERVER_Error *TRITONBACKEND_ResponseDelete(TRITONBACKEND_Response *response);
TRITONSERVER_Error *TRITONBACKEND_ResponseOutput(TRITONBACKEND_Response *response,
                                                 TRITONBACKEND_Output **output,
                                                 const char *name,
                                                 const TRITONSERVER_DataType datatype,
                                                 const int64_t *shape,
                                                 const uint32_t dims_count);
/* Memory for an output's data, owned by the response; memory_type and
 * memory_type_id as for TRITONBACKEND_InputBuffer. */
TRITONSERVER_Error *TRITONBACKEND_OutputBuffer(TRITONBACKEND_Output *output,
                                               void **buffer,
                                               const uint64_t buffer_byte_size,
                                               TRITONSERVER_MemoryType *memory_type,
                                               int64_t *memory_type_id);
/* Hands the response to the server; `error` (NULL for success) stays the
 * caller's. */
TRITONSERVER_Error *TRITONBACKEND_ResponseSend(TRITONBACKEND_Response *response,
                                               const uint32_t send_flags,
                                               TRITONSERVER_Error *error);

/* The instance groups a model without `instance_group` gets, in order of
 * preference (count 0: the server's default count; no device ids: the
 * server's choice); only from TRITONBACKEND_GetBackendAttribute. */
TRITONSERVER_Error *TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup(
    TRITONBACKEND_BackendAttribute *backend_attributes,
    const TRITONSERVER_InstanceGroupKind kind, const uint64_t count,
    const uint64_t *device_ids, const uint64_t id_count);

/* ---- backend API: what the backend implements --------------------------- */

/* Optional: asked once, while the backend loads, for its attributes. */
TP_EXPORT TRITONSERVER_Error *
TRITONBACKEND_GetBackendAttribute(TRITONBACKEND_Backend *backend,
                                  TRITONBACKEND_BackendAttribute *backend_attributes);

TP_EXPORT TRITONSERVER_Error *TRITONBACKEND_Initialize(TRITONBACKEND_Backend *backend);
TP_EXPORT TRITONSERVER_Error *TRITONBACKEND_Finalize(TRITONBACKEND_Backend *backend);
TP_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model *model);
TP_EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model *model);
TP_EXPORT TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceInitialize(TRITONBACKEND_ModelInstance *instance);
TP_EXPORT TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceFinalize(TRITONBACKEND_ModelInstance *instance);
/* Called by one server thread per instance, never twice at once for one
 * instance; instances of a model run concurrently. On success the backend
 * owns the requests: it answers and releases every one. */
TP_EXPORT TRITONSERVER_Error *
TRITONBACKEND_ModelInstanceExecute(TRITONBACKEND_ModelInstance *instance,
                                   TRITONBACKEND_Request **requests,
                                   const uint32_t request_count);

#endif /* PLUGRT_TRITON_API_H */
