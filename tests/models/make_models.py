#!/usr/bin/env python3
"""Regenerates the small real models of tests/models/ (not run in CI).

Needs torch, torchvision and transformers (and onnx, onnxruntime to check
what it wrote), e.g. in a virtual environment of its own:

    python3 -m venv /tmp/venv-models
    /tmp/venv-models/bin/pip install torch torchvision transformers onnx onnxruntime
    /tmp/venv-models/bin/python tests/models/make_models.py [OUT_DIR]

Each model is a real architecture with random weights (seeded), at reduced
widths so that each .onnx stays under ~2 MB, exported as ../shared/models'
were: torch.onnx.export (the TorchScript exporter), opset 17, dynamic batch
(and sequence). The references are not stored: tests/models/run_models.py
computes them with ONNX Runtime when the test runs.

    resnet18_w8.onnx         torchvision's ResNet-18 layout (BasicBlocks
                             [2, 2, 2, 2], 7x7 stem, max pool, global average
                             pool, fc) at 1/8 of its widths (8..64), 100
                             classes; image: batch x 3 x 224 x 224
    shufflenet_v2_x0_5.onnx  torchvision's shufflenet_v2_x0_5 (channel
                             shuffle: Reshape, Transpose, Split), 100 classes
    efficientnet_b0_w25.onnx torchvision's EfficientNet-B0 configuration at
                             width 0.25 and depth 0.34 (MBConv, squeeze and
                             excitation, SiLU), 100 classes
    gpt2_tiny.onnx           transformers' GPT2LMHeadModel: 2 layers, 4
                             heads, n_embd 64, vocabulary 512, 128 positions;
                             a causal mask and the attention mask;
                             input_ids, attention_mask: batch x seq -> logits
    gpt2_tiny_dynamo.onnx    the same model through torch's default exporter
                             since 2.9 (torch.export, dynamo=True), which
                             writes opset 20 and other graph patterns
                             (GatherND, IsNaN, Max in the masks)
"""
import os
import sys

import numpy as np
import torch
import torchvision
from torch import nn
from torchvision.models.resnet import BasicBlock

OPSET = 17


