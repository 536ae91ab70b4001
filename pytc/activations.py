"""Activation functions and the hyperbolic and error functions they build on, written to hold at every float input:
saturating pieces are selected rather than subtracted (exact at any magnitude), an odd function selects its sign rather
than multiplying by sign(x) (so its gradient at 0 is its slope there), no step overflows or cancels where the result
does not, and a float16 or bfloat16 input is computed in float32 and rounded once."""
from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pytc.dtype import dtypes

if TYPE_CHECKING:
  from pytc.tensor import Tensor

# above this, x*x + 1 rounds to x*x even in float64, so asinh and acosh are log(2x); x*x still fits in float32 below it
LOG_2X_ABOVE = 2.0 ** 28
# erf(x) = 2/sqrt(pi) sum_n (-1)^n x^(2n+1) / (n! (2n+1)): ten terms are exact to 2e-14 below ERF_SERIES_BELOW
ERF_SERIES = tuple((-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(10))
ERF_SERIES_BELOW = 0.5
# erf(x) = 1 - t p(t) exp(-x^2), t = 1 / (1 + 0.3275911 x), absolute error below 1.5e-7 (Abramowitz and Stegun 7.1.26)
ERF_TAIL = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)


def polynomial(x: Tensor, coefficients: Sequence[float]) -> Tensor:
  """sum c_i x^(n-i), the coefficients from the highest power down (Horner's rule)."""
  result = x * coefficients[0] + coefficients[1]
  for c in coefficients[2:]: result = result * x + c
  return result


