"""Kernels with several stores (pytc-merge-kernels): an optimizer's update of a parameter and its state in one kernel, the
same values as separate kernels computed, on the CPU and through the GPU lowering (EMU, AMD:MOCK)."""
import threading

import numpy as np
import pytest

from pytc import Tensor, TinyJit, dtypes
from pytc.helpers import Context, GlobalCounters
from pytc.nn import optim

SHAPES = [(4, 8), (37,), (3, 5, 7), (1,), (64, 33), (2, 0), ()]
DEVICES = ["CPU", "EMU", "AMD:MOCK"]


def adamw_reference(p, g, m, v, t, lr, b1, b2, eps, wd):
  m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
  step = (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps) + wd * p
  return p - lr * step, m, v


def kernels_of(fn) -> int:
  before = GlobalCounters.kernel_count
  fn()
  return GlobalCounters.kernel_count - before


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_adamw_updates_each_parameter_and_its_moments_in_one_kernel(device, dtype):
  rng = np.random.default_rng(0)
  values = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
  params = [Tensor(a, device=device, requires_grad=True) for a in values]
  with Context(TRAINING=1):
    opt = optim.AdamW(params, lr=1e-2, weight_decay=0.1)
    m, v = [np.zeros(s, np.float32) for s in SHAPES], [np.zeros(s, np.float32) for s in SHAPES]
    ref = [a.astype(np.float32) for a in values]
    buffers = [t.lazydata.arg for t in opt.m + opt.v]
    for t in range(1, 4):
      grads = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
      for p, g in zip(params, grads): p.grad = Tensor(g, device=device)
      Tensor.realize(*[p.grad for p in params])
      launched = kernels_of(opt.step)
      for i, g in enumerate(grads):
        new, m[i], v[i] = adamw_reference(ref[i], g.astype(np.float32), m[i], v[i], t, 1e-2, 0.9, 0.999, 1e-8, 0.1)
        ref[i] = new.astype(dtype).astype(np.float32)
  assert launched == 2 + len(SHAPES)  # b1 and b2 to the power of the step, then one kernel per parameter
  assert [t.lazydata.arg for t in opt.m + opt.v] == buffers  # the moments were computed in place
  tolerance = {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {"rtol": 2e-3, "atol": 2e-3}
  for p, expected, mt, expected_m in zip(params, ref, opt.m, m):
    np.testing.assert_allclose(p.numpy().astype(np.float32), expected, **tolerance)
    np.testing.assert_allclose(mt.numpy(), expected_m, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("device", DEVICES)
def test_sgd_with_momentum_updates_the_velocity_and_the_parameter_in_one_kernel(device):
  rng = np.random.default_rng(1)
  w, grads = rng.standard_normal((5, 19)).astype(np.float32), [rng.standard_normal((5, 19)).astype(np.float32) for _ in range(3)]
  p = Tensor(w, device=device, requires_grad=True)
  with Context(TRAINING=1):
    opt = optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True)
    velocity = np.zeros_like(w)
    for g in grads:
      p.grad = Tensor(g, device=device).realize()
      assert kernels_of(opt.step) == 1
      velocity = 0.9 * velocity + g
      w = w - 0.1 * (g + 0.9 * velocity)
  np.testing.assert_allclose(p.numpy(), w, rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(opt.velocity[0].numpy(), velocity, rtol=1e-5, atol=1e-6)


def test_a_merged_step_replays_under_tinyjit():
  rng = np.random.default_rng(2)
  w = rng.standard_normal((7, 24)).astype(np.float32)
  grads = [rng.standard_normal((7, 24)).astype(np.float32) for _ in range(5)]
  p = Tensor(w, requires_grad=True)
  with Context(TRAINING=1):
    opt = optim.Adam([p], lr=1e-2)
    @TinyJit
    def step(g: Tensor) -> None:
      p.grad = g
      opt.step()
    m, v, ref = np.zeros_like(w), np.zeros_like(w), w
    for t, g in enumerate(grads, 1):
      step(Tensor(g).realize())
      ref, m, v = adamw_reference(ref, g, m, v, t, 1e-2, 0.9, 0.999, 1e-8, 0.0)
  np.testing.assert_allclose(p.numpy(), ref, rtol=1e-5, atol=1e-6)


def test_the_schedule_names_every_buffer_a_merged_launch_writes(capsys):
  p = Tensor(np.ones((4, 8), np.float32), requires_grad=True)
  with Context(TRAINING=1):
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = Tensor(np.full((4, 8), 0.5, np.float32)).realize()
    with Context(DEBUG=3): opt.step()
  assert any("writes output 0, output 1, reads" in line for line in capsys.readouterr().out.splitlines())


def test_separate_outputs_of_unrelated_elementwise_work_stay_separate_kernels():
  a, b = Tensor(np.arange(8, dtype=np.float32)), Tensor(np.arange(8, dtype=np.float32) * 2)
  x, y = a + 1, b * 3
  assert kernels_of(lambda: Tensor.realize(x, y)) == 2
  np.testing.assert_array_equal(x.numpy(), np.arange(8) + 1)
  np.testing.assert_array_equal(y.numpy(), np.arange(8) * 6)


def test_outputs_of_elementwise_work_reading_the_same_buffer_share_a_kernel():
  a = Tensor(np.linspace(-2, 2, 40, dtype=np.float32).reshape(5, 8))
  outs = [a.exp(), a * a, (a > 0).where(a, 0)]
  assert kernels_of(lambda: Tensor.realize(*outs)) == 1
  x = np.linspace(-2, 2, 40, dtype=np.float32).reshape(5, 8)
  for out, expected in zip(outs, [np.exp(x), x * x, np.maximum(x, 0)]): np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


VALUES = {np.bool_: [True, False, True, False], np.uint8: [0, 255, 7, 7], np.int32: [-2**31, 2**31 - 1, 0, -1],
          np.float32: [-0.0, np.inf, np.nan, 3e38], np.float16: [-0.0, -np.inf, np.nan, 65504.0]}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", list(VALUES))
def test_several_outputs_of_one_input_computed_together_in_every_dtype(device, dtype):
  x = np.array(VALUES[dtype], dtype).reshape(2, 2)
  a = Tensor(x, device=device)
  outs = [a.cast(dtypes.float32) * 2, (a == a).cast(dtypes.int32) + 1, a != a]
  assert kernels_of(lambda: Tensor.realize(*outs)) == 1
  with np.errstate(all="ignore"):
    expected = [x.astype(np.float32) * 2, (x == x).astype(np.int32) + 1, x != x]
  for out, want in zip(outs, expected):
    got = out.numpy()
    np.testing.assert_array_equal(got, want)
    if got.dtype.kind == "f": assert (np.signbit(got) == np.signbit(want)).all()


def test_a_merged_kernel_realized_from_several_threads_at_once():
  rng = np.random.default_rng(3)
  inputs = [rng.standard_normal((33, 17)).astype(np.float32) for _ in range(8)]
  results: dict[int, list[np.ndarray]] = {}
  def work(i: int) -> None:
    a = Tensor(inputs[i])
    outs = [a.exp(), a * a]
    Tensor.realize(*outs)
    results[i] = [out.numpy() for out in outs]
  threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
  for thread in threads: thread.start()
  for thread in threads: thread.join()
  for i, x in enumerate(inputs):
    np.testing.assert_allclose(results[i][0], np.exp(x), rtol=1e-6)
    np.testing.assert_array_equal(results[i][1], x * x)
