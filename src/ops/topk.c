/*
 * TopK (namespace "plugrt", version "1"), ONNX opset 1-19 semantics.
 * Input X (any numeric dtype) and K: a shape input (ONNX's 1-D input `K`,
 * opset 10 on) or field k (the attribute of opsets 1 to 9). Two outputs:
 * Values (X's dtype) and Indices (int64), X's dims with K along the axis.
 *
 * Fields: axis (default -1; -r to r-1), largest (1, the default: the K
 * largest; 0: the K smallest), sorted (0 or 1; the output is sorted either
 * way, which "unspecified order" allows). Equal values keep the order of
 * their indices, the smaller first (ONNX's reference); a NaN counts as
 * larger than any number (first for largest, last otherwise).
 *
 * K may be an expression (a dim computed from shapes); it must not exceed
 * the axis' dim, which the build checks when both are constants and the
 * run otherwise. The selection keeps a heap of the K best seen so far:
 * O(n log K) per line; float32 lines past TOPK_HEAP_MAX_K select by radix
 * on the values' ranks instead (topk_radix_f32: O(n + K) a line).
 */
#include <string.h>

#include "ops/ops_ew.h"
#include "ops/ops_views.h"

typedef struct topk_op {
    op_object o;
    int32_t axis, largest, sorted;
    int32_t nb_k, k; /* field k: nb_k 1, else -1 */
} topk_op;

static prt_status topk_parse(op_object *o, const op_fields *f)
{
    topk_op *t = (topk_op *)o;
    prt_status st = op_field_i32(f, "axis", -1, &t->axis);
    if (!st)
        st = ew_field_flag(f, "largest", 1, &t->largest);
    if (!st)
        st = ew_field_flag(f, "sorted", 1, &t->sorted);
    if (!st)
        st = op_field_i32_array(f, "k", &t->k, 1, &t->nb_k);
    if (!st && t->nb_k == 1 && t->k < 0)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT, "k is %d; it must be >= 0",
                              (int)t->k);
    return st;
}

static int32_t topk_serialize(op_object *o, prt_field *ser)
{
    topk_op *t = (topk_op *)o;
    op_ser(&ser[0], "axis", PRT_FIELD_INT32, &t->axis, 1);
    op_ser(&ser[1], "largest", PRT_FIELD_INT32, &t->largest, 1);
    op_ser(&ser[2], "sorted", PRT_FIELD_INT32, &t->sorted, 1);
    if (t->nb_k < 0)
        return 3;
    op_ser(&ser[3], "k", PRT_FIELD_INT32, &t->k, 1);
    return 4;
}

static int32_t topk_nb_outputs(const op_object *o)
{
    (void)o;
    return 2;
}

static prt_status topk_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                              const prt_dim_exprs *sv, int32_t nb_sv, prt_dim_exprs *out,
                              int32_t nb_out, prt_expr_builder *eb)
{
    const topk_op *t = (const topk_op *)o;
    const prt_expr *k;
    int32_t axis;
    int64_t kv, dv;
    prt_status st = op_axis(o, t->axis, in[0].nb_dims, 0, "X", &axis);
    (void)nb_in;
    if (st)
        return st;
    if (nb_sv > 0 && t->nb_k >= 0)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "K is given both as a field (attribute k) and as an input");
    if (nb_sv == 0 && t->nb_k < 0)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT, "needs K (an input, or field k)");
    if (nb_sv > 0 && sv[0].nb_dims != 1)
        return op_fail(o, PRT_ERR_SHAPE, "K must hold one value, not %d",
                       (int)sv[0].nb_dims);
    k = nb_sv > 0 ? sv[0].d[0] : eb->constant(eb, t->k);
    if (eb->is_constant(eb, k, &kv)) {
        if (kv < 0)
            return op_fail(o, PRT_ERR_SHAPE, "K is %lld; it must be >= 0", (long long)kv);
        if (eb->is_constant(eb, in[0].d[axis], &dv) && kv > dv)
            return op_fail(o, PRT_ERR_SHAPE, "K %lld exceeds the axis' dim %lld",
                           (long long)kv, (long long)dv);
    }
    for (int32_t i = 0; i < nb_out; i++) {
        out[i] = in[0];
        out[i].d[axis] = k;
    }
    return PRT_OK;
}

