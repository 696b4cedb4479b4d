"""IBuilderConfig.allow_cpu_fallback (plugrt's own; `plugrt build
--allow-cpu-fallback`): off by default and set through libplugrt. The GPU
side (a layer without a CUDA kernel running on the CPU) is tests/cuda's
test_cuda_fallback."""
import plugrt as trt


def test_allow_cpu_fallback_property():
    cfg = trt.Builder().create_builder_config()
    assert cfg.allow_cpu_fallback is False
    cfg.allow_cpu_fallback = True
    assert cfg.allow_cpu_fallback is True
    cfg.allow_cpu_fallback = False
    assert cfg.allow_cpu_fallback is False
