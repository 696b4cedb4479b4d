#!/usr/bin/env bash
# Exit codes and messages of wrong usage; --help of every subcommand;
# `plugrt plugins` on the standard library.
. "$(dirname "$0")/common.sh"

# --help exits 0 and prints a usage line, for the program and every command.
expect_rc 0 help "$PLUGRT" --help && expect_grep "^Usage: plugrt" help.out
for cmd in build run inspect plugins devices; do
  expect_rc 0 "help_$cmd" "$PLUGRT" "$cmd" --help &&
    expect_grep "^Usage: plugrt $cmd" "help_$cmd.out"
  expect_rc 0 "help_h_$cmd" "$PLUGRT" "$cmd" -h
  expect_rc 0 "help_word_$cmd" "$PLUGRT" help "$cmd"
done
expect_rc 0 version "$PLUGRT" --version && expect_grep "^plugrt [0-9]+\.[0-9]+\.[0-9]+" version.out

# Wrong usage: exit 2 with a message and a hint.
expect_rc 2 no_args "$PLUGRT"
expect_rc 2 unknown_cmd "$PLUGRT" frobnicate &&
  expect_grep "unknown command 'frobnicate'" unknown_cmd.err &&
  expect_grep "plugrt --help" unknown_cmd.err
expect_rc 2 unknown_top_flag "$PLUGRT" --frobnicate &&
  expect_grep "unknown option '--frobnicate'" unknown_top_flag.err
for cmd in build run inspect plugins devices; do
  expect_rc 2 "unknown_flag_$cmd" "$PLUGRT" "$cmd" --no-such-flag x &&
    expect_grep "unknown option '--no-such-flag'" "unknown_flag_$cmd.err" &&
    expect_grep "Try 'plugrt $cmd --help'" "unknown_flag_$cmd.err"
done
expect_rc 2 build_no_model "$PLUGRT" build && expect_grep "missing the model" build_no_model.err
expect_rc 2 run_no_model "$PLUGRT" run && expect_grep "missing the model" run_no_model.err
expect_rc 2 inspect_no_plan "$PLUGRT" inspect && expect_grep "missing the plan" inspect_no_plan.err
expect_rc 2 missing_value "$PLUGRT" build m.onnx -o && expect_grep "needs a value" missing_value.err
expect_rc 2 missing_value_run "$PLUGRT" run m.plan --iterations &&
  expect_grep "option --iterations needs a value" missing_value_run.err
expect_rc 2 bad_int "$PLUGRT" run m.plan --threads zero && expect_grep "not an integer" bad_int.err
expect_rc 2 bad_range "$PLUGRT" run m.plan --iterations 0 && expect_grep "out of range" bad_range.err
expect_rc 2 bad_input "$PLUGRT" run m.plan --input x.npy && expect_grep "NAME=FILE.npy" bad_input.err
expect_rc 2 bad_shapes "$PLUGRT" run m.plan --shapes x:1xq && expect_grep "not a shape" bad_shapes.err
expect_rc 2 bad_shapes2 "$PLUGRT" build m.onnx --opt-shapes 1x3 && expect_grep "name:dims" bad_shapes2.err
expect_rc 2 bad_size "$PLUGRT" build m.onnx --workspace 12parsecs && expect_grep "unknown unit" bad_size.err
expect_rc 2 bad_device "$PLUGRT" build m.onnx --device tpu && expect_grep "not cpu or cuda" bad_device.err
expect_rc 2 bad_device_run "$PLUGRT" run m.plan --device tpu &&
  expect_grep "\-\-device: 'tpu' is not cpu or cuda" bad_device_run.err
expect_rc 2 devices_arg "$PLUGRT" devices cuda && expect_grep "unexpected argument 'cuda'" devices_arg.err
expect_rc 2 cache_is_plan "$PLUGRT" build m.onnx -o m.plan --timing-cache m.plan &&
  expect_grep "\-\-timing-cache m.plan is also the plan" cache_is_plan.err
expect_rc 2 bad_plugin_op "$PLUGRT" build m.onnx --plugin-op Hardmax && expect_grep "Op=Plugin" bad_plugin_op.err
expect_rc 2 bad_tol "$PLUGRT" run m.plan --atol -1 && expect_grep "non-negative" bad_tol.err
expect_rc 2 flag_value "$PLUGRT" build m.onnx --autotune=yes && expect_grep "takes no value" flag_value.err
expect_rc 2 two_models "$PLUGRT" run a.plan b.plan && expect_grep "one model at a time" two_models.err

