/*
 * NonZeroPlugin's NVRTC backend without a GPU (the GPU half is
 * tests/cuda/test_cuda_nonzero_nvrtc.c): the kernel description get_kernel
 * gives, taken as the builder takes it (kernel_from_desc), its CUDA source
 * compiled by NVRTC for sm_90 and sm_75 and every launch's arguments
 * checked against the compiled entries' parameters; the launch sizes and
 * workspace offsets evaluated at many shapes against the tile arithmetic
 * and the workspace the plugin asks for; the backend field serialized only
 * when it is "nvrtc"; the default backend giving no kernel. Where this
 * machine has no NVRTC the compile checks say so and are skipped; the rest
 * runs.
 */
#include <stdlib.h>
#include <string.h>

#include "expr/expr.h"
#include "kernel/kernel.h"
#include "testutil.h"

#define TILE 4096 /* PLG_NZ_NVRTC_TILE */

static prt_plugin *make_nz(prt_registry *reg, const char *backend, int32_t row_order)
{
    prt_field f[2] = {{"rowOrder", &row_order, PRT_FIELD_INT32, 1},
                      {"backend", backend, PRT_FIELD_CHAR, (int64_t)strlen(backend)}};
    return tu_make_plugin(reg, "", "NonZeroPlugin", "1", f, 2);
}

static void set_desc(prt_dynamic_tensor_desc *d, int32_t dtype, int32_t nb, int64_t d0,
                     int64_t d1)
{
    int64_t v[2] = {d0, d1};
    memset(d, 0, sizeof *d);
    d->desc.dtype = dtype;
    d->desc.format = PRT_FORMAT_LINEAR;
    d->desc.dims = tu_dims(nb, v);
    d->min = d->opt = d->max = d->desc.dims;
}

/* The plugin's workspace for inputs up to R x C on a CUDA target. */
static int64_t workspace_for(prt_plugin *p, int32_t dtype, int64_t R, int64_t C)
{
    prt_dynamic_tensor_desc d[3];
    int64_t ws = -1;
    set_desc(&d[0], dtype, 2, R, C);
    set_desc(&d[1], PRT_INT32, 2, R * C, 2);
    set_desc(&d[2], PRT_INT64, 0, 0, 0);
    CHECK_OK(p->vt->build->set_target_device(p, PRT_DEVICE_CUDA));
    CHECK_OK(p->vt->build->configure(p, d, 1, d + 1, 2));
    CHECK_OK(p->vt->build->get_workspace_size(p, d, 1, d + 1, 2, &ws));
    return ws;
}

/* Launch sizes and workspace offsets of k at input R x C, against the tile
 * arithmetic, within the workspace `ws` asked for the largest input. */
static void check_sizes(const eng_kernel *k, int64_t R, int64_t C, int32_t row_order,
                        int64_t ws)
{
    int64_t v[2] = {R, C}, o[2] = {R * C, 2};
    prt_dims dims[3];
    expr_env env;
    int64_t *val = calloc((size_t)k->exprs.nb_nodes + 1, sizeof *val);
    uint8_t *known = calloc((size_t)k->exprs.nb_nodes + 1, 1);
    int64_t tiles = (R * C + TILE - 1) / TILE;
    tiles = tiles > 0 ? tiles : 1;
    dims[0] = tu_dims(2, v);
    dims[1] = tu_dims(2, o);
    dims[2] = tu_dims(0, v);
    memset(&env, 0, sizeof env);
    env.nb_inputs = 3;
    env.input_dims = dims;
    if (!val || !known || expr_program_eval(&k->exprs, &env, val, known) != PRT_OK) {
        CHECK(!"evaluating the kernel's program failed");
        goto done;
    }
    /* count and write: a block a tile; scan: one block of 1024. */
    CHECK(val[k->launches[0].grid[0]] == tiles && val[k->launches[2].grid[0]] == tiles);
    CHECK(val[k->launches[1].grid[0]] == 1 && val[k->launches[1].block[0]] == 1024);
    CHECK(val[k->launches[0].block[0]] == 256 && val[k->launches[2].block[0]] == 256);
    for (int l = 0; l < 3; l++)
        for (int d = 1; d < 3; d++)
            CHECK(val[k->launches[l].grid[d]] == 1 && val[k->launches[l].block[d]] == 1);
    /* The scan's tile count, and its offsets[] behind counts[tiles], with
     * room for tiles + 1 of them in what the plugin asked for. */
    CHECK(val[k->launches[1].args[1].node] == tiles);
    CHECK(k->launches[1].args[0].node < 0 && k->launches[0].args[4].node < 0);
    CHECK(val[k->launches[1].args[2].node] == 8 * tiles);
    CHECK(val[k->launches[2].args[4].node] == 8 * tiles);
    CHECK(8 * tiles + 8 * (tiles + 1) <= ws);
    /* rows, cols as the kernels take them; the row order. */
    CHECK(val[k->launches[0].args[2].node] == R && val[k->launches[0].args[3].node] == C);
    CHECK(val[k->launches[2].args[7].node] == row_order);
done:
    free(val);
    free(known);
}

