"""Scalar loops for one kernel at index level: each `uop.range_reduce` becomes `scf.for` loops over its
reduce ranges carrying the accumulator, `uop.index` becomes `memref.load` (a gated read clamps its indices
to 0 and selects 0 where `valid` is false, so padding is never read), scalar uops become arith/math (see
scalar.py). A kernel marked reduce-outer (see order_loops.py) keeps one accumulator per element of its
innermost output range instead. Buffers of booleans are bytes and unsigned integers are signless, as the
LLVM lowering needs; an empty buffer is neither read nor written.
"""

from collections.abc import Callable
from typing import NamedTuple

from mlir import ir
from mlir.dialects import arith, memref, scf

from pytc.dialects import uop
from pytc.passes import PassError, range_size
from pytc.passes.codegen.lanes import shaped
from pytc.passes.codegen.scalar import (
  constant,
  constant_from_attr,
  is_float,
  is_unsigned,
  load,
  lower_scalar,
  storage_type,
  store,
  through_f32,
  width,
)
from pytc.passes.common.analysis import UOP_PREFIX, computation, defining, free_ranges, top_level_reductions
from pytc.passes.common.clone import clone
from pytc.passes.common.uops import reduce_kind

ReduceKind = uop.ReduceKind


class Combiner(NamedTuple):
  op: type[ir.OpView]  # the elementwise op combining two partial results (how bf16 rounds it: through_f32)
  float_lowering: Callable[..., ir.Value]
  integer_lowering: Callable[..., ir.Value]
  identity: int


# max has its own identity and lowering (reduce_identity, combine)
COMBINERS = {
  ReduceKind.add: Combiner(uop.AddOp, arith.addf, arith.addi, 0),
  ReduceKind.mul: Combiner(uop.MulOp, arith.mulf, arith.muli, 1),
}


def is_empty(t: ir.Type) -> bool:
  return 0 in ir.MemRefType(t).shape


def storage_memref(t: ir.Type) -> ir.MemRefType:
  """The memref a kernel parameter is passed as; an empty buffer is 1-D (it is never read or written)."""
  t = ir.MemRefType(t)
  return ir.MemRefType.get([0] if is_empty(t) else list(t.shape), storage_type(t.element_type))


def reduce_identity(kind: uop.ReduceKind, t: ir.Type) -> ir.Value:
  if kind != ReduceKind.max:
    return constant(t, COMBINERS[kind].identity)
  if is_float(t):
    return constant(t, float("-inf"))
  return constant(t, 0 if is_unsigned(t) else -(1 << (width(t) - 1)))


def combine(kind: uop.ReduceKind, t: ir.Type, acc: ir.Value, value: ir.Value) -> ir.Value:
  """acc (+, max, *) value. Float sums and products may reassociate, so LLVM can split them into vector lanes."""
  reassoc = ir.Attribute.parse("#arith.fastmath<reassoc>")
  if kind == ReduceKind.max:
    return (
      through_f32(t, uop.MaxOp, arith.maximumf)(acc, value)
      if is_float(t)
      else (arith.maxui if is_unsigned(t) else arith.maxsi)(acc, value)
    )
  combiner = COMBINERS[kind]
  if not is_float(t):
    return combiner.integer_lowering(acc, value)
  return through_f32(t, combiner.op, lambda a, b: combiner.float_lowering(a, b, fastmath=reassoc))(acc, value)


def widened_product(reduction: uop.RangeReduceOp) -> tuple[ir.Value, ir.Value] | None:
  """The factors when `reduction` sums in f32 products of f16 or bf16 widened to f32, else None. Widened first, the
  factors multiply exactly, so the sum rounds once instead of once per product (as a matmul accumulating in f32
  does)."""
  if reduce_kind(reduction) != ReduceKind.add or reduction.result.type != ir.F32Type.get():
    return None
  if (widened := defining(reduction.src, uop.CastOp)) is None:
    return None
  if (product := defining(widened.src, uop.MulOp)) is None or product.result.type not in (
    ir.F16Type.get(),
    ir.BF16Type.get(),
  ):
    return None
  return product.lhs, product.rhs


def widen(x: ir.Value) -> ir.Value:
  return arith.extf(shaped(ir.F32Type.get(), x), x)


