"""exp2, exp, log2, log, sin, cos and tanh as arithmetic on f32 (range reduction and polynomials), so the loops that use
them vectorize instead of calling libm per element. f16 and bf16 compute in f32 and round once. f64 keeps the math ops,
and pow is math.powf, where the target links a math library (libm, libdevice); for one that links none (an AMD code
object) f64 exp2, exp, log2, log, sin, cos and pow of every float type are arithmetic too (the f64 part below).

  exp2(x) = 2^n * p(f)          n = round(x), f = x - n in [-1/2, 1/2], p = 1 + f q(f), q interpolating (2^f - 1) / f
                                at Chebyshev nodes, degree 5 (relative error 1e-8)
  exp(x)  = 2^n * p(r)          n = round(x / ln2), r = x - n ln2 in [-ln2/2, ln2/2], p = 1 + r + r^2 q(r), q
                                interpolating (e^r - 1 - r) / r^2 at Chebyshev nodes, degree 4 (relative error 1e-8)
  log2(x) = e + 2/ln2 atanh(s)  x = m 2^e, m in [sqrt(1/2), sqrt(2)), s = (m - 1) / (m + 1), odd series to s^11
  log(x)  = e ln2 + 2 atanh(s)
  sin(x)  = sin((-1)^k r)       x = k pi + r, r in [-pi/2, pi/2], r p(r^2), p interpolating sin(r)/r at Chebyshev nodes
  cos(x)  = sin((-1)^k r)       x + pi/2 = k pi + r: sin of x + pi/2, reduced without rounding that sum

exp and log take ln2 in two parts, the first of 16 bits (n ln2_1 and e ln2_1 are exact in f32: |n|, |e| < 2^8).
f32 exp and exp2 are within 0.85 ulp of the true value (16000 random values over the range of finite nonzero results).
sin and cos work in f64, where an f32 is exact, and round once at the end (sin within 0.5 ulp of the true sine for
every f32 checked). Up to |x| = 2^24, k = round(x / pi + offset) (offset 0 for sin, 1/2 for cos) and
r = x - (k - offset) pi with pi in two parts, the first of 29 bits ((k - 1/2) pi_1 is exact: |k| < 2^23), so r keeps
its relative precision where it cancels to almost nothing, at the zeros of sin and of cos alike. Beyond, only when some
lane needs it (an scf.if), x / pi + offset mod 2 is summed from x times 1/pi in pieces of 29 bits, each product exact
and reduced exactly (the bits of 1/pi that only add multiples of 2 drop out, however large x is).
Special values (NaN, infinities, zero, negative logs) are selected at the end; exp and exp2 bound their argument by
compare and select (one max and one min instruction on x86, a NaN taking a bound). Polynomial steps may contract into
fused multiply-adds; rounding is `math.roundeven` or `math.floor` (one instruction each on x86 with SSE4.1).

f64 carries its extra precision in pairs (high + low, an unevaluated sum): a product's rounding error is exact in one
fused multiply-add (two_product, `math.fma`, one instruction on AMD GPUs and FMA CPUs), a sum's by two-sum; the
constants (ln2, 1/ln2, pi/2, 2/3) are split into parts of 53 bits from fixed-point series to 1300 bits.

  exp(x)  = 2^n e^r        n = roundeven(x / ln2), r = x - n ln2 as a pair: x - n ln2_1 exact in one fma (n ln2_1 is a
                           multiple of ulp(ln2_1) and the difference below 1), n ln2_2 an exact pair (ln2_3 n < 2^-97)
  exp2(x) = 2^n e^r        n = roundeven(x), r = (x - n) ln2 as a pair (x - n exact)
           e^r = (1 + r_high, an exact pair) + r_high^2 (1/2 + r/6 + ... + r^12/14!) + r_low (1 + r), the Taylor series
           to degree 14 (truncation below 2^-63 on |r| <= ln2/2); 2^n in two halves built in the exponent bits
  log(x)  = e ln2 + log(m) x = m 2^e, m in [sqrt(1/2), sqrt(2)) (denormals scaled by 2^54 first), f = m - 1 exact,
                           s = f / (2 + f) as a pair (the division's remainder by fma), log(m) = 2 atanh(s) =
                           2s + 2s^3/3 (both pairs) + s^5 (2/5 + 2s^2/7 + ... + 2s^20/25) in doubles (|s| <= 0.172:
                           truncation 2^-71, log(m) to about 2^-63); e ln2 = e ln2_1 (42 bits: exact for |e| < 2^11)
                           + e ln2_2
  log2(x) = e + log(m)/ln2 the pair log(m) times 1/ln2 in two parts, e added exactly
  sin(x), cos(x)           x = k pi/2 + r, |r| <= pi/4, r as a pair; by (k + 0 for sin, 1 for cos) mod 4: sin(r),
                           cos(r), -sin(r) or -cos(r), with z = r_high^2, sin(r) = r + r z S(z) + r_low (1 - z/2) and
                           cos(r) = (1 - z/2, an exact pair) + z^2 C(z) - r_high r_low, Taylor series to r^17 and r^18
                           (truncation below 2^-63). Up to |x| = 2^30, r = x - k (pi/2)_1 (exact in one fma)
                           - k (pi/2)_2 (an exact pair) - k (pi/2)_3: r to about 2^-130 absolute, so r keeps its
                           relative precision near every multiple of pi/2 (no double is nearer to one than 2^-61).
                           Beyond (an scf.if, when some lane needs it), x 2/pi mod 4 from 22 pieces of 53 bits of 2/pi
                           (to 2^-1166, enough for x up to 2^1024): each product x piece an exact pair, each part
                           reduced exactly mod 4 into [-2, 2] (the pieces that only add multiples of 4 drop out),
                           summed as a pair whose whole part goes to k; pieces too small for a normal double are
                           scaled by 2^600 and x by 2^-600.
  pow(x, y) = 2^(y log2|x|) log2|x| as a pair, times y as an exact product plus y low, 2^ of that pair as exp2 does
                           (the low part folded into the reduced argument); f32, f16 and bf16 compute in f64 and round
                           once. C99's special values are selected at the end (see pow_f64).

Accuracy, measured against mpmath at 160 bits (sin, cos: 2300) over 7000 to 16000 values each (random over the whole
domain, near 1 for log, near multiples of pi/2 and up to 1.7e308 for sin and cos, results over the whole range for pow):
largest error exp 0.58 ulp (0.72 at denormal results, which round twice), exp2 0.56 (0.73), log 0.50, log2 0.50,
sin 0.65, cos 0.63 (glibc: 8 ulp at 6381956970095103 2^797, the double nearest a multiple of pi/2; here correctly
rounded), pow f64 0.73 (glibc 0.73 on the same values); pow f32 the correctly rounded f32 for all 20000 pairs checked.
About 99% of the f64 results are correctly rounded.
"""

