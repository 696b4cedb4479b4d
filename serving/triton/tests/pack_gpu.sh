#!/usr/bin/env bash
# Packs what serving/triton/tests/gpu_run.sh needs on a GPU machine that has
# neither a tritonserver nor a network, into .tritonpkg/ (git-ignored):
#
#   .tritonpkg/tritonserver-2.51.0.tar.xz
#       the server nvidia-pytriton 0.7.0 bundles (scripts/deps.sh installs it
#       into /opt/plugrt-triton): bin/tritonserver and the libraries of
#       nvidia_pytriton.libs that it loads (found with ldd; libpython, the
#       Python backend and the caches are left out), stripped, xz -9. Its
#       run path ($ORIGIN/../lib) finds them after unpacking anywhere.
#   .tritonpkg/build/
#       the plugrt files the tests use, from BUILD, laid out as in a build
#       folder: libplugrt.so.0.1, libplugrt_plugins.so with its CUDA module,
#       tools/plugrt, serving/triton/backends/plugrt/libtriton_plugrt.so,
#       serving/triton/testlibs/testlib_argmin.so and testlib_meet.so.
#   .tritonpkg/models/
#       the four models the tests serve, with their .data references, from
#       ../shared/models (which does not travel to the device machine).
#
#     bash serving/triton/tests/pack_gpu.sh [BUILD]     (default build-tritongpu)
#
# BUILD is configured here when it has no CMakeCache.txt (Release with debug
# information, the default; CUDA required: -DPRT_WITH_CUDA=ON) and only
# those targets are built. The server's tarball is made once (about 90 s);
# PRT_TRITON_REPACK=1 makes it again. Everything comes to about 35 MB.
# PRT_MODELS names another models folder, PRT_TRITON_SITE another server.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$root"
build=${1:-build-tritongpu}
site=${PRT_TRITON_SITE:-/opt/plugrt-triton/lib/python3.11/site-packages}
server=$site/pytriton/tritonserver/bin/tritonserver
pkg=$root/.tritonpkg
tarball=$pkg/tritonserver-2.51.0.tar.xz
say() { echo "pack_gpu: $*" >&2; }

[ -x "$server" ] || { say "no tritonserver at $server (bash scripts/deps.sh installs it)"; exit 1; }
mkdir -p "$pkg"

# ---- plugrt -------------------------------------------------------------------
if [ ! -f "$build/CMakeCache.txt" ]; then
  say "configuring $build (CUDA on)"
  cmake -S . -B "$build" -G Ninja -DPRT_WITH_CUDA=ON >/dev/null
fi
say "building the backend, the plugins, the program and the test libraries in $build"
cmake --build "$build" --target plugrt plugrt_cli plugrt_plugins plugrt_plugins_cuda \
  triton_plugrt triton_testlib_argmin triton_testlib_meet >/dev/null
stage=$pkg/build
rm -rf "$stage"
mkdir -p "$stage/tools" "$stage/serving/triton/backends/plugrt" "$stage/serving/triton/testlibs"
cp -L "$build/libplugrt.so.0.1" "$stage/"
cp -L "$build/libplugrt_plugins.so" "$stage/"
cp -L "$build/libplugrt_plugins_cuda.so" "$stage/"
cp -L "$build/tools/plugrt" "$stage/tools/"
cp -L "$build/serving/triton/backends/plugrt/libtriton_plugrt.so" \
  "$stage/serving/triton/backends/plugrt/"
cp -L "$build/serving/triton/testlibs/testlib_argmin.so" \
  "$build/serving/triton/testlibs/testlib_meet.so" "$stage/serving/triton/testlibs/"

# ---- the models --------------------------------------------------------------
models=${PRT_MODELS:-$root/../shared/models}
rm -rf "$pkg/models"
mkdir -p "$pkg/models"
for m in nonzero_plugin qa_custom_hardmax circ_pad_conv bert_small; do
  [ -f "$models/$m.onnx" ] && [ -d "$models/$m.data" ] ||
    { say "no $models/$m.onnx with its $m.data"; exit 1; }
  cp "$models/$m.onnx" "$pkg/models/"
  cp -r "$models/$m.data" "$pkg/models/"
done

# ---- the server ---------------------------------------------------------------
if [ ! -f "$tarball" ] || [ "${PRT_TRITON_REPACK:-0}" = 1 ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/plugrt-pack.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/tritonserver/bin" "$work/tritonserver/lib"
  cp "$server" "$work/tritonserver/bin/"
  # Every library the binary loads from the wheel's folder (the system's
  # libc, libstdc++, libz stay the machine's).
  libs=$(ldd "$server" | awk '$3 ~ /nvidia_pytriton\.libs/ {print $3}')
  [ -n "$libs" ] || { say "ldd found none of nvidia_pytriton.libs for $server"; exit 1; }
  for l in $libs; do cp "$l" "$work/tritonserver/lib/"; done
  # Symbols only: the run paths and the code stay as they are.
  strip --strip-unneeded "$work/tritonserver/bin/tritonserver" "$work"/tritonserver/lib/*.so*
  missing=$(cd "$work/tritonserver/bin" && ldd ./tritonserver | grep 'not found' || true)
  [ -z "$missing" ] || { say "the packed server misses libraries: $missing"; exit 1; }
  usage=$("$work/tritonserver/bin/tritonserver" --help 2>&1 || true) # --help exits 1
  grep -q '^Usage: tritonserver' <<<"$usage" ||
    { say "the packed tritonserver does not run here: ${usage:0:300}"; exit 1; }
  say "packing $(echo "$libs" | wc -l) libraries and the server (xz -9, about 90 s)"
  tar -C "$work" -cf - tritonserver | xz -9 -T0 >"$tarball.tmp"
  mv "$tarball.tmp" "$tarball"
fi

{
  echo "made by serving/triton/tests/pack_gpu.sh from $build at $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  (cd "$pkg" && find . -type f ! -name MANIFEST.txt -printf '%P %s\n' | sort)
} >"$pkg/MANIFEST.txt"
say "done: $(du -sh "$pkg" | cut -f1) in $pkg"
