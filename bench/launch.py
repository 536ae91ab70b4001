"""Launch overhead on the CPU HCQ queue: 1000 tiny kernels in one command buffer (µs per launch, queue only),
1000 realizes of a tiny cached graph (µs per call: graph building, schedule lookup, command buffer, wait), and
1000 replays of the same graph through TinyJit (µs per call: patch the inputs, submit, wait).

  python bench/launch.py [--launches N]
"""
import argparse
import time

import numpy as np
from mlir import ir

from pytc import Device, Tensor, TinyJit
from pytc.compiler import compile_kernels, context, schedule_graph
from pytc.dtype import dtypes
from pytc.graph import LazyOp, to_mlir


def queue_launches(count: int) -> float:
  x = LazyOp("buffer", dtypes.float32, (16,), "CPU")
  graph = LazyOp("add", dtypes.float32, (16,), "CPU", (x, LazyOp("const", dtypes.float32, (16,), "CPU", arg=1.0)))
  with context(), ir.Location.unknown():
    scheduled = schedule_graph(to_mlir([graph], (x,), "tiny"), "tiny", 1)
  device = Device["CPU"]
  kernel = compile_kernels(scheduled, device).program.kernels[scheduled.launches[0].kernel]
  args = kernel.args([device.allocator.alloc(64), device.allocator.alloc(64)])
  queue = device.queue()
  for _ in range(count): queue.exec(kernel, args)
  queue.signal(device.timeline, device.next_timeline_value())
  start = time.perf_counter()
  queue.submit(device)
  device.synchronize()
  return (time.perf_counter() - start) / count


def realize_calls(count: int) -> float:
  x = Tensor(np.ones(16, np.float32))
  (x + 1).realize()
  start = time.perf_counter()
  for _ in range(count): (x + 1).realize()
  return (time.perf_counter() - start) / count


def jit_replays(count: int) -> float:
  step = TinyJit(lambda x: x + 1)
  x = Tensor(np.ones(16, np.float32))
  for _ in range(3): step(x)
  start = time.perf_counter()
  for _ in range(count): step(x)
  return (time.perf_counter() - start) / count


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--launches", type=int, default=1000)
  args = parser.parse_args()
  queue_launches(10)
  print(f"queue: {queue_launches(args.launches) * 1e6:7.2f} us per kernel launch ({args.launches} in one command buffer)")
  print(f"realize: {realize_calls(args.launches) * 1e6:7.2f} us per call of a cached one-kernel graph")
  print(f"jit:     {jit_replays(args.launches) * 1e6:7.2f} us per replayed call of the same graph")


if __name__ == "__main__":
  main()
