"""Convolutions, pooling (with ceil_mode, count_include_pad, return_indices, max_unpool2d), unfold, interpolate, padding
modes, inverse trig, sorting, attention keywords, cross_entropy and one_hot against NumPy; gradients against finite
differences."""
import math

import numpy as np
import pytest

from pytc import GlobalCounters, Tensor, dtypes

rng = np.random.default_rng(0)


def np_conv2d(x, w, stride=1, dilation=1, padding=0, groups=1):
  x = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
  (n, _, h, width), (o, group_channels, kh, kw) = x.shape, w.shape
  oh, ow = (h - dilation * (kh - 1) - 1) // stride + 1, (width - dilation * (kw - 1) - 1) // stride + 1
  out, per = np.zeros((n, o, oh, ow)), o // groups
  for g in range(groups):
    for i in range(oh):
      for j in range(ow):
        patch = x[:, g * group_channels:(g + 1) * group_channels, i * stride:i * stride + dilation * (kh - 1) + 1:dilation,
                  j * stride:j * stride + dilation * (kw - 1) + 1:dilation]
        out[:, g * per:(g + 1) * per, i, j] = np.einsum("nchw,ochw->no", patch, w[g * per:(g + 1) * per])
  return out


def np_conv_transpose2d(x, w, stride, padding):
  (n, _, h, width), (_, o, kh, kw) = x.shape, w.shape
  out = np.zeros((n, o, (h - 1) * stride + kh, (width - 1) * stride + kw))
  for i in range(h):
    for j in range(width): out[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw] += np.einsum("nc,cokl->nokl", x[:, :, i, j], w)
  return out[:, :, padding:out.shape[2] - padding, padding:out.shape[3] - padding]


