"""Tensor indexing: NumPy-style `t[...]` and assignment into what it selects, windows at a symbolic start, gather, scatter,
scatter_reduce and masked_fill; and masked_select and nonzero, whose output size depends on the data: without `size` they
read back how many elements are selected (a realize) to know the output's shape; with `size` they stay lazy, padding or
truncating to it."""
from __future__ import annotations

import math
import weakref
from typing import TYPE_CHECKING

import numpy as np

from pytc.arguments import scalar_arg, tensor_arg
from pytc.dtype import Scalar, dtypes, least_upper_dtype
from pytc.graph import VIEW_OPS, LazyOp, is_view
from pytc.movement import broadcast_shape
from pytc.realize import realize
from pytc.symbolic import Variable, largest

if TYPE_CHECKING:
  from pytc.tensor import Tensor


class Indexing:
  """The indexing methods of Tensor (mixed into it)."""
  def __getitem__(self, indices) -> Tensor:
    """NumPy-style indexing: ints, slices (any step), None, ..., and advanced indices: integer Tensors, lists or tuples,
    which broadcast together and select 0 where out of range. Advanced indices on adjacent dims put their dims there,
    others put them first."""
    several = isinstance(indices, tuple) or (isinstance(indices, list) and not all(isinstance(i, int) for i in indices))
    indices = list(indices) if several else [indices]  # a list of ints is one advanced index, as in NumPy
    if sum(i is Ellipsis for i in indices) > 1: raise IndexError(f"an index can only have a single ellipsis, got {indices}")
    consumed = sum(1 for i in indices if i is not None and i is not Ellipsis)
    if consumed > self.ndim: raise IndexError(f"too many indices ({consumed}) for shape {self.shape}")
    at = next((k for k, i in enumerate(indices) if i is Ellipsis), len(indices))
    indices[at:at + 1] = [slice(None)] * (self.ndim - consumed)
    x, dim, advanced = self, 0, []
    for index in indices:
      if index is None: x, dim = x.unsqueeze(dim), dim + 1
      elif isinstance(index, slice): x, dim = x._slice(dim, index), dim + 1
      elif isinstance(index, int | np.integer):
        n = x.shape[dim]
        if not -n <= index < n: raise IndexError(f"index {index} is out of bounds for dim {dim} with size {n}")
        x = x.shrink(tuple((index % n, index % n + 1) if a == dim else None for a in range(x.ndim))).squeeze(dim)
      elif isinstance(index, type(self) | list | tuple): advanced, dim = advanced + [(dim, self._index_tensor(index))], dim + 1
      else: raise IndexError(f"cannot index with {type(index).__name__}")
    return x._gather_dims(advanced) if advanced else x

  def _index_tensor(self, index) -> Tensor:
    """An advanced index as an integer Tensor on self's device."""
    if not isinstance(index, type(self)):
      values = np.asarray(index)
      if values.dtype.kind not in "iu": raise IndexError(f"index {index!r} holds {values.dtype} values, not integers")
      narrow = values.size == 0 or dtypes.int32.min <= values.min() and values.max() <= dtypes.int32.max
      return type(self)(values.astype(np.int32) if narrow else values, device=self.device)
    if index.dtype.is_float or index.dtype.is_bool: raise IndexError(f"Tensor indices must be integers, got {index.dtype}")
    if index.device != self.device: raise RuntimeError(f"index on {index.device} for a tensor on {self.device}")
    return index

  def _slice(self, dim: int, index: slice) -> Tensor:
    if isinstance(index.start, Variable) or isinstance(index.stop, Variable) or isinstance(self.shape[dim], Variable):
      if index.step not in (None, 1): raise NotImplementedError(f"a slice with symbolic bounds or of a symbolic axis takes step 1, not {index.step}")
      bounds = (0 if index.start is None else index.start, self.shape[dim] if index.stop is None else index.stop)
      return self.shrink(tuple(bounds if a == dim else None for a in range(self.ndim)))
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

  def _gather_dims(self, advanced: list[tuple[int, Tensor]]) -> Tensor:
    """self at the integer Tensor indices given for some dims: one one-hot sum over those dims, flattened together."""
    dims, x = [d for d, _ in advanced], self
    if dims != list(range(dims[0], dims[0] + len(dims))):
      x, dims = x.permute(*dims, *[d for d in range(x.ndim) if d not in dims]), list(range(len(dims)))
    try: batch = broadcast_shape(*(index.shape for _, index in advanced))
    except ValueError as error: raise IndexError(f"indices of shapes {[i.shape for _, i in advanced]} do not broadcast together") from error
    sizes, flat, inside = [x.shape[d] for d in dims], None, None
    first, total = dims[0], math.prod(sizes)
    flat_dtype = dtypes.int32 if total <= dtypes.int32.max else dtypes.int64  # the flat position into the indexed dims
    for (_, index), n in zip(advanced, sizes):
      if index.dtype is dtypes.uint64: wrapped = index  # no negatives, and uint64 holds n
      else:  # a signed type that holds both the index values and n, so index + n cannot wrap
        index = index.cast(least_upper_dtype(index.dtype, flat_dtype))
        wrapped = (index < 0).where(index + n, index)
      fits = (wrapped >= 0) & (wrapped < n)
      wrapped = wrapped.cast(flat_dtype)
      flat, inside = (wrapped, fits) if flat is None else (flat * n + wrapped, inside & fits)
    x = x.reshape(x.shape[:first] + (total,) + x.shape[first + len(dims):])
    pre, post = x.shape[:first], x.shape[first + 1:]
    flat = inside.where(flat, -1)._broadcast_to(batch)
    onehot = (flat.unsqueeze(-1) == type(self).arange(total, device=self.device)).reshape((1,) * len(pre) + batch + (total,) + (1,) * len(post))
    spread = x.reshape(pre + (1,) * len(batch) + (total,) + post)
    return onehot.where(spread, 0).sum(len(pre) + len(batch)).cast(self.dtype)

  def gather(self, dim: int, index: Tensor) -> Tensor:
    """out[i][j] = self[index[i][j]][j] for dim 0 (and so on): index has self's rank and fits inside it off dim; an index
    outside dim selects 0."""
    dim, index = self._axis(dim), tensor_arg(index, "index")
    if index.dtype.is_float or index.dtype.is_bool: raise RuntimeError(f"gather needs an integer index, got {index.dtype}")
    if index.device != self.device: raise RuntimeError(f"gather index on {index.device} for a tensor on {self.device}")
    if index.ndim != self.ndim or any(a > b for i, (a, b) in enumerate(zip(index.shape, self.shape)) if i != dim):
      raise RuntimeError(f"gather index of shape {index.shape} does not fit {self.shape} off dim {dim}")
    n = self.shape[dim]
    inside = self.shrink(tuple(None if i == dim else (0, s) for i, s in enumerate(index.shape)))
    spread = inside.unsqueeze(-1).transpose(dim, -1).expand(index.shape + (n,))
    return (index.unsqueeze(-1) == type(self).arange(n, device=self.device)).where(spread, 0).sum(-1).cast(self.dtype)

  def _scattered(self, dim: int, index: Tensor, src: Tensor) -> tuple[Tensor, Tensor]:
    """src and where it lands, laid out as self.shape + (index.shape[dim],): along dim the target positions, last the source
    positions along dim; hits[..., t, ..., j] says source j lands on target t (never in the padding past index's shape)."""
    dim, index, src = self._axis(dim), tensor_arg(index, "index"), tensor_arg(src, "src")
    if index.dtype.is_float or index.dtype.is_bool: raise RuntimeError(f"scatter needs an integer index, got {index.dtype}")
    if index.device != self.device or src.device != self.device:
      raise RuntimeError(f"scatter of index on {index.device} and src on {src.device} into a tensor on {self.device}")
    if src.dtype != self.dtype: raise RuntimeError(f"scatter of {src.dtype} values into a {self.dtype} tensor")
    shapes = enumerate(zip(self.shape, index.shape, src.shape))
    if not index.ndim == self.ndim == src.ndim or any((d != dim and i > s) or i > v for d, (s, i, v) in shapes):
      raise RuntimeError(f"scatter index of shape {index.shape} must fit src {src.shape} and, off dim {dim}, self {self.shape}")
    n, padding = self.shape[dim], tuple((0, 0) if d == dim else (0, s - i) for d, (s, i) in enumerate(zip(self.shape, index.shape))) + ((0, 0),)
    hits = (index.unsqueeze(-1) == type(self).arange(n, device=self.device)).transpose(dim, -1)
    values = src.shrink(tuple((0, i) for i in index.shape)).unsqueeze(-1).transpose(dim, -1)._broadcast_to(hits.shape)
    return values.pad(padding), hits.pad(padding)

  def scatter(self, dim: int, index: Tensor, src: Tensor | Scalar, reduce: str | None = None) -> Tensor:
    """A copy with self[index[i][j]][j] = src[i][j] for dim 0 (and so on); where indices repeat, the last source wins.
    reduce="add" or "multiply" (with a scalar src) combines instead."""
    if reduce not in (None, "add", "multiply"): raise TypeError(f"scatter reduce must be None, 'add' or 'multiply', got {reduce!r}")
    index = tensor_arg(index, "index")
    if not isinstance(src, type(self)): src = type(self).full(index.shape, scalar_arg(src, "src"), dtype=self.dtype, device=self.device)
    elif reduce is not None: raise TypeError("scatter with reduce takes a scalar src; use scatter_reduce for a Tensor src")
    if reduce is not None: return self.scatter_reduce(dim, index, src, "sum" if reduce == "add" else "prod")
    values, hits = self._scattered(dim, index, src)
    order = type(self).arange(hits.shape[-1], device=self.device)
    last = hits.where(order, -1).max(-1, keepdim=True)
    return (last >= 0).squeeze(-1).where((order == last).where(values, 0).sum(-1).cast(self.dtype), self)

  def scatter_reduce(self, dim: int, index: Tensor, src: Tensor, reduce: str, include_self: bool = True) -> Tensor:
    """A copy with src[i][j] combined into self[index[i][j]][j] (dim 0, and so on) by reduce: "sum", "prod", "mean", "amax"
    or "amin". Without include_self, targets that receive a value drop self's."""
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
      raise RuntimeError(f"scatter_reduce reduce must be 'sum', 'prod', 'mean', 'amax' or 'amin', got {reduce!r}")
    values, hits = self._scattered(dim, index, src)
    untouched = hits.any(-1).logical_not()
    def kept(identity: Scalar) -> Tensor | Scalar: return self if include_self else untouched.where(self, identity)
    if reduce == "sum": return hits.where(values, 0).sum(-1) + kept(0)
    if reduce == "prod": return hits.where(values, 1).prod(-1) * kept(1)
    if reduce == "amax": return hits.where(values, self.dtype.min).max(-1).maximum(kept(self.dtype.min))
    if reduce == "amin": return hits.where(values, self.dtype.max).min(-1).minimum(kept(self.dtype.max))
    count = hits.sum(-1) + (1 if include_self else untouched.where(1, 0))
    return (hits.where(values, 0).sum(-1) + kept(0)) / count

  def masked_fill(self, mask: Tensor, value: Scalar) -> Tensor: return tensor_arg(mask, "mask").where(value, self)

  def __setitem__(self, indices, value: Tensor | Scalar) -> None:
    """Assign `value` (broadcast, cast to this dtype) into the view `self[indices]` selects: ints, slices of any step, None and
    ...; the data of the buffer under it changes in place (see _assign_view)."""
    view = self[indices]
    if not is_view_of(view.lazydata, self.lazydata): raise IndexError(f"assignment needs ints, slices, None and ..., not {indices!r}")
    value = value if isinstance(value, type(self)) else type(self)(value, device=self.device, dtype=self.dtype)
    view.assign(value.cast(self.dtype)._broadcast_to(view.shape))

  def _assign_view(self, value: Tensor) -> Tensor:
    """Write `value` (of this view's shape and dtype) through this view into the buffer under it, now: what the view shows of
    the buffer becomes `value`, the rest stays. The buffer is realized first if it is not (with every live tensor holding it
    taking the realized one), then computed again in place as where(in the view, value moved back, old data); one kernel."""
    chain, base = [], self.lazydata
    while base.op in VIEW_OPS: chain, base = chain + [base], base.srcs[0]
    if any(node.op == "expand" for node in chain):
      raise RuntimeError(f"cannot assign into an expanded view of a {base.shape} tensor: several of its elements are one element of the buffer")
    if not base.is_realized: base = settle(base, type(self)._live)
    tensor = type(self)
    moved, inside = value, tensor(LazyOp("const", dtypes.bool, self.shape, self.device, arg=True))
    for node in chain:
      moved, inside = (undo_movement(node, t) for t in (moved, inside))
    tensor(base).assign(inside.where(moved, tensor(base))).realize()
    self.lazydata = rebuilt(self.lazydata, base)
    return self

  def _window(self, axis: int, start: Variable, size: Variable | int) -> Tensor:
    """self[..., start:start + size, ...] along `axis` for a symbolic start: a gather of the positions start + i (clamped
    into the axis), which remembers where it came from so that assign writes back into the window."""
    n = self.shape[axis]
    positions = (type(self).arange(largest(size), device=self.device) + start).clip(0, n - 1)
    gathered = self._gather_dims([(axis, positions)])
    window = gathered._tagged(self.shape[:axis] + (size,) + self.shape[axis + 1:]) if isinstance(size, Variable) else gathered
    window._window_of = (self, axis, start, size)
    return window

  def _assign_window(self, x: Tensor) -> Tensor:
    """Write `x` into the window this tensor is (see _window), now: its source takes x at positions start + i."""
    source, axis, start, size = self._window_of
    n = source.shape[axis]
    positions = type(self).arange(n, device=self.device)
    offsets = (positions - start).clip(0, largest(size) - 1)
    moved = x._gather_dims([(axis, offsets)]) if largest(size) > 1 else x.expand(source.shape[:axis] + (n,) + source.shape[axis + 1:])
    begin = self._value_of(start)
    inside = ((positions >= begin) & (positions < begin + size)).reshape(tuple(n if a == axis else 1 for a in range(source.ndim)))
    source.assign(inside.where(moved, source))
    if not is_view(source.lazydata): source.realize()
    self.lazydata = source._window(axis, start, size).lazydata
    return self

  # *** selection with data-dependent sizes ***

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


