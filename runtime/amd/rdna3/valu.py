"""RDNA3 (gfx11) vector ALU semantics: what each VALU instruction computes in one lane, as NumPy functions over the
active lanes, as AMD's RDNA3 instruction-set reference defines them.

`VALU` maps an instruction's name (as in opcodes.py, no _e32/_e64 suffix) to fn(*sources) -> result:
- sources are 1-d arrays, one element per lane, in VOP3 operand order, typed by `operands.signature(name).sources`:
  f16/f32/f64 -> float16/32/64, b16/u16 -> uint16, i16 -> int16, b32/u32/u24 -> uint32, i32/i24 -> int32,
  b64/u64 -> uint64, i64 -> int64, mask -> bool (the lane's bit of a lane mask). Float abs/neg input modifiers are
  already applied; clamp and output modifiers are applied to the result by the caller.
- the result has the destination's type (`signature(name).destination`; bool for compares, v_cmpx_* being their
  v_cmp_*). v_add/sub/subrev_co_u32, v_add/sub/subrev_co_ci_u32, v_div_scale_f32/f64, v_mad_u64_u32 and v_mad_i64_i32
  return (result, bool array): the carry / borrow / VCC bit of each lane.
Operands beyond the VOP3 order: v_fmac_f32/f16 and v_fmac_dx9_zero_f32 (src0, src1, accumulator) -> src0*src1+acc;
v_fmaak (src0, src1, K) -> src0*src1+K; v_fmamk (src0, K, src1) -> src0*K+src1; v_div_fmas_f32/f64 take VCC's lane bits
as a 4th source; v_cndmask_b32/b16 (src0, src1, mask) -> mask ? src1 : src0, and the *_co_ci ops take the carry-in as
the 3rd; v_fma_mix_f32 / v_fma_mixlo_f16 / v_fma_mixhi_f16 take three float32 arrays (f16 halves already widened).

Integer arithmetic wraps modulo 2^N; shift amounts, offsets and widths use their low 4, 5 or 6 bits (16-, 32-, 64-bit
operations). Floating point rounds to nearest even and keeps denormals; fma is fused (one rounding: f32 and f16 through
float64 rounded to odd, f64 through exact Dekker/Veltkamp products and sums); the mixed fma rounds to f32 and then to
f16, as the reference writes it. min/max are the IEEE-mode ones: -0 < +0, a quiet NaN operand yields the other one, a
signaling NaN its quieted self. Float-to-int conversions truncate, saturate and take NaN to 0. rcp and sqrt are
correctly rounded; rsq, exp, log, sin and cos are computed in float64 and rounded once (within one ulp, more accurate
than the hardware's approximations). Nothing raises or warns on NaN, infinity or overflow.

Where the reference's pseudocode abbreviates the hardware, the hardware is followed:
- v_div_scale(src0, denominator, numerator) / v_div_fmas: the scaling follows the exponent fields. A numerator exponent
  at least 96 (f64: 768) above the denominator's scales the denominator by 2^64 (2^128) and sets VCC; one at least 96
  below scales the numerator up and sets VCC (or, with a denominator of exponent field >= 2*bias-1, the denominator
  down); otherwise a denormal denominator or a numerator of exponent field <= mantissa bits + 1 scales both up, and a
  denominator of exponent field >= 2*bias-1 both down. v_div_fmas with VCC set rounds fma * 2^+-64 (2^+-128) once, up
  where the quotient estimate (src2) is >= 2, down otherwise: together they divide exactly as IEEE division does. The
  pseudocode's post-scale of 2^32 (f64: 2^64) would not undo the 2^64 (2^128) pre-scale. A zero denominator or
  numerator gives the NaN 0xffc00000 (f64 0xfff8000000000000), VCC clear.
- v_div_fixup: underflow is a signed zero and overflow (an infinite or NaN quotient) a signed infinity.
- v_fract returns min(x - floor(x), largest float below 1), NaN for infinities.
- v_rndne keeps the sign of a zero result (IEEE roundToIntegralTiesToEven).
- v_frexp_mant / v_frexp_exp of a denormal give its true mantissa and exponent (C frexp; 0 for zero).
- v_cls_i32 counts the bits equal to the sign bit from the MSB down, the sign bit included (the position of the first
  bit that differs), -1 when all are equal.
- v_trig_preop_f64 returns 53 bits of 2/pi starting at bit src1[4:0]*53 (+ the exponent excess over 1077), rounded
  toward zero.
Not here: packed v_pk_* (the executor splits them into their 16-bit operations), VOPD (mapped to the plain names), and
instructions touching other state (readlane, movrel, permlane, ...)."""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