@pytest.mark.parametrize("stride, dilation, padding, groups", [(1, 1, 0, 1), (2, 1, 1, 1), (1, 2, 1, 1), (2, 2, 2, 2), (3, 1, 0, 2)])
def test_conv2d(stride, dilation, padding, groups):
  x, w = rng.standard_normal((2, 4, 9, 8)).astype(np.float32), rng.standard_normal((6, 4 // groups, 3, 3)).astype(np.float32)
  bias = rng.standard_normal(6).astype(np.float32)
  got = Tensor(x).conv2d(Tensor(w), Tensor(bias), groups=groups, stride=stride, dilation=dilation, padding=padding).numpy()
  np.testing.assert_allclose(got, np_conv2d(x, w, stride, dilation, padding, groups) + bias.reshape(1, -1, 1, 1), atol=1e-4)


@pytest.mark.parametrize("stride, padding", [(1, 0), (2, 0), (2, 1)])
def test_conv_transpose2d(stride, padding):
  x, w = rng.standard_normal((1, 3, 4, 5)).astype(np.float32), rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
  np.testing.assert_allclose(Tensor(x).conv_transpose2d(Tensor(w), stride=stride, padding=padding).numpy(),
                             np_conv_transpose2d(x, w, stride, padding), atol=1e-4)


@pytest.mark.parametrize("channels, kernel, stride, dilation, padding, groups, copies", [
  (3, 7, 2, 1, 3, 1, 1),  # an image stem: 3 channels, 7x7 stride 2
  (1, 5, 1, 1, 2, 1, 1),  # one channel
  (8, 3, 1, 2, 2, 2, 1),  # dilated and grouped, 4 channels per group
  (3, 3, 1, 1, 1, 1, 1),
  (64, 3, 1, 1, 1, 1, 0),  # many channels: the windows read through the padding conditions
  (16, 3, 1, 1, 1, 16, 0),  # depthwise: each element read 9 times, too few for a copy
])
def test_convolution_with_few_input_channels_reads_a_padded_copy(channels, kernel, stride, dilation, padding, groups, copies):
  """Integer-valued inputs, so every sum is exact: the values equal NumPy's, with or without the padded copy of the input
  that the schedule adds (one more kernel) for few input channels."""
  x = rng.integers(-3, 4, (2, channels, 20, 18)).astype(np.float32)
  w = rng.integers(-2, 3, (16, channels // groups, kernel, kernel)).astype(np.float32)
  inputs = Tensor(x).realize(), Tensor(w).realize()
  out = inputs[0].conv2d(inputs[1], groups=groups, stride=stride, dilation=dilation, padding=padding)
  GlobalCounters.reset()
  out.realize()
  assert GlobalCounters.kernel_count == 1 + copies
  np.testing.assert_array_equal(out.numpy(), np_conv2d(x, w, stride, dilation, padding, groups))


@pytest.mark.parametrize("batch, hw", [(0, 20), (1, 1), (2, 2)])
def test_few_channel_convolution_of_empty_and_tiny_images(batch, hw):
  """An empty batch, and images smaller than the window (every tap but the centre in the padding), through the padded-copy path."""
  x = rng.integers(-3, 4, (batch, 3, hw, hw)).astype(np.float32)
  w = rng.integers(-2, 3, (16, 3, 7, 7)).astype(np.float32)
  np.testing.assert_array_equal(Tensor(x).conv2d(Tensor(w), padding=3).numpy(), np_conv2d(x, w, 1, 1, 3, 1))


@pytest.mark.parametrize("channels", [8, 64])
def test_residual_blocks_match_numpy(channels):
  """Two residual blocks, relu(conv(x) + x) then conv of that plus it, in integers (exact sums). The first block's output has
  two readers, the second convolution and its residual add: with 64 channels pytc-fuse keeps it (the convolution would
  recompute it in every window, for each block of output channels), with 8 the few-channel path reads a padded copy."""
  x = rng.integers(-2, 3, (2, channels, 9, 7)).astype(np.float32)
  w1, w2 = (rng.integers(-1, 2, (channels, channels, 3, 3)).astype(np.float32) for _ in range(2))
  tx, t1, t2 = Tensor(x).realize(), Tensor(w1).realize(), Tensor(w2).realize()
  first = (tx.conv2d(t1, padding=1) + tx).relu()
  second = first.conv2d(t2, padding=1) + first
  want = np.maximum(np_conv2d(x, w1, padding=1) + x, 0)
  np.testing.assert_array_equal(second.numpy(), np_conv2d(want, w2, padding=1) + want)


def test_conv2d_rejects_mismatched_channels():
  with pytest.raises(ValueError, match="channels do not match"): Tensor.ones(1, 3, 5, 5).conv2d(Tensor.ones(2, 4, 3, 3))


def test_pooling():
  x = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
  np.testing.assert_allclose(Tensor(x).max_pool2d().numpy(), x.reshape(1, 2, 3, 2, 3, 2).max((3, 5)))
  np.testing.assert_allclose(Tensor(x).avg_pool2d().numpy(), x.reshape(1, 2, 3, 2, 3, 2).mean((3, 5)), rtol=1e-6)
  overlapping = Tensor(x).max_pool2d(kernel_size=(3, 3), stride=1, padding=1).numpy()
  padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
  expected = np.stack([padded[..., i:i + 6, j:j + 6] for i in range(3) for j in range(3)]).max(0)
  np.testing.assert_allclose(overlapping, expected)


def test_cumulative_and_triangles():
  a = rng.standard_normal((3, 5)).astype(np.float32)
  np.testing.assert_allclose(Tensor(a).cumsum(1).numpy(), a.cumsum(1), atol=1e-5)
  np.testing.assert_allclose(Tensor(a).cumprod(0).numpy(), a.cumprod(0), atol=1e-5)
  np.testing.assert_array_equal(Tensor(a).tril().numpy(), np.tril(a))
  np.testing.assert_array_equal(Tensor(a).triu(1).numpy(), np.triu(a, 1))


def test_scaled_dot_product_attention():
  q, k, v = [rng.standard_normal((2, 4, 8)).astype(np.float32) for _ in range(3)]
  scores = q @ k.transpose(0, 2, 1) / np.sqrt(8)
  scores = np.where(np.tril(np.ones((4, 4))) > 0, scores, -np.inf)
  e = np.exp(scores - scores.max(-1, keepdims=True))
  got = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), is_causal=True).numpy()
  np.testing.assert_allclose(got, (e / e.sum(-1, keepdims=True)) @ v, atol=1e-5)


@pytest.mark.parametrize("formula, shapes", [("ij,jk->ik", [(3, 5), (5, 3)]), ("bij,bkj->bik", [(2, 4, 8), (2, 4, 8)]), ("ij->", [(3, 5)]),
                                             ("ij->ji", [(3, 5)]), ("i,j->ij", [(3,), (4,)]), ("ij,ij->i", [(2, 3), (2, 3)])])
def test_einsum(formula, shapes):
  arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
  np.testing.assert_allclose(Tensor.einsum(formula, *[Tensor(a) for a in arrays]).numpy(), np.einsum(formula, *arrays), atol=1e-5)


def test_losses():
  logits, labels = rng.standard_normal((4, 3)).astype(np.float32), np.array([0, 2, 1, 1])
  log_softmax = logits - np.log(np.exp(logits).sum(1, keepdims=True))
  np.testing.assert_allclose(Tensor(logits).cross_entropy(Tensor(labels)).numpy(), -log_softmax[np.arange(4), labels].mean(), rtol=1e-6)
  np.testing.assert_allclose(Tensor(logits).sparse_categorical_crossentropy(Tensor(labels)).numpy(),
                             -log_softmax[np.arange(4), labels].mean(), rtol=1e-6)
  p, t = 1 / (1 + np.exp(-logits)), (rng.random((4, 3)) > 0.5).astype(np.float32)
  expected = -(t * np.log(p) + (1 - t) * np.log(1 - p)).mean()
  np.testing.assert_allclose(Tensor(p).binary_crossentropy(Tensor(t)).numpy(), expected, rtol=1e-5)
  np.testing.assert_allclose(Tensor(logits).binary_crossentropy_logits(Tensor(t)).numpy(), expected, rtol=1e-5)
  with pytest.raises(ValueError, match="reduction must be"): Tensor(p).binary_crossentropy(Tensor(t), reduction="avg")


def test_batchnorm_and_dropout():
  x = rng.standard_normal((2, 3, 4)).astype(np.float32)
  mean, invstd, w, b = (rng.standard_normal(3).astype(np.float32) for _ in range(4))
  expected = (x - mean.reshape(1, 3, 1)) * (w * invstd).reshape(1, 3, 1) + b.reshape(1, 3, 1)
  np.testing.assert_allclose(Tensor(x).batchnorm(Tensor(w), Tensor(b), Tensor(mean), Tensor(invstd)).numpy(), expected, rtol=1e-5, atol=1e-6)
  ones = Tensor.ones(1000)
  assert ones.dropout(0.5).numpy().tolist() == [1.0] * 1000  # not training: identity
  Tensor.training = True
  try:
    dropped = ones.dropout(0.5).numpy()
  finally:
    Tensor.training = False
  assert set(np.unique(dropped)) == {0.0, 2.0} and 400 < (dropped == 0).sum() < 600


def test_conv2d_rebuilds_its_recorded_graph_for_new_inputs() -> None:
  """The second call with the same signature replays the first call's graph on the new inputs."""
  from pytc.template import _TEMPLATES
  rng = np.random.default_rng(11)
  results = []
  for _ in range(2):
    x, w, b = (rng.standard_normal(shape).astype(np.float32) for shape in ((2, 3, 6, 5), (4, 3, 3, 3), (4,)))
    results.append((Tensor(x).conv2d(Tensor(w), Tensor(b), padding=1).numpy(), x, w, b))
  assert any(key[0].endswith("conv2d") for key in _TEMPLATES)
  for out, x, w, b in results:
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = np.einsum("ncyxij,ocij->noyx", np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3)), w) + b[None, :, None, None]
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)


