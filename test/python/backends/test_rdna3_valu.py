"""The RDNA3 vector ALU semantics (runtime/amd/rdna3/valu.py) against references written apart from them: Python integers
for the integer instructions, exact rationals (fractions) rounded to nearest even for the float ones, `math` for the
transcendental ones, each over edge inputs (carries and borrows, wraparound, shift amounts past the width, +-0, +-inf,
NaN, denormals, the largest values, saturating conversions). Every instruction of the list the emulator must cover is in
VALU, every function returns its destination's type, and none warns."""
import itertools
import math
import random
import warnings
from fractions import Fraction

import numpy as np
import pytest

from pytc.runtime.amd.rdna3.operands import signature
from pytc.runtime.amd.rdna3.valu import VALU

VOP1 = """v_bfrev_b32 v_cls_i32 v_clz_i32_u32 v_cvt_f16_f32 v_cvt_f16_i16 v_cvt_f16_u16 v_cvt_f32_f16 v_cvt_f32_f64 v_cvt_f32_i32
v_cvt_f32_u32 v_cvt_f32_ubyte0 v_cvt_f32_ubyte1 v_cvt_f32_ubyte2 v_cvt_f32_ubyte3 v_cvt_f64_f32 v_cvt_f64_i32 v_cvt_f64_u32
v_cvt_i32_f32 v_cvt_i32_f64 v_cvt_u32_f32 v_cvt_u32_f64 v_floor_f32 v_floor_f64 v_ceil_f32 v_ceil_f64 v_fract_f32 v_fract_f64
v_mov_b16 v_mov_b32 v_not_b32 v_rcp_f16 v_rcp_f32 v_rcp_f64 v_rcp_iflag_f32 v_rndne_f32 v_rndne_f64 v_rsq_f32 v_rsq_f64 v_sqrt_f16
v_sqrt_f32 v_sqrt_f64 v_trunc_f16 v_trunc_f32 v_trunc_f64 v_exp_f32 v_log_f32 v_frexp_mant_f32 v_frexp_mant_f64
v_frexp_exp_i32_f32 v_frexp_exp_i32_f64"""
VOP2 = """v_add_co_ci_u32 v_add_f16 v_add_f32 v_add_nc_u32 v_and_b32 v_ashrrev_i32 v_cndmask_b32 v_fmaak_f32 v_fmac_f32 v_fmamk_f32
v_lshlrev_b32 v_lshrrev_b32 v_max_f32 v_max_i32 v_max_u32 v_min_f32 v_min_i32 v_min_u32 v_mul_f16 v_mul_f32 v_mul_hi_i32_i24
v_mul_hi_u32_u24 v_mul_i32_i24 v_mul_u32_u24 v_or_b32 v_sub_f16 v_sub_f32 v_sub_nc_u32 v_subrev_co_ci_u32 v_subrev_f32 v_xor_b32
v_sub_co_ci_u32 v_max_f16 v_min_f16 v_subrev_nc_u32 v_xnor_b32 v_ldexp_f16"""
VOP3 = """v_add3_u32 v_xad_u32 v_add_f64 v_add_lshl_u32 v_add_nc_u16 v_sub_nc_u16 v_alignbit_b32 v_and_b16 v_or_b16 v_xor_b16 v_and_or_b32
v_ashrrev_i16 v_ashrrev_i64 v_bfe_i32 v_bfe_u32 v_bfi_b32 v_cndmask_b16 v_div_fixup_f32 v_div_fixup_f64 v_div_fmas_f32
v_div_fmas_f64 v_fma_f32 v_fma_f64 v_fma_f16 v_ldexp_f32 v_ldexp_f64 v_lshl_add_u32 v_lshl_or_b32 v_lshlrev_b16 v_lshlrev_b64
v_lshrrev_b16 v_lshrrev_b64 v_mad_u16 v_mad_u32_u24 v_max3_i16 v_max3_i32 v_max3_u16 v_max3_u32 v_max3_f32 v_min3_f32 v_max_f64
v_max_i16 v_max_u16 v_maxmin_f32 v_minmax_f32 v_med3_f32 v_min3_i16 v_min3_i32 v_min3_u16 v_min3_u32 v_min_f64 v_min_i16
v_min_u16 v_mul_f64 v_mul_hi_i32 v_mul_hi_u32 v_mul_lo_u16 v_mul_lo_u32 v_or3_b32 v_perm_b32 v_trig_preop_f64 v_fma_mixlo_f16
v_fma_mixhi_f16 v_fma_mix_f32"""
VOP3SD = """v_add_co_ci_u32 v_add_co_u32 v_div_scale_f32 v_div_scale_f64 v_mad_i64_i32 v_mad_u64_u32 v_sub_co_ci_u32 v_sub_co_u32
v_subrev_co_u32 v_subrev_co_ci_u32"""
FLOAT_CMP = "f lt eq le gt lg ge o u nge nlg ngt nle neq nlt t".split()
INT_CMP = "f lt eq le gt ne ge t".split()
COMPARES = [f"v_{x}_{op}_{t}" for x in ("cmp", "cmpx") for op in FLOAT_CMP for t in ("f16", "f32", "f64")] + \
  [f"v_{x}_{op}_{t}" for x in ("cmp", "cmpx") for op in INT_CMP for t in ("i16", "i32", "i64", "u16", "u32", "u64")] + \
  [f"v_{x}_class_{t}" for x in ("cmp", "cmpx") for t in ("f16", "f32", "f64")]
REQUIRED = sorted(set((VOP1 + " " + VOP2 + " " + VOP3 + " " + VOP3SD).split()) | set(COMPARES))

DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "b16": np.uint16, "u16": np.uint16, "i16": np.int16,
          "b32": np.uint32, "u32": np.uint32, "u24": np.uint32, "i32": np.int32, "i24": np.int32, "b64": np.uint64,
          "u64": np.uint64, "i64": np.int64, "mask": np.bool_}
UNSIGNED = {np.float16: np.uint16, np.float32: np.uint32, np.float64: np.uint64}
# precision (bits), lowest normal exponent, highest exponent
FORMAT = {np.float16: (11, -14, 15), np.float32: (24, -126, 127), np.float64: (53, -1022, 1023)}
inf, nan = math.inf, math.nan


def sources_of(name: str) -> list[str]:
  """The source kinds the executor passes (the mixed fma takes float32 arrays)."""
  kinds = list(signature(name).sources)
  return ["f32"] * 3 if name.startswith("v_fma_mix") else kinds


def arity(name: str) -> int:
  if name.startswith("v_cmp"): return 2
  fn = VALU[name].__wrapped__
  code = getattr(fn, "__code__", None)
  if code is None: return fn.nin  # a ufunc
  return code.co_argcount - len(fn.__defaults__ or ())


# ***** building inputs, reading results *****

def width(kind: str) -> int:
  return 1 if kind == "mask" else np.dtype(DTYPES[kind]).itemsize * 8


