"""The lazy Tensor: tinygrad's API; operations record a graph that runs when realized."""
from __future__ import annotations

import math

import numpy as np

from pytc.device import Buffer, Device
from pytc.dtype import DType, dtypes
from pytc.graph import LazyOp
from pytc.realize import realize

Scalar = int | float | bool


class Tensor:
  """A lazy, immutable multi-dimensional array on a device."""
  def __init__(self, data: LazyOp | Scalar | list | tuple | np.ndarray, device: str | None = None,
               dtype: DType | None = None):
    device = Device.canonicalize(device)
    if isinstance(data, LazyOp):
      self.lazydata = data
      return
    if isinstance(data, Scalar):
      dtype = dtype or dtypes.of_scalar(data)
      self.lazydata = LazyOp("const", dtype, (), device, arg=data)
      return
    if not isinstance(data, list | tuple | np.ndarray):
      raise TypeError(f"cannot make a Tensor from {type(data).__name__}")
    array = np.asarray(data)
    if array.dtype.kind not in "biuf": raise TypeError(f"cannot make a Tensor from elements of NumPy dtype {array.dtype}")
    if dtype is None and isinstance(data, np.ndarray): dtype = dtypes.from_numpy(array.dtype)
    elif dtype is None:  # Python lists: tinygrad's defaults
      dtype = dtypes.bool if array.dtype.kind == "b" else dtypes.default_int if array.dtype.kind in "iu" else dtypes.default_float
    buffer = Buffer(device, dtype, tuple(array.shape)).copyin(array)
    self.lazydata = LazyOp("buffer", dtype, tuple(array.shape), device, arg=buffer)

  # *** properties ***

  @property
  def shape(self) -> tuple[int, ...]: return self.lazydata.shape
  @property
  def dtype(self) -> DType: return self.lazydata.dtype
  @property
  def device(self) -> str: return self.lazydata.device
  @property
  def ndim(self) -> int: return len(self.shape)
  def numel(self) -> int: return math.prod(self.shape)
  def __repr__(self) -> str: return f"<Tensor {self.shape} {self.dtype} on {self.device}>"

  # *** realization ***

  def realize(self, *others: Tensor) -> Tensor:
    """Compute this tensor (and `others`) now, in one kernel."""
    tensors = [self, *others]
    for tensor, node in zip(tensors, realize([t.lazydata for t in tensors])): tensor.lazydata = node
    return self

  def numpy(self) -> np.ndarray:
    if self.lazydata.op == "const": return np.full(self.shape, self.lazydata.arg, dtype=np.dtype(self.dtype.numpy))
    return self.realize().lazydata.arg.numpy()

  def tolist(self) -> Scalar | list: return self.numpy().tolist()
  def item(self) -> Scalar:
    if self.numel() != 1: raise ValueError(f"item() needs a tensor with one element, this one has shape {self.shape}")
    return self.numpy().reshape(()).item()

  # *** graph building ***

  def _unary(self, op: str, dtype: DType | None = None) -> Tensor:
    return Tensor(LazyOp(op, dtype or self.dtype, self.shape, self.device, (self.lazydata,)))

  def _operand(self, other: Tensor | Scalar, dtype: DType) -> Tensor:
    if isinstance(other, Tensor): return other.cast(dtype)
    return Tensor(LazyOp("const", dtype, self.shape, self.device, arg=other))

  def _broadcasted(self, other: Tensor | Scalar, reverse: bool = False) -> tuple[Tensor, Tensor]:
    if isinstance(other, Tensor):
      if other.shape != self.shape:
        raise ValueError(f"shapes {self.shape} and {other.shape} differ (only same-shape elementwise ops so far)")
      if other.device != self.device: raise ValueError(f"tensors on different devices: {self.device} and {other.device}")
      dtype = max(self.dtype, other.dtype, key=lambda d: d.priority)
    elif isinstance(other, Scalar):
      scalar_dtype = dtypes.of_scalar(other)
      dtype = self.dtype if scalar_dtype.priority <= self.dtype.priority or not scalar_dtype.is_float else dtypes.default_float
    else: raise TypeError(f"unsupported operand {type(other).__name__} for a Tensor op")
    pair = (self.cast(dtype), self._operand(other, dtype))
    return pair[::-1] if reverse else pair

  def _binary(self, op: str, other: Tensor | Scalar, reverse: bool = False, dtype: DType | None = None) -> Tensor:
    x, y = self._broadcasted(other, reverse)
    return Tensor(LazyOp(op, dtype or x.dtype, x.shape, x.device, (x.lazydata, y.lazydata)))

  def cast(self, dtype: DType) -> Tensor: return self if dtype == self.dtype else self._unary("cast", dtype)
  def bitcast(self, dtype: DType) -> Tensor:
    if dtype.itemsize != self.dtype.itemsize: raise ValueError(f"bitcast from {self.dtype} to {dtype} changes the item size")
    return self if dtype == self.dtype else self._unary("bitcast", dtype)
  def float(self) -> Tensor: return self.cast(dtypes.float32)
  def int(self) -> Tensor: return self.cast(dtypes.int32)
  def bool(self) -> Tensor: return self.cast(dtypes.bool)

  def _float_unary(self, op: str) -> Tensor:
    x = self if self.dtype.is_float else self.cast(dtypes.default_float)
    return x._unary(op)

  # *** elementwise math ***

  def neg(self) -> Tensor: return self.logical_not() if self.dtype is dtypes.bool else self._unary("neg")
  def exp2(self) -> Tensor: return self._float_unary("exp2")
  def log2(self) -> Tensor: return self._float_unary("log2")
  def sin(self) -> Tensor: return self._float_unary("sin")
  def sqrt(self) -> Tensor: return self._float_unary("sqrt")
  def reciprocal(self) -> Tensor: return self._float_unary("recip")
  def trunc(self) -> Tensor: return self._float_unary("trunc")
  def exp(self) -> Tensor: return (self._float_cast() * (1 / math.log(2))).exp2()
  def log(self) -> Tensor: return self.log2() * math.log(2)
  def cos(self) -> Tensor: return (math.pi / 2 - self._float_cast()).sin()
  def square(self) -> Tensor: return self * self
  def relu(self) -> Tensor: return self.maximum(0)
  def sigmoid(self) -> Tensor: return (1 + (-self._float_cast()).exp()).reciprocal()
  def abs(self) -> Tensor: return self.maximum(-self)
  def _float_cast(self) -> Tensor: return self if self.dtype.is_float else self.cast(dtypes.default_float)

  def add(self, x: Tensor | Scalar, reverse: bool = False) -> Tensor: return self._binary("add", x, reverse)
  def mul(self, x: Tensor | Scalar, reverse: bool = False) -> Tensor: return self._binary("mul", x, reverse)
  def sub(self, x: Tensor | Scalar, reverse: bool = False) -> Tensor:
    a, b = self._broadcasted(x, reverse)
    return a + (-b)
  def div(self, x: Tensor | Scalar, reverse: bool = False) -> Tensor:
    a, b = self._broadcasted(x, reverse)
    return a._float_cast() * b._float_cast().reciprocal()
  def maximum(self, x: Tensor | Scalar) -> Tensor: return self._binary("max", x)
  def minimum(self, x: Tensor | Scalar) -> Tensor:
    a, b = self._broadcasted(x)
    return -((-a).maximum(-b))
  def pow(self, x: Tensor | Scalar, reverse: bool = False) -> Tensor:
    a, b = self._broadcasted(x, reverse)
    return a._float_cast()._binary("pow", b._float_cast())
  def where(self, x: Tensor | Scalar, y: Tensor | Scalar) -> Tensor:
    condition = self.cast(dtypes.bool)
    a, b = (x if isinstance(x, Tensor) else Tensor(LazyOp("const", dtypes.of_scalar(x), self.shape, self.device, arg=x)))._broadcasted(y)
    if a.shape != condition.shape: raise ValueError(f"where: condition shape {condition.shape} differs from {a.shape}")
    return Tensor(LazyOp("where", a.dtype, a.shape, a.device, (condition.lazydata, a.lazydata, b.lazydata)))
  def logical_not(self) -> Tensor: return self._binary("cmpne", True, dtype=dtypes.bool) if self.dtype is dtypes.bool else self == 0

  def __neg__(self) -> Tensor: return self.neg()
  def __add__(self, x): return self.add(x)
  def __radd__(self, x): return self.add(x, True)
  def __sub__(self, x): return self.sub(x)
  def __rsub__(self, x): return self.sub(x, True)
  def __mul__(self, x): return self.mul(x)
  def __rmul__(self, x): return self.mul(x, True)
  def __truediv__(self, x): return self.div(x)
  def __rtruediv__(self, x): return self.div(x, True)
  def __pow__(self, x): return self.pow(x)
  def __rpow__(self, x): return self.pow(x, True)
  def __lt__(self, x): return self._binary("cmplt", x, dtype=dtypes.bool)
  def __gt__(self, x): return self._binary("cmplt", x, True, dtype=dtypes.bool)
  def __ge__(self, x): return (self < x).logical_not()
  def __le__(self, x): return (self > x).logical_not()
  def __eq__(self, x): return self._binary("cmpeq", x, dtype=dtypes.bool)  # type: ignore[override]
  def __ne__(self, x): return self._binary("cmpne", x, dtype=dtypes.bool)  # type: ignore[override]
  __hash__ = object.__hash__
