/*
 * CPU fallback inside an engine for another device, the parts that need no
 * GPU (the GPU runs are tests/cuda/test_cuda_fallback.c): the builder
 * option's arguments, the plan of host copies and copies derived from the
 * layers' devices (engine_derive_fallback), what inspection reports of it,
 * and the validation of a layer's device in a file.
 *
 * A CUDA engine cannot be built here, so the engine is a CPU build whose
 * devices are altered before it is written, as a CUDA build with fallback
 * would have set them.
 */
#include <string.h>

#include "engine/engine_impl.h"
#include "plan_bytes.h"
#include "testutil.h"

#define N 4 /* elements of every tensor: [4] float */

static prt_plugin *builtin_op(const char *op)
{
    const prt_plugin_creator *c = NULL;
    prt_field_collection none = {0, NULL};
    prt_plugin *p = NULL;
    if (prt_builtin_find_creator(op, "1", &c) != PRT_OK ||
        c->create(c, op, &none, PRT_PHASE_BUILD, &p) != PRT_OK)
        return NULL;
    return p;
}

/* X -> Relu a -> Relu b -> Relu c -> Relu d -> Y, built for the CPU (with
 * the fallback option on, which a CPU build ignores). */
static prt_engine *build_chain(void)
{
    prt_network *net = NULL;
    prt_builder_config *cfg = NULL;
    prt_engine *e = NULL;
    prt_dims d = {1, {N}};
    const char *names[] = {"a", "b", "c", "d"};
    int32_t t, layer;
    prt_status st = prt_network_create(&net);
    if (!st)
        st = prt_network_add_input(net, "X", PRT_FLOAT32, &d, &t);
    for (int i = 0; i < 4 && !st; i++) {
        prt_plugin *p = builtin_op("Relu");
        st =
            p ? prt_network_add_plugin(net, &t, 1, NULL, 0, p, &layer) : PRT_ERR_INTERNAL;
        if (!st)
            st = prt_network_set_layer_name(net, layer, names[i]);
        if (!st)
            st = prt_network_get_layer_output(net, layer, 0, &t);
        if (!st)
            st = prt_network_set_tensor_name(net, t, i == 3 ? "Y" : names[i]);
    }
    if (!st)
        st = prt_network_mark_output(net, t);
    if (!st)
        st = prt_builder_config_create(&cfg);
    if (!st)
        st = prt_builder_config_set_cpu_fallback(cfg, 1);
    if (!st)
        st = prt_engine_build(net, cfg, NULL, &e);
    CHECK_OK(st);
    prt_builder_config_destroy(cfg);
    prt_network_destroy(net);
    return e;
}

static void test_config(void)
{
    prt_builder_config *cfg = NULL;
    CHECK_ERR(prt_builder_config_set_cpu_fallback(NULL, 1), PRT_ERR_INVALID_ARGUMENT,
              "cfg is NULL");
    CHECK_OK(prt_builder_config_create(&cfg));
    CHECK_ERR(prt_builder_config_set_cpu_fallback(cfg, 2), PRT_ERR_INVALID_ARGUMENT,
              "0 or 1");
    CHECK_OK(prt_builder_config_set_cpu_fallback(cfg, 0));
    prt_builder_config_destroy(cfg);
}

/* Writes e with the engine's device and the layers' devices `devs`, reads
 * it back and validates it; the status of that, *out the engine read. */
static prt_status roundtrip(prt_engine *e, int32_t device, const int32_t *devs,
                            base_buf *buf, prt_engine **out)
{
    int32_t saved = e->device, saved_l[4];
    prt_status st;
    e->device = device;
    for (int i = 0; i < 4; i++) {
        saved_l[i] = e->layers[i].device;
        e->layers[i].device = devs[i];
    }
    memset(buf, 0, sizeof *buf);
    st = engine_write(e, buf);
    e->device = saved;
    for (int i = 0; i < 4; i++)
        e->layers[i].device = saved_l[i];
    *out = NULL;
    if (st || buf->failed)
        return st ? st : PRT_ERR_OUT_OF_MEMORY;
    st = engine_read(buf->data, buf->size, out);
    if (!st)
        st = engine_validate(*out);
    return st;
}

/* Layers b and c on the CPU between a and d on CUDA: b copies its input
 * from the device, c copies its output back for d, and nothing moves
 * between b and c. */
