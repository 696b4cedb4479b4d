/*
 * The CUDA side of check::Positives (positives.c built with
 * POSITIVES_CUDA): one kernel, compiled once (positives_cuda.cu), that each
 * library built from positives.c launches with the defect it is to have,
 * so the CUDA defects need no kernel of their own. Plain C types only:
 * positives.c includes no CUDA header.
 */
#ifndef PLUGRT_TESTS_CHECK_POSITIVES_CUDA_H
#define PLUGRT_TESTS_CHECK_POSITIVES_CUDA_H

#include <stdint.h>

#include "plugrt/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    POS_CUDA_NONE = 0,
    POS_CUDA_SIZE_BOUND, /* writes n elements and one more, and K = n + 1 */
    POS_CUDA_UNWRITTEN,  /* leaves out0's last element unwritten */
    POS_CUDA_DISAGREE,   /* keeps x * 1.001 rather than x */
    POS_CUDA_STREAM      /* launched on the default stream */
};

typedef struct pos_launch {
    const float *x; /* device memory, n elements */
    int64_t n;
    float threshold;
    float *y;          /* out0: room for n elements */
    int64_t *k;        /* out1: the size tensor */
    int64_t *dims_out; /* out2: rank values */
    int32_t rank;
    int64_t dims[PRT_MAX_DIMS]; /* x's dims, written to out2 */
    int32_t defect;
} pos_launch;

/* Queues the work on `stream` (a cudaStream_t); a cudaError_t as int. */
int pos_cuda(const pos_launch *a, void *stream);
/* "cudaErrorX: description" for a pos_cuda result. */
const char *pos_cuda_error(int err);

#ifdef __cplusplus
}
#endif

#endif /* PLUGRT_TESTS_CHECK_POSITIVES_CUDA_H */
