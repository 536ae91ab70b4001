"""Copying ops with their operands remapped: the one way pytc's passes rebuild IR."""

from mlir import ir


def clone(op: ir.Operation, mapping: dict[ir.Value, ir.Value], operands: list[ir.Value] | None = None) -> ir.Operation:
  """A copy of the region-free `op` at the current insertion point; operands looked up in `mapping` (or given),
  and its results recorded there."""
  op = op.operation
  new = ir.Operation.create(
    op.name,
    results=[r.type for r in op.results],
    operands=operands if operands is not None else [mapping.get(v, v) for v in op.operands],
    attributes=dict(op.attributes.items()),
    loc=op.location,
  )
  for old, result in zip(op.results, new.results):
    mapping[old] = result
  return new


def unused(op: ir.Operation) -> bool:
  # stops at the first use (a constant may have thousands)
  return not any(True for result in op.results for _ in result.uses)


def erase_dead(ops: list[ir.Operation]) -> None:
  """Erase those of `ops` (in order) whose results are unused, last first."""
  for op in reversed(ops):
    if unused(op):
      op.erase()