def array(values: list, kind: str) -> np.ndarray:
  """Python values as an array of the kind's type: ints by their two's-complement bits, floats rounded by NumPy."""
  dtype = DTYPES[kind]
  if kind == "mask": return np.array(values, bool)
  if kind[0] == "f":
    with np.errstate(over="ignore"): return np.array(values, np.float64).astype(dtype)
  bits = width(kind)
  return np.array([int(v) & ((1 << bits) - 1) for v in values], {16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]).view(dtype)


def value(bits: int, kind: str) -> int:
  """Raw bits read as the kind: signed kinds (i24 included, whose register is a full i32) two's complement."""
  w = width(kind)
  bits &= (1 << w) - 1
  return bits - (1 << w) if kind[0] == "i" and bits >> (w - 1) else bits


def fbits(x: np.ndarray) -> np.ndarray:
  return np.asarray(x).view(UNSIGNED[np.asarray(x).dtype.type])


def assert_floats(actual: np.ndarray, expected: list[float], dtype, context) -> None:
  """Same type, NaN where expected (any NaN), and otherwise the same bits (so -0 differs from +0)."""
  expected = np.array(expected, np.float64).astype(dtype)
  assert actual.dtype == dtype, context
  bad = (np.isnan(actual) != np.isnan(expected)) | (~np.isnan(expected) & (fbits(actual) != fbits(expected)))
  assert not bad.any(), [(c, a, e) for c, a, e, b in zip(context, actual, expected, bad) if b][:8]


def ordered(x: np.ndarray) -> np.ndarray:
  """Floats to integers in the same order, consecutive floats consecutive."""
  bits = fbits(x).astype(np.uint64)
  top = np.uint64(8 * x.dtype.itemsize - 1)
  magnitude = (bits & ((np.uint64(1) << top) - np.uint64(1))).astype(np.int64)
  return np.where(bits >> top != 0, -magnitude, magnitude)


def assert_within_ulp(actual: np.ndarray, expected: list[float], dtype, context, ulps: int = 1) -> None:
  expected = np.array(expected, np.float64).astype(dtype)
  assert actual.dtype == dtype
  special = np.isnan(expected) | np.isinf(expected) | (expected == 0)
  bad = np.where(special, (fbits(actual) != fbits(expected)) & ~(np.isnan(actual) & np.isnan(expected)),
                 np.abs(ordered(actual) - ordered(expected)) > ulps)
  assert not bad.any(), [(c, a, e) for c, a, e, b in zip(context, actual, expected, bad) if b][:8]


# ***** exact float references *****

def round_to(q: Fraction, dtype) -> float:
  """The rational q rounded to nearest even in dtype: denormals kept, past the largest finite value infinity; an
  inexact zero takes q's sign."""
  if q == 0: return 0.0
  precision, lowest, highest = FORMAT[dtype]
  sign, q = (-1 if q < 0 else 1), abs(q)
  e = q.numerator.bit_length() - q.denominator.bit_length()
  if Fraction(2) ** e > q: e -= 1
  ulp = Fraction(2) ** (max(e, lowest) - precision + 1)
  rounded = round(q / ulp) * ulp  # Fraction rounds half to even
  return sign * inf if rounded >= Fraction(2) ** (highest + 1) else sign * float(rounded)


def negative(x: float) -> bool:
  return math.copysign(1.0, x) < 0


def ieee(exact, special, zero_sign, dtype):
  """A float reference: special(*floats) when an operand is not finite, else the exact rational result rounded, an
  exact zero signed by zero_sign(*floats)."""
  def ref(*xs: float) -> float:
    if not all(math.isfinite(x) for x in xs): return special(*xs)
    q = exact(*map(Fraction, xs))
    return (-0.0 if zero_sign(*xs) else 0.0) if q == 0 else round_to(q, dtype)
  return ref


def f(dtype, values) -> list[float]:
  """Values as dtype holds them (as Python floats)."""
  with np.errstate(over="ignore"): return [float(x) for x in np.array(values, np.float64).astype(dtype)]


EDGES = {
  np.float16: [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, -2.5, 3.0, 0.1, 1e-7, 6e-8, -6e-8, 6.1e-5, 65504.0, -65504.0, 1000.0, inf, -inf, nan],
  np.float32: [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, -2.5, 3.0, 0.1, 1e-40, 1.4e-45, -1.4e-45, 1.17549435e-38, 3.4028235e38, -3.4028235e38,
               1e30, 16777217.0, 0.49999997, 1e-10, -1e-10, inf, -inf, nan],
  np.float64: [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, -2.5, 3.0, 0.1, 1e-310, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
               -1.7976931348623157e308, 1e300, 9007199254740993.0, 0.49999999999999994, 1e-200, -1e-200, inf, -inf, nan]}
EDGES = {dtype: f(dtype, values) for dtype, values in EDGES.items()}
NAMES = {np.float16: "f16", np.float32: "f32", np.float64: "f64"}


def run(name: str, columns: list[list]) -> np.ndarray:
  kinds = sources_of(name)
  return VALU[name](*[array(col, kind) for col, kind in zip(columns, kinds)])


def grid(values: list, n: int) -> list[list]:
  """Every n-tuple of the values, as n columns."""
  return [list(col) for col in zip(*itertools.product(values, repeat=n))]


# ***** coverage and types *****

def test_every_required_instruction_is_present():
  missing = [name for name in REQUIRED if name not in VALU]
  assert not missing, missing


def test_results_have_the_destination_type_and_no_warnings():
  rng = np.random.default_rng(0)
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    for name in VALU:
      kinds = sources_of(name)[:arity(name)]
      if name.startswith("v_div_fmas"): kinds = kinds[:3] + ["mask"]
      sources = []
      for kind in kinds:
        if kind == "mask": sources.append(rng.integers(0, 2, 40).astype(bool))
        elif kind[0] == "f": sources.append(np.array((EDGES[DTYPES[kind]] * 3)[:40], np.float64).astype(DTYPES[kind]))
        else: sources.append(array(list(rng.integers(0, 1 << 62, 40, dtype=np.int64)), kind))
      result = VALU[name](*sources)
      destination = DTYPES[signature(name).destination]
      if isinstance(result, tuple):
        result, carry = result
        assert carry.dtype == np.bool_ and carry.shape == (40,), name
      assert result.dtype == destination and result.shape == (40,), (name, result.dtype, destination)


# ***** integer instructions *****

M24 = 0xFFFFFF


def s24(x: int) -> int: return ((x & M24) ^ 0x800000) - 0x800000


def bfe_signed(x: int, offset: int, size: int) -> int:
  size = size & 31
  field = (x >> (offset & 31)) & ((1 << size) - 1)
  return 0 if size == 0 else (field ^ (1 << (size - 1))) - (1 << (size - 1))


def perm(a: int, b: int, selector: int) -> int:
  data = (a << 32) | b
  out = 0
  for i in range(4):
    sel = selector >> (8 * i) & 255
    if sel < 8: byte = data >> (8 * sel) & 255
    elif sel < 12: byte = 255 if data >> (16 * (sel - 8) + 15) & 1 else 0
    else: byte = 0 if sel == 12 else 255
    out |= byte << (8 * i)
  return out


def cls(x: int) -> int:
  text = f"{x & 0xFFFFFFFF:032b}"
  same = len(text) - len(text.lstrip(text[0]))
  return -1 if same == 32 else same


