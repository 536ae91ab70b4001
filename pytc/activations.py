"""Activation functions and the hyperbolic and error functions they build on, written to hold at every float input:
saturating pieces are selected rather than subtracted (exact at any magnitude), an odd function selects its sign rather
than multiplying by sign(x) (so its gradient at 0 is its slope there), no step overflows or cancels where the result
does not, and a float16 or bfloat16 input is computed in float32 and rounded once."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pytc.dtype import DType, dtypes
from pytc.elementwise import float32_for_halves, polynomial
from pytc.gradient import by_slope
from pytc.template import templated

if TYPE_CHECKING:
  from pytc.tensor import Tensor

# above this, x*x + 1 rounds to x*x even in float64, so asinh and acosh are log(2x); x*x still fits in float32 below it
LOG_2X_ABOVE = 2.0 ** 28
# erf(x) = x + x r(x^2) below ERF_NEAR_BELOW, r the Chebyshev fit of erf(x) / x - 1 in x^2 on [0, 1], highest power first
ERF_NEAR_BELOW = 1.0
ERF_NEAR = {
  dtypes.float32: (-0.0005648059865503044, 0.004921762027877231, -0.02671505423226643, 0.11280316652505075, -0.37612343775327806,
                   0.12837912617873729),
  dtypes.float64: (-7.795898827002142e-10, 1.3720064546777686e-08, -1.6208483801871705e-07, 1.6447424703317362e-06, -1.492473690741966e-05,
                   0.00012055294904839707, -0.0008548325975389692, 0.0052239776071164225, -0.02686617064323777,
                   0.11283791670945006, -0.37612638903183543, 0.12837916709551256)}
# above it, erf(a) = 1 - e^(-a^2) g(u): g the Chebyshev fit of e^(a^2) erfc(a) in u = (4 / (4 + a) - center) / radius, which maps
# [1, saturation] onto [-1, 1]; beyond saturation erf rounds to 1. (saturation, center, radius, g highest power first)
ERF_TAIL = {
  dtypes.float32: (4.0, 0.65, 0.15, (5.44499678576978e-06, 5.1900222848445644e-05, 0.000366031242942286, 0.0021100190987117704,
                                     0.010069741511319157, 0.04022813162427183, 0.1348508414829725, 0.2399014630747598)),
  dtypes.float64: (6.0, 0.6, 0.2, (-7.970561922845925e-13, 5.9943243455437045e-12, 6.917780982018686e-11, -1.0609088834225667e-10,
                                   -4.956466489229388e-09, -2.5772220860626256e-08, 1.4320649275925599e-07, 3.498817724639476e-06,
                                   3.346127706454e-05, 0.00022259643172453767, 0.0011615374405673708, 0.004990286041095359,
                                   0.018078437227012082, 0.055891085566079926, 0.14812992991458332, 0.19907263099386566))}
# sinh and cosh above this are (e^(a/2) / 2) e^(a/2): e^a alone overflows before they do
HALF_EXP_ABOVE = 20.0


def fitted(table: dict[DType, Any], dtype: DType) -> Any:
  """The float64 entry of a per-dtype table of fits for float64, the float32 one for the other floats (computed in float32)."""
  return table[dtypes.float64 if dtype == dtypes.float64 else dtypes.float32]


GELU_K, GELU_C = math.sqrt(8 / math.pi), 0.044715  # gelu's tanh form: x sigmoid(K (x + C x^3))


def _gelu_gate(x: Tensor) -> Tensor: return (GELU_K * (x + GELU_C * x * x * x)).sigmoid()


def _gated_slope(x: Tensor, gate: Tensor, gate_slope: Tensor) -> Tensor:
  """d/dx of x * gate(x): gate + x * gate', the second term 0 where gate' is (so the limits at +-inf are 1 and 0, not NaN)."""
  return gate + (gate_slope == 0).where(0.0, x * gate_slope)


def _gelu_tanh_slope(x: Tensor) -> Tensor:
  s = _gelu_gate(x)
  spread = s * (1 - s)  # 0 where the gate saturates, where x * x may be inf
  return _gated_slope(x, s, (spread == 0).where(0.0, spread * (GELU_K * (1 + 3 * GELU_C * x * x))))


def _gelu_erf_slope(x: Tensor) -> Tensor:
  return _gated_slope(x, 0.5 * (1 + (x * (1 / math.sqrt(2))).erf()), (x * x * -0.5).exp() * (1 / math.sqrt(2 * math.pi)))


def _quick_gelu_slope(x: Tensor) -> Tensor:
  s = (x * 1.702).sigmoid()
  return _gated_slope(x, s, s * (1 - s) * 1.702)


def _silu_slope(x: Tensor) -> Tensor:
  s = x.sigmoid()
  return _gated_slope(x, s, s * (1 - s))


class Activations:
  """The activation, hyperbolic and error functions of Tensor (mixed into it). Those building more than a node or two are
  graph templates (template.py): a call with a signature seen before rebuilds the recorded graph without running the
  composition's Python again (tanh of 1K elements realized plainly: 104 -> 37 us)."""
  def _odd(self, of_magnitude: Callable[[Tensor], Tensor]) -> Tensor:
    """An odd function from its values at |x|: the sign is selected, so the gradient at 0 is the function's slope there
    (sign(x) * f(|x|) has none). f(-0.0) keeps the sign of zero that f gives."""
    negative = self < 0
    y = of_magnitude(negative.where(-self, self))
    return negative.where(-y, y)

  @templated
  def relu(self) -> Tensor:
    """max(self, 0) keeping NaN, with gradient 0 at 0 as torch (maximum would split it at the tie)."""
    return ((self < 0) | (self == 0)).where(0, self)
  @templated
  def leaky_relu(self, neg_slope: float = 0.01) -> Tensor: return (self < 0).where(self * neg_slope, self)
  @templated
  def relu6(self) -> Tensor:
    """min(max(x, 0), 6) by selection: exact at any magnitude; gradient 0 at 0 (as relu) and 1 at 6."""
    return self.relu().clip(max_=6)
  def hardtanh(self, min_val: float = -1, max_val: float = 1) -> Tensor: return self.clip(min_val, max_val)
  @templated
  @float32_for_halves
  def hardsigmoid(self, alpha: float = 1 / 6, beta: float = 0.5) -> Tensor:
    """alpha * x + beta limited to [0, 1] by selection; gradient 0 where it reaches 0 and alpha where it reaches 1."""
    return (alpha * self + beta).relu().clip(max_=1)
  @templated
  def hardswish(self) -> Tensor:
    """x * hardsigmoid(x): x itself beyond 3, so no step overflows."""
    return self * self.hardsigmoid()

  @templated
  @float32_for_halves
  def gelu(self, approximate: str = "tanh") -> Tensor:
    """approximate="tanh": 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), evaluated as x sigmoid(2u) (the same
    function), which keeps its relative precision where tanh(u) nears -1 and costs one exponential; "none": the exact erf form."""
    x = self._float_cast()
    if approximate == "tanh": return by_slope(x * _gelu_gate(x), x, _gelu_tanh_slope)
    if approximate == "none": return by_slope(0.5 * x * (1 + (x * (1 / math.sqrt(2))).erf()), x, _gelu_erf_slope)
    raise RuntimeError(f"gelu approximate must be 'tanh' or 'none', got {approximate!r}")
  @templated
  @float32_for_halves
  def quick_gelu(self) -> Tensor: return by_slope(self * (self * 1.702).sigmoid(), self, _quick_gelu_slope)
  @templated
  @float32_for_halves
  def silu(self) -> Tensor: return by_slope(self * self.sigmoid(), self, _silu_slope)
  swish = silu
  def _exponential_linear(self, linear: Tensor, linear_part: Tensor, alpha: float, scale: float = 1.0) -> Tensor:
    """linear_part where `linear`, alpha * (e^(x / scale) - 1) elsewhere, from expm1 (no cancellation at tiny x). The kinks'
    gradients follow tinygrad's compositions: elu'(0) = 0 (relu's), selu'(0) = gamma, celu'(0) = 1."""
    return linear.where(linear_part, alpha * (linear.where(0.0, self) * (1 / scale))._expm1())
  @templated
  @float32_for_halves
  def elu(self, alpha: float = 1.0) -> Tensor:
    x = self._float_cast()
    return x._exponential_linear(x >= 0, x.relu(), alpha)
  @templated
  @float32_for_halves
  def selu(self, alpha: float = 1.67326, gamma: float = 1.0507) -> Tensor:
    x = self._float_cast()
    return gamma * x._exponential_linear(x >= 0, x, alpha)
  @templated
  @float32_for_halves
  def celu(self, alpha: float = 1.0) -> Tensor:
    x = self._float_cast()
    return x._exponential_linear(x > 0, x, alpha, scale=alpha)
  @templated
  @float32_for_halves
  def softplus(self, beta: float = 1.0) -> Tensor: return (self * beta).logaddexp(0.0) * (1 / beta)
  @templated
  @float32_for_halves
  def mish(self) -> Tensor: return self * self.softplus().tanh()
  @templated
  @float32_for_halves
  def logsigmoid(self) -> Tensor: return -(-self).softplus()
  @templated
  @float32_for_halves
  def softsign(self) -> Tensor: return self / (1 + self.abs())

  @templated
  @float32_for_halves
  def sigmoid(self) -> Tensor:
    """1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) below, from e^-|x|: nothing overflows, and the result keeps its relative
    precision down to the smallest floats."""
    x = self._float_cast()
    negative = x < 0
    e = negative.where(x, -x).exp()
    s = (1 + e).reciprocal()
    return negative.where(e * s, s)
  def tanh(self) -> Tensor: return self._float_unary("tanh")
  @templated
  @float32_for_halves
  def sinh(self) -> Tensor:
    """Odd; (e + e / (e + 1)) / 2 with e = expm1(|x|) (no cancellation near 0), (e^(a/2) / 2) e^(a/2) for large a."""
    def of_magnitude(a: Tensor) -> Tensor:
      large = a > HALF_EXP_ABOVE
      e = large.where(0.0, a)._expm1()
      half = (large.where(a, 0.0) * 0.5).exp()
      return large.where(half * 0.5 * half, (e + e / (e + 1)) * 0.5)
    return self._float_cast()._odd(of_magnitude)
  @templated
  @float32_for_halves
  def cosh(self) -> Tensor:
    """(e^a + e^-a) / 2 of a = |x|, (e^(a/2) / 2) e^(a/2) for large a: finite wherever cosh is."""
    x = self._float_cast()
    a = (x < 0).where(-x, x)  # abs would pass a NaN input no gradient
    large = a > HALF_EXP_ABOVE
    e = large.where(0.0, a).exp()
    half = (large.where(a, 0.0) * 0.5).exp()
    return large.where(half * 0.5 * half, 0.5 * e + 0.5 / e)
  @templated
  @float32_for_halves
  def atanh(self) -> Tensor:
    """Odd; log1p(2a + 2a^2 / (1 - a)) / 2 of a = |x| (no cancellation near 0); inf at 1. NaN beyond, where the gradient is
    still 1 / (1 - x^2), as torch's."""
    def of_magnitude(a: Tensor) -> Tensor:
      outside = a > 1
      inside = outside.where(0.0, a)
      beyond = outside.where(a, 2.0)
      return outside.where(((1 + beyond) / (1 - beyond)).log() * 0.5, (2 * inside + 2 * inside * inside / (1 - inside))._log1p() * 0.5)
    return self._float_cast()._odd(of_magnitude)
  @templated
  @float32_for_halves
  def asinh(self) -> Tensor:
    """log1p(a + a^2 / (1 + sqrt(1 + a^2))) of a = |x| (log(a) + log(2) for large a), with x's sign."""
    def of_magnitude(a: Tensor) -> Tensor:
      large = a > LOG_2X_ABOVE
      small = large.where(0.0, a)  # each branch sees inputs where it is finite, so the one not taken passes no NaN gradient
      near = (small + small * small / (1 + (1 + small * small).sqrt()))._log1p()
      return large.where(large.where(a, 1.0).log() + math.log(2), near)
    return self._float_cast()._odd(of_magnitude)
  @templated
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
    outside = (w + (w * w - 1).sqrt()).log() + math.nan  # NaN throughout (an overflowing x^2 makes the log inf): the log supplies the gradient
    return below.where(outside, large.where(large.where(x, 1.0).log() + math.log(2), near))

  @templated
  @float32_for_halves
  def erf(self) -> Tensor:
    """x + x r(x^2) below |x| = 1 (exact at 0, and in relative terms near it), 1 - e^(-a^2) g(u) above, with x's sign; both
    fitted per dtype, within a few ulp in float32 and float64."""
    x = self._float_cast()
    near_range = x.abs() < ERF_NEAR_BELOW
    near = near_range.where(x, 0.0)
    saturation, center, radius, g = fitted(ERF_TAIL, x.dtype)
    def tail(a: Tensor) -> Tensor:
      a = (a > saturation).where(saturation, a)
      return 1 - (-a * a).exp() * polynomial((4 / (4 + a) - center) * (1 / radius), g)
    return near_range.where(near + near * polynomial(near * near, fitted(ERF_NEAR, x.dtype)), x._odd(tail))
