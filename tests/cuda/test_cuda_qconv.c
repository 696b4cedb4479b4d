/*
 * ConvInteger and QLinearConv on CUDA's int8 tensor cores (ctest -L cuda;
 * skipped without a GPU; qgemm.cu's qconv_mma_kernel, issue 30).
 *
 * Each case is built for the CPU and for CUDA and the CUDA engine run
 * twice: as it chooses (the implicit-GEMM kernel where qconv_mma_takes
 * says: 1 or 2 spatial dims, at least 4 channels and 8 taps per group)
 * and with PRT_CUDA_QGEMM=kernel (the plain per-output kernel). Both must
 * give the CPU's bytes: the int32 sums are exact and the requantization is
 * the same code. The tensor-core kernel must have run exactly for the
 * shapes expected of it (opc_qconv_mma_runs), so that a case meant for it
 * cannot pass through the plain kernel unnoticed.
 *
 * The shapes cover what the kernel's indices must get right: channels and
 * taps that are not multiples of its 32-wide tiles (K tails, partial
 * column tiles), pixel counts across tile edges and images, groups,
 * strides, pads, dilations, 1 and 2 spatial dims, uint8 and int8 on each
 * side, zero points and scales per tensor or per channel, bias or none.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_testutil.h"
#include "ops/cuda/launch.h"
#include "ops/cuda/ops.h"

#define NAME "test_cuda_qconv"

static tu_rng rng;

/* One convolution's geometry: batch, channels in and out, groups, spatial
 * dims (ns 1: only h is used as the length), kernel, stride, pad (begin
 * and end the same), dilation; mma 1 when the tensor-core kernel must run
 * it (on a device that has it). */
typedef struct qc_shape {
    int64_t n, c, m, group, ns, h, w, kh, kw;
    int32_t s, p, d;
    int mma;
} qc_shape;

static void qconv_case(const qc_shape *sh, int qlinear)
{
    const int32_t tx = tu_rng_range(&rng, 0, 1) ? PRT_UINT8 : PRT_INT8;
    const int32_t tw = tu_rng_range(&rng, 0, 1) ? PRT_UINT8 : PRT_INT8;
    const int32_t ty = tu_rng_range(&rng, 0, 1) ? PRT_UINT8 : PRT_INT8;
    const int per_ch = tu_rng_range(&rng, 0, 1), bias = tu_rng_range(&rng, 0, 2) != 0;
    const int ns = (int)sh->ns;
    const int64_t cg = sh->c / sh->group, K = cg * sh->kh * (ns == 2 ? sh->kw : 1);
    int32_t s[2] = {sh->s, sh->s}, dl[2] = {sh->d, sh->d};
    int32_t pads[4] = {sh->p, sh->p, sh->p, sh->p}, group = (int32_t)sh->group;
    prt_field f[4];
    oc_case c;
    ot_tensor X, Wt;
    char what[256];
    memset(&c, 0, sizeof c);
    c.op = qlinear ? "QLinearConv" : "ConvInteger";
    c.exact = 1;
    c.f = f;
    c.nf = 4;
    f[0] = ot_fld_i32("strides", s, ns);
    f[1] = ot_fld_i32("dilations", dl, ns);
    f[2] = ot_fld_i32("pads", pads, 2 * ns);
    f[3] = ot_fld_i32("group", &group, 1);
    X = tcu_q_bytes(&rng, tx,
                    ns == 1 ? D3(sh->n, sh->c, sh->h) : D4(sh->n, sh->c, sh->h, sh->w));
    Wt = tcu_q_bytes(&rng, tw,
                     ns == 1 ? D3(sh->m, cg, sh->kh) : D4(sh->m, cg, sh->kh, sh->kw));
    if (qlinear) {
        /* y's scale so that y spreads over its range rather than clamps:
         * K products of two differences of about 74 each (uniform bytes
         * less a uniform zero point) sum to about 5500 sqrt(K), times x's
         * and w's scales (0.02, 0.0025) over ys about 50. */
        const float ys = 0.0055f * sqrtf((float)K);
        ot_tensor in[9] = {X,
                           tcu_q_scales(&rng, 0, 0.02f, 0.02f),
                           tcu_q_bytes(&rng, tx, D0()),
                           Wt,
                           tcu_q_scales(&rng, per_ch ? sh->m : 0, 0.001f, 0.004f),
                           tcu_q_bytes(&rng, tw, per_ch ? D1(sh->m) : D0()),
                           tcu_q_scales(&rng, 0, ys, ys),
                           tcu_q_bytes(&rng, ty, D0()),
                           ot_make(PRT_INT32, D1(sh->m))};
        for (int64_t m = 0; in[8].data && m < sh->m; m++)
            ((int32_t *)in[8].data)[m] = (int32_t)tu_rng_range(&rng, -20000, 20000);
        memcpy(c.in, in, sizeof in);
        c.nb = bias ? 9 : 8;
        if (!bias)
            ot_free(&c.in[8]);
        for (int k = 1; k < c.nb; k++)
            c.role[k] = OC_CONST;
    } else {
        ot_tensor in[4] = {X, Wt, tcu_q_bytes(&rng, tx, D0()),
                           tcu_q_bytes(&rng, tw, per_ch ? D1(sh->m) : D0())};
        memcpy(c.in, in, sizeof in);
        c.nb = 4;
        c.role[1] = c.role[2] = c.role[3] = OC_CONST;
    }
    for (int k = 0; k < c.nb; k++)
        if (!c.in[k].data)
            abort(); /* out of memory in the test itself */
    snprintf(what, sizeof what,
             "%s x %s w %s -> %s: N %lld C %lld M %lld group %lld, %s %lldx%lld kernel "
             "%lldx%lld stride %d pad %d dilation %d%s%s",
             c.op, prt_dtype_name(tx), prt_dtype_name(tw),
             qlinear ? prt_dtype_name(ty) : "int32", (long long)sh->n, (long long)sh->c,
             (long long)sh->m, (long long)sh->group, ns == 1 ? "1-D" : "2-D",
             (long long)sh->h, (long long)(ns == 2 ? sh->w : 1), (long long)sh->kh,
             (long long)(ns == 2 ? sh->kw : 1), sh->s, sh->p, sh->d,
             per_ch ? ", per channel" : "", qlinear && bias ? ", bias" : "");
    tcu_q_compare(&c, what, opc_qconv_mma_runs, sh->mma, "the tensor-core kernel");
    oc_free(&c);
}

