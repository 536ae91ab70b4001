"""pytc-rangeify: tensor-level uops become index-level scalar code over ranges.

Every value that must live in memory is materialized with `uop.bufferize` over fresh loop
ranges, one per dim (the constant 0 for a size-1 dim; an empty dim gets an empty range): the graph's outputs
(`reason="output"`), `contiguous` results and copies within a device, a reduce whose result is consumed through an
expand ("reduce-expand": otherwise it would be recomputed for every expanded element; materialized after the
elementwise ops that only continue it, its epilogue), and every other
value used more than once ("multi-use": a candidate that pytc-fuse keeps or inlines) but a one-hot mask.

A copy between devices (see devices.py) stays a `uop.copy`, of its source materialized on
the source's device (`uop.device` on that bufferize; an argument is copied as it is), and is
read like a materialization. Everything else is computed where it is read. Movement ops disappear into index arithmetic:
permute reorders the indices, reshape flattens and splits them (div/mod), expand reads index 0,
shrink adds its offset, flip reads `n-1-i`, and pad adds a validity condition: reads inside
padding are skipped (`uop.index ... if %valid`) and the value there is 0. A padded input that a convolution with few
input channels reads through sliding windows is materialized with its zeros instead ("padded"), so the windows read it
without conditions (see pads_in_memory). A reduce not
materialized becomes a `uop.range_reduce` over new reduce ranges. Index arithmetic is simplified
symbolically with the ranges' bounds (see symbolic.py), so conditions that always hold vanish.
"""

from __future__ import annotations

import itertools
from collections.abc import Generator
from math import prod

from mlir import ir
from mlir.dialects import arith, func

from pytc.dialects import uop
from pytc.passes import PassError, functions_with, register
from pytc.passes.codegen.scalar import element_type
from pytc.passes.common import walk
from pytc.passes.common.analysis import UOP_PREFIX
from pytc.passes.common.attributes import BUFFERIZE_DEVICE, REASON, Reason
from pytc.passes.common.clone import clone, erase_dead
from pytc.passes.common.devices import tensor_devices
from pytc.passes.common.symbolic import Emitter, Lin, Range
from pytc.passes.common.uops import defined_by, isa, new_range, reduce_kind
from pytc.passes.common.uops import read as read_at
from pytc.passes.common.walk import users

Condition = tuple[Lin, int, int]  # low <= lin <= high
Emitting = Generator[tuple[ir.Value, tuple[Lin, ...], frozenset[Condition]], ir.Value, ir.Value]  # see Rangeifier.emit
MOVEMENT = {
  op.OPERATION_NAME for op in (uop.ReshapeOp, uop.PermuteOp, uop.ExpandOp, uop.PadOp, uop.ShrinkOp, uop.FlipOp)
}
ONE_HOT_MOVES = (uop.ReshapeOp, uop.ExpandOp, uop.PermuteOp)  # what a one-hot mask passes through (see is_one_hot_mask)
FORCED = {uop.ContiguousOp.OPERATION_NAME: Reason.CONTIGUOUS, uop.CopyOp.OPERATION_NAME: Reason.COPY}
NOT_ELEMENTWISE = MOVEMENT | set(FORCED) | {op.OPERATION_NAME for op in (uop.SinkOp, uop.ReduceOp, uop.ConstOp)}
# a padded convolution input is materialized with its zeros (see pads_in_memory) below this many input channels (an
# image model's 3-channel 7x7/2 stem ran 1.25x faster so, 1 to 16-channel 3x3 and 5x5 ones up to 1.15x; 64 and more
# channels within 3 % either way) when its elements are read at least PAD_REUSE times (the copy is then a small part of
# the reads, unlike a depthwise convolution's 9)
PAD_CHANNELS, PAD_REUSE = 32, 32


def shape_of(value: ir.Value) -> list[int]:
  return list(ir.RankedTensorType(value.type).shape)


def array_attr(op: ir.OpView, name: str) -> list[int]:
  return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def realize_reasons(fn: func.FuncOp, sink: ir.OpView) -> dict[ir.Value, Reason]:
  """Which values get a uop.bufferize, and why."""
  reasons: dict[ir.Value, Reason] = {v: Reason.OUTPUT for v in sink.operands}
  ops = [
    op
    for op in fn.entry_block.operations
    if op.operation.name.startswith(UOP_PREFIX) and not isinstance(op, uop.SinkOp)
  ]
  for op in ops:
    if op.operation.name in FORCED:
      reasons.setdefault(op.results[0], FORCED[op.operation.name])
    elif isinstance(op, uop.ReduceOp) and reaches_expand(op.result):
      reasons.setdefault(epilogue_end(op.result), Reason.REDUCE_EXPAND)
    elif not isinstance(op, uop.ConstOp) and len(list(op.results[0].uses)) > 1 and not is_one_hot_mask(op.results[0]):
      reasons.setdefault(op.results[0], Reason.MULTI_USE)
  return reasons


