/*
 * NonMaxSuppression (namespace "plugrt", version "1"), ONNX opsets 10 and
 * 11 (11 only clarified the docs): per batch and class, the boxes chosen
 * greedily by descending score, each dropped when its IoU with a box
 * already chosen in its class exceeds iou_threshold.
 *
 * Inputs: boxes float32 [B, N, 4]; scores float32 [B, C, N]; then,
 * optional and by ONNX's positions, max_output_boxes_per_class (int64),
 * iou_threshold (float32) and score_threshold (float32), each of one
 * element (an empty tensor counts as absent), read at run time.
 * Fields (the importer folds constant inputs into them, so that a constant
 * max_output_boxes_per_class bounds the output): center_point_box (0:
 * boxes are [y1, x1, y2, x2], any two opposite corners; 1: [x_center,
 * y_center, width, height]), max_output_boxes_per_class (default 0),
 * iou_threshold (default 0), score_threshold (optional; absent: no
 * threshold). An input that is given wins over its field.
 *
 * Output 0: int64 [K, 3], rows (batch, class, box) ordered by batch, then
 * class, then selection order. Output 1: K, the size tensor (a 0-D int64),
 * declared with upper bound B * C * N (B * C * min(N, max) when the field
 * gives max and the input does not) and opt half of it (ops_data.h); the
 * importer keeps it internal.
 *
 * The rules are ONNX Runtime's (its CPU kernel is the reference the node
 * tests were made with): a box is a candidate when its score is strictly
 * above score_threshold; candidates are taken by score, equal scores by
 * the smaller box index, a NaN score after every number; a box whose area
 * or intersection with a chosen box is not positive is never suppressed by
 * it; IoU is computed in float32 as intersection / (area1 + area2 -
 * intersection) and suppresses when > iou_threshold, which must lie in
 * [0, 1]. Each batch's corners and areas are computed once for all its
 * classes (the same float operations as computing them per pair, so the
 * same bits); each class's candidates go into a heap once, popped only
 * until max_output_boxes_per_class are chosen.
 */
#include <math.h>
#include <string.h>

#include "ops/ops_data.h"
#include "ops/ops_ew.h"

enum { NMS_BOXES, NMS_SCORES, NMS_MAX_OUT, NMS_IOU, NMS_SCORE_TH };

typedef struct nms_op {
    op_object o;
    int32_t center_point_box;
    int32_t max_out;
    float iou;
    int32_t has_score_th;
    float score_th;
} nms_op;

/* A candidate: its score's rank in the high 32 bits (nms_rank: smaller
 * first), its box index in the low, so one unsigned comparison orders two
 * candidates as the output needs (descending score, then ascending index,
 * NaN after every number). A heap of these compares integers where one of
 * (score, box) pairs tested for NaN at every step: detect_post's NMS
 * (batch 1, 20 classes of 300 boxes) 0.076-0.088 -> 0.033 ms. */
typedef uint64_t nms_cand;

/* Workspace bytes per box: corners and area (5 floats), the candidates'
 * heap, the chosen boxes (int32). */
#define NMS_WS_PER_BOX ((int64_t)(5 * sizeof(float) + sizeof(nms_cand) + 4))

static prt_status nms_parse(op_object *o, const op_fields *f)
{
    nms_op *n = (nms_op *)o;
    const prt_field *fl;
    prt_status st = op_field_i32(f, "center_point_box", 0, &n->center_point_box);
    if (!st)
        st = op_field_i32(f, "max_output_boxes_per_class", 0, &n->max_out);
    if (!st)
        st = op_field_f32(f, "iou_threshold", 0.0f, &n->iou);
    if (!st)
        st = op_field_find(f, "score_threshold", &fl);
    if (!st)
        st = op_field_f32(f, "score_threshold", 0.0f, &n->score_th);
    if (st)
        return st;
    n->has_score_th = fl != NULL;
    if (n->center_point_box != 0 && n->center_point_box != 1)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "center_point_box is %d; it must be 0 or 1",
                              (int)n->center_point_box);
    if (!(n->iou >= 0.0f && n->iou <= 1.0f))
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "iou_threshold is %g; it must lie in [0, 1]",
                              (double)n->iou);
    return PRT_OK;
}

