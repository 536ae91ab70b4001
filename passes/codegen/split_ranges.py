"""pytc-split-ranges: split a range that a kernel divides into two ranges, so the division disappears.

A grouped convolution of 4 groups of 32 channels loops over its 128 output channels `o` and reads input channel
o // 32 * 32 + c: the read varies with every output channel, so no rows of output channels reuse it, and the code
generators keep scalar loops (25x slower than a vectorized convolution). When every use of a range `r` of N values is
r // d or r mod d (the same d, dividing N), an access indexing a buffer dimension of exactly N values with `r`, or the
`uop.end` or `uop.range_reduce` closing it, `r` becomes two ranges, `g` of N / d values and `i` of d, with g in place of
r // d, i in place of r mod d, and (g, i) in place of r in the loop nest and in every access: the buffers' dimension of
N splits into N / d x d in the kernel's signature (the same memory, read in the same order). Every access of such a
buffer must index that dimension with `r`. The grouped convolution then reads input channel g * 32 + c, which rows of
`i` share.
"""

from mlir import ir

from pytc.dialects import uop
from pytc.passes import functions_with, range_size, register
from pytc.passes.codegen.range_rewrites import buffer_of, rebuild_users, reshape_arguments, users
from pytc.passes.common.analysis import constant_value
from pytc.passes.common.attributes import KERNEL
from pytc.passes.common.uops import new_range, range_id, range_kind

DIVISIONS = {"arith.divui": "div", "arith.remui": "mod"}


def position(op: ir.OpView, r: ir.Value) -> int | None:
  """The dimension an access indexes with `r` (its only use of it there), when that dimension has as many elements as
  `r`."""
  if not isinstance(op, uop.IndexOp | uop.StoreOp):
    return None
  indices = list(op.indices)
  found = [d for d, index in enumerate(indices) if index == r]
  if len(found) != 1:
    return None
  return found[0] if ir.MemRefType(buffer_of(op).type).shape[found[0]] == range_size(r) else None


def split_plan(r: ir.Value) -> tuple[int, dict[ir.Value, int]] | None:
  """(d, each buffer argument indexed with `r` and the dimension it splits) when `r` can split by d; else None."""
  divisors, buffers, size = set(), {}, range_size(r)
  for op in users(r).values():
    if isinstance(op, uop.EndOp | uop.RangeReduceOp):
      continue
    if op.operation.name in DIVISIONS:
      if op.operands[0] != r or (d := constant_value(op.operands[1])) is None:
        return None
      divisors.add(d)
      continue
    if (
      (d := position(op, r)) is None
      or not isinstance(buffer := buffer_of(op), ir.BlockArgument)
      or buffers.setdefault(buffer, d) != d
    ):
      return None
  if len(divisors) != 1 or (d := divisors.pop()) <= 1 or d >= size or size % d:
    return None
  if any(position(op, r) != dim for buffer, dim in buffers.items() for op in users(buffer).values()):
    return None
  return d, buffers


def split(fn: ir.OpView, r: ir.Value, d: int, buffers: dict[ir.Value, int], fresh_id: int) -> None:
  size = range_size(r)
  with ir.InsertionPoint(r.owner), r.owner.location:
    outer, inner = new_range(range_kind(r), size // d, range_id(r)), new_range(range_kind(r), d, fresh_id)

  def split_shape(buffer: ir.Value, dim: int) -> list[int]:
    shape = list(ir.MemRefType(buffer.type).shape)
    return shape[:dim] + [size // d, d] + shape[dim + 1 :]

  reshape_arguments(fn, {buffer: split_shape(buffer, dim) for buffer, dim in buffers.items()})
  for op in users(r).values():
    if op.operation.name in DIVISIONS:
      op.result.replace_all_uses_with(outer if DIVISIONS[op.operation.name] == "div" else inner)
      op.operation.erase()
  rebuild_users(r, lambda values: [v for value in values for v in ((outer, inner) if value == r else (value,))])
  r.owner.erase()


def split_kernel(fn: ir.OpView) -> None:
  ranges = [op.result for op in fn.regions[0].blocks[0].operations if isinstance(op, uop.RangeOp)]
  fresh = max((range_id(r) for r in ranges), default=-1) + 1
  for r in ranges:
    if range_size(r) > 0 and (plan := split_plan(r)) is not None:
      split(fn, r, *plan, fresh)
      fresh += 1


@register(
  "pytc-split-ranges",
  "split a range used only as r // d, r mod d and whole buffer dimensions into two ranges (no division)",
  takes=("kernel",),
)
def split_ranges(module: ir.Operation) -> None:
  for fn in functions_with(module, uop.EndOp.OPERATION_NAME):
    if KERNEL.get(fn):
      split_kernel(fn)
