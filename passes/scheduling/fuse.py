"""pytc-fuse: decide which materializations stay (kernel boundaries) and inline the rest.

`uop.bufferize` ops with `reason = "multi-use"` are candidates; outputs, `contiguous` and `copy`
materializations always stay. Candidates are visited by the bytes
their removal saves (Inductor's score: the buffer's size times one write plus a read per reader),
largest first. A candidate stays when
  - its value contains a `uop.range_reduce` (a reduction is never recomputed) and inlining would compute an element more
    than once (a matmul's result read by several elementwise ops at its own position, like relu's compare and select, is
    not),
  - a reading kernel's reduction would compute it again and again through windows: its ops besides reads times the extra
    times per element (a read in a reduction's body runs for every step of the ranges around it, a register block of
    `block_columns` columns sharing one) weigh more than a write and a read (a ResNet block's relu(out + shortcut), read
    by the next convolution for every block of output channels and in each of its 9 windows),
  - recomputing it in every reader costs more than its memory traffic (op weight times extra
    readers, transcendental ops weighing 4, against a write and a read per reader weighing 4 each),
  - inlining would make a reading kernel read more than `max_buffers` buffers, or
  - inlining would grow a reading kernel past `max_ops` ops.
Otherwise every reader recomputes it: its value is cloned at the reader with the reader's indices
in place of its ranges (reads inside it inherit the reader's validity), and the buffer goes away.
The candidates kept are visited again, in the same order, while some of them was inlined the time before: inlining one
can merge another's reading kernels into one, where its reads alike are one after CSE (a sigmoid's mask, inlined after
the value it compares, leaves that value read once).
Then each reduction broadcast back along its rows (`reason = "reduce-expand"`: a softmax's max and
sum, a layernorm's mean and variance), consumers first, moves into the one kernel that reads it, when
that kernel reads it at its own outer ranges (a prefix of its loops): pytc-lower-kernels then computes it once
per row, before the loops along the row (inside a register-blocked reduction too: attention's PV matmul),
and the row (at most `max_row` elements) is read again from cache instead of memory. A softmax becomes
one kernel. Removing a materialization can neither create a cycle nor raise peak memory: it only merges a
producer into its consumers. Each kept candidate records why in a `fuse` attribute; `explain=1`
(or DEBUG>=3) also prints every decision.

Then, in a kernel with a reduction, a value computed in the reduction's body that a loop around it does not change (a
GELU or a layernorm before a projection) is materialized when recomputing it for every block of `block_columns` columns
costs more than a write and a read (`reason = "split"`, `fuse = "split: recomputed N extra times in a reduction"`),
unless storing it would take more elements than the buffers it reads (a convolution's windows). `block_columns` is the
width of the target's register block, the outputs along a row that one block of vector code computes together (its
lanes times its vectors side by side: default 32, 16 lanes x 2 vectors; a GPU's matmul tile; from 1 to 1024). The
compilers give it from their target (pytc/compilers/__init__.py, `scheduling`).

Last, every kernel is bounded: one past `max_ops` op weight or reading more than `max_buffers` buffers (a long chain,
a wide sum, a concatenation of many parts: LLVM's compile time grows faster than linearly with both) is cut into
smaller ones, in one walk over its ops (see Cutter): values computed before a cut and used after it are materialized
(`reason = "split"`, the `fuse` attribute saying which limit) and read back after it.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from math import prod
from typing import Annotated

from mlir import ir
from mlir.dialects import arith

from pytc.dialects import uop
from pytc.helpers import DEBUG
from pytc.passes import Limit, Within, functions_with, range_size, register
from pytc.passes.common import walk
from pytc.passes.common.analysis import OP_WEIGHT, UOP_PREFIX, weight
from pytc.passes.common.attributes import FUSE, REASON, Reason
from pytc.passes.common.clone import clone, unused
from pytc.passes.common.uops import defined_by, is_reduce_range, isa, new_range, range_id
from pytc.passes.common.uops import read as read_at

MEMORY_WEIGHT = 4  # one element written or read, in units of an arithmetic op


def cone(value: ir.Value, stop: set[ir.Value]) -> list[ir.Operation]:
  """The ops `value` depends on (its own included), up to values in `stop` and block arguments, each after its
  operands."""
  return walk.cone(value, stop.__contains__)


def readers(bufferize: ir.Operation) -> list[ir.Operation]:
  return [use.owner.operation for use in bufferize.results[0].uses if isa(use.owner, uop.IndexOp)]


@dataclass
class Kernel:
  """What the cost model knows of a materialization's computation, kept current as values are inlined into it."""

  size: int  # ops
  weight: int
  reductions: int
  reads: set[ir.Value]  # the results of its uop.index ops

  @staticmethod
  def of(ops: list[ir.Operation]) -> Kernel:
    return Kernel(
      len(ops),
      weight(ops),
      sum(isa(op, uop.RangeReduceOp) for op in ops),
      {op.results[0] for op in ops if isa(op, uop.IndexOp)},
    )

  def buffers(self) -> set[ir.Value]:
    return {read.owner.operands[0] for read in self.reads}

  def __add__(self, other: Kernel) -> Kernel:
    return Kernel(
      self.size + other.size, self.weight + other.weight, self.reductions + other.reductions, self.reads | other.reads
    )

  def absorb(self, inlined: Kernel, reader: ir.Value) -> None:
    """`inlined`'s computation takes the place of `reader`, a read (one op of weight 1) in this one."""
    merged = self + inlined
    self.size, self.weight, self.reductions, self.reads = (
      merged.size - 1,
      merged.weight - 1,
      merged.reductions,
      merged.reads - {reader},
    )


