#!/usr/bin/env bash
# Installs what is missing, builds plugrt (library, standard plugins, the
# plugrt program) and runs the NonZero example.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target nonzero_example plugrt_plugins plugrt_cli
./build/nonzero_example
