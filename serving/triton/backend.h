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
 * only after TRITONBACKEND_ModelInitialize, except its list of engines
 * (one per GPU, grown as instances are made) and the slots of `threads`,
 * which its lock guards; everything an execution writes belongs to its
 * instance.
 *
 * GPUs: plugrt works on the calling thread's current GPU, so every entry
 * point that touches an engine on CUDA makes its instance's GPU current
 * first (tp_device_enter) and restores the server's afterwards.
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

/* The model's engine on one device: the first where the model was built or
 * loaded, and one more for each further GPU its instances are on (loaded
 * from the first's plan: an engine's weights and contexts stay on the GPU
 * that was current when it was made). Each has its own scratch blocks for
 * the `threads` parameter. */
typedef struct tp_engine {
    int32_t index; /* the device's index: the GPU; 0 on the CPU */
    prt_engine *engine;
    void **slot_memory; /* [threads] scratch blocks on this device */
    int32_t *slot_free; /* stack of free slot indices */
    int32_t nb_free;
    struct tp_engine *next;
} tp_engine;

typedef struct tp_model {
    TRITONBACKEND_Model *triton;
    char name[128];
    prt_registry *reg;
    prt_engine *engine; /* the first engine's: what the I/O tables describe */
    tp_engine *engines; /* the first, then one per further GPU (lock) */
    int32_t device;     /* the engines' prt_device */
    int32_t max_batch;  /* max_batch_size: 0 when the first dim is no batch */
    int32_t nb_in, nb_out;
    tp_io *in, *out;

    /* The `threads` parameter: at most `threads` enqueues of this model at
     * once on each device, each in one of that engine's `threads` scratch
     * blocks that the instances' contexts (made without memory of their
     * own) borrow for a run. 0: no limit, every context owns its scratch
     * memory. */
    int32_t threads;
    int64_t ctx_memory; /* bytes of one scratch block */
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

/* Makes GPU `index` the calling thread's current device when `device` is
 * CUDA (every plugrt call for an engine on that GPU needs it), keeping the
 * one it replaces in *saved; tp_device_leave puts that back, so the
 * server's threads keep their own. Nothing on the CPU. */
TRITONSERVER_Error *tp_device_enter(int32_t device, int32_t index, int32_t *saved);
void tp_device_leave(int32_t device, int32_t saved);

/* ---- models (model.c) and instances (instance.c) ------------------------ */

TRITONSERVER_Error *tp_model_create(TRITONBACKEND_Model *triton, tp_model **out);
void tp_model_destroy(tp_model *m);
/* The model's engine on GPU `index` (the current device), loaded there on
 * first use; on the CPU, the one engine. */
TRITONSERVER_Error *tp_model_engine(tp_model *m, int32_t index, tp_engine **out);
TRITONSERVER_Error *tp_instance_create(tp_model *m, TRITONBACKEND_ModelInstance *triton,
                                       tp_instance **out);
void tp_instance_destroy(tp_instance *inst);
void tp_instance_execute(tp_instance *inst, TRITONBACKEND_Request **requests,
                         uint32_t count);

#endif /* PLUGRT_TRITON_BACKEND_H */
