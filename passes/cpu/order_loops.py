"""pytc-order-loops: choose where a kernel's reductions loop, for locality.

By default a reduction loops innermost: each output element accumulates over its reduce ranges, which
reads contiguously when the reduced axis is a buffer's last (a row sum, a dot product of rows). When a
reduction reads a buffer whose last index moves with the kernel's innermost output range and an earlier
index with a reduce range (the `b[k, j]` of a matmul, the `x[c, y + ky, x + kx]` of a convolution), that
order strides through memory. Such a kernel gets
`pytc.loop_order = "reduce-outer"`: pytc-lower-kernels then keeps one accumulator per element of the
innermost output range, loops the reduce ranges outside it and the output range innermost, so the hot
loop walks contiguous memory and vectorizes. Only kernels whose reductions do not nest, and whose
innermost output range has at most `max_accumulators` elements, are reordered.
"""
from mlir import ir

from pytc.passes import Limit, functions_with, range_size, register
from pytc.passes.common.clone import dependencies


def top_level_reductions(value: ir.Value) -> list[ir.Operation]:
  ops = dependencies(value.owner.operation, lambda op, v: not isinstance(v, ir.BlockArgument) and op.name != "uop.range_reduce")
  return [op for op in ops if op.name == "uop.range_reduce"]


def uses_any(value: ir.Value, ranges: set[ir.Value]) -> bool:
  if value in ranges: return True
  if isinstance(value, ir.BlockArgument): return False
  return any(v in ranges for op in dependencies(value.owner.operation, lambda o, v: not isinstance(v, ir.BlockArgument)) for v in op.operands)


def strided_reads(reduction: ir.Operation, innermost: ir.Value) -> bool:
  """Whether some read in the reduction's body moves with `innermost` in its last index and with a reduce range before."""
  reduce_ranges = set(reduction.operands[1:])
  body = dependencies(reduction.operands[0].owner.operation, lambda op, v: not isinstance(v, ir.BlockArgument))
  for op in body:
    if op.name != "uop.index": continue
    indices = list(op.operands[1:1 + ir.ShapedType(op.operands[0].type).rank])
    if indices and uses_any(indices[-1], {innermost}) and any(uses_any(i, reduce_ranges) for i in indices[:-1]): return True
  return False


def wants_reduce_outer(kernel: ir.Operation, max_accumulators: int) -> bool:
  end = next(op.operation for op in kernel.regions[0].blocks[0].operations if op.operation.name == "uop.end")
  loops = list(end.operands[1:])
  if not loops or range_size(loops[-1]) > max_accumulators: return False
  stored_value = end.operands[0].owner.operands[0]
  if isinstance(stored_value, ir.BlockArgument): return False
  reductions = top_level_reductions(stored_value)
  if not reductions: return False
  nested = any(top_level_reductions(r.operands[0]) for r in reductions if not isinstance(r.operands[0], ir.BlockArgument))
  return not nested and any(strided_reads(r, loops[-1]) for r in reductions)


@register("pytc-order-loops", "mark kernels whose reductions should loop outside the innermost output range (reads contiguous)",
          takes=("split", "scheduled", "kernel"))
def order_loops(module: ir.Operation, max_accumulators: Limit = 16384) -> None:
  for fn in functions_with(module, "uop.end"):
    if "pytc.kernel" in fn.attributes and wants_reduce_outer(fn.operation, max_accumulators):
      fn.attributes["pytc.loop_order"] = ir.StringAttr.get("reduce-outer")