static int32_t topk_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in,
                              int32_t index)
{
    (void)o, (void)nb_in;
    return index == 0 ? types[0] : PRT_INT64;
}

/* A line's keys (n), the heap's keys and indices and the chosen indices
 * (K each). */
static int64_t topk_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                              int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    const topk_op *t = (const topk_op *)o;
    int32_t axis;
    int64_t n, k, bytes;
    (void)dtype, (void)nb_in, (void)nb_out;
    if (op_axis(o, t->axis, in[0].nb_dims, 0, "X", &axis) || out[0].nb_dims <= axis)
        return 0; /* no run: the checks fail first */
    n = in[0].d[axis] > 0 ? in[0].d[axis] : 0;
    k = out[0].d[axis] > 0 ? out[0].d[axis] : 0;
    if (!base_mul_i64(k, 24, &bytes) || !base_mul_i64(n, 8, &n) || bytes > INT64_MAX - n)
        return -1;
    return n + bytes;
}

/* The K best of n keys v[] by index order: hk/hi hold the heap, its root
 * the worst kept. WORSE(a, b): key a with index ia ranks below b. */
#define TOPK_GT(x, z) ((x) > (z) || ((x) != (x) && (z) == (z)))
#define TOPK_EQ(x, z) ((x) == (z) || ((x) != (x) && (z) != (z)))
#define TOPK_WORSE(ka, ia, kb, ib)                                                       \
    ((largest ? TOPK_GT(kb, ka) : TOPK_GT(ka, kb)) || (TOPK_EQ(ka, kb) && (ia) > (ib)))

#define TOPK_SIFT(T, pos, size)                                                          \
    do {                                                                                 \
        int64_t p_ = (pos);                                                              \
        for (;;) {                                                                       \
            int64_t c_ = 2 * p_ + 1, w_ = p_;                                            \
            if (c_ < (size) && TOPK_WORSE(hk[c_], hi[c_], hk[w_], hi[w_]))               \
                w_ = c_;                                                                 \
            if (c_ + 1 < (size) && TOPK_WORSE(hk[c_ + 1], hi[c_ + 1], hk[w_], hi[w_]))   \
                w_ = c_ + 1;                                                             \
            if (w_ == p_)                                                                \
                break;                                                                   \
            T tk_ = hk[p_];                                                              \
            int64_t ti_ = hi[p_];                                                        \
            hk[p_] = hk[w_];                                                             \
            hi[p_] = hi[w_];                                                             \
            hk[w_] = tk_;                                                                \
            hi[w_] = ti_;                                                                \
            p_ = w_;                                                                     \
        }                                                                                \
    } while (0)

/* Selects into idx[0..K), best first. */
#define TOPK_SELECT(T)                                                                   \
    static void topk_select_##T(const T *v, int64_t n, int64_t K, int largest, T *hk,    \
                                int64_t *hi, int64_t *idx)                               \
    {                                                                                    \
        for (int64_t i = 0; i < K; i++) {                                                \
            hk[i] = v[i];                                                                \
            hi[i] = i;                                                                   \
        }                                                                                \
        for (int64_t i = K / 2 - 1; i >= 0; i--)                                         \
            TOPK_SIFT(T, i, K);                                                          \
        for (int64_t i = K; i < n; i++)                                                  \
            if (TOPK_WORSE(hk[0], hi[0], v[i], i)) {                                     \
                hk[0] = v[i];                                                            \
                hi[0] = i;                                                               \
                TOPK_SIFT(T, 0, K);                                                      \
            }                                                                            \
        /* Pop the worst into the last place, and so on. */                              \
        for (int64_t size = K; size > 0; size--) {                                       \
            idx[size - 1] = hi[0];                                                       \
            hk[0] = hk[size - 1];                                                        \
            hi[0] = hi[size - 1];                                                        \
            TOPK_SIFT(T, 0, size - 1);                                                   \
        }                                                                                \
    }

