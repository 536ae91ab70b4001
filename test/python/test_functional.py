"""Convolution, pooling, attention, losses, einsum and cumulative ops against NumPy."""
import numpy as np
import pytest

from pytc import GlobalCounters, Tensor

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
