"""Compilers: a schedule's kernel functions to a `Binary` for one target. A device names its compiler (`module:Class`,
see runtime/device.py); each compiler is one module here, built from the device's `Target`.

A compiler runs the scheduling passes with its target's facts (`scheduling`), then two pipelines: `kernel_pipeline`,
pytc's code-generation passes from index-level kernels to the target's loops (what pytc decides), then
`lowering_pipeline`, which turns that into LLVM's dialect, before `emit` makes code of it. `stages()` names them
(schedule, kernels, llvm, binary): the table `pytc compile --stage`, `pytc-opt --stage` and PYTC_DUMP's folders read.
The disk cache sits between the two pipelines: its key is the kernel IR after the first, the second and the target, so
an unchanged kernel skips the lowering."""
from __future__ import annotations

import functools
import hashlib

from mlir import ir

from pytc import kernel_cache
from pytc.helpers import pytc_version
from pytc.passes.common.attributes import KERNEL
from pytc.pipelines import Stage
from pytc.runtime.device import Binary, KernelInfo
from pytc.runtime.target import Target

SEGMENT_BYTES = 64  # bytes a GPU serves neighbouring threads' reads from in one request (AMD's 64; two of NVIDIA's 32-byte sectors)


def is_gpu(target: Target) -> bool: return target.max_workgroup_size > 1


def gpu_local_size(target: Target) -> int: return min(256, target.max_workgroup_size)


def gpu_tile(target: Target) -> int:
  """The side of the output tile a workgroup computes a matmul in through workgroup memory: the largest power of two
  whose square its threads cover (16 for 256 threads)."""
  return 1 << (gpu_local_size(target).bit_length() - 1) // 2


def gpu_map(target: Target) -> str:
  """pytc-gpu-map as the compilers for `target` (a GPU's, or an emulated one's) run it: workgroups of up to 256 threads,
  matmul tiles of gpu_tile, a thread's vector as wide as the target's, and math ops made arithmetic where the target's
  code links no math library."""
  return (f"pytc-gpu-map{{local_size={gpu_local_size(target)} tile={gpu_tile(target)} vector_bytes={4 * target.vector_lanes}"
          f"{'' if target.math_library else ' math_library=false'}}}")


def scheduling(target: Target) -> Stage:
  """The scheduling passes with `target`'s facts. A split row sum keeps `lanes` partials side by side: a CPU's vector
  lanes, a GPU's SEGMENT_BYTES of floats (neighbouring threads' vector reads then fill one request). Fusion weighs a
  recomputed value once per `block_columns` columns: a CPU's register block (its lanes x tile vectors, as pytc-vectorize
  tiles), a GPU's matmul tile (gpu_tile)."""
  lanes, block_columns = ((SEGMENT_BYTES // 4, gpu_tile(target)) if is_gpu(target)
                          else (target.vector_lanes, target.vector_lanes * target.tile_vectors))
  pipeline = (f"builtin.module(canonicalize, pytc-split-reduce{{lanes={lanes}}}, pytc-rangeify, canonicalize, cse, "
              f"pytc-fuse{{block_columns={block_columns}}}, canonicalize, cse, pytc-bufferize, pytc-split-kernels, "
              "pytc-merge-kernels, pytc-schedule, canonicalize, cse)")
  return Stage(1, "schedule", pipeline, "the launch list and the index-level kernels")


def signature(function: ir.Operation) -> tuple[str, int]:
  """A kernel function's name and how many arguments it takes."""
  arguments = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value).inputs
  return ir.StringAttr(function.attributes["sym_name"]).value, len(arguments)


