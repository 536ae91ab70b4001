"""The smallest graphs that showed each of a set of regressions, against NumPy: gradients that left a value used before
its definition (a max pool's and a convolution's), a segfault of pytc-fuse (a materialized read inlined through padding),
an unsigned clip whose negative bound wrapped, and comparisons of integer tensors with scalars outside their dtype."""
import numpy as np
import pytest

from pytc import Tensor, dtypes
from pytc.fuzz import np_conv2d, np_pool

rng = np.random.default_rng(0)


def pool_gradient(x: np.ndarray, kernel: tuple[int, int], padding: tuple[int, int]) -> np.ndarray:
  """d sum(max_pool2d(x)) / dx for windows of `kernel` at stride `kernel`: 1 at each window's (unique) maximum."""
  (kh, kw), (ph, pw) = kernel, padding
  padded = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=-np.inf)
  grad = np.zeros_like(padded)
  for y in range(0, padded.shape[2] - kh + 1, kh):
    for z in range(0, padded.shape[3] - kw + 1, kw):
      window = padded[:, :, y:y + kh, z:z + kw]
      grad[:, :, y:y + kh, z:z + kw] += window == window.max(axis=(2, 3), keepdims=True)
  return grad[:, :, ph:ph + x.shape[2], pw:pw + x.shape[3]]


@pytest.mark.parametrize("kernel, padding", [(2, 0), ((3, 3), 0), ((3, 2), 0), ((5, 5), 0), ((5, 1), 0), ((3, 3), 1), (2, (1, 0)),
                                             ((3, 2), (0, 1))])
def test_max_pool_gradient(kernel, padding):
  """The mask of each window's maximum was vectorized along the channels with its windows packed once per block of
  channels, before the loops over the pixels they depend on ("operand does not dominate this use")."""
  shape = (32, 2, 11, 28) if padding == 0 else (4, 2, 11, 28)
  x = rng.standard_normal(shape).astype(np.float32)
  t = Tensor(x, requires_grad=True)
  t.max_pool2d(kernel_size=kernel, padding=padding).sum().backward()
  k = kernel if isinstance(kernel, tuple) else (kernel, kernel)
  p = padding if isinstance(padding, tuple) else (padding, padding)
  np.testing.assert_array_equal(t.grad.numpy(), pool_gradient(x.astype(np.float64), k, p))


@pytest.mark.parametrize("x_shape, w_shape", [((1, 16, 9, 9), (16, 16, 3, 3)), ((4, 16, 24, 20), (6, 16, 5, 2))])
def test_conv_gradients(x_shape, w_shape):
  x, w = rng.standard_normal(x_shape).astype(np.float32), rng.standard_normal(w_shape).astype(np.float32)
  tx, tw = Tensor(x, requires_grad=True), Tensor(w, requires_grad=True)
  out = tx.conv2d(tw)
  weight = rng.standard_normal(out.shape).astype(np.float32)
  (out * Tensor(weight)).sum().backward()
  kh, kw = w_shape[2:]
  oh, ow = weight.shape[2:]
  expected_x, expected_w = np.zeros(x_shape), np.zeros(w_shape)
  for i in range(kh):
    for j in range(kw):  # out[n, o, y, z] += x[n, c, y + i, z + j] * w[o, c, i, j]
      expected_x[:, :, i:i + oh, j:j + ow] += np.einsum("noyz,oc->ncyz", weight, w[:, :, i, j].astype(np.float64))
      expected_w[:, :, i, j] = np.einsum("noyz,ncyz->oc", weight, x[:, :, i:i + oh, j:j + ow].astype(np.float64))
  np.testing.assert_allclose(out.numpy(), np_conv2d(x.astype(np.float64), w.astype(np.float64), 1, 1, 1, 0), rtol=1e-4, atol=1e-3)
  np.testing.assert_allclose(tx.grad.numpy(), expected_x, rtol=1e-4, atol=1e-3)
  np.testing.assert_allclose(tw.grad.numpy(), expected_w, rtol=1e-4, atol=2e-3)


def test_fuse_inlines_a_materialized_read_through_padding():
  """bool -> sin -> where -> cumsum -> repeat -> matmul -> abs -> a padded, dilated 1x1 convolution: pytc-fuse inlined a
  buffer whose value is a read into a padded reader, erased that read and then used it (a segfault)."""
  x = rng.random((5, 1, 1, 2)) > 0.5
  y, z = rng.standard_normal((1, 2)).astype(np.float32), rng.standard_normal((5, 1, 1, 2)).astype(np.float32)
  m, w = rng.standard_normal((2, 6)).astype(np.float32), rng.standard_normal((1, 1, 1, 1)).astype(np.float32)
  s = Tensor(x).sin()
  h = ((s > Tensor(y)).where(s, Tensor(z)).cumsum(1).repeat((1, 1, 1, 1)) @ Tensor(m)).abs()
  out = h.conv2d(Tensor(w), padding=1, dilation=2)
  sines = np.sin(x.astype(np.float32))
  expected = np_conv2d(np.abs(np.where(sines > y, sines, z) @ m).astype(np.float64), w.astype(np.float64), 1, 1, 2, 1)
  np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(2, 1, 8, 8), (1, 1, 9, 7), (3, 1, 12, 12)])
