"""The ONNX Runtime side of `plugrt run --compare-layers --reference onnxruntime`.

    python3 ort_reference.py MODEL.onnx DIR

The plugrt program writes this script into DIR (a temporary folder of its
own) with the model's inputs, runs it, and reads back what it wrote there.

DIR/inputs.txt names the inputs, one a line: "FILE HEXNAME", FILE a .npy in
DIR and HEXNAME the tensor's name as UTF-8 bytes in hex (so any name, spaces
and newlines included, survives). Every output of every node of the model's
main graph is added to the graph's outputs, the model runs once on ONNX
Runtime's CPU execution provider with graph optimizations off (each node
computed as the model writes it), and every result that is a tensor is
written to DIR/oN.npy and listed in DIR/outputs.txt the same way, in node
order. Tensors inside subgraphs (If, Loop, Scan bodies) are not exposed.

Exit status: 0 done; 2 usage; 3 onnxruntime cannot be imported; 4 onnx (or
numpy) cannot be imported; 5 ONNX Runtime refused or failed the model. The
reason is one line on stderr.
"""
import os
import sys

NO_ORT, NO_ONNX, ORT_FAILED = 3, 4, 5


def fail(code, msg):
    sys.stderr.write("ort_reference.py: " + msg.strip().replace("\n", " ") + "\n")
    sys.exit(code)


def read_list(path):
    """[(file, name)] from a list written by plugrt (or by this script)."""
    items = []
    with open(path, "r", encoding="ascii") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            file, hexname = line.split(" ", 1)
            raw = bytes.fromhex(hexname)
            try:
                items.append((file, raw.decode("utf-8")))
            except UnicodeDecodeError:
                # ONNX Runtime's Python API names tensors with text.
                fail(ORT_FAILED, "tensor name %r is not UTF-8, so ONNX Runtime's Python "
                     "API cannot name it" % raw)
    return items


def expose_all(model, onnx):
    """Every node output of the main graph becomes a graph output (a
    ValueInfoProto with a name and no type: ONNX Runtime infers it)."""
    graph = model.graph
    known = {o.name for o in graph.output}
    skip = known | {i.name for i in graph.input} | {i.name for i in graph.initializer}
    for node in graph.node:
        for name in node.output:
            if name and name not in skip:
                graph.output.append(onnx.ValueInfoProto(name=name))
                skip.add(name)


def main():
    if len(sys.argv) != 3:
        fail(2, "usage: ort_reference.py MODEL.onnx DIR")
    model_path, out_dir = sys.argv[1], sys.argv[2]
    try:
        import onnxruntime as ort
    except ImportError as e:
        fail(NO_ORT, "cannot import onnxruntime (%s)" % e)
    try:
        import numpy as np
        import onnx
    except ImportError as e:
        fail(NO_ONNX, "cannot import onnx or numpy (%s)" % e)

    try:
        model = onnx.load(model_path)
    except Exception as e:  # a file onnx cannot parse: say so, no traceback
        fail(ORT_FAILED, "onnx cannot read %s: %s" % (model_path, e))
    expose_all(model, onnx)
    feeds = {}
    for file, name in read_list(os.path.join(out_dir, "inputs.txt")):
        feeds[name] = np.load(os.path.join(out_dir, file), allow_pickle=False)

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3  # errors only: they come back as exceptions
    try:
        sess = ort.InferenceSession(model.SerializeToString(), so,
                                    providers=["CPUExecutionProvider"])
        wanted = {i.name for i in sess.get_inputs()}
        names = [o.name for o in sess.get_outputs()]
        results = sess.run(names, {k: v for k, v in feeds.items() if k in wanted})
    except Exception as e:
        fail(ORT_FAILED, "onnxruntime %s: %s" % (ort.__version__, e))

    lines = []
    for k, (name, value) in enumerate(zip(names, results)):
        if not isinstance(value, np.ndarray):
            continue  # a sequence or map: plugrt has no such tensors
        file = "o%d.npy" % k
        np.save(os.path.join(out_dir, file), value)  # plugrt reads either order
        lines.append("%s %s\n" % (file, name.encode("utf-8").hex()))
    with open(os.path.join(out_dir, "outputs.txt"), "w", encoding="ascii") as f:
        f.writelines(lines)
        f.write("# onnxruntime %s\n" % ort.__version__)


if __name__ == "__main__":
    main()
