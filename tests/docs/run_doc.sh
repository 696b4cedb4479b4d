#!/usr/bin/env bash
# run_doc.sh DOC.md BUILD_DIR: runs every ```sh block of a document, in
# order, as one script in an empty directory, with HOME in a temporary
# directory. A ```sh setup block (installing plugrt from its clone) is
# replaced by installing BUILD_DIR into "$HOME/.local/plugrt", the prefix the
# document uses (tests/install checks the install itself). A line that
# starts with "! " must fail. PYTHON (with numpy and onnx) serves as
# python3.
set -euo pipefail
doc=$(realpath "$1") build=$(realpath "$2")
python=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "run_doc.sh: FAIL: $*" >&2; exit 1; }
"$python" -c 'import numpy, onnx' 2>/dev/null || { echo "run_doc.sh: $python lacks numpy or onnx; skipped"; exit 77; }

export HOME=$tmp/home
mkdir -p "$HOME" "$tmp/work" "$tmp/bin"
ln -s "$python" "$tmp/bin/python3"
export PATH="$tmp/bin:$PATH"

# The blocks, with "! cmd" lines made to fail the script when cmd succeeds.
awk -v install="cmake --install '$build' --prefix \"\$HOME/.local/plugrt\" >/dev/null" '
  /^```sh setup$/ { skip = 1; print install; next }
  /^```sh$/ { inblock = 1; n++; print "echo \"--- block " n " (line " NR ")\""; next }
  /^```/ { inblock = 0; skip = 0; next }
  skip { next }
  inblock && /^! / { print $0 " || { echo \"expected to fail: line " NR "\" >&2; exit 1; }"; next }
  inblock { print }
' "$doc" >"$tmp/doc.sh"
nb=$(grep -c '^```sh$' "$doc")
[ "$nb" -ge 5 ] || fail "only $nb sh blocks in $doc"
(cd "$tmp/work" && bash -euo pipefail "$tmp/doc.sh") >"$tmp/out.txt" 2>&1 || {
  cat "$tmp/out.txt"
  fail "a command in $doc failed (above)"
}
cat "$tmp/out.txt"
echo "run_doc.sh: all $nb blocks of $(basename "$doc") ran as written"
