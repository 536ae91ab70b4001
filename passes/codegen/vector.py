"""Vector code for a kernel's body along one range `j`: what varies along `j` runs in vector lanes, `lanes` values of
`j` at once. The CPU's vector kernels (cpu/lower_vector.py: register blocks, panels, transposes) and a GPU thread's
outputs of several lanes (gpu/map_kernels.py) are emitted by it.

A caller puts `j` in scope as `Strided(start, 1)` and the other ranges as scalars, then emits values and stores. While
emitting, a value is uniform (a scalar: it does not depend on `j`), `Strided` (index lanes base + stride * lane, kept
symbolic so a read along `j` becomes one vector load), or a vector. Reads contiguous along `j` become `vector.load`
(`vector.maskedload` when padding gates them), a buffer's trailing dimensions of size 1 folded into the one before; any
other varying read or write goes lane by lane. Stores along `aligned_j` (a range whose vectors start at multiples of the
lanes) into rows a multiple of the lanes claim the vector's alignment, as reads along it do with `aligned_loads`
(buffers the runtime allocated), and are non-temporal for outputs of STREAM_BYTES or more. A float sum or max over one
range, at least as long as the lanes, whose reads move along it contiguously (a row's mean or max) is vector code along
that range (reduce_row): independent partial results across the range, then across the lanes.
"""

from collections.abc import Callable
from dataclasses import dataclass
from math import prod

from mlir import ir
from mlir.dialects import arith, memref, scf, vector

from pytc.dialects import uop
from pytc.passes import range_size
from pytc.passes.codegen.kernel_lowering import KernelLowering, invariant_reductions, is_empty, reduce_identity
from pytc.passes.codegen.scalar import constant, is_float, load, lower_scalar, storage_type, store
from pytc.passes.common.analysis import UOP_PREFIX, computation, constant_value, uses_any
from pytc.passes.common.uops import reduce_kind


@dataclass(frozen=True)
class Strided:
  """Index lanes: base + stride * lane."""

  base: ir.Value
  stride: int


Lanes = ir.Value | Strided
STREAM_BYTES = 8 << 20  # outputs this large are written around the caches (they would only evict what is there)


def is_uniform(value: Lanes) -> bool:
  return isinstance(value, ir.Value) and not isinstance(value.type, ir.VectorType)


def index_constant(value: int) -> ir.Value:
  return arith.constant(ir.IndexType.get(), value)


def combined(values: list[ir.Value], op: Callable, fastmath: ir.Attribute | None = None) -> ir.Value:
  """The values combined pairwise by `op`."""
  while len(values) > 1:
    pairs = [op(a, b, fastmath=fastmath) if fastmath else op(a, b) for a, b in zip(values[::2], values[1::2])]
    values = pairs + values[len(pairs) * 2 :]
  return values[0]


def rank_without_unit_tail(shape: list[int]) -> int:
  """The rank of `shape` with its trailing dimensions of size 1 folded into the one before (a [.., n, 1] buffer is
  contiguous along n)."""
  rank = len(shape)
  while rank > 1 and shape[rank - 1] == 1:
    rank -= 1
  return rank


def folded_indices(read: uop.IndexOp) -> list[ir.Value]:
  """The read's indices with those of its trailing dimensions of size 1 set aside (none for a 0-d read)."""
  return list(read.indices)[: rank_without_unit_tail(ir.ShapedType(read.src.type).shape)]


def is_contiguous(read: uop.IndexOp, j: ir.Value) -> bool:
  """Whether the read's last index (trailing dimensions of size 1 aside) moves with `j` and no other index does (a gate
  may: it becomes a mask)."""
  indices = folded_indices(read)
  # a 0-d read moves only by its gate
  return bool(indices) and uses_any(indices[-1], {j}) and not any(uses_any(i, {j}) for i in indices[:-1])