def numeric_gradient_check(f, x: np.ndarray, eps: float = 1e-6, atol: float = 1e-5) -> None:
  """d(sum(f(x) * w))/dx from autograd against central differences, in float64."""
  x = x.astype(np.float64)
  w = rng.standard_normal(f(Tensor(x)).shape)
  def scalar(v: np.ndarray) -> float: return float((f(Tensor(v)).numpy() * w).sum())
  t = Tensor(x, requires_grad=True)
  got = (f(t) * Tensor(w)).sum().gradient(t)[0].numpy()
  want = np.zeros_like(x)
  for i in np.ndindex(x.shape):
    step = np.zeros_like(x)
    step[i] = eps
    want[i] = (scalar(x + step) - scalar(x - step)) / (2 * eps)
  np.testing.assert_allclose(got, want, atol=atol, rtol=1e-4)


# *** asin, acos, atan ***

@pytest.mark.parametrize("name", ["asin", "acos"])
def test_asin_acos(name):
  x = np.concatenate([rng.uniform(-1, 1, 50), [-1.0, -0.5, 0.0, 0.5, 1.0]]).astype(np.float32)
  np.testing.assert_allclose(getattr(Tensor(x), name)().numpy(), getattr(np, "arc" + name[1:])(x), atol=2e-6)
  outside = getattr(Tensor([1.5, -2.0, 300.0, math.nan]), name)().numpy()
  assert np.isnan(outside).all()


def test_atan():
  x = np.concatenate([rng.uniform(-3, 3, 50), [0.0, 1.0, -1.0, 300.0, -1e30, 1e30, math.inf, -math.inf]]).astype(np.float32)
  np.testing.assert_allclose(Tensor(x).atan().numpy(), np.arctan(x), atol=2e-6, rtol=1e-6)
  assert np.isnan(Tensor([math.nan]).atan().numpy()).all()


def test_inverse_trig_shapes_and_ints():
  assert Tensor(0.5).asin().shape == () and Tensor.zeros(0, 3).atan().shape == (0, 3)
  np.testing.assert_allclose(Tensor(0.5).acos().numpy(), np.arccos(0.5), atol=1e-6)
  got = Tensor([-1, 0, 1, 2]).atan()
  assert got.dtype == dtypes.float32
  np.testing.assert_allclose(got.numpy(), np.arctan([-1, 0, 1, 2]), atol=1e-6)


@pytest.mark.parametrize("name, low, high", [("asin", -0.95, 0.95), ("acos", -0.95, 0.95), ("atan", -3, 3)])
def test_inverse_trig_gradients(name, low, high):
  x = rng.uniform(low, high, (3, 4))
  numeric_gradient_check(lambda t: getattr(t, name)(), x)
  t = Tensor(x, requires_grad=True)
  d = {"asin": lambda: 1 / np.sqrt(1 - x * x), "acos": lambda: -1 / np.sqrt(1 - x * x), "atan": lambda: 1 / (1 + x * x)}[name]()
  np.testing.assert_allclose(getattr(t, name)().sum().gradient(t)[0].numpy(), d, rtol=1e-5)


# *** sort, argsort, topk ***

def reference_order(row: list, descending: bool) -> list[int]:
  """Stable order, NaN as the largest value (last ascending, first descending)."""
  def key(i):
    v = row[i]
    nan = isinstance(v, float) and math.isnan(v)
    return (not nan, -v if not nan else 0, i) if descending else (nan, v if not nan else 0, i)
  return sorted(range(len(row)), key=key)


def reference_sort(x: np.ndarray, dim: int, descending: bool) -> tuple[np.ndarray, np.ndarray]:
  moved = np.moveaxis(x, dim, -1)
  flat = moved.reshape(-1, moved.shape[-1]) if moved.size else moved.reshape(0, moved.shape[-1])
  order = np.array([reference_order(row.tolist(), descending) for row in flat], dtype=np.int64).reshape(moved.shape)
  values = np.take_along_axis(moved, order, -1)
  return np.moveaxis(values, -1, dim), np.moveaxis(order, -1, dim).astype(np.int32)


