#!/usr/bin/env python3
"""LSTM, GRU and RNN nodes through the plugrt program against ONNX Runtime,
for the attributes ONNX's node tests leave out: non-default activations
with activation_alpha and activation_beta (ONNX Runtime consumes them in
order, each by the functions that take one), clip, linear_before_reset,
input_forget, ragged sequence_lens (0 and T among them), B omitted while
sequence_lens and initial_h are given, Y left unnamed while Y_h is, reverse
and bidirectional. (ONNX Runtime refuses layout 1; test_ops_rnn and the
node tests test_*_batchwise cover it.)

    rnn_vs_ort.py --plugrt PATH [--work DIR] [--device cpu|cuda]

For each case: seeded random inputs to ONNX Runtime for the references,
written as input_<name>.npy / output_<name>.npy beside the model, then
`plugrt run model.onnx --device DEVICE --compare DIR --atol 1e-5 --rtol
1e-4` (CTest runs it on the CPU; --device cuda on a GPU machine). Exit status
0 pass, 1 a mismatch, 77 (skipped) without numpy, onnx or onnxruntime.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plugrt", required=True)
    ap.add_argument("--work", default="")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    a = ap.parse_args()
    try:
        import numpy as np
        import onnx
        import onnx.numpy_helper
        import onnxruntime as ort
        from onnx import TensorProto as TP
        from onnx import helper
    except ImportError as e:
        print("rnn_vs_ort: skipped: %s" % e)
        return SKIP
    work = a.work or tempfile.mkdtemp(prefix="rnn_vs_ort.")
    rng = np.random.default_rng(5)
    failures = 0

    def case(name, op, attrs, T=4, B=3, I=5, H=6, D=2, lens=None, outs=("Y", "Yh"),
             with_b=True, weights_const=False):
        nonlocal failures
        G = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
        feeds = {"X": rng.standard_normal((T, B, I)).astype(np.float32),
                 "W": (0.7 * rng.standard_normal((D, G * H, I))).astype(np.float32),
                 "R": (0.7 * rng.standard_normal((D, G * H, H))).astype(np.float32)}
        if with_b:
            feeds["B"] = (0.3 * rng.standard_normal((D, 2 * G * H))).astype(np.float32)
        if lens is not None:
            feeds["seq"] = np.array(lens, np.int32)
        feeds["h0"] = rng.standard_normal((D, B, H)).astype(np.float32)
        ins = ["X", "W", "R", "B" if with_b else "", "seq" if lens is not None else "", "h0"]
        # Constant W, R and B (initializers): the CPU prepares them once.
        consts = ("W", "R", "B") if weights_const else ()
        inits = [onnx.numpy_helper.from_array(feeds.pop(k), k) for k in consts if k in feeds]
        inputs = [helper.make_tensor_value_info(k, TP.INT32 if k == "seq" else TP.FLOAT,
                                                v.shape) for k, v in feeds.items()]
        direction = "bidirectional" if D == 2 else "reverse"
        node = helper.make_node(op, ins, list(outs), hidden_size=H, direction=direction,
                                **attrs)
        named = [o for o in outs if o]
        g = helper.make_graph([node], name, inputs,
                              [helper.make_tensor_value_info(o, TP.FLOAT, None) for o in named],
                              inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
        m.ir_version = 8
        d = os.path.join(work, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        onnx.save(m, os.path.join(d, "model.onnx"))
        sess = ort.InferenceSession(m.SerializeToString(),
                                    providers=["CPUExecutionProvider"])
        for k, v in feeds.items():
            np.save(os.path.join(d, "input_%s.npy" % k), v)
        for o, v in zip(named, sess.run(None, feeds)):
            np.save(os.path.join(d, "output_%s.npy" % o), v)
        p = subprocess.run([a.plugrt, "run", os.path.join(d, "model.onnx"), "--device",
                            a.device, "--compare", d,
                            "-n", "1", "--warmup", "0", "--atol", "1e-5", "--rtol", "1e-4"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
        text = p.stdout.decode("utf-8", "replace")
        if p.returncode != 0 or "PASSED:" not in text:
            failures += 1
            print("FAIL %s\n%s" % (name, "\n".join("    | " + l
                                                    for l in text.splitlines()[-15:])))
        else:
            print("ok   %s" % name)

    case("gru_acts_lbr", "GRU",
         dict(activations=["LeakyRelu", "Tanh", "Sigmoid", "HardSigmoid"],
              activation_alpha=[0.2, 0.3, 0.6], activation_beta=[0.4],
              linear_before_reset=1))
    case("gru_lbr_const", "GRU", dict(linear_before_reset=1), lens=[4, 1, 0],
         weights_const=True)
    case("gru_acts", "GRU",
         dict(activations=["Sigmoid", "ScaledTanh", "HardSigmoid", "Affine"],
              activation_alpha=[0.9, 0.3, 0.6], activation_beta=[0.4, 0.7, 0.2]))
    case("gru_softplus", "GRU", dict(activations=["Sigmoid", "Softplus"]), D=1)
    case("lstm_acts_clip", "LSTM",
         dict(activations=["Sigmoid", "Tanh", "Relu", "Sigmoid", "Softsign", "Tanh"],
              clip=1.5), lens=[4, 0, 2], outs=("Y", "Yh", "Yc"))
    case("lstm_clip", "LSTM", dict(clip=0.7), lens=[4, 0, 2], outs=("Y", "Yh", "Yc"))
    case("lstm_input_forget", "LSTM", dict(input_forget=1), D=1, lens=[3, 4, 1],
         outs=("Y", "Yh", "Yc"))
    case("rnn_relu_elu", "RNN", dict(activations=["Relu", "Elu"], activation_alpha=[0.5]),
         lens=[1, 4, 3])
    case("rnn_thresholded", "RNN",
         dict(activations=["ThresholdedRelu"], activation_alpha=[0.1]), D=1)
    case("rnn_only_yh_no_b", "RNN", {}, D=1, lens=[2, 3, 1], outs=("", "Yh"), with_b=False)
    case("rnn_const_no_b", "RNN", {}, lens=[2, 4, 1], with_b=False, weights_const=True)
    case("lstm_const_clip", "LSTM", dict(clip=2.0), lens=[4, 2, 3], outs=("Y", "Yh", "Yc"),
         weights_const=True)
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)
    print("%d case(s) failed" % failures if failures else "all cases passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
