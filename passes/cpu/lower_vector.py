"""Vector code for a kernel marked `pytc.vector` (see vectorize.py): its innermost output range `j` runs in vector
lanes, `vectors` vectors side by side, and `rows` values of the upcast range `u` at once. The vector code along `j` is
codegen's (codegen/vector.py); this module is the CPU's tiling around it.

The outer parallel loop runs over blocks of `u` and `j` (a partial last block moves back to overlap its
neighbour); each top-level reduction loops over its reduce ranges with `rows * vectors` accumulator vectors as
loop-carried values (registers), a float sum of products accumulating with fma, reading along `j` from panels
packed once per group of `u` blocks (a weight read along the reduction is packed by square tiles transposed in
registers); the epilogue computes and stores the output vectors, or, when the output runs along `u` instead (a
convolution's columns, with the channels in the lanes), transposes the accumulators into a stack buffer first and
computes it in one loop over the outputs of `j`, as vectors of `rows` lanes along `u` (store_along_rows). In stream mode
(elementwise work along `j`) the reductions, which vary only with the outer ranges, are computed once per
outer iteration before the loop along `j`; a float row sum whose body the output computes again keeps it in a
row buffer; any other float sum or max over one range whose reads run along it (a row's mean or max) is the emitter's
vector code (reduce_row). `across` kernels with `rows` = lanes (lower_across_body) compute a block of outputs'
reductions row by row, then the rest of the outputs as vectors over the block. Stores along `j` are aligned when rows
are a multiple of the lanes: the blocks of `j` start at multiples of the lanes, `j` is the emitter's `aligned_j`.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from mlir import ir
from mlir.dialects import arith, math, memref, scf, vector

from pytc.dialects import uop
from pytc.passes import range_size
from pytc.passes.codegen.kernel_lowering import (
  combine,
  hoisting_depth,
  parallel_over,
  reduce_identity,
  widen,
  widened_product,
)
from pytc.passes.codegen.scalar import constant, is_float, signless, store
from pytc.passes.codegen.vector import Lanes, Strided, VectorLowering, combined, index_constant
from pytc.passes.common.analysis import computation, defining, free_ranges, top_level_reductions, uses_any, weight
from pytc.passes.common.attributes import VECTOR
from pytc.passes.common.uops import defined_by, reduce_kind
from pytc.passes.cpu.vectorize import pack_values, row_pack_values, row_reductions, transposed_range, uniform_roots
from pytc.passes.scheduling.rangeify import is_position, is_zero

KEEP_WEIGHT = 4  # a row sum's body is kept for the loop along j when it weighs this much (a transcendental)


@dataclass(frozen=True)
class Tile:
  """One output vector of a block: the values of `j` (Strided) and `u` there, its row and its offset in the block along
  `j`."""

  scope: dict[ir.Value, Lanes]
  row: int
  column: int


def transposable(value: ir.Value, k: ir.Value, j: ir.Value) -> bool:
  """Whether `value` is a read contiguous along `k` that moves with `j` in another index: a panel of it is copied as
  square tiles read along `k` and transposed in registers."""
  if not defined_by(value, uop.IndexOp) or value.owner.opview.valid is not None:
    return False
  *outer, last = value.owner.opview.indices
  return last == k and any(uses_any(i, {j}) for i in outer) and not any(uses_any(i, {k}) for i in outer)


def transposed(rows: list[ir.Value]) -> list[ir.Value]:
  """The columns of the square whose rows are `rows` (as many as each has lanes: a power of two, as pytc.vector's lanes
  are): log2(n) rounds of the perfect shuffle (rows i and i + n/2 interleaved, low halves then high halves, into rows 2i
  and 2i + 1). Each round rotates the bits of every element's index by one place, so log2(n) rounds swap row and column:
  n log2(n) two-register shuffles (vpermt2ps on AVX-512, 64 for 16 lanes), where the elements one by one take n^2
  inserts, which LLVM compiles slowly and into slower code."""
  n = len(rows)
  low = [lane for i in range(n // 2) for lane in (i, n + i)]
  high = [lane for i in range(n // 2, n) for lane in (i, n + i)]
  for _ in range(n.bit_length() - 1):
    rows = [vector.shuffle(rows[i], rows[i + n // 2], mask) for i in range(n // 2) for mask in (low, high)]
  return rows


def used_ranges(value: ir.Value, reduction: uop.RangeReduceOp) -> list[ir.Value]:
  """The reduction's ranges that `value` depends on: the dimensions of its panel."""
  return [r for r in reduction.ranges if uses_any(value, {r})]


