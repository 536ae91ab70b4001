"""Scalar semantics of the elementwise uop ops, as arith/math ops on one element, or elementwise on
vectors of elements (every lowering here builds its constants and result types in its operand's shape).

Integers are signless in arith; the signedness of the uop element type (`ui8` vs `i8`, and
`i1` as unsigned) picks the signed or unsigned arith op.
"""

from collections.abc import Callable

from mlir import ir
from mlir.dialects import arith, math

from pytc.dialects import uop
from pytc.passes import PassError
from pytc.passes.codegen.lanes import shaped, splat
from pytc.passes.codegen.transcendental import APPROXIMATIONS, APPROXIMATIONS_F64, pow_f64

Lowering = Callable[..., ir.Value]


def is_float(t: ir.Type) -> bool:
  return isinstance(t, ir.FloatType)


def is_unsigned(t: ir.Type) -> bool:
  return isinstance(t, ir.IntegerType) and (ir.IntegerType(t).is_unsigned or ir.IntegerType(t).width == 1)


def width(t: ir.Type) -> int:
  return ir.FloatType(t).width if is_float(t) else ir.IntegerType(t).width


def signless(t: ir.Type) -> ir.Type:
  """The type arith computes in: unsigned integers become signless of the same width."""
  return ir.IntegerType.get_signless(width(t)) if isinstance(t, ir.IntegerType) else t


def storage_type(t: ir.Type) -> ir.Type:
  """The element type of a buffer holding `t`: signless, with booleans stored as bytes."""
  return ir.IntegerType.get_signless(8) if isinstance(t, ir.IntegerType) and width(t) == 1 else signless(t)


def load(t: ir.Type, stored: ir.Value) -> ir.Value:
  return arith.trunci(shaped(signless(t), stored), stored) if storage_type(t) != signless(t) else stored


def store(t: ir.Type, value: ir.Value) -> ir.Value:
  return arith.extui(shaped(storage_type(t), value), value) if storage_type(t) != signless(t) else value


def element_type(value: ir.Value) -> ir.Type:
  """The element type of a tensor or memref value, or the type of a scalar."""
  return value.type.element_type if isinstance(value.type, ir.ShapedType) else value.type


def constant(t: ir.Type, value: float | int | bool, like: ir.Value | None = None) -> ir.Value:
  """A constant of uop element type `t` (built in its signless form), splat in the shape of `like` if that is a
  vector."""
  if is_float(t):
    attr = ir.FloatAttr.get(t, float(value))
  else:
    bits, value = width(t), int(value) & ((1 << width(t)) - 1)
    attr = ir.IntegerAttr.get(signless(t), value - (1 << bits) if bits > 1 and value >> (bits - 1) else value)
  return splat(attr, like)


def constant_from_attr(attr: ir.Attribute) -> ir.Value:
  if isinstance(attr, ir.FloatAttr):
    return arith.constant(attr.type, attr)
  integer = ir.IntegerAttr(attr)
  return constant(integer.type, integer.value)


OpKind = type[ir.OpView]

# uop op: (float lowering, signed integer lowering, unsigned integer lowering)
BINARY: dict[OpKind, tuple[Lowering | None, Lowering | None, Lowering | None]] = {
  uop.AddOp: (arith.addf, arith.addi, arith.addi),
  uop.MulOp: (arith.mulf, arith.muli, arith.muli),
  uop.MaxOp: (arith.maximumf, arith.maxsi, arith.maxui),
  uop.IdivOp: (None, arith.divsi, arith.divui),
  uop.ModOp: (None, arith.remsi, arith.remui),
  uop.AndOp: (None, arith.andi, arith.andi),
  uop.OrOp: (None, arith.ori, arith.ori),
  uop.XorOp: (None, arith.xori, arith.xori),
  uop.ShlOp: (None, arith.shli, arith.shli),
  uop.ShrOp: (None, arith.shrsi, arith.shrui),
  uop.PowOp: (math.powf, None, None),
}

