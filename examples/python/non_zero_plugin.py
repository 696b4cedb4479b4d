#!/usr/bin/env python3
"""NonZero as a Python class plugin, in the style of TensorRT's Python
NonZero sample: a plugin class with the IPluginV3OneCore/Build/Runtime
capabilities and a creator, a data-dependent output (a size tensor), built
through the network API or from an ONNX node, run on a 128x128 input with
random zeros and checked against np.nonzero.

    python3 non_zero_plugin.py --net-type onnx --precision fp16 --backend numpy

Backends: numpy (the CPU). torch and cuda are for GPU engines (later).
Prints "Inference result correct!" and exits 0 when the result matches.
"""

import argparse
import sys

import numpy as np

import plugrt as trt


def volume(d):
    return int(np.prod(d))


class NonZeroPlugin(trt.IPluginV3, trt.IPluginV3OneCore, trt.IPluginV3OneBuild,
                    trt.IPluginV3OneRuntime):
    def __init__(self, fc=None):
        trt.IPluginV3.__init__(self)
        trt.IPluginV3OneCore.__init__(self)
        trt.IPluginV3OneBuild.__init__(self)
        trt.IPluginV3OneRuntime.__init__(self)
        self.num_outputs = 2
        self.plugin_namespace = ""
        self.plugin_name = "NonZeroPlugin"
        self.plugin_version = "1"
        self.row_order = True
        if fc is not None:
            for f in fc:
                if f.name == "rowOrder":
                    self.row_order = bool(f.data[0] == 1)

    def get_capability_interface(self, type):
        return self

    def get_output_data_types(self, input_types):
        return [trt.DataType.INT32, trt.DataType.INT32]

    def get_output_shapes(self, inputs, shape_inputs, exprBuilder):
        # Output 0 is K x 2 (or 2 x K); output 1 is the size tensor K (0-D).
        output_dims = [trt.DimsExprs(2), trt.DimsExprs(0)]
        upper_bound = exprBuilder.operation(trt.DimensionOperation.PROD, inputs[0][0], inputs[0][1])
        opt_value = exprBuilder.operation(trt.DimensionOperation.FLOOR_DIV, upper_bound,
                                          exprBuilder.constant(2))
        num_non_zero = exprBuilder.declare_size_tensor(1, opt_value, upper_bound)
        if self.row_order:
            output_dims[0][0] = num_non_zero
            output_dims[0][1] = exprBuilder.constant(2)
        else:
            output_dims[0][0] = exprBuilder.constant(2)
            output_dims[0][1] = num_non_zero
        return output_dims

    def get_fields_to_serialize(self):
        return trt.PluginFieldCollection([
            trt.PluginField("rowOrder", np.array([1 if self.row_order else 0], dtype=np.int32),
                            trt.PluginFieldType.INT32)])

    def configure_plugin(self, inp, out):
        pass

    def on_shape_change(self, inp, out):
        pass

    def supports_format_combination(self, pos, in_out, num_inputs):
        assert num_inputs == 1
        assert pos < len(in_out)
        desc = in_out[pos].desc
        if desc.format != trt.TensorFormat.LINEAR:
            return False
        if pos == 0:  # the input: float32 or float16
            return desc.type in (trt.DataType.FLOAT, trt.DataType.HALF)
        return desc.type == trt.DataType.INT32  # the indices and the size tensor

    def enqueue(self, input_desc, output_desc, inputs, outputs, workspace, stream):
        # Views of the engine's memory (no copies).
        a = trt.host_array(inputs[0], input_desc[0])
        idx = np.stack(np.nonzero(a), axis=1 if self.row_order else 0).astype(np.int32)
        k = idx.shape[0] if self.row_order else idx.shape[1]
        # The output holds its upper bound; the first true-size elements are
        # the result, written densely.
        out = trt.host_array(outputs[0], (volume(output_desc[0].dims),), trt.int32)
        out[:idx.size] = idx.reshape(-1)
        trt.host_array(outputs[1], (), trt.int32)[()] = k

    def attach_to_context(self, context):
        return self.clone()

    def set_tactic(self, tactic):
        pass

    def clone(self):
        cloned = NonZeroPlugin()
        cloned.__dict__.update(self.__dict__)
        return cloned


