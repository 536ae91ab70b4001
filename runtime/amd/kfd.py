"""The Linux KFD interface (amdkfd's uapi, kfd_ioctl.h) and the system calls an AMD device makes through it.

- Structures: the ioctls' argument structs with the kernel's exact layout (sizes asserted), and `EventData`, the element
  of WAIT_EVENTS' array. `IOCTLS` maps each ioctl's name to (nr, struct); `request(name)` is its Linux `_IOC` number.
- `Driver` is every system call a KFD device makes (open, ioctl, mmap, sysfs reads, doorbell stores), so a mock
  (runtime/amd/mock_driver.py) can stand in for the kernel. `HostDriver` is the real one: os and fcntl calls, and libc's
  mmap/munmap through ctypes. A failing ioctl or mmap raises `KFDError`, an OSError carrying errno and naming the call.
- Memory model (unified VA): the CPU address of a KFD allocation is its GPU address. A runtime reserves a range with an
  inaccessible anonymous mapping, allocates at that address, then maps the render node over it with MAP_FIXED.
Numbers below are Linux's (x86-64 and arm64 share them)."""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
from ctypes import c_uint32, c_uint64

KFD_PATH = "/dev/kfd"
TOPOLOGY = "/sys/devices/virtual/kfd/kfd/topology/nodes"
RENDER_PATH = "/dev/dri/renderD{minor}"
IP_DISCOVERY = "/sys/class/drm/renderD{minor}/device/ip_discovery/die/0/{hw_id}/0"  # files major, minor, revision
GC_HWID, SDMA0_HWID, NBIF_HWID = 11, 42, 108

# ALLOC_MEMORY_OF_GPU flags: one kind of memory (VRAM, GTT, USERPTR, DOORBELL, MMIO_REMAP), then properties
VRAM, GTT, USERPTR, DOORBELL, MMIO_REMAP = 1 << 0, 1 << 1, 1 << 2, 1 << 3, 1 << 4
CONTIGUOUS, EXT_COHERENT, UNCACHED, COHERENT, AQL_QUEUE_MEM = 1 << 23, 1 << 24, 1 << 25, 1 << 26, 1 << 27
NO_SUBSTITUTE, PUBLIC, EXECUTABLE, WRITABLE = 1 << 28, 1 << 29, 1 << 30, 1 << 31

QUEUE_COMPUTE, QUEUE_SDMA, QUEUE_COMPUTE_AQL, QUEUE_SDMA_XGMI, QUEUE_SDMA_BY_ENG_ID = 0, 1, 2, 3, 4
# queue_percentage's low byte; bits 8..15 name the XCC of a PM4 queue
MAX_QUEUE_PERCENTAGE, MAX_QUEUE_PRIORITY = (
  100,
  15,
)

EVENT_SIGNAL, EVENT_NODECHANGE, EVENT_DEVICESTATECHANGE, EVENT_HW_EXCEPTION = 0, 1, 2, 3
EVENT_SYSTEM, EVENT_DEBUG, EVENT_PROFILE, EVENT_QUEUE, EVENT_MEMORY = 4, 5, 6, 7, 8
WAIT_COMPLETE, WAIT_TIMEOUT, WAIT_ERROR = 0, 1, 2
EVENT_TIMEOUT_IMMEDIATE, EVENT_TIMEOUT_INFINITE = 0, 0xFFFFFFFF
EVENT_PAGE_SIZE = 0x8000  # the event page a process registers: 4096 8-byte mailbox slots, one per signal event

# mmap offsets on /dev/kfd: the type in bits 62..63, the gpu_id from bit 46; a queue's doorbell_offset is the doorbell
# page's offset plus the doorbell's byte offset inside the page (DOORBELLS_SIZE bytes per process and GPU)
MMAP_TYPE_EVENTS, MMAP_TYPE_DOORBELL, MMAP_GPU_ID_SHIFT = 2 << 62, 3 << 62, 46
DOORBELLS_SIZE = 0x2000