@pytest.mark.parametrize("dim", [-1, 0, 1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_floats(dim, descending):
  x = rng.standard_normal((4, 5, 6)).astype(np.float32)
  values, indices = Tensor(x).sort(dim, descending)
  want_values, want_indices = reference_sort(x, dim, descending)
  assert indices.dtype == dtypes.int32
  np.testing.assert_equal(values.numpy(), want_values)
  np.testing.assert_equal(indices.numpy(), want_indices)
  np.testing.assert_equal(Tensor(x).argsort(dim, descending).numpy(), want_indices)


@pytest.mark.parametrize("descending", [False, True])
def test_sort_ties_are_stable(descending):
  x = np.array([[0, 1] * 9, [3, 1, 3, 3, 2, 1, 1, 2, 3] * 2], dtype=np.float32)
  values, indices = Tensor(x).sort(descending=descending)
  want_values, want_indices = reference_sort(x, -1, descending)
  np.testing.assert_equal(values.numpy(), want_values)
  np.testing.assert_equal(indices.numpy(), want_indices)


@pytest.mark.parametrize("descending", [False, True])
def test_sort_nan_and_inf(descending):
  x = np.array([2.0, math.nan, -math.inf, 0.5, math.inf, math.nan, -1.0, 2.0], dtype=np.float32)
  values, indices = Tensor(x).sort(descending=descending)
  want_values, want_indices = reference_sort(x, 0, descending)
  np.testing.assert_equal(values.numpy(), want_values)
  np.testing.assert_equal(indices.numpy(), want_indices)
  if not descending: np.testing.assert_equal(values.numpy(), np.sort(x))


@pytest.mark.parametrize("dtype", [dtypes.int32, dtypes.int8, dtypes.uint8, dtypes.uint32, dtypes.int64, dtypes.bool])
def test_sort_ints(dtype):
  x = rng.integers(0, 2 if dtype is dtypes.bool else 5, (3, 9)).astype(dtype.numpy)
  if dtype in (dtypes.int32, dtypes.int8, dtypes.int64): x[0, :3] = [np.iinfo(x.dtype).min, -3, np.iinfo(x.dtype).max]
  if dtype in (dtypes.uint8, dtypes.uint32): x[0, :2] = [0, np.iinfo(x.dtype).max]
  for descending in (False, True):
    values, indices = Tensor(x).sort(1, descending)
    want_values, want_indices = reference_sort(x, 1, descending)
    assert values.dtype == dtype
    np.testing.assert_equal(values.numpy(), want_values)
    np.testing.assert_equal(indices.numpy(), want_indices)


@pytest.mark.parametrize("shape, dim", [((), 0), ((0,), 0), ((0, 5), 0), ((0, 5), 1), ((1,), 0), ((1, 5), 0), ((5, 1), 1)])
def test_sort_degenerate_shapes(shape, dim):
  x = rng.standard_normal(shape).astype(np.float32)
  values, indices = Tensor(x).sort(dim)
  assert values.shape == indices.shape == x.shape and indices.dtype == dtypes.int32
  np.testing.assert_equal(values.numpy(), np.sort(x, dim) if x.ndim else x)
  np.testing.assert_equal(indices.numpy(), np.argsort(x, dim, kind="stable") if x.ndim else 0)


def test_topk():
  x = rng.standard_normal((5, 6, 4)).astype(np.float32)
  for k, dim, largest in [(3, 0, True), (4, 1, False), (1, -1, True), (0, 1, True), (6, 1, False)]:
    values, indices = Tensor(x).topk(k, dim, largest)
    want_values, want_indices = reference_sort(x, dim, largest)
    np.testing.assert_equal(values.numpy(), np.take(want_values, range(k), dim))
    np.testing.assert_equal(indices.numpy(), np.take(want_indices, range(k), dim))


def test_topk_ties_nan_and_errors():
  values, indices = Tensor([1, 1, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0]).topk(3)
  np.testing.assert_equal(values.numpy(), [1, 1, 1])
  np.testing.assert_equal(indices.numpy(), [0, 1, 3])
  values, indices = Tensor([1, 1, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0]).topk(3, largest=False)
  np.testing.assert_equal(indices.numpy(), [2, 4, 6])
  values, indices = Tensor([1.0, math.nan, 3.0]).topk(2)
  np.testing.assert_equal(values.numpy(), [math.nan, 3.0])
  np.testing.assert_equal(indices.numpy(), [1, 2])
  with pytest.raises(ValueError, match="k=5"): Tensor.ones(4).topk(5)
  with pytest.raises(NotImplementedError): Tensor.ones(4).topk(2, sorted_=False)
  with pytest.raises(IndexError): Tensor.ones(4).sort(1)


def test_sort_gradient():
  x = rng.permutation(24).reshape(2, 3, 4) / 7.0
  numeric_gradient_check(lambda t: t.sort(1)[0], x)
  numeric_gradient_check(lambda t: t.topk(2, -1)[0] * 2, x)


# *** interpolate ***

def reference_coordinates(n: int, m: int, mode: str, align_corners: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """For output i: the two source neighbors and the weight of the second (torch's formulas)."""
  i = np.arange(m)
  if mode == "linear":
    src = i * (n - 1) / (m - 1) if align_corners and m > 1 else np.zeros(m) if align_corners else (i + 0.5) * n / m - 0.5
    src = np.clip(src, 0, n - 1)
    low = np.floor(src).astype(int)
    return low, np.minimum(low + 1, n - 1), src - low
  position = np.arange(m, dtype=np.float32) + (np.float32(0.5) if mode == "nearest-exact" else 0)
  index = np.minimum((position * np.float32(n / m)).astype(int), n - 1)
  return index, index, np.zeros(m)


def reference_interpolate(x: np.ndarray, size: tuple[int, ...], mode: str, align_corners: bool = False) -> np.ndarray:
  out = x.astype(np.float64)
  for axis in range(x.ndim - len(size), x.ndim):
    low, high, weight = reference_coordinates(x.shape[axis], size[axis - x.ndim], mode, align_corners)
    shape = [1] * x.ndim
    shape[axis] = -1
    out = np.take(out, low, axis) * (1 - weight.reshape(shape)) + np.take(out, high, axis) * weight.reshape(shape)
  return out


@pytest.mark.parametrize("mode, align_corners", [("linear", False), ("linear", True), ("nearest", False), ("nearest-exact", False)])
@pytest.mark.parametrize("in_size, out_size", [((7,), (12,)), ((12,), (5,)), ((6, 9), (4, 13)), ((5, 2, 8), (3, 6, 4)), ((4,), (1,)),
                                               ((1, 3), (3, 1))])
def test_interpolate(mode, align_corners, in_size, out_size):
  x = rng.standard_normal((2, 3) + in_size).astype(np.float32)
  got = Tensor(x).interpolate(out_size, mode, align_corners)
  assert got.shape == (2, 3) + out_size and got.dtype == dtypes.float32
  np.testing.assert_allclose(got.numpy(), reference_interpolate(x, out_size, mode, align_corners), atol=1e-5)


def test_interpolate_uint8_and_ints():
  x = rng.integers(0, 256, (1, 2, 12, 9)).astype(np.uint8)
  x[0, 0, 0, :2] = [0, 255]  # neighbors far apart: the fixed-point difference must not wrap
  for mode in ("linear", "nearest", "nearest-exact"):
    got = Tensor(x).interpolate((7, 16), mode)
    assert got.dtype == dtypes.uint8
    want = reference_interpolate(x, (7, 16), mode)
    assert np.abs(got.numpy().astype(np.int64) - np.round(want)).max() <= (1 if mode == "linear" else 0)
  y = rng.integers(-50, 50, (3, 10)).astype(np.int32)
  got = Tensor(y).interpolate((4,), "linear")
  assert got.dtype == dtypes.int32
  np.testing.assert_equal(got.numpy(), np.trunc(reference_interpolate(y, (4,), "linear")).astype(np.int32))


def test_interpolate_errors():
  x = Tensor.ones(1, 1, 4, 4)
  with pytest.raises(ValueError, match="mode"): x.interpolate((2, 2), "cubic")
  with pytest.raises(ValueError, match="align_corners"): x.interpolate((2, 2), "nearest", align_corners=True)
  with pytest.raises(ValueError, match="size"): x.interpolate((2, 2, 2, 2, 2))
  with pytest.raises(ValueError, match="size"): x.interpolate(4)


@pytest.mark.parametrize("align_corners", [False, True])
def test_interpolate_gradient(align_corners):
  numeric_gradient_check(lambda t: t.interpolate((5, 3), align_corners=align_corners), rng.standard_normal((1, 3, 4)))


# *** pad modes ***

NUMPY_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def reference_pad(x: np.ndarray, flat: tuple[int, ...], mode: str) -> np.ndarray:
  pairs = [(0, 0)] * (x.ndim - len(flat) // 2) + [(flat[i], flat[i + 1]) for i in range(len(flat) - 2, -1, -2)]
  if mode == "circular":  # cut first, then wrap
    x = x[tuple(slice(max(-b, 0), n - max(-a, 0)) for (b, a), n in zip(pairs, x.shape))]
    return np.pad(x, [(max(b, 0), max(a, 0)) for b, a in pairs], mode="wrap")
  padded = np.pad(x, [(max(b, 0), max(a, 0)) for b, a in pairs], mode=NUMPY_MODE[mode])
  return padded[tuple(slice(max(-b, 0), n - max(-a, 0)) for (b, a), n in zip(pairs, padded.shape))]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("flat", [(0, 2, 3, 2), (1, 2), (2, 1, 4, 4), (-1, 2, 2, -1), (3, -3, 0, -3), (4, 4, 0, 4), (1, -5, 1, -4), (0, 0, 0, 0)])
def test_pad_modes(mode, flat):
  x = rng.standard_normal((2, 5, 5)).astype(np.float32)
  pairs = [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]
  if mode == "circular" and any(max(b, a) > 5 - max(-b, 0) - max(-a, 0) for b, a in pairs):
    with pytest.raises(ValueError, match="more than once"): Tensor(x).pad(flat, mode=mode)
    return
  got = Tensor(x).pad(flat, mode=mode)
  np.testing.assert_equal(got.numpy(), reference_pad(x, flat, mode))


def test_pad_modes_grouped_ints_and_errors():
  x = np.arange(12, dtype=np.int32).reshape(3, 4)
  np.testing.assert_equal(Tensor(x).pad(((1, 2), None), mode="reflect").numpy(), np.pad(x, ((1, 2), (0, 0)), mode="reflect"))
  np.testing.assert_equal(Tensor(x.astype(np.uint8)).pad((2, 3), mode="replicate").numpy(), np.pad(x, ((0, 0), (2, 3)), mode="edge"))
  np.testing.assert_equal(Tensor(x).pad((10, 9, 0, 30), mode="replicate").numpy(), np.pad(x, ((0, 30), (10, 9)), mode="edge"))
  with pytest.raises(ValueError, match="reflect"): Tensor(x).pad((4, 0), mode="reflect")
  with pytest.raises(ValueError, match="circular"): Tensor(x).pad((0, 5), mode="circular")
  with pytest.raises(NotImplementedError, match="typo"): Tensor(x).pad((1, 0), mode="typo")
  with pytest.raises(ValueError): Tensor(x).pad((2, 0, 2), mode="reflect")


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "constant"])
def test_pad_modes_gradient(mode):
  numeric_gradient_check(lambda t: t.pad((2, 1, -1, 2), mode=mode), rng.standard_normal((4, 3)))


# *** pooling ***

def reference_pool(x: np.ndarray, kernel, stride, dilation, pads, ceil_mode: bool, kind: str, count_include_pad: bool = True):
  """torch's pooling over the last two dims: (values, first-max flat indices) for max, values for avg."""
  spatial = x.shape[-2:]
  outs = []
  for n, k, s, d, (b, a) in zip(spatial, kernel, stride, dilation, pads):
    span = d * (k - 1) + 1
    o = (math.ceil if ceil_mode else math.floor)((n + b + a - span) / s) + 1
    if ceil_mode and (o - 1) * s >= n + b: o -= 1
    outs.append(o)
  values, indices = np.zeros(x.shape[:-2] + tuple(outs)), np.zeros(x.shape[:-2] + tuple(outs), dtype=np.int32)
  for oy, ox in np.ndindex(*outs):
    ys = [oy * stride[0] - pads[0][0] + j * dilation[0] for j in range(kernel[0])]
    xs = [ox * stride[1] - pads[1][0] + j * dilation[1] for j in range(kernel[1])]
    real = [(y, xx) for y in ys for xx in xs if 0 <= y < spatial[0] and 0 <= xx < spatial[1]]
    window = np.stack([x[..., y, xx] for y, xx in real], -1)
    if kind == "max":
      values[..., oy, ox] = window.max(-1)
      first = window.argmax(-1)
      indices[..., oy, ox] = np.array([y * spatial[1] + xx for y, xx in real])[first]
    else:
      inside = [(y, xx) for y in ys for xx in xs if -pads[0][0] <= y < spatial[0] + pads[0][1] and -pads[1][0] <= xx < spatial[1] + pads[1][1]]
      values[..., oy, ox] = window.sum(-1) / (len(inside) if count_include_pad else len(real))
  return (values, indices) if kind == "max" else values


POOL_CASES = [((3, 3), (3, 3), (1, 1), 1, True), ((3, 2), (3, 3), (1, 1), 1, True), ((4, 4), (3, 3), (1, 1), 1, True),
              ((3, 3), (3, 3), (1, 1), 1, False), ((2, 2), (2, 2), (1, 1), 0, True), ((3, 2), (2, 3), (2, 1), (1, 0), True),
              ((2, 2), (1, 1), (1, 1), (0, 1, 1, 0), False), ((2, 3), (3, 2), (1, 2), 1, True)]


@pytest.mark.parametrize("kernel, stride, dilation, padding, ceil_mode", POOL_CASES)
def test_max_pool2d_keywords(kernel, stride, dilation, padding, ceil_mode):
  x = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)
  pads = [(padding, padding)] * 2 if isinstance(padding, int) else [(p, p) for p in padding] if len(padding) == 2 else [padding[2:], padding[:2]]
  values, indices = Tensor(x).max_pool2d(kernel, stride, dilation, padding, ceil_mode=ceil_mode, return_indices=True)
  want_values, want_indices = reference_pool(x, kernel, stride, dilation, pads, ceil_mode, "max")
  assert indices.dtype == dtypes.int32
  np.testing.assert_equal(values.numpy(), want_values)
  np.testing.assert_equal(indices.numpy(), want_indices)
  np.testing.assert_equal(Tensor(x).max_pool2d(kernel, stride, dilation, padding, ceil_mode=ceil_mode).numpy(), want_values)


@pytest.mark.parametrize("kernel, stride, dilation, padding, ceil_mode", POOL_CASES)
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool2d_keywords(kernel, stride, dilation, padding, ceil_mode, count_include_pad):
  x = rng.standard_normal((1, 2, 7, 6)).astype(np.float32)
  pads = [(padding, padding)] * 2 if isinstance(padding, int) else [(p, p) for p in padding] if len(padding) == 2 else [padding[2:], padding[:2]]
  got = Tensor(x).avg_pool2d(kernel, stride, dilation, padding, ceil_mode=ceil_mode, count_include_pad=count_include_pad)
  np.testing.assert_allclose(got.numpy(), reference_pool(x, kernel, stride, dilation, pads, ceil_mode, "avg", count_include_pad), atol=1e-6)


@pytest.mark.parametrize("dtype", [dtypes.int32, dtypes.uint8, dtypes.int8])
def test_max_pool2d_ints_keep_dtype(dtype):
  x = rng.integers(0 if dtype is dtypes.uint8 else -100, 100, (1, 2, 5, 6)).astype(dtype.numpy)
  got = Tensor(x).max_pool2d((2, 2), padding=1)
  assert got.dtype == dtype
  np.testing.assert_equal(got.numpy(), reference_pool(x, (2, 2), (2, 2), (1, 1), [(1, 1)] * 2, False, "max")[0].astype(dtype.numpy))


def test_max_pool_ties_nan_and_3d():
  values, indices = Tensor.ones(1, 1, 4, 4).max_pool2d((3, 3), stride=1, return_indices=True)
  np.testing.assert_equal(indices.numpy(), [[[[0, 1], [4, 5]]]])
  values, indices = Tensor([[[[math.inf, -math.inf, math.nan], [1.0, 2.0, 3.0]]]]).max_pool2d((2, 2), return_indices=True)
  np.testing.assert_equal(values.numpy(), [[[[math.inf]]]])
  np.testing.assert_equal(indices.numpy(), [[[[0]]]])
  x = rng.standard_normal((1, 1, 6, 6, 6)).astype(np.float32)
  got = Tensor(x).avg_pool2d((3, 3, 3), stride=2, padding=1, count_include_pad=False)
  padded, ones = np.pad(x, [(0, 0)] * 2 + [(1, 1)] * 3), np.pad(np.ones_like(x), [(0, 0)] * 2 + [(1, 1)] * 3)
  window = np.lib.stride_tricks.sliding_window_view
  want = window(padded, (3, 3, 3), (2, 3, 4))[..., ::2, ::2, ::2, :, :, :].sum((-3, -2, -1))
  want = want / window(ones, (3, 3, 3), (2, 3, 4))[..., ::2, ::2, ::2, :, :, :].sum((-3, -2, -1))
  np.testing.assert_allclose(got.numpy(), want, atol=1e-6)


@pytest.mark.parametrize("size, kernel, stride, padding, output_size", [((6, 6), (2, 2), None, 0, None), ((7, 7), (3, 3), (2, 3), 1, None),
                                                                        ((13, 14), (3, 3), (6, 7), 1, (13, 14)),
                                                                        ((7, 6), (2, 2), None, 0, (9, 9, 7, 6))])
def test_max_unpool2d(size, kernel, stride, padding, output_size):
  x = rng.standard_normal((2, 3, *size)).astype(np.float32)
  pooled, indices = Tensor(x).max_pool2d(kernel, stride, padding=padding, return_indices=True)
  got = Tensor.max_unpool2d(pooled, indices, kernel, stride, padding=padding, output_size=output_size).numpy()
  want = np.zeros((2, 3, math.prod(size)), np.float32)
  flat_values, flat_indices = pooled.numpy().reshape(2, 3, -1), indices.numpy().reshape(2, 3, -1)
  for b, c, j in np.ndindex(*flat_values.shape): want[b, c, flat_indices[b, c, j]] += flat_values[b, c, j]
  np.testing.assert_equal(got, want.reshape(2, 3, *size))


def test_pool_padding_and_window_errors():
  x = Tensor.ones(1, 1, 6, 7)
  with pytest.raises(ValueError, match="padding"): x.avg_pool2d((2, 2), padding=(1, 1, 1))
  with pytest.raises(ValueError, match="padding"): x.max_pool2d((2, 2), padding=(1, 1, 1))
  with pytest.raises(RuntimeError, match="does not fit"): x.conv2d(Tensor.ones(6, 1, 3, 3), dilation=3)
  with pytest.raises(RuntimeError, match="does not fit"): Tensor.ones(2, 16, 2, 2).conv2d(Tensor.ones(32, 16, 3, 3))
  with pytest.raises(ValueError, match="padding"): Tensor.ones(2, 16, 5, 5).conv2d(Tensor.ones(32, 16, 3, 3), padding=(1, 1, 1))


def test_pool_gradients():
  x = rng.permutation(2 * 6 * 5).reshape(1, 2, 6, 5) / 10.0
  numeric_gradient_check(lambda t: t.max_pool2d((3, 3), stride=2, padding=1, ceil_mode=True), x)
  numeric_gradient_check(lambda t: t.avg_pool2d((3, 2), stride=2, padding=1, ceil_mode=True, count_include_pad=False), x)


# *** unfold ***

@pytest.mark.parametrize("shape, dim, size, step", [((8,), 0, 2, 1), ((8,), 0, 7, 3), ((3, 3, 3), 2, 2, 8), ((3, 3, 3), 1, 0, 8),
                                                    ((2, 3, 5), -1, 2, 2), ((5,), 0, 5, 1), ((4, 6), 0, 1, 3)])
def test_unfold(shape, dim, size, step):
  x = rng.standard_normal(shape).astype(np.float32)
  got = Tensor(x).unfold(dim, size, step)
  axis = dim % x.ndim
  if size: windows = np.lib.stride_tricks.sliding_window_view(x, size, axis=axis)
  else: windows = np.zeros(x.shape[:axis] + (x.shape[axis] + 1,) + x.shape[axis + 1:] + (0,))  # a window of none at every gap
  want = np.take(windows, range(0, windows.shape[axis], step), axis)
  assert got.shape == want.shape
  np.testing.assert_equal(got.numpy(), want)


def test_unfold_errors_and_gradient():
  with pytest.raises(RuntimeError): Tensor.ones(8).unfold(0, 9, 3)
  with pytest.raises(RuntimeError): Tensor.ones(8).unfold(0, 1, -1)
  with pytest.raises(RuntimeError): Tensor.ones(8).unfold(0, -1, 1)
  with pytest.raises(IndexError): Tensor.ones(8).unfold(1, 8, 3)
  numeric_gradient_check(lambda t: t.unfold(1, 3, 2), rng.standard_normal((2, 7)))


# *** attention, losses, one_hot ***

def reference_attention(q, k, v, mask=None):
  scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
  if mask is not None: scores = np.where(mask, scores, -np.inf)
  e = np.exp(scores - scores.max(-1, keepdims=True))
  return (e / e.sum(-1, keepdims=True)) @ v


def test_attention_gqa_and_causal():
  q, k, v = (rng.standard_normal(s).astype(np.float32) for s in [(2, 6, 5, 4), (2, 2, 5, 4), (2, 2, 5, 4)])
  got = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), enable_gqa=True)
  np.testing.assert_allclose(got.numpy(), reference_attention(q, np.repeat(k, 3, 1), np.repeat(v, 3, 1)), atol=1e-5)
  got = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), is_causal=True, enable_gqa=True)
  causal = np.tril(np.ones((5, 5), bool))
  np.testing.assert_allclose(got.numpy(), reference_attention(q, np.repeat(k, 3, 1), np.repeat(v, 3, 1), causal), atol=1e-5)
  with pytest.raises(RuntimeError, match="is_causal"): Tensor(q).scaled_dot_product_attention(Tensor(q), Tensor(q), Tensor(causal), is_causal=True)
  with pytest.raises(ValueError, match="enable_gqa"): Tensor(q[:, :5]).scaled_dot_product_attention(Tensor(k), Tensor(v), enable_gqa=True)