/* One dtype and order: the description, compiled for `arch`. Returns 0 when
 * NVRTC is missing here (the compile part skipped), else 1. */
static int check_kernel(prt_registry *reg, int32_t dtype, int32_t row_order, int32_t arch)
{
    static const int64_t shapes[][2] = {{0, 5},   {1, 1},      {1, 4096}, {1, 4097},
                                        {64, 64}, {100, 333},  {7, 13},   {1000, 1000},
                                        {37, 1},  {4096, 4097}};
    prt_plugin *p = make_nz(reg, "nvrtc", row_order);
    expr_pool *pool = expr_pool_create();
    const int32_t ranks[3] = {2, 2, 0};
    kernel_io io = {1, 2, ranks};
    prt_dim_exprs dims[3];
    prt_dynamic_tensor_desc d[3];
    prt_kernel_desc desc;
    eng_kernel k;
    int64_t ws;
    int compiled = 1;
    prt_status st;
    const char *sfx = dtype == PRT_FLOAT32 ? "f32" : "f16";
    char want[32];
    memset(&k, 0, sizeof k);
    if (!p || !pool) {
        CHECK(!"no plugin or no pool");
        goto done;
    }
    ws = workspace_for(p, dtype, 4096, 4097);
    memset(dims, 0, sizeof dims);
    dims[0].nb_dims = 2;
    dims[1].nb_dims = 2;
    for (int i = 0; i < 2; i++) {
        dims[0].d[i] = expr_input_dim(pool, 0, i);
        dims[1].d[i] = expr_input_dim(pool, 1, i);
    }
    set_desc(&d[0], dtype, 2, 4096, 4097);
    set_desc(&d[1], PRT_INT32, 2, 4096 * 4097, 2);
    set_desc(&d[2], PRT_INT64, 0, 0, 0);
    memset(&desc, 0, sizeof desc);
    desc.struct_size = sizeof desc;
    CHECK_OK(p->vt->build->get_kernel(p, 0, d, 1, d + 1, 2, dims, dims + 1,
                                      expr_pool_builder(pool), &desc));
    CHECK(desc.nb_code == 1 && desc.code[0].kind == PRT_KERNEL_CUDA_SOURCE &&
          desc.nb_launches == 3);
    snprintf(want, sizeof want, "plg_nz_count_%s", sfx);
    CHECK(desc.nb_launches == 3 && strcmp(desc.launches[0].entry, want) == 0 &&
          strcmp(desc.launches[1].entry, "plg_nz_scan") == 0);
    st = kernel_from_desc(&desc, pool, arch, "nz", &io, &k);
    if (st == PRT_ERR_UNSUPPORTED && strstr(prt_last_error(), "no NVRTC")) {
        printf("test_nonzero_nvrtc: no NVRTC here; the compile checks are skipped\n");
        compiled = 0;
        goto done;
    }
    if (st != PRT_OK) {
        fprintf(stderr, "kernel_from_desc (%s, sm_%d): %s\n", sfx, (int)arch,
                prt_last_error());
        CHECK(!"the NVRTC NonZero kernel does not compile or its launches do not "
               "match its parameters");
        goto done;
    }
    /* NVRTC gives a cubin for the target and PTX beside it. */
    CHECK(k.nb_code == 2 && k.code[0].kind == PRT_KERNEL_CUBIN &&
          k.code[0].arch == arch && k.code[1].kind == PRT_KERNEL_PTX);
    CHECK_OK(kernel_validate(&k, "nz", &io));
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        check_sizes(&k, shapes[s][0], shapes[s][1], row_order, ws);
done:
    kernel_free(&k);
    expr_pool_destroy(pool);
    if (p)
        p->vt->runtime->destroy(p);
    return compiled;
}