PROT_NONE, PROT_READ, PROT_WRITE, PROT_EXEC = 0, 1, 2, 4
MAP_SHARED, MAP_PRIVATE, MAP_FIXED, MAP_ANONYMOUS, MAP_NORESERVE = 0x1, 0x2, 0x10, 0x20, 0x4000
MS_ASYNC = 1

# _IOC direction bits, from the caller's point of view: W passes the struct in, R gets it back
IOC_WRITE, IOC_READ = (
  1,
  2,
)


class KFDError(OSError):
  """A KFD call failed: `errno` and `strerror` as for any OSError, `message` names the call and the argument at
  fault."""

  def __init__(self, err: int, message: str):
    super().__init__(err, os.strerror(err))
    self.message = message

  def __str__(self) -> str:
    return f"{self.message} ({errno.errorcode.get(self.errno, self.errno)}: {self.strerror})"


class GetVersionArgs(ctypes.Structure):
  _fields_ = [("major_version", c_uint32), ("minor_version", c_uint32)]


class CreateQueueArgs(ctypes.Structure):
  _fields_ = [
    ("ring_base_address", c_uint64),
    ("write_pointer_address", c_uint64),
    ("read_pointer_address", c_uint64),
    ("doorbell_offset", c_uint64),
    ("ring_size", c_uint32),
    ("gpu_id", c_uint32),
    ("queue_type", c_uint32),
    ("queue_percentage", c_uint32),
    ("queue_priority", c_uint32),
    ("queue_id", c_uint32),
    ("eop_buffer_address", c_uint64),
    ("eop_buffer_size", c_uint64),
    ("ctx_save_restore_address", c_uint64),
    ("ctx_save_restore_size", c_uint32),
    ("ctl_stack_size", c_uint32),
    ("sdma_engine_id", c_uint32),
    ("pad", c_uint32),
  ]


class DestroyQueueArgs(ctypes.Structure):
  _fields_ = [("queue_id", c_uint32), ("pad", c_uint32)]


class CreateEventArgs(ctypes.Structure):
  _fields_ = [
    ("event_page_offset", c_uint64),
    ("event_trigger_data", c_uint32),
    ("event_type", c_uint32),
    ("auto_reset", c_uint32),
    ("node_id", c_uint32),
    ("event_id", c_uint32),
    ("event_slot_index", c_uint32),
  ]


class WaitEventsArgs(ctypes.Structure):
  _fields_ = [
    ("events_ptr", c_uint64),
    ("num_events", c_uint32),
    ("wait_for_all", c_uint32),
    ("timeout", c_uint32),
    ("wait_result", c_uint32),
  ]


class MemoryExceptionData(ctypes.Structure):
  """What a memory event reports: why the access failed, the faulting (page) address, the GPU."""

  _fields_ = [
    ("failure_not_present", c_uint32),
    ("failure_read_only", c_uint32),
    ("failure_no_execute", c_uint32),
    ("failure_imprecise", c_uint32),
    ("va", c_uint64),
    ("gpu_id", c_uint32),
    ("error_type", c_uint32),
  ]


class HwExceptionData(ctypes.Structure):
  """What a hardware-exception event reports (a GPU reset)."""

  _fields_ = [("reset_type", c_uint32), ("reset_cause", c_uint32), ("memory_lost", c_uint32), ("gpu_id", c_uint32)]


class SignalEventData(ctypes.Structure):
  _fields_ = [("last_event_age", c_uint64)]


class EventDataUnion(ctypes.Union):
  _fields_ = [
    ("memory_exception_data", MemoryExceptionData),
    ("hw_exception_data", HwExceptionData),
    ("signal_event_data", SignalEventData),
  ]


class EventData(ctypes.Structure):
  """One element of WAIT_EVENTS' array: set `event_id`; a fired exception event comes back with a nonzero gpu_id in its
  data."""

  _anonymous_ = ("data",)
  _fields_ = [("data", EventDataUnion), ("ext", c_uint64), ("event_id", c_uint32), ("pad", c_uint32)]


class AcquireVMArgs(ctypes.Structure):
  _fields_ = [("drm_fd", c_uint32), ("gpu_id", c_uint32)]


