"""DISK:path, a file as a device. A DISK tensor's bytes are the file's, mapped into this process: reading a slice of a
large checkpoint touches only its pages, and writing a DISK tensor (`assign`, `.to("DISK:path")`) writes the file.

`Tensor.empty(..., device="DISK:path")` (and `Tensor(pathlib.Path)`) is the file's first bytes, the file created or
extended with zeros to hold them. The device is the host otherwise: kernels over DISK tensors run as on the CPU, their
results and temporaries in ordinary host memory, never in the file. A file this process may not write is mapped
copy-on-write, and assigning into its tensors raises PermissionError."""

from __future__ import annotations

import mmap
import os

import numpy as np

from pytc.runtime.ops_cpu import CPUBuffer, CPUDevice


def writable(path: str) -> bool:
  """Whether this process may write the file at `path` (or create it there)."""
  return not os.path.exists(path) or os.access(path, os.W_OK)


class DISKDevice(CPUDevice):
  def __init__(self, name: str):
    self.path = name.partition(":")[2]
    if not self.path:
      raise ValueError(f"device '{name}' names no file: say DISK:/path/to/file")
    if os.path.isdir(self.path):
      raise IsADirectoryError(f"device '{name}': {self.path} is a directory")
    super().__init__(name)
    self.writable = writable(self.path)

  def map_file(self, nbytes: int) -> CPUBuffer:
    """The file's first `nbytes`, mapped (shared when writable, else copy-on-write); the file grows with zeros to hold
    them."""
    if self.writable:
      fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
      try:
        if os.fstat(fd).st_size < nbytes:
          os.ftruncate(fd, nbytes)
        if nbytes == 0:
          return CPUBuffer(0)  # nothing to map (mmap refuses 0 bytes); the file exists
        mapping = mmap.mmap(fd, nbytes, access=mmap.ACCESS_WRITE)
      finally:
        os.close(fd)
    elif nbytes == 0:
      return CPUBuffer(0)
    else:
      with open(self.path, "rb") as file:
        if (size := os.fstat(file.fileno()).st_size) < nbytes:
          raise ValueError(
            f"{self.path} holds {size} bytes, fewer than the {nbytes} asked for, and this process cannot write it"
          )
        mapping = mmap.mmap(file.fileno(), nbytes, access=mmap.ACCESS_COPY)
    view = np.frombuffer(mapping, np.uint8)  # holds the mapping open while the buffer lives
    return CPUBuffer.wrap(view.ctypes.data, nbytes, view)
