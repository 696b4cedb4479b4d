/*
 * Einsum (namespace "plugrt", version "1").
 *
 * Field equation (char), ONNX/numpy syntax: operand terms
 * of letters (a-z, A-Z) separated by ',', then optionally "->" and the
 * output term; whitespace is ignored. 1 to 8 operands (one input each),
 * each of rank <= 8; any number of distinct letters (52 at most); the
 * output has no repeated letter and only letters of the inputs.
 *  - A letter repeated within one operand takes its diagonal ("ii->i",
 *    "ii->" is the trace); every occurrence of a letter must have the same
 *    size (no broadcasting of size-1 dims: numpy only broadcasts under an
 *    ellipsis).
 *  - Without "->" (implicit mode) the output is every letter that occurs
 *    exactly once, in ASCII order (uppercase first), as numpy and the ONNX
 *    reference do.
 *  - "..." (once a term) stands for the dims an operand does not name: when
 *    get_output_shapes first sees the ranks, each is replaced by letters
 *    the equation does not use (right-aligned across operands, as numpy),
 *    and the output's "..." (implicit mode: the front of the output) by all
 *    of them; that letters-only equation is what the engine stores. Its
 *    dims do not broadcast (equal sizes, as for any letter).
 * Syntax errors fail at creation; an input count or rank that does not match
 * the equation, or two static sizes of one letter that differ, fail
 * get_output_shapes.
 *
 * dtypes: float32, float16 (converted to float32 in the workspace), float64,
 * int32, int64. Computation is a plain loop nest over every letter combination:
 * output letters outside, summed letters inside, sums in double for floats
 * (in int64, wrapping, for integers).
 */
#include <string.h>

#include "ops/ops_nn.h"

static const einsum_op *ces(const op_object *o)
{
    return (const einsum_op *)o;
}

static int is_letter(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Letter index 0..51 in ASCII order (A-Z, then a-z). */
static int32_t letter_slot(char c)
{
    return c >= 'a' ? 26 + (c - 'a') : c - 'A';
}
static char slot_letter(int32_t s)
{
    return (char)(s >= 26 ? 'a' + (s - 26) : 'A' + s);
}

/* Labels, ranks and letters from equation eq (no whitespace, no ellipsis);
 * `shown` is the equation as messages quote it. */
static prt_status es_parse_eq(einsum_op *e, const char *eq, const char *shown)
{
    op_object *o = &e->o;
    char rhs[ES_MAX_LETTERS + 1];
    const char *arrow;
    int32_t count[ES_MAX_LETTERS] = {0}, id_of[ES_MAX_LETTERS];
    int32_t term = 0, pos = 0, nb_rhs = 0;
    int explicit_out;
    memset(e->rank, 0, sizeof e->rank);
    arrow = strstr(eq, "->");
    explicit_out = arrow != NULL;
    if (arrow && strstr(arrow + 2, "->"))
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "equation '%s' has more than one '->'", shown);
    for (int32_t i = 0; i < ES_MAX_LETTERS; i++)
        id_of[i] = -1;

    /* Left side: terms of letters. */
    e->nb_ops = 1;
    for (const char *p = eq; *p && p != arrow; p++) {
        if (*p == ',') {
            if (++e->nb_ops > ES_MAX_OPS)
                return op_fail(o, PRT_ERR_UNSUPPORTED,
                               "equation '%s' has more than %d operands", shown,
                               ES_MAX_OPS);
            term = e->nb_ops - 1;
            pos = 0;
            continue;
        }
        if (!is_letter(*p))
            return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                           "equation '%s': '%c' is not a letter (terms are "
                           "letters a-z, A-Z separated by ',')",
                           shown, *p);
        if (pos == PRT_MAX_DIMS)
            return op_fail(o, PRT_ERR_UNSUPPORTED,
                           "equation '%s': operand %d has more than %d "
                           "letters (the rank limit)",
                           shown, (int)term, PRT_MAX_DIMS);
        /* Store the slot for now; ids are assigned below. */
        e->label[term][pos++] = (int8_t)letter_slot(*p);
        e->rank[term] = pos;
        count[letter_slot(*p)]++;
    }

    /* Right side: given, or the letters seen once in ASCII order. */
    if (explicit_out) {
        for (const char *p = arrow + 2; *p; p++) {
            int32_t s;
            if (!is_letter(*p))
                return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                               "equation '%s': '%c' in the output is not a "
                               "letter",
                               shown, *p);
            s = letter_slot(*p);
            if (!count[s])
                return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                               "equation '%s': output letter '%c' does not "
                               "appear in any input",
                               shown, *p);
            if (nb_rhs > 0 && memchr(rhs, *p, (size_t)nb_rhs))
                return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                               "equation '%s': output letter '%c' appears "
                               "twice",
                               shown, *p);
            if (nb_rhs == PRT_MAX_DIMS)
                return op_fail(o, PRT_ERR_UNSUPPORTED,
                               "equation '%s': the output has more than %d "
                               "letters (the rank limit)",
                               shown, PRT_MAX_DIMS);
            rhs[nb_rhs++] = *p;
        }
    } else {
        for (int32_t s = 0; s < ES_MAX_LETTERS; s++)
            if (count[s] == 1) {
                if (nb_rhs == PRT_MAX_DIMS)
                    return op_fail(o, PRT_ERR_UNSUPPORTED,
                                   "equation '%s': the implicit output has "
                                   "more than %d letters",
                                   shown, PRT_MAX_DIMS);
                rhs[nb_rhs++] = slot_letter(s);
            }
    }

    /* Ids: output letters first, then summed letters in order of
     * appearance. */
    e->nb_letters = 0;
    e->out_rank = nb_rhs;
    for (int32_t i = 0; i < nb_rhs; i++) {
        int32_t s = letter_slot(rhs[i]);
        id_of[s] = e->nb_letters;
        e->letter[e->nb_letters++] = rhs[i];
    }
    for (int32_t k = 0; k < e->nb_ops; k++)
        for (int32_t i = 0; i < e->rank[k]; i++) {
            int32_t s = e->label[k][i];
            if (id_of[s] < 0) {
                id_of[s] = e->nb_letters;
                e->letter[e->nb_letters++] = slot_letter(s);
            }
            e->label[k][i] = (int8_t)id_of[s];
        }
    return PRT_OK;
}