Array = np.ndarray
Result = Array | tuple[Array, Array]
F16, F32, F64 = np.float16, np.float32, np.float64
U16, U32, U64, I16, I32, I64 = np.uint16, np.uint32, np.uint64, np.int16, np.int32, np.int64
FLOATS = {"f16": F16, "f32": F32, "f64": F64}
# a float type's bits: (the unsigned type holding them, fraction bits, exponent bias)
FORMATS = {F16: (U16, 10, 15), F32: (U32, 23, 127), F64: (U64, 52, 1023)}


# ***** float bits *****


def _bits(x: Array) -> Array:
  return x.view(FORMATS[x.dtype.type][0])


def _exponent(x: Array) -> Array:
  """The biased exponent field of each element, as int64 (0 for zeros and denormals, all ones for inf and NaN)."""
  uint, fraction, bias = FORMATS[x.dtype.type]
  return ((_bits(x) >> uint(fraction)) & uint(2 * bias + 1)).astype(I64)


def _quiet_bit(x: Array) -> np.unsignedinteger:
  uint, fraction, _ = FORMATS[x.dtype.type]
  return uint(1 << (fraction - 1))


def _quieted(x: Array) -> Array:
  return (_bits(x) | _quiet_bit(x)).view(x.dtype)


def _signaling(x: Array) -> Array:
  return np.isnan(x) & ((_bits(x) & _quiet_bit(x)) == 0)


def _negative_nan(f: type) -> np.floating:
  """The quiet NaN with the sign bit set (0xffc00000 as f32), the indeterminate result of the division steps."""
  uint, fraction, bias = FORMATS[f]
  return np.array(
    (1 << (8 * np.dtype(f).itemsize - 1)) | ((2 * bias + 1) << fraction) | (1 << (fraction - 1)), uint
  ).view(f)[()]


def _f64(x: Array) -> Array:
  return np.asarray(x).astype(F64)


# ***** min / max *****


def _pick(a: Array, b: Array, greater: bool) -> Array:
  """v_max/v_min in IEEE mode: a signaling NaN gives itself quieted (src0's first), a quiet NaN the other operand;
  otherwise the larger (smaller) one, +0 counting as larger than -0."""
  a, b = np.broadcast_arrays(a, b)
  zeros = (a == 0) & (b == 0)
  wins = (
    (a > b) | (zeros & ~np.signbit(a) & np.signbit(b))
    if greater
    else (a < b) | (zeros & np.signbit(a) & ~np.signbit(b))
  )
  return np.select(
    [_signaling(a), _signaling(b), np.isnan(b), np.isnan(a), wins], [_quieted(a), _quieted(b), a, b, a], b
  )


def _fmax(a: Array, b: Array) -> Array:
  return _pick(a, b, True)


def _fmin(a: Array, b: Array) -> Array:
  return _pick(a, b, False)


def _fmed3(a: Array, b: Array, c: Array) -> Array:
  """v_med3_f*: with a NaN operand min3; else the max of the two operands other than the (first) one equal to max3."""
  top = _fmax(_fmax(a, b), c)
  median = np.where(top == a, _fmax(b, c), np.where(top == b, _fmax(a, c), _fmax(a, b)))
  return np.where(np.isnan(a) | np.isnan(b) | np.isnan(c), _fmin(_fmin(a, b), c), median)


def _imed3(a: Array, b: Array, c: Array) -> Array:
  return np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c))


# ***** fused multiply-add *****


def _two_sum(a: Array, b: Array) -> tuple[Array, Array]:
  """(s, e): s = a + b rounded, e = the exact a + b - s (Knuth)."""
  s = a + b
  v = s - a
  return s, (a - (s - v)) + (b - v)


def _two_product(a: Array, b: Array) -> tuple[Array, Array]:
  """(p, e): p = a * b rounded, e = the exact a * b - p (Dekker, Veltkamp's split), for |a|, |b| < 1 far from
  underflow."""
  p = a * b
  ah, bh = (x * 134217729.0 - (x * 134217729.0 - x) for x in (a, b))
  al, bl = a - ah, b - bh
  return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _round_odd(s: Array, e: Array) -> Array:
  """x rounded to odd, from s = x rounded to nearest and e = x - s: s, or where x is inexact and s's last bit is 0, the
  neighbour of s toward x. Rounding that to fewer bits (two or more fewer) rounds x itself to nearest."""
  raw = s.view(I64)
  fix = (e != 0) & np.isfinite(e) & ((raw & 1) == 0)
  return np.where(fix, raw + np.where((e > 0) == (s > 0), 1, -1), raw).view(F64)


