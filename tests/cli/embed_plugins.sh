#!/usr/bin/env bash
# plugrt build --embed-plugins: the plan carries its plugin library, and
# `plugrt run` in a process that never loads that library from a file runs
# it only when allowed (--allow-embedded-plugins / --allow-embedded-code),
# matching the normal plan's outputs and numpy's reference. Without the
# option it fails naming the library and the option; a library --plugins
# loads with the same hash serves instead, with no permission needed. A
# byte changed inside the carried library (the checksum made right again)
# is a hash error, a cut one a clear truncation; inspect lists the
# libraries and loads nothing.
. "$(dirname "$0")/common.sh"

have_onnx || skip "plugrt was built without the ONNX importer"
expect_rc 0 make_model "$PYTHON" "$SRC/make_nonzero_model.py" model || finish

# Every temporary copy goes here, so the test can see none is left.
mkdir -p tmp
export TMPDIR=$WORK/tmp

# The library is built from a copy that is deleted before the runs: the
# run cannot find the plugin in a file anywhere.
cp "$PLUGINS_LIB" ./libcopied_plugins.so
SHAPES=(--min-shapes X:1x1 --opt-shapes X:8x8 --max-shapes X:16x16)
expect_rc 0 build_plain "$PLUGRT" build model/model.onnx -o plain.plan "${SHAPES[@]}" \
  --no-default-plugins --plugins ./libcopied_plugins.so || finish
expect_rc 0 build_embed "$PLUGRT" build model/model.onnx -o embed.plan "${SHAPES[@]}" \
  --no-default-plugins --plugins ./libcopied_plugins.so --embed-plugins || finish
expect_grep "^  embedded     1 plugin library, .* in the plan$" build_embed.out "the summary"
rm -f libcopied_plugins.so

# A plan with zeros in it, so NonZero has something to do.
expect_rc 0 make_input "$PYTHON" - <<'EOF'
import numpy as np
rng = np.random.default_rng(7)
x = rng.standard_normal((9, 13)).astype(np.float32)
x[rng.random(x.shape) < 0.4] = 0
np.save("x.npy", x)
EOF

expect_rc 0 run_plain "$PLUGRT" run plain.plan --plugins "$PLUGINS_LIB" --no-default-plugins \
  -i X=x.npy -o out_plain -n 1
for opt in --allow-embedded-plugins --allow-embedded-code; do
  expect_rc 0 "run_embed$opt" "$PLUGRT" run embed.plan --no-default-plugins "$opt" \
    -i X=x.npy -o "out$opt" -n 1 &&
    expect_rc 0 "compare$opt" "$PYTHON" - "out$opt" <<'EOF'
import sys
import numpy as np
x = np.load("x.npy")
ref = np.argwhere(x != 0).astype(np.int32)  # row order, as the model asks
for d in ("out_plain", sys.argv[1]):
    y, k = np.load(d + "/output_Y.npy"), np.load(d + "/output_K.npy")
    assert int(k) == len(ref), (d, k, len(ref))
    assert np.array_equal(y, ref), (d, y[:5], ref[:5])
assert np.array_equal(np.load("out_plain/output_Y.npy"), np.load(sys.argv[1] + "/output_Y.npy"))
EOF
done
[ -z "$(ls -A tmp)" ] || fail "temporary copies left behind: $(ls -A tmp)"

# Not allowed: refused, naming the library and the option.
expect_rc 1 refused "$PLUGRT" run embed.plan --no-default-plugins -i X=x.npy -n 1 && {
  expect_grep "libcopied_plugins\.so \([0-9]+ bytes, content hash [0-9a-f]{16}\)" refused.err \
    "the library"
  expect_grep "\-\-allow-embedded-plugins" refused.err "the option"
}
# The caller's library of the same content hash takes precedence: nothing
# from the plan is loaded, so nothing needs allowing.
expect_rc 0 same_hash "$PLUGRT" run embed.plan --plugins "$PLUGINS_LIB" --no-default-plugins \
  -i X=x.npy -o out_same -n 1 &&
  cmp -s out_same/output_Y.npy out_plain/output_Y.npy || fail "same-hash run differs"
[ -z "$(ls -A tmp)" ] || fail "a copy was written although the caller held the library"

