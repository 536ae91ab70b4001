"""Random tensors: uniform bits from tinygrad's counter-based Threefry stream, computed on the host, and the distributions
and initializers built on them (Tensor's class methods), plus randperm and multinomial."""
from __future__ import annotations

import hashlib
import math
import threading
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from pytc.arguments import ArgumentAssertion, argfix
from pytc.creation import creation_shape
from pytc.device import Device
from pytc.dtype import FLOAT_LAYOUTS, DType, dtypes, to_dtype
from pytc.realize import CAPTURES

if TYPE_CHECKING:
  from pytc.tensor import Tensor


UINT32, UINT64 = (1 << 32) - 1, (1 << 64) - 1
ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
KEY_PARITY = 0x1BD11BDA


def threefry2x32(key: tuple, words: tuple, wrap=lambda v: v) -> tuple:
  """Threefry-2x32 (20 rounds, a key injection every 4) of the word pair `words` under `key`, both pairs of uint32 Tensors
  or of Python ints (then `wrap` keeps each sum to 32 bits)."""
  schedule = (key[1], wrap(key[0] ^ key[1] ^ KEY_PARITY), key[0])
  a, b = wrap(words[0] + key[0]), wrap(words[1] + key[1])
  for i in range(5):
    for r in ROTATIONS[i % 2]:
      a = wrap(a + b)
      b = a ^ wrap((b << r) | (b >> (32 - r)))
    a, b = wrap(a + schedule[i % 3]), wrap(b + schedule[(i + 1) % 3] + i + 1)
  return a, b


def _to_uint32(v: int) -> int: return v & UINT32