static int32_t nms_serialize(op_object *o, prt_field *ser)
{
    nms_op *n = (nms_op *)o;
    op_ser(&ser[0], "center_point_box", PRT_FIELD_INT32, &n->center_point_box, 1);
    op_ser(&ser[1], "max_output_boxes_per_class", PRT_FIELD_INT32, &n->max_out, 1);
    op_ser(&ser[2], "iou_threshold", PRT_FIELD_FLOAT32, &n->iou, 1);
    if (!n->has_score_th)
        return 3;
    op_ser(&ser[3], "score_threshold", PRT_FIELD_FLOAT32, &n->score_th, 1);
    return 4;
}

static int32_t nms_nb_outputs(const op_object *o)
{
    (void)o;
    return 2;
}

static int32_t nms_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in,
                             int32_t index)
{
    (void)o, (void)types, (void)nb_in, (void)index;
    return PRT_INT64;
}

static uint32_t nms_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o, (void)types;
    return index == NMS_MAX_OUT ? OP_DT(PRT_INT64) : OP_DT(PRT_FLOAT32);
}

/* Fails when two dims are different constants. */
static prt_status nms_same(op_object *o, prt_expr_builder *eb, const prt_expr *a,
                           const prt_expr *b, const char *what)
{
    int64_t va, vb;
    if (eb->is_constant(eb, a, &va) && eb->is_constant(eb, b, &vb) && va != vb)
        return op_fail(o, PRT_ERR_SHAPE, "%s: boxes have %lld, scores %lld", what,
                       (long long)va, (long long)vb);
    return PRT_OK;
}

static prt_status nms_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                             const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                             int32_t nb_out, prt_expr_builder *eb)
{
    const nms_op *n = (const nms_op *)o;
    const prt_expr *per_class, *k;
    int64_t four;
    prt_status st;
    (void)sv, (void)nb_sv, (void)nb_out;
    if (in[NMS_BOXES].nb_dims != 3 || in[NMS_SCORES].nb_dims != 3)
        return op_fail(o, PRT_ERR_SHAPE,
                       "boxes (rank %d) and scores (rank %d) must be [B, N, 4] and "
                       "[B, C, N]",
                       (int)in[NMS_BOXES].nb_dims, (int)in[NMS_SCORES].nb_dims);
    if (eb->is_constant(eb, in[NMS_BOXES].d[2], &four) && four != 4)
        return op_fail(o, PRT_ERR_SHAPE, "boxes' last dim is %lld; it must be 4",
                       (long long)four);
    st = nms_same(o, eb, in[NMS_BOXES].d[0], in[NMS_SCORES].d[0], "the batch");
    if (!st)
        st = nms_same(o, eb, in[NMS_BOXES].d[1], in[NMS_SCORES].d[2], "the box count");
    if (st)
        return st;
    per_class = in[NMS_BOXES].d[1];
    if (nb_in <= NMS_MAX_OUT)
        per_class = eb->operation(eb, PRT_DIM_MIN, per_class,
                                  eb->constant(eb, n->max_out > 0 ? n->max_out : 0));
    k = eb->operation(eb, PRT_DIM_PROD, in[NMS_BOXES].d[0], in[NMS_SCORES].d[1]);
    k = opd_declare_size(o, eb, 1, eb->operation(eb, PRT_DIM_PROD, k, per_class));
    if (!k)
        return PRT_ERR_OUT_OF_MEMORY;
    out[0].nb_dims = 2;
    out[0].d[0] = k;
    out[0].d[1] = eb->constant(eb, 3);
    out[1].nb_dims = 0;
    return PRT_OK;
}

int64_t nms_workspace_bytes(int64_t boxes)
{
    int64_t bytes;
    if (boxes < 0)
        boxes = 0;
    /* CUDA's kernel (nms_cuda.c) takes a bit per box for each (batch,
     * class) it runs at once: 256 of them in these bytes, and at least 8
     * (one box gives 32 bytes, a 4-byte mask each). */
    return base_mul_i64(boxes, NMS_WS_PER_BOX, &bytes) ? bytes : -1;
}

void nms_fields_of(const op_object *o, nms_fields *f)
{
    const nms_op *n = (const nms_op *)o;
    f->center_point_box = n->center_point_box;
    f->max_out = n->max_out;
    f->has_score_th = n->has_score_th;
    f->iou = n->iou;
    f->score_th = n->score_th;
}

static int64_t nms_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                             int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    (void)o, (void)dtype, (void)nb_in, (void)out, (void)nb_out;
    return nms_workspace_bytes(in[NMS_BOXES].nb_dims == 3 ? in[NMS_BOXES].d[1] : 0);
}

/* The candidate of score s and box i (nms_cand): a score's rank inverted
 * falls as the score rises (0 and -0 one rank); every NaN takes the last
 * rank, past -inf's. */
