"""Writes the models of attention.sh and what they must compute.

    make_attention_models.py OUT_DIR

Each OUT_DIR/NAME/ holds model.onnx (one Attention node, default-domain
opset 20: the importer takes Attention at any opset it accepts), input_*.npy
and output_y.npy, the result of ref_attention below (ONNX's reference,
onnx/reference/ops/op_attention.py, in float64 without the KV cache). Where
this ONNX Runtime runs Attention (opset 23), the reference is first checked
against it, so the reference itself is tested. Cases: rank 4 and rank 3,
grouped-query heads, a head size of V unlike Q's, bool and additive masks
of ranks 2 to 4 (one shorter than the keys), is_causal with Sq < Skv and
with a mask, scale, softcap, float16 and bfloat16 (as float16 in, checked
loosely), a key length of 1 and 70 (past one tile of 64 queries).
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def ref_attention(q, k, v, mask=None, is_causal=0, scale=None, softcap=0.0,
                  qh=0, kvh=0, k_transposed=0, empty_rows_zero=0):
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    rank = q.ndim
    if rank == 3:
        b, sq, _ = q.shape
        q = q.reshape(b, sq, qh, -1).transpose(0, 2, 1, 3)
        k = k.reshape(b, k.shape[1], kvh, -1).transpose(0, 2, 1, 3)
        v = v.reshape(b, v.shape[1], kvh, -1).transpose(0, 2, 1, 3)
    if k_transposed:
        k = k.transpose(0, 1, 3, 2)
    sq, skv = q.shape[2], k.shape[2]
    if scale is None:
        scale = 1.0 / np.sqrt(q.shape[3])
    rep = q.shape[1] // k.shape[1]
    k = np.repeat(k, rep, axis=1)
    v = np.repeat(v, rep, axis=1)
    s = (q @ k.transpose(0, 1, 3, 2)) * scale
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    bias = np.zeros((sq, skv))
    if mask is not None:
        m = mask
        pad = skv - m.shape[-1]
        if m.dtype == np.bool_:
            m = np.where(m, 0.0, -np.inf)
        m = m.astype(np.float64)
        if pad > 0:
            m = np.pad(m, [(0, 0)] * (m.ndim - 1) + [(0, pad)], constant_values=-np.inf)
        bias = bias + m
    if is_causal:
        bias = bias + np.where(np.tril(np.ones((sq, skv))) > 0, 0.0, -np.inf)
    s = s + bias
    with np.errstate(invalid="ignore"):
        mx = s.max(axis=-1, keepdims=True)
        e = np.exp(s - mx)
        p = e / e.sum(axis=-1, keepdims=True)
    if empty_rows_zero:
        p = np.where(np.isnan(p), 0.0, p)
    y = p @ v
    if rank == 3:
        y = y.transpose(0, 2, 1, 3).reshape(y.shape[0], sq, -1)
    return y


ONNX_TYPE = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16,
             np.bool_: TensorProto.BOOL}


def write(out, name, ins, y, attrs, opset=20):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    names = [n for n, _ in ins]
    node = helper.make_node("Attention", names, ["y"], **attrs)
    vi = [helper.make_tensor_value_info(n, ONNX_TYPE[a.dtype.type], a.shape) for n, a in ins]
    yt = ONNX_TYPE[ins[0][1].dtype.type]
    graph = helper.make_graph([node], name, vi,
                              [helper.make_tensor_value_info("y", yt, y.shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for n, a in ins:
        np.save(os.path.join(d, f"input_{n}.npy"), a)
    np.save(os.path.join(d, "output_y.npy"), y.astype(ins[0][1].dtype))
    return model


checked = []


def ort_check(name, ins, y, attrs):
    """The reference against ONNX Runtime's Attention, where it has one."""
    try:
        import onnxruntime as ort
    except ImportError:
        return
    names = [n for n, _ in ins]
    node = helper.make_node("Attention", names, ["y"], **attrs)
    vi = [helper.make_tensor_value_info(n, ONNX_TYPE[a.dtype.type], a.shape) for n, a in ins]
    graph = helper.make_graph([node], name, vi, [helper.make_tensor_value_info(
        "y", ONNX_TYPE[ins[0][1].dtype.type], None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 10
    try:
        sess = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"])
    except Exception:  # an ONNX Runtime without Attention-23
        return
    try:
        got = sess.run(None, dict(ins))[0].astype(np.float64)
    except Exception:  # ORT refuses some broadcasts of the mask ONNX allows
        return
    checked.append(name)
    tol = 2e-3 if ins[0][1].dtype == np.float16 else 1e-5
    if not np.allclose(got, y, rtol=tol, atol=tol, equal_nan=True):
        sys.exit(f"{name}: the reference differs from ONNX Runtime's Attention "
                 f"(max diff {np.nanmax(np.abs(got - y))})")


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(24)

    def r(*shape, dt=np.float32):
        return rng.standard_normal(shape).astype(dt)

    cases = []
    # name, (Q, K, V shapes), mask, attrs, plugrt-only attrs
    cases.append(("4d", r(2, 3, 5, 8), r(2, 3, 7, 8), r(2, 3, 7, 8), None, {}))
    cases.append(("4d_long", r(1, 2, 70, 16), r(1, 2, 70, 16), r(1, 2, 70, 16), None, {}))
    cases.append(("4d_gqa", r(2, 6, 4, 8), r(2, 2, 6, 8), r(2, 2, 6, 8), None, {}))
    cases.append(("4d_dv", r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 10), None, {}))
    cases.append(("4d_kv1", r(1, 2, 3, 8), r(1, 2, 1, 8), r(1, 2, 1, 8), None, {}))
    cases.append(("4d_scale", r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8), None,
                  {"scale": 0.3}))
    cases.append(("4d_softcap", r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8), None,
                  {"softcap": 2.0, "scale": 1.5}))
    cases.append(("4d_causal", r(2, 3, 70, 8), r(2, 3, 70, 8), r(2, 3, 70, 8), None,
                  {"is_causal": 1}))
    cases.append(("4d_causal_short", r(1, 2, 4, 8), r(1, 2, 9, 8), r(1, 2, 9, 8), None,
                  {"is_causal": 1}))
    cases.append(("4d_mask_bool", r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8),
                  rng.random((4, 6)) > 0.3, {}))
    cases.append(("4d_mask_float4", r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8),
                  r(2, 1, 4, 6), {}))
    cases.append(("4d_mask_short", r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8),
                  r(1, 3, 1, 4), {}))
    cases.append(("4d_mask_causal", r(2, 3, 5, 8), r(2, 3, 5, 8), r(2, 3, 5, 8),
                  r(5, 5), {"is_causal": 1}))
    cases.append(("3d", r(2, 5, 24), r(2, 7, 24), r(2, 7, 24), None,
                  {"q_num_heads": 3, "kv_num_heads": 3}))
    cases.append(("3d_gqa_mask", r(2, 5, 32), r(2, 7, 16), r(2, 7, 12), r(2, 4, 5, 7),
                  {"q_num_heads": 4, "kv_num_heads": 2}))
    cases.append(("4d_fp16", r(2, 3, 5, 8, dt=np.float16), r(2, 3, 7, 8, dt=np.float16),
                  r(2, 3, 7, 8, dt=np.float16), r(5, 7, dt=np.float16), {}))
    # The CPU kernel's vector rows and packed products (attn_kernel.c,
    # ATTN_PANEL_MIN keys and more): row lengths past the vectors with a
    # tail, a float and a bool mask, causal rows cut short inside a tile.
    cases.append(("4d_keys150_mask", r(1, 2, 70, 16), r(1, 2, 150, 16), r(1, 2, 150, 16),
                  r(1, 1, 70, 150), {}))
    cases.append(("4d_causal140_bool", r(1, 2, 140, 24), r(1, 2, 140, 24),
                  r(1, 2, 140, 24), rng.random((140, 140)) > 0.2, {"is_causal": 1}))
    for name, q, k, v, mask, attrs in cases:
        ins = [("q", q), ("k", k), ("v", v)]
        if mask is not None:
            ins.append(("mask", mask))
        kw = dict(attrs)
        qh, kvh = kw.pop("q_num_heads", 0), kw.pop("kv_num_heads", 0)
        y = ref_attention(q, k, v, mask, qh=qh, kvh=kvh, **kw)
        ort_check(name, ins, y, attrs)
        write(out, name, ins, y, attrs)
    # plugrt's own fields: K given transposed, and rows with every key
    # masked (NaN by default, zeros with empty_rows_zero).
    q, k, v = r(2, 3, 4, 8), r(2, 3, 8, 6), r(2, 3, 6, 8)
    write(out, "k_transposed", [("q", q), ("k", k), ("v", v)],
          ref_attention(q, k, v, k_transposed=1), {"k_transposed": 1})
    q, k, v = r(1, 2, 66, 8), r(1, 2, 8, 130), r(1, 2, 130, 8)
    write(out, "k_transposed130", [("q", q), ("k", k), ("v", v)],
          ref_attention(q, k, v, k_transposed=1), {"k_transposed": 1})
    q, k, v = r(2, 3, 4, 8), r(2, 3, 8, 6), r(2, 3, 6, 8)
    mask = rng.random((2, 1, 4, 6)) > 0.5
    mask[:, :, 1, :] = False
    for ez in (0, 1):
        write(out, f"empty_rows{ez}", [("q", q), ("k", k.transpose(0, 1, 3, 2).copy()),
                                       ("v", v), ("mask", mask)],
              ref_attention(q, k.transpose(0, 1, 3, 2), v, mask, empty_rows_zero=ez),
              {"empty_rows_zero": ez} if ez else {})
    print("reference checked against ONNX Runtime:", " ".join(checked) or "none")


if __name__ == "__main__":
    main()
