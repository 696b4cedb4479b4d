"""Decorator plugins, after tensorrt.plugin (``import plugrt.plugin as trtp``).

    @trtp.register("sample::circ_pad")
    def circ_pad_desc(x: trtp.TensorDesc, pads: npt.NDArray[np.int32]) -> trtp.TensorDesc:
        y = x.like()
        for i in range(len(pads) // 2):
            y.shape_expr[x.ndim - i - 1] += int(pads[2 * i] + pads[2 * i + 1])
        return y

    @trtp.impl("sample::circ_pad")
    def circ_pad_impl(x: trtp.Tensor, pads, outputs, stream):
        ...  # np.asarray(x), np.asarray(outputs[0]) on the CPU

    @trtp.impl("sample::circ_pad", device="cuda")
    def circ_pad_cuda(x: trtp.Tensor, pads, outputs, stream):
        ...  # torch.as_tensor(x), cupy.asarray(outputs[0]) ... on `stream`

    network.add_plugin(trtp.op.sample.circ_pad(x, pads=np.array([1, 1], np.int32)))

The register function gives the outputs' types and shapes (ShapeExpr
arithmetic: + - * //, comparisons, cdiv, max, min; size_tensor for
data-dependent dims; aliased() for in-place outputs). It may be called
more than once, with placeholder shapes too, so it must be pure. Attributes
are serialized into engines; an engine holding a decorator plugin loads
once the module that registers it is imported (else the error says which).
"""

from ._aot import (KernelLaunchParams, SymExpr, SymExprs, SymFloat32, SymFloat64, SymInt32,
                   SymInt64, SymIntExprs)
from ._autotune import AutoTuneCombination
from ._bridge import (DecoratorPlugin, PluginDef, aot_impl, autotune, get_plugin, impl, op,
                      register)
from ._torch import from_torch_op
from ._shape import (ShapeExpr, ShapeExprs, SizeTensorDesc, Tensor, TensorDesc, cdiv,
                     device_tensor, from_shape_expr, max, min, size_tensor)

__all__ = ["AutoTuneCombination", "DecoratorPlugin", "KernelLaunchParams", "PluginDef",
           "ShapeExpr", "ShapeExprs", "SizeTensorDesc", "SymExpr", "SymExprs", "SymFloat32",
           "SymFloat64", "SymInt32", "SymInt64", "SymIntExprs", "Tensor", "TensorDesc",
           "aot_impl", "autotune", "cdiv", "device_tensor", "from_shape_expr", "from_torch_op",
           "get_plugin", "impl", "max", "min", "op", "register", "size_tensor"]
