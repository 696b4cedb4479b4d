#!/usr/bin/env bash
# install.sh BUILD_DIR APP_DIR: `cmake --install` BUILD_DIR into a temporary
# prefix and use plugrt from there as an outside project would.
set -euo pipefail
build=$1 app=$2
cmake=${CMAKE:-cmake} cc=${CC:-cc} python=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install.sh: FAIL: $*" >&2; exit 1; }
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)

# 1. The installed tree.
"$cmake" --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log"
for f in bin/plugrt include/plugrt/plugrt.h include/plugrt/plugin.h include/plugrt/version.h \
  include/plugrt/onnx.h lib/libplugrt_onnx.so lib/pkgconfig/plugrt-onnx.pc lib/libplugrt.so lib/libplugrt_plugins.so lib/cmake/plugrt/plugrtConfig.cmake \
  lib/cmake/plugrt/plugrtConfigVersion.cmake lib/pkgconfig/plugrt.pc \
  lib/pkgconfig/plugrt-plugin.pc; do
  [ -e "$tmp/prefix/$f" ] || fail "cmake --install did not install $f"
done
# Nothing installed names the build or source tree: the prefix can move.
if grep -rl --exclude='*.so*' --exclude=plugrt -e "$build" "$tmp/prefix" >/dev/null; then
  fail "installed files name the build tree: $(grep -rl --exclude='*.so*' --exclude=plugrt -e "$build" "$tmp/prefix")"
fi
mv "$tmp/prefix" "$tmp/moved"
prefix=$tmp/moved
plugrt=$prefix/bin/plugrt
# The moved program finds libplugrt (RUNPATH) and the standard plugins.
"$plugrt" plugins >"$tmp/plugins.txt" || fail "the installed plugrt plugins failed"
grep -q "^$prefix/bin/../lib/libplugrt_plugins.so" "$tmp/plugins.txt" ||
  fail "the installed program did not load the installed standard plugins: $(head -1 "$tmp/plugins.txt")"
grep -q "NonZeroPlugin@1" "$tmp/plugins.txt" || fail "standard plugins not listed"

# 2. A plugin project from new-plugin, through find_package: builds, and its
#    own test (plugrt check) passes.
"$plugrt" new-plugin Affine --dir "$tmp/affine" >"$tmp/new.txt"
grep -q "DCMAKE_PREFIX_PATH=$prefix" "$tmp/new.txt" || fail "new-plugin did not name the prefix: $(cat "$tmp/new.txt")"
"$cmake" -S "$tmp/affine" -B "$tmp/affine/build" "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" >"$tmp/affine.cfg" || { cat "$tmp/affine.cfg"; fail "configuring the new plugin"; }
"$cmake" --build "$tmp/affine/build" >"$tmp/affine.build" 2>&1 ||
  { cat "$tmp/affine.build"; fail "building the new plugin"; }
lib=$tmp/affine/build/libAffine.so
[ -f "$lib" ] || fail "no $lib"
ctest --test-dir "$tmp/affine/build" --output-on-failure >"$tmp/affine.test" 2>&1 ||
  { cat "$tmp/affine.test"; fail "the new plugin's test (plugrt check) failed"; }
# Broken, the project's test fails: an enqueue that leaves the last element
# unwritten is caught (plugrt check's coverage).
cp -r "$tmp/affine" "$tmp/broken"
rm -rf "$tmp/broken/build"
sed -i 's/for (int64_t i = 0; i < n; i++)/for (int64_t i = 0; i + 1 < n; i++)/' "$tmp/broken/Affine.c"
grep -q 'i + 1 < n' "$tmp/broken/Affine.c" || fail "the template's enqueue loop was not found to break"
"$cmake" -S "$tmp/broken" -B "$tmp/broken/build" "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" >"$tmp/broken.cfg" || { cat "$tmp/broken.cfg"; fail "configuring the broken plugin"; }
"$cmake" --build "$tmp/broken/build" >"$tmp/broken.build" 2>&1 ||
  { cat "$tmp/broken.build"; fail "building the broken plugin"; }
if ctest --test-dir "$tmp/broken/build" --output-on-failure >"$tmp/broken.test" 2>&1; then
  cat "$tmp/broken.test"
  fail "the broken plugin's test (plugrt check) passed"