def is_one_hot_mask(value: ir.Value) -> bool:
  """Whether `value` is a comparison with an iota (through movement ops and casts), moved: the mask of a one-hot sum
  (tensor indexing, gather, embeddings). Such a sum becomes one read at the index (one_hot_pick), so a mask an
  embedding's forward and backward both read stays computed in each reader rather than materialized at its full
  broadcast size, and pytc-split-reduce leaves its sums whole."""

  def through(v: ir.Value, kinds: tuple[type[ir.OpView], ...]) -> ir.Value:
    while defined_by(v, *kinds):
      v = v.owner.operands[0]
    return v

  mask = through(value, ONE_HOT_MOVES)
  return defined_by(mask, uop.CmpeqOp) and any(
    defined_by(through(v, (*ONE_HOT_MOVES, uop.CastOp)), uop.IotaOp) for v in mask.owner.operands
  )


def epilogue_end(value: ir.Value) -> ir.Value:
  """The last value of the chain of elementwise ops (same shape) and reshapes that only continues `value` (one use
  each): a reduction is materialized there, so its epilogue (a matmul's bias and relu) runs once per output, not
  in every reader."""
  end = value
  while len(uses := list(value.uses)) == 1:
    user = uses[0].owner
    elementwise = user.name.startswith(UOP_PREFIX) and user.name not in NOT_ELEMENTWISE
    if not isa(user, uop.ReshapeOp) and not (elementwise and shape_of(user.results[0]) == shape_of(value)):
      break
    value = user.results[0]
    if elementwise:
      end = value
  return end


def reaches_expand(value: ir.Value) -> bool:
  """Whether `value` is read through an expand that broadcasts it (past elementwise and movement ops)."""

  def passes_through(user: ir.Operation) -> bool:
    return user.name.startswith(UOP_PREFIX) and user.name not in FORCED and not isa(user, uop.SinkOp, uop.ReduceOp)

  return any(
    isa(user, uop.ExpandOp) and shape_of(user.operands[0]) != shape_of(user.results[0])
    for user in users([value], passes_through)
  )


