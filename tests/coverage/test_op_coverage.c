/*
 * The coverage matrix of the built-in ops (STYLE.md habit 8, after ggml's
 * test-backend-ops): every op x device x dtype that plugrt declares
 * (prt_builtin_get_dtypes) runs on random shapes against the CPU's
 * reference, with outputs poisoned, so which ops run where is a fact the
 * build states and this test checks, not a reading of the code.
 *
 *  - The reference is the CPU's kernel built as plain C (cpu_force_baseline)
 *    on one thread. A CPU cell runs the CPU's fastest kernels (AVX2,
 *    AVX-512 where the machine has them) on three threads; a CUDA cell runs
 *    the CUDA kernel. The two runs poison their outputs with different
 *    bytes, so an element one of them leaves unwritten differs.
 *  - An op with no generator (cov_*.c), or a generator that makes no case
 *    for a dtype the op declares, fails: a kernel cannot be added to a
 *    device's table without a case here.
 *  - A dtype the CPU takes but a device's kernel does not is a refusal
 *    cell: the build for that device must fail naming the layer, the op and
 *    the dtype.
 *  - Every entry of a device's table names a built-in op.
 *
 * Without a GPU the CUDA cells are counted as skipped, not passed; the
 * summary says how many (op, device, dtype) cells ran. `-v` lists each.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "cov.h"
#include "ops/cpu/cpu_kernels.h"
#include "ops/op_device.h"

/* Threads of a CPU cell's context: more than one, so the ranges a kernel
 * cuts its work into are checked against the one-thread reference. */
#define COV_THREADS 3
#define POISON_REF 0xFF
#define POISON_RUN 0x5A

struct cov {
    tu_rng r;
    const char *op;
    int32_t device; /* the cell's */
    int32_t dtype;
    int refuse; /* the device must refuse this dtype */
    int cases;  /* run in this cell */
    int total_cases;
    int refusals;
    int verbose;
};

void cov_append(char *buf, size_t cap, const char *fmt, ...)
{
    const size_t n = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    if (n < cap)
        vsnprintf(buf + n, cap - n, fmt, ap);
    va_end(ap);
}

int32_t cov_device(cov *c)
{
    return c->device;
}

tu_rng *cov_rng(cov *c)
{
    return &c->r;
}

prt_dims cov_dims(cov *c, int32_t rank, int zero_ok)
{
    static const int64_t sizes[] = {1, 3, 5, 7, 9, 2, 4, 1, 3, 5, 7};
    int64_t d[PRT_MAX_DIMS];
    for (int32_t i = 0; i < rank; i++)
        d[i] =
            sizes[tu_rng_range(&c->r, 0, (int64_t)(sizeof sizes / sizeof sizes[0]) - 1)];
    if (zero_ok && rank > 0 && tu_rng_range(&c->r, 0, 5) == 0)
        d[tu_rng_range(&c->r, 0, rank - 1)] = 0;
    return tu_dims(rank, d);
}

ot_tensor cov_random(cov *c, int32_t dtype, prt_dims d, int specials)
{
    static const double sp[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 0.5};
    ot_tensor t = ot_random(dtype, d, &c->r, 0);
    if (specials && ot_is_float(dtype))
        for (int64_t i = 0; i < tu_volume(&d); i++)
            if (tu_rng_range(&c->r, 0, 7) == 0)
                ot_set(&t, i, sp[tu_rng_range(&c->r, 0, 5)]);
    return t;
}

double cov_rtol(int32_t dt, double f32)
{
    return dt == PRT_FLOAT32    ? f32
           : dt == PRT_FLOAT16  ? 2e-3
           : dt == PRT_BFLOAT16 ? 1.6e-2
                                : 0;
}

static const char *device_name(int32_t d)
{
    return d == PRT_DEVICE_CPU ? "cpu" : d == PRT_DEVICE_CUDA ? "cuda" : "device";
}

/* The build for the cell's device must fail naming the layer (its default
 * name, the op's), the op and the dtype. */
