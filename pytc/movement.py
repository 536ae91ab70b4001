"""Movement: reshape, permute, expand, pad (constant, reflect, replicate, circular), shrink and flip, and what is made of
them: transposes, squeezes, flattening, cat, stack, split, roll, repeat, diagonals, triangles and einops-style rearrange."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytc.arguments import argfix, calling_op, int_arg, is_int, is_tensor, tensor_arg
from pytc.dtype import Scalar, dtypes
from pytc.graph import LazyOp
from pytc.symbolic import Variable, is_symbolic, largest

if TYPE_CHECKING:
  from pytc.tensor import Tensor

PAD_MODES = ("constant", "reflect", "replicate", "circular")
ELLIPSIS = "..."


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
  if all(s == shapes[0] for s in shapes[1:]): return tuple(shapes[0])
  rank = max(len(s) for s in shapes)
  padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
  result = []
  for dims in zip(*padded):
    sizes = {d for d in dims if d != 1}
    if len(sizes) > 1: raise ValueError(f"cannot broadcast shapes {' and '.join(str(tuple(s)) for s in shapes)}")
    result.append(sizes.pop() if sizes else 1)
  return tuple(result)


def parse_side(side: str, formula: str) -> list[list[str] | str]:
  """One side of a rearrange formula as groups of axis names: a bare name is a group of one, "(a b)" a group of two, "()"
  and "1" an empty group (a dim of size 1); a bare "..." stays the string "...", one group per dim it stands for."""
  tokens = side.replace("…", ELLIPSIS).replace("(", " ( ").replace(")", " ) ").split()
  groups: list[list[str] | str] = []
  current: list[str] | None = None
  for token in tokens:
    if token == "(":
      if current is not None: raise ValueError(f"rearrange {formula!r}: nested parentheses")
      current = []
    elif token == ")":
      if current is None: raise ValueError(f"rearrange {formula!r}: unbalanced parentheses")
      groups.append(current)
      current = None
    elif token == "1":
      if current is None: groups.append([])
    elif token != ELLIPSIS and not (token.isidentifier() and not token.startswith("_") and not token.endswith("_")):
      raise ValueError(f"rearrange {formula!r}: {token!r} is not an axis name")
    elif current is None: groups.append(token if token == ELLIPSIS else [token])
    else: current.append(token)
  if current is not None: raise ValueError(f"rearrange {formula!r}: unbalanced parentheses")
  return groups


class Movement:
  """The movement methods of Tensor (mixed into it)."""
  def reshape(self, shape, *args) -> Tensor:
    """None keeps that dim's size; one -1 takes what the others leave."""
    new_shape = tuple(self.shape[i] if d is None else d for i, d in enumerate(argfix(shape, *args)))
    if not all(is_int(d) or isinstance(d, Variable) for d in new_shape):
      raise TypeError(f"{calling_op()}: a shape holds ints, got {argfix(shape, *args)}")
    if is_symbolic(new_shape) or self.lazydata.symbolic: return self._reshape_symbolic(new_shape)
    if new_shape.count(-1) > 1: raise RuntimeError(f"reshape of {self.shape} to {new_shape}: only one dim can be -1")
    if -1 in new_shape:
      known = math.prod(d for d in new_shape if d != -1)
      new_shape = tuple(self.numel() // known if d == -1 and known else d for d in new_shape)
    if any(d < 0 for d in new_shape) or math.prod(new_shape) != self.numel():
      raise ValueError(f"cannot reshape {self.shape} ({self.numel()} elements) to {new_shape}")
    return self if new_shape == self.shape else self._movement("reshape", new_shape)

  def _reshape_symbolic(self, shape: tuple) -> Tensor:
    """A reshape that keeps each symbolic dim a dim of its own, regrouping only the static dims between them (a symbolic
    dim is stored at its largest size, so merging it with others would interleave its unused part with their elements)."""
    def runs(dims: tuple) -> tuple[list, list[int]]:
      symbols, products = [], [1]
      for d in dims:
        if isinstance(d, Variable): symbols, products = symbols + [d], products + [1]
        elif d != -1: products[-1] *= d
      return symbols, products
    (old_symbols, old_runs), (new_symbols, new_runs) = runs(self.shape), runs(shape)
    if -1 in shape and old_symbols == new_symbols and shape.count(-1) == 1:
      at = sum(isinstance(d, Variable) for d in shape[:shape.index(-1)])
      if new_runs[at] == 0 or old_runs[at] % new_runs[at]: raise ValueError(f"cannot reshape {self.shape} to {shape}")
      fill, new_runs[at] = old_runs[at] // new_runs[at], old_runs[at]
      shape = tuple(fill if d == -1 else d for d in shape)
    if old_symbols != new_symbols or old_runs != new_runs or -1 in shape:
      raise NotImplementedError(f"reshape of {self.shape} to {shape}: only the static dims around symbolic ones can regroup")
    return self if shape == self.shape else self._movement("reshape", shape)

  def permute(self, order, *args) -> Tensor:
    order = tuple(self._axis(a) for a in argfix(order, *args))
    if sorted(order) != list(range(self.ndim)): raise RuntimeError(f"permute order {order} is not a permutation of the dims of {self.shape}")
    return self if order == tuple(range(self.ndim)) else self._movement("permute", tuple(self.shape[a] for a in order), order)

  def expand(self, shape, *args) -> Tensor:
    """Broadcast size-1 dims (and new leading ones) to `shape`; -1 or None keeps a dim's size."""
    wanted = argfix(shape, *args)
    base = self.reshape((1,) * (len(wanted) - self.ndim) + self.shape) if len(wanted) > self.ndim else self
    new_shape = tuple(b if n is None or n == -1 else n for b, n in zip(base.shape, wanted))
    if len(wanted) < self.ndim or any(not isinstance(n, int | Variable) or n < 0 or (b != n and b != 1) for b, n in zip(base.shape, new_shape)):
      raise ValueError(f"cannot expand {self.shape} to {wanted}")
    return base if new_shape == base.shape else base._movement("expand", new_shape)

  def pad(self, padding, mode: str = "constant", value: float = 0.0) -> Tensor:
    """Pad with `value` ("constant" mode) or "reflect", "replicate", "circular": one (before, after) or None per axis, or
    torch's flat (last_before, last_after, ...); a negative amount cuts."""
    if not isinstance(padding, Sequence) or isinstance(padding, str):
      raise TypeError(f"pad needs a sequence of (before, after) pairs or of ints, got {type(padding).__name__} {padding!r}")
    padding = tuple(padding)
    if padding and all(isinstance(p, int) for p in padding):
      if len(padding) % 2 or len(padding) > 2 * self.ndim: raise ValueError(f"flat padding {padding} does not fit shape {self.shape}")
      pairs = [(0, 0)] * (self.ndim - len(padding) // 2) + [tuple(padding[i:i + 2]) for i in range(len(padding) - 2, -1, -2)]
    else:
      if len(padding) != self.ndim: raise ValueError(f"padding {padding} needs one entry per axis of shape {self.shape}")
      if not all(p is None or (isinstance(p, Sequence) and len(p) == 2 and all(is_int(v) for v in p)) for p in padding):
        raise TypeError(f"pad needs None or a (before, after) pair of ints for each axis, got {padding}")
      pairs = [(0, 0) if p is None else tuple(p) for p in padding]
    if any(isinstance(n, Variable) and p != (0, 0) for n, p in zip(self.shape, pairs)):
      raise NotImplementedError(f"pad {padding} of symbolic axes of {self.shape}")
    if mode != "constant": return self._pad_mode(pairs, mode)
    x = self.shrink(tuple((-min(b, 0), n + min(a, 0)) for (b, a), n in zip(pairs, self.shape)))
    low, high = tuple(max(b, 0) for b, _ in pairs), tuple(max(a, 0) for _, a in pairs)
    if not any(low + high): return x
    padded = x._movement("pad", tuple(n + lo + hi for n, lo, hi in zip(x.shape, low, high)), (low, high))
    if value == 0: return padded
    inside = type(self)(LazyOp("const", dtypes.bool, x.shape, x.device, arg=True))._movement("pad", padded.shape, (low, high))
    return inside.where(padded, value)

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

  def shrink(self, arg) -> Tensor:
    """Keep [start, end) of each axis; None keeps the whole axis."""
    if len(arg) != self.ndim: raise ValueError(f"shrink {arg} needs one entry per axis of shape {self.shape}")
    ranges = tuple((0, n) if r is None else tuple(r) for r, n in zip(arg, self.shape))
    if self.lazydata.symbolic or is_symbolic(sum(ranges, ())): return self._shrink_symbolic(ranges)
    if any(not 0 <= s <= e <= n for (s, e), n in zip(ranges, self.shape)): raise ValueError(f"shrink {arg} is out of bounds for shape {self.shape}")
    if all(r == (0, n) for r, n in zip(ranges, self.shape)): return self
    return self._movement("shrink", tuple(e - s for s, e in ranges), (tuple(s for s, _ in ranges), tuple(e for _, e in ranges)))

  def _shrink_symbolic(self, ranges: tuple) -> Tensor:
    """shrink where a bound or a size is symbolic, an axis at a time: a symbolic end from a static start keeps a prefix
    (stored at the end's largest value, padded past the axis), a symbolic start gathers a window (see _window); a symbolic
    axis keeps all of itself or a static part its smallest size holds."""
    x = self
    for axis, (start, end) in enumerate(ranges):
      n = x.shape[axis]
      if (start, end) == (0, n): continue
      actual = [v.val if isinstance(v, Variable) else v for v in (start, end, n)]
      if not 0 <= actual[0] <= actual[1] <= actual[2]:
        raise ValueError(f"shrink {ranges} is out of bounds for shape {self.shape} ({start}..{end} of {n})")
      if isinstance(n, Variable) and (isinstance(start, Variable) or isinstance(end, Variable) or end > n.vmin):
        raise NotImplementedError(f"shrink {ranges} of symbolic shape {self.shape}: a symbolic axis shrinks only to a static part of its "
                                  "smallest size")
      if isinstance(start, Variable): x = x._window(axis, start, end - start)
      elif isinstance(end, Variable): x = x._prefix(axis, start, end - start)
      else: x = x._movement("shrink", x.shape[:axis] + (end - start,) + x.shape[axis + 1:], x._bounds_along(axis, start, end))
    return x

  def _bounds_along(self, axis: int, start: int, end: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A shrink's (starts, ends) keeping [start, end) of `axis` and all of the other axes, as they are stored."""
    return tuple(zip(*((start, end) if a == axis else (0, largest(n)) for a, n in enumerate(self.shape))))

  def _prefix(self, axis: int, start: int, size: Variable) -> Tensor:
    keep = min(self.shape[axis], start + size.vmax)
    shape = self.shape[:axis] + (size,) + self.shape[axis + 1:]
    bounds = self._bounds_along(axis, start, keep)
    if keep - start == size.vmax: return self._movement("shrink", shape, bounds)
    kept = self._movement("shrink", self.shape[:axis] + (keep - start,) + self.shape[axis + 1:], bounds)
    past = tuple((0, size.vmax - (keep - start)) if a == axis else (0, 0) for a in range(self.ndim))
    return kept._movement("pad", shape, tuple(zip(*past)))

  def flip(self, axis, *args) -> Tensor:
    axes = tuple(self._axis(a) for a in argfix(axis, *args))
    if len(set(axes)) != len(axes): raise RuntimeError(f"flip axes {axes} of shape {self.shape} repeat an axis")
    if any(isinstance(self.shape[a], Variable) for a in axes): raise NotImplementedError(f"flip of symbolic axes {axes} of {self.shape}")
    return self._movement("flip", self.shape, axes) if axes else self

  # *** built from the ones above ***

  def view(self, shape, *args) -> Tensor: return self.reshape(shape, *args)
  def transpose(self, dim0: int = 1, dim1: int = 0) -> Tensor:
    order = list(range(self.ndim))
    order[self._axis(dim0)], order[self._axis(dim1)] = order[self._axis(dim1)], order[self._axis(dim0)]
    return self.permute(order)
  @property
  def T(self) -> Tensor: return self.transpose()
  def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    start, end = self._axis(start_dim), self._axis(end_dim)
    return self.reshape(self.shape[:start] + (math.prod(self.shape[start:end + 1]),) + self.shape[end + 1:])
  def unflatten(self, dim: int, sizes: tuple[int, ...]) -> Tensor:
    dim = self._axis(dim)
    if not isinstance(sizes, Sequence) or isinstance(sizes, str): raise TypeError(f"unflatten sizes must be a sequence of ints, got {sizes!r}")
    return self.reshape(self.shape[:dim] + tuple(sizes) + self.shape[dim + 1:])
  def unsqueeze(self, dim: int) -> Tensor:
    dim = self._axis(dim, extra=True)
    return self.reshape(self.shape[:dim] + (1,) + self.shape[dim:])
  def squeeze(self, dim: int | None = None) -> Tensor:
    if dim is None: return self.reshape(tuple(n for n in self.shape if n != 1))
    dim = self._axis(dim)
    return self if not self.ndim or self.shape[dim] != 1 else self.reshape(self.shape[:dim] + self.shape[dim + 1:])
  def pad_to(self, shape, *args, value: Scalar = 0) -> Tensor:
    if not all(n is None or is_int(n) for n in argfix(shape, *args)): raise TypeError(f"pad_to needs a shape of ints or None, got {shape!r}")
    if len(argfix(shape, *args)) != self.ndim: raise ValueError(f"pad_to {argfix(shape, *args)} of a {self.ndim}-d tensor: one size per dim")
    return self.pad(tuple((0, n - s) if n is not None else None for s, n in zip(self.shape, argfix(shape, *args))), value=value)
  def shrink_to(self, shape, *args) -> Tensor:
    if not all(n is None or is_int(n) for n in argfix(shape, *args)): raise TypeError(f"shrink_to needs a shape of ints or None, got {shape!r}")
    return self.shrink(tuple((0, n) if n is not None else None for n in argfix(shape, *args)))

  def repeat(self, repeats, *args) -> Tensor:
    repeats = argfix(repeats, *args)
    if len(repeats) < self.ndim: raise ValueError(f"repeat {repeats} needs at least {self.ndim} entries for shape {self.shape}")
    base = self.reshape((1,) * (len(repeats) - self.ndim) + self.shape)
    spread = base.reshape(sum(((1, n) for n in base.shape), ())).expand(sum(((r, n) for r, n in zip(repeats, base.shape)), ()))
    return spread.reshape(tuple(r * n for r, n in zip(repeats, base.shape)))
  def repeat_interleave(self, repeats: int, dim: int | None = None) -> Tensor:
    x, repeats = self.flatten() if dim is None else self, int_arg(repeats, "repeats", 0)
    dim = 0 if dim is None else x._axis(dim)
    return x.unsqueeze(dim + 1).expand(x.shape[:dim + 1] + (repeats,) + x.shape[dim + 1:]).flatten(dim, dim + 1)

  def cat(self, *others: Tensor, dim: int = 0) -> Tensor:
    tensors, dim = (self, *(tensor_arg(t, "each tensor") for t in others)), self._axis(dim)
    for t in others:
      if t.ndim != self.ndim or any(a != b for i, (a, b) in enumerate(zip(self.shape, t.shape)) if i != dim):
        raise ValueError(f"cat along dim {dim}: shape {t.shape} does not match {self.shape}")
    total, offset, result = sum(t.shape[dim] for t in tensors), 0, None
    for t in tensors:
      padding = [(0, 0)] * self.ndim
      padding[dim] = (offset, total - offset - t.shape[dim])
      placed = t.pad(padding)  # selected, not added, into place: adding would drop -0.0's sign and fails on bool
      inside = type(self).full(t.shape, True, dtype=dtypes.bool, device=t.device).pad(padding)
      result = placed if result is None else inside.where(placed, result)
      offset += t.shape[dim]
    return result

  def stack(self, *others: Tensor, dim: int = 0) -> Tensor:
    """Join same-shaped tensors along a new dim: Tensor.stack(a, b) or Tensor.stack((a, b))."""
    tensors = argfix(self, *others)
    if not all(is_tensor(t) for t in tensors) or any(t.shape != tensors[0].shape for t in tensors):
      raise ValueError(f"stack needs tensors of one shape, got {[t.shape if is_tensor(t) else type(t).__name__ for t in tensors]}")
    dim = tensors[0]._axis(dim, extra=True)
    return type(tensors[0]).cat(*(t.unsqueeze(dim) for t in tensors), dim=dim)

  def split(self, sizes: int | list[int], dim: int = 0) -> tuple[Tensor, ...]:
    dim = self._axis(dim)
    n = self.shape[dim]
    if is_int(sizes): sizes = [min(sizes, n - i) for i in range(0, n, int_arg(sizes, "sizes", 1))]
    elif isinstance(sizes, Sequence) and all(is_int(v) and v >= 0 for v in sizes): sizes = list(sizes)
    else: raise TypeError(f"split sizes must be a positive int or a sequence of non-negative ints, got {sizes!r}")
    if sum(sizes) != n: raise ValueError(f"split sizes {sizes} do not add up to {n}")
    bounds = [sum(sizes[:i]) for i in range(len(sizes) + 1)]
    return tuple(self.shrink(tuple((bounds[i], bounds[i + 1]) if a == dim else None for a in range(self.ndim))) for i in range(len(sizes)))

  def chunk(self, chunks: int, dim: int = 0) -> list[Tensor]:
    int_arg(chunks, "chunks", 1)
    return list(self.split(math.ceil(self.shape[self._axis(dim)] / chunks), dim))

  def roll(self, shifts: int | tuple[int, ...], dims: int | tuple[int, ...] | None = None) -> Tensor:
    """Shift elements along dims, wrapping around; without dims, along the flattened tensor."""
    if dims is None: return self.flatten().roll(shifts, 0).reshape(self.shape)
    shifts, dims = ((v,) if is_int(v) else tuple(v) if isinstance(v, Sequence) else (v,) for v in (shifts, dims))
    if not all(is_int(v) for v in shifts): raise TypeError(f"roll shifts must be an int or a sequence of ints, got {shifts}")
    dims = tuple(self._axis(d) for d in dims)
    if len(shifts) != len(dims): raise RuntimeError(f"roll needs one shift per dim, got shifts {shifts} and dims {dims}")
    x = self
    for shift, dim in zip(shifts, dims):
      n = self.shape[dim]
      if 0 in self.shape or not shift % n: continue
      cut, lead = n - shift % n, (slice(None),) * dim
      x = x[lead + (slice(cut, None),)].cat(x[lead + (slice(0, cut),)], dim=dim)
    return x

  def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal over dims dim1 and dim2 as a last dim: above the main one by `offset`, below it when negative."""
    offset, dim1, dim2 = int_arg(offset, "offset"), self._axis(dim1), self._axis(dim2)
    if dim1 == dim2: raise RuntimeError(f"diagonal needs two different dims, got {dim1} and {dim2} of shape {self.shape}")
    x = self.permute(*[i for i in range(self.ndim) if i not in (dim1, dim2)], dim1, dim2)
    row, col = min(max(-offset, 0), x.shape[-2]), min(max(offset, 0), x.shape[-1])
    n, lead = min(x.shape[-2] - row, x.shape[-1] - col), (None,) * (x.ndim - 2)
    square = x.shrink(lead + ((row, row + n), (col, col + n)))
    return square.flatten(-2).pad(lead + ((0, n),)).unflatten(-1, (n, n + 1))[..., 0]
  def diag(self) -> Tensor:
    if self.ndim != 1: raise ValueError(f"diag needs a vector, got {self.shape}")
    n = self.shape[0]
    return self.unsqueeze(1).pad(((0, 0), (0, n))).flatten()[:n * n].reshape(n, n)

  def tril(self, diagonal: int = 0) -> Tensor: return self._triangle(lambda rows, cols: cols <= rows + diagonal)
  def triu(self, diagonal: int = 0) -> Tensor: return self._triangle(lambda rows, cols: cols >= rows + diagonal)
  def _triangle(self, keep) -> Tensor:
    rows, cols = type(self).arange(self.shape[-2], device=self.device).unsqueeze(-1), type(self).arange(self.shape[-1], device=self.device)
    return keep(rows, cols).where(self, 0).cast(self.dtype)

  def meshgrid(self, *others: Tensor, indexing: str = "ij") -> tuple[Tensor, ...]:
    """Coordinate grids from 0-d or 1-D tensors: grid k varies along dim k ("ij"), or with the first two dims swapped ("xy")."""
    if indexing not in ("ij", "xy"): raise RuntimeError(f"meshgrid indexing must be 'ij' or 'xy', got {indexing!r}")
    tensors = (self, *(tensor_arg(t, "each tensor") for t in others))
    if len(tensors) == 1: return tensors
    dims = (1, 0, *range(2, len(tensors))) if indexing == "xy" else tuple(range(len(tensors)))
    shape = tuple(tensors[dims.index(d)].numel() for d in range(len(tensors)))
    return tuple(t.reshape(tuple(-1 if d == at else 1 for d in range(len(tensors)))).expand(shape) for t, at in zip(tensors, dims))

  def rearrange(self, formula: str, **sizes: int) -> Tensor:
    """Rearrange dims by an einops formula "lhs -> rhs" ("b (h w) c -> b c h w"): each side names every axis once,
    parentheses group axes into one dim (split on the left, merged on the right), "..." stands for the dims not named, and
    `sizes` gives the sizes of axes that splitting a dim cannot infer."""
    if not isinstance(formula, str): raise TypeError(f"rearrange needs a formula string such as 'b c h w -> b (c h w)', got {formula!r}")
    if formula.count("->") != 1: raise ValueError(f"rearrange {formula!r} needs exactly one '->'")
    lhs, rhs = (parse_side(side, formula) for side in formula.split("->"))
    names = lambda side: [n for g in side for n in ([g] if isinstance(g, str) else g)]
    left_names, right_names = names(lhs), names(rhs)
    if len(set(left_names)) != len(left_names) or sorted(left_names) != sorted(right_names):
      raise ValueError(f"rearrange {formula!r}: each side must name the same axes once each")
    if unknown := set(sizes) - set(left_names): raise ValueError(f"rearrange {formula!r}: sizes for axes it does not name: {sorted(unknown)}")
    if any(isinstance(g, list) and ELLIPSIS in g for g in lhs): raise ValueError(f"rearrange {formula!r}: '...' cannot be grouped on the left")
    if ELLIPSIS in left_names:
      if self.ndim < len(lhs) - 1: raise ValueError(f"rearrange {formula!r} names more dims than shape {self.shape} has")
      extra = [f"{ELLIPSIS}{i}" for i in range(self.ndim - len(lhs) + 1)]
      expand = lambda side: [part for g in side for part in ([[n] for n in extra] if g == ELLIPSIS else
                                                             [[n for name in g for n in (extra if name == ELLIPSIS else [name])]])]
      lhs, rhs = expand(lhs), expand(rhs)
    left_names, right_names = names(lhs), names(rhs)
    if len(lhs) != self.ndim: raise ValueError(f"rearrange {formula!r} names {len(lhs)} dims, shape {self.shape} has {self.ndim}")
    axis_size: dict[str, int] = {}
    for group, n in zip(lhs, self.shape):
      known, unknown = math.prod(sizes[name] for name in group if name in sizes), [name for name in group if name not in sizes]
      if len(unknown) > 1: raise ValueError(f"rearrange {formula!r}: cannot infer the sizes of {unknown} from a dim of {n}")
      if unknown: axis_size[unknown[0]] = n // known if known and n % known == 0 else -1
      if math.prod(sizes.get(name, axis_size.get(name, 1)) for name in group) != n:
        raise ValueError(f"rearrange {formula!r}: axes {group or '()'} cannot make a dim of {n} with sizes {sizes}")
      axis_size.update({name: sizes[name] for name in group if name in sizes})
    x = self.reshape(tuple(axis_size[name] for name in left_names))
    x = x.permute(tuple(left_names.index(name) for name in right_names))
    return x.reshape(tuple(math.prod(axis_size[name] for name in group) for group in rhs))
