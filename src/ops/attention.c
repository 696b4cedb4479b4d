/*
 * Attention (namespace "plugrt", version "1"), ONNX opset 23 semantics
 * without the KV cache: Y = softmax(softcap(Q K^T * scale) + mask) V in one
 * layer, the S x S score matrix never stored whole. float32, float16,
 * bfloat16 (half floats computed in float32 and rounded once).
 *
 * Inputs Q, K, V and the optional attn_mask; all of Q, K, V of rank 4 or
 * all of rank 3:
 *   rank 4  Q [B, Hq, Sq, D], K [B, Hkv, Skv, D] (with k_transposed
 *           [B, Hkv, D, Skv]), V [B, Hkv, Skv, Dv]; Y [B, Hq, Sq, Dv].
 *   rank 3  Q [B, Sq, Hq D], K [B, Skv, Hkv D], V [B, Skv, Hkv Dv], the
 *           heads side by side in the last dim (q_num_heads and
 *           kv_num_heads say how many); Y [B, Sq, Hq Dv].
 * Hq must be a multiple of Hkv (grouped-query attention: query head h reads
 * key/value head h / (Hq / Hkv), ONNX's interleaved repeat). attn_mask is
 * bool (true: attend) or a float of any of the three dtypes (added to the
 * scores), of rank 2 to 4, broadcast (aligned at the right) to
 * [B, Hq, Sq, Skv]; a last dim shorter than Skv masks the keys past it
 * (the reference pads it with false / -inf).
 *
 * Fields (ONNX attribute names; ints accepted as int32 or int64):
 *   is_causal      int32 0 or 1, default 0: query i attends keys j <= i
 *   q_num_heads    int32, default 0; required for rank 3
 *   kv_num_heads   int32, default 0; required for rank 3
 *   scale          float32, default 0: 1 / sqrt(D)
 *   softcap        float32, default 0 (none): scores become
 *                  softcap * tanh(scores / softcap) before the mask
 *   softmax_precision, qk_matmul_output_mode  int32, accepted: the softmax
 *                  is always computed in float32, and the op has one output
 * plugrt's own (the importer's fusion sets them; ONNX has no such
 * attributes):
 *   k_transposed   int32 0 or 1, default 0: K (rank 4 only) is given as
 *                  K^T, [B, Hkv, D, Skv] (what PyTorch's exports compute
 *                  with a Transpose(0, 2, 3, 1), so it is read where it is)
 *   empty_rows_zero int32 0 or 1, default 0: a query whose every key is
 *                  masked gives a row of zeros rather than NaN (PyTorch's
 *                  scaled_dot_product_attention export follows the softmax
 *                  with Where(IsNaN(p), 0, p), which this replaces)
 *
 * The CPU kernel: per (batch, head, tile of 64 queries), scores = Q K^T
 * with MatMul's register-tile products (op_gemm_nn; from ATTN_PANEL_MIN
 * keys on K^T and V packed into panels for op_gemm_nn_panels), then the
 * tile's rows scaled, masked and softmaxed in one vector pass each
 * (op_attn_softmax_rows, src/ops/cpu/attn_kernel.c, with Softmax's
 * exponential; softcap takes a plain loop), then P V into Y's rows. With
 * is_causal a tile stops at its last query's column and each row's
 * softmax at its own query. Each row is computed alone, in a fixed order,
 * so the thread count never changes a bit.
 */
#include <math.h>
#include <string.h>

#include "base/parallel.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/math_ops.h"
#include "ops/ops_nn.h"

/* Queries per task: enough rows for op_gemm_nn's 6-row tiles, few enough
 * that a task's scores (ATTN_TQ x Skv) stay in the L2 cache. */
#define ATTN_TQ 64
/* Keys from which K^T and V are packed into panels for the AVX-512
 * register tiles (op_gemm_nn_panels) rather than read in place with
 * op_gemm_nn: GPT-2 at 128 keys 6% faster packed, at 32 keys and ViT's 65
 * 4% slower (packed per tile then; the copy outweighed the wider tiles). A
 * K not transposed is packed at every length: that copy is its
 * transposition. */
#define ATTN_PANEL_MIN 128
/* Scratch slots (a task runs in its thread's slot, or in slot task % slots
 * past ATTN_SLOTS threads): fixed so the workspace does not depend on the
 * thread count. */
#define ATTN_SLOTS 32

static const attn_op *cattn(const op_object *o)
{
    return (const attn_op *)o;
}

static prt_status attn_flag(const op_fields *f, const char *name, int32_t *v)
{
    prt_status st = op_field_i32(f, name, 0, v);
    if (!st && *v != 0 && *v != 1)
        st = op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT, "%s is %d; it must be 0 or 1",
                            name, (int)*v);
    return st;
}

