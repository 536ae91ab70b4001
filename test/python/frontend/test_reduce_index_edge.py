"""Reductions, cumulative ops, movement and indexing at their edges, against NumPy: every dtype, extreme values, NaN,
0-d tensors, empty and size-1 dims, and the errors tinygrad raises."""
import numpy as np
import pytest

from pytc import Tensor, dtypes
from pytc.dtype import DType

DTYPES = [dtypes.bool, dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32, dtypes.int64, dtypes.uint64,
          dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64]
FLOATS = [dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64]


def reference_dtype(dtype: DType) -> np.dtype: return np.dtype(np.float32 if dtype is dtypes.bfloat16 else dtype.numpy)


def tensor(values: np.ndarray, dtype: DType) -> Tensor:
  """values (exactly representable in dtype) as a tensor of dtype; bfloat16 goes through float32."""
  if dtype is dtypes.bfloat16: return Tensor(np.asarray(values, np.float32)).cast(dtypes.bfloat16)
  return Tensor(np.asarray(values, reference_dtype(dtype)))


def extremes(dtype: DType) -> np.ndarray:
  """12 values of dtype with its smallest and largest, repeats (for first-index ties) and zero, shaped (3, 4)."""
  if dtype is dtypes.bool: values = [True, False, True, True, False, False, True, False, True, True, False, True]
  elif dtype.is_float: values = [3.0, -np.inf, 0.5, 7.0, np.inf, -2.0, 7.0, 0.0, -np.inf, 1.5, -0.25, 2.0]
  else:
    info = np.iinfo(dtype.numpy)
    values = [3, info.min, 0, info.max, 1, info.min, 7, info.max, 0, 2, info.min + 1, info.max - 1]
  return np.array(values, reference_dtype(dtype)).reshape(3, 4)


