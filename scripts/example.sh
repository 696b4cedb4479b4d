#!/usr/bin/env bash
# Installs what is missing, builds plugrt and runs the NonZero example.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target nonzero_example plugrt_plugins
./build/nonzero_example
