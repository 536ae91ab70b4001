"""GGUF files (llama.cpp's format): the metadata and the tensors, quantized types dequantized by pytc kernels.

The layout: "GGUF", a version (2 or 3), the tensor and metadata counts (u64), the metadata (key, type, value), one info
per tensor (name, dims with the fastest-varying first, ggml type, offset into the data), then the data, aligned to
general.alignment (32 by default). Quantized types store blocks of 32 (or 256, the K types) elements with their
scales; each block's values are rebuilt below with Tensor operations on the block bytes, so the work runs on the device."""
from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np

from pytc.dtype import dtypes
from pytc.tensor import Tensor


class GGUFError(ValueError):
  """A file is not a GGUF file pytc can read."""


SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
PLAIN = {0: np.float32, 1: np.float16, 24: np.int8, 25: np.int16, 26: np.int32, 27: np.int64, 28: np.float64}
BF16 = 30


class Reader:
  def __init__(self, data: memoryview): self.data, self.at = data, 0

  def take(self, size: int) -> memoryview:
    if self.at + size > len(self.data): raise GGUFError(f"the file ends at byte {len(self.data)}, inside a field at {self.at}")
    self.at += size
    return self.data[self.at - size:self.at]

  def scalar(self, fmt: str): return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]
  def string(self) -> str:
    try: return bytes(self.take(self.scalar("<Q"))).decode()
    except UnicodeDecodeError as error: raise GGUFError(f"a string at byte {self.at} is not UTF-8: {error}") from None

  def value(self, kind: int, depth: int = 0):
    if kind in SCALARS: return self.scalar(SCALARS[kind])
    if kind == 8: return self.string()
    if kind == 9 and depth < 4:
      item, count = self.scalar("<I"), self.scalar("<Q")
      if count > len(self.data): raise GGUFError(f"an array of {count} items at byte {self.at} is longer than the file")
      return [self.value(item, depth + 1) for _ in range(count)]
    raise GGUFError(f"metadata value type {kind} at byte {self.at} is not a GGUF type")


# *** dequantization: `b` is a (blocks, bytes per block) uint8 Tensor; each returns (blocks, elements per block) float32 ***

def half(b: Tensor, at: int) -> Tensor:
  """The little-endian float16 at byte `at` of each block, as a (blocks, 1) float32 column."""
  return (b[:, at].cast(dtypes.uint16) | (b[:, at + 1].cast(dtypes.uint16) << 8)).bitcast(dtypes.float16).float().unsqueeze(1)


def nibbles(q: Tensor) -> Tensor:
  """Bytes (blocks, n) -> their low nibbles then their high nibbles (blocks, 2n), as int32."""
  return (q & 0xF).cat(q >> 4, dim=1).cast(dtypes.int32)


def bits(q: Tensor, count: int) -> Tensor:
  """The first `count` bits of little-endian bytes (blocks, n), bit i at column i, as int32."""
  shifts = Tensor.arange(8, dtype=dtypes.uint8).reshape(1, 1, 8)
  return ((q.unsqueeze(2) >> shifts) & 1).reshape(q.shape[0], -1)[:, :count].cast(dtypes.int32)


def q4_0(b: Tensor) -> Tensor: return (nibbles(b[:, 2:18]) - 8).float() * half(b, 0)
def q4_1(b: Tensor) -> Tensor: return nibbles(b[:, 4:20]).float() * half(b, 0) + half(b, 2)
def q5_0(b: Tensor) -> Tensor: return ((nibbles(b[:, 6:22]) | (bits(b[:, 2:6], 32) << 4)) - 16).float() * half(b, 0)
def q5_1(b: Tensor) -> Tensor: return (nibbles(b[:, 8:24]) | (bits(b[:, 4:8], 32) << 4)).float() * half(b, 0) + half(b, 2)
def q8_0(b: Tensor) -> Tensor: return b[:, 2:34].bitcast(dtypes.int8).float() * half(b, 0)


