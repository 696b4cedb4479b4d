/*
 * The plugrt backend for Triton Inference Server: shared declarations.
 *
 * A Triton model is one plugrt engine (loaded from 1/model.plan or built
 * from 1/model.onnx) with its own plugin registry; a model instance is one
 * execution context of that engine. Only plugrt's public API is used
 * (include/plugrt), as by any other program.
 *
 * Threads: the server initializes and finalizes models and instances on its
 * own threads, one call at a time per object; it calls
 * TRITONBACKEND_ModelInstanceExecute from one thread per instance, so the
 * instances of a model run at once. The model (engine, I/O tables) is read
 * only after TRITONBACKEND_ModelInitialize, except the slots of `threads`,
 * which its lock guards; everything an execution writes belongs to its
 * instance.
 */
#ifndef PLUGRT_TRITON_BACKEND_H
#define PLUGRT_TRITON_BACKEND_H

#include <pthread.h>

#include "plugrt/plugrt.h"
#include "triton_api.h"

/* One input or output of the engine as the backend serves it. */
typedef struct tp_io {
    const char *name; /* the engine's, borrowed for its lifetime */
    int32_t is_input;
    int32_t dtype;        /* prt_dtype */
    int32_t triton_dtype; /* TRITONSERVER_DataType */
    int32_t location;     /* prt_location of its memory */
    int32_t is_shape_input;
    uint32_t dd_mask;       /* dims that depend on data */
    prt_dims dims;          /* -1 where dynamic */
    prt_dims min, opt, max; /* profile 0 (inputs) */
    int64_t max_bytes;      /* at the largest shapes */
    int32_t served;         /* outputs: listed in the configuration */
} tp_io;

typedef struct tp_model {
    TRITONBACKEND_Model *triton;
    char name[128];
    prt_registry *reg;
    prt_engine *engine;
    int32_t device;    /* the engine's prt_device */
    int32_t max_batch; /* max_batch_size: 0 when the first dim is no batch */
    int32_t nb_in, nb_out;
    tp_io *in, *out;

    /* The `threads` parameter: at most `threads` enqueues of this model at
     * once, each in one of `threads` scratch blocks that the instances'
     * contexts (made without memory of their own) borrow for a run. 0: no
     * limit, every context owns its scratch memory. */
    int32_t threads;
    int64_t ctx_memory; /* bytes of one scratch block */
    void **slot_memory;
    int32_t *slot_free; /* stack of free slot indices */
    int32_t nb_free;
    pthread_mutex_t lock;
    pthread_cond_t cond;
} tp_model;

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
    prt_context *ctx;
    int32_t device; /* the engine's prt_device */
    void *stream;   /* CUDA: this instance's stream; CPU: NULL */
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

/* ---- helpers (backend.c) ------------------------------------------------ */

/* A server error with a printf-style message (NULL when even that fails:
 * the server then reports success, so callers pass only real errors). */
TRITONSERVER_Error *tp_error(TRITONSERVER_Error_Code code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A server error for a failed plugrt call: "<what>: <prt_last_error()>". */
TRITONSERVER_Error *tp_prt_error(prt_status st, const char *what);
void tp_log(TRITONSERVER_LogLevel level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Steady-clock nanoseconds, as the statistics want them. */
uint64_t tp_now_ns(void);

/* Triton's data type for a plugrt dtype and back (INVALID / -1 if none);
 * config names ("TYPE_FP32") and protocol names ("FP32"). */
int32_t tp_triton_dtype(int32_t dtype);
int32_t tp_prt_dtype_of_config(const char *type_name);
const char *tp_config_type_name(int32_t dtype);
const char *tp_triton_dtype_name(int32_t triton_dtype);
void tp_dims_str(const prt_dims *d, char *buf, size_t size);

/* ---- models (model.c) and instances (instance.c) ------------------------ */

TRITONSERVER_Error *tp_model_create(TRITONBACKEND_Model *triton, tp_model **out);
void tp_model_destroy(tp_model *m);
TRITONSERVER_Error *tp_instance_create(tp_model *m, TRITONBACKEND_ModelInstance *triton,
                                       tp_instance **out);
void tp_instance_destroy(tp_instance *inst);
void tp_instance_execute(tp_instance *inst, TRITONBACKEND_Request **requests,
                         uint32_t count);

#endif /* PLUGRT_TRITON_BACKEND_H */