static prt_status attn_parse(op_object *o, const op_fields *f)
{
    attn_op *a = (attn_op *)o;
    prt_status st = attn_flag(f, "is_causal", &a->is_causal);
    if (!st)
        st = op_field_i32(f, "q_num_heads", 0, &a->q_num_heads);
    if (!st)
        st = op_field_i32(f, "kv_num_heads", 0, &a->kv_num_heads);
    if (!st && (a->q_num_heads < 0 || a->kv_num_heads < 0))
        st = op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT,
                            "q_num_heads %d and kv_num_heads %d must be >= 0",
                            (int)a->q_num_heads, (int)a->kv_num_heads);
    if (!st)
        st = op_field_f32(f, "scale", 0.0f, &a->scale);
    if (!st)
        st = op_field_f32(f, "softcap", 0.0f, &a->softcap);
    if (!st && !(a->softcap >= 0.0f))
        st = op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT, "softcap must be >= 0, it is %g",
                            (double)a->softcap);
    if (!st && !isfinite(a->scale))
        st = op_fields_fail(f, PRT_ERR_INVALID_ARGUMENT, "scale must be finite, it is %g",
                            (double)a->scale);
    if (!st)
        st = op_field_i32(f, "softmax_precision", 1, &a->softmax_precision);
    if (!st)
        st = op_field_i32(f, "qk_matmul_output_mode", 0, &a->qk_mode);
    if (!st)
        st = attn_flag(f, "k_transposed", &a->k_transposed);
    if (!st)
        st = attn_flag(f, "empty_rows_zero", &a->empty_rows_zero);
    return st;
}

static int32_t attn_serialize(op_object *o, prt_field *ser)
{
    attn_op *a = (attn_op *)o;
    op_ser(&ser[0], "is_causal", PRT_FIELD_INT32, &a->is_causal, 1);
    op_ser(&ser[1], "q_num_heads", PRT_FIELD_INT32, &a->q_num_heads, 1);
    op_ser(&ser[2], "kv_num_heads", PRT_FIELD_INT32, &a->kv_num_heads, 1);
    op_ser(&ser[3], "scale", PRT_FIELD_FLOAT32, &a->scale, 1);
    op_ser(&ser[4], "softcap", PRT_FIELD_FLOAT32, &a->softcap, 1);
    /* softmax_precision and qk_matmul_output_mode change nothing here:
     * not kept (OP_MAX_FIELDS). */
    op_ser(&ser[5], "k_transposed", PRT_FIELD_INT32, &a->k_transposed, 1);
    op_ser(&ser[6], "empty_rows_zero", PRT_FIELD_INT32, &a->empty_rows_zero, 1);
    return 7;
}

static uint32_t attn_in_dtypes(const op_object *o, int32_t index, const int32_t *types)
{
    (void)o;
    if (index == 0)
        return OP_DT_FLOAT | OP_DT(PRT_BFLOAT16);
    if (index == 3)
        return OP_DT_FLOAT | OP_DT(PRT_BFLOAT16) | OP_DT(PRT_BOOL);
    return OP_DT(types[0]);
}

static const char *attn_in_name(int32_t k)
{
    static const char *const names[4] = {"Q", "K", "V", "attn_mask"};
    return names[k];
}

/* The fields rank r needs: rank 3's head counts, k_transposed rank 4. */
static prt_status attn_heads3(const op_object *o, int32_t r)
{
    const attn_op *a = cattn(o);
    if (r == 4)
        return PRT_OK; /* the heads are dims; the fields, if given, unused */
    if (a->k_transposed)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "k_transposed needs rank-4 Q, K and V; they have rank 3");
    if (a->q_num_heads <= 0 || a->kv_num_heads <= 0)
        return op_fail(o, PRT_ERR_INVALID_ARGUMENT,
                       "rank-3 Q, K and V need q_num_heads and kv_num_heads (they are %d "
                       "and %d)",
                       (int)a->q_num_heads, (int)a->kv_num_heads);
    return PRT_OK;
}

