"""TinyJit: capture once, replay with new inputs through one prebuilt command buffer."""
import numpy as np
import pytest

from pytc import GlobalCounters, Tensor, TinyJit
from pytc.jit import JitError


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


def test_replay_rejects_other_shapes():
  @TinyJit
  def double(x: Tensor) -> Tensor: return x * 2
  for _ in range(3): double(Tensor(np.ones(4, np.float32)))
  with pytest.raises(JitError, match="captured with"): double(Tensor(np.ones(5, np.float32)))