def float32_for_halves(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
  """fn of a float16 or bfloat16 tensor evaluated in float32 and rounded back once: a composition evaluated in the half
  type rounds at every step, and its errors add up or cancel the result away."""
  @functools.wraps(fn)
  def widened(self: Tensor, *args, **kwargs) -> Tensor:
    if self.dtype not in (dtypes.float16, dtypes.bfloat16): return fn(self, *args, **kwargs)
    return fn(self.cast(dtypes.float32), *args, **kwargs).cast(self.dtype)
  return widened


class Activations:
  """The activation, hyperbolic and error functions of Tensor (mixed into it)."""
  def _odd(self, of_magnitude: Callable[[Tensor], Tensor]) -> Tensor:
    """An odd function from its values at |x|: the sign is selected, so the gradient at 0 is the function's slope there
    (sign(x) * f(|x|) has none). f(-0.0) keeps the sign of zero that f gives."""
    negative = self < 0
    y = of_magnitude(negative.where(-self, self))
    return negative.where(-y, y)

  def _log1p(self) -> Tensor:
    """log(1 + x), accurate for small x: log(w) * x / (w - 1) with w = 1 + x rounded corrects w's rounding error (x itself
    where w is 1). For finite x > -1."""
    w = 1 + self
    one = w == 1
    return one.where(self, w.log() * (self / one.where(1, w - 1)))

  def leaky_relu(self, neg_slope: float = 0.01) -> Tensor: return (self < 0).where(self * neg_slope, self)
  def relu6(self) -> Tensor:
    """min(max(x, 0), 6) by selection: exact at any magnitude; gradient 0 at 0 (as relu) and 1 at 6."""
    return self.relu().clip(max_=6)
  def hardtanh(self, min_val: float = -1, max_val: float = 1) -> Tensor: return self.clip(min_val, max_val)
  @float32_for_halves
  def hardsigmoid(self, alpha: float = 1 / 6, beta: float = 0.5) -> Tensor:
    """alpha * x + beta limited to [0, 1] by selection; gradient 0 where it reaches 0 and alpha where it reaches 1."""
    return (alpha * self + beta).relu().clip(max_=1)
  def hardswish(self) -> Tensor:
    """x * hardsigmoid(x): x itself beyond 3, so no step overflows."""
    return self * self.hardsigmoid()

  @float32_for_halves
  def gelu(self, approximate: str = "tanh") -> Tensor:
    x = self._float_cast()
    if approximate == "tanh": return 0.5 * x * (1 + (math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)).tanh())
    if approximate == "none": return 0.5 * x * (1 + (x * (1 / math.sqrt(2))).erf())
    raise RuntimeError(f"gelu approximate must be 'tanh' or 'none', got {approximate!r}")
  @float32_for_halves
  def quick_gelu(self) -> Tensor: return self * (self * 1.702).sigmoid()
  @float32_for_halves
  def silu(self) -> Tensor: return self * self.sigmoid()
  swish = silu
  @float32_for_halves
  def elu(self, alpha: float = 1.0) -> Tensor: return self.relu() - alpha * (1 - self.exp()).relu()
  @float32_for_halves
  def selu(self, alpha: float = 1.67326, gamma: float = 1.0507) -> Tensor: return gamma * (self >= 0).where(self, alpha * (self.exp() - 1))
  @float32_for_halves
  def celu(self, alpha: float = 1.0) -> Tensor: return self.maximum(0) + (alpha * ((self / alpha).exp() - 1)).minimum(0)
  @float32_for_halves
  def softplus(self, beta: float = 1.0) -> Tensor: return (self * beta).logaddexp(0.0) * (1 / beta)
  @float32_for_halves
  def mish(self) -> Tensor: return self * self.softplus().tanh()
  @float32_for_halves
  def logsigmoid(self) -> Tensor: return -(-self).softplus()
  @float32_for_halves
  def softsign(self) -> Tensor: return self / (1 + self.abs())

  @float32_for_halves
  def sinh(self) -> Tensor: return (self.exp() - (-self).exp()) / 2
  @float32_for_halves
  def cosh(self) -> Tensor: return (self.exp() + (-self).exp()) / 2
  @float32_for_halves
  def atanh(self) -> Tensor: return ((1 + self) / (1 - self)).log() / 2
  @float32_for_halves
  def asinh(self) -> Tensor:
    """log1p(a + a^2 / (1 + sqrt(1 + a^2))) of a = |x| (log(a) + log(2) for large a), with x's sign."""
    def of_magnitude(a: Tensor) -> Tensor:
      large = a > LOG_2X_ABOVE
      small = large.where(0.0, a)  # each branch sees inputs where it is finite, so the one not taken passes no NaN gradient
      near = (small + small * small / (1 + (1 + small * small).sqrt()))._log1p()
      return large.where(large.where(a, 1.0).log() + math.log(2), near)
    return self._float_cast()._odd(of_magnitude)
  @float32_for_halves
  def acosh(self) -> Tensor:
    """log1p(t + sqrt(t) sqrt(x + 1)) with t = x - 1 (log(x) + log(2) for large x). NaN below 1, where the gradient is
    still 1/sqrt(x^2 - 1) (inf at -1, NaN between -1 and 1), as torch's."""
    x = self._float_cast()
    below, large = x < 1, x > LOG_2X_ABOVE
    inside = (below | large).where(2.0, x)
    t = inside - 1
    near = (t + t.sqrt() * (inside + 1).sqrt())._log1p()
    w = below.where(x, -2.0)
    outside = (w + (w * w - 1).sqrt()).log()
    return below.where(outside, large.where(large.where(x, 1.0).log() + math.log(2), near))

  @float32_for_halves
  def erf(self) -> Tensor:
    """A power series below |x| = 1/2 (exact at 0, and in relative terms near it), Abramowitz and Stegun 7.1.26 above
    (absolute error below 1.5e-7)."""
    x = self._float_cast()
    series_range = x.abs() < ERF_SERIES_BELOW
    near = series_range.where(x, 0.0)
    series = near * polynomial(near * near, ERF_SERIES[::-1]) * (2 / math.sqrt(math.pi))
    def tail(a: Tensor) -> Tensor:
      t = 1 / (1 + 0.3275911 * a)
      return 1 - t * polynomial(t, ERF_TAIL) * (-a * a).exp()
    return series_range.where(series, x._odd(tail))
