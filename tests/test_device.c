/*
 * The device interface (src/device) on the CPU, and what the runtime and
 * builder rely on it for: aligned memory, ordered copies and memsets,
 * events that time, size reads; a device that is not built in is a clear
 * error at every door (builder config, engine load).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "device/device.h"
#include "engine/engine_impl.h"
#include "testutil.h"

static void test_cpu_memory(void)
{
    const dev_ops *d = NULL;
    uint8_t *a = NULL, *b = NULL, *h = NULL;
    CHECK_OK(dev_get(PRT_DEVICE_CPU, &d));
    if (!d)
        return;
    CHECK(d->device == PRT_DEVICE_CPU && d->host_visible == 1);
    CHECK_OK(d->alloc(1000, (void **)&a));
    CHECK_OK(d->alloc(0, (void **)&b)); /* zero bytes is a valid, freeable buffer */
    CHECK_OK(d->alloc_host(64, (void **)&h));
    CHECK(a && b && h);
    if (!a || !b || !h)
        return;
    CHECK(((uintptr_t)a % DEV_ALIGN) == 0);
    CHECK(((uintptr_t)h % DEV_ALIGN) == 0);
    for (int i = 0; i < 64; i++)
        h[i] = (uint8_t)(i * 7 + 1);
    CHECK_OK(d->memset(a, 0xab, 1000, NULL));
    CHECK_OK(d->copy(a + 100, h, 64, DEV_COPY_H2D, NULL));
    CHECK(a[99] == 0xab && a[100] == 1 && a[163] == (uint8_t)(63 * 7 + 1) &&
          a[164] == 0xab);
    memset(h, 0, 64);
    CHECK_OK(d->copy(h, a + 100, 64, DEV_COPY_D2H, NULL));
    CHECK(h[5] == 36);
    CHECK_OK(d->copy(a, a + 100, 64, DEV_COPY_D2D, NULL));
    CHECK(a[0] == 1 && a[63] == (uint8_t)(63 * 7 + 1) && a[64] == 0xab);
    d->free(a);
    d->free(b);
    d->free(NULL);
    d->free_host(h);
    d->free_host(NULL);
}

static void test_cpu_streams_events(void)
{
    const dev_ops *d = &dev_cpu_ops;
    void *s = NULL, *e0 = NULL, *e1 = NULL;
    double ms = -1;
    volatile double x = 0;
    CHECK_OK(d->stream_create(&s));
    CHECK(s != NULL);
    CHECK_OK(d->event_create(&e0));
    CHECK_OK(d->event_create(&e1));
    CHECK_OK(d->event_record(e0, s));
    for (int i = 0; i < 2000000; i++)
        x += (double)i;
    CHECK_OK(d->event_record(e1, s));
    CHECK_OK(d->event_sync(e1));
    CHECK_OK(d->event_elapsed_ms(e0, e1, &ms));
    /* A measurable, plausible interval: not zero, not seconds. */
    CHECK(ms > 0 && ms < 5000);
    CHECK_OK(d->stream_sync(s));
    CHECK_OK(d->sync());
    d->event_destroy(e0);
    d->event_destroy(e1);
    d->event_destroy(NULL);
    d->stream_destroy(s);
}

static void test_read_size(void)
{
    int32_t a = 123456;
    int64_t b = (int64_t)1 << 40, v = 0;
    CHECK_OK(dev_read_i64(&dev_cpu_ops, &a, PRT_INT32, &v, NULL));
    CHECK(v == 123456);
    CHECK_OK(dev_read_i64(&dev_cpu_ops, &b, PRT_INT64, &v, NULL));
    CHECK(v == ((int64_t)1 << 40));
}

static void test_failure_is_clean(void)
{
    const dev_ops *d = &dev_cpu_ops;
    void *p = (void *)&p;
    void *ev = (void *)&ev;
    base_fail_alloc_after(0);
    CHECK_ERR(d->alloc(4096, &p), PRT_ERR_OUT_OF_MEMORY, "4096 bytes");
    CHECK(p == (void *)&p); /* untouched on failure */
    base_fail_alloc_after(0);
    CHECK_ERR(d->event_create(&ev), PRT_ERR_OUT_OF_MEMORY, "event");
    base_fail_alloc_after(-1);
    /* An absurd size fails cleanly, it does not abort. */
    CHECK_ERR(d->alloc(SIZE_MAX / 2, &p), PRT_ERR_OUT_OF_MEMORY, NULL);
}

/* CUDA is either usable (a GPU build on a GPU machine) or a clear
 * PRT_ERR_UNSUPPORTED naming cuda and the reason, at every door. */