def test_attention_half_scores_in_float32():
  q, k, v = (rng.standard_normal((1, 3, 8)).astype(np.float16) * 4 for _ in range(3))
  got = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v))
  assert got.dtype == dtypes.float16
  np.testing.assert_allclose(got.numpy().astype(np.float32), reference_attention(*(a.astype(np.float32) for a in (q, k, v))), atol=2e-2)


def reference_cross_entropy(x, probs, axis, smoothing=0.0):
  shifted = x - x.max(axis, keepdims=True)
  log_probs = shifted - np.log(np.exp(shifted).sum(axis, keepdims=True))
  target = probs * (1 - smoothing) + smoothing / x.shape[axis]
  return -(log_probs * target).sum(axis)


def test_cross_entropy_probabilities_indices_and_errors():
  x = rng.standard_normal(7).astype(np.float32)
  y = rng.dirichlet(np.ones(7)).astype(np.float32)
  np.testing.assert_allclose(Tensor(x).cross_entropy(Tensor(y)).numpy(), reference_cross_entropy(x, y, 0), rtol=1e-5)
  x = rng.standard_normal((4, 5, 3, 2)).astype(np.float32)
  y = rng.dirichlet(np.ones(5), (4, 3, 2)).transpose(0, 3, 1, 2).astype(np.float32)
  np.testing.assert_allclose(Tensor(x).cross_entropy(Tensor(y), reduction="sum").numpy(), reference_cross_entropy(x, y, 1).sum(), rtol=1e-5)
  labels = rng.integers(0, 5, (4, 3, 2))
  onehot = np.moveaxis(np.eye(5)[labels], -1, 1)
  got = Tensor(x).cross_entropy(Tensor(labels.astype(np.int32)), reduction="none", label_smoothing=0.1).numpy()
  np.testing.assert_allclose(got, reference_cross_entropy(x, onehot, 1, 0.1), rtol=1e-5)
  with pytest.raises(RuntimeError, match="targets"): Tensor.ones(32, 10).cross_entropy(Tensor.ones(32, 1))
  with pytest.raises(ValueError, match="label_smoothing"): Tensor.ones(3, 4).cross_entropy(Tensor([0, 1, 2]), label_smoothing=1.5)
  with pytest.raises(ValueError, match="reduction"): Tensor.ones(3, 4).cross_entropy(Tensor([0, 1, 2]), reduction="typo")
  numeric_gradient_check(lambda t: t.cross_entropy(Tensor(labels[:, 0, 0].astype(np.int32))), x[:, :, 0, 0])


