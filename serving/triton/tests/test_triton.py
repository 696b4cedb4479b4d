"""The plugrt backend in a real Triton Inference Server (tritonserver 2.51.0,
as nvidia-pytriton 0.7.0 bundles it): a temporary model repository with the
seed models from ../shared/models, served on 127.0.0.1, every output
checked against the models' .data references.

    python test_triton.py --backend-dir DIR --plugrt PLUGRT --plugins LIB.so \
        --testlib testlib_argmin.so --meetlib testlib_meet.so \
        --models ../shared/models [--gpu]

With --gpu the same models run as KIND_GPU instances on CUDA (the plan
built with --device cuda, the ONNX models built on load for cuda), next to
CPU models in the same server; and inputs and outputs in GPU memory (CUDA
shared memory, through cupy), plans and instance kinds that disagree, a
plugin without CUDA kernels, and with two GPUs a model on both. Without a
usable GPU it is skipped, saying why.

Exit status: 0 all checks passed, 1 some failed, 77 skipped: no tritonserver
here (nvidia-pytriton not installed: scripts/deps.sh installs it, or set
TRITONSERVER), or --gpu without a usable GPU.
"""

import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton_client as tc  # noqa: E402

failures = []
passes = 0


def check(cond, what):
    global passes
    if cond:
        passes += 1
    else:
        failures.append(what)
        print("FAIL:", what, flush=True)


def close(got, ref, atol=1e-4, rtol=1e-4):
    return (got is not None and got.shape == ref.shape and got.dtype == ref.dtype
            and bool(np.all(np.abs(got.astype(np.float64) - ref) <= atol + rtol * np.abs(ref))))


def load_data(models, name):
    d = os.path.join(models, name + ".data")
    ins, outs = {}, {}
    for f in sorted(os.listdir(d)):
        if f.startswith("input_"):
            ins[f[6:-4]] = np.load(os.path.join(d, f))
        elif f.startswith("output_"):
            outs[f[7:-4]] = np.load(os.path.join(d, f))
    return ins, outs


def write_model(repo, name, config, files, backend='backend: "plugrt"\n'):
    os.makedirs(os.path.join(repo, name, "1"))
    with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
        f.write(backend + config)
    for src, dst in files:
        shutil.copyfile(src, os.path.join(repo, name, "1", dst))