import math as constants
from collections.abc import Callable
from fractions import Fraction

import numpy as np
from mlir import ir
from mlir.dialects import arith, math, scf, vector
from numpy.polynomial import chebyshev, polynomial

from pytc.dialects import uop
from pytc.passes.codegen.lanes import shaped, splat


def float_type(like: ir.Value) -> ir.Type:
  return shaped(ir.F32Type.get(), like)


def int_type(like: ir.Value) -> ir.Type:
  return shaped(ir.IntegerType.get_signless(32), like)


def f32(value: float, like: ir.Value) -> ir.Value:
  return splat(ir.FloatAttr.get(ir.F32Type.get(), value), like)


def f64(value: float, like: ir.Value) -> ir.Value:
  return splat(ir.FloatAttr.get(ir.F64Type.get(), value), like)


def i32(value: int, like: ir.Value) -> ir.Value:
  return splat(ir.IntegerAttr.get(ir.IntegerType.get_signless(32), value), like)


def i64(value: int, like: ir.Value) -> ir.Value:
  return splat(ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value), like)


def horner(x: ir.Value, coefficients: list[float]) -> ir.Value:
  """c0 + x (c1 + x (c2 + ...)) in x's float type, each step contractible into one fused multiply-add."""
  contract = ir.Attribute.parse("#arith.fastmath<contract>")
  element = ir.VectorType(x.type).element_type if isinstance(x.type, ir.VectorType) else x.type
  result = splat(ir.FloatAttr.get(element, coefficients[-1]), x)
  for c in reversed(coefficients[:-1]):
    result = arith.addf(
      arith.mulf(result, x, fastmath=contract), splat(ir.FloatAttr.get(element, c), x), fastmath=contract
    )
  return result


def is_nan(x: ir.Value) -> ir.Value:
  return arith.cmpf(arith.CmpFPredicate.UNO, x, x)


def power_of_two(n: ir.Value) -> ir.Value:
  """2^n for an i32 n in [-126, 127], built in the exponent bits."""
  return arith.bitcast(float_type(n), arith.shli(arith.addi(n, i32(127, n)), i32(23, n)))


def clamped(x: ir.Value, bound: float) -> ir.Value:
  """x limited to [-bound, bound] by compare and select, NaN as -bound (its result is selected at the end)."""
  low, high = f32(-bound, x), f32(bound, x)
  above = arith.select(arith.cmpf(arith.CmpFPredicate.OGT, x, low), x, low)
  return arith.select(arith.cmpf(arith.CmpFPredicate.OLT, above, high), above, high)


def scaled(series: ir.Value, n_float: ir.Value) -> ir.Value:
  """series * 2^n for a whole n in [-160, 160] (an f32), as 2^half * 2^(n - half): exact down to the denormals, where
  the second product rounds once; beyond the f32 range inf or 0."""
  n = arith.fptosi(int_type(series), n_float)
  half = arith.shrsi(n, i32(1, series))
  return arith.mulf(arith.mulf(series, power_of_two(half)), power_of_two(arith.subi(n, half)))


def interpolated(fn: Callable[[np.ndarray], np.ndarray], degree: int, half_width: float) -> list[float]:
  """The coefficients (lowest power first) of the polynomial interpolating fn at the Chebyshev nodes of [-half_width,
  half_width]."""
  fit = chebyshev.Chebyshev.interpolate(fn, degree, domain=[-half_width, half_width])
  return [float(c) for c in fit.convert(kind=polynomial.Polynomial).coef]


def exp2_over_f(f: np.ndarray) -> np.ndarray:
  """(2^f - 1) / f, ln2 at 0."""
  nonzero = np.where(f == 0, 1.0, f)
  return np.where(f == 0, constants.log(2), np.expm1(nonzero * constants.log(2)) / nonzero)


def exp_tail(r: np.ndarray) -> np.ndarray:
  """(e^r - 1 - r) / r^2, its Taylor series near 0 (where the quotient cancels)."""
  near, nonzero = np.abs(r) < 1e-3, np.where(np.abs(r) < 1e-3, 1.0, r)
  return np.where(near, 1 / 2 + r / 6 + r * r / 24, (np.expm1(nonzero) - nonzero) / (nonzero * nonzero))


EXP2_SERIES = [1.0, *interpolated(exp2_over_f, 5, 0.5)]  # 2^f on [-1/2, 1/2], relative error 1e-8
EXP_SERIES = [1.0, 1.0, *interpolated(exp_tail, 4, constants.log(2) / 2)]  # e^r on [-ln2/2, ln2/2], relative error 1e-8


def exp2(x: ir.Value) -> ir.Value:
  finite = clamped(x, 160.0)
  n_float = math.roundeven(finite)
  f = arith.subf(finite, n_float)
  series = horner(f, EXP2_SERIES)
  return arith.select(is_nan(x), x, scaled(series, n_float))


