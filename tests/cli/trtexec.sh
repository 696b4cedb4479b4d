#!/usr/bin/env bash
# trtexec's spellings in `plugrt build` and `plugrt run`: each alias does
# what plugrt's own option does (the same plan, the same output files, the
# same layer profile), an alias without an equivalent is a usage error that
# says why, and --help lists them in one table. Also "did you mean" for an
# unknown option or command. run's own trtexec options: --saveEngine writes
# build's bytes, --minShapes/--maxShapes build a range and run at the opt
# shapes, --exportOutput writes trtexec's JSON, --warmUp warms up for a
# duration, --avgRuns summarizes windows of runs.
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
  expect_grep "^  --saveEngine +FILE: write the plan built from the" run_help.out
  expect_grep "^  --warmUp +MS: untimed runs until MS milliseconds" run_help.out
  expect_grep "^  --avgRuns +N: also the means of windows of N" run_help.out
  expect_grep "^  --exportOutput +FILE: the outputs as trtexec's JSON" run_help.out
  grep -q "no equivalent" run_help.out && fail "run's table still refuses an option"
}
expect_rc 0 build_help "$PLUGRT" build --help && {
  expect_grep "^  --saveEngine +--output " build_help.out
  expect_grep "^  --minShapes +--min-shapes " build_help.out
  expect_grep "^  --onnx +\(the model\) +FILE: the ONNX model to build$" build_help.out
}

# No equivalent: exit 2, the reason, and what to use.
# run's trtexec options that cannot apply: exit 2, saying why.
expect_rc 2 run_save "$PLUGRT" run m.plan --saveEngine=n.plan &&
  expect_grep "\-\-saveEngine n.plan: m.plan is a plan, saved already" run_save.err
expect_rc 2 run_save_self "$PLUGRT" run m.onnx --saveEngine=m.onnx &&
  expect_grep "would overwrite the model" run_save_self.err
expect_rc 2 run_warmups "$PLUGRT" run m.plan --warmUp=200 --warmup 3 &&
  expect_grep "give one" run_warmups.err
expect_rc 2 run_avg "$PLUGRT" run m.plan --avgRuns 11 &&
  expect_grep "\-\-avgRuns 11: more than the 10 timed runs per thread" run_avg.err
expect_rc 2 run_avg0 "$PLUGRT" run m.plan --avgRuns 0 && expect_grep "avgRuns" run_avg0.err
expect_rc 2 run_warm_neg "$PLUGRT" run m.plan --warmUp=-1 && expect_grep "warmUp" run_warm_neg.err
expect_rc 2 run_layers_range "$PLUGRT" run m.onnx --compare-layers --maxShapes=x:4x3 &&
  expect_grep "\-\-compare-layers runs the model once" run_layers_range.err
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
# --fp16 and --best are the builder's precision flags (--best: --fp16 --tf32),
# which the plan records; NonZero's float input comes from the network and
# its outputs are integers, so no layer runs in float16 here.
expect_rc 0 build_fp16 "$PLUGRT" build model/model.onnx -o fp16.plan --fp16 \
  --max-shapes X:16x16 -v && expect_grep "0 of 1 layers run in float16" build_fp16.err
expect_rc 0 build_best "$PLUGRT" build model/model.onnx -o best.plan --best \
  --max-shapes X:16x16
expect_rc 0 inspect_fp16 "$PLUGRT" inspect fp16.plan &&
  expect_grep "^precision flags: fp16 " inspect_fp16.out
expect_rc 0 inspect_best "$PLUGRT" inspect best.plan &&
  expect_grep "^precision flags: fp16 tf32 " inspect_best.out

# run: the same outputs and layer profile from either spelling.
expect_rc 0 run_own "$PLUGRT" run own.plan --input X=model/x.npy --output-dir out_own \
  --iterations 3 --profile-layers --profile-json own_profile.json
expect_rc 0 run_trt "$PLUGRT" run --loadEngine=own.plan --loadInputs=X:model/x.npy \
  --output-dir out_trt --iterations=3 --exportProfile=trt_profile.json
expect_rc 0 run_quoted "$PLUGRT" run --loadEngine own.plan --loadInputs "'X':model/x.npy" \
  --output-dir out_quoted --dumpProfile
expect_rc 0 run_onnx "$PLUGRT" run --onnx=model/model.onnx --loadInputs X:model/x.npy \
  --output-dir out_onnx --best
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