fi
grep -q "FAIL  coverage" "$tmp/broken.test" || { cat "$tmp/broken.test"; fail "coverage did not catch the broken plugin"; }
# It exports the entry point only.
exports=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBR]$/ {print $3}' | sort | tr '\n' ' ')
[ "$exports" = "prt_plugin_library_open " ] || fail "libAffine.so exports: $exports"
# Asked twice, new-plugin overwrites nothing.
cp "$tmp/affine/Affine.c" "$tmp/Affine.c.orig"
if "$plugrt" new-plugin Affine --dir "$tmp/affine" 2>"$tmp/again.err"; then
  fail "new-plugin over an existing project succeeded"
fi
grep -q "already exists" "$tmp/again.err" || fail "no 'already exists' message: $(cat "$tmp/again.err")"
cmp -s "$tmp/affine/Affine.c" "$tmp/Affine.c.orig" || fail "new-plugin changed an existing file"

# 3. The same plugin through pkg-config and the compiler alone.
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden \
  $(pkg-config --cflags plugrt-plugin) "$tmp/affine/Affine.c" -o "$tmp/libAffine_pc.so"

# 4. An application, through find_package and through pkg-config, runs the
#    plugin from each build (plugrt::plugrt / -lplugrt).
"$cmake" -S "$app" -B "$tmp/app" "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" >"$tmp/app.cfg" || { cat "$tmp/app.cfg"; fail "configuring the app"; }
grep -q "standard plugins: $prefix/lib/libplugrt_plugins.so" "$tmp/app.cfg" ||
  fail "PLUGRT_PLUGINS_LIBRARY is not the installed library"
"$cmake" --build "$tmp/app" >"$tmp/app.build" 2>&1 || { cat "$tmp/app.build"; fail "building the app"; }
"$tmp/app/app" "$lib" | grep -q "15 elements match" || fail "the find_package app"
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Werror "$app/app.c" -o "$tmp/app_pc" $(pkg-config --cflags --libs plugrt) \
  -Wl,-rpath,"$prefix/lib"
"$tmp/app_pc" "$tmp/libAffine_pc.so" | grep -q "15 elements match" || fail "the pkg-config app"
# The version the package reports is the library's.
[ "$(pkg-config --modversion plugrt)" = "$("$plugrt" --version | awk '{print $2}')" ] ||
  fail "pkg-config version differs from the program's"

# 5. The plugin from an ONNX model, through the installed program.
if "$python" -c 'import onnx, numpy' 2>/dev/null; then
  "$python" - "$tmp" <<'PY'
import sys, numpy as np, onnx
from onnx import helper, TensorProto
d = sys.argv[1]
node = helper.make_node("Affine", ["x"], ["y"], scale=-1.5, shift=3.0)
g = helper.make_graph([node], "affine", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 6])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), d + "/affine.onnx")
x = np.random.default_rng(3).standard_normal((4, 6)).astype(np.float32)
np.save(d + "/input_x.npy", x)
np.save(d + "/output_y.npy", (np.float32(-1.5) * x + np.float32(3.0)).astype(np.float32))
PY
  "$plugrt" run "$tmp/affine.onnx" --plugins "$lib" --compare "$tmp" --atol 0 --rtol 0 \
    >"$tmp/run.txt" 2>&1 || { cat "$tmp/run.txt"; fail "running the model with the new plugin"; }
  # The installed importer, from C, both ways.
  "$tmp/app/onnx_app" "$tmp/affine.onnx" "$lib" | grep -q "24 elements match" ||
    fail "the find_package ONNX app"
  # shellcheck disable=SC2046
  "$cc" -std=c11 -Wall -Werror "$app/onnx_app.c" -o "$tmp/onnx_app_pc" \
    $(pkg-config --cflags --libs plugrt-onnx) -Wl,-rpath,"$prefix/lib"
  "$tmp/onnx_app_pc" "$tmp/affine.onnx" "$tmp/libAffine_pc.so" | grep -q "24 elements match" ||
    fail "the pkg-config ONNX app"
fi
echo "install.sh: the installed package, new-plugin and both consumer builds work"
