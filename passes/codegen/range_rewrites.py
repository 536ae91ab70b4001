"""What pytc-merge-ranges and pytc-split-ranges share: the ops using a range, an op rebuilt over other ranges, and a
kernel's buffer arguments given other shapes (the same memory, indexed another way)."""

from collections.abc import Callable

from mlir import ir

from pytc.dialects import uop
from pytc.passes.common.uops import reduce_kind


def buffer_of(access: uop.IndexOp | uop.StoreOp) -> ir.Value:
  """The buffer an access reads or writes."""
  return access.src if isinstance(access, uop.IndexOp) else access.dst


def users(value: ir.Value) -> dict[int, ir.OpView]:
  """The ops using `value`, each once, by their operation's hash (a Python object's id changes from one look to the
  next)."""
  found = {}
  for use in value.uses:
    found.setdefault(hash(use.owner.operation), use.owner.opview)
  return found


def rebuild(op: ir.OpView, over: Callable[[ir.OpOperandList], list[ir.Value]]) -> None:
  """Replace an access, a reduction or the end by the same op over `over(its indices or ranges)`."""
  with ir.InsertionPoint(op), op.location:
    if isinstance(op, uop.IndexOp):
      new = uop.IndexOp(op.src, over(op.indices), valid=op.valid)
    elif isinstance(op, uop.StoreOp):
      new = uop.StoreOp(op.value, op.dst, over(op.indices))
    elif isinstance(op, uop.RangeReduceOp):
      new = uop.RangeReduceOp(reduce_kind(op), op.src, over(op.ranges))
    else:
      new = uop.EndOp(op.src, over(op.ranges))
  op.result.replace_all_uses_with(new.result)
  op.operation.erase()


def rebuild_users(value: ir.Value, over: Callable[[ir.OpOperandList], list[ir.Value]]) -> None:
  """Rebuild every op using the range `value` (the end after its store, whose type it takes)."""
  for op in sorted(users(value).values(), key=lambda op: isinstance(op, uop.EndOp)):
    rebuild(op, over)


def reshape_arguments(fn: ir.OpView, shapes: dict[ir.Value, list[int]]) -> None:
  """Give the kernel's buffer arguments in `shapes` those shapes, in their block and in the function's type."""
  for buffer, shape in shapes.items():
    buffer.set_type(ir.MemRefType.get(shape, ir.MemRefType(buffer.type).element_type))
  results = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value).results
  fn.attributes["function_type"] = ir.TypeAttr.get(
    ir.FunctionType.get([arg.type for arg in fn.regions[0].blocks[0].arguments], results)
  )
