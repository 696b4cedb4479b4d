#!/usr/bin/env python3
"""The ONNX node tests through the `plugrt` program, as a user runs them.

For every <data>/<test>/model.onnx and each of its test_data_set_<n>
folders, runs

    plugrt run model.onnx --compare test_data_set_<n> -n 1 --warmup 0 \
        --atol 1e-5 --rtol 1e-3

(the program reads the folder's input_<k>.pb and output_<k>.pb TensorProtos
itself, matched by the names they hold) and sorts each test into passed, or
not passed with a category and the program's reason:

    dtype   it needs an element type plugrt does not have (double, string,
            complex, 4- and 8-bit floats, int16, uint16/32/64)
    op      an op plugrt has no importer for
    type    a graph input or output that is no tensor (sequence, optional)
    limit   a limitation of plugrt's design (a value that sizes a tensor
            coming from float data, training mode)
    fail    anything else: a wrong result, a crash, an import or build error

A test passes when every data set passes and every reference is compared.
The list of tests that do not pass, each with its category and reason, is
kept in the repository (--failing FILE, tests/onnx/node_tests_cli_failing.txt)
with the number that pass (--expect FILE). The run fails when fewer pass
than recorded, or when a test fails that the list does not name (or names
under another category); a listed test that now passes is reported, to be
taken off the list. --write rewrites both files from this run.

    node_tests_cli.py --plugrt PATH [--data DIR] [--expect FILE]
                      [--failing FILE] [--jobs N] [--filter SUBSTRING]
                      [--device cpu|cuda] [--write] [--verbose]

--device cuda runs every test with `plugrt run --device cuda` (on the GPU
machine), against its own lists (node_tests_cli_{passing,failing}_cuda.txt):
the tests that pass on the CPU and not on CUDA are those lists' difference.

Exit status: 0 as expected, 1 a regression, 77 no test data (skipped).
Standard library only: it needs no numpy or onnx.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import time

ATOL = "1e-5"
RTOL = "1e-3"
TIMEOUT_S = 120

# Element types plugrt does not have, as the importer names them (ONNX's
# test data stores bfloat16 tensors as UINT16, so those read as uint16).
LACKING_DTYPES = ("STRING", "COMPLEX64", "COMPLEX128", "FLOAT8E4M3FNUZ", "FLOAT8E5M2FNUZ",
                  "UINT4", "INT4", "FLOAT4E2M1")
DTYPE_RE = re.compile(r"ONNX element type (%s) \(\d+\)" % "|".join(LACKING_DTYPES))
OP_RE = re.compile(r"op '([^']*)'(?: of domain \S+)? has no importer and no plugin creator")
TYPE_RE = re.compile(r"only tensor (inputs|outputs) are supported")
# Limitations of the design, not bugs: output shapes are integer
# expressions fixed at build time from dims and shape values (a float32
# graph input as Resize's scales or OneHot's depth is one), so a float value
# computed in the graph that sizes a tensor (Range over floats) must be a
# constant; Dropout and BatchNormalization run for
# inference only; If and Loop are folded at import, so their condition and
# trip count must be constants.
LIMIT_RES = [re.compile(p) for p in (
    r"scales input '[^']*' must be a constant",
    r"must be a constant \(an initializer or a Constant node\)",
    r"Range over float\w* needs start, limit and delta given as initializers",
    r"training_mode .*(inference|constant false)",
    r"training_mode \d is not supported",
    r"is a shape input, so it must be a 0-D or 1-D int32/int64 input[^;]*; it is float",
    r"has no conditional or loop layers and folds (If|Loop) only where it is",
    r"unrolls a Loop only when it runs a constant number of times",
)]

# Test data that contradicts the ONNX definition or itself (this
# libonnx-testdata version), with what is wrong in it.
DATA = {
    "test_cast_FLOAT_to_BFLOAT16":
        "the reference truncates float32 to bfloat16; Cast rounds to nearest even "
        "(ONNX's later test data and ONNX Runtime do)",
}
for _n in ("test_castlike_BFLOAT16_to_FLOAT", "test_castlike_FLOAT_to_BFLOAT16"):
    for _e in ("", "_expanded"):
        DATA[_n + _e] = ("input 'like' in the test data has dims [1]; the model declares "
                         "[3, 4]")

# A layer whose op runs on the CPU alone for these dtypes (a CUDA kernel
# takes fewer: the wide types, an integer Pow base); --allow-cpu-fallback
# runs it there.
DEVICE_RE = re.compile(r"does not run on CUDA with dtypes")

CATEGORIES = ("dtype", "op", "type", "limit", "data", "device", "fail")


def reason_of(text, root):
    """The program's first error line, without the data folder's path."""
    lines = [l for l in text.splitlines() if "error:" in l]
    line = lines[0] if lines else (text.strip().splitlines() or ["(no output)"])[-1]
    line = re.sub(r"^plugrt run: error: ", "", line)
    line = line.replace(root + "/", "")
    line = re.sub(r"cannot import (\S+): \1: ", "import: ", line)
    line = re.sub(r" \(plugrt has [^)]*\)", "", line)
    return line[:400]


def classify(reason):
    m = DTYPE_RE.search(reason)
    if m:
        return "dtype", "needs %s: %s" % (m.group(1).lower(), reason)
    m = OP_RE.search(reason)
    if m:
        return "op", "no op %s: %s" % (m.group(1), reason)
    if TYPE_RE.search(reason):
        return "type", reason
    for r in LIMIT_RES:
        if r.search(reason):
            return "limit", reason
    if DEVICE_RE.search(reason):
        return "device", reason
    return "fail", reason


DEVICE = "cpu"


def run_set(plugrt, model, set_dir, root):
    """(ok, reason) for one data set."""
    cmd = [plugrt, "run", model, "--compare", set_dir, "-n", "1", "--warmup", "0",
           "--atol", ATOL, "--rtol", RTOL, "--device", DEVICE]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return False, "timed out after %d s" % TIMEOUT_S
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode < 0:
        return False, "killed by signal %d" % -p.returncode
    if p.returncode != 0:
        if "tensor file" in err:
            # A data file that is no tensor (a sequence or an optional):
            # whether the model itself imports says more.
            probe = subprocess.run([plugrt, "run", model, "--random-inputs", "-n", "1",
                                    "--device", DEVICE],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   timeout=TIMEOUT_S)
            perr = probe.stderr.decode("utf-8", "replace")
            if "cannot import" in perr:
                return False, reason_of(perr, root)
        if "FAILED:" in out:
            bad = [l.strip() for l in out.splitlines() if " FAIL " in l]
            return False, "wrong result: " + ("; ".join(bad) or "FAILED")[:400]
        return False, reason_of(err + "\n" + out, root)
    refs = len([f for f in os.listdir(set_dir) if f.startswith("output_")])
    m = re.search(r"^PASSED: (\d+) output\(s\) match$", out, re.M)
    if not m or int(m.group(1)) != refs:
        return False, "compared %s of %d outputs" % (m.group(1) if m else "none", refs)
    # run compares values across dtypes with a note; the tests want the
    # dtype too.
    note = re.search(r"note: output (.*) is (\w+), its reference (\w+)", err)
    if note:
        return False, "output %s is %s, the reference %s" % note.groups()
    return True, ""


def run_test(plugrt, data, name):
    """(name, category or None for a pass, reason)."""
    d = os.path.join(data, name)
    sets = sorted(s for s in os.listdir(d) if s.startswith("test_data_set_"))
    if not sets:
        return name, "fail", "no test_data_set folders"
    for s in sets:
        ok, reason = run_set(plugrt, os.path.join(d, "model.onnx"), os.path.join(d, s),
                             data)
        if not ok:
            cat, reason = classify(reason)
            if cat == "fail" and name in DATA:
                cat, reason = "data", "%s: %s" % (DATA[name], reason)
            if len(sets) > 1:
                reason = "%s: %s" % (s, reason)
            return name, cat, reason
    return name, None, ""


def read_count(path):
    for line in open(path):
        line = line.strip()
        if line and not line.startswith("#"):
            return int(line)
    raise ValueError("%s holds no number" % path)


def read_failing(path):
    """{test: category} from the list (lines 'category test reason...')."""
    out = {}
    for line in open(path):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split(None, 2)
        if len(parts) < 2 or parts[0] not in CATEGORIES:
            raise ValueError("%s: bad line %r" % (path, line))
        out[parts[1]] = parts[0]
    return out


FAILING_HEADER = """\
# ONNX node tests (libonnx-testdata) that do not pass through the plugrt
# program (tests/onnx/node_tests_cli.py), one a line: category, test, the
# program's reason. Categories:
#   dtype  needs an element type plugrt does not have (string, complex,
#          4-bit floats, the 8-bit floats' FNUZ variants)
#   op     an op plugrt has no importer for
#   type   a graph input that is no tensor (sequence, optional)
#   limit  a limitation of the design: a float value that sizes a tensor
#          (Resize's or Upsample's scales, Range over floats) given as a
#          graph input, where plugrt fixes shapes as integer expressions at
#          build time; training mode of Dropout and BatchNormalization;
#          If and Loop on a condition or trip count that is not constant
#          (plugrt folds them: it has no conditional or loop layers)
#   data   test data that contradicts ONNX's definition or the model
#          (node_tests_cli.py's DATA says how)
#   device an op whose kernel on the device takes fewer dtypes than the
#          CPU's (float64 and the other wide types, an integer Pow base):
#          --allow-cpu-fallback runs the layer on the CPU
#   fail   anything else: a bug or a missing attribute, to be fixed
# Written by `node_tests_cli.py --write`; the test fails when a test fails
# that this list does not name under that category.
"""


def write_files(args, results, passed):
    with open(args.expect, "w") as f:
        f.write("# How many ONNX node tests (libonnx-testdata) pass through the plugrt\n"
                "# program (onnx_node_tests_cli). The test fails when fewer pass; raise\n"
                "# the number when more do (node_tests_cli.py --write).\n%d\n" % passed)
    with open(args.failing, "w") as f:
        f.write(FAILING_HEADER)
        for cat in CATEGORIES:
            rows = sorted((n, r) for n, c, r in results if c == cat)
            if rows:
                f.write("\n# %s: %d\n" % (cat, len(rows)))
            for n, r in rows:
                f.write("%-6s %s %s\n" % (cat, n, " ".join(r.split())))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plugrt", required=True)
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data/node")
    ap.add_argument("--expect")
    ap.add_argument("--failing")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--filter", default="")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    args = ap.parse_args()
    global DEVICE
    DEVICE = args.device

    if not os.path.isdir(args.data):
        print("node tests via plugrt: no tests in %s (install libonnx-testdata); "
              "skipped" % args.data)
        return 77
    names = sorted(n for n in os.listdir(args.data)
                   if args.filter in n and
                   os.path.isfile(os.path.join(args.data, n, "model.onnx")))
    if not names:
        print("node tests via plugrt: no tests in %s; skipped" % args.data)
        return 77
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        results = list(ex.map(lambda n: run_test(args.plugrt, args.data, n), names))
    elapsed = time.time() - t0

    passed = sum(1 for _, c, _ in results if c is None)
    counts = {c: sum(1 for _, k, _ in results if k == c) for c in CATEGORIES}
    if args.verbose:
        for n, c, r in results:
            print("%-60s %s" % (n, "passed" if c is None else "%s: %s" % (c, r)))
    print("node tests via plugrt on %s: %d passed, %d not: %s (%d tests, %.1f s, "
          "%d jobs)" % (DEVICE, passed, len(results) - passed,
        ", ".join("%d %s" % (counts[c], c) for c in CATEGORIES), len(results), elapsed,
        args.jobs))

    if args.write:
        if args.filter:
            print("--write needs the whole suite (no --filter)")
            return 2
        write_files(args, results, passed)
        print("wrote %s and %s" % (args.expect, args.failing))
        return 0

    bad = 0
    if args.failing:
        listed = read_failing(args.failing)
        for n, c, r in results:
            if c is None and n in listed:
                print("%s passes now: take it off %s" % (n, os.path.basename(args.failing)))
            elif c is not None and listed.get(n) != c:
                was = "listed as %s" % listed[n] if n in listed else "not listed"
                print("REGRESSION %s (%s): %s: %s" % (n, was, c, r))
                bad += 1
    if args.expect and not args.filter:
        want = read_count(args.expect)
        if passed < want:
            print("FAILED: %d pass; %s records %d" % (passed, args.expect, want))
            bad += 1
        elif passed > want:
            print("%d pass, more than the %d recorded: raise the number in %s "
                  "(node_tests_cli.py --write)" % (passed, want, args.expect))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
