"""Plugins the tests share (a module of its own, so engines that hold them
name it, and a fresh process can import it)."""

import numpy as np

import plugrt as trt
import plugrt.plugin as trtp


class ScalePlugin(trt.Plugin):
    """y = x * scale (float32 field); counts calls per method, and can be
    told to raise in one of them."""
    plugin_name = "PyScale"
    plugin_namespace = "tests"
    calls = {}

    def __init__(self, scale=1.0, fail_in=None):
        super().__init__()
        self.scale = np.float32(scale)
        self.fail_in = fail_in
        self.tactic = 0

    def _note(self, m):
        ScalePlugin.calls[m] = ScalePlugin.calls.get(m, 0) + 1
        if self.fail_in == m:
            raise ValueError("asked to fail in %s" % m)

    def get_output_data_types(self, input_types):
        self._note("get_output_data_types")
        return [input_types[0]]

    def get_output_shapes(self, inputs, shape_inputs, expr_builder):
        self._note("get_output_shapes")
        return [inputs[0]]

    def supports_format_combination(self, pos, in_out, num_inputs):
        self._note("supports_format_combination")
        return in_out[pos].desc.type == trt.float32 and in_out[pos].desc.format == trt.TensorFormat.LINEAR

    def configure_plugin(self, inp, out):
        self._note("configure_plugin")

    def get_workspace_size(self, inp, out):
        self._note("get_workspace_size")
        return 64

    def get_valid_tactics(self):
        self._note("get_valid_tactics")
        return [1, 2]

    def set_tactic(self, tactic):
        self._note("set_tactic")
        self.tactic = tactic

    def on_shape_change(self, inp, out):
        self._note("on_shape_change")

    def enqueue(self, input_desc, output_desc, inputs, outputs, workspace, stream):
        self._note("enqueue")
        if workspace == 0:
            raise RuntimeError("no workspace")
        x = trt.host_array(inputs[0], input_desc[0])
        y = trt.host_array(outputs[0], output_desc[0])
        np.multiply(x, self.scale, out=y)

    def attach_to_context(self, context):
        self._note("attach_to_context")
        return self.clone()

    def get_fields_to_serialize(self):
        self._note("get_fields_to_serialize")
        return trt.PluginFieldCollection([
            trt.PluginField("scale", np.array([self.scale], np.float32), trt.PluginFieldType.FLOAT32),
            trt.PluginField("fail_in", (self.fail_in or "").encode(), trt.PluginFieldType.CHAR)])


class ScaleCreator(trt.PluginCreator):
    name = "PyScale"
    plugin_namespace = "tests"
    plugin_version = "1"
    field_names = trt.PluginFieldCollection([
        trt.PluginField("scale", None, trt.PluginFieldType.FLOAT32),
        trt.PluginField("fail_in", None, trt.PluginFieldType.CHAR)])

    def create_plugin(self, name, fc, phase):
        scale = 1.0
        fail = None
        for f in fc:
            if f.name == "scale":
                scale = float(f.data[0])
            elif f.name == "fail_in":
                fail = f.to_str() or None
        if fail == "create_plugin":
            raise KeyError("asked to fail in create_plugin")
        return ScalePlugin(scale, fail)


trt.get_plugin_registry().register_creator(ScaleCreator())


@trtp.register("tests::twice")
def twice_desc(x: trtp.TensorDesc, factor: float = 2.0) -> trtp.TensorDesc:
    return x.like()


@trtp.impl("tests::twice")
def twice_impl(x: trtp.Tensor, factor: float, outputs, stream) -> None:
    np.multiply(np.asarray(x), factor, out=np.asarray(outputs[0]))


@trtp.impl("tests::twice", device="cuda")
def twice_cuda(x: trtp.Tensor, factor: float, outputs, stream) -> None:
    import torch
    with torch.cuda.stream(torch.cuda.ExternalStream(stream) if stream
                           else torch.cuda.default_stream()):
        torch.mul(torch.as_tensor(x, device="cuda"), factor,
                  out=torch.as_tensor(outputs[0], device="cuda"))
