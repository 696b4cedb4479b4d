#!/usr/bin/env bash
# Malformed .npy files end in a clear error naming the file and the problem,
# both in the reader (npy_check) and through `plugrt run --input` (exit 1).
. "$(dirname "$0")/common.sh"

expect_rc 0 make_bad "$PYTHON" - <<'EOF'
import struct
import numpy as np

def npy(header, data=b"", version=(1, 0), magic=b"\x93NUMPY"):
    h = header.encode("latin1")
    pad = (64 - (10 + len(h) + 1) % 64) % 64
    h = h + b" " * pad + b"\n"
    if version[0] == 1:
        prefix = magic + bytes(version) + struct.pack("<H", len(h))
    else:
        prefix = magic + bytes(version) + struct.pack("<I", len(h))
    return prefix + h + data

f4 = np.arange(6, dtype=np.float32).tobytes()
files = {
    # header promises 12 elements, the data holds 6
    "truncated": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", f4),
    # header promises 2 elements, the data holds 6
    "lying": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f4),
    "badmagic": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", f4,
                    magic=b"\x93NUMPZ"),
    "c8": npy("{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", f4),
    "nokey": npy("{'descr': '<f4', 'shape': (6,), }", f4),
    "garbage": npy("hello, world", f4),
    "negative": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-6,), }", f4),
    "overflow": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", f4),
    "version9": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", f4,
                    version=(9, 0)),
    "structured": npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (6,), }", f4),
    "rank9": npy("{'descr': '|u1', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", b"x"),
}
for name, blob in files.items():
    open(name + ".npy", "wb").write(blob)
# The header length runs past the end of the file.
open("shortheader.npy", "wb").write(b"\x93NUMPY\x01\x00\xff\x00{'descr'")
open("empty.npy", "wb").write(b"")
EOF

check() { # check NAME PATTERN: the reader rejects NAME.npy with a message
  local name=$1 pattern=$2
  expect_rc 1 "read_$name" "$NPY_CHECK" read "$name.npy" &&
    expect_grep "^$name\.npy: .*$pattern" "read_$name.err" "$name.npy"
}
check truncated "truncated data"
check lying "lying header"
check badmagic "bad magic"
check empty "bad magic"
check c8 "unsupported dtype '<c8'"
check nokey "missing key 'fortran_order'"
check garbage "malformed header"
check negative "malformed header"
check overflow "too large"
check version9 "format version 9.0"
check structured "unsupported dtype"
check rank9 "rank"
check shortheader "truncated in the header"

# Through the program: `plugrt run` names the input, the file and the problem.
expect_rc 0 make_model "$PYTHON" "$SRC/make_nonzero_model.py" model
for name in truncated lying badmagic c8; do
  expect_rc 1 "run_$name" "$PLUGRT" run model/model.onnx --input "X=$name.npy" &&
    expect_grep "error: input X: $name\.npy: " "run_$name.err"
done
expect_rc 1 run_missing "$PLUGRT" run model/model.onnx --input X=nowhere.npy &&
  expect_grep "nowhere\.npy: cannot open" run_missing.err

finish
