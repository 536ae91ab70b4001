"""The compiler of the MOCK AMD GPU: the schedule's kernels compiled twice from the same mapping (pytc-gpu-map with the
same options): into the AMD code object the AMD runtime loads and launches, exactly as for a real GPU, and into their
CPU emulation (pytc-gpu-emulate with the grid as arguments), which the MOCK runs for a dispatch of the code at that
kernel's address, over the grid the dispatch packet asks for. A binary is `MOCK_BUNDLE`, the code object's length (u64),
the code object, the emulation library; each kernel's info adds the byte size of every buffer (the MOCK checks that the
kernarg pointers reach that much GPU memory)."""
from __future__ import annotations

from mlir import ir

from pytc.compilers import Compiler, gpu_map
from pytc.compilers.emu import EMUCompiler
from pytc.compilers.gpu import AMDGPUCompiler
from pytc.helpers import prod
from pytc.pipelines import copy_module
from pytc.runtime.device import Binary, KernelInfo
from pytc.runtime.ops_amd import MOCK_BUNDLE, split_mock_binary
from pytc.runtime.target import Target, emulated, gpu_target


def buffer_bytes(memref: ir.Type) -> int:
  t = ir.MemRefType(memref)
  return prod(t.shape) * max(1, t.element_type.width // 8)


class GridArgumentEmulation(EMUCompiler):
  """The EMU lowering whose kernels take the grid as three trailing arguments."""
  def kernel_pipeline(self) -> str:
    return f"builtin.module({gpu_map(self.target)}, pytc-gpu-emulate{{grid_arguments=1}}, canonicalize)"

  def kernel_info(self, function: ir.Operation) -> KernelInfo:
    inputs = [t for t in ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value).inputs if isinstance(t, ir.MemRefType)]
    sizes = {f"buffer{i}": buffer_bytes(t) for i, t in enumerate(inputs)}
    return KernelInfo(ir.StringAttr(function.attributes["sym_name"]).value, len(inputs), sizes)


class AMDMockCompiler(Compiler):
  kernels_result = AMDGPUCompiler.kernels_result
  binary_result = "the AMD code object bundled with its CPU emulation"
  def __init__(self, target: Target):
    super().__init__(target)
    self.gpu, self.emulation = AMDGPUCompiler(gpu_target(target.arch)), GridArgumentEmulation(emulated(target.arch))
    self.lowering_pipeline = self.gpu.lowering_pipeline

  def kernel_pipeline(self) -> str: return self.gpu.kernel_pipeline()

  def check(self, code: bytes) -> str | None:
    try: code_object, library = split_mock_binary(code)
    except ValueError as error: return str(error)
    return self.gpu.check(code_object) or self.emulation.check(library)

  def compile(self, kernels: ir.Module, dump_name: str = "", cached: bool = True) -> tuple[Binary, str, bool]:
    twin = copy_module(kernels)
    gpu, kernel_ir, gpu_cached = self.gpu.compile(kernels, dump_name, cached)
    emulation, _, emulation_cached = self.emulation.compile(twin, f"{dump_name}/emulation", cached)
    buffers = {info.name: info.sizes for info in emulation.kernels}
    infos = tuple(KernelInfo(info.name, info.buffers, {**info.sizes, **buffers[info.name]}) for info in gpu.kernels)
    code = MOCK_BUNDLE + len(gpu.code).to_bytes(8, "little") + gpu.code + emulation.code
    return Binary(self.target.cache_key(), code, infos), kernel_ir, gpu_cached and emulation_cached
