"""Writes attnfuse.sh's models of one QKV projection and what they compute.

    make_qkvfuse_models.py OUT_DIR

Self-attention whose Q, K and V come from one projection, as PyTorch's
exporters write timm's and torchvision-style ViT blocks: x (2x5x32, batch
and sequence symbolic) -> MatMul + bias to qkv [B, S, 96] -> Reshape to
[B, S, 3, H, D] (H 4, D 8) -> the three parts -> MatMul(Q, K^T) ->
Mul(scale) -> [Add(mask)] -> Softmax -> MatMul(V) -> Transpose(0 2 1 3) ->
Reshape to [B, S, 32]. The parts are cut as:
  qkv_gather0  Transpose(2 0 3 1 4) to [3, B, H, S, D], Gather(axis 0, i)
               (TorchScript's unbind), K^T as Transpose(0 1 3 2) of K,
               sizes x.size(0) and x.size(1) through Shape nodes, a float
               mask [B, 1, 1, S]
  qkv_split0   the same Transpose, Split(axis 0, num_outputs 3) and
               Squeeze(axes [0]) (the dynamo export's unbind, opset 18),
               Q and K^T each scaled by D^-1/4 (scaled_dot_product_attention's
               export), shape [0, 0, 3, H, D]
  qkv_gather2  Gather(axis 2, i) of the [B, S, 3, H, D] value (qkv[:, :, i]),
               then Transpose(0 2 1 3), K^T as one Transpose(0 2 3 1) (the
               exporter's consecutive Transposes joined)
  qkv_split2   Split(axis 2, split [1, 1, 1]) -> Squeeze(axes [2]) ->
               Transpose(0 2 1 3), K^T Transpose(0 1 3 2) of that
  qkv_order    as qkv_gather0, Q, K, V the projection's thirds 2, 0, 1
Each of these becomes a Split of qkv into thirds and one rank-3 Attention.
And two that stay rank 4, with an info line saying why:
  qkv_shared   the [3, B, H, S, D] Transpose is also a graph output
  qkv_swapped  the Reshape's sizes are [x.size(1), x.size(0), 3, H, D]
Each OUT_DIR/NAME/ holds model.onnx, input_*.npy and output_y.npy (NumPy's
result in double, rounded to float32; checked against ONNX Runtime's here).
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

from make_attnfuse_models import check_ort, const

RNG = np.random.default_rng(25)
B, S, H, D = 2, 5, 4, 8
E = H * D


def build(name, form, *, mask=False, sdpa=False, order=(0, 1, 2), shared=False,
          swap=False, opset=17):
    n = helper.make_node
    w = (RNG.standard_normal((E, 3 * E)) * 0.3).astype(np.float32)
    wb = (RNG.standard_normal(3 * E) * 0.1).astype(np.float32)
    inits = [const("W", w), const("Wb", wb),
             const("i0", np.array(0, np.int64)), const("i1", np.array(1, np.int64)),
             const("ax0", np.array([0], np.int64)), const("ax2", np.array([2], np.int64)),
             const("tail", np.array([3, H, D], np.int64)),
             const("sho", np.array([0, 0, E], np.int64)),
             const("scale", np.array(D ** -0.5, np.float32)),
             const("qscale", np.array(D ** -0.25, np.float32))]
    nodes = [n("MatMul", ["x", "W"], ["qkvm"], name="qkv_proj"),
             n("Add", ["qkvm", "Wb"], ["qkv"], name="qkv_bias")]
    if form == "split0":
        inits.append(const("sh5", np.array([0, 0, 3, H, D], np.int64)))
    else:  # x.size(0), x.size(1) as TorchScript writes them
        nodes += [n("Shape", ["x"], ["shp"]),
                  n("Gather", ["shp", "i0"], ["g0"], axis=0),
                  n("Gather", ["shp", "i1"], ["g1"], axis=0),
                  n("Unsqueeze", ["g0", "ax0"], ["b"]),
                  n("Unsqueeze", ["g1", "ax0"], ["s"]),
                  n("Concat", ["s", "b", "tail"] if swap else ["b", "s", "tail"], ["sh5"],
                    axis=0)]
    nodes.append(n("Reshape", ["qkv", "sh5"], ["qkv5"], name="qkv_split"))
    role = dict(zip("qkv", order))  # the third each of Q, K, V reads
    parts = {}
    if form in ("gather0", "split0"):
        nodes.append(n("Transpose", ["qkv5"], ["qkvt"], perm=[2, 0, 3, 1, 4],
                       name="qkv_permute"))
        if form == "gather0":
            for p in "qkv":
                inits.append(const("ix" + p, np.array(role[p], np.int64)))
                nodes.append(n("Gather", ["qkvt", "ix" + p], [p + "h"], axis=0))
                parts[p] = p + "h"
        else:
            third = ["t0", "t1", "t2"]
            nodes.append(n("Split", ["qkvt"], third, axis=0, num_outputs=3))
            for p in "qkv":
                nodes.append(n("Squeeze", [third[role[p]], "ax0"], [p + "h"]))
                parts[p] = p + "h"
        kt = [n("Transpose", ["kh"], ["kt"], perm=[0, 1, 3, 2])]
    else:
        if form == "gather2":
            for p in "qkv":
                inits.append(const("ix" + p, np.array(role[p], np.int64)))
                nodes.append(n("Gather", ["qkv5", "ix" + p], [p + "4"], axis=2))
        else:
            inits.append(const("ones", np.array([1, 1, 1], np.int64)))
            third = ["t0", "t1", "t2"]
            nodes.append(n("Split", ["qkv5", "ones"], third, axis=2))
            for p in "qkv":
                nodes.append(n("Squeeze", [third[role[p]], "ax2"], [p + "4"]))
        for p in "qv":
            nodes.append(n("Transpose", [p + "4"], [p + "h"], perm=[0, 2, 1, 3]))
            parts[p] = p + "h"
        if form == "gather2":
            kt = [n("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1])]
        else:
            kt = [n("Transpose", ["k4"], ["kh"], perm=[0, 2, 1, 3]),
                  n("Transpose", ["kh"], ["kt"], perm=[0, 1, 3, 2])]
    nodes += kt
    q, k = parts["q"], "kt"
    if sdpa:
        nodes += [n("Mul", [q, "qscale"], ["qs"]), n("Mul", ["kt", "qscale"], ["ks"])]
        q, k = "qs", "ks"
    nodes.append(n("MatMul", [q, k], ["sc"], name="scores"))
    if not sdpa:
        nodes.append(n("Mul", ["sc", "scale"], ["ss"]))
    sm_in = "sc" if sdpa else "ss"
    x = RNG.standard_normal((B, S, E)).astype(np.float32)
    ins = {"x": x}
    maskv = np.zeros((B, 1, 1, S))
    if mask:
        maskv = np.zeros((B, 1, 1, S), np.float32)
        maskv[1, ..., 3:] = -1e4
        ins["mask"] = maskv
        nodes.append(n("Add", [sm_in, "mask"], ["sa"]))
        sm_in = "sa"
    nodes += [n("Softmax", [sm_in], ["p"], axis=-1),
              n("MatMul", ["p", parts["v"]], ["o4"], name="context"),
              n("Transpose", ["o4"], ["ot"], perm=[0, 2, 1, 3], name="merge_heads"),
              n("Reshape", ["ot", "sho"], ["y"], name="merge")]

    # NumPy in double
    qkv = x.astype(np.float64) @ w + wb
    b, s = (S, B) if swap else (B, S)
    q5 = qkv.reshape(b, s, 3, H, D).transpose(2, 0, 3, 1, 4)
    qh, kh, vh = (q5[role[p]] for p in "qkv")
    if swap:  # [S, B] read as batch and sequence: the mask must broadcast
        maskv = np.zeros((1, 1, 1, 1))
    sc = qh @ kh.transpose(0, 1, 3, 2) * np.float64(np.float32(D ** -0.5)) + maskv
    p = np.exp(sc - sc.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    y = (p @ vh).transpose(0, 2, 1, 3).reshape(b, s, E)

    vi = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", E])]
    if mask:
        vi.append(helper.make_tensor_value_info("mask", TensorProto.FLOAT, [None] * 4))
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    extra = {}
    if shared:
        outs.append(helper.make_tensor_value_info("qkvt", TensorProto.FLOAT, None))
        extra["qkvt"] = q5
    graph = helper.make_graph(nodes, name, vi, outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model, ins, y, extra


def write(out, name, form, **kw):
    model, ins, y, extra = build(name, form, **kw)
    check_ort(model, ins, y)
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for k, a in ins.items():
        np.save(os.path.join(d, f"input_{k}.npy"), a)
    np.save(os.path.join(d, "output_y.npy"), y.astype(np.float32))
    for k, a in extra.items():
        np.save(os.path.join(d, f"output_{k}.npy"), a.astype(np.float32))


def main():
    out = sys.argv[1]
    write(out, "qkv_gather0", "gather0", mask=True)
    write(out, "qkv_split0", "split0", sdpa=True, opset=18)
    write(out, "qkv_gather2", "gather2")
    write(out, "qkv_split2", "split2", mask=True)
    write(out, "qkv_order", "gather0", order=(2, 0, 1))
    write(out, "qkv_shared", "gather0", shared=True)
    write(out, "qkv_swapped", "gather0", swap=True)


if __name__ == "__main__":
    main()
