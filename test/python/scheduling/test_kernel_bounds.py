"""Kernels stay within pytc-fuse's limits (op weight `max_ops`, buffers read `max_buffers`) however large the graph:
long chains (float, int32 with a bool mask, 0-d), chains that fork and join, wide sums, concatenations of many parts, a
chain broadcast into a larger output and a chain inside a reduction's body are cut into several kernels, each bounded,
and compute what NumPy does."""
import numpy as np
import pytest

from pytc import Tensor
from pytc.passes.common.analysis import weight
from pytc.realize import schedule

MAX_OPS, MAX_BUFFERS = 2000, 16  # pytc-fuse's defaults, as the realize pipeline runs it
rng = np.random.default_rng(0)


def rand(*shape: int) -> np.ndarray: return rng.random(shape, dtype=np.float32)


def kernels(out: Tensor) -> list[tuple[str, int, int]]:
  """The name, op weight and number of buffers read of each kernel launched to realize `out` (a graph not seen before)."""
  scheduled = schedule([out.lazydata])[0]
  assert not scheduled.executables, "the kernels of a new graph are not compiled yet"
  bodies = {op.attributes["sym_name"].value: op.regions[0].blocks[0] for op in scheduled.kernels.body.operations if "pytc.kernel" in op.attributes}
  return [(launch.kernel, weight([op.operation for op in bodies[launch.kernel].operations if op.operation.name not in ("uop.store", "uop.end")]),
           len(launch.args) - launch.writes) for launch in scheduled.launches]


def check_bounded(out: Tensor) -> None:
  launched = kernels(out)
  assert len(out.schedule()) == len(launched) > 1
  assert all(ops <= MAX_OPS and buffers <= MAX_BUFFERS for _, ops, buffers in launched), launched


def test_long_chain():
  x0 = rand(256)
  x, want = Tensor(x0), x0.copy()
  steps = [(lambda x: x * 1.0001, lambda x: x * np.float32(1.0001)), (lambda x: x + 0.5, lambda x: x + np.float32(0.5)),
           (lambda x: x.exp2(), np.exp2), (lambda x: -x, np.negative)]
  for i in range(3000): x, want = steps[i % 4][0](x), steps[i % 4][1](want)
  check_bounded(x)
  np.testing.assert_allclose(x.numpy(), want, rtol=1e-4, atol=1e-6)


def test_fork_join_chain():
  x0 = rand(16) * 4 - 2
  x, want = Tensor(x0), x0.astype(np.float64)
  for _ in range(240): x, want = x.sin() + x.cos(), np.sin(want) + np.cos(want)
  check_bounded(x)
  np.testing.assert_allclose(x.numpy(), want, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("balanced", [True, False], ids=["balanced", "left_fold"])
def test_wide_sum(balanced: bool):
  arrays = [rand(64) for _ in range(300)]
  xs = [Tensor(a) for a in arrays]
  if balanced:
    while len(xs) > 1: xs = [a + b for a, b in zip(xs[::2], xs[1::2])] + xs[len(xs) & ~1:]
    total = xs[0]
  else: total = sum(xs)
  check_bounded(total)
  np.testing.assert_allclose(total.numpy(), np.sum(arrays, axis=0, dtype=np.float64), rtol=1e-5)


def test_concatenation_of_many_parts():
  x0 = rand(4)
  x = Tensor(x0)
  out = Tensor.cat(*[(((x * (i / 100)).exp2() + x).exp2() * (x + i / 100).exp2()).sqrt() for i in range(100)])
  check_bounded(out)
  want = np.concatenate([np.sqrt(np.exp2(np.exp2(x0 * np.float32(i / 100)) + x0) * np.exp2(x0 + np.float32(i / 100))) for i in range(100)])
  np.testing.assert_allclose(out.numpy(), want, rtol=1e-5)


def test_int32_chain_and_bool_mask():
  x0 = rng.integers(0, 1024, 64).astype(np.int32)
  x, want = Tensor(x0), x0.copy()
  mask = x > 500  # live across every cut of the chain below: stored as a bool buffer
  for _ in range(1200): x, want = (((x * 3) ^ 341) + 7) & 1023, (((want * 3) ^ 341) + 7) & 1023
  out = mask.where(x, -x)
  check_bounded(out)
  np.testing.assert_equal(out.numpy(), np.where(x0 > 500, want, -want))


def test_chain_broadcast_into_larger_output():
  a0, b0 = rand(16, 64), rand(64)
  b, want = Tensor(b0), b0.copy()
  for _ in range(450): b, want = (b * 0.5).exp2(), np.exp2(want * np.float32(0.5))  # varies along the columns only
  out = Tensor(a0) + b
  check_bounded(out)
  np.testing.assert_allclose(out.numpy(), a0 + want, rtol=1e-5)


def test_chain_feeding_a_reduction():
  x0 = rand(16, 64)
  x, want = Tensor(x0), x0.astype(np.float64)
  for i in range(900):  # inside the reduction's body: cut over a new range in place of the reduce range
    x, want = ((x * 0.5).exp2(), np.exp2(want * 0.5)) if i % 3 == 2 else ((x * 0.999, want * 0.999) if i % 3 else (x + 0.01, want + 0.01))
  out = x.sum(axis=1)
  check_bounded(out)
  np.testing.assert_allclose(out.numpy(), want.sum(axis=1), rtol=1e-4)


def test_scalar_chain():
  x, want = Tensor(np.array(0.5, dtype=np.float32)), np.float32(0.5)
  for _ in range(1200): x, want = (x * -0.7).exp2(), np.exp2(want * np.float32(-0.7))  # values of no range: stored as 0-d buffers
  check_bounded(x)
  np.testing.assert_allclose(x.numpy(), want, rtol=1e-5)