class NonZeroPluginCreator(trt.IPluginCreatorV3One):
    def __init__(self):
        trt.IPluginCreatorV3One.__init__(self)
        self.name = "NonZeroPlugin"
        self.plugin_namespace = ""
        self.plugin_version = "1"
        self.field_names = trt.PluginFieldCollection([
            trt.PluginField("rowOrder", np.array([]), trt.PluginFieldType.INT32)])

    def create_plugin(self, name, fc, phase):
        return NonZeroPlugin(fc)


def onnx_model(dtype):
    from onnx import TensorProto, helper
    elem = TensorProto.FLOAT16 if dtype == np.float16 else TensorProto.FLOAT
    node = helper.make_node("NonZeroPlugin", ["X"], ["Y0", "Y1"], name="nonzero", rowOrder=1)
    graph = helper.make_graph(
        [node], "nonzero",
        [helper.make_tensor_value_info("X", elem, ["R", "C"])],
        [helper.make_tensor_value_info("Y0", TensorProto.INT32, ["K", 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--net-type", choices=["onnx", "network"], default="network")
    ap.add_argument("--precision", choices=["fp32", "fp16"], default="fp32")
    ap.add_argument("--backend", choices=["numpy", "torch", "cuda"], default="numpy")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.backend != "numpy":
        print("the %s backend runs GPU engines, which come later; use --backend numpy"
              % args.backend)
        return 2

    dtype = np.float16 if args.precision == "fp16" else np.float32
    logger = trt.Logger(trt.Logger.WARNING)
    trt.get_plugin_registry().register_creator(NonZeroPluginCreator(), "")

    builder = trt.Builder(logger)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.STRONGLY_TYPED))
    if args.net_type == "onnx":
        parser = trt.OnnxParser(network, logger)
        parser.parse(onnx_model(dtype))
        out_name = network.get_output(0).name
    else:
        x = network.add_input("X", trt.float16 if dtype == np.float16 else trt.float32, (-1, -1))
        creator = trt.get_plugin_registry().get_creator("NonZeroPlugin", "1", "")
        fc = trt.PluginFieldCollection([
            trt.PluginField("rowOrder", np.array([1], dtype=np.int32), trt.PluginFieldType.INT32)])
        plugin = creator.create_plugin("nonzero", fc, trt.TensorRTPhase.BUILD)
        layer = network.add_plugin_v3([x], [], plugin)
        layer.get_output(0).name = "Y0"
        network.mark_output(layer.get_output(0))
        out_name = "Y0"

    config = builder.create_builder_config()
    profile = builder.create_optimization_profile()
    profile.set_shape("X", (1, 1), (128, 128), (256, 256))
    config.add_optimization_profile(profile)
    engine_bytes = builder.build_serialized_network(network, config)
    engine = trt.Runtime(logger).deserialize_cuda_engine(engine_bytes)

    rng = np.random.default_rng(args.seed)
    inp = rng.random((128, 128)).astype(dtype)
    inp[rng.random((128, 128)) < 0.5] = 0

    # TensorRT's calls: shapes, addresses, an output allocator for the
    # data-dependent output, execute_async_v3.
    context = engine.create_execution_context()
    context.set_input_shape("X", inp.shape)

    class Allocator(trt.IOutputAllocator):
        def __init__(self):
            trt.IOutputAllocator.__init__(self)
            self.buffers, self.shapes = {}, {}

        def reallocate_output(self, tensor_name, memory, size, alignment):
            self.buffers[tensor_name] = np.empty(max(1, size), np.uint8)
            return self.buffers[tensor_name]

        def notify_shape(self, tensor_name, shape):
            self.shapes[tensor_name] = tuple(shape)

    alloc = Allocator()
    context.set_tensor_address("X", inp)
    context.set_output_allocator(out_name, alloc)
    context.execute_async_v3(0)
    shape = alloc.shapes[out_name]
    out = alloc.buffers[out_name][:volume(shape) * 4].view(np.int32).reshape(shape)

    ref = np.stack(np.nonzero(inp), axis=1)
    # And the short path.
    short = engine.create_execution_context().run({"X": inp})[out_name]
    if np.array_equal(out, ref) and np.array_equal(short, ref):
        print("Inference result correct!")
        return 0
    print("Inference result incorrect: %d indices, %d expected" % (len(out), len(ref)))
    return 1


if __name__ == "__main__":
    sys.exit(main())
