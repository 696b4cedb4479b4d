#!/usr/bin/env bash
# `plugrt build --timing-cache FILE` on the CPU: a missing FILE is created
# by the build; a FILE that is not a timing cache fails the build (exit 1)
# with an error naming it, and is left as it was; a FIFO or a directory
# fails at once, saying what it is.
#
# The builder reads and writes the file (prt_builder_config_set_timing_
# cache_file). Until it does, a build leaves a missing cache missing and a
# garbage one untouched and succeeds; this test then reports itself skipped,
# saying so, rather than passing a check it did not make.
. "$(dirname "$0")/common.sh"

have_onnx || skip "plugrt was built without the ONNX importer"
expect_rc 0 make_model "$PYTHON" "$SRC/make_nonzero_model.py" model 4 5 || finish
profile=(--min-shapes X:1x1 --opt-shapes X:4x5 --max-shapes X:8x8)

# A new cache: the build writes it, and says so.
rm -f new.cache
expect_rc 0 build_new "$PLUGRT" build model/model.onnx -o new.plan "${profile[@]}" --autotune \
  --timing-cache new.cache || finish
expect_grep "^  timing cache new.cache: none before the build, " build_new.out
if [ ! -f new.cache ]; then
  grep -q "none after" build_new.out || fail "the summary does not say the cache is missing"
  finish_skip=1
else
  expect_grep "^  timing cache new.cache: none before the build, [0-9]+ after$" build_new.out
  # Again: the build reads it (and says how big it was).
  size=$(stat -c %s new.cache)
  expect_rc 0 build_again "$PLUGRT" build model/model.onnx -o again.plan "${profile[@]}" \
    --autotune --timing-cache new.cache &&
    expect_grep "^  timing cache new.cache: $size bytes before the build" build_again.out
fi

# Not a timing cache: exit 1 naming the file; the file is not replaced.
printf 'this is not a timing cache\n' >bad.cache
cp bad.cache bad.cache.orig
run_cmd build_bad "$PLUGRT" build model/model.onnx -o bad.plan "${profile[@]}" --autotune \
  --timing-cache bad.cache
if [ "$rc" = 0 ] && cmp -s bad.cache bad.cache.orig && [ "${finish_skip:-0}" = 1 ]; then
  [ "$failures" = 0 ] || finish
  skip "the builder does not read or write timing caches yet (a garbage cache is accepted and left alone)"
fi
if [ "$rc" != 1 ]; then
  fail "build with a garbage timing cache: exit status $rc, expected 1"
  sed 's/^/    stderr: /' build_bad.err | head -5 >&2
else
  expect_grep "error: .*bad\.cache" build_bad.err "the error names the file"
  expect_grep "PRT_ERR_MALFORMED" build_bad.err "a damaged cache is PRT_ERR_MALFORMED"
  expect_grep "delete it to start a new one" build_bad.err "the hint"
  [ -e bad.plan ] && fail "a failed build left bad.plan"
fi
cmp -s bad.cache bad.cache.orig || fail "the build replaced the garbage cache"

# Not a regular file: a FIFO fails at once (the build waited for a writer
# forever; timeout makes that a failure, 124), a directory says it is one
# (it was "out of memory"); neither gets the hint about damaged caches.
rm -rf fifo.cache dir.cache
mkfifo fifo.cache && mkdir dir.cache
for kind in fifo dir; do
  expect_rc 1 "build_$kind" timeout 60 "$PLUGRT" build model/model.onnx -o "$kind.plan" \
    "${profile[@]}" --autotune --timing-cache "$kind.cache" || continue
  expect_grep "timing cache '$kind\.cache': cannot read it: it is a $([ $kind = fifo ] &&
    echo FIFO || echo directory), not a regular file \[PRT_ERR_IO\]" "build_$kind.err"
  grep -q "delete it to start a new one" "build_$kind.err" && fail "build_$kind: the hint"
done
[ -p fifo.cache ] && [ -d dir.cache ] || fail "the build replaced the FIFO or the directory"

finish
