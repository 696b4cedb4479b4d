/*
 * The harness of the built-in op tests (test_ops.c, test_math_ops.c,
 * test_shape_ops.c): host tensors of any dtype read and written as double,
 * random fills, index helpers for plain C references, a result check with a
 * tolerance, and one-op networks made from a built-in creator (namespace
 * "plugrt"), built, run, serialized, loaded through an empty registry and
 * run again.
 *
 * Failures of checks are recorded through testutil.h's counters.
 */
#ifndef PLUGRT_OP_TESTUTIL_H
#define PLUGRT_OP_TESTUTIL_H

#include "testutil.h"

/* ---- tensors --------------------------------------------------------------- */

/* A host tensor; data is malloc'd (one spare element, so that empty tensors
 * still have an address) and freed with ot_free. */
typedef struct ot_tensor {
    int32_t dtype;
    prt_dims dims;
    void *data;
} ot_tensor;

/* Dims of rank nb from the first nb of a..e. D0()..D5() are the shorthands. */
prt_dims ot_dims5(int32_t nb, int64_t a, int64_t b, int64_t c, int64_t d, int64_t e);
#define D0() ot_dims5(0, 0, 0, 0, 0, 0)
#define D1(a) ot_dims5(1, a, 0, 0, 0, 0)
#define D2(a, b) ot_dims5(2, a, b, 0, 0, 0)
#define D3(a, b, c) ot_dims5(3, a, b, c, 0, 0)
#define D4(a, b, c, d) ot_dims5(4, a, b, c, d, 0)
#define D5(a, b, c, d, e) ot_dims5(5, a, b, c, d, e)

/* A zeroed tensor; data is NULL when the allocation fails. */
ot_tensor ot_make(int32_t dtype, prt_dims dims);
/* Frees t's data and sets it to NULL; safe to repeat. */
void ot_free(ot_tensor *t);
/* Element i as a double (halves exactly; bool and integers as numbers). */
double ot_get(const ot_tensor *t, int64_t i);
/* Stores v at element i, converted to t's dtype (C casts; halves rounded). */
void ot_set(ot_tensor *t, int64_t i, double v);
/* float32, float16 or bfloat16. */
int ot_is_float(int32_t dtype);
/* Random values: floats uniform in [-1, 1), integers in [-20, 20] (bool and
 * uint8 in their range); `nonzero` replaces zeros with 1 (divisors). */
ot_tensor ot_random(int32_t dtype, prt_dims dims, tu_rng *r, int nonzero);

/* ---- references -------------------------------------------------------------- */

/* idx (d->nb_dims values) of the row-major linear index lin in d. */
void ot_unravel(const prt_dims *d, int64_t lin, int64_t *idx);
/* Linear index into `in` of output index idx (numpy broadcasting). */
int64_t ot_bcast_at(const prt_dims *in, const prt_dims *out, const int64_t *idx);
int ot_dims_eq(const prt_dims *a, const prt_dims *b);
/* One check: got's dims are want_dims and every value is within
 * rtol * max(1, |want|) (rtol 0: exact). NaN matches NaN and an infinity
 * itself at any tolerance. The first difference is printed under `what`. */
void ot_check_close(const char *what, const ot_tensor *got, const prt_dims *want_dims,
                    const double *want, double rtol);

/* Conv by its definition, in double: for X [N, C, D...] and W
 * [M, C / group, K...] of ns spatial dims (up to 3), strides st[], dilations
 * dl[], padding before pb[] and output sizes O[] (the caller applies ONNX's
 * padding rules), want[(n M + m) ovol + p] = b[m] (0 without b) plus every
 * product x * w of the window that lies inside X. */
void ot_conv_ref(const ot_tensor *x, const ot_tensor *w, const ot_tensor *b,
                 int64_t group, const int64_t *st, const int64_t *dl, const int64_t *pb,
                 const int64_t *O, double *want);

/* ---- fields ------------------------------------------------------------------ */

/* Fields borrowing name and value (which must outlive their use). */
prt_field ot_fld_i32(const char *name, const int32_t *v, int64_t n);
prt_field ot_fld_f32(const char *name, const float *v);
prt_field ot_fld_str(const char *name, const char *s);

/* ---- networks layer by layer ------------------------------------------------- */

/* A network under construction: the first failure sticks in `st`, and the
 * calls after it do nothing. */
