"""Register-blocked vector kernels (pytc-vectorize + pytc-lower-kernels) compute what NumPy computes, on sizes that
divide the blocks and sizes that leave partial blocks, and the kernels really are vector code."""
import re

import numpy as np
import pytest

from pytc import Device, Tensor
from pytc.compiler import compile_kernels
from pytc.passes.cpu.vectorize import ALONG_LEAST_TILES, even_vectors
from pytc.realize import schedule

rng = np.random.default_rng(7)


def kernel_ir(t: Tensor) -> str:
  return compile_kernels(schedule([t.lazydata])[0], Device["CPU"]).kernel_ir


def lanes_for(n: int) -> int:
  """The lanes pytc-vectorize uses along an output range of n: the host's, or 8 when n is narrower."""
  return lanes if n >= (lanes := Device["CPU"].target.vector_lanes) else 8


def along_channels(o: int, out_width: int) -> bool:
  """Whether a convolution's output channels are the lanes: its outputs narrower than a vector, or enough channels to fill
  ALONG_LEAST_TILES register tiles (fewer: the innermost range takes the vectors, rows of output channels)."""
  target = Device["CPU"].target
  return out_width < min(target.vector_lanes, 8) or o >= ALONG_LEAST_TILES * target.vector_lanes * even_vectors(target.tile_vectors)


def close(got: np.ndarray, want: np.ndarray) -> None:
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * (np.abs(want).max() + 1))


@pytest.mark.parametrize("m,k,n", [(5, 7, 10), (13, 9, 17), (1, 8, 8), (7, 3, 24), (64, 33, 9), (6, 100, 40), (37, 64, 72)])
def test_matmul_with_epilogue(m: int, k: int, n: int) -> None:
  a, b, bias = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n), (n,)))
  out = (Tensor(a) @ Tensor(b) + Tensor(bias)).relu()
  if m > 1: assert "math.fma" in kernel_ir(out) and f"vector<{lanes_for(n)}xf32>" in kernel_ir(out)
  close(out.numpy(), np.maximum(a @ b + bias, 0))


def test_one_row_times_a_matrix_streams_its_rows_in_order() -> None:
  """With one row of x there is no read to reuse: the reduce-outer loops walk w's rows in order (no vector tile)."""
  x, w = rng.standard_normal((1, 300)).astype(np.float32), rng.standard_normal((300, 520)).astype(np.float32)
  out = Tensor(x) @ Tensor(w)
  assert "pytc.vector" not in kernel_ir(out)
  close(out.numpy(), x @ w)


def test_narrow_output_stays_scalar() -> None:
  """Both output ranges narrower than 8 lanes (the fewest any host vectorizes with, along either range)."""
  a, b = rng.standard_normal((7, 5)).astype(np.float32), rng.standard_normal((5, 6)).astype(np.float32)
  out = Tensor(a) @ Tensor(b)
  assert "vector<" not in kernel_ir(out)
  close(out.numpy(), a @ b)


def test_integer_and_batched_matmul() -> None:
  a, b = rng.integers(-9, 9, (9, 11)).astype(np.int32), rng.integers(-9, 9, (11, 19)).astype(np.int32)
  out = Tensor(a) @ Tensor(b)
  assert f"vector<{lanes_for(19)}xi32>" in kernel_ir(out)
  np.testing.assert_array_equal(out.numpy(), a @ b)
  x, y = rng.standard_normal((3, 10, 6)).astype(np.float32), rng.standard_normal((3, 6, 12)).astype(np.float32)
  close((Tensor(x) @ Tensor(y)).numpy(), x @ y)


@pytest.mark.parametrize("padding,stride", [(1, 1), (2, 2), (0, 1)])
def test_conv2d_reads_padding_through_masks(padding: int, stride: int) -> None:
  x, w = rng.standard_normal((2, 3, 9, 11)).astype(np.float32), rng.standard_normal((5, 3, 3, 3)).astype(np.float32)
  out = Tensor(x).conv2d(Tensor(w), padding=padding, stride=stride)
  xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
  oh, ow = (xp.shape[2] - 3) // stride + 1, (xp.shape[3] - 3) // stride + 1
  windows = np.stack([xp[:, :, ky:ky + stride * oh:stride, kx:kx + stride * ow:stride] for ky in range(3) for kx in range(3)], 2)
  want = np.einsum("ncwyx,ocw->noyx", windows, w.reshape(5, 3, 9))
  if stride == 1: assert "vector<8xf32>" in kernel_ir(out)  # 11 outputs per row
  close(out.numpy(), want)


def conv_reference(x: np.ndarray, w: np.ndarray, stride: int, padding: int) -> np.ndarray:
  k = w.shape[-1]
  xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
  oh, ow = (xp.shape[2] - k) // stride + 1, (xp.shape[3] - k) // stride + 1
  windows = np.stack([xp[:, :, ky:ky + stride * oh:stride, kx:kx + stride * ow:stride] for ky in range(k) for kx in range(k)], 2)
  return np.einsum("ncwyx,ocw->noyx", windows, w.reshape(w.shape[0], w.shape[1], k * k))


@pytest.mark.parametrize("n,c,o,hw,k,stride", [(1, 8, 40, 7, 3, 1), (2, 5, 24, 7, 3, 1), (1, 4, 16, 5, 1, 1), (1, 3, 32, 20, 7, 2),
                                               (3, 6, 48, 30, 3, 1), (1, 16, 33, 9, 3, 2)])
