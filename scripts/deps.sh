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