COMPARE: dict[OpKind, tuple[arith.CmpFPredicate, arith.CmpIPredicate, arith.CmpIPredicate]] = {
  uop.CmpltOp: (arith.CmpFPredicate.OLT, arith.CmpIPredicate.slt, arith.CmpIPredicate.ult),
  uop.CmpneOp: (arith.CmpFPredicate.UNE, arith.CmpIPredicate.ne, arith.CmpIPredicate.ne),
  uop.CmpeqOp: (arith.CmpFPredicate.OEQ, arith.CmpIPredicate.eq, arith.CmpIPredicate.eq),
}

FLOAT_UNARY: dict[OpKind, Lowering] = {
  uop.Exp2Op: math.exp2,
  uop.ExpOp: math.exp,
  uop.Log2Op: math.log2,
  uop.LogOp: math.log,
  uop.SinOp: math.sin,
  uop.CosOp: math.cos,
  uop.TanhOp: math.tanh,
  uop.SqrtOp: math.sqrt,
  uop.TruncOp: math.trunc,
}


def _pick(t: ir.Type, choices: tuple) -> object:
  return choices[0] if is_float(t) else choices[2] if is_unsigned(t) else choices[1]


def safe_division(t: ir.Type, lowering: Lowering, a: ir.Value, b: ir.Value) -> ir.Value:
  """Integer division that cannot trap: x / 0 and x % 0 are 0, and MIN / -1 wraps to MIN (its remainder is 0)."""
  zero, one = constant(t, 0, a), constant(t, 1, a)
  by_zero = arith.cmpi(arith.CmpIPredicate.eq, b, zero)
  unsafe = by_zero
  if not is_unsigned(t):
    overflow = arith.andi(
      arith.cmpi(arith.CmpIPredicate.eq, a, constant(t, -(1 << (width(t) - 1)), a)),
      arith.cmpi(arith.CmpIPredicate.eq, b, constant(t, -1, a)),
    )
    unsafe = arith.ori(by_zero, overflow)
  return arith.select(by_zero, zero, lowering(a, arith.select(unsafe, one, b)))


def safe_shift(t: ir.Type, kind: OpKind, a: ir.Value, b: ir.Value) -> ir.Value:
  """A shift by the element width or more (or by a negative amount) is poison in arith; here it is what shifting one
  bit at a time gives: shl and unsigned shr 0, signed shr the sign bits."""
  too_far = arith.cmpi(arith.CmpIPredicate.uge, b, constant(t, width(t), a))
  if kind is uop.ShrOp and not is_unsigned(t):
    return arith.shrsi(a, arith.select(too_far, constant(t, width(t) - 1, a), b))
  return arith.select(too_far, constant(t, 0, a), _pick(t, BINARY[kind])(a, b))


def round_to_odd_f32(x: ir.Value) -> ir.Value:
  """An f64 `x` as f32, rounded toward zero and, when inexact, with the last bit set: rounding that to a type of at
  least two bits fewer gives what rounding `x` to it directly would."""
  i32 = ir.IntegerType.get_signless(32)
  nearest = arith.truncf(shaped(ir.F32Type.get(), x), x)
  back = arith.extf(x.type, nearest)
  away = arith.extui(shaped(i32, x), arith.cmpf(arith.CmpFPredicate.OGT, math.absf(back), math.absf(x)))
  inexact = arith.extui(shaped(i32, x), arith.cmpf(arith.CmpFPredicate.ONE, back, x))
  return arith.bitcast(nearest.type, arith.ori(arith.subi(arith.bitcast(shaped(i32, x), nearest), away), inexact))


def round_float(x: ir.Value, dst: ir.Type, nan_payloads: bool = True) -> ir.Value:
  """`x` (f32 or f64) rounded to the narrower float type `dst`. f64 to f16 or bf16 goes to f32 rounding to odd first
  (LLVM's direct conversions are library calls the JIT lacks). To bf16 it rounds to nearest even in integer arithmetic
  (LLVM's f32 to bf16 is an x86 instruction that flushes denormals to zero); a NaN stays a quiet NaN of its sign.
  Without `nan_payloads`, x's NaNs have their low 16 bits clear, which rounding leaves as they are (a NaN computed from
  bf16 operands is one of them or the default NaN)."""
  if element_type(x) == ir.F64Type.get() and dst in (ir.F16Type.get(), ir.BF16Type.get()):
    x = round_to_odd_f32(x)
  if dst != ir.BF16Type.get():
    return arith.truncf(shaped(dst, x), x)
  i32 = ir.IntegerType.get_signless(32)
  bits = arith.bitcast(shaped(i32, x), x)
  high = arith.shrui(bits, constant(i32, 16, x))
  rounded = arith.shrui(
    arith.addi(bits, arith.addi(arith.andi(high, constant(i32, 1, x)), constant(i32, 0x7FFF, x))), constant(i32, 16, x)
  )
  if nan_payloads:
    rounded = arith.select(arith.cmpf(arith.CmpFPredicate.UNO, x, x), arith.ori(high, constant(i32, 0x40, x)), rounded)
  return arith.bitcast(shaped(dst, x), arith.trunci(shaped(ir.IntegerType.get_signless(16), x), rounded))


