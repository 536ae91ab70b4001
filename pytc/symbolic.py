"""Symbolic sizes: `Variable(name, min, max)`, bound to a value with `.bind(v)`, and the affine expressions over variables
that shapes, slices and pads take (`start_pos + 1`).

A tensor with a symbolic dim is stored at the dim's largest size, of which the first `value` entries are its elements:
reductions over the dim leave the rest out, slicing from a symbolic start gathers, and realizing the tensor returns only
the bound part. A graph's structure (and so its schedule and kernels) holds a variable's name and range, never its value,
which the kernels read from a 0-d int32 buffer the binding fills: one compile serves every value, and TinyJit replays
write the new one into that buffer."""
from __future__ import annotations

import numpy as np

from pytc.device import Buffer
from pytc.dtype import dtypes


class Usage:
  """Whether a Variable was ever made: until then no shape can be symbolic, and graph nodes skip looking (a node is made
  for every op of every graph)."""
  seen = False


class Variable:
  """An affine expression over integer variables: sum(coefficient * variable) + constant. `Variable(name, min, max)` is
  one variable; `.bind(value)` a copy standing for that value (every expression built from it carries it)."""
  __slots__ = ("terms", "const")

  def __init__(self, name: str | None = None, min_val: int = 0, max_val: int = 0, *, terms: tuple = (), const: int = 0):
    if name is not None:
      if not isinstance(name, str) or not name: raise TypeError(f"a Variable needs a name, got {name!r}")
      if not (isinstance(min_val, int) and isinstance(max_val, int)) or min_val > max_val:
        raise ValueError(f"Variable {name!r} needs int bounds with min <= max, got {min_val}, {max_val}")
      terms = ((Leaf(name, min_val, max_val), 1),)
      Usage.seen = True
    self.terms: tuple[tuple[Leaf, int], ...] = terms
    self.const: int = const

  # *** what it is ***

  @property
  def vmin(self) -> int: return self.const + sum(c * (leaf.lo if c > 0 else leaf.hi) for leaf, c in self.terms)
  @property
  def vmax(self) -> int: return self.const + sum(c * (leaf.hi if c > 0 else leaf.lo) for leaf, c in self.terms)
  @property
  def expr(self) -> str: return self.terms[0][0].name if self.is_leaf else str(self)
  @property
  def is_leaf(self) -> bool: return self.const == 0 and len(self.terms) == 1 and self.terms[0][1] == 1
  @property
  def val(self) -> int:
    """The value the bound variables give it."""
    for leaf, _ in self.terms:
      if leaf.value is None: raise RuntimeError(f"Variable {leaf.name!r} is not bound: bind it with .bind(value) to compute with it")
    return self.const + sum(c * leaf.value for leaf, c in self.terms)

  def bind(self, value: int) -> Variable:
    if not self.is_leaf: raise TypeError(f"only a Variable binds, not the expression {self}")
    leaf = self.terms[0][0]
    if isinstance(value, Variable) or not isinstance(value, int | np.integer) or isinstance(value, bool):
      raise TypeError(f"Variable {leaf.name!r} binds an int, got {type(value).__name__}")
    if not leaf.lo <= value <= leaf.hi: raise ValueError(f"Variable {leaf.name!r} bound to {value}, outside its range [{leaf.lo}, {leaf.hi}]")
    return Variable(terms=((Leaf(leaf.name, leaf.lo, leaf.hi, int(value)), 1),))

  def unbind(self) -> tuple[Variable, int]:
    if not self.is_leaf: raise TypeError(f"only a bound Variable unbinds, not the expression {self}")
    leaf = self.terms[0][0]
    return Variable(leaf.name, leaf.lo, leaf.hi), self.val

  def __int__(self) -> int: return self.val
  def __repr__(self) -> str:
    parts = [(f"{c}*" if c != 1 else "") + leaf.name for leaf, c in self.terms] + ([str(self.const)] if self.const else [])
    return " + ".join(parts).replace("+ -", "- ")
  def __hash__(self) -> int: return hash((self.terms, self.const))

  # *** arithmetic ***

  def __add__(self, other: Variable | int) -> Variable | int:
    if not isinstance(other, Variable | int | np.integer) or isinstance(other, bool): return NotImplemented  # a Tensor's own
    other = symbolic(other)
    coefficients = dict(self.terms)
    for leaf, c in other.terms: coefficients[leaf] = coefficients.get(leaf, 0) + c
    return expression(tuple((leaf, c) for leaf, c in coefficients.items() if c), self.const + other.const)
  __radd__ = __add__
  def __neg__(self) -> Variable | int: return self * -1
  def __sub__(self, other: Variable | int) -> Variable | int:
    return self + (-other) if isinstance(other, Variable | int | np.integer) else NotImplemented
  def __rsub__(self, other: int) -> Variable | int: return -self + other if isinstance(other, int | np.integer) else NotImplemented
  def __mul__(self, other: int) -> Variable | int:
    if isinstance(other, Variable):
      if other.terms and self.terms: raise NotImplementedError(f"the product of symbolic sizes {self} and {other} is not affine")
      other = other.const if not other.terms else other
      if isinstance(other, Variable): return other * self.const
    if not isinstance(other, int): return NotImplemented
    return expression(tuple((leaf, c * other) for leaf, c in self.terms) if other else (), self.const * other)
  __rmul__ = __mul__

  # *** comparisons: structural equality; an order only where the ranges decide it ***

  def __eq__(self, other: object) -> bool:  # type: ignore[override]
    if isinstance(other, int): return not self.terms and self.const == other
    return isinstance(other, Variable) and self.terms == other.terms and self.const == other.const
  def __lt__(self, other: Variable | int) -> bool: return decided(self - other, "<", lambda d: d.vmax < 0, lambda d: d.vmin >= 0)
  def __le__(self, other: Variable | int) -> bool: return decided(self - other, "<=", lambda d: d.vmax <= 0, lambda d: d.vmin > 0)
  def __gt__(self, other: Variable | int) -> bool: return decided(self - other, ">", lambda d: d.vmin > 0, lambda d: d.vmax <= 0)
  def __ge__(self, other: Variable | int) -> bool: return decided(self - other, ">=", lambda d: d.vmin >= 0, lambda d: d.vmax < 0)