class BlockedVectorLowering(VectorLowering):
  """The vector lowering of a kernel marked `pytc.vector`: the emitter's vector code along `j`, and the register
  tile's: panels packed once per group and read back in the tiles (pack, pack_rows), a row sum's body kept in a row
  buffer for the loop along `j` (sum_row), and the tiles' accumulators carried through the reduce loops (accumulate)."""

  def __init__(self, params: dict[ir.Value, ir.Value], lanes: int):
    super().__init__(params, lanes)
    self.packed: dict[ir.Value, tuple[ir.Value, list[ir.Value]]] = {}  # value -> (panel buffer, its reduce ranges)
    self.column = 0  # the offset of the current tile's vector in the block along j
    self.roots: dict[ir.Operation, list[ir.Value]] = {}  # per reduction, the work vectorized along its innermost range
    self.row_cache: dict[ir.Value, ir.Value] = {}  # a value along j -> the row buffer a reduction left it in
    # value -> (panel, reduce ranges, block in group)
    self.row_packed: dict[ir.Value, tuple[ir.Value, list[ir.Value], ir.Value]] = {}
    self.row = 0  # the current tile's row in its block along u
    self.upcast: ir.Value | None = None  # the range `u` whose values the blocks' rows take

  def pack(
    self, value: ir.Value, reduction: uop.RangeReduceOp, j: ir.Value, j_start: ir.Value, width: int, entry: ir.Block
  ) -> None:
    """Compute `value` over the reduction's ranges it uses and the `width` lanes of `j` from `j_start` into a contiguous
    panel (allocated once per call); the tiles then read the panel. A value that several reductions read (one weight in
    each gradient of a projection's input) is packed once, for all of them."""
    if value in self.packed:
      return
    ranges = used_ranges(value, reduction)
    shape = [range_size(r) for r in ranges] + [width]
    with ir.InsertionPoint.at_block_begin(entry):
      panel = memref.alloca(ir.MemRefType.get(shape, value.type), [], [])

    def copy(positions: list[ir.Value]) -> None:
      for column in range(0, width, self.lanes):
        self.scopes.append({j: Strided(arith.addi(j_start, index_constant(column)), 1)})
        vector.store(self.vector(self.emit(value)), panel, positions + [index_constant(column)])
        self.scopes.pop()

    def copy_transposed(positions: list[ir.Value]) -> None:
      k = ranges[-1]
      loop = self.for_range(k, step=self.lanes)
      with ir.InsertionPoint(loop.body):
        start = loop.induction_variable
        for column in range(0, width, self.lanes):
          rows = []
          for lane in range(self.lanes):
            self.scopes.append({j: arith.addi(j_start, index_constant(column + lane)), k: Strided(start, 1)})
            rows.append(self.vector(self.emit(value)))
            self.scopes.pop()
          for lane, flipped in enumerate(transposed(rows)):
            vector.store(flipped, panel, positions + [arith.addi(start, index_constant(lane)), index_constant(column)])
        scf.YieldOp([])

    if ranges and transposable(value, ranges[-1], j) and range_size(ranges[-1]) % self.lanes == 0:
      self.loop_nest(ranges[:-1], copy_transposed)
    else:
      self.loop_nest(ranges, copy)
    self.packed[value] = (panel, ranges)

  def pack_rows(
    self,
    value: ir.Value,
    reduction: uop.RangeReduceOp,
    u: ir.Value,
    group_blocks: tuple[ir.Value, ir.Value, ir.Value],
    group: int,
    rows: int,
    entry: ir.Block,
  ) -> None:
    """Compute `value` over the reduction's ranges for the `rows` values of `u` in each of the `group` blocks from the
    group's first into a panel [block, reduce ranges..., row] (allocated once per call): a tile then reads its block's
    part in order, one broadcast per row and step, where the source steps across rows."""
    if value in self.row_packed:
      return
    ranges, (first, place, count) = used_ranges(value, reduction), group_blocks
    shape = [group] + [range_size(r) for r in ranges] + [rows]
    with ir.InsertionPoint.at_block_begin(entry):
      panel = memref.alloca(ir.MemRefType.get(shape, value.type), [], [])

    def copy(positions: list[ir.Value]) -> None:  # along the group's rows for each reduce step: the source in order
      loop = scf.ForOp(index_constant(0), count, index_constant(1))
      with ir.InsertionPoint(loop.body):
        block = loop.induction_variable
        start, lanes = block_start(arith.addi(first, block), rows, range_size(u)), self.lanes
        self.lanes = rows  # a block's rows as one vector (a load where they are contiguous; LLVM's own choice scatters)
        self.scopes.append({u: Strided(start, 1)})
        vector.store(self.vector(self.emit(value)), panel, [block, *positions, index_constant(0)])
        self.scopes.pop()
        self.lanes = lanes
        scf.YieldOp([])

    self.loop_nest(ranges, copy)
    self.row_packed[value] = (panel, ranges, place)

  def sum_row(self, reduction: uop.RangeReduceOp, cached: ir.Value, entry: ir.Block) -> None:
    """A float sum over one range `k` as long as the row, as vector code, whose body, the same computation as
    `cached` along `j`, is kept in a row buffer as it goes: the loop along `j` reads it instead of computing it
    again (softmax's exponentials)."""
    k, body, element = reduction.ranges[0], reduction.src, reduction.result.type
    size, lanes_type = range_size(k), self.vector_type(element)
    with ir.InsertionPoint.at_block_begin(entry):
      row = memref.alloca(ir.MemRefType.get([size], element), [], [])
    loop = scf.ForOp(
      index_constant(0),
      index_constant(size),
      index_constant(self.lanes),
      [vector.broadcast(lanes_type, constant(element, 0))],
    )
    with ir.InsertionPoint(loop.body):
      self.scopes.append({k: Strided(loop.induction_variable, 1)})
      lanes = self.vector(self.emit(body))
      vector.store(lanes, row, [loop.induction_variable])
      scf.YieldOp([arith.addf(loop.inner_iter_args[0], lanes, fastmath=ir.Attribute.parse("#arith.fastmath<reassoc>"))])
      self.scopes.pop()
    self.scopes[-1][reduction.result] = vector.reduction(
      element, vector.CombiningKind.ADD, loop.results[0], fastmath=ir.Attribute.parse("#arith.fastmath<reassoc>")
    )
    self.row_cache[cached] = row

  def loop_nest(
    self, ranges: list[ir.Value], body: Callable[[list[ir.Value]], None], positions: tuple[ir.Value, ...] = ()
  ) -> None:
    """scf.for loops over `ranges` (each mapped to its induction variable) around `body(induction variables)`."""
    if not ranges:
      return body(list(positions))
    loop = self.for_range(ranges[0])
    with ir.InsertionPoint(loop.body):
      self.scopes.append({ranges[0]: loop.induction_variable})
      self.loop_nest(ranges[1:], body, (*positions, loop.induction_variable))
      self.scopes.pop()
      scf.YieldOp([])

  def emit(self, value: ir.Value) -> Lanes:
    if (found := self.lookup(value)) is not None:
      return found
    if (row := self.row_cache.get(value)) is not None:
      with value.owner.location:
        return vector.load(self.vector_type(value.type), row, [self.lookup(self.aligned_j).base])
    if (rows := self.row_packed.get(value)) is not None:
      panel, ranges, block = rows
      with value.owner.location:
        return memref.load(panel, [block] + [self.lookup(r) for r in ranges] + [index_constant(self.row)])
    if (packed := self.packed.get(value)) is not None:
      panel, ranges = packed
      with value.owner.location:
        return vector.load(
          self.vector_type(value.type), panel, [self.lookup(r) for r in ranges] + [index_constant(self.column)]
        )
    return super().emit(value)

  def prerequisites(self, value: ir.Value) -> list[ir.Value]:
    """As the emitter's, but values read back from a row buffer or a panel are loaded where they are used, once per
    use."""
    needed = super().prerequisites(value)
    return [v for v in needed if v not in self.row_cache and v not in self.packed and v not in self.row_packed]

  def accumulate(
    self, reduction: uop.RangeReduceOp, ranges: list[ir.Value], tiles: list[Tile], accs: list[ir.Value]
  ) -> list[ir.Value]:
    """Loop the reduce `ranges` around one combine per tile; the accumulators are loop-carried. With roots to
    vectorize (see `unrolled`), the innermost range steps by the lanes."""
    step = self.lanes if len(ranges) == 1 and self.roots.get(reduction) else 1
    loop = self.for_range(ranges[0], accs, step)
    with ir.InsertionPoint(loop.body):
      carried, k = list(loop.inner_iter_args), loop.induction_variable
      if step > 1:
        results = self.unrolled(reduction, ranges[0], k, tiles, carried)
      else:
        self.scopes.append({ranges[0]: k})
        results = (
          self.accumulate(reduction, ranges[1:], tiles, carried)
          if len(ranges) > 1
          else self.gated(
            reduction,
            tiles,
            carried,
            lambda: [self.combine_tile(reduction, tile, acc) for tile, acc in zip(tiles, carried)],
          )
        )
        self.scopes.pop()
      scf.YieldOp(results)
    return list(loop.results)

  def gated(
    self, reduction: uop.RangeReduceOp, tiles: list[Tile], accs: list[ir.Value], combining: Callable[[], list[ir.Value]]
  ) -> list[ir.Value]:
    """The tiles' accumulators after one reduce step (`combining` emits it); a sum of one-hot terms (see one_hot_mask)
    steps only where the mask holds in some row of the block: the other steps read nothing."""
    if (mask := one_hot_mask(reduction, self.aligned_j)) is None:
      return combining()
    rows = list({tile.row: tile for tile in tiles}.values())

    def emitted(value: ir.Value, tile: Tile) -> ir.Value:
      self.scopes.append({r: v for r, v in tile.scope.items() if not isinstance(v, Strided)})
      lowered = self.emit(value)
      self.scopes.pop()
      return lowered

    # p == u at one of the block's rows u0 + row: 0 <= p - u0 < rows
    if (sides := row_index(mask, self.upcast)) is not None:
      offset = arith.subi(*(emitted(side, rows[0]) for side in sides))
      hit = arith.cmpi(arith.CmpIPredicate.ult, offset, arith.constant(offset.type, len(rows)))
    else:
      hit = combined([emitted(mask, tile) for tile in rows], arith.ori)
    return only_if(hit, combining, accs)

  def unrolled(
    self, reduction: uop.RangeReduceOp, k: ir.Value, start: ir.Value, tiles: list[Tile], accs: list[ir.Value]
  ) -> list[ir.Value]:
    """`lanes` steps of the innermost reduce range `k` from `start`: the reduction's roots (work that does not
    depend on `j`) are computed once per row as vectors along `k`, then each step combines every tile with
    the roots' lane for that step."""
    roots, lanes_of = self.roots[reduction], {}
    for tile in tiles:
      if tile.row in lanes_of:
        continue
      self.scopes.append({**{r: v for r, v in tile.scope.items() if not isinstance(v, Strided)}, k: Strided(start, 1)})
      lanes_of[tile.row] = [self.vector(self.emit(root)) for root in roots]
      self.scopes.pop()

    def steps() -> list[ir.Value]:
      results = list(accs)
      for step in range(self.lanes):
        at = arith.addi(start, index_constant(step))
        for position, tile in enumerate(tiles):
          self.scopes.append(
            {k: at, **{root: vector.extract(lanes, [], [step]) for root, lanes in zip(roots, lanes_of[tile.row])}}
          )
          results[position] = self.combine_tile(reduction, tile, results[position])
          self.scopes.pop()
      return results

    if (mask := one_hot_mask(reduction, self.aligned_j)) is None or mask not in roots:
      return steps()
    at = roots.index(mask)  # a one-hot sum (see gated): the steps only where the mask holds in some row at some step
    return only_if(
      combined(
        [
          vector.reduction(ir.IntegerType.get_signless(1), vector.CombiningKind.OR, lanes[at])
          for lanes in lanes_of.values()
        ],
        arith.ori,
      ),
      steps,
      accs,
    )

  def combine_tile(self, reduction: uop.RangeReduceOp, tile: Tile, acc: ir.Value) -> ir.Value:
    kind, element = reduce_kind(reduction), reduction.result.type
    self.scopes.append(dict(tile.scope))
    self.column, self.row = tile.column, tile.row
    fused = element in (ir.F32Type.get(), ir.F64Type.get())  # f16/bf16 fma would need a runtime library call
    if (factors := widened_product(reduction)) is not None:
      result = math.fma(*(self.vector(widen(self.emit(factor))) for factor in factors), acc)
    elif kind == uop.ReduceKind.add and fused and (product := defining(reduction.src, uop.MulOp)) is not None:
      result = math.fma(self.vector(self.emit(product.lhs)), self.vector(self.emit(product.rhs)), acc)
    else:
      result = combine(kind, element, acc, self.vector(self.emit(reduction.src)))
    self.scopes.pop()
    return result


