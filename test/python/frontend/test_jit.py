"""TinyJit: captured on the second call, replayed after through one prebuilt command buffer. What the function assigns to
(inputs, closure tensors, optimizer state) and the random keys advance on every replay exactly as without the JIT; misuse
raises JitError; JIT=0 runs the function plainly."""
import threading
import time

import numpy as np
import pytest

from pytc import Context, Device, GlobalCounters, Tensor, TinyJit, dtypes, nn
from pytc.jit import JitError
from pytc.nn.optim import SGD, Adam
from pytc.nn.state import get_parameters
from pytc.runtime._immediate import Replay


def ones(n: int, dtype=np.float32) -> Tensor: return Tensor(np.ones(n, dtype))


def test_replay_computes_with_new_inputs_and_builds_no_schedule():
  @TinyJit
  def step(x: Tensor, y: Tensor) -> Tensor: return ((x * y).relu() + 1).sum(axis=1)
  rng = np.random.default_rng(0)
  for call in range(5):
    a, b = rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((4, 8)).astype(np.float32)
    GlobalCounters.reset()
    out = step(Tensor(a), Tensor(b)).numpy()
    np.testing.assert_allclose(out, (np.maximum(a * b, 0) + 1).sum(1), rtol=1e-5)
    if call >= 2: assert GlobalCounters.schedules_built == 0 and GlobalCounters.kernel_count == 1


def test_a_schedule_run_plainly_before_is_captured_and_replayed():
  def compute(x: Tensor, y: Tensor) -> Tensor: return ((x - y).exp() * 3).sum(axis=0)
  rng = np.random.default_rng(5)
  arrays = [(rng.standard_normal((6, 5)).astype(np.float32), rng.standard_normal((6, 5)).astype(np.float32)) for _ in range(8)]
  for a, b in arrays[:3]:  # plainly: the schedule keeps its command graph and runs it directly from the second call
    np.testing.assert_allclose(compute(Tensor(a), Tensor(b)).numpy(), (np.exp(a - b) * 3).sum(0), rtol=1e-5)
  step = TinyJit(lambda x, y: compute(x, y).realize())
  for a, b in arrays[3:]:
    np.testing.assert_allclose(step(Tensor(a), Tensor(b)).numpy(), (np.exp(a - b) * 3).sum(0), rtol=1e-5)
  assert step.graph is not None and len(step.steps) == 1  # the captured kernel


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.int8])
def test_inplace_add_to_an_input_lands_on_every_call(dtype):
  @TinyJit
  def add(a: Tensor) -> None:
    a += 1
    a.realize()
  a = Tensor.zeros(1, dtype=dtype).contiguous().realize()
  for _ in range(5): add(a)
  assert a.item() == 5


def test_assign_into_an_input_returns_this_calls_value():
  @TinyJit
  def f(a: Tensor, b: Tensor) -> Tensor: return b.assign(a + 1)
  for i in range(5):
    a, b = Tensor([i]), Tensor.empty(1, dtype=dtypes.int32)
    c = f(a, b)
    assert c.item() == i + 1 and b.item() == i + 1


def test_closure_state_read_and_written_by_replays():
  weight, total = Tensor([2.0]), Tensor([0.0])
  @TinyJit
  def accumulate(x: Tensor) -> Tensor:
    total.assign(total + x * weight).realize()
    return (total * 1).realize()
  expected = 0.0
  for i in range(6):
    weight.assign(Tensor([float(i)])).realize()  # changed outside: the replay reads the buffer
    expected += 10 * i
    assert accumulate(Tensor([10.0])).item() == expected and total.item() == expected


def test_random_advances_on_every_replay_as_without_the_jit():
  def noisy(x: Tensor) -> Tensor: return (x + Tensor.rand(4) + Tensor.randn(4) * 10).realize()
  Tensor.manual_seed(7)
  plain = [noisy(Tensor.zeros(4).contiguous()).numpy() for _ in range(5)]
  Tensor.manual_seed(7)
  jitted = TinyJit(noisy)
  replayed = [jitted(Tensor.zeros(4).contiguous()).numpy() for _ in range(5)]
  assert len({tuple(r) for r in replayed}) == 5
  np.testing.assert_array_equal(np.stack(replayed), np.stack(plain))
  assert Tensor.rand(4).numpy().tolist() != replayed[-1].tolist()


