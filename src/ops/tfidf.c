/*
 * TfIdfVectorizer (namespace "plugrt", version "1"), ONNX opset 9: counts
 * the n-grams of a pool in each row of X and writes them as a vector.
 *
 * X: int32 or int64, [C] (one row) or [N, C] (N rows); a scalar is one row
 * of one item, as ONNX Runtime and ONNX's reference take it. Y: float32,
 * [W] or [N, W], W = max(ngram_indexes) + 1. String pools and inputs are
 * out of scope (plugrt has no string type): pool_strings is refused.
 *
 * Fields, as the ONNX attributes (all required but weights):
 *  - ngram_counts (int64 [L]): where the 1-grams, 2-grams, ... L-grams
 *    start in pool_int64s; level n runs to the next start (the last to the
 *    pool's end) and holds whole n-grams. The pool's n-grams, level after
 *    level, are numbered 0, 1, ...; ngram_indexes (int64, one per n-gram)
 *    gives n-gram k's output column.
 *  - min_gram_length, max_gram_length: 1 <= min <= max <= L; only the
 *    levels in [min, max] are matched (the others keep their numbers).
 *  - max_skip_count S >= 0: an n-gram may be taken with its items d apart,
 *    d = 1 .. S + 1 (d - 1 items skipped between neighbours); an n-gram
 *    that occurs at several distances counts once per distance and start.
 *    A 1-gram has no distance, so it is counted once per position (at
 *    d = 1 only), not once per distance.
 *  - mode: TF writes the counts; IDF weights[c] where column c counted
 *    anything, else 0 (1 without weights); TFIDF count * weights[c] (the
 *    count without weights).
 *  - weights (float, one per n-gram, optional). ONNX's text calls weight
 *    k the weight of n-gram k, but ONNX Runtime and ONNX's reference both
 *    read it by output column (weights[c] for column c), which agree where
 *    ngram_indexes is 0, 1, 2, ...; this follows them, so every column
 *    must have a weight (max(ngram_indexes) < their number).
 * Columns several n-grams map to add their counts. Counts are uint32, as
 * ONNX Runtime's, and converted to float32 once. An n-gram given twice in
 * a level that is matched is refused, as ONNX Runtime refuses it.
 *
 * The pool and what is derived from it (each level's n-grams sorted, for a
 * binary search per window) vary in size, which an op object (plain data,
 * copied by clone) cannot hold, so they live in the object's one shared
 * read-only block (op_object.cst; elsewhere the state `prepare` derives
 * from constant inputs, a hook this class does not set), made when the
 * fields are read: clones share it, the last one frees it. The kernel is
 * CPU only: no device table lists the op, so a CUDA build fails naming
 * the layer.
 */
#include <string.h>

#include "base/parallel.h"
#include "ops/ops_data.h"
#include "ops/shape_ops.h"

enum { TFIDF_TF, TFIDF_IDF, TFIDF_TFIDF };

static const char *const tfidf_modes[] = {"TF", "IDF", "TFIDF"};

/* The largest output width and field length taken: far beyond any pool,
 * and small enough that no size computed from them overflows. */
#define TFIDF_MAX_LEN ((int64_t)1 << 40)

/* The n-grams of one length n in [min, max]. */
typedef struct tfidf_level {
    int64_t count;         /* n-grams of this length */
    const int64_t *items;  /* count runs of n items: the pool's */
    const int64_t *cols;   /* each one's output column: ngram_indexes' */
    const int64_t *sorted; /* 0 .. count-1 ordered by their items */
} tfidf_level;

/* The shared block (op_const): the fields' arrays and the levels. */
typedef struct tfidf_tables {
    op_const head;
    int64_t nb_counts, nb_indexes, nb_pool, nb_weights; /* nb_weights 0: none */
    int64_t *counts, *indexes, *pool;
    float *weights;
    tfidf_level lv[]; /* max - min + 1 of them, level min first */
} tfidf_tables;

typedef struct tfidf_op {
    op_object o;
    int32_t min_gram, max_gram, max_skip, mode;
    int64_t width; /* max(ngram_indexes) + 1 */
} tfidf_op;

static const tfidf_tables *tfidf_tab(const op_object *o)
{
    return (const tfidf_tables *)o->cst;
}

/* ---- fields -------------------------------------------------------------- */