class ResNet18Narrow(nn.Module):
    """ResNet-18 as torchvision lays it out, with BasicBlocks of widths
    `widths` (torchvision's ResNet class fixes 64..512)."""

    def __init__(self, widths=(8, 16, 32, 64), num_classes=100):
        super().__init__()
        w0 = widths[0]
        self.conv1 = nn.Conv2d(3, w0, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(w0)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        layers, inplanes = [], w0
        for i, w in enumerate(widths):
            stride = 1 if i == 0 else 2
            down = None
            if stride != 1 or inplanes != w:
                down = nn.Sequential(nn.Conv2d(inplanes, w, 1, stride=stride, bias=False),
                                     nn.BatchNorm2d(w))
            layers.append(nn.Sequential(BasicBlock(inplanes, w, stride, down),
                                        BasicBlock(w, w)))
            inplanes = w
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(inplanes, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def randomize_batchnorm(model, gen):
    """Running statistics and affine parameters away from the identity, so
    that the normalization folded into the convolutions is not a no-op."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            c = m.num_features
            m.running_mean.copy_(torch.randn(c, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(c, generator=gen) + 0.5)
            m.weight.data.copy_(torch.rand(c, generator=gen) + 0.5)
            m.bias.data.copy_(torch.randn(c, generator=gen) * 0.1)


def export_image_model(model, path):
    model.eval()
    x = torch.randn(2, 3, 224, 224)
    torch.onnx.export(model, (x,), path, dynamo=False, opset_version=OPSET,
                      input_names=["image"], output_names=["logits"],
                      dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})


def make_resnet(out):
    torch.manual_seed(10)
    m = ResNet18Narrow()
    randomize_batchnorm(m, torch.Generator().manual_seed(11))
    export_image_model(m, os.path.join(out, "resnet18_w8.onnx"))


def make_shufflenet(out):
    torch.manual_seed(20)
    m = torchvision.models.shufflenet_v2_x0_5(num_classes=100)
    randomize_batchnorm(m, torch.Generator().manual_seed(21))
    export_image_model(m, os.path.join(out, "shufflenet_v2_x0_5.onnx"))


def make_efficientnet(out):
    from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf
    torch.manual_seed(30)
    setting, last = _efficientnet_conf("efficientnet_b0", width_mult=0.25, depth_mult=0.34)
    m = EfficientNet(setting, 0.2, last_channel=last, num_classes=100)
    randomize_batchnorm(m, torch.Generator().manual_seed(31))
    export_image_model(m, os.path.join(out, "efficientnet_b0_w25.onnx"))


def gpt2_tiny():
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(40)
    cfg = GPT2Config(vocab_size=512, n_positions=128, n_embd=64, n_layer=2, n_head=4,
                     use_cache=False, attn_implementation="eager")
    m = GPT2LMHeadModel(cfg).eval()

    class Logits(nn.Module):
        def __init__(self, lm):
            super().__init__()
            self.lm = lm

        def forward(self, input_ids, attention_mask):
            return self.lm(input_ids=input_ids, attention_mask=attention_mask,
                           use_cache=False).logits

    ids = torch.randint(0, 512, (2, 16))
    mask = torch.ones(2, 16, dtype=torch.int64)
    mask[1, 12:] = 0
    return Logits(m), ids, mask


def make_gpt2(out):
    model, ids, mask = gpt2_tiny()
    torch.onnx.export(model, (ids, mask), os.path.join(out, "gpt2_tiny.onnx"),
                      dynamo=False, opset_version=OPSET,
                      input_names=["input_ids", "attention_mask"], output_names=["logits"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"},
                                    "attention_mask": {0: "batch", 1: "seq"},
                                    "logits": {0: "batch", 1: "seq"}})


def make_gpt2_dynamo(out):
    model, ids, mask = gpt2_tiny()
    batch = torch.export.Dim("batch", min=1, max=64)
    seq = torch.export.Dim("seq", min=1, max=128)
    torch.onnx.export(model, (ids, mask), os.path.join(out, "gpt2_tiny_dynamo.onnx"),
                      dynamo=True, input_names=["input_ids", "attention_mask"],
                      output_names=["logits"],
                      dynamic_shapes={"input_ids": {0: batch, 1: seq},
                                      "attention_mask": {0: batch, 1: seq}})


def check(path):
    """Loads the model in ONNX Runtime once and says how big it is."""
    import onnx
    import onnxruntime as ort
    m = onnx.load(path)
    onnx.checker.check_model(m)
    s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = {}
    for i in s.get_inputs():
        shape = [2 if isinstance(d, str) and d == "batch" else 8 if isinstance(d, str)
                 else d for d in i.shape]
        feeds[i.name] = (np.random.default_rng(0).integers(0, 512, shape)
                         if "int64" in i.type else
                         np.random.default_rng(0).standard_normal(shape).astype(np.float32))
        if i.name == "attention_mask":
            feeds[i.name] = np.ones(shape, np.int64)
    outs = s.run(None, feeds)
    ops = sorted({n.op_type for n in m.graph.node})
    print("%-26s %7.2f MB  max|out| %.3g  ops: %s" % (
        os.path.basename(path), os.path.getsize(path) / 1e6, np.abs(outs[0]).max(),
        " ".join(ops)))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out, exist_ok=True)
    with torch.no_grad():
        make_resnet(out)
        make_shufflenet(out)
        make_efficientnet(out)
        make_gpt2(out)
    make_gpt2_dynamo(out)
    for name in ("resnet18_w8", "shufflenet_v2_x0_5", "efficientnet_b0_w25", "gpt2_tiny",
                 "gpt2_tiny_dynamo"):
        check(os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
