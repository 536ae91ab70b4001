"""assign (and item assignment) through views: slices, strided, permuted, flipped and reshaped views write into the
buffer under them, in place, inside and outside TinyJit, against NumPy doing the same."""
import threading

import numpy as np
import pytest

from pytc import Tensor, TinyJit, dtypes


def realized(array: np.ndarray) -> Tensor: return Tensor(array).contiguous().realize()


VIEWS = [  # (name, view of a Tensor, the same view of a NumPy array)
  ("slice", lambda t: t[:, :, 2:4], lambda a: a[:, :, 2:4]),
  ("strided", lambda t: t[:, ::2, 1:], lambda a: a[:, ::2, 1:]),
  ("negative step", lambda t: t[::-1, :, ::3], lambda a: a[::-1, :, ::3]),
  ("int index", lambda t: t[1, 2], lambda a: a[1, 2]),
  ("permuted", lambda t: t.permute(2, 0, 1)[1:3], lambda a: a.transpose(2, 0, 1)[1:3]),
  ("transposed row", lambda t: t.reshape(6, 5).T[3], lambda a: a.reshape(6, 5).T[3]),
  ("flipped", lambda t: t.flip(1)[0, :2], lambda a: a[:, ::-1][0, :2]),
  ("reshaped", lambda t: t.reshape(30)[7:19], lambda a: a.reshape(30)[7:19]),
  ("0-d", lambda t: t[1, 1, 4], lambda a: a[1, 1, 4:5].reshape(())),
  ("empty", lambda t: t[:, 3:3], lambda a: a[:, 3:3]),
  ("unsqueezed", lambda t: t[None, 0, :, 1], lambda a: a[None, 0, :, 1]),
]


@pytest.mark.parametrize("name,view,np_view", VIEWS, ids=[v[0] for v in VIEWS])
@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.int32, dtypes.uint8, dtypes.bool, dtypes.float16])
def test_assign_through_a_view_writes_the_base(name, view, np_view, dtype):
  rng = np.random.default_rng(0)
  base = (rng.standard_normal((2, 3, 5)) * 10).astype(dtype.numpy)
  t = realized(base)
  buffer = t.lazydata.arg
  target = np_view(base.copy())
  value = (rng.standard_normal(target.shape) * 10).astype(dtype.numpy)
  expected = base.copy()
  np_view(expected)[...] = value
  v = view(t)
  v.assign(Tensor(value, dtype=dtype))
  np.testing.assert_array_equal(t.numpy(), expected)
  np.testing.assert_array_equal(v.numpy(), value)
  assert t.lazydata.arg is buffer  # in place: the same buffer


def test_setitem_matches_numpy_and_broadcasts():
  a = np.arange(24, dtype=np.float32).reshape(4, 6)
  t = realized(a)
  t[1:3, ::2] = 7.5
  a[1:3, ::2] = 7.5
  t[-1] = Tensor([1, 2, 3, 4, 5, 6])
  a[-1] = [1, 2, 3, 4, 5, 6]
  t[:, 5] = Tensor([[-1.0]]).reshape(1)
  a[:, 5] = -1.0
  np.testing.assert_array_equal(t.numpy(), a)
  with pytest.raises(IndexError, match="assignment needs"): t[Tensor([0, 1])] = 1.0


def test_the_kv_cache_write():
  cache = Tensor.zeros(2, 1, 8, 2, 3).contiguous().realize()
  xk, xv = Tensor.arange(12).reshape(1, 2, 2, 3).float(), Tensor.arange(12).reshape(1, 2, 2, 3).float() + 100
  cache[:, :, 2:4, :, :].assign(Tensor.stack(xk, xv)).realize()
  expected = np.zeros((2, 1, 8, 2, 3), np.float32)
  expected[0, :, 2:4], expected[1, :, 2:4] = xk.numpy(), xv.numpy()
  np.testing.assert_array_equal(cache.numpy(), expected)


def test_a_value_reading_the_base_elsewhere_sees_the_old_data():
  a = np.arange(8, dtype=np.int32)
  t = realized(a)
  t[1:].assign(t[:-1])
  np.testing.assert_array_equal(t.numpy(), np.concatenate([[0], a[:-1]]))
  t[::2].assign(t[1::2] * 10)
  b = np.concatenate([[0], a[:-1]])
  b[::2] = b[1::2] * 10
  np.testing.assert_array_equal(t.numpy(), b)


def test_an_unrealized_base_is_realized_for_every_tensor_holding_it():
  base = Tensor.zeros(4).contiguous() + 1
  alias, view_before = base, base[2:]
  base[1:3] = 5
  np.testing.assert_array_equal(base.numpy(), [1, 5, 5, 1])
  np.testing.assert_array_equal(alias.numpy(), [1, 5, 5, 1])
  np.testing.assert_array_equal(view_before.numpy(), [5, 1])


def test_a_pending_assign_lands_before_the_view_write():
  t = realized(np.zeros(5, np.float32))
  t.assign(t + 1)
  t[2:4].assign(Tensor([7.0, 8.0]))
  np.testing.assert_array_equal(t.numpy(), [1, 1, 7, 8, 1])


def test_lazy_readers_made_before_see_the_write_when_realized_after():
  t = realized(np.arange(4, dtype=np.float32))
  doubled = t * 2
  t[0:2].assign(Tensor([10.0, 20.0]))
  np.testing.assert_array_equal(doubled.numpy(), [20, 40, 4, 6])


def test_assign_into_an_expanded_view_is_refused():
  t = realized(np.zeros((1, 3), np.float32))
  with pytest.raises(RuntimeError, match="expanded view"): t.expand(4, 3).assign(Tensor.ones(4, 3))


def test_shape_and_dtype_mismatches_are_refused():
  t = realized(np.zeros((4, 4), np.float32))
  with pytest.raises(ValueError): t[1:3].assign(Tensor.ones(3, 4))
  with pytest.raises(RuntimeError, match="assign of"): t[1:3].assign(Tensor.ones(2, 4, dtype=dtypes.int32))


def test_tinyjit_replays_write_the_view_again():
  cache = realized(np.zeros((4, 3), np.float32))
  @TinyJit
  def step(x: Tensor) -> Tensor:
    cache[1:3].assign(cache[1:3] + x).realize()
    return (cache * 1).realize()
  expected = np.zeros((4, 3), np.float32)
  for i in range(5):
    out = step(Tensor.full((2, 3), float(i + 1)))
    expected[1:3] += i + 1
    np.testing.assert_array_equal(cache.numpy(), expected)
    np.testing.assert_array_equal(out.numpy(), expected)


def test_view_writes_from_threads_each_land():
  t = realized(np.zeros((8, 4), np.float32))
  lock, errors = threading.Lock(), []
  def write(row: int) -> None:
    try:
      value = Tensor.full((4,), float(row))
      with lock: t[row].assign(value)  # the read-modify-write of one buffer is the caller's to order
    except Exception as error: errors.append(error)
  threads = [threading.Thread(target=write, args=(r,)) for r in range(8)]
  for th in threads: th.start()
  for th in threads: th.join()
  assert not errors
  np.testing.assert_array_equal(t.numpy(), np.repeat(np.arange(8, dtype=np.float32)[:, None], 4, 1))
