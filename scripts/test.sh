#!/usr/bin/env bash
# Installs what is missing, checks the format, builds with warnings as errors,
# and runs the whole suite: a normal build; the Python package's wheel,
# installed in a virtual environment, and its pytest suite; the tests that run one engine
# from several threads and the thread pool under ThreadSanitizer; then the whole suite again
# under AddressSanitizer and UndefinedBehaviorSanitizer.
#
# Every stage runs even when an earlier one failed (a stage that needs an
# earlier one's build says so and fails too); the end lists each stage that
# failed, and the exit status is 1 if any did.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
bash scripts/deps.sh || { echo "test.sh: installing the dependencies failed" >&2; exit 1; }
jobs=$(nproc)
failed=()

# stage NAME: runs the function NAME (with -e and pipefail inside, so its
# first failing command ends it) and records a failure.
stage() {
  local rc
  echo "==== test.sh: $1"
  # Not in an if's condition: there bash would ignore -e inside.
  (set -eo pipefail; "$1")
  rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "==== test.sh: $1 FAILED (exit status $rc)"
    failed+=("$1")
  fi
}

# One format (STYLE.md habit 13): every C and CUDA source as .clang-format says.
format() {
  clang-format --dry-run -Werror $(git ls-files '*.c' '*.h' '*.cu' '*.cuh')
}

suite() {
  cmake -S . -B build-test -G Ninja -DPRT_WERROR=ON >/dev/null
  cmake --build build-test -j "$jobs"
  ctest --test-dir build-test --output-on-failure -j "$jobs"
}

# The Python package (python/): pip builds a wheel through scikit-build-core
# over this CMake project (the CPU libraries; python/tests/gpu_run.sh builds the
# CUDA wheel on a GPU machine),
# installs it into a virtual environment over Debian's python3 (numpy, onnx),
# and pytest runs python/tests (which also run examples/python).
py="$PWD/build-py"
python_package() {
  [ -x "$py/venv/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$py/venv"
  "$py/venv/bin/pip" install -q "scikit-build-core>=0.10" "pytest>=7" mypy
  rm -rf "$py/dist"
  "$py/venv/bin/pip" wheel -q --no-deps --no-build-isolation ./python -w "$py/dist" \
    --config-settings=build-dir="$py/cmake" --config-settings=cmake.define.PRT_WITH_CUDA=OFF
  "$py/venv/bin/pip" install -q --force-reinstall --no-deps "$py"/dist/plugrt-*.whl
  (cd / && "$py/venv/bin/python" -c "import plugrt; print('plugrt', plugrt.__version__, 'from', plugrt.__file__)")
  # PLUGRT_CLI: the program for test_check.py's `plugrt check --python`.
  (cd python && PLUGRT_CLI="$PWD/../build-test/tools/plugrt" \
    "$py/venv/bin/python" -m pytest -q -p no:cacheprovider tests)
}

tsan() {
  cmake -S . -B build-tsan -G Ninja -DCMAKE_C_FLAGS="-fsanitize=thread -g" \
    -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread \
    -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread >/dev/null
  cmake --build build-tsan -j "$jobs" --target test_runtime test_parallel
  TSAN_OPTIONS=halt_on_error=1:allocator_may_return_null=1 ./build-tsan/tests/test_runtime
  # The thread pool, plugins on the host's threads, contexts with pools on
  # several threads at once.
  TSAN_OPTIONS=halt_on_error=1:allocator_may_return_null=1 ./build-tsan/tests/test_parallel
}

asan() {
  cmake -S . -B build-asan -G Ninja -DPRT_WERROR=ON -DPRT_SANITIZE=ON -DPRT_PYTHON=ON >/dev/null
  cmake --build build-asan -j "$jobs"
  # allocator_may_return_null: corrupted-engine tests ask for more memory than
  # exists, and plugrt must fail cleanly where malloc returns NULL.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs"
}

# The Python package's suite again over these instrumented libraries
# (PLUGRT_LIBRARY_DIR): the ASan runtime goes first into the uninstrumented
# python; python's own allocations are not ours to leak-check.
asan_python() {
  [ -x "$py/venv/bin/python" ] || { echo "no virtual environment (python_package failed)"; return 1; }
  [ -f build-asan/libplugrt.so ] || { echo "no ASan build (asan failed)"; return 1; }
  PLUGRT_LIBRARY_DIR="$PWD/build-asan" LD_PRELOAD="$(cc -print-file-name=libasan.so)" \
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 PYTHONPATH="$PWD/python/src" \
    PLUGRT_CLI="$PWD/build-asan/tools/plugrt" \
    "$py/venv/bin/python" -m pytest -q -p no:cacheprovider python/tests
}

for s in format suite python_package tsan asan asan_python; do
  stage "$s"
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "==== test.sh: FAILED stages: ${failed[*]}"
  exit 1
fi
echo "==== test.sh: every stage passed"
