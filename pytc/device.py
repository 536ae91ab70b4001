"""Device names and device buffers: `Device.DEFAULT` is CPU unless PYTC_DEVICE says otherwise."""
from __future__ import annotations

import threading

import numpy as np

from pytc import flags
from pytc.dtype import DType, dtypes, from_numpy, to_numpy
from pytc.helpers import prod
from pytc.runtime import backends, open_device


class _Device:
  def __init__(self) -> None:
    self._opened: dict[str, object] = {}
    self._opening = threading.Lock()  # two threads asking for a device first must not open it twice
    self._backends: set[str] = set()  # the backend names found so far (looked up again for a name not among them)
    self.DEFAULT: str = self.canonicalize(flags.DEVICE.value)

  def canonicalize(self, name: str | None) -> str:
    """The canonical spelling of a device name; an unknown name raises `ValueError`."""
    if name is None: return self.DEFAULT
    if not isinstance(name, str): raise TypeError(f"a device is a name like 'CPU', got {type(name).__name__} {name!r}")
    base, _, rest = name.partition(":")
    if base.upper() not in self._backends and base.upper() not in (found := backends()):
      raise ValueError(f"unknown device '{name}' (available: {', '.join(found)})")
    self._backends.add(base.upper())
    return base.upper() + (f":{rest}" if rest else "")

  def __getitem__(self, name: str) -> object:
    if type(name) is str and (device := self._opened.get(name)) is not None: return device  # a canonical name of an open device
    name = self.canonicalize(name)
    if (device := self._opened.get(name)) is not None: return device
    with self._opening:
      if name not in self._opened: self._opened[name] = open_device(name)
      return self._opened[name]


Device = _Device()


def is_disk(device: str) -> bool: return device.partition(":")[0] == "DISK"


class Buffer:
  """Device memory holding `prod(shape)` elements of `dtype`."""
  def __init__(self, device: str, dtype: DType, shape: tuple[int, ...], raw: object | None = None):
    self.device, self.dtype, self.shape, self.raw = device, dtype, shape, raw
    if raw is None:
      nbytes = prod(shape) * dtype.itemsize
      try: self.raw = Device[device].allocator.alloc(nbytes)
      except MemoryError: raise MemoryError(f"cannot allocate {nbytes} bytes on {device} for a {dtype.name} buffer of shape {shape}") from None

  @classmethod
  def storage(cls, device: str, dtype: DType, shape: tuple[int, ...]) -> Buffer:
    """A buffer that is the device's own storage: on DISK:path the file's first bytes (runtime/ops_disk.py), else new memory."""
    raw = Device[device].map_file(prod(shape) * dtype.itemsize) if is_disk(device) else None
    return cls(device, dtype, shape, raw)

  def __del__(self) -> None:
    if self.raw is not None and (device := Device._opened.get(self.device)) is not None: device.allocator.free(self.raw)

  @property
  def address(self) -> int: return self.raw.address

  def copyin(self, data: np.ndarray | bytes | memoryview) -> Buffer:
    """Write the buffer's contents: an array (converted to its dtype) or raw bytes."""
    if isinstance(data, np.ndarray): data = from_numpy(data, self.dtype).reshape(-1).view(np.uint8)
    Device[self.device].allocator.copyin(self.raw, memoryview(data).cast("B"))
    return self

  def as_bytes(self) -> bytes:
    host = bytearray(self.raw.nbytes)
    Device[self.device].allocator.copyout(memoryview(host), self.raw)
    return bytes(host)

  def numpy(self) -> np.ndarray:
    host = np.empty(self.shape, self.dtype.numpy)
    Device[self.device].allocator.copyout(memoryview(host.reshape(-1).view(np.uint8)), self.raw)
    return to_numpy(host, self.dtype, self.shape) if self.dtype == dtypes.bfloat16 else host