def _train(jit: bool, optimizer_kind: str, steps: int = 8) -> list[float]:
  Tensor.manual_seed(3)
  model = nn.Linear(4, 3)
  optimizer = Adam(get_parameters(model), lr=0.05) if optimizer_kind == "adam" else SGD(get_parameters(model), lr=0.05, momentum=0.9)
  rng = np.random.default_rng(0)
  xs, w = rng.standard_normal((steps, 16, 4)).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32)

  def step(x: Tensor, y: Tensor) -> Tensor:
    loss = (model(x) - y).square().mean()
    optimizer.zero_grad()
    loss.backward()
    if optimizer_kind == "adam": return loss.realize(*optimizer.schedule_step())
    loss.realize()
    optimizer.step()
    return loss
  run = TinyJit(step) if jit else step
  with Context(TRAINING=1): return [run(Tensor(x), Tensor(x @ w)).item() for x in xs]


@pytest.mark.parametrize("optimizer_kind", ["adam", "sgd_momentum"])
def test_optimizer_state_advances_across_replays(optimizer_kind):
  plain, jitted = _train(False, optimizer_kind), _train(True, optimizer_kind)
  np.testing.assert_allclose(jitted, plain, rtol=1e-6)
  assert plain[-1] < plain[2] < plain[0]


def test_jit_zero_in_the_environment_runs_the_function_every_call(monkeypatch):
  monkeypatch.setenv("JIT", "0")
  calls, scale = [], 1
  @TinyJit
  def f(x: Tensor) -> Tensor:
    calls.append(scale)
    return (x * scale).realize()
  for i in range(4):
    scale = i + 1
    assert f(Tensor([10])).item() == 10 * (i + 1)
  assert len(calls) == 4 and f.steps == []


def _captured():
  @TinyJit
  def f(a: Tensor, b: Tensor) -> Tensor: return (a + b).realize()
  for _ in range(3): f(ones(4), ones(4))
  return f


@pytest.mark.parametrize("call, match", [
  (lambda f: f(ones(5), ones(5)), "input 0 is a \\(5,\\) dtypes.float32 buffer on [\\w:]+, captured as a \\(4,\\)"),
  (lambda f: f(ones(4), ones(4, np.int32)), "input 1 is a \\(4,\\) dtypes.int32 buffer"),
  (lambda f: f(ones(4)), "called with tensor arguments \\[0\\]"),
  (lambda f: f(ones(4), ones(4), ones(4)), "called with tensor arguments \\[0, 1, 2\\]"),
  (lambda f: f(a=ones(4), b=ones(4)), "called with tensor arguments \\['a', 'b'\\]"),
  (lambda f: f(ones(8)[2:6], ones(4)), "seen through shrink"),
], ids=["shape", "dtype", "fewer", "more", "keywords", "view"])
def test_replay_rejects_calls_unlike_the_capture(call, match):
  f = _captured()
  with pytest.raises(JitError, match=match): call(f)
  np.testing.assert_array_equal(f(ones(4), ones(4)).numpy(), np.full(4, 2.0))


def test_the_last_replays_tensors_passed_otherwise_are_checked():
  f, a, b = _captured(), ones(4), Tensor(np.arange(4, dtype=np.float32))
  for _ in range(3): np.testing.assert_array_equal(f(a, b).numpy(), np.arange(4) + 1)  # replays of the same nodes
  for call, match in ((lambda: f(a), "\\[0\\]"), (lambda: f(a=a, b=b), "\\['a', 'b'\\]"), (lambda: f(a, [b]), "\\[0\\]")):
    with pytest.raises(JitError, match=match): call()
  np.testing.assert_array_equal(f(b, a).numpy(), np.arange(4) + 1)
  np.testing.assert_array_equal(f(a, b).numpy(), np.arange(4) + 1)


def test_misuse_raises_jit_errors():
  @TinyJit
  def pair(x: Tensor, i: int): return (x * 2).realize(), i
  with pytest.raises(JitError, match="not int"):
    for i in range(3): pair(ones(2), i)
  @TinyJit
  def nothing(x: Tensor) -> None: return None
  with pytest.raises(JitError, match="realized nothing"):
    for _ in range(3): nothing(ones(2))
  @TinyJit
  def add(a: Tensor, b: Tensor) -> Tensor: return (a + b).realize()
  x = ones(3)
  with pytest.raises(JitError, match="twice"): add(x, x)
  @TinyJit
  def peek(x: Tensor) -> Tensor: return Tensor([x.sum().item()])
  peek(ones(2))
  with pytest.raises(JitError, match="while TinyJit captures"): peek(ones(2))


def test_jit_inside_a_capturing_jit_raises():
  @TinyJit
  def inner(t: Tensor) -> Tensor: return t + 1
  @TinyJit
  def outer(t: Tensor) -> Tensor: return (inner(t) * 3).realize()
  assert outer(Tensor([1])).item() == 6
  with pytest.raises(RuntimeError, match="inside another TinyJit"): outer(Tensor([2]))