typedef struct ot_net {
    prt_network *n;
    prt_status st;
} ot_net;

/* Adds built-in op `op` (fields f) over data inputs `in` and shape inputs
 * `sin`; returns its output 0, or -1 once g has failed. */
int32_t ot_net_layer(ot_net *g, const char *op, const prt_field *f, int32_t nf,
                     const int32_t *in, int32_t nin, const int32_t *sin, int32_t nsin);
/* A constant (rank 0 or 1, n values of dtype) named c<counter>; its id. */
int32_t ot_net_const(ot_net *g, int32_t dtype, int32_t rank, int64_t n, const void *v);
/* Names tensor t `name` and marks it an output. */
void ot_net_output(ot_net *g, int32_t t, const char *name);

/* ---- one-op networks ---------------------------------------------------------- */

/* The most inputs ot_build_op takes. */
#define OT_MAXIN 9 /* QLinearConv with its bias */

/* Creates built-in op `name` version "1" (PRT_PHASE_BUILD); the caller owns
 * *out. */
PRT_NODISCARD prt_status ot_make_op(const char *name, const prt_field *fields,
                                    int32_t nb_fields, prt_plugin **out);
/* Builds inputs X0.. (in[i]'s dtype and dims) -> op -> output Y. Dims whose
 * bit is set in dyn[i] are -1, with a profile from the given value to
 * value + 3; dyn NULL: all static. */
PRT_NODISCARD prt_status ot_build_op(const char *name, const prt_field *fields,
                                     int32_t nb_fields, const ot_tensor *in,
                                     int32_t nb_in, const uint32_t *dyn,
                                     prt_engine **out);
/* ot_build_op with static dims where input i is a constant of the network
 * (its data in[i].data, name X<i>) when bit i of `consts` is set. */
PRT_NODISCARD prt_status ot_build_op_const(const char *name, const prt_field *fields,
                                           int32_t nb_fields, const ot_tensor *in,
                                           int32_t nb_in, uint32_t consts,
                                           prt_engine **out);
/* Runs e with inputs X0.. (shapes set where e's dims are dynamic) and makes
 * *out for Y, which the caller frees (its data is NULL after a failure). */
PRT_NODISCARD prt_status ot_run_engine(const prt_engine *e, const ot_tensor *in,
                                       int32_t nb_in, ot_tensor *out);
/* ot_run_engine on a context of `threads` intra-op threads (0: the
 * default). */
PRT_NODISCARD prt_status ot_run_engine_threads(const prt_engine *e, const ot_tensor *in,
                                               int32_t nb_in, int32_t threads,
                                               ot_tensor *out);
/* ot_run_engine_threads on an engine of ot_build_op_const: the inputs whose
 * bit is set in `consts` are its constants, not inputs to feed. */
PRT_NODISCARD prt_status ot_run_engine_const(const prt_engine *e, const ot_tensor *in,
                                             int32_t nb_in, uint32_t consts,
                                             int32_t threads, ot_tensor *out);
/* Serializes e and loads it back through an empty registry (built-ins need
 * none); the caller destroys *out. */
PRT_NODISCARD prt_status ot_reload(const prt_engine *e, prt_engine **out);
/* ot_build_op, ot_run_engine, ot_reload, run again: one check that both
 * results are the same bytes. *out holds the result (as ot_run_engine). */
PRT_NODISCARD prt_status ot_run_op_dyn(const char *name, const prt_field *fields,
                                       int32_t nb_fields, const ot_tensor *in,
                                       int32_t nb_in, const uint32_t *dyn,
                                       ot_tensor *out);
/* ot_run_op_dyn with static dims. */
PRT_NODISCARD prt_status ot_run_op(const char *name, const prt_field *fields,
                                   int32_t nb_fields, const ot_tensor *in, int32_t nb_in,
                                   ot_tensor *out);

/* Runs ot_run_op with the n-th allocation failing, for n = 0, 1, ... until
 * it succeeds (at most OT_MAX_ALLOCS times); a failure that leaves no
 * message is recorded. Returns the n that succeeded, so the caller can check
 * that the run allocates at all and that it ended. */
#define OT_MAX_ALLOCS 100000
int64_t ot_alloc_failures(const char *name, const prt_field *fields, int32_t nb_fields,
                          const ot_tensor *in, int32_t nb_in);

#endif /* PLUGRT_OP_TESTUTIL_H */