INT_REFERENCES = {
  "v_add_nc_u32": lambda a, b: a + b, "v_sub_nc_u32": lambda a, b: a - b, "v_subrev_nc_u32": lambda a, b: b - a,
  "v_add_nc_i32": lambda a, b: a + b, "v_sub_nc_i32": lambda a, b: a - b, "v_add3_u32": lambda a, b, c: a + b + c,
  "v_xad_u32": lambda a, b, c: (a ^ b) + c,
  "v_mul_lo_u32": lambda a, b: a * b, "v_mul_hi_u32": lambda a, b: a * b >> 32, "v_mul_hi_i32": lambda a, b: a * b >> 32,
  "v_mul_u32_u24": lambda a, b: (a & M24) * (b & M24), "v_mul_hi_u32_u24": lambda a, b: (a & M24) * (b & M24) >> 32,
  "v_mul_i32_i24": lambda a, b: s24(a) * s24(b), "v_mul_hi_i32_i24": lambda a, b: s24(a) * s24(b) >> 32,
  "v_mad_u32_u24": lambda a, b, c: (a & M24) * (b & M24) + c, "v_mad_i32_i24": lambda a, b, c: s24(a) * s24(b) + c,
  "v_lshl_add_u32": lambda a, b, c: (a << (b & 31)) + c, "v_add_lshl_u32": lambda a, b, c: (a + b) << (c & 31),
  "v_lshl_or_b32": lambda a, b, c: (a << (b & 31)) | c, "v_and_or_b32": lambda a, b, c: (a & b) | c,
  "v_or3_b32": lambda a, b, c: a | b | c, "v_xor3_b32": lambda a, b, c: a ^ b ^ c, "v_bfi_b32": lambda a, b, c: (a & b) | (~a & c),
  "v_alignbit_b32": lambda a, b, c: ((a << 32) | b) >> (c & 31), "v_alignbyte_b32": lambda a, b, c: ((a << 32) | b) >> (8 * (c & 3)),
  "v_bfe_u32": lambda a, b, c: (a >> (b & 31)) & ((1 << (c & 31)) - 1), "v_bfe_i32": bfe_signed,
  "v_bfm_b32": lambda a, b: ((1 << (a & 31)) - 1) << (b & 31), "v_bcnt_u32_b32": lambda a, b: bin(a).count("1") + b,
  "v_perm_b32": perm, "v_and_b32": lambda a, b: a & b, "v_or_b32": lambda a, b: a | b, "v_xor_b32": lambda a, b: a ^ b,
  "v_xnor_b32": lambda a, b: ~(a ^ b), "v_and_b16": lambda a, b: a & b, "v_or_b16": lambda a, b: a | b, "v_xor_b16": lambda a, b: a ^ b,
  "v_not_b32": lambda a: ~a, "v_not_b16": lambda a: ~a, "v_mov_b32": lambda a: a, "v_mov_b16": lambda a: a,
  "v_bfrev_b32": lambda a: int(f"{a:032b}"[::-1], 2), "v_clz_i32_u32": lambda a: 32 - a.bit_length() if a else -1,
  "v_ctz_i32_b32": lambda a: (a & -a).bit_length() - 1 if a else -1, "v_cls_i32": cls,
  "v_cndmask_b32": lambda a, b, m: b if m else a, "v_cndmask_b16": lambda a, b, m: b if m else a,
  "v_add_nc_u16": lambda a, b: a + b, "v_sub_nc_u16": lambda a, b: a - b, "v_add_nc_i16": lambda a, b: a + b,
  "v_sub_nc_i16": lambda a, b: a - b, "v_mul_lo_u16": lambda a, b: a * b, "v_mad_u16": lambda a, b, c: a * b + c,
  "v_mad_i16": lambda a, b, c: a * b + c, "v_cvt_i32_i16": lambda a: a, "v_cvt_u32_u16": lambda a: a,
  "v_add_co_u32": lambda a, b: (a + b, a + b >= 1 << 32), "v_sub_co_u32": lambda a, b: (a - b, b > a),
  "v_subrev_co_u32": lambda a, b: (b - a, a > b), "v_add_co_ci_u32": lambda a, b, c: (a + b + c, a + b + c >= 1 << 32),
  "v_sub_co_ci_u32": lambda a, b, c: (a - b - c, b + c > a), "v_subrev_co_ci_u32": lambda a, b, c: (b - a - c, a + c > b),
  "v_mad_u64_u32": lambda a, b, c: (a * b + c, a * b + c >= 1 << 64),
  "v_mad_i64_i32": lambda a, b, c: (a * b + value(c, "i64"), bool((a * b + value(c, "i64")) >> 64 & 1)),
}
for _w in (16, 32, 64):
  INT_REFERENCES[f"v_lshlrev_b{_w}"] = lambda n, x, w=_w: x << (n & (w - 1))
  INT_REFERENCES[f"v_lshrrev_b{_w}"] = lambda n, x, w=_w: x >> (n & (w - 1))
  INT_REFERENCES[f"v_ashrrev_i{_w}"] = lambda n, x, w=_w: x >> (n & (w - 1))
for _t in ("i16", "u16", "i32", "u32"):
  INT_REFERENCES |= {f"v_max_{_t}": max, f"v_min_{_t}": min, f"v_max3_{_t}": lambda a, b, c: max(a, b, c),
                     f"v_min3_{_t}": lambda a, b, c: min(a, b, c), f"v_med3_{_t}": lambda a, b, c: sorted((a, b, c))[1]}
for _t in ("i32", "u32"):
  INT_REFERENCES |= {f"v_maxmin_{_t}": lambda a, b, c: min(max(a, b), c), f"v_minmax_{_t}": lambda a, b, c: max(min(a, b), c)}
PY_COMPARE = {"f": lambda a, b: False, "lt": lambda a, b: a < b, "eq": lambda a, b: a == b, "le": lambda a, b: a <= b,
              "gt": lambda a, b: a > b, "ne": lambda a, b: a != b, "ge": lambda a, b: a >= b, "t": lambda a, b: True}
for _x, _op, _t in itertools.product(("cmp", "cmpx"), INT_CMP, ("i16", "i32", "i64", "u16", "u32", "u64")):
  INT_REFERENCES[f"v_{_x}_{_op}_{_t}"] = PY_COMPARE[_op]

BIT_EDGES = [0, 1, 2, 3, 7, 8, 12, 13, 15, 16, 17, 24, 31, 32, 33, 63, 64, 65, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x10000,
             0x7FFFFF, 0x800000, 0xFFFFFF, 0x1000000, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF, 0x12345678, 0xDEADBEEF,
             0x0C0B0A09, 0x0D0E0F08, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF, 0x123456789ABCDEF0]


def test_integer_references_cover_every_integer_instruction():
  """Every VALU instruction whose operands are all integers (or masks) has a reference above."""
  def integer(kind: str) -> bool: return kind == "mask" or kind[0] in "biu"
  names = [n for n in VALU if integer(signature(n).destination) and all(integer(k) for k in sources_of(n)[:arity(n)])]
  assert not [n for n in names if n not in INT_REFERENCES]


