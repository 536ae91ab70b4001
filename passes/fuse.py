"""pytc-fuse: decide which materializations stay (kernel boundaries) and inline the rest.

`uop.bufferize` ops with `reason = "multi-use"` are candidates; outputs, `contiguous` and `copy`
materializations always stay. Candidates are visited by the bytes
their removal saves (Inductor's score: the buffer's size times one write plus a read per reader),
largest first. A candidate stays when
  - its value contains a `uop.range_reduce` (a reduction is never recomputed) and inlining would compute an element more
    than once (a matmul's result read by several elementwise ops at its own position, like relu's compare and select, is not),
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
from __future__ import annotations

import sys
from dataclasses import dataclass
from math import prod

from mlir import ir
from mlir.dialects import arith

from pytc.helpers import DEBUG
from pytc.passes import functions_with, range_size, register
from pytc.passes.clone import clone, dependencies, unused

MEMORY_WEIGHT = 4  # one element written or read, in units of an arithmetic op
TRANSCENDENTAL = {"uop.exp2", "uop.exp", "uop.log2", "uop.log", "uop.sin", "uop.cos", "uop.sqrt", "uop.pow", "uop.recip"}


def cone(value: ir.Value, stop: set[ir.Value]) -> list[ir.Operation]:
  """The ops `value` depends on (its own included), up to values in `stop` and block arguments, each after its operands."""
  if isinstance(value, ir.BlockArgument) or value in stop: return []
  return dependencies(value.owner.operation, lambda op, v: not isinstance(v, ir.BlockArgument) and v not in stop)


def weight(ops: list[ir.Operation]) -> int:
  return sum(4 if op.name in TRANSCENDENTAL else 1 for op in ops if op.name.startswith("uop.") and op.name not in ("uop.range", "uop.const"))


def readers(bufferize: ir.Operation) -> list[ir.Operation]:
  return [use.owner.operation for use in bufferize.results[0].uses if use.owner.name == "uop.index"]


def loop_dependent(ops: list[ir.Operation], loops: list[ir.Value]) -> list[ir.Operation]:
  """Those of `ops` (each after its operands) that depend on one of `loops`, through the others."""
  varying, found = set(loops), []
  for op in ops:
    if any(v in varying for v in op.operands):
      varying.update(op.results)
      found.append(op)
  return found


@dataclass
class Kernel:
  """What the cost model knows of a materialization's computation, kept current as values are inlined into it."""
  size: int  # ops
  weight: int
  reductions: int
  reads: set[ir.Value]  # the results of its uop.index ops

  @staticmethod
  def of(ops: list[ir.Operation]) -> Kernel:
    return Kernel(len(ops), weight(ops), sum(op.name == "uop.range_reduce" for op in ops), {op.results[0] for op in ops if op.name == "uop.index"})

  def buffers(self) -> set[ir.Value]: return {read.owner.operands[0] for read in self.reads}

  def __add__(self, other: Kernel) -> Kernel:
    return Kernel(self.size + other.size, self.weight + other.weight, self.reductions + other.reductions, self.reads | other.reads)

  def absorb(self, inlined: Kernel, reader: ir.Value) -> None:
    """`inlined`'s computation takes the place of `reader`, a read (one op of weight 1) in this one."""
    merged = self + inlined
    self.size, self.weight, self.reductions, self.reads = merged.size - 1, merged.weight - 1, merged.reductions, merged.reads - {reader}


