"""Tensor indexing: NumPy-style `t[...]`, assignment into a region, gather, scatter and masked_fill."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from pytc.dtype import dtypes

if TYPE_CHECKING:
  from pytc.tensor import Scalar, Tensor


class Indexing:
  """The indexing methods of Tensor (mixed into it)."""
  def __getitem__(self, indices) -> Tensor:
    """NumPy-style indexing: ints, slices (any step), None, ..., and integer Tensors (gathered with one-hot sums;
    several Tensor indices must sit on adjacent dims and broadcast together)."""
    indices = list(indices) if isinstance(indices, tuple) else [indices]
    if sum(i is Ellipsis for i in indices) > 1: raise IndexError("an index can only have one ellipsis")
    consumed = sum(1 for i in indices if i is not None and i is not Ellipsis)
    if consumed > self.ndim: raise IndexError(f"too many indices ({consumed}) for shape {self.shape}")
    at = next((k for k, i in enumerate(indices) if i is Ellipsis), len(indices))
    indices[at:at + 1] = [slice(None)] * (self.ndim - consumed)
    x, dim, tensor_dims = self, 0, []
    for index in indices:
      if index is None:
        x, dim = x.unsqueeze(dim), dim + 1
      elif isinstance(index, type(self)):
        tensor_dims.append((dim, index))
        dim += 1
      elif isinstance(index, slice): x, dim = x._slice(dim, index), dim + 1
      elif isinstance(index, int | np.integer):
        n = x.shape[dim]
        if not -n <= index < n: raise IndexError(f"index {index} is out of range for dim {dim} of size {n}")
        x = x.shrink(tuple((index % n, index % n + 1) if a == dim else None for a in range(x.ndim))).squeeze(dim)
      else: raise IndexError(f"cannot index with {type(index).__name__}")
    return x._gather_dims(tensor_dims) if tensor_dims else x

  def _slice(self, dim: int, index: slice) -> Tensor:
    start, stop, step = index.indices(self.shape[dim])
    x = self
    if step < 0:
      x = x.flip(dim)
      n = self.shape[dim]
      start, stop, step = n - 1 - start, n - 1 - stop, -step
    count = max(0, -(-(stop - start) // step))
    x = x.shrink(tuple((start, start + (count - 1) * step + 1 if count else start) if a == dim else None for a in range(x.ndim)))
    if step == 1 or count <= 1: return x
    padded = x.pad(tuple((0, count * step - x.shape[dim]) if a == dim else None for a in range(x.ndim)))
    split = padded.reshape(x.shape[:dim] + (count, step) + x.shape[dim + 1:])
    return split.shrink(tuple((0, 1) if a == dim + 1 else None for a in range(split.ndim))).reshape(x.shape[:dim] + (count,) + x.shape[dim + 1:])

  def _gather_dims(self, tensor_dims: list[tuple[int, Tensor]]) -> Tensor:
    dims = [d for d, _ in tensor_dims]
    if dims != list(range(dims[0], dims[0] + len(dims))): raise IndexError("Tensor indices must be on adjacent dims")
    sizes = [self.shape[d] for d in dims]
    flat = None
    for (_, index), n in zip(tensor_dims, sizes):
      if index.dtype.is_float: raise IndexError(f"Tensor indices must be integers, got {index.dtype}")
      wrapped = (index < 0).where(index + n, index).cast(dtypes.int32)
      flat = wrapped if flat is None else flat * n + wrapped
    first, total = dims[0], math.prod(sizes)
    x = self.reshape(self.shape[:first] + (total,) + self.shape[first + len(dims):])
    pre, post, batch = x.shape[:first], x.shape[first + 1:], flat.shape
    onehot = flat.unsqueeze(-1) == type(self).arange(total, device=self.device)
    onehot = onehot.reshape((1,) * len(pre) + batch + (total,) + (1,) * len(post))
    spread = x.reshape(pre + (1,) * len(batch) + (total,) + post)
    return onehot.where(spread, 0).sum(len(pre) + len(batch)).cast(self.dtype)

  def gather(self, dim: int, index: Tensor) -> Tensor:
    """out[i][j] = self[index[i][j]][j] for dim 0 (and so on): index has self's rank and fits inside it elsewhere."""
    dim = self._axis(dim)
    if index.ndim != self.ndim or any(a > b for i, (a, b) in enumerate(zip(index.shape, self.shape)) if i != dim):
      raise ValueError(f"gather index of shape {index.shape} does not fit {self.shape} off dim {dim}")
    n = self.shape[dim]
    inside = self.shrink(tuple(None if i == dim else (0, s) for i, s in enumerate(index.shape)))
    spread = inside.unsqueeze(-1).transpose(dim, -1).expand(index.shape + (n,))
    return (index.unsqueeze(-1) == type(self).arange(n, device=self.device)).where(spread, 0).sum(-1).cast(self.dtype)

  def scatter(self, dim: int, index: Tensor, src: Tensor | Scalar) -> Tensor:
    """A copy with self[index[i][j]][j] = src[i][j] for dim 0 (and so on)."""
    dim = self._axis(dim)
    if index.ndim != self.ndim: raise ValueError(f"scatter index of rank {index.ndim} does not match rank {self.ndim}")
    src = src if isinstance(src, type(self)) else type(self).full(index.shape, src, dtype=self.dtype, device=self.device)
    src = src.shrink(tuple((0, s) for s in index.shape))
    n = self.shape[dim]
    hits = (index.unsqueeze(-1) == type(self).arange(n, device=self.device)).transpose(dim, -1)
    values = hits.where(src.unsqueeze(-1).transpose(dim, -1), 0).sum(-1).cast(self.dtype)
    covered = hits.any(-1)
    padding = tuple((0, 0) if i == dim else (0, s - t) for i, (s, t) in enumerate(zip(self.shape, covered.shape)))
    return covered.pad(padding).where(values.pad(padding), self)

  def masked_fill(self, mask: Tensor, value: Scalar) -> Tensor: return mask.where(value, self)

  def __setitem__(self, indices, value: Tensor | Scalar) -> None:
    """Assign `value` into the region of ints and step-1 slices `indices` selects."""
    indices = indices if isinstance(indices, tuple) else (indices,)
    if len(indices) > self.ndim: raise IndexError(f"too many indices ({len(indices)}) for shape {self.shape}")
    bounds = []
    for index, n in zip(indices + (slice(None),) * (self.ndim - len(indices)), self.shape):
      if isinstance(index, int | np.integer):
        if not -n <= index < n: raise IndexError(f"index {index} is out of range for size {n}")
        bounds.append((index % n, index % n + 1))
      elif isinstance(index, slice) and index.indices(n)[2] == 1: bounds.append(index.indices(n)[:2])
      else: raise IndexError(f"assignment supports ints and step-1 slices, not {index!r}")
    region = tuple(max(0, b - a) for a, b in bounds)
    padding = tuple((a, n - a - r) for (a, _), r, n in zip(bounds, region, self.shape))
    squeezed = tuple(r for r, index in zip(region, indices) if not isinstance(index, int | np.integer)) + region[len(indices):]
    value = value if isinstance(value, type(self)) else type(self).full(squeezed, value, dtype=self.dtype, device=self.device)
    value = value.cast(self.dtype)._broadcast_to(squeezed).reshape(region)
    inside = type(self).full(region, True, device=self.device).pad(padding)
    self.assign(inside.where(value.pad(padding), self).contiguous().realize())
