"""pytc-order-loops: choose where a kernel's reductions loop, for locality.

By default a reduction loops innermost: each output element accumulates over its reduce ranges, which
reads contiguously when the reduced axis is a buffer's last (a row sum, a dot product of rows). When a
reduction reads a buffer whose last index moves with the kernel's innermost output range and an earlier
index with a reduce range (the `b[k, j]` of a matmul, the `x[c, y + ky, x + kx]` of a convolution), that
order strides through memory. Such a kernel gets
`pytc.loop_order = "reduce-outer"`: pytc-lower-kernels then keeps one accumulator per element of the
innermost output range, loops the reduce ranges outside it and the output range innermost, so the hot
loop walks contiguous memory and vectorizes. Only kernels whose reductions do not nest, and whose
innermost output range has at most `max_accumulators` elements (default 65536: 256 KiB of f32, an L2's worth, split
between the cores when it is the only output range), are reordered; a kernel's `pytc.tune` may force or
forbid it (`reduce_outer`) among those. Reductions of a few steps each (a depthwise 3×3 window: 9) stay innermost:
LLVM unrolls them in place and vectorizes the output loop around them (the kernel search found that order 4× faster).
"""

from math import prod

from mlir import ir

from pytc.dialects import uop
from pytc.passes import Limit, functions_with, range_size, register
from pytc.passes.common.analysis import computation, kernel_end, top_level_reductions, uses_any
from pytc.passes.common.attributes import KERNEL, LOOP_ORDER, TUNE, LoopOrder

UNROLLED_STEPS = (
  16  # a reduction of at most this many steps is unrolled in place: the output loop around it vectorizes as it is
)


def strided_reads(reduction: uop.RangeReduceOp, innermost: ir.Value) -> bool:
  """Whether some read in the reduction's body moves with `innermost` in its last index and with a reduce range
  before."""
  reduce_ranges = set(reduction.ranges)
  for op in computation(reduction.src):
    if not isinstance(op, uop.IndexOp):
      continue
    indices = list(op.indices)
    if indices and uses_any(indices[-1], {innermost}) and any(uses_any(i, reduce_ranges) for i in indices[:-1]):
      return True
  return False


def wants_reduce_outer(kernel: ir.Operation, max_accumulators: int) -> bool:
  """Whether the kernel may loop its reductions outside its innermost output range and, unless its `pytc.tune` says
  otherwise (`reduce_outer`), whether that reads more contiguously."""
  end = kernel_end(kernel)
  loops = list(end.ranges)
  if not loops or range_size(loops[-1]) > max_accumulators:
    return False
  reductions = top_level_reductions(end.src.owner.value)
  if not reductions or any(top_level_reductions(r.src) for r in reductions):
    return False
  if (chosen := TUNE.get(kernel, {}).get("reduce_outer")) is not None:
    return bool(chosen)
  if all(prod(range_size(r) for r in reduction.ranges) <= UNROLLED_STEPS for reduction in reductions):
    return False
  return any(strided_reads(r, loops[-1]) for r in reductions)


@register(
  "pytc-order-loops",
  "mark kernels whose reductions should loop outside the innermost output range (reads contiguous)",
  takes=("split", "scheduled", "kernel"),
)
def order_loops(module: ir.Operation, max_accumulators: Limit = 65536) -> None:
  for fn in functions_with(module, uop.EndOp.OPERATION_NAME):
    if KERNEL.get(fn) and wants_reduce_outer(fn.operation, max_accumulators):
      LOOP_ORDER.set(fn, LoopOrder.REDUCE_OUTER)
