"""aot_impl: decorator plugins whose kernel an engine holds (kernel layers).

Without a GPU: the bridge's get_kernel entry, called through its C table
with an expression builder of the test's own (which records the nodes
get_kernel makes, so the launch sizes and arguments are evaluated here at
concrete shapes and compared with what the kernel must be given), the
choice between impl and aot_impl, the parameter layout against hand-written
PTX and a synthetic cubin. On a GPU (marked cuda; python/tests/gpu_run.sh):
an engine built from an aot_impl plugin with PTX from nvcc, saved, and run
by `plugrt run --allow-embedded-kernels` in a process with no Python plugin,
against numpy.
"""

import ctypes
import os
import shutil
import struct
import subprocess
from ctypes import addressof, c_int32

import numpy as np
import pytest

import plugrt as trt
import plugrt.plugin as trtp
from plugrt import _capi as C
from plugrt import _plugin as P
from plugrt.plugin import _aot

# ---------------------------------------------------------------------------
# An expression builder that records what it is asked to make
# ---------------------------------------------------------------------------

_OPS = {0: lambda a, b: a + b, 1: lambda a, b: a * b, 2: max, 3: min,
        4: lambda a, b: a - b, 5: lambda a, b: int(a == b), 6: lambda a, b: int(a < b),
        7: lambda a, b: a // b, 8: lambda a, b: -((-a) // b)}


class RecordingBuilder:
    """A prt_expr_builder over Python: each node is a small int handle (an
    'address' C never dereferences here: only this test reads them)."""

    def __init__(self):
        self.nodes = {}  # handle -> ("leaf", k, d) | ("const", v) | ("op", op, a, b)
        self._cb = (C.EB_CONSTANT_FN(self._constant), C.EB_OPERATION_FN(self._operation),
                    C.EB_DECLARE_SIZE_FN(lambda *a: None),
                    C.EB_IS_CONSTANT_FN(self._is_constant))
        self.struct = C.prt_expr_builder(ctypes.sizeof(C.prt_expr_builder),
                                         C.PRT_PLUGIN_ABI_VERSION, *self._cb, None)

    def _new(self, node):
        h = 0x10000 + 16 * len(self.nodes)
        self.nodes[h] = node
        return h

    def leaf(self, k, d):
        return self._new(("leaf", k, d))

    def _constant(self, eb, v):
        return self._new(("const", v))

    def _operation(self, eb, op, a, b):
        if a not in self.nodes or b not in self.nodes:
            return None
        return self._new(("op", op, a, b))

    def _is_constant(self, eb, e, out):
        n = self.nodes.get(e)
        if n and n[0] == "const":
            out[0] = n[1]
            return 1
        return 0

    def eval(self, h, dims):
        n = self.nodes[h]
        if n[0] == "leaf":
            return dims[n[1]][n[2]]
        if n[0] == "const":
            return n[1]
        return _OPS[n[1]](self.eval(n[2], dims), self.eval(n[3], dims))


def get_kernel(plugin_op, dims, dtypes, tactic=0, aot=None):
    """Calls the bridge's get_kernel as the builder does: the layer's dims
    as leaves (inputs, then outputs). Returns (status, desc, builder)."""
    _, _, plugin = plugin_op
    br = plugin._bridge()
    if aot is not None:
        br.aot = aot
    addr = br.publish()
    n = len(dims)
    nb_in = len(plugin.pdef.inputs)
    eb = RecordingBuilder()
    de = (C.prt_dim_exprs * n)()
    descs = (C.prt_dynamic_tensor_desc * n)()
    for k, shape in enumerate(dims):
        de[k].nb_dims = len(shape)
        for d in range(len(shape)):
            de[k].d[d] = eb.leaf(k, d)
        descs[k].desc.dtype = int(dtypes[k])
        descs[k].desc.dims = C.prt_dims.of(shape)
    kd = C.prt_kernel_desc()
    kd.struct_size = ctypes.sizeof(kd)
    try:
        st = P._BUILD.get_kernel(addr, tactic, addressof(descs), nb_in,
                                 addressof(descs) + nb_in * ctypes.sizeof(descs[0]), n - nb_in,
                                 addressof(de), addressof(de) + nb_in * ctypes.sizeof(de[0]),
                                 addressof(eb.struct), addressof(kd))
    finally:
        P._r_destroy(addr)
    return st, kd, eb, br


def launch_of(kd):
    return C.prt_kernel_launch.from_address(kd.launches)


def args_of(kd, eb, dims):
    lc = launch_of(kd)
    arr = (C.prt_kernel_arg * lc.nb_args).from_address(lc.args)
    out = []
    for a in arr:
        v = eb.eval(a.value, dims) if a.value else None
        out.append((a.kind, a.index, v, a.fvalue))
    return out


def code_of(kd, i=0):
    c = (C.prt_kernel_code * kd.nb_code).from_address(kd.code)[i]
    return c.kind, ctypes.string_at(c.data, c.size)


# ---------------------------------------------------------------------------
# Hand-written code
# ---------------------------------------------------------------------------

def ptx(entry, params):
    decl = ",\n".join("\t.param .%s %s_param_%d" % (t, entry, i) for i, t in enumerate(params))
    return (".version 8.0\n.target sm_90\n.address_size 64\n\n"
            ".visible .entry %s(\n%s\n)\n{\n\tret;\n}\n" % (entry, decl))


def synthetic_cubin(entry, sizes, arch=90):
    """An ELF with the one section plugrt reads parameters from:
    .nv.info.<entry> holding an EIATTR_KPARAM_INFO per parameter."""
    info = b""
    off = 0
    for i, sz in enumerate(sizes):
        info += struct.pack("<BBHIHHI", 4, 0x17, 12, 0, i, off, sz << 18)
        off += sz
    names = b"\0.shstrtab\0.nv.info." + entry.encode() + b"\0"
    body_off = 64
    shstr_off = body_off
    info_off = shstr_off + len(names)
    shoff = (info_off + len(info) + 7) & ~7
    hdr = bytearray(64)
    hdr[0:4] = b"\x7fELF"
    hdr[4], hdr[5], hdr[6] = 2, 1, 1
    struct.pack_into("<HHI", hdr, 16, 2, 190, 1)
    struct.pack_into("<I", hdr, 0x30, arch)  # e_flags: where the capability lives
    struct.pack_into("<Q", hdr, 0x28, shoff)
    struct.pack_into("<HHHHHH", hdr, 0x34, 64, 0, 0, 64, 3, 1)

    def sh(name, typ, off, size):
        return struct.pack("<IIQQQQIIQQ", name, typ, 0, 0, off, size, 0, 0, 1, 0)
    data = bytes(hdr) + names + info
    data += b"\0" * (shoff - len(data))
    data += sh(0, 0, 0, 0) + sh(1, 3, shstr_off, len(names)) + sh(11, 0x70000000, info_off,
                                                                    len(info))
    return data


# ---------------------------------------------------------------------------
# A plugin per test: circular padding of the last two dims, as the seed's
# ---------------------------------------------------------------------------

def make_pad_plugin(uid, extra="int32", code=None, with_impl=False, block=128):
    ns = uid("aot")
    pid = ns + "::pad"
    import numpy.typing as npt

    def reg(x: trtp.TensorDesc, pads: npt.NDArray[np.int32]) -> trtp.TensorDesc:
        y = x.like()
        for i in range(len(pads) // 2):
            y.shape_expr[x.ndim - i - 1] += int(pads[2 * i] + pads[2 * i + 1])
        return y
    trtp.register(pid)(reg)

    def aot(x: trtp.TensorDesc, pads: npt.NDArray[np.int32], outputs, tactic):
        o = outputs[0].shape_expr
        n = o.numel()
        kind = {"int32": trtp.SymInt32, "int64": trtp.SymInt64,
                "float32": trtp.SymFloat32, "float64": trtp.SymFloat64}[extra]
        extra_args = trtp.SymIntExprs.from_tuple(
            [kind(int(pads[0])), kind(x.shape_expr[-1]), kind(o[-1]), kind(n)])
        lp = trtp.KernelLaunchParams()
        lp.grid_x = trtp.cdiv(n, block)
        lp.block_x = block
        lp.shared_mem = 0
        types = {"int32": "u32", "int64": "u64", "float32": "f32", "float64": "f64"}[extra]
        got = code if code is not None else ptx("pad_kernel", ["u64"] + [types] * 4 + ["u64"])
        return "pad_kernel", got, lp, extra_args
    trtp.aot_impl(pid)(aot)
    if with_impl:
        def impl(x, pads, outputs, stream):
            pass
        trtp.impl(pid, device="cuda")(impl)
    return ns, pid


def pad_op(ns, shape=(2, 3, 4, 5), pads=(1, 2)):
    return getattr(getattr(trtp.op, ns), "pad")(
        _Fake(shape), pads=np.array(pads, np.int32))


class _Fake:
    """Stands for a network tensor in op(...): shape and dtype hints only."""

    def __init__(self, shape):
        self.shape = shape
        self.dtype = trt.float32


F32 = trt.DataType.FLOAT


def test_launch_and_arguments_evaluate_to_the_kernels_values(uid):
    ns, _ = make_pad_plugin(uid)
    x = (2, 3, 4, 5)
    y = (2, 3, 4, 8)
    st, kd, eb, _ = get_kernel(pad_op(ns), [x, y], [F32, F32])
    assert st == C.PRT_OK, trt._errors.last_message() if hasattr(trt, "_errors") else st
    assert kd.nb_code == 1 and kd.nb_launches == 1
    kind, data = code_of(kd)
    assert kind == C.PRT_KERNEL_PTX and b".entry pad_kernel(" in data
    lc = launch_of(kd)
    assert ctypes.string_at(lc.entry) == b"pad_kernel"
    # The same expressions at other shapes: they are symbolic, not folded.
    for xs, ys in (([2, 3, 4, 5], [2, 3, 4, 8]), ([7, 1, 9, 100], [7, 1, 9, 103])):
        dims = [xs, ys]
        n = int(np.prod(ys))
        assert eb.eval(lc.grid[0], dims) == -(-n // 128)
        assert [eb.eval(lc.grid[k], dims) for k in (1, 2)] == [1, 1]
        assert [eb.eval(lc.block[k], dims) for k in range(3)] == [128, 1, 1]
        assert not lc.shared_bytes
        assert args_of(kd, eb, dims) == [
            (C.PRT_KARG_INPUT, 0, None, 0.0),
            (C.PRT_KARG_INT32, 0, 1, 0.0), (C.PRT_KARG_INT32, 0, xs[-1], 0.0),
            (C.PRT_KARG_INT32, 0, ys[-1], 0.0), (C.PRT_KARG_INT32, 0, n, 0.0),
            (C.PRT_KARG_OUTPUT, 0, None, 0.0)]


@pytest.mark.parametrize("extra,karg", [("int64", C.PRT_KARG_INT64),
                                        ("float32", C.PRT_KARG_FLOAT32),
                                        ("float64", C.PRT_KARG_FLOAT64)])
def test_int64_and_float_arguments(uid, extra, karg):
    ns, _ = make_pad_plugin(uid, extra=extra)
    st, kd, eb, _ = get_kernel(pad_op(ns), [(1, 1, 2, 3), (1, 1, 2, 6)], [F32, F32])
    assert st == C.PRT_OK
    got = args_of(kd, eb, [(1, 1, 2, 3), (1, 1, 2, 6)])
    assert [a[0] for a in got[1:5]] == [karg] * 4
    assert [a[2] for a in got[1:5]] == [1, 3, 6, 12]


def test_float_constants_travel_as_fvalue(uid):
    ns = uid("aot")
    pid = ns + "::scale"
    def reg(x: trtp.TensorDesc) -> trtp.TensorDesc:
        return x.like()
    trtp.register(pid)(reg)

    def aot(x: trtp.TensorDesc, outputs, tactic):
        lp = trtp.KernelLaunchParams()
        lp.grid_x = x.shape_expr[0]
        return ("scale", ptx("scale", ["u64", "f32", "f64", "u64"]), lp,
                [trtp.SymFloat32(0.5), trtp.SymFloat64(-2.25)])
    trtp.aot_impl(pid)(aot)
    op = getattr(getattr(trtp.op, ns), "scale")(_Fake((4,)))
    st, kd, eb, _ = get_kernel(op, [(4,), (4,)], [F32, F32])
    assert st == C.PRT_OK
    got = args_of(kd, eb, [(4,), (4,)])
    assert got[1] == (C.PRT_KARG_FLOAT32, 0, None, 0.5)
    assert got[2] == (C.PRT_KARG_FLOAT64, 0, None, -2.25)
    assert eb.eval(launch_of(kd).grid[0], [(9,), (9,)]) == 9


def test_triton_scratch_parameters_are_passed_null(uid):
    # Triton >= 3 appends global_scratch and profile_scratch.
    code = ptx("pad_kernel", ["u64"] + ["u32"] * 4 + ["u64", "u64", "u64"])
    ns, _ = make_pad_plugin(uid, code=code)
    st, kd, eb, _ = get_kernel(pad_op(ns), [(1, 1, 2, 3), (1, 1, 2, 6)], [F32, F32])
    assert st == C.PRT_OK
    kinds = [a[0] for a in args_of(kd, eb, [(1, 1, 2, 3), (1, 1, 2, 6)])]
    assert kinds[-3:] == [C.PRT_KARG_OUTPUT, C.PRT_KARG_NULL, C.PRT_KARG_NULL]


def test_cubin_is_told_by_its_magic_and_its_parameters_read(uid):
    cub = synthetic_cubin("pad_kernel", [8, 4, 4, 4, 4, 8, 8])
    assert _aot.cubin_param_count(cub, "pad_kernel") == 7
    assert _aot.cubin_param_count(cub, "other") is None
    ns, _ = make_pad_plugin(uid, code=cub)
    st, kd, eb, _ = get_kernel(pad_op(ns), [(1, 1, 2, 3), (1, 1, 2, 6)], [F32, F32])
    assert st == C.PRT_OK
    kind, data = code_of(kd)
    assert kind == C.PRT_KERNEL_CUBIN and data == cub
    assert [a[0] for a in args_of(kd, eb, [(1, 1, 2, 3), (1, 1, 2, 6)])][-1] == C.PRT_KARG_NULL


def test_ptx_parameter_count():
    assert _aot.ptx_param_count(ptx("k", ["u64", "u32"]).encode(), "k") == 2
    assert _aot.ptx_param_count(b".visible .entry k()\n{\nret;\n}", "k") == 0
    assert _aot.ptx_param_count(ptx("k", ["u64"]).encode(), "kk") is None


def test_too_few_parameters_is_an_error_naming_the_counts(uid):
    ns, _ = make_pad_plugin(uid, code=ptx("pad_kernel", ["u64", "u32", "u64"]))
    st, _, _, _ = get_kernel(pad_op(ns), [(1, 1, 2, 3), (1, 1, 2, 6)], [F32, F32])
    assert st == C.PRT_ERR_PLUGIN
    msg = C.last_error()
    assert "declares 3 parameters" in msg and "passes 6" in msg and "aot_impl" in msg


def test_bad_answers_say_what_is_wrong(uid):
    with pytest.raises(TypeError, match="kernel_name"):
        _aot.describe(("", "x", trtp.KernelLaunchParams(), []), 1, 1, "t")
    with pytest.raises(TypeError, match="KernelLaunchParams"):
        _aot.describe(("k", ".entry k()", object(), []), 1, 1, "t")
    with pytest.raises(ValueError, match="neither PTX text nor an ELF cubin"):
        _aot.describe(("k", b"\x00\x01\x02junk", trtp.KernelLaunchParams(), []), 1, 1, "t")
    lp = trtp.KernelLaunchParams()
    lp.block_x = 0
    with pytest.raises(ValueError, match="block_x is 0"):
        _aot.describe(("k", ".entry k()", lp, []), 0, 0, "t")
    with pytest.raises(ValueError, match="does not fit int32"):
        trtp.SymInt32(2**31)
    e = trtp.SymIntExprs(2)
    e[0] = 3
    with pytest.raises(ValueError, match="extra argument 1 was never set"):
        _aot.describe(("k", ".entry k()", trtp.KernelLaunchParams(), e), 0, 0, "t")


def test_global_scratch_takes_the_workspace(uid):
    code = ptx("k", ["u64", "u64", "u64", "u64"])
    lp = trtp.KernelLaunchParams()
    lp.grid_x = 6
    lp.global_scratch = 32
    kd = _aot.describe(("k", code, lp, []), 1, 1, "t")
    assert [a[0] for a in kd.args] == [C.PRT_KARG_INPUT, C.PRT_KARG_OUTPUT,
                                      C.PRT_KARG_WORKSPACE, C.PRT_KARG_NULL]
    assert kd.workspace.constant_value == 6 * 32


def test_the_choice_between_impl_and_aot_impl(uid):
    ns, pid = make_pad_plugin(uid, with_impl=True)
    shapes = [(1, 1, 2, 3), (1, 1, 2, 6)]
    # Both and nothing choosing: an error saying how to choose.
    st, _, _, _ = get_kernel(pad_op(ns), shapes, [F32, F32])
    assert st == C.PRT_ERR_PLUGIN and "aot=True/False" in C.last_error()
    # The layer chooses.
    assert get_kernel(pad_op(ns), shapes, [F32, F32], aot=True)[0] == C.PRT_OK
    assert get_kernel(pad_op(ns), shapes, [F32, F32], aot=False)[0] == C.PRT_ERR_UNSUPPORTED
    # The builder flags choose.
    from plugrt.plugin._bridge import building
    with building(True, False):
        assert get_kernel(pad_op(ns), shapes, [F32, F32])[0] == C.PRT_OK
        assert get_kernel(pad_op(ns), shapes, [F32, F32], aot=False)[0] == \
            C.PRT_ERR_UNSUPPORTED  # the layer's word wins
    with building(False, True):
        assert get_kernel(pad_op(ns), shapes, [F32, F32])[0] == C.PRT_ERR_UNSUPPORTED
    with building(True, True):
        assert get_kernel(pad_op(ns), shapes, [F32, F32])[0] == C.PRT_ERR_PLUGIN
        assert "set one" in C.last_error()
    cfg = trt.IBuilderConfig()
    cfg.set_flag(trt.BuilderFlag.PREFER_AOT_PYTHON_PLUGINS)
    assert cfg.get_flag(trt.BuilderFlag.PREFER_AOT_PYTHON_PLUGINS)
    assert not cfg.get_flag(trt.BuilderFlag.PREFER_JIT_PYTHON_PLUGINS)
    cfg.clear_flag(trt.BuilderFlag.PREFER_AOT_PYTHON_PLUGINS)
    assert cfg.flags == 0


def test_aot_only_runs_aot_and_plugins_without_one_have_no_kernel(uid):
    ns, pid = make_pad_plugin(uid)
    shapes = [(1, 1, 2, 3), (1, 1, 2, 6)]
    assert get_kernel(pad_op(ns), shapes, [F32, F32])[0] == C.PRT_OK
    assert trtp.get_plugin(pid).device_mask == 1 << int(trt.Device.CUDA)
    st = get_kernel(pad_op(ns), shapes, [F32, F32], aot=False)[0]
    assert st == C.PRT_ERR_PLUGIN and "no @plugrt.plugin.impl" in C.last_error()
    other = uid("noaot")

    def reg(x: trtp.TensorDesc) -> trtp.TensorDesc:
        return x.like()
    trtp.register(other + "::id")(reg)
    op = getattr(getattr(trtp.op, other), "id")(_Fake((3,)))
    assert get_kernel(op, [(3,), (3,)], [F32, F32])[0] == C.PRT_ERR_UNSUPPORTED


def test_onnx_aot_attribute_reaches_the_plugin(uid):
    ns, pid = make_pad_plugin(uid, with_impl=True)
    creator = trtp.get_plugin(pid).creator
    fc = trt.PluginFieldCollection([
        trt.PluginField("pads", np.array([1, 2], np.int32), trt.PluginFieldType.INT32),
        trt.PluginField("aot", np.array([1], np.int64), trt.PluginFieldType.INT64)])
    p = creator.create_plugin("n", fc, trt.TensorRTPhase.BUILD)
    assert p.aot is True
    fc = trt.PluginFieldCollection([
        trt.PluginField("pads", np.array([1, 2], np.int32), trt.PluginFieldType.INT32)])
    assert creator.create_plugin("n", fc, trt.TensorRTPhase.BUILD).aot is None


# ---------------------------------------------------------------------------
# On a GPU: an engine with the kernel, run by plugrt run with no Python
# ---------------------------------------------------------------------------

PAD_CU = r"""
extern "C" __global__ void pad_last(const float *x, int before, int n_in, int n_out,
                                    long long total, float *y)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= total) return;
    long long row = i / n_out;
    int j = (int)(i % n_out);
    int s = ((j - before) % n_in + n_in) % n_in;
    y[i] = x[row * n_in + s];
}
"""


def _nvcc():
    for p in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if p and os.path.exists(p):
            return p
    return None


def _pad_ptx(tmp_path, arch):
    src = tmp_path / "pad.cu"
    src.write_text(PAD_CU)
    out = tmp_path / "pad.ptx"
    subprocess.run([_nvcc(), "-ptx", "-arch=compute_%d" % arch, str(src), "-o", str(out)],
                   check=True)
    return out.read_text()


def _cli():
    exe = os.environ.get("PLUGRT_CLI")
    if exe and os.path.exists(exe):
        return exe
    return shutil.which("plugrt")


@pytest.mark.cuda
def test_aot_engine_runs_in_plugrt_run_without_python(uid, tmp_path):
    from conftest import CUDA_REASON
    if CUDA_REASON:
        pytest.skip(CUDA_REASON)
    if _nvcc() is None:
        pytest.skip("no nvcc to make the PTX")
    if _cli() is None:
        pytest.skip("no plugrt program (PLUGRT_CLI)")
    info = trt.get_device_info("cuda")
    arch = int(info.get("cc_major", 9)) * 10 + int(info.get("cc_minor", 0))
    code = _pad_ptx(tmp_path, min(arch, 90))
    ns = uid("aotgpu")
    pid = ns + "::pad_last"

    @trtp.register(pid)
    def reg(x: trtp.TensorDesc, before: int, after: int) -> trtp.TensorDesc:
        y = x.like()
        y.shape_expr[-1] = x.shape_expr[-1] + before + after
        return y

    @trtp.aot_impl(pid)
    def aot(x: trtp.TensorDesc, before: int, outputs, tactic):
        o = outputs[0].shape_expr
        lp = trtp.KernelLaunchParams()
        lp.grid_x = trtp.cdiv(o.numel(), 128)
        lp.block_x = 128
        return ("pad_last", code, lp,
                [trtp.SymInt32(before), trtp.SymInt32(x.shape_expr[-1]),
                 trtp.SymInt32(o[-1]), trtp.SymInt64(o.numel())])

    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    net = builder.create_network()
    x = net.add_input("x", trt.float32, (-1, -1))
    layer = net.add_plugin(getattr(getattr(trtp.op, ns), "pad_last")(x, before=2, after=3))
    layer.get_output(0).name = "y"
    net.mark_output(layer.get_output(0))
    cfg = builder.create_builder_config()
    cfg.device = "cuda"
    prof = builder.create_optimization_profile()
    prof.set_shape("x", (1, 1), (4, 7), (16, 64))
    cfg.add_optimization_profile(prof)
    data = builder.build_serialized_network(net, cfg)
    path = tmp_path / "pad.engine"
    path.write_bytes(bytes(data))

    rng = np.random.default_rng(7)
    for shape in ((4, 7), (3, 50), (16, 64)):
        xv = rng.standard_normal(shape).astype(np.float32)
        want = np.pad(xv, ((0, 0), (2, 3)), mode="wrap")
        # In this process, through the Python runtime.
        ctx = trt.load(path).create_execution_context(allow_embedded_kernels=True)
        np.testing.assert_array_equal(np.asarray(ctx.run({"x": xv})["y"]), want)
        # In plugrt run, with no Python and no plugin library.
        xin = tmp_path / "x.npy"
        np.save(xin, xv)
        outdir = tmp_path / "out"
        r = subprocess.run([_cli(), "run", str(path), "--allow-embedded-kernels",
                            "--input", "x=%s" % xin, "--output-dir", str(outdir)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        np.testing.assert_array_equal(np.load(str(outdir / "output_y.npy")), want)
    # Refused without the flag.
    r = subprocess.run([_cli(), "run", str(path), "--input", "x=%s" % xin],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "embedded" in (r.stderr + r.stdout)
