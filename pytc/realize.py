"""Realize lazy graphs: build the uop graph, schedule and compile it, launch its kernels through the
device's HCQ queue in one command buffer."""
from __future__ import annotations

import time

from mlir import ir

from pytc.compiler import CompiledGraph, Launch, compile_graph, context
from pytc.device import Buffer, Device
from pytc.dtype import dtypes
from pytc.graph import LazyOp, to_mlir
from pytc.helpers import DEBUG, GlobalCounters
from pytc.runtime.ops_cpu import Kernargs

DTYPE_OF_MLIR = {dt.mlir: dt for dt in dtypes.all()}


def schedule(outputs: list[LazyOp]) -> tuple[CompiledGraph, list[LazyOp], list[LazyOp]]:
  """The compiled graph computing the unrealized `outputs`, its input buffer nodes and the nodes it computes."""
  pending = list({id(n): n for n in outputs if not n.is_realized}.values())
  with context(), ir.Location.unknown():
    module, inputs = to_mlir(pending, "graph")
    return compile_graph(module, "graph", len(inputs)), inputs, pending


def realize(outputs: list[LazyOp]) -> list[LazyOp]:
  """Compute every unrealized node of `outputs`; returns buffer nodes in the same order."""
  if all(n.is_realized for n in outputs): return outputs
  start = time.perf_counter()
  compiled, inputs, pending = schedule(outputs)
  device_name = pending[0].device
  device = Device[device_name]
  buffers = {"input": [n.arg for n in inputs], "output": [Buffer(device_name, n.dtype, n.shape) for n in pending],
             "temp": [Buffer(device_name, DTYPE_OF_MLIR[t.element], t.shape) for t in compiled.temporaries]}
  queue, kernargs, stamps = device.queue(), [], []
  for launch in compiled.launches:
    kernargs.append(Kernargs([buffers[role][i].address for role, i in launch.args]))
    if DEBUG >= 2: stamps.append((launch, device.new_signal(), device.new_signal()))
    if stamps: queue.timestamp(stamps[-1][1])
    queue.exec(compiled.entries[launch.kernel], kernargs[-1].address)
    if stamps: queue.timestamp(stamps[-1][2])
  queue.signal(device.timeline, device.next_timeline_value()).submit(device.compute)
  device.synchronize()
  GlobalCounters.kernel_count += len(compiled.launches)
  for launch, began, ended in stamps: report(launch, device_name, (ended.timestamp_ns - began.timestamp_ns) * 1e-9)
  if DEBUG >= 1:
    print(f"realize: {len(compiled.launches)} kernels in {(time.perf_counter() - start) * 1e3:.2f} ms "
          f"(compile {compiled.compile_seconds * 1e3:.2f} ms when first seen)")
  done = {id(n): LazyOp("buffer", n.dtype, n.shape, n.device, arg=b) for n, b in zip(pending, buffers["output"])}
  return [done.get(id(n), n) for n in outputs]


def report(launch: Launch, device: str, seconds: float) -> None:
  GlobalCounters.time_sum_s += seconds
  print(f"*** {device:<6} {GlobalCounters.kernel_count:4d} {launch.kernel:<20} args {len(launch.args):3d}  tm {seconds * 1e6:9.2f}us")
