/*
 * A context's device (context_impl.h, ctx_device_enter): every call that
 * queues work or allocates checks that the calling thread's current device
 * is the context's, and fails naming both, or with switch_device makes it
 * current and puts the caller's back. The CPU has one device, so here the
 * CPU's implementation is wrapped in one that reports several and whose
 * "current device" the test sets; tests/cuda/test_cuda_runtime.c does the
 * same on a GPU.
 */
#include <string.h>

#include "engine/engine_impl.h"
#include "op_testutil.h"
#include "runtime/context_impl.h"

static int32_t fake_current, fake_sets, fake_fail_set;

static prt_status fake_get_current(int32_t *out)
{
    *out = fake_current;
    return PRT_OK;
}

static prt_status fake_set_current(int32_t index)
{
    if (fake_fail_set)
        return base_error(PRT_ERR_UNSUPPORTED, "no device %d here", (int)index);
    fake_current = index;
    fake_sets++;
    return PRT_OK;
}

static prt_status fake_count(int32_t *out)
{
    *out = 2;
    return PRT_OK;
}

static int run_once(prt_context *c, const ot_tensor *x, ot_tensor *y)
{
    return prt_context_set_tensor_address(c, "X0", x->data) == PRT_OK &&
           prt_context_set_tensor_address(c, "Y", y->data) == PRT_OK &&
           prt_context_enqueue(c, NULL) == PRT_OK;
}

int main(void)
{
    tu_rng r;
    dev_ops fake = dev_cpu_ops;
    ot_tensor x, y;
    prt_engine *e = NULL;
    prt_context *c = NULL;
    prt_context_options sw = {.struct_size = sizeof sw, .switch_device = 1};
    const dev_ops *real;
    tu_rng_seed(&r, 7);
    fake.get_current = fake_get_current;
    fake.set_current = fake_set_current;
    fake.count = fake_count;
    x = ot_random(PRT_FLOAT32, D2(3, 5), &r, 0);
    y = ot_make(PRT_FLOAT32, D2(3, 5));
    if (ot_build_op("Relu", NULL, 0, &x, 1, NULL, &e) != PRT_OK)
        return tu_finish("test_context_device");
    CHECK(prt_engine_get_device_index(e) == 0);
    CHECK(prt_engine_get_device_index(NULL) == 0);
    real = e->dev;

    /* The engine "on device 1" of a kind with two, the thread on 0: a
     * context can be neither made nor run there. */
    e->dev = &fake;
    e->device_index = 1;
    fake_current = 0;
    CHECK_ERR(prt_context_create(e, &c), PRT_ERR_STATE, "device 1");
    CHECK(strstr(prt_last_error(), "current cpu device is 0") != NULL);
    CHECK(c == NULL);

    /* Made on its device, then used from a thread on the other. */
    fake_current = 1;
    CHECK_OK(prt_context_create(e, &c));
    CHECK(c && c->device_index == 1);
    fake_current = 0;
    fake_sets = 0;
    CHECK(!run_once(c, &x, &y));
    CHECK(strstr(prt_last_error(), "prt_context_enqueue") != NULL);
    CHECK(strstr(prt_last_error(), "device 1") != NULL);
    CHECK(strstr(prt_last_error(), "device is 0") != NULL);
    CHECK(fake_sets == 0 && fake_current == 0);
    /* Its destroy goes to its device and back. */
    prt_context_destroy(c);
    CHECK(fake_sets == 2 && fake_current == 0);
    c = NULL;

    /* switch_device: made and run from the other device, which is current
     * again after each call; the results are the CPU's. */
    fake_sets = 0;
    CHECK_OK(prt_context_create_with_options(e, &sw, &c));
    CHECK(fake_current == 0 && fake_sets == 2);
    memset(y.data, 0xff, sizeof(float) * 15);
    CHECK(c && run_once(c, &x, &y));
    CHECK(fake_current == 0 && fake_sets == 4);
    for (int64_t i = 0; i < 15; i++) {
        double v = ot_get(&x, i);
        CHECK(ot_get(&y, i) == (v < 0 ? 0 : v));
    }
    /* A device that cannot be made current fails the call, cleanly. */
    fake_fail_set = 1;
    CHECK_ERR(prt_context_enqueue(c, NULL), PRT_ERR_UNSUPPORTED, "no device 1 here");
    CHECK(strstr(prt_last_error(), "prt_context_enqueue") != NULL);
    fake_fail_set = 0;
    /* On its own device nothing is switched. */
    fake_current = 1;
    fake_sets = 0;
    CHECK(run_once(c, &x, &y));
    CHECK(fake_sets == 0 && fake_current == 1);
    prt_context_destroy(c);

    e->dev = real;
    e->device_index = 0;
    prt_engine_destroy(e);
    ot_free(&x);
    ot_free(&y);
    return tu_finish("test_context_device");
}
