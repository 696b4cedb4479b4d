/*
 * The loss built-ins, NegativeLogLikelihoodLoss (ONNX opsets 12, 13, 22)
 * and SoftmaxCrossEntropyLoss (12, 13) (loss.c), and two ops models carry
 * beside them: MeanVarianceNormalization (9, 13; mvn.c) and Det (11;
 * det.c). Internal to libplugrt; builtins.c lists the creators,
 * src/ops/cuda/loss_cuda.c reads the fields and the geometry through the
 * functions below. Each element's arithmetic is loss_elem.h's, shared with
 * the CUDA kernels.
 */
#ifndef PLUGRT_OPS_OPS_LOSS_H
#define PLUGRT_OPS_OPS_LOSS_H

#include "ops/loss_elem.h"
#include "ops/op_common.h"

extern const prt_plugin_creator op_nll_loss_creator;
extern const prt_plugin_creator op_sce_loss_creator;
extern const prt_plugin_creator op_mvn_creator;
extern const prt_plugin_creator op_det_creator;

/* A loss run's parameters from its fields and its inputs' descs (scores,
 * targets, optional weight): the dims are checked by then (the scaffold's
 * infer), so this only reads them. */
void loss_params(const op_object *o, const prt_tensor_desc *in, opk_loss_params *p);

/* MeanVarianceNormalization's groups over X of dims x (mvn.c): its axes
 * normalized and checked against x's rank, as every run does first. */
prt_status mvn_params(const op_object *o, const prt_dims *x, int32_t dtype,
                      opk_mvn_params *p);

/* Det's matrices: X [*, M, M] as `batch` matrices of m x m. */
void det_geom(const prt_dims *x, int64_t *batch, int64_t *m);

#endif /* PLUGRT_OPS_OPS_LOSS_H */
