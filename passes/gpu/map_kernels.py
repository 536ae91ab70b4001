"""pytc-gpu-map: index-level kernels become `gpu.func` kernels of the upstream `gpu` dialect, one thread per output.

A kernel's output ranges (those its `uop.end` closes, outermost first) are flattened into one row-major output index.
Thread `gid = block_id.x * local + thread_id.x` computes the `outputs` consecutive outputs from `gid * outputs`, each
flat index split back into the ranges' indices with divui/remui by constant sizes; an `scf.if flat < total` guards them
only where the grid overshoots the outputs (a tail). The body is codegen's scalar lowering (kernel_lowering.py):
reductions are serial `scf.for` loops inside the thread, reads and writes plain `memref` loads and stores, the buffers
the same storage memrefs as on the CPU (no address spaces), so the emulation on the CPU and convert-gpu-to-nvvm/rocdl
take them alike. CPU hints (`pytc.vector`, `pytc.loop_order`) are not read.

Each kernel gets its own `gpu.module @<kernel>_module` holding `gpu.func @<kernel> kernel` (a binary per kernel: each
compiles, caches and loads alone, like the CPU's kernels dedupe by their IR), with `known_block_size = [local, 1, 1]`
and `pytc.gpu = {local, grid, outputs, total}` (attributes.py), which the runtime launches by; a kernel with no
outputs gets grid 0 and an empty body: it launches nothing. The top module becomes a `gpu.container_module`. The
`func.func` kernel is erased; where a `uop.launch` of the module names it, a private declaration with its parameters
stays, so the graph keeps verifying (the launch resolves to the gpu.func of that name).

`math_library=0` is for targets whose code links no math library (AMD code objects: no device library): the scalar
lowering then leaves no math op that would become a library call, f64 exp2/exp/log2/log/sin/cos and pow of every float
type included (transcendental.py); the f32 transcendentals are arithmetic on every target.

The workgroup holds `local_size` threads, or, for a kernel needing fewer threads, the power of two covering them (at
least a warp of 32): a 40-output kernel runs one workgroup of 64, not 256.

Vector outputs: each output of a thread is `vector` consecutive outputs along the innermost output range, as many as the
widest element the kernel reads or writes fits in `vector_bytes` (16: one 128-bit load on either vendor), when the
range's size is a multiple of them (so every vector starts at a multiple of the lanes), no reduction varies along it,
and the vectors still fill a workgroup. The body is then codegen's vector lowering (codegen/vector.py) with that range
in lanes: reads contiguous along it become one `vector.load`, others go lane by lane; a read or write whose last index
is the range itself, into rows a multiple of the lanes, claims the vector's alignment (the runtime's buffers are
aligned), so LLVM emits `ld.global.v4` / `global_load_dwordx4`. `vector_bytes=0` keeps scalar outputs.

Grouped reductions: a kernel's row reductions are those varying with output ranges only (softmax's max and sum, also
the max inside argmax's index reduction); a row is one combination of the output ranges they vary with (a softmax or
layernorm row, the one row of a whole-tensor sum). When `rows * group_reduce <` the longest reduction's length, few
rows would each leave one thread a long serial loop; when the reductions feed several outputs per row and are at least
`group_reduce` long, every thread of a row would compute them again (softmax over 1024 columns: 1024 times). Either way
the kernel runs ONE row per workgroup (grid = rows, no tail) of
L threads (local_size, or the power of two covering the reduction, at least a warp). Each row reduction in turn (a
later one reads the earlier ones' results): thread t combines the flat reduce indices t, t + L, ... into a partial,
stores it to its own workgroup attribution `memref<L x acc, #gpu.address_space<workgroup>>`, gpu.barrier, then an
scf.for over log2(L) halving steps, `if t < stride: shm[t] = combine(shm[t], shm[t + stride])` and a barrier each, and
every thread reads the result from shm[0]. Then thread t computes the row's outputs t, t + L, ... (a whole-tensor sum's
single output: thread 0). The combine is the CPU lowering's, from its identity (a float max propagates NaN through
arith.maximumf, as the CPU's NaN flag does). Barriers stay at the top level or in that scf.for (constant bounds, no
iter_args) and only scalars live across them, as pytc-gpu-emulate requires; `pytc.gpu` records `group` (the number of
grouped reductions) and `outputs` (per thread per row). `group_reduce=0` keeps every reduction serial in its thread.

Tiled matmuls: a kernel is matmul-shaped when its store is a function of one f32 add-reduction over one range k of a
product `a * b` (f32, or f16/bf16 factors whose product the sum widens: staged widened to f32, as the CPU multiplies
them), `a` varying with k, an output range i and output (batch) ranges `b` does not vary with, `b` with k, an
output range j and batch ranges `a` does not vary with (the innermost such range of each is i or j; `a` and `b` hold no
reduction). Unless grouped (few outputs, a long k), such a kernel runs tile x tile output tiles (`tile`, 16: 256
threads, needing local_size >= tile * tile), one per workgroup (grid = ceil(i / tile) * ceil(j / tile) * batch, the
batch index outermost in block_id.x); thread t computes output (i0 + t / tile, j0 + t % tile). For each k step of `tile`
(an scf.for without iter_args), each thread stages a(i0 + t / tile, k0 + t % tile) and b(k0 + t / tile, j0 + t % tile)
in two workgroup attributions `memref<tile x tile x f32>` (0 where out of bounds: computed under an scf.if, no barrier
inside), a barrier, adds its tile products in order to its own slot of a third attribution `memref<tile * tile x f32>`
(the accumulator outlives the barriers without being carried by the loop), a barrier; then what the store computes from
the sum, stored under `scf.if` where the tiles overshoot. `pytc.gpu` records `tile`; `tile=0` keeps the
thread-per-output mapping.
"""