# tanh(x) = x p(x^2) for |x| < TANH_NEAR_BELOW, p(s) = 1 + s q(s), q the Chebyshev fit of (tanh(x) / x - 1) / x^2 in x^2
# on [0, 0.55^2] (within a rounding of the type), highest power first
TANH_NEAR_BELOW = 0.55
TANH_NEAR = (-0.006610227831114734, 0.021309388664443474, -0.05390942882746055, 0.1333311372902087, -0.3333333200797698)
TANH_NEAR_F64 = (
  5.390642014172176e-05,
  -0.00021454222089075102,
  0.0005817724407868131,
  -0.0014541180436174583,
  0.003591904413192802,
  -0.008863217663269123,
  0.021869487712363182,
  -0.05396825394889914,
  0.13333333333315647,
  -0.3333333333333331,
)


def odd_tanh(x: ir.Value, near: tuple[float, ...], power: Callable[[ir.Value], ir.Value], saturates: float) -> ir.Value:
  """tanh from its series near 0 and, beyond, sign(x) (1 - 2 / (power(|x|) + 1)) with power(a) = e^(2a), |x| capped
  where tanh rounds to 1 (so the power stays finite): the subtracted part is at most 1/2, nothing cancels. NaN is
  selected last."""
  a, s = math.absf(x), arith.mulf(x, x)
  series = arith.mulf(x, horner(s, [1.0, *reversed(near)]))  # -0.0 stays -0.0
  bound = float_like(saturates, x)
  capped = arith.select(arith.cmpf(arith.CmpFPredicate.OLT, a, bound), a, bound)
  one = float_like(1.0, x)
  far = math.copysign(arith.subf(one, arith.divf(float_like(2.0, x), arith.addf(power(capped), one))), x)
  result = arith.select(arith.cmpf(arith.CmpFPredicate.OLT, a, float_like(TANH_NEAR_BELOW, x)), series, far)
  return arith.select(is_nan(x), x, result)


def tanh(x: ir.Value) -> ir.Value:
  """f32: e^(2a) as 2^t, t = 2a/ln2 <= 29 (a capped at 10, where tanh is 1 in f32): 2^n p(t - n) without exp's clamps
  and split scaling. Within 1.8 ulp (the rounding of t adds up to 2a 2^-24 relative to e^(2a), most near a = 0.55)."""

  def power(a: ir.Value) -> ir.Value:
    t = arith.mulf(a, f32(2 / constants.log(2), a))
    n_float = math.roundeven(t)
    return arith.mulf(horner(arith.subf(t, n_float), EXP2_SERIES), power_of_two(arith.fptosi(int_type(a), n_float)))

  return odd_tanh(x, TANH_NEAR, power, 10.0)


LN2_HIGH = round(constants.log(2) * 2**16) / 2**16  # 16 significant bits
LN2_LOW = constants.log(2) - LN2_HIGH


def exp(x: ir.Value) -> ir.Value:
  contract = ir.Attribute.parse("#arith.fastmath<contract>")
  finite = clamped(x, 111.0)  # n up to 160: e^111 overflows, e^-111 underflows to 0
  n_float = math.roundeven(arith.mulf(finite, f32(1 / constants.log(2), x)))
  # exact: it cancels
  r = arith.subf(finite, arith.mulf(n_float, f32(LN2_HIGH, x), fastmath=contract), fastmath=contract)
  r = arith.subf(r, arith.mulf(n_float, f32(LN2_LOW, x), fastmath=contract), fastmath=contract)
  series = horner(r, EXP_SERIES)
  return arith.select(is_nan(x), x, scaled(series, n_float))


def logarithm_parts(x: ir.Value) -> tuple[ir.Value, ir.Value]:
  """(e, log(m)) in f32 with x = m 2^e, m in [sqrt(1/2), sqrt(2)). log(m) = 2 atanh(s) = 2s + s R(s^2) with f = m - 1
  (exact) and s = f / (2 + f), so 2s = f - s f and log(m) = f - (f^2/2 - s (f^2/2 + R)): f itself, exact, carries most
  of it and the rounding errors stay in the smaller correction."""
  i32_type = int_type(x)
  tiny = arith.cmpf(arith.CmpFPredicate.OLT, x, f32(2.0**-126, x))
  normal = arith.select(tiny, arith.mulf(x, f32(2.0**23, x)), x)  # denormals scaled into the normal range
  bits = arith.bitcast(i32_type, normal)
  exponent = arith.subi(arith.andi(arith.shrui(bits, i32(23, x)), i32(0xFF, x)), i32(127, x))
  mantissa = arith.bitcast(float_type(x), arith.ori(arith.andi(bits, i32(0x7FFFFF, x)), i32(0x3F800000, x)))
  large = arith.cmpf(arith.CmpFPredicate.OGT, mantissa, f32(constants.sqrt(2), x))
  mantissa = arith.select(large, arith.mulf(mantissa, f32(0.5, x)), mantissa)
  exponent = arith.addi(exponent, arith.select(large, i32(1, x), i32(0, x)))
  exponent = arith.subi(exponent, arith.select(tiny, i32(23, x), i32(0, x)))
  f = arith.subf(mantissa, f32(1.0, x))
  s = arith.divf(f, arith.addf(f, f32(2.0, x)))
  squared = arith.mulf(s, s)
  r = arith.mulf(squared, horner(squared, [2 / 3, 2 / 5, 2 / 7, 2 / 9, 2 / 11]))
  half_f_squared = arith.mulf(arith.mulf(f, f), f32(0.5, x))
  correction = arith.subf(half_f_squared, arith.mulf(s, arith.addf(half_f_squared, r)))
  return arith.sitofp(float_type(x), exponent), arith.subf(f, correction)


def logarithm_special_values(x: ir.Value, result: ir.Value) -> ir.Value:
  """log(0) = -inf, log(inf) = inf, NaN for negative x and NaN."""
  result = arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, x, f32(0.0, x)), f32(-constants.inf, x), result)
  result = arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, x, f32(constants.inf, x)), x, result)
  # also NaN in, NaN out
  return arith.select(arith.cmpf(arith.CmpFPredicate.ULT, x, f32(0.0, x)), f32(constants.nan, x), result)


def log2(x: ir.Value) -> ir.Value:
  exponent, log_mantissa = logarithm_parts(x)
  return logarithm_special_values(x, arith.addf(exponent, arith.mulf(log_mantissa, f32(1 / constants.log(2), x))))


