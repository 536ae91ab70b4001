"""Sorting along a dim: sort, argsort and topk, stable (equal elements keep their order), NaN ordered as the largest value."""
from __future__ import annotations

from typing import TYPE_CHECKING

from pytc.dtype import dtypes

if TYPE_CHECKING:
  from pytc.tensor import Tensor


class Sorting:
  """The sorting methods of Tensor (mixed into it)."""
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