# ---- run's own trtexec options ----------------------------------------------
# trtexec's commonest line: build with the profile, save the engine, run it
# at the opt shapes. The saved plan is byte for byte build's.
expect_rc 0 run_save_range "$PLUGRT" run --onnx=model/model.onnx --saveEngine=run.plan \
  --staticPlugins="$PLUGINS_LIB" --minShapes=X:1x1 --optShapes=X:8x8 --maxShapes=X:16x16 \
  --random-inputs -n 2 && {
  cmp -s own.plan run.plan || fail "run --saveEngine wrote another plan than build"
  expect_grep "^plan written to run.plan \($(wc -c <own.plan) bytes\)$" run_save_range.out
  expect_grep "^  X +float32 +8x8 +random$" run_save_range.out
}
# Without a range the profile is fixed at the data's shape: build --shapes's.
expect_rc 0 build_fixed "$PLUGRT" build model/model.onnx -o fixed.plan --shapes=X:13x11
expect_rc 0 run_save_fixed "$PLUGRT" run model/model.onnx --saveEngine fixed_run.plan \
  --input X=model/x.npy -n 1 &&
  { cmp -s fixed.plan fixed_run.plan || fail "run --saveEngine (fixed) differs from build's"; }
# The range with data: runs at the data's shape, the outputs the plan's.
expect_rc 0 run_range_data "$PLUGRT" run --onnx=model/model.onnx --minShapes=X:1x1 \
  --maxShapes=X:16x16 --loadInputs=X:model/x.npy --output-dir out_range -n 1
for o in output_Y.npy output_K.npy; do
  cmp -s "out_own/$o" "out_range/$o" || fail "the range's $o differs from the plan's"
done
# Shapes to run at outside the range or the plan's profile: exit 1, with it.
expect_rc 1 run_range_out "$PLUGRT" run model/model.onnx --minShapes=X:1x1 \
  --maxShapes=X:16x16 --random-inputs --shapes X:17x2 &&
  expect_grep "input X: its --shapes entry 17x2 is outside profile 0 of the engine built from the model \(min 1x1, opt 16x16, max 16x16\)" \
    run_range_out.err
expect_rc 1 plan_max_out "$PLUGRT" run own.plan --random-inputs --maxShapes=X:32x32 &&
  expect_grep "input X: its --maxShapes entry 32x32 is outside profile 0 of the plan \(min 1x1, opt 8x8, max 16x16\)" \
    plan_max_out.err && expect_grep "fixed when it is built" plan_max_out.err
expect_rc 1 plan_opt_out "$PLUGRT" run own.plan --random-inputs --minShapes=X:1x1 \
  --optShapes=X:20x2 --maxShapes=X:16x16 &&
  expect_grep "its --optShapes entry 20x2 is outside" plan_opt_out.err
expect_rc 1 plan_data_out "$PLUGRT" run fixed.plan --input X=model/x.npy --minShapes=X:1x1 \
  --maxShapes=X:13x11 && expect_grep "its --minShapes entry 1x1 is outside" plan_data_out.err
expect_rc 2 plan_unknown "$PLUGRT" run own.plan --random-inputs --maxShapes=Z:2x2 &&
  expect_grep "\-\-maxShapes Z: the model has no input of that name" plan_unknown.err
# A plan whose profile holds the range runs at its opt shapes (or, without
# --optShapes, the max, as build completes a profile).
expect_rc 0 plan_range "$PLUGRT" run own.plan --random-inputs --minShapes=X:2x2 \
  --optShapes=X:5x6 --maxShapes=X:12x12 -n 1 &&
  expect_grep "^  X +float32 +5x6 +random$" plan_range.out
expect_rc 0 plan_range_max "$PLUGRT" run own.plan --random-inputs --minShapes=X:2x2 \
  --maxShapes=X:12x12 -n 1 && expect_grep "^  X +float32 +12x12 +random$" plan_range_max.out

# --exportOutput: trtexec's JSON, equal to the .npy files of --output-dir;
# integers (nonzero's indices and count) and floats (a Sigmoid's, which
# must come back as the same float32 bits).
expect_rc 0 export_int "$PLUGRT" run own.plan --input X=model/x.npy --exportOutput=int.json \
  --output-dir out_int -n 1