# Job failures: exit 1, naming the file.
expect_rc 1 missing_plan "$PLUGRT" run does-not-exist.plan && expect_grep "does-not-exist.plan" missing_plan.err
expect_rc 1 missing_inspect "$PLUGRT" inspect does-not-exist.plan
printf 'not a plan at all' >garbage.plan
expect_rc 1 garbage_plan "$PLUGRT" inspect garbage.plan && expect_grep "garbage.plan" garbage_plan.err
# The library is named once (the prefix was printed twice, and the loader's
# "PATH: " a third time).
expect_rc 1 missing_lib "$PLUGRT" plugins ./no-such-lib.so && expect_grep \
  "^plugrt plugins: error: cannot load plugin library \./no-such-lib\.so: No such file or directory \[PRT_ERR_IO\]$" \
  missing_lib.err
expect_rc 1 searched_lib "$PLUGRT" build model.onnx --plugins no-such-lib.so && expect_grep \
  "^plugrt build: error: cannot load plugin library no-such-lib\.so: cannot open shared object file: No such file or directory \[PRT_ERR_IO\]$" \
  searched_lib.err

# The standard library offers five creators, with their fields.
expect_rc 0 plugins "$PLUGRT" plugins "$PLUGINS_LIB" && {
  expect_grep "5 creators" plugins.out
  for key in "NonZeroPlugin@1" "CustomHardmax@1" "example::circ_pad_plugin@1" "example::AddInPlace@1" \
    "example::QuantFC@1"; do
    expect_grep "^  $key\$" plugins.out "plugins lists $key"
  done
  expect_grep "rowOrder +int32\[1\]" plugins.out "NonZeroPlugin's rowOrder field"
  expect_grep "pads +int32\[\*\]" plugins.out "circ_pad_plugin's pads field"
}
# A bare file name means the file in the current directory (not a search).
expect_rc 0 plugins_bare bash -c 'cd "$(dirname "$1")" && "$2" plugins "$(basename "$1")"' _ \
  "$PLUGINS_LIB" "$PLUGRT" && expect_grep "5 creators" plugins_bare.out
# Without arguments: the standard library (compiled-in path).
expect_rc 0 plugins_default "$PLUGRT" plugins && expect_grep "5 creators" plugins_default.out
# PLUGRT_PLUGINS overrides it; empty means none.
expect_rc 1 plugins_env_none env PLUGRT_PLUGINS= "$PLUGRT" plugins &&
  expect_grep "no standard plugin library" plugins_env_none.err
expect_rc 0 plugins_json "$PLUGRT" plugins "$PLUGINS_LIB" --builtins --json &&
  expect_rc 0 plugins_json_parse "$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
keys = [c["key"] for c in d["libraries"][0]["creators"]]
assert len(keys) == 5, keys
assert "NonZeroPlugin@1" in keys, keys
nz = [c for c in d["libraries"][0]["creators"] if c["name"] == "NonZeroPlugin"][0]
assert {"name": "rowOrder", "type": "int32", "length": 1} .items() <= nz["fields"][0].items(), nz
assert isinstance(d["builtins"], list)
# Every built-in lists the devices it runs on, with their dtypes.
ops = {b["name"]: b for b in d["builtins"]}
assert set(ops["Relu"]["devices"]["cpu"]) == {"float32", "float16", "bfloat16", "int8", "int32", "int64", "float64", "int16"}, ops["Relu"]
# A device kernel takes the wide types (float64, int16, uint16/32/64) only where its table lists them.
assert set(ops["Relu"]["devices"].get("cuda", ["float32", "float16", "bfloat16", "int8", "int32", "int64"])) == {"float32", "float16", "bfloat16", "int8", "int32", "int64"}, ops["Relu"]
assert ops["Where"]["devices"]["cpu"] == ["float32", "float16", "bfloat16", "int8", "uint8", "int32", "int64", "bool", "float8e4m3fn", "float8e5m2", "float64", "int16", "uint16", "uint32", "uint64"], ops["Where"]
assert all(b["devices"].get("cpu") for b in d["builtins"]), [b["name"] for b in d["builtins"] if not b["devices"].get("cpu")]
assert all(set(b["devices"]) <= {"cpu", "cuda"} for b in d["builtins"])
' plugins_json.out
expect_rc 0 plugins_builtins "$PLUGRT" plugins --builtins &&
  expect_grep "^    runs on: cpu \(float32 float16 bfloat16 int8 int32 int64 float64 int16\)" plugins_builtins.out "Relu's devices"

finish
