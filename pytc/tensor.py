"""The lazy Tensor: tinygrad's API; operations record a graph that runs when realized. This module holds the core:
construction, properties, realization and data access, autograd, dtypes and devices, the ops that add graph nodes, and the
operators; the methods built on them are mixed in by group (creation.py, random_tensors.py, movement.py, indexing.py,
elementwise.py, activations.py, reduce.py, processing.py, nn_functional.py)."""
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
from pytc.activations import Activations
from pytc.arguments import calling_op, is_int
from pytc.creation import Creation, array_from_python
from pytc.device import Buffer, Device, is_disk
from pytc.dtype import DType, Scalar, dtypes, is_weak, least_upper_dtype, strong_dtype, to_dtype, weak_scalar_dtype, wrapped
from pytc.elementwise import Elementwise
from pytc.fp8 import float32_to_fp8, fp8_to_float32
from pytc.gradient import cast_gradient, gradients, materialized_gradient, ruled
from pytc.graph import VIEW_OPS, LazyOp, is_view
from pytc.helpers import Frontend, GlobalCounters
from pytc.indexing import Indexing
from pytc.movement import Movement, broadcast_shape
from pytc.nn_functional import NNFunctional
from pytc.processing import Processing
from pytc.random_tensors import Random
from pytc.realize import CAPTURES, JitError, realize, schedule
from pytc.reduce import Reduce
from pytc.symbolic import Variable, concrete, is_symbolic, largest, resolved

BOOL_ARITHMETIC = {"add": "or", "mul": "and"}  # bool + is logical or and bool * logical and, as in tinygrad (so bool - b is or not b)


def exact_constant(value: Scalar, dtype: DType) -> bool:
  """Whether a constant of `dtype` can hold the Python `value` as is (wrapping an int, truncating a finite float to an int)."""
  return not dtype.is_fp8 and (dtype.is_float or dtype.is_bool or isinstance(value, int) or math.isfinite(value))