def log(x: ir.Value) -> ir.Value:
  contract = ir.Attribute.parse("#arith.fastmath<contract>")
  exponent, log_mantissa = logarithm_parts(x)
  low = arith.addf(arith.mulf(exponent, f32(LN2_LOW, x), fastmath=contract), log_mantissa, fastmath=contract)
  return logarithm_special_values(x, arith.addf(arith.mulf(exponent, f32(LN2_HIGH, x)), low))


def machin_pi(bits: int) -> int:
  """floor(pi 2^bits) to within a few units, by Machin's formula pi = 16 atan(1/5) - 4 atan(1/239) in fixed point."""

  def arctan_inverse(n: int) -> int:
    total, power, k = 0, (1 << bits) // n, 1
    while power:
      total, power, k = total + (power // k if k % 4 == 1 else -(power // k)), power // (n * n), k + 2
    return total

  return 16 * arctan_inverse(5) - 4 * arctan_inverse(239)


PI_BITS = 400
PI_FIXED = machin_pi(PI_BITS + 64) >> 64  # pi 2^400, exact in all but its last bits
PI_HIGH = round(constants.pi * 2**27) / 2**27  # 29 significant bits
PI_LOW = float(Fraction(PI_FIXED, 1 << PI_BITS) - Fraction(PI_HIGH))
NEAR_LIMIT = 2.0**24  # |x| up to here: |k| < 2^23, so (k - 1/2) PI_HIGH is exact in f64
PIECE_BITS, PIECES = 29, 7  # 1/pi to 2^-203: for x up to 2^128 (its last bit 2^104), 70 bits below the point
INVERSE_PI = (1 << (PIECE_BITS * PIECES + PI_BITS)) // PI_FIXED  # floor(2^203 / pi)
INVERSE_PI_PIECES = [
  ((INVERSE_PI >> (PIECE_BITS * (PIECES - 1 - i))) & ((1 << PIECE_BITS) - 1)) * 2.0 ** (-PIECE_BITS * (i + 1))
  for i in range(PIECES)
]


def near_reduction(x: ir.Value, offset: float) -> tuple[ir.Value, ir.Value]:
  """(k, r) in f64 with x + offset pi = k pi + r, |r| <= pi/2, for an f64 x (an f32 widened) of magnitude up to
  NEAR_LIMIT."""
  contract = ir.Attribute.parse("#arith.fastmath<contract>")
  quotient = arith.mulf(x, f64(1 / constants.pi, x))
  k = math.roundeven(arith.addf(quotient, f64(offset, x)) if offset else quotient)
  multiple = arith.subf(k, f64(offset, x)) if offset else k
  r = arith.subf(x, arith.mulf(multiple, f64(PI_HIGH, x), fastmath=contract), fastmath=contract)
  return k, arith.subf(r, arith.mulf(multiple, f64(PI_LOW, x), fastmath=contract), fastmath=contract)


def far_reduction(x: ir.Value, offset: float) -> tuple[ir.Value, ir.Value]:
  """(k up to a multiple of 2, r) in f64 with x + offset pi = k pi + r, |r| <= pi/2, for any finite f64 x that is an f32
  widened: the fraction of x / pi + offset, summed piece by piece from offset, each product x * piece exact (24 by 29
  bits) and reduced exactly into [-1, 1] (so that a small term of either sign stays small and adds without cancelling
  the bits below it), the sum kept in [-1/2, 1/2], where x + offset pi near any multiple of pi has a fraction near 0
  (not near 1/2) and keeps its relative precision."""
  contract = ir.Attribute.parse("#arith.fastmath<contract>")
  fraction, k = (f64(offset, x) if offset else None), None
  for piece in INVERSE_PI_PIECES:
    product = arith.mulf(x, f64(piece, x))
    pairs = math.roundeven(arith.mulf(product, f64(0.5, x)))
    part = arith.subf(product, arith.mulf(pairs, f64(2.0, x), fastmath=contract), fastmath=contract)
    fraction = part if fraction is None else arith.addf(fraction, part)
    whole = math.roundeven(fraction)
    fraction, k = arith.subf(fraction, whole), whole if k is None else arith.addf(k, whole)
  return k, arith.mulf(fraction, f64(constants.pi, x))


def any_lane(condition: ir.Value) -> ir.Value:
  if not isinstance(condition.type, ir.VectorType):
    return condition
  return vector.reduction(ir.IntegerType.get_signless(1), vector.CombiningKind.OR, condition)


HALF_PI_SQUARED = (constants.pi / 2) ** 2
# sin(r) / r in r^2 on [0, (pi/2)^2], relative error 2^-35
SINE_OVER_R = [
  float(c)
  for c in chebyshev.Chebyshev.interpolate(lambda s: np.sinc(np.sqrt(s) / constants.pi), 5, domain=[0, HALF_PI_SQUARED])
  .convert(kind=polynomial.Polynomial)
  .coef
]


def shifted_sine(x: ir.Value, offset: float) -> ir.Value:
  """sin(x + offset pi) of an f32 x, rounded once from f64: (-1)^k sin(r) with x + offset pi = k pi + r, the sum never
  rounded (it is reduced as a whole)."""
  wide = arith.extf(shaped(ir.F64Type.get(), x), x)
  k, r = near_reduction(wide, offset)
  far = arith.cmpf(arith.CmpFPredicate.OGT, math.absf(x), f32(NEAR_LIMIT, x))  # also infinities: their r is NaN
  branch = scf.IfOp(any_lane(far), [k.type, r.type], has_else=True)
  with ir.InsertionPoint(branch.then_block):
    far_k, far_r = far_reduction(wide, offset)
    scf.YieldOp([arith.select(far, far_k, k), arith.select(far, far_r, r)])
  with ir.InsertionPoint(branch.else_block):
    scf.YieldOp([k, r])
  k, r = branch.results
  bits = shaped(ir.IntegerType.get_signless(64), x)
  k_bits = arith.bitcast(bits, arith.addf(k, f64(1.5 * 2**52, x)))  # k (an integer) in the low bits of the mantissa
  # (-1)^k sin(r) = sin((-1)^k r)
  r = arith.bitcast(r.type, arith.xori(arith.bitcast(bits, r), arith.shli(k_bits, i64(63, x))))
  return arith.truncf(float_type(x), arith.mulf(r, horner(arith.mulf(r, r), SINE_OVER_R)))


def sin(x: ir.Value) -> ir.Value:
  return arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, x, f32(0.0, x)), x, shifted_sine(x, 0.0))  # sin(-0) = -0


