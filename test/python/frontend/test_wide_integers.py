"""Integers at the edges of their types: Python ints into tensors exactly (wrapped modulo 2^bits into the dtype, as
tinygrad does), and indexing whose flat positions or index values need more than 32 bits or more than the index dtype."""
import numpy as np
import pytest

from pytc import Tensor, dtypes


def test_python_ints_convert_exactly():
  assert Tensor([2**64 - 1, 0, 3], dtype=dtypes.uint64).tolist() == [2**64 - 1, 0, 3]
  assert Tensor([[2**64 - 1, 3], [1, 2**63]], dtype="uint64").tolist() == [[2**64 - 1, 3], [1, 2**63]]
  assert Tensor([2**63 - 1, -2**63, 2**53 + 1], dtype=dtypes.int64).tolist() == [2**63 - 1, -2**63, 2**53 + 1]
  assert Tensor([2**64 - 1, 2**62 + 1], dtype=dtypes.uint64).max().item() == 2**64 - 1


def test_ints_beyond_the_dtype_wrap_as_in_tinygrad():
  assert Tensor([300, -1], dtype=dtypes.uint8).tolist() == [44, 255]
  assert Tensor([2**63, 1], dtype=dtypes.int64).tolist() == [-2**63, 1]
  t = Tensor([2**64 - 1, 0, 3])  # a list of ints is default_int, whatever its values
  assert t.dtype == dtypes.int32 and t.tolist() == [-1, 0, 3]
  assert Tensor([2**70]).tolist() == [0] and Tensor([True, 2**64 - 1]).tolist() == [1, -1]
  assert Tensor([2.7, -2.7, 1e10], dtype=dtypes.int32).tolist() == [2, -2, 1410065408]  # toward 0, then wrapped
  assert Tensor(300, dtype=dtypes.uint8).tolist() == 44 and Tensor.full((2,), -1, dtype=dtypes.uint16).tolist() == [65535, 65535]
  assert Tensor([2**70], dtype=dtypes.float32).tolist() == [float(2**70)] and Tensor([2**70, 1.5]).tolist() == [float(2**70), 1.5]


def test_lists_of_arrays_and_numpy_scalars():
  data = [np.array([1.0, 2.5]), np.array([3, 4])]
  np.testing.assert_array_equal(Tensor(data, dtype=dtypes.int32).numpy(), [[1, 2], [3, 4]])
  assert Tensor([np.float32(1.5), 2]).tolist() == [1.5, 2.0]


@pytest.mark.parametrize("dtype", [dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint32, dtypes.int64, dtypes.uint64])
def test_small_and_wide_index_dtypes_reach_every_element(dtype):
  values = Tensor(np.arange(300, dtype=np.int32))
  index = [0, 127, 255, -1, -128] if not dtype.is_unsigned else [0, 127, 255, 299]
  index = [i for i in index if dtype.min <= i <= dtype.max]
  assert values[Tensor(index, dtype=dtype)].tolist() == [i % 300 for i in index]
  assert Tensor(np.arange(70000, dtype=np.int32))[Tensor([-1, 9999], dtype=dtypes.int16)].tolist() == [69999, 9999]


def test_index_past_two_to_the_31():
  n = 2**31 + 3
  big = Tensor.arange(n)
  assert big.dtype == dtypes.int64
  assert big[Tensor([0, 2**31 + 2, -1, 2**31 - 1], dtype=dtypes.int64)].tolist() == [0, 2**31 + 2, 2**31 + 2, 2**31 - 1]
  assert big[[2**31 + 1, 5]].tolist() == [2**31 + 1, 5]  # a list index keeps its values exact
  assert Tensor([1]).expand(n)[Tensor([0, 2**31 + 2])].tolist() == [1, 1]  # 2**31 + 2 wraps to a negative int32, which counts from the end
