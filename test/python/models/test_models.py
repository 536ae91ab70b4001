"""Model-shaped graphs, forward, backward and one optimizer step: a ResNet basic block (BatchNorm in training mode, a
strided 1x1 shortcut), a UNet down/up block (GroupNorm, cross-attention, upsampling, a skip concatenation), a pre-norm
transformer block (causal attention, GELU) trained by Adam, an LSTM cell unrolled over steps, pooling and interpolation
at odd sizes, and convolutions with strides, dilations, groups and rectangular kernels.

Each block is written once, from the math, over a backend: `Ours` calls pytc's Tensor methods, `Reference` computes the
same in NumPy (float64). The forward is compared with the reference; the gradients of sum(out * w) are compared with
central finite differences of the reference at sampled elements; the optimizer step is compared with its update rule
applied in NumPy to pytc's (checked) gradients. A representative part runs again on EMU (see the Makefile).
"""
from __future__ import annotations

import numpy as np
import pytest

from pytc import Tensor
from pytc.fuzz import np_conv2d, np_pool
from pytc.nn.optim import SGD, Adam

FORWARD_TOL, GRAD_TOL, FD_SAMPLES = 2e-4, 2e-3, 5


class Ours:
  """The primitives the blocks use, as pytc computes them."""
  @staticmethod
  def conv2d(x, w, stride=1, padding=0, dilation=1, groups=1): return x.conv2d(w, stride=stride, padding=padding, dilation=dilation, groups=groups)
  @staticmethod
  def batchnorm(x, gamma, beta, eps=1e-5):  # training mode: the batch's statistics over (N, H, W)
    mean = x.mean(axis=(0, 2, 3), keepdim=True)
    var = ((x - mean) ** 2).mean(axis=(0, 2, 3), keepdim=True)
    return (x - mean) / (var + eps).sqrt() * gamma.reshape(1, -1, 1, 1) + beta.reshape(1, -1, 1, 1)
  @staticmethod
  def groupnorm(x, groups, gamma, beta, eps=1e-5):
    n, c, h, w = x.shape
    g = x.reshape(n, groups, c // groups * h * w)
    normed = g.layernorm(axis=-1, eps=eps).reshape(n, c, h, w)
    return normed * gamma.reshape(1, -1, 1, 1) + beta.reshape(1, -1, 1, 1)
  @staticmethod
  def layernorm(x, gamma, beta, eps=1e-5): return x.layernorm(eps=eps) * gamma + beta
  @staticmethod
  def linear(x, w, b=None): return x.linear(w.T, b)
  @staticmethod
  def relu(x): return x.relu()
  @staticmethod
  def gelu(x): return x.gelu()
  @staticmethod
  def silu(x): return x.silu()
  @staticmethod
  def sigmoid(x): return x.sigmoid()
  @staticmethod
  def tanh(x): return x.tanh()
  @staticmethod
  def softmax(x, axis=-1): return x.softmax(axis)
  @staticmethod
  def matmul(a, b): return a @ b
  @staticmethod
  def transpose(x, a, b): return x.transpose(a, b)
  @staticmethod
  def reshape(x, *shape): return x.reshape(*shape)
  @staticmethod
  def cat(xs, axis): return xs[0].cat(*xs[1:], dim=axis)
  @staticmethod
  def causal_mask(t): return Tensor.ones(t, t).tril().reshape(1, 1, t, t)
  @staticmethod
  def masked(x, mask): return (mask == 0).where(-1e9, x)
  @staticmethod
  def upsample(x, factor): return x.repeat_interleave(factor, dim=2).repeat_interleave(factor, dim=3)
  @staticmethod
  def max_pool2d(x, kernel, stride, padding=0): return x.max_pool2d(kernel, stride=stride, padding=padding)
  @staticmethod
  def avg_pool2d(x, kernel, stride, padding=0): return x.avg_pool2d(kernel, stride=stride, padding=padding)
  @staticmethod
  def interpolate(x, size, align_corners): return x.interpolate(size, mode="linear", align_corners=align_corners)
  @staticmethod
  def mean(x, axis): return x.mean(axis=axis)


def interpolation_matrix(n: int, m: int, align_corners: bool) -> np.ndarray:
  """Linear interpolation of n samples to m, as a matrix (m, n): pixel centers, or corners aligned."""
  out = np.zeros((m, n))
  for i in range(m):
    src = i * (n - 1) / max(m - 1, 1) if align_corners else min(max((i + 0.5) * n / m - 0.5, 0), n - 1)
    low = int(np.floor(src))
    high, frac = min(low + 1, n - 1), src - low
    out[i, low] += 1 - frac
    out[i, high] += frac
  return out


class Reference:
  """The same primitives in NumPy."""
  conv2d = staticmethod(lambda x, w, stride=1, padding=0, dilation=1, groups=1: np_conv2d(x, w, groups, stride, dilation, padding))
  @staticmethod
  def batchnorm(x, gamma, beta, eps=1e-5):
    mean, var = x.mean(axis=(0, 2, 3), keepdims=True), x.var(axis=(0, 2, 3), keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma.reshape(1, -1, 1, 1) + beta.reshape(1, -1, 1, 1)
  @staticmethod
  def groupnorm(x, groups, gamma, beta, eps=1e-5):
    n, c, h, w = x.shape
    g = x.reshape(n, groups, -1)
    normed = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + eps)).reshape(n, c, h, w)
    return normed * gamma.reshape(1, -1, 1, 1) + beta.reshape(1, -1, 1, 1)
  @staticmethod
  def layernorm(x, gamma, beta, eps=1e-5): return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps) * gamma + beta
  @staticmethod
  def linear(x, w, b=None): return x @ w.T + (0 if b is None else b)
  relu = staticmethod(lambda x: np.maximum(x, 0))
  gelu = staticmethod(lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))))
  sigmoid = staticmethod(lambda x: 1 / (1 + np.exp(-x)))
  silu = staticmethod(lambda x: x / (1 + np.exp(-x)))
  tanh = staticmethod(np.tanh)
  @staticmethod
  def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
  matmul = staticmethod(np.matmul)
  transpose = staticmethod(lambda x, a, b: np.swapaxes(x, a, b))
  reshape = staticmethod(lambda x, *shape: x.reshape(*shape))
  cat = staticmethod(lambda xs, axis: np.concatenate(xs, axis))
  causal_mask = staticmethod(lambda t: np.tril(np.ones((t, t))).reshape(1, 1, t, t))
  masked = staticmethod(lambda x, mask: np.where(mask == 0, -1e9, x))
  upsample = staticmethod(lambda x, factor: x.repeat(factor, axis=2).repeat(factor, axis=3))
  max_pool2d = staticmethod(lambda x, kernel, stride, padding=0: np_pool(x, kernel, stride, padding, "max"))
  avg_pool2d = staticmethod(lambda x, kernel, stride, padding=0: np_pool(x, kernel, stride, padding, "avg"))
  @staticmethod
  def interpolate(x, size, align_corners):
    for axis, m in zip(range(x.ndim - len(size), x.ndim), size):
      x = np.moveaxis(np.tensordot(interpolation_matrix(x.shape[axis], m, align_corners), np.moveaxis(x, axis, 0), 1), 0, axis)
    return x
  mean = staticmethod(lambda x, axis: x.mean(axis=axis))


