"""pytc-vectorize: choose kernels whose innermost output range becomes vector lanes, register-blocked.

A reduction that reads a buffer along the kernel's innermost output range `j` (the `b[k, j]` of a matmul, the
`w[j, k]` of `x @ w.T`, the `x[c, y + ky, x + kx]` of a convolution) is computed `lanes` outputs at a time along
`j`, `vectors` such vectors side by side, and `rows` values of one more output range `u` at once (tinygrad's
upcast): `rows * vectors` accumulator vectors stay in registers across the whole reduction, and each vector
read along `j` is reused for all `rows`. `u` is the innermost output range that no read along `j` depends on,
so the reuse is real; blocks of `u` come in groups of up to `group` that share one pass over `j`, fewer when `u` is the
outermost range, so that it keeps at least two groups per core on several cores (`cores`: the runtime splits that range
across them), unless fewer groups hold all of `u` within an L2 (`l2`): then the cores split each group's blocks of `j`
into `chunks` runs instead (column_chunks), and each reads its share of the panels once. A
kernel with no such `u` (one output row: a column sum, a vector times a matrix) keeps scalar loops when pytc-order-loops
looped its reductions outside `j`: with no read to reuse, reading memory in order is what counts. With `pack`, the
float reads along `j` are copied once per group into a contiguous panel (reduce ranges x one block of `j`,
at most PACK_BYTES), so the hot loop reads it in order whatever the source layout; without it every read
along `j` must be contiguous in its last index. Reads that are contiguous already are packed too: read in place, a
panel's rows lie a row of the source apart, and at strides of a multiple of 4 KiB (b of 3072 or 4096 columns) they fall
into a few cache sets and miss (the 128 x 768 x 3072 of GPT-2 and 16 x 4096 x 4096 matmuls ran 1.9x and 2.4x slower
in place). Work in the body that does not depend on `j` (the softmax
fused into attention's second matmul) is done once per tile row and reduce step; when there is much of it
(WIDE_WEIGHT), `unroll` has it computed as vectors along the innermost reduce range, `lanes` steps at once
(that range's size must divide by `lanes`; otherwise the kernel gets one row of up to WIDE_VECTORS vectors).
A kernel whose reductions do not vary along `j` (elementwise work, or a row's max or mean fused into it) gets
stream mode (`stream = 1`) when its store and every read that moves with `j` are contiguous along it: vector
loads and stores along `j`, the reductions computed once per row before the loop along `j` (a float sum whose
body the output also computes along `j`, like softmax's exponentials, as vector code that keeps that body in a
row buffer for the loop along `j` to read back), and stores
aligned to the vector (non-temporal for outputs of STREAM_BYTES or more) where rows are a multiple of the
lanes. The kernel gets `pytc.vector = {lanes, vectors, rows, group, upcast, pack, unroll[, stream][, along][, across][,
chunks]}` (`upcast` is the id of `u`, -1 if none; `along` the id of `j` when it is not the innermost output range) and
pytc-lower-kernels emits vector code for it; kernels whose reductions nest or whose innermost range is
narrower than `lanes` keep scalar loops, unless another output range serves as `j` (`along`, see along_range: a
convolution's output channels, when there are enough of them to fill ALONG_LEAST_TILES register tiles or its outputs are
narrower than a vector (fewer channels take rows of the tile instead, the windows read in place along the innermost
range), whose weights one panel holds for every pixel; the parallel loop then runs over its
blocks, the panel packed once per block, and the stores go lane by lane); such a kernel takes at most `along_rows` rows
(4: each row's input reads are gathered and gated, and 8 rows ran 1.1-1.35x slower on every 3x3 and 7x7 convolution of
the shape sweep, as the kernel search found) unless `rows` covers the whole range in one block (7x7 outputs: 7 rows). A
kernel left to scalar loops whose reductions all reduce contiguous rows (sums of 1M rows of 16) gets `across = 1`:
each reduction becomes vector code along its row; with at least `lanes` outputs along the innermost output range
(`rows` = lanes) and nested reductions or a heavy rest (BLOCK_WEIGHT), blocks of that many outputs compute each
reduction row by row into a stack buffer, then the rest of the output (a logsumexp's log) as vectors over the block
(rows of 64: 1.7x). Otherwise the outputs stay scalar loops, and with fewer outputs than the lanes a kernel whose
reduction's body holds another (a logsumexp's max) keeps scalar loops, which LLVM vectorizes faster (1.1-1.4x, as the
kernel search found). A kernel's `pytc.tune` (a searched winner) replaces the options for it: its lanes, vectors, rows
and group, `pack = 0` to read in place (1 to pack), `vectorize = 0` to keep scalar loops.
"""