def test_one_hot_errors():
  np.testing.assert_equal(Tensor([1, 2, 4]).one_hot(6).numpy(), np.eye(6, dtype=np.int32)[[1, 2, 4]])
  assert Tensor([1, 2]).one_hot(0).shape == (2, 0)
  with pytest.raises(ValueError, match="num_classes"): Tensor([1, 2, 4]).one_hot(-1)
  with pytest.raises(RuntimeError, match="integer"): Tensor([1.0]).one_hot(3)
  with pytest.raises(RuntimeError, match="integer"): Tensor([True]).one_hot(3)


def test_dropout_all():
  Tensor.training = True
  try: np.testing.assert_equal(Tensor.ones(3, 2).dropout(1.0).numpy(), np.zeros((3, 2)))
  finally: Tensor.training = False
  with pytest.raises(ValueError): Tensor.ones(2).dropout(1.5)


# *** what the ops above needed from the scheduler: empty reshapes, unsigned and bool per-element accumulators ***

def test_empty_reshape_and_reduce():
  np.testing.assert_equal(Tensor.ones(3, 0).contiguous().reshape(0, 3).sum(0).numpy(), np.zeros(3))
  assert Tensor.ones(3, 0).contiguous().expand(2, 3, 0).reshape(3, 2, 0).numpy().shape == (3, 2, 0)


@pytest.mark.parametrize("dtype", [dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.bool])
def test_column_reductions_of_unsigned_and_bool(dtype):
  x = rng.integers(0, 2 if dtype is dtypes.bool else 200, (37, 5)).astype(dtype.numpy)
  np.testing.assert_equal(Tensor(x).sum(0).numpy(), x.sum(0, dtype=np.uint64 if dtype is not dtypes.bool else np.int64))
  np.testing.assert_equal(Tensor(x).max(0).numpy(), x.max(0))
