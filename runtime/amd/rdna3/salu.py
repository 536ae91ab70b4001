"""RDNA3 (gfx11) scalar ALU semantics: the SOP1, SOP2, SOPC and SOPK integer instructions as NumPy functions over many
waves at once, as AMD's RDNA3 instruction-set reference defines them (results, and SCC in particular).

`SALU` maps an instruction's name (as in opcodes.py) to a function of 1-d arrays holding one element per wave:
  SOP1, SOP2  fn(*sources, scc) -> (result, new_scc)
  SOPC        fn(src0, src1, scc) -> (None, new_scc)
  SOPK        fn(sdst, simm16, scc) -> (result or None, new_scc or None)
Sources come typed by `operands.signature(name).sources` (b32/u32 -> uint32, i32 -> int32, b64/u64 -> uint64, i64 ->
int64); a function reads only their two's-complement bits, so any integer dtype holding those bits is taken alike. `scc`
is a bool array, the current SCC. The result is typed by `signature(name).destination` (uint32, int32, uint64 or int64);
new_scc is a bool array, or None where the instruction leaves SCC as it is.
Instructions that write their destination only in part also read it, and take its current value as a second source:
  s_cmov_b32/b64          fn(src0, sdst, scc): sdst is replaced by src0 where SCC is set
  s_bitset0/1_b32/b64     fn(src0, sdst, scc): src0 is the bit index, sdst the value whose bit is cleared or set
For SOPK, `sdst` is the current value of SDST (for s_cmpk_* the value compared) and `simm16` the raw 16-bit immediate
(uint32): s_movk, s_cmovk, s_addk, s_mulk and s_cmpk_*_i32 sign-extend it, s_cmpk_*_u32 zero-extend it.
Shift amounts, bit indices and field offsets use their low 5 bits in 32-bit instructions and 6 in 64-bit ones;
arithmetic wraps modulo 2^32 or 2^64, without exceptions or NumPy warnings. Instructions that touch EXEC, the PC or
other state (s_*_saveexec, s_getpc/setpc/swappc, s_movrel*, s_getreg/setreg, s_sendmsg*, ...) are the wave
executor's."""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np

from pytc.runtime.amd.rdna3.operands import signature

Array = np.ndarray
Result = tuple[Array | None, Array | None]
U64 = np.uint64
MASK = {width: U64((1 << width) - 1) for width in (8, 16, 32, 64)}
DTYPES = {"b32": np.uint32, "u32": np.uint32, "i32": np.int32, "b64": np.uint64, "u64": np.uint64, "i64": np.int64}
COMPARE = {
  "eq": operator.eq,
  "lg": operator.ne,
  "gt": operator.gt,
  "ge": operator.ge,
  "lt": operator.lt,
  "le": operator.le,
}


# ***** reading operands *****


def _bits(x: Array, width: int = 64) -> Array:
  """The low `width` bits of x's two's-complement form, as uint64."""
  return np.asarray(x).astype(np.uint64) & MASK[width]


def _signed(x: Array, width: int) -> Array:
  """The low `width` bits of x read as a signed number, as int64."""
  if width == 64:
    return _bits(x).view(np.int64)
  half = 1 << (width - 1)
  return (_bits(x, width) ^ U64(half)).astype(np.int64) - half


def _flag(scc: Array) -> Array:
  return np.asarray(scc, dtype=bool)


def _popcount(x: Array) -> Array:
  return np.bitwise_count(x).astype(np.int64)


# (shift, the low `shift` bits of every 2*shift): swapping the halves of each group at every size reverses 64 bits
SWAPS = [
  (U64(shift), U64(sum(((1 << shift) - 1) << at for at in range(0, 64, 2 * shift)))) for shift in (1, 2, 4, 8, 16, 32)
]


def _reverse(x: Array) -> Array:
  """x's 64 bits in reverse order."""
  for shift, low in SWAPS:
    x = ((x >> shift) & low) | ((x & low) << shift)
  return x


def _clz(x: Array, width: int) -> Array:
  """Zero bits above x's highest one bit, counting from bit width-1; -1 where x is 0."""
  smeared = x.copy()
  for shift in (1, 2, 4, 8, 16, 32):
    smeared |= smeared >> U64(shift)
  return np.where(x == 0, -1, width - _popcount(smeared))


def _ctz(x: Array) -> Array:
  """Zero bits below x's lowest one bit; -1 where x is 0."""
  return np.where(x == 0, -1, _popcount(~x & (x - U64(1))))


def _cls(x: Array, width: int) -> Array:
  """Bits after the sign bit equal to it, plus one; -1 where all bits are equal."""
  sign = (x >> U64(width - 1)) & U64(1)
  return _clz(x ^ (sign * MASK[width]), width)


