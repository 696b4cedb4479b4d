# Helpers for the plugrt CLI tests (sourced by each test script).
#
# Environment (set by tests/cli/CMakeLists.txt):
#   PLUGRT      the plugrt program
#   PLUGINS_LIB the standard plugin library
#   MODELS      the shared test models (shared/models beside the repo)
#   PYTHON      /usr/bin/python3 (with numpy and onnx)
#   NPY_CHECK   the .npy helper (tests/cli/npy_check.c)
#   MAKE_PLAN   writes plans through the C API (tests/cli/make_plan.c)
#   FAILMALLOC  the allocation-failure shim (tests/cli/failmalloc.c); empty
#               under the sanitizers
#   WORK        a scratch directory of this test
#   SRC         tests/cli in the source tree
set -u

# A GPU machine's numpy may be only in the python3 on PATH, not in the
# interpreter the build found.
if [ -n "${PYTHON:-}" ] && ! "$PYTHON" -c "import numpy" 2>/dev/null &&
  python3 -c "import numpy" 2>/dev/null; then
  PYTHON=python3
fi

SKIP=77
failures=0

mkdir -p "$WORK"
cd "$WORK" || exit 1

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

skip() {
  echo "SKIP: $*"
  exit $SKIP
}

# run_cmd NAME CMD...: runs CMD, stdout in NAME.out, stderr in NAME.err,
# exit status in $rc.
run_cmd() {
  local name=$1
  shift
  "$@" >"$name.out" 2>"$name.err"
  rc=$?
}

# expect_rc WANT NAME CMD...: runs CMD and checks its exit status.
expect_rc() {
  local want=$1 name=$2
  shift 2
  run_cmd "$name" "$@"
  if [ "$rc" != "$want" ]; then
    fail "$name: exit status $rc, expected $want: $*"
    sed 's/^/    stdout: /' "$name.out" | head -20 >&2
    sed 's/^/    stderr: /' "$name.err" | head -20 >&2
    return 1
  fi
  return 0
}

# expect_grep PATTERN FILE [WHAT]: FILE contains the extended regex.
expect_grep() {
  if ! grep -Eq -- "$1" "$2"; then
    fail "${3:-$2}: no line matches /$1/"
    sed 's/^/    | /' "$2" | head -20 >&2
    return 1
  fi
  return 0
}

have_onnx() {
  "$PLUGRT" build --help >/dev/null 2>&1 || return 1
  "$PLUGRT" build /nonexistent.onnx 2>&1 | grep -q "without the ONNX importer" && return 1
  return 0
}

finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed" >&2
    exit 1
  fi
  echo "all checks passed"
  exit 0
}