class Rangeifier:
  def __init__(self, reasons: dict[ir.Value, Reason], devices: dict[ir.Value, str | None]):
    self.reasons, self.devices, self.ids = reasons, devices, itertools.count()
    self.index, self.buffers, self.memo = Emitter(), {}, {}
    self.loops: list[Range] = []  # the ranges of the materialization being emitted,
    self.reducing: list[Range] = []  # and of the reductions around the value being emitted

  def new_range(self, size: int, kind: uop.RangeKind) -> Range:
    rid = next(self.ids)
    return Range(rid, size, new_range(kind, size, rid))

  def materialize(self, value: ir.Value, reason: Reason | None = None) -> ir.Value:
    if self.is_transfer(value):
      return self.transfer(value)
    ranges = [self.new_range(n, uop.RangeKind.loop) if n != 1 else None for n in shape_of(value)]
    outer = self.loops, self.reducing
    self.loops, self.reducing = [r for r in ranges if r], []
    scalar = self.emit(value, tuple(Lin.of(r) if r else Lin() for r in ranges), frozenset(), top=True)
    self.loops, self.reducing = outer
    operands = [r.value if r else self.index.constant(0) for r in ranges]
    bufferize = uop.BufferizeOp(value.type, scalar, operands, REASON.spelled(reason or self.reasons[value]))
    if (device := self.devices.get(value)) is not None:
      BUFFERIZE_DEVICE.set(bufferize, device)
    self.buffers[value] = bufferize.result
    return bufferize.result

  def is_transfer(self, value: ir.Value) -> bool:
    """A copy between devices (a copy within one is an ordinary materialization)."""
    return (
      isinstance(value, ir.OpResult)
      and isa(value.owner, uop.CopyOp)
      and self.devices[value] != self.devices.get(value.owner.operands[0])
    )

  def transfer(self, value: ir.Value) -> ir.Value:
    """The copy of its source, materialized on the source's device unless it is an argument already: a tensor that
    consumers read like a materialization."""
    source = value.owner.operands[0]
    if not isinstance(source, ir.BlockArgument):
      source = self.buffers[source] if source in self.buffers else self.materialize(source, Reason.COPY)
    self.buffers[value] = result = uop.CopyOp(source, value.owner.opview.device).result
    return result

  def read(self, buffer: ir.Value, idx: tuple[Lin, ...], valid: frozenset[Condition]) -> ir.Value:
    """A read of `buffer` at `idx`, guarded by `valid` unless the indices are inside it anyway: the pads that made the
    conditions select 0 where they fail, so the guard only keeps a read inside its buffer."""
    guarded = valid and not all(
      0 <= low and high < n for (low, high), n in zip((i.bounds() for i in idx), shape_of(buffer))
    )
    return read_at(buffer, [self.index.lin(i) for i in idx], self.guard(valid) if guarded else None)

  def guard(self, valid: frozenset[Condition]) -> ir.Value:
    result = None
    for form, low, high in sorted(valid, key=repr):
      check = self.index.condition(form, low, high)
      result = check if result is None else arith.andi(result, check)
    return result

  def emit(self, value: ir.Value, idx: tuple[Lin, ...], valid: frozenset[Condition], top: bool = False) -> ir.Value:
    """The scalar of `value` at indices `idx`, read only where `valid` holds. An op's emitter is a generator that
    yields each (operand, indices, validity) it needs and is sent back that scalar; a stack of them runs here, so a
    chain of any length needs no recursion, and every op is built after its operands."""
    request, stack = (value, idx, valid, top), []  # the computation of a materialized value is not a read of it (top)
    while True:
      if (answer := self.memo.get(request)) is None:
        value, idx, valid, top = request
        if not top and value in self.buffers:
          answer = self.memo[request] = self.read(self.buffers[value], idx, valid)
        elif isinstance(value, ir.BlockArgument):
          answer = self.memo[request] = self.read(value, idx, valid)
        else:
          stack.append((request, self.emit_op(value.owner.opview, idx, valid)))
      while stack:
        key, emitter = stack[-1]
        try:
          request = (*emitter.send(answer), False)
          break
        except StopIteration as done:
          answer = self.memo[key] = done.value
        stack.pop()
      else:
        return answer

  def emit_op(self, op: ir.OpView, idx: tuple[Lin, ...], valid: frozenset[Condition]) -> Emitting:
    name, source_shape = op.operation.name, shape_of(op.operands[0]) if len(op.operands) else []
    if isinstance(op, uop.ConstOp):
      return uop.ConstOp(element_type(op.result), op.value).result
    if isinstance(op, uop.IotaOp):
      position = self.index.lin(idx[op.axis.value])
      return to_element(position, element_type(op.results[0]))
    if name in FORCED:
      return (yield op.operands[0], idx, valid)
    if name in MOVEMENT:
      return (yield from self.emit_movement(op, name, source_shape, idx, valid))
    if isinstance(op, uop.ReduceOp):
      return (yield from self.emit_reduce(op, source_shape, idx, valid))
    if isinstance(op, (uop.AssignOp, uop.BufferizeOp)) or not name.startswith(UOP_PREFIX):
      raise PassError(op.location, f"pytc-rangeify cannot handle {name}")
    operands = []
    for v in op.operands:
      operands.append((yield v, idx, valid))
    return ir.Operation.create(name, results=[element_type(op.results[0])], operands=operands).result

  def emit_movement(self, op: ir.OpView, name: str, source_shape: list[int], idx: tuple[Lin, ...], valid) -> Emitting:
    if isinstance(op, uop.PermuteOp):
      order, moved = array_attr(op, "order"), [Lin()] * len(idx)
      for out_axis, in_axis in enumerate(order):
        moved[in_axis] = idx[out_axis]
      return (yield op.operands[0], tuple(moved), valid)
    if isinstance(op, uop.ReshapeOp):
      if 0 in source_shape:
        return zero(element_type(op.results[0]))  # no elements: only a loop of no trips reads it
      flat, stride = Lin(), 1
      for i, n in reversed(list(zip(idx, shape_of(op.results[0])))):
        flat, stride = flat + in_dim(i, n) * stride, stride * n
      moved, stride = [], 1
      for n in reversed(source_shape):
        moved.append(flat.floordiv(stride).mod(n) if n > 1 else Lin())
        stride *= n
      return (yield op.operands[0], tuple(reversed(moved)), valid)
    if isinstance(op, uop.ExpandOp):
      return (yield op.operands[0], tuple(i if n > 1 else Lin() for i, n in zip(idx, source_shape)), valid)
    if isinstance(op, uop.ShrinkOp):
      return (yield op.operands[0], tuple(i + s for i, s in zip(idx, array_attr(op, "starts"))), valid)
    if isinstance(op, uop.FlipOp):
      axes = set(array_attr(op, "axes"))
      return (
        yield (
          op.operands[0],
          tuple(Lin.of(n - 1) - i if a in axes else i for a, (i, n) in enumerate(zip(idx, source_shape))),
          valid,
        )
      )
    moved, inside = [], set()  # pad: valid where low <= i < low + n
    for i, n, low in zip(idx, source_shape, array_attr(op, "low")):
      moved.append(i - low)
      bounds = (i - low).bounds()
      if bounds[1] < 0 or bounds[0] > n - 1:
        return zero(element_type(op.results[0]))
      if bounds[0] < 0 or bounds[1] > n - 1:
        inside.add((i - low, 0, n - 1))
    if inside and self.pads_in_memory(op.results[0], inside):
      if op.results[0] not in self.buffers:
        self.materialize(op.results[0], Reason.PADDED)
      return (yield op.results[0], idx, valid)
    value = yield op.operands[0], tuple(moved), valid | frozenset(inside)
    if not inside:
      return value
    return uop.WhereOp(self.guard(frozenset(inside)), value, zero(value.type)).result

  def emit_reduce(self, op: uop.ReduceOp, source_shape: list[int], idx: tuple[Lin, ...], valid) -> Emitting:
    axes, moved, ranges = set(array_attr(op, "axes")), list(idx), []
    for axis in sorted(axes):
      if source_shape[axis] != 1:
        ranges.append(self.new_range(source_shape[axis], uop.RangeKind.reduce))
        moved[axis] = Lin.of(ranges[-1])
      else:
        moved[axis] = Lin()
    self.reducing += ranges
    body = yield op.operands[0], tuple(moved), valid
    del self.reducing[len(self.reducing) - len(ranges) :]
    if not ranges:
      return body
    if (
      len(ranges) == 1
      and reduce_kind(op) is uop.ReduceKind.add
      and (picked := one_hot_pick(body, ranges[0])) is not None
    ):
      return picked
    return uop.RangeReduceOp(reduce_kind(op), body, [r.value for r in ranges]).result

  def pads_in_memory(self, padded: ir.Value, inside: set[Condition]) -> bool:
    """Whether a padded value read through the conditions `inside` is better materialized with its zeros, read without
    them: when it is a sliding window (a condition moves with an output loop and a reduction, as a convolution's input)
    reused at least PAD_REUSE times per element, and the reductions the conditions do not move with (its input channels)
    take fewer than PAD_CHANNELS steps, too few to spread the cost of checking the conditions at every window
    position."""
    gated = [ranges_in(form) for form, _, _ in inside]
    loops, reducing = set(self.loops), set(self.reducing)
    if not any(r & loops and r & reducing for r in gated):
      return False
    channels = prod(r.size for r in reducing - set().union(*gated))
    return channels < PAD_CHANNELS and prod(r.size for r in loops | reducing) >= PAD_REUSE * prod(shape_of(padded))