def only_if(condition: ir.Value, combining: Callable[[], list[ir.Value]], accs: list[ir.Value]) -> list[ir.Value]:
  """The accumulators `combining` emits where `condition` holds, else `accs` unchanged."""
  branch = scf.IfOp(condition, [acc.type for acc in accs], has_else=True)
  with ir.InsertionPoint(branch.then_block):
    scf.YieldOp(combining())
  with ir.InsertionPoint(branch.else_block):
    scf.YieldOp(accs)
  return list(branch.results)


def one_hot_mask(reduction: uop.RangeReduceOp, j: ir.Value | None) -> ir.Value | None:
  """The mask `p == q` of a sum of where(p == q, x, 0) (through a cast) when the mask does not vary along `j`: a one-hot
  sum that rangeify could not turn into one read, as the gradient of indexing or of an embedding (a table's row v sums
  the output gradients at the positions whose index is v). Equal to at most one of a block's rows for each reduce step,
  so most steps contribute nothing to the block; None for any other reduction."""
  if reduce_kind(reduction) is not uop.ReduceKind.add:
    return None
  select = reduction.src.owner.operands[0] if defined_by(reduction.src, uop.CastOp) else reduction.src
  if not defined_by(select, uop.WhereOp) or not is_zero(select.owner.operands[2]):
    return None
  mask = select.owner.operands[0]
  return mask if defined_by(mask, uop.CmpeqOp) and (j is None or not uses_any(mask, {j})) else None