class Fuser:
  """Decides the candidates one by one. Each kernel, named by its materialization's result (an op's hash changes with
  its attributes), keeps the cost model's counts, and each read the kernels holding it, all updated as values are
  inlined: no decision recounts a kernel. A value with one reader is inlined in place, its ops taking the reader's
  indices for its ranges, instead of cloned; the block is put back in order at the end. A long chain of inlined values
  costs linear time."""

  def __init__(
    self, graph: ir.Operation, max_buffers: int, max_ops: int, max_row: int, block_columns: int, explain: bool
  ):
    self.graph, self.max_buffers, self.max_ops, self.max_row, self.block_columns, self.explain = (
      graph,
      max_buffers,
      max_ops,
      max_row,
      block_columns,
      explain,
    )
    bufferizes = [op for op in self.block_ops() if isa(op, uop.BufferizeOp)]
    self.materialized = {op.results[0] for op in bufferizes}
    self.kernels: dict[ir.Value, Kernel] = {}
    self.kernels_of: dict[ir.Value, list[ir.Value]] = {}  # a read -> the kernels holding it
    for op in bufferizes:
      self.kernels[op.results[0]] = kernel = Kernel.of(cone(op.operands[0], self.materialized))
      for read in kernel.reads:
        self.kernels_of.setdefault(read, []).append(op.results[0])
    self.in_place = False

  def consuming_kernels(self, reader: ir.Operation) -> list[ir.Value]:
    """The materializations (their results) whose computation contains `reader`."""
    return self.kernels_of.get(reader.results[0], [])

  def block_ops(self) -> list[ir.Operation]:
    return [op.operation for op in self.graph.regions[0].blocks[0].operations]

  def score(self, bufferize: ir.Operation) -> int:
    t = ir.RankedTensorType(bufferize.results[0].type)
    size = 1
    for n in t.shape:
      size *= n
    return size * max(1, t.element_type.width // 8) * (1 + len(readers(bufferize)))

  def why_keep(self, bufferize: ir.Operation) -> str | None:
    producer = self.kernels[bufferize.results[0]]
    if any(not isa(use.owner, uop.IndexOp) for use in bufferize.results[0].uses):
      return "read as a whole (by the sink or a launch)"
    if producer.reductions and not self.read_once(bufferize):
      return "recomputing would repeat a reduction"
    if (computed := producer.weight - len(producer.reads)) and computed * (
      extra := self.repeats_in_reductions(bufferize)
    ) > 2 * MEMORY_WEIGHT:
      return f"recomputed {extra} extra times in a reading kernel's reduction (weight {computed})"
    uses = self.distinct_reads(bufferize)
    if producer.weight * (uses - 1) > MEMORY_WEIGHT * (uses + 1):
      return (
        f"recompute (weight {producer.weight} x {uses - 1} extra readers) costs more than memory "
        f"(1 write + {uses} reads)"
      )
    for reader in readers(bufferize):
      for consumer in map(self.kernels.__getitem__, self.consuming_kernels(reader)):
        reads = consumer.buffers() - {bufferize.results[0]} | producer.buffers()
        if len(reads) > self.max_buffers:
          return f"a reading kernel would read {len(reads)} buffers (limit {self.max_buffers})"
        if consumer.size + producer.size > self.max_ops:
          return f"a reading kernel would exceed {self.max_ops} ops"
    return None

  def repeats_in_reductions(self, bufferize: ir.Operation) -> int:
    """How many extra times inlining would compute each element inside the reading kernels' reductions, through windows
    (the most over the reads that vary with more ranges than the buffer has elements): such a read runs once per step of
    every range around it (the kernel's loops, the reductions' ranges), the `block_columns` columns of a register block
    sharing one where it does not vary with them. A convolution's input runs again for every block of output channels
    and in every window that covers it, and the hoist after cannot store it once (its windows repeat the input). A read
    at one element per step (a projection's input) is left to the hoist."""
    elements, most = prod(ir.RankedTensorType(bufferize.results[0].type).shape), 0
    for reader in readers(bufferize):
      reductions = [
        op
        for op in walk.users([reader.results[0]], lambda user: not isa(user, uop.BufferizeOp))
        if isa(op, uop.RangeReduceOp)
      ]
      if not reductions:
        continue
      around = {
        r for kernel in self.consuming_kernels(reader) for r in kernel.owner.operands[1:] if defined_by(r, uop.RangeOp)
      }
      around |= {r for op in reductions for r in op.operands[1:]}
      varying = {
        op.results[0]
        for index in reader.operands[1:]
        for op in walk.cone(index, lambda _: False)
        if isa(op, uop.RangeOp)
      }
      if prod(range_size(r) for r in varying) <= elements:
        continue  # no windows: the hoist below stores it once if it pays
      shared = min(self.block_columns, prod(range_size(r) for r in around - varying))
      most = max(most, prod(range_size(r) for r in around) // shared // max(1, elements) - 1)
    return most

  def distinct_reads(self, bufferize: ir.Operation) -> int:
    """How many reads of the buffer differ: in which kernels and at which indices (with which validity). Reads alike (a
    mask that a chain of selects reads at each element's own position) are one after CSE, recomputed or loaded."""
    return len({(tuple(self.consuming_kernels(reader)), tuple(reader.operands[1:])) for reader in readers(bufferize)})

  def read_once(self, bufferize: ir.Operation) -> bool:
    """Whether inlining computes each element once: one reader (the uses at one position, merged), reading it at the
    loops of the one kernel holding it, one loop per dim (no broadcast), outside the reductions there."""
    source, *ranges = bufferize.operands
    if len(reading := readers(bufferize)) != 1 or len(reading[0].operands) != 1 + len(ranges):
      return False
    if len(kernels := self.consuming_kernels(reading[0])) != 1:
      return False
    loops = [r for r in kernels[0].owner.operands[1:] if defined_by(r, uop.RangeOp)]
    indices = [i for r, i in zip(ranges, reading[0].operands[1:]) if defined_by(r, uop.RangeOp)]
    if len(set(indices)) != len(indices) or set(indices) != set(loops):
      return False
    return not any(
      isa(user, uop.RangeReduceOp)
      for user in walk.users([reading[0].results[0]], lambda user: not isa(user, uop.BufferizeOp))
    )

  def why_keep_row(self, bufferize: ir.Operation) -> str | None:
    """Why a reduction broadcast back over its rows (reduce-expand) cannot be computed inside its one consuming
    kernel, once per row: the consumer must read it at a prefix of its own loop ranges, so the lowering can
    compute it before the loops inside them."""
    source, *ranges = bufferize.operands
    producer = cone(source, self.materialized)
    if not any(isa(op, uop.RangeReduceOp) for op in producer):
      return "no reduction"
    if any(
      prod(range_size(r) for r in op.operands[1:]) > self.max_row for op in producer if isa(op, uop.RangeReduceOp)
    ):
      return f"rows longer than {self.max_row} elements"
    kernels = {kernel for reader in readers(bufferize) for kernel in self.consuming_kernels(reader)}
    if len(kernels) != 1:
      return f"read by {len(kernels)} kernels"
    kernel = next(iter(kernels)).owner
    loops = [r for r in kernel.operands[1:] if defined_by(r, uop.RangeOp)]
    if any(len(reader.operands) > 1 + len(ranges) for reader in readers(bufferize)):
      return "read through padding"
    indices = [i for reader in readers(bufferize) for i in reader.operands[1 : 1 + len(ranges)]]
    if any(not defined_by(i, uop.RangeOp, arith.ConstantOp) for i in indices):
      return "read at computed indices"
    read_at = {i for i in indices if defined_by(i, uop.RangeOp)}
    prefix = set(loops[: len(read_at)])
    if not read_at:
      return "read at one element by every iteration"  # a whole-tensor reduction: computed once, apart
    if read_at != prefix:
      return "read at ranges that are not the consumer's outer ones"
    return None

  def run(self) -> None:
    def with_reason(reason: Reason) -> list[ir.Operation]:
      return [op for op in self.block_ops() if isa(op, uop.BufferizeOp) and REASON.get(op) is reason]

    self.settle(sorted(with_reason(Reason.MULTI_USE), key=self.score, reverse=True))
    rows = with_reason(Reason.REDUCE_EXPAND)
    for bufferize in reversed(rows):
      self.decide(bufferize, self.why_keep_row(bufferize))  # consumers first
    if self.in_place:
      restore_order(self.graph.regions[0].blocks[0])
    bound_kernels(self.graph, self.max_ops, self.max_buffers, self.block_columns, self.explain)

  def settle(self, candidates: list[ir.Operation]) -> None:
    """Inline every candidate that may be, in turn; then again over the ones kept, as long as inlining others changed
    what they cost (a mask inlined after the value it compares merges that value's two reading kernels into one)."""
    while True:
      kept = []
      for bufferize in candidates:
        if self.why_keep(bufferize) is None:
          self.decide(bufferize, None)
        else:
          kept.append(bufferize)
      if len(kept) == len(candidates):
        break
      candidates = kept
    for bufferize in candidates:
      self.decide(bufferize, self.why_keep(bufferize))

  def decide(self, bufferize: ir.Operation, reason: str | None) -> None:
    if self.explain:
      print(
        f"pytc-fuse: {'keep' if reason else 'inline'} {bufferize.results[0].type} "
        f"({len(readers(bufferize))} readers){': ' + reason if reason else ''}",
        file=sys.stderr,
      )
    if reason:
      FUSE.set(bufferize, f"kept: {reason}")
    else:
      self.inline(bufferize)

  def inline(self, bufferize: ir.Operation) -> None:
    name, inlined, reading = bufferize.results[0], self.kernels.pop(bufferize.results[0]), readers(bufferize)
    for read in inlined.reads:
      self.kernels_of[read].remove(name)
    self.materialized.discard(name)
    if len(reading) == 1:
      self.inline_in_place(bufferize, reading[0], inlined)
    else:
      self.inline_cloned(bufferize, reading, inlined)

  def inline_in_place(self, bufferize: ir.Operation, reader: ir.Operation, inlined: Kernel) -> None:
    source, *ranges = bufferize.operands
    valid = reader.operands[1 + len(ranges)] if len(reader.operands) > 1 + len(ranges) else None
    with ir.InsertionPoint(reader), reader.location:
      # its own reads (the ones no other kernel holds: all that vary with its ranges) take the reader's condition too
      if valid is not None:
        for read in [read for read in inlined.reads if not self.kernels_of[read]]:
          guarded = self.clone_guarded(read.owner.operation, {}, valid).results[0]
          read.replace_all_uses_with(guarded)
          del self.kernels_of[read]
          self.kernels_of[guarded] = []
          inlined.reads = inlined.reads - {read} | {guarded}
          if read == source:
            source = guarded  # a materialized read: its guarded copy is the value now
          read.owner.operation.erase()
        source = self.masked(source, valid, inlined)
    for r, i in zip(ranges, reader.operands[1 : 1 + len(ranges)]):
      if defined_by(r, uop.RangeOp):
        r.replace_all_uses_with(i)
    reader.results[0].replace_all_uses_with(source)
    self.absorbed(reader, inlined)
    reader.erase()
    bufferize.erase()
    self.in_place = True

  def inline_cloned(self, bufferize: ir.Operation, reading: list[ir.Operation], inlined: Kernel) -> None:
    source, *ranges = bufferize.operands
    producer = walk.dependent(cone(source, self.materialized), [r for r in ranges if defined_by(r, uop.RangeOp)])
    own = Kernel.of(producer)  # what every copy recomputes; the rest every copy reads in place
    shared = Kernel(
      inlined.size - own.size,
      inlined.weight - own.weight,
      inlined.reductions - own.reductions,
      inlined.reads - own.reads,
    )
    for reader in reading:
      indices = list(reader.operands[1 : 1 + len(ranges)])
      valid = reader.operands[1 + len(ranges)] if len(reader.operands) > 1 + len(ranges) else None
      mapping = {r: i for r, i in zip(ranges, indices) if defined_by(r, uop.RangeOp)}
      with ir.InsertionPoint(reader), reader.location:
        copy = Kernel.of([self.clone_guarded(op, mapping, valid) for op in producer])
        value = mapping.get(source, source)
        if valid is not None:
          value = self.masked(value, valid, copy)
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
    zero = uop.ConstOp(value.type, zero_attr(value.type)).result
    kernel.size, kernel.weight = kernel.size + 2, kernel.weight + 1
    return uop.WhereOp(valid, value, zero).result

  def absorbed(self, reader: ir.Operation, inlined: Kernel) -> None:
    """The kernels holding `reader` now compute `inlined` in its place."""
    owners = self.kernels_of.pop(reader.results[0])
    for owner in owners:
      self.kernels[owner].absorb(inlined, reader.results[0])
    for read in inlined.reads:
      holders = self.kernels_of.setdefault(read, [])
      holders += [owner for owner in owners if owner not in holders]

  @staticmethod
  def clone_guarded(op: ir.Operation, mapping: dict[ir.Value, ir.Value], valid: ir.Value | None) -> ir.Operation:
    if not isa(op, uop.IndexOp) or valid is None:
      return clone(op, mapping)
    index = op.opview
    guard = valid if index.valid is None else arith.andi(valid, mapping.get(index.valid, index.valid))
    new = uop.IndexOp(mapping.get(index.src, index.src), [mapping.get(v, v) for v in index.indices], valid=guard)
    mapping[op.results[0]] = new.result
    return new.operation


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
  for op in order[:-1]:
    op.move_before(order[-1])


# what a kernel's value is: index arithmetic, a constant or a range; a buffer read at such indices; else
FREE, READ, COMPUTED = range(3)
# a value inside a reduction's body is materialized over its reduce ranges too: at most this many elements
MAX_SPLIT_ELEMENTS = 1 << 22


def bound_kernels(graph: ir.Operation, max_ops: int, max_buffers: int, block_columns: int, explain: bool) -> None:
  """In every kernel with a reduction, materialize the values computed in its body that a loop around it does not
  change, where recomputing them for each block of `block_columns` columns of that loop costs more than a write and a
  read (Cutter.hoist: a GELU before a projection is then computed once per element, not once per column block). Then
  cut every kernel past `max_ops` op weight or reading more than `max_buffers` buffers (0: no limit) into smaller ones.
  Almost every kernel is within both: it is only counted."""
  block = graph.regions[0].blocks[0]
  roots = [op.operation for op in block.operations if isinstance(op, uop.BufferizeOp)]
  materialized = {op.results[0] for op in roots}
  # new ranges'
  ids = itertools.count(1 + max((range_id(op) for op in block.operations if isinstance(op, uop.RangeOp)), default=-1))
  for root in roots:
    if any(defined_by(r, uop.RangeOp) and range_size(r) == 0 for r in root.operands[1:]):
      continue  # computes nothing
    ops = cone(root.operands[0], materialized)
    if (
      any(isa(op, uop.RangeReduceOp) for op in ops)
      and Cutter(root, ops, materialized, sys.maxsize, sys.maxsize, block_columns, explain, ids).hoist()
    ):
      ops = cone(root.operands[0], materialized)
    if (
      max_ops
      and weight(ops) > max_ops
      or max_buffers
      and len({op.operands[0] for op in ops if isa(op, uop.IndexOp)}) > max_buffers
    ):
      Cutter(
        root,
        deepest_first(root.operands[0], ops),
        materialized,
        max_ops or sys.maxsize,
        max_buffers or sys.maxsize,
        block_columns,
        explain,
        ids,
      ).run()


def deepest_first(value: ir.Value, ops: list[ir.Operation]) -> list[ir.Operation]:
  """`ops` (the computation of `value`, each after its operands) in an order where of an op's operands the one with the
  longest chain of ops behind it comes first, as in register allocation for expression trees: few values are live at
  once. A nest of selects (a concatenation) then computes each part just before it joins the others, not all first."""
  depth: dict[ir.Value, int] = {}
  for op in ops:
    depth[op.results[0]] = 1 + max((depth.get(v, 0) for v in op.operands), default=0)
  if value not in depth:
    return []
  return walk.dependencies(value.owner.operation, lambda op, v: v in depth, first=lambda v: depth[v])


class Cutter:
  """Cuts one kernel in a single walk over its ops (each after its operands), like a linear-scan register allocator: a
  segment takes ops while its op weight and the buffers it reads stay within the limits. Before an op that would pass
  one, the values computed before it and used from it on (live across the cut) are each materialized, over the ranges
  they depend on (in the order of the kernel's own), and the ops from there on read them back: each is a kernel of its
  own, computing the part of the segment it depends on, reading at most the segment's buffers. Past three quarters of
  `max_ops` a segment also ends where at most one value is live, so that few kernels recompute a shared part. Reads
  (at index arithmetic) are read again after a cut rather than copied, and index arithmetic is recomputed. A value
  inside a reduction's body is materialized over its open reduce ranges too, by a copy of its computation over new
  loop ranges in their place (at most MAX_SPLIT_ELEMENTS elements: a matmul's body stays whole); when a live value
  cannot be materialized, the cut waits for an op where none is live. Each op is visited once; a cut clones at most
  the values inside a reduction's body that it materializes."""

  def __init__(
    self,
    root: ir.Operation,
    ops: list[ir.Operation],
    materialized: set[ir.Value],
    max_ops: int,
    max_buffers: int,
    block_columns: int,
    explain: bool,
    ids: Iterator[int],
  ):
    self.root, self.ops, self.materialized, self.max_ops, self.max_buffers, self.block_columns, self.explain = (
      root,
      ops,
      materialized,
      max_ops,
      max_buffers,
      block_columns,
      explain,
    )
    self.ids = ids  # the ids of new ranges: past every range's in the graph
    self.loops = [r for r in root.operands[1:] if defined_by(r, uop.RangeOp)]
    self.position = {op.results[0]: p for p, op in enumerate(ops)}  # by result: an op's hash changes as its operands do
    self.last_use: dict[ir.Value, int] = {v: p for p, op in enumerate(ops) for v in op.operands}
    self.last_use[root.operands[0]] = len(ops)
    self.kind: dict[ir.Value, int] = {}
    self.ranges: dict[ir.Value, frozenset[ir.Value]] = {}  # the loop ranges and open reduce ranges a value depends on
    self.live: dict[ir.Value, None] = {}  # computed values defined before the current op and used from it on, in order
    self.blocking: set[ir.Value] = set()  # those of them that cannot be materialized
    self.segment, self.weight, self.buffers = 0, 0, set()
    self.counted: dict[ir.Value, int] = {}  # a read -> the last segment that counts it
    self.waited: str | None = None  # why a cut was due where a live value could not be materialized

  def run(self) -> None:
    for p, op in enumerate(self.ops):
      name, operands, result = op.name, list(op.operands), op.results[0]
      self.describe(name, operands, result)
      added, buffers = self.cost(name, operands, result)
      if self.weight and (why := self.why_cut(added, buffers, early=not self.blocking and len(self.live) <= 1)):
        if self.blocking:
          self.waited = self.waited or why
        else:
          self.cut(p, why)
          operands = list(op.operands)
          self.describe(name, operands, result)
          added, buffers = self.cost(name, operands, result)
      self.weight += added
      if buffers:
        self.buffers |= buffers
      for v in operands:
        if self.kind.get(v) == READ:
          self.counted[v] = self.segment
        if v in self.live and self.last_use[v] == p:
          del self.live[v]
          self.blocking.discard(v)
      if self.kind[result] == COMPUTED and self.last_use.get(result, -1) > p:
        self.live[result] = None
        if not self.materializable(result):
          self.blocking.add(result)
    if self.explain and self.waited:
      print(
        f"pytc-fuse: left a part of {self.root.results[0].type} whole ({self.waited}): a value inside a reduction's "
        "body "
        f"(over {MAX_SPLIT_ELEMENTS} elements) or of index type cannot be materialized",
        file=sys.stderr,
      )

  def hoist(self) -> bool:
    """Materialize each value inside a reduction's body where it meets a loop range it does not depend on, when its op
    weight (reads included) times the extra column blocks of `block_columns` (a register block's width) that repeat it
    exceeds a write and a read. Reductions in its computation are computed once per row of the new kernel (they may
    vary only with its outer loops) and are not counted; one varying with the reduction's own ranges keeps it inline.
    Whether it materialized any."""
    users: dict[ir.Value, list[ir.Value]] = {}
    hoisted = False
    for op in self.ops:
      self.describe(op.name, list(op.operands), op.results[0])
      for v in op.operands:
        users.setdefault(v, []).append(op.results[0])
    for op in self.ops:
      v = op.results[0]
      if self.kind[v] != COMPUTED or not self.open(v) or not self.materializable(v):
        continue
      missing = [
        r for r in self.loops if r not in self.ranges[v] and any(r in self.ranges[u] for u in users.get(v, []))
      ]
      if not missing or (cost := self.hoisted_cost(v)) is None:
        continue
      repeats = -(-prod(range_size(r) for r in missing) // self.block_columns) - 1
      if cost * repeats > 2 * MEMORY_WEIGHT:
        if self.explain:
          print(
            f"pytc-fuse: hoist {v.type} (weight {cost}) out of {self.root.results[0].type}'s reduction: "
            f"repeated {repeats} extra times",
            file=sys.stderr,
          )
        self.materialize(v, self.position[v] + 1, f"recomputed {repeats} extra times in a reduction")
        hoisted = True
    return hoisted

  def hoisted_cost(self, v: ir.Value) -> int | None:
    """The op weight of `v`'s computation and the reads it uses, up to the row reductions a kernel over `v`'s ranges
    computes before its loops; None if a reduction in it varies otherwise, or if storing it would take more elements
    than the buffers it reads (a convolution's windows repeat their input: read back for every output channel, the copy
    would cost more memory traffic than the recomputation)."""
    outer = [r for r in self.loops if r in self.ranges[v]]
    row = lambda u: isa(u.owner, uop.RangeReduceOp) and self.ranges[u] == set(outer[: len(self.ranges[u])])
    computation = walk.cone(v, lambda u: self.kind.get(u) != COMPUTED or row(u))
    if any(isa(c, uop.RangeReduceOp) for c in computation):
      return None
    reads = {u for c in computation for u in c.operands if self.kind.get(u) == READ}
    sources = {read.owner.operands[0] for read in reads}
    if prod(range_size(r) for r in self.ranges[v]) > sum(prod(ir.ShapedType(b.type).shape) for b in sources):
      return None  # windows
    return weight(computation) + len(reads)

  def describe(self, name: str, operands: list[ir.Value], result: ir.Value) -> None:
    """Record what an op's result is and the ranges it depends on (ops in a kernel have one result)."""
    ranges = frozenset().union(*(self.ranges.get(v, frozenset()) for v in operands))
    index = name == uop.IndexOp.OPERATION_NAME
    free = all(self.kind.get(v, FREE) == FREE for v in operands[1 if index else 0 :])
    if name == uop.RangeOp.OPERATION_NAME:
      ranges, kind = frozenset([result]), FREE
    elif name == uop.RangeReduceOp.OPERATION_NAME:
      ranges, kind = ranges - frozenset(operands[1:]), COMPUTED
    elif index:
      kind = READ if free else COMPUTED
    elif name == uop.ConstOp.OPERATION_NAME or not name.startswith(UOP_PREFIX):
      kind = FREE if free else COMPUTED
    else:
      kind = COMPUTED
    self.kind[result], self.ranges[result] = kind, ranges

  def cost(self, name: str, operands: list[ir.Value], result: ir.Value) -> tuple[int, set[ir.Value]]:
    """The op weight and the buffers an op adds to the segment: a read counts where it is used, once per segment."""
    reads = {v for v in operands if self.kind.get(v) == READ and self.counted.get(v) != self.segment}
    index = name == uop.IndexOp.OPERATION_NAME
    if index and self.kind[result] == READ:
      added, buffers = 0, set()
    else:
      added, buffers = OP_WEIGHT.get(name, 1) if name.startswith(UOP_PREFIX) else 0, {operands[0]} if index else set()
    if not reads and not buffers:
      return added, buffers
    return added + len(reads), ({read.owner.operands[0] for read in reads} | buffers) - self.buffers

  def why_cut(self, added: int, buffers: set[ir.Value], early: bool) -> str | None:
    weight = self.weight + added
    if weight > self.max_ops or early and weight > self.max_ops * 3 // 4:
      return f"a kernel would exceed {self.max_ops} ops"
    if len(self.buffers) + len(buffers) > self.max_buffers:
      return f"a kernel would read more than {self.max_buffers} buffers"
    return None

  def materializable(self, v: ir.Value) -> bool:
    if not isinstance(v.type, (ir.FloatType, ir.IntegerType)) or not self.ranges[v] - frozenset(
      self.loops
    ) <= self.open(v):
      return False
    return prod(range_size(r) for r in self.ranges[v]) <= MAX_SPLIT_ELEMENTS or not self.open(v)

  def open(self, v: ir.Value) -> set[ir.Value]:
    return {r for r in self.ranges[v] if is_reduce_range(r)}

  def cut(self, p: int, why: str) -> None:
    if self.explain:
      print(
        f"pytc-fuse: split {self.root.results[0].type} before op {p} of {len(self.ops)} ({why}: weight {self.weight}, "
        f"{len(self.buffers)} buffers): materialize {len(self.live)} values",
        file=sys.stderr,
      )
    for v in self.live:
      self.materialize(v, p, why)
    self.live.clear()
    self.segment, self.weight, self.buffers = self.segment + 1, 0, set()

  def materialize(self, v: ir.Value, p: int, why: str) -> None:
    """Store `v` in a new buffer, over its loop ranges and open reduce ranges, and read it there in the ops from `p`
    on."""
    owner, reduces = v.owner.operation, sorted(self.open(v), key=range_id)
    ranges = [r for r in self.loops if r in self.ranges[v]] + reduces
    with ir.InsertionPoint.after(owner), owner.location:
      value, mapping = self.over_new_ranges(v, reduces) if reduces else (v, {})
      buffer = uop.BufferizeOp(
        ir.RankedTensorType.get([range_size(r) for r in ranges], v.type),
        value,
        [mapping.get(r, r) for r in ranges],
        REASON.spelled(Reason.SPLIT),
      )
      FUSE.set(buffer, f"split: {why}")
      reread = read_at(buffer.result, ranges)
    self.materialized.add(buffer.result)
    for use in list(v.uses):
      if use.owner.results and self.position.get(use.owner.results[0], -1) >= p:
        use.owner.operands[use.operand_number] = reread
    self.kind[reread], self.ranges[reread] = READ, self.ranges[v]

  def over_new_ranges(self, v: ir.Value, reduces: list[ir.Value]) -> tuple[ir.Value, dict[ir.Value, ir.Value]]:
    """A copy of `v`'s computation with new loop ranges in place of its open `reduces`; the ranges' mapping."""
    mapping = {r: new_range(uop.RangeKind.loop, range_size(r), next(self.ids)) for r in reduces}
    ranges, varying = dict(mapping), frozenset(reduces)
    for op in walk.dependencies(v.owner.operation, lambda op, u: bool(self.ranges.get(u, frozenset()) & varying)):
      if not isa(op, uop.RangeOp):
        clone(op, mapping)
    return mapping[v], ranges


def zero_attr(t: ir.Type) -> ir.Attribute:
  return ir.FloatAttr.get(t, 0.0) if isinstance(t, ir.FloatType) else ir.IntegerAttr.get(t, 0)


@register(
  "pytc-fuse",
  "keep or inline each multi-use materialization by a cost model (explain=1 prints why)",
  takes=("rangeified",),
)
def fuse(
  module: ir.Operation,
  max_buffers: Limit = 16,
  max_ops: Limit = 2000,
  max_row: Limit = 16384,
  block_columns: Annotated[int, Within(1, 1024)] = 32,
  explain: bool = False,
) -> None:
  for fn in functions_with(module, uop.BufferizeOp.OPERATION_NAME):
    with fn.location:
      Fuser(fn.operation, max_buffers, max_ops, max_row, block_columns, explain or DEBUG >= 3).run()