class Tensor(Creation, Random, Movement, Indexing, Elementwise, Activations, Reduce, Processing, NNFunctional):
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
  def size(self, dim: int | None = None) -> tuple[int, ...] | int: return self.shape if dim is None else self.shape[self._axis(dim)]
  def element_size(self) -> int: return self.dtype.itemsize
  def nbytes(self) -> int: return self.numel() * self.dtype.itemsize
  def is_floating_point(self) -> bool: return self.dtype.is_float
  def __repr__(self) -> str: return f"<Tensor {self.shape} {self.dtype} on {self.device}>"
  def __bool__(self) -> bool: raise TypeError("the truth value of a Tensor is undefined: compare with .item() or use .any()/.all()")
  def __len__(self) -> int:
    if not self.shape: raise TypeError("len() of a 0-d tensor")
    return self.shape[0]

  # *** realization and data ***

  def realize(self, *others: Tensor, do_update_stats: bool = True) -> Tensor:
    """Compute this tensor (and `others`) now, in one schedule. As in tinygrad, a view of realized data (movement
    ops only) stays a view: realizing it alone would only copy. Without do_update_stats, GlobalCounters do not count it."""
    counters = {} if do_update_stats else {k: v for k, v in vars(GlobalCounters).items() if isinstance(v, int | float) and not k.startswith("_")}
    tensors = [t for t in (self, *others) if not is_view(t.lazydata)]
    for tensor, node in zip(tensors, realize([t.lazydata for t in tensors])): tensor.lazydata = node
    if not do_update_stats:
      for name, value in counters.items(): setattr(GlobalCounters, name, value)
    return self

  def schedule(self, *others: Tensor) -> list:
    """The kernel launches that realizing this tensor (and `others`) would run, without running them."""
    nodes = [t.lazydata for t in (self, *others) if not t.lazydata.is_realized]
    return list(schedule(nodes)[0].launches) if nodes else []

  def numpy(self) -> np.ndarray:
    if CAPTURES.launches:
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

  # *** autograd ***

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

  # *** graph nodes ***

  def _unary(self, op: str, dtype: DType | None = None) -> Tensor:
    if self.dtype.is_fp8 and op not in ("cast", "bitcast"):  # fp8 math runs in float32, rounded back to the fp8 type
      return self.float()._unary(op, dtype) if dtype is not None else self.float()._unary(op).cast(self.dtype)
    return Tensor(LazyOp(op, dtype or self.dtype, self.shape, self.device, (self.lazydata,)))
  def _binary(self, op: str, other: Tensor | Scalar, reverse: bool = False, dtype: DType | None = None) -> Tensor:
    x, y = self._broadcasted(other, reverse)
    if x.dtype.is_fp8:  # computed in float32, rounded back to the fp8 type
      return x.float()._binary(op, y.float(), dtype=dtype) if dtype is not None else x.float()._binary(op, y.float()).cast(x.dtype)
    if x.dtype is dtypes.bool: op = BOOL_ARITHMETIC.get(op, op)
    return Tensor(LazyOp(op, dtype or x.dtype, x.shape, x.device, (x.lazydata, y.lazydata)))
  def _broadcasted(self, other: Tensor | Scalar, reverse: bool = False) -> tuple[Tensor, Tensor]:
    if isinstance(other, Variable): other = self._value_of(other)
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

  def _compare(self, op: str, x: Tensor | Scalar, reverse: bool = False) -> Tensor:
    """An int scalar beyond an integer tensor's dtype compares as the number it is, not wrapped into the dtype (as
    tinygrad's weak constants): a uint8 tensor is never below -10, so clip(-10, 10) leaves 6 as it is."""
    if isinstance(x, int) and not isinstance(x, bool) and self.dtype.is_int and not self.dtype.min <= x <= self.dtype.max:
      outcome = {"cmpeq": False, "cmpne": True, "cmplt": (x < self.dtype.min) == reverse}[op]
      return Tensor(LazyOp("const", dtypes.bool, self.shape, self.device, arg=outcome))
    return self._binary(op, x, reverse, dtype=dtypes.bool)

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

  def _tagged(self, shape: tuple) -> Tensor:
    """This tensor, stored as it is, seen with symbolic `shape` (whose largest sizes are its shape)."""
    return Tensor(LazyOp("reshape", self.dtype, shape, self.device, (self.lazydata,)))

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
        valid = (Tensor.arange(n.vmax, device=self.device) < self._value_of(n)).reshape(tuple(n.vmax if i == a else 1 for i in range(self.ndim)))
        inside = valid if inside is None else inside & valid
    identity = {"add": 0, "mul": 1, "max": self.dtype.min}[kind]
    stored = self._tagged(tuple(largest(n) if a in axes else n for a, n in enumerate(self.shape)))
    return inside.where(stored, identity).cast(self.dtype)

  def _value_of(self, size: Variable) -> Tensor:
    """A symbolic size's value as a 0-d int32 tensor on this tensor's device, computed from its variables' buffers (so one
    graph serves every value they are bound to)."""
    total = Tensor(size.const, device=self.device, dtype=dtypes.int32)
    for leaf, c in size.terms:
      if (node := leaf.nodes.get(self.device)) is None:
        node = leaf.nodes[self.device] = LazyOp("buffer", dtypes.int32, (), self.device, arg=leaf.buffer(self.device))
      total = total + Tensor(node) * c
    return total

  def contiguous(self) -> Tensor: return Tensor(LazyOp("contiguous", self.dtype, self.shape, self.device, (self.lazydata,)))

  # *** dtypes ***

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
  def int(self) -> Tensor: return self.cast(dtypes.int32)
  def long(self) -> Tensor: return self.cast(dtypes.int64)
  def short(self) -> Tensor: return self.cast(dtypes.int16)
  def bool(self) -> Tensor: return self.cast(dtypes.bool)

  # *** devices and buffers ***

  def to(self, device: str | None) -> Tensor:
    device = Device.canonicalize(device)
    if device == self.device: return self
    if is_disk(device): return Tensor.empty(*self.shape, dtype=self.dtype, device=device).assign(self)  # into the file
    moved = self._copy_to(device)
    if self.grad is not None: moved.grad = self.grad.to(device)
    return moved
  def _copy_to(self, device: str) -> Tensor: return Tensor(LazyOp("copy", self.dtype, self.shape, device, (self.lazydata,), device))
  def to_(self, device: str | None) -> Tensor: return self.replace(self.to(device))
  def clone(self, device: str | None = None) -> Tensor:
    """A copy in a new buffer, on `device` when given, with a clone of the gradient (if any)."""
    copy = (self if device is None else self.to(device)).contiguous()
    if self.grad is not None: copy.grad = self.grad.clone(device)
    return copy
  def replace(self, x: Tensor) -> Tensor:
    """Point this tensor at `x`'s data (same shape; the dtype may differ)."""
    if x.shape != self.shape: raise ValueError(f"replace of {self.shape} by {x.shape}")
    self.lazydata = x.lazydata
    return self

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

  # *** operators ***

  def __neg__(self) -> Tensor: return self.neg()
  def __add__(self, x): return self.add(x)
  def __radd__(self, x): return self.add(x, True)
  def __sub__(self, x): return self.sub(x)
  def __rsub__(self, x): return self.sub(x, True)
  def __mul__(self, x): return self.mul(x)
  def __rmul__(self, x): return self.mul(x, True)
  def __truediv__(self, x): return self.div(x)
  def __rtruediv__(self, x): return self.div(x, True)
  def __floordiv__(self, x): return self.floordiv(x)
  def __rfloordiv__(self, x): return self.floordiv(x, True)
  def __mod__(self, x): return self.mod(x)
  def __rmod__(self, x): return self.mod(x, True)
  def __pow__(self, x): return self.pow(x)
  def __rpow__(self, x): return self.pow(x, True)
  def __matmul__(self, w: Tensor) -> Tensor: return self.matmul(w)
  def __rmatmul__(self, w: Tensor) -> Tensor: return self.matmul(w, True)
  def __invert__(self) -> Tensor: return self.logical_not() if self.dtype is dtypes.bool else self.xor(-1)
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


Frontend.tensor = Tensor
