#!/usr/bin/env bash
# `plugrt check --python MODULE[:NAME]` on the Python plugins of
# python/tests/check_plugins.py, with the plugrt package from the source
# tree over this build's libraries (PLUGRT_LIBRARY_DIR, libplugrt_check.so
# in its tools/): the program runs `python3 -m plugrt.check`, which gives
# every verdict (python/tests/test_check.py tests that command itself).
. "$COMMON"

"$PYTHON" -c "import numpy" 2>/dev/null || skip "$PYTHON has no numpy"
export PLUGRT_PYTHON="$PYTHON" PYTHONPATH="$PY_SRC:$PY_TESTS"

# A good decorator plugin: exit 0, its run-time checks run.
expect_rc 0 affine "$PLUGRT" check --python check_plugins:pcheck::affine && {
  expect_grep "^plugrt check python:check_plugins:pcheck::affine: 1 creator" affine.out
  for c in coverage bounds repeat clone serialize contexts threads tactics errors; do
    expect_grep "^  pass  $c " affine.out "affine: $c"
  done
}
# A class plugin whose enqueue writes nothing; --python=MODULE and options
# on either side of it.
expect_rc 1 lazy "$PLUGRT" check --seed 3 --python=check_plugins:pcheck::Lazy --iterations 2 &&
  expect_grep "^  FAIL  coverage +out0 element [0-9]+ of [0-9]+ was not written" lazy.out
expect_rc 1 drifting "$PLUGRT" check --python check_plugins:pcheck::drifting &&
  expect_grep "^  FAIL  repeat +run [0-9]+ of [0-9]+ on the same inputs.* differs" drifting.out

# Modules that give nothing to check.
printf 'import plugrt\n' > pc_nothing.py
expect_rc 1 nothing env PYTHONPATH="$PYTHONPATH:$WORK" "$PLUGRT" check --python pc_nothing &&
  expect_grep "importing pc_nothing registers no Python plugin" nothing.err
expect_rc 1 no_module "$PLUGRT" check --python pc_not_a_module &&
  expect_grep "cannot import pc_not_a_module: ModuleNotFoundError" no_module.err
# Usage, and a Python that is not there.
expect_rc 2 no_value "$PLUGRT" check --python &&
  expect_grep "needs a module" no_value.err
expect_rc 1 no_python env PLUGRT_PYTHON=/nonexistent/python3 "$PLUGRT" check --python check_plugins &&
  expect_grep "cannot run /nonexistent/python3 .*PLUGRT_PYTHON" no_python.err
"$PLUGRT" check --help > help.out 2>&1
expect_grep "^  --python MODULE\[:NAME\]" help.out "--help"

finish