typedef double f64;
TOPK_SELECT(f64)
TOPK_SELECT(int64_t)

/* float32 lines (a detector's 300 best of 2000 scores): each element one
 * uint64, its value's rank over its index, smaller = better (largest: the
 * rank inverted, NaN first; smallest: NaN last), so the heap of the K best
 * compares integers where TOPK_WORSE tested NaN and equality at each step,
 * on the line converted to double first. Same order as topk_select_f64:
 * same output. */
static uint64_t topk_key(float v, int64_t i, int largest)
{
    uint32_t r = v != v ? (largest ? 0 : UINT32_MAX)
                        : (largest ? ~ew_f32_rank(v) : ew_f32_rank(v));
    return (uint64_t)r << 32 | (uint64_t)i;
}

static void topk_sift_u64(uint64_t *h, int64_t size, int64_t p)
{
    for (;;) {
        int64_t c = 2 * p + 1, w = p;
        uint64_t t;
        if (c < size && h[c] > h[w])
            w = c;
        if (c + 1 < size && h[c + 1] > h[w])
            w = c + 1;
        if (w == p)
            return;
        t = h[p], h[p] = h[w], h[w] = t;
        p = w;
    }
}

/* Line x (n floats `inner` apart) into idx[0..K), best first; h holds K. */
static void topk_select_f32(const float *x, int64_t inner, int64_t n, int64_t K,
                            int largest, uint64_t *h, int64_t *idx)
{
    for (int64_t i = 0; i < K; i++)
        h[i] = topk_key(x[i * inner], i, largest);
    for (int64_t i = K / 2 - 1; i >= 0; i--) /* root: the worst kept */
        topk_sift_u64(h, K, i);
    for (int64_t i = K; i < n; i++) {
        uint64_t k = topk_key(x[i * inner], i, largest);
        if (k < h[0]) {
            h[0] = k;
            topk_sift_u64(h, K, 0);
        }
    }
    for (int64_t size = K; size > 0; size--) {
        idx[size - 1] = (int64_t)(uint32_t)h[0];
        h[0] = h[size - 1];
        topk_sift_u64(h, size - 1, 0);
    }
}

/* Up to this K a float32 line keeps the heap (one compare per element,
 * rarely a sift of log K); past it the radix selection below, whose cost
 * does not grow with K. */
#define TOPK_HEAP_MAX_K 16

/* The K best of a float32 line (n floats `inner` apart) by radix, into
 * idx[0..K), best first: each element's rank key (topk_key's high half,
 * smaller = better) in key[n]; the K-th smallest key T found a byte at a
 * time, high byte first, each pass histogramming only the elements whose
 * higher bytes match (their indices compacted into cand[n]); then the
 * elements below T and the first of those equal to T, in index order, as
 * many as K takes (ties: the lower index, as ONNX asks); then those K
 * sorted stably by key (LSD, a byte a pass, a pass whose byte is one
 * value skipped), so equal keys stay in index order. detect_post's 300
 * of 2000 scores: 17 -> 10 us (its heap sifted at ~600 insertions and 300
 * pops, each a mispredicted branch a level). a and b hold K each. */
