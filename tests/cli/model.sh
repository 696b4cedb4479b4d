#!/usr/bin/env bash
# One shared model end to end: `plugrt build` to a plan, `plugrt run --compare`
# on the plan, and `plugrt run MODEL.onnx --compare DIR` straight from ONNX on
# two threads.
#
#   model.sh NAME OPTIONAL(0|1) [--build-args ...] [--run-args ...]
#
# OPTIONAL=1: a model whose ops may not all be implemented yet; the test is
# skipped (CTest SKIP) when the importer says an op is unsupported.
. "$(dirname "$0")/common.sh"

name=$1 optional=$2
shift 2
build_args=() run_args=() dest=build_args
for a in "$@"; do
  case "$a" in
    --build-args) dest=build_args ;;
    --run-args) dest=run_args ;;
    *) eval "$dest+=(\"\$a\")" ;;
  esac
done

model="$MODELS/$name.onnx"
data="$MODELS/$name.data"
[ -f "$model" ] && [ -d "$data" ] || skip "$model or $data not found (shared/ beside the repo)"
have_onnx || skip "plugrt was built without the ONNX importer"

run_cmd build "$PLUGRT" build "$model" -o "$name.plan" "${build_args[@]}"
if [ "$rc" != 0 ]; then
  if [ "$optional" = 1 ] && grep -q "cannot import.*\[PRT_ERR_UNSUPPORTED\]" build.err; then
    skip "$name needs an op plugrt does not have yet: $(grep -o "op '[^']*'" build.err | head -1)"
  fi
  fail "build: exit status $rc"
  sed 's/^/    /' build.err >&2
  finish
fi
expect_grep "^Built $name.plan" build.out "build summary"

expect_rc 0 run_plan "$PLUGRT" run "$name.plan" --compare "$data" --output-dir out \
  --iterations 2 --warmup 1 "${run_args[@]}" &&
  expect_grep "^PASSED" run_plan.out
expect_rc 0 run_onnx "$PLUGRT" run "$model" --compare "$data" --threads 2 --iterations 1 \
  --warmup 0 "${run_args[@]}" &&
  expect_grep "^PASSED" run_onnx.out
for f in "$data"/output_*.npy; do
  [ -f "out/$(basename "$f")" ] || fail "run did not write out/$(basename "$f")"
done

finish
