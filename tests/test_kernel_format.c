/*
 * Kernel layers in the engine file, without a GPU: an engine with one
 * kernel layer goes through the writer and the reader; inspect describes it
 * without loading anything; every byte of its section flipped, and each
 * cross reference broken on purpose (a layer, a tensor or an expression
 * that does not exist, an entry the code lacks, a code listed for another
 * capability, a parameter of another type), is a clear error. The
 * parameter checks also run on a cubin made here, and on descriptions as a
 * plugin hands them over (kernel_from_desc).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_impl.h"
#include "kernel/kernel.h"
#include "plan_bytes.h"
#include "testutil.h"

#define TAG_KERN TU_TAG('K', 'E', 'R', 'N')

/* The parameters nvcc gives `kscale(const float *x, float *y, long long n,
 * float a, int m, double d)`. */
static const char ptx_text[] =
    "//\n// kernel for tests\n//\n.version 8.0\n.target sm_90\n"
    ".address_size 64\n\n"
    ".visible .entry kscale(\n"
    "\t.param .u64 kscale_param_0,\n"
    "\t.param .u64 kscale_param_1,\n"
    "\t.param .u64 kscale_param_2,\n"
    "\t.param .f32 kscale_param_3,\n"
    "\t.param .u32 kscale_param_4,\n"
    "\t.param .f64 kscale_param_5\n"
    ")\n{\n\tret;\n}\n";

/* ---- a cubin: an ELF with the sections the reader looks at ------------- */

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

/* A cubin for sm_`arch` whose entry `kscale` has parameters of the given
 * sizes, laid out as nvcc lays them (each at its size's alignment). */
static uint8_t *make_cubin(int arch, const int *sizes, int n, size_t *out_size)
{
    static const char names[] = "\0.shstrtab\0.nv.info.kscale\0";
    size_t info_size = (size_t)n * 16, names_at = 64, info_at = 128;
    size_t sh_at = info_at + ((info_size + 7) & ~(size_t)7), total = sh_at + 3 * 64;
    uint8_t *b = calloc(1, total);
    uint32_t offset = 0;
    if (!b)
        return NULL;
    memcpy(b, "\177ELF", 4);
    b[4] = 2; /* 64-bit */
    b[5] = 1; /* little-endian */
    b[6] = 1;
    b[7] = 0x41; /* CUDA's OS ABI */
    b[8] = 8;    /* its ABI version: the SM in e_flags bits 8..15 */
    put16(b + 16, 2);
    put16(b + 18, 190); /* EM_CUDA */
    tu_put32(b + 20, 1);
    tu_put32(b + 0x30, (uint32_t)arch << 8 | 0x6000004);
    tu_put64(b + 0x28, sh_at);
    put16(b + 0x34, 64);
    put16(b + 0x3a, 64);
    put16(b + 0x3c, 3);
    put16(b + 0x3e, 1);
    memcpy(b + names_at, names, sizeof names);
    for (int i = 0; i < n; i++) {
        uint8_t *a = b + info_at + (size_t)i * 16;
        offset =
            (offset + (uint32_t)sizes[i] - 1) / (uint32_t)sizes[i] * (uint32_t)sizes[i];
        a[0] = 4;    /* a value with a length */
        a[1] = 0x17; /* EIATTR_KPARAM_INFO */
        put16(a + 2, 12);
        put16(a + 8, (uint16_t)i);
        put16(a + 10, (uint16_t)offset);
        tu_put32(a + 12, (uint32_t)sizes[i] << 18 | 0x1f000);
        offset += (uint32_t)sizes[i];
    }
    /* Section 1: .shstrtab; 2: .nv.info.kscale. */
    tu_put32(b + sh_at + 64 + 4, 3);
    tu_put64(b + sh_at + 64 + 0x18, names_at);
    tu_put64(b + sh_at + 64 + 0x20, sizeof names);
    tu_put32(b + sh_at + 128, 11);
    tu_put32(b + sh_at + 128 + 4, 0x70000000);
    tu_put64(b + sh_at + 128 + 0x18, info_at);
    tu_put64(b + sh_at + 128 + 0x20, info_size);
    *out_size = total;
    return b;
}

static const int kscale_sizes[] = {8, 8, 8, 4, 4, 8};

