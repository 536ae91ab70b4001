"""Realize lazy graphs: build the uop graph, compile it, launch it through the device's HCQ queue."""
from __future__ import annotations

import time

from mlir import ir

from pytc.compiler import compile_graph, context
from pytc.device import Buffer, Device
from pytc.graph import LazyOp, to_mlir
from pytc.helpers import DEBUG, GlobalCounters
from pytc.runtime.ops_cpu import Kernargs


def kernel_name(outputs: list[LazyOp]) -> str:
  return "E_" + "_".join(str(d) for d in outputs[0].shape) if outputs[0].shape else "E"


def realize(outputs: list[LazyOp]) -> list[LazyOp]:
  """Compute every unrealized node of `outputs` in one kernel; returns buffer nodes in the same order."""
  pending = list({id(n): n for n in outputs if not n.is_realized}.values())
  if not pending: return outputs
  start = time.perf_counter()
  name = kernel_name(pending)
  with context(), ir.Location.unknown():
    module, inputs = to_mlir(pending, name)
    program = compile_graph(module, name)
  device_name = pending[0].device
  device = Device[device_name]
  buffers = [Buffer(device_name, n.dtype, n.shape) for n in pending]
  kernargs = Kernargs([n.arg.address for n in inputs] + [b.address for b in buffers])
  began, ended = device.new_signal(), device.new_signal()
  (device.queue().timestamp(began).exec(program.entry, kernargs.address).timestamp(ended)
   .signal(device.timeline, device.next_timeline_value()).submit(device.compute))
  device.synchronize()
  kernel_seconds = (ended.timestamp_ns - began.timestamp_ns) * 1e-9
  GlobalCounters.kernel_count += 1
  GlobalCounters.time_sum_s += kernel_seconds
  if DEBUG >= 2:
    print(f"*** {device_name:<6} {GlobalCounters.kernel_count:4d} {name:<16} args {len(inputs) + len(buffers):3d}  "
          f"tm {kernel_seconds * 1e6:9.2f}us  (compile {program.compile_seconds * 1e3:.2f} ms)")
  if DEBUG >= 1: print(f"realize: 1 kernel in {(time.perf_counter() - start) * 1e3:.2f} ms")
  done = {id(n): LazyOp("buffer", n.dtype, n.shape, n.device, arg=b) for n, b in zip(pending, buffers)}
  return [done.get(id(n), n) for n in outputs]
