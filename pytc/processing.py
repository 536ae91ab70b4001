"""Processing: sliding windows (unfold), convolutions and pooling, resampling (interpolate), and the products of tensors:
dot, matmul, einsum and Newton-Schulz orthogonalization."""
from __future__ import annotations

import math
import string
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytc.arguments import calling_op, int_arg, ints_arg, is_int, tensor_arg
from pytc.dtype import DType, dtypes, least_upper_dtype, to_dtype
from pytc.gradient import ruled
from pytc.template import templated
from pytc.window_gradients import conv_gradients, max_pool_gradients, spread, window_gradients

if TYPE_CHECKING:
  from pytc.tensor import Tensor

INTERPOLATE_MODES = ("linear", "nearest", "nearest-exact")


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


class Processing:
  """The window, convolution, pooling, resampling and product methods of Tensor (mixed into it)."""
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

  def unfold(self, dim: int, size: int, step: int) -> Tensor:
    """Windows of `size` every `step` along dim: dim becomes the window count and a last dim of `size` is added."""
    dim = self._axis(dim)
    if size < 0 or step <= 0: raise RuntimeError(f"unfold needs size >= 0 and step > 0, got size={size} and step={step}")
    return self._windows(dim, size, step, 1).permute(*range(dim), dim + 1, *range(dim + 2, self.ndim + 1), dim)

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

  # *** resampling ***

  def interpolate(self, size: tuple[int, ...], mode: str = "linear", align_corners: bool = False) -> Tensor:
    """Resize the last len(size) dims to `size`, one dim at a time: "linear" (bilinear, trilinear, ... over several dims)
    samples at pixel centers, or at the corners with align_corners; "nearest" takes floor(i * in / out), "nearest-exact"
    floor((i + 0.5) * in / out). The result keeps self's dtype."""
    if not isinstance(size, tuple | list) or not all(isinstance(n, int) for n in size) or not 0 < len(size) <= self.ndim:
      raise ValueError(f"interpolate size must be 1 to {self.ndim} ints for shape {self.shape}, got {size}")
    if mode not in INTERPOLATE_MODES: raise ValueError(f"interpolate mode must be one of {', '.join(INTERPOLATE_MODES)}, got {mode!r}")
    if align_corners and mode != "linear": raise ValueError(f"align_corners needs mode 'linear', got {mode!r}")
    x = self
    for axis in reversed(range(self.ndim - len(size), self.ndim)): x = x._resample_axis(axis, size[axis - self.ndim], mode, align_corners)
    return x.cast(self.dtype)

  def _resample_axis(self, axis: int, m: int, mode: str, align_corners: bool) -> Tensor:
    """Resize dim `axis` to m (gathered along it, in a float dtype for linear mode)."""
    n, out_shape = self.shape[axis], tuple(m if a == axis else s for a, s in enumerate(self.shape))
    along = tuple(m if a == axis else 1 for a in range(self.ndim))
    def picked(index: Tensor) -> Tensor: return self.gather(axis, index.reshape(along).expand(out_shape))
    if mode != "linear":
      position = type(self).arange(m, dtype=dtypes.float32, device=self.device)
      return picked(((position + 0.5 if mode == "nearest-exact" else position) * (n / m)).cast(dtypes.int32))
    position = type(self).arange(m, device=self.device)
    # the source coordinate of output i is num / den, a fraction of ints, so the neighbors and the weight are exact
    num, den = (position * (n - 1), max(m - 1, 1)) if align_corners else ((position * 2 + 1) * n - m, 2 * m)
    num = num.clip(0, (n - 1) * den)
    weight = ((num % den).cast(dtypes.float32) / den).reshape(along).expand(out_shape)
    return picked(num // den).lerp(picked((num + den - 1) // den), weight)

  # *** products ***

  @templated
  def dot(self, w: Tensor, dtype: DType | str | None = None) -> Tensor:
    """Sum of products over self's last dim and w's second-to-last (its only one when 1-D), accumulated as `sum` does
    (or in `dtype`); the result has the operands' common dtype, or `dtype`."""
    w = tensor_arg(w, "the other operand")
    if self.ndim == 0 or w.ndim == 0: raise RuntimeError(f"dot needs at least 1-D tensors, got {self.shape} and {w.shape}")
    axis = -min(w.ndim, 2)
    if self.shape[-1] != w.shape[axis]: raise RuntimeError(f"cannot matmul {self.shape} by {w.shape}: {self.shape[-1]} != {w.shape[axis]}")
    middle = (1,) * min(self.ndim - 1, w.ndim - 1, 1)
    x = self.reshape(self.shape[:-1] + middle + self.shape[-1:])
    w = w.reshape(w.shape[:-2] + middle + w.shape[axis:]).transpose(-1, axis)
    return (x * w).sum(-1, dtype=dtype).cast(least_upper_dtype(x.dtype, w.dtype) if dtype is None else to_dtype(dtype))

  def matmul(self, x: Tensor, reverse: bool = False, dtype: DType | str | None = None) -> Tensor:
    x = tensor_arg(x, "the other operand")
    return x.dot(self, dtype=dtype) if reverse else self.dot(x, dtype=dtype)

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

  def newton_schulz(self, steps: int, params: tuple[float, ...], eps: float = 1.0e-7) -> Tensor:
    """`steps` iterations of G <- sum_i params[i] * (G G^T)^i G from G = self / ||self|| (Frobenius norm, per matrix): with
    params of an odd polynomial like (2, -1.5, 0.5) or Muon's (3.4445, -4.775, 2.0315), G tends to the orthogonal factor
    of self. A tall matrix iterates on its transpose."""
    steps = int_arg(steps, "steps", 0)
    if not isinstance(params, Sequence) or not params or not all(isinstance(p, int | float) for p in params):
      raise TypeError(f"newton_schulz params must be a non-empty sequence of numbers, got {params!r}")
    if self.ndim < 2: raise ValueError(f"newton_schulz needs matrices (2 or more dims), got shape {self.shape}")
    if self.shape[-2] > self.shape[-1]: return self.transpose(-2, -1).newton_schulz(steps, params, eps).transpose(-2, -1)
    g = self / (self.square().sum(axis=(-2, -1), keepdim=True).sqrt() + eps)
    for _ in range(steps):
      gram, term, total = g @ g.transpose(-2, -1), g, params[0] * g
      for coefficient in params[1:]:
        term = gram @ term
        total = total + coefficient * term
      g = total
    return g
