"""Symbolic index arithmetic for rangeify: integer linear forms over ranges, with floor division
and modulo atoms, simplified with the value bounds of the ranges. Emitted as arith ops on `index`."""
from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith


@dataclass(frozen=True)
class Range:
  """A loop index in [0, size)."""
  id: int
  size: int
  value: ir.Value | None = None  # the uop.range op's result, when emitted

  def __hash__(self) -> int: return hash(("range", self.id))
  def __eq__(self, other: object) -> bool: return isinstance(other, Range) and other.id == self.id
  def bounds(self) -> tuple[int, int]: return (0, self.size - 1)


@dataclass(frozen=True)
class Div:
  """floor(x / d), d > 0."""
  x: Lin
  d: int
  def bounds(self) -> tuple[int, int]: return (self.x.bounds()[0] // self.d, self.x.bounds()[1] // self.d)


@dataclass(frozen=True)
class Mod:
  """x mod d (the result has the sign of d, as in Python), d > 0."""
  x: Lin
  d: int
  def bounds(self) -> tuple[int, int]: return (0, self.d - 1)


Atom = Range | Div | Mod


@dataclass(frozen=True)
class Lin:
  """const + sum(coefficient * atom)."""
  terms: tuple[tuple[Atom, int], ...] = ()
  const: int = 0

  @staticmethod
  def of(value: int | Atom) -> Lin: return Lin((), value) if isinstance(value, int) else Lin(((value, 1),), 0)

  def bounds(self) -> tuple[int, int]:
    low = high = self.const
    for atom, coefficient in self.terms:
      a, b = atom.bounds()
      low, high = low + min(a * coefficient, b * coefficient), high + max(a * coefficient, b * coefficient)
    return low, high

  def __add__(self, other: Lin | int) -> Lin:
    other = other if isinstance(other, Lin) else Lin.of(other)
    merged: dict[Atom, int] = dict(self.terms)
    for atom, coefficient in other.terms: merged[atom] = merged.get(atom, 0) + coefficient
    return Lin(tuple(sorted(((a, c) for a, c in merged.items() if c), key=lambda t: repr(t[0]))), self.const + other.const)

  def __mul__(self, factor: int) -> Lin:
    return Lin(tuple((a, c * factor) for a, c in self.terms), self.const * factor) if factor else Lin()

  def __sub__(self, other: Lin | int) -> Lin: return self + (other if isinstance(other, Lin) else Lin.of(other)) * -1

  def floordiv(self, d: int) -> Lin:
    if d == 1: return self
    low, high = self.bounds()
    if low // d == high // d: return Lin.of(low // d)
    # c = (c // d) d + c % d for every coefficient: the multiples of d leave the division exactly
    whole = Lin(tuple((a, c // d) for a, c in self.terms if c // d), self.const // d)
    rest = Lin(tuple((a, c % d) for a, c in self.terms if c % d), self.const % d)
    rest_low, rest_high = rest.bounds()
    if rest_low // d == rest_high // d: return whole + rest_low // d
    if len(rest.terms) == 1 and rest.const == 0 and rest.terms[0][1] == 1 and isinstance(rest.terms[0][0], Div):
      inner = rest.terms[0][0]
      return whole + Lin.of(Div(inner.x, inner.d * d))
    return whole + Lin.of(Div(rest, d))

  def mod(self, d: int) -> Lin:
    if d == 1: return Lin()
    rest = Lin(tuple((a, c % d) for a, c in self.terms if c % d), self.const % d)  # (c x) mod d = ((c mod d) x) mod d
    low, high = rest.bounds()
    if 0 <= low and high < d: return rest
    if low // d == high // d: return rest - (low // d) * d
    return Lin.of(Mod(rest, d))


class Emitter:
  """Builds arith ops for linear forms at the current insertion point, reusing what it built."""
  def __init__(self) -> None:
    self.values: dict[object, ir.Value] = {}

  def constant(self, value: int) -> ir.Value:
    if ("const", value) not in self.values: self.values[("const", value)] = arith.constant(ir.IndexType.get(), value)
    return self.values[("const", value)]

  def atom(self, atom: Atom) -> ir.Value:
    if isinstance(atom, Range): return atom.value
    if atom not in self.values:
      x = self.lin(atom.x)
      nonnegative = atom.x.bounds()[0] >= 0
      d = self.constant(atom.d)
      if isinstance(atom, Div): self.values[atom] = (arith.divui if nonnegative else arith.floordivsi)(x, d)
      else: self.values[atom] = arith.remui(x, d) if nonnegative else arith.remsi(arith.addi(arith.remsi(x, d), d), d)
    return self.values[atom]

  def lin(self, form: Lin) -> ir.Value:
    if not form.terms: return self.constant(form.const)
    if form in self.values: return self.values[form]
    total = None
    for atom, coefficient in form.terms:
      term = self.atom(atom) if coefficient == 1 else arith.muli(self.atom(atom), self.constant(coefficient))
      total = term if total is None else arith.addi(total, term)
    if form.const: total = arith.addi(total, self.constant(form.const))
    self.values[form] = total
    return total

  def condition(self, form: Lin, low: int, high: int) -> ir.Value:
    """i1: low <= form <= high (either check dropped where the bounds already prove it)."""
    checks, (min_value, max_value), value = [], form.bounds(), self.lin(form)
    if min_value < low: checks.append(arith.cmpi(arith.CmpIPredicate.sge, value, self.constant(low)))
    if max_value > high: checks.append(arith.cmpi(arith.CmpIPredicate.sle, value, self.constant(high)))
    result = checks[0] if checks else arith.constant(ir.IntegerType.get_signless(1), 1)
    for check in checks[1:]: result = arith.andi(result, check)
    return result
