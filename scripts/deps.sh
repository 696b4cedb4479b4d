#!/usr/bin/env bash
# Installs (as root, with apt-get) whatever build and test dependencies are
# missing on a Debian/Ubuntu machine. Does nothing when all are present.
set -euo pipefail
pkgs=(gcc make cmake ninja-build pkg-config clang-format libopenblas-dev protobuf-c-compiler libprotobuf-c-dev libonnx-dev libonnx-testdata python3 python3-numpy python3-onnx python3-venv python3-pip)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# ONNX Runtime, the reference of `plugrt run --compare-layers --reference
# onnxruntime` (and of its test), for the python3 that has Debian's numpy and
# onnx. Without its declared dependencies: running a model needs only numpy,
# and the newer protobuf pip would bring shadows the one Debian's onnx was
# built with. 1.30.0 made the shared models' reference outputs.
if ! /usr/bin/python3 -c 'import onnxruntime' >/dev/null 2>&1; then
  echo "installing: onnxruntime (pip)"
  /usr/bin/python3 -m pip install -q --break-system-packages --no-deps onnxruntime==1.30.0
fi

# Triton Inference Server for serving/triton's tests: nvidia-pytriton 0.7.0
# bundles a tritonserver 2.51.0 that runs without a GPU. It goes, without
# its Python dependencies (the tests need only the server binary, numpy
# and onnx), into a virtual environment over Debian's python3, the
# interpreter those tests run with (PRT_TRITON_PYTHON in
# serving/triton/tests/CMakeLists.txt).
triton_venv=/opt/plugrt-triton
if ! "$triton_venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('nvidia-pytriton') != '0.7.0')" 2>/dev/null; then
  echo "installing: nvidia-pytriton 0.7.0 into $triton_venv"
  # Where PyPI cannot be reached the rest still builds and tests; the Triton
  # test then reports itself skipped, naming what is missing.
  if ! { /usr/bin/python3 -m venv --system-site-packages "$triton_venv" &&
         "$triton_venv/bin/pip" install -q --no-deps nvidia-pytriton==0.7.0; }; then
    echo "warning: cannot install nvidia-pytriton; the Triton backend test will be skipped" >&2
  fi
fi
