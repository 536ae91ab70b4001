"""The rest of tinygrad's elementwise, cumulative and shape helpers, against NumPy."""
import math

import numpy as np
import pytest

from pytc import Tensor, dtypes

X = np.array([-2.0, -0.5, 0.0, 0.3, 1.5, 4.0, 7.0], np.float32)
CASES = {
  "sinh": (lambda t: t.sinh(), np.sinh), "cosh": (lambda t: t.cosh(), np.cosh), "asinh": (lambda t: t.asinh(), np.arcsinh),
  "acosh": (lambda t: (t.abs() + 1).acosh(), lambda x: np.arccosh(np.abs(x) + 1)),
  "atanh": (lambda t: (t * 0.1).atanh(), lambda x: np.arctanh(x * 0.1)),
  "log10": (lambda t: (t.abs() + 1).log10(), lambda x: np.log10(np.abs(x) + 1)),
  "erf": (lambda t: t.erf(), lambda x: np.array([math.erf(v) for v in x])),
  "relu6": (lambda t: t.relu6(), lambda x: np.clip(x, 0, 6)), "hardtanh": (lambda t: t.hardtanh(), lambda x: np.clip(x, -1, 1)),
  "hardsigmoid": (lambda t: t.hardsigmoid(), lambda x: np.clip(x / 6 + 0.5, 0, 1)),
  "hardswish": (lambda t: t.hardswish(), lambda x: x * np.clip(x + 3, 0, 6) / 6),
  "softsign": (lambda t: t.softsign(), lambda x: x / (1 + np.abs(x))), "logsigmoid": (lambda t: t.logsigmoid(), lambda x: -np.log1p(np.exp(-x))),
  "selu": (lambda t: t.selu(), lambda x: 1.0507 * np.where(x >= 0, x, 1.67326 * (np.exp(x) - 1))),
  "celu": (lambda t: t.celu(), lambda x: np.maximum(x, 0) + np.minimum(0, np.exp(x) - 1)),
  "quick_gelu": (lambda t: t.quick_gelu(), lambda x: x / (1 + np.exp(-1.702 * x))),
  "lerp": (lambda t: t.lerp(t * 2, 0.25), lambda x: x + x * 0.25),
  "logaddexp": (lambda t: t.logaddexp(t.flip(0)), lambda x: np.logaddexp(x, x[::-1])),
  "copysign": (lambda t: t.copysign(-1.0), lambda x: -np.abs(x)), "fmod": (lambda t: t.fmod(1.5), lambda x: np.fmod(x, 1.5)),
  "cummax": (lambda t: t.cummax(0)[0], np.maximum.accumulate), "cummin": (lambda t: t.cummin(0)[0], np.minimum.accumulate),
  "logcumsumexp": (lambda t: t.logcumsumexp(0), np.logaddexp.accumulate),
  "roll": (lambda t: t.roll(2, 0), lambda x: np.roll(x, 2)), "repeat_interleave": (lambda t: t.repeat_interleave(2), lambda x: np.repeat(x, 2)),
  "softmin": (lambda t: t.softmin(0), lambda x: np.exp(-x) / np.exp(-x).sum()),
  "normalize": (lambda t: t.reshape(1, -1).normalize(), lambda x: (x / np.linalg.norm(x)).reshape(1, -1)),
}


@pytest.mark.parametrize("name", CASES)
def test_matches_numpy(name):
  ours, theirs = CASES[name]
  np.testing.assert_allclose(ours(Tensor(X)).numpy(), theirs(X), rtol=1e-5, atol=1e-6)


def test_matrix_and_grid_helpers():
  m = np.arange(9, dtype=np.float32).reshape(3, 3)
  np.testing.assert_array_equal(Tensor(m).diagonal().numpy(), np.diag(m))
  np.testing.assert_array_equal(Tensor(np.diag(m)).diag().numpy(), np.diag(np.diag(m)))
  for indexing in ("ij", "xy"):
    ours, theirs = Tensor.meshgrid(Tensor([1, 2, 3]), Tensor([4, 5]), indexing=indexing), np.meshgrid([1, 2, 3], [4, 5], indexing=indexing)
    for a, b in zip(ours, theirs): np.testing.assert_array_equal(a.numpy(), b)
  assert Tensor([1, 2]).pad_to(4).tolist() == [1, 2, 0, 0] and Tensor([1, 2, 3]).shrink_to(2).tolist() == [1, 2]


def test_predicates_and_losses():
  values = Tensor([1.0, float("nan"), float("inf"), -float("inf")])
  assert values.isnan().tolist() == [False, True, False, False] and values.isinf().tolist() == [False, False, True, True]
  assert values.isfinite().tolist() == [True, False, False, False] and values.isinf(detect_negative=False).tolist() == [False, False, True, False]
  assert Tensor(X).allclose(Tensor(X * (1 + 1e-7))) and not Tensor(X).allclose(Tensor(X + 0.01))
  log_probs = np.log(np.array([[0.2, 0.8], [0.6, 0.4]], np.float32))
  np.testing.assert_allclose(Tensor(log_probs).nll_loss(Tensor([1, 0])).numpy(), -(log_probs[0, 1] + log_probs[1, 0]) / 2, rtol=1e-6)
  var, mean = Tensor(X).var_mean()
  np.testing.assert_allclose([var.item(), mean.item()], [X.var(ddof=1), X.mean()], rtol=1e-5)


def test_conversions_and_sizes():
  t = Tensor([1.5, 2.5])
  assert t.half().dtype == dtypes.float16 and t.double().dtype == dtypes.float64 and t.long().dtype == dtypes.int64
  assert t.short().dtype == dtypes.int16 and t.bfloat16().dtype == dtypes.bfloat16 and t.is_floating_point()
  assert t.element_size() == 4 and t.nbytes() == 8 and t.size() == (2,) and t.size(0) == 2
  assert t.clone().tolist() == [1.5, 2.5] and t.empty_like().shape == (2,)
  Tensor.manual_seed(3)
  assert t.rand_like().shape == (2,) and Tensor.glorot_uniform(4, 5).shape == (4, 5) and Tensor.kaiming_normal(3, 4).shape == (3, 4)


def test_gradient_unfold_sequential():
  x = Tensor([1.0, 2.0, 3.0])
  (dx,) = (x * x).sum().gradient(x)
  assert dx.tolist() == [2.0, 4.0, 6.0] and x.grad is None
  assert (x * 2).sum().gradient(Tensor([1.0]))[0].tolist() == [0.0]
  a = np.arange(10, dtype=np.float32).reshape(2, 5)
  np.testing.assert_array_equal(Tensor(a).unfold(1, 2, 2).numpy(), np.stack([a[:, 0:2], a[:, 2:4]], 1))
  assert Tensor([1.0, -1.0]).sequential([Tensor.relu, lambda t: t * 3]).tolist() == [3.0, 0.0]
