"""Matrix algorithms over the last two dims, built from matmuls."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytc.arguments import int_arg

if TYPE_CHECKING:
  from pytc.tensor import Tensor


class Linalg:
  """The linear-algebra methods of Tensor (mixed into it)."""
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