@pytest.mark.parametrize("name", sorted(INT_REFERENCES))
def test_integer_instruction(name):
  kinds = sources_of(name)[:arity(name)]
  domains = [[False, True] if k == "mask" else BIT_EDGES for k in kinds]
  combos = list(itertools.product(*domains))
  if len(combos) > 6000: combos = random.Random(name).sample(combos, 6000)
  columns = [list(c) for c in zip(*combos)]
  result = VALU[name](*[array(col, k) for col, k in zip(columns, kinds)])
  expected = [INT_REFERENCES[name](*(v if k == "mask" else value(v, k) for v, k in zip(combo, kinds))) for combo in combos]
  carry = None
  if isinstance(result, tuple):
    result, carry = result
    expected, carries = zip(*expected)
    assert carry.dtype == np.bool_ and list(carry) == list(carries), name
  destination = signature(name).destination
  if destination == "mask":
    assert result.dtype == np.bool_ and list(result) == list(expected)
    return
  w = width(destination)
  actual = [int(x) & ((1 << w) - 1) for x in result.astype(np.uint64 if w == 64 else np.int64)]
  want = [e & ((1 << w) - 1) for e in expected]
  bad = [(c, a, e) for c, a, e in zip(combos, actual, want) if a != e]
  assert not bad, bad[:8]


def test_carries_and_borrows():
  add = VALU["v_add_co_ci_u32"](array([0xFFFFFFFF, 0xFFFFFFFF, 0, 0x80000000], "u32"), array([0, 1, 0, 0x80000000], "u32"),
                                np.array([True, False, False, True]))
  assert list(add[0]) == [0, 0, 0, 1] and list(add[1]) == [True, True, False, True]
  sub = VALU["v_sub_co_ci_u32"](array([0, 1, 5], "u32"), array([0, 1, 4], "u32"), np.array([True, True, True]))
  assert list(sub[0]) == [0xFFFFFFFF, 0xFFFFFFFF, 0] and list(sub[1]) == [True, True, False]
  mad = VALU["v_mad_u64_u32"](array([0xFFFFFFFF] * 2, "u32"), array([0xFFFFFFFF] * 2, "u32"), array([0x1FFFFFFFF, 0x1FFFFFFFE], "u64"))
  assert [int(x) for x in mad[0]] == [0, 2**64 - 1] and list(mad[1]) == [True, False]  # (2^32-1)^2 + 2^33-1 = 2^64


# ***** float instructions *****

def fma_zero_sign(a: float, b: float, c: float) -> bool:
  return (a == 0 or b == 0) and c == 0 and (negative(a) != negative(b)) and negative(c)


def fma_reference(dtype):
  return ieee(lambda a, b, c: a * b + c, lambda a, b, c: a * b + c, fma_zero_sign, dtype)


def _max_ref(a: float, b: float, greater: bool = True) -> float:
  if math.isnan(a) or math.isnan(b): return b if math.isnan(a) else a
  key = lambda x: (x, not negative(x))  # -0 below +0
  return max(a, b, key=key) if greater else min(a, b, key=key)


def _med3_ref(a: float, b: float, c: float) -> float:
  if any(math.isnan(x) for x in (a, b, c)): return _max_ref(_max_ref(a, b, False), c, False)
  top = _max_ref(_max_ref(a, b), c)  # the reference's definition: max of the two others than the first equal to max3
  return _max_ref(b, c) if top == a else _max_ref(a, c) if top == b else _max_ref(a, b)


FLOAT_BINARY = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "subrev": lambda a, b: b - a, "mul": lambda a, b: a * b}


@pytest.mark.parametrize("op,dtype", [(op, t) for op in FLOAT_BINARY for t in (np.float16, np.float32, np.float64)
                                      if f"v_{op}_{NAMES[t]}" in VALU], ids=lambda x: NAMES.get(x, x))
def test_float_arithmetic(op, dtype):
  name = f"v_{op}_{NAMES[dtype]}"
  ref = ieee(FLOAT_BINARY[op], FLOAT_BINARY[op], {
    "add": lambda a, b: negative(a) and negative(b), "sub": lambda a, b: negative(a) and not negative(b),
    "subrev": lambda a, b: negative(b) and not negative(a), "mul": lambda a, b: negative(a) != negative(b)}[op], dtype)
  columns = grid(EDGES[dtype], 2)
  assert_floats(run(name, columns), [ref(a, b) for a, b in zip(*columns)], dtype, list(zip(*columns)))


def random_floats(dtype, n: int, seed: int) -> list[float]:
  """Random values of all magnitudes (denormal to near overflow) and signs."""
  rng = np.random.default_rng(seed)
  precision, lowest, highest = FORMAT[dtype]
  mantissa = rng.random(n) * 0.5 + 0.5
  exponents = rng.integers(lowest - precision + 2, highest + 1, n)
  return f(dtype, np.where(rng.random(n) < 0.5, -1, 1) * np.ldexp(mantissa, exponents))