static void case_refused(cov *c, const char *what, const oc_case *k)
{
    char err[1024], layer[96];
    prt_engine *e = oc_build(c->device, k, err, sizeof err);
    snprintf(layer, sizeof layer, "layer '%s_", k->op);
    c->refusals++;
    if (e || !strstr(err, layer) || !strstr(err, k->op) ||
        !strstr(err, prt_dtype_name(c->dtype))) {
        printf("%s: the %s build should fail naming the layer, %s and %s; it %s: %s\n",
               what, device_name(c->device), k->op, prt_dtype_name(c->dtype),
               e ? "succeeded" : "failed", e ? "" : err);
        CHECK(!"a device's refusal names the layer, the op and the dtype");
    }
    prt_engine_destroy(e);
}

void cov_case(cov *c, const char *what, oc_case *k)
{
    ot_tensor want[OC_MAXOUT] = {{0}}, got[OC_MAXOUT] = {{0}};
    prt_engine *ref = NULL, *run = NULL;
    char full[384], err[1024];
    size_t n;
    int rc;
    n = (size_t)snprintf(full, sizeof full, "%s on %s (%s), inputs", what,
                         device_name(c->device), prt_dtype_name(c->dtype));
    for (int32_t i = 0; i < k->nb && n < sizeof full; i++) {
        char d[64];
        base_dims_str(&k->in[i].dims, d, sizeof d);
        n += (size_t)snprintf(full + n, sizeof full - n, " %s", d);
    }
    c->cases++;
    c->total_cases++;
    if (c->refuse) {
        case_refused(c, full, k);
        oc_free(k);
        return;
    }
    /* The reference: plain C on one thread. */
    cpu_force_baseline(1);
    ref = oc_build(PRT_DEVICE_CPU, k, err, sizeof err);
    if (!ref) {
        printf("%s: the CPU build fails: %s\n", full, err);
        CHECK(!"the CPU reference builds");
    }
    rc = ref ? oc_run(ref, PRT_DEVICE_CPU, k, 1, POISON_REF, want) : 1;
    cpu_force_baseline(0);
    if (!rc) {
        run = oc_build(c->device, k, err, sizeof err);
        if (!run) {
            printf("%s: the build fails: %s\n", full, err);
            CHECK(!"the cell's build");
        }
    }
    if (run && oc_run(run, c->device, k, c->device == PRT_DEVICE_CPU ? COV_THREADS : 0,
                      POISON_RUN, got) == 0)
        oc_compare(full, k, got, want);
    for (int32_t i = 0; i < OC_MAXOUT; i++) {
        ot_free(&want[i]);
        ot_free(&got[i]);
    }
    prt_engine_destroy(ref);
    prt_engine_destroy(run);
    oc_free(k);
}

static cov_gen find_gen(const char *op)
{
    static const cov_entry *const tables[] = {
        cov_ew_entries,    cov_data_entries,  cov_nn_entries,     cov_reduce_entries,
        cov_quant_entries, cov_qgemm_entries, cov_signal_entries, cov_loss_entries};
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (const cov_entry *e = tables[t]; e->op; e++)
            if (strcmp(e->op, op) == 0)
                return e->gen;
    return NULL;
}

/* Every entry of each device's table is a built-in op. */
static void check_tables(void)
{
    for (int32_t d = 0; d < PRT_DEVICE_COUNT; d++) {
        const op_device_table *t = op_device_table_get(d);
        for (int32_t i = 0; t && i < t->count; i++) {
            const prt_plugin_creator *cr = NULL;
            if (prt_builtin_find_creator(t->kernels[i].op, NULL, &cr) != PRT_OK) {
                printf("the %s table names '%s', which is no built-in op\n", t->name,
                       t->kernels[i].op);
                CHECK(!"a device table names built-in ops only");
            }
        }
    }
}

/* PRT_COV_OPS=Op1,Op2 runs those ops' cells alone (a sanitizer's pass over
 * new kernels); unset, every op. */