/* eq (whitespace dropped) with each '...' checked: at most once a term, as
 * three dots; *n its length. */
static prt_status es_strip(einsum_op *e, char *eq, int32_t *n, int *ellipsis)
{
    int32_t m = 0;
    *ellipsis = 0;
    for (int32_t i = 0; i < e->eq_len; i++)
        if (e->equation[i] != ' ' && e->equation[i] != '\t' && e->equation[i] != '\n' &&
            e->equation[i] != '\r')
            eq[m++] = e->equation[i];
    eq[m] = '\0';
    for (const char *p = eq; *p;) {
        const char *end = p + strcspn(p, ",-");
        const char *dot = memchr(p, '.', (size_t)(end - p));
        if (dot) {
            if (strncmp(dot, "...", 3) != 0 ||
                memchr(dot + 3, '.', (size_t)(end - dot - 3)))
                return op_fail(&e->o, PRT_ERR_INVALID_ARGUMENT,
                               "equation '%s': a term holds '.' other than one '...'",
                               e->equation);
            *ellipsis = 1;
        }
        p = *end == '-' ? end + 2 : *end ? end + 1 : end;
    }
    *n = m;
    return PRT_OK;
}

static prt_status es_parse(op_object *o, const op_fields *f)
{
    einsum_op *e = (einsum_op *)o;
    char eq[ES_EQ_MAX];
    int32_t len, n;
    prt_status st = op_field_str(f, "equation", e->equation, sizeof e->equation, &len);
    if (st)
        return st;
    if (len < 0)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "field 'equation' is required (e.g. \"ij,jk->ik\")");
    e->eq_len = len;
    st = es_strip(e, eq, &n, &e->ellipsis);
    if (!st && e->ellipsis) {
        /* Its syntax now, with each '...' as no dims (es_expand makes the
         * labels once the ranks are known). */
        char bare[ES_EQ_MAX];
        int32_t m = 0;
        for (const char *p = eq; *p;)
            if (strncmp(p, "...", 3) == 0)
                p += 3;
            else
                bare[m++] = *p++;
        bare[m] = '\0';
        st = es_parse_eq(e, bare, e->equation);
    }
    if (st || e->ellipsis)
        return st;
    return es_parse_eq(e, eq, e->equation);
}