def fma_cases(dtype, n: int = 1500) -> list[list[float]]:
  """Edge triples, random triples, and triples built to cancel: c close to -a*b, or a*b at a rounding tie of the format
  with c a tiny nudge (where rounding a*b+c twice goes wrong)."""
  edges = EDGES[dtype][::2]
  columns = grid(edges, 3)
  rng = np.random.default_rng(1)
  precision, lowest, highest = FORMAT[dtype]
  a, b = random_floats(dtype, n, 2), random_floats(dtype, n, 3)
  c_random = random_floats(dtype, n, 4)
  small = [x * 2.0 ** -(highest // 2) for x in random_floats(dtype, n, 5)]
  a2, b2 = f(dtype, small), f(dtype, [x * 2.0 ** (highest // 3) for x in small])
  cancel = f(dtype, [-(x * y) * (1 + float(rng.integers(-4, 5)) * 2.0 ** -precision) for x, y in zip(a2, b2)])
  # (1 + 2^-m)(1 + 2^-(p-m)) = 1 + 2^-m + 2^-(p-m) + 2^-p: half an ulp above a representable value, scaled and signed
  m, e1, e2 = rng.integers(1, precision, 200), rng.integers(-4, 5, 200), rng.integers(-4, 5, 200)
  ties_a = f(dtype, [float(sign) * (1 + 2.0 ** -int(k)) * 2.0 ** int(e) for sign, k, e in zip(rng.choice([-1, 1], 200), m, e1)])
  ties_b = f(dtype, [(1 + 2.0 ** -(precision - int(k))) * 2.0 ** int(e) for k, e in zip(m, e2)])
  below = rng.integers(precision + 2, precision + 30, 200)  # c: zero, or a nudge far below the product's last bit
  nudges = f(dtype, [0.0 if j % 4 == 0 else float(sign) * 2.0 ** int(x + y - d) for j, (sign, x, y, d) in
                     enumerate(zip(rng.choice([-1, 1], 200), e1, e2, below))])
  extra = [a + a2 + ties_a, b + b2 + ties_b, c_random + cancel + nudges]
  return [col + more for col, more in zip(columns, extra)]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64], ids=NAMES.get)
def test_fma_is_fused(dtype):
  ref = fma_reference(dtype)
  columns = fma_cases(dtype)
  expected = [ref(a, b, c) for a, b, c in zip(*columns)]
  s = NAMES[dtype]
  for name in [n for n in (f"v_fma_{s}", f"v_fmac_{s}", f"v_fmaak_{s}", f"v_div_fmas_{s}") if n in VALU]:
    extra = [np.zeros(len(columns[0]), bool)] if "div_fmas" in name else []
    result = VALU[name](*[array(col, s) for col in columns], *extra)
    assert_floats(result, expected, dtype, list(zip(*columns)))
  if f"v_fmamk_{s}" in VALU:  # v_fmamk takes K second: src0 * K + src1
    assert_floats(VALU[f"v_fmamk_{s}"](array(columns[0], s), array(columns[1], s), array(columns[2], s)), expected, dtype, [])


def test_dx9_zero_rule():
  """The legacy multiplies: a zero operand makes the product +0 even against inf or NaN."""
  columns = grid(EDGES[np.float32], 2)
  mul = ieee(lambda a, b: a * b, lambda a, b: a * b, lambda a, b: negative(a) != negative(b), np.float32)
  expected = [0.0 if a == 0 or b == 0 else mul(a, b) for a, b in zip(*columns)]
  assert_floats(run("v_mul_dx9_zero_f32", columns), expected, np.float32, list(zip(*columns)))
  three = grid(EDGES[np.float32][::2], 3)
  fma = fma_reference(np.float32)
  expected = [c if a == 0 or b == 0 else fma(a, b, c) for a, b, c in zip(*three)]
  for name in ("v_fma_dx9_zero_f32", "v_fmac_dx9_zero_f32"):
    assert_floats(run(name, three), expected, np.float32, list(zip(*three)))


def test_fma_known_double_rounding_cases():
  """a*b lands exactly half-way between two results and c, far below, decides the direction."""
  a, b, low = 1 + 2.0 ** -26, 1 + 2.0 ** -27, 1 + 2.0 ** -26 + 2.0 ** -27  # a*b = low + 2^-53, half an ulp
  got = VALU["v_fma_f64"](np.array([a, a, -a, a]), np.array([b, b, b, b]), np.array([2.0 ** -200, -(2.0 ** -200), -(2.0 ** -200), 0.0]))
  assert list(got) == [low + 2.0 ** -52, low, -(low + 2.0 ** -52), low]
  a32 = np.float32(1 + 2.0 ** -12)
  got = VALU["v_fma_f32"](np.array([a32, a32], np.float32), np.array([a32, a32], np.float32), np.array([2.0 ** -70, 0.0], np.float32))
  assert list(got.astype(np.float64)) == [1 + 2.0 ** -11 + 2.0 ** -23, 1 + 2.0 ** -11]
  # a product that overflows with an addend that brings it back: 2^1024 - max = 2^971
  assert VALU["v_fma_f64"](np.array([2.0 ** 512]), np.array([2.0 ** 512]), np.array([-1.7976931348623157e308]))[0] == 2.0 ** 971
  # an exact result in the denormals, and an inexact one rounding to the smallest denormal
  assert VALU["v_fma_f64"](np.array([2.0 ** -600]), np.array([2.0 ** -470]), np.array([0.0]))[0] == 2.0 ** -1070
  assert VALU["v_fma_f64"](np.array([1.5 * 2.0 ** -540]), np.array([2.0 ** -535]), np.array([-0.0]))[0] == 5e-324


def test_fma_mix():
  rng = np.random.default_rng(7)
  columns = [f(np.float32, list(rng.standard_normal(300) * 4.0 ** rng.integers(-8, 8, 300))) + EDGES[np.float32][:8] for _ in range(3)]
  exact32 = fma_reference(np.float32)
  mixed = [exact32(a, b, c) for a, b, c in zip(*columns)]
  assert_floats(VALU["v_fma_mix_f32"](*[array(col, "f32") for col in columns]), mixed, np.float32, [])
  halves = [round_to(Fraction(x), np.float16) if math.isfinite(x) and x != 0 else x for x in mixed]  # f32 first, then f16
  for name in ("v_fma_mixlo_f16", "v_fma_mixhi_f16"):
    assert_floats(VALU[name](*[array(col, "f32") for col in columns]), halves, np.float16, [])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64], ids=NAMES.get)
def test_min_max(dtype):
  s = NAMES[dtype]
  columns = grid(EDGES[dtype], 2)
  assert_floats(run(f"v_max_{s}", columns), [_max_ref(a, b) for a, b in zip(*columns)], dtype, list(zip(*columns)))
  assert_floats(run(f"v_min_{s}", columns), [_max_ref(a, b, False) for a, b in zip(*columns)], dtype, list(zip(*columns)))
  if dtype == np.float64: return
  three = grid(EDGES[dtype][::2], 3)
  refs = {"max3": lambda a, b, c: _max_ref(_max_ref(a, b), c), "min3": lambda a, b, c: _max_ref(_max_ref(a, b, False), c, False),
          "maxmin": lambda a, b, c: _max_ref(_max_ref(a, b), c, False), "minmax": lambda a, b, c: _max_ref(_max_ref(a, b, False), c),
          "med3": _med3_ref}
  for op, ref in refs.items():
    assert_floats(run(f"v_{op}_{s}", three), [ref(*t) for t in zip(*three)], dtype, list(zip(*three)))


def test_med3_plain_values_and_signaling_nans():
  med3 = VALU["v_med3_f32"]
  a, b, c = (np.array(v, np.float32) for v in ([1, 3, 2, -5, 7, nan], [2, 1, 3, 9, 7, 1], [3, 2, 1, 0, -1, 2]))
  assert_floats(med3(a, b, c), [2, 2, 2, 0, 7, 1], np.float32, [])
  signaling = np.array([0x7F800001, 0x7FC00002], np.uint32).view(np.float32)  # a signaling and a quiet NaN
  one = np.ones(2, np.float32)
  for name in ("v_max_f32", "v_min_f32"):
    assert list(fbits(VALU[name](signaling, one))) == [0x7FC00001, 0x3F800000]  # sNaN quieted, qNaN gives the other
    assert list(fbits(VALU[name](one, signaling))) == [0x7FC00001, 0x3F800000]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64], ids=NAMES.get)
def test_compares(dtype):
  s = NAMES[dtype]
  columns = grid(EDGES[dtype], 2)
  lg = lambda a, b: a < b or a > b
  refs = {"f": lambda a, b: False, "lt": lambda a, b: a < b, "eq": lambda a, b: a == b, "le": lambda a, b: a <= b,
          "gt": lambda a, b: a > b, "lg": lg, "ge": lambda a, b: a >= b, "o": lambda a, b: not (math.isnan(a) or math.isnan(b)),
          "u": lambda a, b: math.isnan(a) or math.isnan(b), "nge": lambda a, b: not a >= b, "nlg": lambda a, b: not lg(a, b),
          "ngt": lambda a, b: not a > b, "nle": lambda a, b: not a <= b, "neq": lambda a, b: not a == b, "nlt": lambda a, b: not a < b,
          "t": lambda a, b: True}
  for op, ref in refs.items():
    for prefix in ("v_cmp", "v_cmpx"):
      got = run(f"{prefix}_{op}_{s}", columns)
      assert got.dtype == np.bool_ and list(got) == [ref(a, b) for a, b in zip(*columns)], op