def test_fuse_gradient_through_cumsum_and_pooling(shape):
  """A convolution (stride 2, padding 1) -> where -> cumsum -> max_pool2d(3, stride 2), then backward: the same segfault."""
  x, w = rng.standard_normal(shape).astype(np.float32), rng.standard_normal((2, 1, 2, 2)).astype(np.float32)
  tx = Tensor(x, requires_grad=True)
  c = tx.conv2d(Tensor(w), stride=2, padding=1)
  out = (c > 0).where(c, c * 0.5).cumsum(3).max_pool2d(3, stride=2)
  weight = rng.standard_normal(out.shape)
  (out * Tensor(weight.astype(np.float32))).sum().backward()
  def forward(values: np.ndarray) -> np.ndarray:
    conv = np_conv2d(values, w.astype(np.float64), 1, 2, 1, 1)
    return np_pool(np.where(conv > 0, conv, conv * 0.5).cumsum(3), 3, 2, 0, "max")
  np.testing.assert_allclose(out.numpy(), forward(x.astype(np.float64)), rtol=1e-5, atol=1e-5)
  grad, base, h = tx.grad.numpy(), x.astype(np.float64), 1e-6
  for flat in rng.choice(x.size, 8, replace=False):
    where = np.unravel_index(flat, x.shape)
    plus, minus = base.copy(), base.copy()
    plus[where] += h
    minus[where] -= h
    expected = ((forward(plus) - forward(minus)) * weight).sum() / (2 * h)
    assert abs(grad[where] - expected) <= 1e-3 * (1 + abs(expected)), (where, grad[where], expected)


def test_unsigned_clip_with_a_negative_bound():
  x = np.array([6, 55, 2, 0, 255], np.uint8)
  np.testing.assert_array_equal(Tensor(x).clip(-10, 10).numpy(), np.clip(x.astype(np.int64), -10, 10))


@pytest.mark.parametrize("dtype", [dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.int8, dtypes.int16, dtypes.int32])
def test_integer_comparisons_with_scalars_beyond_the_dtype(dtype):
  """A scalar outside the dtype's range compares as the number it is (tinygrad's weak constants), not wrapped into it."""
  info = np.iinfo(np.dtype(dtype.numpy))
  values = np.array([info.min, 0, 1, info.max], dtype=info.dtype)
  t = Tensor(values)
  for bound in (info.min - 1, info.min - 300, info.max + 1, info.max + 300):
    wide = values.astype(object)
    for ours, theirs in ((t < bound, wide < bound), (t > bound, wide > bound), (t <= bound, wide <= bound), (t >= bound, wide >= bound),
                         (t == bound, wide == bound), (t != bound, wide != bound), (bound < t, bound < wide)):
      np.testing.assert_array_equal(ours.numpy(), theirs.astype(bool), err_msg=f"{dtype} against {bound}")
  np.testing.assert_array_equal(t.clip(info.min - 5, info.max + 5).numpy(), values)


def test_gradient_of_an_element_taken_by_two_indexings():
  """x[4:][-2] reads one element: its gradient reads a 0-d buffer under a condition along the output, which pytc-vectorize
  took for a read with a last index (an IndexError)."""
  x = rng.standard_normal(8).astype(np.float32)
  t = Tensor(x, requires_grad=True)
  out = t[4:][-2] * 0.5
  grad, = out.gradient(t)
  Tensor.realize(out, grad)
  expected = np.zeros(8, np.float32)
  expected[6] = 0.5
  np.testing.assert_array_equal(out.numpy(), x[6] * 0.5)
  np.testing.assert_array_equal(grad.numpy(), expected)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "uint16", "int16", "uint32"])
def test_float_to_narrow_or_unsigned_integers_wraps_alike_everywhere(dtype):
  """A float beyond a narrow or unsigned dtype (-1.0 to uint8) converts through int64 and wraps, in vector code (a kernel
  of many elements) and scalar code (one element) alike, as NumPy does on x86; LLVM's own conversion left it undefined."""
  x = np.array([-1.0, -2.5, 255.9, 256.0, 300.0, -129.0, 127.7, 1e9] * 9, np.float32)
  expected = x.astype(np.int64).astype(dtype)
  np.testing.assert_array_equal(Tensor(x).cast(dtype).numpy(), expected)
  np.testing.assert_array_equal(Tensor(x[:1]).cast(dtype).numpy(), expected[:1])
  np.testing.assert_array_equal((Tensor(x) * 1).cast(dtype).numpy(), expected)


def test_running_statistics_are_computed_from_the_weights_before_the_step():
  """BatchNorm's running-statistics updates are lazy and read the convolution's weights, which the optimizer's step writes
  in place: the optimizer realizes them with its step (as tinygrad does), so they see the weights from before it."""
  from pytc import Context, nn
  rng = np.random.default_rng(0)
  conv, norm = nn.Conv2d(1, 2, 3, bias=False), nn.BatchNorm(2)
  x = rng.standard_normal((4, 1, 6, 6)).astype(np.float32)
  w0 = conv.weight.numpy()
  windows = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))  # (4, 1, 4, 4, 3, 3)
  expected = 0.1 * np.einsum("bchwij,ocij->bohw", windows, w0).mean(axis=(0, 2, 3))
  optimizer = nn.optim.SGD(nn.state.get_parameters([conv, norm]), lr=0.5)
  with Context(TRAINING=1):
    optimizer.zero_grad()
    norm(conv(Tensor(x))).square().sum().backward()
    optimizer.step()
  assert not np.allclose(conv.weight.numpy(), w0)
  np.testing.assert_allclose(norm.running_mean.numpy(), expected, rtol=1e-5, atol=1e-6)
