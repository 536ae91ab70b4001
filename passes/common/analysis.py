"""Analyses of a kernel's computation at index level that several passes share: what a value computes, its
reductions, the ranges it varies with, and what its ops cost.

A kernel's values form a DAG rooted at its store; `computation(value)` lists the ops `value` is computed by
(operands first), block arguments (buffers) excluded. A reduction's body is its `src`, looped over its `ranges`.
"""

from collections.abc import Iterator
from contextlib import contextmanager

from mlir import ir
from mlir.dialects import arith

from pytc.dialects import uop
from pytc.passes.common.uops import defined_by, isa
from pytc.passes.common.walk import dependencies

TRANSCENDENTAL = frozenset(
  op.OPERATION_NAME
  for op in (
    uop.Exp2Op,
    uop.ExpOp,
    uop.Log2Op,
    uop.LogOp,
    uop.SinOp,
    uop.CosOp,
    uop.TanhOp,
    uop.SqrtOp,
    uop.PowOp,
    uop.RecipOp,
  )
)
# other uop ops weigh 1
OP_WEIGHT = {uop.RangeOp.OPERATION_NAME: 0, uop.ConstOp.OPERATION_NAME: 0} | dict.fromkeys(TRANSCENDENTAL, 4)
UOP_PREFIX = f"{uop._Dialect.DIALECT_NAMESPACE}."


def op_weight(op: ir.Operation) -> int:
  return OP_WEIGHT.get(op.name, 1) if op.name.startswith(UOP_PREFIX) else 0  # other dialects' 0


def weight(ops: list[ir.Operation]) -> int:
  return sum(map(op_weight, ops))


def kernel_end(kernel: ir.Operation) -> uop.EndOp:
  """The `uop.end` that closes the kernel's store (its `src`) over its loop ranges (its `ranges`, outermost first)."""
  return next(op for op in kernel.regions[0].blocks[0].operations if isinstance(op, uop.EndOp))


def sibling_stores(kernel: ir.Operation) -> list[uop.StoreOp]:
  """A merged kernel's stores besides the one its `uop.end` closes (pytc-merge-kernels): into other buffers, at the same
  element."""
  closed = kernel_end(kernel).src.owner.operation
  return [op for op in kernel.regions[0].blocks[0].operations if isinstance(op, uop.StoreOp) and op.operation != closed]


def defining(value: ir.Value, kind: type[ir.OpView]) -> ir.OpView | None:
  """The op of class `kind` that computes `value`, or None if another op (or none) does."""
  return None if isinstance(value, ir.BlockArgument) or not isinstance(value.owner, kind) else value.owner


def constant_value(value: ir.Value) -> int | None:
  """The integer an index value holds when an arith.constant defines it, else None."""
  if (op := defining(value, arith.ConstantOp)) is None:
    return None
  return ir.IntegerAttr(op.value).value


def computation(value: ir.Value, into_reductions: bool = True) -> list[ir.OpView]:
  """The ops `value` is computed by, its own last and each after its operands; without `into_reductions`, a reduction
  is listed but not what it reduces. A block argument is computed by none."""
  if isinstance(value, ir.BlockArgument):
    return []

  def follow(op: ir.Operation, operand: ir.Value) -> bool:
    return not isinstance(operand, ir.BlockArgument) and (into_reductions or not isa(op, uop.RangeReduceOp))

  return [op.opview for op in dependencies(value.owner.operation, follow)]


def top_level_reductions(value: ir.Value) -> list[uop.RangeReduceOp]:
  """The reductions `value` combines that no other reduction in it reduces over, each after the ones it uses."""
  return [op for op in computation(value, into_reductions=False) if isinstance(op, uop.RangeReduceOp)]


_known_ranges: dict[ir.Value, frozenset[ir.Value]] | None = None


@contextmanager
def unchanging() -> Iterator[None]:
  """While the IR does not change: what `varying_ranges` finds for a value is kept for the calls that follow (a pass
  asking of many values in one kernel walks each op once, not once per question)."""
  global _known_ranges
  outer, _known_ranges = _known_ranges, {}
  try:
    yield
  finally:
    _known_ranges = outer


def varying_ranges(value: ir.Value) -> frozenset[ir.Value]:
  """The `uop.range` values that `value` is computed from (the ranges a reduction in it loops over included)."""
  known = _known_ranges if _known_ranges is not None else {}
  stack = [value]
  while stack:
    top = stack[-1]
    if top in known:
      stack.pop()
      continue
    if isinstance(top, ir.BlockArgument):
      known[stack.pop()] = frozenset()
      continue
    operands = list(top.owner.operands)
    if pending := [v for v in operands if v not in known]:
      stack.extend(pending)
      continue
    found = frozenset({v for v in operands if defined_by(v, uop.RangeOp)}).union(*(known[v] for v in operands))
    for result in top.owner.results:
      known[result] = found
    stack.pop()
  return known[value]


def uses_any(value: ir.Value, ranges: set[ir.Value]) -> bool:
  """Whether `value` varies with one of `ranges` (uop.range values)."""
  return value in ranges or not varying_ranges(value).isdisjoint(ranges)


def free_ranges(reduction: uop.RangeReduceOp) -> set[ir.Value]:
  """The ranges a reduction's value varies with: those in its computation that no reduction inside it loops over."""
  ops = computation(reduction.result)
  used = {
    v for op in ops for v in op.operands if not isinstance(v, ir.BlockArgument) and isinstance(v.owner, uop.RangeOp)
  }
  return used - {v for op in ops if isinstance(op, uop.RangeReduceOp) for v in op.ranges}


def read_only_at(buffer: ir.Value, indices: list[ir.Value]) -> bool:
  """Whether every use of `buffer` is an unmasked read at `indices`."""
  return all(
    isinstance(use.owner.opview, uop.IndexOp)
    and use.owner.opview.valid is None
    and list(use.owner.opview.indices) == indices
    for use in buffer.uses
  )


def read_where_written(kernel: ir.Operation) -> frozenset[int]:
  """The buffer arguments (by position) that a kernel reads only at the element its stores write into its first
  arguments, unmasked and of the type of one of those: the ones that may be an output itself (an assign computed in
  place)."""
  parameters = list(kernel.regions[0].blocks[0].arguments)
  stores = [op.opview for op in kernel.regions[0].blocks[0].operations if isinstance(op.opview, uop.StoreOp)]
  if [store.dst for store in stores] != parameters[: len(stores)] or any(
    list(s.indices) != list(stores[0].indices) for s in stores
  ):
    return frozenset()
  at, written = list(stores[0].indices), [p.type for p in parameters[: len(stores)]]
  return frozenset(
    k
    for k, value in enumerate(parameters[len(stores) :], len(stores))
    if value.type in written and read_only_at(value, at)
  )
