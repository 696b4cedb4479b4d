/*
 * MeanVarianceNormalization (namespace "plugrt", version "1"), ONNX opsets
 * 9 and 13. float32, float16, bfloat16; Y has X's dims.
 *
 * Field axes (int32 array, default [0, 2, 3]; each in [-r, r-1] for X of
 * rank r, negative counting from the end, none twice): X's elements
 * sharing an index over the other dims form a group, and each group is
 * normalized over its elements as ONNX's function body does:
 *   Y = (X - mean) / (sqrt(var) + 1e-9),
 * mean and var the group's mean and population variance. The function
 * writes var as E[X^2] - E[X]^2 in X's dtype; here both are sums in double
 * over two passes (the variance about the mean, which never goes below 0
 * by cancellation), and each element is computed in double and rounded
 * once (loss_elem.h, shared with CUDA). An empty axes list normalizes over
 * every dim (ReduceMean's rule for empty axes at opset 13, which the
 * function uses).
 */
#include "base/parallel.h"
#include "ops/ops_loss.h"

static const int32_t mvn_default_axes[3] = {0, 2, 3};

typedef struct mvn_op {
    op_object o;
    int32_t nb_axes;
    int32_t axes[PRT_MAX_DIMS];
} mvn_op;

static prt_status mvn_parse(op_object *o, const op_fields *f)
{
    mvn_op *m = (mvn_op *)o;
    prt_status st = op_field_i32_array(f, "axes", m->axes, PRT_MAX_DIMS, &m->nb_axes);
    if (st)
        return st;
    if (m->nb_axes < 0) {
        m->nb_axes = 3;
        for (int32_t i = 0; i < 3; i++)
            m->axes[i] = mvn_default_axes[i];
    }
    return PRT_OK;
}

static int32_t mvn_serialize(op_object *o, prt_field *ser)
{
    mvn_op *m = (mvn_op *)o;
    op_ser(&ser[0], "axes", PRT_FIELD_INT32, m->axes, m->nb_axes);
    return 1;
}

/* Bit i set: dim i of rank r is normalized over. */
static prt_status mvn_mask(const op_object *o, int32_t r, uint32_t *mask)
{
    const mvn_op *m = (const mvn_op *)o;
    *mask = m->nb_axes == 0 ? (1u << r) - 1u : 0;
    for (int32_t k = 0; k < m->nb_axes; k++) {
        int32_t a = m->axes[k];
        if (a < -r || a >= r)
            return op_fail(o, PRT_ERR_SHAPE,
                           "axis %d is out of range for X of rank %d (%d to %d)", (int)a,
                           (int)r, (int)-r, (int)(r - 1));
        a = a < 0 ? a + r : a;
        if (*mask & (1u << a))
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "axes name dim %d twice", (int)a);
        *mask |= 1u << a;
    }
    return PRT_OK;
}

static prt_status mvn_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                             prt_dim_exprs *out, prt_expr_builder *eb)
{
    uint32_t mask;
    (void)nb_in, (void)eb;
    *out = in[0];
    return mvn_mask(o, in[0].nb_dims, &mask);
}

static prt_status mvn_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                            prt_dims *out)
{
    uint32_t mask;
    (void)nb_in;
    *out = in[0];
    return mvn_mask(o, in[0].nb_dims, &mask);
}

prt_status mvn_params(const op_object *o, const prt_dims *x, int32_t dtype,
                      opk_mvn_params *p)
{
    uint32_t mask;
    int64_t stride = 1;
    int32_t last = -1; /* the kind of the last dim taken: 0 kept, 1 reduced */
    int64_t size[2][PRT_MAX_DIMS], str[2][PRT_MAX_DIMS];
    int32_t nb[2] = {0, 0};
    prt_status st = mvn_mask(o, x->nb_dims, &mask);
    if (st)
        return st;
    p->dtype = dtype;
    p->groups = p->count = 1;
    /* From the last dim on, so strides grow; size-1 dims change no offset
     * and are dropped, and a dim next to one of its kind merges with it. */
    for (int32_t i = x->nb_dims - 1; i >= 0; i--) {
        const int32_t kind = (mask >> i) & 1u;
        const int64_t d = x->d[i];
        if (kind)
            p->count *= d;
        else
            p->groups *= d;
        if (d != 1) {
            if (kind == last) {
                size[kind][nb[kind] - 1] *= d;
            } else {
                size[kind][nb[kind]] = d;
                str[kind][nb[kind]++] = stride;
                last = kind;
            }
        }
        stride *= d;
    }
    /* Outermost first (opk_mvn_offset's order). */
    p->nk = nb[0];
    p->nr = nb[1];
    for (int32_t k = 0; k < nb[0]; k++) {
        p->ksize[k] = size[0][nb[0] - 1 - k];
        p->kstride[k] = str[0][nb[0] - 1 - k];
    }
    for (int32_t k = 0; k < nb[1]; k++) {
        p->rsize[k] = size[1][nb[1] - 1 - k];
        p->rstride[k] = str[1][nb[1] - 1 - k];
    }
    return PRT_OK;
}

