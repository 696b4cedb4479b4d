/*
 * The outputs of `plugrt run` after its runs (run_outputs.h): listed,
 * written, checked across contexts and against reference files.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "compare.h"
#include "run_outputs.h"
#include "tensor_file.h"
#include "text.h"

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* `name` is escaped already. */
static void print_compare(const char *name, const cli_compare_result *r,
                          const prt_dims *dims, int pass)
{
    char idx[160];
    printf("  %-16s %s  ", name, pass ? "PASS" : "FAIL");
    if (r->mismatches)
        printf("%lld of %lld elements differ", (long long)r->mismatches,
               (long long)r->count);
    else
        printf("%lld elements", (long long)r->count);
    printf("; max abs err %.6g, max rel err %.6g", r->max_abs, r->max_rel);
    if (r->worst >= 0 && (r->mismatches || r->max_abs > 0))
        printf("; %s at %s: got %.9g, ref %.9g, abs err %.6g, rel err %.6g",
               r->mismatches ? "worst" : "largest error",
               cli_index_str(dims, r->worst, idx, sizeof idx), r->worst_got, r->worst_ref,
               r->worst_abs, r->worst_rel);
    putchar('\n');
}

/* Compares output `tensor` (the engine's `index`-th output) with
 * DIR/output_<name>.npy, or an output_K.pb of ONNX's test data that names
 * it. 1 pass (or skipped), 0 mismatch, -1 error. */
static int compare_output(const run_output_opts *o, const char *tensor, int index,
                          int32_t dtype, const prt_dims *dims, const void *data,
                          int *skipped)
{
    char safe[512], path[4096], err[1024], d1[128], d2[128], en[CLI_ESC_CAP];
    const char *name = cli_escape(tensor, en, sizeof en);
    npy_array ref;
    cli_compare_result r;
    cli_safe_name(tensor, safe, sizeof safe);
    snprintf(path, sizeof path, "%s/output_%s.npy", o->compare_dir, safe);
    if (file_exists(path)) {
        if (npy_read(path, &ref, err, sizeof err) != 0) {
            cli_error("reference for output %s: %s", name, err);
            return -1;
        }
    } else {
        char pb[4096];
        int found = cli_find_pb_output(o->compare_dir, tensor, index, &ref, pb, sizeof pb,
                                       err, sizeof err);
        if (found < 0) {
            cli_error("reference for output %s: %s", name, err);
            return -1;
        }
        if (!found) {
            printf("  %-16s SKIP  no reference %s\n", name, path);
            cli_note("no reference for output %s (%s); skipped", name, path);
            *skipped = 1;
            return 1;
        }
    }
    if (ref.dtype != dtype && !(dtype == PRT_BFLOAT16 && ref.dtype == PRT_UINT16))
        cli_note("output %s is %s, its reference %s; comparing values", name,
                 prt_dtype_name(dtype), prt_dtype_name(ref.dtype));
    cli_compare(dtype, dims, data, ref.dtype, &ref.dims, ref.data, o->atol, o->rtol, &r);
    if (r.shape_mismatch)
        printf("  %-16s FAIL  shape %s, the reference's %s\n", name,
               cli_format_dims(dims, d1, sizeof d1),
               cli_format_dims(&ref.dims, d2, sizeof d2));
    npy_array_free(&ref);
    if (r.shape_mismatch)
        return 0;
    print_compare(name, &r, dims, r.mismatches == 0);
    return r.mismatches == 0;
}

/* Output i of contexts 1.. against context 0's (`dims`, `data`, `bytes`):
 * the same dims and bytes, or a plugin shares state between contexts. 1 the
 * same, 0 one differs (printed), -1 one cannot be read. */
static int same_in_every_context(const run_ctx *ctxs, int nb_ctx, int i, const char *name,
                                 const prt_dims *dims, const void *data, size_t bytes)
{
    for (int t = 1; t < nb_ctx; t++) {
        prt_dims dt;
        const void *dat;
        int same;
        if (run_ctx_output(&ctxs[t], i, &dt, &dat) != CLI_OK)
            return -1;
        same = dt.nb_dims == dims->nb_dims &&
               memcmp(dt.d, dims->d, sizeof dims->d[0] * (size_t)dims->nb_dims) == 0 &&
               (bytes == 0 || memcmp(dat, data, bytes) == 0);
        if (!same) {
            cli_error("output %s of thread %d differs from thread 0's (a plugin that "
                      "shares state between contexts?)",
                      name, t);
            return 0;
        }
    }
    return 1;
}