def row_reducible(reduction: uop.RangeReduceOp, lanes: int) -> bool:
  """Whether the reduction is a float sum or max over one range, at least as long as the lanes, whose reads move along
  it contiguously and ungated (a row's mean or max): vector code along the range computes it."""
  kind, element, (k, *others) = reduce_kind(reduction), reduction.result.type, reduction.ranges
  if (
    others
    or kind not in (uop.ReduceKind.add, uop.ReduceKind.max)
    or element not in (ir.F32Type.get(), ir.F64Type.get())
    or range_size(k) < lanes
  ):
    return False
  moving = [
    op
    for op in computation(reduction.src)
    if isinstance(op, (uop.IndexOp, uop.RangeReduceOp)) and uses_any(op.results[0], {k})
  ]
  return all(isinstance(op, uop.IndexOp) and op.valid is None and is_contiguous(op, k) for op in moving)


class VectorLowering(KernelLowering):
  def __init__(self, params: dict[ir.Value, ir.Value], lanes: int, aligned_loads: bool = False):
    super().__init__(params)
    self.lanes = lanes
    self.aligned_loads = (
      aligned_loads  # reads along aligned_j claim the vector's alignment too (buffers the runtime allocated)
    )
    self.collapsed: dict[ir.Value, ir.Value] = {}  # buffers seen without their trailing unit dimensions
    self.aligned_j: ir.Value | None = None  # the range along which stores start at multiples of the lanes

  def emit_reduce(self, op: uop.RangeReduceOp) -> ir.Value:
    return row if (row := self.reduce_row(op)) is not None else super().emit_reduce(op)

  def reduce_row(self, reduction: uop.RangeReduceOp) -> ir.Value | None:
    """A float sum or max over one range, at least as long as the lanes, whose reads move along it contiguously (a row's
    mean or max), as vector code: `lanes` partial results across the range, then across the lanes; None when the
    reduction is not such. A range that is not a multiple of the lanes ends with one vector over its last `lanes`
    elements, the lanes that vectors before it read already set to the identity."""
    if not row_reducible(reduction, self.lanes):
      return None
    kind, element, k = reduce_kind(reduction), reduction.result.type, reduction.ranges[0]
    for invariant in invariant_reductions(reduction):
      self.emit(invariant.result)
    reassoc, ignoring_nan = (
      ir.Attribute.parse("#arith.fastmath<reassoc>"),
      ir.Attribute.parse("#arith.fastmath<nnan,reassoc>"),
    )
    is_max, flags = kind == uop.ReduceKind.max, ir.VectorType.get([self.lanes], ir.IntegerType.get_signless(1))
    size, identity = range_size(k), vector.broadcast(self.vector_type(element), reduce_identity(kind, element))
    parts = next(p for p in (4, 2, 1) if size >= p * self.lanes)  # independent partial results: no latency chain
    whole = size // (parts * self.lanes) * parts * self.lanes
    starts = [identity] * parts
    if is_max:
      starts += [arith.constant(flags, ir.DenseElementsAttr.get_splat(flags, ir.BoolAttr.get(False)))] * parts

    def combine_at(accs: list[ir.Value], part: int, start: ir.Value, skipped: int = 0) -> None:
      """Fold the vector of the range's elements from `start` into accumulator `part`, its first `skipped` lanes as the
      identity."""
      self.scopes.append({k: Strided(start, 1)})
      lanes = self.vector(self.emit(reduction.src))
      self.scopes.pop()
      if skipped:
        kept = arith.constant(
          flags, ir.DenseElementsAttr.get([ir.BoolAttr.get(lane >= skipped) for lane in range(self.lanes)], flags)
        )
        lanes = arith.select(kept, lanes, identity)
      if not is_max:
        accs[part] = arith.addf(accs[part], lanes, fastmath=reassoc)
      else:  # as the scalar loops: a plain max that may drop NaNs beside a flag of whether one was seen
        accs[part] = arith.maximumf(accs[part], lanes, fastmath=ignoring_nan)
        accs[parts + part] = arith.ori(accs[parts + part], arith.cmpf(arith.CmpFPredicate.UNO, lanes, lanes))

    loop = scf.ForOp(index_constant(0), index_constant(whole), index_constant(parts * self.lanes), starts)
    with ir.InsertionPoint(loop.body):
      accs = list(loop.inner_iter_args)
      for part in range(parts):
        combine_at(accs, part, arith.addi(loop.induction_variable, index_constant(part * self.lanes)))
      scf.YieldOp(accs)
    partial = list(loop.results)
    tail = list(range(whole, size - self.lanes + 1, self.lanes))
    for count, start in enumerate(tail):
      combine_at(partial, count % parts, index_constant(start))
    if (last := tail[-1] + self.lanes if tail else whole) < size:
      combine_at(partial, 0, index_constant(size - self.lanes), last - (size - self.lanes))
    if not is_max:
      return vector.reduction(
        element, vector.CombiningKind.ADD, combined(partial, arith.addf, reassoc), fastmath=reassoc
      )
    largest = vector.reduction(
      element,
      vector.CombiningKind.MAXIMUMF,
      combined(partial[:parts], arith.maximumf, ignoring_nan),
      fastmath=ignoring_nan,
    )
    nan_seen = vector.reduction(
      ir.IntegerType.get_signless(1), vector.CombiningKind.OR, combined(partial[parts:], arith.ori)
    )
    return arith.select(nan_seen, constant(element, float("nan")), largest)

  def vector_type(self, element: ir.Type) -> ir.VectorType:
    return ir.VectorType.get([self.lanes], element)

  def vector(self, value: Lanes) -> ir.Value:
    """`value` as a vector of lanes."""
    if isinstance(value, Strided):
      lanes_type = self.vector_type(self.index)
      offsets = ir.DenseElementsAttr.get(
        [ir.IntegerAttr.get(self.index, value.stride * lane) for lane in range(self.lanes)], type=lanes_type
      )
      return arith.addi(vector.broadcast(lanes_type, value.base), arith.constant(lanes_type, offsets))
    if is_uniform(value):
      return vector.broadcast(self.vector_type(value.type), value)
    return value

  def lane(self, value: Lanes, lane: int) -> ir.Value:
    """The scalar value of one lane."""
    if isinstance(value, Strided):
      return arith.addi(value.base, index_constant(value.stride * lane))
    if is_uniform(value):
      return value
    return vector.extract(value, [], [lane])

  def prerequisites(self, value: ir.Value) -> list[ir.Value]:
    """As for scalar loops, but a read lowers its indices and gate before its buffer."""
    op = value.owner
    if isinstance(op, uop.IndexOp):
      return list(op.indices) + ([op.valid] if op.valid is not None else []) + [op.src]
    return super().prerequisites(value)

  def emit_value(self, value: ir.Value) -> Lanes:
    op = value.owner
    if isinstance(op, (uop.RangeOp, uop.RangeReduceOp, uop.ConstOp)):
      return super().emit_value(value)  # a reduction here does not vary along j
    with op.location:
      if isinstance(op, uop.IndexOp):
        return self.emit_load(op)
      operands = [self.emit(v) for v in op.operands]
      if all(is_uniform(v) for v in operands):
        return super().emit_value(value)
      if isinstance(op, (arith.AddIOp, arith.MulIOp)) and (strided := self.strided(op, *operands)) is not None:
        return strided
      if op.name.startswith(UOP_PREFIX):
        return lower_scalar(op, [self.vector(v) for v in operands], self.math_library)
      return ir.Operation.create(
        op.name,
        results=[self.vector_type(r.type) for r in op.results],
        operands=[self.vector(v) for v in operands],
        attributes=dict(op.attributes.items()),
      ).results[0]

  def strided(self, op: arith.AddIOp | arith.MulIOp, a: Lanes, b: Lanes) -> Strided | None:
    if isinstance(op, arith.AddIOp):
      if isinstance(a, Strided) and isinstance(b, Strided):
        return Strided(arith.addi(a.base, b.base), a.stride + b.stride)
      if isinstance(a, Strided) and is_uniform(b):
        return Strided(arith.addi(a.base, b), a.stride)
      if isinstance(b, Strided) and is_uniform(a):
        return Strided(arith.addi(a, b.base), b.stride)
      return None
    if isinstance(b, Strided):
      a, b = b, a
    factor = constant_value(b) if is_uniform(b) else None
    return Strided(arith.muli(a.base, b), a.stride * factor) if isinstance(a, Strided) and factor is not None else None

  def emit_load(self, op: uop.IndexOp) -> Lanes:
    indices = [self.emit(v) for v in op.indices]
    valid = self.emit(op.valid) if op.valid is not None else None
    if all(is_uniform(v) for v in indices) and (valid is None or is_uniform(valid)):
      return super().emit_load(op)
    element, source = op.result.type, self.emit(op.src)
    if is_empty(op.src.type):
      return constant(element, 0)
    source, indices = self.without_unit_tail(source, indices)
    if (
      indices
      and isinstance(indices[-1], Strided)
      and indices[-1].stride == 1
      and all(is_uniform(v) for v in indices[:-1])
    ):
      stored = self.vector_type(storage_type(element))
      if valid is None:
        alignment = self.alignment(source, op.indices[len(indices) - 1]) if self.aligned_loads else None
        return load(element, vector.load(stored, source, indices[:-1] + [indices[-1].base], alignment=alignment))
      shape = ir.MemRefType(source.type).shape
      clamped = [
        arith.minsi(arith.maxsi(i, index_constant(0)), index_constant(n - 1)) for i, n in zip(indices[:-1], shape)
      ]
      zeros = vector.broadcast(stored, arith.constant(stored.element_type, 0.0 if is_float(element) else 0))
      return load(element, vector.maskedload(stored, source, clamped + [indices[-1].base], self.vector(valid), zeros))
    values = []
    for lane in range(self.lanes):
      lane_indices = [self.lane(i, lane) for i in indices]
      if valid is None:
        values.append(load(element, memref.load(source, lane_indices)))
      else:
        ok, zero = self.lane(valid, lane), index_constant(0)
        read = load(element, memref.load(source, [arith.select(ok, i, zero) for i in lane_indices]))
        values.append(arith.select(ok, read, constant(element, 0)))
    return vector.from_elements(self.vector_type(values[0].type), values)

  def without_unit_tail(self, buffer: ir.Value, indices: list[Lanes]) -> tuple[ir.Value, list[Lanes]]:
    """The buffer with its trailing dimensions of size 1 folded into the one before (a [.., n, 1] output is
    contiguous along n), and the indices into that view; made once per buffer, at the kernel's entry."""
    shape = ir.MemRefType(buffer.type).shape
    rank = rank_without_unit_tail(shape)
    if rank == len(shape) or not isinstance(buffer, ir.BlockArgument):
      return buffer, indices
    if buffer not in self.collapsed:
      view = ir.MemRefType.get(shape[:rank], ir.MemRefType(buffer.type).element_type)
      with ir.InsertionPoint.at_block_begin(buffer.owner), buffer.owner.owner.location:
        self.collapsed[buffer] = memref.collapse_shape(
          view, buffer, [[d] for d in range(rank - 1)] + [list(range(rank - 1, len(shape)))]
        )
    return self.collapsed[buffer], indices[:rank]

  def store_one(self, op: uop.StoreOp) -> None:
    if is_empty(op.dst.type):
      return
    indices = list(op.indices)
    if all(is_uniform(self.emit(v)) for v in [op.value, *indices]):
      return super().store_one(op)  # one element (scalar loops: `across`)
    lanes = self.vector(self.emit(op.value))
    buffer, positions = self.without_unit_tail(self.emit(op.dst), [self.emit(i) for i in indices])
    stored = store(op.value.type, lanes)
    if isinstance(positions[-1], Strided) and positions[-1].stride == 1 and all(is_uniform(p) for p in positions[:-1]):
      alignment = self.alignment(buffer, indices[len(positions) - 1])
      streaming = (
        alignment is not None and prod(ir.MemRefType(buffer.type).shape) * alignment // self.lanes >= STREAM_BYTES
      )
      vector.store(
        stored, buffer, positions[:-1] + [positions[-1].base], nontemporal=streaming or None, alignment=alignment
      )
      return
    for lane in range(self.lanes):
      memref.store(vector.extract(stored, [], [lane]), buffer, [self.lane(p, lane) for p in positions])

  def alignment(self, buffer: ir.Value, last_index: ir.Value) -> int | None:
    """The bytes of a vector of the buffer's elements when the vector at `last_index` starts at a multiple of the lanes:
    the index is `aligned_j` itself (its vectors start at multiples of the lanes) and the rows are a multiple of the
    lanes."""
    shape = ir.MemRefType(buffer.type).shape
    if self.aligned_j is None or last_index != self.aligned_j or shape[-1] % self.lanes:
      return None
    return self.lanes * max(1, ir.ShapedType(buffer.type).element_type.width // 8)