def hoisting_depth(stored: uop.StoreOp, loops: list[ir.Value]) -> tuple[int, list[uop.RangeReduceOp]]:
  """How many outer loops to run before the reductions that vary only with them (a row's max and sum computed once
  per row, not per element), and those reductions in dependency order; (0, []) when there are none."""
  position = {r: i for i, r in enumerate(loops)}
  ops = computation(stored.value)
  depths = {}
  for op in ops:
    if isinstance(op, uop.RangeReduceOp) and (free := free_ranges(op)) <= set(loops):
      depths[op] = max((position[r] + 1 for r in free), default=1)
  depth = max((d for d in depths.values() if d < len(loops)), default=0)
  return depth, [op for op in ops if op in depths and depths[op] <= depth]


def invariant_reductions(reduction: uop.RangeReduceOp) -> list[uop.RangeReduceOp]:
  """The reductions in `reduction`'s body that do not vary with its ranges (the max inside logsumexp's sum): computed
  once before its loops instead of at every step of them. Outermost first, each after the ones it uses."""
  nested = [op for op in computation(reduction.src) if isinstance(op, uop.RangeReduceOp)]
  looped = set(reduction.ranges).union(*(op.ranges for op in nested))  # bound only inside the loops
  return [op for op in nested if not free_ranges(op) & looped]


def parallel_over(sizes: list[int], bounds: tuple[ir.Value, ir.Value] | None) -> ir.Block:
  """An scf.parallel over ranges of `sizes` (the first over [begin, end) instead when `bounds` are given); returns its
  body, its terminator in place."""
  index = ir.IndexType.get()
  lower, upper = [arith.constant(index, 0)] * len(sizes), [arith.constant(index, n) for n in sizes]
  if bounds:
    lower[0], upper[0] = bounds
  parallel = scf.ParallelOp([], lower, upper, [arith.constant(index, 1)] * len(sizes), [])
  body = parallel.region.blocks.append(*[index] * len(sizes))
  with ir.InsertionPoint(body):
    scf.ReduceOp([], 0)
  return body


