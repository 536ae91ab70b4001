"""Command graphs (runtime/graph.py): steps on several queues and devices ordered by the buffers they share, so a copy
independent of a kernel runs beside it; TinyJit replays of functions that copy between devices. Values against NumPy,
the order each step waits for read from the graph's plan."""
import threading

import numpy as np
import pytest

from pytc import Tensor, TinyJit
from pytc.device import Buffer, Device
from pytc.dtype import dtypes
from pytc.runtime.graph import CommandGraph, Step

PAIRS = [("CPU", "CPU:1"), ("CPU", "AMD:MOCK"), ("AMD:MOCK", "CPU"), ("AMD:MOCK", "AMD:MOCK:1")]
RNG = np.random.default_rng(7)


def doubling_kernel(device: str):
  """A loaded kernel writing 2*x into its first buffer from its second (64 floats), with the program that holds it."""
  double = TinyJit(lambda x: x * 2)
  for _ in range(2): double(Tensor(np.zeros(64, np.float32), device=device))
  (step, _), = double.steps
  return step.kernel, double.programs


def buffer(device: str, values: np.ndarray) -> Buffer:
  return Buffer(device, dtypes.float32, values.shape).copyin(values)


def lines_with(plan: list[str], text: str) -> list[str]: return [line for line in plan if text in line]


@pytest.mark.parametrize("source,target", PAIRS)
def test_tinyjit_replays_transfers(source, target):
  weight = Tensor(RNG.standard_normal((4, 3)).astype(np.float32), device=target)
  step = TinyJit(lambda x: ((x * 2).to(target) @ weight).relu().to(source) + 1)
  for _ in range(4):
    a = RNG.standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_allclose(step(Tensor(a, device=source)).numpy(), np.maximum((a * 2) @ weight.numpy(), 0) + 1, rtol=1e-5, atol=1e-6)
  assert step.calls == 4 and {d.name for d in step.graph.devices} == {source, target}


@pytest.mark.parametrize("source,target", PAIRS)
def test_tinyjit_replays_a_transfer_of_its_input(source, target):
  step = TinyJit(lambda x: x.to(target).exp2().to(source))  # the input's copy is encoded again for each call's buffer
  for i in range(4):
    a = np.arange(6, dtype=np.float32) - i
    np.testing.assert_allclose(step(Tensor(a, device=source)).numpy(), np.exp2(a), rtol=1e-6)


def test_a_copy_independent_of_the_kernels_runs_beside_them():
  step = TinyJit(lambda a, b, y: (a @ b).relu() + y.to("AMD:MOCK"))
  for _ in range(3):
    a, b, y = (RNG.standard_normal(s).astype(np.float32) for s in ((16, 8), (8, 16), (16, 16)))
    out = step(Tensor(a, device="AMD:MOCK"), Tensor(b, device="AMD:MOCK"), Tensor(y, device="CPU"))
    np.testing.assert_allclose(out.numpy(), np.maximum(a @ b, 0) + y, rtol=1e-5, atol=1e-6)
  plan = step.graph.plan()
  upload, = lines_with(plan, "AMD:MOCK copy:")
  assert "from staging" in upload and "after" not in upload  # the copy queue does not wait for the matmul
  last_kernel = lines_with(plan, "AMD:MOCK compute:")[-1]
  assert "after AMD:MOCK copy step" in last_kernel and "host waits" not in last_kernel  # the add waits for it, in the queue


def test_a_copy_into_a_buffer_a_kernel_reads_waits_for_the_kernel():
  kernel, _programs = doubling_kernel("AMD:MOCK")
  gpu, other = Device["AMD:MOCK"], Device["AMD:MOCK:1"]
  old, new = RNG.standard_normal(64).astype(np.float32), RNG.standard_normal(64).astype(np.float32)
  x, out, incoming = buffer("AMD:MOCK", old), buffer("AMD:MOCK", np.zeros(64, np.float32)), buffer("AMD:MOCK:1", new)
  graph = CommandGraph([Step(gpu, kernel, (out.raw, x.raw)), Step(gpu, None, (x.raw, incoming.raw), other),
                        Step(gpu, kernel, (out.raw, x.raw))])
  graph.run()
  np.testing.assert_array_equal(out.numpy(), 2 * new)
  copy_line, second_kernel = graph.plan()[1:]
  assert "AMD:MOCK copy: step 1 copy 256 bytes from AMD:MOCK:1, after AMD:MOCK compute step 0" in copy_line
  assert second_kernel.endswith("after AMD:MOCK copy step 1")
  graph = CommandGraph([Step(gpu, kernel, (out.raw, x.raw)), Step(other, None, (incoming.raw, out.raw), gpu)])  # and back
  graph.run()
  np.testing.assert_array_equal(incoming.numpy(), 2 * new)