# ***** instruction families *****


def _unary(width: int, f: Callable[[Array], Array], sets_scc: bool) -> Callable[..., Result]:
  """SOP1 fn(src0, scc) -> f(src0's bits), with SCC = result != 0 if `sets_scc`."""

  def fn(s0: Array, scc: Array) -> Result:
    result = f(_bits(s0, width))
    return result, (_bits(result, width) != 0 if sets_scc else None)

  return fn


def _bitwise(width: int, f: Callable[[Array, Array], Array]) -> Callable[..., Result]:
  """SOP2 fn(src0, src1, scc) -> f(the sources' bits) modulo 2^width, SCC = result != 0."""

  def fn(s0: Array, s1: Array, scc: Array) -> Result:
    result = _bits(f(_bits(s0, width), _bits(s1, width)), width)
    return result, result != 0

  return fn


def _plain(width: int, f: Callable[[Array, Array], Array]) -> Callable[..., Result]:
  """SOP2 fn(src0, src1, scc) -> f(the sources' bits), SCC left as it is."""
  return lambda s0, s1, scc: (f(_bits(s0, width), _bits(s1, width)), None)


def _carry(f: Callable[[Array, Array, Array], Array]) -> Callable[..., Result]:
  """SOP2 32-bit unsigned arithmetic: tmp = f(src0, src1, SCC) in 64 bits; result tmp mod 2^32, SCC = carry or borrow
  out, that is tmp outside [0, 2^32) (a borrow wraps tmp to near 2^64)."""

  def fn(s0: Array, s1: Array, scc: Array) -> Result:
    tmp = f(_bits(s0, 32), _bits(s1, 32), _flag(scc).astype(np.uint64))
    return tmp & MASK[32], tmp > MASK[32]

  return fn


def _overflow(f: Callable[[Array, Array], Array]) -> Callable[..., Result]:
  """SOP2 32-bit signed arithmetic: f of the signed sources, exact in int64; SCC = signed overflow (outside int32)."""

  def fn(s0: Array, s1: Array, scc: Array) -> Result:
    exact = f(_signed(s0, 32), _signed(s1, 32))
    return exact, (exact < -(1 << 31)) | (exact >= 1 << 31)

  return fn


def _select(width: int, signed: bool, keep_first: Callable[[Array, Array], Array]) -> Callable[..., Result]:
  """s_min/s_max: SCC = keep_first(src0, src1); result src0 where SCC, else src1."""

  def fn(s0: Array, s1: Array, scc: Array) -> Result:
    a, b = (_signed(s0, width), _signed(s1, width)) if signed else (_bits(s0, width), _bits(s1, width))
    first = keep_first(a, b)
    return np.where(first, a, b), first

  return fn


def _bfe(width: int, signed: bool) -> Callable[..., Result]:
  """s_bfe: the field of src0 at offset src1[4:0] (src1[5:0] in 64 bits), src1[22:16] bits wide, zero- or sign-extended;
  width 0 gives 0, a field running past the top takes what is there (sign-extended: the source's sign). SCC = result !=
  0."""

  def fn(s0: Array, s1: Array, scc: Array) -> Result:
    control = _bits(s1, 32)
    offset, size = control & U64(width - 1), (control >> U64(16)) & U64(0x7F)
    value = (_signed(s0, width) >> offset.astype(np.int64)).view(np.uint64) if signed else _bits(s0, width) >> offset
    keep = np.minimum(size, U64(64))
    cut = U64(64) - np.maximum(keep, U64(1))  # bits above the field, in 64; the guard keeps the shift below 64
    field = value << cut
    field = (field.view(np.int64) >> cut.astype(np.int64)).view(np.uint64) if signed else field >> cut
    result = _bits(np.where(size == 0, U64(0), field), width)
    return result, result != 0

  return fn


def _bfm(width: int) -> Callable[..., Result]:
  """s_bfm: ((1 << src0[4:0]) - 1) << src1[4:0] (5:0 in 64 bits), SCC left as it is."""
  low = U64(width - 1)
  return _plain(64, lambda a, b: _bits(((U64(1) << (a & low)) - U64(1)) << (b & low), width))


def _compare(read: Callable[[Array], Array], op: Callable[[Array, Array], Array]) -> Callable[..., Result]:
  """SOPC fn(src0, src1, scc) -> (None, op(read(src0), read(src1)))."""
  return lambda s0, s1, scc: (None, op(read(s0), read(s1)))