# bf16 ops LLVM computes in f32 and truncates back with the x86 instruction that flushes denormals to zero, or, on x86
# without AVX-512 BF16, with a compiler-rt call (__truncsfbf2) the JIT does not have: those that round, and max and
# trunc (exact, but their results go through the same truncation: max(0, a denormal) came out 0)
ROUNDING_FLOAT_OPS = (uop.AddOp, uop.MulOp, uop.PowOp, uop.SqrtOp, uop.RecipOp, uop.MaxOp, uop.TruncOp)


def bf16_to_f32(x: ir.Value) -> ir.Value:
  """A bf16 value (or vector) widened to f32 exactly, in integer arithmetic: LLVM folds `max(fpext a, fpext b)` back
  into a bf16 max that it computes with the flushing truncation, so it must not see an fpext here."""
  i16, i32 = ir.IntegerType.get_signless(16), ir.IntegerType.get_signless(32)
  bits = arith.extui(shaped(i32, x), arith.bitcast(shaped(i16, x), x))
  return arith.bitcast(shaped(ir.F32Type.get(), x), arith.shli(bits, constant(i32, 16, x)))


def through_f32(t: ir.Type, kind: OpKind, lowering: Lowering) -> Lowering:
  """`lowering` itself, or for a bf16 op that rounds, `lowering` on operands widened to f32, rounded back by round_float
  (LLVM computes bf16 arithmetic in f32 too, but rounds with the x86 instruction that flushes denormals to zero)."""
  if t != ir.BF16Type.get() or kind not in ROUNDING_FLOAT_OPS:
    return lowering
  return lambda *operands: round_float(lowering(*map(bf16_to_f32, operands)), t, nan_payloads=False)


def reciprocal(x: ir.Value) -> ir.Value:
  return arith.divf(constant(element_type(x), 1.0, x), x)


def cast(x: ir.Value, src: ir.Type, dst: ir.Type) -> ir.Value:
  """C-style conversion between uop element types; anything to i1 is `x != 0`."""
  if src == dst:
    return x
  if isinstance(dst, ir.IntegerType) and width(dst) == 1:
    zero = constant(src, 0, x)
    return (
      arith.cmpf(arith.CmpFPredicate.UNE, x, zero) if is_float(src) else arith.cmpi(arith.CmpIPredicate.ne, x, zero)
    )
  # bf16 widens in integer arithmetic (bf16_to_f32: LLVM must see no fpext from bf16)
  if is_float(src) and is_float(dst):
    if src == ir.BF16Type.get():
      x, src = bf16_to_f32(x), ir.F32Type.get()
    elif width(src) == width(dst):
      x, src = arith.extf(shaped(ir.F32Type.get(), x), x), ir.F32Type.get()
    if src == dst:
      return x
    return arith.extf(shaped(dst, x), x) if width(dst) > width(src) else round_float(x, dst)
  if is_float(src):
    if width(dst) >= 64 or (width(dst) == 32 and not is_unsigned(dst)):
      return (arith.fptoui if is_unsigned(dst) else arith.fptosi)(shaped(signless(dst), x), x)
    # narrower and unsigned targets through i64, then wrapped: LLVM leaves an out-of-range fptoui (-1.0 to uint8)
    # undefined, which vector and scalar code answered differently; through i64 it is -1 mod 2^n, as NumPy gives on x86
    wide = arith.fptosi(shaped(ir.IntegerType.get_signless(64), x), x)
    return arith.trunci(shaped(signless(dst), x), wide)
  if is_float(dst):  # to bf16 through f64 (exact from 32-bit integers), as LLVM's own conversion rounds twice
    wide = ir.F64Type.get() if dst == ir.BF16Type.get() else dst
    converted = (arith.uitofp if is_unsigned(src) else arith.sitofp)(shaped(wide, x), x)
    return converted if wide == dst else round_float(converted, dst)
  if width(src) == width(dst):
    return x
  if width(dst) < width(src):
    return arith.trunci(shaped(signless(dst), x), x)
  return (arith.extui if is_unsigned(src) else arith.extsi)(shaped(signless(dst), x), x)


