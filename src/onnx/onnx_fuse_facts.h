/* The importer's fusion planner, shared between the patterns (onnx_fuse.c)
 * and the shape facts they prove with (onnx_fuse_facts.c): the planner's
 * context, its lookups, and the facts. Internal to src/onnx. */
#ifndef PLUGRT_ONNX_FUSE_FACTS_H
#define PLUGRT_ONNX_FUSE_FACTS_H

#include "onnx_internal.h"

/* What is known of a value's shape before any layer exists (fc_fact_node):
 * rank (0: unknown), last dim (-1: unknown), and lead, the name of a value
 * whose dims other than the last are the same as this one's (the value
 * itself when nothing better is known); pre, a value of one dim less whose
 * dims are this one's but the last (the dynamo export's Reshape(x, [m's
 * dim 0, m's dim 1, N]) of a rank-2 m), or NULL. */
typedef struct fc_fact {
    int32_t rank;
    int64_t last;
    const char *lead;
    const char *pre;
} fc_fact;

/* What the planner looks things up in. */
typedef struct fuse_ctx {
    onnx_import *imp;
    fc_fact *facts; /* per order position: its node's first output */
    const int32_t *order;
    const onnx_choice *choices;
    int32_t n;
    onnx_names uses;        /* name -> times read by nodes or as a graph output */
    onnx_names consumer;    /* name -> order position of a node reading it */
    onnx_names producer;    /* name -> order position of the node making it */
    int32_t *taken;         /* per order position: already in a fusion */
    int32_t *shared_dq;     /* per order position: a DQ of x that a QDQ fusion
                               read past, other nodes reading it too */
    prt_status *oom;        /* set when a constant could not be loaded for want of
                               memory: the plan fails rather than fuse less */
    struct fc_sdims *sdims; /* per order position: static dims (onnx_fuse_shapes.c),
                               made on first use */
} fuse_ctx;

/* One entry of a shape input (fc_shape_entries). */
typedef struct fc_entry {
    int kind; /* 0 unknown, 1 the constant v, 2 dim v of the value t */
    int64_t v;
    const char *t;
} fc_entry;

/* 1 when the values a and b are proved to have one shape, every dim a
 * number or the same graph input's dynamic dim (onnx_fuse_shapes.c). */
int fc_same_static_shape(fuse_ctx *c, const char *a, const char *b);

/* ---- lookups (onnx_fuse.c) ---- */

/* The node at order position pos. */
const Onnx__NodeProto *fc_node(const fuse_ctx *c, int32_t pos);
/* The node at `pos` is imported as the built-in `op`. */
int fc_is(const fuse_ctx *c, int32_t pos, const char *op);
/* name's entry in t, else -1 (also for the empty name). */
int32_t fc_get(const onnx_names *t, const char *name);
/* A node's only output, else "". */
const char *fc_out(const Onnx__NodeProto *n);
/* The tensor of a constant: an initializer, a Constant node's 'value', or
 * either through built-in Identity nodes; NULL for anything else. */
const Onnx__TensorProto *fc_const_proto(const fuse_ctx *c, const char *name);
/* The perm of the Transpose at pos: its length, perm in p[0..4]; 0 if
 * none or longer. */
int fc_perm(const fuse_ctx *c, int32_t pos, int64_t *p);

/* ---- facts: static shapes for the attention's head split and merge
 * (onnx_fuse_facts.c) ---- */

/* The integers of a constant (an int64 or int32 tensor of at most max
 * elements): their count, else -1. */
int fc_ints(const fuse_ctx *c, const char *name, int64_t *v, int max);
/* What is known of `name`'s shape: 1 and *o, else 0. */
int fc_fact_of(const fuse_ctx *c, const char *name, fc_fact *o);
/* The entries of a Reshape's shape: a constant, or a Concat (axis 0) of
 * constants and Unsqueeze(Gather(Shape(t), constant k)), PyTorch's
 * x.size(k). Their count (at most max), else -1. */
int fc_shape_entries(const fuse_ctx *c, const char *name, fc_entry *e, int max);
/* Entry k of a Reshape of x is x's own dim k (a 0 copies it when
 * zero_copies). */
int fc_entry_keeps(const fuse_ctx *c, const fc_entry *e, int64_t k, const fc_fact *x,
                   int zero_copies);
/* The facts of node pos's first output, from its inputs' (the planner
 * calls it in order, so c->facts holds every earlier node's). */
void fc_fact_node(fuse_ctx *c, int32_t pos);

/* ---- dynamically quantized products (onnx_dynq.c) ---- */

/* One DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul [-> Add]
 * chain as one layer: DynamicQuantizeMatMul (dynamic: the
 * DynamicQuantizeLinear is a member) or MatMulIntegerToFloat. */
typedef struct onnx_dynq {
    int dynamic;
    int32_t members[6], nb_members;
    int32_t last;       /* order position of the chain's last node */
    const char *ins[7]; /* the op's inputs */
    int32_t nb_ins;
    const char *bias;   /* the Add's constant, or NULL */
    const char *output; /* the last node's output */
} onnx_dynq;
/* The MatMulInteger at pos starts a chain that folds: 1 and *d (an info
 * line says why one that reads a DynamicQuantizeLinear does not). */
int onnx_dynq_match(fuse_ctx *c, int32_t pos, onnx_dynq *d);

#endif /* PLUGRT_ONNX_FUSE_FACTS_H */
