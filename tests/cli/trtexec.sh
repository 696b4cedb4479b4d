#!/usr/bin/env bash
# trtexec's spellings in `plugrt build` and `plugrt run`: each alias does
# what plugrt's own option does (the same plan, the same output files, the
# same layer profile), an alias without an equivalent is a usage error that
# says why, and --help lists them in one table. Also "did you mean" for an
# unknown option or command.
. "$(dirname "$0")/common.sh"

# Suggestions need no model.
expect_rc 2 typo_opt "$PLUGRT" build m.onnx --saveEngin m.plan &&
  expect_grep "unknown option '--saveEngin'; did you mean '--saveEngine'\?" typo_opt.err
expect_rc 2 typo_opt_eq "$PLUGRT" run m.plan --iteration=3 &&
  expect_grep "unknown option '--iteration'; did you mean '--iterations'\?" typo_opt_eq.err
expect_rc 2 typo_cmd "$PLUGRT" biuld m.onnx &&
  expect_grep "unknown command 'biuld'; did you mean 'build'\?" typo_cmd.err
expect_rc 2 typo_help "$PLUGRT" help inspekt &&
  expect_grep "did you mean 'inspect'\?" typo_help.err
# Nothing near: no suggestion.
expect_rc 2 far_cmd "$PLUGRT" frobnicate &&
  grep -q "did you mean" far_cmd.err && fail "a suggestion for 'frobnicate'"

# The help tables.
expect_rc 0 run_help "$PLUGRT" run --help && {
  expect_grep "^trtexec's spellings" run_help.out
  for o in --onnx --loadEngine --saveEngine --minShapes --optShapes --maxShapes \
    --dumpProfile --exportProfile --loadInputs --exportOutput --useCudaGraph \
    --iterations --warmUp --avgRuns --staticPlugins --dynamicPlugins --fp16 --best; do
    expect_grep "^  $o " run_help.out "run's table: $o"
  done
  expect_grep "^  --useCudaGraph +--cuda-graph " run_help.out
}
expect_rc 0 build_help "$PLUGRT" build --help && {
  expect_grep "^  --saveEngine +--output " build_help.out
  expect_grep "^  --minShapes +--min-shapes " build_help.out
  expect_grep "^  --onnx +\(the model\) +FILE: the ONNX model to build$" build_help.out
}

# No equivalent: exit 2, the reason, and what to use.
expect_rc 2 run_save "$PLUGRT" run m.onnx --saveEngine=m.plan &&
  expect_grep "\-\-saveEngine \(trtexec's option\) has no equivalent in plugrt run: .*plugrt build" \
    run_save.err
expect_rc 2 run_warmup "$PLUGRT" run m.plan --warmUp=200 &&
  expect_grep "use --warmup N" run_warmup.err
expect_rc 2 run_avg "$PLUGRT" run m.plan --avgRuns 10 && expect_grep "avgRuns" run_avg.err
expect_rc 2 run_export_out "$PLUGRT" run m.plan --exportOutput=o.json &&
  expect_grep "\-\-output-dir" run_export_out.err
expect_rc 2 run_min "$PLUGRT" run m.onnx --minShapes=x:1x3 && expect_grep "\-\-shapes" run_min.err
expect_rc 2 build_iter "$PLUGRT" build m.onnx --iterations=5 &&
  expect_grep "runs nothing" build_iter.err
expect_rc 2 build_load "$PLUGRT" build --loadEngine=m.plan && expect_grep "plugrt run" build_load.err

have_onnx || skip "plugrt was built without the ONNX importer"
expect_rc 0 make_model "$PYTHON" "$SRC/make_nonzero_model.py" model 13 11 || finish

# build: the same plan from either spelling.
expect_rc 0 build_own "$PLUGRT" build model/model.onnx -o own.plan --plugins "$PLUGINS_LIB" \
  --min-shapes X:1x1 --opt-shapes X:8x8 --max-shapes X:16x16
expect_rc 0 build_trt "$PLUGRT" build --onnx=model/model.onnx --saveEngine trt.plan \
  --staticPlugins="$PLUGINS_LIB" --minShapes=X:1x1 --optShapes "'X':8x8" --maxShapes=X:16x16
cmp -s own.plan trt.plan || fail "the trtexec spelling built a different plan"
expect_rc 0 build_dyn "$PLUGRT" build --onnx model/model.onnx --saveEngine=dyn.plan \
  --dynamicPlugins "$PLUGINS_LIB" --minShapes=X:1x1 --optShapes=X:8x8 --maxShapes=X:16x16
