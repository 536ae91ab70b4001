"""Device names and device buffers: `Device.DEFAULT` is CPU unless PYTC_DEVICE says otherwise."""
from __future__ import annotations

import os
import threading

import numpy as np

from pytc.dtype import DType, from_numpy, to_numpy
from pytc.helpers import prod
from pytc.runtime import DEVICES, open_device


class _Device:
  def __init__(self) -> None:
    self._opened: dict[str, object] = {}
    self._opening = threading.Lock()  # two threads asking for a device first must not open it twice
    self.DEFAULT: str = self.canonicalize(os.environ.get("PYTC_DEVICE", "CPU"))

  def canonicalize(self, name: str | None) -> str:
    """The canonical spelling of a device name; an unknown name raises `ValueError`."""
    if name is None: return self.DEFAULT
    if not isinstance(name, str): raise TypeError(f"a device is a name like 'CPU', got {type(name).__name__} {name!r}")
    base, _, rest = name.partition(":")
    if base.upper() not in DEVICES:
      raise ValueError(f"unknown device '{name}' (available: {', '.join(DEVICES)})")
    return base.upper() + (f":{rest}" if rest else "")

  def __getitem__(self, name: str) -> object:
    name = self.canonicalize(name)
    if (device := self._opened.get(name)) is not None: return device
    with self._opening:
      if name not in self._opened: self._opened[name] = open_device(name)
      return self._opened[name]


Device = _Device()


class Buffer:
  """Device memory holding `prod(shape)` elements of `dtype`."""
  def __init__(self, device: str, dtype: DType, shape: tuple[int, ...], raw: object | None = None):
    self.device, self.dtype, self.shape, self.raw = device, dtype, shape, raw
    if raw is None:
      nbytes = prod(shape) * dtype.itemsize
      try: self.raw = Device[device].alloc(nbytes)
      except MemoryError: raise MemoryError(f"cannot allocate {nbytes} bytes on {device} for a {dtype.name} buffer of shape {shape}") from None

  def __del__(self) -> None:
    if self.raw is not None and (device := Device._opened.get(self.device)) is not None: device.free(self.raw)

  @property
  def address(self) -> int: return self.raw.address

  def copyin(self, array) -> Buffer:
    self.raw.copyin(memoryview(from_numpy(array, self.dtype).reshape(-1).view(np.uint8)))
    return self

  def numpy(self):
    return to_numpy(self.raw.as_memoryview(), self.dtype, self.shape)
