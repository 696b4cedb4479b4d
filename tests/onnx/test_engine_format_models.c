/*
 * The engine-format tests' crafted plans, on real models: MobileNet-v3-small
 * and BERT-small (../shared/models) built into CPU plans with a profile
 * wider than one shape, then altered behind a valid checksum one field at a
 * time (engine_check_layers, src/engine/check_layers.c, is what refuses):
 *  - each layer's workspace claim lowered by one byte, META's total lowered
 *    with it so the file stays consistent: refused at load, naming the
 *    layer, its op, the claim and the need; and every claim halved at once,
 *    as the attack was found;
 *  - each layer's claim raised one byte past its op's need (META with it),
 *    and one layer's to 8 GiB: refused;
 *  - each tensor's format flipped, CHW8 to LINEAR and LINEAR to CHW8, one
 *    at a time: refused, or, where every layer that touches it takes it at
 *    the same workspace, run at the profile's largest shapes and compared
 *    with the intact plan.
 * A plan that loads against expectation is run as well, so that the
 * sanitizer build shows what it would have done to a context.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine_impl.h"
#include "plan_bytes.h"
#include "plugrt/onnx.h"
#include "testutil.h"

#define MAX_INPUTS 2
#define MAX_OUTPUTS 2

typedef struct model_case {
    const char *file;
    int32_t nb_inputs;
    const char *input[MAX_INPUTS];
    prt_dims min[MAX_INPUTS], opt[MAX_INPUTS], max[MAX_INPUTS];
} model_case;

/* The intact plan and what it computes at the profile's largest shapes. */
typedef struct model_plan {
    const model_case *mc;
    uint8_t *bytes; /* prt_free */
    size_t size;
    prt_engine *e; /* the intact plan, loaded: its layers and tensors */
    void *in[MAX_INPUTS];
    int32_t nb_outputs;
    const char *out_name[MAX_OUTPUTS];
    int64_t out_count[MAX_OUTPUTS];
    float *ref[MAX_OUTPUTS];
} model_plan;

static int build_plan(const model_case *mc, model_plan *mp)
{
    char path[1024];
    prt_onnx_parser *parser = NULL;
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL;
    int32_t profile;
    void *bytes = NULL;
    snprintf(path, sizeof path, "%s/models/%s", PRT_SHARED_DIR, mc->file);
    if (access(path, R_OK) != 0) {
        printf("%s: not present; skipped\n", path); /* as test_onnx_import does */
        return 1;
    }
    REQUIRE_OK(prt_onnx_parser_create(NULL, &parser));
    CHECK_OK(prt_onnx_parser_parse_file(parser, path, &net));
    prt_onnx_parser_destroy(parser);
    REQUIRE(net);
    CHECK_OK(prt_builder_config_create(&cfg));
    CHECK_OK(prt_builder_config_add_profile(cfg, &profile));
    for (int32_t i = 0; i < mc->nb_inputs; i++)
        CHECK_OK(prt_builder_config_set_profile_dims(
            cfg, profile, mc->input[i], &mc->min[i], &mc->opt[i], &mc->max[i]));
    CHECK_OK(prt_engine_build(net, cfg, NULL, &e));
    if (e)
        CHECK_OK(prt_engine_serialize(e, &bytes, &mp->size));
    prt_engine_destroy(e);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    REQUIRE(bytes);
    mp->bytes = bytes;
    mp->mc = mc;
    return 0;
}

/* Seeded inputs at the profile's largest shapes: the image in [-1, 1),
 * token ids in [0, 100), an attention mask with its last tokens masked. */