def cos(x: ir.Value) -> ir.Value:
  return shifted_sine(x, 0.5)


# *** f64 and pow, for targets without a math library ***


def float_like(value: float, x: ir.Value) -> ir.Value:
  """`value` as a constant of x's float type, in x's shape."""
  element = ir.VectorType(x.type).element_type if isinstance(x.type, ir.VectorType) else x.type
  return splat(ir.FloatAttr.get(element, value), x)


def fma(a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
  return math.fma(a, b, c)


def two_product(a: ir.Value, b: ir.Value) -> tuple[ir.Value, ir.Value]:
  """(p, e) with p + e = a b exactly (the fused multiply-add computes the rounding error of the product)."""
  p = arith.mulf(a, b)
  return p, fma(a, b, arith.negf(p))


def fast_two_sum(a: ir.Value, b: ir.Value) -> tuple[ir.Value, ir.Value]:
  """(s, e) with s + e = a + b exactly, for |a| >= |b| or a = 0."""
  s = arith.addf(a, b)
  return s, arith.subf(b, arith.subf(s, a))


def two_sum(a: ir.Value, b: ir.Value) -> tuple[ir.Value, ir.Value]:
  """(s, e) with s + e = a + b exactly, for any a and b."""
  s = arith.addf(a, b)
  b_part = arith.subf(s, a)
  return s, arith.addf(arith.subf(a, arith.subf(s, b_part)), arith.subf(b, b_part))


def fixed_atanh_inverse(n: int, bits: int) -> int:
  """atanh(1/n) 2^bits, to within a few units."""
  total, power, k = 0, (1 << bits) // n, 1
  while power:
    total, power, k = total + power // k, power // (n * n), k + 2
  return total


def parts(value: Fraction, count: int) -> list[float]:
  """`value` as `count` doubles, each the nearest to what the ones before leave: their sum is `value` to
  ~2^-53^count."""
  out = []
  for _ in range(count):
    out.append(float(value - sum(map(Fraction, out), Fraction(0))))
  return out


def head(value: Fraction, bits: int) -> float:
  """`value` rounded to `bits` significant bits: its products with integers of 53 - bits bits are exact."""
  shift = bits - value.numerator.bit_length() + value.denominator.bit_length()
  return float(Fraction(round(value * 2**shift), 2**shift))


WIDE_BITS = 1300
LN2_EXACT = Fraction(2 * fixed_atanh_inverse(3, WIDE_BITS + 64) >> 64, 1 << WIDE_BITS)  # ln 2 = 2 atanh(1/3)
PI_EXACT = Fraction(machin_pi(WIDE_BITS + 64) >> 64, 1 << WIDE_BITS)
LN2_PARTS = parts(LN2_EXACT, 2)
INVERSE_LN2_PARTS = parts(1 / LN2_EXACT, 2)
LN2_HEAD = head(LN2_EXACT, 42)  # e LN2_HEAD is exact for |e| < 2^11
LN2_TAIL = float(LN2_EXACT - Fraction(LN2_HEAD))
HALF_PI_PARTS = parts(PI_EXACT / 2, 3)
TWO_THIRDS_PARTS = parts(Fraction(2, 3), 2)


def clamped64(x: ir.Value, bound: float) -> ir.Value:
  """x limited to [-bound, bound], NaN as 0 (its result is selected at the end)."""
  return arith.select(
    is_nan(x), float_like(0.0, x), arith.minimumf(arith.maximumf(x, float_like(-bound, x)), float_like(bound, x))
  )


def power_of_two64(n: ir.Value) -> ir.Value:
  """2^n for an i64 n in [-1022, 1023], built in the exponent bits."""
  return arith.bitcast(shaped(ir.F64Type.get(), n), arith.shli(arith.addi(n, i64(1023, n)), i64(52, n)))


def scaled64(value: ir.Value, n_float: ir.Value) -> ir.Value:
  """value * 2^n for a whole n in [-1100, 1100] (an f64), in two halves: exact down to the denormals, where the second
  product rounds once; beyond the range inf or 0."""
  n = arith.fptosi(shaped(ir.IntegerType.get_signless(64), value), n_float)
  half = arith.shrsi(n, i64(1, value))
  return arith.mulf(arith.mulf(value, power_of_two64(half)), power_of_two64(arith.subi(n, half)))


EXP_TAIL = [1 / constants.factorial(k) for k in range(2, 15)]  # e^r = 1 + r + r^2 (1/2 + r/6 + ... + r^12/14!)


def exp_reduced(r_high: ir.Value, r_low: ir.Value) -> ir.Value:
  """e^(r_high + r_low) for |r_high| <= ln2/2 (a little more is fine) and |r_low| within a few ulps of r_high: 1 +
  r_high as an exact pair, the rest (r^2 series, the pair's rounding error, r_low e^r_high to first order) added to it
  once."""
  contract = ir.Attribute.parse("#arith.fastmath<contract>")
  one, error = fast_two_sum(float_like(1.0, r_high), r_high)
  series = arith.mulf(arith.mulf(r_high, r_high), horner(r_high, EXP_TAIL))
  low = arith.mulf(r_low, arith.addf(r_high, float_like(1.0, r_high)), fastmath=contract)
  return arith.addf(one, arith.addf(series, arith.addf(error, low), fastmath=contract))


def exp2_pair(high: ir.Value, low: ir.Value) -> ir.Value:
  """2^(high + low) for a finite high in [-1100, 1100], |low| a few ulps of it: n = roundeven(high), f = high - n
  (exact) plus low as a pair (low may be as large as f), e^(f ln2) with f ln2 as a pair (ln2 in two parts, the product's
  error by a fused multiply-add), scaled by 2^n."""
  n = math.roundeven(high)
  f, f_low = two_sum(arith.subf(high, n), low)
  r_high, r_error = two_product(f, float_like(LN2_PARTS[0], f))
  r_low = arith.addf(
    r_error, arith.addf(arith.mulf(f, float_like(LN2_PARTS[1], f)), arith.mulf(f_low, float_like(LN2_PARTS[0], f)))
  )
  return scaled64(exp_reduced(r_high, r_low), n)


def exp2_f64(x: ir.Value) -> ir.Value:
  return arith.select(is_nan(x), x, exp2_pair(clamped64(x, 1100.0), float_like(0.0, x)))


def exp_f64(x: ir.Value) -> ir.Value:
  finite = clamped64(x, 760.0)  # n up to 1097: e^760 overflows, e^-760 underflows to 0
  n = math.roundeven(arith.mulf(finite, float_like(INVERSE_LN2_PARTS[0], x)))
  # exact: n ln2_1 is a multiple of ulp(ln2_1), r1 in (-1, 1)
  r1 = fma(arith.negf(n), float_like(LN2_PARTS[0], x), finite)
  t_high, t_low = two_product(n, float_like(LN2_PARTS[1], x))
  r_high, error = two_sum(r1, arith.negf(t_high))
  return arith.select(is_nan(x), x, scaled64(exp_reduced(r_high, arith.subf(error, t_low)), n))


LOG_TAIL = [2 / (2 * k + 1) for k in range(2, 13)]  # atanh(s) 2 = 2s + 2s^3/3 + s^5 (2/5 + 2 s^2/7 + ... + 2 s^20/25)


def logarithm_pair(x: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
  """(e, high, low) with x = m 2^e, m in [sqrt(1/2), sqrt(2)), log(m) = high + low to about 2^-64 relative: log(m) =
  2 atanh(s), s = f / (2 + f), f = m - 1 (exact), with s, 2s and 2s^3/3 as pairs and the rest of the series in
  doubles."""
  i64_type = shaped(ir.IntegerType.get_signless(64), x)
  tiny = arith.cmpf(arith.CmpFPredicate.OLT, x, float_like(2.0**-1022, x))
  normal = arith.select(tiny, arith.mulf(x, float_like(2.0**54, x)), x)  # denormals scaled into the normal range
  bits = arith.bitcast(i64_type, normal)
  exponent = arith.subi(arith.andi(arith.shrui(bits, i64(52, x)), i64(0x7FF, x)), i64(1023, x))
  mantissa = arith.bitcast(x.type, arith.ori(arith.andi(bits, i64((1 << 52) - 1, x)), i64(0x3FF0000000000000, x)))
  large = arith.cmpf(arith.CmpFPredicate.OGT, mantissa, float_like(constants.sqrt(2), x))
  mantissa = arith.select(large, arith.mulf(mantissa, float_like(0.5, x)), mantissa)
  exponent = arith.addi(exponent, arith.select(large, i64(1, x), i64(0, x)))
  exponent = arith.subi(exponent, arith.select(tiny, i64(54, x), i64(0, x)))
  f = arith.subf(mantissa, float_like(1.0, x))
  d_high, d_low = fast_two_sum(float_like(2.0, x), f)
  s_high = arith.divf(f, d_high)
  s_low = arith.divf(arith.subf(fma(arith.negf(s_high), d_high, f), arith.mulf(s_high, d_low)), d_high)
  z_high, z_low = two_product(s_high, s_high)
  c_high, c_error = two_product(z_high, s_high)  # s_high^3
  c_low = arith.addf(c_error, arith.mulf(z_low, s_high))
  u_high, u_error = two_product(c_high, float_like(TWO_THIRDS_PARTS[0], x))  # 2/3 s^3
  u_low = arith.addf(
    arith.addf(u_error, arith.mulf(c_low, float_like(TWO_THIRDS_PARTS[0], x))),
    arith.addf(
      arith.mulf(c_high, float_like(TWO_THIRDS_PARTS[1], x)), arith.mulf(arith.mulf(z_high, s_low), float_like(2.0, x))
    ),
  )
  rest = arith.mulf(arith.mulf(c_high, z_high), horner(z_high, LOG_TAIL))
  twice = arith.mulf(s_high, float_like(2.0, x))
  high, error = fast_two_sum(twice, u_high)
  low = arith.addf(error, arith.addf(arith.addf(arith.mulf(s_low, float_like(2.0, x)), u_low), rest))
  return arith.sitofp(x.type, exponent), *fast_two_sum(high, low)


def log2_pair(x: ir.Value) -> tuple[ir.Value, ir.Value]:
  """log2(x) = e + log(m) / ln2 as a pair (high, low)."""
  exponent, high, low = logarithm_pair(x)
  p_high, p_error = two_product(high, float_like(INVERSE_LN2_PARTS[0], x))
  p_low = arith.addf(
    p_error,
    arith.addf(
      arith.mulf(high, float_like(INVERSE_LN2_PARTS[1], x)), arith.mulf(low, float_like(INVERSE_LN2_PARTS[0], x))
    ),
  )
  total, error = fast_two_sum(exponent, p_high)  # |e| >= 1 > |p_high|, or e = 0
  return fast_two_sum(total, arith.addf(error, p_low))


def logarithm_special_values64(x: ir.Value, result: ir.Value) -> ir.Value:
  result = arith.select(
    arith.cmpf(arith.CmpFPredicate.OEQ, x, float_like(0.0, x)), float_like(-constants.inf, x), result
  )
  result = arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, x, float_like(constants.inf, x)), x, result)
  return arith.select(arith.cmpf(arith.CmpFPredicate.ULT, x, float_like(0.0, x)), float_like(constants.nan, x), result)


