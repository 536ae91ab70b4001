"""The GPU compilers (pytc/compilers/gpu.py): every kernel of bench/run.py's workloads (--quick sizes) and of the demo's
graphs compiles into one binary per schedule: an AMD code object for gfx90a, gfx942 and gfx1100 that the reader parses
with every kernel present and no undefined symbol, PTX for sm_90 with an `.entry` per kernel and nothing external, which
ptxas accepts when it is on PATH. The disk cache takes GPU binaries like CPU ones."""
import re
import sys
from pathlib import Path

import pytest

from pytc.compiler import context
from pytc.compilers import ptx
from pytc.compilers.gpu import AMDGPUCompiler, PTXCompiler, gpu_compiler
from pytc.pipelines import copy_module
from pytc.runtime.amd_code_object import parse
from pytc.runtime.target import GPU_TARGETS, host_cpu

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from gpu_compile import compile_for, graphs  # noqa: E402


@pytest.fixture(scope="module")
def schedules(): return graphs()


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942", "gfx1100"])
def test_amd_code_objects(schedules, arch):
  compiler = gpu_compiler(f"amdgpu:{arch}")
  assert isinstance(compiler, AMDGPUCompiler)
  assert compiler.kernel_pipeline() == "builtin.module(pytc-gpu-map{local_size=256 tile=16 vector_bytes=16 math_library=false}, canonicalize)"
  for name, scheduled in schedules.items():
    binary, _ = compile_for(compiler, scheduled)
    code_object = parse(binary.code)
    assert code_object.arch == arch and code_object.undefined == () and compiler.check(binary.code) is None, name
    assert sorted(code_object.kernels) == sorted(k.name for k in binary.kernels) == sorted({launch.kernel for launch in scheduled.launches}), name
    for info in binary.kernels:
      kernel = code_object.kernels[info.name]
      assert kernel.wavefront_size == GPU_TARGETS[arch].wave_size and kernel.reqd_workgroup_size == (info.sizes["local"], 1, 1), name
      explicit = [a for a in kernel.args if not a.value_kind.startswith("hidden_")]
      assert [(a.value_kind, a.offset, a.size) for a in explicit] == [("global_buffer", 8 * i, 8) for i in range(info.buffers)], name  # bare pointers
      assert info.sizes["grid"] * info.sizes["local"] >= 1, name


def test_ptx(schedules):
  compiler = gpu_compiler("sm_90")
  assert isinstance(compiler, PTXCompiler)
  for name, scheduled in schedules.items():
    binary, _ = compile_for(compiler, scheduled)
    text = binary.code.decode()
    assert ".target sm_90" in text and ".extern .func" not in text and compiler.check(binary.code) is None, name
    assert sorted(re.findall(r"\.entry\s+(\w+)\s*\(", text)) == sorted(k.name for k in binary.kernels), name
    assert sorted(k.name for k in binary.kernels) == sorted({launch.kernel for launch in scheduled.launches}), name
    for k in binary.kernels:  # one bare pointer per buffer: the launch packs addresses only
      params = re.search(rf"\.entry\s+{k.name}\s*\((.*?)\)", text, re.S).group(1)
      assert params.count(".param .u64 .ptr") == params.count(".param") == k.buffers, name
    if ptx.cubin(text, "sm_90") is None: pytest.skip("ptxas is not on PATH")


def test_kernel_sizes_are_the_mapping(schedules):
  binary, _ = compile_for(gpu_compiler("sm_80"), schedules["demo_relu_4"])
  assert [(k.name, k.buffers, k.sizes) for k in binary.kernels] == [("E_4", 3, {"grid": 1, "local": 32})]


def test_wrong_target_and_damaged_binaries(schedules):
  with pytest.raises(ValueError, match="nvptx"): PTXCompiler(GPU_TARGETS["gfx942"])
  with pytest.raises(ValueError, match="amdgpu"): AMDGPUCompiler(host_cpu())
  with pytest.raises(ValueError, match="known: amdgpu:gfx90a"): gpu_compiler("gfx800")
  gfx942, _ = compile_for(gpu_compiler("gfx942"), schedules["demo_relu_4"])
  assert "gfx942, not gfx1100" in gpu_compiler("gfx1100").check(gfx942.code)
  assert gpu_compiler("gfx942").check(b"not an ELF") is not None
  assert gpu_compiler("sm_90").check(b"\xff") == "not PTX text" and gpu_compiler("sm_80").check(gfx942.code) is not None


def test_disk_cache(schedules, tmp_path, monkeypatch):
  monkeypatch.setenv("PYTC_CACHE_DIR", str(tmp_path))
  compiler = gpu_compiler("gfx1100")
  with context(): built = [compiler.compile(copy_module(schedules["softmax_4096x1024"].kernels), "softmax") for _ in range(2)]
  assert [from_disk for _, _, from_disk in built] == [False, True] and built[0][0] == built[1][0]