import sys
from math import prod
from typing import Annotated

from mlir import ir

from pytc.dialects import uop
from pytc.helpers import DEBUG
from pytc.passes import Within, functions_with, range_size, register
from pytc.passes.codegen.scalar import is_float, width
from pytc.passes.codegen.vector import folded_indices, is_contiguous, row_reducible
from pytc.passes.common.analysis import (
  computation,
  free_ranges,
  kernel_end,
  sibling_stores,
  top_level_reductions,
  unchanging,
  uses_any,
  weight,
)
from pytc.passes.common.attributes import KERNEL, LOOP_ORDER, TUNE, VECTOR, LoopOrder

PACK_BYTES = 1 << 20  # the largest panel (reduce ranges x one block of j) copied into a contiguous stack buffer: an L2
# a kernel vectorized along another range (a convolution's output channels) keeps its panel within half an L2, taking
# fewer vectors: the input windows it reads alongside need the rest (3x3 conv 512x7x7: a 295 KB panel 1.3x faster than
# 590 KB)
ALONG_PANEL_BYTES = PACK_BYTES // 2
# a convolution is vectorized along its output channels only when they fill this many register tiles' width: with fewer
# (16 or 32 channels of 16 lanes) the tile has too few accumulators, and the innermost range, its input windows read in
# place with rows of output channels, ran 1.6-3.5x faster (3x3 and 5x5 over 64-256 pixels; 64 channels: along 1.2x
# faster)
ALONG_LEAST_TILES = 2
# an `across` kernel takes blocks of rows when its reductions nest (their chains interleave across the rows) or the rest
# of its output weighs this much (a transcendental, computed as vectors): a plain sum or mean gains nothing (1M rows of
# 16: 0.9x)
BLOCK_WEIGHT = 4
# a group of row blocks costs about this many blocks' work besides its blocks (it packs its panel and passes over j
# once): so 125 blocks on 2 cores go in 4 groups of up to 32 (64 + 61 blocks), not 5 of 25 (75 + 50)
GROUP_COST = 1
# a register tile wider than a power of two of vectors (three, on some targets) is taken only while its partial last
# block computes at most this share of the columns again: 1024 columns in blocks of 48 (3 %) ran faster than in blocks
# of 32, 64 or 256 columns (50 %, 12.5 %) slower
MAX_OVERLAP = 1 / 16
WIDE_WEIGHT, WIDE_VECTORS = 8, 8  # a body with this much work independent of j runs one row of up to 8 vectors
# an elementwise kernel whose innermost output range is this short or shorter (the phases of a strided gradient, a stack
# along the last dim) is vectorized along the range before it, the phases interleaved by shuffles (see
# choose_interleave)
INTERLEAVE_PHASES = 4


def varying_reads(reduction: uop.RangeReduceOp, j: ir.Value) -> list[uop.IndexOp]:
  """The reads in the reduction's body that move with `j`."""
  return [op for op in computation(reduction.src) if isinstance(op, uop.IndexOp) and uses_any(op.result, {j})]


