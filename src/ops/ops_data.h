/*
 * Creators of the data-movement and data-dependent built-ins (issue 8):
 * Size (in shape.c, beside Shape), Split, GatherND, ScatterND,
 * ScatterElements, Tile, Pad, Trilu, OneHot, DepthToSpace, SpaceToDepth,
 * EyeLike, NonZero, Compress, Unique and Hardmax, with the few helpers
 * their files share (ops_data.c). Kept apart from
 * op_common.h and shape_ops.h so that these ops and the scaffold can change
 * independently. Internal to libplugrt; builtins.c lists them.
 *
 * The data-dependent ones (NonZero, Compress, Unique) declare a size
 * tensor as their LAST output (a 0-D int64 beside the ONNX outputs), so
 * the importer maps the node's outputs to the first ones by position and
 * the size stays internal. Its opt is half the upper bound (rounded up, so
 * that a one-element input tunes for 1, not 0).
 */
#ifndef PLUGRT_OPS_OPS_DATA_H
#define PLUGRT_OPS_OPS_DATA_H

#include "ops/op_common.h"

extern const prt_plugin_creator op_size_creator;
extern const prt_plugin_creator op_split_creator;
extern const prt_plugin_creator op_gather_nd_creator;
extern const prt_plugin_creator op_scatter_nd_creator;
extern const prt_plugin_creator op_scatter_elements_creator;
extern const prt_plugin_creator op_tile_creator;
extern const prt_plugin_creator op_pad_creator;
extern const prt_plugin_creator op_trilu_creator;
extern const prt_plugin_creator op_one_hot_creator;
extern const prt_plugin_creator op_depth_to_space_creator;
extern const prt_plugin_creator op_space_to_depth_creator;
extern const prt_plugin_creator op_eye_like_creator;
extern const prt_plugin_creator op_nonzero_creator;
extern const prt_plugin_creator op_compress_creator;
extern const prt_plugin_creator op_unique_creator;
extern const prt_plugin_creator op_hardmax_creator;

/* Element i of a tensor of any dtype as a double (halves converted; bool
 * and integers as numbers). */
double opd_get(const void *x, int32_t dtype, int64_t i);
/* Whether element i is non-zero: floats compare != 0 (NaN is non-zero,
 * -0 is zero, for halves too), integers and bool != 0. */
int opd_nonzero(const void *x, int32_t dtype, int64_t i);
/* Whether two concrete dims are the same. */
int opd_dims_eq(const prt_dims *a, const prt_dims *b);
/* Row-major strides (in elements) of dims d. */
void opd_strides(const prt_dims *d, int64_t *strides);
/* The size tensor of a data-dependent op: declares output `index` with
 * upper bound `upper` and opt CEIL_DIV(upper, 2); returns its symbol, or
 * NULL after setting the op's error. */
const prt_expr *opd_declare_size(op_object *o, prt_expr_builder *eb, int32_t index,
                                 const prt_expr *upper);
/* ---- what the other devices' kernels share with the CPU's ------------- */

/* Split (split.c): the axis, every output's dims checked against the
 * parts' lengths (from sv, the split input's values on the host; NULL
 * where only the device has them: the outputs' own lengths, which the same
 * values gave); the volumes before and after the axis. */
prt_status split_check(const op_object *o, const prt_tensor_desc *in, int32_t nb_in,
                       const prt_tensor_desc *out, int32_t nb_out, const int64_t *sv,
                       int32_t *axis, int64_t *outer, int64_t *inner);

/* Tile (tile_pad.c): od is a tiling of id. */
prt_status tile_check(const op_object *o, const prt_dims *id, const prt_dims *od);

/* Pad (tile_pad.c), resolved for a run: the mode (gpu_args.h's
 * OPK_PAD_*), the padded axes and, where the pads are on the host (the
 * field, or pads_in given), each dim's begin pad; the constant (fill, in
 * the dtype) or the input that holds it. */
typedef struct pad_plan {
    int32_t mode;
    int32_t nax;
    int32_t ax[PRT_MAX_DIMS];
    int32_t pads_known; /* 0: input 1's pads are device data */
    int64_t begin[PRT_MAX_DIMS];
    int32_t fill_input; /* constant_value's input, or -1 (fill) */
    uint8_t fill[8];
} pad_plan;
prt_status pad_plan_make(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                         int32_t nb_in, const prt_dims *od, const void *pads_in,
                         pad_plan *pl);

/* Trilu (trilu.c): 1 for the upper triangle. */
int32_t trilu_upper(const op_object *o);

/* DepthToSpace, SpaceToDepth (depth_space.c): the 6-D walk (dims od,
 * input strides st) that reads the input in the output's order. */
void ds_view(const op_object *o, const prt_dims *id, int64_t *od, int64_t *st);

/* EyeLike (eye_like.c): its diagonal, and 1 in the output's dtype. */
int64_t eye_like_k(const op_object *o);
void eye_like_one(int32_t dtype, uint8_t one[8]);

/* OneHot (one_hot.c): the output checked against the indices; the dims
 * before the axis (outer), the depth and the indices' dims from the axis
 * on (inner). */
prt_status oh_check(const op_object *o, const prt_tensor_desc *in, const prt_dims *od,
                    int64_t *outer, int64_t *depth, int64_t *inner);

/* Compress (compress.c): the input viewed as [outer, len, inner] around
 * the axis (without one, flattened: [1, volume, 1]; axis 0). */
prt_status compress_geometry(const op_object *o, const prt_dims *d, int32_t *axis,
                             int64_t *outer, int64_t *len, int64_t *inner);

/* Unique (unique.c): X as m items of outer runs of inner elements, with
 * the checks of the outputs' dims; sorted's field. */
prt_status unique_plan(const op_object *o, const prt_tensor_desc *in,
                       const prt_tensor_desc *out, int64_t *m, int64_t *outer,
                       int64_t *inner, int32_t *sorted);

/* GatherND (gather_nd.c): batch_dims. */
int32_t gnd_batch_dims(const op_object *o);

/* ScatterND and ScatterElements (scatter.c): 1 for ScatterElements; the
 * reduction (0 none, 1 add, 2 mul, 3 max, 4 min); ScatterElements' axis
 * for data of rank r. */
int32_t scatter_is_elements(const op_object *o);
int32_t scatter_reduction(const op_object *o);
prt_status scatter_axis(const op_object *o, int32_t r, int32_t *axis);

/* ---- Shrink (shrink.c) and ReverseSequence (reverse_sequence.c) --------- */
extern const prt_plugin_creator op_shrink_creator;
extern const prt_plugin_creator op_reverse_sequence_creator;
/* Shrink's fields. */
void shrink_params(const op_object *o, float *lambd, float *bias);
/* ReverseSequence's batch axis (0 or 1; the time axis is the other). */
int32_t revseq_batch_axis(const op_object *o);

/* ---- NonMaxSuppression (nms.c): data-dependent, a size tensor last ------ */
extern const prt_plugin_creator op_nms_creator;
/* An NMS object's fields, for the CUDA kernel (nms_cuda.c). */
typedef struct nms_fields {
    int32_t center_point_box, max_out, has_score_th;
    float iou, score_th;
} nms_fields;
void nms_fields_of(const op_object *o, nms_fields *f);
/* The workspace the op declares for `boxes` boxes a batch. */
int64_t nms_workspace_bytes(int64_t boxes);

extern const prt_plugin_creator op_tfidf_creator; /* TfIdfVectorizer (tfidf.c) */

#endif /* PLUGRT_OPS_OPS_DATA_H */
