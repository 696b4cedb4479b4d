/*
 * NonMaxSuppression's CUDA kernel (ops.h, nms.cu). The optional inputs
 * (max_output_boxes_per_class, iou_threshold, score_threshold) stay in
 * device memory and the kernel reads them there: the run is not waited for.
 * An iou_threshold outside [0, 1], which the CPU refuses, selects nothing
 * here (DESIGN-NOTES, what a kernel cannot refuse). K stays on the device,
 * as NonZero's does: later layers get the true dims from it.
 */
#include <string.h>

#include "ops/cuda/launch.h"
#include "ops/cuda/ops.h"
#include "ops/ops_data.h"

enum { NMS_BOXES, NMS_SCORES, NMS_MAX_OUT, NMS_IOU, NMS_SCORE_TH };

/* Input i when it is given and not empty (the CPU's rule), else NULL. */
static const void *nms_input(const prt_tensor_desc *in, int32_t nb_in,
                             const void *const *x, int32_t i)
{
    return nb_in > i && base_volume(&in[i].dims) > 0 ? x[i] : NULL;
}

OPC_KERNEL(opc_nms)
{
    const prt_dims *bd = &in[NMS_BOXES].dims, *sd = &in[NMS_SCORES].dims;
    nms_fields f;
    opk_nms_args a;
    int64_t cap, groups, per_class;
    char b1[128], b2[128];
    (void)dtype, (void)nb_out;
    if (bd->nb_dims != 3 || sd->nb_dims != 3 || bd->d[2] != 4 || sd->d[0] != bd->d[0] ||
        sd->d[2] != bd->d[1])
        return op_fail(o, PRT_ERR_SHAPE,
                       "boxes %s and scores %s must be [B, N, 4] and [B, C, N]",
                       base_dims_format(bd, BASE_DIMS_LIST, b1, sizeof b1),
                       base_dims_format(sd, BASE_DIMS_LIST, b2, sizeof b2));
    if (bd->d[1] > INT32_MAX)
        return op_fail(o, PRT_ERR_SHAPE, "%lld boxes per batch; at most %d are taken",
                       (long long)bd->d[1], (int)INT32_MAX);
    nms_fields_of(o, &f);
    memset(&a, 0, sizeof a);
    a.x_boxes = x[NMS_BOXES];
    a.x_scores = x[NMS_SCORES];
    a.max_out_in = nms_input(in, nb_in, x, NMS_MAX_OUT);
    a.iou_in = nms_input(in, nb_in, x, NMS_IOU);
    a.score_th_in = nms_input(in, nb_in, x, NMS_SCORE_TH);
    a.batches = bd->d[0], a.boxes = bd->d[1], a.classes = sd->d[1];
    a.max_out = f.max_out, a.iou = f.iou, a.score_th = f.score_th;
    a.center = f.center_point_box, a.has_score_th = f.has_score_th;
    a.y = y[0], a.k = y[1];
    /* Each (batch, class) writes into its own slot of output 0: the
     * output holds the bound the shape function declared, a slot of
     * min(N, max) rows each (N when max comes as an input). */
    cap = out[0].dims.nb_dims == 2 ? out[0].dims.d[0] : 0;
    groups = a.batches * a.classes;
    per_class = a.max_out_in || a.boxes < f.max_out ? a.boxes : f.max_out;
    if (per_class < 0)
        per_class = 0;
    a.slot = groups > 0 ? cap / groups : 0;
    if (groups > 0 && a.slot < per_class)
        return op_fail(o, PRT_ERR_SHAPE,
                       "output 0 holds %lld rows; %lld batches and classes may select "
                       "%lld boxes each",
                       (long long)cap, (long long)groups, (long long)per_class);
    return opc_status(o, opk_nms(&a, ws, nms_workspace_bytes(a.boxes), stream));
}