def pack_values(reduction: uop.RangeReduceOp, j: ir.Value, u: ir.Value) -> list[ir.Value]:
  """The largest float values in the reduction's body that move with `j` but not with `u` (a read along `j`, with
  the padding select around it): each is copied into a panel once per group."""
  found, stack, seen = [], [reduction.src], set()
  while stack:
    value = stack.pop()
    if isinstance(value, ir.BlockArgument) or value in seen or not uses_any(value, {j}):
      continue
    seen.add(value)
    if is_float(value.type) and not uses_any(value, {u}):
      found.append(value)
    else:
      stack.extend(value.owner.operands)
  return found


def panel_bytes(reduction: uop.RangeReduceOp, width: int) -> int:
  return width * 4 * prod(range_size(r) for r in reduction.ranges)


def steps_across_rows(read: uop.IndexOp, k: ir.Value) -> bool:
  """Whether the read moves with `k` in an index other than its last (trailing dimensions of size 1 aside: the w[o, c,
  0, 0] of a 1x1 convolution reads along c): each step of `k` lands on another row (the A[k, i] of A.T @ B)."""
  indices = folded_indices(read)
  return bool(indices) and any(uses_any(i, {k}) for i in indices[:-1]) and not uses_any(indices[-1], {k})


def row_pack_values(
  reductions: list[uop.RangeReduceOp], j: ir.Value, u: ir.Value, unroll: int
) -> dict[uop.RangeReduceOp, list[ir.Value]]:
  """Per reduction, the float values along `u` (not along `j`) read across rows as the innermost reduce range steps:
  with `pack`, they are copied once per group into a panel that each block of `u` reads in order. None with `unroll` or
  reductions computed per tile row (their work along `u` is emitted elsewhere)."""
  if unroll or row_reductions(reductions):
    return {}
  found = {}
  for reduction in reductions:
    k = reduction.ranges[-1]
    values = [
      v
      for v in pack_values(reduction, u, j)
      if any(isinstance(op, uop.IndexOp) and steps_across_rows(op, k) for op in computation(v))
    ]
    if values:
      found[reduction] = values
  return found


def row_reductions(reductions: list[uop.RangeReduceOp]) -> list[uop.RangeReduceOp]:
  """The reductions inside the bodies of `reductions`, in dependency order: a register-blocked kernel computes them
  once per tile row, before its own reductions, so they must vary only with output ranges other than `j`."""
  found: dict[uop.RangeReduceOp, None] = {}
  for reduction in reductions:
    found.update((op, None) for op in computation(reduction.src) if isinstance(op, uop.RangeReduceOp))
  return list(found)


def uniform_weight(reduction: uop.RangeReduceOp, j: ir.Value) -> int:
  """The arithmetic in the reduction's body that does not depend on `j`: each tile recomputes it."""
  return weight(
    [op for op in computation(reduction.src) if not isinstance(op, uop.IndexOp) and not uses_any(op.results[0], {j})]
  )


def uniform_roots(reduction: uop.RangeReduceOp, j: ir.Value) -> list[ir.Value]:
  """The largest values in the reduction's body that do not depend on `j` but do on its innermost reduce range:
  operands of the work that depends on `j` (or the whole body, if none does)."""
  body_value, k = reduction.src, reduction.ranges[-1]
  if not uses_any(body_value, {j}):
    return [body_value]
  roots = {}
  for op in computation(body_value):
    if not uses_any(op.results[0], {j}):
      continue
    for v in op.operands:
      if (
        not isinstance(v, ir.BlockArgument)
        and not isinstance(v.type, ir.IndexType)
        and uses_any(v, {k})
        and not uses_any(v, {j})
      ):
        roots[v] = None
  return list(roots)


def even_vectors(vectors: int) -> int:
  """The largest power of two of vectors up to `vectors`: the block of a kernel that is no register tile reusing its
  reads across rows (elementwise rows, a convolution's channels), or of a tile whose wider block would compute too much
  again (see MAX_OVERLAP), so that power-of-two rows split into whole blocks."""
  return 1 << (vectors.bit_length() - 1)