/* "outputs:": a line per output of context 0, written to --output-dir, and
 * checked against the other contexts (*differ set when one is not the
 * same). CLI_FAIL (printed) when an output cannot be read or written. */
static int list_outputs(const run_output_opts *o, const run_ctx *ctxs, int nb_ctx,
                        int *differ)
{
    if (o->output_dir && cli_make_dirs(o->output_dir) != CLI_OK)
        return CLI_FAIL;
    printf("outputs:\n");
    for (int i = 0; i < ctxs[0].nb_slots; i++) {
        const run_slot *s = &ctxs[0].slots[i];
        prt_dims dims;
        const void *data;
        char d[128], safe[512], path[4096], err[1024], en[CLI_ESC_CAP];
        const char *name = cli_escape(s->name, en, sizeof en);
        size_t bytes;
        int same;
        if (run_ctx_output(&ctxs[0], i, &dims, &data) != CLI_OK)
            return CLI_FAIL;
        bytes = (size_t)cli_volume(&dims) * prt_dtype_size(s->dtype);
        printf("  %-16s %-8s %s", name, prt_dtype_name(s->dtype),
               cli_format_dims(&dims, d, sizeof d));
        if (o->output_dir) {
            cli_safe_name(s->name, safe, sizeof safe);
            snprintf(path, sizeof path, "%s/output_%s.npy", o->output_dir, safe);
            if (npy_write(path, s->dtype, &dims, data, err, sizeof err) != 0) {
                putchar('\n');
                cli_error("%s", err);
                return CLI_FAIL;
            }
            printf(" -> %s", path);
        }
        putchar('\n');
        same = same_in_every_context(ctxs, nb_ctx, i, name, &dims, data, bytes);
        if (same < 0)
            return CLI_FAIL;
        *differ |= !same;
    }
    return CLI_OK;
}

/* "compare with DIR": each output of `rc` against its reference, then the
 * verdict. CLI_FAIL when one differs or a reference cannot be read. */
static int compare_outputs(const run_output_opts *o, const run_ctx *rc)
{
    int compared = 0, differ = 0, skipped_any = 0;
    printf(
        "compare with %s (|got - ref| <= atol + rtol * |ref|, atol %g, rtol %g%s%s):\n",
        o->compare_dir, o->atol, o->rtol, o->tol_for ? ", " : "",
        o->tol_for ? o->tol_for : "");
    for (int i = 0; i < rc->nb_slots; i++) {
        const run_slot *s = &rc->slots[i];
        prt_dims dims;
        const void *data;
        int skipped = 0, r;
        if (run_ctx_output(rc, i, &dims, &data) != CLI_OK)
            return CLI_FAIL;
        r = compare_output(o, s->name, i, s->dtype, &dims, data, &skipped);
        if (r < 0)
            return CLI_FAIL;
        compared += !skipped;
        skipped_any |= skipped;
        differ += r == 0;
    }
    if (differ)
        printf("FAILED: %d of %d compared outputs differ from the references\n", differ,
               compared);
    else if (compared == 0)
        printf("nothing compared: no output has a reference in %s\n", o->compare_dir);
    else
        printf("PASSED: %d output(s) match%s\n", compared,
               skipped_any ? " (others skipped)" : "");
    return differ ? CLI_FAIL : CLI_OK;
}

int run_outputs_report(const run_ctx *ctxs, int nb_ctx, const run_output_opts *o)
{
    int threads_differ = 0, rc = list_outputs(o, ctxs, nb_ctx, &threads_differ);
    if (rc != CLI_OK)
        return rc;
    if (o->compare_dir)
        rc = compare_outputs(o, &ctxs[0]);
    return threads_differ ? CLI_FAIL : rc;
}
