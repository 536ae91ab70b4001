"""exp2, exp, log2, log, sin and cos as arithmetic on f32 (range reduction and polynomials), so the loops that use
them vectorize instead of calling libm per element. f16 and bf16 compute in f32 and round once; f64 keeps the math ops.

  exp2(x) = 2^n * p(f)          n = round(x), f = x - n in [-1/2, 1/2], p: Taylor series of e^(f ln 2), degree 7
  exp(x)  = 2^n * p(r)          n = round(x / ln2), r = x - n ln2 in [-ln2/2, ln2/2], p: Taylor series of e^r, degree 7
  log2(x) = e + 2/ln2 atanh(s)  x = m 2^e, m in [sqrt(1/2), sqrt(2)), s = (m - 1) / (m + 1), odd series to s^11
  log(x)  = e ln2 + 2 atanh(s)
  sin(x)  = sin((-1)^k r)       x = k pi + r, r in [-pi/2, pi/2], r p(r^2), p interpolating sin(r)/r at Chebyshev nodes
  cos(x)  = sin((-1)^k r)       x + pi/2 = k pi + r: sin of x + pi/2, reduced without rounding that sum

exp and log take ln2 in two parts, the first of 16 bits (n ln2_1 and e ln2_1 are exact in f32: |n|, |e| < 2^8).
sin and cos work in f64, where an f32 is exact, and round once at the end (sin within 0.5 ulp of the true sine for
every f32 checked). Up to |x| = 2^24, k = round(x / pi + offset) (offset 0 for sin, 1/2 for cos) and
r = x - (k - offset) pi with pi in two parts, the first of 29 bits ((k - 1/2) pi_1 is exact: |k| < 2^23), so r keeps
its relative precision where it cancels to almost nothing, at the zeros of sin and of cos alike. Beyond, only when some
lane needs it (an scf.if), x / pi + offset mod 2 is summed from x times 1/pi in pieces of 29 bits, each product exact
and reduced exactly (the bits of 1/pi that only add multiples of 2 drop out, however large x is).
Special values (NaN, infinities, zero, negative logs) are selected at the end. Polynomial steps may contract
into fused multiply-adds; rounding down is `math.floor` (one rounding instruction on x86 with SSE4.1).
"""
import math as constants
from fractions import Fraction

import numpy as np
from mlir import ir
from mlir.dialects import arith, math, scf, vector
from numpy.polynomial import chebyshev, polynomial

from pytc.dialects import uop
from pytc.passes.codegen.lanes import shaped, splat


def float_type(like: ir.Value) -> ir.Type: return shaped(ir.F32Type.get(), like)
def int_type(like: ir.Value) -> ir.Type: return shaped(ir.IntegerType.get_signless(32), like)


def f32(value: float, like: ir.Value) -> ir.Value: return splat(ir.FloatAttr.get(ir.F32Type.get(), value), like)
def f64(value: float, like: ir.Value) -> ir.Value: return splat(ir.FloatAttr.get(ir.F64Type.get(), value), like)
def i32(value: int, like: ir.Value) -> ir.Value: return splat(ir.IntegerAttr.get(ir.IntegerType.get_signless(32), value), like)
def i64(value: int, like: ir.Value) -> ir.Value: return splat(ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value), like)


def horner(x: ir.Value, coefficients: list[float]) -> ir.Value:
  """c0 + x (c1 + x (c2 + ...)) in x's float type, each step contractible into one fused multiply-add."""
  contract = ir.Attribute.parse("#arith.fastmath<contract>")
  element = ir.VectorType(x.type).element_type if isinstance(x.type, ir.VectorType) else x.type
  result = splat(ir.FloatAttr.get(element, coefficients[-1]), x)
  for c in reversed(coefficients[:-1]):
    result = arith.addf(arith.mulf(result, x, fastmath=contract), splat(ir.FloatAttr.get(element, c), x), fastmath=contract)
  return result


def is_nan(x: ir.Value) -> ir.Value: return arith.cmpf(arith.CmpFPredicate.UNO, x, x)


def power_of_two(n: ir.Value) -> ir.Value:
  """2^n for an i32 n in [-126, 127], built in the exponent bits."""
  return arith.bitcast(float_type(n), arith.shli(arith.addi(n, i32(127, n)), i32(23, n)))


def clamped(x: ir.Value, bound: float) -> ir.Value:
  """x limited to [-bound, bound], NaN as 0 (its result is selected at the end)."""
  return arith.select(is_nan(x), f32(0.0, x), arith.minimumf(arith.maximumf(x, f32(-bound, x)), f32(bound, x)))


def scaled(series: ir.Value, n_float: ir.Value) -> ir.Value:
  """series * 2^n for a whole n in [-160, 160] (an f32), as 2^half * 2^(n - half): exact down to the denormals, where the
  second product rounds once; beyond the f32 range inf or 0."""
  n = arith.fptosi(int_type(series), n_float)
  half = arith.shrsi(n, i32(1, series))
  return arith.mulf(arith.mulf(series, power_of_two(half)), power_of_two(arith.subi(n, half)))


def exp2(x: ir.Value) -> ir.Value:
  finite = clamped(x, 160.0)
  n_float = math.floor(arith.addf(finite, f32(0.5, x)))
  f = arith.subf(finite, n_float)
  series = horner(f, [constants.log(2) ** k / constants.factorial(k) for k in range(8)])
  return arith.select(is_nan(x), x, scaled(series, n_float))


LN2_HIGH = round(constants.log(2) * 2 ** 16) / 2 ** 16  # 16 significant bits
LN2_LOW = constants.log(2) - LN2_HIGH


