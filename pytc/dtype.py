"""Element types: tinygrad's names, with their MLIR and NumPy spellings."""
from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, repr=False, eq=False)
class DType:
  name: str
  itemsize: int
  mlir: str        # the builtin MLIR element type
  numpy: str       # the NumPy dtype holding the bytes (bfloat16 travels as uint16)
  priority: int    # promotion order: bool < ints < floats

  def __repr__(self) -> str: return f"dtypes.{self.name}"
  def __eq__(self, other: object) -> bool:  # hot (every op compares dtypes): the types are made once, so mostly identical
    return self is other or (isinstance(other, DType) and (self.name, self.itemsize, self.mlir) == (other.name, other.itemsize, other.mlir))
  def __hash__(self) -> int: return hash(self.name)
  @property
  def is_fp8(self) -> bool: return self.name in FP8_NAMES
  @property
  def is_float(self) -> bool: return self.name in FLOAT_NAMES
  @property
  def is_unsigned(self) -> bool: return self.name in UNSIGNED_NAMES
  @property
  def is_int(self) -> bool: return self.name in INT_NAMES
  @property
  def is_bool(self) -> bool: return self.mlir == "i1"
  @property
  def bitsize(self) -> int: return 8 * self.itemsize
  @property
  def fmt(self) -> str | None:
    """The `struct` format character of one element; None for types that only exist as stored bits (bfloat16, fp8)."""
    return STRUCT_FORMATS.get(self.name)
  @property
  def min(self) -> bool | int | float:
    """The smallest value (-inf for floats): the identity of a max reduction."""
    if self.is_bool or self.is_float: return False if self.is_bool else float("-inf")
    return 0 if self.is_unsigned else -2 ** (8 * self.itemsize - 1)
  @property
  def max(self) -> bool | int | float:
    """The largest value (inf for floats): the identity of a min reduction."""
    if self.is_bool or self.is_float: return True if self.is_bool else float("inf")
    return 2 ** (8 * self.itemsize) - 1 + self.min


@dataclass(frozen=True, repr=False, eq=False)
class WeakDType(DType):
  """The type of a tensor made from a Python scalar without a dtype (tinygrad's weakint and weakfloat): stored and computed
  as `strong`, the default int or float when it was made (it is that type in every field, and equal to it), but where it
  meets a tensor of another type it takes that type when the kind allows (see least_upper_dtype): `Tensor(2) * half` is half."""
  strong: DType | None = None

  def __repr__(self) -> str: return "dtypes.weakfloat" if self.is_float else "dtypes.weakint"


@functools.cache
def weak_of(dtype: DType) -> WeakDType:
  """The weak type stored as `dtype` (an int or float type)."""
  if isinstance(dtype, WeakDType): return dtype
  if dtype.is_bool: raise TypeError("bool has no weak type")
  return WeakDType(dtype.name, dtype.itemsize, dtype.mlir, dtype.numpy, dtype.priority, dtype)


def is_weak(dtype: DType) -> bool: return type(dtype) is WeakDType


def strong_dtype(dtype: DType) -> DType:
  """The type a weak type is stored as; any other type itself."""
  return dtype.strong if type(dtype) is WeakDType else dtype


Scalar = int | float | bool  # a Python value that tensor ops take as a constant


def weak_scalar_dtype(value: object) -> DType:
  """The type a Python scalar takes in an op with a tensor: bool, or the weak default int or float."""
  return dtype if (dtype := dtypes.of_scalar(value)).is_bool else weak_of(dtype)


FP8_NAMES = frozenset({"fp8e4m3", "fp8e5m2", "fp8e4m3fnuz", "fp8e5m2fnuz"})
FLOAT_NAMES = FP8_NAMES | {"float16", "bfloat16", "float32", "float64"}
UNSIGNED_NAMES = frozenset({"uint8", "uint16", "uint32", "uint64"})
INT_NAMES = UNSIGNED_NAMES | {"int8", "int16", "int32", "int64"}
STRUCT_FORMATS = {"bool": "?", "int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i", "uint32": "I", "int64": "q",
                  "uint64": "Q", "float16": "e", "float32": "f", "float64": "d"}


class _WeakTypes(type):
  """`dtypes.weakint` and `dtypes.weakfloat` follow `default_int` and `default_float`."""
  @property
  def weakint(cls) -> WeakDType: return weak_of(cls.default_int)
  @property
  def weakfloat(cls) -> WeakDType: return weak_of(cls.default_float)
  @property
  def weaks(cls) -> tuple[WeakDType, WeakDType]: return (cls.weakint, cls.weakfloat)