static void topk_radix_f32(const float *x, int64_t inner, int64_t n, int64_t K,
                           int largest, uint32_t *key, uint32_t *cand, uint64_t *a,
                           uint64_t *b, int64_t *idx)
{
    uint32_t hist[256], prefix = 0, mask = 0;
    int64_t need = K, m = 0, got = 0, below = 0;
    for (int64_t i = 0; i < n; i++)
        key[i] = (uint32_t)(topk_key(x[i * inner], 0, largest) >> 32);
    for (int shift = 24; shift >= 0; shift -= 8) {
        int64_t sum = 0;
        uint32_t d = 0;
        memset(hist, 0, sizeof hist);
        if (shift == 24)
            for (int64_t i = 0; i < n; i++)
                hist[key[i] >> 24]++;
        else
            for (int64_t c = 0; c < m; c++)
                hist[(key[cand[c]] >> shift) & 255]++;
        while (sum + hist[d] < need)
            sum += hist[d++];
        need -= sum;
        prefix |= d << shift;
        mask |= 255u << shift;
        /* The elements whose bytes so far are T's: the next pass's. */
        if (shift == 24) {
            for (int64_t i = 0; i < n; i++)
                if ((key[i] & mask) == prefix)
                    cand[m++] = (uint32_t)i;
        } else {
            int64_t w = 0;
            for (int64_t c = 0; c < m; c++)
                if ((key[cand[c]] & mask) == prefix)
                    cand[w++] = cand[c];
            m = w;
        }
    }
    /* prefix is T; `need` of the elements equal to it are taken. */
    for (int64_t i = 0; i < n && got < K; i++)
        if (key[i] < prefix || (key[i] == prefix && below++ < need))
            a[got++] = (uint64_t)key[i] << 32 | (uint64_t)i;
    for (int shift = 32; shift < 64; shift += 8) {
        uint32_t count[256] = {0}, pos = 0;
        for (int64_t k = 0; k < K; k++)
            count[(a[k] >> shift) & 255]++;
        if (count[(a[0] >> shift) & 255] == (uint32_t)K)
            continue; /* one value: the order stands */
        for (int d = 0; d < 256; d++) {
            uint32_t c = count[d];
            count[d] = pos;
            pos += c;
        }
        for (int64_t k = 0; k < K; k++)
            b[count[(a[k] >> shift) & 255]++] = a[k];
        {
            uint64_t *t = a;
            a = b, b = t;
        }
    }
    for (int64_t k = 0; k < K; k++)
        idx[k] = (int64_t)(uint32_t)a[k];
}

/* K from the outputs' dims: the runtime's dims come from K's value, so
 * check what the loops rely on (both outputs X's dims but K along the
 * axis, K at most the axis' dim). */
static prt_status topk_k(const op_object *o, const prt_dims *d, const prt_dims *values,
                         const prt_dims *indices, int32_t axis, int64_t *out_k)
{
    char a[128], b[128], c[128];
    int64_t K = values->nb_dims == d->nb_dims ? values->d[axis] : -1;
    for (int32_t i = 0; K >= 0 && i < d->nb_dims; i++)
        if (indices->nb_dims != d->nb_dims || indices->d[i] != values->d[i] ||
            (i != axis && values->d[i] != d->d[i]))
            K = -1;
    if (K < 0 || K > d->d[axis])
        return op_fail(o, PRT_ERR_SHAPE,
                       "output dims %s and %s do not fit X dims %s (K along axis %d, "
                       "at most the axis' dim)",
                       base_dims_format(values, BASE_DIMS_LIST, a, sizeof a),
                       base_dims_format(indices, BASE_DIMS_LIST, b, sizeof b),
                       base_dims_format(d, BASE_DIMS_LIST, c, sizeof c), (int)axis);
    *out_k = K;
    return PRT_OK;
}