def in_dim(index: Lin, n: int) -> Lin:
  """`index` into a dim of size n, as a reshape flattens it. Only a pad's guard lets an index leave [0, n) (a read
  outside its source, skipped), so wherever the read is valid the index equals itself mod n, 0 for a size-1 dim: its
  bounds are then the dim's, and a flattened index divides into the source's dims without the padding's extra
  positions."""
  if n == 1:
    return Lin()
  low, high = index.bounds()
  return index if 0 <= low and high < n else index.mod(n)


def ranges_in(form: Lin) -> set[Range]:
  """The ranges a linear form varies with (inside its floor divisions and modulos too)."""
  found: set[Range] = set()
  for atom, _ in form.terms:
    found |= {atom} if isinstance(atom, Range) else ranges_in(atom.x)
  return found


def one_hot_pick(body: ir.Value, k: Range) -> ir.Value | None:
  """A sum over `k` of where(p == k, v(k), 0), p not varying with k (tensor indexing, gather and embeddings are such
  one-hot sums), as v(p) where 0 <= p < k's size and 0 elsewhere: one read instead of a loop over every candidate.
  v is read at p clamped into the range, so a wild index reads inside the buffer; None if `body` is not of that form."""
  cast = body.owner.opview if defined_by(body, uop.CastOp) else None
  select = cast.operands[0] if cast else body
  if not defined_by(select, uop.WhereOp) or not is_zero(select.owner.operands[2]):
    return None
  if not defined_by(condition := select.owner.operands[0], uop.CmpeqOp):
    return None
  a, b = condition.owner.operands
  p = b if is_position(a, k.value) else a if is_position(b, k.value) else None
  if p is None or not isinstance(p.type, ir.IntegerType):
    return None
  loop = walk.dependent(walk.cone(body, lambda v: False), [k.value])  # the loop's body: what varies with k
  varying = {k.value} | {op.results[0] for op in loop}
  if p in varying:
    return None
  t = ir.IntegerType(p.type)
  if k.size > 1 << (t.width - (0 if t.is_unsigned else 1)):
    return None  # k wraps around in p's type

  def constant(n: int) -> ir.Value:
    return uop.ConstOp(t, ir.IntegerAttr.get(t, n)).result

  def compare(x: ir.Value, y: ir.Value) -> ir.Value:
    return uop.CmpltOp(x, y).result

  inside = compare(p, constant(k.size))
  if not t.is_unsigned:
    inside = uop.AndOp(compare(constant(-1), p), inside).result
  position = arith.index_cast(ir.IndexType.get(), uop.WhereOp(inside, p, constant(0)).result)
  mapping, value = {k.value: position}, select.owner.operands[1]
  for op in walk.cone(value, lambda v: v not in varying or v == k.value):
    clone(op, mapping)
  value = mapping.get(value, value)
  picked = uop.WhereOp(inside, value, zero(value.type)).result
  if cast:
    picked = uop.CastOp(body.type, picked).result
  erase_dead([k.value.owner, *loop])  # the loop's body, its range last
  return picked