def _bitcmp(width: int, want: int) -> Callable[..., Result]:
  """SOPC s_bitcmp: SCC = (bit src1[4:0] (5:0 in 64 bits) of src0) == want."""
  return lambda s0, s1, scc: (None, ((_bits(s0, width) >> (_bits(s1, 32) & U64(width - 1))) & U64(1)) == want)


def _bitset(width: int, value: int) -> Callable[..., Result]:
  """SOP1 fn(src0, sdst, scc): sdst with bit src0[4:0] (5:0 in 64 bits) cleared (value 0) or set (value 1)."""

  def fn(s0: Array, sdst: Array, scc: Array) -> Result:
    bit = U64(1) << (_bits(s0, 32) & U64(width - 1))
    old = _bits(sdst, width)
    return (old | bit) if value else (old & ~bit), None

  return fn


def _cmpk(op: Callable[[Array, Array], Array], signed: bool) -> Callable[..., Result]:
  """SOPK s_cmpk: SCC = op(SDST, simm16), both signed (simm16 sign-extended) or both unsigned (zero-extended)."""
  if signed:
    return lambda sdst, k, scc: (None, op(_signed(sdst, 32), _signed(k, 16)))
  return lambda sdst, k, scc: (None, op(_bits(sdst, 32), _bits(k, 16)))


# ***** the table *****


def _pack(s0: Array, s1: Array, high0: bool, high1: bool) -> Array:
  half = lambda x, high: (x >> U64(16)) & MASK[16] if high else x & MASK[16]
  return half(s0, high0) | (half(s1, high1) << U64(16))


def _absdiff(s0: Array, s1: Array, scc: Array) -> Result:
  """|src0 - src1|, the difference taken modulo 2^32 first (as AMD's pseudocode does); SCC = result != 0."""
  result = _bits(np.abs(_signed(_signed(s0, 32) - _signed(s1, 32), 32)), 32)
  return result, result != 0


def _addk(sdst: Array, k: Array, scc: Array) -> Result:
  exact = _signed(sdst, 32) + _signed(k, 16)
  return exact, (exact < -(1 << 31)) | (exact >= 1 << 31)


FAMILIES: dict[str, Callable[..., Result]] = {
  "s_cls_i32": _unary(32, lambda x: _cls(x, 32), False),
  "s_cls_i32_i64": _unary(64, lambda x: _cls(x, 64), False),
  "s_sext_i32_i8": _unary(32, lambda x: _signed(x, 8), False),
  "s_sext_i32_i16": _unary(32, lambda x: _signed(x, 16), False),
  "s_abs_i32": _unary(32, lambda x: np.abs(_signed(x, 32)), True),
  "s_add_u32": _carry(lambda a, b, c: a + b),
  "s_sub_u32": _carry(lambda a, b, c: a - b),
  "s_addc_u32": _carry(lambda a, b, c: a + b + c),
  "s_subb_u32": _carry(lambda a, b, c: a - b - c),
  **{f"s_lshl{n}_add_u32": _carry(lambda a, b, c, n=n: (a << U64(n)) + b) for n in (1, 2, 3, 4)},
  "s_add_i32": _overflow(operator.add),
  "s_sub_i32": _overflow(operator.sub),
  "s_min_i32": _select(32, True, operator.lt),
  "s_min_u32": _select(32, False, operator.lt),
  "s_max_i32": _select(32, True, operator.ge),
  "s_max_u32": _select(32, False, operator.ge),
  "s_ashr_i32": _bitwise(32, lambda a, b: _signed(a, 32) >> (b & U64(31)).astype(np.int64)),
  "s_ashr_i64": _bitwise(64, lambda a, b: _signed(a, 64) >> (b & U64(63)).astype(np.int64)),
  "s_bfe_u32": _bfe(32, False),
  "s_bfe_i32": _bfe(32, True),
  "s_bfe_u64": _bfe(64, False),
  "s_bfe_i64": _bfe(64, True),
  "s_absdiff_i32": _absdiff,
  "s_mul_i32": _plain(32, lambda a, b: _signed(a, 32) * _signed(b, 32)),
  "s_mul_hi_u32": _plain(32, lambda a, b: (a * b) >> U64(32)),
  "s_mul_hi_i32": _plain(32, lambda a, b: (_signed(a, 32) * _signed(b, 32)) >> 32),
  "s_pack_ll_b32_b16": _plain(32, lambda a, b: _pack(a, b, False, False)),
  "s_pack_lh_b32_b16": _plain(32, lambda a, b: _pack(a, b, False, True)),
  "s_pack_hh_b32_b16": _plain(32, lambda a, b: _pack(a, b, True, True)),
  "s_bitcmp0_b32": _bitcmp(32, 0),
  "s_bitcmp1_b32": _bitcmp(32, 1),
  "s_bitcmp0_b64": _bitcmp(64, 0),
  "s_bitcmp1_b64": _bitcmp(64, 1),
  "s_cmp_eq_u64": _compare(_bits, operator.eq),
  "s_cmp_lg_u64": _compare(_bits, operator.ne),
  **{f"s_cmp_{c}_i32": _compare(lambda x: _signed(x, 32), op) for c, op in COMPARE.items()},
  **{f"s_cmp_{c}_u32": _compare(lambda x: _bits(x, 32), op) for c, op in COMPARE.items()},
  **{f"s_cmpk_{c}_i32": _cmpk(op, True) for c, op in COMPARE.items()},
  **{f"s_cmpk_{c}_u32": _cmpk(op, False) for c, op in COMPARE.items()},
  "s_movk_i32": lambda sdst, k, scc: (_signed(k, 16), None),
  "s_cmovk_i32": lambda sdst, k, scc: (np.where(_flag(scc), _signed(k, 16), _signed(sdst, 32)), None),
  "s_addk_i32": _addk,
  "s_mulk_i32": lambda sdst, k, scc: (_signed(sdst, 32) * _signed(k, 16), None),
}