@pytest.mark.parametrize("source,target,expected", [
  ("AMD:MOCK", "AMD:MOCK:1", ["AMD:MOCK:1 copy: step 1 copy 256 bytes from AMD:MOCK, after AMD:MOCK compute step 0 (host waits)"]),
  ("AMD:MOCK", "CPU", ["AMD:MOCK copy: step 1 copy 256 bytes from AMD:MOCK into staging, after AMD:MOCK compute step 0",
                       "CPU compute: step 1 copy 256 bytes from AMD:MOCK from staging, after AMD:MOCK copy step 1"]),
  ("CPU", "AMD:MOCK", ["host: step 1 copy 256 bytes from CPU into staging, after CPU compute step 0 (host waits)",
                       "AMD:MOCK copy: step 1 copy 256 bytes from CPU from staging"]),
  ("CPU", "CPU:1", ["CPU:1 compute: step 1 copy 256 bytes from CPU, after CPU compute step 0"])])
def test_where_each_copy_runs_and_what_it_waits_for(source, target, expected):
  kernel, _programs = doubling_kernel(source)
  a = RNG.standard_normal(64).astype(np.float32)
  x, doubled, moved = buffer(source, a), buffer(source, np.zeros(64, np.float32)), buffer(target, np.zeros(64, np.float32))
  graph = CommandGraph([Step(Device[source], kernel, (doubled.raw, x.raw)), Step(Device[target], None, (moved.raw, doubled.raw), Device[source])])
  for _ in range(2):
    graph.run()
    np.testing.assert_array_equal(moved.numpy(), 2 * a)
  assert graph.plan()[1:] == expected


def test_transfers_from_several_threads_at_once():
  def work(seed: int, results: list) -> None:
    a = np.random.default_rng(seed).standard_normal((32, 32)).astype(np.float32)
    for _ in range(5):
      on_gpu = Tensor(a, device="CPU").to("AMD:MOCK").exp2()
      results.append((a, (on_gpu.to("AMD:MOCK:1") * 2).to("CPU:1").numpy()))
  results: list = []
  threads = [threading.Thread(target=work, args=(seed, results)) for seed in range(3)]
  for t in threads: t.start()
  for t in threads: t.join()
  assert len(results) == 15
  for a, got in results: np.testing.assert_allclose(got, np.exp2(a) * 2, rtol=1e-6)


def test_debug_prints_the_plan(capsys, monkeypatch):
  from pytc.runtime import graph
  monkeypatch.setattr(graph, "DEBUG", 3)
  np.testing.assert_array_equal((Tensor([1.0, 2.0], device="CPU").to("AMD:MOCK") * 2).numpy(), [2.0, 4.0])
  out = capsys.readouterr().out
  assert "command graph:\n  host: step 0 copy 8 bytes from CPU into staging" in out and "AMD:MOCK compute: step 1" in out


@pytest.mark.parametrize("device", ["CPU", "AMD:MOCK"])
def test_a_schedule_run_again_reuses_its_command_graph_and_lets_its_buffers_go(device):
  from pytc import realize
  x = RNG.standard_normal((3, 40)).astype(np.float32)
  chain = lambda t: ((t * 2).exp() + 1).sum().sqrt()  # noqa: E731
  chain(Tensor(x[0], device=device)).realize()
  (kept,) = [s for s in realize._schedules.values() if s.command_graph is not None][-1:]
  graph = kept.command_graph
  results = [chain(Tensor(row, device=device)).realize().numpy() for row in x]
  assert kept.command_graph is graph  # the graph built for the first call ran the others
  np.testing.assert_allclose(results, np.sqrt((np.exp(2 * x) + 1).sum(1)), rtol=1e-5)
  assert all(b is None for step in graph.steps for b in step.buffers)  # the kept graph holds none of the buffers it ran over


def test_one_schedule_realized_from_several_threads_at_once():
  rows = RNG.standard_normal((8, 300)).astype(np.float32)
  results: dict[int, np.ndarray] = {}

  def work(i: int) -> None:
    for _ in range(20): results[i] = ((Tensor(rows[i]) * 3).softmax() + 1).numpy()

  threads = [threading.Thread(target=work, args=(i,)) for i in range(len(rows))]
  for thread in threads: thread.start()
  for thread in threads: thread.join()
  e = np.exp(3 * rows - (3 * rows).max(1, keepdims=True))
  np.testing.assert_allclose(np.stack([results[i] for i in range(len(rows))]), e / e.sum(1, keepdims=True) + 1, rtol=1e-5)
