#!/usr/bin/env python3
"""Quantizes zoo models with ONNX Runtime's own tools and writes them into
tests/models/ (or OUT_DIR). Not run in CI: the files are kept (each well
under 1 MB); run_quantized.py compares plugrt with ONNX Runtime on them.

    PY tests/models/make_quantized.py [OUT_DIR]

PY needs onnxruntime 1.30.0 with onnxruntime.quantization, which imports
ml_dtypes and onnx.reference (onnx >= 1.13). Debian's python3-onnx is
1.12, so use a virtual environment of its own:

    python3 -m venv /opt/plugrt-quant
    /opt/plugrt-quant/bin/pip install onnxruntime==1.30.0 onnx==1.23.2 \\
        ml_dtypes==0.7.0 numpy==2.4.6
    /opt/plugrt-quant/bin/python tests/models/make_quantized.py

Static, QDQ format (QuantizeLinear/DequantizeLinear around every quantized
op), weights int8 per output channel (symmetric), activations uint8 per
tensor, MinMax calibration over 8 random batches from a fixed seed:

    resnet18_w8_qdq.onnx          from resnet18_w8.onnx
    efficientnet_b0_w25_qdq.onnx  from efficientnet_b0_w25.onnx
    resnext_w8_qdq.onnx           from resnext_w8.onnx
    densenet_w8_qdq.onnx          from densenet_w8.onnx
    deeplab_w8_qdq.onnx           from deeplab_w8.onnx (128 x 128 images)

(mobilenet_v3_small's int8 weights alone are 2.5 MB, past the zoo's
size; it stays float.)

Dynamic (quantize_dynamic: weights int8 per tensor; activations quantized
at run time by DynamicQuantizeLinear, uint8; MatMul becomes MatMulInteger
with the scales multiplied back in float):

    gpt2_tiny_dynq.onnx           from gpt2_tiny.onnx
    bert_small_dynq.onnx          from ../shared/models/bert_small.onnx
"""
import os
import sys

import numpy as np
from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat,
                                      QuantType, quantize_dynamic, quantize_static)

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "..", "shared", "models")

CALIBRATION_BATCHES = 8
SEED = 30  # issue 30


class RandomImages(CalibrationDataReader):
    """Seeded standard-normal images, the same distribution run_models.py
    feeds: calibration sees the activations the test will produce."""

    def __init__(self, name, shape):
        rng = np.random.default_rng(SEED)
        self.batches = iter([{name: rng.standard_normal(shape).astype(np.float32)}
                             for _ in range(CALIBRATION_BATCHES)])

    def get_next(self):
        return next(self.batches, None)


# name: the image's height and width
STATIC = [("resnet18_w8", 224), ("efficientnet_b0_w25", 224), ("resnext_w8", 224),
          ("densenet_w8", 224), ("deeplab_w8", 128)]
DYNAMIC = [("gpt2_tiny", HERE), ("bert_small", SHARED)]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else HERE
    os.makedirs(out, exist_ok=True)
    for name, hw in STATIC:
        dst = os.path.join(out, name + "_qdq.onnx")
        quantize_static(os.path.join(HERE, name + ".onnx"), dst,
                        RandomImages("image", (1, 3, hw, hw)),
                        quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        calibrate_method=CalibrationMethod.MinMax)
        print("wrote %s (%.2f MB)" % (dst, os.path.getsize(dst) / 1e6))
    for name, folder in DYNAMIC:
        dst = os.path.join(out, name + "_dynq.onnx")
        quantize_dynamic(os.path.join(folder, name + ".onnx"), dst,
                         weight_type=QuantType.QInt8)
        print("wrote %s (%.2f MB)" % (dst, os.path.getsize(dst) / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
