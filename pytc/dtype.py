"""Element types: tinygrad's names, with their MLIR and NumPy spellings."""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, repr=False)
class DType:
  name: str
  itemsize: int
  mlir: str        # the builtin MLIR element type
  numpy: str       # the NumPy dtype holding the bytes (bfloat16 travels as uint16)
  priority: int    # promotion order: bool < ints < floats

  def __repr__(self) -> str: return f"dtypes.{self.name}"
  @property
  def is_float(self) -> bool: return self.mlir[0] in "fb"
  @property
  def is_unsigned(self) -> bool: return self.mlir.startswith("ui")
  @property
  def is_bool(self) -> bool: return self.mlir == "i1"


class dtypes:
  bool = DType("bool", 1, "i1", "bool", 0)
  int8 = DType("int8", 1, "i8", "int8", 1)
  uint8 = DType("uint8", 1, "ui8", "uint8", 2)
  int16 = DType("int16", 2, "i16", "int16", 3)
  uint16 = DType("uint16", 2, "ui16", "uint16", 4)
  int32 = DType("int32", 4, "i32", "int32", 5)
  uint32 = DType("uint32", 4, "ui32", "uint32", 6)
  int64 = DType("int64", 8, "i64", "int64", 7)
  uint64 = DType("uint64", 8, "ui64", "uint64", 8)
  float16 = DType("float16", 2, "f16", "float16", 9)
  bfloat16 = DType("bfloat16", 2, "bf16", "uint16", 10)
  float32 = DType("float32", 4, "f32", "float32", 11)
  float64 = DType("float64", 8, "f64", "float64", 12)
  half, float, double, int, uint = float16, float32, float64, int32, uint32
  default_float, default_int = float32, int32

  @staticmethod
  def all() -> list[DType]: return [v for k, v in vars(dtypes).items() if isinstance(v, DType) and k == v.name]

  @staticmethod
  def from_numpy(dtype: np.dtype) -> DType:
    for dt in dtypes.all():
      if dt.numpy == np.dtype(dtype).name and dt is not dtypes.bfloat16: return dt
    raise TypeError(f"NumPy dtype {np.dtype(dtype)} has no pytc dtype")

  @staticmethod
  def of_scalar(value: object) -> DType:
    if isinstance(value, bool | np.bool_): return dtypes.bool
    if isinstance(value, int | np.integer): return dtypes.default_int
    if isinstance(value, float | np.floating): return dtypes.default_float
    raise TypeError(f"cannot make a tensor element from {type(value).__name__} {value!r}")


# Which types each type promotes to directly, as tinygrad's lattice: a mixed operation computes in the
# least type both reach (int8 + uint8 -> int16, uint32 + int32 -> int64, int64 + uint64 -> float16).
PROMOTES_TO: dict[DType, tuple[DType, ...]] = {
  dtypes.bool: (dtypes.int8, dtypes.uint8), dtypes.int8: (dtypes.int16,), dtypes.int16: (dtypes.int32,), dtypes.int32: (dtypes.int64,),
  dtypes.int64: (dtypes.float16, dtypes.bfloat16), dtypes.uint8: (dtypes.int16, dtypes.uint16), dtypes.uint16: (dtypes.int32, dtypes.uint32),
  dtypes.uint32: (dtypes.int64, dtypes.uint64), dtypes.uint64: (dtypes.float16, dtypes.bfloat16), dtypes.float16: (dtypes.float32,),
  dtypes.bfloat16: (dtypes.float32,), dtypes.float32: (dtypes.float64,), dtypes.float64: ()}


def _reachable(dtype: DType) -> set[DType]:
  found, stack = {dtype}, [dtype]
  while stack:
    for up in PROMOTES_TO[stack.pop()]:
      if up not in found: found.add(up); stack.append(up)
  return found


@functools.cache
def least_upper_dtype(*types: DType) -> DType:
  common = set.intersection(*(_reachable(t) for t in types))
  return min(common, key=lambda t: t.priority)


def to_numpy(data: bytes | memoryview, dtype: DType, shape: tuple[int, ...]) -> np.ndarray:
  array = np.frombuffer(data, dtype=dtype.numpy).reshape(shape)
  if dtype is dtypes.bfloat16: return (array.astype(np.uint32) << 16).view(np.float32)
  return array.copy()


def from_numpy(array: np.ndarray, dtype: DType) -> np.ndarray:
  """`array` as the bytes a buffer of `dtype` holds (bfloat16 rounded to nearest even)."""
  if dtype is dtypes.bfloat16:
    bits = np.ascontiguousarray(array, dtype=np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
  return np.ascontiguousarray(array, dtype=dtype.numpy)
