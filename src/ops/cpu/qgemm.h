/*
 * The CPU's 8-bit integer matrix product (internal to libplugrt), the core
 * of MatMulInteger, QLinearMatMul, ConvInteger and QLinearConv (qmatmul.c,
 * qconv.c): C = epilogue(A' B') with int32 sums, A' of M x K and B' of
 * K x N bytes, one side unsigned and the other signed, as AVX-512 VNNI's
 * vpdpbusd multiplies them (u8 x s8, four products summed into an int32
 * lane, nothing saturating).
 *
 * Operands are stored shifted. A tensor of the other signedness than its
 * side wants is stored with its top bit flipped (byte ^ 0x80): an int8
 * value v becomes the uint8 v + 128, a uint8 v the int8 v - 128. So with
 * stored = original + d (d 0, +128 or -128) and the ONNX zero point z,
 * original - z = stored - (z + d): the shifted zero points alpha (per row
 * of A) and beta (per column of B) absorb the flip, and
 *
 *   sum_k (A'_ik - alpha_i)(B'_kj - beta_j)
 *     = P_ij - beta_j RA_i - alpha_i (CB_j - K beta_j)
 *
 * with P = A' B' the kernel's raw sums and RA, CB the row sums of A' and
 * column sums of B' taken when they are packed: the zero points cost a few
 * operations per output, nothing in the inner loop. Everything wraps modulo
 * 2^32, so the result is exact wherever the true sum fits int32 (ONNX's
 * int32 output), whatever the intermediate terms.
 *
 * Layouts. A' rows of K4 = K rounded up to 4 bytes (zero padded); B' in
 * panels of 16 columns, panel s at bp + s 16 K4, its bytes (k4, j, t) at
 * (k4 16 + j) 4 + t for k = 4 k4 + t: one 64-byte vector per four k, the
 * four bytes of column j together (vpdpbusd's int32 lane), zero past K and
 * past N. Padding adds 0 to every sum.
 *
 * Builds: AVX-512 VNNI (tiles of 8 rows by 32 columns in 16 registers),
 * AVX2 (vpmaddwd on both sides widened to int16, exact: a block's rows
 * and a strip's two panels widened once, then two rows by one panel in
 * eight registers; the portable code's auto-vectorized tile gathered B's
 * strided bytes at every row and ran gpt2's 256 x 64 x 512 lm_head in
 * 15 ms, this one in 0.19 ms: bench/RESULTS.md, session 38),
 * and a portable one compiled plain and for AVX2 (CPU_BUILDS); op_qg_force
 * picks one for tests. Integer sums are exact, so every build and every
 * split over threads gives the same bits; the requantization is the same
 * float operations in each.
 */
#ifndef PLUGRT_OPS_CPU_QGEMM_H
#define PLUGRT_OPS_CPU_QGEMM_H

#include <stdint.h>

#define OP_QG_PANEL 16 /* columns of a panel of B' */
#define OP_QG_MR 8     /* rows of a register tile */
#define OP_QG_NR 32    /* columns of a register tile (two panels) */

/* K rounded up to a multiple of 4 (-1 on overflow). */
int64_t op_qg_k4(int64_t K);
/* Bytes of B' of K x N in panels (-1 on overflow). */
int64_t op_qg_panel_bytes(int64_t K, int64_t N);

/* Panels [s0, s1) of B (K x N bytes, rows ldb apart) into bp (the whole
 * panel array), each byte ^ flip; colsum[j] for those panels' columns
 * (j < N) = the sum over k of the stored bytes read as int8 when
 * `as_signed`, else as uint8. */
void op_qg_pack_b(int64_t K, int64_t N, const uint8_t *B, int64_t ldb, uint8_t flip,
                  int as_signed, int64_t s0, int64_t s1, uint8_t *bp, int32_t *colsum);
/* Rows [r0, r1) of A (M x K bytes, rows lda apart) into ap (rows of K4
 * bytes), each byte ^ flip, rowsum[i] as colsum's. */
void op_qg_pack_a(int64_t K, const uint8_t *A, int64_t lda, uint8_t flip, int as_signed,
                  int64_t r0, int64_t r1, uint8_t *ap, int32_t *rowsum);

typedef uint8_t op_qg_u8x16 __attribute__((vector_size(16)));

/* Four rows of 16 bytes interleaved into 64 (u[0..3]): byte (j, t) = 4 j +
 * t of the result is row t's byte j, so each of 16 columns (pixels) gets
 * its four rows' bytes together (one vpdpbusd lane). Two rounds of
 * interleaves, bytes then 16-bit pairs (SSE2's punpck shapes, so the
 * plain build needs no byte shuffle). */