def log2_f64(x: ir.Value) -> ir.Value:
  high, low = log2_pair(x)
  return logarithm_special_values64(x, arith.addf(high, low))


def log_f64(x: ir.Value) -> ir.Value:
  exponent, high, low = logarithm_pair(x)
  # e LN2_HEAD exact, larger than |high| unless 0
  total, error = fast_two_sum(arith.mulf(exponent, float_like(LN2_HEAD, x)), high)
  low = arith.addf(arith.addf(error, low), arith.mulf(exponent, float_like(LN2_TAIL, x)))
  return logarithm_special_values64(x, arith.addf(total, low))


# 2/pi to 2^-1166: for x up to 2^1024 (its last bit 2^971), 140 bits below the point
TWO_OVER_PI_PIECES_COUNT, SCALE_BITS = (
  22,
  600,
)
# floor(2^1166 2/pi)
TWO_OVER_PI_FIXED = (2 * PI_EXACT.denominator << (53 * TWO_OVER_PI_PIECES_COUNT)) // PI_EXACT.numerator
# (piece, scaled by 2^600: it would be a denormal)
TWO_OVER_PI_PIECES = [
  (
    constants.ldexp(
      float((TWO_OVER_PI_FIXED >> (53 * (TWO_OVER_PI_PIECES_COUNT - 1 - i))) & ((1 << 53) - 1)),
      -53 * (i + 1) + (SCALE_BITS if 53 * (i + 1) > 1000 else 0),
    ),
    53 * (i + 1) > 1000,
  )
  for i in range(TWO_OVER_PI_PIECES_COUNT)
]
NEAR_LIMIT64 = 2.0**30  # |x| up to here: |k| < 2^30, k pi/2 in three parts leaves r to about 2^-130