/* The equation with each '...' replaced by letters it does not use, now
 * that the operands' ranks are known: operand k's '...' stands for its
 * rank less its letters, the last of E such letters (E the most any
 * operand has: numpy aligns them on the right); the output's '...' (or, an
 * output left implicit, the front of it) for all E. Then labels as for any
 * equation, and that form is what is serialized. */
static prt_status es_expand(einsum_op *e, const int32_t *ranks, int32_t nb_in)
{
    /* out: each '...' (3 bytes) grows to at most PRT_MAX_DIMS letters, an
     * implicit output adds '->' and at most 52 + PRT_MAX_DIMS more */
    char eq[ES_EQ_MAX], out[2 * ES_EQ_MAX], fill[PRT_MAX_DIMS];
    int used[ES_MAX_LETTERS] = {0}, E = 0, term = 0, n, ell;
    int32_t named[ES_MAX_OPS] = {0}, m = 0;
    const char *arrow;
    prt_status st = es_strip(e, eq, &n, &ell);
    if (st)
        return st;
    if (nb_in != e->nb_ops)
        return op_fail(&e->o, PRT_ERR_SHAPE,
                       "equation '%s' has %d operand%s but the layer has %d input%s",
                       e->equation, (int)e->nb_ops, e->nb_ops == 1 ? "" : "s", (int)nb_in,
                       nb_in == 1 ? "" : "s");
    arrow = strstr(eq, "->");
    for (const char *p = eq; *p; p++)
        if (is_letter(*p))
            used[letter_slot(*p)] = 1;
    for (const char *p = eq; *p && p != arrow; p++) {
        if (*p == ',')
            term++;
        else if (is_letter(*p))
            named[term]++;
    }
    term = 0;
    for (const char *p = eq; *p && p != arrow; p++) {
        int32_t k;
        if (*p == ',') {
            term++;
            continue;
        }
        if (strncmp(p, "...", 3) != 0)
            continue;
        k = ranks[term] - named[term];
        if (k < 0)
            return op_fail(
                &e->o, PRT_ERR_SHAPE,
                "equation '%s': operand %d names %d dims but input %d has rank "
                "%d",
                e->equation, (int)term, (int)named[term], (int)term, (int)ranks[term]);
        E = k > E ? k : E;
        p += 2;
    }
    if (E > 0 && arrow && !strstr(arrow, "..."))
        return op_fail(&e->o, PRT_ERR_INVALID_ARGUMENT,
                       "equation '%s': the inputs' '...' stands for %d dims but the "
                       "output has no '...' (as numpy and ONNX Runtime, plugrt does not "
                       "sum them away)",
                       e->equation, E);
    for (int32_t s = 0, i = 0; i < E; s++) {
        if (s == ES_MAX_LETTERS)
            return op_fail(&e->o, PRT_ERR_UNSUPPORTED,
                           "equation '%s': no letters left for '...' (%d dims)",
                           e->equation, E);
        if (!used[s])
            fill[i++] = slot_letter(s);
    }
    term = 0;
    for (const char *p = eq; *p;) {
        if (p == arrow) {
            out[m++] = '-';
            out[m++] = '>';
            p += 2;
            continue;
        }
        if (*p == ',' && (!arrow || p < arrow))
            term++;
        if (strncmp(p, "...", 3) == 0) {
            const int out_side = arrow && p > arrow;
            const int32_t k = out_side ? E : ranks[term] - named[term];
            memcpy(out + m, fill + (E - k), (size_t)k);
            m += k;
            p += 3;
            continue;
        }
        out[m++] = *p++;
    }
    if (!arrow) {
        /* implicit output: the ellipsis dims, then the letters seen once */
        int32_t cnt[ES_MAX_LETTERS] = {0};
        for (int32_t i = 0; i < m; i++)
            if (is_letter(out[i]))
                cnt[letter_slot(out[i])]++;
        out[m++] = '-';
        out[m++] = '>';
        memcpy(out + m, fill, (size_t)E);
        m += E;
        for (int32_t s = 0; s < ES_MAX_LETTERS; s++) {
            int is_fill = memchr(fill, slot_letter(s), (size_t)E) != NULL;
            if (cnt[s] == 1 && !is_fill)
                out[m++] = slot_letter(s);
        }
    }
    out[m] = '\0';
    if (m >= ES_EQ_MAX)
        return op_fail(&e->o, PRT_ERR_UNSUPPORTED,
                       "equation '%s': with its '...' spelled out it is over %d bytes",
                       e->equation, ES_EQ_MAX - 1);
    st = es_parse_eq(e, out, e->equation);
    if (st)
        return st;
    memcpy(e->equation, out, (size_t)m + 1);
    e->eq_len = m;
    e->ellipsis = 0;
    return PRT_OK;
}

