#!/usr/bin/env bash
# Installs (as root, with apt-get) whatever build and test dependencies are
# missing on a Debian/Ubuntu machine. Does nothing when all are present.
set -euo pipefail
pkgs=(gcc make cmake ninja-build pkg-config clang-format libopenblas-dev protobuf-c-compiler libprotobuf-c-dev libonnx-dev libonnx-testdata python3 python3-numpy python3-onnx python3-venv)
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