class Fuser:
  """Decides the candidates one by one. Each kernel, named by its materialization's result (an op's hash changes with
  its attributes), keeps the cost model's counts, and each read the kernels holding it, all updated as values are
  inlined: no decision recounts a kernel. A value with one reader is inlined in place, its ops taking the reader's
  indices for its ranges, instead of cloned; the block is put back in order at the end. A long chain of inlined values
  costs linear time."""
  def __init__(self, graph: ir.Operation, max_buffers: int, max_ops: int, max_row: int, explain: bool):
    self.graph, self.max_buffers, self.max_ops, self.max_row, self.explain = graph, max_buffers, max_ops, max_row, explain
    bufferizes = [op for op in self.block_ops() if op.name == "uop.bufferize"]
    self.materialized = {op.results[0] for op in bufferizes}
    self.kernels: dict[ir.Value, Kernel] = {}
    self.kernels_of: dict[ir.Value, list[ir.Value]] = {}  # a read -> the kernels holding it
    for op in bufferizes:
      self.kernels[op.results[0]] = kernel = Kernel.of(cone(op.operands[0], self.materialized))
      for read in kernel.reads: self.kernels_of.setdefault(read, []).append(op.results[0])
    self.in_place = False

  def consuming_kernels(self, reader: ir.Operation) -> list[ir.Value]:
    """The materializations (their results) whose computation contains `reader`."""
    return self.kernels_of.get(reader.results[0], [])

  def block_ops(self) -> list[ir.Operation]: return [op.operation for op in self.graph.regions[0].blocks[0].operations]

  def score(self, bufferize: ir.Operation) -> int:
    t = ir.RankedTensorType(bufferize.results[0].type)
    size = 1
    for n in t.shape: size *= n
    return size * max(1, t.element_type.width // 8) * (1 + len(readers(bufferize)))

  def why_keep(self, bufferize: ir.Operation) -> str | None:
    producer = self.kernels[bufferize.results[0]]
    if producer.reductions and not self.read_once(bufferize): return "recomputing would repeat a reduction"
    uses = len(readers(bufferize))
    if producer.weight * (uses - 1) > MEMORY_WEIGHT * (uses + 1):
      return f"recompute (weight {producer.weight} x {uses - 1} extra readers) costs more than memory (1 write + {uses} reads)"
    for reader in readers(bufferize):
      for consumer in map(self.kernels.__getitem__, self.consuming_kernels(reader)):
        reads = consumer.buffers() - {bufferize.results[0]} | producer.buffers()
        if len(reads) > self.max_buffers: return f"a reading kernel would read {len(reads)} buffers (limit {self.max_buffers})"
        if consumer.size + producer.size > self.max_ops: return f"a reading kernel would exceed {self.max_ops} ops"
    return None

  def read_once(self, bufferize: ir.Operation) -> bool:
    """Whether inlining computes each element once: one reader (the uses at one position, merged), reading it at the
    loops of the one kernel holding it, one loop per dim (no broadcast), outside the reductions there."""
    source, *ranges = bufferize.operands
    if len(reading := readers(bufferize)) != 1 or len(reading[0].operands) != 1 + len(ranges): return False
    if len(kernels := self.consuming_kernels(reading[0])) != 1: return False
    loops = [r for r in kernels[0].owner.operands[1:] if r.owner.name == "uop.range"]
    indices = [i for r, i in zip(ranges, reading[0].operands[1:]) if r.owner.name == "uop.range"]
    if len(set(indices)) != len(indices) or set(indices) != set(loops): return False
    stack = [reading[0]]
    while stack:
      for use in stack.pop().results[0].uses:
        if use.owner.name == "uop.range_reduce": return False
        if use.owner.name != "uop.bufferize": stack.append(use.owner.operation)
    return True

  def why_keep_row(self, bufferize: ir.Operation) -> str | None:
    """Why a reduction broadcast back over its rows (reduce-expand) cannot be computed inside its one consuming
    kernel, once per row: the consumer must read it at a prefix of its own loop ranges, so the lowering can
    compute it before the loops inside them."""
    source, *ranges = bufferize.operands
    producer = cone(source, self.materialized)
    if not any(op.name == "uop.range_reduce" for op in producer): return "no reduction"
    if any(prod(range_size(r) for r in op.operands[1:]) > self.max_row for op in producer if op.name == "uop.range_reduce"):
      return f"rows longer than {self.max_row} elements"
    kernels = {kernel for reader in readers(bufferize) for kernel in self.consuming_kernels(reader)}
    if len(kernels) != 1: return f"read by {len(kernels)} kernels"
    kernel = next(iter(kernels)).owner
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
    if self.in_place: restore_order(self.graph.regions[0].blocks[0])

  def decide(self, bufferize: ir.Operation, reason: str | None) -> None:
    if self.explain: print(f"pytc-fuse: {'keep' if reason else 'inline'} {bufferize.results[0].type} "
                           f"({len(readers(bufferize))} readers){': ' + reason if reason else ''}", file=sys.stderr)
    if reason: bufferize.attributes["fuse"] = ir.StringAttr.get(f"kept: {reason}")
    else: self.inline(bufferize)

  def inline(self, bufferize: ir.Operation) -> None:
    name, inlined, reading = bufferize.results[0], self.kernels.pop(bufferize.results[0]), readers(bufferize)
    for read in inlined.reads: self.kernels_of[read].remove(name)
    self.materialized.discard(name)
    if len(reading) == 1: self.inline_in_place(bufferize, reading[0], inlined)
    else: self.inline_cloned(bufferize, reading, inlined)

  def inline_in_place(self, bufferize: ir.Operation, reader: ir.Operation, inlined: Kernel) -> None:
    source, *ranges = bufferize.operands
    valid = reader.operands[1 + len(ranges)] if len(reader.operands) > 1 + len(ranges) else None
    with ir.InsertionPoint(reader), reader.location:
      if valid is not None:  # its own reads (the ones no other kernel holds: all that vary with its ranges) take the reader's condition too
        for read in [read for read in inlined.reads if not self.kernels_of[read]]:
          guarded = self.clone_guarded(read.owner.operation, {}, valid).results[0]
          read.replace_all_uses_with(guarded)
          del self.kernels_of[read]
          self.kernels_of[guarded] = []
          inlined.reads = inlined.reads - {read} | {guarded}
          read.owner.operation.erase()
        source = self.masked(source, valid, inlined)
    for r, i in zip(ranges, reader.operands[1:1 + len(ranges)]):
      if r.owner.name == "uop.range": r.replace_all_uses_with(i)
    reader.results[0].replace_all_uses_with(source)
    self.absorbed(reader, inlined)
    reader.erase()
    bufferize.erase()
    self.in_place = True

  def inline_cloned(self, bufferize: ir.Operation, reading: list[ir.Operation], inlined: Kernel) -> None:
    source, *ranges = bufferize.operands
    producer = loop_dependent(cone(source, self.materialized), [r for r in ranges if r.owner.name == "uop.range"])
    own = Kernel.of(producer)  # what every copy recomputes; the rest every copy reads in place
    shared = Kernel(inlined.size - own.size, inlined.weight - own.weight, inlined.reductions - own.reductions, inlined.reads - own.reads)
    for reader in reading:
      indices = list(reader.operands[1:1 + len(ranges)])
      valid = reader.operands[1 + len(ranges)] if len(reader.operands) > 1 + len(ranges) else None
      mapping = {r: i for r, i in zip(ranges, indices) if r.owner.name == "uop.range"}
      with ir.InsertionPoint(reader), reader.location:
        copy = Kernel.of([self.clone_guarded(op, mapping, valid) for op in producer])
        value = mapping.get(source, source)
        if valid is not None: value = self.masked(value, valid, copy)
      reader.results[0].replace_all_uses_with(value)
      self.absorbed(reader, copy + shared)
      reader.erase()
    bufferize.erase()
    for op in reversed(producer):  # so later decisions see only live readers
      if unused(op):
        self.kernels_of.pop(op.results[0], None)
        op.erase()

  def masked(self, value: ir.Value, valid: ir.Value, kernel: Kernel) -> ir.Value:
    """`value` where `valid` holds, else 0 (two more ops in `kernel`)."""
    zero = ir.Operation.create("uop.const", results=[value.type], attributes={"value": zero_attr(value.type)}).result
    kernel.size, kernel.weight = kernel.size + 2, kernel.weight + 1
    return ir.Operation.create("uop.where", results=[value.type], operands=[valid, value, zero]).result

  def absorbed(self, reader: ir.Operation, inlined: Kernel) -> None:
    """The kernels holding `reader` now compute `inlined` in its place."""
    owners = self.kernels_of.pop(reader.results[0])
    for owner in owners: self.kernels[owner].absorb(inlined, reader.results[0])
    for read in inlined.reads:
      holders = self.kernels_of.setdefault(read, [])
      holders += [owner for owner in owners if owner not in holders]

  @staticmethod
  def clone_guarded(op: ir.Operation, mapping: dict[ir.Value, ir.Value], valid: ir.Value | None) -> ir.Operation:
    if op.name != "uop.index" or valid is None: return clone(op, mapping)
    segments = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    operands = [mapping.get(v, v) for v in op.operands]
    guard = arith.andi(valid, operands[-1]) if segments[2] else valid
    operands = operands[:1 + segments[1]] + [guard]
    new = ir.Operation.create("uop.index", results=[op.results[0].type], operands=operands,
                              attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, segments[1], 1])})
    mapping[op.results[0]] = new.result
    return new