class dtypes(metaclass=_WeakTypes):
  """The element types by name, their groups (floats, ints, uints, sints, fp8s, all) and questions about them. The fp8 types
  are storage types: their buffers hold the 8-bit patterns, and they cast to and from the other types."""
  @staticmethod
  def is_float(x: DType) -> bool: return x.is_float
  @staticmethod
  def is_int(x: DType) -> bool: return x.is_int
  @staticmethod
  def is_unsigned(x: DType) -> bool: return x.is_unsigned
  @staticmethod
  def is_bool(x: DType) -> bool: return x.is_bool
  @staticmethod
  def finfo(x: DType) -> tuple[int, int]:
    """(exponent bits, mantissa bits) of a float type."""
    if not x.is_float: raise ValueError(f"finfo needs a float dtype, got {x}")
    return FLOAT_LAYOUTS[x.name][:2]
  @staticmethod
  def unsigned_of(itemsize: int) -> DType:
    """The unsigned integer type of `itemsize` bytes."""
    return next(t for t in dtypes.uints if t.itemsize == itemsize)
  @staticmethod
  def from_py(x: object) -> DType:
    """The dtype a Python value (or nested list of them) makes: bool, default_int or default_float."""
    if isinstance(x, list | tuple): return max((dtypes.from_py(v) for v in x), key=lambda t: t.priority, default=dtypes.default_float)
    return dtypes.of_scalar(x)
  @staticmethod
  def from_numpy(dtype: np.dtype) -> DType:
    dtype = np.dtype(dtype)
    if (found := NUMPY_DTYPES.get(dtype) or NUMPY_DTYPES.get(dtype.name)) is not None: return found  # by name: any byte order
    raise TypeError(f"NumPy dtype {dtype} has no pytc dtype")
  @staticmethod
  def of_scalar(value: object) -> DType:
    if isinstance(value, bool | np.bool_): return dtypes.bool
    if isinstance(value, int | np.integer): return dtypes.default_int
    if isinstance(value, float | np.floating): return dtypes.default_float
    raise TypeError(f"cannot make a tensor element from {type(value).__name__} {value!r}")

  bool = DType("bool", 1, "i1", "bool", 0)
  int8 = DType("int8", 1, "i8", "int8", 1)
  uint8 = DType("uint8", 1, "ui8", "uint8", 2)
  int16 = DType("int16", 2, "i16", "int16", 3)
  uint16 = DType("uint16", 2, "ui16", "uint16", 4)
  int32 = DType("int32", 4, "i32", "int32", 5)
  uint32 = DType("uint32", 4, "ui32", "uint32", 6)
  int64 = DType("int64", 8, "i64", "int64", 7)
  uint64 = DType("uint64", 8, "ui64", "uint64", 8)
  fp8e4m3 = DType("fp8e4m3", 1, "ui8", "uint8", 9)
  fp8e5m2 = DType("fp8e5m2", 1, "ui8", "uint8", 10)
  fp8e4m3fnuz = DType("fp8e4m3fnuz", 1, "ui8", "uint8", 9)
  fp8e5m2fnuz = DType("fp8e5m2fnuz", 1, "ui8", "uint8", 10)
  float16 = DType("float16", 2, "f16", "float16", 11)
  bfloat16 = DType("bfloat16", 2, "bf16", "uint16", 12)
  float32 = DType("float32", 4, "f32", "float32", 13)
  float64 = DType("float64", 8, "f64", "float64", 14)
  half, float, double = float16, float32, float64
  uchar, ushort, uint, ulong = uint8, uint16, uint32, uint64
  char, short, int, long = int8, int16, int32, int64
  default_float, default_int = float32, int32

  fp8_ocp, fp8_fnuz = (fp8e4m3, fp8e5m2), (fp8e4m3fnuz, fp8e5m2fnuz)
  fp8s = fp8_ocp + fp8_fnuz
  floats = fp8s + (float16, bfloat16, float32, float64)
  uints, sints = (uint8, uint16, uint32, uint64), (int8, int16, int32, int64)
  ints = uints + sints
  int8s, int16s, int32s, int64s = (uint8, int8), (uint16, int16), (uint32, int32), (uint64, int64)
  all = floats + ints + (bool,)


# (exponent bits, mantissa bits, exponent bias) of each float type
FLOAT_LAYOUTS: dict[str, tuple[int, int, int]] = {
  "fp8e4m3": (4, 3, 7), "fp8e5m2": (5, 2, 15), "fp8e4m3fnuz": (4, 3, 8), "fp8e5m2fnuz": (5, 2, 16),
  "float16": (5, 10, 15), "bfloat16": (8, 7, 127), "float32": (8, 23, 127), "float64": (11, 52, 1023)}

# The dtype holding each NumPy dtype's elements as they are (not bfloat16 or fp8, which NumPy stores as unsigned ints)
NUMPY_DTYPES: dict[np.dtype | str, DType] = {key: dt for dt in dtypes.all if dt.fmt is not None for key in (np.dtype(dt.numpy), dt.numpy)}