import sys
from dataclasses import dataclass
from math import prod
from typing import Annotated

from mlir import ir
from mlir.dialects import arith, func, gpu, memref, scf

from pytc.dialects import uop
from pytc.helpers import DEBUG
from pytc.passes import Limit, Within, functions_with, range_size, register
from pytc.passes.codegen.kernel_lowering import (
  KernelLowering,
  combine,
  reduce_identity,
  storage_memref,
  widen,
  widened_product,
)
from pytc.passes.codegen.scalar import constant, load, storage_type, store
from pytc.passes.codegen.vector import Strided, VectorLowering
from pytc.passes.common.analysis import computation, defining, free_ranges, kernel_end, sibling_stores
from pytc.passes.common.attributes import GPU, KERNEL
from pytc.passes.common.forms import body
from pytc.passes.common.uops import reduce_kind

WARP = 32  # the smallest workgroup: one NVIDIA warp (half an AMD CDNA wavefront)
WORKGROUP = "#gpu.address_space<workgroup>"


@dataclass(frozen=True)
class Mapping:
  """How a kernel's `total` outputs spread over the grid: workgroups of `local` threads, `outputs` per thread; grouped
  (`group` reductions), one of `rows` rows per workgroup, `outputs` per thread in each row."""

  total: int
  local: int
  outputs: int
  rows: int = 0
  group: int = 0
  reduce: int = 0  # grouped: the longest reduction's length; tiled: the reduction's
  tile: int = 0  # tiled: the side of each workgroup's square output tile
  tiles: int = 0  # tiled: the workgroups (output tiles)
  vector: int = (
    1  # one thread per output: the lanes of each of its outputs (consecutive along the innermost output range)
  )

  @property
  def per_thread(self) -> int:
    return self.outputs * self.vector

  @property
  def grid(self) -> int:
    return self.tiles if self.tile else self.rows if self.group else -(-self.total // (self.local * self.per_thread))

  @property
  def tail(self) -> bool:
    return not self.group and not self.tile and self.grid * self.local * self.per_thread != self.total

  def record(self) -> dict[str, int]:
    return (
      {"local": self.local, "grid": self.grid, "outputs": self.outputs, "total": self.total}
      | ({"group": self.group} if self.group else {})
      | ({"tile": self.tile} if self.tile else {})
      | ({"vector": self.vector} if self.vector > 1 else {})
    )

  def __str__(self) -> str:
    if not self.total:
      return "no outputs: launches nothing"
    if self.tile:
      return (
        f"{self.total} output{'s' * (self.total > 1)}, matmul in {self.tile}x{self.tile} tiles through workgroup "
        "memory, "
        f"grid {self.grid} x local {self.local}, k {self.reduce} in steps of {self.tile}"
      )
    if self.group:
      return (
        f"{self.total} output{'s' * (self.total > 1)} in {self.rows} row{'s' * (self.rows > 1)}, grid {self.grid} x "
        f"local {self.local}, "
        f"{self.group} reduction{'s' * (self.group > 1)} of up to {self.reduce} grouped per workgroup, {self.outputs} "
        "per thread"
      )
    return (
      f"{self.total} output{'s' * (self.total > 1)}, grid {self.grid} x local {self.local}, {self.outputs} per thread"
      + (f" of {self.vector} lanes" if self.vector > 1 else "")
      + (", tail guarded" if self.tail else "")
    )


def choose_mapping(total: int, local_size: int, outputs_per_thread: int, lanes: int = 1) -> Mapping:
  """`local_size` threads per workgroup, or the power of two (at least a warp) covering the threads a small kernel
  needs; outputs of `lanes` when that still fills a workgroup."""
  vector = lanes if total // (lanes * outputs_per_thread) >= local_size else 1
  threads = -(-total // (outputs_per_thread * vector))
  local = local_size if threads >= local_size else min(local_size, max(WARP, 1 << max(threads - 1, 0).bit_length()))
  return Mapping(total, local, outputs_per_thread, vector=vector)


def vector_lanes(stored: uop.StoreOp, ranges: list[ir.Value], vector_bytes: int) -> int:
  """How many consecutive outputs along the innermost output range a thread computes as vectors: as many as the widest
  element the kernel reads or writes fits in `vector_bytes`, when that divides the range (vectors start at multiples of
  the lanes) and no reduction varies along it; else 1."""
  ops = computation(stored.value)
  elements = [stored.value.type] + [op.result.type for op in ops if isinstance(op, uop.IndexOp)]
  lanes = vector_bytes // max(max(1, storage_type(t).width // 8) for t in elements)
  if lanes < 2 or not ranges or range_size(ranges[-1]) % lanes:
    return 1
  if any(isinstance(op, uop.RangeReduceOp) and ranges[-1] in free_ranges(op) for op in ops):
    return 1
  return lanes


@dataclass(frozen=True)
class Rows:
  """A kernel's output ranges split by its row reductions (those varying with output ranges only, each after those it
  uses: argmax's max inside its index reduction too): the `outer` ones they vary with (one row per combination), the
  `inner` rest; `length`, the longest reduction's."""

  reductions: list[uop.RangeReduceOp]
  outer: list[ir.Value]
  inner: list[ir.Value]
  length: int

  @property
  def count(self) -> int:
    return prod(range_size(r) for r in self.outer)


def kernel_rows(stored: uop.StoreOp, ranges: list[ir.Value]) -> Rows:
  outputs = set(ranges)
  reductions = [
    op for op in computation(stored.value) if isinstance(op, uop.RangeReduceOp) and free_ranges(op) <= outputs
  ]
  varying = set().union(*(free_ranges(r) for r in reductions))
  return Rows(
    reductions,
    [r for r in ranges if r in varying],
    [r for r in ranges if r not in varying],
    max((prod(range_size(r) for r in reduction.ranges) for reduction in reductions), default=0),
  )


def choose_grouped(total: int, rows: Rows, local_size: int, group_reduce: int) -> Mapping | None:
  """One row per workgroup when `rows.count * group_reduce < rows.length` (few rows, long reductions) or when reductions
  at least `group_reduce` long feed several outputs of each row (each output would compute them again), else None."""
  if not total or not group_reduce or not rows.reductions:
    return None
  few_rows, shared = rows.count * group_reduce < rows.length, total > rows.count and rows.length >= group_reduce
  if not few_rows and not shared:
    return None
  local = min(local_size, max(WARP, 1 << (rows.length - 1).bit_length()))
  return Mapping(total, local, -(-(total // rows.count) // local), rows.count, len(rows.reductions), rows.length)


@dataclass(frozen=True)
class Matmul:
  """A kernel whose store is a function of one f32 sum over range `k` of `a * b` (f32, or f16/bf16 widened), `a` varying
  with output range `i`, `k` and `batch` ranges only, `b` with `k`, output range `j` and `batch` only."""

  reduction: uop.RangeReduceOp
  a: ir.Value
  b: ir.Value
  i: ir.Value
  j: ir.Value
  k: ir.Value
  batch: list[ir.Value]

  def tiles(self, tile: int) -> int:
    return prod(range_size(r) for r in self.batch) * -(-range_size(self.i) // tile) * -(-range_size(self.j) // tile)


def varying(value: ir.Value) -> set[ir.Value] | None:
  """The ranges `value` varies with, or None when a reduction computes it."""
  ops = computation(value)
  if any(isinstance(op, uop.RangeReduceOp) for op in ops):
    return None
  used = {
    v for op in ops for v in op.operands if not isinstance(v, ir.BlockArgument) and isinstance(v.owner, uop.RangeOp)
  }
  return used | ({value} if not isinstance(value, ir.BlockArgument) and isinstance(value.owner, uop.RangeOp) else set())


def matmul_shape(stored: uop.StoreOp, ranges: list[ir.Value]) -> Matmul | None:
  """The kernel's matmul when its store is matmul-shaped (Matmul), else None."""
  f32, outputs = ir.F32Type.get(), set(ranges)
  reductions = [op for op in computation(stored.value) if isinstance(op, uop.RangeReduceOp)]
  if (
    len(reductions) != 1 or reduce_kind(reduction := reductions[0]) != uop.ReduceKind.add or len(reduction.ranges) != 1
  ):
    return None
  if reduction.result.type != f32:
    return None
  if (factors := widened_product(reduction)) is None:
    if (product := defining(reduction.src, uop.MulOp)) is None or product.result.type != f32:
      return None
    factors = (product.lhs, product.rhs)
  k, (a, b) = reduction.ranges[0], factors
  if (in_a := varying(a)) is None or (in_b := varying(b)) is None:
    return None
  if k not in in_a or k not in in_b or not (in_a | in_b) <= outputs | {k}:
    return None
  only_a, only_b = [r for r in ranges if r in in_a - in_b], [r for r in ranges if r in in_b - in_a]
  if not only_a or not only_b:
    return None
  i, j = only_a[-1], only_b[-1]  # the innermost: any other is a batch range one operand broadcasts over
  return Matmul(reduction, a, b, i, j, k, [r for r in ranges if r not in (i, j)])


def global_thread(local: int) -> ir.Value:
  """block_id.x * local + thread_id.x"""
  index = ir.IndexType.get()
  return arith.addi(
    arith.muli(gpu.block_id(gpu.Dimension.x), arith.constant(index, local)), gpu.thread_id(gpu.Dimension.x)
  )


def delinearize(flat: ir.Value, ranges: list[ir.Value]) -> dict[ir.Value, ir.Value]:
  """Each range's index in the row-major `flat` index over `ranges` (outermost first): (flat / inner sizes) % size, the
  outermost needing no remainder (flat < total) and a range of size 1 being 0."""
  index, indices = ir.IndexType.get(), {}
  for i, r in enumerate(ranges):
    if range_size(r) == 1:
      indices[r] = arith.constant(index, 0)
      continue
    stride = prod(range_size(inner) for inner in ranges[i + 1 :])
    position = arith.divui(flat, arith.constant(index, stride)) if stride > 1 else flat
    indices[r] = arith.remui(position, arith.constant(index, range_size(r))) if i > 0 else position
  return indices


def store_with(lowering: KernelLowering, stored: uop.StoreOp, indices: dict[ir.Value, ir.Value]) -> None:
  """The kernel's store (and what it computes) with `indices` for its ranges (and values)."""
  lowering.scopes.append(indices)
  lowering.store(stored)
  lowering.scopes.pop()


def store_at(lowering: KernelLowering, stored: uop.StoreOp, ranges: list[ir.Value], flat: ir.Value) -> None:
  """The kernel's store (and what it computes) at output `flat` (a vector lowering's: its lanes along the innermost
  range)."""
  indices = delinearize(flat, ranges)
  if isinstance(lowering, VectorLowering):
    indices[ranges[-1]] = Strided(indices[ranges[-1]], 1)
  store_with(lowering, stored, indices)


def store_output(
  lowering: KernelLowering, stored: uop.StoreOp, ranges: list[ir.Value], flat: ir.Value, mapping: Mapping
) -> None:
  """The store at output `flat`, inside `scf.if flat < total` when the grid has a tail."""
  if not mapping.tail:
    return store_at(lowering, stored, ranges, flat)
  guard = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ult, flat, arith.constant(ir.IndexType.get(), mapping.total)))
  with ir.InsertionPoint(guard.then_block):
    store_at(lowering, stored, ranges, flat)
    scf.YieldOp([])


def thread_body(lowering: KernelLowering, stored: uop.StoreOp, ranges: list[ir.Value], mapping: Mapping) -> None:
  """One thread's outputs: flat indices (gid * outputs + k) * vector for k < outputs (a loop when there are several)."""
  index, gid = ir.IndexType.get(), global_thread(mapping.local)
  first = arith.muli(gid, arith.constant(index, mapping.per_thread)) if mapping.per_thread > 1 else gid
  if mapping.outputs == 1:
    return store_output(lowering, stored, ranges, first, mapping)
  loop = scf.ForOp(
    arith.constant(index, 0), arith.constant(index, mapping.per_thread), arith.constant(index, mapping.vector)
  )
  with ir.InsertionPoint(loop.body):
    store_output(lowering, stored, ranges, arith.addi(first, loop.induction_variable), mapping)
    scf.YieldOp([])


def grouped_reduction(
  lowering: KernelLowering, reduction: uop.RangeReduceOp, thread: ir.Value, shared: ir.Value, local: int
) -> ir.Value:
  """`reduction` computed by the workgroup's `local` threads together: strided partials, then a tree through `shared`;
  every thread gets the result."""
  index, kind, element = ir.IndexType.get(), reduce_kind(reduction), reduction.result.type
  ranges = list(reduction.ranges)
  partial = scf.ForOp(
    thread,
    arith.constant(index, prod(range_size(r) for r in ranges)),
    arith.constant(index, local),
    [reduce_identity(kind, element)],
  )
  with ir.InsertionPoint(partial.body):
    lowering.scopes.append(delinearize(partial.induction_variable, ranges))
    scf.YieldOp([combine(kind, element, partial.inner_iter_args[0], lowering.emit_summand(reduction))])
    lowering.scopes.pop()
  memref.store(store(element, partial.results[0]), shared, [thread])
  gpu.barrier()
  steps = scf.ForOp(arith.constant(index, 0), arith.constant(index, local.bit_length() - 1), arith.constant(index, 1))
  with ir.InsertionPoint(steps.body):
    stride = arith.shrui(arith.constant(index, local // 2), steps.induction_variable)
    active = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ult, thread, stride))
    with ir.InsertionPoint(active.then_block):
      mine, other = (load(element, memref.load(shared, [i])) for i in (thread, arith.addi(thread, stride)))
      memref.store(store(element, combine(kind, element, mine, other)), shared, [thread])
      scf.YieldOp([])
    gpu.barrier()
    scf.YieldOp([])
  return load(element, memref.load(shared, [arith.constant(index, 0)]))


def grouped_body(
  lowering: KernelLowering, stored: uop.StoreOp, rows: Rows, mapping: Mapping, shared: list[ir.Value]
) -> None:
  """Workgroup `block_id.x` computes its row: the reductions together, in turn, then thread t the row's outputs t, t +
  local, ..."""
  index, thread = ir.IndexType.get(), gpu.thread_id(gpu.Dimension.x)
  lowering.scopes.append(delinearize(gpu.block_id(gpu.Dimension.x), rows.outer) if rows.outer else {})
  for reduction, buffer in zip(rows.reductions, shared):
    lowering.scopes[-1][reduction.result] = grouped_reduction(lowering, reduction, thread, buffer, mapping.local)
  outputs = scf.ForOp(
    thread, arith.constant(index, mapping.total // mapping.rows), arith.constant(index, mapping.local)
  )
  with ir.InsertionPoint(outputs.body):
    store_at(lowering, stored, rows.inner, outputs.induction_variable)
    scf.YieldOp([])
  lowering.scopes.pop()


def within(bounds: list[tuple[ir.Value, int, int]]) -> ir.Value | None:
  """Whether each index is below its size, checked only where its tiles may overshoot (size not a multiple of the
  tile)."""
  checks = [
    arith.cmpi(arith.CmpIPredicate.ult, x, arith.constant(ir.IndexType.get(), size))
    for x, size, tile in bounds
    if size % tile
  ]
  return checks[0] if len(checks) == 1 else arith.andi(*checks) if checks else None


def guarded_value(
  lowering: KernelLowering, value: ir.Value, indices: dict[ir.Value, ir.Value], inside: ir.Value | None
) -> ir.Value:
  """`value` at `indices` where `inside` (None: everywhere), else 0 (under an scf.if, so nothing out of bounds is
  read)."""
  if inside is None:
    lowering.scopes.append(indices)
    result = lowering.emit(value)
    lowering.scopes.pop()
    return result
  guard = scf.IfOp(inside, [value.type], has_else=True)
  with ir.InsertionPoint(guard.then_block):
    lowering.scopes.append(indices)
    scf.YieldOp([lowering.emit(value)])
    lowering.scopes.pop()
  with ir.InsertionPoint(guard.else_block):
    scf.YieldOp([constant(value.type, 0)])
  return guard.results[0]


def tiled_body(lowering: KernelLowering, stored: uop.StoreOp, mm: Matmul, tile: int, shared: list[ir.Value]) -> None:
  """Workgroup `block_id.x` computes one tile x tile block of outputs, thread t = (ty, tx) its output (ty, tx): for each
  k step of `tile`, the threads stage one element each of the `a` and `b` tiles (0 out of bounds) in workgroup memory, a
  barrier, each thread sums its row of `a` times its column of `b` into its own accumulator slot, a barrier; then the
  guarded store of what the kernel computes from the sum."""
  index, (tile_a, tile_b, accumulators) = ir.IndexType.get(), shared
  c = lambda n: arith.constant(index, n)  # noqa: E731
  rows, columns, depth = range_size(mm.i), range_size(mm.j), range_size(mm.k)
  thread, block = gpu.thread_id(gpu.Dimension.x), gpu.block_id(gpu.Dimension.x)
  ty, tx = arith.divui(thread, c(tile)), arith.remui(thread, c(tile))
  column_tiles, row_tiles = -(-columns // tile), -(-rows // tile)
  rest = arith.divui(block, c(column_tiles))
  row, column = (
    arith.addi(arith.muli(arith.remui(x, c(n)), c(tile)), t)
    for x, n, t in ((rest, row_tiles, ty), (block, column_tiles, tx))
  )
  batch = delinearize(arith.divui(rest, c(row_tiles)), mm.batch) if mm.batch else {}
  f32 = ir.F32Type.get()
  memref.store(constant(f32, 0), accumulators, [thread])
  steps = scf.ForOp(c(0), c(depth), c(tile))
  with ir.InsertionPoint(steps.body):
    k_a, k_b = arith.addi(steps.induction_variable, tx), arith.addi(steps.induction_variable, ty)
    a = guarded_value(lowering, mm.a, batch | {mm.i: row, mm.k: k_a}, within([(row, rows, tile), (k_a, depth, tile)]))
    b = guarded_value(
      lowering, mm.b, batch | {mm.k: k_b, mm.j: column}, within([(k_b, depth, tile), (column, columns, tile)])
    )
    memref.store(a if a.type == f32 else widen(a), tile_a, [ty, tx])
    memref.store(b if b.type == f32 else widen(b), tile_b, [ty, tx])
    gpu.barrier()
    products = scf.ForOp(c(0), c(tile), c(1), [memref.load(accumulators, [thread])])
    with ir.InsertionPoint(products.body):
      kk = products.induction_variable
      product = arith.mulf(memref.load(tile_a, [ty, kk]), memref.load(tile_b, [kk, tx]))
      scf.YieldOp([combine(uop.ReduceKind.add, f32, products.inner_iter_args[0], product)])
    memref.store(products.results[0], accumulators, [thread])
    gpu.barrier()
    scf.YieldOp([])
  output = batch | {mm.i: row, mm.j: column, mm.reduction.result: memref.load(accumulators, [thread])}
  if (inside := within([(row, rows, tile), (column, columns, tile)])) is None:
    return store_with(lowering, stored, output)
  guard = scf.IfOp(inside)
  with ir.InsertionPoint(guard.then_block):
    store_with(lowering, stored, output)
    scf.YieldOp([])


def thread_lowering(arguments: dict[ir.Value, ir.Value], mapping: Mapping, ranges: list[ir.Value]) -> KernelLowering:
  """The scalar lowering, or with outputs of several lanes the vector lowering along the innermost output range, whose
  vectors start at multiples of the lanes: its loads and stores along that range claim their vector's alignment."""
  if mapping.vector == 1:
    return KernelLowering(arguments)
  lowering = VectorLowering(arguments, mapping.vector, aligned_loads=True)
  lowering.aligned_j = ranges[-1]
  return lowering


def map_kernel(
  kernel: func.FuncOp,
  local_size: int,
  outputs_per_thread: int,
  group_reduce: int,
  tile: int,
  vector_bytes: int,
  launched: bool,
  math_library: bool = True,
) -> Mapping:
  """Replace `kernel` by a gpu.module holding its gpu.func (and a declaration if it is `launched`); the mapping
  chosen."""
  end = kernel_end(kernel.operation)
  stored, ranges, name = end.src.owner, list(end.ranges), kernel.sym_name.value
  total, rows = prod(range_size(r) for r in ranges), kernel_rows(stored, ranges)
  mm = matmul_shape(stored, ranges) if total and tile and tile * tile <= local_size else None
  tiled = Mapping(total, tile * tile, 1, reduce=range_size(mm.k), tile=tile, tiles=mm.tiles(tile)) if mm else None
  siblings = sibling_stores(kernel.operation)
  lanes = min(vector_lanes(store, ranges, vector_bytes) for store in [stored, *siblings])
  mapping = (
    choose_grouped(total, rows, local_size, group_reduce)
    or tiled
    or choose_mapping(total, local_size, outputs_per_thread, lanes)
  )
  params = list(kernel.entry_block.arguments)
  inputs, workgroup = [storage_memref(p.type) for p in params], ir.Attribute.parse(WORKGROUP)
  shared = (
    [ir.MemRefType.get([mapping.local], storage_type(r.result.type), memory_space=workgroup) for r in rows.reductions]
    if mapping.group
    else []
  )
  if mapping.tile:
    shared = [
      ir.MemRefType.get(shape, ir.F32Type.get(), memory_space=workgroup)
      for shape in ([tile, tile], [tile, tile], [tile * tile])
    ]
  with ir.InsertionPoint(kernel):
    gpu_module = gpu.GPUModuleOp(f"{name}_module")
    with ir.InsertionPoint(gpu_module.bodyRegion.blocks.append()):
      mapped = gpu.GPUFuncOp(ir.FunctionType.get(inputs, []), name, kernel=True, known_block_size=[mapping.local, 1, 1])
      GPU.set(mapped, mapping.record())
      if shared:
        mapped.attributes["workgroup_attributions"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), len(shared))
      entry = mapped.body.blocks.append(*inputs, *shared, arg_locs=[mapped.location] * (len(inputs) + len(shared)))
    with ir.InsertionPoint(entry):
      lowering = thread_lowering(dict(zip(params, entry.arguments)), mapping, ranges)
      lowering.math_library, lowering.siblings = math_library, siblings
      if mapping.group:
        grouped_body(lowering, stored, rows, mapping, list(entry.arguments)[len(inputs) :])
      elif mapping.tile:
        tiled_body(lowering, stored, mm, tile, list(entry.arguments)[len(inputs) :])
      elif mapping.total:
        thread_body(lowering, stored, ranges, mapping)
      gpu.ReturnOp([])
    if launched:
      func.FuncOp(name, (kernel.type.inputs, []), visibility="private")
  kernel.operation.erase()
  return mapping


def launched_kernels(module: ir.Operation) -> set[str]:
  """The kernels a `uop.launch` of the module names."""
  return {
    ir.FlatSymbolRefAttr(op.attributes["kernel"]).value
    for fn in module.regions[0].blocks[0].operations
    if isinstance(fn, func.FuncOp)
    for op in body(fn)
    if isinstance(op, uop.LaunchOp)
  }


@register(
  "pytc-gpu-map",
  "index-level kernels to gpu.func kernels, one thread per output (vectors of up to vector_bytes "
  "along the innermost output range), or one row per workgroup reducing together when rows * group_reduce < the "
  "reduction's length or a reduction of at least group_reduce feeds several outputs of its row, a matmul in tile x "
  "tile "
  "output tiles through workgroup memory (explain=1 prints each mapping; math_library=0: the target links no math "
  "library, "
  "so f64 transcendentals and pow become arithmetic too)",
  takes=("split", "scheduled", "kernel"),
)
def gpu_map(
  module: ir.Operation,
  local_size: Annotated[int, Within(1, 1024, power_of_two=True)] = 256,
  outputs_per_thread: Annotated[int, Within(1, 64)] = 1,
  group_reduce: Limit = 32,
  tile: Annotated[int, Within(0, 32, power_of_two=True)] = 16,
  vector_bytes: Annotated[int, Within(0, 64)] = 16,
  explain: bool = False,
  math_library: bool = True,
) -> None:
  kernels = [fn for fn in functions_with(module, uop.EndOp.OPERATION_NAME) if KERNEL.get(fn)]
  if not kernels:
    return
  module.attributes["gpu.container_module"] = ir.UnitAttr.get()
  launched = launched_kernels(module)
  for kernel in kernels:
    name = kernel.sym_name.value
    with kernel.location:
      mapping = map_kernel(
        kernel, local_size, outputs_per_thread, group_reduce, tile, vector_bytes, name in launched, math_library
      )
    if explain or DEBUG >= 3:
      print(f"pytc-gpu-map: {name}: {mapping}", file=sys.stderr)
