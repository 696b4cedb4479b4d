"""Writes the models of attnfuse.sh and what they must compute.

    make_attnfuse_models.py OUT_DIR

Self-attention as PyTorch exports it around the heads: x (2x5x32, batch and
sequence dims symbolic) -> MatMul + bias for Q, K, V -> Reshape to
[B, S, H, D] (x.size(0), x.size(1) through Shape -> Gather -> Unsqueeze ->
Concat, or 0 entries) -> Transpose (Q, V: 0 2 1 3; K: 0 2 3 1, K^T) ->
MatMul -> Mul(scale) -> Add(mask) -> Softmax -> MatMul(V) -> Transpose ->
Reshape to [B, S, H Dv]. Each OUT_DIR/NAME/ holds model.onnx, input_*.npy
and output_y.npy (NumPy's result in double, rounded to float32; checked
against ONNX Runtime's here):
  attn3_mha      4 heads of 8, x.size entries with -1 for the heads, float
                 mask [B, 1, 1, S]: one Attention reading x's projections
                 in place (q_num_heads 4), no Reshape or Transpose left
  attn3_mqa      K and V with one head (multi-query: MatMul broadcasts it),
                 constant shapes [0, 0, 4, 8] and [0, 0, 32], K^T as
                 Transpose(0 1 3 2) of the [B, H, S, D] one: kv_num_heads 1
  attn3_where    the mask Where(keep, 0, -inf) of a bool keep [B, 1, 1, S]:
                 the Where joins the layer, keep is its mask
  attn3_shared   Q's Transpose is also a graph output: the heads stay split
                 (rank-4 Attention, the Transposes and Reshapes as layers)
  attn3_badsplit the Reshape splits x by [x.size(1), x.size(0), -1, 8] (the
                 batch and sequence swapped): no rank-3 form
  attn3_shapes   GPT-2's merge: the Reshape's sizes are x.size(0) and
                 x.size(1) of the merge Transpose (Shape nodes read it):
                 one Attention, the Shapes read a view of its output
  attn3_rank2    the merge Reshape goes to [-1, H Dv] (rank 2, y is
                 [B S, H Dv]): one Attention, that Reshape reads it
  attn3_dynamo   as the dynamo export writes GPT-2: Q, K, V projected from
                 x as a [B S, E] matrix and made [B, S, N] with the sizes of
                 a rank-2 input am (Shape with start and end, allowzero 1),
                 split with those sizes (allowzero 1), merged to rank 2
  attn3_mergeread the merge Transpose is also read by an Identity (a graph
                 output oz): the heads stay split
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(24)
B, S, E, D = 2, 5, 32, 8


def const(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def size_nodes(x="x"):
    """b and s: x.size(0) and x.size(1) as vectors of one."""
    return [helper.make_node("Shape", [x], ["shp"]),
            helper.make_node("Gather", ["shp", "i0"], ["g0"], axis=0),
            helper.make_node("Gather", ["shp", "i1"], ["g1"], axis=0),
            helper.make_node("Unsqueeze", ["g0", "ax0"], ["b"]),
            helper.make_node("Unsqueeze", ["g1", "ax0"], ["s"])]


def build(name, hq, hkv, *, const_shapes=False, kt_0132=False, where=False,
          shared=False, swap=False, merge="x", dynamo=False, mergeread=False):
    inits = [const("i0", np.array(0, np.int64)), const("i1", np.array(1, np.int64)),
             const("ax0", np.array([0], np.int64)),
             const("m1", np.array([-1], np.int64)), const("dd", np.array([D], np.int64)),
             const("scale", np.array(D ** -0.5, np.float32)),
             const("hdv", np.array([hq * D], np.int64))]
    nodes = [] if const_shapes else size_nodes()
    if dynamo:  # am's sizes as the dynamo export takes them: Shape(start, end)
        inits.append(const("flat", np.array([-1, E], np.int64)))
        nodes = [helper.make_node("Shape", ["am"], ["b"], start=0, end=1),
                 helper.make_node("Shape", ["am"], ["s"], start=1, end=2),
                 helper.make_node("Reshape", ["x", "flat"], ["x2"], allowzero=1)]
    w = {}
    for p, h in (("q", hq), ("k", hkv), ("v", hkv)):
        w[p] = (RNG.standard_normal((E, h * D)) * 0.3).astype(np.float32)
        w[p + "b"] = (RNG.standard_normal(h * D) * 0.1).astype(np.float32)
        inits += [const("W" + p, w[p]), const("b" + p, w[p + "b"])]
        if dynamo:
            inits.append(const("n" + p, np.array([h * D], np.int64)))
            nodes += [helper.make_node("MatMul", ["x2", "W" + p], [p + "m"], name=p + "_proj"),
                      helper.make_node("Add", [p + "m", "b" + p], [p + "2"]),
                      helper.make_node("Concat", ["b", "s", "n" + p], ["s3" + p], axis=0),
                      helper.make_node("Reshape", [p + "2", "s3" + p], [p + "3"],
                                       allowzero=1)]
        else:
            nodes += [helper.make_node("MatMul", ["x", "W" + p], [p + "m"], name=p + "_proj"),
                      helper.make_node("Add", [p + "m", "b" + p], [p + "3"],
                                       name=p + "_bias")]
        if const_shapes:
            inits.append(const("sh" + p, np.array([0, 0, h, D], np.int64)))
        else:
            ent = ["s", "b"] if swap else ["b", "s"]
            nodes.append(helper.make_node("Concat", ent + ["m1", "dd"], ["sh" + p], axis=0))
        nodes.append(helper.make_node("Reshape", [p + "3", "sh" + p], [p + "4"],
                                      name=p + "_split", allowzero=int(dynamo)))
    nodes.append(helper.make_node("Transpose", ["q4"], ["qt"], perm=[0, 2, 1, 3],
                                  name="q_heads"))
    if kt_0132:
        nodes += [helper.make_node("Transpose", ["k4"], ["kh"], perm=[0, 2, 1, 3]),
                  helper.make_node("Transpose", ["kh"], ["kt"], perm=[0, 1, 3, 2])]
    else:
        nodes.append(helper.make_node("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]))
    nodes.append(helper.make_node("Transpose", ["v4"], ["vt"], perm=[0, 2, 1, 3]))
    nodes += [helper.make_node("MatMul", ["qt", "kt"], ["sc"], name="scores"),
              helper.make_node("Mul", ["sc", "scale"], ["ss"])]
    x = RNG.standard_normal((B, S, E)).astype(np.float32)
    keep = np.ones((B, 1, 1, S), bool)
    keep[1, ..., 3:] = False  # a padded sequence; no row fully masked
    ins = {"x": x}
    if where:
        inits += [const("zero", np.array(0.0, np.float32)),
                  const("ninf", np.array(-np.inf, np.float32))]
        nodes.append(helper.make_node("Where", ["keep", "zero", "ninf"], ["mask"],
                                      name="mask_fill"))
        ins["keep"] = keep
        maskv = np.where(keep, 0.0, -np.inf)
    else:
        maskv = np.where(keep, 0.0, -1e4).astype(np.float32)
        ins["mask"] = maskv
    nodes += [helper.make_node("Add", ["ss", "mask"], ["sa"]),
              helper.make_node("Softmax", ["sa"], ["p"], axis=-1),
              helper.make_node("MatMul", ["p", "vt"], ["o4"], name="context"),
              helper.make_node("Transpose", ["o4"], ["ot"], perm=[0, 2, 1, 3],
                               name="merge_heads")]
    if mergeread:
        nodes.append(helper.make_node("Identity", ["ot"], ["oz"]))
    if merge == "2":
        inits.append(const("sho", np.array([-1, hq * D], np.int64)))
    elif merge == "shape":  # x.size(0), x.size(1) of the Transpose itself
        nodes += [helper.make_node("Shape", ["ot"], ["oshp"]),
                  helper.make_node("Gather", ["oshp", "i0"], ["og0"], axis=0),
                  helper.make_node("Gather", ["oshp", "i1"], ["og1"], axis=0),
                  helper.make_node("Unsqueeze", ["og0", "ax0"], ["ob"]),
                  helper.make_node("Unsqueeze", ["og1", "ax0"], ["os"]),
                  helper.make_node("Concat", ["ob", "os", "hdv"], ["sho"], axis=0)]
    elif const_shapes:
        inits.append(const("sho", np.array([0, 0, hq * D], np.int64)))
    else:
        nodes.append(helper.make_node("Concat", ["s", "b", "hdv"] if swap else ["b", "s", "hdv"],
                                      ["sho"], axis=0))
    nodes.append(helper.make_node("Reshape", ["ot", "sho"], ["y"], name="merge"))

    # NumPy in double
    x64 = x.astype(np.float64)
    proj = {p: x64 @ w[p] + w[p + "b"] for p in "qkv"}
    b, s = (S, B) if swap else (B, S)  # swapped: "batch" S, "sequence" B
    q = proj["q"].reshape(b, s, hq, D).transpose(0, 2, 1, 3)
    k = proj["k"].reshape(b, s, hkv, D).transpose(0, 2, 1, 3)
    v = proj["v"].reshape(b, s, hkv, D).transpose(0, 2, 1, 3)
    if swap:  # a mask that broadcasts either way: [1, 1, 1, B]
        maskv = np.zeros((1, 1, 1, s), np.float32)
        maskv[..., -1] = -1e4
        ins["mask"] = maskv
    sc = q @ k.transpose(0, 1, 3, 2) * np.float64(np.float32(D ** -0.5)) + maskv
    p = np.exp(sc - sc.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    ot = (p @ v).transpose(0, 2, 1, 3)
    y = ot.reshape(b * s, hq * D) if merge == "2" else ot.reshape(b, s, hq * D)

    sym = ["batch", "seq"]
    vi = [helper.make_tensor_value_info("x", TensorProto.FLOAT, sym + [E])]
    if dynamo:
        vi.append(helper.make_tensor_value_info("am", TensorProto.FLOAT, sym))
        ins["am"] = np.ones((B, S), np.float32)
    vi.append(helper.make_tensor_value_info("keep", TensorProto.BOOL, ["batch", 1, 1, "seq"])
              if where else
              helper.make_tensor_value_info("mask", TensorProto.FLOAT, [None] * 4))
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    if shared:
        outs.append(helper.make_tensor_value_info("qt", TensorProto.FLOAT, None))
    if mergeread:
        outs.append(helper.make_tensor_value_info("oz", TensorProto.FLOAT, None))
    graph = helper.make_graph(nodes, name, vi, outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model, ins, y, (ot if mergeread else q)


def check_ort(model, ins, y):
    try:
        import onnxruntime as ort
    except ImportError:
        return
    so = ort.SessionOptions()
    so.log_severity_level = 3
    s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    got = s.run(["y"], ins)[0]
    if not np.allclose(got, y, rtol=1e-4, atol=1e-5):
        sys.exit(f"{model.graph.name}: NumPy's reference differs from ONNX Runtime's")


def write(out, name, **kw):
    model, ins, y, q = build(name, **kw)
    check_ort(model, ins, y)
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for n, a in ins.items():
        np.save(os.path.join(d, f"input_{n}.npy"), a)
    np.save(os.path.join(d, "output_y.npy"), y.astype(np.float32))
    if kw.get("shared"):
        np.save(os.path.join(d, "output_qt.npy"), q.astype(np.float32))
    if kw.get("mergeread"):
        np.save(os.path.join(d, "output_oz.npy"), q.astype(np.float32))


def main():
    out = sys.argv[1]
    write(out, "attn3_mha", hq=4, hkv=4)
    write(out, "attn3_mqa", hq=4, hkv=1, const_shapes=True, kt_0132=True)
    write(out, "attn3_where", hq=4, hkv=4, where=True)
    write(out, "attn3_shared", hq=4, hkv=4, shared=True)
    write(out, "attn3_badsplit", hq=4, hkv=4, swap=True)
    write(out, "attn3_shapes", hq=4, hkv=4, merge="shape")
    write(out, "attn3_rank2", hq=4, hkv=4, merge="2")
    write(out, "attn3_dynamo", hq=4, hkv=4, merge="2", dynamo=True)
    write(out, "attn3_mergeread", hq=4, hkv=4, mergeread=True)


if __name__ == "__main__":
    main()