static void test_plan_middle(prt_engine *e)
{
    const int32_t devs[4] = {PRT_DEVICE_CUDA, PRT_DEVICE_CPU, PRT_DEVICE_CPU,
                             PRT_DEVICE_CUDA};
    base_buf buf;
    prt_engine *r = NULL, *u = NULL;
    const int64_t bytes = N * (int64_t)sizeof(float);
    CHECK_OK(roundtrip(e, PRT_DEVICE_CUDA, devs, &buf, &r));
    if (r && engine_derive(r) == PRT_OK) {
        const eng_layer *b = &r->layers[1], *c = &r->layers[2];
        CHECK(r->nb_host_layers == 2);
        CHECK(r->layers[0].fetch == NULL && r->layers[3].push == NULL);
        CHECK(b->fetch && b->fetch[0] == 1 && b->push && b->push[0] == 0);
        CHECK(c->fetch && c->fetch[0] == 0 && c->push && c->push[0] == 1);
        /* The host copies: a (read by b), b (shared by b and c), c (written
         * by c); none for X and Y, which no CPU layer touches. */
        CHECK(r->tensors[b->inputs[0]].host_offset >= 0);
        CHECK(r->tensors[b->outputs[0]].host_offset >= 0);
        CHECK(r->tensors[c->outputs[0]].host_offset >= 0);
        CHECK(r->tensors[r->input_tensors[0]].host_offset == -1);
        CHECK(r->tensors[r->output_tensors[0]].host_offset == -1);
        CHECK(r->host_size >= 3 * bytes && r->host_size % ENG_ARENA_ALIGN == 0);
    }
    engine_free(r);
    /* What inspection reports of it, from the bytes alone. */
    CHECK_OK(prt_engine_deserialize_unresolved(buf.data, buf.size, &u));
    if (u) {
        prt_layer_info li = {.struct_size = sizeof li};
        const int64_t want_in[4] = {0, bytes, 0, 0}, want_out[4] = {0, 0, bytes, 0};
        for (int32_t i = 0; i < 4; i++) {
            CHECK_OK(prt_engine_get_layer(u, i, &li));
            CHECK(li.device == devs[i]);
            CHECK(li.copy_to_host_bytes == want_in[i]);
            CHECK(li.copy_to_device_bytes == want_out[i]);
        }
    }
    prt_engine_destroy(u);
    base_buf_free(&buf);
}

/* Every layer on the CPU: the network input comes from the device before
 * the first, the engine output goes back after the last. */
static void test_plan_whole(prt_engine *e)
{
    const int32_t devs[4] = {PRT_DEVICE_CPU, PRT_DEVICE_CPU, PRT_DEVICE_CPU,
                             PRT_DEVICE_CPU};
    base_buf buf;
    prt_engine *r = NULL;
    CHECK_OK(roundtrip(e, PRT_DEVICE_CUDA, devs, &buf, &r));
    if (r && engine_derive(r) == PRT_OK) {
        CHECK(r->nb_host_layers == 4);
        CHECK(r->layers[0].fetch[0] == 1 && r->layers[0].push[0] == 0);
        CHECK(r->layers[1].fetch[0] == 0 && r->layers[2].push[0] == 0);
        CHECK(r->layers[3].fetch[0] == 0 && r->layers[3].push[0] == 1);
        CHECK(r->tensors[r->input_tensors[0]].host_offset >= 0);
        CHECK(r->tensors[r->output_tensors[0]].host_offset >= 0);
    }
    engine_free(r);
    base_buf_free(&buf);
}

/* A file whose layer runs on CUDA inside a CPU engine is refused, naming
 * the layer; a CPU engine plans nothing. */
static void test_validate(prt_engine *e)
{
    const int32_t bad[4] = {PRT_DEVICE_CPU, PRT_DEVICE_CUDA, PRT_DEVICE_CPU,
                            PRT_DEVICE_CPU};
    const int32_t unknown[4] = {PRT_DEVICE_CPU, 7, PRT_DEVICE_CPU, PRT_DEVICE_CPU};
    base_buf buf;
    prt_engine *r = NULL;
    CHECK(e->nb_host_layers == 0 && e->host_size == 0);
    for (int i = 0; i < 4; i++)
        CHECK(e->layers[i].device == PRT_DEVICE_CPU && e->layers[i].fetch == NULL);
    const int32_t mixed[4] = {PRT_DEVICE_CUDA, PRT_DEVICE_CPU, PRT_DEVICE_CPU,
                              PRT_DEVICE_CUDA};
    prt_engine *u = NULL;
    /* The writer refuses it... */
    CHECK_ERR(roundtrip(e, PRT_DEVICE_CPU, bad, &buf, &r), PRT_ERR_INTERNAL,
              "layer 1 ('b') runs on cuda in an engine for cpu");
    engine_free(r);
    base_buf_free(&buf);
    /* ... and the reader, of a valid mixed CUDA engine whose header then
     * says CPU (behind a fixed checksum). */
    CHECK_OK(roundtrip(e, PRT_DEVICE_CUDA, mixed, &buf, &r));
    engine_free(r);
    if (!buf.failed && buf.data) {
        uint8_t *p = buf.data;
        tu_put32(p + tu_plan_section_count_at(p) - 4, PRT_DEVICE_CPU);
        tu_plan_fix_crc(p, buf.size);
        CHECK_ERR(prt_engine_deserialize_unresolved(p, buf.size, &u), PRT_ERR_MALFORMED,
                  "layer 0 ('a') runs on cuda in an engine for cpu");
        CHECK(u == NULL);
    }
    base_buf_free(&buf);
    CHECK(roundtrip(e, PRT_DEVICE_CUDA, unknown, &buf, &r) != PRT_OK);
    engine_free(r);
    base_buf_free(&buf);
}

int main(void)
{
    prt_engine *e;
    test_config();
    e = build_chain();
    if (e) {
        test_plan_middle(e);
        test_plan_whole(e);
        test_validate(e);
    }
    prt_engine_destroy(e);
    return tu_finish("test_cpu_fallback");
}
