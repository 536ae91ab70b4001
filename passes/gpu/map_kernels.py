"""pytc-gpu-map: index-level kernels become `gpu.func` kernels of the upstream `gpu` dialect, one thread per output.

A kernel's output ranges (those its `uop.end` closes, outermost first) are flattened into one row-major output index.
Thread `gid = block_id.x * local + thread_id.x` computes the `outputs` consecutive outputs from `gid * outputs`, each
flat index split back into the ranges' indices with divui/remui by constant sizes; an `scf.if flat < total` guards them
only where the grid overshoots the outputs (a tail). The body is codegen's scalar lowering (kernel_lowering.py):
reductions are serial `scf.for` loops inside the thread, reads and writes plain `memref` loads and stores, the buffers
the same storage memrefs as on the CPU (no address spaces), so the emulation on the CPU and convert-gpu-to-nvvm/rocdl
take them alike. CPU hints (`pytc.vector`, `pytc.loop_order`) are not read.

Each kernel gets its own `gpu.module @<kernel>_module` holding `gpu.func @<kernel> kernel` (a binary per kernel: each
compiles, caches and loads alone, like the CPU's kernels dedupe by their IR), with `known_block_size = [local, 1, 1]`
and `pytc.gpu = {local, grid, outputs, total}` (attributes.py), which the runtime launches by; a kernel with no
outputs gets grid 0 and an empty body: it launches nothing. The top module becomes a `gpu.container_module`. The
`func.func` kernel is erased; where a `uop.launch` of the module names it, a private declaration with its parameters
stays, so the graph keeps verifying (the launch resolves to the gpu.func of that name).

The workgroup holds `local_size` threads, or, for a kernel needing fewer threads, the power of two covering them (at
least a warp of 32): a 40-output kernel runs one workgroup of 64, not 256.
"""
import sys
from dataclasses import dataclass
from math import prod
from typing import Annotated

from mlir import ir
from mlir.dialects import arith, func, gpu, scf

from pytc.dialects import uop
from pytc.helpers import DEBUG
from pytc.passes import Within, functions_with, range_size, register
from pytc.passes.codegen.kernel_lowering import KernelLowering, storage_memref
from pytc.passes.common.analysis import kernel_end
from pytc.passes.common.attributes import GPU, KERNEL
from pytc.passes.common.forms import body

WARP = 32  # the smallest workgroup: one NVIDIA warp (half an AMD CDNA wavefront)


@dataclass(frozen=True)
class Mapping:
  """How a kernel's `total` outputs spread over the grid: workgroups of `local` threads, `outputs` per thread."""
  total: int
  local: int
  outputs: int

  @property
  def grid(self) -> int: return -(-self.total // (self.local * self.outputs))
  @property
  def tail(self) -> bool: return self.grid * self.local * self.outputs != self.total
  def record(self) -> dict[str, int]: return {"local": self.local, "grid": self.grid, "outputs": self.outputs, "total": self.total}

  def __str__(self) -> str:
    if not self.total: return "no outputs: launches nothing"
    return (f"{self.total} output{'s' * (self.total > 1)}, grid {self.grid} x local {self.local}, {self.outputs} per thread"
            + (", tail guarded" if self.tail else ""))


def choose_mapping(total: int, local_size: int, outputs_per_thread: int) -> Mapping:
  """`local_size` threads per workgroup, or the power of two (at least a warp) covering the threads a small kernel needs."""
  threads = -(-total // outputs_per_thread)
  local = local_size if threads >= local_size else min(local_size, max(WARP, 1 << max(threads - 1, 0).bit_length()))
  return Mapping(total, local, outputs_per_thread)


def global_thread(local: int) -> ir.Value:
  """block_id.x * local + thread_id.x"""
  index = ir.IndexType.get()
  return arith.addi(arith.muli(gpu.block_id(gpu.Dimension.x), arith.constant(index, local)), gpu.thread_id(gpu.Dimension.x))


def delinearize(flat: ir.Value, ranges: list[ir.Value]) -> dict[ir.Value, ir.Value]:
  """Each range's index in the row-major `flat` index over `ranges` (outermost first): (flat / inner sizes) % size, the
  outermost needing no remainder (flat < total) and a range of size 1 being 0."""
  index, indices = ir.IndexType.get(), {}
  for i, r in enumerate(ranges):
    if range_size(r) == 1:
      indices[r] = arith.constant(index, 0)
      continue
    stride = prod(range_size(inner) for inner in ranges[i + 1:])
    position = arith.divui(flat, arith.constant(index, stride)) if stride > 1 else flat
    indices[r] = arith.remui(position, arith.constant(index, range_size(r))) if i > 0 else position
  return indices


def store_at(lowering: KernelLowering, stored: uop.StoreOp, ranges: list[ir.Value], flat: ir.Value) -> None:
  """The kernel's store (and what it computes) at output `flat`."""
  lowering.scopes.append(delinearize(flat, ranges))
  lowering.store(stored)
  lowering.scopes.pop()


def store_output(lowering: KernelLowering, stored: uop.StoreOp, ranges: list[ir.Value], flat: ir.Value, mapping: Mapping) -> None:
  """The store at output `flat`, inside `scf.if flat < total` when the grid has a tail."""
  if not mapping.tail: return store_at(lowering, stored, ranges, flat)
  guard = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ult, flat, arith.constant(ir.IndexType.get(), mapping.total)))
  with ir.InsertionPoint(guard.then_block):
    store_at(lowering, stored, ranges, flat)
    scf.YieldOp([])


