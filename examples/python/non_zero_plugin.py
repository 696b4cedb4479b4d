#!/usr/bin/env python3
"""NonZero as a Python class plugin, in the style of TensorRT's Python
NonZero sample: a plugin class with the IPluginV3OneCore/Build/Runtime
capabilities and a creator, a data-dependent output (a size tensor), built
through the network API or from an ONNX node, run on a 128x128 input with
random zeros and checked against np.nonzero.

    python3 non_zero_plugin.py --net-type onnx --precision fp16 --backend torch

Backends: numpy (a CPU engine); torch (torch.nonzero on the GPU) and cuda (a
kernel compiled at run time with NVRTC, through cupy.RawKernel) build CUDA
engines. Prints "Inference result correct!" and exits 0 when the result
matches.
"""

import argparse
import sys

import numpy as np

import plugrt as trt

# The cuda backend's kernel: one block scans the input in chunks, so indices
# come out in row-major order, as np.nonzero gives them. Zero is tested on
# the bits (float32 or float16, -0.0 included), so no header is needed.
NONZERO_KERNEL = r"""
template <typename T, unsigned int MASK>
__device__ void nonzero(const T* x, int n, int cols, int row_order, int* out, int* count)
{
    __shared__ int scan[1024];
    __shared__ int total;
    __shared__ int base;
    const int tid = threadIdx.x, nt = blockDim.x;
    if (tid == 0) { total = 0; base = 0; }
    __syncthreads();
    int mine = 0;
    for (int i = tid; i < n; i += nt) mine += (x[i] & MASK) != 0;
    atomicAdd(&total, mine);
    __syncthreads();
    const int k = total;
    for (int start = 0; start < n; start += nt) {
        const int i = start + tid;
        const int flag = i < n && (x[i] & MASK) != 0;
        scan[tid] = flag;
        __syncthreads();
        for (int off = 1; off < nt; off <<= 1) {
            const int v = tid >= off ? scan[tid - off] : 0;
            __syncthreads();
            scan[tid] += v;
            __syncthreads();
        }
        if (flag) {
            const int pos = base + scan[tid] - 1, r = i / cols, c = i % cols;
            if (row_order) { out[2 * pos] = r; out[2 * pos + 1] = c; }
            else { out[pos] = r; out[k + pos] = c; }
        }
        __syncthreads();
        if (tid == nt - 1) base += scan[tid];
        __syncthreads();
    }
    if (tid == 0) *count = k;
}
extern "C" __global__ void nonzero_f32(const unsigned int* x, int n, int cols, int row_order,
                                       int* out, int* count)
{ nonzero<unsigned int, 0x7fffffffu>(x, n, cols, row_order, out, count); }
extern "C" __global__ void nonzero_f16(const unsigned short* x, int n, int cols, int row_order,
                                       int* out, int* count)
{ nonzero<unsigned short, 0x7fffu>(x, n, cols, row_order, out, count); }
"""
_kernels = {}


def nvrtc_kernel(name):
    import cupy
    if name not in _kernels:
        _kernels[name] = cupy.RawKernel(NONZERO_KERNEL, name, options=("-std=c++17",))
    return _kernels[name]


def volume(d):
    return int(np.prod(d))


class NonZeroPlugin(trt.IPluginV3, trt.IPluginV3OneCore, trt.IPluginV3OneBuild,
                    trt.IPluginV3OneRuntime):
    def __init__(self, fc=None, backend="numpy"):
        trt.IPluginV3.__init__(self)
        trt.IPluginV3OneCore.__init__(self)
        trt.IPluginV3OneBuild.__init__(self)
        trt.IPluginV3OneRuntime.__init__(self)
        self.num_outputs = 2
        self.plugin_namespace = ""
        self.plugin_name = "NonZeroPlugin"
        self.plugin_version = "1"
        self.row_order = True
        self.backend = backend
        if fc is not None:
            for f in fc:
                if f.name == "rowOrder":
                    self.row_order = bool(f.data[0] == 1)
                elif f.name == "backend":
                    self.backend = f.to_str()
        # Where enqueue runs: numpy on the CPU, the others on the GPU.
        self.devices = [trt.Device.CPU if self.backend == "numpy" else trt.Device.CUDA]

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
                            trt.PluginFieldType.INT32),
            trt.PluginField("backend", self.backend, trt.PluginFieldType.CHAR)])

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
        if self.backend == "torch":
            return self.enqueue_torch(input_desc, output_desc, inputs, outputs, stream)
        if self.backend == "cuda":
            return self.enqueue_nvrtc(input_desc, output_desc, inputs, outputs, stream)
        # Views of the engine's memory (no copies).
        a = trt.host_array(inputs[0], input_desc[0])
        idx = np.stack(np.nonzero(a), axis=1 if self.row_order else 0).astype(np.int32)
        k = idx.shape[0] if self.row_order else idx.shape[1]
        # The output holds its upper bound; the first true-size elements are
        # the result, written densely.
        out = trt.host_array(outputs[0], (volume(output_desc[0].dims),), trt.int32)
        out[:idx.size] = idx.reshape(-1)
        trt.host_array(outputs[1], (), trt.int32)[()] = k

    def enqueue_torch(self, input_desc, output_desc, inputs, outputs, stream):
        import torch
        # Device memory wrapped without a copy (__cuda_array_interface__),
        # and the work queued on the engine's stream.
        x = torch.as_tensor(trt.device_tensor(inputs[0], input_desc[0], stream=stream),
                            device="cuda")
        out = torch.as_tensor(trt.device_tensor(
            outputs[0], (volume(output_desc[0].dims),), trt.int32, stream=stream), device="cuda")
        k_out = torch.as_tensor(trt.device_tensor(outputs[1], (), trt.int32, stream=stream),
                                device="cuda")
        s = torch.cuda.ExternalStream(stream) if stream else torch.cuda.default_stream()
        with torch.cuda.stream(s):
            idx = torch.nonzero(x)  # K x 2, row-major order (waits for K)
            if not self.row_order:
                idx = idx.t()
            out[:idx.numel()].copy_(idx.reshape(-1))
            k_out.fill_(idx.shape[0] if self.row_order else idx.shape[1])

    def enqueue_nvrtc(self, input_desc, output_desc, inputs, outputs, stream):
        import cupy
        rows, cols = (int(d) for d in input_desc[0].dims)
        half = input_desc[0].type == trt.DataType.HALF
        kern = nvrtc_kernel("nonzero_f16" if half else "nonzero_f32")
        # Raw pointers as 64-bit values; launched on the engine's stream
        # (cupy launches on its current stream).
        with cupy.cuda.ExternalStream(stream) if stream else cupy.cuda.Stream.null:
            kern((1,), (1024,), (np.uint64(inputs[0]), np.int32(rows * cols), np.int32(cols),
                                 np.int32(1 if self.row_order else 0), np.uint64(outputs[0]),
                                 np.uint64(outputs[1])))

    def attach_to_context(self, context):
        return self.clone()

    def set_tactic(self, tactic):
        pass

    def clone(self):
        cloned = NonZeroPlugin()
        cloned.__dict__.update(self.__dict__)
        return cloned