# inspect: the library's name, size and hash; the hash is the layer's; it
# loads nothing (no temporary copy).
expect_rc 0 inspect "$PLUGRT" inspect embed.plan --no-default-plugins && {
  expect_grep "^Embedded plugin libraries: 1 " inspect.out "the header"
  expect_grep "^  \[0\] libcopied_plugins\.so  .* \(([0-9]+) bytes\), content hash [0-9a-f]{16}$" \
    inspect.out "the library line"
}
expect_rc 0 inspect_json "$PLUGRT" inspect embed.plan --no-default-plugins --json &&
  expect_rc 0 inspect_json_check "$PYTHON" - inspect_json.out "$PLUGINS_LIB" <<'EOF'
import json, os, sys
d = json.load(open(sys.argv[1]))
libs = d["embedded_libraries"]
assert len(libs) == 1, libs
lib = libs[0]
assert lib["name"] == "libcopied_plugins.so", lib
assert lib["size_bytes"] == os.path.getsize(sys.argv[2]), lib
assert lib["source"] == "not_loaded", lib
nz = [l for l in d["layers"] if l["plugin"] == "NonZeroPlugin"][0]
assert nz["library_hash"] == lib["hash"], (nz, lib)
assert d["plugins_loaded"] is False and "allow" in d["load_error"], d
EOF
expect_rc 0 plain_json "$PLUGRT" inspect plain.plan --json &&
  expect_rc 0 plain_json_check "$PYTHON" -c \
    'import json,sys; assert json.load(open(sys.argv[1]))["embedded_libraries"] == []' \
    plain_json.out
[ -z "$(ls -A tmp)" ] || fail "inspect wrote a temporary copy"

# Damage. The library's bytes start at its ELF magic; changing one behind a
# checksum made right is the content hash's to catch, a cut file (checksum
# right again) the section's length, and plain damage the checksum.
expect_rc 0 damage "$PYTHON" - embed.plan <<'EOF'
import sys, zlib
b = bytearray(open(sys.argv[1], "rb").read())
at = b.find(b"\x7fELF")
assert at > 0
def fixed(body):
    return bytes(body) + zlib.crc32(bytes(body)).to_bytes(4, "little")
flip = bytearray(b[:-4]); flip[at + 4000] ^= 0x20
open("flip_fixed.plan", "wb").write(fixed(flip))
raw = bytearray(b); raw[at + 4000] ^= 0x20
open("flip_raw.plan", "wb").write(bytes(raw))
open("cut_fixed.plan", "wb").write(fixed(b[:at + 5000]))
open("cut_raw.plan", "wb").write(bytes(b[:at + 5000]))
EOF
expect_rc 1 flip_fixed "$PLUGRT" run flip_fixed.plan --no-default-plugins \
  --allow-embedded-plugins -i X=x.npy -n 1 &&
  expect_grep "embedded plugin library 0 \(libcopied_plugins\.so, [0-9]+ bytes\): its bytes do not hash to its content hash" \
    flip_fixed.err "the hash error"
expect_rc 1 flip_inspect "$PLUGRT" inspect flip_fixed.plan --no-default-plugins &&
  expect_grep "do not hash" flip_inspect.err "inspect's hash error"
expect_rc 1 flip_raw "$PLUGRT" run flip_raw.plan --no-default-plugins \
  --allow-embedded-plugins -i X=x.npy -n 1 && expect_grep "checksum mismatch" flip_raw.err
expect_rc 1 cut_fixed "$PLUGRT" run cut_fixed.plan --no-default-plugins \
  --allow-embedded-plugins -i X=x.npy -n 1 &&
  expect_grep "malformed engine: .*claims [0-9]+ bytes, but [0-9]+ are left" cut_fixed.err \
    "the truncation"
expect_rc 1 cut_raw "$PLUGRT" run cut_raw.plan --no-default-plugins \
  --allow-embedded-plugins -i X=x.npy -n 1 && expect_grep "checksum mismatch" cut_raw.err
[ -z "$(ls -A tmp)" ] || fail "temporary copies left behind: $(ls -A tmp)"

# A plugin whose library is unknown cannot be embedded: a creator the
# ONNX path registers from no library does not exist here, so the check is
# the C test's (test_embedded_libs); a model of built-ins only embeds
# nothing and writes the plain plan's bytes.
expect_rc 0 make_relu "$PYTHON" - <<'EOF'
import onnx
from onnx import TensorProto, helper
g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, "relu.onnx")
EOF
expect_rc 0 relu_plain "$PLUGRT" build relu.onnx -o relu_plain.plan &&
  expect_rc 0 relu_embed "$PLUGRT" build relu.onnx -o relu_embed.plan --embed-plugins &&
  { cmp -s relu_plain.plan relu_embed.plan || fail "a plan without plugins changed"; }

finish
