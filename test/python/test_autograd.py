"""Gradients of every differentiable op against central finite differences (in float64)."""
import numpy as np
import pytest

from pytc import Tensor, dtypes, gradient

F64 = dtypes.float64
rng = np.random.default_rng(0)

# name: (function of tensors, input shapes); inputs are kept away from kinks (0 for relu/abs, ties for max)
OPS = {
  "add": (lambda a, b: a + b, [(2, 3), (2, 3)]),
  "sub_broadcast": (lambda a, b: a - b, [(2, 3), (3,)]),
  "mul": (lambda a, b: a * b, [(2, 3), (2, 3)]),
  "div": (lambda a, b: a / (b.abs() + 1), [(2, 3), (2, 3)]),
  "neg": (lambda a: -a, [(4,)]),
  "exp": (lambda a: a.exp(), [(4,)]),
  "log": (lambda a: (a.abs() + 0.5).log(), [(4,)]),
  "exp2_log2": (lambda a: a.exp2() + (a * a + 1).log2(), [(4,)]),
  "sin_cos": (lambda a: a.sin() * a.cos(), [(4,)]),
  "sqrt_rsqrt": (lambda a: (a * a + 1).sqrt() + (a * a + 2).rsqrt(), [(4,)]),
  "reciprocal": (lambda a: (a * a + 1).reciprocal(), [(4,)]),
  "pow": (lambda a, b: (a.abs() + 0.5).pow(b), [(4,), (4,)]),
  "maximum_minimum": (lambda a, b: a.maximum(b) + a.minimum(b * 2), [(5,), (5,)]),
  "relu_sigmoid_tanh": (lambda a: a.relu() + a.sigmoid() + a.tanh(), [(5,)]),
  "gelu_silu_softplus": (lambda a: a.gelu() + a.silu() + a.softplus(), [(5,)]),
  "where": (lambda a, b: (a > b).where(a * 2, b * 3), [(5,), (5,)]),
  "sum_axis": (lambda a: a.sum(axis=1), [(3, 4)]),
  "max_reduce": (lambda a: a.max(axis=0), [(3, 4)]),
  "mean_var": (lambda a: a.mean(axis=1) + a.var(axis=1), [(3, 4)]),
  "softmax": (lambda a: a.softmax(-1), [(2, 5)]),
  "log_softmax": (lambda a: a.log_softmax(-1), [(2, 5)]),
  "logsumexp": (lambda a: a.logsumexp(1), [(2, 5)]),
  "layernorm": (lambda a: a.layernorm(-1), [(2, 5)]),
  "matmul": (lambda a, b: a @ b, [(2, 3), (3, 4)]),
  "reshape_permute": (lambda a: a.reshape(3, 2, 2).permute(2, 0, 1) * Tensor.arange(2, dtype=F64).reshape(2, 1, 1), [(3, 4)]),
  "expand": (lambda a: a.reshape(3, 1).expand(3, 4) * Tensor.arange(12, dtype=F64).reshape(3, 4), [(3,)]),
  "pad_shrink_flip": (lambda a: a.pad(((1, 2), (0, 1))).shrink(((1, 4), (1, 3))).flip(0) * 3, [(3, 4)]),
  "cat_split": (lambda a, b: a.cat(b, dim=1).split(2, dim=1)[1] * 2, [(2, 3), (2, 2)]),
  "cross_entropy": (lambda a: a.sparse_categorical_crossentropy(Tensor([1, 0, 3])), [(3, 4)]),
  "linear": (lambda x, w, b: x.linear(w, b).relu(), [(2, 3), (3, 4), (4,)]),
  "conv2d": (lambda x, w: x.conv2d(w, stride=2, padding=1), [(1, 2, 5, 5), (3, 2, 3, 3)]),
  "conv_transpose2d": (lambda x, w: x.conv_transpose2d(w, stride=2), [(1, 2, 3, 3), (2, 2, 2, 2)]),
  "pools": (lambda x: x.max_pool2d() + x.avg_pool2d(), [(1, 1, 4, 4)]),
  "cumsum": (lambda a: a.cumsum(1), [(2, 4)]),
  "getitem": (lambda a: a[1:, ::-2] * 2 + a[Tensor([2, 0])].sum(), [(3, 4)]),
  "gather": (lambda a: a.gather(1, Tensor([[0, 2], [1, 1]])), [(2, 3)]),
  "einsum": (lambda a, b: Tensor.einsum("ij,kj->ik", a, b), [(2, 3), (4, 3)]),
  "std": (lambda a: a.std(axis=0), [(4, 3)]),
}