def test_conv2d_vectorized_along_output_channels(n: int, c: int, o: int, hw: int, k: int, stride: int) -> None:
  """Narrow outputs, or input windows that vary with the output rows and enough output channels: the output channels are
  the lanes (their weights packed once per block of channels), whole or partial blocks, with a bias, a residual and a relu
  after the sum; with fewer channels and wide outputs, rows of output channels by vectors along the outputs."""
  x, w = rng.standard_normal((n, c, hw, hw)).astype(np.float32), rng.standard_normal((o, c, k, k)).astype(np.float32)
  conv = Tensor(x).conv2d(Tensor(w), padding=k // 2, stride=stride)
  bias, residual = rng.standard_normal(o).astype(np.float32), rng.standard_normal(conv.shape).astype(np.float32)
  out = (conv + Tensor(bias).reshape(1, o, 1, 1) + Tensor(residual)).relu()
  code = kernel_ir(out)
  panel = f"{c}x" if k == 1 else f"{c}x{k}x{k}x"  # input channels (and the window) by a block of output channels
  lanes = Device["CPU"].target.vector_lanes
  packed = re.search(rf"memref.alloca\(\) : memref<{panel}({lanes}|{2 * lanes})xf32>", code)
  assert "math.fma" in code and bool(packed) == along_channels(o, (hw + 2 * (k // 2) - k) // stride + 1)
  close(out.numpy(), np.maximum(conv_reference(x, w, stride, k // 2) + bias[:, None, None] + residual, 0))


@pytest.mark.parametrize("o,hw,stride", [(48, 7, 1), (40, 9, 2), (16, 5, 1)])
def test_deep_conv2d_keeps_its_panel_within_half_an_l2(o: int, hw: int, stride: int) -> None:
  """512 input channels: a panel of two vectors of output channels would pass ALONG_PANEL_BYTES on 16 lanes, so the block
  is one vector wide there (two of 8 lanes); whole and partial blocks of channels and of columns, integer-valued data
  (exact float sums), so a misplaced output shows."""
  c = 512
  x, w = rng.integers(-2, 3, (1, c, hw, hw)).astype(np.float32), rng.integers(-2, 3, (o, c, 3, 3)).astype(np.float32)
  bias = rng.integers(-9, 10, o).astype(np.float32)
  out = (Tensor(x).conv2d(Tensor(w), padding=1, stride=stride) + Tensor(bias).reshape(1, o, 1, 1)).relu()
  assert f"memref<{c}x3x3x16xf32>" in kernel_ir(out)
  np.testing.assert_array_equal(out.numpy(), np.maximum(conv_reference(x, w, stride, 1) + bias[:, None, None], 0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32])
@pytest.mark.parametrize("o,hw", [(16, 8), (24, 9), (33, 17), (64, 20), (40, 56), (80, 9), (96, 56)])
def test_conv2d_outputs_along_columns_go_through_transposed_tiles(dtype, o: int, hw: int) -> None:
  """Output channels in the lanes and columns (contiguous) in the tile's rows: the accumulators are transposed so the batch
  norm, residual and relu after the sum run as vectors along the columns. Whole and moved-back blocks of columns and of
  channels; every output distinct (integer data, exact sums), so a misplaced one shows."""
  x = rng.integers(-3, 4, (2, 5, hw, hw)).astype(dtype)
  w = rng.integers(-2, 3, (o, 5, 3, 3)).astype(dtype)
  scale, shift = rng.integers(1, 4, o).astype(dtype), rng.integers(-9, 10, o).astype(dtype)
  residual = ((np.arange(2 * o * hw * hw) * 7) % 23 - 11).reshape(2, o, hw, hw).astype(dtype)
  conv = Tensor(x).conv2d(Tensor(w), padding=1)
  out = (conv * Tensor(scale).reshape(1, o, 1, 1) + Tensor(shift).reshape(1, o, 1, 1) + Tensor(residual)).relu()
  if dtype is np.float32 and along_channels(o, hw): assert "vector.extract_strided_slice" in kernel_ir(out)
  want = np.maximum(conv_reference(x.astype(np.int64), w.astype(np.int64), 1, 1) * scale[:, None, None].astype(np.int64)
                    + shift[:, None, None] + residual.astype(np.int64), 0)
  np.testing.assert_array_equal(out.numpy().astype(np.int64), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("o,c,k,hw,n", [(64, 5, 3, 4, 2), (96, 3, 3, 2, 2), (40, 4, 5, 6, 1), (72, 2, 3, 1, 3), (64, 3, 1, 5, 2)])
def test_weight_gradient_with_a_momentum_epilogue_reads_and_writes_along_its_taps(dtype, o: int, c: int, k: int, hw: int, n: int) -> None:
  """A convolution's weight gradient with output channels in the lanes and the taps of a row in the tile's rows (3 or 5 of
  them: no power of two), continued by a momentum update (velocity * 0.9 + gradient): the accumulators go through a stack
  buffer so that the velocity is read and the result written along the taps, whole and partial blocks of channels, a tap row
  of one (1x1: along the lanes again). Integer data: every sum exact, so a misplaced output shows."""
  x0 = rng.integers(-3, 4, (n, c, hw, hw)).astype(dtype)
  w0 = rng.integers(-2, 3, (o, c, k, k)).astype(dtype)
  g0 = rng.integers(-3, 4, (n, o, hw, hw)).astype(dtype)
  v0 = rng.integers(-8, 9, (o, c, k, k)).astype(dtype)
  x, w = Tensor(x0), Tensor(w0, requires_grad=True)
  x.conv2d(w, padding=k // 2).backward(Tensor(g0))
  out = Tensor(v0) * 0.5 + w.grad
  if dtype is np.float32 and k > 1 and along_channels(o, hw):  # the accumulators staged as k rows of the tile's width
    assert re.search(rf"memref.alloca\(\) : memref<{k}x\d+xf32>", kernel_ir(out))
  xp = np.pad(x0, ((0, 0), (0, 0), (k // 2, k // 2), (k // 2, k // 2)))
  windows = np.lib.stride_tricks.sliding_window_view(xp, (hw, hw), axis=(2, 3))  # (n, c, k, k, hw, hw)
  want = v0 * 0.5 + np.einsum("nchwyx,noyx->ochw", windows, g0)
  np.testing.assert_array_equal(out.numpy(), want)


def test_weight_gradient_with_a_momentum_epilogue_keeps_special_values_and_realizes_with_its_gradient() -> None:
  """The staged epilogue of a tile along the output channels with the taps as rows: inf and -0.0 in the velocity, a NaN in
  the input (every output it reaches is NaN), the update and the gradient realized together, both NumPy's."""
  x0, w0 = rng.integers(-3, 4, (2, 5, 4, 4)).astype(np.float32), rng.integers(-2, 3, (64, 5, 3, 3)).astype(np.float32)
  g0, v0 = rng.integers(-3, 4, (2, 64, 4, 4)).astype(np.float32), rng.integers(-8, 9, (64, 5, 3, 3)).astype(np.float32)
  v0[3, 1, 2, 0], v0[7, 4, 0, 2], v0[9, 0, 1, 1], x0[1, 2, 0, 3] = np.inf, -np.inf, -0.0, np.nan
  x, w = Tensor(x0), Tensor(w0, requires_grad=True)
  x.conv2d(w, padding=1).backward(Tensor(g0))
  out = Tensor(v0) * 0.5 + w.grad
  Tensor.realize(out, w.grad)
  windows = np.lib.stride_tricks.sliding_window_view(np.pad(x0, ((0, 0), (0, 0), (1, 1), (1, 1))), (4, 4), axis=(2, 3))
  grad = np.einsum("nchwyx,noyx->ochw", windows, g0)
  np.testing.assert_array_equal(w.grad.numpy(), grad)
  np.testing.assert_array_equal(out.numpy(), v0 * 0.5 + grad)


def test_conv2d_added_into_its_residual_in_place() -> None:
  """An assign of the residual plus a convolution into the residual's own buffer: every output read once, then written."""
  x, w = rng.standard_normal((1, 4, 12, 12)).astype(np.float32), rng.standard_normal((24, 4, 3, 3)).astype(np.float32)
  start = rng.standard_normal((1, 24, 12, 12)).astype(np.float32)
  y = Tensor(start.copy()).realize()
  y.assign(y + Tensor(x).conv2d(Tensor(w), padding=1)).realize()
  close(y.numpy(), start + conv_reference(x, w, 1, 1))


def test_max_reduction_and_column_sum() -> None:
  a, b = rng.standard_normal((8, 12)).astype(np.float32), rng.standard_normal((12, 16)).astype(np.float32)
  out = (Tensor(a).reshape(8, 12, 1) + Tensor(b).reshape(1, 12, 16)).max(1)
  assert f"vector<{lanes_for(16)}xf32>" in kernel_ir(out)
  close(out.numpy(), (a[:, :, None] + b[None]).max(1))
  close(Tensor(b).sum(0).numpy(), b.sum(0))


@pytest.mark.parametrize("rows", [8, 96, 288])
def test_contiguous_rows_are_packed(rows: int) -> None:
  """b's rows are contiguous and still packed into a panel (k x one block of columns), however few rows reuse it."""
  a, b = rng.standard_normal((rows, 48)).astype(np.float32), rng.standard_normal((48, 80)).astype(np.float32)
  out = Tensor(a) @ Tensor(b)
  assert f"memref.alloca() : memref<48x{2 * lanes_for(80)}xf32>" in kernel_ir(out)
  close(out.numpy(), a @ b)


@pytest.mark.parametrize("m,k,n", [(32, 20, 24), (9, 64, 13), (40, 3072, 48)])
def test_transposed_weight_is_packed(m: int, k: int, n: int) -> None:
  x, w = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((n, k)).astype(np.float32)
  out = Tensor(x) @ Tensor(w).T
  vectors = max(v for v in (1, 2, Device["CPU"].target.tile_vectors) if v * lanes_for(n) <= n and (v < 3 or n % (v * lanes_for(n)) == 0))
  assert f"memref.alloca() : memref<{k}x{lanes_for(n) * vectors}xf32>" in kernel_ir(out)
  close(out.numpy(), x @ w.T)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.float16])
@pytest.mark.parametrize("k", [64, 48, 16])
def test_transposed_weight_panels_put_every_element_in_place(dtype, k: int) -> None:
  """The weight's tiles are transposed in registers: every element of w distinct, so a misplaced one changes the (exact) result."""
  n = 48
  w = ((np.arange(n * k) * 37) % 199 - 99).reshape(n, k).astype(dtype)
  x = rng.integers(-3, 4, (40, k)).astype(dtype)
  got, want = (Tensor(x) @ Tensor(w).T).numpy(), x.astype(np.int64) @ w.astype(np.int64).T
  np.testing.assert_array_equal(got.astype(np.int64) if dtype != np.float16 else got, want if dtype != np.float16 else want.astype(np.float16))


def test_transposed_half_weight_tiles_read_every_element() -> None:
  x, w = rng.standard_normal((24, 64)).astype(np.float16), rng.standard_normal((40, 64)).astype(np.float16)
  np.testing.assert_allclose((Tensor(x) @ Tensor(w).T).numpy().astype(np.float32), x.astype(np.float32) @ w.astype(np.float32).T, rtol=2e-2, atol=0.1)


ROW_PANEL = re.compile(r"memref\.alloca\(\) : memref<\d+x(\d+)x\d+x(f\d+)>")  # a group's rows: block x reduce steps x rows


@pytest.mark.parametrize("batch,m,k,n", [((), 256, 40, 48), ((), 300, 17, 70), ((), 264, 3000, 33), ((2,), 260, 20, 40)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_read_across_are_packed_per_group(batch: tuple[int, ...], m: int, k: int, n: int, dtype) -> None:
  """a.T @ b reads a[k, i], a new row of a at every step of k: each group of row blocks copies its rows into a panel
  first. Every element of a distinct and small integers throughout, so a misplaced row or step changes the exact result;
  partial blocks of rows and of columns (300, 70, 33) move back over their neighbours."""
  a = (((np.arange(np.prod((*batch, k, m))) * 37) % 101) - 50).reshape(*batch, k, m).astype(dtype)
  b = rng.integers(-3, 4, (*batch, k, n)).astype(dtype)
  out = Tensor(a).transpose(-1, -2) @ Tensor(b)
  assert [(int(steps), element) for steps, element in ROW_PANEL.findall(kernel_ir(out))] == [(k, "f32" if dtype == np.float32 else "f64")]
  np.testing.assert_array_equal(out.numpy(), np.swapaxes(a, -1, -2).astype(np.int64) @ b.astype(np.int64))


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("m", [1000, 1000 - 3])
def test_last_group_of_row_blocks_holds_what_is_left(m: int, transposed: bool) -> None:
  """1000 rows are 125 blocks of 8: groups of up to 32 (64 on one core) leave a partial last group, whose loop (and row
  panel, for a.T) stops at the last block; 997 rows also move that block back over its neighbour. Exact integers."""
  a, b = rng.integers(-5, 6, (m, 24)).astype(np.float32), rng.integers(-5, 6, (24, 40)).astype(np.float32)
  left = Tensor(np.ascontiguousarray(a.T)).T if transposed else Tensor(a)
  np.testing.assert_array_equal((left @ Tensor(b)).numpy(), a @ b)


@pytest.mark.parametrize("k,m,n", [(0, 300, 40), (5, 0, 40), (5, 300, 0), (1, 300, 40), (40, 300, 1), (40, 1, 48)])
def test_rows_read_across_with_empty_and_single_dims(k: int, m: int, n: int) -> None:
  a, b = rng.integers(-3, 4, (k, m)).astype(np.float32), rng.integers(-3, 4, (k, n)).astype(np.float32)
  np.testing.assert_array_equal((Tensor(a).T @ Tensor(b)).numpy(), a.T @ b)


def test_rows_read_across_with_special_values_unsigned_several_outputs_and_threads() -> None:
  """inf, NaN and -0.0 in a (through the row panel), two products of a.T realized together, a uint8 a.T accumulating in
  uint32, and four threads computing a.T @ b at once: all as NumPy."""
  import threading
  x, y = rng.standard_normal((64, 300)).astype(np.float32), rng.standard_normal((64, 48)).astype(np.float32)
  x[0, 0], x[1, 1], x[2, 2] = np.inf, np.nan, -0.0
  first, second = Tensor(x).T @ Tensor(y), Tensor(x).T @ Tensor(y * 2)
  Tensor.realize(first, second)
  with np.errstate(invalid="ignore"):
    for got, want in ((first, x.T @ y), (second, x.T @ (y * 2))):
      assert np.isnan(want).any() and np.isinf(want).any()
      np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-3)
  from pytc import dtypes
  a, b = rng.integers(0, 3, (40, 300)), rng.integers(0, 3, (40, 48))
  np.testing.assert_array_equal(Tensor(a.astype(np.uint8)).T.dot(Tensor(b.astype(np.uint8)), dtype=dtypes.uint32).numpy(), a.T @ b)
  results: dict[int, np.ndarray] = {}
  def run(i: int) -> None: results[i] = (Tensor(x[:, :290]).T @ Tensor(y)).numpy()
  threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
  for t in threads: t.start()
  for t in threads: t.join()
  assert len(results) == 4
  with np.errstate(invalid="ignore"): want = x[:, :290].T @ y
  for got in results.values(): np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def test_rows_read_across_through_padding_and_in_order_without_panel() -> None:
  """A padded a.T (gated reads across rows) goes through the row panel with its zeros; a @ b reads a's rows along k in
  order: no row panel."""
  a, b = rng.integers(-4, 5, (30, 290)).astype(np.float32), rng.integers(-4, 5, (35, 64)).astype(np.float32)
  padded = Tensor(a).pad(((3, 2), (0, 0))).T @ Tensor(b)
  assert len(ROW_PANEL.findall(kernel_ir(padded))) == 1
  np.testing.assert_array_equal(padded.numpy(), np.pad(a, ((3, 2), (0, 0))).T @ b)
  plain = Tensor(a.T.copy()) @ Tensor(b[:30])
  assert not ROW_PANEL.findall(kernel_ir(plain))
  np.testing.assert_array_equal(plain.numpy(), a.T @ b[:30])


@pytest.mark.parametrize("keys", [64, 20])
def test_softmax_fused_into_matmul_is_vectorized_along_the_reduction(keys: int) -> None:
  q, k, v = (rng.standard_normal((2, n, 16)).astype(np.float32) for n in (24, keys, keys))
  out = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v))
  if keys % 8 == 0: assert "vector.extract" in kernel_ir(out).split("func.func")[-1]
  scores = q @ k.transpose(0, 2, 1) / 4.0
  p = np.exp(scores - scores.max(-1, keepdims=True))
  close(out.numpy(), (p / p.sum(-1, keepdims=True)) @ v)


def test_large_outputs_stream_past_the_caches() -> None:
  """Outputs of 8 MiB and more are written with aligned non-temporal vector stores; the results are the same."""
  x = rng.standard_normal((2048, 1024)).astype(np.float32)
  out = Tensor(x).layernorm()
  assert "nontemporal = true" in kernel_ir(out)
  close(out.numpy(), (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5))
  chain = ((Tensor(x) * 2 + 1).relu() * 0.5).exp()
  assert "nontemporal = true" in kernel_ir(chain)
  np.testing.assert_allclose(chain.numpy(), np.exp(np.maximum(x * 2 + 1, 0) * 0.5), rtol=1e-5)


def test_elementwise_with_odd_rows_uses_unaligned_vectors() -> None:
  x = rng.standard_normal((7, 37)).astype(np.float32)
  out = Tensor(x).softmax(-1)
  ir_text = kernel_ir(out)
  assert "vector.load" in ir_text and "alignment" not in ir_text and "nontemporal" not in ir_text
  e = np.exp(x - x.max(-1, keepdims=True))
  close(out.numpy(), e / e.sum(-1, keepdims=True))


def test_softmax_computes_each_exponential_once() -> None:
  x = rng.standard_normal((64, 256)).astype(np.float32)
  out = Tensor(x).softmax(-1)
  assert "vector.reduction <add>" in kernel_ir(out) and kernel_ir(out).count("math.roundeven") == 1
  e = np.exp(x - x.max(-1, keepdims=True))
  close(out.numpy(), e / e.sum(-1, keepdims=True))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_matmul_in_other_float_types(dtype: str) -> None:
  from pytc import dtypes
  a, b = rng.standard_normal((40, 70)).astype(np.float32), rng.standard_normal((70, 48)).astype(np.float32)
  out = (Tensor(a).cast(getattr(dtypes, dtype)) @ Tensor(b).cast(getattr(dtypes, dtype))).float().numpy()
  np.testing.assert_allclose(out, a @ b, rtol=3e-2, atol=3e-2 * np.abs(a @ b).max())


def test_unsigned_matmul_accumulates_in_vectors() -> None:
  from pytc import dtypes
  a, b = rng.integers(0, 7, (20, 37)), rng.integers(0, 7, (37, 33))
  out = Tensor(a.astype(np.int64)).cast(dtypes.uint8).dot(Tensor(b.astype(np.int64)).cast(dtypes.uint8), dtype=dtypes.uint32)
  assert f"vector<{lanes_for(33)}xi32>" in kernel_ir(out)
  np.testing.assert_array_equal(out.numpy(), a @ b)


def softmax_rows(s: np.ndarray) -> np.ndarray:
  e = np.exp(s - s.max(-1, keepdims=True))
  return e / e.sum(-1, keepdims=True)


@pytest.mark.parametrize("seed", range(24))
def test_random_shapes_through_the_vector_paths(seed: int) -> None:
  """Register-blocked, stream-mode and scalar kernels on sizes that divide the blocks, leave partial blocks, or are
  too narrow to vectorize, each against NumPy."""
  r = np.random.default_rng(seed)
  m, k, n = (int(r.choice(sizes)) for sizes in ([1, 3, 16, 17, 33], [1, 5, 16, 40], [8, 15, 16, 31, 48, 70]))
  a, b, c = r.standard_normal((m, k)).astype(np.float32), r.standard_normal((k, n)).astype(np.float32), r.standard_normal(n).astype(np.float32)
  A, B, C = Tensor(a), Tensor(b), Tensor(c)
  cases = [
    (((A @ B) * 2 + C).relu(), np.maximum((a @ b) * 2 + c, 0)),
    (A @ Tensor(b.T.copy()).T, a @ b),
    ((A @ B).softmax(-1), softmax_rows(a @ b)),
    ((B * C).exp2() - B.max(0), np.exp2(b * c) - b.max(0)),
    (B.layernorm(), (b - b.mean(-1, keepdims=True)) / np.sqrt(b.var(-1, keepdims=True) + 1e-5)),
    ((B * B).sum(0) + C, (b * b).sum(0) + c),
    (B.pad(((0, 0), (1, 2))).shrink(((0, k), (2, n + 2))) + B, np.pad(b, ((0, 0), (1, 2)))[:, 2:n + 2] + b),
    ((A.reshape(m, k, 1) + B.reshape(1, k, n)).max(1), (a[:, :, None] + b[None]).max(1)),
  ]
  out, want = cases[seed % len(cases)]
  close(out.numpy(), want)


@pytest.mark.parametrize("cols", [16, 48, 64, 128, 40, 17, 49, 100, 1000, 9])
def test_row_max_and_sum_as_vector_code_keep_nan_inf_and_signed_zero(cols: int) -> None:
  """Rows at least as long as the lanes reduce as vectors (partial maxima beside a NaN flag, partial sums; a last vector
  over the row's end, its lanes read before set aside), shorter ones as scalar loops: a NaN anywhere in a row makes its
  max NaN (the last element included), infinities and -0.0 come through, sums match NumPy's."""
  x = rng.standard_normal((6, cols)).astype(np.float32)
  x[1, cols - 1], x[2, 0], x[3, :] = np.nan, np.inf, -0.0
  x[4, cols // 2] = -np.inf
  x[5, :] = -3e38
  t = Tensor(x)
  with np.errstate(invalid="ignore"): np.testing.assert_array_equal((t - t.max(1, keepdim=True)).numpy(), x - x.max(1, keepdims=True))
  assert np.signbit(t.max(1).numpy()[3]) and t.max(1).numpy()[2] == np.inf and t.max(1).numpy()[5] == np.float32(-3e38)
  centered = (t - t.mean(1, keepdim=True)).numpy()
  close(centered[0], x[0] - x[0].mean())
  with np.errstate(over="ignore"): np.testing.assert_array_equal(centered[5], x[5] - x[5].mean(dtype=np.float32))  # the sum overflows
  finite = rng.standard_normal((64, cols)).astype(np.float32)
  exp = np.exp(finite - finite.max(1, keepdims=True))
  close(Tensor(finite).softmax(1).numpy(), exp / exp.sum(1, keepdims=True))
  close(Tensor(finite).layernorm(1).numpy(), (finite - finite.mean(1, keepdims=True)) / np.sqrt(finite.var(1, keepdims=True) + 1e-5))


@pytest.mark.parametrize("rows,cols", [(4096, 16), (5000, 32), (3000, 8), (2048, 17)])
def test_narrow_column_sums_as_one_vector_block(rows: int, cols: int) -> None:
  """A column sum whose columns fit one vector block keeps its accumulators in registers and reads the rows in order."""
  x = rng.standard_normal((rows, cols)).astype(np.float32)
  x[7, 3] = np.inf
  out = Tensor(x).sum(0)
  if cols in (lanes_for(cols), 2 * lanes_for(cols)): assert "vector.load" in kernel_ir(out)
  np.testing.assert_allclose(out.numpy(), x.astype(np.float64).sum(0), rtol=1e-4, atol=1e-3)
  np.testing.assert_array_equal(Tensor(x).max(0).numpy(), x.max(0))


@pytest.mark.parametrize("rows,cols", [(1000, 16), (777, 64), (3, 48), (500, 24), (300, 49), (100, 17), (64, 31)])
def test_short_row_reductions_run_along_their_rows(rows: int, cols: int) -> None:
  """Sums and maxima of many short rows: scalar loops over the rows, each row one run of vector code (`across`) when it is
  at least as long as the lanes; NaN and infinities come through as in NumPy, in the row's last elements too."""
  x = rng.standard_normal((rows, cols)).astype(np.float32)
  x[0, -1], x[1, 0], x[2, 1] = np.nan, np.inf, -np.inf
  x[rows - 1, -1] = 1e30  # in the lanes only the row's last vector reads
  total, largest = Tensor(x).sum(1), Tensor(x).max(1)
  if cols >= Device["CPU"].target.vector_lanes: assert "vector.reduction" in kernel_ir(total) and "vector.reduction" in kernel_ir(largest)
  np.testing.assert_allclose(total.numpy(), x.astype(np.float64).sum(1), rtol=1e-5, atol=1e-4)
  np.testing.assert_array_equal(largest.numpy(), x.max(1))


@pytest.mark.parametrize("shape", [(16, 64), (17, 32), (1000, 16), (40, 48), (3, 21, 64), (9, 16), (4, 128)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_reductions_with_an_epilogue_in_blocks_of_rows(shape: tuple[int, ...], dtype) -> None:
  """logsumexp (a max nested in a sum, then a log) and a scaled mean over short rows: blocks of rows compute each
  reduction row by row, the rest as vectors over the block (a partial last block moves back); rows of NaN, +-inf and
  -inf only come through as in NumPy."""
  x = rng.standard_normal(shape).astype(dtype) * 4
  flat = x.reshape(-1, shape[-1])
  flat[0, 3], flat[1, :], flat[2, 5], flat[-1, 0] = np.nan, -np.inf, np.inf, -np.inf
  scale = rng.standard_normal(shape[:-1]).astype(dtype)
  lse, mean = Tensor(x).logsumexp(-1), Tensor(x).mean(-1) * Tensor(scale)
  lanes = Device["CPU"].target.vector_lanes
  if int(np.prod(shape[:-1])) >= lanes and shape[-1] % lanes == 0 and dtype == np.float32:
    assert "memref.alloca" in kernel_ir(lse) and "vector.reduction" in kernel_ir(lse)
  with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
    peak = np.where(np.isinf(x.max(-1, keepdims=True)), 0, x.max(-1, keepdims=True))
    want = np.log(np.exp((x - peak).astype(np.float64)).sum(-1)) + peak[..., 0]
  np.testing.assert_allclose(lse.numpy(), want, rtol=1e-5 if dtype == np.float32 else 1e-12)
  np.testing.assert_allclose(mean.numpy(), x.astype(np.float64).mean(-1) * scale, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(48, 64), (0, 64), (32, 1), (1, 64), (64,)])
def test_blocked_row_reductions_realized_together(shape: tuple[int, ...]) -> None:
  """logsumexp and max (rows with -0.0 and huge values) and a scaled mean (of finite-sum rows) realized in one schedule,
  ties within rows included, and the shapes beside blocks: no rows, rows of one, one row, a 1-D tensor."""
  y = np.round(rng.standard_normal(shape) * 3).astype(np.float32)  # rounded: ties within a row
  x = y.copy()
  if x.size: x.reshape(-1)[:3] = [-0.0, 3e38, -3e38][: x.size]
  lse, largest, mean = Tensor(x).logsumexp(-1), Tensor(x).max(-1), Tensor(y).mean(-1) * 2
  Tensor.realize(lse, largest, mean)
  with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
    peak = x.max(-1, keepdims=True) if x.shape[-1] else np.full(shape[:-1] + (1,), -np.inf, np.float32)
    want = np.log(np.exp((x - peak).astype(np.float64)).sum(-1)) + peak[..., 0]
  np.testing.assert_allclose(lse.numpy(), want, rtol=1e-5)
  if x.shape[-1]: np.testing.assert_array_equal(largest.numpy(), x.max(-1))
  np.testing.assert_allclose(mean.numpy(), y.astype(np.float64).mean(-1) * 2, rtol=1e-5, atol=1e-6)


CHUNK_RUN = re.compile(r"scf\.for %\w+ = %\d+ to %\d+ step")  # a loop over the blocks of j from a computed first block to a computed last


@pytest.mark.parametrize("m,k,n,transposed", [(16, 64, 1000, False), (16, 64, 80, False), (40, 33, 520, False), (128, 96, 3072, False),
                                              (24, 50, 600, True), (1, 64, 512, False), (64, 4000, 100, False)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_cores_split_the_columns_of_few_rows(m: int, k: int, n: int, transposed: bool, dtype) -> None:
  """Rows that fit one group within an L2 leave too few groups for the cores: they split each group's blocks of columns
  into runs instead (chunks), whose bounds divide the blocks unevenly (1000 columns: a partial last block moved back; 80:
  3 blocks in 3 runs); 64 rows over k = 4000 make two groups, each in two runs. Every element of b distinct and small
  integers, so a run that skips or repeats a block changes the exact result."""
  a = rng.integers(-3, 4, (m, k)).astype(dtype)
  b = (((np.arange(k * n) * 37) % 101) - 50).reshape(k, n).astype(dtype)
  left = Tensor(np.ascontiguousarray(a.T)).T if transposed else Tensor(a)
  out = left @ Tensor(b)
  if Device["CPU"].target.cores > 1 and m > 1: assert CHUNK_RUN.search(kernel_ir(out)), "the columns are not split"
  np.testing.assert_array_equal(out.numpy().astype(np.int64), a.astype(np.int64) @ b.astype(np.int64))


@pytest.mark.parametrize("m,k,n", [(0, 64, 1000), (16, 0, 1000), (1, 64, 1000), (16, 1, 1000), (16, 64, 1)])
def test_split_columns_with_empty_and_single_dims(m: int, k: int, n: int) -> None:
  a, b = rng.integers(-3, 4, (m, k)).astype(np.float32), rng.integers(-3, 4, (k, n)).astype(np.float32)
  np.testing.assert_array_equal((Tensor(a) @ Tensor(b)).numpy(), a @ b)


def test_split_columns_with_special_values_unsigned_several_outputs_and_threads() -> None:
  """The columns of a 16-row matmul split across the cores: inf, NaN and -0.0 in a reach the right outputs, two products
  realized together, uint8 accumulating in uint32, and four threads at once, all as NumPy."""
  import threading

  from pytc import dtypes
  x, y = rng.standard_normal((16, 96)).astype(np.float32), rng.standard_normal((96, 1000)).astype(np.float32)
  x[0, 0], x[5, 1], x[9, 2] = np.inf, np.nan, -0.0
  first, second = Tensor(x) @ Tensor(y), Tensor(x) @ Tensor(y * 2)
  Tensor.realize(first, second)
  with np.errstate(invalid="ignore"):
    for got, want in ((first, x @ y), (second, x @ (y * 2))):
      assert np.isnan(want).any() and np.isinf(want).any()
      np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-3)
  a, b = rng.integers(0, 3, (16, 300)), rng.integers(0, 3, (300, 1000))
  np.testing.assert_array_equal(Tensor(a.astype(np.uint8)).dot(Tensor(b.astype(np.uint8)), dtype=dtypes.uint32).numpy(), a @ b)
  results: dict[int, np.ndarray] = {}
  def run(i: int) -> None: results[i] = (Tensor(x[:, :90]) @ Tensor(y[:90])).numpy()
  threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
  for t in threads: t.start()
  for t in threads: t.join()
  assert len(results) == 4
  with np.errstate(invalid="ignore"): want = x[:, :90] @ y[:90]
  for got in results.values(): np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def test_remembered_ranges_agree_with_each_value_s_computation():
  """Within `unchanging`, uses_any answers from the ranges it remembered for earlier values; on every value of a
  convolution's forward and backward kernels, for every range, that answer is the one its whole computation gives."""
  from mlir import ir

  from pytc.dialects import uop
  from pytc.passes.common.analysis import computation, unchanging, uses_any
  x = Tensor(rng.standard_normal((2, 3, 9, 9), dtype=np.float32), requires_grad=True)
  w = Tensor(rng.standard_normal((4, 3, 3, 3), dtype=np.float32), requires_grad=True)
  loss = x.conv2d(w, stride=2, padding=1).relu().sum()
  loss.backward()
  scheduled = schedule([x.grad.lazydata, w.grad.lazydata])[0]
  checked = 0
  for kernel in [op for op in scheduled.kernels.body.operations if "pytc.kernel" in op.attributes]:
    ops = list(kernel.regions[0].blocks[0].operations)
    ranges = [op.results[0] for op in ops if isinstance(op, uop.RangeOp)]
    values = [r for op in ops for r in op.results if not isinstance(r.type, ir.NoneType)]
    with unchanging():
      for value in values:
        for r in ranges:
          assert uses_any(value, {r}) == (value == r or any(v == r for op in computation(value) for v in op.operands))
          checked += 1
  assert checked > 100


@pytest.mark.parametrize("lanes, rows", [(8, 4), (16, 8)])
def test_input_gradient_at_few_pixels_is_vector_code_along_the_channels(lanes, rows):
  """A 3x3 convolution's input gradient at 4x4 pixels over a batch of 8, 256 channels: vector code along the input channels (their weight
  panel serves every pixel and image), not along the batch (its output-gradient reads vary with the pixels: no panel),
  whatever the vector width; and its values are NumPy's."""
  from pytc.passes.common.attributes import VECTOR
  from pytc.pipelines import copy_module, run_pipeline
  x0, w0 = rng.standard_normal((8, 256, 4, 4), dtype=np.float32), rng.standard_normal((256, 256, 3, 3), dtype=np.float32)
  g0 = rng.standard_normal((8, 256, 4, 4), dtype=np.float32)
  x, w = Tensor(x0, requires_grad=True), Tensor(w0)
  (x.conv2d(w, padding=1) * Tensor(g0)).sum().backward()
  kernels = copy_module(schedule([x.grad.lazydata])[0].kernels)
  run_pipeline(kernels, f"builtin.module(pytc-split-ranges, pytc-merge-ranges, pytc-order-loops, pytc-vectorize{{lanes={lanes} rows={rows} "
                        "vectors=2 group=64 cores=2})")
  with kernels.context:
    tiles = [VECTOR.get(op) for op in kernels.body.operations if "pytc.kernel" in op.attributes and "_3_3" in op.attributes["sym_name"].value]
  assert tiles and all(tile and tile["lanes"] == lanes and "along" in tile for tile in tiles), tiles
  padded = np.pad(g0, ((0, 0), (0, 0), (1, 1), (1, 1)))
  windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))
  expected = np.einsum("bohwij,ocij->bchw", windows, w0[:, :, ::-1, ::-1])
  np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("vocab, dim, positions, dtype", [(37, 13, (3, 5), np.int32), (8, 64, (40,), np.int64), (1, 9, (4,), np.int32),
                                                          (200, 24, (2, 7), np.uint8), (50, 16, (0,), np.int32)])
def test_embedding_gradient_skips_the_steps_whose_index_misses_the_block(vocab, dim, positions, dtype):
  """An embedding table's gradient (a one-hot sum over the positions) is vector code that accumulates only the reduce steps whose
  index lands in the block's rows, and equals NumPy's scatter-add: repeated indices add up, negative ones count from the end,
  rows no index names stay 0."""
  low = -vocab if np.issubdtype(dtype, np.signedinteger) else 0
  idx0 = rng.integers(low, vocab, positions).astype(dtype)
  if idx0.size > 2: idx0.reshape(-1)[1] = idx0.reshape(-1)[0]  # a tie
  g0 = rng.standard_normal(positions + (dim,), dtype=np.float32)
  table = Tensor(rng.standard_normal((vocab, dim), dtype=np.float32), requires_grad=True)
  (table[Tensor(idx0)] * Tensor(g0)).sum().backward()
  if idx0.size and vocab > 1: assert "scf.if" in kernel_ir(table.grad)
  expected = np.zeros((vocab, dim), np.float32)
  np.add.at(expected, idx0.reshape(-1).astype(np.int64) % vocab, g0.reshape(-1, dim))
  close(table.grad.numpy(), expected)


def test_gather_gradient_with_rows_of_candidates():
  """gather's gradient along dim 0, which sums one-hot terms with the candidates in rows: NumPy's scatter-add."""
  x0, idx0 = rng.standard_normal((30, 20), dtype=np.float32), rng.integers(0, 30, (45, 20)).astype(np.int32)
  g0 = rng.standard_normal((45, 20), dtype=np.float32)
  x = Tensor(x0, requires_grad=True)
  (x.gather(0, Tensor(idx0)) * Tensor(g0)).sum().backward()
  expected = np.zeros_like(x0)
  np.add.at(expected, (idx0, np.broadcast_to(np.arange(20), idx0.shape)), g0)
  close(x.grad.numpy(), expected)


@pytest.mark.parametrize("m,k,n,transposed", [(64, 65536, 48, False), (3, 32768, 5, True), (1, 16384, 1, False), (40, 8192, 96, False),
                                              (17, 16384, 33, True)])
def test_long_reductions_of_matmuls(m: int, k: int, n: int, transposed: bool) -> None:
  """K past pytc-split-reduce's threshold (chunks of K, each a matmul) or past a full tile's panel (fewer vectors packed)."""
  a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((n, k) if transposed else (k, n)).astype(np.float32)
  out = Tensor(a) @ (Tensor(b).T if transposed else Tensor(b))
  want = a.astype(np.float64) @ (b.T if transposed else b).astype(np.float64)
  if m * n >= 64: assert "math.fma" in (code := kernel_ir(out)) and f"vector<{lanes_for(n)}xf32>" in code
  np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, atol=1e-4 * np.sqrt(k))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8, np.bool_])
@pytest.mark.parametrize("parts,width", [(2, 8), (3, 17), (4, 40), (2, 23)])
def test_phases_along_a_short_last_dim_store_as_one_interleaved_vector(dtype, parts: int, width: int) -> None:
  """A stack along a new last dim of 2-4 (a strided gradient's phases) runs as vectors along the dim before it, one per phase,
  interleaved by shuffles into one contiguous store; widths that leave a partial block, every dtype, inf, NaN and -0.0."""
  sources = [(rng.standard_normal((3, width)) * 100).astype(dtype) for _ in range(parts)]
  if np.issubdtype(dtype, np.floating): sources[0][0, :4] = [np.inf, -np.inf, np.nan, -0.0]
  out = Tensor.stack(*[Tensor(s) for s in sources], dim=-1)
  code = kernel_ir(out)
  assert "memref.collapse_shape" in code and f"vector<{parts * lanes_for(width)}x" in code
  np.testing.assert_array_equal(out.numpy(), np.stack(sources, axis=-1))


def test_the_input_gradient_of_a_strided_1x1_convolution_spreads_its_values_as_vectors() -> None:
  """A 1x1 stride-2 convolution's input gradient: one phase holds the transposed convolution, three are zeros; the
  spread into the input's shape is vector code, and the gradient equals NumPy's."""
  x, w = rng.standard_normal((2, 16, 18, 18)).astype(np.float32), rng.standard_normal((8, 16, 1, 1)).astype(np.float32)
  tx = Tensor(x, requires_grad=True)
  out = tx.conv2d(Tensor(w), stride=2)
  g = rng.standard_normal(out.shape).astype(np.float32)
  out.backward(Tensor(g))
  assert "vector.shuffle" in kernel_ir(tx.grad)
  want = np.zeros_like(x)
  want[:, :, ::2, ::2] = np.einsum("nkhw,kc->nchw", g, w[:, :, 0, 0])
  close(tx.grad.numpy(), want)
