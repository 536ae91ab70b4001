"""The lazy Tensor: tinygrad's API; operations record a graph that runs when realized."""
from __future__ import annotations

import functools
import math
import operator
import pathlib
import weakref
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from pytc import flags
from pytc.activations import Activations, float32_for_halves
from pytc.arguments import calling_op, int_arg, is_int, tensor_arg
from pytc.creation import Creation, argfix, array_from_python
from pytc.device import Buffer, Device, is_disk
from pytc.dtype import DType, dtypes, is_weak, least_upper_dtype, strong_dtype, sum_dtype, to_dtype, weak_scalar_dtype, wrapped
from pytc.fp8 import float32_to_fp8, fp8_to_float32
from pytc.functional import Functional
from pytc.gradient import cast_gradient, gradients, materialized_gradient, ruled
from pytc.graph import VIEW_OPS, LazyOp, is_view
from pytc.helpers import GlobalCounters
from pytc.indexing import Indexing
from pytc.inverse_trig import InverseTrig
from pytc.linalg import Linalg
from pytc.padding import PaddingModes
from pytc.rand import Random
from pytc.realize import CAPTURES, realize
from pytc.rearrange import Rearrange
from pytc.resample import Resample
from pytc.row_gradients import log_softmax_gradient, normalized, softmax_gradient
from pytc.selection import Selection
from pytc.sorting import Sorting
from pytc.symbolic import Variable, concrete, is_symbolic, largest, resolved
from pytc.template import templated

Scalar = int | float | bool
BOOL_ARITHMETIC = {"add": "or", "mul": "and"}  # bool + is logical or and bool * logical and, as in tinygrad (so bool - b is or not b)


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
  if all(s == shapes[0] for s in shapes[1:]): return tuple(shapes[0])
  rank = max(len(s) for s in shapes)
  padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
  result = []
  for dims in zip(*padded):
    sizes = {d for d in dims if d != 1}
    if len(sizes) > 1: raise ValueError(f"cannot broadcast shapes {' and '.join(str(tuple(s)) for s in shapes)}")
    result.append(sizes.pop() if sizes else 1)
  return tuple(result)


def exact_constant(value: Scalar, dtype: DType) -> bool:
  """Whether a constant of `dtype` can hold the Python `value` as is (wrapping an int, truncating a finite float to an int)."""
  return not dtype.is_fp8 and (dtype.is_float or dtype.is_bool or isinstance(value, int) or math.isfinite(value))


