"""pytc-vectorize: choose kernels whose innermost output range becomes vector lanes, register-blocked.

A reduction that reads a buffer contiguously along the kernel's innermost output range `j` (the `b[k, j]`
of a matmul, the `x[c, y + ky, x + kx]` of a convolution) is computed `lanes` outputs at a time along `j`,
`vectors` such vectors side by side, and `rows` values of one more output range `u` at once (tinygrad's
upcast): `rows * vectors` accumulator vectors stay in registers across the whole reduction, and each
contiguous vector read is reused for all `rows`. `u` is the innermost output range that the contiguous read
does not depend on, so its reuse is real. The kernel gets `pytc.vector = {lanes, vectors, rows, upcast}`
(`upcast` is the id of `u`, -1 if none); pytc-lower-kernels emits vector code for it. Only kernels whose
reductions do not nest and whose range sizes divide evenly are chosen; the rest keep scalar loops.
"""
from mlir import ir

from pytc.passes import functions_with, register
from pytc.passes.clone import dependencies
from pytc.passes.order_loops import top_level_reductions, uses_any


def size(r: ir.Value) -> int: return ir.IntegerAttr(r.owner.attributes["size"]).value


def contiguous_reads(reduction: ir.Operation, j: ir.Value) -> list[list[ir.Value]]:
  """The indices of each read in the reduction's body whose last index moves with `j` and no other index does."""
  body = dependencies(reduction.operands[0].owner.operation, lambda op, v: not isinstance(v, ir.BlockArgument))
  reads = []
  for op in body:
    if op.name != "uop.index": continue
    indices = list(op.operands[1:1 + ir.ShapedType(op.operands[0].type).rank])
    if indices and uses_any(indices[-1], {j}) and not any(uses_any(i, {j}) for i in indices[:-1]): reads.append(indices)
  return reads


def choose_tile(kernel: ir.Operation, lanes: int, rows: int, vectors: int, group: int) -> dict[str, int] | None:
  end = next(op.operation for op in kernel.regions[0].blocks[0].operations if op.operation.name == "uop.end")
  loops = list(end.operands[1:])
  if not loops or size(loops[-1]) < lanes: return None
  stored_value = end.operands[0].owner.operands[0]
  if isinstance(stored_value, ir.BlockArgument) or not (reductions := top_level_reductions(stored_value)): return None
  if any(top_level_reductions(r.operands[0]) for r in reductions if not isinstance(r.operands[0], ir.BlockArgument)): return None
  reads = [indices for r in reductions for indices in contiguous_reads(r, loops[-1])]
  if not reads: return None
  vectors = max(1, min(vectors, size(loops[-1]) // lanes))
  candidates = [r for r in loops[:-1] if size(r) > 1 and not any(uses_any(i, {r}) for i in reads[0])]
  if not candidates: return {"lanes": lanes, "vectors": vectors, "rows": 1, "group": 1, "upcast": -1}
  rows = min(rows, size(candidates[-1]))
  blocks = -(-size(candidates[-1]) // rows)
  group = max(g for g in range(1, group + 1) if blocks % g == 0)
  return {"lanes": lanes, "vectors": vectors, "rows": rows, "group": group, "upcast": ir.IntegerAttr(candidates[-1].owner.attributes["id"]).value}


@register("pytc-vectorize", "mark reductions that read contiguously along the innermost output range for register-blocked vector code")
def vectorize(module: ir.Operation, lanes: str = "8", rows: str = "4", vectors: str = "2", group: str = "16") -> None:
  i64 = ir.IntegerType.get_signless(64)
  for fn in functions_with(module, "uop.end"):
    if "pytc.kernel" in fn.attributes and (tile := choose_tile(fn.operation, int(lanes), int(rows), int(vectors), int(group))):
      fn.attributes["pytc.vector"] = ir.DictAttr.get({k: ir.IntegerAttr.get(i64, v) for k, v in tile.items()})
