"""Kernels whose neighbouring ranges pytc-merge-ranges merges (every access reads them as one contiguous dimension) compute
what NumPy computes, whatever the dtype, with empty and size-1 dimensions and special values, and vectorize along the
merged range; pairs it must keep apart (broadcasts, windows, transposes, padding) stay correct."""
import threading

import numpy as np
import pytest

from pytc import Device, Tensor, dtypes
from pytc.compiler import compile_kernels
from pytc.realize import schedule

rng = np.random.default_rng(11)


def kernel_ir(t: Tensor) -> str: return compile_kernels(schedule([t.lazydata])[0], Device["CPU"]).kernel_ir


def values(shape: tuple[int, ...], dtype: str) -> np.ndarray:
  if dtype == "bool": return rng.random(shape) < 0.5
  if dtype in ("uint8", "int32"): return rng.integers(0, 100, shape).astype(dtype)
  return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("shape", [(1024, 7, 7), (3, 1, 5), (2, 3, 4, 5), (0, 7, 7), (7, 0), (1,), ()])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "bool"])
def test_elementwise_over_small_trailing_dimensions(shape: tuple[int, ...], dtype: str) -> None:
  x, y = values(shape, dtype), values(shape, dtype)
  got = (Tensor(x) ^ Tensor(y)) if dtype == "bool" else (Tensor(x) * 3 + Tensor(y))
  want = (x ^ y) if dtype == "bool" else (x * np.array(3, dtype) + y)
  if dtype.startswith("float"): np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
  else: np.testing.assert_array_equal(got.numpy(), want)


def test_merged_elementwise_kernel_is_vector_code() -> None:
  x = values((1024, 7, 7), "float32")
  out = Tensor(x).exp()
  ir = kernel_ir(out)
  assert "memref<50176xf32>" in ir and f"vector<{Device['CPU'].target.vector_lanes}xf32>" in ir
  np.testing.assert_allclose(out.numpy(), np.exp(x), rtol=1e-6)


@pytest.mark.parametrize("axes", [(1, 2), (2, 3), (0,), (1, 2, 3)])
def test_reductions_over_merged_pixels_keep_nan_inf_and_signed_zero(axes: tuple[int, ...]) -> None:
  x = values((2, 8, 7, 7), "float32")
  x[0, 1, 3, 4], x[1, 2] = np.nan, np.inf
  x[0, 3] = -0.0
  for name in ("sum", "max", "mean"):
    got, want = getattr(Tensor(x), name)(axis=axes).numpy(), getattr(np, name)(x, axis=axes)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
  assert np.signbit(Tensor(x).max(axis=axes).numpy()).tolist() == np.signbit(np.max(x, axis=axes)).tolist()


@pytest.mark.parametrize("n,c,hw,o", [(1, 256, 14, 64), (2, 32, 7, 48), (1, 16, 1, 8), (1, 3, 5, 0)])
def test_pointwise_convolution_over_merged_pixels(n: int, c: int, hw: int, o: int) -> None:
  x, w = values((n, c, hw, hw), "float32"), values((o, c, 1, 1), "float32")
  got = Tensor(x).conv2d(Tensor(w)).numpy()
  np.testing.assert_allclose(got, np.einsum("nchw,oc->nohw", x, w[:, :, 0, 0]), rtol=1e-4, atol=1e-4)


def test_pairs_kept_apart_stay_correct() -> None:
  x, bias = values((4, 6, 6), "float32"), values((6,), "float32")
  np.testing.assert_allclose((Tensor(x) + Tensor(bias)).numpy(), x + bias, rtol=1e-6)  # a read along the last range alone
  np.testing.assert_allclose((Tensor(x)[:, 1:5, :3] * 2).numpy(), x[:, 1:5, :3] * 2, rtol=1e-6)  # a window of each row
  np.testing.assert_allclose((Tensor(x) + Tensor(x).permute(0, 2, 1)).numpy(), x + x.transpose(0, 2, 1), rtol=1e-6)
  np.testing.assert_allclose(Tensor(x).pad(((0, 0), (1, 1), (1, 1))).numpy(), np.pad(x, ((0, 0), (1, 1), (1, 1))))


def test_merged_kernels_realized_together_and_from_threads() -> None:
  x = values((64, 7, 7), "float32")
  a, b = Tensor(x).exp(), Tensor(x).sum(axis=(1, 2))
  Tensor.realize(a, b)
  np.testing.assert_allclose(a.numpy(), np.exp(x), rtol=1e-6)
  np.testing.assert_allclose(b.numpy(), x.sum(axis=(1, 2)), rtol=1e-5, atol=1e-5)
  results: list[bool] = []
  def work(k: int) -> None:
    y = x * k
    results.append(bool(np.allclose((Tensor(y, dtype=dtypes.float32).abs().sqrt() + 1).numpy(), np.sqrt(np.abs(y)) + 1)))
  threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
  for thread in threads: thread.start()
  for thread in threads: thread.join(timeout=60)
  assert results == [True] * 4