static int32_t es_serialize(op_object *o, prt_field *ser)
{
    einsum_op *e = (einsum_op *)o;
    op_ser(&ser[0], "equation", PRT_FIELD_CHAR, e->equation, e->eq_len);
    return 1;
}

/* The letters of operand k, for messages. */
static const char *term_str(const einsum_op *e, int32_t k, char *buf)
{
    int32_t i;
    for (i = 0; i < e->rank[k]; i++)
        buf[i] = e->letter[(int32_t)e->label[k][i]];
    buf[i] = '\0';
    return buf;
}

static prt_status es_check_inputs(const einsum_op *e, int32_t nb_in, const int32_t *ranks)
{
    char t[PRT_MAX_DIMS + 1];
    if (nb_in != e->nb_ops)
        return op_fail(&e->o, PRT_ERR_SHAPE,
                       "equation '%s' has %d operand%s but the layer has %d "
                       "input%s",
                       e->equation, (int)e->nb_ops, e->nb_ops == 1 ? "" : "s", (int)nb_in,
                       nb_in == 1 ? "" : "s");
    for (int32_t k = 0; k < nb_in; k++)
        if (ranks[k] != e->rank[k])
            return op_fail(&e->o, PRT_ERR_SHAPE,
                           "equation '%s': operand %d ('%s') has %d letters "
                           "but input %d has rank %d",
                           e->equation, (int)k, term_str(e, k, t), (int)e->rank[k],
                           (int)k, (int)ranks[k]);
    return PRT_OK;
}

static prt_status es_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                            prt_dim_exprs *out, prt_expr_builder *eb)
{
    const einsum_op *e = ces(o);
    const prt_expr *dim[ES_MAX_LETTERS] = {0};
    int32_t src[ES_MAX_LETTERS] = {0}, ranks[ES_MAX_OPS] = {0};
    prt_status st = PRT_OK;
    for (int32_t k = 0; k < nb_in && k < ES_MAX_OPS; k++)
        ranks[k] = in[k].nb_dims;
    if (e->ellipsis)
        st = es_expand((einsum_op *)o, ranks, nb_in);
    if (!st)
        st = es_check_inputs(e, nb_in, ranks);
    if (st)
        return st;
    for (int32_t k = 0; k < nb_in; k++)
        for (int32_t i = 0; i < e->rank[k]; i++) {
            int32_t l = e->label[k][i];
            int64_t va, vb;
            if (!dim[l]) {
                dim[l] = in[k].d[i];
                src[l] = k;
            } else if (dim[l] != in[k].d[i] && eb->is_constant(eb, dim[l], &va) &&
                       eb->is_constant(eb, in[k].d[i], &vb) && va != vb) {
                return op_fail(o, PRT_ERR_SHAPE,
                               "equation '%s': letter '%c' is %lld in input "
                               "%d and %lld in input %d",
                               e->equation, e->letter[l], (long long)va, (int)src[l],
                               (long long)vb, (int)k);
            }
        }
    out->nb_dims = e->out_rank;
    for (int32_t i = 0; i < e->out_rank; i++)
        out->d[i] = dim[i];
    return PRT_OK;
}

/* Sizes of every letter from concrete dims; fails on a mismatch. */
prt_status es_letter_sizes(const einsum_op *e, const prt_dims *in, int32_t nb_in,
                           int64_t *size)
{
    int32_t src[ES_MAX_LETTERS] = {0}, ranks[ES_MAX_OPS] = {0};
    prt_status st;
    if (e->ellipsis)
        return op_fail(&e->o, PRT_ERR_STATE,
                       "equation '%s': its '...' takes the inputs' ranks first "
                       "(get_output_shapes)",
                       e->equation);
    for (int32_t k = 0; k < nb_in && k < ES_MAX_OPS; k++)
        ranks[k] = in[k].nb_dims;
    st = es_check_inputs(e, nb_in, ranks);
    if (st)
        return st;
    for (int32_t l = 0; l < e->nb_letters; l++)
        size[l] = -1;
    for (int32_t k = 0; k < nb_in; k++)
        for (int32_t i = 0; i < e->rank[k]; i++) {
            int32_t l = e->label[k][i];
            if (size[l] < 0) {
                size[l] = in[k].d[i];
                src[l] = k;
            } else if (size[l] != in[k].d[i]) {
                return op_fail(&e->o, PRT_ERR_SHAPE,
                               "equation '%s': letter '%c' is %lld in input "
                               "%d and %lld in input %d",
                               e->equation, e->letter[l], (long long)size[l], (int)src[l],
                               (long long)in[k].d[i], (int)k);
            }
        }
    return PRT_OK;
}

