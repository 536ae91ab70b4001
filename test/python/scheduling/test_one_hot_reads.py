"""Tensor indexing, gather and embeddings are one-hot sums (tinygrad's formulation); pytc-rangeify turns each into one
read per output at the index, clamped into the buffer, 0 where the index is outside it. Checked against NumPy for every
table and index dtype, wild indices, special values, a table past pytc-split-reduce's threshold, and the gradient."""
import numpy as np
import pytest

from pytc import Tensor

TABLES = ["float32", "float16", "int8", "uint8", "int32", "int64", "bool"]
INDICES = ["int8", "uint8", "int16", "int32", "int64", "uint32", "uint64"]


def picked(table: np.ndarray, index: np.ndarray, axis: int = 0) -> np.ndarray:
  """NumPy's take at wrapped indices (negatives count from the end), with 0 where an index is outside."""
  n = table.shape[axis]
  wrapped = np.where(index < 0, index.astype(np.int64) + n, index).astype(np.int64) if index.dtype.kind == "i" else index.astype(np.int64)
  inside = (wrapped >= 0) & (wrapped < n)
  values = np.take(table, np.where(inside, wrapped, 0), axis=axis)
  shape = (1,) * axis + inside.shape + (1,) * (table.ndim - axis - 1)
  return np.where(inside.reshape(shape), values, np.zeros((), table.dtype))


def table_of(dtype: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
  if dtype == "bool": return rng.random(shape) < 0.5
  if dtype.startswith(("int", "uint")): return rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, shape, endpoint=True).astype(dtype)
  return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("table_dtype", TABLES)
@pytest.mark.parametrize("index_dtype", INDICES)
def test_rows_at_tensor_indices(table_dtype, index_dtype):
  rng = np.random.default_rng(len(table_dtype) * 31 + len(index_dtype))
  table = table_of(table_dtype, (37, 5), rng)
  info = np.iinfo(index_dtype)
  index = np.array([0, 36, 5, 37, 100, info.max, 1], dtype=index_dtype)
  if info.min < 0: index = np.concatenate([index, np.array([-1, -37, -38, info.min], dtype=index_dtype)])
  out = Tensor(table)[Tensor(index)]
  assert out.dtype == Tensor(table).dtype
  np.testing.assert_array_equal(out.numpy(), picked(table, index))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_gather_along_each_axis(axis):
  rng = np.random.default_rng(axis)
  x = rng.standard_normal((4, 6, 5)).astype(np.float32)
  shape = list(x.shape)
  shape[axis] = 7
  index = rng.integers(0, x.shape[axis], shape).astype(np.int32)
  out = Tensor(x).gather(axis, Tensor(index)).numpy()
  np.testing.assert_array_equal(out, np.take_along_axis(x, index.astype(np.int64), axis))


def test_special_values_are_read_as_they_are():
  table = np.array([[-0.0, np.nan], [np.inf, -np.inf], [3e38, -1e-45]], np.float32)
  index = np.array([[2, 0, 1, 0]], np.int32)
  out = Tensor(table)[Tensor(index)].numpy()
  np.testing.assert_array_equal(out, table[index])
  assert np.signbit(out[0, 1, 0])  # -0.0 picked, not a sum's +0.0


def test_two_advanced_indices_pick_one_element_each():
  rng = np.random.default_rng(3)
  x = rng.standard_normal((9, 11, 3)).astype(np.float32)
  rows, cols = np.array([0, 8, 4, 9]), np.array([10, 0, 5, 2])
  out = Tensor(x)[Tensor(rows.astype(np.int32)), Tensor(cols.astype(np.int32))].numpy()
  inside = (rows < 9)[:, None]
  np.testing.assert_array_equal(out, np.where(inside, x[np.minimum(rows, 8), cols], 0))


def test_a_vocabulary_past_the_split_threshold_is_one_kernel_reading_the_rows():
  rng = np.random.default_rng(4)
  table = rng.standard_normal((70000, 16)).astype(np.float32)
  index = rng.integers(-70000, 70000, (3, 9)).astype(np.int32)
  out = Tensor(table)[Tensor(index)]
  assert [launch.kernel for launch in out.schedule()] == ["E_3_9_16"]
  np.testing.assert_array_equal(out.numpy(), picked(table, index))


def test_embedding_gradient_adds_the_rows_it_picked():
  rng = np.random.default_rng(5)
  table = rng.standard_normal((10, 4)).astype(np.float32)
  index = np.array([[1, 3, 1], [9, 0, 1]], np.int32)
  weights = rng.standard_normal((2, 3, 4)).astype(np.float32)
  t = Tensor(table, requires_grad=True)
  (t[Tensor(index)] * Tensor(weights)).sum().backward()
  expected = np.zeros_like(table)
  np.add.at(expected, index, weights)
  np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-6, atol=1e-6)


def test_empty_zero_d_and_size_one_indices_and_several_outputs_realized_together():
  rng = np.random.default_rng(6)
  table = rng.standard_normal((70000, 3)).astype(np.float32)
  x, w = rng.standard_normal((16, 128)).astype(np.float32), rng.standard_normal((128, 256)).astype(np.float32)
  t = Tensor(table)
  empty, scalar, single = t[Tensor(np.zeros((0,), np.int32))], t[Tensor(np.array(-2, np.int32))], t[Tensor(np.array([[69999]], np.int32))]
  projected = Tensor(x).exp() @ Tensor(w)
  Tensor.realize(empty, scalar, single, projected)
  assert empty.shape == (0, 3) and empty.numpy().shape == (0, 3)
  np.testing.assert_array_equal(scalar.numpy(), table[-2])
  np.testing.assert_array_equal(single.numpy(), table[[[69999]]])
  np.testing.assert_allclose(projected.numpy(), np.exp(x) @ w, rtol=1e-4, atol=1e-3)
