"""Tensor methods built from windows of other ops: convolution, pooling, cumulative ops, triangles,
normalization, dropout, attention, losses and einsum."""
from __future__ import annotations

import math
import string
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytc.arguments import calling_op, int_arg, ints_arg, is_int, tensor_arg
from pytc.dtype import DType, dtypes, least_upper_dtype
from pytc.gradient import ruled
from pytc.template import templated
from pytc.window_gradients import conv_gradients, max_pool_gradients, spread, window_gradients

if TYPE_CHECKING:
  from pytc.tensor import Tensor


CUMULATIVE_BLOCK = 256  # cumulative ops over an axis longer than two blocks run in stages (see Functional._cumulative)


def pool_padding(padding: int | Sequence[int], dims: int) -> tuple[tuple[int, int], ...]:
  """(before, after) for each of the last `dims` dims, from an int, one int per dim, or torch's flat order (last dim first)."""
  if is_int(padding): return ((padding, padding),) * dims
  if not isinstance(padding, Sequence) or isinstance(padding, str) or not all(is_int(p) for p in padding):
    raise TypeError(f"{calling_op()}: padding must be an int or a sequence of ints, got {type(padding).__name__} {padding!r}")
  if len(padding) == dims: return tuple((p, p) for p in padding)
  if len(padding) == 2 * dims: return tuple((padding[i], padding[i + 1]) for i in range(2 * dims - 2, -1, -2))
  raise ValueError(f"padding must be an int or a sequence of {dims} or {2 * dims} ints, got {padding}")