class Leaf:
  """One variable: its name and range (what a graph's structure holds) and, bound, its value with a buffer holding it on
  each device it was used on (and the graph node reading that buffer, which Tensor makes)."""
  __slots__ = ("name", "lo", "hi", "value", "buffers", "nodes")

  def __init__(self, name: str, lo: int, hi: int, value: int | None = None):
    self.name, self.lo, self.hi, self.value = name, lo, hi, value
    self.buffers: dict[str, Buffer] = {}
    self.nodes: dict[str, object] = {}

  def __eq__(self, other: object) -> bool: return isinstance(other, Leaf) and (self.name, self.lo, self.hi) == (other.name, other.lo, other.hi)
  def __hash__(self) -> int: return hash((self.name, self.lo, self.hi))

  def buffer(self, device: str) -> Buffer:
    """This variable's value in a 0-d int32 buffer on `device`, written once."""
    if self.value is None: raise RuntimeError(f"Variable {self.name!r} is not bound: bind it with .bind(value) to compute with it")
    if device not in self.buffers: self.buffers[device] = Buffer(device, dtypes.int32, ()).copyin(np.array(self.value, np.int32))
    return self.buffers[device]


def expression(terms: tuple, const: int) -> Variable | int:
  """An affine expression, or the int it is when no variable is left."""
  return Variable(terms=tuple(sorted(terms, key=lambda t: t[0].name)), const=const) if terms else const


def symbolic(x: Variable | int) -> Variable:
  if isinstance(x, Variable): return x
  if isinstance(x, int | np.integer) and not isinstance(x, bool): return Variable(const=int(x))
  raise TypeError(f"a symbolic size combines with ints and Variables, not {type(x).__name__}")


def decided(difference: Variable | int, op: str, true, false) -> bool:
  """Whether `difference op 0` holds for every value of its variables; raises where the ranges leave it open."""
  d = symbolic(difference)
  if true(d): return True
  if false(d): return False
  raise TypeError(f"whether {d} {op} 0 depends on the value bound: the ranges of its variables do not decide it")


def is_symbolic(shape: tuple) -> bool:
  for n in shape:
    if type(n) is not int and isinstance(n, Variable): return True
  return False


def largest(n: Variable | int) -> int:
  """The size a symbolic dim is stored at."""
  return n.vmax if isinstance(n, Variable) else n


def concrete(shape: tuple) -> tuple[int, ...]: return tuple(map(largest, shape))


def resolved(shape: tuple) -> tuple[int, ...]:
  """The shape the bound values give."""
  return tuple(n.val if isinstance(n, Variable) else n for n in shape)
