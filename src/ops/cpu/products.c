/* The CPU's matrix products (op_common.h's op_gemm_*): which kernel each
 * product takes by its shape (op_gemv_f32, the register tiles of
 * gemm_kernel.c, OpenBLAS through blas.c, or the built-in loops here), the
 * blocks that spread one over the context's threads, and a constant B
 * packed once into panels. */
#include "ops/op_common.h"

#include <string.h>

#include "base/parallel.h"
#include "ops/cpu/cpu_kernels.h"

/* The built-in product works on tiles of C of GEMM_MR rows by GEMM_NR
 * columns, held in registers while k runs over a panel of op(B) of up to
 * GEMM_KC rows copied to the stack (8 KiB: it stays in L1 while every row of
 * A sweeps it). Each element is still the sum over k in order from 0, one
 * multiply and one add per term, so the results are those of the plain
 * triple loop, bit for bit. */
#define GEMM_MR 4
#define GEMM_NR 8
#define GEMM_KC 256

/* Four floats as GCC and Clang lower them: SSE on x86-64, NEON on arm64. */
typedef float gemm_v4 __attribute__((vector_size(16)));

static gemm_v4 v4_load(const float *p)
{
    gemm_v4 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void v4_store(float *p, gemm_v4 v)
{
    memcpy(p, &v, sizeof v);
}

/* The panel: rows k0 .. k0 + kc of op(B), columns j0 .. j0 + nr, zero past
 * nr. */
static void gemm_pack(int32_t trans_b, const float *B, int64_t ldb, int64_t k0,
                      int64_t kc, int64_t j0, int64_t nr, float *bp)
{
    for (int64_t k = 0; k < kc; k++)
        for (int64_t t = 0; t < GEMM_NR; t++)
            bp[k * GEMM_NR + t] = t >= nr   ? 0.0f
                                  : trans_b ? B[(j0 + t) * ldb + k0 + k]
                                            : B[(k0 + k) * ldb + j0 + t];
}

/* Tile rows i .. i + mr (mr is GEMM_MR, or 1 for the last rows) of C, nr
 * columns from c: c = (first ? 0 : c) + op(A)'s rows times the panel. a
 * points to op(A)'s element (i, k0); ai and ak step i and k. */
static void gemm_tile(int64_t mr, int64_t nr, int64_t kc, const float *a, int64_t ai,
                      int64_t ak, const float *bp, float *c, int64_t ldc, int first)
{
    float t[GEMM_MR][GEMM_NR] = {{0.0f}};
    gemm_v4 acc[GEMM_MR][2];
    for (int64_t i = 0; i < mr && !first; i++)
        memcpy(t[i], c + i * ldc, sizeof(float) * (size_t)nr);
    for (int64_t i = 0; i < GEMM_MR; i++) {
        acc[i][0] = v4_load(t[i]);
        acc[i][1] = v4_load(t[i] + 4);
    }
    if (mr == GEMM_MR) {
        for (int64_t k = 0; k < kc; k++) {
            const gemm_v4 b0 = v4_load(bp + k * GEMM_NR),
                          b1 = v4_load(bp + k * GEMM_NR + 4);
            const float *ak0 = a + k * ak;
            for (int64_t i = 0; i < GEMM_MR; i++) {
                const float av = ak0[i * ai];
                acc[i][0] += av * b0;
                acc[i][1] += av * b1;
            }
        }
    } else {
        for (int64_t k = 0; k < kc; k++) {
            const float av = a[k * ak];
            acc[0][0] += av * v4_load(bp + k * GEMM_NR);
            acc[0][1] += av * v4_load(bp + k * GEMM_NR + 4);
        }
    }
    for (int64_t i = 0; i < mr; i++) {
        v4_store(t[i], acc[i][0]);
        v4_store(t[i] + 4, acc[i][1]);
        memcpy(c + i * ldc, t[i], sizeof(float) * (size_t)nr);
    }
}

void op_gemm_f32(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                 const float *B, int64_t ldb, float *C, int64_t ldc)
{
    op_gemm_f32_ep(0, 0, M, N, K, A, lda, B, ldb, C, ldc, NULL);
}

void op_gemm_f32_t(int32_t trans_a, int32_t trans_b, int64_t M, int64_t N, int64_t K,
                   const float *A, int64_t lda, const float *B, int64_t ldb, float *C,
                   int64_t ldc)
{
    op_gemm_f32_ep(trans_a, trans_b, M, N, K, A, lda, B, ldb, C, ldc, NULL);
}

/* Work of one block (multiply-adds): large enough that a call's fixed cost
 * does not show, small enough to spread over threads (BERT's 32 x 128 x
 * 128 projections make four) and to keep a block's output in cache for its
 * epilogue. A product OpenBLAS computes takes larger blocks, since each
 * call packs its panels again; a matrix times a vector smaller ones, since
 * it is bound by reading the matrix, which more threads do faster. */
#define GEMM_BLOCK_MACS (1 << 17)
#define GEMM_BLAS_BLOCK_MACS (1 << 19)
#define GEMM_VECTOR_BLOCK_MACS (1 << 15)

static void gemm_split_at(int64_t M, int64_t N, int64_t K, int64_t block, int64_t *mb,
                          int64_t *nb)
{
    const double work = (double)M * (double)N * (double)K;
    *mb = M;
    *nb = N;
    if (work <= 2.0 * (double)block)
        return;
    if (N >= M) {
        int64_t b = block / (M * K > 0 ? M * K : 1);
        b = (b < 64 ? 64 : b + 15) / 16 * 16;
        *nb = b < N ? b : N;
    } else {
        int64_t b = block / (N * K > 0 ? N * K : 1);
        b = (b < 24 ? 24 : b + 5) / 6 * 6;
        *mb = b < M ? b : M;
    }
}

void op_gemm_split(int64_t M, int64_t N, int64_t K, int64_t *mb, int64_t *nb)
{
    gemm_split_at(M, N, K, M == 1 || N == 1 ? GEMM_VECTOR_BLOCK_MACS : GEMM_BLOCK_MACS,
                  mb, nb);
}

/* Products up to this many multiply-adds without transposes take
 * op_gemm_nn even where OpenBLAS is loaded: below it, measured on the
 * shapes of MobileNet's and BERT's layers, the register tiles that read B
 * in place match or beat OpenBLAS, whose packing of A and B is then a large
 * share of the work (bench/RESULTS.md, "CPU kernels"). */
#define GEMM_NN_MAX_MACS (1 << 23)

int op_gemm_takes_nn(int64_t M, int64_t N, int64_t K, int64_t ldb)
{
    /* op_gemm_f32_ep's choice below, without transposes (op_gemv_f32 takes
     * M == 1 and a column of one element a row). */
    return M > 1 && N > 0 && K > 0 && !(N == 1 && ldb == 1) &&
           ((double)M * (double)N * (double)K <= GEMM_NN_MAX_MACS || !op_blas_in_use());
}

void op_gemm_f32_ep(int32_t trans_a, int32_t trans_b, int64_t M, int64_t N, int64_t K,
                    const float *A, int64_t lda, const float *B, int64_t ldb, float *C,
                    int64_t ldc, const op_epilogue *e)
{
    const double macs = (double)M * (double)N * (double)K;
    if (M <= 0 || N <= 0)
        return;
    if (K > 0 && op_gemv_f32(trans_a, trans_b, M, N, K, A, lda, B, ldb, C, ldc)) {
        /* a vector: done, but for the epilogue */
    } else if (K > 0 && !trans_a && !trans_b &&
               (macs <= GEMM_NN_MAX_MACS || !op_blas_in_use())) {
        op_gemm_nn(M, N, K, A, lda, B, ldb, C, ldc, e);
        return;
    } else if (K <= 0 ||
               !op_blas_sgemm(trans_a, trans_b, M, N, K, A, lda, B, ldb, C, ldc)) {
        op_gemm_f32_loops(trans_a, trans_b, M, N, K, A, lda, B, ldb, C, ldc);
    }
    if (e)
        op_epilogue_apply(e, M, N, C, ldc);
}

/* ---- a constant B packed once ---------------------------------------- */

prt_status op_pack_b(const op_object *o, const prt_tensor_desc *b, const void *data,
                     int64_t K, int64_t N, op_const **out)
{
    const int32_t dt = b->dtype;
    const int64_t p = op_gemm_panel_floats(K, N);
    float *tmp = NULL;
    op_packed_b *c;
    if (!data || (dt != PRT_FLOAT32 && dt != PRT_FLOAT16 && dt != PRT_BFLOAT16) ||
        N < OP_PACK_MIN_N || p <= 0 ||
        (uint64_t)p > (SIZE_MAX - sizeof *c - 64) / sizeof(float))
        return PRT_OK;
    c = (op_packed_b *)op_const_alloc(sizeof *c + 64 + (size_t)p * sizeof(float));
    if (c && dt != PRT_FLOAT32)
        tmp = base_malloc((size_t)(K * N) * sizeof(float));
    if (!c || (dt != PRT_FLOAT32 && !tmp)) {
        base_free(c);
        return op_fail(o, PRT_ERR_OUT_OF_MEMORY, "packing the constant B: out of memory");
    }
    c->b = data;
    c->dims = b->dims;
    c->dtype = dt;
    /* 64-byte aligned, as the workspace's panels are. */
    c->panels = (float *)(((uintptr_t)(c + 1) + 63) & ~(uintptr_t)63);
    if (tmp)
        op_to_f32(data, dt, K * N, tmp);
    op_gemm_pack_panels(K, N, tmp ? tmp : data, N, 0, (N + 15) / 16, c->panels);
    base_free(tmp);
    *out = &c->head;
    return PRT_OK;
}

const op_packed_b *op_packed_b_for(const op_object *o, const prt_tensor_desc *b,
                                   const void *x)
{
    const op_packed_b *c = (const op_packed_b *)o->cst;
    if (!c || c->b != x || c->dtype != b->dtype || c->dims.nb_dims != b->dims.nb_dims ||
        memcmp(c->dims.d, b->dims.d, sizeof(int64_t) * (size_t)b->dims.nb_dims) != 0)
        return NULL;
    return c;
}

/* One product spread over the context's threads: blocks of op_gemm_split,
 * row blocks outermost. */
typedef struct gemm_par {
    int32_t ta, tb;
    int64_t M, N, K, lda, ldb, ldc, mb, nb, nbn;
    const float *A, *B;
    const float *bp; /* B in panels (op_pack_b), or NULL */
    float *C;
    const op_epilogue *e;
} gemm_par;

static void gemm_par_range(void *arg, int64_t begin, int64_t end)
{
    const gemm_par *g = arg;
    for (int64_t it = begin; it < end; it++) {
        const int64_t i0 = it / g->nbn * g->mb, j0 = it % g->nbn * g->nb;
        const int64_t m = g->M - i0 < g->mb ? g->M - i0 : g->mb;
        const int64_t n = g->N - j0 < g->nb ? g->N - j0 : g->nb;
        op_epilogue e, *ep = NULL;
        if (g->e) {
            e = *g->e;
            e.row_bias = e.row_bias ? e.row_bias + i0 : NULL;
            e.col_bias = e.col_bias ? e.col_bias + j0 : NULL;
            ep = &e;
        }
        if (g->bp && op_gemm_takes_nn(m, n, g->K, g->ldb))
            op_gemm_nn_panels(m, n, g->K, g->A + i0 * g->lda, g->lda, g->bp + j0 * g->K,
                              g->C + i0 * g->ldc + j0, g->ldc, ep);
        else
            op_gemm_f32_ep(g->ta, g->tb, m, n, g->K, g->A + (g->ta ? i0 : i0 * g->lda),
                           g->lda, g->B + (g->tb ? j0 * g->ldb : j0), g->ldb,
                           g->C + i0 * g->ldc + j0, g->ldc, ep);
    }
}

void op_gemm_f32_par(int32_t trans_a, int32_t trans_b, int64_t M, int64_t N, int64_t K,
                     const float *A, int64_t lda, const float *B, int64_t ldb, float *C,
                     int64_t ldc, const op_epilogue *e)
{
    op_gemm_f32_par_panels(trans_a, trans_b, M, N, K, A, lda, B, ldb, NULL, C, ldc, e);
}

void op_gemm_f32_par_panels(int32_t trans_a, int32_t trans_b, int64_t M, int64_t N,
                            int64_t K, const float *A, int64_t lda, const float *B,
                            int64_t ldb, const float *bp, float *C, int64_t ldc,
                            const op_epilogue *e)
{
    gemm_par g = {trans_a, trans_b, M, N, K, lda, ldb, ldc, 0, 0, 0, A, B, NULL, C, e};
    if (M <= 0 || N <= 0)
        return;
    /* The panels hold B untransposed from column 0, and blocks' columns
     * start at multiples of 16 (op_gemm_split). */
    g.bp = !trans_a && !trans_b ? bp : NULL;
    /* Transposed products (but vectors and a few rows against a transposed
     * B, op_gemv_f32's) go to OpenBLAS where it is in use. */
    if ((trans_a || trans_b) && M > 1 && N > 1 && !OP_GEMV_ROWS(trans_a, trans_b, M) &&
        op_blas_in_use())
        gemm_split_at(M, N, K, GEMM_BLAS_BLOCK_MACS, &g.mb, &g.nb);
    else
        op_gemm_split(M, N, K, &g.mb, &g.nb);
    g.nbn = (N + g.nb - 1) / g.nb;
    base_parallel_for((M + g.mb - 1) / g.mb * g.nbn, 1, gemm_par_range, &g);
}

void op_gemm_f32_loops(int32_t trans_a, int32_t trans_b, int64_t M, int64_t N, int64_t K,
                       const float *A, int64_t lda, const float *B, int64_t ldb, float *C,
                       int64_t ldc)
{
    /* Element (i, k) of op(A) and the step between its consecutive k. */
    const int64_t ai = trans_a ? 1 : lda, ak = trans_a ? lda : 1;
    if (M <= 0 || N <= 0)
        return;
    if (K <= 0) {
        for (int64_t i = 0; i < M; i++)
            memset(C + i * ldc, 0, sizeof(float) * (size_t)N);
        return;
    }
    for (int64_t j0 = 0; j0 < N; j0 += GEMM_NR) {
        const int64_t nr = N - j0 < GEMM_NR ? N - j0 : GEMM_NR;
        for (int64_t k0 = 0; k0 < K; k0 += GEMM_KC) {
            const int64_t kc = K - k0 < GEMM_KC ? K - k0 : GEMM_KC;
            float bp[GEMM_KC * GEMM_NR];
            gemm_pack(trans_b, B, ldb, k0, kc, j0, nr, bp);
            for (int64_t i = 0; i < M;) {
                const int64_t mr = M - i >= GEMM_MR ? GEMM_MR : 1;
                gemm_tile(mr, nr, kc, A + i * ai + k0 * ak, ai, ak, bp, C + i * ldc + j0,
                          ldc, k0 == 0);
                i += mr;
            }
        }
    }
}
