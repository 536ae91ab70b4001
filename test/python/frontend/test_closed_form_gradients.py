"""Gradients pytc computes by closed forms instead of through the ops' own graphs: softmax, log_softmax, layernorm and
batchnorm with the batch's statistics (reductions of a materialized output gradient), gelu, quick_gelu and silu (one slope
per element). Checked against float64 central finite differences over axes, dtypes, size-1 and empty rows, saturated and
infinite inputs; the rows' gradients against NumPy's closed forms where the inputs hold -inf; a transformer block against
torch's autograd; and the schedules of an embedding's and an MLP stack's backward."""
from __future__ import annotations

import numpy as np
import pytest

from pytc import Tensor, dtypes

rng = np.random.default_rng(0)


def finite_differences(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
  grad = np.zeros_like(x)
  for i in np.ndindex(x.shape):
    up, down = x.copy(), x.copy()
    up[i] += eps
    down[i] -= eps
    grad[i] = (f(up) - f(down)) / (2 * eps)
  return grad


def gradient_of(method: str, x: np.ndarray, weights: np.ndarray, dtype=dtypes.float64, **kwargs) -> np.ndarray:
  t = Tensor(x, dtype=dtype, requires_grad=True)
  (getattr(t, method)(**kwargs) * Tensor(weights, dtype=dtype)).sum().backward()
  assert t.grad.dtype == dtype
  return t.grad.numpy().astype(np.float64)


def weighted(method: str, weights: np.ndarray, **kwargs):
  return lambda a: float((getattr(Tensor(a), method)(**kwargs).numpy() * weights).sum())


ROWS = [("softmax", {}), ("log_softmax", {}), ("layernorm", {})]


@pytest.mark.parametrize("method,kwargs", ROWS)
@pytest.mark.parametrize("shape,axis", [((3, 5), -1), ((3, 5), 0), ((2, 3, 4), 1), ((4, 1), -1), ((1, 6), -1), ((5,), 0)])
def test_rows_against_finite_differences(method, kwargs, shape, axis):
  x, w = rng.standard_normal(shape) * 2, rng.standard_normal(shape)
  got = gradient_of(method, x, w, axis=axis, **kwargs)
  np.testing.assert_allclose(got, finite_differences(weighted(method, w, axis=axis, **kwargs), x), atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("method,kwargs", ROWS)
def test_rows_float32_and_half(method, kwargs):
  x, w = rng.standard_normal((4, 16)), rng.standard_normal((4, 16))
  reference = finite_differences(weighted(method, w, **kwargs), x)
  np.testing.assert_allclose(gradient_of(method, x, w, dtypes.float32, **kwargs), reference, atol=2e-5, rtol=1e-4)
  np.testing.assert_allclose(gradient_of(method, x, w, dtypes.float16, **kwargs), reference, atol=2e-2, rtol=2e-2)


def test_softmax_in_a_wider_dtype():
  """softmax(dtype=float32) of a half tensor: the gradient comes back as half."""
  x = Tensor(rng.standard_normal((3, 8)), dtype=dtypes.float16, requires_grad=True)
  y = x.softmax(-1, dtype=dtypes.float32)
  assert y.dtype == dtypes.float32
  (y * Tensor(np.arange(8.0), dtype=dtypes.float32)).sum().backward()
  assert x.grad.dtype == dtypes.float16
  p = y.numpy().astype(np.float64)
  expected = p * (np.arange(8.0) - (p * np.arange(8.0)).sum(-1, keepdims=True))
  np.testing.assert_allclose(x.grad.numpy().astype(np.float64), expected, atol=2e-3)


def test_masked_rows():
  """-inf entries (a causal mask): softmax passes them no gradient, log_softmax its own (d x_j / d x_j); the others stay
  finite."""
  x = rng.standard_normal((4, 4))
  x[np.triu_indices(4, 1)] = -np.inf
  w = rng.standard_normal((4, 4))
  p = np.exp(x - x.max(-1, keepdims=True))
  p /= p.sum(-1, keepdims=True)
  np.testing.assert_allclose(gradient_of("softmax", x, w), p * (w - (w * p).sum(-1, keepdims=True)), atol=1e-12)
  np.testing.assert_allclose(gradient_of("log_softmax", x, w), w - p * w.sum(-1, keepdims=True), atol=1e-12)


def test_empty_rows():
  for method, kwargs in ROWS:
    assert gradient_of(method, np.zeros((0, 3)), np.zeros((0, 3)), **kwargs).shape == (0, 3)


def test_zero_dim_rows():
  """A 0-d tensor is one row of one element: softmax 1 and log_softmax 0 whatever x, so no gradient reaches it."""
  for method, value in (("softmax", 1.0), ("log_softmax", 0.0)):
    x = Tensor(2.5, requires_grad=True)
    y = getattr(x, method)()
    (y * 3).backward()
    assert y.shape == () and y.item() == value and x.grad.item() == 0.0


def test_layernorm_of_a_constant_row():
  """A constant row normalizes to 0; its gradient is rstd times g less its mean (eps keeps rstd finite)."""
  w = rng.standard_normal((2, 6))
  got = gradient_of("layernorm", np.full((2, 6), 3.0), w)
  np.testing.assert_allclose(got, (w - w.mean(-1, keepdims=True)) / np.sqrt(1e-5), rtol=1e-9)


def test_second_derivative_of_softmax():
  """The rule is differentiable: the gradient of sum(softmax(x) * w)'s gradient against finite differences of it."""
  x0, w, v = rng.standard_normal((2, 5)), rng.standard_normal((2, 5)), rng.standard_normal((2, 5))
  def first(a: np.ndarray) -> np.ndarray:
    p = np.exp(a - a.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return p * (w - (w * p).sum(-1, keepdims=True))
  x = Tensor(x0, dtype=dtypes.float64, requires_grad=True)
  (g,) = (x.softmax() * Tensor(w)).sum().gradient(x)
  (g * Tensor(v)).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), finite_differences(lambda a: float((first(a) * v).sum()), x0), atol=1e-6)


def batchnorm_reference(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
  axes = tuple(a for a in range(x.ndim) if a != 1)
  shape = (1, -1) + (1,) * (x.ndim - 2)
  centered = x - x.mean(axes, keepdims=True)
  return centered / np.sqrt((centered ** 2).mean(axes, keepdims=True) + 1e-5) * weight.reshape(shape) + bias.reshape(shape)


@pytest.mark.parametrize("shape", [(4, 3, 5, 5), (6, 3), (1, 3, 2, 2), (2, 3, 1, 4, 2)])
@pytest.mark.parametrize("affine", [True, False])
def test_batchnorm_with_batch_statistics(shape, affine):
  """BatchNorm with the batch's statistics (in training mode and out of it, without running statistics, which are float32):
  the gradients to x, weight and bias against finite differences, in float64."""
  from pytc.nn import BatchNorm
  x0, w = rng.standard_normal(shape), rng.standard_normal(shape)
  weight0, bias0 = (rng.standard_normal(3), rng.standard_normal(3)) if affine else (np.ones(3), np.zeros(3))
  def loss(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float: return float((batchnorm_reference(a, b, c) * w).sum())
  for training in (True, False):
    norm = BatchNorm(3, affine=affine, track_running_stats=False)
    if affine: norm.weight, norm.bias = (Tensor(a, dtype=dtypes.float64, requires_grad=True) for a in (weight0, bias0))
    x = Tensor(x0, dtype=dtypes.float64, requires_grad=True)
    Tensor.training = training
    try: (norm(x) * Tensor(w)).sum().backward()
    finally: Tensor.training = False
    np.testing.assert_allclose(x.grad.numpy(), finite_differences(lambda a: loss(a, weight0, bias0), x0), atol=1e-6)
    if affine:
      np.testing.assert_allclose(norm.weight.grad.numpy(), finite_differences(lambda b: loss(x0, b, bias0), weight0), atol=1e-6)
      np.testing.assert_allclose(norm.bias.grad.numpy(), finite_differences(lambda c: loss(x0, weight0, c), bias0), atol=1e-6)


SLOPES = [("gelu", {}), ("gelu", {"approximate": "none"}), ("quick_gelu", {}), ("silu", {})]


@pytest.mark.parametrize("method,kwargs", SLOPES)
def test_slopes_against_finite_differences(method, kwargs):
  x = np.array([-30.0, -6.0, -2.5, -1.0, -1e-3, 0.0, 1e-3, 0.5, 1.0, 2.0, 7.0, 30.0])
  got = gradient_of(method, x, np.ones_like(x), **kwargs)
  np.testing.assert_allclose(got, finite_differences(weighted(method, np.ones_like(x), **kwargs), x), atol=1e-8, rtol=1e-6)


@pytest.mark.parametrize("method,kwargs", SLOPES)
def test_slopes_at_the_limits(method, kwargs):
  """At -inf and +inf the slopes are their limits, 0 and 1; NaN passes on."""
  got = gradient_of(method, np.array([-np.inf, np.inf, np.nan, -1e30, 1e30]), np.ones(5), dtypes.float32, **kwargs)
  np.testing.assert_array_equal(got[[0, 1, 3, 4]], [0.0, 1.0, 0.0, 1.0])
  assert np.isnan(got[2])


@pytest.mark.parametrize("method,kwargs", SLOPES)
@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float16, dtypes.bfloat16])
def test_slopes_keep_the_dtype(method, kwargs, dtype):
  x = np.linspace(-4, 4, 9)
  reference = finite_differences(weighted(method, np.ones(9), **kwargs), x)
  np.testing.assert_allclose(gradient_of(method, x, np.ones(9), dtype, **kwargs), reference, atol=2e-2 if dtype.itemsize == 2 else 1e-5)


def test_slope_with_a_second_derivative():
  """gelu''(x) through the slope rule, against finite differences of the first derivative."""
  x0, eps = np.linspace(-3, 3, 7), 1e-6
  x = Tensor(x0, dtype=dtypes.float64, requires_grad=True)
  (g,) = x.gelu().sum().gradient(x)
  g.sum().backward()
  slope = lambda a: gradient_of("gelu", a, np.ones_like(a))
  np.testing.assert_allclose(x.grad.numpy(), (slope(x0 + eps) - slope(x0 - eps)) / (2 * eps), atol=1e-6)


def test_transformer_block_gradient_matches_torch():
  """A pre-LN block (layernorm, attention with a causal softmax, tanh GELU MLP, residuals) and its parameters' gradients
  against torch's autograd."""
  torch = pytest.importorskip("torch")
  d, n = 16, 8
  params = {name: rng.standard_normal(shape).astype(np.float32) * 0.3 for name, shape in
            {"qkv": (d, 3 * d), "fc": (d, 4 * d), "proj": (4 * d, d), "x": (2, n, d)}.items()}
  def block(p, layernorm, gelu, attention):
    x = p["x"]
    q, k, v = (layernorm(x) @ p["qkv"]).split(d, dim=-1)
    x = x + attention(q, k, v)
    return (x + gelu(layernorm(x) @ p["fc"]) @ p["proj"]).sum()
  ours = {name: Tensor(a, requires_grad=True) for name, a in params.items()}
  block(ours, lambda t: t.layernorm(), lambda t: t.gelu(), lambda q, k, v: q.scaled_dot_product_attention(k, v, is_causal=True)).backward()
  import torch.nn.functional as F
  theirs = {name: torch.tensor(a, requires_grad=True) for name, a in params.items()}
  block(theirs, lambda t: F.layer_norm(t, (d,), eps=1e-5), lambda t: F.gelu(t, approximate="tanh"),
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)).backward()
  for name in params: np.testing.assert_allclose(ours[name].grad.numpy(), theirs[name].grad.numpy(), atol=2e-4, rtol=1e-4)


