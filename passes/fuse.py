"""pytc-fuse: decide which materializations stay (kernel boundaries) and inline the rest.

`uop.bufferize` ops with `reason = "multi-use"` are candidates; outputs, `contiguous` and `copy`
materializations always stay. Candidates are visited by the bytes
their removal saves (Inductor's score: the buffer's size times one write plus a read per reader),
largest first. A candidate stays when
  - its value contains a `uop.range_reduce` (a reduction is never recomputed),
  - recomputing it in every reader costs more than its memory traffic (op weight times extra
    readers, transcendental ops weighing 4, against a write and a read per reader weighing 4 each),
  - inlining would make a reading kernel read more than `max_buffers` buffers, or
  - inlining would grow a reading kernel past `max_ops` ops.
Otherwise every reader recomputes it: its value is cloned at the reader with the reader's indices
in place of its ranges (reads inside it inherit the reader's validity), and the buffer goes away.
Then each reduction broadcast back along its rows (`reason = "reduce-expand"`: a softmax's max and
sum, a layernorm's mean and variance), consumers first, moves into the one kernel that reads it, when
that kernel reads it at its own outer ranges (a prefix of its loops): pytc-lower-kernels then computes it once
per row, before the loops along the row (inside a register-blocked reduction too: attention's PV matmul),
and the row (at most `max_row` elements) is read again from cache instead of memory. A softmax becomes
one kernel. Removing a materialization can neither create a cycle nor raise peak memory: it only merges a
producer into its consumers. Each kept candidate records why in a `fuse` attribute; `explain=1`
(or DEBUG>=3) also prints every decision.
"""
import sys
from math import prod

from mlir import ir
from mlir.dialects import arith

from pytc.helpers import DEBUG
from pytc.passes import functions_with, range_size, register
from pytc.passes.clone import clone, dependencies, erase_dead

MEMORY_WEIGHT = 4  # one element written or read, in units of an arithmetic op
TRANSCENDENTAL = {"uop.exp2", "uop.log2", "uop.sin", "uop.sqrt", "uop.pow", "uop.recip"}


def cone(value: ir.Value, stop: set[ir.Value]) -> list[ir.Operation]:
  """The ops `value` depends on (its own included), up to values in `stop` and block arguments, each after its operands."""
  if isinstance(value, ir.BlockArgument) or value in stop: return []
  return dependencies(value.owner.operation, lambda op, v: not isinstance(v, ir.BlockArgument) and v not in stop)


def weight(ops: list[ir.Operation]) -> int:
  return sum(4 if op.name in TRANSCENDENTAL else 1 for op in ops if op.name.startswith("uop.") and op.name not in ("uop.range", "uop.const"))


def buffers_read(ops: list[ir.Operation]) -> set[ir.Value]:
  return {op.operands[0] for op in ops if op.name == "uop.index"}


def readers(bufferize: ir.Operation) -> list[ir.Operation]:
  return [use.owner.operation for use in bufferize.results[0].uses if use.owner.name == "uop.index"]


def consuming_kernels(reader: ir.Operation) -> list[ir.Operation]:
  """The materializations whose computation contains `reader`."""
  found, stack, seen = [], [reader], set()
  while stack:
    op = stack.pop()
    if op in seen: continue
    seen.add(op)
    for use in op.results[0].uses if len(op.results) else []:
      user = use.owner.operation
      if user.name == "uop.bufferize": found.append(user)
      elif user.name != "uop.sink": stack.append(user)
  return found