static int make_inputs(model_plan *mp)
{
    tu_rng r;
    tu_rng_seed(&r, 0x5afe);
    for (int32_t i = 0; i < mp->mc->nb_inputs; i++) {
        const int64_t n = tu_volume(&mp->mc->max[i]);
        const char *name = mp->mc->input[i];
        if (strcmp(name, "image") == 0) {
            float *x = malloc(sizeof *x * (size_t)n);
            REQUIRE(x);
            for (int64_t k = 0; k < n; k++)
                x[k] = (float)(2.0 * tu_rng_uniform(&r) - 1.0);
            mp->in[i] = x;
        } else {
            const int64_t seq = mp->mc->max[i].d[1];
            int64_t *x = malloc(sizeof *x * (size_t)n);
            REQUIRE(x);
            for (int64_t k = 0; k < n; k++)
                x[k] = strcmp(name, "attention_mask") == 0 ? k % seq < seq - 3
                                                           : tu_rng_range(&r, 0, 99);
            mp->in[i] = x;
        }
    }
    return 0;
}

/* Runs e at the profile's largest shapes; out[k] gets output k (malloc'd,
 * the caller frees). PRT_OK or the failing call's status. */
static prt_status run_plan(const model_plan *mp, const prt_engine *e,
                           float *out[MAX_OUTPUTS])
{
    prt_context_options opts = {.struct_size = sizeof opts, .threads = 2};
    prt_context *ctx = NULL;
    prt_status st = prt_context_create_with_options(e, &opts, &ctx);
    for (int32_t k = 0; k < MAX_OUTPUTS; k++)
        out[k] = NULL;
    for (int32_t i = 0; !st && i < mp->mc->nb_inputs; i++) {
        st = prt_context_set_input_shape(ctx, mp->mc->input[i], &mp->mc->max[i]);
        if (!st)
            st = prt_context_set_tensor_address(ctx, mp->mc->input[i], mp->in[i]);
    }
    for (int32_t k = 0; !st && k < mp->nb_outputs; k++) {
        out[k] = malloc(sizeof(float) * (size_t)mp->out_count[k]);
        st = out[k] ? prt_context_set_tensor_address(ctx, mp->out_name[k], out[k])
                    : PRT_ERR_OUT_OF_MEMORY;
    }
    if (!st)
        st = prt_context_enqueue(ctx, NULL);
    prt_context_destroy(ctx);
    return st;
}

static void free_outputs(float *out[MAX_OUTPUTS])
{
    for (int32_t k = 0; k < MAX_OUTPUTS; k++)
        free(out[k]);
}

/* Loads the intact plan, learns its outputs and computes the reference. */
static int load_intact(model_plan *mp)
{
    prt_context *ctx = NULL;
    REQUIRE(!make_inputs(mp));
    REQUIRE_OK(prt_engine_deserialize(NULL, mp->bytes, mp->size, &mp->e));
    REQUIRE_OK(prt_context_create(mp->e, &ctx));
    for (int32_t i = 0; i < mp->mc->nb_inputs; i++)
        CHECK_OK(prt_context_set_input_shape(ctx, mp->mc->input[i], &mp->mc->max[i]));
    mp->nb_outputs = mp->e->nb_outputs;
    REQUIRE(mp->nb_outputs <= MAX_OUTPUTS);
    for (int32_t k = 0; k < mp->nb_outputs; k++) {
        const eng_tensor *t = &mp->e->tensors[mp->e->output_tensors[k]];
        prt_dims d;
        REQUIRE(t->dtype == PRT_FLOAT32);
        mp->out_name[k] = t->name;
        CHECK_OK(prt_context_get_tensor_shape(ctx, t->name, &d));
        mp->out_count[k] = tu_volume(&d);
    }
    prt_context_destroy(ctx);
    REQUIRE_OK(run_plan(mp, mp->e, mp->ref));
    return 0;
}

/* Within 1e-4 of the largest reference magnitude, as tests/models does:
 * the CHW8 and LINEAR kernels add in different orders. */
