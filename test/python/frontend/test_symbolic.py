"""Symbolic shapes: Variable, bound values, slices with symbolic bounds, reductions over symbolic dims, one schedule for
every value, TinyJit replays with new bindings; against NumPy on the bound values."""
import numpy as np
import pytest

from pytc import GlobalCounters, Tensor, TinyJit, Variable

M = 12  # the largest size the variables below take


def test_variable_binds_within_its_range_and_computes_affinely():
  v = Variable("n", 1, M)
  assert (v.vmin, v.vmax, v.expr) == (1, M, "n")
  b = v.bind(5)
  assert (b.val, int(b + 2), (b * 3 - 1).val, (2 * b + b).val) == (5, 7, 14, 15)
  assert ((b + 2).vmin, (b + 2).vmax, (-b).vmin) == (3, M + 2, -M)
  assert b + 1 - b == 1 and b - b == 0 and isinstance(b - b, int)
  assert b == v and hash(b) == hash(v)  # a binding is not part of what it is
  assert b.unbind()[1] == 5 and b.unbind()[0] == v
  assert v + 1 > 0 and v <= M and not v > M
  with pytest.raises(TypeError, match="depends on the value"): _ = v > 3
  with pytest.raises(ValueError, match="outside its range"): v.bind(M + 1)
  with pytest.raises(TypeError, match="binds an int"): v.bind(2.0)
  with pytest.raises(RuntimeError, match="not bound"): _ = v.val
  with pytest.raises(NotImplementedError, match="not affine"): _ = v * v
  with pytest.raises(ValueError, match="int bounds"): Variable("bad", 3, 2)


@pytest.fixture(scope="module")
def data() -> np.ndarray: return np.random.default_rng(0).standard_normal((2, M, 3)).astype(np.float32)


@pytest.mark.parametrize("value", [1, 2, 7, M])
def test_reductions_over_a_symbolic_prefix(data, value):
  t = Tensor(data).realize()
  v = Variable("n", 1, M).bind(value)
  part, ref = t[:, :v], data[:, :value]
  assert part.shape == (2, v, 3) and part.numpy().shape == ref.shape
  np.testing.assert_allclose(part.numpy(), ref)
  np.testing.assert_allclose(part.sum(1).numpy(), ref.sum(1), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(part.max(1).numpy(), ref.max(1))
  np.testing.assert_allclose(part.min(1).numpy(), ref.min(1))
  np.testing.assert_allclose(part.mean(1).numpy(), ref.mean(1), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(part.prod(1).numpy(), ref.prod(1), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(part.sum().numpy(), ref.sum(), rtol=1e-5, atol=1e-5)
  e = np.exp(ref - ref.max(1, keepdims=True))
  np.testing.assert_allclose(part.softmax(1).numpy(), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose((part.transpose(1, 2) @ part).numpy(), ref.transpose(0, 2, 1) @ ref, rtol=1e-4, atol=1e-5)
  np.testing.assert_array_equal(part.argmax(1).numpy(), ref.argmax(1))
  np.testing.assert_allclose((part * 2 + 1).exp().numpy(), np.exp(ref * 2 + 1), rtol=1e-5)


@pytest.mark.parametrize("value", [0, 3, M - 2])
def test_a_window_from_a_symbolic_start(data, value):
  t = Tensor(data).realize()
  start = Variable("start", 0, M - 2).bind(value)
  np.testing.assert_array_equal(t[:, start:start + 2].numpy(), data[:, value:value + 2])
  np.testing.assert_array_equal(t.shrink((None, (start, start + 1), (1, 3))).numpy(), data[:, value:value + 1, 1:3])
  np.testing.assert_allclose(t[:, :start + 2].sum(1).numpy(), data[:, :value + 2].sum(1), rtol=1e-5, atol=1e-6)  # NumPy sums in its own order


def test_symbolic_creation_arange_and_triangles():
  for value in (1, 4, 9):
    v = Variable("n", 1, M).bind(value)
    np.testing.assert_array_equal(Tensor.arange(v).numpy(), np.arange(value))
    np.testing.assert_array_equal(Tensor.full((2, v), 3.0).numpy(), np.full((2, value), 3.0))
    mask = Tensor.full((3, v + 3), float("-inf")).triu(v + 1).numpy()
    np.testing.assert_array_equal(mask, np.triu(np.full((3, value + 3), -np.inf), value + 1))
    np.testing.assert_array_equal((Tensor.ones(4) * v).numpy(), np.full(4, value))


def test_one_schedule_serves_every_value(data):
  t = Tensor(data).realize()
  def run(value: int) -> np.ndarray:
    v = Variable("n", 1, M).bind(value)
    return t[:, :v].softmax(1).sum(2).numpy()
  run(3)
  built = GlobalCounters.schedules_built
  for value in range(1, M + 1): np.testing.assert_allclose(run(value).sum(1), np.full(2, 3.0), rtol=1e-5)
  assert GlobalCounters.schedules_built == built


def test_tinyjit_replays_with_the_new_binding():
  cache = Tensor.zeros(1, M, 4).contiguous().realize()
  query = Tensor(np.random.default_rng(1).standard_normal((1, 1, 4)).astype(np.float32)).realize()
  @TinyJit
  def step(x: Tensor, position: Variable) -> Tensor:
    cache[:, position:position + 1].assign(x).realize()
    keys = cache[:, :position + 1]
    return query.scaled_dot_product_attention(keys, keys).realize()
  rows = np.random.default_rng(2).standard_normal((M, 4)).astype(np.float32)
  for position in range(M):
    out = step(Tensor(rows[position].reshape(1, 1, 4)), Variable("pos", 0, M - 1).bind(position)).numpy()
    keys = rows[:position + 1]
    scores = query.numpy()[0] @ keys.T / 2.0
    weights = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
    np.testing.assert_allclose(out[0], weights @ keys, rtol=1e-5, atol=1e-6)
  np.testing.assert_array_equal(cache.numpy()[0], rows)
  with pytest.raises(RuntimeError, match="Variable argument"): step(Tensor.ones(1, 1, 4), Variable("other", 0, M - 1).bind(0))


@pytest.mark.parametrize("device", ["EMU", "AMD:MOCK"])
def test_symbolic_shapes_on_the_gpu_paths(data, device):
  t = Tensor(data, device=device).realize()
  for value in (2, 9):
    v = Variable("n", 1, M).bind(value)
    ref = data[:, :value]
    np.testing.assert_allclose(t[:, :v].softmax(1).numpy(), np.exp(ref) / np.exp(ref).sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
    start = Variable("start", 0, M - 1).bind(value)
    np.testing.assert_array_equal(t[:, start:start + 1].numpy(), data[:, value:value + 1])


def test_what_symbolic_shapes_do_not_support_says_so(data):
  t = Tensor(data).realize()
  v = Variable("n", 1, M).bind(4)
  part = t[:, :v]
  with pytest.raises(NotImplementedError, match="regroup"): part.reshape(2, -1)
  with pytest.raises(NotImplementedError, match="flip"): part.flip(1)
  with pytest.raises(NotImplementedError, match="pad"): part.pad(((0, 0), (1, 0), (0, 0)))
  with pytest.raises(ValueError, match="out of bounds"): t[:, :v + M]
  with pytest.raises(RuntimeError, match="not bound"): t[:, :Variable("free", 1, M)].numpy()
  assert part.reshape(2, v, 3, 1).shape == (2, v, 3, 1) and part.reshape(1, 2, v, 3).numpy().shape == (1, 2, 4, 3)