class AllocMemoryArgs(ctypes.Structure):
  _fields_ = [
    ("va_addr", c_uint64),
    ("size", c_uint64),
    ("handle", c_uint64),
    ("mmap_offset", c_uint64),
    ("gpu_id", c_uint32),
    ("flags", c_uint32),
  ]


class FreeMemoryArgs(ctypes.Structure):
  _fields_ = [("handle", c_uint64)]


class MapMemoryArgs(ctypes.Structure):
  """MAP_MEMORY_TO_GPU's and UNMAP_MEMORY_FROM_GPU's arguments: `device_ids_array_ptr` points at `n_devices` u32 gpu
  ids."""

  _fields_ = [
    ("handle", c_uint64),
    ("device_ids_array_ptr", c_uint64),
    ("n_devices", c_uint32),
    ("n_success", c_uint32),
  ]


class RuntimeEnableArgs(ctypes.Structure):
  _fields_ = [("r_debug", c_uint64), ("mode_mask", c_uint32), ("capabilities_mask", c_uint32)]


for _struct, _size in (
  (GetVersionArgs, 8),
  (CreateQueueArgs, 96),
  (DestroyQueueArgs, 8),
  (CreateEventArgs, 32),
  (WaitEventsArgs, 24),
  (MemoryExceptionData, 32),
  (HwExceptionData, 16),
  (EventData, 48),
  (AcquireVMArgs, 8),
  (AllocMemoryArgs, 40),
  (FreeMemoryArgs, 8),
  (MapMemoryArgs, 24),
  (RuntimeEnableArgs, 16),
):
  assert ctypes.sizeof(_struct) == _size, (
    f"{_struct.__name__} is {ctypes.sizeof(_struct)} bytes, kfd_ioctl.h says {_size}"
  )

IOCTLS: dict[str, tuple[int, type[ctypes.Structure]]] = {
  "GET_VERSION": (0x01, GetVersionArgs),
  "CREATE_QUEUE": (0x02, CreateQueueArgs),
  "DESTROY_QUEUE": (0x03, DestroyQueueArgs),
  "CREATE_EVENT": (0x08, CreateEventArgs),
  "WAIT_EVENTS": (0x0C, WaitEventsArgs),
  "ACQUIRE_VM": (0x15, AcquireVMArgs),
  "ALLOC_MEMORY_OF_GPU": (0x16, AllocMemoryArgs),
  "FREE_MEMORY_OF_GPU": (0x17, FreeMemoryArgs),
  "MAP_MEMORY_TO_GPU": (0x18, MapMemoryArgs),
  "UNMAP_MEMORY_FROM_GPU": (0x19, MapMemoryArgs),
  "RUNTIME_ENABLE": (0x25, RuntimeEnableArgs),
}
DIRECTIONS = {
  name: IOC_WRITE
  if name in ("ACQUIRE_VM", "FREE_MEMORY_OF_GPU")
  else IOC_READ
  if name == "GET_VERSION"
  else IOC_READ | IOC_WRITE
  for name in IOCTLS
}


def request(name: str) -> int:
  """The ioctl number of the KFD ioctl `name`: Linux `_IOC(dir, 'K', nr, sizeof(struct))`."""
  if name not in IOCTLS:
    raise ValueError(f"unknown KFD ioctl {name!r} (known: {', '.join(IOCTLS)})")
  nr, struct = IOCTLS[name]
  return DIRECTIONS[name] << 30 | ctypes.sizeof(struct) << 16 | ord("K") << 8 | nr


def check_args(name: str, args: ctypes.Structure) -> None:
  """TypeError unless `args` is the struct the ioctl `name` takes (ValueError for an unknown ioctl)."""
  request(name)
  if type(args) is not IOCTLS[name][1]:
    raise TypeError(f"{name} takes {IOCTLS[name][1].__name__}, not {type(args).__name__}")


_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int64]
_libc.munmap.restype, _libc.munmap.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t]
_libc.msync.restype, _libc.msync.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
MAP_FAILED = ctypes.c_void_p(-1).value