/* A required integer field of one value. */
static prt_status tfidf_int(const op_fields *f, const char *name, int32_t *out)
{
    const prt_field *fl;
    prt_status st = op_field_find(f, name, &fl);
    if (st)
        return st;
    if (!fl)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT, "field '%s' is required",
                              name);
    return op_field_i32(f, name, 0, out);
}

/* An array field of integers (or of any numbers, with `floats`): its
 * length, -1 when absent. */
static prt_status tfidf_array(const op_fields *f, const char *name, int floats,
                              const prt_field **fl, int64_t *len)
{
    prt_status st = op_field_find(f, name, fl);
    int32_t ty;
    int is_int, is_float;
    *len = -1;
    if (st || !*fl)
        return st;
    ty = (*fl)->type;
    is_int = ty == PRT_FIELD_INT8 || ty == PRT_FIELD_INT16 || ty == PRT_FIELD_INT32 ||
             ty == PRT_FIELD_INT64;
    is_float = ty == PRT_FIELD_FLOAT16 || ty == PRT_FIELD_FLOAT32 ||
               ty == PRT_FIELD_FLOAT64 || ty == PRT_FIELD_BFLOAT16;
    if (!is_int && !(floats && is_float))
        return op_fields_fail(
            f, PRT_ERR_INVALID_ARGUMENT, "field '%s' has type %s, expected %s", name,
            base_field_type_name(ty),
            floats ? "float32 (or another number)" : "int64 (or another integer)");
    if ((*fl)->length > TFIDF_MAX_LEN)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field '%s' has %lld values; at most 2^40 are taken", name,
                              (long long)(*fl)->length);
    *len = (*fl)->length;
    return PRT_OK;
}

static void tfidf_copy_ints(const prt_field *fl, int64_t *dst)
{
    double unused;
    for (int64_t k = 0; k < fl->length; k++)
        op_field_number_at(fl, k, &dst[k], &unused);
}

static void tfidf_copy_floats(const prt_field *fl, float *dst)
{
    for (int64_t k = 0; k < fl->length; k++) {
        int64_t iv;
        double dv;
        dst[k] = op_field_number_at(fl, k, &iv, &dv) == 1 ? (float)iv : (float)dv;
    }
}

/* n-gram a against n-gram b of a level (n items each). */
static int tfidf_cmp_items(const int64_t *a, const int64_t *b, int32_t n)
{
    for (int32_t j = 0; j < n; j++)
        if (a[j] != b[j])
            return a[j] < b[j] ? -1 : 1;
    return 0;
}

/* Heap sort of the level's indices by their items (in place: qsort has no
 * context for n and the items). */
static void tfidf_sift(int64_t *s, int64_t root, int64_t m, const int64_t *items,
                       int32_t n)
{
    for (;;) {
        int64_t c = 2 * root + 1, t;
        if (c >= m)
            return;
        if (c + 1 < m && tfidf_cmp_items(items + s[c] * n, items + s[c + 1] * n, n) < 0)
            c++;
        if (tfidf_cmp_items(items + s[root] * n, items + s[c] * n, n) >= 0)
            return;
        t = s[root];
        s[root] = s[c];
        s[c] = t;
        root = c;
    }
}

static void tfidf_sort(int64_t *s, int64_t m, const int64_t *items, int32_t n)
{
    for (int64_t k = 0; k < m; k++)
        s[k] = k;
    for (int64_t r = m / 2; r-- > 0;)
        tfidf_sift(s, r, m, items, n);
    for (int64_t e = m - 1; e > 0; e--) {
        int64_t t = s[0];
        s[0] = s[e];
        s[e] = t;
        tfidf_sift(s, 0, e, items, n);
    }
}

/* ngram_counts against the pool: each start in [0, P], not decreasing,
 * each level whole n-grams; *total the n-grams of every level. */
