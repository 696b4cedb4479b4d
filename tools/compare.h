/*
 * Output comparison the way Polygraphy does it: element-wise,
 *   |got - ref| <= atol + rtol * |ref|
 * with NaN equal only to NaN and an infinity only to the same infinity.
 * Values of any dtype are compared as doubles, so an int32 output may be
 * checked against an int64 reference (a dtype difference is noted, not
 * failed).
 */
#ifndef PLUGRT_TOOLS_COMPARE_H
#define PLUGRT_TOOLS_COMPARE_H

#include <stdint.h>

#include "plugrt/plugrt.h"

typedef struct cli_compare_result {
    int shape_mismatch; /* 1: shapes differ; nothing else is filled */
    int64_t count;      /* elements compared */
    int64_t mismatches; /* elements outside the tolerance */
    double max_abs, max_rel;
    /* The worst element: the one furthest outside the tolerance, or, when
     * all pass, the one with the largest absolute error. -1 if none. */
    int64_t worst;
    double worst_got, worst_ref, worst_abs, worst_rel;
} cli_compare_result;

void cli_compare(int32_t got_dtype, const prt_dims *got_dims, const void *got,
                 int32_t ref_dtype, const prt_dims *ref_dims, const void *ref,
                 double atol, double rtol, cli_compare_result *out);

/* The default tolerances of an engine built with the precision flags
 * `flags` (PRT_PRECISION_*) for `device`: float32 1e-5 (atol and rtol),
 * TF32 on CUDA 1e-3 (10-bit mantissas in, float32 sums), float16 1e-2
 * (11-bit mantissas, rounded at every layer boundary), bfloat16 5e-2 (8
 * bits). *what names the case ("float32", "tf32", "fp16", "bf16"). */
void cli_precision_tolerance(uint32_t flags, int32_t device, double *atol, double *rtol,
                             const char **what);

/* "[2, 5]": the multi-index of flat element i in dims. */
char *cli_index_str(const prt_dims *dims, int64_t i, char *buf, size_t cap);

#endif /* PLUGRT_TOOLS_COMPARE_H */