def mxfp4(b: Tensor) -> Tensor:
  """E2M1 values (a table, doubled) times an E8M0 scale halved: 2^(e - 128), built in the float32 bits."""
  e = b[:, 0].cast(dtypes.uint32)
  scale = (e < 2).where(Tensor(0x00200000, dtype=dtypes.uint32) << e, (e - 1) << 23).bitcast(dtypes.float32).unsqueeze(1)
  table = Tensor([0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12], dtype=dtypes.float32)
  return table[nibbles(b[:, 1:17])] * scale


def k_scales(s: Tensor) -> tuple[Tensor, Tensor]:
  """The 8 six-bit scales and mins of a Q4_K/Q5_K super-block, from its 12 packed bytes: (blocks, 8) each."""
  low, mid, high = s[:, 0:4], s[:, 4:8], s[:, 8:12]
  scales = (low & 63).cat((high & 0xF) | ((low >> 6) << 4), dim=1)
  mins = (mid & 63).cat((high >> 4) | ((mid >> 6) << 4), dim=1)
  return scales.float().unsqueeze(2), mins.float().unsqueeze(2)


def k_quants(b: Tensor, qs: Tensor) -> Tensor:
  """Q4_K's 4-bit values of 8 sub-blocks of 32: each 32 bytes hold two sub-blocks, in low then high nibbles."""
  q = qs.reshape(b.shape[0], 4, 1, 32)
  return (q & 0xF).cat(q >> 4, dim=2).reshape(b.shape[0], 8, 32).cast(dtypes.int32)


def q4_k(b: Tensor) -> Tensor:
  scales, mins = k_scales(b[:, 4:16])
  values = k_quants(b, b[:, 16:144]).float()
  return (half(b, 0).unsqueeze(2) * scales * values - half(b, 2).unsqueeze(2) * mins).reshape(b.shape[0], 256)


def q5_k(b: Tensor) -> Tensor:
  """Q4_K's layout with a fifth bit per value: sub-block k takes bit k of each of the 32 high-bit bytes."""
  scales, mins = k_scales(b[:, 4:16])
  high = ((b[:, 16:48].unsqueeze(1) >> Tensor.arange(8, dtype=dtypes.uint8).reshape(1, 8, 1)) & 1).cast(dtypes.int32)
  values = (k_quants(b, b[:, 48:176]) + (high << 4)).float()
  return (half(b, 0).unsqueeze(2) * scales * values - half(b, 2).unsqueeze(2) * mins).reshape(b.shape[0], 256)


def q6_k(b: Tensor) -> Tensor:
  """Two halves of 128: 4 low bits from 64 bytes (two rows of 32, low then high nibbles), 2 high bits from 32 bytes (four
  pairs of bits), minus 32; 16 int8 scales, one per 16 values."""
  n = b.shape[0]
  low = b[:, 0:128].reshape(n, 2, 2, 32)
  high = b[:, 128:192].reshape(n, 2, 1, 32)
  nib = (low & 0xF).cat(low >> 4, dim=2)  # (n, half, group 0..3, 32): groups take rows 0, 1 low nibbles, then 0, 1 high
  top = (high >> Tensor([0, 2, 4, 6], dtype=dtypes.uint8).reshape(1, 1, 4, 1)) & 3
  values = ((nib | (top << 4)).cast(dtypes.int32) - 32).float()
  scales = b[:, 192:208].bitcast(dtypes.int8).float().reshape(n, 2, 4, 2, 1).expand(n, 2, 4, 2, 16).reshape(n, 2, 4, 32)
  return (half(b, 208).reshape(n, 1, 1, 1) * scales * values).reshape(n, 256)