# Every dtype by each name it has on `dtypes` (aliases included): what `to_dtype` and dtype strings accept.
DTYPES_DICT: dict[str, DType] = {k: v for k, v in vars(dtypes).items() if isinstance(v, DType) and not k.startswith("default")}


# Which types each type promotes to directly, as tinygrad's lattice: a mixed operation computes in the
# least type both reach (int8 + uint8 -> int16, uint32 + int32 -> int64, int64 + uint64 -> float16).
PROMOTES_TO: dict[DType, tuple[DType, ...]] = {
  dtypes.bool: (dtypes.int8, dtypes.uint8), dtypes.int8: (dtypes.int16,), dtypes.int16: (dtypes.int32,), dtypes.int32: (dtypes.int64,),
  dtypes.int64: (dtypes.float16, dtypes.bfloat16), dtypes.uint8: (dtypes.int16, dtypes.uint16), dtypes.uint16: (dtypes.int32, dtypes.uint32),
  dtypes.uint32: (dtypes.int64, dtypes.uint64), dtypes.uint64: (dtypes.float16, dtypes.bfloat16), dtypes.float16: (dtypes.float32,),
  dtypes.bfloat16: (dtypes.float32,), dtypes.float32: (dtypes.float64,), dtypes.float64: (),
  **{fp8: (dtypes.float16, dtypes.bfloat16) for fp8 in dtypes.fp8s}}


def _reachable(dtype: DType) -> set[DType]:
  found, stack = {dtype}, [dtype]
  while stack:
    for up in PROMOTES_TO[stack.pop()]:
      if up not in found: found.add(up); stack.append(up)
  return found


def least_upper_dtype(*types: DType) -> DType:
  """The type an op over `types` computes in: the least one every type reaches in the lattice. Weak types yield: among
  strong types the lattice decides, and a weak type changes the result only when its kind (int above bool, float above
  int) is higher, to the least type reaching both (int32 with a weak float: default_float; bool with a weak int:
  default_int); weak types alone give the weak float when there is one, else the weak int."""
  return _least_upper(tuple((is_weak(t), t) for t in types))  # keyed by weakness: a weak type is equal to its strong one


@functools.cache
def _least_upper(keyed: tuple[tuple[bool, DType], ...]) -> DType:
  weak, strong = [t for w, t in keyed if w], [t for w, t in keyed if not w]
  if not weak: return min(set.intersection(*(_reachable(t) for t in strong)), key=lambda t: t.priority)
  widest = next((t for t in weak if t.is_float), weak[0])
  if not strong: return widest
  upper = least_upper_dtype(*strong)
  return upper if _kind(upper) >= _kind(widest) else least_upper_dtype(upper, widest.strong)


def _kind(dtype: DType) -> int: return 2 if dtype.is_float else 1 if dtype.is_int else 0


class NotADType(TypeError, AttributeError):
  """Something given as a dtype that is none: a TypeError, and the AttributeError tinygrad raises for it."""


def to_dtype(dtype: DType | str) -> DType:
  """A dtype, or one named as on `dtypes` ("float32", "half"); an unknown name raises AttributeError."""
  if isinstance(dtype, DType): return dtype
  if not isinstance(dtype, str): raise NotADType(f"expected a dtype (dtypes.float32, 'float32', ...), got {dtype!r}")
  if (found := DTYPES_DICT.get(dtype.lower())) is None: raise AttributeError(f"dtypes has no dtype named {dtype!r}")
  return found


def sum_dtype(dtype: DType) -> DType:
  """The dtype a sum accumulates in: bool and ints at least 32 bits (unsigned stay unsigned), floats at least float32."""
  return least_upper_dtype(dtype, dtypes.uint32 if dtype.is_unsigned else dtypes.float32 if dtype.is_float else dtypes.int32)


def to_numpy(data: bytes | memoryview, dtype: DType, shape: tuple[int, ...]) -> np.ndarray:
  array = np.frombuffer(data, dtype=dtype.numpy).reshape(shape)
  if dtype == dtypes.bfloat16: return (array.astype(np.uint32) << 16).view(np.float32)
  return array.copy()


def from_numpy(array: np.ndarray, dtype: DType) -> np.ndarray:
  """`array` as the bytes a buffer of `dtype` holds (bfloat16 rounded to nearest even; a NaN stays a quiet NaN of its sign)."""
  if dtype == dtypes.bfloat16:
    values = np.asarray(array)
    with np.errstate(over="ignore", invalid="ignore"):
      floats = np.ascontiguousarray(values, dtype=np.float32)
      bits = floats.view(np.uint32).astype(np.uint64)  # wide enough that rounding the largest NaN payloads cannot wrap
      if values.dtype != np.float32:  # to f32 rounding to odd, so that rounding that to bf16 is exact (no double rounding)
        exact, back = values.astype(np.float64), floats.astype(np.float64)
        bits = (bits - (np.abs(back) > np.abs(exact))) | (back != exact) & ~np.isnan(exact)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return np.where(np.isnan(floats), (bits >> 16) | 0x40, rounded).astype(np.uint16)
  return np.ascontiguousarray(array, dtype=dtype.numpy)