static prt_status es_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                           prt_dims *out)
{
    const einsum_op *e = ces(o);
    int64_t size[ES_MAX_LETTERS];
    prt_status st = es_letter_sizes(e, in, nb_in, size);
    if (st)
        return st;
    out->nb_dims = e->out_rank;
    for (int32_t i = 0; i < e->out_rank; i++)
        out->d[i] = size[i];
    return PRT_OK;
}

/* float16 inputs as float32. */
static int64_t es_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                            int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    int64_t total = 0;
    (void)o, (void)out;
    if (dtype != PRT_FLOAT16)
        return 0;
    for (int32_t k = 0; k < nb_in; k++) {
        int64_t v = base_volume(&in[k]);
        if (v < 0 || !base_add_i64(total, v, &total))
            return -1;
    }
    return base_mul_i64(total, (int64_t)sizeof(float), &total) ? total : -1;
}

/* The loop nest. `off` holds each operand's element offset for the current
 * output position; the summed letters (ids out_rank..nb_letters-1) are
 * walked with an odometer whose last letter is the tight inner loop. */
typedef struct es_nest {
    int32_t nb_ops, R, NL;
    const int64_t *size;
    int64_t (*st)[ES_MAX_LETTERS];
} es_nest;

#define ES_CONTRACT(NAME, T, ACC, ONE, MULADD)                                           \
    static ACC NAME(const es_nest *z, const void *const *x, const int64_t *base)         \
    {                                                                                    \
        int64_t off[ES_MAX_OPS], idx[ES_MAX_LETTERS] = {0}, outer = 1;                   \
        int32_t last = z->NL - 1;                                                        \
        int64_t n;                                                                       \
        ACC acc = 0;                                                                     \
        if (z->NL == z->R) {                                                             \
            ACC p = ONE;                                                                 \
            for (int32_t k = 0; k < z->nb_ops; k++)                                      \
                p = MULADD(0, p, ((const T *)x[k])[base[k]]);                            \
            return p;                                                                    \
        }                                                                                \
        n = z->size[last];                                                               \
        for (int32_t l = z->R; l < last; l++)                                            \
            outer *= z->size[l];                                                         \
        if (n == 0 || outer == 0)                                                        \
            return 0; /* an empty sum */                                                 \
        for (int32_t k = 0; k < z->nb_ops; k++)                                          \
            off[k] = base[k];                                                            \
        for (int64_t t = 0; t < outer; t++) {                                            \
            if (z->nb_ops == 2) {                                                        \
                const T *a = (const T *)x[0] + off[0];                                   \
                const T *b = (const T *)x[1] + off[1];                                   \
                int64_t sa = z->st[0][last], sb = z->st[1][last];                        \
                for (int64_t j = 0; j < n; j++)                                          \
                    acc = MULADD(acc, (ACC)a[j * sa], b[j * sb]);                        \
            } else {                                                                     \
                for (int64_t j = 0; j < n; j++) {                                        \
                    ACC p = ONE;                                                         \
                    for (int32_t k = 0; k < z->nb_ops; k++)                              \
                        p = MULADD(0, p,                                                 \
                                   ((const T *)x[k])[off[k] + j * z->st[k][last]]);      \
                    acc += p;                                                            \
                }                                                                        \
            }                                                                            \
            for (int32_t l = last - 1; l >= z->R; l--) {                                 \
                for (int32_t k = 0; k < z->nb_ops; k++)                                  \
                    off[k] += z->st[k][l];                                               \
                if (++idx[l] < z->size[l])                                               \
                    break;                                                               \
                for (int32_t k = 0; k < z->nb_ops; k++)                                  \
                    off[k] -= z->st[k][l] * z->size[l];                                  \
                idx[l] = 0;                                                              \
            }                                                                            \
        }                                                                                \
        return acc;                                                                      \
    }

