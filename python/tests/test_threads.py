"""C calls release the GIL: runs on several threads overlap, each thread
with its own context; Python plugins are called from those threads too."""

import threading
import time

import numpy as np
import pytest

import plugrt as trt

import plugins_for_tests  # noqa: F401
import plugrt.plugin as trtp


def matmul_engine(n):
    """A chain of built-in MatMuls heavy enough to take a while in C."""
    reg = trt.get_plugin_registry()
    b = trt.Builder()
    net = b.create_network()
    x = net.add_input("x", trt.float32, (n, n))
    w = net.add_constant((n, n), (np.eye(n, dtype=np.float32) * 0.5)).get_output(0)
    t = x
    for i in range(8):
        t = net.add_plugin_v3([t, w], [], reg.get_creator("MatMul", "1", "plugrt")
                              .create_plugin("mm%d" % i)).get_output(0)
    t.name = "y"
    net.mark_output(t)
    return b.build_engine_with_config(net)


def test_run_releases_the_gil():
    engine = matmul_engine(192)
    ctx = engine.create_execution_context()
    x = np.ones((192, 192), np.float32)
    ctx.run({"x": x})  # warm up
    t0 = time.perf_counter()
    ctx.run({"x": x})
    one = time.perf_counter() - t0
    inside = threading.Event()
    done = threading.Event()
    result = {}

    def runner():
        inside.set()
        for _ in range(max(1, int(0.3 / max(one, 1e-4)))):
            result["y"] = ctx.run({"x": x})["y"]
        done.set()

    th = threading.Thread(target=runner)
    count = 0
    th.start()
    inside.wait()
    t0 = time.perf_counter()
    while not done.is_set():
        count += 1
    elapsed = time.perf_counter() - t0
    th.join()
    assert np.allclose(result["y"], x * 0.5 ** 8)
    # With the GIL held through each C call, this thread would run only in
    # the gaps between calls; released, it spins the whole time.
    rate = count / elapsed
    t0 = time.perf_counter()
    n = 0
    while time.perf_counter() - t0 < 0.05:
        n += 1
    alone = n / (time.perf_counter() - t0)
    assert rate > 0.2 * alone, (rate, alone, elapsed)


@pytest.mark.parametrize("which", ["c", "python-class", "decorator"])
def test_threads_with_their_own_contexts(which, std_registry):
    b = trt.Builder(registry=std_registry if which == "c" else None)
    net = b.create_network()
    x = net.add_input("x", trt.float32, (-1, 16))
    if which == "c":
        c = std_registry.get_creator("CustomHardmax", "1", "")
        y = net.add_plugin_v3([x], [], c.create_plugin("h")).get_output(0)
        ref = lambda a: (a == a.max(axis=1, keepdims=True)).astype(np.float32)  # noqa: E731
    elif which == "python-class":
        y = net.add_plugin_v3([x], [], plugins_for_tests.ScalePlugin(3.0)).get_output(0)
        ref = lambda a: a * 3  # noqa: E731
    else:
        y = net.add_plugin(trtp.op.tests.twice(x, factor=3.0)).get_output(0)
        ref = lambda a: a * 3  # noqa: E731
    y.name = "y"
    net.mark_output(y)
    cfg = b.create_builder_config()
    p = b.create_optimization_profile()
    p.set_shape("x", (1, 16), (8, 16), (64, 16))
    cfg.add_optimization_profile(p)
    engine = b.build_engine_with_config(net, cfg)
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        ctx = engine.create_execution_context()
        for i in range(40):
            a = rng.standard_normal((1 + (seed + i) % 64, 16)).astype(np.float32)
            if not np.array_equal(ctx.run({"x": a})["y"], ref(a)):
                errors.append((seed, i))

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_one_context_on_two_threads_is_refused():
    """A context is per-thread state: a second thread entering a run of the
    same context gets StateError, never a corrupted run."""
    engine = matmul_engine(256)
    ctx = engine.create_execution_context()
    x = np.ones((256, 256), np.float32)
    refused = [0, 0]
    wrong = []
    barrier = threading.Barrier(2)

    def work(k):
        barrier.wait()
        for _ in range(30):
            try:
                y = ctx.run({"x": x})["y"]
                if not np.allclose(y, x * 0.5 ** 8):
                    wrong.append(k)
            except trt.StateError:
                refused[k] += 1

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong and sum(refused) >= 1


def test_intra_op_threads_change_no_result():
    """A context's intra-op thread count (0: the CPUs available) is what it
    runs with, and the results are the same bytes whatever it is."""
    reg = trt.get_plugin_registry()
    b = trt.Builder()
    net = b.create_network()
    x = net.add_input("x", trt.float32, (64, 4096))
    t = x
    for i, op in enumerate(("Erf", "Relu", "Softmax")):
        t = net.add_plugin_v3([t], [], reg.get_creator(op, "1", "plugrt")
                              .create_plugin("op%d" % i)).get_output(0)
    t.name = "y"
    net.mark_output(t)
    engine = b.build_engine_with_config(net)
    feed = {"x": np.random.default_rng(3).standard_normal((64, 4096)).astype(np.float32)}
    default = engine.create_execution_context()
    assert default.threads == trt._capi.fn.default_thread_count() >= 1
    ys = []
    for n in (1, 2, 3):
        ctx = engine.create_execution_context(threads=n)
        assert ctx.threads == n
        ys.append(ctx.run(feed)["y"])
    assert all(np.array_equal(ys[0], y) for y in ys[1:])
    with pytest.raises(trt.InvalidArgumentError):
        engine.create_execution_context(threads=-1)