def wrapped(value: int, dtype: DType) -> int:
  """An int brought into an integer dtype's range modulo 2^bits (two's complement), as a C cast from a wider int does."""
  value = int(value) & ((1 << dtype.bitsize) - 1)
  return value - (1 << dtype.bitsize) if not dtype.is_unsigned and value >> (dtype.bitsize - 1) else value


# the largest finite pattern of each fp8 type (the one below e4m3's NaN, e5m2's infinity)
LARGEST_NORMAL = {"fp8e4m3": 0x7E, "fp8e5m2": 0x7B, "fp8e4m3fnuz": 0x7F, "fp8e5m2fnuz": 0x7F}


def float_to_fp8(x: float, dtype: DType) -> int:
  """The pattern of the fp8 `dtype` nearest to `x` (ties to even), finite values past the largest normal saturating to it.
  NaN, and an infinity in the types without one, is the type's NaN; the fnuz types have no negative zero."""
  if not dtype.is_fp8: raise TypeError(f"float_to_fp8 needs an fp8 dtype, got {dtype}")
  exponent_bits, mantissa_bits, bias = FLOAT_LAYOUTS[dtype.name]
  fnuz, sign = dtype in dtypes.fp8_fnuz, 0x80 if math.copysign(1.0, x) < 0 else 0
  if math.isnan(x) or (math.isinf(x) and dtype is not dtypes.fp8e5m2): return 0x80 if fnuz else 0x7F | sign
  if math.isinf(x): return 0x7C | sign
  magnitude = abs(x)
  if magnitude < 2.0 ** (1 - bias): pattern = round(magnitude * 2.0 ** (bias - 1 + mantissa_bits))  # subnormal steps; exact scaling
  else:
    exponent = min(math.frexp(magnitude)[1] - 1, (1 << exponent_bits) + 1 - bias)  # past the top, the pattern saturates anyway
    mantissa = round(magnitude * 2.0 ** (mantissa_bits - exponent)) - (1 << mantissa_bits)  # a carry reaches the exponent field
    pattern = ((exponent + bias) << mantissa_bits) + mantissa
  pattern = min(pattern, LARGEST_NORMAL[dtype.name])
  return pattern | sign if pattern or not fnuz else 0


def fp8_to_float(pattern: int, dtype: DType) -> float:
  """The value of the fp8 `dtype`'s bit pattern (an int 0..255)."""
  if not dtype.is_fp8: raise TypeError(f"fp8_to_float needs an fp8 dtype, got {dtype}")
  exponent_bits, mantissa_bits, bias = FLOAT_LAYOUTS[dtype.name]
  pattern = int(pattern) & 0xFF
  sign, exponent, mantissa = -1.0 if pattern & 0x80 else 1.0, (pattern & 0x7F) >> mantissa_bits, pattern & ((1 << mantissa_bits) - 1)
  if dtype in dtypes.fp8_fnuz and pattern == 0x80: return math.nan
  if dtype is dtypes.fp8e4m3 and pattern & 0x7F == 0x7F: return math.nan
  if dtype is dtypes.fp8e5m2 and exponent == (1 << exponent_bits) - 1: return math.nan if mantissa else sign * math.inf
  if exponent == 0: return sign * mantissa * 2.0 ** (1 - bias - mantissa_bits)
  return sign * (1 + mantissa * 2.0 ** -mantissa_bits) * 2.0 ** (exponent - bias)


def _rounded_float(x: float, dtype: DType) -> float:
  """`x` rounded to float16, bfloat16 or float32 (overflowing to infinity), as a Python float."""
  with np.errstate(over="ignore"):
    return float(to_numpy(from_numpy(np.array([x], np.float64), dtype).tobytes(), dtype, (1,))[0])


# `truncate[dtype](x)`: the Python value `x` as `dtype` holds it (ints wrap, floats round)
truncate: dict[DType, Callable] = {
  dtypes.bool: bool, dtypes.float64: float,
  **{t: functools.partial(_rounded_float, dtype=t) for t in (dtypes.float16, dtypes.bfloat16, dtypes.float32)},
  **{t: (lambda x, t=t: fp8_to_float(float_to_fp8(x, t), t)) for t in dtypes.fp8s},
  **{t: functools.partial(wrapped, dtype=t) for t in dtypes.ints}}