class Tensor(Creation, Random, Indexing, Rearrange, Linalg, Functional, Sorting, Resample, PaddingModes, InverseTrig, Selection, Activations):
  """A lazy, immutable multi-dimensional array on a device."""
  no_grad: ClassVar[bool] = False
  training: ClassVar[bool] = bool(flags.TRAINING.value)
  _live: ClassVar[set[weakref.ref]] = set()  # every Tensor alive: backward() fills `.grad` of those in its graph

  def __init__(self, data: LazyOp | Scalar | bytes | list | tuple | np.ndarray | None, device: str | None = None,
               dtype: DType | str | None = None, requires_grad: bool | None = None):
    self.grad: Tensor | None = None
    self.requires_grad = requires_grad  # None: a gradient when backward() reaches it (tinygrad's rule); False: never
    if isinstance(data, LazyOp): self.lazydata = data
    elif isinstance(data, pathlib.Path): self.lazydata = self._of_file(data, device, None if dtype is None else to_dtype(dtype))
    else: self.lazydata = self._lazydata(data, Device.canonicalize(device), None if dtype is None else to_dtype(dtype))
    Tensor._live.add(weakref.ref(self, Tensor._live.discard))  # one ref per Tensor: the set never compares two live refs

  @staticmethod
  def _of_file(path: pathlib.Path, device: str | None, dtype: DType | None) -> LazyOp:
    """A file's elements (uint8 by default; a trailing part smaller than one is left out) on DISK:path, moved to `device`
    when one is given."""
    if not path.is_file(): raise FileNotFoundError(f"Tensor of a path: no file at {path}")
    dtype, disk = dtype or dtypes.uint8, f"DISK:{path.resolve()}"
    if dtype.is_fp8 or dtype.is_bool: raise TypeError(f"Tensor of a path holds {dtype} only through a bitcast of its bytes")
    stored = Tensor.empty(path.stat().st_size // dtype.itemsize, dtype=dtype, device=disk)
    return (stored if device is None else stored.to(device)).lazydata

  @staticmethod
  def _lazydata(data, device: str, dtype: DType | None) -> LazyOp:
    """None is 0.0 and a Python scalar a constant; bytes are the raw elements of `dtype` (uint8 by default); lists take
    bool, default_int or default_float from their elements, NumPy arrays and scalars their own dtype. fp8 data is
    converted from float32 in the graph."""
    if data is None: data = 0.0
    if isinstance(data, np.generic): data = np.asarray(data)
    if isinstance(data, Scalar):
      if dtype in dtypes.fp8s: return Tensor(data, device, dtypes.float32).cast(dtype).lazydata
      return LazyOp("const", dtype or weak_scalar_dtype(data), (), device, arg=data)
    if isinstance(data, bytes):
      dtype = dtype or dtypes.uint8
      if len(data) % dtype.itemsize: raise ValueError(f"{len(data)} bytes are not a whole number of {dtype} elements")
      buffer = Buffer(device, dtype, (len(data) // dtype.itemsize,))
      buffer.copyin(data)
      return LazyOp("buffer", dtype, buffer.shape, device, arg=buffer)
    if not isinstance(data, list | tuple | np.ndarray):
      raise TypeError(f"cannot make a Tensor from {type(data).__name__}")
    if isinstance(data, np.ndarray):
      if data.dtype.kind not in "biuf": raise TypeError(f"cannot make a Tensor from elements of NumPy dtype {data.dtype}")
      array, dtype = data, dtype or dtypes.from_numpy(data.dtype)
    else: array, dtype = array_from_python(data, dtype)
    if dtype in dtypes.fp8s: return Tensor(array.astype(np.float32), device).cast(dtype).lazydata
    return LazyOp("buffer", dtype, tuple(array.shape), device, arg=Buffer(device, dtype, tuple(array.shape)).copyin(array))

  # *** properties ***

  @property
  def shape(self) -> tuple: return self.lazydata.symbolic or self.lazydata.shape
  @property
  def dtype(self) -> DType: return self.lazydata.dtype
  @property
  def device(self) -> str: return self.lazydata.device
  @property
  def ndim(self) -> int: return len(self.lazydata.shape)
  def numel(self) -> int: return math.prod(self.shape)
  @property
  def max_shape(self) -> tuple[int, ...]:
    """The shape with each symbolic dim at its largest size (the size the tensor is stored at)."""
    return concrete(self.shape)
  def max_numel(self) -> int: return math.prod(self.max_shape)
  def __repr__(self) -> str: return f"<Tensor {self.shape} {self.dtype} on {self.device}>"
  def __bool__(self) -> bool: raise TypeError("the truth value of a Tensor is undefined: compare with .item() or use .any()/.all()")
  def __len__(self) -> int:
    if not self.shape: raise TypeError("len() of a 0-d tensor")
    return self.shape[0]

  # *** realization ***

  def realize(self, *others: Tensor, do_update_stats: bool = True) -> Tensor:
    """Compute this tensor (and `others`) now, in one schedule. As in tinygrad, a view of realized data (movement
    ops only) stays a view: realizing it alone would only copy. Without do_update_stats, GlobalCounters do not count it."""
    counters = {} if do_update_stats else {k: v for k, v in vars(GlobalCounters).items() if isinstance(v, int | float) and not k.startswith("_")}
    tensors = [t for t in (self, *others) if not is_view(t.lazydata)]
    for tensor, node in zip(tensors, realize([t.lazydata for t in tensors])): tensor.lazydata = node
    if not do_update_stats:
      for name, value in counters.items(): setattr(GlobalCounters, name, value)
    return self

  def backward(self, gradient: Tensor | None = None) -> Tensor:
    """Accumulate d(self)/d(t) into `t.grad` for every live float tensor `t` in self's graph whose requires_grad is not
    False (zeros where no gradient flows to it)."""
    if Tensor.no_grad: raise RuntimeError("backward() while Tensor.no_grad is set")
    if gradient is None and self.shape != (): raise ValueError(f"backward() without a gradient needs a scalar, not shape {self.shape}")
    if not self.dtype.is_float: raise RuntimeError(f"only float tensors have a gradient, backward() on {self.dtype}")
    seed = gradient if gradient is not None else Tensor(LazyOp("const", self.dtype, (), self.device, arg=1.0))
    candidates = [t for ref in list(Tensor._live) if (t := ref()) is not None and t.requires_grad is not False and t.dtype.is_float]
    grads = gradients(self, seed, [t.lazydata for t in candidates])
    for t in candidates:
      if (g := grads.get(id(t.lazydata))) is not None: t.grad = g if t.grad is None else t.grad + g
    return self

  def gradient(self, *targets: Tensor, gradient: Tensor | None = None) -> list[Tensor]:
    """d(self)/d(target) for each target, without touching `.grad`; zeros for a target self does not depend on."""
    if gradient is None and self.shape != (): raise ValueError(f"gradient() without a gradient needs a scalar, not shape {self.shape}")
    if not self.dtype.is_float or not all(t.dtype.is_float for t in targets):
      raise RuntimeError(f"only float tensors have a gradient: gradient() of {self.dtype} by {[t.dtype for t in targets]}")
    seed = gradient if gradient is not None else Tensor(LazyOp("const", self.dtype, (), self.device, arg=1.0))
    grads = gradients(self, seed, [t.lazydata for t in targets])
    return [grads[id(t.lazydata)] if id(t.lazydata) in grads else t.zeros_like() for t in targets]

  @staticmethod
  def from_url(url: str, gunzip: bool = False, **kwargs) -> Tensor:
    """The bytes (uint8) of the file at `url`, downloaded once into the cache (pytc.helpers.fetch), or of a local copy there."""
    from pytc.helpers import fetch
    return Tensor(fetch(url, gunzip=gunzip), **kwargs)

  def detach(self) -> Tensor: return Tensor(LazyOp("detach", self.dtype, self.shape, self.device, (self.lazydata,)))

  @property
  def is_param(self) -> bool:
    """Whether optimizers train it and backward() gives it a gradient: tinygrad's name for requires_grad not False."""
    return self.requires_grad is not False
  def is_param_(self, is_param: bool = True) -> Tensor:
    """Mark it a parameter (the default) or a buffer, such as running statistics, that optimizers leave alone; returns self."""
    self.requires_grad = None if is_param else False
    return self

  def contiguous_backward(self) -> Tensor:
    """This tensor, its gradient materialized in the backward pass (computed once, not inlined into every kernel that
    reads it)."""
    return ruled(self, (self,), materialized_gradient, ())

  def numpy(self) -> np.ndarray:
    if CAPTURES.launches:
      from pytc.jit import JitError
      raise JitError(f"reading a {self.shape} tensor's data while TinyJit captures would bake this call's values into every replay")
    if is_weak(self.dtype): return self.cast(strong_dtype(self.dtype)).numpy()  # as it is stored
    if self.dtype in dtypes.fp8s: return self.float().numpy()
    if self.lazydata.op == "const" and self.dtype.fmt is not None:
      value = wrapped(self.lazydata.arg, self.dtype) if self.dtype.is_int else self.lazydata.arg
      return np.full(resolved(self.shape), value, dtype=np.dtype(self.dtype.numpy))
    shape, source = self.shape, self.contiguous() if is_view(self.lazydata) and not self.lazydata.is_realized else self
    data = source.realize().lazydata.arg.numpy()
    return data[tuple(slice(0, n) for n in resolved(shape))] if is_symbolic(shape) else data

  def tolist(self) -> Scalar | list: return self.numpy().tolist()
  def item(self) -> Scalar:
    if self.numel() != 1: raise ValueError(f"item() needs a tensor with one element, this one has shape {self.shape}")
    return self.numpy().reshape(()).item()

  # *** graph building ***

  def _unary(self, op: str, dtype: DType | None = None) -> Tensor:
    if self.dtype.is_fp8 and op not in ("cast", "bitcast"):  # fp8 math runs in float32, rounded back to the fp8 type
      return self.float()._unary(op, dtype) if dtype is not None else self.float()._unary(op).cast(self.dtype)
    return Tensor(LazyOp(op, dtype or self.dtype, self.shape, self.device, (self.lazydata,)))

  def _broadcasted(self, other: Tensor | Scalar, reverse: bool = False) -> tuple[Tensor, Tensor]:
    if isinstance(other, Variable): other = other.tensor(self.device)
    if isinstance(other, Tensor):
      if other.device != self.device: raise ValueError(f"tensors on different devices: {self.device} and {other.device}")
      if other.dtype is self.dtype and other.shape == self.shape: return (other, self) if reverse else (self, other)
      dtype = least_upper_dtype(self.dtype, other.dtype)
      shape = broadcast_shape(self.shape, other.shape)
      pair = (self.cast(dtype)._expanded_to(shape), other.cast(dtype)._expanded_to(shape))
    elif isinstance(other, Scalar):
      dtype = least_upper_dtype(self.dtype, weak_scalar_dtype(other))  # a weak type: it takes the tensor's where the kind allows
      if dtype.is_fp8: const = Tensor.full(self.shape, other, dtype, self.device)  # the scalar rounded to the fp8 type
      else: const = Tensor(LazyOp("const", dtype, self.shape, self.device, arg=other))
      pair = (self.cast(dtype), const)
    else: raise TypeError(f"unsupported operand {type(other).__name__} for a Tensor op")
    return pair[::-1] if reverse else pair

  def _broadcast_to(self, shape: tuple[int, ...]) -> Tensor:
    if self.shape == shape: return self
    return self.reshape((1,) * (len(shape) - self.ndim) + self.shape).expand(shape)

  def _expanded_to(self, shape: tuple[int, ...]) -> Tensor:
    """_broadcast_to a shape that broadcast_shape gave for this one (the checks of reshape and expand would pass)."""
    if self.shape == shape: return self
    x = self if self.ndim == len(shape) else self._movement("reshape", (1,) * (len(shape) - self.ndim) + self.shape)
    return x if x.shape == shape else x._movement("expand", shape)

  def _binary(self, op: str, other: Tensor | Scalar, reverse: bool = False, dtype: DType | None = None) -> Tensor:
    x, y = self._broadcasted(other, reverse)
    if x.dtype.is_fp8:  # computed in float32, rounded back to the fp8 type
      return x.float()._binary(op, y.float(), dtype=dtype) if dtype is not None else x.float()._binary(op, y.float()).cast(x.dtype)
    if x.dtype is dtypes.bool: op = BOOL_ARITHMETIC.get(op, op)
    return Tensor(LazyOp(op, dtype or x.dtype, x.shape, x.device, (x.lazydata, y.lazydata)))

  def cast(self, dtype: DType | str) -> Tensor:
    if not isinstance(dtype, DType | str): raise TypeError(f"cast needs a pytc dtype (dtypes.float32, 'float32', ...), got {dtype!r}")
    if (dtype := to_dtype(dtype)) == self.dtype and is_weak(dtype) == is_weak(self.dtype): return self
    if is_weak(self.dtype) and self.lazydata.op == "const" and exact_constant(self.lazydata.arg, dtype):
      # the Python value itself in the new type (not the value as first stored); its gradient passes as a cast's
      return ruled(Tensor(LazyOp("const", dtype, self.shape, self.device, arg=self.lazydata.arg)), (self,), cast_gradient, ())
    if dtype == self.dtype: return self._unary("cast", dtype)  # a weak type and the one it is stored as: the same bits
    if self.dtype.is_fp8: return ruled(fp8_to_float32(self.bitcast(dtypes.uint8), self.dtype).cast(dtype), (self,), cast_gradient, ())
    if dtype.is_fp8: return ruled(float32_to_fp8(self.cast(dtypes.float32), dtype).bitcast(dtype), (self,), cast_gradient, ())
    return self._unary("cast", dtype)
  def bitcast(self, dtype: DType | str) -> Tensor:
    """The same bytes read as `dtype`. When the item size changes, the last dimension is rescaled (float32 to int8 makes it
    4x longer), as little-endian memory would be: a last dimension whose bytes do not divide into items raises RuntimeError."""
    if (dtype := to_dtype(dtype)) == self.dtype and is_weak(dtype) == is_weak(self.dtype): return self
    if is_weak(self.dtype): return self.cast(strong_dtype(self.dtype)).bitcast(dtype)  # the bytes it is stored as
    if dtypes.bool in (self.dtype, dtype):  # a bool's byte is 0 or 1; a byte read as a bool is whether it is nonzero
      return self.cast(dtypes.uint8).bitcast(dtype) if self.dtype is dtypes.bool else self.bitcast(dtypes.uint8).cast(dtypes.bool)
    if dtype.itemsize == self.dtype.itemsize: return self._unary("bitcast", dtype)
    if self.ndim == 0 or self.shape[-1] * self.dtype.itemsize % dtype.itemsize:
      raise RuntimeError(f"bitcast from {self.dtype} to {dtype} needs a last dimension of whole {dtype} items, got shape {self.shape}")
    source, target = dtypes.unsigned_of(self.dtype.itemsize), dtypes.unsigned_of(dtype.itemsize)
    words = self.bitcast(source)
    if self.dtype.itemsize > dtype.itemsize:  # each item splits into pieces, the low bytes first
      pieces = [(words >> (8 * dtype.itemsize * i)).cast(target) for i in range(self.dtype.itemsize // dtype.itemsize)]
      return pieces[0].stack(*pieces[1:], dim=-1).flatten(-2).bitcast(dtype)
    ratio = dtype.itemsize // self.dtype.itemsize  # consecutive items join into one, the first the lowest bytes
    groups = words.reshape(*self.shape[:-1], self.shape[-1] // ratio, ratio).cast(target)
    joined = functools.reduce(operator.or_, (groups[..., i] << (8 * self.dtype.itemsize * i) for i in range(ratio)))
    return joined.bitcast(dtype)
  def float(self) -> Tensor: return self.cast(dtypes.float32)
  def half(self) -> Tensor: return self.cast(dtypes.float16)
  def double(self) -> Tensor: return self.cast(dtypes.float64)
  def bfloat16(self) -> Tensor: return self.cast(dtypes.bfloat16)
  def long(self) -> Tensor: return self.cast(dtypes.int64)
  def short(self) -> Tensor: return self.cast(dtypes.int16)
  def is_floating_point(self) -> bool: return self.dtype.is_float
  def element_size(self) -> int: return self.dtype.itemsize
  def nbytes(self) -> int: return self.numel() * self.dtype.itemsize
  def size(self, dim: int | None = None) -> tuple[int, ...] | int: return self.shape if dim is None else self.shape[self._axis(dim)]
  def clone(self, device: str | None = None) -> Tensor:
    """A copy in a new buffer, on `device` when given, with a clone of the gradient (if any)."""
    copy = (self if device is None else self.to(device)).contiguous()
    if self.grad is not None: copy.grad = self.grad.clone(device)
    return copy
  def int(self) -> Tensor: return self.cast(dtypes.int32)
  def bool(self) -> Tensor: return self.cast(dtypes.bool)

  def _float_unary(self, op: str) -> Tensor:
    return self._float_cast()._unary(op)

  # *** elementwise math ***

  def neg(self) -> Tensor: return self.logical_not() if self.dtype is dtypes.bool else self._unary("neg")
  def exp2(self) -> Tensor: return self._float_unary("exp2")
  def log2(self) -> Tensor: return self._float_unary("log2")
  def sin(self) -> Tensor: return self._float_unary("sin")
  def sqrt(self) -> Tensor: return self._float_unary("sqrt")
  def reciprocal(self) -> Tensor: return self._float_unary("recip")
  def trunc(self) -> Tensor:
    """Rounds toward zero; integers and bools are already whole, so they come back unchanged (dtype kept)."""
    return self._unary("trunc") if self.dtype.is_float else self
  def exp(self) -> Tensor: return self._float_unary("exp")
  def tanh(self) -> Tensor: return self._float_unary("tanh")
  def log(self) -> Tensor: return self._float_unary("log")
  def cos(self) -> Tensor: return self._float_unary("cos")
  def square(self) -> Tensor: return self * self
  @templated
  def relu(self) -> Tensor:
    """max(self, 0) keeping NaN, with gradient 0 at 0 as torch (maximum would split it at the tie)."""
    return ((self < 0) | (self == 0)).where(0, self)
  def abs(self) -> Tensor: return self if self.dtype.is_unsigned or self.dtype.is_bool else self.maximum(-self)
  def _float_cast(self) -> Tensor:
    """Self as a float: ints and bool as default_float (a weak int as the weak float)."""
    return self if self.dtype.is_float else self.cast(dtypes.weakfloat if is_weak(self.dtype) else dtypes.default_float)

  def add(self, x: Tensor | Scalar, reverse: bool = False) -> Tensor: return self._binary("add", x, reverse)
  def mul(self, x: Tensor | Scalar, reverse: bool = False) -> Tensor: return self._binary("mul", x, reverse)
  def sub(self, x: Tensor | Scalar, reverse: bool = False) -> Tensor:
    a, b = self._broadcasted(x, reverse)
    return (a.float() - b.float()).cast(a.dtype) if a.dtype.is_fp8 else a + (-b)
  def div(self, x: Tensor | Scalar, reverse: bool = False, rounding_mode: str | None = None) -> Tensor:
    """True division; rounding_mode "trunc" rounds the quotient toward zero, "floor" down (integers stay integers)."""
    if rounding_mode not in (None, "trunc", "floor"): raise RuntimeError(f"div rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
    a, b = self._broadcasted(x, reverse)
    if rounding_mode is not None and not a.dtype.is_float and not a.dtype.is_bool: return a.idiv(b) if rounding_mode == "trunc" else a.floordiv(b)
    if a.dtype.is_fp8: return a.float().div(b.float(), rounding_mode=rounding_mode).cast(a.dtype)  # one rounding, not two
    quotient = a._float_cast() * b._float_cast().reciprocal()
    return quotient if rounding_mode is None else quotient.trunc() if rounding_mode == "trunc" else quotient.floor()
  def idiv(self, x: Tensor | Scalar, reverse: bool = False) -> Tensor:
    """Integer division rounding toward zero (C's), for integer tensors."""
    a, b = self._broadcasted(x, reverse)
    if a.dtype.is_float or a.dtype.is_bool: raise TypeError(f"idiv needs integer tensors, got {a.dtype}")
    return a._binary("idiv", b)
  def floordiv(self, x: Tensor | Scalar, reverse: bool = False) -> Tensor:
    """Python's `//`: floor of the quotient (for floats, floor of the true quotient)."""
    a, b = self._broadcasted(x, reverse)
    if a.dtype.is_float: return (a / b).floor()
    q = a.idiv(b)
    return ((q * b != a) & ((a < 0) != (b < 0))).where(q - 1, q)
  def mod(self, x: Tensor | Scalar, reverse: bool = False) -> Tensor:
    """Python's `%`: the remainder has the sign of the divisor."""
    a, b = self._broadcasted(x, reverse)
    return a - a.floordiv(b) * b
  def __floordiv__(self, x): return self.floordiv(x)
  def __rfloordiv__(self, x): return self.floordiv(x, True)
  def __mod__(self, x): return self.mod(x)
  def __rmod__(self, x): return self.mod(x, True)
  def maximum(self, x: Tensor | Scalar) -> Tensor: return self._binary("max", x)
  def minimum(self, x: Tensor | Scalar) -> Tensor:
    """max of the inverted inputs, inverted back: negation for floats, bitwise not for integers (which cannot overflow)."""
    a, b = self._broadcasted(x)
    return -((-a).maximum(-b)) if a.dtype.is_float else ~((~a).maximum(~b))
  def pow(self, x: Tensor | Scalar, reverse: bool = False) -> Tensor:
    """Integer tensors raised to integer powers stay integers (wrapping as multiplication does)."""
    a, b = self._broadcasted(x, reverse)
    if a.dtype.is_float: return a._binary("pow", b)
    if a.dtype.is_bool: a, b = a.cast(dtypes.default_int), b.cast(dtypes.default_int)
    if isinstance(x, Tensor) or reverse: return a._int_pow(b)
    if not isinstance(x, int) or x < 0: raise RuntimeError(f"pow of {a.dtype} needs a float tensor or an int exponent >= 0, got {x!r}")
    return a._int_pow_const(x)
  def _int_pow_const(self, exponent: int) -> Tensor:
    result, square = None, self
    while exponent:
      if exponent & 1: result = square if result is None else result * square
      exponent >>= 1
      if exponent: square = square * square
    return self.ones_like() if result is None else result
  def _int_pow(self, exponent: Tensor) -> Tensor:
    """Square-and-multiply over the exponent's bits; a negative exponent gives 1/base truncated (0 unless base is +-1)."""
    result, square, bits = self.ones_like(), self, exponent.maximum(0)
    for _ in range(8 * exponent.dtype.itemsize - (0 if exponent.dtype.is_unsigned else 1)):
      result = (bits & 1).cast(dtypes.bool).where(result * square, result)
      square, bits = square * square, bits >> 1
    if exponent.dtype.is_unsigned: return result
    unit = (self == -1).where((exponent & 1).cast(dtypes.bool).where(-1, 1), (self == 1).cast(self.dtype))
    return (exponent < 0).where(unit, result)
  def where(self, x: Tensor | Scalar, y: Tensor | Scalar) -> Tensor:
    """x where self is true, else y; a Python scalar takes the other operand's dtype as in arithmetic."""
    if isinstance(x, Tensor): a, b = x._broadcasted(y)
    elif isinstance(y, Tensor): a, b = y._broadcasted(x, reverse=True)
    else: a, b = Tensor(LazyOp("const", dtypes.of_scalar(x), self.shape, self.device, arg=x))._broadcasted(y)
    shape = broadcast_shape(self.shape, a.shape)
    condition, a, b = self.cast(dtypes.bool)._expanded_to(shape), a._expanded_to(shape), b._expanded_to(shape)
    return Tensor(LazyOp("where", a.dtype, shape, a.device, (condition.lazydata, a.lazydata, b.lazydata)))
  def logical_not(self) -> Tensor: return self._binary("cmpne", True, dtype=dtypes.bool) if self.dtype is dtypes.bool else self == 0

  def xor(self, x: Tensor | int, reverse: bool = False) -> Tensor: return self._binary("xor", x, reverse)
  def bitwise_and(self, x: Tensor | int, reverse: bool = False) -> Tensor: return self._binary("and", x, reverse)
  def bitwise_or(self, x: Tensor | int, reverse: bool = False) -> Tensor: return self._binary("or", x, reverse)
  def lshift(self, x: Tensor | int, reverse: bool = False) -> Tensor: return self._shift("shl", x, reverse)
  def rshift(self, x: Tensor | int, reverse: bool = False) -> Tensor: return self._shift("shr", x, reverse)
  def _shift(self, op: str, x: Tensor | int, reverse: bool) -> Tensor:
    """Shifts of integers only; by the width or more, shl gives 0 and shr the sign (as shifting one bit at a time would)."""
    amount_dtype = x.dtype if isinstance(x, Tensor) else dtypes.of_scalar(x)
    if any(dt.is_float or dt.is_bool for dt in (self.dtype, amount_dtype)):
      raise RuntimeError(f"{op} needs integer operands, got {self.dtype} and {amount_dtype}")
    return self._binary(op, x, reverse)
  def __xor__(self, x): return self.xor(x)
  def __and__(self, x): return self.bitwise_and(x)
  def __or__(self, x): return self.bitwise_or(x)
  def __rxor__(self, x): return self.xor(x, True)
  def __rand__(self, x): return self.bitwise_and(x, True)
  def __ror__(self, x): return self.bitwise_or(x, True)
  def __lshift__(self, x): return self.lshift(x)
  def __rshift__(self, x): return self.rshift(x)
  def __rlshift__(self, x): return self.lshift(x, True)
  def __rrshift__(self, x): return self.rshift(x, True)

  def floor(self) -> Tensor:
    if not self.dtype.is_float: return self
    t = self.trunc()
    return (self < t).where(t - 1, t)
  def ceil(self) -> Tensor:
    if not self.dtype.is_float: return self
    t = self.trunc()
    return (self > t).where(t + 1, t)
  def round(self) -> Tensor:
    """Round half to even, as tinygrad and NumPy; integers and bools come back unchanged, as torch."""
    if not self.dtype.is_float: return self
    nearest = (self + 0.5).floor()
    tie = (self + 0.5) == nearest
    odd = (nearest * 0.5).floor() * 2 != nearest
    return (tie & odd).where(nearest - 1, nearest)
  def sign(self) -> Tensor:
    """-1, 0 or 1 (NaN stays NaN); its gradient is 0."""
    return (self < 0).where(-1, (self > 0).where(1, self * 0))
  def clip(self, min_=None, max_=None) -> Tensor:
    """Bounds are selected, not maxed, so the gradient at a bound is 1 (as torch); max_ wins where min_ > max_."""
    if min_ is None and max_ is None: raise RuntimeError("clip needs min_ or max_")
    x = self if min_ is None else (self < min_).where(min_, self)
    return x if max_ is None else (x > max_).where(max_, x)
  clamp = clip
  @float32_for_halves
  def tan(self) -> Tensor:
    """sin / cos; for float32 the quotient is taken in float64 and rounded once (sin and cos are each within 0.5 ulp)."""
    x = self._float_cast()
    return (x.sin().double() / x.cos().double()).cast(x.dtype) if x.dtype == dtypes.float32 else x.sin() / x.cos()
  def log10(self) -> Tensor: return self.log2() * math.log10(2)
  def lerp(self, end: Tensor, weight: Tensor | float) -> Tensor:
    if self.dtype is dtypes.uint8 and isinstance(weight, Tensor): return self._lerp_uint8(end, weight)
    return self + (end - self) * weight
  @templated
  def logaddexp(self, other: Tensor | float) -> Tensor:
    """max(a, b) + log1p(e^-|a - b|): nothing overflows, and a term too small to change 1 + e^-|a - b| still counts; where
    a == b (equal infinities too) it is max(a, b) + log(2)."""
    a, b = self._broadcasted(other)
    peak, difference = a.maximum(b), a - b
    distance = (difference < 0).where(-difference, difference)  # abs would pass a NaN input no gradient
    return (a == b).where(peak + math.log(2), peak + (-distance).exp()._log1p())
  def copysign(self, other: Tensor | float) -> Tensor:
    """|self| with the sign of other, -0.0 counting as negative (1/-0.0 is -inf). |self| is self * sign(self), so the gradient
    is +-1, 0 at self = 0 and NaN at a NaN self, as torch's."""
    a, b = self._broadcasted(other)
    magnitude = a * a.sign()
    return ((b < 0) | (b.reciprocal() < 0)).where(-magnitude, magnitude)
  def fmod(self, x: Tensor | float) -> Tensor:
    """C's fmod: the remainder has the sign of the dividend."""
    a, b = self._broadcasted(x)
    return a - (a / b).trunc() * b if a.dtype.is_float else a._binary("mod", b)
  def isnan(self) -> Tensor: return self != self
  def isinf(self, detect_positive: bool = True, detect_negative: bool = True) -> Tensor:
    return ((self == float("inf")) & detect_positive) | ((self == float("-inf")) & detect_negative)
  def isfinite(self) -> Tensor: return (self.isinf() | self.isnan()).logical_not()
  def isclose(self, other: Tensor | Scalar, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> Tensor:
    """|self - other| <= atol + rtol * |other| for finite pairs; infinities are close only to themselves, NaN to NaN
    only with equal_nan."""
    a, b = self._broadcasted(other)
    finite_close = a.isfinite() & b.isfinite() & ((a - b).abs() <= atol + rtol * b.abs())
    close = finite_close | ((a.isinf() | b.isinf()) & (a == b))
    return close | (a.isnan() & b.isnan()) if equal_nan else close
  def allclose(self, other: Tensor, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> bool:
    return bool(self.isclose(other, rtol, atol, equal_nan).all().item())
  def eq(self, x) -> Tensor: return self == x
  def ne(self, x) -> Tensor: return self != x
  def bitwise_xor(self, x: Tensor | int, reverse: bool = False) -> Tensor: return self.xor(x, reverse)
  def bitwise_not(self) -> Tensor: return ~self
  def __invert__(self) -> Tensor: return self.logical_not() if self.dtype is dtypes.bool else self.xor(-1)

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
  def _compare(self, op: str, x: Tensor | Scalar, reverse: bool = False) -> Tensor:
    """An int scalar beyond an integer tensor's dtype compares as the number it is, not wrapped into the dtype (as
    tinygrad's weak constants): a uint8 tensor is never below -10, so clip(-10, 10) leaves 6 as it is."""
    if isinstance(x, int) and not isinstance(x, bool) and self.dtype.is_int and not self.dtype.min <= x <= self.dtype.max:
      outcome = {"cmpeq": False, "cmpne": True, "cmplt": (x < self.dtype.min) == reverse}[op]
      return Tensor(LazyOp("const", dtypes.bool, self.shape, self.device, arg=outcome))
    return self._binary(op, x, reverse, dtype=dtypes.bool)
  def __lt__(self, x): return self._compare("cmplt", x)
  def __gt__(self, x): return self._compare("cmplt", x, True)
  def __ge__(self, x):
    """False where either side is NaN, as NumPy and torch (not (a < b) would be True there)."""
    if not isinstance(x, Tensor) and not self.dtype.is_float and not isinstance(x, float): return (self < x).logical_not()
    a, b = self._broadcasted(x)
    return (a > b) | (a == b) if a.dtype.is_float else (a < b).logical_not()
  def __le__(self, x):
    if not isinstance(x, Tensor) and not self.dtype.is_float and not isinstance(x, float): return (self > x).logical_not()
    a, b = self._broadcasted(x)
    return (a < b) | (a == b) if a.dtype.is_float else (a > b).logical_not()
  def __eq__(self, x): return self._compare("cmpeq", x)  # type: ignore[override]
  def __ne__(self, x): return self._compare("cmpne", x)  # type: ignore[override]
  __hash__ = object.__hash__

  # *** movement ***

  def _axis(self, axis: int, extra: bool = False) -> int:
    """`axis` as an index from 0 (with one more dim when `extra`, where unsqueeze inserts); a 0-d tensor takes 0 and -1."""
    dims = max(self.ndim + extra, 1)
    if not is_int(axis): raise TypeError(f"{calling_op()}: an axis must be an int, got {type(axis).__name__} {axis!r}")
    if not -dims <= axis < dims: raise IndexError(f"axis {axis} is out of range for shape {self.shape} (valid: {-dims} to {dims - 1})")
    return axis % dims

  def _movement(self, op: str, shape: tuple[int, ...], arg: object = None) -> Tensor:
    source, shape = self.lazydata, tuple(shape)
    if op == "reshape" and source.op == "reshape":  # a reshape of a reshape is one reshape of the first's source
      if ((source := source.srcs[0]).symbolic or source.shape) == shape: return Tensor(source)
    return Tensor(LazyOp(op, self.dtype, shape, self.device, (source,), arg))

  def reshape(self, shape, *args) -> Tensor:
    """None keeps that dim's size; one -1 takes what the others leave."""
    new_shape = tuple(self.shape[i] if d is None else d for i, d in enumerate(argfix(shape, *args)))
    if not all(is_int(d) or isinstance(d, Variable) for d in new_shape):
      raise TypeError(f"{calling_op()}: a shape holds ints, got {argfix(shape, *args)}")
    if is_symbolic(new_shape) or self.lazydata.symbolic: return self._reshape_symbolic(new_shape)
    if new_shape.count(-1) > 1: raise RuntimeError(f"reshape of {self.shape} to {new_shape}: only one dim can be -1")
    if -1 in new_shape:
      known = math.prod(d for d in new_shape if d != -1)
      new_shape = tuple(self.numel() // known if d == -1 and known else d for d in new_shape)
    if any(d < 0 for d in new_shape) or math.prod(new_shape) != self.numel():
      raise ValueError(f"cannot reshape {self.shape} ({self.numel()} elements) to {new_shape}")
    return self if new_shape == self.shape else self._movement("reshape", new_shape)

  def _reshape_symbolic(self, shape: tuple) -> Tensor:
    """A reshape that keeps each symbolic dim a dim of its own, regrouping only the static dims between them (a symbolic
    dim is stored at its largest size, so merging it with others would interleave its unused part with their elements)."""
    def runs(dims: tuple) -> tuple[list, list[int]]:
      symbols, products = [], [1]
      for d in dims:
        if isinstance(d, Variable): symbols, products = symbols + [d], products + [1]
        elif d != -1: products[-1] *= d
      return symbols, products
    (old_symbols, old_runs), (new_symbols, new_runs) = runs(self.shape), runs(shape)
    if -1 in shape and old_symbols == new_symbols and shape.count(-1) == 1:
      at = sum(isinstance(d, Variable) for d in shape[:shape.index(-1)])
      if new_runs[at] == 0 or old_runs[at] % new_runs[at]: raise ValueError(f"cannot reshape {self.shape} to {shape}")
      fill, new_runs[at] = old_runs[at] // new_runs[at], old_runs[at]
      shape = tuple(fill if d == -1 else d for d in shape)
    if old_symbols != new_symbols or old_runs != new_runs or -1 in shape:
      raise NotImplementedError(f"reshape of {self.shape} to {shape}: only the static dims around symbolic ones can regroup")
    return self if shape == self.shape else self._movement("reshape", shape)

  def _tagged(self, shape: tuple) -> Tensor:
    """This tensor, stored as it is, seen with symbolic `shape` (whose largest sizes are its shape)."""
    return Tensor(LazyOp("reshape", self.dtype, shape, self.device, (self.lazydata,)))

  def permute(self, order, *args) -> Tensor:
    order = tuple(self._axis(a) for a in argfix(order, *args))
    if sorted(order) != list(range(self.ndim)): raise RuntimeError(f"permute order {order} is not a permutation of the dims of {self.shape}")
    return self if order == tuple(range(self.ndim)) else self._movement("permute", tuple(self.shape[a] for a in order), order)

  def expand(self, shape, *args) -> Tensor:
    """Broadcast size-1 dims (and new leading ones) to `shape`; -1 or None keeps a dim's size."""
    wanted = argfix(shape, *args)
    base = self.reshape((1,) * (len(wanted) - self.ndim) + self.shape) if len(wanted) > self.ndim else self
    new_shape = tuple(b if n is None or n == -1 else n for b, n in zip(base.shape, wanted))
    if len(wanted) < self.ndim or any(not isinstance(n, int | Variable) or n < 0 or (b != n and b != 1) for b, n in zip(base.shape, new_shape)):
      raise ValueError(f"cannot expand {self.shape} to {wanted}")
    return base if new_shape == base.shape else base._movement("expand", new_shape)

  def pad(self, padding, mode: str = "constant", value: float = 0.0) -> Tensor:
    """Pad with `value` ("constant" mode) or "reflect", "replicate", "circular": one (before, after) or None per axis, or
    torch's flat (last_before, last_after, ...); a negative amount cuts."""
    if not isinstance(padding, Sequence) or isinstance(padding, str):
      raise TypeError(f"pad needs a sequence of (before, after) pairs or of ints, got {type(padding).__name__} {padding!r}")
    padding = tuple(padding)
    if padding and all(isinstance(p, int) for p in padding):
      if len(padding) % 2 or len(padding) > 2 * self.ndim: raise ValueError(f"flat padding {padding} does not fit shape {self.shape}")
      pairs = [(0, 0)] * (self.ndim - len(padding) // 2) + [tuple(padding[i:i + 2]) for i in range(len(padding) - 2, -1, -2)]
    else:
      if len(padding) != self.ndim: raise ValueError(f"padding {padding} needs one entry per axis of shape {self.shape}")
      if not all(p is None or (isinstance(p, Sequence) and len(p) == 2 and all(is_int(v) for v in p)) for p in padding):
        raise TypeError(f"pad needs None or a (before, after) pair of ints for each axis, got {padding}")
      pairs = [(0, 0) if p is None else tuple(p) for p in padding]
    if any(isinstance(n, Variable) and p != (0, 0) for n, p in zip(self.shape, pairs)):
      raise NotImplementedError(f"pad {padding} of symbolic axes of {self.shape}")
    if mode != "constant": return self._pad_mode(pairs, mode)
    x = self.shrink(tuple((-min(b, 0), n + min(a, 0)) for (b, a), n in zip(pairs, self.shape)))
    low, high = tuple(max(b, 0) for b, _ in pairs), tuple(max(a, 0) for _, a in pairs)
    if not any(low + high): return x
    padded = x._movement("pad", tuple(n + lo + hi for n, lo, hi in zip(x.shape, low, high)), (low, high))
    if value == 0: return padded
    inside = Tensor(LazyOp("const", dtypes.bool, x.shape, x.device, arg=True))._movement("pad", padded.shape, (low, high))
    return inside.where(padded, value)

  def shrink(self, arg) -> Tensor:
    """Keep [start, end) of each axis; None keeps the whole axis."""
    if len(arg) != self.ndim: raise ValueError(f"shrink {arg} needs one entry per axis of shape {self.shape}")
    ranges = tuple((0, n) if r is None else tuple(r) for r, n in zip(arg, self.shape))
    if self.lazydata.symbolic or is_symbolic(sum(ranges, ())): return self._shrink_symbolic(ranges)
    if any(not 0 <= s <= e <= n for (s, e), n in zip(ranges, self.shape)): raise ValueError(f"shrink {arg} is out of bounds for shape {self.shape}")
    if all(r == (0, n) for r, n in zip(ranges, self.shape)): return self
    return self._movement("shrink", tuple(e - s for s, e in ranges), (tuple(s for s, _ in ranges), tuple(e for _, e in ranges)))

  def _shrink_symbolic(self, ranges: tuple) -> Tensor:
    """shrink where a bound or a size is symbolic, an axis at a time: a symbolic end from a static start keeps a prefix
    (stored at the end's largest value, padded past the axis), a symbolic start gathers a window (see _window); a symbolic
    axis keeps all of itself or a static part its smallest size holds."""
    x = self
    for axis, (start, end) in enumerate(ranges):
      n = x.shape[axis]
      if (start, end) == (0, n): continue
      actual = [v.val if isinstance(v, Variable) else v for v in (start, end, n)]
      if not 0 <= actual[0] <= actual[1] <= actual[2]:
        raise ValueError(f"shrink {ranges} is out of bounds for shape {self.shape} ({start}..{end} of {n})")
      if isinstance(n, Variable) and (isinstance(start, Variable) or isinstance(end, Variable) or end > n.vmin):
        raise NotImplementedError(f"shrink {ranges} of symbolic shape {self.shape}: a symbolic axis shrinks only to a static part of its "
                                  "smallest size")
      if isinstance(start, Variable): x = x._window(axis, start, end - start)
      elif isinstance(end, Variable): x = x._prefix(axis, start, end - start)
      else: x = x._movement("shrink", x.shape[:axis] + (end - start,) + x.shape[axis + 1:], x._bounds_along(axis, start, end))
    return x

  def _bounds_along(self, axis: int, start: int, end: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A shrink's (starts, ends) keeping [start, end) of `axis` and all of the other axes, as they are stored."""
    return tuple(zip(*((start, end) if a == axis else (0, largest(n)) for a, n in enumerate(self.shape))))

  def _prefix(self, axis: int, start: int, size: Variable) -> Tensor:
    keep = min(self.shape[axis], start + size.vmax)
    shape = self.shape[:axis] + (size,) + self.shape[axis + 1:]
    bounds = self._bounds_along(axis, start, keep)
    if keep - start == size.vmax: return self._movement("shrink", shape, bounds)
    kept = self._movement("shrink", self.shape[:axis] + (keep - start,) + self.shape[axis + 1:], bounds)
    past = tuple((0, size.vmax - (keep - start)) if a == axis else (0, 0) for a in range(self.ndim))
    return kept._movement("pad", shape, tuple(zip(*past)))

  def _window(self, axis: int, start: Variable, size: Variable | int) -> Tensor:
    """self[..., start:start + size, ...] along `axis` for a symbolic start: a gather of the positions start + i (clamped
    into the axis), which remembers where it came from so that assign writes back into the window."""
    n = self.shape[axis]
    positions = (Tensor.arange(largest(size), device=self.device) + start).clip(0, n - 1)
    gathered = self._gather_dims([(axis, positions)])
    window = gathered._tagged(self.shape[:axis] + (size,) + self.shape[axis + 1:]) if isinstance(size, Variable) else gathered
    window._window_of = (self, axis, start, size)
    return window

  def _assign_window(self, x: Tensor) -> Tensor:
    """Write `x` into the window this tensor is (see _window), now: its source takes x at positions start + i."""
    source, axis, start, size = self._window_of
    n = source.shape[axis]
    positions = Tensor.arange(n, device=self.device)
    offsets = (positions - start).clip(0, largest(size) - 1)
    moved = x._gather_dims([(axis, offsets)]) if largest(size) > 1 else x.expand(source.shape[:axis] + (n,) + source.shape[axis + 1:])
    begin = start.tensor(self.device)
    inside = ((positions >= begin) & (positions < begin + size)).reshape(tuple(n if a == axis else 1 for a in range(source.ndim)))
    source.assign(inside.where(moved, source))
    if not is_view(source.lazydata): source.realize()
    self.lazydata = source._window(axis, start, size).lazydata
    return self

  def flip(self, axis, *args) -> Tensor:
    axes = tuple(self._axis(a) for a in argfix(axis, *args))
    if len(set(axes)) != len(axes): raise RuntimeError(f"flip axes {axes} of shape {self.shape} repeat an axis")
    if any(isinstance(self.shape[a], Variable) for a in axes): raise NotImplementedError(f"flip of symbolic axes {axes} of {self.shape}")
    return self._movement("flip", self.shape, axes) if axes else self

  def transpose(self, dim0: int = 1, dim1: int = 0) -> Tensor:
    order = list(range(self.ndim))
    order[self._axis(dim0)], order[self._axis(dim1)] = order[self._axis(dim1)], order[self._axis(dim0)]
    return self.permute(order)

  @property
  def T(self) -> Tensor: return self.transpose()
  def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    start, end = self._axis(start_dim), self._axis(end_dim)
    return self.reshape(self.shape[:start] + (math.prod(self.shape[start:end + 1]),) + self.shape[end + 1:])
  def unsqueeze(self, dim: int) -> Tensor:
    dim = self._axis(dim, extra=True)
    return self.reshape(self.shape[:dim] + (1,) + self.shape[dim:])
  def squeeze(self, dim: int | None = None) -> Tensor:
    if dim is None: return self.reshape(tuple(n for n in self.shape if n != 1))
    dim = self._axis(dim)
    return self if not self.ndim or self.shape[dim] != 1 else self.reshape(self.shape[:dim] + self.shape[dim + 1:])
  def view(self, shape, *args) -> Tensor: return self.reshape(shape, *args)
  def unfold(self, dim: int, size: int, step: int) -> Tensor:
    """Windows of `size` every `step` along dim: dim becomes the window count and a last dim of `size` is added."""
    dim = self._axis(dim)
    if size < 0 or step <= 0: raise RuntimeError(f"unfold needs size >= 0 and step > 0, got size={size} and step={step}")
    return self._windows(dim, size, step, 1).permute(*range(dim), dim + 1, *range(dim + 2, self.ndim + 1), dim)
  def sequential(self, ll: list) -> Tensor:
    """Apply each callable of `ll` in turn."""
    x = self
    for layer in ll: x = layer(x)
    return x
  def replace(self, x: Tensor) -> Tensor:
    """Point this tensor at `x`'s data (same shape; the dtype may differ)."""
    if x.shape != self.shape: raise ValueError(f"replace of {self.shape} by {x.shape}")
    self.lazydata = x.lazydata
    return self
  def to_(self, device: str | None) -> Tensor: return self.replace(self.to(device))
  def roll(self, shifts: int | tuple[int, ...], dims: int | tuple[int, ...] | None = None) -> Tensor:
    """Shift elements along dims, wrapping around; without dims, along the flattened tensor."""
    if dims is None: return self.flatten().roll(shifts, 0).reshape(self.shape)
    shifts, dims = ((v,) if is_int(v) else tuple(v) if isinstance(v, Sequence) else (v,) for v in (shifts, dims))
    if not all(is_int(v) for v in shifts): raise TypeError(f"roll shifts must be an int or a sequence of ints, got {shifts}")
    dims = tuple(self._axis(d) for d in dims)
    if len(shifts) != len(dims): raise RuntimeError(f"roll needs one shift per dim, got shifts {shifts} and dims {dims}")
    x = self
    for shift, dim in zip(shifts, dims):
      n = self.shape[dim]
      if 0 in self.shape or not shift % n: continue
      cut, lead = n - shift % n, (slice(None),) * dim
      x = x[lead + (slice(cut, None),)].cat(x[lead + (slice(0, cut),)], dim=dim)
    return x
  def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal over dims dim1 and dim2 as a last dim: above the main one by `offset`, below it when negative."""
    offset, dim1, dim2 = int_arg(offset, "offset"), self._axis(dim1), self._axis(dim2)
    if dim1 == dim2: raise RuntimeError(f"diagonal needs two different dims, got {dim1} and {dim2} of shape {self.shape}")
    x = self.permute(*[i for i in range(self.ndim) if i not in (dim1, dim2)], dim1, dim2)
    row, col = min(max(-offset, 0), x.shape[-2]), min(max(offset, 0), x.shape[-1])
    n, lead = min(x.shape[-2] - row, x.shape[-1] - col), (None,) * (x.ndim - 2)
    square = x.shrink(lead + ((row, row + n), (col, col + n)))
    return square.flatten(-2).pad(lead + ((0, n),)).unflatten(-1, (n, n + 1))[..., 0]
  def diag(self) -> Tensor:
    if self.ndim != 1: raise ValueError(f"diag needs a vector, got {self.shape}")
    n = self.shape[0]
    return self.unsqueeze(1).pad(((0, 0), (0, n))).flatten()[:n * n].reshape(n, n)
  def repeat_interleave(self, repeats: int, dim: int | None = None) -> Tensor:
    x, repeats = self.flatten() if dim is None else self, int_arg(repeats, "repeats", 0)
    dim = 0 if dim is None else x._axis(dim)
    return x.unsqueeze(dim + 1).expand(x.shape[:dim + 1] + (repeats,) + x.shape[dim + 1:]).flatten(dim, dim + 1)
  def pad_to(self, shape, *args, value: Scalar = 0) -> Tensor:
    if not all(n is None or is_int(n) for n in argfix(shape, *args)): raise TypeError(f"pad_to needs a shape of ints or None, got {shape!r}")
    if len(argfix(shape, *args)) != self.ndim: raise ValueError(f"pad_to {argfix(shape, *args)} of a {self.ndim}-d tensor: one size per dim")
    return self.pad(tuple((0, n - s) if n is not None else None for s, n in zip(self.shape, argfix(shape, *args))), value=value)
  def shrink_to(self, shape, *args) -> Tensor:
    if not all(n is None or is_int(n) for n in argfix(shape, *args)): raise TypeError(f"shrink_to needs a shape of ints or None, got {shape!r}")
    return self.shrink(tuple((0, n) if n is not None else None for n in argfix(shape, *args)))
  def meshgrid(self, *others: Tensor, indexing: str = "ij") -> tuple[Tensor, ...]:
    """Coordinate grids from 0-d or 1-D tensors: grid k varies along dim k ("ij"), or with the first two dims swapped ("xy")."""
    if indexing not in ("ij", "xy"): raise RuntimeError(f"meshgrid indexing must be 'ij' or 'xy', got {indexing!r}")
    tensors = (self, *(tensor_arg(t, "each tensor") for t in others))
    if len(tensors) == 1: return tensors
    dims = (1, 0, *range(2, len(tensors))) if indexing == "xy" else tuple(range(len(tensors)))
    shape = tuple(tensors[dims.index(d)].numel() for d in range(len(tensors)))
    return tuple(t.reshape(tuple(-1 if d == at else 1 for d in range(len(tensors)))).expand(shape) for t, at in zip(tensors, dims))
  def unflatten(self, dim: int, sizes: tuple[int, ...]) -> Tensor:
    dim = self._axis(dim)
    if not isinstance(sizes, Sequence) or isinstance(sizes, str): raise TypeError(f"unflatten sizes must be a sequence of ints, got {sizes!r}")
    return self.reshape(self.shape[:dim] + tuple(sizes) + self.shape[dim + 1:])

  def repeat(self, repeats, *args) -> Tensor:
    repeats = argfix(repeats, *args)
    if len(repeats) < self.ndim: raise ValueError(f"repeat {repeats} needs at least {self.ndim} entries for shape {self.shape}")
    base = self.reshape((1,) * (len(repeats) - self.ndim) + self.shape)
    spread = base.reshape(sum(((1, n) for n in base.shape), ())).expand(sum(((r, n) for r, n in zip(repeats, base.shape)), ()))
    return spread.reshape(tuple(r * n for r, n in zip(repeats, base.shape)))

  def cat(self, *others: Tensor, dim: int = 0) -> Tensor:
    tensors, dim = (self, *(tensor_arg(t, "each tensor") for t in others)), self._axis(dim)
    for t in others:
      if t.ndim != self.ndim or any(a != b for i, (a, b) in enumerate(zip(self.shape, t.shape)) if i != dim):
        raise ValueError(f"cat along dim {dim}: shape {t.shape} does not match {self.shape}")
    total, offset, result = sum(t.shape[dim] for t in tensors), 0, None
    for t in tensors:
      padding = [(0, 0)] * self.ndim
      padding[dim] = (offset, total - offset - t.shape[dim])
      placed = t.pad(padding)  # selected, not added, into place: adding would drop -0.0's sign and fails on bool
      inside = Tensor.full(t.shape, True, dtype=dtypes.bool, device=t.device).pad(padding)
      result = placed if result is None else inside.where(placed, result)
      offset += t.shape[dim]
    return result

  def stack(self, *others: Tensor, dim: int = 0) -> Tensor:
    """Join same-shaped tensors along a new dim: Tensor.stack(a, b) or Tensor.stack((a, b))."""
    tensors = argfix(self, *others)
    if not all(isinstance(t, Tensor) for t in tensors) or any(t.shape != tensors[0].shape for t in tensors):
      raise ValueError(f"stack needs tensors of one shape, got {[t.shape if isinstance(t, Tensor) else type(t).__name__ for t in tensors]}")
    dim = tensors[0]._axis(dim, extra=True)
    return Tensor.cat(*(t.unsqueeze(dim) for t in tensors), dim=dim)

  def split(self, sizes: int | list[int], dim: int = 0) -> tuple[Tensor, ...]:
    dim = self._axis(dim)
    n = self.shape[dim]
    if is_int(sizes): sizes = [min(sizes, n - i) for i in range(0, n, int_arg(sizes, "sizes", 1))]
    elif isinstance(sizes, Sequence) and all(is_int(v) and v >= 0 for v in sizes): sizes = list(sizes)
    else: raise TypeError(f"split sizes must be a positive int or a sequence of non-negative ints, got {sizes!r}")
    if sum(sizes) != n: raise ValueError(f"split sizes {sizes} do not add up to {n}")
    bounds = [sum(sizes[:i]) for i in range(len(sizes) + 1)]
    return tuple(self.shrink(tuple((bounds[i], bounds[i + 1]) if a == dim else None for a in range(self.ndim))) for i in range(len(sizes)))

  def chunk(self, chunks: int, dim: int = 0) -> list[Tensor]:
    int_arg(chunks, "chunks", 1)
    return list(self.split(math.ceil(self.shape[self._axis(dim)] / chunks), dim))

  def contiguous(self) -> Tensor: return Tensor(LazyOp("contiguous", self.dtype, self.shape, self.device, (self.lazydata,)))

  # *** reductions ***

  def _reduce_axes(self, axis: int | Sequence[int] | None) -> tuple[int, ...]:
    """The sorted axes a reduction over `axis` (None: all) folds; a 0-d tensor takes axis 0 or -1 and folds none."""
    axes = tuple(range(self.ndim)) if axis is None else tuple(self._axis(a) for a in (axis if isinstance(axis, tuple | list) else (axis,)))
    if len(set(axes)) != len(axes): raise RuntimeError(f"reduction axes {axis} of shape {self.shape} repeat an axis")
    return tuple(sorted(axes)) if self.ndim else ()

  def _reduce(self, kind: str, axis: int | Sequence[int] | None, keepdim: bool) -> Tensor:
    if self.dtype.is_fp8: return self.float()._reduce(kind, axis, keepdim).cast(self.dtype)
    if self.dtype is dtypes.bool and kind == "add": kind = "max"  # a bool sum is an any, as bool + is or
    axes = self._reduce_axes(axis)
    if self.lazydata.symbolic and any(isinstance(self.shape[a], Variable) for a in axes):
      return self._without_unused(kind, axes)._reduce(kind, axis, keepdim)
    folded = tuple(a for a in axes if self.shape[a] != 1)
    kept = tuple(1 if i in folded else n for i, n in enumerate(self.shape))
    reduced = Tensor(LazyOp("reduce", self.dtype, kept, self.device, (self.lazydata,), (kind, folded))) if folded else self
    return reduced.reshape(tuple(1 if i in axes else n for i, n in enumerate(self.shape)) if keepdim else
                           tuple(n for i, n in enumerate(self.shape) if i not in axes))

  def _without_unused(self, kind: str, axes: tuple[int, ...]) -> Tensor:
    """This tensor with the reduction's identity where a symbolic axis among `axes` is past its bound value (data kept
    only for storage), so that the reduction folds its bound part alone; stored with those axes at their largest size."""
    inside = None
    for a in axes:
      if isinstance(n := self.shape[a], Variable):
        valid = (Tensor.arange(n.vmax, device=self.device) < n.tensor(self.device)).reshape(tuple(n.vmax if i == a else 1 for i in range(self.ndim)))
        inside = valid if inside is None else inside & valid
    identity = {"add": 0, "mul": 1, "max": self.dtype.min}[kind]
    stored = self._tagged(tuple(largest(n) if a in axes else n for a, n in enumerate(self.shape)))
    return inside.where(stored, identity).cast(self.dtype)

  def _inverse(self) -> Tensor:
    """An order-reversing map that cannot overflow: negation for floats, bitwise not for ints (logical not for bool)."""
    return -self if self.dtype.is_float else ~self

  def sum(self, axis: int | Sequence[int] | None = None, keepdim: bool = False, dtype: DType | str | None = None) -> Tensor:
    """Accumulates in `dtype`, else in sum_dtype (bool and small ints in 32 bits; float16 and bfloat16 in float32, cast back)."""
    total = self.cast(sum_dtype(self.dtype) if dtype is None else to_dtype(dtype))._reduce("add", axis, keepdim)
    return total.cast(self.dtype) if dtype is None and (self.dtype in (dtypes.float16, dtypes.bfloat16) or self.dtype.is_fp8) else total
  def prod(self, axis: int | Sequence[int] | None = None, keepdim: bool = False, dtype: DType | str | None = None) -> Tensor:
    return self.cast(self.dtype if dtype is None else to_dtype(dtype))._reduce("mul", axis, keepdim)
  def max(self, axis: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor: return self._reduce("max", axis, keepdim)
  def min(self, axis: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    return self._inverse().max(axis, keepdim)._inverse()
  def any(self, axis: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor: return self.bool().max(axis, keepdim)
  def all(self, axis: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor: return self.bool().prod(axis, keepdim)

  def _reduced_count(self, axis: int | Sequence[int] | None) -> int: return math.prod(self.shape[a] for a in self._reduce_axes(axis))
  def mean(self, axis: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    """In the input's float dtype (float32 for others); nan over no elements."""
    total = self.cast(sum_dtype(self.dtype)).sum(axis, keepdim)
    return total.div(self._reduced_count(axis)).cast(self.dtype if self.dtype.is_float else dtypes.float32)
  def var(self, axis: int | Sequence[int] | None = None, keepdim: bool = False, correction: int = 1) -> Tensor:
    squares = (self - self.mean(axis, keepdim=True)).square()
    total = squares.cast(sum_dtype(squares.dtype)).sum(axis, keepdim)
    return total.div(max(self._reduced_count(axis) - correction, 0)).cast(self.dtype if self.dtype.is_float else dtypes.float32)
  def std(self, axis: int | Sequence[int] | None = None, keepdim: bool = False, correction: int = 1) -> Tensor:
    return self.var(axis, keepdim, correction).sqrt()
  @templated
  def logsumexp(self, axis: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    """log(sum(e^(x - peak))) + peak with peak the max (0 where it is infinite: all -inf gives -inf and any +inf gives +inf)."""
    peak = self.max(axis, keepdim=True).detach()
    peak = peak.isinf().where(0, peak)
    total = (self - peak).exp().sum(axis, keepdim).log()
    return total + (peak if keepdim else peak.reshape(total.shape))

  def argmax(self, axis: int | None = None, keepdim: bool = False) -> Tensor:
    """The first index of the maximum (of the flattened tensor when axis is None), as int32; NaN counts as the maximum."""
    if axis is None: return self.flatten().argmax(0)
    axis = self._axis(axis)
    if self.ndim == 0: return Tensor.zeros(dtype=dtypes.int32, device=self.device)
    if (n := self.shape[axis]) == 0: raise IndexError(f"argmax over axis {axis} of shape {self.shape}: the axis is empty")
    countdown = (n - Tensor.arange(n, device=self.device)).reshape((n,) + (1,) * (self.ndim - axis - 1))
    hits = self == self.max(axis, keepdim=True)
    if self.dtype.is_float: hits = hits | self.isnan()
    return (n - hits.where(countdown, 0).max(axis, keepdim)).cast(dtypes.int32)
  def argmin(self, axis: int | None = None, keepdim: bool = False) -> Tensor: return self._inverse().argmax(axis, keepdim)
  def var_mean(self, axis=None, keepdim: bool = False, correction: int = 1) -> tuple[Tensor, Tensor]:
    return self.var(axis, keepdim, correction), self.mean(axis, keepdim)
  def std_mean(self, axis=None, keepdim: bool = False, correction: int = 1) -> tuple[Tensor, Tensor]:
    return self.std(axis, keepdim, correction), self.mean(axis, keepdim)
  def softmin(self, axis: int = -1, dtype: DType | str | None = None) -> Tensor: return (-self).softmax(axis, dtype)
  def normalize(self, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """self divided by its p-norm along dim (p = 0: the count of nonzeros), at least eps."""
    norm = (self != 0).sum(dim, keepdim=True) if p == 0 else self.abs().pow(p).sum(dim, keepdim=True).pow(1 / p)
    return self / norm.maximum(eps)

  def _shifted(self, axis: int, dtype: DType | str | None) -> Tensor:
    """self minus its max along axis (a constant for the gradient), in `dtype` when given."""
    shifted = self - self.max(axis, keepdim=True).detach()
    return shifted if dtype is None else shifted.cast(to_dtype(dtype))

  @templated
  def softmax(self, axis: int = -1, dtype: DType | str | None = None) -> Tensor:
    e = self._shifted(axis, dtype).exp()
    y = e / e.sum(axis, keepdim=True)
    return ruled(y, (self, y), softmax_gradient, (self._axis(axis),))

  @templated
  def log_softmax(self, axis: int = -1, dtype: DType | str | None = None) -> Tensor:
    shifted = self._shifted(axis, dtype)
    y = shifted - shifted.exp().sum(axis, keepdim=True).log()
    return ruled(y, (self, y), log_softmax_gradient, (self._axis(axis),))

  def rsqrt(self) -> Tensor: return self.sqrt().reciprocal()
  @templated
  def layernorm(self, axis: int = -1, eps: float = 1e-5) -> Tensor:
    centered = self - self.mean(axis, keepdim=True)
    rstd = (centered * centered).mean(axis, keepdim=True).add(eps).rsqrt()
    return normalized(self, centered, rstd, axis)

  # *** linear algebra ***

  @templated
  def dot(self, w: Tensor, dtype: DType | str | None = None) -> Tensor:
    """Sum of products over self's last dim and w's second-to-last (its only one when 1-D), accumulated as `sum` does
    (or in `dtype`); the result has the operands' common dtype, or `dtype`."""
    w = tensor_arg(w, "the other operand")
    if self.ndim == 0 or w.ndim == 0: raise RuntimeError(f"dot needs at least 1-D tensors, got {self.shape} and {w.shape}")
    axis = -min(w.ndim, 2)
    if self.shape[-1] != w.shape[axis]: raise RuntimeError(f"cannot matmul {self.shape} by {w.shape}: {self.shape[-1]} != {w.shape[axis]}")
    middle = (1,) * min(self.ndim - 1, w.ndim - 1, 1)
    x = self.reshape(self.shape[:-1] + middle + self.shape[-1:])
    w = w.reshape(w.shape[:-2] + middle + w.shape[axis:]).transpose(-1, axis)
    return (x * w).sum(-1, dtype=dtype).cast(least_upper_dtype(x.dtype, w.dtype) if dtype is None else to_dtype(dtype))

  def matmul(self, x: Tensor, reverse: bool = False, dtype: DType | str | None = None) -> Tensor:
    x = tensor_arg(x, "the other operand")
    return x.dot(self, dtype=dtype) if reverse else self.dot(x, dtype=dtype)
  def __matmul__(self, w: Tensor) -> Tensor: return self.matmul(w)
  def __rmatmul__(self, w: Tensor) -> Tensor: return self.matmul(w, True)
  @templated
  def linear(self, weight: Tensor, bias: Tensor | None = None, dtype: DType | str | None = None) -> Tensor:
    """self @ weight + bias (self * weight for a 1-D weight); `dtype` as dot's."""
    weight, bias = tensor_arg(weight, "weight"), bias if bias is None else tensor_arg(bias, "bias")
    x = self * weight if weight.ndim == 1 else self.dot(weight, dtype=dtype)
    return x if bias is None else x + bias

  def one_hot(self, num_classes: int) -> Tensor:
    if self.dtype.is_float or self.dtype.is_bool: raise RuntimeError(f"one_hot needs integer class indices, got {self.dtype}")
    if num_classes < 0: raise ValueError(f"one_hot needs num_classes >= 0, got {num_classes}")
    return (self.unsqueeze(-1) == Tensor.arange(num_classes, device=self.device)).where(1, 0)

  @templated
  def sparse_categorical_crossentropy(self, Y: Tensor, ignore_index: int = -1, label_smoothing: float = 0.0,
                                      reduction: str = "mean") -> Tensor:
    """Cross-entropy of logits `self` (..., classes) against integer labels `Y` (...)."""
    if tensor_arg(Y, "Y").shape != self.shape[:-1]: raise ValueError(f"labels of shape {Y.shape} do not match logits of shape {self.shape}")
    log_probs, keep = self.log_softmax(), Y != ignore_index
    target = Y.one_hot(self.shape[-1]).cast(log_probs.dtype) * keep.unsqueeze(-1).cast(log_probs.dtype)
    smoothed = (1 - label_smoothing) * (log_probs * target).sum(-1) + label_smoothing * log_probs.mean(-1) * keep.cast(log_probs.dtype)
    if reduction == "none": return -smoothed
    if reduction == "sum": return -smoothed.sum()
    if reduction != "mean": raise ValueError(f"reduction must be 'none', 'sum' or 'mean', got {reduction!r}")
    return -smoothed.sum() / keep.sum().cast(log_probs.dtype)

  @staticmethod
  def from_bytes(stored: np.ndarray, dtype: DType, device: str | None = None) -> Tensor:
    """A tensor over the raw element storage `stored` (for bfloat16, the uint16 bit patterns)."""
    if not isinstance(stored, np.ndarray): raise TypeError(f"from_bytes needs a NumPy array, got {type(stored).__name__}")
    device = Device.canonicalize(device)
    buffer = Buffer(device, dtype, stored.shape)
    buffer.copyin(memoryview(np.ascontiguousarray(stored).reshape(-1).view(np.uint8)))
    return Tensor(LazyOp("buffer", dtype, stored.shape, device, arg=buffer))

  @staticmethod
  def from_blob(ptr: int, shape: tuple[int, ...], dtype: DType | None = None, device: str | None = None, owner: object = None) -> Tensor:
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
    return Tensor(LazyOp("buffer", dtype, shape, device, arg=Buffer(device, dtype, shape, raw)))

  def to(self, device: str | None) -> Tensor:
    device = Device.canonicalize(device)
    if device == self.device: return self
    if is_disk(device): return Tensor.empty(*self.shape, dtype=self.dtype, device=device).assign(self)  # into the file
    moved = self._copy_to(device)
    if self.grad is not None: moved.grad = self.grad.to(device)
    return moved

  def _copy_to(self, device: str) -> Tensor: return Tensor(LazyOp("copy", self.dtype, self.shape, device, (self.lazydata,), device))

  def assign(self, x: Tensor | Scalar | list | tuple) -> Tensor:
    """Store `x` (broadcast to this shape, of this dtype) into this tensor's buffer when it is realized: the Tensor keeps its buffer, so
    everything reading that buffer (views, kernels a TinyJit captured) sees the new data. A tensor without a buffer takes `x`'s graph.
    Into a DISK tensor, `x` (from any device) is written to the file at once."""
    if not isinstance(x, Tensor): x = Tensor(x, device=self.device, dtype=self.dtype)
    if x.lazydata is self.lazydata: return self
    if x.dtype != self.dtype: raise RuntimeError(f"assign of {x.dtype} to a tensor of {self.dtype} {self.shape}")
    if is_disk(self.device):
      if not Device[self.device].writable: raise PermissionError(f"assign to a tensor on {self.device}: the file is not writable")
      if x.device != self.device: x = x._copy_to(self.device)
    if x.device != self.device: raise RuntimeError(f"assign from {x.device} to a tensor on {self.device}")
    x = x._broadcast_to(self.shape)
    if getattr(self, "_window_of", None) is not None: return self._assign_window(x)
    if self.lazydata.op in VIEW_OPS: return self._assign_view(x)
    target = self.lazydata.srcs[0] if self.lazydata.op == "assign" else self.lazydata
    self.lazydata = LazyOp("assign", self.dtype, self.shape, self.device, (target, x.lazydata)) if target.is_realized else x.lazydata
    return self.realize() if is_disk(self.device) else self  # a file is written at once

  def __iadd__(self, x) -> Tensor: return self.assign(self + x)
  def __isub__(self, x) -> Tensor: return self.assign(self - x)
  def __imul__(self, x) -> Tensor: return self.assign(self * x)
  def __itruediv__(self, x) -> Tensor: return self.assign(self / x)
  def __ifloordiv__(self, x) -> Tensor: return self.assign(self // x)
  def __imod__(self, x) -> Tensor: return self.assign(self % x)
  def __ipow__(self, x) -> Tensor: return self.assign(self ** x)
  def __imatmul__(self, x) -> Tensor: return self.assign(self @ x)
  def __iand__(self, x) -> Tensor: return self.assign(self & x)
  def __ior__(self, x) -> Tensor: return self.assign(self | x)
  def __ixor__(self, x) -> Tensor: return self.assign(self ^ x)
  def __ilshift__(self, x) -> Tensor: return self.assign(self << x)
  def __irshift__(self, x) -> Tensor: return self.assign(self >> x)

  def schedule(self, *others: Tensor) -> list:
    """The kernel launches that realizing this tensor (and `others`) would run, without running them."""
    from pytc.realize import schedule
    nodes = [t.lazydata for t in (self, *others) if not t.lazydata.is_realized]
    return list(schedule(nodes)[0].launches) if nodes else []