def float_class(x: np.ndarray) -> list[int]:
  """The class index of each value: 0 signaling NaN, 1 quiet NaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal,
  8 +normal, 9 +inf."""
  precision, lowest, _ = FORMAT[x.dtype.type]
  quiet = 1 << (precision - 2)
  out = []
  for v, bits in zip(x.tolist(), fbits(x)):
    if math.isnan(v): out.append(1 if int(bits) & quiet else 0)
    elif math.isinf(v): out.append(2 if v < 0 else 9)
    elif v == 0: out.append(5 if negative(v) else 6)
    elif abs(v) < 2.0 ** lowest: out.append(4 if v < 0 else 7)
    else: out.append(3 if v < 0 else 8)
  return out


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64], ids=NAMES.get)
def test_class(dtype):
  s = NAMES[dtype]
  uint = UNSIGNED[dtype]
  precision = FORMAT[dtype][0]
  signaling = np.array([(((1 << (8 * np.dtype(dtype).itemsize - precision)) - 1) << (precision - 1)) | 1], uint).view(dtype)
  x = np.concatenate([np.array(EDGES[dtype], np.float64).astype(dtype), signaling, -signaling])
  classes = float_class(x)
  assert sorted(set(classes)) == list(range(10))
  mask_kind = signature(f"v_cmp_class_{s}").sources[1]
  for bit in range(10):
    for masks in ([1 << bit], [0x3FF & ~(1 << bit)]):
      mask = array(masks * len(x), mask_kind)
      for prefix in ("v_cmp", "v_cmpx"):
        got = VALU[f"{prefix}_class_{s}"](x, mask)
        assert list(got) == [bool(masks[0] >> c & 1) for c in classes], (bit, masks)


# ***** rounding, conversions, exponents *****

def rounded(op):
  """math's rounding functions on floats, keeping infinities, NaN and the sign of a zero result (the operand's)."""
  def ref(x: float) -> float:
    if not math.isfinite(x): return x
    return float(op(x)) if op(x) != 0 else math.copysign(0.0, x)
  return ref


def fract_ref(dtype):
  below_one = 1 - 2.0 ** -FORMAT[dtype][0]
  def ref(x: float) -> float:
    if not math.isfinite(x): return nan
    return min(round_to(Fraction(x) - math.floor(x), dtype), below_one)
  return ref


def frexp_ref(x: float) -> tuple[float, int]:
  return (x, 0) if not math.isfinite(x) else math.frexp(x)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64], ids=NAMES.get)
def test_rounding_and_frexp(dtype):
  s = NAMES[dtype]
  values = EDGES[dtype] + f(dtype, [2.5, 3.5, -0.5, -1.5, 0.4, -0.4, -7.9, 1023.5, 2.0 ** (FORMAT[dtype][0] - 1) + 1])
  refs = {"floor": rounded(math.floor), "ceil": rounded(math.ceil), "trunc": rounded(math.trunc), "rndne": rounded(round),
          "fract": fract_ref(dtype), "frexp_mant": lambda x: frexp_ref(x)[0]}
  for op, ref in refs.items():
    assert_floats(run(f"v_{op}_{s}", [values]), [ref(x) for x in values], dtype, values)
  exp_name = {np.float16: "v_frexp_exp_i16_f16", np.float32: "v_frexp_exp_i32_f32", np.float64: "v_frexp_exp_i32_f64"}[dtype]
  assert list(run(exp_name, [values])) == [frexp_ref(x)[1] for x in values]
  assert run(f"v_fract_{s}", [[-(2.0 ** (FORMAT[dtype][1] - 5))]])[0] == 1 - 2.0 ** -FORMAT[dtype][0]  # never 1.0


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64], ids=NAMES.get)
def test_ldexp(dtype):
  s = NAMES[dtype]
  exponents = [0, 1, -1, 10, -10, 30, -30, 200, -200, 1100, -1100, 2000, -2100, 2**31 - 1, -(2**31)]
  columns = [[x for x in EDGES[dtype] for _ in exponents], exponents * len(EDGES[dtype])]
  if dtype == np.float16: columns[1] += [65536 + 3, -65536 - 3, 0x18000]  # only the low 16 bits count
  columns[0] += [1.0] * (len(columns[1]) - len(columns[0]))
  def ref(x: float, e: int) -> float:
    if dtype == np.float16: e = value(e, "i16")
    if not math.isfinite(x) or x == 0: return x
    return round_to(Fraction(x) * Fraction(2) ** max(-3000, min(3000, e)), dtype)
  assert_floats(run(f"v_ldexp_{s}", columns), [ref(x, e) for x, e in zip(*columns)], dtype, list(zip(*columns)))


def to_int_ref(lo: int, hi: int, round_first=math.trunc):
  return lambda x: 0 if math.isnan(x) else hi if x >= hi else lo if x <= lo else max(lo, min(hi, round_first(x)))


@pytest.mark.parametrize("name,lo,hi", [("v_cvt_i32_f32", -2**31, 2**31 - 1), ("v_cvt_u32_f32", 0, 2**32 - 1), ("v_cvt_i32_f64", -2**31, 2**31 - 1),
                                        ("v_cvt_u32_f64", 0, 2**32 - 1), ("v_cvt_u16_f16", 0, 65535), ("v_cvt_i16_f16", -32768, 32767)])
def test_float_to_int_saturates(name, lo, hi):
  dtype = DTYPES[signature(name).sources[0]]
  values = EDGES[dtype] + f(dtype, [-0.9, 0.9, -1.5, 2.0**31, -2.0**31, 2.0**31 - 128, 4294967295.0, 4294967296.0, -2.0**31 - 1e5,
                                    32767.9, -32768.5, 65535.0, 60000.0])
  got = run(name, [values])
  assert list(got.astype(np.int64)) == [to_int_ref(lo, hi)(x) for x in values]
  if name == "v_cvt_i32_f32":
    floor = run("v_cvt_floor_i32_f32", [values]); nearest = run("v_cvt_nearest_i32_f32", [values])
    assert list(floor) == [to_int_ref(lo, hi, math.floor)(x) for x in values]
    assert list(nearest) == [to_int_ref(lo, hi, lambda v: math.floor(np.float32(v) + np.float32(0.5)))(x) for x in values]


@pytest.mark.parametrize("name,source", [("v_cvt_f32_i32", "i32"), ("v_cvt_f32_u32", "u32"), ("v_cvt_f64_i32", "i32"), ("v_cvt_f64_u32", "u32"),
                                         ("v_cvt_f16_i16", "i16"), ("v_cvt_f16_u16", "u16")])
def test_int_to_float(name, source):
  dtype = DTYPES[signature(name).destination]
  bits = BIT_EDGES + [16777217, 0xFFFFFF7F, 0xFFFFFF80, 0x7FFFFFC0, 65519, 65520, 2049, 0xFFFFF7FF]
  values = [value(b, source) for b in bits]
  assert_floats(run(name, [values]), [round_to(Fraction(v), dtype) for v in values], dtype, values)