static prt_status attn_shapes(op_object *o, const prt_dim_exprs *in, int32_t nb_in,
                              prt_dim_exprs *out, prt_expr_builder *eb)
{
    const attn_op *a = cattn(o);
    int32_t r = in[0].nb_dims;
    prt_status st;
    for (int32_t k = 0; k < 3; k++)
        if (in[k].nb_dims != 3 && in[k].nb_dims != 4)
            return op_fail(o, PRT_ERR_SHAPE, "%s has rank %d; it must be 3 or 4",
                           attn_in_name(k), (int)in[k].nb_dims);
    if (in[1].nb_dims != r || in[2].nb_dims != r)
        return op_fail(o, PRT_ERR_SHAPE,
                       "Q, K and V must have one rank; they have %d, %d and %d", (int)r,
                       (int)in[1].nb_dims, (int)in[2].nb_dims);
    if (nb_in > 3 && (in[3].nb_dims < 1 || in[3].nb_dims > 4))
        return op_fail(o, PRT_ERR_SHAPE, "attn_mask has rank %d; it must be 1 to 4",
                       (int)in[3].nb_dims);
    st = attn_heads3(o, r);
    if (st)
        return st;
    out->nb_dims = r;
    out->d[0] = in[0].d[0];
    if (r == 4) {
        out->d[1] = in[0].d[1];
        out->d[2] = in[0].d[2];
        out->d[3] = in[2].d[3];
    } else {
        out->d[1] = in[0].d[1];
        out->d[2] = eb->operation(eb, PRT_DIM_PROD,
                                  eb->operation(eb, PRT_DIM_FLOOR_DIV, in[2].d[2],
                                                eb->constant(eb, a->kv_num_heads)),
                                  eb->constant(eb, a->q_num_heads));
        if (!out->d[2])
            return op_fail(o, PRT_ERR_OUT_OF_MEMORY, "out of memory building Y's dims");
    }
    return PRT_OK;
}

prt_status attn_geometry(const op_object *o, const prt_dims *in, int32_t nb_in,
                         attn_geom *g)
{
    const attn_op *a = cattn(o);
    const prt_dims *q = &in[0], *k = &in[1], *v = &in[2];
    int32_t r = q->nb_dims;
    char s0[128], s1[128], s2[128];
    prt_status st;
    memset(g, 0, sizeof *g);
    if ((r != 3 && r != 4) || k->nb_dims != r || v->nb_dims != r)
        return op_fail(o, PRT_ERR_SHAPE, "Q, K and V must all have rank 3 or all rank 4");
    st = attn_heads3(o, r);
    if (st)
        return st;
    g->B = q->d[0];
    if (r == 4) {
        g->Hq = q->d[1];
        g->Sq = q->d[2];
        g->D = q->d[3];
        g->Hkv = k->d[1];
        g->Skv = a->k_transposed ? k->d[3] : k->d[2];
        g->Dv = v->d[3];
        if ((a->k_transposed ? k->d[2] : k->d[3]) != g->D || v->d[1] != g->Hkv ||
            v->d[2] != g->Skv || k->d[0] != g->B || v->d[0] != g->B)
            goto bad;
        g->q[0] = g->Hq * g->Sq * g->D, g->q[1] = g->Sq * g->D, g->q[2] = g->D;
        g->k[0] = g->Hkv * g->Skv * g->D, g->k[1] = g->Skv * g->D;
        g->k[2] = a->k_transposed ? g->Skv : g->D;
        g->v[0] = g->Hkv * g->Skv * g->Dv, g->v[1] = g->Skv * g->Dv, g->v[2] = g->Dv;
        g->y[0] = g->Hq * g->Sq * g->Dv, g->y[1] = g->Sq * g->Dv, g->y[2] = g->Dv;
    } else {
        g->Hq = a->q_num_heads;
        g->Hkv = a->kv_num_heads;
        g->Sq = q->d[1];
        g->Skv = k->d[1];
        if (q->d[2] % g->Hq || k->d[2] % g->Hkv || v->d[2] % g->Hkv)
            return op_fail(o, PRT_ERR_SHAPE,
                           "Q's last dim (%lld) must be a multiple of q_num_heads (%d), "
                           "K's (%lld) and V's (%lld) of kv_num_heads (%d)",
                           (long long)q->d[2], (int)g->Hq, (long long)k->d[2],
                           (long long)v->d[2], (int)g->Hkv);
        g->D = q->d[2] / g->Hq;
        g->Dv = v->d[2] / g->Hkv;
        if (k->d[2] / g->Hkv != g->D || v->d[1] != g->Skv || k->d[0] != g->B ||
            v->d[0] != g->B)
            goto bad;
        g->q[0] = g->Sq * q->d[2], g->q[1] = g->D, g->q[2] = q->d[2];
        g->k[0] = g->Skv * k->d[2], g->k[1] = g->D, g->k[2] = k->d[2];
        g->v[0] = g->Skv * v->d[2], g->v[1] = g->Dv, g->v[2] = v->d[2];
        g->y[0] = g->Sq * g->Hq * g->Dv, g->y[1] = g->Dv, g->y[2] = g->Hq * g->Dv;
    }
    if (g->Hkv <= 0 || g->Hq % g->Hkv)
        return op_fail(
            o, PRT_ERR_SHAPE,
            "Q's %lld heads must be a multiple of K's and V's %lld (grouped-query "
            "attention)",
            (long long)g->Hq, (long long)g->Hkv);
    g->mlen = g->Skv;
    if (nb_in > 3) {
        const prt_dims *m = &in[3];
        const int64_t want[4] = {g->B, g->Hq, g->Sq, g->Skv};
        int64_t stride = 1;
        if (m->nb_dims < 1 || m->nb_dims > 4)
            return op_fail(o, PRT_ERR_SHAPE, "attn_mask has rank %d; it must be 1 to 4",
                           (int)m->nb_dims);
        for (int32_t i = 3; i >= 0; i--) {
            int32_t mi = m->nb_dims - 4 + i;
            int64_t d = mi >= 0 ? m->d[mi] : 1;
            if (i == 3) {
                if (d > g->Skv || (d == 0 && g->Skv > 0))
                    goto bad_mask;
                g->mlen = d;
                g->m[3] = 1;
            } else if (d != 1 && d != want[i]) {
                goto bad_mask;
            } else {
                g->m[i] = d == 1 ? 0 : stride;
            }
            stride *= d;
        }
    }
    return PRT_OK;
bad_mask:
    return op_fail(
        o, PRT_ERR_SHAPE,
        "attn_mask %s cannot be broadcast to [batch %lld, heads %lld, queries "
        "%lld, keys %lld] (its last dim may be shorter than the keys, not longer)",
        base_dims_format(&in[3], BASE_DIMS_LIST, s0, sizeof s0), (long long)g->B,
        (long long)g->Hq, (long long)g->Sq, (long long)g->Skv);
bad:
    return op_fail(o, PRT_ERR_SHAPE,
                   "Q %s, K %s and V %s do not agree (rank %d%s: batch, heads, key/value "
                   "length and head size must match)",
                   base_dims_format(q, BASE_DIMS_LIST, s0, sizeof s0),
                   base_dims_format(k, BASE_DIMS_LIST, s1, sizeof s1),
                   base_dims_format(v, BASE_DIMS_LIST, s2, sizeof s2), (int)r,
                   a->k_transposed ? ", K given as K^T" : "");
}

