"""Writes the seed's ONNX flow: a model with a single NonZeroPlugin node and
an input for it.

    make_nonzero_model.py OUT_DIR [ROWS COLS [OP_TYPE]]

OUT_DIR/model.onnx: X (float32, dynamic R x C) -> NonZeroPlugin -> Y (int32
indices, K x 2 with rowOrder 1) and K (int64 count, a size tensor). The node
carries `backend` (STRING), `plugin_namespace` ("") and `rowOrder` (INT),
as a TensorRT sample's node would.
OUT_DIR/x.npy: the input, about 40 % zeros.
OP_TYPE (default NonZeroPlugin) renames the node's op, without the plugin
attributes, for --plugin-op to map.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def main():
    out = sys.argv[1]
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    cols = int(sys.argv[3]) if len(sys.argv) > 3 else 9
    op_type = sys.argv[4] if len(sys.argv) > 4 else "NonZeroPlugin"
    os.makedirs(out, exist_ok=True)
    if op_type == "NonZeroPlugin":
        node = helper.make_node(
            "NonZeroPlugin", ["X"], ["Y", "K"], name="nonzero",
            backend="cpu", plugin_namespace="", rowOrder=1)
    else:
        node = helper.make_node(op_type, ["X"], ["Y", "K"], name="nonzero", rowOrder=1)
    graph = helper.make_graph(
        [node], "nonzero_seed",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["R", "C"])],
        [helper.make_tensor_value_info("Y", TensorProto.INT32, ["K", 2]),
         helper.make_tensor_value_info("K", TensorProto.INT64, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, "model.onnx"))
    rng = np.random.default_rng(7)
    x = rng.uniform(-4, 4, size=(rows, cols)).astype(np.float32)
    x[rng.uniform(size=x.shape) < 0.4] = 0.0
    np.save(os.path.join(out, "x.npy"), x)


if __name__ == "__main__":
    main()