def thread_body(lowering: KernelLowering, stored: uop.StoreOp, ranges: list[ir.Value], mapping: Mapping) -> None:
  """One thread's outputs: flat indices gid * outputs + k for k < outputs (a loop when there are several)."""
  index, gid = ir.IndexType.get(), global_thread(mapping.local)
  if mapping.outputs == 1: return store_output(lowering, stored, ranges, gid, mapping)
  first = arith.muli(gid, arith.constant(index, mapping.outputs))
  loop = scf.ForOp(arith.constant(index, 0), arith.constant(index, mapping.outputs), arith.constant(index, 1))
  with ir.InsertionPoint(loop.body):
    store_output(lowering, stored, ranges, arith.addi(first, loop.induction_variable), mapping)
    scf.YieldOp([])


def map_kernel(kernel: func.FuncOp, local_size: int, outputs_per_thread: int, launched: bool) -> Mapping:
  """Replace `kernel` by a gpu.module holding its gpu.func (and a declaration if it is `launched`); the mapping chosen."""
  end = kernel_end(kernel.operation)
  stored, ranges, name = end.src.owner, list(end.ranges), kernel.sym_name.value
  mapping = choose_mapping(prod(range_size(r) for r in ranges), local_size, outputs_per_thread)
  params = list(kernel.entry_block.arguments)
  with ir.InsertionPoint(kernel):
    gpu_module = gpu.GPUModuleOp(f"{name}_module")
    with ir.InsertionPoint(gpu_module.bodyRegion.blocks.append()):
      mapped = gpu.GPUFuncOp(ir.FunctionType.get([storage_memref(p.type) for p in params], []), name, kernel=True,
                             known_block_size=[mapping.local, 1, 1])
      GPU.set(mapped, mapping.record())
      entry = mapped.add_entry_block()
    with ir.InsertionPoint(entry):
      if mapping.total: thread_body(KernelLowering(dict(zip(params, entry.arguments))), stored, ranges, mapping)
      gpu.ReturnOp([])
    if launched: func.FuncOp(name, (kernel.type.inputs, []), visibility="private")
  kernel.operation.erase()
  return mapping


def launched_kernels(module: ir.Operation) -> set[str]:
  """The kernels a `uop.launch` of the module names."""
  return {ir.FlatSymbolRefAttr(op.attributes["kernel"]).value for fn in module.regions[0].blocks[0].operations
          if isinstance(fn, func.FuncOp) for op in body(fn) if isinstance(op, uop.LaunchOp)}


@register("pytc-gpu-map", "index-level kernels to gpu.func kernels, one thread per output (explain=1 prints each mapping)",
          takes=("split", "scheduled", "kernel"))
def gpu_map(module: ir.Operation, local_size: Annotated[int, Within(1, 1024, power_of_two=True)] = 256,
            outputs_per_thread: Annotated[int, Within(1, 64)] = 1, explain: bool = False) -> None:
  kernels = [fn for fn in functions_with(module, uop.EndOp.OPERATION_NAME) if KERNEL.get(fn)]
  if not kernels: return
  module.attributes["gpu.container_module"] = ir.UnitAttr.get()
  launched = launched_kernels(module)
  for kernel in kernels:
    name = kernel.sym_name.value
    with kernel.location: mapping = map_kernel(kernel, local_size, outputs_per_thread, name in launched)
    if explain or DEBUG >= 3: print(f"pytc-gpu-map: {name}: {mapping}", file=sys.stderr)