static prt_status topk_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                           int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                           const void *const *xs, void *const *ys, void *ws, void *stream)
{
    const topk_op *t = (const topk_op *)o;
    const prt_dims *d = &in[0].dims;
    const size_t es = prt_dtype_size(dtype);
    int64_t outer, inner, n, K = 0; /* set by topk_k; 0 keeps GCC 12 -Werror quiet */
    int32_t axis = 0;
    prt_status st = op_axis(o, t->axis, d->nb_dims, 0, "X", &axis);
    (void)nb_in, (void)nb_out, (void)stream;
    if (!st)
        st = topk_k(o, d, &out[0].dims, &out[1].dims, axis, &K);
    if (st || K == 0) /* K 0: nothing to write, and the heap has no root to read */
        return st;
    ew_axis_split(d, axis, &outer, &inner);
    n = d->d[axis];
    for (int64_t s = 0; s < outer; s++)
        for (int64_t j = 0; j < inner; j++) {
            const uint8_t *x = (const uint8_t *)xs[0] + (size_t)(s * n * inner + j) * es;
            int64_t *idx = (int64_t *)ys[1] + s * K * inner + j;
            uint8_t *val = (uint8_t *)ys[0] + (size_t)(s * K * inner + j) * es;
            /* Keys, the heap's keys and indices, the chosen indices. */
            uint8_t *keys = ws, *hk = keys + (size_t)n * 8;
            int64_t *hi = (int64_t *)(hk + (size_t)K * 8), *chosen = hi + K;
            if (dtype == PRT_FLOAT32 && n <= UINT32_MAX && K > TOPK_HEAP_MAX_K) {
                /* keys: the ranks, then the candidates (4 bytes each). */
                topk_radix_f32((const float *)(const void *)x, inner, n, K, t->largest,
                               (uint32_t *)(void *)keys, (uint32_t *)(void *)keys + n,
                               (uint64_t *)(void *)hk, (uint64_t *)(void *)hi, chosen);
            } else if (dtype == PRT_FLOAT32 && n <= UINT32_MAX) {
                topk_select_f32((const float *)(const void *)x, inner, n, K, t->largest,
                                (uint64_t *)(void *)hk, chosen);
            } else if (ew_is_float(dtype)) {
                ew_load_f64(x, dtype, inner, n, (double *)keys);
                topk_select_f64((const double *)keys, n, K, t->largest, (double *)hk, hi,
                                chosen);
            } else {
                ew_load_i64(x, dtype, inner, n, (int64_t *)keys);
                topk_select_int64_t((const int64_t *)keys, n, K, t->largest,
                                    (int64_t *)hk, hi, chosen);
            }
            for (int64_t k = 0; k < K; k++) {
                int64_t i = chosen[k];
                idx[k * inner] = i;
                memcpy(val + (size_t)(k * inner) * es, x + (size_t)(i * inner) * es, es);
            }
        }
    return PRT_OK;
}

prt_status op_topk_view_of(const op_object *o, const prt_dims *x, const prt_dims *values,
                           const prt_dims *indices, op_axis_view *v, int64_t *k)
{
    const topk_op *t = (const topk_op *)o;
    prt_status st;
    memset(v, 0, sizeof *v);
    st = op_axis(o, t->axis, x->nb_dims, 0, "X", &v->axis);
    if (st)
        return st;
    st = topk_k(o, x, values, indices, v->axis, k);
    if (st)
        return st;
    ew_axis_split(x, v->axis, &v->outer, &v->inner);
    v->n = x->d[v->axis];
    v->largest = t->largest;
    return PRT_OK;
}

static const op_class topk_class = {
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = EW_DT_NUMERIC,
    .size = sizeof(topk_op),
    .alias_input = -1,
    .parse = topk_parse,
    .serialize = topk_serialize,
    .max_shape_inputs = 1,
    .nb_outputs = topk_nb_outputs,
    .shapes_n = topk_shapes,
    .out_dtype_n = topk_out_dtype,
    .workspace = topk_workspace,
    .run = topk_run,
};

static const prt_field_schema topk_schema[] = {
    {"axis", PRT_FIELD_INT32, 1, "the axis, default -1; -r to r-1"},
    {"largest", PRT_FIELD_INT32, 1, "1 (default): the K largest; 0: the K smallest"},
    {"sorted", PRT_FIELD_INT32, 1, "0 or 1 (default); the output is sorted either way"},
    {"k", PRT_FIELD_INT32, 1, "K (opsets 1 to 9; later an input)"},
};

const prt_plugin_creator op_topk_creator = OP_CREATOR("TopK", topk_class, topk_schema, 4);
