"""pytc-schedule: launch order and memory planning for a graph of kernel launches and transfers.

Launches are ordered topologically by their buffer dependencies as the graph states them:
read-after-write (a kernel runs after the kernels that write what it reads) and write-after-read
(a kernel that overwrites a buffer waits for that buffer's earlier readers); among ready launches
the earliest in the graph goes first. The first argument of a launch (its first `pytc.writes`) and of a transfer is the
buffer it writes.

Temporaries (`uop.buffer`) are then planned: walking the launches in order, a temporary whose
first use comes after another of the same type on the same device has had its last use takes over that buffer.
The graph function gets `pytc.kernels`, `pytc.buffers` (temporaries left) and `pytc.peak_bytes`
(the most temporary bytes live at once); `report=1` also prints them.
"""

import heapq
import sys

from mlir import ir
from mlir.dialects import func

from pytc.dialects import uop
from pytc.passes import PassError, functions_with, register
from pytc.passes.common.attributes import BUFFER_DEVICE, BUFFERS, KERNELS, PEAK_BYTES, WRITES
from pytc.passes.common.uops import defined_by


def ordered(launches: list[ir.Operation]) -> list[ir.Operation]:
  """Kahn's algorithm over the dependencies, the earliest ready launch first. Each buffer's last writer and its readers
  since then are all a launch needs to wait for (earlier ones are ordered before those), so this is linear."""
  writer: dict[ir.Value, int] = {}
  readers: dict[ir.Value, list[int]] = {}
  waits_for: list[set[int]] = []
  for j, launch in enumerate(launches):
    written, read = list(launch.operands)[: WRITES.get(launch, 1)], list(launch.operands)[WRITES.get(launch, 1) :]
    after = {writer[b] for b in read if b in writer}
    for b in written:
      after |= set(readers.pop(b, [])) | ({writer[b]} if b in writer else set())
    waits_for.append(after)
    for b in written:
      writer[b] = j
    for b in read:
      readers.setdefault(b, []).append(j)
  unblocks: dict[int, list[int]] = {}
  for j, after in enumerate(waits_for):
    for i in after:
      unblocks.setdefault(i, []).append(j)
  ready = [j for j, after in enumerate(waits_for) if not after]
  heapq.heapify(ready)
  order = []
  while ready:
    order.append(launches[i := heapq.heappop(ready)])
    for j in unblocks.get(i, []):
      waits_for[j].discard(i)
      if not waits_for[j]:
        heapq.heappush(ready, j)
  return order


def size_of(t: ir.Type) -> int:
  memref = ir.MemRefType(t)
  count = 1
  for n in memref.shape:
    count *= n
  return count * max(1, memref.element_type.width // 8)


def temporaries(launch: ir.Operation) -> list[ir.Value]:
  return list(dict.fromkeys(v for v in launch.operands if defined_by(v, uop.BufferOp)))


def kind(temporary: ir.Value) -> tuple[str, str | None]:
  return str(temporary.type), BUFFER_DEVICE.get(temporary.owner)


def plan_memory(launches: list[ir.Operation]) -> tuple[int, int]:
  """Reuse dead temporaries of the same type on the same device; returns (temporaries left, peak live temporary
  bytes)."""
  last_use = {v: i for i, op in enumerate(launches) for v in temporaries(op)}
  free: dict[str, list[ir.Value]] = {}
  live: dict[ir.Value, int] = {}
  buffers = peak = 0
  for i, op in enumerate(launches):
    for v in temporaries(op):
      if v in live:
        continue
      end = last_use[v]
      if pool := free.get(kind(v)):
        reused, allocation = pool.pop(), v.owner
        v.replace_all_uses_with(reused)
        allocation.operation.erase()
        v = reused
      else:
        buffers += 1
      live[v] = end
    peak = max(peak, sum(size_of(v.type) for v in live))
    for v in [v for v, end in live.items() if end == i]:
      del live[v]
      free.setdefault(kind(v), []).append(v)
  return buffers, peak


def schedule(graph: ir.Operation, report: bool) -> None:
  block = graph.regions[0].blocks[0]
  launches = [op.operation for op in block.operations if isinstance(op, (uop.LaunchOp, uop.TransferOp))]
  if wrong := next((op for op in launches if WRITES.get(op, 1) > len(op.operands)), None):
    raise PassError(
      wrong.location,
      f"pytc-schedule: this launch writes its first {WRITES.get(wrong)} buffers, but it has {len(wrong.operands)}",
    )
  if not launches:
    return
  order = ordered(launches)
  end = next(op.operation for op in block.operations if isinstance(op, (uop.SinkOp, func.ReturnOp)))
  for op in order:
    op.move_before(end)
  buffers, peak = plan_memory(order)
  kernels = sum(isinstance(op.opview, uop.LaunchOp) for op in order)
  for attribute, value in ((KERNELS, kernels), (BUFFERS, buffers), (PEAK_BYTES, peak)):
    attribute.set(graph, value)
  transfers = f"{len(order) - kernels} transfers, " if len(order) > kernels else ""
  if report:
    print(
      f"schedule @{ir.StringAttr(graph.attributes['sym_name']).value}: {kernels} kernels, {transfers}"
      f"{buffers} temporary buffers, peak {peak} temporary bytes",
      file=sys.stderr,
    )


@register(
  "pytc-schedule",
  "order kernel launches by their dependencies and reuse dead temporary buffers",
  takes=("split", "scheduled"),
)
def schedule_pass(module: ir.Operation, report: bool = False) -> None:
  for fn in functions_with(module, uop.LaunchOp.OPERATION_NAME, uop.TransferOp.OPERATION_NAME):
    schedule(fn.operation, report)