def near_reduction64(x: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
  """(k, r_high, r_low) with x = k pi/2 + r, |r| <= pi/4 (a little more where x / (pi/2) rounds), for |x| <=
  NEAR_LIMIT64: x - k (pi/2)_1 exact (a fused multiply-add whose exact result fits), then k (pi/2)_2 as an exact pair
  and k (pi/2)_3."""
  k = math.roundeven(arith.mulf(x, float_like(2 / constants.pi, x)))
  r1 = fma(arith.negf(k), float_like(HALF_PI_PARTS[0], x), x)
  t_high, t_low = two_product(k, float_like(HALF_PI_PARTS[1], x))
  r_high, error = two_sum(r1, arith.negf(t_high))
  r_low = arith.subf(arith.subf(error, t_low), arith.mulf(k, float_like(HALF_PI_PARTS[2], x)))
  return k, *fast_two_sum(r_high, r_low)


def far_reduction64(x: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
  """(k up to a multiple of 4, r_high, r_low) with x = k pi/2 + r for any finite x: x 2/pi mod 4 summed from the exact
  products of x with 53-bit pieces of 2/pi (each product a pair by a fused multiply-add, each part reduced exactly into
  [-2, 2]: the pieces that only add multiples of 4 drop out however large x is), the fraction kept in [-1/2, 1/2] as a
  pair, then times pi/2. Pieces too small for a normal double are scaled by 2^600, x by 2^-600."""
  x_scaled = arith.mulf(x, float_like(2.0**-SCALE_BITS, x))
  total = low = k = float_like(0.0, x)
  for piece, scaled in TWO_OVER_PI_PIECES:
    for term in two_product(x_scaled if scaled else x, float_like(piece, x)):
      term = fma(math.roundeven(arith.mulf(term, float_like(0.25, x))), float_like(-4.0, x), term)
      total, error = two_sum(total, term)
      whole = math.roundeven(total)
      total, k, low = arith.subf(total, whole), arith.addf(k, whole), arith.addf(low, error)
  high, low = fast_two_sum(total, low)
  r_high, r_error = two_product(high, float_like(HALF_PI_PARTS[0], x))
  r_low = arith.addf(
    r_error,
    arith.addf(arith.mulf(high, float_like(HALF_PI_PARTS[1], x)), arith.mulf(low, float_like(HALF_PI_PARTS[0], x))),
  )
  return k, r_high, r_low


# sin(r) = r + r z (-1/6 + z/120 - ...), z = r^2
SINE_TAIL64 = [(-1) ** k / constants.factorial(2 * k + 1) for k in range(1, 9)]
# cos(r) = 1 - z/2 + z^2 (1/24 - z/720 + ...)
COSINE_TAIL64 = [(-1) ** k / constants.factorial(2 * k) for k in range(2, 10)]


def quadrant_sine(x: ir.Value, shift: int) -> ir.Value:
  """sin(x + shift pi/2) for an f64 x: x = k pi/2 + r as (k, r_high + r_low), then by (k + shift) mod 4 sin(r), cos(r),
  -sin(r) or -cos(r), each from its series on [-pi/4, pi/4] with r_low to first order; NaN for infinities and NaN."""
  contract = ir.Attribute.parse("#arith.fastmath<contract>")
  ordinary = arith.cmpf(arith.CmpFPredicate.OLT, math.absf(x), float_like(constants.inf, x))
  finite = arith.select(ordinary, x, float_like(0.0, x))
  k, r_high, r_low = near_reduction64(finite)
  far = arith.cmpf(arith.CmpFPredicate.OGT, math.absf(finite), float_like(NEAR_LIMIT64, x))
  branch = scf.IfOp(any_lane(far), [k.type, r_high.type, r_low.type], has_else=True)
  with ir.InsertionPoint(branch.then_block):
    scf.YieldOp([arith.select(far, a, b) for a, b in zip(far_reduction64(finite), (k, r_high, r_low))])
  with ir.InsertionPoint(branch.else_block):
    scf.YieldOp([k, r_high, r_low])
  k, r_high, r_low = branch.results
  z, z_low = two_product(r_high, r_high)
  half_z = arith.mulf(z, float_like(0.5, x))
  correction = arith.mulf(r_low, arith.subf(float_like(1.0, x), half_z), fastmath=contract)
  sine = arith.addf(
    r_high,
    arith.addf(
      arith.mulf(arith.mulf(r_high, z), horner(z, SINE_TAIL64), fastmath=contract), correction, fastmath=contract
    ),
  )
  one, error = fast_two_sum(float_like(1.0, x), arith.negf(half_z))
  low = arith.subf(
    arith.mulf(arith.mulf(z, z), horner(z, COSINE_TAIL64), fastmath=contract),
    arith.mulf(r_high, r_low),
    fastmath=contract,
  )
  cosine = arith.addf(one, arith.addf(arith.subf(error, arith.mulf(z_low, float_like(0.5, x))), low))
  quadrant = arith.addi(arith.fptosi(int_type(x), k), i32(shift, x))
  odd = arith.cmpi(arith.CmpIPredicate.ne, arith.andi(quadrant, i32(1, x)), i32(0, x))
  negative = arith.cmpi(arith.CmpIPredicate.ne, arith.andi(quadrant, i32(2, x)), i32(0, x))
  value = arith.select(odd, cosine, sine)
  return arith.select(ordinary, arith.select(negative, arith.negf(value), value), float_like(constants.nan, x))


def sin_f64(x: ir.Value) -> ir.Value:
  # sin(-0) = -0
  return arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, x, float_like(0.0, x)), x, quadrant_sine(x, 0))