def cpu(array: np.ndarray) -> Tensor:
  """A realized tensor on the CPU, whose replays run on the calling thread (what the C replay is for) on any default device."""
  return Tensor(array, device="CPU").realize()


def _count_python_calls(step: TinyJit) -> list:
  """The calls that reach the Python half of `step` (the C replay declined or did not apply)."""
  calls: list = []
  Replay.__init__(step, lambda *args, **kwargs: calls.append(args) or TinyJit._call(step, *args, **kwargs))
  return calls


def test_same_tensors_replay_without_python_and_anything_else_goes_through_it():
  step = TinyJit(lambda x, y: (x * y + 1).realize())
  a, b, c = (cpu(np.arange(8, dtype=np.float32) * k) for k in (1, 2, 3))
  for _ in range(3): out = step(a, b)
  python_calls = _count_python_calls(step)
  GlobalCounters.reset()
  assert all(step(a, b) is out for _ in range(3)) and python_calls == [] and GlobalCounters.kernel_count == 3
  np.testing.assert_array_equal(out.numpy(), np.arange(8) * np.arange(8) * 2 + 1)
  np.testing.assert_array_equal(step(a, c).numpy(), np.arange(8) * np.arange(8) * 3 + 1)  # other tensors: checked in Python
  for _ in range(2): np.testing.assert_array_equal(step(a, b).numpy(), np.arange(8) * np.arange(8) * 2 + 1)  # then C again
  assert len(python_calls) == 2 and GlobalCounters.kernel_count == 6
  a.assign(cpu(np.full(8, 5, np.float32))).realize()  # a new node for the same tensor
  np.testing.assert_array_equal(step(a, c).numpy(), np.arange(8) * 15 + 1)
  assert len(python_calls) == 3
  with pytest.raises(JitError, match="input 1"): step(a, cpu(np.ones(4, np.float32)))


def test_a_busy_queue_sends_the_replay_through_python_which_waits_for_it():
  step = TinyJit(lambda x: (x * 2).realize())
  x = cpu(np.arange(4, dtype=np.float32))
  for _ in range(3): out = step(x)
  python_calls = _count_python_calls(step)
  executing = Device["CPU"].compute.execution
  assert executing.acquire(blocking=False) and not executing.acquire(blocking=False)
  caller = threading.Thread(target=step, args=(x,))
  caller.start()
  deadline = time.monotonic() + 10
  while not python_calls: assert time.monotonic() < deadline  # declined in C, submitted and waiting in Python
  executing.release()
  caller.join(timeout=10)
  assert not caller.is_alive() and len(python_calls) == 1 and out.numpy().tolist() == [0, 2, 4, 6]
  with pytest.raises(RuntimeError, match="not held"): executing.release()


def test_replays_from_threads_count_every_kernel():
  step = TinyJit(lambda x: (x.exp() + x).sum().realize())
  x = cpu(np.linspace(-1, 1, 64, dtype=np.float32))
  for _ in range(3): out = step(x)
  GlobalCounters.reset()
  threads = [threading.Thread(target=lambda: [step(x) for _ in range(200)]) for _ in range(4)]
  for thread in threads: thread.start()
  for thread in threads: thread.join(timeout=60)
  assert GlobalCounters.kernel_count == 800
  np.testing.assert_allclose(out.item(), (np.exp(x.numpy()) + x.numpy()).sum(), rtol=1e-5)


def test_replays_writing_random_keys_or_returning_inputs_stay_in_python():
  keyed, echo = TinyJit(lambda x: (x + Tensor.rand(4, device="CPU")).realize()), TinyJit(lambda x: (x, (x + 1).realize()))
  x = cpu(np.zeros(4, np.float32))
  draws = [keyed(x).numpy() for _ in range(4)]
  for _ in range(3): same, plus = echo(x)
  assert not keyed.armed and not echo.armed and same is x and plus.numpy().tolist() == [1, 1, 1, 1]
  assert not np.array_equal(draws[2], draws[3])


def test_an_armed_jit_inside_a_capturing_jit_still_raises():
  inner = TinyJit(lambda t: (t + 1).realize())
  t = cpu(np.ones(3, np.float32))
  for _ in range(3): inner(t)
  assert inner.armed
  outer = TinyJit(lambda u: (inner(t) * u).realize())
  outer(t)
  with pytest.raises(RuntimeError, match="inside another TinyJit"): outer(t)