static prt_status attn_infer(const op_object *o, const prt_dims *in, int32_t nb_in,
                             prt_dims *out)
{
    attn_geom g;
    prt_status st = attn_geometry(o, in, nb_in, &g);
    if (st)
        return st;
    *out = in[0];
    if (out->nb_dims == 4)
        out->d[3] = g.Dv;
    else
        out->d[2] = g.Hq * g.Dv;
    return PRT_OK;
}

/* op_gemm_panel_floats for dims known to fit (checked by attn_workspace's
 * bound), 0 for an empty product. */
static int64_t attn_panel_floats(int64_t K, int64_t N)
{
    return K > 0 && N > 0 ? K * ((N + 15) / 16 * 16) : 0;
}

/* The query tiles of a head: as few as ATTN_TQ allows, of one size (ViT's
 * 65 queries two of 33 and 32, not 64 and 1: the register tiles stay full
 * and two threads get even halves). */
static int64_t attn_tiles(const attn_geom *g, int64_t *tq)
{
    int64_t tiles = (g->Sq + ATTN_TQ - 1) / ATTN_TQ;
    *tq = tiles ? (g->Sq + tiles - 1) / tiles : ATTN_TQ;
    return tiles;
}

/* Floats of one key/value head's panels: K^T's (D x Skv) and V's
 * (Skv x Dv), columns rounded up to 16 (op_gemm_panel_floats). */
static int64_t attn_kpanel_floats(const attn_geom *g)
{
    return attn_panel_floats(g->D, g->Skv);
}

static int64_t attn_vpanel_floats(const attn_geom *g)
{
    return attn_panel_floats(g->Skv, g->Dv);
}

/* Volume of dims, 0 for an absent or bad one. */
static int64_t attn_vol(const prt_dims *d)
{
    int64_t v = base_volume(d);
    return v > 0 ? v : 0;
}

