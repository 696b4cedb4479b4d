/*
 * One built-in op as a network of one layer, built for a device, loaded
 * back and run there: the cases of test_op_coverage (every op x device x
 * dtype) and test_cuda_ops (CUDA against the CPU). A case's inputs are
 * network inputs, constants, or constant shape inputs (Reshape's shape,
 * Slice's starts); every output is marked and read back, data-dependent
 * ones at the dims the run reports.
 */
#ifndef PLUGRT_OP_CASE_H
#define PLUGRT_OP_CASE_H

#include <stddef.h>

#include "op_testutil.h"

/* What each input of a case is: a network input (copied to the device), a
 * constant data input, a constant shape input only (Reshape's shape), or a
 * constant that is both (Slice's starts, Range's bounds). */
enum { OC_DATA, OC_CONST, OC_SHAPE, OC_BOTH };

#define OC_MAXOUT 8

typedef struct oc_case {
    const char *op;
    const prt_field *f;
    int32_t nf;
    ot_tensor in[OT_MAXIN];
    int32_t role[OT_MAXIN];
    int32_t nb;
    int32_t nb_out; /* 0: 1 */
    double rtol;    /* ot_check_close's; 0 with exact unset: exact values */
    int exact;      /* the same bytes, not only the same values */
} oc_case;

/* The case's network built for `device` and reloaded through an empty
 * registry; NULL with the build's message in err (cap bytes) when the
 * build fails. */
prt_engine *oc_build(int32_t device, const oc_case *c, char *err, size_t cap);

/* Runs e on `device` (a context of `threads` threads; 0 the default) with
 * the case's network inputs; out[k] gets output k, every byte set to
 * `poison` before the run so that an element the run leaves unwritten
 * shows. 0 on success; otherwise 1 with the reason printed and a check
 * failed. out[] is the caller's to free either way (ot_free). */
int oc_run(prt_engine *e, int32_t device, const oc_case *c, int32_t threads, int poison,
           ot_tensor *out);

/* Compares got[] with want[] (c->nb_out outputs) as the case says: values
 * within c->rtol (NaN matching NaN), and the same bytes when c->exact.
 * Failures are printed under `what` and counted. */
void oc_compare(const char *what, const oc_case *c, const ot_tensor *got,
                const ot_tensor *want);

/* Frees the case's input tensors. */
void oc_free(oc_case *c);

/* Random dims a and b broadcast to each other (numpy's rule), by kind:
 * 0 the same dims, 1 b a scalar, 2 b a row, 3 both sides broadcast
 * ([x, 1, z] and [y, 1]), 4 a a one-element tensor of lower rank, 5 an
 * empty dim, 6 rank 6 against rank 5, mixed. Kinds 0, 1, 2 and 5
 * broadcast b to a alone (unidirectionally: PRelu's slope). */
#define OC_BCAST_KINDS 7
void oc_bcast_pair(tu_rng *r, int kind, prt_dims *a, prt_dims *b);

#endif /* PLUGRT_OP_CASE_H */
