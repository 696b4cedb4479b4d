/*
 * A model instance (instance.c): one execution context of its model's
 * engine, and the execution of the requests the server hands it.
 *
 * Threads: the server calls TRITONBACKEND_ModelInstanceExecute from one
 * thread per instance, so the instances of a model run at once, and
 * everything an execution writes belongs to its instance.
 */
#ifndef PLUGRT_TRITON_INSTANCE_H
#define PLUGRT_TRITON_INSTANCE_H

#include "model.h"

/* One request of an execution while it is being served. */
typedef struct tp_req {
    TRITONBACKEND_Request *request;
    int64_t batch;  /* its first dim (1 when the model has no batch dim) */
    int32_t done;   /* answered and released */
    int64_t offset; /* first row in the batch */
} tp_req;

typedef struct tp_instance {
    tp_model *m;
    TRITONBACKEND_ModelInstance *triton;
    char name[128];
    tp_engine *eng; /* its device's engine */
    prt_context *ctx;
    int32_t device;   /* the engine's prt_device */
    int32_t index;    /* CUDA: the instance's GPU (Triton's device id); 0 */
    void *stream;     /* CUDA: this instance's stream on that GPU; CPU: NULL */
    int32_t in_place; /* inputs of the last run read where the server had them */
    /* Staging memory, one block per input and output at its largest size,
     * where its location (prt_location) says: inputs of several requests are
     * gathered there, outputs written there and cut per request. */
    void **in_stage;
    void **out_stage;
    /* Per execution, for cap_reqs requests: each one's state, a group's
     * members, and each one's input shapes (nb_in per request). */
    tp_req *reqs;
    tp_req **group;
    prt_dims *req_shapes;
    uint32_t cap_reqs;
    prt_dims *in_shape;  /* per input: the shape of the running group */
    prt_dims *out_shape; /* per output: after the run */
} tp_instance;

TRITONSERVER_Error *tp_instance_create(tp_model *m, TRITONBACKEND_ModelInstance *triton,
                                       tp_instance **out);
void tp_instance_destroy(tp_instance *inst);
void tp_instance_execute(tp_instance *inst, TRITONBACKEND_Request **requests,
                         uint32_t count);

#endif /* PLUGRT_TRITON_INSTANCE_H */
