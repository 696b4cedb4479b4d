/* The float32 arithmetic of binary.c (Add, Sub, Mul, Div) over vectors
 * (cpu_kernels.h), in a baseline and an AVX2 build: rows of the broadcast
 * walk (LINEAR) and pixels of a CHW8 block. Each element is one IEEE
 * operation, as binary.c's scalar loop computes it, so the results are that
 * loop's bits (NaN payloads aside); GCC at -O2 left that loop scalar, since
 * y may alias a or b. The squeeze-and-excitation scale, X [N, C, H, W] times
 * S [N, C, 1, 1], is a row of a plane times one value (LINEAR) or a block
 * times one vector (CHW8). */
#include "ops/cpu/cpu_kernels.h"
#include "ops/ew_kinds.h"

/* LOOP(OP) with the operator of rk (Div for any other). */
#define BK_BY_OP(rk, LOOP)                                                               \
    switch (rk) {                                                                        \
    case BIN_R_ADD:                                                                      \
        LOOP(+);                                                                         \
        break;                                                                           \
    case BIN_R_SUB:                                                                      \
        LOOP(-);                                                                         \
        break;                                                                           \
    case BIN_R_MUL:                                                                      \
        LOOP(*);                                                                         \
        break;                                                                           \
    default:                                                                             \
        LOOP(/);                                                                         \
        break;                                                                           \
    }

/* y[j] = a[j sa] OP b[j sb] for j < n, sa and sb 0 or 1: vectors of eight,
 * a side of stride 0 splatted once, then the last n % 8 one by one. */
#define BK_ROW(OP)                                                                       \
    do {                                                                                 \
        const cpu_v8 as = CPU_SPLAT(a[0]), bs = CPU_SPLAT(b[0]);                         \
        int64_t j = 0;                                                                   \
        for (; j + 8 <= n; j += 8) {                                                     \
            cpu_v8 va = as, vb = bs;                                                     \
            if (sa)                                                                      \
                CPU_LOAD(va, a + j);                                                     \
            if (sb)                                                                      \
                CPU_LOAD(vb, b + j);                                                     \
            va = va OP vb;                                                               \
            CPU_STORE(y + j, va);                                                        \
        }                                                                                \
        for (; j < n; j++)                                                               \
            y[j] = a[j * sa] OP b[j * sb];                                               \
    } while (0)

/* The row for one pattern of strides (constants after inlining, so each
 * loop has no test in it). */
static inline CPU_INLINE void bk_row(int32_t rk, const float *a, int64_t sa,
                                     const float *b, int64_t sb, float *y, int64_t n)
{
    BK_BY_OP(rk, BK_ROW);
}

static inline CPU_INLINE void bk_rows_body(int32_t rk, const float *a, int64_t sa,
                                           const float *b, int64_t sb, float *y,
                                           int64_t n)
{
    if (n <= 0)
        return;
    if (sa && sb)
        bk_row(rk, a, 1, b, 1, y, n);
    else if (sa)
        bk_row(rk, a, 1, b, 0, y, n);
    else if (sb)
        bk_row(rk, a, 0, b, 1, y, n);
    else
        bk_row(rk, a, 0, b, 0, y, n);
}

CPU_BUILDS(bk_rows, bk_rows_body,
           (int32_t rk, const float *a, int64_t sa, const float *b, int64_t sb, float *y,
            int64_t n),
           (rk, a, sa, b, sb, y, n))

void op_bin_rows_f32(int32_t rk, const float *a, int64_t sa, const float *b, int64_t sb,
                     float *y, int64_t n)
{
    CPU_PICK(bk_rows)(rk, a, sa, b, sb, y, n);
}

/* R pixels: y = a OP b, a vector a pixel, a side of step 0 loaded once;
 * lanes from live on cleared. */
#define BK_C8(OP)                                                                        \
    do {                                                                                 \
        cpu_v8 va, vb;                                                                   \
        CPU_LOAD(va, a);                                                                 \
        CPU_LOAD(vb, b);                                                                 \
        for (int64_t r = 0; r < R; r++) {                                                \
            cpu_v8 v;                                                                    \
            if (da)                                                                      \
                CPU_LOAD(va, a + 8 * r);                                                 \
            if (db)                                                                      \
                CPU_LOAD(vb, b + 8 * r);                                                 \
            v = va OP vb;                                                                \
            cpu_zero_lanes_from(live, &v);                                               \
            CPU_STORE(y + 8 * r, v);                                                     \
        }                                                                                \
    } while (0)

static inline CPU_INLINE void bk_c8(int32_t rk, const float *a, int da, const float *b,
                                    int db, float *y, int64_t R, int64_t live)
{
    BK_BY_OP(rk, BK_C8);
}

static inline CPU_INLINE void bk_c8_body(int32_t rk, const float *a, int64_t da,
                                         const float *b, int64_t db, float *y, int64_t R,
                                         int64_t live)
{
    if (R <= 0)
        return;
    if (da && db)
        bk_c8(rk, a, 1, b, 1, y, R, live);
    else if (da)
        bk_c8(rk, a, 1, b, 0, y, R, live);
    else if (db)
        bk_c8(rk, a, 0, b, 1, y, R, live);
    else
        bk_c8(rk, a, 0, b, 0, y, R, live);
}

CPU_BUILDS(bk_c8, bk_c8_body,
           (int32_t rk, const float *a, int64_t da, const float *b, int64_t db, float *y,
            int64_t R, int64_t live),
           (rk, a, da, b, db, y, R, live))

void op_bin_c8_f32(int32_t rk, const float *a, int64_t da, const float *b, int64_t db,
                   float *y, int64_t R, int64_t live)
{
    CPU_PICK(bk_c8)(rk, a, da, b, db, y, R, live);
}

/* Four floats and four doubles: GCC at -O2 leaves the scalar cube's
 * conversions scalar. */
typedef float bk_f4 __attribute__((vector_size(16)));
typedef double bk_d4 __attribute__((vector_size(32)));

static inline CPU_INLINE void bk_cube_body(const float *x, float *y, int64_t n)
{
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) {
        bk_f4 f;
        bk_d4 d;
        memcpy(&f, x + j, sizeof f);
        d = __builtin_convertvector(f, bk_d4);
        f = __builtin_convertvector(d * d * d, bk_f4);
        memcpy(y + j, &f, sizeof f);
    }
    for (; j < n; j++) {
        const double v = x[j];
        y[j] = (float)(v * v * v);
    }
}

CPU_BUILDS(bk_cube, bk_cube_body, (const float *x, float *y, int64_t n), (x, y, n))

void op_cube_f32(const float *x, float *y, int64_t n)
{
    CPU_PICK(bk_cube)(x, y, n);
}