for _w in (32, 64):
  _b = f"b{_w}"
  FAMILIES |= {
    f"s_mov_{_b}": _unary(_w, lambda x: x, False),
    f"s_not_{_b}": _unary(_w, lambda x, w=_w: ~x & MASK[w], True),
    f"s_cmov_{_b}": lambda s0, sdst, scc, w=_w: (np.where(_flag(scc), _bits(s0, w), _bits(sdst, w)), None),
    f"s_brev_{_b}": _unary(_w, lambda x, w=_w: _reverse(x) >> U64(64 - w), False),
    f"s_ctz_i32_{_b}": _unary(_w, _ctz, False),
    f"s_clz_i32_u{_w}": _unary(_w, lambda x, w=_w: _clz(x, w), False),
    f"s_bcnt0_i32_{_b}": _unary(_w, lambda x, w=_w: w - _popcount(x), True),
    f"s_bcnt1_i32_{_b}": _unary(_w, _popcount, True),
    f"s_bitset0_{_b}": _bitset(_w, 0),
    f"s_bitset1_{_b}": _bitset(_w, 1),
    f"s_and_{_b}": _bitwise(_w, operator.and_),
    f"s_or_{_b}": _bitwise(_w, operator.or_),
    f"s_xor_{_b}": _bitwise(_w, operator.xor),
    f"s_nand_{_b}": _bitwise(_w, lambda a, b: ~(a & b)),
    f"s_nor_{_b}": _bitwise(_w, lambda a, b: ~(a | b)),
    f"s_xnor_{_b}": _bitwise(_w, lambda a, b: ~(a ^ b)),
    f"s_and_not1_{_b}": _bitwise(_w, lambda a, b: a & ~b),
    f"s_or_not1_{_b}": _bitwise(_w, lambda a, b: a | ~b),
    f"s_lshl_{_b}": _bitwise(_w, lambda a, b, w=_w: a << (b & U64(w - 1))),
    f"s_lshr_{_b}": _bitwise(_w, lambda a, b, w=_w: a >> (b & U64(w - 1))),
    f"s_bfm_{_b}": _bfm(_w),
    f"s_cselect_{_b}": lambda s0, s1, scc, w=_w: (np.where(_flag(scc), _bits(s0, w), _bits(s1, w)), None),
  }


def _typed(x: Array, dtype: type) -> Array:
  """x's bits, wrapped to the size of `dtype`, as `dtype`."""
  dtype = np.dtype(dtype)
  return np.asarray(x).astype(np.uint64).astype(f"u{dtype.itemsize}").view(dtype)


def _instruction(name: str, semantics: Callable[..., Result]) -> Callable[..., Result]:
  """`semantics` with its result typed as `name`'s destination and its SCC a bool array, computed without warnings."""
  dtype = DTYPES.get(signature(name).destination)

  def fn(*operands: Array) -> Result:
    with np.errstate(all="ignore"):
      result, scc = semantics(*operands)
      return (None if result is None or dtype is None else _typed(result, dtype)), (None if scc is None else _flag(scc))

  fn.__name__ = fn.__qualname__ = name
  fn.__doc__ = f"RDNA3 {name}: " + (semantics.__doc__ or "see the module docstring.")
  return fn


SALU: dict[str, Callable[..., Result]] = {
  name: _instruction(name, semantics) for name, semantics in sorted(FAMILIES.items())
}
