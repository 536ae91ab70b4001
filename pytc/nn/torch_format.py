"""PyTorch checkpoints (`torch.save`), read without torch: the zip format (torch >= 1.6: `<name>/data.pkl` beside one
entry per storage under `<name>/data/`) and the legacy one (a magic number, protocol and system-info pickles, the
object's pickle, its storage keys, then each storage's element count and bytes).

The object is unpickled by a restricted unpickler that knows only what a checkpoint of tensors needs (the tensor and
parameter rebuild functions, the storage classes, OrderedDict and a few plain builtins): any other class or function a
pickle names is refused, so loading a checkpoint never runs its code."""
from __future__ import annotations

import collections
import io
import pickle
import struct
import zipfile
from pathlib import Path

import numpy as np

from pytc.dtype import DType, dtypes
from pytc.tensor import Tensor

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
STORAGES: dict[str, DType] = {
  "FloatStorage": dtypes.float32, "DoubleStorage": dtypes.float64, "HalfStorage": dtypes.float16, "BFloat16Storage": dtypes.bfloat16,
  "LongStorage": dtypes.int64, "IntStorage": dtypes.int32, "ShortStorage": dtypes.int16, "CharStorage": dtypes.int8,
  "ByteStorage": dtypes.uint8, "BoolStorage": dtypes.bool}


class CheckpointError(ValueError):
  """A file is not a PyTorch checkpoint pytc can read, or asks for code to run."""


class StorageType:
  """A storage class a pickle names (torch.FloatStorage, ...): the dtype of its elements."""
  def __init__(self, dtype: DType): self.dtype = dtype


class Storage:
  """A storage's elements, and where its bytes are read from (by key)."""
  def __init__(self, dtype: DType, data: np.ndarray): self.dtype, self.data = dtype, data


def rebuild_tensor(storage: Storage, offset: int, size: tuple, stride: tuple, *_) -> Tensor:
  """torch._utils._rebuild_tensor_v2: a view (offset, sizes, strides in elements) of a storage, copied into a Tensor."""
  if not isinstance(storage, Storage): raise CheckpointError(f"a tensor is rebuilt from {type(storage).__name__}, not a storage")
  size, stride = tuple(size), tuple(stride)
  if len(size) != len(stride) or any(n < 0 for n in size) or any(s < 0 for s in stride) or offset < 0:
    raise CheckpointError(f"a tensor of size {size}, stride {stride} at offset {offset} is malformed")
  if all(size) and offset + sum((n - 1) * s for n, s in zip(size, stride)) >= len(storage.data):
    raise CheckpointError(f"a tensor of size {size}, stride {stride} at offset {offset} reaches past its storage of "
                          f"{len(storage.data)} elements")
  data = storage.data[offset:]
  view = np.lib.stride_tricks.as_strided(data, size, tuple(s * data.itemsize for s in stride)) if all(size) else np.zeros(size, data.dtype)
  return Tensor.from_bytes(np.ascontiguousarray(view), storage.dtype)


def rebuild_parameter(tensor: Tensor, requires_grad: bool = True, *_) -> Tensor:
  return tensor


def rebuild_from_type(function, _type, arguments: tuple, _state=None) -> Tensor:
  """torch._tensor._rebuild_from_type_v2: a tensor subclass rebuilt by one of the functions above, kept as a Tensor."""
  if isinstance(function, Deferred) or function not in (rebuild_tensor, rebuild_parameter):
    raise CheckpointError("a tensor subclass is rebuilt by a function torch_load does not allow")
  return function(*arguments)


ALLOWED = {("collections", "OrderedDict"): collections.OrderedDict, ("torch._utils", "_rebuild_tensor_v2"): rebuild_tensor,
           ("torch._utils", "_rebuild_parameter"): rebuild_parameter, ("torch._tensor", "_rebuild_from_type_v2"): rebuild_from_type,
           ("torch", "Tensor"): Tensor, ("torch.nn.parameter", "Parameter"): Tensor, ("builtins", "set"): set,
           ("builtins", "frozenset"): frozenset, ("builtins", "slice"): slice, ("builtins", "complex"): complex,
           **{("torch", name): StorageType(dtype) for name, dtype in STORAGES.items()}}


class Unpickler(pickle.Unpickler):
  """Builds only what ALLOWED names; storages come from `storage(key, dtype, count)`."""
  def __init__(self, file, storage, deferred: bool = False):
    super().__init__(file)
    self.storage, self.storages, self.deferred = storage, {}, deferred

  def find_class(self, module: str, name: str):
    if (found := ALLOWED.get((module, name))) is None:
      raise CheckpointError(f"the checkpoint's pickle asks for {module}.{name}, which torch_load does not build (it runs no code from a checkpoint)")
    if self.deferred and found in (rebuild_tensor, rebuild_parameter, rebuild_from_type): return lambda *arguments: Deferred(found, arguments)
    return found

  def persistent_load(self, pid):
    if not isinstance(pid, tuple) or len(pid) < 5 or pid[0] != "storage" or not isinstance(pid[1], StorageType):
      raise CheckpointError(f"the checkpoint refers to {pid!r:.80}, not a storage")
    _, kind, key, _location, count = pid[:5]
    if (key := str(key)) not in self.storages: self.storages[key] = Storage(kind.dtype, self.storage(key, kind.dtype, int(count)))
    return self.storages[key]


