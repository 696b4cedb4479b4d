#!/usr/bin/env bash
# What `plugrt run` makes of its arguments against a model: an input given
# twice and --shapes for a name that is no input are usage errors naming
# it; --memory-limit bounds each context's memory; an input whose profile
# fixes its shape needs no --shapes for random data; a shape input stays on
# the host while the other inputs go to device memory.
. "$(dirname "$0")/common.sh"

# x (float32 1x4) -> Relu -> Relu -> y; then one whose context needs 4 MiB.
expect_rc 0 make_small "$MAKE_PLAN" small.plan 4 || finish
expect_rc 0 make_big "$MAKE_PLAN" big.plan 1048576 || finish

# -i NAME=... twice, in either spelling: exit 2 naming NAME, whichever files.
expect_rc 2 input_twice "$PLUGRT" run small.plan -i x=a.npy --input x=b.npy &&
  expect_grep "\-\-input x is given twice" input_twice.err &&
  expect_grep "a\.npy.*b\.npy" input_twice.err
expect_rc 2 input_twice_eq "$PLUGRT" run small.plan --input=x=a.npy -i x=a.npy &&
  expect_grep "\-\-input x is given twice" input_twice_eq.err
# A name that is a prefix of another is another name.
"$PYTHON" -c 'import numpy as np; np.save("x.npy", np.ones((1, 4), np.float32))'
expect_rc 1 input_prefix "$PLUGRT" run small.plan -i x=x.npy -i xx=x.npy &&
  expect_grep "\-\-input xx: the model has no input" input_prefix.err

# --shapes for a name the plan does not have: exit 2 naming it, with the
# inputs it has.
expect_rc 2 shapes_unknown "$PLUGRT" run small.plan --random-inputs --shapes bogus:1x4 &&
  expect_grep "\-\-shapes bogus: the model has no input" shapes_unknown.err &&
  expect_grep "inputs: x \(float32 1x4\)" shapes_unknown.err
expect_rc 2 shapes_one_unknown "$PLUGRT" run small.plan --random-inputs --shapes x:1x4,y:1x4 &&
  expect_grep "\-\-shapes y: the model has no input" shapes_one_unknown.err
expect_rc 0 shapes_known "$PLUGRT" run small.plan --random-inputs --shapes x:1x4 -n 1

# --memory-limit: under what the engine needs, a clear failure saying both
# sizes; at or over it, a run; garbage, a usage error.
expect_rc 1 limit_low "$PLUGRT" run big.plan --random-inputs -n 1 --memory-limit 1M &&
  expect_grep "4194304 bytes" limit_low.err &&
  expect_grep "needs 4\.0 MiB per context and --memory-limit allows 1\.0 MiB" limit_low.err
expect_rc 1 limit_low_threads "$PLUGRT" run big.plan --random-inputs -n 1 --threads 2 \
  --memory-limit 4095KiB && expect_grep "memory-limit" limit_low_threads.err
for v in 4M 4MiB 4096K 4096KiB 4194304 1G 1GiB 1.5G; do
  expect_rc 0 "limit_$v" "$PLUGRT" run big.plan --random-inputs -n 1 --warmup 0 \
    --memory-limit "$v"
done
for v in 12parsecs -1M 0 0K "" 1e6 0x100000 " 1M" 1..5M M; do
  expect_rc 2 "limit_bad_$v" "$PLUGRT" run big.plan --random-inputs --memory-limit "$v" &&
    expect_grep "\-\-memory-limit" "limit_bad_$v.err"
done
expect_rc 0 help "$PLUGRT" run --help && expect_grep "^  --memory-limit SIZE" help.out

# y = Reshape(x, s) with s a shape input: s is bound to its host data (the
# runtime reads its values there), x to a device copy; y comes back at its
# true shape from memory of its upper bound (6 x 6).
expect_rc 0 make_reshape "$MAKE_PLAN" reshape.plan 6 reshape || finish
"$PYTHON" -c 'import numpy as np
np.save("rx.npy", np.arange(6, dtype=np.float32).reshape(1, 6))
np.save("rs.npy", np.array([3, 2], np.int64))'
expect_rc 0 reshape "$PLUGRT" run reshape.plan -i x=rx.npy -i s=rs.npy -o reshape_out -n 2 \
  --threads 2 && {
  expect_grep "^  s +int64 +2 +rs\.npy \(shape input: read on the host\)$" reshape.out
  expect_grep "^  x +float32 +1x6 +rx\.npy$" reshape.out
  expect_grep "^  y +float32 +3x2 -> reshape_out/output_y\.npy$" reshape.out
  expect_rc 0 reshape_check "$PYTHON" -c 'import numpy as np
y = np.load("reshape_out/output_y.npy")
assert y.dtype == np.float32 and (y == np.arange(6, dtype=np.float32).reshape(3, 2)).all(), y'
}
# Values outside the profile's bounds (1..6): the runtime's error, exit 1.
"$PYTHON" -c 'import numpy as np; np.save("rs_big.npy", np.array([1, 7], np.int64))'
expect_rc 1 reshape_bounds "$PLUGRT" run reshape.plan -i x=rx.npy -i s=rs_big.npy -n 1 &&
  expect_grep "shape input 's': value 1 is 7, outside profile 0's 1\.\.6" reshape_bounds.err

if have_onnx; then
  expect_rc 0 make_model "$PYTHON" "$SRC/make_nonzero_model.py" model 4 5 || finish
  # ONNX: --shapes feeds the profile; an unknown name is the same usage error.
  expect_rc 2 onnx_shapes_unknown "$PLUGRT" run model/model.onnx --random-inputs \
    --shapes X:4x5,bogus:1 && expect_grep "\-\-shapes bogus: the model has no input" \
    onnx_shapes_unknown.err && expect_grep "inputs: X" onnx_shapes_unknown.err
  expect_rc 2 onnx_input_twice "$PLUGRT" run model/model.onnx -i X=model/x.npy \
    -i X=model/x.npy && expect_grep "\-\-input X is given twice" onnx_input_twice.err

  # Only --opt-shapes: min = opt = max, so the profile fixes X at 4x5 and
  # random data needs no --shapes.
  expect_rc 0 build_fixed "$PLUGRT" build model/model.onnx -o fixed.plan --opt-shapes X:4x5 &&
    expect_rc 0 run_fixed "$PLUGRT" run fixed.plan --random-inputs -n 1 --warmup 0 &&
    expect_grep "^  X +float32 +4x5 +random$" run_fixed.out
  # --shapes must agree with the fixed shape.
  expect_rc 1 run_fixed_other "$PLUGRT" run fixed.plan --random-inputs --shapes X:3x5 -n 1 &&
    expect_grep "outside profile" run_fixed_other.err
  # A profile that does not fix the shape still asks for it.
  expect_rc 0 build_range "$PLUGRT" build model/model.onnx -o range.plan \
    --min-shapes X:1x5 --opt-shapes X:4x5 --max-shapes X:8x5 &&
    expect_rc 1 run_range "$PLUGRT" run range.plan --random-inputs -n 1 &&
    expect_grep "give its shape for random data with --shapes X:DIMS" run_range.err
fi

finish