class Fuser:
  def __init__(self, graph: ir.Operation, max_buffers: int, max_ops: int, max_row: int, explain: bool):
    self.graph, self.max_buffers, self.max_ops, self.max_row, self.explain = graph, max_buffers, max_ops, max_row, explain
    self.materialized = {op.results[0] for op in self.block_ops() if op.name == "uop.bufferize"}

  def block_ops(self) -> list[ir.Operation]: return [op.operation for op in self.graph.regions[0].blocks[0].operations]

  def score(self, bufferize: ir.Operation) -> int:
    t = ir.RankedTensorType(bufferize.results[0].type)
    size = 1
    for n in t.shape: size *= n
    return size * max(1, t.element_type.width // 8) * (1 + len(readers(bufferize)))

  def why_keep(self, bufferize: ir.Operation) -> str | None:
    producer = cone(bufferize.operands[0], self.materialized)
    if any(op.name == "uop.range_reduce" for op in producer): return "recomputing would repeat a reduction"
    uses = len(readers(bufferize))
    if weight(producer) * (uses - 1) > MEMORY_WEIGHT * (uses + 1):
      return f"recompute (weight {weight(producer)} x {uses - 1} extra readers) costs more than memory (1 write + {uses} reads)"
    for reader in readers(bufferize):
      for kernel in consuming_kernels(reader):
        consumer = cone(kernel.operands[0], self.materialized)
        reads = (buffers_read(consumer) - {bufferize.results[0]}) | buffers_read(producer)
        if len(reads) > self.max_buffers: return f"a reading kernel would read {len(reads)} buffers (limit {self.max_buffers})"
        if len(consumer) + len(producer) > self.max_ops: return f"a reading kernel would exceed {self.max_ops} ops"
    return None

  def why_keep_row(self, bufferize: ir.Operation) -> str | None:
    """Why a reduction broadcast back over its rows (reduce-expand) cannot be computed inside its one consuming
    kernel, once per row: the consumer must read it at a prefix of its own loop ranges, so the lowering can
    compute it before the loops inside them."""
    source, *ranges = bufferize.operands
    producer = cone(source, self.materialized)
    if not any(op.name == "uop.range_reduce" for op in producer): return "no reduction"
    if any(prod(range_size(r) for r in op.operands[1:]) > self.max_row for op in producer if op.name == "uop.range_reduce"):
      return f"rows longer than {self.max_row} elements"
    kernels = {kernel for reader in readers(bufferize) for kernel in consuming_kernels(reader)}
    if len(kernels) != 1: return f"read by {len(kernels)} kernels"
    kernel = next(iter(kernels))
    loops = [r for r in kernel.operands[1:] if r.owner.name == "uop.range"]
    if any(len(reader.operands) > 1 + len(ranges) for reader in readers(bufferize)): return "read through padding"
    indices = [i for reader in readers(bufferize) for i in reader.operands[1:1 + len(ranges)]]
    if any(isinstance(i, ir.BlockArgument) or i.owner.name not in ("uop.range", "arith.constant") for i in indices):
      return "read at computed indices"
    read_at = {i for i in indices if i.owner.name == "uop.range"}
    prefix = set(loops[:len(read_at)])
    if not read_at: return "read at one element by every iteration"  # a whole-tensor reduction: computed once, apart
    if read_at != prefix: return "read at ranges that are not the consumer's outer ones"
    return None

  def run(self) -> None:
    def reason_of(op: ir.Operation) -> str: return ir.StringAttr(op.attributes["reason"]).value
    candidates = [op for op in self.block_ops() if op.name == "uop.bufferize" and reason_of(op) == "multi-use"]
    for bufferize in sorted(candidates, key=self.score, reverse=True): self.decide(bufferize, self.why_keep(bufferize))
    rows = [op for op in self.block_ops() if op.name == "uop.bufferize" and reason_of(op) == "reduce-expand"]
    for bufferize in reversed(rows): self.decide(bufferize, self.why_keep_row(bufferize))  # consumers first

  def decide(self, bufferize: ir.Operation, reason: str | None) -> None:
    if self.explain: print(f"pytc-fuse: {'keep' if reason else 'inline'} {bufferize.results[0].type} "
                           f"({len(readers(bufferize))} readers){': ' + reason if reason else ''}", file=sys.stderr)
    if reason: bufferize.attributes["fuse"] = ir.StringAttr.get(f"kept: {reason}")
    else: self.inline(bufferize)

  def inline(self, bufferize: ir.Operation) -> None:
    source, *ranges = bufferize.operands
    loops = [r for r in ranges if r.owner.name == "uop.range"]
    producer = [op for op in cone(source, self.materialized) if depends_on(op, set(loops))]
    for reader in readers(bufferize):
      indices = list(reader.operands[1:1 + len(ranges)])
      valid = reader.operands[1 + len(ranges)] if len(reader.operands) > 1 + len(ranges) else None
      mapping = {r: i for r, i in zip(ranges, indices) if r.owner.name == "uop.range"}
      with ir.InsertionPoint(reader), reader.location:
        for op in producer: self.clone_guarded(op, mapping, valid)
        value = mapping.get(source, source)
        if valid is not None:
          zero = ir.Operation.create("uop.const", results=[value.type], attributes={"value": zero_attr(value.type)}).result
          value = ir.Operation.create("uop.where", results=[value.type], operands=[valid, value, zero]).result
      reader.results[0].replace_all_uses_with(value)
      reader.erase()
    self.materialized.discard(bufferize.results[0])
    bufferize.erase()
    erase_dead(producer)  # so later decisions see only live readers

  @staticmethod
  def clone_guarded(op: ir.Operation, mapping: dict[ir.Value, ir.Value], valid: ir.Value | None) -> None:
    if op.name != "uop.index" or valid is None:
      clone(op, mapping)
      return
    segments = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    operands = [mapping.get(v, v) for v in op.operands]
    guard = arith.andi(valid, operands[-1]) if segments[2] else valid
    operands = operands[:1 + segments[1]] + [guard]
    new = ir.Operation.create("uop.index", results=[op.results[0].type], operands=operands,
                              attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, segments[1], 1])})
    mapping[op.results[0]] = new.result


def depends_on(op: ir.Operation, ranges: set[ir.Value]) -> bool:
  stack, seen = list(op.operands), set()
  while stack:
    v = stack.pop()
    if v in ranges: return True
    if isinstance(v, ir.BlockArgument) or v in seen: continue
    seen.add(v)
    stack.extend(v.owner.operands)
  return False


def zero_attr(t: ir.Type) -> ir.Attribute:
  return ir.FloatAttr.get(t, 0.0) if isinstance(t, ir.FloatType) else ir.IntegerAttr.get(t, 0)


@register("pytc-fuse", "keep or inline each multi-use materialization by a cost model (explain=1 prints why)")
def fuse(module: ir.Operation, max_buffers: str = "16", max_ops: str = "2000", max_row: str = "16384", explain: str = "0") -> None:
  for fn in functions_with(module, "uop.bufferize"):
    with fn.location: Fuser(fn.operation, int(max_buffers), int(max_ops), int(max_row), explain not in ("0", "false") or DEBUG >= 3).run()
