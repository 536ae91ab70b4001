"""Symbolic index arithmetic for rangeify: integer linear forms over ranges, with floor division
and modulo atoms, simplified with the value bounds of the ranges. Emitted as arith ops on `index`."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from math import gcd

from mlir import ir
from mlir.dialects import arith


class Node:
  """An immutable expression node. Nodes are shared by many forms and used as dict keys, so the hash, the order key
  and the bounds are computed once per node (each is a walk of the whole subtree)."""

  def __hash__(self) -> int:
    return self._hash

  def __eq__(self, other: object) -> bool:
    return self is other or (type(other) is type(self) and self._hash == other._hash and self.key == other.key)

  @cached_property
  def _hash(self) -> int:
    return hash(self.key)  # the subclasses with children hash their children's hashes

  @cached_property
  def key(self) -> tuple:
    """A total order of nodes (the order of a form's terms, so equal forms are built alike)."""
    raise NotImplementedError

  @cached_property
  def range(self) -> tuple[int, int]:
    raise NotImplementedError

  def bounds(self) -> tuple[int, int]:
    return self.range


@dataclass(frozen=True, eq=False)
class Range(Node):
  """A loop index in [0, size)."""

  id: int
  size: int
  value: ir.Value | None = None  # the uop.range op's result, when emitted

  @cached_property
  def key(self) -> tuple:
    return (2, self.id)

  @cached_property
  def range(self) -> tuple[int, int]:
    return (0, self.size - 1)


@dataclass(frozen=True, eq=False)
class Div(Node):
  """floor(x / d), d > 0."""

  x: Lin
  d: int

  @cached_property
  def key(self) -> tuple:
    return (0, self.x.key, self.d)

  @cached_property
  def _hash(self) -> int:
    return hash((0, self.x._hash, self.d))

  @cached_property
  def range(self) -> tuple[int, int]:
    low, high = self.x.bounds()
    return (low // self.d, high // self.d)


@dataclass(frozen=True, eq=False)
class Mod(Node):
  """x mod d (the result has the sign of d, as in Python), d > 0."""

  x: Lin
  d: int

  @cached_property
  def key(self) -> tuple:
    return (1, self.x.key, self.d)

  @cached_property
  def _hash(self) -> int:
    return hash((1, self.x._hash, self.d))

  @cached_property
  def range(self) -> tuple[int, int]:
    return (0, self.d - 1)


Atom = Range | Div | Mod


@dataclass(frozen=True, eq=False)
class Lin(Node):
  """const + sum(coefficient * atom), terms in key order."""

  terms: tuple[tuple[Atom, int], ...] = ()
  const: int = 0

  @staticmethod
  def of(value: int | Atom) -> Lin:
    return Lin((), value) if isinstance(value, int) else Lin(((value, 1),), 0)

  @staticmethod
  def build(coefficients: dict[Atom, int], const: int) -> Lin:
    """The normal form of const + sum(coefficient * atom): every c*m*(x // D) + c*((x // (D/m)) % m) is recombined into
    c*(x // (D/m)) (with D = m, into c*x), so splitting an index by a reshape and merging it back gives the index."""
    while (pair := Lin.recombinable(coefficients)) is not None:
      (div, mod), c = pair
      coefficients[div] -= c * mod.d
      del coefficients[mod]
      for atom, coefficient in mod.x.terms:
        coefficients[atom] = coefficients.get(atom, 0) + c * coefficient
      const += c * mod.x.const
      coefficients = {a: k for a, k in coefficients.items() if k}
    return Lin(tuple(sorted(((a, c) for a, c in coefficients.items() if c), key=lambda t: t[0].key)), const)

  @staticmethod
  def recombinable(coefficients: dict[Atom, int]) -> tuple[tuple[Div, Mod], int] | None:
    mods = [(a, c) for a, c in coefficients.items() if isinstance(a, Mod) and c]
    if not mods:
      return None
    for div, k in coefficients.items():
      if not isinstance(div, Div):
        continue
      for mod, c in mods:
        if k == c * mod.d and div.d % mod.d == 0 and div.x.floordiv(div.d // mod.d) == mod.x:
          return (div, mod), c
    return None

  @cached_property
  def key(self) -> tuple:
    return (3, tuple((a.key, c) for a, c in self.terms), self.const)

  @cached_property
  def _hash(self) -> int:
    return hash((3, tuple((a._hash, c) for a, c in self.terms), self.const))

  @cached_property
  def range(self) -> tuple[int, int]:
    low = high = self.const
    for atom, coefficient in self.terms:
      a, b = atom.bounds()
      low, high = low + min(a * coefficient, b * coefficient), high + max(a * coefficient, b * coefficient)
    return low, high

  @cached_property
  def quotients(self) -> dict[int, Lin]:
    return {}  # floordiv's results, by divisor

  def __add__(self, other: Lin | int) -> Lin:
    other = other if isinstance(other, Lin) else Lin.of(other)
    if not other.terms:
      return Lin(self.terms, self.const + other.const) if other.const else self
    merged: dict[Atom, int] = dict(self.terms)
    for atom, coefficient in other.terms:
      merged[atom] = merged.get(atom, 0) + coefficient
    return Lin.build(merged, self.const + other.const)

  def __mul__(self, factor: int) -> Lin:
    return Lin(tuple((a, c * factor) for a, c in self.terms), self.const * factor) if factor else Lin()

  def __sub__(self, other: Lin | int) -> Lin:
    return self + (other if isinstance(other, Lin) else Lin.of(other)) * -1

  def floordiv(self, d: int) -> Lin:
    if d == 1:
      return self
    if d not in self.quotients:
      self.quotients[d] = self.divided(d)
    return self.quotients[d]

  def split(self, d: int, toward_zero: bool = False) -> tuple[Lin, Lin]:
    """(whole, rest) with self = d whole + rest: every coefficient c as d q + r, r = c mod d in [0, d) or,
    `toward_zero`, with c's sign (the -1 of a flipped index stays -1, where mod 3 makes it 2), and the constant's r in
    [0, d)."""
    parts = [(a, c % d - d if toward_zero and c < 0 and c % d else c % d, c) for a, c in self.terms]
    whole = Lin(tuple((a, (c - r) // d) for a, r, c in parts if c != r), self.const // d)
    return whole, Lin(tuple((a, r) for a, r, _ in parts if r), self.const % d)

  def splits(self, d: int) -> Iterator[tuple[Lin, Lin]]:
    """The splits worth trying, the last with every r in [0, d): the one toward zero first where a coefficient is
    negative."""
    if any(c < 0 for _, c in self.terms):
      yield self.split(d, toward_zero=True)
    yield self.split(d)

  def divided(self, d: int) -> Lin:
    low, high = self.bounds()
    if low // d == high // d:
      return Lin.of(low // d)
    # the multiples of d leave the division exactly; the rest divides to a constant where its bounds allow, in one of
    # the two splits (3 x + 2 - y over 0 <= y < 3, divided by 3: x + (2 - y) // 3 = x, y's coefficient kept at -1)
    for whole, rest in self.splits(d):
      rest_low, rest_high = rest.bounds()
      if rest_low // d == rest_high // d:
        return whole + rest_low // d
    if len(rest.terms) == 1 and rest.const == 0 and rest.terms[0][1] == 1 and isinstance(rest.terms[0][0], Div):
      inner = rest.terms[0][0]  # (x // a) // d = x // (a d)
      return whole + Lin.of(Div(inner.x, inner.d * d))
    return whole + Lin.of(Div(rest, d))

  def factored(self, d: int) -> tuple[Lin, int, Lin] | None:
    """(a, g, s) with self = g a + s, g > 1 a divisor of d shared by some coefficients and s (the other terms and the
    constant) within [0, g): the form of a flattened index over dims it divides into (784 o + 28 y + x, x < 28, y < 28,
    as 784 o + (28 y + x)). The largest such g; None when there is none."""
    for g in sorted({gcd(c, d) for _, c in self.terms}, reverse=True):
      if g <= 1 or g == d:
        continue
      big = Lin(tuple((a, c // g) for a, c in self.terms if c % g == 0), 0)
      small = Lin(tuple((a, c) for a, c in self.terms if c % g), self.const)
      low, high = small.bounds()
      if big.terms and 0 <= low and high < g:
        return big, g, small
    return None

  def mod(self, d: int) -> Lin:
    if d == 1:
      return Lin()
    form = self
    while any(isinstance(a, Mod) and a.d % d == 0 for a, _ in form.terms):  # (x mod (k d)) mod d = x mod d
      coefficients: dict[Atom, int] = {}
      const = form.const
      for atom, coefficient in form.terms:
        if isinstance(atom, Mod) and atom.d % d == 0:
          for inner, c in atom.x.terms:
            coefficients[inner] = coefficients.get(inner, 0) + coefficient * c
          const += coefficient * atom.x.const
        else:
          coefficients[atom] = coefficients.get(atom, 0) + coefficient
      form = Lin.build(coefficients, const)
    for _, rest in form.splits(d):  # (c x) mod d = (r x) mod d for either split
      rest = Lin.build(dict(rest.terms), rest.const)  # its normal form, as the form's (a residue may recombine)
      low, high = rest.bounds()
      if 0 <= low and high < d:
        return rest
      if low // d == high // d:
        return rest - (low // d) * d
    return Lin.of(Mod(rest, d))


class Emitter:
  """Builds arith ops for linear forms at the current insertion point, reusing what it built."""

  def __init__(self) -> None:
    self.values: dict[object, ir.Value] = {}

  def constant(self, value: int) -> ir.Value:
    if ("const", value) not in self.values:
      self.values[("const", value)] = arith.constant(ir.IndexType.get(), value)
    return self.values[("const", value)]

  def atom(self, atom: Atom) -> ir.Value:
    """An atom's value; a division or modulo of a factored index (see Lin.factored) as that of its larger part:
    (784 o + 28 y + x) // 25088 as o // 32, with no division of the whole flattened index per element. The forms keep
    the atom itself, so that a split index still recombines (Lin.build)."""
    if isinstance(atom, Range):
      return atom.value
    if atom not in self.values and (split := atom.x.factored(atom.d)) is not None:
      big, g, small = split
      self.values[atom] = self.lin(
        big.floordiv(atom.d // g) if isinstance(atom, Div) else big.mod(atom.d // g) * g + small
      )
    if atom not in self.values:
      x = self.lin(atom.x)
      nonnegative = atom.x.bounds()[0] >= 0
      d = self.constant(atom.d)
      if isinstance(atom, Div):
        self.values[atom] = (arith.divui if nonnegative else arith.floordivsi)(x, d)
      else:
        self.values[atom] = arith.remui(x, d) if nonnegative else arith.remsi(arith.addi(arith.remsi(x, d), d), d)
    return self.values[atom]

  def lin(self, form: Lin) -> ir.Value:
    if not form.terms:
      return self.constant(form.const)
    if form in self.values:
      return self.values[form]
    total = None
    for atom, coefficient in form.terms:
      term = self.atom(atom) if coefficient == 1 else arith.muli(self.atom(atom), self.constant(coefficient))
      total = term if total is None else arith.addi(total, term)
    if form.const:
      total = arith.addi(total, self.constant(form.const))
    self.values[form] = total
    return total

  def condition(self, form: Lin, low: int, high: int) -> ir.Value:
    """i1: low <= form <= high (either check dropped where the bounds already prove it)."""
    checks, (min_value, max_value), value = [], form.bounds(), self.lin(form)
    if min_value < low:
      checks.append(arith.cmpi(arith.CmpIPredicate.sge, value, self.constant(low)))
    if max_value > high:
      checks.append(arith.cmpi(arith.CmpIPredicate.sle, value, self.constant(high)))
    result = checks[0] if checks else arith.constant(ir.IntegerType.get_signless(1), 1)
    for check in checks[1:]:
      result = arith.andi(result, check)
    return result
