"""Neural-network functions: softmax and its relatives, normalizations, dropout, attention, linear layers, one-hot
encoding, and the losses."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytc.arguments import is_int, tensor_arg
from pytc.dtype import DType, dtypes, least_upper_dtype, to_dtype
from pytc.gradient import ruled
from pytc.row_gradients import log_softmax_gradient, normalized, softmax_gradient
from pytc.template import templated

if TYPE_CHECKING:
  from pytc.tensor import Tensor


def reduced(loss: Tensor, reduction: str) -> Tensor:
  if reduction == "none": return loss
  if reduction == "sum": return loss.sum()
  if reduction == "mean": return loss.mean()
  raise ValueError(f"reduction must be 'none', 'sum' or 'mean', got {reduction!r}")


class NNFunctional:
  """The neural-network methods of Tensor (mixed into it)."""
  def _shifted(self, axis: int, dtype: DType | str | None) -> Tensor:
    """self minus its max along axis (a constant for the gradient), in `dtype` when given."""
    shifted = self - self.max(axis, keepdim=True).detach()
    return shifted if dtype is None else shifted.cast(to_dtype(dtype))

  @templated
  def softmax(self, axis: int = -1, dtype: DType | str | None = None) -> Tensor:
    e = self._shifted(axis, dtype).exp()
    y = e / e.sum(axis, keepdim=True)
    return ruled(y, (self, y), softmax_gradient, (self._axis(axis),))

  @templated
  def log_softmax(self, axis: int = -1, dtype: DType | str | None = None) -> Tensor:
    shifted = self._shifted(axis, dtype)
    y = shifted - shifted.exp().sum(axis, keepdim=True).log()
    return ruled(y, (self, y), log_softmax_gradient, (self._axis(axis),))

  def softmin(self, axis: int = -1, dtype: DType | str | None = None) -> Tensor: return (-self).softmax(axis, dtype)

  @templated
  def layernorm(self, axis: int = -1, eps: float = 1e-5) -> Tensor:
    centered = self - self.mean(axis, keepdim=True)
    rstd = (centered * centered).mean(axis, keepdim=True).add(eps).rsqrt()
    return normalized(self, centered, rstd, axis)

  @templated
  def batchnorm(self, weight: Tensor | None, bias: Tensor | None, mean: Tensor, invstd: Tensor, axis: int | tuple[int, ...] = 1) -> Tensor:
    weight, bias = (None if t is None else tensor_arg(t, name) for t, name in ((weight, "weight"), (bias, "bias")))
    mean, invstd = tensor_arg(mean, "mean"), tensor_arg(invstd, "invstd")
    axes = (axis,) if is_int(axis) else tuple(axis) if isinstance(axis, Sequence) else (axis,)
    shape = tuple(n if i in {self._axis(a) for a in axes} else 1 for i, n in enumerate(self.shape))
    x = self - mean.reshape(shape)
    if weight is not None: x = x * weight.reshape(shape)
    x = x * (invstd.reshape(shape) if invstd.ndim == len(axes) else invstd)
    return x if bias is None else x + bias.reshape(shape)

  def normalize(self, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """self divided by its p-norm along dim (p = 0: the count of nonzeros), at least eps."""
    norm = (self != 0).sum(dim, keepdim=True) if p == 0 else self.abs().pow(p).sum(dim, keepdim=True).pow(1 / p)
    return self / norm.maximum(eps)

  def dropout(self, p: float = 0.5) -> Tensor:
    if not 0 <= p <= 1: raise ValueError(f"dropout probability must be in [0, 1], got {p}")
    if not type(self).training or p == 0: return self
    if p == 1: return self.zeros_like()
    return (type(self).rand(*self.shape, device=self.device, contiguous=False) >= p).where(self, 0) / (1 - p)

  def scaled_dot_product_attention(self, key: Tensor, value: Tensor, attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                   is_causal: bool = False, enable_gqa: bool = False) -> Tensor:
    """softmax(self @ key^T / sqrt(head size) + mask) @ value, the scores computed in float32 or wider. A bool mask keeps
    where True; is_causal masks the upper triangle. With enable_gqa, key and value heads (dim -3) repeat to the query's."""
    key, value = tensor_arg(key, "key"), tensor_arg(value, "value")
    attn_mask = attn_mask if attn_mask is None else tensor_arg(attn_mask, "attn_mask")
    if is_causal and attn_mask is not None: raise RuntimeError("scaled_dot_product_attention takes attn_mask or is_causal=True, not both")
    if enable_gqa:
      if self.ndim < 3 or key.ndim < 3 or value.ndim < 3 or self.shape[-3] % key.shape[-3] or self.shape[-3] % value.shape[-3]:
        raise ValueError(f"enable_gqa needs query heads (dim -3) a multiple of key and value heads, got {self.shape}, {key.shape}, {value.shape}")
      key, value = (t.repeat_interleave(self.shape[-3] // t.shape[-3], dim=t.ndim - 3) for t in (key, value))
    score_dtype = least_upper_dtype(self.dtype, key.dtype, dtypes.float32)
    scores = self.cast(score_dtype) @ key.cast(score_dtype).transpose(-2, -1) * (1 / math.sqrt(self.shape[-1]))
    if is_causal: attn_mask = type(self).ones(self.shape[-2], key.shape[-2], dtype=dtypes.bool, device=self.device).tril()
    if attn_mask is not None:
      scores = attn_mask.where(scores, float("-inf")) if attn_mask.dtype is dtypes.bool else scores + attn_mask
    return scores.cast(self.dtype).softmax(-1).dropout(dropout_p) @ value

  @templated
  def linear(self, weight: Tensor, bias: Tensor | None = None, dtype: DType | str | None = None) -> Tensor:
    """self @ weight + bias (self * weight for a 1-D weight); `dtype` as dot's."""
    weight, bias = tensor_arg(weight, "weight"), bias if bias is None else tensor_arg(bias, "bias")
    x = self * weight if weight.ndim == 1 else self.dot(weight, dtype=dtype)
    return x if bias is None else x + bias

  def sequential(self, ll: list) -> Tensor:
    """Apply each callable of `ll` in turn."""
    x = self
    for layer in ll: x = layer(x)
    return x

  def one_hot(self, num_classes: int) -> Tensor:
    if self.dtype.is_float or self.dtype.is_bool: raise RuntimeError(f"one_hot needs integer class indices, got {self.dtype}")
    if num_classes < 0: raise ValueError(f"one_hot needs num_classes >= 0, got {num_classes}")
    return (self.unsqueeze(-1) == type(self).arange(num_classes, device=self.device)).where(1, 0)

  # *** losses ***

  def cross_entropy(self, Y: Tensor, reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Cross-entropy of logits, (classes) or (batch, classes, ...), against class indices (self's shape less the class
    dim) or class probabilities (self's shape)."""
    if not 0.0 <= label_smoothing <= 1.0: raise ValueError(f"label_smoothing must be in [0, 1], got {label_smoothing}")
    Y, axis = tensor_arg(Y, "Y"), 0 if self.ndim == 1 else 1
    classes = self.shape[axis]
    if Y.shape != self.shape:
      if Y.shape != self.shape[:axis] + self.shape[axis + 1:]:
        raise RuntimeError(f"cross_entropy of logits {self.shape} needs targets of shape {self.shape[:axis] + self.shape[axis + 1:]} "
                           f"(class indices) or {self.shape} (probabilities), got {Y.shape}")
      if Y.dtype.is_float or Y.dtype.is_bool: raise RuntimeError(f"cross_entropy class indices must be integers, got {Y.dtype}")
      Y = Y.unsqueeze(axis) == type(self).arange(classes, device=self.device).reshape((classes,) + (1,) * (self.ndim - axis - 1))
    target = Y * (1 - label_smoothing) + label_smoothing / classes
    return reduced(-(self.log_softmax(axis) * target).sum(axis), reduction)

  @templated
  def sparse_categorical_crossentropy(self, Y: Tensor, ignore_index: int = -1, label_smoothing: float = 0.0,
                                      reduction: str = "mean") -> Tensor:
    """Cross-entropy of logits `self` (..., classes) against integer labels `Y` (...)."""
    if tensor_arg(Y, "Y").shape != self.shape[:-1]: raise ValueError(f"labels of shape {Y.shape} do not match logits of shape {self.shape}")
    log_probs, keep = self.log_softmax(), Y != ignore_index
    target = Y.one_hot(self.shape[-1]).cast(log_probs.dtype) * keep.unsqueeze(-1).cast(log_probs.dtype)
    smoothed = (1 - label_smoothing) * (log_probs * target).sum(-1) + label_smoothing * log_probs.mean(-1) * keep.cast(log_probs.dtype)
    if reduction == "none": return -smoothed
    if reduction == "sum": return -smoothed.sum()
    if reduction != "mean": raise ValueError(f"reduction must be 'none', 'sum' or 'mean', got {reduction!r}")
    return -smoothed.sum() / keep.sum().cast(log_probs.dtype)

  def nll_loss(self, Y: Tensor, weight: Tensor | None = None, ignore_index: int | None = None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of log-probabilities (batch, classes) at class indices Y."""
    Y, weight = tensor_arg(Y, "Y"), weight if weight is None else tensor_arg(weight, "weight")
    keep = Y != ignore_index if ignore_index is not None else type(self).full(Y.shape, True, device=self.device)
    picked = self.gather(1, Y.cast(dtypes.int32).unsqueeze(1)).squeeze(1)
    scale = keep.cast(self.dtype) * (weight[Y] if weight is not None else 1.0)
    if reduction == "mean": return -(picked * scale).sum() / scale.sum()
    return reduced(-(picked * scale), reduction)

  def binary_crossentropy(self, Y: Tensor, reduction: str = "mean") -> Tensor:
    return reduced(-(Y * self.log() + (1 - Y) * (1 - self).log()), reduction)

  def binary_crossentropy_logits(self, Y: Tensor, reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:
    """-(pos_weight * Y * log(sigmoid(x)) + (1 - Y) * log(1 - sigmoid(x))) of logits x, with log(1 + exp(-|x|)) for stability."""
    log_tail = (1 + (-self.abs()).exp()).log()
    if pos_weight is None: return reduced(self.maximum(0) - Y * self + log_tail, reduction)
    return reduced((1 - Y) * self + (1 + (pos_weight - 1) * Y) * (log_tail + (-self).maximum(0)), reduction)