def row_index(mask: ir.Value, u: ir.Value | None) -> tuple[ir.Value, ir.Value] | None:
  """(p, u as an element) of an integer mask p == u (the range cast to p's type directly), p not varying with `u`; else
  None."""
  if u is None:
    return None
  a, b = mask.owner.operands
  for p, position in ((a, b), (b, a)):
    direct = is_position(position, u) and not defined_by(position, uop.CastOp)
    if direct and isinstance(p.type, ir.IntegerType) and not uses_any(p, {u}):
      return p, position
  return None


def same_under(a: ir.Value, b: ir.Value, renamed: dict[ir.Value, ir.Value]) -> bool:
  """Whether `a` computes what `b` does with each range in `renamed` in place of its value (pairs compared from a stack:
  the computations can be thousands of ops deep)."""
  pairs, seen = [(a, b)], set()
  while pairs:
    if (pair := pairs.pop()) in seen:
      continue
    seen.add(pair)
    a, b = pair
    if a in renamed or a == b:
      if renamed.get(a, a) != b:
        return False
      continue
    if isinstance(a, ir.BlockArgument) or isinstance(b, ir.BlockArgument) or a.type != b.type:
      return False
    x, y = a.owner, b.owner
    if x.name != y.name or isinstance(x, uop.RangeOp) or len(x.operands) != len(y.operands) or len(x.results) != 1:
      return False
    if {n: str(v) for n, v in x.attributes.items()} != {n: str(v) for n, v in y.attributes.items()}:
      return False
    pairs.extend(zip(x.operands, y.operands))
  return True


def row_sum_twin(reduction: uop.RangeReduceOp, stored: uop.StoreOp, j: ir.Value, lanes: int) -> ir.Value | None:
  """The value along `j` in the stored computation that is the body of `reduction` (a float sum over one range as
  long as `j`, a multiple of the lanes) with `j` for that range; None if there is none."""
  ranges = list(reduction.ranges)
  size = range_size(j)
  if (
    reduce_kind(reduction) != uop.ReduceKind.add
    or not is_float(reduction.result.type)
    or len(ranges) != 1
    or range_size(ranges[0]) != size
    or size % lanes
  ):
    return None
  twin = next(
    (
      op.results[0]
      for op in computation(stored.value, into_reductions=False)
      if len(op.results) == 1
      and not isinstance(op, uop.RangeReduceOp)
      and same_under(op.results[0], reduction.src, {j: ranges[0]})
    ),
    None,
  )
  if twin is None:
    return None
  # reading a cheap value again costs less than keeping it
  return twin if weight(computation(twin, into_reductions=False)) >= KEEP_WEIGHT else None


def tile_ranges(tile: dict[str, int], loops: list[ir.Value]) -> tuple[ir.Value, ir.Value | None]:
  """The output range in the lanes (`j`: `along`'s, else the innermost) and the upcast range `u` (None without one)."""
  j = range_with_id(loops, tile["along"]) if "along" in tile else loops[-1]
  return j, next((r for r in loops if r is not j and ir.IntegerAttr(r.owner.id).value == tile["upcast"]), None)