def torch_load(source: str | Path | Tensor) -> dict[str, Tensor]:
  """The tensors of a PyTorch checkpoint file (or of a uint8 Tensor of its bytes), by name: a state_dict, or the state_dict
  inside a {"state_dict": ...} or {"model": ...} dict."""
  raw = source.numpy().tobytes() if isinstance(source, Tensor) else Path(source).read_bytes()
  try: loaded = load_zip(raw) if raw[:4] == b"PK\x03\x04" else load_legacy(raw)
  except (pickle.UnpicklingError, EOFError, struct.error, zipfile.BadZipFile, KeyError, IndexError, TypeError, AttributeError) as error:
    raise CheckpointError(f"not a PyTorch checkpoint pytc can read: {type(error).__name__}: {error}") from None
  for key in ("state_dict", "model"):
    if isinstance(loaded, dict) and isinstance(loaded.get(key), dict): loaded = loaded[key]
  if not isinstance(loaded, dict): raise CheckpointError(f"the checkpoint holds a {type(loaded).__name__}, not a dict of tensors")
  return {str(name): value for name, value in loaded.items() if isinstance(value, Tensor)}


def load_zip(raw: bytes) -> object:
  archive = zipfile.ZipFile(io.BytesIO(raw))
  pickles = [name for name in archive.namelist() if name.endswith("/data.pkl") or name == "data.pkl"]
  if len(pickles) != 1: raise CheckpointError(f"a zip checkpoint has one data.pkl, this one {len(pickles)}")
  prefix = pickles[0][:-len("data.pkl")]
  big_endian = archive.read(prefix + "byteorder") == b"big" if prefix + "byteorder" in archive.namelist() else False

  def storage(key: str, dtype: DType, count: int) -> np.ndarray:
    data = archive.read(f"{prefix}data/{key}")
    if len(data) < count * dtype.itemsize: raise CheckpointError(f"storage {key} holds {len(data)} bytes, {count} {dtype} elements need more")
    return np.frombuffer(data, np.dtype(dtype.numpy).newbyteorder(">" if big_endian else "<"), count).astype(dtype.numpy)
  return Unpickler(io.BytesIO(archive.read(pickles[0])), storage).load()


def load_legacy(raw: bytes) -> object:
  stream = io.BytesIO(raw)
  if safe_pickle(stream) != LEGACY_MAGIC: raise CheckpointError("neither a zip nor a legacy PyTorch checkpoint (no magic number)")
  safe_pickle(stream), safe_pickle(stream)  # protocol version, system information
  pending: dict[str, tuple[DType, int]] = {}

  def storage(key: str, dtype: DType, count: int) -> np.ndarray:
    pending[key] = (dtype, count)
    return np.zeros(0, dtype.numpy)  # filled below, once the keys' order is read
  unpickler = Unpickler(stream, storage, deferred=True)
  loaded = unpickler.load()
  for key in safe_pickle(stream):
    count = struct.unpack("<q", stream.read(8))[0]
    dtype = pending[str(key)][0] if str(key) in pending else dtypes.uint8
    data = stream.read(count * dtype.itemsize)
    if len(data) != count * dtype.itemsize: raise CheckpointError(f"storage {key} is cut short: {len(data)} of {count * dtype.itemsize} bytes")
    if (held := unpickler.storages.get(str(key))) is not None: held.data = np.frombuffer(data, dtype.numpy).copy()
  return rebuilt(loaded)


def rebuilt(value: object) -> object:
  """Legacy checkpoints read their storages after the object: the tensors are built from the pickle's placeholders then."""
  if isinstance(value, Deferred): return value.function(*map(rebuilt, value.arguments))
  if isinstance(value, dict): return type(value)((k, rebuilt(v)) for k, v in value.items())
  if isinstance(value, list | tuple): return type(value)(map(rebuilt, value))
  return value


class Deferred:
  """A rebuild call of a legacy checkpoint, made once its storages are read."""
  def __init__(self, function, arguments: tuple): self.function, self.arguments = function, arguments


def safe_pickle(stream: io.BytesIO) -> object:
  """One of the legacy format's plain pickles (ints, strings, dicts and lists only)."""
  class Plain(pickle.Unpickler):
    def find_class(self, module, name): raise CheckpointError(f"the checkpoint's header pickle asks for {module}.{name}")
  return Plain(stream).load()
