"""Typed access to uop ops for the passes: ops named by their generated classes, enum attributes read as the dialect's
enums, and builders for the index-level ops the passes make."""

from mlir import ir

from pytc.dialects import uop

Op = ir.Operation | ir.OpView


def isa(op: Op, *classes: type[ir.OpView]) -> bool:
  """Whether `op` is one of the uop ops `classes` (works on a plain ir.Operation as well as on its view)."""
  if isinstance(op, ir.OpView):
    return isinstance(op, classes)  # views come typed (the dialect's classes are registered)
  name = op.name
  for c in classes:  # a plain loop: this runs for every op a pass looks at
    if name == c.OPERATION_NAME:
      return True
  return False


def defined_by(value: ir.Value, *classes: type[ir.OpView]) -> bool:
  """Whether `value` is the result of one of `classes` (not a block argument)."""
  return not isinstance(value, ir.BlockArgument) and isinstance(value.owner, classes)


def _op(of: ir.Value | Op) -> Op:
  return of.owner if isinstance(of, ir.Value) else of


def range_kind(of: ir.Value | Op) -> uop.RangeKind:
  """What a uop.range (or the value it defines) iterates for."""
  return uop.RangeKind(ir.IntegerAttr(_op(of).attributes["kind"]).value)


def reduce_kind(op: Op) -> uop.ReduceKind:
  """The combiner of a uop.reduce or uop.range_reduce."""
  return uop.ReduceKind(ir.IntegerAttr(op.attributes["kind"]).value)


def range_id(of: ir.Value | Op) -> int:
  return ir.IntegerAttr(_op(of).attributes["id"]).value


def is_loop(value: ir.Value) -> bool:
  return defined_by(value, uop.RangeOp) and range_kind(value) is uop.RangeKind.loop


def is_reduce_range(value: ir.Value) -> bool:
  return defined_by(value, uop.RangeOp) and range_kind(value) is uop.RangeKind.reduce


def new_range(kind: uop.RangeKind, size: int, id: int) -> ir.Value:
  return uop.RangeOp(kind, size, id).result


def read(buffer: ir.Value, indices: list[ir.Value], valid: ir.Value | None = None) -> ir.Value:
  """`uop.index buffer[indices] (if valid)`."""
  return uop.IndexOp(buffer, indices, valid=valid).result


def valid_of(read_op: Op) -> ir.Value | None:
  """The validity condition of a uop.index, None if it reads everywhere."""
  return uop.IndexOp(read_op.operation).valid if not isinstance(read_op, uop.IndexOp) else read_op.valid
