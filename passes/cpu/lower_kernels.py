"""pytc-lower-kernels: kernel functions at index level become scf loops over memrefs, in the CPU runtime's kernel ABI.

The loop ranges of a kernel's store become one `scf.parallel`. The CPU kernel ABI: a lowered kernel takes its
buffers, then the CPU runtime's slice arguments (`cpu_slice_arguments`), two indices [begin, end) that bound its
outermost parallel range (`pytc.extent` is that range's full size): the CPU queue splits a launch across cores by
calling the kernel once per slice of that range. They belong to the CPU runtime, not to the kernel: a lowering for
another target (a GPU maps the range onto its grid) takes none.

Reductions that vary only with outer ranges (a row's max, fused by pytc-fuse) are computed once per outer iteration,
between the outer and the inner parallel loops. The body is scalar loops (kernel_lowering.py), or vector code for a
kernel marked `pytc.vector` (lower_vector.py), whose outermost range then counts blocks.
"""

from math import prod

from mlir import ir
from mlir.dialects import func

from pytc.dialects import uop
from pytc.passes import PassError, functions_with, range_size, register
from pytc.passes.codegen.kernel_lowering import KernelLowering, hoisting_depth, parallel_over, storage_memref
from pytc.passes.common.analysis import read_where_written, sibling_stores, top_level_reductions
from pytc.passes.common.attributes import EXTENT, IN_PLACE, KERNEL, LOOP_ORDER, TUNE, VECTOR, WORK, LoopOrder
from pytc.passes.cpu.lower_vector import BlockedVectorLowering, lower_across_body, lower_vector_body, overlapping_blocks


def cpu_slice_arguments() -> list[ir.Type]:
  """The types of the arguments the CPU runtime appends to every kernel's buffers: the [begin, end) of the outermost
  parallel range that one call computes (runtime/ops_cpu.py calls a split launch once per slice)."""
  return [ir.IndexType.get()] * 2


def parallel_loop(
  ranges: list[ir.Value], lowering: KernelLowering, bounds: tuple[ir.Value, ir.Value] | None
) -> ir.Block:
  """An scf.parallel over `ranges` (the first over [begin, end) when `bounds` are given), each range mapped to its
  induction variable; returns the body."""
  body = parallel_over([range_size(r) for r in ranges], bounds)
  lowering.scopes.append(dict(zip(ranges, body.arguments)))
  return body


def lower_scalar_body(
  kernel: ir.Operation,
  lowering: KernelLowering,
  stored: uop.StoreOp,
  loops: list[ir.Value],
  entry: ir.Block,
  bounds: tuple[ir.Value, ir.Value],
) -> int:
  """Emit the parallel loop over the kernel's output ranges, its outermost range over `bounds`, and its scalar body; the
  extent of its outermost range. Reductions that vary only with the outer ranges are computed between the outer and the
  inner loops."""
  reorder = LOOP_ORDER.get(kernel) is LoopOrder.REDUCE_OUTER
  accumulators = lowering.accumulators(stored.value, loops[-1]) if reorder else []
  parallel_loops = loops[:-1] if reorder else loops
  depth, hoisted = (0, []) if reorder else hoisting_depth(stored, loops)
  point = ir.InsertionPoint(entry)
  # reduce-outer with one output range: slices of it run on the cores
  extent = range_size((parallel_loops or loops)[0]) if loops else 1
  if parallel_loops:
    body = parallel_loop(parallel_loops[: depth or None], lowering, bounds)
    if hoisted:
      with ir.InsertionPoint.at_block_terminator(body):
        for reduction in hoisted:
          lowering.emit(reduction.results[0])
        body = parallel_loop(parallel_loops[depth:], lowering, None)
    point = ir.InsertionPoint.at_block_terminator(body)
  with point:
    if reorder:
      lowering.reduce_outer(stored, loops[-1], accumulators, None if parallel_loops else bounds)
    else:
      lowering.store(stored)
  return extent


def steps(stored: uop.StoreOp, loops: list[ir.Value]) -> int:
  """The kernel's outputs times the steps of the reductions each computes (those nested in another counted once)."""
  reductions = [] if isinstance(stored.value, ir.BlockArgument) else top_level_reductions(stored.value)
  return prod(range_size(r) for r in loops) * max(
    1, sum(prod(range_size(r) for r in reduction.ranges) for reduction in reductions)
  )


def lower_kernel(kernel: func.FuncOp) -> None:
  ends = [op for op in kernel.entry_block.operations if isinstance(op, uop.EndOp)]
  if len(ends) != 1:
    raise PassError(kernel.location, f"kernel @{kernel.sym_name.value} needs exactly one {uop.EndOp.OPERATION_NAME}")
  stored, loops = ends[0].src.owner, list(ends[0].ranges)
  params, slice_types = list(kernel.entry_block.arguments), cpu_slice_arguments()
  aliased = read_where_written(kernel.operation) if IN_PLACE.get(kernel) else frozenset()
  with ir.InsertionPoint(kernel):
    lowered = func.FuncOp(kernel.sym_name.value, ([storage_memref(p.type) for p in params] + slice_types, []))
    entry = lowered.add_entry_block()
  bounds = tuple(entry.arguments[len(params) :])
  tile = VECTOR.get(kernel)
  blocked = tile and (not tile.get("across") or tile["rows"] > 1)  # vector code over blocks of the outputs
  if blocked and aliased and overlapping_blocks(kernel.operation, loops):
    tile = (
      None  # an output that may be an input's buffer is written once: computing an element again would read it changed
    )
  lowering = (
    BlockedVectorLowering(dict(zip(params, entry.arguments)), tile["lanes"])
    if tile
    else KernelLowering(dict(zip(params, entry.arguments)))
  )
  lowering.siblings = sibling_stores(kernel.operation)
  body = (
    lower_scalar_body if not tile or not blocked else lower_across_body if tile.get("across") else lower_vector_body
  )
  with ir.InsertionPoint(entry):
    extent = body(kernel.operation, lowering, stored, loops, entry, bounds)
    func.ReturnOp([])
  KERNEL.set(lowered)
  if TUNE.has(kernel):
    TUNE.set(lowered, TUNE.get(kernel))
  # A kernel's buffers never overlap (outputs and temporaries are fresh for each launch), so LLVM may assume no
  # aliasing, unless it computes an assign in place (IN_PLACE): an input read only where it writes may then be the
  # buffer it writes.
  noalias, plain = ir.DictAttr.get({"llvm.noalias": ir.UnitAttr.get()}), ir.DictAttr.get({})
  may_alias = aliased | (set(range(1 + len(lowering.siblings))) if aliased else set())  # the outputs too
  lowered.arg_attrs = ir.ArrayAttr.get(
    [plain if k in may_alias else noalias for k in range(len(params))] + [plain] * len(slice_types)
  )
  EXTENT.set(lowered, extent)
  WORK.set(lowered, steps(stored, loops))
  kernel.operation.erase()


@register(
  "pytc-lower-kernels",
  "index-level kernel functions to scf.parallel/scf.for (or vector code) + memref + arith/math",
  takes=("split", "scheduled", "kernel", "lowered"),
)
def lower_kernels(module: ir.Operation) -> None:
  for fn in functions_with(module, uop.EndOp.OPERATION_NAME):
    if KERNEL.get(fn):
      with fn.location:
        lower_kernel(fn)