@pytest.mark.parametrize("name", ["v_cvt_f16_f32", "v_cvt_f32_f16", "v_cvt_f32_f64", "v_cvt_f64_f32"])
def test_float_to_float(name):
  destination, source = DTYPES[signature(name).destination], DTYPES[signature(name).sources[0]]
  values = EDGES[source] + random_floats(source, 300, 11) + f(source, [65520.0, 65519.99, 2.0 ** -25, 2.0 ** -25 * 1.0001, 3.4028235677973366e38])
  ref = lambda x: x if not math.isfinite(x) else (math.copysign(0.0, x) if x == 0 else round_to(Fraction(x), destination))
  assert_floats(run(name, [values]), [ref(x) for x in values], destination, values)


def test_unsigned_bytes_to_float():
  values = [0, 0xFF, 0x12345678, 0xFFFFFFFF, 0x80FF7F01]
  for n in range(4):
    assert list(run(f"v_cvt_f32_ubyte{n}", [values])) == [float(v >> (8 * n) & 255) for v in values]


# ***** reciprocal, square root, transcendental *****

def isqrt_fraction(q: Fraction, bits: int = 1300) -> Fraction:
  """sqrt(q) truncated to 2^-bits (never a rounding tie: the root of a non-square is irrational)."""
  return Fraction(math.isqrt(q.numerator * (1 << (2 * bits)) // q.denominator), 1 << bits)


def rcp_ref(dtype):
  def ref(x: float) -> float:
    if math.isnan(x): return nan
    if x == 0: return math.copysign(inf, x)
    if math.isinf(x): return math.copysign(0.0, x)
    return round_to(1 / Fraction(x), dtype)
  return ref


def sqrt_ref(dtype, reciprocal: bool):
  def ref(x: float) -> float:
    if math.isnan(x) or x < 0: return nan
    if x == 0: return math.copysign(inf, x) if reciprocal else x
    if math.isinf(x): return 0.0 if reciprocal else inf
    root = isqrt_fraction(Fraction(x))
    return round_to(1 / root if reciprocal else root, dtype)
  return ref


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64], ids=NAMES.get)
def test_reciprocal_and_roots(dtype):
  s = NAMES[dtype]
  values = EDGES[dtype] + random_floats(dtype, 400, 21) + f(dtype, [4.0, 2.0, 0.25, 1e-38, 9.0])
  assert_floats(run(f"v_rcp_{s}", [values]), [rcp_ref(dtype)(x) for x in values], dtype, values)
  if dtype == np.float32: assert_floats(run("v_rcp_iflag_f32", [values]), [rcp_ref(dtype)(x) for x in values], dtype, values)
  assert_floats(run(f"v_sqrt_{s}", [values]), [sqrt_ref(dtype, False)(x) for x in values], dtype, values)
  if f"v_rsq_{s}" in VALU: assert_within_ulp(run(f"v_rsq_{s}", [values]), [sqrt_ref(dtype, True)(x) for x in values], dtype, values)


@pytest.mark.parametrize("dtype", [np.float16, np.float32], ids=NAMES.get)
def test_exp_log(dtype):
  s = NAMES[dtype]
  values = EDGES[dtype] + f(dtype, [-126.0, -149.0, -150.0, 127.5, 128.0, 10.3, -24.0, 15.9, 16.0, 2.0 ** 0.5])
  def exp2(x: float) -> float:
    if math.isnan(x): return nan
    return 0.0 if x < -200 else inf if x > 200 else round_to(Fraction(2.0 ** x), dtype)
  def log2(x: float) -> float:
    if math.isnan(x) or x < 0: return nan
    return -inf if x == 0 else inf if math.isinf(x) else round_to(Fraction(math.log2(x)), dtype)
  assert_within_ulp(run(f"v_exp_{s}", [values]), [exp2(x) for x in values], dtype, values)
  assert_within_ulp(run(f"v_log_{s}", [values]), [log2(x) for x in values], dtype, values)


def test_sin_cos_take_turns():
  x = np.array([0.0, 0.25, 0.5, -0.125, 1.75, 100.1, 1e-3, -3.3], np.float32)
  for name, fn in (("v_sin_f32", math.sin), ("v_cos_f32", math.cos)):
    got = VALU[name](x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, [fn(2 * math.pi * float(v)) for v in x], atol=2e-7)
  assert np.isnan(VALU["v_sin_f32"](np.array([inf, nan], np.float32))).all()


# ***** division steps *****

def divide_f32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
  """LLVM's f32 division for gfx11: scale, reciprocal, Newton-Raphson with fma, div_fmas, div_fixup."""
  v = VALU
  den, _ = v["v_div_scale_f32"](b, b, a)
  num, vcc = v["v_div_scale_f32"](a, b, a)
  r = v["v_rcp_f32"](den)
  e = v["v_fma_f32"](-den, r, np.ones_like(r))
  r = v["v_fma_f32"](e, r, r)
  q = v["v_mul_f32"](num, r)
  rem = v["v_fma_f32"](-den, q, num)
  q = v["v_fma_f32"](rem, r, q)
  rem = v["v_fma_f32"](-den, q, num)
  return v["v_div_fixup_f32"](v["v_div_fmas_f32"](rem, r, q, vcc), b, a)


def divide_f64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
  """LLVM's f64 division for gfx11."""
  v = VALU
  den, _ = v["v_div_scale_f64"](b, b, a)
  num, vcc = v["v_div_scale_f64"](a, b, a)
  r = v["v_rcp_f64"](den)
  one = np.ones_like(r)
  r = v["v_fma_f64"](r, v["v_fma_f64"](-den, r, one), r)
  r = v["v_fma_f64"](r, v["v_fma_f64"](-den, r, one), r)
  q = v["v_mul_f64"](num, r)
  rem = v["v_fma_f64"](-den, q, num)
  return v["v_div_fixup_f64"](v["v_div_fmas_f64"](rem, r, q, vcc), b, a)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=NAMES.get)
def test_division_sequence_is_correctly_rounded(dtype):
  """The scale / fmas / fixup steps together divide exactly as IEEE division does, across the whole exponent range:
  quotients that overflow, underflow into denormals, denominators that are denormal or near the largest value."""
  edges = EDGES[dtype]
  a = edges * len(edges) + random_floats(dtype, 3000, 31)
  b = [y for y in edges for _ in edges] + random_floats(dtype, 3000, 32)
  x, y = np.array(a, np.float64).astype(dtype), np.array(b, np.float64).astype(dtype)
  with np.errstate(all="ignore"): want = x / y
  got = (divide_f32 if dtype == np.float32 else divide_f64)(x, y)
  bad = (np.isnan(got) != np.isnan(want)) | (~np.isnan(want) & (fbits(got) != fbits(want)))
  assert not bad.any(), [(p, q, g, w) for p, q, g, w in zip(x[bad], y[bad], got[bad], want[bad])][:8]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=NAMES.get)