def power(t: ir.Type, x: ir.Value, y: ir.Value) -> ir.Value:
  """x^y without a math library: in f64 (pow_f64), rounded once to a narrower `t`."""
  if t == ir.F64Type.get():
    return pow_f64(x, y)

  def widen(v: ir.Value) -> ir.Value:
    v = bf16_to_f32(v) if t == ir.BF16Type.get() else v
    return arith.extf(shaped(ir.F64Type.get(), v), v)

  return round_float(pow_f64(widen(x), widen(y)), t)


def lower_scalar(op: ir.OpView, operands: list[ir.Value], math_library: bool = True) -> ir.Value:
  """The arith/math value computing one element of the elementwise uop `op`. Without `math_library` (a target that links
  none) no math op that becomes a library call is left: f64 transcendentals and pow are pytc's own arithmetic too."""
  kind = type(op.operation.opview)
  t = element_type(op.operands[0]) if len(op.operands) else element_type(op.results[0])
  if not math_library and kind is uop.PowOp and is_float(t):
    return power(t, *operands)
  if not math_library and kind in APPROXIMATIONS_F64 and t == ir.F64Type.get():
    return APPROXIMATIONS_F64[kind](operands[0])
  if kind in BINARY:
    if (lowering := _pick(t, BINARY[kind])) is None:
      raise PassError(op.location, f"{kind.OPERATION_NAME} has no lowering for {t}")
    if kind in (uop.ShlOp, uop.ShrOp):
      return safe_shift(t, kind, *operands)
    return (
      safe_division(t, lowering, *operands)
      if kind in (uop.IdivOp, uop.ModOp)
      else through_f32(t, kind, lowering)(*operands)
    )
  if kind in COMPARE:
    predicate = _pick(t, COMPARE[kind])
    return (arith.cmpf if is_float(t) else arith.cmpi)(predicate, *operands)
  if kind in APPROXIMATIONS and t != ir.F64Type.get():
    x = (
      operands[0]
      if t == ir.F32Type.get()
      else bf16_to_f32(operands[0])
      if t == ir.BF16Type.get()
      else arith.extf(shaped(ir.F32Type.get(), operands[0]), operands[0])
    )
    result = APPROXIMATIONS[kind](x)
    return result if t == ir.F32Type.get() else round_float(result, t)
  if kind in FLOAT_UNARY:
    return through_f32(t, kind, FLOAT_UNARY[kind])(operands[0])
  if kind is uop.NegOp:
    return arith.negf(operands[0]) if is_float(t) else arith.subi(constant(t, 0, operands[0]), operands[0])
  if kind is uop.RecipOp:
    return through_f32(t, kind, reciprocal)(operands[0])
  if kind is uop.WhereOp:
    return arith.select(*operands)
  if kind is uop.MulaccOp:
    return lower_scalar_pair(t, uop.AddOp, lower_scalar_pair(t, uop.MulOp, *operands[:2]), operands[2])
  if kind is uop.CastOp:
    return cast(operands[0], t, element_type(op.results[0]))
  if kind is uop.BitcastOp:
    dst = signless(element_type(op.results[0]))
    return operands[0] if dst == signless(t) else arith.bitcast(shaped(dst, operands[0]), operands[0])
  if kind is uop.ContiguousOp:
    return operands[0]
  raise PassError(op.location, f"{op.operation.name} is not an elementwise op")


def lower_scalar_pair(t: ir.Type, kind: OpKind, lhs: ir.Value, rhs: ir.Value) -> ir.Value:
  return through_f32(t, kind, _pick(t, BINARY[kind]))(lhs, rhs)
