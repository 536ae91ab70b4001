"""The one graph walk of pytc's passes: the ops a value depends on, in topological order, up to a boundary; and the
users a value reaches forward."""

from collections.abc import Callable, Iterator

from mlir import ir


def dependencies(
  root: ir.Operation, follow: Callable[[ir.Operation, ir.Value], bool], first: Callable[[ir.Value], int] | None = None
) -> list[ir.Operation]:
  """`root` and the ops it depends on through the operands `follow(op, operand)` accepts, each once and after its
  operands. Operands are visited in order, or with `first`, the one with the largest `first(operand)` first."""
  order, seen, stack = [], set(), [(root, False)]
  while stack:
    op, expanded = stack.pop()
    if expanded:
      order.append(op)
    elif op not in seen:
      seen.add(op)
      stack.append((op, True))
      operands = [v for v in reversed(list(op.operands)) if follow(op, v)]
      if first is not None:
        operands.sort(key=first)
      # a seen op is placed already
      stack.extend((owner, False) for v in operands if (owner := v.owner.operation) not in seen)
  return order


def cone(value: ir.Value, stop: Callable[[ir.Value], bool]) -> list[ir.Operation]:
  """The ops `value` depends on (its own included), each after its operands, up to block arguments and values `stop`
  accepts."""
  if isinstance(value, ir.BlockArgument) or stop(value):
    return []
  return dependencies(value.owner.operation, lambda op, v: not isinstance(v, ir.BlockArgument) and not stop(v))


def dependent(ops: list[ir.Operation], values: list[ir.Value]) -> list[ir.Operation]:
  """Those of `ops` (each after its operands) that depend on one of `values`, through the others."""
  varying, found = set(values), []
  for op in ops:
    if any(v in varying for v in op.operands):
      varying.update(op.results)
      found.append(op)
  return found


def users(values: list[ir.Value], follow: Callable[[ir.Operation], bool]) -> Iterator[ir.Operation]:
  """Every op that uses `values` or, through the users `follow` accepts, their results; each once."""
  stack, seen = list(values), set()
  while stack:
    for use in list(stack.pop().uses):
      user = use.owner.operation
      if user in seen:
        continue
      seen.add(user)
      yield user
      if follow(user):
        stack.extend(user.results)