expect_rc 0 make_float "$PYTHON" - <<'EOF'
import numpy as np
from onnx import TensorProto, helper, save
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])
g = helper.make_graph([helper.make_node("Sigmoid", ["x"], ["y"])], "g", [x], [y])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "float.onnx")
x = np.random.default_rng(5).standard_normal((4, 3)).astype(np.float32) * 7
np.save("xf.npy", x)
EOF
expect_rc 0 export_float "$PLUGRT" run float.onnx --loadInputs=x:xf.npy \
  --exportOutput=float.json --output-dir out_float -n 1
expect_rc 0 export_check "$PYTHON" - <<'EOF'
import json, numpy as np
for path, out in (("int.json", "out_int"), ("float.json", "out_float")):
    doc = json.load(open(path))
    assert isinstance(doc, list) and doc, doc
    for o in doc:
        assert sorted(o) == ["dimensions", "name", "values"], o
        ref = np.load("%s/output_%s.npy" % (out, o["name"]))
        dims = [int(d) for d in o["dimensions"].split("x")] if o["dimensions"] else []
        assert dims == list(ref.shape), (o["name"], dims, ref.shape)
        got = np.array(o["values"], dtype=ref.dtype).reshape(dims)
        assert got.tobytes() == ref.tobytes(), (path, o["name"])
names = [o["name"] for o in json.load(open("int.json"))]
assert names == ["Y", "K"], names
# Not all trivially short: the float32 values need their 9 digits.
vals = json.load(open("float.json"))[0]["values"]
assert any(len(repr(v)) > 10 for v in vals), vals
EOF
expect_rc 1 export_dir "$PLUGRT" run own.plan --input X=model/x.npy --exportOutput=. -n 1 &&
  expect_grep "\-\-exportOutput: cannot create" export_dir.err

# --warmUp: a duration; at least one warm-up run, counted in the report.
expect_rc 0 warm_ms "$PLUGRT" run own.plan --input X=model/x.npy --warmUp=2 -n 3 \
  --exportProfile=warm_profile.json &&
  expect_grep "after [1-9][0-9]* warmup in [0-9.]+ ms \(--warmUp 2\)" warm_ms.out
expect_rc 0 warm_json "$PLUGRT" run own.plan --input X=model/x.npy --warmUp 0 -n 3 --json
expect_rc 0 warm_check "$PYTHON" - warm_json.out warm_profile.json <<'EOF'
import json, sys
doc, prof = (json.load(open(p)) for p in sys.argv[1:])
# 0 ms: the one run a duration always makes.
assert doc["warmup"] == 1 and doc["warmup_duration_ms"] == 0, doc
# The layer profile keeps the timed runs, however many warm-ups came first.
assert prof["runs"] == 3, prof["runs"]
EOF

# --avgRuns: the means of windows of consecutive runs. Windows of one run
# are the runs themselves: the same min, median and max.
expect_rc 0 avg1 "$PLUGRT" run own.plan --input X=model/x.npy -n 6 --avgRuns=1 --json
expect_rc 0 avg4 "$PLUGRT" run own.plan --input X=model/x.npy -n 10 --threads 2 --avgRuns 4 && {
  expect_grep "^averages of 4 consecutive runs \(4 windows; trtexec's --avgRuns\)" avg4.out
  expect_grep "^  latency \(ms\): min [0-9.]+, median [0-9.]+, max [0-9.]+, mean [0-9.]+$" \
    avg4.out
}
expect_rc 0 avg_check "$PYTHON" - avg1.out <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
avg, lat = doc["avg_runs"], doc["latency_ms"]
assert avg["runs"] == 1 and avg["windows"] == 6, avg
for k in ("min", "median", "max"):
    assert avg["latency_ms"][k] == lat[k], (k, avg, lat)
EOF

# trtexec's raw binary input files are refused, not misread.
head -c 64 /dev/zero >x.bin
expect_rc 1 raw_input "$PLUGRT" run own.plan --loadInputs=X:x.bin &&
  expect_grep "x.bin: not a .npy file" raw_input.err
# A bad --loadInputs item is a usage error naming it.
expect_rc 2 bad_load "$PLUGRT" run own.plan --loadInputs=X && expect_grep "NAME:FILE" bad_load.err
expect_rc 2 dup_load "$PLUGRT" run own.plan --loadInputs=X:a.npy,X:b.npy &&
  expect_grep "given twice" dup_load.err

finish