def exp(x: ir.Value) -> ir.Value:
  contract = ir.Attribute.parse("#arith.fastmath<contract>")
  finite = clamped(x, 111.0)  # n up to 160: e^111 overflows, e^-111 underflows to 0
  n_float = math.floor(arith.addf(arith.mulf(finite, f32(1 / constants.log(2), x)), f32(0.5, x)))
  r = arith.subf(finite, arith.mulf(n_float, f32(LN2_HIGH, x), fastmath=contract), fastmath=contract)  # exact: it cancels
  r = arith.subf(r, arith.mulf(n_float, f32(LN2_LOW, x), fastmath=contract), fastmath=contract)
  series = horner(r, [1 / constants.factorial(k) for k in range(8)])
  return arith.select(is_nan(x), x, scaled(series, n_float))


def logarithm_parts(x: ir.Value) -> tuple[ir.Value, ir.Value]:
  """(e, log(m)) in f32 with x = m 2^e, m in [sqrt(1/2), sqrt(2)). log(m) = 2 atanh(s) = 2s + s R(s^2) with f = m - 1 (exact)
  and s = f / (2 + f), so 2s = f - s f and log(m) = f - (f^2/2 - s (f^2/2 + R)): f itself, exact, carries most of it and
  the rounding errors stay in the smaller correction."""
  i32_type = int_type(x)
  tiny = arith.cmpf(arith.CmpFPredicate.OLT, x, f32(2.0 ** -126, x))
  normal = arith.select(tiny, arith.mulf(x, f32(2.0 ** 23, x)), x)  # denormals scaled into the normal range
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
  return arith.select(arith.cmpf(arith.CmpFPredicate.ULT, x, f32(0.0, x)), f32(constants.nan, x), result)  # also NaN in, NaN out


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
PI_HIGH = round(constants.pi * 2 ** 27) / 2 ** 27  # 29 significant bits
PI_LOW = float(Fraction(PI_FIXED, 1 << PI_BITS) - Fraction(PI_HIGH))
NEAR_LIMIT = 2.0 ** 24  # |x| up to here: |k| < 2^23, so (k - 1/2) PI_HIGH is exact in f64
PIECE_BITS, PIECES = 29, 7  # 1/pi to 2^-203: for x up to 2^128 (its last bit 2^104), 70 bits below the point
INVERSE_PI = (1 << (PIECE_BITS * PIECES + PI_BITS)) // PI_FIXED  # floor(2^203 / pi)
INVERSE_PI_PIECES = [((INVERSE_PI >> (PIECE_BITS * (PIECES - 1 - i))) & ((1 << PIECE_BITS) - 1)) * 2.0 ** (-PIECE_BITS * (i + 1))
                     for i in range(PIECES)]


def near_reduction(x: ir.Value, offset: float) -> tuple[ir.Value, ir.Value]:
  """(k, r) in f64 with x + offset pi = k pi + r, |r| <= pi/2, for an f64 x (an f32 widened) of magnitude up to NEAR_LIMIT."""
  contract = ir.Attribute.parse("#arith.fastmath<contract>")
  quotient = arith.mulf(x, f64(1 / constants.pi, x))
  k = math.roundeven(arith.addf(quotient, f64(offset, x)) if offset else quotient)
  multiple = arith.subf(k, f64(offset, x)) if offset else k
  r = arith.subf(x, arith.mulf(multiple, f64(PI_HIGH, x), fastmath=contract), fastmath=contract)
  return k, arith.subf(r, arith.mulf(multiple, f64(PI_LOW, x), fastmath=contract), fastmath=contract)


def far_reduction(x: ir.Value, offset: float) -> tuple[ir.Value, ir.Value]:
  """(k up to a multiple of 2, r) in f64 with x + offset pi = k pi + r, |r| <= pi/2, for any finite f64 x that is an f32
  widened: the fraction of x / pi + offset, summed piece by piece from offset, each product x * piece exact (24 by 29
  bits) and reduced exactly into [-1, 1] (so that a small term of either sign stays small and adds without cancelling the
  bits below it), the sum kept in [-1/2, 1/2], where x + offset pi near any multiple of pi has a fraction near 0 (not
  near 1/2) and keeps its relative precision."""
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
  if not isinstance(condition.type, ir.VectorType): return condition
  return vector.reduction(ir.IntegerType.get_signless(1), vector.CombiningKind.OR, condition)


HALF_PI_SQUARED = (constants.pi / 2) ** 2
SINE_OVER_R = [float(c) for c in chebyshev.Chebyshev.interpolate(lambda s: np.sinc(np.sqrt(s) / constants.pi), 5, domain=[0, HALF_PI_SQUARED])
               .convert(kind=polynomial.Polynomial).coef]  # sin(r) / r in r^2 on [0, (pi/2)^2], relative error 2^-35


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
  with ir.InsertionPoint(branch.else_block): scf.YieldOp([k, r])
  k, r = branch.results
  bits = shaped(ir.IntegerType.get_signless(64), x)
  k_bits = arith.bitcast(bits, arith.addf(k, f64(1.5 * 2 ** 52, x)))  # k (an integer) in the low bits of the mantissa
  r = arith.bitcast(r.type, arith.xori(arith.bitcast(bits, r), arith.shli(k_bits, i64(63, x))))  # (-1)^k sin(r) = sin((-1)^k r)
  return arith.truncf(float_type(x), arith.mulf(r, horner(arith.mulf(r, r), SINE_OVER_R)))


def sin(x: ir.Value) -> ir.Value:
  return arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, x, f32(0.0, x)), x, shifted_sine(x, 0.0))  # sin(-0) = -0


def cos(x: ir.Value) -> ir.Value: return shifted_sine(x, 0.5)


APPROXIMATIONS = {uop.Exp2Op: exp2, uop.ExpOp: exp, uop.Log2Op: log2, uop.LogOp: log, uop.SinOp: sin, uop.CosOp: cos}