/* acc + p * v in double; in uint64 (wrapping) for integers. */
#define ES_MADD_F(acc, p, v) ((acc) + (p) * (double)(v))
#define ES_MADD_I(acc, p, v) ((acc) + (p) * (uint64_t)(int64_t)(v))

ES_CONTRACT(es_contract_f32, float, double, 1.0, ES_MADD_F)
ES_CONTRACT(es_contract_i32, int32_t, uint64_t, 1u, ES_MADD_I)
ES_CONTRACT(es_contract_i64, int64_t, uint64_t, 1u, ES_MADD_I)
ES_CONTRACT(es_contract_f64, double, double, 1.0, ES_MADD_F)

static prt_status es_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                         int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                         const void *const *xs, void *const *ys, void *ws, void *stream)
{
    void *y = ys[0];
    const einsum_op *e = ces(o);
    int64_t size[ES_MAX_LETTERS], st[ES_MAX_OPS][ES_MAX_LETTERS];
    int64_t base[ES_MAX_OPS] = {0}, idx[PRT_MAX_DIMS] = {0}, nout;
    const void *x[ES_MAX_OPS];
    es_nest z;
    prt_dims dims[ES_MAX_OPS] = {{0, {0}}};
    prt_status s;
    for (int32_t k = 0; k < nb_in; k++)
        dims[k] = in[k].dims;
    s = es_letter_sizes(e, dims, nb_in, size);
    if (s)
        return s;
    /* Strides per operand and letter; a repeated letter adds its strides
     * (the diagonal). */
    memset(st, 0, sizeof st);
    for (int32_t k = 0; k < nb_in; k++) {
        int64_t stride = 1;
        for (int32_t i = e->rank[k] - 1; i >= 0; i--) {
            st[k][(int32_t)e->label[k][i]] += stride;
            stride *= dims[k].d[i];
        }
        x[k] = xs[k];
    }
    if (dtype == PRT_FLOAT16) {
        float *w = ws;
        for (int32_t k = 0; k < nb_in; k++) {
            int64_t v = base_volume(&dims[k]);
            op_to_f32(xs[k], dtype, v, w);
            x[k] = w;
            w += v;
        }
    }
    z.nb_ops = nb_in;
    z.R = e->out_rank;
    z.NL = e->nb_letters;
    z.size = size;
    z.st = st;
    nout = base_volume(&out->dims);
    for (int64_t t = 0; t < nout; t++) {
        switch (dtype) {
        case PRT_FLOAT32:
            ((float *)y)[t] = (float)es_contract_f32(&z, x, base);
            break;
        case PRT_FLOAT16:
            ((uint16_t *)y)[t] = prt_float_to_half((float)es_contract_f32(&z, x, base));
            break;
        case PRT_INT32:
            ((int32_t *)y)[t] = (int32_t)es_contract_i32(&z, x, base);
            break;
        case PRT_FLOAT64:
            ((double *)y)[t] = es_contract_f64(&z, x, base);
            break;
        default:
            ((int64_t *)y)[t] = (int64_t)es_contract_i64(&z, x, base);
            break;
        }
        for (int32_t l = z.R - 1; l >= 0; l--) {
            for (int32_t k = 0; k < nb_in; k++)
                base[k] += st[k][l];
            if (++idx[l] < size[l])
                break;
            for (int32_t k = 0; k < nb_in; k++)
                base[k] -= st[k][l] * size[l];
            idx[l] = 0;
        }
    }
    return PRT_OK;
}

static const op_class einsum_class = {
    .min_inputs = 1,
    .max_inputs = ES_MAX_OPS,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_INT32) | OP_DT(PRT_INT64) | OP_DT(PRT_FLOAT64),
    .size = sizeof(einsum_op),
    .alias_input = -1,
    .parse = es_parse,
    .serialize = es_serialize,
    .shapes = es_shapes,
    .infer = es_infer,
    .workspace = es_workspace,
    .run = es_run,
};

static const prt_field_schema einsum_schema[] = {
    {"equation", PRT_FIELD_CHAR, -1,
     "ONNX/numpy einsum equation without ellipsis, e.g. \"ij,jk->ik\""},
};

const prt_plugin_creator op_einsum_creator =
    OP_CREATOR("Einsum", einsum_class, einsum_schema,
               (int32_t)(sizeof einsum_schema / sizeof einsum_schema[0]));
