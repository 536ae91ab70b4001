"""Reductions along axes (sum, prod, max, min, mean, var, std, any, all, logsumexp, argmax, argmin), their running forms
along one axis (cumsum, cumprod, cummax, cummin, logcumsumexp), and sorting: sort, argsort and topk, stable (equal elements
keep their order), NaN ordered as the largest value."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytc.dtype import DType, dtypes, sum_dtype, to_dtype
from pytc.template import templated

if TYPE_CHECKING:
  from pytc.tensor import Tensor

CUMULATIVE_BLOCK = 256  # cumulative ops over an axis longer than two blocks run in stages (see Reduce._cumulative)


class Reduce:
  """The reduction, cumulative and sorting methods of Tensor (mixed into it); the reduce op itself is Tensor._reduce."""
  def sum(self, axis: int | Sequence[int] | None = None, keepdim: bool = False, dtype: DType | str | None = None) -> Tensor:
    """Accumulates in `dtype`, else in sum_dtype (bool and small ints in 32 bits; float16 and bfloat16 in float32, cast back)."""
    total = self.cast(sum_dtype(self.dtype) if dtype is None else to_dtype(dtype))._reduce("add", axis, keepdim)
    return total.cast(self.dtype) if dtype is None and (self.dtype in (dtypes.float16, dtypes.bfloat16) or self.dtype.is_fp8) else total
  def prod(self, axis: int | Sequence[int] | None = None, keepdim: bool = False, dtype: DType | str | None = None) -> Tensor:
    return self.cast(self.dtype if dtype is None else to_dtype(dtype))._reduce("mul", axis, keepdim)
  def max(self, axis: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor: return self._reduce("max", axis, keepdim)
  def min(self, axis: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    return self._inverse().max(axis, keepdim)._inverse()
  def _inverse(self) -> Tensor:
    """An order-reversing map that cannot overflow: negation for floats, bitwise not for ints (logical not for bool)."""
    return -self if self.dtype.is_float else ~self
  def any(self, axis: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor: return self.bool().max(axis, keepdim)
  def all(self, axis: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor: return self.bool().prod(axis, keepdim)
  def _reduced_count(self, axis: int | Sequence[int] | None) -> int: return math.prod(self.shape[a] for a in self._reduce_axes(axis))
  def mean(self, axis: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    """In the input's float dtype (float32 for others); nan over no elements."""
    total = self.cast(sum_dtype(self.dtype)).sum(axis, keepdim)
    return total.div(self._reduced_count(axis)).cast(self.dtype if self.dtype.is_float else dtypes.float32)
  def var(self, axis: int | Sequence[int] | None = None, keepdim: bool = False, correction: int = 1) -> Tensor:
    squares = (self - self.mean(axis, keepdim=True)).square()
    total = squares.cast(sum_dtype(squares.dtype)).sum(axis, keepdim)
    return total.div(max(self._reduced_count(axis) - correction, 0)).cast(self.dtype if self.dtype.is_float else dtypes.float32)
  def std(self, axis: int | Sequence[int] | None = None, keepdim: bool = False, correction: int = 1) -> Tensor:
    return self.var(axis, keepdim, correction).sqrt()
  def var_mean(self, axis=None, keepdim: bool = False, correction: int = 1) -> tuple[Tensor, Tensor]:
    return self.var(axis, keepdim, correction), self.mean(axis, keepdim)
  def std_mean(self, axis=None, keepdim: bool = False, correction: int = 1) -> tuple[Tensor, Tensor]:
    return self.std(axis, keepdim, correction), self.mean(axis, keepdim)
  @templated
  def logsumexp(self, axis: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    """log(sum(e^(x - peak))) + peak with peak the max (0 where it is infinite: all -inf gives -inf and any +inf gives +inf)."""
    peak = self.max(axis, keepdim=True).detach()
    peak = peak.isinf().where(0, peak)
    total = (self - peak).exp().sum(axis, keepdim).log()
    return total + (peak if keepdim else peak.reshape(total.shape))
  def argmax(self, axis: int | None = None, keepdim: bool = False) -> Tensor:
    """The first index of the maximum (of the flattened tensor when axis is None), as int32; NaN counts as the maximum."""
    if axis is None: return self.flatten().argmax(0)
    axis = self._axis(axis)
    if self.ndim == 0: return type(self).zeros(dtype=dtypes.int32, device=self.device)
    if (n := self.shape[axis]) == 0: raise IndexError(f"argmax over axis {axis} of shape {self.shape}: the axis is empty")
    countdown = (n - type(self).arange(n, device=self.device)).reshape((n,) + (1,) * (self.ndim - axis - 1))
    hits = self == self.max(axis, keepdim=True)
    if self.dtype.is_float: hits = hits | self.isnan()
    return (n - hits.where(countdown, 0).max(axis, keepdim)).cast(dtypes.int32)
  def argmin(self, axis: int | None = None, keepdim: bool = False) -> Tensor: return self._inverse().argmax(axis, keepdim)

  # *** running along an axis ***

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

  # *** sorting ***

  def _sorted_slots(self, dim: int, descending: bool, count: int) -> tuple[Tensor, Tensor]:
    """The first `count` elements along dim in sorted order and their indices (int32). Each element's rank is the number
    of elements that sort before it (strictly ahead, or equal and earlier); the element of rank p fills slot p."""
    x, n = self.transpose(dim, -1), self.shape[dim]
    mine, other = x.unsqueeze(-1), x.unsqueeze(-2)  # (..., n, 1) and (..., 1, n): element i and element j
    ahead, same = (other > mine) if descending else (other < mine), other == mine
    if self.dtype.is_float:
      mine_nan, other_nan = mine.isnan(), other.isnan()
      ahead = ahead | ((other_nan & mine_nan.logical_not()) if descending else (mine_nan & other_nan.logical_not()))
      same = same | (mine_nan & other_nan)
    order = type(self).arange(n, device=self.device)
    rank = (ahead | (same & (order < order.unsqueeze(-1)))).sum(-1)
    slot = rank.unsqueeze(-2) == type(self).arange(count, device=self.device).unsqueeze(-1)  # (..., count, n): slot p holds element i
    values = slot.where(x.unsqueeze(-2), 0).sum(-1).cast(self.dtype)
    return values.transpose(dim, -1), slot.where(order, 0).sum(-1).cast(dtypes.int32).transpose(dim, -1)

  def sort(self, dim: int = -1, descending: bool = False) -> tuple[Tensor, Tensor]:
    """The values sorted along dim and the indices (int32) they come from. Stable: equal values keep their order,
    ascending or descending; NaN sorts as the largest value."""
    dim = self._axis(dim)
    if self.ndim == 0 or self.shape[dim] <= 1: return self, type(self).zeros(*self.shape, dtype=dtypes.int32, device=self.device)
    return self._sorted_slots(dim, descending, self.shape[dim])

  def argsort(self, dim: int = -1, descending: bool = False) -> Tensor:
    """The indices (int32) that sort self along dim, stable like sort."""
    return self.sort(dim, descending)[1]

  def topk(self, k: int, dim: int = -1, largest: bool = True, sorted_: bool = True) -> tuple[Tensor, Tensor]:
    """The k largest (or smallest) values along dim, in sorted order, and their indices (int32); ties keep their order."""
    if not sorted_: raise NotImplementedError("topk with sorted_=False is not supported")
    dim = self._axis(dim)
    n = self.shape[dim] if self.ndim else 1
    if not 0 <= k <= n: raise ValueError(f"topk of k={k} along dim {dim} of shape {self.shape}: k must be in [0, {n}]")
    if self.ndim == 0 or n <= 1:
      values, indices = self.sort(dim, largest)
      keep = tuple((0, k) if a == dim else None for a in range(self.ndim))
      return values.shrink(keep), indices.shrink(keep)
    return self._sorted_slots(dim, largest, k)