def test_output_fed_back_as_input_reads_a_copy():
  @TinyJit
  def step(x: Tensor) -> Tensor:
    y = (x + 1).realize()
    return (y.flip(0) * 2).realize()
  x = Tensor([10, 20])
  for _ in range(4):
    expected = (x.numpy() + 1)[::-1] * 2
    x = step(x)
  np.testing.assert_array_equal(x.numpy(), expected)
  fresh = Tensor([1, 2])
  np.testing.assert_array_equal(step(fresh).numpy(), [6, 4])


def test_inputs_passed_again_after_changes_between_calls():
  @TinyJit
  def step(x: Tensor, y: Tensor) -> Tensor: return (x * 2 - y).realize()
  a, b = Tensor(np.arange(6, dtype=np.float32)), Tensor(np.ones(6, np.float32))
  for call in range(8):
    first, second = (a, b) if call % 3 else (b, a)  # the same tensors again, swapped, and after changes outside the jit
    expected = first.numpy() * 2 - second.numpy()
    np.testing.assert_array_equal(step(first, second).numpy(), expected)
    if call == 4: a.assign(Tensor(np.full(6, 7, np.float32))).realize()
    if call == 5: b += 3
  assert step.graph is not None


def test_returned_buffers_are_reused_and_methods_and_reset_work():
  class Scaler:
    def __init__(self, scale: float): self.scale = Tensor([scale])
    @TinyJit
    def __call__(self, x: Tensor) -> Tensor: return (x * self.scale).realize()
  scaler = Scaler(3.0)
  first, second, third = (scaler(Tensor([float(i)])) for i in (1, 2, 3))
  assert first.item() == 3.0 and second is third and third.item() == 9.0
  Scaler.__call__.reset()
  assert Scaler.__call__.steps == [] and scaler(Tensor([5.0])).item() == 15.0


def test_prune_leaves_out_kernels_without_inputs():
  weights = Tensor([1.0, 2.0, 3.0])
  def scaled(x: Tensor) -> Tensor: return (weights * 2).contiguous().realize() + x
  plain, pruned = TinyJit(scaled), TinyJit(scaled, prune=True)
  for i in range(4):
    for f in (plain, pruned): np.testing.assert_array_equal(f(Tensor([float(i)] * 3)).numpy(), np.array([2.0, 4.0, 6.0]) + i)
  assert len(pruned.steps) == len(plain.steps) - 1


def test_tensors_inside_list_and_dict_arguments_are_inputs():
  @TinyJit
  def f(a: Tensor, rest: list, named: dict) -> dict: return {"sum": (a + rest[0] + named["c"]).realize()}
  for i in range(4): assert f(Tensor([1]), [Tensor([i])], {"c": Tensor([10 * i])})["sum"].item() == 1 + 11 * i


def test_constant_inputs_are_realized_and_replayed():
  """A constant input (Tensor.ones, a scalar Tensor) has no buffer: it is realized into one, as tinygrad does, and each
  call's constant reaches the replay."""
  total = Tensor.zeros(4).contiguous().realize()
  @TinyJit
  def accumulate(x: Tensor) -> Tensor: return total.assign(total + x).realize()
  for step in range(1, 6):
    accumulate(Tensor.ones(4) * step if step % 2 else Tensor.full((4,), float(step)))
  np.testing.assert_array_equal(total.numpy(), np.full(4, 15.0, np.float32))
  @TinyJit
  def add(a: Tensor, b: Tensor) -> Tensor: return (a + b).realize()
  for value in (2.0, -1.0, 0.5, 7.0): np.testing.assert_array_equal(add(ones(3), Tensor(value)).numpy(), np.full(3, 1 + value, np.float32))


def test_global_counters_count_every_call_alike_plain_captured_and_replayed():
  @TinyJit
  def f(a: Tensor, b: Tensor) -> Tensor:
    c = (a + b).realize()
    d = (c * 2).realize()
    return (d - a).realize()
  a, b = Tensor(np.ones((8, 8), np.float32)).realize(), Tensor(np.ones((8, 8), np.float32)).realize()
  counts = []
  for _ in range(5):  # a plain call, the capture, then replays (the last ones without Python between kernels)
    GlobalCounters.reset()
    f(a, b)
    Device[a.device].synchronize()
    counts.append((GlobalCounters.kernel_count, GlobalCounters.global_ops, GlobalCounters.global_mem))
  assert len(set(counts)) == 1 and counts[0][0] == 3
  assert counts[0][1] >= 3 * 64 and counts[0][2] == 4 * 64 * (3 + 2 + 3)