static int same_results(const model_plan *mp, float *got[MAX_OUTPUTS], const char *what)
{
    for (int32_t k = 0; k < mp->nb_outputs; k++) {
        double scale = 0;
        for (int64_t i = 0; i < mp->out_count[k]; i++)
            scale = fmax(scale, fabs(mp->ref[k][i]));
        for (int64_t i = 0; i < mp->out_count[k]; i++)
            if (!(fabs((double)got[k][i] - mp->ref[k][i]) <= 1e-4 * scale)) {
                fprintf(stderr, "%s: %s: output '%s'[%lld] is %g, the intact plan's %g\n",
                        mp->mc->file, what, mp->out_name[k], (long long)i,
                        (double)got[k][i], (double)mp->ref[k][i]);
                return 0;
            }
    }
    return 1;
}

/* One field changed in place (8 bytes at `at`, or 4 with `narrow`). */
typedef struct patch {
    size_t at;
    int64_t value;
    int narrow;
} patch;

/* Loads the plan with the patches applied (checksum fixed), then puts the
 * bytes back. *out the engine, or NULL; the status. */
static prt_status load_patched(model_plan *mp, const patch *p, int n, prt_engine **out)
{
    uint64_t old[4];
    prt_status st;
    for (int i = 0; i < n; i++) {
        old[i] =
            p[i].narrow ? tu_get32(mp->bytes + p[i].at) : tu_get64(mp->bytes + p[i].at);
        if (p[i].narrow)
            tu_put32(mp->bytes + p[i].at, (uint32_t)p[i].value);
        else
            tu_put64(mp->bytes + p[i].at, (uint64_t)p[i].value);
    }
    tu_plan_fix_crc(mp->bytes, mp->size);
    *out = NULL;
    base_clear_error();
    st = prt_engine_deserialize(NULL, mp->bytes, mp->size, out);
    /* The checksum is fixed by the next load (a 10 MB plan's CRC is most
     * of a load's time). */
    for (int i = n - 1; i >= 0; i--) {
        if (p[i].narrow)
            tu_put32(mp->bytes + p[i].at, (uint32_t)old[i]);
        else
            tu_put64(mp->bytes + p[i].at, old[i]);
    }
    return st;
}

/* The patches must be refused with a message holding `sub`; a plan that
 * loads is run, so that a sanitizer build shows what it does. */
static void expect_refused(model_plan *mp, const patch *p, int n, const char *sub,
                           const char *what)
{
    prt_engine *e = NULL;
    prt_status st = load_patched(mp, p, n, &e);
    tu_checks++;
    if (st != PRT_ERR_MALFORMED || !strstr(prt_last_error(), sub)) {
        tu_failures++;
        fprintf(stderr,
                "%s: %s: deserialize gave %s, wanted PRT_ERR_MALFORMED with \"%s\"\n"
                "    message: %s\n",
                mp->mc->file, what, prt_status_name(st), sub, prt_last_error());
    }
    if (e) {
        float *got[MAX_OUTPUTS];
        st = run_plan(mp, e, got);
        fprintf(stderr, "    the altered plan %s\n",
                st                            ? "fails to run"
                : same_results(mp, got, what) ? "runs"
                                              : "computes wrong values");
        free_outputs(got);
        prt_engine_destroy(e);
    }
}

/* The largest claim once layer li claims `claim`. */
static int64_t total_with(const prt_engine *e, int32_t li, int64_t claim)
{
    int64_t m = 0;
    for (int32_t i = 0; i < e->nb_layers; i++) {
        int64_t w = i == li ? claim : e->layers[i].workspace;
        m = w > m ? w : m;
    }
    return m;
}

/* Each claim lowered by a byte, then all halved; each raised by a byte,
 * then one to 8 GiB. META's total follows, as an attacker's would. */