def overlapping_blocks(kernel: ir.Operation, loops: list[ir.Value]) -> bool:
  """Whether a kernel marked for vector code has a partial last block along `j` or `u`, which block_start moves back
  over its neighbour (computing those outputs twice)."""
  tile = VECTOR.get(kernel)
  j, u = tile_ranges(tile, loops)
  crossed = "transpose" in tile and range_size(range_with_id(loops, tile["transpose"])) % tile["lanes"] != 0
  return (
    range_size(j) % (tile["lanes"] * tile["vectors"]) != 0
    or (u is not None and range_size(u) % tile["rows"] != 0)
    or crossed
  )


def range_with_id(loops: list[ir.Value], id: int) -> ir.Value:
  """The range of `loops` whose uop.range has this id (a pytc.vector choice names ranges by id)."""
  return next(r for r in loops if ir.IntegerAttr(r.owner.id).value == id)


def block_start(block: ir.Value, length: int, size: int) -> ir.Value:
  """The first index of block `block` of `length` along a range of `size`; a last, partial block is moved back to end
  at `size`, overlapping its neighbour (the kernel's stores are pure, so writing those outputs twice is harmless, unless
  the kernel may write into a buffer it reads: see lower_kernel)."""
  start = arith.muli(block, index_constant(length))
  return start if size % length == 0 else arith.minsi(start, index_constant(size - length))


class Blocks(NamedTuple):
  """The blocked loops of a tile: each output range's index (for `j` and `u`, where their block starts), the extent of
  the outermost parallel range, the points before the loops over `j` and over the group of `u` (there, values shared by
  the loop are computed; None: before the first inner loop), the point inside, and for `u` the first block of its group,
  the block's place in the group and how many blocks the group has."""

  starts: dict[ir.Value, ir.Value]
  extent: int
  before: dict[ir.Value | None, ir.InsertionPoint]
  inside: ir.InsertionPoint
  group: tuple[ir.Value, ir.Value, ir.Value] | None = None