static nms_cand nms_key(float s, int32_t i)
{
    uint32_t u = s != s ? UINT32_MAX : ~ew_f32_rank(s);
    return (uint64_t)u << 32 | (uint32_t)i;
}

/* Moves cand[i] down the heap of m candidates whose top is the smallest.
 * The moving candidate is held aside and each smaller child moves up into
 * the hole (one store a level, not a swap's two), and the smaller child is
 * picked by arithmetic, not a branch: random scores make that comparison
 * a coin toss, so a branch on it mispredicts half the levels (detect_post:
 * the heaps were 0.6 of NMS's time). */
static void nms_sift(nms_cand *h, int64_t m, int64_t i)
{
    const nms_cand v = h[i];
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= m)
            break;
        c += c + 1 < m && h[c + 1] < h[c];
        if (h[c] >= v)
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = v;
}

static void nms_minmax(float a, float b, float *lo, float *hi)
{
    *lo = a < b ? a : b;
    *hi = a < b ? b : a;
}

/* One batch's corners (x_min, y_min, x_max, y_max) and areas, by the same
 * operations ONNX Runtime's pairwise test does. */
static void nms_corners(const float *bx, int64_t n, int32_t center, float *c, float *area)
{
    for (int64_t i = 0; i < n; i++, bx += 4, c += 4) {
        if (center) {
            float hw = bx[2] / 2, hh = bx[3] / 2;
            c[0] = bx[0] - hw, c[2] = bx[0] + hw;
            c[1] = bx[1] - hh, c[3] = bx[1] + hh;
        } else {
            nms_minmax(bx[1], bx[3], &c[0], &c[2]);
            nms_minmax(bx[0], bx[2], &c[1], &c[3]);
        }
        area[i] = (c[2] - c[0]) * (c[3] - c[1]);
    }
}

/* Whether box b (corners cb, area ab) is suppressed by chosen box a. */
static int nms_suppresses(const float *ca, float aa, const float *cb, float ab, float iou)
{
    float x0 = ca[0] > cb[0] ? ca[0] : cb[0], x1 = ca[2] < cb[2] ? ca[2] : cb[2];
    float y0, y1, inter, uni;
    if (x1 <= x0)
        return 0;
    y0 = ca[1] > cb[1] ? ca[1] : cb[1], y1 = ca[3] < cb[3] ? ca[3] : cb[3];
    if (y1 <= y0)
        return 0;
    inter = (x1 - x0) * (y1 - y0);
    if (inter <= 0.0f)
        return 0;
    uni = aa + ab - inter;
    if (aa <= 0.0f || ab <= 0.0f || uni <= 0.0f)
        return 0;
    return inter / uni > iou;
}

/* The run's parameters: each optional input that is given (and not
 * empty) wins over its field. */
static prt_status nms_params(const nms_op *n, const prt_tensor_desc *in, int32_t nb_in,
                             const void *const *x, int64_t *max_out, float *iou,
                             int *has_th, float *th)
{
    *max_out = n->max_out;
    *iou = n->iou;
    *has_th = n->has_score_th;
    *th = n->score_th;
    if (nb_in > NMS_MAX_OUT && base_volume(&in[NMS_MAX_OUT].dims) > 0)
        memcpy(max_out, x[NMS_MAX_OUT], sizeof *max_out);
    if (nb_in > NMS_IOU && base_volume(&in[NMS_IOU].dims) > 0)
        memcpy(iou, x[NMS_IOU], sizeof *iou);
    if (nb_in > NMS_SCORE_TH && base_volume(&in[NMS_SCORE_TH].dims) > 0) {
        memcpy(th, x[NMS_SCORE_TH], sizeof *th);
        *has_th = 1;
    }
    if (!(*iou >= 0.0f && *iou <= 1.0f))
        return op_fail(&n->o, PRT_ERR_INVALID_ARGUMENT,
                       "iou_threshold is %g; it must lie in [0, 1]", (double)*iou);
    return PRT_OK;
}

