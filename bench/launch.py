"""Launch overhead on a device's HCQ queue: 1000 tiny kernels in one command buffer (µs per launch, queue only), 1000
realizes of a tiny cached graph (µs per call: graph building, schedule lookup, command buffer, wait), and 1000 replays of
the same graph through TinyJit (µs per call: patch the inputs, submit, wait). It also reports what the device's command
buffers hold: packets and bytes per launch and per replayed graph (PM4 on AMD, pytc's host packets on CPU and EMU). On a
device with a copy queue it also times a matmul, an upload from the CPU, and both in one command graph, where the upload
runs on the copy queue beside the matmul (ms per replay of each).

  python bench/launch.py [--launches N] [--device CPU|EMU|AMD:MOCK|...]
"""
import argparse
import time

import numpy as np
from mlir import ir

from pytc import Device, Tensor, TinyJit
from pytc.compiler import compile_kernels, context, schedule_graph
from pytc.dtype import dtypes
from pytc.graph import LazyOp, to_mlir
from pytc.runtime import hcq
from pytc.runtime.hcq import SUBMIT_LOCK


def packets(device, data: bytes) -> int:
  """How many packets a command buffer of `device` holds."""
  if hasattr(device, "family"):
    from pytc.runtime.amd import pm4
    return len(list(pm4.decode(np.frombuffer(data, np.uint32).tolist(), device.family)))
  return len(list(hcq.decode(data)))


def tiny_kernel(name: str):
  x = LazyOp("buffer", dtypes.float32, (16,), name)
  graph = LazyOp("add", dtypes.float32, (16,), name, (x, LazyOp("const", dtypes.float32, (16,), name, arg=1.0)))
  device = Device[name]
  with context(), ir.Location.unknown():
    scheduled = schedule_graph(to_mlir([graph], (x,), "tiny"), "tiny", 1, device.compiler.schedule_stage)
  program = compile_kernels(scheduled, device).program  # its code stays loaded while the Program lives
  return device, program.kernels[scheduled.launches[0].kernel], program


def queue_launches(name: str, count: int) -> tuple[float, int, int]:
  """(seconds per launch, packets and bytes one launch adds to a command buffer)."""
  device, kernel, program = tiny_kernel(name)
  buffers = [device.allocator.alloc(64), device.allocator.alloc(64)]  # alive until the launches ran
  args = kernel.args(buffers)
  one = device.queue().exec(kernel, args).bytes()
  queue = device.queue()
  for _ in range(count): queue.exec(kernel, args)
  start = time.perf_counter()
  with SUBMIT_LOCK: queue.signal(device.timeline, device.next_timeline_value()).submit(device)
  device.synchronize()
  del program
  return (time.perf_counter() - start) / count, packets(device, one), len(one)


def realize_calls(name: str, count: int) -> float:
  x = Tensor(np.ones(16, np.float32), device=name)
  (x + 1).realize()
  start = time.perf_counter()
  for _ in range(count): (x + 1).realize()
  return (time.perf_counter() - start) / count


def jit_replays(name: str, count: int) -> tuple[float, int, int, int]:
  """(seconds per replayed call, kernels, packets and bytes of the replayed command buffer, its final signal included)."""
  step = TinyJit(lambda x: (x + 1).sum())
  x = Tensor(np.ones(16, np.float32), device=name)
  for _ in range(3): step(x)
  start = time.perf_counter()
  for _ in range(count): step(x)
  seconds = (time.perf_counter() - start) / count
  buffers = step.graph.command_buffers()
  count = sum(packets(device, data) if isinstance(data, bytes) else len(data) for device, _, data in buffers)
  size = sum(len(data) if isinstance(data, bytes) else 4 * sum(map(len, data)) for _, _, data in buffers)
  return seconds, len(step.graph.kernel_args), count, size


def overlap(name: str, rounds: int = 5) -> tuple[float, float, float]:
  """Seconds per replay of a 256x256 matmul, of a 16 MiB upload from the CPU, and of both in one command graph."""
  rng = np.random.default_rng(0)
  a, b = (Tensor(rng.standard_normal((256, 256)).astype(np.float32), device=name) for _ in range(2))
  y = Tensor(rng.standard_normal(4 << 20).astype(np.float32), device="CPU")
  functions = [TinyJit(lambda: (a @ b).contiguous()), TinyJit(lambda: (y + 0).to(name)), TinyJit(lambda: ((a @ b).contiguous(), (y + 0).to(name)))]
  timings = []
  for f in functions:
    for _ in range(2): f()  # run, then capture
    start = time.perf_counter()
    for _ in range(rounds): f()
    timings.append((time.perf_counter() - start) / rounds)
  return timings[0], timings[1], timings[2]


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--launches", type=int, default=1000)
  parser.add_argument("--device", default=Device.DEFAULT, help="the device to measure (default: PYTC_DEVICE or CPU)")
  args = parser.parse_args()
  name = Device.canonicalize(args.device)
  queue_launches(name, 10)
  per_launch, launch_packets, launch_bytes = queue_launches(name, args.launches)
  print(f"device: {name}")
  print(f"queue:   {per_launch * 1e6:7.2f} us per kernel launch ({args.launches} in one command buffer); "
        f"a launch is {launch_packets} packets, {launch_bytes} bytes")
  print(f"realize: {realize_calls(name, args.launches) * 1e6:7.2f} us per call of a cached one-kernel graph")
  per_replay, kernels, replay_packets, replay_bytes = jit_replays(name, args.launches)
  print(f"jit:     {per_replay * 1e6:7.2f} us per replayed call of a {kernels}-kernel graph; its command buffers are {replay_packets} packets, "
        f"{replay_bytes} bytes")
  if Device[name].copy_queue() is not None:
    matmul, upload, both = overlap(name)
    print(f"overlap: {matmul * 1e3:.2f} ms matmul, {upload * 1e3:.2f} ms upload from CPU, {both * 1e3:.2f} ms both in one command graph "
          f"({(matmul + upload) * 1e3:.2f} ms one after the other)")


if __name__ == "__main__":
  main()
