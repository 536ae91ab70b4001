"""Random tensors: uniform bits from a counter-based hash computed in the graph, and the distributions and initializers
built on them (Tensor's class methods), plus randperm and multinomial."""
from __future__ import annotations

import math
import threading
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from pytc.creation import argfix, creation_shape
from pytc.device import Device
from pytc.dtype import DType, dtypes, to_dtype
from pytc.realize import CAPTURES

if TYPE_CHECKING:
  from pytc.tensor import Tensor


class Random:
  """The random methods of Tensor (mixed into it). `manual_seed` makes the tensors that follow reproducible. The state
  lives on the class the methods are called on (Tensor), where TinyJit reads and advances it."""
  _seed: ClassVar[int] = 0
  _rng_calls: ClassVar[int] = 0
  _rng_lock: ClassVar[threading.Lock] = threading.Lock()

  @classmethod
  def manual_seed(cls, seed: int = 0) -> None:
    with Random._rng_lock: cls._seed, cls._rng_calls = seed, 0

  @classmethod
  def _take_rng_calls(cls, count: int = 1) -> int:
    """Advances the call counter by `count` at once, so threads drawing at the same time never share a call, and
    returns the first call taken."""
    with Random._rng_lock:
      cls._rng_calls += count
      return cls._rng_calls - count + 1

  @classmethod
  def _rng_key(cls, call: int) -> int:
    """The key of the `call`-th random call since the seed was set."""
    return (cls._seed * 0x9E3779B9 + call * 0x632BE5AB) & 0xFFFFFFFF

  @classmethod
  def _random_bits(cls, count: int, device: str) -> Tensor:
    """`count` uniform uint32s: murmur3's finalizer of each index mixed with a per-call key. The key is a buffer, so
    every call of the same size shares one compiled schedule; a capturing TinyJit records it to rewrite on replay."""
    call = cls._take_rng_calls()
    key = cls(np.array([cls._rng_key(call)], np.uint32), device=device)
    for keys in CAPTURES.keys: keys.append((key.lazydata.arg, call))
    bits = cls.arange(count, dtype=dtypes.uint32, device=device) * 0x9E3779B1
    bits = bits ^ key.expand(bits.shape)
    for shift, factor in ((16, 0x85EBCA6B), (13, 0xC2B2AE35)): bits = (bits ^ (bits >> shift)) * factor
    return bits ^ (bits >> 16)

  @classmethod
  def rand(cls, *shape, device: str | None = None, dtype: DType | str | None = None, contiguous: bool = True,
           requires_grad: bool | None = None) -> Tensor:
    """Uniform in [0, 1) for a float `dtype`: k / 2**b for a random k below 2**b, where b is the dtype's significand
    width (24 for float32, 11 for float16, 53 for float64), so every value is exact in the dtype and below 1.
    With contiguous, the values are stored once rather than recomputed where they are read."""
    dtype, shape = to_dtype(dtype or dtypes.default_float), creation_shape(argfix(*shape), "rand")
    if not dtype.is_float: raise ValueError(f"rand makes float tensors, not {dtype}")
    device, count = Device.canonicalize(device), math.prod(shape)
    if dtype is dtypes.float64:
      bits = cls._random_bits(2 * count, device)
      high, low = (bits[:count] >> 6).cast(dtypes.float64), (bits[count:] >> 6).cast(dtypes.float64)
      values = (high * 2.0 ** 26 + low) * 2.0 ** -52
    else:
      width = dtypes.finfo(dtype)[1] + 1
      values = (cls._random_bits(count, device) >> (32 - width)).cast(dtypes.float32).mul(2.0 ** -width).cast(dtype)
    out = values.reshape(shape).contiguous() if contiguous else values.reshape(shape)
    out.requires_grad = requires_grad
    return out

  def rand_like(self, **kwargs) -> Tensor:
    return type(self).rand(*self.shape, device=kwargs.pop("device", self.device), dtype=kwargs.pop("dtype", self.dtype), **kwargs)

  @classmethod
  def randn(cls, *shape, dtype: DType | str | None = None, requires_grad: bool | None = None, **kwargs) -> Tensor:
    """Standard normal, by Box-Muller from two float32 uniforms u, v: cos(2 pi u) * sqrt(-2 log(1 - v)), finite for any v."""
    shape = creation_shape(argfix(*shape), "randn")
    uniforms = cls.rand(2, *shape, dtype=dtypes.float32, contiguous=False, **kwargs)
    radius = (1 - uniforms[1]).log().mul(-2).sqrt()
    out = ((2 * math.pi) * uniforms[0]).cos().mul(radius).cast(to_dtype(dtype or dtypes.default_float))
    out.requires_grad = requires_grad
    return out

  def randn_like(self, dtype: DType | str | None = None, **kwargs) -> Tensor:
    return type(self).randn(*self.shape, dtype=self.dtype if dtype is None else dtype, device=kwargs.pop("device", self.device), **kwargs)

  @classmethod
  def uniform(cls, *shape, low=0.0, high=1.0, dtype: DType | str | None = None, requires_grad: bool | None = None, **kwargs) -> Tensor:
    """Uniform in [low, high): (high - low) * rand() cast to `dtype` (an int dtype truncates), plus low."""
    shape = creation_shape(argfix(*shape), "uniform")
    if low >= high: raise ValueError(f"uniform needs low < high, got low={low}, high={high}")
    out = ((high - low) * cls.rand(*shape, **kwargs)).cast(dtype or dtypes.default_float) + low
    out.requires_grad = requires_grad
    return out

  @classmethod
  def randint(cls, *shape, low=0, high=10, dtype: DType | str = dtypes.int32, **kwargs) -> Tensor:
    """Uniform integers in [low, high)."""
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (low, high)):
      raise TypeError(f"randint needs int bounds, got low={low!r}, high={high!r}")
    if not (dtype := to_dtype(dtype)).is_int: raise TypeError(f"randint makes integer tensors, not {dtype}")
    if low >= high: raise ValueError(f"randint needs low < high, got low={low}, high={high}")
    return cls.uniform(*shape, low=low, high=high, dtype=dtype, **kwargs)

  @classmethod
  def normal(cls, *shape, mean=0.0, std=1.0, requires_grad: bool | None = None, **kwargs) -> Tensor:
    if std < 0: raise ValueError(f"normal needs std >= 0, got {std}")
    out = std * cls.randn(*shape, **kwargs) + mean
    out.requires_grad = requires_grad
    return out

  @classmethod
  def scaled_uniform(cls, *shape, requires_grad: bool | None = None, **kwargs) -> Tensor:
    """Uniform in [-1, 1) / sqrt(numel)."""
    shape = creation_shape(argfix(*shape), "scaled_uniform")
    out = cls.uniform(*shape, low=-1.0, high=1.0, **kwargs).mul(math.prod(shape) ** -0.5)
    out.requires_grad = requires_grad
    return out

  @classmethod
  def glorot_uniform(cls, *shape, **kwargs) -> Tensor:
    """Uniform in +-sqrt(6 / (fan_in + fan_out)), fan_in the first dim and fan_out the product of the others."""
    shape = creation_shape(argfix(*shape), "glorot_uniform")
    bound = math.sqrt(6 / (shape[0] + math.prod(shape[1:])))
    return cls.uniform(*shape, low=-bound, high=bound, **kwargs)

  @classmethod
  def kaiming_uniform(cls, *shape, a: float = 0.01, **kwargs) -> Tensor:
    """torch's kaiming_uniform_ with leaky-relu slope `a`: uniform in +-sqrt(6 / ((1 + a^2) fan_in)), fan_in the product of
    all dims but the first."""
    shape = creation_shape(argfix(*shape), "kaiming_uniform")
    bound = math.sqrt(6 / (1 + a ** 2) / math.prod(shape[1:]))
    return cls.uniform(*shape, low=-bound, high=bound, **kwargs)

  @classmethod
  def kaiming_normal(cls, *shape, a: float = 0.01, **kwargs) -> Tensor:
    """torch's kaiming_normal_ with leaky-relu slope `a`: normal with std sqrt(2 / ((1 + a^2) fan_in))."""
    shape = creation_shape(argfix(*shape), "kaiming_normal")
    return cls.normal(*shape, mean=0.0, std=math.sqrt(2 / (1 + a ** 2) / math.prod(shape[1:])), **kwargs)

  @classmethod
  def randperm(cls, n: int, device: str | None = None, dtype: DType | str = dtypes.int32, **kwargs) -> Tensor:
    """0 .. n-1 in random order: the order that sorts n uniforms."""
    return cls.rand(n, device=device, **kwargs).argsort().cast(dtype)

  def multinomial(self, num_samples: int = 1, replacement: bool = False) -> Tensor:
    """`num_samples` indices drawn with probability proportional to the weights along the last dim (1-D or 2-D `self`), as
    int32. With replacement each draw inverts the cumulative distribution at a uniform; without, the indices of the
    num_samples largest keys log2(u) / weight are a draw without replacement (Efraimidis-Spirakis)."""
    if not 1 <= self.ndim <= 2: raise ValueError(f"multinomial needs 1-D or 2-D weights, got shape {self.shape}")
    if num_samples <= 0: raise ValueError(f"multinomial needs num_samples > 0, got {num_samples}")
    weights = self.unsqueeze(0) if self.ndim == 1 else self
    if not replacement and num_samples > weights.shape[1]:
      raise ValueError(f"multinomial without replacement cannot draw {num_samples} of {weights.shape[1]} categories")
    if replacement or num_samples == 1:
      cumulative = weights.cumsum(1).float()
      cdf = cumulative / cumulative[:, -1:]
      draws = type(self).rand(num_samples, weights.shape[0], 1, device=self.device, contiguous=False)
      picked = (draws >= cdf).sum(2).transpose(0, 1)
    else:
      keys = weights.rand_like(dtype=dtypes.float32, contiguous=False).log2() / weights
      picked = keys.topk(num_samples, dim=1)[1]
    return (picked[0] if self.ndim == 1 else picked).cast(dtypes.int32)