/* ---- an engine with one kernel layer ------------------------------------- */

static void set_tensor(eng_tensor *t, const char *name, int32_t in, int32_t out,
                       int32_t producer)
{
    t->name = base_strdup(name);
    t->dtype = PRT_FLOAT32;
    t->format = PRT_FORMAT_LINEAR;
    t->nb_dims = 1;
    t->dim_expr[0] = 0;
    for (int32_t i = 1; i < PRT_MAX_DIMS; i++)
        t->dim_expr[i] = -1;
    t->input_index = in;
    t->output_index = out;
    t->size_id = -1;
    t->producer = producer;
    t->offset = -1;
    t->max_bytes = 4096;
    t->const_offset = -1;
}

static int32_t *ids1(int32_t v)
{
    int32_t *p = base_malloc(sizeof *p);
    if (p)
        *p = v;
    return p;
}

/* The kernel: program N (0), 256 (1), ceil(N / 256) (2), 1 (3); one
 * launch of kscale over x and y. */
static void set_kernel(eng_kernel *k, int with_cubin)
{
    static const expr_node nodes[] = {
        {EXPR_INPUT_DIM, 0, 0, 0, 0},
        {EXPR_CONST, 0, 256, 0, 0},
        {EXPR_OP, PRT_DIM_CEIL_DIV, 0, 0, 1},
        {EXPR_CONST, 0, 1, 0, 0},
    };
    static const eng_kernel_arg args[] = {
        {PRT_KARG_INPUT, 0, -1, 0.0}, {PRT_KARG_OUTPUT, 0, -1, 0.0},
        {PRT_KARG_INT64, 0, 0, 0.0},  {PRT_KARG_FLOAT32, 0, -1, 2.5},
        {PRT_KARG_INT32, 0, 1, 0.0},  {PRT_KARG_FLOAT64, 0, -1, -0.25},
    };
    eng_kernel_launch *l;
    memset(k, 0, sizeof *k);
    k->layer = 0;
    k->code = base_calloc(2, sizeof *k->code);
    k->code[0].kind = PRT_KERNEL_PTX;
    k->code[0].arch = 90;
    k->code[0].size = (int64_t)strlen(ptx_text);
    k->code[0].data = base_malloc(sizeof ptx_text);
    memcpy(k->code[0].data, ptx_text, sizeof ptx_text);
    k->nb_code = 1;
    if (with_cubin) {
        size_t n = 0;
        uint8_t *c = make_cubin(90, kscale_sizes, 6, &n);
        k->code[1].kind = PRT_KERNEL_CUBIN;
        k->code[1].arch = 90;
        k->code[1].size = (int64_t)n;
        k->code[1].data = base_malloc(n + 1);
        memcpy(k->code[1].data, c, n);
        free(c);
        k->nb_code = 2;
    }
    k->exprs.nb_nodes = 4;
    k->exprs.nodes = base_malloc(sizeof nodes);
    memcpy(k->exprs.nodes, nodes, sizeof nodes);
    k->nb_launches = 1;
    k->launches = base_calloc(1, sizeof *k->launches);
    l = &k->launches[0];
    l->entry = base_strdup("kscale");
    l->grid[0] = 2;
    l->grid[1] = l->grid[2] = 3;
    l->block[0] = 1;
    l->block[1] = l->block[2] = 3;
    l->shared_bytes = -1;
    l->nb_args = 6;
    l->args = base_malloc(sizeof args);
    memcpy(l->args, args, sizeof args);
    k->hash = kernel_hash(k);
}

