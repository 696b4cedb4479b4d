/*
 * The coverage matrix's cases (test_op_coverage.c): one generator per
 * built-in op (or family), called once per (op, device, dtype) cell that
 * plugrt declares (prt_builtin_get_dtypes), making a few cases of that
 * dtype on random shapes (odd sizes, size 1, size 0 where the op allows it)
 * and handing each to cov_case, which runs it on the cell's device against
 * the CPU's reference.
 *
 * A generator receives the op's name (one may serve a family: Add and Sub,
 * every Reduce*) and the cell's key dtype: input 0's, Where's X's, the
 * output's for an op without inputs (prt_builtin_get_dtypes says which).
 * It must make at least one case for every dtype the op declares; the test
 * fails a cell that gets none, and an op with no generator.
 */
#ifndef PLUGRT_COV_H
#define PLUGRT_COV_H

#include "op_case.h"

typedef struct cov cov;

/* Runs case k of the current cell (messages name it by `what`, the
 * cell's device and dtype, and its inputs' dims): the CPU's baseline kernels on one
 * thread as the reference, the cell's device (the CPU's fastest kernels on several
 * threads, or CUDA) as what is tested, outputs poisoned differently in the
 * two runs, every output compared as k says (rtol, exact). Where the cell's
 * device must refuse k's dtype (a CUDA kernel that takes fewer dtypes than
 * the CPU's), checks instead that the build fails naming the layer, the op
 * and the dtype. Frees k's inputs. `what` names the case in messages. */
void cov_case(cov *c, const char *what, oc_case *k);

/* printf's output added to the string in buf (cap bytes in all): a case's
 * name built in parts. */
void cov_append(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The generator's random source. */
tu_rng *cov_rng(cov *c);
/* The cell's device (PRT_DEVICE_*). */
int32_t cov_device(cov *c);
/* float64, int16, uint16, uint32, uint64: no device kernel makes them
 * (op_device.h), so casts to them run on the CPU alone. */
static inline int cov_dtype_wide(int32_t t)
{
    return t == PRT_FLOAT64 || t == PRT_INT16 || t == PRT_UINT16 || t == PRT_UINT32 ||
           t == PRT_UINT64;
}

/* Random dims of rank r: sizes in [1, 9], odd ones more often, and with
 * zero_ok one of them 0 now and then. */
prt_dims cov_dims(cov *c, int32_t rank, int zero_ok);

/* Random values of `dtype` (ot_random's; floats in [-1, 1), with NaN,
 * infinities and signed zeros sprinkled in when specials is set). */
ot_tensor cov_random(cov *c, int32_t dtype, prt_dims d, int specials);

/* The tolerance for results of float dtype dt computed in float32 with
 * relative error f32 (half floats round once more); 0 for other dtypes. */
double cov_rtol(int32_t dt, double f32);

typedef void (*cov_gen)(cov *c, const char *op, int32_t dtype);

typedef struct cov_entry {
    const char *op;
    cov_gen gen;
} cov_entry;

/* The generators, in tables by family, each ended by {NULL, NULL}. */
extern const cov_entry cov_ew_entries[];     /* cov_ew.c: elementwise */
extern const cov_entry cov_data_entries[];   /* cov_data.c: data movement */
extern const cov_entry cov_nn_entries[];     /* cov_nn.c: networks' ops */
extern const cov_entry cov_reduce_entries[]; /* cov_reduce.c: reductions, scans */
extern const cov_entry cov_quant_entries[];  /* cov_quant.c: quantization */
extern const cov_entry cov_qgemm_entries[];  /* cov_qgemm.c: integer products */
extern const cov_entry cov_signal_entries[]; /* cov_signal.c: windows, DFT, STFT */
extern const cov_entry cov_loss_entries[];   /* cov_loss.c: losses, MVN, Det */

#endif /* PLUGRT_COV_H */
