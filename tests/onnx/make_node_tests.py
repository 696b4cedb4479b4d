#!/usr/bin/env python3
"""Writes ONNX's node tests for the opsets past Debian's libonnx-testdata.

Not run by CI: it needs a newer onnx from pip (its test-case generators and
reference implementation), e.g. in a virtual environment of its own:

    python3 -m venv /tmp/venv-onnx && /tmp/venv-onnx/bin/pip install onnx
    /tmp/venv-onnx/bin/python tests/onnx/make_node_tests.py OUT_DIR [MAX_OPSET]
    python3 tests/onnx/node_tests_cli.py --plugrt build/tools/plugrt --data OUT_DIR

Every default-domain node test case whose model imports opset 18 or later
is written in libonnx-testdata's layout (OUT_DIR/<test>/model.onnx,
test_data_set_N/input_K.pb, output_K.pb). A case newer than MAX_OPSET
(default 20, what plugrt accepts) is kept at MAX_OPSET when every node's op
has the same schema there, so that it tests what plugrt claims to read.
"""
import os
import shutil
import sys

import onnx
import onnx.defs as defs
from onnx import numpy_helper
from onnx.backend.test.case import node as node_cases


def same_schema(model, old, new):
    for n in model.graph.node:
        try:
            if (defs.get_schema(n.op_type, old, "").since_version !=
                    defs.get_schema(n.op_type, new, "").since_version):
                return False
        except onnx.defs.SchemaError:
            return False
    return True


def write_case(case, d):
    m = case.model
    os.makedirs(d)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    for i, (ins, outs) in enumerate(case.data_sets):
        sd = os.path.join(d, "test_data_set_%d" % i)
        os.makedirs(sd)
        for kind, arrays, infos in (("input", ins, m.graph.input),
                                    ("output", outs, m.graph.output)):
            for j, a in enumerate(arrays):
                t = a if isinstance(a, onnx.TensorProto) else \
                    numpy_helper.from_array(a, infos[j].name)
                with open(os.path.join(sd, "%s_%d.pb" % (kind, j)), "wb") as f:
                    f.write(t.SerializeToString())


def main():
    out = sys.argv[1]
    cap = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    cases = node_cases.collect_testcases(None)
    kept = 0
    for case in cases:
        m = case.model
        ops = [o for o in m.opset_import if o.domain in ("", "ai.onnx")]
        if not ops or any(n.domain not in ("", "ai.onnx") for n in m.graph.node):
            continue
        v = ops[0].version
        if v > cap:
            if not same_schema(m, v, cap):
                continue
            ops[0].version = cap
        if ops[0].version < 18:
            continue  # libonnx-testdata (ONNX 1.12) has these
        m.ir_version = min(m.ir_version, 10)
        d = os.path.join(out, case.name)
        shutil.rmtree(d, ignore_errors=True)
        try:
            write_case(case, d)
            kept += 1
        except (TypeError, ValueError):  # sequences, optionals, maps
            shutil.rmtree(d, ignore_errors=True)
    print("wrote %d of %d node tests to %s" % (kept, len(cases), out))


if __name__ == "__main__":
    main()
