"""Inverse trigonometric functions, from sqrt and a polynomial."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pytc.activations import float32_for_halves, polynomial

if TYPE_CHECKING:
  from pytc.tensor import Tensor

# asin(a) = a + a^3 p(a^2) on [-1/2, 1/2], relative error below 3e-16: a least-squares fit of (asin(a) - a) / a^3 weighted
# by the relative error of asin, highest power first
ASIN_NEAR_ZERO = (0.03142346162267279, -0.011571393348969176, 0.01817641576787047, 0.009406363438362196, 0.014317202916414539,
                  0.0173147823538935, 0.022374819514068105, 0.030381827869900513, 0.04464286010190126, 0.07499999996257024,
                  0.16666666666683178)


def asin_near_zero(x: Tensor) -> Tensor: return x + x * (x * x) * polynomial(x * x, ASIN_NEAR_ZERO)


class InverseTrig:
  """asin, acos and atan of Tensor (mixed into it); ints compute in the default float dtype, float16 and bfloat16 in float32."""
  def _asin_parts(self) -> tuple[Tensor, Tensor, Tensor]:
    """(|x| <= 1/2, asin(x) there, 2 asin(sqrt((1 - |x|) / 2)) = pi/2 - asin(|x|) elsewhere): the half-angle form keeps
    the polynomial's argument within 1/2, and each branch sees inputs where it is finite (no NaN gradient leaks from the
    branch not taken)."""
    magnitude = (self < 0).where(-self, self)  # not abs(): its gradient at NaN is 0, and NaN should reach the gradient
    inner = magnitude <= 0.5
    half_angle = ((1 - inner.where(0.0, magnitude)) * 0.5).sqrt()
    return inner, asin_near_zero(inner.where(self, 0.0)), 2 * asin_near_zero(half_angle)

  @float32_for_halves
  def asin(self) -> Tensor:
    """NaN outside [-1, 1]."""
    x = self._float_cast()
    inner, near, outer = x._asin_parts()
    return inner.where(near, (x < 0).where(outer - math.pi / 2, math.pi / 2 - outer))

  @float32_for_halves
  def acos(self) -> Tensor:
    """pi/2 - asin(x) near 0, from the half-angle form near +-1 (no cancellation where acos(x) is small). NaN outside [-1, 1]."""
    x = self._float_cast()
    inner, near, outer = x._asin_parts()
    return inner.where(math.pi / 2 - near, (x < 0).where(math.pi - outer, outer))

  @float32_for_halves
  def atan(self) -> Tensor:
    """asin(t / sqrt(1 + t^2)) with t = x, or t = 1/x when |x| > 1 (then sign(x) pi/2 minus it), so the asin argument
    stays within sqrt(1/2) and no step overflows for large |x|."""
    x = self._float_cast()
    inverted = x.abs() > 1
    t = inverted.where(1 / inverted.where(x, 1.0), x)
    near = (t / (1 + t * t).sqrt()).asin()
    return inverted.where((x < 0).where(-math.pi / 2 - near, math.pi / 2 - near), near)
