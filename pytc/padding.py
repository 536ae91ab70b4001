"""Padding modes beyond a constant fill: reflect, replicate and circular, made of shrinks, flips, expands and cats."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
  from pytc.tensor import Tensor

PAD_MODES = ("constant", "reflect", "replicate", "circular")


class PaddingModes:
  """The non-constant padding modes of Tensor.pad (mixed into Tensor)."""
  def _along(self, dim: int, bounds: tuple[int, int]) -> Tensor: return self.shrink(tuple(bounds if a == dim else None for a in range(self.ndim)))

  def _pad_mode(self, pairs: list[tuple[int, int]], mode: str) -> Tensor:
    """Pad by (before, after) per dim in `mode`; negative amounts cut. Reflect and replicate pad first and cut after
    (they see the whole input); circular cuts first and wraps what is left, at most once around."""
    if mode not in PAD_MODES: raise NotImplementedError(f"pad mode {mode!r} is not supported, only {', '.join(PAD_MODES)}")
    if mode == "circular":
      x = self.shrink(tuple((max(-b, 0), n + min(a, 0)) for (b, a), n in zip(pairs, self.shape)))
      for dim, (before, after) in enumerate((max(b, 0), max(a, 0)) for b, a in pairs):
        if not before and not after: continue
        n = x.shape[dim]
        if before > n or after > n: raise ValueError(f"circular pad ({before}, {after}) of dim {dim} of size {n} wraps around more than once")
        pieces = [x._along(dim, (n - before, n))] * bool(before) + [x] + [x._along(dim, (0, after))] * bool(after)
        x = pieces[0].cat(*pieces[1:], dim=dim)
      return x
    x = self
    for dim, (before, after) in enumerate((max(b, 0), max(a, 0)) for b, a in pairs):
      if not before and not after: continue
      n = x.shape[dim]
      if mode == "reflect" and (before >= n or after >= n):
        raise ValueError(f"reflect pad ({before}, {after}) of dim {dim} of size {n}: each side must be smaller than the size")
      if n == 0: raise ValueError(f"replicate pad ({before}, {after}) of dim {dim}: the dim is empty")
      if mode == "reflect": head, tail = x._along(dim, (1, before + 1)).flip(dim), x._along(dim, (n - 1 - after, n - 1)).flip(dim)
      else:
        head = x._along(dim, (0, 1)).expand(tuple(before if a == dim else s for a, s in enumerate(x.shape)))
        tail = x._along(dim, (n - 1, n)).expand(tuple(after if a == dim else s for a, s in enumerate(x.shape)))
      pieces = [head] * bool(before) + [x] + [tail] * bool(after)
      x = pieces[0].cat(*pieces[1:], dim=dim)
    return x.shrink(tuple((max(-b, 0), n + min(a, 0)) for (b, a), n in zip(pairs, x.shape)))