static prt_status tfidf_check_counts(const op_fields *f, const tfidf_tables *t,
                                     int64_t *total)
{
    *total = 0;
    for (int64_t i = 0; i < t->nb_counts; i++)
        if (t->counts[i] < 0 || t->counts[i] > t->nb_pool)
            return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                                  "ngram_counts[%lld] is %lld; it must be in [0, %lld] "
                                  "(pool_int64s' length)",
                                  (long long)i, (long long)t->counts[i],
                                  (long long)t->nb_pool);
    for (int64_t i = 0; i < t->nb_counts; i++) {
        int64_t start = t->counts[i], n = i + 1;
        int64_t end = i + 1 < t->nb_counts ? t->counts[i + 1] : t->nb_pool;
        if (end < start)
            return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                                  "ngram_counts decreases at %lld (%lld after %lld); the "
                                  "starts of the levels must not decrease",
                                  (long long)(i + 1), (long long)end, (long long)start);
        if ((end - start) % n)
            return op_fields_fail(
                f, PRT_ERR_INVALID_ARGUMENT,
                "the %lld-grams (pool_int64s[%lld:%lld]) are %lld items, "
                "not whole %lld-grams",
                (long long)n, (long long)start, (long long)end, (long long)(end - start),
                (long long)n);
        *total += (end - start) / n;
    }
    return PRT_OK;
}

/* Sorts the levels in [min, max] and refuses an n-gram given twice there
 * (which of its numbers would count is not defined; ONNX Runtime refuses
 * it too). */
static prt_status tfidf_levels(const op_fields *f, const tfidf_op *p, tfidf_tables *t,
                               int64_t *sorted)
{
    int64_t id = 0;
    for (int64_t i = 0; i < p->max_gram; i++) {
        int32_t n = (int32_t)(i + 1);
        int64_t start = t->counts[i];
        int64_t end = i + 1 < t->nb_counts ? t->counts[i + 1] : t->nb_pool;
        int64_t m = (end - start) / n;
        if (n >= p->min_gram && n <= p->max_gram) {
            tfidf_level *l = &t->lv[n - p->min_gram];
            l->count = m;
            l->items = t->pool + start;
            l->cols = t->indexes + id;
            l->sorted = sorted;
            tfidf_sort(sorted, m, l->items, n);
            for (int64_t k = 1; k < m; k++)
                if (tfidf_cmp_items(l->items + sorted[k - 1] * n,
                                    l->items + sorted[k] * n, n) == 0) {
                    /* The earlier of the two first (the sort is not stable). */
                    int64_t a = sorted[k - 1] < sorted[k] ? sorted[k - 1] : sorted[k];
                    int64_t b = sorted[k - 1] < sorted[k] ? sorted[k] : sorted[k - 1];
                    return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                                          "pool_int64s holds the same %d-gram twice "
                                          "(at %lld and %lld)",
                                          (int)n, (long long)(start + a * n),
                                          (long long)(start + b * n));
                }
            sorted += m;
        }
        id += m;
    }
    return PRT_OK;
}

/* The scalar fields and mode. */
static prt_status tfidf_parse_scalars(tfidf_op *p, const op_fields *f)
{
    char mode[8];
    int32_t len;
    prt_status st = tfidf_int(f, "min_gram_length", &p->min_gram);
    if (!st)
        st = tfidf_int(f, "max_gram_length", &p->max_gram);
    if (!st)
        st = tfidf_int(f, "max_skip_count", &p->max_skip);
    if (!st)
        st = op_field_str(f, "mode", mode, sizeof mode, &len);
    if (st)
        return st;
    if (len < 0)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field 'mode' is required (TF, IDF or TFIDF)");
    p->mode = -1;
    for (int32_t m = 0; m < 3; m++)
        if (strcmp(mode, tfidf_modes[m]) == 0)
            p->mode = m;
    if (p->mode < 0)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "mode '%s' is not TF, IDF or TFIDF", mode);
    if (p->min_gram < 1 || p->max_gram < p->min_gram)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "min_gram_length %d and max_gram_length %d: they must "
                              "hold 1 <= min_gram_length <= max_gram_length",
                              (int)p->min_gram, (int)p->max_gram);
    if (p->max_skip < 0)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "max_skip_count is %d; it must be 0 or more",
                              (int)p->max_skip);
    return PRT_OK;
}