def _fma_odd(a: Array, b: Array, c: Array) -> Array:
  """a*b+c rounded to odd in float64, for operands that float32 holds (their product is then exact in float64)."""
  a, b, c = _f64(a), _f64(b), _f64(c)
  return _round_odd(*_two_sum(a * b, c))


def fma_f32(a: Array, b: Array, c: Array, scale: Array | int = 0) -> Array:
  """a*b+c (times 2^scale) rounded once to float32."""
  return np.ldexp(_fma_odd(a, b, c), np.asarray(scale, I32)).astype(F32)


def fma_f16(a: Array, b: Array, c: Array) -> Array:
  """a*b+c rounded once to float16."""
  return _fma_odd(a, b, c).astype(F16)


STICKY = 2.0**-300  # stands in for an addend far below the other's last bit: only its sign can still matter


def fma_f64(a: Array, b: Array, c: Array, scale: Array | int = 0) -> Array:
  """a*b+c (times 2^scale) rounded once to float64. The mantissas' product is split exactly into two doubles (a and b
  scaled to [0.5, 1) first, so nothing overflows or underflows), the three terms are summed exactly near the larger
  exponent, and the sum is rounded to nearest; where the result is below the normal range, it is rounded on the
  denormals' grid instead, as (C + sum) - C with C the smallest normal (scaled alike), whose ulp is that grid's."""
  a, b, c = np.broadcast_arrays(_f64(a), _f64(b), _f64(c))
  scale = np.broadcast_to(np.asarray(scale, I64), a.shape)
  (ma, ea), (mb, eb), (mc, ec) = np.frexp(a), np.frexp(b), np.frexp(c)
  k = ea.astype(I64) + eb
  top = np.where(c != 0, np.maximum(k, ec), k)
  ph, pl = _two_product(ma, mb)
  dk, dc = k - top, ec.astype(I64) - top
  far_product, far_addend = dk < -200, (c != 0) & (dc < -200)
  ph = np.where(far_product, np.copysign(STICKY, ph), np.ldexp(ph, np.maximum(dk, -200).astype(I32)))
  pl = np.where(far_product, 0.0, np.ldexp(pl, np.maximum(dk, -200).astype(I32)))
  mc = np.where(far_addend, np.copysign(STICKY, c), np.ldexp(mc, np.maximum(dc, -200).astype(I32)))
  s1, e1 = _two_sum(ph, mc)
  s2, e2 = _two_sum(pl, e1)
  high, low = _two_sum(s1, s2)
  rest = _round_odd(*_two_sum(low, e2))
  nearest = high + rest
  exponent = np.clip(top + scale, -5000, 5000)
  result = np.ldexp(nearest, exponent.astype(I32))
  smallest_normal = np.copysign(np.ldexp(1.0, np.clip(-1022 - exponent, -100, 100).astype(I32)), nearest)
  s, t = _two_sum(smallest_normal, high)
  grid = np.ldexp((s + _round_odd(*_two_sum(t, rest))) - smallest_normal, exponent.astype(I32))
  grid = np.copysign(np.where(exponent < -1100, 0.0, grid), nearest)  # a zero keeps the sign of what rounded to it
  result = np.where(np.abs(result) < 2.0**-1022, grid, result)
  general = np.isfinite(a) & np.isfinite(b) & np.isfinite(c) & (a != 0) & (b != 0)
  return np.where(general, result, np.ldexp(a * b + c, scale.astype(I32)))


FMA = {F16: fma_f16, F32: fma_f32, F64: fma_f64}


# ***** division steps *****


def _div_scale(f: type) -> Callable[[Array, Array, Array], tuple[Array, Array]]:
  """v_div_scale(src0, denominator, numerator) -> (src0 scaled by a power of two, VCC: the quotient needs rescaling)."""
  _, fraction, bias = FORMATS[f]
  threshold, step = (96, 64) if f is F32 else (768, 128)
  nan = _negative_nan(f)

  def fn(s0: Array, s1: Array, s2: Array) -> tuple[Array, Array]:
    s0, s1, s2 = np.broadcast_arrays(s0, s1, s2)
    de, ne = _exponent(s1), _exponent(s2)
    delta, denominator = ne - de, _bits(s0) == _bits(s1)
    large, small = delta >= threshold, delta <= -threshold
    adjust = np.select(
      [large, de == 0, de >= 2 * bias - 1, small, ne <= fraction + 1],
      [
        np.where(denominator, step, 0),
        step,
        np.where(small & ~denominator, 0, -step),
        np.where(denominator, 0, step),
        step,
      ],
      0,
    )
    zero = (s1 == 0) | (s2 == 0)
    value = np.where(np.isnan(s0), _quieted(s0), np.ldexp(s0, adjust.astype(I32)).astype(f))
    return np.where(zero, nan, value).astype(f), (large | small) & ~zero

  return fn