static int op_selected(const char *op)
{
    const char *list = getenv("PRT_COV_OPS");
    size_t n = strlen(op);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, op, n) == 0)
            return 1;
        p = e ? e + 1 : p + len;
    }
    return !list || !*list;
}

int main(int argc, char **argv)
{
    cov c;
    const int gpu = prt_device_check(PRT_DEVICE_CUDA) == PRT_OK;
    const char *why_no_gpu = gpu ? "" : prt_last_error();
    char no_gpu[256];
    int cells[PRT_DEVICE_COUNT] = {0}, ran[PRT_DEVICE_COUNT] = {0};
    int skipped[PRT_DEVICE_COUNT] = {0}, refusal_cells = 0, refusals_ran = 0,
        refusals_skipped = 0;
    memset(&c, 0, sizeof c);
    snprintf(no_gpu, sizeof no_gpu, "%s", why_no_gpu);
    c.verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    tu_rng_seed(&c.r, 20261206);
    check_tables();
    for (int32_t i = 0; i < prt_builtin_creator_count(); i++) {
        const char *op = prt_builtin_get_creator(i)->name;
        const cov_gen gen = find_gen(op);
        if (!op_selected(op))
            continue;
        uint32_t cpu_mask = 0;
        CHECK_OK(prt_builtin_get_dtypes(i, PRT_DEVICE_CPU, &cpu_mask));
        for (int32_t d = 0; d < PRT_DEVICE_COUNT; d++) {
            uint32_t mask = 0;
            const int has_kernel =
                d == PRT_DEVICE_CPU || op_device_kernel_find(op_device_table_get(d), op);
            CHECK_OK(prt_builtin_get_dtypes(i, d, &mask));
            if (!has_kernel)
                continue;
            for (int32_t t = 0; t < PRT_DTYPE_COUNT; t++) {
                const int declared = (mask >> t) & 1u;
                const int refused = !declared && ((cpu_mask >> t) & 1u);
                if (!declared && !refused)
                    continue;
                cells[d] += declared;
                refusal_cells += refused;
                if (!gen) {
                    printf("%s declares %s on %s, but no generator makes its cases "
                           "(tests/coverage/cov_*.c)\n",
                           op, prt_dtype_name(t), device_name(d));
                    CHECK(!"every declared (op, device, dtype) has cases");
                    continue;
                }
                if (d != PRT_DEVICE_CPU && !gpu) {
                    skipped[d] += declared;
                    refusals_skipped += refused;
                    continue;
                }
                c.op = op;
                c.device = d;
                c.dtype = t;
                c.refuse = refused;
                c.cases = 0;
                gen(&c, op, t);
                if (c.cases == 0) {
                    printf("the generator of %s made no case for %s\n", op,
                           prt_dtype_name(t));
                    CHECK(!"a generator makes cases for every dtype the op declares");
                }
                ran[d] += declared && c.cases > 0;
                refusals_ran += refused && c.cases > 0;
                if (c.verbose)
                    printf("  %-22s %-5s %-9s %s%d case%s\n", op, device_name(d),
                           prt_dtype_name(t), refused ? "refused, " : "", c.cases,
                           c.cases == 1 ? "" : "s");
            }
        }
    }
    printf("test_op_coverage: %d built-in ops; (op, device, dtype) cells:\n",
           (int)prt_builtin_creator_count());
    for (int32_t d = 0; d < PRT_DEVICE_COUNT; d++)
        printf("  %-4s: %d declared, %d ran, %d skipped%s%s%s\n", device_name(d),
               cells[d], ran[d], skipped[d], skipped[d] ? " (" : "",
               skipped[d] ? no_gpu : "", skipped[d] ? ")" : "");
    printf("  refusals (a dtype the CPU takes and a device's kernel does not): %d, "
           "%d checked, %d skipped\n",
           refusal_cells, refusals_ran, refusals_skipped);
    printf("  cases run: %d\n", c.total_cases);
    return tu_finish("test_op_coverage");
}