/* The arrays against one another, once the block holds them. */
static prt_status tfidf_check(tfidf_op *p, const op_fields *f, tfidf_tables *t,
                              int64_t *sorted)
{
    int64_t total, widest = -1;
    prt_status st;
    st = tfidf_check_counts(f, t, &total);
    if (st)
        return st;
    if (t->nb_indexes != total)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "ngram_indexes has %lld values but the pool holds %lld "
                              "n-grams (ngram_counts' levels); one column each is needed",
                              (long long)t->nb_indexes, (long long)total);
    for (int64_t k = 0; k < t->nb_indexes; k++) {
        if (t->indexes[k] < 0 || t->indexes[k] >= TFIDF_MAX_LEN)
            return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                                  "ngram_indexes[%lld] is %lld; it must be in [0, 2^40)",
                                  (long long)k, (long long)t->indexes[k]);
        widest = t->indexes[k] > widest ? t->indexes[k] : widest;
    }
    p->width = widest + 1;
    if (t->weights && t->nb_weights != t->nb_indexes)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "weights has %lld values; it needs one per n-gram, as "
                              "ngram_indexes (%lld)",
                              (long long)t->nb_weights, (long long)t->nb_indexes);
    if (t->weights && p->width > t->nb_weights)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "ngram_indexes reaches column %lld but weights, read by "
                              "column, has %lld values",
                              (long long)widest, (long long)t->nb_weights);
    return tfidf_levels(f, p, t, sorted);
}

static prt_status tfidf_parse(op_object *o, const op_fields *f)
{
    tfidf_op *p = (tfidf_op *)o;
    const prt_field *fc, *fi, *fp, *fw, *fs;
    int64_t nc, ni, np, nw, ns, levels;
    size_t head, bytes;
    tfidf_tables *t;
    int64_t *sorted;
    prt_status st = op_field_find(f, "pool_strings", &fs);
    if (st)
        return st;
    if (fs)
        return op_fields_fail(f, PRT_ERR_UNSUPPORTED,
                              "pool_strings is not supported: plugrt has no string "
                              "tensors (the pool must be pool_int64s, X int32 or int64)");
    st = tfidf_parse_scalars(p, f);
    if (!st)
        st = tfidf_array(f, "ngram_counts", 0, &fc, &nc);
    if (!st)
        st = tfidf_array(f, "ngram_indexes", 0, &fi, &ni);
    if (!st)
        st = tfidf_array(f, "pool_int64s", 0, &fp, &np);
    if (!st)
        st = tfidf_array(f, "weights", 1, &fw, &nw);
    if (st)
        return st;
    if (nc <= 0 || ni <= 0 || np <= 0)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "field '%s' is required and must not be empty",
                              nc <= 0   ? "ngram_counts"
                              : ni <= 0 ? "ngram_indexes"
                                        : "pool_int64s");
    if (p->max_gram > nc)
        return op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                              "max_gram_length is %d but ngram_counts has %lld levels "
                              "(1-grams to %lld-grams)",
                              (int)p->max_gram, (long long)nc, (long long)nc);
    /* One block: the head with its levels, then the int64 arrays (the
     * sorted indices of the levels matched: at most one per n-gram, so
     * ni), then the weights. */
    levels = p->max_gram - p->min_gram + 1;
    ns = ni;
    head = sizeof(tfidf_tables) + (size_t)levels * sizeof(tfidf_level);
    head = (head + 7) & ~(size_t)7;
    bytes = head + (size_t)(nc + ni + np + ns) * sizeof(int64_t) +
            (size_t)(nw > 0 ? nw : 0) * sizeof(float);
    t = (tfidf_tables *)op_const_alloc(bytes);
    if (!t)
        return op_fields_fail(f, PRT_ERR_OUT_OF_MEMORY, "out of memory");
    t->nb_counts = nc;
    t->nb_indexes = ni;
    t->nb_pool = np;
    t->nb_weights = nw > 0 ? nw : 0;
    t->counts = (int64_t *)((char *)t + head);
    t->indexes = t->counts + nc;
    t->pool = t->indexes + ni;
    sorted = t->pool + np;
    t->weights = fw ? (float *)(sorted + ns) : NULL;
    tfidf_copy_ints(fc, t->counts);
    tfidf_copy_ints(fi, t->indexes);
    tfidf_copy_ints(fp, t->pool);
    if (fw)
        tfidf_copy_floats(fw, t->weights);
    st = tfidf_check(p, f, t, sorted);
    if (st) {
        base_free(t);
        return st;
    }
    o->cst = &t->head;
    return PRT_OK;
}