class Random:
  """The random methods of Tensor (mixed into it), drawing tinygrad's stream: each device has a key (a hash of how many
  devices drew before it, and the seed) and a 64-bit counter that every draw of n words advances by n. A draw's words are
  Threefry-2x32 of (i, i + n/2) under the key that Threefry makes of the counter, low words first. Counters and words are
  computed on the host; TinyJit records each draw and writes its words again on every replay."""
  _seed: ClassVar[int] = 0
  _rng_keys: ClassVar[dict[str, tuple[int, int]]] = {}
  _rng_counters: ClassVar[dict[str, int]] = {}
  _rng_lock: ClassVar[threading.Lock] = threading.Lock()

  @classmethod
  def manual_seed(cls, seed: int = 0) -> None:
    with Random._rng_lock: cls._seed, cls._rng_keys, cls._rng_counters = seed, {}, {}

  @classmethod
  def _draw_keys(cls, device: str, count: int) -> list[int]:
    """The keys (two words per 2**32 - 1 words drawn) of the next draw of `count` words on `device`, whose counter it advances."""
    with Random._rng_lock:
      if device not in cls._rng_keys:
        ordinal = hashlib.sha256(len(cls._rng_keys).to_bytes(4, "big")).digest()
        cls._rng_keys[device], cls._rng_counters[device] = (int.from_bytes(ordinal, "big") & UINT32, cls._seed & UINT32), 0
      key, counter = cls._rng_keys[device], cls._rng_counters[device]
      cls._rng_counters[device] = (counter + count) & UINT64
    keys: list[int] = []
    for offset in range(0, count, UINT32):
      position = (counter + offset) & UINT64
      keys += threefry2x32(key, (position & UINT32, position >> 32), _to_uint32)
    return keys

  @classmethod
  def _draw_words(cls, device: str, count: int) -> np.ndarray:
    """The next `count` uint32 words of `device`'s stream, computed on the host (a Threefry chain reuses each value twice per
    round: in the graph it would compile to a kernel per round or two)."""
    keys, chunks = cls._draw_keys(device, count), []
    for chunk, offset in enumerate(range(0, count, UINT32)):
      size = min(count - offset, UINT32)
      low = np.arange((size + 1) // 2, dtype=np.uint32)
      words = threefry2x32((np.uint32(keys[2 * chunk]), np.uint32(keys[2 * chunk + 1])), (low, low + np.uint32(len(low))))
      chunks.append(np.concatenate(words)[:size])
    return np.concatenate(chunks) if chunks else np.zeros(0, np.uint32)

  @classmethod
  def _random_bits(cls, count: int, device: str) -> Tensor:
    """The next `count` uniform uint32 words of `device`'s stream, as a buffer: every draw of the same size shares one
    compiled schedule, and a capturing TinyJit records the draw to write it again on replay."""
    words = cls(cls._draw_words(device, count), device=device)
    for draws in CAPTURES.draws: draws.append((words.lazydata.arg, device, count))
    return words

  @staticmethod
  def _threefry_random_bits(key: Tensor, low: Tensor, high: Tensor) -> Tensor:
    """Threefry-2x32 of the uint32 word pairs (low, high) under the two-word `key`: the low results, then the high ones."""
    words = threefry2x32((key[0:1].expand(low.shape), key[1:2].expand(low.shape)), (low, high))
    return words[0].cat(words[1])

  @classmethod
  def rand(cls, *shape, device: str | None = None, dtype: DType | str | None = None, contiguous: bool = True,
           requires_grad: bool | None = None) -> Tensor:
    """Uniform in [0, 1) for a float `dtype`: the dtype's significand filled with random bits under an exponent of 1, minus
    1 (k / 2**m for the m significand bits: 23 for float32, 10 for float16, 52 for float64), so every value is exact.
    With contiguous, the values are stored once rather than recomputed where they are read."""
    dtype, shape = to_dtype(dtype or dtypes.default_float), creation_shape(argfix(*shape), "rand")
    if not dtype.is_float: raise ValueError(f"rand makes float tensors, not {dtype}")
    device, count = Device.canonicalize(device), math.prod(shape)
    _, significand, bias = FLOAT_LAYOUTS[dtype.name]
    one = bias << significand  # the bits of 1.0
    words = cls._random_bits(-(-count * dtype.itemsize // 4), device).bitcast(dtypes.unsigned_of(dtype.itemsize))
    values = (((words >> (dtype.bitsize - significand)) | one).bitcast(dtype)[:count] - 1).reshape(shape)  # [1, 2) - 1: exact
    out = values.contiguous() if contiguous else values
    out.requires_grad = requires_grad
    return out

  def rand_like(self, **kwargs) -> Tensor:
    return type(self).rand(*self.shape, device=kwargs.pop("device", self.device), dtype=kwargs.pop("dtype", self.dtype), **kwargs)

  @classmethod
  def randn(cls, *shape, dtype: DType | str | None = None, requires_grad: bool | None = None, **kwargs) -> Tensor:
    """Standard normal, by Box-Muller from two float32 uniforms u, v: cos(2 pi u) * sqrt(-2 log(1 - v)), finite for any v."""
    shape = creation_shape(argfix(*shape), "randn")
    uniforms = cls.rand(2, *shape, dtype=dtypes.float32, **kwargs)
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
    if not 1 <= self.ndim <= 2: raise ArgumentAssertion(f"multinomial needs 1-D or 2-D weights, got shape {self.shape}")
    if num_samples <= 0: raise ArgumentAssertion(f"multinomial needs num_samples > 0, got {num_samples}")
    weights = self.unsqueeze(0) if self.ndim == 1 else self
    if not replacement and num_samples > weights.shape[1]:
      raise ArgumentAssertion(f"multinomial without replacement cannot draw {num_samples} of {weights.shape[1]} categories")
    if replacement or num_samples == 1:
      cumulative = weights.cumsum(1).float()
      cdf = cumulative / cumulative[:, -1:]
      draws = type(self).rand(num_samples, weights.shape[0], 1, device=self.device, contiguous=False)
      picked = (draws >= cdf).sum(2).transpose(0, 1)
    else:
      keys = weights.rand_like(dtype=dtypes.float32, contiguous=False).log2() / weights
      picked = keys.topk(num_samples, dim=1)[1]
    return (picked[0] if self.ndim == 1 else picked).cast(dtypes.int32)