static prt_engine *make_engine(int with_cubin)
{
    static const expr_node nodes[] = {{EXPR_INPUT_DIM, 0, 0, 0, 0}};
    const int64_t one[] = {1}, opt[] = {256}, max[] = {1024};
    prt_engine *e = engine_alloc();
    eng_layer *l;
    if (!e)
        return NULL;
    e->device = PRT_DEVICE_CUDA;
    e->exprs.nb_nodes = 1;
    e->exprs.nodes = base_malloc(sizeof nodes);
    memcpy(e->exprs.nodes, nodes, sizeof nodes);
    e->nb_tensors = 2;
    e->tensors = base_calloc(2, sizeof *e->tensors);
    set_tensor(&e->tensors[0], "x", 0, -1, -1);
    set_tensor(&e->tensors[1], "y", -1, 0, 0);
    e->nb_inputs = 1;
    e->input_tensors = ids1(0);
    e->nb_outputs = 1;
    e->output_tensors = ids1(1);
    e->nb_layers = 1;
    e->layers = base_calloc(1, sizeof *e->layers);
    l = &e->layers[0];
    l->name = base_strdup("scale");
    l->plugin_namespace = base_strdup("test");
    l->plugin_name = base_strdup("KScale");
    l->plugin_version = base_strdup("1");
    l->library = base_strdup("");
    l->device = PRT_DEVICE_CUDA;
    l->nb_inputs = 1;
    l->inputs = ids1(0);
    l->nb_outputs = 1;
    l->outputs = ids1(1);
    l->alias_input = ids1(-1);
    l->alias_copy = base_calloc(1, 1);
    e->nb_profiles = 1;
    e->prof_min = base_calloc(1, sizeof(prt_dims));
    e->prof_opt = base_calloc(1, sizeof(prt_dims));
    e->prof_max = base_calloc(1, sizeof(prt_dims));
    e->prof_vmin = base_calloc(1, sizeof(prt_dims));
    e->prof_vopt = base_calloc(1, sizeof(prt_dims));
    e->prof_vmax = base_calloc(1, sizeof(prt_dims));
    e->prof_min[0] = tu_dims(1, one);
    e->prof_opt[0] = tu_dims(1, opt);
    e->prof_max[0] = tu_dims(1, max);
    e->nb_kernels = 1;
    e->kernels = base_calloc(1, sizeof *e->kernels);
    set_kernel(&e->kernels[0], with_cubin);
    l->kernel = &e->kernels[0];
    return e;
}

static uint8_t *serialize(const prt_engine *e, size_t *n)
{
    base_buf b;
    memset(&b, 0, sizeof b);
    if (engine_write(e, &b) != PRT_OK) {
        base_buf_free(&b);
        return NULL;
    }
    *n = b.size;
    return b.data;
}

/* Loads bytes for inspection (no device, no plugins). */
static prt_status load(const uint8_t *b, size_t n, prt_engine **out)
{
    return prt_engine_deserialize_unresolved(b, n, out);
}

static int test_round_trip(void)
{
    prt_engine *e = make_engine(1), *r = NULL;
    prt_kernel_layer_info ki = {.struct_size = sizeof ki};
    prt_layer_info li = {.struct_size = sizeof li};
    size_t n = 0;
    uint8_t *b;
    char text[512];
    REQUIRE(e);
    b = serialize(e, &n);
    REQUIRE(b);
    CHECK(tu_plan_section_at(b, TAG_KERN) != 0);
    CHECK_OK(load(b, n, &r));
    REQUIRE(r);
    CHECK(prt_engine_get_nb_kernel_layers(r) == 1);
    CHECK_OK(prt_engine_get_kernel_layer(r, 0, &ki));
    CHECK(ki.layer == 0 && ki.hash == e->kernels[0].hash && ki.nb_code == 2);
    CHECK(ki.code_kind[0] == PRT_KERNEL_PTX && ki.code_arch[0] == 90);
    CHECK(ki.code_kind[1] == PRT_KERNEL_CUBIN && ki.code_arch[1] == 90);
    CHECK(ki.code_size[0] == (int64_t)strlen(ptx_text) && ki.nb_launches == 1);
    CHECK_OK(prt_engine_get_layer(r, 0, &li));
    CHECK(li.kernel == 1);
    CHECK_OK(prt_engine_describe_kernel_launch(r, 0, 0, text, sizeof text));
    CHECK(strcmp(text,
                 "kscale grid (ceildiv(in0.d0, 256), 1, 1) block (256, 1, 1) shared 0 "
                 "args (in0, out0, int64 in0.d0, float32 2.5, int32 256, "
                 "float64 -0.25)") == 0);
    CHECK_ERR(prt_engine_describe_kernel_launch(r, 0, 1, text, sizeof text),
              PRT_ERR_INVALID_ARGUMENT, "launch 1 does not exist");
    CHECK_ERR(prt_engine_get_kernel_layer(r, 1, &ki), PRT_ERR_INVALID_ARGUMENT,
              "kernel layer 1 does not exist");
    /* Cut short, the text still ends. */
    CHECK_OK(prt_engine_describe_kernel_launch(r, 0, 0, text, 8));
    CHECK(strlen(text) == 7);
    /* The reader's copy writes the same bytes. */
    {
        size_t n2 = 0;
        uint8_t *b2 = serialize(r, &n2);
        CHECK(b2 && n2 == n && memcmp(b, b2, n) == 0);
        base_free(b2);
    }
    prt_engine_destroy(r);
    base_free(b);
    engine_free(e);
    return 0;
}

