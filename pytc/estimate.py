"""How much arithmetic a scheduled kernel does, as GlobalCounters.global_ops adds it up (and DEBUG=2 divides it by a kernel's time).

A value of a kernel varies over the ranges it is computed from; an arithmetic op runs once per point of those ranges (times
the lanes of a vector, twice for a multiply-add), and a range_reduce once per point of its operand's ranges, the reduced
ones included. Index arithmetic (index-typed results, `arith` ops), constants, loads, stores and casts do no arithmetic of
the tensor's values and are not counted. A loop-invariant value counts once however deep it sits: the count is of the
work the kernel needs, not of how its lowering places it."""
from __future__ import annotations

import math

from mlir import ir

UNCOUNTED = frozenset({"uop.const", "uop.iota", "uop.range", "uop.index", "uop.store", "uop.end", "uop.cast", "uop.bitcast"})


def kernel_ops(kernels: ir.Module) -> dict[str, int]:
  """Each kernel's operation count, by name."""
  return {ir.StringAttr(func.attributes["sym_name"]).value: ops_of(func) for func in kernels.body.operations}


def ops_of(func: ir.Operation) -> int:
  sizes: dict[ir.Value, int] = {}  # each range's trip count
  varies: dict[ir.Value, frozenset[ir.Value]] = {}  # each value's ranges
  total = 0
  for op in func.regions[0].blocks[0].operations:
    name, operands = op.operation.name, list(op.operands)
    over = frozenset().union(*(varies.get(v, frozenset()) for v in operands))
    if name == "uop.range":
      result = op.results[0]
      sizes[result], over = ir.IntegerAttr(op.attributes["size"]).value, frozenset({result})
    elif name == "uop.range_reduce":
      total += math.prod(sizes[r] for r in over)
      over = over - frozenset(operands[1:])
    elif name.startswith("uop.") and name not in UNCOUNTED and op.results and not isinstance(op.results[0].type, ir.IndexType):
      total += math.prod(sizes[r] for r in over) * lanes(op.results[0].type) * (2 if name == "uop.mulacc" else 1)
    for result in op.results: varies[result] = over
  return total


def lanes(type_: ir.Type) -> int:
  return math.prod(type_.shape) if isinstance(type_, ir.ShapedType) else 1