# *** the blocks: (backend, inputs and parameters by name) -> output ***

def resnet_block(B, p):
  h = B.relu(B.batchnorm(B.conv2d(p["x"], p["w1"], stride=2, padding=1), p["g1"], p["b1"]))
  h = B.batchnorm(B.conv2d(h, p["w2"], padding=1), p["g2"], p["b2"])
  shortcut = B.batchnorm(B.conv2d(p["x"], p["ws"], stride=2), p["gs"], p["bs"])
  return B.relu(h + shortcut)


def attention(B, q, k, v, heads, mask=None):
  n, t, d = q.shape
  s = k.shape[1]
  def split(x, length): return B.transpose(B.reshape(x, n, length, heads, d // heads), 1, 2)
  scores = B.matmul(split(q, t), B.transpose(split(k, s), 2, 3)) * (1 / np.sqrt(d // heads))
  if mask is not None: scores = B.masked(scores, mask)
  return B.reshape(B.transpose(B.matmul(B.softmax(scores), split(v, s)), 1, 2), n, t, d)


def transformer_block(B, p, heads=2):
  x = p["x"]
  t = x.shape[1]
  h = B.layernorm(x, p["ln1_g"], p["ln1_b"])
  q, k, v = B.linear(h, p["wq"]), B.linear(h, p["wk"]), B.linear(h, p["wv"])
  x = x + B.linear(attention(B, q, k, v, heads, B.causal_mask(t)), p["wo"], p["bo"])
  h = B.layernorm(x, p["ln2_g"], p["ln2_b"])
  return x + B.linear(B.gelu(B.linear(h, p["w_up"], p["b_up"])), p["w_down"], p["b_down"])


def unet_block(B, p, groups=2, heads=2):
  x = p["x"]
  skip = B.silu(B.groupnorm(B.conv2d(x, p["w_in"], padding=1), groups, p["gn1_g"], p["gn1_b"]))
  down = B.conv2d(skip, p["w_down"], stride=2, padding=1)
  n, c, h, w = down.shape
  tokens = B.transpose(B.reshape(B.groupnorm(down, groups, p["gn2_g"], p["gn2_b"]), n, c, h * w), 1, 2)
  context = p["context"]
  attended = attention(B, B.linear(tokens, p["wq"]), B.linear(context, p["wk"]), B.linear(context, p["wv"]), heads)
  down = down + B.reshape(B.transpose(B.linear(attended, p["wo"]), 1, 2), n, c, h, w)
  up = B.conv2d(B.upsample(down, 2), p["w_up"], padding=1)
  return B.conv2d(B.cat([up, skip], 1), p["w_out"], padding=1)


def lstm(B, p, steps=3):
  h, c = p["h0"], p["c0"]
  hidden = h.shape[1]
  outputs = []
  for t in range(steps):
    gates = B.linear(p["x"][:, t], p["w_ih"], p["b_ih"]) + B.linear(h, p["w_hh"], p["b_hh"])
    i, f, g, o = (gates[:, k * hidden:(k + 1) * hidden] for k in range(4))
    c = B.sigmoid(f) * c + B.sigmoid(i) * B.tanh(g)
    h = B.sigmoid(o) * B.tanh(c)
    outputs.append(h)
  return B.cat(outputs, 1)


def pooling_and_interpolation(B, p):
  x = p["x"]  # (2, 3, 11, 28)
  pooled = B.max_pool2d(x, 3, 2, 1) + B.avg_pool2d(x, 3, 2, 1)
  resized = B.interpolate(p["volume"], (3, 6, 4), align_corners=False) + B.interpolate(p["volume"], (3, 6, 4), align_corners=True)
  return B.cat([B.reshape(pooled, -1), B.reshape(resized, -1)], 0)


def convolutions(B, p):
  x = p["x"]  # (2, 4, 13, 10)
  a = B.conv2d(x, p["w_strided"], stride=2, padding=1)
  b = B.conv2d(x, p["w_dilated"], dilation=2, padding=2)
  c = B.conv2d(x, p["w_grouped"], groups=2, padding=1)
  d = B.conv2d(x, p["w_depthwise"], groups=4, padding=(1))
  e = B.conv2d(x, p["w_rect"])
  return B.cat([B.reshape(v, -1) for v in (a, b, c, d, e)], 0)


def normal(rng, *shape, scale=1.0): return rng.standard_normal(shape) * scale


def resnet_params(rng):
  return {"x": normal(rng, 2, 4, 9, 9), "w1": normal(rng, 8, 4, 3, 3, scale=0.3), "g1": 1 + normal(rng, 8, scale=0.1),
          "b1": normal(rng, 8, scale=0.1),
          "w2": normal(rng, 8, 8, 3, 3, scale=0.2), "g2": 1 + normal(rng, 8, scale=0.1), "b2": normal(rng, 8, scale=0.1),
          "ws": normal(rng, 8, 4, 1, 1, scale=0.5), "gs": 1 + normal(rng, 8, scale=0.1), "bs": normal(rng, 8, scale=0.1)}


def transformer_params(rng, d=16, t=6):
  return {"x": normal(rng, 2, t, d), "ln1_g": 1 + normal(rng, d, scale=0.1), "ln1_b": normal(rng, d, scale=0.1),
          **{k: normal(rng, d, d, scale=d ** -0.5) for k in ("wq", "wk", "wv", "wo")}, "bo": normal(rng, d, scale=0.1),
          "ln2_g": 1 + normal(rng, d, scale=0.1), "ln2_b": normal(rng, d, scale=0.1), "w_up": normal(rng, 4 * d, d, scale=d ** -0.5),
          "b_up": normal(rng, 4 * d, scale=0.1), "w_down": normal(rng, d, 4 * d, scale=(4 * d) ** -0.5), "b_down": normal(rng, d, scale=0.1)}


def unet_params(rng, c=4):
  return {"x": normal(rng, 1, 3, 8, 8), "w_in": normal(rng, c, 3, 3, 3, scale=0.3), "gn1_g": 1 + normal(rng, c, scale=0.1),
          "gn1_b": normal(rng, c, scale=0.1), "w_down": normal(rng, c, c, 3, 3, scale=0.3), "gn2_g": 1 + normal(rng, c, scale=0.1),
          "gn2_b": normal(rng, c, scale=0.1), "context": normal(rng, 1, 5, 6), "wq": normal(rng, c, c, scale=0.5),
          "wk": normal(rng, c, 6, scale=0.4), "wv": normal(rng, c, 6, scale=0.4), "wo": normal(rng, c, c, scale=0.5),
          "w_up": normal(rng, c, c, 3, 3, scale=0.3), "w_out": normal(rng, 2, 2 * c, 3, 3, scale=0.3)}


def lstm_params(rng, n=2, inputs=5, hidden=4):
  return {"x": normal(rng, n, 3, inputs), "h0": normal(rng, n, hidden, scale=0.5), "c0": normal(rng, n, hidden, scale=0.5),
          "w_ih": normal(rng, 4 * hidden, inputs, scale=0.4), "b_ih": normal(rng, 4 * hidden, scale=0.1),
          "w_hh": normal(rng, 4 * hidden, hidden, scale=0.4), "b_hh": normal(rng, 4 * hidden, scale=0.1)}


def pooling_params(rng): return {"x": normal(rng, 2, 3, 11, 28), "volume": normal(rng, 2, 3, 5, 2, 8)}


def convolution_params(rng):
  return {"x": normal(rng, 2, 4, 13, 10), "w_strided": normal(rng, 6, 4, 3, 3, scale=0.3), "w_dilated": normal(rng, 3, 4, 3, 3, scale=0.3),
          "w_grouped": normal(rng, 6, 2, 3, 3, scale=0.3), "w_depthwise": normal(rng, 4, 1, 3, 3, scale=0.3),
          "w_rect": normal(rng, 5, 4, 5, 2, scale=0.3)}


BLOCKS = {"resnet": (resnet_block, resnet_params), "transformer": (transformer_block, transformer_params), "unet": (unet_block, unet_params),
          "lstm": (lstm, lstm_params), "pooling": (pooling_and_interpolation, pooling_params), "convolutions": (convolutions, convolution_params)}


def run_ours(block, params: dict[str, np.ndarray], weight: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
  tensors = {k: Tensor(v.astype(np.float32), requires_grad=True) for k, v in params.items()}
  out = block(Ours, tensors)
  grads = (out * Tensor(weight.astype(np.float32))).sum().gradient(*tensors.values())
  Tensor.realize(out, *grads)
  return out.numpy(), {k: g.numpy() for k, g in zip(tensors, grads)}


def check_gradients(block, params: dict[str, np.ndarray], weight: np.ndarray, grads: dict[str, np.ndarray], rng) -> None:
  """pytc's gradients against central finite differences of the reference at sampled elements of every input."""
  def loss(values): return float((block(Reference, values) * weight).sum())
  for name, value in params.items():
    for flat in rng.choice(value.size, min(FD_SAMPLES, value.size), replace=False):
      where = np.unravel_index(int(flat), value.shape)
      h = 1e-6 * max(1.0, abs(value[where]))
      plus, minus = value.copy(), value.copy()
      plus[where] += h
      minus[where] -= h
      expected = (loss({**params, name: plus}) - loss({**params, name: minus})) / (2 * h)
      scale = max(1.0, float(np.abs(grads[name]).max()))
      assert abs(grads[name][where] - expected) <= GRAD_TOL * scale, f"d/d{name}{tuple(int(w) for w in where)}: {grads[name][where]}, {expected}"


@pytest.mark.parametrize("name", list(BLOCKS))
def test_block_forward_and_gradients(name):
  block, make = BLOCKS[name]
  rng = np.random.default_rng(sorted(BLOCKS).index(name))
  params = make(rng)
  expected = block(Reference, params)
  weight = rng.standard_normal(expected.shape)
  out, grads = run_ours(block, params, weight)
  np.testing.assert_allclose(out, expected, rtol=FORWARD_TOL, atol=FORWARD_TOL * max(1.0, float(np.abs(expected).max())))
  check_gradients(block, params, weight, grads, rng)


def adam_reference(param, grad, lr, b1, b2, eps, step=1):
  m, v = (1 - b1) * grad, (1 - b2) * grad * grad
  return param - lr * (m / (1 - b1 ** step)) / (np.sqrt(v / (1 - b2 ** step)) + eps)


@pytest.mark.parametrize("name", ["transformer", "resnet", "lstm"])
def test_one_optimizer_step(name):
  """One step of Adam (transformer, LSTM) or SGD with momentum (ResNet) on the block's loss: the updated parameters are the
  update rule applied in NumPy to the gradients (which the test above checks against finite differences)."""
  block, make = BLOCKS[name]
  rng = np.random.default_rng(10 + sorted(BLOCKS).index(name))
  params = make(rng)
  weight = rng.standard_normal(block(Reference, params).shape).astype(np.float32)
  tensors = {k: Tensor(v.astype(np.float32), requires_grad=True) for k, v in params.items()}
  lr = 0.01
  optimizer = SGD(list(tensors.values()), lr=lr, momentum=0.9) if name == "resnet" else Adam(list(tensors.values()), lr=lr)
  Tensor.training = True
  try:
    optimizer.zero_grad()
    (block(Ours, tensors) * Tensor(weight)).sum().backward()
    grads = {k: t.grad.numpy() for k, t in tensors.items()}
    optimizer.step()
  finally: Tensor.training = False
  for k, t in tensors.items():
    before = params[k].astype(np.float32)
    expected = before - lr * grads[k] if name == "resnet" else adam_reference(before, grads[k], lr, 0.9, 0.999, 1e-8)
    np.testing.assert_allclose(t.numpy(), expected, rtol=1e-4, atol=1e-5 * max(1.0, float(np.abs(before).max())), err_msg=k)