static int64_t attn_max(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* An upper bound of the run's need from each input's dims alone: the
 * builder asks with every input's profile maximum, which need not agree
 * with each other (attn_geometry would refuse them), so nothing is checked
 * here, and every term grows with the dims. */
static int64_t attn_workspace(const op_object *o, int32_t dtype, const prt_dims *in,
                              int32_t nb_in, const prt_dims *out, int32_t nb_out)
{
    const attn_op *a = cattn(o);
    const prt_dims *q = &in[0], *k = &in[1], *v = &in[2];
    int64_t n = 0, t, t2, tasks, D, Dh, Dv, Skv, B, Hq, Hkv, Sq;
    (void)nb_out;
    if (q->nb_dims < 3 || k->nb_dims < 3 || v->nb_dims < 3 || q->nb_dims > 4)
        return 0; /* refused before a run asks */
    B = q->d[0];
    if (q->nb_dims == 4) {
        Hq = q->d[1], Sq = q->d[2], D = q->d[3], Dh = D;
        Hkv = k->d[1], Dv = v->nb_dims > 3 ? v->d[3] : 0;
        Skv = attn_max(attn_max(k->d[2], k->nb_dims > 3 ? k->d[3] : 0), v->d[2]);
    } else {
        Hq = attn_max(a->q_num_heads, 1), Sq = q->d[1], D = q->d[2];
        Hkv = attn_max(a->kv_num_heads, 1), Dh = D / Hq, Dv = v->d[2] / Hkv;
        Skv = attn_max(k->d[1], v->d[1]);
    }
    if (B < 0 || Hq < 0 || Sq < 0 || D < 0 || Skv < 0 || Hkv < 0 || Dv < 0)
        return 0;
    if (!base_mul_i64(B, Hq, &tasks) ||
        !base_mul_i64(tasks, (Sq + ATTN_TQ - 1) / ATTN_TQ, &tasks))
        return -1;
    t = tasks < ATTN_SLOTS ? tasks : ATTN_SLOTS;
    /* A slot's scores, then each key/value head's K^T and V panels
     * (attn_kpanel_floats, attn_vpanel_floats: columns rounded up to 16). */
    if (!base_mul_i64(ATTN_TQ, Skv, &n) || !base_mul_i64(n, t, &n) ||
        !base_mul_i64(Dh, Skv + 15, &t) || !base_mul_i64(Skv, Dv + 15, &t2) ||
        !base_add_i64(t, t2, &t) || !base_mul_i64(t, B, &t) ||
        !base_mul_i64(t, Hkv, &t) || !base_add_i64(n, t, &n))
        return -1;
    if (dtype != PRT_FLOAT32)
        n += attn_vol(&in[0]) + attn_vol(&in[1]) + attn_vol(&in[2]) + attn_vol(&out[0]);
    /* A half-float mask as float32 (its dtype is not known here). */
    if (nb_in > 3)
        n += attn_vol(&in[3]);
    return base_mul_i64(n, (int64_t)sizeof(float), &n) ? n : -1;
}

typedef struct attn_job {
    attn_geom g;
    const float *q, *k, *v;
    float *y;
    const float *mf;   /* a float mask (float32 or converted), else NULL */
    const uint8_t *mb; /* a bool mask, else NULL */
    float scale, softcap;
    int32_t causal, k_transposed, empty_zero;
    int64_t tiles, tq, tasks, slots;
    int32_t pack_k, pack_v; /* K^T, V read from kp, vp (else in place) */
    float *ws;              /* slots x tq x Skv: each slot's scores */
    float *kp, *vp;         /* B x Hkv panels of K^T and V */
} attn_job;

/* The score of query i, key j: scaled, capped, masked (-inf: not attended). */
static float attn_score(const attn_job *j, float s, int64_t moff, int64_t i, int64_t c)
{
    s *= j->scale;
    if (j->softcap > 0.0f)
        s = j->softcap * tanhf(s / j->softcap);
    if (c >= j->g.mlen || (j->causal && c > i))
        return -INFINITY;
    if (j->mb)
        return j->mb[moff + c] ? s : -INFINITY;
    if (j->mf)
        return s + j->mf[moff + c];
    return s;
}

/* The plain softmax of a row already scored, for what op_softmax_row hands
 * back: a NaN or an infinite largest score (ONNX's NaN rules), or every key
 * masked (0: the row is left alone). */
static int attn_softmax_plain(float *row, int64_t n)
{
    float mx = -INFINITY;
    double sum = 0.0;
    for (int64_t c = 0; c < n; c++)
        mx = row[c] > mx ? row[c] : mx; /* a NaN score stays in the row */
    if (mx == -INFINITY)
        return 0;
    for (int64_t c = 0; c < n; c++) {
        row[c] = expf(row[c] - mx);
        sum += row[c];
    }
    {
        float inv = (float)(1.0 / sum);
        for (int64_t c = 0; c < n; c++)
            row[c] *= inv;
    }
    return 1;
}

/* Row r of a tile's scores becomes its softmax over its n columns; 0 when
 * every key is masked (the row is left alone). The keys a query cannot see
 * (past the mask's length, or past the query under is_causal) are cut off
 * before the softmax and get probability 0 after it, so neither the scoring
 * nor the exponentials run over them. The scoring is one pass of plain
 * loops the compiler vectorizes (no per-element branch on the mask kind),
 * and the softmax the vectorized exponential Softmax itself uses
 * (op_softmax_row), so the layer computes what the unfused MatMul, Mul,
 * Add and Softmax did, at their speed. */
static int attn_softmax_row(const attn_job *j, float *row, int64_t n, int64_t moff,
                            int64_t i)
{
    int64_t lim = n < j->g.mlen ? n : j->g.mlen;
    int live;
    if (j->causal && i + 1 < lim)
        lim = i + 1;
    if (j->softcap > 0.0f) {
        for (int64_t c = 0; c < lim; c++)
            row[c] = attn_score(j, row[c], moff, i, c);
        live = lim > 0 && op_softmax_row(row, row, lim, 0);
    } else {
        float inv = 0.0f;
        if (lim > 0)
            op_attn_softmax_rows(row, n, 1, lim, 0, 0, j->scale,
                                 j->mf ? j->mf + moff : NULL, j->mb ? j->mb + moff : NULL,
                                 0, &inv);
        for (int64_t c = 0; inv > 0.0f && c < lim; c++)
            row[c] *= inv;
        live = inv > 0.0f;
    }
    if (!live)
        live = attn_softmax_plain(row, lim);
    if (live && lim < n)
        memset(row + lim, 0, (size_t)(n - lim) * sizeof(float));
    return live;
}

/* K's rows [0, n) as the panels of K^T (D x n) that op_gemm_nn_panels
 * reads: strip s holds keys [16 s, 16 s + 16), row d of it their elements
 * d, zero past key n. */
static void attn_pack_k(const float *kb, int64_t ldk, int64_t D, int64_t n, float *bp)
{
    for (int64_t s = 0; s * 16 < n; s++) {
        const int64_t c0 = s * 16, w = n - c0 < 16 ? n - c0 : 16;
        float *p = bp + s * D * 16;
        for (int64_t d = 0; d < D; d++) {
            for (int64_t q = 0; q < w; q++)
                p[d * 16 + q] = kb[(c0 + q) * ldk + d];
            for (int64_t q = w; q < 16; q++)
                p[d * 16 + q] = 0.0f;
        }
    }
}

/* Key/value heads [b, e) (batch b / Hkv, head b % Hkv) into their
 * panels: once for every query tile and query head that reads them. */
static void attn_pack_range(void *arg, int64_t b, int64_t e)
{
    const attn_job *j = arg;
    const attn_geom *g = &j->g;
    for (int64_t t = b; t < e; t++) {
        const float *kb = j->k + t / g->Hkv * g->k[0] + t % g->Hkv * g->k[1];
        const float *vb = j->v + t / g->Hkv * g->v[0] + t % g->Hkv * g->v[1];
        if (j->pack_k && j->k_transposed)
            op_gemm_pack_panels(g->D, g->Skv, kb, g->k[2], 0, (g->Skv + 15) / 16,
                                j->kp + t * attn_kpanel_floats(g));
        else if (j->pack_k)
            attn_pack_k(kb, g->k[2], g->D, g->Skv, j->kp + t * attn_kpanel_floats(g));
        if (j->pack_v)
            op_gemm_pack_panels(g->Skv, g->Dv, vb, g->v[2], 0, (g->Dv + 15) / 16,
                                j->vp + t * attn_vpanel_floats(g));
    }
}

/* Y's rows = P V over the first n keys, V from its panels (K = Skv rows a
 * strip), a strip at a time when n < Skv (causal) since op_gemm_nn_panels
 * takes a strip's rows to be the product's K. */
static void attn_pv_panels(const attn_job *j, int64_t rows, int64_t n, const float *p,
                           const float *vp, float *yb)
{
    const attn_geom *g = &j->g;
    if (n == g->Skv) {
        op_gemm_nn_panels(rows, g->Dv, n, p, g->Skv, vp, yb, g->y[2], NULL);
        return;
    }
    for (int64_t c = 0; c < g->Dv; c += 16)
        op_gemm_nn_panels(rows, g->Dv - c < 16 ? g->Dv - c : 16, n, p, g->Skv,
                          vp + c * g->Skv, yb + c, g->y[2], NULL);
}

/* One task: queries [i0, i0 + rows) of head h of batch b. The products
 * are MatMul's register tiles, reading K^T and V in place or from the
 * panels attn_pack_range made (op_gemm_nn_panels: AVX-512 where there is
 * one); both give op_gemm_nn's sums. */
static void attn_task(const attn_job *j, int64_t t, float *scores)
{
    const attn_geom *g = &j->g;
    int64_t tile = t % j->tiles, bh = t / j->tiles, h = bh % g->Hq, b = bh / g->Hq;
    int64_t kvh = h / (g->Hq / g->Hkv), i0 = tile * j->tq, kv = b * g->Hkv + kvh;
    int64_t rows = g->Sq - i0 < j->tq ? g->Sq - i0 : j->tq;
    int64_t n = g->Skv;
    const float *qb = j->q + b * g->q[0] + h * g->q[1] + i0 * g->q[2];
    const float *kb = j->k + b * g->k[0] + kvh * g->k[1];
    const float *vb = j->v + b * g->v[0] + kvh * g->v[1];
    float *yb = j->y + b * g->y[0] + h * g->y[1] + i0 * g->y[2];
    uint8_t live[ATTN_TQ];
    float inv[ATTN_TQ]; /* each row's 1 / sum, applied to its outputs */
    /* Causal: no query of the tile sees a key past its last one. */
    if (j->causal && i0 + rows < n)
        n = i0 + rows;
    if (n > 0 && g->D > 0) {
        if (j->pack_k)
            op_gemm_nn_panels(rows, n, g->D, qb, g->q[2],
                              j->kp + kv * attn_kpanel_floats(g), scores, g->Skv, NULL);
        else
            op_gemm_nn(rows, n, g->D, qb, g->q[2], kb, g->k[2], scores, g->Skv, NULL);
    } else {
        for (int64_t r = 0; r < rows; r++)
            memset(scores + r * g->Skv, 0, (size_t)n * sizeof(float));
    }
    if (j->softcap <= 0.0f && n <= g->mlen) {
        /* The whole tile in one call, each row's division left for its Dv
         * outputs; the rows it hands back (a NaN, an infinity, every key
         * masked) take the plain loop, which divides. */
        int64_t moff = b * g->m[0] + h * g->m[1] + i0 * g->m[2];
        op_attn_softmax_rows(scores, g->Skv, rows, n, i0, j->causal, j->scale,
                             j->mf ? j->mf + moff : NULL, j->mb ? j->mb + moff : NULL,
                             g->m[2], inv);
        for (int64_t r = 0; r < rows; r++) {
            int64_t lim = j->causal && i0 + r + 1 < n ? i0 + r + 1 : n;
            float *row = scores + r * g->Skv;
            live[r] = inv[r] > 0.0f;
            if (live[r])
                continue;
            inv[r] = 1.0f;
            live[r] = (uint8_t)attn_softmax_plain(row, lim);
            if (live[r])
                memset(row + lim, 0, (size_t)(n - lim) * sizeof(float));
            else
                memset(row, 0, (size_t)n * sizeof(float));
        }
    } else {
        for (int64_t r = 0; r < rows; r++) {
            int64_t i = i0 + r;
            int64_t moff = b * g->m[0] + h * g->m[1] + i * g->m[2];
            live[r] = (uint8_t)attn_softmax_row(j, scores + r * g->Skv, n, moff, i);
            inv[r] = 1.0f;
            if (!live[r])
                memset(scores + r * g->Skv, 0, (size_t)n * sizeof(float));
        }
    }
    if (n > 0 && g->Dv > 0) {
        if (j->pack_v)
            attn_pv_panels(j, rows, n, scores, j->vp + kv * attn_vpanel_floats(g), yb);
        else
            op_gemm_nn(rows, g->Dv, n, scores, g->Skv, vb, g->v[2], yb, g->y[2], NULL);
    }
    for (int64_t r = 0; r < rows; r++) {
        float *yr = yb + r * g->y[2];
        if (!live[r] || n == 0)
            for (int64_t d = 0; d < g->Dv; d++)
                yr[d] = j->empty_zero ? 0.0f : NAN;
        else if (inv[r] != 1.0f)
            for (int64_t d = 0; d < g->Dv; d++)
                yr[d] *= inv[r];
    }
}

/* Tasks [b, e) in the scratch of the thread that runs them (slot = thread
 * index): the pool cuts the tasks themselves into even chunks, so two
 * threads get even halves at any task count, and a chunk's tasks are
 * consecutive tiles and heads (one head's K^T and V stay in the cache). */
static void attn_task_range(void *arg, int64_t b, int64_t e)
{
    const attn_job *j = arg;
    float *scores = j->ws + base_parallel_thread_index() * j->tq * j->g.Skv;
    for (int64_t t = b; t < e; t++)
        attn_task(j, t, scores);
}

/* Slots [b, e): each runs its tasks (slot, slot + slots, ...) in its own
 * scratch. For pools of more threads than slots, whose thread indices
 * would pass the workspace's slots. */
static void attn_range(void *arg, int64_t b, int64_t e)
{
    const attn_job *j = arg;
    for (int64_t s = b; s < e; s++) {
        float *scores = j->ws + s * j->tq * j->g.Skv;
        for (int64_t t = s; t < j->tasks; t += j->slots)
            attn_task(j, t, scores);
    }
}

static prt_status attn_run(const op_object *o, int32_t dtype, const prt_tensor_desc *in,
                           int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out,
                           const void *const *x, void *const *y, void *ws, void *stream)
{
    const attn_op *a = cattn(o);
    prt_dims dims[4];
    attn_job j;
    float *w = ws;
    prt_status st;
    (void)stream, (void)nb_out;
    memset(&j, 0, sizeof j);
    for (int32_t k = 0; k < nb_in; k++)
        dims[k] = in[k].dims;
    st = attn_geometry(o, dims, nb_in, &j.g);
    if (st)
        return st;
    if (base_volume(&out[0].dims) <= 0)
        return PRT_OK;
    j.tiles = attn_tiles(&j.g, &j.tq);
    j.tasks = j.g.B * j.g.Hq * j.tiles;
    j.slots = j.tasks < ATTN_SLOTS ? j.tasks : ATTN_SLOTS;
    j.ws = w;
    w += j.slots * j.tq * j.g.Skv;
    j.kp = w;
    w += j.g.B * j.g.Hkv * attn_kpanel_floats(&j.g);
    j.vp = w;
    w += j.g.B * j.g.Hkv * attn_vpanel_floats(&j.g);
    j.q = x[0], j.k = x[1], j.v = x[2], j.y = y[0];
    if (dtype != PRT_FLOAT32) {
        float *bufs[3];
        for (int32_t k = 0; k < 3; k++) {
            bufs[k] = w;
            op_to_f32(x[k], dtype, attn_vol(&dims[k]), w);
            w += attn_vol(&dims[k]);
        }
        j.q = bufs[0], j.k = bufs[1], j.v = bufs[2], j.y = w;
        w += attn_vol(&out[0].dims);
    }
    if (nb_in > 3 && in[3].dtype == PRT_BOOL) {
        j.mb = x[3];
    } else if (nb_in > 3 && in[3].dtype == PRT_FLOAT32) {
        j.mf = x[3];
    } else if (nb_in > 3) {
        op_to_f32(x[3], in[3].dtype, attn_vol(&dims[3]), w);
        j.mf = w;
    }
    j.scale = a->scale != 0.0f ? a->scale : 1.0f / sqrtf((float)j.g.D);
    j.softcap = a->softcap;
    j.causal = a->is_causal;
    j.k_transposed = a->k_transposed;
    j.empty_zero = a->empty_rows_zero;
    /* A slot's tasks: a tile of queries against every key, a product each
     * way, so one slot per thread step. */
    j.pack_k = !j.k_transposed || j.g.Skv >= ATTN_PANEL_MIN;
    j.pack_v = j.g.Skv >= ATTN_PANEL_MIN;
    if (j.pack_k || j.pack_v)
        base_parallel_for(j.g.B * j.g.Hkv, 1, attn_pack_range, &j);
    if (base_parallel_threads() <= j.slots)
        base_parallel_for(j.tasks, 1, attn_task_range, &j);
    else
        base_parallel_for(j.slots, 1, attn_range, &j);
    if (dtype != PRT_FLOAT32)
        op_from_f32(j.y, dtype, attn_vol(&out[0].dims), y[0]);
    return PRT_OK;
}

static const op_class attn_class = {
    .min_inputs = 3,
    .max_inputs = 4,
    .dtypes = OP_DT_FLOAT | OP_DT(PRT_BFLOAT16),
    .size = sizeof(attn_op),
    .alias_input = -1,
    .parse = attn_parse,
    .serialize = attn_serialize,
    .shapes = attn_shapes,
    .infer = attn_infer,
    .workspace = attn_workspace,
    .run = attn_run,
    .in_dtypes = attn_in_dtypes,
};

static const prt_field_schema attn_schema[] = {
    {"is_causal", PRT_FIELD_INT32, 1, "1: query i attends keys j <= i; default 0"},
    {"q_num_heads", PRT_FIELD_INT32, 1, "query heads (rank-3 inputs)"},
    {"kv_num_heads", PRT_FIELD_INT32, 1, "key/value heads (rank-3 inputs)"},
    {"scale", PRT_FIELD_FLOAT32, 1, "score scale; default 0: 1/sqrt(head size)"},
    {"softcap", PRT_FIELD_FLOAT32, 1, "> 0: scores become softcap*tanh(s/softcap)"},
    {"softmax_precision", PRT_FIELD_INT32, 1, "accepted; the softmax is float32"},
    {"qk_matmul_output_mode", PRT_FIELD_INT32, 1, "accepted; Y is the only output"},
    {"k_transposed", PRT_FIELD_INT32, 1, "1: K given as [B, Hkv, D, Skv] (plugrt)"},
    {"empty_rows_zero", PRT_FIELD_INT32, 1,
     "1: a query with every key masked gives zeros, not NaN (plugrt)"},
};

const prt_plugin_creator op_attention_creator =
    OP_CREATOR("Attention", attn_class, attn_schema,
               (int32_t)(sizeof attn_schema / sizeof attn_schema[0]));
