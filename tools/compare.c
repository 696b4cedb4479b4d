/* Element-wise comparison with absolute and relative tolerance. */
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "numeric.h"

char *cli_index_str(const prt_dims *dims, int64_t i, char *buf, size_t cap)
{
    int64_t idx[PRT_MAX_DIMS];
    size_t n = 0;
    for (int32_t d = dims->nb_dims - 1; d >= 0; d--) {
        int64_t extent = dims->d[d] > 0 ? dims->d[d] : 1;
        idx[d] = i % extent;
        i /= extent;
    }
    n += (size_t)snprintf(buf, cap, "[");
    for (int32_t d = 0; d < dims->nb_dims && n < cap; d++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? ", " : "",
                              (long long)idx[d]);
    if (n < cap)
        snprintf(buf + n, cap - n, "]");
    return buf;
}

static int same_dims(const prt_dims *a, const prt_dims *b)
{
    if (a->nb_dims != b->nb_dims)
        return 0;
    for (int32_t i = 0; i < a->nb_dims; i++)
        if (a->d[i] != b->d[i])
            return 0;
    return 1;
}

void cli_compare(int32_t got_dtype, const prt_dims *got_dims, const void *got,
                 int32_t ref_dtype, const prt_dims *ref_dims, const void *ref,
                 double atol, double rtol, cli_compare_result *out)
{
    double worst_excess = 0.0;
    int worst_fails = 0, exact;
    int64_t n;
    memset(out, 0, sizeof *out);
    out->worst = -1;
    if (!same_dims(got_dims, ref_dims)) {
        out->shape_mismatch = 1;
        return;
    }
    n = cli_volume(got_dims);
    out->count = n;
    if (got_dtype == PRT_BFLOAT16 && ref_dtype == PRT_UINT16)
        ref_dtype =
            PRT_BFLOAT16; /* bfloat16's bits, as numpy and ONNX's test data hold them */
    exact = cli_dtype_is_integer(got_dtype) && cli_dtype_is_integer(ref_dtype);
    for (int64_t i = 0; i < n; i++) {
        double a = cli_element(got_dtype, got, i);
        double b = cli_element(ref_dtype, ref, i);
        double abs_err, rel_err;
        int ok, better;
        if (exact) {
            /* Integers (indices, counts, masks) must match exactly, even
             * past 2^53 where doubles would round them together. */
            int64_t ia = cli_element_i64(got_dtype, got, i);
            int64_t ib = cli_element_i64(ref_dtype, ref, i);
            ok = ia == ib;
            abs_err = ok ? 0.0 : fabs((double)ia - (double)ib);
            if (!ok && abs_err == 0.0)
                abs_err = 1.0; /* distinct values that round to one double */
            rel_err = ok ? 0.0 : ib != 0 ? abs_err / fabs((double)ib) : INFINITY;
        } else if (isnan(a) || isnan(b)) {
            ok = isnan(a) && isnan(b);
            abs_err = rel_err = ok ? 0.0 : INFINITY;
        } else if (a == b) {
            /* Also covers equal infinities, whose difference is NaN. */
            ok = 1;
            abs_err = rel_err = 0.0;
        } else {
            abs_err = fabs(a - b);
            rel_err = b != 0.0 ? abs_err / fabs(b) : INFINITY;
            ok = abs_err <= atol + rtol * fabs(b);
        }
        if (!ok)
            out->mismatches++;
        if (abs_err > out->max_abs)
            out->max_abs = abs_err;
        if (rel_err > out->max_rel)
            out->max_rel = rel_err;
        /* Failing elements rank by how far past the tolerance they are;
         * passing ones (only while nothing fails) by absolute error. */
        if (!ok) {
            double excess = exact            ? abs_err
                            : isinf(abs_err) ? INFINITY
                                             : abs_err - (atol + rtol * fabs(b));
            better = !worst_fails || excess > worst_excess;
            if (better) {
                worst_fails = 1;
                worst_excess = excess;
            }
        } else {
            better = !worst_fails && (out->worst < 0 || abs_err > out->worst_abs);
        }
        if (better) {
            out->worst = i;
            out->worst_got = a;
            out->worst_ref = b;
            out->worst_abs = abs_err;
            out->worst_rel = rel_err;
        }
    }
}

void cli_precision_tolerance(uint32_t flags, int32_t device, double *atol, double *rtol,
                             const char **what)
{
    double tol = 1e-5;
    *what = "float32";
    if (flags & PRT_PRECISION_FP16) {
        tol = 1e-2;
        *what = "fp16";
    } else if (flags & PRT_PRECISION_BF16) {
        tol = 5e-2;
        *what = "bf16";
    } else if ((flags & PRT_PRECISION_TF32) && device == PRT_DEVICE_CUDA) {
        tol = 1e-3;
        *what = "tf32";
    }
    *atol = tol;
    *rtol = tol;
}