def evaluate(fn, arrays, weights) -> float:
  return float((fn(*[Tensor(a) for a in arrays]) * Tensor(weights)).sum().numpy())


@pytest.mark.parametrize("name", OPS)
def test_gradient_matches_finite_differences(name):
  fn, shapes = OPS[name]
  arrays = [rng.uniform(-1.5, 1.5, shape) for shape in shapes]
  arrays = [np.where(np.abs(a) < 0.1, 0.3, a) for a in arrays]
  out_shape = fn(*[Tensor(a) for a in arrays]).shape
  weights = rng.uniform(0.5, 1.5, out_shape)
  tensors = [Tensor(a, requires_grad=True) for a in arrays]
  (fn(*tensors) * Tensor(weights)).sum().backward()
  eps = 1e-6
  for position, (tensor, array) in enumerate(zip(tensors, arrays)):
    numeric = np.zeros_like(array)
    for index in np.ndindex(array.shape):
      plus, minus = array.copy(), array.copy()
      plus[index] += eps
      minus[index] -= eps
      with_plus, with_minus = list(arrays), list(arrays)
      with_plus[position], with_minus[position] = plus, minus
      numeric[index] = (evaluate(fn, with_plus, weights) - evaluate(fn, with_minus, weights)) / (2 * eps)
    np.testing.assert_allclose(tensor.grad.numpy(), numeric, rtol=1e-4, atol=1e-6)


def test_gradients_accumulate_and_detach_cuts_them():
  x = Tensor([1.0, 2.0], requires_grad=True)
  (x * x).sum().backward()
  (x * 3).sum().backward()
  np.testing.assert_allclose(x.grad.numpy(), [5.0, 7.0])
  y = Tensor([1.0, 2.0], requires_grad=True)
  (y.detach() * y).sum().backward()
  np.testing.assert_allclose(y.grad.numpy(), [1.0, 2.0])


def test_cast_passes_the_gradient_back_in_the_source_dtype():
  x = Tensor(np.array([0.1, 0.2, 0.3]), requires_grad=True)
  (x.cast(dtypes.float32) * 2).sum().backward()
  assert x.grad.dtype == F64
  np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_backward_errors():
  x = Tensor([1.0, 2.0], requires_grad=True)
  with pytest.raises(ValueError, match=r"needs a scalar, not shape \(2,\)"): (x * 2).backward()
  Tensor.no_grad = True
  try:
    with pytest.raises(RuntimeError, match="no_grad"): (x * 2).sum().backward()
  finally:
    Tensor.no_grad = False


def gradients_of(fn, arrays, weights) -> list[np.ndarray]:
  tensors = [Tensor(a, requires_grad=True) for a in arrays]
  (fn(*tensors) * Tensor(weights)).sum().backward()
  return [t.grad.numpy() for t in tensors]


@pytest.mark.parametrize("name", OPS)
def test_a_replayed_gradient_graph_matches_one_built_afresh(name):
  fn, shapes = OPS[name]
  first, second = ([rng.uniform(-1.5, 1.5, shape) for shape in shapes] for _ in range(2))
  weights = rng.uniform(0.5, 1.5, fn(*[Tensor(a) for a in first]).shape)
  gradient._GRADIENT_GRAPHS.clear()
  gradients_of(fn, first, weights)
  replayed = gradients_of(fn, second, weights)
  gradient._GRADIENT_GRAPHS.clear()
  for ours, fresh in zip(replayed, gradients_of(fn, second, weights)): np.testing.assert_array_equal(ours, fresh)


def test_replayed_gradients_follow_the_wiring_and_the_targets():
  a, b = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])
  for _ in range(2):  # the second round replays what the first recorded
    x, y = Tensor(a, requires_grad=True), Tensor(b, requires_grad=True)
    (x * y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), b)
    np.testing.assert_array_equal(y.grad.numpy(), a)
    x = Tensor(a, requires_grad=True)
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * a)
    x, y = Tensor(a, requires_grad=True), Tensor(b, requires_grad=False)
    (x * y).sum().backward()
    assert y.grad is None
    np.testing.assert_array_equal(x.grad.numpy(), b)
    x, y = Tensor(a, requires_grad=True), Tensor(b, requires_grad=True)
    (x * y).sum().backward(Tensor(2.0, dtype=F64))
    np.testing.assert_array_equal(x.grad.numpy(), 2 * b)