static prt_status nms_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *x, void *const *y, void *ws, void *stream)
{
    const nms_op *n = (const nms_op *)o;
    const prt_dims *bd = &in[NMS_BOXES].dims, *sd = &in[NMS_SCORES].dims;
    int64_t max_out, nb, nc, nbox, k = 0, cap;
    float iou, th;
    int has_th;
    float *corners, *area;
    nms_cand *cand;
    int32_t *chosen;
    int64_t *yi = y[0];
    char a[128], b[128];
    prt_status st = nms_params(n, in, nb_in, x, &max_out, &iou, &has_th, &th);
    (void)dtype, (void)nb_out, (void)stream;
    if (st)
        return st;
    if (bd->nb_dims != 3 || sd->nb_dims != 3 || bd->d[2] != 4 || sd->d[0] != bd->d[0] ||
        sd->d[2] != bd->d[1])
        return op_fail(o, PRT_ERR_SHAPE,
                       "boxes %s and scores %s must be [B, N, 4] and [B, C, N]",
                       base_dims_format(bd, BASE_DIMS_LIST, a, sizeof a),
                       base_dims_format(sd, BASE_DIMS_LIST, b, sizeof b));
    nb = bd->d[0], nbox = bd->d[1], nc = sd->d[1];
    if (nbox > INT32_MAX)
        return op_fail(o, PRT_ERR_SHAPE, "%lld boxes per batch; at most %d are taken",
                       (long long)nbox, (int)INT32_MAX);
    cap = out[0].dims.nb_dims == 2 ? out[0].dims.d[0] : 0;
    /* The 8-byte candidates first (the workspace is aligned; after 5 floats
     * a box they would not be for an odd count), then the floats. */
    cand = ws;
    corners = (float *)(cand + nbox);
    area = corners + 4 * nbox;
    chosen = (int32_t *)(area + nbox);
    for (int64_t bi = 0; bi < nb && max_out > 0 && nbox > 0; bi++) {
        const float *bx = (const float *)x[NMS_BOXES] + bi * nbox * 4;
        nms_corners(bx, nbox, n->center_point_box, corners, area);
        for (int64_t ci = 0; ci < nc; ci++) {
            const float *sc = (const float *)x[NMS_SCORES] + (bi * nc + ci) * nbox;
            int64_t m = 0, nsel = 0;
            /* Written always, kept by the count: no branch on the score. */
            for (int64_t i = 0; i < nbox; i++) {
                cand[m] = nms_key(sc[i], (int32_t)i);
                m += !has_th || sc[i] > th;
            }
            /* A heap, popped only as far as max_out selections take (ORT's
             * priority queue): a full sort is wasted past them. */
            for (int64_t i = m / 2 - 1; i >= 0; i--)
                nms_sift(cand, m, i);
            while (m > 0 && nsel < max_out) {
                int32_t bj = (int32_t)(uint32_t)cand[0], keep = 1;
                cand[0] = cand[--m];
                nms_sift(cand, m, 0);
                for (int64_t s = 0; s < nsel && keep; s++)
                    keep =
                        !nms_suppresses(corners + 4 * (int64_t)chosen[s], area[chosen[s]],
                                        corners + 4 * (int64_t)bj, area[bj], iou);
                if (!keep)
                    continue;
                if (k >= cap)
                    return op_fail(o, PRT_ERR_SHAPE,
                                   "output 0 holds %lld rows; more boxes are selected",
                                   (long long)cap);
                chosen[nsel++] = bj;
                yi[3 * k] = bi, yi[3 * k + 1] = ci, yi[3 * k + 2] = bj;
                k++;
            }
        }
    }
    memcpy(y[1], &k, sizeof k);
    return PRT_OK;
}

static const op_class nms_class = {
    .min_inputs = 2,
    .max_inputs = 5,
    .dtypes = OP_DT(PRT_FLOAT32),
    .size = sizeof(nms_op),
    .alias_input = -1,
    .parse = nms_parse,
    .serialize = nms_serialize,
    .in_dtypes = nms_in_dtypes,
    .nb_outputs = nms_nb_outputs,
    .shapes_n = nms_shapes,
    .out_dtype_n = nms_out_dtype,
    .workspace = nms_workspace,
    .run = nms_run,
};

static const prt_field_schema nms_schema[] = {
    {"center_point_box", PRT_FIELD_INT32, 1,
     "0: boxes are [y1, x1, y2, x2]; 1: [x_center, y_center, width, height]"},
    {"max_output_boxes_per_class", PRT_FIELD_INT32, 1,
     "boxes kept per batch and class when input 2 is absent (default 0)"},
    {"iou_threshold", PRT_FIELD_FLOAT32, 1,
     "IoU above which a box is suppressed, in [0, 1], when input 3 is absent"},
    {"score_threshold", PRT_FIELD_FLOAT32, 1,
     "score a candidate must exceed, when input 4 is absent (absent: none)"},
};

const prt_plugin_creator op_nms_creator =
    OP_CREATOR("NonMaxSuppression", nms_class, nms_schema, 4);
