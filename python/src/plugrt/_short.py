"""The short path: plugrt.build and plugrt.load."""

import os
from typing import Iterable, Mapping, Optional, Sequence, Tuple, Union

from . import _errors as E
from ._network import Builder, INetworkDefinition, IOptimizationProfile, OnnxParser
from ._registry import ILogger, Registry, get_plugin_registry, use_logger
from ._runtime import ICudaEngine
from ._types import DeviceLike, MemoryPoolType, to_device

ShapeTriple = Tuple[Sequence[int], Sequence[int], Sequence[int]]


def prepare_registry(registry: Optional[Registry], plugins: Iterable) -> Registry:
    """The registry to use, with `plugins` in it: paths of plugin libraries
    (loaded once), or creators (registered unless already there)."""
    reg = registry or get_plugin_registry()
    for p in plugins or ():
        if isinstance(p, (str, os.PathLike)):
            reg.load_library(p)
        else:
            try:
                reg.register_creator(p)
            except E.AlreadyExistsError:
                pass
    return reg


def _profile(spec) -> IOptimizationProfile:
    if isinstance(spec, IOptimizationProfile):
        return spec
    prof = IOptimizationProfile()
    for name, triple in dict(spec).items():
        mn, op, mx = triple
        prof.set_shape(name, mn, op, mx)
    return prof


def build(network_or_onnx_path: Union[INetworkDefinition, str, os.PathLike, bytes],
          device: DeviceLike = "cpu", profiles: Sequence[Union[Mapping[str, ShapeTriple],
                                                 IOptimizationProfile]] = (),
          plugins: Sequence = (), registry: Optional[Registry] = None,
          autotune: bool = True, workspace: Optional[int] = None,
          timing_cache: Optional[str] = None, logger: Optional[ILogger] = None,
          strict: bool = True) -> ICudaEngine:
    """Builds an engine from a network, an ONNX file's path or ONNX bytes.

    profiles: optimization profiles, each {input name: (min, opt, max)} or an
    IOptimizationProfile. plugins: plugin libraries (paths) to load and
    creators to register first (decorator plugins need nothing). device:
    "cpu" or "cuda". autotune: IBuilderConfig.autotune (on by default: each
    plugin's tactics are timed on random data). strict (ONNX only, on by
    default as in `plugrt build`): a plugin output whose dtype or shape
    disagrees with what the model declares fails the build (ShapeError);
    False makes it a warning (OnnxParser.strict)."""
    use_logger(logger)
    reg = prepare_registry(registry, plugins)
    builder = Builder(logger, reg)
    if isinstance(network_or_onnx_path, INetworkDefinition):
        net = network_or_onnx_path
    else:
        net = builder.create_network()
        parser = OnnxParser(net, logger, reg, strict=strict)
        if isinstance(network_or_onnx_path, (bytes, bytearray, memoryview)):
            parser.parse(network_or_onnx_path)
        else:
            parser.parse_from_file(network_or_onnx_path)
    cfg = builder.create_builder_config()
    cfg.device = to_device(device)
    cfg.autotune = autotune
    if workspace is not None:
        cfg.set_memory_pool_limit(MemoryPoolType.WORKSPACE, workspace)
    if timing_cache is not None:
        cfg.timing_cache_path = timing_cache
    for spec in profiles or ():
        cfg.add_optimization_profile(_profile(spec))
    try:
        return builder.build_engine_with_config(net, cfg)
    finally:
        cfg.close()