def readme_configs():
    """The example configurations of serving/triton/README.md, as written
    there: {model directory: config.pbtxt}."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")) as f:
        text = f.read()
    return {name: cfg for name, cfg in
            re.findall(r"`(\w+)/config\.pbtxt`(?:(?!```).)*?```\n(.*?)```", text, re.S)}


def onnx_model(path, inputs, outputs, nodes):
    """A small ONNX model: inputs and outputs as (name, elem_type, shape)."""
    from onnx import helper, save
    info = helper.make_tensor_value_info
    graph = helper.make_graph(nodes, os.path.basename(path), [info(*t) for t in inputs],
                              [info(*t) for t in outputs])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def qa_reference(models, q, k, argmin=False):
    """qa_custom_hardmax's outputs in NumPy: start (one-hot of the best score
    of each row of q, the largest, or with the test library the smallest)
    and answer (that score)."""
    import onnx
    from onnx import numpy_helper
    g = onnx.load(os.path.join(models, "qa_custom_hardmax.onnx")).graph
    w = {t.name: numpy_helper.to_array(t) for t in g.initializer}["W"]
    scores = (q.astype(np.float64) @ w) @ k.T.astype(np.float64)
    best = scores.argmin(axis=1) if argmin else scores.argmax(axis=1)
    start = np.zeros(scores.shape, np.float32)
    start[np.arange(scores.shape[0]), best] = 1
    return start, scores[np.arange(scores.shape[0]), best].astype(np.float32)


def params(**kv):
    return "".join('parameters: { key: "%s" value: { string_value: "%s" } }\n' % (k, v)
                   for k, v in kv.items())


def group(kind, count=1, gpus=None):
    """An instance_group of one group: KIND_CPU or KIND_GPU (on `gpus`)."""
    where = " gpus: [ %s ]" % ", ".join(map(str, gpus)) if gpus else ""
    return "instance_group [ { count: %d kind: %s%s } ]\n" % (count, kind, where)


def build_plan(a, path, device):
    subprocess.run([a.plugrt, "build", os.path.join(a.models, "nonzero_plugin.onnx"),
                    "-o", path, "--device", device,
                    "--no-default-plugins", "--plugins", a.plugins,
                    "--min-shapes", "X:1x1", "--opt-shapes", "X:128x128",
                    "--max-shapes", "X:256x256"], check=True, stdout=subprocess.DEVNULL)


def make_repo(a, repo, work):
    """The models; with --gpu the served ones are KIND_GPU instances of
    CUDA engines (qa_argmin stays on the CPU: the test library has no CUDA
    kernels), plus the GPU-only models of make_gpu_models."""
    m = a.models
    kind = "KIND_GPU" if a.gpu else "KIND_CPU"
    plan = os.path.join(work, "nonzero.plan")
    build_plan(a, plan, "cuda" if a.gpu else "cpu")
    cpu_plan = plan
    if a.gpu:
        cpu_plan = os.path.join(work, "nonzero_cpu.plan")
        build_plan(a, cpu_plan, "cpu")
    # A plan, served with the plugin library that built it.
    write_model(repo, "nonzero", params(plugins=a.plugins) + group(kind),
                [(plan, "model.plan")])
    # ONNX models built on load with the profile the parameters give; the
    # same model and plugin key, once with each library.
    qa = params(min_shapes="q:1x32", opt_shapes="q:3x32", max_shapes="q:16x32")
    write_model(repo, "qa", params(plugins=a.plugins) + qa + group(kind),
                [(os.path.join(m, "qa_custom_hardmax.onnx"), "model.onnx")])
    # No plugins parameter: the standard library is the registry's, with
    # no path in the configuration; or named as such.
    write_model(repo, "nonzero_default", group(kind), [(plan, "model.plan")])
    write_model(repo, "qa_standard", params(plugins="standard") + qa + group(kind),
                [(os.path.join(m, "qa_custom_hardmax.onnx"), "model.onnx")])
    # A relative path: the library sits in the model's directory.
    os.makedirs(os.path.join(repo, "qa_argmin", "lib"))
    write_model(repo, "qa_argmin", params(plugins="lib/testlib_argmin.so") + qa,
                [(os.path.join(m, "qa_custom_hardmax.onnx"), "model.onnx")])
    shutil.copyfile(a.testlib, os.path.join(repo, "qa_argmin", "lib", "testlib_argmin.so"))
    # Nothing but the backend and the plugins (and on the GPU the kind):
    # inputs and outputs come from the engine.
    write_model(repo, "circ", params(plugins=a.plugins) + (group(kind) if a.gpu else ""),
                [(os.path.join(m, "circ_pad_conv.onnx"), "model.onnx")])
    # A configuration looser than the engine: any dims pass the server, the
    # engine's profile decides.
    write_model(repo, "circ_wild", params(plugins=a.plugins) + group(kind) +
                'input [ { name: "x" data_type: TYPE_FP32 dims: [ -1, -1, -1, -1 ] } ]\n',
                [(os.path.join(m, "circ_pad_conv.onnx"), "model.onnx")])
    # Batched through the dynamic batcher, two instances, inputs and outputs
    # auto-completed; `threads` 2 lets both compute at once (test_concurrency
    # checks that on the meet models). With --gpu both
    # are KIND_GPU: every built-in op bert's engine holds (Shape, Gather,
    # MatMul, LayerNormalization, ...) has a CUDA kernel.
    write_model(repo, "bert",
                "max_batch_size: 8\n"
                "dynamic_batching { max_queue_delay_microseconds: 30000 }\n"
                + group(kind, 2)
                + params(min_shapes="input_ids:1x1,attention_mask:1x1",
                         opt_shapes="input_ids:4x32,attention_mask:4x32",
                         max_shapes="input_ids:8x64,attention_mask:8x64", threads="2"),
                [(os.path.join(m, "bert_small.onnx"), "model.onnx")])
    # Two instances whose runs wait for each other (test_concurrency): with
    # `threads` 2 they meet, with 1 they cannot. On the CPU in both suites.
    from onnx import helper
    for name, threads, timeout in (("meet", 2, 60000), ("meet_one", 1, 1000)):
        path = os.path.join(work, name + ".onnx")
        onnx_model(path, [("x", 1, [1])], [("met", 6, [])],
                   [helper.make_node("Meet", ["x"], ["met"], parties=2, timeout_ms=timeout)])
        write_model(repo, name, params(plugins=a.meetlib, threads=threads) +
                    group("KIND_CPU", 2), [(path, "model.onnx")])
    # Models that must not load, each for its own reason.
    write_model(repo, "broken_lib", params(plugins="no/such/libplugins.so") + group(kind),
                [(plan, "model.plan")])
    # A plugins parameter replaces the standard library: a registry of the
    # test library alone has no NonZeroPlugin; the standard library beside
    # it, under its name, clashes with its CustomHardmax@1.
    write_model(repo, "no_plugin", params(plugins=a.testlib) + group(kind),
                [(plan, "model.plan")])
    write_model(repo, "plugin_clash", params(plugins="standard," + a.testlib) + group(kind),
                [(plan, "model.plan")])
    write_model(repo, "bad_dims", params(plugins=a.plugins) + group(kind) +
                'input [ { name: "x" data_type: TYPE_FP32 dims: [ 2, 4, 16, 17 ] } ]\n',
                [(os.path.join(m, "circ_pad_conv.onnx"), "model.onnx")])
    write_model(repo, "bad_type", params(plugins=a.plugins) + group(kind) +
                'output [ { name: "y" data_type: TYPE_INT32 dims: [ 2, 4, 18, 16 ] } ]\n',
                [(os.path.join(m, "circ_pad_conv.onnx"), "model.onnx")])
    write_model(repo, "bad_batch", "max_batch_size: 4\n" + params(plugins=a.plugins) +
                group(kind), [(os.path.join(m, "circ_pad_conv.onnx"), "model.onnx")])
    make_config_models(a, repo, work, cpu_plan)
    if a.gpu:
        make_gpu_models(a, repo, plan, cpu_plan)
    elif not a.cuda_usable:
        # Asked for CUDA where there is none: refused at load, saying why.
        write_model(repo, "gpu_kind", params(plugins=a.plugins) + group("KIND_GPU"),
                    [(os.path.join(m, "circ_pad_conv.onnx"), "model.onnx")])
        write_model(repo, "gpu_param", params(plugins=a.plugins, device="cuda"),
                    [(os.path.join(m, "circ_pad_conv.onnx"), "model.onnx")])


def make_config_models(a, repo, work, cpu_plan):
    """Models configured as a user would: the README's examples as written
    there, profiles from max_batch_size and the configuration's dims; and
    the configurations that must be refused, each for its own reason. On
    the CPU in both suites (the README's examples are KIND_CPU)."""
    m = a.models
    qa = os.path.join(m, "qa_custom_hardmax.onnx")
    cfgs = readme_configs()
    a.readme = sorted(cfgs)
    for name, files in (("bert", [(os.path.join(m, "bert_small.onnx"), "model.onnx")]),
                        ("nonzero", [(cpu_plan, "model.plan")]), ("qa", [(qa, "model.onnx")])):
        if name in cfgs:
            write_model(repo, "readme_" + name, cfgs[name], files, backend="")
    # The README's qa has a library of its own: the test library here.
    os.makedirs(os.path.join(repo, "readme_qa", "lib"), exist_ok=True)
    shutil.copyfile(a.testlib, os.path.join(repo, "readme_qa", "lib", "libmyplugins.so"))
    # Profiles from the configuration alone: a batch dim from
    # max_batch_size; a dim from the input's dims.
    from onnx import helper
    relu = os.path.join(work, "relu_rows.onnx")
    onnx_model(relu, [("x", 1, ["N", 4])], [("y", 1, ["N", 4])],
               [helper.make_node("Relu", ["x"], ["y"])])
    write_model(repo, "relu_batch", "max_batch_size: 8\n", [(relu, "model.onnx")])
    write_model(repo, "qa_fixed", 'input [ { name: "q" data_type: TYPE_FP32 dims: [ 4, 32 ] } ]\n',
                [(qa, "model.onnx")])
    # 0-D tensors, which Triton's dims cannot be: NonZero's count (a model
    # without batching) served as dims [1], auto-completed or written so,
    # and a 0-D input (scale_auto's s) likewise; a tensor the batch dim describes whole as dims [1] with reshape
    # { shape: [] }, auto-completed or written so, as for TensorRT. And
    # circ's tensors flattened for clients by a reshape.
    import onnx
    count = os.path.join(work, "nonzero_count.onnx")
    nz = onnx.load(os.path.join(m, "nonzero_plugin.onnx"))
    nz.graph.output.append(helper.make_tensor_value_info("Y_num", onnx.TensorProto.INT64, []))
    onnx.save(nz, count)
    nz_profile = params(max_shapes="X:64x64")
    write_model(repo, "count_auto", nz_profile, [(count, "model.onnx")])
    write_model(repo, "count_dims", nz_profile + 'output [ { name: "Y_num" data_type: '
                'TYPE_INT64 dims: [ 1 ] } ]\n', [(count, "model.onnx")])
    scale = os.path.join(work, "scale.onnx")
    onnx_model(scale, [("x", 1, [4]), ("s", 1, [])], [("y", 1, [4])],
               [helper.make_node("Mul", ["x", "s"], ["y"])])
    write_model(repo, "scale_auto", "", [(scale, "model.onnx")])
    scalar = os.path.join(work, "relu_scalars.onnx")
    onnx_model(scalar, [("x", 1, ["N"])], [("y", 1, ["N"])],
               [helper.make_node("Relu", ["x"], ["y"])])
    write_model(repo, "scalar_auto", "max_batch_size: 8\n", [(scalar, "model.onnx")])
    one = 'data_type: TYPE_FP32 dims: [ 1 ] reshape: { shape: [ ] } } ]\n'
    write_model(repo, "scalar_reshape", "max_batch_size: 8\n" + 'input [ { name: "x" ' + one +
                'output [ { name: "y" ' + one, [(scalar, "model.onnx")])
    # The same through a dynamic batcher that waits for full batches
    # (test_batching).
    write_model(repo, "scalar_batch", "max_batch_size: 8\n"
                "dynamic_batching { max_queue_delay_microseconds: 30000000 }\n" +
                'input [ { name: "x" ' + one + 'output [ { name: "y" ' + one,
                [(scalar, "model.onnx")])
    circ = os.path.join(m, "circ_pad_conv.onnx")
    write_model(repo, "circ_reshape",
                'input [ { name: "x" data_type: TYPE_FP32 dims: [ 2, 4, 256 ] '
                'reshape: { shape: [ 2, 4, 16, 16 ] } } ]\n'
                'output [ { name: "y" data_type: TYPE_FP32 dims: [ 8, 288 ] '
                'reshape: { shape: [ 2, 4, 18, 16 ] } } ]\n', [(circ, "model.onnx")])
    # Refused: an empty reshape without batching (Triton would refuse it
    # after us, less clearly); dims [1] for a batch-only tensor without the
    # reshape; a reshape that is not the engine's shape.
    write_model(repo, "count_reshape", nz_profile + 'output [ { name: "Y_num" data_type: '
                'TYPE_INT64 dims: [ 1 ] reshape: { shape: [ ] } } ]\n', [(count, "model.onnx")])
    write_model(repo, "scalar_no_reshape", "max_batch_size: 8\n" + 'input [ { name: "x" '
                'data_type: TYPE_FP32 dims: [ 1 ] } ]\n', [(scalar, "model.onnx")])
    write_model(repo, "circ_bad_reshape",
                'input [ { name: "x" data_type: TYPE_FP32 dims: [ 2, 4, 256 ] '
                'reshape: { shape: [ 2, 4, 256 ] } } ]\n', [(circ, "model.onnx")])
    # Nothing bounds q's rows; a shape for an input the model lacks; a shape
    # of the wrong rank.
    write_model(repo, "qa_unbounded", "", [(qa, "model.onnx")])
    write_model(repo, "qa_bad_name", params(max_shapes="query:16x32"), [(qa, "model.onnx")])
    write_model(repo, "qa_bad_rank", params(max_shapes="q:16"), [(qa, "model.onnx")])


def make_gpu_models(a, repo, cuda_plan, cpu_plan):
    m = a.models
    circ = os.path.join(m, "circ_pad_conv.onnx")
    # A CPU model in the same server: GPU memory reaches it too.
    write_model(repo, "circ_cpu", params(plugins=a.plugins) + group("KIND_CPU"),
                [(circ, "model.onnx")])
    # Plans and kinds that disagree; a plugin with no CUDA kernel; a
    # device parameter that contradicts the plan.
    write_model(repo, "plan_cpu_kind_gpu", params(plugins=a.plugins) + group("KIND_GPU"),
                [(cpu_plan, "model.plan")])
    write_model(repo, "plan_cuda_kind_cpu", params(plugins=a.plugins) + group("KIND_CPU"),
                [(cuda_plan, "model.plan")])
    write_model(repo, "plan_cuda_device_cpu",
                params(plugins=a.plugins, device="cpu") + group("KIND_GPU"),
                [(cuda_plan, "model.plan")])
    os.makedirs(os.path.join(repo, "argmin_gpu", "lib"))
    write_model(repo, "argmin_gpu", params(plugins="lib/testlib_argmin.so") +
                params(max_shapes="q:16x32") + group("KIND_GPU"),
                [(os.path.join(m, "qa_custom_hardmax.onnx"), "model.onnx")])
    shutil.copyfile(a.testlib, os.path.join(repo, "argmin_gpu", "lib", "testlib_argmin.so"))
    if a.gpus >= 2:
        # One instance on each of two GPUs: the engine is loaded on both.
        write_model(repo, "circ_multi", params(plugins=a.plugins) +
                    group("KIND_GPU", 1, [0, 1]), [(circ, "model.onnx")])


def check_ready(srv, names):
    for name in names:
        status, body = srv.get("/v2/models/%s/ready" % name)
        check(status == 200, "model %s is ready (%d %r)" % (name, status, body[:300]))


def check_refused(srv, want):
    """Each model of `want` did not load, and its reason holds every part
    (a tuple: one of its alternatives)."""
    index = srv.repository_index()
    for name, parts in want.items():
        m = index.get(name, {})
        reason = m.get("reason", "")
        parts = [next((q for q in p if q in reason), p[0]) if isinstance(p, tuple) else p
                 for p in parts]
        check(m.get("state") == "UNAVAILABLE" and all(p in reason for p in parts),
              "model %s is refused naming the cause %s: %r" % (name, parts, m))


def test_loading(srv, a):
    check_ready(srv, ["nonzero", "nonzero_default", "qa", "qa_standard", "qa_argmin", "circ",
                      "circ_wild", "bert"])
    want = {
        "broken_lib": ["cannot load plugin library", "no/such/libplugins.so"],
        "no_plugin": ["NonZeroPlugin", "not in the registry", "PRT_ERR_NOT_FOUND"],
        "plugin_clash": ["parameter plugins: '%s'" % a.testlib, "CustomHardmax",
                         "libplugrt_plugins", "PRT_ERR_ALREADY_EXISTS"],
        "bad_dims": ["config input 'x' has dims [2, 4, 16, 17]", "engine's 'x' is [2, 4, 16, 16]"],
        "bad_type": ["config output 'y' is TYPE_INT32", "engine's 'y' is float32"],
        "bad_batch": ["max_batch_size is 4", "no batch dim"],
    }
    if not a.gpu and not a.cuda_usable:
        want["gpu_kind"] = ["KIND_GPU", "no GPUs are available"]
        # Why CUDA cannot serve it: no GPU or driver here, or (a build with
        # PRT_WITH_CUDA=OFF) no CUDA in this plugrt at all.
        want["gpu_param"] = ["model 'gpu_param' is to run on cuda (parameter device \"cuda\")",
                             ("not usable here", "has no CUDA support"), "PRT_ERR_UNSUPPORTED"]
    check_refused(srv, want)
    # Auto-complete: what the engine says, in the server's configuration.
    status, body = srv.get("/v2/models/circ/config")
    cfg = json.loads(body)
    check(cfg["max_batch_size"] == 0 and
          [(i["name"], i["data_type"], [int(d) for d in i["dims"]]) for i in cfg["input"]]
          == [("x", "TYPE_FP32", [2, 4, 16, 16])] and
          [(o["name"], [int(d) for d in o["dims"]]) for o in cfg["output"]]
          == [("y", [2, 4, 18, 16])], "circ's configuration is completed: %s" % body[:400])
    # No instance_group in the CPU suite: KIND_CPU on any machine (the
    # backend's preferred group), also where the server sees a GPU.
    kinds = sorted({g.get("kind") for g in cfg.get("instance_group", [])})
    want_kind = "KIND_GPU" if a.gpu else "KIND_CPU"
    check(kinds == [want_kind], "circ's instances are %s: %s" % (want_kind, kinds))
    status, body = srv.get("/v2/models/bert/config")
    cfg = json.loads(body)
    check(cfg["max_batch_size"] == 8 and
          sorted((i["name"], i["data_type"], [int(d) for d in i["dims"]]) for i in cfg["input"])
          == [("attention_mask", "TYPE_INT64", [-1]), ("input_ids", "TYPE_INT64", [-1])] and
          sorted((o["name"], [int(d) for d in o["dims"]]) for o in cfg["output"])
          == [("last_hidden_state", [-1, 128]), ("pooler_output", [128])],
          "bert's configuration is completed: %s" % body[:600])
    status, body = srv.get("/v2/models/nonzero/config")
    cfg = json.loads(body)
    check(cfg["max_batch_size"] == 0 and [int(d) for d in cfg["output"][0]["dims"]] == [-1, 2],
          "nonzero has no batch dim (its output depends on data): %s" % body[:300])


def test_outputs(srv, a):
    models = a.models
    conn = srv.connection()
    for model, ref_name in (("nonzero", "nonzero_plugin"), ("nonzero_default", "nonzero_plugin"),
                            ("qa", "qa_custom_hardmax"), ("qa_standard", "qa_custom_hardmax"),
                            ("circ", "circ_pad_conv"), ("bert", "bert_small")):
        ins, refs = load_data(models, ref_name)
        out, err = tc.infer(conn, model, ins)
        check(err is None, "%s answers: %s" % (model, err))
        for name, ref in refs.items():
            got = None if out is None else out.get(name)
            if ref.dtype.kind in "iub":
                ok = got is not None and got.shape == ref.shape and np.array_equal(got, ref)
            else:
                ok = close(got, ref)
            check(ok, "%s output %s matches the reference (got %s, want %s)"
                  % (model, name, None if got is None else got.shape, ref.shape))
    # Data-dependent: the true shape of NonZero's output for another input.
    x = np.zeros((40, 50), np.float32)
    x[3, 7] = x[39, 0] = x[12, 49] = 1.0
    out, err = tc.infer(conn, "nonzero", {"X": x})
    check(err is None and out["Y"].shape == (3, 2) and
          out["Y"].tolist() == [[3, 7], [12, 49], [39, 0]],
          "nonzero returns its true shape: %s %s" % (err, None if out is None else out["Y"]))
    out, err = tc.infer(conn, "nonzero", {"X": np.zeros((5, 6), np.float32)})
    check(err is None and out["Y"].shape == (0, 2),
          "nonzero of zeros has no rows: %s %s" % (err, None if out is None else out["Y"].shape))
    # The same model and plugin key in two registries: the standard
    # library's hardmax and the test library's argmin, side by side.
    ins, refs = load_data(models, "qa_custom_hardmax")
    start, answer = qa_reference(models, ins["q"], ins["k"], argmin=True)
    for _ in range(2):
        a, ea = tc.infer(conn, "qa", ins)
        b, eb = tc.infer(conn, "qa_argmin", ins)
        check(ea is None and close(a["answer"], refs["answer"]) and
              close(a["start"], refs["start"]), "qa (standard CustomHardmax) is right")
        check(eb is None and np.array_equal(b["start"], start) and
              close(b["answer"], answer, 1e-3, 1e-4),
              "qa_argmin (the test library's CustomHardmax) marks the minimum: %s" % eb)
    conn.close()


def test_configs(srv, a):
    """Models configured as a user would (make_config_models)."""
    models = a.models
    check(a.readme == ["bert", "nonzero", "qa"],
          "the README has the example configurations bert, nonzero and qa: %s" % a.readme)
    check_ready(srv, ["readme_" + n for n in a.readme] +
                ["relu_batch", "qa_fixed", "count_auto", "count_dims", "scale_auto", "scalar_auto",
                 "scalar_reshape", "circ_reshape"])
    check_refused(srv, {
        "count_reshape": ["config output 'Y_num' has reshape { shape: [ ] }",
                          "without a batch dim", "dims [ 1 ] without a reshape"],
        "scalar_no_reshape": ["config input 'x' has dims [1] after the batch dim",
                              "add reshape: { shape: [ ] }"],
        "circ_bad_reshape": ["config input 'x' has reshape [2, 4, 256]",
                             "engine's 'x' is [2, 4, 16, 16]"],
        "qa_unbounded": ["ONNX input 'q' is [-1, 32]", "nothing bounds its dim 0",
                         "max_shapes"],
        "qa_bad_name": ["parameter max_shapes names 'query'", "its inputs: 'q', 'k'"],
        "qa_bad_rank": ["parameter max_shapes gives 'q' 1 dims", "[-1, 32]"],
    })
    conn = srv.connection()
    # The README's examples answer right: bert's rows as they come (the
    # profile runs from batch 1 and sequence 1), nonzero with the standard
    # library, qa with its own library (the test's argmin) from 1 row to 16.
    ins, refs = load_data(models, "bert_small")
    for rows in (slice(0, 1), slice(None)):
        out, err = tc.infer(conn, "readme_bert", {k: v[rows] for k, v in ins.items()})
        check(err is None and all(close(out[n], refs[n][rows]) for n in refs),
              "readme_bert answers %s: %s" % (rows, err))
    out, err = tc.infer(conn, "readme_bert", {k: v[:1, :1] for k, v in ins.items()})
    check(err is None and out["last_hidden_state"].shape == (1, 1, 128),
          "readme_bert takes a sequence of 1: %s" % err)
    ins, refs = load_data(models, "nonzero_plugin")
    out, err = tc.infer(conn, "readme_nonzero", ins)
    check(err is None and np.array_equal(out["Y"], refs["Y"]), "readme_nonzero answers: %s" % err)
    k = load_data(models, "qa_custom_hardmax")[0]["k"]
    rng = np.random.default_rng(3)
    for rows in (1, 16):
        q = rng.standard_normal((rows, 32)).astype(np.float32)
        start, answer = qa_reference(models, q, k, argmin=True)
        out, err = tc.infer(conn, "readme_qa", {"q": q, "k": k})
        check(err is None and np.array_equal(out["start"], start) and
              close(out["answer"], answer, 1e-3, 1e-4),
              "readme_qa answers %d row(s) with its own library: %s" % (rows, err))
    out, err = tc.infer(conn, "readme_qa", {"q": np.zeros((17, 32), np.float32), "k": k})
    check(err is not None and "PRT_ERR_SHAPE" in err, "readme_qa refuses 17 rows: %s" % err)
    # A batch dim from max_batch_size alone: 1 to 8 rows.
    status, body = srv.get("/v2/models/relu_batch/config")
    cfg = json.loads(body)
    check(cfg.get("max_batch_size") == 8 and [int(d) for d in cfg["input"][0]["dims"]] == [4],
          "relu_batch serves batches of up to 8 rows of 4: %s" % body[:300])
    for rows in (1, 8):
        x = rng.standard_normal((rows, 4)).astype(np.float32)
        out, err = tc.infer(conn, "relu_batch", {"x": x})
        check(err is None and close(out["y"], np.maximum(x, 0)),
              "relu_batch answers %d row(s): %s" % (rows, err))
    # 0-D tensors: their configuration, and their values as [1] (no batch)
    # or one per row (batch).
    cfg = json.loads(srv.get("/v2/models/count_auto/config")[1])
    got = {o["name"]: ([int(d) for d in o["dims"]], o.get("reshape")) for o in cfg["output"]}
    check(got == {"Y": ([-1, 2], None), "Y_num": ([1], None)},
          "count_auto's count is completed as dims [1]: %s" % got)
    x = np.zeros((40, 50), np.float32)
    x[3, 7] = x[39, 0] = x[12, 49] = 1.0
    for model in ("count_auto", "count_dims"):
        out, err = tc.infer(conn, model, {"X": x})
        check(err is None and out["Y"].tolist() == [[3, 7], [12, 49], [39, 0]] and
              out["Y_num"].dtype == np.int64 and out["Y_num"].tolist() == [3],
              "%s gives NonZero's count as [1]: %s %s" % (model, err, out))
    x = rng.standard_normal(4).astype(np.float32)
    out, err = tc.infer(conn, "scale_auto", {"x": x, "s": np.array([2.5], np.float32)})
    check(err is None and close(out["y"], x * 2.5), "scale_auto takes a 0-D input as [1]: %s" % err)
    cfg = json.loads(srv.get("/v2/models/scalar_auto/config")[1])
    got = [(t["name"], [int(d) for d in t["dims"]], t.get("reshape"))
           for t in cfg["input"] + cfg["output"]]
    check(cfg.get("max_batch_size") == 8 and
          got == [("x", [1], {"shape": []}), ("y", [1], {"shape": []})],
          "scalar_auto's tensors are completed as dims [1] reshape { shape: [] }: %s" % got)
    for model in ("scalar_auto", "scalar_reshape"):
        x = rng.standard_normal((3, 1)).astype(np.float32)
        out, err = tc.infer(conn, model, {"x": x})
        check(err is None and close(out["y"], np.maximum(x, 0)),
              "%s answers 3 rows of [1]: %s" % (model, err))
    ins, refs = load_data(models, "circ_pad_conv")
    out, err = tc.infer(conn, "circ_reshape", {"x": ins["x"].reshape(2, 4, 256)})
    check(err is None and close(out["y"], refs["y"].reshape(8, 288)),
          "circ_reshape answers in its configuration's shapes: %s" % err)
    # q's rows from the configuration's dims.
    q = rng.standard_normal((4, 32)).astype(np.float32)
    start, answer = qa_reference(models, q, k)
    out, err = tc.infer(conn, "qa_fixed", {"q": q, "k": k})
    check(err is None and np.array_equal(out["start"], start) and
          close(out["answer"], answer, 1e-3, 1e-4), "qa_fixed answers 4 rows: %s" % err)
    conn.close()


def concurrently(fn, count):
    """fn(0) .. fn(count - 1), each on a thread of its own, all at once."""
    threads = [threading.Thread(target=fn, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def stats_after(srv, model, inf0, n):
    """The model's (inference_count, execution_count) once its inference
    count has grown by n. A backend reports an execution's statistics after
    sending its responses (as Triton's own backends do), so the last ones
    may land a moment after the last answer."""
    deadline = time.time() + 5
    inf1, exe1 = srv.stats(model)
    while inf1 - inf0 < n and time.time() < deadline:
        time.sleep(0.05)
        inf1, exe1 = srv.stats(model)
    return inf1, exe1


def test_batching(srv, a):
    """Concurrent batch-1 requests are joined into batches, and every
    response is its own. Checked by construction, not by timing: the
    dynamic batcher of scalar_batch waits (up to 30 s) until it holds
    max_batch_size requests, so 8 requests sent at once are one execution
    however the machine schedules them."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((8, 1)).astype(np.float32)
    got = [None] * 8
    inf0, exe0 = srv.stats("scalar_batch")

    def one(i):
        conn = srv.connection()
        got[i] = tc.infer(conn, "scalar_batch", {"x": x[i : i + 1]})
        conn.close()

    concurrently(one, 8)
    inf1, exe1 = stats_after(srv, "scalar_batch", inf0, 8)
    check(all(e is None and close(o["y"], np.maximum(x[i : i + 1], 0))
              for i, (o, e) in enumerate(got)),
          "each of 8 batched requests has its own row: %s" % [e for _, e in got])
    check((inf1 - inf0, exe1 - exe0) == (8, 1),
          "8 requests ran as one execution (%d requests, %d executions)"
          % (inf1 - inf0, exe1 - exe0))
    check(re.search(r"instance 'scalar_batch_\d+': 8 request\(s\), batch 8,", srv.log_text())
          is not None, "the log has scalar_batch's run of 8 requests as one batch of 8")
    # bert through the dynamic batcher, two instances, more clients than
    # max_batch_size: every response is right whatever batches form.
    ins, refs = load_data(a.models, "bert_small")
    rows = ins["input_ids"].shape[0]
    inf0, _ = srv.stats("bert")
    rounds, clients = 4, 16
    bad = []

    def client(i):
        conn = srv.connection()
        for r in range(rounds):
            row = (i + r) % rows
            out, err = tc.infer(conn, "bert", {k: v[row : row + 1] for k, v in ins.items()})
            if err is not None or not all(close(out[n], refs[n][row : row + 1]) for n in refs):
                bad.append((i, r, err))
        conn.close()

    concurrently(client, clients)
    n = rounds * clients
    inf1, _ = stats_after(srv, "bert", inf0, n)
    check(not bad, "every batched response is right (%d wrong: %s)" % (len(bad), bad[:3]))
    check(inf1 - inf0 == n, "inference_count grew by %d (want %d)" % (inf1 - inf0, n))


def test_concurrency(srv, a):
    """Two instances run at once, and `threads` bounds that: checked by
    construction (testlib_meet.c). Each run of Meet waits until two runs
    are in it, and answers how many it met: with `threads` 2 the two
    requests, sent at once to the two instances, meet (2 each, however
    slow the machine: the wait only ends early for a failure); with
    `threads` 1 they cannot, and each answers 1 after its 1 s wait."""
    for model, want in (("meet", 2), ("meet_one", 1)):
        got = [None, None]

        def one(i):
            conn = srv.connection()
            got[i] = tc.infer(conn, model, {"x": np.zeros(1, np.float32)})
            conn.close()

        concurrently(one, 2)
        met = [None if o is None else o["met"].tolist() for o, _ in got]
        check(met == [[want], [want]],
              "%s: each of two runs sent at once met %d: %s %s"
              % (model, want, met, [e for _, e in got]))


def test_errors(srv, a):
    models = a.models
    conn = srv.connection()
    ins, refs = load_data(models, "qa_custom_hardmax")
    # Wrong dtype, unknown input, wrong rank: the server refuses them.
    out, err = tc.infer(conn, "qa", {"q": ins["q"].astype(np.int32), "k": ins["k"]})
    check(err is not None and "INT32" in err, "a wrong dtype is an error: %s" % err)
    out, err = tc.infer(conn, "qa", {"q": ins["q"], "k": ins["k"], "bogus": ins["k"]})
    check(err is not None and "bogus" in err, "an unknown input is an error: %s" % err)
    out, err = tc.infer(conn, "circ", {"x": np.zeros((2, 4, 16), np.float32)})
    check(err is not None, "a wrong rank is an error: %s" % err)
    out, err = tc.infer(conn, "qa", {"q": ins["q"]})
    check(err is not None and "k" in err, "a missing input is an error: %s" % err)
    # Shapes the config allows but the engine's profile does not: plugrt's
    # message.
    out, err = tc.infer(conn, "nonzero", {"X": np.ones((300, 300), np.float32)})
    check(err is not None and "PRT_ERR_SHAPE" in err and "X" in err,
          "a shape outside the profile is plugrt's error: %s" % err)
    out, err = tc.infer(conn, "qa", {"q": np.ones((17, 32), np.float32), "k": ins["k"]})
    check(err is not None and "PRT_ERR_SHAPE" in err, "q of 17 rows is refused: %s" % err)
    bert_ins, bert_refs = load_data(models, "bert_small")
    long_ids = np.ones((1, 65), np.int64)
    out, err = tc.infer(conn, "bert", {"input_ids": long_ids, "attention_mask": long_ids})
    check(err is not None and "PRT_ERR_SHAPE" in err,
          "a sequence longer than the profile is refused: %s" % err)
    circ_ins, circ_refs = load_data(models, "circ_pad_conv")
    out, err = tc.infer(conn, "circ_wild", {"x": circ_ins["x"][:1]})
    check(err is not None and "PRT_ERR_SHAPE" in err,
          "a shape the config allows but the static engine does not is refused: %s" % err)
    out, err = tc.infer(conn, "circ_wild", circ_ins)
    check(err is None and close(out["y"], circ_refs["y"]),
          "circ_wild answers its engine's shape: %s" % err)
    out, err = tc.infer(conn, "broken_lib", {"X": np.ones((4, 4), np.float32)})
    check(err is not None, "a model that did not load answers with an error: %s" % err)
    # And the server goes on serving.
    out, err = tc.infer(conn, "qa", ins)
    check(err is None and close(out["answer"], refs["answer"]),
          "after the errors qa still answers: %s" % err)
    out, err = tc.infer(conn, "bert", bert_ins)
    check(err is None and close(out["pooler_output"], bert_refs["pooler_output"]),
          "after the errors bert still answers: %s" % err)
    conn.close()


def test_load(srv, a, threads=4, per_thread=100):
    """A small bounded load: no request lost, every answer right."""
    models = a.models
    ins, refs = load_data(models, "circ_pad_conv")
    ok = [0] * threads

    def client(i):
        conn = srv.connection()
        for _ in range(per_thread):
            out, err = tc.infer(conn, "circ", ins)
            if err is None and close(out["y"], refs["y"]):
                ok[i] += 1
        conn.close()

    ts = [threading.Thread(target=client, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    check(sum(ok) == threads * per_thread,
          "%d of %d requests under load answered right" % (sum(ok), threads * per_thread))


def test_gpu_loading(srv, a):
    """--gpu: where each instance runs, and the kinds, plans and plugins
    that cannot run where they are asked to, refused naming the cause."""
    check_ready(srv, ["circ_cpu"] + (["circ_multi"] if a.gpus >= 2 else []))
    check_refused(srv, {
        "plan_cpu_kind_gpu": ["is KIND_GPU but model 'plan_cpu_kind_gpu' runs on the cpu"],
        "plan_cuda_kind_cpu": ["is KIND_CPU but model 'plan_cuda_kind_cpu' runs on cuda"],
        "plan_cuda_device_cpu": ["parameter device is 'cpu'", "was built for cuda"],
        "argmin_gpu": ["CustomHardmax", "does not run on CUDA", "PRT_ERR_UNSUPPORTED"],
    })
    log = srv.log_text()
    for model, count in (("nonzero", 1), ("qa", 1), ("circ", 1), ("circ_wild", 1),
                         ("bert", 2)):
        got = re.findall(r"instance '(%s_\d+_\d+)' of model '%s': one context on cuda, GPU 0, "
                         r"its own stream" % (model, model), log)
        check(len(set(got)) == count,
              "%s has %d instance(s) on GPU 0, each with its own stream: %s" % (model, count, got))
    check(re.search(r"of model 'qa_argmin': one context on the cpu", log) is not None,
          "qa_argmin (KIND_CPU) serves from the CPU beside the GPU models")


def cuda_shm_infer(srv, model, inputs, outputs):
    """An inference whose inputs and outputs live in registered CUDA shared
    memory: inputs {name: (array, region, offset)}, outputs {name: (region,
    offset, byte_size)}. (output metadata by name, None) or (None, error)."""
    req = {"inputs": [{"name": n, "shape": list(x.shape), "datatype": tc.NP_TO_TRITON[x.dtype],
                       "parameters": {"shared_memory_region": reg,
                                      "shared_memory_offset": off,
                                      "shared_memory_byte_size": x.nbytes}}
                      for n, (x, reg, off) in inputs.items()],
           "outputs": [{"name": n, "parameters": {"shared_memory_region": reg,
                                                  "shared_memory_offset": off,
                                                  "shared_memory_byte_size": size}}
                       for n, (reg, off, size) in outputs.items()]}
    status, body = srv.post("/v2/models/%s/infer" % model, json.dumps(req).encode())
    doc = json.loads(body)
    if status != 200:
        return None, doc.get("error", "HTTP %d" % status)
    return {o["name"]: o for o in doc["outputs"]}, None


def test_gpu_memory(srv, a):
    """--gpu: inputs and outputs in GPU memory (CUDA shared memory, the way a
    client on the same machine hands the server device buffers). A CUDA
    engine reads an aligned input where it is and copies a misaligned one
    on the GPU; a CPU engine copies through the host; data-dependent outputs
    land in GPU memory at their true shape."""
    try:
        import cupy as cp
    except ImportError:
        print("note: no cupy for %s: the CUDA shared memory checks are skipped" % sys.executable)
        return
    rt = cp.cuda.runtime
    cx, cy = load_data(a.models, "circ_pad_conv")
    nx, ny = load_data(a.models, "nonzero_plugin")
    x, y = cx["x"], cy["y"]
    X, Y = nx["X"], ny["Y"]
    # One region: circ's x at 0 and at 64 (misaligned for the GPU), its y,
    # nonzero's X and room for Y at its largest (every element nonzero).
    off_x2, off_y = 1 << 20, 2 << 20
    off_X, off_Y = 3 << 20, 4 << 20
    y_room = X.size * 2 * 8
    size = off_Y + y_room
    ptr = rt.malloc(size)  # cudaMalloc itself: an IPC handle names the whole allocation
    registered = False
    try:
        rt.memcpy(ptr, x.ctypes.data, x.nbytes, rt.memcpyHostToDevice)
        rt.memcpy(ptr + off_x2 + 64, x.ctypes.data, x.nbytes, rt.memcpyHostToDevice)
        rt.memcpy(ptr + off_X, X.ctypes.data, X.nbytes, rt.memcpyHostToDevice)
        try:
            handle = rt.ipcGetMemHandle(ptr)
        except rt.CUDARuntimeError as e:
            # Sandboxed GPUs (gVisor) may not pass CUDA IPC through.
            print("note: CUDA IPC is not available here (%s): the CUDA shared memory "
                  "checks are skipped" % e)
            return
        body = json.dumps({"raw_handle": {"b64": base64.b64encode(bytes(handle)).decode()},
                           "device_id": 0, "byte_size": size}).encode()
        status, resp = srv.post("/v2/cudasharedmemory/region/gpu_io/register", body)
        registered = status == 200
        if not registered and b"ipc" in resp.lower():
            print("note: the server cannot open the CUDA IPC handle here (%r): the CUDA "
                  "shared memory checks are skipped" % resp[:300])
            return
        check(registered, "a CUDA shared memory region registers: %d %r" % (status, resp[:300]))
        if not registered:
            return

        def read(off, shape, dtype):
            host = np.empty(shape, dtype)
            if host.nbytes:
                rt.memcpy(host.ctypes.data, ptr + off, host.nbytes, rt.memcpyDeviceToHost)
            return host

        for model, x_off, how in (("circ", 0, "read in place"), ("circ", off_x2 + 64, "copied"),
                                  ("circ_cpu", 0, "copied through the host")):
            rt.memset(ptr + off_y, 0xff, y.nbytes)  # NaN until written
            log0 = len(srv.log_text())
            out, err = cuda_shm_infer(srv, model, {"x": (x, "gpu_io", x_off)},
                                      {"y": ("gpu_io", off_y, y.nbytes)})
            got = read(off_y, y.shape, y.dtype)
            check(err is None and close(got, y),
                  "%s: x in GPU memory (%s), y written to GPU memory, matches: %s"
                  % (model, how, err))
            runs = re.findall(r"instance '%s_\d+_\d+': 1 request\(s\).*?, (\d) of 1 inputs "
                              r"read in place" % model, srv.log_text()[log0:])
            want = "1" if how == "read in place" else "0"
            check(runs == [want], "%s: the input was %s (%s)" % (model, how, runs))
        out, err = cuda_shm_infer(srv, "nonzero", {"X": (X, "gpu_io", off_X)},
                                  {"Y": ("gpu_io", off_Y, y_room)})
        shape = tuple(out["Y"]["shape"]) if out else None
        got = read(off_Y, Y.shape, Y.dtype) if shape == Y.shape else None
        check(err is None and shape == Y.shape and np.array_equal(got, Y),
              "nonzero: X in GPU memory, Y in GPU memory at its true shape %s (want %s): %s"
              % (shape, Y.shape, err))
        # The server's check: a region smaller than the output is an error
        # response, and the model goes on.
        out, err = cuda_shm_infer(srv, "circ", {"x": (x, "gpu_io", 0)},
                                  {"y": ("gpu_io", off_y, y.nbytes - 4)})
        check(err is not None, "an output region too small is an error: %s" % err)
        out, err = cuda_shm_infer(srv, "circ", {"x": (x, "gpu_io", 0)},
                                  {"y": ("gpu_io", off_y, y.nbytes)})
        check(err is None and close(read(off_y, y.shape, y.dtype), y),
              "circ answers after it: %s" % err)
    finally:
        if registered:
            srv.post("/v2/cudasharedmemory/region/gpu_io/unregister")
        rt.free(ptr)


def test_multi_gpu(srv, a):
    """--gpu with two GPUs or more: one model, an instance on GPU 0 and one
    on GPU 1 (its engine loaded there), both answering right."""
    if a.gpus < 2:
        print("note: %d GPU(s): the two-GPU checks are skipped" % a.gpus)
        return
    log = srv.log_text()
    check("model 'circ_multi': engine loaded on GPU 1" in log,
          "circ_multi's engine is loaded again on GPU 1")
    on = set(re.findall(r"instance '(circ_multi_\d+_\d+)' of model 'circ_multi': one context on "
                        r"cuda, GPU (\d)", log))
    check(sorted(g for _, g in on) == ["0", "1"], "circ_multi has an instance on GPU 0 and 1: %s"
          % sorted(on))
    ins, refs = load_data(a.models, "circ_pad_conv")
    bad = []
    log0 = len(log)

    def client(i):
        conn = srv.connection()
        for _ in range(25):
            out, err = tc.infer(conn, "circ_multi", ins)
            if err is not None or not close(out["y"], refs["y"]):
                bad.append(err)
        conn.close()

    ts = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    check(not bad, "200 requests over two GPUs answered right (%d wrong: %s)" % (len(bad), bad[:2]))
    ran = set(re.findall(r"instance '(circ_multi_\d+_\d+)': 1 request", srv.log_text()[log0:]))
    check(len(ran) == 2, "both GPUs' instances ran requests: %s" % sorted(ran))


def test_without_standard(a, binary, work, env, timeout):
    """A second server, where the standard plugin library is not to be had
    (PLUGRT_PLUGINS set and empty): a model that needs it by default, or
    names it, is refused saying why; one naming the library's path serves."""
    repo = os.path.join(work, "repo_nostd")
    os.makedirs(repo)
    plan = os.path.join(work, "nonzero_cpu.plan" if a.gpu else "nonzero.plan")
    write_model(repo, "nonzero_default", "", [(plan, "model.plan")])
    write_model(repo, "nonzero_standard", params(plugins="standard"), [(plan, "model.plan")])
    write_model(repo, "nonzero_path", params(plugins=a.plugins), [(plan, "model.plan")])
    srv = tc.Server(binary, repo, os.path.abspath(a.backend_dir),
                    os.path.join(work, "server_nostd.log"), env=dict(env, PLUGRT_PLUGINS=""))
    try:
        check(srv.wait_ready(), "a server without the standard library starts")
        check_ready(srv, ["nonzero_path"])
        check_refused(srv, {
            "nonzero_default": ["NonZeroPlugin", "not in the registry",
                                "no standard plugin library: PLUGRT_PLUGINS is set and empty"],
            "nonzero_standard": ["parameter plugins names the standard plugin library",
                                 "PLUGRT_PLUGINS is set and empty"],
        })
    finally:
        srv.stop(timeout=timeout)


def cuda_usable(plugrt):
    """(usable, reason) of plugrt's CUDA device here (`plugrt devices`)."""
    try:
        out = subprocess.run([plugrt, "devices", "--json"], check=True, capture_output=True,
                             text=True, timeout=60).stdout
        for d in json.loads(out)["devices"]:
            if d["device"] == "cuda":
                return bool(d["usable"]), d.get("reason", "")
    except (OSError, subprocess.SubprocessError, ValueError, KeyError) as e:
        return False, "plugrt devices failed: %s" % e
    return False, "plugrt knows no cuda device"


def gpu_count():
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount()
    except Exception:  # no cupy, or no driver for it
        pass
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True,
                             timeout=60).stdout
        return max(1, sum(1 for line in out.splitlines() if line.startswith("GPU ")))
    except (OSError, subprocess.SubprocessError):
        return 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--backend-dir", required=True)
    p.add_argument("--plugrt", required=True)
    p.add_argument("--plugins", required=True)
    p.add_argument("--testlib", required=True)
    p.add_argument("--meetlib", required=True)
    p.add_argument("--models", required=True)
    p.add_argument("--gpu", action="store_true",
                   help="KIND_GPU instances on CUDA, and the GPU-only checks")
    p.add_argument("--keep", action="store_true", help="keep the work folder")
    p.add_argument("--server-log", help="copy the server's log here at the end")
    a = p.parse_args()
    a.models = os.path.abspath(a.models)
    binary = tc.find_tritonserver()
    if binary is None:
        print("SKIP: no tritonserver: nvidia-pytriton 0.7.0 is not installed for %s "
              "(scripts/deps.sh installs it), and TRITONSERVER is not set" % sys.executable)
        return 77
    a.cuda_usable, why = cuda_usable(a.plugrt)
    if a.gpu and not a.cuda_usable:
        print("SKIP: --gpu needs a GPU that plugrt can use: %s" % why)
        return 77
    a.gpus = gpu_count() if a.gpu else 0
    work = tempfile.mkdtemp(prefix="plugrt-triton-")
    repo = os.path.join(work, "repo")
    os.makedirs(repo)
    make_repo(a, repo, work)
    # Under the sanitizers (TRITON_LD_PRELOAD from CTest) the server gets the
    # ASan runtime first.
    env = dict(os.environ)
    sanitized = bool(os.environ.get("TRITON_LD_PRELOAD"))
    if sanitized:
        env["LD_PRELOAD"] = os.environ["TRITON_LD_PRELOAD"]
        env["ASAN_OPTIONS"] = os.environ.get("TRITON_ASAN_OPTIONS", "detect_leaks=0")
    srv = tc.Server(binary, repo, os.path.abspath(a.backend_dir), os.path.join(work, "server.log"),
                    verbose=1, env=env)
    try:
        ready = srv.wait_ready()
        check(ready, "the server starts and is ready")
        tests = [test_loading, test_outputs, test_configs, test_batching, test_concurrency,
                 test_errors, test_load]
        if a.gpu:
            tests += [test_gpu_loading, test_gpu_memory, test_multi_gpu]
        for test in tests:
            if not ready:
                break
            try:
                test(srv, a)
            except Exception as e:  # a dead server, a broken connection
                check(False, "%s raised %r" % (test.__name__, e))
                ready = srv.proc.poll() is None
    finally:
        rc = srv.stop(timeout=10 if sanitized else 30)
    log = srv.log_text()
    check("Segmentation" not in log and "AddressSanitizer" not in log and
          "runtime error" not in log, "no crash and no sanitizer report in the server's log")
    if sanitized and rc != 0 and "unloading backend 'plugrt'" in log:
        # With the ASan runtime preloaded, the server can hang in its exit
        # handlers after it has unloaded the backend (the bundled
        # libp11-kit's destructor waits on glibc's locale lock); it is killed
        # then. Everything of ours is gone by that point.
        print("note: the sanitized server hung after unloading the backend; killed (%s)" % rc)
    else:
        check(rc == 0, "the server exits cleanly (status %s)" % rc)
    if ready:
        try:
            test_without_standard(a, binary, work, env, 10 if sanitized else 30)
        except Exception as e:  # a dead server, a broken connection
            check(False, "test_without_standard raised %r" % e)
    if a.server_log:
        shutil.copyfile(srv.log_path, a.server_log)
    if failures:
        print("server log (%s), last lines:" % srv.log_path)
        print("\n".join(l for l in log.splitlines() if "HTTP request" not in l)[-6000:])
    print("%d passed, %d failed" % (passes, len(failures)))
    if not failures and not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
