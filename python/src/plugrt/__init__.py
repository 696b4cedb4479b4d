"""plugrt: an inference engine built around custom-operator plugins, with
TensorRT's Python names (``import plugrt as trt``).

The package is ctypes over libplugrt's public C API; the libraries
(libplugrt, the standard plugins, the ONNX importer) ship inside it.

The TensorRT workflow::

    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.STRONGLY_TYPED))
    x = network.add_input("x", trt.float32, (-1, 4))
    layer = network.add_plugin_v3([x], [], plugin)
    network.mark_output(layer.get_output(0))
    config = builder.create_builder_config()
    profile = builder.create_optimization_profile()
    profile.set_shape("x", (1, 4), (8, 4), (64, 4))
    config.add_optimization_profile(profile)
    data = builder.build_serialized_network(network, config)
    engine = trt.Runtime(logger).deserialize_cuda_engine(data)
    context = engine.create_execution_context()

and the short one: ``plugrt.build(...)``, ``engine.save(path)``,
``plugrt.load(path)``, ``context.run({"x": array})``. On CUDA
(``device="cuda"``) run takes and returns torch or cupy tensors too, and
Python plugins that list CUDA get device memory (``plugrt.device_tensor``,
``plugrt.plugin.Tensor``'s __cuda_array_interface__ and DLPack).

Every failure raises a subclass of plugrt.Error whose message is the
library's (prt_last_error()). Calls into C release the GIL.
"""

from . import _capi
from ._errors import (AlreadyExistsError, Error, InternalError, InvalidArgumentError,
                      IOError, MalformedError, NotFoundError, OutOfMemoryError, PluginError,
                      ShapeError, StateError, UnsupportedError, VersionError)
from ._exprs import DimsExprs, IDimensionExpr, IExprBuilder
from ._network import (Builder, BuilderFlag, HostMemory, IBuilderConfig, IConstantLayer, ILayer,
                       INetworkDefinition, IOptimizationProfile, IPluginV3Layer, ITensor,
                       OnnxParser, ParserError)
from ._plugin import (CCreator, CPlugin, IPluginCreatorV3One, IPluginV3, IPluginV3OneBuild,
                      IPluginV3OneCore, IPluginV3OneRuntime, Plugin, PluginCreator,
                      PluginResourceContext, set_plugin_tracebacks)
from ._registry import (ILogger, Logger, PluginLibrary, Registry, get_plugin_registry,
                        init_libnvinfer_plugins)
from ._runtime import ICudaEngine, IExecutionContext, IOutputAllocator, Runtime, load
from ._short import build
from ._cuda import (DeviceBuffer, Stream, check_device, device_available, device_count,
                    device_unavailable, get_current_device, get_device_info, set_current_device)
from ._types import (DataType, Device, DimensionOperation, Dims, DynamicPluginTensorDesc,
                     MemoryPoolType, NetworkDefinitionCreationFlag, PluginCapabilityType,
                     PluginField, PluginFieldCollection, PluginFieldType, PluginTensorDesc,
                     Quantization, TensorFormat, TensorIOMode, TensorLocation, TensorRTPhase, host_array, nptype,
                     volume)

#: The version of libplugrt as built ("0.1.0").
__version__ = _capi.s(_capi.fn.version_string())
#: The standard plugin library inside the package.
PLUGINS_LIBRARY = _capi.PLUGINS_LIBRARY

# TensorRT's dtype aliases.
float32 = DataType.FLOAT
float16 = DataType.HALF
bfloat16 = DataType.BF16
int8 = DataType.INT8
uint8 = DataType.UINT8
int32 = DataType.INT32
int64 = DataType.INT64
bool = DataType.BOOL  # noqa: A001 - trt.bool
fp8 = DataType.FP8
float64 = DataType.DOUBLE
int16 = DataType.INT16
uint16 = DataType.UINT16
uint32 = DataType.UINT32
uint64 = DataType.UINT64

# TensorRT's other names for the same objects.
Engine = ICudaEngine
ExecutionContext = IExecutionContext
NetworkDefinition = INetworkDefinition
BuilderConfig = IBuilderConfig

from . import plugin  # noqa: E402,F401 - plugrt.plugin, the decorator API
from .plugin._shape import device_tensor  # noqa: E402

__all__ = [
    # errors
    "Error", "InvalidArgumentError", "OutOfMemoryError", "NotFoundError", "AlreadyExistsError",
    "UnsupportedError", "MalformedError", "VersionError", "ShapeError", "PluginError",
    "StateError", "InternalError",  # and plugrt.IOError, left out of *-imports
    # logging, registries
    "ILogger", "Logger", "Registry", "PluginLibrary", "get_plugin_registry",
    "init_libnvinfer_plugins", "PLUGINS_LIBRARY",
    # networks, builder, parser
    "Builder", "INetworkDefinition", "NetworkDefinition", "ITensor", "ILayer", "IPluginV3Layer",
    "IConstantLayer", "IBuilderConfig", "BuilderConfig", "BuilderFlag", "IOptimizationProfile", "OnnxParser",
    "ParserError", "HostMemory",
    # engines, contexts, runtime, short path
    "Runtime", "ICudaEngine", "Engine", "IExecutionContext", "ExecutionContext",
    "IOutputAllocator", "build", "load",
    # plugins
    "IPluginV3", "IPluginV3OneCore", "IPluginV3OneBuild", "IPluginV3OneRuntime", "Plugin",
    "IPluginCreatorV3One", "PluginCreator", "PluginResourceContext", "CPlugin", "CCreator",
    "PluginField", "PluginFieldCollection", "PluginFieldType", "PluginTensorDesc", "Quantization",
    "DynamicPluginTensorDesc", "PluginCapabilityType", "IDimensionExpr", "IExprBuilder",
    "DimsExprs", "DimensionOperation", "set_plugin_tracebacks", "host_array", "device_tensor",
    "DeviceBuffer", "Stream", "check_device", "device_available", "device_unavailable",
    "get_device_info", "device_count", "get_current_device", "set_current_device", "plugin",
    # types
    "DataType", "Device", "Dims", "MemoryPoolType", "NetworkDefinitionCreationFlag",
    "TensorFormat", "TensorIOMode", "TensorLocation", "TensorRTPhase", "nptype", "volume",
    "float32", "float16", "bfloat16", "int8", "uint8", "int32", "int64", "fp8",  # and trt.bool
    "float64", "int16", "uint16", "uint32", "uint64",
]
