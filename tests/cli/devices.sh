#!/usr/bin/env bash
# Devices in the plugrt program: `plugrt devices` lists cpu and cuda and,
# for one it cannot use, why; --device cuda where CUDA is not usable fails
# cleanly with that reason (exit 1, no crash), from an ONNX model and in
# `build`; --device that disagrees with a plan is a usage error naming
# both; --cuda-graph where graphs cannot be captured is the library's
# error. The CUDA runs themselves are in cuda_models.sh (label cuda).
. "$(dirname "$0")/common.sh"

expect_rc 0 devices "$PLUGRT" devices && {
  expect_grep "^devices:$" devices.out
  expect_grep "^  cpu +usable$" devices.out "cpu is usable"
  expect_grep "^  cuda +(usable: .+, compute capability [0-9]+\.[0-9]+, .+, [0-9]+ multiprocessors|not usable: .+ \[PRT_ERR_UNSUPPORTED\])$" \
    devices.out "cuda: its description or why it is not usable"
}
expect_rc 0 devices_json "$PLUGRT" devices --json &&
  expect_rc 0 devices_json_parse "$PYTHON" - devices_json.out devices.out <<'PY'
import json, re, sys
d = {x["device"]: x for x in json.load(open(sys.argv[1]))["devices"]}
assert list(d) == ["cpu", "cuda"], d
assert d["cpu"]["usable"] and d["cpu"]["name"] == "cpu", d
text = open(sys.argv[2]).read()
cuda = d["cuda"]
if cuda["usable"]:
    assert cuda["name"] and cuda["cc_major"] >= 3 and cuda["memory_bytes"] > 0, cuda
    assert cuda["multiprocessors"] > 0 and "reason" not in cuda, cuda
    assert f"usable: {cuda['name']}, compute capability {cuda['cc_major']}." in text
else:
    # The same reason as the text, which is prt_device_check's message.
    assert cuda["status"] == "PRT_ERR_UNSUPPORTED", cuda
    assert cuda["reason"].startswith("device cuda"), cuda
    assert f"not usable: {cuda['reason']} [PRT_ERR_UNSUPPORTED]" in text, (cuda, text)
PY

reason=$(sed -n 's/^  cuda  not usable: \(.*\) \[PRT_ERR_UNSUPPORTED\]$/\1/p' devices.out)

expect_rc 0 make_plan "$MAKE_PLAN" small.plan 4 || finish
"$PYTHON" -c 'import numpy as np; np.save("x.npy", np.arange(4, dtype=np.float32).reshape(1, 4))'

# A CPU plan with --device cuda: a usage error naming both devices, whether
# or not CUDA works here (a plan runs on its own device).
expect_rc 2 plan_cuda "$PLUGRT" run small.plan -i x=x.npy --device cuda && {
  expect_grep "\-\-device cuda: the plan small.plan was built for cpu" plan_cuda.err
  expect_grep "plugrt build --device cuda" plan_cuda.err
}
# Naming its device is fine; so is leaving it out.
expect_rc 0 plan_cpu "$PLUGRT" run small.plan -i x=x.npy --device cpu -n 1 &&
  expect_grep "plan of [0-9]+ bytes for cpu" plan_cpu.out

# --cuda-graph on a CPU plan: the library's reason, exit 1.
expect_rc 1 graph_cpu "$PLUGRT" run small.plan -i x=x.npy --cuda-graph &&
  expect_grep "\-\-cuda-graph: cannot capture the run: graphs: device cpu has none \[PRT_ERR_UNSUPPORTED\]" \
    graph_cpu.err

if [ -n "$reason" ]; then
  # Where CUDA is not usable: exit 1 with prt_device_check's reason, for a
  # model to build and run, and for build.
  if have_onnx; then
    expect_rc 0 make_model "$PYTHON" "$SRC/make_nonzero_model.py" model 4 5 || finish
    if expect_rc 1 run_cuda "$PLUGRT" run model/model.onnx -i X=model/x.npy --device cuda; then
      expect_grep "error: --device cuda: .*\[PRT_ERR_UNSUPPORTED\]" run_cuda.err
      grep -qF -- "$reason" run_cuda.err || fail "run --device cuda does not say '$reason'"
    fi
    if expect_rc 1 build_cuda "$PLUGRT" build model/model.onnx -o cuda.plan \
      --opt-shapes X:4x5 --device cuda; then
      grep -qF -- "$reason" build_cuda.err || fail "build --device cuda does not say '$reason'"
    fi
    [ -e cuda.plan ] && fail "a failed build left cuda.plan"
  fi
else
  echo "CUDA is usable here: the runs on it are cuda_models.sh's (ctest -L cuda)"
fi

finish