def _div_fmas(f: type) -> Callable[[Array, Array, Array, Array], Array]:
  """v_div_fmas(a, b, c, vcc) = fma(a, b, c), where VCC is set times 2^step (c >= 2) or 2^-step, rounded once."""
  step, bias = (64 if f is F32 else 128), FORMATS[f][2]
  return lambda a, b, c, vcc: FMA[f](a, b, c, np.where(vcc, np.where(_exponent(c) > bias, step, -step), 0))


def _div_fixup(f: type) -> Callable[[Array, Array, Array], Array]:
  """v_div_fixup(quotient, denominator, numerator): the quotient with its sign, or the special results of the
  operands."""
  _, fraction, bias = FORMATS[f]
  nan, inf, zero = _negative_nan(f), f(np.inf), f(0)

  def fn(q: Array, d: Array, n: Array) -> Array:
    q, d, n = np.broadcast_arrays(q, d, n)
    negative = np.signbit(d) ^ np.signbit(n)
    sign = lambda x: np.where(negative, -x, x)
    conditions = [
      np.isnan(n),
      np.isnan(d),
      ((d == 0) & (n == 0)) | (np.isinf(d) & np.isinf(n)),
      (d == 0) | np.isinf(n),
      np.isinf(d) | (n == 0),
      _exponent(n) - _exponent(d) < -(bias + fraction),
      ~np.isfinite(q),
    ]
    return np.select(
      conditions, [_quieted(n), _quieted(d), nan, sign(inf), sign(zero), sign(zero), sign(inf)], sign(np.abs(q))
    ).astype(f)

  return fn


# ***** other float operations *****


def _in_f64(op: Callable[[Array], Array]) -> Callable[[Array], Array]:
  """A float operation computed in float64 and rounded once to the operand's type."""
  return lambda x: op(_f64(x)).astype(x.dtype)


def _rcp(x: Array) -> Array:
  return 1.0 / x


def _rsq(x: Array) -> Array:
  return 1.0 / np.sqrt(x)


def _fract(x: Array) -> Array:
  """x - floor(x), at most the largest float below 1 (so tiny negative x give that, not 1.0); NaN for NaN and inf."""
  fraction = FORMATS[x.dtype.type][1]
  return np.minimum(x - np.floor(x), x.dtype.type(1 - 2.0 ** -(fraction + 1)))


def _frexp_mant(x: Array) -> Array:
  return np.where(np.isfinite(x), np.frexp(x)[0], x)


def _frexp_exp(dtype: type) -> Callable[[Array], Array]:
  return lambda x: np.where(np.isfinite(x), np.frexp(x)[1], 0).astype(dtype)


def _ldexp(x: Array, e: Array) -> Array:
  """x * 2^e; for f16 the exponent is e's low 16 bits, signed."""
  if x.dtype == F16:
    return np.ldexp(x.astype(F32), np.asarray(e).astype(I16).astype(I32)).astype(F16)
  return np.ldexp(x, np.asarray(e).astype(I32))


def _turns(op: Callable[[Array], Array]) -> Callable[[Array], Array]:
  """v_sin/v_cos: op(2*pi*x), the angle in turns reduced to [-1/2, 1/2] exactly before scaling."""

  def fn(x: Array) -> Array:
    x = _f64(x)
    return op(2 * np.pi * (x - np.round(x))).astype(F32)

  return fn


def _to_int(dtype: type, round_first: Callable[[Array], Array] = np.trunc) -> Callable[[Array], Array]:
  """A float to an integer type: rounded (toward zero by default), saturated to the type's range, NaN -> 0."""
  info = np.iinfo(dtype)

  def fn(x: Array) -> Array:
    t = round_first(x).astype(F64)
    return np.where(np.isnan(t), 0, np.clip(t, info.min, info.max)).astype(dtype)

  return fn