/* Every byte of the kernel section flipped is an error, never a crash and
 * never a different kernel. */
static int test_byte_flips(void)
{
    prt_engine *e = make_engine(1);
    size_t n = 0, at, end;
    uint8_t *b;
    int accepted = 0;
    REQUIRE(e);
    b = serialize(e, &n);
    REQUIRE(b);
    at = tu_plan_section_at(b, TAG_KERN);
    REQUIRE(at);
    end = at + (size_t)tu_get64(b + at - 8);
    for (size_t i = at; i < end; i++) {
        prt_engine *r = NULL;
        prt_status st;
        b[i] ^= 0x5a;
        tu_plan_fix_crc(b, n);
        st = load(b, n, &r);
        if (st == PRT_OK) {
            accepted++;
            fprintf(stderr, "a flip at byte %zu of the kernel section was accepted\n",
                    i - at);
        }
        prt_engine_destroy(r);
        b[i] ^= 0x5a;
    }
    CHECK(accepted == 0);
    /* Every truncation of the section, lengths fixed so the cut reaches it. */
    base_free(b);
    engine_free(e);
    return 0;
}

/* Patches the serialized engine at `off` (in the kernel section) with v,
 * and expects the load to fail naming `want`. */
static int expect_patch(const char *what, size_t off, const void *v, size_t len,
                        const char *want)
{
    prt_engine *e = make_engine(1), *r = NULL;
    size_t n = 0, at;
    uint8_t *b = serialize(e, &n);
    REQUIRE(b);
    at = tu_plan_section_at(b, TAG_KERN);
    memcpy(b + at + off, v, len);
    tu_plan_fix_crc(b, n);
    fprintf(stderr, "  %s: ", what);
    CHECK_ERR(load(b, n, &r), PRT_ERR_MALFORMED, want);
    fprintf(stderr, "%s\n", prt_last_error());
    prt_engine_destroy(r);
    base_free(b);
    engine_free(e);
    return 0;
}

static int test_cross_references(void)
{
    /* Offsets in the section: count (4), layer (4), hash (8), code count
     * (4), then code 0: kind (4), arch (4), size (8), its bytes. */
    const size_t ptx_at = 4 + 4 + 8 + 4 + 16, ptx_len = strlen(ptx_text);
    size_t cubin_len = 0, nodes_at, launch_at, args_at;
    uint8_t *cub = make_cubin(90, kscale_sizes, 6, &cubin_len);
    uint8_t v[8];
    const char *p;
    free(cub);
    nodes_at = ptx_at + ptx_len + 16 + cubin_len + 4;
    launch_at = nodes_at + 4 * 24 + 4;       /* the entry's length */
    args_at = launch_at + 4 + 6 + 7 * 4 + 4; /* "kscale", grid, block, shared, count */

    tu_put32(v, 5);
    expect_patch("layer", 4, v, 4, "names layer 5, of 1");
    tu_put32(v, 80);
    expect_patch("arch", 4 + 4 + 8 + 4 + 4, v, 4,
                 "is listed for sm_80, but its PTX is for sm_90");
    p = strstr(ptx_text, ".param .f32");
    expect_patch(
        "parameter type", ptx_at + (size_t)(p - ptx_text), ".param .f64", 11,
        "parameter 3 is .f64 (8 bytes, aligned to 8), but the launch passes float32");
    p = strstr(ptx_text, "for tests");
    expect_patch("a byte of code", ptx_at + (size_t)(p - ptx_text), "FOR", 3,
                 "content hash");
    expect_patch("entry name", launch_at + 4, "kscalf", 6, "has no entry 'kscalf'");
    tu_put32(v, 99);
    expect_patch("grid node", launch_at + 4 + 6, v, 4, "names expression 99");
    tu_put32(v, 3);
    expect_patch("input index", args_at + 4, v, 4, "names input 3, but the layer has 1");
    tu_put32(v, 2);
    expect_patch("output index", args_at + 20 + 4, v, 4,
                 "names output 2, but the layer has 1");
    tu_put32(v, 77);
    expect_patch("argument node", args_at + 40 + 8, v, 4, "names expression 77");
    tu_put32(v, 1);
    expect_patch("an input dim out of rank", nodes_at + 20, v, 4,
                 "kernel of layer 'scale'");
    tu_put32(v, PRT_KARG_COUNT);
    expect_patch("argument kind", args_at, v, 4, "has kind 9");
    return 0;
}