static int32_t tfidf_serialize(op_object *o, prt_field *ser)
{
    tfidf_op *p = (tfidf_op *)o;
    const tfidf_tables *t = tfidf_tab(o);
    const char *mode = tfidf_modes[p->mode];
    int32_t n = 7;
    op_ser(&ser[0], "min_gram_length", PRT_FIELD_INT32, &p->min_gram, 1);
    op_ser(&ser[1], "max_gram_length", PRT_FIELD_INT32, &p->max_gram, 1);
    op_ser(&ser[2], "max_skip_count", PRT_FIELD_INT32, &p->max_skip, 1);
    op_ser(&ser[3], "mode", PRT_FIELD_CHAR, mode, (int64_t)strlen(mode));
    op_ser(&ser[4], "ngram_counts", PRT_FIELD_INT64, t->counts, t->nb_counts);
    op_ser(&ser[5], "ngram_indexes", PRT_FIELD_INT64, t->indexes, t->nb_indexes);
    op_ser(&ser[6], "pool_int64s", PRT_FIELD_INT64, t->pool, t->nb_pool);
    if (t->weights)
        op_ser(&ser[n++], "weights", PRT_FIELD_FLOAT32, t->weights, t->nb_weights);
    return n;
}

/* ---- shapes --------------------------------------------------------------- */

static prt_status tfidf_rank(const op_object *o, int32_t r)
{
    if (r > 2)
        return op_fail(o, PRT_ERR_SHAPE, "X has rank %d; it must be [C] or [N, C]",
                       (int)r);
    return PRT_OK;
}

static prt_status tfidf_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                               prt_dim_exprs *out, prt_expr_builder *eb)
{
    const tfidf_op *p = (const tfidf_op *)o;
    prt_status st = tfidf_rank(o, in[0].nb_dims);
    (void)nb_in;
    if (st)
        return st;
    out->nb_dims = in[0].nb_dims == 2 ? 2 : 1;
    if (in[0].nb_dims == 2)
        out->d[0] = in[0].d[0];
    out->d[out->nb_dims - 1] = eb->constant(eb, p->width);
    return PRT_OK;
}

static prt_status tfidf_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                              prt_dims *out)
{
    const tfidf_op *p = (const tfidf_op *)o;
    prt_status st = tfidf_rank(o, in[0].nb_dims);
    (void)nb_in;
    if (st)
        return st;
    out->nb_dims = in[0].nb_dims == 2 ? 2 : 1;
    if (in[0].nb_dims == 2)
        out->d[0] = in[0].d[0];
    out->d[out->nb_dims - 1] = p->width;
    return PRT_OK;
}

static uint32_t tfidf_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o, (void)index, (void)types;
    return OP_DT_INDEX;
}

static int32_t tfidf_out_dtype(const op_object *o, const int32_t *types, int32_t nb_in)
{
    (void)o, (void)types, (void)nb_in;
    return PRT_FLOAT32;
}

/* ---- the kernel ------------------------------------------------------------ */

typedef struct tfidf_job {
    const tfidf_op *p;
    const tfidf_tables *t;
    const void *x;
    int is64;
    int64_t C;    /* items of a row */
    int64_t dmax; /* the distances that fit a row: 1 .. dmax */
    float *y;
} tfidf_job;

static inline int64_t tfidf_x(const void *x, int is64, int64_t i)
{
    return is64 ? ((const int64_t *)x)[i] : ((const int32_t *)x)[i];
}

/* The column of the n-gram x[at], x[at + d], ... (n items) in level l, or
 * -1 where the pool has none. */