static int test_claims(model_plan *mp)
{
    const prt_engine *e = mp->e;
    const size_t meta = tu_plan_section_at(mp->bytes, TU_TAG('M', 'E', 'T', 'A')) + 8;
    int lowered = 0;
    char sub[512], what[300];
    REQUIRE(meta > 8 && (int64_t)tu_get64(mp->bytes + meta) == e->workspace_size);
    for (int32_t li = 0; li < e->nb_layers; li++) {
        const eng_layer *l = &e->layers[li];
        const size_t at = tu_plan_layer_workspace(mp->bytes, (uint32_t)li);
        const int64_t w = l->workspace;
        patch p[2] = {{at, 0, 0}, {meta, 0, 0}};
        REQUIRE(at && (int64_t)tu_get64(mp->bytes + at) == w);
        snprintf(what, sizeof what, "layer %d ('%s') claiming %lld", (int)li, l->name,
                 (long long)(w + 1));
        snprintf(sub, sizeof sub,
                 "layer %d ('%s', op %s): claims %lld bytes of workspace, more than the "
                 "%lld its op can need",
                 (int)li, l->name, l->plugin_name, (long long)(w + 1), (long long)w);
        p[0].value = w + 1;
        p[1].value = total_with(e, li, w + 1);
        expect_refused(mp, p, 2, sub, what);
        if (w == 0)
            continue;
        lowered++;
        snprintf(what, sizeof what, "layer %d ('%s') claiming %lld", (int)li, l->name,
                 (long long)(w - 1));
        snprintf(sub, sizeof sub,
                 "layer %d ('%s', op %s): claims %lld bytes of workspace, less than the "
                 "%lld its op asks for",
                 (int)li, l->name, l->plugin_name, (long long)(w - 1), (long long)w);
        p[0].value = w - 1;
        p[1].value = total_with(e, li, w - 1);
        expect_refused(mp, p, 2, sub, what);
    }
    printf("%s: %d layers, %d with workspace: each claim lowered and raised, refused\n",
           mp->mc->file, (int)e->nb_layers, lowered);
    REQUIRE(lowered > 0);

    /* Every claim halved, META's total too: the first layer with
     * workspace is named. */
    {
        uint64_t *old = calloc((size_t)e->nb_layers + 1, sizeof *old);
        const patch p = {meta, e->workspace_size / 2, 0};
        prt_engine *r = NULL;
        int32_t first = -1;
        REQUIRE(old);
        for (int32_t li = 0; li < e->nb_layers; li++) {
            const size_t at = tu_plan_layer_workspace(mp->bytes, (uint32_t)li);
            old[li] = tu_get64(mp->bytes + at);
            tu_put64(mp->bytes + at, (uint64_t)(e->layers[li].workspace / 2));
            if (first < 0 && e->layers[li].workspace > 0)
                first = li;
        }
        snprintf(sub, sizeof sub, "layer %d ('%s', op %s): claims %lld bytes", (int)first,
                 e->layers[first].name, e->layers[first].plugin_name,
                 (long long)(e->layers[first].workspace / 2));
        expect_refused(mp, &p, 1, sub, "every claim halved");
        for (int32_t li = 0; li < e->nb_layers; li++)
            tu_put64(mp->bytes + tu_plan_layer_workspace(mp->bytes, (uint32_t)li),
                     old[li]);
        CHECK_OK(load_patched(mp, NULL, 0, &r)); /* intact again */
        prt_engine_destroy(r);
        free(old);
    }

    /* Unbounded above: 8 GiB for the first layer, and as the total. */
    {
        const int64_t big = (int64_t)8 << 30;
        patch p[2] = {{tu_plan_layer_workspace(mp->bytes, 0), big, 0}, {meta, big, 0}};
        snprintf(sub, sizeof sub, "layer 0 ('%s', op %s): claims %lld bytes of workspace",
                 e->layers[0].name, e->layers[0].plugin_name, (long long)big);
        expect_refused(mp, p, 2, sub, "layer 0 claiming 8 GiB");
    }
    return 0;
}

/* Every CHW8 tensor made LINEAR and every LINEAR one that CHW8 may label
 * (float32, rank 3 or more, inside the engine) made CHW8, one at a time;
 * other tensors are refused CHW8 by engine_validate (test_engine_format). */