static int test_cubin(void)
{
    size_t n = 0;
    uint8_t *c = make_cubin(90, kscale_sizes, 6, &n);
    eng_kernel_code code = {PRT_KERNEL_CUBIN, 90, c, (int64_t)n};
    kernel_param params[8];
    int32_t count = 0, arch = 0;
    REQUIRE(c);
    CHECK_OK(kernel_code_arch(PRT_KERNEL_CUBIN, c, (int64_t)n, &arch));
    CHECK(arch == 90);
    CHECK_OK(kernel_code_params(&code, "kscale", params, 8, &count));
    CHECK(count == 6);
    for (int i = 0; i < count && i < 6; i++)
        CHECK(params[i].size == kscale_sizes[i] &&
              params[i].align % kscale_sizes[i] == 0);
    CHECK_ERR(kernel_code_params(&code, "other", params, 8, &count), PRT_ERR_NOT_FOUND,
              "no entry 'other'");
    /* A section table past the end of the file. */
    code.size = 100;
    CHECK_ERR(kernel_code_params(&code, "kscale", params, 8, &count), PRT_ERR_MALFORMED,
              "outside the file");
    code.size = (int64_t)n;
    /* Not CUDA's machine. */
    c[18] = 62;
    CHECK_ERR(kernel_code_arch(PRT_KERNEL_CUBIN, c, (int64_t)n, &arch), PRT_ERR_MALFORMED,
              "not CUDA");
    free(c);
    /* Every truncation of a cubin reads as an error or a shorter list,
     * never past the end. */
    c = make_cubin(90, kscale_sizes, 6, &n);
    for (size_t cut = 0; cut < n; cut++) {
        eng_kernel_code t = {PRT_KERNEL_CUBIN, 90, c, (int64_t)cut};
        prt_status st = kernel_code_params(&t, "kscale", params, 8, &count);
        CHECK(st == PRT_ERR_MALFORMED || st == PRT_ERR_NOT_FOUND || st == PRT_OK);
    }
    free(c);
    return 0;
}

/* An engine listing a cubin for sm_89 whose ELF says sm_90. */
static int test_cubin_capability(void)
{
    prt_engine *e = make_engine(1), *r = NULL;
    size_t n = 0, at;
    uint8_t *b;
    REQUIRE(e);
    b = serialize(e, &n);
    REQUIRE(b);
    at = tu_plan_section_at(b, TAG_KERN) + 4 + 4 + 8 + 4 + 16 + strlen(ptx_text);
    tu_put32(b + at + 4, 89);
    tu_plan_fix_crc(b, n);
    CHECK_ERR(load(b, n, &r), PRT_ERR_MALFORMED,
              "code 1 is listed for sm_89, but its cubin");
    prt_engine_destroy(r);
    base_free(b);
    engine_free(e);
    return 0;
}

