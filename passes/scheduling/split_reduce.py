"""pytc-split-reduce: a large reduction becomes two, through a buffer of partial results.

A sum (`uop.reduce add`) folding at least `threshold` elements into each output (default 16384), with few outputs,
splits one of its reduced axes (the first one it can) into d parts: the first reduction folds every reduced axis into
d partial sums per output, materialized (`uop.contiguous`), and a second reduction folds those. Each partial folds d
times fewer elements, so a float sum keeps its precision (a long sum in one accumulator loses the small addends once
it is large), and the partials are independent: the first kernel spreads over cores even when the sum has one output.
A max loses nothing to order and a product's rounding grows with its length whatever the order: they stay whole.
A source's last axis (or one followed only by axes of size 1), of size n, read in order (each tensor it is computed
from steps by one element along it), is seen as (chunks, n / d, lanes) with d = chunks * lanes: partial (c, l) folds the
elements c * n / chunks + k * lanes + l, so the first kernel reads each chunk in order, `lanes` partials side by side as
one vector, and chunks run on separate cores (lanes = d, one chunk, where `lanes` does not divide d); `lanes` is the
target's vector width in 32-bit lanes (default 16, AVX-512's; a power of two up to 64; the compilers give it from
their target, a GPU's as a 64-byte request's floats). Any other axis is seen as
(d, n / d), the d chunks first: the axes after it stay the innermost of the partials, so a column sum still reads whole
rows in order, and a matmul's K (B read down its columns) becomes d matmuls over contiguous parts of K (interleaved as
lanes, its partials were scalar loops striding through B: 1 GFLOP/s). d is the largest divisor of the
axis from 256 down to 8 that keeps the partials at most `max_partials` (default 2**22); without one the sum stays whole.
The default is the longest reduction whose panel a vectorized kernel packs (1 MiB of 16 float lanes): a longer one
left whole ran as scalar loops (a 7x7 stem's weight gradient, 25088 terms per output, 9.5x slower than split).
The result, reshaped back, replaces the sum; its two reductions are marked `pytc.split` and not split again, so the
pass is idempotent. A one-hot sum (a where selecting by a comparison with an iota: tensor indexing, gather) stays
whole: pytc-rangeify makes it one read.
"""

from math import prod
from typing import Annotated

from mlir import ir

from pytc.dialects import uop
from pytc.passes import Count, Limit, Within, functions_with, register
from pytc.passes.common.attributes import SPLIT
from pytc.passes.common.uops import defined_by, reduce_kind
from pytc.passes.scheduling.rangeify import array_attr, is_one_hot_mask, shape_of