static int test_formats(model_plan *mp)
{
    const prt_engine *e = mp->e;
    int refused = 0, accepted = 0, chw8 = 0, flipped = 0;
    for (int32_t t = 0; t < e->nb_tensors; t++) {
        const eng_tensor *x = &e->tensors[t];
        const int32_t to =
            x->format == PRT_FORMAT_CHW8 ? PRT_FORMAT_LINEAR : PRT_FORMAT_CHW8;
        tu_plan_tensor rec;
        patch p;
        prt_engine *r = NULL;
        prt_status st;
        char what[300];
        REQUIRE(tu_plan_tensor_fields(mp->bytes, (uint32_t)t, &rec));
        REQUIRE((int32_t)tu_get32(mp->bytes + rec.format) == x->format);
        chw8 += x->format == PRT_FORMAT_CHW8;
        if (x->format != PRT_FORMAT_CHW8 &&
            (x->dtype != PRT_FLOAT32 || x->nb_dims < 3 || x->input_index >= 0 ||
             x->output_index >= 0 || x->const_offset >= 0))
            continue;
        flipped++;
        snprintf(what, sizeof what, "tensor %d ('%s') made %s", (int)t, x->name,
                 to == PRT_FORMAT_CHW8 ? "CHW8" : "LINEAR");
        p = (patch){rec.format, to, 1};
        st = load_patched(mp, &p, 1, &r);
        tu_checks++;
        if (st == PRT_ERR_MALFORMED && prt_last_error()[0]) {
            refused++;
        } else if (st == PRT_OK) {
            float *got[MAX_OUTPUTS];
            /* Loaded: the file is still true, so the plan must compute what
             * the intact one does. */
            accepted++;
            st = run_plan(mp, r, got);
            if (st || !same_results(mp, got, what)) {
                tu_failures++;
                fprintf(stderr, "%s: %s loads but %s\n    message: %s\n", mp->mc->file,
                        what, st ? "fails to run" : "computes wrong values",
                        st ? prt_last_error() : "");
            }
            free_outputs(got);
        } else {
            tu_failures++;
            fprintf(stderr, "%s: %s: deserialize gave %s\n    message: %s\n",
                    mp->mc->file, what, prt_status_name(st), prt_last_error());
        }
        prt_engine_destroy(r);
    }
    printf("%s: %d tensors, %d CHW8; %d formats flipped: %d refused, %d accepted "
           "and computed the intact plan's results\n",
           mp->mc->file, (int)e->nb_tensors, chw8, flipped, refused, accepted);
    CHECK(flipped > 0 && refused + accepted == flipped);
    return 0;
}

static void free_plan(model_plan *mp)
{
    prt_engine_destroy(mp->e);
    prt_free(mp->bytes);
    for (int32_t i = 0; i < MAX_INPUTS; i++)
        free(mp->in[i]);
    free_outputs(mp->ref);
}

static int test_model(const model_case *mc)
{
    model_plan mp;
    memset(&mp, 0, sizeof mp);
    if (!build_plan(mc, &mp) && !load_intact(&mp)) {
        test_claims(&mp);
        test_formats(&mp);
    }
    free_plan(&mp);
    return 0;
}

int main(void)
{
    static const model_case cases[] = {
        {"mobilenet_v3_small.onnx",
         1,
         {"image"},
         {{4, {1, 3, 224, 224}}},
         {{4, {1, 3, 224, 224}}},
         {{4, {2, 3, 224, 224}}}},
        {"bert_small.onnx",
         2,
         {"input_ids", "attention_mask"},
         {{2, {1, 1}}, {2, {1, 1}}},
         {{2, {1, 16}}, {2, {1, 16}}},
         {{2, {2, 32}}, {2, {2, 32}}}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        test_model(&cases[i]);
    return tu_finish("test_engine_format_models");
}