class KernelLowering:
  def __init__(self, params: dict[ir.Value, ir.Value]):
    self.scopes: list[dict[ir.Value, ir.Value]] = [dict(params)]
    self.index = ir.IndexType.get()
    self.math_library = True  # False: the target links no math library (lower_scalar)
    self.siblings: list[uop.StoreOp] = []  # the kernel's stores besides the one its uop.end closes (pytc-merge-kernels)

  def lookup(self, value: ir.Value) -> ir.Value | None:
    for scope in reversed(self.scopes):
      if value in scope:
        return scope[value]
    return None

  def emit(self, value: ir.Value) -> ir.Value:
    """The lowered `value`. The values it needs that are not lowered yet are lowered first, operands before their users,
    from a stack rather than by recursion: an elementwise chain can be thousands of ops deep."""
    if (found := self.lookup(value)) is not None:
      return found
    stack = [(value, False)]
    while stack:
      top, ready = stack.pop()
      if self.lookup(top) is not None:
        continue
      if ready:
        self.scopes[-1][top] = self.emit_value(top)
      else:
        stack += [(top, True)] + [(v, False) for v in reversed(self.prerequisites(top)) if self.lookup(v) is None]
    return self.lookup(value)

  def prerequisites(self, value: ir.Value) -> list[ir.Value]:
    """The operands `emit_value(value)` reads in the current scope, in the order it reads them (a reduction reads its
    body inside its loops)."""
    op = value.owner
    if isinstance(op, (uop.RangeOp, uop.ConstOp, uop.RangeReduceOp)) or (
      isinstance(op, uop.IndexOp) and is_empty(op.src.type)
    ):
      return []
    return list(op.operands)

  def emit_value(self, value: ir.Value) -> ir.Value:
    """The lowering of `value`'s op, whose prerequisites are lowered already."""
    op = value.owner
    if isinstance(op, uop.RangeOp):
      raise PassError(op.location, f"a {uop.RangeOp.OPERATION_NAME} is used outside the loop it names")
    with op.location:
      if isinstance(op, uop.IndexOp):
        return self.emit_load(op)
      if isinstance(op, uop.ConstOp):
        return constant_from_attr(op.value)
      if isinstance(op, uop.RangeReduceOp):
        return self.emit_reduce(op)
      if op.name.startswith(UOP_PREFIX):
        return lower_scalar(op, [self.emit(v) for v in op.operands], self.math_library)
      return clone(op, {}, [self.emit(v) for v in op.operands]).results[0]

  def emit_load(self, op: uop.IndexOp) -> ir.Value:
    element = op.result.type
    if is_empty(op.src.type):
      return constant(element, 0)  # inside a loop that never runs
    source, indices = self.emit(op.src), [self.emit(v) for v in op.indices]
    if op.valid is None:
      return load(element, memref.load(source, indices))
    valid, zero_index = self.emit(op.valid), arith.constant(self.index, 0)
    value = load(element, memref.load(source, [arith.select(valid, i, zero_index) for i in indices]))
    return arith.select(valid, value, constant(element, 0))

  def emit_reduce(self, op: uop.RangeReduceOp) -> ir.Value:
    """Loops over the reduce ranges carrying the accumulator. A float max carries a second one, whether a NaN
    was seen, so the max itself may ignore NaNs (a plain vector max instruction, no NaN blend in the hot loop);
    a seen NaN is the result."""
    kind, element = reduce_kind(op), op.result.type
    for invariant in invariant_reductions(op):
      self.emit(invariant.result)
    identity = reduce_identity(kind, element)
    if kind != ReduceKind.max or not is_float(element):
      cascade = kind == ReduceKind.add and is_float(element)
      return self.reduce_loops(
        op, list(op.ranges), [identity], lambda accs, v: [combine(kind, element, accs[0], v)], cascade
      )[0]
    ignoring_nan = ir.Attribute.parse("#arith.fastmath<nnan,reassoc>")

    def step(accs: list[ir.Value], v: ir.Value) -> list[ir.Value]:
      largest = through_f32(element, uop.MaxOp, lambda a, b: arith.maximumf(a, b, fastmath=ignoring_nan))(accs[0], v)
      return [largest, arith.ori(accs[1], arith.cmpf(arith.CmpFPredicate.UNO, v, v))]

    largest, nan_seen = self.reduce_loops(
      op, list(op.ranges), [identity, constant(ir.IntegerType.get_signless(1), 0)], step
    )
    return arith.select(nan_seen, constant(element, float("nan")), largest)

  def emit_summand(self, reduction: uop.RangeReduceOp) -> ir.Value:
    """The value `reduction` combines at one step: its body, or the exact product of a widened f16/bf16 product."""
    if (factors := widened_product(reduction)) is None:
      return self.emit(reduction.src)
    return arith.mulf(*(widen(self.emit(factor)) for factor in factors))

  def reduce_loops(
    self,
    reduction: uop.RangeReduceOp,
    ranges: list[ir.Value],
    accs: list[ir.Value],
    step: Callable[[list[ir.Value], ir.Value], list[ir.Value]],
    cascade: bool = False,
  ) -> list[ir.Value]:
    """Loops over `ranges` carrying `accs`, `step` combining each summand. With `cascade` (a float sum), each loop
    within another sums from zero and its total joins the enclosing loop's accumulator once: a sum's rounding then grows
    with the ranges' sizes added, not multiplied (a BatchNorm's 8 x 28 x 28 sums of gradients that nearly cancel,
    carried through all three loops, came out 1e-3 off)."""
    loop = self.for_range(ranges[0], accs)
    with ir.InsertionPoint(loop.body):
      self.scopes.append({ranges[0]: loop.induction_variable})
      inner = list(loop.inner_iter_args)
      if len(ranges) == 1:
        results = step(inner, self.emit_summand(reduction))
      elif cascade:
        results = step(inner, self.reduce_loops(reduction, ranges[1:], accs, step, cascade)[0])  # accs: the identity
      else:
        results = self.reduce_loops(reduction, ranges[1:], inner, step)
      scf.YieldOp(results)
      self.scopes.pop()
    return list(loop.results)

  def accumulators(self, value: ir.Value, innermost: ir.Value) -> list[tuple[uop.RangeReduceOp, ir.Value]]:
    """One buffer per top-level reduction, as long as the innermost output range, allocated once per kernel."""
    size = range_size(innermost)
    return [
      (r, memref.alloca(ir.MemRefType.get([size], storage_type(r.result.type)), [], []))
      for r in top_level_reductions(value)
    ]

  def for_range(
    self,
    r: ir.Value,
    iter_args: list[ir.Value] | None = None,
    step: int = 1,
    bounds: tuple[ir.Value, ir.Value] | None = None,
  ) -> scf.ForOp:
    """A loop over the range `r` (over [begin, end) of it when `bounds` are given)."""
    begin, end = bounds or (arith.constant(self.index, 0), arith.constant(self.index, range_size(r)))
    return scf.ForOp(begin, end, arith.constant(self.index, step), iter_args or [])

  def reduce_outer(
    self,
    stored: uop.StoreOp,
    innermost: ir.Value,
    accumulators: list[tuple[uop.RangeReduceOp, ir.Value]],
    bounds: tuple[ir.Value, ir.Value] | None = None,
  ) -> None:
    """Each reduction over its ranges outside a loop over `innermost` (over [begin, end) of it when `bounds` are given:
    it is the kernel's only output range, split across cores) that accumulates per element; then the store."""
    for reduction, acc in accumulators:
      kind, element = reduce_kind(reduction), reduction.result.type
      with ir.InsertionPoint(self.for_range(innermost, bounds=bounds).body) as point:
        memref.store(store(element, reduce_identity(kind, element)), acc, [point.block.arguments[0]])
        scf.YieldOp([])
      self.accumulate(reduction, list(reduction.ranges), innermost, acc, kind, element, bounds)
    loop = self.for_range(innermost, bounds=bounds)
    with ir.InsertionPoint(loop.body):
      self.scopes.append({innermost: loop.induction_variable})
      for reduction, acc in accumulators:
        self.scopes[-1][reduction.results[0]] = load(
          reduction.results[0].type, memref.load(acc, [loop.induction_variable])
        )
      self.store(stored)
      self.scopes.pop()
      scf.YieldOp([])

  def accumulate(
    self,
    reduction: uop.RangeReduceOp,
    ranges: list[ir.Value],
    innermost: ir.Value,
    acc: ir.Value,
    kind: uop.ReduceKind,
    element: ir.Type,
    bounds: tuple[ir.Value, ir.Value] | None = None,
  ) -> None:
    if len(ranges) == 1 and (unroll := next(u for u in (4, 2, 1) if range_size(ranges[0]) % u == 0)) > 1:
      return self.accumulate_unrolled(reduction, ranges[0], innermost, acc, kind, element, bounds, unroll)
    loop = self.for_range(ranges[0]) if ranges else self.for_range(innermost, bounds=bounds)
    with ir.InsertionPoint(loop.body):
      self.scopes.append({(ranges[0] if ranges else innermost): loop.induction_variable})
      if ranges:
        self.accumulate(reduction, ranges[1:], innermost, acc, kind, element, bounds)
      else:
        position = [loop.induction_variable]
        total = combine(kind, element, load(element, memref.load(acc, position)), self.emit_summand(reduction))
        memref.store(store(element, total), acc, position)
      self.scopes.pop()
      scf.YieldOp([])

  def accumulate_unrolled(
    self,
    reduction: uop.RangeReduceOp,
    last: ir.Value,
    innermost: ir.Value,
    acc: ir.Value,
    kind: uop.ReduceKind,
    element: ir.Type,
    bounds: tuple[ir.Value, ir.Value] | None,
    unroll: int,
  ) -> None:
    """The last reduce range `unroll` steps at a time, each element's accumulator updated once per `unroll` summands:
    fewer loads and stores of it, and `unroll` rows of the read buffer streamed at once (x @ W for one x, a column
    sum)."""
    outer = self.for_range(last, step=unroll)
    with ir.InsertionPoint(outer.body):
      loop = self.for_range(innermost, bounds=bounds)
      with ir.InsertionPoint(loop.body):
        position = [loop.induction_variable]
        total = load(element, memref.load(acc, position))
        for u in range(unroll):
          step = (
            outer.induction_variable if u == 0 else arith.addi(outer.induction_variable, arith.constant(self.index, u))
          )
          self.scopes.append({last: step, innermost: loop.induction_variable})
          total = combine(kind, element, total, self.emit_summand(reduction))
          self.scopes.pop()
        memref.store(store(element, total), acc, position)
        scf.YieldOp([])
      scf.YieldOp([])

  def store(self, op: uop.StoreOp) -> None:
    """The store `op` and its siblings (a merged kernel's other stores, at the same element): every value is computed
    before any is stored, as one may read in place an element another writes."""
    stores = [op, *self.siblings]
    for each in stores:
      self.emit(each.value)
    for each in stores:
      self.store_one(each)

  def store_one(self, op: uop.StoreOp) -> None:
    if is_empty(op.dst.type):
      return
    memref.store(store(op.value.type, self.emit(op.value)), self.emit(op.dst), [self.emit(i) for i in op.indices])