static int cuda_usable(void)
{
    const dev_ops *d = NULL;
    prt_status st = dev_get(PRT_DEVICE_CUDA, &d);
    if (st == PRT_OK)
        return 1;
    CHECK(st == PRT_ERR_UNSUPPORTED && strstr(prt_last_error(), "cuda") != NULL);
    CHECK(d == NULL);
    return 0;
}

static void test_missing_device(void)
{
    const dev_ops *d = NULL;
    prt_builder_config *cfg = NULL;
    CHECK_OK(prt_builder_config_create(&cfg));
    if (!cuda_usable()) {
#ifndef PRT_HAVE_CUDA
        CHECK_ERR(dev_get(PRT_DEVICE_CUDA, &d), PRT_ERR_UNSUPPORTED, "no CUDA support");
#endif
        CHECK_ERR(prt_builder_config_set_device(cfg, PRT_DEVICE_CUDA),
                  PRT_ERR_UNSUPPORTED, "cuda");
    }
    CHECK_ERR(dev_get(7, &d), PRT_ERR_UNSUPPORTED, "device 7");
    CHECK_ERR(prt_builder_config_set_device(cfg, 9), PRT_ERR_INVALID_ARGUMENT, "9");
    prt_builder_config_destroy(cfg);
}

/* Device indices: the CPU is one device; CUDA either has its GPUs or says
 * why not. */
static void test_device_index(void)
{
    int32_t n = -1, cur = -1;
    CHECK_OK(prt_device_count(PRT_DEVICE_CPU, &n));
    CHECK(n == 1);
    CHECK_OK(prt_device_get_current(PRT_DEVICE_CPU, &cur));
    CHECK(cur == 0);
    CHECK_OK(prt_device_set_current(PRT_DEVICE_CPU, 0));
    CHECK_ERR(prt_device_set_current(PRT_DEVICE_CPU, 1), PRT_ERR_INVALID_ARGUMENT,
              "cpu has 1 device (index 0); there is no device 1");
    CHECK_ERR(prt_device_set_current(PRT_DEVICE_CPU, -1), PRT_ERR_INVALID_ARGUMENT,
              "no device -1");
    CHECK_ERR(prt_device_count(PRT_DEVICE_CPU, NULL), PRT_ERR_INVALID_ARGUMENT, "NULL");
    CHECK_ERR(prt_device_get_current(PRT_DEVICE_CPU, NULL), PRT_ERR_INVALID_ARGUMENT,
              "NULL");
    CHECK_ERR(prt_device_count(7, &n), PRT_ERR_UNSUPPORTED, "device 7");
    if (!cuda_usable()) {
        n = -1;
        CHECK_ERR(prt_device_count(PRT_DEVICE_CUDA, &n), PRT_ERR_UNSUPPORTED, "cuda");
        CHECK(n == -1);
        CHECK_ERR(prt_device_get_current(PRT_DEVICE_CUDA, &cur), PRT_ERR_UNSUPPORTED,
                  "cuda");
        CHECK_ERR(prt_device_set_current(PRT_DEVICE_CUDA, 0), PRT_ERR_UNSUPPORTED,
                  "cuda");
    }
}

/* An engine for CUDA read on a machine (build) without it: the loader says
 * what is missing instead of failing later. */
static void test_load_foreign_device(void)
{
    if (cuda_usable())
        return;
    {
        prt_registry *reg = tu_registry_with_plugins();
        const prt_dims d = {2, {2, 3}};
        tu_input_spec in = {"x", PRT_FLOAT32, &d, NULL, NULL, NULL};
        const char *outs[] = {"y"};
        tu_engine te;
        base_buf buf = {0};
        prt_engine *e2 = NULL;
        if (!reg)
            return;
        memset(&te, 0, sizeof te);
        CHECK_OK(tu_build_roundtrip(
            reg, tu_make_plugin(reg, "", "CustomHardmax", "1", NULL, 0), &in, 1, outs, 1,
            0, &te));
        if (te.built) {
            te.built->device = PRT_DEVICE_CUDA;
            CHECK_OK(engine_write(te.built, &buf));
            te.built->device = PRT_DEVICE_CPU;
            CHECK(!buf.failed);
            CHECK_ERR(prt_engine_deserialize(reg, buf.data, buf.size, &e2),
                      PRT_ERR_UNSUPPORTED, "targets cuda");
            CHECK(e2 == NULL);
        }
        base_buf_free(&buf);
        tu_engine_destroy(&te);
        prt_registry_destroy(reg);
    }
}

/* The optional sections of a GPU engine (DEVI: where it was built; HDIM:
 * layers needing host dims) round-trip, and damaged ones are refused. */
