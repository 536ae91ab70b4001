"""exp2, log2 and sin as arithmetic on f32 (range reduction and polynomials), so the loops that use them
vectorize instead of calling libm per element. f16 and bf16 compute in f32; f64 keeps the math ops.

  exp2(x) = 2^n * p(f)          n = round(x), f = x - n in [-1/2, 1/2], p: Taylor series of e^(f ln 2), degree 7
  log2(x) = e + 2/ln2 atanh(s)  x = m 2^e, m in [sqrt(1/2), sqrt(2)), s = (m - 1) / (m + 1), odd series to s^11
  sin(x)  = (-1)^k sin(r)       k = round(x / pi), r = x - k pi (pi in two parts), odd Taylor series to r^15
Special values (NaN, infinities, zero, negative logs) are selected at the end. Polynomial steps may contract
into fused multiply-adds; rounding down is `math.floor` (one rounding instruction on x86 with SSE4.1).
"""
import math as constants

from mlir import ir
from mlir.dialects import arith, math

from pytc.passes.lanes import shaped, splat


def float_type(like: ir.Value) -> ir.Type: return shaped(ir.F32Type.get(), like)
def int_type(like: ir.Value) -> ir.Type: return shaped(ir.IntegerType.get_signless(32), like)


def f32(value: float, like: ir.Value) -> ir.Value: return splat(ir.FloatAttr.get(ir.F32Type.get(), value), like)
def i32(value: int, like: ir.Value) -> ir.Value: return splat(ir.IntegerAttr.get(ir.IntegerType.get_signless(32), value), like)


def horner(x: ir.Value, coefficients: list[float]) -> ir.Value:
  """c0 + x (c1 + x (c2 + ...)), each step contractible into one fused multiply-add."""
  contract = ir.Attribute.parse("#arith.fastmath<contract>")
  result = f32(coefficients[-1], x)
  for c in reversed(coefficients[:-1]): result = arith.addf(arith.mulf(result, x, fastmath=contract), f32(c, x), fastmath=contract)
  return result


def is_nan(x: ir.Value) -> ir.Value: return arith.cmpf(arith.CmpFPredicate.UNO, x, x)


def power_of_two(n: ir.Value) -> ir.Value:
  """2^n for an i32 n in [-126, 127], built in the exponent bits."""
  return arith.bitcast(float_type(n), arith.shli(arith.addi(n, i32(127, n)), i32(23, n)))


def exp2(x: ir.Value) -> ir.Value:
  finite = arith.select(is_nan(x), f32(0.0, x), arith.minimumf(arith.maximumf(x, f32(-160.0, x)), f32(160.0, x)))
  n_float = math.floor(arith.addf(finite, f32(0.5, x)))
  f = arith.subf(finite, n_float)
  series = horner(f, [constants.log(2) ** k / constants.factorial(k) for k in range(8)])
  n = arith.fptosi(int_type(x), n_float)
  half = arith.shrsi(n, i32(1, x))  # 2^n as 2^half * 2^(n - half): exact down to the denormals
  scaled = arith.mulf(arith.mulf(series, power_of_two(half)), power_of_two(arith.subi(n, half)))
  return arith.select(is_nan(x), x, scaled)


def log2(x: ir.Value) -> ir.Value:
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
  s = arith.divf(arith.subf(mantissa, f32(1.0, x)), arith.addf(mantissa, f32(1.0, x)))
  series = arith.mulf(s, horner(arith.mulf(s, s), [1.0, 1 / 3, 1 / 5, 1 / 7, 1 / 9, 1 / 11]))
  result = arith.addf(arith.sitofp(float_type(x), exponent), arith.mulf(series, f32(2 / constants.log(2), x)))
  result = arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, x, f32(0.0, x)), f32(-constants.inf, x), result)
  result = arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, x, f32(constants.inf, x)), x, result)
  return arith.select(arith.cmpf(arith.CmpFPredicate.ULT, x, f32(0.0, x)), f32(constants.nan, x), result)  # also NaN in, NaN out


PI_HIGH, PI_LOW = 3.140625, constants.pi - 3.140625  # pi in two parts: k * PI_HIGH is exact for the k that matter


def sin(x: ir.Value) -> ir.Value:
  special = arith.ori(is_nan(x), arith.cmpf(arith.CmpFPredicate.OEQ, arith.maximumf(x, arith.negf(x)), f32(constants.inf, x)))
  finite = arith.select(special, f32(0.0, x), x)
  k_float = math.floor(arith.addf(arith.mulf(finite, f32(1 / constants.pi, x)), f32(0.5, x)))
  r = arith.subf(arith.subf(finite, arith.mulf(k_float, f32(PI_HIGH, x))), arith.mulf(k_float, f32(PI_LOW, x)))
  series = arith.mulf(r, horner(arith.mulf(r, r), [(-1) ** k / constants.factorial(2 * k + 1) for k in range(8)]))
  odd = arith.cmpi(arith.CmpIPredicate.ne, arith.andi(arith.fptosi(int_type(x), k_float), i32(1, x)), i32(0, x))
  return arith.select(special, f32(constants.nan, x), arith.select(odd, arith.negf(series), series))


APPROXIMATIONS = {"uop.exp2": exp2, "uop.log2": log2, "uop.sin": sin}
