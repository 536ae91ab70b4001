"""pytc-lower-kernels: kernel functions at index level become scf loops over memrefs.

The loop ranges of a kernel's store become one `scf.parallel` whose outermost range runs over
[begin, end), two index arguments after the buffers, so a runtime can split the work (`pytc.extent` is that
range's full size). Reductions that vary only with outer ranges (a row's max, fused by pytc-fuse) are
computed once per outer iteration, between the outer and the inner parallel loops. The body is scalar loops
(kernel_lowering.py), or vector code for a kernel marked `pytc.vector` (lower_vector.py), whose outermost
range then counts blocks.
"""
from mlir import ir
from mlir.dialects import arith, func, scf

from pytc.passes import PassError, functions_with, range_size, register
from pytc.passes.codegen.kernel_lowering import KernelLowering, hoisting_depth, storage_memref
from pytc.passes.cpu.lower_vector import VectorLowering, lower_vector_body


def parallel_loop(ranges: list[ir.Value], lowering: KernelLowering, bounds: tuple[ir.Value, ir.Value] | None) -> ir.Block:
  """An scf.parallel over `ranges` (the first over [begin, end) when `bounds` are given), each range mapped to its
  induction variable; returns the body."""
  index = lowering.index
  zero, one = arith.constant(index, 0), arith.constant(index, 1)
  sizes = [arith.constant(index, range_size(r)) for r in ranges]
  lower = [zero] * len(ranges)
  if bounds: lower[0], sizes[0] = bounds
  parallel = scf.ParallelOp([], lower, sizes, [one] * len(ranges), [])
  body = parallel.region.blocks.append(*[index] * len(ranges))
  with ir.InsertionPoint(body): scf.ReduceOp([], 0)
  lowering.scopes.append(dict(zip(ranges, body.arguments)))
  return body


def lower_scalar_body(kernel: ir.Operation, lowering: KernelLowering, stored: ir.OpView, loops: list[ir.Value], entry: ir.Block) -> int:
  """Emit the parallel loop over the kernel's output ranges and its scalar body; the extent of its outermost range.
  Reductions that vary only with the outer ranges are computed between the outer and the inner loops."""
  reorder = "pytc.loop_order" in kernel.attributes
  accumulators = lowering.accumulators(stored.operands[0], loops[-1]) if reorder else []
  parallel_loops = loops[:-1] if reorder else loops
  depth, hoisted = (0, []) if reorder else hoisting_depth(stored, loops)
  point = ir.InsertionPoint(entry)
  extent = range_size(parallel_loops[0]) if parallel_loops else 1
  if parallel_loops:
    body = parallel_loop(parallel_loops[:depth or None], lowering, tuple(entry.arguments[-2:]))
    if hoisted:
      with ir.InsertionPoint.at_block_terminator(body):
        for reduction in hoisted: lowering.emit(reduction.results[0])
        body = parallel_loop(parallel_loops[depth:], lowering, None)
    point = ir.InsertionPoint.at_block_terminator(body)
  with point:
    if reorder: lowering.reduce_outer(stored, loops[-1], accumulators)
    else: lowering.store(stored)
  return extent


def lower_kernel(kernel: func.FuncOp) -> None:
  ends = [op for op in kernel.entry_block.operations if op.operation.name == "uop.end"]
  if len(ends) != 1: raise PassError(kernel.location, f"kernel @{kernel.sym_name.value} needs exactly one uop.end")
  stored, loops = ends[0].operands[0].owner, list(ends[0].operands[1:])
  params = list(kernel.entry_block.arguments)
  with ir.InsertionPoint(kernel):
    index = ir.IndexType.get()
    lowered = func.FuncOp(kernel.sym_name.value, ([storage_memref(p.type) for p in params] + [index, index], []))
    entry = lowered.add_entry_block()
  vectorized = "pytc.vector" in kernel.attributes
  lanes = ir.IntegerAttr(ir.DictAttr(kernel.attributes["pytc.vector"])["lanes"]).value if vectorized else 1
  lowering = (VectorLowering if vectorized else KernelLowering)(dict(zip(params, entry.arguments)), *([lanes] if vectorized else []))
  with ir.InsertionPoint(entry):
    extent = (lower_vector_body if vectorized else lower_scalar_body)(kernel.operation, lowering, stored, loops, entry)
    func.ReturnOp([])
  lowered.attributes["pytc.kernel"] = ir.UnitAttr.get()
  # A kernel's buffers never overlap (outputs and temporaries are fresh for each launch), so LLVM may assume no aliasing.
  noalias = ir.DictAttr.get({"llvm.noalias": ir.UnitAttr.get()})
  lowered.arg_attrs = ir.ArrayAttr.get([noalias] * len(params) + [ir.DictAttr.get({})] * 2)
  lowered.attributes["pytc.extent"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), extent)
  kernel.operation.erase()


@register("pytc-lower-kernels", "index-level kernel functions to scf.parallel/scf.for (or vector code) + memref + arith/math",
          takes=("split", "scheduled", "kernel", "lowered"))
def lower_kernels(module: ir.Operation) -> None:
  for fn in functions_with(module, "uop.end"):
    if "pytc.kernel" in fn.attributes:
      with fn.location: lower_kernel(fn)