/* Descriptions as get_kernel gives them. */
static int test_from_desc(void)
{
    expr_pool *pool = expr_pool_create(), *other = expr_pool_create();
    const int32_t ranks[2] = {1, 1};
    kernel_io io = {1, 1, ranks};
    const prt_expr *n, *one, *grid, *foreign;
    prt_kernel_code code = {PRT_KERNEL_PTX, 0, ptx_text, (int64_t)strlen(ptx_text)};
    prt_kernel_arg args[6];
    prt_kernel_launch launch;
    prt_kernel_desc d;
    eng_kernel k;
    REQUIRE(pool && other);
    n = expr_input_dim(pool, 0, 0);
    one = expr_const(pool, 1);
    grid = expr_op(pool, PRT_DIM_CEIL_DIV, n, expr_const(pool, 128));
    foreign = expr_const(other, 128);
    memset(args, 0, sizeof args);
    args[0] = (prt_kernel_arg){PRT_KARG_INPUT, 0, NULL, 0};
    args[1] = (prt_kernel_arg){PRT_KARG_OUTPUT, 0, NULL, 0};
    args[2] = (prt_kernel_arg){PRT_KARG_INT64, 0, n, 0};
    args[3] = (prt_kernel_arg){PRT_KARG_FLOAT32, 0, NULL, 3.0};
    args[4] = (prt_kernel_arg){PRT_KARG_INT32, 0, one, 0};
    args[5] = (prt_kernel_arg){PRT_KARG_FLOAT64, 0, NULL, 1.0};
    memset(&launch, 0, sizeof launch);
    launch.entry = "kscale";
    launch.grid[0] = grid;
    launch.grid[1] = launch.grid[2] = one;
    launch.block[0] = expr_const(pool, 128);
    launch.block[1] = launch.block[2] = one;
    launch.nb_args = 6;
    launch.args = args;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.nb_code = 1;
    d.code = &code;
    d.nb_launches = 1;
    d.launches = &launch;

    CHECK_OK(kernel_from_desc(&d, pool, 90, "L", &io, &k));
    CHECK(k.nb_code == 1 && k.code[0].arch == 90 && k.hash == kernel_hash(&k));
    CHECK(k.launches[0].grid[0] == expr_id(grid) &&
          k.launches[0].args[2].node == expr_id(n));
    kernel_free(&k);

    /* One argument short: Triton's scratch pointers are the usual cause. */
    launch.nb_args = 5;
    CHECK_ERR(kernel_from_desc(&d, pool, 90, "L", &io, &k), PRT_ERR_INVALID_ARGUMENT,
              "layer 'L': kernel 'kscale' (PTX for sm_90) takes 6 parameters, but its "
              "launch passes 5");
    launch.nb_args = 6;
    /* An int where the code takes a float. */
    args[3] = (prt_kernel_arg){PRT_KARG_INT32, 0, one, 0};
    CHECK_ERR(kernel_from_desc(&d, pool, 90, "L", &io, &k), PRT_ERR_INVALID_ARGUMENT,
              "parameter 3 is .f32 (4 bytes, aligned to 4), but the launch passes int32");
    args[3] = (prt_kernel_arg){PRT_KARG_FLOAT32, 0, NULL, 3.0};
    /* An expression from another build. */
    launch.block[0] = foreign;
    CHECK_ERR(kernel_from_desc(&d, pool, 90, "L", &io, &k), PRT_ERR_PLUGIN,
              "is not an expression of the builder get_kernel was given");
    launch.block[0] = expr_const(pool, 128);
    /* A code that claims another capability than its .target. */
    code.arch = 80;
    CHECK_ERR(kernel_from_desc(&d, pool, 90, "L", &io, &k), PRT_ERR_PLUGIN,
              "code 0 says sm_80, but its PTX is for sm_90");
    code.arch = 0;
    /* No entry of that name. */
    launch.entry = "missing";
    CHECK_ERR(kernel_from_desc(&d, pool, 90, "L", &io, &k), PRT_ERR_INVALID_ARGUMENT,
              "has no entry 'missing'");
    launch.entry = "kscale";
    /* An int32 argument without a value. */
    args[4].value = NULL;
    CHECK_ERR(kernel_from_desc(&d, pool, 90, "L", &io, &k), PRT_ERR_PLUGIN,
              "argument 4 (int32) has no value");
    expr_pool_destroy(pool);
    expr_pool_destroy(other);
    return 0;
}

int main(void)
{
    tu_watchdog("test_kernel_format", 300);
    test_round_trip();
    test_byte_flips();
    test_cross_references();
    test_cubin();
    test_cubin_capability();
    test_from_desc();
    return tu_finish("test_kernel_format");
}