def overlap(size: int, width: int) -> float:
  """The share of a range of `size` computed twice in blocks of `width`, the partial last block moved back."""
  return -(-size // width) * width / size - 1


def transposed_range(read: uop.IndexOp, loops: list[ir.Value], j: ir.Value) -> ir.Value | None:
  """The output range `i` other than `j` that a read indexes last (trailing dimensions of size 1 aside), and no other
  index, while an earlier index moves with `j`: the a[j, i] of out[i, j] = a[j, i]. None for another read."""
  indices = folded_indices(read)
  if not indices:
    return None
  last = indices[-1]
  if last == j or last not in loops or not any(uses_any(index, {j}) for index in indices[:-1]):
    return None
  return None if any(uses_any(index, {last}) for index in indices[:-1]) else last


def choose_stream(store: uop.StoreOp, loops: list[ir.Value], lanes: int, vectors: int) -> dict[str, int] | None:
  """Elementwise work along `j` (reductions, if any, do not vary with it: a row's max or mean): vectors along `j`
  when the store and every read that moves with `j` are contiguous along it. Without reductions, reads across rows
  along one other output range `i` (a transpose: out[i, j] = a[j, i]) are taken too (`transpose`, the id of `i`): tiles
  of lanes x lanes outputs, each such read as vectors along `i` turned into vectors along `j` by shuffles."""
  j, indices = loops[-1], list(store.indices)
  if not indices or indices[-1] != j or any(uses_any(i, {j}) for i in indices[:-1]):
    return None
  reads = [op for op in computation(store.value) if isinstance(op, uop.IndexOp) and uses_any(op.result, {j})]
  if not (across := [op for op in reads if not is_contiguous(op, j)]):
    vectors = max(1, min(even_vectors(vectors), range_size(j) // lanes))
    return {
      "lanes": lanes,
      "vectors": vectors,
      "rows": 1,
      "group": 1,
      "upcast": -1,
      "pack": 0,
      "unroll": 0,
      "stream": 1,
    }
  crossed = {transposed_range(op, loops, j) for op in across}
  if (
    len(crossed) != 1 or None in crossed or top_level_reductions(store.value) or range_size(i := crossed.pop()) < lanes
  ):
    return None
  return {
    "lanes": lanes,
    "vectors": 1,
    "rows": 1,
    "group": 1,
    "upcast": -1,
    "pack": 0,
    "unroll": 0,
    "stream": 1,
    "transpose": ir.IntegerAttr(i.owner.id).value,
  }


def fitted_lanes(size: int, lanes: int) -> int:
  """The lanes along an output range of `size`: half-width vectors of 8 where wide registers outrun a narrow range."""
  return 8 if 8 <= size < lanes else lanes


def choose_interleave(store: uop.StoreOp, loops: list[ir.Value], lanes: int) -> dict[str, int] | None:
  """Elementwise work whose innermost output range `q` is too short for vectors (2 to INTERLEAVE_PHASES) and stored
  contiguously after the range `j` before it (out[.., j, q]: a strided convolution's input gradient with its phases,
  zeros or values, between the values of one): per block of `j`, one vector along `j` for each value of `q`, interleaved
  by shuffles into one contiguous store of q x lanes outputs (`interleave`, with `along` naming `j`). Every read that
  moves with `j` must be contiguous along it."""
  if len(loops) < 2 or top_level_reductions(store.value):
    return None
  q, j, indices = loops[-1], loops[-2], list(store.indices)
  if not 2 <= range_size(q) <= INTERLEAVE_PHASES or len(indices) < 2 or indices[-2:] != [j, q]:
    return None
  if any(uses_any(i, {j, q}) for i in indices[:-2]) or ir.MemRefType(store.dst.type).shape[-1] != range_size(q):
    return None
  lanes = fitted_lanes(range_size(j), lanes)
  if range_size(j) < lanes:
    return None
  if not all(
    is_contiguous(op, j) for op in computation(store.value) if isinstance(op, uop.IndexOp) and uses_any(op.result, {j})
  ):
    return None
  return {
    "lanes": lanes,
    "vectors": 1,
    "rows": 1,
    "group": 1,
    "upcast": -1,
    "pack": 0,
    "unroll": 0,
    "stream": 1,
    "interleave": 1,
    "along": ir.IntegerAttr(j.owner.id).value,
  }


def row_candidates(
  loops: list[ir.Value], j: ir.Value, reads: dict[uop.RangeReduceOp, list[uop.IndexOp]]
) -> list[ir.Value]:
  """The output ranges other than `j` that no read along `j` varies with: rows of such a range reuse each read."""
  return [
    r
    for r in loops
    if r is not j
    and range_size(r) > 1
    and not any(uses_any(read.results[0], {r}) for rs in reads.values() for read in rs)
  ]


def varies_elsewhere(loops: list[ir.Value], j: ir.Value, reads: dict[uop.RangeReduceOp, list[uop.IndexOp]]) -> bool:
  """Whether a read along `j` varies with another output range too: a panel of them serves only outputs that share
  it."""
  return any(
    r is not j and range_size(r) > 1 and uses_any(read.results[0], {r})
    for r in loops
    for rs in reads.values()
    for read in rs
  )


def along_range(loops: list[ir.Value], reductions: list[uop.RangeReduceOp], lanes: int) -> ir.Value | None:
  """The output range to vectorize along instead of the innermost, when that is narrower than even half-width vectors
  (a convolution's 7x7 outputs) or its reads vary with another output range too (a convolution's input windows vary with
  its rows: their panel would be packed again for each row) while this one's do not (its weights along the output
  channels: one panel serves every output of a block of channels). It is at least `lanes` wide, the reductions vary
  with it, its float reads along it fit a panel, and of several, the most outputs share its panel; a panel no other
  output range varies comes first (a convolution's input gradient at 4x4 pixels: 512 channels of weights, not a batch of
  8 whose output-gradient reads vary with the pixels too)."""
  narrow = range_size(loops[-1]) < min(lanes, 8)
  if not narrow and not varies_elsewhere(loops, loops[-1], {n: varying_reads(n, loops[-1]) for n in reductions}):
    return None
  # by whether no other output varies the panel
  best: dict[bool, tuple[ir.Value | None, int]] = {
    True: (None, 1),
    False: (None, 1),
  }
  for r in loops[:-1]:
    if range_size(r) < lanes or not any(uses_any(n.results[0], {r}) for n in reductions):
      continue
    reads = {n: varying_reads(n, r) for n in reductions}
    if not any(reads.values()) or not all(is_float(read.results[0].type) for rs in reads.values() for read in rs):
      continue
    if any(panel_bytes(n, lanes) > PACK_BYTES for n, rs in reads.items() if rs):
      continue
    if (own := not varies_elsewhere(loops, r, reads)) or narrow:
      if (shared := prod(range_size(c) for c in row_candidates(loops, r, reads))) > best[own][1]:
        best[own] = r, shared
  return best[True][0] or best[False][0]


def choose_across(kernel: ir.Operation, lanes: int, rows: int) -> dict[str, int] | None:
  """A kernel left to scalar loops whose reductions all reduce rows (1M sums of 16 contiguous floats, a logsumexp's max
  and sum): each reduction becomes vector code along its row (`across = 1`), and the rest of the output vector code over
  blocks of `lanes` outputs (`rows` = lanes) unless `rows` is 1 or the innermost output range is shorter."""
  end = kernel_end(kernel)
  if isinstance(end.src.owner.value, ir.BlockArgument) or LOOP_ORDER.get(kernel) is LoopOrder.REDUCE_OUTER:
    return None
  reductions = top_level_reductions(end.src.owner.value)
  if not reductions or not all(row_reducible(r, lanes) for r in reductions):
    return None
  nested = any(isinstance(op, uop.RangeReduceOp) for r in reductions for op in computation(r.src))
  epilogue = [
    op for op in computation(end.src.owner.value, into_reductions=False) if not isinstance(op, uop.RangeReduceOp)
  ]
  blocked = (
    rows > 1
    and bool(end.ranges)
    and range_size(list(end.ranges)[-1]) >= lanes
    and (nested or weight(epilogue) >= BLOCK_WEIGHT)
  )
  if not blocked and nested:
    return None  # see the module's doc
  return {
    "lanes": lanes,
    "vectors": 1,
    "rows": lanes if blocked else 1,
    "group": 1,
    "upcast": -1,
    "pack": 0,
    "unroll": 0,
    "across": 1,
  }


def busiest_core(blocks: int, group: int, cores: int) -> int:
  """The work of the busiest of `cores` cores when the runtime hands each a consecutive share of the groups of `group`
  blocks (the last group holds what is left): its blocks, plus GROUP_COST blocks per group it starts."""
  groups = -(-blocks // group)
  starts = [groups * i // cores for i in range(cores + 1)]
  return max(
    min(end * group, blocks) - min(start * group, blocks) + (end - start) * GROUP_COST
    for start, end in zip(starts, starts[1:])
  )


def group_size(blocks: int, most: int, cores: int, slices: int) -> int:
  """How many blocks of `u` share one pass over `j` (up to `most`, leaving at least `slices` groups): the size that
  leaves the busiest core least work, the larger of equals."""
  sizes = [g for g in range(1, min(most, blocks) + 1) if -(-blocks // g) >= slices] or [1]
  return min(sizes, key=lambda g: (busiest_core(blocks, g, cores), -g))


def column_chunks(
  blocks: int, group: int, block_bytes: int, column_blocks: int, cores: int, l2: int, chunks: int = 0, per_core: int = 2
) -> tuple[int, int]:
  """(group, chunks) for a kernel whose groups of `u` blocks the runtime splits across `cores`. A group's blocks are
  kept within an L2 (`l2` bytes) of the reads along `u` (`block_bytes` a block: a's rows), which each block of `j` reads
  again (a whole 2 MiB L2 of them ran 128 x 3072 x 768 and 256 x 4096 x 256 matmuls 1.15x faster than half of it). When
  that leaves fewer than `per_core` groups per core, the cores split `j` too: each group runs as `chunks` consecutive
  runs of the `column_blocks` blocks of `j`, so each core reads its share of the reads along `j` once instead of all of
  them per group (b of a 16- or 128-row matmul: 4x less traffic). `chunks` given (a searched choice) is taken as it
  is."""
  most = max(1, min(group, l2 // max(block_bytes, 1)))
  groups = -(-blocks // most)
  if not chunks:
    if groups >= per_core * cores or column_blocks < 2:
      return group, 1
    chunks = min(column_blocks, -(-per_core * cores // groups))
    while chunks < column_blocks and groups * chunks % cores:
      chunks += 1
  return -(-blocks // groups), max(1, min(chunks, column_blocks))


def choose_tile(
  kernel: ir.Operation,
  lanes: int,
  rows: int,
  vectors: int,
  group: int,
  allow_pack: bool | None = None,
  cores: int = 1,
  prefer_vector: bool = False,
  *,
  along_rows: int,
  chunks: int = 0,
  l2: int = PACK_BYTES,
) -> dict[str, int] | None:
  end = kernel_end(kernel)
  loops = list(end.ranges)
  if not loops:
    return None
  store = end.src.owner
  if isinstance(store.value, ir.BlockArgument):
    return None
  # a merged (elementwise) kernel: vectors along its rows where every store streams
  if siblings := sibling_stores(kernel):
    lanes = fitted_lanes(range_size(loops[-1]), lanes)
    tiles = (
      [choose_stream(s, loops, lanes, vectors) for s in [store, *siblings]]
      if range_size(loops[-1]) >= lanes
      else [None]
    )
    return tiles[0] if all(t is not None and "transpose" not in t for t in tiles) else None
  reductions = top_level_reductions(store.value)
  j = loops[-1]
  wide = along_range(loops, reductions, lanes) if allow_pack is not False else None
  # too few outputs along it to fill two tiles (a convolution of 32 channels): the innermost range, its windows read in
  # place
  few = (
    wide is not None
    and range_size(j) >= min(lanes, 8)
    and range_size(wide) < ALONG_LEAST_TILES * lanes * even_vectors(vectors)
  )
  if wide is not None and not few:
    j = wide
  else:
    lanes = fitted_lanes(range_size(j), lanes)
  if range_size(j) < lanes:
    return choose_interleave(store, loops, lanes) if j is loops[-1] else None
  if not any(uses_any(r.results[0], {j}) for r in reductions):
    return choose_stream(store, loops, lanes, vectors)
  rows_only = set(loops) - {j}
  if not all(free_ranges(n) <= rows_only for n in row_reductions(reductions)):
    return None  # truly nested reductions
  reads = {r: varying_reads(r, j) for r in reductions}
  if not any(reads.values()):
    return None
  unroll = 0
  candidates = row_candidates(loops, j, reads)
  if not candidates or j is not loops[-1] or overlap(range_size(j), lanes * vectors) > MAX_OVERLAP:
    vectors = even_vectors(vectors)
  if max(uniform_weight(r, j) for r in reductions) >= WIDE_WEIGHT:
    if all(range_size(r.ranges[-1]) % lanes == 0 for r in reductions):  # fewer, wider j blocks recompute it less often
      unroll, vectors, rows = 1, 4 if lanes >= 16 else even_vectors(vectors), min(rows, 4)
    else:
      vectors, rows = WIDE_VECTORS, 1
  vectors = max(1, min(vectors, range_size(j) // lanes))
  # along another range the reads are packed, so the panel must fit; along j, a panel too long for its vectors is packed
  # with fewer (a matmul over 8192 terms, 16 lanes: 2 vectors packed 2.2x faster than 3 read in place)
  if j is not loops[-1] or candidates:
    limit = ALONG_PANEL_BYTES if j is not loops[-1] else PACK_BYTES
    vectors = max(
      [1]
      + [v for v in range(1, vectors + 1) if all(panel_bytes(r, lanes * v) <= limit for r, rs in reads.items() if rs)]
    )
  floats = all(is_float(read.results[0].type) for rs in reads.values() for read in rs)
  # along another range the panel is packed once per block of j, before the loops over the other output ranges
  shared = j is loops[-1] or not varies_elsewhere(loops, j, reads)
  pack = (
    allow_pack is not False
    and not few
    and bool(candidates)
    and floats
    and shared
    and all(panel_bytes(r, lanes * vectors) <= PACK_BYTES for r, rs in reads.items() if rs)
  )
  contiguous = all(is_contiguous(read, j) for rs in reads.values() for read in rs)
  if not pack and not contiguous:
    return None
  along = {} if j is loops[-1] else {"along": ir.IntegerAttr(j.owner.id).value}
  if not candidates:
    # no row reuses a read: pytc-order-loops' reduce-outer loops stream through memory in order instead (a column sum, x
    # @ W for one x), unless one block spans `j`: then the vector loop reads in order too, its accumulators in registers
    # (16 columns summed)
    if LOOP_ORDER.get(kernel) is LoopOrder.REDUCE_OUTER and not prefer_vector and range_size(j) > lanes * vectors:
      return None
    return {
      "lanes": lanes,
      "vectors": vectors,
      "rows": 1,
      "group": 1,
      "upcast": -1,
      "pack": 0,
      "unroll": unroll,
      **along,
    }
  rows = min(rows, range_size(candidates[-1]))
  if along and rows < range_size(candidates[-1]):
    rows = min(rows, along_rows)  # unless one block holds the whole range
  blocks = -(-range_size(candidates[-1]) // rows)
  outermost = cores > 1 and candidates[-1] is loops[0]  # the runtime splits the groups of u across the cores
  slices = min(2 * cores, blocks) if outermost else 1  # groups of the outermost range: work for every core
  row_values = row_pack_values(reductions, j, candidates[-1], unroll) if pack and not along else {}
  if row_values:  # the panel of a group's rows fits
    per_block = max(panel_bytes(r, rows) // 4 * width(v.type) // 8 for r, values in row_values.items() for v in values)
    group = max(1, min(group, PACK_BYTES // per_block))
  split = {}
  if candidates[-1] is loops[0] and not along and (cores > 1 or chunks > 1):
    block_bytes, column_blocks = max(panel_bytes(r, rows) for r in reductions), -(-range_size(j) // (lanes * vectors))
    # a chunk packs its group's rows again: with such a panel, only as many slices as cores
    chunked_group, chunks = column_chunks(
      blocks, group, block_bytes, column_blocks, cores, l2, chunks, 1 if row_values else 2
    )
    if chunks > 1:
      group, split = chunked_group, {"chunks": chunks}
  if along:
    group = 1
  elif not split:
    group = group_size(blocks, group, min(cores, slices), slices)
  upcast = ir.IntegerAttr(candidates[-1].owner.id).value
  return {
    "lanes": lanes,
    "vectors": vectors,
    "rows": rows,
    "group": group,
    "upcast": upcast,
    "pack": int(pack),
    "unroll": unroll,
    **along,
    **split,
  }


@register(
  "pytc-vectorize",
  "mark kernels for register-blocked or streaming vector code (explain=1 prints each choice)",
  takes=("split", "scheduled", "kernel"),
)
def vectorize(
  module: ir.Operation,
  lanes: Annotated[int, Within(1, 64, power_of_two=True)] = 8,
  rows: Annotated[int, Within(1, 64)] = 4,
  vectors: Annotated[int, Within(1, 16)] = 2,
  group: Annotated[int, Within(1, 4096)] = 16,
  cores: Annotated[int, Within(1, 1024)] = 1,
  along_rows: Annotated[int, Within(1, 64)] = 4,
  l2: Annotated[int, Within(1 << 10, 1 << 34)] = PACK_BYTES,
  explain: bool = False,
) -> None:
  verbose = explain or DEBUG >= 3
  for fn in functions_with(module, uop.EndOp.OPERATION_NAME):
    if not KERNEL.get(fn):
      continue
    tune = TUNE.get(fn, {})
    with unchanging():  # the choice only reads the kernel: what uses_any learns about its values holds throughout
      tile = (
        None
        if tune.get("vectorize") == 0
        else choose_tile(
          fn.operation,
          tune.get("lanes", lanes),
          tune.get("rows", rows),
          tune.get("vectors", vectors),
          tune.get("group", group),
          None if "pack" not in tune else bool(tune["pack"]),
          1 if "group" in tune else cores,
          tune.get("vectorize") == 1,
          along_rows=tune.get("rows", along_rows),
          chunks=tune.get("chunks", 0),
          l2=l2,
        )
      )
      if tile is None and tune.get("vectorize") != 0:
        tile = choose_across(fn.operation, tune.get("lanes", lanes), tune.get("rows", rows))
    if verbose:
      print(f"pytc-vectorize: {fn.sym_name.value}: {tile if tile else 'scalar loops'}", file=sys.stderr)
    if tile:
      VECTOR.set(fn, tile)