def small(dtype: DType) -> np.ndarray:
  """Values whose running sums and products stay small: (3, 4)."""
  values = np.array([1, 0, 2, 1, 3, 1, 0, 2, 1, 1, 2, 1]).reshape(3, 4)
  return values.astype(bool) if dtype is dtypes.bool else values.astype(reference_dtype(dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_min_max_and_their_indices(dtype: DType):
  a = extremes(dtype)
  for x, axes in ((a, (None, 0, -1)), (a[:, :1], (1,)), (a[1, 2], (None,))):
    t = tensor(x, dtype)
    for axis in axes:
      for name in ("min", "max", "argmin", "argmax"):
        got, want = getattr(t, name)(axis).numpy(), getattr(np, name)(x, axis)
        assert got.dtype == (np.int32 if name.startswith("arg") else reference_dtype(dtype)), (name, axis, got.dtype)
        np.testing.assert_array_equal(got, want, err_msg=f"{name}(axis={axis}) of shape {x.shape}")


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_nan_is_the_maximum_and_the_minimum(dtype: DType):
  x = np.array([[1.0, np.nan, 3.0, np.nan], [4.0, 5.0, 6.0, 0.5]], np.float32)
  t = tensor(x, dtype)
  for axis in (None, 1):
    for name in ("argmax", "argmin"): np.testing.assert_array_equal(getattr(t, name)(axis).numpy(), getattr(np, name)(x, axis), err_msg=name)
    for name in ("max", "min"): np.testing.assert_array_equal(getattr(t, name)(axis).numpy().astype(np.float32), getattr(np, name)(x, axis))
  assert tensor(np.array([1.0, np.nan, 3.0]), dtype).argmax().item() == 1


@pytest.mark.parametrize("shape, axis", [((0,), None), ((2, 0), 1), ((0, 3), 0)])
def test_argmax_of_an_empty_axis_raises(shape, axis):
  for name in ("argmax", "argmin"):
    with pytest.raises(IndexError, match="empty"): getattr(Tensor.zeros(*shape), name)(axis)


@pytest.mark.parametrize("dtype", [dtypes.bool, dtypes.uint8, dtypes.int32, dtypes.float16, dtypes.float32], ids=str)
@pytest.mark.parametrize("shape, axis", [((0,), None), ((2, 0, 3), 1), ((1, 0, 3, 0, 5), (1, 3)), ((0, 3), 0)])
def test_reductions_over_no_elements(dtype: DType, shape, axis):
  x, t = np.zeros(shape, reference_dtype(dtype)), Tensor.zeros(*shape, dtype=dtype)
  for name in ("sum", "prod", "any", "all"):
    got, want = getattr(t, name)(axis).numpy(), getattr(np, name)(x, axis)
    np.testing.assert_array_equal(got, want, err_msg=name)
  assert np.isnan(t.mean(axis).numpy()).all() and np.isnan(t.std(axis).numpy()).all()
  np.testing.assert_array_equal(t.max(axis).numpy(), np.full(want.shape, dtype.min, reference_dtype(dtype)))
  np.testing.assert_array_equal(t.min(axis).numpy(), np.full(want.shape, dtype.max, reference_dtype(dtype)))


def test_mean_var_std_dtypes_and_edges():
  assert Tensor.zeros(0).mean().numpy().dtype == np.float32 and np.isnan(Tensor.zeros(0).mean().item())
  assert Tensor([1, 2, 4]).mean().dtype is dtypes.float32 and Tensor([1, 2, 4]).mean().item() == pytest.approx(7 / 3)
  assert Tensor([1.0, 2.0], dtype=dtypes.float16).mean().dtype is dtypes.float16
  x = np.array([[1.0, 2.0, 4.0], [3.0, -1.0, 0.5]], np.float32)
  np.testing.assert_allclose(Tensor(x).var(1, correction=0).numpy(), x.var(1), rtol=1e-6)
  np.testing.assert_allclose(Tensor(x).std((0, 1)).numpy(), x.std(ddof=1), rtol=1e-6)
  assert np.isinf(Tensor([2.0, 3.0]).var(correction=2).item())
  np.testing.assert_array_equal(Tensor(x[:, :1]).var(1).numpy(), [np.nan, np.nan])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_sum_and_cumsum_follow_the_sum_dtype(dtype: DType):
  accumulate = {dtypes.bool: np.int32, dtypes.int8: np.int32, dtypes.int16: np.int32, dtypes.uint8: np.uint32, dtypes.uint16: np.uint32}
  x = small(dtype) * (100 if dtype in (dtypes.uint8, dtypes.int8) else 1)
  wide, t = x.astype(accumulate.get(dtype, reference_dtype(dtype))), tensor(x, dtype)
  for axis in (0, 1, -1):
    got = t.cumsum(axis).numpy()
    assert got.dtype == wide.dtype, (axis, got.dtype)
    np.testing.assert_array_equal(got, np.cumsum(wide, axis))
    np.testing.assert_array_equal(t.sum(axis).numpy(), wide.sum(axis))
  np.testing.assert_array_equal(tensor(x[0, 0], dtype).cumsum().numpy(), wide[0, 0])
  np.testing.assert_array_equal(tensor(x[:, :0], dtype).cumsum(1).numpy(), wide[:, :0])
  assert Tensor([True, False, True]).cumsum().tolist() == [1, 1, 2]
  assert Tensor([200, 100], dtype=dtypes.uint8).cumsum().tolist() == [200, 300]


@pytest.mark.parametrize("dtype", [dtypes.int8, dtypes.uint8, dtypes.int64, dtypes.float16, dtypes.float32], ids=str)
def test_cumprod_keeps_the_dtype(dtype: DType):
  x = small(dtype) + 1
  for axis in (0, 1):
    got = tensor(x, dtype).cumprod(axis).numpy()
    assert got.dtype == reference_dtype(dtype)
    np.testing.assert_array_equal(got, np.cumprod(x, axis, dtype=reference_dtype(dtype)))


def first_running_index(x: np.ndarray, running: np.ndarray) -> np.ndarray:
  return np.array([[np.flatnonzero(row[:j + 1] == value)[0] for j, value in enumerate(out)] for row, out in zip(x, running)])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cummax_and_cummin_with_extremes(dtype: DType):
  x, t = extremes(dtype), tensor(extremes(dtype), dtype)
  for name, accumulate in (("cummax", np.maximum.accumulate), ("cummin", np.minimum.accumulate)):
    values, indices = getattr(t, name)(1)
    np.testing.assert_array_equal(values.numpy(), accumulate(x, 1), err_msg=name)
    assert indices.dtype is dtypes.int32
    np.testing.assert_array_equal(indices.numpy(), first_running_index(x, accumulate(x, 1)), err_msg=name)
    np.testing.assert_array_equal(getattr(t, name)(0)[0].numpy(), accumulate(x, 0), err_msg=name)
    scalar, index = getattr(tensor(x[0, 1], dtype), name)()
    assert scalar.shape == index.shape == () and scalar.numpy() == x[0, 1] and index.item() == 0
    empty, index = getattr(tensor(x[:, :0], dtype), name)(1)
    assert empty.shape == index.shape == (3, 0)


def test_long_cumulative_axes_run_in_two_stages():
  x = np.random.default_rng(0).standard_normal((2, 1100)).astype(np.float32)
  np.testing.assert_allclose(Tensor(x).cumsum(1).numpy(), np.cumsum(x, 1), rtol=1e-4, atol=1e-4)
  values, indices = Tensor(x).cummax(1)
  np.testing.assert_array_equal(values.numpy(), np.maximum.accumulate(x, 1))
  np.testing.assert_array_equal(indices.numpy(), first_running_index(x, np.maximum.accumulate(x, 1)))
  np.testing.assert_allclose(Tensor(x).logcumsumexp(1).numpy(), np.logaddexp.accumulate(x, 1), rtol=1e-4)
  assert Tensor([0.0, 100.0, 100.0]).logcumsumexp().numpy() == pytest.approx([0.0, 100.0, 100.0 + np.log(2)])


def test_very_long_cumulative_axes_run_their_block_ends_in_stages_too():
  """300000 inputs make 1172 blocks: their ends run in stages themselves (no window of 1172 per end). Integer data keeps
  the float sums exact, so a misplaced block shows; cumprod of ones and -1s, cummax with the largest last."""
  x = np.random.default_rng(1).integers(-3, 4, 300_000).astype(np.float32)
  np.testing.assert_array_equal(Tensor(x).cumsum().numpy(), np.cumsum(x.astype(np.float64)).astype(np.float32))
  signs = np.where(np.arange(300_000) % 7 == 0, -1, 1).astype(np.int32)
  np.testing.assert_array_equal(Tensor(signs).cumprod(0).numpy(), np.cumprod(signs))
  x[-1] = 100.0
  np.testing.assert_array_equal(Tensor(x).cummax(0)[0].numpy(), np.maximum.accumulate(x))


@pytest.mark.parametrize("shape,axis", [((1 << 20,), 0), ((1 << 20, 1), 0), ((1 << 20, 1), None), ((3, 1 << 18, 1, 1), (1, 2))])
def test_long_sums_along_rows_and_columns_of_one_keep_their_precision(shape, axis):
  """A long sum of 0.1s stays close only through partial sums: one running float32 sum of 2**20 of them is off by 0.3%.
  An axis followed by axes of 1 is split like a row (lit: split-reduce.mlir)."""
  x = np.full(shape, 0.1, np.float32)
  got, want = Tensor(x).sum(axis).numpy(), x.astype(np.float64).sum(axis)
  assert got.shape == want.shape
  np.testing.assert_allclose(got, want, rtol=1e-4)


def test_reductions_of_0d_tensors_and_axis_errors():
  t = Tensor(2.5)
  for axis in (None, 0, -1, ()):
    assert t.sum(axis).shape == () and t.sum(axis).item() == 2.5 and t.max(axis).item() == 2.5
  assert t.logsumexp(0).item() == pytest.approx(2.5) and t.softmax(0).item() == 1.0 and t.log_softmax(-1).item() == 0.0
  for axis in (1, -2, (1,)):
    with pytest.raises(IndexError): t.sum(axis)
  with pytest.raises(RuntimeError, match="repeat an axis"): Tensor.ones(2, 3).sum(axis=(0, 0))
  with pytest.raises(RuntimeError, match="repeat an axis"): Tensor.ones(2, 3).max(axis=(1, -1))
  with pytest.raises(IndexError): Tensor.ones(2, 3).cumsum(2)


def test_sum_prod_and_dot_dtype_arguments():
  x = Tensor([[100, 100], [100, 27]], dtype=dtypes.int8)
  assert x.sum(dtype=dtypes.int64).dtype is dtypes.int64 and x.sum(dtype="int16").item() == 327
  assert x.prod(1, dtype=dtypes.int32).tolist() == [10000, 2700] and x.prod(1).dtype is dtypes.int8
  assert Tensor([1.0, 2.0], dtype=dtypes.float16).sum().dtype is dtypes.float16
  y = Tensor([[9, 11], [11, 9]], dtype=dtypes.int8)  # the products fit int8, their sums do not
  assert y.dot(y, dtype=dtypes.int32).tolist() == [[202, 198], [198, 202]]
  assert (y @ y).dtype is dtypes.int8 and (y @ y).tolist() == [[-54, -58], [-58, -54]]
  with pytest.raises(AttributeError): Tensor([1.0, 2.0]).sum(dtype="")
  with pytest.raises(AttributeError): Tensor([1.0, 2.0]).prod(dtype="")


def test_movement_errors_are_typed():
  t = Tensor.ones(2, 3)
  with pytest.raises(IndexError): t.unsqueeze(10)
  with pytest.raises(IndexError): t.unsqueeze(-4)
  assert t.unsqueeze(2).shape == (2, 3, 1) and t.unsqueeze(-1).shape == (2, 3, 1) and t.unsqueeze(-3).shape == (1, 2, 3)
  with pytest.raises(ValueError, match="cannot expand"): Tensor.ones(1).expand(-2, 4)
  with pytest.raises(ValueError, match="cannot expand"): t.expand(3)
  assert Tensor.ones(1, 3).expand(2, None).shape == (2, 3) and Tensor.ones(3).expand(2, -1).shape == (2, 3)
  with pytest.raises(RuntimeError): t.reshape(-1, -1)
  with pytest.raises(ValueError): t.reshape(4, 2)
  assert t.reshape(None, 3).shape == (2, 3) and Tensor(1.0).reshape(1, 1).shape == (1, 1)
  with pytest.raises(RuntimeError): t.permute(0, 0)
  with pytest.raises(RuntimeError): t.flip(1, -1)
  with pytest.raises(RuntimeError): t.roll((1, 2), 0)
  with pytest.raises(RuntimeError): t.diagonal(dim1=1, dim2=-1)
  with pytest.raises(IndexError): Tensor(1.0).squeeze(1)
  assert Tensor(1.0).squeeze(0).shape == () and Tensor.ones(2, 1).squeeze(0).shape == (2, 1)
  with pytest.raises(RuntimeError): Tensor(1.0) @ t
  with pytest.raises(RuntimeError): Tensor.ones(4) @ Tensor.ones(1, 2)


@pytest.mark.parametrize("dtype", [dtypes.bool, dtypes.uint8, dtypes.float16, dtypes.float32], ids=str)
def test_cat_and_stack_keep_every_value(dtype: DType):
  x = extremes(dtype) if dtype is not dtypes.float32 else np.array([[-0.0, np.nan, -np.inf, 1.0]] * 3, np.float32)
  a, b = tensor(x, dtype), tensor(x[:, :2], dtype)
  got = a.cat(b, dim=1).numpy()
  np.testing.assert_array_equal(got, np.concatenate([x, x[:, :2]], 1))
  assert got.dtype == reference_dtype(dtype) and (not dtype.is_float or np.array_equal(np.signbit(got), np.signbit(np.concatenate([x, x[:, :2]], 1))))
  np.testing.assert_array_equal(Tensor.stack(a, a, dim=-1).numpy(), np.stack([x, x], -1))
  np.testing.assert_array_equal(Tensor.stack((a, a)).numpy(), np.stack([x, x]))
  assert tensor(x, dtype).cumprod(1).dtype is dtype


def test_roll_diagonal_meshgrid_against_numpy():
  x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
  np.testing.assert_array_equal(Tensor(x).roll(5).numpy(), np.roll(x, 5))
  np.testing.assert_array_equal(Tensor(x).roll((1, -2), (0, 2)).numpy(), np.roll(x, (1, -2), (0, 2)))
  assert Tensor.zeros(2, 0, 3).roll(1, 1).shape == (2, 0, 3)
  for offset in (-3, -1, 0, 2, 5):
    np.testing.assert_array_equal(Tensor(x).diagonal(offset, 1, 2).numpy(), np.diagonal(x, offset, 1, 2), err_msg=str(offset))
  np.testing.assert_array_equal(Tensor(x).diagonal(1, -1, 0).numpy(), np.diagonal(x, 1, -1, 0))
  a, b = np.array([1.0, 2.0, 3.0], np.float32), np.array([4.0, 5.0], np.float32)
  for indexing in ("ij", "xy"):
    for got, want in zip(Tensor(a).meshgrid(Tensor(b), Tensor(7.0), indexing=indexing), np.meshgrid(a, b, 7.0, indexing=indexing)):
      np.testing.assert_array_equal(got.numpy(), want)
  assert len(Tensor(a).meshgrid()) == 1
  with pytest.raises(RuntimeError): Tensor(a).meshgrid(indexing="yx")


def test_einsum_against_numpy():
  rng = np.random.default_rng(1)
  a, b, m, batch = (rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (4, 5), (4, 4), (2, 3, 5, 5)))
  for formula, operands in (("ij,jk", (a, b)), ("ij,jk->ki", (a, b)), ("ii->i", (m,)), ("ii", (m,)), ("ij->", (a,)), ("ji", (a,)),
                            ("...ii->...i", (batch,)), ("...ij,...jk->...ik", (batch, batch)), ("ij,ij,ij->i", (a, a, a))):
    got = Tensor.einsum(formula, *(Tensor(o) for o in operands)).numpy()
    np.testing.assert_allclose(got, np.einsum(formula, *operands), rtol=1e-5, atol=1e-5, err_msg=formula)
  np.testing.assert_allclose(Tensor.einsum("b...,b...->b", Tensor(batch), Tensor(batch)).numpy(), np.einsum("bijk,bijk->b", batch, batch), rtol=1e-5)
  assert Tensor.einsum("ij,jk", [Tensor(a), Tensor(b)]).shape == (3, 5)
  with pytest.raises(RuntimeError): Tensor.einsum("ij,jk->q", Tensor(a), Tensor(b))
  with pytest.raises(RuntimeError): Tensor.einsum("ij,jk->ik", Tensor(a), Tensor(a))
  with pytest.raises(RuntimeError): Tensor.einsum("ii", Tensor(a))
  with pytest.raises(RuntimeError): Tensor.einsum("...i...", Tensor(a))
  with pytest.raises(ValueError): Tensor.einsum("ij,jk", Tensor(a))


def test_advanced_indexing_against_numpy():
  x = np.arange(5 * 5 * 6 * 3, dtype=np.float32).reshape(5, 5, 6, 3)
  t, i, j = Tensor(x), np.array([[0, 4], [-1, 2]]), np.array([1, -2])
  for index in ((i,), (slice(None), i), (slice(None), i, j), (1, i, slice(None), j), (i, None, j), (None, slice(None), i, 0, j),
                ([1, 0],), (0, [4, 0, -5]), ((1, 0), (2, 3)), ([[1]], slice(None), [2, 3]), (Ellipsis, j)):
    ours = tuple(Tensor(k) if isinstance(k, np.ndarray) else k for k in index)
    np.testing.assert_array_equal(t[ours].numpy(), x[index], err_msg=str(index))
  np.testing.assert_array_equal(t[[1, 0]].numpy(), x[[1, 0]])
  np.testing.assert_array_equal(t[1, ..., [0, 2]].numpy(), x[1][..., [0, 2]])  # ints select first, as in torch (NumPy would move dims)
  np.testing.assert_array_equal(Tensor([10, 20, 30])[Tensor([5, -4, 1, 2])].numpy(), [0, 0, 20, 30])  # outside the dim: 0
  np.testing.assert_array_equal(Tensor([[1, 2], [3, 4]])[Tensor([1, 2]), Tensor([0, 1])].numpy(), [3, 0])
  with pytest.raises(IndexError, match="out of bounds"): t[0, 5]
  with pytest.raises(IndexError, match="single ellipsis"): t[..., ...]
  with pytest.raises(IndexError): t[Tensor([0.5])]
  with pytest.raises(IndexError): t[[True, False]]
  with pytest.raises(IndexError): t[Tensor([[0, 1]]), Tensor([0, 1, 2])]


@pytest.mark.parametrize("dtype", [dtypes.bool, dtypes.uint8, dtypes.int64, dtypes.float16, dtypes.float32], ids=str)
def test_gather_and_scatter(dtype: DType):
  x = small(dtype)
  index = np.array([[2, 0, 1, 2], [0, 0, 2, 1]])
  np.testing.assert_array_equal(tensor(x, dtype).gather(0, Tensor(index)).numpy(), np.take_along_axis(x, index, 0))
  src = small(dtype)[::-1].copy()
  want = x.copy()
  for row in range(2):
    for col in range(4): want[index[row, col], col] = src[row, col]  # in order: the last source wins
  np.testing.assert_array_equal(tensor(x, dtype).scatter(0, Tensor(index), tensor(src, dtype)).numpy(), want)
  assert Tensor([1.0, 2.0, 3.0, 4.0]).scatter(0, Tensor([0, 0]), Tensor([1.0, 0.0])).tolist() == [0.0, 2.0, 3.0, 4.0]


def test_scatter_reduce_against_numpy():
  rng = np.random.default_rng(2)
  x, src, index = rng.standard_normal((3, 5)).astype(np.float32), rng.standard_normal((2, 5)).astype(np.float32), rng.integers(0, 3, (2, 5))
  columns = np.broadcast_to(np.arange(5), index.shape)
  for reduce, ufunc in (("sum", np.add), ("prod", np.multiply), ("amax", np.maximum), ("amin", np.minimum)):
    want = x.copy()
    ufunc.at(want, (index, columns), src)
    np.testing.assert_allclose(Tensor(x).scatter_reduce(0, Tensor(index), Tensor(src), reduce).numpy(), want, rtol=1e-6, err_msg=reduce)
    hit = np.zeros_like(x, bool)
    hit[index, columns] = True
    alone = np.where(hit, {"sum": 0, "prod": 1, "amax": -np.inf, "amin": np.inf}[reduce], x).astype(np.float32)
    ufunc.at(alone, (index, columns), src)
    np.testing.assert_allclose(Tensor(x).scatter_reduce(0, Tensor(index), Tensor(src), reduce, include_self=False).numpy(), alone, rtol=1e-6)
  total, count = x.copy(), np.ones_like(x)
  np.add.at(total, (index, columns), src)
  np.add.at(count, (index, columns), 1)
  np.testing.assert_allclose(Tensor(x).scatter_reduce(0, Tensor(index), Tensor(src), "mean").numpy(), total / count, rtol=1e-6)
  np.testing.assert_allclose(Tensor(x).scatter(0, Tensor(index), 2.0, reduce="multiply").numpy()[hit], (x * 2.0 ** np.maximum(count - 1, 0))[hit])
  with pytest.raises(RuntimeError): Tensor(x).scatter_reduce(0, Tensor(index), Tensor(src), "median")
  with pytest.raises(RuntimeError): Tensor(x).half().scatter_reduce(0, Tensor(index), Tensor(src), "sum")
  with pytest.raises(TypeError): Tensor(x).scatter(0, Tensor(index), Tensor(src), reduce="add")
  with pytest.raises(RuntimeError): Tensor(x).gather(0, Tensor(index[:, :, None]))


def test_masked_select_and_nonzero_against_numpy():
  x = np.array([[0.0, 1.5, -2.0], [0.0, 0.0, 3.0]], np.float32)
  mask = x > 0
  np.testing.assert_array_equal(Tensor(x).masked_select(Tensor(mask)).numpy(), x[mask])
  np.testing.assert_array_equal(Tensor(x).masked_select(Tensor(True)).numpy(), x.reshape(-1))
  np.testing.assert_array_equal(Tensor(x).masked_select(Tensor(mask), size=4, fill_value=-1).numpy(), [1.5, 3.0, -1.0, -1.0])
  np.testing.assert_array_equal(Tensor(x).masked_select(Tensor(mask), size=1).numpy(), [1.5])
  np.testing.assert_array_equal(Tensor(x).masked_select(Tensor(mask[1])).numpy(), x[np.broadcast_to(mask[1], x.shape)])
  np.testing.assert_array_equal(Tensor(x).nonzero().numpy(), np.argwhere(x))
  np.testing.assert_array_equal(Tensor(x.reshape(-1)).nonzero().numpy(), np.argwhere(x.reshape(-1)))
  np.testing.assert_array_equal(Tensor(x).nonzero(size=5, fill_value=-1).numpy(), np.concatenate([np.argwhere(x), -np.ones((2, 2))]))
  assert Tensor(x).nonzero().dtype is dtypes.int32 and Tensor([1, 0]).nonzero(size=3, fill_value=-1.5).dtype is dtypes.int32
  assert Tensor(2.5).nonzero().shape == (1, 0) and Tensor(0).nonzero().shape == (0, 0) and Tensor(5).nonzero(size=4).shape == (4, 0)
  assert Tensor.zeros(0, 3).nonzero().shape == (0, 2)
  with pytest.raises(RuntimeError): Tensor(x).masked_select(Tensor(x))