def conv_padding(padding: int | Sequence[int] | str, kernel: tuple[int, ...], dilation: int | tuple[int, ...] = 1,
                 stride: int | tuple[int, ...] = 1) -> tuple[tuple[int, int], ...]:
  """pool_padding, or torch's strings: 'valid' (none) and 'same' (stride 1 only; the output keeps the input's size, an odd
  total padding puts the extra element after)."""
  if not isinstance(padding, str): return pool_padding(padding, len(kernel))
  if padding.lower() == "valid": return ((0, 0),) * len(kernel)
  if padding.lower() != "same": raise ValueError(f"padding must be an int, a sequence of ints, 'same' or 'valid', got {padding!r}")
  if any(s != 1 for s in ints_arg(stride, len(kernel), "stride", 1)): raise ValueError(f"padding='same' needs stride 1, got stride={stride}")
  spans = [d * (k - 1) for k, d in zip(kernel, ints_arg(dilation, len(kernel), "dilation", 1))]
  return tuple((span // 2, span - span // 2) for span in spans)


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
    Made of repeat/shrink/reshape only: copies of the dim laid end to end, cut into `kernel` rows whose length is
    dilation more than a multiple of n (so row j starts at element j * dilation) and at least out * stride long;
    the strided columns of the rows are the windows."""
    n = self.shape[dim]
    if (span := dilation * (kernel - 1) + 1) > n:
      raise RuntimeError(f"window of {kernel} (dilation {dilation}) does not fit dim {dim} of size {n}")
    out = (n - span) // stride + 1
    unit = max(n, 1)
    row = unit * max(1, -(-(out * stride - dilation) // unit)) + dilation
    copies = -(-kernel * row // unit)
    x = self.unsqueeze(dim).expand(self.shape[:dim] + (copies, n) + self.shape[dim + 1:]).flatten(dim, dim + 1)
    x = x.shrink(tuple((0, kernel * row) if a == dim else None for a in range(x.ndim))).unflatten(dim, (kernel, row))
    x = x.shrink(tuple((0, out * stride) if a == dim + 1 else None for a in range(x.ndim))).unflatten(dim + 1, (out, stride))
    return x.shrink(tuple((0, 1) if a == dim + 2 else None for a in range(x.ndim))).squeeze(dim + 2)

  @templated
  def _pool(self, kernel: tuple[int, ...], stride: int | tuple[int, ...] = 1, dilation: int | tuple[int, ...] = 1) -> Tensor:
    """Sliding windows over the last len(kernel) dims: (..., out..., kernel...)."""
    n, lead = len(kernel), self.ndim - len(kernel)
    strides, dilations = ints_arg(stride, n, "stride", 1), ints_arg(dilation, n, "dilation", 1)
    x = self
    for axis in reversed(range(n)): x = x._windows(lead + axis, kernel[axis], strides[axis], dilations[axis])
    windows = x.permute(*range(lead), *[lead + 2 * i + 1 for i in range(n)], *[lead + 2 * i for i in range(n)])
    return ruled(windows, (self,), window_gradients, (tuple(kernel), strides, dilations))

  def _pad_last(self, pads: Sequence[tuple[int, int]], value: float = 0.0) -> Tensor:
    """Pad the last len(pads) dims by (before, after) each."""
    return self.pad(((0, 0),) * (self.ndim - len(pads)) + tuple(pads), value=value) if any(p for pair in pads for p in pair) else self

  @templated
  def conv2d(self, weight: Tensor, bias: Tensor | None = None, groups: int = 1, stride=1, dilation=1, padding=0,
             dtype: DType | str | None = None) -> Tensor:
    """A convolution over the dims after (batch, channels); the products are summed as `sum` does (or in `dtype`)."""
    weight, bias, groups = tensor_arg(weight, "weight"), bias if bias is None else tensor_arg(bias, "bias"), int_arg(groups, "groups", 1)
    if self.ndim < 3 or weight.ndim != self.ndim: raise ValueError(f"conv2d of input {self.shape} needs a weight of its rank, got {weight.shape}")
    (batch, channels), (out_channels, group_channels), kernel = self.shape[:2], weight.shape[:2], weight.shape[2:]
    if self.ndim != weight.ndim or groups * group_channels != channels or out_channels % groups:
      raise ValueError(f"conv of input {self.shape} with weight {weight.shape} and groups={groups}: channels do not match")
    pads = conv_padding(padding, kernel, dilation, stride)
    padded = self._pad_last(pads)
    windows = padded._pool(kernel, stride, dilation)  # (batch, channels, out..., kernel...)
    outs, per_group = windows.shape[2:2 + len(kernel)], out_channels // groups
    x = windows.reshape(batch, groups, 1, group_channels, *outs, *kernel)
    w = weight.reshape(1, groups, per_group, group_channels, *[1] * len(outs), *kernel)
    summed = (x * w).sum((3, *range(4 + len(outs), 4 + len(outs) + len(kernel))), dtype=dtype)
    spatial = len(kernel)
    rule = (groups, ints_arg(stride, spatial, "stride", 1), ints_arg(dilation, spatial, "dilation", 1), pads)
    result = ruled(summed.reshape(batch, out_channels, *outs), (self, weight, padded), conv_gradients, rule)
    return result if bias is None else result + bias.reshape(1, -1, *[1] * len(kernel))

  def conv_transpose2d(self, weight: Tensor, bias: Tensor | None = None, groups: int = 1, stride=1, dilation=1, padding=0,
                       output_padding=0) -> Tensor:
    """The gradient of conv2d: zeros between input elements (stride), the flipped kernel, full padding."""
    weight, bias, groups = tensor_arg(weight, "weight"), bias if bias is None else tensor_arg(bias, "bias"), int_arg(groups, "groups", 1)
    kernel, spatial = weight.shape[2:], len(weight.shape[2:])
    strides, dilations = ints_arg(stride, spatial, "stride", 1), ints_arg(dilation, spatial, "dilation", 1)
    extra = ints_arg(output_padding, spatial, "output_padding", 0)
    w = weight.unflatten(0, (groups, -1)).transpose(1, 2).flatten(0, 1).flip(*range(2, 2 + spatial))
    x = self
    for axis, s in enumerate(strides):
      if s > 1:
        dim, n = 2 + axis, x.shape[2 + axis]
        x = spread(x, dim, s).shrink(tuple((0, (n - 1) * s + 1) if a == dim else None for a in range(x.ndim)))
    full = [(d * (k - 1) - b, d * (k - 1) - a + e) for k, d, (b, a), e in zip(kernel, dilations, pool_padding(padding, spatial), extra)]
    x = x.pad(((0, 0), (0, 0), *full))
    return x.conv2d(w, bias, groups=groups, dilation=dilation)

  def _pool_setup(self, kernel_size, stride, dilation, padding, ceil_mode: bool):
    """Kernel, strides, dilations and (before, after) padding of a pooling over the last len(kernel_size) dims (2 for an int).
    With ceil_mode, the padding after each dim grows so that the output size rounds up, less a last window that would
    start in that padding."""
    kernel = ints_arg(kernel_size, 2 if is_int(kernel_size) else len(kernel_size) if isinstance(kernel_size, Sequence) else 0, "kernel_size", 1)
    strides, dilations = ints_arg(kernel if stride is None else stride, len(kernel), "stride", 1), ints_arg(dilation, len(kernel), "dilation", 1)
    pads = pool_padding(padding, len(kernel))
    if not ceil_mode: return kernel, strides, dilations, pads
    grown = []
    for n, (before, after), k, s, d in zip(self.shape[-len(kernel):], pads, kernel, strides, dilations):
      span, total = d * (k - 1) + 1, n + before + after
      out = min(-(-(total - span) // s) + 1, -(-(before + n) // s))
      grown.append((before, after + s * (out - 1) + span - total))
    return kernel, strides, dilations, tuple(grown)

  def max_pool2d(self, kernel_size=(2, 2), stride=None, dilation=1, padding=0, ceil_mode: bool = False,
                 return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """Max over windows of the last len(kernel_size) dims (padding counts as the dtype's minimum). With return_indices, also
    the flat index into those dims of each window's first maximum (int32), as max_unpool2d takes it."""
    kernel, strides, dilations, pads = self._pool_setup(kernel_size, stride, dilation, padding, ceil_mode)
    axes = tuple(range(-len(kernel), 0))
    padded = self._pad_last(pads, self.dtype.min)
    windows = padded._pool(kernel, strides, dilations)
    maxima = windows.max(axes)
    pooled = ruled(maxima, (padded, maxima), max_pool_gradients, (kernel, strides, dilations))
    if not return_indices: return pooled
    spatial = self.shape[-len(kernel):]
    countdown = type(self).arange(math.prod(spatial), 0, -1, device=self.device).reshape(spatial)._pad_last(pads)._pool(kernel, strides, dilations)
    first = (windows == windows.max(axes, keepdim=True)).where(countdown, 0).max(axes)
    return pooled, (math.prod(spatial) - first).cast(dtypes.int32)

  def avg_pool2d(self, kernel_size=(2, 2), stride=None, dilation=1, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> Tensor:
    """Mean over windows of the last len(kernel_size) dims. Padding counts as zeros in the mean when count_include_pad,
    the padding ceil_mode adds never does."""
    kernel, strides, dilations, pads = self._pool_setup(kernel_size, stride, dilation, padding, ceil_mode)
    axes = tuple(range(-len(kernel), 0))
    windows = self._pad_last(pads)._pool(kernel, strides, dilations)
    if count_include_pad and not ceil_mode: return windows.mean(axes)
    ones = type(self).ones(*self.shape[-len(kernel):], dtype=self.dtype if self.dtype.is_float else dtypes.float32, device=self.device)
    if count_include_pad:
      regular = pool_padding(padding, len(kernel))
      ones, pads = ones._pad_last(regular, 1.0), tuple((0, after - regular_after) for (_, after), (_, regular_after) in zip(pads, regular))
    return windows.sum(axes) / ones._pad_last(pads)._pool(kernel, strides, dilations).sum(axes)

  def max_unpool2d(self, indices: Tensor, kernel_size=(2, 2), stride=None, dilation=1, padding=0, output_size=None) -> Tensor:
    """Scatter each value of a max_pool2d output to its index in the pooled dims (zeros elsewhere; values that share an
    index add up). The output size of those dims is output_size's last dims, or what the pooling arguments imply."""
    indices = tensor_arg(indices, "indices")
    batch, channels, *spatial = self.shape
    if output_size is None:
      kernel, strides, dilations, pads = self._pool_setup(ints_arg(kernel_size, len(spatial), "kernel_size", 1), stride, dilation, padding, False)
      output_size = tuple((n - 1) * s - b - a + d * (k - 1) + 1 for n, k, s, d, (b, a) in zip(spatial, kernel, strides, dilations, pads))
    else: output_size = ints_arg(output_size, len(output_size) if isinstance(output_size, Sequence) else 0, "output_size", 0)[-len(spatial):]
    total = math.prod(output_size)
    hits = indices.reshape(batch, channels, 1, -1) == type(self).arange(total, device=self.device).reshape(total, 1)
    return hits.where(self.reshape(batch, channels, 1, -1), 0).sum(3).cast(self.dtype).reshape(batch, channels, *output_size)

  def cumsum(self, axis: int = 0) -> Tensor:
    """Running sum along axis, in the dtype `sum` gives (bool and small ints widen to 32 bits)."""
    return self._cumulative(axis, "add")
  def cumprod(self, axis: int = 0) -> Tensor: return self._cumulative(axis, "mul")
  def cummax(self, axis: int = 0) -> tuple[Tensor, Tensor]:
    """Running max along axis and, as int32, the first index where each running max occurs (NaN is the largest)."""
    values = self._cumulative(axis, "max")
    if self.ndim == 0 or 0 in self.shape: return values, type(self).zeros(self.shape, dtype=dtypes.int32, device=self.device)
    axis = self._axis(axis)
    n, x, running = self.shape[axis], self.transpose(axis, -1).unsqueeze(-1), values.transpose(axis, -1).unsqueeze(-2)
    seen = (x == running) | x.isnan() if self.dtype.is_float else x == running  # seen[..., i, j]: x[i] is the running max at j
    earlier = type(self).ones(n, n, dtype=dtypes.bool, device=self.device).triu()
    countdown = type(self).arange(n, 0, -1, device=self.device).reshape(n, 1)
    first = n - (seen & earlier).where(countdown, 0).max(-2)
    return values, first.cast(dtypes.int32).transpose(axis, -1)
  def cummin(self, axis: int = 0) -> tuple[Tensor, Tensor]:
    values, indices = self._inverse().cummax(axis)
    return values._inverse(), indices
  def logcumsumexp(self, axis: int = 0) -> Tensor:
    """log(cumsum(exp(x))), each output shifted by the running max so that no exp overflows."""
    axis = self._axis(axis)
    if self.ndim == 0 or 0 in self.shape: return self
    x = self._float_cast().transpose(axis, -1)
    n, peak = x.shape[-1], x._cumulative(-1, "max").detach()
    upto = type(self).ones(n, n, dtype=dtypes.bool, device=self.device).tril()
    shifted = upto.where(x.unsqueeze(-2) - peak.unsqueeze(-1), float("-inf"))
    return (shifted.exp().sum(-1).log() + peak).transpose(axis, -1)

  def _cumulative(self, axis: int, kind: str) -> Tensor:
    """Running `kind` ("add", "mul" or "max") along axis. A long axis runs in stages, within blocks of CUMULATIVE_BLOCK
    and then across the block ends, themselves in stages when there are more than two blocks of them, so no output
    reduces a window longer than two blocks (the ends of 100M inputs are not one window each of up to 390K)."""
    axis = self._axis(axis)
    if self.ndim == 0 or 0 in self.shape: return self.cast(self.sum().dtype) if kind == "add" else self
    x, n, identity = self.transpose(axis, -1), self.shape[axis], {"add": 0, "mul": 1, "max": self.dtype.min}[kind]
    if self.dtype.is_bool: identity = bool(identity)  # a bool padding keeps the dtype: cumprod of bool stays bool, as prod
    if n <= 2 * CUMULATIVE_BLOCK: return x._running(kind, identity).transpose(axis, -1)
    lead = ((0, 0),) * (x.ndim - 1)
    blocks = x.pad(lead + ((-n % CUMULATIVE_BLOCK, 0),), value=identity).unflatten(-1, (-1, CUMULATIVE_BLOCK))._running(kind, identity)
    before = blocks[..., -1]._cumulative(-1, kind).pad(lead + ((1, -1),), value=identity).unsqueeze(-1)
    joined = blocks + before if kind == "add" else blocks * before if kind == "mul" else blocks.maximum(before)
    return joined.flatten(-2)[..., -n:].transpose(axis, -1)

  def _running(self, kind: str, identity: float) -> Tensor:
    """Running `kind` along the last axis: output j reduces the window of inputs 0..j (padded in front with identity)."""
    n = self.shape[-1]
    windows = self.pad(((0, 0),) * (self.ndim - 1) + ((n - 1, 0),), value=identity)._pool((n,))
    return {"add": windows.sum, "mul": windows.prod, "max": windows.max}[kind](-1)

  def tril(self, diagonal: int = 0) -> Tensor: return self._triangle(lambda rows, cols: cols <= rows + diagonal)
  def triu(self, diagonal: int = 0) -> Tensor: return self._triangle(lambda rows, cols: cols >= rows + diagonal)
  def _triangle(self, keep) -> Tensor:
    rows, cols = type(self).arange(self.shape[-2], device=self.device).unsqueeze(-1), type(self).arange(self.shape[-1], device=self.device)
    return keep(rows, cols).where(self, 0).cast(self.dtype)

  # *** nn functional ***

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

  @staticmethod
  def einsum(formula: str, *operands: Tensor | Sequence[Tensor], dtype: DType | str | None = None) -> Tensor:
    """Sums of products over labelled dims, e.g. "ij,jk->ik". A label repeated within an operand takes its diagonal; "..."
    stands for the unlabelled dims (aligned from the right across operands); without "->" the output is "..." and then
    the labels used once, sorted. The sum accumulates as `sum` does, or in `dtype`."""
    tensors = [tensor_arg(t, "each operand") for t in (operands[0] if len(operands) == 1 and isinstance(operands[0], list | tuple) else operands)]
    if not isinstance(formula, str): raise TypeError(f"einsum needs a formula string such as 'ij,jk->ik', got {type(formula).__name__} {formula!r}")
    lhs, arrow, output = formula.replace(" ", "").partition("->")
    terms = lhs.split(",")
    if len(terms) != len(tensors): raise ValueError(f"einsum {formula!r} names {len(terms)} operands, got {len(tensors)}")
    if any(term.count("...") > 1 for term in terms + [output]): raise RuntimeError(f"einsum {formula!r}: an operand has more than one '...'")
    spare = [c for c in string.ascii_letters if c not in formula]
    extra = [t.ndim - len(term) + 3 if "..." in term else 0 for term, t in zip(terms, tensors)]
    ellipsis = "".join(spare[:max(extra, default=0)])
    terms = [term.replace("...", ellipsis[len(ellipsis) - n:] if n > 0 else "") for term, n in zip(terms, extra)]
    if not arrow: output = ellipsis + "".join(sorted(c for c in set("".join(terms)) if "".join(terms).count(c) == 1 and c not in ellipsis))
    output = output.replace("...", ellipsis)
    if not all(c.isalpha() for c in "".join(terms) + output): raise RuntimeError(f"einsum {formula!r}: labels must be letters")
    if len(set(output)) != len(output) or set(output) - set("".join(terms)):
      raise RuntimeError(f"einsum {formula!r}: every output label must appear once, and in an operand")
    sizes: dict[str, int] = {}
    for i, (term, t) in enumerate(zip(terms, tensors)):
      if len(term) != t.ndim: raise RuntimeError(f"einsum {formula!r}: operand {i} of shape {t.shape} has {len(term)} labels")
      for c, n in zip(term, t.shape):
        if sizes.setdefault(c, n) != n and 1 not in (n, sizes[c]): raise RuntimeError(f"einsum {formula!r}: label {c!r} has sizes {sizes[c]} and {n}")
        sizes[c] = max(sizes[c], n)
      while repeated := next((c for c in term if term.count(c) > 1), None):
        first, second = term.index(repeated), term.index(repeated, term.index(repeated) + 1)
        if t.shape[first] != t.shape[second]: raise RuntimeError(f"einsum {formula!r}: label {repeated!r} has sizes {t.shape} in operand {i}")
        t, term = t.diagonal(0, first, second), "".join(c for k, c in enumerate(term) if k not in (first, second)) + repeated
      terms[i], tensors[i] = term, t
    letters = sorted(sizes)
    aligned = [t.permute(sorted(range(t.ndim), key=lambda k: term[k])).reshape(tuple(t.shape[term.index(c)] if c in term else 1 for c in letters))
               for term, t in zip(terms, tensors)]
    product = math.prod(aligned[1:], start=aligned[0])
    summed = product.sum(tuple(i for i, c in enumerate(letters) if c not in output), dtype=dtype)
    kept = [c for c in letters if c in output]
    return summed.permute([kept.index(c) for c in output])
