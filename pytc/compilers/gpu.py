"""The compilers for real GPU targets: a schedule's kernels mapped onto workgroups and threads (pytc-gpu-map, local size
min(256, the target's largest workgroup)), their `gpu.module`s merged into one, so that one binary holds every kernel of
the schedule, and that module lowered by the target's toolchain: an AMD code object (HSACO, see amdgpu.py) or PTX text
(see ptx.py). Each kernel's launch sizes are its `pytc.gpu` record: {"grid": workgroups, "local": threads per workgroup};
its arguments are one bare pointer per buffer (`use-bare-ptr-memref-call-conv`: the memrefs are static), so a launch packs
the buffers' device addresses and nothing else.

The upstream lowering (convert-gpu-to-rocdl / convert-gpu-to-nvvm) is the compiler's `lowering_pipeline`, which the
compile driver runs (and dumps under PYTC_DUMP); `lower` takes the LLVM-dialect module from there to bytes."""
from __future__ import annotations

from mlir import ir
from mlir.dialects import gpu

from pytc.compilers import Compiler, amdgpu, gpu_map, ptx, signature
from pytc.passes.common.attributes import GPU, GPU_FUNC, GPU_MODULE
from pytc.pipelines import CompileError, run_pipeline
from pytc.runtime.amd_code_object import parse as parse_code_object
from pytc.runtime.device import KernelInfo
from pytc.runtime.target import Target, gpu_target

MERGED = "kernels"  # the name of the one gpu.module a schedule's kernels are merged into


def gpu_modules(module: ir.Module) -> list[ir.Operation]:
  return [op.operation for op in module.body.operations if op.operation.name == GPU_MODULE]


class GPUCompiler(Compiler):
  """What the AMD and NVIDIA compilers share: the mapping, the kernels' launch sizes, one gpu.module for the lowering."""
  kind: str = ""  # the Target.name it compiles for
  kernels_result = "the kernels mapped onto workgroups and threads: a gpu.module"

  def __init__(self, target: Target):
    if target.name != self.kind: raise ValueError(f"{type(self).__name__} compiles for {self.kind} targets, not {target}")
    super().__init__(target)

  def kernel_pipeline(self) -> str:
    return f"builtin.module({gpu_map(self.target)}, canonicalize)"

  def kernel_functions(self, kernels: ir.Module) -> list[ir.Operation]:
    return [op.operation for m in gpu_modules(kernels) for op in m.regions[0].blocks[0].operations if op.operation.name == GPU_FUNC]

  def kernel_info(self, function: ir.Operation) -> KernelInfo:
    record = GPU.get(function)
    return KernelInfo(*signature(function), {"grid": record["grid"], "local": record["local"]})

  def prepare(self, kernels: ir.Module) -> None:
    """Only the gpu.modules stay, merged into one named `MERGED` (the kernels' names are unique within a schedule)."""
    for op in [op for op in kernels.body.operations if op.operation.name != GPU_MODULE]: op.operation.erase()
    if not (modules := gpu_modules(kernels)): return
    with kernels.context, ir.Location.unknown():
      with ir.InsertionPoint(kernels.body): merged = gpu.GPUModuleOp(MERGED)
      block = merged.bodyRegion.blocks.append()
      for m in modules:
        for op in list(m.regions[0].blocks[0].operations): ir.InsertionPoint(block).insert(op.operation.detach_from_parent())
        m.erase()


class AMDGPUCompiler(GPUCompiler):
  """An HSACO holding every kernel of a schedule, refused when it has an undefined symbol."""
  binary_result = "the AMD code object (HSACO)"
  kind = "amdgpu"

  def __init__(self, target: Target):
    super().__init__(target)
    self.lowering_pipeline = amdgpu.lowering_pipeline(target.arch)

  def prepare(self, kernels: ir.Module) -> None:
    super().prepare(kernels)
    with kernels.context, ir.Location.unknown(): amdgpu.native_math(kernels)

  def check(self, code: bytes) -> str | None:
    try: code_object = parse_code_object(code)
    except ValueError as e: return str(e)
    if code_object.arch != self.target.arch: return f"a code object for {code_object.arch}, not {self.target.arch}"
    return f"undefined symbols: {', '.join(code_object.undefined)}" if code_object.undefined else None

  def emit(self, kernels: ir.Module) -> bytes:
    return amdgpu.compile_llvm_ir(amdgpu.translate(kernels)[MERGED], self.target.arch, MERGED)


class PTXCompiler(GPUCompiler):
  """PTX text (utf-8) holding every kernel of a schedule as an `.entry`; no function left external."""
  binary_result = "the PTX text"
  kind = "nvptx"

  def __init__(self, target: Target):
    super().__init__(target)
    self.lowering_pipeline = f"builtin.module({ptx.nvvm_passes(target.arch)})"

  def prepare(self, kernels: ir.Module) -> None:
    super().prepare(kernels)
    with kernels.context, ir.Location.unknown(): ptx.rounded_sqrt(kernels)

  def check(self, code: bytes) -> str | None:
    try: text = code.decode()
    except UnicodeDecodeError: return "not PTX text"
    return None if f".target {self.target.arch}" in text else f"not PTX for {self.target.arch}"

  def emit(self, kernels: ir.Module) -> bytes:
    with kernels.context:
      try: run_pipeline(kernels, f"builtin.module({ptx.TO_PTX})")
      except CompileError as e: raise ptx.PTXError(f"PTX for {self.target.arch} failed: {e}") from None
    return ptx.texts(kernels, self.target.arch)[MERGED].encode()


def gpu_compiler(spec: str) -> GPUCompiler:
  """The compiler for a GPU target by name ("gfx942", "amdgpu:gfx942", "sm_90", ...); ValueError naming the known ones."""
  target = gpu_target(spec)
  return {"amdgpu": AMDGPUCompiler, "nvptx": PTXCompiler}[target.name](target)
