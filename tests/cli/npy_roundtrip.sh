#!/usr/bin/env bash
# .npy round trips: every dtype we write reads back in numpy with the same
# dtype, shape and values; every file numpy writes (versions 1.0, 2.0, 3.0,
# big-endian, Fortran order) reads in plugrt and writes back equal.
. "$(dirname "$0")/common.sh"

mkdir -p ours theirs copies
expect_rc 0 write "$NPY_CHECK" write ours

# Our files, read by numpy. Values follow npy_check.c's fill().
expect_rc 0 numpy_reads_ours "$PYTHON" - ours <<'EOF'
import sys, os
import numpy as np
d = sys.argv[1]
shapes = {"scalar": (), "vec": (5,), "cube": (2, 3, 4), "empty": (0, 3), "ones": (1, 2, 1, 3)}
descr = {"float32": "<f4", "float16": "<f2", "int8": "|i1", "uint8": "|u1",
         "int32": "<i4", "int64": "<i8", "bool": "|b1"}
def expect(dt, n):
    i = np.arange(n, dtype=np.int64)
    return {"float32": (i * 0.5 - 3).astype(np.float32),
            "float16": (i * 0.5 - 3).astype(np.float16),
            "int8": (i % 200 - 100).astype(np.int8),
            "uint8": (i * 7 % 256).astype(np.uint8),
            "int32": (i * 1000003 - 5000).astype(np.int32),
            "int64": i * 4000000007 - 9,
            "bool": i % 3 == 0}[dt]
bad = 0
for dt in descr:
    for case, shape in shapes.items():
        p = os.path.join(d, f"rt_{dt}_{case}.npy")
        a = np.load(p)
        n = int(np.prod(shape))
        want = expect(dt, n).reshape(shape)
        if a.dtype.str != descr[dt] or a.shape != shape or not np.array_equal(a, want):
            print(f"{p}: numpy reads {a.dtype.str} {a.shape}, expected {descr[dt]} {shape}")
            bad = 1
sys.exit(bad)
EOF

# numpy's files, read and rewritten by plugrt, read back by numpy.
expect_rc 0 numpy_writes "$PYTHON" - theirs <<'EOF'
import sys, os
import numpy as np
from numpy.lib import format as npf
d = sys.argv[1]
rng = np.random.default_rng(3)
arrays = {
    "f4": rng.standard_normal((3, 4)).astype(np.float32),
    "f2": rng.standard_normal((2, 5)).astype(np.float16),
    "i1": rng.integers(-128, 127, (7,), dtype=np.int8),
    "u1": rng.integers(0, 255, (2, 2, 2), dtype=np.uint8),
    "i4": rng.integers(-2**31, 2**31 - 1, (4, 3), dtype=np.int32),
    "i8": rng.integers(-2**62, 2**62, (5,), dtype=np.int64),
    "b1": rng.integers(0, 2, (3, 3)).astype(bool),
    "scalar": np.array(2.5, dtype=np.float32),
    "empty": np.zeros((0, 4), dtype=np.int64),
    "fortran": np.asfortranarray(rng.standard_normal((3, 5, 2)).astype(np.float32)),
    "argwhere": np.argwhere(rng.integers(0, 2, (6, 6))).astype(np.int32),
    "big_f4": rng.standard_normal((4,)).astype(">f4"),
    "big_i8": rng.integers(-9, 9, (2, 3)).astype(">i8"),
}
for name, a in arrays.items():
    np.save(os.path.join(d, name + ".npy"), a)
for version in [(1, 0), (2, 0), (3, 0)]:
    with open(os.path.join(d, "v%d.npy" % version[0]), "wb") as f:
        npf.write_array(f, arrays["f4"], version=version)
EOF
for f in theirs/*.npy; do
  expect_rc 0 "copy_$(basename "$f" .npy)" "$NPY_CHECK" copy "$f" "copies/$(basename "$f")"
done
expect_rc 0 numpy_reads_copies "$PYTHON" - theirs copies <<'EOF'
import sys, os
import numpy as np
src, dst = sys.argv[1], sys.argv[2]
bad = 0
for name in sorted(os.listdir(src)):
    a = np.load(os.path.join(src, name))
    b = np.load(os.path.join(dst, name))
    # Copies are little-endian and C order; values and shapes are the same.
    if a.shape != b.shape or a.dtype.newbyteorder("<") != b.dtype.newbyteorder("<") \
            or not np.array_equal(a, b) or not b.flags["C_CONTIGUOUS"]:
        print(f"{name}: copy differs: {a.dtype} {a.shape} vs {b.dtype} {b.shape}")
        bad = 1
sys.exit(bad)
EOF

finish