@functools.cache
def _two_over_pi_segments() -> Array:
  """Segment s = the 53 bits of 2/pi after its first s fraction bits, as uint64, for every shift v_trig_preop_f64 uses;
  2/pi is taken to 1201 fraction bits (its bits beyond are zero), from pi by Machin's formula."""
  precision = 1201 + 128

  def arctan_inverse(n: int) -> int:  # arctan(1/n) * 2^precision
    total, term, k, sign = 0, (1 << precision) // n, 1, 1
    while term:
      total += sign * (term // k)
      term //= n * n
      k, sign = k + 2, -sign
    return total

  pi = 4 * (4 * arctan_inverse(5) - arctan_inverse(239))
  two_over_pi = (2 << (precision + 1201)) // pi  # floor(2/pi * 2^1201)
  mask = (1 << 53) - 1
  return np.array([((two_over_pi << (53 + s)) >> 1201) & mask for s in range(31 * 53 + 2047 - 1077 + 1)], U64)


def _trig_preop(x: Array, select: Array) -> Array:
  exponent = _exponent(x)
  shift = (np.asarray(select).astype(I64) & 31) * 53 + np.maximum(exponent - 1077, 0)
  segment = _two_over_pi_segments()[shift]
  scale = -53 - shift + np.where(exponent >= 1968, 128, 0)
  drop = np.clip(-1074 - scale, 0, 63)  # bits below the smallest denormal, cut off (round toward zero)
  return np.ldexp((segment >> drop.astype(U64)).astype(F64), (scale + drop).astype(I32))


def _class(x: Array, mask: Array) -> Array:
  """v_cmp_class: the bit of `mask` for x's class: 0 signaling NaN, 1 quiet NaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0,
  6 +0, 7 +denormal, 8 +normal, 9 +inf."""
  negative, exponent, top = np.signbit(x), _exponent(x), 2 * FORMATS[x.dtype.type][2] + 1
  kind = np.select([_signaling(x), np.isnan(x), exponent == top, exponent > 0, x != 0], [0, 1, 2, 3, 4], 5)
  index = np.where((kind >= 2) & ~negative, 11 - kind, kind)
  return (np.asarray(mask).astype(U32) >> index.astype(U32) & 1).astype(bool)


# ***** integer helpers *****

_REVERSED_BYTE = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], U32)


def _bfrev(x: Array) -> Array:
  r = _REVERSED_BYTE
  return r[x & 255] << 24 | r[x >> 8 & 255] << 16 | r[x >> 16 & 255] << 8 | r[x >> 24]


def _clz(x: Array) -> Array:
  """Zero bits above the highest one bit of a uint32; -1 for 0."""
  return np.where(x == 0, -1, 32 - np.frexp(x.astype(F64))[1]).astype(I32)


def _ctz(x: Array) -> Array:
  """Zero bits below the lowest one bit; -1 for 0."""
  return np.where(x == 0, -1, np.frexp((x & (~x + U32(1))).astype(F64))[1] - 1).astype(I32)


def _cls(x: Array) -> Array:
  """Bits from the MSB down equal to the sign bit (the sign bit counted); -1 when all are."""
  return _clz(x ^ (U32(0) - (x >> 31)))


def _sext24(x: Array) -> Array:
  return (x.astype(I32) << 8) >> 8


def _perm(s0: Array, s1: Array, selector: Array) -> Array:
  """v_perm_b32: each result byte picks by its selector byte from the 8 bytes of {src0, src1} (0-7), the sign of byte
  1, 3, 5 or 7 spread (8-11), 0x00 (12) or 0xff (13 and up)."""
  data = s0.astype(U64) << 32 | s1
  out = np.zeros(np.broadcast(s0, s1, selector).shape, U32)
  for i in range(4):
    sel = (selector >> U32(8 * i) & 255).astype(U64)
    byte = data >> (8 * np.minimum(sel, 7)) & 255
    spread = (data >> (16 * (np.clip(sel, 8, 11) - 8) + 15) & 1) * 255
    out |= np.select([sel < 8, sel < 12, sel == 12], [byte, spread, U64(0)], U64(255)).astype(U32) << U32(8 * i)
  return out


def _bfe_signed(x: Array, offset: Array, size: Array) -> Array:
  size = size & 31
  field = (x >> (offset & 31)) & ((I32(1) << size) - 1)
  up = (32 - size) & 31  # size 0 leaves the empty field, 0
  return (field << up) >> up


def _shift(dtype: type, right: bool) -> Callable[[Array, Array], Array]:
  """v_lshlrev/v_lshrrev/v_ashrrev(amount, x): x shifted by the amount's low 4, 5 or 6 bits (arithmetic for signed
  x)."""
  low = dtype(8 * np.dtype(dtype).itemsize - 1)
  return lambda n, x: x >> (n.astype(dtype) & low) if right else x << (n.astype(dtype) & low)