def is_position(value: ir.Value, k: ir.Value) -> bool:
  """Whether `value` is the range `k` as an element (see to_element)."""
  if defined_by(value, uop.CastOp):
    value = value.owner.operands[0]
  return isinstance(value, ir.OpResult) and value.owner.name == "arith.index_cast" and value.owner.operands[0] == k


def is_zero(value: ir.Value) -> bool:
  if not defined_by(value, uop.ConstOp):
    return False
  attr = value.owner.attributes["value"]
  return (ir.FloatAttr(attr).value if isinstance(attr, ir.FloatAttr) else ir.IntegerAttr(attr).value) == 0


def zero(t: ir.Type) -> ir.Value:
  attr = ir.FloatAttr.get(t, 0.0) if isinstance(t, ir.FloatType) else ir.IntegerAttr.get(t, 0)
  return uop.ConstOp(t, attr).result


def to_element(position: ir.Value, t: ir.Type) -> ir.Value:
  """An index as a scalar of uop element type `t`."""
  if isinstance(t, ir.IntegerType) and not t.is_unsigned:
    return arith.index_cast(t, position)
  as_i64 = arith.index_cast(ir.IntegerType.get_signless(64), position)
  return uop.CastOp(t, as_i64).result


def rangeify(fn: func.FuncOp) -> None:
  sinks = [op for op in fn.entry_block.operations if isinstance(op, uop.SinkOp)]
  if len(sinks) != 1:
    raise PassError(fn.location, f"graph function @{fn.sym_name.value} needs exactly one uop.sink")
  sink = sinks[0]
  reasons = realize_reasons(fn, sink)
  order = [v for op in fn.entry_block.operations for v in op.results if v in reasons]
  order += [v for v in sink.operands if isinstance(v, ir.BlockArgument) and v not in order]
  rangeifier = Rangeifier(reasons, tensor_devices(fn))
  tensor_level = [op for op in fn.entry_block.operations if op.operation.name != "func.return"]
  with ir.InsertionPoint(sink):
    for value in order:
      rangeifier.materialize(value)
    uop.SinkOp([rangeifier.buffers[v] for v in sink.operands])
  for op in reversed(tensor_level):
    op.operation.erase()


def is_tensor_graph(fn: func.FuncOp) -> bool:
  """Not yet rangeified: no uop.bufferize, and every sink operand a tensor."""
  ops = list(fn.entry_block.operations)
  return not any(isinstance(o, uop.BufferizeOp) for o in ops) and all(
    isinstance(v.type, ir.RankedTensorType) for o in ops if isinstance(o, uop.SinkOp) for v in o.operands
  )


@register(
  "pytc-rangeify",
  "tensor-level uops to index-level scalar code over ranges, with materialization points",
  takes=("tensor", "rangeified"),
)
def rangeify_pass(module: ir.Operation) -> None:
  for fn in functions_with(module, uop.SinkOp.OPERATION_NAME):
    if is_tensor_graph(fn):
      with fn.location:
        rangeify(fn)