QUANTIZED: dict[int, tuple[str, int, int, Callable[[Tensor], Tensor]]] = {  # ggml type: name, elements and bytes per block
  2: ("Q4_0", 32, 18, q4_0), 3: ("Q4_1", 32, 20, q4_1), 6: ("Q5_0", 32, 22, q5_0), 7: ("Q5_1", 32, 24, q5_1),
  8: ("Q8_0", 32, 34, q8_0), 12: ("Q4_K", 256, 144, q4_k), 13: ("Q5_K", 256, 176, q5_k), 14: ("Q6_K", 256, 210, q6_k),
  39: ("MXFP4", 32, 17, mxfp4)}


def gguf_load(source: Tensor | str | Path) -> tuple[dict, dict[str, Tensor]]:
  """(metadata, tensors) of a GGUF file, or of a uint8 Tensor of its bytes. Tensors take the numpy order of the dims
  (the file's reversed); quantized ones come out float32."""
  if isinstance(source, Tensor):
    if source.dtype is not dtypes.uint8 or source.ndim != 1:
      raise TypeError(f"gguf_load of a Tensor needs 1-d uint8 bytes, got {source.shape} {source.dtype}")
    raw = source.numpy()
  else: raw = np.memmap(source, np.uint8, mode="r") if Path(source).stat().st_size else np.zeros(0, np.uint8)
  reader = Reader(memoryview(raw))
  if bytes(reader.take(4) if len(raw) >= 4 else b"") != b"GGUF": raise GGUFError("not a GGUF file: it does not start with 'GGUF'")
  if (version := reader.scalar("<I")) not in (2, 3): raise GGUFError(f"GGUF version {version}: pytc reads versions 2 and 3")
  tensor_count, metadata_count = reader.scalar("<Q"), reader.scalar("<Q")
  if tensor_count > len(raw) or metadata_count > len(raw): raise GGUFError(f"counts {tensor_count} and {metadata_count} exceed the file")
  metadata = {}
  for _ in range(metadata_count):
    key = reader.string()
    metadata[key] = reader.value(reader.scalar("<I"))
  infos = []
  for _ in range(tensor_count):
    name, dims = reader.string(), reader.scalar("<I")
    if dims > 8: raise GGUFError(f"tensor {name!r} has {dims} dims")
    shape = tuple(reader.scalar("<Q") for _ in range(dims))[::-1]
    infos.append((name, shape, reader.scalar("<I"), reader.scalar("<Q")))
  alignment = metadata.get("general.alignment", 32)
  if not isinstance(alignment, int) or alignment <= 0: raise GGUFError(f"general.alignment is {alignment!r}")
  start = -(-reader.at // alignment) * alignment
  return metadata, {name: tensor_of(raw, start, name, shape, kind, offset) for name, shape, kind, offset in infos}


def tensor_of(raw: np.ndarray, start: int, name: str, shape: tuple[int, ...], kind: int, offset: int) -> Tensor:
  count = int(np.prod(shape))
  if kind in PLAIN or kind == BF16:
    itemsize = 2 if kind == BF16 else np.dtype(PLAIN[kind]).itemsize
    data = span(raw, start + offset, count * itemsize, name)
    return Tensor.from_bytes(data.view(np.uint16), dtypes.bfloat16).reshape(shape) if kind == BF16 else Tensor(data.view(PLAIN[kind]).reshape(shape))
  if kind not in QUANTIZED: raise GGUFError(f"tensor {name!r} has ggml type {kind}, which pytc does not read")
  kind_name, per_block, block_bytes, dequantize = QUANTIZED[kind]
  if count % per_block: raise GGUFError(f"tensor {name!r} of {count} elements is not whole {kind_name} blocks of {per_block}")
  blocks = Tensor(span(raw, start + offset, count // per_block * block_bytes, name).reshape(-1, block_bytes))
  return dequantize(blocks).reshape(shape)


def span(raw: np.ndarray, begin: int, size: int, name: str) -> np.ndarray:
  if begin + size > len(raw): raise GGUFError(f"tensor {name!r} needs bytes {begin}..{begin + size}, past the file's {len(raw)}")
  return np.ascontiguousarray(raw[begin:begin + size])