@pytest.mark.parametrize("shape,order", [((2048, 64), (1, 0)), ((17, 33), (1, 0)), ((16, 16), (1, 0)), ((15, 40), (1, 0)),
                                         ((4, 40, 24), (2, 0, 1)), ((3, 20, 37), (0, 2, 1)), ((0, 16), (1, 0)), ((1, 32), (1, 0))])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "uint8", "int32", "bool"])
def test_transposes_made_contiguous(shape: tuple[int, ...], order: tuple[int, ...], dtype: str) -> None:
  x = values(shape, dtype)
  np.testing.assert_array_equal(Tensor(x).permute(*order).contiguous().numpy(), x.transpose(order))


def test_transposed_reads_in_vector_tiles() -> None:
  x, y = values((40, 72), "float32"), values((72, 40), "float32")
  out = Tensor(x).T * 2 + Tensor(y)  # one read across rows, one along them
  ir = kernel_ir(out)
  assert "vector.shuffle" in ir  # the tiles turned by shuffles
  np.testing.assert_allclose(out.numpy(), x.T * 2 + y, rtol=1e-6)
  x[3, 5], x[7, 9], x[1, 1] = np.nan, -np.inf, -0.0
  got = (Tensor(x).T.exp() - 1).numpy()
  np.testing.assert_allclose(got, np.exp(x.T) - 1, rtol=1e-6, atol=1e-6)
  assert np.signbit((Tensor(x).T * 1).numpy()[1, 1])  # -0.0 moved, not rounded to +0.0
  padded = Tensor(x).T.pad(((1, 2), (3, 0)), value=7.0)  # the read across rows gated at the borders
  np.testing.assert_array_equal(padded.numpy(), np.pad(x.T, ((1, 2), (3, 0)), constant_values=7.0))


def test_transposes_realized_together_in_place_and_from_threads() -> None:
  x = values((48, 80), "float32")
  a, b = Tensor(x).T.contiguous(), (Tensor(x).T + 1).contiguous()
  Tensor.realize(a, b)
  np.testing.assert_array_equal(a.numpy(), x.T)
  np.testing.assert_array_equal(b.numpy(), x.T + 1)
  square = values((64, 64), "float32")
  t = Tensor(square).contiguous().realize()
  t.assign(t.T + 0).realize()  # written over the buffer it reads across
  np.testing.assert_array_equal(t.numpy(), square.T)
  results: list[bool] = []
  def work(k: int) -> None: results.append(bool(np.array_equal((Tensor(x * k).T.contiguous()).numpy(), (x * k).T)))
  threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
  for thread in threads: thread.start()
  for thread in threads: thread.join(timeout=60)
  assert results == [True] * 4


@pytest.mark.parametrize("groups,c,o,hw", [(4, 128, 128, 28), (2, 6, 4, 9), (3, 9, 12, 7), (8, 64, 16, 5)])
def test_grouped_convolutions_read_their_group_through_factored_indices(groups: int, c: int, o: int, hw: int) -> None:
  """A grouped convolution reads input channel (o // (o / groups)) * (c / groups) + c', which the flattened index of its
  reshape gives as a division of the whole flattened index; emitted through its factored form (o's part alone)."""
  x, w = values((2, c, hw, hw), "float32"), values((o, c // groups, 3, 3), "float32")
  got = Tensor(x).conv2d(Tensor(w), padding=1, groups=groups).numpy()
  xp, cg, og = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))), c // groups, o // groups
  want = np.zeros((2, o, hw, hw), np.float32)
  for g in range(groups):
    for ky in range(3):
      for kx in range(3):
        window = xp[:, g * cg:(g + 1) * cg, ky:ky + hw, kx:kx + hw]
        want[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", window, w[g * og:(g + 1) * og, :, ky, kx])
  np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n,c,groups,hw", [(2, 12, 3, 5), (1, 64, 4, 7), (3, 6, 2, 1)])
def test_channel_shuffles_and_group_sums_split_their_ranges(n: int, c: int, groups: int, hw: int) -> None:
  """A channel shuffle (reshape into groups, swap, flatten) and a per-group sum index their channels as r // d and
  r mod d: the ranges split (pytc-split-ranges) and the results stay NumPy's, for several dtypes."""
  for dtype in ("float32", "int32", "uint8"):
    x = values((n, c, hw, hw), dtype)
    shuffled = Tensor(x).reshape(n, groups, c // groups, hw, hw).transpose(1, 2).reshape(n, c, hw, hw)
    np.testing.assert_array_equal(shuffled.numpy(), x.reshape(n, groups, c // groups, hw, hw).transpose(0, 2, 1, 3, 4).reshape(n, c, hw, hw))
    per_group = (Tensor(x).reshape(n, groups, c // groups, hw, hw).sum(2) + 1).numpy()
    want = x.reshape(n, groups, c // groups, hw, hw).sum(2, dtype=per_group.dtype) + 1
    np.testing.assert_array_equal(per_group, want)