class Compiler:
  """Compiles kernel modules for `target`; subclasses give the pipelines and the lowering to bytes."""
  lowering_pipeline: str = ""
  kernels_result = "the target's kernels"
  binary_result = "the target's binary"
  searchable = False  # a kernel search may choose its kernels' pytc.tune (pytc/search.py)

  def __init__(self, target: Target):
    self.target = target

  def kernel_pipeline(self) -> str: raise NotImplementedError

  @functools.cached_property
  def schedule_stage(self) -> Stage:
    """The first stage, which realize runs on every new graph for this compiler's devices."""
    return scheduling(self.target)

  def stages(self) -> tuple[Stage, ...]:
    """The target's compile path by name, in order."""
    return (self.schedule_stage, Stage(2, "kernels", self.kernel_pipeline(), self.kernels_result),
            Stage(3, "llvm", self.lowering_pipeline, "the kernels in LLVM's dialect"), Stage(4, "binary", "", self.binary_result))

  def stage(self, name: str) -> Stage:
    """The stage called `name`; ValueError naming the target's stages."""
    if (found := next((s for s in self.stages() if s.name == name), None)) is None:
      raise ValueError(f"no stage '{name}' for {self.target.name} (its stages: {', '.join(s.name for s in self.stages())})")
    return found

  def emit(self, lowered: ir.Module) -> bytes: raise NotImplementedError
  def kernel_info(self, function: ir.Operation) -> KernelInfo: raise NotImplementedError
  def kernel_functions(self, kernels: ir.Module) -> list[ir.Operation]:
    """The kernel functions of `kernels` after the kernel pipeline, one KernelInfo each."""
    return [op.operation for op in kernels.body.operations if KERNEL.get(op)]

  def prepare(self, kernels: ir.Module) -> None:
    """Leave in `kernels` only what the lowering takes (the kernel functions)."""
    for op in [op for op in kernels.body.operations if not KERNEL.get(op)]: op.operation.erase()

  def check(self, code: bytes) -> str | None:
    """Why `code` (a binary from the disk cache) cannot be one this compiler built, or None; a damaged entry is dropped and rebuilt."""
    return None

  def cache_key(self, kernel_ir: str) -> str:
    """What the binary of `kernel_ir` depends on: pytc's version, the target and the lowering."""
    text = f"pytc {pytc_version()}\n{self.target.cache_key()}\n{self.lowering_pipeline}\n{kernel_ir}"
    return hashlib.sha256(text.encode()).hexdigest()

  def generate(self, kernels: ir.Module, dump_name: str = "") -> str:
    """Run the kernel pipeline on `kernels` (in place): the kernel IR it leaves, what the binary is built from (run_pipeline
    verifies its result: the IR is printed without verifying it again)."""
    self.stage("kernels").run(kernels, dump_name)
    return kernels.operation.get_asm(assume_verified=True)

  def build(self, kernels: ir.Module, dump_name: str = "") -> Binary:
    """The binary of kernels that went through `generate` (rewritten in place), without the disk cache."""
    infos = tuple(self.kernel_info(function) for function in self.kernel_functions(kernels))
    self.prepare(kernels)
    return Binary(self.target.cache_key(), self.lower(kernels, dump_name) if infos else b"", infos)

  def lower(self, kernels: ir.Module, dump_name: str = "") -> bytes:
    """The code of `kernels` (prepared; rewritten in place): the lowering pipeline, then `emit`."""
    self.stage("llvm").run(kernels, dump_name)
    return self.emit(kernels)

  def compile(self, kernels: ir.Module, dump_name: str = "", cached: bool = True) -> tuple[Binary, str, bool]:
    """The binary of `kernels` (rewritten in place), the kernel IR it was built from, and whether it came from the disk
    cache (never with `cached=False`: a fresh binary replaces the entry)."""
    kernel_ir = self.generate(kernels, dump_name)
    functions = self.kernel_functions(kernels)
    key = self.cache_key(kernel_ir)
    if cached and functions and (code := kernel_cache.load(key, self.check)) is not None:
      return Binary(self.target.cache_key(), code, tuple(self.kernel_info(f) for f in functions)), kernel_ir, True
    binary = self.build(kernels, dump_name)
    if binary.kernels: kernel_cache.store(key, binary.code)
    return binary, kernel_ir, False