def test_div_fixup_special_cases(dtype):
  s = NAMES[dtype]
  negative_nan = {np.float32: 0xFFC00000, np.float64: 0xFFF8000000000000}[dtype]
  cases = [  # (quotient, denominator, numerator, expected or 'nan-bits')
    (5.0, 0.0, 0.0, "nan"), (5.0, inf, -inf, "nan"), (5.0, 0.0, -3.0, -inf), (5.0, -0.0, -3.0, inf), (5.0, 2.0, inf, inf),
    (5.0, -inf, 3.0, -0.0), (5.0, 2.0, 0.0, 0.0), (5.0, -2.0, 0.0, -0.0), (-0.75, 4.0, 3.0, 0.75), (0.75, -4.0, 3.0, -0.75),
    (5.0, 2.0, nan, nan), (5.0, nan, 2.0, nan), (inf, 2.0 ** -100, -2.0 ** 100, -inf)]
  q, d, n, expected = zip(*cases)
  got = VALU[f"v_div_fixup_{s}"](*[np.array(c, dtype) for c in (q, d, n)])
  for g, e, case in zip(got, expected, cases):
    if e == "nan": assert int(fbits(np.array([g]))[0]) == negative_nan, case
    elif math.isnan(e): assert np.isnan(g), case
    else: assert fbits(np.array([g]))[0] == fbits(np.array([e], dtype))[0], case
  tiny = {np.float32: (2.0 ** -100, 2.0 ** 60), np.float64: (2.0 ** -900, 2.0 ** 300)}[dtype]  # |n/d| below half the least denormal
  assert fbits(VALU[f"v_div_fixup_{s}"](np.array([1.0], dtype), np.array([-tiny[1]], dtype), np.array([tiny[0]], dtype)))[0] == \
    fbits(np.array([-0.0], dtype))[0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=NAMES.get)
def test_div_scale_rules(dtype):
  s = NAMES[dtype]
  step, big = (64, 100) if dtype == np.float32 else (128, 800)
  scale = VALU[f"v_div_scale_{s}"]
  def run_scale(s0, s1, s2):
    value, vcc = scale(*[np.array([x], dtype) for x in (s0, s1, s2)])
    return float(value[0]), bool(vcc[0])
  assert run_scale(3.0, 3.0, 7.0) == (3.0, False) and run_scale(7.0, 3.0, 7.0) == (7.0, False)  # nothing to scale
  zero = scale(*[np.array([x], dtype) for x in (1.0, 0.0, 1.0)])[0]
  assert int(fbits(zero)[0]) == {np.float32: 0xFFC00000, np.float64: 0xFFF8000000000000}[dtype] and np.isnan(zero[0])
  huge, small = 2.0 ** big, 2.0 ** -big
  assert run_scale(small, small, huge) == (small * 2.0 ** step, True)  # quotient near overflow: the denominator scales up
  assert run_scale(huge, small, huge) == (huge, True)
  assert run_scale(small, huge, small) == (small * 2.0 ** step, True)  # quotient near underflow: the numerator scales up
  assert run_scale(huge, huge, small) == (huge, True)
  denormal, modest, large = float(np.finfo(dtype).smallest_subnormal) * 3, 2.0 ** -(big // 2 + 10), 2.0 ** (big // 2 - 10)
  assert run_scale(denormal, denormal, modest) == (denormal * 2.0 ** step, False)  # a denormal denominator: both scale up
  assert run_scale(modest, denormal, modest) == (modest * 2.0 ** step, False)
  top = float(np.finfo(dtype).max) / 2
  assert run_scale(top, top, large) == (top * 2.0 ** -step, False)  # a denominator near the largest value: both scale down
  assert run_scale(large, top, large) == (large * 2.0 ** -step, False)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=NAMES.get)
def test_div_fmas_post_scale(dtype):
  s = NAMES[dtype]
  step = 64 if dtype == np.float32 else 128
  # with VCC set the fma is scaled up by 2^step where src2 (the quotient estimate) is >= 2, else down; one rounding, so a
  # result in the denormals is not rounded twice
  x = 1 + 2.0 ** -(FORMAT[dtype][0] // 2 + 1)
  lowest = FORMAT[dtype][1]
  cases = [(0.5, 0.5, 4.0, True), (0.5, 0.5, 0.25, True), (0.5, 0.5, 4.0, False), (0.5, 0.5, 1.9, True), (0.5, 0.5, 2.0, True),
           (x, x, 0.0, True), (x * 2.0 ** (lowest + step // 2), x * 2.0 ** (-step // 2), 0.0, True), (-3.0, 0.5, 1.0, True)]
  a, b, c, vcc = (np.array(col, dtype) for col in zip(*cases))
  got = VALU[f"v_div_fmas_{s}"](a, b, c, vcc.astype(bool))
  def ref(a: float, b: float, c: float, v: bool) -> float:
    scale = 0 if not v else step if abs(c) >= 2 else -step
    return round_to((Fraction(a) * Fraction(b) + Fraction(c)) * Fraction(2) ** scale, dtype)
  assert_floats(got, [ref(*map(float, t[:3]), bool(t[3])) for t in zip(a, b, c, vcc)], dtype, cases)


# ***** trig_preop *****

def two_over_pi_reference(bits: int) -> int:
  """floor(2/pi * 2^bits), pi from Gauss's formula pi/4 = 12 atan(1/18) + 8 atan(1/57) - 5 atan(1/239)."""
  precision = bits + 100
  def atan_inv(n: int) -> int:
    total, power, k = 0, (1 << precision) // n, 0
    while power:
      total += (-1) ** k * (power // (2 * k + 1))
      power //= n * n
      k += 1
    return total
  pi = 4 * (12 * atan_inv(18) + 8 * atan_inv(57) - 5 * atan_inv(239))
  return (2 << (precision + bits)) // pi


def test_trig_preop():
  table = two_over_pi_reference(1201)
  xs = [1.0, 3.0, -2.0 ** 60, 2.0 ** 54, 2.0 ** 60, 2.0 ** 500, 2.0 ** 945, 2.0 ** 1000, 1.7976931348623157e308, 1e-300, 0.0]
  cases = [(x, sel) for x in xs for sel in (0, 1, 2, 5, 20, 31, 32 + 1)]
  x, sel = zip(*cases)
  got = VALU["v_trig_preop_f64"](np.array(x), array(list(sel), "u32"))
  def ref(v: float, select: int) -> float:
    exponent = int(np.array([v]).view(np.uint64)[0] >> 52 & 0x7FF)
    shift = (select & 31) * 53 + max(exponent - 1077, 0)
    segment = ((table << (53 + shift)) >> 1201) & ((1 << 53) - 1)
    scale = -53 - shift + (128 if exponent >= 1968 else 0)
    exact = Fraction(segment) * Fraction(2) ** scale
    return float(exact) if exact == 0 or exact >= Fraction(2) ** -1022 else float(math.floor(exact * 2 ** 1074)) * 5e-324  # toward zero
  assert_floats(got, [ref(v, n) for v, n in cases], np.float64, cases)
  first = VALU["v_trig_preop_f64"](np.array([1.0, 1.0, 1.0]), array([0, 1, 2], "u32"))
  assert abs(Fraction(float(first[0])) + Fraction(float(first[1])) + Fraction(float(first[2])) - Fraction(table, 1 << 1201)) < Fraction(1, 1 << 159)
