/*
 * A Triton model served by plugrt (model.c): its engine, one per device its
 * instances are on, its plugin registry and the tables of its inputs and
 * outputs.
 *
 * Threads: the model (engine, I/O tables) is read only after
 * TRITONBACKEND_ModelInitialize, except its list of engines (one per GPU,
 * grown as instances are made) and the slots of `threads`, which its lock
 * guards.
 */
#ifndef PLUGRT_TRITON_MODEL_H
#define PLUGRT_TRITON_MODEL_H

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
    /* A 0-D tensor of a model without a batch dim, configured as dims [1]
     * (Triton refuses both empty dims and, there, an empty reshape):
     * requests bring it as [1], responses give it as [1]. Every other
     * reshape Triton applies itself, so the backend sees engine shapes. */
    int32_t as_one;
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
    /* Why the registry lacks the standard plugin library it would have by
     * default (no plugins parameter), for the message of an engine that
     * needs it; NULL when it has it, or the parameter chose. Static. */
    const char *no_standard;
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

TRITONSERVER_Error *tp_model_create(TRITONBACKEND_Model *triton, tp_model **out);
void tp_model_destroy(tp_model *m);
/* Calls fn on each item of a comma-separated list (trimmed, empty ones
 * skipped) until one fails, and returns its error. */
typedef TRITONSERVER_Error *(*tp_item_fn)(tp_model *m, char *item, void *ctx);
TRITONSERVER_Error *tp_each_item(tp_model *m, const char *list, tp_item_fn fn, void *ctx);

/* plugins.c: the model's registry from its plugins parameter (NULL when
 * absent: the standard library), relative paths from the model's directory
 * `dir`. */
TRITONSERVER_Error *tp_model_load_plugins(tp_model *m, const char *list, const char *dir);
/* Looks for the standard plugin library once, before any model loads;
 * tp_standard_plugins is its path then, or NULL. */
void tp_standard_plugins_find(void);
const char *tp_standard_plugins(void);

/* The model's engine on GPU `index` (the current device), loaded there on
 * first use; on the CPU, the one engine. */
TRITONSERVER_Error *tp_model_engine(tp_model *m, int32_t index, tp_engine **out);

#endif /* PLUGRT_TRITON_MODEL_H */
