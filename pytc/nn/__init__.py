"""Layers, as in tinygrad's nn: each holds its parameters as Tensors and is called on an input."""
from __future__ import annotations

import math

from pytc.tensor import Tensor


class Linear:
  """y = x @ weight.T + bias, weight of shape (out_features, in_features)."""
  def __init__(self, in_features: int, out_features: int, bias: bool = True):
    bound = 1 / math.sqrt(in_features)
    self.weight = Tensor.uniform(out_features, in_features, low=-bound, high=bound)
    self.bias = Tensor.uniform(out_features, low=-bound, high=bound) if bias else None

  def __call__(self, x: Tensor) -> Tensor: return x.linear(self.weight.transpose(), self.bias)


class LayerNorm:
  def __init__(self, normalized_shape: int | tuple[int, ...], eps: float = 1e-5, elementwise_affine: bool = True):
    self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    self.eps = eps
    self.weight, self.bias = (Tensor.ones(*self.normalized_shape), Tensor.zeros(*self.normalized_shape)) if elementwise_affine else (None, None)

  def __call__(self, x: Tensor) -> Tensor:
    if x.shape[-len(self.normalized_shape):] != self.normalized_shape:
      raise ValueError(f"LayerNorm over {self.normalized_shape} does not fit input of shape {x.shape}")
    x = x.layernorm(axis=tuple(range(-len(self.normalized_shape), 0)), eps=self.eps)
    return x if self.weight is None else x * self.weight + self.bias


class Conv2d:
  def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, int], stride=1, padding=0, dilation=1,
               groups: int = 1, bias: bool = True):
    self.kernel_size = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
    self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
    bound = 1 / math.sqrt(in_channels // groups * math.prod(self.kernel_size))
    self.weight = Tensor.uniform(out_channels, in_channels // groups, *self.kernel_size, low=-bound, high=bound)
    self.bias = Tensor.uniform(out_channels, low=-bound, high=bound) if bias else None

  def __call__(self, x: Tensor) -> Tensor:
    return x.conv2d(self.weight, self.bias, self.groups, self.stride, self.dilation, self.padding)


class BatchNorm:
  """Batch statistics while Tensor.training (updating the running ones), the running statistics otherwise."""
  def __init__(self, size: int, eps: float = 1e-5, affine: bool = True, track_running_stats: bool = True, momentum: float = 0.1):
    self.eps, self.momentum, self.track_running_stats = eps, momentum, track_running_stats
    self.weight, self.bias = (Tensor.ones(size), Tensor.zeros(size)) if affine else (None, None)
    self.running_mean, self.running_var = Tensor.zeros(size, requires_grad=False), Tensor.ones(size, requires_grad=False)
    self.num_batches_tracked = Tensor.zeros(1, requires_grad=False)

  def __call__(self, x: Tensor) -> Tensor:
    axes = tuple(a for a in range(x.ndim) if a != 1)
    if Tensor.training:
      mean = x.mean(axes)
      var = (x - mean.reshape(1, -1, *[1] * (x.ndim - 2))).square().mean(axes)
      if self.track_running_stats:
        count = x.numel() / x.shape[1]
        self.running_mean.assign((1 - self.momentum) * self.running_mean + self.momentum * mean.detach())
        self.running_var.assign((1 - self.momentum) * self.running_var + self.momentum * count / (count - 1) * var.detach())
        self.num_batches_tracked.assign(self.num_batches_tracked + 1)
    else: mean, var = self.running_mean, self.running_var
    return x.batchnorm(self.weight, self.bias, mean, (var + self.eps).rsqrt())


BatchNorm2d = BatchNorm


class Embedding:
  def __init__(self, vocab_size: int, embed_size: int):
    self.vocab_size = vocab_size
    self.weight = Tensor.normal(vocab_size, embed_size)

  def __call__(self, idx: Tensor) -> Tensor: return self.weight[idx]