def libc_mmap(address: int, size: int, prot: int, flags: int, fd: int, offset: int) -> int:
  """libc mmap; the mapping's address, or KFDError with mmap's errno."""
  result = _libc.mmap(address or None, size, prot, flags, fd, offset)
  if result in (None, MAP_FAILED):
    raise KFDError(
      ctypes.get_errno(),
      f"mmap(address={address:#x}, size={size:#x}, prot={prot:#x}, flags={flags:#x}, fd={fd}, offset={offset:#x})",
    )
  return result


def libc_munmap(address: int, size: int) -> None:
  """libc munmap, KFDError on failure."""
  if _libc.munmap(address, size) != 0:
    raise KFDError(ctypes.get_errno(), f"munmap(address={address:#x}, size={size:#x})")


def is_mapped(address: int, size: int) -> bool:
  """Whether every page of [address, address+size) is mapped in this process (msync fails with ENOMEM on a hole)."""
  start = address & ~(os.sysconf("SC_PAGE_SIZE") - 1)
  return _libc.msync(start, address + size - start, MS_ASYNC) == 0


class Driver:
  """The system calls a KFD device makes. `HostDriver` makes them for real; `mock_driver.MockDriver` fakes the
  kernel."""

  def open(self, path: str) -> int:
    """A file descriptor for `path` (/dev/kfd, a /dev/dri render node), opened O_RDWR | O_CLOEXEC; OSError when it
    fails."""
    raise NotImplementedError

  def close(self, fd: int) -> None:
    """Close a descriptor from `open`."""
    raise NotImplementedError

  def ioctl(self, fd: int, name: str, args: ctypes.Structure) -> None:
    """The KFD ioctl `name` (a key of IOCTLS) on `fd` with `args`, which receives the kernel's results; KFDError on
    failure."""
    raise NotImplementedError

  def mmap(self, address: int, size: int, prot: int, flags: int, fd: int, offset: int) -> int:
    """Map `size` bytes of `fd` at `offset` (fd -1: anonymous memory) at `address` (a hint, exact with MAP_FIXED); its
    address."""
    raise NotImplementedError

  def munmap(self, address: int, size: int) -> None:
    """Unmap [address, address+size)."""
    raise NotImplementedError

  def read_text(self, path: str) -> str:
    """The text of a sysfs file (FileNotFoundError when it does not exist)."""
    raise NotImplementedError

  def listdir(self, path: str) -> list[str]:
    """The names in a sysfs directory."""
    raise NotImplementedError

  def exists(self, path: str) -> bool:
    """Whether a file or directory `path` exists."""
    raise NotImplementedError

  def write_doorbell(self, address: int, value: int) -> None:
    """Ring a doorbell: one 64-bit store of `value` at `address` (inside the doorbell page mapped from /dev/kfd)."""
    raise NotImplementedError


class HostDriver(Driver):
  """The real system: /dev/kfd, sysfs and libc."""

  def open(self, path: str) -> int:
    return os.open(path, os.O_RDWR | os.O_CLOEXEC)

  def close(self, fd: int) -> None:
    os.close(fd)

  def ioctl(self, fd: int, name: str, args: ctypes.Structure) -> None:
    check_args(name, args)
    buffer = bytearray(bytes(args))
    try:
      fcntl.ioctl(fd, request(name), buffer, True)
    except OSError as error:
      raise KFDError(error.errno or errno.EIO, f"KFD ioctl {name} on fd {fd}") from None
    ctypes.memmove(ctypes.addressof(args), bytes(buffer), len(buffer))

  def mmap(self, address: int, size: int, prot: int, flags: int, fd: int, offset: int) -> int:
    return libc_mmap(address, size, prot, flags, fd, offset)

  def munmap(self, address: int, size: int) -> None:
    libc_munmap(address, size)

  def read_text(self, path: str) -> str:
    with open(path) as file:
      return file.read()

  def listdir(self, path: str) -> list[str]:
    return os.listdir(path)

  def exists(self, path: str) -> bool:
    return os.path.exists(path)

  def write_doorbell(self, address: int, value: int) -> None:
    c_uint64.from_address(address).value = value
