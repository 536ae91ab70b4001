"""Tensor methods built from windows of other ops: convolution, pooling, cumulative ops, triangles,
normalization, dropout, attention, losses and einsum."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pytc.dtype import dtypes
from pytc.helpers import per_dim
from pytc.template import templated

if TYPE_CHECKING:
  from pytc.tensor import Tensor


def reduced(loss: Tensor, reduction: str) -> Tensor:
  if reduction == "none": return loss
  if reduction == "sum": return loss.sum()
  if reduction == "mean": return loss.mean()
  raise ValueError(f"reduction must be 'none', 'sum' or 'mean', got {reduction!r}")


class Functional:
  """The convolution, pooling and nn-functional methods of Tensor (mixed into it)."""
  # *** windows, convolution and pooling ***

  def _windows(self, dim: int, kernel: int, stride: int, dilation: int) -> Tensor:
    """Replace dim (size n) by (kernel, out): element (j, o) is self[o * stride + j * dilation] along dim.
    Made of repeat/shrink/reshape only: k copies of the dim laid end to end, cut into rows of n + dilation,
    shift each row by the dilation, so the strided columns are the windows."""
    n = self.shape[dim]
    out = (n - dilation * (kernel - 1) - 1) // stride + 1
    if out <= 0: raise ValueError(f"window of {kernel} (dilation {dilation}) does not fit dim {dim} of size {n}")
    copies = -(-kernel * (n + dilation) // n)
    x = self.unsqueeze(dim).expand(self.shape[:dim] + (copies, n) + self.shape[dim + 1:]).flatten(dim, dim + 1)
    x = x.shrink(tuple((0, kernel * (n + dilation)) if a == dim else None for a in range(x.ndim))).unflatten(dim, (kernel, n + dilation))
    x = x.shrink(tuple((0, out * stride) if a == dim + 1 else None for a in range(x.ndim))).unflatten(dim + 1, (out, stride))
    return x.shrink(tuple((0, 1) if a == dim + 2 else None for a in range(x.ndim))).squeeze(dim + 2)

  @templated
  def _pool(self, kernel: tuple[int, ...], stride: int | tuple[int, ...] = 1, dilation: int | tuple[int, ...] = 1) -> Tensor:
    """Sliding windows over the last len(kernel) dims: (..., out..., kernel...)."""
    n, lead = len(kernel), self.ndim - len(kernel)
    strides, dilations = per_dim(stride, n), per_dim(dilation, n)
    x = self
    for axis in reversed(range(n)): x = x._windows(lead + axis, kernel[axis], strides[axis], dilations[axis])
    return x.permute(*range(lead), *[lead + 2 * i + 1 for i in range(n)], *[lead + 2 * i for i in range(n)])

  def _pad_spatial(self, padding, spatial: int, value: float = 0.0) -> Tensor:
    if isinstance(padding, int): pairs = [(padding, padding)] * spatial
    elif len(padding) == spatial: pairs = [(p, p) for p in padding]
    elif len(padding) == 2 * spatial: pairs = [tuple(padding[i:i + 2]) for i in range(len(padding) - 2, -1, -2)]
    else: raise ValueError(f"padding {padding} does not fit {spatial} spatial dims")
    return self.pad(((0, 0),) * (self.ndim - spatial) + tuple(pairs), value=value) if any(sum(pairs, ())) else self

  @templated
  def conv2d(self, weight: Tensor, bias: Tensor | None = None, groups: int = 1, stride=1, dilation=1, padding=0) -> Tensor:
    (batch, channels), (out_channels, group_channels), kernel = self.shape[:2], weight.shape[:2], weight.shape[2:]
    if self.ndim != weight.ndim or groups * group_channels != channels or out_channels % groups:
      raise ValueError(f"conv of input {self.shape} with weight {weight.shape} and groups={groups}: channels do not match")
    windows = self._pad_spatial(padding, len(kernel))._pool(kernel, stride, dilation)  # (batch, channels, out..., kernel...)
    outs, per_group = windows.shape[2:2 + len(kernel)], out_channels // groups
    x = windows.reshape(batch, groups, 1, group_channels, *outs, *kernel)
    w = weight.reshape(1, groups, per_group, group_channels, *[1] * len(outs), *kernel)
    summed = (x * w).sum((3, *range(4 + len(outs), 4 + len(outs) + len(kernel))))
    result = summed.reshape(batch, out_channels, *outs)
    return result if bias is None else result + bias.reshape(1, -1, *[1] * len(kernel))

  def conv_transpose2d(self, weight: Tensor, bias: Tensor | None = None, groups: int = 1, stride=1, dilation=1, padding=0,
                       output_padding=0) -> Tensor:
    """The gradient of conv2d: zeros between input elements (stride), the flipped kernel, full padding."""
    kernel, spatial = weight.shape[2:], len(weight.shape[2:])
    strides, dilations, pads, extra = (per_dim(v, spatial) for v in (stride, dilation, padding, output_padding))
    w = weight.unflatten(0, (groups, -1)).transpose(1, 2).flatten(0, 1).flip(*range(2, 2 + spatial))
    x = self
    for axis, s in enumerate(strides):
      if s > 1:
        dim, n = 2 + axis, x.shape[2 + axis]
        x = x.unsqueeze(dim + 1).pad(tuple((0, s - 1) if a == dim + 1 else None for a in range(x.ndim + 1))).flatten(dim, dim + 1)
        x = x.shrink(tuple((0, (n - 1) * s + 1) if a == dim else None for a in range(x.ndim)))
    full = [(d * (k - 1) - p, d * (k - 1) - p + e) for k, d, p, e in zip(kernel, dilations, pads, extra)]
    x = x.pad(((0, 0), (0, 0), *full))
    return x.conv2d(w, bias, groups=groups, dilation=dilation)

  def max_pool2d(self, kernel_size=(2, 2), stride=None, dilation=1, padding=0) -> Tensor:
    kernel = per_dim(kernel_size, 2)
    windows = self._pad_spatial(padding, 2, value=float("-inf"))._pool(kernel, kernel if stride is None else stride, dilation)
    return windows.max((-2, -1))

  def avg_pool2d(self, kernel_size=(2, 2), stride=None, dilation=1, padding=0) -> Tensor:
    kernel = per_dim(kernel_size, 2)
    return self._pad_spatial(padding, 2)._pool(kernel, kernel if stride is None else stride, dilation).mean((-2, -1))

  def cumsum(self, axis: int = 0) -> Tensor: return self._cumulative(axis, "add", 0.0)
  def cummax(self, axis: int = 0) -> Tensor: return self._cumulative(axis, "max", float("-inf"))
  def cummin(self, axis: int = 0) -> Tensor: return -((-self).cummax(axis))
  def logcumsumexp(self, axis: int = 0) -> Tensor:
    peak = self.max(axis, keepdim=True)
    return (self - peak).exp().cumsum(axis).log() + peak
  def cumprod(self, axis: int = 0) -> Tensor: return self._cumulative(axis, "mul", 1.0)

  def _cumulative(self, axis: int, kind: str, identity: float) -> Tensor:
    axis = self._axis(axis)
    n = self.shape[axis]
    if n == 0: return self
    moved = self.transpose(axis, -1)
    windows = moved.pad(((0, 0),) * (moved.ndim - 1) + ((n - 1, 0),), value=identity)._pool((n,))
    return windows._reduce(kind, -1, False).transpose(axis, -1)

  def tril(self, diagonal: int = 0) -> Tensor: return self._triangle(lambda rows, cols: cols <= rows + diagonal)
  def triu(self, diagonal: int = 0) -> Tensor: return self._triangle(lambda rows, cols: cols >= rows + diagonal)
  def _triangle(self, keep) -> Tensor:
    rows, cols = type(self).arange(self.shape[-2], device=self.device).unsqueeze(-1), type(self).arange(self.shape[-1], device=self.device)
    return keep(rows, cols).where(self, 0).cast(self.dtype)

  # *** nn functional ***

  def batchnorm(self, weight: Tensor | None, bias: Tensor | None, mean: Tensor, invstd: Tensor, axis: int | tuple[int, ...] = 1) -> Tensor:
    axes = (axis,) if isinstance(axis, int) else axis
    shape = tuple(n if i in {self._axis(a) for a in axes} else 1 for i, n in enumerate(self.shape))
    x = self - mean.reshape(shape)
    if weight is not None: x = x * weight.reshape(shape)
    x = x * (invstd.reshape(shape) if invstd.ndim == len(axes) else invstd)
    return x if bias is None else x + bias.reshape(shape)

  def dropout(self, p: float = 0.5) -> Tensor:
    if not 0 <= p < 1: raise ValueError(f"dropout probability must be in [0, 1), got {p}")
    if not type(self).training or p == 0: return self
    return (type(self).rand(*self.shape, device=self.device) >= p).where(self, 0) * (1 / (1 - p))

  def scaled_dot_product_attention(self, key: Tensor, value: Tensor, attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                   is_causal: bool = False) -> Tensor:
    scores = self @ key.transpose(-2, -1) * (1 / math.sqrt(self.shape[-1]))
    if is_causal: attn_mask = type(self).ones(self.shape[-2], key.shape[-2], dtype=dtypes.bool, device=self.device).tril()
    if attn_mask is not None:
      scores = attn_mask.where(scores, float("-inf")) if attn_mask.dtype is dtypes.bool else scores + attn_mask
    return scores.softmax(-1).dropout(dropout_p) @ value

  def cross_entropy(self, Y: Tensor, reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Cross-entropy of logits (batch, classes, ...) against class indices or class probabilities."""
    target = Y.one_hot(self.shape[1]).transpose(1, -1).cast(self.dtype) if Y.ndim < self.ndim else Y
    target = target * (1 - label_smoothing) + label_smoothing / self.shape[1]
    return reduced(-(self.log_softmax(axis=1) * target).sum(1), reduction)

  def nll_loss(self, Y: Tensor, weight: Tensor | None = None, ignore_index: int | None = None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of log-probabilities (batch, classes) at class indices Y."""
    keep = Y != ignore_index if ignore_index is not None else type(self).full(Y.shape, True, device=self.device)
    picked = self.gather(1, Y.cast(dtypes.int32).unsqueeze(1)).squeeze(1)
    scale = keep.cast(self.dtype) * (weight[Y] if weight is not None else 1.0)
    if reduction == "mean": return -(picked * scale).sum() / scale.sum()
    return reduced(-(picked * scale), reduction)

  def binary_crossentropy(self, Y: Tensor, reduction: str = "mean") -> Tensor:
    return reduced(-(Y * self.log() + (1 - Y) * (1 - self).log()), reduction)

  def binary_crossentropy_logits(self, Y: Tensor, reduction: str = "mean") -> Tensor:
    return reduced(self.maximum(0) - Y * self + (1 + (-self.abs()).exp()).log(), reduction)

  @staticmethod
  def einsum(formula: str, *operands: Tensor) -> Tensor:
    """Sums of products over named axes, e.g. "ij,jk->ik"; every letter of an operand names a distinct axis."""
    inputs, _, output = formula.replace(" ", "").partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands): raise ValueError(f"einsum {formula!r} names {len(terms)} operands, got {len(operands)}")
    if not _: output = "".join(sorted(c for c in set(inputs) - {","} if inputs.count(c) == 1))
    letters = sorted(set(inputs) - {","})
    sizes: dict[str, int] = {}
    aligned = []
    for term, t in zip(terms, operands):
      if len(term) != t.ndim or len(set(term)) != len(term): raise ValueError(f"einsum term {term!r} does not fit shape {t.shape}")
      for c, n in zip(term, t.shape):
        if sizes.setdefault(c, n) != n and 1 not in (n, sizes[c]): raise ValueError(f"einsum axis {c!r} has sizes {sizes[c]} and {n}")
        sizes[c] = max(sizes[c], n)
      ordered = t.permute(*sorted(range(t.ndim), key=lambda i: letters.index(term[i])))
      aligned.append(ordered.reshape(tuple(t.shape[term.index(c)] if c in term else 1 for c in letters)))
    product = aligned[0]
    for t in aligned[1:]: product = product * t
    summed = product.sum(tuple(i for i, c in enumerate(letters) if c not in output)) if set(letters) - set(output) else product
    kept = [c for c in letters if c in output]
    return summed.permute(*[kept.index(c) for c in output]) if kept else summed