def split_factor(source: list[int], axes: list[int], outputs: int, max_partials: int) -> tuple[int, int] | None:
  """(axis, d): the reduced axis to split and the number of parts, or None."""
  for d in range(min(256, max_partials // max(outputs, 1)), 7, -1):
    for axis in axes:
      if source[axis] % d == 0 and source[axis] > d:
        return axis, d
  return None


def is_one_hot_sum(op: uop.ReduceOp) -> bool:
  """Whether `op` sums a where (through casts) selecting by a one-hot mask: the shape of the one-hot sums pytc-rangeify
  turns into reads."""
  select = op.src
  while defined_by(select, uop.CastOp):
    select = select.owner.operands[0]
  return defined_by(select, uop.WhereOp) and is_one_hot_mask(select.owner.operands[0])


def steps_by_one(shape: list[int], axis: int) -> bool:
  return all(n == 1 for n in shape[axis + 1 :])


def read_in_order(value: ir.Value, axis: int, memo: dict[tuple[ir.Value, int], bool]) -> bool:
  """Whether each tensor `value` is computed from steps by one element along `axis` where it moves with it at all (as
  far as its movement ops tell: a reshape is followed along its source's innermost axis): the B of a matmul, read down
  its columns, is not."""
  shape = shape_of(value)
  if shape[axis] == 1:
    return True
  if (value, axis) in memo:
    return memo[(value, axis)]
  op = None if isinstance(value, ir.BlockArgument) else value.owner
  if isinstance(op, uop.PermuteOp):
    answer = read_in_order(op.src, array_attr(op, "order")[axis], memo)
  elif isinstance(op, uop.ExpandOp | uop.PadOp | uop.ShrinkOp | uop.FlipOp):
    answer = read_in_order(op.src, axis, memo)
  elif isinstance(op, uop.ReshapeOp):
    inner = [a for a, n in enumerate(shape_of(op.src)) if n != 1]
    answer = steps_by_one(shape, axis) and (not inner or read_in_order(op.src, inner[-1], memo))
  elif (
    op is not None
    and op.operands
    and all(isinstance(o.type, ir.RankedTensorType) and shape_of(o) == shape for o in op.operands)
  ):
    answer = all(read_in_order(o, axis, memo) for o in op.operands)  # elementwise
  else:
    answer = steps_by_one(shape, axis)  # an argument or a computed tensor, in its own layout
  memo[(value, axis)] = answer
  return answer


def split(op: uop.ReduceOp, threshold: int, max_partials: int, vector_lanes: int) -> None:
  if SPLIT.get(op) or reduce_kind(op) is not uop.ReduceKind.add or is_one_hot_sum(op):
    return
  source, result = shape_of(op.operands[0]), shape_of(op.results[0])
  outputs, axes = prod(result), sorted(array_attr(op, "axes"))
  if (
    outputs == 0
    or prod(source) // outputs < threshold
    or (choice := split_factor(source, axes, outputs, max_partials)) is None
  ):
    return
  axis, d = choice
  # the axes after it of size 1 and every read along it in order: it is read like a row
  row = all(n == 1 for n in source[axis + 1 :]) and read_in_order(op.src, axis, {})
  if row:  # (chunks, n / d, lanes), chunks and lanes last; the axes of size 1 after it set aside
    source, result, axes = source[: axis + 1], result[: axis + 1], [a for a in axes if a <= axis]
    lanes = vector_lanes if d % vector_lanes == 0 else d
    parted = source[:axis] + [d // lanes, source[axis] // d, lanes]
    order, parts = [*range(axis), axis + 1, axis, axis + 2], [d // lanes, lanes]
    first, second = axes, [len(result), len(result) + 1]  # the axes keep their positions
  else:  # the axes after it stay innermost (a column sum keeps reading rows in order): (chunks, n / d), chunks first
    parted = source[:axis] + [d, source[axis] // d] + source[axis + 1 :]
    order, parts = [axis, *(i for i in range(len(parted)) if i != axis)], [d]
    first, second = [a + 1 for a in axes], [0]
  kept = result + parts if row else parts + result
  element = ir.RankedTensorType(op.results[0].type).element_type
  with ir.InsertionPoint(op), op.location:

    def tensor(shape: list[int]) -> ir.RankedTensorType:
      return ir.RankedTensorType.get(shape, element)

    def reduce(shape: list[int], value: ir.Value, axes: list[int]) -> ir.Value:
      sum_ = uop.ReduceOp(tensor(shape), uop.ReduceKind.add, value, axes)
      SPLIT.set(sum_)
      return sum_.result

    value = uop.ReshapeOp(tensor(parted), op.src).result
    if order != sorted(order):
      value = uop.PermuteOp(tensor([parted[i] for i in order]), value, order).result
    value = uop.ContiguousOp(reduce(kept, value, first)).result
    value = reduce([1 if i in second else n for i, n in enumerate(kept)], value, second)
    value = uop.ReshapeOp(op.results[0].type, value).result
  op.results[0].replace_all_uses_with(value)
  op.operation.erase()


@register(
  "pytc-split-reduce",
  "a reduction folding many elements into each of few outputs becomes two, through partial results",
  takes=("tensor",),
)
def split_reduce(
  module: ir.Operation,
  threshold: Count = 16384,
  max_partials: Limit = 4194304,
  lanes: Annotated[int, Within(1, 64, power_of_two=True)] = 16,
) -> None:
  for fn in functions_with(module, uop.SinkOp.OPERATION_NAME):
    for op in [op for op in fn.regions[0].blocks[0].operations if isinstance(op, uop.ReduceOp)]:
      split(op, threshold, max_partials, lanes)
