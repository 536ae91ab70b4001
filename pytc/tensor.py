"""The lazy Tensor: tinygrad's API; operations record a graph that runs when realized."""
from __future__ import annotations

import math
import weakref
from typing import ClassVar

import numpy as np

from pytc.device import Buffer, Device
from pytc.dtype import DType, dtypes, least_upper_dtype
from pytc.functional import Functional
from pytc.gradient import gradients
from pytc.graph import LazyOp, is_view
from pytc.helpers import per_dim
from pytc.indexing import Indexing
from pytc.realize import realize
from pytc.template import templated

Scalar = int | float | bool


def argfix(*x) -> tuple:
  """tinygrad's calling convention: f(1, 2) and f((1, 2)) mean the same."""
  return tuple(x[0]) if len(x) == 1 and isinstance(x[0], tuple | list) else tuple(x)


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
  rank = max(len(s) for s in shapes)
  padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
  result = []
  for dims in zip(*padded):
    sizes = {d for d in dims if d != 1}
    if len(sizes) > 1: raise ValueError(f"cannot broadcast shapes {' and '.join(str(tuple(s)) for s in shapes)}")
    result.append(sizes.pop() if sizes else 1)
  return tuple(result)


class Tensor(Indexing, Functional):
  """A lazy, immutable multi-dimensional array on a device."""
  no_grad: ClassVar[bool] = False
  training: ClassVar[bool] = False
  _trainable: ClassVar[weakref.WeakValueDictionary] = weakref.WeakValueDictionary()  # id -> tensor with requires_grad
  _seed: ClassVar[int] = 0
  _rng_calls: ClassVar[int] = 0

  def __init__(self, data: LazyOp | Scalar | list | tuple | np.ndarray, device: str | None = None,
               dtype: DType | None = None, requires_grad: bool | None = None):
    self.grad: Tensor | None = None
    self.requires_grad = requires_grad
    self.lazydata = data if isinstance(data, LazyOp) else self._lazydata(data, Device.canonicalize(device), dtype)

  @staticmethod
  def _lazydata(data, device: str, dtype: DType | None) -> LazyOp:
    if isinstance(data, Scalar): return LazyOp("const", dtype or dtypes.of_scalar(data), (), device, arg=data)
    if not isinstance(data, list | tuple | np.ndarray):
      raise TypeError(f"cannot make a Tensor from {type(data).__name__}")
    array = np.asarray(data)
    if array.dtype.kind not in "biuf": raise TypeError(f"cannot make a Tensor from elements of NumPy dtype {array.dtype}")
    if dtype is None and isinstance(data, np.ndarray): dtype = dtypes.from_numpy(array.dtype)
    elif dtype is None:  # Python lists: tinygrad's defaults
      dtype = dtypes.bool if array.dtype.kind == "b" else dtypes.default_int if array.dtype.kind in "iu" else dtypes.default_float
    return LazyOp("buffer", dtype, tuple(array.shape), device, arg=Buffer(device, dtype, tuple(array.shape)).copyin(array))

  @property
  def requires_grad(self) -> bool | None: return self._requires_grad
  @requires_grad.setter
  def requires_grad(self, value: bool | None) -> None:
    self._requires_grad = value
    if value: Tensor._trainable[id(self)] = self

  # *** properties ***

  @property
  def shape(self) -> tuple[int, ...]: return self.lazydata.shape
  @property
  def dtype(self) -> DType: return self.lazydata.dtype
  @property
  def device(self) -> str: return self.lazydata.device
  @property
  def ndim(self) -> int: return len(self.lazydata.shape)
  def numel(self) -> int: return math.prod(self.shape)
  def __repr__(self) -> str: return f"<Tensor {self.shape} {self.dtype} on {self.device}>"

  # *** creation ***

  @staticmethod
  def empty(*shape, dtype: DType | None = None, device: str | None = None) -> Tensor:
    """A realized tensor whose contents are unspecified."""
    shape, device, dtype = argfix(*shape), Device.canonicalize(device), dtype or dtypes.default_float
    return Tensor(LazyOp("buffer", dtype, shape, device, arg=Buffer(device, dtype, shape)))

  @staticmethod
  def full(shape, fill_value: Scalar, dtype: DType | None = None, device: str | None = None, **kwargs) -> Tensor:
    shape = argfix(shape)
    if any(not isinstance(n, int) or n < 0 for n in shape): raise ValueError(f"bad shape {shape}")
    return Tensor(LazyOp("const", dtype or dtypes.of_scalar(fill_value), shape, Device.canonicalize(device), arg=fill_value), **kwargs)

  @staticmethod
  def zeros(*shape, **kwargs) -> Tensor: return Tensor.full(argfix(*shape), 0.0 if kwargs.get("dtype") is None else 0, **kwargs)
  @staticmethod
  def ones(*shape, **kwargs) -> Tensor: return Tensor.full(argfix(*shape), 1.0 if kwargs.get("dtype") is None else 1, **kwargs)
  def full_like(self, fill_value: Scalar, **kwargs) -> Tensor:
    return Tensor.full(self.shape, fill_value, **{"dtype": self.dtype, "device": self.device, **kwargs})
  def zeros_like(self, **kwargs) -> Tensor: return self.full_like(0, **kwargs)
  def ones_like(self, **kwargs) -> Tensor: return self.full_like(1, **kwargs)

  @staticmethod
  def arange(start: int | float, stop: int | float | None = None, step: int | float = 1, dtype: DType | None = None,
             device: str | None = None) -> Tensor:
    if stop is None: start, stop = 0, start
    if step == 0: raise ValueError("arange step cannot be 0")
    dtype = dtype or (dtypes.default_float if any(isinstance(v, float) for v in (start, stop, step)) else dtypes.default_int)
    count = max(0, math.ceil((stop - start) / step))
    index = Tensor(LazyOp("iota", dtype, (count,), Device.canonicalize(device), arg=0))
    return index * step + start if (step, start) != (1, 0) else index

  @staticmethod
  def linspace(start: float, stop: float, steps: int, dtype: DType | None = None, device: str | None = None) -> Tensor:
    if steps < 0: raise ValueError(f"linspace needs steps >= 0, got {steps}")
    step = (stop - start) / (steps - 1) if steps > 1 else 0.0
    return (Tensor.arange(steps, dtype=dtypes.default_float, device=device) * step + start).cast(dtype or dtypes.default_float)

  @staticmethod
  def eye(n: int, m: int | None = None, dtype: DType | None = None, device: str | None = None) -> Tensor:
    rows, cols = Tensor.arange(n, device=device).reshape(n, 1), Tensor.arange(n if m is None else m, device=device).reshape(1, -1)
    return (rows == cols).cast(dtype or dtypes.default_float)

  @staticmethod
  def manual_seed(seed: int = 0) -> None:
    """Make the random tensors that follow reproducible."""
    Tensor._seed, Tensor._rng_calls = seed, 0

  @staticmethod
  def rand(*shape, dtype: DType | None = None, device: str | None = None, **kwargs) -> Tensor:
    """Uniform in [0, 1): a counter-based hash (murmur3's finalizer) of each element's index and a per-call key,
    computed in the graph; the key is a buffer, so every call shares one compiled schedule."""
    shape, device = argfix(*shape), Device.canonicalize(device)
    Tensor._rng_calls += 1
    key = (Tensor._seed * 0x9E3779B9 + Tensor._rng_calls * 0x632BE5AB) & 0xFFFFFFFF
    bits = Tensor.arange(math.prod(shape), dtype=dtypes.uint32, device=device) * 0x9E3779B1
    bits = bits ^ Tensor(np.array([key], np.uint32), device=device).expand(bits.shape)
    for shift, factor in ((16, 0x85EBCA6B), (13, 0xC2B2AE35)): bits = (bits ^ (bits >> shift)) * factor
    bits = bits ^ (bits >> 16)
    return Tensor((bits >> 8).cast(dtypes.float32).mul(1.0 / (1 << 24)).reshape(shape).cast(dtype or dtypes.default_float).lazydata, **kwargs)

  @staticmethod
  def randn(*shape, dtype: DType | None = None, device: str | None = None, **kwargs) -> Tensor:
    """Standard normal, by Box-Muller from two uniforms."""
    u1, u2 = Tensor.rand(*shape, device=device), Tensor.rand(*shape, device=device)
    normal = (-2.0 * (1.0 - u1).log()).sqrt() * (2 * math.pi * u2).cos()
    return Tensor(normal.cast(dtype or dtypes.default_float).lazydata, **kwargs)

  @staticmethod
  def randint(*shape, low: int = 0, high: int = 10, dtype: DType | None = None, **kwargs) -> Tensor:
    if high <= low: raise ValueError(f"randint needs low < high, got {low} and {high}")
    return (Tensor.rand(*shape, **kwargs) * (high - low)).cast(dtypes.int32).add(low).cast(dtype or dtypes.int32)

  @staticmethod
  def uniform(*shape, low: float = 0.0, high: float = 1.0, **kwargs) -> Tensor:
    requires_grad = kwargs.pop("requires_grad", None)
    return Tensor((Tensor.rand(*shape, **kwargs) * (high - low) + low).lazydata, requires_grad=requires_grad)

  @staticmethod
  def normal(*shape, mean: float = 0.0, std: float = 1.0, **kwargs) -> Tensor:
    requires_grad = kwargs.pop("requires_grad", None)
    return Tensor((Tensor.randn(*shape, **kwargs) * std + mean).lazydata, requires_grad=requires_grad)

  def empty_like(self, **kwargs) -> Tensor: return Tensor.empty(*self.shape, **{"dtype": self.dtype, "device": self.device, **kwargs})
  def rand_like(self, **kwargs) -> Tensor: return Tensor.rand(*self.shape, **{"dtype": self.dtype, "device": self.device, **kwargs})
  def randn_like(self, **kwargs) -> Tensor: return Tensor.randn(*self.shape, **{"dtype": self.dtype, "device": self.device, **kwargs})

  @staticmethod
  def scaled_uniform(*shape, **kwargs) -> Tensor:
    return Tensor.uniform(*shape, low=-1.0, high=1.0, **kwargs) * (math.prod(argfix(*shape)) ** -0.5)

  @staticmethod
  def glorot_uniform(*shape, **kwargs) -> Tensor:
    shape = argfix(*shape)
    bound = math.sqrt(6 / (shape[0] + math.prod(shape[1:])))
    return Tensor.uniform(*shape, low=-bound, high=bound, **kwargs)

  @staticmethod
  def kaiming_normal(*shape, a: float = 0.01, **kwargs) -> Tensor:
    std = math.sqrt(2.0 / (1 + a ** 2)) / math.sqrt(math.prod(argfix(*shape)[1:]))
    return Tensor.normal(*shape, mean=0.0, std=std, **kwargs)

  @staticmethod
  def kaiming_uniform(*shape, a: float = 0.01, **kwargs) -> Tensor:
    bound = math.sqrt(3.0) * math.sqrt(2.0 / (1 + a ** 2)) / math.sqrt(math.prod(argfix(*shape)[1:]))
    return Tensor.uniform(*shape, low=-bound, high=bound, **kwargs)

  # *** realization ***

  def realize(self, *others: Tensor) -> Tensor:
    """Compute this tensor (and `others`) now, in one schedule. As in tinygrad, a view of realized data (movement
    ops only) stays a view: realizing it alone would only copy."""
    tensors = [t for t in (self, *others) if not is_view(t.lazydata)]
    for tensor, node in zip(tensors, realize([t.lazydata for t in tensors])): tensor.lazydata = node
    return self

  def backward(self, gradient: Tensor | None = None) -> Tensor:
    """Accumulate d(self)/d(t) into `t.grad` for every tensor `t` with requires_grad that self depends on."""
    if Tensor.no_grad: raise RuntimeError("backward() while Tensor.no_grad is set")
    if gradient is None and self.shape != (): raise ValueError(f"backward() without a gradient needs a scalar, not shape {self.shape}")
    seed = gradient if gradient is not None else Tensor(LazyOp("const", self.dtype, (), self.device, arg=1.0))
    trainable = [t for t in list(Tensor._trainable.values()) if t.requires_grad]
    grads = gradients(self, seed, [t.lazydata for t in trainable])
    for t in trainable:
      if (g := grads.get(id(t.lazydata))) is not None: t.grad = g if t.grad is None else t.grad + g
    return self

  def gradient(self, *targets: Tensor, gradient: Tensor | None = None) -> list[Tensor]:
    """d(self)/d(target) for each target, without touching `.grad`."""
    if gradient is None and self.shape != (): raise ValueError(f"gradient() without a gradient needs a scalar, not shape {self.shape}")
    seed = gradient if gradient is not None else Tensor(LazyOp("const", self.dtype, (), self.device, arg=1.0))
    grads = gradients(self, seed, [t.lazydata for t in targets])
    missing = [t.shape for t in targets if id(t.lazydata) not in grads]
    if missing: raise ValueError(f"the result does not depend on the targets of shapes {missing}")
    return [grads[id(t.lazydata)] for t in targets]

  def detach(self) -> Tensor: return Tensor(LazyOp("detach", self.dtype, self.shape, self.device, (self.lazydata,)))

  def numpy(self) -> np.ndarray:
    if self.lazydata.op == "const": return np.full(self.shape, self.lazydata.arg, dtype=np.dtype(self.dtype.numpy))
    source = self.contiguous() if is_view(self.lazydata) and not self.lazydata.is_realized else self
    return source.realize().lazydata.arg.numpy()

  def tolist(self) -> Scalar | list: return self.numpy().tolist()
  def item(self) -> Scalar:
    if self.numel() != 1: raise ValueError(f"item() needs a tensor with one element, this one has shape {self.shape}")
    return self.numpy().reshape(()).item()

  # *** graph building ***

  def _unary(self, op: str, dtype: DType | None = None) -> Tensor:
    return Tensor(LazyOp(op, dtype or self.dtype, self.shape, self.device, (self.lazydata,)))

  def _broadcasted(self, other: Tensor | Scalar, reverse: bool = False) -> tuple[Tensor, Tensor]:
    if isinstance(other, Tensor):
      if other.device != self.device: raise ValueError(f"tensors on different devices: {self.device} and {other.device}")
      dtype = least_upper_dtype(self.dtype, other.dtype)
      shape = broadcast_shape(self.shape, other.shape)
      pair = (self.cast(dtype)._broadcast_to(shape), other.cast(dtype)._broadcast_to(shape))
    elif isinstance(other, Scalar):
      # a Python scalar takes a float tensor's dtype, and an int tensor's when it is an int; else the lattice decides
      keeps = self.dtype.is_float or (not self.dtype.is_bool and isinstance(other, int) and not isinstance(other, bool))
      dtype = self.dtype if keeps else least_upper_dtype(self.dtype, dtypes.of_scalar(other))
      pair = (self.cast(dtype), Tensor(LazyOp("const", dtype, self.shape, self.device, arg=other)))
    else: raise TypeError(f"unsupported operand {type(other).__name__} for a Tensor op")
    return pair[::-1] if reverse else pair

  def _broadcast_to(self, shape: tuple[int, ...]) -> Tensor:
    if self.shape == shape: return self
    return self.reshape((1,) * (len(shape) - self.ndim) + self.shape).expand(shape)

  def _binary(self, op: str, other: Tensor | Scalar, reverse: bool = False, dtype: DType | None = None) -> Tensor:
    x, y = self._broadcasted(other, reverse)
    return Tensor(LazyOp(op, dtype or x.dtype, x.shape, x.device, (x.lazydata, y.lazydata)))

  def cast(self, dtype: DType) -> Tensor:
    if not isinstance(dtype, DType): raise TypeError(f"cast needs a pytc dtype (dtypes.float32, ...), got {dtype!r}")
    return self if dtype == self.dtype else self._unary("cast", dtype)
  def bitcast(self, dtype: DType) -> Tensor:
    if dtype.itemsize != self.dtype.itemsize: raise ValueError(f"bitcast from {self.dtype} to {dtype} changes the item size")
    return self if dtype == self.dtype else self._unary("bitcast", dtype)
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
  def clone(self) -> Tensor: return self.contiguous()
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
  def tanh(self) -> Tensor: return 2.0 * (2.0 * self._float_cast()).sigmoid() - 1.0
  def gelu(self) -> Tensor:
    x = self._float_cast()
    return 0.5 * x * (1 + (math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)).tanh())
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
    a, b = self._broadcasted(x)
    return -((-a).maximum(-b))
  def pow(self, x: Tensor | Scalar, reverse: bool = False) -> Tensor:
    a, b = self._broadcasted(x, reverse)
    return a._float_cast()._binary("pow", b._float_cast())
  def where(self, x: Tensor | Scalar, y: Tensor | Scalar) -> Tensor:
    if not isinstance(x, Tensor): x = Tensor(LazyOp("const", dtypes.of_scalar(x), self.shape, self.device, arg=x))
    a, b = x._broadcasted(y)
    shape = broadcast_shape(self.shape, a.shape)
    condition, a, b = self.cast(dtypes.bool)._broadcast_to(shape), a._broadcast_to(shape), b._broadcast_to(shape)
    return Tensor(LazyOp("where", a.dtype, shape, a.device, (condition.lazydata, a.lazydata, b.lazydata)))
  def logical_not(self) -> Tensor: return self._binary("cmpne", True, dtype=dtypes.bool) if self.dtype is dtypes.bool else self == 0

  def xor(self, x: Tensor | int, reverse: bool = False) -> Tensor: return self._binary("xor", x, reverse)
  def bitwise_and(self, x: Tensor | int, reverse: bool = False) -> Tensor: return self._binary("and", x, reverse)
  def bitwise_or(self, x: Tensor | int, reverse: bool = False) -> Tensor: return self._binary("or", x, reverse)
  def lshift(self, x: int) -> Tensor: return self._binary("shl", x)
  def rshift(self, x: int) -> Tensor: return self._binary("shr", x)
  def __xor__(self, x): return self.xor(x)
  def __and__(self, x): return self.bitwise_and(x)
  def __or__(self, x): return self.bitwise_or(x)
  def __lshift__(self, x): return self.lshift(x)
  def __rshift__(self, x): return self.rshift(x)

  def floor(self) -> Tensor:
    t = self.trunc()
    return (self < t).where(t - 1, t)
  def ceil(self) -> Tensor:
    t = self.trunc()
    return (self > t).where(t + 1, t)
  def round(self) -> Tensor:
    """Round half to even, as tinygrad and NumPy."""
    nearest = (self + 0.5).floor()
    tie = (self + 0.5) == nearest
    odd = (nearest * 0.5).floor() * 2 != nearest
    return (tie & odd).where(nearest - 1, nearest)
  def sign(self) -> Tensor: return (self > 0).cast(self.dtype) - (self < 0).cast(self.dtype)
  def clip(self, min_=None, max_=None) -> Tensor:
    if min_ is None and max_ is None: raise ValueError("clip needs min_ or max_")
    x = self if min_ is None else self.maximum(min_)
    return x if max_ is None else x.minimum(max_)
  clamp = clip
  def tan(self) -> Tensor: return self.sin() / self.cos()
  def leaky_relu(self, neg_slope: float = 0.01) -> Tensor: return (self < 0).where(self * neg_slope, self)
  def silu(self) -> Tensor: return self * self.sigmoid()
  swish = silu
  def elu(self, alpha: float = 1.0) -> Tensor: return self.relu() - alpha * (1 - self.exp()).relu()
  def softplus(self, beta: float = 1.0) -> Tensor: return (1 + (self * beta).exp()).log() * (1 / beta)
  def mish(self) -> Tensor: return self * self.softplus().tanh()
  def sinh(self) -> Tensor: return (self.exp() - (-self).exp()) / 2
  def cosh(self) -> Tensor: return (self.exp() + (-self).exp()) / 2
  def asinh(self) -> Tensor: return (self + (self.square() + 1).sqrt()).log()
  def acosh(self) -> Tensor: return (self + (self.square() - 1).sqrt()).log()
  def atanh(self) -> Tensor: return ((1 + self) / (1 - self)).log() / 2
  def log10(self) -> Tensor: return self.log2() * math.log10(2)
  def erf(self) -> Tensor:
    """Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7)."""
    x = self._float_cast()
    t = 1.0 / (1.0 + 0.3275911 * x.abs())
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return x.sign() * (1 - poly * (-x.square()).exp())
  def relu6(self) -> Tensor: return self.relu() - (self - 6).relu()
  def hardtanh(self, min_val: float = -1, max_val: float = 1) -> Tensor: return self.clip(min_val, max_val)
  def hardsigmoid(self, alpha: float = 1 / 6, beta: float = 0.5) -> Tensor: return (alpha * self + beta).relu() - (alpha * self + beta - 1).relu()
  def hardswish(self) -> Tensor: return self * (self + 3).relu6() * (1 / 6)
  def selu(self, alpha: float = 1.67326, gamma: float = 1.0507) -> Tensor: return gamma * (self >= 0).where(self, alpha * (self.exp() - 1))
  def celu(self, alpha: float = 1.0) -> Tensor: return self.maximum(0) + (alpha * ((self / alpha).exp() - 1)).minimum(0)
  def softsign(self) -> Tensor: return self / (1 + self.abs())
  def logsigmoid(self) -> Tensor: return -(-self).softplus()
  def quick_gelu(self) -> Tensor: return self * (self * 1.702).sigmoid()
  def lerp(self, end: Tensor, weight: Tensor | float) -> Tensor: return self + (end - self) * weight
  def logaddexp(self, other: Tensor | float) -> Tensor:
    a, b = self._broadcasted(other)
    peak = a.maximum(b)
    return peak + ((a - peak).exp() + (b - peak).exp()).log()
  def copysign(self, other: Tensor | float) -> Tensor:
    a, b = self._broadcasted(other)
    return (b < 0).where(-a.abs(), a.abs())
  def fmod(self, x: Tensor | float) -> Tensor:
    """C's fmod: the remainder has the sign of the dividend."""
    a, b = self._broadcasted(x)
    return a - (a / b).trunc() * b if a.dtype.is_float else a._binary("mod", b)
  def isnan(self) -> Tensor: return self != self
  def isinf(self, detect_positive: bool = True, detect_negative: bool = True) -> Tensor:
    return ((self == float("inf")) & detect_positive) | ((self == float("-inf")) & detect_negative)
  def isfinite(self) -> Tensor: return (self.isinf() | self.isnan()).logical_not()
  def isclose(self, other: Tensor, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> Tensor:
    close = (self - other).abs() <= atol + rtol * other.abs()
    return close | (self.isnan() & other.isnan()) if equal_nan else close
  def allclose(self, other: Tensor, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> bool:
    return bool(self.isclose(other, rtol, atol, equal_nan).all().item())
  def eq(self, x) -> Tensor: return self == x
  def ne(self, x) -> Tensor: return self != x
  def bitwise_xor(self, x) -> Tensor: return self.xor(x)
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
  def __lt__(self, x): return self._binary("cmplt", x, dtype=dtypes.bool)
  def __gt__(self, x): return self._binary("cmplt", x, True, dtype=dtypes.bool)
  def __ge__(self, x): return (self < x).logical_not()
  def __le__(self, x): return (self > x).logical_not()
  def __eq__(self, x): return self._binary("cmpeq", x, dtype=dtypes.bool)  # type: ignore[override]
  def __ne__(self, x): return self._binary("cmpne", x, dtype=dtypes.bool)  # type: ignore[override]
  __hash__ = object.__hash__

  # *** movement ***

  def _axis(self, axis: int) -> int:
    if not -max(self.ndim, 1) <= axis < max(self.ndim, 1): raise IndexError(f"axis {axis} is out of range for shape {self.shape}")
    return axis % max(self.ndim, 1)

  def _movement(self, op: str, shape: tuple[int, ...], arg: object = None) -> Tensor:
    return Tensor(LazyOp(op, self.dtype, tuple(shape), self.device, (self.lazydata,), arg))

  def reshape(self, shape, *args) -> Tensor:
    new_shape = argfix(shape, *args)
    if new_shape.count(-1) > 1: raise ValueError(f"reshape to {new_shape}: only one dim can be -1")
    if -1 in new_shape:
      known = math.prod(d for d in new_shape if d != -1)
      new_shape = tuple(self.numel() // known if d == -1 and known else d for d in new_shape)
    if any(d < 0 for d in new_shape) or math.prod(new_shape) != self.numel():
      raise ValueError(f"cannot reshape {self.shape} ({self.numel()} elements) to {new_shape}")
    return self if new_shape == self.shape else self._movement("reshape", new_shape)

  def permute(self, order, *args) -> Tensor:
    order = tuple(self._axis(a) for a in argfix(order, *args))
    if sorted(order) != list(range(self.ndim)): raise ValueError(f"permute order {order} is not a permutation of {self.ndim} dims")
    return self if order == tuple(range(self.ndim)) else self._movement("permute", tuple(self.shape[a] for a in order), order)

  def expand(self, shape, *args) -> Tensor:
    new_shape = argfix(shape, *args)
    base = self.reshape((1,) * (len(new_shape) - self.ndim) + self.shape) if len(new_shape) > self.ndim else self
    new_shape = tuple(b if n == -1 else n for b, n in zip(base.shape, new_shape))
    if len(new_shape) != base.ndim or any(b != n and b != 1 for b, n in zip(base.shape, new_shape)):
      raise ValueError(f"cannot expand {self.shape} to {argfix(shape, *args)}")
    return base if new_shape == base.shape else base._movement("expand", new_shape)

  def pad(self, padding, value: float = 0.0) -> Tensor:
    """Pad with `value`: one (before, after) or None per axis, or torch's flat (last_before, last_after, ...)."""
    padding = tuple(padding)
    if padding and all(isinstance(p, int) for p in padding):
      if len(padding) % 2 or len(padding) > 2 * self.ndim: raise ValueError(f"flat padding {padding} does not fit shape {self.shape}")
      pairs = [(0, 0)] * (self.ndim - len(padding) // 2) + [tuple(padding[i:i + 2]) for i in range(len(padding) - 2, -1, -2)]
    else:
      if len(padding) != self.ndim: raise ValueError(f"padding {padding} needs one entry per axis of shape {self.shape}")
      pairs = [(0, 0) if p is None else tuple(p) for p in padding]
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
    if any(not 0 <= s <= e <= n for (s, e), n in zip(ranges, self.shape)): raise ValueError(f"shrink {arg} is out of bounds for shape {self.shape}")
    if all(r == (0, n) for r, n in zip(ranges, self.shape)): return self
    return self._movement("shrink", tuple(e - s for s, e in ranges), (tuple(s for s, _ in ranges), tuple(e for _, e in ranges)))

  def flip(self, axis, *args) -> Tensor:
    axes = tuple(self._axis(a) for a in argfix(axis, *args))
    if len(set(axes)) != len(axes): raise ValueError(f"flip axes {axes} repeat an axis")
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
    dim = dim + self.ndim + 1 if dim < 0 else dim
    return self.reshape(self.shape[:dim] + (1,) + self.shape[dim:])
  def squeeze(self, dim: int | None = None) -> Tensor:
    if dim is None: return self.reshape(tuple(n for n in self.shape if n != 1))
    return self if self.shape[self._axis(dim)] != 1 else self.reshape(self.shape[:self._axis(dim)] + self.shape[self._axis(dim) + 1:])
  def view(self, shape, *args) -> Tensor: return self.reshape(shape, *args)
  def unfold(self, dim: int, size: int, step: int) -> Tensor:
    """Windows of `size` every `step` along dim: dim becomes the window count and a last dim of `size` is added."""
    dim = self._axis(dim)
    return self._windows(dim, size, step, 1).permute(*range(dim), dim + 1, *range(dim + 2, self.ndim + 1), dim)
  def sequential(self, layers) -> Tensor:
    x = self
    for layer in layers: x = layer(x)
    return x
  def replace(self, x: Tensor) -> Tensor:
    """Point this tensor at `x`'s data (same shape; the dtype may differ)."""
    if x.shape != self.shape: raise ValueError(f"replace of {self.shape} by {x.shape}")
    self.lazydata = x.lazydata
    return self
  def to_(self, device: str | None) -> Tensor: return self.replace(self.to(device))
  def roll(self, shifts: int | tuple[int, ...], dims: int | tuple[int, ...]) -> Tensor:
    x = self
    for shift, dim in zip(per_dim(shifts, 1), per_dim(dims, 1)):
      dim = self._axis(dim)
      n = self.shape[dim]
      if not n or not shift % n: continue
      cut, lead = n - shift % n, (slice(None),) * dim
      x = x[lead + (slice(cut, None),)].cat(x[lead + (slice(0, cut),)], dim=dim)
    return x
  def diagonal(self) -> Tensor:
    if self.ndim != 2 or self.shape[0] != self.shape[1]: raise ValueError(f"diagonal needs a square matrix, got {self.shape}")
    n = self.shape[0]
    return self.flatten().pad(((0, n),)).reshape(n, n + 1)[:, 0]
  def diag(self) -> Tensor:
    if self.ndim != 1: raise ValueError(f"diag needs a vector, got {self.shape}")
    n = self.shape[0]
    return self.unsqueeze(1).pad(((0, 0), (0, n))).flatten()[:n * n].reshape(n, n)
  def repeat_interleave(self, repeats: int, dim: int | None = None) -> Tensor:
    x = self.flatten() if dim is None else self
    dim = 0 if dim is None else x._axis(dim)
    return x.unsqueeze(dim + 1).expand(x.shape[:dim + 1] + (repeats,) + x.shape[dim + 1:]).flatten(dim, dim + 1)
  def pad_to(self, shape, *args) -> Tensor:
    return self.pad(tuple((0, n - s) if n is not None else None for s, n in zip(self.shape, argfix(shape, *args))))
  def shrink_to(self, shape, *args) -> Tensor:
    return self.shrink(tuple((0, n) if n is not None else None for n in argfix(shape, *args)))
  @staticmethod
  def meshgrid(*tensors: Tensor, indexing: str = "ij") -> list[Tensor]:
    if indexing not in ("ij", "xy"): raise ValueError(f"indexing must be 'ij' or 'xy', got {indexing!r}")
    vectors = [t.flatten() for t in tensors]
    shape = tuple(t.shape[0] for t in vectors)
    grids = [t.reshape(tuple(-1 if i == k else 1 for k in range(len(vectors)))).expand(shape) for i, t in enumerate(vectors)]
    return [g.transpose(0, 1) for g in grids] if indexing == "xy" and len(grids) > 1 else grids
  def unflatten(self, dim: int, sizes: tuple[int, ...]) -> Tensor:
    dim = self._axis(dim)
    return self.reshape(self.shape[:dim] + tuple(sizes) + self.shape[dim + 1:])

  def repeat(self, repeats, *args) -> Tensor:
    repeats = argfix(repeats, *args)
    if len(repeats) < self.ndim: raise ValueError(f"repeat {repeats} needs at least {self.ndim} entries for shape {self.shape}")
    base = self.reshape((1,) * (len(repeats) - self.ndim) + self.shape)
    spread = base.reshape(sum(((1, n) for n in base.shape), ())).expand(sum(((r, n) for r, n in zip(repeats, base.shape)), ()))
    return spread.reshape(tuple(r * n for r, n in zip(repeats, base.shape)))

  def cat(self, *others: Tensor, dim: int = 0) -> Tensor:
    tensors, dim = (self, *others), self._axis(dim)
    for t in others:
      if t.ndim != self.ndim or any(a != b for i, (a, b) in enumerate(zip(self.shape, t.shape)) if i != dim):
        raise ValueError(f"cat along dim {dim}: shape {t.shape} does not match {self.shape}")
    total, offset, result = sum(t.shape[dim] for t in tensors), 0, None
    for t in tensors:
      padding = [(0, 0)] * self.ndim
      padding[dim] = (offset, total - offset - t.shape[dim])
      placed = t.pad(padding)
      result = placed if result is None else result + placed
      offset += t.shape[dim]
    return result

  @staticmethod
  def stack(tensor: Tensor, *others: Tensor, dim: int = 0) -> Tensor:
    dim = dim + tensor.ndim + 1 if dim < 0 else dim
    return Tensor.cat(*(t.unsqueeze(dim) for t in (tensor, *others)), dim=dim)

  def split(self, sizes: int | list[int], dim: int = 0) -> tuple[Tensor, ...]:
    dim = self._axis(dim)
    n = self.shape[dim]
    sizes = [min(sizes, n - i) for i in range(0, n, sizes)] if isinstance(sizes, int) else list(sizes)
    if sum(sizes) != n: raise ValueError(f"split sizes {sizes} do not add up to {n}")
    bounds = [sum(sizes[:i]) for i in range(len(sizes) + 1)]
    return tuple(self.shrink(tuple((bounds[i], bounds[i + 1]) if a == dim else None for a in range(self.ndim))) for i in range(len(sizes)))

  def chunk(self, chunks: int, dim: int = 0) -> list[Tensor]:
    if chunks <= 0: raise ValueError(f"chunk needs chunks > 0, got {chunks}")
    return list(self.split(math.ceil(self.shape[self._axis(dim)] / chunks), dim))

  def contiguous(self) -> Tensor: return Tensor(LazyOp("contiguous", self.dtype, self.shape, self.device, (self.lazydata,)))

  # *** reductions ***

  def _reduce(self, kind: str, axis: int | tuple[int, ...] | None, keepdim: bool) -> Tensor:
    axes = tuple(range(self.ndim)) if axis is None else tuple(sorted({self._axis(a) for a in (axis if isinstance(axis, tuple | list) else (axis,))}))
    kept = tuple(1 if i in axes else n for i, n in enumerate(self.shape))
    reduced = Tensor(LazyOp("reduce", self.dtype, kept, self.device, (self.lazydata,), (kind, axes))) if axes else self
    return reduced if keepdim else reduced.reshape(tuple(n for i, n in enumerate(self.shape) if i not in axes))

  def _accumulate_dtype(self) -> DType:
    if self.dtype is dtypes.bool or (not self.dtype.is_float and self.dtype.itemsize < 4):
      return dtypes.uint32 if self.dtype.is_unsigned else dtypes.int32
    return self.dtype

  def sum(self, axis=None, keepdim: bool = False) -> Tensor: return self.cast(self._accumulate_dtype())._reduce("add", axis, keepdim)
  def prod(self, axis=None, keepdim: bool = False) -> Tensor: return self.cast(self._accumulate_dtype())._reduce("mul", axis, keepdim)
  def max(self, axis=None, keepdim: bool = False) -> Tensor: return self._reduce("max", axis, keepdim)
  def min(self, axis=None, keepdim: bool = False) -> Tensor: return -((-self).max(axis, keepdim))
  def mean(self, axis=None, keepdim: bool = False) -> Tensor:
    total = self._float_cast().sum(axis, keepdim)
    return total / max(1, self.numel() // max(1, total.numel()))

  def var(self, axis=None, keepdim: bool = False, correction: int = 1) -> Tensor:
    squares = (self - self.mean(axis, keepdim=True)).square().sum(axis, keepdim)
    count = self.numel() // max(1, squares.numel()) if self.numel() else 0
    return squares / max(0, count - correction)
  def std(self, axis=None, keepdim: bool = False, correction: int = 1) -> Tensor: return self.var(axis, keepdim, correction).sqrt()
  def any(self, axis=None, keepdim: bool = False) -> Tensor: return self.cast(dtypes.bool).cast(dtypes.int32).max(axis, keepdim).cast(dtypes.bool)
  def all(self, axis=None, keepdim: bool = False) -> Tensor: return self.logical_not().any(axis, keepdim).logical_not()
  def logsumexp(self, axis=None, keepdim: bool = False) -> Tensor:
    peak = self.max(axis, keepdim=True)
    total = (self - peak).exp().sum(axis, keepdim=True).log() + peak
    return total if keepdim else total.reshape(self.max(axis).shape)

  def argmax(self, axis: int | None = None, keepdim: bool = False) -> Tensor:
    """The first index of the maximum (of the flattened tensor when axis is None), as int32."""
    if axis is None: return self.flatten().argmax(0)
    axis = self._axis(axis)
    n = self.shape[axis]
    countdown = Tensor.arange(n, 0, -1, device=self.device).reshape((n,) + (1,) * (self.ndim - axis - 1))
    hits = (self == self.max(axis, keepdim=True)).where(countdown, 0)
    return (n - hits.max(axis, keepdim)).cast(dtypes.int32)
  def argmin(self, axis: int | None = None, keepdim: bool = False) -> Tensor: return (-self).argmax(axis, keepdim)
  def var_mean(self, axis=None, keepdim: bool = False, correction: int = 1) -> tuple[Tensor, Tensor]:
    return self.var(axis, keepdim, correction), self.mean(axis, keepdim)
  def std_mean(self, axis=None, keepdim: bool = False, correction: int = 1) -> tuple[Tensor, Tensor]:
    return self.std(axis, keepdim, correction), self.mean(axis, keepdim)
  def softmin(self, axis: int = -1) -> Tensor: return (-self).softmax(axis)
  def normalize(self, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    return self / self.abs().pow(p).sum(dim, keepdim=True).pow(1 / p).maximum(eps)

  @templated
  def softmax(self, axis: int = -1) -> Tensor:
    shifted = self - self.max(axis, keepdim=True)
    e = shifted.exp()
    return e / e.sum(axis, keepdim=True)

  @templated
  def log_softmax(self, axis: int = -1) -> Tensor:
    shifted = self - self.max(axis, keepdim=True)
    return shifted - shifted.exp().sum(axis, keepdim=True).log()

  def rsqrt(self) -> Tensor: return self.reciprocal().sqrt()
  @templated
  def layernorm(self, axis: int = -1, eps: float = 1e-5) -> Tensor:
    centered = self - self.mean(axis, keepdim=True)
    return centered * (centered * centered).mean(axis, keepdim=True).add(eps).rsqrt()

  # *** linear algebra ***

  @templated
  def dot(self, w: Tensor) -> Tensor:
    if self.ndim == 0 or w.ndim == 0: raise ValueError(f"dot needs at least 1-D tensors, got {self.shape} and {w.shape}")
    axis = -min(w.ndim, 2)
    if self.shape[-1] != w.shape[axis]: raise ValueError(f"cannot matmul {self.shape} by {w.shape}: {self.shape[-1]} != {w.shape[axis]}")
    middle = (1,) * min(self.ndim - 1, w.ndim - 1, 1)
    x = self.reshape(self.shape[:-1] + middle + self.shape[-1:])
    w = w.reshape(w.shape[:-2] + middle + w.shape[axis:]).transpose(-1, axis)
    return (x * w).sum(-1)

  def matmul(self, w: Tensor) -> Tensor: return self.dot(w)
  def __matmul__(self, w: Tensor) -> Tensor: return self.dot(w)
  def linear(self, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    x = self * weight if weight.ndim == 1 else self.dot(weight)
    return x if bias is None else x + bias

  def one_hot(self, num_classes: int) -> Tensor:
    if self.dtype.is_float: raise TypeError(f"one_hot needs integer class indices, got {self.dtype}")
    return (self.unsqueeze(-1) == Tensor.arange(num_classes, device=self.device)).where(1, 0)

  def sparse_categorical_crossentropy(self, Y: Tensor, ignore_index: int = -1, label_smoothing: float = 0.0,
                                      reduction: str = "mean") -> Tensor:
    """Cross-entropy of logits `self` (..., classes) against integer labels `Y` (...)."""
    if Y.shape != self.shape[:-1]: raise ValueError(f"labels of shape {Y.shape} do not match logits of shape {self.shape}")
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
    device = Device.canonicalize(device)
    buffer = Buffer(device, dtype, stored.shape)
    buffer.raw.copyin(memoryview(np.ascontiguousarray(stored).reshape(-1).view(np.uint8)))
    return Tensor(LazyOp("buffer", dtype, stored.shape, device, arg=buffer))

  @staticmethod
  def from_blob(ptr: int, shape: tuple[int, ...], dtype: DType | None = None, device: str | None = None, owner: object = None) -> Tensor:
    """A tensor over host memory at address `ptr`, without a copy (CPU devices only). The memory must stay valid and
    unchanged while the tensor is in use: pass the object that owns it (say, the NumPy array) as `owner` to keep it alive."""
    device, dtype, shape = Device.canonicalize(device), dtype or dtypes.default_float, tuple(shape)
    if not device.startswith("CPU"): raise ValueError(f"from_blob wraps host memory, so only CPU devices, not {device}")
    if not ptr: raise ValueError("from_blob needs a non-null pointer")
    raw = Device[device].wrap(ptr, math.prod(shape) * dtype.itemsize, owner)
    return Tensor(LazyOp("buffer", dtype, shape, device, arg=Buffer(device, dtype, shape, raw)))

  def to(self, device: str | None) -> Tensor:
    device = Device.canonicalize(device)
    return self if device == self.device else Tensor(LazyOp("copy", self.dtype, self.shape, device, (self.lazydata,), device))

  def assign(self, x: Tensor) -> Tensor:
    """Replace this tensor's data with `x` (same shape and dtype), keeping the Tensor object."""
    if x.shape != self.shape or x.dtype != self.dtype:
      raise ValueError(f"assign of {x.shape} {x.dtype} to a tensor of {self.shape} {self.dtype}")
    self.lazydata = x.lazydata
    return self

  def schedule(self, *others: Tensor) -> list:
    """The kernel launches that realizing this tensor (and `others`) would run, without running them."""
    from pytc.realize import schedule
    nodes = [t.lazydata for t in (self, *others) if not t.lazydata.is_realized]
    return list(schedule(nodes)[0].launches) if nodes else []
