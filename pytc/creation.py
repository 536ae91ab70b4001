"""Tensors made from a shape: empty buffers, constants, ranges and the identity matrix (Tensor's class methods)."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pytc.device import Buffer, Device
from pytc.dtype import DType, dtypes, to_dtype
from pytc.graph import LazyOp

if TYPE_CHECKING:
  from pytc.tensor import Scalar, Tensor


def argfix(*x) -> tuple:
  """tinygrad's calling convention: f(1, 2) and f((1, 2)) mean the same."""
  return tuple(x[0]) if len(x) == 1 and isinstance(x[0], tuple | list) else tuple(x)


def creation_shape(shape: tuple, op: str) -> tuple[int, ...]:
  """`shape` checked for a creation op: non-negative ints only, else ValueError."""
  if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
    raise ValueError(f"{op} needs a shape of non-negative ints, got {shape}")
  return shape


class Creation:
  """The methods of Tensor that make a tensor from a shape, a value or a range (mixed into it)."""
  @classmethod
  def empty(cls, *shape, device: str | None = None, dtype: DType | str | None = None, requires_grad: bool | None = None) -> Tensor:
    """A realized tensor whose contents are unspecified."""
    shape, device = creation_shape(argfix(*shape), "empty"), Device.canonicalize(device)
    dtype = dtypes.default_float if dtype is None else to_dtype(dtype)
    return cls(LazyOp("buffer", dtype, shape, device, arg=Buffer(device, dtype, shape)), requires_grad=requires_grad)

  def empty_like(self, dtype: DType | str | None = None, device: str | None = None) -> Tensor:
    return type(self).empty(*self.shape, dtype=self.dtype if dtype is None else dtype, device=self.device if device is None else device)

  @classmethod
  def full(cls, shape, fill_value: Scalar, dtype: DType | str | None = None, device: str | None = None, buffer: bool = True,
           requires_grad: bool | None = None) -> Tensor:
    """Every element `fill_value` (of `dtype`, else the value's own: bool, default_int or default_float). A constant stays
    lazy whatever `buffer` says: realize() stores it in a buffer, and until then it costs no memory."""
    shape, device = creation_shape(argfix(shape), "full"), Device.canonicalize(device)
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
    index = cls(LazyOp("iota", dtype if exact else dtypes.default_float, (count,), Device.canonicalize(device), arg=0))
    return (index * step + start if (step, start) != (1, 0) else index).cast(dtype)

  @classmethod
  def linspace(cls, start: int | float, stop: int | float, steps: int, dtype: DType | str | None = None, device: str | None = None) -> Tensor:
    """`steps` evenly spaced values from start to stop, both included, computed in default_float and cast to `dtype`."""
    if steps < 0: raise ValueError(f"linspace needs steps >= 0, got {steps}")
    if (dtype := to_dtype(dtype or dtypes.default_float)) is dtypes.bool: raise ValueError("linspace cannot make a bool tensor")
    if steps == 1: return cls.full((1,), start, dtype, device)
    return (cls.arange(steps, dtype=dtypes.default_float, device=device) * ((stop - start) / (steps - 1)) + start).cast(dtype)

  @classmethod
  def eye(cls, n: int, m: int | None = None, dtype: DType | str | None = None, device: str | None = None) -> Tensor:
    """n rows and m (default n) columns: ones on the diagonal, zeros elsewhere."""
    cols = n if m is None else m
    if n < 0 or cols < 0: raise ValueError(f"eye needs non-negative sizes, got n={n}, m={cols}")
    rows = cls.arange(n, device=device).unsqueeze(-1)
    return (rows == cls.arange(cols, device=device)).cast(dtypes.default_float if dtype is None else dtype)
