"""Selection with data-dependent sizes: masked_select and nonzero. Without `size` they read back how many elements
are selected (a realize) to know the output's shape; with `size` they stay lazy, padding or truncating to it."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pytc.arguments import tensor_arg
from pytc.dtype import dtypes

if TYPE_CHECKING:
  from pytc.tensor import Scalar, Tensor


class Selection:
  """The masked_select and nonzero methods of Tensor (mixed into it)."""
  def _selected_positions(self, size: int | None) -> tuple[Tensor, Tensor, int]:
    """For a flat bool tensor: the one-hot over positions of slot s, the (s+1)-th True (none past the count), as (size, n);
    whether each slot is filled; and size (the count of Trues when None)."""
    count = self.sum()
    if size is None: size = int(count.item())
    slots = type(self).arange(size, device=self.device)
    running = self.cumsum()  # running[p]: how many Trues up to and including position p
    return self & (running == slots.unsqueeze(-1) + 1), slots < count, size

  def masked_select(self, mask: Tensor, size: int | None = None, fill_value: Scalar = 0) -> Tensor:
    """The elements of self where mask (broadcast to self's shape) is True, flattened. With `size`, exactly that many:
    cut short, or padded with fill_value (in self's dtype)."""
    if not tensor_arg(mask, "mask").dtype.is_bool: raise RuntimeError(f"masked_select needs a bool mask, got {mask.dtype}")
    picks, filled, size = mask._broadcast_to(self.shape).flatten()._selected_positions(size)
    return filled.where(picks.where(self.flatten(), 0).sum(-1), fill_value).cast(self.dtype)

  def nonzero(self, size: int | None = None, fill_value: Scalar = 0) -> Tensor:
    """The indices (int32) of the nonzero elements in row-major order, one row of self.ndim coordinates each. With `size`,
    exactly that many rows: cut short, or padded with fill_value."""
    if self.ndim == 0: return type(self).zeros(int(bool(self.item())) if size is None else size, 0, dtype=dtypes.int32, device=self.device)
    picks, filled, size = (self != 0).flatten()._selected_positions(size)
    flat = picks.where(type(self).arange(self.numel(), device=self.device), 0).sum(-1)
    coords = type(self).stack(*[flat.idiv(math.prod(self.shape[d + 1:])) % n for d, n in enumerate(self.shape)], dim=-1)
    return filled.unsqueeze(-1).where(coords, fill_value).cast(dtypes.int32)
