"""pytc-merge-ranges: merge two ranges that every access reads as one contiguous dimension.

An index-level kernel keeps the dimensions of the tensors it was scheduled from: an elementwise op over (1024, 7, 7)
loops 1024 x 7 x 7, and a 1x1 convolution over 14x14 pixels loops over 14 rows of 14. The innermost range is then
narrower than a vector, and the code generators fall back to scalar loops (the exp of 1024x7x7 floats ran 6x slower than
the same 50176 floats in one dimension). Two ranges `a` (outer) and `b` (inner) of the same kind, next to each other in
the loop nest (`uop.end`'s ranges, or one `uop.range_reduce`'s), become one range `a * B + b` of A x B values when each
of their uses is an access (`uop.index`, `uop.store`) indexing a buffer argument with `a` and then `b` in two
neighbouring dimensions, the second of exactly B elements, and every access of those buffers indexes them so: the
buffers' two dimensions then merge into one in the kernel's signature (the same memory, read in the same order). Any
other use (an index `a + 1`, a padding condition, a broadcast read along `b` alone) keeps them apart. Pairs merge
until none is left, innermost first, so a fully contiguous elementwise kernel becomes one range.
"""

from mlir import ir

from pytc.dialects import uop
from pytc.passes import functions_with, range_size, register
from pytc.passes.codegen.range_rewrites import buffer_of, rebuild_users, reshape_arguments, users
from pytc.passes.common.analysis import kernel_end
from pytc.passes.common.attributes import KERNEL
from pytc.passes.common.uops import new_range, range_id, range_kind

ACCESSES = (uop.IndexOp, uop.StoreOp)


def pair_position(op: ir.OpView, a: ir.Value, b: ir.Value) -> int | None:
  """The dimension `d` where an access indexes its buffer with `a` and `d + 1` with `b`, which holds as many elements as
  `b` has values; None for another op, or an access using them otherwise."""
  if not isinstance(op, ACCESSES):
    return None
  indices = list(op.indices)
  if sum(i in (a, b) for i in indices) != 2:
    return None
  d = next((d for d in range(len(indices) - 1) if indices[d] == a and indices[d + 1] == b), None)
  return d if d is not None and ir.MemRefType(buffer_of(op).type).shape[d + 1] == range_size(b) else None


def merge_plan(a: ir.Value, b: ir.Value) -> dict[ir.Value, int] | None:
  """For mergeable `a` and `b`: each buffer argument they index, with the dimension where its two merge; else None."""
  if range_size(a) == 0 or range_size(b) == 0:
    return None
  closing = (uop.EndOp, uop.RangeReduceOp)
  accesses = {key: op for key, op in users(a).items() if not isinstance(op, closing)}
  if accesses.keys() != {key for key, op in users(b).items() if not isinstance(op, closing)}:
    return None
  buffers: dict[ir.Value, int] = {}
  for op in accesses.values():
    buffer, d = buffer_of(op) if isinstance(op, ACCESSES) else None, pair_position(op, a, b)
    if d is None or not isinstance(buffer, ir.BlockArgument) or buffers.setdefault(buffer, d) != d:
      return None
  if any(pair_position(op, a, b) != d for buffer, d in buffers.items() for op in users(buffer).values()):
    return None  # merged alike everywhere
  return buffers


def merged_shape(buffer: ir.Value, d: int) -> list[int]:
  shape = list(ir.MemRefType(buffer.type).shape)
  return shape[:d] + [shape[d] * shape[d + 1]] + shape[d + 2 :]


def merge(fn: ir.OpView, a: ir.Value, b: ir.Value, buffers: dict[ir.Value, int]) -> None:
  with ir.InsertionPoint(a.owner), a.owner.location:
    merged = new_range(range_kind(a), range_size(a) * range_size(b), range_id(a))
  reshape_arguments(fn, {buffer: merged_shape(buffer, d) for buffer, d in buffers.items()})
  rebuild_users(a, lambda values: [merged if v == a else v for v in values if v != b])
  a.owner.erase()
  b.owner.erase()


def neighbours(fn: ir.OpView) -> list[tuple[ir.Value, ir.Value]]:
  """The pairs of ranges next to each other in the kernel's loop nest or in one reduction's, innermost first."""
  lists = [list(kernel_end(fn).ranges)]
  lists += [list(op.ranges) for op in fn.regions[0].blocks[0].operations if isinstance(op, uop.RangeReduceOp)]
  return [(ranges[i - 1], ranges[i]) for ranges in lists for i in range(len(ranges) - 1, 0, -1)]


def merge_kernel(fn: ir.OpView) -> None:
  while (
    found := next(((a, b, plan) for a, b in neighbours(fn) if (plan := merge_plan(a, b)) is not None), None)
  ) is not None:
    merge(fn, *found)


@register(
  "pytc-merge-ranges",
  "merge neighbouring ranges that every access reads as one contiguous dimension (wider loops to vectorize)",
  takes=("kernel",),
)
def merge_ranges(module: ir.Operation) -> None:
  for fn in functions_with(module, uop.EndOp.OPERATION_NAME):
    if KERNEL.get(fn):
      merge_kernel(fn)