def tile_loops(
  loops: list[ir.Value],
  bounds: tuple[ir.Value, ir.Value],
  j: ir.Value,
  u: ir.Value | None,
  width: int,
  rows: int,
  group: int,
  chunks: int = 1,
) -> Blocks:
  """The blocked loops: a parallel loop over the output ranges other than `j` (`u` in groups of `group` blocks of
  `rows`), the outermost over `bounds`, inside it the blocks of `j`, inside those the blocks of `u` in the group.
  With `j` the only range, the parallel loop runs over its blocks. With `chunks` (`u` outermost), the outermost parallel
  index runs over chunks x groups, groups fastest, and each takes its consecutive run of the blocks of `j`: a core's
  consecutive indices share their runs of `j`, so it reads the panels of its runs once for all its groups."""
  if j is not loops[-1]:
    return tile_loops_along(loops, bounds, j, u, width, rows)
  outer = [r for r in loops if r is not j] or [j]
  blocks = -(-range_size(u) // rows) if u is not None else 0
  sizes = [-(-range_size(r) // width) if r is j else -(-blocks // group) if r is u else range_size(r) for r in outer]
  sizes[0] *= chunks
  zero, one = index_constant(0), index_constant(1)
  body = parallel_over(sizes, bounds)
  starts = dict(zip(outer, body.arguments))
  point = ir.InsertionPoint.at_block_terminator(body)
  before: dict[ir.Value | None, ir.InsertionPoint] = {None: point}
  with point:
    if j in starts:
      starts[j] = block_start(starts[j], width, range_size(j))
    column_blocks = index_constant(-(-range_size(j) // width))
    # this index's group, and its chunk's run of the blocks of j: [chunk * blocks / chunks, (chunk + 1) * blocks /
    # chunks)
    if chunks > 1:
      groups = index_constant(sizes[0] // chunks)
      chunk, starts[u] = arith.divui(starts[u], groups), arith.remui(starts[u], groups)
      inner = [
        (
          j,
          *[arith.divui(arith.muli(c, column_blocks), index_constant(chunks)) for c in (chunk, arith.addi(chunk, one))],
        )
      ]
    else:
      inner = [(j, zero, column_blocks)] if j not in starts else []
    if u is not None:  # the group's first block of u, and how many it has (the last group of a partial count: fewer)
      first = arith.muli(starts[u], index_constant(group))
      count = (
        index_constant(group)
        if blocks % group == 0
        else arith.minsi(index_constant(group), arith.subi(index_constant(blocks), first))
      )
      inner.append((u, zero, count))
  group_blocks = None
  for r, lower, extent in inner:
    with point:
      loop = scf.ForOp(lower, extent, one)
      if r is u:
        group_blocks = (first, loop.induction_variable, count)
    before[r] = ir.InsertionPoint(loop.operation)
    if r is inner[0][0]:
      before[None] = before[r]
    with ir.InsertionPoint(loop.body):
      block = loop.induction_variable if r is j else arith.addi(group_blocks[0], loop.induction_variable)
      starts[r] = block_start(block, width if r is j else rows, range_size(r))
      scf.YieldOp([])
    point = ir.InsertionPoint.at_block_terminator(loop.body)
  return Blocks(starts, sizes[0], before, point, group_blocks)


def tile_loops_along(
  loops: list[ir.Value], bounds: tuple[ir.Value, ir.Value], j: ir.Value, u: ir.Value | None, width: int, rows: int
) -> Blocks:
  """The blocked loops of a kernel vectorized along an output range `j` other than its innermost: a parallel loop over
  the blocks of `j` over `bounds`, inside it loops over the other output ranges (`u` by blocks of `rows`), so that
  a panel packed before them serves every output of the block. Returns what tile_loops does."""
  one = index_constant(1)
  body = parallel_over([-(-range_size(j) // width)], bounds)
  point = ir.InsertionPoint.at_block_terminator(body)
  with point:
    starts = {j: block_start(body.arguments[0], width, range_size(j))}
  first = None
  for r in [r for r in loops if r is not j]:
    with point:
      loop = scf.ForOp(index_constant(0), index_constant(-(-range_size(r) // rows) if r is u else range_size(r)), one)
    first = first or ir.InsertionPoint(loop.operation)
    with ir.InsertionPoint(loop.body):
      starts[r] = block_start(loop.induction_variable, rows, range_size(r)) if r is u else loop.induction_variable
      scf.YieldOp([])
    point = ir.InsertionPoint.at_block_terminator(loop.body)
  return Blocks(starts, -(-range_size(j) // width), {None: first, u: first}, point)


def lower_transposed_body(
  lowering: BlockedVectorLowering,
  stored: uop.StoreOp,
  loops: list[ir.Value],
  bounds: tuple[ir.Value, ir.Value],
  i: ir.Value,
) -> int:
  """An elementwise kernel that reads across rows what it writes along them (out[i, j] = a[j, i]), in tiles of lanes x
  lanes outputs: a parallel loop over the output ranges with `i` and `j` counted in blocks of the lanes (the first over
  `bounds`); in each tile, every read across rows as one vector along `i` per output of `j` (contiguous loads: each
  cache line read once, whole), turned by shuffles into one vector along `j` per output of `i`; then per output of `i`
  the rest of the body as vector code along `j` and one vector store. Returns the extent of the first range."""
  j, lanes = loops[-1], lowering.lanes
  sizes = [-(-range_size(r) // lanes) if r == i or r == j else range_size(r) for r in loops]
  body = parallel_over(sizes, bounds)
  with ir.InsertionPoint.at_block_terminator(body):
    starts = {r: block_start(v, lanes, range_size(r)) if r == i or r == j else v for r, v in zip(loops, body.arguments)}
    lowering.scopes.append({r: v for r, v in starts.items() if r != i and r != j})
    crossed = [
      op
      for op in computation(stored.value)
      if isinstance(op, uop.IndexOp) and (r := transposed_range(op, loops, j)) is not None and r == i
    ]
    columns: dict[ir.Value, list[ir.Value]] = {}
    for read in crossed:
      rows = []
      for lane in range(lanes):
        lowering.scopes.append({i: Strided(starts[i], 1), j: arith.addi(starts[j], index_constant(lane))})
        rows.append(lowering.vector(lowering.emit(read.result)))
        lowering.scopes.pop()
      columns[read.result] = transposed(rows)
    for lane in range(lanes):
      lowering.scopes.append(
        {
          i: arith.addi(starts[i], index_constant(lane)),
          j: Strided(starts[j], 1),
          **{value: flipped[lane] for value, flipped in columns.items()},
        }
      )
      lowering.store(stored)
      lowering.scopes.pop()
  return sizes[0]


def interleaved(phases: list[ir.Value]) -> ir.Value:
  """One vector holding lane l of phases[q] at l * len(phases) + q: the phases joined, then one permutation."""
  lanes, joined = ir.VectorType(phases[0].type).shape[0], phases[0]
  for phase in phases[1:]:
    joined = vector.shuffle(joined, phase, list(range(ir.VectorType(joined.type).shape[0] + lanes)))
  return vector.shuffle(joined, joined, [q * lanes + lane for lane in range(lanes) for q in range(len(phases))])


def lower_interleaved_body(
  lowering: BlockedVectorLowering,
  stored: uop.StoreOp,
  loops: list[ir.Value],
  bounds: tuple[ir.Value, ir.Value],
  entry: ir.Block,
) -> int:
  """An elementwise kernel storing out[.., j, q] with a short innermost range `q` (see choose_interleave): a parallel
  loop over the outer ranges and the blocks of `j` (the first over `bounds`); in each, the body as vector code along `j`
  once per value of `q` (a constant there, so conditions on the phase fold), the vectors interleaved by shuffles and
  stored as one contiguous vector into the output viewed with its last two dims merged. Returns the extent of the first
  range."""
  (*outer, j, q), lanes = loops, lowering.lanes
  phases = range_size(q)
  sizes = [range_size(r) for r in outer] + [-(-range_size(j) // lanes)]
  body = parallel_over(sizes, bounds)
  buffer = lowering.emit(stored.dst)
  shape = ir.MemRefType(buffer.type).shape
  with ir.InsertionPoint.at_block_begin(entry), entry.owner.location:
    merged = ir.MemRefType.get([*shape[:-2], shape[-2] * shape[-1]], ir.MemRefType(buffer.type).element_type)
    view = memref.collapse_shape(
      merged, buffer, [[d] for d in range(len(shape) - 2)] + [[len(shape) - 2, len(shape) - 1]]
    )
  with ir.InsertionPoint.at_block_terminator(body):
    j_start = block_start(body.arguments[-1], lanes, range_size(j))
    lowering.scopes.append(dict(zip(outer, body.arguments)))
    values = []
    for phase in range(phases):
      lowering.scopes.append({j: Strided(j_start, 1), q: index_constant(phase)})
      values.append(lowering.vector(lowering.emit(stored.value)))
      lowering.scopes.pop()
    positions = [lowering.emit(i) for i in list(stored.indices)[:-2]] + [arith.muli(j_start, index_constant(phases))]
    vector.store(store(stored.value.type, interleaved(values)), view, positions)
    lowering.scopes.pop()
  return sizes[0]


def lower_vector_body(
  kernel: ir.Operation,
  lowering: BlockedVectorLowering,
  stored: uop.StoreOp,
  loops: list[ir.Value],
  entry: ir.Block,
  bounds: tuple[ir.Value, ir.Value],
) -> int:
  """Emit the blocked loops (the outermost parallel range over `bounds`) and their vector body into `entry`; the extent
  of the outermost parallel range.
  In stream mode (elementwise along `j`), the reductions vary only with the outer ranges: they are computed as
  scalar loops once per outer iteration, before the loop along `j`."""
  tile = VECTOR.get(kernel)
  if "transpose" in tile:
    return lower_transposed_body(lowering, stored, loops, bounds, range_with_id(loops, tile["transpose"]))
  if "interleave" in tile:
    return lower_interleaved_body(lowering, stored, loops, bounds, entry)
  lanes, vectors, rows, group, upcast, pack, unroll = (
    tile[k] for k in ("lanes", "vectors", "rows", "group", "upcast", "pack", "unroll")
  )
  stream = tile.get("stream", 0) == 1
  j, u = tile_ranges(tile, loops)
  width = lanes * vectors
  blocks = tile_loops(loops, bounds, j, u, width, rows, group, tile.get("chunks", 1))
  starts, extent, before, point = blocks.starts, blocks.extent, blocks.before, blocks.inside
  reductions = [] if stream else top_level_reductions(stored.value)
  if unroll:
    lowering.roots = {r: uniform_roots(r, j) for r in reductions}
  lowering.scopes.append({r: v for r, v in starts.items() if r is not j and r is not u})
  lowering.aligned_j, lowering.upcast = j, u
  if stream:
    with before[None]:
      for reduction in hoisting_depth(stored, loops[:-1] + [j])[1]:
        if (cached := row_sum_twin(reduction, stored, j, lanes)) is not None:
          lowering.sum_row(reduction, cached, entry)
        else:
          lowering.emit(reduction.result)
  if pack:
    with before[u]:
      for reduction in reductions:
        for value in pack_values(reduction, j, u):
          lowering.pack(value, reduction, j, starts[j], width, entry)
    if u is not None and blocks.group is not None and (row_values := row_pack_values(reductions, j, u, unroll)):
      with before[j]:
        for reduction, values in row_values.items():
          for value in values:
            lowering.pack_rows(value, reduction, u, blocks.group, group, rows, entry)
  with point:
    tiles = []
    for row in range(rows):
      for column in range(vectors):
        scope = {j: Strided(arith.addi(starts[j], index_constant(column * lanes)), 1)}
        if u is not None:
          scope[u] = arith.addi(starts[u], index_constant(row))
        tiles.append(Tile(scope, row, column * lanes))
    for row in range(rows):  # reductions inside the tile reductions vary only with the row: once per tile row
      row_tiles = [tile for tile in tiles if tile.row == row]
      lowering.scopes.append({u: row_tiles[0].scope[u]} if u is not None else {})
      values = {nested.result: lowering.emit(nested.result) for nested in row_reductions(reductions)}
      lowering.scopes.pop()
      for tile in row_tiles:
        tile.scope.update(values)
    results: dict[uop.RangeReduceOp, list[ir.Value]] = {}
    for reduction in reductions:
      element = reduction.result.type
      identity = vector.broadcast(
        lowering.vector_type(signless(element)), reduce_identity(reduce_kind(reduction), element)
      )
      results[reduction] = lowering.accumulate(reduction, list(reduction.ranges), tiles, [identity] * len(tiles))
    if results and not row_reductions(reductions) and stores_along_rows(stored, j, u, rows, lanes):
      store_along_rows(lowering, stored, results, (j, starts[j]), (u, starts[u]), rows, vectors, entry)
      return extent
    for position, tile in enumerate(tiles):
      lowering.scopes.append({**tile.scope, **{r.result: accs[position] for r, accs in results.items()}})
      lowering.store(stored)
      lowering.scopes.pop()
  return extent


def stores_along_rows(stored: uop.StoreOp, j: ir.Value, u: ir.Value | None, rows: int, lanes: int) -> bool:
  """Whether the tile's outputs are contiguous along its rows rather than along its vectors: the store's last index is
  the rows' range `u` (a convolution's output x, when the vectors run along output channels), with a power-of-two count
  of rows dividing the lanes and no longer than `u`, or up to the lanes' count of rows covering all of `u` (the 3 taps
  of a 3x3 convolution's weight gradient, vectors along its output channels)."""
  last = list(stored.indices)[-1]
  if u is None or last != u or last == j or rows < 2:
    return False
  return (rows == range_size(u) and rows <= lanes) or (shuffles_rows(rows, lanes) and range_size(u) >= rows)


def shuffles_rows(rows: int, lanes: int) -> bool:
  """Whether squares of rows x rows accumulators transpose by shuffles: a power-of-two count of rows dividing the
  lanes."""
  return not rows & (rows - 1) and lanes % rows == 0


def store_along_rows(
  lowering: BlockedVectorLowering,
  stored: uop.StoreOp,
  results: dict[uop.RangeReduceOp, list[ir.Value]],
  j: tuple[ir.Value, ir.Value],
  u: tuple[ir.Value, ir.Value],
  rows: int,
  vectors: int,
  entry: ir.Block,
) -> None:
  """The tile's outputs as vectors along the rows: each square of rows x rows accumulators (rows of the tile, a slice of
  one vector's lanes) transposed by shuffles into one vector per output of `j`, along `u`, kept in a stack buffer; then
  one loop over the tile's outputs of `j` computes the rest of the output (a batch norm, a residual add) and stores it
  as vectors of `rows` lanes along `u`: contiguous loads and stores where the tile's own vectors would read and write
  lane by lane, and the rest emitted once rather than once per output. Rows that are no power of two dividing the lanes
  (the 3 taps of a weight gradient's row) are stored as they are, a row of the tile's width each, and each output's
  column read back element by element (from L1, where the tile's own vectors would gather its reads from memory: a
  512-channel 3x3 weight gradient with its momentum update 1.7x faster). (j, u): each range and where the tile starts on
  it."""
  (j, j_start), (u, u_start), lanes, aligned = j, u, lowering.lanes, lowering.aligned_j
  width, columns = lanes * vectors, {}
  shuffled = shuffles_rows(rows, lanes)  # else each output's rows are gathered from the accumulators as stored
  for reduction, accs in results.items():
    square = ir.VectorType.get([rows], ir.VectorType(accs[0].type).element_type)
    shape = [width, rows] if shuffled else [rows, width]
    with ir.InsertionPoint.at_block_begin(entry):
      buffer = memref.alloca(ir.MemRefType.get(shape, square.element_type), [], [])
    for column in range(vectors):
      if not shuffled:
        for row in range(rows):
          vector.store(accs[row * vectors + column], buffer, [index_constant(row), index_constant(column * lanes)])
        continue
      for part in range(lanes // rows):
        slices = [
          vector.extract_strided_slice(square, accs[row * vectors + column], [part * rows], [rows], [1])
          for row in range(rows)
        ]
        for i, flipped in enumerate(transposed(slices)):
          vector.store(flipped, buffer, [index_constant(column * lanes + part * rows + i), index_constant(0)])
    columns[reduction.result] = buffer, square
  loop = scf.ForOp(index_constant(0), index_constant(width), index_constant(1), [])
  lowering.lanes, lowering.aligned_j = rows, None  # a moved-back block of u starts anywhere: no alignment to claim

  def column_of(buffer: ir.Value, square: ir.VectorType, output: ir.Value) -> ir.Value:
    if shuffled:
      return vector.load(square, buffer, [output, index_constant(0)])
    return vector.from_elements(square, [memref.load(buffer, [index_constant(row), output]) for row in range(rows)])

  try:
    with ir.InsertionPoint(loop.body):
      output = loop.induction_variable
      transposed_results = {value: column_of(buffer, square, output) for value, (buffer, square) in columns.items()}
      lowering.scopes.append({j: arith.addi(j_start, output), u: Strided(u_start, 1), **transposed_results})
      lowering.store(stored)
      lowering.scopes.pop()
      scf.YieldOp([])
  finally:
    lowering.lanes, lowering.aligned_j = lanes, aligned


def lower_across_body(
  kernel: ir.Operation,
  lowering: BlockedVectorLowering,
  stored: uop.StoreOp,
  loops: list[ir.Value],
  entry: ir.Block,
  bounds: tuple[ir.Value, ir.Value],
) -> int:
  """`across` with `rows` = the lanes: blocks of `lanes` outputs along the innermost output range `j`. A loop over the
  block's outputs computes their reductions one by one (each vector code along its row) into small stack buffers; the
  rest of the output (a logsumexp's log, a mean's scale) is then vector code over the block, stored as a vector where
  the output runs along `j`. Returns the extent of the outermost parallel range."""
  j, lanes = loops[-1], lowering.lanes
  blocks = tile_loops(loops, bounds, j, None, lanes, 1, 1)
  starts, extent, point = blocks.starts, blocks.extent, blocks.inside
  lowering.scopes.append({r: v for r, v in starts.items() if r is not j})
  lowering.aligned_j = j
  # the reductions of each output (a logsumexp's max too, nested in its sum), each after those it uses
  outputs = set(loops)
  reductions = [
    op for op in computation(stored.value) if isinstance(op, uop.RangeReduceOp) and free_ranges(op) <= outputs
  ]
  with ir.InsertionPoint.at_block_begin(entry):
    rows = {r: memref.alloca(ir.MemRefType.get([lanes], r.result.type), [], []) for r in reductions}
  with point:
    # one loop over the block per reduction: the rows' chains are independent
    for done, reduction in enumerate(reductions):
      loop = scf.ForOp(index_constant(0), index_constant(lanes), index_constant(1))
      with ir.InsertionPoint(loop.body):
        lane = loop.induction_variable
        lowering.scopes.append(
          {j: arith.addi(starts[j], lane), **{r.result: memref.load(rows[r], [lane]) for r in reductions[:done]}}
        )
        memref.store(lowering.emit(reduction.result), rows[reduction], [lane])
        lowering.scopes.pop()
        scf.YieldOp([])
    gathered = {
      r.result: vector.load(lowering.vector_type(r.result.type), row, [index_constant(0)]) for r, row in rows.items()
    }
    lowering.scopes.append({j: Strided(starts[j], 1), **gathered})
    lowering.store(stored)
    lowering.scopes.pop()
  return extent