int main(void)
{
    /* The tensor-core kernel is the default (qgemm_cuda.c,
     * qconv_mma_takes); a PRT_CUDA_QCONV_MMA=0 left in the caller's
     * environment is cleared, so the shapes that expect it get it. */
    unsetenv("PRT_CUDA_QCONV_MMA");
    /* {n, c, m, group, ns, h, w, kh, kw, stride, pad, dilation, mma} */
    static const qc_shape shapes[] = {
        /* 1x1, pixels and channels in whole tiles, then not */
        {1, 32, 32, 1, 2, 8, 8, 1, 1, 1, 0, 1, 1},
        {1, 16, 24, 1, 2, 7, 9, 1, 1, 1, 0, 1, 1},
        {3, 40, 72, 1, 2, 5, 13, 1, 1, 1, 0, 1, 1},
        /* 3x3 with padding: K 27 (the stem's 3 channels), 72, 144 */
        {1, 3, 16, 1, 2, 17, 15, 3, 3, 1, 1, 1, 1},
        {2, 8, 8, 1, 2, 12, 12, 3, 3, 1, 1, 1, 1},
        {1, 16, 64, 1, 2, 14, 14, 3, 3, 2, 1, 1, 1},
        {1, 24, 40, 1, 2, 9, 11, 3, 3, 1, 2, 2, 1},
        /* odd channels, 5x5 and 7x7, strides 2 and 3 */
        {2, 13, 19, 1, 2, 11, 10, 5, 5, 2, 2, 1, 1},
        {1, 5, 33, 1, 2, 23, 19, 7, 7, 3, 3, 1, 1},
        /* a rectangular kernel with no padding */
        {1, 12, 20, 1, 2, 10, 16, 1, 3, 1, 0, 1, 1},
        /* groups: 2 and 4 of 8-16 channels, and 3 groups of 5 */
        {1, 32, 32, 2, 2, 10, 10, 3, 3, 1, 1, 1, 1},
        {2, 32, 64, 4, 2, 9, 9, 3, 3, 2, 1, 1, 1},
        {1, 15, 15, 3, 2, 8, 8, 3, 3, 1, 1, 1, 1},
        /* 1-D */
        {2, 16, 24, 1, 1, 50, 1, 3, 1, 1, 1, 1, 1},
        {1, 9, 40, 1, 1, 77, 1, 5, 1, 2, 2, 2, 1},
        /* many pixels over several images, wide K (4 tiles plus a tail) */
        {4, 64, 48, 1, 2, 28, 28, 3, 3, 1, 1, 1, 1},
        {1, 160, 96, 1, 2, 7, 7, 1, 1, 1, 0, 1, 1},
        /* the plain kernel's: depthwise, 2 channels per group, K < 8 */
        {1, 16, 16, 16, 2, 12, 12, 3, 3, 1, 1, 1, 0},
        {1, 8, 16, 8, 2, 9, 9, 3, 3, 2, 1, 1, 0},
        {1, 4, 8, 1, 2, 6, 6, 1, 1, 1, 0, 1, 0},
        /* padding larger than some outputs' reach: whole taps in it */
        {1, 8, 8, 1, 2, 3, 3, 3, 3, 1, 2, 1, 1},
    };
    tu_require_cuda(NAME);
    tu_rng_seed(&rng, 30);
    if (!opk_qconv_mma_ok())
        printf("%s: this device has no int8 mma (below sm_80): the plain kernel only\n",
               NAME);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        qc_shape sh = shapes[i];
        sh.mma = sh.mma && opk_qconv_mma_ok();
        for (int qlinear = 0; qlinear < 2; qlinear++)
            for (int rep = 0; rep < 2; rep++) /* other dtypes, zero points, bias */
                qconv_case(&sh, qlinear);
    }
    return tu_finish(NAME);
}