typedef struct mvn_job {
    const opk_mvn_params *p;
    const void *x;
    void *y;
} mvn_job;

/* Groups [b, e), each whole on one thread, its elements in order: the
 * split changes no bit. The innermost reduced dim runs as a strided line. */
static void mvn_range(void *arg, int64_t b, int64_t e)
{
    const mvn_job *j = arg;
    const opk_mvn_params *p = j->p;
    const int32_t dt = p->dtype;
    const int64_t inner = p->nr ? p->rsize[p->nr - 1] : 1;
    const int64_t istr = p->nr ? p->rstride[p->nr - 1] : 0, lines = p->count / inner;
    for (int64_t g = b; g < e; g++) {
        const int64_t base = opk_mvn_offset(p->nk, p->ksize, p->kstride, g);
        double s = 0.0, q = 0.0, mean, var;
        for (int64_t l = 0; l < lines; l++) {
            const int64_t at = base + opk_mvn_offset(p->nr - 1, p->rsize, p->rstride, l);
            for (int64_t t = 0; t < inner; t++)
                s += (double)opk_float_at(dt, j->x, at + t * istr);
        }
        mean = s / (double)p->count;
        for (int64_t l = 0; l < lines; l++) {
            const int64_t at = base + opk_mvn_offset(p->nr - 1, p->rsize, p->rstride, l);
            for (int64_t t = 0; t < inner; t++) {
                const double d = (double)opk_float_at(dt, j->x, at + t * istr) - mean;
                q += d * d;
            }
        }
        var = q / (double)p->count;
        for (int64_t l = 0; l < lines; l++) {
            const int64_t at = base + opk_mvn_offset(p->nr - 1, p->rsize, p->rstride, l);
            for (int64_t t = 0; t < inner; t++) {
                const int64_t i = at + t * istr;
                opk_float_put(
                    dt, j->y, i,
                    (float)opk_mvn_value((double)opk_float_at(dt, j->x, i), mean, var));
            }
        }
    }
}

static prt_status mvn_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                          int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                          const void *const *x, void *const *y, void *ws, void *stream)
{
    opk_mvn_params p;
    prt_status st = mvn_params(o, &in[0].dims, dtype, &p);
    (void)nb_in, (void)out, (void)nb_out, (void)ws, (void)stream;
    if (st || p.groups == 0 || p.count == 0)
        return st; /* no elements */
    {
        mvn_job j = {&p, x[0], y[0]};
        /* A group: three passes over its elements. */
        base_parallel_for(p.groups, (OP_GRAIN_SIMPLE + 3 * p.count - 1) / (3 * p.count),
                          mvn_range, &j);
    }
    return PRT_OK;
}

static const op_class mvn_class = {
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16),
    .size = sizeof(mvn_op),
    .alias_input = -1,
    .parse = mvn_parse,
    .serialize = mvn_serialize,
    .shapes = mvn_shapes,
    .infer = mvn_infer,
    .run = mvn_run,
};

static const prt_field_schema mvn_schema[] = {
    {"axes", PRT_FIELD_INT32, -1,
     "the dims each group is normalized over, default [0, 2, 3]; -r to r-1"},
};

const prt_plugin_creator op_mvn_creator =
    OP_CREATOR("MeanVarianceNormalization", mvn_class, mvn_schema, 1);