class NonZeroPluginCreator(trt.IPluginCreatorV3One):
    def __init__(self, backend="numpy"):
        trt.IPluginCreatorV3One.__init__(self)
        self.name = "NonZeroPlugin"
        self.plugin_namespace = ""
        self.plugin_version = "1"
        self.backend = backend
        self.field_names = trt.PluginFieldCollection([
            trt.PluginField("rowOrder", np.array([]), trt.PluginFieldType.INT32),
            trt.PluginField("backend", np.array([]), trt.PluginFieldType.CHAR)])

    def create_plugin(self, name, fc, phase):
        return NonZeroPlugin(fc, self.backend)


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
    on_gpu = args.backend != "numpy"
    why = on_gpu and trt.device_unavailable("cuda")
    if why:
        print("the %s backend needs a CUDA device: %s" % (args.backend, why))
        return 2

    dtype = np.float16 if args.precision == "fp16" else np.float32
    logger = trt.Logger(trt.Logger.WARNING)
    trt.get_plugin_registry().register_creator(NonZeroPluginCreator(args.backend), "")

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
    if on_gpu:
        config.device = trt.Device.CUDA
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
    if on_gpu:
        out, short = run_gpu(engine, context, out_name, inp, args.backend)
    else:
        out, short = run_cpu(engine, context, out_name, inp)

    ref = np.stack(np.nonzero(inp), axis=1)
    if np.array_equal(out, ref) and np.array_equal(short, ref):
        print("Inference result correct!")
        return 0
    print("Inference result incorrect: %d indices, %d expected" % (len(out), len(ref)))
    return 1


def run_cpu(engine, context, out_name, inp):
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
    # And the short path.
    short = engine.create_execution_context().run({"X": inp})[out_name]
    return out, short


def run_gpu(engine, context, out_name, inp, backend):
    """Device memory: torch tensors for the torch backend, plugrt.DeviceBuffer
    (libplugrt's cudaMalloc) for the cuda one; a stream of plugrt's."""

    class Allocator(trt.IOutputAllocator):
        def __init__(self):
            trt.IOutputAllocator.__init__(self)
            self.buffers, self.shapes = {}, {}

        def reallocate_output_async(self, tensor_name, memory, size, alignment, stream):
            if backend == "torch":
                import torch
                buf = torch.empty(max(1, size), dtype=torch.uint8, device="cuda")
            else:
                buf = trt.DeviceBuffer(max(1, size))
            self.buffers[tensor_name] = buf
            return buf  # device memory; plugrt keeps it alive

        def notify_shape(self, tensor_name, shape):
            self.shapes[tensor_name] = tuple(shape)

    alloc = Allocator()
    if backend == "torch":
        import torch
        x = torch.from_numpy(inp).cuda()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())  # x's copy first
        context.set_tensor_address("X", x)
        context.set_output_allocator(out_name, alloc)
        context.execute_async_v3(stream)
        stream.synchronize()
        shape = alloc.shapes[out_name]
        flat = alloc.buffers[out_name][:volume(shape) * 4].cpu().numpy()
        # The short path with torch tensors: torch tensors back, on the GPU.
        short = engine.create_execution_context().run({"X": x})[out_name]
        short = short.cpu().numpy()
    else:
        x = trt.DeviceBuffer(inp.nbytes)
        x.copy_from_host(inp)
        context.set_tensor_address("X", x)
        context.set_output_allocator(out_name, alloc)
        context.execute_async_v3(0)
        shape = alloc.shapes[out_name]
        flat = alloc.buffers[out_name].copy_to_host(np.empty(volume(shape) * 4, np.uint8))
        # The short path with numpy: copied in and out.
        short = engine.create_execution_context().run({"X": inp})[out_name]
    out = flat.view(np.int32).reshape(shape)
    return out, short


if __name__ == "__main__":
    sys.exit(main())
