"""Elementwise math: arithmetic between tensors and Python scalars with broadcasting, rounding, exponentials, logarithms,
trigonometric and inverse trigonometric functions, bitwise ops and tests such as isnan or isclose. Ints compute in the default
float dtype where the result is a float; a composition that float16 or bfloat16 would round at every step computes in
float32 and rounds once."""
from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pytc.dtype import Scalar, dtypes, is_weak
from pytc.graph import LazyOp
from pytc.movement import broadcast_shape
from pytc.template import templated

if TYPE_CHECKING:
  from pytc.tensor import Tensor


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


# asin(a) = a + a^3 p(a^2) on [-1/2, 1/2], relative error below 3e-16: a least-squares fit of (asin(a) - a) / a^3 weighted
# by the relative error of asin, highest power first
ASIN_NEAR_ZERO = (0.03142346162267279, -0.011571393348969176, 0.01817641576787047, 0.009406363438362196, 0.014317202916414539,
                  0.0173147823538935, 0.022374819514068105, 0.030381827869900513, 0.04464286010190126, 0.07499999996257024,
                  0.16666666666683178)


def asin_near_zero(x: Tensor) -> Tensor: return x + x * (x * x) * polynomial(x * x, ASIN_NEAR_ZERO)


class Elementwise:
  """The elementwise math methods of Tensor (mixed into it)."""
  def _float_cast(self) -> Tensor:
    """Self as a float: ints and bool as default_float (a weak int as the weak float)."""
    return self if self.dtype.is_float else self.cast(dtypes.weakfloat if is_weak(self.dtype) else dtypes.default_float)
  def _float_unary(self, op: str) -> Tensor:
    return self._float_cast()._unary(op)

  # *** unary math ***

  def neg(self) -> Tensor: return self.logical_not() if self.dtype is dtypes.bool else self._unary("neg")
  def exp(self) -> Tensor: return self._float_unary("exp")
  def exp2(self) -> Tensor: return self._float_unary("exp2")
  def log(self) -> Tensor: return self._float_unary("log")
  def log2(self) -> Tensor: return self._float_unary("log2")
  def log10(self) -> Tensor: return self.log2() * math.log10(2)
  def sqrt(self) -> Tensor: return self._float_unary("sqrt")
  def rsqrt(self) -> Tensor: return self.sqrt().reciprocal()
  def reciprocal(self) -> Tensor: return self._float_unary("recip")
  def square(self) -> Tensor: return self * self
  def abs(self) -> Tensor: return self if self.dtype.is_unsigned or self.dtype.is_bool else self.maximum(-self)
  def sign(self) -> Tensor:
    """-1, 0 or 1 (NaN stays NaN); its gradient is 0."""
    return (self < 0).where(-1, (self > 0).where(1, self * 0))
  def trunc(self) -> Tensor:
    """Rounds toward zero; integers and bools are already whole, so they come back unchanged (dtype kept)."""
    return self._unary("trunc") if self.dtype.is_float else self
  def floor(self) -> Tensor:
    if not self.dtype.is_float: return self
    t = self.trunc()
    return (self < t).where(t - 1, t)
  def ceil(self) -> Tensor:
    if not self.dtype.is_float: return self
    t = self.trunc()
    return (self > t).where(t + 1, t)
  def round(self) -> Tensor:
    """Round half to even, as tinygrad and NumPy; integers and bools come back unchanged, as torch."""
    if not self.dtype.is_float: return self
    nearest = (self + 0.5).floor()
    tie = (self + 0.5) == nearest
    odd = (nearest * 0.5).floor() * 2 != nearest
    return (tie & odd).where(nearest - 1, nearest)
  def sin(self) -> Tensor: return self._float_unary("sin")
  def cos(self) -> Tensor: return self._float_unary("cos")
  @float32_for_halves
  def tan(self) -> Tensor:
    """sin / cos; for float32 the quotient is taken in float64 and rounded once (sin and cos are each within 0.5 ulp)."""
    x = self._float_cast()
    return (x.sin().double() / x.cos().double()).cast(x.dtype) if x.dtype == dtypes.float32 else x.sin() / x.cos()

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

  def _log1p(self) -> Tensor:
    """log(1 + x), accurate for small x: log(w) * x / (w - 1) with w = 1 + x rounded corrects w's rounding error (x itself
    where w is 1, inf where it is inf). For x > -1."""
    w = 1 + self
    one, infinite = w == 1, w == math.inf
    return one.where(self, w.log() * infinite.where(1.0, self / (one | infinite).where(1, w - 1)))

  def _expm1(self) -> Tensor:
    """e^x - 1, accurate for small x: (u - 1) * x / log(u) with u = e^x rounded corrects u's rounding error (x itself where
    u is 1, u - 1 where that is -1 or inf)."""
    u = self.exp()
    one, saturated = u == 1, (u - 1 == -1) | (u == math.inf)
    safe = (one | saturated).where(2.0, u)  # the branches not taken see a finite u != 1, so they pass no NaN gradient
    return one.where(self, saturated.where(u - 1, (safe - 1) * (self / safe.log())))

  # *** broadcasted ***

  def add(self, x: Tensor | Scalar, reverse: bool = False) -> Tensor: return self._binary("add", x, reverse)
  def mul(self, x: Tensor | Scalar, reverse: bool = False) -> Tensor: return self._binary("mul", x, reverse)
  def sub(self, x: Tensor | Scalar, reverse: bool = False) -> Tensor:
    a, b = self._broadcasted(x, reverse)
    return (a.float() - b.float()).cast(a.dtype) if a.dtype.is_fp8 else a + (-b)
  def div(self, x: Tensor | Scalar, reverse: bool = False, rounding_mode: str | None = None) -> Tensor:
    """True division; rounding_mode "trunc" rounds the quotient toward zero, "floor" down (integers stay integers)."""
    if rounding_mode not in (None, "trunc", "floor"): raise RuntimeError(f"div rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
    a, b = self._broadcasted(x, reverse)
    if rounding_mode is not None and not a.dtype.is_float and not a.dtype.is_bool: return a.idiv(b) if rounding_mode == "trunc" else a.floordiv(b)
    if a.dtype.is_fp8: return a.float().div(b.float(), rounding_mode=rounding_mode).cast(a.dtype)  # one rounding, not two
    quotient = a._float_cast() * b._float_cast().reciprocal()
    return quotient if rounding_mode is None else quotient.trunc() if rounding_mode == "trunc" else quotient.floor()
  def idiv(self, x: Tensor | Scalar, reverse: bool = False) -> Tensor:
    """Integer division rounding toward zero (C's), for integer tensors."""
    a, b = self._broadcasted(x, reverse)
    if a.dtype.is_float or a.dtype.is_bool: raise TypeError(f"idiv needs integer tensors, got {a.dtype}")
    return a._binary("idiv", b)
  def floordiv(self, x: Tensor | Scalar, reverse: bool = False) -> Tensor:
    """Python's `//`: floor of the quotient (for floats, floor of the true quotient)."""
    a, b = self._broadcasted(x, reverse)
    if a.dtype.is_float: return (a / b).floor()
    q = a.idiv(b)
    return ((q * b != a) & ((a < 0) != (b < 0))).where(q - 1, q)
  def mod(self, x: Tensor | Scalar, reverse: bool = False) -> Tensor:
    """Python's `%`: the remainder has the sign of the divisor."""
    a, b = self._broadcasted(x, reverse)
    return a - a.floordiv(b) * b
  def fmod(self, x: Tensor | float) -> Tensor:
    """C's fmod: the remainder has the sign of the dividend."""
    a, b = self._broadcasted(x)
    return a - (a / b).trunc() * b if a.dtype.is_float else a._binary("mod", b)
  def maximum(self, x: Tensor | Scalar) -> Tensor: return self._binary("max", x)
  def minimum(self, x: Tensor | Scalar) -> Tensor:
    """max of the inverted inputs, inverted back: negation for floats, bitwise not for integers (which cannot overflow)."""
    a, b = self._broadcasted(x)
    return -((-a).maximum(-b)) if a.dtype.is_float else ~((~a).maximum(~b))
  def pow(self, x: Tensor | Scalar, reverse: bool = False) -> Tensor:
    """Integer tensors raised to integer powers stay integers (wrapping as multiplication does)."""
    a, b = self._broadcasted(x, reverse)
    if a.dtype.is_float: return a._binary("pow", b)
    if a.dtype.is_bool: a, b = a.cast(dtypes.default_int), b.cast(dtypes.default_int)
    if isinstance(x, type(self)) or reverse: return a._int_pow(b)
    if not isinstance(x, int) or x < 0: raise RuntimeError(f"pow of {a.dtype} needs a float tensor or an int exponent >= 0, got {x!r}")
    return a._int_pow_const(x)
  def _int_pow_const(self, exponent: int) -> Tensor:
    result, square = None, self
    while exponent:
      if exponent & 1: result = square if result is None else result * square
      exponent >>= 1
      if exponent: square = square * square
    return self.ones_like() if result is None else result
  def _int_pow(self, exponent: Tensor) -> Tensor:
    """Square-and-multiply over the exponent's bits; a negative exponent gives 1/base truncated (0 unless base is +-1)."""
    result, square, bits = self.ones_like(), self, exponent.maximum(0)
    for _ in range(8 * exponent.dtype.itemsize - (0 if exponent.dtype.is_unsigned else 1)):
      result = (bits & 1).cast(dtypes.bool).where(result * square, result)
      square, bits = square * square, bits >> 1
    if exponent.dtype.is_unsigned: return result
    unit = (self == -1).where((exponent & 1).cast(dtypes.bool).where(-1, 1), (self == 1).cast(self.dtype))
    return (exponent < 0).where(unit, result)
  def where(self, x: Tensor | Scalar, y: Tensor | Scalar) -> Tensor:
    """x where self is true, else y; a Python scalar takes the other operand's dtype as in arithmetic."""
    if isinstance(x, type(self)): a, b = x._broadcasted(y)
    elif isinstance(y, type(self)): a, b = y._broadcasted(x, reverse=True)
    else: a, b = type(self)(LazyOp("const", dtypes.of_scalar(x), self.shape, self.device, arg=x))._broadcasted(y)
    shape = broadcast_shape(self.shape, a.shape)
    condition, a, b = self.cast(dtypes.bool)._expanded_to(shape), a._expanded_to(shape), b._expanded_to(shape)
    return type(self)(LazyOp("where", a.dtype, shape, a.device, (condition.lazydata, a.lazydata, b.lazydata)))
  def clip(self, min_=None, max_=None) -> Tensor:
    """Bounds are selected, not maxed, so the gradient at a bound is 1 (as torch); max_ wins where min_ > max_."""
    if min_ is None and max_ is None: raise RuntimeError("clip needs min_ or max_")
    x = self if min_ is None else (self < min_).where(min_, self)
    return x if max_ is None else (x > max_).where(max_, x)
  clamp = clip
  def lerp(self, end: Tensor, weight: Tensor | float) -> Tensor:
    if self.dtype is dtypes.uint8 and isinstance(weight, type(self)): return self._lerp_uint8(end, weight)
    return self + (end - self) * weight
  def _lerp_uint8(self, end: Tensor, weight: Tensor) -> Tensor:
    """self + (end - self) * weight for uint8 in 7-bit fixed point, rounding half up, as uint8 image resampling does;
    the difference is taken in int16, so it is exact for any pair of values."""
    step = (end.cast(dtypes.int16) - self.cast(dtypes.int16)) * (weight * 128 + 0.5).cast(dtypes.int16) + 64
    return (self.cast(dtypes.int16) + (step >> 7)).cast(dtypes.uint8)
  @templated
  def logaddexp(self, other: Tensor | float) -> Tensor:
    """max(a, b) + log1p(e^-|a - b|): nothing overflows, and a term too small to change 1 + e^-|a - b| still counts; where
    a == b (equal infinities too) it is max(a, b) + log(2)."""
    a, b = self._broadcasted(other)
    peak, difference = a.maximum(b), a - b
    distance = (difference < 0).where(-difference, difference)  # abs would pass a NaN input no gradient
    return (a == b).where(peak + math.log(2), peak + (-distance).exp()._log1p())
  def copysign(self, other: Tensor | float) -> Tensor:
    """|self| with the sign of other, -0.0 counting as negative (1/-0.0 is -inf). |self| is self * sign(self), so the gradient
    is +-1, 0 at self = 0 and NaN at a NaN self, as torch's."""
    a, b = self._broadcasted(other)
    magnitude = a * a.sign()
    return ((b < 0) | (b.reciprocal() < 0)).where(-magnitude, magnitude)

  # *** logical and bitwise ***

  def logical_not(self) -> Tensor: return self._binary("cmpne", True, dtype=dtypes.bool) if self.dtype is dtypes.bool else self == 0
  def bitwise_not(self) -> Tensor: return ~self
  def xor(self, x: Tensor | int, reverse: bool = False) -> Tensor: return self._binary("xor", x, reverse)
  def bitwise_xor(self, x: Tensor | int, reverse: bool = False) -> Tensor: return self.xor(x, reverse)
  def bitwise_and(self, x: Tensor | int, reverse: bool = False) -> Tensor: return self._binary("and", x, reverse)
  def bitwise_or(self, x: Tensor | int, reverse: bool = False) -> Tensor: return self._binary("or", x, reverse)
  def lshift(self, x: Tensor | int, reverse: bool = False) -> Tensor: return self._shift("shl", x, reverse)
  def rshift(self, x: Tensor | int, reverse: bool = False) -> Tensor: return self._shift("shr", x, reverse)
  def _shift(self, op: str, x: Tensor | int, reverse: bool) -> Tensor:
    """Shifts of integers only; by the width or more, shl gives 0 and shr the sign (as shifting one bit at a time would)."""
    amount_dtype = x.dtype if isinstance(x, type(self)) else dtypes.of_scalar(x)
    if any(dt.is_float or dt.is_bool for dt in (self.dtype, amount_dtype)):
      raise RuntimeError(f"{op} needs integer operands, got {self.dtype} and {amount_dtype}")
    return self._binary(op, x, reverse)

  # *** comparisons and tests ***

  def eq(self, x) -> Tensor: return self == x
  def ne(self, x) -> Tensor: return self != x
  def isnan(self) -> Tensor: return self != self
  def isinf(self, detect_positive: bool = True, detect_negative: bool = True) -> Tensor:
    return ((self == float("inf")) & detect_positive) | ((self == float("-inf")) & detect_negative)
  def isfinite(self) -> Tensor: return (self.isinf() | self.isnan()).logical_not()
  def isclose(self, other: Tensor | Scalar, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> Tensor:
    """|self - other| <= atol + rtol * |other| for finite pairs; infinities are close only to themselves, NaN to NaN
    only with equal_nan."""
    a, b = self._broadcasted(other)
    finite_close = a.isfinite() & b.isfinite() & ((a - b).abs() <= atol + rtol * b.abs())
    close = finite_close | ((a.isinf() | b.isinf()) & (a == b))
    return close | (a.isnan() & b.isnan()) if equal_nan else close
  def allclose(self, other: Tensor, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> bool:
    return bool(self.isclose(other, rtol, atol, equal_nan).all().item())