/* Fields, tactics and the default backend. */
static void check_fields(prt_registry *reg)
{
    prt_plugin *nv = make_nz(reg, "nvrtc", 0), *cu = make_nz(reg, "cuda", 1),
               *none = make_nz(reg, "", 1);
    const prt_field_collection *fc;
    prt_dynamic_tensor_desc d[3];
    prt_kernel_desc desc;
    int32_t n = -1;
    if (!nv || !cu || !none) {
        CHECK(!"no plugin");
        goto done;
    }
    fc = nv->vt->runtime->get_fields_to_serialize(nv);
    CHECK(fc && fc->nb_fields == 2 && strcmp(fc->fields[1].name, "backend") == 0 &&
          fc->fields[1].length == 5 && memcmp(fc->fields[1].data, "nvrtc", 5) == 0);
    fc = cu->vt->runtime->get_fields_to_serialize(cu);
    CHECK(fc && fc->nb_fields == 1 && strcmp(fc->fields[0].name, "rowOrder") == 0);
    /* One kernel: no tactics to choose among. */
    CHECK_OK(nv->vt->build->get_valid_tactics(nv, NULL, 0, &n));
    CHECK(n == 0);
    /* The default backend has no kernel (enqueue runs); nor does the CPU's
     * workspace change: none on the CPU. */
    set_desc(&d[0], PRT_FLOAT32, 2, 8, 8);
    set_desc(&d[1], PRT_INT32, 2, 64, 2);
    set_desc(&d[2], PRT_INT64, 0, 0, 0);
    memset(&desc, 0, sizeof desc);
    desc.struct_size = sizeof desc;
    CHECK(cu->vt->build->get_kernel(cu, 0, d, 1, d + 1, 2, NULL, NULL, NULL, &desc) ==
          PRT_ERR_UNSUPPORTED);
    CHECK(none->vt->build->get_kernel(none, 0, d, 1, d + 1, 2, NULL, NULL, NULL, &desc) ==
          PRT_ERR_UNSUPPORTED);
    {
        int64_t ws = -1;
        CHECK_OK(nv->vt->build->set_target_device(nv, PRT_DEVICE_CPU));
        CHECK_OK(nv->vt->build->configure(nv, d, 1, d + 1, 2));
        CHECK_OK(nv->vt->build->get_workspace_size(nv, d, 1, d + 1, 2, &ws));
        CHECK(ws == 0);
    }
done:
    if (nv)
        nv->vt->runtime->destroy(nv);
    if (cu)
        cu->vt->runtime->destroy(cu);
    if (none)
        none->vt->runtime->destroy(none);
}

int main(void)
{
    prt_registry *reg;
    int compiled = 0;
    tu_watchdog("test_nonzero_nvrtc", 600);
    reg = tu_registry_with_plugins();
    if (!reg)
        return tu_finish("test_nonzero_nvrtc");
    check_fields(reg);
    for (int t = 0; t < 2; t++)
        for (int32_t o = 0; o < 2; o++)
            compiled += check_kernel(reg, t ? PRT_FLOAT16 : PRT_FLOAT32, o, 90);
    /* The oldest capability NVRTC 13 targets: nothing in the source needs
     * more. */
    if (compiled)
        check_kernel(reg, PRT_FLOAT32, 1, 75);
    printf("test_nonzero_nvrtc: %s\n",
           compiled ? "compiled with NVRTC for sm_90 and sm_75"
                    : "NVRTC compile checks skipped (no libnvrtc)");
    prt_registry_destroy(reg);
    return tu_finish("test_nonzero_nvrtc");
}
