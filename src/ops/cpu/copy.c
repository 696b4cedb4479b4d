/*
 * Strided copies for the data-movement ops (cpu_kernels.h): a dense y from
 * x read with any element strides. The dims are made canonical first
 * (size-1 dims dropped, neighbours that are contiguous in x merged), so a
 * Slice along channels or a channel shuffle's Transpose becomes a few long
 * runs, each one memcpy; a run with a stride other than 1 is a typed loop.
 * Rows go to threads, each finding its own start from its index, so any
 * split writes the same bytes.
 */
#include <string.h>

#include "base/parallel.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/op_common.h"

typedef struct copy_job {
    uint8_t *y;
    const uint8_t *x;
    size_t es;
    int32_t r;
    int64_t d[PRT_MAX_DIMS], s[PRT_MAX_DIMS];
} copy_job;

#define COPY_RUN(T)                                                                      \
    do {                                                                                 \
        const T *xt = (const T *)xr;                                                     \
        T *yt = (T *)yr;                                                                 \
        for (int64_t q_ = 0; q_ < n; q_++)                                               \
            yt[q_] = xt[q_ * s1];                                                        \
    } while (0)

/* Rows [b, e): row i is y's i-th run of d[r - 1] elements. */
static void copy_rows(void *arg, int64_t b, int64_t e)
{
    const copy_job *j = arg;
    const int32_t r = j->r;
    const int64_t n = j->d[r - 1], s1 = j->s[r - 1];
    const size_t es = j->es;
    int64_t idx[PRT_MAX_DIMS], off = 0, t = b;
    for (int32_t k = r - 2; k >= 0; k--) {
        idx[k] = t % j->d[k];
        t /= j->d[k];
        off += idx[k] * j->s[k];
    }
    for (int64_t i = b; i < e; i++) {
        const uint8_t *xr = j->x + off * (int64_t)es;
        uint8_t *yr = j->y + i * n * (int64_t)es;
        if (s1 == 1)
            memcpy(yr, xr, (size_t)n * es);
        else if (es == 4)
            COPY_RUN(uint32_t);
        else if (es == 2)
            COPY_RUN(uint16_t);
        else if (es == 8)
            COPY_RUN(uint64_t);
        else if (es == 1)
            COPY_RUN(uint8_t);
        else
            for (int64_t q = 0; q < n; q++)
                memcpy(yr + q * (int64_t)es, xr + q * s1 * (int64_t)es, es);
        for (int32_t k = r - 2; k >= 0; k--) {
            off += j->s[k];
            if (++idx[k] < j->d[k])
                break;
            off -= j->s[k] * j->d[k];
            idx[k] = 0;
        }
    }
}

void op_copy_strided(void *y, const void *x, size_t es, int32_t nb_dims, const int64_t *d,
                     const int64_t *s)
{
    copy_job j;
    int64_t rows = 1, n = 1;
    j.y = y;
    j.x = x;
    j.es = es;
    j.r = 0;
    for (int32_t i = 0; i < nb_dims; i++) {
        if (d[i] == 0)
            return;
        if (d[i] == 1)
            continue;
        if (j.r > 0 && j.s[j.r - 1] == s[i] * d[i]) {
            j.d[j.r - 1] *= d[i];
            j.s[j.r - 1] = s[i];
            continue;
        }
        j.d[j.r] = d[i];
        j.s[j.r] = s[i];
        j.r++;
    }
    if (j.r == 0) {
        memcpy(y, x, es);
        return;
    }
    for (int32_t k = 0; k < j.r - 1; k++)
        rows *= j.d[k];
    n = j.d[j.r - 1];
    /* A row costs about its bytes. */
    base_parallel_for(rows, (int64_t)(OP_GRAIN_SIMPLE * 4) / (n * (int64_t)es) + 1,
                      copy_rows, &j);
}