def restore_order(block: ir.Block) -> None:
  """Move ops below the definitions of their operands, keeping their order otherwise: inlining in place leaves ops
  above the indices they now read at."""
  ops = [op.operation for op in block.operations]
  defined, waiting, order = set(block.arguments), {}, []
  for op in ops:
    pending = [op]
    while pending:
      ready = pending.pop()
      if (missing := next((v for v in ready.operands if v not in defined), None)) is not None:
        waiting.setdefault(missing, []).append(ready)
        continue
      order.append(ready)
      for result in ready.results:
        defined.add(result)
        pending += reversed(waiting.pop(result, []))
  for op in order[:-1]: op.move_before(order[-1])


def zero_attr(t: ir.Type) -> ir.Attribute:
  return ir.FloatAttr.get(t, 0.0) if isinstance(t, ir.FloatType) else ir.IntegerAttr.get(t, 0)


@register("pytc-fuse", "keep or inline each multi-use materialization by a cost model (explain=1 prints why)")
def fuse(module: ir.Operation, max_buffers: str = "16", max_ops: str = "2000", max_row: str = "16384", explain: str = "0") -> None:
  for fn in functions_with(module, "uop.bufferize"):
    with fn.location: Fuser(fn.operation, int(max_buffers), int(max_ops), int(max_row), explain not in ("0", "false") or DEBUG >= 3).run()