def _carry_in(op: str) -> Callable[[Array, Array, Array], tuple[Array, Array]]:
  """v_add/sub/subrev_co_ci_u32: a +- b +- carry-in in 64 bits; the carry (borrow) out is the result leaving [0,
  2^32)."""

  def fn(a: Array, b: Array, c: Array) -> tuple[Array, Array]:
    a, b, c = a.astype(I64), b.astype(I64), np.asarray(c).astype(I64)
    exact = a + b + c if op == "add" else a - b - c if op == "sub" else b - a - c
    return exact.astype(U32), (exact < 0) | (exact > 0xFFFFFFFF)

  return fn


def _mad_u64(a: Array, b: Array, c: Array) -> tuple[Array, Array]:
  product = a.astype(U64) * b
  total = product + c.astype(U64)
  return total, total < product


def _mad_i64(a: Array, b: Array, c: Array) -> tuple[Array, Array]:
  """v_mad_i64_i32: the 65-bit signed a*b+c; the carry output is its bit 64 (its sign)."""
  product, addend = a.astype(I64) * b, c.astype(I64)
  total = product + addend
  overflow = ((product ^ total) & (addend ^ total)) < 0
  return total, (total < 0) ^ overflow


# ***** the instruction table *****

FLOAT_COMPARE: dict[str, Callable[[Array, Array], Array]] = {
  "f": lambda a, b: np.zeros(np.broadcast(a, b).shape, bool),
  "lt": np.less,
  "eq": np.equal,
  "le": np.less_equal,
  "gt": np.greater,
  "lg": lambda a, b: (a < b) | (a > b),
  "ge": np.greater_equal,
  "o": lambda a, b: ~(np.isnan(a) | np.isnan(b)),
  "u": lambda a, b: np.isnan(a) | np.isnan(b),
  "nge": lambda a, b: ~(a >= b),
  "nlg": lambda a, b: ~((a < b) | (a > b)),
  "ngt": lambda a, b: ~(a > b),
  "nle": lambda a, b: ~(a <= b),
  "neq": lambda a, b: ~(a == b),
  "nlt": lambda a, b: ~(a < b),
  "t": lambda a, b: np.ones(np.broadcast(a, b).shape, bool),
}
INT_COMPARE = {name: FLOAT_COMPARE[name] for name in ("f", "lt", "eq", "le", "gt", "ge", "t")} | {"ne": np.not_equal}
INTS = {"i16": I16, "u16": U16, "i32": I32, "u32": U32, "i64": I64, "u64": U64}


