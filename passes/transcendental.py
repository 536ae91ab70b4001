"""exp2, log2 and sin as arithmetic on f32 (range reduction and polynomials), so the loops that use them
vectorize instead of calling libm per element. f16 and bf16 compute in f32; f64 keeps the math ops.

  exp2(x) = 2^n * p(f)          n = round(x), f = x - n in [-1/2, 1/2], p: Taylor series of e^(f ln 2), degree 7
  log2(x) = e + 2/ln2 atanh(s)  x = m 2^e, m in [sqrt(1/2), sqrt(2)), s = (m - 1) / (m + 1), odd series to s^11
  sin(x)  = (-1)^k sin(r)       k = round(x / pi), r = x - k pi (pi in two parts), odd Taylor series to r^15
Special values (NaN, infinities, zero, negative logs) are selected at the end.
"""
import math

from mlir import ir
from mlir.dialects import arith

F32 = ir.F32Type


def f32(value: float) -> ir.Value: return arith.constant(ir.F32Type.get(), ir.FloatAttr.get(ir.F32Type.get(), value))
def i32(value: int) -> ir.Value: return arith.constant(ir.IntegerType.get_signless(32), ir.IntegerAttr.get(ir.IntegerType.get_signless(32), value))


def horner(x: ir.Value, coefficients: list[float]) -> ir.Value:
  """c0 + x (c1 + x (c2 + ...))."""
  result = f32(coefficients[-1])
  for c in reversed(coefficients[:-1]): result = arith.addf(arith.mulf(result, x), f32(c))
  return result


def is_nan(x: ir.Value) -> ir.Value: return arith.cmpf(arith.CmpFPredicate.UNO, x, x)


def power_of_two(n: ir.Value) -> ir.Value:
  """2^n for an i32 n in [-126, 127], built in the exponent bits."""
  return arith.bitcast(ir.F32Type.get(), arith.shli(arith.addi(n, i32(127)), i32(23)))


def exp2(x: ir.Value) -> ir.Value:
  finite = arith.select(is_nan(x), f32(0.0), arith.minimumf(arith.maximumf(x, f32(-160.0)), f32(160.0)))
  n_float = math_floor(arith.addf(finite, f32(0.5)))
  f = arith.subf(finite, n_float)
  series = horner(f, [math.log(2) ** k / math.factorial(k) for k in range(8)])
  n = arith.fptosi(ir.IntegerType.get_signless(32), n_float)
  half = arith.shrsi(n, i32(1))  # 2^n as 2^half * 2^(n - half): exact down to the denormals
  scaled = arith.mulf(arith.mulf(series, power_of_two(half)), power_of_two(arith.subi(n, half)))
  return arith.select(is_nan(x), x, scaled)


def math_floor(x: ir.Value) -> ir.Value:
  truncated = arith.sitofp(ir.F32Type.get(), arith.fptosi(ir.IntegerType.get_signless(32), x))
  return arith.select(arith.cmpf(arith.CmpFPredicate.OGT, truncated, x), arith.subf(truncated, f32(1.0)), truncated)


def log2(x: ir.Value) -> ir.Value:
  i32_type = ir.IntegerType.get_signless(32)
  tiny = arith.cmpf(arith.CmpFPredicate.OLT, x, f32(2.0 ** -126))
  normal = arith.select(tiny, arith.mulf(x, f32(2.0 ** 23)), x)  # denormals scaled into the normal range
  bits = arith.bitcast(i32_type, normal)
  exponent = arith.subi(arith.andi(arith.shrui(bits, i32(23)), i32(0xFF)), i32(127))
  mantissa = arith.bitcast(ir.F32Type.get(), arith.ori(arith.andi(bits, i32(0x7FFFFF)), i32(0x3F800000)))
  large = arith.cmpf(arith.CmpFPredicate.OGT, mantissa, f32(math.sqrt(2)))
  mantissa = arith.select(large, arith.mulf(mantissa, f32(0.5)), mantissa)
  exponent = arith.addi(exponent, arith.select(large, i32(1), i32(0)))
  exponent = arith.subi(exponent, arith.select(tiny, i32(23), i32(0)))
  s = arith.divf(arith.subf(mantissa, f32(1.0)), arith.addf(mantissa, f32(1.0)))
  series = arith.mulf(s, horner(arith.mulf(s, s), [1.0, 1 / 3, 1 / 5, 1 / 7, 1 / 9, 1 / 11]))
  result = arith.addf(arith.sitofp(ir.F32Type.get(), exponent), arith.mulf(series, f32(2 / math.log(2))))
  result = arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, x, f32(0.0)), f32(-math.inf), result)
  result = arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, x, f32(math.inf)), x, result)
  return arith.select(arith.cmpf(arith.CmpFPredicate.ULT, x, f32(0.0)), f32(math.nan), result)  # also NaN in, NaN out


PI_HIGH, PI_LOW = 3.140625, math.pi - 3.140625  # pi in two parts: k * PI_HIGH is exact for the k that matter


def sin(x: ir.Value) -> ir.Value:
  special = arith.ori(is_nan(x), arith.cmpf(arith.CmpFPredicate.OEQ, arith.maximumf(x, arith.negf(x)), f32(math.inf)))
  finite = arith.select(special, f32(0.0), x)
  k_float = math_floor(arith.addf(arith.mulf(finite, f32(1 / math.pi)), f32(0.5)))
  r = arith.subf(arith.subf(finite, arith.mulf(k_float, f32(PI_HIGH))), arith.mulf(k_float, f32(PI_LOW)))
  series = arith.mulf(r, horner(arith.mulf(r, r), [(-1) ** k / math.factorial(2 * k + 1) for k in range(8)]))
  odd = arith.cmpi(arith.CmpIPredicate.ne, arith.andi(arith.fptosi(ir.IntegerType.get_signless(32), k_float), i32(1)), i32(0))
  return arith.select(special, f32(math.nan), arith.select(odd, arith.negf(series), series))


APPROXIMATIONS = {"uop.exp2": exp2, "uop.log2": log2, "uop.sin": sin}
