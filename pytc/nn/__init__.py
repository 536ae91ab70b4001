"""Layers, as in tinygrad's nn: each holds its parameters as Tensors and is called on an input."""
from __future__ import annotations

import math

from pytc.dtype import dtypes
from pytc.nn import datasets, optim, state  # noqa: F401  (tinygrad's nn exposes them)
from pytc.processing import conv_padding
from pytc.row_gradients import normalized
from pytc.template import templated
from pytc.tensor import Tensor


class Linear:
  """y = x @ weight.T + bias, weight of shape (out_features, in_features)."""
  def __init__(self, in_features: int, out_features: int, bias: bool = True):
    bound = 1 / math.sqrt(in_features)
    self.weight = Tensor.uniform(out_features, in_features, low=-bound, high=bound)
    self.bias = Tensor.uniform(out_features, low=-bound, high=bound) if bias else None

  def __call__(self, x: Tensor) -> Tensor: return _linear_transposed(x, self.weight, self.bias)


@templated
def _linear_transposed(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
  """x @ weight.T + bias, the transpose recorded with the rest (a graph template)."""
  return x.linear(weight.transpose(), bias)


class LayerNorm:
  """Normalizes over the last len(normalized_shape) dims, then scales and shifts elementwise."""
  def __init__(self, normalized_shape: int | tuple[int, ...], eps: float = 1e-5, elementwise_affine: bool = True):
    self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    self.eps = eps
    self.weight, self.bias = (Tensor.ones(*self.normalized_shape), Tensor.zeros(*self.normalized_shape)) if elementwise_affine else (None, None)

  def __call__(self, x: Tensor) -> Tensor:
    if x.shape[-len(self.normalized_shape):] != self.normalized_shape:
      raise ValueError(f"LayerNorm over {self.normalized_shape} does not fit input of shape {x.shape}")
    x = x.layernorm(axis=tuple(range(-len(self.normalized_shape), 0)), eps=self.eps)
    return x if self.weight is None else x * self.weight + self.bias


def _group_norm(x: Tensor, groups: int, eps: float, weight: Tensor | None, bias: Tensor | None) -> Tensor:
  """x normalized over each of `groups` groups of channels (dim 1) and the dims after them, then x * weight + bias with
  one weight and bias per channel."""
  x = x.reshape(x.shape[0], groups, -1).layernorm(eps=eps).reshape(x.shape)
  if weight is None or bias is None: return x
  shape = (1, -1, *[1] * (x.ndim - 2))
  return x * weight.reshape(shape) + bias.reshape(shape)


class LayerNorm2d(LayerNorm):
  """LayerNorm over the channels of (batch, channels, height, width) input."""
  def __call__(self, x: Tensor) -> Tensor: return super().__call__(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class GroupNorm:
  """Normalizes each of num_groups groups of channels over the group's channels and all other dims but the batch, then
  scales and shifts per channel."""
  def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True):
    if num_channels % num_groups: raise ValueError(f"GroupNorm of {num_channels} channels into {num_groups} groups: the groups must divide them")
    self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
    self.weight, self.bias = (Tensor.ones(num_channels), Tensor.zeros(num_channels)) if affine else (None, None)

  def __call__(self, x: Tensor) -> Tensor:
    return _group_norm(x, self.num_groups, self.eps, self.weight, self.bias)


class InstanceNorm:
  """Normalizes each channel of each sample over its other dims, then scales and shifts per channel."""
  def __init__(self, num_features: int, eps: float = 1e-5, affine: bool = True):
    self.num_features, self.eps = num_features, eps
    self.weight, self.bias = (Tensor.ones(num_features), Tensor.zeros(num_features)) if affine else (None, None)

  def __call__(self, x: Tensor) -> Tensor:
    return _group_norm(x, self.num_features, self.eps, self.weight, self.bias)


class RMSNorm:
  """x / sqrt(mean(x^2) + eps) over the last dim, computed in float32 and cast back, times a weight."""
  def __init__(self, dim: int, eps: float = 1e-6, elementwise_affine: bool = True):
    self.eps = eps
    self.weight = Tensor.ones(dim) if elementwise_affine else None

  def _norm(self, x: Tensor) -> Tensor: return x * (x.square().mean(-1, keepdim=True) + self.eps).rsqrt()

  def __call__(self, x: Tensor) -> Tensor:
    x = self._norm(x.float()).cast(x.dtype)
    return x if self.weight is None else x * self.weight


class Conv2d:
  """A convolution over the dims after (batch, channels), as many as kernel_size has (an int: 2). padding is an int, one
  int per dim, torch's flat (before, after) pairs last dim first, or 'same' (stride 1), kept as the flat pairs."""
  def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, ...], stride=1, padding: int | tuple[int, ...] | str = 0,
               dilation=1, groups: int = 1, bias: bool = True):
    self.kernel_size = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
    if isinstance(padding, str):
      if padding.lower() != "same": raise ValueError(f"Conv2d padding string must be 'same', got {padding!r}")
      padding = tuple(p for pair in reversed(conv_padding(padding, self.kernel_size, dilation, stride)) for p in pair)
    self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
    self.weight, self.bias = self._parameters((out_channels, in_channels // groups), in_channels, out_channels, bias)

  def _parameters(self, channels: tuple[int, int], in_channels: int, out_channels: int, bias: bool) -> tuple[Tensor, Tensor | None]:
    """Weight (channels..., kernel...) and bias, uniform in +-1/sqrt(in_channels * kernel elements)."""
    bound = 1 / math.sqrt(in_channels * math.prod(self.kernel_size))
    weight = Tensor.uniform(*channels, *self.kernel_size, low=-bound, high=bound)
    return weight, Tensor.uniform(out_channels, low=-bound, high=bound) if bias else None

  def __call__(self, x: Tensor) -> Tensor:
    return x.conv2d(self.weight, self.bias, self.groups, self.stride, self.dilation, self.padding)


def Conv1d(in_channels: int, out_channels: int, kernel_size: int, stride=1, padding: int | str = 0, dilation=1, groups: int = 1,
           bias: bool = True) -> Conv2d:
  """A Conv2d over one dim: input (batch, channels, length)."""
  return Conv2d(in_channels, out_channels, (kernel_size,), stride, padding, dilation, groups, bias)


class ConvTranspose2d(Conv2d):
  """The transpose of a Conv2d (its gradient with respect to the input): weight (in_channels, out_channels // groups, kernel...)."""
  def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, ...], stride=1, padding=0, output_padding=0,
               dilation=1, groups: int = 1, bias: bool = True):
    self.kernel_size = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
    self.stride, self.padding, self.output_padding, self.dilation, self.groups = stride, padding, output_padding, dilation, groups
    self.weight, self.bias = self._parameters((in_channels, out_channels // groups), in_channels, out_channels, bias)

  def __call__(self, x: Tensor) -> Tensor:
    return x.conv_transpose2d(self.weight, self.bias, self.groups, self.stride, self.dilation, self.padding, self.output_padding)


def ConvTranspose1d(in_channels: int, out_channels: int, kernel_size: int, stride=1, padding=0, output_padding=0, dilation=1,
                    groups: int = 1, bias: bool = True) -> ConvTranspose2d:
  """A ConvTranspose2d over one dim: input (batch, channels, length)."""
  return ConvTranspose2d(in_channels, out_channels, (kernel_size,), stride, padding, output_padding, dilation, groups, bias)


class BatchNorm:
  """Normalizes each channel (dim 1) over the other dims, then scales and shifts per channel. Uses the batch's statistics
  while Tensor.training (updating the running ones) or when not tracking running statistics, the running ones otherwise."""
  def __init__(self, sz: int, eps: float = 1e-5, affine: bool = True, track_running_stats: bool = True, momentum: float = 0.1):
    self.eps, self.track_running_stats, self.momentum = eps, track_running_stats, momentum
    self.weight, self.bias = (Tensor.ones(sz), Tensor.zeros(sz)) if affine else (None, None)
    self.num_batches_tracked = Tensor.zeros(dtype=dtypes.int64, requires_grad=False)
    if track_running_stats: self.running_mean, self.running_var = Tensor.zeros(sz, requires_grad=False), Tensor.ones(sz, requires_grad=False)

  def calc_stats(self, x: Tensor) -> tuple[Tensor, Tensor]:
    """The mean and (biased) variance per channel that normalize x."""
    if self.track_running_stats and not Tensor.training: return self.running_mean, self.running_var
    axes = tuple(a for a in range(x.ndim) if a != 1)
    mean = x.mean(axes)
    return mean, (x - mean.detach().reshape(1, -1, *[1] * (x.ndim - 2))).square().mean(axes)

  def __call__(self, x: Tensor) -> Tensor:
    mean, var = self.calc_stats(x)
    if self.track_running_stats and Tensor.training:
      count = x.numel() / x.shape[1]
      self.running_mean.assign((1 - self.momentum) * self.running_mean + self.momentum * mean.detach())
      self.running_var.assign((1 - self.momentum) * self.running_var + self.momentum * count / (count - 1) * var.detach())
      self.num_batches_tracked.assign(self.num_batches_tracked + 1)
    invstd = (var + self.eps).rsqrt()
    if self.track_running_stats and not Tensor.training: return x.batchnorm(self.weight, self.bias, mean, invstd)
    channels = (1, -1, *[1] * (x.ndim - 2))  # the batch's statistics: the closed form of the normalization's gradient
    xhat = normalized(x, x - mean.reshape(channels), invstd.reshape(channels), tuple(a for a in range(x.ndim) if a != 1))
    out = xhat if self.weight is None else xhat * self.weight.reshape(channels)
    return out if self.bias is None else out + self.bias.reshape(channels)


BatchNorm2d = BatchNorm3d = BatchNorm


class Embedding:
  """A table of vocab_size vectors of embed_size, looked up by integer index."""
  def __init__(self, vocab_size: int, embed_size: int):
    self.vocab_size, self.embed_size = vocab_size, embed_size
    self.weight = Tensor.glorot_uniform(vocab_size, embed_size)

  def __call__(self, idx: Tensor) -> Tensor:
    if not idx.dtype.is_int: raise TypeError(f"Embedding needs integer indices, got {idx.dtype}")
    return self.weight[idx]


class LSTMCell:
  """One step of an LSTM: (x, (h, c)) -> (h', c'), with gates input, forget, cell and output in that order along the
  weights' first dim, as torch lays them out. hc defaults to zeros."""
  def __init__(self, input_size: int, hidden_size: int, bias: bool = True):
    bound = 1 / math.sqrt(hidden_size)
    self.weight_ih = Tensor.uniform(hidden_size * 4, input_size, low=-bound, high=bound)
    self.weight_hh = Tensor.uniform(hidden_size * 4, hidden_size, low=-bound, high=bound)
    self.bias_ih, self.bias_hh = (Tensor.zeros(hidden_size * 4), Tensor.zeros(hidden_size * 4)) if bias else (None, None)

  def __call__(self, x: Tensor, hc: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
    if hc is None: hc = (Tensor.zeros(x.shape[0], self.weight_hh.shape[1], dtype=x.dtype, buffer=False),) * 2
    gates = x.linear(self.weight_ih.T, self.bias_ih) + hc[0].linear(self.weight_hh.T, self.bias_hh)
    i, f, g, o = gates.chunk(4, dim=1)
    c = f.sigmoid() * hc[1] + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c