def undo_movement(node: LazyOp, x: Tensor) -> Tensor:
  """`x`, of movement op `node`'s shape, moved back to its source's shape: where `node` read each element, `x` has it; what
  `node` cut away is 0 (False)."""
  source = node.srcs[0].shape
  if node.op == "reshape": return x.reshape(source)
  if node.op == "permute": return x.permute(tuple(np.argsort(node.arg)))
  if node.op == "flip": return x.flip(node.arg)
  if node.op == "shrink": return x.pad(tuple((s, n - e) for s, e, n in zip(*node.arg, source)))
  if node.op == "pad": return x.shrink(tuple((low, low + n) for low, n in zip(node.arg[0], source)))
  return x  # detach


def is_view_of(node: LazyOp, base: LazyOp) -> bool:
  while node is not base and node.op in VIEW_OPS: node = node.srcs[0]
  return node is base


def rebuilt(node: LazyOp, base: LazyOp) -> LazyOp:
  """The chain of view ops `node` is, over `base` (of the shape of the chain's own base) instead."""
  if node.op not in VIEW_OPS: return base
  source = rebuilt(node.srcs[0], base)
  return node if source is node.srcs[0] else LazyOp(node.op, node.dtype, node.shape, node.device, (source,), node.arg)


def settle(node: LazyOp, live: set[weakref.ref]) -> LazyOp:
  """Realize `node` (a tensor's value, or a pending assign), and make every tensor of `live` holding it, or a view of it, hold
  the buffer instead: an assign through a view must then write into the one buffer they all read."""
  (done,) = realize([node])
  for ref in list(live):
    if (t := ref()) is not None and is_view_of(t.lazydata, node): t.lazydata = rebuilt(t.lazydata, done)
  return done
