"""Gradients of normalizations (softmax, log_softmax, layernorm, batchnorm with the batch's statistics) by their closed forms.

Each is a few row reductions of the arriving gradient g and the forward's own values, so g is materialized first: left to
the graph, g (often a matmul's output) would be inlined into every one of those reductions and computed again for each.
The gradient they pass on is materialized too, as the matmuls behind a normalization read it many times each."""
from __future__ import annotations

from typing import TYPE_CHECKING

from pytc.gradient import materialized, ruled

if TYPE_CHECKING:
  from pytc.tensor import Tensor


def softmax_gradient(g: Tensor, inputs: tuple[Tensor, Tensor], params: tuple) -> tuple[Tensor, None]:
  """d/dx of y = softmax(x): y * (g - sum(g * y)) along the axis, in x's dtype."""
  (x, y), (axis,) = inputs, params
  g = materialized(g.cast(y.dtype))
  return (y * (g - (g * y).sum(axis, keepdim=True))).cast(x.dtype).contiguous(), None


def log_softmax_gradient(g: Tensor, inputs: tuple[Tensor, Tensor], params: tuple) -> tuple[Tensor, None]:
  """d/dx of y = log_softmax(x): g - e^y * sum(g) along the axis, in x's dtype."""
  (x, y), (axis,) = inputs, params
  g = materialized(g.cast(y.dtype))
  return (g - y.exp() * g.sum(axis, keepdim=True)).cast(x.dtype).contiguous(), None


def normalized(x: Tensor, centered: Tensor, rstd: Tensor, axes: int | tuple[int, ...]) -> Tensor:
  """centered * rstd, where centered = x - mean(x) and rstd = 1 / sqrt(var + eps) over `axes` (kept as size-1 dims): layernorm
  and batchnorm with the batch's statistics, their gradient to x by normalization_gradient."""
  return ruled(centered * rstd, (x, centered, rstd), normalization_gradient, (axes,))


def normalization_gradient(g: Tensor, inputs: tuple[Tensor, Tensor, Tensor], params: tuple) -> tuple[Tensor, None, None]:
  """d/dx of (x - mean) * rstd: rstd * (g - mean(g) - xhat * mean(g * xhat)) over the axes, xhat the normalized x."""
  (_, centered, rstd), (axes,) = inputs, params
  g, xhat = materialized(g), centered * rstd
  return (rstd * (g - g.mean(axes, keepdim=True) - xhat * (g * xhat).mean(axes, keepdim=True))).contiguous(), None, None