static void test_device_sections(void)
{
    prt_registry *reg = tu_registry_with_plugins();
    const prt_dims d = {2, {2, 3}};
    tu_input_spec in = {"x", PRT_FLOAT32, &d, NULL, NULL, NULL};
    const char *outs[] = {"y"};
    tu_engine te;
    base_buf buf = {0};
    prt_engine *r = NULL;
    if (!reg)
        return;
    memset(&te, 0, sizeof te);
    CHECK_OK(tu_build_roundtrip(reg,
                                tu_make_plugin(reg, "", "CustomHardmax", "1", NULL, 0),
                                &in, 1, outs, 1, 0, &te));
    if (te.built) {
        prt_engine *e = te.built;
        dev_info saved = e->built_on;
        e->device = PRT_DEVICE_CUDA;
        snprintf(e->built_on.name, sizeof e->built_on.name, "Test GPU \xc3\xa9");
        e->built_on.cc_major = 9;
        e->built_on.cc_minor = 0;
        e->layers[0].host_dims = 1;
        CHECK_OK(engine_write(e, &buf));
        CHECK_OK(engine_read(buf.data, buf.size, &r));
        if (r) {
            CHECK(r->device == PRT_DEVICE_CUDA);
            CHECK(strcmp(r->built_on.name, "Test GPU \xc3\xa9") == 0);
            CHECK(r->built_on.cc_major == 9 && r->built_on.cc_minor == 0);
            CHECK(r->layers[0].host_dims == 1);
            engine_free(r);
        }
        /* Without the flag the section is absent and the layer reads 0. */
        e->layers[0].host_dims = 0;
        base_buf_free(&buf);
        memset(&buf, 0, sizeof buf);
        CHECK_OK(engine_write(e, &buf));
        r = NULL;
        CHECK_OK(engine_read(buf.data, buf.size, &r));
        CHECK(r && r->layers[0].host_dims == 0);
        engine_free(r);
        /* Every truncation of the GPU engine is refused cleanly. */
        for (size_t n = 0; n < buf.size; n += 7) {
            r = NULL;
            CHECK(engine_read(buf.data, n, &r) != PRT_OK && r == NULL);
        }
        e->device = PRT_DEVICE_CPU;
        e->built_on = saved;
    }
    base_buf_free(&buf);
    tu_engine_destroy(&te);
    prt_registry_destroy(reg);
}

/* Query structs: the caller's struct_size is checked; I/O tensors say where
 * their memory lives. */
static void test_query_structs(void)
{
    prt_registry *reg = tu_registry_with_plugins();
    const prt_dims d = {2, {2, 3}};
    tu_input_spec in = {"x", PRT_FLOAT32, &d, NULL, NULL, NULL};
    const char *outs[] = {"y"};
    tu_engine te;
    if (!reg)
        return;
    memset(&te, 0, sizeof te);
    CHECK_OK(tu_build_roundtrip(reg,
                                tu_make_plugin(reg, "", "CustomHardmax", "1", NULL, 0),
                                &in, 1, outs, 1, 0, &te));
    if (te.engine) {
        prt_io_info io = {.struct_size = 8};
        prt_layer_info li = {.struct_size = 0};
        prt_tensor_info ti = {.struct_size = sizeof ti - 1};
        CHECK_ERR(prt_engine_get_io(te.engine, 0, &io), PRT_ERR_INVALID_ARGUMENT,
                  "sizeof(prt_io_info)");
        CHECK(io.name == NULL); /* untouched */
        CHECK_ERR(prt_engine_get_layer(te.engine, 0, &li), PRT_ERR_INVALID_ARGUMENT,
                  "sizeof(prt_layer_info)");
        CHECK_ERR(prt_engine_get_tensor(te.engine, 0, &ti), PRT_ERR_INVALID_ARGUMENT,
                  "sizeof(prt_tensor_info)");
        CHECK_ERR(prt_engine_get_io(te.engine, 0, NULL), PRT_ERR_INVALID_ARGUMENT,
                  "NULL");
        io.struct_size = sizeof io;
        for (int32_t i = 0; i < prt_engine_io_count(te.engine); i++) {
            CHECK_OK(prt_engine_get_io(te.engine, i, &io));
            CHECK(io.struct_size == sizeof io && io.location == PRT_LOCATION_HOST);
        }
        li.struct_size = sizeof li;
        CHECK_OK(prt_engine_get_layer(te.engine, 0, &li));
        CHECK(li.struct_size == sizeof li &&
              strcmp(li.plugin_name, "CustomHardmax") == 0);
    }
    tu_engine_destroy(&te);
    prt_registry_destroy(reg);
}

int main(void)
{
    test_cpu_memory();
    test_cpu_streams_events();
    test_read_size();
    test_failure_is_clean();
    test_missing_device();
    test_device_index();
    test_load_foreign_device();
    test_device_sections();
    test_query_structs();
    return tu_finish("test_device");
}