def test_embedding_read_at_the_index_when_scheduled_with_its_backward():
  """The one-hot mask an embedding's forward and backward share stays computed in both: the forward is one read per token
  (no kernel reduces over the 1000-row table), the backward a sum over tokens."""
  table = Tensor(rng.standard_normal((1000, 8)).astype(np.float32), requires_grad=True)
  idx = rng.integers(-1000, 1000, (2, 5))
  loss = (table[Tensor(idx.astype(np.int32))] * 2).sum()
  loss.backward()
  assert not any(launch.kernel.endswith("_1000") for launch in loss.schedule(table.grad))
  Tensor.realize(loss, table.grad)
  expected = np.zeros((1000, 8))
  np.add.at(expected, idx % 1000, 2.0)
  np.testing.assert_allclose(table.grad.numpy(), expected)
  np.testing.assert_allclose(loss.numpy(), 2 * table.numpy()[idx % 1000].sum(), rtol=1e-5)


def test_mlp_backward_computes_each_gradient_once():
  """The residual gradient reaching a GELU between projections is computed once: no two kernels of the step compute the
  same thing from the same buffers (the chain rule through GELU's own graph read it in every product, and each of those
  reads became a copy of it)."""
  d, n = 64, 32
  w1, w2, wa, wh = (Tensor(rng.standard_normal(s).astype(np.float32) * 0.1, requires_grad=True) for s in ((d, 4 * d), (4 * d, d), (d, d), (d, 16)))
  h = Tensor(rng.standard_normal((n, d)).astype(np.float32))
  for _ in range(2):
    h = h + h.layernorm() @ wa
    h = h + (h.layernorm() @ w1).gelu() @ w2
  (h.layernorm() @ wh).sum().backward()
  computed = [(launch.kernel, launch.args[1:]) for launch in w1.grad.schedule(w2.grad, wa.grad, wh.grad)]
  assert len(computed) == len(set(computed))