def cos_f64(x: ir.Value) -> ir.Value:
  return quadrant_sine(x, 1)


def tanh_f64(x: ir.Value) -> ir.Value:
  """f64 for targets without a math library: e^(2a) by exp_f64, a capped at 20 (tanh is 1 in f64)."""
  return odd_tanh(x, TANH_NEAR_F64, lambda a: exp_f64(arith.addf(a, a)), 20.0)


def pow_f64(x: ir.Value, y: ir.Value) -> ir.Value:
  """x^y for f64 x and y: 2^(y log2|x|) with log2|x| and its product with y as pairs, negative for x < 0 (or -0) and an
  odd integer y, and C99's special values selected at the end: NaN for a finite x < 0 and a finite y that is not an
  integer, 0 or inf for x = +-0, x = +-inf or y = +-inf (as |x| > 1 and y > 0 agree or not), 1 for |x| = 1 (for x = -1
  also against y = +-inf), NaN from NaN, and 1 for y = +-0 or x = 1 whatever the other is, NaN included."""

  def compare(predicate: arith.CmpFPredicate, a: ir.Value, value: float) -> ir.Value:
    return arith.cmpf(predicate, a, float_like(value, a))

  size, y_size = math.absf(x), math.absf(y)
  x_ordinary = arith.andi(
    compare(arith.CmpFPredicate.OGT, size, 0.0), compare(arith.CmpFPredicate.OLT, size, constants.inf)
  )
  y_finite = compare(arith.CmpFPredicate.OLT, y_size, constants.inf)
  base, exponent = arith.select(x_ordinary, size, float_like(1.0, x)), arith.select(y_finite, y, float_like(0.0, y))
  l_high, l_low = log2_pair(base)
  u_high, u_error = two_product(exponent, l_high)
  u_low = arith.addf(u_error, arith.mulf(exponent, l_low))
  # 2^u is inf or 0 (u_high may be inf, its error NaN)
  beyond = compare(arith.CmpFPredicate.UGT, math.absf(u_high), 1100.0)
  magnitude = exp2_pair(clamped64(u_high, 1100.0), arith.select(beyond, float_like(0.0, x), u_low))
  extreme = arith.ori(
    arith.ori(compare(arith.CmpFPredicate.OEQ, size, 0.0), compare(arith.CmpFPredicate.OEQ, size, constants.inf)),
    compare(arith.CmpFPredicate.OEQ, y_size, constants.inf),
  )
  grows = arith.xori(compare(arith.CmpFPredicate.OGT, size, 1.0), compare(arith.CmpFPredicate.OLT, y, 0.0))
  magnitude = arith.select(extreme, arith.select(grows, float_like(constants.inf, x), float_like(0.0, x)), magnitude)
  magnitude = arith.select(compare(arith.CmpFPredicate.OEQ, size, 1.0), float_like(1.0, x), magnitude)
  fractional = arith.andi(y_finite, arith.cmpf(arith.CmpFPredicate.ONE, math.trunc(y), y))
  half = arith.mulf(y, float_like(0.5, y))
  odd = arith.andi(
    arith.andi(y_finite, arith.cmpf(arith.CmpFPredicate.OEQ, math.trunc(y), y)),
    arith.cmpf(arith.CmpFPredicate.ONE, math.trunc(half), half),
  )
  bits = shaped(ir.IntegerType.get_signless(64), x)
  signed = arith.cmpi(arith.CmpIPredicate.slt, arith.bitcast(bits, x), i64(0, x))
  result = arith.select(arith.andi(signed, odd), arith.negf(magnitude), magnitude)
  negative_finite = arith.andi(
    compare(arith.CmpFPredicate.OLT, x, 0.0), compare(arith.CmpFPredicate.OGT, x, -constants.inf)
  )
  result = arith.select(arith.andi(negative_finite, fractional), float_like(constants.nan, x), result)
  result = arith.select(arith.cmpf(arith.CmpFPredicate.UNO, x, y), float_like(constants.nan, x), result)
  one = arith.ori(compare(arith.CmpFPredicate.OEQ, y, 0.0), compare(arith.CmpFPredicate.OEQ, x, 1.0))
  return arith.select(one, float_like(1.0, x), result)


APPROXIMATIONS = {
  uop.Exp2Op: exp2,
  uop.ExpOp: exp,
  uop.Log2Op: log2,
  uop.LogOp: log,
  uop.SinOp: sin,
  uop.CosOp: cos,
  uop.TanhOp: tanh,
}
APPROXIMATIONS_F64 = {
  uop.Exp2Op: exp2_f64,
  uop.ExpOp: exp_f64,
  uop.Log2Op: log2_f64,
  uop.LogOp: log_f64,
  uop.SinOp: sin_f64,
  uop.CosOp: cos_f64,
  uop.TanhOp: tanh_f64,
}