cmp -s own.plan dyn.plan || fail "--dynamicPlugins built a different plan"
# trtexec's --shapes alone builds a static profile, as --opt-shapes alone does.
expect_rc 0 build_opt "$PLUGRT" build model/model.onnx -o opt.plan --opt-shapes X:8x8
expect_rc 0 build_shapes "$PLUGRT" build model/model.onnx -o shapes.plan --shapes=X:8x8
cmp -s opt.plan shapes.plan || fail "build --shapes built another plan than --opt-shapes"
expect_rc 0 inspect_shapes "$PLUGRT" inspect shapes.plan &&
  expect_grep "^    input X  min 8x8  opt 8x8  max 8x8$" inspect_shapes.out
# --fp16 and --best say what they do.
expect_rc 0 build_fp16 "$PLUGRT" build model/model.onnx -o fp16.plan --fp16 \
  --max-shapes X:16x16 && expect_grep "reduced-precision" build_fp16.err
expect_rc 0 build_best "$PLUGRT" build model/model.onnx -o best.plan --best \
  --max-shapes X:16x16 && expect_grep "reduced-precision" build_best.err
cmp -s fp16.plan best.plan || fail "--best built another plan than --fp16"

# run: the same outputs and layer profile from either spelling.
expect_rc 0 run_own "$PLUGRT" run own.plan --input X=model/x.npy --output-dir out_own \
  --iterations 3 --profile-layers --profile-json own_profile.json
expect_rc 0 run_trt "$PLUGRT" run --loadEngine=own.plan --loadInputs=X:model/x.npy \
  --output-dir out_trt --iterations=3 --exportProfile=trt_profile.json
expect_rc 0 run_quoted "$PLUGRT" run --loadEngine own.plan --loadInputs "'X':model/x.npy" \
  --output-dir out_quoted --dumpProfile
expect_rc 0 run_onnx "$PLUGRT" run --onnx=model/model.onnx --loadInputs X:model/x.npy \
  --output-dir out_onnx --best && expect_grep "reduced-precision" run_onnx.err
for o in output_Y.npy output_K.npy; do
  for d in out_trt out_quoted out_onnx; do
    cmp -s "out_own/$o" "$d/$o" || fail "$d/$o differs from plugrt's own spelling's"
  done
done
expect_rc 0 profiles "$PYTHON" - own_profile.json trt_profile.json <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
def names(d):
    return sorted((l["index"], l["name"]) for l in d["layers"])
assert names(a) == names(b) and names(a), (names(a), names(b))
assert a["runs"] == b["runs"] == 3, (a["runs"], b["runs"])
EOF
# --dumpProfile prints the table --profile-layers prints.
for f in run_own.out run_quoted.out; do
  expect_grep "^layer profile \([0-9]+ runs per layer; slowest first\):$" "$f"
  expect_grep "^ +[0-9]+\.[0-9]{4} +[0-9]+\.[0-9]{4} +[0-9]+\.[0-9]%  nonzero \(" "$f"
done
# --optShapes runs at those shapes, as --shapes does.
expect_rc 0 run_shapes "$PLUGRT" run own.plan --random-inputs --seed 3 --shapes X:5x6 \
  --output-dir out_shapes
expect_rc 0 run_opt "$PLUGRT" run own.plan --random-inputs --seed 3 --optShapes=X:5x6 \
  --output-dir out_opt
cmp -s out_shapes/output_Y.npy out_opt/output_Y.npy || fail "--optShapes ran other shapes"
# --useCudaGraph is --cuda-graph: the same outcome (on a CPU plan, the
# same refusal).
run_cmd graph_own "$PLUGRT" run own.plan --input X=model/x.npy --cuda-graph
rc_own=$rc
run_cmd graph_trt "$PLUGRT" run own.plan --input X=model/x.npy --useCudaGraph
[ "$rc" = "$rc_own" ] || fail "--useCudaGraph exit $rc, --cuda-graph $rc_own"
[ "$(grep -c error graph_own.err)" = "$(grep -c error graph_trt.err)" ] ||
  fail "--useCudaGraph and --cuda-graph report differently"
# trtexec's raw binary input files are refused, not misread.
head -c 64 /dev/zero >x.bin
expect_rc 1 raw_input "$PLUGRT" run own.plan --loadInputs=X:x.bin &&
  expect_grep "x.bin: not a .npy file" raw_input.err
# A bad --loadInputs item is a usage error naming it.
expect_rc 2 bad_load "$PLUGRT" run own.plan --loadInputs=X && expect_grep "NAME:FILE" bad_load.err
expect_rc 2 dup_load "$PLUGRT" run own.plan --loadInputs=X:a.npy,X:b.npy &&
  expect_grep "given twice" dup_load.err

finish