def _table() -> dict[str, Callable[..., Result]]:
  t: dict[str, Callable[..., Result]] = {}

  def put(names: str, fn: Callable[..., Result]) -> None:
    for name in names.split():
      t[name] = fn

  # -- float arithmetic, min/max, rounding, conversions between floats
  for s, f in FLOATS.items():
    put(f"v_add_{s}", np.add)
    put(f"v_mul_{s}", np.multiply)
    put(f"v_fma_{s}", FMA[f])
    put(f"v_max_{s}", _fmax)
    put(f"v_min_{s}", _fmin)
    put(f"v_floor_{s} ", np.floor)
    put(f"v_ceil_{s}", np.ceil)
    put(f"v_trunc_{s}", np.trunc)
    put(f"v_rndne_{s}", np.rint)
    put(f"v_fract_{s}", _fract)
    put(f"v_frexp_mant_{s}", _frexp_mant)
    put(f"v_ldexp_{s}", _ldexp)
    put(f"v_rcp_{s}", _in_f64(_rcp) if f is not F64 else _rcp)
    put(f"v_rsq_{s}", _in_f64(_rsq) if f is not F64 else _rsq)
    put(f"v_sqrt_{s}", _in_f64(np.sqrt) if f is not F64 else np.sqrt)
    put(f"v_cmp_class_{s} v_cmpx_class_{s}", _class)
  for s in ("f16", "f32"):
    put(f"v_sub_{s}", np.subtract)
    put(f"v_subrev_{s}", lambda a, b: b - a)
    put(f"v_fmac_{s} v_fmaak_{s}", FMA[FLOATS[s]])
    put(f"v_fmamk_{s}", FMA[FLOATS[s]])
    put(f"v_max3_{s}", lambda a, b, c: _fmax(_fmax(a, b), c))
    put(f"v_min3_{s}", lambda a, b, c: _fmin(_fmin(a, b), c))
    put(f"v_med3_{s}", _fmed3)
    put(f"v_maxmin_{s}", lambda a, b, c: _fmin(_fmax(a, b), c))
    put(f"v_minmax_{s}", lambda a, b, c: _fmax(_fmin(a, b), c))
    put(f"v_exp_{s}", _in_f64(np.exp2))
    put(f"v_log_{s}", _in_f64(np.log2))
  put("v_rcp_iflag_f32", _in_f64(_rcp))
  dx9_zero = lambda a, b: (a == 0) | (b == 0)  # the legacy rule 0 * anything = 0, even inf or NaN
  put("v_mul_dx9_zero_f32", lambda a, b: np.where(dx9_zero(a, b), F32(0), a * b))
  put("v_fma_dx9_zero_f32 v_fmac_dx9_zero_f32", lambda a, b, c: np.where(dx9_zero(a, b), c, fma_f32(a, b, c)))
  put("v_sin_f32", _turns(np.sin))
  put("v_cos_f32", _turns(np.cos))
  put("v_frexp_exp_i32_f32 v_frexp_exp_i32_f64", _frexp_exp(I32))
  put("v_frexp_exp_i16_f16", _frexp_exp(I16))
  put("v_fma_mix_f32", fma_f32)
  put("v_fma_mixlo_f16 v_fma_mixhi_f16", lambda a, b, c: fma_f32(a, b, c).astype(F16))
  put("v_trig_preop_f64", _trig_preop)
  for f in (F32, F64):
    s = "f32" if f is F32 else "f64"
    put(f"v_div_scale_{s}", _div_scale(f))
    put(f"v_div_fmas_{s}", _div_fmas(f))
    put(f"v_div_fixup_{s}", _div_fixup(f))
  for source, dest in (("f16", F32), ("f32", F16), ("f32", F64), ("f64", F32)):
    put(f"v_cvt_{np.dtype(dest).name.replace('float', 'f')}_{source}", lambda x, dest=dest: x.astype(dest))

  # -- float <-> integer conversions
  for name, dtype in (
    ("i32_f32", I32),
    ("u32_f32", U32),
    ("i32_f64", I32),
    ("u32_f64", U32),
    ("u16_f16", U16),
    ("i16_f16", I16),
  ):
    put(f"v_cvt_{name}", _to_int(dtype))
  put("v_cvt_floor_i32_f32", _to_int(I32, np.floor))
  put("v_cvt_nearest_i32_f32", _to_int(I32, lambda x: np.floor(x + F32(0.5))))
  for name, dest in (
    ("f32_i32", F32),
    ("f32_u32", F32),
    ("f64_i32", F64),
    ("f64_u32", F64),
    ("f16_i16", F16),
    ("f16_u16", F16),
  ):
    put(f"v_cvt_{name}", lambda x, dest=dest: x.astype(dest))
  for n in range(4):
    put(f"v_cvt_f32_ubyte{n}", lambda x, n=n: (x >> U32(8 * n) & U32(255)).astype(F32))
  put("v_cvt_i32_i16", lambda x: x.astype(I32))
  put("v_cvt_u32_u16", lambda x: x.astype(U32))

  # -- compares
  for s in FLOATS:
    for op, fn in FLOAT_COMPARE.items():
      put(f"v_cmp_{op}_{s} v_cmpx_{op}_{s}", fn)
  for s in INTS:
    for op, fn in INT_COMPARE.items():
      put(f"v_cmp_{op}_{s} v_cmpx_{op}_{s}", fn)

  # -- moves, selects, bitwise
  put("v_mov_b32 v_mov_b16", lambda x: x.copy())
  put("v_cndmask_b32 v_cndmask_b16", lambda a, b, mask: np.where(mask, b, a))
  put("v_and_b32 v_and_b16", np.bitwise_and)
  put("v_or_b32 v_or_b16", np.bitwise_or)
  put("v_xor_b32 v_xor_b16", np.bitwise_xor)
  put("v_xnor_b32", lambda a, b: ~(a ^ b))
  put("v_not_b32", np.invert)
  put("v_not_b16", lambda x: (~x).astype(U16))
  put("v_and_or_b32", lambda a, b, c: (a & b) | c)
  put("v_or3_b32", lambda a, b, c: a | b | c)
  put("v_xor3_b32", lambda a, b, c: a ^ b ^ c)
  put("v_bfi_b32", lambda a, b, c: (a & b) | (~a & c))
  put("v_bfe_u32", lambda x, offset, size: (x >> (offset & U32(31))) & ((U32(1) << (size & U32(31))) - U32(1)))
  put("v_bfe_i32", _bfe_signed)
  put("v_bfm_b32", lambda size, offset: ((U32(1) << (size & U32(31))) - U32(1)) << (offset & U32(31)))
  put("v_alignbit_b32", lambda a, b, c: ((a.astype(U64) << 32 | b) >> (c & U32(31)).astype(U64)).astype(U32))
  put("v_alignbyte_b32", lambda a, b, c: ((a.astype(U64) << 32 | b) >> (8 * (c & U32(3))).astype(U64)).astype(U32))
  put("v_perm_b32", _perm)
  put("v_bfrev_b32", _bfrev)
  put("v_clz_i32_u32", _clz)
  put("v_ctz_i32_b32", _ctz)
  put("v_cls_i32", _cls)
  put("v_bcnt_u32_b32", lambda x, acc: np.bitwise_count(x).astype(U32) + acc)

  # -- shifts (the amount is src0)
  for width, unsigned, signed in ((16, U16, I16), (32, U32, I32), (64, U64, I64)):
    put(f"v_lshlrev_b{width}", _shift(unsigned, False))
    put(f"v_lshrrev_b{width}", _shift(unsigned, True))
    put(f"v_ashrrev_i{width}", _shift(signed, True))
  put("v_lshl_add_u32", lambda a, n, c: (a << (n & U32(31))) + c)
  put("v_add_lshl_u32", lambda a, b, n: (a + b) << (n & U32(31)))
  put("v_lshl_or_b32", lambda a, n, c: (a << (n & U32(31))) | c)

  # -- integer arithmetic
  put("v_add_nc_u32 v_add_nc_i32 v_add_nc_u16 v_add_nc_i16", np.add)
  put("v_sub_nc_u32 v_sub_nc_i32 v_sub_nc_u16 v_sub_nc_i16", np.subtract)
  put("v_subrev_nc_u32", lambda a, b: b - a)
  put("v_add3_u32", lambda a, b, c: a + b + c)
  put("v_xad_u32", lambda a, b, c: (a ^ b) + c)
  put("v_mul_lo_u32 v_mul_lo_u16", np.multiply)
  put("v_mad_u16 v_mad_i16", lambda a, b, c: a * b + c)
  put("v_mul_hi_u32", lambda a, b: (a.astype(U64) * b >> U64(32)).astype(U32))
  put("v_mul_hi_i32", lambda a, b: (a.astype(I64) * b >> 32).astype(I32))
  low24 = U32(0xFFFFFF)
  put("v_mul_u32_u24", lambda a, b: (a & low24) * (b & low24))
  put("v_mad_u32_u24", lambda a, b, c: (a & low24) * (b & low24) + c)
  put("v_mul_hi_u32_u24", lambda a, b: ((a & low24).astype(U64) * (b & low24) >> U64(32)).astype(U32))
  put("v_mul_i32_i24", lambda a, b: _sext24(a) * _sext24(b))
  put("v_mad_i32_i24", lambda a, b, c: _sext24(a) * _sext24(b) + c)
  put("v_mul_hi_i32_i24", lambda a, b: (_sext24(a).astype(I64) * _sext24(b) >> 32).astype(I32))
  put("v_add_co_u32", lambda a, b: (a + b, a + b < a))
  put("v_sub_co_u32", lambda a, b: (a - b, b > a))
  put("v_subrev_co_u32", lambda a, b: (b - a, a > b))
  for op in ("add", "sub", "subrev"):
    put(f"v_{op}_co_ci_u32", _carry_in(op))
  put("v_mad_u64_u32", _mad_u64)
  put("v_mad_i64_i32", _mad_i64)
  for s in ("i16", "u16", "i32", "u32"):
    put(f"v_max_{s}", np.maximum)
    put(f"v_min_{s}", np.minimum)
    put(f"v_med3_{s}", _imed3)
    put(f"v_max3_{s}", lambda a, b, c: np.maximum(np.maximum(a, b), c))
    put(f"v_min3_{s}", lambda a, b, c: np.minimum(np.minimum(a, b), c))
  for s in ("i32", "u32"):
    put(f"v_maxmin_{s}", lambda a, b, c: np.minimum(np.maximum(a, b), c))
    put(f"v_minmax_{s}", lambda a, b, c: np.maximum(np.minimum(a, b), c))
  return t


def _silenced(fn: Callable[..., Result]) -> Callable[..., Result]:
  """fn without NumPy floating-point warnings: NaN, infinity and overflow are results, not errors."""

  @functools.wraps(fn)
  def run(*sources: Array) -> Result:
    with np.errstate(all="ignore"):
      return fn(*sources)

  return run


VALU: dict[str, Callable[..., Result]] = {name: _silenced(fn) for name, fn in sorted(_table().items())}
