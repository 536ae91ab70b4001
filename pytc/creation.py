"""Tensors made from Python data or from a shape: empty buffers, constants, ranges and the identity matrix, and tensors over
data from elsewhere: NumPy storage, host memory, a URL's file (Tensor's class methods)."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from pytc.arguments import argfix, int_arg, scalar_arg
from pytc.device import Buffer, Device
from pytc.dtype import DType, Scalar, dtypes, to_dtype, wrapped
from pytc.graph import LazyOp
from pytc.helpers import fetch
from pytc.symbolic import Variable, concrete

if TYPE_CHECKING:
  from pytc.tensor import Tensor


def creation_shape(shape: tuple, op: str) -> tuple[int, ...]:
  """`shape` checked for a creation op: non-negative ints only, else ValueError."""
  if not all((isinstance(n, int) and not isinstance(n, bool) or isinstance(n, Variable)) and n >= 0 for n in shape):
    raise ValueError(f"{op} needs a shape of non-negative ints, got {shape}")
  return shape


def flattened(data: list | tuple):
  """The elements of nested lists, tuples and NumPy arrays, in row-major order."""
  for item in data:
    if isinstance(item, list | tuple): yield from flattened(item)
    elif isinstance(item, np.ndarray): yield from item.reshape(-1).tolist()
    else: yield item


# what np.asarray makes of Python bools, ints (uint64 for those past int64, object past uint64) and floats
PYTHON_ELEMENT_ARRAYS = frozenset({"bool", "int64", "uint64", "float64", "object"})


def array_from_python(data: list | tuple, dtype: DType | None) -> tuple[np.ndarray, DType]:
  """Nested lists of Python values as a NumPy array of `dtype`, which defaults to bool, default_int or default_float as the
  elements make it. Ints convert exactly, brought into an integer dtype modulo 2^bits as tinygrad does, and floats into one
  truncate toward 0, also where NumPy alone would go through float64 (ints past int64, or mixed with floats)."""
  array = np.asarray(data)
  if array.dtype.kind not in "biufO": raise TypeError(f"cannot make a Tensor from elements of NumPy dtype {array.dtype}")
  inexact = array.dtype.kind in "fO"
  only_ints = inexact and array.size > 0 and all(isinstance(v, int) for v in flattened(data))
  if dtype is None and array.dtype.name not in PYTHON_ELEMENT_ARRAYS:  # NumPy made a narrower type: from NumPy scalars
    raise RuntimeError("a list of NumPy scalars has no dtype of its own: make it an np.array, or give the dtype")
  if dtype is None:
    dtype = dtypes.bool if array.dtype.kind == "b" else dtypes.default_int if array.dtype.kind in "iu" or only_ints else dtypes.default_float
  if not (inexact and (dtype.is_int or array.dtype.kind == "O")): return array, dtype
  values = list(flattened(data))
  if not all(isinstance(v, int | float | np.integer | np.floating) for v in values):
    raise TypeError(f"cannot make a Tensor from elements of types {sorted({type(v).__name__ for v in values})}")
  if not dtype.is_int: return np.array([float(v) for v in values], np.float64).reshape(array.shape), dtype
  try: return np.array([wrapped(int(v), dtype) for v in values], dtype.numpy).reshape(array.shape), dtype
  except (ValueError, OverflowError): raise ValueError(f"cannot convert {[v for v in values if not math.isfinite(v)][0]} to {dtype}") from None


class Creation:
  """The methods of Tensor that make a tensor from a shape, a value or a range (mixed into it)."""
  @classmethod
  def empty(cls, *shape, device: str | None = None, dtype: DType | str | None = None, requires_grad: bool | None = None) -> Tensor:
    """A realized tensor whose contents are unspecified (stored with each symbolic dim at its largest size); on DISK:path,
    the file's first bytes."""
    shape, device = creation_shape(argfix(*shape), "empty"), Device.canonicalize(device)
    dtype = dtypes.default_float if dtype is None else to_dtype(dtype)
    return cls(LazyOp("buffer", dtype, shape, device, arg=Buffer.storage(device, dtype, concrete(shape))), requires_grad=requires_grad)

  def empty_like(self, dtype: DType | str | None = None, device: str | None = None) -> Tensor:
    return type(self).empty(*self.shape, dtype=self.dtype if dtype is None else dtype, device=self.device if device is None else device)

  @classmethod
  def full(cls, shape, fill_value: Scalar, dtype: DType | str | None = None, device: str | None = None, buffer: bool = True,
           requires_grad: bool | None = None) -> Tensor:
    """Every element `fill_value` (of `dtype`, else the value's own: bool, default_int or default_float). A constant stays
    lazy whatever `buffer` says: realize() stores it in a buffer, and until then it costs no memory."""
    shape, device, fill_value = creation_shape(argfix(shape), "full"), Device.canonicalize(device), scalar_arg(fill_value, "fill_value")
    dtype = dtypes.from_py(fill_value) if dtype is None else to_dtype(dtype)
    if dtype in dtypes.fp8s: return cls.full(shape, fill_value, dtypes.float32, device, buffer, requires_grad).cast(dtype)
    return cls(LazyOp("const", dtype, shape, device, arg=fill_value), requires_grad=requires_grad)

  def full_like(self, fill_value: Scalar, dtype: DType | str | None = None, device: str | None = None, buffer: bool = True) -> Tensor:
    return type(self).full(self.shape, fill_value, self.dtype if dtype is None else dtype, self.device if device is None else device, buffer)

  @classmethod
  def zeros(cls, *shape, **kwargs) -> Tensor: return cls.full(argfix(*shape), 0.0, **kwargs)
  @classmethod
  def ones(cls, *shape, **kwargs) -> Tensor: return cls.full(argfix(*shape), 1.0, **kwargs)
  def zeros_like(self, **kwargs) -> Tensor: return self.full_like(0, **kwargs)
  def ones_like(self, **kwargs) -> Tensor: return self.full_like(1, **kwargs)

  @classmethod
  def arange(cls, start, stop=None, step=1, dtype: DType | str | None = None, device: str | None = None) -> Tensor:
    """start, start + step, ... up to stop (excluded); with one argument, 0 up to it. Without a dtype: default_float when
    an argument is a float, else default_int, or int64 when the values do not fit it. Values the dtype cannot hold raise
    OverflowError."""
    if stop is None: start, stop = 0, start
    if isinstance(stop, Variable) and start == 0 and step == 1: return cls.arange(stop.vmax, dtype=dtype, device=device)._tagged((stop,))
    start, stop, step = scalar_arg(start, "start"), scalar_arg(stop, "stop"), scalar_arg(step, "step")
    if not all(math.isfinite(v) for v in (start, stop, step)): raise ValueError(f"arange needs finite bounds and step, got {start}, {stop}, {step}")
    if step == 0: raise ValueError("arange step cannot be 0")
    count = max(0, math.ceil((stop - start) / step))
    lo, hi = sorted((start, start + (count - 1) * step)) if count else (0, 0)
    if dtype is None:
      dtype = dtypes.default_float if any(isinstance(v, float) for v in (start, stop, step)) else dtypes.default_int
      if dtype is dtypes.default_int and not dtype.min <= lo <= hi <= dtype.max: dtype = dtypes.int64
    if not (dtype := to_dtype(dtype)).min <= lo <= hi <= dtype.max:
      raise OverflowError(f"arange from {start} to {stop} by {step} has values {dtype} cannot hold")
    if count <= 1: return cls.full((count,), start, dtype, device)
    exact = dtype.is_float or all(isinstance(v, int) for v in (start, step))
    counting = dtype if exact else dtypes.default_float
    if counting.is_fp8: counting = dtypes.float32  # counted in float32, rounded once by the cast
    index = cls(LazyOp("iota", counting, (count,), Device.canonicalize(device), arg=0))
    return (index * step + start if (step, start) != (1, 0) else index).cast(dtype)

  @classmethod
  def linspace(cls, start: int | float, stop: int | float, steps: int, dtype: DType | str | None = None, device: str | None = None) -> Tensor:
    """`steps` evenly spaced values from start to stop, both included, computed in default_float and cast to `dtype`."""
    start, stop, steps = scalar_arg(start, "start"), scalar_arg(stop, "stop"), int_arg(steps, "steps", 0)
    if (dtype := to_dtype(dtype or dtypes.default_float)) is dtypes.bool: raise ValueError("linspace cannot make a bool tensor")
    if steps == 1: return cls.full((1,), start, dtype, device)
    return (cls.arange(steps, dtype=dtypes.default_float, device=device) * ((stop - start) / (steps - 1)) + start).cast(dtype)

  @classmethod
  def eye(cls, n: int, m: int | None = None, dtype: DType | str | None = None, device: str | None = None) -> Tensor:
    """n rows and m (default n) columns: ones on the diagonal, zeros elsewhere."""
    n = int_arg(n, "n", 0)
    cols = n if m is None else int_arg(m, "m", 0)
    rows = cls.arange(n, device=device).unsqueeze(-1)
    return (rows == cls.arange(cols, device=device)).cast(dtypes.default_float if dtype is None else dtype)

  # *** from data elsewhere ***

  @classmethod
  def from_bytes(cls, stored: np.ndarray, dtype: DType, device: str | None = None) -> Tensor:
    """A tensor over the raw element storage `stored` (for bfloat16, the uint16 bit patterns)."""
    if not isinstance(stored, np.ndarray): raise TypeError(f"from_bytes needs a NumPy array, got {type(stored).__name__}")
    device = Device.canonicalize(device)
    buffer = Buffer(device, dtype, stored.shape)
    buffer.copyin(memoryview(np.ascontiguousarray(stored).reshape(-1).view(np.uint8)))
    return cls(LazyOp("buffer", dtype, stored.shape, device, arg=buffer))

  @classmethod
  def from_blob(cls, ptr: int, shape: tuple[int, ...], dtype: DType | None = None, device: str | None = None, owner: object = None) -> Tensor:
    """A tensor over host memory at address `ptr`, without a copy (CPU devices only). The address is trusted: kernels read
    and write it directly. Only a null address, or a range [ptr, ptr + size in bytes) that is not all mapped in this process,
    is refused (ValueError) up front; memory that is mapped but not the caller's to use is not caught. The memory must stay
    valid and unchanged while the tensor is in use: pass the object that owns it (say, the NumPy array) as `owner` to keep it alive."""
    device, dtype, shape = Device.canonicalize(device), dtype or dtypes.default_float, tuple(shape)
    if (wrap := getattr(Device[device].allocator, "wrap", None)) is None:
      raise ValueError(f"from_blob wraps host memory, so only devices whose memory is the host's (CPU), not {device}")
    if not ptr: raise ValueError(f"from_blob needs a non-null pointer, got {ptr!r}")
    try: raw = wrap(ptr, math.prod(shape) * dtype.itemsize, owner)
    except ValueError as error: raise ValueError(f"from_blob: {error}") from None
    return cls(LazyOp("buffer", dtype, shape, device, arg=Buffer(device, dtype, shape, raw)))

  @classmethod
  def from_url(cls, url: str, gunzip: bool = False, **kwargs) -> Tensor:
    """The bytes (uint8) of the file at `url`, downloaded once into the cache (pytc.helpers.fetch), or of a local copy there."""
    return cls(fetch(url, gunzip=gunzip), **kwargs)