static int64_t tfidf_find(const tfidf_level *l, int32_t n, const void *x, int is64,
                          int64_t at, int64_t d)
{
    int64_t lo = 0, hi = l->count;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2, k = l->sorted[mid];
        const int64_t *it = l->items + k * n;
        int c = 0;
        for (int32_t j = 0; j < n && !c; j++) {
            int64_t v = tfidf_x(x, is64, at + j * d);
            c = it[j] < v ? -1 : it[j] > v ? 1 : 0;
        }
        if (c == 0)
            return l->cols[k];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Rows [begin, end): each counted into its own output row (as uint32 over
 * the row's bytes, float32's size), then weighted in place. */
static void tfidf_rows(void *arg, int64_t begin, int64_t end)
{
    const tfidf_job *j = arg;
    const tfidf_op *p = j->p;
    const tfidf_tables *t = j->t;
    const int64_t C = j->C, W = p->width;
    for (int64_t r = begin; r < end; r++) {
        float *y = j->y + r * W;
        uint32_t *cnt = (uint32_t *)(void *)y;
        const int64_t row = r * C;
        memset(cnt, 0, (size_t)W * sizeof *cnt);
        for (int64_t d = 1; d <= j->dmax; d++) {
            /* 1-grams at d = 1 alone: a single item has no distance. */
            int32_t lo = d > 1 && p->min_gram < 2 ? 2 : p->min_gram;
            if (lo > p->max_gram)
                break;
            for (int64_t s = 0; s + (lo - 1) * d < C; s++)
                for (int32_t n = lo; n <= p->max_gram && s + (n - 1) * d < C; n++) {
                    const tfidf_level *l = &t->lv[n - p->min_gram];
                    int64_t col =
                        l->count ? tfidf_find(l, n, j->x, j->is64, row + s, d) : -1;
                    if (col >= 0)
                        cnt[col]++;
                }
        }
        for (int64_t c = 0; c < W; c++) {
            uint32_t k = cnt[c];
            const float w = t->weights ? t->weights[c] : 1.0f;
            y[c] = p->mode == TFIDF_TF    ? (float)k
                   : p->mode == TFIDF_IDF ? (k > 0 ? w : 0.0f)
                   : t->weights           ? (float)k * w
                                          : (float)k;
        }
    }
}

static prt_status tfidf_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                            int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                            const void *const *x, void *const *ys, void *ws, void *stream)
{
    const tfidf_op *p = (const tfidf_op *)o;
    const prt_dims *d = &in[0].dims;
    tfidf_job j;
    int64_t rows;
    double work;
    (void)nb_in, (void)out, (void)nb_out, (void)ws, (void)stream;
    rows = d->nb_dims == 2 ? d->d[0] : 1;
    j.p = p;
    j.t = tfidf_tab(o);
    j.x = x[0];
    j.is64 = dtype == PRT_INT64;
    j.C = d->nb_dims == 0 ? 1 : d->d[d->nb_dims - 1];
    j.y = ys[0];
    /* Two items d apart fit a row of C only for d < C, so a large
     * max_skip_count costs no empty passes. */
    j.dmax = (int64_t)p->max_skip + 1 < j.C - 1 ? (int64_t)p->max_skip + 1 : j.C - 1;
    j.dmax = j.dmax < 1 ? 1 : j.dmax;
    if (rows == 0)
        return PRT_OK;
    /* A row's windows: C starts at each distance, a lookup per length (in
     * double: only its order of magnitude matters, and it cannot overflow). */
    work =
        (double)j.C * (double)j.dmax * (p->max_gram - p->min_gram + 1) + (double)p->width;
    base_parallel_for(
        rows, work >= OP_GRAIN_SIMPLE ? 1 : 1 + OP_GRAIN_SIMPLE / (int64_t)(work + 1),
        tfidf_rows, &j);
    return PRT_OK;
}

static const op_class tfidf_class = {
    .min_inputs = 1,
    .max_inputs = 1,
    .dtypes = OP_DT_INDEX,
    .size = sizeof(tfidf_op),
    .alias_input = -1,
    .parse = tfidf_parse,
    .serialize = tfidf_serialize,
    .shapes = tfidf_shapes,
    .infer = tfidf_infer,
    .run = tfidf_run,
    .in_dtypes = tfidf_in_dtypes,
    .out_dtype = tfidf_out_dtype,
};

static const prt_field_schema tfidf_schema[] = {
    {"min_gram_length", PRT_FIELD_INT32, 1, "the shortest n-grams counted, >= 1"},
    {"max_gram_length", PRT_FIELD_INT32, 1,
     "the longest n-grams counted, min to ngram_counts' levels"},
    {"max_skip_count", PRT_FIELD_INT32, 1,
     "items skipped between an n-gram's neighbours, >= 0"},
    {"mode", PRT_FIELD_CHAR, -1, "\"TF\", \"IDF\" or \"TFIDF\""},
    {"ngram_counts", PRT_FIELD_INT64, -1,
     "where each level (1-grams, 2-grams ...) starts"},
    {"ngram_indexes", PRT_FIELD_INT64, -1, "each n-gram's output column"},
    {"pool_int64s", PRT_FIELD_INT64, -1, "the n-grams, level after level"},
    {"weights", PRT_FIELD_FLOAT32, -1,
     "optional, one per n-gram, read by output column (IDF, TFIDF)"},
    {"pool_strings", PRT_FIELD_CHAR, -1, "refused: plugrt has no string tensors"},
};

const prt_plugin_creator op_tfidf_creator =
    OP_CREATOR("TfIdfVectorizer", tfidf_class, tfidf_schema, 9);