static inline __attribute__((always_inline)) void op_qg_zip4(const op_qg_u8x16 r[4],
                                                             op_qg_u8x16 u[4])
{
    op_qg_u8x16 t[4];
    t[0] = __builtin_shufflevector(r[0], r[1], 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21,
                                   6, 22, 7, 23);
    t[1] = __builtin_shufflevector(r[0], r[1], 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13,
                                   29, 14, 30, 15, 31);
    t[2] = __builtin_shufflevector(r[2], r[3], 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21,
                                   6, 22, 7, 23);
    t[3] = __builtin_shufflevector(r[2], r[3], 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13,
                                   29, 14, 30, 15, 31);
    for (int q = 0; q < 2; q++) {
        u[2 * q] = __builtin_shufflevector(t[q], t[q + 2], 0, 1, 16, 17, 2, 3, 18, 19, 4,
                                           5, 20, 21, 6, 7, 22, 23);
        u[2 * q + 1] = __builtin_shufflevector(t[q], t[q + 2], 8, 9, 24, 25, 10, 11, 26,
                                               27, 12, 13, 28, 29, 14, 15, 30, 31);
    }
}

enum { OP_QG_OUT_I32, OP_QG_OUT_U8, OP_QG_OUT_I8, OP_QG_OUT_F32 };

/* One product and what is done to each sum as it is stored. Per-row
 * arrays are indexed by the product's row i (times a *_step, 0 to read
 * element 0 for every row), per-column ones by its column j and hold N
 * values, so that the store loop runs over columns in vectors. */
typedef struct op_qg_args {
    int64_t M, N, K;
    const uint8_t *ap; /* A' rows (op_qg_pack_a) */
    const uint8_t *bp; /* B' panels (op_qg_pack_b) */
    /* NULL, or bp widened to int16 (op_qg_widen_b; B' signed: a_u8 1),
     * which the AVX2 tile then reads instead of widening each strip */
    const int16_t *bp16;
    int a_u8; /* 1: A' unsigned, B' signed; 0: A' signed, B' unsigned */
    const int32_t *rowsum, *colsum;
    const int32_t *alpha; /* shifted zero point of A' per row */
    int32_t alpha_step;
    const int32_t *beta; /* shifted zero point of B' per column (N values) */
    /* colsum_j - K beta_j (op_qg_colterm fills it), per column */
    const int32_t *colterm;
    /* NULL, or an int32 added per row (bias_rows) or per column */
    const int32_t *bias;
    int32_t bias_rows;
    /* The output: OP_QG_OUT_I32 stores the sum; U8 and I8 requantize it:
     * y = clamp(rint(float(sum) * scale) + zp) with scale per row
     * (scale_rows; scale_step 0 for one value) or per column (N values),
     * rint half to
     * even, clamped to the type's range (ONNX Runtime's order: the float
     * is clamped to [lo - zp, hi - zp] first, then rounded). F32 stores
     * float(sum) * scale (+ fbias[j]) as float: ORT's MatMulIntegerToFloat
     * (qmatmul_float.c), a multiply-add where the build contracts it. */
    int32_t out;
    const float *scale;
    const float *fbias; /* F32: NULL or one float per column (N values) */
    int32_t scale_rows, scale_step;
    int32_t zp;
    void *C; /* row i at C + i ldc elements */
    int64_t ldc;
} op_qg_args;

/* colterm[j] = colsum[j] - K beta[j] for j < N (wrapping). */
void op_qg_colterm(const int32_t *colsum, const int32_t *beta, int64_t K, int64_t N,
                   int32_t *colterm);

/* Rows [i0, i1) and columns [j0, j1) of the product (j0 a multiple of
 * OP_QG_PANEL). Blocks may run concurrently. */
void op_qg_gemm(const op_qg_args *a, int64_t i0, int64_t i1, int64_t j0, int64_t j1);

/* Bytes src[0..n) as int16 into dst, sign-extended when as_signed: B'
 * panels as the AVX2 tile reads them (op_qg_args.bp16). */
void op_qg_widen_b(const uint8_t *src, int64_t n, int as_signed, int16_t *dst);

/* Which build runs: OP_QG_AUTO (the best this CPU has: VNNI, else the
 * AVX2 int16 tiles, else the portable code), OP_QG_PORTABLE (the portable
 * code's baseline or AVX2 build, as cpu_avx2() says), OP_QG_VNNI (only
 * where the CPU has it; else as AUTO) or OP_QG_AVX2 (no VNNI: the
 * products' AVX2 tile, vpmaddwd on int16, and the convolutions' int16 AVX2
 * tiles, qconv_kernel.h, even on a VNNI CPU). Test hook. */
enum { OP_QG_AUTO, OP_QG_PORTABLE, OP_QG_VNNI, OP_QG_AVX2 };
void op_qg_force(int which);
/* 1 when the VNNI build runs now. */
int op_qg_vnni(void);
/* 1 when the AVX2 int16 tiles run now (the products' qg_gemm_avx2 and
 * qconv_kernel.h's `wide`): AVX2 without VNNI, unless forced otherwise. */
int op_qg_wide(void);

#endif /* PLUGRT_OPS_CPU_QGEMM_H */
