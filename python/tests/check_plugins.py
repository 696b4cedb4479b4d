"""Plugins for test_check.py, which runs the plugin checker on them in a
process of its own (python -m plugrt.check check_plugins:NAME): two good
ones, a decorator plugin and a class plugin, that pass every check that
applies, and three that each break one contract."""

import ctypes
from typing import List

import numpy as np

import plugrt as trt
import plugrt.plugin as trtp

# ---------------------------------------------------------------------------
# Decorator plugins
# ---------------------------------------------------------------------------


@trtp.register("pcheck::affine")
def affine_desc(x: trtp.TensorDesc, scale: float = 2.0) -> trtp.TensorDesc:
    return x.like()


@trtp.autotune("pcheck::affine")
def affine_autotune(x: trtp.TensorDesc, outputs) -> List[trtp.AutoTuneCombination]:
    return [trtp.AutoTuneCombination("FP32, FP32", "LINEAR", [1, 2])]


@trtp.impl("pcheck::affine")
def affine_impl(x: trtp.Tensor, scale: float, outputs, stream, tactic) -> None:
    """y = x * scale + 1; the two tactics compute it in two ways with the
    same bits."""
    y = np.asarray(outputs[0])
    if tactic == 2:
        y[...] = np.asarray(x) * np.float32(scale)
        y += np.float32(1)
    else:
        np.add(np.multiply(np.asarray(x), np.float32(scale)), np.float32(1), out=y)


@trtp.register("pcheck::overrun")
def overrun_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    return x.like()


@trtp.autotune("pcheck::overrun")
def overrun_autotune(x: trtp.TensorDesc, outputs) -> List[trtp.AutoTuneCombination]:
    return [trtp.AutoTuneCombination("FP32, FP32", "LINEAR")]


@trtp.impl("pcheck::overrun")
def overrun_impl(x: trtp.Tensor, outputs, stream) -> None:
    """A copy that also writes the float after its output's last one."""
    y = np.asarray(outputs[0])
    np.copyto(y, np.asarray(x))
    ctypes.memmove(outputs[0].data_ptr + y.nbytes, y.ctypes.data, min(4, y.nbytes))


_calls = [0]


@trtp.register("pcheck::drifting")
def drifting_desc(x: trtp.TensorDesc) -> trtp.TensorDesc:
    return x.like()


@trtp.autotune("pcheck::drifting")
def drifting_autotune(x: trtp.TensorDesc, outputs) -> List[trtp.AutoTuneCombination]:
    return [trtp.AutoTuneCombination("FP32, FP32", "LINEAR")]


@trtp.impl("pcheck::drifting")
def drifting_impl(x: trtp.Tensor, outputs, stream) -> None:
    """x plus how many times it ran: another result each call."""
    _calls[0] += 1
    np.add(np.asarray(x), np.float32(_calls[0]), out=np.asarray(outputs[0]))


# ---------------------------------------------------------------------------
# Class plugins
# ---------------------------------------------------------------------------


class OffsetPlugin(trt.Plugin):
    """y = x + offset (float32 field), float32 only. `lazy`: enqueue writes
    nothing (the defect the coverage check is for)."""
    plugin_name = "Offset"
    plugin_namespace = "pcheck"
    plugin_version = "1"
    lazy = False

    def __init__(self, offset=0.5):
        super().__init__()
        self.offset = np.float32(offset)

    def get_output_data_types(self, input_types):
        return [input_types[0]]

    def get_output_shapes(self, inputs, shape_inputs, expr_builder):
        return [inputs[0]]

    def supports_format_combination(self, pos, in_out, num_inputs):
        d = in_out[pos].desc
        return d.type == trt.float32 and d.format == trt.TensorFormat.LINEAR

    def enqueue(self, input_desc, output_desc, inputs, outputs, workspace, stream):
        if self.lazy:
            return
        x = trt.host_array(inputs[0], input_desc[0])
        y = trt.host_array(outputs[0], output_desc[0])
        np.add(x, self.offset, out=y)

    def get_fields_to_serialize(self):
        return trt.PluginFieldCollection([
            trt.PluginField("offset", np.array([self.offset], np.float32),
                            trt.PluginFieldType.FLOAT32)])


class LazyPlugin(OffsetPlugin):
    plugin_name = "Lazy"
    lazy = True


class OffsetCreator(trt.PluginCreator):
    plugin_namespace = "pcheck"
    plugin_version = "1"
    field_names = trt.PluginFieldCollection([
        trt.PluginField("offset", None, trt.PluginFieldType.FLOAT32)])

    def __init__(self, cls):
        super().__init__()
        self.cls = cls
        self.name = cls.plugin_name

    def create_plugin(self, name, fc, phase):
        offset = 0.5
        for f in fc:
            if f.name == "offset":
                offset = float(f.data[0])
        return self.cls(offset)


trt.get_plugin_registry().register_creator(OffsetCreator(OffsetPlugin))
trt.get_plugin_registry().register_creator(OffsetCreator(LazyPlugin))
